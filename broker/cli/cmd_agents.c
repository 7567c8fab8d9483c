/* pigeon agents, and pigeon agent add | rename | rm. */
#include <string.h>

#include "cli.h"

static const char agents_usage[] =
    "usage: pigeon agents\n\n"
    "List the agents of the scope: name, hosts, sessions, last seen and the\n"
    "number of queued messages.\n\n"
    "  --db PATH, --project DIR, --json, -h/--help\n";

static const char agent_usage[] =
    "usage: pigeon agent add NAME\n"
    "       pigeon agent rename OLD NEW\n"
    "       pigeon agent rm NAME\n\n"
    "Manage the agents of the scope. Names have 1 to 64 characters of\n"
    "a-z 0-9 . _ - and start with a letter or digit; 'all' is reserved.\n"
    "A rename keeps the queue and the journal. rm refuses while messages are\n"
    "queued; the journal and the audit of a removed agent stay readable.\n\n"
    "  --db PATH, --project DIR, -h/--help\n";

static const struct option longopts[] = {CLI_COMMON_OPTS, {NULL, 0, NULL, 0}};

int
cmd_agents(int argc, char **argv)
{
	struct cli c = {.cmd = "agents", .usage = agents_usage};
	struct pgn_agents a = {0};
	struct pgn_agent *x;
	const char *key;
	char seen[32];
	cJSON *arr, *o;
	pgn_status st;
	int64_t now;
	size_t i;
	int code;

	code = cli_parse(&c, argc, argv, "h", longopts, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	key = pgn_db_scope(c.db);
	st = pgn_agents_list(c.db, &a);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	if (c.json) {
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
		printf("%-24s %-16s %8s  %-10s %6s\n", "NAME", "HOSTS",
		    "SESSIONS", "LAST SEEN", "QUEUED");
		for (i = 0; i < a.n; i++) {
			x = &a.v[i];
			if (x->last_seen_ms != 0)
				cli_age(x->last_seen_ms, now, seen,
				    sizeof(seen));
			else
				memcpy(seen, "never", 6);
			printf("%-24s %-16s %8lld  %-10s %6lld\n",
			    cli_safe(x->name),
			    x->hosts[0] ? cli_safe(x->hosts) : "-",
			    (long long)x->sessions, seen, (long long)x->queued);
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
	struct cli c = {.cmd = "agent", .usage = agent_usage};
	char a[PGN_MAX_NAME + 1] = "", b[PGN_MAX_NAME + 1] = "";
	const char *verb, *rule;
	pgn_status st;
	int code, need;

	code = cli_parse(&c, argc, argv, "h", longopts, NULL, NULL);
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
