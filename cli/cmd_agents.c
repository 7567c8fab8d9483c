/* pigeon agents, and pigeon agent add | rename | rm. */
#include <string.h>

#include "cli.h"

enum { OPT_NAMES = OPT_CMD };

const struct cli_cmd cli_cmd_agents = {
    .name = "agents",
    .fn = cmd_agents,
    .summary = "list the agents of the scope",
    .synopsis = {"[--names]"},
    .text =
        "List the agents of the scope: name, hosts, sessions, last seen and the number of queued messages.",
    .opts = {{"names", OPT_NAMES, NULL, CLI_K_NONE, NULL,
        "only the names, one a line, from the agent table alone (fast: for completion)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	(void)arg;
	if (ch == OPT_NAMES) {
		*(int *)p = 1;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

int
cmd_agents(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_agents};
	struct pgn_agents a = {0};
	struct pgn_agent *x;
	const char *key;
	char seen[32];
	cJSON *arr, *o;
	pgn_status st;
	int64_t now;
	size_t i;
	int code, names = 0;

	code = cli_parse(&c, argc, argv, opt, &names);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	c.existing = names; /* a TAB never makes a database */
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (!names)
		cli_autoprune(&c);
	key = pgn_db_scope(c.db);
	st = names ? pgn_agents_names(c.db, &a) : pgn_agents_list(c.db, &a);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	if (names && c.json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < a.n; i++)
			cJSON_AddItemToArray(arr,
			    cJSON_CreateString(a.v[i].name));
		code = cli_json_print(arr);
	} else if (names) {
		for (i = 0; i < a.n; i++)
			printf("%s\n", cli_safe(a.v[i].name));
	} else if (c.json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < a.n; i++) {
			x = &a.v[i];
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "name", x->name);
			cJSON_AddStringToObject(o, "hosts", x->hosts);
			cJSON_AddNumberToObject(o, "sessions",
			    (double)x->sessions);
			if (x->last_seen_ms != 0)
				cli_json_time(o, "last_seen", x->last_seen_ms);
			else
				cJSON_AddNullToObject(o, "last_seen");
			cJSON_AddNumberToObject(o, "queued", (double)x->queued);
			cJSON_AddItemToArray(arr, o);
		}
		code = cli_json_print(arr);
	} else if (a.n == 0) {
		printf("no agents in scope %s\n",
		    key[0] ? cli_safe(key) : "global");
	} else {
		now = pgn_now_ms();
		printf("%s%-24s %-16s %8s  %-10s %6s%s\n",
		    cli_sgr(CLI_SGR_BOLD), "NAME", "HOSTS", "SESSIONS",
		    "LAST SEEN", "QUEUED", cli_sgr(CLI_SGR_RESET));
		for (i = 0; i < a.n; i++) {
			x = &a.v[i];
			if (x->last_seen_ms != 0)
				cli_age(x->last_seen_ms, now, seen,
				    sizeof(seen));
			else
				memcpy(seen, "never", 6);
			printf("%s%-24s%s %-16s %8lld  %-10s %s%6lld%s\n",
			    cli_sgr(CLI_SGR_NAME), cli_safe(x->name),
			    cli_sgr(CLI_SGR_RESET),
			    x->hosts[0] ? cli_safe(x->hosts) : "-",
			    (long long)x->sessions, seen,
			    x->queued > 0 ? cli_sgr(CLI_SGR_WARN) : "",
			    (long long)x->queued, cli_sgr(CLI_SGR_RESET));
		}
		printf("scope: %s\n", key[0] ? cli_safe(key) : "global");
	}
	code = cli_finish(code);
out:
	pgn_agents_release(&a);
	cli_close(&c);
	return code;
}

enum { OPT_DRY_RUN = OPT_CMD + 1, OPT_OLDER_THAN };

const struct cli_cmd cli_cmd_agent = {
    .name = "agent",
    .fn = cmd_agent,
    .summary = "add, rename, remove or prune agents",
    .synopsis = {"add NAME", "rename OLD NEW", "rm NAME...",
        "prune [--dry-run] [--older-than AGE]"},
    .text =
        "Manage the agents of the scope. Names have 1 to 64 characters of a-z 0-9 . _ - and start with a letter or digit; 'all' is reserved, and a group's name is taken (pigeon group). A rename keeps the queue and the journal.\n\n"
        "rm retires each NAME in turn: its leases are released (each a journal entry), its sessions unbound and its name freed, all in one transaction; its journal and the audit stay readable. An agent with queued messages is refused and keeps them and its leases (read them first: pigeon read --agent NAME); the others are still removed, and the exit code is that of the first refusal.\n\n"
        "prune retires the agents made for unnamed sessions (a generated name such as calm-otter, created by a host's hook) that have nothing queued and no session seen for AGE (default 7d), as rm does; --dry-run lists them and changes nothing.",
    .opts = {{"dry-run", OPT_DRY_RUN, NULL, CLI_K_NONE, NULL,
                 "prune: list what would be retired; change nothing"},
        {"older-than", OPT_OLDER_THAN, "AGE", CLI_K_NONE, NULL,
            "prune: idle for at least AGE (30m, 12h, 7d; default 7d)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON,
    .verbs = "add rename rm prune",
    .operand = CLI_K_AGENT,
};

struct agent_opts {
	int dry_run;
	const char *older;
};

static int
agent_opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct agent_opts *o = p;

	if (ch == OPT_DRY_RUN)
		o->dry_run = 1;
	else if (ch == OPT_OLDER_THAN)
		o->older = arg;
	else
		return cli_usage(c, "unknown option");
	return 0;
}

/* pigeon agent prune: the exit code. */
static int
agent_prune(struct cli *c, const struct agent_opts *o)
{
	struct pgn_agents a = {0};
	int64_t before;
	cJSON *arr;
	pgn_status st;
	size_t i;
	int code;

	before = pgn_now_ms() - PGN_PRUNE_IDLE_DEFAULT_MS;
	if (o->older != NULL &&
	    pgn_parse_time(o->older, pgn_now_ms(), &before) != PGN_OK)
		return cli_usage(c,
		    "--older-than '%s': not an age (try 30m, 12h or 7d)",
		    o->older);
	code = cli_open(c);
	if (code != EXIT_OK)
		return code;
	st = pgn_agents_prune(c->db, before, o->dry_run, &a);
	if (st != PGN_OK) {
		code = cli_fail(c, st);
		goto out;
	}
	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < a.n; i++)
			cJSON_AddItemToArray(arr,
			    cJSON_CreateString(a.v[i].name));
		code = cli_json_print(arr);
	} else {
		for (i = 0; i < a.n; i++)
			printf("%s %s\n",
			    o->dry_run ? "would retire" : "retired",
			    cli_safe(a.v[i].name));
		if (a.n == 0)
			puts("nothing to prune");
	}
	code = cli_finish(code);
out:
	pgn_agents_release(&a);
	return code;
}

/* pigeon agent rm NAME...: each in turn; the first refusal's code. */
static int
agent_rm(struct cli *c, int argc, char **argv, int first)
{
	char a[PGN_MAX_NAME + 1];
	struct pgn_err rule;
	size_t leases;
	pgn_status st;
	int k, code, worst = EXIT_OK;

	/* Bad names first: then nothing is removed. */
	for (k = first; k < argc; k++)
		if (pgn_name_check(argv[k], a, &rule) != PGN_OK)
			return cli_usage(c, "agent '%s': %s", argv[k],
			    rule.msg);
	code = cli_open(c);
	if (code != EXIT_OK)
		return code;
	for (k = first; k < argc; k++) {
		if (pgn_name_check(argv[k], a, &rule) != PGN_OK)
			a[0] = '\0'; /* checked above */
		st = pgn_agent_retire(c->db, argv[k], NULL, &leases);
		if (st != PGN_OK) {
			code = cli_fail(c, st);
			if (worst == EXIT_OK)
				worst = code;
			continue;
		}
		if (leases > 0)
			printf("removed %s (released %zu lease%s)\n", a, leases,
			    leases == 1 ? "" : "s");
		else
			printf("removed %s\n", a);
	}
	return cli_finish(worst);
}

int
cmd_agent(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_agent};
	char a[PGN_MAX_NAME + 1] = "", b[PGN_MAX_NAME + 1] = "";
	struct agent_opts o = {0, NULL};
	const char *verb;
	struct pgn_err rule;
	pgn_status st;
	int code, need;

	code = cli_parse(&c, argc, argv, agent_opt, &o);
	if (code >= 0)
		return code;
	if (optind == argc)
		return cli_usage(&c, "say add, rename, rm or prune");
	verb = argv[optind++];
	if (strcmp(verb, "prune") != 0 && (o.dry_run || o.older != NULL))
		return cli_usage(&c, "--dry-run and --older-than are prune's");
	if (strcmp(verb, "prune") == 0) {
		if (optind < argc)
			return cli_usage(&c, "unexpected argument '%s'",
			    argv[optind]);
		code = agent_prune(&c, &o);
		goto out;
	}
	if (strcmp(verb, "rm") == 0) {
		if (optind == argc)
			return cli_usage(&c, "agent rm takes one NAME or more");
		code = agent_rm(&c, argc, argv, optind);
		goto out;
	}
	if (strcmp(verb, "add") == 0)
		need = 1;
	else if (strcmp(verb, "rename") == 0)
		need = 2;
	else
		return cli_usage(&c,
		    "unknown action '%s': say add, rename, rm or prune", verb);
	if (argc - optind != need)
		return cli_usage(&c, "agent %s takes %s", verb,
		    need == 1 ? "one NAME" : "OLD and NEW");
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (strcmp(verb, "add") == 0)
		st = pgn_agent_add(c.db, argv[optind]);
	else
		st = pgn_agent_rename(c.db, argv[optind], argv[optind + 1]);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	/* Print the names as stored: case-folded. */
	if (pgn_name_check(argv[optind], a, &rule) != PGN_OK)
		a[0] = '\0';
	if (strcmp(verb, "add") == 0)
		printf("added %s\n", a);
	else if (pgn_name_check(argv[optind + 1], b, &rule) == PGN_OK)
		printf("renamed %s to %s\n", a, b);
	code = cli_finish(EXIT_OK);
out:
	cli_close(&c);
	return code;
}
