/*
 * pigeon-hook: the process AI coding hosts run on session start and on
 * every prompt. Maps argv to hook_run(); the exit code is 0, or 2 when
 * the idle wake (--rewake) hands Claude mail on stderr.
 */
#include <stdio.h>
#include <unistd.h>

#include "help.h"
#include "hookio.h"

int
main(int argc, char **argv)
{
	struct hook_opts o;
	int r;

	pgn_single_threaded(); /* no threads here: no SQLite mutexes */
	r = hook_parse_args(&o, argc, argv, stdout);
	if (r == 1)
		return HOOK_EXIT_OK; /* help */
	if (r < 0)
		fprintf(stderr, "pigeon-hook: %s; see pigeon-hook --help\n",
		    o.why);
	/*
	 * A host always pipes a payload in: standard input on a terminal is
	 * a person trying it by hand, who gets the usage, not a silent wait.
	 */
	if (isatty(STDIN_FILENO)) {
		fputs(
		    "pigeon-hook: hosts run this with their JSON payload on standard input; it is not for a terminal\n\n",
		    stderr);
		cli_help_cmd(stderr, "pigeon-hook", &cli_hook_help);
		return HOOK_EXIT_USAGE;
	}
	if (r == 0 && o.rewake)
		return hook_rewake(&o, STDIN_FILENO, STDERR_FILENO);
	return hook_run(&o, STDIN_FILENO, STDOUT_FILENO, r < 0 ? o.why : NULL);
}
