/*
 * Shared plumbing of the pigeon CLI: option parsing, opening the
 * database in the caller's scope, error lines, JSON and text output.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/setup.h"

/*
 * Text shown to a person goes through pgn_text_safe (docs/decisions/0025):
 * a few strings at a time, so one printf can take several.
 */
#define CLI_SAFE_SLOTS 8

static char *safe_slot[CLI_SAFE_SLOTS];
static unsigned safe_next;

const char *
cli_safe(const char *s)
{
	char *t;

	t = pgn_text_safe(s != NULL ? s : "", s != NULL ? strlen(s) : 0, 0);
	free(safe_slot[safe_next]);
	safe_slot[safe_next] = t;
	safe_next = (safe_next + 1) % CLI_SAFE_SLOTS;
	return t != NULL ? t : "(unprintable: out of memory)";
}

static void err_line(const char *fmt, va_list ap, const char *tail)
    __attribute__((format(printf, 1, 0)));

/* "pigeon: " + the formatted line + 'tail', escaped as one line. */
static void
err_line(const char *fmt, va_list ap, const char *tail)
{
	va_list cp;
	char *line;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	line = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (line != NULL && vsnprintf(line, (size_t)n + 1, fmt, ap) == n)
		fprintf(stderr, "pigeon: %s%s\n", cli_safe(line), tail);
	else
		fputs("pigeon: out of memory\n", stderr);
	free(line);
}

int
cli_err(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_line(fmt, ap, "");
	va_end(ap);
	return code;
}

int
cli_usage(struct cli *c, const char *fmt, ...)
{
	char tail[64];
	va_list ap;

	snprintf(tail, sizeof(tail), "; see 'pigeon %s --help'", c->cmd);
	va_start(ap, fmt);
	err_line(fmt, ap, tail);
	va_end(ap);
	return EXIT_USAGE;
}

const char *
cli_errtext(const struct pgn_err *err)
{
	static char line[PGN_MAX_ERRMSG + 256];
	const char *msg = err->msg;
	const char *arg = err->arg[0] ? err->arg : NULL;

	switch (err->hint) {
	case PGN_HINT_CREATE:
		snprintf(line, sizeof(line),
		    "%s --create queues it for an agent that will appear later",
		    msg);
		break;
	case PGN_HINT_AGENTS:
		snprintf(line, sizeof(line), "%s See pigeon agents", msg);
		break;
	case PGN_HINT_READ_FIRST:
		snprintf(line, sizeof(line),
		    "%s: read them first (pigeon read --agent %s)", msg,
		    arg != NULL ? arg : "NAME");
		break;
	case PGN_HINT_AUDIT:
		snprintf(line, sizeof(line), "%s; list them with pigeon audit",
		    msg);
		break;
	case PGN_HINT_MESSAGES:
		snprintf(line, sizeof(line),
		    "%s; check the --reply-to id with pigeon inbox or pigeon audit",
		    msg);
		break;
	case PGN_HINT_OTHER_DB:
		snprintf(line, sizeof(line), "%s: name another with --db", msg);
		break;
	case PGN_HINT_OWNER:
		snprintf(line, sizeof(line),
		    "%s: run pigeon as its owner, or name a database of your own with --db",
		    msg);
		break;
	case PGN_HINT_PERM_AGAIN:
		snprintf(line, sizeof(line),
		    "%s; run the command again, or pass --no-permissions", msg);
		break;
	case PGN_HINT_PERM_FIX:
		snprintf(line, sizeof(line),
		    "%s; fix it, or pass --no-permissions", msg);
		break;
	case PGN_HINT_PERM_MOVE:
		snprintf(line, sizeof(line),
		    "%s; move it away, or pass --no-permissions", msg);
		break;
	case PGN_HINT_PLUGIN_DIR:
		snprintf(line, sizeof(line),
		    "%s; make it a directory, or use --project DIR", msg);
		break;
	case PGN_HINT_INSTALL_AGAIN:
		snprintf(line, sizeof(line),
		    "%s; move it away and run pigeon install %s again", msg,
		    arg != NULL ? arg : "HOST");
		break;
	case PGN_HINT_ALLOW:
		snprintf(line, sizeof(line),
		    "%s: run pigeon provider allow in the project", msg);
		break;
	case PGN_HINT_ALLOW_AGAIN:
		snprintf(line, sizeof(line),
		    "%s: run pigeon provider allow again", msg);
		break;
	case PGN_HINT_REALLOW:
		snprintf(line, sizeof(line),
		    "%s; run pigeon provider allow again", msg);
		break;
	case PGN_HINT_REVIEW_ALLOW:
		snprintf(line, sizeof(line),
		    "%s; review it and run pigeon provider allow again", msg);
		break;
	case PGN_HINT_HOME_OWNER:
		snprintf(line, sizeof(line),
		    "%s: run pigeon as that user, or set PIGEON_HOME to a directory of your own",
		    msg);
		break;
	case PGN_HINT_SENDER:
		snprintf(line, sizeof(line),
		    "%s: name it with --from NAME or PIGEON_AGENT", msg);
		break;
	case PGN_HINT_DROP_FROM:
		snprintf(line, sizeof(line), "%s: drop --from", msg);
		break;
	case PGN_HINT_STATUS:
		snprintf(line, sizeof(line),
		    "%s: check the id with pigeon status %s", msg,
		    arg != NULL ? arg : "ID");
		break;
	case PGN_HINT_SESSION:
		snprintf(line, sizeof(line),
		    "%s: run it in an agent's shell (PIGEON_SESSION), or name the agent with --agent NAME",
		    msg);
		break;
	case PGN_HINT_BATONS:
		snprintf(line, sizeof(line), "%s: see pigeon handoff list",
		    msg);
		break;
	case PGN_HINT_BATON_FULL:
		snprintf(line, sizeof(line),
		    "%s: shorten the note, or drop the baton first (pigeon handoff drop %s)",
		    msg, arg != NULL ? arg : "ID");
		break;
	case PGN_HINT_NO_PG:
		snprintf(line, sizeof(line),
		    "%s: install libpq-dev and rebuild, or give an SQLite file",
		    msg);
		break;
	case PGN_HINT_NONE:
	default:
		return msg;
	}
	return line;
}

const char *
cli_errmsg(const pgn_db *db)
{
	return cli_errtext(pgn_db_err(db));
}

int
cli_fail(struct cli *c, pgn_status st)
{
	cli_err(EXIT_FAIL, "%s", cli_errmsg(c->db));
	return pgn_status_is_usage(st) ? EXIT_USAGE : EXIT_FAIL;
}

int
cli_since(struct cli *c, const char *arg, int64_t *ms)
{
	if (pgn_parse_time(arg, pgn_now_ms(), ms) != PGN_OK)
		return cli_usage(c,
		    "--since '%s': not a time (try 2h, 7d or 2026-11-30T06:00:00Z)",
		    arg);
	return 0;
}

int
cli_limit(struct cli *c, const char *arg, size_t *n)
{
	int64_t v;

	if (pgn_parse_i64(arg, 1, PGN_MAX_LIST, &v) != PGN_OK)
		return cli_usage(c, "--limit '%s': a number from 1 to %d", arg,
		    PGN_MAX_LIST);
	*n = (size_t)v;
	return 0;
}

int
cli_common(struct cli *c, int ch, const char *arg)
{
	switch (ch) {
	case OPT_DB:
		c->db_flag = arg;
		return 1;
	case OPT_PROJECT:
		c->project = arg;
		return 1;
	case OPT_JSON:
		c->json = 1;
		return 1;
	case 'h':
		c->help = 1;
		return 1;
	default:
		return 0;
	}
}

struct cli_global cli_global;

/* "--NAME VALUE" or "--NAME=VALUE" at argv[*i]: 1 taken, 0 not it, -1 bad. */
static int
global_value(int argc, char **argv, int *i, const char *name, const char **out)
{
	const char *a = argv[*i] + 2;
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return 0;
	if (a[n] == '=') {
		*out = a + n + 1;
		return 1;
	}
	if (*i + 1 >= argc) {
		cli_err(EXIT_USAGE,
		    "option '--%s' needs a value; see 'pigeon --help'", name);
		return -1;
	}
	*out = argv[++*i];
	return 1;
}

int
cli_global_parse(int argc, char **argv)
{
	static const char *const names[] = {"db", "project", "color"};
	const char **outs[3];
	int i, k, r;

	outs[0] = &cli_global.db;
	outs[1] = &cli_global.project;
	outs[2] = &cli_global.color;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--version") == 0)
			return i;
		if (strcmp(argv[i], "--json") == 0) {
			cli_global.json = 1;
			continue;
		}
		r = 0;
		for (k = 0; k < 3 && r == 0 && argv[i][1] == '-'; k++)
			r = global_value(argc, argv, &i, names[k], outs[k]);
		if (r < 0)
			return -1;
		if (r == 0) {
			cli_err(EXIT_USAGE,
			    "unknown option '%s' before the command: only --db, --project, --json and --color go there; see 'pigeon --help'",
			    argv[i]);
			return -1;
		}
	}
	return i;
}

/*
 * Apply the options given before the command, as if they came first
 * after it: -1 to go on, else an exit code.
 */
static int
global_apply(struct cli *c)
{
	c->db_flag = cli_global.db;
	c->project = cli_global.project;
	c->json = cli_global.json;
	if (cli_global.color != NULL && cli_color_arg(c, cli_global.color) != 0)
		return cli_usage(c, "--color '%s': say auto, always or never",
		    cli_global.color);
	return -1;
}

/* getopt's tables from the command's options and the common ones. */
static void
build_opts(const struct cli_cmd *def, struct option *lo, char *so)
{
	const struct cli_opt *sets[2], *o;
	size_t n = 0, k = 0, s, i;

	sets[0] = def->opts;
	sets[1] = cli_common_opts;
	so[k++] = ':';
	for (s = 0; s < 2; s++) {
		for (i = 0; (s == 1 || i < CLI_MAX_OPTS) && sets[s][i].name;
		     i++) {
			o = &sets[s][i];
			if (s == 1 && cli_has_opt(def, o->name))
				continue; /* the command's own meaning wins */
			lo[n].name = o->name;
			lo[n].has_arg =
			    o->arg != NULL ? required_argument : no_argument;
			lo[n].flag = NULL;
			lo[n].val = o->id;
			n++;
			if (o->id < 128 && o->id > ' ') {
				so[k++] = (char)o->id;
				if (o->arg != NULL)
					so[k++] = ':';
			}
		}
	}
	memset(&lo[n], 0, sizeof(lo[n]));
	so[k] = '\0';
}

int
cli_parse(struct cli *c, int argc, char **argv, cli_opt_fn *fn, void *arg)
{
	struct option lo[CLI_MAX_OPTS + CLI_NCOMMON + 1];
	char so[2 * (CLI_MAX_OPTS + CLI_NCOMMON) + 2];
	int ch, code;

	if (c->cmd == NULL)
		c->cmd = c->def->name;
	code = global_apply(c);
	if (code >= 0)
		return code;
	build_opts(c->def, lo, so);
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (ch == OPT_COLOR) {
			if (cli_color_arg(c, optarg) != 0)
				return cli_usage(c,
				    "--color '%s': say auto, always or never",
				    optarg);
			continue;
		}
		if (cli_common(c, ch, optarg))
			continue;
		if (ch == '?' || ch == ':') {
			if (optopt != 0 && optopt < OPT_DB)
				return cli_usage(c,
				    "bad or incomplete option '-%c'", optopt);
			return cli_usage(c, "bad or incomplete option '%s'",
			    argv[optind - 1]);
		}
		code = fn != NULL ? fn(c, ch, optarg, arg) : EXIT_USAGE;
		if (code != 0)
			return code;
	}
	cli_color_setup(c);
	if (c->help) {
		cli_help_cmd(stdout, "pigeon", c->def);
		return cli_finish(EXIT_OK);
	}
	return -1;
}

/*
 * The automatic prune of generated agents (decision 0228), at most once
 * a day per scope: the scope's agents.retireAfterDays (default 7). It
 * never fails the command: an error is dropped, what it retired is one
 * line on stderr.
 */
void
cli_autoprune(struct cli *c)
{
	struct pgn_config cfg;
	struct pgn_agents a = {0};
	size_t i;

	if (pgn_config_load(c->scope, &cfg) != PGN_OK)
		return;
	if (pgn_agents_autoprune(c->db, cfg.retire_after_days, pgn_now_ms(),
	        &a) == PGN_OK &&
	    a.n > 0) {
		fprintf(stderr,
		    "pigeon: retired %zu agent%s made for unnamed sessions, idle for %ld days (agents.retireAfterDays):",
		    a.n, a.n == 1 ? "" : "s", cfg.retire_after_days);
		for (i = 0; i < a.n; i++)
			fprintf(stderr, " %s", cli_safe(a.v[i].name));
		fputc('\n', stderr);
	}
	pgn_agents_release(&a);
	pgn_config_release(&cfg);
}

int
cli_open(struct cli *c)
{
	char *path = NULL, *cwd = NULL;
	struct pgn_err err;
	const char *dir;
	struct stat sb;
	pgn_status st;
	int code = EXIT_OK;

	dir = c->project;
	if (dir != NULL && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
		return cli_usage(c, "--project '%s': no such directory", dir);
	if (dir == NULL) {
		cwd = getcwd(NULL, 0);
		dir = cwd; /* NULL: no known directory, global scope */
	}
	st = pgn_scope_find(dir, &c->scope);
	free(cwd);
	if (st != PGN_OK)
		return cli_err(EXIT_FAIL, "out of memory");
	st = pgn_db_path(c->db_flag, &path, &err);
	if (st != PGN_OK) {
		code = cli_err(EXIT_FAIL, "%s", cli_errtext(&err));
		goto out;
	}
	st = pgn_db_open(path, c->existing ? 0 : PGN_OPEN_CREATE,
	    PGN_BUSY_DEADLINE_MS, &c->db);
	if (st == PGN_ENOTFOUND) {
		code = cli_err(EXIT_FAIL,
		    "%s: nothing there yet (pigeon agent add NAME makes it), or name another with --db",
		    cli_errmsg(c->db));
		goto out;
	}
	if (st != PGN_OK) {
		code = cli_err(EXIT_FAIL, "%s", cli_errmsg(c->db));
		goto out;
	}
	st = pgn_db_set_scope(c->db, c->scope);
	if (st != PGN_OK)
		code = cli_err(EXIT_FAIL, "%s", cli_errmsg(c->db));
out:
	free(path);
	return code;
}

void
cli_close(struct cli *c)
{
	pgn_db_close(c->db);
	c->db = NULL;
	free(c->scope);
	c->scope = NULL;
}

const char *
cli_agent(struct cli *c, const char *flag)
{
	const char *v;

	v = flag;
	if (v == NULL || *v == '\0')
		v = getenv("PIGEON_AGENT");
	if (v == NULL || *v == '\0') {
		cli_usage(c,
		    "which agent? name it with --agent NAME or PIGEON_AGENT");
		return NULL;
	}
	return v;
}

cJSON *
cli_json_push(cJSON *arr, cJSON *item)
{
	if (arr == NULL || item == NULL) {
		cJSON_Delete(arr);
		cJSON_Delete(item);
		return NULL;
	}
	cJSON_AddItemToArray(arr, item);
	return arr;
}

int
cli_json_print(cJSON *v)
{
	char *s;
	int code = EXIT_OK;

	s = v != NULL ? cJSON_PrintUnformatted(v) : NULL;
	if (s == NULL)
		code = cli_err(EXIT_FAIL, "out of memory");
	else
		puts(s);
	cJSON_free(s);
	cJSON_Delete(v);
	return code;
}

cJSON *
cli_json_time(cJSON *obj, const char *key, int64_t ms)
{
	char buf[32];

	pgn_format_time(ms, buf, sizeof(buf));
	return cJSON_AddStringToObject(obj, key, buf);
}

void
cli_age(int64_t ms, int64_t now, char *buf, size_t len)
{
	int64_t s;

	s = (now - ms) / 1000;
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(buf, len, "%llds ago", (long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%lldm ago", (long long)(s / 60));
	else if (s < 86400)
		snprintf(buf, len, "%lldh ago", (long long)(s / 3600));
	else
		snprintf(buf, len, "%lldd ago", (long long)(s / 86400));
}

void
cli_print_body(FILE *f, const char *body)
{
	const char *p, *nl;
	char *safe;

	/* Escaped first, so only '\n' breaks a line: each is indented. */
	safe = pgn_text_safe(body, strlen(body), PGN_SAFE_LINES);
	if (safe == NULL) {
		fputs("    (unprintable: out of memory)\n", f);
		return;
	}
	for (p = safe; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL) {
			fprintf(f, "    %s\n", p);
			break;
		}
		fprintf(f, "    %.*s\n", (int)(nl - p), p);
	}
	free(safe);
}

void
cli_print_msg(FILE *f, const struct pgn_msg *m, int64_t now)
{
	char age[32];

	cli_age(m->created_ms, now, age, sizeof(age));
	fprintf(f, "%s#%lld from %s%s%s, %s", cli_sgr(CLI_SGR_BOLD),
	    (long long)m->id, cli_sgr(CLI_SGR_NAME), cli_safe(m->sender),
	    cli_sgr(CLI_SGR_RESET), age);
	if (m->reply_to != 0)
		fprintf(f, ", re #%lld", (long long)m->reply_to);
	if (m->thread != 0 && m->thread != m->id && m->thread != m->reply_to)
		fprintf(f, ", thread #%lld", (long long)m->thread);
	if (m->ack_ms != 0)
		fprintf(f, ", asks for an acknowledgement");
	/* Normal is the default and goes unsaid (decision 0158). */
	if (m->priority != PGN_PRIORITY_NORMAL)
		fprintf(f, ", %s%s%s",
		    m->priority == PGN_PRIORITY_URGENT ? cli_sgr(CLI_SGR_WARN) :
		                                         "",
		    pgn_priority_name(m->priority), cli_sgr(CLI_SGR_RESET));
	if (m->group != NULL)
		fprintf(f, ", to @%s", cli_safe(m->group));
	fputc('\n', f);
	cli_print_body(f, m->body);
}

void
cli_json_safe(cJSON *v)
{
	cJSON *it;
	char *t;

	if (cJSON_IsString(v) && v->valuestring != NULL) {
		t = pgn_text_safe(v->valuestring, strlen(v->valuestring), 0);
		/* cJSON_SetValuestring copies; on failure the value goes */
		if (t == NULL || cJSON_SetValuestring(v, t) == NULL)
			cJSON_SetValuestring(v, "");
		free(t);
	}
	for (it = v != NULL ? v->child : NULL; it != NULL; it = it->next)
		cli_json_safe(it);
}

const char *
cli_version_line(void)
{
	static char line[128];

	snprintf(line, sizeof(line), "pigeon %s", pgn_version());
	return line;
}

int
cli_finish(int code)
{
	int e;

	if (fflush(stdout) == 0 && !ferror(stdout))
		return code;
	e = errno;
	/* A reader that went away (| head) ends us quietly, like git. */
	if (e == EPIPE)
		return EXIT_PIPE;
	return cli_err(EXIT_FAIL,
	    "cannot write output: %s; anything claimed stays readable in pigeon journal and pigeon audit",
	    strerror(e));
}

/* 'dir'/'name' into 'out'; 0 if it does not fit. */
static int
join(char *out, size_t len, const char *dir, const char *name)
{
	int n;

	n = snprintf(out, len, "%s/%s", dir, name);
	return n >= 0 && (size_t)n < len;
}

static int
is_exec(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(path, X_OK) == 0;
}

/*
 * The absolute path of pigeon-hook: $PIGEON_HOOK, else next to this
 * binary (the build tree's ../hookcli/pigeon-hook, then the installed
 * layout's ./pigeon-hook). '*hook' is the caller's; exit code.
 */
int
cli_find_hook(struct cli *c, char **hook)
{
	char exe[PATH_MAX], cand[PATH_MAX + 32], *slash;
	const char *env;

	*hook = NULL;
	env = getenv("PIGEON_HOOK");
	if (env != NULL && *env != '\0') {
		slash = strrchr(env, '/');
		if (env[0] != '/' || strcmp(slash + 1, "pigeon-hook") != 0)
			return cli_usage(c,
			    "PIGEON_HOOK '%s' is not an absolute path ending in /pigeon-hook",
			    env);
		if (!is_exec(env))
			cli_err(EXIT_OK,
			    "warning: PIGEON_HOOK '%s' is not an executable file yet",
			    env);
		*hook = strdup(env);
		return *hook != NULL ? EXIT_OK :
		                       cli_err(EXIT_FAIL, "out of memory");
	}
	if (realpath("/proc/self/exe", exe) == NULL)
		return cli_err(EXIT_FAIL,
		    "cannot find this program's directory (%s): set PIGEON_HOOK to the absolute path of pigeon-hook",
		    strerror(errno));
	slash = strrchr(exe, '/');
	if (slash != NULL)
		*slash = '\0';
	if (join(cand, sizeof(cand), exe, "../hookcli/pigeon-hook") &&
	    is_exec(cand)) {
		*hook = realpath(cand, NULL);
		if (*hook != NULL)
			return EXIT_OK;
	}
	if (join(cand, sizeof(cand), exe, "pigeon-hook") && is_exec(cand)) {
		*hook = strdup(cand);
		return *hook != NULL ? EXIT_OK :
		                       cli_err(EXIT_FAIL, "out of memory");
	}
	return cli_err(EXIT_FAIL,
	    "no pigeon-hook found next to '%s': build or install it, or set PIGEON_HOOK to its absolute path",
	    exe);
}

/* Read standard input into 'buf', at most 'max' bytes. */
static int
read_stdin(char *buf, size_t max, size_t *len)
{
	ssize_t n;

	*len = 0;
	while (*len < max) {
		n = read(STDIN_FILENO, buf + *len, max - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cli_err(EXIT_FAIL,
			    "cannot read standard input: %s", strerror(errno));
		if (n == 0)
			break;
		*len += (size_t)n;
	}
	return EXIT_OK;
}

int
cli_read_text(int argc, char **argv, int first, char *buf, size_t cap,
    size_t *len)
{
	size_t max = cap - 1, n;
	int k, code;

	*len = 0;
	if (first == argc ||
	    (first + 1 == argc && strcmp(argv[first], "-") == 0)) {
		/* A person at a terminal would otherwise see it hang. */
		if (isatty(STDIN_FILENO))
			fputs(
			    "pigeon: reading the text from standard input: type it, then Ctrl-D on a line of its own (or give it as arguments)\n",
			    stderr);
		code = read_stdin(buf, max, len);
		if (code != EXIT_OK)
			return code;
		/* "echo text | pigeon send": final newlines frame it. */
		if (*len < max)
			while (*len > 0 && buf[*len - 1] == '\n')
				(*len)--;
	} else {
		for (k = first; k < argc; k++) {
			n = strlen(argv[k]);
			if (*len + n + 1 > max) {
				*len = max;
				break;
			}
			if (k > first)
				buf[(*len)++] = ' ';
			memcpy(buf + *len, argv[k], n);
			*len += n;
		}
	}
	buf[*len] = '\0';
	return EXIT_OK;
}
