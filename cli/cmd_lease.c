/*
 * pigeon lease: take, release and list path leases (store/lease.c,
 * docs/decisions/0155). Patterns are relative to the scope root; an
 * absolute path inside the scope is made relative here (anchored: it
 * names that place), and a plain name of an existing directory is
 * leased as that directory ('src' as './src/': decision 0153 leaves
 * that to the CLI).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "pigeon/lease.h"

enum {
	OPT_TTL = OPT_CMD,
	OPT_REASON,
	OPT_SHARED,
	OPT_WAIT,
	OPT_AGENT,
	OPT_ALL
};

const struct cli_cmd cli_cmd_lease = {
    .name = "lease",
    .fn = cmd_lease,
    .summary = "take, release and list leases on paths of the scope",
    .synopsis =
        {"take PATTERN... [--ttl DURATION] [--reason TEXT] [--shared] [--wait S] [--agent NAME]",
            "release [PATTERN... | --all] [--agent NAME]",
            "list [--agent NAME] [--all]"},
    .text =
        "A lease says that an agent is working on the paths a pattern covers, so that others leave them alone: exclusive (no other agent may lease what it covers) unless --shared (others may share it, none may take it exclusively). The before-tool hook denies another agent's write to a path under an exclusive lease where the host lets it; everything else is advisory.\n\n"
        "PATTERN is relative to the scope root (an absolute path inside the scope is made relative), with gitignore's globs: '*' and '?' within a name, '**' across directories, a trailing '/' for what is below a directory. A pattern without a '/' (a trailing one aside) matches at any depth: 'docs/' is every docs directory, './docs/' the top one only. A plain name of an existing directory, or an absolute path, names that place: 'src' is leased as './src/', $PWD/docs/ as './docs/'. '..' may not leave the scope; a leading '!' is refused.\n\n"
        "take leases each PATTERN, all or none, for --ttl (default 30m, at most 8h; 90s, 45m, 1h30m). Taking what the agent holds already renews it (new expiry, mode and reason). A live lease of another agent in the way (an exclusive one, or any one for an exclusive take) refuses the whole take with exit 1, naming its holder, pattern, reason and expiry; with --wait S the take waits up to S seconds for it to be released or to expire, then tries again.\n\n"
        "release gives up the agent's leases on the PATTERNs (compared after normalizing: './src/' is 'src/'), or with --all all of them; a pattern it holds no lease on refuses the whole release (exit 2). list prints the scope's live leases, or one agent's; with --all also the expired ones not yet swept (an expired lease is never enforced; the next take or release in the scope sweeps it). Every take, renewal, release and expiry is in the holder's journal; a refused take is in both agents' journals, as a write the before-tool hook denies is.\n\n"
        "The agent is the one the session's shell belongs to ($PIGEON_SESSION bound to an agent; --agent may name only it), else --agent NAME, else $PIGEON_AGENT; it must be an agent of the scope.",
    .opts = {{"ttl", OPT_TTL, "DURATION", CLI_K_NONE, NULL,
                 "take: how long the lease lasts (default 30m, 1s to 8h)"},
        {"reason", OPT_REASON, "TEXT", CLI_K_NONE, NULL,
            "take: why, shown to whoever it stops (one line, 256 bytes)"},
        {"shared", OPT_SHARED, NULL, CLI_K_NONE, NULL,
            "take: a shared lease (others may share it)"},
        {"wait", OPT_WAIT, "S", CLI_K_NONE, NULL,
            "take: wait up to S seconds (1 to 3600) for a lease in the way"},
        {"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
            "take, release: the agent (default: $PIGEON_SESSION's, else $PIGEON_AGENT); list: only this agent's"},
        {"all", OPT_ALL, NULL, CLI_K_NONE, NULL,
            "release: every lease of the agent; list: expired ones too"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
    .verbs = "take release list",
    .operand = CLI_K_FILE,
};

struct lease_opts {
	int64_t ttl_ms; /* 0: default */
	const char *reason;
	int shared;
	int64_t wait_ms;
	const char *agent;
	int all;
	int take_only; /* a take-only option was given */
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct lease_opts *o = p;
	int64_t v;

	switch (ch) {
	case OPT_TTL:
		if (pgn_parse_duration(arg, &v) != PGN_OK ||
		    v < PGN_LEASE_TTL_MIN_MS || v > PGN_LEASE_TTL_MAX_MS)
			return cli_usage(c,
			    "--ttl '%s': a duration from 1s to 8h (90s, 45m, 1h30m)",
			    arg);
		o->ttl_ms = v;
		o->take_only = 1;
		return 0;
	case OPT_REASON:
		o->reason = arg;
		o->take_only = 1;
		return 0;
	case OPT_SHARED:
		o->shared = 1;
		o->take_only = 1;
		return 0;
	case OPT_WAIT:
		if (pgn_parse_i64(arg, 1, PGN_WAIT_MAX_MS / 1000, &v) != PGN_OK)
			return cli_usage(c,
			    "--wait '%s': a number of seconds from 1 to %d",
			    arg, PGN_WAIT_MAX_MS / 1000);
		o->wait_ms = v * 1000;
		o->take_only = 1;
		return 0;
	case OPT_AGENT:
		o->agent = arg;
		return 0;
	case OPT_ALL:
		o->all = 1;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

static volatile sig_atomic_t stop_sig;

static void
on_signal(int sig)
{
	stop_sig = sig;
}

static int
cancelled(void *arg)
{
	(void)arg;
	return stop_sig != 0;
}

/* "in 25m" or "3m ago", and the time itself. */
static void
when(int64_t ms, int64_t now, char *buf, size_t len)
{
	char at[32], age[32];
	int64_t d = ms - now;

	pgn_format_time(ms, at, sizeof(at));
	if (d > 0) {
		/* pgn_format_age speaks of the past: the same units ahead */
		pgn_format_age(now - d, now, age, sizeof(age));
		age[strlen(age) >= 4 ? strlen(age) - 4 : 0] = '\0';
		(void)snprintf(buf, len, "until %s (in %s)", at, age);
	} else {
		cli_age(ms, now, age, sizeof(age));
		(void)snprintf(buf, len, "expired %s (%s)", at, age);
	}
}

static cJSON *
json_lease(const struct pgn_lease *l, int64_t now)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "id", (double)l->id);
	cJSON_AddStringToObject(o, "agent", l->holder);
	cJSON_AddStringToObject(o, "pattern", l->pattern);
	cJSON_AddStringToObject(o, "normalized", l->norm);
	cJSON_AddStringToObject(o, "mode", l->shared ? "shared" : "exclusive");
	cJSON_AddStringToObject(o, "reason", l->reason);
	cli_json_time(o, "taken", l->created_ms);
	cli_json_time(o, "expires", l->expires_ms);
	cJSON_AddNumberToObject(o, "expires_ms", (double)l->expires_ms);
	cJSON_AddBoolToObject(o, "live", pgn_lease_live(l, now));
	return o;
}

static void
print_lease(const struct pgn_lease *l, int64_t now)
{
	char w[96];

	when(l->expires_ms, now, w, sizeof(w));
	printf("%s%-16s%s %s %s%s%s, %s", cli_sgr(CLI_SGR_NAME),
	    cli_safe(l->holder), cli_sgr(CLI_SGR_RESET), cli_safe(l->pattern),
	    pgn_lease_live(l, now) ? "" : cli_sgr(CLI_SGR_DIM),
	    l->shared ? "shared" : "exclusive", cli_sgr(CLI_SGR_RESET), w);
	if (l->reason[0] != '\0')
		printf(": %s", cli_safe(l->reason));
	putchar('\n');
}

/*
 * The patterns as the library takes them, in 'buf': relative to the
 * scope root, and a plain existing directory's name with its '/'.
 */
static int
scope_patterns(struct cli *c, int n, char **argv,
    char (*buf)[PGN_MAX_LEASE_PATTERN + 4], const char **out)
{
	char path[PGN_MAX_PATH + PGN_MAX_LEASE_PATTERN + 2];
	struct pgn_err err;
	struct stat sb;
	size_t len;
	int i;

	if (n > PGN_MAX_LEASE_PATTERNS)
		return cli_usage(c, "%d lease patterns, over the limit of %d",
		    n, PGN_MAX_LEASE_PATTERNS);
	for (i = 0; i < n; i++) {
		pgn_err_clear(&err);
		if (pgn_lease_relative(c->scope, argv[i], buf[i],
		        PGN_MAX_LEASE_PATTERN + 1, &err) != PGN_OK)
			return cli_err(EXIT_USAGE, "%s", cli_errtext(&err));
		len = strlen(buf[i]);
		/* 'src', an existing directory: './src/' (len + 4 fits) */
		if (len > 0 && buf[i][len - 1] != '/' &&
		    strpbrk(buf[i], "*?[\\") == NULL && c->scope[0] != '\0' &&
		    strcmp(buf[i], ".") != 0 && strcmp(buf[i], "..") != 0 &&
		    snprintf(path, sizeof(path), "%s/%s", c->scope, buf[i]) <
		        (int)sizeof(path) &&
		    stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			if (strncmp(buf[i], "./", 2) != 0) {
				memmove(buf[i] + 2, buf[i], len + 1);
				memcpy(buf[i], "./", 2);
				len += 2;
			}
			buf[i][len] = '/';
			buf[i][len + 1] = '\0';
		}
		out[i] = buf[i];
	}
	return EXIT_OK;
}

/* The actor, from $PIGEON_SESSION, --agent and $PIGEON_AGENT. */
static void
actor(const struct lease_opts *o, struct pgn_lease_actor *who)
{
	who->session = getenv("PIGEON_SESSION");
	who->agent = o->agent;
	who->agent_default = getenv("PIGEON_AGENT");
}

static int
held_line(struct cli *c, const struct pgn_lease_taken *t, int waited)
{
	const struct pgn_lease *b = &t->blocker;
	char w[96];
	cJSON *o;

	when(b->expires_ms, pgn_now_ms(), w, sizeof(w));
	if (c->json) {
		o = cJSON_CreateObject();
		if (o != NULL) {
			cJSON_AddBoolToObject(o, "taken", 0);
			cJSON_AddStringToObject(o, "wanted", t->wanted);
			cJSON_AddItemToObject(o, "held_by",
			    json_lease(b, pgn_now_ms()));
		}
		(void)cli_json_print(o);
	}
	return cli_err(EXIT_FAIL,
	    "'%s' is held by %s's %s lease on '%s', %s%s%s%s; ask with: pigeon send --to %s",
	    t->wanted, b->holder, b->shared ? "shared" : "exclusive",
	    b->pattern, w, b->reason[0] ? ": " : "", b->reason,
	    waited ? " (still, after --wait)" : "", b->holder);
}

static int
do_take(struct cli *c, const struct lease_opts *o, const char *const *pats,
    size_t n)
{
	struct sigaction sa, old_int, old_term;
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	int64_t now;
	pgn_status st;
	cJSON *j, *arr;
	size_t i;
	int code = EXIT_OK;

	memset(&req, 0, sizeof(req));
	actor(o, &req.who);
	req.patterns = pats;
	req.npatterns = n;
	req.ttl_ms = o->ttl_ms;
	req.reason = o->reason;
	req.shared = o->shared;
	req.wait_ms = o->wait_ms;
	/* No SA_RESTART: a signal ends the sleep, and the wait, at once. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	stop_sig = 0;
	if (o->wait_ms > 0) {
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		req.cancel = cancelled;
	}
	st = pgn_lease_take(c->db, &req, &t);
	if (o->wait_ms > 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
	if (st != PGN_OK)
		return cli_fail(c, st);
	if (t.held && stop_sig != 0)
		code = 128 + stop_sig; /* as a shell reports it: quietly */
	else if (t.held)
		code = held_line(c, &t, o->wait_ms > 0);
	else if (c->json) {
		now = pgn_now_ms();
		j = cJSON_CreateObject();
		arr = j != NULL ? cJSON_AddArrayToObject(j, "leases") : NULL;
		if (j != NULL) {
			cJSON_AddBoolToObject(j, "taken", 1);
			cJSON_AddStringToObject(j, "agent", t.agent);
			cJSON_AddNumberToObject(j, "renewed",
			    (double)t.renewed);
		}
		for (i = 0; arr != NULL && i < t.leases.n; i++)
			cJSON_AddItemToArray(arr,
			    json_lease(&t.leases.v[i], now));
		code = cli_json_print(j);
	} else {
		now = pgn_now_ms();
		for (i = 0; i < t.leases.n; i++) {
			printf("leased: ");
			print_lease(&t.leases.v[i], now);
		}
		if (t.renewed > 0)
			printf("(%zu of them renewed)\n", t.renewed);
	}
	pgn_lease_taken_release(&t);
	return code;
}

static int
do_release(struct cli *c, const struct lease_opts *o, const char *const *pats,
    size_t n)
{
	struct pgn_lease_actor who;
	size_t released = 0;
	pgn_status st;
	cJSON *j;

	actor(o, &who);
	st = pgn_lease_release(c->db, &who, pats, n, o->all, &released);
	if (st != PGN_OK)
		return cli_fail(c, st);
	if (c->json) {
		j = cJSON_CreateObject();
		if (j != NULL)
			cJSON_AddNumberToObject(j, "released",
			    (double)released);
		return cli_json_print(j);
	}
	printf("released %zu lease%s\n", released, released == 1 ? "" : "s");
	return EXIT_OK;
}

static int
do_list(struct cli *c, const struct lease_opts *o)
{
	struct pgn_leases l;
	int64_t now = pgn_now_ms();
	pgn_status st;
	cJSON *arr;
	size_t i;
	int code = EXIT_OK;

	st = pgn_lease_list(c->db, o->agent, o->all, &l);
	if (st != PGN_OK)
		return cli_fail(c, st);
	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < l.n; i++)
			cJSON_AddItemToArray(arr, json_lease(&l.v[i], now));
		code = cli_json_print(arr);
	} else {
		if (l.n == 0)
			printf("no leases\n");
		for (i = 0; i < l.n; i++)
			print_lease(&l.v[i], now);
	}
	pgn_leases_release(&l);
	return code;
}

int
cmd_lease(int argc, char **argv)
{
	static char buf[PGN_MAX_LEASE_PATTERNS][PGN_MAX_LEASE_PATTERN + 4];
	struct cli c = {.def = &cli_cmd_lease};
	const char *pats[PGN_MAX_LEASE_PATTERNS];
	struct lease_opts o;
	const char *verb;
	int code, n;

	memset(&o, 0, sizeof(o));
	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	if (optind >= argc)
		return cli_usage(&c, "lease what? take, release or list");
	verb = argv[optind++];
	n = argc - optind;
	if (strcmp(verb, "take") != 0 && strcmp(verb, "release") != 0 &&
	    strcmp(verb, "list") != 0)
		return cli_usage(&c,
		    "'%s' is not a lease command: take, release or list", verb);
	if (strcmp(verb, "take") != 0 && o.take_only)
		return cli_usage(&c,
		    "--ttl, --reason, --shared and --wait go with lease take, not with %s",
		    verb);
	if (strcmp(verb, "take") == 0 && o.all)
		return cli_usage(&c,
		    "--all goes with lease release and list, not with take");
	if (strcmp(verb, "take") == 0 && n == 0)
		return cli_usage(&c, "lease take: name a PATTERN");
	if (strcmp(verb, "release") == 0 && (n == 0) == (o.all == 0))
		return cli_usage(&c,
		    "lease release: name the PATTERNs, or --all, not both");
	if (strcmp(verb, "list") == 0 && n > 0)
		return cli_usage(&c, "lease list takes no PATTERN");
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	code = scope_patterns(&c, n, argv + optind, buf, pats);
	if (code != EXIT_OK)
		goto out;
	if (strcmp(verb, "take") == 0)
		code = do_take(&c, &o, pats, (size_t)n);
	else if (strcmp(verb, "release") == 0)
		code = do_release(&c, &o, pats, (size_t)n);
	else
		code = do_list(&c, &o);
out:
	cli_close(&c);
	return cli_finish(code);
}
