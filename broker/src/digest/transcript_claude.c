/*
 * The Claude Code session reader (~/.claude/projects/<slug>/<id>.jsonl,
 * as captured from Claude Code 2.1.332): typed frames; "user" and
 * "assistant" carry an API message, the rest (attachments, queue and
 * cost records, summaries) are known and ignored.
 */
#include <string.h>

#include "transcript_int.h"

#define INTERRUPTED "[Request interrupted by user"

static int
starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* The questions of AskUserQuestion: questions[].question. */
static pgn_status
ask(struct pgn_transcript *t, const cJSON *input)
{
	const cJSON *q, *last = NULL;

	cJSON_ArrayForEach(q, tr_arr(input, "questions")) last = q;
	return tr_question(t, tr_str(last, "question"));
}

static pgn_status
call(struct pgn_transcript *t, const cJSON *block)
{
	const char *name = tr_str(block, "name");
	const cJSON *input = tr_obj(block, "input");
	const char *cmd;
	pgn_status st;

	if (name == NULL)
		name = "(unnamed)";
	st = tr_call(t, name, NULL);
	if (st != PGN_OK || input == NULL)
		return st;
	if (strcmp(name, "Bash") == 0) {
		cmd = tr_str(input, "command");
		st = tr_command(t, cmd, tr_true(input, "run_in_background"));
		if (st == PGN_OK && cmd != NULL &&
		    strstr(cmd, "*** Begin Patch") != NULL)
			st = tr_patch(t, cmd);
		return st;
	}
	if (tr_is_edit_tool(name))
		return tr_edit_input(t, input);
	if (strcmp(name, "AskUserQuestion") == 0)
		return ask(t, input);
	return PGN_OK;
}

/* A person's text: a prompt, an interruption, or a local command's echo. */
static pgn_status
user_text(struct pgn_transcript *t, const char *s)
{
	if (starts(s, INTERRUPTED))
		return tr_end(t, PGN_TRANSCRIPT_ABORTED, "interrupted", NULL);
	if (starts(s, "<command-") || starts(s, "<local-command-"))
		return PGN_OK;
	if (t->outcome != PGN_TRANSCRIPT_OPEN) {
		pgn_status st = tr_end(t, PGN_TRANSCRIPT_OPEN, NULL, NULL);
		if (st != PGN_OK)
			return st;
	}
	return tr_prompt(t, s);
}

static pgn_status
user(struct pgn_transcript *t, const cJSON *msg)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(msg, "content"), *b;
	struct pgn_buf text;
	const char *bt, *s;
	pgn_status st = PGN_OK;

	if (cJSON_IsString(c))
		return user_text(t, c->valuestring);
	if (!cJSON_IsArray(c))
		return PGN_OK;
	/* tool results come back as a user message: not a prompt */
	pgn_buf_init(&text, PGN_TRANSCRIPT_MAX_TEXT + TR_REDACT_SLACK + 1);
	cJSON_ArrayForEach(b, c)
	{
		bt = tr_str(b, "type");
		if (bt != NULL && strcmp(bt, "tool_result") == 0) {
			pgn_buf_release(&text);
			return PGN_OK;
		}
		if (bt != NULL && strcmp(bt, "text") == 0 &&
		    (s = tr_str(b, "text")) != NULL) {
			if (text.len > 0)
				tr_buf_fit(&text, "\n");
			tr_buf_fit(&text, s);
		}
	}
	if (text.err == PGN_ENOMEM)
		st = PGN_ENOMEM;
	else if (text.len > 0)
		st = user_text(t, text.data);
	pgn_buf_release(&text);
	return st;
}

static pgn_status
assistant(struct pgn_transcript *t, const cJSON *frame, const cJSON *msg)
{
	const cJSON *b;
	struct pgn_buf text;
	const char *bt, *s, *stop;
	pgn_status st = PGN_OK;

	pgn_buf_init(&text, PGN_TRANSCRIPT_MAX_TEXT + TR_REDACT_SLACK + 1);
	cJSON_ArrayForEach(b, tr_arr(msg, "content"))
	{
		bt = tr_str(b, "type");
		if (bt == NULL)
			continue;
		if (strcmp(bt, "text") == 0 &&
		    (s = tr_str(b, "text")) != NULL) {
			if (text.len > 0)
				tr_buf_fit(&text, "\n");
			tr_buf_fit(&text, s);
		} else if (strcmp(bt, "tool_use") == 0 ||
		    strcmp(bt, "server_tool_use") == 0) {
			st = call(t, b);
			if (st != PGN_OK)
				break;
		}
	}
	if (st == PGN_OK && text.err == PGN_ENOMEM)
		st = PGN_ENOMEM;
	if (st == PGN_OK && tr_true(frame, "isApiErrorMessage")) {
		st = tr_end(t, PGN_TRANSCRIPT_ERROR, "api_error",
		    text.len > 0 ? text.data : NULL);
		pgn_buf_release(&text);
		return st;
	}
	if (st == PGN_OK && text.len > 0)
		st = tr_answer(t, text.data);
	pgn_buf_release(&text);
	stop = tr_str(msg, "stop_reason");
	if (st != PGN_OK || stop == NULL)
		return st;
	if (strcmp(stop, "end_turn") == 0 || strcmp(stop, "stop_sequence") == 0)
		return tr_end(t, PGN_TRANSCRIPT_SUCCESS, stop, NULL);
	if (strcmp(stop, "tool_use") == 0 || strcmp(stop, "pause_turn") == 0)
		return t->outcome == PGN_TRANSCRIPT_OPEN ?
		    PGN_OK :
		    tr_end(t, PGN_TRANSCRIPT_OPEN, NULL, NULL);
	return tr_end(t, PGN_TRANSCRIPT_OTHER, stop, NULL);
}

pgn_status
tr_claude_frame(struct pgn_transcript *t, const cJSON *f, int *known)
{
	const char *type = tr_str(f, "type");
	const cJSON *msg = tr_obj(f, "message");

	*known = 0;
	if (type == NULL)
		return PGN_OK;
	if (strcmp(type, "user") != 0 && strcmp(type, "assistant") != 0) {
		/* the bookkeeping records: known by their session's id */
		*known = tr_str(f, "sessionId") != NULL ||
		    tr_str(f, "leafUuid") != NULL || tr_str(f, "uuid") != NULL;
		return PGN_OK;
	}
	if (msg == NULL)
		return PGN_OK;
	*known = 1;
	/* a subagent's own exchange (sidechain) and meta notes are not the
	 * session's conversation */
	if (tr_true(f, "isSidechain") || tr_true(f, "isMeta"))
		return PGN_OK;
	return strcmp(type, "user") == 0 ? user(t, msg) : assistant(t, f, msg);
}
