/*
 * pigeon watch: a live view of the scope in the terminal (decision
 * 0125). The data is the library's (pgn_watch_read); this file draws it
 * on the alternate screen, redraws when the notifier, a key, a resize or
 * the one-second tick (for the ages) wakes poll(), and gives the
 * terminal back as it found it on every way out.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/lease.h"

#define WATCH_MIN_COLS  60 /* narrower: one line says so */
#define WATCH_MIN_ROWS  12
#define WATCH_MAX_COLS  400  /* wider terminals are drawn this wide */
#define WATCH_MAX_LINES 200  /* taller ones this tall */
#define WATCH_TICK_MS   1000 /* redraw at least this often: the ages */
#define WATCH_NOTE_MS   3000 /* how long a note stays on the screen */
/* One drawn line: every column a \xNN escape at worst, plus colour. */
#define WATCH_LINE_BYTES (WATCH_MAX_COLS * 4 + 64)

const struct cli_cmd cli_cmd_watch = {
    .name = "watch",
    .fn = cmd_watch,
    .summary = "a live view of the scope in the terminal",
    .synopsis = {"[--db PATH] [--project DIR] [--color WHEN]"},
    .text =
        "Show the scope live on the terminal's alternate screen: its agents with their hosts, state (new, active, mail, idle, idle+mail) and last seen, the queued messages, the newest deliveries (urgent and low ones marked, as inbox marks them), the open batons and the live leases (holder, pattern, mode, time left, reason). It redraws when the database changes (it sleeps on the database's -wal file, as pigeon wait does, and wakes at least once a second for the ages), when the terminal is resized, and after the database file is replaced. q or Ctrl-C quits and gives the terminal back as it was; so does SIGTERM or SIGHUP.\n\n"
        "It needs a terminal on standard input and output of at least 60 columns and 12 lines. A database named by --db or PIGEON_DB must exist; the default one is created if missing, as by the other commands. Text from messages is shown escaped, never raw.",
    .common = CLI_DB | CLI_PROJECT | CLI_COLOR,
};

static volatile sig_atomic_t quit_sig, resized, stopped;
static int wake_pipe[2] = {-1, -1};
static struct termios saved_tio;
static int tio_saved, screen_on;

static void
on_signal(int sig)
{
	int e = errno;

	if (sig == SIGWINCH)
		resized = 1;
	else if (sig == SIGTSTP)
		stopped = 1;
	else
		quit_sig = sig;
	if (wake_pipe[1] >= 0)
		(void)!write(wake_pipe[1], "x", 1);
	errno = e;
}

static void
out_str(const char *s)
{
	size_t n = strlen(s);
	ssize_t w;

	while (n > 0) {
		w = write(STDOUT_FILENO, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* Raw keys, no echo, the alternate screen, no cursor. */
static int
term_enter(void)
{
	struct termios t;

	if (!tio_saved) {
		if (tcgetattr(STDIN_FILENO, &saved_tio) != 0)
			return -1;
		tio_saved = 1;
	}
	t = saved_tio;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &t) != 0)
		return -1;
	out_str("\033[?1049h\033[?25l\033[H\033[2J");
	screen_on = 1;
	return 0;
}

/* The terminal as it was: safe to call on every path, twice. */
static void
term_leave(void)
{
	if (screen_on)
		out_str("\033[0m\033[?25h\033[?1049l");
	screen_on = 0;
	if (tio_saved)
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void
term_size(int *cols, int *rows)
{
	struct winsize ws;

	*cols = 0;
	*rows = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
		*cols = ws.ws_col;
		*rows = ws.ws_row;
	}
}

/* ---- drawing -------------------------------------------------------- */

struct screen {
	char *buf; /* the frame, written at once */
	size_t len, cap;
	int cols, rows, line; /* 'line': lines drawn so far */
	int used;             /* columns used on the current line */
};

static void
raw(struct screen *s, const char *p, size_t n)
{
	if (s->len + n + 1 > s->cap)
		return; /* cannot happen: cap fits every line at its widest */
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/*
 * Text on the current line, cut to the columns left: 't' was made safe
 * (cli_safe), so it is printable; a UTF-8 sequence counts one column
 * and is never cut.
 */
static void
text(struct screen *s, enum cli_sgr colour, const char *t)
{
	const char *p = t, *q;

	if (s->line >= s->rows)
		return;
	if (*cli_sgr(colour) != '\0')
		raw(s, cli_sgr(colour), strlen(cli_sgr(colour)));
	while (*p != '\0' && s->used < s->cols) {
		q = p + 1;
		while ((*q & 0xc0) == 0x80)
			q++;
		raw(s, p, (size_t)(q - p));
		s->used++;
		p = q;
	}
	if (*cli_sgr(colour) != '\0')
		raw(s, cli_sgr(CLI_SGR_RESET), strlen(cli_sgr(CLI_SGR_RESET)));
}

static void textf(struct screen *s, enum cli_sgr colour, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
textf(struct screen *s, enum cli_sgr colour, const char *fmt, ...)
{
	char line[WATCH_LINE_BYTES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	text(s, colour, line);
}

static void
endline(struct screen *s)
{
	if (s->line >= s->rows)
		return;
	raw(s, "\033[K", 3);
	s->line++;
	s->used = 0;
	if (s->line < s->rows)
		raw(s, "\r\n", 2);
}

static const char *
clock_of(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%H:%M:%S", &tm) == 0)
		snprintf(buf, len, "?");
	return buf;
}

/* A body on one line: escaped, newlines shown as \x0a. */
static const char *
preview(const char *body)
{
	return cli_safe(body);
}

static void
draw_agents(struct screen *s, const struct pgn_watch *w, int quota)
{
	const struct pgn_agent *a;
	char seen[32];
	size_t i;

	textf(s, CLI_SGR_BOLD, "AGENTS %zu", w->agents.n);
	endline(s);
	if (w->agents.n == 0) {
		text(s, CLI_SGR_DIM,
		    "  none yet: pigeon agent add NAME, or a host's first session");
		endline(s);
		return;
	}
	textf(s, CLI_SGR_DIM, "  %-24s %-16s %-10s %-10s %6s", "NAME", "HOSTS",
	    "STATE", "LAST SEEN", "QUEUED");
	endline(s);
	for (i = 0; i < w->agents.n && (int)i < quota - 2; i++) {
		a = &w->agents.v[i];
		if (a->last_seen_ms != 0)
			cli_age(a->last_seen_ms, w->read_ms, seen,
			    sizeof(seen));
		else
			snprintf(seen, sizeof(seen), "never");
		text(s, CLI_SGR_RESET, "  ");
		textf(s, CLI_SGR_NAME, "%-24s", cli_safe(a->name));
		textf(s, CLI_SGR_RESET, " %-16s ",
		    a->hosts != NULL && a->hosts[0] ? cli_safe(a->hosts) : "-");
		textf(s,
		    i < PGN_WATCH_MAX_AGENTS &&
		            w->state[i] == PGN_AGENT_ACTIVE ?
		        CLI_SGR_OK :
		        CLI_SGR_RESET,
		    "%-10s",
		    i < PGN_WATCH_MAX_AGENTS ?
		        pgn_agent_state_name(w->state[i]) :
		        "?");
		textf(s, CLI_SGR_RESET, " %-10s ", seen);
		textf(s, a->queued > 0 ? CLI_SGR_WARN : CLI_SGR_RESET, "%6lld",
		    (long long)a->queued);
		endline(s);
	}
	if (i < w->agents.n) {
		textf(s, CLI_SGR_DIM, "  ... and %zu more", w->agents.n - i);
		endline(s);
	}
}

/* A message's priority and group, as inbox marks them (decision 0158). */
static void
mark(struct screen *s, int priority, const char *group)
{
	if (priority != PGN_PRIORITY_NORMAL)
		textf(s,
		    priority == PGN_PRIORITY_URGENT ? CLI_SGR_WARN :
		                                      CLI_SGR_DIM,
		    ", %s", pgn_priority_name(priority));
	if (group != NULL)
		textf(s, CLI_SGR_DIM, ", to @%s", cli_safe(group));
}

static void
draw_queued(struct screen *s, const struct pgn_watch *w, int quota)
{
	const struct pgn_msg *m;
	char age[32];
	size_t i;

	textf(s, CLI_SGR_BOLD, "QUEUED %lld", (long long)w->queued_total);
	endline(s);
	for (i = 0; i < w->queued.n && (int)i < quota - 1; i++) {
		m = &w->queued.v[i];
		cli_age(m->created_ms, w->read_ms, age, sizeof(age));
		textf(s, CLI_SGR_RESET, "  #%lld ", (long long)m->id);
		textf(s, CLI_SGR_NAME, "%s", cli_safe(m->sender));
		text(s, CLI_SGR_RESET, " -> ");
		textf(s, CLI_SGR_NAME, "%s", cli_safe(m->recipient));
		textf(s, CLI_SGR_DIM, " %s", age);
		mark(s, m->priority, m->group);
		text(s, CLI_SGR_RESET, "  ");
		/* Its send rang the recipient's idle session (0177). */
		if (m->woken_ms != 0) {
			cli_age(m->woken_ms, w->read_ms, age, sizeof(age));
			if (w->read_ms - m->woken_ms > PGN_WAKE_HEARD_MS)
				textf(s, CLI_SGR_WARN, "rung %s, unheard  ",
				    age);
			else if (m->woken_via != NULL)
				textf(s, CLI_SGR_WARN, "woken %s by %s  ", age,
				    m->woken_via);
			else
				textf(s, CLI_SGR_WARN, "woken %s  ", age);
		}
		text(s, CLI_SGR_RESET, preview(m->body));
		endline(s);
	}
}

static void
draw_deliveries(struct screen *s, const struct pgn_watch *w, int quota)
{
	const struct pgn_delivery *d;
	char at[16];
	size_t i;

	text(s, CLI_SGR_BOLD, "DELIVERIES (newest first)");
	endline(s);
	if (w->deliveries.n == 0) {
		text(s, CLI_SGR_DIM, "  none yet");
		endline(s);
	}
	for (i = 0; i < w->deliveries.n && (int)i < quota - 1; i++) {
		d = &w->deliveries.v[i];
		textf(s, CLI_SGR_RESET, "  #%lld %s ", (long long)d->message_id,
		    clock_of(d->delivered_ms, at, sizeof(at)));
		textf(s, CLI_SGR_NAME, "%s", cli_safe(d->sender));
		text(s, CLI_SGR_RESET, " -> ");
		textf(s, CLI_SGR_NAME, "%s", cli_safe(d->recipient));
		textf(s, CLI_SGR_DIM, " via %s%s%s%s", cli_safe(d->route),
		    d->host[0] ? " (" : "", d->host[0] ? cli_safe(d->host) : "",
		    d->host[0] ? ")" : "");
		mark(s, d->priority, d->group);
		text(s, CLI_SGR_RESET, "  ");
		text(s, CLI_SGR_RESET, preview(d->body));
		endline(s);
	}
}

static void
draw_batons(struct screen *s, const struct pgn_watch *w, int quota)
{
	const struct pgn_watch_baton *b;
	char age[32];
	size_t i;

	textf(s, CLI_SGR_BOLD, "BATONS %lld", (long long)w->batons_total);
	endline(s);
	for (i = 0; i < w->nbatons && (int)i < quota - 1; i++) {
		b = &w->batons[i];
		cli_age(b->updated_ms, w->read_ms, age, sizeof(age));
		textf(s, CLI_SGR_RESET, "  #%lld from ", (long long)b->id);
		textf(s, CLI_SGR_NAME, "%s", cli_safe(b->senders));
		textf(s, CLI_SGR_RESET, " for %s",
		    b->target[0] ? cli_safe(b->target) : "the next session");
		textf(s, CLI_SGR_DIM, " %s%s  ", age,
		    b->expires_ms <= w->read_ms ? ", expired" : "");
		text(s, CLI_SGR_RESET, preview(b->body));
		endline(s);
	}
}

static void
draw_leases(struct screen *s, const struct pgn_watch *w, int quota)
{
	const struct pgn_lease *l;
	char left[32];
	size_t i;

	textf(s, CLI_SGR_BOLD, "LEASES %zu", w->nleases);
	endline(s);
	for (i = 0; i < w->nleases && (int)i < quota - 1; i++) {
		l = &w->leases[i];
		/* the time left, in the units of an age */
		pgn_format_age(w->read_ms - (l->expires_ms - w->read_ms),
		    w->read_ms, left, sizeof(left));
		if (strlen(left) >= 4)
			left[strlen(left) - 4] = '\0'; /* " ago" */
		text(s, CLI_SGR_RESET, "  ");
		textf(s, CLI_SGR_NAME, "%s", cli_safe(l->holder));
		textf(s, CLI_SGR_RESET, " %s", cli_safe(l->pattern));
		textf(s, CLI_SGR_DIM, " %s, %s left  ",
		    l->shared ? "shared" : "exclusive", left);
		text(s, CLI_SGR_RESET, cli_safe(l->reason));
		endline(s);
	}
}

/* One frame: the whole screen, from the top, in one write. */
static void
draw(struct screen *s, const struct pgn_watch *w, const char *scope,
    const char *note)
{
	char now[16];
	int body, quota;

	s->len = 0;
	s->line = 0;
	s->used = 0;
	raw(s, "\033[H", 3);
	if (s->cols < WATCH_MIN_COLS || s->rows < WATCH_MIN_ROWS) {
		/* short: it must fit the terminal it complains about */
		textf(s, CLI_SGR_WARN, "too small: %dx%d, need %dx%d", s->cols,
		    s->rows, WATCH_MIN_COLS, WATCH_MIN_ROWS);
		endline(s);
	} else {
		textf(s, CLI_SGR_BOLD, "pigeon watch  %s",
		    scope[0] ? cli_safe(scope) : "global");
		textf(s, CLI_SGR_DIM, "  %s  q quits",
		    clock_of(pgn_now_ms(), now, sizeof(now)));
		endline(s);
		text(s, CLI_SGR_WARN, note != NULL ? note : "");
		endline(s);
		/* five sections share the lines below the two above */
		body = s->rows - 2;
		quota = body / 5;
		draw_agents(s, w, body - 4 * quota);
		draw_queued(s, w, quota);
		draw_deliveries(s, w, quota);
		draw_batons(s, w, quota);
		draw_leases(s, w, quota);
	}
	raw(s, "\033[J", 3);
	s->buf[s->len] = '\0';
	out_str(s->buf);
}

/* ---- the loop ------------------------------------------------------- */

/*
 * The file at the database's path again, after it was replaced or
 * removed: 0, or -1 while there is none. No error line: the screen is
 * the terminal's, and the frame says it.
 */
static int
reopen(struct cli *c, struct pgn_notify **n)
{
	char *path = NULL;
	struct pgn_err err;
	int ok;

	pgn_notify_close(*n);
	*n = NULL;
	pgn_db_close(c->db);
	c->db = NULL;
	ok = pgn_db_path(c->db_flag, &path, &err) == PGN_OK &&
	    pgn_db_open(path, 0, PGN_BUSY_DEADLINE_MS, &c->db) == PGN_OK &&
	    pgn_db_set_scope(c->db, c->scope) == PGN_OK;
	free(path);
	if (!ok) {
		pgn_db_close(c->db);
		c->db = NULL;
		return -1;
	}
	if (pgn_notify_open(c->db, n) != PGN_OK)
		*n = NULL;
	return 0;
}

static void
catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: poll() wakes */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGTSTP, &sa, NULL);
}

/* Ctrl-Z: give the terminal back, stop, take it again on fg. */
static void
suspend(void)
{
	struct sigaction sa;

	term_leave();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTSTP, &sa, NULL);
	raise(SIGTSTP);
	catch_signals();
	(void)term_enter();
}

int
cmd_watch(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_watch};
	static char frame[WATCH_MAX_LINES * WATCH_LINE_BYTES + 16];
	struct screen s = {.buf = frame, .cap = sizeof(frame)};
	struct pgn_watch w;
	struct pgn_notify *n = NULL;
	struct pollfd p[3];
	const char *note = NULL, *env;
	char key[64], why[PGN_MAX_ERRMSG + 64];
	int64_t note_until = 0;
	int code, np, i, quit = 0, gone = 0, failed = 0;
	pgn_status st;
	ssize_t k;

	memset(&w, 0, sizeof(w));
	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	/*
	 * The database first: a missing one is named before the terminal.
	 * One named by --db or PIGEON_DB must exist (a typo makes no stray
	 * file); the default one is made as by any command, so a live view
	 * opens before the first session or send (decision 0244).
	 */
	env = getenv("PIGEON_DB");
	c.existing = c.db_flag != NULL || (env != NULL && *env != '\0');
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		code = cli_usage(&c,
		    "watch draws on a terminal: run it with standard input and output on one (not a pipe or a file)");
		goto out;
	}
	term_size(&s.cols, &s.rows);
	if (s.cols < WATCH_MIN_COLS || s.rows < WATCH_MIN_ROWS) {
		code = cli_err(EXIT_FAIL,
		    "the terminal is %dx%d: watch needs at least %dx%d; make it larger",
		    s.cols, s.rows, WATCH_MIN_COLS, WATCH_MIN_ROWS);
		goto out;
	}
	if (pipe(wake_pipe) != 0 ||
	    fcntl(wake_pipe[0], F_SETFL, O_NONBLOCK) != 0 ||
	    fcntl(wake_pipe[1], F_SETFL, O_NONBLOCK) != 0) {
		code = cli_err(EXIT_FAIL, "cannot make a pipe: %s",
		    strerror(errno));
		goto out;
	}
	if (pgn_notify_open(c.db, &n) != PGN_OK)
		n = NULL; /* the one-second tick still redraws */
	catch_signals();
	if (term_enter() != 0) {
		code = cli_err(EXIT_FAIL, "cannot set up the terminal: %s",
		    strerror(errno));
		goto out;
	}
	while (!quit) {
		if (c.db == NULL || pgn_db_check_file(c.db) != PGN_OK) {
			/* replaced or removed: follow the file at the path */
			gone = reopen(&c, &n) != 0;
			note = gone ?
			    "the database file is gone: waiting for it to come back" :
			    "the database file was replaced: showing the new one";
			note_until = pgn_mono_ms() + WATCH_NOTE_MS;
		}
		if (!gone) {
			pgn_watch_release(&w);
			st = pgn_watch_read(c.db,
			    (size_t)(s.rows < PGN_WATCH_MAX_ROWS ?
			            s.rows :
			            PGN_WATCH_MAX_ROWS),
			    &w);
			if (st != PGN_OK) {
				snprintf(why, sizeof(why), "cannot read: %s",
				    cli_safe(cli_errmsg(c.db)));
				note = why;
				note_until = pgn_mono_ms() + WATCH_NOTE_MS;
			}
		}
		if (resized) {
			resized = 0;
			out_str("\033[2J");
		}
		term_size(&s.cols, &s.rows);
		if (s.cols > WATCH_MAX_COLS)
			s.cols = WATCH_MAX_COLS;
		if (s.rows > WATCH_MAX_LINES)
			s.rows = WATCH_MAX_LINES;
		draw(&s, &w, c.db != NULL ? pgn_db_scope(c.db) : c.scope, note);
		np = 0;
		p[np].fd = STDIN_FILENO;
		p[np++].events = POLLIN;
		p[np].fd = wake_pipe[0];
		p[np++].events = POLLIN;
		if (pgn_notify_fd(n) >= 0) {
			p[np].fd = pgn_notify_fd(n);
			p[np++].events = POLLIN;
		}
		for (i = 0; i < np; i++)
			p[i].revents = 0;
		if (poll(p, (nfds_t)np, WATCH_TICK_MS) < 0 && errno != EINTR) {
			failed = errno;
			break;
		}
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			break; /* the terminal went away (ssh dropped) */
		if (p[0].revents & POLLIN) {
			k = read(STDIN_FILENO, key, sizeof(key));
			for (i = 0; i < k; i++)
				if (key[i] == 'q' || key[i] == 'Q')
					quit = 1;
		}
		if (p[1].revents & POLLIN)
			while (read(wake_pipe[0], key, sizeof(key)) > 0)
				;
		if (np > 2 && (p[2].revents & POLLIN))
			pgn_notify_drain(n);
		if (stopped) {
			stopped = 0;
			suspend();
			resized = 1;
		}
		if (quit_sig != 0)
			quit = 1;
		if (note != NULL && !gone && pgn_mono_ms() >= note_until)
			note = NULL;
	}
	term_leave();
	if (failed != 0)
		code = cli_err(EXIT_FAIL, "watch stopped: poll: %s",
		    strerror(failed));
	else
		code = cli_finish(quit_sig == 0 || quit_sig == SIGINT ?
		        EXIT_OK :
		        128 + quit_sig);
out:
	term_leave();
	pgn_watch_release(&w);
	pgn_notify_close(n);
	if (wake_pipe[0] >= 0) {
		close(wake_pipe[0]);
		close(wake_pipe[1]);
		wake_pipe[0] = wake_pipe[1] = -1;
	}
	cli_close(&c);
	return code;
}
