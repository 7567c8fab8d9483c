/*
 * Fuzz the before-tool event's parsers (decision 0156): the patch path
 * reader (base/patch.c) on raw text, the apply_patch heredoc finder, and
 * pgn_tool_call_read on the input as a payload of every host and as the
 * patch or command argument of each host's write tools. Checks what the
 * lease check relies on: every path a non-empty slice of the input,
 * at most PGN_HOOK_MAX_TOOL_PATHS paths, each UTF-8 without a control
 * byte, nothing judged without a tool name.
 */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "hook_int.h"
#include "pgn_int.h"
#include "pigeon/hosts.h"

struct span {
	const char *lo, *hi;
	size_t n;
};

static pgn_status
in_span(void *arg, const char *path, size_t len)
{
	struct span *s = arg;

	check(path >= s->lo && path + len <= s->hi);
	s->n++;
	return PGN_OK;
}

static void
check_call(const struct pgn_tool_call *c)
{
	size_t i, k, n;

	check(c->n <= PGN_HOOK_MAX_TOOL_PATHS);
	check(c->judged || c->n == 0);
	for (i = 0; i < c->n; i++) {
		n = strlen(c->paths[i]);
		check(n > 0 && n < PGN_MAX_PATH);
		check(pgn_utf8_valid(c->paths[i], n));
		for (k = 0; k < n; k++)
			check((unsigned char)c->paths[i][k] >= 0x20 &&
			    c->paths[i][k] != 0x7f);
	}
}

/* The input as tool 'tool''s argument 'key' in a payload of host 'h'. */
static void
as_argument(pgn_host h, const char *tool, const char *key, const char *text)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_tool_call c;
	cJSON *root, *in;

	root = cJSON_CreateObject();
	if (root == NULL)
		return;
	in = cJSON_AddObjectToObject(root, hi->tool.input);
	if (cJSON_AddStringToObject(root, hi->tool.name, tool) != NULL &&
	    in != NULL && cJSON_AddStringToObject(in, key, text) != NULL &&
	    pgn_tool_call_read(root, h, &c) == PGN_OK) {
		check_call(&c);
		check(c.judged);
		pgn_tool_call_release(&c);
	}
	cJSON_Delete(root);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct pgn_host_info *hi;
	struct pgn_tool_call c;
	struct span s;
	const char *p;
	cJSON *root;
	char *buf;
	int h, i;

	if (size > 1 << 16)
		return 0;
	buf = fuzz_cstr(data, size);
	if (buf == NULL)
		return 0;
	s.lo = buf;
	s.hi = buf + strlen(buf);
	s.n = 0;
	check(pgn_patch_paths(buf, in_span, &s) == PGN_OK);
	p = pgn_patch_in_shell(buf);
	check(p == NULL ||
	    (p >= buf &&
	        strncmp(p, PGN_PATCH_BEGIN, strlen(PGN_PATCH_BEGIN)) == 0));
	root = cJSON_ParseWithLength(buf, size);
	for (h = 0; h < PGN_NHOSTS; h++) {
		if (cJSON_IsObject(root) &&
		    pgn_tool_call_read(root, (pgn_host)h, &c) == PGN_OK) {
			check_call(&c);
			pgn_tool_call_release(&c);
		}
		hi = pgn_host_get((pgn_host)h);
		for (i = 0; i < PGN_HOST_TOOLS && hi->tools[i].form; i++)
			as_argument((pgn_host)h, hi->tools[i].tool,
			    hi->tools[i].keys[0], buf);
	}
	cJSON_Delete(root);
	free(buf);
	return 0;
}
