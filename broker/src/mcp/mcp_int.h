/* pigeon mcp's insides: the server (server.c) and its tools (tools.c). */
#ifndef PGN_MCP_INT_H
#define PGN_MCP_INT_H

#include <cjson/cJSON.h>

#include "pigeon/mcp.h"

struct pgn_mcp {
	char *db_flag;
	char *dir;
	char *agent;
	char *agent_default;
	char *session;
	int (*cancel)(void *arg);
	void *cancel_arg;
	pgn_db *db; /* opened at the first tool call, kept */
	char *scope;
	int initialized; /* an initialize was answered */
	/* What the last answer claimed, kept before its JSON is built. */
	int64_t claimed[PGN_MCP_READ_MAX];
	size_t nclaimed;
	int claim_answered;           /* the answer's result carries them */
	char actor[PGN_MAX_NAME + 1]; /* the last claim's agent */
};

/* The tools, as tools/list answers them (a new array; NULL: ENOMEM). */
cJSON *pgn_mcp_tools(void);

/*
 * Call tool 'name' with 'args' (an object): '*result' gets the tools/call
 * result (isError set for a tool's failure). '*unknown' 1: no such tool
 * (a protocol error). PGN_OK or PGN_ENOMEM.
 */
pgn_status pgn_mcp_call(struct pgn_mcp *s, const char *name, const cJSON *args,
    cJSON **result, int *unknown);

#endif
