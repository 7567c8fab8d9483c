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
#include "pigeon/setup.h"

#define PGN_HOOK_MAX_ID    200 /* a host's session or turn id, bytes */
#define PGN_HOOK_MAX_DEPTH 64  /* JSON nesting of a payload */
#define PGN_HOOK_MAX_LOG   6   /* log lines one turn may leave */
#define PGN_HOOK_LOG_LINE  640 /* bytes of one log line, cut past it */
#define PGN_HOOK_MAX_SHOWN 300 /* bytes of a path shown to the model */
#define PGN_HOOK_IDS_TEXT  512 /* "12,13,..." of the claimed messages */

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
	 * 1: the caller's backstop allows pgn_hook_grace_ms past 'deadline':
	 * a stop may wait for mail (reach.stopWaitMs), the idle wake for its
	 * wait, until the library's reckoning of when the claim must start.
	 */
	int may_wait;
	/*
	 * Instead, a fixed time the wait ends by at the latest (tests); 0:
	 * from 'deadline' and 'may_wait'.
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
	size_t claimed; /* messages in 'line', now delivered */
	int governed;   /* a stop past the governor's cap */
	int stale;      /* in->still said no: nothing claimed */
	int unsure;     /* the claim's commit: outcome unknown (0131) */
	char ids[PGN_HOOK_IDS_TEXT]; /* their ids, "12,13" */
	char session[PGN_MAX_SESSION_KEY + 1];
	char agent[PGN_MAX_NAME + 1];
	char log[PGN_HOOK_MAX_LOG][PGN_HOOK_LOG_LINE]; /* without newline */
	size_t nlog;
};

/*
 * 'o' as a run begins, for host 'h' and event 'e': nothing to print,
 * nothing claimed, no line logged. Field by field, not cleared whole:
 * a log line's room is touched only when one is written (0259).
 */
void pgn_hook_out_reset(struct pgn_hook_out *o, pgn_host h, pgn_event e);
void pgn_hook_out_release(struct pgn_hook_out *o);

/*
 * One hook.log line in the grammar docs/hook-protocol.md documents,
 * without the time and pid the writer puts first: "host=H event=E[
 * mode=MODE] session=S status=STATUS ms=MS" ('h', 'e' NONE, 'session'
 * NULL or "": "-"), then the detail 'fmt' shown safely. Written into
 * 'line' (cut to 'cap' bytes, NUL included); returns its length.
 */
size_t pgn_hook_logf(char *line, size_t cap, pgn_host h, pgn_event e,
    const char *mode, const char *session, const char *status, long long ms,
    const char *fmt, ...) PGN_PRINTF(9, 10);

/*
 * How long past its deadline a run may go on, for the caller's
 * backstop: a stop named on the command line ('named') may wait for
 * mail (PGN_MAX_STOP_WAIT_MS); the idle wake ('rewake') waits and then
 * claims (PGN_MAX_REWAKE_WAIT_S and PGN_HOOK_REWAKE_CLAIM_MS); else 0.
 */
long pgn_hook_grace_ms(pgn_event named, int rewake);

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
