/*
 * Handoff: the transcript path each session keeps from its payloads,
 * and the baton one session leaves for the next new conversation —
 * merged, expired, taken exactly once inside the claim's transaction.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "hook_int.h"
#include "handoff_int.h"
#include "pgn_int.h"
#include "pigeon/handoff.h"
#include "pigeon/hook.h"
#include "pigeon/transcript.h"
#include "pigeon/hosts.h"
#include "claim.h"

static char dbpath[PATH_MAX], home[PATH_MAX], root[PATH_MAX];

static void
setup(void)
{
	char git[PATH_MAX + 8];

	H_PATH(dbpath, "pigeon.db");
	H_PATH(home, "home");
	H_PATH(root, "proj");
	REQUIRE(mkdir(home, 0700) == 0);
	REQUIRE(mkdir(root, 0700) == 0);
	snprintf(git, sizeof(git), "%s/.git", root);
	REQUIRE(mkdir(git, 0700) == 0);
	REQUIRE(sodium_init() >= 0);
}

/* One hook run of host 'h', event 'e' with payload 'json'. */
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
	in.db_create = 1;
	in.pigeon = "pigeon";
	in.deadline = pgn_mono_ms() + 10000;
	pgn_hook_turn(&in, o);
}

/* A Claude payload of event 'e' for session 'sid' in the project. */
static void
claude(struct pgn_hook_out *o, pgn_event e, const char *sid, const char *extra,
    const char *agent)
{
	char json[PATH_MAX + 1024];

	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"%s\",\"session_id\":\"%s\",\"cwd\":\"%s\"%s%s}",
	    pgn_host_get(PGN_HOST_CLAUDE)->events[e], sid, root,
	    extra != NULL ? "," : "", extra != NULL ? extra : "");
	run(o, PGN_HOST_CLAUDE, e, json, agent);
}

/* The transcript path stored for session 'key', or "" (freed by caller). */
static char *
stored_transcript(const char *key)
{
	sqlite3 *raw = h_raw();
	sqlite3_stmt *st = NULL;
	char *s = NULL;

	REQUIRE(sqlite3_prepare_v2(raw,
	            "SELECT coalesce(transcript_path, '') FROM session "
	            "WHERE key = ?1",
	            -1, &st, NULL) == SQLITE_OK);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		s = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(raw);
	REQUIRE(s != NULL);
	return s;
}

/* The additionalContext of a Claude envelope, "" for none (caller frees). */
static char *
context_of(const struct pgn_hook_out *o)
{
	cJSON *r, *inner, *ctx;
	char *s = NULL;

	if (o->line == NULL)
		return strdup("");
	r = cJSON_ParseWithLength(o->line, o->len);
	REQUIRE(r != NULL);
	inner = cJSON_GetObjectItemCaseSensitive(r, "hookSpecificOutput");
	ctx = cJSON_GetObjectItemCaseSensitive(inner, "additionalContext");
	if (CHECK(cJSON_IsString(ctx)))
		s = strdup(ctx->valuestring);
	cJSON_Delete(r);
	REQUIRE(s != NULL);
	return s;
}

/* Queue 'body' for agent 'to' of the project, from "zed". */
static void
send_to(const char *to, const char *body)
{
	pgn_db *db = h_open();
	struct pgn_sent sent[1];
	struct pgn_send rq;
	const char *names[1];
	size_t n;

	names[0] = to;
	memset(&rq, 0, sizeof(rq));
	rq.from = "zed";
	rq.to = names;
	rq.nto = 1;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.create = 1;
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	REQUIRE(pgn_send(db, &rq, sent, 1, &n) == PGN_OK);
	pgn_db_close(db);
}

/* A prompt of session 's1' with mail waiting, so the turn claims. */
static void
prompt_with_mail(int n, const char *extra)
{
	struct pgn_hook_out o;
	char json[512];

	send_to("alice", "mail");
	snprintf(json, sizeof(json),
	    "\"prompt_id\":\"p%d\",\"prompt\":\"go\"%s%s", n,
	    extra != NULL ? "," : "", extra != NULL ? extra : "");
	claude(&o, PGN_EVENT_PROMPT, "s1", json, NULL);
	CHECK_INT(o.st, PGN_OK);
	CHECK_INT(o.claimed, 1);
	pgn_hook_out_release(&o);
}

static void
test_a_session_keeps_the_transcript_path_of_its_payloads(void)
{
	struct pgn_hook_out o;
	char *t;

	setup();
	claude(&o, PGN_EVENT_SESSION_START, "s1",
	    "\"source\":\"startup\",\"transcript_path\":\"/t/s1.jsonl\"",
	    "alice");
	CHECK_INT(o.st, PGN_OK);
	pgn_hook_out_release(&o);
	t = stored_transcript("claude:s1");
	CHECK_STR(t, "/t/s1.jsonl");
	free(t);
	/* A later payload naming another file moves it. */
	prompt_with_mail(1, "\"transcript_path\":\"/t/s1b.jsonl\"");
	t = stored_transcript("claude:s1");
	CHECK_STR(t, "/t/s1b.jsonl");
	free(t);
	/* One without a path, or with one that is no path, keeps it. */
	prompt_with_mail(2, "\"transcript_path\":\"rel/x.jsonl\"");
	prompt_with_mail(3, "\"transcript_path\":\"/t/a\\u0007b\"");
	prompt_with_mail(4, "\"transcript_path\":null");
	prompt_with_mail(5, NULL);
	t = stored_transcript("claude:s1");
	CHECK_STR(t, "/t/s1b.jsonl");
	free(t);
}

static void
test_cursor_without_a_transcript_path_gets_the_derived_one(void)
{
	struct pgn_hook_out o;
	char json[PATH_MAX + 512], want[PATH_MAX * 3], slug[PATH_MAX];
	char *t;
	size_t i, k = 0;

	setup();
	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"sessionStart\",\"conversation_id\":\"bc-9f2e\","
	    "\"session_id\":\"bc-9f2e\",\"is_background_agent\":false,"
	    "\"cursor_version\":\"3.12.17\",\"workspace_roots\":[\"%s\"],"
	    "\"transcript_path\":null}",
	    root);
	run(&o, PGN_HOST_NONE, PGN_EVENT_NONE, json, "carol");
	CHECK_INT(o.st, PGN_OK);
	CHECK_STR(o.session, "cursor:9f2e");
	pgn_hook_out_release(&o);
	for (i = 1; root[i] != '\0'; i++)
		slug[k++] = (root[i] >= 'a' && root[i] <= 'z') ||
		        (root[i] >= 'A' && root[i] <= 'Z') ||
		        (root[i] >= '0' && root[i] <= '9') ?
		    root[i] :
		    '-';
	slug[k] = '\0';
	snprintf(want, sizeof(want),
	    "%s/.cursor/projects/%s/agent-transcripts/9f2e/9f2e.jsonl", home,
	    slug);
	t = stored_transcript("cursor:9f2e");
	CHECK_STR(t, want);
	CHECK(strstr(t, "bc-") == NULL);
	free(t);
}

static void
test_cursor_prefers_the_payloads_transcript_path(void)
{
	struct pgn_hook_out o;
	char json[PATH_MAX + 512];
	char *t;

	setup();
	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"sessionStart\",\"conversation_id\":\"c7\","
	    "\"cursor_version\":\"3.12.17\",\"workspace_roots\":[\"%s\"],"
	    "\"transcript_path\":\"/x/c7.jsonl\"}",
	    root);
	run(&o, PGN_HOST_NONE, PGN_EVENT_NONE, json, "carol");
	pgn_hook_out_release(&o);
	t = stored_transcript("cursor:c7");
	CHECK_STR(t, "/x/c7.jsonl");
	free(t);
}

static void
test_a_cursor_id_that_is_no_file_name_derives_nothing(void)
{
	struct pgn_payload p;
	char why[128];
	const char *json =
	    "{\"hook_event_name\":\"sessionStart\",\"conversation_id\":\"../x\","
	    "\"cursor_version\":\"1\",\"workspace_roots\":[\"/w\"]}";

	REQUIRE(pgn_payload_parse(json, strlen(json), PGN_HOST_NONE,
	            PGN_EVENT_NONE, &p, why, sizeof(why)) == PGN_OK);
	CHECK_INT(pgn_payload_cursor_transcript(&p, "/home/u"), PGN_OK);
	CHECK(p.transcript == NULL);
	pgn_payload_release(&p);
}

static void
test_a_quiet_after_tool_run_records_no_transcript(void)
{
	struct pgn_hook_out o;
	char *t;

	setup();
	claude(&o, PGN_EVENT_SESSION_START, "s1",
	    "\"source\":\"startup\",\"transcript_path\":\"/t/one.jsonl\"",
	    "alice");
	pgn_hook_out_release(&o);
	/* The no-mail fast path writes nothing, not even a new path. */
	claude(&o, PGN_EVENT_AFTER_TOOL, "s1",
	    "\"tool_name\":\"Bash\",\"transcript_path\":\"/t/two.jsonl\"",
	    NULL);
	CHECK_INT(o.st, PGN_OK);
	CHECK(o.line == NULL);
	pgn_hook_out_release(&o);
	t = stored_transcript("claude:s1");
	CHECK_STR(t, "/t/one.jsonl");
	free(t);
}

static void
test_new_conversation_is_startup_or_clear_never_resume_or_compact(void)
{
	static const struct {
		pgn_host h;
		const char *json;
		int fresh;
	} cases[] = {
	    {PGN_HOST_CLAUDE,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"startup\"}",
	        1},
	    {PGN_HOST_CLAUDE,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"clear\"}",
	        1},
	    {PGN_HOST_CLAUDE,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"resume\"}",
	        0},
	    {PGN_HOST_CLAUDE,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"compact\"}",
	        0},
	    {PGN_HOST_CLAUDE,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\"}",
	        0},
	    {PGN_HOST_CLAUDE,
	        "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"a\",\"source\":\"startup\"}",
	        0},
	    {PGN_HOST_CODEX,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"startup\"}",
	        1},
	    {PGN_HOST_CODEX,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"resume\"}",
	        0},
	    {PGN_HOST_CODEX,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"clear\"}",
	        0},
	    {PGN_HOST_CODEX,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"startup\",\"agent_id\":\"sub\"}",
	        0},
	    {PGN_HOST_GEMINI,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"startup\"}",
	        1},
	    {PGN_HOST_GEMINI,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"clear\"}",
	        1},
	    {PGN_HOST_GEMINI,
	        "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\",\"source\":\"resume\"}",
	        0},
	    {PGN_HOST_CURSOR,
	        "{\"hook_event_name\":\"sessionStart\",\"conversation_id\":\"a\",\"is_background_agent\":false}",
	        1},
	    {PGN_HOST_CURSOR,
	        "{\"hook_event_name\":\"sessionStart\",\"conversation_id\":\"a\"}",
	        1},
	    {PGN_HOST_CURSOR,
	        "{\"hook_event_name\":\"sessionStart\",\"conversation_id\":\"bc-a\",\"is_background_agent\":true}",
	        0},
	    {PGN_HOST_CURSOR,
	        "{\"hook_event_name\":\"beforeSubmitPrompt\",\"conversation_id\":\"a\"}",
	        0},
	};
	struct pgn_payload p;
	char why[128];
	size_t i;

	for (i = 0; i < H_COUNT(cases); i++) {
		REQUIRE(pgn_payload_parse(cases[i].json, strlen(cases[i].json),
		            cases[i].h, PGN_EVENT_NONE, &p, why,
		            sizeof(why)) == PGN_OK);
		if (!CHECK_INT(p.new_conversation, cases[i].fresh))
			fprintf(stderr, "  case %zu: %s\n", i, cases[i].json);
		pgn_payload_release(&p);
	}
}

/* ---- batons -------------------------------------------------------- */

/* Leave 'text' from session 'session' (or agent 'agent') for 'to'. */
static pgn_status
leave(const char *session, const char *agent, const char *to, const char *text,
    struct pgn_baton *b, int *merged)
{
	struct pgn_handoff rq;
	pgn_db *db = h_open();
	struct pgn_baton local;
	int m_local;
	pgn_status st;

	memset(&rq, 0, sizeof(rq));
	rq.session = session;
	rq.agent = agent;
	rq.to = to;
	rq.text = text;
	rq.len = strlen(text);
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	st = pgn_handoff_leave(db, &rq, b != NULL ? b : &local,
	    merged != NULL ? merged : &m_local);
	if (st != PGN_OK)
		printf("  leave: %s\n", pgn_errmsg(db));
	if (b == NULL)
		pgn_baton_release(&local);
	pgn_db_close(db);
	return st;
}

/* A new Claude conversation 'sid' (bound to 'agent'); its context. */
static char *
startup(const char *sid, const char *source, const char *agent,
    struct pgn_hook_out *o)
{
	char extra[64];

	snprintf(extra, sizeof(extra), "\"source\":\"%s\"", source);
	claude(o, PGN_EVENT_SESSION_START, sid, extra, agent);
	REQUIRE(o->st == PGN_OK);
	return context_of(o);
}

static long long
q(const char *sql)
{
	sqlite3 *raw = h_raw();
	long long v = H_INT(raw, sql);

	sqlite3_close(raw);
	return v;
}

static void
exec_raw(const char *sql)
{
	sqlite3 *raw = h_raw();

	H_EXEC(raw, sql);
	sqlite3_close(raw);
}

static void
test_a_baton_is_taken_by_the_next_new_conversation_once(void)
{
	struct pgn_hook_out o;
	struct pgn_baton b;
	char *ctx;
	pgn_db *db;
	int64_t checked, bad;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(leave("claude:s1", NULL, NULL, "tests pass; next: the docs", &b,
	            NULL) == PGN_OK);
	CHECK_STR(b.sender, "alice");
	CHECK_STR(b.target, "");
	CHECK_STR(b.session, "claude:s1");
	CHECK_INT(b.expires_ms - b.updated_ms, PGN_HANDOFF_TTL_MS);
	pgn_baton_release(&b);
	ctx = startup("s2", "startup", NULL, &o);
	CHECK_CONTAINS(ctx,
	    "Pigeon: a handoff baton for this new conversation");
	CHECK_CONTAINS(ctx, "[baton #1 from alice, ");
	CHECK_CONTAINS(ctx, "\n  tests pass; next: the docs\n");
	CHECK_INT(o.claimed, 1);
	free(ctx);
	pgn_hook_out_release(&o);
	/* Taken: by that session, with a delivered copy in the audit. */
	CHECK_INT(
	    q("SELECT count(*) FROM baton WHERE consumed_ms IS NOT NULL "
	      "AND consumed_session = 'claude:s2' AND message_id IS NOT NULL"),
	    1);
	CHECK_INT(q("SELECT count(*) FROM delivery d JOIN baton b ON "
	            "b.message_id = d.message_id WHERE d.route = 'handoff' AND "
	            "d.sender = 'alice' AND d.session = 'claude:s2' AND "
	            "d.body = 'tests pass; next: the docs'"),
	    1);
	CHECK_INT(q("SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    0);
	/* Both journals: the sender's (left, taken), the recipient's. */
	CHECK_INT(q("SELECT count(*) FROM journal j JOIN agent a ON a.id = "
	            "j.agent_id WHERE a.name = 'alice' AND j.kind = 'handoff'"),
	    2);
	CHECK_INT(q("SELECT count(*) FROM journal j JOIN agent a ON a.id = "
	            "j.agent_id JOIN session s ON s.agent_id = a.id WHERE "
	            "s.key = 'claude:s2' AND j.kind = 'handoff' AND "
	            "j.peer = 'alice' AND j.message_id IS NOT NULL"),
	    1);
	/* The next new conversation finds none. */
	ctx = startup("s3", "startup", NULL, &o);
	CHECK(strstr(ctx, "handoff baton") == NULL);
	CHECK_INT(o.claimed, 0);
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM delivery WHERE route = 'handoff'"),
	    1);
	db = h_open();
	CHECK_INT(pgn_audit_verify(db, &checked, &bad), PGN_OK);
	CHECK_INT(checked, 1);
	pgn_db_close(db);
}

static void
test_a_resume_or_compaction_never_takes_a_baton(void)
{
	struct pgn_hook_out o;
	char *ctx, json[PATH_MAX + 256];

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(
	    leave("claude:s1", NULL, NULL, "carry on", NULL, NULL) == PGN_OK);
	free(startup("s1", "resume", NULL, &o));
	pgn_hook_out_release(&o);
	free(startup("s4", "resume", NULL, &o));
	pgn_hook_out_release(&o);
	free(startup("s1", "compact", NULL, &o));
	pgn_hook_out_release(&o);
	/* Codex's clear is not a new conversation in product.md §9. */
	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"x1\","
	    "\"cwd\":\"%s\",\"model\":\"m\",\"permission_mode\":\"default\","
	    "\"source\":\"clear\"}",
	    root);
	run(&o, PGN_HOST_CODEX, PGN_EVENT_SESSION_START, json, NULL);
	pgn_hook_out_release(&o);
	/* Nor a prompt of a bound session. */
	send_to("alice", "mail");
	claude(&o, PGN_EVENT_PROMPT, "s1", "\"prompt_id\":\"p1\"", NULL);
	CHECK_INT(o.claimed, 1);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_ms IS NULL"), 1);
	CHECK_INT(q("SELECT count(*) FROM delivery WHERE route = 'handoff'"),
	    0);
	/* A clear starts a new conversation: it takes it. */
	ctx = startup("s5", "clear", NULL, &o);
	CHECK_CONTAINS(ctx, "carry on");
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(
	    q("SELECT count(*) FROM baton WHERE consumed_session = 'claude:s5'"),
	    1);
}

/*
 * Age session 'key''s last turn past the duplicate window (decision
 * 0063), as if the replay came later: the window compares the stored
 * time with the clock.
 */
static void
past_the_window(const char *key)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
	    "UPDATE session SET last_turn_ms = last_turn_ms - %d "
	    "WHERE key = '%s'",
	    PGN_HOOK_DUP_WINDOW_MS + 1, key);
	exec_raw(sql);
}

static void
test_a_replayed_startup_of_a_session_seen_before_takes_no_baton(void)
{
	struct pgn_hook_out o;
	char *ctx;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(leave("claude:s1", NULL, NULL, "first", NULL, NULL) == PGN_OK);
	ctx = startup("n1", "startup", NULL, &o);
	CHECK_CONTAINS(ctx, "first");
	free(ctx);
	pgn_hook_out_release(&o);
	/* A second baton; n1's startup again, after the window: not new. */
	exec_raw("UPDATE baton SET updated_ms = updated_ms - 7200000");
	REQUIRE(leave("claude:s1", NULL, NULL, "second", NULL, NULL) == PGN_OK);
	past_the_window("claude:n1");
	ctx = startup("n1", "startup", NULL, &o);
	CHECK_CONTAINS(ctx, "Pigeon: you are agent "); /* no duplicate */
	CHECK(strstr(ctx, "handoff baton") == NULL);
	CHECK(strstr(ctx, "second") == NULL);
	CHECK_INT(o.claimed, 0);
	free(ctx);
	pgn_hook_out_release(&o);
	/* s1 never took one, and its replayed startup takes none either. */
	past_the_window("claude:s1");
	ctx = startup("s1", "clear", NULL, &o);
	CHECK(strstr(ctx, "handoff baton") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_ms IS NULL"), 1);
	CHECK_INT(q("SELECT count(*) FROM delivery WHERE route = 'handoff'"),
	    1);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_session = "
	            "'claude:n1'"),
	    1);
	/* A session new to the database takes it. */
	ctx = startup("n2", "startup", NULL, &o);
	CHECK_CONTAINS(ctx, "second");
	free(ctx);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_session = "
	            "'claude:n2'"),
	    1);
}

static void
cursor_start(struct pgn_hook_out *o, const char *cid, int background)
{
	char json[PATH_MAX + 512];

	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"sessionStart\",\"conversation_id\":\"%s\","
	    "\"session_id\":\"%s\",\"is_background_agent\":%s,"
	    "\"cursor_version\":\"3.12.17\",\"workspace_roots\":[\"%s\"]}",
	    cid, cid, background ? "true" : "false", root);
	run(o, PGN_HOST_NONE, PGN_EVENT_NONE, json, NULL);
	REQUIRE(o->st == PGN_OK);
}

static void
test_a_background_agent_never_takes_a_baton(void)
{
	struct pgn_hook_out o;
	cJSON *rj, *env;
	char *line;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(leave("claude:s1", NULL, NULL, "from claude", NULL, NULL) ==
	    PGN_OK);
	cursor_start(&o, "bc-bg1", 1);
	REQUIRE(o.line != NULL);
	/* The line is written with its length: no NUL after it. */
	line = strndup(o.line, o.len);
	REQUIRE(line != NULL);
	CHECK(strstr(line, "from claude") == NULL);
	free(line);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_ms IS NULL"), 1);
	cursor_start(&o, "c2", 0);
	REQUIRE(o.line != NULL);
	line = strndup(o.line, o.len);
	REQUIRE(line != NULL);
	CHECK_CONTAINS(line, "from claude");
	free(line);
	/* And Cursor's output names the session in its env. */
	rj = cJSON_ParseWithLength(o.line, o.len);
	REQUIRE(rj != NULL);
	env = cJSON_GetObjectItemCaseSensitive(rj, "env");
	CHECK_STR(cJSON_GetStringValue(
	              cJSON_GetObjectItemCaseSensitive(env, "PIGEON_SESSION")),
	    "cursor:c2");
	cJSON_Delete(rj);
	pgn_hook_out_release(&o);
	CHECK_INT(
	    q("SELECT count(*) FROM baton WHERE consumed_session = 'cursor:c2'"),
	    1);
}

static void
test_a_cursor_session_start_takes_a_baton_only_for_a_new_session(void)
{
	struct pgn_hook_out o;
	char *line;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	/* c1 starts with nothing waiting, then a baton is left. */
	cursor_start(&o, "c1", 0);
	pgn_hook_out_release(&o);
	REQUIRE(leave("claude:s1", NULL, NULL, "for a new one", NULL, NULL) ==
	    PGN_OK);
	/* Cursor's sessionStart names no source: c1's again is no new one. */
	past_the_window("cursor:c1");
	cursor_start(&o, "c1", 0);
	REQUIRE(o.line != NULL);
	line = strndup(o.line, o.len);
	REQUIRE(line != NULL);
	CHECK_CONTAINS(line, "you are agent");
	CHECK(strstr(line, "for a new one") == NULL);
	free(line);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_ms IS NULL"), 1);
	cursor_start(&o, "c2", 0);
	REQUIRE(o.line != NULL);
	line = strndup(o.line, o.len);
	REQUIRE(line != NULL);
	CHECK_CONTAINS(line, "for a new one");
	free(line);
	pgn_hook_out_release(&o);
	CHECK_INT(
	    q("SELECT count(*) FROM baton WHERE consumed_session = 'cursor:c2'"),
	    1);
}

/* A render that fails once a baton is in the output: a rollback. */
static pgn_status
failing_render(const struct pgn_turn_out *out, size_t *keep, void *arg)
{
	(void)keep;
	(void)arg;
	return out->baton.id != 0 ? PGN_EIO : PGN_OK;
}

static void
test_a_render_failure_keeps_the_baton(void)
{
	struct pgn_turn req;
	struct pgn_turn_out out;
	struct pgn_hook_out o;
	pgn_db *db;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(
	    leave("claude:s1", NULL, NULL, "keep me", NULL, NULL) == PGN_OK);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.host = "claude";
	req.session = "claude:s9";
	req.route = "session-start";
	req.take_baton = 1;
	req.render = failing_render;
	CHECK_INT(pgn_turn_claim(db, &req, &out), PGN_EIO);
	CHECK_INT(out.baton.id, 0);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_ms IS NULL"), 1);
	CHECK_INT(q("SELECT count(*) FROM message"), 0);
	CHECK_INT(q("SELECT count(*) FROM delivery"), 0);
	CHECK_INT(q("SELECT count(*) FROM session WHERE key = 'claude:s9'"), 0);
	/* The same turn with a render that works takes it. */
	req.render = NULL;
	REQUIRE(pgn_turn_claim(db, &req, &out) == PGN_OK);
	CHECK_INT(out.baton.id, 1);
	CHECK(out.baton.message_id != 0);
	CHECK_STR(out.baton.body, "keep me");
	pgn_baton_release(&out.baton);
	pgn_msgs_release(&out.msgs);
	pgn_db_close(db);
	CHECK_INT(q("SELECT count(*) FROM delivery WHERE route = 'handoff'"),
	    1);
}

struct second {
	pgn_status st; /* the second claimer's, inside the first's tx */
	int64_t baton;
};

/* Inside the first claimer's transaction: a second one, elsewhere. */
static pgn_status
second_claimer(const struct pgn_turn_out *out, size_t *keep, void *arg)
{
	struct second *s = arg;
	struct pgn_turn req;
	struct pgn_turn_out o2;
	pgn_db *db2;

	(void)keep;
	if (out->baton.id == 0 || s->st != PGN_ENOTFOUND)
		return PGN_OK;
	db2 = h_open_path(dbpath, 200);
	REQUIRE(pgn_db_set_scope(db2, root) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.host = "claude";
	req.session = "claude:b";
	req.route = "session-start";
	req.take_baton = 1;
	s->st = pgn_turn_claim(db2, &req, &o2);
	s->baton = o2.baton.id;
	pgn_baton_release(&o2.baton);
	pgn_msgs_release(&o2.msgs);
	pgn_db_close(db2);
	return PGN_OK;
}

static void
test_two_concurrent_new_conversations_take_the_baton_once(void)
{
	struct pgn_turn req;
	struct pgn_turn_out out;
	struct pgn_hook_out o;
	struct second s;
	pgn_db *db;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(
	    leave("claude:s1", NULL, NULL, "only once", NULL, NULL) == PGN_OK);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.host = "claude";
	req.session = "claude:a";
	req.route = "session-start";
	req.take_baton = 1;
	req.render = second_claimer;
	req.render_arg = &s;
	s.st = PGN_ENOTFOUND;
	s.baton = 0;
	REQUIRE(pgn_turn_claim(db, &req, &out) == PGN_OK);
	/* While the first held it, the second could not take it. */
	CHECK_INT(s.st, PGN_EBUSY);
	CHECK_INT(s.baton, 0);
	CHECK_INT(out.baton.id, 1);
	pgn_baton_release(&out.baton);
	pgn_msgs_release(&out.msgs);
	pgn_db_close(db);
	/* Once it committed, the second finds it taken. */
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	req.session = "claude:b";
	req.render = NULL;
	REQUIRE(pgn_turn_claim(db, &req, &out) == PGN_OK);
	CHECK_INT(out.baton.id, 0);
	pgn_msgs_release(&out.msgs);
	pgn_db_close(db);
	CHECK_INT(q("SELECT count(*) FROM delivery WHERE route = 'handoff'"),
	    1);
	CHECK_INT(
	    q("SELECT count(*) FROM baton WHERE consumed_session = 'claude:a'"),
	    1);
}

#define RACE_BATONS  12
#define RACE_PER_KID 9

static void
test_racing_processes_take_each_baton_exactly_once(void)
{
	struct pgn_hook_out o;
	char sid[32], text[32], sql[128];
	pid_t kids[2];
	int i, k, status;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	/* Batons that do not merge: each one's last note is hours old. */
	for (i = 0; i < RACE_BATONS; i++) {
		snprintf(text, sizeof(text), "baton %d", i);
		REQUIRE(
		    leave("claude:s1", NULL, NULL, text, NULL, NULL) == PGN_OK);
		snprintf(sql, sizeof(sql),
		    "UPDATE baton SET updated_ms = updated_ms - 7200000 WHERE id = %d",
		    i + 1);
		exec_raw(sql);
	}
	for (k = 0; k < 2; k++) {
		kids[k] = fork();
		REQUIRE(kids[k] >= 0);
		if (kids[k] == 0) {
			for (i = 0; i < RACE_PER_KID; i++) {
				snprintf(sid, sizeof(sid), "k%d-%d", k, i);
				claude(&o, PGN_EVENT_SESSION_START, sid,
				    "\"source\":\"startup\"", NULL);
				pgn_hook_out_release(&o);
			}
			_exit(0);
		}
	}
	for (k = 0; k < 2; k++) {
		REQUIRE(waitpid(kids[k], &status, 0) == kids[k]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_ms IS NOT NULL"),
	    RACE_BATONS);
	CHECK_INT(q("SELECT count(*) FROM delivery WHERE route = 'handoff'"),
	    RACE_BATONS);
	CHECK_INT(q("SELECT count(DISTINCT consumed_session) FROM baton"),
	    RACE_BATONS);
	CHECK_INT(q("SELECT count(DISTINCT message_id) FROM delivery "
	            "WHERE route = 'handoff'"),
	    RACE_BATONS);
}

static void
test_notes_within_the_hour_are_merged_and_older_ones_are_not(void)
{
	struct pgn_hook_out o;
	struct pgn_baton b;
	char sql[160], *ctx;
	int merged;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	free(startup("s2", "startup", "bob", &o));
	pgn_hook_out_release(&o);
	REQUIRE(leave("claude:s1", NULL, NULL, "one", NULL, &merged) == PGN_OK);
	CHECK_INT(merged, 0);
	/* Just inside the window (a second to spare): merged. */
	snprintf(sql, sizeof(sql),
	    "UPDATE baton SET updated_ms = updated_ms - %d + 1000",
	    PGN_HANDOFF_MERGE_MS);
	exec_raw(sql);
	REQUIRE(leave("claude:s2", NULL, NULL, "two", &b, &merged) == PGN_OK);
	CHECK_INT(merged, 1);
	CHECK_INT(b.id, 1);
	CHECK_INT(b.notes, 2);
	CHECK_STR(b.body, "one\n\n(from bob) two");
	CHECK_STR(b.senders, "alice,bob");
	pgn_baton_release(&b);
	/* At the window's edge: a baton of its own. */
	snprintf(sql, sizeof(sql),
	    "UPDATE baton SET updated_ms = updated_ms - %d",
	    PGN_HANDOFF_MERGE_MS);
	exec_raw(sql);
	REQUIRE(leave("claude:s1", NULL, NULL, "three", &b, &merged) == PGN_OK);
	CHECK_INT(merged, 0);
	CHECK_INT(b.id, 2);
	pgn_baton_release(&b);
	/* A baton for one agent is a target of its own: not merged. */
	REQUIRE(leave("claude:s1", NULL, "bob", "four", &b, &merged) == PGN_OK);
	CHECK_INT(merged, 0);
	CHECK_INT(b.id, 3);
	pgn_baton_release(&b);
	/* The merged one goes whole to the next new conversation. */
	ctx = startup("s3", "startup", NULL, &o);
	CHECK_CONTAINS(ctx, "[baton #1 from alice, ");
	CHECK_CONTAINS(ctx, ", 2 notes]\n  one\n  \n  (from bob) two\n");
	free(ctx);
	pgn_hook_out_release(&o);
	/* Both senders' journals record the taking. */
	CHECK_INT(q("SELECT count(*) FROM journal j JOIN agent a ON a.id = "
	            "j.agent_id WHERE a.name = 'bob' AND j.kind = 'handoff' "
	            "AND j.message_id IS NOT NULL"),
	    1);
}

static void
test_a_baton_expires_at_its_ttl(void)
{
	struct pgn_hook_out o;
	struct pgn_batons l;
	char *ctx;
	pgn_db *db;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(leave("claude:s1", NULL, NULL, "stale", NULL, NULL) == PGN_OK);
	/* Expiring now: not delivered, listed as expired. */
	exec_raw("UPDATE baton SET expires_ms = "
	         "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), "
	         "updated_ms = updated_ms - 7200000");
	REQUIRE(leave("claude:s1", NULL, NULL, "fresh", NULL, NULL) == PGN_OK);
	/* Five seconds before its expiry: still delivered. */
	exec_raw(
	    "UPDATE baton SET expires_ms = "
	    "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 5000 "
	    "WHERE id = 2");
	ctx = startup("s2", "startup", NULL, &o);
	CHECK_CONTAINS(ctx, "fresh");
	CHECK(strstr(ctx, "stale") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	ctx = startup("s3", "startup", NULL, &o);
	CHECK(strstr(ctx, "stale") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	REQUIRE(pgn_handoff_list(db, &l) == PGN_OK);
	REQUIRE(l.n == 2);
	CHECK_STR(pgn_baton_state(&l.v[0], pgn_now_ms()), "taken");
	CHECK_STR(pgn_baton_state(&l.v[1], pgn_now_ms()), "expired");
	CHECK_STR(l.v[1].body, "stale");
	pgn_batons_release(&l);
	pgn_db_close(db);
}

static void
test_a_baton_for_one_agent_waits_for_that_agents_new_conversation(void)
{
	struct pgn_hook_out o;
	char *ctx;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	free(startup("s2", "startup", "bob", &o));
	pgn_hook_out_release(&o);
	REQUIRE(
	    leave("claude:s1", NULL, NULL, "for anyone", NULL, NULL) == PGN_OK);
	REQUIRE(
	    leave("claude:s1", NULL, "bob", "for bob", NULL, NULL) == PGN_OK);
	/* Carol's new conversations: only the scope's baton is for her. */
	ctx = startup("s3", "startup", "carol", &o);
	CHECK_CONTAINS(ctx, "for anyone");
	CHECK(strstr(ctx, "for bob") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	ctx = startup("s4", "startup", "carol", &o);
	CHECK(strstr(ctx, "for bob") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	ctx = startup("s5", "startup", "bob", &o);
	CHECK_CONTAINS(ctx, "for bob");
	CHECK_CONTAINS(ctx, ", for you]");
	free(ctx);
	pgn_hook_out_release(&o);
}

static void
test_bad_batons_are_refused_with_the_reason(void)
{
	struct pgn_hook_out o;
	struct pgn_handoff rq;
	struct pgn_baton b;
	char big[PGN_MAX_HANDOFF + 2];
	pgn_db *db;
	int merged;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	CHECK_INT(leave("claude:s1", NULL, NULL, "", NULL, NULL), PGN_EINVAL);
	CHECK_INT(leave("claude:s1", NULL, NULL, " \n\t", NULL, NULL),
	    PGN_EINVAL);
	CHECK_INT(leave("claude:s1", NULL, NULL, "bad \xff utf-8", NULL, NULL),
	    PGN_EINVAL);
	CHECK_INT(leave("claude:s1", NULL, "Bad Name", "x", NULL, NULL),
	    PGN_EINVAL);
	CHECK_INT(leave("claude:s1", NULL, "nobody", "x", NULL, NULL),
	    PGN_ENOTFOUND);
	CHECK_INT(leave("claude:nope", NULL, NULL, "x", NULL, NULL),
	    PGN_ENOTFOUND);
	CHECK_INT(leave(NULL, NULL, NULL, "x", NULL, NULL), PGN_EINVAL);
	CHECK_INT(leave(NULL, "ghost", NULL, "x", NULL, NULL), PGN_ENOTFOUND);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&rq, 0, sizeof(rq));
	rq.session = "claude:s1";
	rq.to = "nobody";
	rq.text = "x";
	rq.len = 1;
	CHECK_INT(pgn_handoff_leave(db, &rq, &b, &merged), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "known: alice");
	rq.to = NULL;
	/* A NUL inside. */
	rq.text = "a\0b";
	rq.len = 3;
	CHECK_INT(pgn_handoff_leave(db, &rq, &b, &merged), PGN_EINVAL);
	/* One byte over the bound, and under it. */
	memset(big, 'x', sizeof(big));
	rq.text = big;
	rq.len = PGN_MAX_HANDOFF + 1;
	CHECK_INT(pgn_handoff_leave(db, &rq, &b, &merged), PGN_ETOOBIG);
	CHECK_CONTAINS(pgn_errmsg(db), "over the limit of 4096");
	rq.len = PGN_MAX_HANDOFF - 10;
	CHECK_INT(pgn_handoff_leave(db, &rq, &b, &merged), PGN_OK);
	pgn_baton_release(&b);
	/* A note that would take the merged baton over it. */
	rq.len = 9;
	CHECK_INT(pgn_handoff_leave(db, &rq, &b, &merged), PGN_ETOOBIG);
	CHECK_CONTAINS(pgn_errmsg(db), "would be over 4096");
	{
		const char *arg = NULL;

		CHECK_INT(pgn_errhint(db, &arg), PGN_HINT_BATON_FULL);
		CHECK_STR(arg, "1"); /* the baton the remedy drops */
	}
	rq.len = 8; /* with the blank line: exactly at the bound */
	CHECK_INT(pgn_handoff_leave(db, &rq, &b, &merged), PGN_OK);
	CHECK_INT(b.body_len, PGN_MAX_HANDOFF);
	pgn_baton_release(&b);
	pgn_db_close(db);
	CHECK_INT(q("SELECT count(*) FROM baton"), 1);
	CHECK_INT(q("SELECT length(body) FROM baton"), PGN_MAX_HANDOFF);
}

static void
test_the_sender_is_the_session_or_the_agents_latest_session(void)
{
	struct pgn_hook_out o;
	struct pgn_baton b;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	free(startup("s2", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	exec_raw("UPDATE session SET last_seen_ms = last_seen_ms - 60000 "
	         "WHERE key = 'claude:s1'");
	REQUIRE(leave(NULL, "alice", NULL, "by name", &b, NULL) == PGN_OK);
	CHECK_STR(b.session, "claude:s2");
	pgn_baton_release(&b);
	REQUIRE(
	    leave("claude:s1", NULL, NULL, "by session", &b, NULL) == PGN_OK);
	CHECK_STR(b.sender, "alice");
	pgn_baton_release(&b);
	/* --agent names another agent than the session's: the agent wins. */
	free(startup("s3", "startup", "bob", &o));
	pgn_hook_out_release(&o);
	REQUIRE(
	    leave("claude:s1", "bob", "alice", "from bob", &b, NULL) == PGN_OK);
	CHECK_STR(b.sender, "bob");
	CHECK_STR(b.session, "claude:s3");
	pgn_baton_release(&b);
	/* An unknown session with an agent named: the agent. */
	REQUIRE(
	    leave("claude:gone", "bob", "alice", "again", &b, NULL) == PGN_OK);
	CHECK_STR(b.sender, "bob");
	pgn_baton_release(&b);
}

static void
test_a_dry_run_writes_nothing(void)
{
	struct pgn_hook_out o;
	struct pgn_handoff rq;
	struct pgn_baton b;
	pgn_db *db;
	int merged;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&rq, 0, sizeof(rq));
	rq.session = "claude:s1";
	rq.text = "first";
	rq.len = 5;
	rq.dry_run = 1;
	REQUIRE(pgn_handoff_leave(db, &rq, &b, &merged) == PGN_OK);
	CHECK_INT(b.id, 0);
	CHECK_STR(b.body, "first");
	CHECK_INT(merged, 0);
	pgn_baton_release(&b);
	CHECK_INT(q("SELECT count(*) FROM baton"), 0);
	rq.dry_run = 0;
	REQUIRE(pgn_handoff_leave(db, &rq, &b, &merged) == PGN_OK);
	pgn_baton_release(&b);
	rq.dry_run = 1;
	rq.text = "second";
	rq.len = 6;
	REQUIRE(pgn_handoff_leave(db, &rq, &b, &merged) == PGN_OK);
	CHECK_INT(merged, 1);
	CHECK_INT(b.id, 1);
	CHECK_INT(b.notes, 2);
	CHECK_STR(b.body, "first\n\nsecond");
	pgn_baton_release(&b);
	pgn_db_close(db);
	CHECK_INT(q("SELECT notes FROM baton"), 1);
	CHECK_INT(q("SELECT length(body) FROM baton"), 5);
	CHECK_INT(q("SELECT count(*) FROM journal WHERE kind = 'handoff'"), 1);
}

static void
test_a_dropped_baton_is_kept_and_never_delivered(void)
{
	struct pgn_hook_out o;
	struct pgn_baton b;
	pgn_db *db;
	char *ctx;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	REQUIRE(
	    leave("claude:s1", NULL, NULL, "never mind", NULL, NULL) == PGN_OK);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	CHECK_INT(pgn_handoff_drop(db, 1), PGN_OK);
	CHECK_INT(pgn_handoff_drop(db, 1), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "was dropped already");
	CHECK_INT(pgn_handoff_drop(db, 7), PGN_ENOTFOUND);
	CHECK_INT(pgn_handoff_drop(db, 0), PGN_EINVAL);
	CHECK_INT(pgn_handoff_get(db, 1, &b), PGN_OK);
	CHECK_STR(pgn_baton_state(&b, pgn_now_ms()), "dropped");
	CHECK_STR(b.body, "never mind");
	pgn_baton_release(&b);
	CHECK_INT(pgn_handoff_get(db, 2, &b), PGN_ENOTFOUND);
	pgn_db_close(db);
	ctx = startup("s2", "startup", NULL, &o);
	CHECK(strstr(ctx, "never mind") == NULL);
	free(ctx);
	pgn_hook_out_release(&o);
	/* A taken baton cannot be dropped. */
	REQUIRE(
	    leave("claude:s1", NULL, NULL, "take me", NULL, NULL) == PGN_OK);
	free(startup("s3", "startup", NULL, &o));
	pgn_hook_out_release(&o);
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	CHECK_INT(pgn_handoff_drop(db, 2), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "was taken already");
	pgn_db_close(db);
}

static void
test_the_baton_fits_the_cap_beside_the_backlog(void)
{
	struct pgn_hook_out o;
	char text[PGN_MAX_HANDOFF + 1], body[PGN_MAX_BODY + 1], *ctx;
	size_t i;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	/* The worst text: a line per byte, so it cannot be shown whole. */
	for (i = 0; i < PGN_MAX_HANDOFF; i++)
		text[i] = i % 2 ? '\n' : 'x';
	text[PGN_MAX_HANDOFF] = '\0';
	REQUIRE(leave("claude:s1", NULL, NULL, text, NULL, NULL) == PGN_OK);
	memset(body, 'm', PGN_MAX_BODY);
	body[PGN_MAX_BODY] = '\0';
	send_to("newbie", body);
	send_to("newbie", "short");
	ctx = startup("s2", "startup", "newbie", &o);
	CHECK(strlen(ctx) <= PGN_MAX_CONTEXT);
	CHECK_CONTAINS(ctx, "[baton #1 from alice");
	CHECK_CONTAINS(ctx,
	    "[cut: baton #1 has 4096 bytes; read it whole with: pigeon handoff show 1]");
	/* The messages wait for the next prompt, and a line says so. */
	CHECK_CONTAINS(ctx, "2 more messages wait");
	free(ctx);
	CHECK_INT(o.claimed, 1);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    2);
	CHECK_INT(q("SELECT count(*) FROM baton WHERE consumed_ms IS NOT NULL"),
	    1);
	/* A plain baton and the backlog go together. */
	REQUIRE(leave("claude:s1", NULL, NULL, "a short note", NULL, NULL) ==
	    PGN_OK);
	send_to("other", "hello");
	ctx = startup("s3", "startup", "other", &o);
	CHECK_CONTAINS(ctx, "\n  a short note\n");
	CHECK_CONTAINS(ctx, "\n  hello\n");
	CHECK(strlen(ctx) <= PGN_MAX_CONTEXT);
	free(ctx);
	CHECK_INT(o.claimed, 2);
	pgn_hook_out_release(&o);
}

static void
test_beside_a_baton_a_message_waits_whole_rather_than_cut(void)
{
	struct pgn_hook_out o;
	char text[3001], body[PGN_MAX_BODY + 1], *ctx;
	size_t i;

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	for (i = 0; i < 3000; i++)
		text[i] = i % 60 == 59 ? '\n' : 'b';
	text[3000] = '\0';
	REQUIRE(leave("claude:s1", NULL, NULL, text, NULL, NULL) == PGN_OK);
	memset(body, 'm', PGN_MAX_BODY);
	body[PGN_MAX_BODY] = '\0';
	send_to("newbie", body);
	ctx = startup("s2", "startup", "newbie", &o);
	CHECK(strlen(ctx) <= PGN_MAX_CONTEXT);
	CHECK(strstr(ctx, "[cut:") == NULL);
	CHECK_CONTAINS(ctx, "[baton #1 from alice");
	CHECK(strstr(ctx, "mmmm") == NULL);
	CHECK_CONTAINS(ctx, "1 more message waits");
	free(ctx);
	CHECK_INT(o.claimed, 1);
	pgn_hook_out_release(&o);
	CHECK_INT(q("SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    1);
	/* The next prompt brings it whole. */
	claude(&o, PGN_EVENT_PROMPT, "s2", "\"prompt_id\":\"p1\"", NULL);
	ctx = context_of(&o);
	CHECK(strstr(ctx, "[cut:") == NULL);
	CHECK_INT(o.claimed, 1);
	free(ctx);
	pgn_hook_out_release(&o);
}

static void
test_a_claude_session_start_exports_pigeon_session(void)
{
	struct pgn_hook_out o;
	struct pgn_hook_in in;
	char envf[PATH_MAX], link[PATH_MAX], json[PATH_MAX + 256];
	struct pgn_err err;
	char *data;
	size_t len;

	setup();
	H_PATH(envf, "claude-env");
	H_PATH(link, "link");
	snprintf(json, sizeof(json),
	    "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"e5\","
	    "\"cwd\":\"%s\",\"source\":\"startup\"}",
	    root);
	memset(&in, 0, sizeof(in));
	in.payload = json;
	in.len = strlen(json);
	in.host = PGN_HOST_CLAUDE;
	in.event = PGN_EVENT_SESSION_START;
	in.home = home;
	in.db_path = dbpath;
	in.db_create = 1;
	in.env_file = envf;
	in.deadline = pgn_mono_ms() + 10000;
	pgn_hook_turn(&in, &o);
	CHECK_INT(o.st, PGN_OK);
	pgn_hook_out_release(&o);
	data = h_read_file(envf, &len);
	CHECK_STR(data, "export PIGEON_SESSION='claude:e5'\n");
	free(data);
	/* A file that cannot be opened is logged; the turn goes on. */
	in.env_file = "/nonexistent-dir/env";
	pgn_hook_turn(&in, &o);
	CHECK_INT(o.st, PGN_OK);
	CHECK(o.nlog >= 1 &&
	    strstr(o.log[o.nlog - 1], "status=env-file") != NULL);
	pgn_hook_out_release(&o);
	CHECK_INT(pgn_env_file_export("rel", "claude:x", &err), PGN_EINVAL);
	CHECK_INT(pgn_env_file_export(envf, "claude:it's", &err), PGN_EINVAL);
	/* Never through a symbolic link. */
	REQUIRE(symlink(envf, link) == 0);
	CHECK_INT(pgn_env_file_export(link, "claude:x", &err), PGN_EIO);
	data = h_read_file(envf, &len);
	CHECK_STR(data, "export PIGEON_SESSION='claude:e5'\n");
	free(data);
}

static void
test_the_session_start_finds_its_baton_through_the_partial_index(void)
{
	struct pgn_hook_out o;
	sqlite3 *raw;
	sqlite3_stmt *st = NULL;
	struct pgn_buf plan;
	char sql[2048];

	setup();
	free(startup("s1", "startup", "alice", &o));
	pgn_hook_out_release(&o);
	raw = h_raw();
	snprintf(sql, sizeof(sql), "EXPLAIN QUERY PLAN %s", pgn_sql_baton_next);
	REQUIRE(sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK);
	pgn_buf_init(&plan, 4096);
	while (sqlite3_step(st) == SQLITE_ROW) {
		pgn_buf_adds(&plan, (const char *)sqlite3_column_text(st, 3));
		pgn_buf_adds(&plan, "\n");
	}
	sqlite3_finalize(st);
	sqlite3_close(raw);
	REQUIRE(plan.err == PGN_OK && plan.data != NULL);
	CHECK_CONTAINS(plan.data, "SEARCH baton USING INDEX baton_open");
	CHECK(strstr(plan.data, "SCAN baton") == NULL);
	pgn_buf_release(&plan);
}

/* ---- where a session's transcript is read (decision 0129) ----------- */

/* Copy the Claude fixture transcript to 'path'. */
static void
copy_transcript(const char *path)
{
	const char *d = getenv("PGN_TEST_FIXTURES");
	char from[PATH_MAX + 64], *bytes;
	size_t n;
	FILE *f;

	REQUIRE(d != NULL);
	snprintf(from, sizeof(from), "%s/transcripts/claude-shell.jsonl", d);
	bytes = h_read_file(from, &n);
	REQUIRE(bytes != NULL);
	f = fopen(path, "wb");
	REQUIRE(f != NULL);
	REQUIRE(fwrite(bytes, 1, n, f) == n);
	fclose(f);
	free(bytes);
}

/*
 * Session 'sid' started naming 'path' as its transcript; then its
 * digest: the status, pgn_errmsg() in 'why', the digest freed.
 */
static pgn_status
digest_naming(const char *sid, const char *path, char *why, size_t len)
{
	struct pgn_session_info s;
	struct pgn_hook_out o;
	char extra[PATH_MAX + 64], key[64];
	char *digest = NULL;
	pgn_status st;
	pgn_db *db;

	snprintf(extra, sizeof(extra),
	    "\"source\":\"startup\",\"transcript_path\":\"%s\"", path);
	claude(&o, PGN_EVENT_SESSION_START, sid, extra, "alice");
	REQUIRE(o.st == PGN_OK);
	pgn_hook_out_release(&o);
	snprintf(key, sizeof(key), "claude:%s", sid);
	db = h_open();
	st = pgn_session_find(db, key, NULL, &s);
	if (st == PGN_OK)
		st = pgn_session_digest(db, &s, PGN_DIGEST_MAX, NULL, &digest);
	snprintf(why, len, "%s", st == PGN_OK ? "" : pgn_errmsg(db));
	if (st == PGN_OK)
		CHECK_CONTAINS(digest, "last prompt: now say goodbye");
	else
		CHECK(digest == NULL);
	free(digest);
	pgn_session_info_release(&s);
	pgn_db_close(db);
	return st;
}

/*
 * The user's own regular file is read; a symbolic link (even to that
 * file), a FIFO and another user's file are each refused with their
 * reason, and give no digest.
 */
static void
test_a_transcript_is_read_only_from_the_users_own_regular_file(void)
{
	char own[PATH_MAX], link[PATH_MAX], fifo[PATH_MAX], other[PATH_MAX];
	char why[PGN_MAX_ERRMSG];

	setup();
	H_PATH(own, "own.jsonl");
	copy_transcript(own);
	CHECK_INT(digest_naming("s1", own, why, sizeof(why)), PGN_OK);
	H_PATH(link, "link.jsonl");
	REQUIRE(symlink(own, link) == 0);
	CHECK_INT(digest_naming("s2", link, why, sizeof(why)), PGN_EINVAL);
	CHECK_CONTAINS(why, "link.jsonl is a symbolic link");
	H_PATH(fifo, "fifo.jsonl");
	REQUIRE(mkfifo(fifo, 0600) == 0);
	CHECK_INT(digest_naming("s3", fifo, why, sizeof(why)), PGN_EINVAL);
	CHECK_CONTAINS(why, "fifo.jsonl is not a regular file");
	H_PATH(other, "other.jsonl");
	copy_transcript(other);
	if (geteuid() != 0) {
		printf("# SKIP another user's file: chown needs root\n");
		return;
	}
	REQUIRE(chown(other, 65534, 65534) == 0);
	CHECK_INT(digest_naming("s4", other, why, sizeof(why)), PGN_EINVAL);
	CHECK_CONTAINS(why, "other.jsonl belongs to user id 65534, not to you");
}

static const struct h_test tests[] = {
    H_TEST(test_a_session_keeps_the_transcript_path_of_its_payloads),
    H_TEST(test_cursor_without_a_transcript_path_gets_the_derived_one),
    H_TEST(test_cursor_prefers_the_payloads_transcript_path),
    H_TEST(test_a_cursor_id_that_is_no_file_name_derives_nothing),
    H_TEST(test_a_quiet_after_tool_run_records_no_transcript),
    H_TEST(test_a_transcript_is_read_only_from_the_users_own_regular_file),
    H_TEST(test_new_conversation_is_startup_or_clear_never_resume_or_compact),
    H_TEST(test_a_baton_is_taken_by_the_next_new_conversation_once),
    H_TEST(test_a_resume_or_compaction_never_takes_a_baton),
    H_TEST(test_a_replayed_startup_of_a_session_seen_before_takes_no_baton),
    H_TEST(test_a_background_agent_never_takes_a_baton),
    H_TEST(test_a_cursor_session_start_takes_a_baton_only_for_a_new_session),
    H_TEST(test_a_render_failure_keeps_the_baton),
    H_TEST(test_two_concurrent_new_conversations_take_the_baton_once),
    H_TEST(test_racing_processes_take_each_baton_exactly_once),
    H_TEST(test_notes_within_the_hour_are_merged_and_older_ones_are_not),
    H_TEST(test_a_baton_expires_at_its_ttl),
    H_TEST(test_a_baton_for_one_agent_waits_for_that_agents_new_conversation),
    H_TEST(test_bad_batons_are_refused_with_the_reason),
    H_TEST(test_the_sender_is_the_session_or_the_agents_latest_session),
    H_TEST(test_a_dry_run_writes_nothing),
    H_TEST(test_a_dropped_baton_is_kept_and_never_delivered),
    H_TEST(test_the_baton_fits_the_cap_beside_the_backlog),
    H_TEST(test_beside_a_baton_a_message_waits_whole_rather_than_cut),
    H_TEST(test_a_claude_session_start_exports_pigeon_session),
    H_TEST(test_the_session_start_finds_its_baton_through_the_partial_index),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
