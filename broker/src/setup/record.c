/*
 * The record of what install registered (decision 0186): one line a
 * registration in $PIGEON_HOME/installs, "HOST<TAB>-" for the user's
 * config, "HOST<TAB>DIR" for a project's, "instructions<TAB>FILE" for an
 * instructions block; added by an install, taken out by an uninstall,
 * read by pigeon uninstall --all. Each change rewrites the file
 * atomically; a line that is not one of these is kept as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "pigeon/setup.h"

#define RECORD_FILE "installs"

/* Home joined with the record's name into '*path' (caller frees). */
static pgn_status
record_path(char **path, struct pgn_err *err)
{
	char *home = NULL;
	struct pgn_buf b;
	pgn_status rc;

	*path = NULL;
	if (pgn_home_path(&home) != PGN_OK)
		return pgn_err_set(err, PGN_EINVAL,
		    "cannot find Pigeon's state directory (set PIGEON_HOME)");
	rc = pgn_home_ensure(home, err);
	if (rc == PGN_OK) {
		pgn_buf_init(&b, PGN_MAX_PATH);
		pgn_buf_addf(&b, "%s/" RECORD_FILE, home);
		*path = pgn_buf_take(&b, NULL);
		if (*path == NULL)
			rc = pgn_err_set(err, PGN_ETOOBIG,
			    "the state directory's path is too long");
	}
	free(home);
	return rc;
}

pgn_status
pgn_install_note(const char *kind, const char *where, int remove,
    struct pgn_err *err)
{
	char *path, *data = NULL, *line_end;
	struct pgn_buf want, out;
	const char *p;
	size_t len = 0, n;
	int exists = 0, found = 0;
	mode_t mode;
	pgn_status rc;

	if (strchr(kind, '\t') || strchr(kind, '\n') ||
	    (where != NULL && (strchr(where, '\t') || strchr(where, '\n'))))
		return pgn_err_set(err, PGN_EINVAL,
		    "a tab or a line end in a path: not recorded");
	rc = record_path(&path, err);
	if (rc != PGN_OK)
		return rc;
	pgn_buf_init(&want, PGN_MAX_PATH + 64);
	pgn_buf_init(&out, PGN_MAX_INSTALL_RECORD);
	pgn_buf_addf(&want, "%s\t%s\n", kind, where != NULL ? where : "-");
	rc = want.err;
	if (rc == PGN_OK)
		rc = pgn_read_file(path, PGN_MAX_INSTALL_RECORD, &data, &len,
		    &exists, &mode, err);
	if (rc != PGN_OK)
		goto out;
	for (p = data; p != NULL && p < data + len; p = line_end + 1) {
		line_end = memchr(p, '\n', (size_t)(data + len - p));
		if (line_end == NULL)
			line_end = data + len - 1; /* no final line end */
		n = (size_t)(line_end - p) + 1;
		/* The line's text, with or without its line end (a last
		 * line may have none): as the reader reads it. */
		if (n - (p[n - 1] == '\n') == want.len - 1 &&
		    memcmp(p, want.data, want.len - 1) == 0) {
			found = 1;
			if (remove)
				continue;
		}
		pgn_buf_add(&out, p, n);
		if (p[n - 1] != '\n')
			pgn_buf_adds(&out, "\n");
	}
	if (found == !remove)
		goto out; /* already as asked */
	if (!remove)
		pgn_buf_add(&out, want.data, want.len);
	rc = out.err;
	if (rc == PGN_ETOOBIG)
		rc = pgn_err_set(err, rc, "the record %s is over %d bytes",
		    path, PGN_MAX_INSTALL_RECORD);
	if (rc == PGN_OK)
		rc = pgn_write_atomic(path, out.data != NULL ? out.data : "",
		    out.len, 0600, err);
out:
	pgn_buf_release(&want);
	pgn_buf_release(&out);
	free(data);
	free(path);
	return rc;
}

void
pgn_install_notes_release(struct pgn_install_notes *n)
{
	size_t i;

	for (i = 0; i < n->n; i++) {
		free(n->v[i].kind);
		free(n->v[i].where);
	}
	free(n->v);
	memset(n, 0, sizeof(*n));
}

pgn_status
pgn_install_notes(struct pgn_install_notes *out, struct pgn_err *err)
{
	char *path, *data = NULL, *tab, *nl, *p;
	struct pgn_install_noted *x;
	size_t len = 0;
	int exists = 0;
	mode_t mode;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = record_path(&path, err);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_read_file(path, PGN_MAX_INSTALL_RECORD, &data, &len, &exists,
	    &mode, err);
	for (p = data; rc == PGN_OK && p != NULL && p < data + len;
	     p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(data + len - p));
		if (nl == NULL)
			nl = data + len;
		/* A NUL inside is not a line of ours (the writer never
		 * matches it): skipped, so reader and writer agree. */
		if (memchr(p, '\0', (size_t)(nl - p)) != NULL)
			continue;
		*nl = '\0';
		tab = strchr(p, '\t');
		if (tab == NULL)
			continue; /* not a line of ours */
		*tab = '\0';
		if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n,
		        sizeof(*out->v))) {
			rc = pgn_err_set(err, PGN_ENOMEM, "out of memory");
			break;
		}
		x = &out->v[out->n++];
		x->kind = strdup(p);
		x->where = strcmp(tab + 1, "-") == 0 ? NULL : strdup(tab + 1);
		if (x->kind == NULL ||
		    (strcmp(tab + 1, "-") != 0 && x->where == NULL))
			rc = pgn_err_set(err, PGN_ENOMEM, "out of memory");
	}
	if (rc != PGN_OK)
		pgn_install_notes_release(out);
	free(data);
	free(path);
	return rc;
}
