/*
 * The one table of host facts (docs/architecture.md, "The host
 * table"): a row per host, read by install, doctor and the hook; the
 * envelope each host's hook prints; where a host's config file lives.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"
#include "pigeon/hosts.h"

/*
 * Claude Code's messaging socket, measured with 2.1.332 (decision 0175):
 * $CLAUDE_CONFIG_DIR/sessions/<pid>.json beside projects/<dir>/<id>.jsonl
 * (the transcript), its socket in a cc-socks directory, its frame's
 * content the new turn's prompt (the prompt hook knows it: a
 * continuation, decision 0176).
 */
static const struct pgn_doorbell doorbell_claude = {
    .kind = PGN_BELL_SOCKET,
    .via = "claude-socket",
    .line = "Pigeon: mail is waiting for you and is delivered with this turn",
    .from = "pigeon",
    .transcript_up = 3,
    .sessions = "sessions",
    .socket_dir = "cc-socks",
    .idle = "idle",
    .inbound_key = "crossSessionInbound",
    .mode_key = "defaultMode",
    .hold_mode = "bypassPermissions",
};

/*
 * Codex's queue, measured with 0.171.0 (decisions 0211, 0233): `codex
 * queue --thread ID --message TEXT` starts a turn in the idle terminal
 * session of thread ID (the hooks' session_id) found through CODEX_HOME,
 * five levels above the transcript ($CODEX_HOME/sessions/Y/M/D/
 * rollout-*.jsonl); the turn's prompt hook claims the mail. The same
 * line as Claude's, so the prompt hook knows the woken turn.
 */
static const struct pgn_doorbell doorbell_codex = {
    .kind = PGN_BELL_QUEUE,
    .via = "codex-queue",
    .line = "Pigeon: mail is waiting for you and is delivered with this turn",
    .transcript_up = 5,
    .program = "codex",
    .home_env = "CODEX_HOME",
};

static pgn_envelope_fn envelope_cursor, envelope_specific, envelope_copilot,
    envelope_opencode;

/* Where the hosts' facts were read, for the cells' evidence. */
#define DOC_CURSOR "cursor.com/docs/hooks (2026-08-25)"
#define DOC_CLAUDE "code.claude.com/docs/en/hooks (2026-10-08)"
#define DOC_CODEX  "learn.chatgpt.com/docs/hooks (2026-08-25)"
#define DOC_GEMINI                                                             \
	"google-gemini/gemini-cli:docs/hooks/reference.md@06c0d81 (2026-08-25)"
#define T_CURSOR "cursor simulator, integration/t0203-cursor-sim"
#define T_CLAUDE "Claude Code 2.1.332, integration/t0501-host-claude"
#define T_CODEX  "Codex 0.171.0, integration/t0502-host-codex"
#define T_GEMINI "Gemini CLI 0.61.0, integration/t0503-host-gemini"
#define DOC_COPILOT                                                            \
	"github/docs:content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md@927566b (2026-12-01)"
#define T_COPILOT    "Copilot CLI 1.0.102, integration/t0505-host-copilot"
#define T_OPENCODE   "opencode 1.18.33, integration/t0504-host-opencode"
#define T_CURSOR_PRE "cursor simulator, integration/t0210-hook-before-tool"
/* What a send could ring in a host with none (decision 0178). */
#define WAKE_NONE                                                              \
	{                                                                      \
		PGN_CAP_NO,                                                    \
		    "instructions block only (2026-12-03): no hook, nothing "  \
		    "Pigeon can ring"                                          \
	}
#define T_COPILOT_PRE "copilot simulator, integration/t0210-hook-before-tool"
#define SRC_OPENCODE                                                           \
	"@opencode-ai/plugin 1.18.33, dist/index.d.ts, interface Hooks (2026-12-01)"

/* Cursor: no permission edit, user or project. */
#define CURSOR_PERM                                                            \
	"none: Cursor keeps its agent's command allow-list in its own settings (a ~/.cursor/permissions.json terminalAllowlist would replace that list); allow pigeon send, read, wait, status, ack, lease and thread there"
/* opencode: its default permissions let the agent run bash (measured). */
#define OPENCODE_PERM                                                          \
	"none: opencode's default permissions let its agent run pigeon send, read, wait, status, ack, lease and thread (bash is allowed; measured with opencode 1.18.33)"
#define OPENCODE_PERM_BRIEF "opencode's default permissions allow bash"
#define CURSOR_PERM_BRIEF                                                      \
	"allow pigeon send, read, wait, status, ack, lease and thread in Cursor's own settings"

/* Copilot CLI: its permissions are flags and prompts, not a file. */
#define COPILOT_PERM                                                           \
	"none: Copilot CLI asks before a shell command; start it with --allow-tool 'shell(pigeon:*)' (or approve pigeon when it asks)"
#define COPILOT_PERM_BRIEF "start copilot with --allow-tool 'shell(pigeon:*)'"

static const struct pgn_host_info hosts[PGN_NHOSTS] = {
    [PGN_HOST_CURSOR] =
        {
            .name = "cursor",
            .mcp =
                {
                    .user_path = ".cursor/mcp.json",
                    .project_path = ".cursor/mcp.json",
                    .key = "mcpServers",
                    .entry = "{\"command\":@PIGEON@,\"args\":[\"mcp\"]}",
                    .allow = "pigeon:*",
                    .allow_file = ".cursor/permissions.json",
                    .allow_array = "mcpAllowlist",
                    .allow_comments = 1,
                    .allow_existing = 1,
                    .approval =
                        "\"pigeon:*\" in mcpAllowlist of ~/.cursor/permissions.json when that list is there (Pigeon starts none: a new one replaces Cursor's in-app allowlist whole); else allow Pigeon's tools in Cursor's MCP settings, or start cursor-agent with --approve-mcps",
                },
            .title = "Cursor",
            .mechanism = PGN_MECH_COMMAND,
            .shape = PGN_SHAPE_FLAT,
            .user_path = ".cursor/hooks.json",
            .project_path = ".cursor/hooks.json",
            .perm = {PGN_PERM_NONE, PGN_PERM_NONE},
            .perm_none = {CURSOR_PERM, CURSOR_PERM},
            .perm_brief = {CURSOR_PERM_BRIEF, CURSOR_PERM_BRIEF},
            .events = {"sessionStart", "beforeSubmitPrompt", "postToolUse",
                "stop", NULL, "preToolUse"},
            .keys =
                {
                    .session = {"conversation_id", "session_id"},
                    .session_strip = "bc-", /* cloud conversations */
                    .dir = "workspace_roots",
                    .dir_first = 1,
                    .turn = {[PGN_EVENT_PROMPT] = "generation_id"},
                    .prompt = "prompt",
                },
            .detect =
                {
                    .rank = 1,
                    .keys = {"cursor_version"},
                    .own_event = 1,
                },
            .session_env = 1,
            .transcript_from = PGN_TRANSCRIPT_FROM_CURSOR,
            .replays = "claude",
            .replay_note =
                "Cursor also runs Claude's hooks when third-party hooks are on; Pigeon ignores those runs (their payload has cursor_version), so each prompt is injected once",
            .envelope = envelope_cursor,
            /* Its command is a shell string (documented; decision 0243). */
            .shell_guard = 1,
            .tool = {"tool_name", "tool_input"},
            .tools =
                {
                    {"Write", PGN_TOOL_PATH, {"file_path", "path"}},
                    {"Edit", PGN_TOOL_PATH, {"file_path", "path"}},
                    {"MultiEdit", PGN_TOOL_PATH, {"file_path", "path"}},
                    {"StrReplace", PGN_TOOL_PATH, {"path", "file_path"}},
                    {"Delete", PGN_TOOL_PATH, {"path", "file_path"}},
                    {"ApplyPatch", PGN_TOOL_PATCH,
                        {"patch", "input", "command"}},
                },
            .deny = PGN_DENY_PERMISSION,
            .allow = "{\"permission\":\"allow\"}",
            .cells =
                {
                    {PGN_CAP_YES, DOC_CURSOR "; " T_CURSOR},
                    {PGN_CAP_PARTIAL,
                        DOC_CURSOR
                        ": beforeSubmitPrompt documents only {continue, user_message}; additional_context there is undocumented; " T_CURSOR},
                    {PGN_CAP_YES, DOC_CURSOR "; " T_CURSOR},
                    {PGN_CAP_YES,
                        DOC_CURSOR
                        ": stop followup_message (not in cursor-agent -p); " T_CURSOR},
                    {PGN_CAP_NO,
                        DOC_CURSOR
                        ": no event or API starts a turn of a local session from outside"},
                    [PGN_EVENT_BEFORE_TOOL] = {PGN_CAP_PARTIAL,
                        DOC_CURSOR
                        ": preToolUse permission deny with agent_message; " T_CURSOR_PRE},
                },
            .wake = {PGN_CAP_NO,
                DOC_CURSOR
                " and the cursor simulator: no socket, queue or command starts a turn in an idle session from outside; only the stop hook's followup_message, within a turn (docs/decisions/0178)"},
        },
    [PGN_HOST_CLAUDE] =
        {
            .name = "claude",
            .mcp =
                {
                    .user_env = "CLAUDE_CONFIG_DIR",
                    .env_file = ".claude.json",
                    .user_path = ".claude.json",
                    .project_path = ".mcp.json",
                    .user_max = PGN_MAX_CLAUDE_STATE,
                    .key = "mcpServers",
                    .entry =
                        "{\"type\":\"stdio\",\"command\":@PIGEON@,\"args\":[\"mcp\"]}",
                    .allow = "mcp__pigeon",
                    .allow_parent = "permissions",
                    .allow_array = "allow",
                    .approval =
                        "\"mcp__pigeon\" in permissions.allow of the hooks' settings.json",
                },
            .title = "Claude Code",
            .mechanism = PGN_MECH_COMMAND,
            .shape = PGN_SHAPE_NESTED,
            .user_env = "CLAUDE_CONFIG_DIR",
            .env_file = "settings.json",
            .user_path = ".claude/settings.json",
            .project_path = ".claude/settings.json",
            .perm = {PGN_PERM_RULES, PGN_PERM_RULES},
            .events = {"SessionStart", "UserPromptSubmit", "PostToolUse",
                "Stop", NULL, "PreToolUse"},
            .keys =
                {
                    .session = {"session_id"},
                    .dir = "cwd",
                    .turn = {"prompt_id", "prompt_id", "prompt_id", "prompt_id",
                        NULL},
                    .prompt = "prompt",
                    .source = "source",
                    .new_sources = {"startup", "clear"},
                },
            .detect = {.rank = 4, .fallback = 1},
            .envelope = envelope_specific,
            .stop_decision = "block",
            .user_note = "systemMessage",
            .shell_guard = 1,
            .rewake = 1,
            .continuation_prefix = "<task-notification>",
            .env_export = "CLAUDE_ENV_FILE",
            .tool = {"tool_name", "tool_input"},
            .tools =
                {
                    {"Edit", PGN_TOOL_PATH, {"file_path"}},
                    {"Write", PGN_TOOL_PATH, {"file_path"}},
                    {"MultiEdit", PGN_TOOL_PATH, {"file_path"}},
                    {"NotebookEdit", PGN_TOOL_PATH,
                        {"notebook_path", "file_path"}},
                },
            .deny = PGN_DENY_SPECIFIC,
            .cells =
                {
                    {PGN_CAP_YES, T_CLAUDE},
                    {PGN_CAP_YES, T_CLAUDE},
                    {PGN_CAP_YES, T_CLAUDE},
                    {PGN_CAP_YES, T_CLAUDE},
                    {PGN_CAP_PARTIAL,
                        T_CLAUDE
                        ": opt-in, pigeon install claude --rewake: an asyncRewake Stop hook waits up to reach.rewakeWaitS after each turn (interactive and stream-json sessions; not plain -p; docs/decisions/0081)"},
                    [PGN_EVENT_BEFORE_TOOL] = {PGN_CAP_YES, T_CLAUDE},
                },
            .doorbell = &doorbell_claude,
            .wake = {PGN_CAP_YES, T_CLAUDE ": the messaging socket, rung when a message is queued for an idle session (interactive sessions; refused or held where crossSessionInbound or bypass-permissions mode says so; docs/decisions/0175)"},
        },
    [PGN_HOST_CODEX] =
        {
            .name = "codex",
            .mcp =
                {
                    .user_env = "CODEX_HOME",
                    .env_file = "config.toml",
                    .user_path = ".codex/config.toml",
                    .entry =
                        "[mcp_servers.pigeon]\n"
                        "command = @PIGEON@\n"
                        "args = [\"mcp\"]\n"
                        "env_vars = [\"PIGEON_AGENT\", \"PIGEON_SESSION\", \"PIGEON_HOME\", \"PIGEON_DB\"]\n"
                        "default_tools_approval_mode = \"approve\"\n",
                    .approval = "default_tools_approval_mode = \"approve\" in [mcp_servers.pigeon], env_vars passing PIGEON_*",
                },
            .title = "Codex",
            .mechanism = PGN_MECH_COMMAND,
            .shape = PGN_SHAPE_NESTED,
            .user_env = "CODEX_HOME",
            .env_file = "hooks.json",
            .user_path = ".codex/hooks.json",
            .project_path = ".codex/hooks.json",
            .perm = {PGN_PERM_ROOT, PGN_PERM_ROOT},
            .trust = PGN_TRUST_CODEX_TOML,
            .trust_note =
                {
                    "Codex runs hooks only once they are trusted: open codex and review them with /hooks (\"Trust all and continue\"), or pass --dangerously-bypass-hook-trust",
                    "Codex runs hooks only once they are trusted (and project hooks only in a trusted project): open codex and review them with /hooks (\"Trust all and continue\"), or pass --dangerously-bypass-hook-trust",
                },
            .events = {"SessionStart", "UserPromptSubmit", "PostToolUse",
                "Stop", NULL, "PreToolUse"},
            .keys =
                {
                    .session = {"session_id"},
                    .dir = "cwd",
                    .turn = {"turn_id", "turn_id", "turn_id", "turn_id", NULL},
                    .prompt = "prompt",
                    .source = "source",
                    .new_sources = {"startup"},
                },
            .detect =
                {
                    .rank = 3,
                    .keys = {"turn_id"},
                    .keys2 = {"model", "permission_mode"},
                },
            .envelope = envelope_specific,
            .stop_decision = "block",
            .user_note = "systemMessage",
            .shell_guard = 1,
            .tool = {"tool_name", "tool_input"},
            .tools =
                {
                    {"apply_patch", PGN_TOOL_PATCH,
                        {"command", "input", "patch"}},
                    {"Bash", PGN_TOOL_SHELL, {"command"}},
                },
            .deny = PGN_DENY_SPECIFIC,
            .cells =
                {
                    {PGN_CAP_YES, T_CODEX},
                    {PGN_CAP_YES, T_CODEX},
                    {PGN_CAP_YES, T_CODEX},
                    {PGN_CAP_YES, T_CODEX},
                    {PGN_CAP_NO,
                        DOC_CODEX
                        ": no hook runs once a turn has ended (the doorbell's codex queue starts one: wake)"},
                    [PGN_EVENT_BEFORE_TOOL] =
                        {PGN_CAP_YES,
                            T_CODEX " (apply_patch, and its heredoc through Bash)"},
                },
            .doorbell = &doorbell_codex,
            .wake = {PGN_CAP_YES,
                "Codex 0.171.0, integration/t0507-host-codex-wake: codex queue --thread ID --message LINE, run detached by a send for an idle terminal session (found on PATH, bounded), starts a turn whose UserPromptSubmit hook delivers the mail once (docs/decisions/0211, 0233)"},
        },
    [PGN_HOST_GEMINI] =
        {
            .name = "gemini",
            .mcp =
                {
                    .user_path = ".gemini/settings.json",
                    .project_path = ".gemini/settings.json",
                    .key = "mcpServers",
                    .entry =
                        "{\"command\":@PIGEON@,\"args\":[\"mcp\"],\"trust\":true}",
                    .approval = "\"trust\": true in its mcpServers entry",
                },
            .title = "Gemini CLI",
            .mechanism = PGN_MECH_COMMAND,
            .shape = PGN_SHAPE_NESTED,
            .user_path = ".gemini/settings.json",
            .project_path = ".gemini/settings.json",
            .timeout_ms = 1,
            .json_comments = 1,
            .perm = {PGN_PERM_POLICY, PGN_PERM_NONE},
            .perm_none =
                {
                    NULL,
                    "none for a project: Gemini CLI does not read project policies (.gemini/policies is disabled, google-gemini/gemini-cli#24367); pigeon install gemini (user) writes ~/.gemini/policies/pigeon.toml",
                },
            .perm_brief =
                {
                    NULL,
                    "Gemini CLI reads no project policies; the user policy covers it",
                },
            .events = {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent",
                NULL, "BeforeTool"},
            .keys =
                {
                    .session = {"session_id"},
                    .dir = "cwd",
                    .prompt = "prompt",
                    .source = "source",
                    .new_sources = {"startup", "clear"},
                },
            /* An event only Gemini has, or one it shares with a timestamp. */
            .detect =
                {
                    .rank = 2,
                    .unique_event = 1,
                    .event_key = "timestamp",
                },
            .envelope = envelope_specific,
            .stop_decision = "deny",
            .user_note = "systemMessage",
            .shell_guard = 1,
            .tool = {"tool_name", "tool_input"},
            .tools =
                {
                    {"write_file", PGN_TOOL_PATH, {"file_path"}},
                    {"replace", PGN_TOOL_PATH, {"file_path"}},
                },
            .deny = PGN_DENY_DECISION,
            .cells =
                {
                    {PGN_CAP_YES, T_GEMINI},
                    {PGN_CAP_YES, T_GEMINI},
                    {PGN_CAP_YES, T_GEMINI},
                    {PGN_CAP_YES, T_GEMINI},
                    {PGN_CAP_NO,
                        DOC_GEMINI
                        ": no event after AfterAgent, and nothing starts a turn from outside"},
                    [PGN_EVENT_BEFORE_TOOL] = {PGN_CAP_YES, T_GEMINI},
                },
            .wake = {PGN_CAP_NO,
                "Gemini CLI 0.61.0 gemini --help (2026-12-03): no command, socket or server reaches a running interactive session (--acp serves a new session on stdio) (docs/decisions/0178)"},
        },
    [PGN_HOST_COPILOT] =
        {
            .name = "copilot",
            .mcp =
                {
                    .user_env = "COPILOT_HOME",
                    .env_file = "mcp-config.json",
                    .user_path = ".copilot/mcp-config.json",
                    .key = "mcpServers",
                    .entry =
                        "{\"type\":\"local\",\"command\":@PIGEON@,\"args\":[\"mcp\"],\"tools\":[\"*\"]}",
                    .approval = "none written: Copilot CLI 1.0.102 keeps no tool approval in a file (copilot help config lists none); \"tools\": [\"*\"] offers them, and copilot --allow-tool=pigeon approves exactly Pigeon's (copilot help permissions: <mcp-server-name>(tool-name?))",
                },
            .title = "GitHub Copilot CLI",
            .mechanism = PGN_MECH_COMMAND,
            /* Cursor's shape: Copilot CLI reads it (measured, 1.0.102). */
            .shape = PGN_SHAPE_FLAT,
            .shell_guard = 1,
            .user_env = "COPILOT_HOME",
            .env_file = "hooks/pigeon.json",
            .user_path = ".copilot/hooks/pigeon.json",
            .project_path = ".github/hooks/pigeon.json",
            .perm = {PGN_PERM_NONE, PGN_PERM_NONE},
            .perm_none = {COPILOT_PERM, COPILOT_PERM},
            .perm_brief = {COPILOT_PERM_BRIEF, COPILOT_PERM_BRIEF},
            .trust_note =
                {
                    NULL,
                    "Copilot CLI loads a repository's .github/hooks only in a folder you trusted (its trust prompt; copilot -p: --trust-folder)",
                },
            .events = {"sessionStart", "userPromptSubmitted", "postToolUse",
                "agentStop", NULL, "preToolUse"},
            .keys =
                {
                    .session = {"sessionId", "session_id"},
                    .dir = "cwd",
                    .prompt = "prompt",
                    .source = "source",
                    .new_sources = {"new", "startup"},
                },
            /*
             * Its own (camelCase) payloads carry sessionId; the
             * VS Code-compatible ones it gives Claude's hooks a
             * timestamp string, which Claude Code never sends. After
             * Claude (rank 4), so a Gemini payload stays Gemini's.
             */
            .detect =
                {
                    .rank = 5,
                    .keys = {"sessionId"},
                    .keys2 = {"timestamp", "hook_event_name"},
                },
            .replays = "claude",
            .replay_note =
                "Copilot CLI also runs Claude's hooks (.claude/settings.json, settings.local.json) with its own payload; Pigeon ignores those runs (their payload has Copilot's timestamp), so its copilot hook injects each event once",
            .envelope = envelope_copilot,
            .stop_decision = "block",
            .tool = {"toolName", "toolArgs"},
            .tools =
                {
                    {"create", PGN_TOOL_PATH, {"path"}},
                    {"edit", PGN_TOOL_PATH, {"path"}},
                    {"apply_patch", PGN_TOOL_PATCH, {"input", "patch"}},
                },
            .deny = PGN_DENY_TOP,
            .cells =
                {
                    {PGN_CAP_YES, T_COPILOT},
                    {PGN_CAP_YES,
                        T_COPILOT
                        " (the docs say userPromptSubmitted output is not processed; 1.0.102 puts additionalContext in the prompt, changelog 1.0.65)"},
                    {PGN_CAP_YES, T_COPILOT},
                    {PGN_CAP_YES, T_COPILOT},
                    {PGN_CAP_NO,
                        DOC_COPILOT
                        ": agentStop ends the turn; notification's additionalContext follows only the CLI's own notifications, nothing starts a turn from outside"},
                    [PGN_EVENT_BEFORE_TOOL] =
                        {PGN_CAP_PARTIAL,
                            DOC_COPILOT
                            ": preToolUse permissionDecision deny; " T_COPILOT_PRE},
                },
            .wake = {PGN_CAP_NO,
                "Copilot CLI 1.0.102 copilot --help (2026-12-03): --resume and --remote attach to a session, nothing queues input into a running one (docs/decisions/0178)"},
        },
    [PGN_HOST_OPENCODE] =
        {
            .name = "opencode",
            .mcp =
                {
                    .user_env = "XDG_CONFIG_HOME",
                    .env_file = "opencode/opencode.json",
                    .user_path = ".config/opencode/opencode.json",
                    .project_path = "opencode.json",
                    .key = "mcp",
                    .entry =
                        "{\"type\":\"local\",\"command\":[@PIGEON@,\"mcp\"],\"enabled\":true}",
                    .approval = "none needed: its default permissions allow MCP tools",
                },
            .title = "opencode",
            .mechanism = PGN_MECH_PLUGIN,
            .plugin = pgn_opencode_plugin_js,
            .user_env = "XDG_CONFIG_HOME",
            .env_file = "opencode/plugin/pigeon.js",
            .user_path = ".config/opencode/plugin/pigeon.js",
            .project_path = ".opencode/plugin/pigeon.js",
            .perm = {PGN_PERM_NONE, PGN_PERM_NONE},
            .perm_none = {OPENCODE_PERM, OPENCODE_PERM},
            .perm_brief = {OPENCODE_PERM_BRIEF, OPENCODE_PERM_BRIEF},
            /* What the plugin passes: opencode's own names. */
            .events = {"session.created", "chat.message", "tool.execute.after",
                NULL, "session.idle", "tool.execute.before"},
            .keys =
                {
                    .session = {"session_id"},
                    .dir = "cwd",
                    .turn = {[PGN_EVENT_PROMPT] = "message_id"},
                    .prompt = "prompt",
                    .source = "source",
                    .new_sources = {"startup"},
                    .subagent = "parent_id",
                },
            .detect = {.rank = 1, .own_event = 1},
            .envelope = envelope_opencode,
            .wake_prompt = 1,
            .tool = {"tool_name", "tool_input"},
            .tools =
                {
                    {"edit", PGN_TOOL_PATH, {"filePath"}},
                    {"write", PGN_TOOL_PATH, {"filePath"}},
                    {"multiedit", PGN_TOOL_PATH, {"filePath"}},
                    {"patch", PGN_TOOL_PATCH, {"patchText"}},
                    {"apply_patch", PGN_TOOL_PATCH, {"patchText"}},
                },
            .deny = PGN_DENY_PLUGIN,
            .cells =
                {
                    {PGN_CAP_YES, T_OPENCODE},
                    {PGN_CAP_YES, T_OPENCODE},
                    {PGN_CAP_YES, T_OPENCODE},
                    {PGN_CAP_NO,
                        SRC_OPENCODE
                        ": no plugin hook runs before the agent stops; session.idle comes after"},
                    {PGN_CAP_YES, T_OPENCODE},
                    [PGN_EVENT_BEFORE_TOOL] =
                        {PGN_CAP_YES,
                            T_OPENCODE " (the plugin throws the denial)"},
                },
            .wake = {PGN_CAP_YES,
                T_OPENCODE
                ": its plugin's session.idle starts a turn with the wake line (docs/decisions/0137); from inside the host, not rung by a send"},
        },
};

/*
 * The rest of the table: hosts Pigeon serves with no hook, only the
 * instructions block (pigeon install instructions). Their rows carry
 * no events and no config: pigeon hosts and doctor read their cells;
 * install and the hook never see them (pgn_host_get is the hook rows).
 * Each cell names the document behind it.
 */
#define T_INSTR "instructions block, integration/t0103-install-instructions"
#define INSTR_START                                                                              \
	{                                                                                        \
		PGN_CAP_PARTIAL,                                                                 \
		    T_INSTR                                                                      \
		    ": the agent's name and the commands to read, send and wait; no mail itself" \
	}
#define DOC_GROK                                                               \
	"superagent-ai/grok-cli:src/agent/agent.ts@fb97af8 l.1832-1850 (2026-12-01)"
#define DOC_WINDSURF "docs.windsurf.com/windsurf/cascade/hooks (2026-12-01)"
#define DOC_CLINE    "cline/cline:.clinerules/hooks/README.md@38efa3b (2026-12-01)"
#define DOC_KIRO     "kiro.dev/docs/cli/hooks (2026-12-01)"
#define DOC_QWEN     "Qwen Code hooks, stored index idx:57359767673 (2026-12-01)"
#define DOC_DOCKER   "docker/docker-agent PR #3000, commit 1060601 (2026-12-01)"
#define DOC_AMP      "ampcode.com/manual/plugin-api (2026-12-01)"
#define DOC_DROID                                                              \
	"Factory Droid hooks, stored index idx:69473182592 (2026-12-01)"
/* A facet a host has a hook for, which Pigeon does not install yet. */
#define NOT_YET(doc, what)                                                     \
	{                                                                      \
		PGN_CAP_NO,                                                    \
		    doc ": " what "; Pigeon installs no hook for it yet"       \
	}

static const struct pgn_host_info others[] = {
    {
        .name = "grok",
        .title = "Grok CLI",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                {PGN_CAP_NO,
                    DOC_GROK
                    ": UserPromptSubmit fires, but agent.ts discards every fireHook result"},
                {PGN_CAP_NO,
                    DOC_GROK ": tool hooks' output is discarded the same way"},
                {PGN_CAP_NO, DOC_GROK ": no stop hook whose output is read"},
                {PGN_CAP_NO, DOC_GROK ": nothing starts a turn from outside"},
                [PGN_EVENT_BEFORE_TOOL] = NOT_YET(DOC_GROK,
                    "no before-tool hook whose output is read"),
            },
    },
    {
        .name = "windsurf",
        .title = "Windsurf (Cascade)",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                {PGN_CAP_NO,
                    DOC_WINDSURF
                    ": pre_user_prompt has no stdout contract; only exit 2 blocks"},
                {PGN_CAP_NO,
                    DOC_WINDSURF ": post-tool hooks have no stdout contract"},
                {PGN_CAP_NO, DOC_WINDSURF ": no stop event"},
                {PGN_CAP_NO,
                    DOC_WINDSURF ": nothing starts a turn from outside"},
                [PGN_EVENT_BEFORE_TOOL] = NOT_YET(DOC_WINDSURF,
                    "pre_write_code blocks by exit 2 only"),
            },
    },
    {
        .name = "cline",
        .title = "Cline",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                NOT_YET(DOC_CLINE,
                    "UserPromptSubmit returns contextModification"),
                NOT_YET(DOC_CLINE, "PostToolUse hooks exist"),
                {PGN_CAP_NO,
                    DOC_CLINE ": no hook makes a finishing task go on"},
                {PGN_CAP_NO, DOC_CLINE ": nothing starts a task from outside"},
                [PGN_EVENT_BEFORE_TOOL] =
                    NOT_YET(DOC_CLINE, "PreToolUse hooks exist"),
            },
    },
    {
        .name = "kiro",
        .title = "Kiro CLI",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                NOT_YET(DOC_KIRO,
                    "userPromptSubmit stdout on exit 0 enters the context"),
                NOT_YET(DOC_KIRO, "postToolUse hooks exist"),
                {PGN_CAP_NO, DOC_KIRO ": a stop hook cannot make it go on"},
                {PGN_CAP_NO, DOC_KIRO ": nothing starts a turn from outside"},
                [PGN_EVENT_BEFORE_TOOL] =
                    NOT_YET(DOC_KIRO, "preToolUse hooks exist"),
            },
    },
    {
        .name = "qwen",
        .title = "Qwen Code",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                NOT_YET(DOC_QWEN,
                    "UserPromptSubmit speaks Claude's protocol (timeouts in ms)"),
                NOT_YET(DOC_QWEN, "PostToolUse speaks Claude's protocol"),
                NOT_YET(DOC_QWEN, "Stop speaks Claude's protocol"),
                {PGN_CAP_NO, DOC_QWEN ": nothing starts a turn from outside"},
                [PGN_EVENT_BEFORE_TOOL] =
                    NOT_YET(DOC_QWEN, "PreToolUse speaks Claude's protocol"),
            },
    },
    {
        .name = "docker-agent",
        .title = "docker-agent",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                NOT_YET(DOC_DOCKER,
                    "user_prompt_submit returns additional_context (not persisted)"),
                {PGN_CAP_NO, DOC_DOCKER ": no after-tool context documented"},
                {PGN_CAP_NO, DOC_DOCKER ": no stop hook that goes on"},
                {PGN_CAP_NO,
                    DOC_DOCKER
                    ": follow-up queue drains fire hooks, but nothing of Pigeon's queues one"},
                [PGN_EVENT_BEFORE_TOOL] = {PGN_CAP_NO,
                    DOC_DOCKER ": no pre-tool deny documented"},
            },
    },
    {
        .name = "amp",
        .title = "Amp",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                NOT_YET(DOC_AMP,
                    "the experimental plugin API (PLUGINS=all) sees agent.start"),
                {PGN_CAP_NO,
                    DOC_AMP
                    ": settings hooks are tool:pre-execute and tool:post-execute, with no context output"},
                {PGN_CAP_NO, DOC_AMP ": no stop hook"},
                NOT_YET(DOC_AMP,
                    "a PluginThread can append a user message to the thread"),
                [PGN_EVENT_BEFORE_TOOL] =
                    NOT_YET(DOC_AMP, "tool:pre-execute hooks exist"),
            },
    },
    {
        .name = "droid",
        .title = "Factory Droid",
        .mechanism = PGN_MECH_INSTRUCTIONS,
        .wake = WAKE_NONE,
        .cells =
            {
                INSTR_START,
                NOT_YET(DOC_DROID,
                    "UserPromptSubmit speaks Claude's protocol; one invalid entry disables the whole hooks file"),
                NOT_YET(DOC_DROID, "PostToolUse speaks Claude's protocol"),
                NOT_YET(DOC_DROID, "Stop speaks Claude's protocol"),
                {PGN_CAP_NO, DOC_DROID ": nothing starts a turn from outside"},
                [PGN_EVENT_BEFORE_TOOL] =
                    NOT_YET(DOC_DROID, "PreToolUse speaks Claude's protocol"),
            },
    },
};

#define NOTHERS ((int)(sizeof(others) / sizeof(others[0])))

int
pgn_host_rows(void)
{
	return PGN_NHOSTS + NOTHERS;
}

const struct pgn_host_info *
pgn_host_row(int i)
{
	if (i >= 0 && i < PGN_NHOSTS)
		return &hosts[i];
	if (i >= PGN_NHOSTS && i < PGN_NHOSTS + NOTHERS)
		return &others[i - PGN_NHOSTS];
	return NULL;
}

const struct pgn_host_info *
pgn_host_row_by_name(const char *name)
{
	int i;

	for (i = 0; name != NULL && i < pgn_host_rows(); i++)
		if (strcmp(pgn_host_row(i)->name, name) == 0)
			return pgn_host_row(i);
	return NULL;
}

const char *
pgn_cap_name(pgn_cap c)
{
	return c == PGN_CAP_YES  ? "yes" :
	    c == PGN_CAP_PARTIAL ? "partial" :
	                           "no";
}

const char *
pgn_mechanism_name(pgn_mechanism m)
{
	switch (m) {
	case PGN_MECH_COMMAND:
		return "command";
	case PGN_MECH_PLUGIN:
		return "plugin";
	case PGN_MECH_INSTRUCTIONS:
		return "instructions";
	default:
		return "none";
	}
}

const char *
pgn_host_env_export(void)
{
	const char *v;
	int h;

	for (h = 0; h < PGN_NHOSTS; h++) {
		if (hosts[h].env_export == NULL)
			continue;
		v = getenv(hosts[h].env_export);
		if (v != NULL && v[0] != '\0')
			return v;
	}
	return NULL;
}

static const char *const facets[PGN_NEVENTS] = {
    [PGN_EVENT_SESSION_START] = "session-start",
    [PGN_EVENT_PROMPT] = "prompt",
    [PGN_EVENT_AFTER_TOOL] = "after-tool",
    [PGN_EVENT_STOP] = "stop",
    [PGN_EVENT_IDLE] = "idle",
    [PGN_EVENT_BEFORE_TOOL] = "before-tool",
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
		if (hosts[h].events[e] != NULL &&
		    strcmp(hosts[h].events[e], name) == 0)
			return (pgn_event)e;
	return PGN_EVENT_NONE;
}

const char *
pgn_facet_name(pgn_event e)
{
	return e >= 0 && e < PGN_NEVENTS ? facets[e] : NULL;
}

int
pgn_host_nevents(pgn_host h)
{
	int e, n = 0;

	for (e = 0; h >= 0 && h < PGN_NHOSTS && e < PGN_NEVENTS; e++)
		n += hosts[h].events[e] != NULL;
	return n;
}

/* "a, b or c" of 'n' names; NULL entries are skipped. */
static void
join_names(const char *const *names, size_t n, char *out, size_t len)
{
	struct pgn_buf b;
	size_t i, total = 0, k = 0;

	if (len == 0)
		return;
	for (i = 0; i < n; i++)
		total += names[i] != NULL;
	pgn_buf_init(&b, len - 1);
	for (i = 0; i < n; i++) {
		if (names[i] == NULL)
			continue;
		k++;
		pgn_buf_addf(&b, "%s%s",
		    k == 1         ? "" :
		        k == total ? " or " :
		                     ", ",
		    names[i]);
	}
	k = b.data != NULL ? b.len : 0;
	if (k > 0)
		memcpy(out, b.data, k);
	out[k] = '\0';
	pgn_buf_release(&b);
}

void
pgn_host_names(unsigned mechs, char *out, size_t len)
{
	const char *names[PGN_NHOSTS];
	int h;

	for (h = 0; h < PGN_NHOSTS; h++)
		names[h] = mechs == 0 ||
		        (mechs & PGN_MECH_BIT(hosts[h].mechanism)) != 0 ?
		    hosts[h].name :
		    NULL;
	join_names(names, PGN_NHOSTS, out, len);
}

void
pgn_host_event_names(pgn_host h, char *out, size_t len)
{
	if (h < 0 || h >= PGN_NHOSTS) {
		if (len > 0)
			out[0] = '\0';
		return;
	}
	join_names(hosts[h].events, PGN_NEVENTS, out, len);
}

/* Does the payload hold every non-NULL key of 'keys' (at least one)? */
static int
has_all(const char *const keys[2], int (*has)(const char *, void *), void *arg)
{
	if (keys[0] == NULL)
		return 0;
	return has(keys[0], arg) && (keys[1] == NULL || has(keys[1], arg));
}

/* Is 'event' the name of an event of a row other than 'h'? */
static int
other_has(int h, const char *event)
{
	int o;

	for (o = 0; o < PGN_NHOSTS; o++)
		if (o != h &&
		    pgn_event_by_name((pgn_host)o, event) != PGN_EVENT_NONE)
			return 1;
	return 0;
}

static int
row_matches(int h, const char *event, int (*has)(const char *, void *),
    void *arg, int keys_only)
{
	const struct pgn_detect *d = &hosts[h].detect;
	int own;

	if (has_all(d->keys, has, arg) || has_all(d->keys2, has, arg))
		return 1;
	if (keys_only)
		return 0;
	own = event != NULL &&
	    pgn_event_by_name((pgn_host)h, event) != PGN_EVENT_NONE;
	if (own && d->own_event)
		return 1;
	if (own && d->unique_event &&
	    ((d->event_key != NULL && has(d->event_key, arg)) ||
	        !other_has(h, event)))
		return 1;
	return 0;
}

pgn_host
pgn_host_detect(const char *event, int (*has)(const char *key, void *arg),
    void *arg, int keys_only)
{
	int h, rank, next, fallback = PGN_HOST_NONE;

	for (h = 0; h < PGN_NHOSTS; h++)
		if (hosts[h].detect.fallback)
			fallback = h;
	/* Rows by ascending rank: the table is small, a scan per rank. */
	for (rank = 1; rank > 0; rank = next) {
		next = 0;
		for (h = 0; h < PGN_NHOSTS; h++) {
			if (hosts[h].detect.rank > rank &&
			    (next == 0 || hosts[h].detect.rank < next))
				next = hosts[h].detect.rank;
			if (hosts[h].detect.rank != rank)
				continue;
			if (row_matches(h, event, has, arg, keys_only))
				return (pgn_host)h;
		}
	}
	return keys_only ? PGN_HOST_NONE : (pgn_host)fallback;
}

/*
 * Cursor's envelope: {"additional_context"} for context, with
 * "continue":true on its prompt hook, which must always let the prompt
 * through (its neutral output too); a stop with mail
 * {"followup_message":TEXT}. Nothing to say: {} (Cursor reads every
 * hook's stdout as one JSON object, decision 0258).
 */
static char *
envelope_cursor(const struct pgn_host_info *hi, pgn_event e,
    const char *context, pgn_status *st)
{
	cJSON *root;
	char *out;
	int empty = context == NULL || *context == '\0';

	(void)hi;
	*st = PGN_OK;
	root = cJSON_CreateObject();
	if (root == NULL)
		goto nomem;
	if (e == PGN_EVENT_STOP || e == PGN_EVENT_IDLE) {
		if (!empty &&
		    cJSON_AddStringToObject(root, "followup_message",
		        context) == NULL)
			goto nomem;
	} else {
		if (e == PGN_EVENT_PROMPT &&
		    cJSON_AddTrueToObject(root, "continue") == NULL)
			goto nomem;
		if (!empty &&
		    cJSON_AddStringToObject(root, "additional_context",
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

/*
 * Claude's envelope, which Codex and Gemini share: context as
 * {"hookSpecificOutput":{hookEventName, additionalContext}} and no
 * other key (Codex rejects unknown keys); a stop with mail
 * {"decision":D,"reason":TEXT}. Nothing to say: nothing printed.
 */
static char *
envelope_specific(const struct pgn_host_info *hi, pgn_event e,
    const char *context, pgn_status *st)
{
	cJSON *root, *inner;
	char *out;

	*st = PGN_OK;
	if (context == NULL || *context == '\0')
		return NULL;
	root = cJSON_CreateObject();
	if (root == NULL)
		goto nomem;
	if (e == PGN_EVENT_STOP || e == PGN_EVENT_IDLE) {
		if (cJSON_AddStringToObject(root, "decision",
		        hi->stop_decision) == NULL ||
		    cJSON_AddStringToObject(root, "reason", context) == NULL)
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

/*
 * Copilot CLI's envelope: context as a top-level {"additionalContext"}
 * (session start, prompt, after a tool); a stop with mail
 * {"decision":"block","reason":TEXT}. Nothing to say: nothing printed.
 */
static char *
envelope_copilot(const struct pgn_host_info *hi, pgn_event e,
    const char *context, pgn_status *st)
{
	cJSON *root;
	char *out;
	int ok;

	*st = PGN_OK;
	if (context == NULL || *context == '\0')
		return NULL;
	root = cJSON_CreateObject();
	if (root == NULL)
		goto nomem;
	if (e == PGN_EVENT_STOP || e == PGN_EVENT_IDLE)
		ok = cJSON_AddStringToObject(root, "decision",
		         hi->stop_decision) != NULL &&
		    cJSON_AddStringToObject(root, "reason", context) != NULL;
	else
		ok = cJSON_AddStringToObject(root, "additionalContext",
		         context) != NULL;
	if (!ok)
		goto nomem;
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

/*
 * The envelope of Pigeon's opencode plugin (broker/src/opencode-plugin.js),
 * which puts it in front of the model: {"context":TEXT} for a synthetic
 * part of the message or the tool's output, {"continue":TEXT} for the
 * prompt an idle session goes on with. Nothing to say: nothing.
 */
static char *
envelope_opencode(const struct pgn_host_info *hi, pgn_event e,
    const char *context, pgn_status *st)
{
	cJSON *root;
	char *out;

	(void)hi;
	*st = PGN_OK;
	if (context == NULL || *context == '\0')
		return NULL;
	root = cJSON_CreateObject();
	if (root == NULL ||
	    cJSON_AddStringToObject(root,
	        e == PGN_EVENT_STOP || e == PGN_EVENT_IDLE ? "continue" :
	                                                     "context",
	        context) == NULL) {
		cJSON_Delete(root);
		*st = PGN_ENOMEM;
		return NULL;
	}
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (out == NULL)
		*st = PGN_ENOMEM;
	return out;
}

/*
 * The denial of a tool call, in the row's deny form (hosts.h) with
 * 'reason' as the text the model reads: one JSON object.
 */
static char *
envelope_deny(const struct pgn_host_info *hi, const char *reason,
    pgn_status *st)
{
	cJSON *root, *in;
	char *out;
	int ok = 0;

	*st = PGN_OK;
	root = cJSON_CreateObject();
	if (root == NULL)
		goto nomem;
	switch (hi->deny) {
	case PGN_DENY_SPECIFIC:
		in = cJSON_AddObjectToObject(root, "hookSpecificOutput");
		ok = in != NULL &&
		    cJSON_AddStringToObject(in, "hookEventName",
		        hi->events[PGN_EVENT_BEFORE_TOOL]) != NULL &&
		    cJSON_AddStringToObject(in, "permissionDecision", "deny") !=
		        NULL &&
		    cJSON_AddStringToObject(in, "permissionDecisionReason",
		        reason) != NULL;
		break;
	case PGN_DENY_DECISION:
		ok =
		    cJSON_AddStringToObject(root, "decision", "deny") != NULL &&
		    cJSON_AddStringToObject(root, "reason", reason) != NULL;
		break;
	case PGN_DENY_PERMISSION:
		ok = cJSON_AddStringToObject(root, "permission", "deny") !=
		        NULL &&
		    cJSON_AddStringToObject(root, "user_message", reason) !=
		        NULL &&
		    cJSON_AddStringToObject(root, "agent_message", reason) !=
		        NULL;
		break;
	case PGN_DENY_TOP:
		ok = cJSON_AddStringToObject(root, "permissionDecision",
		         "deny") != NULL &&
		    cJSON_AddStringToObject(root, "permissionDecisionReason",
		        reason) != NULL;
		break;
	case PGN_DENY_PLUGIN:
		ok = cJSON_AddStringToObject(root, "deny", reason) != NULL;
		break;
	default:
		cJSON_Delete(root);
		*st = PGN_EINVAL;
		return NULL;
	}
	if (!ok)
		goto nomem;
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

char *
pgn_envelope(pgn_host h, pgn_event e, const char *context, pgn_status *st)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	char *out;

	*st = PGN_OK;
	if (hi == NULL || e < 0 || e >= PGN_NEVENTS || hi->envelope == NULL ||
	    hi->events[e] == NULL) {
		*st = PGN_EINVAL;
		return NULL;
	}
	if (e == PGN_EVENT_BEFORE_TOOL &&
	    (context == NULL || *context == '\0')) {
		if (hi->allow == NULL)
			return NULL;
		out = pgn_strdup(hi->allow);
		if (out == NULL)
			*st = PGN_ENOMEM;
		return out;
	}
	if (e == PGN_EVENT_BEFORE_TOOL)
		return envelope_deny(hi, context, st);
	return hi->envelope(hi, e, context, st);
}

const struct pgn_tool_map *
pgn_host_tool(pgn_host h, const char *name)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	int i;

	if (hi == NULL || name == NULL)
		return NULL;
	for (i = 0; i < PGN_HOST_TOOLS && hi->tools[i].form != PGN_TOOL_NONE;
	     i++)
		if (strcmp(hi->tools[i].tool, name) == 0)
			return &hi->tools[i];
	return NULL;
}

/* The config file of host 'h': in 'project', env override, or $HOME. */
pgn_status
pgn_host_config_path(pgn_host h, const char *project, char **path,
    struct pgn_err *err)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	const char *v;

	*path = NULL;
	if (hi == NULL)
		return pgn_err_set(err, PGN_EINVAL, "no such host");
	if (project != NULL) {
		if (project[0] == '\0')
			return pgn_err_set(err, PGN_EINVAL,
			    "empty project directory");
		*path = pgn_path_join(project, hi->project_path);
	} else if (hi->user_env != NULL && (v = getenv(hi->user_env)) != NULL &&
	    *v != '\0') {
		*path = pgn_path_join(v, hi->env_file);
	} else if ((v = getenv("HOME")) != NULL && *v != '\0') {
		*path = pgn_path_join(v, hi->user_path);
	} else {
		return pgn_err_set(err, PGN_EINVAL,
		    "cannot find the %s config: HOME is not set", hi->name);
	}
	if (*path == NULL)
		return pgn_err_set(err, PGN_ETOOBIG,
		    "the %s config path is too long", hi->name);
	return PGN_OK;
}

const char *
pgn_doorbell_via(const char *via)
{
	const struct pgn_host_info *hi;
	int i;

	for (i = 0; via != NULL && i < pgn_host_rows(); i++) {
		hi = pgn_host_row(i);
		if (hi != NULL && hi->doorbell != NULL &&
		    strcmp(hi->doorbell->via, via) == 0)
			return hi->doorbell->via;
	}
	return NULL;
}
