/*
 * Unit tests of pgn_scope_find on real directories: plain repositories,
 * linked worktrees, submodules, bare common dirs and no repository.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "pgn_int.h"

#define SCOPE_ALARM_S 5 /* a read that blocks this long fails the test */

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* out = h_tmp/rel */
static void
at(char *out, size_t len, const char *rel)
{
	h_join(out, len, h_tmp, rel);
}

/* mkdir -p h_tmp/rel */
static void
mkdirs(const char *rel)
{
	char path[PATH_MAX];
	size_t i, base;

	at(path, sizeof(path), rel);
	base = strlen(h_tmp) + 1;
	for (i = base; path[i] != '\0'; i++) {
		if (path[i] != '/')
			continue;
		path[i] = '\0';
		if (!h_exists(path))
			h_mkdir(path);
		path[i] = '/';
	}
	if (!h_exists(path))
		h_mkdir(path);
}

/* Write a text file h_tmp/rel holding 'text'. */
static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX];

	at(path, sizeof(path), rel);
	h_write_file(path, text, strlen(text));
}

/* Scope of h_tmp/rel compared with h_tmp/want ("" for the global one). */
static void
check_scope(const char *rel, const char *want, const char *file, int line)
{
	char dir[PATH_MAX], expect[PATH_MAX];
	char *root = NULL;
	pgn_status rc;

	at(dir, sizeof(dir), rel);
	if (want[0] != '\0')
		at(expect, sizeof(expect), want);
	else
		expect[0] = '\0';
	rc = pgn_scope_find(dir, &root);
	h_check_int(rc, PGN_OK, file, line, "pgn_scope_find", "PGN_OK");
	h_check_str(root, expect, file, line, rel, want);
	free(root);
}

#define CHECK_SCOPE(rel, want) check_scope((rel), (want), __FILE__, __LINE__)

static void
test_scope_of_temp_dir_is_global(void)
{
	char *root = NULL;

	/* Everything below relies on the temp dir being in no repository. */
	CHECK_INT(pgn_scope_find(h_tmp, &root), PGN_OK);
	CHECK_STR(root, "");
	free(root);
}

static void
test_scope_of_repository_root_is_itself(void)
{
	mkdirs("repo/.git");
	CHECK_SCOPE("repo", "repo");
}

static void
test_scope_of_subdirectory_is_repository_root(void)
{
	mkdirs("repo/.git");
	mkdirs("repo/src/deep/er");
	CHECK_SCOPE("repo/src", "repo");
	CHECK_SCOPE("repo/src/deep/er", "repo");
	/* ".." in the argument is resolved first */
	CHECK_SCOPE("repo/src/deep/../deep/er", "repo");
}

static void
test_scope_of_nested_repository_is_the_inner_one(void)
{
	mkdirs("outer/.git");
	mkdirs("outer/inner/.git");
	mkdirs("outer/inner/sub");
	CHECK_SCOPE("outer/inner/sub", "outer/inner");
	CHECK_SCOPE("outer", "outer");
}

/* A main worktree "main" with a linked worktree "wt" (as git makes). */
static void
make_worktree(const char *gitdir_line)
{
	mkdirs("main/.git/worktrees/wt");
	put("main/.git/worktrees/wt/commondir", "../..\n");
	put("main/.git/worktrees/wt/gitdir", "");
	mkdirs("wt/sub");
	put("wt/.git", gitdir_line);
}

static void
test_scope_of_linked_worktree_with_absolute_gitdir_is_main(void)
{
	char line[PATH_MAX + 16];
	int n;

	n = snprintf(line, sizeof(line), "gitdir: %s/main/.git/worktrees/wt\n",
	    h_tmp);
	REQUIRE(n > 0 && (size_t)n < sizeof(line));
	make_worktree(line);
	CHECK_SCOPE("wt", "main");
	CHECK_SCOPE("wt/sub", "main");
	CHECK_SCOPE("main", "main");
}

static void
test_scope_of_linked_worktree_with_relative_gitdir_is_main(void)
{
	make_worktree("gitdir: ../main/.git/worktrees/wt\n");
	CHECK_SCOPE("wt", "main");
	CHECK_SCOPE("wt/sub", "main");
}

static void
test_scope_of_worktree_tolerates_missing_newline_and_crlf(void)
{
	make_worktree("gitdir: ../main/.git/worktrees/wt");
	CHECK_SCOPE("wt", "main");
	put("wt/.git", "gitdir: ../main/.git/worktrees/wt\r\n");
	CHECK_SCOPE("wt", "main");
	put("main/.git/worktrees/wt/commondir", "../..");
	CHECK_SCOPE("wt", "main");
}

static void
test_scope_of_submodule_is_itself(void)
{
	/* A submodule: .git file, gitdir without commondir. */
	mkdirs("super/.git/modules/sub");
	mkdirs("super/sub/lib");
	put("super/sub/.git", "gitdir: ../.git/modules/sub\n");
	CHECK_SCOPE("super/sub", "super/sub");
	CHECK_SCOPE("super/sub/lib", "super/sub");
	CHECK_SCOPE("super", "super");
}

static void
test_scope_of_worktree_of_bare_repository_is_the_bare_dir(void)
{
	char line[PATH_MAX + 16];
	int n;

	mkdirs("proj.git/worktrees/wt2");
	put("proj.git/worktrees/wt2/commondir", "../..\n");
	mkdirs("wt2/src");
	n = snprintf(line, sizeof(line), "gitdir: %s/proj.git/worktrees/wt2\n",
	    h_tmp);
	REQUIRE(n > 0 && (size_t)n < sizeof(line));
	put("wt2/.git", line);
	CHECK_SCOPE("wt2", "proj.git");
	CHECK_SCOPE("wt2/src", "proj.git");
}

static void
test_scope_of_broken_git_file_is_the_dir_itself(void)
{
	mkdirs("a");
	put("a/.git", "this is not a git file\n");
	CHECK_SCOPE("a", "a");
	mkdirs("b");
	put("b/.git", "gitdir: ../nowhere/.git/worktrees/x\n");
	CHECK_SCOPE("b", "b");
	mkdirs("c");
	put("c/.git", "");
	CHECK_SCOPE("c", "c");
	/* a commondir naming a missing directory */
	mkdirs("m/.git/worktrees/w");
	put("m/.git/worktrees/w/commondir", "../../../gone\n");
	mkdirs("w");
	put("w/.git", "gitdir: ../m/.git/worktrees/w\n");
	CHECK_SCOPE("w", "w");
}

static void
test_scope_of_dir_without_repository_is_global(void)
{
	mkdirs("plain/dir");
	CHECK_SCOPE("plain", "");
	CHECK_SCOPE("plain/dir", "");
	/* a "git" without the dot means nothing */
	mkdirs("plain/git");
	CHECK_SCOPE("plain", "");
}

static void
test_scope_of_null_empty_or_missing_dir_is_global(void)
{
	char missing[PATH_MAX];
	char *root = NULL;

	CHECK_INT(pgn_scope_find(NULL, &root), PGN_OK);
	CHECK_STR(root, "");
	free(root);
	root = NULL;
	CHECK_INT(pgn_scope_find("", &root), PGN_OK);
	CHECK_STR(root, "");
	free(root);
	root = NULL;
	/* missing, even inside a repository */
	mkdirs("repo/.git");
	at(missing, sizeof(missing), "repo/no/such/dir");
	CHECK_INT(pgn_scope_find(missing, &root), PGN_OK);
	CHECK_STR(root, "");
	free(root);
}

static void
test_scope_follows_symlinked_dir_to_its_repository(void)
{
	char target[PATH_MAX], lnk[PATH_MAX];

	mkdirs("repo/.git");
	mkdirs("repo/src");
	at(target, sizeof(target), "repo/src");
	at(lnk, sizeof(lnk), "alias");
	REQUIRE(symlink(target, lnk) == 0);
	CHECK_SCOPE("alias", "repo");
}

/* Scope of h_tmp/rel is h_tmp/want, found within a second (never waits). */
static void
check_scope_promptly(const char *rel, const char *want, const char *file,
    int line)
{
	long long t0 = mono_ms();

	/* Should it block, SIGALRM ends the test run with a failure. */
	alarm(SCOPE_ALARM_S);
	check_scope(rel, want, file, line);
	alarm(0);
	h_check(mono_ms() - t0 < 1000, file, line, "found within 1 s");
}

#define CHECK_SCOPE_PROMPTLY(rel, want)                                        \
	check_scope_promptly((rel), (want), __FILE__, __LINE__)

static void
make_fifo(const char *rel)
{
	char path[PATH_MAX];

	at(path, sizeof(path), rel);
	REQUIRE(mkfifo(path, 0600) == 0);
}

static void
test_scope_with_fifo_as_commondir_is_the_worktree_without_waiting(void)
{
	char path[PATH_MAX];

	make_worktree("gitdir: ../main/.git/worktrees/wt\n");
	at(path, sizeof(path), "main/.git/worktrees/wt/commondir");
	REQUIRE(unlink(path) == 0);
	make_fifo("main/.git/worktrees/wt/commondir");
	/* Unreadable as a marker: the directory holding .git, as documented. */
	CHECK_SCOPE_PROMPTLY("wt", "wt");
	CHECK_SCOPE_PROMPTLY("wt/sub", "wt");
	CHECK_SCOPE_PROMPTLY("main", "main");
}

static void
test_scope_with_fifo_as_git_file_is_no_marker(void)
{
	mkdirs("outer/.git");
	mkdirs("outer/inner/sub");
	make_fifo("outer/inner/.git");
	CHECK_SCOPE_PROMPTLY("outer/inner/sub", "outer");
	mkdirs("lone/dir");
	make_fifo("lone/.git");
	CHECK_SCOPE_PROMPTLY("lone/dir", "");
}

static void
test_scope_with_gitdir_naming_a_fifo_or_dirs_is_the_dir_itself(void)
{
	char path[PATH_MAX];

	/* gitdir names a FIFO: no commondir below it. */
	mkdirs("a");
	make_fifo("pipe");
	put("a/.git", "gitdir: ../pipe\n");
	CHECK_SCOPE_PROMPTLY("a", "a");
	/* commondir is a directory, not a file */
	mkdirs("m/.git/worktrees/w/commondir");
	mkdirs("w");
	put("w/.git", "gitdir: ../m/.git/worktrees/w\n");
	CHECK_SCOPE_PROMPTLY("w", "w");
	/* commondir is a device */
	mkdirs("n/.git/worktrees/v");
	at(path, sizeof(path), "n/.git/worktrees/v/commondir");
	REQUIRE(symlink("/dev/zero", path) == 0);
	mkdirs("v");
	put("v/.git", "gitdir: ../n/.git/worktrees/v\n");
	CHECK_SCOPE_PROMPTLY("v", "v");
}

static void
test_scope_reads_a_commondir_of_its_bound_and_not_past_it(void)
{
	static char text[PGN_MAX_PATH + 2];

	make_worktree("gitdir: ../main/.git/worktrees/wt\n");
	/* "../.." and trailing blanks (cut once read): PGN_MAX_PATH bytes. */
	memset(text, ' ', PGN_MAX_PATH);
	memcpy(text, "../..", 5);
	text[PGN_MAX_PATH] = '\0';
	put("main/.git/worktrees/wt/commondir", text);
	CHECK_SCOPE("wt", "main");
	/* One byte more: not read, so not a marker. */
	text[PGN_MAX_PATH] = ' ';
	put("main/.git/worktrees/wt/commondir", text);
	CHECK_SCOPE("wt", "wt");
}

static void
test_read_file_refuses_fifo_device_and_dir_without_waiting(void)
{
	static const char *const what[] = {"fifo", "/dev/zero", "dir"};
	char path[PATH_MAX];
	struct pgn_err err;
	char *data = NULL;
	size_t len = 1, i;
	mode_t mode;
	int exists = 1;

	at(path, sizeof(path), "fifo");
	REQUIRE(mkfifo(path, 0600) == 0);
	mkdirs("dir");
	for (i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		if (what[i][0] == '/')
			REQUIRE(
			    snprintf(path, sizeof(path), "%s", what[i]) > 0);
		else
			at(path, sizeof(path), what[i]);
		pgn_err_clear(&err);
		alarm(SCOPE_ALARM_S);
		CHECK_INT(pgn_read_file(path, 64, &data, &len, &exists, &mode,
		              &err),
		    PGN_EINVAL);
		alarm(0);
		CHECK(data == NULL);
		CHECK_INT(len, 0);
		CHECK_INT(exists, 0);
		CHECK_CONTAINS(err.msg, path);
		CHECK_CONTAINS(err.msg, "not a regular file");
	}
}

static void
test_read_file_reads_to_its_bound_and_refuses_past_it(void)
{
	char path[PATH_MAX];
	struct pgn_err err;
	char *data = NULL;
	size_t len = 0;
	mode_t mode = 0;
	int exists = 0;

	at(path, sizeof(path), "f");
	h_write_file(path, "12345678", 8);
	REQUIRE(chmod(path, 0640) == 0);
	CHECK_INT(pgn_read_file(path, 8, &data, &len, &exists, &mode, &err),
	    PGN_OK);
	CHECK_INT(len, 8);
	CHECK_INT(exists, 1);
	CHECK_INT(mode, 0640);
	CHECK(data != NULL && memcmp(data, "12345678", 8) == 0);
	free(data);
	data = NULL;
	CHECK_INT(pgn_read_file(path, 7, &data, &len, &exists, &mode, &err),
	    PGN_ETOOBIG);
	CHECK(data == NULL);
	CHECK_INT(exists, 0);
	CHECK_CONTAINS(err.msg, "larger than 7 bytes");
	at(path, sizeof(path), "absent");
	CHECK_INT(pgn_read_file(path, 8, &data, &len, &exists, &mode, &err),
	    PGN_OK);
	CHECK_INT(exists, 0);
	CHECK(data == NULL);
}

static const struct h_test tests[] = {
    H_TEST(test_scope_of_temp_dir_is_global),
    H_TEST(test_scope_of_repository_root_is_itself),
    H_TEST(test_scope_of_subdirectory_is_repository_root),
    H_TEST(test_scope_of_nested_repository_is_the_inner_one),
    H_TEST(test_scope_of_linked_worktree_with_absolute_gitdir_is_main),
    H_TEST(test_scope_of_linked_worktree_with_relative_gitdir_is_main),
    H_TEST(test_scope_of_worktree_tolerates_missing_newline_and_crlf),
    H_TEST(test_scope_of_submodule_is_itself),
    H_TEST(test_scope_of_worktree_of_bare_repository_is_the_bare_dir),
    H_TEST(test_scope_of_broken_git_file_is_the_dir_itself),
    H_TEST(test_scope_of_dir_without_repository_is_global),
    H_TEST(test_scope_of_null_empty_or_missing_dir_is_global),
    H_TEST(test_scope_follows_symlinked_dir_to_its_repository),
    H_TEST(test_scope_with_fifo_as_commondir_is_the_worktree_without_waiting),
    H_TEST(test_scope_with_fifo_as_git_file_is_no_marker),
    H_TEST(test_scope_with_gitdir_naming_a_fifo_or_dirs_is_the_dir_itself),
    H_TEST(test_scope_reads_a_commondir_of_its_bound_and_not_past_it),
    H_TEST(test_read_file_refuses_fifo_device_and_dir_without_waiting),
    H_TEST(test_read_file_reads_to_its_bound_and_refuses_past_it),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
