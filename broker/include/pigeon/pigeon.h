/*
 * libpigeon: the mailbox of Pigeon. Owns scopes, agents, sessions,
 * messages, the atomic claim, the chained audit and the journals.
 * The library never prints, exits or reads stdin; binaries do.
 * Ownership, everywhere: strings a caller passes are borrowed, never
 * kept past the call; what a function hands back is the caller's, freed
 * by the matching _release (or free() where it says so). The hook's
 * turn is in pigeon/hook.h.
 */
#ifndef PIGEON_H
#define PIGEON_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define PGN_NODISCARD    __attribute__((warn_unused_result))
#define PGN_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PGN_NODISCARD
#define PGN_PRINTF(f, a)
#endif

/* Limits: every input has one, listed in docs/limits.md. */
#define PGN_MAX_BODY         4096      /* message body, bytes */
#define PGN_MAX_NAME         64        /* agent name, chars */
#define PGN_MAX_PENDING      200       /* queued messages per recipient */
#define PGN_MAX_RECIPIENTS   64        /* names in one --to list */
#define PGN_MAX_PATH         4096      /* scope roots, database paths */
#define PGN_MAX_SESSION_KEY  256       /* "<host>:<id>" */
#define PGN_MAX_SQL_LENGTH   (1 << 20) /* SQLITE_LIMIT_LENGTH */
#define PGN_MAX_LIST         10000     /* rows one listing may return */
#define PGN_DEFAULT_LIST     50        /* rows an audit listing returns */
#define PGN_BUSY_DEADLINE_MS 5000      /* CLI: total wait for the write lock */
#define PGN_HASH_BYTES       32        /* BLAKE2b-256 audit chain */

typedef enum pgn_status {
	PGN_OK = 0,
	PGN_EINVAL,    /* bad caller input; message names the field */
	PGN_ETOOBIG,   /* a documented limit was exceeded */
	PGN_ENOTFOUND, /* no such agent, message or delivery */
	PGN_EEXIST,    /* name already taken */
	PGN_EFULL,     /* recipient over its pending cap */
	PGN_EBUSY,     /* write lock not acquired before the deadline */
	PGN_ECORRUPT,  /* not a database, or damaged */
	PGN_ETOONEW,   /* schema newer than this build */
	PGN_EDB,       /* unexpected SQLite result */
	PGN_EIO,       /* file system error */
	PGN_ENOMEM,
	PGN_ETAMPER, /* audit chain broken */
} pgn_status;

/* A short stable word for a status ("ok", "busy", ...). Static string. */
const char *pgn_status_name(pgn_status st);

/* True for statuses that mean the caller's input was bad (exit 2). */
int pgn_status_is_usage(pgn_status st);

typedef struct pgn_db pgn_db;

/* ---- state home ---------------------------------------------------- */

/*
 * Resolve the state directory: $PIGEON_HOME, else $XDG_STATE_HOME/pigeon,
 * else $HOME/.local/state/pigeon. '*dir' is the caller's (free()).
 * Returns PGN_EINVAL if none can be formed, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_home_path(char **dir);

/*
 * Create 'dir' (and missing parents) with mode 0700; an existing 'dir'
 * is tightened to 0700. Returns PGN_EIO with errno text in '*why'
 * (caller frees) on failure.
 */
PGN_NODISCARD pgn_status pgn_home_ensure(const char *dir, char **why);

/*
 * Resolve the database path: 'flag' (--db) if not NULL, else $PIGEON_DB,
 * else <home>/pigeon.db (creating home as pgn_home_ensure does).
 * '*path' is the caller's. '*why' as for pgn_home_ensure.
 */
PGN_NODISCARD pgn_status pgn_db_path(const char *flag, char **path, char **why);

/* ---- scope --------------------------------------------------------- */

/*
 * Find the scope of directory 'dir': the root of the main worktree of
 * the git repository around it (linked worktrees resolve to their main
 * worktree; git is not run), or "" (the global scope) when there is no
 * repository or 'dir' is NULL or unreadable. '*root' is the caller's.
 * Returns PGN_OK or PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_scope_find(const char *dir, char **root);

/*
 * The key of scope 'root' (from pgn_scope_find) in a store several
 * machines share: the normalised url of the repository's "origin"
 * remote, read from its git config without running git (e.g.
 * "github.com/owner/repo" for git@github.com:owner/repo.git and
 * https://github.com/owner/repo); without one, 'root' itself; "" and
 * a key (anything not an absolute path) stay as they are. When a
 * remote was there but could not be used (a local path, a config git
 * would refuse, over a bound), '*why' says so in one line, never
 * quoting the url; else NULL. '*key' and '*why' are the caller's
 * (free()). Returns PGN_OK or PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_scope_key(const char *root, char **key,
    char **why);

/* ---- database ------------------------------------------------------ */

#define PGN_OPEN_CREATE  0x1 /* create the file (0600) if missing */
#define PGN_OPEN_LATENCY 0x2 /* a hook: never checkpoint before writing */

/*
 * Open the database at 'path', apply pending migrations in one
 * transaction and set the per-connection pragmas. '*db' is set even on
 * failure (unless PGN_ENOMEM) so pgn_errmsg() can explain; close it with
 * pgn_db_close(). 'deadline_ms' bounds every later lock wait.
 * The -wal and -shm files are kept between processes. Commits do not
 * sync (synchronous=NORMAL); the first write transaction of a connection
 * first checkpoints a WAL over 128 KiB that earlier processes left
 * (syncing it and the database), unless PGN_OPEN_LATENCY; closing
 * checkpoints only a WAL over 512 KiB. So a hook's claim costs no fsync
 * (docs/decisions/0021-wal-lifecycle.md).
 * Returns PGN_ENOTFOUND (missing and no PGN_OPEN_CREATE), PGN_ECORRUPT,
 * PGN_ETOONEW (left untouched), PGN_EBUSY, PGN_EIO, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_db_open(const char *path, unsigned flags,
    long deadline_ms, pgn_db **db);

void pgn_db_close(pgn_db *db);

/*
 * Is the file at the database's path still the one open (same inode)?
 * PGN_EIO, with the path in pgn_errmsg(), once it was replaced (a restore,
 * a rename over it) or removed; a long reader then goes stale silently.
 */
PGN_NODISCARD pgn_status pgn_db_check_file(pgn_db *db);

/*
 * For a single-threaded program, first thing in main: SQLite without its
 * mutexes and memory statistics, about 115,000 instructions (10 %) less
 * per hook or CLI process (docs/decisions/0020). Does nothing once
 * SQLite is in use. Never call it in a program that has threads.
 */
void pgn_single_threaded(void);

/*
 * "0.1.0 (git 1a2b3c4d5e6f)": the project's version, with the git
 * revision it was configured from when built from a checkout.
 */
const char *pgn_version(void);

/* Last error text of 'db'; borrowed, valid until the next call. */
const char *pgn_errmsg(const pgn_db *db);

/*
 * What a person can do about the last error of 'db'. Library messages
 * state the fact ("no delivery 12 in the audit"); each front end words
 * the remedy in its own terms (the CLI: cli.c). 'arg' (may be NULL)
 * gets the name the remedy is about, borrowed like pgn_errmsg's text.
 */
typedef enum pgn_hint {
	PGN_HINT_NONE,
	PGN_HINT_CREATE,     /* an unknown recipient could be created */
	PGN_HINT_AGENTS,     /* list the scope's agents */
	PGN_HINT_READ_FIRST, /* the agent 'arg' has mail to read first */
	PGN_HINT_AUDIT,      /* list the deliveries */
	PGN_HINT_MESSAGES,   /* look the message id up */
	PGN_HINT_OTHER_DB,   /* name another database */
	PGN_HINT_OWNER,      /* run as the file's owner, or another database */
} pgn_hint;

pgn_hint pgn_errhint(const pgn_db *db, const char **arg);

/* Schema version this build writes, and the one found on disk. */
int pgn_schema_version(void);
PGN_NODISCARD pgn_status pgn_db_user_version(pgn_db *db, int *version);

/* The backend of an open database: "sqlite" or "postgresql". */
const char *pgn_db_backend(const pgn_db *db);
/* Whether this build speaks PostgreSQL (it was built with libpq). */
int pgn_pg_available(void);
/* The PostgreSQL schema version this build writes (0: no backend). */
int pgn_pg_schema_version(void);
/*
 * Is database string 'path' a PostgreSQL URI (postgres://,
 * postgresql://) or conninfo ("host=... dbname=...", "service=team")
 * rather than a file? A file named like a conninfo is given as "./x=y".
 */
int pgn_db_is_postgres(const char *path);

/*
 * Select the scope later calls act in ("" = global). 'root' is copied.
 * The scope row is created by the first write that needs it.
 */
PGN_NODISCARD pgn_status pgn_db_set_scope(pgn_db *db, const char *root);

/*
 * The key of the scope later calls act in, as stored: the root path on
 * SQLite, the normalised origin remote on PostgreSQL (pgn_scope_key),
 * "" for the global scope. Borrowed, valid until the next set_scope.
 */
const char *pgn_db_scope(const pgn_db *db);

/*
 * The database as it may be shown: the file, or the PostgreSQL string,
 * which never holds a password (one that did is "(refused)").
 */
const char *pgn_db_shown(const pgn_db *db);

/* Clock used for stored times, in ms since the epoch. */
int64_t pgn_now_ms(void);

/* Monotonic clock for deadlines, in ms. */
int64_t pgn_mono_ms(void);

/* ---- names and text ------------------------------------------------ */

/*
 * Check and case-fold an agent name into 'out' (PGN_MAX_NAME + 1 bytes):
 * 1..PGN_MAX_NAME of [a-z0-9._-], first a letter or digit, not "all".
 * Returns PGN_EINVAL with the broken rule in '*rule' (static string).
 */
PGN_NODISCARD pgn_status pgn_name_check(const char *in, char *out,
    const char **rule);

/* True if s[0..len) is valid UTF-8 (no overlongs, surrogates, NUL). */
int pgn_utf8_valid(const char *s, size_t len);

#define PGN_MAX_SAFE_TEXT (1 << 20) /* bytes pgn_text_safe escapes */
#define PGN_SAFE_LINES    1u        /* keep newlines (a body), else \x0a */

/*
 * s[0..len) as a new string (free()) that is safe to show on a terminal
 * (docs/decisions/0025): control bytes but tab (and newline with
 * PGN_SAFE_LINES), DEL and bytes of invalid UTF-8 become \xNN; C1
 * controls, format characters (bidi, zero-width, tags) and U+2028/9
 * become \uNNNN or \UNNNNNNNN; a backslash is doubled only where it would
 * start something that reads as an escape. NULL on ENOMEM or when len is
 * over PGN_MAX_SAFE_TEXT. (pgn_buf_add_safe appends the same inside the
 * library.)
 */
char *pgn_text_safe(const char *s, size_t len, unsigned flags);

/*
 * Parse a decimal integer in [min, max] (after OpenBSD's strtonum).
 * Returns PGN_EINVAL (not a number) or PGN_ETOOBIG (out of range).
 */
PGN_NODISCARD pgn_status pgn_parse_i64(const char *s, int64_t min, int64_t max,
    int64_t *out);

/*
 * Parse a point in time into ms since the epoch: an age ("90s", "15m",
 * "2h", "7d", meaning that long before 'now_ms'), a UTC date or time
 * ("2026-11-30", "2026-11-30T06:20", "2026-11-30T06:20:28Z") or "@SECS".
 * Returns PGN_EINVAL.
 */
PGN_NODISCARD pgn_status pgn_parse_time(const char *s, int64_t now_ms,
    int64_t *out);

/* Format ms since the epoch as "2026-11-30T06:20:28Z" into 'buf' (>= 21). */
void pgn_format_time(int64_t ms, char *buf, size_t len);

/* Format the age of 'ms' at 'now' as "12s ago", "3m ago", "5h ago", "2d ago".
 */
void pgn_format_age(int64_t ms, int64_t now, char *buf, size_t len);

/* ---- messages ------------------------------------------------------ */

struct pgn_msg {
	int64_t id;
	int64_t reply_to; /* 0: none */
	int64_t created_ms;
	char *sender;
	char *recipient;
	char *body;
	size_t body_len;
};

struct pgn_msgs {
	struct pgn_msg *v;
	size_t n;
	size_t cap;
	size_t left; /* claim: messages still queued after it */
};

void pgn_msgs_release(struct pgn_msgs *m);

struct pgn_send {
	const char *from;      /* sender name (an agent or a person) */
	const char *const *to; /* recipient names, "all" = every other */
	size_t nto;
	const char *body;
	size_t body_len;
	int64_t reply_to; /* 0: none; else a message of the scope */
	int create;       /* queue for unknown names (new agents) */
};

struct pgn_sent {
	int64_t id;
	char to[PGN_MAX_NAME + 1];
};

/*
 * Queue one message per recipient, all or nothing, in one transaction.
 * Ids and recipients in order go to 'sent' (caller-owned, 'maxsent'
 * slots); '*nsent' gets the count. Returns PGN_EINVAL (bad name, UTF-8, NUL,
 * empty body, reply_to unknown), PGN_ETOOBIG (body over PGN_MAX_BODY,
 * more recipients than 'maxsent'), PGN_ENOTFOUND (unknown recipient without
 * 'create'; the message lists known names), PGN_EFULL (a recipient
 * holds PGN_MAX_PENDING queued), PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_send(pgn_db *db, const struct pgn_send *req,
    struct pgn_sent *sent, size_t maxsent, size_t *nsent);

/* Queued messages of 'agent', oldest first, unclaimed. */
PGN_NODISCARD pgn_status pgn_inbox(pgn_db *db, const char *agent,
    struct pgn_msgs *out);

/* Estimated rendered size of a message; used as the claim's cost. */
typedef size_t pgn_cost_fn(const struct pgn_msg *m, void *arg);

struct pgn_claim {
	const char *agent;
	const char *session; /* "<host>:<id>" or NULL */
	const char *host;    /* "cursor", ..., or NULL */
	const char *route;   /* "session-start", "prompt", "cli" */
	size_t budget;       /* 0: no budget */
	pgn_cost_fn *cost;   /* NULL: body length */
	void *cost_arg;
	/* Only matching messages are taken; the others stay queued. */
	const char *from; /* NULL, or only mail from this sender */
	int64_t reply_to; /* 0, or only replies to this message */
	size_t max;       /* 0, or at most this many */
};

/*
 * Claim queued messages of req->agent, oldest first, while their summed
 * cost fits req->budget (the oldest is always taken, so no message can
 * jam the queue). In one BEGIN IMMEDIATE transaction each is marked
 * delivered, copied into the audit (hash-chained) and journalled for
 * the recipient. A message is claimed exactly once. out->left tells how
 * many stay queued. Returns PGN_ENOTFOUND (no such agent), PGN_EBUSY,
 * PGN_EDB, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_claim(pgn_db *db, const struct pgn_claim *req,
    struct pgn_msgs *out);

/* ---- waiting for mail; where a message stands (wait.c) ------------- */

/* pigeon wait: the default is under the hosts' default tool timeouts */
#define PGN_WAIT_DEFAULT_MS 100000
#define PGN_WAIT_MAX_MS     3600000 /* the longest wait */
#define PGN_WAIT_TICK_MS    100  /* a waiter looks at most 10 times a second */
#define PGN_WAIT_POLL_MS    1000 /* and at least once a second */
#define PGN_MAX_STATUS_IDS  100  /* ids one pgn_msg_status call takes */

struct pgn_wait {
	struct pgn_claim claim;   /* agent, route, filter; max 0 means 1 */
	int64_t timeout_ms;       /* 1 .. PGN_WAIT_MAX_MS */
	int (*cancel)(void *arg); /* NULL, or true to stop waiting */
	void *cancel_arg;
	/*
	 * A directory whose changes (a file created, written or renamed
	 * into it) also wake the waiter to ask 'cancel', or NULL.
	 */
	const char *watch_dir;
	int look_only; /* return once mail is queued, claiming nothing */
	int64_t looks; /* out: how many times the queue was read */
	int found;     /* out, with look_only: matching mail is queued */
};

/*
 * Block until a message matching req->claim is queued, then claim it as
 * pgn_claim does (one, unless claim.max says more). No busy loop: the
 * waiter sleeps until the database's -wal file changes (inotify, where
 * there is one), looking at least every PGN_WAIT_POLL_MS and at most
 * every PGN_WAIT_TICK_MS. Each look is a read of the partial index; only
 * a look that finds mail takes the write lock, and a message another
 * waiter took first is simply not there. PGN_OK with out->n == 0: the
 * timeout passed, or req->cancel said so (a signal interrupts the sleep).
 * With req->look_only nothing is claimed: PGN_OK with req->found set
 * once matching mail is queued.
 * Returns PGN_EINVAL (timeout out of range, a bad name), PGN_ENOTFOUND
 * (no such agent), PGN_EIO (the database file was replaced or removed
 * while waiting), PGN_EBUSY, PGN_EDB, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_wait(pgn_db *db, struct pgn_wait *req,
    struct pgn_msgs *out);

/* Where a message of the current scope stands, as its sender sees it. */
struct pgn_msg_status {
	int64_t id;
	int found; /* 0: no message 'id' in the scope; the rest is empty */
	int64_t reply_to;
	int64_t created_ms;
	int64_t delivered_ms; /* 0: still queued */
	char sender[PGN_MAX_NAME + 1];
	char recipient[PGN_MAX_NAME + 1];
	char session[PGN_MAX_SESSION_KEY + 1]; /* delivered: "" if none */
	char host[PGN_MAX_NAME + 1];           /* delivered: "" if none */
	char route[PGN_MAX_NAME + 1];          /* delivered: "cli", ... */
};

/*
 * Look up ids[0..n) (n <= PGN_MAX_STATUS_IDS) in one read: queued (since
 * when, for whom) or delivered (when, to which session and host, by which
 * route, from the audit). An unknown id is not an error: out[i].found is
 * 0. Returns PGN_EINVAL (n is 0 or an id below 1), PGN_ETOOBIG (over
 * PGN_MAX_STATUS_IDS), PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_msg_status(pgn_db *db, const int64_t *ids,
    size_t n, struct pgn_msg_status *out);

/* ---- agents -------------------------------------------------------- */

struct pgn_agent {
	char *name;
	char *hosts; /* comma-separated, "" if none */
	int64_t sessions;
	int64_t created_ms;
	int64_t last_seen_ms; /* 0: never */
	int64_t queued;
};

struct pgn_agents {
	struct pgn_agent *v;
	size_t n;
	size_t cap;
};

void pgn_agents_release(struct pgn_agents *a);

PGN_NODISCARD pgn_status pgn_agents_list(pgn_db *db, struct pgn_agents *out);
/*
 * Only the names (v[i].name; hosts NULL, counts 0), sorted, read from
 * the agent table alone: what completion asks for on every TAB.
 */
PGN_NODISCARD pgn_status pgn_agents_names(pgn_db *db, struct pgn_agents *out);

/* Returns PGN_EINVAL (name rule), PGN_EEXIST. */
PGN_NODISCARD pgn_status pgn_agent_add(pgn_db *db, const char *name);

/* Keeps queue and journal. PGN_ENOTFOUND, PGN_EEXIST, PGN_EINVAL. */
PGN_NODISCARD pgn_status pgn_agent_rename(pgn_db *db, const char *from,
    const char *to);

/*
 * Retire an agent: its name is freed, journal and audit rows stay.
 * Refused with PGN_EFULL while messages are queued for it.
 */
PGN_NODISCARD pgn_status pgn_agent_rm(pgn_db *db, const char *name);

/*
 * Bind session 'key' ("<host>:<id>") of 'host' to 'agent' in the current
 * scope, creating the agent if needed; a session already bound keeps
 * its agent, whose name goes to 'bound' (PGN_MAX_NAME + 1 bytes).
 */
PGN_NODISCARD pgn_status pgn_session_bind(pgn_db *db, const char *host,
    const char *key, const char *agent, char *bound);

/* ---- audit --------------------------------------------------------- */

struct pgn_delivery {
	int64_t id;
	int64_t message_id;
	int64_t reply_to;
	int64_t created_ms;
	int64_t delivered_ms;
	int64_t bytes;
	char *scope;
	char *sender;
	char *recipient;
	char *session; /* "" if none */
	char *host;    /* "" if none */
	char *route;
	char *body;
	unsigned char hash[PGN_HASH_BYTES];
};

struct pgn_deliveries {
	struct pgn_delivery *v;
	size_t n;
	size_t cap;
};

void pgn_deliveries_release(struct pgn_deliveries *d);

struct pgn_audit_filter {
	const char *recipient; /* NULL: any */
	const char *sender;    /* NULL: any */
	int64_t since_ms;      /* 0: any */
	size_t limit;          /* 0: PGN_DEFAULT_LIST */
};

/* Deliveries of the current scope, newest first. */
PGN_NODISCARD pgn_status pgn_audit_list(pgn_db *db,
    const struct pgn_audit_filter *f, struct pgn_deliveries *out);

/* One delivery by id, any scope. PGN_ENOTFOUND. */
PGN_NODISCARD pgn_status pgn_audit_get(pgn_db *db, int64_t id,
    struct pgn_deliveries *out);

/*
 * Recompute the whole chain. '*checked' gets the rows checked. On the
 * first row whose hash does not match (edited, deleted before it,
 * reordered) or a missing tail, returns PGN_ETAMPER with its id in
 * '*bad' and the reason in pgn_errmsg().
 */
PGN_NODISCARD pgn_status pgn_audit_verify(pgn_db *db, int64_t *checked,
    int64_t *bad);

/* ---- journal ------------------------------------------------------- */

struct pgn_entry {
	int64_t id;
	int64_t at_ms;
	int64_t message_id; /* 0: none */
	char *kind;         /* sent, delivered, bound, renamed, ... */
	char *peer;         /* other party, "" if none */
	char *detail;       /* session, route, old name; "" if none */
	char *body;         /* message body for sent/delivered, or "" */
};

struct pgn_entries {
	struct pgn_entry *v;
	size_t n;
	size_t cap;
	int64_t earlier; /* pgn_journal_tail: older entries left out */
	int64_t newest;  /* pgn_journal_tail: the newest id, shown or not */
};

void pgn_entries_release(struct pgn_entries *e);

/*
 * Journal entries of 'agent' with id > 'after', oldest first, at most
 * 'limit' (0: PGN_MAX_LIST). PGN_ENOTFOUND if the agent is unknown.
 */
PGN_NODISCARD pgn_status pgn_journal_list(pgn_db *db, const char *agent,
    int64_t after, size_t limit, struct pgn_entries *out);

#define PGN_MAX_EARLIER 100000 /* older journal entries a cut note counts */

/*
 * The newest 'limit' (0: PGN_DEFAULT_LIST, at most PGN_MAX_LIST) journal
 * entries of 'agent' at or after 'since_ms', oldest first, read newest
 * first from the index, so the cost does not grow with the history.
 * 'out->earlier' gets how many older ones (at or after 'since_ms') were
 * left out, counted up to PGN_MAX_EARLIER ("at least" there). The
 * journal is in time order: the walk back stops at the first entry older
 * than 'since_ms'. PGN_ENOTFOUND if the agent is unknown.
 */
PGN_NODISCARD pgn_status pgn_journal_tail(pgn_db *db, const char *agent,
    int64_t since_ms, size_t limit, struct pgn_entries *out);

/* ---- health (health.c): what pigeon doctor reports ---------------- */

struct pgn_health {
	int schema_version;
	char *integrity; /* "ok", or SQLite's first complaint */
	char *server;    /* PostgreSQL: version, host, port, database */
	int64_t page_size;
	int64_t pages;
	int64_t free_pages;
	int64_t scopes;
	int64_t agents;
	int64_t sessions;
	int64_t queued;
	int64_t deliveries;
	int64_t journal;
};

void pgn_health_release(struct pgn_health *h);

/* Run PRAGMA integrity_check and count rows. PGN_EBUSY, PGN_EDB, ... */
PGN_NODISCARD pgn_status pgn_db_health(pgn_db *db, struct pgn_health *h);

/* ---- pigeon watch (watch.c): one read of the scope; a notifier ----- */

#define PGN_WATCH_MAX_ROWS   200    /* rows of each kind one read returns */
#define PGN_WATCH_MAX_AGENTS 1000   /* agents whose state is worked out */
#define PGN_ACTIVE_MS        120000 /* seen this recently: active */

/* What an agent is doing, from its last sighting and its queue. */
typedef enum pgn_agent_state_t {
	PGN_AGENT_NEW,      /* never seen by a hook or a claim */
	PGN_AGENT_ACTIVE,   /* seen within PGN_ACTIVE_MS, nothing queued */
	PGN_AGENT_BEHIND,   /* seen within PGN_ACTIVE_MS, mail queued */
	PGN_AGENT_IDLE,     /* not seen lately, nothing queued */
	PGN_AGENT_AWAY_MAIL /* not seen lately, mail waiting */
} pgn_agent_state_t;

pgn_agent_state_t pgn_agent_state(const struct pgn_agent *a, int64_t now);
const char *pgn_agent_state_name(pgn_agent_state_t s); /* "active", ... */

struct pgn_watch_baton {
	int64_t id;
	char *senders; /* "a,b" */
	char *target;  /* "" : the next new conversation of any agent */
	int64_t updated_ms;
	int64_t expires_ms;
	int64_t notes;
	char *body;
};

struct pgn_watch {
	int64_t read_ms;
	struct pgn_agents agents; /* by name */
	pgn_agent_state_t state[PGN_WATCH_MAX_AGENTS];
	struct pgn_msgs queued;           /* newest first, at most rows */
	int64_t queued_total;             /* in the whole scope */
	struct pgn_deliveries deliveries; /* newest first, at most rows */
	struct pgn_watch_baton *batons;   /* open ones, newest first */
	size_t nbatons;
	int64_t batons_total;
};

/*
 * The scope as pigeon watch shows it: at most 'rows' (1 to
 * PGN_WATCH_MAX_ROWS) of each list. PGN_EINVAL, PGN_EBUSY, PGN_EDB,
 * PGN_ENOMEM. Release with pgn_watch_release (also after a failure).
 */
PGN_NODISCARD pgn_status pgn_watch_read(pgn_db *db, size_t rows,
    struct pgn_watch *out);
void pgn_watch_release(struct pgn_watch *w);

/*
 * A change notifier beside the caller's own descriptors: poll
 * pgn_notify_fd (readable: something may have changed; -1: none, look
 * on a timer) and call pgn_notify_drain before looking again. A wake-up
 * is only a hint; pgn_db_check_file says whether the file was replaced.
 */
struct pgn_notify;
PGN_NODISCARD pgn_status pgn_notify_open(pgn_db *db, struct pgn_notify **out);
int pgn_notify_fd(const struct pgn_notify *n);
void pgn_notify_drain(struct pgn_notify *n);
void pgn_notify_close(struct pgn_notify *n);

/* ---- hosts (host.c): the one table of host facts ------------------- */
/*
 * Everything Pigeon knows of a host is one row of the table in host.c
 * (struct pgn_host_info): how context reaches its model (mechanism),
 * where its config lives, its event name for each facet, the payload
 * keys the hook reads, how a payload is recognised, the envelope the
 * hook prints, trust and permission notes, and the capability cells
 * `pigeon hosts` prints. install.c, doctor, the hook (payload.c,
 * turn.c) read only the row: adding a host is adding an enum value and
 * a row, plus its envelope function if none of host.c's fits
 * (docs/architecture.md, "The host table").
 */

#define PGN_MAX_CONTEXT    6000 /* injected context, bytes */
#define PGN_HOOK_TIMEOUT_S 5    /* timeout written into host configs */

typedef enum pgn_host {
	PGN_HOST_NONE = -1,
	PGN_HOST_CURSOR,
	PGN_HOST_CLAUDE,
	PGN_HOST_CODEX,
	PGN_HOST_GEMINI,
	PGN_HOST_COPILOT, /* GitHub Copilot CLI */
	PGN_HOST_OPENCODE,
	PGN_NHOSTS
} pgn_host;

/*
 * The facets: the moments at which context can reach a model. Each is
 * one hook event of a host (or none), one audit route, one column of
 * `pigeon hosts`.
 */
typedef enum pgn_event {
	PGN_EVENT_NONE = -1,
	PGN_EVENT_SESSION_START,
	PGN_EVENT_PROMPT,
	PGN_EVENT_AFTER_TOOL, /* after each tool call, inside a turn */
	PGN_EVENT_STOP,       /* the agent is about to stop */
	PGN_EVENT_IDLE,       /* its turn has ended: a new one may start */
	PGN_NEVENTS
} pgn_event;

/* How context reaches the host's model (the Coffer seed's three). */
typedef enum pgn_mechanism {
	PGN_MECH_NONE,        /* none Pigeon can use */
	PGN_MECH_COMMAND,     /* the host runs pigeon-hook from its config */
	PGN_MECH_PLUGIN,      /* a plugin file Pigeon drops runs pigeon-hook */
	PGN_MECH_INSTRUCTIONS /* a marked block in an instructions file */
} pgn_mechanism;

typedef enum pgn_config_shape {
	PGN_SHAPE_FLAT,  /* Cursor: {"version":1,"hooks":{E:[{command}]}} */
	PGN_SHAPE_NESTED /* Claude, Codex, Gemini: {"hooks":{E:[{hooks:[...]}]}}
	                  */
} pgn_config_shape;

/* What install does so the host's agent may run pigeon (decision 0073). */
typedef enum pgn_perm {
	PGN_PERM_NONE,   /* nothing: the row's perm_none says why */
	PGN_PERM_RULES,  /* Claude's permissions.allow rules, same file */
	PGN_PERM_ROOT,   /* Codex's writable_roots in config.toml beside */
	PGN_PERM_POLICY, /* Gemini's policy file ~/.gemini/policies/ */
} pgn_perm;

/* How doctor learns whether the host will run hooks it has not trusted. */
typedef enum pgn_trust {
	PGN_TRUST_NONE,      /* it runs them as they are */
	PGN_TRUST_CODEX_TOML /* [hooks.state."FILE:..."] trusted_hash */
} pgn_trust;

/* A capability cell of `pigeon hosts`. */
typedef enum pgn_cap { PGN_CAP_NO, PGN_CAP_PARTIAL, PGN_CAP_YES } pgn_cap;

struct pgn_cell {
	pgn_cap cap;
	/*
	 * Never NULL for a row of the table: the host version and the test
	 * that proved it, or the document's address and the date it was
	 * read (a "no" too: the documentation, flag or issue behind it).
	 */
	const char *evidence;
};

/*
 * The keys the hook reads from a host's JSON payload (string fields;
 * an empty string counts as absent).
 */
struct pgn_payload_keys {
	const char *session[2];    /* the session id: the first present */
	const char *session_strip; /* a prefix dropped from it, or NULL */
	const char *dir;           /* the project directory */
	int dir_first;             /* 1: 'dir' is an array: its first item */
	const char *turn[PGN_NEVENTS]; /* the turn id per event; NULL: none */
	const char *prompt;            /* the submitted prompt */
	/*
	 * A session start begins a new conversation (it may take a baton)
	 * when 'source' is NULL, or its value is one of 'new_sources'.
	 */
	const char *source;
	const char *new_sources[2];
	const char *subagent; /* present: not a top-level session */
};

/*
 * How a payload is recognised when the command names no host. Rows are
 * tried by ascending 'rank' (0: never detected); a row matches when
 * any one of its rules holds. The row with 'fallback' is the answer
 * when none matched.
 */
struct pgn_detect {
	int rank;
	const char *keys[2];  /* these string keys, all present */
	const char *keys2[2]; /* or these */
	int own_event;        /* or its hook_event_name is one of the row's */
	/* or it is one no other row has, or one of the row's with this key */
	int unique_event;
	const char *event_key;
	int fallback;
};

struct pgn_host_info;

/*
 * A host's envelope: the one line (no newline) the hook prints for
 * event 'e' around 'context', or its neutral output when 'context' is
 * NULL or empty; NULL when that is to print nothing ('*st' PGN_OK) or
 * on failure ('*st' PGN_ENOMEM).
 */
typedef char *pgn_envelope_fn(const struct pgn_host_info *hi, pgn_event e,
    const char *context, pgn_status *st);

struct pgn_host_info {
	const char *name;  /* "cursor", ...: the command line's and the key's */
	const char *title; /* "Claude Code": for people */
	pgn_mechanism mechanism;
	/* -- its config (install, doctor) -- */
	pgn_config_shape shape; /* command hooks: the file's JSON shape */
	/*
	 * PGN_MECH_PLUGIN: the plugin file's text, its first line the mark
	 * that makes a file Pigeon's, with @PIGEON_HOOK@ (the hook's path),
	 * @PIGEON_MADE@ (the directories install created) and
	 * @PIGEON_TIMEOUT_MS@ filled in by install (plugin.c).
	 */
	const char *plugin;
	const char *user_env;     /* env var naming the user config dir */
	const char *env_file;     /* file (or plugin) inside user_env's dir */
	const char *user_path;    /* else relative to $HOME */
	const char *project_path; /* relative to the project root */
	int timeout_ms;           /* 1: the host's timeout is in ms */
	int json_comments;        /* 1: its JSON config may hold comments */
	pgn_perm perm[2]; /* the permission edit: [0] user, [1] project */
	const char *perm_none[2]; /* install's line where it is PGN_PERM_NONE */
	const char *perm_brief[2]; /* doctor's */
	pgn_trust trust;
	const char *trust_note[2]; /* install's advice: [0] user, [1] project */
	/* -- its hooks (the hook) -- */
	const char *events[PGN_NEVENTS]; /* its event names; NULL: none */
	struct pgn_payload_keys keys;
	struct pgn_detect detect;
	/*
	 * The name of a host whose hooks this one also runs with its own
	 * payload (Cursor runs Claude's), or NULL: a run named as that host
	 * whose payload matches this row's detection keys prints nothing.
	 */
	const char *replays;
	const char *replay_note; /* doctor's, when both are installed */
	pgn_envelope_fn *envelope;
	/*
	 * How a stop hook makes the host go on with TEXT: "decision" with
	 * this word and "reason" (Claude, Codex "block"; Gemini "deny");
	 * NULL where the envelope has its own form (Cursor's
	 * "followup_message").
	 */
	const char *stop_decision;
	/* -- pigeon hosts: a cell per facet -- */
	struct pgn_cell cells[PGN_NEVENTS];
};

/* The row of 'h' (static), or NULL for PGN_HOST_NONE. */
const struct pgn_host_info *pgn_host_get(pgn_host h);
pgn_host pgn_host_by_name(const char *name);
/* The event of host 'h' named 'name' (case-sensitive), or NONE. */
pgn_event pgn_event_by_name(pgn_host h, const char *name);
/* "session-start", "prompt", "after-tool", "stop", "idle" (static). */
const char *pgn_facet_name(pgn_event e);
/* How many of the facets host 'h' has an event for. */
int pgn_host_nevents(pgn_host h);

/*
 * Every row of the table, for pigeon hosts and doctor: the hook rows
 * (0 .. PGN_NHOSTS - 1, as pgn_host_get), then the hosts Pigeon serves
 * with the instructions block only (mechanism PGN_MECH_INSTRUCTIONS, no
 * events, no config). NULL out of range.
 */
int pgn_host_rows(void);
const struct pgn_host_info *pgn_host_row(int i);
const struct pgn_host_info *pgn_host_row_by_name(const char *name);
/* "yes", "partial", "no"; "command", "plugin", "instructions", "none". */
const char *pgn_cap_name(pgn_cap c);
const char *pgn_mechanism_name(pgn_mechanism m);

/* A mask of mechanisms, for pgn_host_names. */
#define PGN_MECH_BIT(m) (1u << (m))
/* The mechanisms pigeon-hook serves: a command, or a plugin running it. */
#define PGN_MECH_HOOK                                                          \
	(PGN_MECH_BIT(PGN_MECH_COMMAND) | PGN_MECH_BIT(PGN_MECH_PLUGIN))

/*
 * Host names, for messages: "cursor, claude, codex or gemini" of the
 * rows whose mechanism is in mask 'mechs' (0: every row), in table
 * order. Written to 'out', cut to 'len'.
 */
void pgn_host_names(unsigned mechs, char *out, size_t len);

/* "A, B, C or D": host 'h''s event names, cut to 'len'. */
void pgn_host_event_names(pgn_host h, char *out, size_t len);

/*
 * Which host a payload is, by the rows' detection rules (struct
 * pgn_detect): 'event' its hook_event_name (or NULL), 'has' true for a
 * key the payload holds as a non-empty string. 'keys_only' tries only
 * the key rules (no event name, no fallback): PGN_HOST_NONE if none.
 */
pgn_host pgn_host_detect(const char *event,
    int (*has)(const char *key, void *arg), void *arg, int keys_only);

/*
 * The one line a hook prints for host 'h' and event 'e': the row's
 * envelope around 'context', or the neutral output when 'context' is
 * NULL or empty. Returns a string the caller frees, or NULL when the
 * host's neutral output is to print nothing; '*st' gets PGN_ENOMEM on
 * failure, PGN_EINVAL for a host or event out of range.
 */
char *pgn_envelope(pgn_host h, pgn_event e, const char *context,
    pgn_status *st);

/* ---- install (install.c): the one place that edits host configs --- */

#define PGN_MAX_CONFIG (1 << 20) /* a host config file, bytes */
#define PGN_MAX_ERR    1024      /* errbuf size for install */

/*
 * The pigeon CLI that goes with the pigeon-hook at 'hook': 'pigeon' or
 * '../broker/pigeon' (a build tree) beside its real path, resolved and
 * executable; NULL if none (caller frees). The hook names it to the
 * model; install's permission rules name the same.
 */
char *pgn_pigeon_beside(const char *hook);

/* True if 'command' is Pigeon's: its first word's basename is pigeon-hook. */
int pgn_command_is_pigeon(const char *command);

/* The first word of Pigeon's 'command' (caller frees), or NULL. */
char *pgn_command_hook(const char *command);

/*
 * Pure merges over a config file's bytes ('in' NULL: the file is
 * absent). Install adds Pigeon's entries for both events of host 'h'
 * running 'hook' (an absolute path), replacing Pigeon's old ones and
 * keeping every other entry and key in order; uninstall removes them.
 * '*out' (caller frees) is the new content (NULL only when 'in' was
 * NULL and nothing changed; an uninstall that leaves only Pigeon's
 * skeleton returns it, and pgn_install_apply deletes a file Pigeon
 * created); '*changed' says whether it differs from 'in'.
 * Returns PGN_EINVAL (not valid JSON, or not the host's shape; 'errbuf'
 * says where), PGN_ETOOBIG (over PGN_MAX_CONFIG), PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_install_merge(pgn_host h, const char *in,
    size_t len, const char *hook, char **out, int *changed, char *errbuf,
    size_t errlen);
PGN_NODISCARD pgn_status pgn_uninstall_merge(pgn_host h, const char *in,
    size_t len, char **out, int *changed, char *errbuf, size_t errlen);

struct pgn_install {
	pgn_host host;
	const char *project; /* NULL: the user's config */
	const char *hook;    /* absolute path of pigeon-hook */
	int dry_run;
	int remove; /* 1: uninstall */
	/*
	 * 1: also let the host's agent run pigeon send|read|wait|status
	 * (Claude permission rules, Codex writable root, Gemini policy),
	 * or with 'remove' take that away again (docs/decisions/0073).
	 */
	int permissions;
	/*
	 * Claude only: 1 adds the idle wake's Stop entry (asyncRewake), -1
	 * removes it, 0 keeps what is there (docs/decisions/0082).
	 */
	int rewake;
};

struct pgn_install_result {
	char *path; /* the config file */
	int changed;
	char *diff;       /* what changed, as a line diff ("" if none) */
	char *note;       /* host advice (Codex trust), or NULL */
	char *perm_path;  /* the permission edit's own file, or NULL */
	int perm_changed; /* it changes */
	char *perm_diff;  /* its line diff ("" if none) */
	char *perm_what;  /* one line: what the permission edit is, or NULL */
};

void pgn_install_result_release(struct pgn_install_result *r);

/*
 * Install or uninstall Pigeon's hooks in the host's config file: read
 * (refusing invalid JSON, untouched), merge, and unless dry_run write
 * atomically (temp file, fsync, rename) keeping a '.pigeon.bak' of the first
 * original. Uninstall restores the original bytes when nothing else
 * changed since, and removes a file Pigeon created. Returns
 * PGN_EINVAL, PGN_ETOOBIG, PGN_EIO, PGN_ENOMEM with 'errbuf' set.
 */
PGN_NODISCARD pgn_status pgn_install_apply(const struct pgn_install *req,
    struct pgn_install_result *res, char *errbuf, size_t errlen);

struct pgn_install_state {
	char *path; /* the config file */
	int exists;
	char *problem; /* why it cannot be read as the host's config */
	size_t entries[PGN_NEVENTS]; /* Pigeon's entries per event */
	size_t rewake;               /* Claude's idle-wake Stop entries */
	char *hook;                  /* the program of Pigeon's first command */
	char *perm_path;    /* where the permission edit lives, or NULL */
	int perm;           /* 1 in place, 0 not, -1 none for this host */
	char *perm_problem; /* why that file cannot be read, or NULL */
};

void pgn_install_state_release(struct pgn_install_state *s);

/*
 * What the host's config file (user's, or 'project''s) holds of
 * Pigeon's. A file that cannot be read or parsed is reported in
 * s->problem, not as an error. Returns PGN_OK, PGN_EINVAL, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_install_inspect(pgn_host h, const char *project,
    struct pgn_install_state *s);

/* ---- project config (config.c): <project>/.pigeon/config.json ----- */

#define PGN_MAX_PROJECT_CONFIG       (64 * 1024) /* config.json, bytes */
#define PGN_MAX_REMINDER             500  /* promptReminder, characters */
#define PGN_MAX_PROVIDER_ARGS        32   /* promptContext.command entries */
#define PGN_MAX_PROVIDER_ARG         1024 /* bytes of one entry */
#define PGN_PROVIDER_TIMEOUT_MAX     5000 /* timeoutMs: 1..5000 */
#define PGN_PROVIDER_TIMEOUT_DEFAULT 1000
#define PGN_PROVIDER_OUTPUT_MAX      65536 /* maxOutputBytes: 1..65536 */
#define PGN_PROVIDER_OUTPUT_DEFAULT  8192
/* reach: continuations a stop hook may ask in a row, without a prompt */
#define PGN_MAX_AUTO_CONTINUES     20
#define PGN_AUTO_CONTINUES_DEFAULT 3
/* reach.stopWaitMs: within the hook timeout written into host configs */
#define PGN_MAX_STOP_WAIT_MS 3000
/*
 * reach.rewakeWaitS: how long Claude's idle-wake hook (asyncRewake) waits
 * for mail after a turn ended; bounded well below the timeout install
 * writes into its entry, so the hook ends before Claude kills it
 * (docs/decisions/0081).
 */
#define PGN_REWAKE_TIMEOUT_S      600 /* the entry's "timeout" */
#define PGN_MAX_REWAKE_WAIT_S     540
#define PGN_REWAKE_WAIT_S_DEFAULT 300

struct pgn_config {
	char *reminder;         /* the valid one-line reminder, or NULL */
	char *reminder_problem; /* why the reminder is off */
	char **argv;            /* the provider command (NULL-terminated) */
	size_t argc;            /* 0: no provider */
	long timeout_ms;
	size_t max_output;
	char *provider_problem; /* why the provider is off */
	char *problem;          /* the file itself: unreadable, not JSON */
	char *unknown;          /* unknown keys, comma-separated, or NULL */
	int max_auto_continues; /* reach: 0 turns continuing off */
	long stop_wait_ms;      /* reach: a stop waits this long for mail */
	long rewake_wait_s;     /* reach: the idle wake waits this long */
	char *reach_problem;    /* why "reach" is at its defaults */
};

void pgn_config_release(struct pgn_config *c);

/*
 * Parse a project config strictly. Each feature is all or nothing: an
 * invalid reminder leaves only the reminder off, an invalid
 * promptContext leaves only the provider off, invalid JSON both; the
 * reasons go to the *_problem fields. Unknown keys are listed in
 * c->unknown and change nothing. Returns PGN_OK or PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_config_parse(const char *text, size_t len,
    struct pgn_config *c);

/* Read <root>/.pigeon/config.json (absent: nothing configured). */
PGN_NODISCARD pgn_status pgn_config_load(const char *root,
    struct pgn_config *c);

/* ---- provider (provider.c): approval, bounded run, validation ------ */

#define PGN_MAX_PROVIDER_EXE (16 << 20) /* executable hashed, bytes */
#define PGN_MAX_APPROVALS    1000       /* projects in the state */

typedef enum pgn_provider_status {
	PGN_PROVIDER_OFF, /* no provider configured */
	PGN_PROVIDER_OK,
	PGN_PROVIDER_EMPTY, /* valid, empty context */
	PGN_PROVIDER_TIMEOUT,
	PGN_PROVIDER_TOO_BIG,
	PGN_PROVIDER_INVALID,
	PGN_PROVIDER_CRASHED, /* non-zero exit, signal, or no exec */
	PGN_PROVIDER_NOT_ALLOWED,
	PGN_PROVIDER_ERROR /* Pigeon could not run it */
} pgn_provider_status;

/* "ok", "timeout", "too-big", "invalid", "crashed", "not-allowed", ... */
const char *pgn_provider_status_name(pgn_provider_status st);

struct pgn_approval {
	int allowed;
	char why[512];   /* why not allowed (or "allowed at ...") */
	char *path;      /* the resolved executable, or NULL */
	char digest[65]; /* BLAKE2b-256 of its content, hex */
};

void pgn_approval_release(struct pgn_approval *a);

/*
 * Is the provider of 'cfg' approved for project 'root' under the key
 * and state in 'home'? Approval is a keyed BLAKE2b MAC over the root,
 * the provider config and the executable's content; a change to any
 * withdraws it, and a->why says which. State that fails to decrypt
 * counts as no approval. Returns PGN_OK (see a->allowed), PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_provider_check(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a);

/* Record an approval (creating the key); PGN_EINVAL with 'err' set. */
PGN_NODISCARD pgn_status pgn_provider_allow(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a, char *err,
    size_t errlen);

/* Remove the approval of 'root'; '*removed' says whether there was one. */
PGN_NODISCARD pgn_status pgn_provider_deny(const char *home, const char *root,
    int *removed, char *err, size_t errlen);

struct pgn_provider_request {
	const char *host;
	const char *session;
	const char *turn;
	const char *cwd;
	const char *prompt;
};

struct pgn_provider_result {
	pgn_provider_status status;
	char *context; /* validated, or NULL */
	size_t bytes;  /* output bytes read */
	long ms;
	char fingerprint[2 * 16 + 1]; /* keyed, hex */
	char why[256];
};

void pgn_provider_result_release(struct pgn_provider_result *r);

/*
 * Run the approved provider of 'cfg' in 'root': no shell, its own
 * process group, an allow-listed environment, the request as one JSON
 * object on stdin, stderr discarded. Past min(cfg->timeout_ms,
 * 'budget_ms') or cfg->max_output the group is killed. Only output
 * passing pgn_provider_validate is kept. Never fails the caller:
 * everything is in r->status.
 */
void pgn_provider_run(const char *home, const char *root,
    const struct pgn_config *cfg, const struct pgn_provider_request *rq,
    long budget_ms, struct pgn_provider_result *r);

/*
 * Validate provider output: exactly {"schema":"pigeon.prompt-context/v1",
 * "context":STRING} (whitespace around it allowed), the context valid
 * UTF-8 with no control character but newline and tab. '*context' (the
 * caller's) gets it. Returns PGN_EINVAL with 'why' set.
 */
PGN_NODISCARD pgn_status pgn_provider_validate(const char *out, size_t len,
    char **context, char *why, size_t whylen);

#endif /* PIGEON_H */
