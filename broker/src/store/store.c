/*
 * The connection, whatever its backend (docs/decisions/0110): choosing
 * the backend module from the database string (a file path, or a
 * PostgreSQL URI or conninfo) and the calls that simply go to it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "pgn_int.h"
#include "store_int.h"

/*
 * A PostgreSQL URI (postgres://, postgresql://) or a conninfo: it
 * starts with a libpq keyword and '=' ("host=db1 dbname=pigeon",
 * "service=team"). Anything else is a file; a file whose name looks
 * like a conninfo is written with a directory ("./host=x").
 */
int
pgn_db_is_postgres(const char *path)
{
	const char *p = path;

	if (strncmp(path, "postgres://", 11) == 0 ||
	    strncmp(path, "postgresql://", 13) == 0)
		return 1;
	/* as libpq reads key=value: blanks first, any case (a mistyped
	 * keyword is still PostgreSQL's, never shown as a file's path) */
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	path = p;
	while (
	    (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')
		p++;
	if (p == path)
		return 0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	return *p == '=';
}

pgn_status
pgn_db_open(const char *path, unsigned flags, long deadline_ms, pgn_db **out)
{
	pgn_db *db;

	*out = NULL;
	db = calloc(1, sizeof(*db));
	if (db == NULL)
		return PGN_ENOMEM;
	*out = db;
	db->flags = flags;
	db->deadline_ms = deadline_ms > 0 ? deadline_ms : PGN_BUSY_DEADLINE_MS;
	db->path = pgn_strdup(path);
	db->scope = pgn_strdup("");
	if (db->path == NULL || db->scope == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	if (sodium_init() < 0)
		return pgn_fail(db, PGN_EIO, "libsodium failed to initialise");
	if (pgn_db_is_postgres(path))
		return pgn_pg_open(db, path, flags);
	return pgn_sqlite_open(db, path, flags);
}

void
pgn_db_close(pgn_db *db)
{
	if (db == NULL)
		return;
	if (db->be != NULL)
		db->be->close(db);
	free(db->path);
	free(db->scope);
	free(db->root);
	free(db);
}

const char *
pgn_db_backend(const pgn_db *db)
{
	return db != NULL && db->be != NULL ? db->be->name : "none";
}

const char *
pgn_db_scope(const pgn_db *db)
{
	return db->scope != NULL ? db->scope : "";
}

const char *
pgn_db_shown(const pgn_db *db)
{
	return db->path != NULL ? db->path : "";
}

int
pgn_db_outcome_unknown(const pgn_db *db)
{
	return db != NULL && db->unknown;
}

pgn_status
pgn_db_set_scope(pgn_db *db, const char *root)
{
	struct pgn_err warn;
	char *s = NULL;

	if (strlen(root) >= PGN_MAX_PATH)
		return pgn_fail(db, PGN_ETOOBIG, "scope path over %d bytes",
		    PGN_MAX_PATH);
	/*
	 * A store several machines share keys a repository by its origin
	 * remote, so that every clone is one scope (decision 0117); why a
	 * remote could not be used is doctor's to say.
	 */
	if (strcmp(pgn_db_backend(db), "postgresql") == 0) {
		if (pgn_scope_key(root, &s, &warn) != PGN_OK)
			s = NULL;
	} else {
		s = pgn_strdup(root);
	}
	if (s == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	free(db->scope);
	db->scope = s;
	db->scope_id = 0;
	/* The root itself, whose project config a send reads (0176). */
	free(db->root);
	db->root = pgn_strdup(root);
	if (db->root == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	return PGN_OK;
}

pgn_status
pgn_db_check_file(pgn_db *db)
{
	return db->be->check_file(db);
}

pgn_status
pgn_db_user_version(pgn_db *db, int *version)
{
	return db->be->user_version(db, version);
}
