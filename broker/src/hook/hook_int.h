/*
 * The hook's private parts (broker/src/hook/): the payload the turn
 * parses and the bounds of its waits. Only the hook's files include it,
 * and the tests and the payload fuzzer, as they include store_int.h
 * (decision 0148); the public seam is pigeon/hook.h.
 */
#ifndef PGN_HOOK_INT_H
#define PGN_HOOK_INT_H

#include "pigeon/hook.h"
#include "pigeon/hosts.h"

/* Bytes of a pgn_hook_logf detail formatted on the stack (longer: heap). */
#define PGN_HOOK_LOG_DETAIL 1024
/* Of the deadline, kept after the provider for the claim and the write. */
#define PGN_HOOK_TAIL_MS     150
#define PGN_HOOK_MIN_WAIT_MS 50 /* lock waits get at least this */
/* A stop waiting for mail looks this often (at most 10 wake-ups a second). */
#define PGN_HOOK_STOP_POLL_MS 100
/*
 * Hashed turn keys (payloads without a turn id) are duplicates only
 * within this window: a second registration of the same hook runs
 * within the hook deadline of the first, a real repeat (Codex resuming
 * a session twice) comes later (docs/decisions/0063).
 */
#define PGN_HOOK_DUP_WINDOW_MS 3000
/*
 * Bytes of the reason opencode's plugin gives when the turn an idle wake
 * asked for did not start (its payload's wake_error), cut past it.
 */
#define PGN_HOOK_WAKE_ERROR 200

/* ---- a tool call, before it runs (pretool.c, decision 0156) ------- */

#define PGN_HOOK_MAX_TOOL_PATHS 64 /* paths one tool call is judged on */
#define PGN_HOOK_MAX_TOOL_NAME  64 /* bytes of a tool's name kept */
/*
 * Leases one denial names, one line each (decision 0160); past it, one
 * more line counts the rest. A line holds the path and the pattern up
 * to PGN_HOOK_MAX_SHOWN each (a quote in the path shown as four bytes in
 * the command), the holder twice, the reason, the time and the CLI word:
 * at most PGN_HOOK_DENY_LINE bytes.
 */
#define PGN_HOOK_DENY_LEASES 8
#define PGN_HOOK_DENY_LINE   3072
#define PGN_HOOK_DENY_TAIL   (PGN_HOOK_MAX_SHOWN + 96) /* the "more" line */
#define PGN_HOOK_DENY_MAX                                                      \
	(PGN_HOOK_DENY_LEASES * (PGN_HOOK_DENY_LINE + 1) + PGN_HOOK_DENY_TAIL)

struct pgn_tool_call {
	char tool[PGN_HOOK_MAX_TOOL_NAME + 1]; /* "" when none is named */
	/* A write tool of the host's map (hosts.h): its paths are judged. */
	int judged;
	/*
	 * Why the call cannot be judged though its tool is mapped (its
	 * arguments malformed, a path not text, over the bound): it passes,
	 * logged. "" otherwise.
	 */
	char why[PGN_MAX_ERRMSG];
	char *paths[PGN_HOOK_MAX_TOOL_PATHS]; /* as written: absolute or not */
	size_t n;
};

void pgn_tool_call_release(struct pgn_tool_call *c);

/*
 * Read the tool call of before-tool payload 'root' (a cJSON object) of
 * host 'h' by the row's tool keys and map: its name, and for a write
 * tool the paths it writes (a path argument; the files of a patch; the
 * patch of an apply_patch heredoc in a shell command). Arguments given
 * as JSON text are parsed. Never fails on bad input (c->why says it);
 * PGN_ENOMEM.
 */
struct cJSON;
PGN_NODISCARD pgn_status pgn_tool_call_read(const struct cJSON *root,
    pgn_host h, struct pgn_tool_call *c);

/* ---- payload (payload.c) ------------------------------------------ */

struct pgn_payload {
	pgn_host host;
	pgn_event event;
	int skip;          /* Cursor replaying Claude's project hooks */
	pgn_host replayer; /* with skip: the host replaying them */
	int ignore;        /* an event Pigeon does not handle */
	char session[PGN_MAX_SESSION_KEY + 1]; /* "<host>:<id>" */
	char turn[PGN_MAX_SESSION_KEY + 1];    /* "<event>:<id or hash>"; ""
	                                        * for tool, stop and idle */
	int64_t turn_window_ms;                /* 0: a real id, never expires */
	char *dir;                             /* project directory, or NULL */
	char *prompt;                          /* submitted prompt, or NULL */
	int subagent;                          /* not a top-level session */
	int64_t loop_count; /* Cursor's stop: follow-ups so far in this turn */
	char *transcript;   /* the payload's transcript_path, or NULL */
	/*
	 * A session start of a new conversation, the one that takes a baton:
	 * Cursor's sessionStart but a background agent's, Claude's and
	 * Gemini's "startup" or "clear", Codex's "startup" (never a resume
	 * or a compaction).
	 */
	int new_conversation;
	/*
	 * opencode's session.idle: the turn the idle wake asked for did not
	 * start, and why (the plugin's wake_error); "" for a wake.
	 */
	char wake_error[PGN_HOOK_WAKE_ERROR + 1];
	struct pgn_tool_call call; /* before a tool: its name and paths */
};

void pgn_payload_release(struct pgn_payload *p);

/*
 * Parse a host's payload and settle host, event, session key, project
 * directory and turn key; 'host' and 'event' other than NONE (named on
 * the command line) win over detection. Returns PGN_EINVAL with the
 * reason in 'why' (p->host and p->event keep what was detected, for the
 * neutral output), PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_payload_parse(const char *buf, size_t len,
    pgn_host host, pgn_event event, struct pgn_payload *p, char *why,
    size_t whylen);

/*
 * For a Cursor payload without a transcript_path: the path Cursor keeps
 * the conversation's transcript at under the user's home 'home',
 * <home>/.cursor/projects/<slug>/agent-transcripts/<id>/<id>.jsonl, the
 * slug being the workspace root without its leading '/' and with every
 * byte but [A-Za-z0-9] made '-', the id the conversation's without
 * "bc-". Sets p->transcript; does nothing for another host, a payload
 * that has one, no workspace root or home, or an id that is not a plain
 * file name. Returns PGN_OK or PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_payload_cursor_transcript(struct pgn_payload *p,
    const char *home);

/*
 * The host of payload 'buf' by the host table's detection rules
 * (docs/hook-protocol.md); PGN_HOST_NONE if it is not a JSON object.
 */
pgn_host pgn_payload_detect(const char *buf, size_t len);

/*
 * The before-tool run (pretool.c): for payload 'p' (parsed, event
 * PGN_EVENT_BEFORE_TOOL), deny the call in o->line when a path it
 * writes is covered by a live exclusive lease of another agent (every
 * one named, one line each, up to PGN_HOOK_DENY_LEASES); else leave
 * o->line NULL (the call passes). With no live lease in the scope, or
 * none that covers the paths (the stamp, pgn_lease_stamp_judge), no
 * database is opened and nothing is written. Never fails the call: any error
 * passes it, logged. 'start' is the run's start, for the log.
 */
pgn_status pgn_hook_pretool(const struct pgn_hook_in *in,
    struct pgn_hook_out *o, const struct pgn_payload *p, int64_t start);

#endif /* PGN_HOOK_INT_H */
