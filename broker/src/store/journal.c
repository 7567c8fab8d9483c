/*
 * Each agent's journal: what it sent, was delivered, and when it was
 * created, bound, renamed or retired; read back with the message bodies.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

static const char SQL_JOURNAL_ADD[] =
    "INSERT INTO journal(agent_id, at_ms, kind, message_id, peer, detail) "
    "VALUES (?1, ?2, ?3, nullif(?4, 0), ?5, ?6)";
static const char SQL_JOURNAL_LIST[] =
    "SELECT j.id, j.at_ms, j.kind, coalesce(j.message_id, 0), j.peer, "
    "j.detail, coalesce(m.body, '') FROM journal j LEFT JOIN message m "
    "ON m.id = j.message_id AND j.kind IN ('sent', 'delivered', 'handoff') "
    "WHERE j.agent_id = ?1 AND j.id > ?2 ORDER BY j.id LIMIT ?3";
/* Newest first through the index journal_agent(agent_id, id). */
static const char SQL_JOURNAL_TAIL[] =
    "SELECT j.id, j.at_ms, j.kind, coalesce(j.message_id, 0), j.peer, "
    "j.detail, coalesce(m.body, '') FROM journal j LEFT JOIN message m "
    "ON m.id = j.message_id AND j.kind IN ('sent', 'delivered', 'handoff') "
    "WHERE j.agent_id = ?1 ORDER BY j.id DESC LIMIT ?2";
/* Without --since: counted from the index alone, no table rows read. */
static const char SQL_JOURNAL_EARLIER_ALL[] =
    "SELECT count(*) FROM (SELECT 1 FROM journal WHERE agent_id = ?1 "
    "AND id < ?2 LIMIT ?3) AS earlier";
static const char SQL_JOURNAL_EARLIER[] =
    "SELECT at_ms FROM journal WHERE agent_id = ?1 AND id < ?2 "
    "ORDER BY id DESC LIMIT ?3";

pgn_status
pgn_journal_add(pgn_db *db, int64_t agent, const char *kind, int64_t msg,
    const char *peer, const char *detail, int64_t now)
{
	return pgn_exec(db, SQL_JOURNAL_ADD, "writing the journal",
	    PGN_I(agent), PGN_I(now), PGN_T(kind), PGN_I(msg),
	    PGN_T(peer != NULL ? peer : ""),
	    PGN_T(detail != NULL ? detail : ""));
}

void
pgn_entries_release(struct pgn_entries *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->n; i++) {
		free(e->v[i].kind);
		free(e->v[i].peer);
		free(e->v[i].detail);
		free(e->v[i].body);
	}
	free(e->v);
	memset(e, 0, sizeof(*e));
}

struct journal_ctx {
	char agent[PGN_MAX_NAME + 1];
	int64_t after;    /* list: entries after this id */
	int64_t since_ms; /* tail: entries at or after this time */
	int tail;         /* newest first, then reversed */
	size_t limit;
	struct pgn_entries *out;
};

/* Read one row of SQL_JOURNAL_LIST or _TAIL into a new entry. */
static pgn_status
take_row(pgn_db *db, pgn_stmt *st, struct pgn_entries *out)
{
	struct pgn_entry *x;

	if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n, sizeof(*out->v)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	x = &out->v[out->n++];
	x->id = pgn_col_i64(st, 0);
	x->at_ms = pgn_col_i64(st, 1);
	x->kind = pgn_col_text(st, 2);
	x->message_id = pgn_col_i64(st, 3);
	x->peer = pgn_col_text(st, 4);
	x->detail = pgn_col_text(st, 5);
	x->body = pgn_col_text(st, 6);
	if (!x->kind || !x->peer || !x->detail || !x->body)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	return PGN_OK;
}

/* Count the entries before 'id' back to 'since_ms', up to the cap. */
static pgn_status
count_earlier(pgn_db *db, int64_t aid, int64_t id, int64_t since_ms, int64_t *n)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	*n = 0;
	if (since_ms == 0) {
		rc = pgn_select_i64(db, SQL_JOURNAL_EARLIER_ALL, n,
		    "reading the journal", PGN_I(aid), PGN_I(id),
		    PGN_I(PGN_MAX_EARLIER));
		return rc == PGN_ENOTFOUND ? PGN_OK : rc;
	}
	rc = pgn_prepare(db, SQL_JOURNAL_EARLIER, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(aid), PGN_I(id),
		    PGN_I(PGN_MAX_EARLIER));
	while (pgn_next_row(db, st, &rc, "reading the journal") &&
	    pgn_col_i64(st, 0) >= since_ms)
		(*n)++;
	pgn_finish(db, st);
	return rc;
}

static pgn_status
journal_tx(pgn_db *db, void *arg)
{
	struct journal_ctx *c = arg;
	struct pgn_entries *out = c->out;
	struct pgn_entry tmp;
	pgn_stmt *st = NULL;
	int64_t aid;
	pgn_status rc;
	size_t i;

	pgn_entries_release(out);
	rc = pgn_need_agent(db, c->agent, 1, &aid);
	if (rc != PGN_OK)
		return rc;
	rc =
	    pgn_prepare(db, c->tail ? SQL_JOURNAL_TAIL : SQL_JOURNAL_LIST, &st);
	if (rc == PGN_OK && c->tail)
		rc = pgn_bind(db, st, PGN_I(aid), PGN_I((int64_t)c->limit + 1));
	else if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(aid), PGN_I(c->after),
		    PGN_I((int64_t)c->limit));
	while (pgn_next_row(db, st, &rc, "reading the journal")) {
		if (out->newest == 0)
			out->newest = pgn_col_i64(st, 0);
		/* the walk back ends at the first entry before 'since' */
		if (c->tail && pgn_col_i64(st, 1) < c->since_ms)
			break;
		/* one more than asked for: the listing is cut */
		if (c->tail && out->n == c->limit) {
			rc = count_earlier(db, aid, out->v[out->n - 1].id,
			    c->since_ms, &out->earlier);
			break;
		}
		rc = take_row(db, st, out);
	}
	pgn_finish(db, st);
	/* newest last */
	for (i = 0; rc == PGN_OK && c->tail && i < out->n / 2; i++) {
		tmp = out->v[i];
		out->v[i] = out->v[out->n - 1 - i];
		out->v[out->n - 1 - i] = tmp;
	}
	return rc;
}

/* Run a listing 'c' of agent 'agent'; on failure nothing is kept. */
static pgn_status
journal_read(pgn_db *db, const char *agent, struct journal_ctx *c)
{
	pgn_status rc;

	rc = pgn_check_name(db, "agent", agent, c->agent);
	if (rc == PGN_OK)
		rc = pgn_read(db, journal_tx, c);
	if (rc != PGN_OK)
		pgn_entries_release(c->out);
	return rc;
}

pgn_status
pgn_journal_list(pgn_db *db, const char *agent, int64_t after, size_t limit,
    struct pgn_entries *out)
{
	struct journal_ctx c;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.after = after;
	c.limit = limit == 0 || limit > PGN_MAX_LIST ? PGN_MAX_LIST : limit;
	c.out = out;
	return journal_read(db, agent, &c);
}

pgn_status
pgn_journal_tail(pgn_db *db, const char *agent, int64_t since_ms, size_t limit,
    struct pgn_entries *out)
{
	struct journal_ctx c;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.tail = 1;
	c.since_ms = since_ms;
	c.limit = limit == 0     ? PGN_DEFAULT_LIST :
	    limit > PGN_MAX_LIST ? PGN_MAX_LIST :
	                           limit;
	c.out = out;
	return journal_read(db, agent, &c);
}
