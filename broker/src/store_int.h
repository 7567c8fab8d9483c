/*
 * Internals shared by the mailbox store's files (stmt.c send.c claim.c
 * agents.c journal.c audit.c health.c). Every one of them speaks SQLite
 * directly: there is no backend seam yet (architecture.md).
 */
#ifndef PGN_STORE_INT_H
#define PGN_STORE_INT_H

#include "pgn_int.h"

/* How a message names the current scope. */
#define PGN_SCOPE_LABEL(db) ((db)->scope[0] != '\0' ? (db)->scope : "global")

/* ---- statements and shared lookups (stmt.c) ------------------------ */

/* Longest text or blob one parameter takes (sqlite3_bind_* take an int). */
#define PGN_MAX_BIND_LEN (1 << 30)

enum pgn_arg_kind {
	PGN_ARG_NONE, /* binds nothing: a statement without parameters */
	PGN_ARG_I64,
	PGN_ARG_TEXT,  /* NUL-terminated; NULL binds NULL */
	PGN_ARG_TEXTN, /* 'len' bytes of text */
	PGN_ARG_BLOB,  /* 'len' bytes */
};

/*
 * One value for a statement parameter, made with the macros below so the
 * compiler checks each value's type (an int64_t slot takes no pointer, a
 * text slot no integer). Values are bound SQLITE_STATIC: they must stay
 * valid until the statement is reset or stepped to its end.
 */
struct pgn_arg {
	enum pgn_arg_kind kind;
	int64_t i;
	const char *t;
	const void *b;
	size_t len;
};

#define PGN_I(v)       ((struct pgn_arg){PGN_ARG_I64, (v), NULL, NULL, 0})
#define PGN_T(s)       ((struct pgn_arg){PGN_ARG_TEXT, 0, (s), NULL, 0})
#define PGN_S(s, n)    ((struct pgn_arg){PGN_ARG_TEXTN, 0, (s), NULL, (n)})
#define PGN_B(p, n)    ((struct pgn_arg){PGN_ARG_BLOB, 0, NULL, (p), (n)})
#define PGN_NONE       ((struct pgn_arg){PGN_ARG_NONE, 0, NULL, NULL, 0})
#define PGN_ARGS_(...) ((const struct pgn_arg[]){__VA_ARGS__})
#define PGN_NARGS_(...)                                                        \
	(sizeof(PGN_ARGS_(__VA_ARGS__)) / sizeof(struct pgn_arg))

/*
 * Bind a[0..n) to ?1, ?2, ... of 'st' in order (PGN_NONE entries skipped).
 * PGN_ETOOBIG: a value over PGN_MAX_BIND_LEN; PGN_EDB: SQLite refused a
 * value, or the count does not match the statement's parameters.
 */
PGN_NODISCARD pgn_status pgn_bind_args(pgn_db *db, sqlite3_stmt *st,
    const struct pgn_arg *a, size_t n);
/* pgn_bind(db, st, PGN_I(id), PGN_T(name), ...) */
#define pgn_bind(db, st, ...)                                                  \
	pgn_bind_args((db), (st), PGN_ARGS_(__VA_ARGS__),                      \
	    PGN_NARGS_(__VA_ARGS__))

/* Prepare 'sql' (static text), bind the values, step to its end, finish. */
PGN_NODISCARD pgn_status pgn_exec_args(pgn_db *db, const char *sql,
    const char *what, const struct pgn_arg *a, size_t n);
#define pgn_exec(db, sql, what, ...)                                           \
	pgn_exec_args((db), (sql), (what), PGN_ARGS_(__VA_ARGS__),             \
	    PGN_NARGS_(__VA_ARGS__))

/*
 * Prepare 'sql', bind the values, and read column 0 of its first row into
 * '*out', which is 0 unless PGN_OK. PGN_ENOTFOUND: no row.
 */
PGN_NODISCARD pgn_status pgn_select_i64_args(pgn_db *db, const char *sql,
    int64_t *out, const char *what, const struct pgn_arg *a, size_t n);
#define pgn_select_i64(db, sql, out, what, ...)                                \
	pgn_select_i64_args((db), (sql), (out), (what),                        \
	    PGN_ARGS_(__VA_ARGS__), PGN_NARGS_(__VA_ARGS__))

/*
 * Step 'st' once: PGN_OK on a row, PGN_ENOTFOUND at the end, else the
 * error, recorded with 'what'. Never mistakes an error for the end.
 */
PGN_NODISCARD pgn_status pgn_step_row(pgn_db *db, sqlite3_stmt *st,
    const char *what);
/*
 * The row loop: while (pgn_next_row(db, st, &rc, "listing x")) { ... }.
 * True on a row while '*rc' is PGN_OK; false at the end, once '*rc' holds
 * an error (set by the body), or on a step error, which goes into '*rc'.
 */
int pgn_next_row(pgn_db *db, sqlite3_stmt *st, pgn_status *rc,
    const char *what);
/* pgn_step_row, then column 0 into '*out' (0 unless PGN_OK). */
PGN_NODISCARD pgn_status pgn_query_i64(pgn_db *db, sqlite3_stmt *st,
    int64_t *out, const char *what);

/* Older single-value binders, kept for claim.c and journal.c. */
PGN_NODISCARD pgn_status pgn_bind_text(pgn_db *db, sqlite3_stmt *st, int i,
    const char *s);
PGN_NODISCARD pgn_status pgn_bind_i64(pgn_db *db, sqlite3_stmt *st, int i,
    int64_t v);
/* Run 'sql' with ?1 = id and, if it has one, ?2 = v. */
PGN_NODISCARD pgn_status pgn_exec_id(pgn_db *db, const char *sql, int64_t id,
    int64_t v, const char *what);
/* Id of the current scope ('*id' 0 unless PGN_OK); created when
 * 'create', else ENOTFOUND. */
PGN_NODISCARD pgn_status pgn_scope_id(pgn_db *db, int create, int64_t *id);
/* Agent 'name' of scope 'sid' ('*id' 0 unless PGN_OK); 'any' also finds
 * a retired one. */
PGN_NODISCARD pgn_status pgn_agent_id(pgn_db *db, int64_t sid, const char *name,
    int any, int64_t *id);
/* Messages queued for agent row 'agent'. */
PGN_NODISCARD pgn_status pgn_queued_count(pgn_db *db, int64_t agent,
    int64_t *n);
/* Check and case-fold name 'in' into 'out'; 'field' names it in errors. */
PGN_NODISCARD pgn_status pgn_check_name(pgn_db *db, const char *field,
    const char *in, char *out);

/* ---- send and inbox (send.c) --------------------------------------- */

/* Append the current row of pgn_sql_queued to 'm'. */
PGN_NODISCARD pgn_status pgn_msgs_push(pgn_db *db, struct pgn_msgs *m,
    sqlite3_stmt *st);

/* ---- agents (agents.c) --------------------------------------------- */

/* Active agents of scope ?1 as (id, name), by name. */
extern const char pgn_sql_agent_names[];
/* Insert agent 'name' into scope 'sid' and journal "created" with 'why'. */
PGN_NODISCARD pgn_status pgn_agent_insert(pgn_db *db, int64_t sid,
    const char *name, const char *why, int64_t now, int64_t *id);
/* Explain an unknown name: the scope's known names and the closest. */
PGN_NODISCARD pgn_status pgn_fail_unknown(pgn_db *db, int64_t sid,
    const char *name, int sending);
/* Resolve a checked name in the current scope or explain the failure. */
PGN_NODISCARD pgn_status pgn_need_agent(pgn_db *db, const char *name, int any,
    int64_t *id);
/* A generated name not yet taken in scope 'sid'. */
PGN_NODISCARD pgn_status pgn_fresh_name(pgn_db *db, int64_t sid,
    char out[PGN_MAX_NAME + 1]);

/* ---- journal (journal.c) ------------------------------------------- */

/* One journal entry for agent row 'agent'; 'msg' 0, 'peer'/'detail' NULL ok. */
PGN_NODISCARD pgn_status pgn_journal_add(pgn_db *db, int64_t agent,
    const char *kind, int64_t msg, const char *peer, const char *detail,
    int64_t now);

/* ---- audit (audit.c) ----------------------------------------------- */

/* Copy claimed message 'm' into the audit, extending the chain. */
PGN_NODISCARD pgn_status pgn_audit_append(pgn_db *db,
    const struct pgn_claim *req, const struct pgn_msg *m, int64_t now);

#endif
