/*
 * Path leases (docs/decisions/0155): take, renew, release and list an
 * agent's leases on gitignore-style patterns of its scope; what blocks a
 * write (the before-tool hook); and the lease stamp beside an SQLite
 * database, the no-lease fast path that needs no open database.
 *
 * Every change runs in one write transaction (SQLite's BEGIN IMMEDIATE,
 * PostgreSQL's writer lock), which sweeps the scope's expired leases and
 * then decides overlap against every live lease of the scope with
 * pgn_glob_overlap: two overlapping exclusive takes never both commit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_glob.h"
#include "pgn_int.h"
#include "pigeon/lease.h"
#include "stamp.h"
#include "store_int.h"

/* A journal entry's text: the verb, the pattern, the mode, the time. */
#define LEASE_DETAIL_SIZE (PGN_MAX_LEASE_PATTERN + PGN_MAX_LEASE_REASON + 96)

static const char SQL_LEASES[] =
    "SELECT l.id, a.name, l.pattern, l.norm, l.reason, l.shared, "
    "l.created_ms, l.expires_ms, l.agent_id FROM lease l "
    "JOIN agent a ON a.id = l.agent_id WHERE l.scope_id = ?1 "
    "ORDER BY a.name, l.pattern, l.id";
/*
 * The same for a change (take, release): every row, unsorted (on SQLite
 * a scan of the table, in the order the leases were taken), which the
 * change does not need; without the holder's name, which only a
 * refused take shows (SQL_HOLDER, for that one lease), and without the
 * pattern, reason and time taken (SQL_LEASE_SHOWN, for the few shown):
 * decisions 0202 and 0260.
 */
static const char SQL_SCOPE_LEASES[] =
    "SELECT id, norm, shared, expires_ms, agent_id FROM lease "
    "WHERE +scope_id = ?1";
static const char SQL_SCOPE_LEASES_PG[] =
    "SELECT id, norm, shared, expires_ms, agent_id FROM lease "
    "WHERE scope_id = ?1";
/*
 * What the change's read leaves out: only the leases it shows or
 * journals (in the way, renewed, released, swept) need them (0260).
 */
static const char SQL_LEASE_SHOWN[] =
    "SELECT pattern, reason, created_ms FROM lease WHERE id = ?1";
static const char SQL_HOLDER[] = "SELECT name FROM agent WHERE id = ?1";
/* What may block a write: live, exclusive, not the actor's. */
static const char SQL_BLOCKERS[] =
    "SELECT l.id, a.name, l.pattern, l.norm, l.reason, l.shared, "
    "l.created_ms, l.expires_ms, l.agent_id FROM lease l "
    "JOIN agent a ON a.id = l.agent_id WHERE l.scope_id = ?1 "
    "AND l.shared = 0 AND l.expires_ms > ?2 AND a.name <> ?3 "
    "ORDER BY l.expires_ms DESC, l.id";
static const char SQL_LEASE_ADD[] =
    "INSERT INTO lease(scope_id, agent_id, pattern, norm, shared, reason, "
    "created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
static const char SQL_LEASE_ADD_PG[] =
    "INSERT INTO lease(scope_id, agent_id, pattern, norm, shared, reason, "
    "created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
    "RETURNING id";
static const char SQL_LEASE_RENEW[] =
    "UPDATE lease SET pattern = ?2, shared = ?3, reason = ?4, "
    "expires_ms = ?5 WHERE id = ?1";
static const char SQL_LEASE_DEL[] = "DELETE FROM lease WHERE id = ?1";
/* The stamp: every live lease of every scope of the database. */
static const char SQL_STAMP[] =
    "SELECT s.root, l.norm, l.shared, l.expires_ms FROM lease l "
    "JOIN scope s ON s.id = l.scope_id WHERE l.expires_ms > ?1";
/*
 * The same but scope ?2's, which a change has in hand: each other scope,
 * then its leases by the index. The join's order fixed (CROSS JOIN) and
 * no OR of two ranges for the planner to weigh: 59,000 fewer
 * instructions to prepare, about 450 more for each scope of the
 * database (decision 0252). SQLite only: PostgreSQL keeps no stamp.
 */
static const char SQL_STAMP_OTHERS[] =
    "SELECT s.root, l.norm, l.shared, l.expires_ms FROM scope s "
    "CROSS JOIN lease l ON l.scope_id = s.id WHERE s.id <> ?2 "
    "AND l.expires_ms > ?1";
/* The agent session ?1 is bound to, in whatever scope (0134). */
static const char SQL_SESSION_AGENT[] =
    "SELECT a.name FROM session s JOIN agent a ON a.id = s.agent_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";

/* ---- helpers -------------------------------------------------------- */

void
pgn_leases_release(struct pgn_leases *l)
{
	if (l == NULL)
		return;
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void
pgn_lease_taken_release(struct pgn_lease_taken *t)
{
	if (t == NULL)
		return;
	pgn_leases_release(&t->leases);
}

int
pgn_lease_live(const struct pgn_lease *l, int64_t now_ms)
{
	return l->expires_ms > now_ms;
}

/* Row of SQL_LEASES or SQL_BLOCKERS into 'l'; its agent row to '*aid'. */
static void
read_lease(pgn_stmt *st, struct pgn_lease *l, int64_t *aid)
{
	memset(l, 0, sizeof(*l));
	l->id = pgn_col_i64(st, 0);
	pgn_col_copy(l->holder, sizeof(l->holder), st, 1);
	pgn_col_copy(l->pattern, sizeof(l->pattern), st, 2);
	pgn_col_copy(l->norm, sizeof(l->norm), st, 3);
	pgn_col_copy(l->reason, sizeof(l->reason), st, 4);
	l->shared = pgn_col_i64(st, 5) != 0;
	l->created_ms = pgn_col_i64(st, 6);
	l->expires_ms = pgn_col_i64(st, 7);
	if (aid != NULL)
		*aid = pgn_col_i64(st, 8);
}

static pgn_status
push_lease(pgn_db *db, struct pgn_leases *out, const struct pgn_lease *l)
{
	if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n, sizeof(*out->v)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	out->v[out->n++] = *l;
	return PGN_OK;
}

/*
 * A lease of the scope as a change reads it: what overlap, expiry and
 * the stamp need, in a few words and its normal form, where a struct
 * pgn_lease is 1.4 KB of which a change reads some 40 bytes (each page
 * of a scope's leases touched costs a fault, decision 0260). The rest,
 * for the few a change shows or journals, comes from lease_shown.
 */
struct scope_lease {
	int64_t id;
	int64_t aid; /* its agent row; 0 once released (release_tx) */
	int64_t expires_ms;
	int shared;
	char *norm;
};

/* A scope's leases, every one ('cap' of room). */
struct scope_leases {
	struct scope_lease *v;
	size_t n;
	size_t cap;
};

static void
scope_leases_release(struct scope_leases *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->v[i].norm);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Live at 'now' (pgn_lease_live's rule). */
static int
scope_live(const struct scope_lease *l, int64_t now_ms)
{
	return l->expires_ms > now_ms;
}

/* The lease 'l' whole into 'out' (its holder left empty). */
static pgn_status
lease_shown(pgn_db *db, const struct scope_lease *l, struct pgn_lease *out)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	out->id = l->id;
	out->holder[0] = out->pattern[0] = out->reason[0] = '\0';
	(void)snprintf(out->norm, sizeof(out->norm), "%s", l->norm);
	out->shared = l->shared;
	out->created_ms = 0;
	out->expires_ms = l->expires_ms;
	rc = pgn_prepare(db, SQL_LEASE_SHOWN, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(l->id));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading a lease");
	if (rc == PGN_OK) {
		pgn_col_copy(out->pattern, sizeof(out->pattern), st, 0);
		pgn_col_copy(out->reason, sizeof(out->reason), st, 1);
		out->created_ms = pgn_col_i64(st, 2);
	}
	pgn_finish(db, st);
	return rc;
}

/* The name of agent row 'aid' into 'name' (a refused take's holder). */
static pgn_status
holder_name(pgn_db *db, int64_t aid, char name[PGN_MAX_NAME + 1])
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	name[0] = '\0';
	rc = pgn_prepare(db, SQL_HOLDER, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(aid));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading a lease's holder");
	if (rc == PGN_OK)
		pgn_col_copy(name, PGN_MAX_NAME + 1, st, 0);
	pgn_finish(db, st);
	return rc;
}

static pgn_status
load_leases(pgn_db *db, int64_t sid, struct scope_leases *s)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	struct scope_lease *l;
	const char *norm;

	scope_leases_release(s);
	rc = pgn_prepare(db, pgn_sql(db, SQL_SCOPE_LEASES, SQL_SCOPE_LEASES_PG),
	    &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid));
	while (pgn_next_row(db, st, &rc, "reading the leases")) {
		if (!pgn_vec_grow((void **)&s->v, &s->cap, s->n,
		        sizeof(*s->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		l = &s->v[s->n];
		norm = pgn_col_str(st, 1, NULL);
		l->id = pgn_col_i64(st, 0);
		l->norm = pgn_strdup(norm != NULL ? norm : "");
		l->shared = pgn_col_i64(st, 2) != 0;
		l->expires_ms = pgn_col_i64(st, 3);
		l->aid = pgn_col_i64(st, 4);
		if (l->norm == NULL) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		s->n++;
	}
	pgn_finish(db, st);
	return rc;
}

/* The agent session 'key' is bound to ("" if none) into 'name'. */
static pgn_status
session_agent(pgn_db *db, const char *key, char name[PGN_MAX_NAME + 1])
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	name[0] = '\0';
	rc = pgn_prepare(db, SQL_SESSION_AGENT, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_T(key));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading the session");
	if (rc == PGN_OK)
		pgn_col_copy(name, PGN_MAX_NAME + 1, st, 0);
	pgn_finish(db, st);
	return rc == PGN_ENOTFOUND ? PGN_OK : rc;
}

/*
 * The acting agent (decision 0134's rules, as pgn_send's sender): its
 * name into 'name', its row in scope 'sid' into '*aid'.
 */
static pgn_status
find_actor(pgn_db *db, const struct pgn_lease_actor *who, int64_t sid,
    char name[PGN_MAX_NAME + 1], int64_t *aid)
{
	char asked[PGN_MAX_NAME + 1] = "";
	pgn_status rc;

	*aid = 0;
	name[0] = '\0';
	if (who->agent != NULL) {
		rc = pgn_check_name(db, "agent", who->agent, asked);
		if (rc != PGN_OK)
			return rc;
	}
	if (who->session != NULL && who->session[0] != '\0') {
		rc = session_agent(db, who->session, name);
		if (rc != PGN_OK)
			return rc;
		if (name[0] != '\0' && asked[0] != '\0' &&
		    strcmp(asked, name) != 0)
			return pgn_fail(db, PGN_EINVAL,
			    "session '%.256s' acts as its agent '%s', not as '%s'",
			    who->session, name, asked);
	}
	if (name[0] == '\0' && asked[0] != '\0')
		memcpy(name, asked, sizeof(asked));
	else if (name[0] == '\0' && who->agent_default != NULL &&
	    who->agent_default[0] != '\0') {
		rc = pgn_check_name(db, "agent", who->agent_default, name);
		if (rc != PGN_OK)
			return rc;
	} else if (name[0] == '\0')
		return pgn_fail_hint(db, PGN_EINVAL, PGN_HINT_SESSION, NULL,
		    "no agent to hold the lease");
	rc = pgn_agent_id(db, sid, name, 0, aid);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_unknown(db, sid, name, 0);
	return rc;
}

/* A reason: bounded, UTF-8, one line. */
static pgn_status
check_reason(pgn_db *db, const char *r)
{
	size_t i, n;

	if (r == NULL)
		return PGN_OK;
	n = strlen(r);
	if (n > PGN_MAX_LEASE_REASON)
		return pgn_fail(db, PGN_ETOOBIG,
		    "a lease's reason is over the limit of %d bytes",
		    PGN_MAX_LEASE_REASON);
	if (!pgn_utf8_valid(r, n))
		return pgn_fail(db, PGN_EINVAL,
		    "a lease's reason is not valid UTF-8");
	for (i = 0; i < n; i++)
		if ((unsigned char)r[i] < 0x20 || r[i] == 0x7f)
			return pgn_fail(db, PGN_EINVAL,
			    "a lease's reason is one line without control characters");
	return PGN_OK;
}

/* Check the patterns; their normal forms into norms[i]. */
static pgn_status
check_patterns(pgn_db *db, const char *const *pats, size_t n,
    char (*norms)[PGN_LEASE_NORM_SIZE])
{
	struct pgn_err e;
	pgn_status rc;
	size_t i;

	if (n == 0)
		return pgn_fail(db, PGN_EINVAL, "no lease pattern");
	if (n > PGN_MAX_LEASE_PATTERNS)
		return pgn_fail(db, PGN_ETOOBIG,
		    "%zu lease patterns, over the limit of %d at once", n,
		    PGN_MAX_LEASE_PATTERNS);
	for (i = 0; i < n; i++) {
		pgn_err_clear(&e);
		if (pats[i] == NULL)
			return pgn_fail(db, PGN_EINVAL, "no lease pattern");
		rc = pgn_glob_check(pats[i], norms[i], PGN_LEASE_NORM_SIZE, &e);
		if (rc != PGN_OK)
			return pgn_fail(db, rc, "%s", e.msg);
	}
	return PGN_OK;
}

static void
lease_detail(char *out, size_t len, const char *verb, const struct pgn_lease *l)
{
	char at[32];

	pgn_format_time(l->expires_ms, at, sizeof(at));
	(void)snprintf(out, len, "%s '%s' %s until %s%s%s", verb, l->pattern,
	    l->shared ? "shared" : "exclusive", at, l->reason[0] ? ": " : "",
	    l->reason);
}

static int clean_path(const char *in, char *out, size_t len);

/* ---- the stamp (stamp.c, decisions 0155 and 0160) ------------------ */

/* Only an SQLite file has a stamp (decision 0155). */
static int
has_stamp(const pgn_db *db)
{
	return db->be->dialect == PGN_DIALECT_SQLITE && db->path != NULL &&
	    db->path[0] != '\0';
}

/* The live leases of every scope of the database at 'now', as a stamp. */
static pgn_status
stamp_compute(pgn_db *db, int64_t now, struct pgn_stamp_set *set)
{
	pgn_stmt *st = NULL;
	const char *root, *norm;
	pgn_status rc;

	pgn_stamp_set_release(set);
	rc = pgn_prepare(db, SQL_STAMP, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(now));
	while (pgn_next_row(db, st, &rc, "reading the leases")) {
		root = pgn_col_str(st, 0, NULL);
		norm = pgn_col_str(st, 1, NULL);
		if (!pgn_stamp_set_add(set, root != NULL ? root : "",
		        norm != NULL ? norm : "", pgn_col_i64(st, 2) != 0,
		        pgn_col_i64(st, 3)))
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	return rc;
}

/*
 * Write 'set' as the stamp of 'db' ('narrower': no wider than the one
 * there, see pgn_stamp_write); PGN_EIO when it cannot.
 */
static pgn_status
stamp_write(pgn_db *db, const struct pgn_stamp_set *set, int narrower)
{
	int e = pgn_stamp_write(db->path, set, narrower);

	if (e != 0)
		return pgn_fail(db, PGN_EIO,
		    "writing the lease stamp of %.200s: %s", db->path,
		    strerror(e));
	return PGN_OK;
}

/*
 * Read the stamp of 'db_path' into '*buf' (allocated to its size, the
 * caller's to free, NULL when nothing was read) and parse it into 'v':
 * 1 when it is there and to be trusted, 0 to ask the database; '*none'
 * 1 when there is no database at all, '*missing' 1 when there is no
 * stamp. On the heap, not the stack: a stamp is a few hundred bytes,
 * and a frame of PGN_LEASE_STAMP_MAX would spread every before-tool
 * run's stack over pages each costing a fault (decision 0251).
 */
static int
stamp_read(const char *db_path, unsigned char **buf, struct pgn_stamp_view *v,
    int *none, int *missing)
{
	char path[PGN_MAX_PATH + sizeof(PGN_STAMP_SUFFIX)];
	struct stat db, sb;
	ssize_t n = -1;
	int fd;

	*buf = NULL;
	*none = 0;
	*missing = 0;
	if (db_path == NULL || pgn_db_is_postgres(db_path) ||
	    !pgn_stamp_path(db_path, PGN_STAMP_SUFFIX, path, sizeof(path)))
		return 0;
	if (stat(db_path, &db) != 0) {
		*none = errno == ENOENT; /* no database: no lease */
		return 0;
	}
	/* no stamp: removed, or written by no one yet: ask */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		*missing = errno == ENOENT;
		return 0;
	}
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    sb.st_uid == geteuid() && (sb.st_mode & 077) == 0 &&
	    sb.st_size <= (off_t)PGN_LEASE_STAMP_MAX &&
	    (*buf = malloc(sb.st_size > 0 ? (size_t)sb.st_size : 1)) != NULL)
		n = pread(fd, *buf, (size_t)sb.st_size, 0);
	close(fd);
	if (n < 0 || n != (ssize_t)sb.st_size ||
	    !pgn_stamp_parse(*buf, (size_t)n, v))
		return 0;
	/* of this very database file, not one replaced or restored */
	return v->dev == (uint64_t)db.st_dev && v->ino == (uint64_t)db.st_ino;
}

pgn_lease_verdict
pgn_lease_stamp_judge(const char *db_path, const char *scope,
    const char *const *paths, size_t npaths, int64_t now_ms)
{
	unsigned char *buf = NULL;
	char clean[PGN_MAX_PATH];
	struct pgn_stamp_view v;
	struct pgn_stamp_entry e;
	pgn_lease_verdict r = PGN_LEASE_CLEAR;
	uint64_t h;
	size_t off, i;
	int none, missing;

	if (scope == NULL)
		return PGN_LEASE_ASK;
	if (!stamp_read(db_path, &buf, &v, &none, &missing)) {
		r = none    ? PGN_LEASE_NONE :
		    missing ? PGN_LEASE_NO_STAMP :
		              PGN_LEASE_ASK;
		goto done;
	}
	if (v.slot[pgn_stamp_slot(scope)] <= now_ms) {
		r = PGN_LEASE_NONE;
		goto done;
	}
	if (v.flags & PGN_STAMP_OVERFLOW) {
		r = PGN_LEASE_ASK;
		goto done;
	}
	h = pgn_stamp_hash(scope, strlen(scope));
	for (i = 0; i < npaths && r == PGN_LEASE_CLEAR; i++) {
		if (paths[i] == NULL ||
		    !clean_path(paths[i], clean, sizeof(clean)))
			continue; /* covered by no lease */
		for (off = 0; pgn_stamp_next(&v, &off, &e);)
			if (e.scope == h && e.expires_ms > now_ms &&
			    pgn_stamp_may_match(e.norm, clean) &&
			    pgn_glob_match(e.norm, clean)) {
				r = PGN_LEASE_ASK; /* the database says */
				break;
			}
	}
done:
	free(buf);
	return r;
}

int
pgn_lease_none_live(const char *db_path, const char *scope, int64_t now_ms)
{
	return pgn_lease_stamp_judge(db_path, scope, NULL, 0, now_ms) ==
	    PGN_LEASE_NONE;
}

static pgn_status
stamp_make_tx(pgn_db *db, void *arg)
{
	struct pgn_stamp_set *set = arg;

	return stamp_compute(db, pgn_now_ms(), set);
}

pgn_status
pgn_lease_stamp_make(pgn_db *db)
{
	struct pgn_stamp_set set;
	pgn_status rc;
	int e;

	if (!has_stamp(db))
		return PGN_OK;
	memset(&set, 0, sizeof(set));
	rc = pgn_read(db, stamp_make_tx, &set);
	if (rc == PGN_OK) {
		e = pgn_stamp_make(db->path, &set);
		if (e != 0 && e != EEXIST)
			rc = pgn_fail(db, PGN_EIO,
			    "making the lease stamp of %.200s: %s", db->path,
			    strerror(e));
	}
	pgn_stamp_set_release(&set);
	return rc;
}

/*
 * Inside a change's transaction, before its commit: the stamp of the
 * leases before the change ('pre') and after it together, so no reader
 * trusting it misses a lease either state holds; '*lowered' says the
 * exact one is due once the change has committed (restamp). The
 * change's own scope ('sid') is what it has in hand: 's', the scope's
 * leases as read in this transaction (those with no agent row, released
 * now, and expired ones left out), and 'fresh', what it took or renewed
 * (its rows in 's' as they were are left out); the other scopes are
 * read.
 */
static pgn_status
stamp_in_tx(pgn_db *db, int64_t now, int64_t sid, const struct scope_leases *s,
    const struct pgn_leases *fresh, const struct pgn_stamp_set *pre,
    int *lowered)
{
	struct pgn_stamp_set post;
	const struct scope_lease *l;
	pgn_stmt *st = NULL;
	const char *root, *norm;
	size_t k, j;
	pgn_status rc;

	*lowered = 0;
	if (!has_stamp(db))
		return PGN_OK;
	memset(&post, 0, sizeof(post));
	rc = pgn_prepare(db, SQL_STAMP_OTHERS, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(now), PGN_I(sid));
	while (pgn_next_row(db, st, &rc, "reading the leases")) {
		root = pgn_col_str(st, 0, NULL);
		norm = pgn_col_str(st, 1, NULL);
		if (!pgn_stamp_set_add(&post, root != NULL ? root : "",
		        norm != NULL ? norm : "", pgn_col_i64(st, 2) != 0,
		        pgn_col_i64(st, 3)))
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	for (k = 0; rc == PGN_OK && k < s->n; k++) {
		l = &s->v[k];
		if (l->aid == 0 || !scope_live(l, now))
			continue;
		for (j = 0; fresh != NULL && j < fresh->n; j++)
			if (fresh->v[j].id == l->id)
				break;
		if (fresh != NULL && j < fresh->n)
			continue;
		if (!pgn_stamp_set_add(&post, db->scope, l->norm, l->shared,
		        l->expires_ms))
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	for (k = 0; rc == PGN_OK && fresh != NULL && k < fresh->n; k++)
		if (!pgn_stamp_set_add(&post, db->scope, fresh->v[k].norm,
		        fresh->v[k].shared, fresh->v[k].expires_ms))
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	if (rc == PGN_OK && !pgn_stamp_set_union(&post, pre, lowered))
		rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	if (rc == PGN_OK)
		rc = stamp_write(db, &post, 0);
	pgn_stamp_set_release(&post);
	return rc;
}

static pgn_status
restamp_tx(pgn_db *db, void *arg)
{
	struct pgn_stamp_set set;
	pgn_status rc;

	(void)arg;
	memset(&set, 0, sizeof(set));
	rc = stamp_compute(db, pgn_now_ms(), &set);
	if (rc == PGN_OK)
		rc = stamp_write(db, &set, 1);
	pgn_stamp_set_release(&set);
	return rc;
}

/*
 * After a committed change that lowered the stamp: the exact stamp,
 * under the writer lock so no take's stamp is overwritten by an older
 * state. A failure leaves the stamp wider than needed: only slower,
 * never wrong, and not the change's failure.
 */
static void
restamp(pgn_db *db)
{
	struct pgn_err saved = db->err;

	if (pgn_tx(db, restamp_tx, NULL) != PGN_OK)
		db->err = saved;
}

/* ---- sweeping ------------------------------------------------------- */

/*
 * Drop the scope's leases expired at 'now', whoever holds them, each a
 * journal entry of its holder; 's' keeps the live ones.
 */
static pgn_status
sweep(pgn_db *db, struct scope_leases *s, int64_t now)
{
	char detail[LEASE_DETAIL_SIZE];
	struct pgn_lease l;
	pgn_status rc = PGN_OK;
	size_t i, j;

	for (i = 0; rc == PGN_OK && i < s->n; i++) {
		if (scope_live(&s->v[i], now))
			continue;
		rc = lease_shown(db, &s->v[i], &l);
		if (rc != PGN_OK)
			break;
		lease_detail(detail, sizeof(detail), "expired", &l);
		rc = pgn_exec(db, SQL_LEASE_DEL, "sweeping a lease",
		    PGN_I(s->v[i].id));
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, s->v[i].aid, "lease", 0, NULL,
			    detail, now);
	}
	if (rc != PGN_OK)
		return rc;
	/* keep the live ones, in order */
	for (i = j = 0; i < s->n; i++) {
		if (!scope_live(&s->v[i], now)) {
			free(s->v[i].norm);
			continue;
		}
		s->v[j++] = s->v[i];
	}
	s->n = j;
	return PGN_OK;
}

/* ---- take ----------------------------------------------------------- */

struct take_ctx {
	const struct pgn_lease_take *req;
	char (*norms)[PGN_LEASE_NORM_SIZE];
	int64_t ttl;
	struct pgn_lease_taken *out;
	int lowered;
	unsigned looks; /* takes so far: only the first refusal is journalled */
};

/* Does 'norm' (taken shared or not) collide with lease 'l' of another? */
static int
collides(const char *norm, int shared, const struct scope_lease *l)
{
	if (shared && l->shared)
		return 0;
	return pgn_glob_overlap(norm, l->norm);
}

/*
 * A refused take (decision 0207): an entry of the agent refused, naming
 * the holder, and one of the holder, naming who asked; peers both.
 */
static pgn_status
journal_refusal(pgn_db *db, int64_t aid, const char *agent, int64_t holder,
    const struct pgn_lease_take *req, const struct pgn_lease_taken *out,
    int64_t now)
{
	char detail[LEASE_DETAIL_SIZE + PGN_MAX_LEASE_PATTERN + PGN_MAX_NAME];
	char at[32];
	const struct pgn_lease *b = &out->blocker;
	pgn_status rc;

	pgn_format_time(b->expires_ms, at, sizeof(at));
	(void)snprintf(detail, sizeof(detail),
	    "refused '%s' %s: held by %s's %s lease on '%s' until %s",
	    out->wanted, req->shared ? "shared" : "exclusive", b->holder,
	    b->shared ? "shared" : "exclusive", b->pattern, at);
	rc = pgn_journal_add(db, aid, "lease", 0, b->holder, detail, now);
	if (rc != PGN_OK)
		return rc;
	(void)snprintf(detail, sizeof(detail),
	    "refused '%s' %s to %s: its %s lease on '%s' until %s", out->wanted,
	    req->shared ? "shared" : "exclusive", agent,
	    b->shared ? "shared" : "exclusive", b->pattern, at);
	return pgn_journal_add(db, holder, "lease", 0, agent, detail, now);
}

static pgn_status
take_tx(pgn_db *db, void *arg)
{
	struct take_ctx *c = arg;
	const struct pgn_lease_take *req = c->req;
	struct pgn_lease_taken *out = c->out;
	struct pgn_stamp_set pre; /* what a renewal shortens, as it was */
	struct scope_leases s;
	char detail[LEASE_DETAIL_SIZE];
	struct pgn_lease l, was; /* the new row, and a renewed one as it was */
	int64_t now, sid, aid;
	size_t i, j, k, fresh = 0;
	int dup;
	pgn_status rc;

	memset(&s, 0, sizeof(s));
	memset(&pre, 0, sizeof(pre));
	pgn_leases_release(&out->leases);
	out->renewed = 0;
	out->held = 0;
	c->lowered = 0;
	now = pgn_now_ms();
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		rc = pgn_scope_id(db, 1, &sid);
	if (rc == PGN_OK)
		rc = find_actor(db, &req->who, sid, out->agent, &aid);
	if (rc == PGN_OK)
		rc = load_leases(db, sid, &s);
	if (rc == PGN_OK)
		rc = sweep(db, &s, now);
	if (rc != PGN_OK)
		goto out;
	/* Who is in the way: the first other agent's lease that collides. */
	for (i = 0; i < req->npatterns; i++)
		for (k = 0; k < s.n; k++) {
			if (s.v[k].aid == aid ||
			    !collides(c->norms[i], req->shared, &s.v[k]))
				continue;
			rc = lease_shown(db, &s.v[k], &out->blocker);
			if (rc != PGN_OK)
				goto out;
			out->held = 1;
			rc = holder_name(db, s.v[k].aid, out->blocker.holder);
			if (rc != PGN_OK)
				goto out;
			(void)snprintf(out->wanted, sizeof(out->wanted), "%s",
			    req->patterns[i]);
			/* the sweep and the refusal's entries commit; no lease
			 */
			if (c->looks == 0)
				rc = journal_refusal(db, aid, out->agent,
				    s.v[k].aid, req, out, now);
			goto out;
		}
	for (i = 0; i < req->npatterns; i++) {
		for (k = 0; k < s.n; k++)
			if (s.v[k].aid == aid &&
			    strcmp(s.v[k].norm, c->norms[i]) == 0)
				break;
		for (dup = 0, j = 0; j < i; j++)
			dup |= strcmp(c->norms[j], c->norms[i]) == 0;
		if (k == s.n && !dup)
			fresh++;
	}
	if (s.n + fresh > PGN_MAX_LEASES) {
		rc = pgn_fail(db, PGN_ETOOBIG,
		    "scope '%s' holds %zu leases: %zu more would pass the limit of %d",
		    PGN_SCOPE_LABEL(db), s.n, fresh, PGN_MAX_LEASES);
		goto out;
	}
	for (i = 0; rc == PGN_OK && i < req->npatterns; i++) {
		for (dup = 0, j = 0; j < i; j++)
			dup |= strcmp(c->norms[j], c->norms[i]) == 0;
		if (dup)
			continue;
		for (k = 0; k < s.n; k++)
			if (s.v[k].aid == aid &&
			    strcmp(s.v[k].norm, c->norms[i]) == 0)
				break;
		memset(&l, 0, sizeof(l));
		(void)snprintf(l.holder, sizeof(l.holder), "%s", out->agent);
		(void)snprintf(l.pattern, sizeof(l.pattern), "%s",
		    req->patterns[i]);
		memcpy(l.norm, c->norms[i], sizeof(l.norm));
		(void)snprintf(l.reason, sizeof(l.reason), "%s",
		    req->reason != NULL ? req->reason : "");
		l.shared = req->shared != 0;
		l.expires_ms = now + c->ttl;
		if (k < s.n)
			rc = lease_shown(db, &s.v[k], &was);
		if (rc != PGN_OK)
			break;
		if (k < s.n) {
			l.id = was.id;
			l.created_ms = was.created_ms;
			/* a renewal without a reason keeps the one it had */
			if (req->reason == NULL)
				memcpy(l.reason, was.reason, sizeof(l.reason));
			if (!pgn_stamp_set_add(&pre, db->scope, was.norm,
			        was.shared, was.expires_ms))
				rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			if (rc == PGN_OK)
				rc = pgn_exec(db, SQL_LEASE_RENEW,
				    "renewing a lease", PGN_I(l.id),
				    PGN_T(l.pattern), PGN_I(l.shared),
				    PGN_T(l.reason), PGN_I(l.expires_ms));
			lease_detail(detail, sizeof(detail), "renewed", &l);
			out->renewed++;
		} else {
			pgn_stmt *st = NULL;

			l.created_ms = now;
			rc = pgn_prepare(db,
			    pgn_sql(db, SQL_LEASE_ADD, SQL_LEASE_ADD_PG), &st);
			if (rc == PGN_OK)
				rc = pgn_bind(db, st, PGN_I(sid), PGN_I(aid),
				    PGN_T(l.pattern), PGN_T(l.norm),
				    PGN_I(l.shared), PGN_T(l.reason),
				    PGN_I(now), PGN_I(l.expires_ms));
			if (rc == PGN_OK)
				rc = pgn_step_done(db, st, "taking a lease");
			if (rc == PGN_OK)
				l.id = pgn_inserted_id(db, st);
			pgn_finish(db, st);
			lease_detail(detail, sizeof(detail), "took", &l);
		}
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, aid, "lease", 0, NULL, detail,
			    now);
		if (rc == PGN_OK)
			rc = push_lease(db, &out->leases, &l);
	}
out:
	if (rc == PGN_OK && has_stamp(db))
		rc = stamp_in_tx(db, now, sid, &s, &out->leases, &pre,
		    &c->lowered);
	pgn_stamp_set_release(&pre);
	scope_leases_release(&s);
	return rc;
}

/*
 * --wait's look (pgn_wait_until, decision 0208): one take; done unless
 * refused. The blocker's expiry is when the take may pass without any
 * change to wake the waiter: the next look comes no later.
 */
static pgn_status
take_look(pgn_db *db, void *arg, int *done, int64_t *due_ms)
{
	struct take_ctx *c = arg;
	pgn_status rc;

	rc = pgn_tx(db, take_tx, c);
	if (rc == PGN_OK && c->lowered)
		restamp(db);
	c->looks++;
	*done = rc != PGN_OK || !c->out->held;
	if (!*done)
		*due_ms = c->out->blocker.expires_ms;
	return rc;
}

pgn_status
pgn_lease_take(pgn_db *db, const struct pgn_lease_take *req,
    struct pgn_lease_taken *out)
{
	char norms[PGN_MAX_LEASE_PATTERNS][PGN_LEASE_NORM_SIZE];
	struct take_ctx c;
	int64_t due = 0;
	pgn_status rc;
	int done = 0;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.norms = norms;
	c.out = out;
	c.ttl = req->ttl_ms != 0 ? req->ttl_ms : PGN_LEASE_TTL_DEFAULT_MS;
	if (c.ttl < PGN_LEASE_TTL_MIN_MS || c.ttl > PGN_LEASE_TTL_MAX_MS)
		return pgn_fail(db, PGN_EINVAL,
		    "a lease lasts 1 s to 8 h, not %lld ms",
		    (long long)req->ttl_ms);
	if (req->wait_ms < 0 || req->wait_ms > PGN_WAIT_MAX_MS)
		return pgn_fail(db, PGN_EINVAL,
		    "a wait lasts 0 to %d ms, not %lld", PGN_WAIT_MAX_MS,
		    (long long)req->wait_ms);
	rc = check_patterns(db, req->patterns, req->npatterns, norms);
	if (rc == PGN_OK)
		rc = check_reason(db, req->reason);
	if (rc != PGN_OK)
		return rc;
	/* no wait: one take, without the wake-up's setup */
	if (req->wait_ms == 0)
		rc = take_look(db, &c, &done, &due);
	else
		rc = pgn_wait_until(db, NULL, req->wait_ms, take_look, &c,
		    req->cancel, req->cancel_arg);
	if (rc != PGN_OK)
		pgn_lease_taken_release(out);
	return rc;
}

/* ---- release -------------------------------------------------------- */

struct release_ctx {
	const struct pgn_lease_actor *who;
	const char *const *patterns;
	char (*norms)[PGN_LEASE_NORM_SIZE];
	size_t n;
	int all;
	size_t released;
	int lowered;
};

static pgn_status
release_tx(pgn_db *db, void *arg)
{
	struct release_ctx *c = arg;
	struct pgn_stamp_set pre; /* the live leases released, as they were */
	char name[PGN_MAX_NAME + 1], detail[LEASE_DETAIL_SIZE];
	struct scope_leases s;
	struct pgn_lease l;
	int64_t now, sid, aid;
	size_t i, k;
	int hit;
	pgn_status rc;

	memset(&s, 0, sizeof(s));
	memset(&pre, 0, sizeof(pre));
	c->released = 0;
	c->lowered = 0;
	now = pgn_now_ms();
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		rc = pgn_scope_id(db, 1, &sid);
	if (rc == PGN_OK)
		rc = find_actor(db, c->who, sid, name, &aid);
	if (rc == PGN_OK)
		rc = load_leases(db, sid, &s);
	for (i = 0; rc == PGN_OK && !c->all && i < c->n; i++) {
		for (hit = 0, k = 0; k < s.n; k++)
			hit |= s.v[k].aid == aid &&
			    strcmp(s.v[k].norm, c->norms[i]) == 0;
		if (!hit)
			rc = pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_NONE,
			    NULL,
			    "agent '%s' holds no lease on '%s' in scope '%s'",
			    name, c->patterns[i], PGN_SCOPE_LABEL(db));
	}
	/* The agent's own, expired or not, are released; then the sweep. */
	for (k = 0; rc == PGN_OK && k < s.n; k++) {
		if (s.v[k].aid != aid)
			continue;
		for (hit = c->all, i = 0; !hit && i < c->n; i++)
			hit = strcmp(s.v[k].norm, c->norms[i]) == 0;
		if (!hit)
			continue;
		rc = lease_shown(db, &s.v[k], &l);
		if (rc != PGN_OK)
			break;
		(void)snprintf(detail, sizeof(detail), "released '%s'",
		    l.pattern);
		if (scope_live(&s.v[k], now) &&
		    !pgn_stamp_set_add(&pre, db->scope, s.v[k].norm,
		        s.v[k].shared, s.v[k].expires_ms)) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		rc = pgn_exec(db, SQL_LEASE_DEL, "releasing a lease",
		    PGN_I(s.v[k].id));
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, aid, "lease", 0, NULL, detail,
			    now);
		s.v[k].aid = 0; /* no longer there for the sweep or stamp */
		c->released++;
	}
	/* swept: every expired lease not released just now */
	for (k = 0; rc == PGN_OK && k < s.n; k++) {
		if (s.v[k].aid == 0 || scope_live(&s.v[k], now))
			continue;
		rc = lease_shown(db, &s.v[k], &l);
		if (rc != PGN_OK)
			break;
		lease_detail(detail, sizeof(detail), "expired", &l);
		rc = pgn_exec(db, SQL_LEASE_DEL, "sweeping a lease",
		    PGN_I(s.v[k].id));
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, s.v[k].aid, "lease", 0, NULL,
			    detail, now);
	}
	if (rc == PGN_OK && has_stamp(db))
		rc = stamp_in_tx(db, now, sid, &s, NULL, &pre, &c->lowered);
	pgn_stamp_set_release(&pre);
	scope_leases_release(&s);
	return rc;
}

pgn_status
pgn_lease_release(pgn_db *db, const struct pgn_lease_actor *who,
    const char *const *patterns, size_t npatterns, int all, size_t *released)
{
	char norms[PGN_MAX_LEASE_PATTERNS][PGN_LEASE_NORM_SIZE];
	struct release_ctx c;
	pgn_status rc;

	*released = 0;
	memset(&c, 0, sizeof(c));
	if (all && npatterns > 0)
		return pgn_fail(db, PGN_EINVAL,
		    "release either patterns or all of them, not both");
	if (!all) {
		rc = check_patterns(db, patterns, npatterns, norms);
		if (rc != PGN_OK)
			return rc;
	}
	c.who = who;
	c.patterns = patterns;
	c.norms = norms;
	c.n = all ? 0 : npatterns;
	c.all = all;
	rc = pgn_tx(db, release_tx, &c);
	if (rc == PGN_OK && c.lowered)
		restamp(db);
	if (rc == PGN_OK)
		*released = c.released;
	return rc;
}

pgn_status
pgn_lease_release_all_in_tx(pgn_db *db, const char *agent, size_t *released,
    int *lowered)
{
	struct pgn_lease_actor who = {NULL, NULL, NULL};
	struct release_ctx c;
	pgn_status rc;

	memset(&c, 0, sizeof(c));
	who.agent = agent;
	c.who = &who;
	c.all = 1;
	rc = release_tx(db, &c);
	*released = rc == PGN_OK ? c.released : 0;
	*lowered = rc == PGN_OK && c.lowered;
	return rc;
}

void
pgn_lease_restamp(pgn_db *db)
{
	restamp(db);
}

/* ---- list ----------------------------------------------------------- */

struct list_ctx {
	const char *agent; /* checked, or NULL */
	int expired;
	struct pgn_leases *out;
};

static pgn_status
list_tx(pgn_db *db, void *arg)
{
	struct list_ctx *c = arg;
	struct pgn_lease l;
	pgn_stmt *st = NULL;
	int64_t sid, aid, now = pgn_now_ms();
	pgn_status rc;

	pgn_leases_release(c->out);
	if (c->agent != NULL) {
		rc = pgn_need_agent(db, c->agent, 0, &aid);
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK;
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_LEASES, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid));
	while (pgn_next_row(db, st, &rc, "reading the leases")) {
		read_lease(st, &l, NULL);
		if (c->agent != NULL && strcmp(l.holder, c->agent) != 0)
			continue;
		if (!c->expired && !pgn_lease_live(&l, now))
			continue;
		rc = push_lease(db, c->out, &l);
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_lease_list(pgn_db *db, const char *agent, int expired,
    struct pgn_leases *out)
{
	char name[PGN_MAX_NAME + 1];
	struct list_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.agent = NULL;
	c.expired = expired;
	c.out = out;
	if (agent != NULL) {
		rc = pgn_check_name(db, "agent", agent, name);
		if (rc != PGN_OK)
			return rc;
		c.agent = name;
	}
	rc = pgn_read(db, list_tx, &c);
	if (rc != PGN_OK)
		pgn_leases_release(out);
	return rc;
}

/* ---- what blocks a write -------------------------------------------- */

/*
 * 'in' with empty and '.' components dropped and '..' resolved, into
 * 'out'; 0 when it is empty, absolute, leaves the root or is too long.
 */
static int
clean_path(const char *in, char *out, size_t len)
{
	size_t o = 0, n;
	const char *p = in, *e;

	if (in == NULL || in[0] == '/' || strlen(in) >= PGN_MAX_PATH ||
	    strlen(in) >= len)
		return 0;
	while (*p != '\0') {
		e = strchr(p, '/');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (o == 0)
				return 0; /* leaves the root */
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--; /* its slash */
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (o > 0)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	out[o] = '\0';
	return o > 0;
}

/* Every lease that blocks any of some paths (pgn_lease_blockers). */
struct blockers_ctx {
	const char *agent;
	const char *session;
	char (*clean)[PGN_MAX_PATH]; /* the paths, clean; "" covered by none */
	size_t npaths;
	struct pgn_lease_block *out;
	size_t max, *n, *more;
};

static pgn_status
blockers_tx(pgn_db *db, void *arg)
{
	struct blockers_ctx *c = arg;
	char actor[PGN_MAX_NAME + 1] = "";
	struct pgn_lease l;
	struct pgn_lease_block *b;
	pgn_stmt *st = NULL;
	int64_t sid;
	size_t i;
	pgn_status rc;

	*c->n = *c->more = 0;
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* no scope row: no lease */
	if (rc == PGN_OK && c->agent != NULL)
		memcpy(actor, c->agent, strlen(c->agent) + 1);
	else if (rc == PGN_OK && c->session != NULL && c->session[0] != '\0')
		rc = session_agent(db, c->session, actor);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_BLOCKERS, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(pgn_now_ms()),
		    PGN_T(actor));
	while (pgn_next_row(db, st, &rc, "reading the leases")) {
		read_lease(st, &l, NULL);
		for (i = 0; i < c->npaths; i++)
			if (c->clean[i][0] != '\0' &&
			    pgn_stamp_may_match(l.norm, c->clean[i]) &&
			    pgn_glob_match(l.norm, c->clean[i]))
				break;
		if (i == c->npaths)
			continue;
		if (*c->n == c->max) {
			(*c->more)++;
			continue;
		}
		b = &c->out[(*c->n)++];
		b->path = i;
		b->hit.id = l.id;
		memcpy(b->hit.holder, l.holder, sizeof(l.holder));
		memcpy(b->hit.pattern, l.pattern, sizeof(l.pattern));
		memcpy(b->hit.reason, l.reason, sizeof(l.reason));
		b->hit.expires_ms = l.expires_ms;
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_lease_blockers(pgn_db *db, const char *agent, const char *session,
    const char *const *paths, size_t npaths, struct pgn_lease_block *out,
    size_t max, size_t *n, size_t *more)
{
	char name[PGN_MAX_NAME + 1];
	struct blockers_ctx c;
	size_t i;
	pgn_status rc;

	*n = *more = 0;
	if (npaths == 0)
		return PGN_OK;
	memset(&c, 0, sizeof(c));
	if (agent != NULL) {
		rc = pgn_check_name(db, "agent", agent, name);
		if (rc != PGN_OK)
			return rc;
		c.agent = name;
	}
	c.clean = calloc(npaths, sizeof(*c.clean));
	if (c.clean == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	for (i = 0; i < npaths; i++)
		if (paths[i] == NULL ||
		    !clean_path(paths[i], c.clean[i], sizeof(c.clean[i])))
			c.clean[i][0] = '\0';
	c.session = session;
	c.npaths = npaths;
	c.out = out;
	c.max = max;
	c.n = n;
	c.more = more;
	rc = pgn_read(db, blockers_tx, &c);
	if (rc != PGN_OK)
		*n = *more = 0;
	free(c.clean);
	return rc;
}

/* One path's blocker: the first of pgn_lease_blockers' list. */
pgn_status
pgn_lease_blocking(pgn_db *db, const char *agent, const char *session,
    const char *path, struct pgn_lease_hit *hit, int *found)
{
	struct pgn_lease_block b;
	size_t n, more;
	pgn_status rc;

	memset(hit, 0, sizeof(*hit));
	*found = 0;
	rc = pgn_lease_blockers(db, agent, session, &path, 1, &b, 1, &n, &more);
	if (rc == PGN_OK && n == 1) {
		*hit = b.hit;
		*found = 1;
	}
	return rc;
}

/* ---- denied ------------------------------------------------------- */

struct denied_ctx {
	const char *agent; /* checked, or NULL */
	const char *session;
	const char *path;
	const struct pgn_lease_hit *hit;
};

static pgn_status
denied_tx(pgn_db *db, void *arg)
{
	struct denied_ctx *c = arg;
	char actor[PGN_MAX_NAME + 1] = "";
	char detail[PGN_MAX_PATH + 2 * PGN_MAX_NAME + 32];
	int64_t sid, aid, now = pgn_now_ms();
	pgn_status rc;

	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* no scope row: no agent to write for */
	if (rc == PGN_OK && c->agent != NULL)
		memcpy(actor, c->agent, strlen(c->agent) + 1);
	else if (rc == PGN_OK && c->session != NULL && c->session[0] != '\0')
		rc = session_agent(db, c->session, actor);
	if (rc == PGN_OK && actor[0] != '\0') {
		rc = pgn_agent_id(db, sid, actor, 0, &aid);
		(void)snprintf(detail, sizeof(detail), "denied %s (holder %s)",
		    c->path, c->hit->holder);
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, aid, "lease", 0, NULL, detail,
			    now);
		else if (rc == PGN_ENOTFOUND)
			rc = PGN_OK;
	}
	if (rc == PGN_OK) {
		rc = pgn_agent_id(db, sid, c->hit->holder, 0, &aid);
		(void)snprintf(detail, sizeof(detail),
		    "denied %s to %s (holder %s)", c->path,
		    actor[0] != '\0' ? actor : "an unnamed agent",
		    c->hit->holder);
		if (rc == PGN_OK)
			rc = pgn_journal_add(db, aid, "lease", 0,
			    actor[0] != '\0' ? actor : NULL, detail, now);
		else if (rc == PGN_ENOTFOUND)
			rc = PGN_OK;
	}
	return rc;
}

pgn_status
pgn_lease_denied(pgn_db *db, const char *agent, const char *session,
    const char *path, const struct pgn_lease_hit *hit)
{
	char name[PGN_MAX_NAME + 1];
	struct denied_ctx c;
	pgn_status rc;

	c.agent = NULL;
	if (agent != NULL) {
		rc = pgn_check_name(db, "agent", agent, name);
		if (rc != PGN_OK)
			return rc;
		c.agent = name;
	}
	c.session = session;
	c.path = path;
	c.hit = hit;
	return pgn_tx(db, denied_tx, &c);
}

/* ---- paths ---------------------------------------------------------- */

pgn_status
pgn_lease_relative(const char *root, const char *in, char *out, size_t outlen,
    struct pgn_err *err)
{
	const char *rest = in, *anchor = "";
	size_t rl, n;

	if (in == NULL || root == NULL)
		return pgn_err_set(err, PGN_EINVAL, "no pattern");
	if (in[0] == '/') {
		rl = strlen(root);
		while (rl > 0 && root[rl - 1] == '/')
			rl--;
		if (root[0] == '\0' || strncmp(in, root, rl) != 0 ||
		    (in[rl] != '\0' && in[rl] != '/'))
			return pgn_err_set(err, PGN_EINVAL,
			    "'%.512s' is outside the scope %s", in,
			    root[0] != '\0' ? root : "(global)");
		rest = in + rl;
		while (*rest == '/')
			rest++;
		if (*rest == '\0')
			rest = ".";
		else
			anchor = "./"; /* that place, not any depth */
	}
	n = strlen(rest);
	if (strlen(anchor) + n + 1 > outlen)
		return pgn_err_set(err, PGN_ETOOBIG,
		    "'%.64s...' is over the limit of %zu bytes", rest,
		    outlen - 1);
	memcpy(out, anchor, strlen(anchor));
	memcpy(out + strlen(anchor), rest, n + 1);
	return PGN_OK;
}

pgn_status
pgn_parse_duration(const char *s, int64_t *ms)
{
	int64_t total = 0, v, unit;
	size_t digits;

	*ms = 0;
	if (s == NULL || *s == '\0')
		return PGN_EINVAL;
	while (*s != '\0') {
		for (v = 0, digits = 0; *s >= '0' && *s <= '9'; s++, digits++)
			if (digits < 9)
				v = v * 10 + (*s - '0');
		if (digits == 0 || digits > 9)
			return PGN_EINVAL;
		switch (*s) {
		case '\0':
			if (total != 0)
				return PGN_EINVAL; /* "1h30": 30 what? */
			unit = 1000;
			break;
		case 's':
			unit = 1000;
			s++;
			break;
		case 'm':
			unit = 60 * 1000;
			s++;
			break;
		case 'h':
			unit = 60 * 60 * 1000;
			s++;
			break;
		case 'd':
			unit = 24 * 60 * 60 * 1000;
			s++;
			break;
		default:
			return PGN_EINVAL;
		}
		/* 9 digits of days is about 8.6e19 ms: cap each term first */
		if (v > INT64_MAX / unit || total > INT64_MAX - v * unit)
			return PGN_EINVAL;
		total += v * unit;
	}
	*ms = total;
	return PGN_OK;
}
