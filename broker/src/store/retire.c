/*
 * Retiring agents (decision 0184): pigeon agent rm releases the agent's
 * leases and retires it, in one transaction (decision 0206); pigeon agent prune
 * retires the agents made for unnamed sessions that nothing has reached for a
 * while. Its own file: it calls both agents.c and lease.c, which know nothing
 * of it.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_int.h"
#include "stamp.h"
#include "store_int.h"

/*
 * Candidates: live agents of the scope, nothing queued, no sign of life
 * since ?2, created by a session's hook (the 'created' entry's detail
 * is the session key, "host:id"; pigeon agent add writes "added", send
 * --create its own words without a colon).
 */
static const char SQL_PRUNE_CANDIDATES[] =
    "SELECT a.name FROM agent a WHERE a.scope_id = ?1 "
    "AND a.removed_ms IS NULL "
    "AND coalesce(a.last_seen_ms, a.created_ms) < ?2 "
    "AND a.created_ms < ?2 "
    "AND NOT EXISTS (SELECT 1 FROM session s WHERE s.agent_id = a.id "
    " AND s.last_seen_ms >= ?2) "
    "AND NOT EXISTS (SELECT 1 FROM message m WHERE m.recipient_id = a.id "
    " AND m.delivered_ms IS NULL) "
    "AND EXISTS (SELECT 1 FROM journal j WHERE j.agent_id = a.id "
    " AND j.kind = 'created' AND j.detail LIKE '%:%') "
    "ORDER BY a.name";

struct retire_ctx {
	const char *name; /* checked */
	const char *why;
	int64_t idle_before; /* prune's cutoff; 0: rm, no such check */
	size_t leases;
	int lowered;
	int kept; /* seen since the cutoff: left as it is */
};

/* Still idle at the retirement: no sign of life since ?2 (as chosen). */
static const char SQL_STILL_IDLE[] =
    "SELECT count(*) FROM agent a WHERE a.id = ?1 "
    "AND coalesce(a.last_seen_ms, a.created_ms) < ?2 "
    "AND NOT EXISTS (SELECT 1 FROM session s WHERE s.agent_id = a.id "
    " AND s.last_seen_ms >= ?2)";

/*
 * One transaction (decision 0206): mail that arrives meanwhile either
 * commits first, and refuses the whole retirement, or after, and finds
 * the agent gone; never an agent kept whose leases are gone.
 */
static pgn_status
retire_tx(pgn_db *db, void *arg)
{
	struct retire_ctx *c = arg;
	int64_t id, idle = 1;
	pgn_status rc;

	c->leases = 0;
	c->lowered = 0;
	c->kept = 0;
	/* Queued mail refuses it before a lease is touched. */
	rc = pgn_agent_rm_check_in_tx(db, c->name, &id);
	/* prune: a session that came back since the choice keeps it */
	if (rc == PGN_OK && c->idle_before != 0)
		rc = pgn_select_i64(db, SQL_STILL_IDLE, &idle,
		    "reading the agent", PGN_I(id), PGN_I(c->idle_before));
	if (rc == PGN_OK && !idle) {
		c->kept = 1;
		return PGN_OK;
	}
	if (rc == PGN_OK)
		rc = pgn_lease_release_all_in_tx(db, c->name, &c->leases,
		    &c->lowered);
	if (rc == PGN_OK)
		rc = pgn_agent_rm_in_tx(db, c->name, c->why, &id);
	return rc;
}

pgn_status
pgn_agent_retire_idle(pgn_db *db, const char *name, const char *why,
    int64_t idle_before_ms, size_t *leases, int *kept)
{
	char canon[PGN_MAX_NAME + 1];
	struct retire_ctx c;
	pgn_status rc;

	*leases = 0;
	*kept = 0;
	rc = pgn_check_name(db, "agent", name, canon);
	if (rc != PGN_OK)
		return rc;
	memset(&c, 0, sizeof(c));
	c.name = canon;
	c.why = why;
	c.idle_before = idle_before_ms;
	rc = pgn_tx(db, retire_tx, &c);
	if (rc == PGN_OK && c.lowered)
		pgn_lease_restamp(db);
	if (rc == PGN_OK) {
		*leases = c.leases;
		*kept = c.kept;
	}
	return rc;
}

pgn_status
pgn_agent_retire(pgn_db *db, const char *name, const char *why, size_t *leases)
{
	int kept;

	return pgn_agent_retire_idle(db, name, why, 0, leases, &kept);
}

struct prune_ctx {
	int64_t before;
	struct pgn_agents *out;
};

static pgn_status
candidates_tx(pgn_db *db, void *arg)
{
	struct prune_ctx *c = arg;
	struct pgn_agents *out = c->out;
	pgn_stmt *st = NULL;
	char *name;
	int64_t sid;
	pgn_status rc;

	pgn_agents_release(out);
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK;
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, SQL_PRUNE_CANDIDATES, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(c->before));
	while (pgn_next_row(db, st, &rc, "listing agents to prune")) {
		name = pgn_col_text(st, 0);
		if (name == NULL) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		/* Only a name the generator makes: a person's name stays. */
		if (!pgn_name_is_generated(name)) {
			free(name);
			continue;
		}
		if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n,
		        sizeof(*out->v))) {
			free(name);
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		memset(&out->v[out->n], 0, sizeof(out->v[0]));
		out->v[out->n++].name = name;
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_agents_prune(pgn_db *db, int64_t idle_before_ms, int dry_run,
    struct pgn_agents *out)
{
	struct prune_ctx c = {idle_before_ms, out};
	char why[128], at[32];
	size_t i, k, leases;
	pgn_status rc;
	int kept;

	rc = pgn_tx(db, candidates_tx, &c);
	if (rc != PGN_OK || dry_run)
		return rc;
	pgn_format_time(idle_before_ms, at, sizeof(at));
	(void)snprintf(why, sizeof(why),
	    "pruned: a generated agent with nothing queued and no session since %s",
	    at);
	for (i = 0, k = 0; i < out->n; i++) {
		rc = pgn_agent_retire_idle(db, out->v[i].name, why,
		    idle_before_ms, &leases, &kept);
		if (rc == PGN_EFULL || (rc == PGN_OK && kept)) {
			/* mail or a session reached it meanwhile: it stays */
			free(out->v[i].name);
			continue;
		}
		if (rc != PGN_OK) {
			for (; i < out->n; i++)
				free(out->v[i].name);
			out->n = k;
			return rc;
		}
		out->v[k++] = out->v[i];
	}
	out->n = k;
	return PGN_OK;
}

/*
 * The automatic prune (decision 0228): due when this machine's stamp
 * for the database and scope, $PIGEON_HOME/pruned-HASH, is missing or
 * older than PGN_AUTOPRUNE_EVERY_MS (or more than PGN_AUTOPRUNE_SKEW_MS
 * in the future: a clock set back). The stamp is
 * renewed before the prune, so processes racing to it prune once; a
 * state home that cannot be found or written means no automatic prune.
 */
static int
autoprune_due(const pgn_db *db, int64_t now_ms)
{
	char *home = NULL;
	struct pgn_buf key, path;
	struct pgn_err err;
	struct stat sb;
	int64_t at;
	int fd, due = 0;

	if (pgn_home_path(&home) != PGN_OK || home == NULL)
		return 0;
	pgn_buf_init(&key, PGN_MAX_PATH * 2 + 2);
	pgn_buf_init(&path, PGN_MAX_PATH);
	pgn_buf_addf(&key, "%s\n%s", pgn_db_shown(db), pgn_db_scope(db));
	if (key.err != PGN_OK || pgn_home_ensure(home, &err) != PGN_OK)
		goto out;
	pgn_buf_addf(&path, "%s/pruned-%016" PRIx64, home,
	    pgn_stamp_hash(key.data, key.len));
	if (path.err != PGN_OK)
		goto out;
	if (lstat(path.data, &sb) == 0) {
		at = (int64_t)sb.st_mtim.tv_sec * 1000 +
		    sb.st_mtim.tv_nsec / 1000000;
		if (!S_ISREG(sb.st_mode) ||
		    (at <= now_ms + PGN_AUTOPRUNE_SKEW_MS &&
		        now_ms - at < PGN_AUTOPRUNE_EVERY_MS))
			goto out;
	}
	fd = open(path.data, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	due = futimens(fd, NULL) == 0;
	close(fd);
out:
	pgn_buf_release(&key);
	pgn_buf_release(&path);
	free(home);
	return due;
}

pgn_status
pgn_agents_autoprune(pgn_db *db, long days, int64_t now_ms,
    struct pgn_agents *out)
{
	if (days <= 0 || !autoprune_due(db, now_ms))
		return PGN_OK;
	return pgn_agents_prune(db, now_ms - (int64_t)days * 86400000LL, 0,
	    out);
}
