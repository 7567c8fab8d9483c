/*
 * Handoff batons (handoff.c): a note one session leaves for the next new
 * conversation of the scope, or of one agent; taken exactly once, at a
 * new conversation's session start, inside the hook's claim (claim.c).
 * Ownership as in pigeon.h.
 */
#ifndef PIGEON_HANDOFF_H
#define PIGEON_HANDOFF_H

#include "pigeon/pigeon.h"
#include "pigeon/hosts.h"

/*
 * A baton's text, all its notes merged: like a message body, and within
 * the injection cap (PGN_MAX_CONTEXT) next to a session's introduction;
 * a pathological one (a line per byte) is cut with a note naming
 * `pigeon handoff show ID`, never left out.
 */
#define PGN_MAX_HANDOFF 4096
/* A note joins the open baton for its target left less than this ago. */
#define PGN_HANDOFF_MERGE_MS (60 * 60 * 1000)
/* A baton not taken this long after its last note expires (kept, listed). */
#define PGN_HANDOFF_TTL_MS (24 * 60 * 60 * 1000)

struct pgn_baton {
	int64_t id; /* 0: none */
	char sender[PGN_MAX_NAME + 1];
	char target[PGN_MAX_NAME +
	    1];        /* "": the next new session of any agent */
	char *senders; /* every note's sender, "alice,bob" */
	char *session; /* the sender's session, "" if none */
	char *body;
	size_t body_len;
	int64_t notes; /* notes merged into it */
	int64_t created_ms;
	int64_t updated_ms; /* the last note */
	int64_t expires_ms;
	int64_t taken_ms;                /* 0: not taken */
	char *taken_session;             /* "" until taken */
	char taken_by[PGN_MAX_NAME + 1]; /* the agent that took it */
	int64_t message_id;              /* the delivered copy (audit) */
	int64_t dropped_ms;              /* 0: not dropped */
};

struct pgn_batons {
	struct pgn_baton *v;
	size_t n;
	size_t cap;
};

void pgn_baton_release(struct pgn_baton *b);
void pgn_batons_release(struct pgn_batons *b);

/* "open", "taken", "dropped" or "expired" at time 'now' (static). */
const char *pgn_baton_state(const struct pgn_baton *b, int64_t now);

struct pgn_handoff {
	/*
	 * Who leaves it. 'session' (a "<host>:<id>" key, e.g. from
	 * $PIGEON_SESSION) names the sender's session: its agent is the
	 * sender, in that session's scope. 'agent' names the sender in the
	 * current scope, with its most recently active session; when both
	 * are given and the session is another agent's, 'agent' wins.
	 */
	const char *session;
	const char *agent;
	const char *to; /* the target agent, NULL: any agent's next session */
	const char *text;
	size_t len;
	int dry_run; /* settle and show, write nothing */
};

/*
 * Leave a baton, or add the note to the open one for the same target
 * whose last note is less than PGN_HANDOFF_MERGE_MS old ('*merged' 1).
 * '*out' gets the baton as it stands after (with dry_run: as it would;
 * out->id is 0 for a baton that would be new). The sender's journal
 * records it. Returns PGN_EINVAL (no sender, bad name, empty text, not
 * UTF-8, a NUL), PGN_ETOOBIG (over PGN_MAX_HANDOFF, alone or merged),
 * PGN_ENOTFOUND (unknown session, sender or target), PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_handoff_leave(pgn_db *db,
    const struct pgn_handoff *req, struct pgn_baton *out, int *merged);

/* The current scope's batons, newest first, at most PGN_MAX_LIST. */
PGN_NODISCARD pgn_status pgn_handoff_list(pgn_db *db, struct pgn_batons *out);

/* Baton 'id' of the current scope. PGN_ENOTFOUND. */
PGN_NODISCARD pgn_status pgn_handoff_get(pgn_db *db, int64_t id,
    struct pgn_baton *out);

/*
 * Drop open baton 'id' of the current scope: it is kept, listed as
 * dropped, never delivered. PGN_ENOTFOUND; PGN_EINVAL when it was
 * taken or dropped already.
 */
PGN_NODISCARD pgn_status pgn_handoff_drop(pgn_db *db, int64_t id);

/*
 * For a Claude Code session start: append "export PIGEON_SESSION='KEY'"
 * to the file $CLAUDE_ENV_FILE names ('path'), which Claude Code runs
 * ahead of the agent's Bash commands. The file is opened without
 * following a symbolic link and created 0600 if absent. Returns
 * PGN_EINVAL (not an absolute path, a key that cannot be quoted),
 * PGN_EIO, each with the reason in 'err'.
 */
PGN_NODISCARD pgn_status pgn_env_file_export(const char *path, const char *key,
    struct pgn_err *err);

#endif /* PIGEON_HANDOFF_H */
