/*
 * Full-text search of message bodies (docs/decisions/0170).
 *
 * SQLite: message_fts, an external-content FTS5 table over message.body
 * (schema/0009_search.sql). It has no trigger: every insert of a message
 * row is followed, in the same transaction, by pgn_search_index, so the
 * index and the messages commit or roll back together, and the schema a
 * hook run parses stays small. Messages are never updated nor deleted.
 * PostgreSQL: a GIN index over to_tsvector('simple', body), kept by the
 * server; pgn_search_index does nothing there.
 *
 * A search's words are all required, each matched as a word: FTS5 gets
 * each word as a quoted string, PostgreSQL the text through
 * plainto_tsquery('simple', ...). Newest first, by message id; a page
 * goes on below the last id shown (keyset, for pigeon web).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pigeon/pigeon.h"
#include "pigeon/search.h"
#include "pgn_int.h"
#include "search_int.h"
#include "store_int.h"

static const char SQL_FTS_ADD[] =
    "INSERT INTO message_fts(rowid, body) SELECT id, body FROM message "
    "WHERE id = ?1";

#define HIT_COLS                                                               \
	"m.id, coalesce(m.thread, m.id), coalesce(m.reply_to, 0), m.sender, "  \
	"a.name, m.body, m.created_ms, coalesce(m.delivered_ms, 0), "          \
	"coalesce(m.ack_ms, 0), coalesce(m.acked_ms, 0), m.priority, "         \
	"coalesce(m.woken_ms, 0), coalesce(m.woken_via, ''), "                 \
	"coalesce(m.grp, '')"
/*
 * FTS5 walks its index newest first (rowid DESC, the id bound below it
 * too), so a page stops after 'limit' rows that pass the filters.
 */
static const char SQL_SEARCH[] =
    "SELECT " HIT_COLS " FROM message_fts f JOIN message m ON m.id = f.rowid "
    "JOIN agent a ON a.id = m.recipient_id WHERE message_fts MATCH ?1 "
    "AND f.rowid < ?5 AND m.scope_id = ?2 AND (?3 IS NULL OR m.sender = ?3 "
    "OR a.name = ?3) AND m.created_ms >= ?4 ORDER BY f.rowid DESC LIMIT ?6";
static const char SQL_SEARCH_PG[] =
    "SELECT " HIT_COLS " FROM message m JOIN agent a ON a.id = "
    "m.recipient_id WHERE to_tsvector('simple', m.body) @@ "
    "plainto_tsquery('simple', ?1) AND m.id < ?5 AND m.scope_id = ?2 "
    "AND (?3 IS NULL OR m.sender = ?3 OR a.name = ?3) "
    "AND m.created_ms >= ?4 ORDER BY m.id DESC LIMIT ?6";

/* A page of the scope's messages: the key walked down (pigeon web). */
static const char SQL_PAGE[] =
    "SELECT " HIT_COLS " FROM message m JOIN agent a ON a.id = "
    "m.recipient_id WHERE m.scope_id = ?1 AND m.id < ?2 AND (?3 = 0 OR "
    "m.id = ?3 OR m.thread = ?3) ORDER BY m.id DESC LIMIT ?4";

pgn_status
pgn_search_index(pgn_db *db, int64_t id)
{
	if (db->be->dialect != PGN_DIALECT_SQLITE)
		return PGN_OK;
	return pgn_exec(db, SQL_FTS_ADD, "indexing a message for search",
	    PGN_I(id));
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	    c == '\f';
}

/* The text's checks, shared by both backends; '*words' its words. */
static pgn_status
check_text(const char *text, size_t *words, struct pgn_err *err)
{
	size_t len, i, n = 0;

	*words = 0;
	len = text != NULL ? strlen(text) : 0;
	if (len > PGN_MAX_SEARCH_TEXT)
		return pgn_err_set(err, PGN_EINVAL,
		    "search text of %zu bytes: at most %d", len,
		    PGN_MAX_SEARCH_TEXT);
	if (!pgn_utf8_valid(text != NULL ? text : "", len))
		return pgn_err_set(err, PGN_EINVAL,
		    "search text is not valid UTF-8");
	for (i = 0; i < len; i++)
		if (!is_space(text[i]) && (i == 0 || is_space(text[i - 1])))
			n++;
	if (n == 0)
		return pgn_err_set(err, PGN_EINVAL,
		    "nothing to search for: give one or more words");
	if (n > PGN_MAX_SEARCH_TERMS)
		return pgn_err_set(err, PGN_EINVAL,
		    "search text of %zu words: at most %d", n,
		    PGN_MAX_SEARCH_TERMS);
	*words = n;
	return PGN_OK;
}

pgn_status
pgn_search_query(const char *text, char **out, struct pgn_err *err)
{
	struct pgn_buf b;
	size_t words, i, len;
	pgn_status rc;

	*out = NULL;
	rc = check_text(text, &words, err);
	if (rc != PGN_OK)
		return rc;
	len = strlen(text);
	/* Each byte doubled at worst, three more a word: always fits. */
	pgn_buf_init(&b, 2 * PGN_MAX_SEARCH_TEXT + 3 * PGN_MAX_SEARCH_TERMS);
	for (i = 0; i < len; i++) {
		if (is_space(text[i]))
			continue;
		if (b.len > 0)
			pgn_buf_add(&b, " ", 1);
		pgn_buf_add(&b, "\"", 1);
		for (; i < len && !is_space(text[i]); i++)
			pgn_buf_add(&b, text[i] == '"' ? "\"\"" : &text[i],
			    text[i] == '"' ? 2 : 1);
		pgn_buf_add(&b, "\"", 1);
	}
	*out = pgn_buf_take(&b, NULL);
	if (*out == NULL)
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	return PGN_OK;
}

void
pgn_hits_release(struct pgn_hits *h)
{
	size_t i;

	if (h == NULL)
		return;
	for (i = 0; i < h->n; i++) {
		free(h->v[i].sender);
		free(h->v[i].recipient);
		free(h->v[i].body);
	}
	free(h->v);
	memset(h, 0, sizeof(*h));
}

struct search_ctx {
	const struct pgn_search *q;
	const char *match; /* FTS5's query, or the text for PostgreSQL */
	char agent[PGN_MAX_NAME + 1];
	pgn_hit_fn *fn;
	void *arg;
};

/* Each row of 'st' as a hit to 'fn', its strings borrowed. */
static pgn_status
each_hit(pgn_db *db, pgn_stmt *st, pgn_hit_fn *fn, void *arg)
{
	struct pgn_hit x;
	pgn_status rc = PGN_OK;
	int64_t now = pgn_now_ms();

	while (pgn_next_row(db, st, &rc, "reading search results")) {
		memset(&x, 0, sizeof(x));
		x.id = pgn_col_i64(st, 0);
		x.thread = pgn_col_i64(st, 1);
		x.reply_to = pgn_col_i64(st, 2);
		/* Borrowed: the row's, until the next step. */
		x.sender = (char *)pgn_col_str(st, 3, NULL);
		x.recipient = (char *)pgn_col_str(st, 4, NULL);
		x.body = (char *)pgn_col_str(st, 5, NULL);
		x.created_ms = pgn_col_i64(st, 6);
		x.delivered_ms = pgn_col_i64(st, 7);
		x.ack_ms = pgn_col_i64(st, 8);
		x.acked_ms = pgn_col_i64(st, 9);
		x.priority = (int)pgn_col_i64(st, 10);
		/* The doorbell, as pigeon status tells it (decision 0177). */
		x.woken_ms = pgn_col_i64(st, 11);
		pgn_col_copy(x.woken_via, sizeof(x.woken_via), st, 12);
		pgn_col_copy(x.group, sizeof(x.group), st, 13);
		x.unheard = x.woken_ms != 0 &&
		    (x.delivered_ms != 0 ?
		            x.delivered_ms - x.woken_ms > PGN_WAKE_HEARD_MS :
		            now - x.woken_ms > PGN_WAKE_HEARD_MS);
		rc = fn(arg, &x);
		if (rc != PGN_OK)
			return rc;
	}
	return rc;
}

/* pgn_search's and pgn_messages_page's 'fn': each hit kept, copied. */
struct keep {
	pgn_db *db;
	struct pgn_hits *out;
};

static pgn_status
keep_hit(void *arg, const struct pgn_hit *h)
{
	struct keep *k = arg;
	struct pgn_hit *x;

	if (h == NULL) {
		pgn_hits_release(k->out);
		return PGN_OK;
	}
	if (!pgn_vec_grow((void **)&k->out->v, &k->out->cap, k->out->n,
	        sizeof(*k->out->v)))
		return pgn_fail(k->db, PGN_ENOMEM, "out of memory");
	x = &k->out->v[k->out->n];
	*x = *h;
	x->sender = pgn_strdup(h->sender != NULL ? h->sender : "");
	x->recipient = pgn_strdup(h->recipient != NULL ? h->recipient : "");
	x->body = pgn_strdup(h->body != NULL ? h->body : "");
	k->out->n++;
	if (x->sender == NULL || x->recipient == NULL || x->body == NULL)
		return pgn_fail(k->db, PGN_ENOMEM, "out of memory");
	return PGN_OK;
}

static pgn_status
search_tx(pgn_db *db, void *arg)
{
	struct search_ctx *c = arg;
	const struct pgn_search *q = c->q;
	pgn_stmt *st = NULL;
	int64_t sid;
	pgn_status rc;

	rc = c->fn(c->arg, NULL);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* a scope nothing was sent in */
	if (rc == PGN_OK)
		rc = pgn_prepare(db, pgn_sql(db, SQL_SEARCH, SQL_SEARCH_PG),
		    &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_T(c->match), PGN_I(sid),
		    PGN_T(q->agent != NULL ? c->agent : NULL),
		    PGN_I(q->since_ms),
		    PGN_I(q->before_id > 0 ? q->before_id : INT64_MAX),
		    PGN_I((int64_t)(q->limit ? q->limit : PGN_DEFAULT_LIST)));
	if (rc == PGN_OK)
		rc = each_hit(db, st, c->fn, c->arg);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_search_each(pgn_db *db, const struct pgn_search *q, pgn_hit_fn *fn,
    void *arg)
{
	struct search_ctx c;
	char *fts = NULL;
	size_t words;
	pgn_status rc;

	memset(&c, 0, sizeof(c));
	c.q = q;
	c.fn = fn;
	c.arg = arg;
	if (q->limit > PGN_MAX_LIST)
		return pgn_fail(db, PGN_ETOOBIG,
		    "a search of %zu results: at most %d", q->limit,
		    PGN_MAX_LIST);
	if (q->agent != NULL) {
		rc = pgn_check_name(db, "agent", q->agent, c.agent);
		if (rc != PGN_OK)
			return rc;
	}
	if (db->be->dialect == PGN_DIALECT_SQLITE)
		rc = pgn_search_query(q->text, &fts, &db->err);
	else
		rc = check_text(q->text, &words, &db->err);
	if (rc != PGN_OK)
		return rc;
	c.match = fts != NULL ? fts : q->text;
	rc = pgn_read(db, search_tx, &c);
	free(fts);
	return rc;
}

pgn_status
pgn_search(pgn_db *db, const struct pgn_search *q, struct pgn_hits *out)
{
	struct keep k = {db, out};
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = pgn_search_each(db, q, keep_hit, &k);
	if (rc != PGN_OK)
		pgn_hits_release(out);
	return rc;
}

struct page_ctx {
	int64_t before_id;
	int64_t thread;
	size_t limit;
	pgn_hit_fn *fn;
	void *arg;
};

static pgn_status
page_tx(pgn_db *db, void *arg)
{
	struct page_ctx *c = arg;
	pgn_stmt *st = NULL;
	int64_t sid;
	pgn_status rc;

	rc = c->fn(c->arg, NULL);
	if (rc != PGN_OK)
		return rc;
	rc = pgn_scope_id(db, 0, &sid);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK;
	if (rc == PGN_OK)
		rc = pgn_prepare(db, SQL_PAGE, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(sid),
		    PGN_I(c->before_id > 0 ? c->before_id : INT64_MAX),
		    PGN_I(c->thread), PGN_I((int64_t)c->limit));
	if (rc == PGN_OK)
		rc = each_hit(db, st, c->fn, c->arg);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_messages_page_each(pgn_db *db, int64_t before_id, int64_t thread,
    size_t limit, pgn_hit_fn *fn, void *arg)
{
	struct page_ctx c;

	if (limit > PGN_MAX_LIST)
		return pgn_fail(db, PGN_ETOOBIG,
		    "a page of %zu messages: at most %d", limit, PGN_MAX_LIST);
	c.before_id = before_id;
	c.thread = thread < 0 ? 0 : thread;
	c.limit = limit ? limit : PGN_DEFAULT_LIST;
	c.fn = fn;
	c.arg = arg;
	return pgn_read(db, page_tx, &c);
}

pgn_status
pgn_messages_page(pgn_db *db, int64_t before_id, int64_t thread, size_t limit,
    struct pgn_hits *out)
{
	struct keep k = {db, out};
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = pgn_messages_page_each(db, before_id, thread, limit, keep_hit, &k);
	if (rc != PGN_OK)
		pgn_hits_release(out);
	return rc;
}
