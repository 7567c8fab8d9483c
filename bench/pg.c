/*
 * The benchmark's PostgreSQL section (docs/benchmarks.md, decisions 0119
 * and 0126): a throwaway server (scripts/pg-test-server) unless
 * PGN_BENCH_PG names one, PgBouncer in front of it when installed; then
 * the hook, concurrent sends and concurrent claims on PostgreSQL, each
 * beside the same on a SQLite file set up the same way.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "banned.h"

#define T_PG_HOOK_MS 5.0 /* hook median over a local Unix socket */
#define PG_CLAIM_Q   99  /* agents whose queues the claimers empty */

/* The server of the PostgreSQL section and its database. */
static struct {
	char dir[PATH_MAX];    /* a throwaway server's directory, or "" */
	char script[PATH_MAX]; /* scripts/pg-test-server */
	char server[PATH_MAX]; /* conninfo of the server */
	char db[PATH_MAX];     /* conninfo of the benchmark's database */
	char peer[PATH_MAX];   /* the SQLite file set up the same way */
	char bdir[PATH_MAX];   /* PgBouncer's directory, or "" */
	char bdb[PATH_MAX];    /* conninfo of pgn_bench through it */
	int bpid;              /* PgBouncer's pid */
} pgb;

/* Run argv (argv[0] an absolute path) to its end; 1 if it exited 0. */
static int
pg_run(char *const *argv)
{
	spawn_argv(argv, g.errfile);
	if (!exited_ok(&pr))
		note("  %s failed: %.300s", argv[0], pr.err);
	return exited_ok(&pr);
}

static void
pg_bouncer_stop(void)
{
	char *rm[] = {(char *)"/bin/rm", (char *)"-rf", pgb.bdir, NULL};
	struct timespec ts = {0, 200000000L};
	int i;

	if (pgb.bpid > 0) {
		kill(pgb.bpid, SIGTERM);
		for (i = 0; i < 25 && kill(pgb.bpid, 0) == 0; i++)
			nanosleep(&ts, NULL);
		pgb.bpid = 0;
	}
	if (pgb.bdir[0] != '\0') {
		(void)pg_run(rm);
		pgb.bdir[0] = '\0';
	}
}

/*
 * PgBouncer in front of the throwaway server, session pooling, on a
 * Unix socket of its own, when /usr/sbin/pgbouncer is installed: what a
 * pooler changes (decision 0119). 0 with the reason in 'why' if not.
 */
static int
pg_bouncer_start(char *why, size_t len)
{
	char tmpl[64], path[PATH_MAX], pidtext[32];
	const char *host;
	FILE *f;
	int i, fd;
	ssize_t n;

	if (access("/usr/sbin/pgbouncer", X_OK) != 0) {
		pathf(why, len, "pgbouncer is not installed");
		return 0;
	}
	if (pgb.dir[0] == '\0') {
		pathf(why, len, "PGN_BENCH_PG names the server");
		return 0;
	}
	host = pgb.dir;
	pathf(tmpl, sizeof(tmpl), "/tmp/pigeon-bench-pgb.XXXXXX");
	if (mkdtemp(tmpl) == NULL)
		die("mkdtemp: %s", strerror(errno));
	pathf(pgb.bdir, sizeof(pgb.bdir), "%s", tmpl);
	atexit(pg_bouncer_stop);
	pathf(path, sizeof(path), "%s/pgbouncer.ini", pgb.bdir);
	f = fopen(path, "w");
	if (f == NULL ||
	    fprintf(f,
	        "[databases]\n* = host=%s port=5432\n[pgbouncer]\n"
	        "listen_addr =\nlisten_port = 6432\nunix_socket_dir = %s\n"
	        "auth_type = trust\nauth_file = %s/users.txt\n"
	        "pool_mode = session\nmax_client_conn = 200\n"
	        "default_pool_size = 20\nlogfile = %s/pgbouncer.log\n"
	        "pidfile = %s/pgbouncer.pid\n",
	        host, pgb.bdir, pgb.bdir, pgb.bdir, pgb.bdir) < 0 ||
	    fclose(f) != 0)
		die("cannot write %s", path);
	pathf(path, sizeof(path), "%s/users.txt", pgb.bdir);
	f = fopen(path, "w");
	if (f == NULL || fputs("\"pigeon\" \"\"\n", f) < 0 || fclose(f) != 0)
		die("cannot write %s", path);
	pathf(path, sizeof(path), "%s/pgbouncer.ini", pgb.bdir);
	if (getuid() == 0) {
		char *chown[] = {(char *)"/bin/chown", (char *)"-R",
		    (char *)"postgres:", pgb.bdir, NULL};
		char *run[] = {(char *)"/usr/sbin/runuser", (char *)"-u",
		    (char *)"postgres", (char *)"--",
		    (char *)"/usr/sbin/pgbouncer", (char *)"-q", (char *)"-d",
		    path, NULL};

		if (!pg_run(chown) || !pg_run(run)) {
			pathf(why, len, "pgbouncer did not start");
			return 0;
		}
	} else {
		char *run[] = {(char *)"/usr/sbin/pgbouncer", (char *)"-q",
		    (char *)"-d", path, NULL};

		if (!pg_run(run)) {
			pathf(why, len, "pgbouncer did not start");
			return 0;
		}
	}
	pathf(path, sizeof(path), "%s/pgbouncer.pid", pgb.bdir);
	for (i = 0; i < 50; i++) {
		struct timespec ts = {0, 100000000L};

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, pidtext, sizeof(pidtext) - 1);
			close(fd);
			if (n > 0) {
				pidtext[n] = '\0';
				pgb.bpid = (int)strtol(pidtext, NULL, 10);
				break;
			}
		}
		nanosleep(&ts, NULL);
	}
	if (pgb.bpid <= 0) {
		pathf(why, len, "pgbouncer wrote no pid file");
		return 0;
	}
	pathf(pgb.bdb, sizeof(pgb.bdb),
	    "host=%s port=6432 user=pigeon dbname=pgn_bench", pgb.bdir);
	return 1;
}

static void
pg_stop(void)
{
	char *argv[4];

	if (pgb.dir[0] == '\0')
		return;
	argv[0] = pgb.script;
	argv[1] = (char *)"stop";
	argv[2] = pgb.dir;
	argv[3] = NULL;
	spawn_argv(argv, NULL);
	pgb.dir[0] = '\0';
}

/* psql -c SQL on conninfo 'conn'; 0 on success. */
static int
pg_psql(const char *conn, const char *sql)
{
	char *argv[] = {(char *)"/usr/bin/psql", (char *)"-X", (char *)"-q",
	    (char *)"-v", (char *)"ON_ERROR_STOP=1", (char *)conn, (char *)"-c",
	    (char *)sql, NULL};

	return pg_run(argv) ? 0 : -1;
}

/*
 * The server: PGN_BENCH_PG (a conninfo) if set, else a throwaway one
 * from scripts/pg-test-server, stopped at exit. A fresh database
 * pgn_bench on it. 0 with the reason in 'why' if there is none.
 */
static int
pg_setup(const struct opts *o, char *why, size_t len)
{
	const char *env = getenv("PGN_BENCH_PG");
	char *argv[4], tmpl[64];
	char *nl;

	if (!pgn_pg_available()) {
		pathf(why, len,
		    "this build has no PostgreSQL backend (libpq-dev)");
		return 0;
	}
	if (env != NULL && env[0] != '\0') {
		pathf(pgb.server, sizeof(pgb.server), "%s", env);
	} else {
		pathf(pgb.script, sizeof(pgb.script),
		    "%s/../scripts/pg-test-server", o->bin);
		if (access(pgb.script, X_OK) != 0) {
			pathf(why, len, "no %s", pgb.script);
			return 0;
		}
		pathf(tmpl, sizeof(tmpl), "/tmp/pigeon-bench-pg.XXXXXX");
		if (mkdtemp(tmpl) == NULL)
			die("mkdtemp: %s", strerror(errno));
		pathf(pgb.dir, sizeof(pgb.dir), "%s", tmpl);
		atexit(pg_stop);
		argv[0] = pgb.script;
		argv[1] = (char *)"start";
		argv[2] = pgb.dir;
		argv[3] = NULL;
		spawn_argv(argv, g.errfile);
		if (!exited_ok(&pr)) {
			pathf(why, len, "scripts/pg-test-server: %.200s",
			    pr.err);
			if ((nl = strchr(why, '\n')) != NULL)
				*nl = '\0';
			pgb.dir[0] = '\0';
			return 0;
		}
		if ((nl = strchr(pr.out, '\n')) != NULL)
			*nl = '\0';
		pathf(pgb.server, sizeof(pgb.server), "%s", pr.out);
	}
	if (pg_psql(pgb.server,
	        "DROP DATABASE IF EXISTS pgn_bench WITH (FORCE)") != 0 ||
	    pg_psql(pgb.server, "CREATE DATABASE pgn_bench") != 0) {
		pathf(why, len, "cannot create the database pgn_bench");
		return 0;
	}
	pathf(pgb.db, sizeof(pgb.db), "%s dbname=pgn_bench", pgb.server);
	return 1;
}

/*
 * One database as the hook sees it in use: 100 agents in the scope
 * (target, a01..a99), the two benchmark sessions bound to target, three
 * messages waiting for a01..a09. The same for both engines.
 */
static void
pg_fill(const char *db)
{
	char bound[PGN_MAX_NAME + 1];
	pgn_db *h = lib_open(db, PGN_OPEN_CREATE);

	add_agents(h, 0, 100, 0);
	if (pgn_session_bind(h, "claude", "claude:bench-claude", "target",
	        bound) != PGN_OK ||
	    pgn_session_bind(h, "cursor", "cursor:bench-cursor", "target",
	        bound) != PGN_OK)
		die("bind: %s", pgn_errmsg(h));
	queue_each(h, 1, 10, 3);
	pgn_db_close(h);
}

/* Mark every queued message delivered, on either engine. */
static void
pg_drain(const char *db)
{
	if (pgn_db_is_postgres(db)) {
		if (pg_psql(db,
		        "UPDATE message SET delivered_ms = created_ms WHERE delivered_ms IS NULL") !=
		    0)
			die("cannot drain %s", db);
	} else {
		drain_sql(db);
	}
}

/* pgn_db_open + pgn_db_close, n times: what a process pays to connect. */
static struct stats
pg_connect_times(const char *db, int n)
{
	struct stats s;
	double *v = calloc((size_t)n, sizeof(*v)), t0;
	pgn_db *h;
	int i;

	if (v == NULL)
		die("out of memory");
	for (i = 0; i < n; i++) {
		t0 = now_ms();
		h = lib_open(db, 0);
		pgn_db_close(h);
		v[i] = now_ms() - t0;
	}
	s = stats_of(v, (size_t)n);
	free(v);
	return s;
}

static int
cmp_i64(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/*
 * 8 processes at once, each with its own connection, claim one message
 * per transaction (max 1) from agent a01's queue, then a02's, and so on
 * to a99's, until all are empty; each writes the ids it got. 'queued'
 * messages were waiting. Returns claims per second; '*lat' gets the
 * per-claim latency; '*dups' and '*lost' what the ids show.
 */
static double
pg_claimers(const char *db, int queued, struct stats *lat, int *dups, int *lost)
{
	char path[PATH_MAX], name[32];
	double *all = NULL, wall, c0;
	long long *ids = NULL;
	size_t total = 0, cap = 0, k;
	pid_t pid[NLOOPS];
	int go[2], i, a, failed;
	FILE *f;

	if (pipe(go) != 0)
		die("pipe: %s", strerror(errno));
	for (i = 0; i < NLOOPS; i++) {
		pid[i] = fork();
		if (pid[i] != 0)
			continue;
		{
			struct pgn_claim rq;
			struct pgn_msgs got;
			pgn_db *h;
			char c;
			FILE *out;

			close(go[1]);
			h = lib_open(db, 0);
			pathf(path, sizeof(path), "%s/claims-%d.txt", g.work,
			    i);
			out = fopen(path, "w");
			if (out == NULL || read(go[0], &c, 1) != 1)
				_exit(1);
			for (a = 1; a <= PG_CLAIM_Q; a++) {
				agent_name(name, sizeof(name), a);
				for (;;) {
					memset(&rq, 0, sizeof(rq));
					rq.agent = name;
					rq.route = "cli";
					rq.max = 1;
					c0 = now_ms();
					if (pgn_claim(h, &rq, &got) != PGN_OK)
						_exit(2);
					c0 = now_ms() - c0;
					for (k = 0; k < got.n; k++)
						fprintf(out, "%lld %.4f\n",
						    (long long)got.v[k].id, c0);
					k = got.n;
					pgn_msgs_release(&got);
					if (k == 0)
						break;
				}
			}
			pgn_db_close(h);
			_exit(fclose(out) == 0 ? 0 : 1);
		}
	}
	close(go[0]);
	/* every child has connected after 300 ms */
	failed = release_loops(go[1], pid, NLOOPS, 300, &wall);
	close(go[1]);
	if (failed)
		note("  %d claimer processes failed", failed);
	for (i = 0; i < NLOOPS; i++) {
		long long x;
		double l;

		pathf(path, sizeof(path), "%s/claims-%d.txt", g.work, i);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		while (fscanf(f, "%lld %lf", &x, &l) == 2) {
			if (total == cap) {
				cap = cap ? cap * 2 : 4096;
				ids = realloc(ids, cap * sizeof(*ids));
				all = realloc(all, cap * sizeof(*all));
				if (ids == NULL || all == NULL)
					die("out of memory");
			}
			ids[total] = x;
			all[total] = l;
			total++;
		}
		fclose(f);
		unlink(path);
	}
	qsort(ids, total, sizeof(*ids), cmp_i64);
	*dups = 0;
	for (k = 1; k < total; k++)
		if (ids[k] == ids[k - 1])
			(*dups)++;
	*lost = queued - (int)(total - (size_t)*dups);
	*lat = stats_of(all, total);
	free(ids);
	free(all);
	return (double)total / (wall / 1e3);
}

/* Queue 'per' messages for each of a01..a99, 50 recipients a send. */
static int
pg_queue_all(const char *db, int per)
{
	static const char body[] = "a ping for the claimers";
	const char *to[50];
	char names[PG_CLAIM_Q][32];
	struct pgn_send rq;
	struct pgn_sent sent[50];
	size_t n;
	pgn_db *h = lib_open(db, 0);
	int i, j, k, total = 0;

	for (i = 0; i < PG_CLAIM_Q; i++)
		agent_name(names[i], sizeof(names[i]), i + 1);
	memset(&rq, 0, sizeof(rq));
	rq.from = "target";
	rq.to = to;
	rq.body = body;
	rq.body_len = strlen(body);
	for (k = 0; k < per; k++)
		for (i = 0; i < PG_CLAIM_Q; i += 50) {
			for (j = 0; j < 50 && i + j < PG_CLAIM_Q; j++)
				to[j] = names[i + j];
			rq.nto = (size_t)j;
			if (pgn_send(h, &rq, sent, 50, &n) != PGN_OK)
				die("queue: %s", pgn_errmsg(h));
			total += (int)n;
		}
	pgn_db_close(h);
	return total;
}

/*
 * The floor beside the hook: bench/pgfloor.c (load libpq, connect to
 * 'conninfo', SELECT 1, exit) paired with /bin/true, as time_case pairs
 * the hook. What no libpq client can go below (decision 0126).
 */
static struct hook_result
pg_floor_times(const struct opts *o, const char *conninfo)
{
	struct hook_result r;
	char *fargv[3], *targv[2], path[PATH_MAX];
	double *fv, *tv;
	int i, warm = o->quick ? 5 : 20, n = o->runs;

	memset(&r, 0, sizeof(r));
	pathf(path, sizeof(path), "%s/bench/pigeon-bench-pgfloor", o->bin);
	fv = calloc((size_t)n, sizeof(*fv));
	tv = calloc((size_t)n, sizeof(*tv));
	if (fv == NULL || tv == NULL)
		die("out of memory");
	fargv[0] = path;
	fargv[1] = (char *)conninfo;
	fargv[2] = NULL;
	targv[0] = (char *)"/bin/true";
	targv[1] = NULL;
	set_env(NULL);
	for (i = -warm; i < n; i++) {
		pr.dir = NULL;
		pr.errpath = NULL;
		pr.in = NULL;
		pr.inlen = 0;
		pr.argv = targv;
		spawn(&pr);
		if (i >= 0)
			tv[i] = pr.ms;
		pr.argv = fargv;
		spawn(&pr);
		if (!exited_ok(&pr) && r.bad++ == 0)
			note("  %s failed: '%.200s'", path, pr.err);
		if (i >= 0)
			fv[i] = pr.ms;
	}
	return paired(&r, fv, tv, n);
}

/* A table cell "p50 / p95[ / p99]" ms, or "not measured". */
static const char *
pg_cell(int have, double a, double b, double c, char *out)
{
	if (!have)
		pathf(out, 64, "not measured");
	else if (c < 0)
		pathf(out, 64, "%.3f / %.3f", a, b);
	else
		pathf(out, 64, "%.3f / %.3f / %.3f", a, b, c);
	return out;
}

static const char *
pg_ratio(int have, double truth, double ratio, char *out)
{
	if (!have)
		pathf(out, 64, "not measured");
	else
		pathf(out, 64, "%.3f, %.2f×", truth, ratio);
	return out;
}

void
bench_pg(const struct opts *o)
{
	struct verdict *v = verdict(
	    "PostgreSQL: the hook over a local Unix socket, one message, median",
	    "<= 5 ms");
	struct hook_case hc[6];
	struct hook_result hr[6], fl[2];
	struct stats conn_pg, conn_sq, conn_pb, s8[2], cl[2];
	struct loop_result lr;
	char bwhy[128];
	int nb;
	double rate8[2], crate[2], wall;
	char why[256], cell[5][64];
	const char *eng[2] = {"SQLite", "PostgreSQL"};
	const char *dbs[2];
	int i, e, m = o->quick ? 100 : 500, per = o->quick ? 20 : 100;
	int ok[2], failed[2], dups[2], lost[2], queued[2];
	double *lat;
	cJSON *j, *x;

	say("\n## PostgreSQL, side by side with SQLite\n\n");
	if (!pg_setup(o, why, sizeof(why))) {
		say("Not measured: %s.\n", why);
		note("postgresql: not measured: %s", why);
		return;
	}
	pathf(pgb.peer, sizeof(pgb.peer), "%s/pg-peer.db", g.dbdir);
	rm_db(pgb.peer);
	dbs[0] = pgb.peer;
	dbs[1] = pgb.db;
	note("postgresql: %s", pgb.server);
	for (e = 0; e < 2; e++)
		pg_fill(dbs[e]);

	note("postgresql: connecting, %d times each", o->quick ? 100 : 300);
	conn_sq = pg_connect_times(pgb.peer, o->quick ? 100 : 300);
	conn_pg = pg_connect_times(pgb.db, o->quick ? 100 : 300);

	for (e = 0; e < 2; e++) {
		hc[e * 2] = (struct hook_case){eng[e], dbs[e], HOST_CLAUDE, 1};
		hc[e * 2 + 1] =
		    (struct hook_case){eng[e], dbs[e], HOST_TOOL, 0};
	}
	nb = pg_bouncer_start(bwhy, sizeof(bwhy)) ? 6 : 4;
	if (nb == 6) {
		hc[4] =
		    (struct hook_case){"PgBouncer", pgb.bdb, HOST_CLAUDE, 1};
		hc[5] = (struct hook_case){"PgBouncer", pgb.bdb, HOST_TOOL, 0};
		conn_pb = pg_connect_times(pgb.bdb, o->quick ? 100 : 300);
	} else {
		note("postgresql: no PgBouncer row: %s", bwhy);
	}
	for (i = 0; i < nb; i++) {
		note("postgresql: %s %s, %d queued, %d pairs", hc[i].dbname,
		    host_label[hc[i].host], hc[i].queued, o->runs);
		hr[i] = time_case(o, &hc[i]);
	}
	note("postgresql: the libpq floor, %d pairs", o->runs);
	fl[0] = pg_floor_times(o, pgb.db);
	if (nb == 6)
		fl[1] = pg_floor_times(o, pgb.bdb);
	pg_bouncer_stop();

	lat = calloc((size_t)(m * NLOOPS), sizeof(*lat));
	if (lat == NULL)
		die("out of memory");
	for (e = 0; e < 2; e++) {
		note("postgresql: %s, %d loops of %d `pigeon send`", eng[e],
		    NLOOPS, m);
		wall = run_senders(dbs[e], m, "pg-send-err", lat, &lr);
		ok[e] = lr.ok;
		failed[e] = lr.failed;
		rate8[e] = (double)ok[e] / (wall / 1e3);
		s8[e] = stats_of(lat, (size_t)(m * NLOOPS));
		pg_drain(dbs[e]);

		note("postgresql: %s, 8 claimers emptying 99 queues of %d",
		    eng[e], per);
		queued[e] = pg_queue_all(dbs[e], per);
		crate[e] =
		    pg_claimers(dbs[e], queued[e], &cl[e], &dups[e], &lost[e]);
	}
	free(lat);

	say("Server: %s (`PGN_BENCH_PG`, else a throwaway `scripts/pg-test-server`); both databases: 100 agents, nothing delivered yet.\n\n",
	    pgb.dir[0] ? "a throwaway server on a Unix socket" :
	                 "PGN_BENCH_PG");
	say("| what | SQLite | PostgreSQL | PostgreSQL through PgBouncer |\n|---|---:|---:|---:|\n");
	say("| connect: `pgn_db_open` + `pgn_db_close`, p50 / p95 ms | %.3f / %.3f | %.3f / %.3f | %s |\n",
	    conn_sq.p50, conn_sq.p95, conn_pg.p50, conn_pg.p95,
	    pg_cell(nb == 6, conn_pb.p50, conn_pb.p95, -1, cell[0]));
	for (i = 0; i < 2; i++)
		say("| `%s` (%d queued): hook p50 / p95 / p99 ms | %.3f / %.3f / %.3f | **%.3f** / %.3f / %.3f | %s |\n",
		    host_label[hc[i].host], hc[i].queued, hr[i].hook.p50,
		    hr[i].hook.p95, hr[i].hook.p99, hr[i + 2].hook.p50,
		    hr[i + 2].hook.p95, hr[i + 2].hook.p99,
		    pg_cell(nb == 6, hr[i + 4].hook.p50, hr[i + 4].hook.p95,
		        hr[i + 4].hook.p99, cell[i + 1]));
	say("| the floor: load libpq, connect, `SELECT 1`, exit: p50 / p95 / p99 ms | | %.3f / %.3f / %.3f | %s |\n",
	    fl[0].hook.p50, fl[0].hook.p95, fl[0].hook.p99,
	    pg_cell(nb == 6, fl[1].hook.p50, fl[1].hook.p95, fl[1].hook.p99,
	        cell[0]));
	say("| the floor: `/bin/true` p50 ms, ratio of the medians | | %.3f, %.2f× | %s |\n",
	    fl[0].truth.p50, fl[0].ratio,
	    pg_ratio(nb == 6, fl[1].truth.p50, fl[1].ratio, cell[0]));
	for (i = 0; i < 2; i++)
		say("| `%s`: `/bin/true` p50 ms, ratio of the medians | %.3f, %.2f× | %.3f, %.2f× | %s |\n",
		    host_label[hc[i].host], hr[i].truth.p50, hr[i].ratio,
		    hr[i + 2].truth.p50, hr[i + 2].ratio,
		    pg_ratio(nb == 6, hr[i + 4].truth.p50, hr[i + 4].ratio,
		        cell[i + 3]));
	say("| `pigeon send`, %d loops of %d at once: msgs/s | %.0f | %.0f | |\n",
	    NLOOPS, m, rate8[0], rate8[1]);
	say("| the same: send p50 / p95 ms (failed) | %.3f / %.3f (%d) | %.3f / %.3f (%d) | |\n",
	    s8[0].p50, s8[0].p95, failed[0], s8[1].p50, s8[1].p95, failed[1]);
	say("| claims (max 1 each), %d claimers at once: claims/s | %.0f | %.0f | |\n",
	    NLOOPS, crate[0], crate[1]);
	say("| the same: claim p50 / p95 ms | %.3f / %.3f | %.3f / %.3f | |\n",
	    cl[0].p50, cl[0].p95, cl[1].p50, cl[1].p95);
	say("| the same: queued, duplicates, lost | %d, %d, %d | %d, %d, %d | |\n",
	    queued[0], dups[0], lost[0], queued[1], dups[1], lost[1]);
	if (nb != 6)
		say("\nNo PgBouncer column: %s.\n", bwhy);

	j = cJSON_AddObjectToObject(results, "postgresql");
	cJSON_AddStringToObject(j, "server",
	    pgb.dir[0] ? "throwaway, Unix socket" : "PGN_BENCH_PG");
	for (e = 0; e < 2; e++) {
		x = cJSON_AddObjectToObject(j, e ? "postgresql" : "sqlite");
		cJSON_AddItemToObject(x, "connect",
		    stats_json(e ? &conn_pg : &conn_sq));
		cJSON_AddItemToObject(x, "hook_prompt_1_queued",
		    stats_json(&hr[e * 2].hook));
		cJSON_AddItemToObject(x, "true_prompt",
		    stats_json(&hr[e * 2].truth));
		cJSON_AddItemToObject(x, "hook_after_tool_no_mail",
		    stats_json(&hr[e * 2 + 1].hook));
		cJSON_AddItemToObject(x, "true_after_tool",
		    stats_json(&hr[e * 2 + 1].truth));
		cJSON_AddNumberToObject(x, "sends_8_loops_per_s", rate8[e]);
		cJSON_AddItemToObject(x, "sends_8_loops_latency",
		    stats_json(&s8[e]));
		cJSON_AddNumberToObject(x, "sends_failed", failed[e]);
		cJSON_AddNumberToObject(x, "claims_8_per_s", crate[e]);
		cJSON_AddItemToObject(x, "claim_latency", stats_json(&cl[e]));
		cJSON_AddNumberToObject(x, "claims_queued", queued[e]);
		cJSON_AddNumberToObject(x, "claims_duplicated", dups[e]);
		cJSON_AddNumberToObject(x, "claims_lost", lost[e]);
		if (e == 1) {
			cJSON_AddItemToObject(x, "floor_libpq",
			    stats_json(&fl[0].hook));
			cJSON_AddItemToObject(x, "true_floor",
			    stats_json(&fl[0].truth));
		}
	}
	if (nb == 6) {
		x = cJSON_AddObjectToObject(j, "pgbouncer");
		cJSON_AddStringToObject(x, "pool_mode", "session");
		cJSON_AddItemToObject(x, "connect", stats_json(&conn_pb));
		cJSON_AddItemToObject(x, "hook_prompt_1_queued",
		    stats_json(&hr[4].hook));
		cJSON_AddItemToObject(x, "true_prompt",
		    stats_json(&hr[4].truth));
		cJSON_AddItemToObject(x, "hook_after_tool_no_mail",
		    stats_json(&hr[5].hook));
		cJSON_AddItemToObject(x, "true_after_tool",
		    stats_json(&hr[5].truth));
		cJSON_AddItemToObject(x, "floor_libpq",
		    stats_json(&fl[1].hook));
		cJSON_AddItemToObject(x, "true_floor",
		    stats_json(&fl[1].truth));
	}
	pathf(v->measured, sizeof(v->measured),
	    "%.3f ms (/bin/true %.3f ms; libpq's floor %.3f ms)",
	    hr[2].hook.p50, hr[2].truth.p50, fl[0].hook.p50);
	v->met = hr[2].hook.p50 <= T_PG_HOOK_MS && !hr[2].bad;
	rm_db(pgb.peer);
	pg_stop();
}
