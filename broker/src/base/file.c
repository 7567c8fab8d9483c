/*
 * Small file helpers shared by the modules that write files outside the
 * database (host configs, provider state): bounded reads, atomic writes
 * (temp file, fsync, rename, fsync of the directory), directories.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_int.h"

void
pgn_errf(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

/* ---- files ---------------------------------------------------------- */

char *
pgn_path_join(const char *a, const char *b)
{
	struct pgn_buf p;

	pgn_buf_init(&p, PGN_MAX_PATH);
	pgn_buf_adds(&p, a);
	if (p.len > 0 && p.data[p.len - 1] != '/')
		pgn_buf_adds(&p, "/");
	pgn_buf_adds(&p, b);
	return pgn_buf_take(&p, NULL);
}

/* The directory part of 'path' ("." if none), as a new string. */
char *
pgn_path_dir(const char *path)
{
	const char *slash;

	slash = strrchr(path, '/');
	if (slash == NULL)
		return pgn_strdup(".");
	if (slash == path)
		return pgn_strdup("/");
	return pgn_strndup(path, (size_t)(slash - path));
}

/*
 * Read a regular file of at most 'max' bytes. '*exists' is 0 when it is
 * absent (not an error). '*mode' gets its permission bits. Opened with
 * O_NONBLOCK and checked with fstat before any read, so a FIFO, device
 * or directory in its place is refused at once: a blocking open of a
 * FIFO waits for a writer forever (defect 20, a FIFO as commondir).
 * O_NONBLOCK changes nothing for the reads of a regular file.
 */
pgn_status
pgn_read_file(const char *path, size_t max, char **data, size_t *len,
    int *exists, mode_t *mode, struct pgn_err *err)
{
	struct pgn_buf b;
	struct stat sb;
	char chunk[8192];
	ssize_t r;
	int fd;
	pgn_status rc = PGN_OK;

	*data = NULL;
	*len = 0;
	*exists = 0;
	pgn_buf_init(&b, max);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			return PGN_OK;
		return pgn_err_set(err, PGN_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		rc = pgn_err_set(err, PGN_EINVAL,
		    "'%s' is not a regular file: left untouched", path);
		goto out;
	}
	/* The bound is enforced before reading; the loop keeps it too. */
	if ((uintmax_t)sb.st_size > (uintmax_t)max) {
		rc = pgn_err_set(err, PGN_ETOOBIG,
		    "'%s' is larger than %zu bytes: left untouched", path, max);
		goto out;
	}
	*exists = 1;
	*mode = sb.st_mode & 07777;
	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = pgn_err_set(err, PGN_EIO, "cannot read '%s': %s",
			    path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		pgn_buf_add(&b, chunk, (size_t)r);
		if (b.err == PGN_ETOOBIG) {
			rc = pgn_err_set(err, PGN_ETOOBIG,
			    "'%s' is larger than %zu bytes: left untouched",
			    path, max);
			goto out;
		}
		if (b.err != PGN_OK) {
			rc = pgn_err_set(err, b.err, "out of memory");
			goto out;
		}
	}
	*data = pgn_buf_take(&b, len);
	if (*data == NULL)
		rc = pgn_err_set(err, PGN_ENOMEM, "out of memory");
out:
	close(fd);
	pgn_buf_release(&b);
	if (rc != PGN_OK)
		*exists = 0;
	return rc;
}

int
pgn_fsync_dir(const char *dir)
{
	int fd, r;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = fsync(fd);
	close(fd);
	return r;
}

/* Create 'dir' and its missing parents with 'mode'. */
pgn_status
pgn_mkdir_p(const char *dir, mode_t mode, struct pgn_err *err)
{
	char *p;
	size_t i;
	pgn_status rc = PGN_OK;

	p = pgn_strdup(dir);
	if (p == NULL)
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	for (i = 1;; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		if (p[i] == '/') {
			p[i] = '\0';
			if (mkdir(p, mode) != 0 && errno != EEXIST)
				goto fail;
			p[i] = '/';
			continue;
		}
		if (mkdir(p, mode) != 0 && errno != EEXIST)
			goto fail;
		break;
	}
	goto out;
fail:
	rc = pgn_err_set(err, PGN_EIO, "cannot create directory '%s': %s", p,
	    strerror(errno));
out:
	free(p);
	return rc;
}

/*
 * Replace 'path' with 'data' atomically: a temp file in the same
 * directory, written in full, fsynced, given 'mode', renamed over
 * 'path', then the directory fsynced.
 */
pgn_status
pgn_write_atomic(const char *path, const char *data, size_t len, mode_t mode,
    struct pgn_err *err)
{
	struct pgn_buf t;
	char *dir = NULL, *tmp = NULL;
	const char *base;
	size_t off = 0;
	ssize_t w;
	int fd = -1;
	pgn_status rc = PGN_EIO;

	pgn_buf_init(&t, PGN_MAX_PATH + 32);
	dir = pgn_path_dir(path);
	if (dir == NULL) {
		rc = pgn_err_set(err, PGN_ENOMEM, "out of memory");
		goto out;
	}
	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	pgn_buf_addf(&t, "%s/.%s.pigeon-XXXXXX", dir, base);
	tmp = pgn_buf_take(&t, NULL);
	if (tmp == NULL) {
		rc = pgn_err_set(err, PGN_ENOMEM, "out of memory");
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		tmp = NULL; /* nothing to unlink */
		(void)pgn_err_set(err, rc,
		    "cannot create a file next to '%s': %s", path,
		    strerror(errno));
		goto out;
	}
	while (off < len) {
		w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto fail;
		off += (size_t)w;
	}
	if (fchmod(fd, mode) != 0 || fsync(fd) != 0)
		goto fail;
	w = close(fd);
	fd = -1;
	if (w != 0)
		goto fail;
	if (rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	tmp = NULL;
	if (pgn_fsync_dir(dir) != 0)
		goto fail;
	rc = PGN_OK;
	goto out;
fail:
	(void)pgn_err_set(err, rc, "cannot write '%s': %s", path,
	    strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	if (tmp != NULL) {
		(void)unlink(tmp);
		free(tmp);
	}
	free(dir);
	pgn_buf_release(&t);
	return rc;
}

/* ---- files with hard links (docs/decisions/0037) ------------------ */

static pgn_status
write_all(int fd, const char *data, size_t len)
{
	size_t off = 0;
	ssize_t w;

	while (off < len) {
		w = write(fd, data + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return PGN_EIO;
		off += (size_t)w;
	}
	return PGN_OK;
}

/*
 * Replace the bytes of 'path', a file with other hard links, in place so
 * that every link sees the change: first a durable copy of the current
 * bytes 'cur' next to it, then the write, then the copy goes. A copy
 * left by an interrupted write stops us until the user has looked.
 */
static pgn_status
write_in_place(const char *path, const char *data, size_t len, const char *cur,
    size_t curlen, mode_t mode, struct pgn_err *err)
{
	struct pgn_buf sp;
	char *save = NULL, *dir = NULL;
	int fd = -1;
	pgn_status rc = PGN_ENOMEM;

	pgn_buf_init(&sp, PGN_MAX_PATH);
	pgn_buf_addf(&sp, "%s%s", path, PGN_SAVE_SUFFIX);
	save = pgn_buf_take(&sp, NULL);
	dir = pgn_path_dir(path);
	if (save == NULL || dir == NULL) {
		(void)pgn_err_set(err, rc, "out of memory");
		goto out;
	}
	if (access(save, F_OK) == 0) {
		rc = pgn_err_set(err, PGN_EIO,
		    "'%s' exists: an earlier write of '%s' was interrupted; keep the right one of the two as '%s', remove '%s' and retry",
		    save, path, path, save);
		goto out;
	}
	rc = pgn_write_atomic(save, cur, curlen, mode, err);
	if (rc != PGN_OK)
		goto out;
	rc = PGN_EIO;
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 || write_all(fd, data, len) != PGN_OK ||
	    ftruncate(fd, (off_t)len) != 0 || fsync(fd) != 0) {
		(void)pgn_err_set(err, rc,
		    "cannot write '%s' in place: %s (its earlier bytes are in '%s')",
		    path, strerror(errno), save);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		(void)pgn_err_set(err, rc,
		    "cannot write '%s' in place: %s (its earlier bytes are in '%s')",
		    path, strerror(errno), save);
		goto out;
	}
	fd = -1;
	if (unlink(save) != 0) {
		(void)pgn_err_set(err, rc, "cannot remove '%s': %s", save,
		    strerror(errno));
		goto out;
	}
	(void)pgn_fsync_dir(dir);
	rc = PGN_OK;
out:
	if (fd >= 0)
		(void)close(fd);
	free(save);
	free(dir);
	return rc;
}

/*
 * Write 'data' to 'path': atomically (temp file, fsync, rename) when it
 * has one link, in place when it has more, so hard links keep sharing
 * it (docs/decisions/0037).
 */
pgn_status
pgn_write_linked(const char *path, int nlinks, const char *data, size_t len,
    const char *cur, size_t curlen, mode_t mode, struct pgn_err *err)
{
	if (nlinks > 1)
		return write_in_place(path, data, len, cur, curlen, mode, err);
	return pgn_write_atomic(path, data, len, mode, err);
}

pgn_status
pgn_unlink_synced(const char *path, struct pgn_err *err)
{
	char *dir;

	if (unlink(path) != 0) {
		return pgn_err_set(err, PGN_EIO, "cannot remove '%s': %s", path,
		    strerror(errno));
	}
	dir = pgn_path_dir(path);
	if (dir != NULL)
		(void)pgn_fsync_dir(dir);
	free(dir);
	return PGN_OK;
}
