/*
 * Statement helpers (typed binding, row stepping that tells the end of
 * the rows from an error, one-value queries) and the row lookups every
 * part of the mailbox shares: the current scope, an agent by name, a
 * recipient's queue length. SQLite only, like the rest of the store
 * (send.c claim.c agents.c journal.c audit.c health.c).
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

static const char SQL_SCOPE_GET[] = "SELECT id FROM scope WHERE root = ?1";
static const char SQL_SCOPE_ADD[] =
    "INSERT INTO scope(root) VALUES (?1) ON CONFLICT(root) DO NOTHING";
static const char SQL_AGENT_GET[] =
    "SELECT id FROM agent WHERE scope_id = ?1 AND name = ?2 "
    "AND removed_ms IS NULL";
/* The journal of a retired name stays readable: active first. */
static const char SQL_AGENT_GET_ANY[] =
    "SELECT id FROM agent WHERE scope_id = ?1 AND name = ?2 "
    "ORDER BY removed_ms IS NOT NULL, id DESC LIMIT 1";
static const char SQL_QUEUED_COUNT[] =
    "SELECT count(*) FROM message WHERE recipient_id = ?1 "
    "AND delivered_ms IS NULL";

/* Bind one value to parameter 'i'. */
static int
bind_one(sqlite3_stmt *st, int i, const struct pgn_arg *a)
{
	switch (a->kind) {
	case PGN_ARG_I64:
		return sqlite3_bind_int64(st, i, a->i);
	case PGN_ARG_TEXT:
		if (a->t == NULL)
			return sqlite3_bind_null(st, i);
		return sqlite3_bind_text(st, i, a->t, -1, SQLITE_STATIC);
	case PGN_ARG_TEXTN:
		return sqlite3_bind_text(st, i, a->t, (int)a->len,
		    SQLITE_STATIC);
	case PGN_ARG_BLOB:
		return sqlite3_bind_blob(st, i, a->b, (int)a->len,
		    SQLITE_STATIC);
	case PGN_ARG_NONE:
		break;
	}
	return SQLITE_MISUSE;
}

pgn_status
pgn_bind_args(pgn_db *db, sqlite3_stmt *st, const struct pgn_arg *a, size_t n)
{
	size_t k;
	int i = 0, rc;

	for (k = 0; k < n; k++) {
		if (a[k].kind == PGN_ARG_NONE)
			continue;
		if ((a[k].kind == PGN_ARG_TEXTN || a[k].kind == PGN_ARG_BLOB) &&
		    a[k].len > PGN_MAX_BIND_LEN)
			return pgn_fail(db, PGN_ETOOBIG,
			    "binding: a value of %zu bytes, over %d", a[k].len,
			    PGN_MAX_BIND_LEN);
		i++;
		rc = bind_one(st, i, &a[k]);
		if (rc != SQLITE_OK)
			return pgn_fail_sql(db, rc, "binding");
	}
	/* A count that does not match the SQL is a bug, not input. */
	if (i != sqlite3_bind_parameter_count(st))
		return pgn_fail(db, PGN_EDB,
		    "binding: %d values for the %d parameters of a statement",
		    i, sqlite3_bind_parameter_count(st));
	return PGN_OK;
}

pgn_status
pgn_bind_text(pgn_db *db, sqlite3_stmt *st, int i, const char *s)
{
	int rc;

	rc = s == NULL ? sqlite3_bind_null(st, i) :
	                 sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	return rc == SQLITE_OK ? PGN_OK : pgn_fail_sql(db, rc, "binding");
}

pgn_status
pgn_bind_i64(pgn_db *db, sqlite3_stmt *st, int i, int64_t v)
{
	int rc;

	rc = sqlite3_bind_int64(st, i, v);
	return rc == SQLITE_OK ? PGN_OK : pgn_fail_sql(db, rc, "binding");
}

pgn_status
pgn_step_row(pgn_db *db, sqlite3_stmt *st, const char *what)
{
	int r;

	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		return PGN_OK;
	if (r == SQLITE_DONE)
		return PGN_ENOTFOUND;
	return pgn_fail_sql(db, r, what);
}

int
pgn_next_row(pgn_db *db, sqlite3_stmt *st, pgn_status *rc, const char *what)
{
	int r;

	if (*rc != PGN_OK)
		return 0;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		return 1;
	if (r != SQLITE_DONE)
		*rc = pgn_fail_sql(db, r, what);
	return 0;
}

pgn_status
pgn_query_i64(pgn_db *db, sqlite3_stmt *st, int64_t *out, const char *what)
{
	pgn_status rc;

	*out = 0;
	rc = pgn_step_row(db, st, what);
	if (rc == PGN_OK)
		*out = sqlite3_column_int64(st, 0);
	return rc;
}

pgn_status
pgn_exec_args(pgn_db *db, const char *sql, const char *what,
    const struct pgn_arg *a, size_t n)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_args(db, st, a, n);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, what);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_select_i64_args(pgn_db *db, const char *sql, int64_t *out, const char *what,
    const struct pgn_arg *a, size_t n)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	*out = 0;
	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_args(db, st, a, n);
	if (rc == PGN_OK)
		rc = pgn_query_i64(db, st, out, what);
	pgn_finish(db, st);
	return rc;
}

/* Id of the current scope; created when 'create', else ENOTFOUND. */
pgn_status
pgn_scope_id(pgn_db *db, int create, int64_t *id)
{
	pgn_status rc;

	*id = db->scope_id;
	if (db->scope_id != 0)
		return PGN_OK;
	if (create) {
		rc = pgn_exec(db, SQL_SCOPE_ADD, "adding a scope",
		    PGN_T(db->scope));
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_select_i64(db, SQL_SCOPE_GET, id, "reading the scope",
	    PGN_T(db->scope));
	/* Cache only what a committed transaction may have made. */
	if (rc == PGN_OK && !create)
		db->scope_id = *id;
	return rc;
}

pgn_status
pgn_agent_id(pgn_db *db, int64_t sid, const char *name, int any, int64_t *id)
{
	return pgn_select_i64(db, any ? SQL_AGENT_GET_ANY : SQL_AGENT_GET, id,
	    "reading an agent", PGN_I(sid), PGN_T(name));
}

pgn_status
pgn_exec_id(pgn_db *db, const char *sql, int64_t id, int64_t v,
    const char *what)
{
	sqlite3_stmt *st = NULL;
	struct pgn_arg a[2] = {PGN_I(id), PGN_I(v)};
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_args(db, st, a,
		    sqlite3_bind_parameter_count(st) >= 2 ? 2 : 1);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, what);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_queued_count(pgn_db *db, int64_t agent, int64_t *n)
{
	return pgn_select_i64(db, SQL_QUEUED_COUNT, n,
	    "counting queued messages", PGN_I(agent));
}

pgn_status
pgn_check_name(pgn_db *db, const char *field, const char *in, char *out)
{
	const char *rule;

	if (in == NULL)
		return pgn_fail(db, PGN_EINVAL, "%s: a name is required",
		    field);
	if (pgn_name_check(in, out, &rule) != PGN_OK)
		return pgn_fail(db, PGN_EINVAL, "%s '%.80s': %s", field, in,
		    rule);
	return PGN_OK;
}
