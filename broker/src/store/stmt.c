/*
 * The statement layer over the connection's backend (store_int.h):
 * prepare, typed binding, row stepping that tells the end of the rows
 * from an error, one-value queries, transactions; and the row lookups
 * every part of the mailbox shares: the current scope, an agent by name,
 * a recipient's queue length. No backend's API is called here.
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

pgn_status
pgn_prepare(pgn_db *db, const char *sql, pgn_stmt **st)
{
	return db->be->prepare(db, sql, st);
}

void
pgn_finish(pgn_db *db, pgn_stmt *st)
{
	if (st != NULL)
		db->be->finish(db, st);
}

pgn_status
pgn_tx(pgn_db *db, pgn_tx_fn *fn, void *arg)
{
	db->unknown = 0;
	return db->be->tx(db, fn, arg);
}

pgn_status
pgn_read(pgn_db *db, pgn_tx_fn *fn, void *arg)
{
	db->unknown = 0;
	return db->be->read(db, fn, arg);
}

pgn_status
pgn_bind_args(pgn_db *db, pgn_stmt *st, const struct pgn_arg *a, size_t n)
{
	size_t k;
	int i = 0;
	pgn_status rc;

	for (k = 0; k < n; k++) {
		if (a[k].kind == PGN_ARG_NONE)
			continue;
		if ((a[k].kind == PGN_ARG_TEXTN || a[k].kind == PGN_ARG_BLOB) &&
		    a[k].len > PGN_MAX_BIND_LEN)
			return pgn_fail(db, PGN_ETOOBIG,
			    "binding: a value of %zu bytes, over %d", a[k].len,
			    PGN_MAX_BIND_LEN);
		i++;
		rc = db->be->bind(db, st, i, &a[k]);
		if (rc != PGN_OK)
			return rc;
	}
	/* A count that does not match the SQL is a bug, not input. */
	if (i != db->be->nparams(st))
		return pgn_fail(db, PGN_EDB,
		    "binding: %d values for the %d parameters of a statement",
		    i, db->be->nparams(st));
	return PGN_OK;
}

pgn_status
pgn_step_row(pgn_db *db, pgn_stmt *st, const char *what)
{
	return db->be->step(db, st, what);
}

pgn_status
pgn_step_done(pgn_db *db, pgn_stmt *st, const char *what)
{
	pgn_status rc;

	rc = db->be->step(db, st, what);
	return rc == PGN_ENOTFOUND ? PGN_OK : rc;
}

pgn_status
pgn_step_write(pgn_db *db, pgn_stmt *st, const char *what)
{
	return db->be->step_write(db, st, what);
}

int
pgn_next_row(pgn_db *db, pgn_stmt *st, pgn_status *rc, const char *what)
{
	pgn_status r;

	if (*rc != PGN_OK)
		return 0;
	r = db->be->step(db, st, what);
	if (r == PGN_OK)
		return 1;
	if (r != PGN_ENOTFOUND)
		*rc = r;
	return 0;
}

/* pgn_step_row, then column 0 into '*out' (0 unless PGN_OK). */
static pgn_status
query_i64(pgn_db *db, pgn_stmt *st, int64_t *out, const char *what)
{
	pgn_status rc;

	*out = 0;
	rc = pgn_step_row(db, st, what);
	if (rc == PGN_OK)
		*out = pgn_col_i64(st, 0);
	return rc;
}

void
pgn_col_copy(char *dst, size_t max, pgn_stmt *st, int col)
{
	size_t n;
	const char *t = pgn_col_str(st, col, &n);

	if (t == NULL)
		n = 0;
	if (n >= max)
		n = max -
		    1; /* stored values are checked; a bound all the same */
	if (n > 0)
		memcpy(dst, t, n);
	dst[n] = '\0';
}

char *
pgn_col_text(pgn_stmt *st, int col)
{
	const char *t;
	size_t n;

	t = pgn_col_str(st, col, &n);
	if (t == NULL)
		return pgn_strdup("");
	return pgn_strndup(t, n);
}

pgn_status
pgn_exec_args(pgn_db *db, const char *sql, const char *what,
    const struct pgn_arg *a, size_t n)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_args(db, st, a, n);
	if (rc == PGN_OK)
		rc = pgn_step_write(db, st, what);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_select_i64_args(pgn_db *db, const char *sql, int64_t *out, const char *what,
    const struct pgn_arg *a, size_t n)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	*out = 0;
	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_args(db, st, a, n);
	if (rc == PGN_OK)
		rc = query_i64(db, st, out, what);
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
	pgn_stmt *st = NULL;
	struct pgn_arg a[2] = {PGN_I(id), PGN_I(v)};
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_args(db, st, a, db->be->nparams(st) >= 2 ? 2 : 1);
	if (rc == PGN_OK)
		rc = pgn_step_write(db, st, what);
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
	struct pgn_err rule;

	if (in == NULL)
		return pgn_fail(db, PGN_EINVAL, "%s: a name is required",
		    field);
	if (pgn_name_check(in, out, &rule) != PGN_OK)
		return pgn_fail(db, PGN_EINVAL, "%s '%.80s': %s", field, in,
		    rule.msg);
	return PGN_OK;
}
