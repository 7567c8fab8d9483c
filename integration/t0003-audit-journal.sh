#!/bin/sh
# The audit (newest first, filters, show, --json, verify of the hash
# chain, tampering found) and the journal (entries in order, --json,
# --follow picking up new entries and stopping cleanly on SIGTERM).
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
		\"delivered\",\"from\",\"hash\",\"host\",\"id\",\"message_id\",
		\"reply_to\",\"route\",\"scope\",\"session\",\"to\"])" out &&
	jq -e --arg re "$iso" "all(.[]; (.created | test(\$re)) and
		(.delivered | test(\$re)))" out &&
	jq -c "[.[] | del(.created, .delivered, .hash)] | .[2]" out >actual &&
	echo "{\"id\":2,\"message_id\":2,\"scope\":\"\",\"from\":\"carol\",\"to\":\"bob\",\"reply_to\":1,\"route\":\"cli\",\"host\":\"\",\"session\":\"\",\"bytes\":3,\"body\":\"two\"}" >expect &&
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
	echo "{\"id\":3,\"message_id\":3,\"scope\":\"\",\"from\":\"alice\",\"to\":\"carol\",\"reply_to\":null,\"route\":\"cli\",\"host\":\"\",\"session\":\"\",\"bytes\":5,\"hash\":\"$(hash_of 3)\",\"body\":\"three\"}" >expect &&
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

test_case 'journal --json: an array of entries' '
	pigeon journal --json carol >out &&
	jq -e --arg re "$iso" "all(.[]; .at | test(\$re))" out &&
	jq -c "[.[] | del(.at)]" out >actual &&
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

test_done
