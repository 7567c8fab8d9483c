/*
 * pigeon-bench: prepares databases (empty and 1M delivered messages;
 * 10 and 100 agents), then measures the hook against spawning /bin/true
 * side by side, sends (processes and the library), instructions per
 * hook run (callgrind) and syscalls per hook run (strace, inotify),
 * and the same hook, sends and claims on PostgreSQL beside SQLite.
 * Prints a table and writes results.json and results.md. Not a test:
 * run it with bench/run (see docs/benchmarks.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "pigeon/pigeon.h"
#include "pigeon/lease.h"
#include "pigeon/transcript.h"
#include "bench.h"
#include "banned.h"

#define HIST_MSGS     1000000 /* delivered messages in the 1M history */
#define HIST_SESSIONS 2000    /* past sessions in the 1M history */
#define BENCH_DATA    "pigeon-bench data v1" /* bump to rebuild caches */

/* Targets of the performance issue (docs/benchmarks.md). */
#define T_RATIO      3.0     /* hook median / true median */
#define T_P99_MS     10.0    /* hook p99, one message, 1M history */
#define T_IR_RATIO   1.05    /* Ir with 1M history / Ir empty */
#define T_LIB_SEND   10000.0 /* library sends/s, one transaction each */
#define T_PROC_SEND  2000.0  /* sends/s from 8 concurrent processes */
#define T_LOCKED_N   100000  /* concurrent sends checked for "locked" */
#define T_TOOL_RATIO 1.5     /* no-mail after-tool median / true median */
#define T_TURN_MS    1000.0  /* hook time of a TURN_TOOLS-call turn */
#define TURN_TOOLS   200     /* tool calls of the simulated turn */

static const char lorem[] =
    "rebase onto main before you push; the API was renamed in PR 12 and "
    "the old names are gone. I am reviewing the parser now, tests first. "
    "Can you take the flaky integration test in t0006? It times out on "
    "slow disks. Standup in 5. The release branch is frozen until Friday, "
    "ping me if you need an exception. Done: see commit 3f2a9e1.";

struct bench_paths g;
cJSON *results;
static FILE *md;

/* ---- small helpers -------------------------------------------------- */

/* printf-like: the compilers check every call's arguments. */

void
die(const char *fmt, ...)
{
	va_list ap;

	fputs("pigeon-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void
pathf(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		die("path too long: %s", fmt);
}

static int
has_section(const struct opts *o, const char *name)
{
	const char *p;
	size_t n = strlen(name);

	if (o->sections == NULL)
		return 1;
	for (p = o->sections; (p = strstr(p, name)) != NULL; p += n)
		if ((p == o->sections || p[-1] == ',') &&
		    (p[n] == '\0' || p[n] == ','))
			return 1;
	return 0;
}

/* A program on the usual PATH, or 0. */
static int
find_tool(const char *name, char *out, size_t len)
{
	static const char *const dirs[] = {"/usr/local/bin", "/usr/bin",
	    "/bin"};
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		pathf(out, len, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return 1;
	}
	out[0] = '\0';
	return 0;
}

void
rm_db(const char *path)
{
	char p[PATH_MAX];

	unlink(path);
	pathf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	pathf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	/* The lease stamp (pgn_lease_none_live): a copy must not inherit it. */
	pathf(p, sizeof(p), "%s-leases", path);
	unlink(p);
}

static void
copy_file(const char *from, const char *to)
{
	static char buf[1 << 20];
	ssize_t r, w, off;
	int in, out;

	rm_db(to);
	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		die("open %s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		die("create %s: %s", to, strerror(errno));
	while ((r = read(in, buf, sizeof(buf))) > 0)
		for (off = 0; off < r; off += w) {
			w = write(out, buf + off, (size_t)(r - off));
			if (w <= 0)
				die("write %s: %s", to, strerror(errno));
		}
	if (r < 0)
		die("read %s: %s", from, strerror(errno));
	close(in);
	close(out);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentiles; sorts 'v'. */
struct stats
stats_of(double *v, size_t n)
{
	struct stats s;
	size_t i;
	double sum = 0;

	memset(&s, 0, sizeof(s));
	if (n == 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	for (i = 0; i < n; i++)
		sum += v[i];
	s.n = n;
	s.min = v[0];
	s.max = v[n - 1];
	s.mean = sum / (double)n;
#define RANK(p) v[(size_t)((p) * (double)n + 0.999999) - 1]
	s.p50 = RANK(0.50);
	s.p95 = RANK(0.95);
	s.p99 = RANK(0.99);
#undef RANK
	return s;
}

cJSON *
stats_json(const struct stats *s)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "n", (double)s->n);
	cJSON_AddNumberToObject(o, "p50_ms", s->p50);
	cJSON_AddNumberToObject(o, "p95_ms", s->p95);
	cJSON_AddNumberToObject(o, "p99_ms", s->p99);
	cJSON_AddNumberToObject(o, "min_ms", s->min);
	cJSON_AddNumberToObject(o, "max_ms", s->max);
	cJSON_AddNumberToObject(o, "mean_ms", s->mean);
	return o;
}

/* Print to stdout and to results.md. */
void
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (md != NULL) {
		va_start(ap, fmt);
		vfprintf(md, fmt, ap);
		va_end(ap);
	}
}

/* Progress lines: stderr only. */
void
note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- processes ------------------------------------------------------ */

static char *child_env[8];
static char env_store[8][PATH_MAX + 32];

void
set_env(const char *db)
{
	int n = 0;

	pathf(env_store[n], sizeof(env_store[n]), "PATH=/usr/bin:/bin");
	child_env[n] = env_store[n];
	n++;
	pathf(env_store[n], sizeof(env_store[n]), "HOME=%s", g.home);
	child_env[n] = env_store[n];
	n++;
	pathf(env_store[n], sizeof(env_store[n]), "PIGEON_HOME=%s", g.home);
	child_env[n] = env_store[n];
	n++;
	pathf(env_store[n], sizeof(env_store[n]), "LC_ALL=C");
	child_env[n] = env_store[n];
	n++;
	if (db != NULL) {
		pathf(env_store[n], sizeof(env_store[n]), "PIGEON_DB=%s", db);
		child_env[n] = env_store[n];
		n++;
	}
	child_env[n] = NULL;
}

static size_t
read_fd(int fd, char *buf, size_t max)
{
	size_t n = 0;
	ssize_t r;
	char sink[4096];

	for (;;) {
		if (n < max)
			r = read(fd, buf + n, max - n);
		else
			r = read(fd, sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (n < max)
			n += (size_t)r;
	}
	buf[n] = '\0';
	return n;
}

/*
 * fork + execve + waitpid, timed from just before fork to the reap.
 * stdin is a pipe already holding the payload and closed for writing
 * (as hosts do it), stdout a pipe read after the reap (outputs here are
 * far below the pipe's 64 KiB), stderr a file.
 */
void
spawn(struct proc *p)
{
	int in[2], out[2], errfd;
	double t0;
	pid_t pid;

	if (pipe(in) != 0 || pipe(out) != 0)
		die("pipe: %s", strerror(errno));
	if (p->inlen > 0 && write(in[1], p->in, p->inlen) != (ssize_t)p->inlen)
		die("payload write: %s", strerror(errno));
	close(in[1]);
	errfd = p->errpath != NULL ?
	    open(p->errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) :
	    open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (errfd < 0)
		die("stderr file: %s", strerror(errno));
	t0 = now_ms();
	if (p->light) {
		/* The least a sender's own spawner pays: CLONE_VFORK. */
		posix_spawn_file_actions_t fa;

		if (posix_spawn_file_actions_init(&fa) != 0 ||
		    posix_spawn_file_actions_adddup2(&fa, in[0], 0) != 0 ||
		    posix_spawn_file_actions_adddup2(&fa, out[1], 1) != 0 ||
		    posix_spawn_file_actions_adddup2(&fa, errfd, 2) != 0 ||
		    posix_spawn(&pid, p->argv[0], &fa, NULL, p->argv,
		        child_env) != 0)
			die("posix_spawn: %s", strerror(errno));
		posix_spawn_file_actions_destroy(&fa);
	} else
		pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(errfd, 2);
		close(in[0]);
		close(out[0]);
		close(out[1]);
		close(errfd);
		if (p->dir != NULL && chdir(p->dir) != 0)
			_exit(126);
		execve(p->argv[0], p->argv, child_env);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	close(errfd);
	while (waitpid(pid, &p->status, 0) < 0)
		if (errno != EINTR)
			die("waitpid: %s", strerror(errno));
	p->ms = now_ms() - t0;
	p->outlen = read_fd(out[0], p->out, MAX_OUT);
	close(out[0]);
	p->errlen = 0;
	p->err[0] = '\0';
	if (p->errpath != NULL) {
		errfd = open(p->errpath, O_RDONLY | O_CLOEXEC);
		if (errfd >= 0) {
			p->errlen = read_fd(errfd, p->err, MAX_ERR);
			close(errfd);
		}
	}
}

int
exited_ok(const struct proc *p)
{
	return WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
}

/* ---- databases ------------------------------------------------------ */

pgn_db *
lib_open(const char *path, unsigned flags)
{
	pgn_db *db = NULL;

	if (pgn_db_open(path, flags, 10000, &db) != PGN_OK)
		die("open %s: %s", path, pgn_errmsg(db));
	if (pgn_db_set_scope(db, g.scope) != PGN_OK)
		die("scope: %s", pgn_errmsg(db));
	return db;
}

static void
lib_send(pgn_db *db, const char *from, const char *to, const char *body)
{
	struct pgn_send rq;
	struct pgn_sent sent[1];
	size_t n;

	memset(&rq, 0, sizeof(rq));
	rq.from = from;
	rq.to = &to;
	rq.nto = 1;
	rq.body = body;
	rq.body_len = strlen(body);
	if (pgn_send(db, &rq, sent, 1, &n) != PGN_OK)
		die("send to %s: %s", to, pgn_errmsg(db));
}

static sqlite3 *
sql_open(const char *path)
{
	sqlite3 *s = NULL;

	if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
		die("sqlite open %s: %s", path, s ? sqlite3_errmsg(s) : "?");
	sqlite3_busy_timeout(s, 10000);
	return s;
}

static void
sql_exec(sqlite3 *s, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(s, sql, NULL, NULL, &err) != SQLITE_OK)
		die("SQL failed: %s\n  %.200s", err ? err : "?", sql);
}

static int64_t
sql_int(sqlite3 *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;

	if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) != SQLITE_OK)
		die("SQL failed: %s\n  %s", sqlite3_errmsg(s), sql);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * Checkpoint and empty the WAL (keeping the files, as Pigeon does), so
 * that instruction and syscall counts see the same WAL in every
 * database: exactly what the queueing send writes next.
 */
static void
empty_wal(const char *path)
{
	sqlite3 *s = sql_open(path);
	int one = 1;

	(void)sqlite3_file_control(s, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
	sql_exec(s, "PRAGMA wal_checkpoint(TRUNCATE)");
	sqlite3_close(s);
}

/* Mark everything queued delivered (between timed rounds of sends). */
void
drain_sql(const char *path)
{
	sqlite3 *s = sql_open(path);

	sql_exec(s,
	    "UPDATE message SET delivered_ms = created_ms "
	    "WHERE delivered_ms IS NULL");
	sqlite3_close(s);
}

void
agent_name(char *out, size_t len, int i)
{
	if (i == 0)
		pathf(out, len, "target");
	else
		pathf(out, len, "a%02d", i);
}

/*
 * Agents 'from'..'to'-1 of the main scope, each with 'queued' messages
 * waiting (the partial index is never empty in real use).
 */
void
queue_each(pgn_db *db, int from, int to, int queued)
{
	char name[32];
	int i, k;

	for (k = 0; k < queued; k++)
		for (i = from > 0 ? from : 1; i < to; i++) {
			agent_name(name, sizeof(name), i);
			lib_send(db, "user", name, "a ping still waiting");
		}
}

void
add_agents(pgn_db *db, int from, int to, int queued)
{
	char name[32];
	int i;

	for (i = from; i < to; i++) {
		agent_name(name, sizeof(name), i);
		if (pgn_agent_add(db, name) != PGN_OK)
			die("agent add %s: %s", name, pgn_errmsg(db));
	}
	queue_each(db, from, to, queued);
}

/* Schema and agents: 10 in the hook's scope, 5 elsewhere, 2 global. */
static void
make_base(const char *path)
{
	static const char *const other[] = {"api", "web", "docs", "ops", "qa"};
	char bound[PGN_MAX_NAME + 1];
	pgn_db *db;
	size_t i;

	rm_db(path);
	db = lib_open(path, PGN_OPEN_CREATE);
	add_agents(db, 0, 10, 0);
	if (pgn_db_set_scope(db, "/srv/bench-other") != PGN_OK)
		die("scope: %s", pgn_errmsg(db));
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (pgn_agent_add(db, other[i]) != PGN_OK)
			die("agent add: %s", pgn_errmsg(db));
	if (pgn_db_set_scope(db, "") != PGN_OK ||
	    pgn_agent_add(db, "solo") != PGN_OK ||
	    pgn_agent_add(db, "helper") != PGN_OK)
		die("global agents: %s", pgn_errmsg(db));
	if (pgn_db_set_scope(db, g.scope) != PGN_OK)
		die("scope: %s", pgn_errmsg(db));
	(void)bound;
	pgn_db_close(db);
}

/* What every hook database has after the history: sessions, queues. */
static void
finish_db(const char *path)
{
	char bound[PGN_MAX_NAME + 1];
	pgn_db *db = lib_open(path, 0);

	if (pgn_session_bind(db, "claude", "claude:bench-claude", "target",
	        bound) != PGN_OK ||
	    pgn_session_bind(db, "cursor", "cursor:bench-cursor", "target",
	        bound) != PGN_OK)
		die("bind: %s", pgn_errmsg(db));
	queue_each(db, 1, 10, 3); /* 3 waiting for each other agent */
	if (pgn_db_set_scope(db, "/srv/bench-other") != PGN_OK)
		die("scope: %s", pgn_errmsg(db));
	lib_send(db, "user", "api", "waiting elsewhere");
	lib_send(db, "user", "web", "waiting elsewhere");
	pgn_db_close(db);
}

/*
 * 1M delivered messages among the 10 agents of the scope, each with its
 * audit row (any hash: verify is not measured), a 'delivered' journal
 * row for the recipient and a 'sent' one for the sender, plus 2,000
 * past sessions. Plain SQL in one transaction, journal off while it runs.
 */
static void
add_history(const char *path, int nmsg)
{
	sqlite3 *s = sql_open(path);
	sqlite3_stmt *st = NULL;
	char sql[2048];
	double t0 = now_ms();
	int64_t base;

	sql_exec(s,
	    "PRAGMA journal_mode=DELETE; PRAGMA journal_mode=OFF; "
	    "PRAGMA synchronous=OFF; PRAGMA cache_size=-400000");
	sql_exec(s, "BEGIN");
	sql_exec(s,
	    "CREATE TEMP TABLE ha(k INTEGER PRIMARY KEY, id INTEGER, "
	    "name TEXT, scope_id INTEGER)");
	pathf(sql, sizeof(sql),
	    "INSERT INTO ha(k, id, name, scope_id) "
	    "SELECT row_number() OVER (ORDER BY a.id) - 1, a.id, a.name, "
	    "a.scope_id FROM agent a JOIN scope s ON s.id = a.scope_id "
	    "WHERE s.root = '%s' AND a.removed_ms IS NULL",
	    g.scope);
	sql_exec(s, sql);
	base = (int64_t)time(NULL) * 1000 - (int64_t)nmsg * 600;
	if (sqlite3_prepare_v2(s,
	        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM "
	        "c "
	        "WHERE i < ?1) "
	        "INSERT INTO message(id, scope_id, sender, recipient_id, body, "
	        "created_ms, reply_to, delivered_ms) "
	        "SELECT i, r.scope_id, f.name, r.id, "
	        "substr(?2, 1 + (i * 7) % 200, 24 + (i * 13) % 160), "
	        "?3 + i * 600, CASE WHEN i % 5 = 0 THEN i - 3 END, "
	        "?3 + i * 600 + 5000 + (i % 97) * 1000 "
	        "FROM c JOIN ha r ON r.k = i % ?4 "
	        "JOIN ha f ON f.k = (i + 1 + i / 10) % ?4",
	        -1, &st, NULL) != SQLITE_OK)
		die("history: %s", sqlite3_errmsg(s));
	sqlite3_bind_int(st, 1, nmsg);
	sqlite3_bind_text(st, 2, lorem, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, base);
	sqlite3_bind_int64(st, 4, sql_int(s, "SELECT count(*) FROM ha"));
	if (sqlite3_step(st) != SQLITE_DONE)
		die("history: %s", sqlite3_errmsg(s));
	sqlite3_finalize(st);
	sql_exec(s,
	    "INSERT INTO delivery(id, message_id, scope, sender, "
	    "recipient, body, created_ms, reply_to, delivered_ms, session, "
	    "host, route, bytes, hash) "
	    "SELECT m.id, m.id, s.root, m.sender, a.name, m.body, "
	    "m.created_ms, m.reply_to, m.delivered_ms, "
	    "(CASE m.id % 4 WHEN 0 THEN 'claude' WHEN 1 THEN 'cursor' "
	    "WHEN 2 THEN 'codex' ELSE 'gemini' END) || ':hist-' || "
	    "(m.id % 1999), "
	    "CASE m.id % 4 WHEN 0 THEN 'claude' WHEN 1 THEN 'cursor' "
	    "WHEN 2 THEN 'codex' ELSE 'gemini' END, "
	    "CASE WHEN m.id % 9 = 0 THEN 'session-start' ELSE 'prompt' END, "
	    "length(m.body), randomblob(32) "
	    "FROM message m JOIN agent a ON a.id = m.recipient_id "
	    "JOIN scope s ON s.id = m.scope_id "
	    "WHERE m.delivered_ms IS NOT NULL ORDER BY m.id");
	sql_exec(s,
	    "INSERT INTO journal(agent_id, at_ms, kind, message_id, "
	    "peer, detail) "
	    "SELECT f.id, m.created_ms, 'sent', m.id, a.name, '' "
	    "FROM message m JOIN agent a ON a.id = m.recipient_id "
	    "JOIN ha f ON f.name = m.sender "
	    "WHERE m.delivered_ms IS NOT NULL ORDER BY m.id");
	sql_exec(s,
	    "INSERT INTO journal(agent_id, at_ms, kind, message_id, "
	    "peer, detail) "
	    "SELECT m.recipient_id, m.delivered_ms, 'delivered', m.id, "
	    "m.sender, 'prompt' FROM message m "
	    "WHERE m.delivered_ms IS NOT NULL ORDER BY m.id");
	sql_exec(s,
	    "INSERT INTO audit_head(id, n, hash) "
	    "SELECT 1, count(*), randomblob(32) FROM delivery WHERE true "
	    "ON CONFLICT(id) DO UPDATE SET n = excluded.n, "
	    "hash = excluded.hash");
	pathf(sql, sizeof(sql),
	    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
	    "SELECT i + 1 FROM c WHERE i < %d) "
	    "INSERT INTO session(key, host, agent_id, created_ms, "
	    "last_seen_ms, last_turn, last_turn_ms) "
	    "SELECT 'claude:hist-' || i, 'claude', h.id, %lld + i * 1000, "
	    "%lld + i * 1000 + 600000, 'UserPromptSubmit:p-' || i, "
	    "%lld + i * 1000 + 600000 FROM c JOIN ha h "
	    "ON h.k = i %% (SELECT count(*) FROM ha)",
	    HIST_SESSIONS, (long long)base, (long long)base, (long long)base);
	sql_exec(s, sql);
	sql_exec(s, "DROP TABLE ha");
	sql_exec(s, "COMMIT");
	sql_exec(s, "PRAGMA journal_mode=WAL");
	sqlite3_close(s);
	note("  %d delivered messages written in %.1f s", nmsg,
	    (now_ms() - t0) / 1e3);
}

static int
stamp_ok(void)
{
	char want[256], have[256];
	int fd;
	ssize_t n;

	pathf(want, sizeof(want), "%s schema=%d msgs=%d\n", BENCH_DATA,
	    pgn_schema_version(), HIST_MSGS);
	fd = open(g.stamp, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, have, sizeof(have) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	have[n] = '\0';
	return strcmp(want, have) == 0 && access(g.cache, R_OK) == 0;
}

static void
write_stamp(void)
{
	char want[256];
	int fd;

	pathf(want, sizeof(want), "%s schema=%d msgs=%d\n", BENCH_DATA,
	    pgn_schema_version(), HIST_MSGS);
	fd = open(g.stamp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, want, strlen(want)) < 0)
		die("stamp: %s", strerror(errno));
	close(fd);
}

static void
prepare(const struct opts *o, struct dbset *d)
{
	double t0 = now_ms();
	pgn_db *db;

	pathf(d->empty10, sizeof(d->empty10), "%s/empty-10.db", g.dbdir);
	pathf(d->hist10, sizeof(d->hist10), "%s/1m-10.db", g.dbdir);
	pathf(d->hist100, sizeof(d->hist100), "%s/1m-100.db", g.dbdir);
	pathf(d->sends, sizeof(d->sends), "%s/sends-100.db", g.dbdir);
	/* The lease section alone needs no history: minutes saved. */
	if (o->sections != NULL && strcmp(o->sections, "lease") == 0) {
		make_base(d->empty10);
		finish_db(d->empty10);
		note("databases ready in %.1f s", (now_ms() - t0) / 1e3);
		return;
	}
	if (o->rebuild || !stamp_ok()) {
		note("preparing the 1M-message history (cached in %s)",
		    g.cache);
		unlink(g.stamp);
		make_base(g.cache);
		add_history(g.cache, HIST_MSGS);
		write_stamp();
	} else {
		note("using the cached 1M-message history %s", g.cache);
	}
	make_base(d->empty10);
	finish_db(d->empty10);
	copy_file(g.cache, d->hist10);
	finish_db(d->hist10);
	copy_file(g.cache, d->hist100);
	finish_db(d->hist100);
	db = lib_open(d->hist100, 0);
	add_agents(db, 10, 100, 3);
	pgn_db_close(db);
	copy_file(d->hist100, d->sends);
	/* Gigabytes of fresh copies would otherwise flush under the timing. */
	sync();
	note("databases ready in %.1f s", (now_ms() - t0) / 1e3);
}

/* ---- hook timing ----------------------------------------------------- */

const char *const host_label[] = {"claude UserPromptSubmit",
    "cursor beforeSubmitPrompt", "claude PostToolUse", "claude Stop"};

/* A prompt payload like the host's own, with a fresh turn id. */
static size_t
payload(int host, char *buf, size_t len)
{
	int n;

	g.turn++;
	if (host == HOST_TOOL)
		n = snprintf(buf, len,
		    "{\"session_id\":\"bench-claude\","
		    "\"transcript_path\":\"%s/transcript.jsonl\","
		    "\"cwd\":\"%s\",\"prompt_id\":\"bench-%ld\","
		    "\"permission_mode\":\"default\","
		    "\"hook_event_name\":\"PostToolUse\","
		    "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":"
		    "\"make test\",\"description\":\"Run the tests\"},"
		    "\"tool_response\":{\"stdout\":\"ok 1 - parse\\nok 2 - "
		    "render\\n\",\"stderr\":\"\",\"interrupted\":false},"
		    "\"tool_use_id\":\"toolu_bench_%ld_%ld\","
		    "\"duration_ms\":412}\n",
		    g.work, g.proj, (long)getpid(), (long)getpid(), g.turn);
	else if (host == HOST_STOP)
		n = snprintf(buf, len,
		    "{\"session_id\":\"bench-claude\","
		    "\"transcript_path\":\"%s/transcript.jsonl\","
		    "\"cwd\":\"%s\",\"permission_mode\":\"default\","
		    "\"hook_event_name\":\"Stop\",\"stop_hook_active\":false,"
		    "\"last_assistant_message\":\"Done: turn %ld.\"}\n",
		    g.work, g.proj, g.turn);
	else if (host == HOST_CLAUDE)
		n = snprintf(buf, len,
		    "{\"session_id\":\"bench-claude\","
		    "\"transcript_path\":\"%s/transcript.jsonl\","
		    "\"cwd\":\"%s\","
		    "\"prompt_id\":\"bench-%ld-%ld\",\"permission_mode\":"
		    "\"default\",\"hook_event_name\":\"UserPromptSubmit\","
		    "\"prompt\":\"print turn %ld\"}\n",
		    g.work, g.proj, (long)getpid(), g.turn, g.turn);
	else
		n = snprintf(buf, len,
		    "{\"conversation_id\":\"bench-cursor\","
		    "\"generation_id\":\"gen-%ld-%ld\",\"model\":\"default\","
		    "\"session_id\":\"bench-cursor\",\"hook_event_name\":"
		    "\"beforeSubmitPrompt\",\"prompt\":\"print turn %ld\","
		    "\"attachments\":[],"
		    "\"cursor_version\":\"2026.07.17-3e2a980\","
		    "\"workspace_roots\":[\"%s\"],\"user_email\":null,"
		    "\"transcript_path\":null}\n",
		    (long)getpid(), g.turn, g.turn, g.proj);
	if (n < 0 || (size_t)n >= len)
		die("payload too long");
	return (size_t)n;
}

static void
queue_for_target(const char *dbpath, int n)
{
	char body[128];
	pgn_db *db;
	int i;

	if (n == 0)
		return;
	db = lib_open(dbpath, 0);
	for (i = 0; i < n; i++) {
		pathf(body, sizeof(body),
		    "ping %d of %d: rebase onto main before you push, the API was renamed",
		    i + 1, n);
		lib_send(db, "a01", "target", body);
	}
	pgn_db_close(db);
}

/* How Claude's Stop hook makes the host go on. */
static const char stop_block[] = "{\"decision\":\"block\",\"reason\":";

/* Did the hook print what 'queued' messages should give? */
static int
output_ok(int host, int queued, const char *out)
{
	char want[64];

	if (queued == 0)
		return host != HOST_CURSOR ?
		    out[0] == '\0' :
		    strcmp(out, "{\"continue\":true}\n") == 0;
	pathf(want, sizeof(want), "Pigeon: %d new message%s for target", queued,
	    queued == 1 ? "" : "s");
	if (host == HOST_STOP &&
	    strncmp(out, stop_block, sizeof(stop_block) - 1) != 0)
		return 0;
	return strstr(out, want) != NULL;
}

struct proc pr; /* large: not on the stack */

/* Run 'argv' in pr, in the plain environment, its stderr to 'errpath'. */
void
spawn_argv(char *const *argv, const char *errpath)
{
	set_env(NULL);
	pr.argv = argv;
	pr.dir = NULL;
	pr.in = NULL;
	pr.inlen = 0;
	pr.errpath = errpath;
	spawn(&pr);
}

static void
hook_argv(int host, char **argv)
{
	static const char *const event[] = {"UserPromptSubmit",
	    "beforeSubmitPrompt", "PostToolUse", "Stop"};

	argv[0] = g.hook;
	argv[1] = (char *)(host == HOST_CURSOR ? "cursor" : "claude");
	argv[2] = (char *)event[host];
	argv[3] = NULL;
}

/* The statistics of 'n' paired timings (and free them): the measured
 * program's 'hv', /bin/true's 'tv', the ratio of their medians. */
struct hook_result
paired(struct hook_result *r, double *hv, double *tv, int n)
{
	r->hook = stats_of(hv, (size_t)n);
	r->truth = stats_of(tv, (size_t)n);
	r->ratio = r->truth.p50 > 0 ? r->hook.p50 / r->truth.p50 : 0;
	free(hv);
	free(tv);
	return *r;
}

struct hook_result
time_case(const struct opts *o, const struct hook_case *c)
{
	struct hook_result r;
	char *hargv[4], *targv[2], buf[2048];
	double *hv, *tv;
	int i, warm = o->quick ? 5 : 20, n = o->runs;

	memset(&r, 0, sizeof(r));
	hv = calloc((size_t)n, sizeof(*hv));
	tv = calloc((size_t)n, sizeof(*tv));
	if (hv == NULL || tv == NULL)
		die("out of memory");
	set_env(c->db);
	hook_argv(c->host, hargv);
	targv[0] = (char *)"/bin/true";
	targv[1] = NULL;
	for (i = -warm; i < n; i++) {
		queue_for_target(c->db, c->queued);
		pr.argv = targv;
		pr.dir = NULL;
		pr.errpath = NULL;
		pr.inlen = payload(c->host, buf, sizeof(buf));
		pr.in = buf;
		spawn(&pr);
		if (i >= 0)
			tv[i] = pr.ms;
		pr.argv = hargv;
		pr.inlen = payload(c->host, buf, sizeof(buf));
		spawn(&pr);
		if (!exited_ok(&pr) || !output_ok(c->host, c->queued, pr.out)) {
			if (r.bad++ == 0)
				note(
				    "  unexpected hook output (%s, %d queued): '%.200s'",
				    host_label[c->host], c->queued, pr.out);
		}
		if (i >= 0)
			hv[i] = pr.ms;
	}
	return paired(&r, hv, tv, n);
}

#define MAX_VERDICTS 24
static struct verdict verdicts[MAX_VERDICTS];
static int nverdicts;

struct verdict *
verdict(const char *what, const char *target)
{
	struct verdict *v;

	if (nverdicts == MAX_VERDICTS)
		die("too many targets");
	v = &verdicts[nverdicts++];
	v->what = what;
	v->target = target;
	v->met = -1;
	pathf(v->measured, sizeof(v->measured), "not measured");
	return v;
}

static void
bench_hooks(const struct opts *o, const struct dbset *d)
{
	struct hook_case cases[16];
	struct hook_result r;
	struct verdict *vr =
	    verdict("hook, 1 queued, 1M history: median vs /bin/true",
	        "<= 3.0x");
	struct verdict *vp =
	    verdict("hook, 1 queued, 1M history: p99", "<= 10 ms");
	cJSON *arr = cJSON_AddArrayToObject(results, "hook");
	cJSON *e;
	double worst_ratio = 0, worst_p99 = 0;
	size_t nc = 0, i;
	int h, q, bad = 0;
	static const int qs[] = {0, 1, 10};

	for (h = 0; h < 2; h++)
		for (q = 0; q < 3; q++) {
			cases[nc].dbname = "empty, 10 agents";
			cases[nc].db = d->empty10;
			cases[nc].host = h;
			cases[nc++].queued = qs[q];
			cases[nc].dbname = "1M history, 10 agents";
			cases[nc].db = d->hist10;
			cases[nc].host = h;
			cases[nc++].queued = qs[q];
		}
	for (h = 0; h < 2; h++)
		for (q = 0; q < 2; q++) {
			cases[nc].dbname = "1M history, 100 agents";
			cases[nc].db = d->hist100;
			cases[nc].host = h;
			cases[nc++].queued = qs[q];
		}

	say("\n## Hook vs spawning /bin/true\n\n"
	    "Each case: %d runs of `pigeon-hook HOST EVENT`, each right after "
	    "one run of `/bin/true` (fork, execve, waitpid, same stdin pipe "
	    "and environment); messages are queued by another process before "
	    "each pair, untimed. Times in ms.\n\n",
	    o->runs);
	say("| host event | database | queued | hook p50 | p95 | p99 | true p50 | p95 | p99 | ratio of medians |\n"
	    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < nc; i++) {
		note("hook: %s, %s, %d queued", host_label[cases[i].host],
		    cases[i].dbname, cases[i].queued);
		r = time_case(o, &cases[i]);
		bad += r.bad;
		say("| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | **%.2f** |\n",
		    host_label[cases[i].host], cases[i].dbname, cases[i].queued,
		    r.hook.p50, r.hook.p95, r.hook.p99, r.truth.p50,
		    r.truth.p95, r.truth.p99, r.ratio);
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "host_event",
		    host_label[cases[i].host]);
		cJSON_AddStringToObject(e, "database", cases[i].dbname);
		cJSON_AddNumberToObject(e, "queued", cases[i].queued);
		cJSON_AddItemToObject(e, "hook", stats_json(&r.hook));
		cJSON_AddItemToObject(e, "true", stats_json(&r.truth));
		cJSON_AddNumberToObject(e, "ratio_of_medians", r.ratio);
		cJSON_AddNumberToObject(e, "unexpected_outputs", r.bad);
		cJSON_AddItemToArray(arr, e);
		if (cases[i].queued == 1 && cases[i].db == d->hist10) {
			if (r.ratio > worst_ratio)
				worst_ratio = r.ratio;
			if (r.hook.p99 > worst_p99)
				worst_p99 = r.hook.p99;
		}
	}
	if (bad > 0)
		say("\n**%d hook runs printed something unexpected.**\n", bad);
	pathf(vr->measured, sizeof(vr->measured), "%.2fx (worse host)",
	    worst_ratio);
	vr->met = worst_ratio <= T_RATIO && bad == 0;
	pathf(vp->measured, sizeof(vp->measured), "%.2f ms (worse host)",
	    worst_p99);
	vp->met = worst_p99 <= T_P99_MS && bad == 0;
}

/* ---- sends ------------------------------------------------------------ */

static void
loop_path(char *out, size_t len, int i)
{
	pathf(out, len, "%s/loop-%d.bin", g.work, i);
}

static void
loop_save(int i, const struct loop_result *r, const double *lat, int n)
{
	char path[PATH_MAX];
	FILE *f;

	loop_path(path, sizeof(path), i);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(r, sizeof(*r), 1, f) != 1 ||
	    fwrite(lat, sizeof(*lat), (size_t)n, f) != (size_t)n ||
	    fclose(f) != 0)
		_exit(1);
}

static void
loop_load(int i, struct loop_result *r, double *lat, int n)
{
	char path[PATH_MAX];
	FILE *f;

	loop_path(path, sizeof(path), i);
	memset(r, 0, sizeof(*r));
	f = fopen(path, "rb");
	if (f == NULL || fread(r, sizeof(*r), 1, f) != 1 ||
	    fread(lat, sizeof(*lat), (size_t)n, f) != (size_t)n)
		die("loop %d left no results", i);
	fclose(f);
	unlink(path);
}

/* One loop of 'n' `pigeon send` processes; latencies into 'lat'. */
static void
send_loop(const char *dbpath, int loop, int n, int nagents, double *lat,
    int *ok, int *failed, int *locked, int *busy, const char *errpath)
{
	char *argv[10], to[32], body[128];
	int i;

	set_env(dbpath);
	for (i = 0; i < n; i++) {
		agent_name(to, sizeof(to),
		    1 + (loop * 7919 + i) % (nagents - 1));
		pathf(body, sizeof(body),
		    "loop %d message %d: the build is green again, rebase when you can",
		    loop, i);
		argv[0] = g.pigeon;
		argv[1] = (char *)"send";
		argv[2] = (char *)"--project";
		argv[3] = g.proj;
		argv[4] = (char *)"--to";
		argv[5] = to;
		argv[6] = (char *)"--from";
		argv[7] = (char *)"target";
		argv[8] = body;
		argv[9] = NULL;
		pr.argv = argv;
		pr.dir = NULL;
		pr.light = 1;
		pr.in = NULL;
		pr.inlen = 0;
		pr.errpath = errpath;
		spawn(&pr);
		pr.light = 0;
		lat[i] = pr.ms;
		if (exited_ok(&pr))
			(*ok)++;
		else
			(*failed)++;
		if (strstr(pr.err, "database is locked") != NULL)
			(*locked)++;
		if (strstr(pr.err, "busy") != NULL)
			(*busy)++;
		if (!exited_ok(&pr) && *failed <= 3)
			note("  send failed: %.300s", pr.err);
	}
}

/*
 * NLOOPS processes at once, each one loop of 'm' `pigeon send`
 * processes into 'db' (loops 1 to NLOOPS of send_loop), released
 * together: the latencies into lat[0 .. m * NLOOPS), the counts summed
 * into 'sum', loop i's stderr into WORK/ERRNAME-i.txt. Returns the wall
 * time in ms from the release to the end of the last loop.
 */
double
run_senders(const char *db, int m, const char *errname, double *lat,
    struct loop_result *sum)
{
	struct loop_result lr;
	char errpath[PATH_MAX];
	pid_t pid[NLOOPS];
	double t0, wall;
	int go[2], i;

	if (pipe(go) != 0)
		die("pipe: %s", strerror(errno));
	for (i = 0; i < NLOOPS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			char c;

			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			pathf(errpath, sizeof(errpath), "%s/%s-%d.txt", g.work,
			    errname, i);
			memset(&lr, 0, sizeof(lr));
			send_loop(db, i + 1, m, 100, lat, &lr.ok, &lr.failed,
			    &lr.locked, &lr.busy, errpath);
			loop_save(i, &lr, lat, m);
			_exit(0);
		}
	}
	close(go[0]);
	t0 = now_ms();
	for (i = 0; i < NLOOPS; i++)
		if (write(go[1], "g", 1) != 1)
			die("release: %s", strerror(errno));
	for (i = 0; i < NLOOPS; i++)
		while (waitpid(pid[i], NULL, 0) < 0 && errno == EINTR)
			;
	wall = now_ms() - t0;
	close(go[1]);
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < NLOOPS; i++) {
		loop_load(i, &lr, lat + (size_t)i * (size_t)m, m);
		sum->ok += lr.ok;
		sum->failed += lr.failed;
		sum->locked += lr.locked;
		sum->busy += lr.busy;
	}
	return wall;
}

/*
 * A claimer running beside the senders, as hooks would: open, claim
 * every agent's queue, close, pause; until 'stop' closes. Writes the
 * number claimed to 'report'.
 */
static void
drainer(const char *dbpath, int nagents, int stop, int report)
{
	struct pgn_claim rq;
	struct pgn_msgs got;
	struct pollfd pfd;
	long claimed = 0, errors = 0;
	char name[32], line[64];
	int i, last = 0;
	pgn_db *db;

	for (;;) {
		pfd.fd = stop;
		pfd.events = POLLIN;
		/* 99 claims a sweep, 5 sweeps a second: a few % of a core. */
		if (poll(&pfd, 1, 200) > 0)
			last = 1;
		db = lib_open(dbpath, 0);
		for (i = 1; i < nagents; i++) {
			agent_name(name, sizeof(name), i);
			memset(&rq, 0, sizeof(rq));
			rq.agent = name;
			rq.route = "cli";
			if (pgn_claim(db, &rq, &got) == PGN_OK)
				claimed += (long)got.n;
			else
				errors++;
			pgn_msgs_release(&got);
		}
		pgn_db_close(db);
		if (last)
			break;
	}
	pathf(line, sizeof(line), "%ld %ld\n", claimed, errors);
	if (write(report, line, strlen(line)) < 0)
		_exit(1);
	_exit(0);
}

/*
 * The ceiling of any process-per-message sender here: 8 loops spawning
 * /bin/true the same way, at once. Returns spawns per second.
 */
static double
true_loops(int n)
{
	char *argv[2];
	pid_t pid[NLOOPS];
	double t0;
	int i, j;

	argv[0] = (char *)"/bin/true";
	argv[1] = NULL;
	set_env(NULL);
	t0 = now_ms();
	for (i = 0; i < NLOOPS; i++) {
		pid[i] = fork();
		if (pid[i] != 0)
			continue;
		for (j = 0; j < n; j++) {
			pr.argv = argv;
			pr.dir = NULL;
			pr.light = 1;
			pr.in = NULL;
			pr.inlen = 0;
			pr.errpath = NULL;
			spawn(&pr);
		}
		_exit(0);
	}
	for (i = 0; i < NLOOPS; i++)
		while (waitpid(pid[i], NULL, 0) < 0 && errno == EINTR)
			;
	return (double)(n * NLOOPS) / ((now_ms() - t0) / 1e3);
}

static void
bench_proc_sends(const struct opts *o, const struct dbset *d)
{
	struct verdict *vt =
	    verdict("pigeon send, 8 concurrent processes", ">= 2,000 msgs/s");
	struct verdict *vl =
	    verdict("zero `database is locked` over 100,000 concurrent sends",
	        "0");
	struct loop_result lr;
	cJSON *e;
	char errpath[PATH_MAX], line[64];
	double *lat, t0, wall, rate1, rate8, ceiling;
	struct stats s1, s8;
	int stop[2], rep[2], ok = 0, failed = 0, locked = 0;
	int busy = 0, n = o->single_sends, m = o->loop_sends, total;
	long claimed = 0, cerr = 0;
	int64_t queued_after;
	pid_t dpid;
	sqlite3 *s;
	ssize_t rr;

	int ok1 = 0, failed1 = 0, locked1 = 0, busy1 = 0;

	note("sends: one loop of %d `pigeon send` processes", n);
	lat = calloc((size_t)(n > m * NLOOPS ? n : m * NLOOPS), sizeof(*lat));
	if (lat == NULL)
		die("out of memory");
	pathf(errpath, sizeof(errpath), "%s/send-err.txt", g.work);
	t0 = now_ms();
	send_loop(d->sends, 0, n, 100, lat, &ok1, &failed1, &locked1, &busy1,
	    errpath);
	wall = now_ms() - t0;
	rate1 = (double)ok1 / (wall / 1e3);
	s1 = stats_of(lat, (size_t)n);
	drain_sql(d->sends);

	/* 8 loops released together, a claimer draining beside them. */
	total = m * NLOOPS;
	note("sends: %d loops of %d `pigeon send` processes, one claimer",
	    NLOOPS, m);
	if (pipe(stop) != 0 || pipe(rep) != 0)
		die("pipe: %s", strerror(errno));
	dpid = fork();
	if (dpid == 0) {
		close(stop[1]);
		close(rep[0]);
		drainer(d->sends, 100, stop[0], rep[1]);
	}
	close(stop[0]);
	close(rep[1]);
	wall = run_senders(d->sends, m, "send-err", lat, &lr);
	ok = lr.ok;
	failed = lr.failed;
	locked = lr.locked;
	busy = lr.busy;
	close(stop[1]);
	rr = read(rep[0], line, sizeof(line) - 1);
	line[rr > 0 ? rr : 0] = '\0';
	if (sscanf(line, "%ld %ld", &claimed, &cerr) != 2)
		claimed = cerr = -1;
	close(rep[0]);
	while (waitpid(dpid, NULL, 0) < 0 && errno == EINTR)
		;
	rate8 = (double)ok / (wall / 1e3);
	s8 = stats_of(lat, (size_t)total);
	note("sends: %d loops of %d /bin/true, for the ceiling", NLOOPS,
	    o->quick ? 250 : 1000);
	ceiling = true_loops(o->quick ? 250 : 1000);
	s = sql_open(d->sends);
	queued_after = sql_int(s,
	    "SELECT count(*) FROM message WHERE "
	    "delivered_ms IS NULL AND body LIKE 'loop %'");
	sqlite3_close(s);

	say("\n## Sends\n\n| what | messages | msgs/s | p50 ms | p95 ms | p99 ms | failed | `database is locked` |\n"
	    "|---|---:|---:|---:|---:|---:|---:|---:|\n");
	say("| `pigeon send` processes, 1 loop | %d | %.0f | %.3f | %.3f | %.3f | %d | %d |\n",
	    n, rate1, s1.p50, s1.p95, s1.p99, failed1, locked1);
	say("| `pigeon send` processes, %d concurrent loops (+1 claimer) | %d | **%.0f** | %.3f | %.3f | %.3f | %d | **%d** |\n",
	    NLOOPS, total, rate8, s8.p50, s8.p95, s8.p99, failed, locked);
	say("| `/bin/true` processes, %d concurrent loops (the ceiling) | %d | %.0f | | | | | |\n",
	    NLOOPS, NLOOPS * (o->quick ? 250 : 1000), ceiling);
	say("\nThe claimer took %ld messages (%ld claims failed); %lld stayed queued; sent %d: %s.\n",
	    claimed, cerr, (long long)queued_after, ok,
	    claimed + queued_after >= ok && claimed >= 0 ? "none lost" :
	                                                   "**LOST MESSAGES**");
	e = cJSON_AddObjectToObject(results, "process_sends");
	cJSON_AddNumberToObject(e, "single_loop_messages", n);
	cJSON_AddNumberToObject(e, "single_loop_per_s", rate1);
	cJSON_AddItemToObject(e, "single_loop_latency", stats_json(&s1));
	cJSON_AddNumberToObject(e, "single_loop_failed", failed1);
	cJSON_AddNumberToObject(e, "single_loop_database_is_locked", locked1);
	cJSON_AddNumberToObject(e, "loops", NLOOPS);
	cJSON_AddNumberToObject(e, "concurrent_messages", total);
	cJSON_AddNumberToObject(e, "concurrent_per_s", rate8);
	cJSON_AddNumberToObject(e, "true_concurrent_per_s", ceiling);
	cJSON_AddItemToObject(e, "concurrent_latency", stats_json(&s8));
	cJSON_AddNumberToObject(e, "concurrent_failed", failed);
	cJSON_AddNumberToObject(e, "database_is_locked", locked);
	cJSON_AddNumberToObject(e, "busy_messages", busy);
	cJSON_AddNumberToObject(e, "claimed_beside", (double)claimed);
	cJSON_AddNumberToObject(e, "claim_errors", (double)cerr);
	cJSON_AddNumberToObject(e, "queued_after", (double)queued_after);
	pathf(vt->measured, sizeof(vt->measured),
	    "%.0f msgs/s (8 loops of /bin/true: %.0f/s)", rate8, ceiling);
	vt->met = rate8 >= T_PROC_SEND;
	pathf(vl->measured, sizeof(vl->measured), "%d locked, %d failed of %d",
	    locked, failed, total);
	vl->met = total >= T_LOCKED_N ? locked == 0 && failed == 0 : -1;
	if (total < T_LOCKED_N && locked == 0 && failed == 0)
		pathf(vl->measured, sizeof(vl->measured),
		    "0 of %d (quick run: fewer than 100,000)", total);
	free(lat);
	drain_sql(d->sends);
}

/*
 * Let 'n' forked loops go at once: give them 'settle_ms' to open their
 * databases, write one byte to each through 'go_w', then reap them all.
 * Returns how many failed; '*wall' is the release to the last exit.
 */
int
release_loops(int go_w, const pid_t *pid, int n, long settle_ms, double *wall)
{
	struct timespec ts = {settle_ms / 1000, (settle_ms % 1000) * 1000000L};
	double t0;
	int i, status, failed = 0;

	nanosleep(&ts, NULL);
	t0 = now_ms();
	for (i = 0; i < n; i++)
		if (write(go_w, "g", 1) != 1)
			die("release: %s", strerror(errno));
	for (i = 0; i < n; i++) {
		while (waitpid(pid[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	*wall = now_ms() - t0;
	return failed;
}

/*
 * 8 processes at once, each with one connection sending 'n' messages
 * (one transaction each): the write lock shared between processes,
 * without a process per message. Returns messages per second.
 */
static double
lib_concurrent(const struct dbset *d, int n, int *busy)
{
	static const char body[] = "a ping from one of eight senders";
	char names[99][32];
	struct pgn_send rq;
	struct pgn_sent sent[1];
	const char *to;
	pid_t pid[NLOOPS];
	double wall;
	int go[2], i, j, failed;
	size_t k;
	pgn_db *db;
	char c;

	for (i = 0; i < 99; i++)
		agent_name(names[i], sizeof(names[i]), i + 1);
	if (pipe(go) != 0)
		die("pipe: %s", strerror(errno));
	for (i = 0; i < NLOOPS; i++) {
		pid[i] = fork();
		if (pid[i] != 0)
			continue;
		close(go[1]);
		db = lib_open(d->sends, 0);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		memset(&rq, 0, sizeof(rq));
		rq.from = "target";
		rq.to = &to;
		rq.nto = 1;
		rq.body = body;
		rq.body_len = strlen(body);
		for (j = 0; j < n; j++) {
			to = names[(i * 13 + j) % 99];
			if (pgn_send(db, &rq, sent, 1, &k) != PGN_OK)
				_exit(2);
		}
		pgn_db_close(db);
		_exit(0);
	}
	close(go[0]);
	failed = release_loops(go[1], pid, NLOOPS, 200, &wall);
	close(go[1]);
	*busy += failed;
	drain_sql(d->sends);
	return (double)(n * NLOOPS) / (wall / 1e3);
}

static void
bench_lib_sends(const struct opts *o, const struct dbset *d)
{
	struct verdict *v =
	    verdict("library send, one transaction each", ">= 10,000 msgs/s");
	static const char body[] =
	    "the build is green again: rebase when you can, and tell me if t0006 still times out";
	const char *to[64];
	char names[99][32];
	struct pgn_send rq;
	struct pgn_sent sent[64];
	double t, t0, rate1, rateb, rate8;
	int i, j, done, round, failed8 = 0;
	size_t nsent;
	pgn_db *db;
	cJSON *e;

	for (i = 0; i < 99; i++)
		agent_name(names[i], sizeof(names[i]), i + 1);
	db = lib_open(d->sends, 0);
	note("library: %d sends, one transaction each", o->lib_sends);
	/* Rounds of 100 per agent stay within one sender's share of the
	 * pending cap (PGN_MAX_PENDING_FROM): all of them come from one. */
	t = 0;
	for (done = 0; done < o->lib_sends; done += round) {
		round = o->lib_sends - done < 99 * PGN_MAX_PENDING_FROM ?
		    o->lib_sends - done :
		    99 * PGN_MAX_PENDING_FROM;
		t0 = now_ms();
		for (j = 0; j < round; j++)
			lib_send(db, "target", names[j % 99], body);
		t += now_ms() - t0;
		drain_sql(d->sends);
	}
	rate1 = (double)o->lib_sends / (t / 1e3);

	note("library: %d sends, 50 recipients per transaction", o->lib_batch);
	memset(&rq, 0, sizeof(rq));
	rq.from = "target";
	rq.to = to;
	rq.nto = 50;
	rq.body = body;
	rq.body_len = strlen(body);
	t = 0;
	for (done = 0; done < o->lib_batch; done += round) {
		round = o->lib_batch - done < 99 * PGN_MAX_PENDING_FROM ?
		    o->lib_batch - done :
		    99 * PGN_MAX_PENDING_FROM;
		round -= round % 50;
		if (round == 0)
			break;
		t0 = now_ms();
		for (j = 0; j < round; j += 50) {
			for (i = 0; i < 50; i++)
				to[i] = names[(j + i) % 99];
			if (pgn_send(db, &rq, sent, 64, &nsent) != PGN_OK ||
			    nsent != 50)
				die("batched send: %s", pgn_errmsg(db));
		}
		t += now_ms() - t0;
		drain_sql(d->sends);
	}
	rateb = (double)done / (t / 1e3);
	pgn_db_close(db);

	/* Within one sender's share: each process sends each of the 99
	 * agents PGN_MAX_PENDING_FROM / NLOOPS (12) a round, 96 in all. */
	note("library: %d processes at once, one transaction per message",
	    NLOOPS);
	rate8 = 0;
	for (round = 0; round < (o->quick ? 1 : 3); round++)
		rate8 += lib_concurrent(d, 99 * (PGN_MAX_PENDING_FROM / NLOOPS),
		    &failed8);
	rate8 /= o->quick ? 1 : 3;

	say("\n## Library sends (a connection kept open per process)\n\n"
	    "| what | messages | msgs/s |\n|---|---:|---:|\n");
	say("| `pgn_send`, one transaction per message | %d | **%.0f** |\n",
	    o->lib_sends, rate1);
	say("| `pgn_send`, 50 recipients per transaction | %d | %.0f |\n", done,
	    rateb);
	say("| `pgn_send`, one transaction each, %d processes at once | %d per round | %.0f%s |\n",
	    NLOOPS, 99 * (PGN_MAX_PENDING_FROM / NLOOPS) * NLOOPS, rate8,
	    failed8 ? " (**a sender failed**)" : "");
	e = cJSON_AddObjectToObject(results, "library_sends");
	cJSON_AddNumberToObject(e, "one_tx_each_messages", o->lib_sends);
	cJSON_AddNumberToObject(e, "one_tx_each_per_s", rate1);
	cJSON_AddNumberToObject(e, "batched_messages", done);
	cJSON_AddNumberToObject(e, "batched_per_transaction", 50);
	cJSON_AddNumberToObject(e, "batched_per_s", rateb);
	cJSON_AddNumberToObject(e, "processes_at_once", NLOOPS);
	cJSON_AddNumberToObject(e, "processes_at_once_per_s", rate8);
	cJSON_AddNumberToObject(e, "processes_at_once_failed", failed8);
	pathf(v->measured, sizeof(v->measured), "%.0f msgs/s", rate1);
	v->met = rate1 >= T_LIB_SEND;
}

/* ---- transcripts (docs/decisions/0090) ------------------------------ */

/* A file of about 'mib' MiB: 'frames' repeated, one JSON object a line. */
static void
transcript_file(const char *path, const char *frames, int mib)
{
	FILE *f;
	size_t done = 0, len = strlen(frames);

	f = fopen(path, "w");
	if (f == NULL)
		die("cannot write %s: %s", path, strerror(errno));
	while (done < (size_t)mib << 20) {
		if (fwrite(frames, 1, len, f) != len)
			die("cannot write %s: %s", path, strerror(errno));
		done += len;
	}
	if (fclose(f) != 0)
		die("cannot write %s: %s", path, strerror(errno));
}

static void
bench_transcripts(const struct opts *o)
{
	static const struct {
		const char *name;
		const char *frames;
	} kinds[] = {
	    {"Cursor",
	        "{\"role\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"fix the build in src/main.c, then run the tests\"}]}}\n"
	        "{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"Reading the sources first.\"},{\"type\":\"tool_use\",\"name\":\"ReadFile\",\"input\":{\"path\":\"/home/dev/work/src/main.c\"}},{\"type\":\"tool_use\",\"name\":\"Shell\",\"input\":{\"command\":\"make 2>&1 | tail -20\"}}]}}\n"
	        "{\"role\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"ApplyPatch\",\"input\":\"*** Begin Patch\\n*** Update File: src/main.c\\n@@\\n-old line\\n+new line\\n*** End Patch\"}]}}\n"
	        "{\"type\":\"turn_ended\",\"status\":\"success\"}\n"},
	    {"Claude Code",
	        "{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"fix the build in src/main.c\"}}\n"
	        "{\"type\":\"assistant\",\"sessionId\":\"s\",\"uuid\":\"u2\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{\"command\":\"make\"}}],\"stop_reason\":\"tool_use\"}}\n"
	        "{\"type\":\"user\",\"sessionId\":\"s\",\"uuid\":\"u3\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"ok\"}]}}\n"
	        "{\"type\":\"assistant\",\"sessionId\":\"s\",\"uuid\":\"u4\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The build passes.\"}],\"stop_reason\":\"end_turn\"}}\n"},
	    {"Codex",
	        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\"}}\n"
	        "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"fix the build in src/main.c\"}]}}\n"
	        "{\"type\":\"response_item\",\"payload\":{\"type\":\"function_call\",\"name\":\"exec_command\",\"arguments\":\"{\\\"cmd\\\":\\\"make\\\"}\",\"call_id\":\"c\"}}\n"
	        "{\"type\":\"response_item\",\"payload\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"The build passes.\"}]}}\n"
	        "{\"type\":\"event_msg\",\"payload\":{\"type\":\"task_complete\"}}\n"},
	};
	char path[PATH_MAX], err[1024], *digest;
	struct pgn_transcript t;
	double t0, best, ms;
	int mib = o->quick ? 16 : 64, runs = o->quick ? 1 : 3, k, r;
	size_t i, dlen;
	pgn_status st;
	cJSON *e, *row;

	say("\n## Transcript readers (`pgn_transcript_read`, the tail of a file)\n\n"
	    "| format | file | lines read | best of %d | MiB/s | digest bytes |\n"
	    "|---|---:|---:|---:|---:|---:|\n",
	    runs);
	e = cJSON_AddArrayToObject(results, "transcripts");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		pathf(path, sizeof(path), "%s/transcript-%zu.jsonl", g.work, i);
		transcript_file(path, kinds[i].frames, mib + 1);
		note("transcripts: %s, %d MiB", kinds[i].name, mib + 1);
		best = 0;
		for (r = 0; r < runs; r++) {
			t0 = now_ms();
			st = pgn_transcript_read(path, PGN_TRANSCRIPT_UNKNOWN,
			    &t, err, sizeof(err));
			ms = now_ms() - t0;
			if (st != PGN_OK)
				die("reading %s: %s", path, err);
			if (r == 0 || ms < best)
				best = ms;
			if (r + 1 < runs)
				pgn_transcript_release(&t);
		}
		digest = pgn_digest_render(&t, NULL, NULL, NULL, 0, &st);
		dlen = digest != NULL ? strlen(digest) : 0;
		free(digest);
		k = (int)(t.read >> 20);
		say("| %s | %d MiB (%d read) | %zu | %.0f ms | **%.0f** | %zu |\n",
		    kinds[i].name, mib + 1, k, t.lines, best,
		    (double)t.read / (1 << 20) / (best / 1e3), dlen);
		row = cJSON_CreateObject();
		cJSON_AddStringToObject(row, "format", kinds[i].name);
		cJSON_AddNumberToObject(row, "bytes_read", (double)t.read);
		cJSON_AddNumberToObject(row, "lines", (double)t.lines);
		cJSON_AddNumberToObject(row, "best_ms", best);
		cJSON_AddNumberToObject(row, "digest_bytes", (double)dlen);
		cJSON_AddItemToArray(e, row);
		pgn_transcript_release(&t);
		(void)unlink(path);
	}
}

/* ---- instructions (callgrind) --------------------------------------- */

/* One hook run of 'host' with its payload; its output in 'pr'. */
static void
hook_once(int host, const char *db)
{
	char *argv[4], buf[2048];

	set_env(db);
	hook_argv(host, argv);
	pr.argv = argv;
	pr.dir = NULL;
	pr.errpath = NULL;
	pr.inlen = payload(host, buf, sizeof(buf));
	pr.in = buf;
	spawn(&pr);
}

/*
 * One callgrind run; 'queued' < 0: the database left as the run before
 * left it (no checkpoint, nothing queued: the quiet stamp's case).
 */
static long long
ir_run(int host, const char *db, int queued)
{
	char *argv[8], buf[2048];
	const char *p;

	if (queued >= 0) {
		empty_wal(db);
		queue_for_target(db, queued);
	}
	set_env(db);
	argv[0] = g.valgrind;
	argv[1] = (char *)"--tool=callgrind";
	argv[2] = (char *)"--callgrind-out-file=/dev/null";
	hook_argv(host, argv + 3);
	pr.argv = argv;
	pr.dir = NULL;
	pr.errpath = g.errfile;
	pr.inlen = payload(host, buf, sizeof(buf));
	pr.in = buf;
	spawn(&pr);
	if (!output_ok(host, queued < 0 ? 0 : queued, pr.out))
		note("  unexpected output under callgrind: '%.200s'", pr.out);
	p = strstr(pr.err, "Collected :");
	if (p == NULL)
		die("no callgrind total in: %.300s", pr.err);
	return strtoll(p + 11, NULL, 10);
}

static long long
ir_median(const struct opts *o, int host, const char *db, int queued)
{
	long long v[9], t;
	int i, j, n = o->ir_reps < 9 ? o->ir_reps : 9;

	hook_once(host, db);
	for (i = 0; i < n; i++)
		v[i] = ir_run(host, db, queued);
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

static void
bench_ir(const struct opts *o, const struct dbset *d)
{
	struct verdict *v =
	    verdict("history independence: Ir with 1M history / Ir empty",
	        "<= 1.05");
	cJSON *arr = cJSON_AddArrayToObject(results, "instructions");
	cJSON *e;
	long long ie, ih;
	double r, worst = 0;
	int h, q;

	if (g.valgrind[0] == '\0') {
		say("\n## Instructions per hook run\n\nvalgrind is not installed: not measured.\n");
		return;
	}
	say("\n## Instructions per hook run (callgrind, whole process)\n\n"
	    "Median of %d runs of `valgrind --tool=callgrind`; Ir counts "
	    "every instruction from execve to exit, the dynamic loader "
	    "included. Before each run the WAL is checkpointed and emptied, "
	    "then the message is queued, so both databases start from the "
	    "same WAL.\n\n| host event | queued | Ir, empty | Ir, 1M history | "
	    "1M / empty |\n|---|---:|---:|---:|---:|\n",
	    o->ir_reps);
	for (h = 0; h < 2; h++)
		for (q = 0; q < 2; q++) {
			note("callgrind: %s, %d queued", host_label[h], q);
			ie = ir_median(o, h, d->empty10, q);
			ih = ir_median(o, h, d->hist10, q);
			r = (double)ih / (double)ie;
			if (r > worst)
				worst = r;
			say("| %s | %d | %lld | %lld | **%.4f** |\n",
			    host_label[h], q, ie, ih, r);
			e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "host_event", host_label[h]);
			cJSON_AddNumberToObject(e, "queued", q);
			cJSON_AddNumberToObject(e, "ir_empty", (double)ie);
			cJSON_AddNumberToObject(e, "ir_1m", (double)ih);
			cJSON_AddNumberToObject(e, "ratio", r);
			cJSON_AddItemToArray(arr, e);
		}
	pathf(v->measured, sizeof(v->measured), "%.4f (worst case)", worst);
	v->met = worst <= T_IR_RATIO;
	/*
	 * A no-mail prompt after a read that found the session quiet, the
	 * database unchanged since (decision 0230): a tool call (it makes
	 * the stamp file a prompt writes), a prompt that begins a turn
	 * after the one that had mail above, one that finds it quiet.
	 */
	hook_once(HOST_TOOL, d->hist10);
	hook_once(HOST_CLAUDE, d->hist10);
	hook_once(HOST_CLAUDE, d->hist10);
	ie = ir_run(HOST_CLAUDE, d->hist10, -1);
	say("\nA no-mail `claude UserPromptSubmit`, 1M history, the "
	    "database unchanged since a read that found the session quiet "
	    "(no checkpoint between): %lld (the quiet stamp, decision "
	    "0230).\n",
	    ie);
	cJSON_AddNumberToObject(results, "ir_prompt_unchanged", (double)ie);
}

/* ---- syscalls (strace) and files (inotify) -------------------------- */

struct sysc {
	int total;
	int fsync;   /* fsync, fdatasync, sync_file_range, msync */
	int unlink;  /* unlink, unlinkat, rmdir */
	int ocreat;  /* opens with O_CREAT (existing files too) */
	int created; /* inotify: files that appeared */
	int deleted; /* inotify: files that went away */
};

static void
count_trace(struct sysc *c)
{
	char line[4096], name[64];
	const char *p;
	size_t k;
	FILE *f = fopen(g.trace, "r");

	if (f == NULL)
		die("strace left no trace: %s", strerror(errno));
	while (fgets(line, sizeof(line), f) != NULL) {
		p = line;
		while (*p >= '0' && *p <= '9')
			p++;
		while (*p == ' ')
			p++;
		if (*p == '+' || *p == '-' || *p == '<')
			continue;
		for (k = 0; k + 1 < sizeof(name) &&
		     (p[k] == '_' || (p[k] >= 'a' && p[k] <= 'z') ||
		         (p[k] >= '0' && p[k] <= '9'));
		     k++)
			name[k] = p[k];
		name[k] = '\0';
		if (k == 0 || p[k] != '(')
			continue;
		c->total++;
		if (strcmp(name, "fsync") == 0 ||
		    strcmp(name, "fdatasync") == 0 ||
		    strcmp(name, "sync_file_range") == 0 ||
		    strcmp(name, "msync") == 0 || strcmp(name, "syncfs") == 0)
			c->fsync++;
		if (strcmp(name, "unlink") == 0 ||
		    strcmp(name, "unlinkat") == 0 || strcmp(name, "rmdir") == 0)
			c->unlink++;
		if (strstr(p, "O_CREAT") != NULL || strcmp(name, "creat") == 0)
			c->ocreat++;
	}
	fclose(f);
}

static void
sys_run(int host, const char *db, int queued, struct sysc *c)
{
	char *argv[12], buf[2048];
	char ev[8192] __attribute__((aligned(8)));
	const struct inotify_event *ie;
	ssize_t n;
	size_t off;
	int fd;

	memset(c, 0, sizeof(*c));
	empty_wal(db);
	queue_for_target(db, queued);
	set_env(db);
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0 ||
	    inotify_add_watch(fd, g.dbdir,
	        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO) < 0 ||
	    inotify_add_watch(fd, g.home,
	        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO) < 0)
		die("inotify: %s", strerror(errno));
	argv[0] = g.strace;
	argv[1] = (char *)"-f";
	argv[2] = (char *)"-qq";
	argv[3] = (char *)"-o";
	argv[4] = g.trace;
	argv[5] = (char *)"--";
	hook_argv(host, argv + 6);
	pr.argv = argv;
	pr.dir = NULL;
	pr.errpath = g.errfile;
	pr.inlen = payload(host, buf, sizeof(buf));
	pr.in = buf;
	spawn(&pr);
	if (!output_ok(host, queued, pr.out))
		note("  unexpected output under strace: '%.200s'", pr.out);
	while ((n = read(fd, ev, sizeof(ev))) > 0)
		for (off = 0; off < (size_t)n; off += sizeof(*ie) + ie->len) {
			ie = (const struct inotify_event *)(ev + off);
			if (ie->mask & (IN_CREATE | IN_MOVED_TO))
				c->created++;
			if (ie->mask & (IN_DELETE | IN_MOVED_FROM))
				c->deleted++;
		}
	close(fd);
	count_trace(c);
}

/* One row: the worst of 'reps' runs; 1 if a no-mail run wrote. */
static int
sys_row(int reps, int h, const char *name, const char *db, int q, cJSON *arr)
{
	struct sysc c, w;
	cJSON *e;
	int rep;

	note("strace: %s, %s, %d queued", host_label[h], name, q);
	/* A first run of the same kind: hook.log exists, last seen is fresh. */
	queue_for_target(db, q);
	hook_once(h, db);
	memset(&w, 0, sizeof(w));
	for (rep = 0; rep < reps; rep++) {
		sys_run(h, db, q, &c);
#define MAXF(f)                                                                \
	if (c.f > w.f)                                                         \
	w.f = c.f
		MAXF(total);
		MAXF(fsync);
		MAXF(unlink);
		MAXF(ocreat);
		MAXF(created);
		MAXF(deleted);
#undef MAXF
	}
	say("| %s | %s | %d | %d | **%d** | **%d** | **%d** | %d | %d |\n",
	    host_label[h], name, q, w.total, w.fsync, w.created, w.deleted,
	    w.unlink, w.ocreat);
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "host_event", host_label[h]);
	cJSON_AddStringToObject(e, "database", name);
	cJSON_AddNumberToObject(e, "queued", q);
	cJSON_AddNumberToObject(e, "syscalls", w.total);
	cJSON_AddNumberToObject(e, "fsync", w.fsync);
	cJSON_AddNumberToObject(e, "created", w.created);
	cJSON_AddNumberToObject(e, "deleted", w.deleted);
	cJSON_AddNumberToObject(e, "unlink_calls", w.unlink);
	cJSON_AddNumberToObject(e, "o_creat_opens", w.ocreat);
	cJSON_AddItemToArray(arr, e);
	return q == 0 && (w.fsync || w.created || w.deleted);
}

static void
bench_sys(const struct opts *o, const struct dbset *d)
{
	struct verdict *v =
	    verdict("hook finding no mail: fsync, files created or deleted",
	        "0, 0, 0");
	cJSON *arr = cJSON_AddArrayToObject(results, "syscalls");
	const char *names[2] = {"empty, 10 agents", "1M history, 10 agents"};
	const char *dbs[2];
	int h, q, k, reps = o->quick ? 2 : 5, nomail_bad = 0;

	dbs[0] = d->empty10;
	dbs[1] = d->hist10;
	if (g.strace[0] == '\0') {
		say("\n## Syscalls per hook run\n\nstrace is not installed: not measured.\n");
		return;
	}
	say("\n## Syscalls and files per hook run (strace -f, inotify)\n\n"
	    "Worst of %d runs each. *fsync* counts fsync, fdatasync, "
	    "sync_file_range and msync; *created* and *deleted* are files "
	    "that appeared in or left the database directory or "
	    "`$PIGEON_HOME` (inotify); *O_CREAT* counts opens with that flag, "
	    "of existing files too.\n\n| host event | database | queued | "
	    "syscalls | fsync | created | deleted | unlink calls | O_CREAT "
	    "opens |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
	    reps);
	for (h = 0; h < 2; h++)
		for (k = 0; k < 2; k++)
			for (q = 0; q < 2; q++)
				nomail_bad +=
				    sys_row(reps, h, names[k], dbs[k], q, arr);
	pathf(v->measured, sizeof(v->measured), "%s",
	    nomail_bad == 0 ? "0, 0, 0 in every no-mail run" :
	                      "see the syscall table");
	v->met = nomail_bad == 0;
}

/* ---- reach: after every tool call and before a stop (§8) ------------ */

/* `pigeon send` as a process, from another agent to the target. */
static void
send_proc(const char *db, const char *body)
{
	char *argv[10];

	set_env(db);
	argv[0] = g.pigeon;
	argv[1] = (char *)"send";
	argv[2] = (char *)"--project";
	argv[3] = g.proj;
	argv[4] = (char *)"--to";
	argv[5] = (char *)"target";
	argv[6] = (char *)"--from";
	argv[7] = (char *)"a01";
	argv[8] = (char *)body;
	argv[9] = NULL;
	pr.argv = argv;
	pr.dir = NULL;
	pr.light = 1;
	pr.in = NULL;
	pr.inlen = 0;
	pr.errpath = g.errfile;
	spawn(&pr);
	pr.light = 0;
	if (!exited_ok(&pr))
		die("pigeon send failed: %.300s", pr.err);
}

/*
 * A simulated turn of TURN_TOOLS tool calls: one PostToolUse run after
 * each, no mail, and one more with a message queued before it (at the
 * middle). Returns the hook time of the whole turn; the mail run's time
 * in *mail_ms, the runs' times in 'v'. *bad counts wrong outputs.
 */
static double
tool_turn(const char *db, double *v, double *mail_ms, int *bad)
{
	double total = 0;
	int i;

	for (i = 0; i <= TURN_TOOLS; i++) {
		int mail = i == TURN_TOOLS / 2;

		if (mail)
			queue_for_target(db, 1);
		hook_once(HOST_TOOL, db);
		if (!exited_ok(&pr) || !output_ok(HOST_TOOL, mail, pr.out))
			if ((*bad)++ == 0)
				note(
				    "  unexpected after-tool output (%d queued): '%.200s'",
				    mail, pr.out);
		total += pr.ms;
		if (mail)
			*mail_ms = pr.ms;
		else
			v[i < TURN_TOOLS / 2 ? i : i - 1] = pr.ms;
	}
	return total;
}

/*
 * Latency from `pigeon send` to injection: a send (the process, from
 * fork to reap), then at once the hook of 'host' (PostToolUse: the
 * next tool call ends; Stop: the agent stops); from the send's fork to
 * the hook's output read. A Stop is followed, untimed, by a prompt, as
 * a person's next prompt resets the governor's count.
 */
static struct stats
latency(const struct opts *o, const char *db, int host, int *missed)
{
	char body[128];
	double *v, t0;
	struct stats st;
	int i, n = o->quick ? 100 : 500;

	v = calloc((size_t)n, sizeof(*v));
	if (v == NULL)
		die("out of memory");
	hook_once(HOST_CLAUDE, db);
	for (i = 0; i < n; i++) {
		pathf(body, sizeof(body),
		    "latency probe %d: the API was renamed, rebase before you push",
		    i);
		t0 = now_ms();
		send_proc(db, body);
		hook_once(host, db);
		v[i] = now_ms() - t0;
		if (!exited_ok(&pr) || !output_ok(host, 1, pr.out) ||
		    strstr(pr.out, body) == NULL) {
			if ((*missed)++ == 0)
				note(
				    "  %s did not inject the message: '%.200s'",
				    host_label[host], pr.out);
		}
		if (host == HOST_STOP)
			hook_once(HOST_CLAUDE, db);
	}
	st = stats_of(v, (size_t)n);
	free(v);
	return st;
}

static void
bench_reach(const struct opts *o, const struct dbset *d)
{
	struct verdict *vr = verdict(
	    "no-mail after-tool run (claude PostToolUse, 1M history): median vs /bin/true",
	    "<= 1.5x");
	struct verdict *vw =
	    verdict("no-mail after-tool run: fsync, files created or deleted",
	        "0, 0, 0");
	struct verdict *vt =
	    verdict("hook time of a 200-tool-call turn (+1 run with mail)",
	        "< 1 s");
	struct verdict *vl =
	    verdict("ping to a working agent: in the next after-tool output",
	        "every time");
	struct verdict *vs =
	    verdict("ping to an agent at stop: in that Stop's output",
	        "every time");
	struct hook_case c;
	struct hook_result r;
	struct stats lw, ls, ts;
	cJSON *o_reach = cJSON_AddObjectToObject(results, "reach");
	cJSON *e, *arr;
	double *v, total, worst = 0, mail_ms = 0, worst_mail = 0;
	int turns = o->quick ? 3 : 10, t, bad = 0, mw = 0, ms = 0, wrote;

	say("\n## Reach: after every tool call and before a stop\n\n");

	/* (a) The no-mail after-tool run against /bin/true. */
	note("reach: no-mail PostToolUse vs /bin/true");
	hook_once(HOST_CLAUDE, d->hist10); /* bound, seen just now, quiet */
	c.dbname = "1M history, 10 agents";
	c.db = d->hist10;
	c.host = HOST_TOOL;
	c.queued = 0;
	r = time_case(o, &c);
	say("A bound session (`claude:bench-claude`, agent `target`) with "
	    "nothing queued for it, 1M history: %d runs of `pigeon-hook "
	    "claude PostToolUse`, each right after one `/bin/true`, as "
	    "above. Times in ms.\n\n"
	    "| hook event | database | queued | hook p50 | p95 | p99 | true p50 | p95 | p99 | ratio of medians |\n"
	    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
	    "| %s | %s | 0 | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | **%.2f** |\n",
	    o->runs, host_label[HOST_TOOL], c.dbname, r.hook.p50, r.hook.p95,
	    r.hook.p99, r.truth.p50, r.truth.p95, r.truth.p99, r.ratio);
	e = cJSON_AddObjectToObject(o_reach, "after_tool_no_mail");
	cJSON_AddItemToObject(e, "hook", stats_json(&r.hook));
	cJSON_AddItemToObject(e, "true", stats_json(&r.truth));
	cJSON_AddNumberToObject(e, "ratio_of_medians", r.ratio);
	cJSON_AddNumberToObject(e, "unexpected_outputs", r.bad);
	pathf(vr->measured, sizeof(vr->measured), "%.2fx", r.ratio);
	vr->met = r.ratio <= T_TOOL_RATIO && r.bad == 0;

	if (g.strace[0] == '\0') {
		say("\nstrace is not installed: writes not measured.\n");
	} else {
		say("\nSyscalls and files, worst of %d runs (columns as in the "
		    "syscall section):\n\n| host event | database | queued | "
		    "syscalls | fsync | created | deleted | unlink calls | "
		    "O_CREAT opens |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n",
		    o->quick ? 2 : 5);
		arr = cJSON_AddArrayToObject(o_reach, "after_tool_syscalls");
		wrote = sys_row(o->quick ? 2 : 5, HOST_TOOL, "empty, 10 agents",
		    d->empty10, 0, arr);
		wrote += sys_row(o->quick ? 2 : 5, HOST_TOOL,
		    "1M history, 10 agents", d->hist10, 0, arr);
		pathf(vw->measured, sizeof(vw->measured), "%s",
		    wrote == 0 ? "0, 0, 0" : "see the table");
		vw->met = wrote == 0;
	}

	if (g.valgrind[0] != '\0') {
		long long it, ip;

		note("reach: callgrind, no-mail PostToolUse and prompt");
		it = ir_median(o, HOST_TOOL, d->hist10, 0);
		ip = ir_median(o, HOST_CLAUDE, d->hist10, 0);
		say("\nInstructions (callgrind, whole process, median of %d, 1M "
		    "history, no mail): `claude PostToolUse` %lld, `claude "
		    "UserPromptSubmit` %lld (%.3f of it).\n",
		    o->ir_reps, it, ip, (double)it / (double)ip);
		cJSON_AddNumberToObject(o_reach, "ir_after_tool_no_mail",
		    (double)it);
		cJSON_AddNumberToObject(o_reach, "ir_prompt_no_mail",
		    (double)ip);
	}

	/* (b) A 200-tool-call turn. */
	note("reach: %d turns of %d tool calls", turns, TURN_TOOLS);
	v = calloc(TURN_TOOLS, sizeof(*v));
	if (v == NULL)
		die("out of memory");
	hook_once(HOST_CLAUDE, d->hist10);
	arr = cJSON_AddArrayToObject(o_reach, "turn_total_ms");
	for (t = 0; t < turns; t++) {
		total = tool_turn(d->hist10, v, &mail_ms, &bad);
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(total));
		if (total > worst)
			worst = total;
		if (mail_ms > worst_mail)
			worst_mail = mail_ms;
	}
	ts = stats_of(v, TURN_TOOLS); /* the last turn's no-mail runs */
	free(v);
	say("\nA simulated turn of %d tool calls, 1M history: %d `pigeon-hook "
	    "claude PostToolUse` runs in a row with nothing queued, and one "
	    "more (in the middle) with one message queued just before it. "
	    "Hook time is each run's fork to reap, summed; %d turns.\n\n"
	    "| what | ms |\n|---|---:|\n"
	    "| whole turn, worst of %d | **%.1f** |\n"
	    "| one no-mail run, p50 / p99 (last turn) | %.3f / %.3f |\n"
	    "| the run with mail, worst | %.3f |\n",
	    TURN_TOOLS, TURN_TOOLS, turns, turns, worst, ts.p50, ts.p99,
	    worst_mail);
	if (bad > 0)
		say("\n**%d after-tool runs printed something unexpected.**\n",
		    bad);
	cJSON_AddNumberToObject(o_reach, "turn_worst_ms", worst);
	cJSON_AddNumberToObject(o_reach, "turn_mail_run_worst_ms", worst_mail);
	cJSON_AddItemToObject(o_reach, "turn_no_mail_run", stats_json(&ts));
	cJSON_AddNumberToObject(o_reach, "turn_unexpected_outputs", bad);
	pathf(vt->measured, sizeof(vt->measured), "%.0f ms (worst of %d)",
	    worst, turns);
	vt->met = worst < T_TURN_MS && bad == 0;

	/* (c) From `pigeon send` to injection. */
	note("reach: latency from pigeon send to injection");
	lw = latency(o, d->hist10, HOST_TOOL, &mw);
	ls = latency(o, d->hist10, HOST_STOP, &ms);
	say("\nLatency from `pigeon send` to injection, 1M history: a "
	    "`pigeon send` process (another agent's, from fork to reap), then "
	    "at once the hook that runs next: `PostToolUse` for an agent at "
	    "work (the tool call in progress ends), `Stop` for one about to "
	    "stop; from the send's fork to the hook's output, which must "
	    "carry the message (`additionalContext`; `decision: block` with "
	    "it as the reason). An agent at work waits at most the rest of "
	    "its current tool call on top of this. After each Stop a prompt "
	    "(untimed) resets the governor, as a person's would. Times in "
	    "ms.\n\n| agent | runs | p50 | p95 | p99 | max | carried the message |\n"
	    "|---|---:|---:|---:|---:|---:|---:|\n"
	    "| working (next PostToolUse) | %zu | %.3f | %.3f | %.3f | %.3f | %zu of %zu |\n"
	    "| at stop (Stop) | %zu | %.3f | %.3f | %.3f | %.3f | %zu of %zu |\n",
	    lw.n, lw.p50, lw.p95, lw.p99, lw.max, lw.n - (size_t)mw, lw.n, ls.n,
	    ls.p50, ls.p95, ls.p99, ls.max, ls.n - (size_t)ms, ls.n);
	e = cJSON_AddObjectToObject(o_reach, "latency_working");
	cJSON_AddItemToObject(e, "ms", stats_json(&lw));
	cJSON_AddNumberToObject(e, "missed", mw);
	e = cJSON_AddObjectToObject(o_reach, "latency_stop");
	cJSON_AddItemToObject(e, "ms", stats_json(&ls));
	cJSON_AddNumberToObject(e, "missed", ms);
	pathf(vl->measured, sizeof(vl->measured),
	    "%zu of %zu, p50 %.2f ms from send", lw.n - (size_t)mw, lw.n,
	    lw.p50);
	vl->met = mw == 0;
	pathf(vs->measured, sizeof(vs->measured),
	    "%zu of %zu, p50 %.2f ms from send", ls.n - (size_t)ms, ls.n,
	    ls.p50);
	vs->met = ms == 0;
}

/* ---- machine and report --------------------------------------------- */

static void
cpu_model(char *out, size_t len)
{
	char line[512], *p;
	FILE *f = fopen("/proc/cpuinfo", "r");

	pathf(out, len, "unknown");
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "model name", 10) == 0 &&
		    (p = strchr(line, ':')) != NULL) {
			p += 2;
			p[strcspn(p, "\n")] = '\0';
			pathf(out, len, "%s", p);
			break;
		}
	fclose(f);
}

/* "static", or the shared libraries ldd lists. */
static void
linkage(const char *prog, char *out, size_t len)
{
	char *argv[3], *line, *next, *p;
	size_t n = 0;

	argv[0] = (char *)"/usr/bin/ldd";
	argv[1] = (char *)prog;
	argv[2] = NULL;
	pathf(out, len, "unknown");
	if (access(argv[0], X_OK) != 0)
		return;
	spawn_argv(argv, g.errfile);
	if (strstr(pr.out, "not a dynamic") != NULL ||
	    strstr(pr.err, "not a dynamic") != NULL ||
	    strstr(pr.out, "statically linked") != NULL) {
		pathf(out, len, "static");
		return;
	}
	out[0] = '\0';
	for (line = pr.out; *line != '\0'; line = next) {
		next = line + strcspn(line, "\n");
		if (*next == '\n')
			*next++ = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		p = line + strcspn(line, " ");
		*p = '\0';
		if (*line == '\0')
			continue;
		if (strncmp(line, "linux-vdso", 10) == 0 ||
		    strstr(line, "ld-linux") != NULL)
			continue;
		if (n + strlen(line) + 3 >= len)
			break;
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "",
		    line);
	}
	if (n == 0)
		pathf(out, len, "static");
}

/* The 1-minute load average, as /proc/loadavg gives it ("?" if not). */
static void
loadavg(char *out, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "r");

	pathf(out, len, "?");
	if (f != NULL && fgets(out, (int)len, f) != NULL)
		out[strcspn(out, " \n")] = '\0';
	if (f != NULL)
		fclose(f);
}

static void
machine(void)
{
	char cpu[256], date[64], hl[512], pl[512], load[64];
	struct utsname u;
	time_t t = time(NULL);
	struct tm tm;
	cJSON *m = cJSON_AddObjectToObject(results, "machine");

	cpu_model(cpu, sizeof(cpu));
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	gmtime_r(&t, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	linkage(g.hook, hl, sizeof(hl));
	linkage(g.pigeon, pl, sizeof(pl));
	loadavg(load, sizeof(load));
	say("# Pigeon benchmark\n\n| machine | |\n|---|---|\n"
	    "| date | %s |\n| cpus (online) | %ld |\n| cpu | %s |\n"
	    "| kernel | %s %s |\n| sqlite (bench process) | %s |\n"
	    "| pigeon-hook shared libraries | %s |\n"
	    "| pigeon shared libraries | %s |\n"
	    "| load average (1 min) at start | %s |\n",
	    date, sysconf(_SC_NPROCESSORS_ONLN), cpu, u.sysname, u.release,
	    sqlite3_libversion(), hl, pl, load);
	cJSON_AddStringToObject(m, "loadavg_start", load);
	cJSON_AddStringToObject(m, "date", date);
	cJSON_AddNumberToObject(m, "cpus",
	    (double)sysconf(_SC_NPROCESSORS_ONLN));
	cJSON_AddStringToObject(m, "cpu", cpu);
	cJSON_AddStringToObject(m, "kernel", u.release);
	cJSON_AddStringToObject(m, "sqlite", sqlite3_libversion());
	cJSON_AddStringToObject(m, "hook_shared_libraries", hl);
	cJSON_AddStringToObject(m, "pigeon_shared_libraries", pl);
}

static int
report_targets(void)
{
	cJSON *arr = cJSON_AddArrayToObject(results, "targets");
	cJSON *e;
	int i, missed = 0;

	say("\n## Targets\n\n| target | wanted | measured | met |\n"
	    "|---|---|---|---|\n");
	for (i = 0; i < nverdicts; i++) {
		say("| %s | %s | %s | %s |\n", verdicts[i].what,
		    verdicts[i].target, verdicts[i].measured,
		    verdicts[i].met == 1     ? "yes" :
		        verdicts[i].met == 0 ? "**NO**" :
		                               "not measured");
		if (verdicts[i].met == 0)
			missed++;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "target", verdicts[i].what);
		cJSON_AddStringToObject(e, "wanted", verdicts[i].target);
		cJSON_AddStringToObject(e, "measured", verdicts[i].measured);
		if (verdicts[i].met < 0)
			cJSON_AddNullToObject(e, "met");
		else
			cJSON_AddBoolToObject(e, "met", verdicts[i].met);
		cJSON_AddItemToArray(arr, e);
	}
	return missed;
}

static const char usage[] =
    "usage: pigeon-bench [--quick] [--rebuild] [--runs N] [--sections LIST]\n"
    "                    [--bin BUILD_DIR] [--out DIR]\n\n"
    "Prepare databases and measure pigeon-hook against /bin/true, sends,\n"
    "instructions (callgrind) and syscalls (strace). Writes DIR/results.json\n"
    "and DIR/results.md (default DIR: bench-out). The 1M-message history is\n"
    "cached in DIR/cache and rebuilt when the schema changes.\n\n"
    "  --quick          fewer runs (about a minute)\n"
    "  --rebuild        rebuild the cached history\n"
    "  --runs N         timed hook runs per case (default 1000, quick 150)\n"
    "  --sections LIST  comma list of hook,ir,sys,reach,lease,lib,sends,\n"
    "                   transcript,pg (default all)\n"
    "  --bin DIR        the build directory (default: this program's)\n";

static int
parse_int(const char *s, int min, int max)
{
	int64_t v;

	if (pgn_parse_i64(s, min, max, &v) != PGN_OK)
		die("'%s': expected a number from %d to %d", s, min, max);
	return (int)v;
}

/* ---- leases (issue 20 item 6, decision 0159) ----------------------- */

/* A Claude PreToolUse Write of 'rel' under the project. */
static size_t
pretool_payload(const char *rel, char *buf, size_t len)
{
	int n = snprintf(buf, len,
	    "{\"session_id\":\"bench-claude\",\"transcript_path\":"
	    "\"%s/transcript.jsonl\",\"cwd\":\"%s\",\"permission_mode\":"
	    "\"default\",\"hook_event_name\":\"PreToolUse\",\"tool_name\":"
	    "\"Write\",\"tool_input\":{\"file_path\":\"%s/%s\","
	    "\"content\":\"x\"}}\n",
	    g.work, g.proj, g.proj, rel);

	if (n < 0 || (size_t)n >= len)
		die("payload too long");
	return (size_t)n;
}

/* The size and mtime of 'path' (0 if none), to see a write. */
static void
file_sig(const char *path, long long sig[2])
{
	struct stat sb;

	sig[0] = sig[1] = -1;
	if (stat(path, &sb) == 0) {
		sig[0] = (long long)sb.st_size;
		sig[1] = (long long)sb.st_mtim.tv_sec * 1000000000LL +
		    sb.st_mtim.tv_nsec;
	}
}

/* 'agent' leases 'one', or 'n' patterns "other/dNNN/" (none covers src). */
static void
lease_many(const char *db, const char *agent, const char *one, int n)
{
	char pats[PGN_MAX_LEASE_PATTERNS][64];
	const char *p[PGN_MAX_LEASE_PATTERNS];
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	pgn_db *h = lib_open(db, 0);
	int i = 0, k;

	while (i < n) {
		for (k = 0; k < PGN_MAX_LEASE_PATTERNS && i < n; k++, i++) {
			if (one != NULL)
				pathf(pats[k], sizeof(pats[k]), "%s", one);
			else
				pathf(pats[k], sizeof(pats[k]), "other/d%03d/",
				    i);
			p[k] = pats[k];
		}
		memset(&req, 0, sizeof(req));
		req.who.agent = agent;
		req.patterns = p;
		req.npatterns = (size_t)k;
		req.ttl_ms = PGN_LEASE_TTL_MAX_MS;
		if (pgn_lease_take(h, &req, &t) != PGN_OK || t.held)
			die("lease take: %s", pgn_errmsg(h));
		pgn_lease_taken_release(&t);
	}
	pgn_db_close(h);
}

/* 'n' paired runs of the before-tool hook (Write of 'rel') and /bin/true. */
static struct hook_result
time_pretool(const struct opts *o, const char *db, const char *rel,
    int want_deny)
{
	struct hook_result r;
	char *hargv[4], *targv[2], buf[2048];
	double *hv, *tv;
	int i, warm = o->quick ? 5 : 20, n = o->runs, denied;

	memset(&r, 0, sizeof(r));
	hv = calloc((size_t)n, sizeof(*hv));
	tv = calloc((size_t)n, sizeof(*tv));
	if (hv == NULL || tv == NULL)
		die("out of memory");
	set_env(db);
	hargv[0] = g.hook;
	hargv[1] = (char *)"claude";
	hargv[2] = (char *)"PreToolUse";
	hargv[3] = NULL;
	targv[0] = (char *)"/bin/true";
	targv[1] = NULL;
	for (i = -warm; i < n; i++) {
		pr.dir = NULL;
		pr.errpath = NULL;
		pr.inlen = pretool_payload(rel, buf, sizeof(buf));
		pr.in = buf;
		pr.argv = targv;
		spawn(&pr);
		if (i >= 0)
			tv[i] = pr.ms;
		pr.argv = hargv;
		spawn(&pr);
		denied = strstr(pr.out, "\"deny\"") != NULL;
		if (!exited_ok(&pr) || denied != want_deny) {
			if (r.bad++ == 0)
				note(
				    "  unexpected before-tool output: '%.200s'",
				    pr.out);
		}
		if (i >= 0)
			hv[i] = pr.ms;
	}
	return paired(&r, hv, tv, n);
}

static void
cli_argv(char **argv, int which, char *body)
{
	int n = 0;

	argv[n++] = g.pigeon;
	if (which == 1) {
		argv[n++] = (char *)"lease";
		argv[n++] = (char *)"take";
		argv[n++] = (char *)"bench/take/**";
	} else {
		argv[n++] = (char *)"send";
		argv[n++] = (char *)"--to";
		argv[n++] = (char *)"target";
		if (which == 2)
			argv[n++] = (char *)"--ack";
	}
	argv[n++] = (char *)"--project";
	argv[n++] = g.proj;
	argv[n++] = (char *)(which == 1 ? "--agent" : "--from");
	argv[n++] = (char *)"a01";
	if (which != 1)
		argv[n++] = body;
	argv[n] = NULL;
}

/*
 * Instructions of one run (whole process, callgrind): of CLI command
 * 'which' (0 send, 1 lease take, 2 send --ack), or with 'rel' of the
 * before-tool hook writing 'rel'.
 */
static long long
cli_ir(const char *db, int which, const char *rel)
{
	char *argv[16], body[] = "ping: the API was renamed", buf[2048];
	const char *p;

	set_env(db);
	argv[0] = g.valgrind;
	argv[1] = (char *)"--tool=callgrind";
	argv[2] = (char *)"--callgrind-out-file=/dev/null";
	pr.in = NULL;
	pr.inlen = 0;
	if (rel != NULL) {
		argv[3] = g.hook;
		argv[4] = (char *)"claude";
		argv[5] = (char *)"PreToolUse";
		argv[6] = NULL;
		pr.inlen = pretool_payload(rel, buf, sizeof(buf));
		pr.in = buf;
	} else
		cli_argv(argv + 3, which, body);
	pr.argv = argv;
	pr.dir = NULL;
	pr.errpath = g.errfile;
	spawn(&pr);
	p = strstr(pr.err, "Collected :");
	if (p == NULL)
		die("no callgrind total in: %.300s", pr.err);
	return strtoll(p + 11, NULL, 10);
}

/*
 * A ratio as the lease section's tables show it, to two decimals: its
 * verdicts judge what they print. A parity target ("no slower than a
 * send") cannot be told from a difference under 0.005 by 150 runs here
 * (a send --ack is a send with one more column: 0.5 % more
 * instructions, decision 0260).
 */
static double
shown(double ratio)
{
	return (double)(long long)(ratio * 100.0 + 0.5) / 100.0;
}

static void
bench_lease(const struct opts *o, const struct dbset *d)
{
	static const char *const what[] = {"`pigeon send` (plain)",
	    "`pigeon lease take` (a renewal after the first)",
	    "`pigeon send --ack`"};
	struct verdict *v0 =
	    verdict("before-tool, no live lease: median vs /bin/true, writes",
	        "<= 1.5x, 0");
	struct verdict *v1 =
	    verdict("before-tool, 100 non-matching leases: median vs /bin/true",
	        "<= 2x");
	struct verdict *v2 =
	    verdict("lease take and send --ack: median vs plain send", "<= 1x");
	char db[PATH_MAX + 16], wal[PATH_MAX + 32], body[] = "ping: renamed";
	char *argv[16];
	long long s0[2], s1[2], w0[2], w1[2], ir[3] = {0, 0, 0};
	long long hir[3] = {0, 0, 0};
	struct hook_result r0, r1, r2;
	double *cv[3], p50[3];
	struct stats cs[3];
	cJSON *e = cJSON_AddObjectToObject(results, "lease");
	int n = o->runs, i, j, k, writes, bad = 0;

	say("\n## Leases: the before-tool hook, lease take, send --ack\n\n");
	pathf(db, sizeof(db), "%s/lease.db", g.dbdir);
	pathf(wal, sizeof(wal), "%s-wal", db);
	rm_db(db);
	copy_file(d->empty10, db);
	set_env(db);
	hook_once(HOST_CLAUDE, db); /* binds bench-claude to target */

	note("lease: before-tool, no live lease");
	file_sig(db, s0);
	file_sig(wal, w0);
	r0 = time_pretool(o, db, "src/x.c", 0);
	if (g.valgrind[0] != '\0')
		hir[0] = cli_ir(db, 0, "src/x.c");
	file_sig(db, s1);
	file_sig(wal, w1);
	writes = s0[0] != s1[0] || s0[1] != s1[1] || w0[0] != w1[0] ||
	    w0[1] != w1[1];
	note("lease: before-tool, 100 leases elsewhere");
	lease_many(db, "a01", NULL, 100);
	r1 = time_pretool(o, db, "src/x.c", 0);
	if (g.valgrind[0] != '\0')
		hir[1] = cli_ir(db, 0, "src/x.c");
	note("lease: before-tool, a denial");
	lease_many(db, "a01", "src/", 1);
	r2 = time_pretool(o, db, "src/x.c", 1);
	if (g.valgrind[0] != '\0')
		hir[2] = cli_ir(db, 0, "src/x.c");
	say("%d paired runs of `pigeon-hook claude PreToolUse` (a Write of "
	    "src/x.c by the bound session `target`) each right after one "
	    "`/bin/true`, as in the hook section. Times in ms.\n\n"
	    "Instructions: callgrind, one run, whole process (0: not "
	    "measured).\n\n"
	    "| leases in the scope | hook p50 | p95 | true p50 | p95 | ratio of medians | wrong outputs | instructions |\n"
	    "|---|---:|---:|---:|---:|---:|---:|---:|\n"
	    "| none live (database and WAL %s) | %.3f | %.3f | %.3f | %.3f | **%.2f** | %d | %lld |\n"
	    "| 100 live, none covers the path | %.3f | %.3f | %.3f | %.3f | **%.2f** | %d | %lld |\n"
	    "| 101, one denies (a journal write) | %.3f | %.3f | %.3f | %.3f | **%.2f** | %d | %lld |\n",
	    n, writes ? "CHANGED" : "unchanged", r0.hook.p50, r0.hook.p95,
	    r0.truth.p50, r0.truth.p95, r0.ratio, r0.bad, hir[0], r1.hook.p50,
	    r1.hook.p95, r1.truth.p50, r1.truth.p95, r1.ratio, r1.bad, hir[1],
	    r2.hook.p50, r2.hook.p95, r2.truth.p50, r2.truth.p95, r2.ratio,
	    r2.bad, hir[2]);
	cJSON_AddNumberToObject(e, "ir_pretool_no_lease", (double)hir[0]);
	cJSON_AddNumberToObject(e, "ir_pretool_100_leases", (double)hir[1]);
	cJSON_AddNumberToObject(e, "ir_pretool_deny", (double)hir[2]);
	cJSON_AddNumberToObject(e, "pretool_no_lease_ratio", r0.ratio);
	cJSON_AddNumberToObject(e, "pretool_no_lease_writes", writes);
	cJSON_AddNumberToObject(e, "pretool_100_leases_ratio", r1.ratio);
	cJSON_AddNumberToObject(e, "pretool_deny_ratio", r2.ratio);
	pathf(v0->measured, sizeof(v0->measured), "%.2fx, %s", r0.ratio,
	    writes ? "written" : "0");
	v0->met = shown(r0.ratio) <= 1.5 && !writes && r0.bad == 0;
	pathf(v1->measured, sizeof(v1->measured), "%.2fx", r1.ratio);
	v1->met = shown(r1.ratio) <= 2.0 && r1.bad == 0;

	/* The CLI: plain send, lease take, send --ack, interleaved. */
	note("lease: send, lease take, send --ack");
	for (k = 0; k < 3; k++) {
		cv[k] = calloc((size_t)n, sizeof(double));
		if (cv[k] == NULL)
			die("out of memory");
	}
	for (i = -(o->quick ? 3 : 10); i < n; i++)
		for (j = 0; j < 3; j++) {
			/* Each first in turn; drained, untimed, under the cap.
			 */
			k = (i + 30 + j) % 3;
			if (j == 0 && (i + 30) % 30 == 0)
				drain_sql(db);
			set_env(db);
			cli_argv(argv, k, body);
			pr.argv = argv;
			pr.dir = NULL;
			pr.light = 1;
			pr.in = NULL;
			pr.inlen = 0;
			pr.errpath = g.errfile;
			spawn(&pr);
			pr.light = 0;
			if (!exited_ok(&pr) && bad++ == 0)
				note("  %s failed: %.300s", what[k], pr.err);
			if (i >= 0)
				cv[k][i] = pr.ms;
		}
	drain_sql(db);
	if (g.valgrind[0] != '\0')
		for (k = 0; k < 3; k++)
			ir[k] = cli_ir(db, k, NULL);
	say("\n%d interleaved runs of each, the order rotating (in the same "
	    "database; the target's queue drained, untimed, every 30 "
	    "rounds: the sender's cap). Times in ms; instructions "
	    "(callgrind, one run, whole process; 0: not measured).\n\n"
	    "| command | p50 | p95 | vs plain send (medians) | instructions |\n"
	    "|---|---:|---:|---:|---:|\n",
	    n);
	for (k = 0; k < 3; k++) {
		cs[k] = stats_of(cv[k], (size_t)n);
		free(cv[k]);
		p50[k] = cs[k].p50;
		say("| %s | %.3f | %.3f | **%.2f** | %lld |\n", what[k],
		    cs[k].p50, cs[k].p95, p50[0] > 0 ? p50[k] / p50[0] : 0,
		    ir[k]);
	}
	cJSON_AddNumberToObject(e, "take_vs_send", p50[1] / p50[0]);
	cJSON_AddNumberToObject(e, "ack_vs_send", p50[2] / p50[0]);
	cJSON_AddNumberToObject(e, "ir_send", (double)ir[0]);
	cJSON_AddNumberToObject(e, "ir_take", (double)ir[1]);
	cJSON_AddNumberToObject(e, "ir_ack", (double)ir[2]);
	pathf(v2->measured, sizeof(v2->measured), "take %.2fx, --ack %.2fx",
	    p50[1] / p50[0], p50[2] / p50[0]);
	v2->met = bad == 0 && shown(p50[1] / p50[0]) <= 1.0 &&
	    shown(p50[2] / p50[0]) <= 1.0;
	rm_db(db);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct dbset d;
	char self[PATH_MAX], bindir[PATH_MAX], path[PATH_MAX], *root = NULL;
	char *text;
	ssize_t n;
	int i, missed, runs = 0;
	double t0 = now_ms();

	memset(&o, 0, sizeof(o));
	o.out = "bench-out";
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			o.quick = 1;
		else if (strcmp(argv[i], "--rebuild") == 0)
			o.rebuild = 1;
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = parse_int(argv[++i], 10, 1000000);
		else if (strcmp(argv[i], "--sections") == 0 && i + 1 < argc)
			o.sections = argv[++i];
		else if (strcmp(argv[i], "--bin") == 0 && i + 1 < argc)
			o.bin = argv[++i];
		else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
			o.out = argv[++i];
		else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fputs(usage, stdout);
			return 0;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	o.runs = runs ? runs : o.quick ? 150 : 1000;
	o.single_sends = o.quick ? 300 : 2000;
	o.loop_sends = o.quick ? 250 : T_LOCKED_N / NLOOPS;
	o.lib_sends = o.quick ? 10000 : 30000;
	o.lib_batch = o.quick ? 30000 : 100000;
	o.ir_reps = o.quick ? 1 : 3;

	if (o.bin == NULL) {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			die("cannot find myself: %s", strerror(errno));
		self[n] = '\0';
		*strrchr(self, '/') = '\0'; /* .../bench */
		pathf(bindir, sizeof(bindir), "%s/..", self);
		o.bin = bindir;
	}
	pathf(g.hook, sizeof(g.hook), "%s/hookcli/pigeon-hook", o.bin);
	pathf(g.pigeon, sizeof(g.pigeon), "%s/cli/pigeon", o.bin);
	if (access(g.hook, X_OK) != 0 || access(g.pigeon, X_OK) != 0)
		die("no pigeon-hook or pigeon under %s: build first", o.bin);
	if (realpath(g.hook, path) != NULL)
		pathf(g.hook, sizeof(g.hook), "%s", path);
	if (realpath(g.pigeon, path) != NULL)
		pathf(g.pigeon, sizeof(g.pigeon), "%s", path);
	find_tool("valgrind", g.valgrind, sizeof(g.valgrind));
	find_tool("strace", g.strace, sizeof(g.strace));

	if (mkdir(o.out, 0755) != 0 && errno != EEXIST)
		die("mkdir %s: %s", o.out, strerror(errno));
	if (realpath(o.out, path) == NULL)
		die("%s: %s", o.out, strerror(errno));
	pathf(g.work, sizeof(g.work), "%s/work", path);
	pathf(g.cache, sizeof(g.cache), "%s/cache", path);
	(void)mkdir(g.work, 0755);
	(void)mkdir(g.cache, 0755);
	pathf(g.stamp, sizeof(g.stamp), "%s/cache/1m-10.stamp", path);
	pathf(g.cache, sizeof(g.cache), "%s/cache/1m-10.db", path);
	pathf(g.home, sizeof(g.home), "%s/home", g.work);
	pathf(g.proj, sizeof(g.proj), "%s/proj", g.work);
	pathf(g.dbdir, sizeof(g.dbdir), "%s/db", g.work);
	pathf(g.errfile, sizeof(g.errfile), "%s/stderr.txt", g.work);
	pathf(g.trace, sizeof(g.trace), "%s/strace.txt", g.work);
	(void)mkdir(g.home, 0700);
	(void)mkdir(g.proj, 0755);
	(void)mkdir(g.dbdir, 0755);
	pathf(self, sizeof(self), "%s/.git", g.proj);
	(void)mkdir(self, 0755);
	if (pgn_scope_find(g.proj, &root) != PGN_OK)
		die("scope of %s", g.proj);
	pathf(g.scope, sizeof(g.scope), "%s", root);
	free(root);
	/* The benchmark's own environment, for the library it links. */
	setenv("PIGEON_HOME", g.home, 1);
	unsetenv("PIGEON_DB");
	unsetenv("PIGEON_AGENT");
	signal(SIGPIPE, SIG_IGN);

	results = cJSON_CreateObject();
	pathf(path, sizeof(path), "%s/results.md", o.out);
	md = fopen(path, "w");
	if (md == NULL || results == NULL)
		die("cannot write %s", path);
	machine();
	say("| mode | %s (hook runs per case: %d) |\n",
	    o.quick ? "quick" : "full", o.runs);
	cJSON_AddStringToObject(results, "mode", o.quick ? "quick" : "full");

	prepare(&o, &d);
	if (has_section(&o, "hook"))
		bench_hooks(&o, &d);
	if (has_section(&o, "ir"))
		bench_ir(&o, &d);
	if (has_section(&o, "sys"))
		bench_sys(&o, &d);
	if (has_section(&o, "reach"))
		bench_reach(&o, &d);
	if (has_section(&o, "lib"))
		bench_lib_sends(&o, &d);
	if (has_section(&o, "sends"))
		bench_proc_sends(&o, &d);
	if (has_section(&o, "transcript"))
		bench_transcripts(&o);
	if (has_section(&o, "lease"))
		bench_lease(&o, &d);
	if (has_section(&o, "pg"))
		bench_pg(&o);
	missed = report_targets();
	loadavg(path, sizeof(path));
	say("\nTotal benchmark time: %.0f s; load average (1 min) at the end: %s.\n",
	    (now_ms() - t0) / 1e3, path);
	cJSON_AddStringToObject(cJSON_GetObjectItem(results, "machine"),
	    "loadavg_end", path);
	fclose(md);

	text = cJSON_Print(results);
	pathf(path, sizeof(path), "%s/results.json", o.out);
	{
		FILE *f = fopen(path, "w");

		if (f == NULL || text == NULL || fputs(text, f) < 0 ||
		    fputc('\n', f) < 0 || fclose(f) != 0)
			die("cannot write %s", path);
	}
	cJSON_free(text);
	cJSON_Delete(results);
	rm_db(d.hist10);
	rm_db(d.hist100);
	rm_db(d.sends);
	rm_db(d.empty10);
	note("wrote %s/results.json and %s/results.md", o.out, o.out);
	return missed > 0 ? 3 : 0;
}
