/*
 * A host's record of trust in Pigeon's hooks, for doctor (through
 * pgn_install_inspect). Codex (PGN_TRUST_CODEX_TOML) runs a hook only
 * once its user config.toml, beside the user's hooks.json, holds a
 * table [hooks.state."<hooks file>:<event>:<i>:<j>"] with a
 * trusted_hash.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "trust.h"
#include "pigeon/setup.h"

#define CODEX_CONFIG "config.toml"
#define CODEX_STATE  "hooks.state.\""
#define CODEX_HASH   "trusted_hash"

/* The Codex user config.toml: beside the user's hooks file. */
static char *
codex_config(pgn_host h)
{
	struct pgn_err err;
	char *hooks = NULL, *dir, *path = NULL;

	if (pgn_host_config_path(h, NULL, &hooks, &err) != PGN_OK)
		return NULL;
	dir = hooks != NULL ? pgn_path_dir(hooks) : NULL;
	if (dir != NULL)
		path = pgn_path_join(dir, CODEX_CONFIG);
	free(dir);
	free(hooks);
	return path;
}

/* A table named for 'hooks' under [hooks.state] holds a trusted_hash. */
static int
codex_trusted(pgn_host h, const char *hooks)
{
	struct pgn_err err;
	char *path, *toml = NULL;
	const char *p;
	size_t len = 0;
	int exists = 0, found = 0;
	mode_t mode = 0;

	path = codex_config(h);
	if (path == NULL)
		return 0;
	if (pgn_read_file(path, PGN_MAX_TRUST_FILE, &toml, &len, &exists, &mode,
	        &err) != PGN_OK ||
	    !exists || toml == NULL)
		goto out;
	for (p = strstr(toml, CODEX_STATE); p != NULL && !found;
	     p = strstr(p + 1, CODEX_STATE)) {
		p += strlen(CODEX_STATE);
		if (strncmp(p, hooks, strlen(hooks)) == 0 &&
		    strstr(p, CODEX_HASH) != NULL)
			found = 1;
	}
out:
	free(toml);
	free(path);
	return found;
}

int
pgn_install_trusted(pgn_host h, const char *hooks)
{
	const struct pgn_host_info *hi = pgn_host_get(h);

	if (hi == NULL || hooks == NULL)
		return 0;
	switch (hi->trust) {
	case PGN_TRUST_CODEX_TOML:
		return codex_trusted(h, hooks);
	default:
		return 0;
	}
}
