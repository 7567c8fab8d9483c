/*
 * Scope discovery: the root of the main worktree of the git repository
 * around a directory, found by reading .git files, without running git.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pgn_int.h"

#define PGN_MAX_GITFILE PGN_MAX_PATH /* a .git or commondir file */

/*
 * Read a small text file, trailing whitespace cut: NULL if absent,
 * empty, over PGN_MAX_GITFILE, or not a regular file (a FIFO, device or
 * directory is no repository marker, and is never waited on).
 */
static char *
read_small(const char *path)
{
	struct pgn_err err;
	char *data = NULL, *text;
	size_t len = 0;
	mode_t mode;
	int exists = 0;

	if (pgn_read_file(path, PGN_MAX_GITFILE, &data, &len, &exists, &mode,
	        &err) != PGN_OK ||
	    !exists || len == 0) {
		free(data);
		return NULL;
	}
	while (len > 0 &&
	    (data[len - 1] == '\n' || data[len - 1] == '\r' ||
	        data[len - 1] == ' ' || data[len - 1] == '\t'))
		len--;
	text = pgn_strndup(data, len);
	free(data);
	return text;
}

/* realpath of 'rel' taken relative to directory 'base' unless absolute. */
static char *
resolve(const char *base, const char *rel)
{
	struct pgn_buf b;
	char *joined, *real;

	pgn_buf_init(&b, PGN_MAX_PATH);
	if (rel[0] != '/') {
		pgn_buf_adds(&b, base);
		pgn_buf_adds(&b, "/");
	}
	pgn_buf_adds(&b, rel);
	joined = pgn_buf_take(&b, NULL);
	if (joined == NULL)
		return NULL;
	real = realpath(joined, NULL);
	free(joined);
	return real;
}

/*
 * 'dir' holds a .git file: a linked worktree (gitdir has a commondir
 * naming the main repository's .git) or a submodule / separate git dir
 * (no commondir: 'dir' is its own root).
 */
static char *
root_from_gitfile(const char *dir, const char *gitfile)
{
	char *text = NULL, *gitdir = NULL, *common = NULL, *cd = NULL;
	char *root = NULL, *slash;

	text = read_small(gitfile);
	if (text == NULL || strncmp(text, "gitdir:", 7) != 0)
		goto own;
	gitdir = resolve(dir, text + 7 + strspn(text + 7, " \t"));
	if (gitdir == NULL)
		goto own;
	{
		struct pgn_buf b;

		pgn_buf_init(&b, PGN_MAX_PATH);
		pgn_buf_adds(&b, gitdir);
		pgn_buf_adds(&b, "/commondir");
		cd = pgn_buf_take(&b, NULL);
	}
	if (cd == NULL)
		goto own;
	free(text);
	text = read_small(cd);
	if (text == NULL)
		goto own;
	common = resolve(gitdir, text);
	if (common == NULL)
		goto own;
	slash = strrchr(common, '/');
	if (slash != NULL && strcmp(slash, "/.git") == 0) {
		/* The main worktree holds the common .git directory. */
		root = pgn_strndup(common,
		    slash == common ? 1 : (size_t)(slash - common));
	} else {
		/* A bare repository with worktrees: it is the scope. */
		root = common;
		common = NULL;
	}
	goto out;
own:
	root = pgn_strdup(dir);
out:
	free(text);
	free(gitdir);
	free(common);
	free(cd);
	return root;
}

/*
 * Codex's workspace-write sandbox mounts an empty read-only tmpfs at
 * .git in every writable root that has none, the working directory
 * included: an empty directory on a file system of its own, which no
 * git repository is. It is passed over, so the walk finds the real one
 * above (docs/decisions/0077).
 */
static int
sandbox_mask(const char *dir, const struct stat *git, const char *path)
{
	struct stat up;
	struct dirent *e;
	DIR *d;
	int empty = 1;

	if (stat(dir, &up) != 0 || up.st_dev == git->st_dev)
		return 0;
	d = opendir(path);
	if (d == NULL)
		return 0;
	while (empty && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

pgn_status
pgn_scope_find(const char *dir, char **root)
{
	struct pgn_buf b;
	struct stat sb;
	char *cur = NULL, *slash;
	size_t curlen;

	*root = NULL;
	if (dir != NULL && *dir != '\0')
		cur = realpath(dir, NULL);
	if (cur == NULL)
		goto global;
	pgn_buf_init(&b, PGN_MAX_PATH + 8);
	for (;;) {
		curlen = strlen(cur);
		pgn_buf_reset(&b);
		pgn_buf_add(&b, cur, curlen);
		pgn_buf_adds(&b, curlen > 1 ? "/.git" : ".git");
		if (b.err == PGN_ENOMEM) {
			pgn_buf_release(&b);
			free(cur);
			return PGN_ENOMEM;
		}
		if (b.err == PGN_OK && lstat(b.data, &sb) == 0) {
			if (S_ISDIR(sb.st_mode) &&
			    !sandbox_mask(cur, &sb, b.data)) {
				*root = cur;
				pgn_buf_release(&b);
				return PGN_OK;
			}
			if (S_ISREG(sb.st_mode)) {
				*root = root_from_gitfile(cur, b.data);
				pgn_buf_release(&b);
				free(cur);
				return *root == NULL ? PGN_ENOMEM : PGN_OK;
			}
		}
		if (strcmp(cur, "/") == 0)
			break;
		slash = strrchr(cur, '/');
		if (slash == cur)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	pgn_buf_release(&b);
	free(cur);
global:
	*root = pgn_strdup("");
	return *root == NULL ? PGN_ENOMEM : PGN_OK;
}
