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
    "ON m.id = j.message_id AND j.kind IN ('sent', 'delivered') "
    "WHERE j.agent_id = ?1 AND j.id > ?2 ORDER BY j.id LIMIT ?3";

pgn_status
pgn_journal_add(pgn_db *db, int64_t agent, const char *kind, int64_t msg,
    const char *peer, const char *detail, int64_t now)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, SQL_JOURNAL_ADD, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 1, agent);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 2, now);
	if (rc == PGN_OK)
		rc = pgn_bind_text(db, st, 3, kind);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 4, msg);
	if (rc == PGN_OK)
		rc = pgn_bind_text(db, st, 5, peer != NULL ? peer : "");
	if (rc == PGN_OK)
		rc = pgn_bind_text(db, st, 6, detail != NULL ? detail : "");
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "writing the journal");
	pgn_finish(db, st);
	return rc;
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
	int64_t after;
	size_t limit;
	struct pgn_entries *out;
};

static pgn_status
journal_tx(pgn_db *db, void *arg)
{
	struct journal_ctx *c = arg;
	sqlite3_stmt *st = NULL;
	struct pgn_entry *x;
	int64_t aid;
	pgn_status rc;
	int r = SQLITE_DONE;

	pgn_entries_release(c->out);
	rc = pgn_need_agent(db, c->agent, 1, &aid);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, SQL_JOURNAL_LIST, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 1, aid);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 2, c->after);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 3, (int64_t)c->limit);
	while (rc == PGN_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (!pgn_vec_grow((void **)&c->out->v, &c->out->cap, c->out->n,
		        sizeof(*c->out->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		x = &c->out->v[c->out->n++];
		x->id = sqlite3_column_int64(st, 0);
		x->at_ms = sqlite3_column_int64(st, 1);
		x->kind = pgn_col_text(st, 2);
		x->message_id = sqlite3_column_int64(st, 3);
		x->peer = pgn_col_text(st, 4);
		x->detail = pgn_col_text(st, 5);
		x->body = pgn_col_text(st, 6);
		if (!x->kind || !x->peer || !x->detail || !x->body)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	if (rc == PGN_OK && r != SQLITE_DONE)
		rc = pgn_fail_sql(db, r, "reading the journal");
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_journal_list(pgn_db *db, const char *agent, int64_t after, size_t limit,
    struct pgn_entries *out)
{
	struct journal_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.after = after;
	c.limit = limit == 0 || limit > PGN_MAX_LIST ? PGN_MAX_LIST : limit;
	c.out = out;
	rc = pgn_check_name(db, "agent", agent, c.agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_read(db, journal_tx, &c);
	if (rc != PGN_OK)
		pgn_entries_release(out);
	return rc;
}
