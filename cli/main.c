/*
 * pigeon: the command-line interface to the mailbox. Maps argv to a
 * command (commands.c); each command maps library statuses to exit
 * codes.
 */
#include <signal.h>
#include <string.h>

#include "cli.h"

int
main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	int first;

	/* A closed pipe is a write error we report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	pgn_single_threaded(); /* no threads here: no SQLite mutexes */
	if (argc < 2) {
		cli_help_main(stderr);
		return EXIT_USAGE;
	}
	/* Common options may come first, as in git and docker. */
	first = cli_global_parse(argc, argv);
	if (first < 0)
		return EXIT_USAGE;
	if (first == argc)
		return cli_err(EXIT_USAGE,
		    "a command must follow '%s'; see 'pigeon --help'",
		    argv[argc - 1]);
	argc -= first - 1;
	argv += first - 1;
	if (strcmp(argv[1], "--version") == 0) {
		puts(cli_version_line());
		return cli_finish(EXIT_OK);
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    (strcmp(argv[1], "help") == 0 && argc == 2)) {
		cli_help_main(stdout);
		return cli_finish(EXIT_OK);
	}
	if (strcmp(argv[1], "help") == 0) {
		if (argc > 3)
			return cli_err(EXIT_USAGE,
			    "help takes one COMMAND; see 'pigeon --help' for the commands");
		cmd = cli_command(argv[2]);
		if (cmd == NULL)
			return cli_err(EXIT_USAGE,
			    "unknown command '%s'; see 'pigeon --help'",
			    argv[2]);
		cli_help_cmd(stdout, "pigeon", cmd);
		return cli_finish(EXIT_OK);
	}
	cmd = cli_command(argv[1]);
	if (cmd != NULL)
		return cmd->fn(argc - 1, argv + 1);
	return cli_err(EXIT_USAGE, "unknown command '%s'; see 'pigeon --help'",
	    argv[1]);
}
