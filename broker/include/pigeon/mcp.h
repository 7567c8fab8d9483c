/*
 * pigeon mcp: the mailbox as Model Context Protocol tools (docs/mcp.md,
 * decisions 0165-0167). JSON-RPC 2.0, one message a line; the library
 * answers a line with a line and the front end (cli/cmd_mcp.c) moves
 * the lines between stdin and stdout. The acting agent is the server's
 * (its session, --agent, $PIGEON_AGENT), never a tool argument.
 */
#ifndef PIGEON_MCP_H
#define PIGEON_MCP_H

#include <stddef.h>
#include <stdint.h>

#include "pigeon/pigeon.h"

/* Limits (docs/limits.md). */
#define PGN_MCP_MAX_LINE    262144 /* one request line, bytes (256 KiB) */
#define PGN_MCP_WAIT_MAX_MS 50000  /* the wait tool: under Codex's 60 s */
#define PGN_MCP_WAIT_DEF_MS 30000  /* the wait tool, no timeout given */
#define PGN_MCP_READ_MAX    20     /* messages one read tool call claims */

/* The protocol revisions answered, newest first (decision 0165). */
#define PGN_MCP_LATEST "2025-11-25"

struct pgn_mcp_config {
	const char *db_flag;       /* --db, or NULL: pgn_db_path's choice */
	const char *dir;           /* the directory whose scope is served */
	const char *agent;         /* --agent, or NULL */
	const char *agent_default; /* $PIGEON_AGENT, or NULL */
	const char *session;       /* $PIGEON_SESSION, or NULL */
	/* Asked while the wait tool waits: true to give up (stdin closed). */
	int (*cancel)(void *arg);
	void *cancel_arg;
};

struct pgn_mcp;

/*
 * A server for 'cfg' (its strings are copied). Nothing is opened yet:
 * the database is opened at the first tool call, so an initialize is
 * answered at once. Returns PGN_EINVAL (a bad --agent), PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_mcp_open(const struct pgn_mcp_config *cfg,
    struct pgn_mcp **out, struct pgn_err *err);
void pgn_mcp_close(struct pgn_mcp *s);

/*
 * Handle one line (without its newline; 'len' bytes, any bytes). '*out'
 * gets the answer line (no newline, the caller frees it) or NULL when a
 * notification needs none. 'too_long' says the line was cut at
 * PGN_MCP_MAX_LINE: its answer is the protocol's error. PGN_OK, or
 * PGN_ENOMEM (no answer could be made).
 */
PGN_NODISCARD pgn_status pgn_mcp_handle(struct pgn_mcp *s, const char *line,
    size_t len, int too_long, char **out);

/*
 * The messages the last pgn_mcp_handle claimed (read, wait): their ids,
 * which the answer carries. A front end that cannot write the answer
 * logs them (pgn_mcp_lost_line). '*n' 0: none.
 */
const int64_t *pgn_mcp_claimed(const struct pgn_mcp *s, size_t *n);

/*
 * 1 if line[0..len) is a notifications/cancelled: the host gave up on
 * the request being answered. The wait tool's front end asks it of each
 * whole line that comes meanwhile, and stops waiting (nothing claimed;
 * the host ignores the answer to a cancelled request).
 */
int pgn_mcp_is_cancel(const char *line, size_t len);

/*
 * 1 if the last answer is the result that carries what its request
 * claimed (or nothing was claimed); 0 if the claim was made and the
 * answer became an error (out of memory building it): the front end
 * logs the ids as it does for an answer it cannot write.
 */
int pgn_mcp_claim_answered(const struct pgn_mcp *s);

/*
 * One log line (no newline) naming what the last answer claimed and
 * lost: "lost-output agent=NAME route=mcp ids=1,2". Into 'buf'
 * ('cap' bytes, cut at a whole id); its length.
 */
size_t pgn_mcp_lost_line(const struct pgn_mcp *s, char *buf, size_t cap);

#endif /* PIGEON_MCP_H */
