/*
 * Groups (decision 0158): a named set of a scope's agents, so that one
 * send reaches them all (--to @NAME, resolved in send.c as 'all' is). A
 * group is its member rows, by agent row: a rename keeps it, a retired
 * agent is skipped, and the group is gone with its last row.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

/* Every member row of group ?2 of scope ?1: id, name, 1 while active. */
const char pgn_sql_group_members[] =
    "SELECT a.id, a.name, CASE WHEN a.removed_ms IS NULL THEN 1 ELSE 0 END "
    "FROM grp g JOIN agent a ON a.id = g.agent_id "
    "WHERE g.scope_id = ?1 AND g.name = ?2 ORDER BY a.name LIMIT ?3";
static const char SQL_GROUP_NAMES[] =
    "SELECT DISTINCT name FROM grp WHERE scope_id = ?1 ORDER BY name "
    "LIMIT ?2";
static const char SQL_GROUP_COUNT[] =
    "SELECT count(DISTINCT name) FROM grp WHERE scope_id = ?1";
static const char SQL_GROUP_HAS[] =
    "SELECT count(*) FROM grp WHERE scope_id = ?1 AND name = ?2";
static const char SQL_GROUP_ACTIVE[] =
    "SELECT count(*) FROM grp g JOIN agent a ON a.id = g.agent_id "
    "WHERE g.scope_id = ?1 AND g.name = ?2 AND a.removed_ms IS NULL";
static const char SQL_GROUP_PUT[] =
    "INSERT INTO grp(scope_id, name, agent_id) VALUES (?1, ?2, ?3) "
    "ON CONFLICT DO NOTHING";
static const char SQL_GROUP_DROP[] =
    "DELETE FROM grp WHERE scope_id = ?1 AND name = ?2";
static const char SQL_GROUP_DROP_ONE[] =
    "DELETE FROM grp WHERE scope_id = ?1 AND name = ?2 AND agent_id = ?3";
static const char SQL_GROUP_LIST[] =
    "SELECT g.name, a.name FROM grp g JOIN agent a ON a.id = g.agent_id "
    "WHERE g.scope_id = ?1 AND a.removed_ms IS NULL "
    "ORDER BY g.name, a.name LIMIT ?2";

pgn_status
pgn_fail_unknown_group(pgn_db *db, int64_t sid, const char *name)
{
	pgn_stmt *st = NULL;
	struct pgn_buf known;
	const char *s;
	size_t n = 0;
	pgn_status rc;

	pgn_buf_init(&known, 512);
	rc = pgn_prepare(db, SQL_GROUP_NAMES, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_GROUPS));
	while (pgn_next_row(db, st, &rc, "listing groups")) {
		s = pgn_col_str(st, 0, NULL);
		if (s != NULL && known.len < 400)
			pgn_buf_addf(&known, "%s@%s", n++ ? ", " : "", s);
	}
	pgn_finish(db, st);
	if (rc == PGN_OK)
		rc = pgn_fail(db, PGN_ENOTFOUND,
		    "no group '@%s' in scope '%s' (groups: %s)", name,
		    PGN_SCOPE_LABEL(db), n ? known.data : "none");
	pgn_buf_release(&known);
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

static pgn_status
add_tx(pgn_db *db, void *arg)
{
	struct group_ctx *c = arg;
	int64_t sid, id, k;
	pgn_status rc;
	size_t i;

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
	rc = pgn_select_i64(db, SQL_GROUP_HAS, &k, "reading a group",
	    PGN_I(sid), PGN_T(c->name));
	if (rc == PGN_OK && k == 0)
		rc = pgn_select_i64(db, SQL_GROUP_COUNT, &k, "counting groups",
		    PGN_I(sid));
	else if (rc == PGN_OK)
		k = 0;
	if (rc == PGN_OK && k >= PGN_MAX_GROUPS)
		return pgn_fail(db, PGN_ETOOBIG,
		    "scope '%s' has %lld groups, the most it may have (%d)",
		    PGN_SCOPE_LABEL(db), (long long)k, PGN_MAX_GROUPS);
	for (i = 0; rc == PGN_OK && i < c->n; i++) {
		rc = pgn_agent_id(db, sid, c->agents[i], 0, &id);
		if (rc == PGN_ENOTFOUND)
			return pgn_fail_unknown(db, sid, c->agents[i], 0);
		if (rc == PGN_OK)
			rc = pgn_exec(db, SQL_GROUP_PUT, "adding to a group",
			    PGN_I(sid), PGN_T(c->name), PGN_I(id));
	}
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_GROUP_ACTIVE, &k,
		    "counting a group", PGN_I(sid), PGN_T(c->name));
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
	pgn_stmt *st = NULL;
	int64_t sid, id, k;
	pgn_status rc;
	size_t i;

	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail(db, rc, "no group '@%s' in scope '%s'", c->name,
		    PGN_SCOPE_LABEL(db));
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_GROUP_HAS, &k, "reading a group",
		    PGN_I(sid), PGN_T(c->name));
	if (rc == PGN_OK && k == 0)
		return pgn_fail_unknown_group(db, sid, c->name);
	if (rc == PGN_OK && c->n == 0)
		return pgn_exec(db, SQL_GROUP_DROP, "removing a group",
		    PGN_I(sid), PGN_T(c->name));
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_GROUP_DROP_ONE, &st);
	for (i = 0; rc == PGN_OK && i < c->n; i++) {
		/* A retired agent may still be listed as a member row. */
		rc = pgn_agent_id(db, sid, c->agents[i], 1, &id);
		if (rc == PGN_ENOTFOUND) {
			rc = pgn_fail_unknown(db, sid, c->agents[i], 0);
			break;
		}
		pgn_reset(st);
		if (rc == PGN_OK)
			rc = pgn_bind(db, st, PGN_I(sid), PGN_T(c->name),
			    PGN_I(id));
		if (rc == PGN_OK)
			rc = pgn_step_done(db, st, "removing from a group");
		if (rc == PGN_OK && pgn_changes(db, st) == 0)
			rc = pgn_fail(db, PGN_ENOTFOUND,
			    "agent '%s' is not in group '@%s'", c->agents[i],
			    c->name);
	}
	pgn_finish(db, st);
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

static pgn_status
list_tx(pgn_db *db, void *arg)
{
	struct group_ctx *c = arg;
	struct pgn_group_member *m;
	pgn_stmt *st = NULL;
	const char *g, *a;
	int64_t sid;
	pgn_status rc;

	pgn_groups_release(c->out);
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* a scope never written to has no group */
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_GROUP_LIST, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_LIST));
	while (pgn_next_row(db, st, &rc, "listing groups")) {
		g = pgn_col_str(st, 0, NULL);
		a = pgn_col_str(st, 1, NULL);
		if (g == NULL || a == NULL || strlen(g) > PGN_MAX_NAME ||
		    strlen(a) > PGN_MAX_NAME)
			continue;
		if (!pgn_vec_grow((void **)&c->out->v, &c->out->cap, c->out->n,
		        sizeof(*c->out->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		m = &c->out->v[c->out->n++];
		memcpy(m->group, g, strlen(g) + 1);
		memcpy(m->agent, a, strlen(a) + 1);
	}
	pgn_finish(db, st);
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
