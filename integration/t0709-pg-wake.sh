#!/bin/sh
# The doorbell across machines (decision 0210): two state homes on one
# PostgreSQL server, machine a and machine b (PIGEON_MACHINE). bob's
# Claude session is bound on b; `pigeon wake --follow` runs on b. A send
# from a tries no ring on a (a's wake.log stays absent); b's follower
# hears the message and rings for it there (the session is only a
# captured payload, so the ring ends `gone`, logged in b's wake.log
# with the message id, once); a low message reaches no follower. On
# SQLite the command is refused: the sender's machine is the only one.
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures/payloads
SID=e52b9ce3-3606-47c1-ac27-1f671164bf06
mkdir -p a b proj || exit 2

# on M CMD...: run CMD as machine M (its state home and machine id).
on() {
	on_m=$1
	shift
	(cd proj && PIGEON_HOME=$TEST_DIR/$on_m PIGEON_MACHINE=machine-$on_m \
	    "$@")
}

# until_line FILE PATTERN: wait for the line, capped at 60 s (the event
# bounds it; the cap only catches a hang).
until_line() {
	ul_i=0
	until grep -q -e "$2" "$1" 2>/dev/null; do
		ul_i=$((ul_i + 1))
		if [ "$ul_i" -ge 600 ]; then
			echo "error: no '$2' in $1 after 60 s" >&9
			return 1
		fi
		sleep 0.1
	done
}

test_case 'on SQLite pigeon wake is refused: the sender rings' '
	expect_code 1 env PIGEON_DB=$TEST_DIR/one.db pigeon wake >out 2>err ||
		expect_code 2 env PIGEON_DB=$TEST_DIR/one.db pigeon wake >out 2>err
	grep -q "rings from the sending machine" err
'

test_case 'bob is bound on machine b' '
	on b pigeon agent add bob >/dev/null &&
	fixture_payload "$FIX/claude/02-UserPromptSubmit-prompt.json" \
		"$TEST_DIR/proj" "$SID" p1 >prompt.json &&
	on b env PIGEON_AGENT=bob "$HOOK" claude UserPromptSubmit \
		<prompt.json >/dev/null &&
	pg_sql_is "SELECT machine FROM session" machine-b
'

test_case 'a send from machine a is rung on machine b, once' '
	(cd proj && PIGEON_HOME=$TEST_DIR/b PIGEON_MACHINE=machine-b \
	    exec pigeon wake --follow) >follow.out 2>follow.err &
	fpid=$!
	bg_track $fpid
	until_line follow.out "^listening" &&
	on a pigeon send --from alice --to bob --priority low "low" >/dev/null &&
	on a pigeon send --from alice --to bob "normal" >/dev/null &&
	until_line b/wake.log "msg=2 not rung (gone)" &&
	test ! -e a/wake.log &&
	kill -TERM $fpid && bg_wait $fpid &&
	test "$(grep -c "msg=" b/wake.log)" -eq 1 &&
	test ! -s follow.err &&
	pg_sql_is "SELECT count(*) FROM session WHERE rung_ms IS NOT NULL" 0
'

test_done
