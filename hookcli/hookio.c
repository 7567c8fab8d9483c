/*
 * pigeon-hook's I/O: argv, a bounded payload from stdin, the deadline
 * backstop, hook.log and the one write of the line the library's turn
 * built. SIGPIPE and SIGXFSZ never kill it; every exit is logged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "help.h"
#include "hookio.h"
#include "pigeon/hosts.h"

/* Record the first misuse; parsing goes on, to learn HOST and EVENT. */
static void misuse(struct hook_opts *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
misuse(struct hook_opts *o, const char *fmt, ...)
{
	va_list ap;

	if (o->why[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(o->why, sizeof(o->why), fmt, ap);
	va_end(ap);
}

int
hook_parse_args(struct hook_opts *o, int argc, char **argv, FILE *out)
{
	const char *pos[2];
	char names[HOOK_NAMES_MAX];
	int i, npos = 0;

	memset(o, 0, sizeof(*o));
	o->host = PGN_HOST_NONE;
	o->event = PGN_EVENT_NONE;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			cli_help_cmd(out, "pigeon-hook", &cli_hook_help);
			return 1;
		}
		if (strcmp(argv[i], "--version") == 0) {
			fprintf(out, "pigeon-hook %s\n", pgn_version());
			return 1;
		}
		if (strcmp(argv[i], "--agent") == 0) {
			if (i + 1 < argc)
				o->agent = argv[++i];
			else
				misuse(o, "%s needs a NAME", argv[i]);
			continue;
		}
		if (strncmp(argv[i], "--agent=", 8) == 0) {
			o->agent = argv[i] + 8;
			continue;
		}
		if (strcmp(argv[i], "--rewake") == 0) {
			o->rewake = 1;
			continue;
		}
		if (argv[i][0] == '-' || npos == 2) {
			misuse(o, "unexpected argument '%s'", argv[i]);
			continue;
		}
		pos[npos++] = argv[i];
	}
	if (npos == 1)
		misuse(o, "name both HOST and EVENT, or neither (%s)", pos[0]);
	if (npos == 2) {
		o->host = pgn_host_by_name(pos[0]);
		if (o->host != PGN_HOST_NONE &&
		    (PGN_MECH_HOOK &
		        PGN_MECH_BIT(pgn_host_get(o->host)->mechanism)) == 0)
			o->host = PGN_HOST_NONE; /* no hook runs for it */
		if (o->host == PGN_HOST_NONE) {
			pgn_host_names(PGN_MECH_HOOK, names, sizeof(names));
			misuse(o, "unknown host '%s': %s", pos[0], names);
		} else {
			o->event = pgn_event_by_name(o->host, pos[1]);
		}
		if (o->host != PGN_HOST_NONE && o->event == PGN_EVENT_NONE) {
			pgn_host_event_names(o->host, names, sizeof(names));
			misuse(o, "%s has no event '%s' Pigeon handles: %s",
			    pos[0], pos[1], names);
		}
	}
	if (o->rewake &&
	    (o->host == PGN_HOST_NONE || !pgn_host_get(o->host)->rewake ||
	        o->event != PGN_EVENT_STOP))
		misuse(o,
		    "--rewake is Claude Code's idle wake: claude Stop --rewake");
	return o->why[0] != '\0' ? -1 : 0;
}

/* ---- stdin ---------------------------------------------------------- */

struct scan {
	int started;
	int depth;
	int in_string;
	int escape;
};

/* Feed bytes; 1 when the first top-level object closed, -1 if not JSON. */
static int
scan_feed(struct scan *s, const char *p, size_t n, size_t *used)
{
	size_t i;
	char c;

	for (i = 0; i < n; i++) {
		c = p[i];
		if (!s->started) {
			if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
				continue;
			if (c != '{')
				return -1;
			s->started = 1;
			s->depth = 1;
			continue;
		}
		if (s->in_string) {
			if (s->escape)
				s->escape = 0;
			else if (c == '\\')
				s->escape = 1;
			else if (c == '"')
				s->in_string = 0;
			continue;
		}
		if (c == '"')
			s->in_string = 1;
		else if (c == '{' || c == '[')
			s->depth++;
		else if ((c == '}' || c == ']') && --s->depth == 0) {
			*used = i + 1;
			return 1;
		}
	}
	return 0;
}

pgn_status
hook_read_json(int fd, size_t max, long idle_ms, int64_t deadline, char **buf,
    size_t *len)
{
	struct scan s = {0};
	struct pollfd pfd;
	char *b = NULL, *nb;
	size_t n = 0, cap = 0, used = 0;
	ssize_t r;
	int64_t left;
	long wait;
	int done = 0;
	pgn_status rc = PGN_OK;

	*buf = NULL;
	*len = 0;
	while (!done) {
		left = deadline - pgn_mono_ms();
		wait = left < idle_ms ? (long)left : idle_ms;
		if (wait <= 0) {
			rc = PGN_EINVAL; /* idle or out of time */
			break;
		}
		pfd.fd = fd;
		pfd.events = POLLIN;
		r = poll(&pfd, 1, (int)wait);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = PGN_EIO;
			break;
		}
		if (r == 0) {
			rc = PGN_EINVAL;
			break;
		}
		if (n == cap) {
			if (cap >= max + 1) {
				rc = PGN_ETOOBIG;
				break;
			}
			cap = cap == 0 ? 4096 : cap * 2;
			if (cap > max + 1)
				cap = max + 1;
			nb = realloc(b, cap + 1);
			if (nb == NULL) {
				rc = PGN_ENOMEM;
				break;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0) {
			rc = PGN_EIO;
			break;
		}
		if (r == 0) {
			rc = PGN_EINVAL; /* EOF before a whole object */
			break;
		}
		switch (scan_feed(&s, b + n, (size_t)r, &used)) {
		case 1:
			n += used;
			done = 1;
			break;
		case -1:
			n += (size_t)r;
			rc = PGN_EINVAL;
			done = 1;
			break;
		default:
			n += (size_t)r;
			break;
		}
		if (!done && n > max) {
			rc = PGN_ETOOBIG;
			break;
		}
	}
	if (rc == PGN_OK && n > max)
		rc = PGN_ETOOBIG;
	if (b != NULL)
		b[n] = '\0';
	*buf = b;
	*len = n;
	return rc;
}

/* ---- log ------------------------------------------------------------ */

void
hook_log(const char *home, const char *fmt, ...)
{
	char line[HOOK_MAX_LOG_LINE], path[PGN_MAX_PATH], old[PGN_MAX_PATH],
	    at[32];
	struct stat sb;
	va_list ap;
	int fd, n, k;

	if (home == NULL)
		return;
	if (snprintf(path, sizeof(path), "%s/hook.log", home) >=
	    (int)sizeof(path))
		return;
	pgn_format_time(pgn_now_ms(), at, sizeof(at));
	n = snprintf(line, sizeof(line), "%s pid=%ld ", at, (long)getpid());
	if (n < 0 || n >= (int)sizeof(line))
		return;
	va_start(ap, fmt);
	k = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		return;
	n += k < (int)sizeof(line) - n - 1 ? k : (int)sizeof(line) - n - 2;
	line[n++] = '\n';
	/* Bounded: past the cap the log moves to hook.log.1. */
	if (stat(path, &sb) == 0 && sb.st_size > HOOK_MAX_LOG &&
	    snprintf(old, sizeof(old), "%s.1", path) < (int)sizeof(old))
		(void)rename(path, old);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* Nothing more to do: the log is best effort. */
	}
	close(fd);
}

/* ---- run ------------------------------------------------------------ */

/*
 * The deadline backstop (SIGALRM) prints the neutral output, logs a
 * line and exits — unless the run is already ending (it then prints
 * and logs itself: one line per exit), or the claim is committing (the
 * line that shows the messages must be written; it only notes that it
 * came late). Everything it uses is set up ahead, for a handler that
 * calls nothing but write, open and _exit.
 */
static char neutral_line[64];
static size_t neutral_len;
static char deadline_line[HOOK_MAX_LOG_LINE];
static size_t deadline_len;
static char log_path[PGN_MAX_PATH];
static volatile sig_atomic_t printed, committing, ending, late;

static void
on_deadline(int sig)
{
	int fd;

	(void)sig;
	if (committing) {
		late = 1;
		return;
	}
	if (ending)
		return; /* the run is past its last wait: it prints and logs */
	if (!printed && neutral_len > 0 &&
	    write(STDOUT_FILENO, neutral_line, neutral_len) < 0) {
		/* stdout gone: nothing left to do */
	}
	if (deadline_len > 0 && log_path[0] != '\0') {
		fd = open(log_path,
		    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
		if (fd >= 0) {
			if (write(fd, deadline_line, deadline_len) < 0) {
				/* best effort */
			}
			close(fd);
		}
	}
	_exit(HOOK_EXIT_OK);
}

/*
 * The output as it stood when the claim's commit was sent: if the
 * commit's outcome stays unknown (PGN_EIO after it; a PostgreSQL
 * connection lost and the server not reached, docs/decisions/0131), the
 * ids it shows are logged. Replaced if the transaction is retried.
 */
static char *held;
static size_t held_len;

static void
on_committing(void *arg)
{
	const struct pgn_hook_out *o = arg;

	committing = 1;
	free(held);
	held = NULL;
	held_len = 0;
	if (o != NULL && o->line != NULL && o->len > 0 &&
	    (held = malloc(o->len)) != NULL) {
		memcpy(held, o->line, o->len);
		held_len = o->len;
	}
}

/* A header of the rendered mail at 'p': "[#N from " or "[baton #N from ". */
static int
header_id(const char *p, const char *end, const char **id, size_t *n)
{
	static const char msg[] = "[#", baton[] = "[baton #";
	const char *q;

	if ((size_t)(end - p) > sizeof(baton) - 1 &&
	    memcmp(p, baton, sizeof(baton) - 1) == 0)
		p += sizeof(baton) - 1;
	else if ((size_t)(end - p) > sizeof(msg) - 1 &&
	    memcmp(p, msg, sizeof(msg) - 1) == 0)
		p += sizeof(msg) - 1;
	else
		return 0;
	for (q = p; q < end && *q >= '0' && *q <= '9'; q++)
		;
	if (q == p || end - q < 6 || memcmp(q, " from ", 6) != 0)
		return 0;
	*id = p;
	*n = (size_t)(q - p);
	return 1;
}

/*
 * The ids the held output shows, "12,13" ("-": none; ",..." ends a
 * list cut at 'cap'), into 'out'.
 * Headers start a line (a body's lines are indented); in an envelope
 * the lines are in JSON strings, whose escapes are read here: a "\n"
 * starts a line, an escaped backslash before an n does not.
 */
static void
held_ids(char *out, size_t cap)
{
	const char *p = held, *end = held + held_len, *id;
	size_t len = 0, n;
	int bol = 1, json = held_len > 0 && held[0] == '{', in_str = 0;
	int cut = 0;

	out[0] = '\0';
	while (p < end) {
		if (bol && (!json || in_str) && header_id(p, end, &id, &n)) {
			/* Room for ",N" and a closing ",..." (cap > 4). */
			if (!cut && len + n + 5 < cap) {
				if (len > 0)
					out[len++] = ',';
				memcpy(out + len, id, n);
				len += n;
			} else if (!cut) {
				memcpy(out + len, ",...", 4);
				len += 4;
				cut = 1;
			}
			out[len] = '\0';
			p = id + n;
		}
		bol = 0;
		if (json && *p == '"') {
			in_str = !in_str;
			bol = in_str;
		} else if (json && in_str && *p == '\\' && p + 1 < end) {
			p++;
			bol = *p == 'n';
		} else if (!json && *p == '\n') {
			bol = 1;
		}
		p++;
	}
	if (len == 0)
		(void)snprintf(out, cap, "-");
}

/*
 * What sets the two runs apart: a hook turn (its line to stdout, the
 * host's neutral output when there is none) or the idle wake (its mail
 * to stderr and exit HOOK_EXIT_WAKE, nothing otherwise).
 */
struct hook_mode {
	int rewake;              /* pgn_hook_rewake, logged as mode=rewake */
	int out_fd;              /* where the line goes */
	int exit_wrote;          /* the exit code once it is written */
	const char *out_fd_name; /* "stdout", "stderr": for lost-output */
};

/* One line of the library's grammar (pgn_hook_logf) into hook.log. */
#define HOOK_LOGF(home, ...)                                                   \
	do {                                                                   \
		char line_[HOOK_MAX_LOG_LINE];                                 \
		(void)pgn_hook_logf(line_, sizeof(line_), __VA_ARGS__);        \
		hook_log((home), "%s", line_);                                 \
	} while (0)

static const char *
mode_name(const struct hook_mode *m)
{
	return m->rewake ? "rewake" : NULL;
}

static long long
since(int64_t start)
{
	return (long long)(pgn_mono_ms() - start);
}

/*
 * After a claim whose commit was sent, a run ending with PGN_EIO: the
 * outcome is unknown, so what the output held is named in hook.log.
 */
static void
log_unsure(const char *home, const struct pgn_hook_out *out,
    const struct hook_mode *m, int64_t start)
{
	char ids[PGN_HOOK_IDS_TEXT];

	if (!committing || !out->unsure || held == NULL ||
	    out->host == PGN_HOST_NONE || out->event == PGN_EVENT_NONE)
		return;
	held_ids(ids, sizeof(ids));
	if (strcmp(ids, "-") == 0)
		return; /* no mail in it: nothing to name */
	HOOK_LOGF(home, out->host, out->event, mode_name(m), out->session,
	    "unsure", since(start),
	    "ids=%s: the claim's commit got no answer and the server could not be asked whether it took; if it did they were delivered unseen (pigeon audit shows them), else they stay queued",
	    ids);
}

/* The neutral output of host 'h', event 'e', for the backstop too. */
static void
set_neutral(pgn_host h, pgn_event e)
{
	pgn_status st;
	char *s;
	size_t n;

	neutral_len = 0;
	if (h == PGN_HOST_NONE || e == PGN_EVENT_NONE)
		return;
	s = pgn_envelope(h, e, NULL, &st);
	if (s == NULL)
		return;
	n = strlen(s);
	if (n + 1 < sizeof(neutral_line)) {
		memcpy(neutral_line, s, n);
		neutral_line[n] = '\n';
		neutral_len = n + 1;
	}
	free(s);
}

/* The line the backstop logs, with what is known so far. */
static void
set_deadline_line(pgn_host h, pgn_event e, const char *session, long total)
{
	char at[32];
	int n;
	size_t k;

	pgn_format_time(pgn_now_ms(), at, sizeof(at));
	n = snprintf(deadline_line, sizeof(deadline_line), "%s pid=%ld ", at,
	    (long)getpid());
	deadline_len = 0;
	if (n < 0 || (size_t)n >= sizeof(deadline_line))
		return;
	k = pgn_hook_logf(deadline_line + n, sizeof(deadline_line) - (size_t)n,
	    h, e, NULL, session, "deadline", total,
	    "gave up at the deadline: nothing was claimed");
	if ((size_t)n + k + 1 < sizeof(deadline_line)) {
		deadline_line[(size_t)n + k] = '\n';
		deadline_len = (size_t)n + k + 1;
	}
}

static void
arm_timer(long ms)
{
	struct sigaction sa;
	struct itimerval it;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_deadline;
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void
disarm_timer(void)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
}

static int
write_all(int fd, const char *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		r = write(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* This executable's path: the pigeon CLI is looked up beside it. */
static int
find_self(char *self, size_t cap)
{
	ssize_t n;

	n = readlink("/proc/self/exe", self, cap - 1);
	if (n <= 0)
		return 0;
	self[n] = '\0';
	return 1;
}

/* The log lines the turn returned. */
static void
log_turn(const char *home, const struct pgn_hook_out *out)
{
	size_t i;

	for (i = 0; i < out->nlog; i++)
		hook_log(home, "%s", out->log[i]);
}

/*
 * The start both modes share: the run's flags cleared, a closed stdout
 * and a file-size limit logged rather than fatal, and the state home
 * (made once, here) with hook.log's path. Returns the home, or NULL
 * (then nothing logs).
 */
static char *
hook_begin(void)
{
	struct pgn_err err;
	char *home = NULL;

	printed = 0;
	committing = 0;
	ending = 0;
	late = 0;
	free(held);
	held = NULL;
	held_len = 0;
	log_path[0] = '\0';
	signal(SIGPIPE, SIG_IGN); /* a closed stdout is logged, not fatal */
	signal(SIGXFSZ, SIG_IGN); /* so is a file-size limit */
	if (pgn_home_path(&home) == PGN_OK &&
	    pgn_home_ensure(home, &err) == PGN_OK &&
	    snprintf(log_path, sizeof(log_path), "%s/hook.log", home) >=
	        (int)sizeof(log_path))
		log_path[0] = '\0';
	if (log_path[0] == '\0') {
		free(home);
		home = NULL;
	}
	return home;
}

/*
 * The payload from 'in_fd' and the database path, into 'in' with the
 * fields both modes share; '*payload' and '*dbpath' are the caller's to
 * free. On failure it logs and ends the run: the caller prints its
 * neutral output.
 */
static pgn_status
hook_input(const struct hook_opts *o, const struct hook_mode *m, int in_fd,
    const char *home, int64_t start, long total, struct pgn_hook_in *in,
    char **payload, char **dbpath)
{
	pgn_event e = m->rewake ? o->event : PGN_EVENT_NONE;
	size_t len = 0;
	pgn_status st;

	st = hook_read_json(in_fd, HOOK_MAX_STDIN, HOOK_STDIN_IDLE_MS,
	    start + total, payload, &len);
	if (st != PGN_OK) {
		ending = 1;
		HOOK_LOGF(home, o->host, e, mode_name(m), NULL, "bad-input",
		    since(start), "%s",
		    st == PGN_ETOOBIG ? "payload over 1 MiB" :
		                        "no complete JSON object on stdin");
		return st;
	}
	/* The home is made already (hook_begin): not a second time. */
	st = pgn_db_path_in(home, dbpath);
	if (st != PGN_OK) {
		ending = 1;
		HOOK_LOGF(home, o->host, e, mode_name(m), NULL,
		    pgn_status_name(st), since(start), "no database path");
		return st;
	}
	memset(in, 0, sizeof(*in));
	in->payload = *payload;
	in->len = len;
	in->host = o->host;
	in->event = o->event;
	in->agent_env = getenv("PIGEON_AGENT");
	in->agent_arg = o->agent;
	in->home = home;
	in->db_path = *dbpath;
	in->deadline = start + total;
	in->may_wait = 1;
	in->committing = on_committing;
	return PGN_OK;
}

/* $CLAUDE_PID as a number, or 0. */
static long
host_pid(void)
{
	const char *s = getenv("CLAUDE_PID");
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno == 0 && *end == '\0' && v > 0 ? v : 0;
}

/*
 * The one run skeleton: backstop, input, the library's turn (or idle
 * wake), then one write and the log lines after it.
 */
static int
hook_main(const struct hook_opts *o, const struct hook_mode *m, int in_fd,
    const char *bad)
{
	struct pgn_hook_in in;
	struct pgn_hook_out out;
	char *home, *dbpath = NULL, *payload = NULL;
	char self[PATH_MAX];
	const char *named;
	int64_t start;
	long total, grace;
	int err, rc = HOOK_EXIT_OK;

	pgn_hook_out_reset(&out, o->host, o->event);
	start = pgn_mono_ms();
	total = o->deadline_ms > 0 ? o->deadline_ms : HOOK_DEADLINE_MS;
	grace = pgn_hook_grace_ms(o->event, m->rewake);
	if (m->rewake)
		neutral_len =
		    0; /* Claude reads only stderr and the exit code */
	else
		set_neutral(o->host, o->event);
	home = hook_begin();
	/* The idle wake's backstop logs the whole time it allows. */
	set_deadline_line(o->host, o->event, NULL,
	    m->rewake ? total + grace : total);
	if (!o->no_timer)
		arm_timer(total + grace);
	if (bad != NULL) {
		ending = 1;
		HOOK_LOGF(home, o->host, PGN_EVENT_NONE, mode_name(m), NULL,
		    "bad-args", 0, "%s", bad);
		goto neutral;
	}
	/* The waiter's token is random, before any database is open. */
	if (m->rewake && sodium_init() < 0) {
		ending = 1;
		HOOK_LOGF(home, o->host, o->event, mode_name(m), NULL, "io",
		    since(start), "libsodium failed to initialise");
		goto out;
	}
	if (hook_input(o, m, in_fd, home, start, total, &in, &payload,
	        &dbpath) != PGN_OK)
		goto neutral;
	in.arg = &out;
	if (m->rewake) {
		in.host_pid = host_pid();
		pgn_hook_rewake(&in, &out);
	} else {
		named = getenv("PIGEON_DB");
		in.db_create = named == NULL || *named == '\0';
		in.self = find_self(self, sizeof(self)) ? self : NULL;
		in.user_home = getenv("HOME");
		in.env_file = pgn_host_env_export();
		pgn_hook_turn(&in, &out);
	}
	/* From here the backstop neither prints nor logs: the deadline line
	 * is not needed again (decision 0154). */
	ending = 1;
	if (!m->rewake)
		set_neutral(out.host, out.event);
	if (out.line == NULL) {
		log_turn(home, &out);
		log_unsure(home, &out, m, start);
		goto neutral;
	}
	/* After the commit the one write comes first; the log after it. */
	printed = 1;
	if (write_all(m->out_fd, out.line, out.len) == 0) {
		rc = m->exit_wrote;
		log_turn(home, &out);
	} else {
		err = errno;
		log_turn(home, &out);
		if (out.claimed > 0 || m->rewake)
			HOOK_LOGF(home, out.host, out.event, mode_name(m),
			    out.session, "lost-output", since(start),
			    "ids=%s: %s failed after the claim (%s); pigeon audit shows them",
			    out.ids, m->out_fd_name, strerror(err));
		else /* an introduction alone (a session bound now) */
			HOOK_LOGF(home, out.host, out.event, mode_name(m),
			    out.session, "lost-output", since(start),
			    "ids=-: %s failed (%s); no message was claimed",
			    m->out_fd_name, strerror(err));
	}
	if (late)
		HOOK_LOGF(home, out.host, out.event, mode_name(m), out.session,
		    "late", since(start),
		    "the deadline passed while the claim committed; delivered");
	goto out;
neutral:
	printed = 1;
	if (neutral_len > 0 &&
	    write_all(m->out_fd, neutral_line, neutral_len) != 0) {
		/* stdout gone, and nothing was claimed: nothing is lost */
	}
out:
	if (!o->no_timer)
		disarm_timer();
	pgn_hook_out_release(&out);
	free(held);
	held = NULL;
	free(dbpath);
	free(payload);
	free(home);
	return rc;
}

int
hook_run(const struct hook_opts *o, int in_fd, int out_fd, const char *bad)
{
	const struct hook_mode m = {0, out_fd, HOOK_EXIT_OK, "stdout"};

	return hook_main(o, &m, in_fd, bad);
}

int
hook_rewake(const struct hook_opts *o, int in_fd, int err_fd)
{
	const struct hook_mode m = {1, err_fd, HOOK_EXIT_WAKE, "stderr"};

	return hook_main(o, &m, in_fd, NULL);
}
