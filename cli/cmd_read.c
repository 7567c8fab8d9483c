/* pigeon inbox and pigeon read: list, or claim, an agent's queue. */
#include <string.h>

#include "cli.h"

enum { OPT_AGENT = OPT_CMD };

const struct cli_cmd cli_cmd_inbox = {
    .name = "inbox",
    .fn = cmd_inbox,
    .summary = "list an agent's queued messages",
    .synopsis = {"[--agent NAME]"},
    .text =
        "List the agent's queued messages, without claiming them, in the order a claim takes them: urgent first, low last, each oldest first.",
    .opts = {{"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
        "the agent (default: $PIGEON_AGENT)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

const struct cli_cmd cli_cmd_read = {
    .name = "read",
    .fn = cmd_read,
    .summary = "claim and print an agent's queued messages",
    .synopsis = {"[--agent NAME]"},
    .text =
        "Claim the agent's queued messages and print them: urgent first, low last, each oldest first. Each is delivered once (route 'cli'), recorded in the audit and the journal.",
    .opts = {{"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
        "the agent (default: $PIGEON_AGENT)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

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
			arr = cli_json_push(arr, pgn_msg_json(&m->v[i]));
		return cli_json_print(arr);
	}
	if (m->n == 0) {
		char name[PGN_MAX_NAME + 1];
		struct pgn_err rule;

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
	struct cli c = {.def = claim ? &cli_cmd_read : &cli_cmd_inbox};
	struct pgn_msgs m = {0};
	struct pgn_claim req;
	const char *flag = NULL, *agent;
	pgn_status st;
	int code;

	code = cli_parse(&c, argc, argv, opt, &flag);
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
