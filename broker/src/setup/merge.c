/*
 * The pure install/uninstall merges over a config's bytes: walking a
 * config for Pigeon's entries, parsing it strictly, and the text
 * splices that add or strip them (docs/decisions/0151).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "setup_int.h"
#include "pigeon/setup.h"

/* ---- walking a config ----------------------------------------------- */

/* A Pigeon command that ends in the idle wake's flag. */
static int
command_is_rewake(const char *cmd)
{
	size_t n = strlen(cmd), k = sizeof(REWAKE_FLAG) - 1;

	while (n > 0 && ins_is_blank(cmd[n - 1]))
		n--;
	return n > k && ins_is_blank(cmd[n - k - 1]) &&
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

int
ins_handler_is_pigeon(const struct je_node *x)
{
	return handler_is(x, PIG_ORDINARY);
}

/*
 * Count Pigeon's entries in event array 'arr' ('*holder' gets the item,
 * flat definition or nested group, holding the last one).
 */
size_t
ins_count_which(const struct je_node *arr, pgn_config_shape shape,
    enum which which, const struct je_node **holder)
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
size_t
ins_count_event(const struct je_node *arr, pgn_config_shape shape,
    const struct je_node **holder)
{
	return ins_count_which(arr, shape, PIG_ORDINARY, holder);
}

/* Pigeon's entries in every event array of 'root'. */
size_t
ins_count_all(const struct je_node *root, pgn_config_shape shape)
{
	const struct je_node *hooks, *ev, *holder;
	size_t n = 0;

	hooks = je_get(root, "hooks");
	if (hooks == NULL || hooks->type != JE_OBJECT)
		return 0;
	for (ev = hooks->child; ev != NULL; ev = ev->next)
		n += ins_count_which(ev, shape, PIG_ANY, &holder);
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
int
ins_is_skeleton(const cJSON *root, pgn_config_shape shape)
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

/*
 * Parse a config strictly into 'd' (a NULL root for absent or blank
 * text; no object may hold a key twice; comments only where the host
 * accepts them: Gemini) and check the shape Pigeon relies on: a
 * top-level object, "hooks" an object if present, the host's events
 * arrays if present. Other keys under "hooks" may be anything (Gemini
 * has kept settings there); only arrays among them are searched for
 * Pigeon's entries. Errors are written to 'err' as a phrase with
 * the file as subject ("is not valid JSON (line 3, column 7)").
 */
pgn_status
ins_parse_config(pgn_host h, const char *in, size_t len, struct je_doc *d,
    struct pgn_err *err)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	const struct je_node *hooks, *ev;
	pgn_status rc;
	int e;

	memset(d, 0, sizeof(*d));
	if (len > PGN_MAX_CONFIG) {
		return pgn_err_set(err, PGN_ETOOBIG, "is larger than %d bytes",
		    PGN_MAX_CONFIG);
	}
	if (in == NULL)
		in = "";
	if (memchr(in, '\0', len) != NULL) {
		return pgn_err_set(err, PGN_EINVAL,
		    "is not valid JSON (it holds a NUL byte)");
	}
	/* A host would cut the string at the NUL: refuse, untouched. */
	if (pgn_json_nul_escape(in, len)) {
		return pgn_err_set(err, PGN_EINVAL,
		    "holds \\u0000 (a NUL character), which Pigeon cannot rewrite faithfully");
	}
	rc = je_parse(d, in, len, hi->json_comments, err);
	if (rc != PGN_OK || d->root == NULL)
		return rc;
	rc = PGN_EINVAL;
	if (d->root->type != JE_OBJECT) {
		pgn_err_set(err, rc, "holds %s at the top level, not an object",
		    je_type_phrase(d->root));
		goto out;
	}
	hooks = je_get(d->root, "hooks");
	if (hooks != NULL && hooks->type != JE_OBJECT) {
		pgn_err_set(err, rc, "has \"hooks\" as %s, not an object",
		    je_type_phrase(hooks));
		goto out;
	}
	for (e = 0; hooks != NULL && e < PGN_NEVENTS; e++) {
		ev =
		    hi->events[e] != NULL ? je_get(hooks, hi->events[e]) : NULL;
		if (ev != NULL && ev->type != JE_ARRAY) {
			pgn_err_set(err, rc,
			    "has \"hooks\".\"%s\" as %s, not an array",
			    hi->events[e], je_type_phrase(ev));
			goto out;
		}
	}
	rc = PGN_OK;
out:
	if (rc != PGN_OK)
		je_release(d);
	return rc;
}

/* ---- the merges ----------------------------------------------------- */

void
ins_merged_release(struct merged *m)
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
		n = ins_count_which(ev, PGN_SHAPE_NESTED, PIG_REWAKE, &holder);
	if (rewake < 0 || (rewake == 0 && n == 0)) {
		if (n > 0)
			(void)strip_event(ev, PGN_SHAPE_NESTED, PIG_REWAKE,
			    &gone);
		return PGN_OK;
	}
	fresh = ins_make_rewake_entry(hook);
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
		fresh[e] = ins_make_entry(h, hook, (pgn_event)e);
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
		if (ev == NULL || ins_count_event(ev, hi->shape, &holder) != 1)
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
	rc = hi->rewake ? add_rewake(d, hook, rewake) : PGN_OK;
out:
	for (e = 0; e < PGN_NEVENTS; e++)
		cJSON_Delete(fresh[e]);
	return rc;
}

/* The tree of config text 'in' (already valid): {} when blank. */
static pgn_status
config_tree(pgn_host h, const char *in, size_t len, cJSON **root,
    struct pgn_err *err)
{
	struct je_doc d;
	pgn_status rc;

	*root = NULL;
	rc = ins_parse_config(h, in, len, &d, err);
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
pgn_status
ins_merge(pgn_host h, const char *in, size_t len, const char *hook,
    const char *word, int rewake, struct merged *m, struct pgn_err *err)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct je_doc d;
	struct pgn_err why;
	pgn_status rc;

	memset(m, 0, sizeof(*m));
	memset(&d, 0, sizeof(d));
	if (hi == NULL) {
		return pgn_err_set(err, PGN_EINVAL, "unknown host");
	}
	if (hook != NULL && !ins_hook_path_ok(hook)) {
		return pgn_err_set(err, PGN_EINVAL,
		    "hook '%s' is not an absolute path ending in /" HOOK_NAME,
		    hook);
	}
	if (rewake > 0 && !hi->rewake) {
		return pgn_err_set(err, PGN_EINVAL,
		    "only Claude Code has an idle wake (--rewake), not %s",
		    hi->name);
	}
	rc = ins_parse_config(h, in, len, &d, err);
	if (rc != PGN_OK)
		return rc;
	m->had = d.root != NULL ? ins_count_all(d.root, hi->shape) : 0;
	if (word != NULL)
		m->had += ins_count_rules(d.root);
	if (hook != NULL)
		rc = add_entries(h, &d, hook, rewake);
	else if (d.root != NULL)
		(void)strip_all(d.root, hi, NULL);
	/* 'word' for uninstall: take Pigeon's permission rules away too. */
	if (rc == PGN_OK && word != NULL && hook != NULL)
		rc = ins_add_rules(&d, word, err);
	else if (rc == PGN_OK && word != NULL && d.root != NULL)
		ins_strip_rules(d.root);
	if (rc != PGN_OK)
		goto out;
	rc = je_apply(&d, PGN_MAX_CONFIG, &m->out, &m->outlen, &m->changed);
	if (rc == PGN_ETOOBIG) {
		pgn_err_set(err, rc, "would grow past %d bytes",
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
	rc = config_tree(h, m->out, m->outlen, &m->root, &why);
	if (rc == PGN_EINVAL || rc == PGN_ETOOBIG) {
		rc = pgn_err_set(err, PGN_EINVAL,
		    "would not stay valid after Pigeon's edit (%s): please report this",
		    why.msg);
	}
out:
	je_release(&d);
	if (rc != PGN_OK)
		ins_merged_release(m);
	return rc;
}

static pgn_status
merge_public(pgn_host h, const char *in, size_t len, const char *hook,
    char **out, int *changed, struct pgn_err *err)
{
	struct merged m;
	pgn_status rc;

	*out = NULL;
	*changed = 0;
	pgn_err_clear(err);
	rc = ins_merge(h, in, len, hook, NULL, 0, &m, err);
	if (rc != PGN_OK)
		return rc;
	*out = m.out;
	*changed = m.changed;
	m.out = NULL;
	ins_merged_release(&m);
	return PGN_OK;
}

pgn_status
pgn_install_merge(pgn_host h, const char *in, size_t len, const char *hook,
    char **out, int *changed, struct pgn_err *err)
{
	if (hook == NULL) {
		*out = NULL;
		*changed = 0;
		return pgn_err_set(err, PGN_EINVAL, "no hook path given");
	}
	return merge_public(h, in, len, hook, out, changed, err);
}

pgn_status
pgn_uninstall_merge(pgn_host h, const char *in, size_t len, char **out,
    int *changed, struct pgn_err *err)
{
	return merge_public(h, in, len, NULL, out, changed, err);
}

/*
 * True if the backup's bytes are what uninstall should bring back:
 * a valid config without Pigeon's entries, equal to 'result' once the
 * empty containers install may have filled are ignored.
 */
int
ins_bak_matches(pgn_host h, const char *bak, size_t baklen, const cJSON *result)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct je_doc d;
	struct pgn_err scratch;
	cJSON *b = NULL, *r = NULL;
	int ok = 0;

	if (ins_parse_config(h, bak, baklen, &d, &scratch) != PGN_OK)
		return 0;
	if (d.root != NULL && ins_count_all(d.root, hi->shape) > 0)
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
