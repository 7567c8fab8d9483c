/*
 * libpigeon: the mailbox of Pigeon. Owns scopes, agents, sessions,
 * messages, the atomic claim, the chained audit and the journals.
 * The library never prints, exits or reads stdin; binaries do.
 * Ownership, everywhere: strings a caller passes are borrowed, never
 * kept past the call; what a function hands back is the caller's, freed
 * by the matching _release (or free() where it says so). The host
 * table is pigeon/hosts.h, install, config and the provider
 * pigeon/setup.h, the hook's turn pigeon/hook.h.
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

/* Of a recipient's PGN_MAX_PENDING, what one sender may hold (0135). */
#define PGN_MAX_PENDING_FROM (PGN_MAX_PENDING / 2)

typedef enum pgn_status {
	PGN_OK = 0,
	PGN_EINVAL,    /* bad caller input; message names the field */
	PGN_ETOOBIG,   /* a documented limit was exceeded */
	PGN_ENOTFOUND, /* no such agent, message or delivery */
	PGN_EEXIST,    /* name already taken */
	PGN_EFULL,     /* recipient over its pending cap, or sender's share */
	PGN_EBUSY,     /* write lock not acquired before the deadline */
	PGN_ECORRUPT,  /* not a database, or damaged */
	PGN_ETOONEW,   /* schema newer than this build */
	PGN_EDB,       /* unexpected SQLite result */
	PGN_EIO,       /* file system error */
	PGN_ENOMEM,
	PGN_ETAMPER, /* audit chain broken */
} pgn_status;

/* The one error shape of a function without a handle (defined below). */
struct pgn_err;

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
 * is tightened to 0700. Returns PGN_EIO (another user's home:
 * PGN_HINT_HOME_OWNER) or PGN_ENOMEM, with 'err' set.
 */
PGN_NODISCARD pgn_status pgn_home_ensure(const char *dir, struct pgn_err *err);

/*
 * Resolve the database path: 'flag' (a front end's choice) if not NULL,
 * else $PIGEON_DB, else <home>/pigeon.db (creating home as
 * pgn_home_ensure does). '*path' is the caller's. On failure 'err' says
 * why: PGN_ETOOBIG, PGN_EINVAL (no home), or as pgn_home_ensure.
 */
PGN_NODISCARD pgn_status pgn_db_path(const char *flag, char **path,
    struct pgn_err *err);
/*
 * The same for a caller that made the state home 'home' already (the
 * hook): $PIGEON_DB, else <home>/pigeon.db, nothing created. PGN_EINVAL
 * when neither ('home' NULL), PGN_ETOOBIG, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_db_path_in(const char *home, char **path);

/*
 * The pigeon CLI that goes with the pigeon-hook at 'hook': 'pigeon' or
 * '../cli/pigeon' (a build tree) beside its real path, resolved and
 * executable; NULL if none (caller frees). The hook names it to the
 * model; install's permission rules name the same.
 */
char *pgn_pigeon_beside(const char *hook);

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
 * would refuse, over a bound), 'warn' says so in one line, never
 * quoting the url, and the key is the root all the same; else its
 * message is empty ('warn' is a warning: set with PGN_OK). '*key' is
 * the caller's (free()). Returns PGN_OK or PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_scope_key(const char *root, char **key,
    struct pgn_err *warn);

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
 * per hook or CLI process (docs/decisions/0020), and its small blocks
 * from an arena without locks, 15 % less again (0145). Does nothing
 * once SQLite is in use. Never call it in a program that has threads.
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
	/* install, the plugin drop and the provider (docs/decisions/0151): */
	PGN_HINT_PERM_AGAIN, /* try again, or install without permissions */
	PGN_HINT_PERM_FIX,   /* fix that file, or install without them */
	PGN_HINT_PERM_MOVE,  /* move that file away, or install without them */
	PGN_HINT_PLUGIN_DIR, /* make it a directory, or install in a project */
	PGN_HINT_INSTALL_AGAIN, /* move it away, then install host 'arg' again
	                         */
	PGN_HINT_ALLOW,         /* allow the provider in the project */
	PGN_HINT_ALLOW_AGAIN,  /* the approval is void: allow the provider again
	                        */
	PGN_HINT_REALLOW,      /* an approval that no longer matches: again */
	PGN_HINT_REVIEW_ALLOW, /* what was allowed changed: review, allow again
	                        */
	PGN_HINT_HOME_OWNER,   /* run as the home's owner, or another home */
	PGN_HINT_SENDER,       /* name the sender */
	PGN_HINT_DROP_FROM,    /* the session sends as its agent: name none */
	PGN_HINT_STATUS,       /* look the message id 'arg' up */
	PGN_HINT_SESSION,    /* run in an agent's session, or name the agent */
	PGN_HINT_BATONS,     /* list the batons */
	PGN_HINT_BATON_FULL, /* shorten the note, or drop baton 'arg' first */
	PGN_HINT_NO_PG,      /* rebuild with libpq, or use an SQLite file */
} pgn_hint;

pgn_hint pgn_errhint(const pgn_db *db, const char **arg);

#define PGN_MAX_ERRMSG 1024 /* one error line, bytes with its NUL */

/*
 * The one error shape (docs/decisions/0146): a one-line fact in 'msg'
 * (no command or flag of any front end in it) and the remedy 'hint'
 * about the name 'arg', which each front end words in its own terms. A
 * database handle keeps one (pgn_db_err); a function without a handle
 * fills the 'struct pgn_err *err' its caller passes (never NULL), and
 * leaves it untouched on success.
 */
struct pgn_err {
	pgn_hint hint;
	char arg[PGN_MAX_NAME + 1];
	char msg[PGN_MAX_ERRMSG];
};

/* Clear 'err' (no message, no hint). */
void pgn_err_clear(struct pgn_err *err);
/* The error recorded on 'db'; borrowed, valid until the next call. */
const struct pgn_err *pgn_db_err(const pgn_db *db);

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

/*
 * 1 when the last call failed at a commit whose outcome is unknown: the
 * answer was lost and the server could not be asked whether it took
 * (PostgreSQL only; docs/decisions/0131). A failed SQLite commit is
 * rolled back, never unknown.
 */
int pgn_db_outcome_unknown(const pgn_db *db);

/* Clock used for stored times, in ms since the epoch. */
int64_t pgn_now_ms(void);

/* Monotonic clock for deadlines, in ms. */
int64_t pgn_mono_ms(void);

/* ---- names and text ------------------------------------------------ */

/*
 * Check and case-fold an agent name into 'out' (PGN_MAX_NAME + 1 bytes):
 * 1..PGN_MAX_NAME of [a-z0-9._-], first a letter or digit, not "all".
 * Returns PGN_EINVAL with the broken rule in 'err'.
 */
PGN_NODISCARD pgn_status pgn_name_check(const char *in, char *out,
    struct pgn_err *err);

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

/*
 * A message's priority (decision 0158): claimed highest first. Urgent
 * is marked and taken at every hook event that carries context; low
 * waits for a session start, a prompt or a read, and never continues a
 * stop or wakes an agent. Stored as these values; 0 is the default.
 */
typedef enum pgn_priority {
	PGN_PRIORITY_LOW = -1,
	PGN_PRIORITY_NORMAL = 0,
	PGN_PRIORITY_URGENT = 1,
} pgn_priority;

/* Urgent messages one sender may have queued for one recipient. */
#define PGN_MAX_PENDING_URGENT 20

/* ---- waking an idle agent (decisions 0175-0177) -------------------- */

#define PGN_WAKE_MAX      PGN_MAX_RECIPIENTS /* rings one send makes */
#define PGN_WAKE_SESSIONS 8 /* a recipient's sessions looked at */
#define PGN_WAKE_SEEN_MS  (7LL * 86400000) /* sessions seen this recently */
/* A ring with no delivery by then is unheard (and may ring again). */
#define PGN_WAKE_HEARD_MS 120000
#define PGN_WAKE_LOG_MAX  (1 << 20) /* wake.log's bytes, then wake.log.1 */
#define PGN_WAKE_LOG_LINE 512       /* one wake.log line, bytes */

/*
 * The doorbell across machines (PostgreSQL, decision 0210). A send rings
 * only a session of its own machine; `pigeon wake --follow` on the
 * session's machine rings the rest. pgn_wake_listen starts listening
 * for queued messages that may wake and looks at each recipient's
 * newest queued one; pgn_wake_next sleeps up to 'ms' (or until a signal)
 * for the next, and rings as their sends would have on this machine
 * (never low, reach.wake, the governor's cap, one ring outstanding).
 * '*rung' counts the frames written. PGN_EINVAL on SQLite (the sender's
 * machine is the only one); PGN_EIO when the connection is lost.
 */
#define PGN_WAKE_BELL_BATCH     64    /* message ids one look takes */
#define PGN_WAKE_FOLLOW_TICK_MS 60000 /* a follower's longest sleep */
PGN_NODISCARD pgn_status pgn_wake_listen(pgn_db *db, size_t *rung);
PGN_NODISCARD pgn_status pgn_wake_next(pgn_db *db, int64_t ms, size_t *rung);

/* "urgent", "normal", "low" (static); "normal" for anything else. */
const char *pgn_priority_name(int priority);
/* The priority named 's' into '*out'; PGN_EINVAL with the three words. */
PGN_NODISCARD pgn_status pgn_priority_parse(const char *s, int *out,
    struct pgn_err *err);

struct pgn_msg {
	int64_t id;
	int64_t reply_to; /* 0: none */
	int64_t created_ms;
	char *sender;
	char *recipient;
	char *body;
	size_t body_len;
	/* Acknowledgements and threads (decision 0157): */
	int64_t thread;   /* its thread: its first message's id */
	int64_t ack_ms;   /* 0, or an acknowledgement is asked within this */
	int reminder;     /* shown again: its acknowledgement is overdue */
	int priority;     /* pgn_priority */
	char *group;      /* the group it was sent to (--to @NAME), or NULL */
	int64_t woken_ms; /* pgn_watch_read: its send rang a doorbell (0177) */
	/* pgn_watch_read: by which ("claude-socket", "codex-queue"; static,
	 * from the host table), NULL when not rung or a name it lacks. */
	const char *woken_via;
};

struct pgn_msgs {
	struct pgn_msg *v;
	size_t n;
	size_t cap;
	size_t left; /* claim: messages still queued after it */
};

void pgn_msgs_release(struct pgn_msgs *m);

struct pgn_send {
	const char *from; /* sender asked for (--from), or NULL */
	/* recipient names, "all" = every other, "@NAME" = group's members */
	const char *const *to;
	size_t nto;
	const char *body;
	size_t body_len;
	int64_t reply_to; /* 0: none; else a message of the scope */
	int create;       /* queue for unknown names (new agents) */
	/*
	 * The sending process's session ($PIGEON_SESSION), or NULL. Bound
	 * to an agent of the scope, that agent is the sender: 'from' may
	 * only name it (docs/decisions/0134).
	 */
	const char *session;
	/* The sender when neither names one ($PIGEON_AGENT, "user"). */
	const char *from_default;
	int need_mailbox; /* the sender must be an agent of the scope */
	/*
	 * 0, or ask for an acknowledgement within this many ms of the
	 * delivery (PGN_ACK_MIN_MS .. PGN_ACK_MAX_MS; decision 0157).
	 */
	int64_t ack_ms;
	int priority; /* pgn_priority; 0: normal */
};

struct pgn_sent {
	int64_t id;
	char to[PGN_MAX_NAME + 1];
	char from[PGN_MAX_NAME + 1]; /* the sender, as stored */
};

/*
 * Queue one message per recipient, all or nothing, in one transaction.
 * Ids and recipients in order go to 'sent' (caller-owned, 'maxsent'
 * slots); '*nsent' gets the count. Returns PGN_EINVAL (bad name, UTF-8, NUL,
 * empty body, reply_to unknown, no sender, a 'from' other than the
 * session's agent), PGN_ETOOBIG (body over PGN_MAX_BODY, more recipients
 * than 'maxsent'), PGN_ENOTFOUND (unknown recipient without 'create', or
 * with 'need_mailbox' a sender that is no agent; the message lists known
 * names; an unknown group), PGN_EFULL (a recipient holds PGN_MAX_PENDING
 * queued, or PGN_MAX_PENDING_FROM from this sender, or an urgent message
 * over PGN_MAX_PENDING_URGENT from this sender), PGN_EBUSY, PGN_EDB.
 * "@NAME" queues one message per member of group NAME, each recorded
 * with the group's name (pgn_msg.group).
 */
PGN_NODISCARD pgn_status pgn_send(pgn_db *db, const struct pgn_send *req,
    struct pgn_sent *sent, size_t maxsent, size_t *nsent);

/*
 * Who acts for a front end told once, not per call (pigeon mcp), as
 * pgn_send's sender is found: the agent the database binds 'session'
 * to ('agent' may then name only it), else 'agent', else
 * 'agent_default', into 'out'. Returns PGN_EINVAL (a bad name, none
 * given: PGN_HINT_SENDER, another than the session's: PGN_HINT_DROP_FROM),
 * PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_actor(pgn_db *db, const char *agent,
    const char *session, const char *agent_default, char out[PGN_MAX_NAME + 1]);

/* Queued messages of 'agent', in claim order, unclaimed. */
PGN_NODISCARD pgn_status pgn_inbox(pgn_db *db, const char *agent,
    struct pgn_msgs *out);

/* ---- groups (group.c, decision 0158) ------------------------------- */

#define PGN_MAX_GROUP_MEMBERS 64  /* agents in one group */
#define PGN_MAX_GROUPS        256 /* groups in one scope */
#define PGN_MAX_AGENT_GROUPS  32  /* groups one agent is in */

/* One member of one group: a listing is one row per member. */
struct pgn_group_member {
	char group[PGN_MAX_NAME + 1];
	char agent[PGN_MAX_NAME + 1];
};

struct pgn_groups {
	struct pgn_group_member *v; /* by group, then agent */
	size_t n;
	size_t cap;
};

void pgn_groups_release(struct pgn_groups *g);

/*
 * Add agents[0..n) (n >= 1, agents of the scope) to group 'name' of the
 * scope, making it if new; a member already in stays. Group names follow
 * the agents' rules and may not be an active agent's name. All or
 * nothing. Returns PGN_EINVAL (a bad name, n 0), PGN_EEXIST (an agent
 * has the name), PGN_ENOTFOUND (an unknown agent), PGN_ETOOBIG (over
 * PGN_MAX_GROUP_MEMBERS, PGN_MAX_GROUPS or an agent's
 * PGN_MAX_AGENT_GROUPS), PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_group_add(pgn_db *db, const char *name,
    const char *const *agents, size_t n);

/*
 * Remove agents[0..n) from group 'name', or with n 0 the whole group; a
 * group without members is gone. Returns PGN_ENOTFOUND (no such group,
 * an agent not in it), PGN_EINVAL, PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_group_rm(pgn_db *db, const char *name,
    const char *const *agents, size_t n);

/* The scope's groups and their active members, by name. */
PGN_NODISCARD pgn_status pgn_groups_list(pgn_db *db, struct pgn_groups *out);

/* Estimated rendered size of a message; used as the claim's cost. */
typedef size_t pgn_cost_fn(const struct pgn_msg *m, void *arg);

struct pgn_claim {
	const char *agent;
	const char *session; /* "<host>:<id>" or NULL */
	const char *host;    /* "cursor", ..., or NULL */
	const char *route;   /* "session-start", "prompt", "cli", "mcp" */
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

/* ---- acknowledgements and threads (ack.c, decision 0157) ---------- */

#define PGN_ACK_DEFAULT_MS (30 * 60 * 1000)     /* send --ack */
#define PGN_ACK_MIN_MS     1000                 /* --ack-within, least */
#define PGN_ACK_MAX_MS     (7 * 24 * 3600000LL) /* --ack-within, most */
#define PGN_MAX_ACK_TEXT   1024                 /* pigeon ack ID TEXT, bytes */
#define PGN_MAX_THREAD     1000 /* messages pgn_thread lists, oldest first */

/* Who acknowledges which message, resolved as pgn_send's sender is. */
struct pgn_ack {
	int64_t id;
	const char *text; /* NULL or "": none */
	size_t text_len;
	const char *from;         /* as pgn_send */
	const char *session;      /* as pgn_send */
	const char *from_default; /* as pgn_send */
};

struct pgn_acked {
	char agent[PGN_MAX_NAME + 1];  /* who acknowledged */
	char sender[PGN_MAX_NAME + 1]; /* the message's sender */
	int already;      /* acknowledged before: the first one is kept */
	int64_t acked_ms; /* the acknowledgement kept */
};

/*
 * Acknowledge message req->id of the current scope as its recipient:
 * the time and text are stored and journalled for the recipient, once;
 * a second acknowledgement changes nothing (out->already, with the
 * first's time). Returns PGN_EINVAL (id below 1, text not UTF-8 or with
 * a NUL, no actor, the actor is not the recipient), PGN_ETOOBIG (text
 * over PGN_MAX_ACK_TEXT), PGN_ENOTFOUND (no message req->id in the
 * scope), PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_ack(pgn_db *db, const struct pgn_ack *req,
    struct pgn_acked *out);

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
 * once matching mail is queued. With claim.reply_to, only a reply from
 * the recipient of that message matches (docs/decisions/0134).
 * Returns PGN_EINVAL (timeout out of range, a bad name, claim.from not
 * that recipient), PGN_ENOTFOUND (no such agent, no message reply_to in
 * the scope), PGN_EIO (the database file was replaced or removed while
 * waiting), PGN_EBUSY, PGN_EDB, PGN_ENOMEM.
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
	/* Acknowledgements and threads (decision 0157): */
	int64_t thread;      /* its thread: its first message's id */
	int64_t ack_ms;      /* 0: no acknowledgement asked */
	int64_t acked_ms;    /* 0: not acknowledged */
	int64_t ack_reply;   /* acknowledged by this reply, or 0 */
	int64_t reminded_ms; /* 0: no reminder shown */
	int overdue;         /* asked, delivered, not acknowledged in time */
	char *ack_text;      /* NULL: none; free() (pgn_msg_status_release) */
	char *body;          /* pgn_thread only, else NULL; freed the same */
	/* Priority and group (decision 0158): */
	int priority;                 /* pgn_priority */
	char group[PGN_MAX_NAME + 1]; /* sent to @group: its name, else "" */
	/* Its send rang an idle session's doorbell (0177): pgn_msg_status. */
	int64_t woken_ms;   /* 0: not rung */
	char woken_via[32]; /* the mechanism: "claude-socket" */
	int unheard;        /* rung, and no delivery within PGN_WAKE_HEARD_MS */
};

/*
 * JSON (decision 0216): one shape for every reader of a message, `pigeon
 * read/wait/inbox --json` and the MCP tools alike: {"id", "from", "to",
 * "created", "reply_to", "thread", "ack_within_ms", "body", "priority",
 * "group"}, absent values as explicit nulls; a status as `pigeon status
 * --json` shows it. A new cJSON object (cJSON_Delete), NULL on ENOMEM.
 */
struct cJSON;
struct cJSON *pgn_msg_json(const struct pgn_msg *m);
struct cJSON *pgn_msg_status_json(const struct pgn_msg_status *s);
/* "unknown", "queued", "woken", "delivered", "overdue", "acknowledged". */
const char *pgn_msg_state(const struct pgn_msg_status *s);

/*
 * Look up ids[0..n) (n <= PGN_MAX_STATUS_IDS) in one read: queued (since
 * when, for whom) or delivered (when, to which session and host, by which
 * route, from the audit). An unknown id is not an error: out[i].found is
 * 0. Returns PGN_EINVAL (n is 0 or an id below 1), PGN_ETOOBIG (over
 * PGN_MAX_STATUS_IDS), PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_msg_status(pgn_db *db, const int64_t *ids,
    size_t n, struct pgn_msg_status *out);
/* Free the ack texts of out[0..n) (safe on a failed or zeroed call). */
void pgn_msg_status_release(struct pgn_msg_status *out, size_t n);

/*
 * Wait until message 'id' of the current scope is acknowledged (its
 * recipient's pgn_ack, or its reply), as pgn_wait waits: no busy loop,
 * at most 'timeout_ms' (1 .. PGN_WAIT_MAX_MS). '*acked' is 1 once it is,
 * 0 after the timeout or when 'cancel' said so. Returns PGN_EINVAL (bad
 * id or timeout), PGN_ENOTFOUND (no message 'id' in the scope), PGN_EIO,
 * PGN_EBUSY, PGN_EDB.
 */
PGN_NODISCARD pgn_status pgn_wait_ack(pgn_db *db, int64_t id,
    int64_t timeout_ms, int (*cancel)(void *arg), void *cancel_arg, int *acked);

/*
 * The conversation message 'id' belongs to, in the current scope: its
 * thread's messages oldest first (at most PGN_MAX_THREAD), each as
 * pgn_msg_status describes it. '*out' (n entries) is the caller's:
 * pgn_msg_status_release then free(). '*more' is 1 when the thread had
 * more. Returns PGN_EINVAL (id below 1), PGN_ENOTFOUND (no such
 * message), PGN_EBUSY, PGN_EDB, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_thread(pgn_db *db, int64_t id,
    struct pgn_msg_status **out, size_t *n, int *more);

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
 * pgn_agent_rm, after releasing the agent's leases (each journalled, as
 * pigeon lease release --all does; '*leases' gets how many): what
 * pigeon agent rm and prune do (store/retire.c, decision 0184), in one
 * transaction (decision 0206). Queued mail refuses it (PGN_EFULL), leases
 * untouched. 'why' (NULL: none) is the detail of the journal's 'removed'
 * entry.
 */
PGN_NODISCARD pgn_status pgn_agent_retire(pgn_db *db, const char *name,
    const char *why, size_t *leases);

/* A generated agent idles this long before prune retires it. */
#define PGN_PRUNE_IDLE_DEFAULT_MS (7LL * 24 * 3600 * 1000)

/*
 * The agents of the scope made for an unnamed session (a generated name,
 * created by a session's hook) with nothing queued and neither a
 * session nor any other sign of life since 'idle_before_ms': listed in
 * 'out' (names only), and unless 'dry_run' retired (pgn_agent_retire).
 * One that mail reached meanwhile is left and not listed.
 */
PGN_NODISCARD pgn_status pgn_agents_prune(pgn_db *db, int64_t idle_before_ms,
    int dry_run, struct pgn_agents *out);

/*
 * Move the scope keyed 'from' to the current scope's key (pigeon scope
 * move, decision 0185): every agent, message, lease, baton and journal
 * row follows, as they name the scope by id. PGN_ENOTFOUND: no scope
 * 'from'; PGN_EEXIST: the current key has a scope already; PGN_EFULL:
 * 'from' holds live leases; PGN_EINVAL: either is the global scope, or
 * they are the same.
 */
PGN_NODISCARD pgn_status pgn_scope_move(pgn_db *db, const char *from);

/* The automatic prune runs at most this often per database and scope. */
#define PGN_AUTOPRUNE_EVERY_MS (24LL * 3600 * 1000)
/* A stamp this far in the future (a clock set back) makes it due. */
#define PGN_AUTOPRUNE_SKEW_MS (60LL * 1000)

/*
 * The automatic prune (decision 0228): pgn_agents_prune of the agents
 * idle for 'days' (0: never), at most once per PGN_AUTOPRUNE_EVERY_MS
 * for this database and scope on this machine (a stamp in the state
 * home, renewed first); not due, or no state home: nothing, PGN_OK.
 * Run by pigeon send and pigeon agents, never by the hook.
 */
PGN_NODISCARD pgn_status pgn_agents_autoprune(pgn_db *db, long days,
    int64_t now_ms, struct pgn_agents *out);

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
	int64_t thread; /* its message's thread (0157); 0: unknown */
	int priority;   /* the message's (not chained: decision 0158) */
	char *group;    /* the group it was sent to, or NULL */
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
/*
 * pgn_audit_list handing each delivery to 'fn' as it is read, copying
 * nothing (pigeon web writes it straight into its answer, decision
 * 0255): its strings are borrowed, valid during the call only.
 * fn(arg, NULL) comes first and again whenever the read starts over:
 * forget the rows given so far. A status other than PGN_OK from 'fn'
 * ends the read with it.
 */
typedef pgn_status pgn_delivery_fn(void *arg, const struct pgn_delivery *d);
PGN_NODISCARD pgn_status pgn_audit_list_each(pgn_db *db,
    const struct pgn_audit_filter *f, pgn_delivery_fn *fn, void *arg);

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

struct pgn_lease; /* pigeon/lease.h */

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
	/* live leases, by holder then pattern (pigeon/lease.h, 0155) */
	struct pgn_lease *leases;
	size_t nleases;
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

#endif /* PIGEON_H */
