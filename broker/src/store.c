/*
 * The mailbox store: every SQL statement of Pigeon's data model lives
 * here (scopes, agents, sessions, send, inbox, claim, audit, journal),
 * so a second backend replaces this one module.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "pgn_int.h"

#define SCOPE_LABEL(db) ((db)->scope[0] != '\0' ? (db)->scope : "global")

/* ---- SQL ----------------------------------------------------------- */

static const char SQL_SCOPE_GET[] = "SELECT id FROM scope WHERE root = ?1";
static const char SQL_SCOPE_ADD[] =
    "INSERT INTO scope(root) VALUES (?1) ON CONFLICT(root) DO NOTHING";
static const char SQL_AGENT_GET[] =
    "SELECT id FROM agent WHERE scope_id = ?1 AND name = ?2 "
    "AND removed_ms IS NULL";
/* The journal of a retired name stays readable: active first. */
static const char SQL_AGENT_GET_ANY[] =
    "SELECT id FROM agent WHERE scope_id = ?1 AND name = ?2 "
    "ORDER BY removed_ms IS NOT NULL, id DESC LIMIT 1";
static const char SQL_AGENT_ADD[] =
    "INSERT INTO agent(scope_id, name, created_ms) VALUES (?1, ?2, ?3)";
static const char SQL_AGENT_NAMES[] =
    "SELECT id, name FROM agent WHERE scope_id = ?1 AND removed_ms IS NULL "
    "ORDER BY name";
static const char SQL_AGENT_SEEN[] =
    "UPDATE agent SET last_seen_ms = ?2 WHERE id = ?1";
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
static const char SQL_SESSION_GET[] =
    "SELECT s.id, a.id, a.name, coalesce(s.last_turn, ''), "
    "coalesce(s.last_turn_ms, 0) FROM session s JOIN agent a "
    "ON a.id = s.agent_id WHERE s.key = ?1 AND a.scope_id = ?2 "
    "AND a.removed_ms IS NULL";
/*
 * A turn's no-mail check: the bound session's agent, when it was last
 * seen, and whether anything waits for it (the partial index).
 */
const char pgn_sql_turn_peek[] =
    "SELECT a.name, min(s.last_seen_ms, coalesce(a.last_seen_ms, 0)), "
    "EXISTS (SELECT 1 FROM message m WHERE m.recipient_id = a.id "
    "AND m.delivered_ms IS NULL) "
    "FROM session s JOIN agent a ON a.id = s.agent_id "
    "JOIN scope c ON c.id = a.scope_id "
    "WHERE s.key = ?1 AND c.root = ?2 AND a.removed_ms IS NULL";
static const char SQL_SESSION_SEEN[] =
    "UPDATE session SET last_seen_ms = ?2 WHERE id = ?1";
static const char SQL_SESSION_TURN[] =
    "UPDATE session SET last_turn = ?2, last_turn_ms = ?3, "
    "last_seen_ms = ?3 WHERE id = ?1";
static const char SQL_SESSION_PUT[] =
    "INSERT INTO session(key, host, agent_id, created_ms, last_seen_ms) "
    "VALUES (?1, ?2, ?3, ?4, ?4) ON CONFLICT(key) DO UPDATE SET "
    "agent_id = excluded.agent_id, host = excluded.host, "
    "last_seen_ms = excluded.last_seen_ms";
static const char SQL_SESSION_DROP[] =
    "DELETE FROM session WHERE agent_id = ?1";
static const char SQL_QUEUED_COUNT[] =
    "SELECT count(*) FROM message WHERE recipient_id = ?1 "
    "AND delivered_ms IS NULL";
static const char SQL_MSG_IN_SCOPE[] =
    "SELECT 1 FROM message WHERE id = ?1 AND scope_id = ?2";
static const char SQL_MSG_ADD[] =
    "INSERT INTO message(scope_id, sender, recipient_id, body, created_ms, "
    "reply_to) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
/* Served by the partial index message_queued, whatever the history. */
const char pgn_sql_queued[] =
    "SELECT m.id, m.sender, a.name, m.body, m.created_ms, "
    "coalesce(m.reply_to, 0) FROM message m JOIN agent a "
    "ON a.id = m.recipient_id WHERE m.recipient_id = ?1 "
    "AND m.delivered_ms IS NULL ORDER BY m.id LIMIT ?2";
static const char SQL_MSG_MARK[] =
    "UPDATE message SET delivered_ms = ?2 WHERE id = ?1 "
    "AND delivered_ms IS NULL";
static const char SQL_HEAD_GET[] =
    "SELECT n, hash FROM audit_head WHERE id = 1";
static const char SQL_HEAD_PUT[] =
    "INSERT INTO audit_head(id, n, hash) VALUES (1, ?1, ?2) "
    "ON CONFLICT(id) DO UPDATE SET n = excluded.n, hash = excluded.hash";
static const char SQL_DELIVERY_NEXT[] =
    "SELECT coalesce(max(id), 0) + 1 FROM delivery";
static const char SQL_DELIVERY_ADD[] =
    "INSERT INTO delivery(id, message_id, scope, sender, recipient, body, "
    "created_ms, reply_to, delivered_ms, session, host, route, bytes, hash) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, nullif(?8, 0), ?9, ?10, ?11, ?12, "
    "?13, ?14)";
#define DELIVERY_COLS                                                          \
	"id, message_id, scope, sender, recipient, body, created_ms, "         \
	"coalesce(reply_to, 0), delivered_ms, session, host, route, bytes, "   \
	"hash"
static const char SQL_DELIVERY_LIST[] =
    "SELECT " DELIVERY_COLS " FROM delivery WHERE scope = ?1 "
    "AND (?2 IS NULL OR recipient = ?2) AND (?3 IS NULL OR sender = ?3) "
    "AND delivered_ms >= ?4 ORDER BY id DESC LIMIT ?5";
static const char SQL_DELIVERY_GET[] =
    "SELECT " DELIVERY_COLS " FROM delivery WHERE id = ?1";
static const char SQL_DELIVERED_COUNT[] =
    "SELECT count(*) FROM message WHERE delivered_ms IS NOT NULL";
static const char SQL_DELIVERY_ALL[] =
    "SELECT " DELIVERY_COLS " FROM delivery ORDER BY id";
static const char SQL_JOURNAL_ADD[] =
    "INSERT INTO journal(agent_id, at_ms, kind, message_id, peer, detail) "
    "VALUES (?1, ?2, ?3, nullif(?4, 0), ?5, ?6)";
static const char SQL_JOURNAL_LIST[] =
    "SELECT j.id, j.at_ms, j.kind, coalesce(j.message_id, 0), j.peer, "
    "j.detail, coalesce(m.body, '') FROM journal j LEFT JOIN message m "
    "ON m.id = j.message_id AND j.kind IN ('sent', 'delivered') "
    "WHERE j.agent_id = ?1 AND j.id > ?2 ORDER BY j.id LIMIT ?3";

/* ---- helpers ------------------------------------------------------- */

static pgn_status
bind_text(pgn_db *db, sqlite3_stmt *st, int i, const char *s)
{
	int rc;

	rc = s == NULL ? sqlite3_bind_null(st, i) :
	                 sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	return rc == SQLITE_OK ? PGN_OK : pgn_fail_sql(db, rc, "binding");
}

static pgn_status
bind_i64(pgn_db *db, sqlite3_stmt *st, int i, int64_t v)
{
	int rc;

	rc = sqlite3_bind_int64(st, i, v);
	return rc == SQLITE_OK ? PGN_OK : pgn_fail_sql(db, rc, "binding");
}

/* Run a one-row query yielding an integer; PGN_ENOTFOUND if no row. */
static pgn_status
query_i64(pgn_db *db, sqlite3_stmt *st, int64_t *out, const char *what)
{
	int rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		return PGN_OK;
	}
	if (rc == SQLITE_DONE)
		return PGN_ENOTFOUND;
	return pgn_fail_sql(db, rc, what);
}

/* Id of the current scope; created when 'create', else ENOTFOUND. */
static pgn_status
scope_id(pgn_db *db, int create, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	if (db->scope_id != 0) {
		*id = db->scope_id;
		return PGN_OK;
	}
	if (create) {
		rc = pgn_prepare(db, SQL_SCOPE_ADD, &st);
		if (rc == PGN_OK)
			rc = bind_text(db, st, 1, db->scope);
		if (rc == PGN_OK)
			rc = pgn_step_done(db, st, "adding a scope");
		pgn_finish(db, st);
		st = NULL;
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_prepare(db, SQL_SCOPE_GET, &st);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 1, db->scope);
	if (rc == PGN_OK)
		rc = query_i64(db, st, id, "reading the scope");
	pgn_finish(db, st);
	/* Cache only what a committed transaction may have made. */
	if (rc == PGN_OK && !create)
		db->scope_id = *id;
	return rc;
}

static pgn_status
agent_id(pgn_db *db, int64_t sid, const char *name, int any, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, any ? SQL_AGENT_GET_ANY : SQL_AGENT_GET, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, sid);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 2, name);
	if (rc == PGN_OK)
		rc = query_i64(db, st, id, "reading an agent");
	pgn_finish(db, st);
	return rc;
}

static pgn_status
journal_add(pgn_db *db, int64_t agent, const char *kind, int64_t msg,
    const char *peer, const char *detail, int64_t now)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, SQL_JOURNAL_ADD, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, agent);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 2, now);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 3, kind);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 4, msg);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 5, peer != NULL ? peer : "");
	if (rc == PGN_OK)
		rc = bind_text(db, st, 6, detail != NULL ? detail : "");
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "writing the journal");
	pgn_finish(db, st);
	return rc;
}

static pgn_status
agent_insert(pgn_db *db, int64_t sid, const char *name, const char *why,
    int64_t now, int64_t *id)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, SQL_AGENT_ADD, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, sid);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 2, name);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 3, now);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "adding an agent");
	pgn_finish(db, st);
	if (rc != PGN_OK)
		return rc;
	*id = sqlite3_last_insert_rowid(db->sql);
	return journal_add(db, *id, "created", 0, NULL, why, now);
}

static pgn_status
exec_id(pgn_db *db, const char *sql, int64_t id, int64_t v, const char *what)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, id);
	if (rc == PGN_OK && sqlite3_bind_parameter_count(st) >= 2)
		rc = bind_i64(db, st, 2, v);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, what);
	pgn_finish(db, st);
	return rc;
}

static pgn_status
queued_count(pgn_db *db, int64_t agent, int64_t *n)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, SQL_QUEUED_COUNT, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, agent);
	if (rc == PGN_OK)
		rc = query_i64(db, st, n, "counting queued messages");
	pgn_finish(db, st);
	return rc;
}

/*
 * Explain an unknown name: the known names of the scope and the closest
 * one, so the user can fix a typo in one step.
 */
static pgn_status
fail_unknown(pgn_db *db, int64_t sid, const char *name, int sending)
{
	sqlite3_stmt *st = NULL;
	struct pgn_buf known;
	char best[PGN_MAX_NAME + 1] = "";
	size_t d, bestd = 3, n = 0;
	const char *s;
	pgn_status rc;

	pgn_buf_init(&known, 512);
	rc = pgn_prepare(db, SQL_AGENT_NAMES, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, sid);
	while (rc == PGN_OK && sqlite3_step(st) == SQLITE_ROW) {
		s = (const char *)sqlite3_column_text(st, 1);
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
		rc = pgn_fail(db, PGN_ENOTFOUND,
		    "no agent '%s' in scope '%s'"
		    " (known: %s).%s%s%s%s",
		    name, SCOPE_LABEL(db), n ? known.data : "none",
		    best[0] ? " Did you mean '" : "", best, best[0] ? "'?" : "",
		    sending ? " --create queues it "
		              "for an agent that will appear later" :
		              " See pigeon agents");
	}
	pgn_buf_release(&known);
	return rc;
}

/* Resolve a checked name in the current scope or explain the failure. */
static pgn_status
need_agent(pgn_db *db, const char *name, int any, int64_t *id)
{
	int64_t sid;
	pgn_status rc;

	rc = scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return pgn_fail(db, rc,
		    "no agent '%s' in scope '%s' (known: "
		    "none)",
		    name, SCOPE_LABEL(db));
	if (rc != PGN_OK)
		return rc;
	rc = agent_id(db, sid, name, any, id);
	if (rc == PGN_ENOTFOUND)
		return fail_unknown(db, sid, name, 0);
	return rc;
}

static pgn_status
check_name(pgn_db *db, const char *field, const char *in, char *out)
{
	const char *rule;

	if (in == NULL)
		return pgn_fail(db, PGN_EINVAL, "%s: a name is required",
		    field);
	if (pgn_name_check(in, out, &rule) != PGN_OK)
		return pgn_fail(db, PGN_EINVAL, "%s '%.80s': %s", field, in,
		    rule);
	return PGN_OK;
}

/* ---- message vectors ----------------------------------------------- */

void
pgn_msgs_release(struct pgn_msgs *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->v[i].sender);
		free(m->v[i].recipient);
		free(m->v[i].body);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Append the current row of pgn_sql_queued. */
static pgn_status
msgs_push(pgn_db *db, struct pgn_msgs *m, sqlite3_stmt *st)
{
	struct pgn_msg *x;

	if (!pgn_vec_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	x = &m->v[m->n];
	x->id = sqlite3_column_int64(st, 0);
	x->sender = pgn_col_text(st, 1);
	x->recipient = pgn_col_text(st, 2);
	x->body = pgn_col_text(st, 3);
	x->body_len = (size_t)sqlite3_column_bytes(st, 3);
	x->created_ms = sqlite3_column_int64(st, 4);
	x->reply_to = sqlite3_column_int64(st, 5);
	m->n++;
	if (x->sender == NULL || x->recipient == NULL || x->body == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	return PGN_OK;
}

/* ---- send ---------------------------------------------------------- */

struct rcpt {
	int64_t id;
	char name[PGN_MAX_NAME + 1];
};

struct send_ctx {
	const struct pgn_send *req;
	char from[PGN_MAX_NAME + 1];
	char (*to)[PGN_MAX_NAME + 1];
	struct rcpt *rcpt; /* resolved agents */
	size_t nrcpt;
	size_t maxrcpt;
	struct pgn_sent *sent;
	size_t maxsent;
	size_t *nsent;
};

static pgn_status
add_rcpt(pgn_db *db, struct send_ctx *c, int64_t id, const char *name)
{
	struct rcpt *r;
	size_t i;

	for (i = 0; i < c->nrcpt; i++)
		if (c->rcpt[i].id == id)
			return PGN_OK;
	if (!pgn_vec_grow((void **)&c->rcpt, &c->maxrcpt, c->nrcpt,
	        sizeof(*c->rcpt)))
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	r = &c->rcpt[c->nrcpt++];
	r->id = id;
	r->name[0] = '\0';
	if (name != NULL && strlen(name) < sizeof(r->name))
		memcpy(r->name, name, strlen(name) + 1);
	return PGN_OK;
}

static pgn_status
resolve_rcpts(pgn_db *db, struct send_ctx *c, int64_t sid, int64_t from_id,
    int64_t now)
{
	sqlite3_stmt *st = NULL;
	const struct pgn_send *req = c->req;
	pgn_status rc = PGN_OK;
	int64_t id;
	size_t i;

	c->nrcpt = 0;
	for (i = 0; i < req->nto && rc == PGN_OK; i++) {
		if (strcmp(c->to[i], "all") == 0) {
			rc = pgn_prepare(db, SQL_AGENT_NAMES, &st);
			if (rc == PGN_OK)
				rc = bind_i64(db, st, 1, sid);
			while (rc == PGN_OK && sqlite3_step(st) == SQLITE_ROW) {
				id = sqlite3_column_int64(st, 0);
				if (id != from_id)
					rc = add_rcpt(db, c, id,
					    (const char *)
					        sqlite3_column_text(st, 1));
			}
			pgn_finish(db, st);
			st = NULL;
			continue;
		}
		rc = agent_id(db, sid, c->to[i], 0, &id);
		if (rc == PGN_ENOTFOUND && req->create)
			rc = agent_insert(db, sid, c->to[i],
			    "created by "
			    "--create",
			    now, &id);
		else if (rc == PGN_ENOTFOUND)
			rc = fail_unknown(db, sid, c->to[i], 1);
		if (rc == PGN_OK)
			rc = add_rcpt(db, c, id, c->to[i]);
	}
	if (rc == PGN_OK && c->nrcpt == 0)
		rc = pgn_fail(db, PGN_ENOTFOUND,
		    "'all' names no other agent "
		    "in scope '%s'",
		    SCOPE_LABEL(db));
	return rc;
}

static pgn_status
send_tx(pgn_db *db, void *arg)
{
	struct send_ctx *c = arg;
	const struct pgn_send *req = c->req;
	sqlite3_stmt *st = NULL;
	int64_t sid, from_id = 0, n, id, now;
	size_t i;
	pgn_status rc;

	*c->nsent = 0;
	now = pgn_now_ms();
	rc = scope_id(db, 1, &sid);
	if (rc != PGN_OK)
		return rc;
	rc = agent_id(db, sid, c->from, 0, &from_id);
	if (rc == PGN_ENOTFOUND) {
		from_id = 0; /* a person, or an agent of no scope */
		rc = PGN_OK;
	}
	if (rc == PGN_OK)
		rc = resolve_rcpts(db, c, sid, from_id, now);
	if (rc != PGN_OK)
		return rc;
	if (c->nrcpt > c->maxsent)
		return pgn_fail(db, PGN_ETOOBIG, "%zu recipients: at most %zu",
		    c->nrcpt, c->maxsent);
	if (req->reply_to != 0) {
		rc = pgn_prepare(db, SQL_MSG_IN_SCOPE, &st);
		if (rc == PGN_OK)
			rc = bind_i64(db, st, 1, req->reply_to);
		if (rc == PGN_OK)
			rc = bind_i64(db, st, 2, sid);
		if (rc == PGN_OK)
			rc = query_i64(db, st, &n, "reading a message");
		pgn_finish(db, st);
		st = NULL;
		if (rc == PGN_ENOTFOUND)
			return pgn_fail(db, PGN_EINVAL,
			    "--reply-to %lld: no "
			    "such message in scope '%s'; check the id with "
			    "pigeon inbox or pigeon audit",
			    (long long)req->reply_to, SCOPE_LABEL(db));
		if (rc != PGN_OK)
			return rc;
	}
	/* All or nothing: check every cap before the first insert. */
	for (i = 0; i < c->nrcpt; i++) {
		rc = queued_count(db, c->rcpt[i].id, &n);
		if (rc != PGN_OK)
			return rc;
		if (n >= PGN_MAX_PENDING)
			return pgn_fail(db, PGN_EFULL,
			    "agent '%s' already has "
			    "%lld messages waiting (the cap is %d); nothing "
			    "was sent: wait until it reads them",
			    c->rcpt[i].name, (long long)n, PGN_MAX_PENDING);
	}
	rc = pgn_prepare(db, SQL_MSG_ADD, &st);
	for (i = 0; rc == PGN_OK && i < c->nrcpt; i++) {
		sqlite3_reset(st);
		rc = bind_i64(db, st, 1, sid);
		if (rc == PGN_OK)
			rc = bind_text(db, st, 2, c->from);
		if (rc == PGN_OK)
			rc = bind_i64(db, st, 3, c->rcpt[i].id);
		if (rc == PGN_OK &&
		    sqlite3_bind_text(st, 4, req->body, (int)req->body_len,
		        SQLITE_STATIC) != SQLITE_OK)
			rc = pgn_fail_sql(db, sqlite3_errcode(db->sql),
			    "binding");
		if (rc == PGN_OK)
			rc = bind_i64(db, st, 5, now);
		if (rc == PGN_OK)
			rc = req->reply_to ?
			    bind_i64(db, st, 6, req->reply_to) :
			    bind_text(db, st, 6, NULL);
		if (rc == PGN_OK)
			rc = pgn_step_done(db, st, "queueing a message");
		if (rc != PGN_OK)
			break;
		id = sqlite3_last_insert_rowid(db->sql);
		c->sent[*c->nsent].id = id;
		memcpy(c->sent[*c->nsent].to, c->rcpt[i].name,
		    sizeof(c->rcpt[i].name));
		(*c->nsent)++;
		if (from_id != 0)
			rc = journal_add(db, from_id, "sent", id,
			    c->rcpt[i].name, NULL, now);
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_send(pgn_db *db, const struct pgn_send *req, struct pgn_sent *sent,
    size_t maxsent, size_t *nsent)
{
	struct send_ctx c;
	pgn_status rc;
	size_t i;

	*nsent = 0;
	memset(&c, 0, sizeof(c));
	c.req = req;
	c.sent = sent;
	c.maxsent = maxsent;
	c.nsent = nsent;
	if (req->body_len > PGN_MAX_BODY)
		return pgn_fail(db, PGN_ETOOBIG,
		    "message body is %zu bytes, "
		    "over the limit of %d: write it to a file and send the "
		    "file's path",
		    req->body_len, PGN_MAX_BODY);
	if (req->body_len == 0)
		return pgn_fail(db, PGN_EINVAL,
		    "message body is empty: give the "
		    "text as arguments or on standard input");
	if (memchr(req->body, '\0', req->body_len) != NULL)
		return pgn_fail(db, PGN_EINVAL,
		    "message body contains a NUL "
		    "byte: send text");
	if (!pgn_utf8_valid(req->body, req->body_len))
		return pgn_fail(db, PGN_EINVAL,
		    "message body is not valid "
		    "UTF-8: send text");
	if (req->nto == 0)
		return pgn_fail(db, PGN_EINVAL,
		    "no recipient: name one with "
		    "--to");
	if (req->nto > PGN_MAX_RECIPIENTS)
		return pgn_fail(db, PGN_ETOOBIG,
		    "%zu recipients: at most %d "
		    "names in one send",
		    req->nto, PGN_MAX_RECIPIENTS);
	if (req->reply_to < 0)
		return pgn_fail(db, PGN_EINVAL,
		    "--reply-to must be a message "
		    "id");
	rc = check_name(db, "sender", req->from, c.from);
	if (rc != PGN_OK)
		return rc;
	c.to = calloc(req->nto, sizeof(*c.to));
	if (c.to == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	for (i = 0; i < req->nto; i++) {
		if (req->to[i] != NULL && strcmp(req->to[i], "all") == 0) {
			memcpy(c.to[i], "all", 4);
			continue;
		}
		rc = check_name(db, "recipient", req->to[i], c.to[i]);
		if (rc != PGN_OK)
			goto out;
	}
	rc = pgn_tx(db, send_tx, &c);
	if (rc != PGN_OK)
		*nsent = 0;
out:
	free(c.to);
	free(c.rcpt);
	return rc;
}

/* ---- inbox and claim ----------------------------------------------- */

struct inbox_ctx {
	char agent[PGN_MAX_NAME + 1];
	struct pgn_msgs *out;
};

static pgn_status
inbox_tx(pgn_db *db, void *arg)
{
	struct inbox_ctx *c = arg;
	sqlite3_stmt *st = NULL;
	int64_t aid;
	pgn_status rc;
	int r;

	pgn_msgs_release(c->out);
	rc = need_agent(db, c->agent, 0, &aid);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, pgn_sql_queued, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, aid);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 2, PGN_MAX_LIST);
	while (rc == PGN_OK && (r = sqlite3_step(st)) == SQLITE_ROW)
		rc = msgs_push(db, c->out, st);
	if (rc == PGN_OK && r != SQLITE_DONE)
		rc = pgn_fail_sql(db, r, "reading the inbox");
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_inbox(pgn_db *db, const char *agent, struct pgn_msgs *out)
{
	struct inbox_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.out = out;
	rc = check_name(db, "agent", agent, c.agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_read(db, inbox_tx, &c);
	if (rc != PGN_OK)
		pgn_msgs_release(out);
	return rc;
}

struct claim_ctx {
	const struct pgn_claim *req;
	char agent[PGN_MAX_NAME + 1];
	struct pgn_msgs *out;
};

/* Copy one claimed message into the audit, extending the chain. */
static pgn_status
audit_append(pgn_db *db, const struct pgn_claim *req, const struct pgn_msg *m,
    int64_t now)
{
	sqlite3_stmt *st = NULL;
	struct pgn_delivery d;
	unsigned char prev[PGN_HASH_BYTES] = {0};
	int64_t n = 0;
	pgn_status rc;
	int r;

	rc = pgn_prepare(db, SQL_HEAD_GET, &st);
	if (rc != PGN_OK)
		return rc;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		n = sqlite3_column_int64(st, 0);
		if (sqlite3_column_bytes(st, 1) == PGN_HASH_BYTES)
			memcpy(prev, sqlite3_column_blob(st, 1),
			    PGN_HASH_BYTES);
	} else if (r != SQLITE_DONE) {
		rc = pgn_fail_sql(db, r, "reading the audit head");
	}
	pgn_finish(db, st);
	st = NULL;
	if (rc != PGN_OK)
		return rc;

	memset(&d, 0, sizeof(d));
	rc = pgn_prepare(db, SQL_DELIVERY_NEXT, &st);
	if (rc == PGN_OK)
		rc = query_i64(db, st, &d.id, "numbering a delivery");
	pgn_finish(db, st);
	st = NULL;
	if (rc != PGN_OK)
		return rc;
	d.message_id = m->id;
	d.reply_to = m->reply_to;
	d.created_ms = m->created_ms;
	d.delivered_ms = now;
	d.bytes = (int64_t)m->body_len;
	d.scope = db->scope;
	d.sender = m->sender;
	d.recipient = m->recipient;
	d.session = (char *)(req->session ? req->session : "");
	d.host = (char *)(req->host ? req->host : "");
	d.route = (char *)req->route;
	d.body = m->body;
	pgn_chain_hash(prev, &d, d.hash);

	rc = pgn_prepare(db, SQL_DELIVERY_ADD, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, d.id);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 2, d.message_id);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 3, d.scope);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 4, d.sender);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 5, d.recipient);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 6, d.body);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 7, d.created_ms);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 8, d.reply_to);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 9, d.delivered_ms);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 10, d.session);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 11, d.host);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 12, d.route);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 13, d.bytes);
	if (rc == PGN_OK &&
	    sqlite3_bind_blob(st, 14, d.hash, PGN_HASH_BYTES, SQLITE_STATIC) !=
	        SQLITE_OK)
		rc = pgn_fail_sql(db, sqlite3_errcode(db->sql), "binding");
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "writing the audit");
	pgn_finish(db, st);
	st = NULL;
	if (rc != PGN_OK)
		return rc;

	rc = pgn_prepare(db, SQL_HEAD_PUT, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, n + 1);
	if (rc == PGN_OK &&
	    sqlite3_bind_blob(st, 2, d.hash, PGN_HASH_BYTES, SQLITE_STATIC) !=
	        SQLITE_OK)
		rc = pgn_fail_sql(db, sqlite3_errcode(db->sql), "binding");
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "writing the audit head");
	pgn_finish(db, st);
	return rc;
}

/*
 * The claim, inside the caller's write transaction: take queued
 * messages of agent 'aid' oldest first within the budget, mark each
 * delivered, copy it into the audit and journal it for the recipient.
 */
static pgn_status
claim_in_tx(pgn_db *db, const struct pgn_claim *req, int64_t aid,
    struct pgn_msgs *out)
{
	sqlite3_stmt *st = NULL, *mark = NULL;
	size_t spent = 0, cost, i;
	int64_t queued, now;
	struct pgn_msg *m;
	pgn_status rc;
	int r = SQLITE_DONE;

	pgn_msgs_release(out);
	now = pgn_now_ms();
	rc = queued_count(db, aid, &queued);
	if (rc != PGN_OK || queued == 0)
		return rc;
	rc = pgn_prepare(db, pgn_sql_queued, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, aid);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 2, PGN_MAX_LIST);
	while (rc == PGN_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		rc = msgs_push(db, out, st);
		if (rc != PGN_OK)
			break;
		m = &out->v[out->n - 1];
		cost = req->cost ? req->cost(m, req->cost_arg) : m->body_len;
		/* The oldest always goes, so no message jams the queue. */
		if (req->budget != 0 && out->n > 1 &&
		    (cost > req->budget || spent > req->budget - cost)) {
			free(m->sender);
			free(m->recipient);
			free(m->body);
			out->n--;
			r = SQLITE_DONE;
			break;
		}
		spent += cost;
	}
	if (rc == PGN_OK && r != SQLITE_DONE)
		rc = pgn_fail_sql(db, r, "reading the queue");
	pgn_finish(db, st);
	if (rc != PGN_OK)
		return rc;

	rc = pgn_prepare(db, SQL_MSG_MARK, &mark);
	for (i = 0; rc == PGN_OK && i < out->n; i++) {
		m = &out->v[i];
		sqlite3_reset(mark);
		rc = bind_i64(db, mark, 1, m->id);
		if (rc == PGN_OK)
			rc = bind_i64(db, mark, 2, now);
		if (rc == PGN_OK)
			rc = pgn_step_done(db, mark, "claiming a message");
		/* Under the write lock a queued row cannot vanish. */
		if (rc == PGN_OK && sqlite3_changes(db->sql) != 1)
			rc = pgn_fail(db, PGN_EDB,
			    "message %lld was claimed "
			    "twice",
			    (long long)m->id);
		if (rc == PGN_OK)
			rc = audit_append(db, req, m, now);
		if (rc == PGN_OK)
			rc = journal_add(db, aid, "delivered", m->id, m->sender,
			    req->route, now);
	}
	pgn_finish(db, mark);
	out->left = (size_t)queued - out->n;
	return rc;
}

static pgn_status
claim_tx(pgn_db *db, void *arg)
{
	struct claim_ctx *c = arg;
	int64_t aid;
	pgn_status rc;

	rc = need_agent(db, c->agent, 0, &aid);
	if (rc == PGN_OK)
		rc = claim_in_tx(db, c->req, aid, c->out);
	if (rc == PGN_OK)
		rc = exec_id(db, SQL_AGENT_SEEN, aid, pgn_now_ms(),
		    "marking seen");
	return rc;
}

pgn_status
pgn_claim(pgn_db *db, const struct pgn_claim *req, struct pgn_msgs *out)
{
	struct claim_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.req = req;
	c.out = out;
	if (req->route == NULL ||
	    (strcmp(req->route, "session-start") != 0 &&
	        strcmp(req->route, "prompt") != 0 &&
	        strcmp(req->route, "cli") != 0))
		return pgn_fail(db, PGN_EINVAL,
		    "claim route must be "
		    "session-start, prompt or cli");
	rc = check_name(db, "agent", req->agent, c.agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_tx(db, claim_tx, &c);
	if (rc != PGN_OK)
		pgn_msgs_release(out);
	return rc;
}

/* ---- agents -------------------------------------------------------- */

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
	sqlite3_stmt *st = NULL;
	int64_t sid;
	pgn_status rc;
	int r = SQLITE_DONE;

	pgn_agents_release(out);
	rc = scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK;
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, SQL_AGENT_LIST, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, sid);
	while (rc == PGN_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n,
		        sizeof(*out->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		x = &out->v[out->n++];
		x->name = pgn_col_text(st, 0);
		x->created_ms = sqlite3_column_int64(st, 1);
		x->last_seen_ms = sqlite3_column_int64(st, 2);
		x->hosts = pgn_col_text(st, 3);
		x->sessions = sqlite3_column_int64(st, 4);
		x->queued = sqlite3_column_int64(st, 5);
		if (x->name == NULL || x->hosts == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	if (rc == PGN_OK && r != SQLITE_DONE)
		rc = pgn_fail_sql(db, r, "listing agents");
	pgn_finish(db, st);
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
	char *bound; /* session_bind: out */
	const char *host;
	const char *key;
};

static pgn_status
add_tx(pgn_db *db, void *arg)
{
	struct agent_ctx *c = arg;
	int64_t sid, id;
	pgn_status rc;

	rc = scope_id(db, 1, &sid);
	if (rc != PGN_OK)
		return rc;
	rc = agent_id(db, sid, c->a, 0, &id);
	if (rc == PGN_OK)
		return pgn_fail(db, PGN_EEXIST,
		    "agent '%s' already exists in "
		    "scope '%s'",
		    c->a, SCOPE_LABEL(db));
	if (rc != PGN_ENOTFOUND)
		return rc;
	return agent_insert(db, sid, c->a, "added", pgn_now_ms(), &id);
}

pgn_status
pgn_agent_add(pgn_db *db, const char *name)
{
	struct agent_ctx c;
	pgn_status rc;

	rc = check_name(db, "agent", name, c.a);
	if (rc != PGN_OK)
		return rc;
	return pgn_tx(db, add_tx, &c);
}

static pgn_status
rename_tx(pgn_db *db, void *arg)
{
	struct agent_ctx *c = arg;
	struct pgn_buf why;
	sqlite3_stmt *st = NULL;
	int64_t sid, id, other;
	pgn_status rc;

	rc = need_agent(db, c->a, 0, &id);
	if (rc != PGN_OK)
		return rc;
	rc = scope_id(db, 0, &sid);
	if (rc != PGN_OK)
		return rc;
	rc = agent_id(db, sid, c->b, 0, &other);
	if (rc == PGN_OK)
		return pgn_fail(db, PGN_EEXIST,
		    "agent '%s' already exists in "
		    "scope '%s'",
		    c->b, SCOPE_LABEL(db));
	if (rc != PGN_ENOTFOUND)
		return rc;
	rc = pgn_prepare(db, SQL_AGENT_RENAME, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, id);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 2, c->b);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "renaming an agent");
	pgn_finish(db, st);
	if (rc != PGN_OK)
		return rc;
	pgn_buf_init(&why, 2 * PGN_MAX_NAME + 16);
	pgn_buf_addf(&why, "%s -> %s", c->a, c->b);
	rc = why.err == PGN_OK ?
	    journal_add(db, id, "renamed", 0, NULL, why.data, pgn_now_ms()) :
	    pgn_fail(db, why.err, "out of memory");
	pgn_buf_release(&why);
	return rc;
}

pgn_status
pgn_agent_rename(pgn_db *db, const char *from, const char *to)
{
	struct agent_ctx c;
	pgn_status rc;

	rc = check_name(db, "agent", from, c.a);
	if (rc == PGN_OK)
		rc = check_name(db, "new name", to, c.b);
	if (rc != PGN_OK)
		return rc;
	if (strcmp(c.a, c.b) == 0)
		return pgn_fail(db, PGN_EINVAL,
		    "agent '%s' already has that "
		    "name",
		    c.a);
	return pgn_tx(db, rename_tx, &c);
}

static pgn_status
rm_tx(pgn_db *db, void *arg)
{
	struct agent_ctx *c = arg;
	int64_t id, n, now;
	pgn_status rc;

	rc = need_agent(db, c->a, 0, &id);
	if (rc != PGN_OK)
		return rc;
	rc = queued_count(db, id, &n);
	if (rc != PGN_OK)
		return rc;
	if (n > 0)
		return pgn_fail(db, PGN_EFULL,
		    "agent '%s' still has %lld "
		    "queued message%s: read them first (pigeon read --agent "
		    "%s)",
		    c->a, (long long)n, n == 1 ? "" : "s", c->a);
	now = pgn_now_ms();
	rc = exec_id(db, SQL_AGENT_REMOVE, id, now, "removing an agent");
	if (rc == PGN_OK)
		rc = exec_id(db, SQL_SESSION_DROP, id, 0, "unbinding sessions");
	if (rc == PGN_OK)
		rc = journal_add(db, id, "removed", 0, NULL, NULL, now);
	return rc;
}

pgn_status
pgn_agent_rm(pgn_db *db, const char *name)
{
	struct agent_ctx c;
	pgn_status rc;

	rc = check_name(db, "agent", name, c.a);
	if (rc != PGN_OK)
		return rc;
	return pgn_tx(db, rm_tx, &c);
}

/* What binding a session found or made. */
struct bound {
	int64_t session; /* session row */
	int64_t agent;   /* agent row */
	char name[PGN_MAX_NAME + 1];
	char last_turn[PGN_MAX_SESSION_KEY + 1];
	int64_t last_turn_ms;
	int fresh; /* bound by this call */
};

/* A generated name not yet taken in scope 'sid'. */
static pgn_status
fresh_name(pgn_db *db, int64_t sid, char out[PGN_MAX_NAME + 1])
{
	unsigned attempt;
	int64_t id;
	pgn_status rc;

	for (attempt = 0; attempt < 64; attempt++) {
		pgn_name_generate(out, attempt);
		rc = agent_id(db, sid, out, 0, &id);
		if (rc == PGN_ENOTFOUND)
			return PGN_OK;
		if (rc != PGN_OK)
			return rc;
	}
	return pgn_fail(db, PGN_EEXIST,
	    "no free generated name in scope "
	    "'%s'",
	    SCOPE_LABEL(db));
}

static void
copy_col(char *dst, size_t max, sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	size_t n = (size_t)sqlite3_column_bytes(st, col);

	if (t == NULL || n >= max)
		n = 0;
	if (n > 0)
		memcpy(dst, t, n);
	dst[n] = '\0';
}

/*
 * Find session 'key' in scope 'sid', or bind it to 'agent' (a checked
 * name, or NULL for a generated one), creating the agent if needed.
 */
static pgn_status
bind_in_tx(pgn_db *db, int64_t sid, const char *host, const char *key,
    const char *agent, int64_t now, struct bound *out)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;
	int r;

	memset(out, 0, sizeof(*out));
	rc = pgn_prepare(db, SQL_SESSION_GET, &st);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 1, key);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 2, sid);
	if (rc == PGN_OK) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			out->session = sqlite3_column_int64(st, 0);
			out->agent = sqlite3_column_int64(st, 1);
			copy_col(out->name, sizeof(out->name), st, 2);
			copy_col(out->last_turn, sizeof(out->last_turn), st, 3);
			out->last_turn_ms = sqlite3_column_int64(st, 4);
		} else if (r != SQLITE_DONE) {
			rc = pgn_fail_sql(db, r, "reading a session");
		}
	}
	pgn_finish(db, st);
	st = NULL;
	if (rc != PGN_OK || out->session != 0)
		return rc;

	if (agent != NULL)
		memcpy(out->name, agent, strlen(agent) + 1);
	else
		rc = fresh_name(db, sid, out->name);
	if (rc == PGN_OK)
		rc = agent_id(db, sid, out->name, 0, &out->agent);
	if (rc == PGN_ENOTFOUND)
		rc = agent_insert(db, sid, out->name, key, now, &out->agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, SQL_SESSION_PUT, &st);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 1, key);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 2, host);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 3, out->agent);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 4, now);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "binding a session");
	pgn_finish(db, st);
	if (rc == PGN_OK)
		out->session = sqlite3_last_insert_rowid(db->sql);
	if (rc == PGN_OK)
		rc = journal_add(db, out->agent, "bound", 0, NULL, key, now);
	out->fresh = 1;
	return rc;
}

static pgn_status
check_session(pgn_db *db, const char *host, const char *key)
{
	if (host == NULL || *host == '\0' || key == NULL || *key == '\0')
		return pgn_fail(db, PGN_EINVAL,
		    "a session needs a host and "
		    "a key");
	if (strlen(key) > PGN_MAX_SESSION_KEY)
		return pgn_fail(db, PGN_ETOOBIG, "session key over %d bytes",
		    PGN_MAX_SESSION_KEY);
	return PGN_OK;
}

static pgn_status
bind_tx(pgn_db *db, void *arg)
{
	struct agent_ctx *c = arg;
	struct bound b;
	int64_t sid, now;
	pgn_status rc;

	now = pgn_now_ms();
	rc = scope_id(db, 1, &sid);
	if (rc == PGN_OK)
		rc = bind_in_tx(db, sid, c->host, c->key, c->a, now, &b);
	if (rc == PGN_OK && !b.fresh)
		rc = exec_id(db, SQL_SESSION_SEEN, b.session, now,
		    "marking a session seen");
	if (rc == PGN_OK)
		rc = exec_id(db, SQL_AGENT_SEEN, b.agent, now, "marking seen");
	if (rc == PGN_OK)
		memcpy(c->bound, b.name, strlen(b.name) + 1);
	return rc;
}

pgn_status
pgn_session_bind(pgn_db *db, const char *host, const char *key,
    const char *agent, char *bound)
{
	struct agent_ctx c;
	pgn_status rc;

	bound[0] = '\0';
	rc = check_session(db, host, key);
	if (rc == PGN_OK)
		rc = check_name(db, "agent", agent, c.a);
	if (rc != PGN_OK)
		return rc;
	c.host = host;
	c.key = key;
	c.bound = bound;
	return pgn_tx(db, bind_tx, &c);
}

struct turn_ctx {
	const struct pgn_turn *req;
	char agent[PGN_MAX_NAME + 1];
	struct pgn_turn_out *out;
};

static pgn_status
turn_tx(pgn_db *db, void *arg)
{
	struct turn_ctx *c = arg;
	const struct pgn_turn *req = c->req;
	struct pgn_claim claim;
	sqlite3_stmt *st = NULL;
	struct bound b;
	int64_t sid, now;
	pgn_status rc;

	pgn_msgs_release(&c->out->msgs);
	c->out->duplicate = 0;
	now = pgn_now_ms();
	rc = scope_id(db, 1, &sid);
	if (rc == PGN_OK)
		rc = bind_in_tx(db, sid, req->host, req->session,
		    req->agent != NULL ? c->agent : NULL, now, &b);
	if (rc != PGN_OK)
		return rc;
	memcpy(c->out->agent, b.name, sizeof(b.name));
	c->out->bound = b.fresh;
	if (req->turn != NULL && strcmp(b.last_turn, req->turn) == 0 &&
	    (req->turn_window_ms == 0 ||
	        now - b.last_turn_ms < req->turn_window_ms)) {
		c->out->duplicate = 1;
		return PGN_OK;
	}
	rc = pgn_prepare(db, SQL_SESSION_TURN, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, b.session);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 2, req->turn != NULL ? req->turn : "");
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 3, now);
	if (rc == PGN_OK)
		rc = pgn_step_done(db, st, "recording the turn");
	pgn_finish(db, st);
	memset(&claim, 0, sizeof(claim));
	claim.agent = b.name;
	claim.session = req->session;
	claim.host = req->host;
	claim.route = req->route;
	claim.budget = req->budget;
	/* The introduction goes first: its room comes off the budget. */
	if (b.fresh || strcmp(req->route, "session-start") == 0)
		claim.budget =
		    req->budget > req->intro ? req->budget - req->intro : 1;
	claim.cost = req->cost;
	claim.cost_arg = req->cost_arg;
	if (rc == PGN_OK)
		rc = claim_in_tx(db, &claim, b.agent, &c->out->msgs);
	if (rc == PGN_OK)
		rc = exec_id(db, SQL_AGENT_SEEN, b.agent, now, "marking seen");
	return rc;
}

struct peek_ctx {
	const struct pgn_turn *req;
	struct pgn_turn_out *out;
	int fast;
};

/* Read-only: a bound session, recently seen, with nothing to claim? */
static pgn_status
peek_tx(pgn_db *db, void *arg)
{
	struct peek_ctx *c = arg;
	sqlite3_stmt *st = NULL;
	pgn_status rc;
	int r;

	c->fast = 0;
	rc = pgn_prepare(db, pgn_sql_turn_peek, &st);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 1, c->req->session);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 2, db->scope);
	if (rc == PGN_OK) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			copy_col(c->out->agent, sizeof(c->out->agent), st, 0);
			c->fast = c->out->agent[0] != '\0' &&
			    sqlite3_column_int(st, 2) == 0 &&
			    pgn_now_ms() - sqlite3_column_int64(st, 1) <
			        PGN_SEEN_REFRESH_MS;
		} else if (r != SQLITE_DONE) {
			rc = pgn_fail_sql(db, r, "reading a session");
		}
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_turn_claim(pgn_db *db, const struct pgn_turn *req, struct pgn_turn_out *out)
{
	struct turn_ctx c;
	struct peek_ctx p;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.req = req;
	c.out = out;
	rc = check_session(db, req->host, req->session);
	if (rc == PGN_OK && req->agent != NULL)
		rc = check_name(db, "agent", req->agent, c.agent);
	if (rc == PGN_OK && req->turn != NULL &&
	    strlen(req->turn) > PGN_MAX_SESSION_KEY)
		rc = pgn_fail(db, PGN_ETOOBIG, "turn key over %d bytes",
		    PGN_MAX_SESSION_KEY);
	if (rc == PGN_OK &&
	    (req->route == NULL ||
	        (strcmp(req->route, "session-start") != 0 &&
	            strcmp(req->route, "prompt") != 0)))
		rc = pgn_fail(db, PGN_EINVAL,
		    "a turn's route is "
		    "session-start or prompt");
	if (rc != PGN_OK)
		return rc;
	if (req->only_mail) {
		/* Most prompts find no mail: no lock, no fsync for them. */
		p.req = req;
		p.out = out;
		rc = pgn_read(db, peek_tx, &p);
		if (rc != PGN_OK)
			return rc;
		if (p.fast) {
			out->fast = 1;
			return PGN_OK;
		}
		out->agent[0] = '\0';
	}
	rc = pgn_tx(db, turn_tx, &c);
	if (rc != PGN_OK)
		pgn_msgs_release(&out->msgs);
	return rc;
}

/* ---- audit --------------------------------------------------------- */

void
pgn_deliveries_release(struct pgn_deliveries *d)
{
	size_t i;
	struct pgn_delivery *x;

	if (d == NULL)
		return;
	for (i = 0; i < d->n; i++) {
		x = &d->v[i];
		free(x->scope);
		free(x->sender);
		free(x->recipient);
		free(x->session);
		free(x->host);
		free(x->route);
		free(x->body);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* Read a DELIVERY_COLS row into 'x' (caller releases strings). */
static int
delivery_row(sqlite3_stmt *st, struct pgn_delivery *x)
{
	memset(x, 0, sizeof(*x));
	x->id = sqlite3_column_int64(st, 0);
	x->message_id = sqlite3_column_int64(st, 1);
	x->scope = pgn_col_text(st, 2);
	x->sender = pgn_col_text(st, 3);
	x->recipient = pgn_col_text(st, 4);
	x->body = pgn_col_text(st, 5);
	x->created_ms = sqlite3_column_int64(st, 6);
	x->reply_to = sqlite3_column_int64(st, 7);
	x->delivered_ms = sqlite3_column_int64(st, 8);
	x->session = pgn_col_text(st, 9);
	x->host = pgn_col_text(st, 10);
	x->route = pgn_col_text(st, 11);
	x->bytes = sqlite3_column_int64(st, 12);
	if (sqlite3_column_bytes(st, 13) == PGN_HASH_BYTES)
		memcpy(x->hash, sqlite3_column_blob(st, 13), PGN_HASH_BYTES);
	return x->scope && x->sender && x->recipient && x->body && x->session &&
	    x->host && x->route;
}

struct audit_ctx {
	const struct pgn_audit_filter *f;
	char rcpt[PGN_MAX_NAME + 1];
	char sender[PGN_MAX_NAME + 1];
	int64_t id;
	struct pgn_deliveries *out;
	int64_t *checked;
	int64_t *bad;
};

static pgn_status
collect(pgn_db *db, sqlite3_stmt *st, struct pgn_deliveries *out)
{
	struct pgn_delivery *x;
	pgn_status rc = PGN_OK;
	int r;

	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (!pgn_vec_grow((void **)&out->v, &out->cap, out->n,
		        sizeof(*out->v)))
			return pgn_fail(db, PGN_ENOMEM, "out of memory");
		x = &out->v[out->n++];
		if (!delivery_row(st, x))
			return pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	if (r != SQLITE_DONE)
		rc = pgn_fail_sql(db, r, "reading the audit");
	return rc;
}

static pgn_status
audit_list_tx(pgn_db *db, void *arg)
{
	struct audit_ctx *c = arg;
	const struct pgn_audit_filter *f = c->f;
	sqlite3_stmt *st = NULL;
	pgn_status rc;
	size_t limit;

	pgn_deliveries_release(c->out);
	limit = f->limit ? f->limit : PGN_DEFAULT_LIST;
	rc = pgn_prepare(db, SQL_DELIVERY_LIST, &st);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 1, db->scope);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 2, f->recipient ? c->rcpt : NULL);
	if (rc == PGN_OK)
		rc = bind_text(db, st, 3, f->sender ? c->sender : NULL);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 4, f->since_ms);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 5, (int64_t)limit);
	if (rc == PGN_OK)
		rc = collect(db, st, c->out);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_audit_list(pgn_db *db, const struct pgn_audit_filter *f,
    struct pgn_deliveries *out)
{
	struct audit_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.f = f;
	c.out = out;
	if (f->limit > PGN_MAX_LIST)
		return pgn_fail(db, PGN_ETOOBIG, "--limit %zu: at most %d",
		    f->limit, PGN_MAX_LIST);
	if (f->recipient != NULL) {
		rc = check_name(db, "agent", f->recipient, c.rcpt);
		if (rc != PGN_OK)
			return rc;
	}
	if (f->sender != NULL) {
		rc = check_name(db, "sender", f->sender, c.sender);
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_read(db, audit_list_tx, &c);
	if (rc != PGN_OK)
		pgn_deliveries_release(out);
	return rc;
}

static pgn_status
audit_get_tx(pgn_db *db, void *arg)
{
	struct audit_ctx *c = arg;
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	pgn_deliveries_release(c->out);
	rc = pgn_prepare(db, SQL_DELIVERY_GET, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, c->id);
	if (rc == PGN_OK)
		rc = collect(db, st, c->out);
	pgn_finish(db, st);
	if (rc == PGN_OK && c->out->n == 0)
		rc = pgn_fail(db, PGN_ENOTFOUND,
		    "no delivery %lld in the "
		    "audit; list them with pigeon audit",
		    (long long)c->id);
	return rc;
}

pgn_status
pgn_audit_get(pgn_db *db, int64_t id, struct pgn_deliveries *out)
{
	struct audit_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.id = id;
	c.out = out;
	rc = pgn_read(db, audit_get_tx, &c);
	if (rc != PGN_OK)
		pgn_deliveries_release(out);
	return rc;
}

static pgn_status
verify_tx(pgn_db *db, void *arg)
{
	struct audit_ctx *c = arg;
	sqlite3_stmt *st = NULL;
	struct pgn_delivery x;
	unsigned char prev[PGN_HASH_BYTES] = {0}, h[PGN_HASH_BYTES];
	int64_t n = 0, head_n = 0;
	pgn_status rc;
	int r, have_head = 0, ok;

	*c->checked = 0;
	*c->bad = 0;
	rc = pgn_prepare(db, SQL_DELIVERY_ALL, &st);
	while (rc == PGN_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		ok = delivery_row(st, &x);
		if (ok) {
			pgn_chain_hash(prev, &x, h);
			ok = 2;
			if (sodium_memcmp(h, x.hash, PGN_HASH_BYTES) != 0)
				ok = 3;
		}
		free(x.scope);
		free(x.sender);
		free(x.recipient);
		free(x.session);
		free(x.host);
		free(x.route);
		free(x.body);
		if (ok == 0) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		if (ok == 3) {
			*c->bad = x.id;
			rc = pgn_fail(db, PGN_ETAMPER,
			    "audit row %lld does "
			    "not match its hash: it or the row before it was "
			    "edited, deleted or reordered",
			    (long long)x.id);
			break;
		}
		memcpy(prev, h, PGN_HASH_BYTES);
		n++;
		*c->checked = n;
	}
	if (rc == PGN_OK && r != SQLITE_DONE)
		rc = pgn_fail_sql(db, r, "reading the audit");
	pgn_finish(db, st);
	st = NULL;
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, SQL_HEAD_GET, &st);
	if (rc != PGN_OK)
		return rc;
	r = sqlite3_step(st);
	if (r == SQLITE_ROW) {
		have_head = 1;
		head_n = sqlite3_column_int64(st, 0);
		ok = sqlite3_column_bytes(st, 1) == PGN_HASH_BYTES &&
		    sodium_memcmp(sqlite3_column_blob(st, 1), prev,
		        PGN_HASH_BYTES) == 0;
	} else {
		ok = r == SQLITE_DONE;
		if (!ok)
			rc = pgn_fail_sql(db, r, "reading the audit head");
	}
	pgn_finish(db, st);
	if (rc != PGN_OK)
		return rc;
	if ((have_head && (head_n != n || !ok)) || (!have_head && n > 0)) {
		*c->bad = n + 1;
		return pgn_fail(db, PGN_ETAMPER,
		    "the audit holds %lld rows "
		    "but its head records %lld and another last hash: rows "
		    "were deleted or added at the end",
		    (long long)n, (long long)head_n);
	}
	/* Every delivered message has its row: a wiped audit shows. */
	rc = pgn_prepare(db, SQL_DELIVERED_COUNT, &st);
	if (rc == PGN_OK)
		rc = query_i64(db, st, &head_n, "counting deliveries");
	pgn_finish(db, st);
	if (rc == PGN_OK && head_n != n) {
		*c->bad = n + 1;
		rc = pgn_fail(db, PGN_ETAMPER,
		    "%lld messages are marked "
		    "delivered but the audit holds %lld rows: audit rows were "
		    "deleted",
		    (long long)head_n, (long long)n);
	}
	return rc;
}

pgn_status
pgn_audit_verify(pgn_db *db, int64_t *checked, int64_t *bad)
{
	struct audit_ctx c;

	memset(&c, 0, sizeof(c));
	c.checked = checked;
	c.bad = bad;
	return pgn_read(db, verify_tx, &c);
}

/* ---- journal ------------------------------------------------------- */

void
pgn_entries_release(struct pgn_entries *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->n; i++) {
		free(e->v[i].kind);
		free(e->v[i].peer);
		free(e->v[i].detail);
		free(e->v[i].body);
	}
	free(e->v);
	memset(e, 0, sizeof(*e));
}

struct journal_ctx {
	char agent[PGN_MAX_NAME + 1];
	int64_t after;
	size_t limit;
	struct pgn_entries *out;
};

static pgn_status
journal_tx(pgn_db *db, void *arg)
{
	struct journal_ctx *c = arg;
	sqlite3_stmt *st = NULL;
	struct pgn_entry *x;
	int64_t aid;
	pgn_status rc;
	int r = SQLITE_DONE;

	pgn_entries_release(c->out);
	rc = need_agent(db, c->agent, 1, &aid);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_prepare(db, SQL_JOURNAL_LIST, &st);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 1, aid);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 2, c->after);
	if (rc == PGN_OK)
		rc = bind_i64(db, st, 3, (int64_t)c->limit);
	while (rc == PGN_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (!pgn_vec_grow((void **)&c->out->v, &c->out->cap, c->out->n,
		        sizeof(*c->out->v))) {
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
			break;
		}
		x = &c->out->v[c->out->n++];
		x->id = sqlite3_column_int64(st, 0);
		x->at_ms = sqlite3_column_int64(st, 1);
		x->kind = pgn_col_text(st, 2);
		x->message_id = sqlite3_column_int64(st, 3);
		x->peer = pgn_col_text(st, 4);
		x->detail = pgn_col_text(st, 5);
		x->body = pgn_col_text(st, 6);
		if (!x->kind || !x->peer || !x->detail || !x->body)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	if (rc == PGN_OK && r != SQLITE_DONE)
		rc = pgn_fail_sql(db, r, "reading the journal");
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_journal_list(pgn_db *db, const char *agent, int64_t after, size_t limit,
    struct pgn_entries *out)
{
	struct journal_ctx c;
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	c.after = after;
	c.limit = limit == 0 || limit > PGN_MAX_LIST ? PGN_MAX_LIST : limit;
	c.out = out;
	rc = check_name(db, "agent", agent, c.agent);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_read(db, journal_tx, &c);
	if (rc != PGN_OK)
		pgn_entries_release(out);
	return rc;
}

/* ---- health -------------------------------------------------------- */

static const char SQL_HEALTH[] =
    "SELECT (SELECT count(*) FROM scope), "
    "(SELECT count(*) FROM agent WHERE removed_ms IS NULL), "
    "(SELECT count(*) FROM session), "
    "(SELECT count(*) FROM message WHERE delivered_ms IS NULL), "
    "(SELECT count(*) FROM delivery), (SELECT count(*) FROM journal)";

void
pgn_health_release(struct pgn_health *h)
{
	if (h == NULL)
		return;
	free(h->integrity);
	memset(h, 0, sizeof(*h));
}

static pgn_status
pragma_i64(pgn_db *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	pgn_status rc;

	rc = pgn_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = query_i64(db, st, out, "reading the database size");
	pgn_finish(db, st);
	return rc;
}

static pgn_status
health_tx(pgn_db *db, void *arg)
{
	struct pgn_health *h = arg;
	sqlite3_stmt *st = NULL;
	pgn_status rc;
	int r;

	pgn_health_release(h);
	rc = pgn_db_user_version(db, &h->schema_version);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, "PRAGMA integrity_check(1)", &st);
	if (rc == PGN_OK) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW)
			h->integrity = pgn_col_text(st, 0);
		else
			rc = pgn_fail_sql(db, r, "checking integrity");
		if (rc == PGN_OK && h->integrity == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	pgn_finish(db, st);
	st = NULL;
	if (rc == PGN_OK)
		rc = pragma_i64(db, "PRAGMA page_size", &h->page_size);
	if (rc == PGN_OK)
		rc = pragma_i64(db, "PRAGMA page_count", &h->pages);
	if (rc == PGN_OK)
		rc = pragma_i64(db, "PRAGMA freelist_count", &h->free_pages);
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_HEALTH, &st);
	if (rc == PGN_OK) {
		r = sqlite3_step(st);
		if (r == SQLITE_ROW) {
			h->scopes = sqlite3_column_int64(st, 0);
			h->agents = sqlite3_column_int64(st, 1);
			h->sessions = sqlite3_column_int64(st, 2);
			h->queued = sqlite3_column_int64(st, 3);
			h->deliveries = sqlite3_column_int64(st, 4);
			h->journal = sqlite3_column_int64(st, 5);
		} else {
			rc = pgn_fail_sql(db, r, "counting rows");
		}
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_db_health(pgn_db *db, struct pgn_health *h)
{
	pgn_status rc;

	memset(h, 0, sizeof(*h));
	rc = pgn_read(db, health_tx, h);
	if (rc != PGN_OK)
		pgn_health_release(h);
	return rc;
}
