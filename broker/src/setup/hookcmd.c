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
word_add(struct word *w, char c)
{
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

enum token { TOK_BAD = -1, TOK_END, TOK_WORD, TOK_OP };

/*
 * The next token of a command at '*pp', split as a POSIX shell would
 * for quoting ('...', "...", backslash), without expansions: a word
 * (its text in 'w', bounded; 'w->len' may exceed the buffer) or one
 * operator character; TOK_BAD for an unbalanced quote or a trailing
 * backslash.
 */
static enum token
next_token(const char **pp, struct word *w)
{
	const char *p = *pp;
	int inword = 0;

	w->len = 0;
	for (; *p != '\0'; p++) {
		/* A backslash-newline joins lines before any splitting. */
		if (p[0] == '\\' && p[1] == '\n') {
			p++;
			continue;
		}
		if (!inword) {
			if (ins_is_blank(*p))
				continue;
			if (is_operator(*p)) {
				w->buf[0] = *p;
				w->buf[1] = '\0';
				w->len = 1;
				*pp = p + 1;
				return TOK_OP;
			}
			inword = 1;
		}
		if (ins_is_blank(*p) || is_operator(*p))
			break;
		if (*p == '\\') {
			if (p[1] == '\0')
				return TOK_BAD;
			word_add(w, *++p);
		} else if (*p == '\'') {
			for (p++; *p != '\''; p++) {
				if (*p == '\0')
					return TOK_BAD;
				word_add(w, *p);
			}
		} else if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (*p == '\0')
					return TOK_BAD;
				if (*p == '\\' && p[1] == '\n') {
					p++;
					continue;
				}
				if (*p == '\\' &&
				    (p[1] == '$' || p[1] == '`' ||
				        p[1] == '"' || p[1] == '\\'))
					p++;
				word_add(w, *p);
			}
		} else {
			word_add(w, *p);
		}
	}
	*pp = p;
	if (!inword)
		return TOK_END;
	if (w->len < sizeof(w->buf))
		w->buf[w->len] = '\0';
	return TOK_WORD;
}

/* Does the rest of the command at 'p' parse to its end? */
static int
rest_parses(const char *p)
{
	struct word t;
	enum token k;

	while ((k = next_token(&p, &t)) > TOK_END)
		;
	return k == TOK_END;
}

/* Is the next token the word (or operator) 'text'? */
static int
next_is(const char **pp, enum token kind, const char *text)
{
	struct word t;

	return next_token(pp, &t) == kind && t.len == strlen(text) &&
	    memcmp(t.buf, text, t.len) == 0;
}

/*
 * After the guard's "||": "exit 0;", or "{ echo ANSWER; exit 0; };"
 * where the event's neutral answer is not empty (decision 0258).
 */
static int
guard_exit(const char **pp)
{
	struct word answer;
	const char *p = *pp;

	if (next_is(&p, TOK_WORD, "{") && next_is(&p, TOK_WORD, "echo") &&
	    next_token(&p, &answer) == TOK_WORD && next_is(&p, TOK_OP, ";") &&
	    next_is(&p, TOK_WORD, "exit") && next_is(&p, TOK_WORD, "0") &&
	    next_is(&p, TOK_OP, ";") && next_is(&p, TOK_WORD, "}") &&
	    next_is(&p, TOK_OP, ";")) {
		*pp = p;
		return 1;
	}
	p = *pp;
	if (next_is(&p, TOK_WORD, "exit") && next_is(&p, TOK_WORD, "0") &&
	    next_is(&p, TOK_OP, ";")) {
		*pp = p;
		return 1;
	}
	return 0;
}

/*
 * The guarded form install writes for a host that runs hooks through a
 * shell (decisions 0225, 0243, 0258): "[ -x P ] || exit 0; exec P
 * ARGS...", or with "{ echo ANSWER; exit 0; }" for "exit 0", P the same
 * word twice. '*pp' is left after the second P.
 */
static int
guarded_word(const char **pp, const char *name, struct word *w)
{
	struct word again;
	const char *p = *pp;

	if (!next_is(&p, TOK_WORD, "[") || !next_is(&p, TOK_WORD, "-x") ||
	    next_token(&p, w) != TOK_WORD || !word_is(w, name) ||
	    !next_is(&p, TOK_WORD, "]") || !next_is(&p, TOK_OP, "|") ||
	    !next_is(&p, TOK_OP, "|") || !guard_exit(&p) ||
	    !next_is(&p, TOK_WORD, "exec") ||
	    next_token(&p, &again) != TOK_WORD || again.len != w->len ||
	    memcmp(again.buf, w->buf, w->len) != 0)
		return 0;
	*pp = p;
	return 1;
}

/*
 * Is the program 'command' runs a path whose basename is 'name': its
 * first word, or the guarded form's? The whole string must parse: an
 * unbalanced quote or a trailing backslash means "not Pigeon's".
 */
static int
command_program(const char *command, const char *name, int guard,
    struct word *wp)
{
	struct word w;
	const char *p = command;

	if (command == NULL)
		return 0;
	if (guard && guarded_word(&p, name, &w)) {
		if (!rest_parses(p))
			return 0;
		*wp = w;
		return 1;
	}
	p = command;
	if (next_token(&p, &w) != TOK_WORD || !word_is(&w, name) ||
	    !rest_parses(p))
		return 0;
	*wp = w;
	return 1;
}

int
ins_command_word(const char *command, const char *name, struct word *wp)
{
	return command_program(command, name, 0, wp);
}

int
pgn_command_guarded(const char *command)
{
	struct word w;
	const char *p = command;

	return command != NULL && guarded_word(&p, HOOK_NAME, &w) &&
	    rest_parses(p);
}

int
pgn_command_is_pigeon(const char *command)
{
	struct word w;

	return command_program(command, HOOK_NAME, 1, &w);
}

char *
pgn_command_hook(const char *command)
{
	struct word w;

	if (!command_program(command, HOOK_NAME, 1, &w))
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

/* The hook's path as one shell word, quoted only if it needs it. */
static void
add_quoted(struct pgn_buf *b, const char *hook)
{
	const char *p;
	int quote = 0;

	for (p = hook; *p != '\0'; p++)
		if (!shell_safe(*p))
			quote = 1;
	if (!quote) {
		pgn_buf_adds(b, hook);
		return;
	}
	pgn_buf_adds(b, "'");
	for (p = hook; *p != '\0'; p++) {
		if (*p == '\'')
			pgn_buf_adds(b, "'\\''");
		else
			pgn_buf_add(b, p, 1);
	}
	pgn_buf_adds(b, "'");
}

/*
 * "<hook> <host> <event>"; for a host that runs it through a shell,
 * "[ -x <hook> ] || exit 0; exec <hook> <host> <event>": a binary that
 * is gone exits 0 with the event's neutral answer, which pigeon-hook
 * would print with nothing to say (nothing for most; "{ echo ANSWER;
 * exit 0; }" where it is not empty, decision 0258); one that is there
 * is the hook itself, its output and exit code unchanged (0225).
 */
static char *
hook_command(const char *hook, pgn_host h, pgn_event e)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_buf b;
	pgn_status st;
	char *answer = NULL;

	pgn_buf_init(&b, PGN_MAX_PATH * 8 + 240);
	if (hi->shell_guard) {
		answer = pgn_envelope(h, e, NULL, &st);
		if (answer == NULL && st != PGN_OK)
			return NULL;
		pgn_buf_adds(&b, "[ -x ");
		add_quoted(&b, hook);
		if (answer != NULL) {
			pgn_buf_adds(&b, " ] || { echo ");
			add_quoted(&b, answer);
			pgn_buf_adds(&b, "; exit 0; }; exec ");
		} else {
			pgn_buf_adds(&b, " ] || exit 0; exec ");
		}
		free(answer);
	}
	add_quoted(&b, hook);
	pgn_buf_addf(&b, " %s %s", hi->name, hi->events[e]);
	return pgn_buf_take(&b, NULL);
}

/* The entry for event 'e' of host 'h': flat definition or nested group. */
cJSON *
ins_make_entry(pgn_host h, const char *hook, pgn_event e)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	cJSON *entry = NULL, *handler = NULL, *arr;
	char *cmd = NULL, timeout[16];

	cmd = hook_command(hook, h, e);
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

	cmd = hook_command(hook, PGN_HOST_CLAUDE, PGN_EVENT_STOP);
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
