/*
 * Sending and reading the inbox: the sender resolved (a session's agent,
 * else the name asked for, else the default), recipients resolved
 * (names, 'all', --create), every cap and each sender's share checked
 * before the first insert, one message row per recipient; the inbox
 * lists the queue without claiming it.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "search_int.h"
#include "store_int.h"
#include "wake_int.h"

/*
 * Served by the partial index message_queued, whatever the history:
 * priority ?3 and above, the highest first, then oldest first (0158).
 */
const char pgn_sql_queued[] =
    "SELECT m.id, m.sender, a.name, m.body, m.created_ms, "
    "coalesce(m.reply_to, 0), coalesce(m.thread, m.id), "
    "coalesce(m.ack_ms, 0), m.priority, m.grp FROM message m JOIN agent a "
    "ON a.id = m.recipient_id WHERE m.recipient_id = ?1 "
    "AND m.delivered_ms IS NULL AND m.priority >= ?3 "
    "ORDER BY m.priority DESC, m.id LIMIT ?2";
/*
 * One sender's queued messages for ?1, through message_queued. Asked
 * only of a queue that holds a share or more (docs/decisions/0135).
 */
const char pgn_sql_queued_from[] =
    "SELECT count(*) FROM message WHERE recipient_id = ?1 "
    "AND delivered_ms IS NULL AND sender = ?2";
/*
 * The agent session ?1 is bound to, in whatever scope (a session keeps
 * its agent wherever it sends from), while that agent is active (0134).
 */
static const char SQL_SESSION_SENDER[] =
    "SELECT a.name FROM session s JOIN agent a ON a.id = s.agent_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";
/* A message replied to: its thread, which the reply joins (0157). */
static const char SQL_MSG_IN_SCOPE[] =
    "SELECT coalesce(thread, id) FROM message WHERE id = ?1 AND scope_id = ?2";
static const char SQL_MSG_ADD[] =
    "INSERT INTO message(scope_id, sender, recipient_id, body, created_ms, "
    "reply_to, thread, ack_ms, priority, grp) VALUES (?1, ?2, ?3, ?4, ?5, "
    "nullif(?6, 0), nullif(?7, 0), nullif(?8, 0), ?9, ?10)";
static const char SQL_MSG_ADD_PG[] =
    "INSERT INTO message(scope_id, sender, recipient_id, body, created_ms, "
    "reply_to, thread, ack_ms, priority, grp) VALUES (?1, ?2, ?3, ?4, ?5, "
    "nullif(?6, 0), nullif(?7, 0), nullif(?8, 0), ?9, ?10) RETURNING id";
/*
 * A reply from its recipient (?3) acknowledges message ?1 when it asked
 * for an acknowledgement (0157).
 */
static const char SQL_ACK_BY_REPLY[] =
    "UPDATE message SET acked_ms = ?2 WHERE id = ?1 AND recipient_id = ?3 "
    "AND ack_ms IS NOT NULL AND acked_ms IS NULL";
/* One sender's urgent messages queued for ?1 (decision 0158). */
static const char SQL_URGENT_FROM[] =
    "SELECT count(*) FROM message WHERE recipient_id = ?1 "
    "AND delivered_ms IS NULL AND sender = ?2 AND priority = ?3";

void
pgn_msgs_release(struct pgn_msgs *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->v[i].sender);
		free(m->v[i].recipient);
		free(m->v[i].body);
		free(m->v[i].group);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Append the current row of pgn_sql_queued. */
pgn_status
pgn_msgs_push(pgn_db *db, struct pgn_msgs *m, pgn_stmt *st)
{
	struct pgn_msg *x;

	if (!pgn_vec_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	x = &m->v[m->n];
	x->id = pgn_col_i64(st, 0);
	x->sender = pgn_col_text(st, 1);
	x->recipient = pgn_col_text(st, 2);
	x->body = pgn_col_text(st, 3);
	(void)pgn_col_str(st, 3, &x->body_len);
	x->created_ms = pgn_col_i64(st, 4);
	x->reply_to = pgn_col_i64(st, 5);
	x->thread = pgn_col_i64(st, 6);
	x->ack_ms = pgn_col_i64(st, 7);
	x->reminder = 0;
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

struct rcpt {
	int64_t id;
	char name[PGN_MAX_NAME + 1];
	const char *group; /* "@NAME" of the group that named it, or NULL */
};

struct send_ctx {
	const struct pgn_send *req;
	char asked[PGN_MAX_NAME + 1]; /* req->from, checked; or "" */
	char from[PGN_MAX_NAME + 1];  /* the sender, found in the tx */
	char (*to)[PGN_MAX_NAME + 2]; /* checked; "@NAME" for a group */
	struct rcpt *rcpt;            /* resolved agents */
	size_t nrcpt;
	size_t maxrcpt;
	struct pgn_sent *sent;
	size_t maxsent;
	size_t *nsent;
	struct pgn_wakes *wakes; /* the doorbells to ring after the commit */
};

static pgn_status
add_rcpt(pgn_db *db, struct send_ctx *c, int64_t id, const char *name,
    const char *group)
{
	struct rcpt *r;
	size_t i;

	for (i = 0; i < c->nrcpt; i++)
		if (c->rcpt[i].id == id)
			return PGN_OK;
	if (!pgn_vec_grow((void **)&c->rcpt, &c->maxrcpt, c->nrcpt,
	        sizeof(*c->rcpt)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	r = &c->rcpt[c->nrcpt++];
	r->id = id;
	r->group = group;
	r->name[0] = '\0';
	if (name != NULL && strlen(name) < sizeof(r->name))
		memcpy(r->name, name, strlen(name) + 1);
	return PGN_OK;
}

/*
 * The members of group 'name' of scope 'sid' but the sender, as 'all'
 * does for the scope (decision 0158): each recorded with the group.
 */
static pgn_status
group_rcpts(pgn_db *db, struct send_ctx *c, int64_t sid, int64_t from_id,
    const char *at)
{
	const char *name = at + 1; /* at: "@NAME" */
	pgn_stmt *st = NULL;
	size_t rows = 0, before = c->nrcpt;
	int64_t id;
	pgn_status rc;

	rc = pgn_prepare(db, pgn_sql_grouped, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_LIST));
	while (pgn_next_row(db, st, &rc, "listing a group")) {
		if (!pgn_grps_has(pgn_col_str(st, 2, NULL), name))
			continue;
		rows++;
		id = pgn_col_i64(st, 0);
		if (id != from_id)
			rc = add_rcpt(db, c, id, pgn_col_str(st, 1, NULL), at);
	}
	pgn_finish(db, st);
	if (rc == PGN_OK && rows == 0)
		return pgn_fail_unknown_group(db, sid, name);
	if (rc == PGN_OK && c->nrcpt == before)
		return pgn_fail(db, PGN_ENOTFOUND,
		    "group '@%s' names no other active agent in scope '%s'",
		    name, PGN_SCOPE_LABEL(db));
	return rc;
}

static pgn_status
resolve_rcpts(pgn_db *db, struct send_ctx *c, int64_t sid, int64_t from_id,
    int64_t now)
{
	pgn_stmt *st = NULL;
	const struct pgn_send *req = c->req;
	pgn_status rc = PGN_OK;
	int64_t id;
	size_t i;

	c->nrcpt = 0;
	for (i = 0; i < req->nto && rc == PGN_OK; i++) {
		if (strcmp(c->to[i], "all") == 0) {
			rc = pgn_prepare(db, pgn_sql_agent_names, &st);
			if (rc == PGN_OK)
				rc = pgn_bind(db, st, PGN_I(sid));
			/* A step error is no end of rows: fewer recipients
			 * would commit (defects.md 25). */
			while (pgn_next_row(db, st, &rc, "listing agents")) {
				id = pgn_col_i64(st, 0);
				if (id != from_id)
					rc = add_rcpt(db, c, id,
					    pgn_col_str(st, 1, NULL), NULL);
			}
			pgn_finish(db, st);
			st = NULL;
			continue;
		}
		if (c->to[i][0] == '@') {
			rc = group_rcpts(db, c, sid, from_id, c->to[i]);
			continue;
		}
		rc = pgn_agent_id(db, sid, c->to[i], 0, &id);
		if (rc == PGN_ENOTFOUND && req->create)
			rc = pgn_agent_insert(db, sid, c->to[i],
			    "created by --create", now, &id);
		else if (rc == PGN_ENOTFOUND)
			rc = pgn_fail_unknown(db, sid, c->to[i], 1);
		if (rc == PGN_OK)
			rc = add_rcpt(db, c, id, c->to[i], NULL);
	}
	if (rc == PGN_OK && c->nrcpt == 0)
		rc = pgn_fail(db, PGN_ENOTFOUND,
		    "'all' names no other agent in scope '%s'",
		    PGN_SCOPE_LABEL(db));
	return rc;
}

/*
 * The name of the agent session 'key' is bound to, into 'name'; '*bound'
 * 0 for a session no database row binds to an active agent.
 */
static pgn_status
session_agent(pgn_db *db, const char *key, char name[PGN_MAX_NAME + 1],
    int *bound)
{
	pgn_stmt *st = NULL;
	const char *v;
	pgn_status rc;

	*bound = 0;
	rc = pgn_prepare(db, SQL_SESSION_SENDER, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_T(key));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading the sender's session");
	if (rc == PGN_OK) {
		v = pgn_col_str(st, 0, NULL);
		if (v == NULL || v[0] == '\0' || strlen(v) > PGN_MAX_NAME)
			rc = pgn_fail(db, PGN_EDB,
			    "session '%.256s': its agent has no valid name",
			    key);
		else {
			memcpy(name, v, strlen(v) + 1);
			*bound = 1;
		}
	}
	pgn_finish(db, st);
	return rc == PGN_ENOTFOUND ? PGN_OK : rc;
}

/*
 * Who sends (docs/decisions/0134): the agent of the sending process's
 * session where the database binds that session (a 'from' naming
 * another is refused), else the name asked for, else the default.
 * '*from_id' gets the sender's agent row in scope 'sid', or 0 for a
 * name that is no agent of it.
 */
pgn_status
pgn_actor_in_tx(pgn_db *db, const char *asked, const char *session,
    const char *from_default, char from[PGN_MAX_NAME + 1])
{
	pgn_status rc;
	int bound = 0;

	if (session != NULL && session[0] != '\0') {
		rc = session_agent(db, session, from, &bound);
		if (rc != PGN_OK)
			return rc;
		if (bound && asked[0] != '\0' && strcmp(asked, from) != 0)
			return pgn_fail_hint(db, PGN_EINVAL, PGN_HINT_DROP_FROM,
			    NULL,
			    "session '%.256s' sends as its agent '%s', not as '%s'",
			    session, from, asked);
	}
	if (!bound && asked[0] != '\0')
		memcpy(from, asked, PGN_MAX_NAME + 1);
	else if (!bound && from_default != NULL && from_default[0] != '\0') {
		/* checked here: unused, a bad default is no error */
		rc = pgn_check_name(db, "sender", from_default, from);
		if (rc != PGN_OK)
			return rc;
	} else if (!bound)
		return pgn_fail_hint(db, PGN_EINVAL, PGN_HINT_SENDER, NULL,
		    "no sender");
	return PGN_OK;
}

static pgn_status
find_sender(pgn_db *db, struct send_ctx *c, int64_t sid, int64_t *from_id)
{
	const struct pgn_send *req = c->req;
	pgn_status rc;

	*from_id = 0;
	rc = pgn_actor_in_tx(db, c->asked, req->session, req->from_default,
	    c->from);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_agent_id(db, sid, c->from, 0, from_id);
	if (rc == PGN_ENOTFOUND) {
		*from_id = 0; /* a person, or an agent of another scope */
		rc = PGN_OK;
	}
	if (rc == PGN_OK && *from_id == 0 && req->need_mailbox)
		rc = pgn_fail_unknown(db, sid, c->from, 0);
	return rc;
}

/*
 * Room for one more urgent message to 'r' from this sender: urgent has
 * a cap of its own, so it cannot flood (decision 0158).
 */
static pgn_status
check_urgent(pgn_db *db, struct send_ctx *c, const struct rcpt *r)
{
	int64_t mine;
	pgn_status rc;

	rc = pgn_select_i64(db, SQL_URGENT_FROM, &mine,
	    "counting a sender's urgent messages", PGN_I(r->id), PGN_T(c->from),
	    PGN_I(PGN_PRIORITY_URGENT));
	if (rc == PGN_OK && mine >= PGN_MAX_PENDING_URGENT)
		rc = pgn_fail(db, PGN_EFULL,
		    "agent '%s' already has %lld urgent messages waiting from '%s' (the cap is %d); nothing was sent: send it as normal, or wait until it reads them",
		    r->name, (long long)mine, c->from, PGN_MAX_PENDING_URGENT);
	return rc;
}

/*
 * Room for one more message to recipient 'r': under the cap, and under
 * the sender's share of it. The sender's count is asked only of a queue
 * that holds a share or more, so a short queue costs what it did.
 */
static pgn_status
check_room(pgn_db *db, struct send_ctx *c, const struct rcpt *r)
{
	int64_t n, mine;
	pgn_status rc;

	rc = pgn_queued_count(db, r->id, &n);
	if (rc == PGN_OK && c->req->priority == PGN_PRIORITY_URGENT)
		rc = check_urgent(db, c, r);
	if (rc != PGN_OK)
		return rc;
	if (n >= PGN_MAX_PENDING)
		return pgn_fail(db, PGN_EFULL,
		    "agent '%s' already has %lld messages waiting (the cap is %d); nothing was sent: wait until it reads them",
		    r->name, (long long)n, PGN_MAX_PENDING);
	if (n < PGN_MAX_PENDING_FROM)
		return PGN_OK;
	rc = pgn_select_i64(db, pgn_sql_queued_from, &mine,
	    "counting a sender's queued messages", PGN_I(r->id),
	    PGN_T(c->from));
	if (rc != PGN_OK)
		return rc;
	if (mine >= PGN_MAX_PENDING_FROM)
		return pgn_fail(db, PGN_EFULL,
		    "agent '%s' already has %lld messages waiting from '%s', one sender's share (%d of the cap of %d); nothing was sent: wait until it reads them",
		    r->name, (long long)mine, c->from, PGN_MAX_PENDING_FROM,
		    PGN_MAX_PENDING);
	return PGN_OK;
}

/*
 * A reply from the recipient of message 'id' acknowledges it, once,
 * if it asked for that (decision 0157): journalled for the recipient
 * ('from_id').
 */
static pgn_status
ack_by_reply(pgn_db *db, int64_t id, int64_t from_id, int64_t now)
{
	pgn_stmt *st = NULL;
	pgn_status rc;
	int64_t n = 0;

	rc = pgn_prepare(db, SQL_ACK_BY_REPLY, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(id), PGN_I(now), PGN_I(from_id));
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "acknowledging by a reply");
	if (rc == PGN_OK)
		n = pgn_changes(db, st);
	pgn_finish(db, st);
	if (rc == PGN_OK && n == 1)
		rc = pgn_journal_add(db, from_id, "acked", id, NULL, NULL, now);
	return rc;
}

static pgn_status
send_tx(pgn_db *db, void *arg)
{
	struct send_ctx *c = arg;
	const struct pgn_send *req = c->req;
	pgn_stmt *st = NULL;
	int64_t sid, from_id = 0, thread = 0, id, now;
	size_t i;
	pgn_status rc;

	*c->nsent = 0;
	pgn_wakes_release(c->wakes); /* a retried transaction starts over */
	now = pgn_now_ms();
	rc = pgn_scope_id(db, 1, &sid);
	if (rc != PGN_OK)
		return rc;
	rc = find_sender(db, c, sid, &from_id);
	if (rc == PGN_OK)
		rc = resolve_rcpts(db, c, sid, from_id, now);
	if (rc != PGN_OK)
		return rc;
	if (c->nrcpt > c->maxsent)
		return pgn_fail(db, PGN_ETOOBIG, "%zu recipients: at most %zu",
		    c->nrcpt, c->maxsent);
	if (req->reply_to != 0) {
		rc = pgn_select_i64(db, SQL_MSG_IN_SCOPE, &thread,
		    "reading a message", PGN_I(req->reply_to), PGN_I(sid));
		if (rc == PGN_ENOTFOUND)
			return pgn_fail_hint(db, PGN_EINVAL, PGN_HINT_MESSAGES,
			    NULL, "no message %lld in scope '%s' to reply to",
			    (long long)req->reply_to, PGN_SCOPE_LABEL(db));
		if (rc != PGN_OK)
			return rc;
	}
	/* All or nothing: check every cap before the first insert. */
	for (i = 0; i < c->nrcpt; i++) {
		rc = check_room(db, c, &c->rcpt[i]);
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_prepare(db, pgn_sql(db, SQL_MSG_ADD, SQL_MSG_ADD_PG), &st);
	for (i = 0; rc == PGN_OK && i < c->nrcpt; i++) {
		pgn_reset(st);
		rc = pgn_bind(db, st, PGN_I(sid), PGN_T(c->from),
		    PGN_I(c->rcpt[i].id), PGN_S(req->body, req->body_len),
		    PGN_I(now), PGN_I(req->reply_to), PGN_I(thread),
		    PGN_I(req->ack_ms), PGN_I(req->priority),
		    PGN_T(c->rcpt[i].group != NULL ? c->rcpt[i].group + 1 :
		                                     NULL));
		if (rc == PGN_OK)
			rc = pgn_step_done(db, st, "queueing a message");
		if (rc != PGN_OK)
			break;
		id = pgn_inserted_id(db, st);
		rc = pgn_search_index(db, id);
		if (rc != PGN_OK)
			break;
		c->sent[*c->nsent].id = id;
		memcpy(c->sent[*c->nsent].to, c->rcpt[i].name,
		    sizeof(c->rcpt[i].name));
		memcpy(c->sent[*c->nsent].from, c->from, sizeof(c->from));
		(*c->nsent)++;
		/*
		 * The doorbell's pick reads (a round trip on PostgreSQL), so
		 * it goes before the journal's write, which then travels
		 * with the commit instead of alone.
		 */
		rc = pgn_wake_pick(db, c->wakes, c->rcpt[i].id, c->rcpt[i].name,
		    id, req->priority, now);
		if (rc == PGN_OK && from_id != 0)
			rc = pgn_journal_add(db, from_id, "sent", id,
			    c->rcpt[i].name, c->rcpt[i].group, now);
	}
	pgn_finish(db, st);
	if (rc == PGN_OK && req->reply_to != 0 && from_id != 0)
		rc = ack_by_reply(db, req->reply_to, from_id, now);
	return rc;
}

pgn_status
pgn_send(pgn_db *db, const struct pgn_send *req, struct pgn_sent *sent,
    size_t maxsent, size_t *nsent)
{
	struct send_ctx c;
	struct pgn_wakes wakes;
	pgn_status rc;
	size_t i;

	*nsent = 0;
	memset(&c, 0, sizeof(c));
	memset(&wakes, 0, sizeof(wakes));
	c.wakes = &wakes;
	c.req = req;
	c.sent = sent;
	c.maxsent = maxsent;
	c.nsent = nsent;
	if (req->body_len > PGN_MAX_BODY)
		return pgn_fail(db, PGN_ETOOBIG,
		    "message body is %zu bytes, over the limit of %d: write it to a file and send the file's path",
		    req->body_len, PGN_MAX_BODY);
	if (req->body_len == 0)
		return pgn_fail(db, PGN_EINVAL,
		    "message body is empty: give the text as arguments or on standard input");
	if (memchr(req->body, '\0', req->body_len) != NULL)
		return pgn_fail(db, PGN_EINVAL,
		    "message body contains a NUL byte: send text");
	if (!pgn_utf8_valid(req->body, req->body_len))
		return pgn_fail(db, PGN_EINVAL,
		    "message body is not valid UTF-8: send text");
	if (req->nto == 0)
		return pgn_fail(db, PGN_EINVAL, "a message needs a recipient");
	if (req->nto > PGN_MAX_RECIPIENTS)
		return pgn_fail(db, PGN_ETOOBIG,
		    "%zu recipients: at most %d names in one send", req->nto,
		    PGN_MAX_RECIPIENTS);
	if (req->reply_to < 0)
		return pgn_fail(db, PGN_EINVAL,
		    "a reply must name a message id, a positive number");
	if (req->ack_ms != 0 &&
	    (req->ack_ms < PGN_ACK_MIN_MS || req->ack_ms > PGN_ACK_MAX_MS))
		return pgn_fail(db, PGN_EINVAL,
		    "an acknowledgement is asked within %d s to %lld days, not %lld ms",
		    PGN_ACK_MIN_MS / 1000, PGN_ACK_MAX_MS / 86400000LL,
		    (long long)req->ack_ms);
	if (req->priority < PGN_PRIORITY_LOW ||
	    req->priority > PGN_PRIORITY_URGENT)
		return pgn_fail(db, PGN_EINVAL,
		    "priority %d: it is urgent, normal or low", req->priority);
	if (req->from != NULL && req->from[0] != '\0') {
		rc = pgn_check_name(db, "sender", req->from, c.asked);
		if (rc != PGN_OK)
			return rc;
	}
	c.to = calloc(req->nto, sizeof(*c.to));
	if (c.to == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	for (i = 0; i < req->nto; i++) {
		if (req->to[i] != NULL && strcmp(req->to[i], "all") == 0) {
			memcpy(c.to[i], "all", 4);
			continue;
		}
		if (req->to[i] != NULL && req->to[i][0] == '@') {
			c.to[i][0] = '@';
			rc = pgn_check_name(db, "group", req->to[i] + 1,
			    c.to[i] + 1);
			if (rc != PGN_OK)
				goto out;
			continue;
		}
		rc = pgn_check_name(db, "recipient", req->to[i], c.to[i]);
		if (rc != PGN_OK)
			goto out;
	}
	rc = pgn_wakes_prepare(db, &wakes, req->priority);
	if (rc != PGN_OK)
		goto out;
	rc = pgn_tx(db, send_tx, &c);
	if (rc != PGN_OK)
		*nsent = 0;
	else /* queued: whatever the doorbells do, the send has succeeded */
		pgn_wakes_ring(db, &wakes);
out:
	pgn_wakes_release(&wakes);
	free(c.to);
	free(c.rcpt);
	return rc;
}

struct inbox_ctx {
	char agent[PGN_MAX_NAME + 1];
	struct pgn_msgs *out;
};

static pgn_status
inbox_tx(pgn_db *db, void *arg)
{
	struct inbox_ctx *c = arg;
	pgn_stmt *st = NULL;
	int64_t aid;
	pgn_status rc;

	pgn_msgs_release(c->out);
	rc = pgn_need_agent(db, c->agent, 0, &aid);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, pgn_sql_queued, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(aid), PGN_I(PGN_MAX_LIST),
		    PGN_I(PGN_PRIORITY_LOW));
	while (pgn_next_row(db, st, &rc, "reading the inbox"))
		rc = pgn_msgs_push(db, c->out, st);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_inbox(pgn_db *db, const char *agent, struct pgn_msgs *out)
{
	struct inbox_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.out = out;
	rc = pgn_check_name(db, "agent", agent, c.agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_read(db, inbox_tx, &c);
	if (rc != PGN_OK)
		pgn_msgs_release(out);
	return rc;
}

struct actor_ctx {
	const char *asked; /* checked, or "" */
	const char *session;
	const char *agent_default;
	char *out;
};

static pgn_status
actor_tx(pgn_db *db, void *arg)
{
	struct actor_ctx *c = arg;

	return pgn_actor_in_tx(db, c->asked, c->session, c->agent_default,
	    c->out);
}

pgn_status
pgn_actor(pgn_db *db, const char *agent, const char *session,
    const char *agent_default, char out[PGN_MAX_NAME + 1])
{
	char asked[PGN_MAX_NAME + 1] = "";
	struct actor_ctx c;
	pgn_status rc;

	if (agent != NULL && agent[0] != '\0') {
		rc = pgn_check_name(db, "agent", agent, asked);
		if (rc != PGN_OK)
			return rc;
	}
	c.asked = asked;
	c.session = session;
	c.agent_default = agent_default;
	c.out = out;
	return pgn_read(db, actor_tx, &c);
}
