#!/bin/sh
# The idle wake, pigeon-hook claude Stop --rewake, as real processes:
# the waiter sleeps until mail comes, prints it on stderr and exits 2;
# a newer waiter of the same session supersedes an older one, which
# exits 0 having claimed nothing; a waiter killed with SIGKILL loses
# nothing; the host gone ($CLAUDE_PID), it ends claiming nothing. The
# host here is a sleep process standing in for Claude (its pid is what
# Claude puts in CLAUDE_PID; docs/decisions/0081).
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
LOG=$PIGEON_HOME/hook.log
mkdir -p "$PROJ/.git" "$PROJ/.pigeon" || exit 2
# Each waiter's wait is bounded: a test that goes wrong ends.
echo '{"reach": {"rewakeWaitS": 20}}' >"$PROJ/.pigeon/config.json" || exit 2

sleep 600 &
HOSTPID=$!
bg_track "$HOSTPID"

# stop SID: the Claude Stop payload of session SID in ./stop-SID.json;
# a first SessionStart binds SID to agent rita.
bind() {
	fixture_payload "$FIX/claude/01-SessionStart-startup.json" "$PROJ" \
	    "$1" >start.json &&
	PIGEON_AGENT=rita "$HOOK" claude SessionStart <start.json >/dev/null &&
	fixture_payload "$FIX/claude/11-Stop-end.json" "$PROJ" "$1" \
	    >"stop-$1.json"
}
# waiter NAME SID [HOST]: a background waiter for session SID of host
# process HOST (default $HOSTPID); stdout and stderr in NAME.out and
# NAME.err, its pid in NAME.pid.
waiter() {
	CLAUDE_PID=${3:-$HOSTPID} "$HOOK" claude Stop --rewake \
	    <"stop-$2.json" >"$1.out" 2>"$1.err" &
	echo $! >"$1.pid"
	bg_track "$!"
}
# token SID: the text of session SID's waiter token file (named by the
# BLAKE2b-128 of the session key).
token() {
	cat "$PIGEON_HOME/rewake/$(printf "claude:%s" "$1" | b2sum -l 128 |
	    cut -d" " -f1)" 2>/dev/null
}
# spawn_host: a stand-in host process; its pid in host.pid.
spawn_host() {
	sleep 600 &
	echo $! >host.pid
	bg_track "$!"
}
ping() {
	pigeon send --project "$PROJ" --create --from alice --to rita "$1" |
	    sed -n 's/^queued #\([0-9]*\) for .*/\1/p'
}
# exits NAME N: wait for waiter NAME to end (its wait is bounded by
# reach.rewakeWaitS); it must have exited N.
exits() {
	bg_wait "$(cat "$1.pid")"
	ex_rc=$?
	[ "$ex_rc" -eq "$2" ] && return 0
	echo "error: waiter $1 exited $ex_rc, want $2" >&9
	return 1
}
# until_token_is_not SID TEXT: wait (~10 s at most) until session SID's
# token file holds other text than TEXT.
until_token_is_not() {
	ut_i=0
	while [ "$(token "$1")" = "$2" ] && [ "$ut_i" -lt 100 ]; do
		sleep 0.1
		ut_i=$((ut_i + 1))
	done
	[ "$(token "$1")" != "$2" ]
}

test_case 'a waiter sleeps until mail comes, prints it on stderr and exits 2' '
	bind s1 &&
	waiter w1 s1 &&
	until_token_is_not s1 "" &&
	id=$(ping "are you idle?") &&
	exits w1 2 &&
	grep -q "^Pigeon: 1 new message for rita\." w1.err &&
	grep -qx "  are you idle?" w1.err &&
	test ! -s w1.out &&
	sql_is "SELECT count(*), route, session FROM delivery WHERE message_id = $id" \
		"1|stop|claude:s1" &&
	sql_is "SELECT auto_continues FROM session WHERE key = '"'"'claude:s1'"'"'" 1 &&
	grep -q " mode=rewake session=claude:s1 status=woken .* ids=$id " "$LOG"
'

test_case 'two waiters on one session: the newer supersedes the older, which claims nothing' '
	bind s2 &&
	waiter old s2 &&
	until_token_is_not s2 "" && first=$(token s2) &&
	waiter new s2 &&
	until_token_is_not s2 "$first" &&
	exits old 0 &&
	test ! -s old.err &&
	grep -q " mode=rewake session=claude:s2 status=superseded " "$LOG" &&
	id=$(ping "for the newest") &&
	exits new 2 &&
	grep -qx "  for the newest" new.err &&
	sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 1
'

test_case 'a waiter killed with SIGKILL loses nothing: the mail waits for the next one' '
	bind s3 &&
	waiter k s3 &&
	until_token_is_not s3 "" &&
	kill -KILL "$(cat k.pid)" &&
	exits k 137 &&
	id=$(ping "kept for later") &&
	sql_is "SELECT count(*) FROM message WHERE id = $id AND delivered_ms IS NULL" 1 &&
	waiter k2 s3 &&
	exits k2 2 &&
	grep -qx "  kept for later" k2.err &&
	sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 1
'

test_case 'the host gone while it waits: it ends, claiming nothing' '
	bind s4 && spawn_host &&
	waiter g s4 "$(cat host.pid)" &&
	until_token_is_not s4 "" &&
	kill "$(cat host.pid)" &&
	exits g 0 &&
	grep -q " mode=rewake session=claude:s4 status=host-gone " "$LOG" &&
	id=$(ping "nobody home") &&
	sql_is "SELECT count(*) FROM message WHERE id = $id AND delivered_ms IS NULL" 1
'

test_case 'pigeon-hook --rewake is claude Stop only: anything else is a logged misuse, exit 0' '
	expect_code 0 "$HOOK" codex Stop --rewake <stop-s1.json >out 2>err &&
	test ! -s out &&
	grep -q "rewake is Claude Code" err &&
	grep -q "status=bad-args .*--rewake is Claude Code" "$LOG" &&
	CLAUDE_PID= expect_code 0 "$HOOK" claude Stop --rewake <stop-s1.json \
		>out 2>err &&
	test ! -s out && test ! -s err &&
	grep -q "status=bad-env .*no CLAUDE_PID" "$LOG"
'

test_done
