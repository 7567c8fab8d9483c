/*
 * What pigeon watch shows (docs/decisions/0125): one read of the scope
 * (agents, the newest queued messages, the newest deliveries, the open
 * batons, the live leases), and a change notifier the caller can poll beside
 * its own descriptors: the backend's wake-up (SQLite: inotify on the -wal file
 * and the database's directory, as pgn_wait sleeps on).
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "pigeon/hosts.h"
#include "pigeon/lease.h"
#include "store_int.h"

static const char SQL_QUEUED_COUNT[] =
    "SELECT count(*) FROM message WHERE scope_id = ?1 "
    "AND delivered_ms IS NULL";
/*
 * "m.id + 0": sorted after the queued rows are found through the
 * partial index message_queued, not found by walking the primary key
 * down past every delivered message (1M delivered: a second; pigeon
 * web's /api/state, decision 0171).
 */
static const char SQL_QUEUED_NEWEST[] =
    "SELECT m.id, m.sender, a.name, m.created_ms, coalesce(m.reply_to, 0), "
    "m.body, m.priority, m.grp, coalesce(m.woken_ms, 0), "
    "coalesce(m.woken_via, '') FROM message m "
    "JOIN agent a ON a.id = m.recipient_id "
    "WHERE m.scope_id = ?1 AND m.delivered_ms IS NULL "
    "ORDER BY m.id + 0 DESC LIMIT ?2";
static const char SQL_BATONS_OPEN[] =
    "SELECT b.id, b.senders, coalesce(t.name, ''), b.updated_ms, "
    "b.expires_ms, b.notes, b.body FROM baton b "
    "LEFT JOIN agent t ON t.id = b.target_id "
    "WHERE b.scope_id = ?1 AND b.consumed_ms IS NULL "
    "AND b.dropped_ms IS NULL ORDER BY b.id DESC LIMIT ?2";
static const char SQL_BATONS_COUNT[] =
    "SELECT count(*) FROM baton WHERE scope_id = ?1 "
    "AND consumed_ms IS NULL AND dropped_ms IS NULL";

void
pgn_watch_release(struct pgn_watch *w)
{
	size_t i;

	if (w == NULL)
		return;
	pgn_agents_release(&w->agents);
	pgn_msgs_release(&w->queued);
	pgn_deliveries_release(&w->deliveries);
	for (i = 0; i < w->nbatons; i++) {
		free(w->batons[i].senders);
		free(w->batons[i].target);
		free(w->batons[i].body);
	}
	free(w->batons);
	free(w->leases);
	memset(w, 0, sizeof(*w));
}

struct watch_ctx {
	struct pgn_watch *w;
	size_t rows;
};

static pgn_status
queued_tx(pgn_db *db, int64_t sid, struct watch_ctx *c)
{
	struct pgn_msgs *q = &c->w->queued;
	struct pgn_msg *m;
	pgn_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_select_i64(db, SQL_QUEUED_COUNT, &c->w->queued_total,
	    "counting queued messages", PGN_I(sid));
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_QUEUED_NEWEST, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I((int64_t)c->rows));
	while (pgn_next_row(db, st, &rc, "listing queued messages")) {
		if (!pgn_vec_grow((void **)&q->v, &q->cap, q->n,
		        sizeof(*q->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		m = &q->v[q->n++];
		memset(m, 0, sizeof(*m));
		m->id = pgn_col_i64(st, 0);
		m->sender = pgn_col_text(st, 1);
		m->recipient = pgn_col_text(st, 2);
		m->created_ms = pgn_col_i64(st, 3);
		m->reply_to = pgn_col_i64(st, 4);
		m->body = pgn_col_text(st, 5);
		m->priority = (int)pgn_col_i64(st, 6);
		m->group = pgn_col_text(st, 7); /* "" for NULL: none */
		m->woken_ms = pgn_col_i64(st, 8);
		if (m->woken_ms != 0) {
			char via[PGN_MAX_NAME + 1];

			pgn_col_copy(via, sizeof(via), st, 9);
			m->woken_via = pgn_doorbell_via(via);
		}
		if (m->sender == NULL || m->recipient == NULL ||
		    m->body == NULL || m->group == NULL) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		m->body_len = strlen(m->body);
		if (m->group[0] == '\0') {
			free(m->group);
			m->group = NULL;
		}
	}
	pgn_finish(db, st);
	return rc;
}

static pgn_status
batons_tx(pgn_db *db, int64_t sid, struct watch_ctx *c)
{
	struct pgn_watch *w = c->w;
	struct pgn_watch_baton *b;
	pgn_stmt *st = NULL;
	size_t cap = 0;
	pgn_status rc;

	rc = pgn_select_i64(db, SQL_BATONS_COUNT, &w->batons_total,
	    "counting batons", PGN_I(sid));
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_BATONS_OPEN, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I((int64_t)c->rows));
	while (pgn_next_row(db, st, &rc, "listing batons")) {
		if (!pgn_vec_grow((void **)&w->batons, &cap, w->nbatons,
		        sizeof(*w->batons))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		b = &w->batons[w->nbatons++];
		memset(b, 0, sizeof(*b));
		b->id = pgn_col_i64(st, 0);
		b->senders = pgn_col_text(st, 1);
		b->target = pgn_col_text(st, 2);
		b->updated_ms = pgn_col_i64(st, 3);
		b->expires_ms = pgn_col_i64(st, 4);
		b->notes = pgn_col_i64(st, 5);
		b->body = pgn_col_text(st, 6);
		if (b->senders == NULL || b->target == NULL || b->body == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	return rc;
}

static pgn_status
watch_tx(pgn_db *db, void *arg)
{
	struct watch_ctx *c = arg;
	int64_t sid;
	pgn_status rc;

	pgn_msgs_release(&c->w->queued);
	c->w->queued_total = 0;
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* a scope nobody used yet: nothing to show */
	if (rc == PGN_OK)
		rc = queued_tx(db, sid, c);
	if (rc == PGN_OK)
		rc = batons_tx(db, sid, c);
	return rc;
}

pgn_status
pgn_watch_read(pgn_db *db, size_t rows, struct pgn_watch *out)
{
	struct pgn_audit_filter f;
	struct watch_ctx c;
	pgn_status rc;
	int64_t now;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (rows < 1 || rows > PGN_WATCH_MAX_ROWS)
		return pgn_fail(db, PGN_EINVAL,
		    "a watch shows 1 to %d rows of each kind, not %zu",
		    PGN_WATCH_MAX_ROWS, rows);
	c.w = out;
	c.rows = rows;
	rc = pgn_agents_list(db, &out->agents);
	if (rc == PGN_OK)
		rc = pgn_read(db, watch_tx, &c);
	if (rc == PGN_OK) {
		memset(&f, 0, sizeof(f));
		f.limit = rows;
		rc = pgn_audit_list(db, &f, &out->deliveries);
	}
	if (rc == PGN_OK) {
		struct pgn_leases l;

		rc = pgn_lease_list(db, NULL, 0, &l);
		out->leases = l.v;
		out->nleases = l.n;
	}
	if (rc != PGN_OK) {
		pgn_watch_release(out);
		return rc;
	}
	now = pgn_now_ms();
	out->read_ms = now;
	for (i = 0; i < out->agents.n && i < PGN_WATCH_MAX_AGENTS; i++)
		out->state[i] = pgn_agent_state(&out->agents.v[i], now);
	return PGN_OK;
}

pgn_agent_state_t
pgn_agent_state(const struct pgn_agent *a, int64_t now)
{
	if (a->last_seen_ms == 0)
		return PGN_AGENT_NEW;
	if (now - a->last_seen_ms <= PGN_ACTIVE_MS)
		return a->queued > 0 ? PGN_AGENT_BEHIND : PGN_AGENT_ACTIVE;
	return a->queued > 0 ? PGN_AGENT_AWAY_MAIL : PGN_AGENT_IDLE;
}

const char *
pgn_agent_state_name(pgn_agent_state_t s)
{
	switch (s) {
	case PGN_AGENT_NEW:
		return "new";
	case PGN_AGENT_ACTIVE:
		return "active";
	case PGN_AGENT_BEHIND:
		return "mail";
	case PGN_AGENT_AWAY_MAIL:
		return "idle+mail";
	default:
		return "idle";
	}
}

/* ---- the change notifier ---------------------------------------- */

struct pgn_notify {
	pgn_db *db;
	struct pgn_waker *w;
};

pgn_status
pgn_notify_open(pgn_db *db, struct pgn_notify **out)
{
	struct pgn_notify *n;

	*out = NULL;
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	n->db = db;
	n->w = db->be->wait_open != NULL ? db->be->wait_open(db, NULL) : NULL;
	*out = n;
	return PGN_OK;
}

int
pgn_notify_fd(const struct pgn_notify *n)
{
	if (n == NULL || n->w == NULL || n->db->be->wait_fd == NULL)
		return -1;
	return n->db->be->wait_fd(n->w);
}

void
pgn_notify_drain(struct pgn_notify *n)
{
	if (n != NULL && n->w != NULL)
		(void)n->db->be->wait_sleep(n->db, n->w, 0);
}

void
pgn_notify_close(struct pgn_notify *n)
{
	if (n == NULL)
		return;
	if (n->w != NULL)
		n->db->be->wait_close(n->db, n->w);
	free(n);
}
