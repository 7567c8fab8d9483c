/*
 * The plugin drop (opencode): pigeon install writes Pigeon's plugin into
 * the host's plugin directory, uninstall removes exactly what install
 * wrote, and a directory or file that is not Pigeon's is never touched.
 */
#include <sys/wait.h>

#include "harness.h"

#define HOOK "/opt/pigeon/bin/pigeon-hook"
#define MARK "// Written by pigeon install opencode;"
/* Concurrent installs in the race test. */
#define RACERS 8

static void
use_home(char *home, size_t len)
{
	h_join(home, len, h_tmp, "home");
	REQUIRE(mkdir(home, 0755) == 0);
	REQUIRE(setenv("HOME", home, 1) == 0);
	unsetenv("XDG_CONFIG_HOME");
}

static pgn_status
apply(const char *project, const char *hook, int remove, int dry_run,
    struct pgn_install_result *res, char *err)
{
	struct pgn_install req = {0};

	req.host = PGN_HOST_OPENCODE;
	req.project = project;
	req.hook = hook;
	req.remove = remove;
	req.dry_run = dry_run;
	req.permissions = 1;
	err[0] = '\0';
	return pgn_install_apply(&req, res, err, PGN_MAX_ERR);
}

/* Every path under 'dir', one a line, sorted: a tree to compare. */
static char *
tree(const char *dir)
{
	char cmd[PATH_MAX + 64], *out;
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "cd '%s' && find . | LC_ALL=C sort", dir);
	f = popen(cmd, "r");
	REQUIRE(f != NULL);
	out = calloc(1, 65536);
	REQUIRE(out != NULL);
	n = fread(out, 1, 65535, f);
	out[n] = '\0';
	REQUIRE(pclose(f) == 0);
	return out;
}

static void
test_install_writes_the_plugin_and_uninstall_leaves_the_tree_as_it_was(void)
{
	struct pgn_install_result res;
	struct pgn_install_state s;
	char home[PATH_MAX], path[PATH_MAX], err[PGN_MAX_ERR];
	char *before, *after, *text;
	size_t n;
	int e;

	use_home(home, sizeof(home));
	before = tree(home);
	h_join(path, sizeof(path), home, ".config/opencode/plugin/pigeon.js");
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, err) == PGN_OK);
	CHECK_STR(err, "");
	CHECK_STR(res.path, path);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.perm_what, "none: opencode's default permissions");
	pgn_install_result_release(&res);
	text = h_read_file(path, &n);
	REQUIRE(text != NULL);
	CHECK(strncmp(text, MARK, strlen(MARK)) == 0);
	CHECK_CONTAINS(text, "const HOOK = \"" HOOK "\";\n");
	CHECK_CONTAINS(text, "const TIMEOUT_MS = 5000;\n");
	/* It records the three directories it made for itself. */
	CHECK_CONTAINS(text, "/home/.config\",\"");
	CHECK_CONTAINS(text, "/home/.config/opencode/plugin\"];\n");
	free(text);
	/* Doctor sees it: every event the row has, and the hook. */
	CHECK_INT(pgn_install_inspect(PGN_HOST_OPENCODE, NULL, &s), PGN_OK);
	CHECK_INT(s.exists, 1);
	CHECK_STR(s.hook, HOOK);
	for (e = 0; e < PGN_NEVENTS; e++)
		CHECK_INT(s.entries[e],
		    pgn_host_get(PGN_HOST_OPENCODE)->events[e] != NULL);
	CHECK(s.problem == NULL);
	pgn_install_state_release(&s);
	/* Again: nothing changes. */
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, err) == PGN_OK);
	CHECK_INT(res.changed, 0);
	CHECK_STR(res.diff, "");
	pgn_install_result_release(&res);
	/* Uninstall: the file and the directories it made, nothing else. */
	REQUIRE(apply(NULL, NULL, 1, 0, &res, err) == PGN_OK);
	CHECK_STR(err, "");
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff, "+++ /dev/null\n");
	pgn_install_result_release(&res);
	after = tree(home);
	CHECK_STR(after, before);
	free(before);
	free(after);
	/* Uninstalling again: nothing to remove. */
	REQUIRE(apply(NULL, NULL, 1, 0, &res, err) == PGN_OK);
	CHECK_INT(res.changed, 0);
	pgn_install_result_release(&res);
}

static void
test_directories_that_were_there_stay_and_so_does_what_opencode_added(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], dir[PATH_MAX], extra[PATH_MAX], err[PGN_MAX_ERR];

	use_home(home, sizeof(home));
	h_join(dir, sizeof(dir), home, ".config");
	REQUIRE(mkdir(dir, 0755) == 0);
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, err) == PGN_OK);
	pgn_install_result_release(&res);
	/* opencode puts its own files next to the plugin directory. */
	h_join(extra, sizeof(extra), home, ".config/opencode/package.json");
	h_write_file(extra, "{}\n", 3);
	REQUIRE(apply(NULL, NULL, 1, 0, &res, err) == PGN_OK);
	pgn_install_result_release(&res);
	h_join(dir, sizeof(dir), home, ".config/opencode/plugin");
	CHECK(!h_exists(dir));
	CHECK(h_exists(extra));
	h_join(dir, sizeof(dir), home, ".config");
	CHECK(h_exists(dir));
}

static void
test_a_file_that_is_not_pigeons_is_refused_and_kept(void)
{
	static const char mine[] = "export const Mine = async () => ({});\n";
	struct pgn_install_result res;
	struct pgn_install_state s;
	char home[PATH_MAX], dir[PATH_MAX], path[PATH_MAX], err[PGN_MAX_ERR];
	char cmd[PATH_MAX + 16], *text;
	size_t n;

	use_home(home, sizeof(home));
	h_join(dir, sizeof(dir), home, ".config/opencode/plugin");
	h_join(path, sizeof(path), dir, "pigeon.js");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	REQUIRE(system(cmd) == 0);
	h_write_file(path, mine, strlen(mine));
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, err), PGN_EINVAL);
	CHECK_CONTAINS(err,
	    "exists and is not Pigeon's plugin: left untouched");
	pgn_install_result_release(&res);
	/* Uninstall leaves it too, and says why. */
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, err), PGN_OK);
	CHECK_INT(res.changed, 0);
	CHECK_CONTAINS(res.note, "not Pigeon's plugin");
	pgn_install_result_release(&res);
	text = h_read_file(path, &n);
	CHECK_STR(text, mine);
	free(text);
	/* Doctor: there, not installed, not a problem of the config. */
	CHECK_INT(pgn_install_inspect(PGN_HOST_OPENCODE, NULL, &s), PGN_OK);
	CHECK_INT(s.exists, 1);
	CHECK_INT(s.entries[PGN_EVENT_PROMPT], 0);
	CHECK(s.hook == NULL && s.problem == NULL);
	pgn_install_state_release(&s);
}

static void
test_a_symlinked_or_read_only_plugin_dir_is_a_clear_error(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], cmd[4 * PATH_MAX],
	    err[PGN_MAX_ERR], path[PATH_MAX];
	char *before;

	use_home(home, sizeof(home));
	H_PATH(real, "elsewhere");
	REQUIRE(mkdir(real, 0755) == 0);
	h_join(dir, sizeof(dir), home, ".config/opencode");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && ln -s '%s' '%s/plugin'",
	    dir, real, dir);
	REQUIRE(system(cmd) == 0);
	before = tree(h_tmp);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, err), PGN_EINVAL);
	CHECK_CONTAINS(err, "/.config/opencode/plugin' is a symbolic link");
	pgn_install_result_release(&res);
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, err), PGN_EINVAL);
	CHECK_CONTAINS(err, "is a symbolic link");
	pgn_install_result_release(&res);
	/* Read-only (owner's write bit off: refused even for root). */
	snprintf(cmd, sizeof(cmd),
	    "rm '%s/plugin' && mkdir '%s/plugin' && chmod 555 '%s/plugin'", dir,
	    dir, dir);
	REQUIRE(system(cmd) == 0);
	free(before);
	before = tree(h_tmp);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, err), PGN_EINVAL);
	CHECK_CONTAINS(err, "/.config/opencode/plugin' is read-only");
	CHECK_CONTAINS(err, "chmod u+w");
	pgn_install_result_release(&res);
	{
		char *now = tree(h_tmp);

		CHECK_STR(now, before);
		free(now);
	}
	h_join(path, sizeof(path), dir, "plugin");
	REQUIRE(chmod(path, 0755) == 0);
	free(before);
}

static void
test_dry_run_and_project_installs(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], proj[PATH_MAX], path[PATH_MAX], err[PGN_MAX_ERR];
	char *before, *after;

	use_home(home, sizeof(home));
	H_PATH(proj, "proj");
	REQUIRE(mkdir(proj, 0755) == 0);
	before = tree(h_tmp);
	REQUIRE(apply(proj, HOOK, 0, 1, &res, err) == PGN_OK);
	h_join(path, sizeof(path), proj, ".opencode/plugin/pigeon.js");
	CHECK_STR(res.path, path);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff, "+" MARK);
	pgn_install_result_release(&res);
	after = tree(h_tmp);
	CHECK_STR(after, before);
	free(after);
	REQUIRE(apply(proj, HOOK, 0, 0, &res, err) == PGN_OK);
	pgn_install_result_release(&res);
	CHECK(h_exists(path));
	/* A dry uninstall shows the removal and removes nothing. */
	REQUIRE(apply(proj, NULL, 1, 1, &res, err) == PGN_OK);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff, "-" MARK);
	pgn_install_result_release(&res);
	CHECK(h_exists(path));
	REQUIRE(apply(proj, NULL, 1, 0, &res, err) == PGN_OK);
	pgn_install_result_release(&res);
	after = tree(h_tmp);
	CHECK_STR(after, before);
	free(after);
	free(before);
}

static void
test_a_new_hook_path_rewrites_pigeons_plugin(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], path[PATH_MAX], err[PGN_MAX_ERR], *text;
	size_t n;

	use_home(home, sizeof(home));
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, err) == PGN_OK);
	pgn_install_result_release(&res);
	REQUIRE(apply(NULL, "/usr/local/bin/pigeon-hook", 0, 0, &res, err) ==
	    PGN_OK);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff,
	    "+const HOOK = \"/usr/local/bin/pigeon-hook\"");
	pgn_install_result_release(&res);
	h_join(path, sizeof(path), home, ".config/opencode/plugin/pigeon.js");
	text = h_read_file(path, &n);
	/* The directories it made are still remembered. */
	CHECK_CONTAINS(text, "/home/.config\",\"");
	free(text);
	/* A hook that is not pigeon-hook is refused, nothing written. */
	CHECK_INT(apply(NULL, "/usr/bin/true", 0, 0, &res, err), PGN_EINVAL);
	pgn_install_result_release(&res);
}

static void
test_concurrent_installs_leave_one_plugin(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], dir[PATH_MAX], err[PGN_MAX_ERR], *listing;
	pid_t pid[RACERS];
	int i, status, ok = 0;

	use_home(home, sizeof(home));
	for (i = 0; i < RACERS; i++) {
		pid[i] = fork();
		REQUIRE(pid[i] >= 0);
		if (pid[i] == 0) {
			pgn_status st = apply(NULL, HOOK, 0, 0, &res, err);

			_exit(st == PGN_OK ? 0 : 1);
		}
	}
	for (i = 0; i < RACERS; i++) {
		REQUIRE(waitpid(pid[i], &status, 0) == pid[i]);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	CHECK_INT(ok, RACERS);
	/* One plugin, no temp file left. */
	h_join(dir, sizeof(dir), home, ".config/opencode/plugin");
	listing = tree(dir);
	CHECK_STR(listing, ".\n./pigeon.js\n");
	free(listing);
	REQUIRE(apply(NULL, NULL, 1, 0, &res, err) == PGN_OK);
	pgn_install_result_release(&res);
	CHECK(!h_exists(dir));
}

static void
test_bounds_missing_directories_and_file_size(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], xdg[PATH_MAX], path[PATH_MAX], err[PGN_MAX_ERR];
	char *big;
	size_t n = 64 * 1024 + 1;

	use_home(home, sizeof(home));
	/* Six missing, plus opencode/plugin: eight, the most it creates. */
	h_join(xdg, sizeof(xdg), home, "1/2/3/4/5/6");
	REQUIRE(setenv("XDG_CONFIG_HOME", xdg, 1) == 0);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, err), PGN_OK);
	pgn_install_result_release(&res);
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, err), PGN_OK);
	pgn_install_result_release(&res);
	h_join(path, sizeof(path), home, "1");
	CHECK(!h_exists(path));
	/* Nine: refused, nothing made. */
	h_join(xdg, sizeof(xdg), home, "1/2/3/4/5/6/7");
	REQUIRE(setenv("XDG_CONFIG_HOME", xdg, 1) == 0);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, err), PGN_EINVAL);
	CHECK_CONTAINS(err, "more than 8 directories are missing");
	pgn_install_result_release(&res);
	CHECK(!h_exists(path));
	unsetenv("XDG_CONFIG_HOME");
	/* A pigeon.js over 64 KiB is not Pigeon's, whatever it starts with. */
	h_join(path, sizeof(path), home, ".config/opencode/plugin");
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
		REQUIRE(system(cmd) == 0);
	}
	h_join(path, sizeof(path), home, ".config/opencode/plugin/pigeon.js");
	big = malloc(n);
	REQUIRE(big != NULL);
	memset(big, ' ', n);
	memcpy(big, MARK, strlen(MARK));
	big[n - 1] = '\n';
	h_write_file(path, big, n);
	free(big);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, err), PGN_EINVAL);
	CHECK_CONTAINS(err, "is not Pigeon's plugin");
	pgn_install_result_release(&res);
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, err), PGN_OK);
	CHECK_INT(res.changed, 0);
	pgn_install_result_release(&res);
	CHECK(h_exists(path));
}

static const struct h_test tests[] = {
    H_TEST(
        test_install_writes_the_plugin_and_uninstall_leaves_the_tree_as_it_was),
    H_TEST(
        test_directories_that_were_there_stay_and_so_does_what_opencode_added),
    H_TEST(test_a_file_that_is_not_pigeons_is_refused_and_kept),
    H_TEST(test_a_symlinked_or_read_only_plugin_dir_is_a_clear_error),
    H_TEST(test_dry_run_and_project_installs),
    H_TEST(test_a_new_hook_path_rewrites_pigeons_plugin),
    H_TEST(test_concurrent_installs_leave_one_plugin),
    H_TEST(test_bounds_missing_directories_and_file_size),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
