/*
 * A message and a message's status as JSON: the one shape of `pigeon
 * read/wait/inbox --json`, `pigeon status/thread --json` and the MCP
 * tools' results (decision 0216). Explicit nulls, the body as "body".
 * A search hit is the message's object and its states (decision 0238):
 * `pigeon search --json` and pigeon web. Both objects are written by
 * one writer straight into a buffer (decision 0254): pigeon web's pages
 * take its bytes, the cJSON objects are those bytes parsed.
 */
#include <stdio.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"
#include "pigeon/pigeon.h"
#include "pigeon/search.h"

/* 'key': the time as pgn_format_time writes it. */
static cJSON *
json_time(cJSON *o, const char *key, int64_t ms)
{
	char buf[32];

	pgn_format_time(ms, buf, sizeof(buf));
	return cJSON_AddStringToObject(o, key, buf);
}

static void
json_id_or_null(cJSON *o, const char *key, int64_t v)
{
	if (v != 0)
		cJSON_AddNumberToObject(o, key, (double)v);
	else
		cJSON_AddNullToObject(o, key);
}

static void
json_str_or_null(cJSON *o, const char *key, const char *s)
{
	if (s != NULL && s[0] != '\0')
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

/*
 * pgn_msg_json's and pgn_hit_json's object, written straight into a
 * buffer: the one list of their keys (decision 0254). The message's
 * part is the same for both: its keys, in its order, with its nulls.
 */
struct msg_part {
	int64_t id;
	const char *sender;
	const char *recipient;
	int64_t created_ms;
	int64_t reply_to;
	int64_t thread;
	int64_t ack_ms;
	const char *body;
	int priority;
	const char *group;
};

/* A time: UTC text as pgn_format_time writes it, or (ms) an integer. */
static void
write_time(struct pgn_buf *b, int64_t v, int ms)
{
	char t[32];

	if (ms) {
		pgn_buf_json_i64(b, v);
		return;
	}
	pgn_format_time(v, t, sizeof(t));
	pgn_buf_json_str(b, t);
}

/* An id or a window: null for 0. */
static void
write_id(struct pgn_buf *b, int64_t v)
{
	if (v != 0)
		pgn_buf_json_i64(b, v);
	else
		PGN_BUF_LIT(b, "null");
}

/* The message's members, from '{' on, without the closing brace. */
static void
write_msg(struct pgn_buf *b, const struct msg_part *m, int ms)
{
	PGN_BUF_LIT(b, "{\"id\":");
	pgn_buf_json_i64(b, m->id);
	PGN_BUF_LIT(b, ",\"from\":");
	pgn_buf_json_str(b, m->sender);
	PGN_BUF_LIT(b, ",\"to\":");
	pgn_buf_json_str(b, m->recipient);
	PGN_BUF_LIT(b, ",\"created\":");
	write_time(b, m->created_ms, ms);
	PGN_BUF_LIT(b, ",\"reply_to\":");
	write_id(b, m->reply_to);
	PGN_BUF_LIT(b, ",\"thread\":");
	pgn_buf_json_i64(b, m->thread != 0 ? m->thread : m->id);
	PGN_BUF_LIT(b, ",\"ack_within_ms\":");
	write_id(b, m->ack_ms);
	PGN_BUF_LIT(b, ",\"body\":");
	pgn_buf_json_str(b, m->body);
	PGN_BUF_LIT(b, ",\"priority\":");
	pgn_buf_json_str(b, pgn_priority_name(m->priority));
	PGN_BUF_LIT(b, ",\"group\":");
	pgn_buf_json_str(b,
	    m->group != NULL && m->group[0] != '\0' ? m->group : NULL);
}

/* What was written into 'b' as a cJSON object (NULL on ENOMEM). */
static struct cJSON *
parsed(struct pgn_buf *b)
{
	cJSON *o = NULL;

	if (b->err == PGN_OK)
		o = cJSON_ParseWithLength(b->data, b->len);
	pgn_buf_release(b);
	return o;
}

struct cJSON *
pgn_msg_json(const struct pgn_msg *m)
{
	const struct msg_part p = {m->id, m->sender, m->recipient,
	    m->created_ms, m->reply_to, m->thread, m->ack_ms, m->body,
	    m->priority, m->group};
	struct pgn_buf b;

	pgn_buf_init(&b, PGN_MAX_MSG_JSON);
	write_msg(&b, &p, 0);
	PGN_BUF_LIT(&b, "}");
	return parsed(&b);
}

const char *
pgn_msg_state(const struct pgn_msg_status *s)
{
	if (!s->found)
		return "unknown";
	if (s->acked_ms != 0)
		return "acknowledged";
	if (s->overdue)
		return "overdue";
	if (s->delivered_ms != 0)
		return "delivered";
	/* queued -> woken (a doorbell rang, decision 0177) -> delivered */
	return s->woken_ms != 0 && !s->unheard ? "woken" : "queued";
}

/* The acknowledgement's part of a status: "ack", or null. */
static void
json_ack(cJSON *o, const struct pgn_msg_status *s)
{
	cJSON *a;

	if (s->ack_ms == 0 && s->acked_ms == 0) {
		cJSON_AddNullToObject(o, "ack");
		return;
	}
	a = cJSON_AddObjectToObject(o, "ack");
	if (a == NULL)
		return;
	json_id_or_null(a, "within_ms", s->ack_ms);
	if (s->acked_ms != 0)
		json_time(a, "acknowledged", s->acked_ms);
	else
		cJSON_AddNullToObject(a, "acknowledged");
	if (s->ack_text != NULL)
		cJSON_AddStringToObject(a, "text", s->ack_text);
	else
		cJSON_AddNullToObject(a, "text");
	json_id_or_null(a, "reply", s->ack_reply);
	cJSON_AddBoolToObject(a, "overdue", s->overdue);
	if (s->reminded_ms != 0)
		json_time(a, "reminded", s->reminded_ms);
	else
		cJSON_AddNullToObject(a, "reminded");
}

struct cJSON *
pgn_msg_status_json(const struct pgn_msg_status *s)
{
	cJSON *o;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "id", (double)s->id);
	cJSON_AddStringToObject(o, "state", pgn_msg_state(s));
	if (!s->found)
		return o;
	cJSON_AddStringToObject(o, "from", s->sender);
	cJSON_AddStringToObject(o, "to", s->recipient);
	json_time(o, "created", s->created_ms);
	json_id_or_null(o, "reply_to", s->reply_to);
	if (s->delivered_ms == 0) {
		cJSON_AddNullToObject(o, "delivered");
		cJSON_AddNullToObject(o, "route");
		cJSON_AddNullToObject(o, "session");
		cJSON_AddNullToObject(o, "host");
	} else {
		json_time(o, "delivered", s->delivered_ms);
		cJSON_AddStringToObject(o, "route", s->route);
		json_str_or_null(o, "session", s->session);
		json_str_or_null(o, "host", s->host);
	}
	/* Decision 0177: the doorbell its send rang, if any. */
	if (s->woken_ms != 0) {
		cJSON *w = cJSON_AddObjectToObject(o, "woken");

		if (w != NULL) {
			json_time(w, "at", s->woken_ms);
			cJSON_AddStringToObject(w, "via", s->woken_via);
			cJSON_AddBoolToObject(w, "heard", !s->unheard);
		}
	} else
		cJSON_AddNullToObject(o, "woken");
	/* Decision 0157: its thread and acknowledgement; a thread's text. */
	cJSON_AddNumberToObject(o, "thread", (double)s->thread);
	cJSON_AddStringToObject(o, "priority", pgn_priority_name(s->priority));
	json_str_or_null(o, "group", s->group);
	json_ack(o, s);
	if (s->body != NULL)
		cJSON_AddStringToObject(o, "body", s->body);
	return o;
}

/* A hit's state: its time, or null for 0. */
static void
write_state(struct pgn_buf *b, int64_t v, int ms)
{
	if (v != 0)
		write_time(b, v, ms);
	else
		PGN_BUF_LIT(b, "null");
}

void
pgn_hit_write(struct pgn_buf *b, const struct pgn_hit *h, int flags)
{
	const struct msg_part p = {h->id, h->sender, h->recipient,
	    h->created_ms, h->reply_to, h->thread, h->ack_ms, h->body,
	    h->priority, h->group};
	int ms = (flags & PGN_HIT_JSON_MS) != 0;

	write_msg(b, &p, ms);
	/* The hit's states: delivery, acknowledgement, doorbell (0177). */
	PGN_BUF_LIT(b, ",\"delivered\":");
	write_state(b, h->delivered_ms, ms);
	PGN_BUF_LIT(b, ",\"acknowledged\":");
	write_state(b, h->acked_ms, ms);
	PGN_BUF_LIT(b, ",\"woken\":");
	write_state(b, h->woken_ms, ms);
	PGN_BUF_LIT(b, ",\"woken_via\":");
	pgn_buf_json_str(b,
	    h->woken_ms != 0 && h->woken_via[0] != '\0' ? h->woken_via : NULL);
	if (h->woken_ms != 0 && !h->unheard)
		PGN_BUF_LIT(b, ",\"heard\":true}");
	else
		PGN_BUF_LIT(b, ",\"heard\":false}");
}

struct cJSON *
pgn_hit_json(const struct pgn_hit *h, int flags)
{
	struct pgn_buf b;

	pgn_buf_init(&b, PGN_MAX_MSG_JSON);
	pgn_hit_write(&b, h, flags);
	return parsed(&b);
}
