/*
 * Internals shared by the mailbox store's files. The seam
 * (docs/decisions/0110-storage-seam.md): the domain files (send.c
 * claim.c agents.c journal.c audit.c health.c wait.c handoff.c) hold the
 * mailbox's rules and speak to the database only through the statement layer
 * below; each backend is one module filling struct pgn_backend:
 * engine/sqlite.c (SQLite) and engine/pg.c (PostgreSQL over libpq), its
 * connection's state behind pgn_db's 'engine'. No domain file includes a
 * backend's header.
 */
#ifndef PGN_STORE_INT_H
#define PGN_STORE_INT_H

#include "pgn_int.h"

struct pgn_backend;

/*
 * A statement of one backend (docs/decisions/0110-storage-seam.md): the
 * mailbox's files hold it and reach its rows only through the helpers
 * below; 'h' is the backend's own (an sqlite3_stmt, or pg.c's).
 */
struct pgn_stmt {
	const struct pgn_backend *be;
	const char *sql; /* the static text it was prepared from */
	void *h;         /* the backend's statement; NULL: a free slot */
	int busy;        /* handed out, not finished yet */
};
typedef struct pgn_stmt pgn_stmt;

/* The work of one transaction (pgn_tx, pgn_read). */
typedef pgn_status pgn_tx_fn(pgn_db *db, void *arg);

/*
 * The connection, whatever its backend (docs/decisions/0149): what the
 * mailbox's rules need, and the backend's own state behind 'engine',
 * which only its module (store/engine/sqlite.c, pg.c) knows the shape of.
 */
struct pgn_db {
	const struct pgn_backend *be; /* the store's one backend module */
	void *engine;                 /* the backend's state, its own */
	char *path;       /* a file, or a conninfo without password */
	char *scope;      /* current scope root, "" = global */
	char *root;       /* its root path on every backend; NULL: global */
	int64_t scope_id; /* 0: not looked up yet */
	long deadline_ms; /* bound on each lock wait */
	int64_t until_ms; /* monotonic end of the current wait */
	/*
	 * The last commit got no answer and the server could not be asked
	 * whether it took (PostgreSQL, docs/decisions/0131); a later
	 * transaction clears it.
	 */
	int unknown;
	struct pgn_err err; /* the last error: its fact and remedy */
	unsigned flags;     /* PGN_OPEN_* */
};

/* How a message names the current scope. */
#define PGN_SCOPE_LABEL(db) ((db)->scope[0] != '\0' ? (db)->scope : "global")

/* ---- the backend's operations ------------------------------------ */

struct pgn_arg;
struct pgn_waker;

/* Which SQL text a statement takes where the dialects differ. */
enum pgn_dialect { PGN_DIALECT_SQLITE, PGN_DIALECT_PG };

/*
 * One backend: every operation the domain files need. Steps return
 * PGN_OK on a row, PGN_ENOTFOUND at the end, else an error recorded on
 * the connection with 'what'. Columns count from 0; a NULL reads as 0
 * or as no bytes. SQL is SQLite's ("?1" parameters); a backend
 * translates what it must (pg.c: "$1").
 */
struct pgn_backend {
	const char *name; /* "sqlite", "postgresql" */
	enum pgn_dialect dialect;
	pgn_status (*prepare)(pgn_db *db, const char *sql, pgn_stmt **st);
	void (*finish)(pgn_db *db, pgn_stmt *st);
	void (*reset)(pgn_stmt *st); /* keeps nothing bound */
	int (*nparams)(pgn_stmt *st);
	/* Bind a[0] to parameter 'i' (from 1); values stay the caller's
	 * until the statement is reset or finished. */
	pgn_status (
	    *bind)(pgn_db *db, pgn_stmt *st, int i, const struct pgn_arg *a);
	pgn_status (*step)(pgn_db *db, pgn_stmt *st, const char *what);
	/* pgn_step_write: run to the end, or send and report later. */
	pgn_status (*step_write)(pgn_db *db, pgn_stmt *st, const char *what);
	int64_t (*col_i64)(pgn_stmt *st, int col);
	/* A column's text, NUL-terminated, or its bytes ('*len' of
	 * them); NULL for SQL NULL. Valid until the next step. */
	const char *(*col_text)(pgn_stmt *st, int col, size_t *len);
	const void *(*col_blob)(pgn_stmt *st, int col, size_t *len);
	/* Rows the last write statement changed. */
	int64_t (*changes)(pgn_db *db, pgn_stmt *st);
	/*
	 * The id the INSERT 'st' just made: SQLite's last rowid; on
	 * PostgreSQL column 0 of its RETURNING id (the statement's PG
	 * text has one: SQLite's would cost every send a dearer prepare).
	 */
	int64_t (*inserted_id)(pgn_db *db, pgn_stmt *st);
	pgn_status (*tx)(pgn_db *db, pgn_tx_fn *fn, void *arg);
	pgn_status (*read)(pgn_db *db, pgn_tx_fn *fn, void *arg);
	pgn_status (*user_version)(pgn_db *db, int *version);
	pgn_status (*check_file)(pgn_db *db);
	/* The engine's part of pgn_db_health, inside its read transaction. */
	pgn_status (*health)(pgn_db *db, struct pgn_health *h);
	/*
	 * pgn_wait's wake-up: open a watch for new mail and, where the
	 * backend can, for changes in directory 'extra' (NULL: none; a
	 * backend that cannot leaves it to the poll); NULL: no watch, the
	 * waiter polls. Sleep up to 'ms' or until something may have
	 * changed (-1: a signal came); close. A wake-up is only a hint: the
	 * waiter re-checks the table either way.
	 */
	struct pgn_waker *(*wait_open)(pgn_db *db, const char *extra);
	int (*wait_sleep)(pgn_db *db, struct pgn_waker *w, int64_t ms);
	void (*wait_close)(pgn_db *db, struct pgn_waker *w);
	/* The descriptor a waker sleeps on, to poll beside others; -1:
	 * none (NULL: the backend has none) */
	int (*wait_fd)(struct pgn_waker *w);
	/*
	 * The doorbell across machines (decision 0210): listen for the ids
	 * of queued messages that may wake (not low), sleep up to 'ms' until
	 * one comes, take up to 'max' into 'ids'. Returns how many, or
	 * max + 1 when some were left out (the caller then looks at every
	 * queued message); -1: a signal came; -2: the connection failed
	 * (recorded on db). NULL: the backend has none (SQLite: one machine,
	 * the sender's, rings).
	 */
	int (*bell_take)(pgn_db *db, int64_t ms, int64_t *ids, size_t max);
	void (*close)(pgn_db *db);
};

/* The modules (sqlite.c, pg.c): open 'path' on 'db', setting db->be
 * and db->engine. */
PGN_NODISCARD pgn_status pgn_sqlite_open(pgn_db *db, const char *path,
    unsigned flags);
PGN_NODISCARD pgn_status pgn_pg_open(pgn_db *db, const char *conninfo,
    unsigned flags);

/* The statement text of the connection's dialect (the one place). */
static inline const char *
pgn_sql(const pgn_db *db, const char *sqlite, const char *pg)
{
	return db->be->dialect == PGN_DIALECT_PG ? pg : sqlite;
}

/* Column accessors, through the statement's backend. */
static inline int64_t
pgn_col_i64(pgn_stmt *st, int col)
{
	return st->be->col_i64(st, col);
}

/* Bytes of a blob column, borrowed (NULL for SQL NULL). */
static inline const void *
pgn_col_bytes(pgn_stmt *st, int col, size_t *len)
{
	return st->be->col_blob(st, col, len);
}

/* Text of a column, borrowed (NULL for SQL NULL); '*len' may be NULL. */
static inline const char *
pgn_col_str(pgn_stmt *st, int col, size_t *len)
{
	size_t n;
	const char *t = st->be->col_text(st, col, &n);

	if (len != NULL)
		*len = n;
	return t;
}

/* Reset a statement to run it again (bind its values anew). */
static inline void
pgn_reset(pgn_stmt *st)
{
	st->be->reset(st);
}

/* The id INSERT 'st' made (its PostgreSQL text ends RETURNING id). */
static inline int64_t
pgn_inserted_id(pgn_db *db, pgn_stmt *st)
{
	return db->be->inserted_id(db, st);
}

/* Rows the last step of write statement 'st' changed. */
static inline int64_t
pgn_changes(pgn_db *db, pgn_stmt *st)
{
	return db->be->changes(db, st);
}

/* ---- statements and transactions (stmt.c, over the backend) ------ */

/*
 * A statement for 'sql', which must have static storage (SQLite keys
 * its statement cache on it): a cached one, reset with no bindings, else
 * a new one. Hand it back with pgn_finish. On SQLite preparing costs
 * more than most statements' work (docs/decisions/0022).
 */
PGN_NODISCARD pgn_status pgn_prepare(pgn_db *db, const char *sql,
    pgn_stmt **st);
/* Reset a statement from pgn_prepare for reuse, or free it. NULL-safe. */
void pgn_finish(pgn_db *db, pgn_stmt *st);
/* Step to the end of a statement (a row it yields is ignored). */
PGN_NODISCARD pgn_status pgn_step_done(pgn_db *db, pgn_stmt *st,
    const char *what);
/*
 * pgn_step_done for a write whose rows and change count nobody reads.
 * Inside a transaction a backend may send it and go on without waiting
 * for its answer (PostgreSQL's pipeline, docs/decisions/0126): its
 * error, reported with 'what', then comes from the next statement that
 * is read, or from the commit, which it fails. Never for a statement
 * whose pgn_changes or pgn_inserted_id is read.
 */
PGN_NODISCARD pgn_status pgn_step_write(pgn_db *db, pgn_stmt *st,
    const char *what);

/*
 * Run 'fn' inside one write transaction, serialized with every other
 * writer (SQLite: BEGIN IMMEDIATE; PostgreSQL: pg.c). A busy lock (at
 * the start, in 'fn' or at the commit) rolls back and retries with
 * jitter until the connection's deadline; then PGN_EBUSY. Any other
 * failure rolls back. 'fn' must be safe to run again after a rollback.
 */
PGN_NODISCARD pgn_status pgn_tx(pgn_db *db, pgn_tx_fn *fn, void *arg);

/* Same retry discipline for read-only work: one snapshot, no write lock. */
PGN_NODISCARD pgn_status pgn_read(pgn_db *db, pgn_tx_fn *fn, void *arg);

/* Text column as a fresh string ("" for NULL). NULL on ENOMEM. */
char *pgn_col_text(pgn_stmt *st, int col);
/* Text of a column into 'dst' (cut to 'max' - 1 bytes; "" for NULL). */
void pgn_col_copy(char *dst, size_t max, pgn_stmt *st, int col);

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
 * text slot no integer). Values are not copied: they must stay valid
 * until the statement is reset or stepped to its end.
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
 * PGN_ETOOBIG: a value over PGN_MAX_BIND_LEN; PGN_EDB: the backend
 * refused a value, or the count does not match the statement's parameters.
 */
PGN_NODISCARD pgn_status pgn_bind_args(pgn_db *db, pgn_stmt *st,
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
PGN_NODISCARD pgn_status pgn_step_row(pgn_db *db, pgn_stmt *st,
    const char *what);
/*
 * The row loop: while (pgn_next_row(db, st, &rc, "listing x")) { ... }.
 * True on a row while '*rc' is PGN_OK; false at the end, once '*rc' holds
 * an error (set by the body), or on a step error, which goes into '*rc'.
 */
int pgn_next_row(pgn_db *db, pgn_stmt *st, pgn_status *rc, const char *what);
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

/* ---- statements a test EXPLAINs (send.c, claim.c, wait.c) -------- */

/* The inbox's queue query, exported so a test can EXPLAIN it. */
extern const char pgn_sql_queued[];
/* The claim's: the same without the agent join (claim.c, 0246). */
extern const char pgn_sql_queued_of[];
/* The turn's read-only no-mail check, exported for the same reason. */
extern const char pgn_sql_turn_peek[];
/* pgn_wait's look and the claim's filtered queue (wait.c), the same. */
extern const char pgn_sql_wait_look[];
extern const char pgn_sql_queued_match[];
/* A sender's count of a recipient's queue (send.c), the same. */
extern const char pgn_sql_queued_from[];

/* ---- send and inbox (send.c) --------------------------------------- */

/* Append the current row of pgn_sql_queued to 'm'. */
PGN_NODISCARD pgn_status pgn_msgs_push(pgn_db *db, struct pgn_msgs *m,
    pgn_stmt *st);

/* The lowest priority a claim of route 'route' takes (claim.c, 0158). */
int pgn_route_lowest(const char *route);

/* ---- groups (group.c) --------------------------------------------- */

/* Active agents of scope ?1 in some group (id, name, grps), at most ?2. */
extern const char pgn_sql_grouped[];
/* Does an agent's groups list 'grps' (",a,b,", or NULL) hold 'name'? */
int pgn_grps_has(const char *grps, const char *name);
/* Explain an unknown group: the scope's groups. PGN_ENOTFOUND. */
PGN_NODISCARD pgn_status pgn_fail_unknown_group(pgn_db *db, int64_t sid,
    const char *name);

/* ---- agents (agents.c) --------------------------------------------- */

/* Active agents of scope ?1 as (id, name), by name. */
extern const char pgn_sql_agent_names[];
/* Insert agent 'name' into scope 'sid' and journal "created" with 'why'. */
/*
 * Inside a transaction: may agent 'name' (checked) be removed? Its row
 * into '*id'; PGN_ENOTFOUND (explained) or PGN_EFULL while mail is
 * queued for it.
 */
PGN_NODISCARD pgn_status pgn_agent_rm_check_in_tx(pgn_db *db, const char *name,
    int64_t *id);
/*
 * Inside a write transaction: pgn_agent_rm of 'name' (checked) with 'why'
 * as its journal entry's detail (NULL: none); its row into '*id'.
 */
PGN_NODISCARD pgn_status pgn_agent_rm_in_tx(pgn_db *db, const char *name,
    const char *why, int64_t *id);
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
/*
 * Inside a transaction: who acts (sends, acknowledges), into 'from'
 * (decision 0134): the agent session 'session' is bound to ('asked', a
 * checked name or "", may only name it), else 'asked', else the checked
 * 'from_default'. PGN_EINVAL when none.
 */
PGN_NODISCARD pgn_status pgn_actor_in_tx(pgn_db *db, const char *asked,
    const char *session, const char *from_default, char from[PGN_MAX_NAME + 1]);

/*
 * A message's status row (wait.c, decision 0157): SQL_STATUS's first
 * eight columns ('m' the message, 'a' its recipient, 'd' its delivery),
 * then these, read by pgn_status_row.
 */
#define PGN_STATUS_ACK_COLS                                                    \
	"coalesce(m.thread, m.id), coalesce(m.ack_ms, 0), "                    \
	"coalesce(m.acked_ms, 0), m.ack_text, coalesce(m.reminded_ms, 0), "    \
	"CASE WHEN m.acked_ms IS NULL OR m.ack_text IS NOT NULL THEN 0 "       \
	"ELSE coalesce((SELECT min(r.id) "                                     \
	"FROM message r WHERE r.thread = coalesce(m.thread, m.id) "            \
	"AND r.reply_to = m.id AND r.sender = a.name), 0) END, "               \
	"m.priority, coalesce(m.grp, '') "
/* Keep the first 'n' messages of 'm', freeing the rest. */
void pgn_msgs_truncate(struct pgn_msgs *m, size_t n);
/*
 * One look of a wait: reads, sets '*done' when the wait is over (what it
 * waited for is in 'arg'); an error ends the wait with that status. A
 * look that knows when what it waits on changes by itself (a lease's
 * expiry) sets '*due_ms' to that wall-clock time (pgn_now_ms), and the
 * next look comes no later; it is 0 at each look's start.
 */
typedef pgn_status pgn_wait_look_fn(pgn_db *db, void *arg, int *done,
    int64_t *due_ms);
/*
 * Look, then sleep on the backend's wake-up (watching 'watch_dir' too on
 * SQLite, or NULL), at most PGN_WAIT_POLL_MS (or until the look's due
 * time) and at least PGN_WAIT_TICK_MS apart, until a look is done,
 * fails, 'timeout_ms' (0: one look) has passed, the database file was
 * replaced (its status) or 'cancel' says so (asked before and after each
 * sleep). pgn_wait, pgn_wait_ack and pgn_lease_take's --wait.
 */
PGN_NODISCARD pgn_status pgn_wait_until(pgn_db *db, const char *watch_dir,
    int64_t timeout_ms, pgn_wait_look_fn *look, void *arg,
    int (*cancel)(void *cancel_arg), void *cancel_arg);
/* pgn_wait's sleep on the backend's wake-up 'w' (NULL: a plain sleep). */
void pgn_waker_sleep(pgn_db *db, struct pgn_waker *w, int64_t ms, int64_t last,
    int64_t until);
/* Fill 's' from the current row (its ack_text the caller's); ENOMEM. */
PGN_NODISCARD pgn_status pgn_status_row(pgn_db *db, pgn_stmt *st,
    struct pgn_msg_status *s, int64_t now);

/*
 * Inside a write transaction: release every lease agent 'agent' (a
 * checked name) holds in the scope, as pgn_lease_release with 'all'
 * does (each a journal entry, the expired swept, the stamp widened
 * before the commit); '*lowered' 1 when pgn_lease_restamp is due once
 * the transaction has committed. pgn_agent_retire (store/retire.c).
 */
PGN_NODISCARD pgn_status pgn_lease_release_all_in_tx(pgn_db *db,
    const char *agent, size_t *released, int *lowered);
/* After such a commit: the exact stamp; a failure only leaves it wider. */
void pgn_lease_restamp(pgn_db *db);
/*
 * pgn_agent_retire for prune (store/retire.c): in the same transaction,
 * an agent seen since 'idle_before_ms' (its row or a session) is left
 * as it is, '*kept' 1; 0 checks nothing, as pgn_agent_retire.
 */
PGN_NODISCARD pgn_status pgn_agent_retire_idle(pgn_db *db, const char *name,
    const char *why, int64_t idle_before_ms, size_t *leases, int *kept);

PGN_NODISCARD pgn_status pgn_journal_add(pgn_db *db, int64_t agent,
    const char *kind, int64_t msg, const char *peer, const char *detail,
    int64_t now);

/* ---- audit (audit.c) ----------------------------------------------- */

/* Copy claimed message 'm' into the audit, extending the chain. */
PGN_NODISCARD pgn_status pgn_audit_append(pgn_db *db,
    const struct pgn_claim *req, const struct pgn_msg *m, int64_t now);

#endif
