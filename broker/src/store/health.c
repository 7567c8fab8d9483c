/*
 * What pigeon doctor reports about the database: the engine's part
 * (schema version, integrity, size: the backend's health operation) and
 * the row count of each table.
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
	free(h->server);
	memset(h, 0, sizeof(*h));
}

static pgn_status
health_tx(pgn_db *db, void *arg)
{
	struct pgn_health *h = arg;
	pgn_stmt *st = NULL;
	pgn_status rc;

	pgn_health_release(h);
	rc = db->be->health(db, h);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_HEALTH, &st);
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "counting rows");
	if (rc == PGN_OK) {
		h->scopes = pgn_col_i64(st, 0);
		h->agents = pgn_col_i64(st, 1);
		h->sessions = pgn_col_i64(st, 2);
		h->queued = pgn_col_i64(st, 3);
		h->deliveries = pgn_col_i64(st, 4);
		h->journal = pgn_col_i64(st, 5);
	}
	pgn_finish(db, st);
	/* Both statements always yield one row; none is the engine misbehaving.
	 */
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
