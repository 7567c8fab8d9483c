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

static const char SQL_INTEGRITY[] = "PRAGMA integrity_check(1)";
static const char SQL_PAGE_SIZE[] = "PRAGMA page_size";
static const char SQL_PAGE_COUNT[] = "PRAGMA page_count";
static const char SQL_FREELIST_COUNT[] = "PRAGMA freelist_count";

void
pgn_health_release(struct pgn_health *h)
{
	if (h == NULL)
		return;
	free(h->integrity);
	memset(h, 0, sizeof(*h));
}

static pgn_status
health_tx(pgn_db *db, void *arg)
{
	struct pgn_health *h = arg;
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	pgn_health_release(h);
	rc = pgn_db_user_version(db, &h->schema_version);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_INTEGRITY, &st);
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "checking integrity");
	if (rc == PGN_OK) {
		h->integrity = pgn_col_text(st, 0);
		if (h->integrity == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	st = NULL;
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_PAGE_SIZE, &h->page_size,
		    "reading the database size", PGN_NONE);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_PAGE_COUNT, &h->pages,
		    "reading the database size", PGN_NONE);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_FREELIST_COUNT, &h->free_pages,
		    "reading the database size", PGN_NONE);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_HEALTH, &st);
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "counting rows");
	if (rc == PGN_OK) {
		h->scopes = sqlite3_column_int64(st, 0);
		h->agents = sqlite3_column_int64(st, 1);
		h->sessions = sqlite3_column_int64(st, 2);
		h->queued = sqlite3_column_int64(st, 3);
		h->deliveries = sqlite3_column_int64(st, 4);
		h->journal = sqlite3_column_int64(st, 5);
	}
	pgn_finish(db, st);
	/* Both statements always yield one row; none is SQLite misbehaving. */
	if (rc == PGN_ENOTFOUND)
		rc = pgn_fail(db, PGN_EDB,
		    "checking the database: a query that always yields a row yielded none");
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
