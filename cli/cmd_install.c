/* pigeon install | uninstall: register or remove Pigeon's hooks in a host. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/setup.h"

enum {
	OPT_USER = OPT_CMD,
	OPT_DRY_RUN,
	OPT_NO_PERMISSIONS,
	OPT_REWAKE,
	OPT_NO_REWAKE,
	OPT_ALL,
	OPT_NO_MCP
};

const struct cli_cmd cli_cmd_install = {
    .name = "install",
    .fn = cmd_install,
    .summary = "register Pigeon's hooks with a host",
    .synopsis =
        {"HOST [--user | --project DIR] [--dry-run] [--no-permissions] [--rewake | --no-rewake] [--no-mcp]"},
    .text =
        "Register Pigeon's hook (session start, prompt submit, after each tool call, before a stop, and before each tool call, where path leases are enforced) in the config of HOST: cursor, claude, codex, gemini or copilot; for opencode, write Pigeon's plugin (below). Every byte outside Pigeon's own entries stays as it was (numbers, comments, indentation, line endings); Pigeon's old entries are replaced; the file is written atomically (in place if it has hard links), with FILE.pigeon.bak of the first original next to it. Installing twice changes nothing.\n\n"
        "It also lets HOST's agent run pigeon send, read, wait, status, ack, lease and thread without an approval prompt and inside its default sandbox:\n\n"
        "  claude   permissions.allow rules \"Bash(PIGEON send:*)\" (and read,\n"
        "           wait, status, ack, lease, thread) in the same settings.json,\n"
        "           PIGEON as the hook names it to the agent, and the same\n"
        "           rules for plain pigeon, as the instructions write it\n"
        "  codex    Pigeon's state directory in [sandbox_workspace_write]\n"
        "           writable_roots of config.toml beside hooks.json\n"
        "  gemini   the policy ~/.gemini/policies/pigeon.toml (user only:\n"
        "           Gemini CLI does not read project policies)\n"
        "  cursor   none: allow the commands in Cursor's own settings\n"
        "  copilot  none: start copilot with --allow-tool 'shell(pigeon:*)'\n"
        "  opencode none: its default permissions allow them\n\n"
        "opencode has no command hooks: install writes the plugin ~/.config/opencode/plugin/pigeon.js ($XDG_CONFIG_HOME/opencode/...; DIR/.opencode/plugin/pigeon.js with --project), which runs pigeon-hook at session start, on each message, before and after each tool and when the session goes idle, each call under its own 5 s timeout. A pigeon.js that is not Pigeon's, or a plugin directory that is a symbolic link or read-only, is refused.\n\n"
        "It also registers pigeon mcp, the mailbox as MCP tools (pigeon mcp --help), in HOST's MCP configuration, byte-exact, and pre-approves exactly its tools where the host allows: claude: mcpServers.pigeon in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json; DIR/.mcp.json with --project) and \"mcp__pigeon\" in permissions.allow of its settings.json; codex: a [mcp_servers.pigeon] table in config.toml with env_vars for PIGEON_* and default_tools_approval_mode = \"approve\" (user only); gemini: mcpServers.pigeon with \"trust\": true in settings.json; cursor: ~/.cursor/mcp.json and \"pigeon:*\" in an mcpAllowlist already in ~/.cursor/permissions.json; copilot: ~/.copilot/mcp-config.json (user only; approve with copilot --allow-tool=pigeon); opencode: mcp.pigeon in opencode.json. uninstall takes it away; --no-mcp leaves it out.\n\n"
        "The hook is the pigeon-hook next to this pigeon; PIGEON_HOOK (an absolute path) names another.",
    .opts = {{"user", OPT_USER, NULL, CLI_K_NONE, NULL,
                 "the user's config (default): ~/.cursor/hooks.json, $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json, $CODEX_HOME/hooks.json or ~/.codex/hooks.json, ~/.gemini/settings.json, $COPILOT_HOME/hooks/pigeon.json or ~/.copilot/hooks/pigeon.json"},
        {"project", OPT_PROJECT, "DIR", CLI_K_DIR, NULL,
            "the config of the project in DIR (DIR/.claude/..., DIR/.github/hooks/pigeon.json for copilot)"},
        {"dry-run", OPT_DRY_RUN, NULL, CLI_K_NONE, NULL,
            "print what would change (every file); write nothing"},
        {"no-permissions", OPT_NO_PERMISSIONS, NULL, CLI_K_NONE, NULL,
            "only the hooks: no permission edit"},
        {"rewake", OPT_REWAKE, NULL, CLI_K_NONE, NULL,
            "claude only: also wake an idle session when mail arrives (a background Stop entry, asyncRewake, that waits up to reach.rewakeWaitS after each turn; a session's end waits for it too). It stays on when you install again without it"},
        {"no-rewake", OPT_NO_REWAKE, NULL, CLI_K_NONE, NULL,
            "take the idle wake's entry away, keep the rest"},
        {"no-mcp", OPT_NO_MCP, NULL, CLI_K_NONE, NULL,
            "do not register pigeon mcp in the host's MCP configuration"}},
    .operand = CLI_K_HOST,
    .forms = {&cli_cmd_install_instructions},
};

const struct cli_cmd cli_cmd_uninstall = {
    .name = "uninstall",
    .fn = cmd_uninstall,
    .summary = "remove Pigeon's hooks from a host",
    .synopsis =
        {"HOST [--user | --project DIR] [--dry-run] [--no-permissions] [--no-mcp]",
            "--all [--dry-run] [--no-permissions]"},
    .text =
        "Remove Pigeon's hooks from the config of HOST (cursor, claude, codex, gemini or copilot), keeping every other byte; for opencode, Pigeon's plugin file and the directories install created for it. When nothing else changed since the install, the original bytes come back from FILE.pigeon.bak; a file Pigeon created is removed. A FILE.bak of your own is never touched. The permission edit goes too: Pigeon's Bash(... pigeon send:*) rules, the state directory in Codex's writable_roots (and the key and table if they hold nothing else, as install wrote them), Pigeon's Gemini policy file. A rule or root identical to Pigeon's counts as Pigeon's.",
    .opts = {{"user", OPT_USER, NULL, CLI_K_NONE, NULL,
                 "the user's config (default)"},
        {"project", OPT_PROJECT, "DIR", CLI_K_DIR, NULL,
            "the config of the project in DIR"},
        {"dry-run", OPT_DRY_RUN, NULL, CLI_K_NONE, NULL,
            "print what would change (every file); write nothing"},
        {"no-permissions", OPT_NO_PERMISSIONS, NULL, CLI_K_NONE, NULL,
            "only the hooks: leave the permission edit"},
        {"no-mcp", OPT_NO_MCP, NULL, CLI_K_NONE, NULL,
            "leave pigeon mcp's registration"},
        {"all", OPT_ALL, NULL, CLI_K_NONE, NULL,
            "every registration install recorded in $PIGEON_HOME/installs (user, projects, instructions files), and every host's user config"}},
    .operand = CLI_K_HOST,
    .forms = {&cli_cmd_uninstall_instructions},
};

struct install_opts {
	int user;
	int dry_run;
	int no_permissions;
	int rewake; /* 1 --rewake, -1 --no-rewake */
	int rewake_twice;
	int all;
	int no_mcp;
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct install_opts *o = p;

	(void)c;
	(void)arg;
	switch (ch) {
	case OPT_USER:
		o->user = 1;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = 1;
		return 0;
	case OPT_NO_PERMISSIONS:
		o->no_permissions = 1;
		return 0;
	case OPT_ALL:
		o->all = 1;
		return 0;
	case OPT_NO_MCP:
		o->no_mcp = 1;
		return 0;
	case OPT_REWAKE:
	case OPT_NO_REWAKE:
		if (o->rewake != 0)
			o->rewake_twice = 1;
		o->rewake = ch == OPT_REWAKE ? 1 : -1;
		return 0;
	default:
		return EXIT_USAGE;
	}
}

static int
run(int argc, char **argv, int remove)
{
	struct cli c = {.def = remove ? &cli_cmd_uninstall : &cli_cmd_install};
	struct install_opts o = {0};
	struct pgn_install req = {0};
	struct pgn_install_result res = {0};
	struct pgn_mcp_reg_result mres = {0};
	struct pgn_err err, merr;
	char names[256];
	char *hook = NULL, *project = NULL;
	struct stat sb;
	const char *name, *what;
	pgn_status st;
	pgn_host h;
	int code, mcp_code = EXIT_OK, mcp_changed = 0;

	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	pgn_host_names(PGN_MECH_HOOK, names, sizeof(names));
	if (remove && o.all) {
		if (optind < argc || c.project != NULL || o.user)
			return cli_usage(&c,
			    "--all takes no HOST, --user or --project: it removes every registration");
		return cli_uninstall_all(o.dry_run, o.no_permissions);
	}
	if (optind == argc)
		return cli_usage(&c, "which host? say %s", names);
	name = argv[optind++];
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	h = pgn_host_by_name(name);
	if (h == PGN_HOST_NONE && pgn_host_row_by_name(name) != NULL)
		return cli_usage(&c,
		    "Pigeon has no hook for %s (pigeon hosts says why): write its block into the instructions file the agent reads, pigeon %s instructions --file FILE%s",
		    pgn_host_row_by_name(name)->title, c.cmd,
		    remove ? "" : " --agent NAME");
	if (h == PGN_HOST_NONE ||
	    (PGN_MECH_HOOK & PGN_MECH_BIT(pgn_host_get(h)->mechanism)) == 0)
		return cli_usage(&c, "unknown host '%s': say %s", name, names);
	if (o.user && c.project != NULL)
		return cli_usage(&c, "--user and --project are exclusive");
	if (c.json)
		return cli_usage(&c, "%s prints text; --json is not supported",
		    c.cmd);
	if (o.rewake_twice)
		return cli_usage(&c, "say --rewake or --no-rewake, once");
	if (o.rewake != 0 && !pgn_host_get(h)->rewake)
		return cli_usage(&c,
		    "--rewake and --no-rewake are for claude only: %s has no idle wake Pigeon can use",
		    name);
	if (c.project != NULL) {
		if (stat(c.project, &sb) != 0 || !S_ISDIR(sb.st_mode))
			return cli_usage(&c,
			    "--project '%s': no such directory", c.project);
		project = realpath(c.project, NULL);
		if (project == NULL)
			return cli_err(EXIT_FAIL, "cannot resolve '%s': %s",
			    c.project, strerror(errno));
	}
	if (!remove) {
		code = cli_find_hook(&c, &hook);
		if (code != EXIT_OK)
			goto out;
	}
	req.host = h;
	req.project = project;
	req.hook = hook;
	req.dry_run = o.dry_run;
	req.remove = remove;
	req.permissions = !o.no_permissions;
	req.rewake = o.rewake;
	pgn_err_clear(&err);
	/*
	 * pigeon mcp's registration (decision 0168): taken away before the
	 * hooks, so theirs find their file as they left it; made after.
	 */
	/*
	 * A registration it cannot take away (a .claude.json past
	 * PGN_MAX_CLAUDE_STATE, one the host rewrote into something else) fails
	 * the command, but never keeps the hooks in place: a hook left
	 * behind fails on every prompt once Pigeon is gone. Said after the
	 * hooks' outcome, unless the hooks fail too (their error is said:
	 * the same file's, as a rule).
	 */
	if (remove && !o.no_mcp)
		mcp_code =
		    cli_mcp_apply(h, project, 1, o.dry_run, &mres, &merr);
	st = pgn_install_apply(&req, &res, &err);
	if (st != PGN_OK) {
		code = cli_err(EXIT_FAIL, "%s",
		    err.msg[0] != '\0' ? cli_errtext(&err) :
		                         pgn_status_name(st));
		goto out;
	}
	/* The record uninstall --all reads (decision 0186). */
	if (!o.dry_run &&
	    pgn_install_note(name, project, remove, &err) != PGN_OK)
		cli_err(EXIT_OK,
		    "warning: not recorded for uninstall --all: %s",
		    cli_errtext(&err));
	what =
	    pgn_host_get(h)->mechanism == PGN_MECH_PLUGIN ? "plugin" : "hooks";
	if (!res.changed && remove)
		printf(
		    "nothing to remove in %s: Pigeon's %s for %s %s not there\n",
		    res.path, what, name,
		    strcmp(what, "plugin") == 0 ? "was" : "were");
	else if (!res.changed)
		printf("already installed in %s\n", res.path);
	else if (o.dry_run)
		printf(remove ? "would remove Pigeon's %s for %s from %s\n" :
		                "would install Pigeon's %s for %s in %s\n",
		    what, name, res.path);
	else if (remove && stat(res.path, &sb) != 0)
		printf(
		    "removed Pigeon's %s for %s: deleted %s, which Pigeon had created\n",
		    what, name, res.path);
	else
		printf(remove ? "removed Pigeon's %s for %s from %s\n" :
		                "installed Pigeon's %s for %s in %s\n",
		    what, name, res.path);
	if (res.perm_what != NULL)
		printf("permissions: %s%s\n", res.perm_what,
		    res.perm_path == NULL ? "" :
		        !res.perm_changed && remove ?
		                            " (nothing of Pigeon's there)" :
		        !res.perm_changed ? " (already there)" :
		        o.dry_run         ? " (would change)" :
		        remove            ? " (removed)" :
		                            " (written)");
	if (o.dry_run && res.changed)
		fputs(res.diff, stdout);
	if (o.dry_run && res.perm_changed)
		fputs(res.perm_diff, stdout);
	if (mcp_code != EXIT_OK && merr.msg[0] != '\0')
		cli_err(EXIT_FAIL,
		    "%s: pigeon mcp's registration stays; the hooks are handled above",
		    cli_errtext(&merr));
	if (!remove && !o.no_mcp) {
		code = cli_mcp_apply(h, project, 0, o.dry_run, &mres, &merr);
		if (code != EXIT_OK) {
			if (merr.msg[0] != '\0')
				cli_err(EXIT_FAIL, "%s", cli_errtext(&merr));
			goto out;
		}
	}
	if (!o.no_mcp)
		mcp_changed = cli_mcp_print(&mres, h, remove, o.dry_run);
	if (o.dry_run && (res.changed || res.perm_changed || mcp_changed))
		puts("dry run: nothing written");
	if (res.note != NULL)
		printf("note: %s\n", res.note);
	code = cli_finish(mcp_code);
out:
	pgn_install_result_release(&res);
	pgn_mcp_reg_result_release(&mres);
	free(hook);
	free(project);
	return code;
}

/*
 * pigeon uninstall --all (decision 0186): every registration install
 * recorded, then the user config of every hook host (a registration
 * made before the record existed is found there too), each as its own
 * pigeon uninstall would do it and say it.
 */
/* argv for one uninstall; its exit code. */
static int
uninstall_one(const char *kind, const char *where, int dry_run,
    int no_permissions)
{
	char *argv[8];
	int argc = 0;

	argv[argc++] = (char *)"uninstall";
	if (strcmp(kind, "instructions") == 0) {
		argv[argc++] = (char *)"instructions";
		argv[argc++] = (char *)"--file";
		argv[argc++] = (char *)where;
	} else {
		argv[argc++] = (char *)kind;
		if (where != NULL) {
			argv[argc++] = (char *)"--project";
			argv[argc++] = (char *)where;
		}
		if (no_permissions)
			argv[argc++] = (char *)"--no-permissions";
	}
	if (dry_run)
		argv[argc++] = (char *)"--dry-run";
	argv[argc] = NULL;
	return cmd_uninstall(argc, argv);
}

int
cli_uninstall_all(int dry_run, int no_permissions)
{
	struct pgn_install_notes notes;
	const struct pgn_host_info *hi;
	struct pgn_err err;
	size_t i;
	int h, code, worst = EXIT_OK;

	pgn_err_clear(&err);
	if (pgn_install_notes(&notes, &err) != PGN_OK)
		return cli_err(EXIT_FAIL, "%s", cli_errtext(&err));
	for (i = 0; i < notes.n; i++) {
		/* the user configs come below, once each */
		if (notes.v[i].where == NULL)
			continue;
		if (strcmp(notes.v[i].kind, "instructions") != 0 &&
		    pgn_host_by_name(notes.v[i].kind) == PGN_HOST_NONE)
			continue;
		code = uninstall_one(notes.v[i].kind, notes.v[i].where, dry_run,
		    no_permissions);
		if (code != EXIT_OK && worst == EXIT_OK)
			worst = code;
	}
	pgn_install_notes_release(&notes);
	for (h = 0; h < PGN_NHOSTS; h++) {
		hi = cli_hook_host(h);
		if (hi == NULL)
			continue;
		code = uninstall_one(hi->name, NULL, dry_run, no_permissions);
		if (code != EXIT_OK && worst == EXIT_OK)
			worst = code;
	}
	return worst;
}

int
cmd_install(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "instructions") == 0)
		return cmd_install_instructions(argc - 1, argv + 1);
	return run(argc, argv, 0);
}

int
cmd_uninstall(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "instructions") == 0)
		return cmd_uninstall_instructions(argc - 1, argv + 1);
	return run(argc, argv, 1);
}
