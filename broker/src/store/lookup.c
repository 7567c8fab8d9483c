/*
 * An agent's name resolved in the current scope, or the "no agent 'x'
 * (known: ...)" explanation: used by every domain file of the store.
 */
#include <inttypes.h>
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

const char pgn_sql_agent_names[] =
    "SELECT id, name FROM agent WHERE scope_id = ?1 AND removed_ms IS NULL "
    "ORDER BY name";

/* Other scopes where the name is a live agent, the latest seen first. */
static const char SQL_NAME_ELSEWHERE[] =
    "SELECT s.root FROM agent a JOIN scope s ON s.id = a.scope_id "
    "WHERE a.name = ?1 AND a.removed_ms IS NULL AND a.scope_id <> ?2 "
    "ORDER BY coalesce(a.last_seen_ms, a.created_ms) DESC LIMIT 3";

/* Scopes named in the hint (the latest seen first). */
#define ELSEWHERE_MAX 3

/*
 * " It is an agent in scope 'X': ..." when 'name' lives in other scopes
 * of the database (decision 0185), into 'b'; nothing otherwise or on an
 * error (the hint is a courtesy: the unknown name is the failure).
 */
static void
elsewhere(pgn_db *db, int64_t sid, const char *name, struct pgn_buf *b)
{
	pgn_stmt *st = NULL;
	pgn_status rc;
	const char *root, *first = NULL;
	char one[PGN_MAX_PATH + 1] = "";
	size_t n = 0;

	rc = pgn_prepare(db, SQL_NAME_ELSEWHERE, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_T(name), PGN_I(sid));
	while (n < ELSEWHERE_MAX &&
	    pgn_next_row(db, st, &rc, "looking in other scopes")) {
		root = pgn_col_str(st, 0, NULL);
		if (root == NULL)
			continue;
		pgn_buf_addf(b, "%s'%s'",
		    n == 0 ? " It is an agent in scope " : ", ",
		    root[0] != '\0' ? root : "global");
		if (n++ == 0 && strlen(root) < sizeof(one)) {
			memcpy(one, root, strlen(root) + 1);
			first = one;
		}
	}
	pgn_finish(db, st);
	if (rc != PGN_OK) {
		pgn_buf_reset(b); /* the unknown name's error replaces it */
		return;
	}
	if (n == 0)
		return;
	if (first != NULL && first[0] == '/' && db->scope[0] != '\0' &&
	    db->scope[0] != '/')
		/* this scope is an origin's key: that one its path before */
		pgn_buf_adds(b,
		    ": if that is this repository before its origin remote was added, see docs/postgres.md, moving a scope.");
	else if (first != NULL && first[0] == '/')
		pgn_buf_addf(b, ": run pigeon there, or pass --project %s.",
		    first);
	else if (first != NULL && first[0] == '\0')
		pgn_buf_adds(b,
		    ": run pigeon outside any repository, or pass --project with a directory outside one.");
	else
		pgn_buf_adds(b,
		    ": run pigeon in a clone of that repository (the scope key changes when its origin remote does).");
}

/*
 * Explain an unknown name: the known names of the scope and the closest
 * one, so the user can fix a typo in one step; the other scopes where
 * the name is an agent.
 */
pgn_status
pgn_fail_unknown(pgn_db *db, int64_t sid, const char *name, int sending)
{
	pgn_stmt *st = NULL;
	struct pgn_buf known, other;
	char best[PGN_MAX_NAME + 1] = "";
	size_t d, bestd = 3, n = 0;
	const char *s;
	pgn_status rc;

	pgn_buf_init(&known, 512);
	pgn_buf_init(&other, 3 * PGN_MAX_PATH + 256);
	rc = pgn_prepare(db, pgn_sql_agent_names, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid));
	/* A step error is no end of rows: it would read "known: none". */
	while (pgn_next_row(db, st, &rc, "listing agents")) {
		s = pgn_col_str(st, 1, NULL);
		if (s == NULL)
			continue;
		if (known.len < 400)
			pgn_buf_addf(&known, "%s%s", n++ ? ", " : "", s);
		d = pgn_edit_distance(name, s, 2);
		if (d < bestd && strlen(s) < sizeof(best)) {
			bestd = d;
			memcpy(best, s, strlen(s) + 1);
		}
	}
	pgn_finish(db, st);
	if (rc == PGN_OK)
		elsewhere(db, sid, name, &other);
	if (rc == PGN_OK) {
		rc = pgn_fail_hint(db, PGN_ENOTFOUND,
		    sending ? PGN_HINT_CREATE : PGN_HINT_AGENTS, name,
		    "no agent '%s' in scope '%s' (known: %s).%s%s%s%s", name,
		    PGN_SCOPE_LABEL(db), n ? known.data : "none",
		    best[0] ? " Did you mean '" : "", best, best[0] ? "'?" : "",
		    other.err == PGN_OK && other.len > 0 ? other.data : "");
	}
	pgn_buf_release(&known);
	pgn_buf_release(&other);
	return rc;
}

/* Resolve a checked name in the current scope or explain the failure. */
pgn_status
pgn_need_agent(pgn_db *db, const char *name, int any, int64_t *id)
{
	int64_t sid;
	pgn_status rc;

	*id = 0;
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_unknown(db, -1, name, 0);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_agent_id(db, sid, name, any, id);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_unknown(db, sid, name, 0);
	return rc;
}

/* ---- moving a scope (decision 0229's companion, 0185) --------------- */

static const char SQL_SCOPE_OF[] = "SELECT id FROM scope WHERE root = ?1";
static const char SQL_SCOPE_LEASES[] =
    "SELECT count(*) FROM lease WHERE scope_id = ?1 AND expires_ms > ?2";
static const char SQL_SCOPE_RENAME[] =
    "UPDATE scope SET root = ?2 WHERE id = ?1";

struct move_ctx {
	const char *from, *to;
};

static pgn_status
move_tx(pgn_db *db, void *arg)
{
	struct move_ctx *m = arg;
	int64_t id, other, live;
	pgn_status rc;

	rc = pgn_select_i64(db, SQL_SCOPE_OF, &id, "finding the scope",
	    PGN_T(m->from));
	if (rc == PGN_ENOTFOUND)
		return pgn_fail(db, PGN_ENOTFOUND,
		    "no scope '%s' in this database (see pigeon doctor for the database)",
		    m->from);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_select_i64(db, SQL_SCOPE_OF, &other, "finding the scope",
	    PGN_T(m->to));
	if (rc == PGN_OK)
		return pgn_fail(db, PGN_EEXIST,
		    "scope '%s' already exists: retire its agents (pigeon agent rm, pigeon agent prune) or keep both",
		    m->to);
	if (rc != PGN_ENOTFOUND)
		return rc;
	/* The lease stamp keys leases by scope: none may be live. */
	rc = pgn_select_i64(db, SQL_SCOPE_LEASES, &live, "counting leases",
	    PGN_I(id), PGN_I(pgn_now_ms()));
	if (rc != PGN_OK)
		return rc;
	if (live > 0)
		return pgn_fail(db, PGN_EFULL,
		    "scope '%s' has %" PRId64
		    " live lease%s: release them first (pigeon lease release --all)",
		    m->from, live, live == 1 ? "" : "s");
	return pgn_exec(db, SQL_SCOPE_RENAME, "moving the scope", PGN_I(id),
	    PGN_T(m->to));
}

pgn_status
pgn_scope_move(pgn_db *db, const char *from)
{
	struct move_ctx m = {from, pgn_db_scope(db)};

	if (from == NULL || from[0] == '\0' || m.to == NULL || m.to[0] == '\0')
		return pgn_fail(db, PGN_EINVAL,
		    "the global scope is not moved: name a project's scope, and run this in the project");
	if (strcmp(from, m.to) == 0)
		return pgn_fail(db, PGN_EINVAL,
		    "scope '%s' is this scope already", from);
	return pgn_tx(db, move_tx, &m);
}
