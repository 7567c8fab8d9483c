/*
 * Unit tests of the before-tool event (decision 0156): which tool calls
 * of each host are judged, the paths read from their arguments (a path,
 * a patch, an apply_patch heredoc in a shell command), the patch reader
 * both the hook and the digest use, and what passes unjudged.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "hook_int.h"
#include "pgn_int.h"

/* ---- the patch reader ---------------------------------------------- */

struct got {
	char v[8][64];
	size_t n;
};

static pgn_status
collect(void *arg, const char *path, size_t len)
{
	struct got *g = arg;

	if (g->n < 8 && len < 64) {
		memcpy(g->v[g->n], path, len);
		g->v[g->n][len] = '\0';
	}
	g->n++;
	return PGN_OK;
}

static void
check_patch(const char *patch, const char *want)
{
	struct got g;
	char joined[512];
	size_t i, k = 0;

	memset(&g, 0, sizeof(g));
	CHECK_INT(pgn_patch_paths(patch, collect, &g), PGN_OK);
	joined[0] = '\0';
	for (i = 0; i < g.n && i < 8; i++)
		k += (size_t)snprintf(joined + k, sizeof(joined) - k, "%s%s",
		    i > 0 ? "|" : "", g.v[i]);
	if (!CHECK_STR(joined, want))
		printf("  patch: %s\n", patch);
}

static void
test_patch_paths_of_both_dialects(void)
{
	check_patch("*** Begin Patch\n*** Update File: a.c\n@@\n-x\n+y\n"
	            "*** Add File: dir/b.c\n+z\n*** Delete File: c.c\n"
	            "*** Update File: d.c\n*** Move to: e.c\n*** End Patch\n",
	    "a.c|dir/b.c|c.c|d.c|e.c");
	/* In a Begin Patch, a removed "-- x" line is no header. */
	check_patch("*** Begin Patch\n*** Update File: a.c\n--- x\n+++ y\n"
	            "*** End Patch",
	    "a.c");
	check_patch("diff --git a/src/x.c b/src/x.c\n--- a/src/x.c\n"
	            "+++ b/src/x.c\n@@ -1 +1 @@\n-a\n+b\n",
	    "src/x.c|src/x.c|src/x.c");
	check_patch("--- /dev/null\n+++ b/new.txt\t2026-01-01\n", "new.txt");
	check_patch("--- old.txt\n+++ /dev/null\n", "old.txt");
	check_patch("diff --git a/x b/y\nrename from x\nrename to y\n", "x|y");
	check_patch("no patch here\n--- lonely\n", "");
	check_patch("", "");
	/* CRLF line ends: the \r is no part of the path. */
	check_patch("--- a/w.c\r\n+++ b/w.c\r\n", "w.c|w.c");
}

static void
test_apply_patch_heredoc_is_found_in_a_shell_command(void)
{
	static const struct {
		const char *cmd;
		int found;
	} rows[] = {
	    {"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n", 1},
	    {"cd sub && apply_patch <<EOF\n*** Begin Patch\nEOF", 1},
	    {"bash -lc \"apply_patch <<'P'\n*** Begin Patch\nP\"", 1},
	    {"apply_patch<<EOF\n*** Begin Patch\nEOF", 1},
	    /* Not a command word, or not a heredoc: a shell command. */
	    {"echo apply_patcher <<EOF\n*** Begin Patch\nEOF", 0},
	    {"my_apply_patch <<EOF\n*** Begin Patch\nEOF", 0},
	    {"grep apply_patch notes.txt", 0},
	    {"apply_patch x.diff && cat '*** Begin Patch'", 0},
	    {"cat <<EOF\n*** Begin Patch\nEOF", 0},
	    {"", 0},
	};
	const char *p;
	size_t i;

	for (i = 0; i < H_COUNT(rows); i++) {
		p = pgn_patch_in_shell(rows[i].cmd);
		if (!CHECK_INT(p != NULL, rows[i].found))
			printf("  command: %s\n", rows[i].cmd);
		if (p != NULL)
			CHECK(strncmp(p, PGN_PATCH_BEGIN,
			          strlen(PGN_PATCH_BEGIN)) == 0);
	}
}

/* ---- the tool call of each host's payload -------------------------- */

struct call_row {
	pgn_host host;
	const char *json; /* the payload */
	int judged;
	const char *paths; /* "a|b", or "" */
	int bad;           /* c.why is set */
};

static void
check_call(const struct call_row *r)
{
	struct pgn_tool_call c;
	char joined[1024];
	cJSON *root;
	size_t i, k = 0;

	root = cJSON_Parse(r->json);
	REQUIRE(root != NULL);
	CHECK_INT(pgn_tool_call_read(root, r->host, &c), PGN_OK);
	joined[0] = '\0';
	for (i = 0; i < c.n; i++)
		k += (size_t)snprintf(joined + k, sizeof(joined) - k, "%s%s",
		    i > 0 ? "|" : "", c.paths[i]);
	if (!CHECK_INT(c.judged, r->judged) || !CHECK_STR(joined, r->paths) ||
	    !CHECK_INT(c.why[0] != '\0', r->bad))
		printf("  %s payload %s (why: %s)\n",
		    pgn_host_get(r->host)->name, r->json, c.why);
	pgn_tool_call_release(&c);
	cJSON_Delete(root);
}

static void
test_each_hosts_write_tools_name_their_paths(void)
{
	static const struct call_row rows[] = {
	    /* Claude Code (measured, 2.1.332) */
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"/p/a.c\","
	        "\"content\":\"x\"}}",
	        1, "/p/a.c", 0},
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"/p/b.c\","
	        "\"old_string\":\"a\",\"new_string\":\"b\"}}",
	        1, "/p/b.c", 0},
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"MultiEdit\",\"tool_input\":{\"file_path\":"
	        "\"/p/c.c\",\"edits\":[]}}",
	        1, "/p/c.c", 0},
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"NotebookEdit\",\"tool_input\":{"
	        "\"notebook_path\":\"/p/n.ipynb\"}}",
	        1, "/p/n.ipynb", 0},
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"/p/a.c\"}}",
	        0, "", 0},
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf /p\"}}",
	        0, "", 0},
	    /* Codex (measured, 0.171.0): the heredoc through Bash */
	    {PGN_HOST_CODEX,
	        "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"apply_patch "
	        "<<'EOF'\\n*** Begin Patch\\n*** Update File: d.txt\\n@@\\n-a\\n+b\\n"
	        "*** Add File: sub/e.txt\\n+x\\n*** End Patch\\nEOF\\n\"}}",
	        1, "d.txt|sub/e.txt", 0},
	    {PGN_HOST_CODEX,
	        "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"cat d.txt\"}}",
	        1, "", 0},
	    {PGN_HOST_CODEX,
	        "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":[\"bash\","
	        "\"-lc\",\"apply_patch <<'EOF'\\n*** Begin Patch\\n"
	        "*** Delete File: f.txt\\n*** End Patch\\nEOF\"]}}",
	        1, "f.txt", 0},
	    {PGN_HOST_CODEX,
	        "{\"tool_name\":\"apply_patch\",\"tool_input\":{\"command\":"
	        "\"*** Begin Patch\\n*** Update File: g.txt\\n*** End Patch\"}}",
	        1, "g.txt", 0},
	    /* Gemini CLI (measured, 0.61.0) */
	    {PGN_HOST_GEMINI,
	        "{\"tool_name\":\"write_file\",\"tool_input\":{\"file_path\":"
	        "\"/p/w.txt\",\"content\":\"x\"}}",
	        1, "/p/w.txt", 0},
	    {PGN_HOST_GEMINI,
	        "{\"tool_name\":\"replace\",\"tool_input\":{\"file_path\":"
	        "\"/p/r.txt\"}}",
	        1, "/p/r.txt", 0},
	    {PGN_HOST_GEMINI,
	        "{\"tool_name\":\"read_file\",\"tool_input\":{\"file_path\":"
	        "\"/p/r.txt\"}}",
	        0, "", 0},
	    {PGN_HOST_GEMINI,
	        "{\"tool_name\":\"run_shell_command\",\"tool_input\":{\"command\":"
	        "\"apply_patch <<EOF\\n*** Begin Patch\\n*** Add File: x\\nEOF\"}}",
	        0, "", 0},
	    /* Cursor (documented) */
	    {PGN_HOST_CURSOR,
	        "{\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":\"/p/c.ts\"}}",
	        1, "/p/c.ts", 0},
	    {PGN_HOST_CURSOR,
	        "{\"tool_name\":\"ApplyPatch\",\"tool_input\":{\"patch\":"
	        "\"*** Begin Patch\\n*** Update File: /p/d.ts\\n*** End Patch\"}}",
	        1, "/p/d.ts", 0},
	    {PGN_HOST_CURSOR,
	        "{\"tool_name\":\"Shell\",\"tool_input\":{\"command\":\"ls\"}}",
	        0, "", 0},
	    /* Copilot CLI (documented): toolArgs as an object or JSON text */
	    {PGN_HOST_COPILOT,
	        "{\"toolName\":\"edit\",\"toolArgs\":{\"path\":\"/p/e.md\"}}",
	        1, "/p/e.md", 0},
	    {PGN_HOST_COPILOT,
	        "{\"toolName\":\"create\",\"toolArgs\":\"{\\\"path\\\":"
	        "\\\"/p/n.md\\\",\\\"file_text\\\":\\\"x\\\"}\"}",
	        1, "/p/n.md", 0},
	    {PGN_HOST_COPILOT,
	        "{\"toolName\":\"view\",\"toolArgs\":{\"path\":\"/p/e.md\"}}",
	        0, "", 0},
	    /* opencode (its plugin passes tool_name and tool_input) */
	    {PGN_HOST_OPENCODE,
	        "{\"tool_name\":\"edit\",\"tool_input\":{\"filePath\":\"/p/o.go\"}}",
	        1, "/p/o.go", 0},
	    {PGN_HOST_OPENCODE,
	        "{\"tool_name\":\"apply_patch\",\"tool_input\":{\"patchText\":"
	        "\"*** Begin Patch\\n*** Add File: q.go\\n*** End Patch\"}}",
	        1, "q.go", 0},
	    {PGN_HOST_OPENCODE,
	        "{\"tool_name\":\"read\",\"tool_input\":{\"filePath\":\"/p/o.go\"}}",
	        0, "", 0},
	};
	size_t i;

	for (i = 0; i < H_COUNT(rows); i++)
		check_call(&rows[i]);
}

static void
test_a_malformed_call_passes_saying_why(void)
{
	static const struct call_row rows[] = {
	    /* No tool name: nothing judged, and why. */
	    {PGN_HOST_CLAUDE, "{\"tool_input\":{\"file_path\":\"/p/a\"}}", 0,
	        "", 1},
	    {PGN_HOST_CLAUDE, "{\"tool_name\":7}", 0, "", 1},
	    {PGN_HOST_CLAUDE, "{\"tool_name\":\"\"}", 0, "", 1},
	    /* A write tool whose arguments are not an object. */
	    {PGN_HOST_CLAUDE, "{\"tool_name\":\"Write\",\"tool_input\":[1]}", 1,
	        "", 1},
	    {PGN_HOST_CLAUDE, "{\"tool_name\":\"Write\"}", 1, "", 1},
	    {PGN_HOST_COPILOT, "{\"toolName\":\"edit\",\"toolArgs\":\"{oops\"}",
	        1, "", 1},
	    /* A path that is not text: a control byte. */
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":"
	        "\"/p/a\\u0001b\"}}",
	        1, "", 1},
	    /* A path argument of the wrong type: nothing to judge, no why. */
	    {PGN_HOST_CLAUDE,
	        "{\"tool_name\":\"Write\",\"tool_input\":{\"file_path\":3}}", 1,
	        "", 0},
	};
	size_t i;

	for (i = 0; i < H_COUNT(rows); i++)
		check_call(&rows[i]);
}

/* At the bound: PGN_HOOK_MAX_TOOL_PATHS paths judged, one more is why. */
static void
test_a_patch_over_the_path_bound_passes_unjudged(void)
{
	struct pgn_buf b;
	struct pgn_tool_call c;
	cJSON *root, *in;
	int i, extra;

	for (extra = 0; extra < 2; extra++) {
		pgn_buf_init(&b, 1 << 20);
		pgn_buf_adds(&b, "*** Begin Patch\n");
		for (i = 0; i < PGN_HOOK_MAX_TOOL_PATHS + extra; i++)
			pgn_buf_addf(&b, "*** Add File: f%d\n+x\n", i);
		pgn_buf_adds(&b, "*** End Patch\n");
		REQUIRE(b.err == PGN_OK);
		root = cJSON_CreateObject();
		REQUIRE(root != NULL);
		cJSON_AddStringToObject(root, "tool_name", "apply_patch");
		in = cJSON_AddObjectToObject(root, "tool_input");
		REQUIRE(in != NULL);
		cJSON_AddStringToObject(in, "command", b.data);
		CHECK_INT(pgn_tool_call_read(root, PGN_HOST_CODEX, &c), PGN_OK);
		CHECK_INT(c.n, PGN_HOOK_MAX_TOOL_PATHS);
		CHECK_INT(c.why[0] != '\0', extra);
		pgn_tool_call_release(&c);
		cJSON_Delete(root);
		pgn_buf_release(&b);
	}
}

/* The measured payloads parse as before-tool events with their paths. */
static void
test_measured_payloads_parse_as_before_tool(void)
{
	static const struct {
		pgn_host host;
		const char *file;
		const char *tool;
		int judged;
		size_t n;
	} rows[] = {
	    {PGN_HOST_CLAUDE, "claude/12-PreToolUse-write.json", "Write", 1, 1},
	    {PGN_HOST_CLAUDE, "claude/14-PreToolUse-read.json", "Read", 0, 0},
	    {PGN_HOST_CODEX, "codex/12-PreToolUse-patch-heredoc.json", "Bash",
	        1, 1},
	    {PGN_HOST_CODEX, "codex/13-PreToolUse-bash.json", "Bash", 1, 0},
	    {PGN_HOST_GEMINI, "gemini/12-BeforeTool-write.json", "write_file",
	        1, 1},
	    {PGN_HOST_GEMINI, "gemini/14-BeforeTool-read.json", "read_file", 0,
	        0},
	};
	struct pgn_payload p;
	char path[PATH_MAX], why[256];
	const char *dir = getenv("PGN_TEST_FIXTURES");
	size_t i, len;
	char *buf;

	REQUIRE(dir != NULL);
	for (i = 0; i < H_COUNT(rows); i++) {
		snprintf(path, sizeof(path), "%s/payloads/%s", dir,
		    rows[i].file);
		buf = h_read_file(path, &len);
		REQUIRE(buf != NULL);
		CHECK_INT(pgn_payload_parse(buf, len, PGN_HOST_NONE,
		              PGN_EVENT_NONE, &p, why, sizeof(why)),
		    PGN_OK);
		CHECK_INT(p.host, rows[i].host);
		CHECK_INT(p.event, PGN_EVENT_BEFORE_TOOL);
		CHECK_STR(p.call.tool, rows[i].tool);
		CHECK_INT(p.call.judged, rows[i].judged);
		CHECK_INT(p.call.n, rows[i].n);
		CHECK_STR(p.call.why, "");
		pgn_payload_release(&p);
		free(buf);
	}
}

/* Every tool map entry names at least one key, and no tool twice. */
static void
test_the_tool_maps_are_well_formed(void)
{
	const struct pgn_host_info *hi;
	int h, i, j;

	for (h = 0; h < PGN_NHOSTS; h++) {
		hi = pgn_host_get((pgn_host)h);
		CHECK(hi->events[PGN_EVENT_BEFORE_TOOL] != NULL);
		CHECK(hi->deny != PGN_DENY_NONE);
		CHECK(hi->tool.name != NULL && hi->tool.input != NULL);
		for (i = 0; i < PGN_HOST_TOOLS && hi->tools[i].form; i++) {
			CHECK(hi->tools[i].tool != NULL);
			CHECK(hi->tools[i].keys[0] != NULL);
			CHECK(pgn_host_tool((pgn_host)h, hi->tools[i].tool) ==
			    &hi->tools[i]);
			for (j = 0; j < i; j++)
				CHECK(strcmp(hi->tools[i].tool,
				          hi->tools[j].tool) != 0);
		}
		CHECK(i > 0);
		CHECK(pgn_host_tool((pgn_host)h, "no-such-tool") == NULL);
		CHECK(pgn_host_tool((pgn_host)h, NULL) == NULL);
	}
	CHECK(pgn_host_tool(PGN_HOST_NONE, "Write") == NULL);
}

static const struct h_test tests[] = {
    H_TEST(test_patch_paths_of_both_dialects),
    H_TEST(test_apply_patch_heredoc_is_found_in_a_shell_command),
    H_TEST(test_each_hosts_write_tools_name_their_paths),
    H_TEST(test_a_malformed_call_passes_saying_why),
    H_TEST(test_a_patch_over_the_path_bound_passes_unjudged),
    H_TEST(test_measured_payloads_parse_as_before_tool),
    H_TEST(test_the_tool_maps_are_well_formed),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
