/* The store's side of full-text search (search.c, decision 0170). */
#ifndef PGN_SEARCH_INT_H
#define PGN_SEARCH_INT_H

#include <stdint.h>

#include "store_int.h"

/*
 * Index message 'id' for search, in the transaction that inserted it:
 * every insert of a message row calls it (SQLite's message_fts has no
 * trigger); nothing to do on PostgreSQL.
 */
PGN_NODISCARD pgn_status pgn_search_index(pgn_db *db, int64_t id);

#endif
