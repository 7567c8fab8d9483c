# integration/hosts/mcp.sh: pigeon mcp's scenarios (decisions 0165-0168),
# sourced by scenarios.sh after `pigeon install $HOST`, before its
# uninstall; mcp_gone runs after the uninstall. The mock model calls
# Pigeon's tools by the name the host gives them: Claude Code
# mcp__pigeon__NAME (loaded first through its ToolSearch), Gemini CLI
# mcp_pigeon_NAME, opencode pigeon_NAME (sourced by t0504, which runs
# opencode's own scenarios); Codex offers them in the
# namespace mcp__pigeon (the mock's "mock-tool: mcp__pigeon.NAME");
# Copilot CLI names them pigeon-NAME (sourced by t0505, which runs
# Copilot's own scenarios; decision 0236).

# mcp_tool NAME ARGS: the prompt line that makes the model call tool NAME.
mcp_tool() {
	case $HOST in
	claude) printf "%s\n" "mock-tool: mcp__pigeon__$1 $2" ;;
	gemini) printf "%s\n" "mock-tool: mcp_pigeon_$1 $2" ;;
	codex) printf "%s\n" "mock-tool: mcp__pigeon.$1 $2" ;;
	copilot) printf "%s\n" "mock-tool: pigeon-$1 $2" ;;
	*) printf "%s\n" "mock-tool: pigeon_$1 $2" ;;
	esac
}

# The registration install wrote, and its approval.
case $HOST in
claude) MCP_FILE=$HOME/.claude/.claude.json ;;
codex) MCP_FILE=$HOME/.codex/config.toml ;;
gemini) MCP_FILE=$HOME/.gemini/settings.json ;;
opencode) MCP_FILE=$HOME/.config/opencode/opencode.json ;;
copilot) MCP_FILE=$HOME/.copilot/mcp-config.json ;;
*) MCP_FILE= ;;
esac

case $HOST in claude | codex | gemini | opencode | copilot)

test_case "mcp: install registered pigeon mcp for $HOST, pre-approved" '
	{ test "$HOST" != claude ||
		CLAUDE_CONFIG_DIR=$HOME/.claude "$PIG" install claude >install.out; } &&
	grep -q "^mcp: registered pigeon mcp for $HOST in $MCP_FILE$" install.out &&
	case $HOST in
	claude) jq -e ".mcpServers.pigeon.args == [\"mcp\"]" "$MCP_FILE" &&
		jq -e ".permissions.allow | index(\"mcp__pigeon\") != null" \
		    "$HOST_CONFIG" ;;
	codex) grep -q "^default_tools_approval_mode = \"approve\"$" "$MCP_FILE" ;;
	gemini) sed "/^ *\/\//d" "$MCP_FILE" |
		jq -e ".mcpServers.pigeon.trust == true" ;;
	opencode) jq -e ".mcp.pigeon.type == \"local\" and .mcp.pigeon.command[1] == \"mcp\"" "$MCP_FILE" ;;
	copilot) jq -e ".mcpServers.pigeon.args == [\"mcp\"] and .mcpServers.pigeon.tools == [\"*\"]" "$MCP_FILE" &&
		grep -q "^mcp: approval: .*copilot --allow-tool=pigeon approves exactly Pigeon" install.out ;;
	esac
'
;;
esac

# Copilot CLI keeps no tool approval in a file (decision 0217): what
# install wrote offers the tools, and its -p with no one to ask denies
# the call; the flag install tells the person to add approves it
# (MCP_ARGS, given to each turn below).
MCP_ARGS=
if [ "$HOST" = copilot ]; then
MCP_ARGS=--allow-tool=pigeon
test_case "mcp: without --allow-tool=pigeon Copilot CLI denies the call in -p; nothing is queued" '
	mkdir -p "$PROJ/mcp0" &&
	"$PIG" agent add --project "$PROJ" mcpcid >/dev/null &&
	AGENT=mcpann HOST_MODE=defaults &&
	host_run mc0 "$PROJ/mcp0" new "$(mcp_tool send "{\"to\":[\"mcpcid\"],\"text\":\"PGN-MCP-DENIED\"}")" &&
	grep -q "Denied, no one to approve" mc0.out &&
	sql_is "SELECT count(*) FROM message WHERE body = ${SQ}PGN-MCP-DENIED${SQ}" 0
'
fi

# Claude Code defers MCP tools behind its ToolSearch: the mock model
# loads the tool first ("select:mcp__pigeon__send"), then calls it.
case $HOST in claude | codex | gemini | opencode | copilot)

# late_send: a message for mcpbob once the turn's model request that
# calls the wait tool is logged (the prompt's hooks have run; only the
# wait can take it before the after-tool hook), at most 120 s on: a
# request that offers tools (not opencode's title request) and holds the
# prompt's mock-tool line (opencode runs the prompt as one line, so no
# second line can mark it). On Claude that is the second request: the
# first loads the tool, and the after-tool hook of that ToolSearch call
# runs before the second.
late_send() {
	ls_from=$(wc -l <"$REQLOG")
	ls_want=1
	[ "$HOST" != claude ] || ls_want=2
	ls_i=0
	while [ "$ls_i" -lt 600 ]; do
		[ "$(tail -n "+$((ls_from + 1))" "$REQLOG" |
		    grep '"tools":\[{' |
		    grep -c 'mock-tool: [a-z_.-]*wait {')" -ge "$ls_want" ] && break
		sleep 0.2
		ls_i=$((ls_i + 1))
	done
	"$PIG" send --project "$PROJ" --from alice --to mcpbob PGN-MCP-WAITED >/dev/null
}

# record_on, record_off: the registration install wrote runs, for one
# turn, a stand-in that keeps every line the host sends in
# mcp-rec/HOST.jsonl and hands it to the same pigeon (the live handshake
# beside tests/fixtures/mcp, checked by record_check); then the path
# install wrote is put back, byte for byte.
record_on() {
	ro_real=$(realpath "$PIG") && mkdir -p mcp-rec &&
	printf "#!/bin/sh\ntee -a %s | exec %s \"\$@\"\n" \
	    "$TEST_DIR/mcp-rec/$HOST.jsonl" "$ro_real" >mcp-rec/pigeon &&
	chmod 755 mcp-rec/pigeon &&
	grep -q "\"$ro_real\"" "$MCP_FILE" &&
	sed -i "s|\"$ro_real\"|\"$TEST_DIR/mcp-rec/pigeon\"|" "$MCP_FILE"
}
# PGN_MCP_RECORD_DIR, if set, gets a copy (how the fixtures were made).
record_off() {
	sed -i "s|\"$TEST_DIR/mcp-rec/pigeon\"|\"$(realpath "$PIG")\"|" \
	    "$MCP_FILE" && ! grep -q mcp-rec "$MCP_FILE" &&
	{ test -z "${PGN_MCP_RECORD_DIR:-}" ||
		cp "mcp-rec/$HOST.jsonl" "$PGN_MCP_RECORD_DIR/"; }
}
# record_check: what the live host sent first, as the fixtures say (the
# methods in order, the revision, the client's name and version).
record_check() {
	jq -c "[.method, .params.protocolVersion // .params._meta[\"io.modelcontextprotocol/protocolVersion\"], .params.clientInfo.name]" \
	    "mcp-rec/$HOST.jsonl" | head -n 3 >rec.head &&
	case $HOST in
	claude) printf "%s\n" "[\"server/discover\",\"2026-07-28\",null]" \
		"[\"initialize\",\"2025-11-25\",\"claude-code\"]" \
		"[\"notifications/initialized\",null,null]" ;;
	codex) printf "%s\n" "[\"initialize\",\"2025-06-18\",\"codex-mcp-client\"]" \
		"[\"notifications/initialized\",null,null]" \
		"[\"tools/list\",null,null]" ;;
	gemini) printf "%s\n" "[\"initialize\",\"2025-06-18\",\"gemini-cli-mcp-client\"]" \
		"[\"notifications/initialized\",null,null]" \
		"[\"tools/list\",null,null]" ;;
	opencode) printf "%s\n" "[\"initialize\",\"2025-11-25\",\"opencode\"]" \
		"[\"notifications/initialized\",null,null]" \
		"[\"tools/list\",null,null]" ;;
	copilot) printf "%s\n" "[\"server/discover\",\"2026-07-28\",null]" \
		"[\"initialize\",\"2025-11-25\",\"copilot-cli\"]" \
		"[\"notifications/initialized\",null,null]" ;;
	esac >rec.want &&
	test_cmp rec.want rec.head &&
	grep -q "\"name\":\"send\"" "mcp-rec/$HOST.jsonl"
}

test_case "mcp: the model calls Pigeon's send tool; the message is queued from the session's agent" '
	mkdir -p "$PROJ/mcp" &&
	"$PIG" agent add --project "$PROJ" mcpbob >/dev/null &&
	AGENT=mcpann HOST_MODE=defaults HOST_ARGS="${HOST_ARGS:-} $MCP_ARGS" &&
	record_on &&
	host_run mc1 "$PROJ/mcp" new "$(mcp_tool send "{\"to\":[\"mcpbob\"],\"text\":\"PGN-MCP-SENT\"}")" &&
	record_off &&
	test_note "the live MCP lines of $HOST are in $TEST_DIR/mcp-rec/$HOST.jsonl" &&
	record_check &&
	"$PIG" inbox --project "$PROJ" --agent mcpbob --json >mcp-inbox &&
	jq -e "length == 1 and .[0].from == \"mcpann\" and .[0].body == \"PGN-MCP-SENT\"" mcp-inbox &&
	requests mc1 | grep -q "\\\\\"from\\\\\":\\\\\"mcpann\\\\\""
'

test_case "mcp: a wait tool call returns a message sent meanwhile, claimed with route mcp" '
	AGENT=mcpbob && HOST_MODE=defaults && HOST_ARGS="${HOST_ARGS:-} $MCP_ARGS" &&
	"$PIG" read --project "$PROJ" --agent mcpbob >/dev/null &&
	{ late_send & } &&
	host_run mc2 "$PROJ/mcp" new "$(mcp_tool wait "{\"timeout\":40}")" &&
	wait &&
	requests mc2 | grep -q "PGN-MCP-WAITED" &&
	test "$(sql "SELECT route FROM delivery WHERE body = '"'"'PGN-MCP-WAITED'"'"'")" = mcp
'
;;
esac

# Codex: from its default sandbox, with no writable_roots edit: install
# --no-permissions, and the server (outside the sandbox) still writes.
if [ "$HOST" = codex ]; then
test_case "mcp: Codex sends through the tool from its default sandbox, installed --no-permissions" '
	"$PIG" uninstall codex >/dev/null &&
	"$PIG" install codex --no-permissions >install-np.out &&
	! grep -q "writable_roots" "$HOME/.codex/config.toml" &&
	grep -q "^\[mcp_servers.pigeon\]$" "$HOME/.codex/config.toml" &&
	AGENT=mcpann && HOST_MODE=defaults &&
	host_run mc3 "$PROJ/mcp" new "$(mcp_tool send "{\"to\":[\"mcpbob\"],\"text\":\"PGN-MCP-SANDBOX\"}")" &&
	"$PIG" inbox --project "$PROJ" --agent mcpbob --json >mcp-inbox &&
	jq -e "map(select(.body == \"PGN-MCP-SANDBOX\" and .from == \"mcpann\")) | length == 1" mcp-inbox &&
	"$PIG" install codex >/dev/null
'
fi

# After the uninstall: no registration is left.
mcp_gone() {
	test_case "mcp: uninstall removed every registration of pigeon mcp" '
		{ test "$HOST" != claude ||
			! grep -q "mcp__pigeon" "$HOST_CONFIG"; } &&
		{ test "$HOST" != claude ||
			CLAUDE_CONFIG_DIR=$HOME/.claude "$PIG" uninstall claude >/dev/null; } &&
		{ test -z "$MCP_FILE" || ! test -e "$MCP_FILE" ||
			! grep -q "\"pigeon\": {\|^\[mcp_servers.pigeon\]" "$MCP_FILE"; }
	'
}
