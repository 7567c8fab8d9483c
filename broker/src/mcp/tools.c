/*
 * pigeon mcp, the tools (docs/mcp.md, decision 0166): each verb of the
 * mailbox with its input schema, its arguments checked, the library's
 * call and its structured result. A failure is the tool's error, worded
 * as the CLI words it, for the model to read and act on.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "mcp_int.h"
#include "pigeon/lease.h"

#define MAX_ARGS 8 /* arguments one tool takes */

struct arg {
	const char *name;
	const char *type; /* "string", "integer", "boolean", "strings" */
	const char *text;
	int required;
};

struct tool {
	const char *name;
	const char *title;
	const char *text;
	int read_only;
	struct arg args[MAX_ARGS];
	cJSON *(*fn)(struct pgn_mcp *s, const cJSON *args);
};

static cJSON *t_send(struct pgn_mcp *, const cJSON *);
static cJSON *t_inbox(struct pgn_mcp *, const cJSON *);
static cJSON *t_read(struct pgn_mcp *, const cJSON *);
static cJSON *t_wait(struct pgn_mcp *, const cJSON *);
static cJSON *t_status(struct pgn_mcp *, const cJSON *);
static cJSON *t_ack(struct pgn_mcp *, const cJSON *);
static cJSON *t_thread(struct pgn_mcp *, const cJSON *);
static cJSON *t_lease_take(struct pgn_mcp *, const cJSON *);
static cJSON *t_lease_release(struct pgn_mcp *, const cJSON *);
static cJSON *t_lease_list(struct pgn_mcp *, const cJSON *);

static const struct tool tools[] = {
    {"send", "Send a message",
        "Queue a message for one or more agents of this project ('all': every other agent, '@NAME': a group). You send as your session's agent.",
        0,
        {{"to", "strings", "recipient names", 1},
            {"text", "string", "the message, at most 4096 bytes of UTF-8", 1},
            {"reply_to", "integer", "the id of the message this answers", 0},
            {"priority", "string", "urgent, normal (the default) or low", 0},
            {"ack", "boolean",
                "ask the recipient to acknowledge it (within 30 minutes of delivery)",
                0}},
        t_send},
    {"inbox", "List queued messages",
        "List your queued messages without taking them, in the order read takes them.",
        1, {{0}}, t_inbox},
    {"read", "Read your messages",
        "Take your queued messages: each is delivered once, to you, now.", 0,
        {{0}}, t_read},
    {"wait", "Wait for a message",
        "Wait for your next message (at most 50 seconds) and take it; none: timed_out.",
        0,
        {{"timeout", "integer", "seconds to wait, 1 to 50 (default 30)", 0},
            {"from", "string", "only a message from this agent", 0},
            {"reply_to", "integer", "only a reply to this message of yours",
                0}},
        t_wait},
    {"status", "Where messages stand",
        "Where each message stands: queued, delivered (when, how) or acknowledged.",
        1, {{"ids", "integers", "message ids", 1}}, t_status},
    {"ack", "Acknowledge a message",
        "Acknowledge a message sent to you, with an optional short text.", 0,
        {{"id", "integer", "the message id", 1},
            {"text", "string", "what to say, at most 1024 bytes", 0}},
        t_ack},
    {"thread", "Read a conversation",
        "The messages of the conversation a message belongs to, oldest first.",
        1, {{"id", "integer", "any message id of the conversation", 1}},
        t_thread},
    {"lease_take", "Lease paths",
        "Take a lease on paths of the project (gitignore-style patterns relative to its root) before editing them; refused while another agent holds them.",
        0,
        {{"patterns", "strings", "the paths or patterns", 1},
            {"ttl", "string", "how long, as 30m, 2h (default 30m, at most 8h)",
                0},
            {"reason", "string", "what for, shown to others", 0},
            {"shared", "boolean", "a shared lease (others may share it)", 0}},
        t_lease_take},
    {"lease_release", "Release leases",
        "Release your leases on these patterns, or all of them.", 0,
        {{"patterns", "strings", "the patterns as taken", 0},
            {"all", "boolean", "every lease you hold", 0}},
        t_lease_release},
    {"lease_list", "List leases", "The live leases of this project, by holder.",
        1, {{"agent", "string", "only this agent's", 0}}, t_lease_list},
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static cJSON *
schema_of(const struct arg *a)
{
	cJSON *p, *items;

	p = cJSON_CreateObject();
	if (p == NULL)
		return NULL;
	if (strcmp(a->type, "strings") == 0 ||
	    strcmp(a->type, "integers") == 0) {
		cJSON_AddStringToObject(p, "type", "array");
		items = cJSON_AddObjectToObject(p, "items");
		cJSON_AddStringToObject(items, "type",
		    a->type[0] == 's' ? "string" : "integer");
	} else
		cJSON_AddStringToObject(p, "type", a->type);
	cJSON_AddStringToObject(p, "description", a->text);
	return p;
}

cJSON *
pgn_mcp_tools(void)
{
	cJSON *arr, *t, *in, *props, *req, *ann;
	const struct arg *a;
	size_t i;

	arr = cJSON_CreateArray();
	for (i = 0; arr != NULL && i < NTOOLS; i++) {
		t = cJSON_CreateObject();
		cJSON_AddItemToArray(arr, t);
		cJSON_AddStringToObject(t, "name", tools[i].name);
		cJSON_AddStringToObject(t, "title", tools[i].title);
		cJSON_AddStringToObject(t, "description", tools[i].text);
		in = cJSON_AddObjectToObject(t, "inputSchema");
		cJSON_AddStringToObject(in, "type", "object");
		props = cJSON_AddObjectToObject(in, "properties");
		req = cJSON_CreateArray();
		for (a = tools[i].args; a->name != NULL; a++) {
			cJSON_AddItemToObject(props, a->name, schema_of(a));
			if (a->required)
				cJSON_AddItemToArray(req,
				    cJSON_CreateString(a->name));
		}
		if (cJSON_GetArraySize(req) > 0)
			cJSON_AddItemToObject(in, "required", req);
		else
			cJSON_Delete(req);
		cJSON_AddBoolToObject(in, "additionalProperties", 0);
		ann = cJSON_AddObjectToObject(t, "annotations");
		cJSON_AddBoolToObject(ann, "readOnlyHint", tools[i].read_only);
		cJSON_AddBoolToObject(ann, "openWorldHint", 0);
	}
	return arr;
}

/* ---- results -------------------------------------------------------- */

static cJSON *
ok(cJSON *data)
{
	cJSON *r, *c, *t;
	char *text;

	if (data == NULL)
		return NULL;
	text = cJSON_PrintUnformatted(data);
	r = cJSON_CreateObject();
	if (text == NULL || r == NULL) {
		cJSON_free(text);
		cJSON_Delete(r);
		cJSON_Delete(data);
		return NULL;
	}
	c = cJSON_AddArrayToObject(r, "content");
	t = cJSON_CreateObject();
	cJSON_AddItemToArray(c, t);
	cJSON_AddStringToObject(t, "type", "text");
	cJSON_AddStringToObject(t, "text", text);
	cJSON_free(text);
	cJSON_AddItemToObject(r, "structuredContent", data);
	cJSON_AddBoolToObject(r, "isError", 0);
	return r;
}

static cJSON *fail(const char *fmt, ...) PGN_PRINTF(1, 2);

static cJSON *
fail(const char *fmt, ...)
{
	char msg[PGN_MAX_ERRMSG + 256];
	cJSON *r, *c, *t;
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r = cJSON_CreateObject();
	if (r == NULL)
		return NULL;
	c = cJSON_AddArrayToObject(r, "content");
	t = cJSON_CreateObject();
	cJSON_AddItemToArray(c, t);
	cJSON_AddStringToObject(t, "type", "text");
	cJSON_AddStringToObject(t, "text", msg);
	cJSON_AddBoolToObject(r, "isError", 1);
	return r;
}

/* The library's error with its remedy, in the tools' terms. */
static cJSON *
fail_err(const struct pgn_err *e)
{
	const char *arg = e->arg[0] != '\0' ? e->arg : "NAME";

	switch (e->hint) {
	case PGN_HINT_AGENTS:
		return fail("%s See pigeon agents", e->msg);
	case PGN_HINT_READ_FIRST:
		return fail("%s: read them first (the read tool)", e->msg);
	case PGN_HINT_MESSAGES:
	case PGN_HINT_STATUS:
		return fail("%s; look the id up with the status tool", e->msg);
	case PGN_HINT_SENDER:
	case PGN_HINT_SESSION:
		return fail(
		    "%s: this server acts for no agent; start pigeon mcp with --agent NAME or PIGEON_AGENT (pigeon install registers it so)",
		    e->msg);
	case PGN_HINT_DROP_FROM:
		return fail("%s", e->msg);
	case PGN_HINT_CREATE:
		return fail(
		    "%s (pigeon send --create queues it for an agent that will appear later)",
		    e->msg);
	default:
		(void)arg;
		return fail("%s", e->msg);
	}
}

static cJSON *
fail_db(struct pgn_mcp *s)
{
	return fail_err(pgn_db_err(s->db));
}

static cJSON *
json_time(cJSON *o, const char *key, int64_t ms)
{
	char buf[32];

	if (ms == 0)
		return cJSON_AddNullToObject(o, key);
	pgn_format_time(ms, buf, sizeof(buf));
	return cJSON_AddStringToObject(o, key, buf);
}

static cJSON *
json_msgs(const struct pgn_msgs *m)
{
	cJSON *o, *arr, *item;
	size_t i;

	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	if (arr == NULL)
		goto fail;
	for (i = 0; i < m->n; i++) {
		item = pgn_msg_json(&m->v[i]);
		if (item == NULL) /* out of memory, or over PGN_MAX_MSG_JSON */
			goto fail;
		cJSON_AddItemToArray(arr, item);
	}
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* ---- arguments ------------------------------------------------------ */

/* The tool's argument 'name' ('a' its declaration), NULL when absent. */
static const cJSON *
arg_get(const cJSON *args, const char *name)
{
	const cJSON *v;

	v = cJSON_GetObjectItemCaseSensitive(args, name);
	return cJSON_IsNull(v) ? NULL : v;
}

static int
is_int(const cJSON *v, int64_t min, int64_t max)
{
	return cJSON_IsNumber(v) && v->valuedouble >= (double)min &&
	    v->valuedouble <= (double)max &&
	    v->valuedouble == (double)(int64_t)v->valuedouble;
}

/*
 * Every argument is declared and of its type: NULL, or the tool's error
 * naming the first that is not.
 */
static cJSON *
check_args(const struct tool *t, const cJSON *args)
{
	const cJSON *v, *e;
	const struct arg *a;

	cJSON_ArrayForEach(v, args)
	{
		for (a = t->args; a->name != NULL; a++)
			if (strcmp(a->name, v->string) == 0)
				break;
		if (a->name == NULL)
			return fail("%s: unknown argument '%.64s'", t->name,
			    v->string);
		if (cJSON_IsNull(v))
			continue;
		if (strcmp(a->type, "string") == 0 && !cJSON_IsString(v))
			return fail("%s: '%s' is a string", t->name, a->name);
		if (strcmp(a->type, "boolean") == 0 && !cJSON_IsBool(v))
			return fail("%s: '%s' is true or false", t->name,
			    a->name);
		if (strcmp(a->type, "integer") == 0 &&
		    !is_int(v, INT64_MIN / 2, INT64_MAX / 2))
			return fail("%s: '%s' is a whole number", t->name,
			    a->name);
		if (strcmp(a->type, "strings") == 0) {
			if (cJSON_IsString(v))
				continue;
			if (!cJSON_IsArray(v))
				return fail(
				    "%s: '%s' is a string or a list of strings",
				    t->name, a->name);
			cJSON_ArrayForEach(e, v) if (
			    !cJSON_IsString(
			        e)) return fail("%s: '%s' is a list of strings",
			    t->name, a->name);
		}
		if (strcmp(a->type, "integers") == 0) {
			if (is_int(v, 1, INT64_MAX / 2))
				continue;
			if (!cJSON_IsArray(v))
				return fail("%s: '%s' is a list of message ids",
				    t->name, a->name);
			cJSON_ArrayForEach(e, v) if (!is_int(e, 1, INT64_MAX / 2)) return fail(
			    "%s: '%s' is a list of message ids (whole numbers from 1)",
			    t->name, a->name);
		}
	}
	for (a = t->args; a->name != NULL; a++)
		if (a->required && arg_get(args, a->name) == NULL)
			return fail("%s: '%s' is missing", t->name, a->name);
	return NULL;
}

/* A strings argument into v[0..*n), at most 'max' (borrowed). */
static cJSON *
strings(const char *tool, const char *name, const cJSON *v, const char **out,
    size_t max, size_t *n)
{
	const cJSON *e;

	*n = 0;
	if (v == NULL)
		return NULL;
	if (cJSON_IsString(v)) {
		out[(*n)++] = v->valuestring;
		return NULL;
	}
	cJSON_ArrayForEach(e, v)
	{
		if (*n == max)
			return fail("%s: at most %zu %s", tool, max, name);
		out[(*n)++] = e->valuestring;
	}
	if (*n == 0)
		return fail("%s: '%s' is empty", tool, name);
	return NULL;
}

/* ---- the database --------------------------------------------------- */

/* The database, opened once and again when its file was replaced. */
static cJSON *
need_db(struct pgn_mcp *s)
{
	struct pgn_err err;
	char *path = NULL;
	pgn_status st;
	cJSON *r = NULL;

	if (s->db != NULL && pgn_db_check_file(s->db) == PGN_OK)
		return NULL;
	pgn_db_close(s->db);
	s->db = NULL;
	if (s->scope == NULL && pgn_scope_find(s->dir, &s->scope) != PGN_OK)
		return fail("out of memory");
	st = pgn_db_path(s->db_flag, &path, &err);
	if (st != PGN_OK)
		return fail_err(&err);
	st = pgn_db_open(path, PGN_OPEN_CREATE, PGN_BUSY_DEADLINE_MS, &s->db);
	if (st == PGN_OK)
		st = pgn_db_set_scope(s->db, s->scope);
	if (st != PGN_OK) {
		r = s->db != NULL ? fail_db(s) : fail("out of memory");
		pgn_db_close(s->db);
		s->db = NULL;
	}
	free(path);
	return r;
}

/* The acting agent into s->actor, or the tool's error. */
static cJSON *
need_actor(struct pgn_mcp *s)
{
	if (pgn_actor(s->db, s->agent, s->session, s->agent_default,
	        s->actor) != PGN_OK)
		return fail_db(s);
	return NULL;
}

/* ---- the tools ------------------------------------------------------ */

static cJSON *
t_send(struct pgn_mcp *s, const cJSON *args)
{
	static struct pgn_sent sent[PGN_MAX_LIST];
	const char *to[PGN_MAX_RECIPIENTS];
	struct pgn_send req;
	const cJSON *v;
	cJSON *r, *o, *arr, *item;
	struct pgn_err err;
	size_t nto, nsent = 0, i;

	memset(&req, 0, sizeof(req));
	r = strings("send", "recipients", arg_get(args, "to"), to,
	    PGN_MAX_RECIPIENTS, &nto);
	if (r != NULL)
		return r;
	v = arg_get(args, "text");
	req.body = v->valuestring;
	req.body_len = strlen(v->valuestring);
	if (req.body_len > PGN_MAX_BODY)
		return fail(
		    "message body is over the limit of %d bytes: write it to a file and send the file's path",
		    PGN_MAX_BODY);
	v = arg_get(args, "reply_to");
	if (v != NULL) {
		if (v->valuedouble < 1)
			return fail("send: 'reply_to' is not a message id");
		req.reply_to = (int64_t)v->valuedouble;
	}
	v = arg_get(args, "priority");
	if (v != NULL &&
	    pgn_priority_parse(v->valuestring, &req.priority, &err) != PGN_OK)
		return fail("send: 'priority': %s", err.msg);
	v = arg_get(args, "ack");
	if (cJSON_IsTrue(v))
		req.ack_ms = PGN_ACK_DEFAULT_MS;
	req.from = s->agent;
	req.from_default = s->agent_default;
	req.session = s->session;
	req.to = to;
	req.nto = nto;
	if (pgn_send(s->db, &req, sent, PGN_MAX_LIST, &nsent) != PGN_OK)
		return fail_db(s);
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "sent");
	for (i = 0; arr != NULL && i < nsent; i++) {
		item = cJSON_CreateObject();
		cJSON_AddNumberToObject(item, "id", (double)sent[i].id);
		cJSON_AddStringToObject(item, "to", sent[i].to);
		cJSON_AddItemToArray(arr, item);
	}
	if (nsent > 0)
		cJSON_AddStringToObject(o, "from", sent[0].from);
	return ok(o);
}

static cJSON *
t_inbox(struct pgn_mcp *s, const cJSON *args)
{
	struct pgn_msgs m = {0};
	cJSON *r;

	(void)args;
	r = need_actor(s);
	if (r != NULL)
		return r;
	if (pgn_inbox(s->db, s->actor, &m) != PGN_OK)
		return fail_db(s);
	r = json_msgs(&m);
	cJSON_AddStringToObject(r, "agent", s->actor);
	pgn_msgs_release(&m);
	return ok(r);
}

/* What a claim took: remembered (for a lost answer), then its result. */
static cJSON *
claimed(struct pgn_mcp *s, const struct pgn_msgs *m, int waited)
{
	size_t i;
	cJSON *r;

	/* read claims at most PGN_MCP_READ_MAX, wait one: room for all */
	for (i = 0; i < m->n && i < PGN_MCP_READ_MAX; i++)
		s->claimed[i] = m->v[i].id;
	s->nclaimed = i;
	r = json_msgs(m);
	cJSON_AddStringToObject(r, "agent", s->actor);
	if (waited)
		cJSON_AddBoolToObject(r, "timed_out", m->n == 0);
	else
		cJSON_AddNumberToObject(r, "left", (double)m->left);
	r = ok(r);
	s->claim_answered = r != NULL;
	return r;
}

static cJSON *
t_read(struct pgn_mcp *s, const cJSON *args)
{
	struct pgn_msgs m = {0};
	struct pgn_claim req;
	cJSON *r;

	(void)args;
	r = need_actor(s);
	if (r != NULL)
		return r;
	memset(&req, 0, sizeof(req));
	req.agent = s->actor;
	req.route = "mcp";
	/* A bounded answer: a host cuts a long tool result, unseen. */
	req.max = PGN_MCP_READ_MAX;
	if (pgn_claim(s->db, &req, &m) != PGN_OK)
		return fail_db(s);
	r = claimed(s, &m, 0);
	pgn_msgs_release(&m);
	return r;
}

static cJSON *
t_wait(struct pgn_mcp *s, const cJSON *args)
{
	struct pgn_msgs m = {0};
	struct pgn_wait w;
	const cJSON *v;
	cJSON *r;

	memset(&w, 0, sizeof(w));
	w.timeout_ms = PGN_MCP_WAIT_DEF_MS;
	v = arg_get(args, "timeout");
	if (v != NULL) {
		if (!is_int(v, 1, PGN_MCP_WAIT_MAX_MS / 1000))
			return fail("wait: 'timeout' is 1 to %d seconds",
			    PGN_MCP_WAIT_MAX_MS / 1000);
		w.timeout_ms = (int64_t)v->valuedouble * 1000;
	}
	r = need_actor(s);
	if (r != NULL)
		return r;
	w.claim.agent = s->actor;
	w.claim.route = "mcp";
	w.claim.max = 1;
	v = arg_get(args, "from");
	w.claim.from = v != NULL ? v->valuestring : NULL;
	v = arg_get(args, "reply_to");
	if (v != NULL) {
		if (v->valuedouble < 1)
			return fail("wait: 'reply_to' is not a message id");
		w.claim.reply_to = (int64_t)v->valuedouble;
	}
	w.cancel = s->cancel;
	w.cancel_arg = s->cancel_arg;
	if (pgn_wait(s->db, &w, &m) != PGN_OK)
		return fail_db(s);
	r = claimed(s, &m, 1);
	pgn_msgs_release(&m);
	return r;
}

static cJSON *
t_status(struct pgn_mcp *s, const cJSON *args)
{
	struct pgn_msg_status st[PGN_MAX_STATUS_IDS];
	int64_t ids[PGN_MAX_STATUS_IDS];
	const cJSON *v, *e;
	size_t n = 0, i;
	cJSON *o, *arr;

	v = arg_get(args, "ids");
	if (cJSON_IsNumber(v))
		ids[n++] = (int64_t)v->valuedouble;
	else
		cJSON_ArrayForEach(e, v)
		{
			if (n == PGN_MAX_STATUS_IDS)
				return fail("status: at most %d ids",
				    PGN_MAX_STATUS_IDS);
			ids[n++] = (int64_t)e->valuedouble;
		}
	if (n == 0)
		return fail("status: 'ids' is empty");
	memset(st, 0, sizeof(st));
	if (pgn_msg_status(s->db, ids, n, st) != PGN_OK)
		return fail_db(s);
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	for (i = 0; arr != NULL && i < n; i++)
		cJSON_AddItemToArray(arr, pgn_msg_status_json(&st[i]));
	pgn_msg_status_release(st, n);
	return ok(o);
}

static cJSON *
t_ack(struct pgn_mcp *s, const cJSON *args)
{
	struct pgn_acked out;
	struct pgn_ack req;
	const cJSON *v;
	cJSON *o;

	memset(&req, 0, sizeof(req));
	v = arg_get(args, "id");
	if (v->valuedouble < 1)
		return fail("ack: 'id' is not a message id");
	req.id = (int64_t)v->valuedouble;
	v = arg_get(args, "text");
	if (v != NULL) {
		req.text = v->valuestring;
		req.text_len = strlen(v->valuestring);
	}
	req.from = s->agent;
	req.session = s->session;
	req.from_default = s->agent_default;
	if (pgn_ack(s->db, &req, &out) != PGN_OK)
		return fail_db(s);
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "id", (double)req.id);
	cJSON_AddStringToObject(o, "agent", out.agent);
	cJSON_AddStringToObject(o, "sender", out.sender);
	cJSON_AddBoolToObject(o, "already", out.already);
	json_time(o, "acknowledged", out.acked_ms);
	return ok(o);
}

static cJSON *
t_thread(struct pgn_mcp *s, const cJSON *args)
{
	struct pgn_msg_status *st = NULL;
	size_t n = 0, i;
	int more = 0;
	const cJSON *v;
	cJSON *o, *arr;

	v = arg_get(args, "id");
	if (v->valuedouble < 1)
		return fail("thread: 'id' is not a message id");
	if (pgn_thread(s->db, (int64_t)v->valuedouble, &st, &n, &more) !=
	    PGN_OK)
		return fail_db(s);
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "messages");
	for (i = 0; arr != NULL && i < n; i++)
		cJSON_AddItemToArray(arr, pgn_msg_status_json(&st[i]));
	cJSON_AddBoolToObject(o, "more", more);
	pgn_msg_status_release(st, n);
	free(st);
	return ok(o);
}

static cJSON *
json_lease(const struct pgn_lease *l)
{
	cJSON *o;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "holder", l->holder);
	cJSON_AddStringToObject(o, "pattern", l->pattern);
	cJSON_AddBoolToObject(o, "shared", l->shared);
	if (l->reason[0] != '\0')
		cJSON_AddStringToObject(o, "reason", l->reason);
	json_time(o, "expires", l->expires_ms);
	return o;
}

/* Patterns made relative to the scope's root, into rel[0..*n). */
static cJSON *
lease_patterns(struct pgn_mcp *s, const char *tool, const cJSON *v,
    char rel[][PGN_MAX_LEASE_PATTERN + 1], const char **out, size_t *n)
{
	const char *given[PGN_MAX_LEASE_PATTERNS];
	struct pgn_err err;
	size_t i;
	cJSON *r;

	r = strings(tool, "patterns", v, given, PGN_MAX_LEASE_PATTERNS, n);
	if (r != NULL)
		return r;
	for (i = 0; i < *n; i++) {
		if (pgn_lease_relative(pgn_db_scope(s->db), given[i], rel[i],
		        PGN_MAX_LEASE_PATTERN + 1, &err) != PGN_OK)
			return fail_err(&err);
		out[i] = rel[i];
	}
	return NULL;
}

static cJSON *
t_lease_take(struct pgn_mcp *s, const cJSON *args)
{
	static char rel[PGN_MAX_LEASE_PATTERNS][PGN_MAX_LEASE_PATTERN + 1];
	const char *pats[PGN_MAX_LEASE_PATTERNS];
	struct pgn_lease_taken out;
	struct pgn_lease_take req;
	const cJSON *v;
	cJSON *r, *o, *arr;
	size_t i;

	memset(&req, 0, sizeof(req));
	memset(&out, 0, sizeof(out));
	r = lease_patterns(s, "lease_take", arg_get(args, "patterns"), rel,
	    pats, &req.npatterns);
	if (r != NULL)
		return r;
	req.patterns = pats;
	v = arg_get(args, "ttl");
	if (v != NULL &&
	    pgn_parse_duration(v->valuestring, &req.ttl_ms) != PGN_OK)
		return fail(
		    "lease_take: 'ttl' '%.64s': not a duration (try 30m or 2h)",
		    v->valuestring);
	v = arg_get(args, "reason");
	req.reason = v != NULL ? v->valuestring : NULL;
	req.shared = cJSON_IsTrue(arg_get(args, "shared"));
	req.who.agent = s->agent;
	req.who.session = s->session;
	req.who.agent_default = s->agent_default;
	if (pgn_lease_take(s->db, &req, &out) != PGN_OK) {
		pgn_lease_taken_release(&out);
		return fail_db(s);
	}
	if (out.held) {
		r = fail(
		    "'%s' is leased by %s%s%s until then; wait for its release, or work elsewhere",
		    out.wanted, out.blocker.holder,
		    out.blocker.reason[0] != '\0' ? ": " : "",
		    out.blocker.reason);
		pgn_lease_taken_release(&out);
		return r;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "agent", out.agent);
	arr = cJSON_AddArrayToObject(o, "leases");
	for (i = 0; arr != NULL && i < out.leases.n; i++)
		cJSON_AddItemToArray(arr, json_lease(&out.leases.v[i]));
	cJSON_AddNumberToObject(o, "renewed", (double)out.renewed);
	pgn_lease_taken_release(&out);
	return ok(o);
}

static cJSON *
t_lease_release(struct pgn_mcp *s, const cJSON *args)
{
	static char rel[PGN_MAX_LEASE_PATTERNS][PGN_MAX_LEASE_PATTERN + 1];
	const char *pats[PGN_MAX_LEASE_PATTERNS];
	struct pgn_lease_actor who;
	size_t n = 0, released = 0;
	int all;
	cJSON *r, *o;

	all = cJSON_IsTrue(arg_get(args, "all"));
	if (all == (arg_get(args, "patterns") != NULL))
		return fail(
		    "lease_release: name 'patterns' or 'all', one of them");
	if (!all) {
		r = lease_patterns(s, "lease_release",
		    arg_get(args, "patterns"), rel, pats, &n);
		if (r != NULL)
			return r;
	}
	who.agent = s->agent;
	who.session = s->session;
	who.agent_default = s->agent_default;
	if (pgn_lease_release(s->db, &who, pats, n, all, &released) != PGN_OK)
		return fail_db(s);
	o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "released", (double)released);
	return ok(o);
}

static cJSON *
t_lease_list(struct pgn_mcp *s, const cJSON *args)
{
	struct pgn_leases l = {0};
	const cJSON *v;
	cJSON *o, *arr;
	size_t i;

	v = arg_get(args, "agent");
	if (pgn_lease_list(s->db, v != NULL ? v->valuestring : NULL, 0, &l) !=
	    PGN_OK)
		return fail_db(s);
	o = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(o, "leases");
	for (i = 0; arr != NULL && i < l.n; i++)
		cJSON_AddItemToArray(arr, json_lease(&l.v[i]));
	pgn_leases_release(&l);
	return ok(o);
}

pgn_status
pgn_mcp_call(struct pgn_mcp *s, const char *name, const cJSON *args,
    cJSON **result, int *unknown)
{
	const struct tool *t = NULL;
	cJSON *empty = NULL;
	size_t i;

	*result = NULL;
	*unknown = 0;
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			t = &tools[i];
	if (t == NULL) {
		*unknown = 1;
		return PGN_OK;
	}
	if (args == NULL) {
		empty = cJSON_CreateObject();
		if (empty == NULL)
			return PGN_ENOMEM;
		args = empty;
	}
	*result = check_args(t, args);
	if (*result == NULL)
		*result = need_db(s);
	if (*result == NULL)
		*result = t->fn(s, args);
	cJSON_Delete(empty);
	return *result != NULL ? PGN_OK : PGN_ENOMEM;
}
