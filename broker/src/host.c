/*
 * The one table of host facts (event names, config files, timeout
 * units) and the one place that builds each host's output envelope.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"

static const struct pgn_host_info hosts[PGN_NHOSTS] = {
    [PGN_HOST_CURSOR] =
        {
            .name = "cursor",
            .events = {"sessionStart", "beforeSubmitPrompt", "postToolUse",
                "stop"},
            .shape = PGN_SHAPE_FLAT,
            .user_path = ".cursor/hooks.json",
            .project_path = ".cursor/hooks.json",
        },
    [PGN_HOST_CLAUDE] =
        {
            .name = "claude",
            .events = {"SessionStart", "UserPromptSubmit", "PostToolUse",
                "Stop"},
            .shape = PGN_SHAPE_NESTED,
            .user_env = "CLAUDE_CONFIG_DIR",
            .env_file = "settings.json",
            .user_path = ".claude/settings.json",
            .project_path = ".claude/settings.json",
            .stop_decision = "block",
        },
    [PGN_HOST_CODEX] =
        {
            .name = "codex",
            .events = {"SessionStart", "UserPromptSubmit", "PostToolUse",
                "Stop"},
            .shape = PGN_SHAPE_NESTED,
            .user_env = "CODEX_HOME",
            .env_file = "hooks.json",
            .user_path = ".codex/hooks.json",
            .project_path = ".codex/hooks.json",
            .stop_decision = "block",
        },
    [PGN_HOST_GEMINI] =
        {
            .name = "gemini",
            .events = {"SessionStart", "BeforeAgent", "AfterTool",
                "AfterAgent"},
            .shape = PGN_SHAPE_NESTED,
            .user_path = ".gemini/settings.json",
            .project_path = ".gemini/settings.json",
            .timeout_ms = 1,
            .stop_decision = "deny",
        },
};

const struct pgn_host_info *
pgn_host_get(pgn_host h)
{
	if (h < 0 || h >= PGN_NHOSTS)
		return NULL;
	return &hosts[h];
}

pgn_host
pgn_host_by_name(const char *name)
{
	int h;

	if (name == NULL)
		return PGN_HOST_NONE;
	for (h = 0; h < PGN_NHOSTS; h++)
		if (strcmp(hosts[h].name, name) == 0)
			return (pgn_host)h;
	return PGN_HOST_NONE;
}

pgn_event
pgn_event_by_name(pgn_host h, const char *name)
{
	int e;

	if (h < 0 || h >= PGN_NHOSTS || name == NULL)
		return PGN_EVENT_NONE;
	for (e = 0; e < PGN_NEVENTS; e++)
		if (strcmp(hosts[h].events[e], name) == 0)
			return (pgn_event)e;
	return PGN_EVENT_NONE;
}

/*
 * Each host's envelope. Context events (session start, prompt, after a
 * tool): Cursor {"additional_context"} ("continue":true on its prompt
 * hook), the others {"hookSpecificOutput":{hookEventName,
 * additionalContext}} and no other key (Codex rejects unknown keys). A
 * stop with mail: {"decision":D,"reason":TEXT}, Cursor
 * {"followup_message":TEXT}. Nothing to say: the neutral output.
 */
char *
pgn_envelope(pgn_host h, pgn_event e, const char *context, pgn_status *st)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	cJSON *root = NULL, *inner;
	char *out = NULL;
	int empty;

	*st = PGN_OK;
	if (hi == NULL || e < 0 || e >= PGN_NEVENTS) {
		*st = PGN_EINVAL;
		return NULL;
	}
	empty = context == NULL || *context == '\0';
	/* Cursor's prompt hook must always let the prompt through. */
	if (empty && !(h == PGN_HOST_CURSOR && e == PGN_EVENT_PROMPT))
		return NULL;
	root = cJSON_CreateObject();
	if (root == NULL)
		goto nomem;
	if (e == PGN_EVENT_STOP) {
		if (hi->stop_decision != NULL ?
		        cJSON_AddStringToObject(root, "decision",
		            hi->stop_decision) == NULL ||
		            cJSON_AddStringToObject(root, "reason", context) ==
		                NULL :
		        cJSON_AddStringToObject(root, "followup_message",
		            context) == NULL)
			goto nomem;
	} else if (h == PGN_HOST_CURSOR) {
		if (e == PGN_EVENT_PROMPT &&
		    cJSON_AddTrueToObject(root, "continue") == NULL)
			goto nomem;
		if (!empty &&
		    cJSON_AddStringToObject(root, "additional_context",
		        context) == NULL)
			goto nomem;
	} else {
		inner = cJSON_AddObjectToObject(root, "hookSpecificOutput");
		if (inner == NULL ||
		    cJSON_AddStringToObject(inner, "hookEventName",
		        hi->events[e]) == NULL ||
		    cJSON_AddStringToObject(inner, "additionalContext",
		        context) == NULL)
			goto nomem;
	}
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (out == NULL)
		*st = PGN_ENOMEM;
	return out;
nomem:
	cJSON_Delete(root);
	*st = PGN_ENOMEM;
	return NULL;
}
