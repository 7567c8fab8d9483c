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
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "pgn_int.h"
#include "pigeon/hook.h"

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

static const struct h_test tests[] = {
    H_TEST(test_a_session_keeps_the_transcript_path_of_its_payloads),
    H_TEST(test_cursor_without_a_transcript_path_gets_the_derived_one),
    H_TEST(test_cursor_prefers_the_payloads_transcript_path),
    H_TEST(test_a_cursor_id_that_is_no_file_name_derives_nothing),
    H_TEST(test_a_quiet_after_tool_run_records_no_transcript),
    H_TEST(test_new_conversation_is_startup_or_clear_never_resume_or_compact),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
