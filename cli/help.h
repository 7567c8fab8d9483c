/*
 * The one help source of pigeon and pigeon-hook (docs/decisions/0120).
 * Each command describes itself in one struct cli_cmd next to its code:
 * name, summary, synopsis, text and options. From it come the getopt
 * table (cli_parse), --help and 'pigeon help CMD', and, at build time
 * (gen_docs.c), the man pages and the bash, zsh and fish completions.
 */
#ifndef PGN_HELP_H
#define PGN_HELP_H

#include <stddef.h>
#include <stdio.h>
#include "pigeon/hosts.h"

#define CLI_MAX_SYNOPSIS 4  /* synopsis lines of one command */
#define CLI_MAX_OPTS     16 /* options of one command, common ones aside */
#define CLI_HELP_WIDTH   79 /* --help wraps its text before this column */
#define CLI_MAX_FORMS                                                          \
	2 /* other forms of one command ("install instructions") */

/* What an option's argument or an operand completes to. */
enum cli_kind {
	CLI_K_NONE,   /* free text (a number, a message): nothing */
	CLI_K_AGENT,  /* an agent of the scope: pigeon agents --names */
	CLI_K_AGENTS, /* comma-separated agents */
	CLI_K_HOST,   /* a host of the host table (pgn_host_get) */
	CLI_K_FILE,
	CLI_K_DIR,
	CLI_K_WORDS /* one of the option's 'words' */
};

struct cli_opt {
	const char *name; /* long name without "--"; NULL ends the list */
	int id;           /* getopt's value; a letter is also -LETTER */
	const char *arg;  /* the argument's name ("NAME"), NULL: a flag */
	enum cli_kind kind;
	const char *words; /* CLI_K_WORDS: the choices, space-separated */
	const char *help;  /* what it does, one sentence, unwrapped */
};

/* The common options a command uses (its --help lists them). */
#define CLI_DB      (1u << 0)
#define CLI_PROJECT (1u << 1)
#define CLI_JSON    (1u << 2)
#define CLI_COLOR   (1u << 3)

struct cli_cmd {
	const char *name; /* "send"; for pigeon-hook the program */
	int (*fn)(int argc, char **argv);
	const char *summary; /* one line for the command list, no period */
	/* What follows "pigeon NAME", one line per form, unwrapped */
	const char *synopsis[CLI_MAX_SYNOPSIS];
	/*
	 * Paragraphs separated by a blank line, unwrapped. A line that
	 * starts with two spaces is kept as it is (a table).
	 */
	const char *text;
	struct cli_opt opts[CLI_MAX_OPTS];
	unsigned common; /* CLI_DB | ...: shown in this command's help */
	/* Completion: the words of a first operand ("add rename rm"), then
	 * what every later operand completes to. */
	const char *verbs;
	enum cli_kind operand;
	int host_events; /* 1: list each host's events (pigeon-hook) */
	/*
	 * Other forms of the command, each a command of its own named
	 * "install instructions": their first word is taken before HOST.
	 */
	const struct cli_cmd *forms[CLI_MAX_FORMS];
};

/* pigeon's commands, in the order pigeon --help lists them (commands.c). */
extern const struct cli_cmd *const cli_commands[];
extern const size_t cli_ncommands;
/* pigeon-hook's own help (hookcli/hook_help.c). */
extern const struct cli_cmd cli_hook_help;

/* The options every pigeon command takes, -h/--help last. */
extern const struct cli_opt cli_common_opts[];

const struct cli_cmd *cli_command(const char *name);
/*
 * Row 'h' of the host table if pigeon-hook serves it (a command or a
 * plugin: PGN_MECH_HOOK), else NULL: the HOST of install and the hook.
 */
const struct pgn_host_info *cli_hook_host(int h);
/* 1 if 'cmd's help lists common option 'o' (help.c). */
int cli_shows_common(const struct cli_cmd *cmd, const struct cli_opt *o);
/* 1 if 'def' has an option of its own called 'name'. */
int cli_has_opt(const struct cli_cmd *def, const char *name);

/*
 * Text output. 'prog' is "pigeon" or "pigeon-hook". Every --help comes
 * from here; gen_docs.c writes the same words as roff.
 */
void cli_help_cmd(FILE *f, const char *prog, const struct cli_cmd *cmd);
void cli_help_main(FILE *f); /* commands.c */
/* Pieces of it: one option's line; paragraphs; 'n' bytes filled from
 * column 'col', later lines indented by 'indent'. */
void cli_help_opt(FILE *f, const struct cli_opt *o);
void cli_help_text(FILE *f, const char *text);
void cli_help_fill(FILE *f, const char *text, size_t n, size_t col,
    size_t indent);

/* The label of an option as help shows it: "--to NAME,...", "--follow, -f". */
void cli_opt_label(const struct cli_opt *o, char *buf, size_t len);

/* The program's description, environment and exit codes (help.c). */
extern const char cli_main_text[];
extern const char cli_exit_text[];
extern const char cli_env_text[];
extern const char cli_hook_env_text[];

#endif
