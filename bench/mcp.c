/*
 * pigeon-bench-mcp: what pigeon mcp costs (docs/benchmarks.md, decision
 * 0165), beside pigeon send as a process, on a private state directory:
 *   - start to initialize answer: spawn pigeon mcp, write initialize,
 *     read the answer line (target: median under 5 ms);
 *   - a send tool call's round trip on a started server (target: median
 *     at most 2 ms), and pigeon send as a process, from fork to exit.
 *
 *	pigeon-bench-mcp PIGEON [RUNS]
 *
 * Prints a Markdown table of medians and 95th percentiles (ms). Runs
 * are wall time on a quiet machine; the ratio is what to compare.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

#define BM_MAX_RUNS 100000
#define BM_LINE     65536

static const char init_line[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
    "\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n";

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return v[(int)((n - 1) * p)];
}

struct server {
	pid_t pid;
	int in, out; /* its stdin (we write), its stdout (we read) */
	char buf[BM_LINE];
	size_t len;
	int ok; /* the last answer was no error */
};

static int
start(struct server *s, const char *pigeon)
{
	int a[2], b[2];

	if (pipe(a) != 0 || pipe(b) != 0)
		return -1;
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (s->pid == 0) {
		dup2(a[0], 0);
		dup2(b[1], 1);
		close(a[0]);
		close(a[1]);
		close(b[0]);
		close(b[1]);
		execl(pigeon, "pigeon", "mcp", (char *)NULL);
		_exit(127);
	}
	close(a[0]);
	close(b[1]);
	s->in = a[1];
	s->out = b[0];
	s->len = 0;
	return 0;
}

/* Write 'line', read one answer line; 0 or -1. */
static int
ask(struct server *s, const char *line)
{
	size_t n = strlen(line);
	ssize_t r;
	char *nl;

	if (write(s->in, line, n) != (ssize_t)n)
		return -1;
	for (;;) {
		nl = memchr(s->buf, '\n', s->len);
		if (nl != NULL) {
			size_t k = (size_t)(nl - s->buf) + 1;

			*nl = '\0';
			s->ok = strstr(s->buf, "\"error\"") == NULL &&
			    strstr(s->buf, "\"isError\":true") == NULL;

			memmove(s->buf, s->buf + k, s->len - k);
			s->len -= k;
			return 0;
		}
		if (s->len == sizeof(s->buf))
			s->len = 0;
		r = read(s->out, s->buf + s->len, sizeof(s->buf) - s->len);
		if (r <= 0)
			return -1;
		s->len += (size_t)r;
	}
}

static void
stop(struct server *s)
{
	close(s->in);
	close(s->out);
	waitpid(s->pid, NULL, 0);
}

static int
run_send(const char *pigeon)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 1);
		execl(pigeon, "pigeon", "send", "--to", "bob", "bench",
		    (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static double t[BM_MAX_RUNS];
	char dir[300], cmd[4200];
	char line[512];
	const char *pigeon, *tmp;
	struct server s;
	double t0, init50, init95, call50, call95, send50, send95;
	int runs = 200, i;

	if (argc < 2) {
		fprintf(stderr, "usage: pigeon-bench-mcp PIGEON [RUNS]\n");
		return 2;
	}
	pigeon = realpath(argv[1], NULL);
	if (pigeon == NULL) {
		fprintf(stderr, "pigeon-bench-mcp: %s: %s\n", argv[1],
		    strerror(errno));
		return 2;
	}
	if (argc > 2)
		runs = atoi(argv[2]);
	if (runs < 10 || runs > BM_MAX_RUNS)
		runs = 200;
	signal(SIGPIPE, SIG_IGN);
	tmp = getenv("TMPDIR");
	if (tmp == NULL || tmp[0] == '\0' || strlen(tmp) > 200)
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/pigeon-bench-mcp.XXXXXX", tmp);
	if (mkdtemp(dir) == NULL)
		return 1;
	setenv("PIGEON_HOME", dir, 1);
	setenv("PIGEON_AGENT", "alice", 1);
	unsetenv("PIGEON_SESSION");
	unsetenv("PIGEON_DB");
	if (chdir(dir) != 0)
		return 1;
	snprintf(cmd, sizeof(cmd),
	    "'%s' agent add alice >/dev/null && '%s' agent add bob >/dev/null",
	    pigeon, pigeon);
	if (system(cmd) != 0)
		return 1;
	for (i = 0; i < runs; i++) {
		t0 = now_ms();
		if (start(&s, pigeon) != 0 || ask(&s, init_line) != 0)
			return 1;
		t[i] = now_ms() - t0;
		stop(&s);
	}
	init50 = pct(t, runs, 0.5);
	init95 = pct(t, runs, 0.95);
	if (start(&s, pigeon) != 0 || ask(&s, init_line) != 0)
		return 1;
	for (i = 0; i < runs; i++) {
		/* Keep bob's queue under its cap: a read now and then. */
		if (i % 90 == 89) {
			snprintf(cmd, sizeof(cmd),
			    "'%s' read --agent bob >/dev/null", pigeon);
			if (system(cmd) != 0)
				return 1;
		}
		snprintf(line, sizeof(line),
		    "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"send\",\"arguments\":{\"to\":\"bob\","
		    "\"text\":\"bench\"}}}\n",
		    i + 1);
		t0 = now_ms();
		if (ask(&s, line) != 0)
			return 1;
		t[i] = now_ms() - t0;
		if (!s.ok) {
			fprintf(stderr, "pigeon-bench-mcp: send %d failed\n",
			    i);
			return 1;
		}
	}
	stop(&s);
	call50 = pct(t, runs, 0.5);
	call95 = pct(t, runs, 0.95);
	snprintf(cmd, sizeof(cmd), "'%s' read --agent bob >/dev/null", pigeon);
	if (system(cmd) != 0)
		return 1;
	for (i = 0; i < runs; i++) {
		if (i % 90 == 89 && system(cmd) != 0)
			return 1;
		t0 = now_ms();
		if (run_send(pigeon) != 0)
			return 1;
		t[i] = now_ms() - t0;
	}
	send50 = pct(t, runs, 0.5);
	send95 = pct(t, runs, 0.95);
	printf("| pigeon mcp (%d runs each) | median ms | p95 ms | target |\n",
	    runs);
	printf("|---|---|---|---|\n");
	printf("| start to initialize answer | %.3f | %.3f | < 5 ms: %s |\n",
	    init50, init95, init50 < 5 ? "met" : "MISSED");
	printf(
	    "| send tool call, server started | %.3f | %.3f | <= 2 ms: %s |\n",
	    call50, call95, call50 <= 2 ? "met" : "MISSED");
	printf("| pigeon send as a process | %.3f | %.3f | — |\n", send50,
	    send95);
	printf("| ratio of medians, process / tool call | **%.2f** | | |\n",
	    send50 / call50);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return init50 < 5 && call50 <= 2 ? 0 : 3;
}
