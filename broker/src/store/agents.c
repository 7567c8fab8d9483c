/*
 * Agents of a scope: list, add, rename, retire (docs/decisions/0006),
 * generated names.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

/* Generated names drawn before giving up (names.c adds a number from 8). */
#define PGN_FRESH_NAME_TRIES 64

static const char SQL_AGENT_ADD[] =
    "INSERT INTO agent(scope_id, name, created_ms) VALUES (?1, ?2, ?3)";
static const char SQL_AGENT_ADD_PG[] =
    "INSERT INTO agent(scope_id, name, created_ms) VALUES (?1, ?2, ?3) "
    "RETURNING id";
static const char SQL_AGENT_RENAME[] =
    "UPDATE agent SET name = ?2 WHERE id = ?1";
static const char SQL_AGENT_REMOVE[] =
    "UPDATE agent SET removed_ms = ?2 WHERE id = ?1";
static const char SQL_AGENT_LIST[] =
    "SELECT a.name, a.created_ms, coalesce(a.last_seen_ms, 0), "
    " coalesce((SELECT group_concat(host, ',') FROM (SELECT DISTINCT host "
    "  FROM session WHERE agent_id = a.id ORDER BY host)), ''), "
    " (SELECT count(*) FROM session WHERE agent_id = a.id), "
    " (SELECT count(*) FROM message WHERE recipient_id = a.id "
    "  AND delivered_ms IS NULL) "
    "FROM agent a WHERE a.scope_id = ?1 AND a.removed_ms IS NULL "
    "ORDER BY a.name";
/* The same in PostgreSQL's words: string_agg for group_concat. */
static const char SQL_AGENT_LIST_PG[] =
    "SELECT a.name, a.created_ms, coalesce(a.last_seen_ms, 0), "
    " coalesce((SELECT string_agg(DISTINCT host, ',' ORDER BY host) "
    "  FROM session WHERE agent_id = a.id), ''), "
    " (SELECT count(*) FROM session WHERE agent_id = a.id), "
    " (SELECT count(*) FROM message WHERE recipient_id = a.id "
    "  AND delivered_ms IS NULL) "
    "FROM agent a WHERE a.scope_id = ?1 AND a.removed_ms IS NULL "
    "ORDER BY a.name";
static const char SQL_SESSION_DROP[] =
    "DELETE FROM session WHERE agent_id = ?1";

pgn_status
pgn_agent_insert(pgn_db *db, int64_t sid, const char *name, const char *why,
    int64_t now, int64_t *id)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	*id = 0;
	rc = pgn_prepare(db, pgn_sql(db, SQL_AGENT_ADD, SQL_AGENT_ADD_PG), &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_T(name), PGN_I(now));
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "adding an agent");
	if (rc == PGN_OK)
		*id = pgn_inserted_id(db, st);
	pgn_finish(db, st);
	if (rc != PGN_OK)
		return rc;
	return pgn_journal_add(db, *id, "created", 0, NULL, why, now);
}

void
pgn_agents_release(struct pgn_agents *a)
{
	size_t i;

	if (a == NULL)
		return;
	for (i = 0; i < a->n; i++) {
		free(a->v[i].name);
		free(a->v[i].hosts);
	}
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static pgn_status
agents_tx(pgn_db *db, void *arg)
{
	struct pgn_agents *out = arg;
	struct pgn_agent *x;
	pgn_stmt *st = NULL;
	int64_t sid;
	pgn_status rc;

	pgn_agents_release(out);
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK;
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, pgn_sql(db, SQL_AGENT_LIST, SQL_AGENT_LIST_PG),
	    &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid));
	while (pgn_next_row(db, st, &rc, "listing agents")) {
		if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n,
		        sizeof(*out->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		x = &out->v[out->n++];
		x->name = pgn_col_text(st, 0);
		x->created_ms = pgn_col_i64(st, 1);
		x->last_seen_ms = pgn_col_i64(st, 2);
		x->hosts = pgn_col_text(st, 3);
		x->sessions = pgn_col_i64(st, 4);
		x->queued = pgn_col_i64(st, 5);
		if (x->name == NULL || x->hosts == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	return rc;
}

/* Names only, from the agent table: no session or message scan. */
static pgn_status
names_tx(pgn_db *db, void *arg)
{
	struct pgn_agents *out = arg;
	pgn_stmt *st = NULL;
	int64_t sid;
	pgn_status rc;

	pgn_agents_release(out);
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK;
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, pgn_sql_agent_names, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid));
	while (pgn_next_row(db, st, &rc, "listing agent names")) {
		if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n,
		        sizeof(*out->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		memset(&out->v[out->n], 0, sizeof(out->v[0]));
		out->v[out->n].name = pgn_col_text(st, 1);
		if (out->v[out->n++].name == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_agents_names(pgn_db *db, struct pgn_agents *out)
{
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = pgn_read(db, names_tx, out);
	if (rc != PGN_OK)
		pgn_agents_release(out);
	return rc;
}

pgn_status
pgn_agents_list(pgn_db *db, struct pgn_agents *out)
{
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = pgn_read(db, agents_tx, out);
	if (rc != PGN_OK)
		pgn_agents_release(out);
	return rc;
}

struct agent_ctx {
	char a[PGN_MAX_NAME + 1];
	char b[PGN_MAX_NAME + 1];
	const char *why; /* rm: the journal's detail, or NULL */
};

/* Is ?2 a group of scope ?1: listed by an active agent (",a,b,")? */
static const char SQL_IS_GROUP[] =
    "SELECT EXISTS (SELECT 1 FROM agent WHERE scope_id = ?1 "
    "AND removed_ms IS NULL AND grps IS NOT NULL "
    "AND instr(grps, ',' || ?2 || ',') > 0)";
static const char SQL_IS_GROUP_PG[] =
    "SELECT EXISTS (SELECT 1 FROM agent WHERE scope_id = ?1 "
    "AND removed_ms IS NULL AND grps IS NOT NULL "
    "AND strpos(grps, ',' || CAST(?2 AS text) || ',') > 0)::int";

/*
 * A group never shadows an agent (product.md §13): as group add refuses
 * an agent's name, agent add and rename refuse a group's (decision 0209).
 */
static pgn_status
not_a_group(pgn_db *db, int64_t sid, const char *name)
{
	int64_t is = 0;
	pgn_status rc;

	rc = pgn_select_i64(db, pgn_sql(db, SQL_IS_GROUP, SQL_IS_GROUP_PG), &is,
	    "reading the groups", PGN_I(sid), PGN_T(name));
	if (rc == PGN_OK && is)
		return pgn_fail(db, PGN_EEXIST,
		    "'%s' is a group of scope '%s' (@%s): an agent takes another name",
		    name, PGN_SCOPE_LABEL(db), name);
	return rc;
}

static pgn_status
add_tx(pgn_db *db, void *arg)
{
	struct agent_ctx *c = arg;
	int64_t sid, id;
	pgn_status rc;

	rc = pgn_scope_id(db, 1, &sid);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_agent_id(db, sid, c->a, 0, &id);
	if (rc == PGN_OK)
		return pgn_fail(db, PGN_EEXIST,
		    "agent '%s' already exists in scope '%s'", c->a,
		    PGN_SCOPE_LABEL(db));
	if (rc != PGN_ENOTFOUND)
		return rc;
	rc = not_a_group(db, sid, c->a);
	if (rc != PGN_OK)
		return rc;
	return pgn_agent_insert(db, sid, c->a, "added", pgn_now_ms(), &id);
}

pgn_status
pgn_agent_add(pgn_db *db, const char *name)
{
	struct agent_ctx c;
	pgn_status rc;

	rc = pgn_check_name(db, "agent", name, c.a);
	if (rc != PGN_OK)
		return rc;
	return pgn_tx(db, add_tx, &c);
}

static pgn_status
rename_tx(pgn_db *db, void *arg)
{
	struct agent_ctx *c = arg;
	struct pgn_buf why;
	int64_t sid, id, other;
	pgn_status rc;

	rc = pgn_need_agent(db, c->a, 0, &id);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_scope_id(db, 0, &sid);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_agent_id(db, sid, c->b, 0, &other);
	if (rc == PGN_OK)
		return pgn_fail(db, PGN_EEXIST,
		    "agent '%s' already exists in scope '%s'", c->b,
		    PGN_SCOPE_LABEL(db));
	if (rc != PGN_ENOTFOUND)
		return rc;
	rc = not_a_group(db, sid, c->b);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_exec(db, SQL_AGENT_RENAME, "renaming an agent", PGN_I(id),
	    PGN_T(c->b));
	if (rc != PGN_OK)
		return rc;
	pgn_buf_init(&why, 2 * PGN_MAX_NAME + 16);
	pgn_buf_addf(&why, "%s -> %s", c->a, c->b);
	rc = why.err == PGN_OK ? pgn_journal_add(db, id, "renamed", 0, NULL,
	                             why.data, pgn_now_ms()) :
	                         pgn_fail(db, why.err, "out of memory");
	pgn_buf_release(&why);
	return rc;
}

pgn_status
pgn_agent_rename(pgn_db *db, const char *from, const char *to)
{
	struct agent_ctx c;
	pgn_status rc;

	rc = pgn_check_name(db, "agent", from, c.a);
	if (rc == PGN_OK)
		rc = pgn_check_name(db, "new name", to, c.b);
	if (rc != PGN_OK)
		return rc;
	if (strcmp(c.a, c.b) == 0)
		return pgn_fail(db, PGN_EINVAL,
		    "agent '%s' already has that name", c.a);
	return pgn_tx(db, rename_tx, &c);
}

pgn_status
pgn_agent_rm_check_in_tx(pgn_db *db, const char *name, int64_t *id)
{
	int64_t n;
	pgn_status rc;

	rc = pgn_need_agent(db, name, 0, id);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_queued_count(db, *id, &n);
	if (rc != PGN_OK)
		return rc;
	if (n > 0)
		return pgn_fail_hint(db, PGN_EFULL, PGN_HINT_READ_FIRST, name,
		    "agent '%s' still has %lld queued message%s", name,
		    (long long)n, n == 1 ? "" : "s");
	return PGN_OK;
}

pgn_status
pgn_agent_rm_in_tx(pgn_db *db, const char *name, const char *why, int64_t *id)
{
	int64_t now;
	pgn_status rc;

	rc = pgn_agent_rm_check_in_tx(db, name, id);
	if (rc != PGN_OK)
		return rc;
	now = pgn_now_ms();
	rc = pgn_exec(db, SQL_AGENT_REMOVE, "removing an agent", PGN_I(*id),
	    PGN_I(now));
	if (rc == PGN_OK)
		rc = pgn_exec(db, SQL_SESSION_DROP, "unbinding sessions",
		    PGN_I(*id));
	if (rc == PGN_OK)
		rc = pgn_journal_add(db, *id, "removed", 0, NULL, why, now);
	return rc;
}

static pgn_status
rm_tx(pgn_db *db, void *arg)
{
	struct agent_ctx *c = arg;
	int64_t id;

	return pgn_agent_rm_in_tx(db, c->a, c->why, &id);
}

static pgn_status
pgn_agent_rm_why(pgn_db *db, const char *name, const char *why)
{
	struct agent_ctx c;
	pgn_status rc;

	rc = pgn_check_name(db, "agent", name, c.a);
	if (rc != PGN_OK)
		return rc;
	c.why = why;
	return pgn_tx(db, rm_tx, &c);
}

pgn_status
pgn_agent_rm(pgn_db *db, const char *name)
{
	return pgn_agent_rm_why(db, name, NULL);
}

/* A generated name not yet taken in scope 'sid'. */
pgn_status
pgn_fresh_name(pgn_db *db, int64_t sid, char out[PGN_MAX_NAME + 1])
{
	unsigned attempt;
	int64_t id;
	pgn_status rc;

	for (attempt = 0; attempt < PGN_FRESH_NAME_TRIES; attempt++) {
		pgn_name_generate(out, attempt);
		rc = pgn_agent_id(db, sid, out, 0, &id);
		if (rc == PGN_ENOTFOUND)
			return PGN_OK;
		if (rc != PGN_OK)
			return rc;
	}
	return pgn_fail(db, PGN_EEXIST, "no free generated name in scope '%s'",
	    PGN_SCOPE_LABEL(db));
}
