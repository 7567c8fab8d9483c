#!/bin/sh
# pigeon mcp driven by the official MCP inspector (@modelcontextprotocol/
# inspector, pinned in integration/hosts/versions), its --cli mode as the
# client (decision 0218): it negotiates, lists the tools and checks their
# schemas for portability (--strict), calls them, reads tool errors, and
# in its "auto" protocol era probes the 2026-07-28 revision's
# server/discover first, which pigeon mcp refuses, and falls back to
# initialize. Every line the inspector sends is kept by a recording
# stand-in (the handshake of tests/fixtures/mcp/inspector-cli.jsonl).
# Label "hosts"; skipped (exit 77) when the inspector cannot be
# installed, unless CI=true.
hosts_dir=$(cd "$(dirname "$0")/hosts" && pwd -P) || exit 2
hosts_cache=${PIGEON_HOSTS_CACHE:-${HOME:-/nonexistent}/.cache/pigeon-hosts}
if ! why=$(PIGEON_HOSTS_CACHE=$hosts_cache \
    "$hosts_dir/install" inspector 2>&1 >/dev/null); then
	if [ "${CI:-}" = true ]; then
		echo "Bail out! CI=true and the MCP inspector cannot be installed: $why"
		exit 1
	fi
	echo "# SKIPPED the MCP inspector's checks: $why"
	exit 77
fi
. "$hosts_dir/versions"
INSPECTOR=$hosts_cache/$PGN_INSPECTOR_PKG@$PGN_INSPECTOR_VERSION/node_modules/.bin/$PGN_INSPECTOR_BIN
. "$(dirname "$0")/lib.sh"

PIGEON_REAL=$(realpath "$PGN_BIN/cli/pigeon")
# The stand-in the inspector starts: every line it sends kept, then the
# same pigeon mcp.
printf '#!/bin/sh\ntee -a %s | exec %s mcp "$@"\n' \
    "$TEST_DIR/inspector.jsonl" "$PIGEON_REAL" >"$TEST_DIR/server" &&
    chmod 755 "$TEST_DIR/server" || exit 2
test_note "$($INSPECTOR --version 2>/dev/null) ($PGN_INSPECTOR_PKG)"

# inspect ARGS...: the inspector's CLI against the stand-in, which it
# starts with only the environment it passes (PIGEON_HOME given by -e).
inspect() {
	timeout -k 5 120 "$INSPECTOR" --cli -e PIGEON_HOME="$PIGEON_HOME" \
	    "$@"
}

test_case 'setup: two agents' '
	pigeon agent add alice >/dev/null && pigeon agent add bob >/dev/null
'

test_case 'the inspector lists the ten tools, their schemas portable (--strict)' '
	inspect "$TEST_DIR/server" --agent alice --method tools/list --strict \
	    >tools.json 2>tools.err &&
	test ! -s tools.err &&
	jq -e "[.tools[].name] == [\"send\", \"inbox\", \"read\", \"wait\", \"status\", \"ack\", \"thread\", \"lease_take\", \"lease_release\", \"lease_list\"]" tools.json >/dev/null &&
	jq -e "[.tools[] | .inputSchema.type == \"object\"] | all" tools.json >/dev/null
'

test_case 'its handshake: initialize 2025-11-25 answered in kind, then initialized and tools/list' '
	jq -c "[.method, .params.protocolVersion, .params.clientInfo.name]" \
	    inspector.jsonl >hs &&
	printf "%s\n" "[\"initialize\",\"2025-11-25\",\"inspector-cli\"]" \
	    "[\"notifications/initialized\",null,null]" \
	    "[\"tools/list\",null,null]" >hs.want &&
	test_cmp hs.want hs
'

test_case 'a send tool call queues the message from the server'"'"'s agent' '
	inspect "$TEST_DIR/server" --agent alice --method tools/call \
	    --tool-name send --tool-arg to=bob "text=from the inspector" \
	    >send.json &&
	jq -e ".isError == false and .structuredContent.from == \"alice\" and .structuredContent.sent[0].to == \"bob\"" send.json >/dev/null &&
	sql_is "SELECT sender || ${SQ}|${SQ} || body FROM message" "alice|from the inspector"
'

test_case 'a read tool call claims it with route mcp, in the CLI'"'"'s JSON (body)' '
	inspect -e PIGEON_AGENT=bob "$TEST_DIR/server" --method tools/call \
	    --tool-name read >read.json &&
	jq -e ".structuredContent.messages[0].body == \"from the inspector\" and .structuredContent.messages[0].from == \"alice\" and .structuredContent.left == 0" read.json >/dev/null &&
	sql_is "SELECT route FROM delivery" mcp
'

test_case 'a tool error is the tool'"'"'s (isError), worded like the CLI, storing nothing' '
	expect_code 5 inspect "$TEST_DIR/server" --agent alice --method tools/call \
	    --tool-name send --tool-arg text=x >err.json 2>err.err &&
	jq -e ".isError == true and .content[0].text == \"send: ${SQ}to${SQ} is missing\"" err.json >/dev/null &&
	grep -q tool_is_error err.err &&
	sql_is "SELECT count(*) FROM message" 1
'

test_case 'in its auto era it probes server/discover, is refused, and falls back to initialize' '
	: >inspector.jsonl &&
	inspect --protocol-era auto "$TEST_DIR/server" --agent alice \
	    --method tools/list >auto.json &&
	jq -e ".tools | length == 10" auto.json >/dev/null &&
	jq -c "[.method, .params.protocolVersion // .params._meta[\"io.modelcontextprotocol/protocolVersion\"]]" \
	    inspector.jsonl | head -n 2 >auto.hs &&
	printf "%s\n" "[\"server/discover\",\"2026-07-28\"]" \
	    "[\"initialize\",\"2025-11-25\"]" >auto.want &&
	test_cmp auto.want auto.hs
'

test_done
