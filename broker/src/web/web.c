/*
 * pigeon web's logic (docs/web.md, decision 0171): the Host check, the
 * token, the routes, the JSON of each view, the embedded page. No
 * socket here: cli/cmd_web.c reads requests with libmicrohttpd and
 * writes what pgn_web_handle answers. Read-only unless the server was
 * made with allow_send, and then only POST /api/send writes.
 */
#include <cjson/cJSON.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "pigeon/lease.h"
#include "pigeon/pigeon.h"
#include "pigeon/search.h"
#include "pigeon/web.h"

/* The page, embedded at build time from web/page/ (web_page_*.c). */
extern const char pgn_web_index_html[];
extern const char pgn_web_app_js[];
extern const char pgn_web_app_css[];

#define TOKEN_HEX (2 * PGN_WEB_TOKEN_BYTES)

struct pgn_web {
	pgn_db *db;
	int port;
	int allow_send;
	int replaced;
	char token[TOKEN_HEX + 1];
	char host_ip[32];   /* "127.0.0.1:PORT" */
	char host_name[32]; /* "localhost:PORT" */
};

/*
 * No inline script or style, nothing from another origin, no frames,
 * no form posted elsewhere; the page's own script, style and requests.
 */
const char *const pgn_web_headers[][2] = {
    {"Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; "
        "img-src 'self'; connect-src 'self'; form-action 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
    {"X-Frame-Options", "DENY"},
    {"Cache-Control", "no-store"},
    {NULL, NULL},
};

pgn_status
pgn_web_new(pgn_db *db, int port, int allow_send, struct pgn_web **out)
{
	unsigned char raw[PGN_WEB_TOKEN_BYTES];
	struct pgn_web *w;

	*out = NULL;
	if (port < 1 || port > 65535)
		return pgn_fail(db, PGN_EINVAL, "port %d: from 1 to 65535",
		    port);
	if (sodium_init() < 0)
		return pgn_fail(db, PGN_EIO, "libsodium did not start");
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	w->db = db;
	w->port = port;
	w->allow_send = allow_send;
	randombytes_buf(raw, sizeof(raw));
	sodium_bin2hex(w->token, sizeof(w->token), raw, sizeof(raw));
	sodium_memzero(raw, sizeof(raw));
	(void)snprintf(w->host_ip, sizeof(w->host_ip), "127.0.0.1:%d", port);
	(void)snprintf(w->host_name, sizeof(w->host_name), "localhost:%d",
	    port);
	*out = w;
	return PGN_OK;
}

const char *
pgn_web_token(const struct pgn_web *w)
{
	return w->token;
}

void
pgn_web_set_replaced(struct pgn_web *w, int replaced)
{
	w->replaced = replaced;
}

int
pgn_web_replaced(const struct pgn_web *w)
{
	return w->replaced;
}

void
pgn_web_free(struct pgn_web *w)
{
	if (w == NULL)
		return;
	sodium_memzero(w->token, sizeof(w->token));
	free(w);
}

void
pgn_web_resp_release(struct pgn_web_resp *r)
{
	if (r->owned)
		free(r->body);
	memset(r, 0, sizeof(*r));
}

/* ---- the query string ---------------------------------------------- */

/* Decode s[0..n) into out (size bytes): its length, or -1. */
static long
decode(const char *s, size_t n, char *out, size_t size)
{
	size_t i, k = 0;
	int hi, lo;
	char c;

	for (i = 0; i < n; i++) {
		c = s[i];
		if (c == '+')
			c = ' ';
		else if (c == '%') {
			if (i + 2 >= n)
				return -1;
			hi = pgn_hex_value(s[i + 1]);
			lo = pgn_hex_value(s[i + 2]);
			if (hi < 0 || lo < 0)
				return -1;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0' || k + 1 >= size)
			return -1;
		out[k++] = c;
	}
	out[k] = '\0';
	return pgn_utf8_valid(out, k) ? (long)k : -1;
}

int
pgn_web_param(const char *query, size_t qlen, const char *name, char *out,
    size_t size)
{
	char key[64];
	size_t i = 0, start, eq, nparams = 0;
	int found = 0;
	long klen;

	if (size == 0)
		return -1;
	out[0] = '\0';
	while (i < qlen) {
		start = i;
		while (i < qlen && query[i] != '&')
			i++;
		if (i > start && ++nparams > PGN_WEB_MAX_PARAMS)
			return -1;
		for (eq = start; eq < i && query[eq] != '='; eq++)
			;
		if (i > start) {
			klen =
			    decode(query + start, eq - start, key, sizeof(key));
			if (klen < 0)
				return -1;
			if (strcmp(key, name) == 0) {
				if (found)
					return -1; /* twice: ambiguous */
				if (decode(query + (eq < i ? eq + 1 : i),
				        eq < i ? i - eq - 1 : 0, out, size) < 0)
					return -1;
				found = 1;
			}
		}
		i++;
	}
	return found;
}

/* ---- responses ------------------------------------------------------ */

static void
text(struct pgn_web_resp *out, int status, const char *type, const char *s)
{
	out->status = status;
	out->type = type;
	out->body = (char *)s;
	out->len = strlen(s);
	out->owned = 0;
}

/* A JSON error: {"error": MSG}. */
static void
fail(struct pgn_web_resp *out, int status, const char *msg)
{
	cJSON *o = cJSON_CreateObject();
	char *s = NULL;

	if (o != NULL && cJSON_AddStringToObject(o, "error", msg) != NULL)
		s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (s == NULL) {
		text(out, 500, "application/json",
		    "{\"error\":\"out of memory\"}");
		return;
	}
	out->status = status;
	out->type = "application/json";
	out->body = s;
	out->len = strlen(s);
	out->owned = 1;
}

/* The library's error on the handle: 400 for bad input, else 500. */
static void
fail_db(struct pgn_web *w, struct pgn_web_resp *out, pgn_status st)
{
	fail(out, pgn_status_is_usage(st) ? 400 : 500, pgn_errmsg(w->db));
}

/* Send 'o' (consumed) as the answer. */
static void
json(struct pgn_web_resp *out, cJSON *o)
{
	char *s = o != NULL ? cJSON_PrintUnformatted(o) : NULL;

	cJSON_Delete(o);
	if (s == NULL) {
		fail(out, 500, "out of memory");
		return;
	}
	out->status = 200;
	out->type = "application/json";
	out->body = s;
	out->len = strlen(s);
	out->owned = 1;
}

/*
 * An integer member, printed as one: cJSON's numbers are doubles,
 * printed with "%1.15g" and read back with sscanf to check, which was
 * a third of a 50-row page's time (decision 0220).
 */
static void
add_int(cJSON *o, const char *name, int64_t v)
{
	char buf[24];

	(void)snprintf(buf, sizeof(buf), "%lld", (long long)v);
	(void)cJSON_AddRawToObject(o, name, buf);
}

/* ---- the views ------------------------------------------------------ */

struct params {
	const char *query;
	size_t qlen;
};

/* Parameter 'name' as a number from min to max ('def' when absent). */
static int
num(const struct params *p, const char *name, int64_t min, int64_t max,
    int64_t def, int64_t *v)
{
	char buf[32];
	int r = pgn_web_param(p->query, p->qlen, name, buf, sizeof(buf));

	*v = def;
	if (r == 0)
		return 1;
	return r == 1 && pgn_parse_i64(buf, min, max, v) == PGN_OK;
}

/*
 * The lists' JSON is written straight into one buffer, not built as a
 * cJSON tree and printed: a tree costs a malloc per member, key and
 * string and a copy of each at the print, the most of a 50-row page's
 * time (decision 0240). Strings are escaped as cJSON escapes them
 * (pgn_buf_json_str); the key order and the values are those of the
 * tree it replaces.
 */
/* KEY (its quotes, colon and any comma before it) and a string. */
static void
jw_key_str(struct pgn_buf *b, const char *key, const char *s)
{
	pgn_buf_adds(b, key);
	pgn_buf_json_str(b, s);
}

/* KEY and an integer, in decimal. */
static void
jw_int(struct pgn_buf *b, const char *key, int64_t v)
{
	pgn_buf_adds(b, key);
	pgn_buf_json_i64(b, v);
}

/* The buffer as the answer (taken), or a 500 if it could not grow. */
static void
jw_answer(struct pgn_web_resp *out, struct pgn_buf *b)
{
	size_t len;
	char *s;

	if (b->err != PGN_OK) {
		pgn_buf_release(b);
		fail(out, 500, "out of memory");
		return;
	}
	s = pgn_buf_take(b, &len);
	if (s == NULL) {
		fail(out, 500, "out of memory");
		return;
	}
	out->status = 200;
	out->type = "application/json";
	out->body = s;
	out->len = len;
	out->owned = 1;
}

/*
 * A page of hits: {"messages": [...], "next": ID or 0}, each hit the
 * library's one shape (decisions 0238, 0254), times in milliseconds,
 * which the page computes with. Each is written into the answer as the
 * store reads it: no copy of its strings, no tree (decision 0254).
 */
struct hits_out {
	struct pgn_buf b;
	size_t start; /* the answer's length before the first hit */
	size_t n;
	int64_t last;
};

/* Rows of about 250 bytes: the answer grows once, not at each doubling. */
#define HIT_JSON_GUESS 256

static pgn_status
hit_out(void *arg, const struct pgn_hit *h)
{
	struct hits_out *o = arg;

	if (h == NULL) { /* the read starts (again): no hit yet */
		pgn_buf_truncate(&o->b, o->start);
		o->n = 0;
		o->last = 0;
		return PGN_OK;
	}
	if (o->n++ > 0)
		PGN_BUF_LIT(&o->b, ",");
	pgn_hit_write(&o->b, h, PGN_HIT_JSON_MS);
	o->last = h->id;
	return PGN_OK; /* the buffer's error, if any, shows at the answer */
}

static void
hits_start(struct hits_out *o, size_t limit)
{
	memset(o, 0, sizeof(*o));
	pgn_buf_init(&o->b, PGN_WEB_MAX_ANSWER);
	pgn_buf_presize(&o->b, 32 + limit * HIT_JSON_GUESS);
	PGN_BUF_LIT(&o->b, "{\"messages\":[");
	o->start = o->b.len;
}

static void
hits_end(struct pgn_web *w, struct pgn_web_resp *out, struct hits_out *o,
    size_t limit, pgn_status st)
{
	if (st != PGN_OK) {
		pgn_buf_release(&o->b);
		fail_db(w, out, st);
		return;
	}
	jw_int(&o->b, "],\"next\":", o->n == limit ? o->last : 0);
	PGN_BUF_LIT(&o->b, "}");
	jw_answer(out, &o->b);
}

static void
view_messages(struct pgn_web *w, const struct params *p,
    struct pgn_web_resp *out)
{
	struct hits_out o;
	int64_t before, thread, limit;
	pgn_status st;

	if (!num(p, "before", 0, INT64_MAX, 0, &before) ||
	    !num(p, "thread", 0, INT64_MAX, 0, &thread) ||
	    !num(p, "limit", 1, PGN_WEB_MAX_PAGE, PGN_WEB_PAGE, &limit)) {
		fail(out, 400, "before, thread: ids; limit: 1 to 200");
		return;
	}
	hits_start(&o, (size_t)limit);
	st = pgn_messages_page_each(w->db, before, thread, (size_t)limit,
	    hit_out, &o);
	hits_end(w, out, &o, (size_t)limit, st);
}

static void
view_search(struct pgn_web *w, const struct params *p, struct pgn_web_resp *out)
{
	char q[PGN_MAX_SEARCH_TEXT + 1];
	struct pgn_search s;
	struct hits_out o;
	int64_t before, limit;
	pgn_status st;

	memset(&s, 0, sizeof(s));
	if (pgn_web_param(p->query, p->qlen, "q", q, sizeof(q)) != 1) {
		fail(out, 400,
		    "q: the words to search for, at most 1024 bytes");
		return;
	}
	if (!num(p, "before", 0, INT64_MAX, 0, &before) ||
	    !num(p, "limit", 1, PGN_WEB_MAX_PAGE, PGN_WEB_PAGE, &limit)) {
		fail(out, 400, "before: an id; limit: 1 to 200");
		return;
	}
	s.text = q;
	s.before_id = before;
	s.limit = (size_t)limit;
	hits_start(&o, (size_t)limit);
	st = pgn_search_each(w->db, &s, hit_out, &o);
	hits_end(w, out, &o, (size_t)limit, st);
}

static void
view_state(struct pgn_web *w, struct pgn_web_resp *out)
{
	struct pgn_watch v;
	cJSON *o, *arr, *a;
	size_t i, k, held;
	pgn_status st;

	st = pgn_watch_read(w->db, 1, &v);
	if (st != PGN_OK) {
		pgn_watch_release(&v);
		fail_db(w, out, st);
		return;
	}
	o = cJSON_CreateObject();
	add_int(o, "now", v.read_ms);
	cJSON_AddBoolToObject(o, "replaced", w->replaced);
	cJSON_AddBoolToObject(o, "allow_send", w->allow_send);
	add_int(o, "queued", v.queued_total);
	arr = cJSON_AddArrayToObject(o, "agents");
	for (i = 0; arr != NULL && i < v.agents.n; i++) {
		a = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, a);
		cJSON_AddStringToObject(a, "name", v.agents.v[i].name);
		cJSON_AddStringToObject(a, "hosts", v.agents.v[i].hosts);
		cJSON_AddStringToObject(a, "state",
		    pgn_agent_state_name(i < PGN_WATCH_MAX_AGENTS ?
		            v.state[i] :
		            pgn_agent_state(&v.agents.v[i], v.read_ms)));
		add_int(a, "last_seen", v.agents.v[i].last_seen_ms);
		add_int(a, "queued", v.agents.v[i].queued);
		for (k = 0, held = 0; k < v.nleases; k++)
			held +=
			    strcmp(v.leases[k].holder, v.agents.v[i].name) == 0;
		add_int(a, "leases", (int64_t)held);
	}
	arr = cJSON_AddArrayToObject(o, "leases");
	for (k = 0; arr != NULL && k < v.nleases; k++) {
		a = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, a);
		cJSON_AddStringToObject(a, "holder", v.leases[k].holder);
		cJSON_AddStringToObject(a, "pattern", v.leases[k].pattern);
		cJSON_AddBoolToObject(a, "shared", v.leases[k].shared);
		add_int(a, "expires", v.leases[k].expires_ms);
		cJSON_AddStringToObject(a, "reason", v.leases[k].reason);
	}
	pgn_watch_release(&v);
	json(out, o);
}

/* One audit row, written into the answer as the store reads it (0255). */
struct audit_out {
	struct pgn_buf b;
	size_t start;
	size_t n;
};

static pgn_status
audit_row(void *arg, const struct pgn_delivery *d)
{
	struct audit_out *o = arg;

	if (d == NULL) { /* the read starts (again): no row yet */
		pgn_buf_truncate(&o->b, o->start);
		o->n = 0;
		return PGN_OK;
	}
	jw_int(&o->b, o->n++ > 0 ? ",{\"id\":" : "{\"id\":", d->id);
	jw_int(&o->b, ",\"message\":", d->message_id);
	jw_key_str(&o->b, ",\"from\":", d->sender);
	jw_key_str(&o->b, ",\"to\":", d->recipient);
	jw_key_str(&o->b, ",\"route\":", d->route);
	jw_key_str(&o->b, ",\"host\":", d->host);
	jw_int(&o->b, ",\"delivered\":", d->delivered_ms);
	jw_key_str(&o->b, ",\"body\":", d->body);
	PGN_BUF_LIT(&o->b, "}");
	return PGN_OK; /* the buffer's error, if any, shows at the answer */
}

static void
view_audit(struct pgn_web *w, const struct params *p, struct pgn_web_resp *out)
{
	struct pgn_audit_filter f;
	struct audit_out o;
	int64_t limit;
	pgn_status st;

	if (!num(p, "limit", 1, PGN_WEB_MAX_PAGE, PGN_WEB_PAGE, &limit)) {
		fail(out, 400, "limit: 1 to 200");
		return;
	}
	memset(&f, 0, sizeof(f));
	f.limit = (size_t)limit;
	memset(&o, 0, sizeof(o));
	pgn_buf_init(&o.b, PGN_WEB_MAX_ANSWER);
	pgn_buf_presize(&o.b, 32 + (size_t)limit * HIT_JSON_GUESS);
	PGN_BUF_LIT(&o.b, "{\"deliveries\":[");
	o.start = o.b.len;
	st = pgn_audit_list_each(w->db, &f, audit_row, &o);
	if (st != PGN_OK) {
		pgn_buf_release(&o.b);
		fail_db(w, out, st);
		return;
	}
	PGN_BUF_LIT(&o.b, "]}");
	jw_answer(out, &o.b);
}

static void
view_verify(struct pgn_web *w, struct pgn_web_resp *out)
{
	int64_t checked = 0, bad = 0;
	pgn_status st;
	cJSON *o;

	st = pgn_audit_verify(w->db, &checked, &bad);
	if (st != PGN_OK && st != PGN_ETAMPER) {
		fail_db(w, out, st);
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "ok", st == PGN_OK);
	add_int(o, "rows", (int64_t)checked);
	if (st != PGN_OK) {
		add_int(o, "bad", (int64_t)bad);
		cJSON_AddStringToObject(o, "error", pgn_errmsg(w->db));
	}
	json(out, o);
}

/* POST /api/send: from, to (names, comma-separated), body; a form. */
static void
do_send(struct pgn_web *w, const struct pgn_web_req *r,
    struct pgn_web_resp *out)
{
	char from[PGN_MAX_NAME + 1], to[PGN_WEB_MAX_BODY],
	    body[PGN_MAX_BODY + 1];
	const char *names[PGN_MAX_RECIPIENTS];
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	struct pgn_send req;
	size_t n = 0, nsent = 0, i;
	char *p, *save = NULL;
	pgn_status st;
	cJSON *o, *arr;

	if (r->content_type == NULL ||
	    strncmp(r->content_type, "application/x-www-form-urlencoded", 33) !=
	        0) {
		fail(out, 415, "a form: application/x-www-form-urlencoded");
		return;
	}
	if (pgn_web_param(r->body, r->body_len, "from", from, sizeof(from)) !=
	        1 ||
	    pgn_web_param(r->body, r->body_len, "to", to, sizeof(to)) != 1 ||
	    pgn_web_param(r->body, r->body_len, "body", body, sizeof(body)) !=
	        1) {
		fail(out, 400,
		    "from (a name), to (names) and body (at most 4096 bytes)");
		return;
	}
	for (p = strtok_r(to, ", ", &save); p != NULL;
	     p = strtok_r(NULL, ", ", &save)) {
		if (n == PGN_MAX_RECIPIENTS) {
			fail(out, 400, "at most 64 recipients");
			return;
		}
		names[n++] = p;
	}
	memset(&req, 0, sizeof(req));
	req.from = from;
	req.to = names;
	req.nto = n;
	req.body = body;
	req.body_len = strlen(body);
	st = pgn_send(w->db, &req, sent, PGN_MAX_RECIPIENTS, &nsent);
	if (st != PGN_OK) {
		fail_db(w, out, st);
		return;
	}
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "sent");
	for (i = 0; arr != NULL && i < nsent; i++)
		cJSON_AddItemToArray(arr,
		    cJSON_CreateNumber((double)sent[i].id));
	json(out, o);
}

/*
 * The page, with the token (hex digits only) in place of each @TOKEN@:
 * its script and style are fetched with it, as every request is.
 */
static void
page(struct pgn_web *w, struct pgn_web_resp *out)
{
	static const char mark[] = "@TOKEN@";
	const char *p = pgn_web_index_html, *m;
	struct pgn_buf b;

	pgn_buf_init(&b, 4 * strlen(pgn_web_index_html) + 1024);
	while ((m = strstr(p, mark)) != NULL) {
		pgn_buf_add(&b, p, (size_t)(m - p));
		pgn_buf_adds(&b, w->token);
		p = m + sizeof(mark) - 1;
	}
	pgn_buf_adds(&b, p);
	out->body = pgn_buf_take(&b, &out->len);
	if (out->body == NULL) {
		fail(out, 500, "out of memory");
		return;
	}
	out->owned = 1;
	out->status = 200;
	out->type = "text/html; charset=utf-8";
}

/* ---- the gate and the routes ---------------------------------------- */

/* The token, compared in constant time over its fixed length. */
static int
token_ok(const struct pgn_web *w, const struct params *p)
{
	char got[TOKEN_HEX + 2];
	int r;

	memset(got, 0, sizeof(got));
	r = pgn_web_param(p->query, p->qlen, "token", got, sizeof(got));
	if (r != 1 || strlen(got) != TOKEN_HEX)
		return 0;
	return sodium_memcmp(got, w->token, TOKEN_HEX) == 0;
}

void
pgn_web_handle(struct pgn_web *w, const struct pgn_web_req *r,
    struct pgn_web_resp *out)
{
	char path[64];
	const char *q;
	struct params p;
	size_t plen, tlen;
	int get;

	memset(out, 0, sizeof(*out));
	tlen = r->target != NULL ? strlen(r->target) : 0;
	if (tlen == 0 || tlen > PGN_WEB_MAX_TARGET || r->target[0] != '/') {
		fail(out, 400, "a request target of 1 to 4096 bytes, from '/'");
		return;
	}
	/* DNS rebinding: the page is only this address and port's. */
	if (r->host == NULL ||
	    (strcmp(r->host, w->host_ip) != 0 &&
	        strcmp(r->host, w->host_name) != 0)) {
		fail(out, 403,
		    "the Host header must be this server's "
		    "loopback address and port");
		return;
	}
	q = strchr(r->target, '?');
	plen = q != NULL ? (size_t)(q - r->target) : tlen;
	p.query = q != NULL ? q + 1 : "";
	p.qlen = q != NULL ? tlen - plen - 1 : 0;
	if (!token_ok(w, &p)) {
		fail(out, 401,
		    "the token of the URL pigeon web printed is "
		    "needed");
		return;
	}
	out->authorised = 1;
	if (plen >= sizeof(path)) {
		fail(out, 404, "no such page");
		return;
	}
	memcpy(path, r->target, plen);
	path[plen] = '\0';
	get = strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0;
	if (strcmp(path, "/api/send") == 0) {
		if (!w->allow_send)
			fail(out, 403,
			    "read-only: start pigeon web with "
			    "--allow-send to send");
		else if (strcmp(r->method, "POST") != 0)
			fail(out, 405, "POST a form");
		else if (r->body_len > PGN_WEB_MAX_BODY)
			fail(out, 413, "a form of at most 8192 bytes");
		else
			do_send(w, r, out);
		return;
	}
	if (!get) {
		fail(out, 405,
		    "only GET (and, with --allow-send, POST "
		    "/api/send)");
		return;
	}
	if (strcmp(path, "/") == 0)
		page(w, out);
	else if (strcmp(path, "/app.js") == 0)
		text(out, 200, "text/javascript; charset=utf-8",
		    pgn_web_app_js);
	else if (strcmp(path, "/app.css") == 0)
		text(out, 200, "text/css; charset=utf-8", pgn_web_app_css);
	else if (strcmp(path, "/api/state") == 0)
		view_state(w, out);
	else if (strcmp(path, "/api/messages") == 0)
		view_messages(w, &p, out);
	else if (strcmp(path, "/api/search") == 0)
		view_search(w, &p, out);
	else if (strcmp(path, "/api/audit") == 0)
		view_audit(w, &p, out);
	else if (strcmp(path, "/api/verify") == 0)
		view_verify(w, out);
	else if (strcmp(path, "/api/events") == 0) {
		out->events = 1;
		out->status = 200;
		out->type = "text/event-stream";
	} else
		fail(out, 404, "no such page");
}
