/*
 * An agent's name resolved in the current scope, or the "no agent 'x'
 * (known: ...)" explanation: used by every domain file of the store.
 */
#include <string.h>

#include "pgn_int.h"
#include "store_int.h"

const char pgn_sql_agent_names[] =
    "SELECT id, name FROM agent WHERE scope_id = ?1 AND removed_ms IS NULL "
    "ORDER BY name";

/*
 * Explain an unknown name: the known names of the scope and the closest
 * one, so the user can fix a typo in one step.
 */
pgn_status
pgn_fail_unknown(pgn_db *db, int64_t sid, const char *name, int sending)
{
	pgn_stmt *st = NULL;
	struct pgn_buf known;
	char best[PGN_MAX_NAME + 1] = "";
	size_t d, bestd = 3, n = 0;
	const char *s;
	pgn_status rc;

	pgn_buf_init(&known, 512);
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
	if (rc == PGN_OK) {
		rc = pgn_fail_hint(db, PGN_ENOTFOUND,
		    sending ? PGN_HINT_CREATE : PGN_HINT_AGENTS, name,
		    "no agent '%s' in scope '%s' (known: %s).%s%s%s", name,
		    PGN_SCOPE_LABEL(db), n ? known.data : "none",
		    best[0] ? " Did you mean '" : "", best,
		    best[0] ? "'?" : "");
	}
	pgn_buf_release(&known);
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
		return pgn_fail(db, rc,
		    "no agent '%s' in scope '%s' (known: none)", name,
		    PGN_SCOPE_LABEL(db));
	if (rc != PGN_OK)
		return rc;
	rc = pgn_agent_id(db, sid, name, any, id);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_unknown(db, sid, name, 0);
	return rc;
}
