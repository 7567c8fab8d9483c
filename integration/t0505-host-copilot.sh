#!/bin/sh
# GitHub Copilot CLI, the real CLI at its pinned version
# (integration/hosts/versions), run non-interactively (copilot -p)
# offline against the mock model server (COPILOT_OFFLINE with the mock
# as its BYOK provider) with Pigeon's hooks installed by `pigeon install
# copilot`, and Claude Code's hooks installed in the project too, which
# Copilot CLI also runs: each ping reaches the model once, at session
# start, after a tool call and before a stop; and pigeon mcp's tools
# called by the model (integration/hosts/mcp.sh). Label "hosts"; skipped
# (exit 77) when the host cannot be installed, unless CI=true.
HOST=copilot
. "$(dirname "$0")/hosts/lib.sh"

PROJ=$TEST_DIR/proj
# A real repository: Copilot CLI reads .claude/settings.json at its root.
git init -q "$PROJ" || exit 2
if ! host_seed; then
	echo "Bail out! cannot write the $HOST configuration in $HOME"
	exit 2
fi
USER_HOOKS=$(dirname "$HOST_CONFIG")/user.json
cp "$USER_HOOKS" user.orig || exit 2
rm -f "$HOST_CONFIG"
HOOK=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook
# Copilot CLI loads a project's hooks (.claude/settings.json here) in -p
# only for a trusted folder: trusted for each run, as a user would.
HOST_ARGS=--trust-folder

# ping TO TEXT: queue TEXT from alice for TO in $PROJ; prints the id.
ping() {
	"$PIG" send --project "$PROJ" --create --from alice --to "$1" "$2" \
	    >sent.out || return 1
	sed -n 's/^queued #\([0-9]*\) for .*/\1/p' sent.out
}

test_case 'pigeon install copilot writes its four hooks in a file of its own' '
	"$PIG" install copilot >install.out &&
	grep -qx "installed Pigeon${SQ}s hooks for copilot in $HOST_CONFIG" install.out &&
	for ev in sessionStart userPromptSubmitted postToolUse agentStop; do
		test "$(jq -r --arg e "$ev" ".hooks[\$e][0].command" "$HOST_CONFIG")" = \
		    "[ -x $HOOK ] || exit 0; exec $HOOK copilot $ev" ||
			{ echo "error: no $ev hook" >&9; exit 1; }
	done &&
	test "$(jq -r .version "$HOST_CONFIG")" = 1 &&
	cmp user.orig "$USER_HOOKS" &&
	mkdir "$PROJ/.claude" &&
	jq -n --arg c "echo claude-replay >>$TEST_DIR/claude-replay.log" \
	    "{hooks: {SessionStart: [{hooks: [{type: \"command\", command: \$c}]}]}}" \
	    >"$PROJ/.claude/settings.json" &&
	"$PIG" install claude --project "$PROJ" --no-permissions >/dev/null &&
	grep -qF "$HOOK claude SessionStart" "$PROJ/.claude/settings.json"
'

test_case 'a ping sent before the session starts arrives in its first request, once, though Claude'"'"'s hooks run too' '
	id=$(ping bob PGN-BACKLOG-1) && test -n "$id" &&
	AGENT=bob &&
	host_run s1 "$PROJ" new "first prompt" &&
	arrives s1 PGN-BACKLOG-1 copilot:start &&
	requests s1 | grep -q "\[#$id from alice, [0-9]*s ago\]" &&
	sql_is "SELECT count(*), route FROM delivery WHERE message_id = $id" \
		"1|session-start" &&
	test -s claude-replay.log &&
	sql_is "SELECT count(*) FROM session WHERE host = ${SQ}claude${SQ}" 0 &&
	sql_is "SELECT a.name FROM session s JOIN agent a ON a.id = s.agent_id
		WHERE s.host = ${SQ}copilot${SQ}" bob &&
	test -s user-hook.log
'

test_case 'a ping queued by a tool call arrives after that tool, once' '
	mkdir "$PROJ/t" && AGENT=tom &&
	host_run t1 "$PROJ/t" new \
	    "mock-shell: $PIG send --create --from alice --to tom \"\$(printf PGN-%s-2 TOOL)\"" &&
	counts t1 PGN-TOOL-2 >tool.counts &&
	head -n 1 tool.counts | grep -q "^0 0 " &&
	grep -qx "1 1 copilot:tool" tool.counts &&
	test "$(awk "\$1 > 1" tool.counts | wc -l)" = 0 &&
	sql_is "SELECT count(*), d.route FROM delivery d JOIN message m
		ON m.id = d.message_id WHERE m.body = ${SQ}PGN-TOOL-2${SQ}" \
		"1|after-tool"
'

test_case 'a ping that comes as the agent stops makes it go on with it, once' '
	mkdir "$PROJ/p" && AGENT=pat &&
	host_run p1 "$PROJ/p" new \
	    "mock-before-reply: $PIG send --project $PROJ --create --from alice --to pat \"\$(printf PGN-%s-3 STOP)\"" &&
	counts p1 PGN-STOP-3 >stop.counts &&
	head -n 1 stop.counts | grep -q "^0 0 " &&
	grep -qx "1 1 copilot:stop" stop.counts &&
	test "$(awk "\$1 > 1" stop.counts | wc -l)" = 0 &&
	sql_is "SELECT count(*), d.route FROM delivery d JOIN message m
		ON m.id = d.message_id WHERE m.body = ${SQ}PGN-STOP-3${SQ}" \
		"1|stop"
'

# pigeon mcp's scenarios (integration/hosts/mcp.sh): the model calls
# Pigeon's send and wait tools through Copilot CLI's MCP client, with
# the --allow-tool=pigeon install tells the person to add (decision 0236).
. "$hosts_dir/mcp.sh"

test_case 'uninstall copilot removes the file it created; the user'"'"'s stays' '
	"$PIG" uninstall copilot >out &&
	grep -q "deleted $HOST_CONFIG, which Pigeon had created" out &&
	test ! -e "$HOST_CONFIG" &&
	cmp user.orig "$USER_HOOKS"
'

mcp_gone

test_done
