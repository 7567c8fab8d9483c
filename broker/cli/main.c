/*
 * pigeon: the command-line interface to the mailbox. Maps argv to a
 * command; each command maps library statuses to exit codes.
 */
#include <signal.h>
#include <string.h>

#include "cli.h"

static const struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
} commands[] = {
    {"send", cmd_send, "queue a message for one or more agents"},
    {"inbox", cmd_inbox, "list an agent's queued messages"},
    {"read", cmd_read, "claim and print an agent's queued messages"},
    {"wait", cmd_wait, "wait for a message, then claim and print it"},
    {"status", cmd_status, "where sent messages stand: queued or delivered"},
    {"agents", cmd_agents, "list the agents of the scope"},
    {"agent", cmd_agent, "add, rename or remove an agent"},
    {"audit", cmd_audit, "inspect deliveries; verify the hash chain"},
    {"journal", cmd_journal, "one agent's journal"},
    {"transcript", cmd_transcript, "the digest of a session's transcript"},
    {"install", cmd_install, "register Pigeon's hooks with a host"},
    {"uninstall", cmd_uninstall, "remove Pigeon's hooks from a host"},
    {"doctor", cmd_doctor, "check hooks, database and hook log"},
    {"provider", cmd_provider, "approve the project's prompt-context provider"},
};

static int
usage(FILE *f, int code)
{
	size_t i;

	fputs("usage: pigeon COMMAND [OPTIONS] [ARGS]\n\n"
	      "Pigeon is a mailbox for AI coding agents on one machine.\n\n"
	      "commands:\n",
	    f);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name,
		    commands[i].summary);
	fputs("\ncommon options: --db PATH, --project DIR, --json, -h/--help\n"
	      "'pigeon COMMAND --help' describes one command.\n",
	    f);
	return code;
}

int
main(int argc, char **argv)
{
	size_t i;

	/* A closed pipe is a write error we report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	pgn_single_threaded(); /* no threads here: no SQLite mutexes */
	if (argc < 2)
		return usage(stderr, EXIT_USAGE);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0)
		return cli_finish(usage(stdout, EXIT_OK));
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	return cli_err(EXIT_USAGE, "unknown command '%s'; see 'pigeon --help'",
	    argv[1]);
}
