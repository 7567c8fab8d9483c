/* The one error shape (decision 0146): a fact, and a remedy to word. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pgn_int.h"

void
pgn_err_clear(struct pgn_err *err)
{
	err->hint = PGN_HINT_NONE;
	err->arg[0] = '\0';
	err->msg[0] = '\0';
}

void
pgn_err_vset(struct pgn_err *err, pgn_hint hint, const char *arg,
    const char *fmt, va_list ap)
{
	if (vsnprintf(err->msg, sizeof(err->msg), fmt, ap) < 0)
		err->msg[0] = '\0';
	err->hint = hint;
	err->arg[0] = '\0';
	if (arg != NULL && strlen(arg) < sizeof(err->arg))
		memcpy(err->arg, arg, strlen(arg) + 1);
}

pgn_status
pgn_err_set(struct pgn_err *err, pgn_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pgn_err_vset(err, PGN_HINT_NONE, NULL, fmt, ap);
	va_end(ap);
	return st;
}

pgn_status
pgn_err_hint(struct pgn_err *err, pgn_status st, pgn_hint hint, const char *arg,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pgn_err_vset(err, hint, arg, fmt, ap);
	va_end(ap);
	return st;
}
