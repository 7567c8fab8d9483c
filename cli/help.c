/*
 * --help of every command, from the command's struct cli_cmd (help.h):
 * the synopsis, the text wrapped to CLI_HELP_WIDTH, the options. The man
 * pages (gen_docs.c) carry the same words, so tests compare the two.
 */
#include <string.h>

#include "pigeon/pigeon.h"
#include "pigeon/hosts.h"

#include "cli.h"
#include "help.h"

#define OPT_COLUMN 21 /* an option's description starts here */

const struct cli_opt cli_common_opts[] = {
    {"db", OPT_DB, "PATH", CLI_K_FILE, NULL,
        "use the database at PATH (default: $PIGEON_DB, else pigeon.db in the state directory); a missing file is created, not its directory, except by watch, doctor and agents --names, which never create one"},
    {"project", OPT_PROJECT, "DIR", CLI_K_DIR, NULL,
        "act in the scope of DIR instead of the working directory's"},
    {"json", OPT_JSON, NULL, CLI_K_NONE, NULL,
        "print data as JSON: one compact value and a newline, never coloured"},
    {"color", OPT_COLOR, "WHEN", CLI_K_WORDS, "auto always never",
        "colour the output: auto (the default: only on a terminal, and not with NO_COLOR set), always or never"},
    {"help", 'h', NULL, CLI_K_NONE, NULL, "print this help and exit 0"},
    {NULL, 0, NULL, CLI_K_NONE, NULL, NULL}};

const char cli_main_text[] =
    "Pigeon is a mailbox for AI coding agents working side by side on one machine. An agent or a person sends a short message, a ping, to another agent by name; the recipient's host runs pigeon-hook on session start, on every prompt, after each tool call and before a stop, and the hook claims the queued messages and gives them to the model, exactly once. Every delivery is recorded in a tamper-evident audit and in the recipient's journal.\n\n"
    "Agents and messages belong to a scope: the root of the main worktree of the git repository around the working directory, or the global scope outside any repository. There is no daemon: the database file is the broker.";

const char cli_exit_text[] =
    "0 ok; 1 a runtime failure; 2 usage or bad input; 3 a wait that timed out. Every error is one line on standard error saying what was wrong and what to do.";

const char cli_env_text[] =
    "PIGEON_HOME is the state directory (default: $XDG_STATE_HOME/pigeon, else ~/.local/state/pigeon), mode 0700: pigeon.db, key, hook.log. PIGEON_DB names another database. PIGEON_AGENT is the default sender of send and the default --agent of inbox, read and wait; inside a session bound to an agent (PIGEON_SESSION) that agent is the sender, and --from may name only it. PIGEON_HOOK names the pigeon-hook install registers. NO_COLOR turns colour off unless --color says otherwise.";

const char cli_hook_env_text[] =
    "PIGEON_AGENT names the agent a new session binds to (it wins over --agent). PIGEON_HOME and PIGEON_DB as for pigeon(1).";

int
cli_has_opt(const struct cli_cmd *def, const char *name)
{
	size_t i;

	for (i = 0; i < CLI_MAX_OPTS && def->opts[i].name != NULL; i++)
		if (strcmp(def->opts[i].name, name) == 0)
			return 1;
	return 0;
}

int
cli_shows_common(const struct cli_cmd *cmd, const struct cli_opt *o)
{
	if (cli_has_opt(cmd, o->name))
		return 0; /* the command's own meaning wins */
	switch (o->id) {
	case OPT_DB:
		return (cmd->common & CLI_DB) != 0;
	case OPT_PROJECT:
		return (cmd->common & CLI_PROJECT) != 0;
	case OPT_JSON:
		return (cmd->common & CLI_JSON) != 0;
	case OPT_COLOR:
		return (cmd->common & CLI_COLOR) != 0;
	default:
		return 1;
	}
}

void
cli_opt_label(const struct cli_opt *o, char *buf, size_t len)
{
	if (o->id == 'h')
		snprintf(buf, len, "-h, --help");
	else if (o->id < 128 && o->id > ' ')
		snprintf(buf, len, "--%s%s%s, -%c", o->name, o->arg ? " " : "",
		    o->arg ? o->arg : "", o->id);
	else
		snprintf(buf, len, "--%s%s%s", o->name, o->arg ? " " : "",
		    o->arg ? o->arg : "");
}

/*
 * Print 'n' bytes of 'text' filled to CLI_HELP_WIDTH: the first line
 * from column 'col' (the caller printed up to it), the others indented
 * by 'indent'.
 */
void
cli_help_fill(FILE *f, const char *text, size_t n, size_t col, size_t indent)
{
	const char *p = text, *end = text + n, *w;
	size_t len;
	int first = 1, depth;

	while (p < end) {
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		/* "[--format F]" is one word: a synopsis breaks between */
		for (w = p, depth = 0; w < end && (*w != ' ' || depth > 0); w++)
			depth += *w == '['         ? 1 :
			    *w == ']' && depth > 0 ? -1 :
			                             0;
		len = (size_t)(w - p);
		if (!first && col + 1 + len > CLI_HELP_WIDTH) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
			first = 1;
		}
		if (!first) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, len, f);
		col += len;
		first = 0;
		p = w;
	}
	fputc('\n', f);
}

/* Paragraphs: filled, or (a line starting with two spaces) as they are. */
void
cli_help_text(FILE *f, const char *text)
{
	const char *p = text, *end;

	while (*p != '\0') {
		end = strstr(p, "\n\n");
		if (end == NULL)
			end = p + strlen(p);
		if (p[0] == ' ' && p[1] == ' ') {
			fwrite(p, 1, (size_t)(end - p), f);
			fputc('\n', f);
		} else {
			cli_help_fill(f, p, (size_t)(end - p), 0, 0);
		}
		p = *end != '\0' ? end + 2 : end;
		if (*p != '\0')
			fputc('\n', f);
	}
}

void
cli_help_opt(FILE *f, const struct cli_opt *o)
{
	char label[96];
	size_t n;

	cli_opt_label(o, label, sizeof(label));
	n = strlen(label);
	fprintf(f, "  %s", label);
	if (2 + n + 2 > OPT_COLUMN) {
		fprintf(f, "\n%*s", OPT_COLUMN, "");
	} else {
		fprintf(f, "%*s", (int)(OPT_COLUMN - 2 - n), "");
	}
	cli_help_fill(f, o->help, strlen(o->help), OPT_COLUMN, OPT_COLUMN);
}

/* The synopsis lines of 'cmd'; 'first': this is the first line printed. */
static void
synopsis_of(FILE *f, const char *prog, const struct cli_cmd *cmd, int first)
{
	char lead[64];
	size_t i, n;

	for (i = 0; i < CLI_MAX_SYNOPSIS && cmd->synopsis[i] != NULL; i++) {
		if (strcmp(prog, cmd->name) == 0)
			n = (size_t)snprintf(lead, sizeof(lead), "%s", prog);
		else
			n = (size_t)snprintf(lead, sizeof(lead), "%s %s", prog,
			    cmd->name);
		fprintf(f, "%s%s", first && i == 0 ? "usage: " : "       ",
		    lead);
		if (cmd->synopsis[i][0] != '\0') {
			fputc(' ', f);
			cli_help_fill(f, cmd->synopsis[i],
			    strlen(cmd->synopsis[i]), 7 + n + 1, 7 + n + 1);
		} else {
			fputc('\n', f);
		}
	}
}

/* The command's forms, then its other forms' ('install instructions'). */
static void
synopsis(FILE *f, const char *prog, const struct cli_cmd *cmd)
{
	size_t i;

	synopsis_of(f, prog, cmd, 1);
	for (i = 0; i < CLI_MAX_FORMS && cmd->forms[i] != NULL; i++)
		synopsis_of(f, prog, cmd->forms[i], 0);
}

const struct pgn_host_info *
cli_hook_host(int h)
{
	const struct pgn_host_info *hi;

	hi = pgn_host_get((pgn_host)h);
	if (hi == NULL || (PGN_MECH_HOOK & PGN_MECH_BIT(hi->mechanism)) == 0)
		return NULL;
	return hi;
}

static void
host_events(FILE *f)
{
	const struct pgn_host_info *hi;
	int h, e, col;

	fputs("  HOST EVENT\n", f);
	for (h = 0; h < PGN_NHOSTS; h++) {
		if ((hi = cli_hook_host(h)) == NULL)
			continue;
		col = fprintf(f, "    %-7s", hi->name);
		for (e = 0; e < PGN_NEVENTS; e++) {
			if (hi->events[e] == NULL)
				continue;
			/* Within 80 columns: a long list goes on, indented. */
			if (col + 1 + (int)strlen(hi->events[e]) > 79)
				col = fprintf(f, "\n%12s", "") - 1;
			col += fprintf(f, " %s", hi->events[e]);
		}
		fputc('\n', f);
	}
}

void
cli_help_cmd(FILE *f, const char *prog, const struct cli_cmd *cmd)
{
	const struct cli_opt *o;
	size_t i;

	synopsis(f, prog, cmd);
	fputc('\n', f);
	cli_help_text(f, cmd->text);
	if (cmd->host_events) {
		fputc('\n', f);
		host_events(f);
	}
	fputc('\n', f);
	for (i = 0; i < CLI_MAX_OPTS && cmd->opts[i].name != NULL; i++)
		cli_help_opt(f, &cmd->opts[i]);
	for (o = cli_common_opts; o->name != NULL; o++)
		if (cli_shows_common(cmd, o))
			cli_help_opt(f, o);
}
