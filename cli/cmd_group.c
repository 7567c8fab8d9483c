/* pigeon group add | rm | list: named sets of agents (decision 0158). */
#include <string.h>

#include "cli.h"

const struct cli_cmd cli_cmd_group = {
    .name = "group",
    .fn = cmd_group,
    .summary = "name a group of agents, to send to all of them",
    .synopsis = {"add NAME AGENT...", "rm NAME [AGENT...]", "list"},
    .text =
        "Manage the groups of the scope. pigeon send --to @NAME queues one message for each member but the sender, as --to all does for the scope, each recorded with the group's name. add makes the group or adds to it (every AGENT an agent of the scope); rm removes the named members, or without any the whole group; list prints each group and its members. A group name follows the agents' rules and may not be an agent's name; a group has at most 64 members.",
    .common = CLI_DB | CLI_PROJECT | CLI_JSON,
    .verbs = "add rm list",
    .operand = CLI_K_AGENT,
};

static int
list(struct cli *c)
{
	struct pgn_groups g = {0};
	cJSON *arr = NULL, *o = NULL, *members = NULL;
	pgn_status st;
	size_t i;
	int code;

	st = pgn_groups_list(c->db, &g);
	if (st != PGN_OK) {
		code = cli_fail(c, st);
		goto out;
	}
	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < g.n; i++) {
			if (i == 0 || strcmp(g.v[i].group, g.v[i - 1].group)) {
				o = cJSON_CreateObject();
				cJSON_AddStringToObject(o, "name",
				    g.v[i].group);
				members = cJSON_AddArrayToObject(o, "members");
				cJSON_AddItemToArray(arr, o);
			}
			cJSON_AddItemToArray(members,
			    cJSON_CreateString(g.v[i].agent));
		}
		code = cli_finish(cli_json_print(arr));
		goto out;
	}
	if (g.n == 0)
		printf("no groups\n");
	for (i = 0; i < g.n; i++) {
		if (i == 0 || strcmp(g.v[i].group, g.v[i - 1].group) != 0)
			printf("%s@%s:", i == 0 ? "" : "\n",
			    cli_safe(g.v[i].group));
		printf(" %s", cli_safe(g.v[i].agent));
	}
	if (g.n > 0)
		printf("\n");
	code = cli_finish(EXIT_OK);
out:
	pgn_groups_release(&g);
	return code;
}

int
cmd_group(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_group};
	const char *const *agents;
	char name[PGN_MAX_NAME + 1];
	struct pgn_err rule;
	const char *verb, *group;
	size_t n;
	pgn_status st;
	int code;

	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind == argc)
		return cli_usage(&c, "say add, rm or list");
	verb = argv[optind++];
	if (strcmp(verb, "list") == 0) {
		if (optind < argc)
			return cli_usage(&c, "unexpected argument '%s'",
			    argv[optind]);
		code = cli_open(&c);
		if (code == EXIT_OK)
			code = list(&c);
		cli_close(&c);
		return code;
	}
	if (strcmp(verb, "add") != 0 && strcmp(verb, "rm") != 0)
		return cli_usage(&c, "unknown action '%s': say add, rm or list",
		    verb);
	if (optind == argc)
		return cli_usage(&c, "group %s takes a NAME", verb);
	group = argv[optind++];
	/* '@NAME' as send takes it is the same group. */
	if (group[0] == '@')
		group++;
	agents = (const char *const *)&argv[optind];
	n = (size_t)(argc - optind);
	if (strcmp(verb, "add") == 0 && n == 0)
		return cli_usage(&c,
		    "group add takes NAME and one AGENT or more");
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (strcmp(verb, "add") == 0)
		st = pgn_group_add(c.db, group, agents, n);
	else
		st = pgn_group_rm(c.db, group, agents, n);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	/* The name as stored: case-folded (it was checked). */
	if (pgn_name_check(group, name, &rule) != PGN_OK)
		name[0] = '\0';
	if (c.json) {
		/* {"group": NAME, "added": N} or "removed": N, or the whole
		 * group: "removed": "all" */
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "group", name);
		if (strcmp(verb, "add") != 0 && n == 0)
			cJSON_AddStringToObject(o, "removed", "all");
		else
			cJSON_AddNumberToObject(o,
			    strcmp(verb, "add") == 0 ? "added" : "removed",
			    (double)n);
		code = cli_finish(cli_json_print(o));
		goto out;
	}
	if (strcmp(verb, "add") == 0)
		printf("group @%s: added %zu\n", name, n);
	else if (n == 0)
		printf("removed group @%s\n", name);
	else
		printf("group @%s: removed %zu\n", name, n);
	code = cli_finish(EXIT_OK);
out:
	cli_close(&c);
	return code;
}
