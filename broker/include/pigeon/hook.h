/*
 * The hook's turn, in the library: payload bytes in, the one line to
 * print and the lines to log out. pigeon-hook only does the I/O around
 * it (bounded stdin, the deadline backstop, hook.log, one write).
 * Ownership, as in pigeon.h: strings passed in are borrowed; what comes
 * back is the caller's, freed by the matching _release.
 */
#ifndef PIGEON_HOOK_H
#define PIGEON_HOOK_H

#include "pigeon/handoff.h"
#include "pigeon/pigeon.h"

#define PGN_HOOK_MAX_ID    200 /* a host's session or turn id, bytes */
#define PGN_HOOK_MAX_DEPTH 64  /* JSON nesting of a payload */
#define PGN_HOOK_MAX_LOG   6   /* log lines one turn may leave */
#define PGN_HOOK_LOG_LINE  640 /* bytes of one log line, cut past it */
#define PGN_HOOK_MAX_SHOWN 300 /* bytes of a path shown to the model */
#define PGN_HOOK_IDS_TEXT  512 /* "12,13,..." of the claimed messages */
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

/* ---- payload (payload.c) ------------------------------------------ */

struct pgn_payload {
	pgn_host host;
	pgn_event event;
	int skip;   /* Cursor replaying Claude's project hooks */
	int ignore; /* an event Pigeon does not handle */
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

/* ---- the store's side of a turn (claim.c) ------------------------- */

#define PGN_SEEN_REFRESH_MS 60000 /* last-seen times: minute resolution */

/* What one read tells of a session before its turn. */
struct pgn_peek {
	int bound;                    /* the session has an agent */
	char agent[PGN_MAX_NAME + 1]; /* its name */
	char scope[PGN_MAX_PATH + 1]; /* its scope root, "" = global */
	int64_t seen_ms;              /* the older of session's and agent's */
	int64_t continues;            /* stops that went on in a row */
	int queued;                   /* something waits for the agent */
};

/* One read: is session 'session' bound, where, and does mail wait? */
PGN_NODISCARD pgn_status pgn_turn_peek(pgn_db *db, const char *session,
    struct pgn_peek *p);

/*
 * True when a turn with nothing to say but mail can be answered from
 * the peek alone: bound, nothing queued, seen less than
 * PGN_SEEN_REFRESH_MS ago — no write, no fsync (decision 0023).
 */
int pgn_turn_quiet(const struct pgn_peek *p, int64_t now);

struct pgn_turn_out {
	char agent[PGN_MAX_NAME + 1]; /* bound agent */
	char scope[PGN_MAX_PATH + 1]; /* its scope root */
	int duplicate;                /* same turn again: inject nothing */
	int bound;                    /* the session was bound now */
	int governed;                 /* a stop past the cap: nothing claimed */
	int64_t continues;            /* stops that went on in a row, now */
	struct pgn_msgs msgs;         /* the claimed messages */
	struct pgn_baton baton;       /* the baton taken (id 0: none) */
};

/*
 * Build the turn's output from out->msgs (the candidates, oldest
 * first), inside the claim's transaction; '*keep' may be lowered to
 * claim only the oldest '*keep'. Any status but PGN_OK rolls back.
 */
typedef pgn_status pgn_turn_render_fn(const struct pgn_turn_out *out,
    size_t *keep, void *arg);

struct pgn_turn {
	const char *host;
	const char *session; /* "<host>:<id>" */
	const char *agent;   /* wanted name, or NULL */
	const char *turn;    /* this turn's key, or NULL */
	int64_t turn_window_ms;
	const char *transcript; /* the session's transcript path, or NULL */
	const char *route;      /* pgn_turn_route() of the event */
	int64_t max_continues;  /* a stop goes on at most this many times */
	/*
	 * A prompt that is not a person's (Claude's task-notification turn,
	 * which the idle wake starts): the governor's count stays.
	 */
	int keep_continues;
	size_t budget; /* candidates' summed cost, 0: no bound */
	pgn_cost_fn *cost;
	void *cost_arg;
	/*
	 * A new conversation's session start: take the agent's baton, if
	 * one waits (handoff.h), before the messages; baton_cost (NULL:
	 * its length) is what it takes of the budget.
	 */
	int take_baton;
	size_t (*baton_cost)(const struct pgn_baton *b);
	pgn_turn_render_fn *render; /* NULL: claim every candidate */
	void *render_arg;
	void (*committing)(void *arg); /* right before the commit */
	void *committing_arg;
};

/*
 * One hook turn, in one write transaction: bind session req->session
 * (of req->host) to an agent if it is new — req->agent, or a generated
 * adjective-noun name unique in the scope — in the current scope; a
 * bound session keeps its agent, in whatever scope. Keep req->transcript
 * as the session's when it differs. Unless req->turn is the turn this
 * session already had (within req->turn_window_ms, 0 = ever), record
 * the turn, find the baton (req->take_baton), select the queued
 * candidates within what it leaves of the budget, let req->render
 * build the output, then take the baton and claim what it kept as
 * pgn_claim does. Returns PGN_EINVAL (bad name, key), PGN_EBUSY,
 * PGN_EDB, PGN_ENOMEM, or what req->render returned.
 */
PGN_NODISCARD pgn_status pgn_turn_claim(pgn_db *db, const struct pgn_turn *req,
    struct pgn_turn_out *out);

/*
 * The audit route of hook event 'e' ("session-start", "prompt",
 * "after-tool", "stop"; an idle wake is governed as a stop and routed
 * "stop"), static; NULL for none.
 */
const char *pgn_turn_route(pgn_event e);

/* ---- the turn (turn.c) -------------------------------------------- */

struct pgn_hook_in {
	const char *payload; /* the bytes read from stdin */
	size_t len;
	pgn_host host;         /* named on the command line, or NONE */
	pgn_event event;       /* named on the command line, or NONE */
	const char *agent_env; /* $PIGEON_AGENT, or NULL */
	const char *agent_arg; /* --agent NAME, or NULL */
	const char *home;    /* the state home (key, provider state), or NULL */
	const char *db_path; /* the database */
	int db_create;       /* create it if absent (the default one only) */
	const char *pigeon;  /* the pigeon CLI next to the hook, or NULL */
	const char *self;    /* else this executable: the CLI is found beside
	                        it, only for a run that shows the reply command */
	const char *user_home; /* $HOME (Cursor's transcripts), or NULL */
	const char *env_file;  /* $CLAUDE_ENV_FILE (PIGEON_SESSION), or NULL */
	int64_t deadline;      /* pgn_mono_ms() by which to be done */
	/*
	 * A stop may wait for mail (reach.stopWaitMs) until this time at the
	 * latest, past 'deadline' (the caller's backstop allows it); 0: no
	 * waiting.
	 */
	int64_t wait_until;
	/*
	 * Called inside the claim's transaction, right before its commit:
	 * from here on, the line must be written (the backstop must not
	 * exit). May be called again if the transaction is retried.
	 */
	void (*committing)(void *arg);
	void *arg;
	/* ---- the idle wake (pgn_hook_rewake; 0/NULL for a turn) ---- */
	long host_pid; /* the host's process ($CLAUDE_PID), 0: unknown */
	/*
	 * A turn: the output is the framed mail as plain text (what the
	 * idle wake prints on stderr), not the host's envelope.
	 */
	int plain;
	/*
	 * A turn: asked inside the claim's transaction, before anything is
	 * marked; 0 claims nothing (o->stale is set), and nothing is output.
	 */
	int (*still)(void *arg);
	void *still_arg;
};

struct pgn_hook_out {
	pgn_host host;   /* as settled: for the neutral output */
	pgn_event event; /* NONE until known */
	pgn_status st;   /* PGN_OK, or why the neutral output is due */
	char *line;      /* what to print, with its newline; NULL: neutral */
	size_t len;
	size_t claimed;              /* messages in 'line', now delivered */
	int governed;                /* a stop past the governor's cap */
	int stale;                   /* in->still said no: nothing claimed */
	char ids[PGN_HOOK_IDS_TEXT]; /* their ids, "12,13" */
	char session[PGN_MAX_SESSION_KEY + 1];
	char agent[PGN_MAX_NAME + 1];
	char log[PGN_HOOK_MAX_LOG][PGN_HOOK_LOG_LINE]; /* without newline */
	size_t nlog;
};

void pgn_hook_out_release(struct pgn_hook_out *o);

/*
 * One hook turn: parse the payload, find the scope (the session's, once
 * bound), bind the session to an agent, run the project's provider for
 * a prompt, and claim the queued messages that fit the injected-context
 * cap — at a new conversation's session start its baton first. A Claude
 * session start appends PIGEON_SESSION to in->env_file; Cursor's gets it
 * in the output's "env". The whole output is built inside the claim's
 * transaction, before its commit: any failure rolls back and leaves every
 * message queued. Never fails the caller: o->line is NULL when the neutral
 * output is due (o->st says why), and o->log holds what to append to hook.log.
 */
void pgn_hook_turn(const struct pgn_hook_in *in, struct pgn_hook_out *o);

/* ---- the idle wake (rewake.c) -------------------------------------- */

/* The claim after the wait gets this long, lock waits included. */
#define PGN_HOOK_REWAKE_CLAIM_MS 1500
/* Bytes of a waiter's token file (pid and nonce). */
#define PGN_HOOK_REWAKE_TOKEN 64
/* Bytes of the host's command line read to tell claude -p (foreground). */
#define PGN_HOOK_REWAKE_CMDLINE 4096
/* Token files of ended waiters one new waiter looks at, at most. */
#define PGN_HOOK_REWAKE_SWEEP 1000

/*
 * Claude Code's idle wake (an asyncRewake Stop hook, docs/decisions/0081):
 * parse the Stop payload, then — for a bound session, under the
 * governor, while in->host_pid lives and this is the session's newest
 * waiter (a token file under in->home; a newer one supersedes it) —
 * wait for mail for the session's agent without a busy loop, at most
 * reach.rewakeWaitS and never past in->wait_until, and claim it as a
 * stop does (route "stop", the continuation counted). o->line is then
 * the framed mail as plain text; NULL otherwise (nothing claimed: no
 * mail in time, superseded, the host gone, governed, or an error, which
 * o->st and o->log tell). Never fails the caller.
 */
void pgn_hook_rewake(const struct pgn_hook_in *in, struct pgn_hook_out *o);

#endif /* PIGEON_HOOK_H */
