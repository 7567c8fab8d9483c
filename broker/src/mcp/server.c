/*
 * pigeon mcp, the protocol (docs/mcp.md, decision 0165): JSON-RPC 2.0,
 * one message a line, the lifecycle of the revisions the pinned hosts
 * speak, and the dispatch to the tools (tools.c). A line in, at most a
 * line out; nothing here reads or writes a descriptor.
 */
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "mcp_int.h"

/* JSON-RPC's error codes. */
#define RPC_PARSE     (-32700)
#define RPC_INVALID   (-32600)
#define RPC_NO_METHOD (-32601)
#define RPC_PARAMS    (-32602)
#define RPC_INTERNAL  (-32603)

/* The revisions answered in kind; any other gets PGN_MCP_LATEST. */
static const char *const versions[] = {
    PGN_MCP_LATEST,
    "2025-06-18",
    "2025-03-26",
};

static const char instructions[] =
    "Pigeon is the mailbox shared by the coding agents of this project. "
    "Use these tools to message another agent (send), to look at your "
    "queue (inbox), to take your messages (read, or wait for one), to "
    "see where a message you sent stands (status), to acknowledge one "
    "(ack), to read a conversation (thread) and to lease paths before "
    "editing them (lease_take, lease_release, lease_list). You act as "
    "your session's agent; messages for you also arrive on their own "
    "between your turns.";

static char *
dupstr(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

pgn_status
pgn_mcp_open(const struct pgn_mcp_config *cfg, struct pgn_mcp **out,
    struct pgn_err *err)
{
	struct pgn_mcp *s;
	char name[PGN_MAX_NAME + 1];

	*out = NULL;
	if (cfg->agent != NULL && cfg->agent[0] != '\0' &&
	    pgn_name_check(cfg->agent, name, err) != PGN_OK)
		return PGN_EINVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return PGN_ENOMEM;
	s->db_flag = dupstr(cfg->db_flag);
	s->dir = dupstr(cfg->dir);
	s->agent = dupstr(cfg->agent);
	s->agent_default = dupstr(cfg->agent_default);
	s->session = dupstr(cfg->session);
	s->cancel = cfg->cancel;
	s->cancel_arg = cfg->cancel_arg;
	if ((cfg->db_flag != NULL && s->db_flag == NULL) ||
	    (cfg->dir != NULL && s->dir == NULL) ||
	    (cfg->agent != NULL && s->agent == NULL) ||
	    (cfg->agent_default != NULL && s->agent_default == NULL) ||
	    (cfg->session != NULL && s->session == NULL)) {
		pgn_mcp_close(s);
		return PGN_ENOMEM;
	}
	*out = s;
	return PGN_OK;
}

void
pgn_mcp_close(struct pgn_mcp *s)
{
	if (s == NULL)
		return;
	pgn_db_close(s->db);
	free(s->scope);
	free(s->db_flag);
	free(s->dir);
	free(s->agent);
	free(s->agent_default);
	free(s->session);
	free(s);
}

int
pgn_mcp_is_cancel(const char *line, size_t len)
{
	const cJSON *m;
	cJSON *j;
	int yes;

	if (len > PGN_MCP_MAX_LINE)
		return 0;
	j = cJSON_ParseWithLength(line, len);
	m = cJSON_GetObjectItemCaseSensitive(j, "method");
	yes = cJSON_IsObject(j) && cJSON_IsString(m) &&
	    strcmp(m->valuestring, "notifications/cancelled") == 0;
	cJSON_Delete(j);
	return yes;
}

int
pgn_mcp_claim_answered(const struct pgn_mcp *s)
{
	return s->nclaimed == 0 || s->claim_answered;
}

const int64_t *
pgn_mcp_claimed(const struct pgn_mcp *s, size_t *n)
{
	*n = s->nclaimed;
	return s->claimed;
}

size_t
pgn_mcp_lost_line(const struct pgn_mcp *s, char *buf, size_t cap)
{
	char id[PGN_MAX_ID_TEXT + 1];
	size_t len, i, k;
	int w;

	if (cap == 0)
		return 0;
	w = snprintf(buf, cap, "lost-output agent=%s route=mcp ids=", s->actor);
	if (w < 0 || (size_t)w >= cap) {
		buf[0] = '\0';
		return 0;
	}
	len = (size_t)w;
	for (i = 0; i < s->nclaimed; i++) {
		w = snprintf(id, sizeof(id), "%s%lld", i > 0 ? "," : "",
		    (long long)s->claimed[i]);
		k = w > 0 ? (size_t)w : 0;
		if (len + k >= cap)
			break;
		memcpy(buf + len, id, k + 1);
		len += k;
	}
	return len;
}

/* The answer: {"jsonrpc":"2.0","id":ID,"result"|"error":...}. */
static char *
answer(const cJSON *id, cJSON *result, int code, const char *msg)
{
	cJSON *o, *e;
	char *line = NULL;

	o = cJSON_CreateObject();
	if (o == NULL)
		goto out;
	cJSON_AddStringToObject(o, "jsonrpc", "2.0");
	if (id != NULL)
		cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, 1));
	else
		cJSON_AddNullToObject(o, "id");
	if (result != NULL) {
		cJSON_AddItemToObject(o, "result", result);
		result = NULL;
	} else {
		e = cJSON_AddObjectToObject(o, "error");
		if (e != NULL) {
			cJSON_AddNumberToObject(e, "code", code);
			cJSON_AddStringToObject(e, "message", msg);
		}
	}
	line = cJSON_PrintUnformatted(o);
out:
	cJSON_Delete(result);
	cJSON_Delete(o);
	return line;
}

static cJSON *
initialize(const cJSON *params)
{
	const cJSON *v;
	const char *asked = NULL, *version = PGN_MCP_LATEST;
	cJSON *r, *caps, *info;
	size_t i;

	v = cJSON_GetObjectItemCaseSensitive(params, "protocolVersion");
	if (cJSON_IsString(v))
		asked = v->valuestring;
	for (i = 0; asked != NULL && i < sizeof(versions) / sizeof(*versions);
	     i++)
		if (strcmp(asked, versions[i]) == 0)
			version = versions[i];
	r = cJSON_CreateObject();
	if (r == NULL)
		return NULL;
	cJSON_AddStringToObject(r, "protocolVersion", version);
	caps = cJSON_AddObjectToObject(r, "capabilities");
	if (caps != NULL)
		cJSON_AddBoolToObject(cJSON_AddObjectToObject(caps, "tools"),
		    "listChanged", 0);
	info = cJSON_AddObjectToObject(r, "serverInfo");
	if (info != NULL) {
		cJSON_AddStringToObject(info, "name", "pigeon");
		cJSON_AddStringToObject(info, "version", pgn_version());
	}
	cJSON_AddStringToObject(r, "instructions", instructions);
	return r;
}

/* The largest integer a double holds exactly: an id past it is refused. */
#define ID_MAX 9007199254740992.0

/* A request's id: a string or an integer within ID_MAX. */
static int
id_valid(const cJSON *id)
{
	return cJSON_IsString(id) ||
	    (cJSON_IsNumber(id) && id->valuedouble >= -ID_MAX &&
	        id->valuedouble <= ID_MAX &&
	        id->valuedouble == (double)(int64_t)id->valuedouble);
}

static pgn_status
dispatch(struct pgn_mcp *s, const cJSON *req, char **out)
{
	const cJSON *id, *method, *params, *name, *args;
	cJSON *r = NULL;
	const char *m;
	int unknown = 0;
	pgn_status rc;

	id = cJSON_GetObjectItemCaseSensitive(req, "id");
	method = cJSON_GetObjectItemCaseSensitive(req, "method");
	params = cJSON_GetObjectItemCaseSensitive(req, "params");
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(req, "jsonrpc")) ||
	    strcmp(cJSON_GetObjectItemCaseSensitive(req, "jsonrpc")
	               ->valuestring,
	        "2.0") != 0 ||
	    !cJSON_IsString(method) || (id != NULL && !id_valid(id)) ||
	    (params != NULL && !cJSON_IsObject(params))) {
		/* A response (we ask nothing), or without an id: unanswered. */
		if (method == NULL &&
		    (cJSON_HasObjectItem(req, "result") ||
		        cJSON_HasObjectItem(req, "error") || id == NULL))
			return PGN_OK;
		*out = answer(id_valid(id) ? id : NULL, NULL, RPC_INVALID,
		    "Invalid Request: a JSON-RPC 2.0 request has \"jsonrpc\":\"2.0\", a string \"method\", an integer or string \"id\" and object \"params\"");
		return *out != NULL ? PGN_OK : PGN_ENOMEM;
	}
	m = method->valuestring;
	if (id == NULL) /* a notification: initialized, cancelled, ... */
		return PGN_OK;
	if (strcmp(m, "initialize") == 0) {
		r = initialize(params);
		if (r == NULL)
			return PGN_ENOMEM;
		s->initialized = 1;
	} else if (strcmp(m, "ping") == 0) {
		r = cJSON_CreateObject();
	} else if (strcmp(m, "tools/list") == 0) {
		r = cJSON_CreateObject();
		if (r != NULL)
			cJSON_AddItemToObject(r, "tools", pgn_mcp_tools());
	} else if (strcmp(m, "tools/call") == 0) {
		name = cJSON_GetObjectItemCaseSensitive(params, "name");
		args = cJSON_GetObjectItemCaseSensitive(params, "arguments");
		if (!cJSON_IsString(name) ||
		    (args != NULL && !cJSON_IsObject(args) &&
		        !cJSON_IsNull(args))) {
			*out = answer(id, NULL, RPC_PARAMS,
			    "Invalid params: tools/call takes a string \"name\" and an object \"arguments\"");
			return *out != NULL ? PGN_OK : PGN_ENOMEM;
		}
		rc = pgn_mcp_call(s, name->valuestring,
		    cJSON_IsObject(args) ? args : NULL, &r, &unknown);
		if (rc != PGN_OK)
			return rc;
		if (unknown) {
			char msg[PGN_MAX_ERRMSG];

			snprintf(msg, sizeof(msg),
			    "Unknown tool: '%.64s' (the tools are send, inbox, read, wait, status, ack, thread, lease_take, lease_release, lease_list)",
			    name->valuestring);
			*out = answer(id, NULL, RPC_PARAMS, msg);
			return *out != NULL ? PGN_OK : PGN_ENOMEM;
		}
	} else {
		/*
		 * server/discover (2026-07-28) among them: refused, so a
		 * host that probes with it goes on with initialize
		 * (decision 0165).
		 */
		char msg[PGN_MAX_ERRMSG];

		snprintf(msg, sizeof(msg), "Method not found: '%.64s'", m);
		*out = answer(id, NULL, RPC_NO_METHOD, msg);
		return *out != NULL ? PGN_OK : PGN_ENOMEM;
	}
	if (r == NULL)
		return PGN_ENOMEM;
	*out = answer(id, r, 0, NULL);
	return *out != NULL ? PGN_OK : PGN_ENOMEM;
}

pgn_status
pgn_mcp_handle(struct pgn_mcp *s, const char *line, size_t len, int too_long,
    char **out)
{
	cJSON *req;
	const char *end = NULL;
	pgn_status rc;

	*out = NULL;
	s->nclaimed = 0;
	s->claim_answered = 0;
	if (too_long) {
		*out = answer(NULL, NULL, RPC_INVALID,
		    "Invalid Request: a line is at most " PGN_STR(
		        PGN_MCP_MAX_LINE) " bytes");
		return *out != NULL ? PGN_OK : PGN_ENOMEM;
	}
	while (len > 0 &&
	    (line[len - 1] == '\r' || line[len - 1] == ' ' ||
	        line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return PGN_OK; /* a blank line: nothing asked */
	req = NULL;
	if (pgn_utf8_valid(line, len))
		req = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (req == NULL || end == NULL || (size_t)(end - line) != len) {
		cJSON_Delete(req);
		*out = answer(NULL, NULL, RPC_PARSE,
		    "Parse error: not one JSON value in UTF-8");
		return *out != NULL ? PGN_OK : PGN_ENOMEM;
	}
	if (cJSON_IsArray(req)) {
		cJSON_Delete(req);
		*out = answer(NULL, NULL, RPC_INVALID,
		    "Invalid Request: batches are not supported (MCP 2025-06-18 and later)");
		return *out != NULL ? PGN_OK : PGN_ENOMEM;
	}
	if (!cJSON_IsObject(req)) {
		cJSON_Delete(req);
		*out = answer(NULL, NULL, RPC_INVALID,
		    "Invalid Request: not an object");
		return *out != NULL ? PGN_OK : PGN_ENOMEM;
	}
	rc = dispatch(s, req, out);
	cJSON_Delete(req);
	if (rc == PGN_ENOMEM && *out == NULL)
		*out = answer(NULL, NULL, RPC_INTERNAL, "out of memory");
	return rc;
}
