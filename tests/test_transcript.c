/*
 * Unit tests of the transcript readers (Cursor per seeds/001, Claude Code
 * and Codex as captured from the real binaries), their bounds and
 * tolerance, the redaction patterns, and the digest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "transcript_int.h"

#define CURSOR_DIR "transcripts/cursor/projects/home-dev-work"
#define MAIN_ID    "5e551011-0000-4000-8000-000000000001"
#define CHILD_ID   "c41d0001-0000-4000-8000-000000000002"
#define OPEN_ID    "0be70001-0000-4000-8000-000000000004"
#define MAIN_PATH  CURSOR_DIR "/agent-transcripts/" MAIN_ID "/" MAIN_ID ".jsonl"
#define CHILD_PATH                                                             \
	CURSOR_DIR "/agent-transcripts/" MAIN_ID "/subagents/" CHILD_ID ".jsonl"
#define OPEN_PATH CURSOR_DIR "/agent-transcripts/" OPEN_ID "/" OPEN_ID ".jsonl"

/* A fixture's path under tests/fixtures (PGN_TEST_FIXTURES). */
static void
fixture(char *out, size_t len, const char *name)
{
	const char *d = getenv("PGN_TEST_FIXTURES");

	if (d == NULL) {
		printf("PGN_TEST_FIXTURES is not set: run through ctest\n");
		REQUIRE(d != NULL);
	}
	h_join(out, len, d, name);
}

static void
read_fixture(const char *name, pgn_transcript_format fmt,
    struct pgn_transcript *t)
{
	char path[PATH_MAX], err[PGN_MAX_ERRMSG] = "";
	pgn_status st;

	fixture(path, sizeof(path), name);
	st = pgn_transcript_read(path, fmt, t, err, sizeof(err));
	if (st != PGN_OK)
		printf("%s: %s\n", name, err);
	REQUIRE(st == PGN_OK);
}

static void
parse(const char *text, struct pgn_transcript *t)
{
	char err[PGN_MAX_ERRMSG] = "";
	pgn_status st;

	st = pgn_transcript_parse(text, strlen(text), PGN_TRANSCRIPT_UNKNOWN, t,
	    err, sizeof(err));
	if (st != PGN_OK)
		printf("parse: %s\n", err);
	REQUIRE(st == PGN_OK);
}

/* The counting rules every reader keeps. */
static void
check_counts(const struct pgn_transcript *t)
{
	CHECK_INT(t->lines, t->blank + t->malformed + t->oversized + t->frames);
	CHECK_INT(t->frames, t->known + t->unknown);
}

static size_t
tool_calls(const struct pgn_transcript *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->ntools; i++)
		if (strcmp(t->tools[i].name, name) == 0)
			return t->tools[i].n;
	return 0;
}

static int
has_file(const struct pgn_transcript *t, const char *path)
{
	size_t i;

	for (i = 0; i < t->nfiles; i++)
		if (strcmp(t->files[i], path) == 0)
			return 1;
	return 0;
}

/* ---- Cursor: the seed's fixture checklist ------------------------- */

static void
test_cursor_user_frame_is_a_prompt_and_text_frame_the_answer(void)
{
	struct pgn_transcript t;

	parse("{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\","
	      "\"text\":\"hello there\"}]}}\n"
	      "{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	      "\"text\",\"text\":\"hi\"}]}}\n",
	    &t);
	CHECK_INT(t.format, PGN_TRANSCRIPT_CURSOR);
	CHECK_INT(t.prompts, 1);
	CHECK_STR(t.first_prompt, "hello there");
	CHECK_STR(t.last_prompt, "hello there");
	CHECK_INT(t.answers, 1);
	CHECK_STR(t.last_text, "hi");
	CHECK_INT(t.calls, 0);
	/* no turn_ended: the turn is open */
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_OPEN);
	check_counts(&t);
	pgn_transcript_release(&t);
}

static void
test_cursor_text_and_tool_in_one_frame_are_both_read(void)
{
	struct pgn_transcript t;

	parse("{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	      "\"text\",\"text\":\"running it\"},{\"type\":\"tool_use\","
	      "\"name\":\"Shell\",\"input\":{\"command\":\"make\"}}]}}\n",
	    &t);
	CHECK_STR(t.last_text, "running it");
	CHECK_INT(t.calls, 1);
	REQUIRE(t.ncmds == 1);
	CHECK_STR(t.cmds[0], "make");
	pgn_transcript_release(&t);
}

static void
test_cursor_parallel_calls_of_one_name_count_by_position(void)
{
	struct pgn_transcript t;

	/* no ids: five calls, two of them alike, are five calls */
	parse(
	    "{\"role\":\"assistant\",\"message\":{\"content\":["
	    "{\"type\":\"tool_use\",\"name\":\"Shell\",\"input\":{\"command\":"
	    "\"ls\"}},"
	    "{\"type\":\"tool_use\",\"name\":\"Shell\",\"input\":{\"command\":"
	    "\"ls\"}},"
	    "{\"type\":\"tool_use\",\"name\":\"ReadFile\",\"input\":{\"path\":"
	    "\"a\"}},"
	    "{\"type\":\"tool_use\",\"name\":\"Shell\",\"input\":{\"command\":"
	    "\"pwd\"}},"
	    "{\"type\":\"tool_use\",\"name\":\"Glob\",\"input\":{}}]}}\n",
	    &t);
	CHECK_INT(t.calls, 5);
	CHECK_INT(tool_calls(&t, "Shell"), 3);
	CHECK_INT(t.cmds_seen, 3);
	REQUIRE(t.ncmds == 3);
	CHECK_STR(t.cmds[0], "ls");
	CHECK_STR(t.cmds[1], "ls");
	CHECK_STR(t.cmds[2], "pwd");
	pgn_transcript_release(&t);
}

static void
test_cursor_apply_patch_string_names_every_file_it_touches(void)
{
	struct pgn_transcript t;

	parse("{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	      "\"tool_use\",\"name\":\"ApplyPatch\",\"input\":\"*** Begin "
	      "Patch\\n*** Update File: a.c\\n@@\\n-x\\n+y\\n*** Add File: "
	      "b.c\\n+z\\n*** Delete File: c.c\\n*** Update File: d.c\\n*** "
	      "Move to: e.c\\n*** Update File: a.c\\n*** End Patch\"}]}}\n",
	    &t);
	CHECK_INT(t.calls, 1);
	CHECK_INT(t.nfiles, 5); /* a.c twice is one file */
	CHECK(has_file(&t, "a.c"));
	CHECK(has_file(&t, "b.c"));
	CHECK(has_file(&t, "c.c"));
	CHECK(has_file(&t, "d.c"));
	CHECK(has_file(&t, "e.c"));
	pgn_transcript_release(&t);
}

/*
 * ApplyPatch as a unified diff (defect L6): the paths of "--- a/X" /
 * "+++ b/Y", "diff --git", renames, new and deleted files (/dev/null is
 * none), a plain diff's dated headers; in a "*** Begin Patch" a removed
 * "-- x" and an added "++ y" line are text, not headers.
 */
static void
test_cursor_apply_patch_unified_diff_names_every_file_it_touches(void)
{
	static const char *const want[] = {"src/x.c", "docs/old.md",
	    "docs/new.md", "src/new.c", "src/gone.c", "scripts/run.sh",
	    "lib/y.c", "src/z.c"};
	struct pgn_transcript t;
	size_t i;

	read_fixture("transcripts/cursor-unified-patch.jsonl",
	    PGN_TRANSCRIPT_CURSOR, &t);
	CHECK_INT(t.calls, 7);
	CHECK_INT(t.nfiles, H_COUNT(want));
	for (i = 0; i < H_COUNT(want); i++)
		if (!CHECK(has_file(&t, want[i])))
			printf("  missing %s\n", want[i]);
	CHECK(!has_file(&t, "/dev/null"));
	CHECK(!has_file(&t, "kept as text: a removed line"));
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_SUCCESS);
	pgn_transcript_release(&t);
}

static void
test_cursor_apply_patch_with_an_object_input_is_only_counted(void)
{
	struct pgn_transcript t;

	parse(
	    "{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_use\",\"name\":\"ApplyPatch\",\"input\":{\"patch\":1}},"
	    "{\"type\":\"tool_use\",\"name\":\"Write\",\"input\":\"raw\"}]}}\n",
	    &t);
	CHECK_INT(t.calls, 2);
	CHECK_INT(t.nfiles, 0);
	pgn_transcript_release(&t);
}

static void
test_cursor_mcp_wrappers_name_their_server_and_tool(void)
{
	struct pgn_transcript t;

	parse("{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	      "\"tool_use\",\"name\":\"CallMcpTool\",\"input\":{\"server\":"
	      "\"github\",\"namespace\":\"n\",\"toolName\":\"create_issue\","
	      "\"arguments\":{}}},{\"type\":\"tool_use\",\"name\":"
	      "\"CallDynamicTool\",\"input\":{\"server\":\"linear\","
	      "\"toolName\":\"list\",\"arguments\":{}}},{\"type\":\"tool_use\","
	      "\"name\":\"CallMcpTool\",\"input\":{}}]}}\n",
	    &t);
	CHECK_INT(t.calls, 3);
	CHECK_INT(tool_calls(&t, "CallMcpTool github/create_issue"), 1);
	CHECK_INT(tool_calls(&t, "CallDynamicTool linear/list"), 1);
	CHECK_INT(tool_calls(&t, "CallMcpTool"), 1);
	pgn_transcript_release(&t);
}

static void
test_cursor_turn_ended_statuses_and_their_errors(void)
{
	static const struct {
		const char *frame;
		pgn_transcript_outcome o;
		const char *error;
	} cases[] = {
	    {"{\"type\":\"turn_ended\",\"status\":\"success\"}",
	        PGN_TRANSCRIPT_SUCCESS, NULL},
	    {"{\"type\":\"turn_ended\",\"status\":\"error\",\"error\":\"boom\"}",
	        PGN_TRANSCRIPT_ERROR, "boom"},
	    {"{\"type\":\"turn_ended\",\"status\":\"aborted\",\"error\":\"u\"}",
	        PGN_TRANSCRIPT_ABORTED, "u"},
	    {"{\"type\":\"turn_ended\",\"status\":\"cancelled\",\"error\":\"c\"}",
	        PGN_TRANSCRIPT_OTHER, "c"},
	};
	char text[512];
	struct pgn_transcript t;
	size_t i;

	for (i = 0; i < H_COUNT(cases); i++) {
		REQUIRE(snprintf(text, sizeof(text),
		            "{\"role\":\"user\",\"message\":{\"content\":[{"
		            "\"type\":\"text\",\"text\":\"go\"}]}}\n%s\n",
		            cases[i].frame) < (int)sizeof(text));
		parse(text, &t);
		CHECK_INT(t.outcome, cases[i].o);
		CHECK_STR(t.error, cases[i].error);
		CHECK_INT(t.known, 2);
		pgn_transcript_release(&t);
	}
}

static void
test_cursor_fixture_with_every_status_ends_as_its_last_frame_says(void)
{
	struct pgn_transcript t;

	read_fixture("transcripts/cursor-error.jsonl", PGN_TRANSCRIPT_UNKNOWN,
	    &t);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_ERROR);
	CHECK_STR(t.error, "model unavailable");
	pgn_transcript_release(&t);
	read_fixture("transcripts/cursor-aborted.jsonl", PGN_TRANSCRIPT_UNKNOWN,
	    &t);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_ABORTED);
	CHECK_STR(t.status, "aborted");
	pgn_transcript_release(&t);
	read_fixture("transcripts/cursor-unterminated.jsonl",
	    PGN_TRANSCRIPT_UNKNOWN, &t);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_OPEN);
	CHECK(t.status == NULL);
	pgn_transcript_release(&t);
}

static void
test_cursor_frames_after_turn_ended_are_an_unterminated_turn(void)
{
	struct pgn_transcript t;

	read_fixture(OPEN_PATH, PGN_TRANSCRIPT_CURSOR, &t);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_OPEN);
	CHECK_INT(t.prompts, 2);
	CHECK_STR(t.first_prompt, "first question");
	CHECK_STR(t.last_prompt, "second question");
	CHECK_STR(t.last_text, "working on it");
	pgn_transcript_release(&t);
}

/* The fixture holds every item of the seed's checklist at once. */
static void
test_cursor_checklist_fixture_reads_whole(void)
{
	struct pgn_transcript t;

	read_fixture(MAIN_PATH, PGN_TRANSCRIPT_UNKNOWN, &t);
	CHECK_INT(t.format, PGN_TRANSCRIPT_CURSOR);
	CHECK_INT(t.lines, 21);
	CHECK_INT(t.frames, 21);
	CHECK_INT(t.unknown, 0);
	check_counts(&t);
	CHECK_INT(t.prompts, 4);
	CHECK_INT(t.calls, 19);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_SUCCESS);
	CHECK_STR(t.first_prompt, "Fix the failing build in src/main.c");
	CHECK_STR(t.last_prompt,
	    "Summarise what you changed, password=[REDACTED]");
	CHECK_STR(t.last_text, "I changed src/main.c and added src/new.c.");
	/* AskQuestion, Subagent, Task, AwaitShell and an unknown name */
	CHECK_STR(t.question, "Keep the old API?");
	CHECK_INT(tool_calls(&t, "AskQuestion"), 1);
	CHECK_INT(tool_calls(&t, "Subagent"), 1);
	CHECK_INT(tool_calls(&t, "Task"), 1);
	CHECK_INT(tool_calls(&t, "AwaitShell"), 1);
	CHECK_INT(tool_calls(&t, "FutureTool"), 1);
	/* the background shell, its token redacted */
	REQUIRE(t.ncmds == 3);
	CHECK_STR(t.cmds[1], "(background) GITHUB_TOKEN=[REDACTED] npm test");
	/* the patch's paths, the edits', and the subagent's Write */
	CHECK(has_file(&t, "src/new.c"));
	CHECK(has_file(&t, "src/new_name.c"));
	CHECK(has_file(&t, "/home/dev/work/src/util.c"));
	CHECK(has_file(&t, "/home/dev/work/docs/notes.md"));
	CHECK(has_file(&t, "/home/dev/work/tests/report.txt"));
	CHECK_INT(t.nfiles, 8);
	pgn_transcript_release(&t);
}

static void
test_cursor_subagents_are_found_by_directory_containment(void)
{
	struct pgn_transcript t;

	read_fixture(MAIN_PATH, PGN_TRANSCRIPT_CURSOR, &t);
	REQUIRE(t.nsubs == 1);
	CHECK_STR(t.subs[0].id, CHILD_ID);
	CHECK_INT(t.subs[0].outcome, PGN_TRANSCRIPT_SUCCESS);
	CHECK_INT(t.subs[0].calls, 2);
	CHECK(t.parent == NULL);
	pgn_transcript_release(&t);
	/* the child, read alone, names its parent from its path */
	read_fixture(CHILD_PATH, PGN_TRANSCRIPT_UNKNOWN, &t);
	CHECK_STR(t.parent, MAIN_ID);
	CHECK_INT(t.nsubs, 0);
	CHECK_STR(t.last_text, "All tests pass.");
	pgn_transcript_release(&t);
}

static void
test_cursor_agent_tools_sidecar_is_never_opened(void)
{
	char path[PATH_MAX], side[PATH_MAX], *digest;
	struct pgn_transcript t;
	pgn_status st;

	/* the transcript reads the sidecar back; the reader never does */
	read_fixture(MAIN_PATH, PGN_TRANSCRIPT_CURSOR, &t);
	CHECK_INT(tool_calls(&t, "ReadFile"), 3);
	digest = pgn_digest_render(&t, NULL, NULL, NULL, 0, &st);
	REQUIRE(digest != NULL);
	CHECK(strstr(digest, "SIDECAR-SENTINEL") == NULL);
	free(digest);
	pgn_transcript_release(&t);
	/* a FIFO in its place would block an open: the read returns */
	fixture(path, sizeof(path), MAIN_PATH);
	H_PATH(side, "p");
	h_mkdir(side);
	H_PATH(side, "p/agent-tools");
	h_mkdir(side);
	H_PATH(side, "p/agent-tools/x.txt");
	REQUIRE(mkfifo(side, 0600) == 0);
	H_PATH(side, "p/agent-transcripts");
	h_mkdir(side);
	H_PATH(side, "p/agent-transcripts/s");
	h_mkdir(side);
	H_PATH(side, "p/agent-transcripts/s/s.jsonl");
	h_write_file(side,
	    "{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"tool_use\",\"name\":\"ReadFile\",\"input\":{\"path\":\"../../"
	    "agent-tools/x.txt\"}}]}}\n",
	    strlen(
	        "{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	        "\"tool_use\",\"name\":\"ReadFile\",\"input\":{\"path\":\"../"
	        "../agent-tools/x.txt\"}}]}}\n"));
	CHECK_INT(pgn_transcript_read(side, PGN_TRANSCRIPT_UNKNOWN, &t, path,
	              sizeof(path)),
	    PGN_OK);
	CHECK_INT(t.calls, 1);
	pgn_transcript_release(&t);
}

static void
test_cursor_block_over_30k_is_read_and_kept_within_bounds(void)
{
	struct pgn_buf b;
	struct pgn_transcript t;
	size_t i;
	char *text;

	pgn_buf_init(&b, 64 * 1024);
	pgn_buf_adds(&b,
	    "{\"role\":\"assistant\",\"message\":{\"content\":[{"
	    "\"type\":\"text\",\"text\":\"");
	for (i = 0; i < 31000; i++)
		pgn_buf_add(&b, i % 2 ? "a" : "\xc3\xa9", i % 2 ? 1 : 2);
	pgn_buf_adds(&b, "\"}]}}\n");
	text = pgn_buf_take(&b, NULL);
	REQUIRE(text != NULL);
	parse(text, &t);
	REQUIRE(t.last_text != NULL);
	CHECK(strlen(t.last_text) <= PGN_TRANSCRIPT_MAX_TEXT);
	CHECK(strlen(t.last_text) >= PGN_TRANSCRIPT_MAX_TEXT - 6);
	CHECK(pgn_utf8_valid(t.last_text, strlen(t.last_text)));
	/* a cut is marked with an ellipsis */
	CHECK_STR(t.last_text + strlen(t.last_text) - 3, "\xe2\x80\xa6");
	pgn_transcript_release(&t);
	free(text);
	/* the fixture's 31 KB Write input is read like any other */
	read_fixture(MAIN_PATH, PGN_TRANSCRIPT_CURSOR, &t);
	CHECK_INT(tool_calls(&t, "Write"), 1);
	pgn_transcript_release(&t);
}

/* ---- tolerance and bounds ------------------------------------------ */

static void
test_reader_counts_and_skips_blank_and_malformed_lines(void)
{
	struct pgn_transcript t;

	parse("\n   \n"
	      "not json\n"
	      "[1,2]\n"
	      "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\","
	      "\"text\":\"ok\"}]}} trailing\n"
	      "{\"role\":\"user\",\"message\":\n"
	      "\"a string\"\n"
	      "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\","
	      "\"text\":\"kept\"}]}}\n"
	      "{\"what\":1}\n"
	      "{\"role\":\"system\",\"message\":{\"content\":[]}}\n",
	    &t);
	CHECK_INT(t.lines, 10);
	CHECK_INT(t.blank, 2);
	CHECK_INT(t.malformed, 5);
	CHECK_INT(t.frames, 3);
	CHECK_INT(t.known, 1);
	CHECK_INT(t.unknown, 2);
	check_counts(&t);
	CHECK_STR(t.first_prompt, "kept");
	pgn_transcript_release(&t);
}

static void
test_reader_skips_a_line_over_the_line_bound_and_keeps_one_at_it(void)
{
	static const char head[] =
	    "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"";
	static const char tail[] = "\"}]}}";
	struct pgn_transcript t;
	char err[PGN_MAX_ERRMSG];
	size_t fill, at = 0, k;
	char *s;

	/* a frame exactly PGN_TRANSCRIPT_MAX_LINE long, then one a byte over */
	s = malloc(2 * PGN_TRANSCRIPT_MAX_LINE + 3);
	REQUIRE(s != NULL);
	fill = PGN_TRANSCRIPT_MAX_LINE - strlen(head) - strlen(tail);
	for (k = 0; k < 2; k++) {
		memcpy(s + at, head, strlen(head));
		at += strlen(head);
		memset(s + at, 'a', fill + k);
		at += fill + k;
		memcpy(s + at, tail, strlen(tail));
		at += strlen(tail);
		s[at++] = '\n';
	}
	CHECK_INT(at, 2 * PGN_TRANSCRIPT_MAX_LINE + 3);
	CHECK_INT(pgn_transcript_parse(s, at, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_OK);
	CHECK_INT(t.lines, 2);
	CHECK_INT(t.frames, 1);
	CHECK_INT(t.oversized, 1);
	CHECK_INT(t.prompts, 1);
	check_counts(&t);
	pgn_transcript_release(&t);
	free(s);
}

/* A file of 'total' bytes: a first frame "FIRST", filler, a last frame. */
static char *
tail_file(size_t total, size_t *len)
{
	static const char first[] =
	    "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"FIRST\"}]}}\n";
	static const char last[] =
	    "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\","
	    "\"text\":\"LAST\"}]}}\n";
	static const char fill[] =
	    "{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"";
	char *s;
	size_t at, n, rem;

	s = malloc(total);
	if (s == NULL)
		return NULL;
	memcpy(s, first, strlen(first));
	at = strlen(first);
	while ((rem = total - at - strlen(last)) > 0) {
		n = rem > 4096 ? 4096 : rem;
		if (rem > 4096 && rem - 4096 < 256)
			n = 2048; /* no tiny last filler */
		if (n < strlen(fill) + 7) {
			memset(s + at, ' ', n - 1);
			s[at + n - 1] = '\n';
			at += n;
			continue;
		}
		memcpy(s + at, fill, strlen(fill));
		memset(s + at + strlen(fill), 'f', n - strlen(fill) - 6);
		memcpy(s + at + n - 6, "\"}]}}\n", 6);
		at += n;
	}
	memcpy(s + at, last, strlen(last));
	*len = total;
	return s;
}

static void
test_reader_reads_at_most_the_last_64_mib(void)
{
	char path[PATH_MAX], err[PGN_MAX_ERRMSG];
	struct pgn_transcript t;
	size_t len = 0;
	char *s;

	/* exactly the bound: all of it, the first prompt included */
	s = tail_file(PGN_TRANSCRIPT_MAX_READ, &len);
	REQUIRE(s != NULL);
	H_PATH(path, "t.jsonl");
	h_write_file(path, s, len);
	CHECK_INT(pgn_transcript_read(path, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_OK);
	CHECK(!t.cut);
	CHECK_INT(t.read, PGN_TRANSCRIPT_MAX_READ);
	CHECK_STR(t.first_prompt, "FIRST");
	CHECK_STR(t.last_prompt, "LAST");
	check_counts(&t);
	pgn_transcript_release(&t);
	free(s);
	/* one byte over: the head is cut, the first line with it */
	s = tail_file((size_t)PGN_TRANSCRIPT_MAX_READ + 1, &len);
	REQUIRE(s != NULL);
	h_write_file(path, s, len);
	CHECK_INT(pgn_transcript_read(path, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_OK);
	CHECK(t.cut);
	CHECK_INT(t.size, (size_t)PGN_TRANSCRIPT_MAX_READ + 1);
	CHECK_INT(t.read, PGN_TRANSCRIPT_MAX_READ);
	CHECK_STR(t.first_prompt, "LAST");
	CHECK_INT(t.malformed, 0); /* the cut line is not counted */
	check_counts(&t);
	pgn_transcript_release(&t);
	/* the same bound on bytes in memory */
	CHECK_INT(pgn_transcript_parse(s, len, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_OK);
	CHECK(t.cut);
	CHECK_STR(t.first_prompt, "LAST");
	pgn_transcript_release(&t);
	free(s);
}

static void
test_reader_result_does_not_depend_on_how_bytes_are_split(void)
{
	char path[PATH_MAX];
	struct pgn_transcript whole, part;
	struct tr_parser p;
	size_t len, cut;
	char *s;

	fixture(path, sizeof(path), MAIN_PATH);
	s = h_read_file(path, &len);
	REQUIRE(s != NULL);
	parse(s, &whole);
	for (cut = 1; cut < len; cut += 997) {
		pgn_transcript_init(&part);
		tr_parser_init(&p, &part, 0);
		CHECK_INT(tr_feed(&p, s, cut), PGN_OK);
		CHECK_INT(tr_feed(&p, s + cut, len - cut), PGN_OK);
		CHECK_INT(tr_finish(&p), PGN_OK);
		tr_parser_release(&p);
		CHECK_INT(part.lines, whole.lines);
		CHECK_INT(part.calls, whole.calls);
		CHECK_INT(part.prompts, whole.prompts);
		CHECK_INT(part.nfiles, whole.nfiles);
		CHECK_INT(part.outcome, whole.outcome);
		pgn_transcript_release(&part);
	}
	pgn_transcript_release(&whole);
	free(s);
}

static void
test_reader_takes_a_last_line_without_newline(void)
{
	struct pgn_transcript t;

	parse("{\"type\":\"turn_ended\",\"status\":\"success\"}", &t);
	CHECK_INT(t.lines, 1);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_SUCCESS);
	pgn_transcript_release(&t);
}

static void
test_reader_errors_name_the_problem(void)
{
	char path[PATH_MAX], err[PGN_MAX_ERRMSG];
	struct pgn_transcript t;

	/* unknown format */
	CHECK_INT(pgn_transcript_parse("{\"a\":1}\nxx\n", 10,
	              PGN_TRANSCRIPT_UNKNOWN, &t, err, sizeof(err)),
	    PGN_EINVAL);
	CHECK_CONTAINS(err, "not a Cursor, Claude Code or Codex transcript");
	pgn_transcript_release(&t);
	/* named format: an empty file is an empty transcript */
	H_PATH(path, "empty.jsonl");
	h_write_file(path, "", 0);
	CHECK_INT(pgn_transcript_read(path, PGN_TRANSCRIPT_CLAUDE, &t, err,
	              sizeof(err)),
	    PGN_OK);
	CHECK_INT(t.lines, 0);
	pgn_transcript_release(&t);
	CHECK_INT(pgn_transcript_read(path, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_EINVAL);
	pgn_transcript_release(&t);
	/* missing, a directory, a FIFO (no blocking open) */
	H_PATH(path, "missing.jsonl");
	CHECK_INT(pgn_transcript_read(path, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_ENOTFOUND);
	CHECK_CONTAINS(err, "missing.jsonl");
	pgn_transcript_release(&t);
	CHECK_INT(pgn_transcript_read(h_tmp, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_EINVAL);
	CHECK_CONTAINS(err, "not a regular file");
	pgn_transcript_release(&t);
	H_PATH(path, "fifo");
	REQUIRE(mkfifo(path, 0600) == 0);
	CHECK_INT(pgn_transcript_read(path, PGN_TRANSCRIPT_UNKNOWN, &t, err,
	              sizeof(err)),
	    PGN_EINVAL);
	pgn_transcript_release(&t);
}

static void
test_reader_detects_each_format_from_its_frames(void)
{
	static const struct {
		const char *name;
		pgn_transcript_format f;
	} cases[] = {
	    {"transcripts/claude-shell.jsonl", PGN_TRANSCRIPT_CLAUDE},
	    {"transcripts/claude-edit.jsonl", PGN_TRANSCRIPT_CLAUDE},
	    {"transcripts/codex-shell.jsonl", PGN_TRANSCRIPT_CODEX},
	    {"transcripts/codex-patch.jsonl", PGN_TRANSCRIPT_CODEX},
	    {"transcripts/cursor-error.jsonl", PGN_TRANSCRIPT_CURSOR},
	    {MAIN_PATH, PGN_TRANSCRIPT_CURSOR},
	};
	struct pgn_transcript t;
	size_t i;

	for (i = 0; i < H_COUNT(cases); i++) {
		read_fixture(cases[i].name, PGN_TRANSCRIPT_UNKNOWN, &t);
		CHECK_INT(t.format, cases[i].f);
		CHECK_INT(t.malformed + t.blank + t.oversized, 0);
		check_counts(&t);
		pgn_transcript_release(&t);
	}
}

/* ---- Claude Code (real captures, scrubbed) ------------------------- */

static void
test_claude_real_session_gives_prompts_command_and_outcome(void)
{
	struct pgn_transcript t;

	read_fixture("transcripts/claude-shell.jsonl", PGN_TRANSCRIPT_UNKNOWN,
	    &t);
	CHECK_INT(t.unknown, 0);
	CHECK_INT(t.prompts, 2);
	CHECK_STR(t.first_prompt,
	    "please list the files\nmock-shell: echo hello > notes.txt");
	CHECK_STR(t.last_prompt, "now say goodbye");
	CHECK_STR(t.last_text, "MOCK-REPLY");
	CHECK_INT(t.calls, 1);
	REQUIRE(t.ncmds == 1);
	CHECK_STR(t.cmds[0], "echo hello > notes.txt");
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_SUCCESS);
	CHECK_STR(t.status, "end_turn");
	pgn_transcript_release(&t);
}

static void
test_claude_real_edits_are_files_touched(void)
{
	struct pgn_transcript t;

	read_fixture("transcripts/claude-edit.jsonl", PGN_TRANSCRIPT_CLAUDE,
	    &t);
	CHECK_INT(tool_calls(&t, "Write"), 1);
	CHECK_INT(tool_calls(&t, "Edit"), 1);
	CHECK_INT(t.nfiles, 1);
	CHECK(has_file(&t, "/home/dev/work/notes.md"));
	CHECK_INT(t.prompts, 2);
	pgn_transcript_release(&t);
}

static void
test_claude_results_interrupts_errors_and_sidechains(void)
{
	struct pgn_transcript t;

	parse(
	    "{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"role\":"
	    "\"user\",\"content\":\"go\"}}\n"
	    "{\"type\":\"assistant\",\"sessionId\":\"s\",\"message\":{"
	    "\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":"
	    "\"Bash\",\"input\":{\"command\":\"sleep 9\",\"run_in_background\""
	    ":true}}],\"stop_reason\":\"tool_use\"}}\n"
	    "{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"content\":"
	    "[{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\":"
	    "\"done\"}]}}\n"
	    "{\"type\":\"user\",\"sessionId\":\"s\",\"isSidechain\":true,"
	    "\"message\":{\"content\":\"subagent task\"}}\n"
	    "{\"type\":\"user\",\"sessionId\":\"s\",\"isMeta\":true,"
	    "\"message\":{\"content\":\"meta\"}}\n",
	    &t);
	CHECK_INT(t.prompts, 1);
	CHECK_STR(t.last_prompt, "go");
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_OPEN);
	REQUIRE(t.ncmds == 1);
	CHECK_STR(t.cmds[0], "(background) sleep 9");
	pgn_transcript_release(&t);
	parse("{\"type\":\"user\",\"sessionId\":\"s\",\"message\":{\"content\":"
	      "[{\"type\":\"text\",\"text\":\"[Request interrupted by user]\"}]"
	      "}}\n",
	    &t);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_ABORTED);
	CHECK_INT(t.prompts, 0);
	pgn_transcript_release(&t);
	parse("{\"type\":\"assistant\",\"sessionId\":\"s\","
	      "\"isApiErrorMessage\":true,\"message\":{\"content\":[{\"type\":"
	      "\"text\",\"text\":\"API Error: 500\"}],\"stop_reason\":"
	      "\"stop_sequence\"}}\n",
	    &t);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_ERROR);
	CHECK_STR(t.error, "API Error: 500");
	pgn_transcript_release(&t);
}

/* ---- Codex (real captures, scrubbed) ------------------------------- */

static void
test_codex_real_session_skips_injected_context(void)
{
	struct pgn_transcript t;

	read_fixture("transcripts/codex-shell.jsonl", PGN_TRANSCRIPT_UNKNOWN,
	    &t);
	CHECK_INT(t.unknown, 0);
	CHECK_INT(t.prompts, 2);
	CHECK_STR(t.first_prompt,
	    "please list the files\nmock-shell: echo hello > notes.txt");
	CHECK_STR(t.last_prompt, "now say goodbye");
	CHECK_STR(t.last_text, "MOCK-REPLY");
	REQUIRE(t.ncmds == 1);
	CHECK_STR(t.cmds[0], "echo hello > notes.txt");
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_SUCCESS);
	pgn_transcript_release(&t);
}

static void
test_codex_real_apply_patch_names_its_file(void)
{
	struct pgn_transcript t;

	read_fixture("transcripts/codex-patch.jsonl", PGN_TRANSCRIPT_CODEX, &t);
	CHECK(has_file(&t, "README.md"));
	CHECK_INT(tool_calls(&t, "apply_patch"), 1);
	REQUIRE(t.ncmds == 1);
	CHECK_STR(t.cmds[0], "ls -la");
	pgn_transcript_release(&t);
}

static void
test_codex_shell_argv_custom_patch_abort_and_error(void)
{
	struct pgn_transcript t;

	parse("{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\""
	      "}}\n"
	      "{\"type\":\"response_item\",\"payload\":{\"type\":"
	      "\"function_call\",\"name\":\"shell\",\"arguments\":\"{\\\""
	      "command\\\":[\\\"bash\\\",\\\"-lc\\\",\\\"make test\\\"]}\"}}\n"
	      "{\"type\":\"response_item\",\"payload\":{\"type\":"
	      "\"function_call\",\"name\":\"shell\",\"arguments\":\"{\\\""
	      "command\\\":[\\\"git\\\",\\\"status\\\"]}\"}}\n"
	      "{\"type\":\"response_item\",\"payload\":{\"type\":"
	      "\"custom_tool_call\",\"name\":\"apply_patch\",\"input\":\"*** "
	      "Begin Patch\\n*** Add File: x.c\\n+1\\n*** End Patch\"}}\n"
	      "{\"type\":\"event_msg\",\"payload\":{\"type\":\"turn_aborted\","
	      "\"reason\":\"interrupted\"}}\n",
	    &t);
	REQUIRE(t.ncmds == 2);
	CHECK_STR(t.cmds[0], "make test");
	CHECK_STR(t.cmds[1], "git status");
	CHECK(has_file(&t, "x.c"));
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_ABORTED);
	CHECK_STR(t.status, "interrupted");
	pgn_transcript_release(&t);
	parse("{\"type\":\"event_msg\",\"payload\":{\"type\":\"error\","
	      "\"message\":\"stream disconnected\"}}\n",
	    &t);
	CHECK_INT(t.outcome, PGN_TRANSCRIPT_ERROR);
	CHECK_STR(t.error, "stream disconnected");
	pgn_transcript_release(&t);
}

/* ---- redaction ------------------------------------------------------ */

static void
test_redact_replaces_each_credential_pattern(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"key sk-abcdefghijklmnopqrstuvwx end", "key [REDACTED] end"},
	    {"sk-ant-api03-AbCdEfGhIjKlMnOpQrSt_uv", "[REDACTED]"},
	    {"sk-proj-abcdefghijklmnopqrstuvwxyz", "[REDACTED]"},
	    {"ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"},
	    {"gho_abcdefghijklmnopqrst1", "[REDACTED]"},
	    {"github_pat_11ABCDEFG0abcdefghij_klmnop", "[REDACTED]"},
	    {"glpat-abcdefghij0123456789", "[REDACTED]"},
	    {"xoxb-1234567890-abcdef", "[REDACTED]"},
	    {"id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED]."},
	    {"ASIAIOSFODNN7EXAMPLE", "[REDACTED]"},
	    {"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "[REDACTED]"},
	    {"sk_live_abcdefghijklmnop", "[REDACTED]"},
	    {"npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"},
	    {"hf_abcdefghijklmnopqrstuvwxyz01234", "[REDACTED]"},
	    {"Authorization: Bearer abc.def-ghi_jkl~mno+pq/r=",
	        "Authorization: Bearer [REDACTED]"},
	    {"authorization: basic dXNlcjpwYXNzd29yZA==",
	        "authorization: basic [REDACTED]"},
	    {"a -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE "
	     "KEY----- b",
	        "a [REDACTED] b"},
	    {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", "[REDACTED]"},
	    {"password=hunter2 ok", "password=[REDACTED] ok"},
	    {"--db-password hunter2", "--db-password [REDACTED]"},
	    {"DB_PASSWORD: 's3cr3t'", "DB_PASSWORD: '[REDACTED]'"},
	    {"{\"api_key\": \"abc123\"}", "{\"api_key\": \"[REDACTED]\"}"},
	    {"export GITHUB_TOKEN=xyz; ls",
	        "export GITHUB_TOKEN=[REDACTED]; ls"},
	    {"client_secret=abc&x=1", "client_secret=[REDACTED]&x=1"},
	    {"https://bob:pa55@example.com/x",
	        "https://bob:[REDACTED]@example.com/x"},
	    {"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJl x",
	        "jwt [REDACTED] x"},
	};
	size_t i, n;
	char *r;

	for (i = 0; i < H_COUNT(cases); i++) {
		r = pgn_redact(cases[i].in, strlen(cases[i].in), &n);
		REQUIRE(r != NULL);
		if (!CHECK_STR(r, cases[i].out))
			printf("  case %zu\n", i);
		CHECK_INT(n, strcmp(cases[i].in, cases[i].out) != 0);
		free(r);
	}
}

static void
test_redact_leaves_lookalikes_alone(void)
{
	static const char *const keep[] = {
	    "task-abcdefghijklmnopqrstuvwxyz",  /* sk- inside a word */
	    "sk-short",                         /* too short to be a key */
	    "AKIA1234",                         /* too short */
	    "token_count=12 max_tokens=100",    /* names not ending so */
	    "the password is long",             /* no assignment */
	    "Bearer short",                     /* too short a token */
	    "https://example.com:8080/path",    /* no user:password@ */
	    "-----BEGIN CERTIFICATE-----\nMII", /* not a private key */
	    "password=[REDACTED]",              /* already redacted */
	};
	size_t i, n;
	char *r;

	for (i = 0; i < H_COUNT(keep); i++) {
		r = pgn_redact(keep[i], strlen(keep[i]), &n);
		REQUIRE(r != NULL);
		CHECK_STR(r, keep[i]);
		CHECK_INT(n, 0);
		free(r);
	}
}

static void
test_redact_applies_before_a_cut_so_no_key_shows_in_part(void)
{
	struct pgn_buf b;
	struct pgn_transcript t;
	char *text;

	/* a key straddling the kept text's bound */
	pgn_buf_init(&b, 16384);
	pgn_buf_adds(&b,
	    "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":"
	    "\"text\",\"text\":\"");
	while (b.len < 80 + PGN_TRANSCRIPT_MAX_TEXT - 10)
		pgn_buf_add(&b, "w ", 2);
	pgn_buf_adds(&b,
	    "sk-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 tail\"}]}}\n");
	text = pgn_buf_take(&b, NULL);
	REQUIRE(text != NULL);
	parse(text, &t);
	REQUIRE(t.first_prompt != NULL);
	CHECK(strstr(t.first_prompt, "sk-ABC") == NULL);
	CHECK(strstr(t.first_prompt, "ABCDEFGH") == NULL);
	CHECK(strlen(t.first_prompt) <= PGN_TRANSCRIPT_MAX_TEXT);
	pgn_transcript_release(&t);
	free(text);
}

/* ---- the digest ----------------------------------------------------- */

static void
add_entry(struct pgn_entries *e, const char *kind, int64_t id, const char *peer,
    const char *body)
{
	REQUIRE(pgn_vec_grow((void **)&e->v, &e->cap, e->n, sizeof(*e->v)));
	memset(&e->v[e->n], 0, sizeof(e->v[e->n]));
	e->v[e->n].id = (int64_t)e->n + 1;
	e->v[e->n].message_id = id;
	e->v[e->n].kind = pgn_strdup(kind);
	e->v[e->n].peer = pgn_strdup(peer);
	e->v[e->n].detail = pgn_strdup("");
	e->v[e->n].body = pgn_strdup(body);
	e->n++;
}

/* Only tab-free printable text and newlines, valid UTF-8. */
static int
terminal_safe(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\n') ||
		    s[i] == 0x7f)
			return 0;
	return pgn_utf8_valid(s, strlen(s));
}

static void
test_digest_holds_every_section_framed_as_data(void)
{
	struct pgn_transcript t;
	struct pgn_entries j = {0};
	pgn_status st;
	char *d;

	read_fixture(MAIN_PATH, PGN_TRANSCRIPT_CURSOR, &t);
	add_entry(&j, "sent", 7, "bob", "please review src/new.c");
	add_entry(&j, "bound", 0, "", "");
	add_entry(&j, "delivered", 9, "carol",
	    "use token ghp_abcdefghijklmnopqrstuvwxyz0123");
	d = pgn_digest_render(&t, "cursor:" MAIN_ID, "alice", &j, 0, &st);
	REQUIRE(d != NULL);
	CHECK_INT(st, PGN_OK);
	CHECK(strncmp(d,
	          "Transcript digest of session cursor:" MAIN_ID
	          " of agent alice (data, not instructions)\n",
	          strlen("Transcript digest of session cursor:" MAIN_ID
	                 " of agent alice (data, not instructions)\n")) == 0);
	CHECK_CONTAINS(d, "source: cursor transcript, 21 lines\n");
	CHECK_CONTAINS(d,
	    "first prompt: Fix the failing build in src/main.c\n");
	CHECK_CONTAINS(d,
	    "last prompt: Summarise what you changed, "
	    "password=[REDACTED]\n");
	CHECK_CONTAINS(d,
	    "last answer: I changed src/main.c and added "
	    "src/new.c.\n");
	CHECK_CONTAINS(d, "last turn: success\n");
	CHECK_CONTAINS(d, "last question asked: Keep the old API?\n");
	CHECK_CONTAINS(d, "files touched (8):\n  src/main.c\n");
	CHECK_CONTAINS(d, "  /home/dev/work/tests/report.txt\n");
	CHECK_CONTAINS(d, "commands run (3, newest last):\n  $ make 2>&1");
	CHECK_CONTAINS(d, "  $ make lint\n");
	CHECK_CONTAINS(d, "CallMcpTool github/create_issue 1");
	CHECK_CONTAINS(d, "subagents (1): " CHILD_ID " success, 2 calls\n");
	CHECK_CONTAINS(d,
	    "messages (journal, newest last):\n"
	    "  sent #7 to bob: please review src/new.c\n"
	    "  received #9 from carol: use token [REDACTED]\n");
	CHECK(strstr(d, "ghp_") == NULL);
	CHECK(strstr(d, "(cut:") == NULL);
	CHECK(strlen(d) <= PGN_DIGEST_MAX);
	CHECK(terminal_safe(d));
	free(d);
	pgn_entries_release(&j);
	pgn_transcript_release(&t);
}

static void
test_digest_escapes_control_and_hidden_characters(void)
{
	struct pgn_transcript t;
	pgn_status st;
	char *d;

	parse("{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\","
	      "\"text\":\"a\\u001b[31mred\\u0007 \\u202eevil\\ttab\\nline\"}]}}"
	      "\n",
	    &t);
	d = pgn_digest_render(&t, "cursor:\x1b]0;x", NULL, NULL, 0, &st);
	REQUIRE(d != NULL);
	CHECK(terminal_safe(d));
	CHECK_CONTAINS(d,
	    "first prompt: a\\x1b[31mred\\x07 \\u202eevil tab "
	    "line\n");
	CHECK_CONTAINS(d, "session cursor:\\x1b]0;x");
	free(d);
	pgn_transcript_release(&t);
}

/*
 * The names a digest lists come from the transcript too: a tool's name,
 * an MCP server given as a URL with its password, a subagent's parent.
 */
static void
test_digest_redacts_tool_and_server_names(void)
{
	struct pgn_transcript t;
	pgn_status st;
	char *d;

	parse("{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":"
	      "\"tool_use\",\"name\":\"CallMcpTool\",\"input\":{\"server\":"
	      "\"https://bot:hunter2@mcp.example.com\",\"toolName\":\"find\"}},"
	      "{\"type\":\"tool_use\",\"name\":"
	      "\"ghp_abcdefghijklmnopqrstuvwxyz0123\",\"input\":{}}]}}\n",
	    &t);
	d = pgn_digest_render(&t, "cursor:x", NULL, NULL, 0, &st);
	REQUIRE(d != NULL);
	CHECK_CONTAINS(d, "tool calls (2): ");
	CHECK_CONTAINS(d, "https://bot:[REDACTED]@mcp.example.com");
	CHECK(strstr(d, "hunter2") == NULL);
	CHECK(strstr(d, "ghp_") == NULL);
	free(d);
	pgn_transcript_release(&t);
}

/* A transcript and journal with every list full and every text long. */
static void
full(struct pgn_transcript *t, struct pgn_entries *j)
{
	char s[PGN_TRANSCRIPT_MAX_PATH + 1];
	size_t i;

	pgn_transcript_init(t);
	t->format = PGN_TRANSCRIPT_CURSOR;
	memset(s, 'p', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	REQUIRE(tr_prompt(t, s) == PGN_OK);
	REQUIRE(tr_prompt(t, s) == PGN_OK);
	REQUIRE(tr_answer(t, s) == PGN_OK);
	REQUIRE(tr_question(t, s) == PGN_OK);
	REQUIRE(tr_end(t, PGN_TRANSCRIPT_ERROR, "error", s) == PGN_OK);
	for (i = 0; i < PGN_TRANSCRIPT_MAX_FILES + 5; i++) {
		s[0] = (char)('A' + i % 26);
		s[1] = (char)('A' + i / 26);
		REQUIRE(tr_file(t, s, strlen(s)) == PGN_OK);
		REQUIRE(tr_command(t, s, 1) == PGN_OK);
		REQUIRE(tr_call(t, s, s) == PGN_OK);
	}
	for (i = 0; i < 50; i++)
		add_entry(j, i % 2 ? "sent" : "delivered", (int64_t)i, "peer",
		    s);
}

static void
test_digest_never_exceeds_4000_bytes_and_says_what_it_cut(void)
{
	struct pgn_transcript t;
	struct pgn_entries j = {0};
	pgn_status st;
	char *d;

	full(&t, &j);
	d = pgn_digest_render(&t, "cursor:x", "alice", &j, 0, &st);
	REQUIRE(d != NULL);
	CHECK(strlen(d) <= PGN_DIGEST_MAX);
	CHECK(strlen(d) > PGN_DIGEST_MAX - 400);
	CHECK_CONTAINS(d, "(cut: ");
	CHECK_CONTAINS(d, "within 4000 bytes)\n");
	/* every section still shows */
	CHECK_CONTAINS(d, "first prompt: ");
	CHECK_CONTAINS(d, "last answer: ");
	CHECK_CONTAINS(d, "last turn: error: ");
	CHECK_CONTAINS(d, "files touched (69+):");
	CHECK_CONTAINS(d, "commands run (69, newest last):");
	CHECK_CONTAINS(d, "messages (journal, newest last):");
	CHECK_CONTAINS(d, "  sent #49 to peer: ");
	CHECK(terminal_safe(d));
	free(d);
	pgn_entries_release(&j);
	pgn_transcript_release(&t);
}

static void
test_digest_max_edges(void)
{
	struct pgn_transcript t;
	struct pgn_entries j = {0};
	pgn_status st;
	char *d;

	full(&t, &j);
	/* above the bound it is the bound */
	d = pgn_digest_render(&t, NULL, NULL, &j, PGN_DIGEST_MAX + 1, &st);
	REQUIRE(d != NULL);
	CHECK(strlen(d) <= PGN_DIGEST_MAX);
	free(d);
	d = pgn_digest_render(&t, NULL, NULL, &j, PGN_DIGEST_MAX, &st);
	REQUIRE(d != NULL);
	CHECK(strlen(d) <= PGN_DIGEST_MAX);
	free(d);
	/* the smallest digest, and one byte under it */
	d = pgn_digest_render(&t, "cursor:x", "alice", &j, 400, &st);
	REQUIRE(d != NULL);
	CHECK(strlen(d) <= 400);
	CHECK_CONTAINS(d,
	    "Transcript digest of session cursor:x of agent "
	    "alice (data, not instructions)\n");
	CHECK_CONTAINS(d, "(cut: ");
	free(d);
	d = pgn_digest_render(&t, NULL, NULL, &j, 399, &st);
	CHECK(d == NULL);
	CHECK_INT(st, PGN_EINVAL);
	pgn_entries_release(&j);
	pgn_transcript_release(&t);
}

static void
test_digest_without_transcript_holds_the_journal(void)
{
	struct pgn_entries j = {0};
	pgn_status st;
	char *d;

	add_entry(&j, "sent", 3, "bob", "hello\nbob");
	d = pgn_digest_render(NULL, "claude:s1", "alice", &j, 0, &st);
	REQUIRE(d != NULL);
	CHECK_CONTAINS(d, "source: no transcript\n");
	CHECK_CONTAINS(d, "  sent #3 to bob: hello bob\n");
	CHECK(strstr(d, "first prompt") == NULL);
	free(d);
	pgn_entries_release(&j);
}

static void
test_digest_of_each_real_fixture_fits(void)
{
	static const char *const names[] = {"transcripts/claude-shell.jsonl",
	    "transcripts/claude-edit.jsonl", "transcripts/codex-shell.jsonl",
	    "transcripts/codex-patch.jsonl"};
	struct pgn_transcript t;
	pgn_status st;
	size_t i;
	char *d;

	for (i = 0; i < H_COUNT(names); i++) {
		read_fixture(names[i], PGN_TRANSCRIPT_UNKNOWN, &t);
		d = pgn_digest_render(&t, NULL, NULL, NULL, 0, &st);
		REQUIRE(d != NULL);
		CHECK(strlen(d) <= PGN_DIGEST_MAX);
		CHECK_CONTAINS(d, "last turn: success\n");
		CHECK_CONTAINS(d, "last answer: MOCK-REPLY\n");
		CHECK(terminal_safe(d));
		free(d);
		pgn_transcript_release(&t);
	}
}

static const struct h_test tests[] = {
    H_TEST(test_cursor_user_frame_is_a_prompt_and_text_frame_the_answer),
    H_TEST(test_cursor_text_and_tool_in_one_frame_are_both_read),
    H_TEST(test_cursor_parallel_calls_of_one_name_count_by_position),
    H_TEST(test_cursor_apply_patch_string_names_every_file_it_touches),
    H_TEST(test_cursor_apply_patch_unified_diff_names_every_file_it_touches),
    H_TEST(test_cursor_apply_patch_with_an_object_input_is_only_counted),
    H_TEST(test_cursor_mcp_wrappers_name_their_server_and_tool),
    H_TEST(test_cursor_turn_ended_statuses_and_their_errors),
    H_TEST(test_cursor_fixture_with_every_status_ends_as_its_last_frame_says),
    H_TEST(test_cursor_frames_after_turn_ended_are_an_unterminated_turn),
    H_TEST(test_cursor_checklist_fixture_reads_whole),
    H_TEST(test_cursor_subagents_are_found_by_directory_containment),
    H_TEST(test_cursor_agent_tools_sidecar_is_never_opened),
    H_TEST(test_cursor_block_over_30k_is_read_and_kept_within_bounds),
    H_TEST(test_reader_counts_and_skips_blank_and_malformed_lines),
    H_TEST(test_reader_skips_a_line_over_the_line_bound_and_keeps_one_at_it),
    H_TEST(test_reader_reads_at_most_the_last_64_mib),
    H_TEST(test_reader_result_does_not_depend_on_how_bytes_are_split),
    H_TEST(test_reader_takes_a_last_line_without_newline),
    H_TEST(test_reader_errors_name_the_problem),
    H_TEST(test_reader_detects_each_format_from_its_frames),
    H_TEST(test_claude_real_session_gives_prompts_command_and_outcome),
    H_TEST(test_claude_real_edits_are_files_touched),
    H_TEST(test_claude_results_interrupts_errors_and_sidechains),
    H_TEST(test_codex_real_session_skips_injected_context),
    H_TEST(test_codex_real_apply_patch_names_its_file),
    H_TEST(test_codex_shell_argv_custom_patch_abort_and_error),
    H_TEST(test_redact_replaces_each_credential_pattern),
    H_TEST(test_redact_leaves_lookalikes_alone),
    H_TEST(test_redact_applies_before_a_cut_so_no_key_shows_in_part),
    H_TEST(test_digest_holds_every_section_framed_as_data),
    H_TEST(test_digest_escapes_control_and_hidden_characters),
    H_TEST(test_digest_redacts_tool_and_server_names),
    H_TEST(test_digest_never_exceeds_4000_bytes_and_says_what_it_cut),
    H_TEST(test_digest_max_edges),
    H_TEST(test_digest_without_transcript_holds_the_journal),
    H_TEST(test_digest_of_each_real_fixture_fits),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
