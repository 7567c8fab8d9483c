/*
 * The PostgreSQL backend (store_int.h, docs/decisions/0110). This build
 * has none yet: a PostgreSQL database string gets a clear error.
 */
#include "pgn_int.h"
#include "store_int.h"

int
pgn_pg_available(void)
{
	return 0;
}

int
pgn_pg_schema_version(void)
{
	return 0;
}

pgn_status
pgn_pg_open(pgn_db *db, const char *conninfo, unsigned flags)
{
	(void)conninfo;
	(void)flags;
	return pgn_fail(db, PGN_EINVAL,
	    "this pigeon was built without PostgreSQL: give an SQLite file");
}
