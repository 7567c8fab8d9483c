/*
 * Handoff batons: left by a session for the next new conversation of the
 * scope or of one agent, merged within the hour, expired after a day,
 * taken exactly once inside the hook's claim (claim.c calls the _in_tx
 * functions); and the export line a Claude Code session start leaves.
 * A domain file of the storage seam (decision 0110): statements only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "handoff_int.h"
#include "search_int.h"
#include "store_int.h"

/* The senders list of a baton: every distinct name, in order. */
#define SENDERS_MAX 4096

/* The session a key names: its agent, and that agent's scope. */
static const char SQL_SESSION_AGENT[] =
    "SELECT a.id, a.name, c.root FROM session s "
    "JOIN agent a ON a.id = s.agent_id JOIN scope c ON c.id = a.scope_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";
static const char SQL_AGENT_LAST_SESSION[] =
    "SELECT key FROM session WHERE agent_id = ?1 "
    "ORDER BY last_seen_ms DESC, id DESC LIMIT 1";
/*
 * The open baton a note for target ?2 (NULL: the scope) joins, through
 * the partial index; PostgreSQL's IS takes no value, and the row is
 * locked there so two notes at once do not both extend the old text.
 */
static const char SQL_BATON_JOIN[] =
    "SELECT id FROM baton WHERE scope_id = ?1 AND target_id IS ?2 "
    "AND consumed_ms IS NULL AND dropped_ms IS NULL AND expires_ms > ?3 "
    "AND updated_ms > ?3 - ?4 ORDER BY id DESC LIMIT 1";
static const char SQL_BATON_JOIN_PG[] =
    "SELECT id FROM baton WHERE scope_id = ?1 "
    "AND target_id IS NOT DISTINCT FROM CAST(?2 AS BIGINT) "
    "AND consumed_ms IS NULL AND dropped_ms IS NULL AND expires_ms > ?3 "
    "AND updated_ms > ?3 - ?4 ORDER BY id DESC LIMIT 1 FOR UPDATE";
static const char SQL_BATON_ADD[] =
    "INSERT INTO baton(scope_id, sender_id, sender, senders, session, "
    "target_id, body, notes, created_ms, updated_ms, expires_ms) "
    "VALUES (?1, ?2, ?3, ?3, nullif(?4, ''), nullif(?5, 0), ?6, 1, ?7, ?7, "
    "?8) "
    "RETURNING id";
static const char SQL_BATON_MERGE[] =
    "UPDATE baton SET body = ?2, senders = ?3, notes = notes + 1, "
    "updated_ms = ?4, expires_ms = ?5 WHERE id = ?1";
#define BATON_COLS                                                             \
	"SELECT b.id, b.sender, coalesce(t.name, ''), b.senders, "             \
	"coalesce(b.session, ''), b.body, b.notes, b.created_ms, "             \
	"b.updated_ms, b.expires_ms, coalesce(b.consumed_ms, 0), "             \
	"coalesce(b.consumed_session, ''), coalesce(k.name, ''), "             \
	"coalesce(b.message_id, 0), coalesce(b.dropped_ms, 0) FROM baton b "   \
	"LEFT JOIN agent t ON t.id = b.target_id "                             \
	"LEFT JOIN agent k ON k.id = b.consumed_agent_id "
static const char SQL_BATON_GET[] =
    BATON_COLS "WHERE b.id = ?1 AND (?2 = 0 OR b.scope_id = ?2)";
static const char SQL_BATON_LIST[] =
    BATON_COLS "WHERE b.scope_id = ?1 ORDER BY b.id DESC LIMIT ?2";
static const char SQL_BATON_DROP[] =
    "UPDATE baton SET dropped_ms = ?3 WHERE id = ?1 AND scope_id = ?2 "
    "AND consumed_ms IS NULL AND dropped_ms IS NULL RETURNING id";
/*
 * An agent's own batons first, then the scope's; oldest first; on
 * PostgreSQL locked (decision 0096).
 */
const char pgn_sql_baton_next[] =
    "SELECT id FROM baton WHERE scope_id = "
    "(SELECT scope_id FROM agent WHERE id = ?1) "
    "AND consumed_ms IS NULL AND dropped_ms IS NULL AND expires_ms > ?2 "
    "AND (target_id = ?1 OR target_id IS NULL) "
    "ORDER BY target_id IS NULL, id LIMIT 1";
static const char SQL_BATON_NEXT_PG[] =
    "SELECT id FROM baton WHERE scope_id = "
    "(SELECT scope_id FROM agent WHERE id = ?1) "
    "AND consumed_ms IS NULL AND dropped_ms IS NULL AND expires_ms > ?2 "
    "AND (target_id = ?1 OR target_id IS NULL) "
    "ORDER BY target_id IS NULL, id LIMIT 1 FOR UPDATE";
/* The delivered copy: a message row, so the audit chains it as any. */
static const char SQL_BATON_MSG[] =
    "INSERT INTO message(scope_id, sender, recipient_id, body, created_ms, "
    "delivered_ms) SELECT scope_id, sender, ?2, body, created_ms, ?3 "
    "FROM baton WHERE id = ?1 RETURNING id";
static const char SQL_BATON_TAKE[] =
    "UPDATE baton SET consumed_ms = ?2, consumed_session = ?3, "
    "consumed_agent_id = ?4, message_id = ?5 WHERE id = ?1 "
    "AND consumed_ms IS NULL AND dropped_ms IS NULL RETURNING id";
/* A sender's agent row, active or retired, in the baton's scope. */
static const char SQL_BATON_SENDER[] =
    "SELECT a.id FROM agent a JOIN baton b ON a.scope_id = b.scope_id "
    "WHERE b.id = ?1 AND a.name = ?2 "
    "ORDER BY a.removed_ms IS NOT NULL, a.id DESC LIMIT 1";

void
pgn_baton_release(struct pgn_baton *b)
{
	if (b == NULL)
		return;
	free(b->senders);
	free(b->session);
	free(b->body);
	free(b->taken_session);
	memset(b, 0, sizeof(*b));
}

void
pgn_batons_release(struct pgn_batons *b)
{
	size_t i;

	if (b == NULL)
		return;
	for (i = 0; i < b->n; i++)
		pgn_baton_release(&b->v[i]);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

const char *
pgn_baton_state(const struct pgn_baton *b, int64_t now)
{
	if (b->taken_ms != 0)
		return "taken";
	if (b->dropped_ms != 0)
		return "dropped";
	if (now >= b->expires_ms)
		return "expired";
	return "open";
}

static void
name_col(char *dst, pgn_stmt *st, int col)
{
	size_t n;
	const char *t = pgn_col_str(st, col, &n);

	if (t == NULL || n > PGN_MAX_NAME)
		n = 0;
	if (n > 0)
		memcpy(dst, t, n);
	dst[n] = '\0';
}

/* The current row of BATON_COLS into '*b'. */
static pgn_status
read_row(pgn_db *db, pgn_stmt *st, struct pgn_baton *b)
{
	memset(b, 0, sizeof(*b));
	b->id = pgn_col_i64(st, 0);
	name_col(b->sender, st, 1);
	name_col(b->target, st, 2);
	b->senders = pgn_col_text(st, 3);
	b->session = pgn_col_text(st, 4);
	b->body = pgn_col_text(st, 5);
	b->body_len = b->body != NULL ? strlen(b->body) : 0;
	b->notes = pgn_col_i64(st, 6);
	b->created_ms = pgn_col_i64(st, 7);
	b->updated_ms = pgn_col_i64(st, 8);
	b->expires_ms = pgn_col_i64(st, 9);
	b->taken_ms = pgn_col_i64(st, 10);
	b->taken_session = pgn_col_text(st, 11);
	name_col(b->taken_by, st, 12);
	b->message_id = pgn_col_i64(st, 13);
	b->dropped_ms = pgn_col_i64(st, 14);
	if (b->senders == NULL || b->session == NULL || b->body == NULL ||
	    b->taken_session == NULL) {
		pgn_baton_release(b);
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	return PGN_OK;
}

/* Baton 'id' (of scope 'sid', or any when 0). PGN_ENOTFOUND. */
static pgn_status
get_row(pgn_db *db, int64_t id, int64_t sid, struct pgn_baton *out)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, SQL_BATON_GET, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(id), PGN_I(sid));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading a baton");
	if (rc == PGN_OK)
		rc = read_row(db, st, out);
	pgn_finish(db, st);
	return rc;
}

/* Non-empty once surrounding whitespace is gone. */
static int
has_text(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			return 1;
	return 0;
}

/* Is 'name' one of the comma-separated 'list'? */
static int
listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; p != NULL && *p != '\0';) {
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p = strchr(p, ',');
		if (p != NULL)
			p++;
	}
	return 0;
}

struct leave_ctx {
	const struct pgn_handoff *req;
	char to[PGN_MAX_NAME + 1];
	struct pgn_baton *out;
	int *merged;
};

/* Who leaves it: agent row, name and session key (see handoff.h). */
struct sender {
	int64_t agent;
	int64_t scope;
	char name[PGN_MAX_NAME + 1];
	char session[PGN_MAX_SESSION_KEY + 1];
};

static pgn_status
find_sender(pgn_db *db, const struct pgn_handoff *req, struct sender *s)
{
	pgn_stmt *st = NULL;
	char want[PGN_MAX_NAME + 1];
	const char *t;
	pgn_status rc = PGN_OK;
	int have_session = req->session != NULL && req->session[0] != '\0';

	memset(s, 0, sizeof(*s));
	want[0] = '\0';
	if (req->agent != NULL && req->agent[0] != '\0') {
		rc = pgn_check_name(db, "agent", req->agent, want);
		if (rc != PGN_OK)
			return rc;
	}
	if (have_session) {
		rc = pgn_prepare(db, SQL_SESSION_AGENT, &st);
		if (rc == PGN_OK)
			rc = pgn_bind(db, st, PGN_T(req->session));
		if (rc == PGN_OK)
			rc = pgn_step_row(db, st, "reading a session");
		if (rc == PGN_OK) {
			name_col(s->name, st, 1);
			t = pgn_col_str(st, 2, NULL);
			if (want[0] == '\0' || strcmp(want, s->name) == 0) {
				s->agent = pgn_col_i64(st, 0);
				rc = pgn_db_set_scope(db, t != NULL ? t : "");
			}
		}
		pgn_finish(db, st);
		st = NULL;
		if (rc == PGN_ENOTFOUND && want[0] == '\0')
			return pgn_fail_hint(db, PGN_ENOTFOUND,
			    PGN_HINT_SESSION, NULL,
			    "no session '%.256s' in this database",
			    req->session);
		if (rc != PGN_OK && rc != PGN_ENOTFOUND)
			return rc;
		rc = PGN_OK;
		if (s->agent != 0) {
			if (strlen(req->session) > PGN_MAX_SESSION_KEY)
				return pgn_fail(db, PGN_ETOOBIG,
				    "session key over %d bytes",
				    PGN_MAX_SESSION_KEY);
			memcpy(s->session, req->session,
			    strlen(req->session) + 1);
			return pgn_scope_id(db, 0, &s->scope);
		}
	}
	if (want[0] == '\0')
		return pgn_fail_hint(db, PGN_EINVAL, PGN_HINT_SESSION, NULL,
		    "no current session or agent to leave the baton from");
	rc = pgn_need_agent(db, want, 0, &s->agent);
	if (rc == PGN_OK)
		rc = pgn_scope_id(db, 0, &s->scope);
	if (rc != PGN_OK)
		return rc;
	memcpy(s->name, want, strlen(want) + 1);
	rc = pgn_prepare(db, SQL_AGENT_LAST_SESSION, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(s->agent));
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading a session");
	if (rc == PGN_OK) {
		t = pgn_col_str(st, 0, NULL);
		if (t != NULL && strlen(t) <= PGN_MAX_SESSION_KEY)
			memcpy(s->session, t, strlen(t) + 1);
	}
	pgn_finish(db, st);
	return rc == PGN_ENOTFOUND ? PGN_OK : rc;
}

/*
 * The merged text: the baton's, a blank line, and the note (marked with
 * its sender when that is not the baton's first). PGN_ETOOBIG past
 * PGN_MAX_HANDOFF.
 */
static pgn_status
merge_text(pgn_db *db, const struct pgn_baton *b, const char *name,
    const char *text, size_t len, struct pgn_buf *out)
{
	char idtext[PGN_MAX_ID_TEXT];

	pgn_buf_init(out, PGN_MAX_HANDOFF);
	pgn_buf_add(out, b->body, b->body_len);
	pgn_buf_adds(out, "\n\n");
	if (strcmp(name, b->sender) != 0)
		pgn_buf_addf(out, "(from %s) ", name);
	pgn_buf_add(out, text, len);
	(void)snprintf(idtext, sizeof(idtext), "%lld", (long long)b->id);
	if (out->err == PGN_ETOOBIG)
		return pgn_fail_hint(db, PGN_ETOOBIG, PGN_HINT_BATON_FULL,
		    idtext,
		    "baton #%lld already holds %zu bytes; with this note of %zu it would be over %d",
		    (long long)b->id, b->body_len, len, PGN_MAX_HANDOFF);
	if (out->err != PGN_OK)
		return pgn_fail(db, out->err, "out of memory");
	return PGN_OK;
}

static pgn_status
leave_tx(pgn_db *db, void *arg)
{
	struct leave_ctx *c = arg;
	const struct pgn_handoff *req = c->req;
	struct pgn_baton *out = c->out;
	struct pgn_buf text, senders;
	struct sender s;
	int64_t now = pgn_now_ms(), target = 0, join = 0;
	char detail[96];
	pgn_status rc;

	pgn_baton_release(out);
	*c->merged = 0;
	pgn_buf_init(&text, PGN_MAX_HANDOFF);
	pgn_buf_init(&senders, SENDERS_MAX);
	rc = find_sender(db, req, &s);
	if (rc == PGN_OK && c->to[0] != '\0') {
		rc = pgn_agent_id(db, s.scope, c->to, 0, &target);
		if (rc == PGN_ENOTFOUND)
			rc = pgn_fail_unknown(db, s.scope, c->to, 0);
	}
	if (rc == PGN_OK) {
		rc = pgn_select_i64(db,
		    pgn_sql(db, SQL_BATON_JOIN, SQL_BATON_JOIN_PG), &join,
		    "looking for an open baton", PGN_I(s.scope),
		    target != 0 ? PGN_I(target) : PGN_T(NULL), PGN_I(now),
		    PGN_I(PGN_HANDOFF_MERGE_MS));
		if (rc == PGN_ENOTFOUND)
			rc = PGN_OK; /* none open: a new baton */
	}
	if (rc != PGN_OK)
		goto out;
	if (join != 0) {
		rc = get_row(db, join, s.scope, out);
		if (rc == PGN_OK)
			rc = merge_text(db, out, s.name, req->text, req->len,
			    &text);
		if (rc != PGN_OK)
			goto out;
		pgn_buf_adds(&senders, out->senders);
		if (!listed(out->senders, s.name))
			pgn_buf_addf(&senders, ",%s", s.name);
		if (senders.err != PGN_OK) { /* the journal still has it */
			pgn_buf_reset(&senders);
			pgn_buf_adds(&senders, out->senders);
		}
		*c->merged = 1;
		if (!req->dry_run)
			rc = pgn_exec(db, SQL_BATON_MERGE, "merging a baton",
			    PGN_I(join), PGN_S(text.data, text.len),
			    PGN_T(senders.data), PGN_I(now),
			    PGN_I(now + PGN_HANDOFF_TTL_MS));
		snprintf(detail, sizeof(detail), "added a note to baton #%lld",
		    (long long)join);
	} else if (!req->dry_run) {
		rc = pgn_select_i64(db, SQL_BATON_ADD, &join, "leaving a baton",
		    PGN_I(s.scope), PGN_I(s.agent), PGN_T(s.name),
		    PGN_T(s.session), PGN_I(target), PGN_S(req->text, req->len),
		    PGN_I(now), PGN_I(now + PGN_HANDOFF_TTL_MS));
		snprintf(detail, sizeof(detail), "left baton #%lld",
		    (long long)join);
	}
	if (rc != PGN_OK)
		goto out;
	if (req->dry_run) {
		/* As it would stand: nothing was written. */
		if (join != 0) {
			free(out->body);
			out->body = pgn_buf_take(&text, &out->body_len);
			free(out->senders);
			out->senders = pgn_buf_take(&senders, NULL);
			out->notes++;
			out->updated_ms = now;
			out->expires_ms = now + PGN_HANDOFF_TTL_MS;
		} else {
			memcpy(out->sender, s.name, sizeof(s.name));
			memcpy(out->target, c->to, sizeof(c->to));
			out->senders = pgn_strdup(s.name);
			out->session = pgn_strdup(s.session);
			out->body = pgn_strndup(req->text, req->len);
			out->body_len = req->len;
			out->taken_session = pgn_strdup("");
			out->notes = 1;
			out->created_ms = out->updated_ms = now;
			out->expires_ms = now + PGN_HANDOFF_TTL_MS;
		}
		if (out->body == NULL || out->senders == NULL ||
		    out->session == NULL || out->taken_session == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
		goto out;
	}
	rc = pgn_journal_add(db, s.agent, "handoff", 0, c->to, detail, now);
	if (rc == PGN_OK) {
		pgn_baton_release(out);
		rc = get_row(db, join, s.scope, out);
	}
out:
	pgn_buf_release(&text);
	pgn_buf_release(&senders);
	if (rc != PGN_OK)
		pgn_baton_release(out);
	return rc;
}

pgn_status
pgn_handoff_leave(pgn_db *db, const struct pgn_handoff *req,
    struct pgn_baton *out, int *merged)
{
	struct leave_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	*merged = 0;
	if (req->text == NULL || !has_text(req->text, req->len))
		return pgn_fail(db, PGN_EINVAL,
		    "the baton is empty: say what the next session should know");
	if (req->len > PGN_MAX_HANDOFF)
		return pgn_fail(db, PGN_ETOOBIG,
		    "the baton is %zu bytes, over the limit of %d: shorten it, or point to a file",
		    req->len, PGN_MAX_HANDOFF);
	if (!pgn_utf8_valid(req->text, req->len))
		return pgn_fail(db, PGN_EINVAL,
		    "the baton is not valid UTF-8 text (or holds a NUL byte)");
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.out = out;
	c.merged = merged;
	if (req->to != NULL) {
		rc = pgn_check_name(db, "recipient", req->to, c.to);
		if (rc != PGN_OK)
			return rc;
	}
	rc = req->dry_run ? pgn_read(db, leave_tx, &c) :
	                    pgn_tx(db, leave_tx, &c);
	if (rc != PGN_OK)
		pgn_baton_release(out);
	return rc;
}

struct list_ctx {
	int64_t id; /* 0: list */
	struct pgn_batons *list;
	struct pgn_baton *one;
};

static pgn_status
list_tx(pgn_db *db, void *arg)
{
	struct list_ctx *c = arg;
	pgn_stmt *st = NULL;
	struct pgn_baton *b;
	int64_t sid;
	pgn_status rc;

	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND && c->id == 0)
		return PGN_OK; /* a scope never written to has none */
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_BATONS, NULL,
		    "no baton #%lld in scope '%s'", (long long)c->id,
		    PGN_SCOPE_LABEL(db));
	if (rc != PGN_OK)
		return rc;
	if (c->id != 0) {
		pgn_baton_release(c->one);
		rc = get_row(db, c->id, sid, c->one);
		if (rc == PGN_ENOTFOUND)
			return pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_BATONS,
			    NULL, "no baton #%lld in scope '%s'",
			    (long long)c->id, PGN_SCOPE_LABEL(db));
		return rc;
	}
	pgn_batons_release(c->list);
	rc = pgn_prepare(db, SQL_BATON_LIST, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid), PGN_I(PGN_MAX_LIST));
	while (pgn_next_row(db, st, &rc, "listing batons")) {
		if (!pgn_vec_grow((void **)&c->list->v, &c->list->cap,
		        c->list->n, sizeof(*b))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		b = &c->list->v[c->list->n];
		rc = read_row(db, st, b);
		if (rc == PGN_OK)
			c->list->n++;
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_handoff_list(pgn_db *db, struct pgn_batons *out)
{
	struct list_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.list = out;
	rc = pgn_read(db, list_tx, &c);
	if (rc != PGN_OK)
		pgn_batons_release(out);
	return rc;
}

pgn_status
pgn_handoff_get(pgn_db *db, int64_t id, struct pgn_baton *out)
{
	struct list_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	if (id < 1)
		return pgn_fail(db, PGN_EINVAL,
		    "a baton id is a number from 1");
	memset(&c, 0, sizeof(c));
	c.id = id;
	c.one = out;
	rc = pgn_read(db, list_tx, &c);
	if (rc != PGN_OK)
		pgn_baton_release(out);
	return rc;
}

static pgn_status
drop_tx(pgn_db *db, void *arg)
{
	int64_t id = *(const int64_t *)arg, sid, changed;
	struct pgn_baton b;
	const char *state;
	pgn_status rc;

	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_OK)
		rc = get_row(db, id, sid, &b);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_BATONS, NULL,
		    "no baton #%lld in scope '%s'", (long long)id,
		    PGN_SCOPE_LABEL(db));
	if (rc != PGN_OK)
		return rc;
	state = pgn_baton_state(&b, pgn_now_ms());
	if (b.taken_ms != 0 || b.dropped_ms != 0)
		rc = pgn_fail(db, PGN_EINVAL,
		    "baton #%lld was %s already: nothing to drop",
		    (long long)id, state);
	else
		rc = pgn_select_i64(db, SQL_BATON_DROP, &changed,
		    "dropping a baton", PGN_I(id), PGN_I(sid),
		    PGN_I(pgn_now_ms()));
	if (rc == PGN_ENOTFOUND)
		rc = pgn_fail(db, PGN_EDB, "baton #%lld changed while dropping",
		    (long long)id);
	pgn_baton_release(&b);
	return rc;
}

pgn_status
pgn_handoff_drop(pgn_db *db, int64_t id)
{
	if (id < 1)
		return pgn_fail(db, PGN_EINVAL,
		    "a baton id is a number from 1");
	return pgn_tx(db, drop_tx, &id);
}

pgn_status
pgn_baton_next_in_tx(pgn_db *db, int64_t agent, int64_t now,
    struct pgn_baton *out)
{
	int64_t id = 0;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = pgn_select_i64(db,
	    pgn_sql(db, pgn_sql_baton_next, SQL_BATON_NEXT_PG), &id,
	    "looking for a baton", PGN_I(agent), PGN_I(now));
	if (rc == PGN_ENOTFOUND)
		return PGN_OK;
	if (rc == PGN_OK)
		rc = get_row(db, id, 0, out);
	return rc;
}

pgn_status
pgn_baton_take_in_tx(pgn_db *db, const struct pgn_claim *req, int64_t agent,
    const char *name, struct pgn_baton *b, int64_t now)
{
	struct pgn_msg m;
	char detail[PGN_MAX_SESSION_KEY + 64];
	char who[PGN_MAX_NAME + 1];
	const char *p, *end;
	int64_t msg = 0, sender, taken;
	size_t n;
	pgn_status rc;

	rc = pgn_select_i64(db, SQL_BATON_MSG, &msg, "copying a baton",
	    PGN_I(b->id), PGN_I(agent), PGN_I(now));
	if (rc == PGN_OK)
		rc = pgn_search_index(db, msg);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, SQL_BATON_TAKE, &taken,
		    "taking a baton", PGN_I(b->id), PGN_I(now),
		    PGN_T(req->session), PGN_I(agent), PGN_I(msg));
	/* Under the write lock an open baton cannot vanish. */
	if (rc == PGN_ENOTFOUND)
		rc = pgn_fail(db, PGN_EDB, "baton #%lld was taken twice",
		    (long long)b->id);
	if (rc != PGN_OK)
		return rc;
	memset(&m, 0, sizeof(m));
	m.id = msg;
	m.created_ms = b->created_ms;
	m.sender = b->sender;
	m.recipient = (char *)name;
	m.body = b->body;
	m.body_len = b->body_len;
	rc = pgn_audit_append(db, req, &m, now);
	snprintf(detail, sizeof(detail), "baton #%lld at %s of %s",
	    (long long)b->id, req->route,
	    req->session != NULL ? req->session : "-");
	if (rc == PGN_OK)
		rc = pgn_journal_add(db, agent, "handoff", msg, b->sender,
		    detail, now);
	snprintf(detail, sizeof(detail), "baton #%lld taken by %s",
	    (long long)b->id, req->session != NULL ? req->session : "-");
	/* Every note's sender, as long as its name is still in the scope. */
	for (p = b->senders; rc == PGN_OK && p != NULL && *p != '\0';) {
		end = strchr(p, ',');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n > 0 && n <= PGN_MAX_NAME) {
			memcpy(who, p, n);
			who[n] = '\0';
			rc = pgn_select_i64(db, SQL_BATON_SENDER, &sender,
			    "finding a baton's sender", PGN_I(b->id),
			    PGN_T(who));
			if (rc == PGN_OK)
				rc = pgn_journal_add(db, sender, "handoff", msg,
				    name, detail, now);
			if (rc == PGN_ENOTFOUND)
				rc = PGN_OK;
		}
		p = end != NULL ? end + 1 : NULL;
	}
	if (rc == PGN_OK) {
		b->message_id = msg;
		b->taken_ms = now;
	}
	return rc;
}

pgn_status
pgn_env_file_export(const char *path, const char *key, struct pgn_err *err)
{
	struct pgn_buf b;
	const char *c;
	pgn_status rc = PGN_OK;
	ssize_t w;
	size_t off = 0;
	int fd;

	if (path == NULL || path[0] != '/' || strlen(path) >= PGN_MAX_PATH) {
		return pgn_err_set(err, PGN_EINVAL,
		    "CLAUDE_ENV_FILE is not an absolute path");
	}
	/* A session key is printable without spaces: quote it whole. */
	for (c = key; c != NULL && *c != '\0'; c++)
		if ((unsigned char)*c < 0x21 || *c == 0x7f || *c == '\'') {
			return pgn_err_set(err, PGN_EINVAL,
			    "session key cannot be quoted for a shell");
		}
	if (key == NULL || key[0] == '\0' ||
	    strlen(key) > PGN_MAX_SESSION_KEY) {
		return pgn_err_set(err, PGN_EINVAL, "no usable session key");
	}
	pgn_buf_init(&b, PGN_MAX_SESSION_KEY + 64);
	pgn_buf_addf(&b, "export PIGEON_SESSION='%s'\n", key);
	if (b.err != PGN_OK) {
		pgn_buf_release(&b);
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0) {
		pgn_buf_release(&b);
		return pgn_err_set(err, PGN_EIO,
		    "cannot open CLAUDE_ENV_FILE: %s", strerror(errno));
	}
	/* One write under O_APPEND: the line lands whole after the others. */
	while (off < b.len) {
		w = write(fd, b.data + off, b.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = pgn_err_set(err, PGN_EIO,
			    "cannot write CLAUDE_ENV_FILE: %s",
			    w < 0 ? strerror(errno) : "short write");
			break;
		}
		off += (size_t)w;
	}
	if (close(fd) != 0 && rc == PGN_OK) {
		rc = pgn_err_set(err, PGN_EIO,
		    "cannot write CLAUDE_ENV_FILE: %s", strerror(errno));
	}
	pgn_buf_release(&b);
	return rc;
}
