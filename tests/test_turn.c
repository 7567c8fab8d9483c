/*
 * pgn_hook_turn, the hook's whole turn in the library: what it claims
 * is exactly what it prints, at the worst cases of every length that
 * reaches the output (paths, scope, names, peers, bodies), and a turn
 * whose output cannot be built leaves every message queued; and
 * pgn_turn_claim on a temp database (binding, duplicate turn keys, the
 * budget).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "harness.h"
#include "hook_fixtures.h"
#include "pgn_int.h"
#include "pigeon/hook.h"
#include "pigeon/setup.h"
#include "claim.h"
#include "render.h"

static char dbpath[PATH_MAX], home[PATH_MAX];
static int64_t wait_until; /* in.wait_until of the next hook() */

/* A fake repository whose root path is about 'len' bytes. */
static void
make_scope(char *root, size_t rootlen, size_t len)
{
	struct pgn_err err;
	char git[PATH_MAX + 8];
	size_t n;

	n = (size_t)snprintf(root, rootlen, "%s/", h_tmp);
	while (n < len && n + 2 < rootlen) {
		root[n] = n % 50 == 0 ? '/' : 'r';
		root[++n] = '\0';
		if (root[n - 1] == '/')
			REQUIRE(mkdir(root, 0700) == 0 || errno == EEXIST);
	}
	if (root[n - 1] == '/')
		root[--n] = '\0';
	REQUIRE(pgn_mkdir_p(root, 0700, &err) == PGN_OK);
	snprintf(git, sizeof(git), "%s/.git", root);
	REQUIRE(mkdir(git, 0700) == 0);
}

static void
setup(void)
{
	H_PATH(dbpath, "pigeon.db");
	H_PATH(home, "home");
	REQUIRE(mkdir(home, 0700) == 0);
	REQUIRE(sodium_init() >= 0);
}

/* One hook run of 'event' for session 'sid' in 'dir'. */
static void
hook(struct pgn_hook_out *o, pgn_event event, const char *sid, const char *dir,
    const char *agent, const char *pigeon, int n)
{
	struct pgn_hook_in in;
	char payload[PATH_MAX + 512];

	snprintf(payload, sizeof(payload),
	    "{\"hook_event_name\":\"%s\",\"session_id\":\"%s\",\"cwd\":\"%s\","
	    "\"prompt_id\":\"p%d\",\"prompt\":\"go\",\"source\":\"startup\"}",
	    pgn_host_get(PGN_HOST_CLAUDE)->events[event], sid, dir, n);
	memset(&in, 0, sizeof(in));
	in.payload = payload;
	in.len = strlen(payload);
	in.host = PGN_HOST_CLAUDE;
	in.event = event;
	in.agent_env = agent;
	in.home = home;
	in.db_path = dbpath;
	in.db_create = 1;
	in.pigeon = pigeon;
	in.deadline = pgn_mono_ms() + 10000;
	in.wait_until = wait_until != 0 ? pgn_mono_ms() + wait_until : 0;
	pgn_hook_turn(&in, o);
}

/* The additionalContext of a claude envelope line, or NULL. */
static char *
context_of(const struct pgn_hook_out *o)
{
	cJSON *root, *inner, *ctx;
	char *s = NULL;

	if (o->line == NULL)
		return NULL;
	REQUIRE(o->len > 0 && o->line[o->len - 1] == '\n');
	REQUIRE(pgn_utf8_valid(o->line, o->len));
	root = cJSON_ParseWithLength(o->line, o->len);
	REQUIRE(root != NULL);
	inner = cJSON_GetObjectItemCaseSensitive(root, "hookSpecificOutput");
	ctx = inner != NULL ?
	    cJSON_GetObjectItemCaseSensitive(inner, "additionalContext") :
	    cJSON_GetObjectItemCaseSensitive(root, "reason");
	if (CHECK(cJSON_IsString(ctx)))
		s = strdup(ctx->valuestring);
	cJSON_Delete(root);
	return s;
}

/* Has 's' the header of message 'id' at the start of a line? */
static int
shows(const char *s, long long id)
{
	char head[64];

	snprintf(head, sizeof(head), "\n[#%lld from ", id);
	return strstr(s, head) != NULL;
}

static void
send_body(pgn_db *db, const char *to, const char *body, size_t len)
{
	struct pgn_sent sent[1];
	struct pgn_send rq;
	size_t n;

	memset(&rq, 0, sizeof(rq));
	rq.from = "zed";
	rq.to = &to;
	rq.nto = 1;
	rq.body = body;
	rq.body_len = len;
	REQUIRE(pgn_send(db, &rq, sent, 1, &n) == PGN_OK);
}

/*
 * The sweep the exactly-once promise rests on: a 300-byte CLI path, a
 * 300-byte scope, a 64-character name, 40 peers, a many-line 4 KiB body
 * that must be cut, a one-line 4 KiB body, and small ones. Every
 * message the audit shows delivered is in a printed context.
 */
static void
test_every_claimed_message_is_printed_at_the_worst_lengths(void)
{
	char root[PATH_MAX], pigeon[PGN_HOOK_MAX_SHOWN + 1],
	    me[PGN_MAX_NAME + 1];
	char name[PGN_MAX_NAME + 1], body[PGN_MAX_BODY];
	struct pgn_hook_out o;
	pgn_db *db;
	sqlite3 *raw;
	sqlite3_stmt *st;
	char *ctx, *all = NULL;
	size_t i, total = 0, len;
	int turns = 0, pathlen;

	setup();
	make_scope(root, sizeof(root), 300);
	for (pathlen = 0; pathlen < PGN_HOOK_MAX_SHOWN; pathlen++)
		pigeon[pathlen] = pathlen % 20 == 0 ? '/' : 'p';
	pigeon[PGN_HOOK_MAX_SHOWN] = '\0';
	memset(me, 'm', PGN_MAX_NAME);
	me[PGN_MAX_NAME] = '\0';

	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	REQUIRE(pgn_agent_add(db, me) == PGN_OK);
	for (i = 0; i < 40; i++) {
		memset(name, 'a' + (int)(i % 26), PGN_MAX_NAME);
		snprintf(name + PGN_MAX_NAME - 3, 4, "%03zu", i);
		REQUIRE(pgn_agent_add(db, name) == PGN_OK);
	}
	/* A many-line 4 KiB body: 2047 lines of "a", and one more. */
	for (i = 0; i + 1 < sizeof(body); i += 2) {
		body[i] = 'a';
		body[i + 1] = '\n';
	}
	body[sizeof(body) - 1] = 'a';
	send_body(db, me, body, sizeof(body));
	send_body(db, me, "small one", 9);
	memset(body, 'x', sizeof(body));
	send_body(db, me, body, sizeof(body));
	send_body(db, me, body, sizeof(body));
	send_body(db, me, "small two", 9);
	pgn_db_close(db);

	raw = h_raw();
	hook(&o, PGN_EVENT_SESSION_START, "s1", root, me, pigeon, 0);
	do {
		REQUIRE(o.st == PGN_OK);
		ctx = context_of(&o);
		if (ctx != NULL) {
			if (!CHECK(strlen(ctx) <= PGN_MAX_CONTEXT))
				printf("  context of %zu bytes\n", strlen(ctx));
			len = strlen(ctx);
			all = realloc(all, total + len + 2);
			REQUIRE(all != NULL);
			all[total++] = '\n';
			memcpy(all + total, ctx, len + 1);
			total += len;
			free(ctx);
		}
		pgn_hook_out_release(&o);
		if (H_INT(raw,
		        "SELECT count(*) FROM message WHERE delivered_ms IS NULL") ==
		    0)
			break;
		hook(&o, PGN_EVENT_PROMPT, "s1", root, me, pigeon, ++turns);
	} while (turns < 20);
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    0);
	REQUIRE(all != NULL);
	/* The introduction came, with the commands at full length. */
	CHECK_CONTAINS(all, "Pigeon: you are agent \"mmmm");
	CHECK_CONTAINS(all, "Send a message: ");
	CHECK_CONTAINS(all, "[cut: message #1 has 4096 bytes");
	REQUIRE(sqlite3_prepare_v2(raw,
	            "SELECT message_id FROM delivery ORDER BY id", -1, &st,
	            NULL) == SQLITE_OK);
	i = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		i++;
		if (!CHECK(shows(all, sqlite3_column_int64(st, 0))))
			printf("  message %lld delivered, never printed\n",
			    (long long)sqlite3_column_int64(st, 0));
	}
	sqlite3_finalize(st);
	CHECK_INT(i, 5);
	free(all);
	sqlite3_close(raw);
}

/* The same, for every scope length up to the worst, briefly. */
static void
test_introduction_fits_for_every_path_and_name_length(void)
{
	char root[PATH_MAX], pigeon[PGN_HOOK_MAX_SHOWN + 8];
	struct pgn_hook_out o;
	char sid[32], *ctx;
	size_t plen;
	pgn_db *db;

	setup();
	make_scope(root, sizeof(root), 400);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	pgn_db_close(db);
	for (plen = 1; plen <= PGN_HOOK_MAX_SHOWN + 5; plen += 13) {
		memset(pigeon, 'q', plen);
		pigeon[0] = '/';
		pigeon[plen] = '\0';
		snprintf(sid, sizeof(sid), "s%zu", plen);
		hook(&o, PGN_EVENT_SESSION_START, sid, root, NULL, pigeon, 0);
		CHECK_INT(o.st, PGN_OK);
		ctx = context_of(&o);
		REQUIRE(ctx != NULL);
		CHECK(strlen(ctx) <= PGN_MAX_CONTEXT);
		/* Longer than shown: plain pigeon, never a cut path. */
		if (plen > PGN_HOOK_MAX_SHOWN)
			CHECK_CONTAINS(ctx, "Send a message: pigeon send");
		else
			CHECK_CONTAINS(ctx, pigeon);
		free(ctx);
		pgn_hook_out_release(&o);
	}
}

/* The reply command is one shell word the agent can run as shown. */
static void
test_the_cli_path_is_shown_as_one_shell_word(void)
{
	static const struct {
		const char *path, *shown;
	} cases[] = {
	    {"/usr/local/bin/pigeon",
	        "Send a message: /usr/local/bin/pigeon send"},
	    {"/opt/my tools/pigeon",
	        "Send a message: '/opt/my tools/pigeon' send"},
	    {"/home/jos\xc3\xa9/bin/pigeon",
	        "Send a message: '/home/jos\xc3\xa9/bin/pigeon' send"},
	    {"/home/bad\xff/pigeon", "Send a message: pigeon send"},
	    {"/it's/pigeon", "Send a message: pigeon send"},
	    {"/a\nb/pigeon", "Send a message: pigeon send"},
	    {"/c1\xc2\x85/pigeon", "Send a message: pigeon send"},
	};
	struct pgn_hook_out o;
	char sid[16], *ctx;
	size_t i;

	setup();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(sid, sizeof(sid), "w%zu", i);
		hook(&o, PGN_EVENT_SESSION_START, sid, "/", NULL, cases[i].path,
		    0);
		ctx = context_of(&o);
		REQUIRE(ctx != NULL);
		if (!CHECK_CONTAINS(ctx, cases[i].shown))
			printf("  case %zu\n", i);
		free(ctx);
		pgn_hook_out_release(&o);
	}
}

/* A session id that is not UTF-8 is refused, so logs and audit stay text. */
static void
test_a_session_id_that_is_not_utf8_is_bad_input(void)
{
	struct pgn_hook_out o;

	setup();
	hook(&o, PGN_EVENT_SESSION_START, "s\xff", "/", NULL, NULL, 0);
	CHECK_INT(o.st, PGN_EINVAL);
	CHECK(o.line == NULL);
	CHECK(o.nlog == 1 && strstr(o.log[0], "status=bad-input") != NULL);
	pgn_hook_out_release(&o);
}

/*
 * A fresh database where bob has 'n' queued messages ("first",
 * "second", "third"), and a prompt turn of his rendered by 'render'.
 */
static pgn_db *
bob_with(size_t n, struct pgn_turn *t, pgn_turn_render_fn *render)
{
	static const char *const bodies[] = {"first", "second", "third"};
	pgn_db *db;
	size_t i;

	setup();
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	for (i = 0; i < n && i < 3; i++)
		send_body(db, "bob", bodies[i], strlen(bodies[i]));
	memset(t, 0, sizeof(*t));
	t->host = "claude";
	t->session = "claude:s1";
	t->agent = "bob";
	t->turn = "UserPromptSubmit:p1";
	t->route = "prompt";
	t->render = render;
	return db;
}

/* A turn that cannot finish its output claims nothing. */
static pgn_status
refuse(const struct pgn_turn_out *out, size_t *keep, void *arg)
{
	(void)out;
	(void)keep;
	(void)arg;
	return PGN_ETOOBIG;
}

static void
test_a_failed_render_rolls_the_claim_back(void)
{
	struct pgn_turn_out out;
	struct pgn_turn t;
	pgn_db *db;
	sqlite3 *raw;

	db = bob_with(2, &t, refuse);
	CHECK_INT(pgn_turn_claim(db, &t, &out), PGN_ETOOBIG);
	CHECK_INT(out.msgs.n, 0);
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    2);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM delivery"), 0);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE kind = 'delivered'"),
	    0);
	/* Nothing of the turn is kept: not even the binding or the turn. */
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM session"), 0);
	sqlite3_close(raw);
	pgn_db_close(db);
}

/* What render keeps is what is claimed; the rest stays queued. */
static pgn_status
keep_one(const struct pgn_turn_out *out, size_t *keep, void *arg)
{
	(void)arg;
	if (out->msgs.n > 1)
		*keep = 1;
	return PGN_OK;
}

static void
test_the_claim_marks_only_what_render_kept(void)
{
	struct pgn_turn_out out;
	struct pgn_turn t;
	pgn_db *db;
	sqlite3 *raw;

	db = bob_with(3, &t, keep_one);
	CHECK_INT(pgn_turn_claim(db, &t, &out), PGN_OK);
	CHECK_INT(out.msgs.n, 1);
	CHECK_INT(out.msgs.left, 2);
	CHECK_STR(out.msgs.v[0].body, "first");
	pgn_msgs_release(&out.msgs);
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    2);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM delivery"), 1);
	CHECK_INT(H_INT(raw, "SELECT message_id FROM delivery"), 1);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE kind = 'delivered'"),
	    1);
	sqlite3_close(raw);
	pgn_db_close(db);
}

/* A session bound in one scope keeps agent and scope in another. */
static void
test_a_session_is_bound_once_across_scopes(void)
{
	char a[PATH_MAX], b[PATH_MAX + 16];
	struct pgn_hook_out o;
	sqlite3 *raw;
	char *ctx;

	setup();
	make_scope(a, sizeof(a), strlen(h_tmp) + 20);
	snprintf(b, sizeof(b), "%.*s/sub", PATH_MAX - 16, a);
	REQUIRE(mkdir(b, 0700) == 0);
	snprintf(b + strlen(b), sizeof(b) - strlen(b), "/.git");
	REQUIRE(mkdir(b, 0700) == 0);
	b[strlen(b) - 5] = '\0';
	hook(&o, PGN_EVENT_SESSION_START, "s1", a, "alice", NULL, 0);
	CHECK_STR(o.agent, "alice");
	pgn_hook_out_release(&o);
	/* Then the session's payloads name a nested repository. */
	hook(&o, PGN_EVENT_PROMPT, "s1", b, "bob", NULL, 1);
	CHECK_INT(o.st, PGN_OK);
	pgn_hook_out_release(&o);
	hook(&o, PGN_EVENT_SESSION_START, "s1", b, NULL, NULL, 2);
	ctx = context_of(&o);
	REQUIRE(ctx != NULL);
	CHECK_CONTAINS(ctx, "you are agent \"alice\"");
	CHECK_CONTAINS(ctx, a);
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM agent"), 1);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM session"), 1);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE kind = 'bound'"),
	    1);
	sqlite3_close(raw);
}

/* An invalid PIGEON_AGENT never stops mail for a bound session. */
static void
test_a_bad_agent_name_does_not_stop_a_bound_session(void)
{
	struct pgn_hook_out o;
	pgn_db *db;
	char *ctx;

	setup();
	hook(&o, PGN_EVENT_SESSION_START, "s1", "/", "alice", NULL, 0);
	CHECK_STR(o.agent, "alice");
	pgn_hook_out_release(&o);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	send_body(db, "alice", "still here", 10);
	pgn_db_close(db);
	hook(&o, PGN_EVENT_PROMPT, "s1", "/", "Not A Name", NULL, 1);
	CHECK_INT(o.st, PGN_OK);
	ctx = context_of(&o);
	REQUIRE(ctx != NULL);
	CHECK_CONTAINS(ctx, "  still here\n");
	free(ctx);
	CHECK_INT(o.nlog, 1); /* the delivery; no complaint for a bound one */
	pgn_hook_out_release(&o);

	/* Unbound, the bad name is logged and a generated name is used. */
	hook(&o, PGN_EVENT_SESSION_START, "s2", "/", "Not A Name", NULL, 0);
	CHECK_INT(o.st, PGN_OK);
	CHECK(o.nlog >= 1);
	CHECK_CONTAINS(o.log[0], "status=bad-agent");
	CHECK_CONTAINS(o.log[0], "PIGEON_AGENT 'Not A Name'");
	CHECK(strcmp(o.agent, "alice") != 0 && o.agent[0] != '\0');
	pgn_hook_out_release(&o);
}

/* The introduction names the active peers first. */
static void
test_the_introduction_lists_active_peers_first(void)
{
	struct pgn_hook_out o;
	char name[32], *ctx, *line;
	pgn_db *db;
	int i;

	setup();
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	for (i = 0; i < 21; i++) {
		snprintf(name, sizeof(name), "aaa-idle-%02d", i);
		REQUIRE(pgn_agent_add(db, name) == PGN_OK);
	}
	pgn_db_close(db);
	hook(&o, PGN_EVENT_SESSION_START, "s1", "/", "zz-busy", NULL, 0);
	pgn_hook_out_release(&o);
	hook(&o, PGN_EVENT_SESSION_START, "s2", "/", "me", NULL, 0);
	ctx = context_of(&o);
	REQUIRE(ctx != NULL);
	line = strstr(ctx, "Other agents here: ");
	REQUIRE(line != NULL);
	CHECK(
	    strncmp(line, "Other agents here: zz-busy (claude, seen", 40) == 0);
	CHECK_CONTAINS(line, "2 more: pigeon agents.");
	free(ctx);
	pgn_hook_out_release(&o);
}

/* ---- after a tool call, before a stop ------------------------------ */

/* A project at 'root' whose .pigeon/config.json is 'json'. */
static void
project_config(const char *root, const char *json)
{
	char path[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/.pigeon", root);
	REQUIRE(mkdir(path, 0700) == 0 || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/.pigeon/config.json", root);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs(json, f);
	fclose(f);
}

static void
queue(const char *root, const char *from, const char *to, const char *body)
{
	struct pgn_sent sent[1];
	struct pgn_send rq;
	size_t n;
	pgn_db *db;

	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&rq, 0, sizeof(rq));
	rq.from = from;
	rq.to = &to;
	rq.nto = 1;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.create = 1;
	REQUIRE(pgn_send(db, &rq, sent, 1, &n) == PGN_OK);
	pgn_db_close(db);
}

/* The context (or stop reason) of one hook run, "" for none. */
static char *
run_event(pgn_event e, const char *sid, const char *root, const char *agent,
    int n, struct pgn_hook_out *o)
{
	char *ctx;

	hook(o, e, sid, root, agent, NULL, n);
	if (!CHECK_INT(o->st, PGN_OK) && o->nlog > 0)
		printf("  %s\n", o->log[o->nlog - 1]);
	ctx = context_of(o);
	return ctx != NULL ? ctx : strdup("");
}

static void
test_after_a_tool_call_mail_comes_once_without_reminder_or_intro(void)
{
	char root[PATH_MAX], *ctx, *line;
	struct pgn_hook_out o;
	sqlite3 *raw;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	project_config(root,
	    "{\"instructions\":{\"promptReminder\":\"say please\"}}");
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	queue(root, "alice", "bob", "rebase before you push");
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 1, &o);
	CHECK_CONTAINS(ctx, "  rebase before you push\n");
	CHECK(strstr(ctx, "say please") == NULL);
	CHECK(strstr(ctx, "you are agent") == NULL);
	line = strndup(o.line, o.len); /* written with its length, no NUL */
	REQUIRE(line != NULL);
	CHECK_CONTAINS(line, "\"hookEventName\":\"PostToolUse\"");
	free(line);
	free(ctx);
	pgn_hook_out_release(&o);
	/* The next tool call: nothing again, and no turn to de-duplicate. */
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 1, &o);
	CHECK_STR(ctx, "");
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM delivery WHERE route = 'after-tool'"),
	    1);
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    0);
	sqlite3_close(raw);
}

/* The bytes of 'path', or NULL (absent or empty: nothing written). */
static char *
contents(const char *path, size_t *len)
{
	struct stat sb;

	*len = 0;
	if (stat(path, &sb) != 0 || sb.st_size == 0)
		return NULL;
	return h_read_file(path, len);
}

static int
same(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

static void
test_after_a_tool_call_without_mail_nothing_is_written(void)
{
	char root[PATH_MAX], wal[PATH_MAX + 8], *ctx;
	struct pgn_hook_out o;
	char *dbb, *walb, *dba;
	size_t dblen, wallen, len;
	sqlite3 *raw;
	long long seen;
	int i;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	raw = h_raw();
	seen = H_INT(raw, "SELECT last_seen_ms FROM session");
	sqlite3_close(raw);
	dbb = contents(dbpath, &dblen);
	walb = contents(wal, &wallen);
	for (i = 0; i < 20; i++) {
		ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, i, &o);
		CHECK_STR(ctx, "");
		CHECK_INT(o.nlog, 0);
		free(ctx);
		pgn_hook_out_release(&o);
	}
	/* Not a byte of the database or its WAL changed. */
	dba = contents(dbpath, &len);
	CHECK(same(dbb, dblen, dba, len));
	free(dba);
	dba = contents(wal, &len);
	CHECK(same(walb, wallen, dba, len));
	free(dba);
	free(dbb);
	free(walb);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT last_seen_ms FROM session"), seen);
	sqlite3_close(raw);
}

static void
test_a_stop_with_mail_makes_the_agent_go_on_with_it(void)
{
	char root[PATH_MAX], *ctx, *line;
	struct pgn_hook_out o;
	sqlite3 *raw;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	/* No mail: nothing at all, so the agent stops. */
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 1, &o);
	CHECK_STR(ctx, "");
	CHECK(o.line == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	queue(root, "alice", "bob", "review PR 12");
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 2, &o);
	line = strndup(o.line, o.len); /* written with its length, no NUL */
	REQUIRE(line != NULL);
	CHECK_CONTAINS(line, "{\"decision\":\"block\",\"reason\":");
	free(line);
	CHECK_CONTAINS(ctx, "  review PR 12\n");
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery WHERE route = 'stop'"),
	    1);
	CHECK_INT(H_INT(raw, "SELECT auto_continues FROM session"), 1);
	sqlite3_close(raw);
}

/*
 * Two agents that answer each other at every stop: each goes on at
 * most maxAutoContinues times in a row, then stops; the last mail waits
 * for a person's prompt, which resets the count.
 */
static void
test_two_agents_pinging_each_other_stop_after_the_cap(void)
{
	char root[PATH_MAX], *ctx, body[32];
	struct pgn_hook_out o;
	int goes[2] = {0, 0}, round, who, stopped = 0;
	static const char *const sid[2] = {"sa", "sb"},
	                         *const name[2] = {"ann", "ben"};
	sqlite3 *raw;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, sid[0], root, name[0], 0, &o));
	pgn_hook_out_release(&o);
	free(run_event(PGN_EVENT_SESSION_START, sid[1], root, name[1], 0, &o));
	pgn_hook_out_release(&o);
	queue(root, name[1], name[0], "ping 0");
	for (round = 1; round <= 20 && stopped < 2; round++) {
		who = (round + 1) % 2; /* ann first */
		ctx =
		    run_event(PGN_EVENT_STOP, sid[who], root, NULL, round, &o);
		if (ctx[0] != '\0') {
			goes[who]++;
			/* It answers, and the other one's stop finds that. */
			snprintf(body, sizeof(body), "ping %d", round);
			queue(root, name[who], name[1 - who], body);
		} else {
			stopped++;
		}
		free(ctx);
		pgn_hook_out_release(&o);
	}
	CHECK_INT(goes[0], PGN_AUTO_CONTINUES_DEFAULT);
	CHECK_INT(goes[1], PGN_AUTO_CONTINUES_DEFAULT);
	CHECK_INT(stopped, 2);
	raw = h_raw();
	/* Nothing was claimed past the cap: the last ping waits. */
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    1);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery WHERE route = 'stop'"),
	    2 * PGN_AUTO_CONTINUES_DEFAULT);
	sqlite3_close(raw);
	/* A person's prompt delivers it and resets the count. */
	who = PGN_AUTO_CONTINUES_DEFAULT % 2 == 1 ? 0 : 1;
	for (who = 0; who < 2; who++) {
		ctx = run_event(PGN_EVENT_PROMPT, sid[who], root, NULL,
		    100 + who, &o);
		free(ctx);
		pgn_hook_out_release(&o);
	}
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    0);
	CHECK_INT(H_INT(raw, "SELECT sum(auto_continues) FROM session"), 0);
	sqlite3_close(raw);
}

static void
test_max_auto_continues_zero_never_goes_on(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;
	sqlite3 *raw;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	project_config(root, "{\"reach\":{\"maxAutoContinues\":0}}");
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	queue(root, "alice", "bob", "later");
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 1, &o);
	CHECK_STR(ctx, "");
	CHECK(o.nlog == 1 && strstr(o.log[0], "status=governed") != NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    1);
	sqlite3_close(raw);
}

/* A stop waits for mail within reach.stopWaitMs, and only that long. */
static void
test_a_stop_waits_for_mail_within_stop_wait_ms(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;
	int64_t t0;
	pid_t pid;
	int status;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	project_config(root, "{\"reach\":{\"stopWaitMs\":1500}}");
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	wait_until = 5000;
	/* Nothing comes: it waits the whole 1.5 s, then says nothing. */
	t0 = pgn_mono_ms();
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 1, &o);
	CHECK_STR(ctx, "");
	CHECK(pgn_mono_ms() - t0 >= 1400);
	free(ctx);
	pgn_hook_out_release(&o);
	/* A ping 300 ms into the wait is delivered by it. */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct timespec ts = {0, 300000000L};

		nanosleep(&ts, NULL);
		queue(root, "alice", "bob", "just in time");
		_exit(0);
	}
	t0 = pgn_mono_ms();
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 2, &o);
	CHECK_CONTAINS(ctx, "  just in time\n");
	CHECK(pgn_mono_ms() - t0 < 1400);
	free(ctx);
	pgn_hook_out_release(&o);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Without the caller's leave to wait (wait_until 0): no wait. */
	wait_until = 0;
	t0 = pgn_mono_ms();
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 3, &o);
	CHECK(pgn_mono_ms() - t0 < 500);
	free(ctx);
	pgn_hook_out_release(&o);
}

/* ---- the quiet stamp: an after-tool run without SQLite (0085) ------ */

/* A session bound to bob in a fresh scope, and its first after-tool run. */
static void
quiet_setup(char *root, size_t rootlen)
{
	struct pgn_hook_out o;

	setup();
	make_scope(root, rootlen, strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 1, &o));
	pgn_hook_out_release(&o);
}

/* Stamp 'session' quiet after 's', seen at 'seen_ms', for tool calls. */
static void
record_seen(const char *session, const struct pgn_quiet_snap *s,
    int64_t seen_ms)
{
	struct pgn_quiet_facts f;

	memset(&f, 0, sizeof(f));
	f.seen_ms = seen_ms;
	f.remind_ms = -1;
	pgn_quiet_record(home, session, s, &f, 1);
}

/* Would the stamp answer for 'session' now? */
static int
stamp_hits(const char *session)
{
	struct pgn_quiet_snap s;

	return pgn_quiet_snapshot(dbpath, &s) &&
	    pgn_quiet_hit(home, session, &s, pgn_now_ms());
}

/* ---- priority: order, marking, which event claims it (0158) ------- */

/* Queue 'body' from alice to bob at 'priority'. */
static void
queue_p(const char *root, const char *body, int priority)
{
	const char *to = "bob";
	struct pgn_sent sent[1];
	struct pgn_send rq;
	size_t n;
	pgn_db *db;

	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&rq, 0, sizeof(rq));
	rq.from = "alice";
	rq.to = &to;
	rq.nto = 1;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.priority = priority;
	REQUIRE(pgn_send(db, &rq, sent, 1, &n) == PGN_OK);
	pgn_db_close(db);
}

static void
test_urgent_mail_is_rendered_first_and_marked(void)
{
	char root[PATH_MAX], *ctx, *u, *n;
	struct pgn_hook_out o;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	queue_p(root, "routine chatter", PGN_PRIORITY_NORMAL);
	queue_p(root, "whenever you like", PGN_PRIORITY_LOW);
	queue_p(root, "the build is broken, stop pushing", PGN_PRIORITY_URGENT);
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 1, &o);
	u = strstr(ctx, "\n[URGENT #3 from alice, ");
	n = strstr(ctx, "\n[#1 from alice, ");
	CHECK(u != NULL && n != NULL && u < n);
	CHECK(n != NULL && strstr(n, "\n[#2 from alice, ") != NULL);
	CHECK_CONTAINS(ctx, "  the build is broken, stop pushing\n");
	/* only urgent is marked */
	CHECK(strstr(ctx, "URGENT #1") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
}

static void
test_low_mail_waits_past_tool_calls_and_stops_for_a_prompt(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;
	sqlite3 *raw;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	queue_p(root, "no hurry", PGN_PRIORITY_LOW);
	/* after a tool call: quiet, and stamped so (no SQLite next time) */
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 1, &o);
	CHECK_STR(ctx, "");
	CHECK(o.line == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK(stamp_hits("claude:s1"));
	/* at a stop: nothing, so the agent stops; no continuation counted */
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 2, &o);
	CHECK_STR(ctx, "");
	CHECK(o.line == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM delivery"), 0);
	CHECK_INT(H_INT(raw, "SELECT auto_continues FROM session"), 0);
	sqlite3_close(raw);
	/* the next prompt brings it */
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 3, &o);
	CHECK_CONTAINS(ctx, "  no hurry\n");
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery WHERE route = 'prompt'"),
	    1);
	sqlite3_close(raw);
}

static void
test_urgent_mail_reaches_the_next_tool_call_past_a_stamp(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;

	quiet_setup(root, sizeof(root));
	CHECK(stamp_hits("claude:s1"));
	/* low mail: the next tool call reads, finds nothing it claims */
	queue_p(root, "later", PGN_PRIORITY_LOW);
	CHECK(!stamp_hits("claude:s1"));
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o);
	CHECK_STR(ctx, "");
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK(stamp_hits("claude:s1"));
	/* urgent mail: the very next tool call claims it, first */
	queue_p(root, "stop pushing", PGN_PRIORITY_URGENT);
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 3, &o);
	CHECK_CONTAINS(ctx, "[URGENT #2 from alice, ");
	CHECK_CONTAINS(ctx, "  stop pushing\n");
	CHECK(strstr(ctx, "later") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
}

static void
test_an_unchanged_database_answers_the_next_tool_call_from_the_stamp(void)
{
	char root[PATH_MAX], path[PATH_MAX + 16], *ctx;
	struct pgn_hook_out o;
	struct stat sb;

	quiet_setup(root, sizeof(root));
	snprintf(path, sizeof(path), "%s/quiet", home);
	REQUIRE(stat(path, &sb) == 0);
	CHECK_INT(sb.st_mode & 0777, 0600);
	CHECK(sb.st_size <= (off_t)PGN_QUIET_SLOTS * PGN_QUIET_SLOT_SIZE);
	CHECK(stamp_hits("claude:s1"));
	CHECK(!stamp_hits("claude:s2"));
	/* A hit says nothing and logs nothing, as the read would. */
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o);
	CHECK_STR(ctx, "");
	CHECK_INT(o.nlog, 0);
	CHECK(o.line == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	/* Prompts and stops read the database every time. */
	CHECK(stamp_hits("claude:s1"));
}

static void
test_mail_sent_after_a_stamp_is_delivered_by_the_next_tool_call(void)
{
	char root[PATH_MAX], body[64], *ctx;
	struct pgn_hook_out o;
	sqlite3 *raw;
	int i;

	quiet_setup(root, sizeof(root));
	for (i = 0; i < 30; i++) {
		/* Stamped quiet, then a send from another connection. */
		CHECK(stamp_hits("claude:s1"));
		snprintf(body, sizeof(body), "ping number %d", i);
		queue(root, "alice", "bob", body);
		CHECK(!stamp_hits("claude:s1"));
		ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, i, &o);
		CHECK_CONTAINS(ctx, body);
		free(ctx);
		pgn_hook_out_release(&o);
		/* The claim wrote: one more read, which stamps again. */
		CHECK(!stamp_hits("claude:s1"));
		ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, i, &o);
		CHECK_STR(ctx, "");
		free(ctx);
		pgn_hook_out_release(&o);
	}
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM delivery WHERE route = 'after-tool'"),
	    30);
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    0);
	sqlite3_close(raw);
}

/*
 * The snapshot precedes the read: a send that commits between the two
 * is either seen by the read (no stamp) or changes the files after the
 * snapshot the stamp keeps (the next run reads).
 */
static void
test_a_send_racing_the_read_is_never_stamped_away(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_quiet_snap before, now;
	struct pgn_hook_out o;

	quiet_setup(root, sizeof(root));
	REQUIRE(pgn_quiet_snapshot(dbpath, &before));
	queue(root, "alice", "bob", "sent during the read");
	/* The read found nothing (it ran before the send's commit). */
	record_seen("claude:s1", &before, pgn_now_ms());
	REQUIRE(pgn_quiet_snapshot(dbpath, &now));
	CHECK(!pgn_quiet_hit(home, "claude:s1", &now, pgn_now_ms()));
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 3, &o);
	CHECK_CONTAINS(ctx, "sent during the read");
	free(ctx);
	pgn_hook_out_release(&o);
}

/* A raw connection that leaves -wal in place when it closes. */
static sqlite3 *
raw_keeping_wal(void)
{
	sqlite3 *raw = h_raw();
	int on = 1;

	REQUIRE(sqlite3_file_control(raw, "main", SQLITE_FCNTL_PERSIST_WAL,
	            &on) == SQLITE_OK);
	return raw;
}

/*
 * After a full checkpoint the next commit rewrites the WAL from its
 * start: the file keeps its size, and only the header's salts (and the
 * modification time, within the clock's tick) tell.
 */
static void
test_a_restarted_wal_of_the_same_size_is_seen(void)
{
	char root[PATH_MAX], wal[PATH_MAX + 8], body[32], *ctx;
	struct pgn_quiet_snap s, old;
	struct pgn_hook_out o;
	struct stat a, b;
	sqlite3 *raw;
	int i;

	quiet_setup(root, sizeof(root));
	for (i = 0; i < 20; i++) { /* a WAL of many frames */
		snprintf(body, sizeof(body), "filler %d", i);
		queue(root, "alice", "carol", body);
	}
	raw = raw_keeping_wal();
	REQUIRE(sqlite3_exec(raw, "PRAGMA wal_checkpoint(FULL)", NULL, NULL,
	            NULL) == SQLITE_OK);
	sqlite3_close(raw);
	free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 1, &o));
	pgn_hook_out_release(&o);
	REQUIRE(stamp_hits("claude:s1"));
	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	REQUIRE(stat(wal, &a) == 0);
	REQUIRE(pgn_quiet_snapshot(dbpath, &old));
	queue(root, "alice", "bob", "after the restart");
	REQUIRE(stat(wal, &b) == 0);
	CHECK(a.st_size == b.st_size); /* the case this test is about */
	/*
	 * Even were the times of both files unchanged (the same clock tick;
	 * the sender's checkpoint also touched the database), the header
	 * gives it away.
	 */
	REQUIRE(pgn_quiet_snapshot(dbpath, &s));
	CHECK(memcmp(old.walhdr, s.walhdr, sizeof(s.walhdr)) != 0);
	s.db = old.db;
	s.wal.mtime_ns = old.wal.mtime_ns;
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, pgn_now_ms()));
	/* Which is what a hit needs: the old snapshot itself hits. */
	CHECK(pgn_quiet_hit(home, "claude:s1", &old, pgn_now_ms()));
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o);
	CHECK_CONTAINS(ctx, "after the restart");
	free(ctx);
	pgn_hook_out_release(&o);
}

/*
 * A restarted WAL is written over in place: after its first commit the
 * next ones keep its size and its header, and on a kernel whose file
 * times keep their clock tick (before fine-grained times) the time too.
 * The WAL index's frame count and checksum tell (decision 0230).
 */
static void
test_a_second_commit_into_a_restarted_wal_is_seen_within_a_tick(void)
{
	char root[PATH_MAX], wal[PATH_MAX + 8], body[32], *ctx;
	const char *to = "bob";
	struct pgn_quiet_snap s, old;
	struct pgn_hook_out o;
	struct pgn_sent sent[1];
	struct pgn_send rq;
	struct stat a, b;
	sqlite3 *raw;
	pgn_db *db;
	size_t n;
	int i;

	quiet_setup(root, sizeof(root));
	for (i = 0; i < 20; i++) {
		snprintf(body, sizeof(body), "filler %d", i);
		queue(root, "alice", "carol", body);
	}
	raw = raw_keeping_wal();
	REQUIRE(sqlite3_exec(raw, "PRAGMA wal_checkpoint(FULL)", NULL, NULL,
	            NULL) == SQLITE_OK);
	sqlite3_close(raw);
	queue(root, "alice", "carol", "the restart's first commit");
	free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 1, &o));
	pgn_hook_out_release(&o);
	REQUIRE(stamp_hits("claude:s1"));
	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	REQUIRE(stat(wal, &a) == 0);
	REQUIRE(pgn_quiet_snapshot(dbpath, &old));
	/*
	 * A sender that does not checkpoint first (as a hook's write, or
	 * one whose checkpoint a reader held back) appends to the
	 * generation the restart began.
	 */
	REQUIRE(pgn_db_open(dbpath, PGN_OPEN_LATENCY, 5000, &db) == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&rq, 0, sizeof(rq));
	rq.from = "alice";
	rq.to = &to;
	rq.nto = 1;
	rq.body = "the second commit";
	rq.body_len = strlen(rq.body);
	REQUIRE(pgn_send(db, &rq, sent, 1, &n) == PGN_OK);
	pgn_db_close(db);
	REQUIRE(stat(wal, &b) == 0);
	REQUIRE(pgn_quiet_snapshot(dbpath, &s));
	/* the case: the same size, the same WAL header */
	CHECK(a.st_size == b.st_size);
	CHECK(memcmp(old.walhdr, s.walhdr, sizeof(s.walhdr)) == 0);
	CHECK(memcmp(old.walidx, s.walidx, sizeof(s.walidx)) != 0);
	/* the times as a coarse clock would have left them */
	s.db = old.db;
	s.wal = old.wal;
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, pgn_now_ms()));
	CHECK(pgn_quiet_hit(home, "claude:s1", &old, pgn_now_ms()));
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o);
	CHECK_CONTAINS(ctx, "the second commit");
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE recipient_id = "
	              "(SELECT id FROM agent WHERE name = 'bob') AND "
	              "delivered_ms IS NULL"),
	    0);
	sqlite3_close(raw);
}

/*
 * Another process sends while the session's tool calls run, each of its
 * commits appended without a checkpoint (as a hook's writes are): a run
 * that starts after the sender has finished delivers everything left,
 * whatever stamps the runs before it made.
 */
static void
test_a_racing_sender_is_never_stamped_away(void)
{
	char root[PATH_MAX], body[32];
	const char *to = "bob";
	struct pgn_hook_out o;
	struct pgn_sent sent[1];
	struct pgn_send rq;
	sqlite3 *raw;
	pgn_db *db;
	pid_t pid;
	size_t n;
	int i, status, ok;

	quiet_setup(root, sizeof(root));
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		ok = 1;
		for (i = 0; ok && i < 40; i++) {
			ok = pgn_db_open(dbpath, PGN_OPEN_LATENCY, 30000,
			         &db) == PGN_OK;
			if (ok)
				ok = pgn_db_set_scope(db, root) == PGN_OK;
			memset(&rq, 0, sizeof(rq));
			snprintf(body, sizeof(body), "raced %d", i);
			rq.from = "alice";
			rq.to = &to;
			rq.nto = 1;
			rq.body = body;
			rq.body_len = strlen(body);
			if (ok)
				ok = pgn_send(db, &rq, sent, 1, &n) == PGN_OK;
			pgn_db_close(db);
		}
		_exit(ok ? 0 : 1);
	}
	i = 0;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		free(
		    run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, i++, &o));
		pgn_hook_out_release(&o);
	}
	REQUIRE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The sender is done: the next run must see all of it. */
	free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, i, &o));
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    0);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery d JOIN message m "
	              "ON m.id = d.message_id WHERE m.body LIKE 'raced %'"),
	    40);
	sqlite3_close(raw);
}

/* Would the stamp answer a prompt of 'session' now? */
static int
prompt_hits(const char *session)
{
	struct pgn_quiet_facts f;
	struct pgn_quiet_snap s;

	return pgn_quiet_snapshot(dbpath, &s) &&
	    pgn_quiet_hit_prompt(home, session, &s, pgn_now_ms(), &f);
}

/* ---- a prompt from the quiet stamp (decision 0230) ----------------- */

static void
test_an_unchanged_database_answers_the_next_prompt_from_the_stamp(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;

	quiet_setup(root, sizeof(root));
	CHECK(prompt_hits("claude:s1"));
	CHECK(!prompt_hits("claude:s2"));
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 2, &o);
	CHECK_STR(ctx, "");
	CHECK_INT(o.nlog, 0);
	CHECK(o.line == NULL);
	CHECK_STR(o.agent, "bob");
	free(ctx);
	pgn_hook_out_release(&o);
	/* a prompt's hit writes nothing: the stamp still answers */
	CHECK(prompt_hits("claude:s1"));
}

static void
test_mail_of_any_priority_sent_after_a_stamp_reaches_the_next_prompt(void)
{
	static const int prio[3] = {PGN_PRIORITY_LOW, PGN_PRIORITY_NORMAL,
	    PGN_PRIORITY_URGENT};
	char root[PATH_MAX], body[32], *ctx;
	struct pgn_hook_out o;
	sqlite3 *raw;
	int i;

	quiet_setup(root, sizeof(root));
	for (i = 0; i < 9; i++) {
		CHECK(prompt_hits("claude:s1"));
		snprintf(body, sizeof(body), "prompt ping %d", i);
		queue_p(root, body, prio[i % 3]);
		CHECK(!prompt_hits("claude:s1"));
		ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 10 + i, &o);
		CHECK_CONTAINS(ctx, body);
		free(ctx);
		pgn_hook_out_release(&o);
		/* a tool call reads after the claim, and stamps again */
		free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 10 + i,
		    &o));
		pgn_hook_out_release(&o);
		/* the next prompt after one that had mail reads: a new turn */
		free(run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 30 + i, &o));
		pgn_hook_out_release(&o);
		free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 30 + i,
		    &o));
		pgn_hook_out_release(&o);
	}
	raw = h_raw();
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    0);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery WHERE route = 'prompt'"),
	    9);
	sqlite3_close(raw);
}

/*
 * A tool call's read counts only mail it claims (normal and urgent): its
 * stamp tells a tool call that low mail waits for a prompt, never the
 * prompt that low mail does not wait.
 */
static void
test_a_tool_calls_stamp_never_hides_low_mail_from_a_prompt(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;

	quiet_setup(root, sizeof(root));
	queue_p(root, "when you have a moment", PGN_PRIORITY_LOW);
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o);
	CHECK_STR(ctx, "");
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK(stamp_hits("claude:s1"));
	CHECK(!prompt_hits("claude:s1"));
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 3, &o);
	CHECK_CONTAINS(ctx, "  when you have a moment\n");
	free(ctx);
	pgn_hook_out_release(&o);
}

/* A reminder falls due with no commit: the stamp ends before it. */
static void
test_a_prompts_stamp_ends_when_a_reminder_falls_due(void)
{
	char root[PATH_MAX];
	struct pgn_quiet_facts f, got;
	struct pgn_quiet_snap s;
	int64_t now;

	quiet_setup(root, sizeof(root));
	REQUIRE(pgn_quiet_snapshot(dbpath, &s));
	now = pgn_now_ms();
	memset(&f, 0, sizeof(f));
	f.seen_ms = now;
	f.prompt = 1;
	f.remind_ms = now + 1000;
	snprintf(f.agent, sizeof(f.agent), "bob");
	pgn_quiet_record(home, "claude:s1", &s, &f, 1);
	CHECK(pgn_quiet_hit_prompt(home, "claude:s1", &s, now + 999, &got));
	CHECK_STR(got.agent, "bob");
	CHECK(!pgn_quiet_hit_prompt(home, "claude:s1", &s, now + 1000, &got));
	/* a tool call shows no reminder: its stamp does not end there */
	CHECK(pgn_quiet_hit(home, "claude:s1", &s, now + 1000));
	/* not ready for a prompt (a continuation counted, mail in its turn) */
	f.prompt = 0;
	f.remind_ms = -1;
	pgn_quiet_record(home, "claude:s1", &s, &f, 1);
	CHECK(!pgn_quiet_hit_prompt(home, "claude:s1", &s, now, &got));
	CHECK(pgn_quiet_hit(home, "claude:s1", &s, now));
	/* no agent named: never */
	f.prompt = 1;
	f.agent[0] = '\0';
	pgn_quiet_record(home, "claude:s1", &s, &f, 1);
	CHECK(!pgn_quiet_hit_prompt(home, "claude:s1", &s, now, &got));
}

/* A read that saw a reminder due stamps for tool calls, not a prompt. */
static void
test_a_read_that_saw_a_reminder_due_stamps_no_prompt(void)
{
	char root[PATH_MAX];
	struct pgn_hook_out o;
	sqlite3 *raw;

	quiet_setup(root, sizeof(root));
	raw = raw_keeping_wal();
	/* the agent's next reminder due long ago */
	REQUIRE(sqlite3_exec(raw,
	            "UPDATE agent SET remind_ms = 1 WHERE name = 'bob'", NULL,
	            NULL, NULL) == SQLITE_OK);
	sqlite3_close(raw);
	free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o));
	pgn_hook_out_release(&o);
	/* the read saw a reminder due: a tool call may answer, not a prompt */
	CHECK(stamp_hits("claude:s1"));
	CHECK(!prompt_hits("claude:s1"));
}

/* The payload's directory in another scope than the stamp's: a read. */
static void
test_a_prompt_from_another_scope_reads(void)
{
	char root[PATH_MAX], other[PATH_MAX], *ctx;
	struct pgn_hook_out o;

	quiet_setup(root, sizeof(root));
	make_scope(other, sizeof(other), strlen(h_tmp) + 60);
	REQUIRE(strcmp(root, other) != 0);
	CHECK(prompt_hits("claude:s1"));
	ctx = run_event(PGN_EVENT_PROMPT, "s1", other, NULL, 2, &o);
	CHECK_STR(ctx, "");
	CHECK_STR(o.agent, "bob");
	free(ctx);
	pgn_hook_out_release(&o);
}

/* Overwrite 'n' bytes of the database's -shm at 'off'. */
static void
poke_shm(off_t off, const void *p, size_t n)
{
	char shm[PATH_MAX + 8];
	int fd;

	snprintf(shm, sizeof(shm), "%s-shm", dbpath);
	fd = open(shm, O_WRONLY);
	REQUIRE(fd >= 0);
	REQUIRE(pwrite(fd, p, n, off) == (ssize_t)n);
	close(fd);
}

/*
 * A WAL index SQLite would not read as it is — copies that differ (a
 * writer between them, or a hostile file), not initialized, of another
 * version, naming no WAL generation, missing, not a regular file —
 * gives no snapshot: the run reads the database.
 */
static void
test_a_wal_index_in_doubt_gives_no_snapshot(void)
{
	char root[PATH_MAX], shm[PATH_MAX + 8], *ctx;
	unsigned char h[96], zero[8] = {0}, one = 1;
	struct pgn_quiet_snap s;
	struct pgn_hook_out o;
	int fd;

	quiet_setup(root, sizeof(root));
	snprintf(shm, sizeof(shm), "%s-shm", dbpath);
	fd = open(shm, O_RDONLY);
	REQUIRE(fd >= 0);
	REQUIRE(pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h));
	close(fd);
	REQUIRE(pgn_quiet_snapshot(dbpath, &s));
	/* the copies differ */
	poke_shm(48 + 16, &one, 1);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	CHECK(!stamp_hits("claude:s1"));
	poke_shm(0, h, sizeof(h));
	CHECK(stamp_hits("claude:s1"));
	/* not initialized, in both copies */
	poke_shm(12, zero, 1);
	poke_shm(48 + 12, zero, 1);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	poke_shm(0, h, sizeof(h));
	/* another version */
	poke_shm(0, zero, 4);
	poke_shm(48, zero, 4);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	poke_shm(0, h, sizeof(h));
	/* no generation named (as rebuilt from an empty WAL) */
	poke_shm(32, zero, 8);
	poke_shm(48 + 32, zero, 8);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	poke_shm(0, h, sizeof(h));
	REQUIRE(pgn_quiet_snapshot(dbpath, &s));
	/* shorter than both copies */
	REQUIRE(truncate(shm, 90) == 0);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	/* gone, then a directory in its place */
	REQUIRE(unlink(shm) == 0);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	REQUIRE(mkdir(shm, 0700) == 0);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	REQUIRE(rmdir(shm) == 0);
	/* and the run reads: a ping sent now is delivered */
	queue(root, "alice", "bob", "past a doubtful index");
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 3, &o);
	CHECK_CONTAINS(ctx, "past a doubtful index");
	free(ctx);
	pgn_hook_out_release(&o);
}

static void
test_a_stamp_never_outlives_the_last_seen_refresh(void)
{
	struct pgn_quiet_snap s;
	char root[PATH_MAX];
	int64_t now;

	quiet_setup(root, sizeof(root));
	REQUIRE(pgn_quiet_snapshot(dbpath, &s));
	now = pgn_now_ms();
	record_seen("claude:s1", &s, now - PGN_SEEN_REFRESH_MS + 1);
	CHECK(pgn_quiet_hit(home, "claude:s1", &s, now));
	record_seen("claude:s1", &s, now - PGN_SEEN_REFRESH_MS);
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, now));
	/* A last-seen time from the future (a clock set back): read. */
	record_seen("claude:s1", &s, now + 1);
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, now));
}

/* The slot quiet.c gives 'key' (its FNV-1a, modulo the slot count). */
static size_t
slot_for(const char *key)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *key != '\0'; key++) {
		h ^= (unsigned char)*key;
		h *= 1099511628211ULL;
	}
	return (size_t)(h % PGN_QUIET_SLOTS);
}

static void
test_a_foreign_torn_or_loose_stamp_is_never_believed(void)
{
	char root[PATH_MAX], path[PATH_MAX + 16], other[64], key[300];
	struct pgn_quiet_snap s;
	int64_t now = pgn_now_ms();
	FILE *f;
	int i, c;

	quiet_setup(root, sizeof(root));
	REQUIRE(pgn_quiet_snapshot(dbpath, &s));
	snprintf(path, sizeof(path), "%s/quiet", home);
	/* Another session in the same slot evicts it: a read, not a lie. */
	for (i = 0;; i++) {
		snprintf(other, sizeof(other), "claude:other-%d", i);
		if (slot_for(other) == slot_for("claude:s1"))
			break;
	}
	record_seen(other, &s, now);
	CHECK(pgn_quiet_hit(home, other, &s, now));
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, now));
	/* One flipped byte anywhere in the slot: a torn write. */
	record_seen("claude:s1", &s, now);
	REQUIRE(pgn_quiet_hit(home, "claude:s1", &s, now));
	f = fopen(path, "r+b");
	REQUIRE(f != NULL);
	REQUIRE(
	    fseek(f, (long)(slot_for("claude:s1") * PGN_QUIET_SLOT_SIZE + 40),
	        SEEK_SET) == 0);
	c = fgetc(f);
	REQUIRE(fseek(f, -1, SEEK_CUR) == 0);
	fputc(c ^ 0x20, f);
	fclose(f);
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, now));
	/* A file others may write, or bigger than the table: not ours. */
	record_seen("claude:s1", &s, now);
	REQUIRE(pgn_quiet_hit(home, "claude:s1", &s, now));
	REQUIRE(chmod(path, 0622) == 0);
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, now));
	REQUIRE(chmod(path, 0600) == 0);
	REQUIRE(
	    truncate(path, (off_t)PGN_QUIET_SLOTS * PGN_QUIET_SLOT_SIZE) == 0);
	CHECK(pgn_quiet_hit(home, "claude:s1", &s, now));
	REQUIRE(truncate(path,
	            (off_t)PGN_QUIET_SLOTS * PGN_QUIET_SLOT_SIZE + 1) == 0);
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, now));
	/* A symbolic link in its place is not followed. */
	REQUIRE(unlink(path) == 0);
	REQUIRE(symlink(dbpath, path) == 0);
	record_seen("claude:s1", &s, now);
	CHECK(!pgn_quiet_hit(home, "claude:s1", &s, now));
	REQUIRE(unlink(path) == 0);
	/* Session keys up to PGN_MAX_SESSION_KEY bytes, not one more. */
	memset(key, 'k', sizeof(key));
	key[PGN_MAX_SESSION_KEY] = '\0';
	record_seen(key, &s, now);
	CHECK(pgn_quiet_hit(home, key, &s, now));
	key[PGN_MAX_SESSION_KEY] = 'k';
	key[PGN_MAX_SESSION_KEY + 1] = '\0';
	record_seen(key, &s, now);
	CHECK(!pgn_quiet_hit(home, key, &s, now));
}

static void
test_no_stamp_without_a_wal_or_for_a_replaced_database(void)
{
	char root[PATH_MAX], wal[PATH_MAX + 8], copy[PATH_MAX + 8];
	struct pgn_quiet_snap s;
	sqlite3 *raw;
	char *bytes;
	size_t len;
	FILE *f;

	quiet_setup(root, sizeof(root));
	REQUIRE(stamp_hits("claude:s1"));
	/* Emptied by a checkpoint, in WAL mode: the next commit grows it. */
	raw = raw_keeping_wal();
	REQUIRE(sqlite3_exec(raw, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL,
	            NULL) == SQLITE_OK);
	sqlite3_close(raw);
	snprintf(wal, sizeof(wal), "%s-wal", dbpath);
	CHECK(pgn_quiet_snapshot(dbpath, &s));
	CHECK_INT(s.wal.size, 0);
	/* A copy renamed over the database: another file, a read. */
	record_seen("claude:s1", &s, pgn_now_ms());
	REQUIRE(stamp_hits("claude:s1"));
	bytes = h_read_file(dbpath, &len);
	REQUIRE(bytes != NULL);
	snprintf(copy, sizeof(copy), "%s.copy", dbpath);
	f = fopen(copy, "wb");
	REQUIRE(f != NULL);
	REQUIRE(fwrite(bytes, 1, len, f) == len);
	fclose(f);
	free(bytes);
	REQUIRE(rename(copy, dbpath) == 0);
	CHECK(!stamp_hits("claude:s1"));
	/* Rollback mode writes in place: no snapshot at all. */
	raw = h_raw();
	REQUIRE(sqlite3_exec(raw, "PRAGMA journal_mode=DELETE", NULL, NULL,
	            NULL) == SQLITE_OK);
	sqlite3_close(raw);
	(void)unlink(wal);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
	f = fopen(wal, "wb"); /* an empty WAL left beside it */
	REQUIRE(f != NULL);
	fclose(f);
	CHECK(!pgn_quiet_snapshot(dbpath, &s));
}

/* ---- one sender's text in one turn (decision 0136) ------------------ */

/* A body of 'len' bytes of 'c', queued from 'from' to bob. */
static void
queue_sized(const char *root, const char *from, char c, size_t len)
{
	char body[PGN_MAX_BODY + 1];

	REQUIRE(len <= PGN_MAX_BODY);
	memset(body, c, len);
	body[len] = '\0';
	queue(root, from, "bob", body);
}

/* Messages from 'from' still queued. */
static long long
queued_from(const char *from)
{
	char sql[128];
	long long n;
	sqlite3 *raw;

	snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM message WHERE delivered_ms IS NULL "
	    "AND sender = '%s'",
	    from);
	raw = h_raw();
	n = H_INT(raw, sql);
	sqlite3_close(raw);
	return n;
}

/*
 * Across a turn's after-tool injections one sender puts in at most
 * PGN_TURN_SENDER_MAX bytes: exactly the bound goes, one byte more
 * waits — and so does that sender's later, smaller mail (its order
 * kept) — while another sender still gets through, with a line saying
 * how many wait. A stop with only held mail says nothing (the agent
 * stops); the next prompt, a new turn, brings it.
 */
static void
test_one_senders_text_in_a_turn_stops_at_its_bound(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;
	size_t first = PGN_MAX_BODY;
	sqlite3 *raw;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	free(run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 1, &o));
	pgn_hook_out_release(&o);
	/* Two tool calls: alice's text up to the bound exactly. */
	queue_sized(root, "alice", 'a', first);
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o);
	CHECK(shows(ctx, 1));
	free(ctx);
	pgn_hook_out_release(&o);
	queue_sized(root, "alice", 'b', PGN_TURN_SENDER_MAX - first);
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 3, &o);
	CHECK(shows(ctx, 2));
	free(ctx);
	pgn_hook_out_release(&o);
	/* One byte past it: alice's next waits, then her smaller one too. */
	queue_sized(root, "alice", 'c', 1);
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 4, &o);
	CHECK_STR(ctx, "");
	CHECK(o.line == NULL);
	CHECK_INT(o.claimed, 0);
	CHECK(o.nlog == 1 && strstr(o.log[0], "status=held") != NULL &&
	    strstr(o.log[0], "1 message waits for the next turn") != NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(queued_from("alice"), 1);
	/* carol still gets through; the line counts alice's waiting mail. */
	queue(root, "carol", "bob", "the build is green");
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 5, &o);
	CHECK(shows(ctx, 4));
	CHECK(!shows(ctx, 3));
	CHECK_CONTAINS(ctx,
	    "1 more message waits (a sender's share of this turn is used)");
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(queued_from("alice"), 1);
	CHECK_INT(queued_from("carol"), 0);
	/* The stop: nothing to go on with; the agent stops. */
	ctx = run_event(PGN_EVENT_STOP, "s1", root, NULL, 6, &o);
	CHECK_STR(ctx, "");
	CHECK(o.line == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(queued_from("alice"), 1);
	/* The next prompt is a new turn: alice's mail comes. */
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 7, &o);
	CHECK(shows(ctx, 3));
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(queued_from("alice"), 0);
	raw = h_raw();
	CHECK_INT(H_INT(raw,
	              "SELECT sum(bytes) FROM delivery WHERE sender = "
	              "'alice' AND route = 'after-tool'"),
	    PGN_TURN_SENDER_MAX);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery "
	              "WHERE message_id = 3 AND route = 'prompt'"),
	    1);
	CHECK_INT(H_INT(raw, "SELECT auto_continues FROM session"), 0);
	sqlite3_close(raw);
}

/*
 * A prompt with no mail to claim still begins a turn after one that
 * had mail (it records its start, where it would otherwise only read):
 * the sender who filled the last turn's share is heard again at once.
 */
static void
test_a_prompt_without_mail_begins_a_new_share(void)
{
	char root[PATH_MAX], *ctx;
	struct pgn_hook_out o;
	sqlite3 *raw;

	setup();
	make_scope(root, sizeof(root), strlen(h_tmp) + 10);
	free(run_event(PGN_EVENT_SESSION_START, "s1", root, "bob", 0, &o));
	pgn_hook_out_release(&o);
	free(run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 1, &o));
	pgn_hook_out_release(&o);
	queue_sized(root, "alice", 'a', PGN_MAX_BODY);
	free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 2, &o));
	pgn_hook_out_release(&o);
	queue_sized(root, "alice", 'b', PGN_MAX_BODY);
	free(run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 3, &o));
	pgn_hook_out_release(&o);
	CHECK_INT(queued_from("alice"), 0);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT turn_mail FROM session"), 1);
	sqlite3_close(raw);
	/* The next prompt finds nothing queued, and records its turn. */
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 4, &o);
	CHECK_STR(ctx, "");
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT turn_mail FROM session"), 0);
	CHECK_INT(H_INT(raw,
	              "SELECT last_turn = 'UserPromptSubmit:p4' "
	              "FROM session"),
	    1);
	sqlite3_close(raw);
	queue_sized(root, "alice", 'c', 1);
	ctx = run_event(PGN_EVENT_AFTER_TOOL, "s1", root, NULL, 5, &o);
	CHECK(shows(ctx, 3));
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(queued_from("alice"), 0);
	/* A prompt after a turn without mail still only reads. */
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 6, &o);
	pgn_hook_out_release(&o);
	free(ctx);
	ctx = run_event(PGN_EVENT_PROMPT, "s1", root, NULL, 7, &o);
	CHECK_STR(ctx, "");
	free(ctx);
	pgn_hook_out_release(&o);
	raw = h_raw();
	CHECK_INT(H_INT(raw,
	              "SELECT last_turn = 'UserPromptSubmit:p6' "
	              "FROM session"),
	    1);
	sqlite3_close(raw);
}

/* ---- pgn_turn_claim ------------------------------------------------ */

static pgn_db *db;
static sqlite3 *raw;

static void
open_store(void)
{
	REQUIRE(sodium_init() >= 0);
	db = h_open();
	raw = h_raw();
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
}

static void
close_store(void)
{
	sqlite3_close(raw);
	raw = NULL;
	pgn_db_close(db);
	db = NULL;
}

static pgn_status
turn(const char *session, const char *agent, const char *key, int64_t window,
    size_t budget, struct pgn_turn_out *out)
{
	struct pgn_turn t;

	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = session;
	t.agent = agent;
	t.turn = key;
	t.turn_window_ms = window;
	t.route = "prompt";
	t.budget = budget;
	t.cost = pgn_render_cost;
	return pgn_turn_claim(db, &t, out);
}

static int64_t
send_to(const char *to, const char *body)
{
	struct pgn_sent sent[1];
	struct pgn_send req;
	size_t nsent = 0;

	memset(&req, 0, sizeof(req));
	req.from = "zed";
	req.to = &to;
	req.nto = 1;
	req.body = body;
	req.body_len = strlen(body);
	REQUIRE(pgn_send(db, &req, sent, 1, &nsent) == PGN_OK);
	REQUIRE(nsent == 1);
	return sent[0].id;
}

#define QUEUED                                                                 \
	H_INT(raw,                                                             \
	    "SELECT count(*) FROM message WHERE "                              \
	    "delivered_ms IS NULL")

static int
generated_name(const char *s)
{
	size_t a = strspn(s, "abcdefghijklmnopqrstuvwxyz");

	return a > 0 && s[a] == '-' && s[a + 1] != '\0' &&
	    strspn(s + a + 1, "abcdefghijklmnopqrstuvwxyz") ==
	    strlen(s + a + 1);
}

static void
test_turn_binds_wanted_or_generated_agent(void)
{
	struct pgn_turn_out out;

	open_store();
	CHECK_INT(turn("claude:s1", "Alice", "UserPromptSubmit:p1", 0, 0, &out),
	    PGN_OK);
	CHECK_STR(out.agent, "alice");
	CHECK_INT(out.bound, 1);
	CHECK_INT(out.duplicate, 0);
	CHECK_INT(out.msgs.n, 0);
	pgn_msgs_release(&out.msgs);

	/* The same session keeps its agent, whatever is asked. */
	CHECK_INT(turn("claude:s1", "bob", "UserPromptSubmit:p2", 0, 0, &out),
	    PGN_OK);
	CHECK_STR(out.agent, "alice");
	CHECK_INT(out.bound, 0);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(turn("claude:s1", NULL, "UserPromptSubmit:p3", 0, 0, &out),
	    PGN_OK);
	CHECK_STR(out.agent, "alice");
	pgn_msgs_release(&out.msgs);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM agent WHERE name = 'bob'"),
	    0);

	/* No name wanted: a generated adjective-noun. */
	CHECK_INT(turn("claude:s2", NULL, NULL, 0, 0, &out), PGN_OK);
	CHECK_INT(out.bound, 1);
	if (!CHECK(generated_name(out.agent)))
		printf("  generated: %s\n", out.agent);
	CHECK(strcmp(out.agent, "alice") != 0);
	pgn_msgs_release(&out.msgs);

	/* A second session may bind to an existing agent. */
	CHECK_INT(turn("claude:s3", "alice", NULL, 0, 0, &out), PGN_OK);
	CHECK_STR(out.agent, "alice");
	CHECK_INT(out.bound, 1);
	pgn_msgs_release(&out.msgs);

	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal j JOIN agent a ON "
	              "a.id = j.agent_id WHERE a.name = 'alice' AND j.kind = "
	              "'bound'"),
	    2);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE kind = "
	              "'bound' AND detail = 'claude:s1'"),
	    1);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM session"), 3);

	/* A bad wanted name is refused before anything is written. */
	CHECK_INT(turn("claude:s4", "Bad Name", NULL, 0, 0, &out), PGN_EINVAL);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM session"), 3);
	close_store();
}

static void
test_turn_repeated_key_is_a_duplicate(void)
{
	struct pgn_turn_out out;
	int64_t id;

	open_store();
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p1", 0, 0, &out),
	    PGN_OK);
	pgn_msgs_release(&out.msgs);
	id = send_to("alice", "after the first hook");

	/* The same turn again: nothing claimed, the message stays. */
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p1", 0, 0, &out),
	    PGN_OK);
	CHECK_INT(out.duplicate, 1);
	CHECK_INT(out.msgs.n, 0);
	CHECK_STR(out.agent, "alice");
	pgn_msgs_release(&out.msgs);
	CHECK_INT(QUEUED, 1);

	/* The next turn claims it. */
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p2", 0, 0, &out),
	    PGN_OK);
	CHECK_INT(out.duplicate, 0);
	REQUIRE(out.msgs.n == 1);
	CHECK_INT(out.msgs.v[0].id, id);
	CHECK_STR(out.msgs.v[0].body, "after the first hook");
	pgn_msgs_release(&out.msgs);
	CHECK_INT(QUEUED, 0);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery WHERE session = "
	              "'claude:s1' AND host = 'claude' AND route = 'prompt'"),
	    1);

	/* Another session of the same agent may use the same key. */
	send_to("alice", "two");
	CHECK_INT(turn("claude:s9", "alice", "UserPromptSubmit:p2", 0, 0, &out),
	    PGN_OK);
	CHECK_INT(out.duplicate, 0);
	CHECK_INT(out.msgs.n, 1);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE kind = "
	              "'bound' AND detail = 'claude:s1'"),
	    1);
	close_store();
}

static void
test_turn_hashed_key_expires_after_its_window(void)
{
	static const char key[] = "BeforeAgent:h0123456789abcdef01234567";
	struct pgn_turn_out out;

	open_store();
	CHECK_INT(turn("gemini:g1", "gina", key, 1, 0, &out), PGN_OK);
	CHECK_INT(out.duplicate, 0);
	pgn_msgs_release(&out.msgs);
	sleep_ms(20);
	send_to("gina", "later");
	CHECK_INT(turn("gemini:g1", "gina", key, 1, 0, &out), PGN_OK);
	CHECK_INT(out.duplicate, 0);
	CHECK_INT(out.msgs.n, 1);
	pgn_msgs_release(&out.msgs);

	/* Within a wide window, the same key is a duplicate. */
	send_to("gina", "again");
	CHECK_INT(turn("gemini:g1", "gina", key, PGN_HOOK_DUP_WINDOW_MS, 0,
	              &out),
	    PGN_OK);
	CHECK_INT(out.duplicate, 1);
	CHECK_INT(out.msgs.n, 0);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(QUEUED, 1);
	close_store();
}

/*
 * The claim binds with the first look's statement, run again in its
 * own transaction (decision 0246): what changed between the look and
 * the claim is what the claim sees, and the queue's name is the
 * agent's in that transaction.
 */
static void
test_a_claim_reads_the_session_again_after_its_first_look(void)
{
	struct pgn_turn_out out;
	struct pgn_peek p;

	open_store();
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p0", 0, 0, &out),
	    PGN_OK);
	pgn_msgs_release(&out.msgs);
	send_to("alice", "renamed in between");
	CHECK_INT(pgn_turn_peek(db, "claude:s1", &p), PGN_OK);
	CHECK_STR(p.agent, "alice");
	CHECK_INT(p.continues, 0);
	H_EXEC(raw, "UPDATE agent SET name = 'alina' WHERE name = 'alice'");
	H_EXEC(raw, "UPDATE session SET auto_continues = 2");
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p1", 0, 0, &out),
	    PGN_OK);
	CHECK_STR(out.agent, "alina");
	CHECK_INT(out.continues, 2);
	CHECK_INT(out.bound, 0);
	REQUIRE(out.msgs.n == 1);
	CHECK_STR(out.msgs.v[0].recipient, "alina");
	CHECK_INT(out.msgs.v[0].thread, out.msgs.v[0].id);
	CHECK_INT(out.msgs.left, 0);
	pgn_msgs_release(&out.msgs);
	/* A prompt from a person ended the continuations. */
	CHECK_INT(H_INT(raw, "SELECT auto_continues FROM session"), 0);
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM delivery WHERE recipient = 'alina'"),
	    1);

	/* Removed in between: the claim binds the session afresh. */
	send_to("alina", "after the removal");
	CHECK_INT(pgn_turn_peek(db, "claude:s1", &p), PGN_OK);
	CHECK_INT(p.bound, 1);
	H_EXEC(raw, "UPDATE agent SET removed_ms = 1 WHERE name = 'alina'");
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p2", 0, 0, &out),
	    PGN_OK);
	CHECK_INT(out.bound, 1);
	CHECK_STR(out.agent, "alice");
	CHECK_INT(out.msgs.n, 0);
	pgn_msgs_release(&out.msgs);
	close_store();
}

static void
test_turn_claim_respects_the_budget(void)
{
	struct pgn_turn_out out;
	char body[1001];
	int64_t ids[5];
	size_t cost, i;
	struct pgn_msg probe;

	open_store();
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p0", 0, 0, &out),
	    PGN_OK);
	pgn_msgs_release(&out.msgs);
	memset(body, 'x', 1000);
	body[1000] = '\0';
	for (i = 0; i < 5; i++) {
		body[0] = (char)('a' + i);
		ids[i] = send_to("alice", body);
	}
	memset(&probe, 0, sizeof(probe));
	probe.body = body;
	probe.body_len = 1000;
	cost = pgn_render_cost(&probe, NULL);

	/* Room for three: the oldest three, two left. */
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p1", 0, 3 * cost,
	              &out),
	    PGN_OK);
	REQUIRE(out.msgs.n == 3);
	for (i = 0; i < 3; i++)
		CHECK_INT(out.msgs.v[i].id, ids[i]);
	CHECK_INT(out.msgs.left, 2);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(QUEUED, 2);

	/* A budget below one message still takes the oldest. */
	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p2", 0, 10,
	              &out),
	    PGN_OK);
	REQUIRE(out.msgs.n == 1);
	CHECK_INT(out.msgs.v[0].id, ids[3]);
	CHECK_INT(out.msgs.left, 1);
	pgn_msgs_release(&out.msgs);

	CHECK_INT(turn("claude:s1", "alice", "UserPromptSubmit:p3", 0, 3 * cost,
	              &out),
	    PGN_OK);
	REQUIRE(out.msgs.n == 1);
	CHECK_INT(out.msgs.v[0].id, ids[4]);
	CHECK_INT(out.msgs.left, 0);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(QUEUED, 0);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE kind = "
	              "'bound'"),
	    1);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE kind = "
	              "'delivered'"),
	    5);
	close_store();
}

static const struct h_test tests[] = {
    H_TEST(test_every_claimed_message_is_printed_at_the_worst_lengths),
    H_TEST(test_introduction_fits_for_every_path_and_name_length),
    H_TEST(test_the_cli_path_is_shown_as_one_shell_word),
    H_TEST(test_a_session_id_that_is_not_utf8_is_bad_input),
    H_TEST(test_a_failed_render_rolls_the_claim_back),
    H_TEST(test_the_claim_marks_only_what_render_kept),
    H_TEST(test_a_session_is_bound_once_across_scopes),
    H_TEST(test_a_bad_agent_name_does_not_stop_a_bound_session),
    H_TEST(test_the_introduction_lists_active_peers_first),
    H_TEST(test_after_a_tool_call_mail_comes_once_without_reminder_or_intro),
    H_TEST(test_after_a_tool_call_without_mail_nothing_is_written),
    H_TEST(test_a_stop_with_mail_makes_the_agent_go_on_with_it),
    H_TEST(test_two_agents_pinging_each_other_stop_after_the_cap),
    H_TEST(test_max_auto_continues_zero_never_goes_on),
    H_TEST(test_a_stop_waits_for_mail_within_stop_wait_ms),
    H_TEST(
        test_an_unchanged_database_answers_the_next_tool_call_from_the_stamp),
    H_TEST(test_mail_sent_after_a_stamp_is_delivered_by_the_next_tool_call),
    H_TEST(test_a_send_racing_the_read_is_never_stamped_away),
    H_TEST(test_a_restarted_wal_of_the_same_size_is_seen),
    H_TEST(test_a_second_commit_into_a_restarted_wal_is_seen_within_a_tick),
    H_TEST(test_a_wal_index_in_doubt_gives_no_snapshot),
    H_TEST(test_a_racing_sender_is_never_stamped_away),
    H_TEST(test_an_unchanged_database_answers_the_next_prompt_from_the_stamp),
    H_TEST(
        test_mail_of_any_priority_sent_after_a_stamp_reaches_the_next_prompt),
    H_TEST(test_a_tool_calls_stamp_never_hides_low_mail_from_a_prompt),
    H_TEST(test_a_prompts_stamp_ends_when_a_reminder_falls_due),
    H_TEST(test_a_read_that_saw_a_reminder_due_stamps_no_prompt),
    H_TEST(test_a_prompt_from_another_scope_reads),
    H_TEST(test_a_stamp_never_outlives_the_last_seen_refresh),
    H_TEST(test_a_foreign_torn_or_loose_stamp_is_never_believed),
    H_TEST(test_no_stamp_without_a_wal_or_for_a_replaced_database),
    H_TEST(test_urgent_mail_is_rendered_first_and_marked),
    H_TEST(test_low_mail_waits_past_tool_calls_and_stops_for_a_prompt),
    H_TEST(test_urgent_mail_reaches_the_next_tool_call_past_a_stamp),
    H_TEST(test_one_senders_text_in_a_turn_stops_at_its_bound),
    H_TEST(test_a_prompt_without_mail_begins_a_new_share),
    H_TEST(test_turn_binds_wanted_or_generated_agent),
    H_TEST(test_turn_repeated_key_is_a_duplicate),
    H_TEST(test_turn_hashed_key_expires_after_its_window),
    H_TEST(test_a_claim_reads_the_session_again_after_its_first_look),
    H_TEST(test_turn_claim_respects_the_budget),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
