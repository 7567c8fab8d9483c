/*
 * Claude Code's idle wake: an asyncRewake Stop hook that, once the turn
 * has ended, waits for mail for the session's agent (as pgn_wait does:
 * asleep on the database's -wal file, no busy loop) and claims it as a
 * stop does, for the host to start a new turn with it (exit 2, text on
 * stderr: the caller's part). One waiter per session: each writes its
 * token into a file under the state home, and the newest token wins; an
 * older waiter sees the file change and ends, claiming nothing. The file
 * stays after its waiter (with the last token); stale ones are swept. The host
 * must still be there ($CLAUDE_PID, the same process) when it claims.
 * docs/decisions/0081.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pgn_int.h"
#include "render.h"
#include "pigeon/setup.h"
#include "claim.h"

#define REWAKE_DIR   "rewake" /* under the state home */
#define TOKEN_NONCE  16       /* random bytes of a token */
#define TOKEN_NAME   16       /* hash bytes of a session key: the file name */
#define PROC_STAT    1024     /* bytes of /proc/PID/stat read */
#define STARTTIME_AT 22       /* its field: the start time, in ticks */

struct rewake {
	const struct pgn_hook_in *in;
	struct pgn_hook_out *o;
	int64_t start;
	struct pgn_payload p;
	pgn_db *db;
	struct pgn_peek peek;
	struct pgn_config cfg;
	char *project; /* the config's directory, when the scope is a key */
	char *dir;     /* <home>/rewake */
	char *path;    /* the session's token file */
	char token[PGN_HOOK_REWAKE_TOKEN];
	long long host_born; /* the host's start time, -1 unknown */
	const char *why;     /* why it stopped waiting, for the log */
};

/* One log line, as the turn writes them (turn.c). */
static void logf_rw(struct rewake *w, const char *status, const char *fmt, ...)
    PGN_PRINTF(3, 4);

static void
logf_rw(struct rewake *w, const char *status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pgn_hook_vlog(w->o, "rewake", w->start, status, fmt, ap);
	va_end(ap);
}

/* ---- the host ------------------------------------------------------- */

/*
 * Start time of process 'pid' (field 22 of /proc/PID/stat), or -1; -2
 * for a zombie (it has ended, its parent has not reaped it yet).
 */
static long long
proc_born(long pid)
{
	char path[64], buf[PROC_STAT], *p, *end;
	long long v;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command name may hold anything: fields count after its ')'. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return -1;
	if (p[1] == ' ' && p[2] == 'Z')
		return -2;
	for (field = 2; field < STARTTIME_AT && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL)
		return -1;
	errno = 0;
	v = strtoll(p + 1, &end, 10);
	if (errno != 0 || end == p + 1)
		return -1;
	return v;
}

/* The host process is there, and the same one it was at the start. */
static int
host_alive(struct rewake *w)
{
	long pid = w->in->host_pid;

	long long born;

	if (pid <= 0 || (kill((pid_t)pid, 0) != 0 && errno != EPERM))
		return 0;
	born = proc_born(pid);
	if (born == -2)
		return 0;
	return w->host_born < 0 || born == w->host_born;
}

/*
 * Does host 'pid' run its Stop hooks in the foreground? Claude does in a
 * plain `claude -p` (print mode without --input-format stream-json),
 * where an asyncRewake entry is an ordinary blocking Stop hook
 * (decision 0076): waiting there would hold the run's end. Read from its
 * command line; unreadable: no (the wait is bounded all the same).
 */
static int
host_in_foreground(long pid)
{
	char path[64], buf[PGN_HOOK_REWAKE_CMDLINE];
	const char *a, *end, *prev = "";
	int print = 0, stream = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	end = buf + n;
	for (a = buf; a < end; prev = a, a += strlen(a) + 1) {
		if (strcmp(a, "--") == 0)
			break; /* the prompt follows */
		if (strcmp(a, "-p") == 0 || strcmp(a, "--print") == 0)
			print = 1;
		if (strcmp(a, "--input-format=stream-json") == 0 ||
		    (strcmp(a, "stream-json") == 0 &&
		        strcmp(prev, "--input-format") == 0))
			stream = 1;
	}
	return print && !stream;
}

/* ---- the token ------------------------------------------------------ */

/* <home>/rewake/<hash of the session key>, and the directory. */
static pgn_status
token_paths(struct rewake *w)
{
	unsigned char h[TOKEN_NAME];
	char hex[TOKEN_NAME * 2 + 1];
	struct pgn_buf b;

	w->dir = pgn_path_join(w->in->home, REWAKE_DIR);
	if (w->dir == NULL)
		return PGN_ENOMEM;
	crypto_generichash(h, sizeof(h), (const unsigned char *)w->p.session,
	    strlen(w->p.session), NULL, 0);
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	pgn_buf_init(&b, PGN_MAX_PATH);
	pgn_buf_addf(&b, "%s/%s", w->dir, hex);
	w->path = pgn_buf_take(&b, NULL);
	pgn_buf_release(&b);
	return w->path != NULL ? PGN_OK : PGN_ETOOBIG;
}

/* The token in the file now ("" when there is none). */
static void
token_read(const struct rewake *w, char *out, size_t max)
{
	ssize_t n;
	int fd;

	out[0] = '\0';
	fd = open(w->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	n = read(fd, out, max - 1);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
}

/*
 * Token files outlive their waiters (the last one's token stays: removing
 * it would race a newer waiter's rename); one older than the entry's
 * timeout has no waiter left, since Claude ends a hook by then. Each new
 * waiter removes those, at most PGN_HOOK_REWAKE_SWEEP of them.
 */
static void
token_sweep(const struct rewake *w)
{
	struct dirent *de;
	struct stat sb;
	time_t old = time(NULL) - PGN_REWAKE_TIMEOUT_S - 60;
	size_t seen = 0;
	DIR *d;
	int fd;

	d = opendir(w->dir);
	if (d == NULL)
		return;
	fd = dirfd(d);
	while (seen < PGN_HOOK_REWAKE_SWEEP && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		seen++;
		if (fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && sb.st_mtime < old)
			(void)unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
}

/*
 * Become the session's newest waiter: a fresh token written beside the
 * file and renamed over it (no fsync: it need not outlive a crash, only
 * order the waiters that run).
 */
static pgn_status
token_write(struct rewake *w, char *why, size_t whylen)
{
	unsigned char nonce[TOKEN_NONCE];
	char hex[TOKEN_NONCE * 2 + 1];
	struct pgn_buf tmp;
	char *tp = NULL;
	size_t len;
	pgn_status rc = PGN_OK;
	int fd = -1;

	randombytes_buf(nonce, sizeof(nonce));
	sodium_bin2hex(hex, sizeof(hex), nonce, sizeof(nonce));
	snprintf(w->token, sizeof(w->token), "%ld %s\n", (long)getpid(), hex);
	len = strlen(w->token);
	if (mkdir(w->dir, 0700) != 0 && errno != EEXIST) {
		pgn_errf(why, whylen, "cannot create %s: %s", w->dir,
		    strerror(errno));
		return PGN_EIO;
	}
	pgn_buf_init(&tmp, PGN_MAX_PATH + 32);
	pgn_buf_addf(&tmp, "%s.%ld.tmp", w->path, (long)getpid());
	tp = pgn_buf_take(&tmp, NULL);
	pgn_buf_release(&tmp);
	if (tp == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	fd = open(tp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd < 0 || write(fd, w->token, len) != (ssize_t)len) {
		pgn_errf(why, whylen, "cannot write %s: %s", tp,
		    strerror(errno));
		rc = PGN_EIO;
		goto out;
	}
	close(fd);
	fd = -1;
	if (rename(tp, w->path) != 0) {
		pgn_errf(why, whylen, "cannot rename %s: %s", tp,
		    strerror(errno));
		rc = PGN_EIO;
		goto out;
	}
	token_sweep(w);
out:
	if (fd >= 0)
		close(fd);
	if (rc != PGN_OK && tp != NULL)
		(void)unlink(tp);
	free(tp);
	return rc;
}

/* A newer waiter wrote its token (a missing file supersedes nobody). */
static int
superseded(const struct rewake *w)
{
	char now[PGN_HOOK_REWAKE_TOKEN];

	token_read(w, now, sizeof(now));
	return now[0] != '\0' && strcmp(now, w->token) != 0;
}

/* pgn_hook_in.still and pgn_wait.cancel: may this waiter claim? */
static int
still(void *arg)
{
	struct rewake *w = arg;

	if (superseded(w)) {
		w->why = "superseded";
		return 0;
	}
	if (!host_alive(w)) {
		w->why = "host-gone";
		return 0;
	}
	return 1;
}

static int
cancel(void *arg)
{
	return !still(arg);
}

/* ---- the run -------------------------------------------------------- */

/*
 * Everything before the wait: the payload, a bound session of a live
 * host, its config; 1 to wait, 0 to end here (logged).
 */
static int
prepare(struct rewake *w)
{
	const struct pgn_hook_in *in = w->in;
	char why[PGN_MAX_ERRMSG];
	const char *project;
	pgn_status st;

	why[0] = '\0';
	st = pgn_payload_parse(in->payload, in->len, in->host, in->event, &w->p,
	    why, sizeof(why));
	w->o->host = w->p.host;
	w->o->event = w->p.event;
	if (st != PGN_OK) {
		w->o->st = st;
		logf_rw(w, "bad-input", "%s", why);
		return 0;
	}
	if (w->p.host == PGN_HOST_NONE || !pgn_host_get(w->p.host)->rewake ||
	    w->p.event != PGN_EVENT_STOP) {
		w->o->st = PGN_EINVAL;
		logf_rw(w, "bad-args",
		    "the idle wake (--rewake) is for Claude Code's Stop only");
		return 0;
	}
	if (w->p.skip || w->p.ignore || w->p.subagent)
		return 0;
	memcpy(w->o->session, w->p.session, sizeof(w->o->session));
	if (in->home == NULL || in->host_pid <= 0) {
		w->o->st = PGN_EINVAL;
		logf_rw(w, "bad-env", "%s",
		    in->home == NULL ?
		        "no state directory for the waiter's token" :
		        "no CLAUDE_PID: not run by Claude Code, nothing to wake");
		return 0;
	}
	w->host_born = proc_born(in->host_pid);
	if (!host_alive(w)) {
		logf_rw(w, "host-gone", "pid=%ld", in->host_pid);
		return 0;
	}
	if (host_in_foreground(in->host_pid)) {
		logf_rw(w, "foreground",
		    "claude -p runs the idle wake as a blocking Stop hook (no --input-format stream-json): not waiting");
		return 0;
	}
	/* The session's agent exists by now: a new database is no use. */
	st = pgn_db_open(in->db_path, PGN_OPEN_LATENCY,
	    PGN_HOOK_REWAKE_CLAIM_MS, &w->db);
	if (st == PGN_OK)
		st = pgn_turn_peek(w->db, w->p.session, &w->peek);
	if (st == PGN_OK && w->peek.bound)
		st = pgn_db_set_scope(w->db, w->peek.scope);
	if (st != PGN_OK) {
		w->o->st = st;
		logf_rw(w, pgn_status_name(st), "%s",
		    w->db != NULL ? pgn_errmsg(w->db) : "out of memory");
		return 0;
	}
	if (!w->peek.bound) {
		logf_rw(w, "unbound", "the session has no agent yet");
		return 0;
	}
	memcpy(w->o->agent, w->peek.agent, sizeof(w->o->agent));
	/*
	 * The newest Stop's waiter supersedes the older ones first, even if
	 * it then does not wait itself (off, governed).
	 */
	st = token_paths(w);
	if (st == PGN_OK)
		st = token_write(w, why, sizeof(why));
	if (st != PGN_OK) {
		w->o->st = st;
		logf_rw(w, pgn_status_name(st), "%s",
		    why[0] ? why : "no token path");
		return 0;
	}
	/*
	 * On a store several machines share, the scope is a key, no
	 * directory: the config is found from the payload's (as turn.c).
	 */
	project = w->peek.scope;
	if (project[0] != '\0' && project[0] != '/') {
		st = pgn_scope_find(w->p.dir, &w->project);
		project = st == PGN_OK ? w->project : "";
	}
	if (pgn_config_load(project, &w->cfg) != PGN_OK) {
		memset(&w->cfg, 0, sizeof(w->cfg));
		w->cfg.max_auto_continues = PGN_AUTO_CONTINUES_DEFAULT;
		w->cfg.rewake_wait_s = PGN_REWAKE_WAIT_S_DEFAULT;
	}
	if (w->cfg.reach_problem != NULL)
		logf_rw(w, "config", "%s", w->cfg.reach_problem);
	if (w->cfg.rewake_wait_s <= 0) {
		logf_rw(w, "off", "reach.rewakeWaitS is 0");
		return 0;
	}
	/* Past the cap nothing would be claimed: no use waiting. */
	if (w->peek.continues >= w->cfg.max_auto_continues) {
		w->o->governed = 1;
		logf_rw(w, "governed",
		    "agent=%s: %lld continuations in a row, the cap; the mail waits for the next prompt",
		    w->peek.agent, (long long)w->peek.continues);
		return 0;
	}
	return 1;
}

/* Wait until mail is queued, the wait is over, or this waiter is not. */
static pgn_status
wait_mail(struct rewake *w, int64_t until, int *found)
{
	struct pgn_wait rq;
	struct pgn_msgs none;
	pgn_status st;

	*found = 0;
	memset(&rq, 0, sizeof(rq));
	rq.claim.agent = w->peek.agent;
	rq.claim.route = "stop";
	rq.timeout_ms = until - pgn_mono_ms();
	if (rq.timeout_ms < 1)
		return PGN_OK;
	rq.cancel = cancel;
	rq.cancel_arg = w;
	rq.watch_dir = w->dir;
	rq.look_only = 1;
	st = pgn_wait(w->db, &rq, &none);
	pgn_msgs_release(&none);
	*found = rq.found;
	return st;
}

/* The claim, as a stop's turn does it, with the checks inside. */
static void
claim(struct rewake *w)
{
	char mine[PGN_HOOK_MAX_LOG][PGN_HOOK_LOG_LINE];
	char theirs[PGN_HOOK_MAX_LOG][PGN_HOOK_LOG_LINE];
	struct pgn_hook_in in = *w->in;
	struct pgn_hook_out *o = w->o;
	size_t i, nmine = o->nlog, ntheirs;

	memcpy(mine, o->log, nmine * sizeof(o->log[0]));
	in.deadline = pgn_mono_ms() + PGN_HOOK_REWAKE_CLAIM_MS;
	in.wait_until = 0;
	in.may_wait = 0;
	in.db_create = 0;
	in.plain = 1;
	in.still = still;
	in.still_arg = w;
	pgn_hook_turn(&in, o);
	/* The wait's lines first, then the claim's, within the cap. */
	ntheirs = o->nlog;
	memcpy(theirs, o->log, ntheirs * sizeof(o->log[0]));
	memcpy(o->log, mine, nmine * sizeof(o->log[0]));
	o->nlog = nmine;
	for (i = 0; i < ntheirs && o->nlog < PGN_HOOK_MAX_LOG; i++)
		memcpy(o->log[o->nlog++], theirs[i], sizeof(o->log[0]));
}

/* Why a waiter ends with nothing claimed. */
static void
gave_up(struct rewake *w)
{
	const char *agent = w->peek.agent;

	if (w->why == NULL)
		logf_rw(w, "idle", "agent=%s: no mail for it in %lld s", agent,
		    (long long)((pgn_mono_ms() - w->start) / 1000));
	else if (strcmp(w->why, "superseded") == 0)
		logf_rw(w, w->why,
		    "agent=%s: a newer Stop's waiter took over; nothing claimed",
		    agent);
	else
		logf_rw(w, w->why,
		    "agent=%s: the host (pid %ld) is gone; nothing claimed",
		    agent, w->in->host_pid);
}

static void
run(struct rewake *w)
{
	int64_t until, cap;
	pgn_status st;
	int found;

	if (!prepare(w))
		return;
	until = w->start + (int64_t)w->cfg.rewake_wait_s * 1000;
	cap = pgn_hook_wait_until(w->in, 1);
	if (cap != 0 && until > cap)
		until = cap;
	for (;;) {
		st = wait_mail(w, until, &found);
		if (st != PGN_OK) {
			w->o->st = st;
			logf_rw(w, pgn_status_name(st), "%s",
			    pgn_errmsg(w->db));
			return;
		}
		if (!found) {
			gave_up(w);
			return;
		}
		w->why = NULL;
		claim(w);
		/* Claimed, or an error, or past the cap: the run ends. */
		if (w->o->line != NULL)
			logf_rw(w, "woken",
			    "agent=%s delivered=%zu ids=%s after waiting",
			    w->peek.agent, w->o->claimed, w->o->ids);
		if (w->o->line != NULL || w->o->st != PGN_OK ||
		    w->o->governed || w->o->stale) {
			if (w->o->stale)
				gave_up(w);
			return;
		}
		/* Another claimer took it first: wait on. */
		if (pgn_mono_ms() >= until)
			return;
	}
}

void
pgn_hook_rewake(const struct pgn_hook_in *in, struct pgn_hook_out *o)
{
	struct rewake w;

	pgn_hook_out_reset(o, in->host, in->event);
	memset(&w, 0, sizeof(w));
	w.in = in;
	w.o = o;
	w.start = pgn_mono_ms();
	w.host_born = -1;
	run(&w);
	o->unsure = o->st != PGN_OK && pgn_db_outcome_unknown(w.db);
	if (o->line == NULL) {
		o->len = 0;
		o->claimed = 0;
	}
	pgn_config_release(&w.cfg);
	pgn_db_close(w.db);
	free(w.path);
	free(w.dir);
	free(w.project);
	pgn_payload_release(&w.p);
}
