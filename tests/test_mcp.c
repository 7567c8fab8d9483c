/*
 * Unit tests of pigeon mcp's server (broker/src/mcp/, docs/mcp.md): the
 * lifecycle for each pinned host's recorded handshake, every bad input
 * the protocol meets (malformed JSON, a batch, unknown methods and
 * tools, wrong argument types, a line over the bound) answered with the
 * protocol's error and nothing stored, and the tools against the
 * database, checked through a second connection: the acting agent, the
 * claim's route 'mcp' in the audit and the journal, the lost answer's
 * ids. The tests that touch the store run on SQLite and, with
 * PGN_TEST_PG, on PostgreSQL (tests/backends.h, decision 0237).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "backends.h"
#include "pigeon/mcp.h"

static pgn_db *db;  /* the library's handle, for the setup */
static pgn_db *chk; /* a second connection, for checks */
static struct pgn_mcp *srv;

static void
start(const char *agent, const char *agent_default, const char *session)
{
	struct pgn_mcp_config cfg;
	struct pgn_err err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.db_flag = be_where;
	cfg.dir = h_tmp;
	cfg.agent = agent;
	cfg.agent_default = agent_default;
	cfg.session = session;
	REQUIRE(pgn_mcp_open(&cfg, &srv, &err) == PGN_OK);
}

static void
setup(const char *agent_default)
{
	char *scope = NULL;

	/* This pass's store (be_on_pg): the server gets its be_where. */
	be_open_pair("pgn_mcp", &db, &chk);
	/* The scope the server finds for h_tmp (no repository: global). */
	REQUIRE(pgn_scope_find(h_tmp, &scope) == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, scope) == PGN_OK);
	free(scope);
	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	start(NULL, agent_default, NULL);
}

static void
teardown(void)
{
	pgn_mcp_close(srv);
	srv = NULL;
	(void)be_close_pair(&db, &chk);
}

/* The answer to 'line' parsed (NULL: none); the caller deletes it. */
static cJSON *
ask_len(const char *line, size_t len, int too_long)
{
	char *out = NULL;
	cJSON *j;

	REQUIRE(pgn_mcp_handle(srv, line, len, too_long, &out) == PGN_OK);
	if (out == NULL)
		return NULL;
	REQUIRE(strchr(out, '\n') == NULL);
	j = cJSON_Parse(out);
	REQUIRE(j != NULL);
	free(out);
	return j;
}

static cJSON *
ask(const char *line)
{
	return ask_len(line, strlen(line), 0);
}

/* The error code of answer 'j' (0: none). */
static int
err_code(const cJSON *j)
{
	const cJSON *e = cJSON_GetObjectItem(j, "error");

	return e != NULL ? cJSON_GetObjectItem(e, "code")->valueint : 0;
}

static const char *
err_text(const cJSON *j)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(j, "error"), "message")
	    ->valuestring;
}

/* A tools/call of 'name' with 'args' (JSON text); its result object. */
static cJSON *
call(const char *name, const char *args)
{
	char line[8192];
	cJSON *j, *r;

	snprintf(line, sizeof(line),
	    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
	    "\"params\":{\"name\":\"%s\",\"arguments\":%s}}",
	    name, args);
	j = ask(line);
	REQUIRE(j != NULL);
	CHECK_INT(err_code(j), 0);
	r = cJSON_DetachItemFromObject(j, "result");
	cJSON_Delete(j);
	REQUIRE(r != NULL);
	return r;
}

static int
is_error(const cJSON *r)
{
	return cJSON_IsTrue(cJSON_GetObjectItem(r, "isError"));
}

static const char *
result_text(const cJSON *r)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItem(r, "content"), 0)
	    ->child->next->valuestring;
}

static const cJSON *
structured(const cJSON *r)
{
	return cJSON_GetObjectItem(r, "structuredContent");
}

/* The keys of object 'o', in order, space-separated (static). */
static const char *
msg_keys(const cJSON *o)
{
	static char buf[512];
	const cJSON *k;
	size_t at = 0;

	buf[0] = '\0';
	for (k = o != NULL ? o->child : NULL; k != NULL; k = k->next)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s",
		    at > 0 ? " " : "", k->string);
	return buf;
}

static long long
count(const char *sql)
{
	return be_count(chk, sql);
}

/* ---- the lifecycle -------------------------------------------------- */

/* Replay a recorded handshake; the answers in order, checked. */
static void
replay(const char *file, const char *version, const char *text)
{
	char path[PATH_MAX], line[8192];
	const char *dir;
	cJSON *j, *tools;
	FILE *f;
	int n = 0, answers = 0, requests = 0;

	dir = getenv("PGN_TEST_FIXTURES");
	REQUIRE(dir != NULL);
	snprintf(path, sizeof(path), "%s/mcp/%s", dir, file);
	f = fopen(path, "r");
	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		j = ask(line);
		n++;
		/* A notification has no id (opencode cancels after a call). */
		requests += strstr(line, "\"id\":") != NULL;
		if (j == NULL)
			continue;
		answers++;
		if (strstr(line, "server/discover") != NULL) {
			CHECK_INT(err_code(j), -32601);
		} else if (strstr(line, "\"initialize\"") != NULL) {
			CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(j,
			                                  "result"),
			              "protocolVersion")
			              ->valuestring,
			    version);
		} else if (strstr(line, "tools/list") != NULL) {
			tools = cJSON_GetObjectItem(cJSON_GetObjectItem(j,
			                                "result"),
			    "tools");
			CHECK_INT(cJSON_GetArraySize(tools), 10);
		} else if (strstr(line, "tools/call") != NULL) {
			CHECK(!is_error(cJSON_GetObjectItem(j, "result")));
		}
		cJSON_Delete(j);
	}
	fclose(f);
	CHECK(n >= 4);
	CHECK_INT(answers, requests); /* every request, no notification */
	snprintf(line, sizeof(line),
	    "SELECT count(*) FROM message m JOIN agent a ON "
	    "a.id = m.recipient_id WHERE m.sender = 'alice' AND "
	    "a.name = 'bob' AND m.body = '%s'",
	    text);
	CHECK_INT(count(line), 1);
}

static void
test_claude_code_handshake_falls_back_from_discover_to_initialize(void)
{
	setup("alice");
	replay("claude-code.jsonl", "2025-11-25", "hello from claude");
	teardown();
}

static void
test_codex_handshake_gets_2025_06_18(void)
{
	setup("alice");
	replay("codex.jsonl", "2025-06-18", "hello from codex");
	teardown();
}

static void
test_gemini_cli_handshake_gets_2025_06_18(void)
{
	setup("alice");
	replay("gemini-cli.jsonl", "2025-06-18", "hello from gemini");
	teardown();
}

/* opencode 1.18.33: 2025-11-25, and a cancel after its tool call. */
static void
test_opencode_handshake_gets_2025_11_25(void)
{
	setup("alice");
	replay("opencode.jsonl", "2025-11-25", "hello from opencode");
	teardown();
}

/* Copilot CLI 1.0.102 probes server/discover first, as Claude does. */
static void
test_copilot_cli_handshake_falls_back_from_discover(void)
{
	setup("alice");
	replay("copilot-cli.jsonl", "2025-11-25", "hello from copilot");
	teardown();
}

/* The official inspector's CLI in its auto era (t0506 runs it live). */
static void
test_mcp_inspector_handshake_falls_back_from_discover(void)
{
	setup("alice");
	replay("inspector-cli.jsonl", "2025-11-25", "hello-from-the-inspector");
	teardown();
}

static void
test_an_unknown_revision_is_answered_with_the_latest(void)
{
	cJSON *j;

	setup("alice");
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
	        "\"params\":{\"protocolVersion\":\"2099-01-01\"}}");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"),
	              "protocolVersion")
	              ->valuestring,
	    PGN_MCP_LATEST);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j,
	                                                      "result"),
	                                  "serverInfo"),
	              "name")
	              ->valuestring,
	    "pigeon");
	cJSON_Delete(j);
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\"}");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"),
	              "protocolVersion")
	              ->valuestring,
	    PGN_MCP_LATEST);
	cJSON_Delete(j);
	teardown();
}

static void
test_ping_and_notifications(void)
{
	cJSON *j;

	setup("alice");
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}");
	CHECK_INT(err_code(j), 0);
	CHECK_STR(cJSON_GetObjectItem(j, "id")->valuestring, "p");
	CHECK(cJSON_IsObject(cJSON_GetObjectItem(j, "result")));
	cJSON_Delete(j);
	CHECK(
	    ask("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") ==
	    NULL);
	CHECK(ask("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	          "\"params\":{\"requestId\":3}}") == NULL);
	CHECK(ask("{\"jsonrpc\":\"2.0\",\"method\":\"no/such\"}") == NULL);
	/* A response from the client (to nothing we asked): no answer. */
	CHECK(ask("{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}") == NULL);
	CHECK(ask("") == NULL);
	CHECK(ask("   \r") == NULL);
	teardown();
}

static void
test_tools_list_gives_each_tool_its_schema(void)
{
	static const char *const names[] = {"send", "inbox", "read", "wait",
	    "status", "ack", "thread", "lease_take", "lease_release",
	    "lease_list"};
	const cJSON *tools, *t, *in;
	cJSON *j;
	char *text;
	size_t i;

	setup("alice");
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	tools = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "result"), "tools");
	CHECK_INT(cJSON_GetArraySize(tools), 10);
	for (i = 0; i < sizeof(names) / sizeof(*names); i++) {
		t = cJSON_GetArrayItem(tools, (int)i);
		CHECK_STR(cJSON_GetObjectItem(t, "name")->valuestring,
		    names[i]);
		in = cJSON_GetObjectItem(t, "inputSchema");
		CHECK_STR(cJSON_GetObjectItem(in, "type")->valuestring,
		    "object");
		CHECK(cJSON_IsFalse(
		    cJSON_GetObjectItem(in, "additionalProperties")));
		CHECK(cJSON_IsString(cJSON_GetObjectItem(t, "description")));
	}
	/* No tool names an agent to act as. */
	text = cJSON_PrintUnformatted(tools);
	CHECK(text != NULL &&
	    strstr(text,
	        "\"from\":{\"type\":\"string\",\"description\":\"only") !=
	        NULL);
	cJSON_free(text);
	cJSON_Delete(j);
	teardown();
}

/* ---- bad input ------------------------------------------------------ */

static void
test_malformed_json_is_a_parse_error_with_a_null_id(void)
{
	static const char *const bad[] = {"{", "garbage", "{\"a\":1} x",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}", "nul",
	    "\"\\ud800\""};
	cJSON *j;
	size_t i;

	setup("alice");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		j = ask(bad[i]);
		REQUIRE(j != NULL);
		CHECK_INT(err_code(j), -32700);
		CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "id")));
		cJSON_Delete(j);
	}
	/* A NUL inside the line, invalid UTF-8. */
	j = ask_len("{\"jsonrpc\":\"2.0\",\0\"id\":1}", 24, 0);
	CHECK_INT(err_code(j), -32700);
	cJSON_Delete(j);
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}");
	CHECK_INT(err_code(j), -32700);
	cJSON_Delete(j);
	teardown();
}

static void
test_a_batch_is_refused_whole(void)
{
	cJSON *j;

	setup("alice");
	j = ask("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"send\",\"arguments\":{\"to\":\"bob\","
	        "\"text\":\"x\"}}}]");
	CHECK_INT(err_code(j), -32600);
	CHECK_CONTAINS(err_text(j), "batches are not supported");
	cJSON_Delete(j);
	j = ask("[]");
	CHECK_INT(err_code(j), -32600);
	cJSON_Delete(j);
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
	teardown();
}

static void
test_invalid_requests_are_refused(void)
{
	static const char *const bad[] = {"{\"id\":1,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}",
	    "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
	    "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
	    ("{\"jsonrpc\":\"2.0\",\"id\":20000000000000000000000,"
	     "\"method\":\"ping\"}"),
	    "42", "\"ping\"", "null"};
	cJSON *j;
	size_t i;

	setup("alice");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		j = ask(bad[i]);
		REQUIRE(j != NULL);
		CHECK_INT(err_code(j), -32600);
		cJSON_Delete(j);
	}
	/* A valid id is echoed in the error. */
	j = ask("{\"jsonrpc\":\"1.0\",\"id\":12,\"method\":\"ping\"}");
	CHECK_INT(cJSON_GetObjectItem(j, "id")->valueint, 12);
	cJSON_Delete(j);
	teardown();
}

static void
test_unknown_methods_and_tools_are_protocol_errors(void)
{
	cJSON *j;

	setup("alice");
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}");
	CHECK_INT(err_code(j), -32601);
	cJSON_Delete(j);
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"delete_everything\"}}");
	CHECK_INT(err_code(j), -32602);
	CHECK_CONTAINS(err_text(j), "Unknown tool: 'delete_everything'");
	cJSON_Delete(j);
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\","
	        "\"params\":{\"name\":5}}");
	CHECK_INT(err_code(j), -32602);
	cJSON_Delete(j);
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\","
	        "\"params\":{\"name\":\"send\",\"arguments\":[1]}}");
	CHECK_INT(err_code(j), -32602);
	cJSON_Delete(j);
	j = ask("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\"}");
	CHECK_INT(err_code(j), -32602);
	cJSON_Delete(j);
	teardown();
}

static void
test_wrong_argument_types_are_tool_errors_storing_nothing(void)
{
	static const struct {
		const char *tool, *args, *says;
	} bad[] = {
	    {"send", "{\"to\":5,\"text\":\"x\"}",
	        "send: 'to' is a string or a list of strings"},
	    {"send", "{\"to\":[\"bob\",3],\"text\":\"x\"}",
	        "send: 'to' is a list of strings"},
	    {"send", "{\"to\":\"bob\"}", "send: 'text' is missing"},
	    {"send", "{\"to\":\"bob\",\"text\":7}", "send: 'text' is a string"},
	    {"send", "{\"to\":\"bob\",\"text\":\"x\",\"reply_to\":\"1\"}",
	        "send: 'reply_to' is a whole number"},
	    {"send", "{\"to\":\"bob\",\"text\":\"x\",\"reply_to\":1.5}",
	        "send: 'reply_to' is a whole number"},
	    {"send", "{\"to\":\"bob\",\"text\":\"x\",\"ack\":\"yes\"}",
	        "send: 'ack' is true or false"},
	    {"send", "{\"to\":\"bob\",\"text\":\"x\",\"from\":\"bob\"}",
	        "send: unknown argument 'from'"},
	    {"send", "{\"to\":\"bob\",\"text\":\"x\",\"priority\":\"high\"}",
	        "send: 'priority'"},
	    {"send", "{\"to\":[],\"text\":\"x\"}",
	        "send: 'recipients' is empty"},
	    {"send", "{\"to\":\"bob\",\"text\":\"\"}", "empty"},
	    {"wait", "{\"timeout\":0}", "wait: 'timeout' is 1 to 50 seconds"},
	    {"wait", "{\"timeout\":51}", "wait: 'timeout' is 1 to 50 seconds"},
	    {"status", "{\"ids\":[1.5]}",
	        "status: 'ids' is a list of message ids"},
	    {"status", "{}", "status: 'ids' is missing"},
	    {"ack", "{\"id\":0}", "ack: 'id' is not a message id"},
	    {"thread", "{\"id\":\"x\"}", "thread: 'id' is a whole number"},
	    {"lease_take", "{\"patterns\":[]}",
	        "lease_take: 'patterns' is empty"},
	    {"lease_take", "{\"patterns\":\"src/\",\"ttl\":\"soon\"}",
	        "not a duration"},
	    {"lease_release", "{}", "name 'patterns' or 'all'"},
	};
	cJSON *r;
	size_t i;

	setup("alice");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		r = call(bad[i].tool, bad[i].args);
		CHECK(is_error(r));
		CHECK_CONTAINS(result_text(r), bad[i].says);
		cJSON_Delete(r);
	}
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
	teardown();
}

static void
test_a_line_over_the_bound_is_an_invalid_request(void)
{
	cJSON *j;
	char msg[64];

	setup("alice");
	j = ask_len("", 0, 1);
	REQUIRE(j != NULL);
	CHECK_INT(err_code(j), -32600);
	snprintf(msg, sizeof(msg), "at most %d bytes", PGN_MCP_MAX_LINE);
	CHECK_CONTAINS(err_text(j), msg);
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "id")));
	cJSON_Delete(j);
	teardown();
}

static void
test_a_body_at_and_over_its_limit(void)
{
	static char args[PGN_MAX_BODY + 128];
	char body[PGN_MAX_BODY + 2];
	cJSON *r;

	setup("alice");
	memset(body, 'x', sizeof(body));
	body[PGN_MAX_BODY] = '\0';
	snprintf(args, sizeof(args), "{\"to\":\"bob\",\"text\":\"%s\"}", body);
	r = call("send", args);
	CHECK(!is_error(r));
	cJSON_Delete(r);
	body[PGN_MAX_BODY] = 'x';
	body[PGN_MAX_BODY + 1] = '\0';
	snprintf(args, sizeof(args), "{\"to\":\"bob\",\"text\":\"%s\"}", body);
	r = call("send", args);
	CHECK(is_error(r));
	CHECK_CONTAINS(result_text(r), "over the limit of 4096 bytes");
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
	teardown();
}

/* ---- the tools ------------------------------------------------------ */

static void
test_send_queues_from_the_servers_agent(void)
{
	cJSON *r;

	setup("alice");
	r = call("send",
	    "{\"to\":[\"bob\"],\"text\":\"hi\",\"priority\":"
	    "\"urgent\",\"ack\":true}");
	CHECK(!is_error(r));
	CHECK_STR(cJSON_GetObjectItem(structured(r), "from")->valuestring,
	    "alice");
	CHECK_INT(cJSON_GetObjectItem(
	              cJSON_GetArrayItem(cJSON_GetObjectItem(structured(r),
	                                     "sent"),
	                  0),
	              "id")
	              ->valueint,
	    1);
	CHECK_CONTAINS(result_text(r), "\"to\":\"bob\"");
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM message m JOIN agent a ON "
	                "a.id = m.recipient_id WHERE m.sender = 'alice' AND "
	                "a.name = 'bob' AND m.body = 'hi' AND m.priority = 1 "
	                "AND m.ack_ms > 0"),
	    1);
	teardown();
}

static void
test_the_agent_flag_sends_and_a_bound_session_wins(void)
{
	char bound[PGN_MAX_NAME + 1];
	cJSON *r;

	setup(NULL);
	/* No agent at all: refused, worded for the server's start. */
	r = call("send", "{\"to\":\"bob\",\"text\":\"x\"}");
	CHECK(is_error(r));
	CHECK_CONTAINS(result_text(r), "start pigeon mcp with --agent NAME");
	cJSON_Delete(r);
	r = call("read", "{}");
	CHECK(is_error(r));
	cJSON_Delete(r);
	pgn_mcp_close(srv);
	start("bob", "alice", NULL);
	r = call("send", "{\"to\":\"alice\",\"text\":\"from bob\"}");
	CHECK(!is_error(r));
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM message WHERE sender = 'bob'"),
	    1);
	/* A session bound to alice: it is alice, --agent bob is refused. */
	REQUIRE(pgn_session_bind(db, "claude", "claude:s1", "alice", bound) ==
	    PGN_OK);
	pgn_mcp_close(srv);
	start(NULL, "bob", "claude:s1");
	r = call("send", "{\"to\":\"bob\",\"text\":\"from alice\"}");
	CHECK(!is_error(r));
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM message WHERE sender = 'alice'"),
	    1);
	pgn_mcp_close(srv);
	start("bob", NULL, "claude:s1");
	r = call("send", "{\"to\":\"alice\",\"text\":\"x\"}");
	CHECK(is_error(r));
	CHECK_CONTAINS(result_text(r), "sends as its agent 'alice'");
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM message"), 2);
	teardown();
}

static void
test_a_bad_agent_flag_is_refused_at_start(void)
{
	struct pgn_mcp_config cfg;
	struct pgn_mcp *s = NULL;
	struct pgn_err err;

	memset(&cfg, 0, sizeof(cfg));
	cfg.agent = "Not A Name!";
	CHECK_INT(pgn_mcp_open(&cfg, &s, &err), PGN_EINVAL);
	CHECK(s == NULL);
}

static void
test_read_claims_with_route_mcp_in_the_audit_and_journal(void)
{
	const cJSON *msgs;
	size_t n;
	const int64_t *ids;
	char line[256];
	cJSON *r;

	setup("bob");
	pgn_mcp_close(srv);
	start("alice", NULL, NULL);
	r = call("send", "{\"to\":\"bob\",\"text\":\"one\"}");
	cJSON_Delete(r);
	r = call("send", "{\"to\":\"bob\",\"text\":\"two\"}");
	cJSON_Delete(r);
	pgn_mcp_close(srv);
	start(NULL, "bob", NULL);
	r = call("inbox", "{}");
	CHECK_INT(cJSON_GetArraySize(
	              cJSON_GetObjectItem(structured(r), "messages")),
	    2);
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 0);
	r = call("read", "{}");
	CHECK(!is_error(r));
	msgs = cJSON_GetObjectItem(structured(r), "messages");
	CHECK_INT(cJSON_GetArraySize(msgs), 2);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "body")
	              ->valuestring,
	    "one");
	/* pigeon read --json's shape (decision 0216): explicit nulls. */
	CHECK_STR(msg_keys(cJSON_GetArrayItem(msgs, 0)),
	    "id from to created reply_to thread ack_within_ms body priority group");
	CHECK(cJSON_IsNull(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "reply_to")));
	CHECK(cJSON_IsNull(
	    cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "group")));
	CHECK_INT(cJSON_GetObjectItem(structured(r), "left")->valueint, 0);
	ids = pgn_mcp_claimed(srv, &n);
	CHECK_INT(n, 2);
	CHECK_INT(ids[0], 1);
	CHECK_INT(ids[1], 2);
	pgn_mcp_lost_line(srv, line, sizeof(line));
	CHECK_STR(line, "lost-output agent=bob route=mcp ids=1,2");
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM delivery WHERE route = 'mcp' "
	                "AND recipient = 'bob'"),
	    2);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    0);
	CHECK_INT(count("SELECT count(*) FROM journal j JOIN agent a ON "
	                "a.id = j.agent_id WHERE a.name = 'bob' AND j.kind = "
	                "'delivered' AND j.detail = 'mcp'"),
	    2);
	/* A second read takes nothing and claims nothing. */
	r = call("read", "{}");
	CHECK_INT(cJSON_GetArraySize(
	              cJSON_GetObjectItem(structured(r), "messages")),
	    0);
	(void)pgn_mcp_claimed(srv, &n);
	CHECK_INT(n, 0);
	cJSON_Delete(r);
	teardown();
}

/* The wait's front end stops on a host's cancel, and on nothing else. */
static void
test_a_cancel_is_told_from_other_lines(void)
{
	static const char *const no[] = {"",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":3}",
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	    "[{\"method\":\"notifications/cancelled\"}]", "{\"method\":7}",
	    "{\"method\":\"notifications/cancelled\"",
	    "notifications/cancelled"};
	const char *yes = "{\"jsonrpc\":\"2.0\",\"method\":"
	                  "\"notifications/cancelled\",\"params\":"
	                  "{\"requestId\":1,\"reason\":\"user\"}}";
	size_t i;

	CHECK(pgn_mcp_is_cancel(yes, strlen(yes)));
	/* its length is what counts, not a NUL */
	CHECK(!pgn_mcp_is_cancel(yes, strlen(yes) - 1));
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!pgn_mcp_is_cancel(no[i], strlen(no[i])));
}

/* A read claims at most PGN_MCP_READ_MAX and says how many are left. */
static void
test_a_read_claims_at_most_its_bound(void)
{
	char args[64];
	size_t n;
	int i;
	cJSON *r;

	setup("bob");
	pgn_mcp_close(srv);
	start("alice", NULL, NULL);
	for (i = 0; i < PGN_MCP_READ_MAX + 1; i++) {
		(void)snprintf(args, sizeof(args),
		    "{\"to\":\"bob\",\"text\":\"m%d\"}", i);
		cJSON_Delete(call("send", args));
	}
	pgn_mcp_close(srv);
	start(NULL, "bob", NULL);
	r = call("read", "{}");
	CHECK(!is_error(r));
	CHECK_INT(cJSON_GetArraySize(
	              cJSON_GetObjectItem(structured(r), "messages")),
	    PGN_MCP_READ_MAX);
	CHECK_INT(cJSON_GetObjectItem(structured(r), "left")->valueint, 1);
	(void)pgn_mcp_claimed(srv, &n);
	CHECK_INT(n, PGN_MCP_READ_MAX);
	CHECK(pgn_mcp_claim_answered(srv));
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    1);
	r = call("read", "{}");
	CHECK_INT(cJSON_GetArraySize(
	              cJSON_GetObjectItem(structured(r), "messages")),
	    1);
	CHECK_INT(cJSON_GetObjectItem(structured(r), "left")->valueint, 0);
	cJSON_Delete(r);
	teardown();
}

static void
test_wait_takes_one_message_or_times_out(void)
{
	const cJSON *msgs;
	cJSON *r;

	setup("bob");
	r = call("wait", "{\"timeout\":1}");
	CHECK(!is_error(r));
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(structured(r), "timed_out")));
	cJSON_Delete(r);
	pgn_mcp_close(srv);
	start("alice", NULL, NULL);
	cJSON_Delete(call("send", "{\"to\":\"bob\",\"text\":\"a\"}"));
	cJSON_Delete(call("send", "{\"to\":\"bob\",\"text\":\"b\"}"));
	pgn_mcp_close(srv);
	start("bob", NULL, NULL);
	r = call("wait", "{\"timeout\":50,\"from\":\"alice\"}");
	msgs = cJSON_GetObjectItem(structured(r), "messages");
	CHECK_INT(cJSON_GetArraySize(msgs), 1);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "body")
	              ->valuestring,
	    "a");
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(structured(r), "timed_out")));
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM delivery WHERE route = 'mcp'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    1);
	teardown();
}

static int
cancel_now(void *arg)
{
	(void)arg;
	return 1;
}

static void
test_wait_ends_when_the_input_closes(void)
{
	struct pgn_mcp_config cfg;
	struct pgn_err err;
	cJSON *r;

	setup("bob");
	pgn_mcp_close(srv);
	memset(&cfg, 0, sizeof(cfg));
	cfg.db_flag = be_where;
	cfg.dir = h_tmp;
	cfg.agent = "bob";
	cfg.cancel = cancel_now;
	REQUIRE(pgn_mcp_open(&cfg, &srv, &err) == PGN_OK);
	r = call("wait", "{\"timeout\":50}");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(structured(r), "timed_out")));
	cJSON_Delete(r);
	teardown();
}

static void
test_status_ack_and_thread(void)
{
	const cJSON *msgs;
	cJSON *r;

	setup("alice");
	cJSON_Delete(
	    call("send", "{\"to\":\"bob\",\"text\":\"q\",\"ack\":true}"));
	r = call("status", "{\"ids\":[1,99]}");
	msgs = cJSON_GetObjectItem(structured(r), "messages");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 0), "state")
	              ->valuestring,
	    "queued");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "state")
	              ->valuestring,
	    "unknown");
	cJSON_Delete(r);
	/* alice may not acknowledge her own message. */
	r = call("ack", "{\"id\":1}");
	CHECK(is_error(r));
	cJSON_Delete(r);
	pgn_mcp_close(srv);
	start("bob", NULL, NULL);
	cJSON_Delete(call("read", "{}"));
	r = call("ack", "{\"id\":1,\"text\":\"done\"}");
	CHECK(!is_error(r));
	CHECK_STR(cJSON_GetObjectItem(structured(r), "sender")->valuestring,
	    "alice");
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM message WHERE id = 1 AND "
	                "ack_text = 'done'"),
	    1);
	cJSON_Delete(call("send",
	    "{\"to\":\"alice\",\"text\":\"answer\",\"reply_to\":1}"));
	r = call("thread", "{\"id\":2}");
	msgs = cJSON_GetObjectItem(structured(r), "messages");
	CHECK_INT(cJSON_GetArraySize(msgs), 2);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(msgs, 1), "body")
	              ->valuestring,
	    "answer");
	cJSON_Delete(r);
	r = call("status", "{\"ids\":1}");
	CHECK_STR(cJSON_GetObjectItem(
	              cJSON_GetArrayItem(cJSON_GetObjectItem(structured(r),
	                                     "messages"),
	                  0),
	              "state")
	              ->valuestring,
	    "acknowledged");
	/* pigeon status --json's shape (decision 0216). */
	CHECK_STR(msg_keys(cJSON_GetArrayItem(cJSON_GetObjectItem(structured(r),
	                                          "messages"),
	              0)),
	    "id state from to created reply_to delivered route session host "
	    "woken thread priority group ack");
	cJSON_Delete(r);
	r = call("thread", "{\"id\":77}");
	CHECK(is_error(r));
	cJSON_Delete(r);
	teardown();
}

static void
test_leases_take_refuse_list_and_release(void)
{
	const cJSON *l;
	cJSON *r;

	setup("alice");
	r = call("lease_take",
	    "{\"patterns\":[\"src/\"],\"reason\":\"refactor\"}");
	CHECK(!is_error(r));
	cJSON_Delete(r);
	pgn_mcp_close(srv);
	start("bob", NULL, NULL);
	r = call("lease_take", "{\"patterns\":\"src/a.c\"}");
	CHECK(is_error(r));
	CHECK_CONTAINS(result_text(r), "is leased by alice: refactor");
	cJSON_Delete(r);
	r = call("lease_list", "{}");
	l = cJSON_GetObjectItem(structured(r), "leases");
	CHECK_INT(cJSON_GetArraySize(l), 1);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(l, 0), "holder")
	              ->valuestring,
	    "alice");
	cJSON_Delete(r);
	r = call("lease_release", "{\"all\":true}");
	CHECK_INT(cJSON_GetObjectItem(structured(r), "released")->valueint, 0);
	cJSON_Delete(r);
	pgn_mcp_close(srv);
	start("alice", NULL, NULL);
	r = call("lease_release", "{\"patterns\":[\"src/\"]}");
	CHECK_INT(cJSON_GetObjectItem(structured(r), "released")->valueint, 1);
	cJSON_Delete(r);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
	teardown();
}

/* The rules that touch the store, on each backend (tests/backends.h). */
static void (*const rules[])(void) = {
    test_claude_code_handshake_falls_back_from_discover_to_initialize,
    test_codex_handshake_gets_2025_06_18,
    test_gemini_cli_handshake_gets_2025_06_18,
    test_opencode_handshake_gets_2025_11_25,
    test_copilot_cli_handshake_falls_back_from_discover,
    test_mcp_inspector_handshake_falls_back_from_discover,
    test_a_batch_is_refused_whole,
    test_wrong_argument_types_are_tool_errors_storing_nothing,
    test_a_body_at_and_over_its_limit,
    test_send_queues_from_the_servers_agent,
    test_the_agent_flag_sends_and_a_bound_session_wins,
    test_read_claims_with_route_mcp_in_the_audit_and_journal,
    test_a_read_claims_at_most_its_bound,
    test_wait_takes_one_message_or_times_out,
    test_wait_ends_when_the_input_closes,
    test_status_ack_and_thread,
    test_leases_take_refuse_list_and_release,
};

static void
nothing(void)
{
}

/* Each rule makes its own store (setup) and drops it (teardown). */
static void
test_rules_on_sqlite(void)
{
	be_rules(0, rules, H_COUNT(rules), nothing, nothing);
}

/* Skipped, with a line, without a server; never under CI=true. */
static void
test_rules_on_postgresql(void)
{
	if (be_have_pg())
		be_rules(1, rules, H_COUNT(rules), nothing, nothing);
}

/* The protocol's own tests (a SQLite store, untouched) first. */
static const struct h_test tests[] = {
    H_TEST(test_an_unknown_revision_is_answered_with_the_latest),
    H_TEST(test_ping_and_notifications),
    H_TEST(test_tools_list_gives_each_tool_its_schema),
    H_TEST(test_malformed_json_is_a_parse_error_with_a_null_id),
    H_TEST(test_invalid_requests_are_refused),
    H_TEST(test_unknown_methods_and_tools_are_protocol_errors),
    H_TEST(test_a_line_over_the_bound_is_an_invalid_request),
    H_TEST(test_a_bad_agent_flag_is_refused_at_start),
    H_TEST(test_a_cancel_is_told_from_other_lines),
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
