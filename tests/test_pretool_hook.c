/*
 * The before-tool hook end to end (pgn_hook_turn, decision 0156): a
 * write of a path another agent's live exclusive lease covers is denied
 * in the host's form with one line naming path, holder, reason, expiry
 * and the command to ask; the holder's own calls, reads, shell commands,
 * paths outside the scope and a released lease pass; a bad payload
 * passes, logged; with no live lease nothing is opened or written.
 * Each rule on SQLite and on PostgreSQL (tests/backends.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "backends.h"
#include "hook_int.h"
#include "pgn_int.h"
#include "pigeon/hook.h"
#include "pigeon/hosts.h"
#include "pigeon/lease.h"

static char dbpath[PATH_MAX + 128], home[PATH_MAX], root[PATH_MAX];
/* The hook's time from its start (short: to meet a held lock sooner). */
static int64_t budget_ms = 10000;

static void
setup(void)
{
	char git[PATH_MAX + 8];

	be_store("pgn_pretool", h_tmp);
	snprintf(dbpath, sizeof(dbpath), "%s", be_where);
	H_PATH(home, "home");
	H_PATH(root, "proj");
	REQUIRE(mkdir(home, 0700) == 0);
	REQUIRE(mkdir(root, 0700) == 0);
	snprintf(git, sizeof(git), "%s/.git", root);
	REQUIRE(mkdir(git, 0700) == 0);
	REQUIRE(sodium_init() >= 0);
}

static void
teardown(void)
{
	(void)be_drop();
}

static void
run(struct pgn_hook_out *o, pgn_host h, pgn_event e, const char *json,
    const char *agent)
{
	struct pgn_hook_in in;

	memset(&in, 0, sizeof(in));
	in.payload = json;
	in.len = strlen(json);
	in.host = h;
	in.event = e;
	in.agent_env = agent;
	in.home = home;
	in.user_home = home;
	in.db_path = dbpath;
	in.db_create = !be_on_pg;
	in.pigeon = "pigeon";
	in.deadline = pgn_mono_ms() + budget_ms;
	pgn_hook_turn(&in, o);
}

/* Claude session 'sid' starts, bound to 'agent'. */
static void
start(const char *sid, const char *agent)
{
	struct pgn_hook_out o;
	char json[PATH_MAX + 256];

	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"%s\","
	    "\"cwd\":\"%s\",\"source\":\"startup\"}",
	    sid, root);
	run(&o, PGN_HOST_CLAUDE, PGN_EVENT_SESSION_START, json, agent);
	CHECK_INT(o.st, PGN_OK);
	pgn_hook_out_release(&o);
}

/* A Claude PreToolUse of session 'sid': tool 'tool', its input 'input'. */
static void
claude_tool(struct pgn_hook_out *o, const char *sid, const char *tool,
    const char *input)
{
	char json[2 * PATH_MAX + 512];

	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"%s\","
	    "\"cwd\":\"%s\",\"tool_name\":\"%s\",\"tool_input\":%s}",
	    sid, root, tool, input);
	run(o, PGN_HOST_CLAUDE, PGN_EVENT_BEFORE_TOOL, json, NULL);
}

/* A Write of 'rel' under the project (or of 'rel' itself if absolute). */
static void
write_of(struct pgn_hook_out *o, const char *sid, const char *rel)
{
	char input[PATH_MAX + 64];

	if (rel[0] == '/')
		snprintf(input, sizeof(input), "{\"file_path\":\"%s\"}", rel);
	else
		snprintf(input, sizeof(input), "{\"file_path\":\"%s/%s\"}",
		    root, rel);
	claude_tool(o, sid, "Write", input);
}

/* The denial's reason in a Claude envelope, or "" (caller frees). */
static char *
reason_of(const struct pgn_hook_out *o)
{
	cJSON *r, *inner, *v;
	char *s;

	if (o->line == NULL)
		return strdup("");
	CHECK(o->len > 0 && o->line[o->len - 1] == '\n');
	r = cJSON_ParseWithLength(o->line, o->len);
	REQUIRE(r != NULL);
	inner = cJSON_GetObjectItemCaseSensitive(r, "hookSpecificOutput");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(inner,
	              "permissionDecision")),
	    "deny");
	v = cJSON_GetObjectItemCaseSensitive(inner, "permissionDecisionReason");
	REQUIRE(cJSON_IsString(v));
	s = strdup(v->valuestring);
	cJSON_Delete(r);
	REQUIRE(s != NULL);
	return s;
}

/* 'agent' takes an exclusive lease on 'pattern' with 'reason'. */
static void
take(const char *agent, const char *pattern, const char *reason)
{
	struct pgn_lease_taken t;
	struct pgn_lease_take req;
	const char *p[1] = {pattern};
	pgn_db *db = NULL;

	REQUIRE(pgn_db_open(dbpath, 0, 5000, &db) == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.who.agent = agent;
	req.patterns = p;
	req.npatterns = 1;
	req.reason = reason;
	REQUIRE(pgn_lease_take(db, &req, &t) == PGN_OK);
	CHECK(!t.held);
	pgn_lease_taken_release(&t);
	pgn_db_close(db);
}

static void
release_all(const char *agent)
{
	struct pgn_lease_actor who;
	pgn_db *db = NULL;
	size_t n = 0;

	REQUIRE(pgn_db_open(dbpath, 0, 5000, &db) == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&who, 0, sizeof(who));
	who.agent = agent;
	REQUIRE(pgn_lease_release(db, &who, NULL, 0, 1, &n) == PGN_OK);
	pgn_db_close(db);
}

static void
rule_no_live_lease_passes_without_a_word(void)
{
	struct pgn_hook_out o;

	start("s-alice", "alice");
	start("s-bob", "bob");
	write_of(&o, "s-bob", "src/a.c");
	CHECK_INT(o.st, PGN_OK);
	CHECK(o.line == NULL);
	CHECK_INT(o.nlog, 0);
	pgn_hook_out_release(&o);
	/*
	 * No lease was ever taken: the fast path says so from the empty
	 * stamp written with the database (on SQLite; PostgreSQL has no
	 * stamp: other machines take leases).
	 */
	CHECK_INT(pgn_lease_none_live(dbpath, root, pgn_now_ms()), !be_on_pg);
}

static void
rule_a_write_under_anothers_lease_is_denied_with_one_line(void)
{
	struct pgn_hook_out o;
	char *why;

	start("s-alice", "alice");
	start("s-bob", "bob");
	take("alice", "src/**", "refactoring the parser");
	write_of(&o, "s-bob", "src/a.c");
	CHECK_INT(o.st, PGN_OK);
	why = reason_of(&o);
	CHECK(strchr(why, '\n') == NULL);
	CHECK(strstr(why, "src/a.c is leased by alice") != NULL);
	CHECK(strstr(why, "src/**") != NULL);
	CHECK(strstr(why, "refactoring the parser") != NULL);
	CHECK(strstr(why, " until 20") != NULL);
	CHECK(strstr(why, "pigeon send --to alice 'May I edit src/a.c?'") !=
	    NULL);
	if (o.nlog > 0)
		CHECK(strstr(o.log[0], "status=deny") != NULL);
	CHECK_INT(o.nlog, 1);
	free(why);
	pgn_hook_out_release(&o);
}

static void
rule_what_is_not_a_write_under_anothers_lease_passes(void)
{
	struct pgn_hook_out o;
	char input[PATH_MAX + 64];

	start("s-alice", "alice");
	start("s-bob", "bob");
	take("alice", "src/**", NULL);
	/* The holder's own write. */
	write_of(&o, "s-alice", "src/a.c");
	CHECK(o.line == NULL);
	CHECK_INT(o.st, PGN_OK);
	pgn_hook_out_release(&o);
	/* A path the lease does not cover; one outside the scope. */
	write_of(&o, "s-bob", "docs/a.md");
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	write_of(&o, "s-bob", "/elsewhere/src/a.c");
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	/* A read; a shell command (logged: a lease lives). */
	snprintf(input, sizeof(input), "{\"file_path\":\"%s/src/a.c\"}", root);
	claude_tool(&o, "s-bob", "Read", input);
	CHECK(o.line == NULL);
	CHECK_INT(o.nlog, 1);
	if (o.nlog > 0)
		CHECK(strstr(o.log[0], "tool=Read is not a write") != NULL);
	pgn_hook_out_release(&o);
	claude_tool(&o, "s-bob", "Bash", "{\"command\":\"rm src/a.c\"}");
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	/* Released: the same write passes. */
	write_of(&o, "s-bob", "src/a.c");
	CHECK(o.line != NULL);
	pgn_hook_out_release(&o);
	release_all("alice");
	write_of(&o, "s-bob", "src/a.c");
	CHECK(o.line == NULL);
	CHECK_INT(o.st, PGN_OK);
	pgn_hook_out_release(&o);
}

/* '..' and '.' are resolved by the text before the lease is asked. */
static void
rule_dotted_paths_are_judged_as_what_they_name(void)
{
	struct pgn_hook_out o;
	char path[PATH_MAX * 2], *why;
	int i, n;

	start("s-alice", "alice");
	start("s-bob", "bob");
	take("alice", "src/**", NULL);
	write_of(&o, "s-bob", "lib/../src/./b.c");
	why = reason_of(&o);
	CHECK(strstr(why, "src/b.c is leased by alice") != NULL);
	free(why);
	pgn_hook_out_release(&o);
	write_of(&o, "s-bob", "src/../lib/b.c");
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	/* '..' past the payload's directory, and past '/', then back in. */
	snprintf(path, sizeof(path), "%s/../%s/src/c.c", root,
	    strrchr(root, '/') + 1);
	write_of(&o, "s-bob", path);
	why = reason_of(&o);
	CHECK(strstr(why, "src/c.c is leased by alice") != NULL);
	free(why);
	pgn_hook_out_release(&o);
	n = snprintf(path, sizeof(path), "%s", "");
	for (i = 0; i < 64; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "../");
	snprintf(path + n, sizeof(path) - (size_t)n, "%s/src/d.c", root + 1);
	write_of(&o, "s-bob", path);
	why = reason_of(&o);
	CHECK(strstr(why, "src/d.c is leased by alice") != NULL);
	free(why);
	pgn_hook_out_release(&o);
}

/* Codex: the apply_patch heredoc through Bash, paths relative to cwd. */
static void
rule_codex_heredoc_patch_is_denied(void)
{
	struct pgn_hook_out o;
	char json[PATH_MAX + 512];

	start("s-alice", "alice");
	take("alice", "*.sql", "migration");
	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"c1\","
	    "\"turn_id\":\"t1\",\"cwd\":\"%s\",\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"apply_patch <<'EOF'\\n"
	    "*** Begin Patch\\n*** Add File: db/001.sql\\n+x\\n"
	    "*** End Patch\\nEOF\\n\"}}",
	    root);
	run(&o, PGN_HOST_CODEX, PGN_EVENT_BEFORE_TOOL, json, "bob");
	CHECK_INT(o.st, PGN_OK);
	REQUIRE(o.line != NULL);
	CHECK(strstr(o.line, "\"permissionDecision\":\"deny\"") != NULL);
	CHECK(strstr(o.line, "db/001.sql is leased by alice") != NULL);
	pgn_hook_out_release(&o);
}

/*
 * No stamp beside the database (a copy, one removed): the hook asks the
 * database, and makes the stamp for the calls after it (SQLite).
 */
static void
rule_a_missing_stamp_is_asked_and_made(void)
{
	struct pgn_hook_out o;
	char stamp[sizeof(dbpath) + 16];
	char *why;

	start("s-alice", "alice");
	start("s-bob", "bob");
	take("alice", "src/**", "parser");
	if (be_on_pg)
		return;
	snprintf(stamp, sizeof(stamp), "%s-leases", dbpath);
	REQUIRE(unlink(stamp) == 0);
	write_of(&o, "s-bob", "src/a.c");
	why = reason_of(&o);
	CHECK(strstr(why, "src/a.c is leased by alice") != NULL);
	free(why);
	pgn_hook_out_release(&o);
	CHECK(access(stamp, F_OK) == 0);
	{
		const char *p[1] = {"docs/a.md"};

		CHECK_INT(pgn_lease_stamp_judge(dbpath, root, p, 1,
		              pgn_now_ms()),
		    PGN_LEASE_CLEAR);
	}
}

/* A Codex apply_patch heredoc adding files f0.c .. f<n-1>.c. */
static void
codex_patch_of(struct pgn_hook_out *o, size_t n)
{
	char json[PATH_MAX + 4096], files[2048];
	size_t i, k = 0;

	files[0] = '\0';
	for (i = 0; i < n; i++)
		k += (size_t)snprintf(files + k, sizeof(files) - k,
		    "*** Add File: f%zu.c\\n+x\\n", i);
	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"c1\","
	    "\"turn_id\":\"t1\",\"cwd\":\"%s\",\"tool_name\":\"Bash\","
	    "\"tool_input\":{\"command\":\"apply_patch <<'EOF'\\n"
	    "*** Begin Patch\\n%s*** End Patch\\nEOF\\n\"}}",
	    root, files);
	run(o, PGN_HOST_CODEX, PGN_EVENT_BEFORE_TOOL, json, "bob");
}

/* Lines of 's' that contain 'needle' (the empty one: every line). */
static size_t
lines_with(const char *s, const char *needle)
{
	char *copy = strdup(s), *line, *save = NULL;
	size_t n = 0;

	REQUIRE(copy != NULL);
	for (line = strtok_r(copy, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, needle) != NULL)
			n++;
	free(copy);
	return n;
}

/*
 * Every lease in the way is named, one line each, up to
 * PGN_HOOK_DENY_LEASES; past it one more line counts the rest.
 */
static void
rule_every_lease_in_the_way_is_named_one_line_each(void)
{
	struct pgn_hook_out o;
	char pat[32], *why;
	size_t i;

	start("s-alice", "alice");
	for (i = 0; i <= PGN_HOOK_DENY_LEASES; i++) {
		snprintf(pat, sizeof(pat), "f%zu.c", i);
		take("alice", pat, "split");
	}
	/* two paths, two leases: two lines */
	codex_patch_of(&o, 2);
	why = reason_of(&o);
	CHECK_INT(lines_with(why, "is leased by alice"), 2);
	CHECK_INT(lines_with(why, ""), 2);
	CHECK(strstr(why, "f0.c is leased by alice") != NULL);
	CHECK(strstr(why, "f1.c is leased by alice") != NULL);
	CHECK(strstr(why, "more lease") == NULL);
	free(why);
	pgn_hook_out_release(&o);
	/* at the bound: every one named, no count */
	codex_patch_of(&o, PGN_HOOK_DENY_LEASES);
	why = reason_of(&o);
	CHECK_INT(lines_with(why, "is leased by alice"), PGN_HOOK_DENY_LEASES);
	CHECK_INT(lines_with(why, ""), PGN_HOOK_DENY_LEASES);
	CHECK(strstr(why, "more lease") == NULL);
	free(why);
	pgn_hook_out_release(&o);
	/* one past it: the bound's lines, then one that counts the rest */
	codex_patch_of(&o, PGN_HOOK_DENY_LEASES + 1);
	why = reason_of(&o);
	CHECK_INT(lines_with(why, "is leased by alice"), PGN_HOOK_DENY_LEASES);
	CHECK_INT(lines_with(why, ""), PGN_HOOK_DENY_LEASES + 1);
	CHECK(
	    strstr(why,
	        "\nPigeon: and 1 more lease in the way of this edit (pigeon lease list shows them)") !=
	    NULL);
	free(why);
	pgn_hook_out_release(&o);
}

/* Each host's payload, denied in its own form (no session bound). */
static void
rule_every_host_denies_in_its_own_form(void)
{
	static const struct {
		pgn_host h;
		const char *a, *b, *c; /* a ROOT b ROOT c */
		const char *key;       /* the deny key of the host's form */
	} rows[] = {
	    {PGN_HOST_CLAUDE,
	        "{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"x1\","
	        "\"cwd\":\"",
	        "\",\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"",
	        "/src/k.c\"}}", "\"permissionDecision\":\"deny\""},
	    {PGN_HOST_GEMINI,
	        "{\"hook_event_name\":\"BeforeTool\",\"session_id\":\"x2\","
	        "\"cwd\":\"",
	        "\",\"tool_name\":\"replace\",\"tool_input\":{\"file_path\":\"",
	        "/src/k.c\"}}", "\"decision\":\"deny\""},
	    {PGN_HOST_CURSOR,
	        "{\"hook_event_name\":\"preToolUse\",\"conversation_id\":\"x3\","
	        "\"cursor_version\":\"2\",\"workspace_roots\":[\"",
	        "\"],\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"",
	        "/src/k.c\"}}", "\"permission\":\"deny\""},
	    {PGN_HOST_COPILOT,
	        "{\"sessionId\":\"x4\",\"timestamp\":1,\"cwd\":\"",
	        "\",\"toolName\":\"edit\",\"toolArgs\":\"{\\\"path\\\":\\\"",
	        "/src/k.c\\\"}\"}", "\"permissionDecision\":\"deny\""},
	    {PGN_HOST_OPENCODE,
	        "{\"hook_event_name\":\"tool.execute.before\",\"session_id\":"
	        "\"x5\",\"cwd\":\"",
	        "\",\"tool_name\":\"write\",\"tool_input\":{\"filePath\":\"",
	        "/src/k.c\"}}",
	        "\"deny\":\"Pigeon: src/k.c is leased by alice"},
	};
	struct pgn_hook_out o;
	char json[2 * PATH_MAX + 512];
	size_t i;

	start("s-alice", "alice");
	take("alice", "src/", NULL);
	for (i = 0; i < H_COUNT(rows); i++) {
		snprintf(json, sizeof(json), "%s%s%s%s%s", rows[i].a, root,
		    rows[i].b, root, rows[i].c);
		run(&o, rows[i].h, PGN_EVENT_BEFORE_TOOL, json, NULL);
		CHECK_INT(o.st, PGN_OK);
		if (!CHECK(o.line != NULL && strstr(o.line, rows[i].key)))
			printf("  %s: %s\n", pgn_host_get(rows[i].h)->name,
			    o.line != NULL ? o.line : "(nothing)");
		pgn_hook_out_release(&o);
	}
}

static void
rule_a_bad_call_passes_logged_while_a_lease_lives(void)
{
	struct pgn_hook_out o;

	start("s-alice", "alice");
	start("s-bob", "bob");
	take("alice", "src/**", NULL);
	claude_tool(&o, "s-bob", "Write", "[1,2]");
	CHECK(o.line == NULL);
	CHECK_INT(o.st, PGN_OK);
	CHECK_INT(o.nlog, 1);
	if (o.nlog > 0)
		CHECK(strstr(o.log[0], "passes unjudged") != NULL);
	pgn_hook_out_release(&o);
	/* Not JSON at all: the neutral output and why. */
	run(&o, PGN_HOST_CLAUDE, PGN_EVENT_BEFORE_TOOL, "{not json", NULL);
	CHECK(o.line == NULL);
	CHECK(o.st != PGN_OK);
	CHECK_INT(o.nlog, 1);
	pgn_hook_out_release(&o);
}

/* Journal rows of kind 'lease' whose detail is 'detail', through a second
 * connection. */
static int64_t
lease_entries(const char *agent, const char *detail)
{
	char sql[512];
	pgn_db *chk = NULL;
	int64_t n;

	REQUIRE(pgn_db_open(dbpath, 0, 5000, &chk) == PGN_OK);
	snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM journal j JOIN agent a ON a.id = j.agent_id "
	    "WHERE j.kind = 'lease' AND a.name = '%s' AND j.detail = '%s'",
	    agent, detail);
	n = be_count(chk, sql);
	pgn_db_close(chk);
	return n;
}

static int64_t
journal_rows(void)
{
	pgn_db *chk = NULL;
	int64_t n;

	REQUIRE(pgn_db_open(dbpath, 0, 5000, &chk) == PGN_OK);
	n = be_count(chk, "SELECT count(*) FROM journal");
	pgn_db_close(chk);
	return n;
}

/* §13: a denial is a journal entry of the denied agent and the holder. */
static void
rule_a_denial_is_journalled_and_an_allowed_call_writes_nothing(void)
{
	struct pgn_hook_out o;
	int64_t before;

	start("s-alice", "alice");
	start("s-bob", "bob");
	take("alice", "src/**", "refactoring");
	before = journal_rows();
	/* Allowed: the holder's own write, a path not covered. */
	write_of(&o, "s-alice", "src/a.c");
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	write_of(&o, "s-bob", "docs/a.md");
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	CHECK_INT(journal_rows(), before);
	/* Denied: one entry for bob, one for alice. */
	write_of(&o, "s-bob", "src/a.c");
	CHECK(o.line != NULL);
	CHECK_INT(o.nlog, 1);
	pgn_hook_out_release(&o);
	CHECK_INT(lease_entries("bob", "denied src/a.c (holder alice)"), 1);
	CHECK_INT(lease_entries("alice",
	              "denied src/a.c to bob (holder alice)"),
	    1);
	CHECK_INT(journal_rows(), before + 2);
}

/*
 * The journal write meets another writer's lock (SQLite): the call is
 * still denied, with one more hook.log line saying the entry was not
 * written.
 */
static void
rule_a_denial_whose_journal_write_fails_still_denies(void)
{
	struct pgn_hook_out o;
	sqlite3 *raw;
	char *why;

	if (be_on_pg)
		return;
	start("s-alice", "alice");
	start("s-bob", "bob");
	take("alice", "src/**", NULL);
	raw = h_raw_open(dbpath);
	sqlite3_busy_timeout(raw, 0);
	REQUIRE(H_EXEC(raw, "BEGIN IMMEDIATE"));
	budget_ms = 300; /* the lock wait: PGN_HOOK_MIN_WAIT_MS */
	write_of(&o, "s-bob", "src/a.c");
	budget_ms = 10000;
	why = reason_of(&o);
	CHECK(strstr(why, "src/a.c is leased by alice") != NULL);
	CHECK_INT(o.nlog, 2);
	if (o.nlog == 2) {
		CHECK(strstr(o.log[0], "status=deny") != NULL);
		CHECK(strstr(o.log[1], "was not journalled") != NULL);
		CHECK(strstr(o.log[1], "still denied") != NULL);
	}
	free(why);
	pgn_hook_out_release(&o);
	H_EXEC(raw, "ROLLBACK");
	sqlite3_close(raw);
	CHECK_INT(lease_entries("bob", "denied src/a.c (holder alice)"), 0);
}

/*
 * Cursor running Claude's PreToolUse (its third-party hooks) with its
 * own payload: the run judges nothing (Pigeon's cursor hook does) and
 * answers as Cursor needs, {"permission":"allow"}, even under a lease
 * (decision 0258); Copilot's replay of Claude's hooks answers nothing.
 */
static void
rule_a_replayed_claude_pretool_answers_the_replayers_allow(void)
{
	struct pgn_hook_out o;
	char json[PATH_MAX * 2 + 256];
	int64_t before;

	start("s-alice", "alice");
	take("alice", "src/**", NULL);
	before = journal_rows();
	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"preToolUse\",\"conversation_id\":\"r1\","
	    "\"session_id\":\"r1\",\"cursor_version\":\"3.12.17\","
	    "\"workspace_roots\":[\"%s\"],\"tool_name\":\"Write\","
	    "\"tool_input\":{\"file_path\":\"%s/src/a.c\"}}",
	    root, root);
	run(&o, PGN_HOST_CLAUDE, PGN_EVENT_BEFORE_TOOL, json, NULL);
	CHECK_INT(o.st, PGN_OK);
	CHECK(o.line != NULL && o.len == 23 &&
	    memcmp(o.line, "{\"permission\":\"allow\"}\n", 23) == 0);
	CHECK_INT(o.claimed, 0);
	pgn_hook_out_release(&o);
	snprintf(json, sizeof(json),
	    "{\"sessionId\":\"r2\",\"timestamp\":\"t\","
	    "\"hook_event_name\":\"PreToolUse\",\"cwd\":\"%s\","
	    "\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":"
	    "\"%s/src/a.c\"}}",
	    root, root);
	run(&o, PGN_HOST_CLAUDE, PGN_EVENT_BEFORE_TOOL, json, NULL);
	CHECK_INT(o.st, PGN_OK);
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	CHECK_INT(journal_rows(), before);
}

static void (*const rules[])(void) = {
    rule_no_live_lease_passes_without_a_word,
    rule_a_write_under_anothers_lease_is_denied_with_one_line,
    rule_what_is_not_a_write_under_anothers_lease_passes,
    rule_dotted_paths_are_judged_as_what_they_name,
    rule_codex_heredoc_patch_is_denied,
    rule_every_host_denies_in_its_own_form,
    rule_a_bad_call_passes_logged_while_a_lease_lives,
    rule_a_denial_is_journalled_and_an_allowed_call_writes_nothing,
    rule_a_denial_whose_journal_write_fails_still_denies,
    rule_every_lease_in_the_way_is_named_one_line_each,
    rule_a_missing_stamp_is_asked_and_made,
    rule_a_replayed_claude_pretool_answers_the_replayers_allow,
};

static void
test_rules_on_sqlite(void)
{
	be_rules(0, rules, H_COUNT(rules), setup, teardown);
}

static void
test_rules_on_postgresql(void)
{
	if (be_have_pg())
		be_rules(1, rules, H_COUNT(rules), setup, teardown);
}

static const struct h_test tests[] = {
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
