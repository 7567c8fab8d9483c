/*
 * The SQLite engine's own bounds, and the one way a test reaches its
 * connection (decision 0149). Included by sqlite.c and the tests only
 * (scripts/layers): the rest of the store sees the engine through
 * struct pgn_backend.
 */
#ifndef PGN_SQLITE_H
#define PGN_SQLITE_H

#include "store_int.h"

#define PGN_STMT_CACHE 32 /* prepared statements kept per connection */
/* journal_size_limit: the WAL is cut to this after a reset, to 0 at close. */
#define PGN_WAL_LIMIT 4194304
/*
 * When the WAL is checkpointed (docs/decisions/0021-wal-lifecycle.md).
 * Each process opening the database first re-reads the whole WAL (about
 * 3 us per 4 KiB frame here), so it is kept small, but not empty: a
 * write into an empty WAL syncs its header and directory. A writer that
 * is not a hook checkpoints before its first write past the first bound;
 * any connection closing last checkpoints and empties a WAL past the
 * second, for when only hooks write.
 */
#define PGN_WAL_CKPT_FIRST (128 * 1024)
#define PGN_WAL_CLOSE_CKPT (512 * 1024)

struct sqlite3;

/*
 * The SQLite connection of 'db', for a test to inject a fault into or
 * look at; NULL when 'db' is not SQLite's.
 */
struct sqlite3 *pgn_sqlite_conn(pgn_db *db);

#endif
