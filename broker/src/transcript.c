/*
 * Transcript reading shared by every format: the tail of a file read in
 * bounded memory, lines split and counted, frames parsed and handed to
 * the format's reader, and what they say kept within bounds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transcript_int.h"

#define TX_CHUNK  65536 /* bytes read at a time */
#define TX_ELLIPS "\xe2\x80\xa6"

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
pgn_tx_format_name(pgn_tx_format f)
{
	switch (f) {
	case PGN_TX_CURSOR:
		return "cursor";
	case PGN_TX_CLAUDE:
		return "claude";
	case PGN_TX_CODEX:
		return "codex";
	case PGN_TX_UNKNOWN:
		break;
	}
	return "unknown";
}

pgn_tx_format
pgn_tx_format_by_name(const char *name)
{
	if (name == NULL)
		return PGN_TX_UNKNOWN;
	if (strcmp(name, "cursor") == 0)
		return PGN_TX_CURSOR;
	if (strcmp(name, "claude") == 0)
		return PGN_TX_CLAUDE;
	if (strcmp(name, "codex") == 0)
		return PGN_TX_CODEX;
	return PGN_TX_UNKNOWN;
}

const char *
pgn_tx_outcome_name(pgn_tx_outcome o)
{
	switch (o) {
	case PGN_TX_NONE:
		return "none";
	case PGN_TX_OPEN:
		return "unterminated";
	case PGN_TX_SUCCESS:
		return "success";
	case PGN_TX_ERROR:
		return "error";
	case PGN_TX_ABORTED:
		return "aborted";
	case PGN_TX_OTHER:
		return "other";
	}
	return "other";
}

/* ---- cJSON helpers -------------------------------------------------- */

const char *
tx_str(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *
tx_obj(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsObject(v) ? v : NULL;
}

const cJSON *
tx_arr(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsArray(v) ? v : NULL;
}

int
tx_true(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return 0;
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

const char *
tx_str_any(const cJSON *obj, const char *const *keys)
{
	const char *s;

	for (; *keys != NULL; keys++) {
		s = tx_str(obj, *keys);
		if (s != NULL && s[0] != '\0')
			return s;
	}
	return NULL;
}

/* ---- keeping what a frame says ------------------------------------- */

/* The largest n <= max that does not end inside a UTF-8 sequence. */
static size_t
char_cut(const char *s, size_t len, size_t max)
{
	size_t n;

	if (len <= max)
		return len;
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80 && max - n < 3)
		n--;
	return n;
}

char *
tx_clip(const char *s, size_t len, size_t max)
{
	struct pgn_buf b;
	char *r;
	size_t rlen, n;
	int cut = 0;

	/* Redact a little past the bound, so a cut never splits a key. */
	if (len > max + TX_REDACT_SLACK) {
		len = char_cut(s, len, max + TX_REDACT_SLACK);
		cut = 1;
	}
	r = pgn_redact(s, len, NULL);
	if (r == NULL)
		return NULL;
	rlen = strlen(r);
	if (rlen <= max && !cut)
		return r;
	n = char_cut(r, rlen, max - 3);
	pgn_buf_init(&b, max);
	pgn_buf_add(&b, r, n);
	pgn_buf_adds(&b, TX_ELLIPS);
	free(r);
	return pgn_buf_take(&b, NULL);
}

void
tx_buf_fit(struct pgn_buf *b, const char *s)
{
	size_t room;

	if (b->err != PGN_OK || b->len >= b->max)
		return;
	room = b->max - b->len;
	pgn_buf_add(b, s, char_cut(s, strlen(s), room));
}

/*
 * Keep s raw, cut a little past 'max': redaction and the final cut wait
 * for the end of the read (tx_settle), so only what is shown pays.
 */
static pgn_status
keep(char **slot, const char *s, size_t max)
{
	char *v;

	v = pgn_strndup(s, char_cut(s, strlen(s), max + TX_REDACT_SLACK + 1));
	if (v == NULL)
		return PGN_ENOMEM;
	free(*slot);
	*slot = v;
	return PGN_OK;
}

/* Redact and cut a kept string to its bound. */
static pgn_status
settle(char **slot, size_t max)
{
	char *v;

	if (*slot == NULL)
		return PGN_OK;
	v = tx_clip(*slot, strlen(*slot), max);
	if (v == NULL)
		return PGN_ENOMEM;
	free(*slot);
	*slot = v;
	return PGN_OK;
}

static pgn_status
tx_settle(struct pgn_transcript *t)
{
	pgn_status st;
	size_t i;

	st = settle(&t->first_prompt, PGN_TRANSCRIPT_MAX_TEXT);
	if (st == PGN_OK)
		st = settle(&t->last_prompt, PGN_TRANSCRIPT_MAX_TEXT);
	if (st == PGN_OK)
		st = settle(&t->last_text, PGN_TRANSCRIPT_MAX_TEXT);
	if (st == PGN_OK)
		st = settle(&t->question, PGN_TRANSCRIPT_MAX_TEXT);
	if (st == PGN_OK)
		st = settle(&t->status, PGN_MAX_NAME);
	if (st == PGN_OK)
		st = settle(&t->error, PGN_TRANSCRIPT_MAX_CMD);
	for (i = 0; st == PGN_OK && i < t->nfiles; i++)
		st = settle(&t->files[i], PGN_TRANSCRIPT_MAX_PATH);
	for (i = 0; st == PGN_OK && i < t->ncmds; i++)
		st = settle(&t->cmds[i], PGN_TRANSCRIPT_MAX_CMD);
	return st;
}

/* Only white space? */
static int
blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return 0;
	return 1;
}

pgn_status
tx_prompt(struct pgn_transcript *t, const char *s)
{
	pgn_status st;

	if (s == NULL || blank(s, strlen(s)))
		return PGN_OK;
	t->prompts++;
	if (t->first_prompt == NULL) {
		st = keep(&t->first_prompt, s, PGN_TRANSCRIPT_MAX_TEXT);
		if (st != PGN_OK)
			return st;
	}
	return keep(&t->last_prompt, s, PGN_TRANSCRIPT_MAX_TEXT);
}

pgn_status
tx_answer(struct pgn_transcript *t, const char *s)
{
	if (s == NULL || blank(s, strlen(s)))
		return PGN_OK;
	t->answers++;
	return keep(&t->last_text, s, PGN_TRANSCRIPT_MAX_TEXT);
}

pgn_status
tx_question(struct pgn_transcript *t, const char *s)
{
	if (s == NULL || blank(s, strlen(s)))
		return PGN_OK;
	return keep(&t->question, s, PGN_TRANSCRIPT_MAX_TEXT);
}

pgn_status
tx_file(struct pgn_transcript *t, const char *path, size_t len)
{
	char *p;
	size_t i;

	while (len > 0 &&
	    (path[len - 1] == ' ' || path[len - 1] == '\t' ||
	        path[len - 1] == '\r'))
		len--;
	while (len > 0 && (path[0] == ' ' || path[0] == '\t')) {
		path++;
		len--;
	}
	if (len == 0)
		return PGN_OK;
	if (len > PGN_TRANSCRIPT_MAX_PATH + TX_REDACT_SLACK)
		len = char_cut(path, len,
		    PGN_TRANSCRIPT_MAX_PATH + TX_REDACT_SLACK);
	p = pgn_strndup(path, len);
	if (p == NULL)
		return PGN_ENOMEM;
	for (i = 0; i < t->nfiles; i++) {
		if (strcmp(t->files[i], p) == 0) {
			free(p);
			return PGN_OK;
		}
	}
	if (t->nfiles >= PGN_TRANSCRIPT_MAX_FILES) {
		t->files_more++;
		free(p);
		return PGN_OK;
	}
	if (t->files == NULL) {
		t->files = calloc(PGN_TRANSCRIPT_MAX_FILES, sizeof(*t->files));
		if (t->files == NULL) {
			free(p);
			return PGN_ENOMEM;
		}
	}
	t->files[t->nfiles++] = p;
	return PGN_OK;
}

pgn_status
tx_patch(struct pgn_transcript *t, const char *patch)
{
	static const char *const marks[] = {"*** Add File: ",
	    "*** Update File: ", "*** Delete File: ", "*** Move to: ", NULL};
	const char *line, *nl;
	size_t i, n, len;
	pgn_status st;

	for (line = patch; line != NULL && *line != '\0';
	     line = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		for (i = 0; marks[i] != NULL; i++) {
			n = strlen(marks[i]);
			if (len > n && strncmp(line, marks[i], n) == 0) {
				st = tx_file(t, line + n, len - n);
				if (st != PGN_OK)
					return st;
				break;
			}
		}
	}
	return PGN_OK;
}

pgn_status
tx_command(struct pgn_transcript *t, const char *cmd, int background)
{
	struct pgn_buf b;
	char *c;

	if (cmd == NULL || blank(cmd, strlen(cmd)))
		return PGN_OK;
	t->cmds_seen++;
	pgn_buf_init(&b, PGN_TRANSCRIPT_MAX_CMD + TX_REDACT_SLACK + 16);
	if (background)
		pgn_buf_adds(&b, "(background) ");
	pgn_buf_add(&b, cmd,
	    char_cut(cmd, strlen(cmd),
	        PGN_TRANSCRIPT_MAX_CMD + TX_REDACT_SLACK));
	c = pgn_buf_take(&b, NULL);
	if (c == NULL)
		return PGN_ENOMEM;
	if (t->cmds == NULL) {
		t->cmds = calloc(PGN_TRANSCRIPT_MAX_CMDS, sizeof(*t->cmds));
		if (t->cmds == NULL) {
			free(c);
			return PGN_ENOMEM;
		}
	}
	if (t->ncmds == PGN_TRANSCRIPT_MAX_CMDS) {
		/* keep the newest: drop the oldest */
		free(t->cmds[0]);
		memmove(t->cmds, t->cmds + 1,
		    (PGN_TRANSCRIPT_MAX_CMDS - 1) * sizeof(*t->cmds));
		t->ncmds--;
	}
	t->cmds[t->ncmds++] = c;
	return PGN_OK;
}

pgn_status
tx_command_argv(struct pgn_transcript *t, const cJSON *argv, int background)
{
	struct pgn_buf b;
	const cJSON *w;
	const char *shells[] = {"bash", "sh", "zsh", "/bin/bash", "/bin/sh",
	    "/bin/zsh", "/usr/bin/bash", NULL};
	char *cmd;
	size_t i, n = 0;
	pgn_status st;

	if (!cJSON_IsArray(argv))
		return cJSON_IsString(argv) ?
		    tx_command(t, argv->valuestring, background) :
		    PGN_OK;
	n = (size_t)cJSON_GetArraySize(argv);
	/* ["bash", "-lc", X]: the command is X */
	if (n == 3 && cJSON_IsString(cJSON_GetArrayItem(argv, 0)) &&
	    cJSON_IsString(cJSON_GetArrayItem(argv, 1)) &&
	    cJSON_IsString(cJSON_GetArrayItem(argv, 2))) {
		for (i = 0; shells[i] != NULL; i++)
			if (strcmp(cJSON_GetArrayItem(argv, 0)->valuestring,
			        shells[i]) == 0)
				break;
		if (shells[i] != NULL &&
		    cJSON_GetArrayItem(argv, 1)->valuestring[0] == '-')
			return tx_command(t,
			    cJSON_GetArrayItem(argv, 2)->valuestring,
			    background);
	}
	pgn_buf_init(&b, PGN_TRANSCRIPT_MAX_CMD + TX_REDACT_SLACK);
	cJSON_ArrayForEach(w, argv)
	{
		if (!cJSON_IsString(w))
			continue;
		if (b.len > 0)
			pgn_buf_add(&b, " ", 1);
		if (b.len + strlen(w->valuestring) > b.max)
			break;
		pgn_buf_adds(&b, w->valuestring);
	}
	if (b.err == PGN_ENOMEM) {
		pgn_buf_release(&b);
		return PGN_ENOMEM;
	}
	b.err = PGN_OK;
	cmd = pgn_buf_take(&b, NULL);
	if (cmd == NULL)
		return PGN_ENOMEM;
	st = tx_command(t, cmd, background);
	free(cmd);
	return st;
}

int
tx_is_edit_tool(const char *name)
{
	static const char *const edits[] = {"Write", "Edit", "MultiEdit",
	    "StrReplace", "NotebookEdit", "Delete", "EditNotebook", NULL};
	size_t i;

	for (i = 0; edits[i] != NULL; i++)
		if (strcmp(name, edits[i]) == 0)
			return 1;
	return 0;
}

pgn_status
tx_edit_input(struct pgn_transcript *t, const cJSON *input)
{
	static const char *const keys[] = {"file_path", "path", "target_file",
	    "filePath", "notebook_path", "file", NULL};
	const char *p;

	p = tx_str_any(input, keys);
	return p != NULL ? tx_file(t, p, strlen(p)) : PGN_OK;
}

pgn_status
tx_call(struct pgn_transcript *t, const char *name, const char *sub)
{
	struct pgn_buf b;
	char *n;
	size_t i;

	t->calls++;
	pgn_buf_init(&b, 2 * PGN_MAX_NAME + 64);
	pgn_buf_add(&b, name,
	    strlen(name) < PGN_MAX_NAME ? strlen(name) : PGN_MAX_NAME);
	if (sub != NULL) {
		pgn_buf_add(&b, " ", 1);
		pgn_buf_add(&b, sub,
		    strlen(sub) < PGN_MAX_NAME + 32 ? strlen(sub) :
		                                      PGN_MAX_NAME + 32);
	}
	n = pgn_buf_take(&b, NULL);
	if (n == NULL)
		return PGN_ENOMEM;
	for (i = 0; i < t->ntools; i++) {
		if (strcmp(t->tools[i].name, n) == 0) {
			t->tools[i].n++;
			free(n);
			return PGN_OK;
		}
	}
	if (t->ntools >= PGN_TRANSCRIPT_MAX_TOOLS) {
		t->tools_more++;
		free(n);
		return PGN_OK;
	}
	if (t->tools == NULL) {
		t->tools = calloc(PGN_TRANSCRIPT_MAX_TOOLS, sizeof(*t->tools));
		if (t->tools == NULL) {
			free(n);
			return PGN_ENOMEM;
		}
	}
	t->tools[t->ntools].name = n;
	t->tools[t->ntools].n = 1;
	t->ntools++;
	return PGN_OK;
}

pgn_status
tx_end(struct pgn_transcript *t, pgn_tx_outcome o, const char *status,
    const char *error)
{
	pgn_status st = PGN_OK;

	t->outcome = o;
	free(t->status);
	free(t->error);
	t->status = NULL;
	t->error = NULL;
	if (status != NULL)
		st = keep(&t->status, status, PGN_MAX_NAME);
	if (st == PGN_OK && error != NULL && error[0] != '\0')
		st = keep(&t->error, error, PGN_TRANSCRIPT_MAX_CMD);
	return st;
}

/* ---- frames --------------------------------------------------------- */

/*
 * The format a frame belongs to, from its shape alone: Cursor's frames
 * are role-first ({role, message}) or {type: turn_ended}; Codex's carry
 * a payload under a typed envelope; Claude's are typed and carry a
 * sessionId, uuid or leafUuid.
 */
pgn_tx_format
tx_detect(const cJSON *f)
{
	const char *type = tx_str(f, "type");

	if (type == NULL && tx_str(f, "role") != NULL &&
	    cJSON_GetObjectItemCaseSensitive(f, "message") != NULL)
		return PGN_TX_CURSOR;
	if (type == NULL)
		return PGN_TX_UNKNOWN;
	if (strcmp(type, "turn_ended") == 0 && tx_str(f, "status") != NULL &&
	    tx_str(f, "sessionId") == NULL)
		return PGN_TX_CURSOR;
	if (cJSON_GetObjectItemCaseSensitive(f, "payload") != NULL &&
	    (strcmp(type, "session_meta") == 0 ||
	        strcmp(type, "response_item") == 0 ||
	        strcmp(type, "event_msg") == 0 ||
	        strcmp(type, "turn_context") == 0 ||
	        strcmp(type, "compacted") == 0))
		return PGN_TX_CODEX;
	if (tx_str(f, "sessionId") != NULL || tx_str(f, "uuid") != NULL ||
	    tx_str(f, "leafUuid") != NULL)
		return PGN_TX_CLAUDE;
	return PGN_TX_UNKNOWN;
}

static pgn_status
frame(struct pgn_transcript *t, const cJSON *f)
{
	pgn_status st = PGN_OK;
	int known = 0;

	if (t->format == PGN_TX_UNKNOWN)
		t->format = tx_detect(f);
	switch (t->format) {
	case PGN_TX_CURSOR:
		st = tx_cursor_frame(t, f, &known);
		break;
	case PGN_TX_CLAUDE:
		st = tx_claude_frame(t, f, &known);
		break;
	case PGN_TX_CODEX:
		st = tx_codex_frame(t, f, &known);
		break;
	case PGN_TX_UNKNOWN:
		break;
	}
	if (known)
		t->known++;
	else
		t->unknown++;
	return st;
}

static pgn_status
line(struct tx_parser *p, const char *s, size_t len)
{
	struct pgn_transcript *t = p->t;
	const char *end = NULL;
	cJSON *f;
	pgn_status st;

	t->lines++;
	if (blank(s, len)) {
		t->blank++;
		return PGN_OK;
	}
	f = cJSON_ParseWithLengthOpts(s, len, &end, 0);
	if (f != NULL && end != NULL && !blank(end, len - (size_t)(end - s))) {
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
tx_parser_init(struct tx_parser *p, struct pgn_transcript *t, int cut)
{
	memset(p, 0, sizeof(*p));
	p->t = t;
	p->skip = cut;
	t->cut = t->cut || cut;
}

void
tx_parser_release(struct tx_parser *p)
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
line_add(struct tx_parser *p, const char *s, size_t n)
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
		cap = p->cap ? p->cap : TX_CHUNK;
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
line_end(struct tx_parser *p, const char *s, size_t n)
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
tx_feed(struct tx_parser *p, const char *data, size_t len)
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
tx_finish(struct tx_parser *p)
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
no_format(const struct pgn_transcript *t, pgn_tx_format asked, const char *what,
    char *err, size_t errlen)
{
	static const char *const names[] = {"Cursor, Claude Code or Codex",
	    "Cursor", "Claude Code", "Codex"};

	if (t->format != PGN_TX_UNKNOWN &&
	    (asked == PGN_TX_UNKNOWN || t->known > 0 || t->frames == 0))
		return PGN_OK;
	pgn_errf(err, errlen,
	    "%s is not a %s transcript (%zu lines, %zu JSON objects of no known shape)",
	    what, names[asked], t->lines, t->unknown);
	return PGN_EINVAL;
}

pgn_status
pgn_transcript_parse(const char *data, size_t len, pgn_tx_format fmt,
    struct pgn_transcript *t, char *err, size_t errlen)
{
	struct tx_parser p;
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
	tx_parser_init(&p, t, cut);
	st = tx_feed(&p, data, len);
	if (st == PGN_OK)
		st = tx_finish(&p);
	tx_parser_release(&p);
	if (st == PGN_OK)
		st = tx_settle(t);
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
	struct tx_parser p;
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
	tx_parser_init(&p, t, cut);
	chunk = malloc(TX_CHUNK);
	if (chunk == NULL) {
		st = PGN_ENOMEM;
		goto out;
	}
	while (left > 0) {
		n = read(fd, chunk, left < TX_CHUNK ? left : TX_CHUNK);
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
		st = tx_feed(&p, chunk, (size_t)n);
		if (st != PGN_OK)
			goto out;
	}
	st = tx_finish(&p);
	if (st == PGN_OK)
		st = tx_settle(t);
out:
	free(chunk);
	tx_parser_release(&p);
	if (st == PGN_ENOMEM)
		pgn_errf(err, errlen, "out of memory reading %s", path);
	return st;
}

static pgn_status
read_path(const char *path, size_t max, struct pgn_transcript *t, char *err,
    size_t errlen)
{
	struct stat sb;
	pgn_status st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
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
cursor_family(const char *path, struct pgn_transcript *t)
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
		ct.format = PGN_TX_CURSOR;
		st = read_path(child, PGN_TRANSCRIPT_SUB_READ, &ct, err,
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
			st = tx_file(t, ct.files[j], strlen(ct.files[j]));
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

pgn_status
pgn_transcript_read(const char *path, pgn_tx_format fmt,
    struct pgn_transcript *t, char *err, size_t errlen)
{
	pgn_status st;

	pgn_transcript_init(t);
	t->format = fmt;
	st = read_path(path, PGN_TRANSCRIPT_MAX_READ, t, err, errlen);
	if (st == PGN_OK)
		st = no_format(t, fmt, path, err, errlen);
	if (st == PGN_OK && t->format == PGN_TX_CURSOR) {
		st = cursor_family(path, t);
		if (st == PGN_ENOMEM)
			pgn_errf(err, errlen, "out of memory reading %s", path);
	}
	return st;
}
