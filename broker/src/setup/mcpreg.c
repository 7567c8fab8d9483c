/*
 * pigeon mcp's registration in a host's MCP configuration (decision
 * 0168): Pigeon's entry in the host's servers object (JSON) or its
 * marked table block (Codex's TOML), and where the host allows it the
 * approval of exactly Pigeon's tools (Claude's allow rule, in the
 * hooks' settings.json). Byte-exact both ways: an uninstall right after
 * an install gives the bytes back; a file install created and left
 * empty is removed. The host's facts are the host table's (mcp).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "setup_int.h"
#include "tomledit.h"
#include "pigeon/setup.h"

#define MCP_NAME    "pigeon"
#define MCP_PIGEON  "@PIGEON@"
#define MCP_MARK    "# " TE_MARK " (pigeon mcp)\n"
#define MCP_TOML_TB "[mcp_servers.pigeon]"
/*
 * The first original of a file the registration changed, beside it
 * (never the hooks' FILE.pigeon.bak, which the same file may have):
 * an uninstall that finds the file as the install left it writes these
 * bytes back, as apply.c does with its own.
 */
#define MCP_BAK ".pigeon-mcp.bak"

void
pgn_mcp_reg_result_release(struct pgn_mcp_reg_result *r)
{
	if (r == NULL)
		return;
	free(r->path);
	free(r->diff);
	free(r->allow_path);
	free(r->allow_diff);
	memset(r, 0, sizeof(*r));
}

/*
 * The host's MCP file: user's or the project's, and its bound in bytes
 * ('*max'); NULL path: none there.
 */
static pgn_status
mcp_path(const struct pgn_host_info *hi, const char *project, char **path,
    size_t *max, struct pgn_err *err)
{
	const struct pgn_mcp_reg_info *m = &hi->mcp;
	const char *v;

	*path = NULL;
	*max =
	    project == NULL && m->user_max != 0 ? m->user_max : PGN_MAX_CONFIG;
	if (project != NULL) {
		if (m->project_path == NULL)
			return PGN_OK;
		*path = pgn_path_join(project, m->project_path);
	} else if (m->user_env != NULL && (v = getenv(m->user_env)) != NULL &&
	    *v != '\0') {
		*path = pgn_path_join(v, m->env_file);
	} else if ((v = getenv("HOME")) != NULL && *v != '\0') {
		*path = pgn_path_join(v, m->user_path);
	} else {
		return pgn_err_set(err, PGN_EINVAL,
		    "cannot find the %s MCP config: HOME is not set", hi->name);
	}
	if (*path == NULL)
		return pgn_err_set(err, PGN_ETOOBIG,
		    "the %s MCP config path is too long", hi->name);
	return PGN_OK;
}

/* The entry's text with @PIGEON@ as 'quoted' (JSON or TOML string). */
static char *
entry_text(const char *tmpl, const char *quoted)
{
	const char *at = strstr(tmpl, MCP_PIGEON);
	struct pgn_buf b;

	pgn_buf_init(&b, PGN_MAX_CONFIG);
	if (at == NULL) {
		pgn_buf_adds(&b, tmpl);
	} else {
		pgn_buf_add(&b, tmpl, (size_t)(at - tmpl));
		pgn_buf_adds(&b, quoted);
		pgn_buf_adds(&b, at + strlen(MCP_PIGEON));
	}
	return pgn_buf_take(&b, NULL);
}

/* ---- JSON: the servers object ---------------------------------------- */

/* Blank but for white space, or exactly an empty object. */
static int
is_empty_doc(const char *s, size_t len)
{
	size_t i;
	int braces = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')
			continue;
		if ((s[i] == '{' && braces == 0) ||
		    (s[i] == '}' && braces == 1))
			braces++;
		else
			return 0;
	}
	return braces == 0 || braces == 2;
}

static pgn_status
json_edit(const struct pgn_host_info *hi, const char *in, size_t len,
    size_t max, const char *pigeon, int add, char **out, size_t *outlen,
    int *changed, struct pgn_err *err)
{
	const char *keys[1] = {hi->mcp.key};
	struct je_doc d;
	struct je_node *servers = NULL, *ours = NULL;
	cJSON *want = NULL, *have, *str = NULL;
	char *quoted = NULL, *text = NULL;
	pgn_status rc;
	int same;

	*out = NULL;
	*changed = 0;
	rc = je_parse(&d, in != NULL ? in : "", in != NULL ? len : 0,
	    hi->json_comments, err);
	if (rc != PGN_OK)
		goto out;
	if (d.root != NULL && d.root->type != JE_OBJECT) {
		rc = pgn_err_set(err, PGN_EINVAL, "is %s, not an object",
		    je_type_phrase(d.root));
		goto out;
	}
	servers = d.root != NULL ? je_get(d.root, hi->mcp.key) : NULL;
	if (servers != NULL && servers->type != JE_OBJECT) {
		rc = pgn_err_set(err, PGN_EINVAL,
		    "has \"%s\" as %s, not an object", hi->mcp.key,
		    je_type_phrase(servers));
		goto out;
	}
	ours = servers != NULL ? je_get(servers, MCP_NAME) : NULL;
	if (add) {
		str = cJSON_CreateStringReference(pigeon);
		quoted = str != NULL ? cJSON_PrintUnformatted(str) : NULL;
		rc = PGN_ENOMEM;
		if (quoted == NULL)
			goto out;
		text = entry_text(hi->mcp.entry, quoted);
		want = text != NULL ? cJSON_Parse(text) : NULL;
		if (want == NULL)
			goto out;
		rc = PGN_OK;
		if (ours != NULL) {
			have = je_to_cjson(ours);
			same = have != NULL && cJSON_Compare(have, want, 1);
			cJSON_Delete(have);
			if (same)
				goto done;
			je_drop(ours);
		}
		rc = je_put(&d, keys, 1, MCP_NAME, want);
		want = NULL;
		if (rc != PGN_OK)
			goto out;
	} else {
		if (ours == NULL)
			goto done;
		je_drop(ours);
		if (servers->n == 1)
			je_drop(servers);
	}
done:
	rc = je_apply(&d, max, out, outlen, changed);
	if (rc == PGN_ETOOBIG)
		pgn_err_set(err, rc, "would be over %zu bytes", max);
out:
	cJSON_Delete(str);
	cJSON_Delete(want);
	cJSON_free(quoted);
	free(text);
	je_release(&d);
	return rc;
}

/* ---- TOML: Pigeon's table block (Codex) ----------------------------- */

static pgn_status
toml_edit(const struct pgn_host_info *hi, const char *in, size_t len,
    size_t max, const char *pigeon, int add, char **out, size_t *outlen,
    int *changed, struct pgn_err *err)
{
	char *quoted = NULL, *entry = NULL, *block = NULL;
	const char *at, *text = in != NULL ? in : "";
	struct pgn_buf b;
	size_t blen;
	pgn_status rc;
	int has;

	*out = NULL;
	*changed = 0;
	/* Refuse what is not TOML, untouched (the writable_roots parser). */
	rc = te_array_has(text, in != NULL ? len : 0, "pigeon_mcp_check", "k",
	    "v", &has, err);
	if (rc != PGN_OK)
		return rc;
	quoted = te_quote(pigeon != NULL ? pigeon : "");
	entry = quoted != NULL ? entry_text(hi->mcp.entry, quoted) : NULL;
	pgn_buf_init(&b, PGN_MAX_CONFIG);
	pgn_buf_adds(&b, "\n" MCP_MARK);
	if (entry != NULL)
		pgn_buf_adds(&b, entry);
	block = entry != NULL ? pgn_buf_take(&b, &blen) : NULL;
	if (entry == NULL)
		pgn_buf_release(&b);
	if (block == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	/* Ours: the mark and the table, wherever the path in it points. */
	at = strstr(text, "\n" MCP_MARK MCP_TOML_TB "\n");
	if (!add) {
		const char *end;

		if (at == NULL)
			goto same;
		/* The block runs to the next table header or the end. */
		end = strstr(at + 1 + strlen(MCP_MARK MCP_TOML_TB "\n"), "\n[");
		end = end != NULL ? end : text + len;
		pgn_buf_init(&b, max);
		pgn_buf_add(&b, text, (size_t)(at - text));
		pgn_buf_add(&b, end, (size_t)(text + len - end));
		*out = pgn_buf_take(&b, outlen);
		*changed = 1;
		rc = *out != NULL ? PGN_OK : PGN_ENOMEM;
		goto out;
	}
	if (at != NULL && strncmp(at, block, blen) == 0)
		goto same;
	if (at != NULL || strstr(text, MCP_TOML_TB) != NULL) {
		rc = pgn_err_set(err, PGN_EINVAL,
		    "has a [mcp_servers.pigeon] table of its own: remove it, then install again");
		goto out;
	}
	pgn_buf_init(&b, max);
	pgn_buf_add(&b, text, in != NULL ? len : 0);
	if (in != NULL && len > 0 && text[len - 1] != '\n')
		pgn_buf_adds(&b, "\n");
	pgn_buf_add(&b, block, blen);
	*out = pgn_buf_take(&b, outlen);
	*changed = 1;
	rc = *out != NULL ? PGN_OK : PGN_ETOOBIG;
	if (rc != PGN_OK)
		pgn_err_set(err, rc, "would be over %zu bytes", max);
	goto out;
same:
	*out = malloc(len + 1);
	rc = *out != NULL ? PGN_OK : PGN_ENOMEM;
	if (*out != NULL) {
		memcpy(*out, text, len);
		(*out)[len] = '\0';
		*outlen = len;
	}
out:
	free(quoted);
	free(entry);
	free(block);
	return rc;
}

/* ---- the approval: Claude's allow rule, Cursor's mcpAllowlist -------- */

/*
 * The approval's array in 'root' (NULL: none), its parent object when
 * the host nests it; -1 when either is there in another shape.
 */
static int
allow_find(const struct pgn_host_info *hi, const struct je_node *root,
    struct je_node **parent, struct je_node **arr)
{
	*parent = NULL;
	*arr = NULL;
	if (root == NULL || root->type != JE_OBJECT)
		return 0;
	if (hi->mcp.allow_parent != NULL) {
		*parent = je_get(root, hi->mcp.allow_parent);
		if (*parent == NULL)
			return 0;
		if ((*parent)->type != JE_OBJECT)
			return -1;
		*arr = je_get(*parent, hi->mcp.allow_array);
	} else {
		*arr = je_get(root, hi->mcp.allow_array);
	}
	return *arr != NULL && (*arr)->type != JE_ARRAY ? -1 : 0;
}

/* Pigeon's string in the approval's array, or NULL. */
static struct je_node *
allow_entry(const struct pgn_host_info *hi, const struct je_node *arr)
{
	struct je_node *it, *found = NULL;

	for (it = arr != NULL ? arr->child : NULL; it != NULL; it = it->next)
		if (it->type == JE_STRING &&
		    strcmp(it->str, hi->mcp.allow) == 0)
			found = it;
	return found;
}

static int
allow_comments(const struct pgn_host_info *hi)
{
	return hi->mcp.allow_file != NULL ? hi->mcp.allow_comments :
	                                    hi->json_comments;
}

static pgn_status
allow_edit(const struct pgn_host_info *hi, const char *in, size_t len,
    size_t max, int add, char **out, size_t *outlen, int *changed,
    struct pgn_err *err)
{
	const char *path[2];
	struct je_node *parent, *allow, *found;
	struct je_doc d;
	size_t np = 0;
	pgn_status rc;

	*out = NULL;
	*changed = 0;
	if (hi->mcp.allow_parent != NULL)
		path[np++] = hi->mcp.allow_parent;
	path[np++] = hi->mcp.allow_array;
	rc = je_parse(&d, in != NULL ? in : "", in != NULL ? len : 0,
	    allow_comments(hi), err);
	if (rc != PGN_OK)
		goto out;
	if (d.root != NULL && d.root->type != JE_OBJECT) {
		rc = pgn_err_set(err, PGN_EINVAL, "is %s, not an object",
		    je_type_phrase(d.root));
		goto out;
	}
	if (allow_find(hi, d.root, &parent, &allow) != 0) {
		rc = pgn_err_set(err, PGN_EINVAL,
		    "has \"%s\" in a shape Pigeon does not edit",
		    hi->mcp.allow_parent != NULL ? hi->mcp.allow_parent :
		                                   hi->mcp.allow_array);
		goto out;
	}
	found = allow_entry(hi, allow);
	/* Cursor: never start the list (it would replace the in-app one). */
	if (add && found == NULL && (allow != NULL || !hi->mcp.allow_existing))
		rc = je_push(&d, path, np, cJSON_CreateString(hi->mcp.allow));
	if (!add && found != NULL) {
		if (allow->n > 1 || hi->mcp.allow_existing)
			je_drop(found);
		else if (parent == NULL || parent->n > 1)
			je_drop(allow);
		else
			je_drop(parent);
	}
	if (rc == PGN_OK)
		rc = je_apply(&d, max, out, outlen, changed);
	if (rc == PGN_ETOOBIG)
		pgn_err_set(err, rc, "would be over %zu bytes", max);
out:
	je_release(&d);
	return rc;
}

/* ---- plan and write -------------------------------------------------- */

/* The pigeon path Pigeon's entry in 'in' runs (caller frees), or NULL. */
static char *
installed_pigeon(const struct pgn_host_info *hi, const char *in, size_t len)
{
	struct pgn_err scratch;
	const struct je_node *sv, *ours, *cmd;
	const char *at, *q, *e;
	struct je_doc d;
	char *r = NULL;

	if (hi->mcp.key == NULL) {
		at = strstr(in, "\n" MCP_MARK MCP_TOML_TB "\ncommand = \"");
		if (at == NULL)
			return NULL;
		q = at + strlen("\n" MCP_MARK MCP_TOML_TB "\ncommand = \"");
		e = strchr(q, '"');
		if (e == NULL || memchr(q, '\\', (size_t)(e - q)) != NULL ||
		    memchr(q, '\n', (size_t)(e - q)) != NULL)
			return NULL;
		r = malloc((size_t)(e - q) + 1);
		if (r != NULL) {
			memcpy(r, q, (size_t)(e - q));
			r[e - q] = '\0';
		}
		return r;
	}
	pgn_err_clear(&scratch);
	if (je_parse(&d, in, len, hi->json_comments, &scratch) == PGN_OK &&
	    d.root != NULL && d.root->type == JE_OBJECT &&
	    (sv = je_get(d.root, hi->mcp.key)) != NULL &&
	    sv->type == JE_OBJECT && (ours = je_get(sv, MCP_NAME)) != NULL &&
	    ours->type == JE_OBJECT &&
	    (cmd = je_get(ours, "command")) != NULL) {
		if (cmd->type == JE_ARRAY && cmd->child != NULL)
			cmd = cmd->child;
		if (cmd->type == JE_STRING && cmd->str != NULL)
			r = strdup(cmd->str);
	}
	je_release(&d);
	return r;
}

typedef pgn_status edit_fn(const struct pgn_host_info *hi, const char *in,
    size_t len, size_t max, const char *pigeon, int add, char **out,
    size_t *outlen, int *changed, struct pgn_err *err);

static pgn_status
allow_adapter(const struct pgn_host_info *hi, const char *in, size_t len,
    size_t max, const char *pigeon, int add, char **out, size_t *outlen,
    int *changed, struct pgn_err *err)
{
	(void)pigeon;
	return allow_edit(hi, in, len, max, add, out, outlen, changed, err);
}

/*
 * Edit the file at 'path' (at most 'max' bytes, before and after, its
 * size checked before it is read) with 'fn': its new bytes, their diff, and
 * unless 'dry_run' the write (0600 for a new file). With 'bak', the
 * first original is kept in PATH.pigeon-mcp.bak, and an uninstall that
 * finds the file exactly as an install over that original would leave
 * it writes the original back; else a file left an empty object is
 * removed.
 */
static pgn_status
edit_file(const struct pgn_host_info *hi, const char *path, size_t max,
    edit_fn *fn, const char *pigeon, int add, int dry_run, int bak,
    int *changed, char **diff, struct pgn_err *err)
{
	char *in = NULL, *out = NULL, *dir = NULL, *bakpath = NULL;
	char *orig = NULL, *again = NULL;
	size_t len = 0, outlen = 0, origlen = 0, againlen = 0;
	int exists = 0, has_bak = 0, same = 0;
	mode_t mode = 0600, bmode;
	struct pgn_err scratch;
	pgn_status rc;

	*changed = 0;
	*diff = NULL;
	rc = pgn_read_file(path, max, &in, &len, &exists, &mode, err);
	if (rc != PGN_OK)
		return rc;
	if (!exists && !add)
		goto out;
	rc = fn(hi, exists ? in : NULL, len, max, pigeon, add, &out, &outlen,
	    changed, err);
	if (rc != PGN_OK) {
		/* The message has the file as its subject. */
		char msg[PGN_MAX_ERRMSG];

		snprintf(msg, sizeof(msg), "%s", err->msg);
		pgn_err_set(err, rc, "%s %s", path, msg);
		goto out;
	}
	if (!*changed)
		goto out;
	if (bak) {
		struct pgn_buf b;

		pgn_buf_init(&b, PGN_MAX_PATH + sizeof(MCP_BAK));
		pgn_buf_addf(&b, "%s%s", path, MCP_BAK);
		bakpath = pgn_buf_take(&b, NULL);
		rc = bakpath != NULL ? PGN_OK : PGN_ETOOBIG;
		if (rc == PGN_OK)
			rc = pgn_read_file(bakpath, max, &orig, &origlen,
			    &has_bak, &bmode, err);
		if (rc != PGN_OK)
			goto out;
		/* Uninstall: is the file what an install over it made? */
		if (!add && has_bak) {
			char *was = installed_pigeon(hi, in, len);
			int ch = 0;

			pgn_err_clear(&scratch);
			if (was != NULL &&
			    fn(hi, orig, origlen, max, was, 1, &again,
			        &againlen, &ch, &scratch) == PGN_OK &&
			    againlen == len && memcmp(again, in, len) == 0)
				same = 1;
			free(was);
		}
		if (same) {
			free(out);
			out = orig;
			outlen = origlen;
			orig = NULL;
		}
	}
	rc = pgn_line_diff(path, exists ? in : NULL, len, out, outlen, diff);
	if (rc != PGN_OK || dry_run)
		goto out;
	if (add && bak && exists && !has_bak) {
		rc = pgn_write_atomic(bakpath, in, len, mode & 07777, err);
		if (rc != PGN_OK)
			goto out;
	}
	if (!add && !same && is_empty_doc(out, outlen)) {
		rc = pgn_unlink_synced(path, err);
		goto out;
	}
	dir = pgn_path_dir(path);
	rc = dir != NULL ? pgn_mkdir_p(dir, 0700, err) : PGN_ENOMEM;
	if (rc == PGN_OK)
		rc = pgn_write_atomic(path, out, outlen, mode & 07777, err);
	if (rc == PGN_OK && !add && has_bak)
		rc = pgn_unlink_synced(bakpath, err);
out:
	free(in);
	free(out);
	free(dir);
	free(bakpath);
	free(orig);
	free(again);
	return rc;
}

/* Is Pigeon's approval in the file at 'path'? 1 yes, 0 no (or unread). */
static int
allow_there(const struct pgn_host_info *hi, const char *path)
{
	struct je_node *parent, *arr;
	struct pgn_err scratch;
	struct je_doc d;
	char *in = NULL;
	size_t len = 0;
	int exists = 0, yes = 0;
	mode_t mode;

	pgn_err_clear(&scratch);
	if (pgn_read_file(path, PGN_MAX_CONFIG, &in, &len, &exists, &mode,
	        &scratch) != PGN_OK ||
	    !exists) {
		free(in);
		return 0;
	}
	if (je_parse(&d, in, len, allow_comments(hi), &scratch) == PGN_OK &&
	    allow_find(hi, d.root, &parent, &arr) == 0)
		yes = allow_entry(hi, arr) != NULL;
	je_release(&d);
	free(in);
	return yes;
}

/* The approval's file: the hooks' config, or allow_file under $HOME. */
static pgn_status
allow_path(const struct pgn_host_info *hi, pgn_host h, const char *project,
    char **path, struct pgn_err *err)
{
	const char *home;

	*path = NULL;
	if (hi->mcp.allow_file == NULL)
		return pgn_host_config_path(h, project, path, err);
	home = getenv("HOME");
	if (home == NULL || *home == '\0')
		return pgn_err_set(err, PGN_EINVAL,
		    "cannot find the %s approval file: HOME is not set",
		    hi->name);
	*path = pgn_path_join(home, hi->mcp.allow_file);
	return *path != NULL ?
	    PGN_OK :
	    pgn_err_set(err, PGN_ETOOBIG,
	        "the %s approval file's path is too long", hi->name);
}

pgn_status
pgn_mcp_register(const struct pgn_mcp_reg *req, struct pgn_mcp_reg_result *res,
    struct pgn_err *err)
{
	const struct pgn_host_info *hi;
	size_t max;
	pgn_status rc;

	memset(res, 0, sizeof(*res));
	pgn_err_clear(err);
	hi = pgn_host_get(req->host);
	if (hi == NULL)
		return pgn_err_set(err, PGN_EINVAL, "unknown host");
	if (hi->mcp.entry == NULL)
		return PGN_OK;
	if (!req->remove && (req->pigeon == NULL || req->pigeon[0] != '/'))
		return pgn_err_set(err, PGN_EINVAL,
		    "pigeon '%s' is not an absolute path",
		    req->pigeon != NULL ? req->pigeon : "");
	res->approval = hi->mcp.approval;
	rc = mcp_path(hi, req->project, &res->path, &max, err);
	if (rc != PGN_OK || res->path == NULL)
		return rc;
	/* The rule goes before the server's removal, after its addition. */
	if (hi->mcp.allow != NULL &&
	    (hi->mcp.allow_file == NULL || req->project == NULL)) {
		rc = allow_path(hi, req->host, req->project, &res->allow_path,
		    err);
		if (rc == PGN_OK && req->remove)
			rc = edit_file(hi, res->allow_path, PGN_MAX_CONFIG,
			    allow_adapter, NULL, 0, req->dry_run, 0,
			    &res->allow_changed, &res->allow_diff, err);
		if (rc != PGN_OK)
			return rc;
	}
	rc = edit_file(hi, res->path, max,
	    hi->mcp.key != NULL ? json_edit : toml_edit,
	    req->remove ? NULL : req->pigeon, !req->remove, req->dry_run, 1,
	    &res->changed, &res->diff, err);
	if (rc == PGN_OK && res->allow_path != NULL && !req->remove)
		rc = edit_file(hi, res->allow_path, PGN_MAX_CONFIG,
		    allow_adapter, NULL, 1, req->dry_run, 0,
		    &res->allow_changed, &res->allow_diff, err);
	/* A dry run's approval is what the edit would leave. */
	if (rc == PGN_OK && res->allow_path != NULL)
		res->approved = res->allow_changed ?
		    !req->remove :
		    allow_there(hi, res->allow_path);
	return rc;
}

pgn_status
pgn_mcp_reg_inspect(pgn_host h, const char *project,
    struct pgn_mcp_reg_state *s)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_err err;
	char *in = NULL;
	size_t len = 0;
	int exists = 0;
	size_t max;
	mode_t mode;
	pgn_status rc;

	memset(s, 0, sizeof(*s));
	if (hi == NULL || hi->mcp.entry == NULL)
		return PGN_OK;
	pgn_err_clear(&err);
	rc = mcp_path(hi, project, &s->path, &max, &err);
	if (rc != PGN_OK || s->path == NULL)
		return rc == PGN_ENOMEM ? rc : PGN_OK;
	s->approval = hi->mcp.approval;
	if (hi->mcp.allow != NULL &&
	    (hi->mcp.allow_file == NULL || project == NULL)) {
		rc = allow_path(hi, h, project, &s->allow_path, &err);
		if (rc == PGN_ENOMEM)
			return rc;
		s->approved =
		    s->allow_path != NULL && allow_there(hi, s->allow_path);
	}
	rc = pgn_read_file(s->path, max, &in, &len, &exists, &mode, &err);
	if (rc == PGN_OK && exists) {
		if (hi->mcp.key != NULL) {
			struct je_doc d;
			const struct je_node *sv;

			if (je_parse(&d, in, len, hi->json_comments, &err) ==
			        PGN_OK &&
			    d.root != NULL && d.root->type == JE_OBJECT) {
				sv = je_get(d.root, hi->mcp.key);
				s->registered = sv != NULL &&
				    sv->type == JE_OBJECT &&
				    je_get(sv, MCP_NAME) != NULL;
			}
			je_release(&d);
		} else {
			s->registered =
			    strstr(in, "\n" MCP_MARK MCP_TOML_TB) != NULL;
		}
	}
	free(in);
	return rc == PGN_ENOMEM ? rc : PGN_OK;
}

void
pgn_mcp_reg_state_release(struct pgn_mcp_reg_state *s)
{
	if (s == NULL)
		return;
	free(s->path);
	free(s->allow_path);
	memset(s, 0, sizeof(*s));
}
