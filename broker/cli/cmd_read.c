/* pigeon inbox and pigeon read: list, or claim, an agent's queue. */
#include <string.h>

#include "cli.h"

static const char inbox_usage[] =
    "usage: pigeon inbox [--agent NAME]\n\n"
    "List the agent's queued messages, oldest first, without claiming them.\n\n"
    "  --agent NAME     the agent (default: $PIGEON_AGENT)\n"
    "  --db PATH, --project DIR, --json, -h/--help\n";

static const char read_usage[] =
    "usage: pigeon read [--agent NAME]\n\n"
    "Claim the agent's queued messages and print them, oldest first. Each is\n"
    "delivered once (route 'cli'), recorded in the audit and the journal.\n\n"
    "  --agent NAME     the agent (default: $PIGEON_AGENT)\n"
    "  --db PATH, --project DIR, --json, -h/--help\n";

enum { OPT_AGENT = OPT_CMD };

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	if (ch == OPT_AGENT) {
		*(const char **)p = arg;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

static int
print_msgs(struct cli *c, const struct pgn_msgs *m, const char *agent,
    int claimed)
{
	cJSON *arr;
	int64_t now;
	size_t i;

	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < m->n; i++)
			cJSON_AddItemToArray(arr, cli_json_msg(&m->v[i]));
		return cli_json_print(arr);
	}
	if (m->n == 0) {
		char name[PGN_MAX_NAME + 1];
		const char *rule;

		/* The name as stored: case-folded (it was checked). */
		if (pgn_name_check(agent, name, &rule) != PGN_OK)
			name[0] = '\0';
		printf("no messages %s for %s\n",
		    claimed ? "to read" : "queued", name);
		return EXIT_OK;
	}
	now = pgn_now_ms();
	for (i = 0; i < m->n; i++)
		cli_print_msg(stdout, &m->v[i], now);
	return EXIT_OK;
}

static int
run(int argc, char **argv, int claim)
{
	static const struct option longopts[] = {{"agent", required_argument,
	                                             NULL, OPT_AGENT},
	    CLI_COMMON_OPTS, {NULL, 0, NULL, 0}};
	struct cli c = {.cmd = claim ? "read" : "inbox",
	    .usage = claim ? read_usage : inbox_usage};
	struct pgn_msgs m = {0};
	struct pgn_claim req;
	const char *flag = NULL, *agent;
	pgn_status st;
	int code;

	code = cli_parse(&c, argc, argv, "h", longopts, opt, &flag);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	agent = cli_agent(&c, flag);
	if (agent == NULL)
		return EXIT_USAGE;
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (claim) {
		memset(&req, 0, sizeof(req));
		req.agent = agent;
		req.route = "cli";
		st = pgn_claim(c.db, &req, &m);
	} else {
		st = pgn_inbox(c.db, agent, &m);
	}
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	code = cli_finish(print_msgs(&c, &m, agent, claim));
out:
	pgn_msgs_release(&m);
	cli_close(&c);
	return code;
}

int
cmd_inbox(int argc, char **argv)
{
	return run(argc, argv, 0);
}

int
cmd_read(int argc, char **argv)
{
	return run(argc, argv, 1);
}
