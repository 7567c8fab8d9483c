/*
 * The store's side of the hook's turn (claim.c): what one read tells of
 * a session before its turn, and the turn's claim. Private to the
 * library: the hook layer (hook/turn.c, rewake.c, quiet.c) and the
 * tests include it by its bare name; pigeon/hook.h is the turn's public
 * face (decision 0150).
 */
#ifndef PGN_CLAIM_H
#define PGN_CLAIM_H

#include "pigeon/hook.h"

#define PGN_SEEN_REFRESH_MS 60000 /* last-seen times: minute resolution */
/*
 * Bytes of message text one sender may put into one turn of a session
 * (a prompt or session start to the next, its after-tool and stop
 * injections included; decision 0136). A sender's first message of the
 * turn always goes; past the bound its mail waits, queued, for the next
 * turn, and the output says how many wait.
 */
#define PGN_TURN_SENDER_MAX (2 * PGN_MAX_BODY)

/* What one read tells of a session before its turn. */
struct pgn_peek {
	int bound;                    /* the session has an agent */
	char agent[PGN_MAX_NAME + 1]; /* its name */
	char scope[PGN_MAX_PATH + 1]; /* its scope root, "" = global */
	int64_t seen_ms;              /* the older of session's and agent's */
	int64_t continues;            /* stops that went on in a row */
	int queued;                   /* something waits for the agent */
	int turn_mail;     /* its turn had mail: a prompt records its own */
	int remind;        /* a message of the agent is due a reminder (0157) */
	int64_t remind_ms; /* the agent's next reminder falls due, -1: none */
	int queued_any;    /* mail of any priority waits (decision 0230) */
};

/* One read: is session 'session' bound, where, and does mail wait? */
PGN_NODISCARD pgn_status pgn_turn_peek(pgn_db *db, const char *session,
    struct pgn_peek *p);
/*
 * The same, with 'queued' counting only mail of priority 'lowest' or
 * above (pgn_turn_lowest of the event: decision 0158).
 */
PGN_NODISCARD pgn_status pgn_turn_peek_for(pgn_db *db, const char *session,
    int lowest, struct pgn_peek *p);

/*
 * The lowest priority hook event 'e' claims (decision 0158): normal
 * after a tool call, at a stop and an idle wake; low at a session start
 * and a prompt.
 */
int pgn_turn_lowest(pgn_event e);

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
	size_t held;                  /* of msgs.left: senders' share */
	struct pgn_msgs msgs;         /* the claimed messages */
	struct pgn_baton baton;       /* the baton taken (id 0: none) */
	/*
	 * Delivered messages whose acknowledgement is overdue, shown once
	 * more at a prompt or session start (decision 0157): candidates,
	 * then (after the render) those it showed, now marked reminded.
	 */
	struct pgn_msgs reminders;
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
	/*
	 * A prompt that an idle wake started (opencode's, decision 0137):
	 * it counts a continuation, as a stop with mail does, whether or
	 * not mail is left for it to claim.
	 */
	int continuation;
	/*
	 * No turn key, yet a turn begins when this claim delivers (Claude's
	 * idle wake): each sender's share of the turn starts empty, and its
	 * start is recorded (decision 0136).
	 */
	int turn_begins;
	size_t budget; /* candidates' summed cost, 0: no bound */
	pgn_cost_fn *cost;
	void *cost_arg;
	/*
	 * A new conversation's session start: take the agent's baton, if
	 * one waits (handoff.h), before the messages — only when this claim
	 * binds the session (one the database has seen takes none);
	 * baton_cost (NULL: its length) is what it takes of the budget.
	 */
	int take_baton;
	size_t (*baton_cost)(const struct pgn_baton *b);
	pgn_turn_render_fn *render; /* NULL: claim every candidate */
	void *render_arg;
	void (*committing)(void *arg); /* right before the commit */
	void *committing_arg;
	/*
	 * Set by req->render: how many of out->reminders it showed (the
	 * oldest ones); NULL: all of them.
	 */
	size_t *reminded;
	/*
	 * The turn's first look (pgn_turn_peek_for) found the session bound
	 * and no reminder due: the claim does not ask again. One falling due
	 * in between waits for the next prompt.
	 */
	int no_reminders;
};

/*
 * One hook turn, in one write transaction: bind session req->session
 * (of req->host) to an agent if it is new — req->agent, or a generated
 * adjective-noun name unique in the scope — in the current scope; a
 * bound session keeps its agent, in whatever scope. Keep req->transcript
 * as the session's when it differs. Unless req->turn is the turn this
 * session already had (within req->turn_window_ms, 0 = ever), record
 * the turn, find the baton (req->take_baton), select the queued
 * candidates within what it leaves of the budget and within each
 * sender's share of the turn (PGN_TURN_SENDER_MAX; what that holds
 * back is counted in out->held), let req->render
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

/* Reminders one turn shows at most (decision 0157). */
#define PGN_MAX_REMINDERS 20

/*
 * Inside the turn's transaction (ack.c): agent 'aid''s delivered
 * messages whose acknowledgement is overdue at 'now' and not reminded
 * yet, oldest first, as many as fit 'budget' by 'cost' (at most
 * PGN_MAX_REMINDERS), each with 'reminder' set.
 */
PGN_NODISCARD pgn_status pgn_reminders_in_tx(pgn_db *db, int64_t aid,
    int64_t now, size_t budget, pgn_cost_fn *cost, void *cost_arg,
    struct pgn_msgs *out);
/* Mark the reminders 'm' shown and journal them for 'aid'. */
PGN_NODISCARD pgn_status pgn_reminded_in_tx(pgn_db *db, int64_t aid,
    const struct pgn_msgs *m, const char *route, int64_t now);

#endif /* PGN_CLAIM_H */
