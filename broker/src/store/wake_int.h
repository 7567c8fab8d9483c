/* The doorbell's part of a send (wake.c, docs/decisions/0176, 0177). */
#ifndef PGN_WAKE_INT_H
#define PGN_WAKE_INT_H

#include "pgn_int.h"
#include "pigeon/hosts.h"
#include "reach.h"
#include "store_int.h"

struct pgn_wake {
	int64_t session; /* the session row rung */
	int64_t agent;   /* its agent, the recipient */
	int64_t msg;     /* the message whose send rings */
	int64_t prev;    /* the session's rung_ms before the claim, 0: none */
	int64_t at;      /* the rung_ms the claim set */
	pgn_host host;
	int rung; /* pgn_wakes_ring: the frame was written */
	char key[PGN_MAX_SESSION_KEY + 1];
	char name[PGN_MAX_NAME + 1];
	char *transcript;
};

/* What one send rings: at most one session per recipient. */
struct pgn_wakes {
	struct pgn_wake v[PGN_WAKE_MAX];
	size_t n;
	struct pgn_reach cfg; /* the project's, read before the transaction */
	char machine[PGN_MAX_MACHINE + 1]; /* this machine's id, or "" */
	int ready;                         /* cfg and machine read */
};

/*
 * Before the send's transaction: read what the pick needs from files
 * (the project's reach settings, the machine id); nothing for 'priority'
 * low. Without it the pick rings nothing.
 */
PGN_NODISCARD pgn_status pgn_wakes_prepare(pgn_db *db, struct pgn_wakes *w,
    int priority);

/*
 * Inside the send's transaction, after message 'msg' to agent row
 * 'agent' ('name') was queued: pick and claim the session to ring, if
 * any (nothing for low priority, below reach.wake, at the governor's
 * cap, or while a ring is outstanding).
 */
PGN_NODISCARD pgn_status pgn_wake_pick(pgn_db *db, struct pgn_wakes *w,
    int64_t agent, const char *name, int64_t msg, int priority, int64_t now);
/* After the commit: ring each, record each outcome (never fails). */
void pgn_wakes_ring(pgn_db *db, struct pgn_wakes *w);
void pgn_wakes_release(struct pgn_wakes *w);
/* One line of $PIGEON_HOME/wake.log (best effort, bounded). */
void pgn_wake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
