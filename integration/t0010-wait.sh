#!/bin/sh
# pigeon wait, send --wait-reply and status: a timeout exits 3 (and its
# bounds), a wait takes only matching mail and leaves the rest queued,
# wakes when mail comes, two waiters never get the same message, waiting
# costs at most 10 wake-ups a second, signals and a replaced database end
# it; send --wait-reply gets the reply another process sends; status
# says where each message stands (queued, delivered, unknown), --json
# exactly.
. "$(dirname "$0")/lib.sh"

# waiting PID: wait (up to a minute) until PID is past its first look and
# asleep on its watch of the database (it holds an inotify descriptor).
waiting() {
	w_i=0
	while [ "$w_i" -lt 600 ]; do
		for w_fd in "/proc/$1/fd"/*; do
			case $(readlink "$w_fd" 2>/dev/null) in
			*inotify*)
				grep -q '^State:.*S' "/proc/$1/status" &&
				    return 0 ;;
			esac
		done
		sleep 0.1
		w_i=$((w_i + 1))
	done
	echo "error: process $1 is not waiting after 60 s" >&9
	return 1
}
# polls PID S: "COUNT MS": the times PID woke from poll() while strace
# watched it for about S seconds, and the milliseconds watched (the count
# is the wait's own, whatever else the machine's scheduler does).
polls() {
	rm -f polls.out
	p_t0=$(date +%s%N)
	strace -qq -e trace=poll,ppoll -o polls.out -p "$1" &
	p_st=$!
	sleep "$2"
	kill -INT "$p_st"
	wait "$p_st"
	p_t1=$(date +%s%N)
	echo "$(grep -c poll polls.out) $(((p_t1 - p_t0) / 1000000))"
}
# iso MS-COLUMN: the SQL for a stored time as the CLI shows it.
iso() {
	echo "strftime('%Y-%m-%dT%H:%M:%SZ', $1 / 1000, 'unixepoch')"
}
# busy_writer S: send to alice as fast as one process can, for S seconds,
# reading her mail now and then to stay under one sender's share of the
# pending cap.
busy_writer() {
	bw_end=$(($(date +%s) + $1))
	bw_n=0
	while [ "$(date +%s)" -lt "$bw_end" ]; do
		pigeon send --to alice --from bob busy >/dev/null || return 1
		bw_n=$((bw_n + 1))
		[ $((bw_n % 50)) -ne 0 ] || pigeon read --agent alice >/dev/null ||
		    return 1
	done
}
queued_ids() {
	sql "SELECT group_concat(id, ' ') FROM
	    (SELECT id FROM message WHERE delivered_ms IS NULL ORDER BY id)"
}

test_case 'setup: agents alice and bob' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null
'

test_case 'a wait with nothing coming exits 3 after its timeout' '
	t0=$(date +%s) &&
	expect_error 3 "no matching message for bob within 1 s: wait longer with --timeout S (at most 3600)" \
		pigeon wait --agent bob --timeout 1 &&
	test $(($(date +%s) - t0)) -le 3 &&
	sql_is "SELECT count(*) FROM delivery" 0
'

test_case '--timeout takes 1 to 3600 seconds' '
	expect_error 2 "--timeout ${SQ}0${SQ}: seconds from 1 to 3600" \
		pigeon wait --agent bob --timeout 0 &&
	expect_error 2 "--timeout ${SQ}3601${SQ}: seconds from 1 to 3600" \
		pigeon wait --agent bob --timeout 3601 &&
	expect_error 2 "--timeout ${SQ}1.5${SQ}" \
		pigeon wait --agent bob --timeout 1.5 &&
	expect_error 2 "--timeout ${SQ}3601${SQ}" \
		pigeon send --to bob --from alice --wait-reply --timeout 3601 x &&
	pigeon send --to bob --from alice "already there" >/dev/null &&
	pigeon wait --agent bob --timeout 3600 >out &&
	grep -q "^    already there$" out
'

test_case 'bad input exits 2: no agent, an unknown one, a bad id' '
	expect_error 2 "which agent? name it with --agent NAME or PIGEON_AGENT" \
		pigeon wait &&
	expect_error 2 "no agent ${SQ}carol${SQ}" \
		pigeon wait --agent carol --timeout 1 &&
	expect_error 2 "--reply-to ${SQ}x${SQ}: not a message id" \
		pigeon wait --agent bob --reply-to x &&
	expect_error 2 "unexpected argument" pigeon wait --agent bob extra
'

test_case 'wait --from takes that sender'"'"'s mail; the rest stays queued' '
	sql "UPDATE message SET delivered_ms = 1 WHERE delivered_ms IS NULL" &&
	a=$(pigeon send --to bob --from alice "from alice" --json | jq .[0].id) &&
	c=$(pigeon send --to bob --from carol "from carol" --json | jq .[0].id) &&
	PIGEON_AGENT=bob pigeon wait --from CAROL --timeout 2 >out &&
	grep -q "^#$c from carol, .*s ago$" out &&
	grep -qx "    from carol" out &&
	test "$(queued_ids)" = "$a" &&
	sql_is "SELECT route, recipient FROM delivery WHERE message_id = $c" \
		"cli|bob" &&
	expect_code 3 pigeon wait --agent bob --from carol --timeout 1 2>/dev/null &&
	test "$(queued_ids)" = "$a"
'

test_case 'wait --reply-to takes only the reply to that id' '
	q=$(pigeon send --to bob --from alice "question" --json | jq .[0].id) &&
	pigeon send --to alice --from bob "not a reply" >/dev/null &&
	r=$(pigeon send --to alice --from bob --reply-to "$q" "the answer" \
		--json | jq .[0].id) &&
	pigeon wait --agent alice --reply-to "$q" --timeout 2 >out &&
	head -n 1 out | grep -q "^#$r from bob, .*, re #$q$" &&
	sql_is "SELECT count(*) FROM message m JOIN agent a
		ON a.id = m.recipient_id
		WHERE a.name = ${SQ}alice${SQ} AND m.delivered_ms IS NULL" 1
'

test_case 'wait --reply-to: a reply from a third agent does not end the wait' '
	sql "UPDATE message SET delivered_ms = 1 WHERE delivered_ms IS NULL" &&
	q=$(pigeon send --to bob --from alice "merge it?" --json | jq .[0].id) &&
	f=$(pigeon send --to alice --from mallory --reply-to "$q" "yes, merge" \
		--json | jq .[0].id) &&
	expect_code 3 pigeon wait --agent alice --reply-to "$q" --timeout 1 \
		>out 2>err &&
	expect_empty out &&
	expect_one_error err "no matching message for alice within 1 s" &&
	expect_error 2 "message $q went to ${SQ}bob${SQ}: a reply to it comes from ${SQ}bob${SQ}, not ${SQ}mallory${SQ}" \
		pigeon wait --agent alice --reply-to "$q" --from mallory &&
	r=$(pigeon send --to alice --from bob --reply-to "$q" "not yet" \
		--json | jq .[0].id) &&
	pigeon wait --agent alice --reply-to "$q" --timeout 2 >out &&
	head -n 1 out | grep -q "^#$r from bob, .*, re #$q$" &&
	test "$(queued_ids)" = "$q $f" &&
	sql_is "SELECT count(*) FROM delivery WHERE message_id = $f" 0
'

test_case 'wait --reply-to a message the scope does not hold: exit 2 at once' '
	expect_error 2 "no message 9999 in scope ${SQ}global${SQ} to wait for a reply to: check the id with pigeon status 9999" \
		pigeon wait --agent alice --reply-to 9999 --timeout 60
'

test_case 'wait --json prints what it claimed as read --json does' '
	sql "UPDATE message SET delivered_ms = 1 WHERE delivered_ms IS NULL" &&
	id=$(pigeon send --to bob --from alice --reply-to 1 "a \"quoted\" body" \
		--json | jq .[0].id) &&
	pigeon wait --agent bob --json --timeout 2 >out &&
	created=$(sql "SELECT $(iso created_ms) FROM message WHERE id = $id") &&
	printf "%s\n" "[{\"id\":$id,\"from\":\"alice\",\"to\":\"bob\",\"created\":\"$created\",\"reply_to\":1,\"thread\":1,\"ack_within_ms\":null,\"body\":\"a \\\"quoted\\\" body\",\"priority\":\"normal\",\"group\":null}]" >want &&
	test_cmp want out
'

test_case 'a wait wakes when mail comes, and claims it' '
	{ pigeon wait --agent bob --timeout 20 >out 2>err & } &&
	pid=$! &&
	bg_track $pid &&
	waiting $pid &&
	pigeon send --to bob --from alice "you waited" >/dev/null &&
	bg_wait $pid &&
	expect_empty err &&
	grep -qx "    you waited" out &&
	test "$(queued_ids)" = ""
'

test_case 'two waiters on one agent, two messages: one each' '
	{ pigeon wait --agent bob --timeout 20 --json >w1 2>e1 & } &&
	p1=$! &&
	bg_track $p1 &&
	{ pigeon wait --agent bob --timeout 20 --json >w2 2>e2 & } &&
	p2=$! &&
	bg_track $p2 &&
	waiting $p1 && waiting $p2 &&
	pigeon send --to bob --from alice "first" >/dev/null &&
	pigeon send --to bob --from alice "second" >/dev/null &&
	bg_wait $p1 && bg_wait $p2 &&
	expect_empty e1 && expect_empty e2 &&
	test "$(jq length w1)" = 1 && test "$(jq length w2)" = 1 &&
	jq -r ".[0].body" w1 w2 | sort >bodies &&
	printf "first\nsecond\n" >want &&
	test_cmp want bodies &&
	i1=$(jq ".[0].id" w1) && i2=$(jq ".[0].id" w2) &&
	sql_is "SELECT count(*) FROM delivery WHERE message_id IN ($i1, $i2)" 2 &&
	test "$(queued_ids)" = ""
'

test_case 'waiting costs at most 10 wake-ups a second, idle or busy' '
	{ pigeon wait --agent bob --from carol --timeout 60 >out 2>err & } &&
	pid=$! &&
	bg_track $pid &&
	waiting $pid &&
	set -- $(polls $pid 5) &&
	idle=$1 idle_ms=$2 &&
	{ busy_writer 7 & } &&
	writer=$! &&
	sleep 1 &&
	n2=$(sql "SELECT count(*) FROM message") &&
	set -- $(polls $pid 5) &&
	busy=$1 busy_ms=$2 &&
	n3=$(sql "SELECT count(*) FROM message") &&
	wait $writer &&
	kill -TERM $pid &&
	expect_code 143 bg_wait $pid &&
	test_note "wake-ups: idle $idle in $idle_ms ms," \
	    "with $((n3 - n2)) sends $busy in $busy_ms ms" &&
	test "$idle" -le $((idle_ms / 1000 + 3)) &&
	test "$busy" -le $((busy_ms / 100 + 3))
'

test_case 'SIGINT and SIGTERM end a wait at once, quietly' '
	{ pigeon wait --agent bob --timeout 60 >out 2>err & } &&
	pid=$! &&
	bg_track $pid &&
	waiting $pid &&
	t0=$(date +%s) &&
	kill -INT $pid &&
	expect_code 130 bg_wait $pid &&
	test $(($(date +%s) - t0)) -le 1 &&
	expect_empty out && expect_empty err &&
	{ pigeon wait --agent bob --timeout 60 >out 2>err & } &&
	pid=$! &&
	bg_track $pid &&
	waiting $pid &&
	kill -TERM $pid &&
	expect_code 143 bg_wait $pid &&
	expect_empty out && expect_empty err
'

test_case 'a wait leaves when the database is replaced or removed' '
	mkdir -p moved &&
	pigeon agent add --db moved/p.db bob >/dev/null &&
	pigeon agent add --db moved/q.db bob >/dev/null &&
	{ pigeon wait --db moved/p.db --agent bob --timeout 60 >r.out 2>r.err & } &&
	pid=$! &&
	bg_track $pid &&
	waiting $pid &&
	sqlite3 moved/p.db ".backup moved/new.db" &&
	t0=$(date +%s) &&
	mv moved/new.db moved/p.db &&
	{ bg_wait $pid; test $? -eq 1; } &&
	test $(($(date +%s) - t0)) -le 2 &&
	expect_empty r.out &&
	expect_one_error r.err "database ${SQ}moved/p.db${SQ} was replaced or removed since it was opened: run the wait again to wait on the new one" &&
	{ pigeon wait --db moved/q.db --agent bob --timeout 60 >q.out 2>q.err & } &&
	pid=$! &&
	bg_track $pid &&
	waiting $pid &&
	rm moved/q.db &&
	{ bg_wait $pid; test $? -eq 1; } &&
	expect_one_error q.err "was replaced or removed since it was opened"
'

test_case 'setup: a fresh database for send --wait-reply and status' '
	rm -f "$DB" "$DB-wal" "$DB-shm" &&
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null
'

test_case 'send --wait-reply prints the id, then the reply another sends' '
	pigeon send --to bob --from alice --wait-reply --timeout 20 \
		"can you review #1?" >out 2>err &
	pid=$! &&
	bg_track $pid &&
	wait_for out "^queued #1 for bob$" &&
	pigeon send --to alice --from bob "unrelated" >/dev/null &&
	pigeon read --agent bob >/dev/null &&
	pigeon send --to alice --from bob --reply-to 1 "looks good" >/dev/null &&
	bg_wait $pid &&
	expect_empty err &&
	sed -n 1p out | grep -qx "queued #1 for bob" &&
	sed -n 2p out | grep -q "^#3 from bob, .*s ago, re #1$" &&
	sed -n 3p out | grep -qx "    looks good" &&
	test "$(wc -l <out)" = 3 &&
	test "$(queued_ids)" = 2
'

test_case 'send --wait-reply with no reply exits 3; the message stays sent' '
	expect_code 3 env PIGEON_AGENT=alice pigeon send --to bob --wait-reply \
		--timeout 1 "anyone?" >out 2>err &&
	grep -qx "queued #4 for bob" out &&
	expect_one_error err "no matching message for alice within 1 s" &&
	sql_is "SELECT count(*) FROM message WHERE id = 4 AND delivered_ms IS NULL" 1
'

test_case 'send --wait-reply refuses what it cannot wait for, sending nothing' '
	n=$(sql "SELECT count(*) FROM message") &&
	expect_error 2 "--wait-reply waits for one reply: name one recipient with --to NAME" \
		pigeon send --to bob,alice --from alice --wait-reply x &&
	expect_error 2 "--wait-reply waits for one reply" \
		pigeon send --to all --from alice --wait-reply x &&
	expect_error 2 "--wait-reply needs the sender${SQ}s mailbox: name it with --from NAME or PIGEON_AGENT" \
		pigeon send --to bob --wait-reply x &&
	expect_error 2 "no agent ${SQ}dave${SQ}" \
		pigeon send --to bob --from dave --wait-reply x &&
	expect_error 2 "--timeout goes with --wait-reply" \
		pigeon send --to bob --from alice --timeout 5 x &&
	sql_is "SELECT count(*) FROM message" "$n"
'

test_case 'status: queued, delivered (session, host, route), in order' '
	sql "UPDATE delivery SET session = ${SQ}claude:s-1${SQ},
		host = ${SQ}claude${SQ}, route = ${SQ}prompt${SQ}
		WHERE message_id = 1" &&
	pigeon status 4 1 3 >out 2>err &&
	expect_empty err &&
	sed -n 1p out | grep -qE "^#4 alice -> bob: queued since [0-9T:-]+Z \([0-9]+s ago\)$" &&
	sed -n 2p out | grep -qE "^#1 alice -> bob: delivered [0-9T:-]+Z \([0-9]+s ago\) via prompt, session claude:s-1, host claude$" &&
	sed -n 3p out | grep -qE "^#3 bob -> alice re #1: delivered [0-9T:-]+Z \([0-9]+s ago\) via cli$" &&
	test "$(wc -l <out)" = 3 &&
	pigeon status "#2" >out &&
	grep -qE "^#2 bob -> alice: queued since " out
'

test_case 'status --json: an array of objects, exactly' '
	c4=$(sql "SELECT $(iso created_ms) FROM message WHERE id = 4") &&
	c1=$(sql "SELECT $(iso created_ms) FROM message WHERE id = 1") &&
	d1=$(sql "SELECT $(iso delivered_ms) FROM message WHERE id = 1") &&
	pigeon status --json 4 1 >out &&
	printf "%s\n" "[{\"id\":4,\"state\":\"queued\",\"from\":\"alice\",\"to\":\"bob\",\"created\":\"$c4\",\"reply_to\":null,\"delivered\":null,\"route\":null,\"session\":null,\"host\":null,\"woken\":null,\"thread\":4,\"priority\":\"normal\",\"group\":null,\"ack\":null},{\"id\":1,\"state\":\"delivered\",\"from\":\"alice\",\"to\":\"bob\",\"created\":\"$c1\",\"reply_to\":null,\"delivered\":\"$d1\",\"route\":\"prompt\",\"session\":\"claude:s-1\",\"host\":\"claude\",\"woken\":null,\"thread\":1,\"priority\":\"normal\",\"group\":null,\"ack\":null}]" >want &&
	test_cmp want out
'

test_case 'status of an unknown id: the others printed, one line on stderr, exit 2' '
	expect_code 2 pigeon status 4 99 >out 2>err &&
	grep -q "^#4 alice -> bob: queued" out &&
	test "$(wc -l <out)" = 1 &&
	expect_one_error err "no message #99 in scope ${SQ}global${SQ}: check the id with pigeon audit" &&
	expect_code 2 pigeon status 98 4 99 >out 2>err &&
	test "$(wc -l <out)" = 1 &&
	expect_one_error err "no messages #98, #99 in scope ${SQ}global${SQ}: check the ids with pigeon audit" &&
	expect_code 2 pigeon status --json 99 >out 2>err &&
	printf "%s\n" "[{\"id\":99,\"state\":\"unknown\"}]" >want &&
	test_cmp want out &&
	expect_one_error err "no message #99 in scope" &&
	mkdir -p proj/.git &&
	expect_code 2 pigeon status --project proj 4 >out 2>err &&
	expect_empty out &&
	expect_one_error err "no message #4 in scope"
'

test_case 'status: bad ids exit 2; at most 100 ids' '
	expect_error 2 "name at least one message id" pigeon status &&
	expect_error 2 "${SQ}x${SQ}: not a message id" pigeon status 1 x &&
	expect_error 2 "${SQ}0${SQ}: not a message id" pigeon status 0 &&
	expect_error 2 "${SQ}-1${SQ}: not a message id" pigeon status -- -1 &&
	# shellcheck disable=SC2046 # one id a word
	pigeon status $(seq 1 100) >out 2>err
	test $? = 2 &&
	test "$(wc -l <out)" = 4 &&
	expect_one_error err "no messages #5, #6, #7, #8, #9, #10, #11, " &&
	grep -qF "#98, #99, #100 in scope" err &&
	# shellcheck disable=SC2046
	expect_error 2 "at most 100 message ids at once" pigeon status $(seq 1 101)
'

test_done
