/*
 * Acknowledgements and threads (decision 0157): a recipient
 * acknowledges a message once (pigeon ack, or a reply: send.c); a
 * sender waits for it; a message asked for an acknowledgement and not
 * given one in time is shown to its recipient once more, at its next
 * prompt or session start (the turn's claim, claim.c), as a reminder:
 * journalled, never a second delivery. A thread is a message's first
 * message: its own id, or the thread of the message it replies to.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"
#include "claim.h"

/* The message to acknowledge, its recipient and its state. */
static const char SQL_ACK_GET[] =
    "SELECT m.recipient_id, a.name, m.sender, coalesce(m.acked_ms, 0) "
    "FROM message m JOIN agent a ON a.id = m.recipient_id "
    "WHERE m.id = ?1 AND m.scope_id = ?2";
static const char SQL_ACK_SET[] =
    "UPDATE message SET acked_ms = ?2, ack_text = ?3 WHERE id = ?1 "
    "AND acked_ms IS NULL";
/* A waiter's look: acknowledged yet? */
static const char SQL_ACKED[] =
    "SELECT coalesce(acked_ms, 0) FROM message WHERE id = ?1 "
    "AND scope_id = ?2";
/* The thread of message ?1, in scope ?2. */
static const char SQL_THREAD_OF[] =
    "SELECT coalesce(thread, id) FROM message WHERE id = ?1 "
    "AND scope_id = ?2";
/* A thread's messages, oldest first: its first, and its replies. */
static const char SQL_THREAD[] =
    "SELECT m.sender, coalesce(d.recipient, a.name), m.created_ms, "
    "coalesce(m.reply_to, 0), coalesce(m.delivered_ms, 0), "
    "coalesce(d.session, ''), coalesce(d.host, ''), coalesce(d.route, ''), " PGN_STATUS_ACK_COLS
    ", m.id, m.body "
    "FROM message m JOIN agent a ON a.id = m.recipient_id "
    "LEFT JOIN delivery d ON d.message_id = m.id "
    "WHERE (m.id = ?1 OR m.thread = ?1) AND m.scope_id = ?2 "
    "ORDER BY m.id LIMIT ?3";
struct ack_ctx {
	const struct pgn_ack *req;
	char asked[PGN_MAX_NAME + 1];
	struct pgn_acked *out;
};

static pgn_status
ack_tx(pgn_db *db, void *arg)
{
	struct ack_ctx *c = arg;
	const struct pgn_ack *req = c->req;
	struct pgn_acked *out = c->out;
	char idtext[PGN_MAX_ID_TEXT];
	pgn_stmt *st = NULL;
	const char *to;
	int64_t sid, rid = 0, now = pgn_now_ms();
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	(void)snprintf(idtext, sizeof(idtext), "%lld", (long long)req->id);
	rc = pgn_actor_in_tx(db, c->asked, req->session, req->from_default,
	    out->agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_ACK_GET, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(req->id), PGN_I(sid));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading a message");
	if (rc == PGN_OK) {
		rid = pgn_col_i64(st, 0);
		to = pgn_col_str(st, 1, NULL);
		if (to == NULL || strcmp(to, out->agent) != 0)
			rc = pgn_fail(db, PGN_EINVAL,
			    "message %lld went to '%.64s', not to '%s': only its recipient acknowledges it",
			    (long long)req->id, to != NULL ? to : "",
			    out->agent);
		pgn_col_copy(out->sender, sizeof(out->sender), st, 2);
		out->acked_ms = pgn_col_i64(st, 3);
	}
	pgn_finish(db, st);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_STATUS, idtext,
		    "no message %lld in scope '%s' to acknowledge",
		    (long long)req->id, PGN_SCOPE_LABEL(db));
	if (rc != PGN_OK)
		return rc;
	if (out->acked_ms != 0) {
		out->already = 1;
		return PGN_OK;
	}
	rc = pgn_exec(db, SQL_ACK_SET, "acknowledging a message",
	    PGN_I(req->id), PGN_I(now),
	    PGN_S(req->text != NULL ? req->text : "",
	        req->text != NULL ? req->text_len : 0));
	if (rc == PGN_OK)
		rc = pgn_journal_add(db, rid, "acked", req->id, out->sender,
		    NULL, now);
	if (rc == PGN_OK)
		out->acked_ms = now;
	return rc;
}

pgn_status
pgn_ack(pgn_db *db, const struct pgn_ack *req, struct pgn_acked *out)
{
	struct ack_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.out = out;
	if (req->id < 1)
		return pgn_fail(db, PGN_EINVAL,
		    "message id %lld: ids start at 1", (long long)req->id);
	if (req->text != NULL && req->text_len > PGN_MAX_ACK_TEXT)
		return pgn_fail(db, PGN_ETOOBIG,
		    "an acknowledgement's text is %zu bytes, over the limit of %d",
		    req->text_len, PGN_MAX_ACK_TEXT);
	if (req->text != NULL &&
	    (memchr(req->text, '\0', req->text_len) != NULL ||
	        !pgn_utf8_valid(req->text, req->text_len)))
		return pgn_fail(db, PGN_EINVAL,
		    "an acknowledgement's text must be UTF-8 text");
	if (req->from != NULL && req->from[0] != '\0') {
		rc = pgn_check_name(db, "agent", req->from, c.asked);
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_tx(db, ack_tx, &c);
	if (rc != PGN_OK)
		memset(out, 0, sizeof(*out));
	return rc;
}

struct acked_ctx {
	int64_t id;
	int64_t acked_ms;
};

static pgn_status
acked_tx(pgn_db *db, void *arg)
{
	struct acked_ctx *c = arg;
	char idtext[PGN_MAX_ID_TEXT];
	int64_t sid;
	pgn_status rc;

	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_ACKED, &c->acked_ms,
		    "reading a message", PGN_I(c->id), PGN_I(sid));
	(void)snprintf(idtext, sizeof(idtext), "%lld", (long long)c->id);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_STATUS, idtext,
		    "no message %lld in scope '%s' to wait for",
		    (long long)c->id, PGN_SCOPE_LABEL(db));
	return rc;
}

/* pgn_wait_ack's look: done once the message is acknowledged. */
static pgn_status
ack_look(pgn_db *db, void *arg, int *done, int64_t *due_ms)
{
	struct acked_ctx *c = arg;
	pgn_status rc;

	(void)due_ms;
	rc = pgn_read(db, acked_tx, c);
	*done = rc == PGN_OK && c->acked_ms != 0;
	return rc;
}

/* pgn_wait's loop (pgn_wait_until): the look is "acknowledged yet?". */
pgn_status
pgn_wait_ack(pgn_db *db, int64_t id, int64_t timeout_ms,
    int (*cancel)(void *arg), void *cancel_arg, int *acked)
{
	struct acked_ctx c;
	pgn_status rc;

	*acked = 0;
	if (id < 1)
		return pgn_fail(db, PGN_EINVAL,
		    "message id %lld: ids start at 1", (long long)id);
	if (timeout_ms < 1 || timeout_ms > PGN_WAIT_MAX_MS)
		return pgn_fail(db, PGN_EINVAL,
		    "a wait lasts 1 to %d ms, not %lld", PGN_WAIT_MAX_MS,
		    (long long)timeout_ms);
	c.id = id;
	c.acked_ms = 0;
	rc = pgn_wait_until(db, NULL, timeout_ms, ack_look, &c, cancel,
	    cancel_arg);
	*acked = rc == PGN_OK && c.acked_ms != 0;
	return rc;
}

struct thread_ctx {
	int64_t id;
	struct pgn_msg_status *v;
	size_t n, cap;
	int more;
};

static void
thread_clear(struct thread_ctx *c)
{
	pgn_msg_status_release(c->v, c->n);
	c->n = 0;
	c->more = 0;
}

static pgn_status
thread_tx(pgn_db *db, void *arg)
{
	struct thread_ctx *c = arg;
	char idtext[PGN_MAX_ID_TEXT];
	struct pgn_msg_status *s;
	pgn_stmt *st = NULL;
	int64_t sid, thread, now = pgn_now_ms();
	pgn_status rc;

	thread_clear(c);
	(void)snprintf(idtext, sizeof(idtext), "%lld", (long long)c->id);
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_THREAD_OF, &thread,
		    "reading a message", PGN_I(c->id), PGN_I(sid));
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_STATUS, idtext,
		    "no message %lld in scope '%s'", (long long)c->id,
		    PGN_SCOPE_LABEL(db));
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_THREAD, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(thread), PGN_I(sid),
		    PGN_I(PGN_MAX_THREAD + 1));
	while (pgn_next_row(db, st, &rc, "reading a thread")) {
		if (c->n == PGN_MAX_THREAD) {
			c->more = 1;
			break;
		}
		if (!pgn_vec_grow((void **)&c->v, &c->cap, c->n,
		        sizeof(*c->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		s = &c->v[c->n++];
		memset(s, 0, sizeof(*s));
		s->id = pgn_col_i64(st, 16);
		rc = pgn_status_row(db, st, s, now);
		if (rc == PGN_OK) {
			s->body = pgn_col_text(st, 17);
			if (s->body == NULL)
				rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
		}
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_thread(pgn_db *db, int64_t id, struct pgn_msg_status **out, size_t *n,
    int *more)
{
	struct thread_ctx c;
	pgn_status rc;

	*out = NULL;
	*n = 0;
	*more = 0;
	if (id < 1)
		return pgn_fail(db, PGN_EINVAL,
		    "message id %lld: ids start at 1", (long long)id);
	memset(&c, 0, sizeof(c));
	c.id = id;
	rc = pgn_read(db, thread_tx, &c);
	if (rc != PGN_OK) {
		thread_clear(&c);
		free(c.v);
		return rc;
	}
	*out = c.v;
	*n = c.n;
	*more = c.more;
	return PGN_OK;
}
