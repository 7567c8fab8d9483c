/*
 * Applying an install or uninstall: the plan (paths, read, merge,
 * action, diffs, the permission plan; nothing written) and its
 * execution (write, restore or delete, fsync, the permission write),
 * with a '.pigeon.bak' of the first original (docs/decisions/0151).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "setup_int.h"
#include "pigeon/setup.h"

/* ---- apply ---------------------------------------------------------- */

/*
 * Pigeon's backup of the first original: never '<file>.bak', which may
 * be the user's own (docs/decisions/0036).
 */
#define BAK_SUFFIX ".pigeon.bak"

static char *
side_path(const char *path, const char *suffix)
{
	struct pgn_buf b;

	pgn_buf_init(&b, PGN_MAX_PATH);
	pgn_buf_addf(&b, "%s%s", path, suffix);
	return pgn_buf_take(&b, NULL);
}

enum action {
	ACT_NONE,
	ACT_WRITE,   /* write the merged content */
	ACT_RESTORE, /* write the .bak bytes back, remove the .bak */
	ACT_DELETE   /* remove the file Pigeon created */
};

/* What an install or uninstall will do, decided before any write. */
struct plan {
	char *target;  /* the config written (a symlink's target) */
	char *bakpath; /* its '.pigeon.bak' */
	char *in;      /* its bytes, if it exists */
	size_t len;
	mode_t mode;
	int exists;
	int nlinks; /* 1, or 2 for a file with other hard links */
	char *bak;  /* the backup's bytes, read for an uninstall */
	size_t baklen;
	struct merged m;
	enum action act;
	int own_file;          /* the permission edit is a file of its own */
	struct perm_plan perm; /* ... and this is its plan */
};

static void
plan_release(struct plan *p)
{
	free(p->target);
	free(p->bakpath);
	free(p->in);
	free(p->bak);
	ins_merged_release(&p->m);
	ins_perm_plan_release(&p->perm);
	memset(p, 0, sizeof(*p));
}

void
pgn_install_result_release(struct pgn_install_result *r)
{
	if (r == NULL)
		return;
	free(r->path);
	free(r->diff);
	free(r->note);
	free(r->perm_path);
	free(r->perm_diff);
	free(r->perm_what);
	memset(r, 0, sizeof(*r));
}

/*
 * The file the plan edits: the config at 'path', or the target of a
 * symlinked one (dotfiles stay links); its backup's path, its bytes,
 * and whether it has other hard links.
 */
static pgn_status
plan_read(const struct pgn_host_info *hi, const char *path, struct plan *p,
    struct pgn_err *err)
{
	struct stat sb;
	pgn_status rc;

	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		p->target = realpath(path, NULL);
		if (p->target == NULL) {
			return pgn_err_set(err, PGN_EIO,
			    "'%s' is a symbolic link that cannot be followed (%s): left untouched",
			    path, strerror(errno));
		}
	} else {
		p->target = pgn_strdup(path);
	}
	if (p->target == NULL)
		return PGN_ENOMEM;
	p->bakpath = side_path(p->target, BAK_SUFFIX);
	if (p->bakpath == NULL) {
		return pgn_err_set(err, PGN_ETOOBIG,
		    "the %s config path is too long", hi->name);
	}
	rc = pgn_read_file(p->target, PGN_MAX_CONFIG, &p->in, &p->len,
	    &p->exists, &p->mode, err);
	if (rc != PGN_OK)
		return rc;
	if (p->exists && stat(p->target, &sb) == 0 && sb.st_nlink > 1)
		p->nlinks = (int)(sb.st_nlink > 2 ? 2 : sb.st_nlink);
	return PGN_OK;
}

/*
 * What to do with the merge's result: write it; or, for an uninstall,
 * bring the backup back when it is what the result holds, or remove a
 * file Pigeon created that is back to its skeleton.
 */
static pgn_status
plan_action(const struct pgn_install *req, const struct pgn_host_info *hi,
    struct plan *p)
{
	struct pgn_err why;
	mode_t bakmode = 0644;
	int bakexists = 0;
	pgn_status rc;

	p->act = ACT_NONE;
	if (!p->m.changed)
		return PGN_OK;
	p->act = ACT_WRITE;
	if (!req->remove)
		return PGN_OK;
	rc = pgn_read_file(p->bakpath, PGN_MAX_CONFIG, &p->bak, &p->baklen,
	    &bakexists, &bakmode, &why);
	if (rc == PGN_ENOMEM)
		return rc;
	/* An unreadable backup is kept, never restored. */
	if (rc != PGN_OK)
		bakexists = 1;
	if (p->bak != NULL &&
	    ins_bak_matches(req->host, p->bak, p->baklen, p->m.root))
		p->act = ACT_RESTORE;
	else if (!bakexists && p->nlinks == 1 &&
	    ins_is_skeleton(p->m.root, hi->shape))
		p->act = ACT_DELETE;
	return PGN_OK;
}

/* The line diff of what the plan's action makes of the config. */
static pgn_status
plan_diff(const struct plan *p, const char *path, char **diff)
{
	const char *newdata;
	size_t newlen;

	newdata = p->act == ACT_RESTORE     ? p->bak :
	    p->act == ACT_DELETE            ? NULL :
	    p->act == ACT_NONE && p->exists ? p->in :
	                                      p->m.out;
	newlen = p->act == ACT_RESTORE ? p->baklen :
	    p->act == ACT_DELETE       ? 0 :
	    p->act == ACT_NONE         ? p->len :
	                                 p->m.outlen;
	return pgn_line_diff(path, p->exists ? p->in : NULL, p->len, newdata,
	    newlen, diff);
}

/*
 * The permission edit, planned (and refused) before any write: what it
 * is in res->perm_what, and for a file of its own its plan and diff.
 */
static pgn_status
plan_perm(const struct pgn_install *req, const char *word, struct plan *p,
    struct pgn_install_result *res, struct pgn_err *err)
{
	struct perm_plan *pp = &p->perm;
	pgn_status rc;

	rc = ins_perm_describe(req, res, word, &p->own_file, err);
	if (rc != PGN_OK || !p->own_file)
		return rc;
	free(res->perm_what);
	res->perm_what = NULL;
	rc = ins_perm_plan_make(req, res->path, pp, &res->perm_what, err);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_line_diff(pp->path, pp->exists ? pp->in : NULL, pp->len,
	    pp->del         ? NULL :
	        pp->changed ? pp->out :
	                      pp->in,
	    pp->del         ? 0 :
	        pp->changed ? pp->outlen :
	                      pp->len,
	    &res->perm_diff);
	if (rc != PGN_OK)
		return rc;
	res->perm_path = pgn_strdup(pp->path);
	if (res->perm_path == NULL)
		return PGN_ENOMEM;
	res->perm_changed = pp->changed;
	return PGN_OK;
}

/*
 * The plan of a command hook's install or uninstall: the config's path,
 * its bytes, the merge, the action, the diffs and the permission plan,
 * all in 'p' and 'res'. Nothing is written.
 */
static pgn_status
install_plan(const struct pgn_install *req, const struct pgn_host_info *hi,
    struct plan *p, struct pgn_install_result *res, struct pgn_err *err)
{
	char word[WORD_MAX] = PIGEON_NAME;
	struct pgn_err why;
	int rules;
	pgn_status rc;

	p->mode = 0644;
	p->nlinks = 1;
	rc = pgn_host_config_path(req->host, req->project, &res->path, err);
	if (rc != PGN_OK)
		return rc;
	rc = plan_read(hi, res->path, p, err);
	if (rc != PGN_OK)
		return rc;
	rules = req->permissions && ins_perm_kind(req) == PGN_PERM_RULES;
	if (rules && !req->remove)
		ins_hook_pigeon_word(req->hook, word, sizeof(word));
	rc = ins_merge(req->host, p->exists ? p->in : NULL, p->len,
	    req->remove ? NULL : req->hook, rules ? word : NULL, req->rewake,
	    &p->m, &why);
	if (rc == PGN_EINVAL || rc == PGN_ETOOBIG) {
		pgn_err_set(err, rc, "'%s' %s: left untouched; fix or move it",
		    res->path, why.msg);
		return rc;
	}
	if (rc != PGN_OK)
		return rc;
	if (!req->remove && hi->trust_note[req->project != NULL] != NULL) {
		res->note = pgn_strdup(hi->trust_note[req->project != NULL]);
		if (res->note == NULL)
			return PGN_ENOMEM;
	}
	res->changed = p->m.changed;
	rc = plan_action(req, hi, p);
	if (rc == PGN_OK)
		rc = plan_diff(p, res->path, &res->diff);
	if (rc == PGN_OK && req->permissions)
		rc = plan_perm(req, word, p, res, err);
	return rc;
}

/*
 * Carry out plan 'p': write the merge (keeping the first original as
 * the backup), restore the backup, or remove the file; then the
 * permission edit's own file.
 */
static pgn_status
install_execute(const struct pgn_install *req, const struct plan *p,
    const struct pgn_install_result *res, struct pgn_err *err)
{
	struct pgn_err why;
	char *dir;
	pgn_status rc = PGN_OK;

	switch (p->act) {
	case ACT_WRITE:
		if (!p->exists) {
			dir = pgn_path_dir(p->target);
			if (dir == NULL)
				return PGN_ENOMEM;
			rc = pgn_mkdir_p(dir, 0755, err);
			free(dir);
			if (rc != PGN_OK)
				return rc;
		}
		/*
		 * Only the first original is kept: the file as it was before
		 * any Pigeon entry; a backup is never replaced.
		 */
		if (!req->remove && p->exists && p->m.had == 0 &&
		    access(p->bakpath, F_OK) != 0) {
			rc = pgn_write_atomic(p->bakpath, p->in, p->len,
			    p->mode, err);
			if (rc != PGN_OK)
				return rc;
		}
		rc = pgn_write_linked(p->target, p->nlinks, p->m.out,
		    p->m.outlen, p->in, p->len, p->mode, err);
		break;
	case ACT_RESTORE:
		rc = pgn_write_linked(p->target, p->nlinks, p->bak, p->baklen,
		    p->in, p->len, p->mode, err);
		if (rc == PGN_OK)
			rc = pgn_unlink_synced(p->bakpath, err);
		break;
	case ACT_DELETE:
		rc = pgn_unlink_synced(p->target, err);
		break;
	case ACT_NONE:
		break;
	}
	if (rc != PGN_OK || !p->own_file)
		return rc;
	rc = ins_perm_plan_write(&p->perm, &why);
	if (rc != PGN_OK)
		pgn_err_hint(err, rc, PGN_HINT_PERM_AGAIN, NULL,
		    "Pigeon's hooks are %s '%s', but the permission edit failed: %s",
		    req->remove ? "removed from" : "in", res->path, why.msg);
	return rc;
}

pgn_status
pgn_install_apply(const struct pgn_install *req, struct pgn_install_result *res,
    struct pgn_err *err)
{
	const struct pgn_host_info *hi;
	struct plan p = {0};
	int own_file = 0;
	pgn_status rc;

	memset(res, 0, sizeof(*res));
	pgn_err_clear(err);
	hi = pgn_host_get(req->host);
	if (hi == NULL) {
		return pgn_err_set(err, PGN_EINVAL, "unknown host");
	}
	if (hi->mechanism != PGN_MECH_COMMAND &&
	    hi->mechanism != PGN_MECH_PLUGIN) {
		return pgn_err_set(err, PGN_EINVAL,
		    "%s runs no hook: Pigeon cannot install into it", hi->name);
	}
	if (!req->remove && !ins_hook_path_ok(req->hook)) {
		return pgn_err_set(err, PGN_EINVAL,
		    "hook '%s' is not an absolute path ending in /" HOOK_NAME,
		    req->hook != NULL ? req->hook : "");
	}
	if (hi->mechanism == PGN_MECH_PLUGIN) {
		rc = pgn_plugin_apply(req, res, err);
		if (rc == PGN_OK && req->permissions)
			rc = ins_perm_describe(req, res, PIGEON_NAME, &own_file,
			    err);
		goto out;
	}
	rc = install_plan(req, hi, &p, res, err);
	if (rc == PGN_OK && !req->dry_run)
		rc = install_execute(req, &p, res, err);
out:
	if (rc == PGN_ENOMEM && err->msg[0] == '\0')
		pgn_err_set(err, rc, "out of memory");
	if (rc != PGN_OK) {
		res->changed = 0;
		free(res->diff);
		res->diff = NULL;
		free(res->note);
		res->note = NULL;
		res->perm_changed = 0;
		free(res->perm_diff);
		res->perm_diff = NULL;
	}
	plan_release(&p);
	return rc;
}
