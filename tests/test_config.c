/*
 * Unit tests of the project config, <project>/.pigeon/config.json:
 * pgn_config_parse on every bound of both features from both sides
 * (the prompt reminder: characters, lines, controls, UTF-8, trimming;
 * promptContext: command, entries, path escapes, timeoutMs,
 * maxOutputBytes), each feature all or nothing and independent of the
 * other, whole-file problems turning both off, unknown keys reported
 * and harmless, and pgn_config_load on missing, global, oversized and
 * unreadable files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "pgn_int.h"
#include "pigeon/hook.h"
#include "pigeon/setup.h"

/* ---- helpers ------------------------------------------------------- */

#define MAX_JSON (1 << 20)

static char json[MAX_JSON];

/* Format the document under test into 'json'. */
static const char *doc(const char *fmt, ...) PGN_PRINTF(1, 2);

static const char *
doc(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(json, sizeof(json), fmt, ap);
	va_end(ap);
	REQUIRE(n >= 0 && (size_t)n < sizeof(json));
	return json;
}

/* 'n' copies of 's' as a new string (the caller frees). */
static char *
rep(const char *s, size_t n)
{
	struct pgn_buf b;
	char *out;

	pgn_buf_init(&b, MAX_JSON);
	while (n-- > 0)
		pgn_buf_adds(&b, s);
	out = pgn_buf_take(&b, NULL);
	REQUIRE(out != NULL);
	return out;
}

/* Parse 'text' (strlen bytes); the call itself must succeed. */
static void
parse(const char *text, struct pgn_config *c)
{
	pgn_status rc;

	rc = pgn_config_parse(text, strlen(text), c);
	if (!CHECK_INT(rc, PGN_OK)) {
		printf("  parsing: %s\n", text);
		longjmp(h_abort, 1);
	}
}

/*
 * A config whose reminder is the JSON string body 'raw' (already
 * escaped as JSON wants) next to a valid provider.
 */
static void
parse_reminder(const char *raw, struct pgn_config *c)
{
	struct pgn_buf b;
	char *text;

	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_adds(&b, "{\"instructions\":{\"promptReminder\":\"");
	pgn_buf_adds(&b, raw);
	pgn_buf_adds(&b, "\"},\"promptContext\":{\"command\":[\"bin/p\"]}}");
	text = pgn_buf_take(&b, NULL);
	REQUIRE(text != NULL);
	parse(text, c);
	free(text);
}

/* The reminder of 'raw' is kept as 'want'; nothing else is touched. */
static int
reminder_ok(const char *raw, const char *want)
{
	struct pgn_config c;
	int ok;

	parse_reminder(raw, &c);
	ok = CHECK_STR(c.reminder, want) && CHECK(c.reminder_problem == NULL) &&
	    CHECK(c.problem == NULL) && CHECK_INT(c.argc, 1);
	if (!ok)
		printf("  reminder: \"%.80s\" (problem: %s)\n", raw,
		    c.reminder_problem ? c.reminder_problem : "none");
	pgn_config_release(&c);
	return ok;
}

/*
 * The reminder of 'raw' is refused with a problem naming the field and
 * holding 'why'; the provider next to it stays on.
 */
static int
reminder_refused(const char *raw, const char *why)
{
	struct pgn_config c;
	int ok;

	parse_reminder(raw, &c);
	ok = CHECK(c.reminder == NULL) &&
	    CHECK_CONTAINS(c.reminder_problem, "instructions.promptReminder") &&
	    CHECK_CONTAINS(c.reminder_problem, why) &&
	    CHECK(c.problem == NULL) && CHECK_INT(c.argc, 1) &&
	    CHECK_STR(c.argv[0], "bin/p") && CHECK(c.provider_problem == NULL);
	if (!ok)
		printf("  reminder: \"%.80s\"\n", raw);
	pgn_config_release(&c);
	return ok;
}

/*
 * A config with a valid reminder and promptContext {'inner'}: parse it.
 * The reminder must survive whatever 'inner' holds.
 */
static void
parse_pc(const char *inner, struct pgn_config *c)
{
	struct pgn_buf b;
	char *text;

	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_adds(&b,
	    "{\"instructions\":{\"promptReminder\":\"keep me\"},"
	    "\"promptContext\":{");
	pgn_buf_adds(&b, inner);
	pgn_buf_adds(&b, "}}");
	text = pgn_buf_take(&b, NULL);
	REQUIRE(text != NULL);
	parse(text, c);
	free(text);
	CHECK_STR(c->reminder, "keep me");
	CHECK(c->reminder_problem == NULL);
	CHECK(c->problem == NULL);
}

/* promptContext {'inner'} is accepted; 'c' holds it (caller releases). */
static int
pc_ok(const char *inner, struct pgn_config *c)
{
	parse_pc(inner, c);
	if (CHECK(c->provider_problem == NULL) && CHECK(c->argc > 0) &&
	    CHECK(c->argv != NULL) && CHECK(c->argv[c->argc] == NULL))
		return 1;
	printf("  promptContext: {%.120s} (problem: %s)\n", inner,
	    c->provider_problem ? c->provider_problem : "none");
	return 0;
}

/*
 * promptContext {'inner'} is refused as a whole, with a problem holding
 * 'field'; the reminder is untouched (checked by parse_pc).
 */
static int
pc_refused(const char *inner, const char *field)
{
	struct pgn_config c;
	int ok;

	parse_pc(inner, &c);
	ok = CHECK_INT(c.argc, 0) && CHECK(c.argv == NULL) &&
	    CHECK_CONTAINS(c.provider_problem, field);
	if (!ok)
		printf("  promptContext: {%.120s}\n", inner);
	pgn_config_release(&c);
	return ok;
}

/* The whole file is refused: c->problem holds 'why', both are off. */
static int
file_refused(const char *text, size_t len, const char *why)
{
	struct pgn_config c;
	int ok;

	REQUIRE(pgn_config_parse(text, len, &c) == PGN_OK);
	ok = CHECK_CONTAINS(c.problem, why) && CHECK(c.reminder == NULL) &&
	    CHECK(c.reminder_problem == NULL) && CHECK_INT(c.argc, 0) &&
	    CHECK(c.argv == NULL) && CHECK(c.provider_problem == NULL);
	if (!ok)
		printf("  file: \"%.80s\" (%zu bytes)\n", text, len);
	pgn_config_release(&c);
	return ok;
}

/* Write h_tmp/proj/.pigeon/config.json; returns the project root. */
static const char *
project_with(const void *data, size_t len)
{
	static char root[PATH_MAX];
	char path[PATH_MAX];

	H_PATH(root, "proj");
	h_mkdir(root);
	h_join(path, sizeof(path), root, ".pigeon");
	h_mkdir(path);
	h_join(path, sizeof(path), root, ".pigeon/config.json");
	h_write_file(path, data, len);
	return root;
}

/* ---- the reminder -------------------------------------------------- */

static void
test_reminder_of_one_and_of_500_characters_is_kept(void)
{
	char *s;

	reminder_ok("x", "x");
	reminder_ok("\303\251", "\303\251"); /* é: 1 character, 2 bytes */
	s = rep("a", PGN_MAX_REMINDER);
	reminder_ok(s, s);
	free(s);
}

static void
test_reminder_counts_characters_not_bytes(void)
{
	char *s, *t;

	/* 500 characters of 2, 3 and 4 bytes: 1000 to 2000 bytes, fine. */
	s = rep("\303\251", PGN_MAX_REMINDER);
	CHECK_INT(strlen(s), 1000);
	reminder_ok(s, s);
	free(s);
	s = rep("\342\202\254", PGN_MAX_REMINDER); /* € */
	reminder_ok(s, s);
	free(s);
	s = rep("\360\237\220\246", PGN_MAX_REMINDER); /* a bird */
	CHECK_INT(strlen(s), 2000);
	reminder_ok(s, s);
	free(s);
	/* Escaped in JSON: "\u00e9" x 500 decodes to 500 characters. */
	s = rep("\\u00e9", PGN_MAX_REMINDER);
	t = rep("\303\251", PGN_MAX_REMINDER);
	reminder_ok(s, t);
	free(s);
	free(t);
	/* A surrogate pair is one character. */
	s = rep("\\ud83d\\udc26", PGN_MAX_REMINDER);
	t = rep("\360\237\220\246", PGN_MAX_REMINDER);
	reminder_ok(s, t);
	free(s);
	free(t);
}

static void
test_reminder_of_501_characters_is_refused(void)
{
	char *s;

	s = rep("a", PGN_MAX_REMINDER + 1);
	reminder_refused(s, "has 501 characters, over 500");
	free(s);
	s = rep("\303\251", PGN_MAX_REMINDER + 1);
	reminder_refused(s, "has 501 characters, over 500");
	free(s);
	s = rep("\360\237\220\246", PGN_MAX_REMINDER + 1);
	reminder_refused(s, "over 500");
	free(s);
}

static void
test_reminder_bound_applies_after_trimming(void)
{
	struct pgn_buf b;
	char *s, *in;

	/* 500 characters inside spaces: trimmed, then within the bound. */
	s = rep("b", PGN_MAX_REMINDER);
	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_addf(&b, "   %s \\t ", s);
	in = pgn_buf_take(&b, NULL);
	REQUIRE(in != NULL);
	reminder_ok(in, s);
	free(in);
	free(s);
	/* 501 inside spaces: the count given is of the trimmed text. */
	s = rep("b", PGN_MAX_REMINDER + 1);
	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_addf(&b, "  %s    ", s);
	in = pgn_buf_take(&b, NULL);
	REQUIRE(in != NULL);
	reminder_refused(in, "has 501 characters, over 500");
	free(in);
	free(s);
}

static void
test_reminder_empty_or_blank_is_refused(void)
{
	reminder_refused("", "is empty");
	reminder_refused(" ", "is empty");
	reminder_refused("     ", "is empty");
	reminder_refused("\\t", "is empty");
	reminder_refused(" \\t \\t ", "is empty");
}

static void
test_reminder_surrounding_spaces_are_trimmed(void)
{
	reminder_ok("  run the tests  ", "run the tests");
	reminder_ok("\\trun the tests\\t", "run the tests");
	reminder_ok(" \\t x \\t ", "x");
	/* Inner spaces stay as written. */
	reminder_ok("a   b", "a   b");
	reminder_ok("  h\303\251llo  w\303\266rld ",
	    "h\303\251llo  w\303\266rld");
}

static void
test_reminder_with_a_line_break_is_refused(void)
{
	reminder_refused("one\\ntwo", "must be one line");
	reminder_refused("one\\rtwo", "must be one line");
	reminder_refused("one\\r\\ntwo", "must be one line");
	/* Line breaks are not trimmed away like spaces. */
	reminder_refused("one\\n", "must be one line");
	reminder_refused("\\none", "must be one line");
	reminder_refused("\\n", "must be one line");
	/* Raw control bytes inside a JSON string (cJSON takes them). */
	reminder_refused("one\ntwo", "must be one line");
	reminder_refused("one\rtwo", "must be one line");
}

static void
test_reminder_with_a_control_character_is_refused(void)
{
	reminder_refused("a\\u0001b", "control character");
	reminder_refused("a\\u001bb", "control character"); /* ESC */
	reminder_refused("a\\u001fb", "control character");
	reminder_refused("a\\tb", "control character"); /* an inner tab */
	reminder_refused("a\\bb", "control character");
	reminder_refused("a\\fb", "control character");
	reminder_refused("a\\u007fb", "control character"); /* DEL */
	reminder_refused("a\177b", "control character");    /* raw DEL */
	reminder_refused("a\001b", "control character");    /* raw 0x01 */
}

static void
test_reminder_holding_an_escaped_nul_is_not_cut_short(void)
{
	static const char nul1[] = "{\"instructions\":{\"promptReminder\":"
	                           "\"a\\u0000b\"}}";
	static const char nul2[] = "{\"promptContext\":{\"command\":"
	                           "[\"p\\u0000x\"]}}";
	struct pgn_config c;

	/* "\u0000" would end the decoded string at "a": never accepted. */
	file_refused(nul1, sizeof(nul1) - 1, "holds \\u0000");
	parse_reminder("\\u0000", &c);
	CHECK(c.reminder == NULL);
	CHECK_CONTAINS(c.problem, "holds \\u0000 (a NUL character)");
	CHECK_INT(c.argc, 0);
	pgn_config_release(&c);
	/* Nor in a provider argument. */
	file_refused(nul2, sizeof(nul2) - 1, "holds \\u0000");
	/* An escaped backslash before "u0000" is plain text. */
	reminder_ok("a\\\\u0000b", "a\\u0000b");
}

static void
test_reminder_of_invalid_utf8_is_refused(void)
{
	struct pgn_config c;

	reminder_refused("\377", "not valid UTF-8");
	reminder_refused("ab\303", "not valid UTF-8"); /* cut sequence */
	reminder_refused("\303(", "not valid UTF-8");
	reminder_refused("\300\257", "not valid UTF-8");     /* overlong / */
	reminder_refused("\340\200\257", "not valid UTF-8"); /* overlong */
	reminder_refused("\355\240\200", "not valid UTF-8"); /* surrogate */
	reminder_refused("\364\220\200\200",
	    "not valid UTF-8");                      /* > U+10FFFF */
	reminder_refused("\200", "not valid UTF-8"); /* lone continuation */
	/* A lone escaped surrogate is not even JSON: the file is refused. */
	parse_reminder("\\ud800", &c);
	CHECK(c.reminder == NULL);
	CHECK_CONTAINS(c.problem, "not valid JSON");
	pgn_config_release(&c);
}

static void
test_reminder_that_is_not_a_string_is_refused(void)
{
	struct pgn_config c;
	static const char *const bad[] = {"1", "null", "true", "[\"x\"]",
	    "{\"a\":\"b\"}"};
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		parse(doc("{\"instructions\":{\"promptReminder\":%s},"
		          "\"promptContext\":{\"command\":[\"p\"]}}",
		          bad[i]),
		    &c);
		CHECK(c.reminder == NULL);
		CHECK_CONTAINS(c.reminder_problem,
		    "instructions.promptReminder must be a string");
		CHECK_INT(c.argc, 1);
		pgn_config_release(&c);
	}
	/* instructions itself must be an object. */
	parse("{\"instructions\":\"be nice\","
	      "\"promptContext\":{\"command\":[\"p\"]}}",
	    &c);
	CHECK(c.reminder == NULL);
	CHECK_CONTAINS(c.reminder_problem, "instructions must be an object");
	CHECK_INT(c.argc, 1);
	pgn_config_release(&c);
	/* instructions without a reminder: nothing, and no problem. */
	parse("{\"instructions\":{}}", &c);
	CHECK(c.reminder == NULL);
	CHECK(c.reminder_problem == NULL);
	pgn_config_release(&c);
}

/* ---- promptContext.command ----------------------------------------- */

static void
test_command_missing_or_not_an_array_is_refused(void)
{
	pc_refused("", "promptContext.command must be an array of strings");
	pc_refused("\"timeoutMs\":100",
	    "promptContext.command must be an array");
	pc_refused("\"command\":\"scripts/ctx\"",
	    "promptContext.command must be an array");
	pc_refused("\"command\":null",
	    "promptContext.command must be an array");
	pc_refused("\"command\":{\"0\":\"x\"}",
	    "promptContext.command must be an array");
	pc_refused("\"command\":7", "promptContext.command must be an array");
}

static void
test_prompt_context_that_is_not_an_object_is_refused(void)
{
	struct pgn_config c;
	static const char *const bad[] = {"null", "[\"scripts/ctx\"]",
	    "\"scripts/ctx\"", "1", "false"};
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		parse(doc("{\"instructions\":{\"promptReminder\":\"r\"},"
		          "\"promptContext\":%s}",
		          bad[i]),
		    &c);
		CHECK_INT(c.argc, 0);
		CHECK_CONTAINS(c.provider_problem,
		    "promptContext must be an object");
		CHECK_STR(c.reminder, "r");
		pgn_config_release(&c);
	}
}

static void
test_command_empty_is_refused(void)
{
	pc_refused("\"command\":[]",
	    "promptContext.command must have 1 to 32 entries");
}

static void
test_command_of_32_entries_is_kept_33_refused(void)
{
	struct pgn_buf b;
	struct pgn_config c;
	char *inner;
	size_t i;

	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_adds(&b, "\"command\":[\"bin/p\"");
	for (i = 1; i < PGN_MAX_PROVIDER_ARGS; i++)
		pgn_buf_addf(&b, ",\"arg%zu\"", i);
	pgn_buf_adds(&b, "]");
	inner = pgn_buf_take(&b, NULL);
	REQUIRE(inner != NULL);
	if (pc_ok(inner, &c)) {
		CHECK_INT(c.argc, 32);
		CHECK_STR(c.argv[0], "bin/p");
		CHECK_STR(c.argv[1], "arg1");
		CHECK_STR(c.argv[31], "arg31");
		CHECK(c.argv[32] == NULL);
	}
	pgn_config_release(&c);
	free(inner);

	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_adds(&b, "\"command\":[\"bin/p\"");
	for (i = 1; i <= PGN_MAX_PROVIDER_ARGS; i++)
		pgn_buf_addf(&b, ",\"arg%zu\"", i);
	pgn_buf_adds(&b, "]");
	inner = pgn_buf_take(&b, NULL);
	REQUIRE(inner != NULL);
	pc_refused(inner, "promptContext.command must have 1 to 32 entries");
	free(inner);
}

static void
test_command_entry_must_be_a_nonempty_string(void)
{
	pc_refused("\"command\":[\"\"]",
	    "promptContext.command[0] must be a string of 1 to 1024 bytes");
	pc_refused("\"command\":[\"bin/p\",\"\"]", "promptContext.command[1]");
	pc_refused("\"command\":[\"bin/p\",\"a\",7]",
	    "promptContext.command[2] must be a string");
	pc_refused("\"command\":[\"bin/p\",null]", "promptContext.command[1]");
	pc_refused("\"command\":[\"bin/p\",true]", "promptContext.command[1]");
	pc_refused("\"command\":[\"bin/p\",[\"x\"]]",
	    "promptContext.command[1]");
	pc_refused("\"command\":[{\"path\":\"bin/p\"}]",
	    "promptContext.command[0]");
	pc_refused("\"command\":[1]", "promptContext.command[0]");
}

static void
test_command_entry_of_1024_bytes_is_kept_1025_refused(void)
{
	struct pgn_config c;
	char *a1024, *a1025, *e512;

	a1024 = rep("x", PGN_MAX_PROVIDER_ARG);
	a1025 = rep("x", PGN_MAX_PROVIDER_ARG + 1);
	e512 = rep("\303\251", PGN_MAX_PROVIDER_ARG / 2); /* 1024 bytes */
	if (pc_ok(doc("\"command\":[\"bin/p\",\"%s\"]", a1024), &c))
		CHECK_INT(strlen(c.argv[1]), 1024);
	pgn_config_release(&c);
	if (pc_ok(doc("\"command\":[\"%s\"]", a1024), &c))
		CHECK_STR(c.argv[0], a1024);
	pgn_config_release(&c);
	if (pc_ok(doc("\"command\":[\"bin/p\",\"%s\"]", e512), &c))
		CHECK_STR(c.argv[1], e512);
	pgn_config_release(&c);
	pc_refused(doc("\"command\":[\"bin/p\",\"%s\"]", a1025),
	    "promptContext.command[1] must be a string of 1 to 1024 bytes");
	pc_refused(doc("\"command\":[\"%s\"]", a1025),
	    "promptContext.command[0]");
	/* 513 two-byte characters: 1026 bytes. */
	free(e512);
	e512 = rep("\303\251", PGN_MAX_PROVIDER_ARG / 2 + 1);
	pc_refused(doc("\"command\":[\"bin/p\",\"%s\"]", e512),
	    "promptContext.command[1]");
	free(a1024);
	free(a1025);
	free(e512);
}

static void
test_command_program_outside_the_project_is_refused(void)
{
	static const char *const bad[] = {"/bin/echo", "/", "..", "../x",
	    "../../etc/passwd", "a/../../x", "a/..", "a/b/../..",
	    "scripts/../../x", "..//x", "./../x", "a/../x/.."};
	struct pgn_config c;
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++)
		pc_refused(doc("\"command\":[\"%s\",\"arg\"]", bad[i]),
		    "promptContext.command[0] must be a path inside the project, relative to its root");
	/* Only the program is a path: arguments may name anything. */
	if (pc_ok("\"command\":[\"bin/p\",\"/etc/hosts\",\"../x\",\"..\"]",
	        &c)) {
		CHECK_INT(c.argc, 4);
		CHECK_STR(c.argv[1], "/etc/hosts");
		CHECK_STR(c.argv[3], "..");
	}
	pgn_config_release(&c);
	/* Names that merely contain dots stay inside. */
	pc_ok("\"command\":[\"..x\"]", &c);
	pgn_config_release(&c);
	pc_ok("\"command\":[\"a..b/c\"]", &c);
	pgn_config_release(&c);
	pc_ok("\"command\":[\"./scripts/ctx\"]", &c);
	pgn_config_release(&c);
	pc_ok("\"command\":[\"x/..y\"]", &c);
	pgn_config_release(&c);
}

/* ---- timeoutMs and maxOutputBytes ---------------------------------- */

static void
test_timeout_bounds(void)
{
	static const char *const bad[] = {"0", "5001", "1.5", "\"100\"", "-1",
	    "null", "true", "[100]", "1e300", "-1e300", "4999.5", "1e-3",
	    "9223372036854775807", "18446744073709551616"};
	struct pgn_config c;
	size_t i;

	if (pc_ok("\"command\":[\"p\"],\"timeoutMs\":1", &c))
		CHECK_INT(c.timeout_ms, 1);
	pgn_config_release(&c);
	if (pc_ok("\"command\":[\"p\"],\"timeoutMs\":5000", &c))
		CHECK_INT(c.timeout_ms, 5000);
	pgn_config_release(&c);
	if (pc_ok("\"command\":[\"p\"],\"timeoutMs\":2.5e3", &c))
		CHECK_INT(c.timeout_ms, 2500);
	pgn_config_release(&c);
	if (pc_ok("\"command\":[\"p\"]", &c)) {
		CHECK_INT(c.timeout_ms, PGN_PROVIDER_TIMEOUT_DEFAULT);
		CHECK_INT(c.timeout_ms, 1000);
	}
	pgn_config_release(&c);
	for (i = 0; i < H_COUNT(bad); i++)
		if (!pc_refused(doc("\"command\":[\"p\"],\"timeoutMs\":%s",
		                    bad[i]),
		        "promptContext.timeoutMs must be an integer from 1 to 5000"))
			printf("  timeoutMs %s\n", bad[i]);
}

static void
test_max_output_bounds(void)
{
	static const char *const bad[] = {"0", "65537", "1.5", "\"8192\"", "-1",
	    "null", "false", "{}", "1e300", "1e10"};
	struct pgn_config c;
	size_t i;

	if (pc_ok("\"command\":[\"p\"],\"maxOutputBytes\":1", &c))
		CHECK_INT(c.max_output, 1);
	pgn_config_release(&c);
	if (pc_ok("\"command\":[\"p\"],\"maxOutputBytes\":65536", &c))
		CHECK_INT(c.max_output, 65536);
	pgn_config_release(&c);
	if (pc_ok("\"command\":[\"p\"]", &c)) {
		CHECK_INT(c.max_output, PGN_PROVIDER_OUTPUT_DEFAULT);
		CHECK_INT(c.max_output, 8192);
	}
	pgn_config_release(&c);
	for (i = 0; i < H_COUNT(bad); i++)
		if (!pc_refused(doc("\"command\":[\"p\"],\"maxOutputBytes\":%s",
		                    bad[i]),
		        "promptContext.maxOutputBytes must be an integer from 1 to 65536"))
			printf("  maxOutputBytes %s\n", bad[i]);
}

static void
test_full_prompt_context_is_read_whole(void)
{
	struct pgn_config c;

	parse("{\"instructions\":{\"promptReminder\":\"Run make test.\"},"
	      "\"promptContext\":{\"command\":[\"scripts/prompt-context\","
	      "\"--brief\"],\"timeoutMs\":750,\"maxOutputBytes\":4096}}",
	    &c);
	CHECK_STR(c.reminder, "Run make test.");
	CHECK_INT(c.argc, 2);
	CHECK_STR(c.argv[0], "scripts/prompt-context");
	CHECK_STR(c.argv[1], "--brief");
	CHECK(c.argv[2] == NULL);
	CHECK_INT(c.timeout_ms, 750);
	CHECK_INT(c.max_output, 4096);
	CHECK(c.problem == NULL);
	CHECK(c.reminder_problem == NULL);
	CHECK(c.provider_problem == NULL);
	CHECK(c.unknown == NULL);
	pgn_config_release(&c);
	/* Released twice is harmless: release leaves it zeroed. */
	CHECK(c.argv == NULL && c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
	pgn_config_release(NULL);
}

/* ---- each feature all or nothing ----------------------------------- */

static void
test_invalid_prompt_context_leaves_the_reminder_working(void)
{
	struct pgn_config c;

	/* A good command, a bad bound: the command is not half kept. */
	parse("{\"instructions\":{\"promptReminder\":\"stay\"},"
	      "\"promptContext\":{\"command\":[\"p\",\"a\"],\"timeoutMs\":0}}",
	    &c);
	CHECK_STR(c.reminder, "stay");
	CHECK(c.reminder_problem == NULL);
	CHECK_INT(c.argc, 0);
	CHECK(c.argv == NULL);
	CHECK_CONTAINS(c.provider_problem, "promptContext.timeoutMs");
	CHECK(c.problem == NULL);
	pgn_config_release(&c);
	parse("{\"promptContext\":{\"command\":[\"p\"],\"maxOutputBytes\":0},"
	      "\"instructions\":{\"promptReminder\":\"stay\"}}",
	    &c);
	CHECK_STR(c.reminder, "stay");
	CHECK_INT(c.argc, 0);
	CHECK_CONTAINS(c.provider_problem, "promptContext.maxOutputBytes");
	pgn_config_release(&c);
}

static void
test_invalid_reminder_leaves_the_provider_working(void)
{
	struct pgn_config c;

	parse("{\"instructions\":{\"promptReminder\":\"two\\nlines\"},"
	      "\"promptContext\":{\"command\":[\"scripts/ctx\",\"-v\"],"
	      "\"timeoutMs\":300,\"maxOutputBytes\":100}}",
	    &c);
	CHECK(c.reminder == NULL);
	CHECK_CONTAINS(c.reminder_problem,
	    "instructions.promptReminder must be one line");
	CHECK(c.provider_problem == NULL);
	CHECK(c.problem == NULL);
	CHECK_INT(c.argc, 2);
	CHECK_STR(c.argv[0], "scripts/ctx");
	CHECK_STR(c.argv[1], "-v");
	CHECK_INT(c.timeout_ms, 300);
	CHECK_INT(c.max_output, 100);
	pgn_config_release(&c);
}

static void
test_both_invalid_name_both_fields(void)
{
	struct pgn_config c;

	parse("{\"instructions\":{\"promptReminder\":\"\"},"
	      "\"promptContext\":{\"command\":[\"/bin/sh\"]}}",
	    &c);
	CHECK(c.reminder == NULL);
	CHECK_INT(c.argc, 0);
	CHECK_CONTAINS(c.reminder_problem, "instructions.promptReminder");
	CHECK_CONTAINS(c.provider_problem, "promptContext.command[0]");
	CHECK(c.problem == NULL);
	pgn_config_release(&c);
}

static void
test_nothing_configured(void)
{
	struct pgn_config c;

	parse("{}", &c);
	CHECK(c.reminder == NULL && c.reminder_problem == NULL);
	CHECK(c.argc == 0 && c.argv == NULL && c.provider_problem == NULL);
	CHECK(c.problem == NULL && c.unknown == NULL);
	pgn_config_release(&c);
	parse(" \n{ }\n ", &c);
	CHECK(c.problem == NULL);
	pgn_config_release(&c);
}

/* ---- the file as a whole ------------------------------------------- */

static void
test_invalid_json_turns_both_off(void)
{
	static const char *const bad[] = {"", " ", "{", "}",
	    "{\"instructions\":",
	    "{\"instructions\":{\"promptReminder\":\"x\"},}",
	    "{\"instructions\":{\"promptReminder\":\"x\"}} x",
	    "{\"instructions\":{\"promptReminder\":\"x\"}}{}",
	    "{'instructions':1}", "{\"a\":tru}",
	    "{\"promptContext\":{\"command\":[\"p\",]}}"};
	static const char nul[] = "{\"instructions\":{\"promptReminder\":"
	                          "\"x\"}}\0";
	static const char nul2[] = "{\"instructions\":{\"promptReminder\":"
	                           "\"a\0b\"}}";
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++)
		file_refused(bad[i], strlen(bad[i]), "is not valid JSON");
	/* A NUL byte, inside a string or after the object. */
	file_refused(nul, sizeof(nul) - 1, "is not valid JSON");
	file_refused(nul2, sizeof(nul2) - 1, "is not valid JSON");
	/* Only the given length counts: a valid prefix is not enough. */
	file_refused("{}", 1, "is not valid JSON");
}

static void
test_json_that_is_not_an_object_turns_both_off(void)
{
	static const char *const bad[] = {"[]", "[{\"instructions\":{}}]",
	    "\"x\"", "1", "null", "true"};
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++)
		file_refused(bad[i], strlen(bad[i]), "must hold a JSON object");
}

static void
test_file_over_the_cap_turns_both_off(void)
{
	struct pgn_buf b;
	char *text;
	size_t len;
	struct pgn_config c;
	static const char body[] =
	    "{\"instructions\":{\"promptReminder\":"
	    "\"r\"},\"promptContext\":{\"command\":[\"p\"]}}";

	/* Exactly the cap, padded with spaces: read. */
	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_adds(&b, body);
	while (b.len < PGN_MAX_PROJECT_CONFIG)
		pgn_buf_adds(&b, " ");
	text = pgn_buf_take(&b, &len);
	REQUIRE(text != NULL);
	CHECK_INT(len, PGN_MAX_PROJECT_CONFIG);
	REQUIRE(pgn_config_parse(text, len, &c) == PGN_OK);
	CHECK(c.problem == NULL);
	CHECK_STR(c.reminder, "r");
	CHECK_INT(c.argc, 1);
	pgn_config_release(&c);
	free(text);
	/* One byte more: refused whole. */
	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_adds(&b, body);
	while (b.len < PGN_MAX_PROJECT_CONFIG + 1)
		pgn_buf_adds(&b, " ");
	text = pgn_buf_take(&b, &len);
	REQUIRE(text != NULL);
	file_refused(text, len, "is over 65536 bytes");
	free(text);
}

/* ---- unknown keys --------------------------------------------------- */

static void
test_unknown_keys_are_listed_and_change_nothing(void)
{
	struct pgn_config c;

	parse("{\"version\":2,\"instructions\":{\"promptReminder\":\"r\","
	      "\"style\":\"terse\"},\"promptContext\":{\"command\":[\"p\"],"
	      "\"timeoutMs\":10,\"env\":{\"A\":\"1\"},\"shell\":true},"
	      "\"extra\":null}",
	    &c);
	CHECK_STR(c.unknown,
	    "version, extra, instructions.style, promptContext.env, promptContext.shell");
	CHECK_STR(c.reminder, "r");
	CHECK(c.reminder_problem == NULL);
	CHECK_INT(c.argc, 1);
	CHECK_INT(c.timeout_ms, 10);
	CHECK(c.provider_problem == NULL);
	CHECK(c.problem == NULL);
	pgn_config_release(&c);
	/* Keys are case-sensitive: "PromptReminder" is unknown. */
	parse("{\"Instructions\":{},\"instructions\":{\"PromptReminder\":"
	      "\"x\"},\"promptContext\":{\"Command\":[\"p\"],"
	      "\"command\":[\"q\"],\"TimeoutMs\":1}}",
	    &c);
	CHECK_STR(c.unknown,
	    "Instructions, instructions.PromptReminder, promptContext.Command, promptContext.TimeoutMs");
	CHECK(c.reminder == NULL && c.reminder_problem == NULL);
	CHECK_INT(c.argc, 1);
	CHECK_STR(c.argv[0], "q");
	CHECK_INT(c.timeout_ms, 1000);
	pgn_config_release(&c);
}

static void
test_unknown_keys_are_listed_even_beside_an_invalid_feature(void)
{
	struct pgn_config c;

	parse("{\"instructions\":{\"promptReminder\":7,\"x\":1},"
	      "\"promptContext\":{\"command\":[],\"y\":2}}",
	    &c);
	CHECK_STR(c.unknown, "instructions.x, promptContext.y");
	CHECK(c.reminder_problem != NULL);
	CHECK(c.provider_problem != NULL);
	pgn_config_release(&c);
}

/* ---- agents (decision 0228) ------------------------------------------ */

static void
test_agents_retire_after_days_default_edges_and_bad_values(void)
{
	struct pgn_config c;

	parse("{}", &c);
	CHECK_INT(c.retire_after_days, PGN_RETIRE_AFTER_DAYS_DEFAULT);
	CHECK(c.agents_problem == NULL);
	pgn_config_release(&c);
	parse("{\"agents\":{\"retireAfterDays\":0}}", &c);
	CHECK_INT(c.retire_after_days, 0);
	CHECK(c.agents_problem == NULL);
	pgn_config_release(&c);
	parse("{\"agents\":{\"retireAfterDays\":3650}}", &c);
	CHECK_INT(c.retire_after_days, PGN_RETIRE_AFTER_DAYS_MAX);
	CHECK(c.agents_problem == NULL);
	pgn_config_release(&c);
	parse("{\"agents\":{\"retireAfterDays\":3651}}", &c);
	CHECK_INT(c.retire_after_days, PGN_RETIRE_AFTER_DAYS_DEFAULT);
	CHECK_STR(c.agents_problem,
	    "agents.retireAfterDays must be an integer from 0 to 3650");
	pgn_config_release(&c);
	parse("{\"agents\":{\"retireAfterDays\":-1}}", &c);
	CHECK_INT(c.retire_after_days, PGN_RETIRE_AFTER_DAYS_DEFAULT);
	CHECK(c.agents_problem != NULL);
	pgn_config_release(&c);
	parse("{\"agents\":{\"retireAfterDays\":\"7\"}}", &c);
	CHECK(c.agents_problem != NULL);
	pgn_config_release(&c);
	parse("{\"agents\":7}", &c);
	CHECK_STR(c.agents_problem, "agents must be an object");
	pgn_config_release(&c);
	parse("{\"agents\":{\"retireAfterDays\":3,\"x\":1}}", &c);
	CHECK_INT(c.retire_after_days, 3);
	CHECK_STR(c.unknown, "agents.x");
	pgn_config_release(&c);
}

static void
test_notes_mail_injected_off_by_default_and_bad_values(void)
{
	struct pgn_config c;

	parse("{}", &c);
	CHECK_INT(c.note_injected, 0);
	CHECK(c.notes_problem == NULL);
	pgn_config_release(&c);
	parse("{\"notes\":{\"mailInjected\":true}}", &c);
	CHECK_INT(c.note_injected, 1);
	CHECK(c.notes_problem == NULL);
	pgn_config_release(&c);
	parse("{\"notes\":{\"mailInjected\":1}}", &c);
	CHECK_INT(c.note_injected, 0);
	CHECK_STR(c.notes_problem, "notes.mailInjected must be true or false");
	pgn_config_release(&c);
	parse("{\"notes\":[]}", &c);
	CHECK_STR(c.notes_problem, "notes must be an object");
	pgn_config_release(&c);
}

/* ---- reach ---------------------------------------------------------- */

static void
test_reach_defaults_and_its_bounds(void)
{
	struct pgn_config c;

	parse("{}", &c);
	CHECK_INT(c.max_auto_continues, PGN_AUTO_CONTINUES_DEFAULT);
	CHECK_INT(c.stop_wait_ms, 0);
	CHECK(c.reach_problem == NULL);
	pgn_config_release(&c);

	parse("{\"reach\":{\"maxAutoContinues\":0,\"stopWaitMs\":3000}}", &c);
	CHECK_INT(c.max_auto_continues, 0);
	CHECK_INT(c.stop_wait_ms, PGN_MAX_STOP_WAIT_MS);
	CHECK(c.reach_problem == NULL);
	pgn_config_release(&c);

	parse("{\"reach\":{\"maxAutoContinues\":20}}", &c);
	CHECK_INT(c.max_auto_continues, PGN_MAX_AUTO_CONTINUES);
	pgn_config_release(&c);
}

static void
test_rewake_wait_s_defaults_and_its_bounds(void)
{
	struct pgn_config c;

	parse("{}", &c);
	CHECK_INT(c.rewake_wait_s, PGN_REWAKE_WAIT_S_DEFAULT);
	pgn_config_release(&c);
	parse("{\"reach\":{\"rewakeWaitS\":540}}", &c);
	CHECK_INT(c.rewake_wait_s, PGN_MAX_REWAKE_WAIT_S);
	CHECK(c.reach_problem == NULL);
	pgn_config_release(&c);
	parse("{\"reach\":{\"rewakeWaitS\":0}}", &c);
	CHECK_INT(c.rewake_wait_s, 0);
	CHECK(c.reach_problem == NULL);
	pgn_config_release(&c);
	/* The bound leaves the claim time before the entry's timeout. */
	CHECK(PGN_MAX_REWAKE_WAIT_S * 1000L + PGN_HOOK_REWAKE_CLAIM_MS <
	    PGN_REWAKE_TIMEOUT_S * 1000L);
	parse("{\"reach\":{\"rewakeWaitS\":541}}", &c);
	CHECK_STR(c.reach_problem,
	    "reach.rewakeWaitS must be an integer from 0 to 540");
	CHECK_INT(c.rewake_wait_s, PGN_REWAKE_WAIT_S_DEFAULT);
	pgn_config_release(&c);
}

static void
test_reach_out_of_bounds_keeps_the_defaults(void)
{
	static const char *const bad[] = {
	    "{\"reach\":{\"maxAutoContinues\":21}}",
	    "{\"reach\":{\"maxAutoContinues\":-1}}",
	    "{\"reach\":{\"maxAutoContinues\":1.5}}",
	    "{\"reach\":{\"stopWaitMs\":3001}}",
	    "{\"reach\":{\"stopWaitMs\":\"1000\"}}",
	    "{\"reach\":{\"rewakeWaitS\":541}}",
	    "{\"reach\":{\"rewakeWaitS\":-1}}",
	    "{\"reach\":{\"rewakeWaitS\":2.5}}",
	    "{\"reach\":{\"rewakeWaitS\":\"300\"}}",
	    "{\"reach\":{\"rewakeWaitS\":null}}",
	    "{\"reach\":[]}",
	};
	struct pgn_config c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(bad[i], &c);
		if (!CHECK(c.reach_problem != NULL))
			printf("  accepted: %s\n", bad[i]);
		CHECK_INT(c.max_auto_continues, PGN_AUTO_CONTINUES_DEFAULT);
		CHECK_INT(c.stop_wait_ms, 0);
		CHECK_INT(c.rewake_wait_s, PGN_REWAKE_WAIT_S_DEFAULT);
		/* The rest of the file is taken as it is. */
		CHECK(c.problem == NULL);
		pgn_config_release(&c);
	}
	parse("{\"reach\":{\"stopWaitMs\":3001}}", &c);
	CHECK_STR(c.reach_problem,
	    "reach.stopWaitMs must be an integer from 0 to 3000");
	pgn_config_release(&c);
	parse("{\"reach\":{\"maxAutoContinues\":2,\"x\":1}}", &c);
	CHECK_INT(c.max_auto_continues, 2);
	CHECK_STR(c.unknown, "reach.x");
	pgn_config_release(&c);
}

/* ---- pgn_config_load ------------------------------------------------ */

static void
test_load_reads_the_project_file(void)
{
	static const char text[] =
	    "{\"instructions\":{\"promptReminder\":"
	    "\" from disk \"},\"promptContext\":{\"command\":[\"bin/ctx\"],"
	    "\"maxOutputBytes\":77},\"x\":0}\n";
	struct pgn_config c;
	const char *root;

	root = project_with(text, sizeof(text) - 1);
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK_STR(c.reminder, "from disk");
	CHECK_INT(c.argc, 1);
	CHECK_STR(c.argv[0], "bin/ctx");
	CHECK_INT(c.max_output, 77);
	CHECK_INT(c.timeout_ms, 1000);
	CHECK_STR(c.unknown, "x");
	CHECK(c.problem == NULL);
	pgn_config_release(&c);
}

/* A FIFO planted as the config (a cloned repository) never blocks. */
static void
test_load_of_a_fifo_is_a_problem_without_waiting(void)
{
	char root[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];
	struct pgn_config c;
	int64_t t0;

	H_PATH(root, "proj");
	h_mkdir(root);
	h_join(dir, sizeof(dir), root, ".pigeon");
	h_mkdir(dir);
	h_join(file, sizeof(file), dir, "config.json");
	REQUIRE(mkfifo(file, 0600) == 0);
	t0 = pgn_mono_ms();
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK(pgn_mono_ms() - t0 < 1000);
	CHECK_CONTAINS(c.problem, "not a regular file");
	CHECK(c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
}

static void
test_load_of_a_missing_file_configures_nothing(void)
{
	char root[PATH_MAX], dir[PATH_MAX];
	struct pgn_config c;

	/* No .pigeon at all, then an empty .pigeon. */
	H_PATH(root, "proj");
	h_mkdir(root);
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK(c.problem == NULL && c.reminder == NULL && c.argc == 0);
	CHECK(c.reminder_problem == NULL && c.provider_problem == NULL);
	CHECK(c.unknown == NULL);
	pgn_config_release(&c);
	h_join(dir, sizeof(dir), root, ".pigeon");
	h_mkdir(dir);
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK(c.problem == NULL && c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
	/* Nor a missing project directory. */
	H_PATH(root, "no-such-dir");
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK(c.problem == NULL && c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
}

static void
test_load_of_the_global_scope_configures_nothing(void)
{
	static const char global[] = "{\"instructions\":{\"promptReminder\":"
	                             "\"g\"}}";
	struct pgn_config c;
	char path[PATH_MAX];

	/* Even with a config.json in the working directory. */
	H_PATH(path, ".pigeon");
	h_mkdir(path);
	H_PATH(path, ".pigeon/config.json");
	h_write_file(path, global, sizeof(global) - 1);
	REQUIRE(chdir(h_tmp) == 0);
	REQUIRE(pgn_config_load("", &c) == PGN_OK);
	CHECK(c.problem == NULL && c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
	REQUIRE(pgn_config_load(NULL, &c) == PGN_OK);
	CHECK(c.problem == NULL && c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
	REQUIRE(chdir("/") == 0);
}

static void
test_load_of_a_file_over_the_cap_turns_both_off(void)
{
	struct pgn_buf b;
	struct pgn_config c;
	const char *root;
	char *text;
	size_t len;

	pgn_buf_init(&b, MAX_JSON);
	pgn_buf_adds(&b, "{\"instructions\":{\"promptReminder\":\"r\"}}");
	while (b.len < PGN_MAX_PROJECT_CONFIG + 1)
		pgn_buf_adds(&b, "\n");
	text = pgn_buf_take(&b, &len);
	REQUIRE(text != NULL);
	root = project_with(text, len);
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK_CONTAINS(c.problem, "is over 65536 bytes");
	CHECK(c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
	free(text);
}

static void
test_load_of_a_much_larger_file_turns_both_off(void)
{
	struct pgn_config c;
	const char *root;
	char *text;

	text = rep(" ", 3 * PGN_MAX_PROJECT_CONFIG);
	root = project_with(text, strlen(text));
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK_CONTAINS(c.problem, "is over 65536 bytes");
	CHECK(c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
	free(text);
}

static void
test_load_of_an_empty_or_invalid_file_reports_it(void)
{
	struct pgn_config c;
	const char *root;

	root = project_with("", 0);
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK_CONTAINS(c.problem, "is not valid JSON");
	pgn_config_release(&c);
}

static void
test_load_of_an_unreadable_config_reports_it(void)
{
	char root[PATH_MAX], path[PATH_MAX];
	struct pgn_config c;

	/* config.json is a directory: it cannot be read as a file. */
	H_PATH(root, "proj");
	h_mkdir(root);
	h_join(path, sizeof(path), root, ".pigeon");
	h_mkdir(path);
	h_join(path, sizeof(path), root, ".pigeon/config.json");
	h_mkdir(path);
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK_CONTAINS(c.problem, "cannot be read");
	CHECK(c.reminder == NULL && c.argc == 0);
	pgn_config_release(&c);
}

static const struct h_test tests[] = {
    H_TEST(test_reminder_of_one_and_of_500_characters_is_kept),
    H_TEST(test_reminder_counts_characters_not_bytes),
    H_TEST(test_reminder_of_501_characters_is_refused),
    H_TEST(test_reminder_bound_applies_after_trimming),
    H_TEST(test_reminder_empty_or_blank_is_refused),
    H_TEST(test_reminder_surrounding_spaces_are_trimmed),
    H_TEST(test_reminder_with_a_line_break_is_refused),
    H_TEST(test_reminder_with_a_control_character_is_refused),
    H_TEST(test_reminder_holding_an_escaped_nul_is_not_cut_short),
    H_TEST(test_reminder_of_invalid_utf8_is_refused),
    H_TEST(test_reminder_that_is_not_a_string_is_refused),
    H_TEST(test_command_missing_or_not_an_array_is_refused),
    H_TEST(test_prompt_context_that_is_not_an_object_is_refused),
    H_TEST(test_command_empty_is_refused),
    H_TEST(test_command_of_32_entries_is_kept_33_refused),
    H_TEST(test_command_entry_must_be_a_nonempty_string),
    H_TEST(test_command_entry_of_1024_bytes_is_kept_1025_refused),
    H_TEST(test_command_program_outside_the_project_is_refused),
    H_TEST(test_timeout_bounds),
    H_TEST(test_max_output_bounds),
    H_TEST(test_full_prompt_context_is_read_whole),
    H_TEST(test_invalid_prompt_context_leaves_the_reminder_working),
    H_TEST(test_invalid_reminder_leaves_the_provider_working),
    H_TEST(test_both_invalid_name_both_fields),
    H_TEST(test_nothing_configured),
    H_TEST(test_invalid_json_turns_both_off),
    H_TEST(test_json_that_is_not_an_object_turns_both_off),
    H_TEST(test_file_over_the_cap_turns_both_off),
    H_TEST(test_unknown_keys_are_listed_and_change_nothing),
    H_TEST(test_unknown_keys_are_listed_even_beside_an_invalid_feature),
    H_TEST(test_reach_defaults_and_its_bounds),
    H_TEST(test_reach_out_of_bounds_keeps_the_defaults),
    H_TEST(test_rewake_wait_s_defaults_and_its_bounds),
    H_TEST(test_load_reads_the_project_file),
    H_TEST(test_load_of_a_fifo_is_a_problem_without_waiting),
    H_TEST(test_load_of_a_missing_file_configures_nothing),
    H_TEST(test_load_of_the_global_scope_configures_nothing),
    H_TEST(test_load_of_a_file_over_the_cap_turns_both_off),
    H_TEST(test_load_of_a_much_larger_file_turns_both_off),
    H_TEST(test_load_of_an_empty_or_invalid_file_reports_it),
    H_TEST(test_load_of_an_unreadable_config_reports_it),
    H_TEST(test_agents_retire_after_days_default_edges_and_bad_values),
    H_TEST(test_notes_mail_injected_off_by_default_and_bad_values),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
