/*
 * Shared plumbing of the pigeon CLI: common options, opening the
 * database in the caller's scope, error lines and exit codes, output.
 */
#ifndef PGN_CLI_H
#define PGN_CLI_H

#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "pigeon/pigeon.h"

#define EXIT_OK      0
#define EXIT_FAIL    1 /* runtime failure */
#define EXIT_USAGE   2 /* usage or bad input */
#define EXIT_TIMEOUT 3 /* a wait ended with no message */
/* stdout's reader went away: quiet, the status a shell shows for SIGPIPE */
#define EXIT_PIPE 141

/* Options every command takes; ids above any short option. */
enum {
	OPT_DB = 256,
	OPT_PROJECT,
	OPT_JSON,
	OPT_COLOR,
	OPT_CMD /* first id free for a command's own options */
};

#include "help.h"

struct cli {
	const struct cli_cmd *def; /* the command: its options and help */
	const char *cmd;           /* "send", "agent add", ...: def->name */
	const char *db_flag;       /* --db */
	const char *project;       /* --project */
	int json;
	int help;
	int color;    /* CLI_COLOR_*: --color as given */
	int existing; /* cli_open: never create the database */
	pgn_db *db;
	char *scope;
};

#define CLI_NCOMMON 5 /* cli_common_opts: db, project, json, color, help */

/* --color WHEN; colour is on only as cli_color_setup decided. */
enum { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER };
enum cli_sgr {
	CLI_SGR_RESET,
	CLI_SGR_BOLD,
	CLI_SGR_DIM,
	CLI_SGR_OK,
	CLI_SGR_WARN,
	CLI_SGR_BAD,
	CLI_SGR_NAME
};
/* Take --color's value: 0, or -1 for a value that is none of the three. */
int cli_color_arg(struct cli *c, const char *arg);
/*
 * Decide once options are parsed: never with --json or --color=never;
 * always with --color=always; else only when stdout is a terminal,
 * NO_COLOR is unset or empty and TERM is not "dumb".
 */
void cli_color_setup(const struct cli *c);
int cli_color_on(void);
/* The escape sequence for 'what', or "" when colour is off. */
const char *cli_sgr(enum cli_sgr what);

/*
 * Common options given before the command ("pigeon --json agents", as
 * git and docker take them): main.c fills this, cli_parse applies it
 * before the command's own options, which win. NULL/0: not given.
 */
struct cli_global {
	const char *db;
	const char *project;
	const char *color;
	int json;
};
extern struct cli_global cli_global;
/*
 * Take the common options before the command from argv[1..]: the index
 * of the command word (argc when there is none), or -1 after a usage
 * line for an option that is not one of them or lacks its argument.
 */
int cli_global_parse(int argc, char **argv);

/* Take a common option; 1 if it was one, 0 otherwise. */
int cli_common(struct cli *c, int ch, const char *arg);

/*
 * Parse argv with getopt_long over c->def's options and the common ones
 * (help.h): common options are taken here, others go to 'fn' (which
 * returns 0 to accept, or an exit code). Returns -1 to go on, or an
 * exit code (help printed: 0; misuse: 2). 'argv[optind]' is the first
 * operand on return.
 */
typedef int cli_opt_fn(struct cli *c, int ch, const char *arg, void *arg2);
int cli_parse(struct cli *c, int argc, char **argv, cli_opt_fn *fn, void *arg);

/* Open the database (creating it) and select the scope; exit code. */
int cli_open(struct cli *c);
/* After cli_open: the automatic prune, once a day (decision 0228). */
void cli_autoprune(struct cli *c);
void cli_close(struct cli *c);

/* "pigeon: <fmt>" on stderr; returns 'code'. */
int cli_err(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Usage error: the line, then "try 'pigeon CMD --help'"; returns 2. */
int cli_usage(struct cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Report a library failure; 2 for bad input, 1 otherwise. */
int cli_fail(struct cli *c, pgn_status st);
/* --since T and --limit K, checked: 0, or the usage exit code. */
int cli_since(struct cli *c, const char *arg, int64_t *ms);
int cli_limit(struct cli *c, const char *arg, size_t *n);
/*
 * The text of a message or baton into 'buf' (NUL-terminated, '*len'
 * bytes): argv[first..argc) joined by spaces, or standard input when
 * there are none or the one is "-" (its final newlines dropped: they
 * are framing). At most cap - 1 bytes are read, so a caller whose cap
 * is past its limit sees an over-long text as such. EXIT_OK, or the
 * exit code of a failed read (reported).
 */
int cli_read_text(int argc, char **argv, int first, char *buf, size_t cap,
    size_t *len);
/*
 * Bytes of a text buffer past the text's limit: room for 65 final
 * newlines, which are dropped, and the NUL. A text that fills the buffer
 * is over its limit whatever its newlines.
 */
#define CLI_TEXT_SLACK 66
/* The library's last error on 'db' with its remedy in CLI terms (static). */
const char *cli_errmsg(const pgn_db *db);
/* The same for an error of a function without a handle (decision 0146). */
const char *cli_errtext(const struct pgn_err *err);

/* The agent named by 'flag' or $PIGEON_AGENT; NULL after an error line. */
const char *cli_agent(struct cli *c, const char *flag);

/* Print a JSON value compactly with a newline, then delete it. */
/*
 * 'arr' with 'item' added; when either is NULL (out of memory, or a
 * message over PGN_MAX_MSG_JSON), both are freed and NULL returned, so
 * the printed list never silently lacks one.
 */
cJSON *cli_json_push(cJSON *arr, cJSON *item);
int cli_json_print(cJSON *v);
cJSON *cli_json_time(cJSON *obj, const char *key, int64_t ms);

/*
 * 's' made safe for a terminal on one line (pgn_text_safe): for text that
 * came from outside, in printf arguments. Valid for CLI_SAFE_SLOTS (8)
 * more calls; never pass it to cli_err, which escapes its whole line.
 */
const char *cli_safe(const char *s);
/* Make every string of a JSON document safe for text output, in place. */
void cli_json_safe(cJSON *v);

/* Human output: a message header and its body, escaped, each line indented. */
void cli_print_body(FILE *f, const char *body);
void cli_print_msg(FILE *f, const struct pgn_msg *m, int64_t now);
void cli_age(int64_t ms, int64_t now, char *buf, size_t len);

/*
 * The absolute path of pigeon-hook: $PIGEON_HOOK, else next to this
 * binary. '*hook' is the caller's; returns an exit code after a line.
 */
int cli_find_hook(struct cli *c, char **hook);

/*
 * Flush stdout. A closed pipe returns EXIT_PIPE without a word; any
 * other write error (full disk) is a one-line error and EXIT_FAIL.
 */
int cli_finish(int code);

/* "pigeon 0.1.0 (git ...)": --version, doctor. */
const char *cli_version_line(void);

int cmd_send(int argc, char **argv);
int cmd_inbox(int argc, char **argv);
int cmd_read(int argc, char **argv);
int cmd_agents(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_scope(int argc, char **argv);
int cmd_group(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_journal(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_provider(int argc, char **argv);
int cmd_install(int argc, char **argv);
int cmd_uninstall(int argc, char **argv);
/* install | uninstall instructions (cmd_instructions.c) */
int cmd_install_instructions(int argc, char **argv);
int cmd_hosts(int argc, char **argv);
int cmd_uninstall_instructions(int argc, char **argv);
/*
 * pigeon uninstall --all (cmd_install.c): every registration of
 * $PIGEON_HOME/installs, then every hook host's user config; exit code.
 */
int cli_uninstall_all(int dry_run, int no_permissions);
int cmd_wait(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_ack(int argc, char **argv);
int cmd_thread(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_wake(int argc, char **argv);
int cmd_web(int argc, char **argv);
int cmd_transcript(int argc, char **argv);
int cmd_handoff(int argc, char **argv);
/* pigeon lease take|release|list (cmd_lease.c) */
int cmd_lease(int argc, char **argv);
extern const struct cli_cmd cli_cmd_lease;
extern const struct cli_cmd cli_cmd_scope;
/* pigeon mcp (cmd_mcp.c, docs/mcp.md) */
int cmd_mcp(int argc, char **argv);
extern const struct cli_cmd cli_cmd_mcp;
/*
 * install | uninstall: register pigeon mcp in host h's MCP config (or
 * take it away) into 'res' (pigeon/setup.h); an exit code, and the
 * reason in 'err' on failure (not printed, but for its own path: uninstall says
 * it after the hooks). cli_mcp_print prints what it did; 1 if anything changes.
 */
struct pgn_mcp_reg_result;
int cli_mcp_apply(pgn_host h, const char *project, int remove, int dry_run,
    struct pgn_mcp_reg_result *res, struct pgn_err *err);
int cli_mcp_print(const struct pgn_mcp_reg_result *res, pgn_host h, int remove,
    int dry_run);
/* doctor: "mcp": {"path", "registered"} of host h into 'o' (if any). */
void cli_mcp_doctor(cJSON *o, pgn_host h, const char *project);
/*
 * handoff --digest (cmd_transcript.c): append to text[0..*len) a blank
 * line and the digest of the current session ('session', else the
 * latest of 'agent'), the whole within 'cap' bytes ('text' holds cap + 1).
 * An exit code, after a line on failure.
 */
int cli_digest_append(struct cli *c, const char *session, const char *agent,
    char *text, size_t *len, size_t cap);

/* Each command's help and options, next to its code (help.h). */
extern const struct cli_cmd cli_cmd_send, cli_cmd_inbox, cli_cmd_read,
    cli_cmd_wait, cli_cmd_status, cli_cmd_agents, cli_cmd_agent, cli_cmd_audit,
    cli_cmd_journal, cli_cmd_install, cli_cmd_uninstall, cli_cmd_doctor,
    cli_cmd_provider, cli_cmd_install_instructions,
    cli_cmd_uninstall_instructions, cli_cmd_transcript, cli_cmd_handoff,
    cli_cmd_hosts, cli_cmd_watch, cli_cmd_ack, cli_cmd_thread, cli_cmd_group,
    cli_cmd_search, cli_cmd_web, cli_cmd_wake;

/* A message's status (cmd_wait.c): one line (its JSON: pgn_msg_status_json). */
void cli_print_status(const struct pgn_msg_status *s, int64_t now);
/*
 * A duration option ("90s", "15m", "2h", "7d") 'name' within [min, max]
 * ms into '*ms': 0, or the usage exit code after its line.
 */
int cli_duration(struct cli *c, const char *name, const char *arg, int64_t min,
    int64_t max, int64_t *ms);

/* --timeout S of wait and send --wait-reply: 0, or the usage exit code. */
int cli_timeout(struct cli *c, const char *arg, int64_t *ms);
/*
 * Wait as 'w' says (cmd_wait.c) and print what it claimed as pigeon read
 * does; an exit code: EXIT_TIMEOUT after a line, 128 + N on signal N.
 */
int cli_wait_print(struct cli *c, struct pgn_wait *w);

#endif
