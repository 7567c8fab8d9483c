/*
 * The baton's side of the hook's claim (handoff.c, for claim.c): found
 * and taken inside the turn's one write transaction.
 */
#ifndef PGN_HANDOFF_INT_H
#define PGN_HANDOFF_INT_H

#include "pgn_int.h"
#include "pigeon/handoff.h"

/* The session start's look-up, exported so a test can EXPLAIN it. */
extern const char pgn_sql_baton_next[];

/*
 * Inside the caller's write transaction: the baton a new conversation of
 * agent row 'agent' would take at 'now' — its own first, then the
 * scope's, oldest first — into '*out' (out->id 0: none). Nothing is
 * written.
 */
PGN_NODISCARD pgn_status pgn_baton_next_in_tx(pgn_db *db, int64_t agent,
    int64_t now, struct pgn_baton *out);

/*
 * Inside the same transaction, once the output that shows it exists:
 * take baton 'b' for agent row 'agent' (named 'name') — mark it taken
 * by req->session, make the delivered message row the audit chains
 * (route req->route), journal it for the recipient and every sender.
 * Sets b->message_id, b->taken_ms. PGN_EDB if it was taken meanwhile
 * (it cannot be, under the write lock).
 */
PGN_NODISCARD pgn_status pgn_baton_take_in_tx(pgn_db *db,
    const struct pgn_claim *req, int64_t agent, const char *name,
    struct pgn_baton *b, int64_t now);

#endif
