/*
 * The claim: queued messages taken oldest first within a budget, marked
 * delivered, copied into the audit and journaled, in one write
 * transaction; sessions bound to agents, once and for good; the hook's
 * turn (bind, de-dup, select, render, mark — the output is built before
 * the commit) and its read-only peek.
 */
#include <stdlib.h>
#include <string.h>

#include "handoff_int.h"
#include "pgn_int.h"
#include "store_int.h"
#include "pigeon/hook.h"
#include "pigeon/hosts.h"
#include "claim.h"

/*
 * The claim's queue with pgn_claim's filter (pgn_wait's): ?3 a sender or
 * NULL, ?4 a reply_to id or 0. Served by the partial index
 * message_queued, like pgn_sql_queued.
 */
const char pgn_sql_queued_match[] =
    "SELECT m.id, m.sender, a.name, m.body, m.created_ms, "
    "coalesce(m.reply_to, 0), coalesce(m.thread, m.id), "
    "coalesce(m.ack_ms, 0), m.priority, m.grp FROM message m JOIN agent a "
    "ON a.id = m.recipient_id WHERE m.recipient_id = ?1 "
    "AND m.delivered_ms IS NULL AND (?3 IS NULL OR m.sender = ?3) "
    "AND (?4 = 0 OR m.reply_to = ?4) AND m.priority >= ?5 "
    "ORDER BY m.priority DESC, m.id LIMIT ?2";
/*
 * pgn_sql_queued without its join: the recipient's name is bound (?4),
 * the caller read it from the agent row in the same transaction. The
 * join cost about 20,000 instructions to compile on every claim, the
 * three coalesce() 8,000 (decision 0246): a NULL reply_to or ack_ms
 * reads as 0, and a NULL thread (never 0: the send stores none as
 * NULL) is set to the id by select_in_tx. The plan is the same
 * (message_queued, then a sort).
 */
const char pgn_sql_queued_of[] =
    "SELECT m.id, m.sender, ?4, m.body, m.created_ms, m.reply_to, "
    "m.thread, m.ack_ms, m.priority, m.grp FROM message m "
    "WHERE m.recipient_id = ?1 AND m.delivered_ms IS NULL "
    "AND m.priority >= ?3 ORDER BY m.priority DESC, m.id LIMIT ?2";
static const char SQL_AGENT_SEEN[] =
    "UPDATE agent SET last_seen_ms = ?2 WHERE id = ?1";
/*
 * A session is found by its key alone: it keeps its agent and scope.
 * The columns of its row the first look does not read (the agent's
 * name and scope, the continuations and turn_mail come from the first
 * look's statement, run again in the claim's transaction: 0246). NULL
 * reads as "" and 0.
 */
static const char SQL_SESSION_GET[] =
    "SELECT id, agent_id, last_turn, last_turn_ms, transcript_path "
    "FROM session WHERE key = ?1";
/*
 * Is a reminder due (decisions 0157, 0160)? The agent row's remind_ms,
 * never later than the earliest one due: one column, no subquery.
 */
#define PEEK_REMIND    "coalesce(a.remind_ms < ?2, 0) "
#define PEEK_REMIND_PG "coalesce(a.remind_ms < ?2, false) "
/*
 * For the quiet stamp (decision 0230): when the agent's next reminder
 * falls due (-1: none), and whether mail of any priority waits (a
 * prompt's statement counts all of it already: 0 here, unread).
 */
#define PEEK_MORE ", coalesce(a.remind_ms, -1), 0 "
#define PEEK_MORE_AT                                                           \
	", coalesce(a.remind_ms, -1), EXISTS (SELECT 1 FROM message m "        \
	"WHERE m.recipient_id = a.id AND m.delivered_ms IS NULL) "
/*
 * A turn's first look: the bound session's agent and scope, when it was
 * last seen, whether anything waits for it (the partial index), and
 * whether its turn had mail.
 */
const char pgn_sql_turn_peek[] =
    "SELECT a.name, c.root, min(s.last_seen_ms, coalesce(a.last_seen_ms, 0)), "
    "s.auto_continues, "
    "EXISTS (SELECT 1 FROM message m WHERE m.recipient_id = a.id "
    "AND m.delivered_ms IS NULL), s.turn_mail, " PEEK_REMIND PEEK_MORE
    "FROM session s JOIN agent a ON a.id = s.agent_id "
    "JOIN scope c ON c.id = a.scope_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";
/* The same in PostgreSQL's words: least() for the two-argument min(). */
static const char SQL_TURN_PEEK_PG[] =
    "SELECT a.name, c.root, least(s.last_seen_ms, coalesce(a.last_seen_ms, 0)), "
    "s.auto_continues, "
    "EXISTS (SELECT 1 FROM message m WHERE m.recipient_id = a.id "
    "AND m.delivered_ms IS NULL), s.turn_mail, " PEEK_REMIND_PG PEEK_MORE
    "FROM session s JOIN agent a ON a.id = s.agent_id "
    "JOIN scope c ON c.id = a.scope_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";
/*
 * Mid-turn (after a tool call, at a stop, an idle wake) only mail of
 * priority ?2 or above counts (decision 0158), and no reminder is shown
 * there (0157). A prompt's peek keeps the statements above: its no-mail
 * run costs what it did.
 */
static const char SQL_TURN_PEEK_AT[] =
    "SELECT a.name, c.root, min(s.last_seen_ms, coalesce(a.last_seen_ms, 0)), "
    "s.auto_continues, "
    "EXISTS (SELECT 1 FROM message m WHERE m.recipient_id = a.id "
    "AND m.delivered_ms IS NULL AND m.priority >= ?2), s.turn_mail, 0 " PEEK_MORE_AT
    "FROM session s JOIN agent a ON a.id = s.agent_id "
    "JOIN scope c ON c.id = a.scope_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";
static const char SQL_TURN_PEEK_AT_PG[] =
    "SELECT a.name, c.root, least(s.last_seen_ms, coalesce(a.last_seen_ms, 0)), "
    "s.auto_continues, "
    "EXISTS (SELECT 1 FROM message m WHERE m.recipient_id = a.id "
    "AND m.delivered_ms IS NULL AND m.priority >= ?2), s.turn_mail, 0 " PEEK_MORE_AT
    "FROM session s JOIN agent a ON a.id = s.agent_id "
    "JOIN scope c ON c.id = a.scope_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";
/*
 * What is due a reminder for agent ?1 at ?2: asked, delivered, not
 * acknowledged in time, not reminded yet; served by message_unacked.
 */
static const char SQL_DUE[] =
    "SELECT m.id, m.sender, a.name, m.body, m.created_ms, "
    "coalesce(m.reply_to, 0), coalesce(m.thread, m.id), m.ack_ms, "
    "m.priority, m.grp FROM message m JOIN agent a ON a.id = m.recipient_id "
    "WHERE m.recipient_id = ?1 AND m.ack_ms IS NOT NULL "
    "AND m.acked_ms IS NULL AND m.reminded_ms IS NULL "
    "AND m.delivered_ms + m.ack_ms < ?2 ORDER BY m.priority DESC, m.id "
    "LIMIT ?3";
static const char SQL_REMINDED[] =
    "UPDATE message SET reminded_ms = ?2 WHERE id = ?1";
/* A delivery asking an acknowledgement: its reminder may be the first due. */
static const char SQL_REMIND_AT[] =
    "UPDATE agent SET remind_ms = min(coalesce(remind_ms, ?2), ?2) "
    "WHERE id = ?1";
static const char SQL_REMIND_AT_PG[] =
    "UPDATE agent SET remind_ms = least(remind_ms, ?2) WHERE id = ?1";
/* Once its reminders were looked at: the next one due, exactly. */
static const char SQL_REMIND_NEXT[] =
    "UPDATE agent SET remind_ms = (SELECT min(m.delivered_ms + m.ack_ms) "
    "FROM message m WHERE m.recipient_id = ?1 AND m.ack_ms IS NOT NULL "
    "AND m.acked_ms IS NULL AND m.reminded_ms IS NULL "
    "AND m.delivered_ms IS NOT NULL) WHERE id = ?1";
static const char SQL_SESSION_SEEN[] =
    "UPDATE session SET last_seen_ms = ?2 WHERE id = ?1";
/* After a tool call or at a stop: seen, and whether the turn had mail. */
static const char SQL_SESSION_SEEN_MAIL[] =
    "UPDATE session SET last_seen_ms = ?2, turn_mail = ?3 WHERE id = ?1";
/* A path and the machine that named it: one fact (decision 0129). */
static const char SQL_SESSION_TRANSCRIPT[] =
    "UPDATE session SET transcript_path = ?2, machine = ?3 WHERE id = ?1";
static const char SQL_SESSION_CONTINUES[] =
    "UPDATE session SET auto_continues = ?2 WHERE id = ?1";
/* A turn begins (a prompt, a session start): ?4, did it bring mail. */
static const char SQL_SESSION_TURN[] =
    "UPDATE session SET last_turn = ?2, last_turn_ms = ?3, "
    "last_seen_ms = ?3, turn_mail = ?4 WHERE id = ?1";
/*
 * What each sender has put into session ?1's turn since ?2, its start:
 * the bytes of the mail delivered (batons aside), through
 * delivery_session (decision 0136).
 */
static const char SQL_TURN_SPENT[] =
    "SELECT sender, CAST(sum(bytes) AS BIGINT) FROM delivery "
    "WHERE session = ?1 AND delivered_ms >= ?2 AND route <> 'handoff' "
    "GROUP BY sender LIMIT ?3";
/*
 * Bound on machine ?5 (NULL: no machine id). A key rebound (its agent
 * was removed) drops the transcript another binding named.
 */
static const char SQL_SESSION_PUT[] =
    "INSERT INTO session(key, host, agent_id, created_ms, last_seen_ms, "
    "machine) VALUES (?1, ?2, ?3, ?4, ?4, ?5) ON CONFLICT(key) DO UPDATE "
    "SET agent_id = excluded.agent_id, host = excluded.host, "
    "last_seen_ms = excluded.last_seen_ms, machine = excluded.machine, "
    "transcript_path = NULL RETURNING id";
static const char SQL_MSG_MARK[] =
    "UPDATE message SET delivered_ms = ?2 WHERE id = ?1 "
    "AND delivered_ms IS NULL";

/*
 * What a turn's budget keeps when a baton costs all of it: never 0,
 * which means no budget. The oldest message still goes (it always
 * does), nothing after it.
 */
#define PGN_CLAIM_BUDGET_FLOOR 1

/*
 * How a message was delivered: the audit's route (its schema's CHECK
 * lists the same words). The API names a route by its word; the claim
 * reads it once into this.
 */
enum route {
	ROUTE_NONE, /* not a route: refused */
	ROUTE_SESSION_START,
	ROUTE_PROMPT,
	ROUTE_AFTER_TOOL,
	ROUTE_STOP,
	ROUTE_CLI,     /* pigeon read and wait */
	ROUTE_HANDOFF, /* a baton taken in a turn; no caller names it */
	ROUTE_MCP,     /* the read and wait tools of pigeon mcp */
	ROUTE_N
};

static const char *const route_names[ROUTE_N] = {
    [ROUTE_SESSION_START] = "session-start",
    [ROUTE_PROMPT] = "prompt",
    [ROUTE_AFTER_TOOL] = "after-tool",
    [ROUTE_STOP] = "stop",
    [ROUTE_CLI] = "cli",
    [ROUTE_HANDOFF] = "handoff",
    [ROUTE_MCP] = "mcp",
};

/* The route of each hook event. */
static const enum route event_routes[PGN_NEVENTS] = {
    [PGN_EVENT_SESSION_START] = ROUTE_SESSION_START,
    [PGN_EVENT_PROMPT] = ROUTE_PROMPT,
    [PGN_EVENT_AFTER_TOOL] = ROUTE_AFTER_TOOL,
    [PGN_EVENT_STOP] = ROUTE_STOP,
    [PGN_EVENT_IDLE] = ROUTE_STOP, /* a continuation, governed like one */
};

const char *
pgn_turn_route(pgn_event e)
{
	return e >= 0 && e < PGN_NEVENTS ? route_names[event_routes[e]] : NULL;
}

/* The route a caller named, or ROUTE_NONE. */
static enum route
route_of(const char *name)
{
	int r;

	for (r = ROUTE_NONE + 1; name != NULL && r < ROUTE_N; r++)
		if (strcmp(name, route_names[r]) == 0)
			return (enum route)r;
	return ROUTE_NONE;
}

/* A hook event's route. */
static int
route_is_event(enum route r)
{
	return r >= ROUTE_SESSION_START && r <= ROUTE_STOP;
}

/*
 * The lowest priority a claim of route 'r' takes (decision 0158): after
 * a tool call or at a stop (an idle wake's claim is a stop's) low mail
 * waits; a session start, a prompt or a read takes every priority.
 */
static int
route_lowest(enum route r)
{
	return r == ROUTE_AFTER_TOOL || r == ROUTE_STOP ? PGN_PRIORITY_NORMAL :
	                                                  PGN_PRIORITY_LOW;
}

int
pgn_route_lowest(const char *route)
{
	return route_lowest(route_of(route));
}

int
pgn_turn_lowest(pgn_event e)
{
	return e >= 0 && e < PGN_NEVENTS ? route_lowest(event_routes[e]) :
	                                   PGN_PRIORITY_LOW;
}

/* Keep the first 'n' messages of 'm', freeing the rest. */
void
pgn_msgs_truncate(struct pgn_msgs *m, size_t n)
{
	while (m->n > n) {
		m->n--;
		free(m->v[m->n].sender);
		free(m->v[m->n].recipient);
		free(m->v[m->n].body);
		free(m->v[m->n].group);
	}
}

/*
 * One sender's share of a session's turn (decision 0136): the bytes of
 * its mail delivered in the turn so far.
 */
struct share {
	char sender[PGN_MAX_NAME + 1];
	int64_t bytes;
	int full; /* a message of it was held: its later ones wait too */
};

/* The shares of one turn, for one claim of a hook event. */
struct shares {
	const char *session; /* the session's key */
	int64_t since;       /* the turn's start */
	int load;            /* mid-turn: read what the turn had so far */
	struct share *v;
	size_t n;
	size_t cap;
	size_t held; /* candidates the bound left queued */
};

static void
shares_release(struct shares *sh)
{
	free(sh->v);
	sh->v = NULL;
	sh->n = sh->cap = 0;
}

static struct share *
share_of(struct shares *sh, const char *sender)
{
	size_t i;

	for (i = 0; i < sh->n; i++)
		if (strcmp(sh->v[i].sender, sender) == 0)
			return &sh->v[i];
	return NULL;
}

/* Count 'bytes' for a sender not in 'sh' yet (a name past the bound: not). */
static pgn_status
share_add(pgn_db *db, struct shares *sh, const char *sender, int64_t bytes)
{
	size_t n = strlen(sender);

	if (n > PGN_MAX_NAME)
		return PGN_OK;
	if (!pgn_vec_grow((void **)&sh->v, &sh->cap, sh->n, sizeof(*sh->v)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	memcpy(sh->v[sh->n].sender, sender, n + 1);
	sh->v[sh->n].bytes = bytes;
	sh->v[sh->n].full = 0;
	sh->n++;
	return PGN_OK;
}

/* What each sender put into the turn before this claim: one query. */
static pgn_status
shares_load(pgn_db *db, struct shares *sh)
{
	pgn_stmt *st = NULL;
	const char *name;
	pgn_status rc;

	sh->load = 0;
	rc = pgn_prepare(db, SQL_TURN_SPENT, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_T(sh->session), PGN_I(sh->since),
		    PGN_I(PGN_MAX_LIST));
	while (pgn_next_row(db, st, &rc, "reading the turn's senders")) {
		name = pgn_col_str(st, 0, NULL);
		if (name != NULL)
			rc = share_add(db, sh, name, pgn_col_i64(st, 1));
	}
	pgn_finish(db, st);
	return rc;
}

/*
 * Does 'm' fit its sender's share of the turn? A sender's first mail of
 * the turn always does (no sender is silenced for a turn by one long
 * message); after it, what the sender put in plus 'm' stays within
 * PGN_TURN_SENDER_MAX. Once one of a sender's messages is held, its
 * later ones are too: a sender's mail is shown in the order it was
 * sent. Counts 'm' in when it fits.
 */
static pgn_status
share_fits(pgn_db *db, struct shares *sh, const struct pgn_msg *m, int *fits)
{
	struct share *x = share_of(sh, m->sender);
	int64_t len = (int64_t)m->body_len;

	*fits = x == NULL ||
	    (!x->full &&
	        (x->bytes <= 0 ||
	            (x->bytes <= PGN_TURN_SENDER_MAX &&
	                len <= PGN_TURN_SENDER_MAX - x->bytes)));
	if (!*fits) {
		x->full = 1;
		return PGN_OK;
	}
	if (x != NULL) {
		x->bytes += len;
		return PGN_OK;
	}
	return share_add(db, sh, m->sender, len);
}

/*
 * Inside the caller's write transaction: the queued messages of agent
 * 'aid' named 'name', oldest first, while their summed cost fits the
 * budget (the oldest always, so no message jams the queue) — with 'sh'
 * (a hook event's claim; NULL: none), only what fits each sender's
 * share of the turn, the rest skipped and counted in sh->held.
 * out->left gets how many stay queued besides them. 'queued': whether
 * mail of any priority waits, read in this transaction (0 no, 1 yes),
 * or -1 (not read: counted here). Nothing is written.
 */
static pgn_status
select_in_tx(pgn_db *db, const struct pgn_claim *req, int64_t aid,
    const char *name, int queued_hint, struct shares *sh, struct pgn_msgs *out)
{
	pgn_stmt *st = NULL;
	size_t spent = 0, cost, seen = 0, limit;
	int64_t queued = -1;
	struct pgn_msg *m;
	char from[PGN_MAX_NAME + 1];
	pgn_status rc = PGN_OK;
	int filtered, fits, lowest, stopped = 0;

	pgn_msgs_release(out);
	if (queued_hint == 0)
		return PGN_OK;
	if (queued_hint < 0) {
		rc = pgn_queued_count(db, aid, &queued);
		if (rc != PGN_OK || queued == 0)
			return rc;
	}
	/* Mid-turn, and only with mail queued: what the turn had so far. */
	if (sh != NULL && sh->load)
		rc = shares_load(db, sh);
	if (rc != PGN_OK)
		return rc;
	/* A filter (pgn_wait): only matching mail, the rest stays queued. */
	filtered = req->from != NULL || req->reply_to != 0;
	lowest = route_lowest(route_of(req->route));
	limit =
	    req->max != 0 && req->max < PGN_MAX_LIST ? req->max : PGN_MAX_LIST;
	if (req->from != NULL)
		rc = pgn_check_name(db, "sender", req->from, from);
	if (rc == PGN_OK)
		rc = pgn_prepare(db,
		    filtered ? pgn_sql_queued_match : pgn_sql_queued_of, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(aid), PGN_I((int64_t)limit),
		    filtered ? PGN_T(req->from != NULL ? from : NULL) :
		               PGN_I(lowest),
		    filtered ? PGN_I(req->reply_to) : PGN_T(name),
		    filtered ? PGN_I(lowest) : PGN_NONE);
	while (pgn_next_row(db, st, &rc, "reading the queue")) {
		seen++;
		rc = pgn_msgs_push(db, out, st);
		if (rc != PGN_OK)
			break;
		m = &out->v[out->n - 1];
		/* pgn_sql_queued_of's coalesce(thread, id), in C */
		if (m->thread == 0)
			m->thread = m->id;
		if (sh != NULL) {
			rc = share_fits(db, sh, m, &fits);
			if (rc != PGN_OK)
				break;
			if (!fits) {
				sh->held++;
				pgn_msgs_truncate(out, out->n - 1);
				continue;
			}
		}
		cost = req->cost ? req->cost(m, req->cost_arg) : m->body_len;
		if (req->budget != 0 && out->n > 1 &&
		    (cost > req->budget || spent > req->budget - cost)) {
			pgn_msgs_truncate(out, out->n - 1);
			stopped = 1;
			break;
		}
		spent += cost;
	}
	pgn_finish(db, st);
	/*
	 * Not counted yet: a select of every priority read to its end below
	 * its limit saw every queued message (a message's priority is never
	 * below PGN_PRIORITY_LOW: the send checks it); else count them.
	 */
	if (rc == PGN_OK && queued < 0) {
		if (!filtered && !stopped && lowest <= PGN_PRIORITY_LOW &&
		    seen < limit)
			queued = (int64_t)seen;
		else
			rc = pgn_queued_count(db, aid, &queued);
	}
	if (rc == PGN_OK)
		out->left = (size_t)queued - out->n;
	return rc;
}

/*
 * Inside the caller's write transaction: mark every message of 'msgs'
 * delivered, copy it into the audit and journal it for agent 'aid'.
 */
static pgn_status
mark_in_tx(pgn_db *db, const struct pgn_claim *req, int64_t aid,
    const struct pgn_msgs *msgs)
{
	pgn_stmt *mark = NULL;
	const struct pgn_msg *m;
	int64_t now = pgn_now_ms();
	pgn_status rc;
	size_t i;

	rc = pgn_prepare(db, SQL_MSG_MARK, &mark);
	for (i = 0; rc == PGN_OK && i < msgs->n; i++) {
		m = &msgs->v[i];
		pgn_reset(mark);
		rc = pgn_bind(db, mark, PGN_I(m->id), PGN_I(now));
		if (rc == PGN_OK)
			rc = pgn_step_done(db, mark, "claiming a message");
		/* Under the write lock a queued row cannot vanish. */
		if (rc == PGN_OK && pgn_changes(db, mark) != 1)
			rc = pgn_fail(db, PGN_EDB,
			    "message %lld was claimed twice", (long long)m->id);
		if (rc == PGN_OK)
			rc = pgn_audit_append(db, req, m, now);
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, aid, "delivered", m->id,
			    m->sender, req->route, now);
		if (rc == PGN_OK && m->ack_ms > 0)
			rc = pgn_exec(db,
			    pgn_sql(db, SQL_REMIND_AT, SQL_REMIND_AT_PG),
			    "recording when a reminder is due", PGN_I(aid),
			    PGN_I(now + m->ack_ms));
	}
	pgn_finish(db, mark);
	return rc;
}

struct claim_ctx {
	const struct pgn_claim *req;
	char agent[PGN_MAX_NAME + 1];
	struct pgn_msgs *out;
};

static pgn_status
claim_tx(pgn_db *db, void *arg)
{
	struct claim_ctx *c = arg;
	int64_t aid;
	pgn_status rc;

	rc = pgn_need_agent(db, c->agent, 0, &aid);
	if (rc == PGN_OK)
		rc = select_in_tx(db, c->req, aid, c->agent, -1, NULL, c->out);
	if (rc == PGN_OK)
		rc = mark_in_tx(db, c->req, aid, c->out);
	if (rc == PGN_OK)
		rc = pgn_exec_id(db, SQL_AGENT_SEEN, aid, pgn_now_ms(),
		    "marking seen");
	return rc;
}

pgn_status
pgn_claim(pgn_db *db, const struct pgn_claim *req, struct pgn_msgs *out)
{
	struct claim_ctx c;
	enum route r;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.req = req;
	c.out = out;
	r = route_of(req->route);
	if (!route_is_event(r) && r != ROUTE_CLI && r != ROUTE_MCP)
		return pgn_fail(db, PGN_EINVAL,
		    "a claim's route is a hook event's (session-start, prompt, after-tool, stop), cli or mcp");
	rc = pgn_check_name(db, "agent", req->agent, c.agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_tx(db, claim_tx, &c);
	if (rc != PGN_OK)
		pgn_msgs_release(out);
	return rc;
}

struct bind_ctx {
	char a[PGN_MAX_NAME + 1];
	char *bound; /* out */
	const char *host;
	const char *key;
};

/* What binding a session found or made. */
struct bound {
	int64_t session; /* session row */
	int64_t agent;   /* agent row */
	char name[PGN_MAX_NAME + 1];
	char last_turn[PGN_MAX_SESSION_KEY + 1];
	int64_t last_turn_ms;
	char scope[PGN_MAX_PATH + 1];      /* the agent's scope root */
	int64_t continues;                 /* stops that went on, in a row */
	char transcript[PGN_MAX_PATH + 1]; /* its transcript, "" if none */
	int turn_mail;                     /* its turn so far had mail */
	int fresh;                         /* bound by this call */
	int queued; /* mail of any priority waits: 1, 0, or -1 not read */
};

/*
 * This machine's id in 'buf' (read once, when first needed), or NULL
 * when it has none.
 */
static const char *
machine(char buf[PGN_MAX_MACHINE + 1])
{
	if (buf[0] == '\0' && !pgn_machine_id(buf))
		return NULL;
	return buf;
}

static pgn_status peek_row(pgn_db *db, const char *session, int lowest,
    struct pgn_peek *p);

/*
 * Find session 'key' — in any scope: a session is bound once, whatever
 * directory its later payloads name — or bind it to 'agent' (a checked
 * name, or NULL for a generated one) in the connection's scope,
 * creating the scope and the agent if needed, on this machine ('here',
 * machine()). A bound session is read with the first look's statement
 * for 'lowest' (the hook compiled it for its peek: decision 0246) and
 * the session row's own columns.
 */
static pgn_status
bind_in_tx(pgn_db *db, const char *host, const char *key, const char *agent,
    int lowest, int64_t now, char here[PGN_MAX_MACHINE + 1], struct bound *out)
{
	struct pgn_peek p;
	pgn_stmt *st = NULL;
	int64_t sid;
	pgn_status rc;

	/* Field by field: the struct holds two paths (decision 0246). */
	out->session = out->agent = out->last_turn_ms = out->continues = 0;
	out->name[0] = out->last_turn[0] = out->scope[0] = '\0';
	out->transcript[0] = '\0';
	out->turn_mail = out->fresh = 0;
	out->queued = -1;
	rc = peek_row(db, key, lowest, &p);
	if (rc == PGN_OK && p.bound) {
		rc = pgn_prepare(db, SQL_SESSION_GET, &st);
		if (rc == PGN_OK)
			rc = pgn_bind(db, st, PGN_T(key));
		if (rc == PGN_OK)
			rc = pgn_step_row(db, st, "reading a session");
		/* The first look found it in this transaction. */
		if (rc == PGN_ENOTFOUND)
			rc = pgn_fail(db, PGN_EDB,
			    "session '%.80s' vanished in a transaction", key);
		if (rc == PGN_OK) {
			out->session = pgn_col_i64(st, 0);
			out->agent = pgn_col_i64(st, 1);
			pgn_col_copy(out->last_turn, sizeof(out->last_turn), st,
			    2);
			out->last_turn_ms = pgn_col_i64(st, 3);
			pgn_col_copy(out->transcript, sizeof(out->transcript),
			    st, 4);
			memcpy(out->name, p.agent, strlen(p.agent) + 1);
			memcpy(out->scope, p.scope, strlen(p.scope) + 1);
			out->continues = p.continues;
			out->turn_mail = p.turn_mail;
			out->queued = p.queued_any;
		}
		pgn_finish(db, st);
		return rc;
	}
	if (rc != PGN_OK)
		return rc;
	rc = pgn_scope_id(db, 1, &sid);
	if (rc != PGN_OK)
		return rc;
	memcpy(out->scope, db->scope, strlen(db->scope) + 1);
	if (agent != NULL)
		memcpy(out->name, agent, strlen(agent) + 1);
	else
		rc = pgn_fresh_name(db, sid, out->name);
	if (rc == PGN_OK)
		rc = pgn_agent_id(db, sid, out->name, 0, &out->agent);
	if (rc == PGN_ENOTFOUND)
		rc =
		    pgn_agent_insert(db, sid, out->name, key, now, &out->agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_select_i64(db, SQL_SESSION_PUT, &out->session,
	    "binding a session", PGN_T(key), PGN_T(host), PGN_I(out->agent),
	    PGN_I(now), PGN_T(machine(here)));
	if (rc == PGN_ENOTFOUND)
		rc = pgn_fail(db, PGN_EDB, "binding a session returned no row");
	if (rc == PGN_OK)
		rc =
		    pgn_journal_add(db, out->agent, "bound", 0, NULL, key, now);
	out->fresh = 1;
	return rc;
}

static pgn_status
check_session(pgn_db *db, const char *host, const char *key)
{
	if (host == NULL || *host == '\0' || key == NULL || *key == '\0')
		return pgn_fail(db, PGN_EINVAL,
		    "a session needs a host and a key");
	if (strlen(key) > PGN_MAX_SESSION_KEY)
		return pgn_fail(db, PGN_ETOOBIG, "session key over %d bytes",
		    PGN_MAX_SESSION_KEY);
	return PGN_OK;
}

static pgn_status
bind_tx(pgn_db *db, void *arg)
{
	struct bind_ctx *c = arg;
	char here[PGN_MAX_MACHINE + 1] = "";
	struct bound b;
	int64_t now;
	pgn_status rc;

	now = pgn_now_ms();
	rc = bind_in_tx(db, c->host, c->key, c->a, PGN_PRIORITY_LOW, now, here,
	    &b);
	if (rc == PGN_OK && !b.fresh)
		rc = pgn_exec_id(db, SQL_SESSION_SEEN, b.session, now,
		    "marking a session seen");
	if (rc == PGN_OK)
		rc = pgn_exec_id(db, SQL_AGENT_SEEN, b.agent, now,
		    "marking seen");
	if (rc == PGN_OK)
		memcpy(c->bound, b.name, strlen(b.name) + 1);
	return rc;
}

pgn_status
pgn_session_bind(pgn_db *db, const char *host, const char *key,
    const char *agent, char *bound)
{
	struct bind_ctx c;
	pgn_status rc;

	bound[0] = '\0';
	rc = check_session(db, host, key);
	if (rc == PGN_OK)
		rc = pgn_check_name(db, "agent", agent, c.a);
	if (rc != PGN_OK)
		return rc;
	c.host = host;
	c.key = key;
	c.bound = bound;
	return pgn_tx(db, bind_tx, &c);
}

struct turn_ctx {
	const struct pgn_turn *req;
	enum route route; /* req->route's */
	char agent[PGN_MAX_NAME + 1];
	struct pgn_turn_out *out;
};

static pgn_status
record_turn(pgn_db *db, int64_t session, const char *turn, int64_t now,
    int mail)
{
	return pgn_exec(db, SQL_SESSION_TURN, "recording the turn",
	    PGN_I(session), PGN_T(turn != NULL ? turn : ""), PGN_I(now),
	    PGN_I(mail));
}

/*
 * A prompt's or session start's reminders (decision 0157): what the
 * messages it delivers leave of the budget (none: no bound).
 */
static pgn_status
reminders(pgn_db *db, const struct pgn_claim *claim, int64_t aid, int64_t now,
    struct pgn_turn_out *out)
{
	size_t left = claim->budget != 0 ? claim->budget : (size_t)-1, k, i;

	for (i = 0; i < out->msgs.n; i++) {
		k = claim->cost != NULL ?
		    claim->cost(&out->msgs.v[i], claim->cost_arg) :
		    out->msgs.v[i].body_len;
		left = k < left ? left - k : 0;
	}
	return pgn_reminders_in_tx(db, aid, now, left, claim->cost,
	    claim->cost_arg, &out->reminders);
}

static pgn_status
turn_tx(pgn_db *db, void *arg)
{
	struct turn_ctx *c = arg;
	const struct pgn_turn *req = c->req;
	struct pgn_turn_out *out = c->out;
	struct pgn_claim claim;
	char here[PGN_MAX_MACHINE + 1] = "";
	struct shares sh;
	struct bound b;
	int64_t now;
	size_t keep, cost;
	pgn_status rc;
	int begins;

	pgn_msgs_release(&out->msgs);
	pgn_msgs_release(&out->reminders);
	pgn_baton_release(&out->baton);
	out->duplicate = 0;
	out->held = 0;
	now = pgn_now_ms();
	rc = bind_in_tx(db, req->host, req->session,
	    req->agent != NULL ? c->agent : NULL, route_lowest(c->route), now,
	    here, &b);
	if (rc != PGN_OK)
		return rc;
	memcpy(out->agent, b.name, strlen(b.name) + 1);
	memcpy(out->scope, b.scope, strlen(b.scope) + 1);
	out->bound = b.fresh;
	out->continues = b.continues;
	/*
	 * Kept from the payloads; written only when it changes, with the
	 * machine that named it: read only there (decision 0129).
	 */
	if (req->transcript != NULL &&
	    strcmp(b.transcript, req->transcript) != 0)
		rc = pgn_exec(db, SQL_SESSION_TRANSCRIPT,
		    "recording the transcript", PGN_I(b.session),
		    PGN_T(req->transcript), PGN_T(machine(here)));
	if (rc != PGN_OK)
		return rc;
	if (req->turn != NULL && strcmp(b.last_turn, req->turn) == 0 &&
	    (req->turn_window_ms == 0 ||
	        now - b.last_turn_ms < req->turn_window_ms)) {
		out->duplicate = 1;
		return PGN_OK;
	}
	begins = req->turn != NULL || req->turn_begins;
	/* A prompt from a person ends a run of continuations. */
	if (rc == PGN_OK && c->route == ROUTE_PROMPT && b.continues != 0 &&
	    !req->keep_continues)
		rc = pgn_exec_id(db, SQL_SESSION_CONTINUES, b.session, 0,
		    "resetting continuations");
	memset(&claim, 0, sizeof(claim));
	claim.agent = b.name;
	claim.session = req->session;
	claim.host = req->host;
	claim.route = route_names[c->route];
	claim.budget = req->budget;
	claim.cost = req->cost;
	claim.cost_arg = req->cost_arg;
	/*
	 * A new conversation's baton first, then what fits of the mail. New
	 * means new to the database too: only the claim that binds the
	 * session takes one. A session start of a session seen before (a
	 * host re-sending its startup past the duplicate window; Cursor's
	 * sessionStart, which names no source) takes none.
	 */
	if (rc == PGN_OK && req->take_baton && b.fresh)
		rc = pgn_baton_next_in_tx(db, b.agent, now, &out->baton);
	if (rc == PGN_OK && out->baton.id != 0 && claim.budget != 0) {
		cost = req->baton_cost != NULL ? req->baton_cost(&out->baton) :
		                                 out->baton.body_len;
		claim.budget = claim.budget > cost ? claim.budget - cost :
		                                     PGN_CLAIM_BUDGET_FLOOR;
	}
	/* The governor: past the cap, a stop claims nothing; mail waits. */
	if (c->route == ROUTE_STOP && b.continues >= req->max_continues)
		out->governed = 1;
	else if (rc == PGN_OK) {
		/*
		 * Each sender's share of the turn: a turn begins now at a
		 * prompt, a session start or an idle wake; after a tool call
		 * or at a stop it began at the session's last recorded turn.
		 */
		memset(&sh, 0, sizeof(sh));
		sh.session = req->session;
		sh.since = begins ? now : b.last_turn_ms;
		sh.load = !begins;
		rc = select_in_tx(db, &claim, b.agent, b.name, b.queued, &sh,
		    &out->msgs);
		out->held = sh.held;
		shares_release(&sh);
	}
	if (rc == PGN_OK && !req->no_reminders &&
	    (c->route == ROUTE_PROMPT || c->route == ROUTE_SESSION_START))
		rc = reminders(db, &claim, b.agent, now, out);
	/* The output exists, and fits, before anything is marked. */
	keep = out->msgs.n;
	if (rc == PGN_OK && req->render != NULL)
		rc = req->render(out, &keep, req->render_arg);
	if (rc == PGN_OK && keep < out->msgs.n) {
		out->msgs.left += out->msgs.n - keep;
		pgn_msgs_truncate(&out->msgs, keep);
	}
	if (rc == PGN_OK)
		rc = mark_in_tx(db, &claim, b.agent, &out->msgs);
	if (rc == PGN_OK && req->reminded != NULL &&
	    *req->reminded < out->reminders.n)
		pgn_msgs_truncate(&out->reminders, *req->reminded);
	if (rc == PGN_OK)
		rc = pgn_reminded_in_tx(db, b.agent, &out->reminders,
		    claim.route, now);
	/* Its reminders were looked at: when the next is due, exactly. */
	if (rc == PGN_OK && !req->no_reminders &&
	    (c->route == ROUTE_PROMPT || c->route == ROUTE_SESSION_START))
		rc = pgn_exec(db, SQL_REMIND_NEXT,
		    "recording when a reminder is due", PGN_I(b.agent));
	if (rc == PGN_OK && out->baton.id != 0) {
		claim.route = route_names[ROUTE_HANDOFF];
		rc = pgn_baton_take_in_tx(db, &claim, b.agent, b.name,
		    &out->baton, now);
		claim.route = route_names[c->route];
	}
	/*
	 * The session's row, once what the turn delivers is known. A prompt
	 * or session start records its turn; tool and stop events have no
	 * turn of their own (each message once) and are seen in the
	 * session's. turn_mail: the turn had mail, so the next prompt
	 * records its turn even when it has nothing to claim (the shares
	 * count from the recorded start).
	 */
	if (rc == PGN_OK &&
	    (req->turn != NULL || (req->turn_begins && out->msgs.n > 0)))
		rc =
		    record_turn(db, b.session, req->turn, now, out->msgs.n > 0);
	else if (rc == PGN_OK && (!b.fresh || out->msgs.n > 0))
		rc = pgn_exec(db, SQL_SESSION_SEEN_MAIL,
		    "marking a session seen", PGN_I(b.session), PGN_I(now),
		    PGN_I(b.turn_mail || out->msgs.n > 0));
	/*
	 * A stop went on with mail, or a prompt opencode's idle wake
	 * started: with mail or without (another prompt took it), a turn
	 * the wake made, bounded by the cap.
	 */
	if (rc == PGN_OK &&
	    ((c->route == ROUTE_STOP && out->msgs.n > 0) ||
	        req->continuation)) {
		out->continues = b.continues + 1;
		rc = pgn_exec_id(db, SQL_SESSION_CONTINUES, b.session,
		    out->continues, "counting a continuation");
	}
	if (rc == PGN_OK)
		rc = pgn_exec_id(db, SQL_AGENT_SEEN, b.agent, now,
		    "marking seen");
	if (rc == PGN_OK && req->committing != NULL)
		req->committing(req->committing_arg);
	return rc;
}

pgn_status
pgn_turn_claim(pgn_db *db, const struct pgn_turn *req, struct pgn_turn_out *out)
{
	struct turn_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.req = req;
	c.out = out;
	rc = check_session(db, req->host, req->session);
	if (rc == PGN_OK && req->agent != NULL)
		rc = pgn_check_name(db, "agent", req->agent, c.agent);
	if (rc == PGN_OK && req->turn != NULL &&
	    strlen(req->turn) > PGN_MAX_SESSION_KEY)
		rc = pgn_fail(db, PGN_ETOOBIG, "turn key over %d bytes",
		    PGN_MAX_SESSION_KEY);
	if (rc == PGN_OK && req->transcript != NULL &&
	    strlen(req->transcript) >= PGN_MAX_PATH)
		rc = pgn_fail(db, PGN_ETOOBIG, "transcript path over %d bytes",
		    PGN_MAX_PATH - 1);
	c.route = route_of(req->route);
	if (rc == PGN_OK && !route_is_event(c.route))
		rc = pgn_fail(db, PGN_EINVAL,
		    "a turn's route is session-start, prompt, after-tool or stop");
	if (rc != PGN_OK)
		return rc;
	rc = pgn_tx(db, turn_tx, &c);
	if (rc != PGN_OK) {
		pgn_msgs_release(&out->msgs);
		pgn_msgs_release(&out->reminders);
		pgn_baton_release(&out->baton);
	}
	return rc;
}

struct peek_ctx {
	const char *session;
	int lowest;
	struct pgn_peek *p;
};

/* The first look's statement for 'lowest' (pgn_turn_peek_for). */
static const char *
peek_sql(pgn_db *db, int lowest)
{
	return lowest <= PGN_PRIORITY_LOW ?
	    pgn_sql(db, pgn_sql_turn_peek, SQL_TURN_PEEK_PG) :
	    pgn_sql(db, SQL_TURN_PEEK_AT, SQL_TURN_PEEK_AT_PG);
}

/*
 * The first look at 'session' in the caller's transaction: a read, or
 * a claim's bind_in_tx, which finds the statement compiled. Every field
 * of 'p' is set (not the whole struct: decision 0246).
 */
static pgn_status
peek_row(pgn_db *db, const char *session, int lowest, struct pgn_peek *p)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	p->bound = p->queued = p->turn_mail = p->remind = p->queued_any = 0;
	p->agent[0] = p->scope[0] = '\0';
	p->seen_ms = p->continues = p->remind_ms = 0;
	rc = pgn_prepare(db, peek_sql(db, lowest), &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_T(session),
		    lowest <= PGN_PRIORITY_LOW ? PGN_I(pgn_now_ms()) :
		                                 PGN_I(lowest));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading a session");
	if (rc == PGN_OK) {
		pgn_col_copy(p->agent, sizeof(p->agent), st, 0);
		pgn_col_copy(p->scope, sizeof(p->scope), st, 1);
		p->seen_ms = pgn_col_i64(st, 2);
		p->continues = pgn_col_i64(st, 3);
		p->queued = pgn_col_i64(st, 4) != 0;
		p->turn_mail = pgn_col_i64(st, 5) != 0;
		p->remind = pgn_col_i64(st, 6) != 0;
		p->remind_ms = pgn_col_i64(st, 7);
		p->queued_any = lowest <= PGN_PRIORITY_LOW ?
		    p->queued :
		    pgn_col_i64(st, 8) != 0;
		p->bound = p->agent[0] != '\0';
	} else if (rc == PGN_ENOTFOUND) {
		rc = PGN_OK;
	}
	pgn_finish(db, st);
	return rc;
}

static pgn_status
peek_tx(pgn_db *db, void *arg)
{
	struct peek_ctx *c = arg;

	return peek_row(db, c->session, c->lowest, c->p);
}

pgn_status
pgn_turn_peek(pgn_db *db, const char *session, struct pgn_peek *p)
{
	return pgn_turn_peek_for(db, session, PGN_PRIORITY_LOW, p);
}

pgn_status
pgn_turn_peek_for(pgn_db *db, const char *session, int lowest,
    struct pgn_peek *p)
{
	struct peek_ctx c;

	memset(p, 0, sizeof(*p));
	if (session == NULL || strlen(session) > PGN_MAX_SESSION_KEY)
		return pgn_fail(db, PGN_EINVAL, "no usable session key");
	c.session = session;
	c.lowest = lowest;
	c.p = p;
	return pgn_read(db, peek_tx, &c);
}

int
pgn_turn_quiet(const struct pgn_peek *p, int64_t now)
{
	return p->bound && !p->queued && now - p->seen_ms < PGN_SEEN_REFRESH_MS;
}

/* ---- reminders of overdue acknowledgements (decision 0157) ---- */

/*
 * Append the current row of SQL_DUE, read here and not by
 * pgn_msgs_push: the queue's columns may grow without it.
 */
static pgn_status
push_due(pgn_db *db, struct pgn_msgs *m, pgn_stmt *st)
{
	struct pgn_msg *x;

	if (!pgn_vec_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	x = &m->v[m->n];
	memset(x, 0, sizeof(*x));
	x->id = pgn_col_i64(st, 0);
	x->sender = pgn_col_text(st, 1);
	x->recipient = pgn_col_text(st, 2);
	x->body = pgn_col_text(st, 3);
	(void)pgn_col_str(st, 3, &x->body_len);
	x->created_ms = pgn_col_i64(st, 4);
	x->reply_to = pgn_col_i64(st, 5);
	x->thread = pgn_col_i64(st, 6);
	x->ack_ms = pgn_col_i64(st, 7);
	x->reminder = 1;
	/* marked as it was when delivered (decision 0158) */
	x->priority = (int)pgn_col_i64(st, 8);
	x->group = pgn_col_text(st, 9); /* "" for NULL: none */
	m->n++;
	if (x->sender == NULL || x->recipient == NULL || x->body == NULL ||
	    x->group == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	if (x->group[0] == '\0') {
		free(x->group);
		x->group = NULL;
	}
	return PGN_OK;
}

pgn_status
pgn_reminders_in_tx(pgn_db *db, int64_t aid, int64_t now, size_t budget,
    pgn_cost_fn *cost, void *cost_arg, struct pgn_msgs *out)
{
	pgn_stmt *st = NULL;
	size_t spent = 0, k;
	pgn_status rc;

	pgn_msgs_release(out);
	rc = pgn_prepare(db, SQL_DUE, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(aid), PGN_I(now),
		    PGN_I(PGN_MAX_REMINDERS));
	while (pgn_next_row(db, st, &rc, "reading what is overdue")) {
		rc = push_due(db, out, st);
		if (rc != PGN_OK)
			break;
		k = cost != NULL ? cost(&out->v[out->n - 1], cost_arg) :
		                   out->v[out->n - 1].body_len;
		if (k > budget || spent > budget - k) {
			pgn_msgs_truncate(out, out->n - 1);
			break;
		}
		spent += k;
	}
	pgn_finish(db, st);
	if (rc != PGN_OK)
		pgn_msgs_release(out);
	return rc;
}

pgn_status
pgn_reminded_in_tx(pgn_db *db, int64_t aid, const struct pgn_msgs *m,
    const char *route, int64_t now)
{
	pgn_status rc = PGN_OK;
	size_t i;

	for (i = 0; rc == PGN_OK && i < m->n; i++) {
		rc = pgn_exec_id(db, SQL_REMINDED, m->v[i].id, now,
		    "recording a reminder");
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, aid, "reminded", m->v[i].id,
			    m->v[i].sender, route, now);
	}
	return rc;
}
