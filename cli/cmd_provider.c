/* pigeon provider status | allow | deny: approve the project's provider. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/setup.h"

const struct cli_cmd cli_cmd_provider = {
    .name = "provider",
    .fn = cmd_provider,
    .summary = "approve the project's prompt-context provider",
    .synopsis = {"status | allow | deny [--project DIR] [--json]"},
    .text =
        "The project's prompt-context provider (promptContext in <project>/.pigeon/config.json) runs on every prompt only once allowed here. allow shows what will run and records an approval bound to the project root, the provider configuration and the program's content: any change withdraws it until allowed again. deny withdraws it. status says what is configured and whether, or why not, it may run.",
    .common = CLI_PROJECT | CLI_JSON | CLI_COLOR,
    .verbs = "status allow deny",
};

static cJSON *
describe(const char *root, const struct pgn_config *cfg,
    const struct pgn_approval *a)
{
	cJSON *o, *p, *argv;
	size_t i;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "project", root);
	if (cfg->problem != NULL)
		cJSON_AddStringToObject(o, "config_problem", cfg->problem);
	if (cfg->unknown != NULL)
		cJSON_AddStringToObject(o, "unknown_keys", cfg->unknown);
	if (cfg->reminder != NULL)
		cJSON_AddStringToObject(o, "reminder", cfg->reminder);
	if (cfg->reminder_problem != NULL)
		cJSON_AddStringToObject(o, "reminder_problem",
		    cfg->reminder_problem);
	if (cfg->provider_problem != NULL)
		cJSON_AddStringToObject(o, "provider_problem",
		    cfg->provider_problem);
	if (cfg->argc == 0) {
		cJSON_AddNullToObject(o, "provider");
		return o;
	}
	p = cJSON_AddObjectToObject(o, "provider");
	argv = cJSON_AddArrayToObject(p, "command");
	for (i = 0; i < cfg->argc; i++)
		cJSON_AddItemToArray(argv, cJSON_CreateString(cfg->argv[i]));
	if (a->path != NULL) {
		cJSON_AddStringToObject(p, "path", a->path);
		cJSON_AddStringToObject(p, "blake2b", a->digest);
	}
	cJSON_AddNumberToObject(p, "timeout_ms", (double)cfg->timeout_ms);
	cJSON_AddNumberToObject(p, "max_output_bytes", (double)cfg->max_output);
	cJSON_AddBoolToObject(p, "allowed", a->allowed);
	cJSON_AddStringToObject(p, "why", cli_errtext(&a->why));
	return o;
}

static void
print_text(const cJSON *o)
{
	const cJSON *p, *it;
	const char *s;

	printf("project:  %s\n",
	    cJSON_GetStringValue(cJSON_GetObjectItem(o, "project")));
	if ((s = cJSON_GetStringValue(
	         cJSON_GetObjectItem(o, "config_problem"))) != NULL)
		printf(
		    "config:   .pigeon/config.json %s: reminder and provider are off\n",
		    s);
	if ((s = cJSON_GetStringValue(cJSON_GetObjectItem(o, "reminder"))) !=
	    NULL)
		printf("reminder: %s\n", s);
	else if ((s = cJSON_GetStringValue(
	              cJSON_GetObjectItem(o, "reminder_problem"))) != NULL)
		printf("reminder: off: %s\n", s);
	else
		printf("reminder: none\n");
	p = cJSON_GetObjectItem(o, "provider");
	if (!cJSON_IsObject(p)) {
		s = cJSON_GetStringValue(
		    cJSON_GetObjectItem(o, "provider_problem"));
		printf("provider: %s%s\n", s ? "off: " : "none configured",
		    s ? s : "");
	} else {
		printf("provider:");
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(p, "command"))
		    printf(" %s", it->valuestring);
		printf("\n");
		if ((s = cJSON_GetStringValue(
		         cJSON_GetObjectItem(p, "path"))) != NULL)
			printf("  runs:   %s\n  blake2b %s\n", s,
			    cJSON_GetStringValue(
			        cJSON_GetObjectItem(p, "blake2b")));
		printf("  limits: %.0f ms, %.0f bytes of output\n",
		    cJSON_GetNumberValue(cJSON_GetObjectItem(p, "timeout_ms")),
		    cJSON_GetNumberValue(
		        cJSON_GetObjectItem(p, "max_output_bytes")));
		printf("  status: %s%s\n",
		    cJSON_IsTrue(cJSON_GetObjectItem(p, "allowed")) ? "" :
		                                                      "off: ",
		    cJSON_GetStringValue(cJSON_GetObjectItem(p, "why")));
	}
	if ((s = cJSON_GetStringValue(
	         cJSON_GetObjectItem(o, "unknown_keys"))) != NULL)
		printf("unknown keys (ignored): %s\n", s);
}

int
cmd_provider(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_provider};
	struct pgn_config cfg;
	struct pgn_approval a;
	char *home = NULL, *cwd = NULL, *root = NULL;
	struct pgn_err err, herr;
	const char *verb, *dir;
	struct stat sb;
	cJSON *doc = NULL;
	pgn_status st;
	int code, removed = 0;

	memset(&cfg, 0, sizeof(cfg));
	memset(&a, 0, sizeof(a));
	pgn_err_clear(&err);
	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (argc - optind != 1)
		return cli_usage(&c, "say status, allow or deny");
	verb = argv[optind];
	if (strcmp(verb, "status") != 0 && strcmp(verb, "allow") != 0 &&
	    strcmp(verb, "deny") != 0)
		return cli_usage(&c,
		    "unknown action '%s': say status, allow or deny", verb);
	dir = c.project;
	if (dir != NULL && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
		return cli_usage(&c, "--project '%s': no such directory", dir);
	if (dir == NULL)
		dir = cwd = getcwd(NULL, 0);
	if (pgn_scope_find(dir, &root) != PGN_OK) {
		code = cli_err(EXIT_FAIL, "out of memory");
		goto out;
	}
	if (root[0] == '\0') {
		code = cli_usage(&c,
		    "'%s' is in no git repository: a provider belongs to a project",
		    dir != NULL ? dir : "?");
		goto out;
	}
	pgn_err_clear(&herr);
	st = pgn_home_path(&home);
	if (st == PGN_OK)
		st = pgn_home_ensure(home, &herr);
	if (st != PGN_OK) {
		code = cli_err(EXIT_FAIL, "%s",
		    herr.msg[0] != '\0' ?
		        cli_errtext(&herr) :
		        "no state directory: set PIGEON_HOME or HOME");
		goto out;
	}
	if (pgn_config_load(root, &cfg) != PGN_OK) {
		code = cli_err(EXIT_FAIL, "out of memory");
		goto out;
	}
	if (strcmp(verb, "deny") == 0) {
		st = pgn_provider_deny(home, root, &removed, &err);
		if (st != PGN_OK) {
			code = cli_err(EXIT_FAIL, "%s", cli_errtext(&err));
			goto out;
		}
		printf(removed ?
		        "denied: the provider of %s will not run\n" :
		        "nothing to deny: no provider was allowed for %s\n",
		    cli_safe(root));
		code = cli_finish(EXIT_OK);
		goto out;
	}
	if (strcmp(verb, "allow") == 0) {
		if (cfg.argc == 0) {
			code = cli_usage(&c,
			    "no provider to allow in %s/.pigeon/config.json: %s",
			    root,
			    cfg.problem ? cfg.problem :
			        cfg.provider_problem ?
			                  cfg.provider_problem :
			                  "promptContext.command is not set");
			goto out;
		}
		st = pgn_provider_allow(home, root, &cfg, &a, &err);
		if (st == PGN_EINVAL) {
			code = cli_usage(&c, "%s", cli_errtext(&err));
			goto out;
		}
		if (st != PGN_OK) {
			code = cli_err(EXIT_FAIL, "%s",
			    err.msg[0] ? cli_errtext(&err) : "out of memory");
			goto out;
		}
	} else if (cfg.argc > 0 &&
	    pgn_provider_check(home, root, &cfg, &a) != PGN_OK) {
		code = cli_err(EXIT_FAIL, "out of memory");
		goto out;
	}
	doc = describe(root, &cfg, &a);
	if (doc == NULL) {
		code = cli_err(EXIT_FAIL, "out of memory");
		goto out;
	}
	if (c.json) {
		code = cli_json_print(doc);
		doc = NULL;
	} else {
		cli_json_safe(doc); /* names, paths, keys from the project */
		print_text(doc);
		code = EXIT_OK;
	}
	code = cli_finish(code);
out:
	cJSON_Delete(doc);
	pgn_approval_release(&a);
	pgn_config_release(&cfg);
	free(root);
	free(cwd);
	free(home);
	return code;
}
