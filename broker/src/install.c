/*
 * The one place that edits host configs: recognising Pigeon's hook
 * commands, the pure install/uninstall merges over a config's bytes, a
 * line diff, and applying a merge atomically with a '.bak' of the first
 * original.
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

#include <cjson/cJSON.h>

#include "jsonedit.h"
#include "pgn_int.h"
#include "pigeon/hook.h"
#include "tomledit.h"

/* Bound on the LCS table of a diff (cells); past it the middle is replaced. */
#define DIFF_MAX_CELLS (1u << 22)

/* A line of text, with its '\n' when it has one. */
struct line {
	const char *p;
	size_t n;
};

/* ---- recognising Pigeon's commands ---------------------------------- */

#define HOOK_NAME     "pigeon-hook"
#define HOOK_NAME_LEN (sizeof(HOOK_NAME) - 1)

/* The first word of a command, bounded; 'len' may exceed the buffer. */
struct word {
	size_t len;
	char buf[PGN_MAX_PATH];
};

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

static int
is_blank(char c)
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
static int
command_word(const char *command, const char *name, struct word *wp)
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
			if (is_blank(*p) || is_operator(*p)) {
				/* An operator first: an empty first word. */
				if (is_operator(*p) && nwords == 0)
					nwords = 1;
				continue;
			}
			inword = 1;
		}
		first = nwords == 0;
		if (is_blank(*p) || is_operator(*p)) {
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

	return command_word(command, HOOK_NAME, &w);
}

char *
pgn_command_hook(const char *command)
{
	struct word w;

	if (!command_word(command, HOOK_NAME, &w))
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
static cJSON *
make_entry(pgn_host h, const char *hook, pgn_event e)
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
#define REWAKE_FLAG    "--rewake"
#define REWAKE_MESSAGE "Pigeon woke you: mail arrived while you were idle."

static cJSON *
make_rewake_entry(const char *hook)
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

/* ---- walking a config ----------------------------------------------- */

/* Which of Pigeon's handlers a walk is about. */
enum which {
	PIG_ANY,      /* all of them (uninstall) */
	PIG_ORDINARY, /* the synchronous ones, one per event */
	PIG_REWAKE,   /* Claude's idle wake, in Stop */
};

/* A Pigeon command that ends in the idle wake's flag. */
static int
command_is_rewake(const char *cmd)
{
	size_t n = strlen(cmd), k = sizeof(REWAKE_FLAG) - 1;

	while (n > 0 && is_blank(cmd[n - 1]))
		n--;
	return n > k && is_blank(cmd[n - k - 1]) &&
	    memcmp(cmd + n - k, REWAKE_FLAG, k) == 0;
}

static int
handler_is(const struct je_node *x, enum which which)
{
	const struct je_node *cmd;
	int rw;

	if (x->type != JE_OBJECT)
		return 0;
	cmd = je_get(x, "command");
	if (cmd == NULL || cmd->type != JE_STRING ||
	    !pgn_command_is_pigeon(cmd->str))
		return 0;
	if (which == PIG_ANY)
		return 1;
	rw = command_is_rewake(cmd->str);
	return which == PIG_REWAKE ? rw : !rw;
}

static int
handler_is_pigeon(const struct je_node *x)
{
	return handler_is(x, PIG_ORDINARY);
}

/*
 * Count Pigeon's entries in event array 'arr' ('*holder' gets the item,
 * flat definition or nested group, holding the last one).
 */
static size_t
count_which(const struct je_node *arr, pgn_config_shape shape, enum which which,
    const struct je_node **holder)
{
	const struct je_node *it, *hs, *hd;
	size_t n = 0;

	*holder = NULL;
	if (arr == NULL || arr->type != JE_ARRAY)
		return 0;
	for (it = arr->child; it != NULL; it = it->next) {
		if (shape == PGN_SHAPE_FLAT) {
			if (handler_is(it, which)) {
				n++;
				*holder = it;
			}
			continue;
		}
		hs = je_get(it, "hooks");
		if (hs == NULL || hs->type != JE_ARRAY)
			continue;
		for (hd = hs->child; hd != NULL; hd = hd->next) {
			if (handler_is(hd, which)) {
				n++;
				*holder = it;
			}
		}
	}
	return n;
}

/* Pigeon's synchronous entries in 'arr' (the idle wake's not counted). */
static size_t
count_event(const struct je_node *arr, pgn_config_shape shape,
    const struct je_node **holder)
{
	return count_which(arr, shape, PIG_ORDINARY, holder);
}

/* Pigeon's entries in every event array of 'root'. */
static size_t
count_all(const struct je_node *root, pgn_config_shape shape)
{
	const struct je_node *hooks, *ev, *holder;
	size_t n = 0;

	hooks = je_get(root, "hooks");
	if (hooks == NULL || hooks->type != JE_OBJECT)
		return 0;
	for (ev = hooks->child; ev != NULL; ev = ev->next)
		n += count_which(ev, shape, PIG_ANY, &holder);
	return n;
}

/*
 * Mark Pigeon's entries in event array 'arr' for removal: flat
 * definitions, or nested handlers, or the whole group when all its
 * handlers are Pigeon's. Foreign items, including ones of shapes we do
 * not know, stay in order. Returns the handlers removed; '*gone' gets
 * the items of 'arr' removed.
 */
static size_t
strip_event(struct je_node *arr, pgn_config_shape shape, enum which which,
    size_t *gone)
{
	struct je_node *it, *hs, *hd;
	size_t n = 0, k;

	*gone = 0;
	for (it = arr->child; it != NULL; it = it->next) {
		if (shape == PGN_SHAPE_FLAT) {
			if (handler_is(it, which)) {
				je_drop(it);
				n++;
				(*gone)++;
			}
			continue;
		}
		hs = je_get(it, "hooks");
		if (hs == NULL || hs->type != JE_ARRAY)
			continue;
		k = 0;
		for (hd = hs->child; hd != NULL; hd = hd->next)
			k += (size_t)handler_is(hd, which);
		n += k;
		if (k == 0)
			continue;
		if (k == hs->n) {
			je_drop(it);
			(*gone)++;
			continue;
		}
		for (hd = hs->child; hd != NULL; hd = hd->next)
			if (handler_is(hd, which))
				je_drop(hd);
	}
	return n;
}

/*
 * Strip Pigeon's entries from every event of 'hooks', then drop the
 * event arrays and the "hooks" object that this left empty (only those:
 * an empty array the user wrote stays). With 'keep' (install), the
 * host's own events and "hooks" stay in place to be refilled, and an
 * event named in 'keep' (an up-to-date entry stays put) is not touched,
 * and the idle wake's entry stays (add_rewake decides on it).
 * Returns the handlers removed.
 */
static size_t
strip_all(struct je_node *root, const struct pgn_host_info *hi,
    const char *const *keep)
{
	struct je_node *hooks, *ev;
	size_t n = 0, k, gone, evgone = 0;
	int e, ours, kept;

	hooks = je_get(root, "hooks");
	if (hooks == NULL || hooks->type != JE_OBJECT)
		return 0;
	for (ev = hooks->child; ev != NULL; ev = ev->next) {
		if (ev->type != JE_ARRAY)
			continue;
		ours = kept = 0;
		for (e = 0; keep != NULL && e < PGN_NEVENTS; e++) {
			if (hi->events[e] == NULL ||
			    strcmp(ev->key, hi->events[e]) != 0)
				continue;
			ours = 1;
			kept = keep[e] != NULL;
		}
		if (kept)
			continue;
		k = strip_event(ev, hi->shape,
		    keep != NULL ? PIG_ORDINARY : PIG_ANY, &gone);
		n += k;
		if (k > 0 && gone == ev->n && !ours) {
			je_drop(ev);
			evgone++;
		}
	}
	if (n > 0 && evgone == hooks->n && keep == NULL)
		je_drop(hooks);
	return n;
}

/* Remove 'item' from 'parent' and free it. */
static void
drop(cJSON *parent, cJSON *item)
{
	cJSON_Delete(cJSON_DetachItemViaPointer(parent, item));
}

/* True for the number 1, as text read from a file or as a double. */
static int
is_one(const cJSON *v)
{
	return (cJSON_IsRaw(v) && strcmp(v->valuestring, "1") == 0) ||
	    (cJSON_IsNumber(v) && v->valuedouble == 1.0);
}

/* Drop every empty container of the hooks tree (for comparing). */
static void
prune_empty(cJSON *root)
{
	cJSON *hooks, *ev, *evnext, *it, *next, *hs;

	/* Claude's permissions.allow that install may have filled. */
	hooks = cJSON_GetObjectItemCaseSensitive(root, "permissions");
	ev = cJSON_GetObjectItemCaseSensitive(hooks, "allow");
	if (cJSON_IsArray(ev) && ev->child == NULL)
		drop(hooks, ev);
	if (cJSON_IsObject(hooks) && hooks->child == NULL)
		drop(root, hooks);
	hooks = cJSON_GetObjectItemCaseSensitive(root, "hooks");
	if (!cJSON_IsObject(hooks))
		return;
	for (ev = hooks->child; ev != NULL; ev = evnext) {
		evnext = ev->next;
		if (!cJSON_IsArray(ev))
			continue;
		for (it = ev->child; it != NULL; it = next) {
			next = it->next;
			hs = cJSON_GetObjectItemCaseSensitive(it, "hooks");
			if (cJSON_IsArray(hs) && hs->child == NULL)
				drop(ev, it);
		}
		if (ev->child == NULL)
			drop(hooks, ev);
	}
	if (hooks->child == NULL)
		drop(root, hooks);
}

/*
 * The form in which a backup is compared with an uninstall result: no
 * empty containers, and no Cursor "version":1 (Pigeon adds it to a file
 * it fills from nothing; it is Cursor's default anyway).
 */
static void
canonical(cJSON *root, pgn_config_shape shape)
{
	cJSON *v;

	prune_empty(root);
	v = cJSON_GetObjectItemCaseSensitive(root, "version");
	if (shape == PGN_SHAPE_FLAT && v != NULL && is_one(v))
		drop(root, v);
}

/*
 * True if 'root' holds nothing but what Pigeon writes when it creates
 * the file: {} or, for Cursor, {"version":1}, with "hooks" empty or absent.
 */
static int
is_skeleton(const cJSON *root, pgn_config_shape shape)
{
	const cJSON *it;

	if (!cJSON_IsObject(root))
		return 0;
	cJSON_ArrayForEach(it, root)
	{
		if (strcmp(it->string, "hooks") == 0 && cJSON_IsObject(it) &&
		    it->child == NULL)
			continue;
		if (shape == PGN_SHAPE_FLAT &&
		    strcmp(it->string, "version") == 0 && is_one(it))
			continue;
		return 0;
	}
	return 1;
}

/* ---- parsing -------------------------------------------------------- */

static const char *
json_type(const struct je_node *x)
{
	switch (x->type) {
	case JE_ARRAY:
		return "an array";
	case JE_OBJECT:
		return "an object";
	case JE_STRING:
		return "a string";
	case JE_NUMBER:
		return "a number";
	case JE_TRUE:
	case JE_FALSE:
		return "a boolean";
	case JE_NULL:
		break;
	}
	return "null";
}

/*
 * Parse a config strictly into 'd' (a NULL root for absent or blank
 * text; no object may hold a key twice; comments only where the host
 * accepts them: Gemini) and check the shape Pigeon relies on: a
 * top-level object, "hooks" an object if present, the host's events
 * arrays if present. Other keys under "hooks" may be anything (Gemini
 * has kept settings there); only arrays among them are searched for
 * Pigeon's entries. Errors are written to 'errbuf' as a phrase with
 * the file as subject ("is not valid JSON (line 3, column 7)").
 */
static pgn_status
parse_config(pgn_host h, const char *in, size_t len, struct je_doc *d,
    char *errbuf, size_t errlen)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	const struct je_node *hooks, *ev;
	pgn_status rc;
	int e;

	memset(d, 0, sizeof(*d));
	if (len > PGN_MAX_CONFIG) {
		pgn_errf(errbuf, errlen, "is larger than %d bytes",
		    PGN_MAX_CONFIG);
		return PGN_ETOOBIG;
	}
	if (in == NULL)
		in = "";
	if (memchr(in, '\0', len) != NULL) {
		pgn_errf(errbuf, errlen,
		    "is not valid JSON (it holds a NUL byte)");
		return PGN_EINVAL;
	}
	/* A host would cut the string at the NUL: refuse, untouched. */
	if (pgn_json_nul_escape(in, len)) {
		pgn_errf(errbuf, errlen,
		    "holds \\u0000 (a NUL character), which Pigeon cannot rewrite faithfully");
		return PGN_EINVAL;
	}
	rc = je_parse(d, in, len, hi->json_comments, errbuf, errlen);
	if (rc != PGN_OK || d->root == NULL)
		return rc;
	rc = PGN_EINVAL;
	if (d->root->type != JE_OBJECT) {
		pgn_errf(errbuf, errlen,
		    "holds %s at the top level, not an object",
		    json_type(d->root));
		goto out;
	}
	hooks = je_get(d->root, "hooks");
	if (hooks != NULL && hooks->type != JE_OBJECT) {
		pgn_errf(errbuf, errlen, "has \"hooks\" as %s, not an object",
		    json_type(hooks));
		goto out;
	}
	for (e = 0; hooks != NULL && e < PGN_NEVENTS; e++) {
		ev =
		    hi->events[e] != NULL ? je_get(hooks, hi->events[e]) : NULL;
		if (ev != NULL && ev->type != JE_ARRAY) {
			pgn_errf(errbuf, errlen,
			    "has \"hooks\".\"%s\" as %s, not an array",
			    hi->events[e], json_type(ev));
			goto out;
		}
	}
	rc = PGN_OK;
out:
	if (rc != PGN_OK)
		je_release(d);
	return rc;
}

/* ---- permissions: what the agent may run (decision 0073) ------------ */

#define PIGEON_NAME "pigeon"
/* A shell word for the pigeon CLI, quoted, as the hook shows it. */
#define WORD_MAX (PGN_HOOK_MAX_SHOWN + 3)
/* A Claude rule: "Bash(" WORD " " SUB ":*)". */
#define RULE_MAX (WORD_MAX + 32)

static const char *const perm_subs[] = {"send", "read", "wait", "status"};
#define PERM_NSUBS (sizeof(perm_subs) / sizeof(perm_subs[0]))

char *
pgn_pigeon_beside(const char *hook)
{
	static const char *const rel[] = {"pigeon", "../broker/pigeon"};
	char *real = NULL, *dir = NULL, *cand = NULL, *found = NULL;
	size_t i;

	if (hook == NULL)
		return NULL;
	real = realpath(hook, NULL);
	dir = pgn_path_dir(real != NULL ? real : hook);
	for (i = 0;
	     dir != NULL && found == NULL && i < sizeof(rel) / sizeof(rel[0]);
	     i++) {
		cand = pgn_path_join(dir, rel[i]);
		if (cand != NULL && access(cand, X_OK) == 0)
			found = realpath(cand, NULL);
		free(cand);
	}
	free(real);
	free(dir);
	return found;
}

/* The word the installed hook will show for the pigeon CLI. */
static void
hook_pigeon_word(const char *hook, char *out, size_t len)
{
	char *found = pgn_pigeon_beside(hook);

	pgn_shell_word(found, out, len);
	free(found);
}

static void
rule_text(char *out, size_t len, const char *word, size_t k)
{
	snprintf(out, len, "Bash(%s %s:*)", word, perm_subs[k]);
}

/*
 * True for a rule Pigeon writes for some pigeon CLI: exactly
 * "Bash(WORD SUB:*)" with SUB one of perm_subs and WORD what
 * pgn_shell_word gives for an absolute path, or plain "pigeon".
 */
static int
rule_is_pigeon(const char *r)
{
	char inner[RULE_MAX], again[WORD_MAX], *sp;
	struct word w;
	size_t n, k;
	int sub = 0;

	n = strlen(r);
	if (n < 8 || n - 8 >= sizeof(inner) || strncmp(r, "Bash(", 5) != 0 ||
	    strcmp(r + n - 3, ":*)") != 0)
		return 0;
	memcpy(inner, r + 5, n - 8);
	inner[n - 8] = '\0';
	sp = strrchr(inner, ' ');
	if (sp == NULL)
		return 0;
	for (k = 0; k < PERM_NSUBS; k++)
		sub |= strcmp(sp + 1, perm_subs[k]) == 0;
	*sp = '\0';
	if (!sub)
		return 0;
	if (strcmp(inner, PIGEON_NAME) == 0)
		return 1;
	if (!command_word(inner, PIGEON_NAME, &w))
		return 0;
	w.buf[w.len] = '\0';
	if (w.buf[0] != '/')
		return 0;
	pgn_shell_word(w.buf, again, sizeof(again));
	return strcmp(again, inner) == 0;
}

/* Claude's "permissions" and "permissions"."allow", or an error. */
static pgn_status
perm_shape(const struct je_node *root, struct je_node **allow, char *errbuf,
    size_t errlen)
{
	const struct je_node *perms;

	*allow = NULL;
	if (root == NULL)
		return PGN_OK;
	perms = je_get(root, "permissions");
	if (perms == NULL)
		return PGN_OK;
	if (perms->type != JE_OBJECT) {
		pgn_errf(errbuf, errlen,
		    "has \"permissions\" as %s, not an object",
		    json_type(perms));
		return PGN_EINVAL;
	}
	*allow = (struct je_node *)je_get(perms, "allow");
	if (*allow != NULL && (*allow)->type != JE_ARRAY) {
		pgn_errf(errbuf, errlen,
		    "has \"permissions\".\"allow\" as %s, not an array",
		    json_type(*allow));
		return PGN_EINVAL;
	}
	return PGN_OK;
}

/* Pigeon's rules in "permissions"."allow". */
static size_t
count_rules(const struct je_node *root)
{
	struct je_node *allow, *it;
	size_t n = 0;

	if (perm_shape(root, &allow, NULL, 0) != PGN_OK || allow == NULL)
		return 0;
	for (it = allow->child; it != NULL; it = it->next)
		n += it->type == JE_STRING && rule_is_pigeon(it->str);
	return n;
}

/*
 * Make "permissions"."allow" hold the rules for 'word', each once:
 * Pigeon's rules already there stay in place, others of Pigeon's (an
 * older path, a duplicate) go, the missing ones are appended.
 */
static pgn_status
add_rules(struct je_doc *d, const char *word, char *errbuf, size_t errlen)
{
	static const char *const path[] = {"permissions", "allow"};
	struct je_node *allow, *it;
	char rule[PERM_NSUBS][RULE_MAX];
	int seen[PERM_NSUBS] = {0}, kept;
	size_t k;
	pgn_status rc;

	rc = perm_shape(d->root, &allow, errbuf, errlen);
	if (rc != PGN_OK)
		return rc;
	for (k = 0; k < PERM_NSUBS; k++)
		rule_text(rule[k], sizeof(rule[k]), word, k);
	for (it = allow != NULL ? allow->child : NULL; it != NULL;
	     it = it->next) {
		if (it->type != JE_STRING || !rule_is_pigeon(it->str))
			continue;
		kept = 0;
		for (k = 0; k < PERM_NSUBS && !kept; k++) {
			if (!seen[k] && strcmp(it->str, rule[k]) == 0)
				seen[k] = kept = 1;
		}
		if (!kept)
			je_drop(it);
	}
	for (k = 0; k < PERM_NSUBS; k++) {
		if (seen[k])
			continue;
		rc = je_push(d, path, 2, cJSON_CreateString(rule[k]));
		if (rc != PGN_OK)
			return rc;
	}
	return PGN_OK;
}

/*
 * Remove Pigeon's rules, then "allow" and "permissions" if that left
 * them empty (only then: an empty one the user wrote stays).
 */
static void
strip_rules(struct je_node *root)
{
	struct je_node *allow, *it, *perms;
	size_t n = 0;

	if (perm_shape(root, &allow, NULL, 0) != PGN_OK || allow == NULL)
		return;
	for (it = allow->child; it != NULL; it = it->next) {
		if (it->type == JE_STRING && rule_is_pigeon(it->str)) {
			je_drop(it);
			n++;
		}
	}
	if (n == 0 || n < allow->n)
		return;
	perms = allow->parent;
	if (perms->n == 1)
		je_drop(perms);
	else
		je_drop(allow);
}

/* ---- the merges ----------------------------------------------------- */

struct merged {
	cJSON *root; /* the result as a tree (numbers as raw text) */
	char *out;   /* its bytes; NULL if 'in' was */
	size_t outlen;
	int changed;
	size_t had; /* Pigeon's entries in the input */
};

static void
merged_release(struct merged *m)
{
	cJSON_Delete(m->root);
	free(m->out);
	memset(m, 0, sizeof(*m));
}

/*
 * Claude's idle wake in 'd': 'rewake' 1 adds it, -1 removes it, 0 keeps
 * what is there (refreshed to 'hook'). An entry already the one we
 * would write stays put.
 */
static pgn_status
add_rewake(struct je_doc *d, const char *hook, int rewake)
{
	static const char *const path[] = {"hooks", "Stop"};
	const struct je_node *hooks, *holder;
	struct je_node *ev = NULL;
	cJSON *fresh = NULL, *have;
	size_t n = 0, gone;
	pgn_status rc = PGN_OK;
	int same = 0;

	hooks = je_get(d->root, "hooks");
	if (hooks != NULL)
		ev = (struct je_node *)je_get(hooks, "Stop");
	if (ev != NULL && ev->type == JE_ARRAY)
		n = count_which(ev, PGN_SHAPE_NESTED, PIG_REWAKE, &holder);
	if (rewake < 0 || (rewake == 0 && n == 0)) {
		if (n > 0)
			(void)strip_event(ev, PGN_SHAPE_NESTED, PIG_REWAKE,
			    &gone);
		return PGN_OK;
	}
	fresh = make_rewake_entry(hook);
	if (fresh == NULL)
		return PGN_ENOMEM;
	if (n == 1) {
		have = je_to_cjson(holder);
		if (have == NULL) {
			cJSON_Delete(fresh);
			return PGN_ENOMEM;
		}
		same = cJSON_Compare(have, fresh, 1);
		cJSON_Delete(have);
	}
	if (same) {
		cJSON_Delete(fresh);
		return PGN_OK;
	}
	if (n > 0)
		(void)strip_event(ev, PGN_SHAPE_NESTED, PIG_REWAKE, &gone);
	rc = je_push(d, path, 2, fresh);
	return rc;
}

/* Install Pigeon's entries into 'd' (already shape-checked). */
static pgn_status
add_entries(pgn_host h, struct je_doc *d, const char *hook, int rewake)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	const char *keep[PGN_NEVENTS] = {NULL};
	const char *path[2] = {"hooks", NULL};
	cJSON *fresh[PGN_NEVENTS] = {NULL};
	const struct je_node *hooks, *ev, *holder;
	cJSON *have;
	pgn_status rc = PGN_ENOMEM;
	int e, same;

	for (e = 0; e < PGN_NEVENTS; e++) {
		if (hi->events[e] == NULL)
			continue;
		fresh[e] = make_entry(h, hook, (pgn_event)e);
		if (fresh[e] == NULL)
			goto out;
	}
	/* A file Pigeon fills from nothing gets Cursor's "version": 1. */
	if (d->root == NULL && hi->shape == PGN_SHAPE_FLAT) {
		rc = je_put(d, NULL, 0, "version", cJSON_CreateRaw("1"));
		if (rc != PGN_OK)
			goto out;
	}
	/*
	 * An event holding exactly one Pigeon entry, already the one we
	 * would write, keeps it where it is: a second install changes nothing
	 * even after the user reordered entries.
	 */
	hooks = je_get(d->root, "hooks");
	for (e = 0; hooks != NULL && e < PGN_NEVENTS; e++) {
		ev =
		    hi->events[e] != NULL ? je_get(hooks, hi->events[e]) : NULL;
		if (ev == NULL || count_event(ev, hi->shape, &holder) != 1)
			continue;
		have = je_to_cjson(holder);
		if (have == NULL) {
			rc = PGN_ENOMEM;
			goto out;
		}
		same = cJSON_Compare(have, fresh[e], 1);
		cJSON_Delete(have);
		if (same)
			keep[e] = hi->events[e];
	}
	if (d->root != NULL)
		(void)strip_all(d->root, hi, keep);
	for (e = 0; e < PGN_NEVENTS; e++) {
		if (keep[e] != NULL || hi->events[e] == NULL)
			continue;
		path[1] = hi->events[e];
		rc = je_push(d, path, 2, fresh[e]);
		fresh[e] = NULL;
		if (rc != PGN_OK)
			goto out;
	}
	rc = h == PGN_HOST_CLAUDE ? add_rewake(d, hook, rewake) : PGN_OK;
out:
	for (e = 0; e < PGN_NEVENTS; e++)
		cJSON_Delete(fresh[e]);
	return rc;
}

static int
hook_path_ok(const char *hook)
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

/* The tree of config text 'in' (already valid): {} when blank. */
static pgn_status
config_tree(pgn_host h, const char *in, size_t len, cJSON **root, char *errbuf,
    size_t errlen)
{
	struct je_doc d;
	pgn_status rc;

	*root = NULL;
	rc = parse_config(h, in, len, &d, errbuf, errlen);
	if (rc != PGN_OK)
		return rc;
	*root = d.root != NULL ? je_to_cjson(d.root) : cJSON_CreateObject();
	je_release(&d);
	return *root != NULL ? PGN_OK : PGN_ENOMEM;
}

/*
 * The merge behind both public functions ('hook' NULL: uninstall), as
 * text splices: every byte outside Pigeon's entries stays, and an
 * unchanged result is the input's bytes.
 */
static pgn_status
merge(pgn_host h, const char *in, size_t len, const char *hook,
    const char *word, int rewake, struct merged *m, char *errbuf, size_t errlen)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct je_doc d;
	char why[PGN_MAX_ERR];
	pgn_status rc;

	memset(m, 0, sizeof(*m));
	memset(&d, 0, sizeof(d));
	if (hi == NULL) {
		pgn_errf(errbuf, errlen, "unknown host");
		return PGN_EINVAL;
	}
	if (hook != NULL && !hook_path_ok(hook)) {
		pgn_errf(errbuf, errlen,
		    "hook '%s' is not an absolute path ending in /" HOOK_NAME,
		    hook);
		return PGN_EINVAL;
	}
	if (rewake > 0 && h != PGN_HOST_CLAUDE) {
		pgn_errf(errbuf, errlen,
		    "only Claude Code has an idle wake (--rewake), not %s",
		    hi->name);
		return PGN_EINVAL;
	}
	rc = parse_config(h, in, len, &d, errbuf, errlen);
	if (rc != PGN_OK)
		return rc;
	m->had = d.root != NULL ? count_all(d.root, hi->shape) : 0;
	if (word != NULL)
		m->had += count_rules(d.root);
	if (hook != NULL)
		rc = add_entries(h, &d, hook, rewake);
	else if (d.root != NULL)
		(void)strip_all(d.root, hi, NULL);
	/* 'word' for uninstall: take Pigeon's permission rules away too. */
	if (rc == PGN_OK && word != NULL && hook != NULL)
		rc = add_rules(&d, word, errbuf, errlen);
	else if (rc == PGN_OK && word != NULL && d.root != NULL)
		strip_rules(d.root);
	if (rc != PGN_OK)
		goto out;
	rc = je_apply(&d, PGN_MAX_CONFIG, &m->out, &m->outlen, &m->changed);
	if (rc == PGN_ETOOBIG) {
		pgn_errf(errbuf, errlen, "would grow past %d bytes",
		    PGN_MAX_CONFIG);
		goto out;
	}
	if (rc != PGN_OK)
		goto out;
	if (!m->changed && in == NULL) {
		free(m->out);
		m->out = NULL;
		m->outlen = 0;
	}
	/* What was written must read back as the host's config. */
	rc = config_tree(h, m->out, m->outlen, &m->root, why, sizeof(why));
	if (rc == PGN_EINVAL || rc == PGN_ETOOBIG) {
		pgn_errf(errbuf, errlen,
		    "would not stay valid after Pigeon's edit (%s): please report this",
		    why);
		rc = PGN_EINVAL;
	}
out:
	je_release(&d);
	if (rc != PGN_OK)
		merged_release(m);
	return rc;
}

static pgn_status
merge_public(pgn_host h, const char *in, size_t len, const char *hook,
    char **out, int *changed, char *errbuf, size_t errlen)
{
	struct merged m;
	pgn_status rc;

	*out = NULL;
	*changed = 0;
	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	rc = merge(h, in, len, hook, NULL, 0, &m, errbuf, errlen);
	if (rc != PGN_OK)
		return rc;
	*out = m.out;
	*changed = m.changed;
	m.out = NULL;
	merged_release(&m);
	return PGN_OK;
}

pgn_status
pgn_install_merge(pgn_host h, const char *in, size_t len, const char *hook,
    char **out, int *changed, char *errbuf, size_t errlen)
{
	if (hook == NULL) {
		*out = NULL;
		*changed = 0;
		pgn_errf(errbuf, errlen, "no hook path given");
		return PGN_EINVAL;
	}
	return merge_public(h, in, len, hook, out, changed, errbuf, errlen);
}

pgn_status
pgn_uninstall_merge(pgn_host h, const char *in, size_t len, char **out,
    int *changed, char *errbuf, size_t errlen)
{
	return merge_public(h, in, len, NULL, out, changed, errbuf, errlen);
}

/* ---- line diff ------------------------------------------------------ */

static pgn_status
split_lines(const char *s, size_t len, struct line **v, size_t *n)
{
	size_t cap = 0, i, start;

	*v = NULL;
	*n = 0;
	for (start = 0, i = 0; i < len; i++) {
		if (s[i] != '\n' && i + 1 < len)
			continue;
		if (!pgn_vec_grow((void **)v, &cap, *n, sizeof(**v))) {
			free(*v);
			*v = NULL;
			*n = 0;
			return PGN_ENOMEM;
		}
		(*v)[*n].p = s + start;
		(*v)[*n].n = i + 1 - start;
		(*n)++;
		start = i + 1;
	}
	return PGN_OK;
}

static int
line_eq(const struct line *a, const struct line *b)
{
	return a->n == b->n && memcmp(a->p, b->p, a->n) == 0;
}

static void
diff_line(struct pgn_buf *b, char sign, const struct line *l)
{
	pgn_buf_add(b, &sign, 1);
	pgn_buf_add(b, l->p, l->n);
	if (l->n == 0 || l->p[l->n - 1] != '\n')
		pgn_buf_adds(b, "\n\\ No newline at end of file\n");
}

/* One hunk of -U0 unified diff: old lines [ai, ai+na), new [bi, bi+nb). */
static void
diff_hunk(struct pgn_buf *b, const struct line *a, size_t ai, size_t na,
    const struct line *bl, size_t bi, size_t nb)
{
	size_t i;

	/* With a count of 0 the start names the line before the hunk. */
	pgn_buf_addf(b, "@@ -%zu,%zu +%zu,%zu @@\n", na ? ai + 1 : ai, na,
	    nb ? bi + 1 : bi, nb);
	for (i = 0; i < na; i++)
		diff_line(b, '-', &a[ai + i]);
	for (i = 0; i < nb; i++)
		diff_line(b, '+', &bl[bi + i]);
}

/*
 * A minimal line diff of 'old' and 'new' (either NULL: absent) as a
 * zero-context unified diff, "" if equal. Common head and tail are
 * trimmed first; an LCS over the rest is bounded by DIFF_MAX_CELLS,
 * past which the middle is shown as replaced whole.
 */
pgn_status
pgn_line_diff(const char *path, const char *old, size_t oldlen, const char *new,
    size_t newlen, char **out)
{
	struct line *a = NULL, *bl = NULL;
	size_t na = 0, nb = 0, pre = 0, suf = 0, ma, mb, i, j, cells, w;
	size_t hi, hj;
	uint32_t *L = NULL;
	struct pgn_buf b;
	pgn_status rc;

	*out = NULL;
	pgn_buf_init(&b, 4 * (size_t)PGN_MAX_CONFIG + 4 * PGN_MAX_PATH);
	rc = split_lines(old != NULL ? old : "", oldlen, &a, &na);
	if (rc == PGN_OK)
		rc = split_lines(new != NULL ? new : "", newlen, &bl, &nb);
	if (rc != PGN_OK)
		goto out;
	if ((old == NULL) == (new == NULL) && oldlen == newlen &&
	    (oldlen == 0 || memcmp(old, new, oldlen) == 0)) {
		*out = pgn_buf_take(&b, NULL);
		rc = *out == NULL ? PGN_ENOMEM : PGN_OK;
		goto out;
	}
	pgn_buf_addf(&b, "--- %s\n+++ %s\n", old != NULL ? path : "/dev/null",
	    new != NULL ? path : "/dev/null");
	while (pre < na && pre < nb && line_eq(&a[pre], &bl[pre]))
		pre++;
	while (suf < na - pre && suf < nb - pre &&
	    line_eq(&a[na - 1 - suf], &bl[nb - 1 - suf]))
		suf++;
	ma = na - pre - suf;
	mb = nb - pre - suf;
	if (!pgn_size_mul(ma + 1, mb + 1, &cells) || cells > DIFF_MAX_CELLS) {
		diff_hunk(&b, a, pre, ma, bl, pre, mb);
		goto take;
	}
	L = calloc(cells, sizeof(*L));
	if (L == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	/* L[i][j]: LCS length of a[pre+i..] and bl[pre+j..] (middle only). */
	w = mb + 1;
	for (i = ma; i-- > 0;)
		for (j = mb; j-- > 0;) {
			if (line_eq(&a[pre + i], &bl[pre + j]))
				L[i * w + j] = L[(i + 1) * w + j + 1] + 1;
			else if (L[(i + 1) * w + j] >= L[i * w + j + 1])
				L[i * w + j] = L[(i + 1) * w + j];
			else
				L[i * w + j] = L[i * w + j + 1];
		}
	i = 0;
	j = 0;
	while (i < ma || j < mb) {
		if (i < ma && j < mb && line_eq(&a[pre + i], &bl[pre + j])) {
			i++;
			j++;
			continue;
		}
		/* A run of changes up to the next common line. */
		hi = i;
		hj = j;
		while (i < ma || j < mb) {
			if (i < ma && j < mb &&
			    line_eq(&a[pre + i], &bl[pre + j]))
				break;
			if (j >= mb ||
			    (i < ma && L[(i + 1) * w + j] >= L[i * w + j + 1]))
				i++;
			else
				j++;
		}
		diff_hunk(&b, a, pre + hi, i - hi, bl, pre + hj, j - hj);
	}
take:
	if (b.err != PGN_OK) {
		rc = b.err;
		goto out;
	}
	*out = pgn_buf_take(&b, NULL);
	rc = *out == NULL ? PGN_ENOMEM : PGN_OK;
out:
	free(L);
	free(a);
	free(bl);
	pgn_buf_release(&b);
	return rc;
}

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

/* The config file of the request: project, env override, or $HOME. */
pgn_status
pgn_install_path(const struct pgn_install *req, char **path, char *errbuf,
    size_t errlen)
{
	const struct pgn_host_info *hi = pgn_host_get(req->host);
	const char *v;

	*path = NULL;
	if (req->project != NULL) {
		if (req->project[0] == '\0') {
			pgn_errf(errbuf, errlen, "empty project directory");
			return PGN_EINVAL;
		}
		*path = pgn_path_join(req->project, hi->project_path);
	} else if (hi->user_env != NULL && (v = getenv(hi->user_env)) != NULL &&
	    *v != '\0') {
		*path = pgn_path_join(v, hi->env_file);
	} else if ((v = getenv("HOME")) != NULL && *v != '\0') {
		*path = pgn_path_join(v, hi->user_path);
	} else {
		pgn_errf(errbuf, errlen,
		    "cannot find the %s config: HOME is not set", hi->name);
		return PGN_EINVAL;
	}
	if (*path == NULL) {
		pgn_errf(errbuf, errlen, "the %s config path is too long",
		    hi->name);
		return PGN_ETOOBIG;
	}
	return PGN_OK;
}

/*
 * True if the backup's bytes are what uninstall should bring back:
 * a valid config without Pigeon's entries, equal to 'result' once the
 * empty containers install may have filled are ignored.
 */
static int
bak_matches(pgn_host h, const char *bak, size_t baklen, const cJSON *result)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct je_doc d;
	cJSON *b = NULL, *r = NULL;
	int ok = 0;

	if (parse_config(h, bak, baklen, &d, NULL, 0) != PGN_OK)
		return 0;
	if (d.root != NULL && count_all(d.root, hi->shape) > 0)
		goto out;
	b = d.root != NULL ? je_to_cjson(d.root) : cJSON_CreateObject();
	r = cJSON_Duplicate(result, 1);
	if (b == NULL || r == NULL)
		goto out;
	canonical(b, hi->shape);
	canonical(r, hi->shape);
	ok = cJSON_Compare(b, r, 1);
out:
	je_release(&d);
	cJSON_Delete(b);
	cJSON_Delete(r);
	return ok;
}

/* ---- permissions in a file of their own (Codex, Gemini) ------------- */

#define CODEX_TOML  "config.toml"
#define CODEX_TABLE "sandbox_workspace_write"
#define CODEX_KEY   "writable_roots"
/* Pigeon's own Gemini policy file, under $HOME (decision 0073). */
#define GEMINI_POLICY "policies/pigeon.toml"
/* The first line of that file: how Pigeon knows it is its own. */
#define POLICY_MARK "# Written by pigeon install gemini"
/* A later line when install made its directory too (decision 0083). */
#define POLICY_DIR_MARK                                                         \
	"# pigeon install gemini created this directory; uninstall removes it " \
	"once empty."
/* Gemini CLI's policy tiers add to this; the docs' own example value. */
#define POLICY_PRIORITY 100

/* What a permission edit in its own file will do. */
struct perm_plan {
	char *path;   /* as shown */
	char *target; /* what is written (a symlink's target) */
	char *in;     /* current bytes, NULL if absent */
	size_t len;
	int exists;
	mode_t mode;
	char *out; /* new bytes; NULL with 'del' (remove the file) */
	size_t outlen;
	int changed, del;
	int rmdir; /* with 'del': Pigeon made the directory, remove it empty */
};

static void
perm_plan_release(struct perm_plan *p)
{
	free(p->path);
	free(p->target);
	free(p->in);
	free(p->out);
	memset(p, 0, sizeof(*p));
}

/* The permission edit of the request's host at its level (user, project). */
static pgn_perm
perm_kind(const struct pgn_install *req)
{
	return pgn_host_get(req->host)->perm[req->project != NULL];
}

/* Pigeon's state directory, resolved: the root Codex must let it write. */
static pgn_status
state_root(char **root, char *errbuf, size_t errlen)
{
	char *home = NULL;
	pgn_status rc;

	*root = NULL;
	rc = pgn_home_path(&home);
	if (rc != PGN_OK) {
		pgn_errf(errbuf, errlen,
		    "cannot find Pigeon's state directory (set PIGEON_HOME)");
		return rc;
	}
	*root = realpath(home, NULL);
	if (*root == NULL)
		*root = home;
	else
		free(home);
	return PGN_OK;
}

/* The Gemini policy Pigeon writes for CLI 'word' ('made': its dir too). */
static char *
policy_text(const char *word, int made)
{
	struct pgn_buf b;
	char cmd[RULE_MAX], *q;
	size_t k;

	pgn_buf_init(&b, 8 * RULE_MAX + 512);
	pgn_buf_adds(&b, POLICY_MARK "; pigeon uninstall gemini removes it.\n");
	if (made)
		pgn_buf_adds(&b, POLICY_DIR_MARK "\n");
	pgn_buf_adds(&b,
	    "# Lets the agent run Pigeon's send, read, wait and status.\n"
	    "[[rule]]\n"
	    "toolName = \"run_shell_command\"\n"
	    "commandPrefix = [");
	for (k = 0; k < PERM_NSUBS; k++) {
		snprintf(cmd, sizeof(cmd), "%s %s", word, perm_subs[k]);
		q = te_quote(cmd);
		if (q == NULL) {
			pgn_buf_release(&b);
			return NULL;
		}
		pgn_buf_addf(&b, "%s%s", k > 0 ? ", " : "", q);
		free(q);
	}
	pgn_buf_addf(&b, "]\ndecision = \"allow\"\npriority = %d\n",
	    POLICY_PRIORITY);
	return pgn_buf_take(&b, NULL);
}

/* Is 'line' one of the lines of 'text'? */
static int
has_line(const char *text, size_t len, const char *line)
{
	size_t k = strlen(line);
	const char *p = text, *end = text + len;

	while (p != NULL && p + k <= end) {
		if (memcmp(p, line, k) == 0 && (p + k == end || p[k] == '\n'))
			return 1;
		p = memchr(p, '\n', (size_t)(end - p));
		if (p != NULL)
			p++;
	}
	return 0;
}

/* Does the directory of file 'path' exist? */
static int
dir_exists(const char *path)
{
	struct stat sb;
	char *dir = pgn_path_dir(path);
	int yes;

	yes = dir != NULL && stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
	free(dir);
	return yes;
}

/* Read the plan's file, following a symlink to its target. */
static pgn_status
plan_read(struct perm_plan *p, char *errbuf, size_t errlen)
{
	struct stat sb;

	if (lstat(p->path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		p->target = realpath(p->path, NULL);
		if (p->target == NULL) {
			pgn_errf(errbuf, errlen,
			    "'%s' is a symbolic link that cannot be followed (%s): left untouched",
			    p->path, strerror(errno));
			return PGN_EIO;
		}
	} else {
		p->target = pgn_strdup(p->path);
		if (p->target == NULL)
			return PGN_ENOMEM;
	}
	p->mode = 0600;
	return pgn_read_file(p->target, PGN_MAX_CONFIG, &p->in, &p->len,
	    &p->exists, &p->mode, errbuf, errlen);
}

/*
 * Plan the permission edit of a host whose edit is a file of its own
 * ('hooks_path' is the hooks config, beside which Codex's config.toml
 * lives). '*what' gets one line saying what it is. Nothing is written.
 */
static pgn_status
perm_plan_make(const struct pgn_install *req, const char *hooks_path,
    struct perm_plan *p, char **what, char *errbuf, size_t errlen)
{
	char word[WORD_MAX], why[PGN_MAX_ERR];
	char *root = NULL, *dir = NULL, *text = NULL, *q = NULL;
	const char *v;
	struct pgn_buf b;
	pgn_status rc = PGN_ENOMEM;
	int made;

	memset(p, 0, sizeof(*p));
	*what = NULL;
	pgn_buf_init(&b, 4 * PGN_MAX_PATH);
	if (perm_kind(req) == PGN_PERM_ROOT) {
		rc = state_root(&root, errbuf, errlen);
		if (rc != PGN_OK)
			goto out;
		rc = PGN_ENOMEM;
		dir = pgn_path_dir(hooks_path);
		p->path = dir != NULL ? pgn_path_join(dir, CODEX_TOML) : NULL;
		q = te_quote(root);
		if (p->path == NULL || q == NULL)
			goto out;
		pgn_buf_addf(&b, "[%s] %s holds %s in %s", CODEX_TABLE,
		    CODEX_KEY, q, p->path);
		rc = plan_read(p, errbuf, errlen);
		if (rc != PGN_OK)
			goto out;
		rc = te_array_edit(p->in, p->len, CODEX_TABLE, CODEX_KEY, root,
		    !req->remove, PGN_MAX_CONFIG, &p->out, &p->outlen,
		    &p->changed, why, sizeof(why));
		if (rc == PGN_EINVAL || rc == PGN_ETOOBIG) {
			pgn_errf(errbuf, errlen,
			    "'%s' %s: left untouched; fix it, or pass --no-permissions",
			    p->path, why);
			goto out;
		}
		if (rc != PGN_OK)
			goto out;
		/* Nothing left of a file the add created: it goes. */
		p->del = req->remove && p->changed && p->outlen == 0;
		if (!p->exists && !p->changed) {
			free(p->out);
			p->out = NULL;
		}
	} else {
		v = getenv("HOME");
		if (v == NULL || *v == '\0') {
			pgn_errf(errbuf, errlen,
			    "cannot find the gemini policy directory: HOME is not set");
			rc = PGN_EINVAL;
			goto out;
		}
		p->path = pgn_path_join(v, ".gemini/" GEMINI_POLICY);
		if (p->path == NULL)
			goto out;
		rc = plan_read(p, errbuf, errlen);
		if (rc != PGN_OK)
			goto out;
		rc = PGN_ENOMEM;
		hook_pigeon_word(req->hook != NULL ? req->hook : "", word,
		    sizeof(word));
		if (req->remove)
			pgn_buf_addf(&b, "Pigeon's policy %s", p->path);
		else
			pgn_buf_addf(&b,
			    "the policy %s allows run_shell_command for %s send|read|wait|status",
			    p->path, word);
		if (p->exists &&
		    (p->len < strlen(POLICY_MARK) ||
		        memcmp(p->in, POLICY_MARK, strlen(POLICY_MARK)) != 0)) {
			if (req->remove)
				goto done; /* not Pigeon's: nothing to remove */
			pgn_errf(errbuf, errlen,
			    "'%s' exists and is not Pigeon's: left untouched; move it away, or pass --no-permissions",
			    p->path);
			rc = PGN_EINVAL;
			goto out;
		}
		/* Did install make the directory? Then the file says so. */
		made = p->exists ? has_line(p->in, p->len, POLICY_DIR_MARK) :
		                   !dir_exists(p->target);
		if (req->remove) {
			p->del = p->changed = p->exists;
			p->rmdir = p->exists && made;
			goto done;
		}
		text = policy_text(word, made);
		if (text == NULL)
			goto out;
		p->changed = !p->exists || p->len != strlen(text) ||
		    memcmp(p->in, text, p->len) != 0;
		p->outlen = strlen(text);
		p->out = text;
		text = NULL;
		p->mode = p->exists ? p->mode : 0644;
	}
done:
	*what = pgn_buf_take(&b, NULL);
	rc = *what != NULL ? PGN_OK : PGN_ENOMEM;
out:
	if (rc != PGN_OK)
		perm_plan_release(p);
	pgn_buf_release(&b);
	free(root);
	free(dir);
	free(text);
	free(q);
	return rc;
}

/* Carry out a plan made by perm_plan_make. */
static pgn_status
perm_plan_write(const struct perm_plan *p, char *errbuf, size_t errlen)
{
	char *dir, *up;
	pgn_status rc;

	if (!p->changed)
		return PGN_OK;
	dir = pgn_path_dir(p->target);
	if (dir == NULL)
		return PGN_ENOMEM;
	if (p->del) {
		rc = PGN_OK;
		if (unlink(p->target) != 0) {
			pgn_errf(errbuf, errlen, "cannot remove '%s': %s",
			    p->target, strerror(errno));
			rc = PGN_EIO;
		} else {
			(void)pgn_fsync_dir(dir);
		}
		/* Only an empty one: anything the user put there stays. */
		if (rc == PGN_OK && p->rmdir && rmdir(dir) == 0) {
			up = pgn_path_dir(dir);
			if (up != NULL)
				(void)pgn_fsync_dir(up);
			free(up);
		}
		free(dir);
		return rc;
	}
	rc = pgn_mkdir_p(dir, 0755, errbuf, errlen);
	if (rc == PGN_OK)
		rc = pgn_write_atomic(p->target, p->out, p->outlen, p->mode,
		    errbuf, errlen);
	free(dir);
	return rc;
}

/*
 * What the permission edit of 'req' is, in res->perm_what; '*own_file'
 * 1 when it is a file of its own (Codex, Gemini user) to plan.
 */
static pgn_status
perm_describe(const struct pgn_install *req, struct pgn_install_result *res,
    const char *word, int *own_file, char *errbuf, size_t errlen)
{
	const struct pgn_host_info *hi;
	struct pgn_buf b;

	*own_file = 0;
	pgn_buf_init(&b, 4 * PGN_MAX_PATH);
	switch (perm_kind(req)) {
	case PGN_PERM_RULES:
		pgn_buf_addf(&b,
		    "permissions.allow holds Bash(%s send:*) and the same for read, wait, status in %s",
		    req->remove ? "pigeon" : word, res->path);
		if (req->remove) {
			pgn_buf_reset(&b);
			pgn_buf_addf(&b,
			    "Pigeon's Bash(... pigeon send|read|wait|status:*) rules in permissions.allow of %s",
			    res->path);
		}
		break;
	case PGN_PERM_ROOT:
	case PGN_PERM_POLICY:
		*own_file = 1;
		break;
	case PGN_PERM_NONE:
		hi = pgn_host_get(req->host);
		pgn_buf_adds(&b,
		    hi->perm_none[req->project != NULL] != NULL ?
		        hi->perm_none[req->project != NULL] :
		        "none");
		break;
	}
	(void)errbuf;
	(void)errlen;
	if (*own_file) {
		pgn_buf_release(&b);
		return PGN_OK;
	}
	res->perm_what = pgn_buf_take(&b, NULL);
	return res->perm_what != NULL ? PGN_OK : PGN_ENOMEM;
}

enum action {
	ACT_NONE,
	ACT_WRITE,   /* write the merged content */
	ACT_RESTORE, /* write the .bak bytes back, remove the .bak */
	ACT_DELETE   /* remove the file Pigeon created */
};

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

pgn_status
pgn_install_apply(const struct pgn_install *req, struct pgn_install_result *res,
    char *errbuf, size_t errlen)
{
	const struct pgn_host_info *hi;
	struct merged m = {0};
	struct stat sb;
	char *target = NULL, *bakpath = NULL, *in = NULL, *bak = NULL;
	char *dir = NULL;
	const char *newdata;
	size_t len = 0, baklen = 0, newlen;
	mode_t mode = 0644, bakmode = 0644;
	int exists = 0, bakexists = 0, nlinks = 1;
	enum action act = ACT_NONE;
	char why[PGN_MAX_ERR], word[WORD_MAX] = PIGEON_NAME;
	struct perm_plan plan = {0};
	int own_file = 0, rules;
	pgn_status rc;

	memset(res, 0, sizeof(*res));
	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	hi = pgn_host_get(req->host);
	if (hi == NULL) {
		pgn_errf(errbuf, errlen, "unknown host");
		return PGN_EINVAL;
	}
	if (hi->mechanism != PGN_MECH_COMMAND &&
	    hi->mechanism != PGN_MECH_PLUGIN) {
		pgn_errf(errbuf, errlen,
		    "%s runs no hook: Pigeon cannot install into it", hi->name);
		return PGN_EINVAL;
	}
	if (!req->remove && !hook_path_ok(req->hook)) {
		pgn_errf(errbuf, errlen,
		    "hook '%s' is not an absolute path ending in /" HOOK_NAME,
		    req->hook != NULL ? req->hook : "");
		return PGN_EINVAL;
	}
	if (hi->mechanism == PGN_MECH_PLUGIN) {
		rc = pgn_plugin_apply(req, res, errbuf, errlen);
		if (rc == PGN_OK && req->permissions)
			rc = perm_describe(req, res, word, &own_file, errbuf,
			    errlen);
		goto out;
	}
	rc = pgn_install_path(req, &res->path, errbuf, errlen);
	if (rc != PGN_OK)
		goto out;
	/* A symlinked config (dotfiles) stays a link: edit its target. */
	rc = PGN_ENOMEM;
	if (lstat(res->path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		target = realpath(res->path, NULL);
		if (target == NULL) {
			pgn_errf(errbuf, errlen,
			    "'%s' is a symbolic link that cannot be followed (%s): left untouched",
			    res->path, strerror(errno));
			rc = PGN_EIO;
			goto out;
		}
	} else {
		target = pgn_strdup(res->path);
	}
	if (target == NULL)
		goto out;
	bakpath = side_path(target, BAK_SUFFIX);
	if (bakpath == NULL) {
		pgn_errf(errbuf, errlen, "the %s config path is too long",
		    hi->name);
		rc = PGN_ETOOBIG;
		goto out;
	}
	rc = pgn_read_file(target, PGN_MAX_CONFIG, &in, &len, &exists, &mode,
	    errbuf, errlen);
	if (rc != PGN_OK)
		goto out;
	if (exists && stat(target, &sb) == 0 && sb.st_nlink > 1)
		nlinks = (int)(sb.st_nlink > 2 ? 2 : sb.st_nlink);
	rules = req->permissions && perm_kind(req) == PGN_PERM_RULES;
	if (rules && !req->remove)
		hook_pigeon_word(req->hook, word, sizeof(word));
	rc = merge(req->host, exists ? in : NULL, len,
	    req->remove ? NULL : req->hook, rules ? word : NULL, req->rewake,
	    &m, why, sizeof(why));
	if (rc == PGN_EINVAL || rc == PGN_ETOOBIG) {
		pgn_errf(errbuf, errlen,
		    "'%s' %s: left untouched; fix or move it", res->path, why);
		goto out;
	}
	if (rc != PGN_OK)
		goto out;
	if (!req->remove && hi->trust_note[req->project != NULL] != NULL) {
		res->note = pgn_strdup(hi->trust_note[req->project != NULL]);
		if (res->note == NULL) {
			rc = PGN_ENOMEM;
			goto out;
		}
	}
	res->changed = m.changed;
	if (m.changed && !req->remove) {
		act = ACT_WRITE;
	} else if (m.changed) {
		rc = pgn_read_file(bakpath, PGN_MAX_CONFIG, &bak, &baklen,
		    &bakexists, &bakmode, why, sizeof(why));
		if (rc == PGN_ENOMEM)
			goto out;
		if (rc != PGN_OK) {
			/* An unreadable backup is kept, never restored. */
			bakexists = 1;
			rc = PGN_OK;
		}
		if (bak != NULL && bak_matches(req->host, bak, baklen, m.root))
			act = ACT_RESTORE;
		else if (!bakexists && nlinks == 1 &&
		    is_skeleton(m.root, hi->shape))
			act = ACT_DELETE;
		else
			act = ACT_WRITE;
	}
	newdata = act == ACT_RESTORE  ? bak :
	    act == ACT_DELETE         ? NULL :
	    act == ACT_NONE && exists ? in :
	                                m.out;
	newlen = act == ACT_RESTORE ? baklen :
	    act == ACT_DELETE       ? 0 :
	    act == ACT_NONE         ? len :
	                              m.outlen;
	rc = pgn_line_diff(res->path, exists ? in : NULL, len, newdata, newlen,
	    &res->diff);
	if (rc != PGN_OK)
		goto out;
	/* The permission edit is planned, and refused, before any write. */
	if (req->permissions) {
		rc = perm_describe(req, res, word, &own_file, errbuf, errlen);
		if (rc != PGN_OK)
			goto out;
	}
	if (own_file) {
		free(res->perm_what);
		res->perm_what = NULL;
		rc = perm_plan_make(req, res->path, &plan, &res->perm_what,
		    errbuf, errlen);
		if (rc != PGN_OK)
			goto out;
		rc = pgn_line_diff(plan.path, plan.exists ? plan.in : NULL,
		    plan.len,
		    plan.del         ? NULL :
		        plan.changed ? plan.out :
		                       plan.in,
		    plan.del         ? 0 :
		        plan.changed ? plan.outlen :
		                       plan.len,
		    &res->perm_diff);
		res->perm_path = pgn_strdup(plan.path);
		if (rc == PGN_OK && res->perm_path == NULL)
			rc = PGN_ENOMEM;
		if (rc != PGN_OK)
			goto out;
		res->perm_changed = plan.changed;
	}
	if (req->dry_run)
		goto out;

	switch (act) {
	case ACT_WRITE:
		if (!exists) {
			dir = pgn_path_dir(target);
			if (dir == NULL) {
				rc = PGN_ENOMEM;
				goto out;
			}
			rc = pgn_mkdir_p(dir, 0755, errbuf, errlen);
			if (rc != PGN_OK)
				goto out;
		}
		/*
		 * Only the first original is kept: the file as it was before
		 * any Pigeon entry; a backup is never replaced.
		 */
		if (!req->remove && exists && m.had == 0 &&
		    access(bakpath, F_OK) != 0) {
			rc = pgn_write_atomic(bakpath, in, len, mode, errbuf,
			    errlen);
			if (rc != PGN_OK)
				goto out;
		}
		rc = pgn_write_linked(target, nlinks, m.out, m.outlen, in, len,
		    mode, errbuf, errlen);
		break;
	case ACT_RESTORE:
		rc = pgn_write_linked(target, nlinks, bak, baklen, in, len,
		    mode, errbuf, errlen);
		if (rc != PGN_OK)
			goto out;
		if (unlink(bakpath) != 0) {
			pgn_errf(errbuf, errlen, "cannot remove '%s': %s",
			    bakpath, strerror(errno));
			rc = PGN_EIO;
			goto out;
		}
		dir = pgn_path_dir(target);
		if (dir != NULL)
			(void)pgn_fsync_dir(dir);
		break;
	case ACT_DELETE:
		if (unlink(target) != 0) {
			pgn_errf(errbuf, errlen, "cannot remove '%s': %s",
			    target, strerror(errno));
			rc = PGN_EIO;
			goto out;
		}
		dir = pgn_path_dir(target);
		if (dir != NULL)
			(void)pgn_fsync_dir(dir);
		break;
	case ACT_NONE:
		break;
	}
	if (rc != PGN_OK || !own_file)
		goto out;
	rc = perm_plan_write(&plan, why, sizeof(why));
	if (rc != PGN_OK)
		pgn_errf(errbuf, errlen,
		    "Pigeon's hooks are %s '%s', but the permission edit failed: %s; run the command again, or pass --no-permissions",
		    req->remove ? "removed from" : "in", res->path, why);
out:
	if (rc == PGN_ENOMEM && errbuf != NULL && errlen > 0 &&
	    errbuf[0] == '\0')
		pgn_errf(errbuf, errlen, "out of memory");
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
	perm_plan_release(&plan);
	merged_release(&m);
	free(target);
	free(bakpath);
	free(in);
	free(bak);
	free(dir);
	return rc;
}

/* ---- inspect (pigeon doctor) ---------------------------------------- */

void
pgn_install_state_release(struct pgn_install_state *s)
{
	if (s == NULL)
		return;
	free(s->path);
	free(s->problem);
	free(s->hook);
	free(s->perm_path);
	free(s->perm_problem);
	memset(s, 0, sizeof(*s));
}

/*
 * The permission edit of Codex (writable root) and Gemini (policy
 * file) for doctor: s->perm 1 if in place, 0 if not; a file that
 * cannot be read in s->perm_problem.
 */
static pgn_status
perm_inspect(struct pgn_install *req, struct pgn_install_state *s)
{
	struct perm_plan p;
	char err[PGN_MAX_ERR] = "", *what = NULL;
	pgn_status rc;

	if (s->path == NULL || perm_kind(req) == PGN_PERM_NONE ||
	    perm_kind(req) == PGN_PERM_RULES)
		return PGN_OK;
	/* What install would change: nothing means it is in place. */
	req->remove = 0;
	req->hook = s->hook;
	rc = perm_plan_make(req, s->path, &p, &what, err, sizeof(err));
	if (rc == PGN_ENOMEM)
		return rc;
	if (rc == PGN_OK) {
		s->perm = !p.changed;
		s->perm_path = pgn_strdup(p.path);
	} else {
		s->perm = 0;
		s->perm_problem = pgn_strdup(err);
	}
	perm_plan_release(&p);
	free(what);
	return PGN_OK;
}

pgn_status
pgn_install_inspect(pgn_host h, const char *project,
    struct pgn_install_state *s)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_install req;
	struct je_doc d;
	char err[PGN_MAX_ERR] = "";
	const struct je_node *hooks, *holder, *hs, *hd;
	char *data = NULL;
	size_t len = 0;
	mode_t mode = 0;
	pgn_status rc;
	int e, rules;

	memset(s, 0, sizeof(*s));
	memset(&d, 0, sizeof(d));
	if (hi != NULL && hi->mechanism == PGN_MECH_PLUGIN)
		return pgn_plugin_inspect(h, project, s);
	if (hi == NULL || hi->mechanism != PGN_MECH_COMMAND)
		return PGN_EINVAL;
	memset(&req, 0, sizeof(req));
	req.host = h;
	req.project = project;
	rules = perm_kind(&req) == PGN_PERM_RULES;
	s->perm = rules ? 0 : -1;
	rc = pgn_install_path(&req, &s->path, err, sizeof(err));
	if (rc != PGN_OK)
		goto problem;
	rc = pgn_read_file(s->path, PGN_MAX_CONFIG, &data, &len, &s->exists,
	    &mode, err, sizeof(err));
	if (rc != PGN_OK || !s->exists)
		goto problem;
	rc = parse_config(h, data, len, &d, err, sizeof(err));
	if (rc != PGN_OK)
		goto problem;
	hooks = je_get(d.root, "hooks");
	if (h == PGN_HOST_CLAUDE && hooks != NULL)
		s->rewake = count_which(je_get(hooks, "Stop"), hi->shape,
		    PIG_REWAKE, &holder);
	for (e = 0; e < PGN_NEVENTS && hooks != NULL; e++) {
		if (hi->events[e] == NULL)
			continue;
		s->entries[e] = count_event(je_get(hooks, hi->events[e]),
		    hi->shape, &holder);
		if (holder == NULL || s->hook != NULL)
			continue;
		/* The program of the first Pigeon command found. */
		if (hi->shape == PGN_SHAPE_FLAT) {
			s->hook =
			    pgn_command_hook(je_get(holder, "command")->str);
			continue;
		}
		hs = je_get(holder, "hooks");
		for (hd = hs->child; hd != NULL; hd = hd->next) {
			if (handler_is_pigeon(hd)) {
				s->hook = pgn_command_hook(
				    je_get(hd, "command")->str);
				break;
			}
		}
	}
	if (rules) {
		s->perm_path = pgn_strdup(s->path);
		s->perm = count_rules(d.root) >= PERM_NSUBS;
		rc = s->perm_path != NULL ? PGN_OK : PGN_ENOMEM;
		goto out;
	}
	rc = PGN_OK;
	goto out;
problem:
	if (err[0] != '\0') {
		s->problem = pgn_strdup(err);
		rc = s->problem == NULL ? PGN_ENOMEM : PGN_OK;
	}
out:
	if (rc == PGN_OK && !rules)
		rc = perm_inspect(&req, s);
	je_release(&d);
	free(data);
	return rc;
}
