/*
 * What the agent may run (decision 0073): Claude's permission rules in
 * the hooks config, and the permission edits in a file of their own
 * (Codex's writable root, Gemini's policy), planned then written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "setup_int.h"
#include "tomledit.h"
#include "pigeon/setup.h"

/* ---- permissions: what the agent may run (decision 0073) ------------ */

/* What an agent runs itself: mail, and coordination (decision 0156). */
static const char *const perm_subs[PERM_NSUBS] = {"send", "read", "wait",
    "status", "ack", "lease", "thread"};

/* The word the installed hook will show for the pigeon CLI. */
void
ins_hook_pigeon_word(const char *hook, char *out, size_t len)
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
	if (!ins_command_word(inner, PIGEON_NAME, &w))
		return 0;
	w.buf[w.len] = '\0';
	if (w.buf[0] != '/')
		return 0;
	pgn_shell_word(w.buf, again, sizeof(again));
	return strcmp(again, inner) == 0;
}

/* Claude's "permissions" and "permissions"."allow", or an error. */
static pgn_status
perm_shape(const struct je_node *root, struct je_node **allow,
    struct pgn_err *err)
{
	const struct je_node *perms;

	*allow = NULL;
	if (root == NULL)
		return PGN_OK;
	perms = je_get(root, "permissions");
	if (perms == NULL)
		return PGN_OK;
	if (perms->type != JE_OBJECT) {
		return pgn_err_set(err, PGN_EINVAL,
		    "has \"permissions\" as %s, not an object",
		    je_type_phrase(perms));
	}
	*allow = (struct je_node *)je_get(perms, "allow");
	if (*allow != NULL && (*allow)->type != JE_ARRAY) {
		return pgn_err_set(err, PGN_EINVAL,
		    "has \"permissions\".\"allow\" as %s, not an array",
		    je_type_phrase(*allow));
	}
	return PGN_OK;
}

/* Pigeon's rules in "permissions"."allow". */
size_t
ins_count_rules(const struct je_node *root)
{
	struct je_node *allow, *it;
	struct pgn_err scratch;
	size_t n = 0;

	if (perm_shape(root, &allow, &scratch) != PGN_OK || allow == NULL)
		return 0;
	for (it = allow->child; it != NULL; it = it->next)
		n += it->type == JE_STRING && rule_is_pigeon(it->str);
	return n;
}

/*
 * Make "permissions"."allow" hold the rules for 'word', and for plain
 * "pigeon" too (the introduction shows the path, the instructions block
 * and a model's own habit write "pigeon send": decision 0181), each
 * once: Pigeon's rules already there stay in place, others of Pigeon's
 * (an older path, a duplicate) go, the missing ones are appended.
 */
pgn_status
ins_add_rules(struct je_doc *d, const char *word, struct pgn_err *err)
{
	static const char *const path[] = {"permissions", "allow"};
	struct je_node *allow, *it;
	char rule[2 * PERM_NSUBS][RULE_MAX];
	int seen[2 * PERM_NSUBS] = {0}, kept;
	size_t k, n;
	pgn_status rc;

	rc = perm_shape(d->root, &allow, err);
	if (rc != PGN_OK)
		return rc;
	n = strcmp(word, PIGEON_NAME) == 0 ? PERM_NSUBS : 2 * PERM_NSUBS;
	for (k = 0; k < n; k++)
		rule_text(rule[k], sizeof(rule[k]),
		    k < PERM_NSUBS ? word : PIGEON_NAME, k % PERM_NSUBS);
	for (it = allow != NULL ? allow->child : NULL; it != NULL;
	     it = it->next) {
		if (it->type != JE_STRING || !rule_is_pigeon(it->str))
			continue;
		kept = 0;
		for (k = 0; k < n && !kept; k++) {
			if (!seen[k] && strcmp(it->str, rule[k]) == 0)
				seen[k] = kept = 1;
		}
		if (!kept)
			je_drop(it);
	}
	for (k = 0; k < n; k++) {
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
void
ins_strip_rules(struct je_node *root)
{
	struct je_node *allow, *it, *perms;
	struct pgn_err scratch;
	size_t n = 0;

	if (perm_shape(root, &allow, &scratch) != PGN_OK || allow == NULL)
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

void
ins_perm_plan_release(struct perm_plan *p)
{
	free(p->path);
	free(p->target);
	free(p->in);
	free(p->out);
	memset(p, 0, sizeof(*p));
}

/* The permission edit of the request's host at its level (user, project). */
pgn_perm
ins_perm_kind(const struct pgn_install *req)
{
	return pgn_host_get(req->host)->perm[req->project != NULL];
}

/* Pigeon's state directory, resolved: the root Codex must let it write. */
static pgn_status
state_root(char **root, struct pgn_err *err)
{
	char *home = NULL;
	pgn_status rc;

	*root = NULL;
	rc = pgn_home_path(&home);
	if (rc != PGN_OK) {
		pgn_err_set(err, rc,
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
	    "# Lets the agent run Pigeon's send, read, wait, status, ack, lease and thread.\n"
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
plan_read(struct perm_plan *p, struct pgn_err *err)
{
	struct stat sb;

	if (lstat(p->path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		p->target = realpath(p->path, NULL);
		if (p->target == NULL) {
			return pgn_err_set(err, PGN_EIO,
			    "'%s' is a symbolic link that cannot be followed (%s): left untouched",
			    p->path, strerror(errno));
		}
	} else {
		p->target = pgn_strdup(p->path);
		if (p->target == NULL)
			return PGN_ENOMEM;
	}
	p->mode = 0600;
	return pgn_read_file(p->target, PGN_MAX_CONFIG, &p->in, &p->len,
	    &p->exists, &p->mode, err);
}

/*
 * Plan the permission edit of a host whose edit is a file of its own
 * ('hooks_path' is the hooks config, beside which Codex's config.toml
 * lives). '*what' gets one line saying what it is. Nothing is written.
 */
pgn_status
ins_perm_plan_make(const struct pgn_install *req, const char *hooks_path,
    struct perm_plan *p, char **what, struct pgn_err *err)
{
	char word[WORD_MAX];
	struct pgn_err why;
	char *root = NULL, *dir = NULL, *text = NULL, *q = NULL;
	const char *v;
	struct pgn_buf b;
	pgn_status rc = PGN_ENOMEM;
	int made, gone = 0;

	memset(p, 0, sizeof(*p));
	*what = NULL;
	pgn_buf_init(&b, 4 * PGN_MAX_PATH);
	if (ins_perm_kind(req) == PGN_PERM_ROOT) {
		rc = state_root(&root, err);
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
		rc = plan_read(p, err);
		if (rc != PGN_OK)
			goto out;
		rc = te_array_edit(p->exists ? p->in : NULL, p->len,
		    CODEX_TABLE, CODEX_KEY, root, !req->remove, PGN_MAX_CONFIG,
		    &p->out, &p->outlen, &p->changed, &gone, &why);
		if (rc == PGN_EINVAL || rc == PGN_ETOOBIG) {
			pgn_err_hint(err, rc, PGN_HINT_PERM_FIX, NULL,
			    "'%s' %s: left untouched", p->path, why.msg);
			goto out;
		}
		if (rc != PGN_OK)
			goto out;
		/*
		 * Nothing left of a file the add created: it goes. One that
		 * was there, even empty, stays (the add marked it so).
		 */
		p->del = req->remove && p->changed && gone;
		if (!p->exists && !p->changed) {
			free(p->out);
			p->out = NULL;
		}
	} else {
		v = getenv("HOME");
		if (v == NULL || *v == '\0') {
			rc = pgn_err_set(err, PGN_EINVAL,
			    "cannot find the gemini policy directory: HOME is not set");
			goto out;
		}
		p->path = pgn_path_join(v, ".gemini/" GEMINI_POLICY);
		if (p->path == NULL)
			goto out;
		rc = plan_read(p, err);
		if (rc != PGN_OK)
			goto out;
		rc = PGN_ENOMEM;
		ins_hook_pigeon_word(req->hook != NULL ? req->hook : "", word,
		    sizeof(word));
		if (req->remove)
			pgn_buf_addf(&b, "Pigeon's policy %s", p->path);
		else
			pgn_buf_addf(&b,
			    "the policy %s allows run_shell_command for %s send|read|wait|status|ack|lease|thread",
			    p->path, word);
		if (p->exists &&
		    (p->len < strlen(POLICY_MARK) ||
		        memcmp(p->in, POLICY_MARK, strlen(POLICY_MARK)) != 0)) {
			if (req->remove)
				goto done; /* not Pigeon's: nothing to remove */
			rc = pgn_err_hint(err, PGN_EINVAL, PGN_HINT_PERM_MOVE,
			    NULL,
			    "'%s' exists and is not Pigeon's: left untouched",
			    p->path);
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
		ins_perm_plan_release(p);
	pgn_buf_release(&b);
	free(root);
	free(dir);
	free(text);
	free(q);
	return rc;
}

/* Carry out a plan made by ins_perm_plan_make. */
pgn_status
ins_perm_plan_write(const struct perm_plan *p, struct pgn_err *err)
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
			rc = pgn_err_set(err, PGN_EIO, "cannot remove '%s': %s",
			    p->target, strerror(errno));
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
	rc = pgn_mkdir_p(dir, 0755, err);
	if (rc == PGN_OK)
		rc = pgn_write_atomic(p->target, p->out, p->outlen, p->mode,
		    err);
	free(dir);
	return rc;
}

/*
 * What the permission edit of 'req' is, in res->perm_what; '*own_file'
 * 1 when it is a file of its own (Codex, Gemini user) to plan.
 */
pgn_status
ins_perm_describe(const struct pgn_install *req, struct pgn_install_result *res,
    const char *word, int *own_file, struct pgn_err *err)
{
	const struct pgn_host_info *hi;
	struct pgn_buf b;

	*own_file = 0;
	pgn_buf_init(&b, 4 * PGN_MAX_PATH);
	switch (ins_perm_kind(req)) {
	case PGN_PERM_RULES:
		pgn_buf_addf(&b,
		    "permissions.allow holds Bash(%s send:*) and the same for read, wait, status, ack, lease, thread in %s",
		    req->remove ? "pigeon" : word, res->path);
		if (req->remove) {
			pgn_buf_reset(&b);
			pgn_buf_addf(&b,
			    "Pigeon's Bash(... pigeon send|read|wait|status|ack|lease|thread:*) rules in permissions.allow of %s",
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
	(void)err;
	if (*own_file) {
		pgn_buf_release(&b);
		return PGN_OK;
	}
	res->perm_what = pgn_buf_take(&b, NULL);
	return res->perm_what != NULL ? PGN_OK : PGN_ENOMEM;
}

/*
 * The permission edit of Codex (writable root) and Gemini (policy
 * file) for doctor: s->perm 1 if in place, 0 if not; a file that
 * cannot be read in s->perm_problem.
 */
pgn_status
ins_perm_inspect(struct pgn_install *req, struct pgn_install_state *s)
{
	struct perm_plan p;
	struct pgn_err err;
	char *what = NULL;
	pgn_status rc;

	if (s->path == NULL || ins_perm_kind(req) == PGN_PERM_NONE ||
	    ins_perm_kind(req) == PGN_PERM_RULES)
		return PGN_OK;
	/* What install would change: nothing means it is in place. */
	req->remove = 0;
	req->hook = s->hook;
	rc = ins_perm_plan_make(req, s->path, &p, &what, &err);
	if (rc == PGN_ENOMEM)
		return rc;
	if (rc == PGN_OK) {
		s->perm = !p.changed;
		s->perm_path = pgn_strdup(p.path);
	} else {
		s->perm = 0;
		s->perm_problem = pgn_strdup(err.msg);
	}
	ins_perm_plan_release(&p);
	free(what);
	return PGN_OK;
}
