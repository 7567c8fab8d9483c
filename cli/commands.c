/*
 * The commands of pigeon, in the order 'pigeon --help' lists them. A new
 * command: its struct cli_cmd next to its code, declared in cli.h, one
 * line here (docs/decisions/0120).
 */
#include <string.h>

#include "cli.h"

const struct cli_cmd *const cli_commands[] = {
    &cli_cmd_send,
    &cli_cmd_inbox,
    &cli_cmd_read,
    &cli_cmd_wait,
    &cli_cmd_status,
    &cli_cmd_ack,
    &cli_cmd_thread,
    &cli_cmd_agents,
    &cli_cmd_agent,
    &cli_cmd_scope,
    &cli_cmd_group,
    &cli_cmd_audit,
    &cli_cmd_search,
    &cli_cmd_journal,
    &cli_cmd_handoff,
    &cli_cmd_lease,
    &cli_cmd_mcp,
    &cli_cmd_transcript,
    &cli_cmd_install,
    &cli_cmd_uninstall,
    &cli_cmd_doctor,
    &cli_cmd_hosts,
    &cli_cmd_provider,
    &cli_cmd_watch,
    &cli_cmd_wake,
    &cli_cmd_web,
};

const size_t cli_ncommands = sizeof(cli_commands) / sizeof(cli_commands[0]);

const struct cli_cmd *
cli_command(const char *name)
{
	size_t i;

	for (i = 0; i < cli_ncommands; i++)
		if (strcmp(cli_commands[i]->name, name) == 0)
			return cli_commands[i];
	return NULL;
}

void
cli_help_main(FILE *f)
{
	const struct cli_opt *o;
	size_t i;

	fputs("usage: pigeon [COMMON OPTIONS] COMMAND [OPTIONS] [ARGS]\n"
	      "       pigeon help COMMAND\n"
	      "       pigeon --version\n\n",
	    f);
	cli_help_text(f, cli_main_text);
	fputs("\ncommands:\n", f);
	for (i = 0; i < cli_ncommands; i++)
		fprintf(f, "  %-11s%s\n", cli_commands[i]->name,
		    cli_commands[i]->summary);
	fputs("\ncommon options:\n", f);
	for (o = cli_common_opts; o->name != NULL; o++)
		cli_help_opt(f, o);
	fputs("\nenvironment:\n  ", f);
	cli_help_fill(f, cli_env_text, strlen(cli_env_text), 2, 2);
	fputs("\nexit codes:\n  ", f);
	cli_help_fill(f, cli_exit_text, strlen(cli_exit_text), 2, 2);
	fputs(
	    "\n'pigeon help COMMAND' or 'pigeon COMMAND --help' describes one command.\n",
	    f);
}
