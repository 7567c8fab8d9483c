/*
 * Pigeon's hook commands: recognising one in a config (a shell word
 * split without expansions) and building the entries install writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pigeon/hook.h"
#include "pigeon/setup.h"
#include "setup_int.h"

/* ---- recognising Pigeon's commands ---------------------------------- */

static void
word_add(struct word *w, int first, char c)
{
	if (!first)
		return;
	if (w->len < sizeof(w->buf) - 1)
		w->buf[w->len] = c;
	w->len++;
}

/* Is the word's basename 'name'? */
static int
word_is(const struct word *w, const char *name)
{
	size_t i, n = strlen(name);

	if (w->len >= sizeof(w->buf))
		return 0;
	for (i = w->len; i > 0 && w->buf[i - 1] != '/'; i--)
		;
	return w->len - i == n && memcmp(w->buf + i, name, n) == 0;
}

int
ins_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

static int
is_operator(char c)
{
	return c == ';' || c == '&' || c == '|' || c == '<' || c == '>' ||
	    c == '(' || c == ')';
}

/*
 * Split 'command' as a POSIX shell would for quoting ('...', "...",
 * backslash), without expansions. The whole string must parse: an
 * unbalanced quote or a trailing backslash means "not Pigeon's".
 */
int
ins_command_word(const char *command, const char *name, struct word *wp)
{
	struct word w = {0};
	const char *p;
	int inword = 0, nwords = 0, first, is = 0;

	if (command == NULL)
		return 0;
	for (p = command; *p != '\0'; p++) {
		/* A backslash-newline joins lines before any splitting. */
		if (p[0] == '\\' && p[1] == '\n') {
			p++;
			continue;
		}
		if (!inword) {
			if (ins_is_blank(*p) || is_operator(*p)) {
				/* An operator first: an empty first word. */
				if (is_operator(*p) && nwords == 0)
					nwords = 1;
				continue;
			}
			inword = 1;
		}
		first = nwords == 0;
		if (ins_is_blank(*p) || is_operator(*p)) {
			if (first)
				is = word_is(&w, name);
			inword = 0;
			nwords++;
			continue;
		}
		if (*p == '\\') {
			if (p[1] == '\0')
				return 0;
			word_add(&w, first, *++p);
		} else if (*p == '\'') {
			for (p++; *p != '\''; p++) {
				if (*p == '\0')
					return 0;
				word_add(&w, first, *p);
			}
		} else if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (*p == '\0')
					return 0;
				if (*p == '\\' && p[1] == '\n') {
					p++;
					continue;
				}
				if (*p == '\\' &&
				    (p[1] == '$' || p[1] == '`' ||
				        p[1] == '"' || p[1] == '\\'))
					p++;
				word_add(&w, first, *p);
			}
		} else {
			word_add(&w, first, *p);
		}
	}
	if (inword && nwords == 0)
		is = word_is(&w, name);
	if (is) {
		w.buf[w.len] = '\0';
		*wp = w;
	}
	return is;
}

int
pgn_command_is_pigeon(const char *command)
{
	struct word w;

	return ins_command_word(command, HOOK_NAME, &w);
}

char *
pgn_command_hook(const char *command)
{
	struct word w;

	if (!ins_command_word(command, HOOK_NAME, &w))
		return NULL;
	return pgn_strdup(w.buf);
}

/* ---- the entries Pigeon writes -------------------------------------- */

static int
shell_safe(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || strchr("/._-+,:@%=", c) != NULL;
}

/* "<hook> <host> <event>", the hook quoted only if it needs it. */
static char *
hook_command(const char *hook, const char *host, const char *event)
{
	struct pgn_buf b;
	const char *p;
	int quote = 0;

	for (p = hook; *p != '\0'; p++)
		if (!shell_safe(*p))
			quote = 1;
	pgn_buf_init(&b, PGN_MAX_PATH * 4 + 128);
	if (quote) {
		pgn_buf_adds(&b, "'");
		for (p = hook; *p != '\0'; p++) {
			if (*p == '\'')
				pgn_buf_adds(&b, "'\\''");
			else
				pgn_buf_add(&b, p, 1);
		}
		pgn_buf_adds(&b, "'");
	} else {
		pgn_buf_adds(&b, hook);
	}
	pgn_buf_addf(&b, " %s %s", host, event);
	return pgn_buf_take(&b, NULL);
}

/* The entry for event 'e' of host 'h': flat definition or nested group. */
cJSON *
ins_make_entry(pgn_host h, const char *hook, pgn_event e)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	cJSON *entry = NULL, *handler = NULL, *arr;
	char *cmd = NULL, timeout[16];

	cmd = hook_command(hook, hi->name, hi->events[e]);
	if (cmd == NULL)
		goto fail;
	/* Raw, like the numbers read from a file, so the two compare. */
	snprintf(timeout, sizeof(timeout), "%d",
	    hi->timeout_ms ? PGN_HOOK_TIMEOUT_S * 1000 : PGN_HOOK_TIMEOUT_S);
	handler = cJSON_CreateObject();
	if (handler == NULL)
		goto fail;
	if (hi->shape == PGN_SHAPE_NESTED &&
	    cJSON_AddStringToObject(handler, "type", "command") == NULL)
		goto fail;
	if (cJSON_AddStringToObject(handler, "command", cmd) == NULL ||
	    cJSON_AddRawToObject(handler, "timeout", timeout) == NULL)
		goto fail;
	free(cmd);
	cmd = NULL;
	if (hi->shape == PGN_SHAPE_FLAT)
		return handler;
	entry = cJSON_CreateObject();
	arr = entry != NULL ? cJSON_AddArrayToObject(entry, "hooks") : NULL;
	if (arr == NULL)
		goto fail;
	cJSON_AddItemToArray(arr, handler);
	return entry;
fail:
	free(cmd);
	cJSON_Delete(handler);
	cJSON_Delete(entry);
	return NULL;
}

/*
 * Claude's idle wake (docs/decisions/0081): one more Stop entry, run in
 * the background after the turn; exit 2 makes Claude start a turn with
 * its stderr, after this prefix (rewakeMessage, honoured by 2.1.332).
 */
#define REWAKE_MESSAGE "Pigeon woke you: mail arrived while you were idle."

cJSON *
ins_make_rewake_entry(const char *hook)
{
	cJSON *entry = NULL, *handler = NULL, *arr;
	char *cmd = NULL, *full = NULL, timeout[16];
	struct pgn_buf b;

	cmd = hook_command(hook, "claude", "Stop");
	if (cmd == NULL)
		goto fail;
	pgn_buf_init(&b, strlen(cmd) + sizeof(REWAKE_FLAG) + 1);
	pgn_buf_addf(&b, "%s " REWAKE_FLAG, cmd);
	full = pgn_buf_take(&b, NULL);
	pgn_buf_release(&b);
	snprintf(timeout, sizeof(timeout), "%d", PGN_REWAKE_TIMEOUT_S);
	handler = cJSON_CreateObject();
	if (full == NULL || handler == NULL ||
	    cJSON_AddStringToObject(handler, "type", "command") == NULL ||
	    cJSON_AddStringToObject(handler, "command", full) == NULL ||
	    cJSON_AddTrueToObject(handler, "asyncRewake") == NULL ||
	    cJSON_AddRawToObject(handler, "timeout", timeout) == NULL ||
	    cJSON_AddStringToObject(handler, "rewakeMessage", REWAKE_MESSAGE) ==
	        NULL)
		goto fail;
	entry = cJSON_CreateObject();
	arr = entry != NULL ? cJSON_AddArrayToObject(entry, "hooks") : NULL;
	if (arr == NULL)
		goto fail;
	cJSON_AddItemToArray(arr, handler);
	free(cmd);
	free(full);
	return entry;
fail:
	free(cmd);
	free(full);
	cJSON_Delete(handler);
	cJSON_Delete(entry);
	return NULL;
}

int
ins_hook_path_ok(const char *hook)
{
	const char *p;

	if (hook == NULL || hook[0] != '/' || strlen(hook) >= PGN_MAX_PATH)
		return 0;
	for (p = hook; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	/* Uninstall finds entries by this name: others would stay. */
	p = strrchr(hook, '/');
	return strcmp(p + 1, HOOK_NAME) == 0;
}
