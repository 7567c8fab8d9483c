/*
 * Groups (decision 0158): a named set of a scope's agents, so that one
 * send reaches them all (--to @NAME, resolved in send.c as 'all' is).
 * An agent's row lists the groups it is in (agent.grps, ",a,b,"): a
 * rename keeps them, a retired agent drops out, and a group is the
 * active agents that list it — gone with the last of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

/* Bytes of agent.grps: PGN_MAX_AGENT_GROUPS names and their commas. */
#define GRPS_SIZE (PGN_MAX_AGENT_GROUPS * (PGN_MAX_NAME + 1) + 2)

/* The active agents of scope ?1 in some group: id, name, their groups. */
const char pgn_sql_grouped[] =
    "SELECT id, name, grps FROM agent WHERE scope_id = ?1 "
    "AND removed_ms IS NULL AND grps IS NOT NULL ORDER BY name LIMIT ?2";
static const char SQL_GRPS_GET[] =
    "SELECT coalesce(grps, '') FROM agent WHERE id = ?1";
static const char SQL_GRPS_SET[] =
    "UPDATE agent SET grps = nullif(?2, '') WHERE id = ?1";

int
pgn_grps_has(const char *grps, const char *name)
{
	size_t n = strlen(name);
	const char *p = grps;

	while (p != NULL && (p = strstr(p, name)) != NULL) {
		if (p > grps && p[-1] == ',' && p[n] == ',')
			return 1;
		p++;
	}
	return 0;
}

/* Call 'fn' for each group name of 'grps' (",a,b,"); stops at nonzero. */
static int
grps_each(const char *grps, int (*fn)(const char *g, size_t n, void *arg),
    void *arg)
{
	const char *p = grps, *e;
	int r;

	while (p != NULL && *p == ',' && (e = strchr(p + 1, ',')) != NULL) {
		if (e > p + 1 && (r = fn(p + 1, (size_t)(e - p - 1), arg)) != 0)
			return r;
		p = e;
	}
	return 0;
}

static int
count_one(const char *g, size_t n, void *arg)
{
	(void)g;
	(void)n;
	(*(int *)arg)++;
	return 0;
}

/* How many groups 'grps' lists. */
static int
grps_count(const char *grps)
{
	int k = 0;

	(void)grps_each(grps, count_one, &k);
	return k;
}

/* The distinct group names of a scope, for counting and explaining. */
struct names {
	char (*v)[PGN_MAX_NAME + 1];
	size_t n;
	size_t cap;
	int nomem;
};

static int
names_add(const char *g, size_t n, void *arg)
{
	struct names *x = arg;
	size_t i;

	if (n > PGN_MAX_NAME)
		return 0;
	for (i = 0; i < x->n; i++)
		if (strlen(x->v[i]) == n && memcmp(x->v[i], g, n) == 0)
			return 0;
	if (!pgn_vec_grow((void **)&x->v, &x->cap, x->n, sizeof(*x->v))) {
		x->nomem = 1;
		return 1;
	}
	memcpy(x->v[x->n], g, n);
	x->v[x->n][n] = '\0';
	x->n++;
	return 0;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Every group name of scope 'sid', sorted. */
static pgn_status
scope_groups(pgn_db *db, int64_t sid, struct names *out)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = pgn_prepare(db, pgn_sql_grouped, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_LIST));
	while (pgn_next_row(db, st, &rc, "listing groups"))
		if (grps_each(pgn_col_str(st, 2, NULL), names_add, out) != 0)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	pgn_finish(db, st);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), by_name);
	return rc;
}

pgn_status
pgn_fail_unknown_group(pgn_db *db, int64_t sid, const char *name)
{
	struct names g;
	struct pgn_buf known;
	pgn_status rc;
	size_t i;

	rc = scope_groups(db, sid, &g);
	pgn_buf_init(&known, 512);
	for (i = 0; i < g.n && known.len < 400; i++)
		pgn_buf_addf(&known, "%s@%s", i ? ", " : "", g.v[i]);
	if (rc == PGN_OK)
		rc = pgn_fail(db, PGN_ENOTFOUND,
		    "no group '@%s' in scope '%s' (groups: %s)", name,
		    PGN_SCOPE_LABEL(db), g.n ? known.data : "none");
	pgn_buf_release(&known);
	free(g.v);
	return rc;
}

void
pgn_groups_release(struct pgn_groups *g)
{
	if (g == NULL)
		return;
	free(g->v);
	memset(g, 0, sizeof(*g));
}

struct group_ctx {
	char name[PGN_MAX_NAME + 1];
	char (*agents)[PGN_MAX_NAME + 1]; /* checked */
	size_t n;
	struct pgn_groups *out;
};

/* Check the group's name and every agent's, before any transaction. */
static pgn_status
group_names(pgn_db *db, struct group_ctx *c, const char *name,
    const char *const *agents, size_t n)
{
	pgn_status rc;
	size_t i;

	memset(c, 0, sizeof(*c));
	rc = pgn_check_name(db, "group", name, c->name);
	if (rc == PGN_OK && n > PGN_MAX_GROUP_MEMBERS)
		rc = pgn_fail(db, PGN_ETOOBIG,
		    "%zu agents: a group has at most %d members", n,
		    PGN_MAX_GROUP_MEMBERS);
	if (rc != PGN_OK || n == 0)
		return rc;
	c->agents = calloc(n, sizeof(*c->agents));
	if (c->agents == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	c->n = n;
	for (i = 0; rc == PGN_OK && i < n; i++)
		rc = pgn_check_name(db, "agent", agents[i], c->agents[i]);
	return rc;
}

/* How many active agents of scope 'sid' are in group 'name'. */
static pgn_status
members(pgn_db *db, int64_t sid, const char *name, int64_t *n)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	*n = 0;
	rc = pgn_prepare(db, pgn_sql_grouped, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_LIST));
	while (pgn_next_row(db, st, &rc, "reading a group"))
		if (pgn_grps_has(pgn_col_str(st, 2, NULL), name))
			(*n)++;
	pgn_finish(db, st);
	return rc;
}

/* "joined @NAME" or "left @NAME": a 'group' entry of agent row 'id'. */
static pgn_status
journal_change(pgn_db *db, int64_t id, const char *name, int in)
{
	char detail[PGN_MAX_NAME + 16];

	(void)snprintf(detail, sizeof(detail), "%s @%s", in ? "joined" : "left",
	    name);
	return pgn_journal_add(db, id, "group", 0, NULL, detail, pgn_now_ms());
}

/*
 * Agent row 'id' ('who', for errors) joins (or, 'in' 0, leaves) group
 * 'name'; '*was' says whether it was in before.
 */
static pgn_status
set_member(pgn_db *db, int64_t id, const char *who, const char *name, int in,
    int *was)
{
	char grps[GRPS_SIZE], *p;
	pgn_stmt *st = NULL;
	const char *v;
	size_t len, n = strlen(name);
	pgn_status rc;

	rc = pgn_prepare(db, SQL_GRPS_GET, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(id));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading an agent's groups");
	v = rc == PGN_OK ? pgn_col_str(st, 0, &len) : NULL;
	if (rc == PGN_OK && v == NULL)
		rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	else if (rc == PGN_OK && len >= sizeof(grps))
		rc = pgn_fail(db, PGN_EDB,
		    "agent row %lld: a groups list of %zu bytes", (long long)id,
		    len);
	if (rc == PGN_OK)
		memcpy(grps, v, len + 1);
	pgn_finish(db, st);
	if (rc != PGN_OK)
		return rc;
	*was = pgn_grps_has(grps, name);
	if (*was == in)
		return PGN_OK;
	if (in && grps_count(grps) >= PGN_MAX_AGENT_GROUPS)
		return pgn_fail(db, PGN_ETOOBIG,
		    "agent '%s' is in %d groups, the most an agent may be in",
		    who, PGN_MAX_AGENT_GROUPS);
	if (in) {
		if (len == 0)
			grps[len++] = ',';
		memcpy(grps + len, name, n);
		memcpy(grps + len + n, ",", 2);
	} else {
		/* ",name," becomes ","; a list of one becomes "" */
		p = strstr(grps, name);
		while (p != NULL && !(p > grps && p[-1] == ',' && p[n] == ','))
			p = strstr(p + 1, name);
		if (p == NULL)
			return PGN_OK;
		memmove(p, p + n + 1, strlen(p + n + 1) + 1);
		if (strcmp(grps, ",") == 0)
			grps[0] = '\0';
	}
	rc = pgn_exec(db, SQL_GRPS_SET, "writing an agent's groups", PGN_I(id),
	    PGN_T(grps));
	/* Each change a journal entry of the member (decision 0191). */
	if (rc == PGN_OK)
		rc = journal_change(db, id, name, in);
	return rc;
}

static pgn_status
add_tx(pgn_db *db, void *arg)
{
	struct group_ctx *c = arg;
	struct names g;
	int64_t sid, id, k;
	pgn_status rc;
	size_t i;
	int was;

	rc = pgn_scope_id(db, 1, &sid);
	if (rc != PGN_OK)
		return rc;
	/* A group never shadows an agent: '@' aside, the names differ. */
	rc = pgn_agent_id(db, sid, c->name, 0, &id);
	if (rc == PGN_OK)
		return pgn_fail(db, PGN_EEXIST,
		    "'%s' is an agent of scope '%s': a group takes another name",
		    c->name, PGN_SCOPE_LABEL(db));
	if (rc != PGN_ENOTFOUND)
		return rc;
	rc = scope_groups(db, sid, &g);
	k = 0;
	for (i = 0; rc == PGN_OK && i < g.n; i++)
		k += strcmp(g.v[i], c->name) != 0;
	free(g.v);
	if (rc == PGN_OK && k >= PGN_MAX_GROUPS)
		return pgn_fail(db, PGN_ETOOBIG,
		    "scope '%s' has %lld groups, the most it may have (%d)",
		    PGN_SCOPE_LABEL(db), (long long)k, PGN_MAX_GROUPS);
	for (i = 0; rc == PGN_OK && i < c->n; i++) {
		rc = pgn_agent_id(db, sid, c->agents[i], 0, &id);
		if (rc == PGN_ENOTFOUND)
			return pgn_fail_unknown(db, sid, c->agents[i], 0);
		if (rc == PGN_OK)
			rc = set_member(db, id, c->agents[i], c->name, 1, &was);
	}
	if (rc == PGN_OK)
		rc = members(db, sid, c->name, &k);
	if (rc == PGN_OK && k > PGN_MAX_GROUP_MEMBERS)
		rc = pgn_fail(db, PGN_ETOOBIG,
		    "group '@%s' would have %lld members, over the limit of %d",
		    c->name, (long long)k, PGN_MAX_GROUP_MEMBERS);
	return rc;
}

pgn_status
pgn_group_add(pgn_db *db, const char *name, const char *const *agents, size_t n)
{
	struct group_ctx c;
	pgn_status rc;

	if (n == 0)
		return pgn_fail(db, PGN_EINVAL, "a group needs an agent");
	rc = group_names(db, &c, name, agents, n);
	if (rc == PGN_OK)
		rc = pgn_tx(db, add_tx, &c);
	free(c.agents);
	return rc;
}

static pgn_status
rm_tx(pgn_db *db, void *arg)
{
	struct group_ctx *c = arg;
	int64_t ids[PGN_MAX_GROUP_MEMBERS];
	pgn_stmt *st = NULL;
	int64_t sid, id, k;
	pgn_status rc;
	size_t i, n = 0;
	int was;

	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail(db, rc, "no group '@%s' in scope '%s'", c->name,
		    PGN_SCOPE_LABEL(db));
	if (rc == PGN_OK)
		rc = members(db, sid, c->name, &k);
	if (rc == PGN_OK && k == 0)
		return pgn_fail_unknown_group(db, sid, c->name);
	for (i = 0; rc == PGN_OK && i < c->n; i++) {
		/* A retired agent may still list it: it can be taken out. */
		rc = pgn_agent_id(db, sid, c->agents[i], 1, &id);
		if (rc == PGN_ENOTFOUND)
			return pgn_fail_unknown(db, sid, c->agents[i], 0);
		if (rc == PGN_OK)
			rc = set_member(db, id, c->agents[i], c->name, 0, &was);
		if (rc == PGN_OK && !was)
			rc = pgn_fail(db, PGN_ENOTFOUND,
			    "agent '%s' is not in group '@%s'", c->agents[i],
			    c->name);
	}
	if (rc != PGN_OK || c->n > 0)
		return rc;
	/* The whole group: every active member leaves it. */
	rc = pgn_prepare(db, pgn_sql_grouped, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_LIST));
	/* Collected first: no write while the scan is open. */
	while (pgn_next_row(db, st, &rc, "reading a group"))
		if (pgn_grps_has(pgn_col_str(st, 2, NULL), c->name) &&
		    n < PGN_MAX_GROUP_MEMBERS)
			ids[n++] = pgn_col_i64(st, 0);
	pgn_finish(db, st);
	for (i = 0; rc == PGN_OK && i < n; i++)
		rc = set_member(db, ids[i], "", c->name, 0, &was);
	return rc;
}

pgn_status
pgn_group_rm(pgn_db *db, const char *name, const char *const *agents, size_t n)
{
	struct group_ctx c;
	pgn_status rc;

	rc = group_names(db, &c, name, agents, n);
	if (rc == PGN_OK)
		rc = pgn_tx(db, rm_tx, &c);
	free(c.agents);
	return rc;
}

/* One member row of the listing for each group of agent 'agent'. */
struct list_arg {
	pgn_db *db;
	struct pgn_groups *out;
	const char *agent;
	pgn_status rc;
};

static int
list_add(const char *g, size_t n, void *arg)
{
	struct list_arg *a = arg;
	struct pgn_group_member *m;

	if (n > PGN_MAX_NAME)
		return 0;
	if (!pgn_vec_grow((void **)&a->out->v, &a->out->cap, a->out->n,
	        sizeof(*a->out->v))) {
		a->rc = pgn_fail(a->db, PGN_ENOMEM, "out of memory");
		return 1;
	}
	m = &a->out->v[a->out->n++];
	memcpy(m->group, g, n);
	m->group[n] = '\0';
	memcpy(m->agent, a->agent, strlen(a->agent) + 1);
	return 0;
}

static int
by_group(const void *a, const void *b)
{
	const struct pgn_group_member *x = a, *y = b;
	int r = strcmp(x->group, y->group);

	return r != 0 ? r : strcmp(x->agent, y->agent);
}

static pgn_status
list_tx(pgn_db *db, void *arg)
{
	struct group_ctx *c = arg;
	struct list_arg la;
	pgn_stmt *st = NULL;
	const char *a;
	int64_t sid;
	pgn_status rc;

	pgn_groups_release(c->out);
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* a scope never written to has no group */
	if (rc == PGN_OK)
		rc = pgn_prepare(db, pgn_sql_grouped, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_LIST));
	la.db = db;
	la.out = c->out;
	la.rc = PGN_OK;
	while (pgn_next_row(db, st, &rc, "listing groups")) {
		a = pgn_col_str(st, 1, NULL);
		if (a == NULL || strlen(a) > PGN_MAX_NAME)
			continue;
		la.agent = a;
		if (grps_each(pgn_col_str(st, 2, NULL), list_add, &la) != 0)
			rc = la.rc;
	}
	pgn_finish(db, st);
	if (rc == PGN_OK && c->out->n > 1)
		qsort(c->out->v, c->out->n, sizeof(*c->out->v), by_group);
	return rc;
}

pgn_status
pgn_groups_list(pgn_db *db, struct pgn_groups *out)
{
	struct group_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.out = out;
	rc = pgn_read(db, list_tx, &c);
	if (rc != PGN_OK)
		pgn_groups_release(out);
	return rc;
}
