/*
 * The audit: a copy of every delivered message, hash-chained
 * (chain.c, docs/decisions/0004): appended by the claim, listed, read
 * and verified.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "pgn_int.h"
#include "store_int.h"

static const char SQL_HEAD_GET[] =
    "SELECT n, hash FROM audit_head WHERE id = 1";
/*
 * The head and the next delivery's id, in one statement (one round trip
 * on PostgreSQL, decision 0126). PostgreSQL's writers are serialized
 * too (pg.c), and the chain takes its head row's lock besides: one
 * chain, one head, whatever else runs.
 */
/*
 * The last delivery's id: NULL (none) reads as 0, and the next is one
 * more, added in C (coalesce and the sum cost about 5,500 instructions
 * to compile each, decision 0246).
 */
static const char SQL_HEAD_NEXT[] =
    "SELECT n, hash, (SELECT max(id) FROM delivery) "
    "FROM audit_head WHERE id = 1";
static const char SQL_HEAD_NEXT_PG[] =
    "SELECT n, hash, (SELECT max(id) FROM delivery) "
    "FROM audit_head WHERE id = 1 FOR UPDATE";
/*
 * The head moved on, or made by the first delivery: one of the two,
 * as the read above found it under the write lock (an upsert compiles
 * both: about 15,000 instructions more a claim, decision 0246).
 */
static const char SQL_HEAD_SET[] =
    "UPDATE audit_head SET n = ?1, hash = ?2 WHERE id = 1";
static const char SQL_HEAD_ADD[] =
    "INSERT INTO audit_head(id, n, hash) VALUES (1, ?1, ?2)";
static const char SQL_DELIVERY_NEXT[] = "SELECT max(id) FROM delivery";
static const char SQL_DELIVERY_ADD[] =
    "INSERT INTO delivery(id, message_id, scope, sender, recipient, body, "
    "created_ms, reply_to, delivered_ms, session, host, route, bytes, hash) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, nullif(?8, 0), ?9, ?10, ?11, ?12, "
    "?13, ?14)";
/*
 * A listing's rows also show the message's thread (decision 0157),
 * priority and group, read from its row: none is chained (0158). One
 * join, one lookup of the message a row (decision 0255); none when the
 * message row is gone (0, 0, NULL as before).
 */
#define DELIVERY_LIST_COLS                                                     \
	"d.id, d.message_id, d.scope, d.sender, d.recipient, d.body, "         \
	"d.created_ms, coalesce(d.reply_to, 0), d.delivered_ms, d.session, "   \
	"d.host, d.route, d.bytes, d.hash, coalesce(m.thread, m.id), "         \
	"coalesce(m.priority, 0), m.grp FROM delivery d LEFT JOIN message m "  \
	"ON m.id = d.message_id"
static const char SQL_DELIVERY_LIST[] =
    "SELECT " DELIVERY_LIST_COLS " WHERE d.scope = ?1 "
    "AND (?2 IS NULL OR d.recipient = ?2) AND (?3 IS NULL OR d.sender = ?3) "
    "AND d.delivered_ms >= ?4 ORDER BY d.id DESC LIMIT ?5";
static const char SQL_DELIVERY_GET[] =
    "SELECT " DELIVERY_LIST_COLS " WHERE d.id = ?1";
static const char SQL_DELIVERED_COUNT[] =
    "SELECT count(*) FROM message WHERE delivered_ms IS NOT NULL";
/*
 * Every audit row in chain order, with the first field its message row
 * disagrees on ('' if none): journal shows message.body, so a body edited
 * there must show too. The recipient is not compared: a rename changes
 * agent.name and rightly leaves the audit's copy.
 */
static const char SQL_VERIFY_ALL[] =
    "SELECT d.id, d.message_id, d.scope, d.sender, d.recipient, d.body, "
    "d.created_ms, coalesce(d.reply_to, 0), d.delivered_ms, d.session, "
    "d.host, d.route, d.bytes, d.hash, "
    "CASE WHEN m.id IS NULL THEN 'row' "
    "WHEN m.body IS NOT d.body THEN 'body' "
    "WHEN m.sender IS NOT d.sender THEN 'sender' "
    "WHEN c.root IS NOT d.scope THEN 'scope' "
    "WHEN m.created_ms IS NOT d.created_ms THEN 'creation time' "
    "WHEN coalesce(m.reply_to, 0) IS NOT coalesce(d.reply_to, 0) "
    "THEN 'reply-to' "
    "WHEN m.delivered_ms IS NOT d.delivered_ms THEN 'delivery time' "
    "ELSE '' END "
    "FROM delivery d LEFT JOIN message m ON m.id = d.message_id "
    "LEFT JOIN scope c ON c.id = m.scope_id ORDER BY d.id";
/* PostgreSQL spells "IS NOT" of two values IS DISTINCT FROM. */
static const char SQL_VERIFY_ALL_PG[] =
    "SELECT d.id, d.message_id, d.scope, d.sender, d.recipient, d.body, "
    "d.created_ms, coalesce(d.reply_to, 0), d.delivered_ms, d.session, "
    "d.host, d.route, d.bytes, d.hash, "
    "CASE WHEN m.id IS NULL THEN 'row' "
    "WHEN m.body IS DISTINCT FROM d.body THEN 'body' "
    "WHEN m.sender IS DISTINCT FROM d.sender THEN 'sender' "
    "WHEN c.root IS DISTINCT FROM d.scope THEN 'scope' "
    "WHEN m.created_ms IS DISTINCT FROM d.created_ms THEN 'creation time' "
    "WHEN coalesce(m.reply_to, 0) IS DISTINCT FROM coalesce(d.reply_to, 0) "
    "THEN 'reply-to' "
    "WHEN m.delivered_ms IS DISTINCT FROM d.delivered_ms THEN 'delivery time' "
    "ELSE '' END "
    "FROM delivery d LEFT JOIN message m ON m.id = d.message_id "
    "LEFT JOIN scope c ON c.id = m.scope_id ORDER BY d.id";

/* Copy one claimed message into the audit, extending the chain. */
pgn_status
pgn_audit_append(pgn_db *db, const struct pgn_claim *req,
    const struct pgn_msg *m, int64_t now)
{
	pgn_stmt *st = NULL;
	struct pgn_delivery d;
	unsigned char prev[PGN_HASH_BYTES] = {0};
	const void *p;
	size_t len;
	int64_t n = 0;
	pgn_status rc;
	int head;

	memset(&d, 0, sizeof(d));
	rc = pgn_prepare(db, pgn_sql(db, SQL_HEAD_NEXT, SQL_HEAD_NEXT_PG), &st);
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading the audit head");
	if (rc == PGN_OK) {
		n = pgn_col_i64(st, 0);
		p = pgn_col_bytes(st, 1, &len);
		if (len == PGN_HASH_BYTES)
			memcpy(prev, p, PGN_HASH_BYTES);
		d.id = pgn_col_i64(st, 2) + 1;
	}
	pgn_finish(db, st);
	head = rc == PGN_OK;
	if (rc == PGN_ENOTFOUND) /* the first delivery: no head yet */
		rc = pgn_select_i64(db, SQL_DELIVERY_NEXT, &d.id,
		    "numbering a delivery", PGN_NONE);
	if (rc != PGN_OK)
		return rc;
	if (!head)
		d.id++;
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

	rc = pgn_exec(db, SQL_DELIVERY_ADD, "writing the audit", PGN_I(d.id),
	    PGN_I(d.message_id), PGN_T(d.scope), PGN_T(d.sender),
	    PGN_T(d.recipient), PGN_T(d.body), PGN_I(d.created_ms),
	    PGN_I(d.reply_to), PGN_I(d.delivered_ms), PGN_T(d.session),
	    PGN_T(d.host), PGN_T(d.route), PGN_I(d.bytes),
	    PGN_B(d.hash, PGN_HASH_BYTES));
	if (rc == PGN_OK)
		rc = pgn_exec(db, head ? SQL_HEAD_SET : SQL_HEAD_ADD,
		    "writing the audit head", PGN_I(n + 1),
		    PGN_B(d.hash, PGN_HASH_BYTES));
	return rc;
}

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
		free(x->group);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* Text of column 'col', borrowed from the row; "" for NULL. */
static const char *
col_str(pgn_stmt *st, int col)
{
	const char *s = pgn_col_str(st, col, NULL);

	return s != NULL ? s : "";
}

/*
 * A delivery's first 14 columns (id to hash, as DELIVERY_LIST_COLS and
 * SQL_VERIFY_ALL give them) into 'x', its strings borrowed from the row
 * until the next step.
 */
static void
delivery_borrow(pgn_stmt *st, struct pgn_delivery *x)
{
	const void *p;
	size_t len;

	memset(x, 0, sizeof(*x));
	x->id = pgn_col_i64(st, 0);
	x->message_id = pgn_col_i64(st, 1);
	x->scope = (char *)col_str(st, 2);
	x->sender = (char *)col_str(st, 3);
	x->recipient = (char *)col_str(st, 4);
	x->body = (char *)col_str(st, 5);
	x->created_ms = pgn_col_i64(st, 6);
	x->reply_to = pgn_col_i64(st, 7);
	x->delivered_ms = pgn_col_i64(st, 8);
	x->session = (char *)col_str(st, 9);
	x->host = (char *)col_str(st, 10);
	x->route = (char *)col_str(st, 11);
	x->bytes = pgn_col_i64(st, 12);
	p = pgn_col_bytes(st, 13, &len);
	if (len == PGN_HASH_BYTES)
		memcpy(x->hash, p, PGN_HASH_BYTES);
}

/* 'b' with its strings copied into 'x' (the caller releases them). */
static int
delivery_copy(const struct pgn_delivery *b, struct pgn_delivery *x)
{
	*x = *b;
	x->scope = pgn_strdup(b->scope);
	x->sender = pgn_strdup(b->sender);
	x->recipient = pgn_strdup(b->recipient);
	x->body = pgn_strdup(b->body);
	x->session = pgn_strdup(b->session);
	x->host = pgn_strdup(b->host);
	x->route = pgn_strdup(b->route);
	x->group = b->group != NULL ? pgn_strdup(b->group) : NULL;
	return x->scope && x->sender && x->recipient && x->body && x->session &&
	    x->host && x->route && (b->group == NULL || x->group != NULL);
}

/* Read a delivery's first 14 columns, copied (the caller releases). */
static int
delivery_row(pgn_stmt *st, struct pgn_delivery *x)
{
	struct pgn_delivery b;

	delivery_borrow(st, &b);
	return delivery_copy(&b, x);
}

struct audit_ctx {
	const struct pgn_audit_filter *f;
	char rcpt[PGN_MAX_NAME + 1];
	char sender[PGN_MAX_NAME + 1];
	int64_t id;
	struct pgn_deliveries *out;
	pgn_delivery_fn *fn;
	void *arg;
	int64_t *checked;
	int64_t *bad;
};

/* Each listed row of 'st' to 'fn', its strings borrowed. */
static pgn_status
each_delivery(pgn_db *db, pgn_stmt *st, pgn_delivery_fn *fn, void *arg)
{
	struct pgn_delivery x;
	pgn_status rc = PGN_OK;

	while (pgn_next_row(db, st, &rc, "reading the audit")) {
		delivery_borrow(st, &x);
		x.thread = pgn_col_i64(st, 14); /* decision 0157 */
		x.priority = (int)pgn_col_i64(st, 15);
		x.group = (char *)pgn_col_str(st, 16, NULL); /* NULL: none */
		if (x.group != NULL && x.group[0] == '\0')
			x.group = NULL;
		rc = fn(arg, &x);
		if (rc != PGN_OK)
			return rc;
	}
	return rc;
}

/* pgn_audit_list's and pgn_audit_get's 'fn': each row kept, copied. */
struct keep {
	pgn_db *db;
	struct pgn_deliveries *out;
};

static pgn_status
keep_delivery(void *arg, const struct pgn_delivery *d)
{
	struct keep *k = arg;

	if (d == NULL) {
		pgn_deliveries_release(k->out);
		return PGN_OK;
	}
	if (!pgn_vec_grow((void **)&k->out->v, &k->out->cap, k->out->n,
	        sizeof(*k->out->v)))
		return pgn_fail(k->db, PGN_ENOMEM, "out of memory");
	if (!delivery_copy(d, &k->out->v[k->out->n++]))
		return pgn_fail(k->db, PGN_ENOMEM, "out of memory");
	return PGN_OK;
}

static pgn_status
audit_list_tx(pgn_db *db, void *arg)
{
	struct audit_ctx *c = arg;
	const struct pgn_audit_filter *f = c->f;
	pgn_stmt *st = NULL;
	pgn_status rc;
	size_t limit;

	rc = c->fn(c->arg, NULL);
	if (rc != PGN_OK)
		return rc;
	limit = f->limit ? f->limit : PGN_DEFAULT_LIST;
	rc = pgn_prepare(db, SQL_DELIVERY_LIST, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_T(db->scope),
		    PGN_T(f->recipient ? c->rcpt : NULL),
		    PGN_T(f->sender ? c->sender : NULL), PGN_I(f->since_ms),
		    PGN_I((int64_t)limit));
	if (rc == PGN_OK)
		rc = each_delivery(db, st, c->fn, c->arg);
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_audit_list_each(pgn_db *db, const struct pgn_audit_filter *f,
    pgn_delivery_fn *fn, void *arg)
{
	struct audit_ctx c;
	pgn_status rc;

	memset(&c, 0, sizeof(c));
	c.f = f;
	c.fn = fn;
	c.arg = arg;
	if (f->limit > PGN_MAX_LIST)
		return pgn_fail(db, PGN_ETOOBIG,
		    "a listing of %zu deliveries: at most %d", f->limit,
		    PGN_MAX_LIST);
	if (f->recipient != NULL) {
		rc = pgn_check_name(db, "agent", f->recipient, c.rcpt);
		if (rc != PGN_OK)
			return rc;
	}
	if (f->sender != NULL) {
		rc = pgn_check_name(db, "sender", f->sender, c.sender);
		if (rc != PGN_OK)
			return rc;
	}
	return pgn_read(db, audit_list_tx, &c);
}

pgn_status
pgn_audit_list(pgn_db *db, const struct pgn_audit_filter *f,
    struct pgn_deliveries *out)
{
	struct keep k = {db, out};
	pgn_status rc;

	memset(out, 0, sizeof(*out));
	rc = pgn_audit_list_each(db, f, keep_delivery, &k);
	if (rc != PGN_OK)
		pgn_deliveries_release(out);
	return rc;
}

static pgn_status
audit_get_tx(pgn_db *db, void *arg)
{
	struct audit_ctx *c = arg;
	struct keep k = {db, c->out};
	pgn_stmt *st = NULL;
	pgn_status rc;

	pgn_deliveries_release(c->out);
	rc = pgn_prepare(db, SQL_DELIVERY_GET, &st);
	if (rc == PGN_OK)
		rc = pgn_bind(db, st, PGN_I(c->id));
	if (rc == PGN_OK)
		rc = each_delivery(db, st, keep_delivery, &k);
	pgn_finish(db, st);
	if (rc == PGN_OK && c->out->n == 0)
		rc = pgn_fail_hint(db, PGN_ENOTFOUND, PGN_HINT_AUDIT, NULL,
		    "no delivery %lld in the audit", (long long)c->id);
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
	pgn_stmt *st = NULL;
	struct pgn_delivery x;
	unsigned char prev[PGN_HASH_BYTES] = {0}, h[PGN_HASH_BYTES];
	int64_t n = 0, head_n = 0;
	pgn_status rc;
	const char *differs;
	const void *hp;
	size_t hlen;
	int have_head = 0, ok;

	*c->checked = 0;
	*c->bad = 0;
	rc = pgn_prepare(db, pgn_sql(db, SQL_VERIFY_ALL, SQL_VERIFY_ALL_PG),
	    &st);
	while (pgn_next_row(db, st, &rc, "reading the audit")) {
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
			    "audit row %lld does not match its hash: it or the row before it was edited, deleted or reordered",
			    (long long)x.id);
			break;
		}
		differs = pgn_col_str(st, 14, NULL);
		if (differs != NULL && differs[0] != '\0') {
			*c->bad = x.id;
			rc = pgn_fail(db, PGN_ETAMPER,
			    "audit row %lld: message %lld's %s differs from its audit copy: the message table was edited",
			    (long long)x.id, (long long)x.message_id, differs);
			break;
		}
		memcpy(prev, h, PGN_HASH_BYTES);
		n++;
		*c->checked = n;
	}
	pgn_finish(db, st);
	st = NULL;
	if (rc != PGN_OK)
		return rc;
	ok = 0;
	rc = pgn_prepare(db, SQL_HEAD_GET, &st);
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading the audit head");
	if (rc == PGN_OK) {
		have_head = 1;
		head_n = pgn_col_i64(st, 0);
		hp = pgn_col_bytes(st, 1, &hlen);
		ok = hlen == PGN_HASH_BYTES &&
		    sodium_memcmp(hp, prev, PGN_HASH_BYTES) == 0;
	}
	pgn_finish(db, st);
	if (rc == PGN_ENOTFOUND)
		rc = PGN_OK; /* no head: nothing was ever delivered */
	if (rc != PGN_OK)
		return rc;
	if ((have_head && (head_n != n || !ok)) || (!have_head && n > 0)) {
		*c->bad = n + 1;
		return pgn_fail(db, PGN_ETAMPER,
		    "the audit holds %lld rows but its head records %lld and another last hash: rows were deleted or added at the end",
		    (long long)n, (long long)head_n);
	}
	/* Every delivered message has its row: a wiped audit shows. */
	rc = pgn_select_i64(db, SQL_DELIVERED_COUNT, &head_n,
	    "counting deliveries", PGN_NONE);
	if (rc == PGN_OK && head_n != n) {
		*c->bad = n + 1;
		rc = pgn_fail(db, PGN_ETAMPER,
		    "%lld messages are marked delivered but the audit holds %lld rows: audit rows were deleted",
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
