/*
 * Fuzz the install and uninstall merges of every host's settings file.
 * For each host, on the same bytes:
 *   - install and uninstall agree on what is a valid config;
 *   - an unchanged result is the input, byte for byte;
 *   - install's output is JSON holding exactly one Pigeon command per
 *     event of the host, and installing again changes nothing;
 *   - uninstall (of the input, or of install's output) leaves no Pigeon
 *     command anywhere a host runs commands from, and is idempotent;
 *   - uninstall after install gives what uninstall alone gives, up to
 *     empty containers (install is reversible);
 *   - on a config with no Pigeon entry and no empty container for
 *     install to fill, uninstall after install gives the input back
 *     byte for byte (every byte outside Pigeon's entries is kept).
 * Configs are read with Pigeon's own parser (comments for Gemini).
 * "Anywhere" counts duplicate keys too: a host's JSON parser may take
 * the last of them where cJSON takes the first.
 */

#include <cjson/cJSON.h>

#include "fuzz.h"

#include "pigeon/pigeon.h"
#include "pigeon/setup.h"

#include "jsonedit.h"

static const char *const hooks[] = {
    "/usr/local/bin/pigeon-hook",
    "/opt/my tools/pigeon-hook",
    "/home/o'neil/bin/pigeon-hook",
};

static int
is_named(const cJSON *x, const char *name)
{
	return x->string != NULL && strcmp(x->string, name) == 0;
}

/* Pigeon commands among the "command" members of handler 'x'. */
static size_t
handler_count(const cJSON *x)
{
	const cJSON *c;
	size_t n = 0;

	if (!cJSON_IsObject(x))
		return 0;
	cJSON_ArrayForEach(c, x) if (is_named(c, "command") &&
	    cJSON_IsString(c) && pgn_command_is_pigeon(c->valuestring)) n++;
	return n;
}

/*
 * Pigeon commands in event arrays named 'event' (NULL: any) under every
 * top-level "hooks" object, in the host's shape.
 */
static size_t
count(const cJSON *root, pgn_config_shape shape, const char *event)
{
	const cJSON *hk, *ev, *it, *hs, *hd;
	size_t n = 0;

	cJSON_ArrayForEach(hk, root)
	{
		if (!is_named(hk, "hooks") || !cJSON_IsObject(hk))
			continue;
		cJSON_ArrayForEach(ev, hk)
		{
			if (!cJSON_IsArray(ev) ||
			    (event != NULL && !is_named(ev, event)))
				continue;
			cJSON_ArrayForEach(it, ev)
			{
				if (shape == PGN_SHAPE_FLAT) {
					n += handler_count(it);
					continue;
				}
				if (!cJSON_IsObject(it))
					continue;
				cJSON_ArrayForEach(hs, it)
				{
					if (!is_named(hs, "hooks") ||
					    !cJSON_IsArray(hs))
						continue;
					cJSON_ArrayForEach(hd, hs) n +=
					    handler_count(hd);
				}
			}
		}
	}
	return n;
}

static pgn_host cur_host;

/* Parse as the merges do; numbers stay raw text. */
static cJSON *
parse(const char *s, size_t len)
{
	struct je_doc d;
	struct pgn_err err;
	cJSON *root;

	check(s != NULL && strlen(s) == len);
	check(je_parse(&d, s, len, pgn_host_get(cur_host)->json_comments,
	          &err) == PGN_OK);
	check(d.root != NULL);
	root = je_to_cjson(d.root);
	je_release(&d);
	check(root != NULL && cJSON_IsObject(root));
	return root;
}

/* True if install may fill an empty container 'root' holds. */
static int
fills_empty(const cJSON *root, const struct pgn_host_info *hi)
{
	const cJSON *hk, *ev;
	int e;

	if (root->child == NULL)
		return 1;
	hk = cJSON_GetObjectItemCaseSensitive(root, "hooks");
	if (cJSON_IsObject(hk) && hk->child == NULL)
		return 1;
	for (e = 0; e < PGN_NEVENTS; e++) {
		if (hi->events[e] == NULL)
			continue;
		ev = cJSON_GetObjectItemCaseSensitive(hk, hi->events[e]);
		if (cJSON_IsArray(ev) && ev->child == NULL)
			return 1;
	}
	return 0;
}

/* Drop empty groups, event arrays and "hooks" objects (for comparing). */
static void
prune(cJSON *root)
{
	cJSON *hk, *hknext, *ev, *evnext, *it, *next, *hs;

	for (hk = root->child; hk != NULL; hk = hknext) {
		hknext = hk->next;
		if (!is_named(hk, "hooks") || !cJSON_IsObject(hk))
			continue;
		for (ev = hk->child; ev != NULL; ev = evnext) {
			evnext = ev->next;
			if (!cJSON_IsArray(ev))
				continue;
			for (it = ev->child; it != NULL; it = next) {
				next = it->next;
				hs = cJSON_GetObjectItemCaseSensitive(it,
				    "hooks");
				if (cJSON_IsArray(hs) && hs->child == NULL)
					cJSON_Delete(
					    cJSON_DetachItemViaPointer(ev, it));
			}
			if (ev->child == NULL)
				cJSON_Delete(
				    cJSON_DetachItemViaPointer(hk, ev));
		}
		if (hk->child == NULL)
			cJSON_Delete(cJSON_DetachItemViaPointer(root, hk));
	}
}

/* Blank as the merges see it: a BOM, then only white space. */
static int
blank(const char *s, size_t len)
{
	size_t i = 0;

	if (len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	for (; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return 0;
	return 1;
}

/* Uninstall 'in' (valid): no Pigeon command left; a second run is a no-op. */
static char *
uninstall(pgn_host h, const char *in, size_t len, pgn_config_shape shape)
{
	struct pgn_err err;
	char *out = NULL, *again = NULL;
	cJSON *root;
	int changed;

	check(pgn_uninstall_merge(h, in, len, &out, &changed, &err) == PGN_OK);
	check(out != NULL);
	if (!changed)
		check(strlen(out) == len && memcmp(out, in, len) == 0);
	if (!blank(out, strlen(out))) {
		root = parse(out, strlen(out));
		check(count(root, shape, NULL) == 0);
		cJSON_Delete(root);
	}
	check(pgn_uninstall_merge(h, out, strlen(out), &again, &changed,
	          &err) == PGN_OK);
	check(!changed && again != NULL && strcmp(again, out) == 0);
	free(again);
	return out;
}

static void
fuzz_host(pgn_host h, const char *in, size_t len, const char *hook)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_err err, err2;
	char *out = NULL, *again = NULL, *un = NULL, *un2 = NULL;
	cJSON *root, *a, *b;
	pgn_status st, st2;
	int changed, e, pristine;

	st = pgn_install_merge(h, in, len, hook, &out, &changed, &err);
	st2 = pgn_uninstall_merge(h, in, len, &un, &changed, &err2);
	check(st == PGN_OK || st == PGN_EINVAL || st == PGN_ETOOBIG);
	check((st == PGN_EINVAL) == (st2 == PGN_EINVAL));
	pristine = st2 == PGN_OK && !changed;
	free(un);
	if (st != PGN_OK) {
		check(out == NULL && err.msg[0] != '\0');
		return;
	}
	/* Install's output: JSON, one Pigeon command per event. */
	check(out != NULL);
	root = parse(out, strlen(out));
	for (e = 0; e < PGN_NEVENTS; e++)
		if (hi->events[e] != NULL)
			check(count(root, hi->shape, hi->events[e]) == 1);
	check(count(root, hi->shape, NULL) == (size_t)pgn_host_nevents(h));
	cJSON_Delete(root);
	/* Installing again changes nothing, down to the bytes. */
	check(pgn_install_merge(h, out, strlen(out), hook, &again, &changed,
	          &err) == PGN_OK);
	check(!changed && again != NULL && strcmp(again, out) == 0);
	free(again);
	/* Uninstall removes every Pigeon command, from both. */
	un = uninstall(h, out, strlen(out), hi->shape);
	un2 = uninstall(h, in, len, hi->shape);
	/* Exact: a file without Pigeon's entries comes back byte for byte. */
	if (pristine && !blank(in, len)) {
		a = parse(in, len);
		if (!fills_empty(a, hi))
			check(strlen(un) == len && memcmp(un, in, len) == 0);
		cJSON_Delete(a);
	}
	/* Reversible: the same tree as uninstall alone, up to empties. */
	if (!blank(in, len)) {
		a = parse(un, strlen(un));
		b = parse(un2, strlen(un2));
		prune(a);
		prune(b);
		check(cJSON_Compare(a, b, 1));
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	free(un);
	free(un2);
	free(out);
}

/* The command recogniser on the raw bytes. */
static void
fuzz_command(const char *s)
{
	char *hook = pgn_command_hook(s);
	const char *base;

	check(pgn_command_is_pigeon(s) == (hook != NULL));
	if (hook != NULL) {
		base = strrchr(hook, '/');
		base = base != NULL ? base + 1 : hook;
		check(strcmp(base, "pigeon-hook") == 0);
	}
	free(hook);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in;
	int h;

	if (size > 64 * 1024)
		return 0;
	in = fuzz_cstr(data, size);
	if (in == NULL)
		return 0;
	fuzz_command(in);
	for (h = 0; h < PGN_NHOSTS; h++) {
		if (pgn_host_get((pgn_host)h)->mechanism != PGN_MECH_COMMAND)
			continue;
		cur_host = (pgn_host)h;
		fuzz_host((pgn_host)h, in, size,
		    hooks[(size + (size_t)h) %
		        (sizeof(hooks) / sizeof(hooks[0]))]);
	}
	free(in);
	return 0;
}
