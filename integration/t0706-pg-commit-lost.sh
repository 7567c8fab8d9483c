#!/bin/sh
# A commit whose answer is lost (decision 0127): pg-cutter relays a
# client's connection to the server and drops it right after the
# transaction's COMMIT reached the server ("after": it committed, its
# answer never came back) or right before ("before": it never arrived).
# The client asks the server, on a new connection, what became of the
# transaction: after, the hook shows the mail once and the next prompt
# does not show it again, `pigeon read` prints it once, `pigeon send`
# says queued (and nothing is sent twice); before, nothing is shown or
# delivered, and the next prompt brings the mail. When the cutter also
# removes its socket, the server cannot be asked: the outcome stays
# unknown, and the hook names the ids it held in hook.log (0131). A
# FATAL error in place of the commit's last answer is asked about too.
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
CUTTER=$PGN_BIN/integration/pg-cutter
PROJ=$TEST_DIR/proj
mkdir "$PROJ" "$PROJ/.git" || exit 2
# The server's socket: PGN_TEST_PG names its directory (scripts/test).
SOCK_DIR=$(printf '%s\n' "$PGN_TEST_PG" | sed -n 's/.*host=\([^ ]*\).*/\1/p')
if [ ! -S "$SOCK_DIR/.s.PGSQL.5432" ]; then
	echo "1..0 # SKIP the server is not on a Unix socket: '$SOCK_DIR'"
	exit 77
fi

# payload N: a Claude prompt of session s-N in $PROJ, to in.json.
payload() {
	printf '{"session_id":"s-%s","cwd":"%s","prompt_id":"p-%s-%s","hook_event_name":"UserPromptSubmit","prompt":"hi"}\n' \
	    "$1" "$PROJ" "$1" "$2" >in.json
}

# cutter MODE NAME [MARK]: pg-cutter in MODE on socket directory NAME,
# cutting the connection that sends MARK (default: the delivery's audit
# row) and the COMMIT together.
cutter() {
	mkdir "$TEST_DIR/$2" &&
	"$CUTTER" "$1" "$TEST_DIR/$2" "$SOCK_DIR/.s.PGSQL.5432" \
	    "${3:-INSERT INTO delivery}" "COMMIT" >"$2.out" 2>"$2.err" &
	bg_track $! &&
	i=0 && until [ -S "$TEST_DIR/$2/.s.PGSQL.5432" ]; do
		i=$((i + 1)) && test "$i" -lt 50 || return 1
		sleep 0.1
	done
}

# cut_then_asked NAME: cutter NAME cut a connection, and a new one came
# after it (the client asking what became of its commit).
cut_then_asked() {
	grep -qx cut "$1.out" && sed -n "/^cut\$/,\$p" "$1.out" | grep -qx conn
}

# hook NAME VIA N: the prompt hook of session s-N through conninfo VIA.
hook() {
	PIGEON_AGENT=bob PIGEON_DB=$2 expect_code 0 timeout 10 \
	    "$HOOK" claude UserPromptSubmit <in.json >"$1.json" 2>"$1.err" &&
	expect_empty "$1.err"
}

test_case 'the commit took but its answer was lost: the hook asks, and shows the mail once' '
	(cd "$PROJ" && pigeon agent add bob >/dev/null &&
	    pigeon send --from alice --to bob "PING-LOST-ANSWER") >/dev/null &&
	cutter after cut1 &&
	payload 1 a && hook first "$PG host=$TEST_DIR/cut1" &&
	cut_then_asked cut1 &&
	grep -q "PING-LOST-ANSWER" first.json &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE body = ${SQ}PING-LOST-ANSWER${SQ}" 1 &&
	pg_sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 0 &&
	grep -q "session=claude:s-1 .*status=ok .*delivered=1" "$PIGEON_HOME/hook.log" &&
	payload 1 b && hook again "$PG" &&
	! grep -q "PING-LOST-ANSWER" again.json
'

test_case 'the commit never arrived: nothing is shown, nothing delivered, the next prompt brings it' '
	(cd "$PROJ" && pigeon send --from alice --to bob "PING-LOST-COMMIT") >/dev/null &&
	cutter before cut2 &&
	payload 2 a && hook first2 "$PG host=$TEST_DIR/cut2" &&
	cut_then_asked cut2 &&
	! grep -q "PING-LOST-COMMIT" first2.json &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE body = ${SQ}PING-LOST-COMMIT${SQ}" 0 &&
	! grep -q "session=claude:s-2 .*status=ok" "$PIGEON_HOME/hook.log" &&
	payload 2 b && hook next2 "$PG" &&
	grep -q "PING-LOST-COMMIT" next2.json &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE body = ${SQ}PING-LOST-COMMIT${SQ}" 1
'

test_case 'pigeon read: the commit took but its answer was lost: the mail is printed, once' '
	(cd "$PROJ" && pigeon send --from alice --to bob "PING-LOST-READ") >/dev/null &&
	cutter after cut3 &&
	(cd "$PROJ" && PIGEON_DB="$PG host=$TEST_DIR/cut3" \
	    expect_code 0 pigeon read --agent bob) >read.out 2>read.err &&
	cut_then_asked cut3 &&
	expect_empty read.err &&
	grep -q "PING-LOST-READ" read.out &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE body = ${SQ}PING-LOST-READ${SQ}" 1 &&
	(cd "$PROJ" && pigeon read --agent bob) >read2.out &&
	! grep -q "PING-LOST-READ" read2.out
'

test_case 'pigeon send: the commit took but its answer was lost: it says queued, and sent once' '
	(cd "$PROJ" && pigeon agent add carol >/dev/null) &&
	cutter after cut4 "INSERT INTO journal" &&
	(cd "$PROJ" && PIGEON_DB="$PG host=$TEST_DIR/cut4" \
	    expect_code 0 pigeon send --from carol --to bob PING-LOST-SEND) \
	    >send.out 2>send.err &&
	cut_then_asked cut4 &&
	expect_empty send.err &&
	grep -q "^queued #[0-9]* for bob$" send.out &&
	pg_sql_is "SELECT count(*) FROM message WHERE body = ${SQ}PING-LOST-SEND${SQ}" 1 &&
	pg_sql_is "SELECT id FROM message WHERE body = ${SQ}PING-LOST-SEND${SQ}" \
	    "$(sed -n "s/^queued #\([0-9]*\) .*/\1/p" send.out)"
'

# A backend terminated right after its commit answers the commit and
# then FATAL in place of the Sync's answer; the client may read that
# before the close (CI caught a hook delivering mail it never showed).
test_case 'the commit took and the server then said FATAL: the hook asks, and shows the mail once' '
	(cd "$PROJ" && pigeon send --from alice --to bob "PING-FATAL-AFTER") >/dev/null &&
	cutter fatal cut7 &&
	payload 7 a && hook fatal7 "$PG host=$TEST_DIR/cut7" &&
	cut_then_asked cut7 &&
	grep -q "PING-FATAL-AFTER" fatal7.json &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE body = ${SQ}PING-FATAL-AFTER${SQ}" 1 &&
	grep -q "session=claude:s-7 .*status=ok .*delivered=[1-9]" "$PIGEON_HOME/hook.log" &&
	payload 7 b && hook again7 "$PG" &&
	! grep -q "PING-FATAL-AFTER" again7.json
'

# gone NAME: cutter NAME cut a connection and then removed its socket:
# nobody could ask the server what became of the commit.
gone() {
	grep -qx cut "$1.out" && grep -qx gone "$1.out"
}

# Decision 0131: the outcome stays unknown; the hook names what it held.
test_case 'the commit took, its answer was lost, the server cannot be asked: hook.log names the ids' '
	(cd "$PROJ" && pigeon send --from alice --to bob "PING-UNSURE-TOOK") >/dev/null &&
	id=$(pg_sql "SELECT id FROM message WHERE body = ${SQ}PING-UNSURE-TOOK${SQ}") &&
	cutter after-gone cut5 &&
	payload 5 a && hook unsure5 "$PG host=$TEST_DIR/cut5" &&
	gone cut5 &&
	! grep -q "PING-UNSURE-TOOK" unsure5.json &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 1 &&
	grep "session=claude:s-5 " "$PIGEON_HOME/hook.log" >s5.log &&
	grep -q "status=i/o error .*whether it committed is unknown" s5.log &&
	grep -Eq " status=unsure ms=[0-9]+ ids=([0-9]+,)*$id(,[0-9]+)*: " s5.log &&
	! grep -q "PING-UNSURE-TOOK" "$PIGEON_HOME/hook.log"
'

test_case 'the commit never arrived and the server cannot be asked: the ids are named, the mail stays queued' '
	(cd "$PROJ" && pigeon send --from alice --to bob "PING-UNSURE-LOST") >/dev/null &&
	id=$(pg_sql "SELECT id FROM message WHERE body = ${SQ}PING-UNSURE-LOST${SQ}") &&
	cutter before-gone cut6 &&
	payload 6 a && hook unsure6 "$PG host=$TEST_DIR/cut6" &&
	gone cut6 &&
	! grep -q "PING-UNSURE-LOST" unsure6.json &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 0 &&
	grep -Eq "session=claude:s-6 status=unsure ms=[0-9]+ ids=([0-9]+,)*$id(,[0-9]+)*: " \
		"$PIGEON_HOME/hook.log" &&
	payload 6 b && hook next6 "$PG" &&
	grep -q "PING-UNSURE-LOST" next6.json &&
	pg_sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 1
'

test_done
