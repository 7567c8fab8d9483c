/* pigeon scope move OLD: a scope whose key changed, moved to the new key. */
#include <string.h>

#include "cli.h"

const struct cli_cmd cli_cmd_scope = {
    .name = "scope",
    .fn = cmd_scope,
    .summary = "move a scope whose key changed",
    .synopsis = {"move OLD"},
    .text =
        "Move the scope whose key is OLD (as pigeon agents or an error names it: a root path, or on PostgreSQL an origin remote's key) to the key of this scope (the working directory's, or --project's): every agent, message, lease, baton and journal entry follows. For a repository whose key changed, e.g. when an origin remote was added on PostgreSQL, or one that was moved on disk. Refused, changing nothing, when this scope's key already has a scope (retire its agents first, or keep both), when OLD holds live leases, or for the global scope.",
    .common = CLI_DB | CLI_PROJECT,
    .verbs = "move",
};

int
cmd_scope(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_scope};
	pgn_status st;
	int code;

	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind == argc)
		return cli_usage(&c, "say move");
	if (strcmp(argv[optind], "move") != 0)
		return cli_usage(&c, "unknown action '%s': say move",
		    argv[optind]);
	if (argc - optind != 2)
		return cli_usage(&c, "scope move takes OLD");
	c.existing = 1; /* a scope to move is in a database that exists */
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	st = pgn_scope_move(c.db, argv[optind + 1]);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	printf("moved scope '%s' to '%s'\n", cli_safe(argv[optind + 1]),
	    cli_safe(pgn_db_scope(c.db)));
	code = cli_finish(EXIT_OK);
out:
	cli_close(&c);
	return code;
}
