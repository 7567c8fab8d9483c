/*
 * Unit tests of hook_parse_payload on real captured payloads (host and
 * event detection, session, scope directory, turn keys) and its
 * refusals.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "hook_fixtures.h"
#include "hook_int.h"
#include "hookio.h"

/* ---- hook_parse_payload on captured payloads ---------------------- */

static const char *
fixtures(void)
{
	const char *d = getenv("PGN_TEST_FIXTURES");

	if (d == NULL || *d == '\0') {
		printf("PGN_TEST_FIXTURES is not set: run through ctest\n");
		REQUIRE(0);
	}
	return d;
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted *.json names of payloads/<host>; caller frees each and v. */
static size_t
list_payloads(const char *host, char ***names)
{
	char dir[PATH_MAX];
	struct dirent *de;
	char **v = NULL, **nv;
	size_t n = 0, len;
	DIR *d;
	int k;

	k = snprintf(dir, sizeof(dir), "%s/payloads/%s", fixtures(), host);
	REQUIRE(k > 0 && (size_t)k < sizeof(dir));
	d = opendir(dir);
	if (d == NULL)
		printf("opendir %s: %s\n", dir, strerror(errno));
	REQUIRE(d != NULL);
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		REQUIRE(nv != NULL);
		v = nv;
		v[n] = strdup(de->d_name);
		REQUIRE(v[n] != NULL);
		n++;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_names);
	*names = v;
	return n;
}

static char *
load_payload(const char *host, const char *name, size_t *len)
{
	char path[PATH_MAX];
	char *p;
	int k;

	k = snprintf(path, sizeof(path), "%s/payloads/%s/%s", fixtures(), host,
	    name);
	REQUIRE(k > 0 && (size_t)k < sizeof(path));
	p = h_read_file(path, len);
	if (p == NULL)
		printf("cannot read %s\n", path);
	REQUIRE(p != NULL);
	return p;
}

static int
is_hashed_turn(const char *turn, const char *event)
{
	size_t n = strlen(event), i;

	if (strncmp(turn, event, n) != 0 || strncmp(turn + n, ":h", 2) != 0)
		return 0;
	if (strlen(turn + n + 2) != 24)
		return 0;
	for (i = n + 2; turn[i] != '\0'; i++)
		if (strchr("0123456789abcdef", turn[i]) == NULL)
			return 0;
	return 1;
}

/*
 * Check one payload file as the hook sees it with no arguments, then
 * with HOST EVENT named: the same answers. Returns 1 if it was an event
 * Pigeon handles.
 */
static int
check_fixture(pgn_host host, const char *name)
{
	const struct pgn_host_info *hi = pgn_host_get(host);
	struct hook_opts o = opts(PGN_HOST_NONE, PGN_EVENT_NONE), named;
	struct pgn_payload in, again;
	char evname[64], want[PGN_MAX_SESSION_KEY + 1], why[256];
	const char *p, *q, *sid, *dir = NULL, *tid = NULL;
	const cJSON *roots;
	pgn_event ev;
	cJSON *root;
	size_t len;
	char *buf;
	int handled = 0;

	printf("  payload %s/%s\n", hi->name, name);
	p = strchr(name, '-');
	q = p != NULL ? strchr(p + 1, '-') : NULL;
	REQUIRE(q != NULL && (size_t)(q - p - 1) < sizeof(evname));
	memcpy(evname, p + 1, (size_t)(q - p - 1));
	evname[q - p - 1] = '\0';
	ev = pgn_event_by_name(host, evname);

	buf = load_payload(hi->name, name, &len);
	root = cJSON_Parse(buf);
	REQUIRE(root != NULL);
	CHECK_STR(jstr(root, "hook_event_name"), evname);

	why[0] = '\0';
	CHECK_INT(pgn_payload_parse(buf, len, o.host, o.event, &in, why,
	              sizeof(why)),
	    PGN_OK);
	CHECK_STR(why, "");
	CHECK_INT(in.host, host);
	CHECK_INT(in.skip, 0);
	if (ev == PGN_EVENT_NONE) {
		CHECK_INT(in.ignore, 1);
		goto done;
	}
	handled = 1;
	CHECK_INT(in.ignore, 0);
	CHECK_INT(in.event, ev);

	/* Session key and scope directory. */
	if (host == PGN_HOST_CURSOR) {
		sid = jstr(root, "conversation_id");
		if (strncmp(sid, "bc-", 3) == 0)
			sid += 3;
		roots =
		    cJSON_GetObjectItemCaseSensitive(root, "workspace_roots");
		dir = cJSON_GetArrayItem(roots, 0)->valuestring;
		if (ev == PGN_EVENT_PROMPT)
			tid = jstr(root, "generation_id");
	} else {
		sid = jstr(root, "session_id");
		dir = jstr(root, "cwd");
		if (ev == PGN_EVENT_PROMPT && host == PGN_HOST_CLAUDE)
			tid = jstr(root, "prompt_id");
		if (ev == PGN_EVENT_PROMPT && host == PGN_HOST_CODEX)
			tid = jstr(root, "turn_id");
		if (ev == PGN_EVENT_PROMPT && host == PGN_HOST_OPENCODE)
			tid = jstr(root, "message_id");
	}
	REQUIRE(sid != NULL);
	snprintf(want, sizeof(want), "%s:%s", hi->name, sid);
	CHECK_STR(in.session, want);
	CHECK_STR(in.dir, dir);

	/*
	 * Turn key: none for tool and stop events (each message once, no
	 * de-duplication); the host's id where it has one; else a hash.
	 */
	if (ev == PGN_EVENT_AFTER_TOOL || ev == PGN_EVENT_STOP ||
	    ev == PGN_EVENT_IDLE || ev == PGN_EVENT_BEFORE_TOOL) {
		CHECK_STR(in.turn, "");
		CHECK_INT(in.turn_window_ms, 0);
	} else if (tid != NULL) {
		snprintf(want, sizeof(want), "%s:%s", evname, tid);
		CHECK_STR(in.turn, want);
		CHECK_INT(in.turn_window_ms, 0);
	} else {
		if (!CHECK(is_hashed_turn(in.turn, evname)))
			printf("  turn: %s\n", in.turn);
		CHECK_INT(in.turn_window_ms, PGN_HOOK_DUP_WINDOW_MS);
	}
	CHECK(host != PGN_HOST_GEMINI || tid == NULL);
	CHECK(ev != PGN_EVENT_SESSION_START || tid == NULL);

	/* The same payload again: the same key. */
	CHECK_INT(pgn_payload_parse(buf, len, o.host, o.event, &again, why,
	              sizeof(why)),
	    PGN_OK);
	CHECK_STR(again.turn, in.turn);
	CHECK_INT(again.turn_window_ms, in.turn_window_ms);
	pgn_payload_release(&again);

	/* Named on the command line: the same answers. */
	named = opts(host, ev);
	CHECK_INT(pgn_payload_parse(buf, len, named.host, named.event, &again,
	              why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(again.host, host);
	CHECK_INT(again.event, ev);
	CHECK_STR(again.session, in.session);
	CHECK_STR(again.turn, in.turn);
	CHECK_STR(again.dir, in.dir);
	pgn_payload_release(&again);
done:
	pgn_payload_release(&in);
	cJSON_Delete(root);
	free(buf);
	return handled;
}

static void
check_host_fixtures(pgn_host host, size_t want_handled)
{
	char **names;
	size_t i, n, handled = 0;

	n = list_payloads(pgn_host_get(host)->name, &names);
	for (i = 0; i < n; i++) {
		handled += (size_t)check_fixture(host, names[i]);
		free(names[i]);
	}
	free(names);
	CHECK_INT(handled, want_handled);
}

static void
test_payloads_claude(void)
{
	check_host_fixtures(PGN_HOST_CLAUDE, 14);
}

static void
test_payloads_codex(void)
{
	check_host_fixtures(PGN_HOST_CODEX, 13);
}

static void
test_payloads_gemini(void)
{
	check_host_fixtures(PGN_HOST_GEMINI, 14);
}

static void
test_payloads_cursor(void)
{
	check_host_fixtures(PGN_HOST_CURSOR, 7);
}

/* What Pigeon's opencode plugin sends (opencode-plugin.js), recorded. */
static void
test_payloads_opencode(void)
{
	struct pgn_payload in;
	char why[256];
	size_t len;
	char *buf;

	check_host_fixtures(PGN_HOST_OPENCODE, 7);
	/* A new session is a new conversation; resumed, a subagent: not. */
	buf = load_payload("opencode", "01-session.created-startup.json", &len);
	CHECK_INT(pgn_payload_parse(buf, len, PGN_HOST_NONE, PGN_EVENT_NONE,
	              &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.new_conversation, 1);
	CHECK_INT(in.subagent, 0);
	pgn_payload_release(&in);
	free(buf);
	buf = load_payload("opencode", "05-session.created-resume.json", &len);
	CHECK_INT(pgn_payload_parse(buf, len, PGN_HOST_NONE, PGN_EVENT_NONE,
	              &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.new_conversation, 0);
	pgn_payload_release(&in);
	free(buf);
	buf =
	    load_payload("opencode", "07-session.created-subagent.json", &len);
	CHECK_INT(pgn_payload_parse(buf, len, PGN_HOST_NONE, PGN_EVENT_NONE,
	              &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.subagent, 1);
	CHECK_INT(in.new_conversation, 0);
	pgn_payload_release(&in);
	free(buf);
}

/* Every bad opencode payload fails open: an error, never a crash. */
static void
test_payloads_opencode_bad(void)
{
	static const char *const bad[] = {
	    "{\"hook_event_name\":\"chat.message\"}",
	    "{\"hook_event_name\":\"chat.message\",\"session_id\":\"\"}",
	    "{\"hook_event_name\":\"chat.message\",\"session_id\":7}",
	    "{\"hook_event_name\":\"session.idle\",\"session_id\":\"a b\"}",
	    "[\"session.created\"]",
	    ("{\"hook_event_name\":\"session.created\",\"session_id\":\"s\","
	     "\"cwd\":{\"a\":1}}"),
	};
	struct pgn_payload in;
	char why[256];
	size_t i;
	pgn_status st;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		st = pgn_payload_parse(bad[i], strlen(bad[i]),
		    PGN_HOST_OPENCODE, PGN_EVENT_NONE, &in, why, sizeof(why));
		if (st == PGN_OK) {
			/* Only a payload with a usable id passes: the last. */
			CHECK(in.dir == NULL);
			CHECK_STR(in.session, "opencode:s");
		} else {
			CHECK_INT(st, PGN_EINVAL);
			CHECK(why[0] != '\0');
		}
		pgn_payload_release(&in);
	}
	/* opencode has no stop event: named, it is refused. */
	CHECK_INT(pgn_payload_parse(bad[0], strlen(bad[0]), PGN_HOST_OPENCODE,
	              PGN_EVENT_STOP, &in, why, sizeof(why)),
	    PGN_EINVAL);
	CHECK_CONTAINS(why, "opencode has no stop event");
	pgn_payload_release(&in);
}

/* Parse an inline payload with options 'o'. */
static pgn_status
parse(const char *json, const struct hook_opts *o, struct pgn_payload *in,
    char *why, size_t whylen)
{
	return pgn_payload_parse(json, strlen(json), o->host, o->event, in, why,
	    whylen);
}

/* The host of payload 'json' by the host table's detection rules. */
static pgn_host
detect(const char *json)
{
	return pgn_payload_detect(json, strlen(json));
}

static void
test_detect_host_rules(void)
{
	/* cursor_version wins over everything. */
	CHECK_INT(detect("{\"hook_event_name\":\"UserPromptSubmit\","
	                 "\"cursor_version\":\"1\",\"timestamp\":\"t\","
	                 "\"turn_id\":\"t\",\"model\":\"m\","
	                 "\"permission_mode\":\"p\"}"),
	    PGN_HOST_CURSOR);
	CHECK_INT(detect("{\"cursor_version\":\"1\"}"), PGN_HOST_CURSOR);
	/* A Cursor event name alone. */
	CHECK_INT(detect("{\"hook_event_name\":\"beforeSubmitPrompt\"}"),
	    PGN_HOST_CURSOR);
	CHECK_INT(detect("{\"hook_event_name\":\"sessionStart\"}"),
	    PGN_HOST_CURSOR);
	/* Gemini: BeforeAgent, or a timestamp on SessionStart. */
	CHECK_INT(detect("{\"hook_event_name\":\"BeforeAgent\"}"),
	    PGN_HOST_GEMINI);
	CHECK_INT(detect("{\"hook_event_name\":\"SessionStart\","
	                 "\"timestamp\":\"t\"}"),
	    PGN_HOST_GEMINI);
	CHECK_INT(detect("{\"hook_event_name\":\"SessionStart\","
	                 "\"timestamp\":\"t\",\"model\":\"m\","
	                 "\"permission_mode\":\"p\"}"),
	    PGN_HOST_GEMINI);
	/* Codex: turn_id, or model with permission_mode. */
	CHECK_INT(detect("{\"hook_event_name\":\"UserPromptSubmit\","
	                 "\"turn_id\":\"t\"}"),
	    PGN_HOST_CODEX);
	CHECK_INT(detect("{\"hook_event_name\":\"SessionStart\","
	                 "\"model\":\"m\",\"permission_mode\":\"p\"}"),
	    PGN_HOST_CODEX);
	/* Claude otherwise: model alone, permission_mode alone, nothing. */
	CHECK_INT(detect("{\"hook_event_name\":\"SessionStart\","
	                 "\"model\":\"m\"}"),
	    PGN_HOST_CLAUDE);
	CHECK_INT(detect("{\"hook_event_name\":\"UserPromptSubmit\","
	                 "\"permission_mode\":\"p\"}"),
	    PGN_HOST_CLAUDE);
	CHECK_INT(detect("{\"hook_event_name\":\"Stop\"}"), PGN_HOST_CLAUDE);
	CHECK_INT(detect("{}"), PGN_HOST_CLAUDE);
	/* An empty string counts as absent; not an object: no host. */
	CHECK_INT(detect("{\"cursor_version\":\"\"}"), PGN_HOST_CLAUDE);
	CHECK_INT(detect("[1]"), PGN_HOST_NONE);
	/* opencode: its plugin's event names, whatever else is there. */
	CHECK_INT(detect("{\"hook_event_name\":\"chat.message\"}"),
	    PGN_HOST_OPENCODE);
	CHECK_INT(detect("{\"hook_event_name\":\"session.idle\","
	                 "\"model\":\"m\",\"permission_mode\":\"p\"}"),
	    PGN_HOST_OPENCODE);
}

static void
test_payload_detection_from_fields(void)
{
	struct hook_opts o = opts(PGN_HOST_NONE, PGN_EVENT_NONE);
	struct pgn_payload in;
	char why[256];

	/* Cursor by event name, with no cursor_version. */
	CHECK_INT(parse("{\"hook_event_name\":\"beforeSubmitPrompt\","
	                "\"conversation_id\":\"c9\",\"generation_id\":\"g1\","
	                "\"workspace_roots\":[\"/w\"]}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.host, PGN_HOST_CURSOR);
	CHECK_INT(in.event, PGN_EVENT_PROMPT);
	CHECK_STR(in.session, "cursor:c9");
	CHECK_STR(in.turn, "beforeSubmitPrompt:g1");
	CHECK_STR(in.dir, "/w");
	pgn_payload_release(&in);

	/* Cursor by version, session_id when conversation_id is absent. */
	CHECK_INT(parse("{\"hook_event_name\":\"sessionStart\","
	                "\"session_id\":\"bc-s7\",\"cursor_version\":\"3.18."
	                "25\","
	                "\"workspace_roots\":[]}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.host, PGN_HOST_CURSOR);
	CHECK_INT(in.event, PGN_EVENT_SESSION_START);
	CHECK_STR(in.session, "cursor:s7");
	CHECK(in.dir == NULL);
	pgn_payload_release(&in);

	/* "bc-" alone is not stripped to nothing. */
	CHECK_INT(parse("{\"hook_event_name\":\"sessionStart\","
	                "\"conversation_id\":\"bc-\",\"cursor_version\":\"1\"}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_STR(in.session, "cursor:bc-");
	pgn_payload_release(&in);

	/* Cursor ignores cwd: only workspace_roots[0] names the project. */
	CHECK_INT(parse("{\"hook_event_name\":\"sessionStart\","
	                "\"conversation_id\":\"c1\",\"cursor_version\":\"1\","
	                "\"cwd\":\"/elsewhere\",\"workspace_roots\":[\"/a\",\"/"
	                "b\"]}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_STR(in.dir, "/a");
	pgn_payload_release(&in);

	/* Gemini SessionStart by timestamp; hashed turn. */
	CHECK_INT(parse("{\"hook_event_name\":\"SessionStart\","
	                "\"session_id\":\"g1\",\"cwd\":\"/p\",\"timestamp\":"
	                "\"2026-11-30T05:47:07.737Z\",\"source\":\"startup\"}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.host, PGN_HOST_GEMINI);
	CHECK_STR(in.session, "gemini:g1");
	CHECK(is_hashed_turn(in.turn, "SessionStart"));
	pgn_payload_release(&in);

	/* Codex by turn_id alone. */
	CHECK_INT(parse("{\"hook_event_name\":\"UserPromptSubmit\","
	                "\"session_id\":\"x1\",\"turn_id\":\"t1\",\"cwd\":\"/"
	                "p\"}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.host, PGN_HOST_CODEX);
	CHECK_STR(in.session, "codex:x1");
	CHECK_STR(in.turn, "UserPromptSubmit:t1");
	CHECK_INT(in.turn_window_ms, 0);
	pgn_payload_release(&in);

	/* Claude: a prompt without prompt_id gets a hashed key. */
	CHECK_INT(parse("{\"hook_event_name\":\"UserPromptSubmit\","
	                "\"session_id\":\"s1\",\"cwd\":\"relative/dir\"}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.host, PGN_HOST_CLAUDE);
	CHECK(is_hashed_turn(in.turn, "UserPromptSubmit"));
	CHECK_INT(in.turn_window_ms, PGN_HOOK_DUP_WINDOW_MS);
	CHECK(in.dir == NULL); /* not absolute */
	pgn_payload_release(&in);
}

static void
test_payload_hashed_keys_follow_the_bytes(void)
{
	static const char a[] =
	    "{\"hook_event_name\":\"BeforeAgent\","
	    "\"session_id\":\"g1\",\"cwd\":\"/p\",\"timestamp\":\"t1\","
	    "\"prompt\":\"hi\"}";
	static const char b[] =
	    "{\"hook_event_name\":\"BeforeAgent\","
	    "\"session_id\":\"g1\",\"cwd\":\"/p\",\"timestamp\":\"t2\","
	    "\"prompt\":\"hi\"}";
	struct hook_opts o = opts(PGN_HOST_NONE, PGN_EVENT_NONE);
	struct pgn_payload x, y;
	char why[256];

	CHECK_INT(parse(a, &o, &x, why, sizeof(why)), PGN_OK);
	CHECK_INT(parse(a, &o, &y, why, sizeof(why)), PGN_OK);
	CHECK_STR(x.turn, y.turn);
	pgn_payload_release(&y);
	CHECK_INT(parse(b, &o, &y, why, sizeof(why)), PGN_OK);
	CHECK(strcmp(x.turn, y.turn) != 0);
	CHECK(is_hashed_turn(x.turn, "BeforeAgent"));
	CHECK(is_hashed_turn(y.turn, "BeforeAgent"));
	pgn_payload_release(&x);
	pgn_payload_release(&y);
}

static void
test_payload_claude_hook_with_cursor_payload_is_skipped(void)
{
	struct hook_opts o = opts(PGN_HOST_CLAUDE, PGN_EVENT_PROMPT);
	struct pgn_payload in;
	char why[256];
	size_t len;
	char *buf;

	buf = load_payload("cursor", "02-beforeSubmitPrompt-ide.json", &len);
	CHECK_INT(pgn_payload_parse(buf, len, o.host, o.event, &in, why,
	              sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.skip, 1);
	CHECK_INT(in.host, PGN_HOST_CLAUDE);
	CHECK_STR(in.session, "");
	pgn_payload_release(&in);
	free(buf);

	/* Only the host named "claude"; codex runs its own payloads. */
	o = opts(PGN_HOST_CLAUDE, PGN_EVENT_SESSION_START);
	CHECK_INT(parse("{\"hook_event_name\":\"SessionStart\","
	                "\"session_id\":\"s\",\"cursor_version\":\"3.12.17\"}",
	              &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.skip, 1);
	pgn_payload_release(&in);
}

/*
 * Copilot CLI's own payloads (camelCase, no hook_event_name): named as
 * the installed command names them, and detected alone by sessionId.
 */
static void
test_payloads_copilot(void)
{
	static const struct {
		const char *file;
		pgn_event ev;
		int hashed; /* a prompt or session start: a hashed turn */
	} cases[] = {
	    {"01-sessionStart-new.json", PGN_EVENT_SESSION_START, 1},
	    {"02-userPromptSubmitted-prompt.json", PGN_EVENT_PROMPT, 1},
	    {"03-postToolUse-bash.json", PGN_EVENT_AFTER_TOOL, 0},
	    {"04-agentStop-end.json", PGN_EVENT_STOP, 0},
	    {"05-userPromptSubmitted-stop-continuation.json", PGN_EVENT_PROMPT,
	        1},
	    {"06-agentStop-continued.json", PGN_EVENT_STOP, 0},
	};
	struct hook_opts o;
	struct pgn_payload in;
	char why[256], want[PGN_MAX_SESSION_KEY + 1];
	const char *evname;
	cJSON *root;
	size_t i, len;
	char *buf;

	for (i = 0; i < H_COUNT(cases); i++) {
		printf("  payload copilot/%s\n", cases[i].file);
		buf = load_payload("copilot", cases[i].file, &len);
		root = cJSON_Parse(buf);
		REQUIRE(root != NULL);
		CHECK(jstr(root, "hook_event_name") == NULL);
		CHECK_INT(pgn_payload_detect(buf, len), PGN_HOST_COPILOT);
		o = opts(PGN_HOST_COPILOT, cases[i].ev);
		why[0] = '\0';
		CHECK_INT(pgn_payload_parse(buf, len, o.host, o.event, &in, why,
		              sizeof(why)),
		    PGN_OK);
		CHECK_STR(why, "");
		CHECK_INT(in.skip, 0);
		CHECK_INT(in.ignore, 0);
		CHECK_INT(in.host, PGN_HOST_COPILOT);
		snprintf(want, sizeof(want), "copilot:%s",
		    jstr(root, "sessionId"));
		CHECK_STR(in.session, want);
		CHECK_STR(in.dir, jstr(root, "cwd"));
		evname = pgn_host_get(PGN_HOST_COPILOT)->events[cases[i].ev];
		if (cases[i].hashed)
			CHECK(is_hashed_turn(in.turn, evname));
		else
			CHECK_STR(in.turn, "");
		CHECK_INT(in.new_conversation,
		    cases[i].ev == PGN_EVENT_SESSION_START);
		if (cases[i].ev == PGN_EVENT_PROMPT)
			CHECK_STR(in.prompt, jstr(root, "prompt"));
		pgn_payload_release(&in);
		cJSON_Delete(root);
		free(buf);
	}
}

/*
 * Copilot CLI runs Claude's project hooks with its VS Code-compatible
 * payload: pigeon-hook claude EVENT prints nothing for those (Pigeon's
 * copilot hook delivers), and a copilot hook still takes its own.
 */
static void
test_payload_claude_hook_with_copilot_payload_is_skipped(void)
{
	static const struct {
		const char *file;
		pgn_event ev;
	} cases[] = {
	    {"11-SessionStart-claude-replay.json", PGN_EVENT_SESSION_START},
	    {"12-UserPromptSubmit-claude-replay.json", PGN_EVENT_PROMPT},
	    {"13-PostToolUse-claude-replay.json", PGN_EVENT_AFTER_TOOL},
	    {"14-Stop-claude-replay.json", PGN_EVENT_STOP},
	};
	struct hook_opts o;
	struct pgn_payload in;
	char why[256];
	size_t i, len;
	char *buf;

	for (i = 0; i < H_COUNT(cases); i++) {
		printf("  payload copilot/%s\n", cases[i].file);
		buf = load_payload("copilot", cases[i].file, &len);
		o = opts(PGN_HOST_CLAUDE, cases[i].ev);
		CHECK_INT(pgn_payload_parse(buf, len, o.host, o.event, &in, why,
		              sizeof(why)),
		    PGN_OK);
		CHECK_INT(in.skip, 1);
		CHECK_STR(in.session, "");
		pgn_payload_release(&in);
		/* Codex and Gemini never see Copilot's runs: not skipped. */
		o = opts(PGN_HOST_GEMINI, PGN_EVENT_SESSION_START);
		CHECK_INT(pgn_payload_parse(buf, len, o.host, o.event, &in, why,
		              sizeof(why)),
		    PGN_OK);
		CHECK_INT(in.skip, 0);
		pgn_payload_release(&in);
		free(buf);
	}
	/* A real Claude payload has no timestamp: delivered as ever. */
	buf = load_payload("claude", "01-SessionStart-startup.json", &len);
	o = opts(PGN_HOST_CLAUDE, PGN_EVENT_SESSION_START);
	CHECK_INT(pgn_payload_parse(buf, len, o.host, o.event, &in, why,
	              sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.skip, 0);
	CHECK_INT(in.host, PGN_HOST_CLAUDE);
	pgn_payload_release(&in);
	free(buf);
}

/* New shapes from Copilot fail open: ignored or refused, never a crash. */
static void
test_payload_copilot_new_shapes_fail_open(void)
{
	struct hook_opts o = opts(PGN_HOST_COPILOT, PGN_EVENT_SESSION_START);
	struct pgn_payload in;
	char why[256];

	/* No session id in either spelling: refused with a reason. */
	CHECK_INT(parse("{\"timestamp\":1,\"cwd\":\"/x\"}", &o, &in, why,
	              sizeof(why)),
	    PGN_EINVAL);
	CHECK_CONTAINS(why, "no usable session id");
	/* A number where the id goes. */
	CHECK_INT(parse("{\"sessionId\":7}", &o, &in, why, sizeof(why)),
	    PGN_EINVAL);
	/* The snake_case spelling, should Copilot send it to its own hook. */
	CHECK_INT(parse("{\"session_id\":\"s1\",\"cwd\":\"/w\"}", &o, &in, why,
	              sizeof(why)),
	    PGN_OK);
	CHECK_STR(in.session, "copilot:s1");
	pgn_payload_release(&in);
	/* An event Pigeon does not register (a notification): ignored. */
	o = opts(PGN_HOST_COPILOT, PGN_EVENT_NONE);
	CHECK_INT(
	    parse("{\"sessionId\":\"s\",\"hook_event_name\":"
	          "\"Notification\",\"notification_type\":\"agent_idle\"}",
	        &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.ignore, 1);
	pgn_payload_release(&in);
}

static void
test_payload_unhandled_event_is_ignored(void)
{
	struct hook_opts o = opts(PGN_HOST_NONE, PGN_EVENT_NONE);
	struct pgn_payload in;
	char why[256];

	CHECK_INT(
	    parse("{\"hook_event_name\":\"SessionEnd\",\"session_id\":\"s1\","
	          "\"cwd\":\"/p\",\"reason\":\"exit\"}",
	        &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.ignore, 1);
	CHECK_INT(in.skip, 0);
	CHECK_INT(in.event, PGN_EVENT_NONE);
	pgn_payload_release(&in);

	CHECK_INT(parse("{\"session_id\":\"s1\"}", &o, &in, why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.ignore, 1);
	pgn_payload_release(&in);

	/* Named on the command line, the event needs no name in the payload. */
	o = opts(PGN_HOST_CLAUDE, PGN_EVENT_PROMPT);
	CHECK_INT(parse("{\"session_id\":\"s1\",\"prompt_id\":\"p\"}", &o, &in,
	              why, sizeof(why)),
	    PGN_OK);
	CHECK_INT(in.ignore, 0);
	CHECK_STR(in.turn, "UserPromptSubmit:p");
	pgn_payload_release(&in);
}

/* A payload nesting 'depth' arrays under "a". */
static char *
nested(int depth)
{
	char *p;
	size_t n = 0;
	int i;

	p = malloc((size_t)depth * 2 + 64);
	REQUIRE(p != NULL);
	n += (size_t)snprintf(p, 64, "{\"session_id\":\"s\",\"a\":");
	for (i = 0; i < depth; i++)
		p[n++] = '[';
	for (i = 0; i < depth; i++)
		p[n++] = ']';
	p[n++] = '}';
	p[n] = '\0';
	return p;
}

static void
test_payload_refusals(void)
{
	static const char *const bad[] = {
	    "[1]",
	    "\"str\"",
	    "garbage",
	    "",
	    "{",
	    "{\"a\":1,}",
	    /* no usable session id */
	    "{\"hook_event_name\":\"SessionStart\",\"cwd\":\"/p\"}",
	    "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"\"}",
	    "{\"hook_event_name\":\"SessionStart\",\"session_id\":7}",
	    "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a b\"}",
	    "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"a\\nb\"}",
	    "{\"hook_event_name\":\"sessionStart\",\"session_id\":null,\"conversation_id\":[\"x\"]}",
	};
	struct hook_opts o = opts(PGN_HOST_NONE, PGN_EVENT_NONE);
	struct pgn_payload in;
	char why[256], big[600], *deep;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (!CHECK_INT(parse(bad[i], &o, &in, why, sizeof(why)),
		        PGN_EINVAL))
			printf("  payload: %s\n", bad[i]);
		CHECK(why[0] != '\0');
		pgn_payload_release(&in);
	}
	CHECK_INT(parse("[1]", &o, &in, why, sizeof(why)), PGN_EINVAL);
	CHECK_CONTAINS(why, "not a JSON object");
	CHECK_INT(parse("{\"hook_event_name\":\"SessionStart\"}", &o, &in, why,
	              sizeof(why)),
	    PGN_EINVAL);
	CHECK_CONTAINS(why, "session id");

	/* A session id over PGN_HOOK_MAX_ID bytes. */
	i = (size_t)snprintf(big, sizeof(big),
	    "{\"hook_event_name\":"
	    "\"SessionStart\",\"session_id\":\"");
	memset(big + i, 'a', PGN_HOOK_MAX_ID + 1);
	i += PGN_HOOK_MAX_ID + 1;
	snprintf(big + i, sizeof(big) - i, "\"}");
	CHECK_INT(parse(big, &o, &in, why, sizeof(why)), PGN_EINVAL);
	pgn_payload_release(&in);

	/* Nesting: PGN_HOOK_MAX_DEPTH is fine, deeper is refused. */
	deep = nested(PGN_HOOK_MAX_DEPTH - 2);
	CHECK_INT(parse(deep, &o, &in, why, sizeof(why)), PGN_OK);
	pgn_payload_release(&in);
	free(deep);
	deep = nested(PGN_HOOK_MAX_DEPTH + 8);
	CHECK_INT(parse(deep, &o, &in, why, sizeof(why)), PGN_EINVAL);
	CHECK_CONTAINS(why, "nests deeper");
	pgn_payload_release(&in);
	free(deep);
	deep = nested(5000);
	CHECK_INT(parse(deep, &o, &in, why, sizeof(why)), PGN_EINVAL);
	pgn_payload_release(&in);
	free(deep);
}

static const struct h_test tests[] = {
    H_TEST(test_payloads_claude),
    H_TEST(test_payloads_codex),
    H_TEST(test_payloads_gemini),
    H_TEST(test_payloads_cursor),
    H_TEST(test_payloads_opencode),
    H_TEST(test_payloads_opencode_bad),
    H_TEST(test_detect_host_rules),
    H_TEST(test_payload_detection_from_fields),
    H_TEST(test_payload_hashed_keys_follow_the_bytes),
    H_TEST(test_payload_claude_hook_with_cursor_payload_is_skipped),
    H_TEST(test_payloads_copilot),
    H_TEST(test_payload_claude_hook_with_copilot_payload_is_skipped),
    H_TEST(test_payload_copilot_new_shapes_fail_open),
    H_TEST(test_payload_unhandled_event_is_ignored),
    H_TEST(test_payload_refusals),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
