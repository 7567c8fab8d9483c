/*
 * Fuzz pigeon mcp's request handling (mcp/server.c, mcp/tools.c, decision
 * 0165): the input is split at newlines into lines, each handed to one
 * server as the binary hands them (the last one may lack its newline),
 * against a database of two agents in a temporary directory; the seeds
 * are the recorded handshakes of the pinned hosts (tests/fixtures/mcp).
 * The wait tool is cancelled at once, so no input can block. On any
 * bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - an answer is one line (no newline), a JSON object with "jsonrpc"
 *     "2.0", an "id" that is null, a string or a number, and exactly one
 *     of "result" and "error" (an error with an integer code and a
 *     string message);
 *   - what a line claimed is in its answer's result;
 *   - a message in a result is `pigeon read --json`'s shape ("body").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "fuzz.h"
#include "pigeon/mcp.h"

#define MCP_FUZZ_MAX 65536

static char dbpath[512];
static char dir[256];

static int
cancel_now(void *arg)
{
	(void)arg;
	return 1;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	pgn_db *db = NULL;

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/pgn-fuzz-mcp.XXXXXX",
	    tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(dbpath, sizeof(dbpath), "%s/pigeon.db", dir);
	if (pgn_db_open(dbpath, PGN_OPEN_CREATE, 1000, &db) != PGN_OK ||
	    pgn_agent_add(db, "alice") != PGN_OK ||
	    pgn_agent_add(db, "bob") != PGN_OK)
		abort();
	pgn_db_close(db);
	return 0;
}

static void
check_answer(const char *out, const struct pgn_mcp *s)
{
	const cJSON *id, *res, *err, *v, *msgs, *m;
	const int64_t *ids;
	size_t n, i;
	char num[32];
	cJSON *j;

	check(strchr(out, '\n') == NULL);
	j = cJSON_Parse(out);
	check(j != NULL && cJSON_IsObject(j));
	v = cJSON_GetObjectItemCaseSensitive(j, "jsonrpc");
	check(cJSON_IsString(v) && strcmp(v->valuestring, "2.0") == 0);
	id = cJSON_GetObjectItemCaseSensitive(j, "id");
	check(cJSON_IsNull(id) || cJSON_IsString(id) || cJSON_IsNumber(id));
	res = cJSON_GetObjectItemCaseSensitive(j, "result");
	err = cJSON_GetObjectItemCaseSensitive(j, "error");
	check((res != NULL) != (err != NULL));
	if (err != NULL) {
		check(cJSON_IsNumber(cJSON_GetObjectItem(err, "code")));
		check(cJSON_IsString(cJSON_GetObjectItem(err, "message")));
	}
	/* A message has the CLI's one shape (decision 0216): "body". */
	msgs =
	    cJSON_GetObjectItem(cJSON_GetObjectItem(res, "structuredContent"),
	        "messages");
	cJSON_ArrayForEach(m, msgs)
	{
		check(cJSON_GetObjectItem(m, "text") == NULL);
		check(cJSON_GetObjectItem(m, "state") != NULL ||
		    cJSON_IsString(cJSON_GetObjectItem(m, "body")));
	}
	ids = pgn_mcp_claimed(s, &n);
	for (i = 0; i < n; i++) {
		snprintf(num, sizeof(num), "\"id\":%lld", (long long)ids[i]);
		check(res != NULL && strstr(out, num) != NULL);
	}
	cJSON_Delete(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_mcp_config cfg;
	struct pgn_mcp *s = NULL;
	struct pgn_err e;
	const char *p, *end, *nl;
	char *out;

	if (size > MCP_FUZZ_MAX)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.db_flag = dbpath;
	cfg.dir = dir;
	cfg.agent_default = "alice";
	cfg.cancel = cancel_now;
	if (pgn_mcp_open(&cfg, &s, &e) != PGN_OK)
		return 0;
	p = (const char *)data;
	end = p + size;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		out = NULL;
		(void)pgn_mcp_is_cancel(p, (size_t)(nl - p));
		if (pgn_mcp_handle(s, p, (size_t)(nl - p), 0, &out) == PGN_OK &&
		    out != NULL)
			check_answer(out, s);
		free(out);
		p = nl + 1;
	}
	out = NULL;
	check(pgn_mcp_handle(s, "", 0, 1, &out) == PGN_OK && out != NULL);
	check_answer(out, s);
	free(out);
	pgn_mcp_close(s);
	return 0;
}
