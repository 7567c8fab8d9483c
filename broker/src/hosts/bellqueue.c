/*
 * A queue doorbell (docs/decisions/0211, 0233): Codex's `codex queue
 * --thread ID --message TEXT` starts a turn in an idle terminal session
 * (measured with 0.171.0), whose prompt hook then claims the mail. The
 * command takes a second or two (a node wrapper, then Codex's own app
 * server in process), far more than a send, so it never runs on the
 * send's path: the send forks a watcher, in a session of its own, and
 * returns without waiting for it (decision 0234). The
 * watcher runs the command in a process group of its own with
 * /dev/null for its standard streams and no other descriptor of ours,
 * kills the group past PGN_DOORBELL_QUEUE_MS, and appends the outcome
 * to wake.log. What the command reads is fixed before the fork: its
 * path (found on PATH), its arguments (the session id and the host
 * table's fixed line naming the message, never mail), its environment
 * (ours, less PIGEON_*, with the session's config home).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pgn_int.h"
#include "hosts_int.h"

extern char **environ;

/* The directory 'up' levels above the file 'transcript', into 'out'. */
static int
home_of(const char *transcript, int up, char out[PGN_MAX_PATH])
{
	size_t n = strlen(transcript);
	int i;

	if (transcript[0] != '/' || n >= PGN_MAX_PATH)
		return 0;
	for (i = 0; i < up; i++) {
		while (n > 1 && transcript[n - 1] != '/')
			n--;
		while (n > 1 && transcript[n - 1] == '/')
			n--;
		if (n <= 1)
			return 0;
	}
	memcpy(out, transcript, n);
	out[n] = '\0';
	return 1;
}

/* 'name' on PATH: the first regular executable file, into 'out'. */
static int
find_program(const char *name, char out[PGN_MAX_PATH])
{
	const char *path = getenv("PATH"), *p, *e;
	struct stat sb;
	size_t n;

	if (path == NULL || strchr(name, '/') != NULL)
		return 0;
	for (p = path; *p != '\0'; p = *e != '\0' ? e + 1 : e) {
		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		n = (size_t)(e - p);
		/* An empty or relative entry would depend on the cwd. */
		if (n == 0 || p[0] != '/')
			continue;
		if (snprintf(out, PGN_MAX_PATH, "%.*s/%s", (int)n, p, name) >=
		    PGN_MAX_PATH)
			continue;
		if (stat(out, &sb) == 0 && S_ISREG(sb.st_mode) &&
		    access(out, X_OK) == 0)
			return 1;
	}
	return 0;
}

int
pgn_doorbell_program(const struct pgn_doorbell *d, char out[PGN_MAX_PATH])
{
	return d != NULL && d->kind == PGN_BELL_QUEUE && d->program != NULL &&
	    find_program(d->program, out);
}

/* Our environment less PIGEON_* and 'var', then 'set' ("VAR=DIR"). */
static char **
env_for(const char *var, char *set)
{
	size_t i, n = 0, all = 0, vl = strlen(var);
	char **env;

	/* Pointers into the environment we were given (the kernel's
	 * ARG_MAX bounds it): no copy of a variable. */
	while (environ != NULL && environ[all] != NULL)
		all++;
	env = calloc(all + 2, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (i = 0; i < all; i++) {
		if (strncmp(environ[i], "PIGEON_", 7) == 0 ||
		    (strncmp(environ[i], var, vl) == 0 &&
		        environ[i][vl] == '='))
			continue;
		env[n++] = environ[i];
	}
	env[n++] = set;
	env[n] = NULL;
	return env;
}

/* Close every descriptor from 3 up (the watcher holds none of ours). */
static void
close_ours(void)
{
	long fd, max = sysconf(_SC_OPEN_MAX);

#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0)
		return;
#endif
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		(void)close((int)fd);
}

/* Append 'line' to 'log' (the watcher's last word; best effort). */
static void
log_line(const char *log, const char *line)
{
	int fd;

	if (log == NULL)
		return;
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0)
		return;
	if (write(fd, line, strlen(line)) < 0) {
		/* the log is best effort */
	}
	close(fd);
}

/*
 * The watcher (never returns): in a session of its own, the command in
 * a group of its own, killed with its group past the bound; then one
 * line to the log.
 */
static void
watch(const char *prog, char *const argv[], char *const env[], const char *log,
    const char *tag)
{
	static const struct timespec tick = {0, 20000000};
	char line[PGN_WAKE_LOG_LINE], at[32];
	sigset_t none;
	int64_t deadline;
	pid_t c, w;
	int st = 0, fd, late = 0, waitfail = 0;

	/* Background work: it yields the cores to the send that started
	 * it and to what the person runs (0234). */
	errno = 0;
	if (nice(PGN_DOORBELL_NICE) == -1 && errno != 0) {
		/* as it was: still rung */
	}
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	/* The caller's handlers (pigeon web's writes to its signal pipe)
	 * and what it ignored are not the watcher's nor codex's. */
	(void)signal(SIGPIPE, SIG_DFL);
	(void)signal(SIGCHLD, SIG_DFL);
	(void)signal(SIGINT, SIG_DFL);
	(void)signal(SIGTERM, SIG_DFL);
	(void)signal(SIGHUP, SIG_DFL);
	(void)signal(SIGQUIT, SIG_DFL);
	fd = open("/dev/null", O_RDWR);
	if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(1);
	/* Nothing of ours goes on: no database, no socket, no log. */
	close_ours();
	deadline = pgn_mono_ms() + PGN_DOORBELL_QUEUE_MS;
	c = fork();
	if (c == 0) {
		(void)setpgid(0, 0);
		execve(prog, argv, env);
		_exit(127);
	}
	if (c < 0) {
		(void)snprintf(line, sizeof(line), "fork: errno %d", errno);
		goto say;
	}
	(void)setpgid(c, c);
	for (;;) {
		w = waitpid(c, &st, WNOHANG);
		if (w == c)
			break;
		if (w < 0 && errno != EINTR) {
			waitfail = errno;
			break;
		}
		if (pgn_mono_ms() >= deadline) {
			(void)kill(-c, SIGKILL);
			(void)waitpid(c, &st, 0);
			late = 1;
			break;
		}
		(void)nanosleep(&tick, NULL);
	}
	if (late)
		(void)snprintf(line, sizeof(line),
		    "not done within %d ms: killed", PGN_DOORBELL_QUEUE_MS);
	else if (waitfail != 0)
		(void)snprintf(line, sizeof(line), "wait: errno %d", waitfail);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		(void)snprintf(line, sizeof(line), "exit 0");
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		(void)snprintf(line, sizeof(line), "exit 127 (could not run)");
	else if (WIFEXITED(st))
		(void)snprintf(line, sizeof(line), "failed: exit %d",
		    WEXITSTATUS(st));
	else
		(void)snprintf(line, sizeof(line), "failed: signal %d",
		    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
say : {
	char full[PGN_WAKE_LOG_LINE + 64];

	pgn_format_time(pgn_now_ms(), at, sizeof(at));
	(void)snprintf(full, sizeof(full), "%s pid=%ld %s: %s\n", at,
	    (long)getpid(), tag != NULL ? tag : "", line);
	log_line(log, full);
}
	_exit(0);
}

/*
 * Watchers this process started and has not reaped yet. The send does
 * not wait for its watcher: a short-lived sender ends and the system
 * reaps it; a long-lived one (pigeon mcp, pigeon wake --follow) reaps
 * its own on its next ring (by pid: never another child of its caller).
 * With every slot taken, the watcher is started through a child that
 * ends at once, and the send waits for that child only.
 */
static pid_t watchers[PGN_DOORBELL_WATCHERS];

/* A free slot after reaping the watchers that have ended, or -1. */
static int
watcher_slot(void)
{
	pid_t w;
	int i, slot = -1;

	for (i = 0; i < PGN_DOORBELL_WATCHERS; i++) {
		if (watchers[i] > 0) {
			w = waitpid(watchers[i], NULL, WNOHANG);
			if (w == watchers[i] || (w < 0 && errno == ECHILD))
				watchers[i] = 0;
		}
		if (watchers[i] == 0 && slot < 0)
			slot = i;
	}
	return slot;
}

pgn_ring
pgn_doorbell_queue(const struct pgn_doorbell *d, const char *id,
    const char *transcript, int64_t msg, const char *log, const char *tag,
    char why[PGN_DOORBELL_WHY])
{
	char home[PGN_MAX_PATH], prog[PGN_MAX_PATH], text[256];
	char *set = NULL, **env = NULL;
	char *argv[7];
	struct stat sb;
	pgn_ring r = PGN_RING_RUNG;
	pid_t a;
	int st = 0, slot;
	size_t n;

	why[0] = '\0';
	if (d == NULL || d->kind != PGN_BELL_QUEUE || id == NULL ||
	    !pgn_ring_id_ok(id))
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "not a session id to ring");
	if (transcript == NULL || !home_of(transcript, d->transcript_up, home))
		return pgn_ring_say(why, PGN_RING_GONE,
		    "no transcript path to find its config home by");
	if (stat(home, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return pgn_ring_say(why, PGN_RING_GONE, "no config home %s",
		    home);
	if (sb.st_uid != geteuid())
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "config home %s belongs to another user (uid %lu)", home,
		    (unsigned long)sb.st_uid);
	if (!find_program(d->program, prog))
		return pgn_ring_say(why, PGN_RING_GONE, "%s is not on PATH",
		    d->program);
	if (snprintf(text, sizeof(text), "%s (#%lld).", d->line,
	        (long long)msg) >= (int)sizeof(text))
		return pgn_ring_say(why, PGN_RING_FAILED, "line too long");
	n = strlen(d->home_env) + 1 + strlen(home) + 1;
	set = malloc(n);
	if (set == NULL)
		return pgn_ring_say(why, PGN_RING_FAILED, "out of memory");
	(void)snprintf(set, n, "%s=%s", d->home_env, home);
	env = env_for(d->home_env, set);
	if (env == NULL) {
		r = pgn_ring_say(why, PGN_RING_FAILED, "out of memory");
		goto out;
	}
	argv[0] = prog;
	argv[1] = (char *)"queue";
	argv[2] = (char *)"--thread";
	argv[3] = (char *)id;
	argv[4] = (char *)"--message";
	argv[5] = text;
	argv[6] = NULL;
	/* The watcher, in a session of its own (a terminal's hangup does
	 * not reach it); the send does not wait for it (decision 0234). */
	slot = watcher_slot();
	a = fork();
	if (a == 0) {
		pid_t b = 0;

		(void)setsid();
		if (slot < 0)
			b = fork(); /* no slot: hand it off, end at once */
		if (b == 0)
			watch(prog, argv, env, log, tag);
		_exit(b < 0 ? 1 : 0);
	}
	if (a < 0) {
		r = pgn_ring_say(why, PGN_RING_FAILED, "fork: %s",
		    strerror(errno));
		goto out;
	}
	if (slot >= 0) {
		watchers[slot] = a;
		goto out;
	}
	while (waitpid(a, &st, 0) < 0) {
		if (errno != EINTR) {
			st = 1;
			break;
		}
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		r = pgn_ring_say(why, PGN_RING_FAILED, "could not start %s",
		    prog);
out:
	free(env);
	free(set);
	return r;
}
