#!/bin/sh
# Acknowledgements and threads (decision 0157): send --ack and its
# bounds, pigeon ack (only the recipient; twice keeps the first; a
# reply acknowledges too), status through queued, delivered,
# acknowledged and overdue, wait --ack, pigeon thread; a Claude hook
# delivering an --ack message with the command to acknowledge it, then,
# past its time, the one reminder (journalled, no second delivery in the
# audit). Bad input: one line, exit 2, nothing stored.
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
mkdir -p "$PROJ" || exit 2 # no repository: the global scope, as the CLI here

# fire start|prompt SID TURN: a Claude payload through the hook (agent bob).
fire() {
	case $1 in
	start) fi_f=01-SessionStart-startup.json fi_e=SessionStart ;;
	*) fi_f=02-UserPromptSubmit-prompt.json fi_e=UserPromptSubmit ;;
	esac
	fixture_payload "$FIX/claude/$fi_f" "$PROJ" "$2" "${3:-}" >in.json &&
	    PIGEON_AGENT=bob "$HOOK" claude "$fi_e" <in.json >out 2>hook.err
}
# ctx: the injected context of ./out ("" if none).
ctx() {
	jq -r '.hookSpecificOutput.additionalContext // empty' out
}
# rows: the message, journal and delivery rows, to show nothing changed.
rows() {
	sql "SELECT count(*), sum(coalesce(acked_ms, 0) > 0) FROM message;
	    SELECT count(*) FROM journal; SELECT count(*) FROM delivery"
}

test_case 'setup: three agents' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon agent add carol >/dev/null
'

test_case 'send --ack stores the time asked; the default is 30 minutes' '
	expect_output "queued #1 for bob" \
	    pigeon send --from alice --to bob --ack "run the migration" &&
	sql_is "SELECT ack_ms, acked_ms IS NULL FROM message WHERE id = 1" \
	    "1800000|1" &&
	pigeon send --from alice --to bob --ack --ack-within 90s "ninety" \
	    >/dev/null &&
	sql_is "SELECT ack_ms FROM message WHERE id = 2" 90000
'

test_case 'a bad --ack-within: one line, exit 2, nothing stored' '
	rows >before &&
	expect_error 2 "--ack-within" pigeon send --from alice --to bob \
	    --ack --ack-within 0s x &&
	expect_error 2 "--ack-within" pigeon send --from alice --to bob \
	    --ack --ack-within 8d x &&
	expect_error 2 "--ack-within" pigeon send --from alice --to bob \
	    --ack --ack-within soon x &&
	expect_error 2 "goes with --ack" pigeon send --from alice --to bob \
	    --ack-within 5m x &&
	rows >after && test_cmp before after
'

test_case 'inbox and status: queued, asking for an acknowledgement' '
	pigeon inbox --agent bob >out &&
	grep -q "^#1 from alice, .*, asks for an acknowledgement$" out &&
	pigeon status 1 >out &&
	grep -q "^#1 alice -> bob: queued since .*; asks for an acknowledgement within 30m of delivery$" out &&
	pigeon status --json 1 | jq -e ".[0] | .state == \"queued\" and
	    .thread == 1 and .ack.within_ms == 1800000 and
	    .ack.acknowledged == null and .ack.overdue == false" >/dev/null
'

test_case 'the hook delivers it with the command to acknowledge' '
	fire start s1 &&
	ctx >ctx.txt &&
	grep -q "^\[#1 from alice, " ctx.txt &&
	grep -q "^\[the sender asks for an acknowledgement within 30m: .*pigeon ack 1 \"TEXT\", or reply with --reply-to 1\]$" ctx.txt &&
	grep -q "^\[the sender asks for an acknowledgement within 90s: " ctx.txt &&
	pigeon status 1 >out &&
	grep -q "delivered .* via session-start, session claude:s1, host claude; awaits an acknowledgement by " out
'

test_case 'only the recipient acknowledges; an unknown id: exit 2, nothing stored' '
	rows >before &&
	expect_error 2 "only its recipient acknowledges it" \
	    pigeon ack --from carol 1 mine &&
	expect_error 2 "no message 99" pigeon ack --from bob 99 &&
	expect_error 2 "not a message id" pigeon ack --from bob x1 &&
	expect_error 2 "name the message" pigeon ack --from bob &&
	rows >after && test_cmp before after
'

test_case 'pigeon ack stores it once; a second keeps the first' '
	expect_output "acknowledged #1 from alice" \
	    pigeon ack --from bob 1 done, all green &&
	pigeon ack --from bob 1 again >out &&
	grep -q "^#1 was already acknowledged at .*: the first acknowledgement is kept$" out &&
	sql_is "SELECT ack_text FROM message WHERE id = 1" "done, all green" &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}acked$SQ" 1 &&
	pigeon status --json 1 | jq -e ".[0] | .state == \"acknowledged\" and
	    .ack.text == \"done, all green\"" >/dev/null
'

test_case 'wait --ack returns at once for an acknowledged message' '
	pigeon wait --ack 1 --timeout 5 >out &&
	grep -q "^#1 alice -> bob: .*; acknowledged .*: done, all green$" out
'

test_case 'wait --ack: exit 3 at its timeout; an unknown id exit 2' '
	expect_code 3 pigeon wait --ack 2 --timeout 1 2>err &&
	grep -q "not acknowledged within 1 s" err &&
	expect_error 2 "no message 77" pigeon wait --ack 77 --timeout 1
'

test_case 'wait --ack wakes when the recipient acknowledges' '
	pigeon wait --ack 2 --timeout 60 >w.out 2>w.err &
	w=$! && bg_track "$w" &&
	pigeon ack --from bob 2 >/dev/null &&
	bg_wait "$w" &&
	grep -q "^#2 alice -> bob: .*; acknowledged " w.out
'

test_case 'past its time the reminder comes once, at the next prompt' '
	pigeon send --from alice --to bob --ack --ack-within 1s "check the build" \
	    >out && id=$(sed -n "s/^queued #\([0-9]*\) for bob$/\1/p" out) &&
	fire prompt s1 t1 && ctx | grep -q "^\[#$id from alice" &&
	sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 1 &&
	# The time asked is 1 s from the delivery: 1.2 s later it is past.
	sleep 1.2 &&
	pigeon status "$id" >out && grep -q "; overdue: no acknowledgement since " out &&
	pigeon status --json "$id" | jq -e ".[0].state == \"overdue\"" >/dev/null &&
	fire prompt s1 t2 &&
	ctx >ctx.txt &&
	grep -q "^Pigeon: reminder: 1 message for bob asked for an acknowledgement that is overdue" ctx.txt &&
	grep -q "^\[reminder\] \[#$id from alice, " ctx.txt &&
	grep -q "^  check the build$" ctx.txt &&
	sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 1 &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}reminded$SQ AND message_id = $id AND detail = ${SQ}prompt$SQ" 1 &&
	pigeon journal bob | grep -q "reminded  #$id from alice via prompt: its acknowledgement is overdue$" &&
	fire prompt s1 t3 && ! ctx | grep -q reminder &&
	pigeon status "$id" | grep -q ", reminded "
'

test_case 'a reply from the recipient acknowledges; the thread names it' '
	pigeon send --from bob --to alice --reply-to 3 "fixed it" >out &&
	r=$(sed -n "s/^queued #\([0-9]*\) for alice$/\1/p" out) &&
	pigeon status 3 | grep -q "; acknowledged .* by reply #$r$" &&
	pigeon send --from alice --to bob --reply-to "$r" "thanks" >/dev/null &&
	pigeon inbox --agent alice | grep -q "^#$r from bob, .*, re #3$" &&
	pigeon inbox --agent bob | grep -q "^#[0-9]* from alice, .*, re #$r, thread #3$" &&
	pigeon thread "$r" >out &&
	sed -n 1p out | grep -q "^thread #3: 3 messages$" &&
	grep -q "^#3 alice -> bob: delivered .*; acknowledged .* by reply #$r$" out &&
	grep -q "^#$r bob -> alice re #3: queued" out &&
	grep -q "^#[0-9]* alice -> bob re #$r, thread #3: queued" out &&
	grep -q "^    fixed it$" out &&
	pigeon thread --json 3 | jq -e "length == 3 and .[0].id == 3 and
	    .[1].reply_to == 3 and all(.[]; .thread == 3) and
	    .[0].state == \"acknowledged\" and .[0].ack.reply == $r" >/dev/null
'

test_case 'inside its session the agent acknowledges as itself (0134)' '
	pigeon send --from alice --to bob --ack "via the session" >out &&
	id=$(sed -n "s/^queued #\([0-9]*\) for bob$/\1/p" out) &&
	rows >before &&
	PIGEON_SESSION=claude:s1 expect_error 2 "sends as its agent ${SQ}bob${SQ}" \
	    pigeon ack --from carol "$id" &&
	rows >after && test_cmp before after &&
	PIGEON_SESSION=claude:s1 PIGEON_AGENT=carol pigeon ack "#$id" seen >out &&
	grep -q "^acknowledged #$id from alice$" out &&
	sql_is "SELECT ack_text FROM message WHERE id = $id" seen
'

test_case 'thread and status of bad ids: exit 2' '
	expect_error 2 "no message 99" pigeon thread 99 &&
	expect_error 2 "not a message id" pigeon thread abc &&
	expect_error 2 "unexpected argument" pigeon thread 1 2
'

test_case 'the audit names each delivery'"'"'s thread' '
	pigeon read --agent alice >/dev/null &&
	pigeon read --agent bob >/dev/null &&
	pigeon audit --json | jq -e "all(.[]; .thread != null) and
	    any(.[]; .reply_to == 3 and .thread == 3)" >/dev/null &&
	pigeon audit >out && grep -q " re #[0-9]*, thread #3, " out
'

test_case 'an urgent reminder is marked urgent, as its delivery was' '
	pigeon send --from alice --to bob --ack --priority urgent "roll it back" \
	    >out && id=$(sed -n "s/^queued #\([0-9]*\) for bob$/\1/p" out) &&
	fire prompt s1 t4 && ctx | grep -q "^\[URGENT #$id from alice" &&
	# Past its time: delivered an hour ago, asked within 30 minutes.
	sql "UPDATE message SET delivered_ms = delivered_ms - 3600000 WHERE id = $id" &&
	# The reminder due time on the agent row moves with it (0161).
	sql "UPDATE agent SET remind_ms = remind_ms - 3600000 WHERE id = (SELECT recipient_id FROM message WHERE id = $id)" &&
	pigeon status "$id" | grep -q "^#$id alice -> bob, urgent: delivered .*; overdue" &&
	fire prompt s1 t5 &&
	ctx | grep -q "^\[reminder\] \[URGENT #$id from alice, "
'

test_done
