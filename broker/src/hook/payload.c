/*
 * A host's hook payload: which host and event it is, the session and
 * turn it belongs to, and the project directory it names.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "hook_int.h"
#include "pgn_int.h"
#include "pigeon/hook.h"
#include "pigeon/hosts.h"

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
	pgn_tool_call_release(&p->call);
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

static int
has_field(const char *key, void *arg)
{
	return field(arg, key) != NULL;
}

pgn_host
pgn_payload_detect(const char *buf, size_t len)
{
	cJSON *root = cJSON_ParseWithLengthOpts(buf, len, NULL, 0);
	pgn_host h = PGN_HOST_NONE;

	if (cJSON_IsObject(root))
		h = pgn_host_detect(field(root, "hook_event_name"), has_field,
		    root, 0);
	cJSON_Delete(root);
	return h;
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
 * Does this session start begin a new conversation (product.md §9)? The
 * row's keys say: every one when it names no source key, else those
 * whose source is one of the row's new_sources.
 */
static int
new_source(const struct pgn_host_info *hi, const cJSON *root)
{
	const char *source;
	size_t i;

	if (hi->keys.source == NULL)
		return 1;
	source = field(root, hi->keys.source);
	for (i = 0; source != NULL && i < 2; i++)
		if (hi->keys.new_sources[i] != NULL &&
		    strcmp(source, hi->keys.new_sources[i]) == 0)
			return 1;
	return 0;
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
	const struct pgn_host_info *hi, *ri;
	pgn_host replayer;
	const cJSON *roots;
	const char *ev, *sid = NULL, *turn = NULL, *dir;
	cJSON *root;
	pgn_status rc = PGN_EINVAL;
	size_t i, n;

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
	if (p->host == PGN_HOST_NONE) {
		p->host = pgn_host_detect(ev, has_field, root, 0);
	} else {
		/* A host replaying this one's hooks with its own payload. */
		replayer = pgn_host_detect(ev, has_field, root, 1);
		ri = pgn_host_get(replayer);
		if (ri != NULL && ri->replays != NULL &&
		    pgn_host_by_name(ri->replays) == p->host) {
			p->skip = 1;
			p->replayer = replayer;
			rc = PGN_OK;
			goto out;
		}
	}
	if (p->event == PGN_EVENT_NONE)
		p->event = pgn_event_by_name(p->host, ev);
	if (p->event == PGN_EVENT_NONE) {
		p->ignore = 1;
		rc = PGN_OK;
		goto out;
	}
	hi = pgn_host_get(p->host);
	if (hi->events[p->event] == NULL) {
		pgn_errf(why, whylen, "%s has no %s event", hi->name,
		    pgn_facet_name(p->event));
		goto out;
	}
	for (i = 0; i < 2 && sid == NULL && hi->keys.session[i] != NULL; i++)
		sid = field(root, hi->keys.session[i]);
	n = hi->keys.session_strip != NULL ? strlen(hi->keys.session_strip) : 0;
	if (sid != NULL && n > 0 &&
	    strncmp(sid, hi->keys.session_strip, n) == 0 && sid[n])
		sid += n;
	if (hi->keys.dir_first) {
		roots = cJSON_GetObjectItemCaseSensitive(root, hi->keys.dir);
		dir = cJSON_IsArray(roots) &&
		        cJSON_IsString(cJSON_GetArrayItem(roots, 0)) ?
		    cJSON_GetArrayItem(roots, 0)->valuestring :
		    NULL;
	} else {
		dir = hi->keys.dir != NULL ? field(root, hi->keys.dir) : NULL;
	}
	if (hi->keys.turn[p->event] != NULL)
		turn = field(root, hi->keys.turn[p->event]);
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
	if (p->event == PGN_EVENT_PROMPT && hi->keys.prompt != NULL &&
	    field(root, hi->keys.prompt) != NULL) {
		p->prompt = pgn_strdup(field(root, hi->keys.prompt));
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
	p->subagent = (hi->keys.subagent != NULL &&
	                  field(root, hi->keys.subagent) != NULL) ||
	    field(root, "agent_id") != NULL ||
	    field(root, "agent_type") != NULL ||
	    cJSON_IsTrue(
	        cJSON_GetObjectItemCaseSensitive(root, "is_background_agent"));
	/* A background agent or a subagent never takes a baton. */
	if (p->event == PGN_EVENT_SESSION_START &&
	    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root,
	        "is_background_agent")) &&
	    field(root, "agent_id") == NULL &&
	    (hi->keys.subagent == NULL ||
	        field(root, hi->keys.subagent) == NULL))
		p->new_conversation = new_source(hi, root);
	/* opencode's plugin: the turn an idle wake asked for did not start. */
	if (p->event == PGN_EVENT_IDLE && field(root, "wake_error") != NULL)
		snprintf(p->wake_error, sizeof(p->wake_error), "%s",
		    field(root, "wake_error"));
	/* Before a tool: what it is, and the paths it would write. */
	if (p->event == PGN_EVENT_BEFORE_TOOL &&
	    pgn_tool_call_read(root, p->host, &p->call) != PGN_OK) {
		rc = PGN_ENOMEM;
		goto out;
	}
	if (p->event == PGN_EVENT_AFTER_TOOL || p->event == PGN_EVENT_STOP ||
	    p->event == PGN_EVENT_IDLE || p->event == PGN_EVENT_BEFORE_TOOL) {
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
	const struct pgn_host_info *hi = pgn_host_get(p->host);
	const char *id, *c;
	struct pgn_buf b;
	pgn_status err;
	size_t i;

	if (hi == NULL || hi->transcript_from != PGN_TRANSCRIPT_FROM_CURSOR ||
	    p->transcript != NULL || p->dir == NULL || home == NULL ||
	    home[0] != '/' || strncmp(p->session, "cursor:", 7) != 0)
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
