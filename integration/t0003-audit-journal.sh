#!/bin/sh
# The audit (newest first, filters, show, --json, verify of the hash
# chain, tampering found) and the journal (entries in order, --json,
# --follow picking up new entries and stopping cleanly on SIGTERM, and
# stopping with an error when the database file is replaced); the newest
# entries with a note for what was cut; a closed stdout ends quietly.
. "$(dirname "$0")/lib.sh"

# heads FILE: the "#N" of each audit entry of a text listing, on one line.
heads() {
	grep "^#" "$1" | cut -d " " -f 1 | tr "\n" " "
}
# kinds FILE: the kind of each entry of a text journal, on one line.
kinds() {
	grep -v "^    " "$1" | cut -d " " -f 2 | tr "\n" " "
}
# hash_of ID [DB]: the stored hash of delivery ID, lower-case hex.
hash_of() {
	sql "SELECT lower(hex(hash)) FROM delivery WHERE id = $1" "${2:-$DB}"
}
iso='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'

test_case 'setup: three agents, four deliveries, the last a second later' '
	for a in alice bob carol; do
		pigeon agent add $a >/dev/null || return 1
	done &&
	pigeon send --to bob --from alice one >/dev/null &&
	pigeon send --to bob --from carol --reply-to 1 two >/dev/null &&
	pigeon read --agent bob >/dev/null &&
	pigeon send --to carol --from alice three >/dev/null &&
	pigeon read --agent carol >/dev/null &&
	t=$(date +%s) &&
	while [ "$(date +%s)" -le "$t" ]; do sleep 0.1; done &&
	echo "@$((t + 1))" >since &&
	pigeon send --to alice --from bob four >/dev/null &&
	pigeon read --agent alice >/dev/null &&
	sql_is "SELECT id, message_id, sender, recipient FROM delivery" \
		"1|1|alice|bob
2|2|carol|bob
3|3|alice|carol
4|4|bob|alice" &&
	sql_is "SELECT count(*) FROM delivery
		WHERE delivered_ms >= 1000 * $(cut -c 2- since)" 1
'

test_case 'audit lists deliveries newest first, each with its body' '
	pigeon audit >out 2>err &&
	expect_empty err &&
	test "$(heads out)" = "#4 #3 #2 #1 " &&
	grep -qE "^#2 [0-9T:-]+Z carol -> bob via cli, message #2 re #1, 3 bytes$" out &&
	grep -qE "^#4 [0-9T:-]+Z bob -> alice via cli, message #4, 4 bytes$" out &&
	sed -n "2p" out | grep -qx "    four" &&
	test "$(grep -c "^    " out)" = 4
'

test_case 'audit filters: --agent, --from, --since, --limit' '
	pigeon audit --agent bob >out && test "$(heads out)" = "#2 #1 " &&
	pigeon audit --agent BOB >out && test "$(heads out)" = "#2 #1 " &&
	pigeon audit --from alice >out && test "$(heads out)" = "#3 #1 " &&
	pigeon audit --agent bob --from carol >out &&
	test "$(heads out)" = "#2 " &&
	pigeon audit --limit 2 >out && test "$(heads out)" = "#4 #3 " &&
	pigeon audit --from alice --limit 1 >out && test "$(heads out)" = "#3 " &&
	pigeon audit --since "$(cat since)" >out && test "$(heads out)" = "#4 " &&
	pigeon audit --since 1h >out && test "$(heads out)" = "#4 #3 #2 #1 " &&
	pigeon audit --since 2000-01-01 >out &&
	test "$(heads out)" = "#4 #3 #2 #1 " &&
	pigeon audit --since "@$(($(date +%s) + 3600))" >out &&
	expect_output "no deliveries" pigeon audit --since "@$(($(date +%s) + 3600))" &&
	expect_output "no deliveries" pigeon audit --agent nobody
'

test_case 'audit --json: newest first, every field, the stored hash' '
	pigeon audit --json >out &&
	jq -e "length == 4 and all(.[]; keys == [\"body\",\"bytes\",\"created\",
		\"delivered\",\"from\",\"group\",\"hash\",\"host\",\"id\",
		\"message_id\",\"priority\",\"reply_to\",\"route\",\"scope\",
		\"session\",\"thread\",\"to\"])" out &&
	jq -e --arg re "$iso" "all(.[]; (.created | test(\$re)) and
		(.delivered | test(\$re)))" out &&
	jq -c "[.[] | del(.created, .delivered, .hash)] | .[2]" out >actual &&
	echo "{\"id\":2,\"message_id\":2,\"scope\":\"\",\"from\":\"carol\",\"to\":\"bob\",\"reply_to\":1,\"thread\":1,\"route\":\"cli\",\"host\":\"\",\"session\":\"\",\"bytes\":3,\"body\":\"two\",\"priority\":\"normal\",\"group\":null}" >expect &&
	test_cmp expect actual &&
	test "$(jq -r "[.[].id] | map(tostring) | join(\" \")" out)" = "4 3 2 1" &&
	for i in 1 2 3 4; do
		test "$(jq -r ".[] | select(.id == $i) | .hash" out)" = \
			"$(hash_of $i)" || return 1
	done &&
	pigeon audit --json --agent nobody >out &&
	echo "[]" >expect && test_cmp expect out
'

test_case 'audit show ID: the full delivery with its hash' '
	pigeon audit show 2 >out 2>err &&
	expect_empty err &&
	head -n 1 out |
	grep -qE "^#2 [0-9T:-]+Z carol -> bob via cli, message #2 re #1, 3 bytes$" &&
	grep -qx "  scope:   global" out &&
	grep -qE "^  sent:    [0-9T:-]+Z$" out &&
	grep -qx "  hash:    $(hash_of 2)" out &&
	test "$(tail -n 1 out)" = "    two" &&
	pigeon audit show --json 3 >out &&
	jq -c "del(.created, .delivered)" out >actual &&
	echo "{\"id\":3,\"message_id\":3,\"scope\":\"\",\"from\":\"alice\",\"to\":\"carol\",\"reply_to\":null,\"thread\":3,\"route\":\"cli\",\"host\":\"\",\"session\":\"\",\"bytes\":5,\"hash\":\"$(hash_of 3)\",\"body\":\"three\",\"priority\":\"normal\",\"group\":null}" >expect &&
	test_cmp expect actual &&
	expect_error 2 "no delivery 99" pigeon audit show 99 &&
	expect_error 2 "no delivery 99" pigeon audit show --json 99
'

test_case 'audit verify: the intact chain, in text and --json' '
	expect_output "audit chain intact: 4 deliveries verified" \
		pigeon audit verify &&
	expect_output "{\"ok\":true,\"rows\":4}" pigeon audit verify --json
'

test_case 'journal NAME: created, delivered, sent, in order, with bodies' '
	pigeon journal bob >out 2>err &&
	expect_empty err &&
	test "$(kinds out)" = "created delivered delivered sent " &&
	grep -qE "^[0-9T:-]+Z created +added$" out &&
	grep -qE "^[0-9T:-]+Z delivered #1 from alice via cli$" out &&
	grep -qE "^[0-9T:-]+Z delivered #2 from carol via cli$" out &&
	grep -qE "^[0-9T:-]+Z sent +#4 to alice$" out &&
	test "$(tail -n 1 out)" = "    four" &&
	pigeon journal ALICE >out &&
	test "$(kinds out)" = "created sent sent delivered "
'

test_case 'journal --json: the entries, and what was cut' '
	pigeon journal --json carol >out &&
	jq -e ".earlier == 0 and .earlier_exact == true" out &&
	jq -e --arg re "$iso" "all(.entries[]; .at | test(\$re))" out &&
	jq -c "[.entries[] | del(.at)]" out >actual &&
	echo "[{\"id\":3,\"kind\":\"created\",\"message_id\":null,\"peer\":\"\",\"detail\":\"added\"},{\"id\":5,\"kind\":\"sent\",\"message_id\":2,\"peer\":\"bob\",\"detail\":\"\",\"body\":\"two\"},{\"id\":9,\"kind\":\"delivered\",\"message_id\":3,\"peer\":\"alice\",\"detail\":\"cli\",\"body\":\"three\"}]" >expect &&
	test_cmp expect actual
'

test_case 'a rename keeps the queue and the journal, and is journalled' '
	pigeon send --to bob --from alice "before the rename" >/dev/null &&
	expect_output "renamed bob to robert" pigeon agent rename Bob Robert &&
	pigeon journal robert >out &&
	test "$(kinds out)" = "created delivered delivered sent renamed " &&
	tail -n 1 out | grep -qE "^[0-9T:-]+Z renamed +bob -> robert$" &&
	expect_error 2 "no agent ${SQ}bob${SQ}" pigeon journal bob &&
	pigeon inbox --agent robert >out &&
	grep -qE "^#5 from alice, " out &&
	pigeon read --json --agent robert >out &&
	jq -e "length == 1 and .[0].to == \"robert\"" out &&
	pigeon audit show 5 | head -n 1 | grep -q "alice -> robert"
'

test_case 'the journal of a removed agent stays readable' '
	expect_output "removed carol" pigeon agent rm carol &&
	pigeon journal carol >out &&
	test "$(kinds out)" = "created sent delivered removed " &&
	pigeon audit --agent carol >out && test "$(heads out)" = "#3 "
'

test_case 'journal --follow picks up new entries, stops on SIGTERM' '
	{ pigeon journal --follow --json robert >follow.out 2>follow.err & } &&
	pid=$! &&
	bg_track $pid &&
	wait_for follow.out "\"kind\":\"renamed\"" &&
	pigeon send --to robert --from alice "while you follow" >/dev/null &&
	pigeon read --agent robert >/dev/null &&
	wait_for follow.out "\"kind\":\"delivered\".*\"body\":\"while you follow\"" &&
	kill -TERM $pid &&
	bg_wait $pid &&
	expect_empty follow.err &&
	jq -e -s "all(.[]; type == \"object\") and
		(map(.id) | length == (unique | length))" follow.out &&
	jq -r .kind follow.out | tr "\n" " " >kinds &&
	echo "created delivered delivered sent renamed delivered delivered " |
		tr -d "\n" | cmp - kinds
'

test_case 'journal -f in text mode prints what is sent while it runs' '
	{ pigeon journal -f alice >follow.out 2>follow.err & } &&
	pid=$! &&
	bg_track $pid &&
	wait_for follow.out "delivered #4 from bob" &&
	pigeon send --to robert --from alice "one more" >/dev/null &&
	wait_for follow.out "sent *#7 to robert" &&
	wait_for follow.out "^    one more$" &&
	kill -TERM $pid &&
	bg_wait $pid &&
	expect_empty follow.err
'

test_case 'audit verify finds an edited row and names it' '
	pigeon read --agent robert >/dev/null &&
	expect_output "audit chain intact: 7 deliveries verified" \
		pigeon audit verify &&
	sqlite3 "$DB" ".backup edited.db" &&
	sql "UPDATE delivery SET body = ${SQ}forged${SQ} WHERE id = 2" edited.db &&
	expect_error 1 "row 2" pigeon audit verify --db edited.db &&
	expect_code 1 pigeon audit verify --json --db edited.db >out 2>err &&
	jq -e ".ok == false and .rows == 1 and .bad == 2 and
		(.error | test(\"row 2\"))" out &&
	expect_one_error err "row 2" &&
	sql "UPDATE delivery SET body = ${SQ}two${SQ} WHERE id = 2" edited.db &&
	expect_output "audit chain intact: 7 deliveries verified" \
		pigeon audit verify --db edited.db &&
	sql "UPDATE delivery SET recipient = ${SQ}eve${SQ} WHERE id = 5" \
		edited.db &&
	expect_error 1 "row 5" pigeon audit verify --db edited.db
'

test_case 'audit verify finds a deleted last row, and a deleted middle row' '
	sqlite3 "$DB" ".backup cut.db" &&
	sql "DELETE FROM delivery WHERE id = (SELECT max(id) FROM delivery)" \
		cut.db &&
	expect_error 1 "deleted" pigeon audit verify --db cut.db &&
	sqlite3 "$DB" ".backup hole.db" &&
	sql "DELETE FROM delivery WHERE id = 3" hole.db &&
	expect_error 1 "row 4" pigeon audit verify --db hole.db &&
	expect_output "audit chain intact: 7 deliveries verified" \
		pigeon audit verify
'

test_case 'journal shows the newest entries last, and says what was cut' '
	pigeon agent add busy >/dev/null &&
	for i in 1 2 3 4 5 6 7; do
		pigeon send --to busy --from alice "m$i" >/dev/null || return 1
	done &&
	pigeon read --agent busy >/dev/null &&
	pigeon journal --limit 3 busy >out 2>err &&
	expect_empty err &&
	test "$(head -n 1 out)" = "(5 earlier entries not shown; use --limit K or --since T)" &&
	test "$(grep -c "^    m" out)" = 3 &&
	test "$(grep "^    " out | tr -d " " | tr "\n" " ")" = "m5 m6 m7 " &&
	pigeon journal --limit 8 busy >out &&
	head -n 1 out | grep -qE "^[0-9T:-]+Z created +added$" &&
	test "$(tail -n 1 out)" = "    m7" &&
	pigeon journal --json --limit 2 busy >out &&
	jq -e ".earlier == 6 and .earlier_exact == true and
		[.entries[].body] == [\"m6\", \"m7\"]" out &&
	pigeon journal --json busy >out &&
	jq -e ".earlier == 0 and (.entries | length) == 8" out
'

test_case 'journal --since: entries at or after T, the cut counted after T' '
	sql "UPDATE journal SET at_ms = 1000 WHERE id IN (SELECT id FROM
		journal WHERE agent_id = (SELECT id FROM agent WHERE
		name = ${SQ}busy${SQ}) ORDER BY id LIMIT 4)" &&
	pigeon journal --since 1h busy >out &&
	test "$(grep "^    " out | tr -d " " | tr "\n" " ")" = "m4 m5 m6 m7 " &&
	! grep -q "earlier" out &&
	pigeon journal --since 1h --limit 1 busy >out &&
	test "$(head -n 1 out)" = "(3 earlier entries not shown; use --limit K or --since T)" &&
	pigeon journal --since @2 --json busy >out &&
	jq -e ".earlier == 0 and (.entries | length) == 4" out &&
	pigeon journal --since "@$(($(date +%s) + 60))" --json busy >out &&
	jq -e ".earlier == 0 and .entries == []" out
'

test_case 'journal refuses a bad --limit or --since' '
	expect_error 2 "--limit ${SQ}0${SQ}: a number from 1 to 10000" \
		pigeon journal --limit 0 busy &&
	expect_error 2 "--limit ${SQ}10001${SQ}" pigeon journal --limit 10001 busy &&
	expect_error 2 "--limit ${SQ}x${SQ}" pigeon journal --limit x busy &&
	pigeon journal --limit 10000 busy >/dev/null &&
	expect_error 2 "--since ${SQ}soon${SQ}: not a time" \
		pigeon journal --since soon busy
'

test_case 'journal --follow --since starts after T, then follows' '
	{ pigeon journal -f --json --since "@$(($(date +%s) + 60))" busy \
		>follow.out 2>follow.err & } &&
	pid=$! &&
	bg_track $pid &&
	sleep 0.5 &&
	pigeon send --to busy --from alice "late" >/dev/null &&
	pigeon read --agent busy >/dev/null &&
	wait_for follow.out "\"body\":\"late\"" &&
	kill -TERM $pid &&
	bg_wait $pid &&
	expect_empty follow.err &&
	test "$(wc -l <follow.out)" = 1
'

test_case 'journal --follow says so and exits 1 when pigeon.db is replaced' '
	mkdir -p moved && pigeon agent add --db moved/p.db fol >/dev/null &&
	{ timeout 20 pigeon journal -f --db moved/p.db fol >follow.out \
		2>follow.err & } &&
	pid=$! &&
	bg_track $pid &&
	wait_for follow.out "created" &&
	sqlite3 moved/p.db ".backup moved/new.db" &&
	mv moved/new.db moved/p.db &&
	{ bg_wait $pid; test $? -eq 1; } &&
	expect_one_error follow.err "was replaced or removed since it was opened" &&
	grep -q "moved/p.db" follow.err
'

test_case 'a closed stdout ends audit, journal and read quietly' '
	pigeon agent add reader >/dev/null &&
	body=$(repeat 4000 y) &&
	for i in $(seq 1 40); do
		pigeon send --to reader --from alice "$body" >/dev/null ||
			return 1
	done &&
	pigeon read --agent reader >/dev/null &&
	{ pigeon audit --limit 10000 2>err; echo $? >rc; } | head -n 1 >/dev/null &&
	expect_empty err && test "$(cat rc)" = 141 &&
	{ pigeon journal --limit 10000 reader 2>err; echo $? >rc; } |
		head -n 1 >/dev/null &&
	expect_empty err && test "$(cat rc)" = 141
'

test_case 'a real write error is one line and exit 1' '
	test -w /dev/full || { test_note "no /dev/full: skipped"; return 0; }
	expect_code 1 pigeon audit >/dev/full 2>err &&
	expect_one_error err "cannot write output: No space left on device" &&
	expect_code 1 pigeon journal reader >/dev/full 2>err &&
	expect_one_error err "No space left on device"
'

test_done
