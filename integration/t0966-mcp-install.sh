#!/bin/sh
# pigeon install HOST registers pigeon mcp in the host's MCP config
# (decision 0168), byte-exact: Claude's .claude.json and its allow rule
# "mcp__pigeon", Codex's marked [mcp_servers.pigeon] block with env_vars
# and its approval mode, Gemini's trusted entry, Cursor's, Copilot CLI's
# and opencode's files; uninstall gives every file's bytes back (a file
# install created goes); --no-mcp skips it; --dry-run writes nothing;
# doctor shows it; a file Pigeon cannot read as the host's stays as it
# was.
. "$(dirname "$0")/lib.sh"

PIGEON_REAL=$(realpath "$PGN_BIN/cli/pigeon")

# snapshot DIR: every file under DIR with its bytes' hash, sorted.
snapshot() {
	(cd "$1" && find . -type f -exec sha256sum {} + | sort)
}

test_case 'setup: hosts with configs of their own (comments, CRLF, other servers)' '
	mkdir -p home/.claude home/.codex home/.gemini home/.cursor home/.copilot home/.config/opencode &&
	printf "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n" >home/.claude.json &&
	printf "{\"permissions\": {\"allow\": [\"Bash(ls:*)\"]}}\n" >home/.claude/settings.json &&
	printf "model = \"o4\"\r\n\r\n[mcp_servers.other]\r\ncommand = \"x\"\r\n" >home/.codex/config.toml &&
	printf "// mine\n{\"theme\": \"dark\"}\n" >home/.gemini/settings.json &&
	printf "{\"mcpServers\":{}}" >home/.cursor/mcp.json &&
	printf "// mine\n{\n  \"mcpAllowlist\": [\"github:*\"],\n  \"terminalAllowlist\": [\"git\"]\n}\n" >home/.cursor/permissions.json &&
	printf "{\"\$schema\": \"https://opencode.ai/config.json\"}\n" >home/.config/opencode/opencode.json &&
	snapshot home >before
'

test_case 'install registers pigeon mcp in each host, pre-approved where it can be' '
	for h in claude codex gemini cursor copilot opencode; do
		pigeon install $h >out.$h || return 1
		grep -q "^mcp: registered pigeon mcp for $h in " out.$h || return 1
	done &&
	jq -e --arg p "$PIGEON_REAL" ".numStartups == 3 and .mcpServers.other.command == \"x\" and .mcpServers.pigeon == {type: \"stdio\", command: \$p, args: [\"mcp\"]}" home/.claude.json &&
	jq -e ".permissions.allow | index(\"mcp__pigeon\") != null and index(\"Bash(ls:*)\") == 0" home/.claude/settings.json &&
	grep -q "^\[mcp_servers.pigeon\]$" home/.codex/config.toml &&
	grep -q "^default_tools_approval_mode = \"approve\"$" home/.codex/config.toml &&
	grep -q "^env_vars = \[\"PIGEON_AGENT\", \"PIGEON_SESSION\", \"PIGEON_HOME\", \"PIGEON_DB\"\]$" home/.codex/config.toml &&
	grep -q "^command = \"$PIGEON_REAL\"$" home/.codex/config.toml &&
	sed 1d home/.gemini/settings.json | jq -e ".theme == \"dark\" and .mcpServers.pigeon.trust == true" &&
	jq -e ".mcpServers.pigeon.args == [\"mcp\"]" home/.cursor/mcp.json &&
	sed 1d home/.cursor/permissions.json | jq -e ".mcpAllowlist == [\"github:*\", \"pigeon:*\"] and .terminalAllowlist == [\"git\"]" &&
	grep -q "^mcp: approval: .*: written in $HOME/.cursor/permissions.json$" out.cursor &&
	jq -e ".mcpServers.pigeon.tools == [\"*\"]" home/.copilot/mcp-config.json &&
	grep -q "^mcp: approval: none written: Copilot CLI .* copilot --allow-tool=pigeon approves exactly Pigeon" out.copilot &&
	jq -e --arg p "$PIGEON_REAL" ".mcp.pigeon == {type: \"local\", command: [\$p, \"mcp\"], enabled: true}" home/.config/opencode/opencode.json
'

test_case 'installing again changes nothing' '
	snapshot home >once &&
	for h in claude codex gemini cursor copilot opencode; do
		pigeon install $h >out || return 1
		grep -q "^mcp: already registered in " out || return 1
	done &&
	snapshot home >twice &&
	test_cmp once twice
'

test_case 'doctor shows the registration and the approval of each host' '
	pigeon doctor >out &&
	grep -q "mcp: pigeon mcp registered in $HOME/.claude.json" out &&
	grep -q "mcp: tools approved in $HOME/.claude/settings.json$" out &&
	grep -q "mcp: tools approved in $HOME/.cursor/permissions.json$" out &&
	grep -q "mcp: approval: none written: Copilot CLI" out &&
	grep -q "mcp: approval: \"trust\": true in its mcpServers entry$" out &&
	pigeon doctor --json >out.json &&
	jq -e "[.hooks[] | select(.level == \"user\") | .mcp.registered] | all" out.json &&
	jq -e --arg f "$HOME/.cursor/permissions.json" "[.hooks[] | select(.host == \"cursor\" and .level == \"user\") | .mcp | .approved and .approval_path == \$f] == [true]" out.json &&
	jq -e "[.hooks[] | select(.host == \"copilot\" and .level == \"user\") | .mcp | .approved == false and .approval_path == null] == [true]" out.json
'

test_case 'uninstall gives every file its bytes back' '
	for h in claude codex gemini cursor copilot opencode; do
		pigeon uninstall $h >out.$h || return 1
		grep -q "^mcp: removed pigeon mcp for $h from " out.$h || return 1
	done &&
	snapshot home >after &&
	test_cmp before after
'

# Cursor reads mcpAllowlist of ~/.cursor/permissions.json instead of its
# in-app allowlist as soon as the key is there: Pigeon adds itself to a
# list the person keeps, and starts none (decision 0217).
test_case 'cursor: no mcpAllowlist of the person'"'"'s, none started; doctor says how to approve' '
	mv home/.cursor/permissions.json perms.orig &&
	printf "{\"terminalAllowlist\": [\"git\"]}\n" >home/.cursor/permissions.json &&
	cp home/.cursor/permissions.json perms.before &&
	pigeon install cursor >out &&
	grep -q "^mcp: approval: .*: not written in $HOME/.cursor/permissions.json$" out &&
	test_cmp perms.before home/.cursor/permissions.json &&
	pigeon doctor >out &&
	grep -q "mcp: tools not approved: \"pigeon:\*\" in mcpAllowlist" out &&
	printf "{\"mcpAllowlist\": []}\n" >home/.cursor/permissions.json &&
	pigeon install cursor >out &&
	jq -e ".mcpAllowlist == [\"pigeon:*\"]" home/.cursor/permissions.json &&
	pigeon uninstall cursor >out &&
	jq -e ".mcpAllowlist == []" home/.cursor/permissions.json &&
	rm home/.cursor/permissions.json &&
	pigeon install cursor >out &&
	test ! -e home/.cursor/permissions.json &&
	pigeon uninstall cursor >out &&
	mv perms.orig home/.cursor/permissions.json
'

test_case '--no-mcp installs the hooks only; --dry-run writes nothing' '
	pigeon install cursor --no-mcp >out &&
	! grep -q "^mcp:" out &&
	jq -e ".mcpServers == {}" home/.cursor/mcp.json &&
	pigeon uninstall cursor >/dev/null &&
	pigeon install gemini --dry-run >out &&
	grep -q "^mcp: would register pigeon mcp for gemini" out &&
	grep -q "^+.*\"trust\": true" out &&
	snapshot home >after &&
	test_cmp before after
'

test_case 'a config Pigeon cannot read stays untouched; Codex table of its own is refused' '
	printf "{not json" >home/.cursor/mcp.json &&
	expect_code 1 pigeon install cursor >out 2>err &&
	grep -q "mcp.json is not valid JSON" err &&
	test "$(cat home/.cursor/mcp.json)" = "{not json" &&
	pigeon uninstall cursor >/dev/null 2>&1;
	printf "[mcp_servers.pigeon]\ncommand = \"mine\"\n" >>home/.codex/config.toml &&
	cp home/.codex/config.toml codex.before &&
	expect_code 1 pigeon install codex --no-permissions >out 2>err &&
	grep -q "has a \[mcp_servers.pigeon\] table of its own" err &&
	test_cmp codex.before home/.codex/config.toml
'

# Claude Code keeps its state in ~/.claude.json beside mcpServers, and
# real ones are 8-100 MB (project history): its bound is the host
# table's PGN_MAX_CLAUDE_STATE, 256 MiB (decision 0215), not the 1 MiB of
# a config file.
CLAUDE_STATE_MAX=268435456

# claude_state N: a .claude.json as Claude Code writes it, with N
# projects of history (about 300 bytes each).
claude_state() {
	awk -v n="$1" 'BEGIN {
		printf "{\n  \"numStartups\": 40,\n  \"projects\": {\n"
		for (i = 0; i < n; i++)
			printf "    \"/home/u/p%d\": {\"history\": [\"%0250d\"]},\n", i, i
		printf "    \"/\": {}\n  }\n}\n"
	}'
}

test_case 'a .claude.json of Claude'"'"'s real size (8 MB): install registers in it, uninstall gives its bytes back' '
	pigeon uninstall claude >/dev/null 2>&1;
	claude_state 30000 >home/.claude.json &&
	test "$(wc -c <home/.claude.json)" -gt 8000000 &&
	cp home/.claude.json claude.before &&
	pigeon install claude >out 2>err &&
	grep -q "^mcp: registered pigeon mcp for claude in $HOME/.claude.json$" out &&
	jq -e --arg p "$PIGEON_REAL" ".numStartups == 40 and (.projects | length) == 30001 and .mcpServers.pigeon.command == \$p" home/.claude.json >/dev/null &&
	pigeon doctor >doctor.out 2>&1;
	grep -q "mcp: pigeon mcp registered in $HOME/.claude.json" doctor.out &&
	pigeon uninstall claude >out 2>err &&
	test_cmp claude.before home/.claude.json
'

test_case 'a .claude.json at the bound exactly: uninstall takes Pigeon'"'"'s entry out of it' '
	pigeon install claude >/dev/null &&
	head=$(printf "{\"mcpServers\": {\"pigeon\": {\"type\": \"stdio\", \"command\": \"%s\", \"args\": [\"mcp\"]}},\n" "$PIGEON_REAL") &&
	tail="\"k\": 1}" &&
	pad=$((CLAUDE_STATE_MAX - ${#head} - ${#tail} - 2)) &&
	{ printf "%s\n" "$head" && head -c "$pad" /dev/zero | tr "\000" " " &&
		printf "\n%s" "$tail"; } >home/.claude.json &&
	test "$(wc -c <home/.claude.json)" = "$CLAUDE_STATE_MAX" &&
	pigeon uninstall claude >out 2>err &&
	! grep -q "\"pigeon\"" home/.claude.json &&
	test "$(head -c 2 home/.claude.json)" = "{\"" &&
	test "$(tail -c 7 home/.claude.json)" = "\"k\": 1}" &&
	rm home/.claude.json
'

test_case 'a .claude.json one byte past the bound: refused before it is read, exit 1, and the hooks still go' '
	pigeon install claude >/dev/null &&
	jq -e ".hooks.UserPromptSubmit | length > 0" home/.claude/settings.json >/dev/null &&
	rm home/.claude.json &&
	truncate -s $((CLAUDE_STATE_MAX + 1)) home/.claude.json &&
	expect_code 1 pigeon uninstall claude >out 2>err &&
	grep -q "claude.json. is larger than $CLAUDE_STATE_MAX bytes: left untouched" err &&
	grep -q "^removed Pigeon.s hooks for claude from " out &&
	! grep -q pigeon-hook home/.claude/settings.json &&
	test "$(wc -c <home/.claude.json)" = $((CLAUDE_STATE_MAX + 1)) &&
	test "$(tr -d "\000" <home/.claude.json | wc -c)" = 0 &&
	rm home/.claude.json
'

test_done
