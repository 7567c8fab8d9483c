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

/* Bind text (NULL binds NULL) or an integer to parameter 'i'. */
PGN_NODISCARD pgn_status pgn_bind_text(pgn_db *db, sqlite3_stmt *st, int i,
    const char *s);
PGN_NODISCARD pgn_status pgn_bind_i64(pgn_db *db, sqlite3_stmt *st, int i,
    int64_t v);
/* Run a one-row query yielding an integer; PGN_ENOTFOUND if no row. */
PGN_NODISCARD pgn_status pgn_query_i64(pgn_db *db, sqlite3_stmt *st,
    int64_t *out, const char *what);
/* Run 'sql' with ?1 = id and, if it has one, ?2 = v. */
PGN_NODISCARD pgn_status pgn_exec_id(pgn_db *db, const char *sql, int64_t id,
    int64_t v, const char *what);
/* Id of the current scope; created when 'create', else ENOTFOUND. */
PGN_NODISCARD pgn_status pgn_scope_id(pgn_db *db, int create, int64_t *id);
/* Agent 'name' of scope 'sid'; 'any' also finds a retired one. */
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
