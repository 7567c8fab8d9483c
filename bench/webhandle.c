/*
 * pigeon-bench-web: what pigeon web's library answers cost, without the
 * socket (docs/benchmarks.md, decision 0220): two databases opened in
 * one process, each path handled RUNS times through pgn_web_handle,
 * alternating between the two (paired: the machine's drift hits both
 * alike), timed by the thread's CPU clock (a loaded machine's waits are
 * not counted). Prints, per path, the median microseconds on each and
 * their ratio.
 *
 *	pigeon-bench-web A.db B.db [RUNS [PATH]]
 *
 * PATH (one of those below) times that path alone: what a profiler
 * (perf record) of the run then sees is that path's cost.
 * Both databases are opened in the scope of the current directory's
 * root as pigeon would find it (run it where the databases' scope is),
 * or the global scope.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pigeon/pigeon.h"
#include "pigeon/web.h"

#define BW_MAX_RUNS 100000

static const char *const paths[] = {
    "/",
    "/api/state",
    "/api/messages",
    "/api/messages?limit=50&before=500000",
    "/api/audit",
    "/api/search?q=parser",
    "/api/search?q=deploy+tonight",
};

static double
cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[n / 2];
}

struct side {
	pgn_db *db;
	struct pgn_web *web;
	char host[32];
};

static int
open_side(struct side *s, const char *path, const char *scope)
{
	if (pgn_db_open(path, 0, 5000, &s->db) != PGN_OK ||
	    pgn_db_set_scope(s->db, scope) != PGN_OK ||
	    pgn_web_new(s->db, PGN_WEB_PORT_DEFAULT, 0, &s->web) != PGN_OK) {
		fprintf(stderr, "pigeon-bench-web: %s: %s\n", path,
		    s->db != NULL ? pgn_errmsg(s->db) : "not opened");
		return -1;
	}
	snprintf(s->host, sizeof(s->host), "127.0.0.1:%d",
	    PGN_WEB_PORT_DEFAULT);
	return 0;
}

/* One request of 'path' on 's': its CPU microseconds, -1 if not 200. */
static double
one(struct side *s, const char *path)
{
	char target[PGN_WEB_MAX_TARGET];
	struct pgn_web_req r;
	struct pgn_web_resp out;
	double t0, t;

	snprintf(target, sizeof(target), "%s%ctoken=%s", path,
	    strchr(path, '?') != NULL ? '&' : '?', pgn_web_token(s->web));
	memset(&r, 0, sizeof(r));
	r.method = "GET";
	r.target = target;
	r.host = s->host;
	t0 = cpu_us();
	pgn_web_handle(s->web, &r, &out);
	t = cpu_us() - t0;
	if (out.status != 200) {
		fprintf(stderr, "pigeon-bench-web: %s: %d %.*s\n", path,
		    out.status, (int)out.len, out.body);
		t = -1;
	}
	pgn_web_resp_release(&out);
	return t;
}

int
main(int argc, char **argv)
{
	static double ta[BW_MAX_RUNS], tb[BW_MAX_RUNS];
	struct side a = {0}, b = {0};
	char *scope = NULL, *cwd;
	int runs, i;
	size_t k;

	if (argc < 3) {
		fprintf(stderr,
		    "usage: pigeon-bench-web A.db B.db [RUNS [PATH]]\n");
		return 2;
	}
	runs = argc > 3 ? atoi(argv[3]) : 201;
	if (runs < 1 || runs > BW_MAX_RUNS)
		return 2;
	pgn_single_threaded();
	cwd = getcwd(NULL, 0);
	if (pgn_scope_find(cwd, &scope) != PGN_OK)
		return 1;
	free(cwd);
	if (open_side(&a, argv[1], scope) != 0 ||
	    open_side(&b, argv[2], scope) != 0)
		return 1;
	printf(
	    "| request | %s (us) | %s (us) | ratio |\n|---|---:|---:|---:|\n",
	    "A", "B");
	for (k = 0; k < sizeof(paths) / sizeof(paths[0]); k++) {
		if (argc > 4 && strcmp(argv[4], paths[k]) != 0)
			continue;
		(void)one(&a, paths[k]); /* warm: statements, pages */
		(void)one(&b, paths[k]);
		for (i = 0; i < runs; i++) {
			ta[i] = one(&a, paths[k]);
			tb[i] = one(&b, paths[k]);
			if (ta[i] < 0 || tb[i] < 0)
				return 1;
		}
		double ma = median(ta, runs), mb = median(tb, runs);
		printf("| `%s` | %.1f | %.1f | %.2f |\n", paths[k], ma, mb,
		    mb / ma);
	}
	pgn_web_free(a.web);
	pgn_web_free(b.web);
	pgn_db_close(a.db);
	pgn_db_close(b.db);
	free(scope);
	return 0;
}
