/*
 * pigeon-hook's logic: read a bounded payload, settle host, event,
 * session and scope, claim the turn's messages in one transaction, and
 * print exactly one envelope — or, on any failure, the neutral output.
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

#include <cjson/cJSON.h>
#include <sodium.h>

#include "hook.h"

static const char usage[] =
    "usage: pigeon-hook [HOST EVENT] [--agent NAME]\n\n"
    "Run by an AI coding host on session start and on every prompt: reads\n"
    "the host's JSON payload on stdin, claims the agent's queued messages\n"
    "and prints them in the host's envelope on stdout. Always exits 0; a\n"
    "failure prints the neutral output and is logged to "
    "$PIGEON_HOME/hook.log.\n\n"
    "  HOST EVENT     cursor sessionStart | cursor beforeSubmitPrompt\n"
    "                 claude SessionStart | claude UserPromptSubmit\n"
    "                 codex SessionStart  | codex UserPromptSubmit\n"
    "                 gemini SessionStart | gemini BeforeAgent\n"
    "                 (none: detected from the payload)\n"
    "  --agent NAME   the agent a new session binds to, unless PIGEON_AGENT\n"
    "                 names one (default: a generated name)\n";

int
hook_parse_args(struct hook_opts *o, int argc, char **argv, FILE *out,
    FILE *err)
{
	const char *pos[2];
	int i, npos = 0;

	memset(o, 0, sizeof(*o));
	o->host = PGN_HOST_NONE;
	o->event = PGN_EVENT_NONE;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			fputs(usage, out);
			return 1;
		}
		if (strcmp(argv[i], "--agent") == 0 && i + 1 < argc) {
			o->agent = argv[++i];
			continue;
		}
		if (strncmp(argv[i], "--agent=", 8) == 0) {
			o->agent = argv[i] + 8;
			continue;
		}
		if (argv[i][0] == '-' || npos == 2) {
			fprintf(err,
			    "pigeon-hook: unexpected argument '%s'; "
			    "see pigeon-hook --help\n",
			    argv[i]);
			return -1;
		}
		pos[npos++] = argv[i];
	}
	if (npos == 1) {
		fprintf(err,
		    "pigeon-hook: name both HOST and EVENT, or "
		    "neither; see pigeon-hook --help\n");
		return -1;
	}
	if (npos == 2) {
		o->host = pgn_host_by_name(pos[0]);
		if (o->host == PGN_HOST_NONE) {
			fprintf(err,
			    "pigeon-hook: unknown host '%s': cursor, "
			    "claude, codex or gemini\n",
			    pos[0]);
			return -1;
		}
		o->event = pgn_event_by_name(o->host, pos[1]);
		if (o->event == PGN_EVENT_NONE) {
			fprintf(err,
			    "pigeon-hook: %s has no event '%s' Pigeon "
			    "handles: %s or %s\n",
			    pos[0], pos[1], pgn_host_get(o->host)->events[0],
			    pgn_host_get(o->host)->events[1]);
			return -1;
		}
	}
	return 0;
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

/* ---- payload -------------------------------------------------------- */

void
hook_input_release(struct hook_input *in)
{
	if (in == NULL)
		return;
	free(in->dir);
	in->dir = NULL;
	free(in->prompt);
	in->prompt = NULL;
}

pgn_host
hook_detect_host(const char *event, int cursor_version, int timestamp,
    int turn_id, int model, int permission_mode)
{
	if (cursor_version ||
	    (event != NULL &&
	        pgn_event_by_name(PGN_HOST_CURSOR, event) != PGN_EVENT_NONE))
		return PGN_HOST_CURSOR;
	if (event != NULL &&
	    (strcmp(event, "BeforeAgent") == 0 ||
	        (timestamp && strcmp(event, "SessionStart") == 0)))
		return PGN_HOST_GEMINI;
	if (turn_id || (model && permission_mode))
		return PGN_HOST_CODEX;
	return PGN_HOST_CLAUDE;
}

/* A string field, or NULL when absent, not a string, or empty. */
static const char *
field(const cJSON *root, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);

	if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
		return NULL;
	return v->valuestring;
}

static int
id_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > HOOK_MAX_ID)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int
depth_ok(const cJSON *v, int depth)
{
	const cJSON *c;

	if (depth > HOOK_MAX_DEPTH)
		return 0;
	for (c = v->child; c != NULL; c = c->next)
		if (!depth_ok(c, depth + 1))
			return 0;
	return 1;
}

pgn_status
hook_parse_payload(const char *buf, size_t len, const struct hook_opts *o,
    struct hook_input *in, char *why, size_t whylen)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char h[12];
	const cJSON *roots;
	const char *event, *sid, *turn = NULL, *dir;
	const struct pgn_host_info *hi;
	cJSON *root;
	size_t i, k;
	pgn_status rc = PGN_EINVAL;
	int cursor;

	memset(in, 0, sizeof(*in));
	in->host = PGN_HOST_NONE;
	in->event = PGN_EVENT_NONE;
	root = cJSON_ParseWithLengthOpts(buf, len, NULL, 0);
	if (root == NULL || !cJSON_IsObject(root)) {
		snprintf(why, whylen, "payload is not a JSON object");
		goto out;
	}
	if (!depth_ok(root, 0)) {
		snprintf(why, whylen, "payload nests deeper than %d",
		    HOOK_MAX_DEPTH);
		goto out;
	}
	event = field(root, "hook_event_name");
	cursor = field(root, "cursor_version") != NULL;
	in->host = o->host != PGN_HOST_NONE ?
	    o->host :
	    hook_detect_host(event, cursor, field(root, "timestamp") != NULL,
	        field(root, "turn_id") != NULL, field(root, "model") != NULL,
	        field(root, "permission_mode") != NULL);
	/* Cursor replays Claude's project hooks with its own payload. */
	if (in->host == PGN_HOST_CLAUDE && cursor) {
		in->skip = 1;
		rc = PGN_OK;
		goto out;
	}
	in->event = o->event != PGN_EVENT_NONE ?
	    o->event :
	    pgn_event_by_name(in->host, event);
	if (in->event == PGN_EVENT_NONE) {
		in->ignore = 1;
		rc = PGN_OK;
		goto out;
	}
	hi = pgn_host_get(in->host);
	if (in->host == PGN_HOST_CURSOR) {
		sid = field(root, "conversation_id");
		if (sid == NULL)
			sid = field(root, "session_id");
		/* Cloud conversations carry a "bc-" prefix. */
		if (sid != NULL && strncmp(sid, "bc-", 3) == 0 && sid[3])
			sid += 3;
		roots =
		    cJSON_GetObjectItemCaseSensitive(root, "workspace_roots");
		dir = cJSON_IsArray(roots) &&
		        cJSON_IsString(cJSON_GetArrayItem(roots, 0)) ?
		    cJSON_GetArrayItem(roots, 0)->valuestring :
		    NULL;
		if (in->event == PGN_EVENT_PROMPT)
			turn = field(root, "generation_id");
	} else {
		sid = field(root, "session_id");
		dir = field(root, "cwd");
		if (in->host == PGN_HOST_CLAUDE)
			turn = field(root, "prompt_id");
		else if (in->host == PGN_HOST_CODEX)
			turn = field(root, "turn_id");
	}
	if (sid == NULL || !id_ok(sid)) {
		snprintf(why, whylen, "payload has no usable session id");
		goto out;
	}
	snprintf(in->session, sizeof(in->session), "%s:%s", hi->name, sid);
	if (dir != NULL && dir[0] == '/' && strlen(dir) < PGN_MAX_PATH) {
		in->dir = strdup(dir);
		if (in->dir == NULL) {
			rc = PGN_ENOMEM;
			goto out;
		}
	}
	if (in->event == PGN_EVENT_PROMPT && field(root, "prompt") != NULL) {
		in->prompt = strdup(field(root, "prompt"));
		if (in->prompt == NULL) {
			rc = PGN_ENOMEM;
			goto out;
		}
	}
	/* Subagents (Claude, Codex) and Cursor background agents. */
	in->subagent = field(root, "agent_id") != NULL ||
	    field(root, "agent_type") != NULL ||
	    cJSON_IsTrue(
	        cJSON_GetObjectItemCaseSensitive(root, "is_background_agent"));
	if (turn != NULL && id_ok(turn)) {
		snprintf(in->turn, sizeof(in->turn), "%s:%s",
		    hi->events[in->event], turn);
		in->turn_window_ms = 0;
	} else {
		/* No turn id: duplicates of one event carry one payload. */
		crypto_generichash(h, sizeof(h), (const unsigned char *)buf,
		    len, NULL, 0);
		k = (size_t)snprintf(in->turn, sizeof(in->turn), "%s:h",
		    hi->events[in->event]);
		for (i = 0; i < sizeof(h) && k + 2 < sizeof(in->turn); i++) {
			in->turn[k++] = hex[h[i] >> 4];
			in->turn[k++] = hex[h[i] & 15];
		}
		in->turn[k] = '\0';
		in->turn_window_ms = HOOK_TURN_WINDOW_MS;
	}
	rc = PGN_OK;
out:
	cJSON_Delete(root);
	return rc;
}

/* ---- log ------------------------------------------------------------ */

void
hook_log(const char *home, const char *fmt, ...)
{
	char line[1024], path[PGN_MAX_PATH], old[PGN_MAX_PATH], at[32];
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

/* What the SIGALRM backstop prints: the neutral output of this run. */
static char neutral_line[64];
static size_t neutral_len;
static volatile sig_atomic_t printed;

static void
on_deadline(int sig)
{
	(void)sig;
	if (!printed && neutral_len > 0 &&
	    write(STDOUT_FILENO, neutral_line, neutral_len) < 0) {
		/* stdout gone: nothing left to do */
	}
	_exit(HOOK_EXIT_OK);
}

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

/* How the agent runs the CLI: the pigeon beside this pigeon-hook. */
static void
find_pigeon(char *out, size_t len)
{
	static const char *const rel[] = {"pigeon", "../broker/pigeon"};
	char self[PATH_MAX], cand[PATH_MAX + 32], *slash;
	ssize_t n;
	size_t i;

	snprintf(out, len, "pigeon");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash == NULL)
		return;
	*slash = '\0';
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if (snprintf(cand, sizeof(cand), "%s/%s", self, rel[i]) >=
		    (int)sizeof(cand))
			continue;
		if (access(cand, X_OK) == 0) {
			if (strchr(cand, '\'') != NULL)
				return;
			if (strpbrk(cand, " \t\"$`\\") != NULL)
				snprintf(out, len, "'%s'", cand);
			else if (realpath(cand, self) != NULL)
				snprintf(out, len, "%s", self);
			return;
		}
	}
}

struct run {
	const struct hook_opts *o;
	struct hook_input in;
	char *home;
	char *payload;
	char *scope;
	char *dbpath;
	pgn_db *db;
	struct pgn_turn_out turn;
	struct pgn_agents peers;
	struct pgn_config cfg;
	struct pgn_provider_result prov;
	char *context;
	char *line;
	int64_t start;
	int64_t deadline;
	char why[PGN_MAX_ERR];
};

static const char *
ev_name(const struct run *r)
{
	const struct pgn_host_info *hi = pgn_host_get(r->in.host);

	if (hi == NULL)
		return "-";
	if (r->in.event == PGN_EVENT_NONE)
		return "-";
	return hi->events[r->in.event];
}

static void
fail(struct run *r, const char *what, const char *msg)
{
	hook_log(r->home, "host=%s event=%s session=%s status=%s ms=%lld %s",
	    r->in.host == PGN_HOST_NONE ? "-" : pgn_host_get(r->in.host)->name,
	    ev_name(r), r->in.session[0] ? r->in.session : "-", what,
	    (long long)(pgn_mono_ms() - r->start), msg);
}

/* Open the database; the default one is created, a named one is not. */
static pgn_status
open_db(struct run *r)
{
	const char *named = getenv("PIGEON_DB");
	char *why = NULL;
	long left;
	pgn_status st;

	st = pgn_db_path(NULL, &r->dbpath, &why);
	if (st != PGN_OK) {
		snprintf(r->why, sizeof(r->why), "%s",
		    why != NULL ? why : "no database path");
		free(why);
		return st;
	}
	left = (long)(r->deadline - pgn_mono_ms()) - 100;
	if (left < 50)
		left = 50;
	/* A hook never checkpoints before writing: its latency matters. */
	st = pgn_db_open(r->dbpath,
	    PGN_OPEN_LATENCY |
	        (named != NULL && *named != '\0' ? 0 : PGN_OPEN_CREATE),
	    left, &r->db);
	if (st != PGN_OK)
		snprintf(r->why, sizeof(r->why), "%s", pgn_errmsg(r->db));
	return st;
}

/* Non-empty once surrounding whitespace is gone. */
static int
has_text(const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return 1;
	return 0;
}

/* Would the project's provider run for this prompt? */
static int
provider_runs(const struct run *r)
{
	return r->cfg.argc > 0 && !r->in.subagent && has_text(r->in.prompt) &&
	    r->home != NULL;
}

/* The project's config, read before the claim (budget, no-mail path). */
static void
load_config(struct run *r)
{
	if (r->scope == NULL || r->scope[0] == '\0')
		return;
	if (pgn_config_load(r->scope, &r->cfg) != PGN_OK)
		memset(&r->cfg, 0, sizeof(r->cfg));
}

/*
 * The project's reminder and provider, for a prompt. Failures turn the
 * feature off and are logged (status, duration, bytes, a keyed
 * fingerprint: never the text, never the prompt).
 */
static void
project_context(struct run *r)
{
	struct pgn_provider_request rq;
	long left;

	if (r->cfg.problem != NULL)
		fail(r, "config", r->cfg.problem);
	if (r->cfg.reminder_problem != NULL)
		fail(r, "config", r->cfg.reminder_problem);
	if (r->cfg.provider_problem != NULL)
		fail(r, "config", r->cfg.provider_problem);
	if (!provider_runs(r))
		return;
	memset(&rq, 0, sizeof(rq));
	rq.host = pgn_host_get(r->in.host)->name;
	rq.session = r->in.session;
	rq.turn = r->in.turn;
	rq.cwd = r->in.dir != NULL ? r->in.dir : r->scope;
	rq.prompt = r->in.prompt;
	/* The provider's time counts against the hook's own deadline. */
	left = (long)(r->deadline - pgn_mono_ms()) - 150;
	pgn_provider_run(r->home, r->scope, &r->cfg, &rq, left > 0 ? left : 0,
	    &r->prov);
	hook_log(r->home,
	    "host=%s event=%s session=%s provider=%s ms=%ld "
	    "bytes=%zu%s%s%s%s",
	    rq.host, ev_name(r), r->in.session,
	    pgn_provider_status_name(r->prov.status), r->prov.ms, r->prov.bytes,
	    r->prov.fingerprint[0] ? " fp=" : "", r->prov.fingerprint,
	    r->prov.why[0] ? " " : "", r->prov.why);
}

static pgn_status
deliver(struct run *r)
{
	const struct pgn_host_info *hi = pgn_host_get(r->in.host);
	const char *agent = getenv("PIGEON_AGENT");
	struct pgn_turn t;
	struct pgn_render rd;
	char pigeon[PATH_MAX + 8];
	size_t budget;
	pgn_status st;
	int intro;

	if (agent == NULL || *agent == '\0')
		agent = r->o->agent;
	st = pgn_scope_find(r->in.dir, &r->scope);
	if (st != PGN_OK)
		return st;
	st = open_db(r);
	if (st != PGN_OK)
		return st;
	st = pgn_db_set_scope(r->db, r->scope);
	if (st != PGN_OK)
		goto dberr;
	/* The reminder is part of every prompt: keep room for it. */
	if (r->in.event == PGN_EVENT_PROMPT)
		load_config(r);
	budget = PGN_MAX_CONTEXT - PGN_RENDER_RESERVE - 300;
	if (r->cfg.reminder != NULL)
		budget -= strlen(r->cfg.reminder) + 64;
	memset(&t, 0, sizeof(t));
	t.host = hi->name;
	t.session = r->in.session;
	t.agent = agent;
	t.turn = r->in.turn;
	t.turn_window_ms = r->in.turn_window_ms;
	t.route =
	    r->in.event == PGN_EVENT_SESSION_START ? "session-start" : "prompt";
	t.budget = budget;
	t.intro = PGN_MAX_INTRO;
	t.cost = pgn_render_cost;
	/* Nothing but mail to say: a prompt that finds none writes nothing. */
	t.only_mail = r->in.event == PGN_EVENT_PROMPT &&
	    (r->cfg.reminder == NULL || r->cfg.reminder[0] == '\0') &&
	    !provider_runs(r);
	st = pgn_turn_claim(r->db, &t, &r->turn);
	if (st != PGN_OK)
		goto dberr;
	if (r->turn.duplicate)
		return PGN_OK;
	if (r->in.event == PGN_EVENT_PROMPT)
		project_context(r);
	if (r->turn.fast)
		return PGN_OK; /* no mail, nothing else: the neutral output */
	/* A session first seen at a prompt learns who it is there. */
	intro = r->in.event == PGN_EVENT_SESSION_START || r->turn.bound;
	if (intro) {
		/* Messages are claimed: a failure now must not hide them. */
		if (pgn_agents_list(r->db, &r->peers) != PGN_OK)
			memset(&r->peers, 0, sizeof(r->peers));
	}
	memset(&rd, 0, sizeof(rd));
	find_pigeon(pigeon, sizeof(pigeon));
	rd.agent = r->turn.agent;
	rd.scope = r->scope;
	rd.host = hi->name;
	rd.pigeon = pigeon;
	rd.peers = intro ? &r->peers : NULL;
	rd.msgs = &r->turn.msgs;
	rd.reminder = r->cfg.reminder;
	rd.provider = r->prov.context;
	rd.now_ms = pgn_now_ms();
	r->context = pgn_render_context(&rd, PGN_MAX_CONTEXT, &st);
	if (r->context == NULL)
		snprintf(r->why, sizeof(r->why), "rendering failed: %s",
		    pgn_status_name(st));
	return st;
dberr:
	snprintf(r->why, sizeof(r->why), "%s", pgn_errmsg(r->db));
	return st;
}

int
hook_run(const struct hook_opts *o, int in_fd, int out_fd)
{
	struct run r;
	size_t len = 0;
	pgn_status st;
	char *line = NULL;
	long total;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.in.host = o->host;
	r.in.event = o->event;
	r.start = pgn_mono_ms();
	total = o->deadline_ms > 0 ? o->deadline_ms : HOOK_DEADLINE_MS;
	r.deadline = r.start + total;
	printed = 0;
	set_neutral(o->host, o->event);
	if (!o->no_timer)
		arm_timer(total);
	if (pgn_home_path(&r.home) == PGN_OK) {
		char *why = NULL;

		if (pgn_home_ensure(r.home, &why) != PGN_OK) {
			free(r.home);
			r.home = NULL;
		}
		free(why);
	}

	if (sodium_init() < 0) {
		fail(&r, "io", "libsodium failed to initialise");
		goto neutral;
	}
	st = hook_read_json(in_fd, HOOK_MAX_STDIN, HOOK_STDIN_IDLE_MS,
	    r.deadline, &r.payload, &len);
	if (st != PGN_OK) {
		fail(&r, "bad-input",
		    st == PGN_ETOOBIG ? "payload over 1 MiB" :
		                        "no complete JSON object on stdin");
		goto neutral;
	}
	st = hook_parse_payload(r.payload, len, o, &r.in, r.why, sizeof(r.why));
	if (st != PGN_OK) {
		/* Detected before the failure: that host's neutral output. */
		if (r.in.host != PGN_HOST_NONE && r.in.event != PGN_EVENT_NONE)
			set_neutral(r.in.host, r.in.event);
		fail(&r, "bad-input", r.why);
		goto neutral;
	}
	set_neutral(r.in.host, r.in.event);
	if (r.in.skip || r.in.ignore)
		goto neutral;
	st = deliver(&r);
	if (st != PGN_OK) {
		fail(&r, pgn_status_name(st), r.why);
		goto neutral;
	}
	if (r.turn.duplicate)
		goto neutral;
	line = pgn_envelope(r.in.host, r.in.event, r.context, &st);
	if (line == NULL && st != PGN_OK) {
		fail(&r, pgn_status_name(st), "building the envelope");
		goto neutral;
	}
	if (line != NULL) {
		len = strlen(line);
		line[len] = '\n'; /* over the NUL; written with its length */
		printed = 1;
		if (write_all(out_fd, line, len + 1) != 0 && r.turn.msgs.n > 0)
			fail(&r, "lost-output",
			    "stdout closed after the claim:"
			    " the messages are in the journal");
	}
	if (r.turn.msgs.n > 0 || r.turn.bound)
		hook_log(r.home,
		    "host=%s event=%s session=%s agent=%s "
		    "status=ok delivered=%zu waiting=%zu bytes=%zu ms=%lld",
		    pgn_host_get(r.in.host)->name, ev_name(&r), r.in.session,
		    r.turn.agent, r.turn.msgs.n, r.turn.msgs.left,
		    r.context != NULL ? strlen(r.context) : 0,
		    (long long)(pgn_mono_ms() - r.start));
	goto out;
neutral:
	printed = 1;
	if (neutral_len > 0 &&
	    write_all(out_fd, neutral_line, neutral_len) != 0) {
		/* stdout gone: the host is not listening */
	}
out:
	if (!o->no_timer)
		disarm_timer();
	free(line);
	free(r.context);
	pgn_agents_release(&r.peers);
	pgn_config_release(&r.cfg);
	pgn_provider_result_release(&r.prov);
	pgn_msgs_release(&r.turn.msgs);
	pgn_db_close(r.db);
	free(r.dbpath);
	free(r.scope);
	free(r.payload);
	free(r.home);
	hook_input_release(&r.in);
	return HOOK_EXIT_OK;
}
