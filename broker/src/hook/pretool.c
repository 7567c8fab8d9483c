/*
 * Before a tool runs (product.md §13, decision 0156): the paths a
 * write tool would touch, checked against the scope's path leases; a
 * call that would write what another agent's live exclusive lease
 * covers is denied in the host's own form, with one line saying who
 * holds it and how to ask. Everything else passes, and any doubt (a
 * bad payload, an error, the deadline) passes the call too: a lease is
 * advice enforced where it can be, never a reason to block a host.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hook_int.h"
#include "pgn_int.h"
#include "render.h"
#include "pigeon/lease.h"

void
pgn_tool_call_release(struct pgn_tool_call *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		free(c->paths[i]);
	c->n = 0;
}

/* A path as an argument names it: UTF-8 text, no control byte, bounded. */
static int
path_text_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= PGN_MAX_PATH || !pgn_utf8_valid(s, n))
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* One path of the call (pgn_patch_fn): kept, or why it cannot be. */
static pgn_status
add_path(void *arg, const char *path, size_t len)
{
	struct pgn_tool_call *c = arg;

	while (len > 0 &&
	    (path[len - 1] == ' ' || path[len - 1] == '\t' ||
	        path[len - 1] == '\r'))
		len--;
	while (len > 0 && (path[0] == ' ' || path[0] == '\t')) {
		path++;
		len--;
	}
	if (c->why[0] != '\0' || len == 0)
		return PGN_OK;
	if (!path_text_ok(path, len)) {
		pgn_errf(c->why, sizeof(c->why),
		    "a path of %s is not a path (not UTF-8, a control byte, or over %d bytes)",
		    c->tool, PGN_MAX_PATH - 1);
		return PGN_OK;
	}
	if (c->n == PGN_HOOK_MAX_TOOL_PATHS) {
		pgn_errf(c->why, sizeof(c->why), "%s writes more than %d paths",
		    c->tool, PGN_HOOK_MAX_TOOL_PATHS);
		return PGN_OK;
	}
	c->paths[c->n] = pgn_strndup(path, len);
	if (c->paths[c->n] == NULL)
		return PGN_ENOMEM;
	c->n++;
	return PGN_OK;
}

/* The paths of one argument 'v' of a mapped tool, by its form. */
static pgn_status
read_arg(struct pgn_tool_call *c, pgn_tool_form form, const cJSON *v)
{
	const cJSON *w;
	const char *patch;
	pgn_status st = PGN_OK;

	switch (form) {
	case PGN_TOOL_PATH:
		if (!cJSON_IsString(v))
			break;
		return add_path(c, v->valuestring, strlen(v->valuestring));
	case PGN_TOOL_PATCH:
		if (cJSON_IsString(v))
			return pgn_patch_paths(v->valuestring, add_path, c);
		break;
	case PGN_TOOL_SHELL:
		/* A command as a string, or as argv (bash -lc "..."). */
		if (cJSON_IsString(v)) {
			patch = pgn_patch_in_shell(v->valuestring);
			return patch != NULL ?
			    pgn_patch_paths(patch, add_path, c) :
			    PGN_OK;
		}
		if (!cJSON_IsArray(v))
			break;
		cJSON_ArrayForEach(w, v)
		{
			if (!cJSON_IsString(w))
				continue;
			patch = pgn_patch_in_shell(w->valuestring);
			if (patch != NULL)
				st = pgn_patch_paths(patch, add_path, c);
			if (st != PGN_OK)
				break;
		}
		return st;
	default:
		break;
	}
	return PGN_OK;
}

pgn_status
pgn_tool_call_read(const cJSON *root, pgn_host h, struct pgn_tool_call *c)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	const struct pgn_tool_map *m;
	const cJSON *name, *input;
	cJSON *parsed = NULL;
	pgn_status st = PGN_OK;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (hi == NULL || hi->tool.name == NULL)
		return PGN_OK;
	name = cJSON_GetObjectItemCaseSensitive(root, hi->tool.name);
	if (!cJSON_IsString(name) || name->valuestring[0] == '\0') {
		pgn_errf(c->why, sizeof(c->why),
		    "the payload names no tool (%s)", hi->tool.name);
		return PGN_OK;
	}
	/* Shown in logs only: cut at a byte bound, shown safely there. */
	snprintf(c->tool, sizeof(c->tool), "%s", name->valuestring);
	m = pgn_host_tool(h, name->valuestring);
	if (m == NULL)
		return PGN_OK; /* a read, a search, a tool not mapped */
	c->judged = 1;
	input = cJSON_GetObjectItemCaseSensitive(root, hi->tool.input);
	/* Arguments as JSON text (Copilot CLI's toolArgs): parsed here. */
	if (cJSON_IsString(input)) {
		parsed = cJSON_Parse(input->valuestring);
		input = parsed;
	}
	if (!cJSON_IsObject(input)) {
		pgn_errf(c->why, sizeof(c->why),
		    "%s's arguments (%s) are not an object", c->tool,
		    hi->tool.input);
		goto out;
	}
	for (i = 0; i < PGN_TOOL_KEYS && m->keys[i] != NULL && st == PGN_OK;
	     i++)
		st = read_arg(c, m->form,
		    cJSON_GetObjectItemCaseSensitive(input, m->keys[i]));
out:
	cJSON_Delete(parsed);
	if (st != PGN_OK)
		pgn_tool_call_release(c);
	return st;
}

/* ---- the check ------------------------------------------------------ */

struct pretool {
	const struct pgn_hook_in *in;
	struct pgn_hook_out *o;
	const struct pgn_payload *p;
	int64_t start;
	char *root; /* the scope root of the payload's directory */
	pgn_db *db;
	char *found;                         /* the pigeon beside in->self */
	char *rels[PGN_HOOK_MAX_TOOL_PATHS]; /* the paths, relative */
	size_t nrels;
};

static void logf_pre(struct pretool *t, const char *status, const char *fmt,
    ...) PGN_PRINTF(3, 4);

/*
 * One hook.log line in the grammar of docs/hook-protocol.md ("host=H
 * event=E session=S status=STATUS ms=MS DETAIL"), into o->log. Written
 * here, not by turn.c's pgn_hook_vlog: turn.c calls this file, and the
 * layer rule wants no two files calling each other.
 */
static void
logf_pre(struct pretool *t, const char *status, const char *fmt, ...)
{
	const struct pgn_host_info *hi = pgn_host_get(t->o->host);
	struct pgn_hook_out *o = t->o;
	struct pgn_buf b, d;
	va_list ap;
	size_t n;

	if (o->nlog == PGN_HOOK_MAX_LOG)
		return;
	pgn_buf_init(&d, PGN_HOOK_LOG_LINE);
	va_start(ap, fmt);
	pgn_buf_vaddf(&d, fmt, ap);
	va_end(ap);
	pgn_buf_init(&b, PGN_HOOK_LOG_LINE - 1);
	pgn_buf_addf(&b, "host=%s event=%s session=%s status=%s ms=%lld",
	    hi != NULL ? hi->name : "-",
	    hi != NULL ? hi->events[PGN_EVENT_BEFORE_TOOL] : "-",
	    o->session[0] != '\0' ? o->session : "-", status,
	    (long long)(pgn_mono_ms() - t->start));
	if (d.data != NULL && d.len > 0) {
		pgn_buf_adds(&b, " ");
		pgn_render_safe(&b, d.data, PGN_HOOK_LOG_LINE);
	}
	n = b.data != NULL ? b.len : 0;
	if (n > 0)
		memcpy(o->log[o->nlog], b.data, n);
	o->log[o->nlog][n] = '\0';
	o->nlog++;
	pgn_buf_release(&d);
	pgn_buf_release(&b);
}

/*
 * The segments of 's' appended to out[0..*n) ('cap' bytes), each as
 * "/SEG": no empty or '.' segment, a '..' takes the last one off (above
 * '/' it stays at '/'). 0 when they do not fit.
 */
static int
add_segments(const char *s, char *out, size_t cap, size_t *n)
{
	const char *e;
	size_t k;

	for (; *s != '\0'; s = e) {
		while (*s == '/')
			s++;
		for (e = s; *e != '\0' && *e != '/'; e++)
			;
		k = (size_t)(e - s);
		if (k == 0 || (k == 1 && s[0] == '.'))
			continue;
		if (k == 2 && s[0] == '.' && s[1] == '.') {
			while (*n > 0 && out[*n - 1] != '/')
				(*n)--;
			if (*n > 0)
				(*n)--; /* the '/' before it */
			continue;
		}
		if (*n + 1 + k + 1 > cap)
			return 0;
		out[(*n)++] = '/';
		memcpy(out + *n, s, k);
		*n += k;
	}
	return 1;
}

/*
 * 'path' made absolute (against the payload's directory 'dir') and
 * normal by its text: no empty, '.' or '..' component (a '..' above '/'
 * stays at '/'), no trailing '/'. Into 'out' ('cap' bytes); 0 when it
 * does not fit or a relative path has no directory to go by. The two
 * are read in turn, never joined in a copy: the before-tool run keeps
 * its stack to the pages it needs (decision 0259).
 */
static int
absolute(const char *dir, const char *path, char *out, size_t cap)
{
	size_t n = 0;

	if (cap < 2)
		return 0;
	if (path[0] != '/' &&
	    (dir == NULL || dir[0] != '/' || !add_segments(dir, out, cap, &n)))
		return 0;
	if (!add_segments(path, out, cap, &n))
		return 0;
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return 1;
}

/* "in 25 min", "in 40 s": how long a lease still runs, for the line. */
static void
left_text(int64_t ms, char *out, size_t cap)
{
	if (ms < 0)
		ms = 0;
	if (ms < 60000)
		snprintf(out, cap, "%lld s", (long long)(ms / 1000));
	else if (ms < 3600000)
		snprintf(out, cap, "%lld min", (long long)(ms / 60000));
	else
		snprintf(out, cap, "%lld h %lld min", (long long)(ms / 3600000),
		    (long long)(ms % 3600000 / 60000));
}

/*
 * One line of a denial into 'b': the path, the holder, the reason, the
 * expiry, and the command that asks the holder.
 */
static void
deny_line(struct pgn_buf *b, const char *pigeon, const char *rel,
    const struct pgn_lease_hit *hit)
{
	char at[32], left[32];
	size_t n;

	pgn_format_time(hit->expires_ms, at, sizeof(at));
	left_text(hit->expires_ms - pgn_now_ms(), left, sizeof(left));
	pgn_buf_adds(b, "Pigeon: ");
	pgn_render_safe(b, rel, PGN_HOOK_MAX_SHOWN);
	pgn_buf_addf(b, " is leased by %s (pattern ", hit->holder);
	pgn_render_safe(b, hit->pattern, PGN_HOOK_MAX_SHOWN);
	pgn_buf_adds(b, ", reason: ");
	if (hit->reason[0] != '\0')
		pgn_render_safe(b, hit->reason, PGN_MAX_LEASE_REASON);
	else
		pgn_buf_adds(b, "none given");
	pgn_buf_addf(b,
	    ") until %s (%s from now); this edit was not made. Ask them: %s send --to %s 'May I edit ",
	    at, left, pigeon, hit->holder);
	/* Inside single quotes: a quote in the path closes and reopens. */
	for (n = 0; rel[n] != '\0' && n < PGN_HOOK_MAX_SHOWN; n++) {
		if (rel[n] == '\'')
			pgn_buf_adds(b, "'\\''");
		else if ((unsigned char)rel[n] >= 0x20 && rel[n] != 0x7f)
			pgn_buf_add(b, rel + n, 1);
	}
	pgn_buf_adds(b, "?'");
}

/*
 * A denial: one line for each lease in the way ('blk', 'n' of them, the
 * paths by index into 'rels'), and when some were left out ('more'), a
 * last line that counts them. Each lease's denial is journalled.
 */
static pgn_status
deny(struct pretool *t, char *const *rels, const struct pgn_lease_block *blk,
    size_t n, size_t more)
{
	char pigeon[PGN_HOOK_MAX_SHOWN + 3];
	struct pgn_buf b, line;
	pgn_status st;
	char *out;
	size_t i;

	if (t->in->pigeon == NULL && t->in->self != NULL)
		t->found = pgn_pigeon_beside(t->in->self);
	pgn_shell_word(t->in->pigeon != NULL ? t->in->pigeon : t->found, pigeon,
	    sizeof(pigeon));
	pgn_buf_init(&b, PGN_HOOK_DENY_MAX);
	for (i = 0; i < n; i++) {
		pgn_buf_init(&line, PGN_HOOK_DENY_LINE);
		deny_line(&line, pigeon, rels[blk[i].path], &blk[i].hit);
		/* a line that cannot be whole is counted, not cut */
		if (line.err != PGN_OK ||
		    b.len + 1 + line.len + PGN_HOOK_DENY_TAIL >
		        PGN_HOOK_DENY_MAX) {
			more++;
		} else {
			if (b.len > 0)
				pgn_buf_adds(&b, "\n");
			pgn_buf_add(&b, line.data, line.len);
		}
		pgn_buf_release(&line);
	}
	if (more > 0)
		pgn_buf_addf(&b,
		    "\nPigeon: and %zu more lease%s in the way of this edit (%s lease list shows them)",
		    more, more == 1 ? "" : "s", pigeon);
	st = b.err;
	out = st == PGN_OK ?
	    pgn_envelope(t->p->host, PGN_EVENT_BEFORE_TOOL, b.data, &st) :
	    NULL;
	pgn_buf_release(&b);
	if (out == NULL)
		return st != PGN_OK ? st : PGN_ENOMEM;
	t->o->len = strlen(out);
	out[t->o->len++] = '\n'; /* over the NUL: written with its length */
	t->o->line = out;
	for (i = 0; i < n; i++) {
		logf_pre(t, "deny",
		    "tool=%s path=%s holder=%s pattern=%s lease=%lld",
		    t->p->call.tool, rels[blk[i].path], blk[i].hit.holder,
		    blk[i].hit.pattern, (long long)blk[i].hit.id);
		/* The journal entry (§13): a failed write still denies, logged.
		 */
		st = pgn_lease_denied(t->db, NULL, t->p->session,
		    rels[blk[i].path], &blk[i].hit);
		if (st != PGN_OK)
			logf_pre(t, pgn_status_name(st),
			    "the denial of %s was not journalled (%s); the call is still denied",
			    rels[blk[i].path], pgn_errmsg(t->db));
	}
	return PGN_OK;
}

/* Open the database (never created: none means no lease). */
static pgn_status
open_db(struct pretool *t)
{
	long left;

	left = (long)(t->in->deadline - pgn_mono_ms()) - PGN_HOOK_TAIL_MS;
	if (left < PGN_HOOK_MIN_WAIT_MS)
		left = PGN_HOOK_MIN_WAIT_MS;
	return pgn_db_open(t->in->db_path, PGN_OPEN_LATENCY, left, &t->db);
}

/*
 * The call's paths made relative to the scope root, as the leases name
 * them (no "./": it anchors), into 't->rels'; those outside the scope
 * are not Pigeon's to judge and are left out. Not inlined: its path
 * buffer leaves the stack before the stamp is read (0251); each
 * relative path is made in its own allocation of its own size (0259).
 */
static PGN_NOINLINE pgn_status
relative_paths(struct pretool *t)
{
	const struct pgn_tool_call *c = &t->p->call;
	char abs[PGN_MAX_PATH];
	struct pgn_err err;
	size_t i, n;
	char *rel;

	for (i = 0; i < c->n; i++) {
		if (!absolute(t->p->dir, c->paths[i], abs, sizeof(abs)))
			continue;
		/* "./" and the rest, or "." for the root: within n + 3 */
		n = strlen(abs) + 3;
		rel = malloc(n);
		if (rel == NULL)
			return PGN_ENOMEM;
		if (pgn_lease_relative(t->root, abs, rel, n, &err) != PGN_OK) {
			free(rel);
			continue;
		}
		if (strncmp(rel, "./", 2) == 0)
			memmove(rel, rel + 2, strlen(rel + 2) + 1);
		t->rels[t->nrels++] = rel;
	}
	return PGN_OK;
}

/*
 * The stamp could not clear the call ('v': ask, or no stamp): the
 * database names the leases in the way, and a denial is written. Not
 * inlined into check: its room for the blocking leases is pushed only
 * by a run that opens the database (0251).
 */
static PGN_NOINLINE pgn_status
ask_db(struct pretool *t, pgn_lease_verdict v)
{
	struct pgn_lease_block blk[PGN_HOOK_DENY_LEASES];
	pgn_status st;
	size_t n, more;

	st = open_db(t);
	if (st == PGN_ENOTFOUND)
		return PGN_OK; /* no database: no lease */
	if (st == PGN_OK)
		st = pgn_db_set_scope(t->db, t->root);
	/* No stamp (a copied database, one removed): made for next time. */
	if (st == PGN_OK && v == PGN_LEASE_NO_STAMP &&
	    pgn_lease_stamp_make(t->db) != PGN_OK)
		logf_pre(t, "pass", "the lease stamp was not made (%s)",
		    pgn_errmsg(t->db));
	if (st == PGN_OK)
		st = pgn_lease_blockers(t->db, NULL, t->p->session,
		    (const char *const *)t->rels, t->nrels, blk,
		    PGN_HOOK_DENY_LEASES, &n, &more);
	if (st == PGN_OK && n > 0)
		return deny(t, t->rels, blk, n, more);
	return st;
}

static pgn_status
check(struct pretool *t)
{
	const struct pgn_tool_call *c = &t->p->call;
	pgn_lease_verdict v;
	pgn_status st;

	memcpy(t->o->session, t->p->session, sizeof(t->o->session));
	/* A tool Pigeon knows that writes no path here (a plain command). */
	if (c->judged && c->n == 0 && c->why[0] == '\0')
		return PGN_OK;
	st = pgn_scope_find(t->p->dir, &t->root);
	if (st != PGN_OK)
		return st;
	/* The global scope takes no path: nothing there is leased by path. */
	if (t->root[0] == '\0')
		return PGN_OK;
	if (c->judged && c->why[0] == '\0') {
		st = relative_paths(t);
		if (st != PGN_OK)
			return st;
		if (t->nrels == 0)
			return PGN_OK; /* every path outside the scope */
	}
	/*
	 * The fast path: the stamp says no live lease in the scope, or none
	 * that covers these paths; nothing opened (decision 0160).
	 */
	v = pgn_lease_stamp_judge(t->in->db_path, t->root,
	    (const char *const *)t->rels, t->nrels, pgn_now_ms());
	if (v == PGN_LEASE_NONE)
		return PGN_OK;
	if (c->why[0] != '\0') {
		logf_pre(t, "pass", "%s; the call passes unjudged", c->why);
		return PGN_OK;
	}
	/* Logged only while a lease lives: a read, a search, a new tool. */
	if (!c->judged) {
		logf_pre(t, "pass",
		    "tool=%s is not a write Pigeon judges; the call passes",
		    c->tool);
		return PGN_OK;
	}
	if (v == PGN_LEASE_CLEAR)
		return PGN_OK;
	return ask_db(t, v);
}

pgn_status
pgn_hook_pretool(const struct pgn_hook_in *in, struct pgn_hook_out *o,
    const struct pgn_payload *p, int64_t start)
{
	struct pretool t;
	pgn_status st;

	memset(&t, 0, sizeof(t));
	t.in = in;
	t.o = o;
	t.p = p;
	t.start = start;
	st = check(&t);
	if (st != PGN_OK) {
		free(o->line);
		o->line = NULL;
		o->len = 0;
		logf_pre(&t, pgn_status_name(st), "%s; the call passes",
		    t.db != NULL ? pgn_errmsg(t.db) : "no lease could be read");
	}
	pgn_db_close(t.db);
	free(t.root);
	free(t.found);
	while (t.nrels > 0)
		free(t.rels[--t.nrels]);
	return st;
}
