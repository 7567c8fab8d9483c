#!/bin/sh
# Exactly once under contention: 8 claimer processes loop on `pigeon read`
# while 4 sender processes queue 600 messages for the same agent. Every
# message is claimed once (no duplicate, no loss), audited once and
# journalled once, no process fails and no "database is locked" reaches
# anyone. Then the same race with a deliberately broken claimer (read,
# then update, no transaction) must produce duplicates: the test can fail.
. "$(dirname "$0")/lib.sh"

CLAIMERS=8
SENDERS=4
PER_SENDER=150
TOTAL=$((SENDERS * PER_SENDER))
RACERS=8
RACY_QUEUE=300

# claimer I: claim bob's mail until the senders are done and the queue
# is empty. Each output (a JSON array) is appended to claimer.I.json.
claimer() {
	while :; do
		# Sampled before the read: if every sender had finished then,
		# an empty read means the queue is empty for good.
		done_before=0
		[ -e senders.done ] && done_before=1
		out=$(pigeon read --agent bob --json 2>>"claimer.$1.err")
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "pigeon read exited $rc" >>"claimer.$1.fail"
			return
		fi
		printf '%s\n' "$out" >>"claimer.$1.json"
		[ "$out" = "[]" ] && [ "$done_before" = 1 ] && return
	done
}

# sender I: queue PER_SENDER messages for bob, from agent sI.
sender() {
	k=1
	while [ "$k" -le "$PER_SENDER" ]; do
		pigeon send --to bob --from "s$1" "message $k of s$1" \
			>>"sender.$1.out" 2>>"sender.$1.err" ||
			echo "pigeon send $k exited $?" >>"sender.$1.fail"
		k=$((k + 1))
	done
}

# racer I: the broken claimer in a loop, from the start signal until it
# finds nothing.
racer() {
	while [ ! -e go ]; do sleep 0.01; done
	while :; do
		out=$(racy-claimer "$DB" eve 2>>"racer.$1.err") || {
			echo "racy-claimer exited $?" >>"racer.$1.fail"
			return
		}
		[ -z "$out" ] && return
		printf '%s\n' "$out" >>"racer.$1.ids"
	done
}

test_case 'setup: bob, eve and four senders' '
	test -x "$RACY_BIN" &&
	for a in bob eve s1 s2 s3 s4; do
		pigeon agent add $a >/dev/null || return 1
	done
'

test_case "$CLAIMERS claimers and $SENDERS senders run to completion" '
	start=$(date +%s) &&
	i=1 && cpids= &&
	while [ $i -le $CLAIMERS ]; do
		: >claimer.$i.err && : >claimer.$i.json &&
		{ claimer $i & } &&
		cpids="$cpids $!" && bg_track $! &&
		i=$((i + 1))
	done &&
	i=1 && spids= &&
	while [ $i -le $SENDERS ]; do
		: >sender.$i.err &&
		{ sender $i & } &&
		spids="$spids $!" && bg_track $! &&
		i=$((i + 1))
	done &&
	for p in $spids; do bg_wait $p || return 1; done &&
	: >senders.done &&
	for p in $cpids; do bg_wait $p || return 1; done &&
	test_note "$TOTAL messages sent and claimed in $(($(date +%s) - start)) s" &&
	cat claimer.*.json | jq -r ".[].id" >claimed &&
	test_note "$(grep -c -v "^\[\]$" claimer.*.json | tr "\n" " ")" \
		"non-empty reads per claimer"
'

test_case 'every process exited 0' '
	for f in claimer.*.fail sender.*.fail; do
		test ! -e "$f" || { cat "$f"; return 1; }
	done &&
	test "$(cat sender.*.out | wc -l)" = $TOTAL
'

test_case 'no stderr output at all, and never "database is locked"' '
	! grep -i "database is locked" claimer.*.err sender.*.err &&
	for f in claimer.*.err sender.*.err; do
		expect_empty "$f" || return 1
	done
'

test_case 'no message was claimed twice' '
	sort -n claimed | uniq -d >dups &&
	expect_empty dups
'

test_case 'no message was lost: the claimed ids are all the message ids' '
	sort -n claimed >claimed.sorted &&
	sql "SELECT id FROM message ORDER BY id" >all &&
	test "$(wc -l <all)" = $TOTAL &&
	test_cmp all claimed.sorted &&
	sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 0 &&
	expect_output "[]" pigeon inbox --json --agent bob
'

test_case 'what was sent is what was claimed' '
	cat claimer.*.json | jq -r ".[] | \"\(.id) \(.from) \(.body)\"" |
		sort -n >claimed.rows &&
	sql "SELECT id || ${SQ} ${SQ} || sender || ${SQ} ${SQ} || body
		FROM message ORDER BY id" >sent.rows &&
	test_cmp sent.rows claimed.rows &&
	sql_is "SELECT sender, count(*) FROM message GROUP BY sender" \
		"s1|$PER_SENDER
s2|$PER_SENDER
s3|$PER_SENDER
s4|$PER_SENDER"
'

test_case 'one delivery row and one journal entry of each kind per message' '
	sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" \
		"$TOTAL|$TOTAL" &&
	sql_is "SELECT count(*) FROM message m LEFT JOIN delivery d
		ON d.message_id = m.id WHERE d.id IS NULL" 0 &&
	sql_is "SELECT kind, count(*), count(DISTINCT message_id) FROM journal
		WHERE kind IN (${SQ}sent${SQ}, ${SQ}delivered${SQ})
		GROUP BY kind ORDER BY kind" "delivered|$TOTAL|$TOTAL
sent|$TOTAL|$TOTAL"
'

test_case 'the audit chain verifies and the database is intact' '
	expect_output "audit chain intact: $TOTAL deliveries verified" \
		pigeon audit verify &&
	sql_is "PRAGMA integrity_check" ok
'

test_case "the broken claimer, $RACERS at once: duplicates (the test has teeth)" '
	sql "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n
		WHERE x < $RACY_QUEUE)
		INSERT INTO message(scope_id, sender, recipient_id, body,
			created_ms)
		SELECT a.scope_id, ${SQ}user${SQ}, a.id, ${SQ}racy ${SQ} || x,
			0 FROM n, agent a WHERE a.name = ${SQ}eve${SQ}" &&
	i=1 && rpids= &&
	while [ $i -le $RACERS ]; do
		: >racer.$i.ids &&
		{ racer $i & } &&
		rpids="$rpids $!" && bg_track $! &&
		i=$((i + 1))
	done &&
	: >go &&
	for p in $rpids; do bg_wait $p || return 1; done &&
	for f in racer.*.fail; do
		test ! -e "$f" || { cat "$f"; return 1; }
	done &&
	cat racer.*.ids | sort -n | uniq -d >racy.dups &&
	test_note "racy-claimer: $(wc -l <racy.dups) of $RACY_QUEUE ids" \
		"claimed more than once" &&
	test -s racy.dups
'

test_done
