/*
 * The Codex rollout reader (~/.codex/sessions/Y/M/D/rollout-*.jsonl, as
 * captured from Codex 0.171.0): {timestamp, type, payload} frames;
 * response_item holds the conversation (messages, calls), event_msg the
 * turn's life (task_started, task_complete, turn_aborted, error).
 */
#include <string.h>

#include "transcript_int.h"

/*
 * Context Codex adds as user messages (<environment_context>...,
 * AGENTS.md): a text that is one tagged block, or the AGENTS.md header.
 */
static int
injected(const char *s)
{
	const char *end;
	size_t n, len;

	if (strncmp(s, "# AGENTS.md instructions", 24) == 0)
		return 1;
	if (s[0] != '<')
		return 0;
	for (n = 1; s[n] != '\0' && s[n] != '>' && s[n] != '\n' &&
	     (s[n] == '_' || s[n] == '-' || s[n] == ' ' ||
	         (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z'));
	     n++)
		;
	if (s[n] != '>' || n == 1)
		return 0;
	len = strlen(s);
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' '))
		len--;
	end = s + len;
	/* "</" + name + ">" closes it */
	return len >= 2 * n + 2 && end[-1] == '>' &&
	    strncmp(end - n - 2, "</", 2) == 0 &&
	    strncmp(end - n, s + 1, n - 1) == 0;
}

static pgn_status
message(struct pgn_transcript *t, const cJSON *p)
{
	const char *role = tr_str(p, "role"), *bt, *s;
	const cJSON *b;
	struct pgn_buf text;
	pgn_status st = PGN_OK;
	int user;

	if (role == NULL)
		return PGN_OK;
	user = strcmp(role, "user") == 0;
	if (!user && strcmp(role, "assistant") != 0)
		return PGN_OK; /* developer: instructions and hook context */
	pgn_buf_init(&text, PGN_TRANSCRIPT_MAX_TEXT + TR_REDACT_SLACK + 1);
	cJSON_ArrayForEach(b, tr_arr(p, "content"))
	{
		bt = tr_str(b, "type");
		s = tr_str(b, "text");
		if (bt == NULL || s == NULL ||
		    (strcmp(bt, "input_text") != 0 &&
		        strcmp(bt, "output_text") != 0 &&
		        strcmp(bt, "text") != 0))
			continue;
		if (user && injected(s))
			continue;
		if (text.len > 0)
			tr_buf_fit(&text, "\n");
		tr_buf_fit(&text, s);
	}
	if (text.err == PGN_ENOMEM)
		st = PGN_ENOMEM;
	else if (text.len > 0 && user)
		st = tr_prompt(t, text.data);
	else if (text.len > 0)
		st = tr_answer(t, text.data);
	pgn_buf_release(&text);
	return st;
}

/* A command string, and a patch inside it (apply_patch run by shell). */
static pgn_status
command(struct pgn_transcript *t, const cJSON *cmd)
{
	pgn_status st;

	st = tr_command_argv(t, cmd, 0);
	if (st == PGN_OK && cJSON_IsString(cmd) &&
	    strstr(cmd->valuestring, "*** Begin Patch") != NULL)
		st = tr_patch(t, cmd->valuestring);
	if (st == PGN_OK && cJSON_IsArray(cmd)) {
		const cJSON *w;
		cJSON_ArrayForEach(w, cmd)
		{
			if (cJSON_IsString(w) &&
			    strstr(w->valuestring, "*** Begin Patch") != NULL)
				st = tr_patch(t, w->valuestring);
			if (st != PGN_OK)
				break;
		}
	}
	return st;
}

static pgn_status
function_call(struct pgn_transcript *t, const cJSON *p, int custom)
{
	const char *name = tr_str(p, "name");
	const char *raw = tr_str(p, custom ? "input" : "arguments");
	cJSON *args = NULL;
	const cJSON *c;
	pgn_status st;

	if (name == NULL)
		name = "(unnamed)";
	st = tr_call(t, name, NULL);
	if (st != PGN_OK || raw == NULL)
		return st;
	if (strcmp(name, "apply_patch") == 0 && custom)
		return tr_patch(t, raw);
	args = cJSON_Parse(raw);
	if (strcmp(name, "apply_patch") == 0) {
		c = cJSON_IsString(args) ? args : NULL;
		if (c == NULL && cJSON_IsObject(args))
			c = cJSON_GetObjectItemCaseSensitive(args, "input");
		st = cJSON_IsString(c) ? tr_patch(t, c->valuestring) : PGN_OK;
	} else if (strcmp(name, "exec_command") == 0) {
		st = command(t, cJSON_GetObjectItemCaseSensitive(args, "cmd"));
	} else if (strcmp(name, "shell") == 0 ||
	    strcmp(name, "container.exec") == 0 ||
	    strcmp(name, "shell_command") == 0) {
		st = command(t,
		    cJSON_GetObjectItemCaseSensitive(args, "command"));
	} else if (strcmp(name, "request_user_input") == 0) {
		const cJSON *q, *last = NULL;
		cJSON_ArrayForEach(q, tr_arr(args, "questions")) last = q;
		st = tr_question(t, tr_str(last, "question"));
	}
	cJSON_Delete(args);
	return st;
}

static pgn_status
response_item(struct pgn_transcript *t, const cJSON *p)
{
	const char *type = tr_str(p, "type");
	pgn_status st;

	if (type == NULL)
		return PGN_OK;
	if (strcmp(type, "message") == 0)
		return message(t, p);
	if (strcmp(type, "function_call") == 0)
		return function_call(t, p, 0);
	if (strcmp(type, "custom_tool_call") == 0)
		return function_call(t, p, 1);
	if (strcmp(type, "local_shell_call") == 0) {
		st = tr_call(t, "local_shell", NULL);
		if (st == PGN_OK)
			st = command(t,
			    cJSON_GetObjectItemCaseSensitive(tr_obj(p,
			                                         "action"),
			        "command"));
		return st;
	}
	if (strcmp(type, "web_search_call") == 0)
		return tr_call(t, "web_search", NULL);
	return PGN_OK; /* outputs, reasoning */
}

static pgn_status
event(struct pgn_transcript *t, const cJSON *p)
{
	const char *type = tr_str(p, "type");

	if (type == NULL)
		return PGN_OK;
	if (strcmp(type, "task_started") == 0)
		return tr_end(t, PGN_TRANSCRIPT_OPEN, NULL, NULL);
	if (strcmp(type, "task_complete") == 0)
		return tr_end(t, PGN_TRANSCRIPT_SUCCESS, type, NULL);
	if (strcmp(type, "turn_aborted") == 0)
		return tr_end(t, PGN_TRANSCRIPT_ABORTED, tr_str(p, "reason"),
		    NULL);
	if (strcmp(type, "error") == 0)
		return tr_end(t, PGN_TRANSCRIPT_ERROR, type,
		    tr_str(p, "message"));
	return PGN_OK;
}

pgn_status
tr_codex_frame(struct pgn_transcript *t, const cJSON *f, int *known)
{
	const char *type = tr_str(f, "type");
	const cJSON *p = tr_obj(f, "payload");

	*known = 0;
	if (type == NULL || p == NULL)
		return PGN_OK;
	*known = 1;
	if (strcmp(type, "response_item") == 0)
		return response_item(t, p);
	if (strcmp(type, "event_msg") == 0)
		return event(t, p);
	return PGN_OK; /* session_meta, turn_context, token records */
}
