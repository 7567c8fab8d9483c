/* The error recorded on a database handle: its fact and its remedy. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

/* Record fact 'fmt' and remedy 'hint' (about 'arg') on 'db'. */
static pgn_status vfail(pgn_db *db, pgn_status st, pgn_hint hint,
    const char *arg, const char *fmt, va_list ap) PGN_PRINTF(5, 0);

static pgn_status
vfail(pgn_db *db, pgn_status st, pgn_hint hint, const char *arg,
    const char *fmt, va_list ap)
{
	pgn_err_vset(&db->err, hint, arg, fmt, ap);
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

const struct pgn_err *
pgn_db_err(const pgn_db *db)
{
	static const struct pgn_err oom = {PGN_HINT_NONE, "", "out of memory"};

	return db != NULL ? &db->err : &oom;
}

pgn_hint
pgn_errhint(const pgn_db *db, const char **arg)
{
	const struct pgn_err *e = pgn_db_err(db);

	if (arg != NULL)
		*arg = e->arg[0] ? e->arg : NULL;
	return e->hint;
}

const char *
pgn_errmsg(const pgn_db *db)
{
	return pgn_db_err(db)->msg;
}
