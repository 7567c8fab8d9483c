/*
 * A message and a message's status as JSON: the one shape of `pigeon
 * read/wait/inbox --json`, `pigeon status/thread --json` and the MCP
 * tools' results (decision 0216). Explicit nulls, the body as "body".
 * A search hit is the message's object and its states (decision 0238):
 * `pigeon search --json` and pigeon web.
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

struct cJSON *
pgn_msg_json(const struct pgn_msg *m)
{
	cJSON *o;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "id", (double)m->id);
	cJSON_AddStringToObject(o, "from", m->sender);
	cJSON_AddStringToObject(o, "to", m->recipient);
	json_time(o, "created", m->created_ms);
	json_id_or_null(o, "reply_to", m->reply_to);
	cJSON_AddNumberToObject(o, "thread",
	    (double)(m->thread != 0 ? m->thread : m->id));
	json_id_or_null(o, "ack_within_ms", m->ack_ms);
	cJSON_AddStringToObject(o, "body", m->body);
	cJSON_AddStringToObject(o, "priority", pgn_priority_name(m->priority));
	json_str_or_null(o, "group", m->group);
	return o;
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

/*
 * An integer as its digits: cJSON prints an integral double the same
 * way, and a page of hits costs a third less (decision 0220).
 */
static void
json_int(cJSON *o, const char *key, int64_t v)
{
	char buf[24];

	(void)snprintf(buf, sizeof(buf), "%lld", (long long)v);
	(void)cJSON_AddRawToObject(o, key, buf);
}

/* A hit's time: null for 0, else text or (ms) milliseconds. */
static void
hit_time(cJSON *o, const char *key, int64_t v, int ms)
{
	if (v == 0)
		cJSON_AddNullToObject(o, key);
	else if (ms)
		json_int(o, key, v);
	else
		json_time(o, key, v);
}

struct cJSON *
pgn_hit_json(const struct pgn_hit *h, int flags)
{
	int ms = (flags & PGN_HIT_JSON_MS) != 0;
	cJSON *o;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	/* pgn_msg_json's keys, in its order. */
	json_int(o, "id", h->id);
	cJSON_AddStringToObject(o, "from", h->sender);
	cJSON_AddStringToObject(o, "to", h->recipient);
	if (ms)
		json_int(o, "created", h->created_ms);
	else
		json_time(o, "created", h->created_ms);
	if (h->reply_to != 0)
		json_int(o, "reply_to", h->reply_to);
	else
		cJSON_AddNullToObject(o, "reply_to");
	json_int(o, "thread", h->thread != 0 ? h->thread : h->id);
	if (h->ack_ms != 0)
		json_int(o, "ack_within_ms", h->ack_ms);
	else
		cJSON_AddNullToObject(o, "ack_within_ms");
	cJSON_AddStringToObject(o, "body", h->body);
	cJSON_AddStringToObject(o, "priority", pgn_priority_name(h->priority));
	json_str_or_null(o, "group", h->group);
	/* The hit's states: delivery, acknowledgement, doorbell (0177). */
	hit_time(o, "delivered", h->delivered_ms, ms);
	hit_time(o, "acknowledged", h->acked_ms, ms);
	hit_time(o, "woken", h->woken_ms, ms);
	json_str_or_null(o, "woken_via", h->woken_ms != 0 ? h->woken_via : "");
	cJSON_AddBoolToObject(o, "heard", h->woken_ms != 0 && !h->unheard);
	return o;
}
