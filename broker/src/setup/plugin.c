/*
 * The plugin drop (PGN_MECH_PLUGIN, opencode): install writes the host
 * row's plugin file, filled in with the hook's path, into the host's
 * plugin directory; uninstall removes exactly that file and the
 * directories install created for it; inspect tells doctor what is
 * there. A file is Pigeon's when its first line is the template's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"
#include "setup_int.h"

/* Directories install may create for the plugin (~/.config/opencode/plugin). */
#define PLUGIN_MAX_MADE 8
/* The plugin file: the template is a few KiB. */
#define PLUGIN_MAX_TEXT (64 * 1024)
#define PLUGIN_MODE     0644
#define PLUGIN_DIR_MODE 0755

struct made {
	char *dir[PLUGIN_MAX_MADE]; /* outermost first */
	size_t n;
};

static void
made_release(struct made *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		free(m->dir[i]);
	memset(m, 0, sizeof(*m));
}

/* The template's first line, with its newline. */
static size_t
mark_len(const char *tmpl)
{
	const char *nl = strchr(tmpl, '\n');

	return nl != NULL ? (size_t)(nl - tmpl) + 1 : strlen(tmpl);
}

/* Does 'in' start with the template's first line? */
static int
is_ours(const char *tmpl, const char *in, size_t len)
{
	size_t n = mark_len(tmpl);

	return in != NULL && len >= n && memcmp(in, tmpl, n) == 0;
}

/*
 * The JSON value of the line "const NAME = VALUE;" of a Pigeon plugin
 * 'in' (caller frees), or NULL.
 */
static cJSON *
plugin_const(const char *in, size_t len, const char *name)
{
	char head[64];
	const char *p, *end, *nl;
	size_t n;

	n = (size_t)snprintf(head, sizeof(head), "\nconst %s = ", name);
	for (p = in, end = in + len; p != NULL && p < end;
	     p = memchr(p + 1, '\n', (size_t)(end - p - 1))) {
		if ((size_t)(end - p) <= n || memcmp(p, head, n) != 0)
			continue;
		p += n;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL || nl == p || nl[-1] != ';')
			return NULL;
		return cJSON_ParseWithLength(p, (size_t)(nl - 1 - p));
	}
	return NULL;
}

/* The directories a Pigeon plugin 'in' says install created. */
static pgn_status
made_read(const char *in, size_t len, struct made *m)
{
	cJSON *v = plugin_const(in, len, "MADE"), *it;
	pgn_status rc = PGN_OK;

	memset(m, 0, sizeof(*m));
	if (!cJSON_IsArray(v)) {
		cJSON_Delete(v);
		return PGN_OK;
	}
	cJSON_ArrayForEach(it, v)
	{
		if (!cJSON_IsString(it) || it->valuestring[0] != '/' ||
		    m->n == PLUGIN_MAX_MADE)
			continue;
		m->dir[m->n] = pgn_strdup(it->valuestring);
		if (m->dir[m->n] == NULL) {
			rc = PGN_ENOMEM;
			break;
		}
		m->n++;
	}
	cJSON_Delete(v);
	if (rc != PGN_OK)
		made_release(m);
	return rc;
}

/*
 * The directories missing on the way to 'dir' (outermost first): what
 * install will create. The first existing one must be a directory.
 */
static pgn_status
made_plan(const char *dir, struct made *m, struct pgn_err *err)
{
	struct stat sb;
	char *p, *up;
	size_t i;

	memset(m, 0, sizeof(*m));
	p = pgn_strdup(dir);
	while (p != NULL && lstat(p, &sb) != 0 && errno == ENOENT) {
		if (m->n == PLUGIN_MAX_MADE) {
			pgn_err_set(err, PGN_EINVAL,
			    "more than %d directories are missing on the way to '%s': create them first",
			    PLUGIN_MAX_MADE, dir);
			free(p);
			made_release(m);
			return PGN_EINVAL;
		}
		/* Deepest first here; turned round below. */
		m->dir[m->n++] = p;
		up = pgn_path_dir(p);
		p = up;
		if (p != NULL && strcmp(p, m->dir[m->n - 1]) == 0) {
			free(p);
			p = NULL;
			break;
		}
	}
	if (p == NULL && m->n == 0) {
		made_release(m);
		return PGN_ENOMEM;
	}
	if (p != NULL && lstat(p, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
		pgn_err_set(err, PGN_EINVAL,
		    "'%s' is not a directory: Pigeon cannot create '%s'", p,
		    dir);
		free(p);
		made_release(m);
		return PGN_EINVAL;
	}
	free(p);
	for (i = 0; i < m->n / 2; i++) {
		up = m->dir[i];
		m->dir[i] = m->dir[m->n - 1 - i];
		m->dir[m->n - 1 - i] = up;
	}
	return PGN_OK;
}

/* A JSON text of 'v' (a cJSON tree the caller frees). */
static char *
json_text(cJSON *v)
{
	char *s = v != NULL ? cJSON_PrintUnformatted(v) : NULL;

	cJSON_Delete(v);
	return s;
}

/* The plugin for 'hook', recording the directories 'm'. */
static char *
plugin_text(const char *tmpl, const char *hook, const struct made *m)
{
	static const char *const keys[3] = {"@PIGEON_HOOK@", "@PIGEON_MADE@",
	    "@PIGEON_TIMEOUT_MS@"};
	char *val[3] = {NULL}, *out = NULL;
	const char *p, *best;
	struct pgn_buf b;
	cJSON *arr;
	size_t i, k, n = 0;

	val[0] = json_text(cJSON_CreateString(hook));
	arr = cJSON_CreateArray();
	for (i = 0; arr != NULL && i < m->n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(m->dir[i]));
	val[1] = json_text(arr);
	val[2] = malloc(16);
	if (val[0] == NULL || val[1] == NULL || val[2] == NULL)
		goto out;
	snprintf(val[2], 16, "%d", PGN_HOOK_TIMEOUT_S * 1000);
	pgn_buf_init(&b, PLUGIN_MAX_TEXT);
	for (p = tmpl; *p != '\0';) {
		best = NULL;
		for (k = 0; k < 3; k++) {
			const char *q = strstr(p, keys[k]);

			if (q != NULL && (best == NULL || q < best)) {
				best = q;
				n = k;
			}
		}
		if (best == NULL) {
			pgn_buf_adds(&b, p);
			break;
		}
		pgn_buf_add(&b, p, (size_t)(best - p));
		pgn_buf_adds(&b, val[n]);
		p = best + strlen(keys[n]);
	}
	out = pgn_buf_take(&b, NULL);
out:
	for (k = 0; k < 3; k++)
		free(val[k]);
	return out;
}

/*
 * The plugin directory must be one Pigeon may write in: not a symbolic
 * link, a directory, not read-only (its owner's write bit: a directory
 * made read-only is refused even for root). Absent is fine.
 */
static pgn_status
dir_check(const char *dir, struct pgn_err *err)
{
	struct stat sb;

	if (lstat(dir, &sb) != 0)
		return PGN_OK;
	if (S_ISLNK(sb.st_mode)) {
		return pgn_err_hint(err, PGN_EINVAL, PGN_HINT_PLUGIN_DIR, NULL,
		    "'%s' is a symbolic link: Pigeon writes no plugin through a link",
		    dir);
	}
	if (!S_ISDIR(sb.st_mode)) {
		return pgn_err_set(err, PGN_EINVAL,
		    "'%s' is not a directory: left untouched", dir);
	}
	if ((sb.st_mode & S_IWUSR) == 0 || access(dir, W_OK) != 0) {
		return pgn_err_set(err, PGN_EINVAL,
		    "'%s' is read-only: Pigeon cannot change its plugin there; make it writable (chmod u+w '%s') and retry",
		    dir, dir);
	}
	return PGN_OK;
}

/*
 * Create 'path' holding 'data' only if it is absent (a temp file linked
 * into place): a file that appeared meanwhile is never replaced, and
 * is an error unless it is Pigeon's.
 */
static pgn_status
write_new(const char *tmpl, const char *path, const char *data, size_t len,
    struct pgn_err *err)
{
	char tmp[PGN_MAX_PATH + 32], *in = NULL, *dir = NULL;
	size_t inlen = 0, off = 0;
	mode_t mode = 0;
	int fd, exists = 0;
	ssize_t w;
	pgn_status rc = PGN_EIO;

	if (snprintf(tmp, sizeof(tmp), "%s.pigeon-tmp.%ld", path,
	        (long)getpid()) >= (int)sizeof(tmp)) {
		return pgn_err_set(err, PGN_ETOOBIG,
		    "the path '%s' is too long", path);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
	    PLUGIN_MODE);
	if (fd < 0) {
		return pgn_err_set(err, PGN_EIO, "cannot create '%s': %s", tmp,
		    strerror(errno));
	}
	while (off < len) {
		w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			break;
		off += (size_t)w;
	}
	if (off < len || fsync(fd) != 0) {
		pgn_err_set(err, rc, "cannot write '%s': %s", tmp,
		    strerror(errno));
		(void)close(fd);
		goto out;
	}
	if (close(fd) != 0) {
		pgn_err_set(err, rc, "cannot write '%s': %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (link(tmp, path) == 0) {
		rc = PGN_OK;
	} else if (errno == EEXIST) {
		/* Another file now: a foreign one is an error, Pigeon's stays.
		 */
		rc = pgn_read_file(path, PLUGIN_MAX_TEXT, &in, &inlen, &exists,
		    &mode, err);
		if (rc == PGN_OK && exists && !is_ours(tmpl, in, inlen)) {
			rc = pgn_err_set(err, PGN_EINVAL,
			    "'%s' appeared meanwhile and is not Pigeon's: left untouched",
			    path);
		}
	} else {
		pgn_err_set(err, rc, "cannot create '%s': %s", path,
		    strerror(errno));
	}
	dir = pgn_path_dir(path);
	if (dir != NULL)
		(void)pgn_fsync_dir(dir);
out:
	(void)unlink(tmp);
	free(in);
	free(dir);
	return rc;
}

/* What is at the plugin's path: its bytes if a regular file. */
struct found {
	char *in;
	size_t len;
	int exists; /* something is there */
	int ours;
};

/* Does text 'in' hold '"NAME"'? */
static int
quoted_in(const char *in, size_t len, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; in != NULL && i + n + 2 <= len; i++)
		if (in[i] == '"' && memcmp(in + i + 1, name, n) == 0 &&
		    in[i + 1 + n] == '"')
			return 1;
	return 0;
}

static pgn_status
look(const char *tmpl, const char *path, struct found *f, struct pgn_err *err)
{
	struct stat sb;
	mode_t mode = 0;
	int exists = 0;
	pgn_status rc;

	memset(f, 0, sizeof(*f));
	if (lstat(path, &sb) != 0)
		return PGN_OK;
	f->exists = 1;
	if (!S_ISREG(sb.st_mode))
		return PGN_OK; /* a link or anything else: not Pigeon's */
	rc = pgn_read_file(path, PLUGIN_MAX_TEXT, &f->in, &f->len, &exists,
	    &mode, err);
	if (rc == PGN_ETOOBIG) {
		/* Larger than Pigeon ever writes: someone else's. */
		pgn_err_clear(err);
		return PGN_OK;
	}
	if (rc != PGN_OK)
		return rc;
	f->ours = exists && is_ours(tmpl, f->in, f->len);
	return PGN_OK;
}

/*
 * Installs of one user (or one project) take turns: an flock on $HOME
 * (the project directory), which always exists and is never Pigeon's
 * to create, so a second install sees the first one's plugin and the
 * directories it recorded. Returns the descriptor, or -1 (no lock: the
 * exclusive create still keeps a foreign file safe).
 */
static int
lock_base(const struct pgn_install *req)
{
	const char *base = req->project != NULL ? req->project : getenv("HOME");
	int fd;

	if (base == NULL || base[0] != '/')
		return -1;
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			(void)close(fd);
			return -1;
		}
	}
	return fd;
}

/* Remove the plugin, then the directories install made, if empty. */
static pgn_status
remove_plugin(const char *path, const struct made *m, struct pgn_err *err)
{
	size_t i;

	if (pgn_unlink_synced(path, err) != PGN_OK)
		return PGN_EIO;
	/* Innermost first; one that holds something else now stays. */
	for (i = m->n; i-- > 0;)
		if (rmdir(m->dir[i]) != 0 && errno != ENOENT)
			break;
	return PGN_OK;
}

pgn_status
pgn_plugin_apply(const struct pgn_install *req, struct pgn_install_result *res,
    struct pgn_err *err)
{
	const struct pgn_host_info *hi = pgn_host_get(req->host);
	const char *tmpl = hi->plugin;
	struct found f = {0};
	struct made m = {0};
	char *dir = NULL, *text = NULL, *note = NULL;
	const char *why;
	pgn_status rc;
	int lock = -1;

	if (!req->dry_run)
		lock = lock_base(req);
	rc = pgn_host_config_path(req->host, req->project, &res->path, err);
	if (rc != PGN_OK)
		goto out;
	rc = PGN_ENOMEM;
	dir = pgn_path_dir(res->path);
	if (dir == NULL)
		goto out;
	rc = dir_check(dir, err);
	if (rc == PGN_OK)
		rc = look(tmpl, res->path, &f, err);
	if (rc != PGN_OK)
		goto out;
	if (req->remove) {
		if (!f.ours) {
			why = f.exists ?
			    "it is not Pigeon's plugin, left as it is" :
			    NULL;
			if (why != NULL) {
				note = pgn_strdup(why);
				rc = note != NULL ? PGN_OK : PGN_ENOMEM;
			}
			res->diff = pgn_strdup("");
			rc = res->diff == NULL ? PGN_ENOMEM : rc;
			goto out;
		}
		res->changed = 1;
		rc = made_read(f.in, f.len, &m);
		if (rc == PGN_OK)
			rc = pgn_line_diff(res->path, f.in, f.len, NULL, 0,
			    &res->diff);
		if (rc != PGN_OK || req->dry_run)
			goto out;
		rc = remove_plugin(res->path, &m, err);
		goto out;
	}
	if (f.exists && !f.ours) {
		rc = pgn_err_hint(err, PGN_EINVAL, PGN_HINT_INSTALL_AGAIN,
		    hi->name,
		    "'%s' exists and is not Pigeon's plugin: left untouched",
		    res->path);
		goto out;
	}
	rc = f.ours ? made_read(f.in, f.len, &m) : made_plan(dir, &m, err);
	if (rc != PGN_OK)
		goto out;
	rc = PGN_ENOMEM;
	text = plugin_text(tmpl, req->hook, &m);
	if (text == NULL)
		goto out;
	res->changed =
	    !f.ours || f.len != strlen(text) || memcmp(f.in, text, f.len) != 0;
	rc = pgn_line_diff(res->path, f.ours ? f.in : NULL, f.len,
	    res->changed ? text : f.in, res->changed ? strlen(text) : f.len,
	    &res->diff);
	if (rc != PGN_OK || req->dry_run || !res->changed)
		goto out;
	rc = pgn_mkdir_p(dir, PLUGIN_DIR_MODE, err);
	if (rc != PGN_OK)
		goto out;
	rc = f.ours ?
	    pgn_write_atomic(res->path, text, strlen(text), PLUGIN_MODE, err) :
	    write_new(tmpl, res->path, text, strlen(text), err);
out:
	if (rc == PGN_OK && note == NULL && !req->remove)
		note = pgn_strdup(
		    "opencode loads plugins when it starts: restart a running opencode");
	res->note = note;
	if (lock >= 0)
		(void)close(lock); /* and with it the lock */
	made_release(&m);
	free(f.in);
	free(dir);
	free(text);
	return rc;
}

pgn_status
pgn_plugin_inspect(pgn_host h, const char *project, struct pgn_install_state *s)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_install req;
	struct found f = {0};
	struct pgn_err err;
	cJSON *hook;
	pgn_status rc;
	int e;

	pgn_err_clear(&err);
	s->perm = -1;
	memset(&req, 0, sizeof(req));
	req.host = h;
	req.project = project;
	rc = pgn_host_config_path(req.host, req.project, &s->path, &err);
	if (rc == PGN_OK)
		rc = look(hi->plugin, s->path, &f, &err);
	if (rc != PGN_OK && rc != PGN_ENOMEM) {
		s->problem = pgn_strdup(err.msg);
		rc = s->problem != NULL ? PGN_OK : PGN_ENOMEM;
	}
	s->exists = f.exists;
	if (rc == PGN_OK && f.ours) {
		/*
		 * An event the plugin handles names it, quoted: one written by
		 * an older install may lack a newer one (the before-tool).
		 */
		for (e = 0; e < PGN_NEVENTS; e++)
			s->entries[e] = hi->events[e] != NULL &&
			    quoted_in(f.in, f.len, hi->events[e]);
		hook = plugin_const(f.in, f.len, "HOOK");
		if (cJSON_IsString(hook)) {
			s->hook = pgn_strdup(hook->valuestring);
			if (s->hook == NULL)
				rc = PGN_ENOMEM;
		}
		cJSON_Delete(hook);
	}
	free(f.in);
	return rc;
}
