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
#include "pigeon/transcript.h"
#include "banned.h"

#define HIST_MSGS     1000000 /* delivered messages in the 1M history */
#define HIST_SESSIONS 2000    /* past sessions in the 1M history */
#define BENCH_DATA    "pigeon-bench data v1" /* bump to rebuild caches */
#define MAX_OUT       65536 /* bytes of a child's stdout kept */
#define MAX_ERR       8192  /* bytes of a child's stderr kept */
#define NLOOPS        8     /* concurrent sender processes */

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

struct opts {
	int quick;
	int rebuild;
	int runs;         /* timed hook runs per case */
	int single_sends; /* process sends, one loop */
	int loop_sends;   /* process sends per concurrent loop */
	int lib_sends;    /* library sends, one tx each */
	int lib_batch;    /* library sends, batched */
	int ir_reps;
	const char *bin;      /* build directory */
	const char *out;      /* results directory */
	const char *sections; /* comma list, NULL = all */
};

/* Paths and programs of one run. */
static struct {
	char work[PATH_MAX];
	char home[PATH_MAX];
	char proj[PATH_MAX];
	char scope[PATH_MAX];
	char dbdir[PATH_MAX];
	char cache[PATH_MAX]; /* 1M, 10 agents, never written */
	char stamp[PATH_MAX];
	char hook[PATH_MAX];
	char pigeon[PATH_MAX];
	char valgrind[PATH_MAX];
	char strace[PATH_MAX];
	char errfile[PATH_MAX];
	char trace[PATH_MAX];
	long turn; /* unique turn ids across runs */
} g;

static cJSON *results;
static FILE *md;

/* ---- small helpers -------------------------------------------------- */

/* printf-like: the compilers check every call's arguments. */
static _Noreturn void die(const char *fmt, ...) PGN_PRINTF(1, 2);
static void pathf(char *dst, size_t len, const char *fmt, ...) PGN_PRINTF(3, 4);
static void say(const char *fmt, ...) PGN_PRINTF(1, 2);
static void note(const char *fmt, ...) PGN_PRINTF(1, 2);

static void
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

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void
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

static void
rm_db(const char *path)
{
	char p[PATH_MAX];

	unlink(path);
	pathf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	pathf(p, sizeof(p), "%s-shm", path);
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

struct stats {
	size_t n;
	double p50, p95, p99, min, max, mean;
};

/* Nearest-rank percentiles; sorts 'v'. */
static struct stats
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

static cJSON *
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
static void
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
static void
note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- processes ------------------------------------------------------ */

struct proc {
	char *const *argv;
	const char *dir; /* chdir in the child, or NULL */
	int light;       /* posix_spawn (vfork-like), no dir */
	const char *in;  /* stdin bytes (a pipe, then EOF) */
	size_t inlen;
	const char *errpath; /* stderr file, or NULL: /dev/null */
	char out[MAX_OUT + 1];
	size_t outlen;
	char err[MAX_ERR + 1];
	size_t errlen;
	int status;
	double ms; /* fork to reaped */
};

static char *child_env[8];
static char env_store[8][PATH_MAX + 32];

static void
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
static void
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

static int
exited_ok(const struct proc *p)
{
	return WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
}

/* ---- databases ------------------------------------------------------ */

static pgn_db *
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
static void
drain_sql(const char *path)
{
	sqlite3 *s = sql_open(path);

	sql_exec(s,
	    "UPDATE message SET delivered_ms = created_ms "
	    "WHERE delivered_ms IS NULL");
	sqlite3_close(s);
}

static void
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
static void
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

static void
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

struct dbset {
	char empty10[PATH_MAX];
	char hist10[PATH_MAX];
	char hist100[PATH_MAX];
	char sends[PATH_MAX];
};

static void
prepare(const struct opts *o, struct dbset *d)
{
	double t0 = now_ms();
	pgn_db *db;

	pathf(d->empty10, sizeof(d->empty10), "%s/empty-10.db", g.dbdir);
	pathf(d->hist10, sizeof(d->hist10), "%s/1m-10.db", g.dbdir);
	pathf(d->hist100, sizeof(d->hist100), "%s/1m-100.db", g.dbdir);
	pathf(d->sends, sizeof(d->sends), "%s/sends-100.db", g.dbdir);
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

/* The prompt hooks of two hosts, then Claude's after-tool and stop. */
enum { HOST_CLAUDE, HOST_CURSOR, HOST_TOOL, HOST_STOP };

static const char *const host_label[] = {"claude UserPromptSubmit",
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

struct hook_case {
	const char *dbname;
	const char *db;
	int host;
	int queued;
};

static struct proc pr; /* large: not on the stack */

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

struct hook_result {
	struct stats hook;
	struct stats truth;
	double ratio;
	int bad;
};

/* The statistics of 'n' paired timings (and free them): the measured
 * program's 'hv', /bin/true's 'tv', the ratio of their medians. */
static struct hook_result
paired(struct hook_result *r, double *hv, double *tv, int n)
{
	r->hook = stats_of(hv, (size_t)n);
	r->truth = stats_of(tv, (size_t)n);
	r->ratio = r->truth.p50 > 0 ? r->hook.p50 / r->truth.p50 : 0;
	free(hv);
	free(tv);
	return *r;
}

static struct hook_result
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

struct verdict {
	const char *what;
	const char *target;
	char measured[160];
	int met; /* 1 met, 0 missed, -1 not measured */
};

#define MAX_VERDICTS 16
static struct verdict verdicts[MAX_VERDICTS];
static int nverdicts;

static struct verdict *
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

/* What one concurrent loop reports, through a file, to the parent. */
struct loop_result {
	int ok;
	int failed;
	int locked; /* "database is locked" on stderr */
	int busy;   /* Pigeon's own "is busy" message */
};

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
	int go[2], stop[2], rep[2], i, ok = 0, failed = 0, locked = 0;
	int busy = 0, n = o->single_sends, m = o->loop_sends, total;
	long claimed = 0, cerr = 0;
	int64_t queued_after;
	pid_t pid[NLOOPS], dpid;
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
	if (pipe(go) != 0 || pipe(stop) != 0 || pipe(rep) != 0)
		die("pipe: %s", strerror(errno));
	dpid = fork();
	if (dpid == 0) {
		close(stop[1]);
		close(rep[0]);
		drainer(d->sends, 100, stop[0], rep[1]);
	}
	close(stop[0]);
	close(rep[1]);
	for (i = 0; i < NLOOPS; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			char c;

			close(go[1]);
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			pathf(errpath, sizeof(errpath), "%s/send-err-%d.txt",
			    g.work, i);
			memset(&lr, 0, sizeof(lr));
			send_loop(d->sends, i + 1, m, 100, lat, &lr.ok,
			    &lr.failed, &lr.locked, &lr.busy, errpath);
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
	close(stop[1]);
	rr = read(rep[0], line, sizeof(line) - 1);
	line[rr > 0 ? rr : 0] = '\0';
	if (sscanf(line, "%ld %ld", &claimed, &cerr) != 2)
		claimed = cerr = -1;
	close(rep[0]);
	while (waitpid(dpid, NULL, 0) < 0 && errno == EINTR)
		;
	for (i = 0; i < NLOOPS; i++) {
		loop_load(i, &lr, lat + (size_t)i * (size_t)m, m);
		ok += lr.ok;
		failed += lr.failed;
		locked += lr.locked;
		busy += lr.busy;
	}
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
	double t0, wall;
	int go[2], i, j, status, failed = 0;
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
	{
		/* Every child has opened the database by then. */
		struct timespec ts = {0, 200000000L};

		nanosleep(&ts, NULL);
	}
	t0 = now_ms();
	for (i = 0; i < NLOOPS; i++)
		if (write(go[1], "g", 1) != 1)
			die("release: %s", strerror(errno));
	for (i = 0; i < NLOOPS; i++) {
		while (waitpid(pid[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	wall = now_ms() - t0;
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
	/* Rounds of 150 per agent stay under the 200-pending cap. */
	t = 0;
	for (done = 0; done < o->lib_sends; done += round) {
		round = o->lib_sends - done < 99 * 150 ? o->lib_sends - done :
		                                         99 * 150;
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
		round = o->lib_batch - done < 99 * 150 ? o->lib_batch - done :
		                                         99 * 150;
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

	/* Under the 200-pending cap: 99 agents x 150 per round. */
	note("library: %d processes at once, one transaction per message",
	    NLOOPS);
	rate8 = 0;
	for (round = 0; round < (o->quick ? 1 : 3); round++)
		rate8 += lib_concurrent(d, 99 * 150 / NLOOPS, &failed8);
	rate8 /= o->quick ? 1 : 3;

	say("\n## Library sends (a connection kept open per process)\n\n"
	    "| what | messages | msgs/s |\n|---|---:|---:|\n");
	say("| `pgn_send`, one transaction per message | %d | **%.0f** |\n",
	    o->lib_sends, rate1);
	say("| `pgn_send`, 50 recipients per transaction | %d | %.0f |\n", done,
	    rateb);
	say("| `pgn_send`, one transaction each, %d processes at once | %d per round | %.0f%s |\n",
	    NLOOPS, 99 * 150 / NLOOPS * NLOOPS, rate8,
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
			st = pgn_transcript_read(path, PGN_TX_UNKNOWN, &t, err,
			    sizeof(err));
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

/* ---- PostgreSQL (issue 13; docs/decisions/0119) ---------------------- */

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
	set_env(NULL);
	pr.argv = argv;
	pr.dir = NULL;
	pr.in = NULL;
	pr.inlen = 0;
	pr.errpath = g.errfile;
	spawn(&pr);
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
	set_env(NULL);
	pr.argv = argv;
	pr.dir = NULL;
	pr.in = NULL;
	pr.inlen = 0;
	pr.errpath = NULL;
	spawn(&pr);
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
		set_env(NULL);
		pr.argv = argv;
		pr.dir = NULL;
		pr.in = NULL;
		pr.inlen = 0;
		pr.errpath = g.errfile;
		spawn(&pr);
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
	double *all = NULL, t0, wall, c0;
	long long *ids = NULL;
	size_t total = 0, cap = 0, k;
	pid_t pid[NLOOPS];
	int go[2], i, a, status, failed = 0;
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
	{
		struct timespec ts = {0, 300000000L};

		nanosleep(&ts, NULL); /* every child has connected */
	}
	t0 = now_ms();
	for (i = 0; i < NLOOPS; i++)
		if (write(go[1], "g", 1) != 1)
			die("release: %s", strerror(errno));
	for (i = 0; i < NLOOPS; i++) {
		while (waitpid(pid[i], &status, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	}
	wall = now_ms() - t0;
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

static void
bench_pg(const struct opts *o)
{
	struct verdict *v = verdict(
	    "PostgreSQL: the hook over a local Unix socket, one message, median",
	    "<= 5 ms");
	struct hook_case hc[6];
	struct hook_result hr[6], fl[2];
	struct stats conn_pg, conn_sq, conn_pb, s8[2], cl[2];
	char bwhy[128];
	int nb;
	double rate8[2], crate[2], t0, wall;
	char why[256], errpath[PATH_MAX], cell[5][64];
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
		pid_t pid[NLOOPS];
		struct loop_result lr;
		int go[2];

		note("postgresql: %s, %d loops of %d `pigeon send`", eng[e],
		    NLOOPS, m);
		if (pipe(go) != 0)
			die("pipe: %s", strerror(errno));
		for (i = 0; i < NLOOPS; i++) {
			pid[i] = fork();
			if (pid[i] == 0) {
				char c;

				close(go[1]);
				if (read(go[0], &c, 1) != 1)
					_exit(1);
				pathf(errpath, sizeof(errpath),
				    "%s/pg-send-err-%d.txt", g.work, i);
				memset(&lr, 0, sizeof(lr));
				send_loop(dbs[e], i + 1, m, 100, lat, &lr.ok,
				    &lr.failed, &lr.locked, &lr.busy, errpath);
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
		ok[e] = failed[e] = 0;
		for (i = 0; i < NLOOPS; i++) {
			loop_load(i, &lr, lat + (size_t)i * (size_t)m, m);
			ok[e] += lr.ok;
			failed[e] += lr.failed;
		}
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

static long long
ir_run(int host, const char *db, int queued)
{
	char *argv[8], buf[2048];
	const char *p;

	empty_wal(db);
	queue_for_target(db, queued);
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
	if (!output_ok(host, queued, pr.out))
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
	set_env(NULL);
	pr.argv = argv;
	pr.dir = NULL;
	pr.in = NULL;
	pr.inlen = 0;
	pr.errpath = g.errfile;
	spawn(&pr);
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
    "  --sections LIST  comma list of hook,ir,sys,reach,lib,sends,\n"
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
	pathf(g.pigeon, sizeof(g.pigeon), "%s/broker/pigeon", o.bin);
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
