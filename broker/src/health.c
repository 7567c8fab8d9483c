/*
 * What pigeon doctor reports about the database: schema version,
 * integrity, size in pages, and the row count of each table.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

static const char SQL_HEALTH[] =
    "SELECT (SELECT count(*) FROM scope), "
    "(SELECT count(*) FROM agent WHERE removed_ms IS NULL), "
    "(SELECT count(*) FROM session), "
    "(SELECT count(*) FROM message WHERE delivered_ms IS NULL), "
    "(SELECT count(*) FROM delivery), (SELECT count(*) FROM journal)";

void
pgn_health_release(struct pgn_health *h)
{
	if (h == NULL)
		return;
	free(h->integrity);
	memset(h, 0, sizeof(*h));
}

static pgn_status
pragma_i64(pgn_db *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = pgn_query_i64(db, st, out, "reading the database size");
	pgn_finish(db, st);
	return rc;
}

static pgn_status
health_tx(pgn_db *db, void *arg)
{
	struct pgn_health *h = arg;
	sqlite3_stmt *st = NULL;
	pgn_status rc;
	int r;

	pgn_health_release(h);
	rc = pgn_db_user_version(db, &h->schema_version);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, "PRAGMA integrity_check(1)", &st);
	if (rc == PGN_OK) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			h->integrity = pgn_col_text(st, 0);
		else
			rc = pgn_fail_sql(db, r, "checking integrity");
		if (rc == PGN_OK && h->integrity == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	st = NULL;
	if (rc == PGN_OK)
		rc = pragma_i64(db, "PRAGMA page_size", &h->page_size);
	if (rc == PGN_OK)
		rc = pragma_i64(db, "PRAGMA page_count", &h->pages);
	if (rc == PGN_OK)
		rc = pragma_i64(db, "PRAGMA freelist_count", &h->free_pages);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_HEALTH, &st);
	if (rc == PGN_OK) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			h->scopes = sqlite3_column_int64(st, 0);
			h->agents = sqlite3_column_int64(st, 1);
			h->sessions = sqlite3_column_int64(st, 2);
			h->queued = sqlite3_column_int64(st, 3);
			h->deliveries = sqlite3_column_int64(st, 4);
			h->journal = sqlite3_column_int64(st, 5);
		} else {
			rc = pgn_fail_sql(db, r, "counting rows");
		}
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_db_health(pgn_db *db, struct pgn_health *h)
{
	pgn_status rc;

	memset(h, 0, sizeof(*h));
	rc = pgn_read(db, health_tx, h);
	if (rc != PGN_OK)
		pgn_health_release(h);
	return rc;
}
