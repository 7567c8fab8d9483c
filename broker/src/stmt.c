/*
 * Statement helpers and the row lookups every part of the mailbox
 * shares: binding, one-value queries, the current scope, an agent by
 * name, a recipient's queue length. SQLite only, like the rest of the
 * store (send.c claim.c agents.c journal.c audit.c health.c).
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

/* Run a one-row query yielding an integer; PGN_ENOTFOUND if no row. */
pgn_status
pgn_query_i64(pgn_db *db, sqlite3_stmt *st, int64_t *out, const char *what)
{
	int rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		return PGN_OK;
	}
	if (rc == SQLITE_DONE)
		return PGN_ENOTFOUND;
	return pgn_fail_sql(db, rc, what);
}

/* Id of the current scope; created when 'create', else ENOTFOUND. */
pgn_status
pgn_scope_id(pgn_db *db, int create, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	if (db->scope_id != 0) {
		*id = db->scope_id;
		return PGN_OK;
	}
	if (create) {
		rc = pgn_prepare(db, SQL_SCOPE_ADD, &st);
		if (rc == PGN_OK)
			rc = pgn_bind_text(db, st, 1, db->scope);
		if (rc == PGN_OK)
			rc = pgn_step_done(db, st, "adding a scope");
		pgn_finish(db, st);
		st = NULL;
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_prepare(db, SQL_SCOPE_GET, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_text(db, st, 1, db->scope);
	if (rc == PGN_OK)
		rc = pgn_query_i64(db, st, id, "reading the scope");
	pgn_finish(db, st);
	/* Cache only what a committed transaction may have made. */
	if (rc == PGN_OK && !create)
		db->scope_id = *id;
	return rc;
}

pgn_status
pgn_agent_id(pgn_db *db, int64_t sid, const char *name, int any, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, any ? SQL_AGENT_GET_ANY : SQL_AGENT_GET, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 1, sid);
	if (rc == PGN_OK)
		rc = pgn_bind_text(db, st, 2, name);
	if (rc == PGN_OK)
		rc = pgn_query_i64(db, st, id, "reading an agent");
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_exec_id(pgn_db *db, const char *sql, int64_t id, int64_t v,
    const char *what)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 1, id);
	if (rc == PGN_OK && sqlite3_bind_parameter_count(st) >= 2)
		rc = pgn_bind_i64(db, st, 2, v);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, what);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_queued_count(pgn_db *db, int64_t agent, int64_t *n)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, SQL_QUEUED_COUNT, &st);
	if (rc == PGN_OK)
		rc = pgn_bind_i64(db, st, 1, agent);
	if (rc == PGN_OK)
		rc = pgn_query_i64(db, st, n, "counting queued messages");
	pgn_finish(db, st);
	return rc;
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
