/*
 * Internals of libpigeon shared between its modules: the connection
 * handle, the bounded string builder, error recording, statements.
 */
#ifndef PGN_INT_H
#define PGN_INT_H

#include <stdarg.h>
#include <sys/types.h>
#include <sodium.h>

#include "pigeon/pigeon.h"
#include "banned.h"

#define PGN_MAX_ERRMSG 1024
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
#define PGN_STR_(x)        #x
#define PGN_STR(x)         PGN_STR_(x)

struct sqlite3;
struct pgn_backend;
struct pgn_pg;

/*
 * A statement of one backend (docs/decisions/0110-storage-seam.md): the
 * mailbox's files hold it and reach its rows only through the helpers of
 * store_int.h; 'h' is the backend's own (an sqlite3_stmt, or pg.c's).
 * The SQLite module keeps PGN_STMT_CACHE of them per connection.
 */
struct pgn_stmt {
	const struct pgn_backend *be;
	const char *sql; /* the static text it was prepared from */
	void *h;         /* the backend's statement; NULL: a free slot */
	int busy;        /* handed out, not finished yet */
};
typedef struct pgn_stmt pgn_stmt;

struct pgn_db {
	const struct pgn_backend *be; /* the store's one backend module */
	struct sqlite3 *sql;          /* SQLite's connection (db.c only) */
	struct pgn_pg *pg;            /* PostgreSQL's (pg.c only) */
	char *path;       /* a file, or a conninfo without password */
	char *scope;      /* current scope root, "" = global */
	int64_t scope_id; /* 0: not looked up yet */
	long deadline_ms; /* bound on each lock wait */
	int64_t until_ms; /* monotonic end of the current wait */
	char err[PGN_MAX_ERRMSG];
	pgn_hint hint;                   /* the remedy for 'err' */
	char hint_arg[PGN_MAX_NAME + 1]; /* the name it is about */
	unsigned flags;                  /* PGN_OPEN_* */
	int checkpointed;                /* the first write checkpointed */
	struct pgn_stmt *stmts; /* SQLite's cache, PGN_STMT_CACHE (db.c) */
};

/* ---- the quiet stamp (quiet.c, decision 0085) ----------------------- */

#define PGN_QUIET_SLOTS     256 /* sessions remembered; more share slots */
#define PGN_QUIET_SLOT_SIZE 512 /* bytes per slot in $PIGEON_HOME/quiet */

struct pgn_quiet_file {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
};

/* The database files as a moment before a read. */
struct pgn_quiet_snap {
	struct pgn_quiet_file db, wal;
	unsigned char walhdr[32];
};

/*
 * Take the snapshot of 'db_path' and its WAL: 1, or 0 (no WAL with a
 * valid header, not regular files): then no stamp is used or made.
 */
int pgn_quiet_snapshot(const char *db_path, struct pgn_quiet_snap *s);
/*
 * 1 when session 'session' was found quiet by a read made after
 * snapshot 's' — the files unchanged since — and its last-seen time
 * needs no refresh at 'now_ms'. Any doubt: 0.
 */
int pgn_quiet_hit(const char *home, const char *session,
    const struct pgn_quiet_snap *s, int64_t now_ms);
/* Remember that a read after 's' found 'session' quiet (best effort). */
void pgn_quiet_record(const char *home, const char *session,
    const struct pgn_quiet_snap *s, int64_t seen_ms);

/* ---- bounded string builder (buf.c) -------------------------------- */

struct pgn_buf {
	char *data;     /* NUL-terminated when len > 0 */
	size_t len;     /* bytes used, excluding the NUL */
	size_t cap;     /* bytes allocated */
	size_t max;     /* hard limit on len */
	pgn_status err; /* first failure; later appends are no-ops */
};

void pgn_buf_init(struct pgn_buf *b, size_t max);
void pgn_buf_release(struct pgn_buf *b);
void pgn_buf_reset(struct pgn_buf *b);
void pgn_buf_add(struct pgn_buf *b, const void *p, size_t n);
void pgn_buf_adds(struct pgn_buf *b, const char *s);
void pgn_buf_addf(struct pgn_buf *b, const char *fmt, ...) PGN_PRINTF(2, 3);
void pgn_buf_vaddf(struct pgn_buf *b, const char *fmt, va_list ap)
    PGN_PRINTF(2, 0);
/* Hand the string to the caller ("" if empty); NULL after an error. */
char *pgn_buf_take(struct pgn_buf *b, size_t *len);

/* Overflow-checked size maths: 0 on overflow. */
int pgn_size_add(size_t a, size_t b, size_t *out);
int pgn_size_mul(size_t a, size_t b, size_t *out);

char *pgn_strdup(const char *s);
char *pgn_strndup(const char *s, size_t n);

/* Grow a vector of 'size'-byte items to hold n + 1. 0 on ENOMEM. */
int pgn_vec_grow(void **v, size_t *cap, size_t n, size_t size);

/* ---- files (file.c) ------------------------------------------------- */

/* Format a one-line error into errbuf (may cut it at errlen). */
void pgn_errf(char *errbuf, size_t errlen, const char *fmt, ...)
    PGN_PRINTF(3, 4);
/* 'a'/'b' as a new string (NULL on ENOMEM or over PGN_MAX_PATH). */
char *pgn_path_join(const char *a, const char *b);
/* The directory part of 'path' ("." if none), as a new string. */
char *pgn_path_dir(const char *path);
/* A regular file of at most 'max' bytes; absent: '*exists' 0, PGN_OK. */
pgn_status pgn_read_file(const char *path, size_t max, char **data, size_t *len,
    int *exists, mode_t *mode, char *errbuf, size_t errlen);
int pgn_fsync_dir(const char *dir);
/* Create 'dir' and missing parents with 'mode' (existing ones stay). */
pgn_status pgn_mkdir_p(const char *dir, mode_t mode, char *errbuf,
    size_t errlen);
/* Replace 'path' atomically: temp file, fsync, rename, fsync the dir. */
pgn_status pgn_write_atomic(const char *path, const char *data, size_t len,
    mode_t mode, char *errbuf, size_t errlen);
/* A durable copy of the bytes a write in place replaces (0037). */
#define PGN_SAVE_SUFFIX ".pigeon-save"
/*
 * Write 'data' to 'path', which now holds 'cur': atomically when it has
 * one link, else in place after a durable copy in PATH.pigeon-save, so
 * every hard link sees the change (docs/decisions/0037).
 */
pgn_status pgn_write_linked(const char *path, int nlinks, const char *data,
    size_t len, const char *cur, size_t curlen, mode_t mode, char *errbuf,
    size_t errlen);

/* ---- install's shared parts (install.c, plugin.c) ------------------- */

/* The config file (or plugin file) of an install request. */
pgn_status pgn_install_path(const struct pgn_install *req, char **path,
    char *errbuf, size_t errlen);
/* A zero-context line diff of 'old' and 'new' (NULL: absent), "" if equal. */
pgn_status pgn_line_diff(const char *path, const char *old, size_t oldlen,
    const char *new, size_t newlen, char **out);
/* opencode's plugin (broker/src/opencode-plugin.js, embedded at build). */
extern const char pgn_opencode_plugin_js[];
/* The plugin drop (PGN_MECH_PLUGIN): pgn_install_apply's and inspect's. */
pgn_status pgn_plugin_apply(const struct pgn_install *req,
    struct pgn_install_result *res, char *errbuf, size_t errlen);
pgn_status pgn_plugin_inspect(pgn_host h, const char *project,
    struct pgn_install_state *s);

/* ---- secrets (crypto.c) --------------------------------------------- */

#define PGN_KEY_BYTES 32           /* $PIGEON_HOME/key */
#define PGN_FP_BYTES  16           /* keyed fingerprints in hook.log */
#define PGN_MAX_STATE (256 * 1024) /* sealed provider state, bytes */

/*
 * Load the key of 'home' into sodium_malloc memory (free with
 * pgn_key_free, which wipes it), creating it when 'create'. PGN_ENOTFOUND
 * (absent, !create), PGN_EINVAL (wrong size or readable by others),
 * PGN_EIO, PGN_ENOMEM.
 */
pgn_status pgn_key_load(const char *home, int create, unsigned char **key,
    char *err, size_t errlen);
void pgn_key_free(unsigned char *key);
/* Wipe 'len' bytes at 'p', then free it. */
void pgn_secret_free(void *p, size_t len);
/* Start a keyed BLAKE2b of 'outlen' bytes under the subkey for 'tag'. */
void pgn_mac_start(crypto_generichash_state *h, const unsigned char *key,
    const char *tag, size_t outlen);
/* A keyed fingerprint of 'data', as hex. */
void pgn_fingerprint(const unsigned char *key, const char *data, size_t len,
    char hex[2 * PGN_FP_BYTES + 1]);
/*
 * Open the sealed provider state: '*plain' (free with pgn_secret_free)
 * is NULL when there is none. PGN_ETAMPER when it fails to decrypt or
 * authenticate — the caller treats the state as absent.
 */
pgn_status pgn_state_read(const char *home, const unsigned char *key,
    char **plain, size_t *len, char *err, size_t errlen);
/* Seal and write the provider state atomically, 0600. */
pgn_status pgn_state_write(const char *home, const unsigned char *key,
    const char *plain, size_t len, char *err, size_t errlen);

/* ---- errors (store.c) ---------------------------------------------- */

/* Record a message on 'db' and return 'st'. */
pgn_status pgn_fail(pgn_db *db, pgn_status st, const char *fmt, ...)
    PGN_PRINTF(3, 4);
/* pgn_fail with the remedy 'hint' (about name 'arg', or NULL). */
pgn_status pgn_fail_hint(pgn_db *db, pgn_status st, pgn_hint hint,
    const char *arg, const char *fmt, ...) PGN_PRINTF(5, 6);

/* ---- statements and transactions (stmt.c, over the backend) -------- */

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

typedef pgn_status pgn_tx_fn(pgn_db *db, void *arg);

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

/* ---- text (text.c) ------------------------------------------------- */
/*
 * How an agent runs the CLI at 'path' (NULL: unknown): the path as one
 * shell word in 'out' ('len' bytes), single-quoted when it needs it, or
 * plain "pigeon" for a path over PGN_HOOK_MAX_SHOWN bytes, not UTF-8, or
 * holding a quote or a control character. The hook's introduction shows
 * it; install's permission rules must match it.
 */
void pgn_shell_word(const char *path, char *out, size_t len);

/*
 * True if JSON text holds the escape \u0000, which cJSON decodes into a
 * NUL that silently cuts the string short: callers refuse such input.
 */
int pgn_json_nul_escape(const char *s, size_t len);

/*
 * Append s[0..len) escaped for a terminal, as pgn_text_safe describes
 * ('flags': PGN_SAFE_LINES or 0). The output is at most 4 * len bytes.
 */
void pgn_buf_add_safe(struct pgn_buf *b, const char *s, size_t len,
    unsigned flags);

/* Edit distance, capped at 'max' + 1 (for "did you mean"). */
size_t pgn_edit_distance(const char *a, const char *b, size_t max);

/* ---- scope key (scopekey.c) ---------------------------------------- */

#define PGN_MAX_GITCONFIG  (256 * 1024) /* bytes of a git config read */
#define PGN_MAX_REMOTE_URL 2048         /* bytes of the origin url */

/*
 * The first remote.origin.url of git config text (git's syntax: quotes,
 * escapes, comments, continued lines; include files are not followed).
 * '*url' is NULL if there is none. PGN_EINVAL if the text is not valid
 * git config, PGN_ETOOBIG if the url is over PGN_MAX_REMOTE_URL: '*line'
 * says where. '*url' is the caller's.
 */
pgn_status pgn_gitconfig_origin(const char *text, size_t len, char **url,
    size_t *line);

/*
 * A remote url as a scope key, "host/path": scp-like, ssh://, git://,
 * http(s):// and the like are one key; the host folded to lower case,
 * the user, a password and the port dropped, the path without a leading
 * or trailing '/' or a ".git" suffix. PGN_EINVAL (PGN_ETOOBIG) with
 * '*why' (static, never quoting the url) for a url that names no host:
 * a local path, a remote helper, control characters.
 */
pgn_status pgn_remote_key(const char *url, char **key, const char **why);

/* ---- names (names.c) ----------------------------------------------- */

/* A random adjective-noun name; 'attempt' >= 8 adds a number. */
void pgn_name_generate(char out[PGN_MAX_NAME + 1], unsigned attempt);

/* ---- store (send.c, claim.c; more in store_int.h) ----------------- */

/* The claim's queue query, exported so a test can EXPLAIN it. */
extern const char pgn_sql_queued[];
/* The turn's read-only no-mail check, exported for the same reason. */
extern const char pgn_sql_turn_peek[];
/* pgn_wait's look and the claim's filtered queue (wait.c), the same. */
extern const char pgn_sql_wait_look[];
extern const char pgn_sql_queued_match[];

/* ---- audit chain (chain.c) ----------------------------------------- */

/* hash = BLAKE2b-256(prev || canonical(d)); d->hash is not read. */
void pgn_chain_hash(const unsigned char prev[PGN_HASH_BYTES],
    const struct pgn_delivery *d, unsigned char out[PGN_HASH_BYTES]);

#endif
