/* pigeon hosts: the capability table, from the one host table. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pigeon/hosts.h"

const struct cli_cmd cli_cmd_hosts = {
    .name = "hosts",
    .fn = cmd_hosts,
    .summary = "what reaches each host's model, with evidence",
    .synopsis = {"[--json]"},
    .text =
        "The hosts Pigeon knows and what reaches each one's model: how (mechanism: a command the host runs, a plugin, or an instructions block), from which config file, and per facet (session start, each prompt, after each tool call, before a stop, waking an idle agent, its doorbell: a send that wakes an idle session) yes, partial or no, each with its evidence: the host version and the test that proved it, or the document (address and date), flag or issue behind it. Then every cell's evidence. With --json, one object per host in an array.",
    .common = CLI_JSON,
};

/* The column heads of the facets, in pgn_event order. */
static const char *const heads[PGN_NEVENTS] = {"SESSION-START", "PROMPT",
    "AFTER-TOOL", "STOP", "IDLE-WAKE", "BEFORE-TOOL"};

/* Where the row's config is, for people: "~/.x/y" (or "FILE" for a block). */
static void
config_of(const struct pgn_host_info *hi, int project, char *out, size_t len)
{
	if (hi->mechanism == PGN_MECH_INSTRUCTIONS)
		snprintf(out, len, "an instructions file (--file)");
	else if (project)
		snprintf(out, len, "%s",
		    hi->project_path != NULL ? hi->project_path : "-");
	else if (hi->user_path != NULL)
		snprintf(out, len, "~/%s", hi->user_path);
	else
		snprintf(out, len, "-");
}

static cJSON *
row_json(const struct pgn_host_info *hi)
{
	char path[512];
	cJSON *o, *cfg, *cells, *c;
	int e;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "host", hi->name);
	cJSON_AddStringToObject(o, "title", hi->title);
	cJSON_AddStringToObject(o, "mechanism",
	    pgn_mechanism_name(hi->mechanism));
	cfg = cJSON_AddObjectToObject(o, "config");
	config_of(hi, 0, path, sizeof(path));
	cJSON_AddStringToObject(cfg, "user", path);
	config_of(hi, 1, path, sizeof(path));
	cJSON_AddStringToObject(cfg, "project", path);
	if (hi->user_env != NULL)
		cJSON_AddStringToObject(cfg, "env", hi->user_env);
	cells = cJSON_AddObjectToObject(o, "cells");
	for (e = 0; e < PGN_NEVENTS && cells != NULL; e++) {
		c = cJSON_AddObjectToObject(cells,
		    pgn_facet_name((pgn_event)e));
		if (c == NULL)
			break;
		cJSON_AddStringToObject(c, "cap",
		    pgn_cap_name(hi->cells[e].cap));
		cJSON_AddStringToObject(c, "evidence",
		    hi->cells[e].evidence != NULL ? hi->cells[e].evidence : "");
		if (hi->events[e] != NULL)
			cJSON_AddStringToObject(c, "event", hi->events[e]);
	}
	/* Waking an idle session from a send (decisions 0176, 0178). */
	c = cJSON_AddObjectToObject(o, "doorbell");
	if (c != NULL) {
		cJSON_AddStringToObject(c, "cap", pgn_cap_name(hi->wake.cap));
		cJSON_AddStringToObject(c, "evidence",
		    hi->wake.evidence != NULL ? hi->wake.evidence : "");
		if (hi->doorbell != NULL)
			cJSON_AddStringToObject(c, "via", hi->doorbell->via);
	}
	return o;
}

int
cmd_hosts(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_hosts};
	const struct pgn_host_info *hi;
	char path[512];
	cJSON *arr, *o;
	int code, i, e, n, cw;

	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	n = pgn_host_rows();
	if (c.json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < n; i++) {
			o = row_json(pgn_host_row(i));
			if (o == NULL) {
				cJSON_Delete(arr);
				arr = NULL;
				break;
			}
			cJSON_AddItemToArray(arr, o);
		}
		code = cli_json_print(arr);
		return code != EXIT_OK ? code : cli_finish(EXIT_OK);
	}
	/* The config column as wide as its longest path. */
	for (i = 0, cw = (int)strlen("CONFIG"); i < n; i++) {
		config_of(pgn_host_row(i), 0, path, sizeof(path));
		if ((int)strlen(path) > cw)
			cw = (int)strlen(path);
	}
	printf("%-13s %-13s %-*s", "HOST", "MECHANISM", cw, "CONFIG");
	for (e = 0; e < PGN_NEVENTS; e++)
		printf(" %-*s", e == 0 ? 13 : 11, heads[e]);
	printf(" DOORBELL\n");
	for (i = 0; i < n; i++) {
		hi = pgn_host_row(i);
		config_of(hi, 0, path, sizeof(path));
		printf("%-13s %-13s %-*s", hi->name,
		    pgn_mechanism_name(hi->mechanism), cw, path);
		for (e = 0; e < PGN_NEVENTS; e++)
			printf(" %-*s", e == 0 ? 13 : 11,
			    pgn_cap_name(hi->cells[e].cap));
		printf(" %s\n", pgn_cap_name(hi->wake.cap));
	}
	printf("\nevidence:\n");
	for (i = 0; i < n; i++) {
		hi = pgn_host_row(i);
		for (e = 0; e < PGN_NEVENTS; e++)
			printf("  %s %s %s: %s\n", hi->name,
			    pgn_facet_name((pgn_event)e),
			    pgn_cap_name(hi->cells[e].cap),
			    hi->cells[e].evidence != NULL ?
			        hi->cells[e].evidence :
			        "(none)");
		printf("  %s doorbell %s: %s\n", hi->name,
		    pgn_cap_name(hi->wake.cap),
		    hi->wake.evidence != NULL ? hi->wake.evidence : "(none)");
	}
	return cli_finish(EXIT_OK);
}
