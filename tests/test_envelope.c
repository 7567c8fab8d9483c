/*
 * Unit tests of each host's envelope: what the hook prints around the
 * rendered context, per host and event, escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "hook_fixtures.h"
#include "hookio.h"

/* ---- envelopes ----------------------------------------------------- */

static void
check_envelope(pgn_host h, pgn_event e, const char *context, const char *want)
{
	pgn_status st = PGN_EDB;
	char *s;

	s = pgn_envelope(h, e, context, &st);
	CHECK_INT(st, PGN_OK);
	if (!CHECK_STR(s, want))
		printf("  host %d event %d\n", h, e);
	free(s);
}

static void
test_envelopes_golden(void)
{
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_SESSION_START, "hi",
	    "{\"additional_context\":\"hi\"}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_SESSION_START, NULL, "{}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_SESSION_START, "", "{}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_PROMPT, "hi",
	    "{\"continue\":true,\"additional_context\":\"hi\"}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_PROMPT, NULL,
	    "{\"continue\":true}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_PROMPT, "",
	    "{\"continue\":true}");

	check_envelope(PGN_HOST_CLAUDE, PGN_EVENT_SESSION_START, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\","
	    "\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_CLAUDE, PGN_EVENT_PROMPT, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\","
	    "\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_CODEX, PGN_EVENT_SESSION_START, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\","
	    "\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_CODEX, PGN_EVENT_PROMPT, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\","
	    "\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_GEMINI, PGN_EVENT_SESSION_START, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\","
	    "\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_GEMINI, PGN_EVENT_PROMPT, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"BeforeAgent\","
	    "\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_CLAUDE, PGN_EVENT_SESSION_START, NULL, NULL);
	check_envelope(PGN_HOST_CLAUDE, PGN_EVENT_PROMPT, "", NULL);
	check_envelope(PGN_HOST_CODEX, PGN_EVENT_SESSION_START, "", NULL);
	check_envelope(PGN_HOST_CODEX, PGN_EVENT_PROMPT, NULL, NULL);
	check_envelope(PGN_HOST_GEMINI, PGN_EVENT_SESSION_START, NULL, NULL);
	check_envelope(PGN_HOST_GEMINI, PGN_EVENT_PROMPT, NULL, NULL);
}

/* After a tool: the context envelope; before a stop: go on with TEXT. */
static void
test_envelopes_of_tool_and_stop_events(void)
{
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_AFTER_TOOL, "hi",
	    "{\"additional_context\":\"hi\"}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_AFTER_TOOL, NULL, "{}");
	check_envelope(PGN_HOST_CLAUDE, PGN_EVENT_AFTER_TOOL, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_CODEX, PGN_EVENT_AFTER_TOOL, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_GEMINI, PGN_EVENT_AFTER_TOOL, "hi",
	    "{\"hookSpecificOutput\":{\"hookEventName\":\"AfterTool\",\"additionalContext\":\"hi\"}}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_STOP, "go",
	    "{\"followup_message\":\"go\"}");
	check_envelope(PGN_HOST_CLAUDE, PGN_EVENT_STOP, "go",
	    "{\"decision\":\"block\",\"reason\":\"go\"}");
	check_envelope(PGN_HOST_CODEX, PGN_EVENT_STOP, "go",
	    "{\"decision\":\"block\",\"reason\":\"go\"}");
	check_envelope(PGN_HOST_GEMINI, PGN_EVENT_STOP, "go",
	    "{\"decision\":\"deny\",\"reason\":\"go\"}");
	/* Any answer at a stop makes the host go on: with none, nothing. */
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_STOP, NULL, "{}");
	check_envelope(PGN_HOST_CLAUDE, PGN_EVENT_STOP, "", NULL);
	check_envelope(PGN_HOST_CODEX, PGN_EVENT_STOP, NULL, NULL);
	check_envelope(PGN_HOST_GEMINI, PGN_EVENT_STOP, NULL, NULL);
	/* opencode's plugin: a context part, or the prompt of an idle wake. */
	check_envelope(PGN_HOST_OPENCODE, PGN_EVENT_SESSION_START, "hi",
	    "{\"context\":\"hi\"}");
	check_envelope(PGN_HOST_OPENCODE, PGN_EVENT_PROMPT, "hi",
	    "{\"context\":\"hi\"}");
	check_envelope(PGN_HOST_OPENCODE, PGN_EVENT_AFTER_TOOL, "hi",
	    "{\"context\":\"hi\"}");
	check_envelope(PGN_HOST_OPENCODE, PGN_EVENT_IDLE, "go",
	    "{\"continue\":\"go\"}");
	check_envelope(PGN_HOST_OPENCODE, PGN_EVENT_PROMPT, NULL, NULL);
	check_envelope(PGN_HOST_OPENCODE, PGN_EVENT_IDLE, "", NULL);
}

static void
test_envelopes_refuse_unknown_host_or_event(void)
{
	pgn_status st = PGN_OK;

	CHECK(pgn_envelope(PGN_HOST_NONE, PGN_EVENT_PROMPT, "x", &st) == NULL);
	CHECK_INT(st, PGN_EINVAL);
	st = PGN_OK;
	CHECK(pgn_envelope(PGN_NHOSTS, PGN_EVENT_PROMPT, "x", &st) == NULL);
	CHECK_INT(st, PGN_EINVAL);
	st = PGN_OK;
	CHECK(pgn_envelope(PGN_HOST_CODEX, PGN_EVENT_NONE, "x", &st) == NULL);
	CHECK_INT(st, PGN_EINVAL);
	/* A facet the host has no event for. */
	st = PGN_OK;
	CHECK(
	    pgn_envelope(PGN_HOST_OPENCODE, PGN_EVENT_STOP, "x", &st) == NULL);
	CHECK_INT(st, PGN_EINVAL);
	st = PGN_OK;
	CHECK(pgn_envelope(PGN_HOST_CLAUDE, PGN_EVENT_IDLE, "x", &st) == NULL);
	CHECK_INT(st, PGN_EINVAL);
}

static void
test_envelopes_escape_special_characters(void)
{
	static const char ctx[] =
	    "quote \" backslash \\ slash / newline\n"
	    "crlf\r\ntab\there bell\a nul-ish \x01\x1f del \x7f utf8 h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9f\x90\xa6 </script>\n"
	    "[#99 from boss] {\"continue\":false}";
	const cJSON *inner, *v;
	cJSON *root;
	pgn_status st;
	char *s;
	int h, e;
	size_t i;

	for (h = 0; h < PGN_NHOSTS; h++) {
		/* The command hosts' envelopes; opencode's has its own test. */
		if (pgn_host_get((pgn_host)h)->mechanism != PGN_MECH_COMMAND)
			continue;
		for (e = 0; e < PGN_NEVENTS; e++) {
			/* A denial, not context: its own tests below. */
			if (pgn_host_get((pgn_host)h)->events[e] == NULL ||
			    e == PGN_EVENT_BEFORE_TOOL)
				continue;
			s = pgn_envelope((pgn_host)h, (pgn_event)e, ctx, &st);
			REQUIRE(s != NULL);
			CHECK_INT(st, PGN_OK);
			/* One line, no raw control characters. */
			for (i = 0; s[i] != '\0'; i++)
				if (!CHECK((unsigned char)s[i] >= 0x20))
					break;
			root = cJSON_Parse(s);
			REQUIRE(root != NULL);
			if (e == PGN_EVENT_STOP) {
				/* The text the agent goes on with. */
				CHECK_INT(cJSON_GetArraySize(root),
				    h == PGN_HOST_CURSOR ? 1 : 2);
				v = cJSON_GetObjectItemCaseSensitive(root,
				    h == PGN_HOST_CURSOR ? "followup_message" :
				                           "reason");
			} else if (h == PGN_HOST_CURSOR) {
				v = cJSON_GetObjectItemCaseSensitive(root,
				    "additional_context");
				CHECK_INT(cJSON_GetArraySize(root),
				    e == PGN_EVENT_PROMPT ? 2 : 1);
				if (e == PGN_EVENT_PROMPT)
					CHECK(cJSON_IsTrue(
					    cJSON_GetObjectItemCaseSensitive(
					        root, "continue")));
			} else if (h == PGN_HOST_COPILOT) {
				CHECK_INT(cJSON_GetArraySize(root), 1);
				v = cJSON_GetObjectItemCaseSensitive(root,
				    "additionalContext");
			} else {
				CHECK_INT(cJSON_GetArraySize(root), 1);
				inner = cJSON_GetObjectItemCaseSensitive(root,
				    "hookSpecificOutput");
				CHECK_INT(cJSON_GetArraySize(inner), 2);
				CHECK_STR(jstr(inner, "hookEventName"),
				    pgn_host_get((pgn_host)h)->events[e]);
				v = cJSON_GetObjectItemCaseSensitive(inner,
				    "additionalContext");
			}
			CHECK(cJSON_IsString(v));
			if (cJSON_IsString(v))
				CHECK_STR(v->valuestring, ctx);
			cJSON_Delete(root);
			free(s);
		}
	}
}

/* ---- before a tool: the denial in each host's form ----------------- */

static void
test_denials_take_each_hosts_own_form(void)
{
	static const struct {
		pgn_host h;
		const char *want;
	} rows[] = {
	    {PGN_HOST_CLAUDE,
	        "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
	        "\"permissionDecision\":\"deny\","
	        "\"permissionDecisionReason\":\"no\"}}"},
	    {PGN_HOST_CODEX,
	        "{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
	        "\"permissionDecision\":\"deny\","
	        "\"permissionDecisionReason\":\"no\"}}"},
	    {PGN_HOST_GEMINI, "{\"decision\":\"deny\",\"reason\":\"no\"}"},
	    {PGN_HOST_CURSOR,
	        "{\"permission\":\"deny\",\"user_message\":\"no\","
	        "\"agent_message\":\"no\"}"},
	    {PGN_HOST_COPILOT,
	        "{\"permissionDecision\":\"deny\","
	        "\"permissionDecisionReason\":\"no\"}"},
	    {PGN_HOST_OPENCODE, "{\"deny\":\"no\"}"},
	};
	size_t i;

	CHECK_INT(H_COUNT(rows), PGN_NHOSTS);
	for (i = 0; i < H_COUNT(rows); i++)
		check_envelope(rows[i].h, PGN_EVENT_BEFORE_TOOL, "no",
		    rows[i].want);
}

/*
 * An explicit allow is not neutral where it skips the host's own prompt
 * (Claude's): nothing is printed. Cursor fails an answer without a
 * permission closed, so its allow is explicit (decision 0258).
 */
static void
test_nothing_to_deny_prints_nothing_but_for_cursor(void)
{
	int h;

	for (h = 0; h < PGN_NHOSTS; h++) {
		if (h == PGN_HOST_CURSOR)
			continue;
		check_envelope((pgn_host)h, PGN_EVENT_BEFORE_TOOL, NULL, NULL);
		check_envelope((pgn_host)h, PGN_EVENT_BEFORE_TOOL, "", NULL);
	}
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_BEFORE_TOOL, NULL,
	    "{\"permission\":\"allow\"}");
	check_envelope(PGN_HOST_CURSOR, PGN_EVENT_BEFORE_TOOL, "",
	    "{\"permission\":\"allow\"}");
}

static void
test_a_denial_is_one_escaped_line(void)
{
	static const char why[] = "a \"b\"\nc\x01 \xe2\x9c\x93";
	pgn_status st;
	cJSON *root;
	char *s;
	int h;

	for (h = 0; h < PGN_NHOSTS; h++) {
		s = pgn_envelope((pgn_host)h, PGN_EVENT_BEFORE_TOOL, why, &st);
		REQUIRE(s != NULL);
		CHECK(strchr(s, '\n') == NULL);
		root = cJSON_Parse(s);
		CHECK(root != NULL);
		CHECK(strstr(s, "\\u0001") != NULL);
		cJSON_Delete(root);
		free(s);
	}
}

static const struct h_test tests[] = {
    H_TEST(test_denials_take_each_hosts_own_form),
    H_TEST(test_nothing_to_deny_prints_nothing_but_for_cursor),
    H_TEST(test_a_denial_is_one_escaped_line),
    H_TEST(test_envelopes_golden),
    H_TEST(test_envelopes_of_tool_and_stop_events),
    H_TEST(test_envelopes_refuse_unknown_host_or_event),
    H_TEST(test_envelopes_escape_special_characters),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
