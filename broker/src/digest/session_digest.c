/*
 * A session's digest: its transcript (found by the store's
 * pgn_session_find, store/session.c) and its journal since it began.
 */
#include <stdlib.h>

#include "pgn_int.h"
#include "pigeon/transcript.h"

pgn_status
pgn_session_digest(pgn_db *db, const struct pgn_session_info *s, size_t max,
    struct pgn_transcript *t, char **digest)
{
	struct pgn_transcript own;
	struct pgn_entries j = {0};
	char err[PGN_MAX_ERRMSG];
	pgn_status rc;

	*digest = NULL;
	if (t == NULL)
		t = &own;
	pgn_transcript_init(t);
	if (s->transcript == NULL)
		return pgn_fail(db, PGN_ENOTFOUND,
		    "session '%s' has no transcript recorded: its hooks named none",
		    s->key);
	/*
	 * A path in a shared store may have been named by anyone with
	 * access to it: read only what a hook on this machine named, and
	 * only the user's own file (decision 0129).
	 */
	if (!s->here)
		return pgn_fail(db, PGN_EINVAL,
		    "session '%s' was not bound on this machine (or was bound before pigeon recorded machines): its transcript is not read",
		    s->key);
	rc = pgn_transcript_read_owned(s->transcript,
	    pgn_transcript_format_by_name(s->host), t, err, sizeof(err));
	if (rc != PGN_OK) {
		pgn_transcript_release(t);
		return pgn_fail(db, rc, "%s", err);
	}
	rc = pgn_journal_tail(db, s->agent, s->created_ms, PGN_DIGEST_JOURNAL,
	    &j);
	if (rc == PGN_OK) {
		*digest = pgn_digest_render(t, s->key, s->agent, &j, max, &rc);
		if (*digest == NULL)
			rc = pgn_fail(db, rc, "cannot build the digest: %s",
			    pgn_status_name(rc));
	}
	pgn_entries_release(&j);
	if (t == &own)
		pgn_transcript_release(t);
	return rc;
}
