/*
 * The connection, whatever its backend (docs/decisions/0110): clocks,
 * error recording, choosing the backend module from the database string
 * (a file path, or a PostgreSQL URI or conninfo) and the calls that
 * simply go to it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "pgn_int.h"
#include "store_int.h"

int64_t
pgn_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
pgn_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Record message 'fmt' and remedy 'hint' (about 'arg') on 'db'. */
static pgn_status vfail(pgn_db *db, pgn_status st, pgn_hint hint,
    const char *arg, const char *fmt, va_list ap) PGN_PRINTF(5, 0);

static pgn_status
vfail(pgn_db *db, pgn_status st, pgn_hint hint, const char *arg,
    const char *fmt, va_list ap)
{
	if (vsnprintf(db->err, sizeof(db->err), fmt, ap) < 0)
		db->err[0] = '\0';
	db->hint = hint;
	db->hint_arg[0] = '\0';
	if (arg != NULL && strlen(arg) < sizeof(db->hint_arg))
		memcpy(db->hint_arg, arg, strlen(arg) + 1);
	return st;
}

pgn_status
pgn_fail(pgn_db *db, pgn_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	st = vfail(db, st, PGN_HINT_NONE, NULL, fmt, ap);
	va_end(ap);
	return st;
}

pgn_status
pgn_fail_hint(pgn_db *db, pgn_status st, pgn_hint hint, const char *arg,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	st = vfail(db, st, hint, arg, fmt, ap);
	va_end(ap);
	return st;
}

pgn_hint
pgn_errhint(const pgn_db *db, const char **arg)
{
	if (arg != NULL)
		*arg = db != NULL && db->hint_arg[0] ? db->hint_arg : NULL;
	return db != NULL ? db->hint : PGN_HINT_NONE;
}

const char *
pgn_errmsg(const pgn_db *db)
{
	if (db == NULL)
		return "out of memory";
	return db->err;
}

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
	while (*p >= 'a' && *p <= 'z')
		p++;
	while (*p == ' ')
		p++;
	return p != path && *p == '=';
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
	free(db);
}

const char *
pgn_db_backend(const pgn_db *db)
{
	return db != NULL && db->be != NULL ? db->be->name : "none";
}

pgn_status
pgn_db_set_scope(pgn_db *db, const char *root)
{
	char *s = NULL, *why = NULL;

	if (strlen(root) >= PGN_MAX_PATH)
		return pgn_fail(db, PGN_ETOOBIG, "scope path over %d bytes",
		    PGN_MAX_PATH);
	/*
	 * A store several machines share keys a repository by its origin
	 * remote, so that every clone is one scope (decision 0117); why a
	 * remote could not be used is doctor's to say.
	 */
	if (strcmp(pgn_db_backend(db), "postgresql") == 0) {
		if (pgn_scope_key(root, &s, &why) != PGN_OK)
			s = NULL;
		free(why);
	} else {
		s = pgn_strdup(root);
	}
	if (s == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	free(db->scope);
	db->scope = s;
	db->scope_id = 0;
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
