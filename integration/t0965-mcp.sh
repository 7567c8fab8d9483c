#!/bin/sh
# pigeon mcp through the binary (docs/mcp.md): a host's handshake and a
# send tool call from the server's agent, the end of the input (a last
# line without its newline is served, then exit 0), a line over the
# bound refused and the next served, a wait answered by a message sent
# meanwhile, a wait ended by the input closing or by the host cancelling
# it, and a closed stdout:
# exit 141 with the claimed ids in a log line on stderr and in mcp.log.
. "$(dirname "$0")/lib.sh"

INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
READY='{"jsonrpc":"2.0","method":"notifications/initialized"}'
# call ID TOOL ARGS: a tools/call line.
call() {
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' \
	    "$1" "$2" "$3"
}

test_case 'setup: two agents' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null
'

test_case 'a handshake, then send from $PIGEON_AGENT; exit 0 at the end of input' '
	{ echo "$INIT"; echo "$READY"; call 1 send "{\"to\":\"bob\",\"text\":\"hi\"}"; } |
	    PIGEON_AGENT=alice pigeon mcp >out 2>err &&
	test "$(wc -l <out)" -eq 2 &&
	jq -s -e ".[0].id == 0 and .[0].result.protocolVersion == \"2025-06-18\"" out &&
	jq -s -e ".[1].id == 1 and .[1].result.structuredContent.from == \"alice\"" out &&
	expect_empty err &&
	sql_is "SELECT m.sender, a.name, m.body FROM message m JOIN agent a ON a.id = m.recipient_id" "alice|bob|hi"
'

test_case '--agent names the agent; a bad one is exit 2' '
	call 1 send "{\"to\":\"alice\",\"text\":\"back\"}" |
	    pigeon mcp --agent bob >out &&
	jq -e ".result.structuredContent.from == \"bob\"" out &&
	expect_code 2 pigeon mcp --agent "Bad Name" </dev/null 2>err &&
	grep -q "^pigeon: --agent" err
'

test_case 'the last line without a newline is served, then exit 0' '
	printf "%s" "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}" |
	    pigeon mcp >out &&
	jq -e ".id == 5 and .result == {}" out
'

test_case 'a line over 262144 bytes is refused, the next served' '
	{ repeat 300000 x; echo; echo "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}"; } |
	    pigeon mcp >out &&
	test "$(wc -l <out)" -eq 2 &&
	head -n 1 out | jq -e ".id == null and .error.code == -32600" &&
	tail -n 1 out | jq -e ".id == 6"
'

test_case 'a wait call returns a message sent meanwhile (route mcp)' '
	pigeon read --agent bob >/dev/null &&
	mkfifo in &&
	{ PIGEON_AGENT=bob pigeon mcp <in >out 2>err & echo $! >pid; } &&
	bg_track "$(cat pid)" &&
	exec 3>in &&
	call 1 wait "{\"timeout\":50}" >&3 &&
	pigeon send --from alice --to bob "while you wait" >/dev/null &&
	wait_for out "while you wait" &&
	exec 3>&- &&
	bg_wait "$(cat pid)" &&
	jq -e ".result.structuredContent.messages[0].body == \"while you wait\"" out &&
	sql_is "SELECT route FROM delivery WHERE body = '"'"'while you wait'"'"'" mcp
'

test_case 'a wait ends when the input closes, claiming nothing' '
	rm -f in out && mkfifo in &&
	{ PIGEON_AGENT=bob pigeon mcp <in >out 2>err & echo $! >pid; } &&
	bg_track "$(cat pid)" &&
	exec 3>in &&
	call 1 wait "{\"timeout\":50}" >&3 &&
	exec 3>&- &&
	bg_wait "$(cat pid)" &&
	jq -e ".result.structuredContent.timed_out == true" out
'

test_case 'a cancelled wait ends, claiming nothing: a send after it stays queued' '
	rm -f in out && mkfifo in &&
	{ PIGEON_AGENT=bob pigeon mcp <in >out 2>err & echo $! >pid; } &&
	bg_track "$(cat pid)" &&
	exec 3>in &&
	call 1 wait "{\"timeout\":50}" >&3 &&
	printf "%s\n" "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,\"reason\":\"user\"}}" >&3 &&
	# The answer comes before the wait could time out (50 s): the cap
	# of this loop is below it, and the cancel is seen within a tick.
	i=0 && until grep -q timed_out out; do
		i=$((i + 1)) && test "$i" -lt 400 || return 1
		sleep 0.1
	done &&
	pigeon send --from alice --to bob "after the cancel" >/dev/null &&
	exec 3>&- &&
	bg_wait "$(cat pid)" &&
	jq -e ".id == 1 and .result.structuredContent.timed_out == true and (.result.structuredContent.messages | length) == 0" out &&
	sql_is "SELECT count(*) FROM message WHERE body = '"'"'after the cancel'"'"' AND delivered_ms IS NULL" 1 &&
	pigeon read --agent bob >/dev/null
'

test_case 'a closed stdout: exit 141, the claimed ids logged' '
	pigeon send --from alice --to bob "lost one" >/dev/null &&
	id=$(sql "SELECT id FROM message WHERE body = '"'"'lost one'"'"'") &&
	call 1 read "{}" >req &&
	expect_code 141 env PIGEON_AGENT=bob pigeon mcp <req >&- 2>err &&
	grep -qx "lost-output agent=bob route=mcp ids=$id" err &&
	grep -qx "lost-output agent=bob route=mcp ids=$id" "$PIGEON_HOME/mcp.log"
'

test_done
