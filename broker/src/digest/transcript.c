/*
 * Transcript reading shared by every format: the tail of a file read in
 * bounded memory, lines split and counted, frames parsed and handed to
 * the format's reader (which keeps what they say with frame.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transcript_int.h"

#define TR_CHUNK 65536 /* bytes read at a time */

void
pgn_transcript_init(struct pgn_transcript *t)
{
	memset(t, 0, sizeof(*t));
}

static void
free_strs(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
pgn_transcript_release(struct pgn_transcript *t)
{
	size_t i;

	if (t == NULL)
		return;
	free(t->first_prompt);
	free(t->last_prompt);
	free(t->last_text);
	free(t->question);
	free(t->status);
	free(t->error);
	free_strs(t->files, t->nfiles);
	free_strs(t->cmds, t->ncmds);
	for (i = 0; i < t->ntools; i++)
		free(t->tools[i].name);
	free(t->tools);
	free(t->parent);
	for (i = 0; i < t->nsubs; i++)
		free(t->subs[i].id);
	free(t->subs);
	pgn_transcript_init(t);
}

const char *
pgn_transcript_format_name(pgn_transcript_format f)
{
	switch (f) {
	case PGN_TRANSCRIPT_CURSOR:
		return "cursor";
	case PGN_TRANSCRIPT_CLAUDE:
		return "claude";
	case PGN_TRANSCRIPT_CODEX:
		return "codex";
	case PGN_TRANSCRIPT_UNKNOWN:
		break;
	}
	return "unknown";
}

pgn_transcript_format
pgn_transcript_format_by_name(const char *name)
{
	if (name == NULL)
		return PGN_TRANSCRIPT_UNKNOWN;
	if (strcmp(name, "cursor") == 0)
		return PGN_TRANSCRIPT_CURSOR;
	if (strcmp(name, "claude") == 0)
		return PGN_TRANSCRIPT_CLAUDE;
	if (strcmp(name, "codex") == 0)
		return PGN_TRANSCRIPT_CODEX;
	return PGN_TRANSCRIPT_UNKNOWN;
}

const char *
pgn_transcript_outcome_name(pgn_transcript_outcome o)
{
	switch (o) {
	case PGN_TRANSCRIPT_NONE:
		return "none";
	case PGN_TRANSCRIPT_OPEN:
		return "unterminated";
	case PGN_TRANSCRIPT_SUCCESS:
		return "success";
	case PGN_TRANSCRIPT_ERROR:
		return "error";
	case PGN_TRANSCRIPT_ABORTED:
		return "aborted";
	case PGN_TRANSCRIPT_OTHER:
		return "other";
	}
	return "other";
}

/* ---- frames --------------------------------------------------------- */

/*
 * The format a frame belongs to, from its shape alone: Cursor's frames
 * are role-first ({role, message}) or {type: turn_ended}; Codex's carry
 * a payload under a typed envelope; Claude's are typed and carry a
 * sessionId, uuid or leafUuid.
 */
pgn_transcript_format
tr_detect(const cJSON *f)
{
	const char *type = tr_str(f, "type");

	if (type == NULL && tr_str(f, "role") != NULL &&
	    cJSON_GetObjectItemCaseSensitive(f, "message") != NULL)
		return PGN_TRANSCRIPT_CURSOR;
	if (type == NULL)
		return PGN_TRANSCRIPT_UNKNOWN;
	if (strcmp(type, "turn_ended") == 0 && tr_str(f, "status") != NULL &&
	    tr_str(f, "sessionId") == NULL)
		return PGN_TRANSCRIPT_CURSOR;
	if (cJSON_GetObjectItemCaseSensitive(f, "payload") != NULL &&
	    (strcmp(type, "session_meta") == 0 ||
	        strcmp(type, "response_item") == 0 ||
	        strcmp(type, "event_msg") == 0 ||
	        strcmp(type, "turn_context") == 0 ||
	        strcmp(type, "compacted") == 0))
		return PGN_TRANSCRIPT_CODEX;
	if (tr_str(f, "sessionId") != NULL || tr_str(f, "uuid") != NULL ||
	    tr_str(f, "leafUuid") != NULL)
		return PGN_TRANSCRIPT_CLAUDE;
	return PGN_TRANSCRIPT_UNKNOWN;
}

static pgn_status
frame(struct pgn_transcript *t, const cJSON *f)
{
	pgn_status st = PGN_OK;
	int known = 0;

	if (t->format == PGN_TRANSCRIPT_UNKNOWN)
		t->format = tr_detect(f);
	switch (t->format) {
	case PGN_TRANSCRIPT_CURSOR:
		st = tr_cursor_frame(t, f, &known);
		break;
	case PGN_TRANSCRIPT_CLAUDE:
		st = tr_claude_frame(t, f, &known);
		break;
	case PGN_TRANSCRIPT_CODEX:
		st = tr_codex_frame(t, f, &known);
		break;
	case PGN_TRANSCRIPT_UNKNOWN:
		break;
	}
	if (known)
		t->known++;
	else
		t->unknown++;
	return st;
}

static pgn_status
line(struct tr_parser *p, const char *s, size_t len)
{
	struct pgn_transcript *t = p->t;
	const char *end = NULL;
	cJSON *f;
	pgn_status st;

	t->lines++;
	if (tr_blank(s, len)) {
		t->blank++;
		return PGN_OK;
	}
	f = cJSON_ParseWithLengthOpts(s, len, &end, 0);
	if (f != NULL && end != NULL &&
	    !tr_blank(end, len - (size_t)(end - s))) {
		cJSON_Delete(f);
		f = NULL;
	}
	if (!cJSON_IsObject(f)) {
		cJSON_Delete(f);
		t->malformed++;
		return PGN_OK;
	}
	t->frames++;
	st = frame(t, f);
	cJSON_Delete(f);
	return st;
}

void
tr_parser_init(struct tr_parser *p, struct pgn_transcript *t, int cut)
{
	memset(p, 0, sizeof(*p));
	p->t = t;
	p->skip = cut;
	t->cut = t->cut || cut;
}

void
tr_parser_release(struct tr_parser *p)
{
	if (p == NULL)
		return;
	free(p->line);
	p->line = NULL;
	p->cap = 0;
	p->linelen = 0;
}

/* Append s[0..n) to the current line, or mark it over the bound. */
static pgn_status
line_add(struct tr_parser *p, const char *s, size_t n)
{
	size_t cap;
	char *q;

	if (p->over || n == 0)
		return PGN_OK;
	if (n > PGN_TRANSCRIPT_MAX_LINE - p->linelen) {
		p->over = 1;
		p->linelen = 0;
		return PGN_OK;
	}
	if (p->linelen + n > p->cap) {
		cap = p->cap ? p->cap : TR_CHUNK;
		while (cap < p->linelen + n)
			cap *= 2;
		if (cap > PGN_TRANSCRIPT_MAX_LINE)
			cap = PGN_TRANSCRIPT_MAX_LINE;
		q = realloc(p->line, cap);
		if (q == NULL)
			return PGN_ENOMEM;
		p->line = q;
		p->cap = cap;
	}
	memcpy(p->line + p->linelen, s, n);
	p->linelen += n;
	return PGN_OK;
}

static pgn_status
line_end(struct tr_parser *p, const char *s, size_t n)
{
	pgn_status st;

	if (p->over) {
		p->t->lines++;
		p->t->oversized++;
		p->over = 0;
		p->linelen = 0;
		return PGN_OK;
	}
	if (p->linelen == 0 && n <= PGN_TRANSCRIPT_MAX_LINE)
		return line(p, s, n); /* the whole line is in the chunk */
	st = line_add(p, s, n);
	if (st != PGN_OK)
		return st;
	if (p->over)
		return line_end(p, NULL, 0);
	st = line(p, p->line, p->linelen);
	p->linelen = 0;
	return st;
}

pgn_status
tr_feed(struct tr_parser *p, const char *data, size_t len)
{
	const char *nl;
	size_t n;
	pgn_status st;

	if (p->err != PGN_OK)
		return p->err;
	p->t->read += len;
	while (len > 0) {
		nl = memchr(data, '\n', len);
		n = nl != NULL ? (size_t)(nl - data) : len;
		if (p->skip) {
			if (nl == NULL)
				return PGN_OK;
			p->skip = 0;
			st = PGN_OK;
		} else if (nl == NULL) {
			st = line_add(p, data, n);
		} else {
			st = line_end(p, data, n);
		}
		if (st != PGN_OK) {
			p->err = st;
			return st;
		}
		if (nl == NULL)
			return PGN_OK;
		data += n + 1;
		len -= n + 1;
	}
	return PGN_OK;
}

pgn_status
tr_finish(struct tr_parser *p)
{
	pgn_status st;

	if (p->err != PGN_OK)
		return p->err;
	if (p->skip)
		return PGN_OK; /* one cut line, no newline at all */
	if (p->linelen == 0 && !p->over)
		return PGN_OK;
	st = line_end(p, NULL, 0);
	p->err = st;
	return st;
}

/* ---- whole inputs --------------------------------------------------- */

/*
 * An unknown format: no frame of any known shape, or of the named
 * format none (an empty file is an empty transcript of a named format).
 */
static pgn_status
no_format(const struct pgn_transcript *t, pgn_transcript_format asked,
    const char *what, char *err, size_t errlen)
{
	static const char *const names[] = {"Cursor, Claude Code or Codex",
	    "Cursor", "Claude Code", "Codex"};

	if (t->format != PGN_TRANSCRIPT_UNKNOWN &&
	    (asked == PGN_TRANSCRIPT_UNKNOWN || t->known > 0 || t->frames == 0))
		return PGN_OK;
	pgn_errf(err, errlen,
	    "%s is not a %s transcript (%zu lines, %zu JSON objects of no known shape)",
	    what, names[asked], t->lines, t->unknown);
	return PGN_EINVAL;
}

pgn_status
pgn_transcript_parse(const char *data, size_t len, pgn_transcript_format fmt,
    struct pgn_transcript *t, char *err, size_t errlen)
{
	struct tr_parser p;
	pgn_status st;
	int cut = 0;

	pgn_transcript_init(t);
	t->format = fmt;
	t->size = len;
	if (len > PGN_TRANSCRIPT_MAX_READ) {
		data += len - PGN_TRANSCRIPT_MAX_READ;
		len = PGN_TRANSCRIPT_MAX_READ;
		/* a cut right after a newline cuts no line */
		cut = data[-1] != '\n';
		t->cut = 1;
	}
	tr_parser_init(&p, t, cut);
	st = tr_feed(&p, data, len);
	if (st == PGN_OK)
		st = tr_finish(&p);
	tr_parser_release(&p);
	if (st == PGN_OK)
		st = tr_settle(t);
	if (st == PGN_OK)
		st = no_format(t, fmt, "the input", err, errlen);
	if (st == PGN_ENOMEM)
		pgn_errf(err, errlen, "out of memory reading a transcript");
	return st;
}

/* Read the last 'max' bytes of the open file 'fd' into 'p'. */
static pgn_status
read_tail(int fd, const char *path, uint64_t size, size_t max,
    struct pgn_transcript *t, char *err, size_t errlen)
{
	struct tr_parser p;
	char *chunk = NULL;
	char prev;
	off_t from = 0;
	size_t left = max;
	ssize_t n;
	pgn_status st = PGN_OK;
	int cut = 0;

	if (size > max) {
		from = (off_t)(size - max);
		/* a cut right after a newline cuts no line */
		if (pread(fd, &prev, 1, from - 1) == 1 && prev != '\n')
			cut = 1;
		t->cut = 1;
		if (lseek(fd, from, SEEK_SET) < 0) {
			pgn_errf(err, errlen, "cannot seek in %s: %s", path,
			    strerror(errno));
			return PGN_EIO;
		}
	}
	tr_parser_init(&p, t, cut);
	chunk = malloc(TR_CHUNK);
	if (chunk == NULL) {
		st = PGN_ENOMEM;
		goto out;
	}
	while (left > 0) {
		n = read(fd, chunk, left < TR_CHUNK ? left : TR_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			pgn_errf(err, errlen, "cannot read %s: %s", path,
			    strerror(errno));
			st = PGN_EIO;
			goto out;
		}
		if (n == 0)
			break;
		left -= (size_t)n;
		st = tr_feed(&p, chunk, (size_t)n);
		if (st != PGN_OK)
			goto out;
	}
	st = tr_finish(&p);
	if (st == PGN_OK)
		st = tr_settle(t);
out:
	free(chunk);
	tr_parser_release(&p);
	if (st == PGN_ENOMEM)
		pgn_errf(err, errlen, "out of memory reading %s", path);
	return st;
}

/*
 * 'owned': a path this process did not choose (decision 0129): not a
 * symbolic link, and the effective user's own file.
 */
static pgn_status
read_path(const char *path, size_t max, int owned, struct pgn_transcript *t,
    char *err, size_t errlen)
{
	struct stat sb;
	pgn_status st;
	int fd;

	fd = open(path,
	    O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
	        (owned ? O_NOFOLLOW : 0));
	if (fd < 0 && owned && errno == ELOOP) {
		pgn_errf(err, errlen,
		    "%s is a symbolic link: a session's transcript is read only from the file itself",
		    path);
		return PGN_EINVAL;
	}
	if (fd < 0) {
		pgn_errf(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
		return errno == ENOENT ? PGN_ENOTFOUND : PGN_EIO;
	}
	if (fstat(fd, &sb) != 0) {
		pgn_errf(err, errlen, "cannot stat %s: %s", path,
		    strerror(errno));
		close(fd);
		return PGN_EIO;
	}
	if (!S_ISREG(sb.st_mode)) {
		pgn_errf(err, errlen, "%s is not a regular file", path);
		close(fd);
		return PGN_EINVAL;
	}
	if (owned && sb.st_uid != geteuid()) {
		pgn_errf(err, errlen,
		    "%s belongs to user id %ld, not to you (%ld): a session's transcript is read only when it is your own file",
		    path, (long)sb.st_uid, (long)geteuid());
		close(fd);
		return PGN_EINVAL;
	}
	t->size = (uint64_t)sb.st_size;
	st = read_tail(fd, path, (uint64_t)sb.st_size, max, t, err, errlen);
	close(fd);
	return st;
}

/* The last path element of s[0..len), as [*b, *b + *blen). */
static void
base(const char *s, size_t len, const char **b, size_t *blen)
{
	size_t i = len;

	while (i > 0 && s[i - 1] != '/')
		i--;
	*b = s + i;
	*blen = len - i;
}

static int
has_suffix(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return len >= n && memcmp(s + len - n, suf, n) == 0;
}

/* Insert 'name' into the sorted list v[0..*n) of at most 'max'. */
static pgn_status
sorted_add(char **v, size_t *n, size_t max, const char *name, size_t *more)
{
	size_t i;
	char *c;

	for (i = 0; i < *n && strcmp(v[i], name) < 0; i++)
		;
	if (i == max) {
		(*more)++;
		return PGN_OK;
	}
	c = pgn_strdup(name);
	if (c == NULL)
		return PGN_ENOMEM;
	if (*n == max) {
		free(v[max - 1]);
		(*n)--;
		(*more)++;
	}
	memmove(v + i + 1, v + i, (*n - i) * sizeof(*v));
	v[i] = c;
	(*n)++;
	return PGN_OK;
}

/*
 * Cursor's lineage is directory containment (seed 001): a file
 * <p>/subagents/<c>.jsonl is the child of <p>; a file <d>/<id>/<id>.jsonl
 * has its children in <d>/<id>/subagents/. Only .jsonl files there are
 * opened, each read like the parent (a shorter tail).
 */
static pgn_status
cursor_family(const char *path, int owned, struct pgn_transcript *t)
{
	char *names[PGN_TRANSCRIPT_MAX_SUBS];
	const char *b, *d;
	char *dir = NULL, *subdir = NULL, *child = NULL;
	char err[PGN_MAX_ERRMSG];
	struct pgn_transcript ct;
	struct dirent *de;
	DIR *dh = NULL;
	size_t blen, dlen, len, nnames = 0, i, j;
	pgn_status st = PGN_OK;

	len = strlen(path);
	base(path, len, &b, &blen);
	if (blen <= 6 || !has_suffix(b, blen, ".jsonl"))
		return PGN_OK;
	dlen = (size_t)(b - path);
	while (dlen > 0 && path[dlen - 1] == '/')
		dlen--;
	base(path, dlen, &d, &len);
	if (len == 9 && memcmp(d, "subagents", 9) == 0) {
		dlen = (size_t)(d - path);
		while (dlen > 0 && path[dlen - 1] == '/')
			dlen--;
		base(path, dlen, &d, &len);
		if (len > 0) {
			t->parent = pgn_strndup(d, len);
			if (t->parent == NULL)
				return PGN_ENOMEM;
		}
		return PGN_OK;
	}
	/* <id>/<id>.jsonl: the directory names the session */
	if (len != blen - 6 || memcmp(d, b, len) != 0)
		return PGN_OK;
	dir = pgn_strndup(path, (size_t)(b - path));
	subdir = dir != NULL ? pgn_path_join(dir, "subagents") : NULL;
	if (subdir == NULL) {
		st = PGN_ENOMEM;
		goto out;
	}
	dh = opendir(subdir);
	if (dh == NULL)
		goto out; /* no subagents */
	while ((de = readdir(dh)) != NULL) {
		len = strlen(de->d_name);
		if (len <= 6 || de->d_name[0] == '.' ||
		    !has_suffix(de->d_name, len, ".jsonl"))
			continue;
		st = sorted_add(names, &nnames, PGN_TRANSCRIPT_MAX_SUBS,
		    de->d_name, &t->subs_more);
		if (st != PGN_OK)
			goto out;
	}
	if (nnames == 0)
		goto out;
	t->subs = calloc(nnames, sizeof(*t->subs));
	if (t->subs == NULL) {
		st = PGN_ENOMEM;
		goto out;
	}
	for (i = 0; i < nnames; i++) {
		child = pgn_path_join(subdir, names[i]);
		if (child == NULL) {
			st = PGN_ENOMEM;
			goto out;
		}
		pgn_transcript_init(&ct);
		ct.format = PGN_TRANSCRIPT_CURSOR;
		st = read_path(child, PGN_TRANSCRIPT_SUB_READ, owned, &ct, err,
		    sizeof(err));
		free(child);
		child = NULL;
		if (st == PGN_ENOMEM) {
			pgn_transcript_release(&ct);
			goto out;
		}
		st = PGN_OK;
		/* the children's edits are the session's */
		for (j = 0; j < ct.nfiles && st == PGN_OK; j++)
			st = tr_file(t, ct.files[j], strlen(ct.files[j]));
		t->files_more += ct.files_more;
		t->subs[t->nsubs].id =
		    pgn_strndup(names[i], strlen(names[i]) - 6);
		t->subs[t->nsubs].outcome = ct.outcome;
		t->subs[t->nsubs].calls = ct.calls;
		pgn_transcript_release(&ct);
		if (t->subs[t->nsubs].id == NULL)
			st = PGN_ENOMEM;
		t->nsubs++;
		if (st != PGN_OK)
			goto out;
	}
out:
	if (dh != NULL)
		closedir(dh);
	for (i = 0; i < nnames; i++)
		free(names[i]);
	free(dir);
	free(subdir);
	return st;
}

static pgn_status
read_family(const char *path, pgn_transcript_format fmt, int owned,
    struct pgn_transcript *t, char *err, size_t errlen)
{
	pgn_status st;

	pgn_transcript_init(t);
	t->format = fmt;
	st = read_path(path, PGN_TRANSCRIPT_MAX_READ, owned, t, err, errlen);
	if (st == PGN_OK)
		st = no_format(t, fmt, path, err, errlen);
	if (st == PGN_OK && t->format == PGN_TRANSCRIPT_CURSOR) {
		st = cursor_family(path, owned, t);
		if (st == PGN_ENOMEM)
			pgn_errf(err, errlen, "out of memory reading %s", path);
	}
	return st;
}

pgn_status
pgn_transcript_read(const char *path, pgn_transcript_format fmt,
    struct pgn_transcript *t, char *err, size_t errlen)
{
	return read_family(path, fmt, 0, t, err, errlen);
}

pgn_status
pgn_transcript_read_owned(const char *path, pgn_transcript_format fmt,
    struct pgn_transcript *t, char *err, size_t errlen)
{
	return read_family(path, fmt, 1, t, err, errlen);
}
