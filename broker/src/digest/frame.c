/*
 * The format readers' tools: cJSON lookups that never fail on a wrong
 * type, and what a frame says (prompts, answers, files, commands, calls,
 * the end) kept within the transcript's bounds.
 */
#include <stdlib.h>
#include <string.h>

#include "transcript_int.h"

#define TR_ELLIPS "\xe2\x80\xa6"

/* ---- cJSON helpers -------------------------------------------------- */

const char *
tr_str(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *
tr_obj(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsObject(v) ? v : NULL;
}

const cJSON *
tr_arr(const cJSON *obj, const char *key)
{
	const cJSON *v;

	if (!cJSON_IsObject(obj))
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsArray(v) ? v : NULL;
}

int
tr_true(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return 0;
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

const char *
tr_str_any(const cJSON *obj, const char *const *keys)
{
	const char *s;

	for (; *keys != NULL; keys++) {
		s = tr_str(obj, *keys);
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
tr_clip(const char *s, size_t len, size_t max)
{
	struct pgn_buf b;
	char *r;
	size_t rlen, n;
	int cut = 0;

	/* Redact a little past the bound, so a cut never splits a key. */
	if (len > max + TR_REDACT_SLACK) {
		len = char_cut(s, len, max + TR_REDACT_SLACK);
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
	pgn_buf_adds(&b, TR_ELLIPS);
	free(r);
	return pgn_buf_take(&b, NULL);
}

void
tr_buf_fit(struct pgn_buf *b, const char *s)
{
	size_t room;

	if (b->err != PGN_OK || b->len >= b->max)
		return;
	room = b->max - b->len;
	pgn_buf_add(b, s, char_cut(s, strlen(s), room));
}

/*
 * Keep s raw, cut a little past 'max': redaction and the final cut wait
 * for the end of the read (tr_settle), so only what is shown pays.
 */
static pgn_status
keep(char **slot, const char *s, size_t max)
{
	char *v;

	v = pgn_strndup(s, char_cut(s, strlen(s), max + TR_REDACT_SLACK + 1));
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
	v = tr_clip(*slot, strlen(*slot), max);
	if (v == NULL)
		return PGN_ENOMEM;
	free(*slot);
	*slot = v;
	return PGN_OK;
}

pgn_status
tr_settle(struct pgn_transcript *t)
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
int
tr_blank(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return 0;
	return 1;
}

pgn_status
tr_prompt(struct pgn_transcript *t, const char *s)
{
	pgn_status st;

	if (s == NULL || tr_blank(s, strlen(s)))
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
tr_answer(struct pgn_transcript *t, const char *s)
{
	if (s == NULL || tr_blank(s, strlen(s)))
		return PGN_OK;
	t->answers++;
	return keep(&t->last_text, s, PGN_TRANSCRIPT_MAX_TEXT);
}

pgn_status
tr_question(struct pgn_transcript *t, const char *s)
{
	if (s == NULL || tr_blank(s, strlen(s)))
		return PGN_OK;
	return keep(&t->question, s, PGN_TRANSCRIPT_MAX_TEXT);
}

pgn_status
tr_file(struct pgn_transcript *t, const char *path, size_t len)
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
	if (len > PGN_TRANSCRIPT_MAX_PATH + TR_REDACT_SLACK)
		len = char_cut(path, len,
		    PGN_TRANSCRIPT_MAX_PATH + TR_REDACT_SLACK);
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

/* pgn_patch_paths's callback: each path a file of the digest. */
static pgn_status
patch_file(void *arg, const char *path, size_t len)
{
	return tr_file(arg, path, len);
}

/* The files a patch touches (base/patch.c reads both dialects). */
pgn_status
tr_patch(struct pgn_transcript *t, const char *patch)
{
	return pgn_patch_paths(patch, patch_file, t);
}

pgn_status
tr_command(struct pgn_transcript *t, const char *cmd, int background)
{
	struct pgn_buf b;
	char *c;

	if (cmd == NULL || tr_blank(cmd, strlen(cmd)))
		return PGN_OK;
	t->cmds_seen++;
	pgn_buf_init(&b, PGN_TRANSCRIPT_MAX_CMD + TR_REDACT_SLACK + 16);
	if (background)
		pgn_buf_adds(&b, "(background) ");
	pgn_buf_add(&b, cmd,
	    char_cut(cmd, strlen(cmd),
	        PGN_TRANSCRIPT_MAX_CMD + TR_REDACT_SLACK));
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
tr_command_argv(struct pgn_transcript *t, const cJSON *argv, int background)
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
		    tr_command(t, argv->valuestring, background) :
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
			return tr_command(t,
			    cJSON_GetArrayItem(argv, 2)->valuestring,
			    background);
	}
	pgn_buf_init(&b, PGN_TRANSCRIPT_MAX_CMD + TR_REDACT_SLACK);
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
	st = tr_command(t, cmd, background);
	free(cmd);
	return st;
}

int
tr_is_edit_tool(const char *name)
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
tr_edit_input(struct pgn_transcript *t, const cJSON *input)
{
	static const char *const keys[] = {"file_path", "path", "target_file",
	    "filePath", "notebook_path", "file", NULL};
	const char *p;

	p = tr_str_any(input, keys);
	return p != NULL ? tr_file(t, p, strlen(p)) : PGN_OK;
}

pgn_status
tr_call(struct pgn_transcript *t, const char *name, const char *sub)
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
tr_end(struct pgn_transcript *t, pgn_transcript_outcome o, const char *status,
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
