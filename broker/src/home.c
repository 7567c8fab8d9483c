/*
 * The state home ($PIGEON_HOME, XDG state, ~/.local/state/pigeon) and
 * the database path; directories are created 0700 and must belong to
 * the effective user.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_int.h"

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
why_errno(char **why, const char *what, const char *path)
{
	struct pgn_buf b;

	pgn_buf_init(&b, PGN_MAX_ERRMSG);
	pgn_buf_addf(&b, "%s '%s': %s", what, path, strerror(errno));
	*why = pgn_buf_take(&b, NULL);
	return PGN_EIO;
}

static pgn_status
not_ours(char **why, const char *dir, uid_t owner)
{
	struct pgn_buf b;

	pgn_buf_init(&b, PGN_MAX_ERRMSG);
	pgn_buf_addf(&b,
	    "state home '%s' belongs to uid %u, not to you (uid %u): run pigeon as that user, or set PIGEON_HOME to a directory of your own",
	    dir, (unsigned)owner, (unsigned)geteuid());
	*why = pgn_buf_take(&b, NULL);
	return PGN_EIO;
}

pgn_status
pgn_home_ensure(const char *dir, char **why)
{
	char err[PGN_MAX_ERRMSG];
	struct stat sb;
	pgn_status rc;

	*why = NULL;
	/* Missing parents too are made private (the XDG state rule). */
	rc = pgn_mkdir_p(dir, 0700, err, sizeof(err));
	if (rc == PGN_EIO) {
		*why = pgn_strdup(err);
		return rc;
	}
	if (rc != PGN_OK)
		return rc;
	if (stat(dir, &sb) != 0)
		return why_errno(why, "cannot read directory", dir);
	if (!S_ISDIR(sb.st_mode)) {
		errno = ENOTDIR;
		return why_errno(why, "state home", dir);
	}
	/*
	 * Another user's home is never used, by root neither: an ssh'd root
	 * with a user's PIGEON_HOME would leave root-owned files the user
	 * cannot open (docs/decisions/0042). Checked before any chmod.
	 */
	if (sb.st_uid != geteuid())
		return not_ours(why, dir, sb.st_uid);
	if ((sb.st_mode & 077) != 0 && chmod(dir, 0700) != 0)
		return why_errno(why, "cannot make private", dir);
	return PGN_OK;
}

pgn_status
pgn_db_path(const char *flag, char **path, char **why)
{
	const char *v;
	char *home = NULL;
	pgn_status rc;

	*path = NULL;
	*why = NULL;
	v = flag;
	if (v == NULL || *v == '\0')
		v = getenv("PIGEON_DB");
	if (v != NULL && *v != '\0') {
		if (strlen(v) >= PGN_MAX_PATH)
			return PGN_ETOOBIG;
		*path = pgn_strdup(v);
		return *path == NULL ? PGN_ENOMEM : PGN_OK;
	}
	rc = pgn_home_path(&home);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_home_ensure(home, why);
	if (rc == PGN_OK) {
		*path = pgn_path_join(home, "pigeon.db");
		if (*path == NULL)
			rc = PGN_ENOMEM;
	}
	free(home);
	return rc;
}
