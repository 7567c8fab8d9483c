/*
 * Fuzz the TOML editor behind Codex's writable_roots (tomledit.c).
 * On any bytes, for a few roots:
 *   - add and has agree on what is editable TOML, and never crash;
 *   - an unchanged result is the input, byte for byte;
 *   - after an add the root is there, and adding again changes nothing;
 *   - when the root was not there, removing it after the add gives the
 *     input back byte for byte (add then remove is the identity);
 *   - a remove never leaves invalid TOML and never grows the text;
 *   - only a file the add created is to go after the remove.
 */

#include "fuzz.h"

#include "pigeon/pigeon.h"

#include "tomledit.h"

#define TABLE "sandbox_workspace_write"
#define KEY   "writable_roots"
#define MAX   (1 << 16)

static const char *const roots[] = {
    "/home/u/.local/state/pigeon",
    "/tmp/a \"b\"\\c",
    "/",
};

static int
same(const char *a, size_t alen, const char *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* Does [s, s+len) hold the string 'w'? */
static int
holds(const char *s, size_t len, const char *w)
{
	size_t i, n = strlen(w);

	for (i = 0; i + n <= len; i++)
		if (memcmp(s + i, w, n) == 0)
			return 1;
	return 0;
}

static void
one(const char *in, size_t len, const char *root)
{
	struct pgn_err err;
	char *out = NULL, *again = NULL, *back = NULL;
	size_t outlen = 0, againlen = 0, backlen = 0;
	int changed = 0, has = 0, had = 0, gone = 0;
	pgn_status rc, hrc;

	hrc = te_array_has(in, len, TABLE, KEY, root, &had, &err);
	rc = te_array_edit(in, len, TABLE, KEY, root, 1, MAX, &out, &outlen,
	    &changed, NULL, &err);
	check(rc != PGN_ENOMEM);
	check((rc == PGN_EINVAL) == (hrc == PGN_EINVAL));
	if (rc != PGN_OK)
		return;
	check(out != NULL);
	check(changed == !had);
	if (!changed)
		check(same(out, outlen, in, len));
	check(
	    te_array_has(out, outlen, TABLE, KEY, root, &has, &err) == PGN_OK &&
	    has);
	check(te_array_edit(out, outlen, TABLE, KEY, root, 1, MAX, &again,
	          &againlen, &changed, NULL, &err) == PGN_OK);
	check(!changed && same(again, againlen, out, outlen));
	/*
	 * What Pigeon added it can always take back. An element the user
	 * wrote alike (had) is Pigeon's to remove too (decision 0073), but
	 * where no splice keeps the file valid the edit is refused, the
	 * file untouched: never a broken file.
	 */
	rc = te_array_edit(out, outlen, TABLE, KEY, root, 0, MAX, &back,
	    &backlen, &changed, &gone, &err);
	check(rc == PGN_OK || (had && rc == PGN_EINVAL && back == NULL));
	if (rc != PGN_OK) {
		free(out);
		free(again);
		return;
	}
	check(changed && backlen < outlen);
	/* A file that was there never goes (only one the add created). */
	check(!gone || backlen == 0);
	if (!holds(in, len, TE_MARK))
		check(!gone);
	/*
	 * Remove gives the input back — unless the input already holds
	 * Pigeon's mark: a line that says it was added by pigeon install is
	 * Pigeon's to remove, whoever wrote it (decision 0073).
	 */
	if (!had && !holds(in, len, TE_MARK))
		check(same(back, backlen, in, len));
	free(out);
	free(again);
	free(back);
}

/* An absent file: the add creates it, the removal says it goes. */
static void
absent_file(const char *root)
{
	struct pgn_err err;
	char *out = NULL, *back = NULL;
	size_t outlen = 0, backlen = 0;
	int changed = 0, gone = 0;

	check(te_array_edit(NULL, 0, TABLE, KEY, root, 1, MAX, &out, &outlen,
	          &changed, &gone, &err) == PGN_OK);
	check(changed && !gone && outlen > 0);
	check(te_array_edit(out, outlen, TABLE, KEY, root, 0, MAX, &back,
	          &backlen, &changed, &gone, &err) == PGN_OK);
	check(changed && gone && backlen == 0);
	free(out);
	free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t i;

	if (size > MAX / 2)
		return 0;
	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		one((const char *)data, size, roots[i]);
		if (size == 0)
			absent_file(roots[i]);
	}
	return 0;
}
