/*
 * What bench.c (the driver and its sections) and pg.c (the PostgreSQL
 * section) share: the run's options and paths, child processes, the
 * statistics, the hook timing, the verdicts and the concurrent senders.
 * A file includes its system headers, then this one, then banned.h.
 */
#ifndef PGN_BENCH_H
#define PGN_BENCH_H

#include <limits.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "pigeon/pigeon.h"

#define MAX_OUT 65536 /* bytes of a child's stdout kept */
#define MAX_ERR 8192  /* bytes of a child's stderr kept */
#define NLOOPS  8     /* concurrent sender processes */

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
struct bench_paths {
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
};
extern struct bench_paths g;

struct stats {
	size_t n;
	double p50, p95, p99, min, max, mean;
};

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

struct dbset {
	char empty10[PATH_MAX];
	char hist10[PATH_MAX];
	char hist100[PATH_MAX];
	char sends[PATH_MAX];
};

/* The prompt hooks of two hosts, then Claude's after-tool and stop. */
enum { HOST_CLAUDE, HOST_CURSOR, HOST_TOOL, HOST_STOP };

struct hook_case {
	const char *dbname;
	const char *db;
	int host;
	int queued;
};

struct hook_result {
	struct stats hook;
	struct stats truth;
	double ratio;
	int bad;
};

struct verdict {
	const char *what;
	const char *target;
	char measured[160];
	int met; /* 1 met, 0 missed, -1 not measured */
};

/* What one concurrent loop reports, through a file, to the parent. */
struct loop_result {
	int ok;
	int failed;
	int locked; /* "database is locked" on stderr */
	int busy;   /* Pigeon's own "is busy" message */
};

extern cJSON *results;                 /* results.json's object */
extern struct proc pr;                 /* large: not on the stack */
extern const char *const host_label[]; /* by HOST_*, for the tables */

/* ---- small helpers (bench.c) ---------------------------------------- */

_Noreturn void die(const char *fmt, ...) PGN_PRINTF(1, 2);
/* dst = the formatted path; one that does not fit dies. */
void pathf(char *dst, size_t len, const char *fmt, ...) PGN_PRINTF(3, 4);
/* A line of results.md (and stdout); a progress line on stderr. */
void say(const char *fmt, ...) PGN_PRINTF(1, 2);
void note(const char *fmt, ...) PGN_PRINTF(1, 2);
double now_ms(void);
/* Nearest-rank percentiles (sorts 'v'), and as JSON. */
struct stats stats_of(double *v, size_t n);
cJSON *stats_json(const struct stats *s);
/* A target row of the report; fill its 'measured' and 'met'. */
struct verdict *verdict(const char *what, const char *target);

/* ---- processes and databases (bench.c) ------------------------------ */

/* The children's environment: PATH, HOME, PIGEON_HOME, LC_ALL, PIGEON_DB
 * = 'db' (NULL: none). */
void set_env(const char *db);
/* Run p->argv to its end: its output, status and time into 'p'. */
void spawn(struct proc *p);
/* Run 'argv' in pr, in the plain environment, stderr to 'errpath'. */
void spawn_argv(char *const *argv, const char *errpath);
int exited_ok(const struct proc *p);
/* The library's handle on 'path' in the benchmark's scope; dies. */
pgn_db *lib_open(const char *path, unsigned flags);
/* Remove a SQLite database and its -wal and -shm. */
void rm_db(const char *path);
/* Mark every queued message delivered (SQLite). */
void drain_sql(const char *path);
/* Agent 'i''s name: target for 0, else a01 .. a99. */
void agent_name(char *out, size_t len, int i);
/* Agents from .. to - 1, each with 'queued' messages queued. */
void add_agents(pgn_db *db, int from, int to, int queued);
void queue_each(pgn_db *db, int from, int to, int queued);

/* ---- the hook and the senders (bench.c) ----------------------------- */

/* The hook paired with /bin/true, o->runs times. */
struct hook_result time_case(const struct opts *o, const struct hook_case *c);
struct hook_result paired(struct hook_result *r, double *hv, double *tv, int n);
/* Release 'n' forked loops at once and reap them (bench.c). */
int release_loops(int go_w, const pid_t *pid, int n, long settle_ms,
    double *wall);
/*
 * NLOOPS loops of 'm' `pigeon send` processes into 'db', released at
 * once: latencies into lat[0 .. m * NLOOPS), counts summed into 'sum',
 * loop i's stderr into WORK/ERRNAME-i.txt. Returns the wall time, ms.
 */
double run_senders(const char *db, int m, const char *errname, double *lat,
    struct loop_result *sum);

/* ---- PostgreSQL beside SQLite (pg.c) -------------------------------- */

void bench_pg(const struct opts *o);

#endif /* PGN_BENCH_H */
