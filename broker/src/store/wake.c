/*
 * The doorbell's part of a send (docs/decisions/0176, 0177): inside the
 * send's transaction, for each recipient of a message that may wake
 * (not low, at or above the project's reach.wake), the session to ring
 * is picked and claimed — the recipient's most recently seen session
 * on this machine whose host has a doorbell, under the governor's cap,
 * when none of its sessions has a ring outstanding (rung after its last
 * delivery, less than PGN_WAKE_HEARD_MS ago). After the commit the
 * doorbell rings (hosts/doorbell.c, bounded), and a second small
 * transaction records the outcome: the message woken (when, by which
 * mechanism) and a journal line, or the claim given back. The send has
 * succeeded by then whatever happens here; every outcome but a ring is
 * one line of $PIGEON_HOME/wake.log.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_int.h"
#include "pigeon/hosts.h"
#include "reach.h"
#include "store_int.h"
#include "wake_int.h"

/*
 * The recipient's sessions that a doorbell could reach: named a
 * transcript, seen since ?2; the newest first, with what decides: the
 * governor's count, the last ring, the last delivery (delivery_session)
 * and the machine that stamped it ('' when it had no id).
 */
static const char SQL_WAKE_SESSIONS[] =
    "SELECT s.id, s.key, s.host, s.transcript_path, s.auto_continues, "
    "coalesce(s.rung_ms, 0), coalesce((SELECT max(d.delivered_ms) "
    "FROM delivery d WHERE d.session = s.key), 0), "
    "coalesce(s.machine, '') FROM session s "
    "WHERE s.agent_id = ?1 AND s.transcript_path IS NOT NULL "
    "AND s.last_seen_ms > ?2 ORDER BY s.last_seen_ms DESC LIMIT ?3";
static const char SQL_WAKE_CLAIM[] =
    "UPDATE session SET rung_ms = ?2 WHERE id = ?1";
/* A ring that came to nothing gives its claim back (unless rung since). */
static const char SQL_WAKE_GIVE_BACK[] =
    "UPDATE session SET rung_ms = nullif(?3, 0) WHERE id = ?1 "
    "AND rung_ms = ?2";
static const char SQL_WAKE_MARK[] =
    "UPDATE message SET woken_ms = ?2, woken_via = ?3 WHERE id = ?1";

void
pgn_wakes_release(struct pgn_wakes *w)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		free(w->v[i].transcript);
	w->n = 0;
}

/*
 * Before the transaction (no file is read while the write lock is
 * held): the project's reach settings and this machine's id. A low
 * message rings nothing, so reads nothing.
 */
pgn_status
pgn_wakes_prepare(pgn_db *db, struct pgn_wakes *w, int priority)
{
	pgn_status rc;

	if (priority <= PGN_PRIORITY_LOW || w->ready)
		return PGN_OK;
	rc = pgn_reach_load(db->root, &w->cfg);
	if (rc != PGN_OK)
		return pgn_fail(db, rc, "out of memory");
	if (!pgn_machine_id(w->machine))
		w->machine[0] = '\0';
	w->ready = 1;
	return PGN_OK;
}

/* One row of SQL_WAKE_SESSIONS, as read. */
struct cand {
	int64_t id, continues, rung, delivered;
	pgn_host host;
	char key[PGN_MAX_SESSION_KEY + 1];
};

static int
outstanding(const struct cand *c, int64_t now)
{
	return c->rung != 0 && c->rung > c->delivered &&
	    now - c->rung < PGN_WAKE_HEARD_MS;
}

static pgn_status
claim(pgn_db *db, struct pgn_wakes *w, const struct cand *c,
    const char *transcript, int64_t agent, const char *name, int64_t msg,
    int64_t now)
{
	struct pgn_wake *k;
	char detail[96];
	pgn_status rc = PGN_OK;

	/* A ring that no delivery followed in time: said, never "woken". */
	if (c->rung != 0 && c->rung > c->delivered) {
		(void)snprintf(detail, sizeof(detail),
		    "unheard: no delivery within %d s of the ring",
		    PGN_WAKE_HEARD_MS / 1000);
		rc =
		    pgn_journal_add(db, agent, "woken", 0, c->key, detail, now);
	}
	if (rc == PGN_OK)
		rc = pgn_exec(db, SQL_WAKE_CLAIM, "claiming a doorbell",
		    PGN_I(c->id), PGN_I(now));
	if (rc != PGN_OK)
		return rc;
	k = &w->v[w->n];
	memset(k, 0, sizeof(*k));
	k->transcript = pgn_strdup(transcript);
	if (k->transcript == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	k->session = c->id;
	k->agent = agent;
	k->msg = msg;
	k->prev = c->rung;
	k->at = now;
	k->host = c->host;
	memcpy(k->key, c->key, sizeof(k->key));
	(void)snprintf(k->name, sizeof(k->name), "%s", name);
	w->n++;
	return PGN_OK;
}

pgn_status
pgn_wake_pick(pgn_db *db, struct pgn_wakes *w, int64_t agent, const char *name,
    int64_t msg, int priority, int64_t now)
{
	struct cand c, pick;
	const struct pgn_host_info *hi;
	pgn_stmt *st = NULL;
	char *transcript = NULL;
	int any = 0, busy = 0, elsewhere = 0;
	pgn_status rc = PGN_OK;

	if (priority <= PGN_PRIORITY_LOW || w->n >= PGN_WAKE_MAX || !w->ready ||
	    w->cfg.wake_min >= PGN_WAKE_OFF || priority < w->cfg.wake_min)
		return PGN_OK;
	memset(&pick, 0, sizeof(pick));
	rc = pgn_prepare(db, SQL_WAKE_SESSIONS, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(agent),
		    PGN_I(now - PGN_WAKE_SEEN_MS), PGN_I(PGN_WAKE_SESSIONS));
	while (rc == PGN_OK &&
	    pgn_next_row(db, st, &rc, "listing sessions to wake")) {
		memset(&c, 0, sizeof(c));
		c.id = pgn_col_i64(st, 0);
		pgn_col_copy(c.key, sizeof(c.key), st, 1);
		{
			char host[PGN_MAX_NAME + 1];

			pgn_col_copy(host, sizeof(host), st, 2);
			c.host = pgn_host_by_name(host);
		}
		c.continues = pgn_col_i64(st, 4);
		c.rung = pgn_col_i64(st, 5);
		c.delivered = pgn_col_i64(st, 6);
		hi = pgn_host_get(c.host);
		if (hi == NULL || hi->doorbell == NULL)
			continue;
		if (outstanding(&c, now)) {
			busy = 1; /* one frame outstanding is enough */
			break;
		}
		if (any || elsewhere)
			continue;
		/*
		 * The newest such session owns the ring, and only its own
		 * machine can reach its socket: a send from another machine
		 * leaves it to that machine's `pigeon wake --follow`
		 * (decision 0210), and never rings an older session here.
		 */
		{
			char mach[PGN_MAX_MACHINE + 1];

			pgn_col_copy(mach, sizeof(mach), st, 7);
			if (strcmp(mach, w->machine) != 0) {
				elsewhere = 1;
				continue;
			}
		}
		free(transcript);
		transcript = pgn_col_text(st, 3);
		if (transcript == NULL) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		pick = c;
		any = 1;
	}
	pgn_finish(db, st);
	if (rc != PGN_OK || busy || !any)
		goto out;
	/* Governed like a stop's continuation: the woken turn counts. */
	if (pick.continues >= w->cfg.max_auto_continues) {
		pgn_wake_log(
		    "agent=%s session=%s msg=%lld not rung: %lld continuations in a row, the cap (reach.maxAutoContinues)",
		    name, pick.key, (long long)msg, (long long)pick.continues);
		goto out;
	}
	rc = claim(db, w, &pick, transcript, agent, name, msg, now);
out:
	free(transcript);
	return rc;
}

struct mark_ctx {
	const struct pgn_wake *k;
	const char *via;
	int rung;
};

static pgn_status
mark_tx(pgn_db *db, void *arg)
{
	const struct mark_ctx *m = arg;
	const struct pgn_wake *k = m->k;
	pgn_status rc;

	if (!m->rung)
		return pgn_exec(db, SQL_WAKE_GIVE_BACK,
		    "giving back a doorbell", PGN_I(k->session), PGN_I(k->at),
		    PGN_I(k->prev));
	rc = pgn_exec(db, SQL_WAKE_MARK, "marking a message woken",
	    PGN_I(k->msg), PGN_I(k->at), PGN_T(m->via));
	if (rc == PGN_OK)
		rc = pgn_journal_add(db, k->agent, "woken", k->msg, k->key,
		    m->via, k->at);
	return rc;
}

/* $PIGEON_HOME/wake.log, fresh; NULL when there is no home. */
static char *
wake_log_path(void)
{
	char *home = NULL, *path = NULL;
	size_t n;

	if (pgn_home_path(&home) != PGN_OK || home == NULL)
		goto out;
	n = strlen(home) + sizeof("/wake.log");
	path = malloc(n);
	if (path != NULL)
		(void)snprintf(path, n, "%s/wake.log", home);
out:
	free(home);
	return path;
}

void
pgn_wakes_ring(pgn_db *db, struct pgn_wakes *w)
{
	const struct pgn_host_info *hi;
	struct mark_ctx m;
	char why[PGN_DOORBELL_WHY];
	char tag[PGN_WAKE_LOG_LINE], *log = NULL;
	const char *id;
	pgn_ring r;
	pgn_status rc;
	size_t i;

	/* A queue doorbell's watcher writes its outcome here. */
	if (w->n > 0)
		log = wake_log_path();
	for (i = 0; i < w->n; i++) {
		const struct pgn_wake *k = &w->v[i];

		hi = pgn_host_get(k->host);
		id = strchr(k->key, ':');
		id = id != NULL ? id + 1 : k->key;
		if (hi->doorbell->kind == PGN_BELL_QUEUE) {
			if (snprintf(tag, sizeof(tag),
			        "agent=%s session=%s msg=%lld %s", k->name,
			        k->key, (long long)k->msg,
			        hi->doorbell->via) >= (int)sizeof(tag))
				tag[sizeof(tag) - 1] =
				    '\0'; /* cut, still a tag */
			r = pgn_doorbell_queue(hi->doorbell, id, k->transcript,
			    k->msg, log, tag, why);
		} else {
			r = pgn_doorbell_ring(hi->doorbell, id, k->transcript,
			    k->msg, why);
		}
		m.k = k;
		m.via = hi->doorbell->via;
		m.rung = r == PGN_RING_RUNG;
		w->v[i].rung = m.rung;
		rc = pgn_tx(db, mark_tx, &m);
		if (r != PGN_RING_RUNG)
			pgn_wake_log(
			    "agent=%s session=%s msg=%lld not rung (%s): %s",
			    k->name, k->key, (long long)k->msg,
			    pgn_ring_name(r), why);
		if (rc != PGN_OK)
			pgn_wake_log(
			    "agent=%s session=%s msg=%lld %s, not recorded: %s",
			    k->name, k->key, (long long)k->msg,
			    m.rung ? "rung" : "not rung", db->err.msg);
	}
	free(log);
}

void
pgn_wake_log(const char *fmt, ...)
{
	char line[PGN_WAKE_LOG_LINE], path[PGN_MAX_PATH], old[PGN_MAX_PATH],
	    at[32];
	struct stat sb;
	va_list ap;
	char *home = NULL;
	int fd, n, k;

	if (pgn_home_path(&home) != PGN_OK || home == NULL)
		goto out;
	if (snprintf(path, sizeof(path), "%s/wake.log", home) >=
	    (int)sizeof(path))
		goto out;
	pgn_format_time(pgn_now_ms(), at, sizeof(at));
	n = snprintf(line, sizeof(line), "%s pid=%ld ", at, (long)getpid());
	if (n < 0 || n >= (int)sizeof(line))
		goto out;
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		goto out;
	n += k < (int)sizeof(line) - n - 1 ? k : (int)sizeof(line) - n - 2;
	line[n++] = '\n';
	/* Bounded: past the cap the log moves to wake.log.1. */
	if (stat(path, &sb) == 0 && sb.st_size > PGN_WAKE_LOG_MAX &&
	    snprintf(old, sizeof(old), "%s.1", path) < (int)sizeof(old))
		(void)rename(path, old);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0)
		goto out;
	if (write(fd, line, (size_t)n) < 0) {
		/* The log is best effort. */
	}
	close(fd);
out:
	free(home);
}

/* ---- the doorbell across machines (PostgreSQL, decision 0210) ------- */

/* A message the bell named, if still queued in this scope. */
static const char SQL_WAKE_MSG[] =
    "SELECT m.recipient_id, a.name, m.priority FROM message m "
    "JOIN agent a ON a.id = m.recipient_id WHERE m.id = ?1 "
    "AND m.scope_id = ?2 AND m.delivered_ms IS NULL AND a.removed_ms IS NULL";
/* After bells were lost: each recipient's newest queued message. */
static const char SQL_WAKE_QUEUED[] =
    "SELECT max(id) FROM message WHERE scope_id = ?1 "
    "AND delivered_ms IS NULL AND priority >= ?2 GROUP BY recipient_id "
    "ORDER BY 1 DESC LIMIT ?3";

struct follow_ctx {
	struct pgn_wakes *w;
	int64_t ids[PGN_WAKE_BELL_BATCH];
	size_t n;
	int all; /* some bells were lost: look at every recipient */
};

/* Inside the transaction: pick for message 'id' as its send would. */
static pgn_status
follow_one(pgn_db *db, struct pgn_wakes *w, int64_t sid, int64_t id,
    int64_t now)
{
	char name[PGN_MAX_NAME + 1];
	pgn_stmt *st = NULL;
	int64_t agent = 0;
	int priority = 0, found = 0;
	pgn_status rc;

	rc = pgn_prepare(db, SQL_WAKE_MSG, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(id), PGN_I(sid));
	if (rc == PGN_OK &&
	    pgn_next_row(db, st, &rc, "reading a message to wake for")) {
		agent = pgn_col_i64(st, 0);
		pgn_col_copy(name, sizeof(name), st, 1);
		priority = (int)pgn_col_i64(st, 2);
		found = 1;
	}
	pgn_finish(db, st);
	if (rc != PGN_OK || !found)
		return rc;
	return pgn_wake_pick(db, w, agent, name, id, priority, now);
}

static pgn_status
follow_tx(pgn_db *db, void *arg)
{
	struct follow_ctx *c = arg;
	pgn_stmt *st = NULL;
	int64_t sid, now;
	size_t i;
	pgn_status rc;

	pgn_wakes_release(c->w); /* a retried transaction starts over */
	now = pgn_now_ms();
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* no scope yet: nothing queued */
	if (rc != PGN_OK)
		return rc;
	if (c->all) {
		c->n = 0;
		rc = pgn_prepare(db, SQL_WAKE_QUEUED, &st);
		if (rc == PGN_OK)
			rc = pgn_bind(db, st, PGN_I(sid),
			    PGN_I(c->w->cfg.wake_min),
			    PGN_I(PGN_WAKE_BELL_BATCH));
		while (rc == PGN_OK && c->n < PGN_WAKE_BELL_BATCH &&
		    pgn_next_row(db, st, &rc, "listing queued messages"))
			c->ids[c->n++] = pgn_col_i64(st, 0);
		pgn_finish(db, st);
	}
	for (i = 0; rc == PGN_OK && i < c->n; i++)
		rc = follow_one(db, c->w, sid, c->ids[i], now);
	return rc;
}

/* Pick in one transaction, ring after its commit. */
static pgn_status
follow_look(pgn_db *db, struct follow_ctx *c, size_t *rung)
{
	size_t i;
	pgn_status rc;

	rc = pgn_wakes_prepare(db, c->w, PGN_PRIORITY_NORMAL);
	if (rc == PGN_OK && c->w->cfg.wake_min < PGN_WAKE_OFF &&
	    (c->all || c->n > 0))
		rc = pgn_tx(db, follow_tx, c);
	if (rc == PGN_OK) {
		pgn_wakes_ring(db, c->w);
		for (i = 0; i < c->w->n; i++)
			*rung += c->w->v[i].rung;
	}
	pgn_wakes_release(c->w);
	c->w->ready = 0; /* the next look reads the config again */
	return rc;
}

pgn_status
pgn_wake_listen(pgn_db *db, size_t *rung)
{
	struct pgn_wakes w;
	struct follow_ctx c;
	int n;

	*rung = 0;
	if (db->be->bell_take == NULL)
		return pgn_fail(db, PGN_EINVAL,
		    "%s rings from the sending machine: only a PostgreSQL store has other machines to follow",
		    db->be->name);
	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	c.w = &w;
	/* Listen first: a message queued meanwhile is heard, not lost. */
	n = db->be->bell_take(db, 0, c.ids, PGN_WAKE_BELL_BATCH);
	if (n == -2)
		return PGN_EIO; /* recorded on db */
	c.n = 0;
	c.all = 1;
	return follow_look(db, &c, rung);
}

pgn_status
pgn_wake_next(pgn_db *db, int64_t ms, size_t *rung)
{
	struct pgn_wakes w;
	struct follow_ctx c;
	int n;

	*rung = 0;
	if (db->be->bell_take == NULL)
		return pgn_fail(db, PGN_EINVAL, "%s has no bell to follow",
		    db->be->name);
	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	c.w = &w;
	n = db->be->bell_take(db, ms, c.ids, PGN_WAKE_BELL_BATCH);
	if (n == -1 || n == 0)
		return PGN_OK; /* a signal, or the time ran out */
	if (n == -2)
		return PGN_EIO; /* recorded on db */
	if (n > PGN_WAKE_BELL_BATCH)
		c.all = 1;
	else
		c.n = (size_t)n;
	return follow_look(db, &c, rung);
}
