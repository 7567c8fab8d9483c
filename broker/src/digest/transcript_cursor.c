/*
 * The Cursor agent-transcript reader, as seeds/001 records the format:
 * role-first frames {role, message: {content: [text | tool_use]}} and
 * {type: turn_ended, status[, error]}; no ids, times or versions, so a
 * call's identity is its position; ApplyPatch's input is a raw string,
 * every other input an object; tool names are an open set.
 */
#include <string.h>

#include "transcript_int.h"

/* The questions of an AskQuestion call: questions[] of objects or strings. */
static pgn_status
ask(struct pgn_transcript *t, const cJSON *input)
{
	static const char *const keys[] = {"question", "prompt", "text",
	    "title", NULL};
	const cJSON *qs, *q, *last = NULL;
	const char *s;

	qs = tr_arr(input, "questions");
	cJSON_ArrayForEach(q, qs) last = q;
	if (last == NULL)
		s = tr_str_any(input, keys);
	else if (cJSON_IsString(last))
		s = last->valuestring;
	else
		s = tr_str_any(last, keys);
	return tr_question(t, s);
}

/* One tool_use block: the call, and what it tells about files and commands. */
static pgn_status
call(struct pgn_transcript *t, const cJSON *block)
{
	const char *name = tr_str(block, "name");
	const cJSON *input = cJSON_GetObjectItemCaseSensitive(block, "input");
	const char *server, *tool;
	char sub[2 * PGN_MAX_NAME + 2];
	pgn_status st;

	if (name == NULL)
		name = "(unnamed)";
	/* ApplyPatch carries the patch itself; branch on the input's type */
	if (cJSON_IsString(input)) {
		st = tr_call(t, name, NULL);
		if (st == PGN_OK && strcmp(name, "ApplyPatch") == 0)
			st = tr_patch(t, input->valuestring);
		return st;
	}
	if (strcmp(name, "CallMcpTool") == 0 ||
	    strcmp(name, "CallDynamicTool") == 0) {
		/* wrapped, not namespaced: server and toolName in the input */
		server = tr_str(input, "server");
		tool = tr_str(input, "toolName");
		if (server != NULL || tool != NULL) {
			if (snprintf(sub, sizeof(sub), "%.*s/%.*s",
			        PGN_MAX_NAME, server != NULL ? server : "?",
			        PGN_MAX_NAME, tool != NULL ? tool : "?") < 0)
				sub[0] = '\0';
			return tr_call(t, name, sub);
		}
		return tr_call(t, name, NULL);
	}
	st = tr_call(t, name, NULL);
	if (st != PGN_OK || !cJSON_IsObject(input))
		return st;
	if (strcmp(name, "Shell") == 0)
		return tr_command(t, tr_str(input, "command"),
		    tr_true(input, "run_in_background"));
	if (tr_is_edit_tool(name))
		return tr_edit_input(t, input);
	if (strcmp(name, "AskQuestion") == 0)
		return ask(t, input);
	return PGN_OK;
}

pgn_status
tr_cursor_frame(struct pgn_transcript *t, const cJSON *f, int *known)
{
	const char *role = tr_str(f, "role"), *type = tr_str(f, "type");
	const cJSON *content, *b;
	struct pgn_buf text;
	const char *bt, *s;
	pgn_status st = PGN_OK;
	int user;

	*known = 0;
	if (role == NULL && type != NULL && strcmp(type, "turn_ended") == 0) {
		s = tr_str(f, "status");
		if (s == NULL)
			return PGN_OK;
		*known = 1;
		return tr_end(t,
		    strcmp(s, "success") == 0     ? PGN_TRANSCRIPT_SUCCESS :
		        strcmp(s, "error") == 0   ? PGN_TRANSCRIPT_ERROR :
		        strcmp(s, "aborted") == 0 ? PGN_TRANSCRIPT_ABORTED :
		                                    PGN_TRANSCRIPT_OTHER,
		    s, tr_str(f, "error"));
	}
	content = tr_arr(tr_obj(f, "message"), "content");
	if (role == NULL || content == NULL)
		return PGN_OK;
	user = strcmp(role, "user") == 0;
	if (!user && strcmp(role, "assistant") != 0)
		return PGN_OK;
	*known = 1;
	/* a frame after the last turn_ended opens a turn without an end */
	if (t->outcome != PGN_TRANSCRIPT_OPEN) {
		st = tr_end(t, PGN_TRANSCRIPT_OPEN, NULL, NULL);
		if (st != PGN_OK)
			return st;
	}
	/* a frame's text blocks are one text; its calls are in order */
	pgn_buf_init(&text, PGN_TRANSCRIPT_MAX_TEXT + TR_REDACT_SLACK + 1);
	cJSON_ArrayForEach(b, content)
	{
		bt = tr_str(b, "type");
		if (bt == NULL)
			continue;
		if (strcmp(bt, "text") == 0 &&
		    (s = tr_str(b, "text")) != NULL) {
			if (text.len > 0)
				tr_buf_fit(&text, "\n");
			tr_buf_fit(&text, s);
		} else if (strcmp(bt, "tool_use") == 0 && !user) {
			st = call(t, b);
			if (st != PGN_OK)
				break;
		}
	}
	if (st == PGN_OK && text.err == PGN_ENOMEM)
		st = PGN_ENOMEM;
	if (st == PGN_OK && text.len > 0)
		st = user ? tr_prompt(t, text.data) : tr_answer(t, text.data);
	pgn_buf_release(&text);
	return st;
}
