/*
 * The state home ($PIGEON_HOME, XDG state, ~/.local/state/pigeon) and
 * the database path; directories are created 0700 and must belong to
 * the effective user. And the pigeon CLI beside a pigeon-hook.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_int.h"

#define TOO_LONG                                                               \
	"the database path or PIGEON_HOME is over 4096 bytes: choose a shorter one"

pgn_status
pgn_home_path(char **dir)
{
	const char *v;

	*dir = NULL;
	v = getenv("PIGEON_HOME");
	if (v != NULL && *v != '\0') {
		if (strlen(v) >= PGN_MAX_PATH)
			return PGN_ETOOBIG;
		/* Relative, it would name another home in every directory. */
		if (v[0] != '/')
			return PGN_EINVAL;
		*dir = pgn_strdup(v);
	} else if ((v = getenv("XDG_STATE_HOME")) != NULL && v[0] == '/') {
		*dir = pgn_path_join(v, "pigeon");
	} else if ((v = getenv("HOME")) != NULL && v[0] == '/') {
		*dir = pgn_path_join(v, ".local/state/pigeon");
	} else {
		return PGN_EINVAL;
	}
	return *dir == NULL ? PGN_ENOMEM : PGN_OK;
}

static pgn_status
fail_errno(struct pgn_err *err, const char *what, const char *path)
{
	return pgn_err_set(err, PGN_EIO, "%s '%s': %s", what, path,
	    strerror(errno));
}

pgn_status
pgn_home_ensure(const char *dir, struct pgn_err *err)
{
	struct stat sb;
	pgn_status rc;

	/*
	 * Missing parents too are made private (the XDG state rule). A home
	 * that is there already needs no mkdir of each parent: one stat
	 * instead of one call per component, on every hook run (0251).
	 */
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		rc = pgn_mkdir_p(dir, 0700, err);
		if (rc != PGN_OK)
			return rc;
		if (stat(dir, &sb) != 0)
			return fail_errno(err, "cannot read directory", dir);
	}
	if (!S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		return fail_errno(err, "state home", dir);
	}
	/*
	 * Another user's home is never used, by root neither: an ssh'd root
	 * with a user's PIGEON_HOME would leave root-owned files the user
	 * cannot open (docs/decisions/0042). Checked before any chmod.
	 */
	if (sb.st_uid != geteuid())
		return pgn_err_hint(err, PGN_EIO, PGN_HINT_HOME_OWNER, NULL,
		    "state home '%s' belongs to uid %u, not to you (uid %u)",
		    dir, (unsigned)sb.st_uid, (unsigned)geteuid());
	if ((sb.st_mode & 077) != 0 && chmod(dir, 0700) != 0)
		return fail_errno(err, "cannot make private", dir);
	return PGN_OK;
}

pgn_status
pgn_db_path(const char *flag, char **path, struct pgn_err *err)
{
	const char *v;
	char *home = NULL;
	pgn_status rc;

	*path = NULL;
	v = flag;
	if (v == NULL || *v == '\0')
		v = getenv("PIGEON_DB");
	if (v != NULL && *v != '\0') {
		if (strlen(v) >= PGN_MAX_PATH)
			return pgn_err_set(err, PGN_ETOOBIG, TOO_LONG);
		*path = pgn_strdup(v);
		return *path == NULL ?
		    pgn_err_set(err, PGN_ENOMEM, "out of memory") :
		    PGN_OK;
	}
	rc = pgn_home_path(&home);
	if (rc == PGN_ETOOBIG)
		return pgn_err_set(err, rc, TOO_LONG);
	if (rc == PGN_EINVAL)
		return pgn_err_set(err, rc,
		    "cannot find the state directory: set PIGEON_HOME (an absolute path) or HOME");
	if (rc != PGN_OK)
		return pgn_err_set(err, rc, "out of memory");
	rc = pgn_home_ensure(home, err);
	if (rc == PGN_OK) {
		*path = pgn_path_join(home, "pigeon.db");
		if (*path == NULL)
			rc = pgn_err_set(err, PGN_ENOMEM, "out of memory");
	}
	free(home);
	return rc;
}

pgn_status
pgn_db_path_in(const char *home, char **path)
{
	const char *v = getenv("PIGEON_DB");

	*path = NULL;
	if (v != NULL && *v != '\0') {
		if (strlen(v) >= PGN_MAX_PATH)
			return PGN_ETOOBIG;
		*path = pgn_strdup(v);
		return *path == NULL ? PGN_ENOMEM : PGN_OK;
	}
	if (home == NULL)
		return PGN_EINVAL;
	*path = pgn_path_join(home, "pigeon.db");
	return *path == NULL ? PGN_ENOMEM : PGN_OK;
}

/*
 * The pigeon CLI beside the hook's real path (pigeon.h): the hook names
 * it to the model, install's permission rules name the same.
 */
char *
pgn_pigeon_beside(const char *hook)
{
	static const char *const rel[] = {"pigeon", "../cli/pigeon"};
	char *real = NULL, *dir = NULL, *cand = NULL, *found = NULL;
	size_t i;

	if (hook == NULL)
		return NULL;
	real = realpath(hook, NULL);
	dir = pgn_path_dir(real != NULL ? real : hook);
	for (i = 0;
	     dir != NULL && found == NULL && i < sizeof(rel) / sizeof(rel[0]);
	     i++) {
		cand = pgn_path_join(dir, rel[i]);
		if (cand != NULL && access(cand, X_OK) == 0)
			found = realpath(cand, NULL);
		free(cand);
	}
	free(real);
	free(dir);
	return found;
}
