/*
 * pigeon wake: ring, on this machine, the doorbells that sends from other
 * machines leave (PostgreSQL, decision 0210). A send rings only a
 * session of its own machine; this command, run on the session's
 * machine, listens for queued mail and rings as the send would have.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

enum { OPT_FOLLOW = OPT_CMD };

const struct cli_cmd cli_cmd_wake = {
    .name = "wake",
    .fn = cmd_wake,
    .summary = "ring this machine's idle sessions for mail sent elsewhere",
    .synopsis = {"[--follow]"},
    .text =
        "On a PostgreSQL store shared by several machines: ring the doorbell of this machine's idle sessions (Claude Code's messaging socket) for mail queued from other machines, as a send on this machine does for its own (never for low priority, nor where reach.wake is off; one ring outstanding per session; counted by the governor). A send rings only sessions of the machine it runs on, so each machine whose sessions should be woken by the others runs pigeon wake --follow. Without --follow it looks once at each agent's newest queued message. With --follow it listens (LISTEN/NOTIFY) and rings as each message comes, until SIGINT or SIGTERM; it prints one line when it is listening and one per ring. A SQLite store needs none of this: its one machine is the sender's.",
    .opts = {{"follow", OPT_FOLLOW, NULL, CLI_K_NONE, NULL,
        "keep listening, ringing as mail comes"}},
    .common = CLI_DB | CLI_PROJECT,
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	int *follow = p;

	(void)arg;
	if (ch == OPT_FOLLOW) {
		*follow = 1;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

static void
said(size_t rung)
{
	if (rung > 0)
		printf("rang %zu session%s\n", rung, rung == 1 ? "" : "s");
	(void)fflush(stdout);
}

int
cmd_wake(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_wake};
	struct sigaction sa;
	pgn_status st;
	size_t rung = 0;
	int code, follow = 0;

	code = cli_parse(&c, argc, argv, opt, &follow);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "wake takes no operands");
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (follow) {
		/* No SA_RESTART: a signal ends the sleep at once. */
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	st = pgn_wake_listen(c.db, &rung);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	if (follow)
		printf("listening for mail to this machine's sessions\n");
	else if (rung == 0)
		printf("rang nothing\n");
	said(rung);
	while (follow && !stop) {
		st = pgn_wake_next(c.db, PGN_WAKE_FOLLOW_TICK_MS, &rung);
		if (st != PGN_OK) {
			code = cli_fail(&c, st);
			goto out;
		}
		said(rung);
	}
	code = cli_finish(EXIT_OK);
out:
	cli_close(&c);
	return code;
}
