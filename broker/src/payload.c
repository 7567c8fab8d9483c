/*
 * A host's hook payload: which host and event it is, the session and
 * turn it belongs to, and the project directory it names.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"
#include "pigeon/hook.h"

void
pgn_payload_release(struct pgn_payload *p)
{
	if (p == NULL)
		return;
	free(p->dir);
	p->dir = NULL;
	free(p->prompt);
	p->prompt = NULL;
	free(p->transcript);
	p->transcript = NULL;
}

pgn_host
pgn_payload_detect(const char *event, int cursor_version, int timestamp,
    int turn_id, int model, int permission_mode)
{
	if (cursor_version ||
	    (event != NULL &&
	        pgn_event_by_name(PGN_HOST_CURSOR, event) != PGN_EVENT_NONE))
		return PGN_HOST_CURSOR;
	/* An event only Gemini has, or one it shares with a timestamp. */
	if (event != NULL &&
	    pgn_event_by_name(PGN_HOST_GEMINI, event) != PGN_EVENT_NONE &&
	    (timestamp ||
	        pgn_event_by_name(PGN_HOST_CLAUDE, event) == PGN_EVENT_NONE))
		return PGN_HOST_GEMINI;
	if (turn_id || (model && permission_mode))
		return PGN_HOST_CODEX;
	return PGN_HOST_CLAUDE;
}

/* A string field, or NULL when absent, not a string, or empty. */
static const char *
field(const cJSON *root, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);

	if (!cJSON_IsString(v) || v->valuestring[0] == '\0')
		return NULL;
	return v->valuestring;
}

/* A host id: UTF-8, printable, no space, at most PGN_HOOK_MAX_ID bytes. */
static int
id_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > PGN_HOOK_MAX_ID || !pgn_utf8_valid(s, n))
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int
depth_ok(const cJSON *v, int depth)
{
	const cJSON *c;

	if (depth > PGN_HOOK_MAX_DEPTH)
		return 0;
	for (c = v->child; c != NULL; c = c->next)
		if (!depth_ok(c, depth + 1))
			return 0;
	return 1;
}

/* A path a payload names: absolute, UTF-8, no control character. */
static int
path_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 2 || n >= PGN_MAX_PATH || s[0] != '/' || !pgn_utf8_valid(s, n))
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/*
 * Does session start 'source' begin a new conversation? Claude and
 * Gemini: "startup" or "clear"; Codex: "startup" (product.md §9).
 */
static int
new_source(pgn_host h, const char *source)
{
	if (source == NULL)
		return 0;
	if (strcmp(source, "startup") == 0)
		return 1;
	return strcmp(source, "clear") == 0 &&
	    (h == PGN_HOST_CLAUDE || h == PGN_HOST_GEMINI);
}

/* The turn key of a payload without a turn id: a hash of its bytes. */
static void
hashed_turn(struct pgn_payload *p, const char *event, const char *buf,
    size_t len)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char h[12];
	size_t i, k;

	crypto_generichash(h, sizeof(h), (const unsigned char *)buf, len, NULL,
	    0);
	k = (size_t)snprintf(p->turn, sizeof(p->turn), "%s:h", event);
	for (i = 0; i < sizeof(h) && k + 2 < sizeof(p->turn); i++) {
		p->turn[k++] = hex[h[i] >> 4];
		p->turn[k++] = hex[h[i] & 15];
	}
	p->turn[k] = '\0';
	p->turn_window_ms = PGN_HOOK_DUP_WINDOW_MS;
}

pgn_status
pgn_payload_parse(const char *buf, size_t len, pgn_host host, pgn_event event,
    struct pgn_payload *p, char *why, size_t whylen)
{
	const cJSON *roots;
	const char *ev, *sid, *turn = NULL, *dir;
	const struct pgn_host_info *hi;
	cJSON *root;
	pgn_status rc = PGN_EINVAL;
	int cursor;

	memset(p, 0, sizeof(*p));
	p->host = host;
	p->event = host != PGN_HOST_NONE ? event : PGN_EVENT_NONE;
	root = cJSON_ParseWithLengthOpts(buf, len, NULL, 0);
	if (root == NULL || !cJSON_IsObject(root)) {
		pgn_errf(why, whylen, "payload is not a JSON object");
		goto out;
	}
	if (!depth_ok(root, 0)) {
		pgn_errf(why, whylen, "payload nests deeper than %d",
		    PGN_HOOK_MAX_DEPTH);
		goto out;
	}
	ev = field(root, "hook_event_name");
	cursor = field(root, "cursor_version") != NULL;
	if (p->host == PGN_HOST_NONE)
		p->host = pgn_payload_detect(ev, cursor,
		    field(root, "timestamp") != NULL,
		    field(root, "turn_id") != NULL,
		    field(root, "model") != NULL,
		    field(root, "permission_mode") != NULL);
	/* Cursor replays Claude's project hooks with its own payload. */
	if (p->host == PGN_HOST_CLAUDE && cursor) {
		p->skip = 1;
		rc = PGN_OK;
		goto out;
	}
	if (p->event == PGN_EVENT_NONE)
		p->event = pgn_event_by_name(p->host, ev);
	if (p->event == PGN_EVENT_NONE) {
		p->ignore = 1;
		rc = PGN_OK;
		goto out;
	}
	hi = pgn_host_get(p->host);
	if (p->host == PGN_HOST_CURSOR) {
		sid = field(root, "conversation_id");
		if (sid == NULL)
			sid = field(root, "session_id");
		/* Cloud conversations carry a "bc-" prefix. */
		if (sid != NULL && strncmp(sid, "bc-", 3) == 0 && sid[3])
			sid += 3;
		roots =
		    cJSON_GetObjectItemCaseSensitive(root, "workspace_roots");
		dir = cJSON_IsArray(roots) &&
		        cJSON_IsString(cJSON_GetArrayItem(roots, 0)) ?
		    cJSON_GetArrayItem(roots, 0)->valuestring :
		    NULL;
		if (p->event == PGN_EVENT_PROMPT)
			turn = field(root, "generation_id");
	} else {
		sid = field(root, "session_id");
		dir = field(root, "cwd");
		if (p->host == PGN_HOST_CLAUDE)
			turn = field(root, "prompt_id");
		else if (p->host == PGN_HOST_CODEX)
			turn = field(root, "turn_id");
	}
	if (sid == NULL || !id_ok(sid)) {
		pgn_errf(why, whylen, "payload has no usable session id");
		goto out;
	}
	snprintf(p->session, sizeof(p->session), "%s:%s", hi->name, sid);
	if (dir != NULL && dir[0] == '/' && strlen(dir) < PGN_MAX_PATH) {
		p->dir = pgn_strdup(dir);
		if (p->dir == NULL) {
			rc = PGN_ENOMEM;
			goto out;
		}
	}
	if (p->event == PGN_EVENT_PROMPT && field(root, "prompt") != NULL) {
		p->prompt = pgn_strdup(field(root, "prompt"));
		if (p->prompt == NULL) {
			rc = PGN_ENOMEM;
			goto out;
		}
	}
	if (field(root, "transcript_path") != NULL &&
	    path_ok(field(root, "transcript_path"))) {
		p->transcript = pgn_strdup(field(root, "transcript_path"));
		if (p->transcript == NULL) {
			rc = PGN_ENOMEM;
			goto out;
		}
	}
	/* Cursor's stop counts the follow-ups it has submitted. */
	if (p->event == PGN_EVENT_STOP) {
		const cJSON *lc =
		    cJSON_GetObjectItemCaseSensitive(root, "loop_count");

		if (cJSON_IsNumber(lc) && lc->valuedouble >= 0 &&
		    lc->valuedouble < 1e6)
			p->loop_count = (int64_t)lc->valuedouble;
	}
	/* Subagents (Claude, Codex) and Cursor background agents. */
	p->subagent = field(root, "agent_id") != NULL ||
	    field(root, "agent_type") != NULL ||
	    cJSON_IsTrue(
	        cJSON_GetObjectItemCaseSensitive(root, "is_background_agent"));
	/* A background agent or a subagent never takes a baton. */
	if (p->event == PGN_EVENT_SESSION_START &&
	    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root,
	        "is_background_agent")) &&
	    field(root, "agent_id") == NULL)
		p->new_conversation = p->host == PGN_HOST_CURSOR ||
		    new_source(p->host, field(root, "source"));
	if (p->event == PGN_EVENT_AFTER_TOOL || p->event == PGN_EVENT_STOP) {
		/*
		 * Many a turn: no turn key, no de-duplication. A second
		 * registration finds the mail claimed: each message once.
		 */
		p->turn[0] = '\0';
		p->turn_window_ms = 0;
	} else if (turn != NULL && id_ok(turn)) {
		snprintf(p->turn, sizeof(p->turn), "%s:%s",
		    hi->events[p->event], turn);
		p->turn_window_ms = 0;
	} else {
		/* No turn id: duplicates of one event carry one payload. */
		hashed_turn(p, hi->events[p->event], buf, len);
	}
	rc = PGN_OK;
out:
	cJSON_Delete(root);
	if (rc != PGN_OK)
		pgn_payload_release(p);
	return rc;
}

pgn_status
pgn_payload_cursor_transcript(struct pgn_payload *p, const char *home)
{
	static const char mid[] = "/.cursor/projects/";
	static const char sub[] = "/agent-transcripts/";
	const char *id, *c;
	struct pgn_buf b;
	pgn_status err;
	size_t i;

	if (p->host != PGN_HOST_CURSOR || p->transcript != NULL ||
	    p->dir == NULL || home == NULL || home[0] != '/' ||
	    strncmp(p->session, "cursor:", 7) != 0)
		return PGN_OK;
	id = p->session + 7;
	if (id[0] == '\0' || id[0] == '.')
		return PGN_OK;
	for (c = id; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		        (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' ||
		        *c == '.'))
			return PGN_OK;
	pgn_buf_init(&b, PGN_MAX_PATH - 1);
	pgn_buf_adds(&b, home);
	pgn_buf_adds(&b, mid);
	for (i = p->dir[0] == '/' ? 1 : 0; p->dir[i] != '\0'; i++) {
		c = &p->dir[i];
		pgn_buf_add(&b,
		    (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		            (*c >= '0' && *c <= '9') ?
		        c :
		        "-",
		    1);
	}
	pgn_buf_adds(&b, sub);
	pgn_buf_adds(&b, id);
	pgn_buf_adds(&b, "/");
	pgn_buf_adds(&b, id);
	pgn_buf_adds(&b, ".jsonl");
	err = b.err;
	if (err == PGN_OK) {
		p->transcript = pgn_buf_take(&b, NULL);
		if (p->transcript == NULL)
			err = PGN_ENOMEM;
	}
	pgn_buf_release(&b);
	/* A path over PGN_MAX_PATH is no path: nothing is recorded. */
	return err == PGN_ENOMEM ? PGN_ENOMEM : PGN_OK;
}
