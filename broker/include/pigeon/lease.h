/*
 * Path leases (lease.c, docs/decisions/0155): an agent's claim on the
 * paths a gitignore-style pattern covers in its scope ("I am editing
 * everything below src/api"), exclusive or shared, for a bounded time. Taken,
 * renewed and released under the store's writer lock, each change a
 * journal entry of the holder; the before-tool hook asks which live
 * exclusive lease of another agent covers a path (pgn_lease_blocking),
 * and first, without opening the database, whether the scope has a
 * live lease at all (pgn_lease_none_live). Ownership as in pigeon.h.
 */
#ifndef PIGEON_LEASE_H
#define PIGEON_LEASE_H

#include <stddef.h>
#include <stdint.h>

#include "pigeon/pigeon.h"

/* Bytes of a lease pattern as given (without its NUL); base/glob.c. */
#define PGN_MAX_LEASE_PATTERN 512
/*
 * Bytes of a normalized pattern with its NUL: normalizing adds at most
 * five bytes (a trailing slash gains two stars, an unanchored pattern a
 * leading '**' and its slash), so every valid pattern fits.
 */
#define PGN_LEASE_NORM_SIZE (PGN_MAX_LEASE_PATTERN + 8)

#define PGN_LEASE_TTL_DEFAULT_MS (30 * 60 * 1000)     /* 30 min */
#define PGN_LEASE_TTL_MAX_MS     (8 * 60 * 60 * 1000) /* 8 h */
#define PGN_LEASE_TTL_MIN_MS     1000                 /* 1 s */
#define PGN_MAX_LEASE_REASON     256 /* bytes of a lease's reason */
#define PGN_MAX_LEASE_PATTERNS   16  /* patterns one take or release names */
/*
 * Leases one scope holds, live or expired and not yet swept: bounds the
 * overlap checks of a take (each new pattern against each of them,
 * under the writer lock) and what the hook reads.
 */
#define PGN_MAX_LEASES 256
/* Slots of the lease stamp beside the database (see pgn_lease_none_live) */
#define PGN_LEASE_STAMP_SLOTS 64
/*
 * Bytes of the lease stamp (decision 0160): its header and the live
 * exclusive leases' normal forms. Leases that do not fit are left out
 * and the stamp says so: a scope with a live lease then asks the
 * database. The hook reads the stamp into a buffer of this size.
 */
#define PGN_LEASE_STAMP_MAX 32768

/* One lease as stored. */
struct pgn_lease {
	int64_t id;
	char holder[PGN_MAX_NAME + 1];
	char pattern[PGN_MAX_LEASE_PATTERN + 1]; /* as given: what is shown */
	char norm[PGN_LEASE_NORM_SIZE];          /* pgn_glob_check's form */
	char reason[PGN_MAX_LEASE_REASON + 1];   /* "" if none */
	int shared;
	int64_t created_ms; /* first taken; a renewal keeps it */
	int64_t expires_ms;
};

struct pgn_leases {
	struct pgn_lease *v;
	size_t n;
	size_t cap;
};

void pgn_leases_release(struct pgn_leases *l);

/* Live at 'now': not expired (an expired lease is never enforced). */
int pgn_lease_live(const struct pgn_lease *l, int64_t now_ms);

/*
 * Who acts (docs/decisions/0134, as pgn_send's sender): the agent the
 * database binds 'session' to ($PIGEON_SESSION; 'agent' may then name
 * only it), else 'agent' (--from), else 'agent_default'
 * ($PIGEON_AGENT). It must be an agent of the current scope.
 */
struct pgn_lease_actor {
	const char *session;
	const char *agent;
	const char *agent_default;
};

struct pgn_lease_take {
	struct pgn_lease_actor who;
	/*
	 * Patterns relative to the scope root (1 to
	 * PGN_MAX_LEASE_PATTERNS): the caller first makes an absolute path
	 * inside the scope relative (pgn_lease_relative).
	 */
	const char *const *patterns;
	size_t npatterns;
	int64_t ttl_ms;     /* 0: PGN_LEASE_TTL_DEFAULT_MS */
	const char *reason; /* NULL: none (a renewal keeps its reason) */
	int shared;
	/*
	 * 0: refuse at once when held; else wait up to this long (at most
	 * PGN_WAIT_MAX_MS) for the holders to release or their leases to
	 * expire, woken as pgn_wait is.
	 */
	int64_t wait_ms;
	int (*cancel)(void *arg); /* NULL, or true to stop waiting */
	void *cancel_arg;
};

struct pgn_lease_taken {
	char agent[PGN_MAX_NAME + 1]; /* who acted */
	/* Taken: one lease per pattern, as stored after the take. */
	struct pgn_leases leases;
	size_t renewed; /* of them, already held by the agent: renewed */
	/*
	 * Refused: a live lease of another agent in the way (an exclusive
	 * one, or any one for an exclusive take) and the pattern of the
	 * take it overlaps; nothing was stored.
	 */
	int held;
	struct pgn_lease blocker;
	char wanted[PGN_MAX_LEASE_PATTERN + 1];
};

/*
 * Take (or renew: same normal form, same agent) a lease on each pattern,
 * all or nothing, in one write transaction that first sweeps the
 * scope's expired leases (each a journal entry "expired") and then
 * checks every new pattern against every live lease of the scope with
 * pgn_glob_overlap: two overlapping exclusive takes never both succeed,
 * from any number of processes. A refusal is PGN_OK with out->held set.
 * Returns PGN_EINVAL (a bad pattern, one outside the scope, a TTL out of
 * range, a reason not UTF-8 or with a control byte, no agent, a 'who'
 * other than the session's agent), PGN_ETOOBIG (too many patterns, a
 * pattern or reason over its bound, the scope's PGN_MAX_LEASES),
 * PGN_ENOTFOUND (the agent is no agent of the scope), PGN_EBUSY,
 * PGN_EDB, PGN_ENOMEM. Release out with pgn_lease_taken_release.
 */
PGN_NODISCARD pgn_status pgn_lease_take(pgn_db *db,
    const struct pgn_lease_take *req, struct pgn_lease_taken *out);
void pgn_lease_taken_release(struct pgn_lease_taken *t);

/*
 * Release the agent's leases on 'patterns' (compared by normal form), or
 * with 'all' every lease it holds in the scope; expired ones are swept
 * first. '*released' gets the count. All or nothing: a pattern the agent
 * holds no lease on is PGN_ENOTFOUND and nothing is released. Each
 * release is a journal entry. PGN_EINVAL, PGN_ETOOBIG as for a take.
 */
PGN_NODISCARD pgn_status pgn_lease_release(pgn_db *db,
    const struct pgn_lease_actor *who, const char *const *patterns,
    size_t npatterns, int all, size_t *released);

/*
 * The scope's leases by holder, then pattern: those of 'agent' (NULL:
 * every agent), live ones only unless 'expired' (then also those expired
 * and not yet swept). PGN_ENOTFOUND for an unknown 'agent'.
 */
PGN_NODISCARD pgn_status pgn_lease_list(pgn_db *db, const char *agent,
    int expired, struct pgn_leases *out);

/*
 * What blocks a write (the before-tool hook): a live exclusive lease of
 * an agent other than the acting one that covers 'path'.
 */
struct pgn_lease_hit {
	int64_t id;
	char holder[PGN_MAX_NAME + 1];
	char pattern[PGN_MAX_LEASE_PATTERN + 1]; /* as the holder gave it */
	char reason[PGN_MAX_LEASE_REASON + 1];   /* "" if none */
	int64_t expires_ms;
};

/*
 * In the current scope, one read, no lock, nothing written: '*found' 1
 * and 'hit' filled when a live exclusive lease of an agent other than
 * the acting one covers 'path' (pgn_glob_match), else '*found' 0. The
 * acting agent is 'agent' when not NULL, else the agent the database
 * binds 'session' ("<host>:<id>") to, else none (every holder blocks).
 * 'path' is a file's path relative to the scope root, as
 * pgn_lease_relative makes it; empty and '.' components are dropped and
 * '..' resolved by the text; a path that is empty, absolute, leaves the
 * root or is over PGN_MAX_PATH is covered by no lease.
 * Of several, the one expiring last. Returns PGN_EBUSY, PGN_EDB (the
 * hook fails open on any error).
 */
PGN_NODISCARD pgn_status pgn_lease_blocking(pgn_db *db, const char *agent,
    const char *session, const char *path, struct pgn_lease_hit *hit,
    int *found);

/* One lease in the way of a write: which path it covers (an index). */
struct pgn_lease_block {
	size_t path;
	struct pgn_lease_hit hit;
};

/*
 * pgn_lease_blocking for several paths at once, every lease named: in
 * one read, each live exclusive lease of an agent other than the acting
 * one that covers any of 'paths' ('npaths'; NULL ones and those
 * pgn_lease_blocking would find covered by nothing are skipped), the
 * one expiring last first, into 'out' (at most 'max'), with the index of
 * the first path it covers; '*n' of them, and '*more' the count of those
 * left out past 'max'. Returns PGN_EBUSY, PGN_EDB, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_lease_blockers(pgn_db *db, const char *agent,
    const char *session, const char *const *paths, size_t npaths,
    struct pgn_lease_block *out, size_t max, size_t *n, size_t *more);

/*
 * A denial as a journal entry (product.md §13, decision 0159): in one
 * write transaction of the current scope, kind 'lease' with detail
 * "denied PATH (holder H)" for the denied agent (as pgn_lease_blocking
 * names it: 'agent', else the agent 'session' is bound to; none, no
 * entry) and "denied PATH to A (holder H)" for the holder 'hit'. Called
 * only on a denial; the caller denies whatever this returns (PGN_EBUSY,
 * PGN_EDB, PGN_ENOMEM). A holder or agent no longer there gets no entry.
 */
PGN_NODISCARD pgn_status pgn_lease_denied(pgn_db *db, const char *agent,
    const char *session, const char *path, const struct pgn_lease_hit *hit);

/* What the lease stamp says of a write (pgn_lease_stamp_judge). */
typedef enum {
	PGN_LEASE_ASK = 0, /* a lease may block it: ask pgn_lease_blocking */
	PGN_LEASE_NONE,    /* no live lease in the scope at all */
	PGN_LEASE_CLEAR,   /* leases live, none exclusive covers the paths */
	PGN_LEASE_NO_STAMP /* ask: there is no stamp (pgn_lease_stamp_make) */
} pgn_lease_verdict;

/*
 * The before-tool fast path, without opening the database (decisions
 * 0155, 0160): what the lease stamp of SQLite database 'db_path' says of
 * a write of 'paths' ('npaths' of them, relative to the scope root as
 * pgn_lease_blocking takes them; NULL ones are skipped) in scope 'scope'
 * (its key as stored: the root path, "" for the global scope) at
 * 'now_ms'.
 *
 * The stamp is the file "<db_path>-leases", written under the writer
 * lock by every change of the leases before its commit, whole, by a
 * rename: for each of PGN_LEASE_STAMP_SLOTS slots (FNV-1a of the scope
 * key) the latest expiry of a live lease of its scopes, and every live
 * exclusive lease (the scope's hash, the normal form, the expiry), never
 * fewer than the database holds (what a change removes or shortens is
 * removed from the stamp only after its commit, again under the lock);
 * with the database file's device and inode and a checksum. It is
 * written empty when the database is created or migrated with no lease.
 *
 * PGN_LEASE_NONE when the scope's slot expired by 'now_ms', and when
 * there is no database; PGN_LEASE_CLEAR when no live exclusive lease of
 * the scope in the stamp matches a path (pgn_glob_match); PGN_LEASE_ASK
 * when one does, and for a stamp torn, foreign, oversized, not
 * the user's own private regular file, of another database file
 * (replaced or restored), one whose leases did not fit (overflow), and
 * for a PostgreSQL string (other machines take leases there);
 * PGN_LEASE_NO_STAMP (ask too) when the database has no stamp. Costs a
 * stat of the database, one read of the stamp and a match per live
 * exclusive lease of the scope.
 */
pgn_lease_verdict pgn_lease_stamp_judge(const char *db_path, const char *scope,
    const char *const *paths, size_t npaths, int64_t now_ms);

/*
 * The stamp of 'db' (SQLite; nothing for PostgreSQL) made from one read
 * of the database, only if there is none: for the before-tool hook that
 * found none (a database copied or restored, or the stamp removed) and
 * asked the database, so that the next call takes the fast path. Never
 * replaces a stamp: a change that commits a lease writes its stamp
 * before its commit, so one this read missed is found there. Returns
 * PGN_EBUSY, PGN_EDB, PGN_EIO, PGN_ENOMEM (the hook logs and goes on).
 */
PGN_NODISCARD pgn_status pgn_lease_stamp_make(pgn_db *db);

/* pgn_lease_stamp_judge with no path: 1 when it says PGN_LEASE_NONE. */
int pgn_lease_none_live(const char *db_path, const char *scope, int64_t now_ms);

/*
 * Make 'in' (a pattern or a path) relative to scope root 'root': an
 * absolute 'in' inside the root loses the root and gains "./" (it names
 * that place, not a name at any depth: "/repo/docs/" is "./docs/"; the
 * root itself becomes "."), one outside it is refused (PGN_EINVAL: "'IN' is
 * outside the scope ROOT"); a relative 'in' is taken as it is. Only the
 * text is compared (no symbolic link is resolved). The global scope
 * (root "") takes no absolute path. Writes at most 'outlen' bytes with
 * the NUL (PGN_ETOOBIG beyond).
 */
PGN_NODISCARD pgn_status pgn_lease_relative(const char *root, const char *in,
    char *out, size_t outlen, struct pgn_err *err);

/*
 * A duration ("90s", "30m", "1h30m", "2h", "1d"; a bare number is
 * seconds): one or more numbers of at most 9 digits, each followed by
 * s, m, h or d, into '*ms'. Returns PGN_EINVAL for anything else.
 */
PGN_NODISCARD pgn_status pgn_parse_duration(const char *s, int64_t *ms);

#endif /* PIGEON_LEASE_H */
