/*
 * Waiting for mail and where a message stands: pgn_wait sleeps until a
 * matching message is queued (woken by the backend: SQLite's -wal file
 * changing, PostgreSQL's NOTIFY; with a bounded fallback poll, and a
 * look at the table after every wake-up), then claims it through
 * pgn_claim's filter; a reply is taken only from the recipient of the
 * message it answers. pgn_msg_status reads a message and its audit row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgn_int.h"
#include "store_int.h"

/* A waiter's look: is anything matching queued? Read-only, same index. */
const char pgn_sql_wait_look[] =
    "SELECT EXISTS (SELECT 1 FROM message m WHERE m.recipient_id = ?1 "
    "AND m.delivered_ms IS NULL AND (?2 IS NULL OR m.sender = ?2) "
    "AND (?3 = 0 OR m.reply_to = ?3) AND m.priority >= ?4)";
/* Who may answer message ?1 of scope ?2: its recipient (0134). */
static const char SQL_REPLIER[] =
    "SELECT a.name FROM message m JOIN agent a ON a.id = m.recipient_id "
    "WHERE m.id = ?1 AND m.scope_id = ?2";
/*
 * With its thread and acknowledgement (decision 0157): the reply that
 * acknowledged it is found through the thread's index.
 */
static const char SQL_STATUS[] =
    "SELECT m.sender, coalesce(d.recipient, a.name), m.created_ms, "
    "coalesce(m.reply_to, 0), coalesce(m.delivered_ms, 0), "
    "coalesce(d.session, ''), coalesce(d.host, ''), coalesce(d.route, ''), " PGN_STATUS_ACK_COLS
    ", coalesce(m.woken_ms, 0), coalesce(m.woken_via, '') "
    "FROM message m JOIN agent a ON a.id = m.recipient_id "
    "LEFT JOIN delivery d ON d.message_id = m.id "
    "WHERE m.id = ?1 AND m.scope_id = ?2";

static void
sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	nanosleep(&ts, NULL); /* a signal ends it early: the caller looks */
}

/* Sleep on the backend's wake-up, at most PGN_WAIT_TICK_MS apart. */
void
pgn_waker_sleep(pgn_db *db, struct pgn_waker *w, int64_t ms, int64_t last,
    int64_t until)
{
	int64_t gap;

	if (w != NULL && db->be->wait_sleep(db, w, ms) < 0)
		return; /* a signal: the caller asks whether to stop */
	/* at most PGN_WAIT_TICK_MS apart, however busy the database is */
	gap = last + PGN_WAIT_TICK_MS - pgn_mono_ms();
	if (gap > until - pgn_mono_ms())
		gap = until - pgn_mono_ms();
	sleep_ms(gap);
}

pgn_status
pgn_wait_until(pgn_db *db, const char *watch_dir, int64_t timeout_ms,
    pgn_wait_look_fn *look, void *arg, int (*cancel)(void *cancel_arg),
    void *cancel_arg)
{
	struct pgn_waker *w;
	int64_t until, last, now, due, nap;
	pgn_status rc;
	int done;

	until = pgn_mono_ms() + timeout_ms;
	w = db->be->wait_open(db, watch_dir);
	for (;;) {
		last = pgn_mono_ms();
		done = 0;
		due = 0;
		rc = look(db, arg, &done, &due);
		if (rc != PGN_OK || done)
			break;
		if (cancel != NULL && cancel(cancel_arg))
			break;
		rc = pgn_db_check_file(db);
		if (rc != PGN_OK)
			break;
		now = pgn_mono_ms();
		if (now >= until)
			break;
		nap = until - now < PGN_WAIT_POLL_MS ? until - now :
		                                       PGN_WAIT_POLL_MS;
		/* what the look waits on changes by itself then: look again */
		if (due != 0 && due - pgn_now_ms() + 1 < nap)
			nap = due - pgn_now_ms() + 1;
		pgn_waker_sleep(db, w, nap > 0 ? nap : 1, last, until);
		if (cancel != NULL && cancel(cancel_arg))
			break;
	}
	db->be->wait_close(db, w);
	return rc;
}

struct look_ctx {
	const struct pgn_claim *claim;
	const char *agent; /* checked */
	const char *from;  /* checked, or NULL */
	int64_t found;
	struct pgn_wait *req;
	struct pgn_claim *want; /* what a look that found mail claims */
	struct pgn_msgs *out;
};

struct replier_ctx {
	int64_t id;
	char name[PGN_MAX_NAME + 1];
};

static pgn_status
replier_tx(pgn_db *db, void *arg)
{
	struct replier_ctx *c = arg;
	pgn_stmt *st = NULL;
	char idtext[PGN_MAX_ID_TEXT];
	const char *name;
	int64_t sid;
	pgn_status rc;

	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_REPLIER, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(c->id), PGN_I(sid));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading a message");
	if (rc == PGN_OK) {
		name = pgn_col_str(st, 0, NULL);
		if (name == NULL || strlen(name) >= sizeof(c->name))
			rc = pgn_fail(db, PGN_EDB,
			    "message %lld: its recipient has no name",
			    (long long)c->id);
		else
			memcpy(c->name, name, strlen(name) + 1);
	}
	pgn_finish(db, st);
	(void)snprintf(idtext, sizeof(idtext), "%lld", (long long)c->id);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_STATUS, idtext,
		    "no message %lld in scope '%s' to wait for a reply to",
		    (long long)c->id, PGN_SCOPE_LABEL(db));
	return rc;
}

/*
 * A reply to claim.reply_to counts only from that message's recipient:
 * claim.from becomes its name ('buf'), or the wait is refused when the
 * caller's own filter names another sender.
 */
static pgn_status
only_the_recipient(pgn_db *db, struct pgn_claim *claim, const char *from,
    char *buf)
{
	struct replier_ctx c;
	pgn_status rc;

	c.id = claim->reply_to;
	c.name[0] = '\0';
	rc = pgn_read(db, replier_tx, &c);
	if (rc != PGN_OK)
		return rc;
	if (from != NULL && strcmp(from, c.name) != 0)
		return pgn_fail(db, PGN_EINVAL,
		    "message %lld went to '%s': a reply to it comes from '%s', not '%s'",
		    (long long)claim->reply_to, c.name, c.name, from);
	memcpy(buf, c.name, sizeof(c.name));
	claim->from = buf;
	return PGN_OK;
}

static pgn_status
look_tx(pgn_db *db, void *arg)
{
	struct look_ctx *c = arg;
	int64_t aid;
	pgn_status rc;

	c->found = 0;
	rc = pgn_need_agent(db, c->agent, 0, &aid);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, pgn_sql_wait_look, &c->found,
		    "looking at the queue", PGN_I(aid), PGN_T(c->from),
		    PGN_I(c->claim->reply_to),
		    PGN_I(pgn_route_lowest(c->claim->route)));
	return rc;
}

/* pgn_wait's look: done once a message is claimed (or, look_only, seen). */
static pgn_status
wait_look(pgn_db *db, void *arg, int *done, int64_t *due_ms)
{
	struct look_ctx *c = arg;
	pgn_status rc;

	(void)due_ms;
	c->req->looks++;
	rc = pgn_read(db, look_tx, c);
	if (rc == PGN_OK && c->found && c->req->look_only) {
		c->req->found = 1;
		*done = 1;
		return PGN_OK;
	}
	if (rc == PGN_OK && c->found)
		rc = pgn_claim(db, c->want, c->out);
	/* n == 0: another waiter took it first; wait on */
	if (rc != PGN_OK || c->out->n > 0) {
		*done = 1;
		return rc;
	}
	pgn_msgs_release(c->out);
	return PGN_OK;
}

pgn_status
pgn_wait(pgn_db *db, struct pgn_wait *req, struct pgn_msgs *out)
{
	char agent[PGN_MAX_NAME + 1], from[PGN_MAX_NAME + 1];
	struct pgn_claim claim = req->claim;
	struct look_ctx look;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	req->looks = 0;
	req->found = 0;
	if (req->timeout_ms < 1 || req->timeout_ms > PGN_WAIT_MAX_MS)
		return pgn_fail(db, PGN_EINVAL,
		    "a wait lasts 1 to %d ms, not %lld", PGN_WAIT_MAX_MS,
		    (long long)req->timeout_ms);
	if (claim.reply_to < 0)
		return pgn_fail(db, PGN_EINVAL, "reply_to %lld: not an id",
		    (long long)claim.reply_to);
	rc = pgn_check_name(db, "agent", claim.agent, agent);
	if (rc == PGN_OK && claim.from != NULL)
		rc = pgn_check_name(db, "sender", claim.from, from);
	if (rc == PGN_OK && claim.reply_to != 0)
		rc = only_the_recipient(db, &claim,
		    claim.from != NULL ? from : NULL, from);
	if (rc != PGN_OK)
		return rc;
	if (claim.max == 0)
		claim.max = 1;
	look.claim = &claim;
	look.agent = agent;
	look.from = claim.from != NULL ? from : NULL;
	look.req = req;
	look.want = &claim;
	look.out = out;
	rc = pgn_wait_until(db, req->watch_dir, req->timeout_ms, wait_look,
	    &look, req->cancel, req->cancel_arg);
	if (rc != PGN_OK)
		pgn_msgs_release(out);
	return rc;
}

struct status_ctx {
	const int64_t *ids;
	size_t n;
	struct pgn_msg_status *out;
};

static pgn_status
status_tx(pgn_db *db, void *arg)
{
	struct status_ctx *c = arg;
	struct pgn_msg_status *s;
	pgn_stmt *st = NULL;
	int64_t sid;
	pgn_status rc;
	size_t i;

	pgn_msg_status_release(c->out, c->n); /* a retried snapshot */
	for (i = 0; i < c->n; i++) {
		memset(&c->out[i], 0, sizeof(c->out[i]));
		c->out[i].id = c->ids[i];
	}
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* no scope row yet: nothing is known */
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_STATUS, &st);
	for (i = 0; rc == PGN_OK && i < c->n; i++) {
		s = &c->out[i];
		pgn_reset(st);
		rc = pgn_bind(db, st, PGN_I(s->id), PGN_I(sid));
		if (rc == PGN_OK)
			rc = pgn_step_row(db, st, "reading a message");
		if (rc == PGN_ENOTFOUND) {
			rc = PGN_OK;
			continue;
		}
		if (rc != PGN_OK)
			break;
		rc = pgn_status_row(db, st, s, pgn_now_ms());
		if (rc != PGN_OK)
			break;
		/*
		 * The doorbell (decision 0177): rung, and heard or not; the
		 * two columns after PGN_STATUS_ACK_COLS' last (15).
		 */
		s->woken_ms = pgn_col_i64(st, 16);
		pgn_col_copy(s->woken_via, sizeof(s->woken_via), st, 17);
		s->unheard = s->woken_ms != 0 &&
		    (s->delivered_ms != 0 ?
		            s->delivered_ms - s->woken_ms > PGN_WAKE_HEARD_MS :
		            pgn_now_ms() - s->woken_ms > PGN_WAKE_HEARD_MS);
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_status_row(pgn_db *db, pgn_stmt *st, struct pgn_msg_status *s, int64_t now)
{
	const char *t;
	size_t len;

	s->found = 1;
	pgn_col_copy(s->sender, sizeof(s->sender), st, 0);
	pgn_col_copy(s->recipient, sizeof(s->recipient), st, 1);
	s->created_ms = pgn_col_i64(st, 2);
	s->reply_to = pgn_col_i64(st, 3);
	s->delivered_ms = pgn_col_i64(st, 4);
	pgn_col_copy(s->session, sizeof(s->session), st, 5);
	pgn_col_copy(s->host, sizeof(s->host), st, 6);
	pgn_col_copy(s->route, sizeof(s->route), st, 7);
	s->thread = pgn_col_i64(st, 8);
	s->ack_ms = pgn_col_i64(st, 9);
	s->acked_ms = pgn_col_i64(st, 10);
	s->reminded_ms = pgn_col_i64(st, 12);
	s->ack_reply = pgn_col_i64(st, 13);
	s->priority = (int)pgn_col_i64(st, 14);
	pgn_col_copy(s->group, sizeof(s->group), st, 15);
	s->overdue = s->ack_ms != 0 && s->acked_ms == 0 &&
	    s->delivered_ms != 0 && now - s->delivered_ms > s->ack_ms;
	free(s->ack_text);
	s->ack_text = NULL;
	t = pgn_col_str(st, 11, &len);
	if (t == NULL)
		return PGN_OK;
	s->ack_text = malloc(len + 1);
	if (s->ack_text == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	memcpy(s->ack_text, t, len);
	s->ack_text[len] = '\0';
	return PGN_OK;
}

void
pgn_msg_status_release(struct pgn_msg_status *out, size_t n)
{
	size_t i;

	for (i = 0; out != NULL && i < n; i++) {
		free(out[i].ack_text);
		out[i].ack_text = NULL;
		free(out[i].body);
		out[i].body = NULL;
	}
}

pgn_status
pgn_msg_status(pgn_db *db, const int64_t *ids, size_t n,
    struct pgn_msg_status *out)
{
	struct status_ctx c;
	pgn_status rc;
	size_t i;

	if (n == 0)
		return pgn_fail(db, PGN_EINVAL, "no message id to look up");
	if (n > PGN_MAX_STATUS_IDS)
		return pgn_fail(db, PGN_ETOOBIG,
		    "%zu message ids, over the limit of %d", n,
		    PGN_MAX_STATUS_IDS);
	for (i = 0; i < n; i++)
		if (ids[i] < 1)
			return pgn_fail(db, PGN_EINVAL,
			    "message id %lld: ids start at 1",
			    (long long)ids[i]);
	c.ids = ids;
	c.n = n;
	c.out = out;
	for (i = 0; i < n; i++) {
		out[i].ack_text = NULL;
		out[i].body = NULL;
	}
	rc = pgn_read(db, status_tx, &c);
	if (rc != PGN_OK)
		pgn_msg_status_release(out, n);
	return rc;
}
