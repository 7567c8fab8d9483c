/*
 * pigeon install | uninstall instructions: Pigeon's block in an
 * instructions file, for hosts with no usable hook.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/instructions.h"
#include "pigeon/setup.h"

/* Generated names tried before giving up on a free one. */
#define NAME_TRIES 8

enum { OPT_FILE = OPT_CMD, OPT_AGENT, OPT_DRY_RUN };

const struct cli_cmd cli_cmd_install_instructions = {
    .name = "install instructions",
    .fn = cmd_install_instructions,
    .summary = "write Pigeon's block into an instructions file",
    .synopsis = {"--file PATH [--agent NAME] [--dry-run]"},
    .text =
        "For a host with no usable hook (Windsurf, Grok CLI, any agent that reads an instructions file such as AGENTS.md or .windsurfrules): write Pigeon's block, between the lines <!-- pigeon:begin --> and <!-- pigeon:end -->, at the end of PATH (created if absent). It gives the agent its name and the exact commands to read, send and wait for messages. Running it again refreshes the block in place. Every byte outside the block stays as it was (BOM, CRLF, no final line end); the file is written atomically (in place if it has hard links). The agent is added to the scope of PATH's directory (--project DIR names another).",
    .opts = {{"file", OPT_FILE, "PATH", CLI_K_FILE, NULL,
                 "the instructions file (not a symbolic link)"},
        {"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
            "the agent's name (default: the block's own, else a generated one)"},
        {"dry-run", OPT_DRY_RUN, NULL, CLI_K_NONE, NULL,
            "say what would change; write nothing"}},
    .common = CLI_DB | CLI_PROJECT,
};

const struct cli_cmd cli_cmd_uninstall_instructions = {
    .name = "uninstall instructions",
    .fn = cmd_uninstall_instructions,
    .summary = "take Pigeon's block out of an instructions file",
    .synopsis = {"--file PATH [--dry-run]"},
    .text =
        "Take Pigeon's block out of PATH: the file comes back byte-identical to what it was before install (removed if install created it), as long as nothing but the block changed since. The agent stays known.",
    .opts = {{"file", OPT_FILE, "PATH", CLI_K_FILE, NULL,
                 "the instructions file"},
        {"dry-run", OPT_DRY_RUN, NULL, CLI_K_NONE, NULL,
            "say what would change; write nothing"},
        {"agent", OPT_AGENT, "NAME", CLI_K_NONE, NULL,
            "refused: uninstall finds the block by its markers"}},
};

struct instr_opts {
	const char *file;
	const char *agent;
	int dry_run;
	int remove;
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct instr_opts *o = p;

	switch (ch) {
	case OPT_FILE:
		o->file = arg;
		return 0;
	case OPT_AGENT:
		if (o->remove)
			return cli_usage(c,
			    "--agent is for install; uninstall finds the block by its markers");
		o->agent = arg;
		return 0;
	case OPT_DRY_RUN:
		o->dry_run = 1;
		return 0;
	default:
		return EXIT_USAGE;
	}
}

/*
 * The CLI as the block names it: "pigeon" when that is what PATH finds
 * (this very program), else this program's absolute path (caller frees).
 */
static char *
pigeon_word(void)
{
	char exe[PATH_MAX], cand[PATH_MAX];
	const char *path, *p, *colon;
	char *real;
	size_t n;

	if (realpath("/proc/self/exe", exe) == NULL)
		return strdup("pigeon");
	path = getenv("PATH");
	for (p = path; p != NULL && *p != '\0'; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon != NULL ? (size_t)(colon - p) : strlen(p);
		if (n > 0 && n + sizeof("/pigeon") <= sizeof(cand)) {
			memcpy(cand, p, n);
			memcpy(cand + n, "/pigeon", sizeof("/pigeon"));
			if (access(cand, X_OK) == 0) {
				real = realpath(cand, NULL);
				n = real != NULL && strcmp(real, exe) == 0;
				free(real);
				return strdup(n ? "pigeon" : exe);
			}
		}
		if (colon == NULL)
			break;
	}
	return strdup(exe);
}

/* Add 'name' to the scope of 'dir' unless known; exit code. */
static int
register_agent(struct cli *c, const char *name, int generated, int *taken)
{
	pgn_status st;

	*taken = 0;
	st = pgn_agent_add(c->db, name);
	if (st == PGN_EEXIST) {
		*taken = generated;
		return EXIT_OK;
	}
	if (st != PGN_OK)
		return cli_fail(c, st);
	return EXIT_OK;
}

static int
run(int argc, char **argv, int remove)
{
	struct cli c = {.def = remove ? &cli_cmd_uninstall_instructions :
	                                &cli_cmd_install_instructions};
	struct instr_opts o = {.remove = remove};
	struct pgn_instr req = {0};
	struct pgn_instr_result res = {0};
	struct pgn_err err;
	char name[PGN_MAX_NAME + 1];
	char *word = NULL, *dir = NULL, *real = NULL, *abs = NULL;
	const char *slash;
	struct pgn_err rule;
	pgn_status st;
	int code, tries, taken = 0;

	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	if (o.file == NULL || o.file[0] == '\0')
		return cli_usage(&c,
		    "which file? name it with --file PATH (AGENTS.md, .windsurfrules, ...)");
	if (c.json)
		return cli_usage(&c, "%s prints text; --json is not supported",
		    c.cmd);
	if (o.agent != NULL && pgn_name_check(o.agent, name, &rule) != PGN_OK)
		return cli_usage(&c, "--agent '%s': %s", o.agent, rule.msg);
	word = pigeon_word();
	if (word == NULL)
		return cli_err(EXIT_FAIL, "out of memory");
	req.path = o.file;
	req.agent = o.agent != NULL ? name : NULL;
	req.pigeon = word;
	req.remove = remove;
	/* A dry run first: every refusal comes before anything is written. */
	req.dry_run = 1;
	pgn_err_clear(&err);
	st = pgn_instr_apply(&req, &res, &err);
	if (st != PGN_OK) {
		code = cli_err(EXIT_FAIL, "%s",
		    err.msg[0] != '\0' ? cli_errtext(&err) :
		                         pgn_status_name(st));
		goto out;
	}
	if (!remove && !o.dry_run) {
		/* The agent of the file's directory, known before the block. */
		if (c.project == NULL) {
			slash = strrchr(o.file, '/');
			dir = slash == NULL ?
			    strdup(".") :
			    slash == o.file ?
			    strdup("/") :
			    strndup(o.file, (size_t)(slash - o.file));
			real = dir != NULL ? realpath(dir, NULL) : NULL;
			c.project = real != NULL ? real : ".";
		}
		code = cli_open(&c);
		if (code != EXIT_OK)
			goto out;
		for (tries = 0;; tries++) {
			code = register_agent(&c, res.agent, res.generated,
			    &taken);
			if (code != EXIT_OK)
				goto out;
			if (!taken)
				break;
			if (tries == NAME_TRIES) {
				code = cli_err(EXIT_FAIL,
				    "no free generated agent name: name one with --agent NAME");
				goto out;
			}
			/* A new draw of the generated name. */
			st = pgn_instr_apply(&req, &res, &err);
			if (st != PGN_OK) {
				code =
				    cli_err(EXIT_FAIL, "%s", cli_errtext(&err));
				goto out;
			}
		}
		snprintf(name, sizeof(name), "%s", res.agent);
		req.agent = name;
	}
	if (!o.dry_run) {
		/* The file's absolute path, for the record (decision 0186). */
		abs = realpath(o.file, NULL);
		req.dry_run = 0;
		st = pgn_instr_apply(&req, &res, &err);
		if (st != PGN_OK) {
			code = cli_err(EXIT_FAIL, "%s",
			    err.msg[0] != '\0' ? cli_errtext(&err) :
			                         pgn_status_name(st));
			goto out;
		}
		if (abs == NULL)
			abs = realpath(o.file, NULL);
		if (abs != NULL &&
		    pgn_install_note("instructions", abs, remove, &err) !=
		        PGN_OK)
			cli_err(EXIT_OK,
			    "warning: not recorded for uninstall --all: %s",
			    cli_errtext(&err));
	}
	if (!res.changed)
		printf(remove ?
		        "nothing to remove in %s\n" :
		        "Pigeon's instructions for %s are up to date in %s\n",
		    remove ? cli_safe(o.file) : res.agent, cli_safe(o.file));
	else if (remove)
		printf(o.dry_run ?
		        "would remove Pigeon's instructions from %s\n" :
		        res.deleted ?
		        "removed Pigeon's instructions: deleted %s, which Pigeon had created\n" :
		        "removed Pigeon's instructions from %s\n",
		    cli_safe(o.file));
	else
		printf("%s Pigeon's instructions for agent %s in %s\n",
		    o.dry_run ? "would write" : "wrote", res.agent,
		    cli_safe(o.file));
	if (o.dry_run && res.changed)
		puts("dry run: nothing written");
	code = cli_finish(EXIT_OK);
out:
	cli_close(&c);
	free(word);
	free(dir);
	free(real);
	free(abs);
	return code;
}

int
cmd_install_instructions(int argc, char **argv)
{
	return run(argc, argv, 0);
}

int
cmd_uninstall_instructions(int argc, char **argv)
{
	return run(argc, argv, 1);
}
