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

const struct cli_cmd cli_cmd_agent = {
    .name = "agent",
    .fn = cmd_agent,
    .summary = "add, rename or remove an agent",
    .synopsis = {"add NAME", "rename OLD NEW", "rm NAME"},
    .text =
        "Manage the agents of the scope. Names have 1 to 64 characters of a-z 0-9 . _ - and start with a letter or digit; 'all' is reserved. A rename keeps the queue and the journal. rm refuses while messages are queued; the journal and the audit of a removed agent stay readable.",
    .common = CLI_DB | CLI_PROJECT,
    .verbs = "add rename rm",
    .operand = CLI_K_AGENT,
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

int
cmd_agent(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_agent};
	char a[PGN_MAX_NAME + 1] = "", b[PGN_MAX_NAME + 1] = "";
	const char *verb;
	struct pgn_err rule;
	pgn_status st;
	int code, need;

	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind == argc)
		return cli_usage(&c, "say add, rename or rm");
	verb = argv[optind++];
	if (strcmp(verb, "add") == 0 || strcmp(verb, "rm") == 0)
		need = 1;
	else if (strcmp(verb, "rename") == 0)
		need = 2;
	else
		return cli_usage(&c,
		    "unknown action '%s': say add, rename or rm", verb);
	if (argc - optind != need)
		return cli_usage(&c, "agent %s takes %s", verb,
		    need == 1 ? "one NAME" : "OLD and NEW");
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (strcmp(verb, "add") == 0)
		st = pgn_agent_add(c.db, argv[optind]);
	else if (strcmp(verb, "rm") == 0)
		st = pgn_agent_rm(c.db, argv[optind]);
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
	else if (strcmp(verb, "rm") == 0)
		printf("removed %s\n", a);
	else if (pgn_name_check(argv[optind + 1], b, &rule) == PGN_OK)
		printf("renamed %s to %s\n", a, b);
	code = cli_finish(EXIT_OK);
out:
	cli_close(&c);
	return code;
}
