#!/bin/sh
# send, inbox, read and agents as a user runs them: the happy paths, the
# output shapes (text and --json) and what each leaves in the database.
. "$(dirname "$0")/lib.sh"

queued() {	# queued messages in the database
	sql "SELECT count(*) FROM message WHERE delivered_ms IS NULL"
}
kinds() {	# journal rows by kind, "kind|count" sorted
	sql "SELECT kind, count(*) FROM journal GROUP BY kind ORDER BY kind"
}
iso='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'

test_case 'agent add creates case-folded names in a new 0600 database' '
	test ! -e "$DB" &&
	expect_output "added alice" pigeon agent add Alice &&
	expect_output "added bob" pigeon agent add bob 2>err &&
	expect_empty err &&
	expect_output "added carol" pigeon agent add CaRoL &&
	test "$(stat -c %a "$DB")" = 600 &&
	sql_is "SELECT name FROM agent ORDER BY id" "alice
bob
carol" &&
	sql_is "SELECT count(*) FROM scope" 1 &&
	kinds >actual && echo "created|3" >expect && test_cmp expect actual
'

test_case 'send takes the body from its arguments, joined by spaces' '
	expect_output "queued #1 for bob" \
		pigeon send --to bob --from alice hello "  spaced" there 2>err &&
	expect_empty err &&
	sql_is "SELECT sender, body, reply_to IS NULL, delivered_ms IS NULL
		FROM message WHERE id = 1" "alice|hello   spaced there|1|1" &&
	test "$(queued)" = 1 &&
	sql_is "SELECT count(*) FROM delivery" 0
'

test_case 'send - reads stdin and strips the trailing newline' '
	echo "from stdin" >in &&
	expect_output "queued #2 for bob" \
		pigeon send --to bob --from alice - <in &&
	printf "two\nlines\n" | pigeon send --to bob --from alice - >out &&
	echo "queued #3 for bob" >expect && test_cmp expect out &&
	sql_is "SELECT hex(body) FROM message WHERE id IN (2, 3) ORDER BY id" \
		"66726F6D20737464696E
74776F0A6C696E6573"
'

test_case 'send with no TEXT reads stdin' '
	printf "no dash\n" | pigeon send --to bob --from alice >out &&
	echo "queued #4 for bob" >expect && test_cmp expect out &&
	sql_is "SELECT body FROM message WHERE id = 4" "no dash"
'

test_case 'UTF-8 text round-trips byte for byte' '
	printf "h\303\251llo \342\234\223 \360\237\220\246" >body &&
	pigeon send --to bob --from alice "$(cat body)" >out &&
	echo "queued #5 for bob" >expect && test_cmp expect out &&
	sql "SELECT body FROM message WHERE id = 5" >actual &&
	cat body >expect && echo >>expect && test_cmp expect actual
'

test_case 'send --json prints [{id, to}]' '
	expect_output "[{\"id\":6,\"to\":\"bob\"}]" \
		pigeon send --json --to bob --from alice "as json" &&
	test "$(queued)" = 6
'

# ageless FILE: an inbox listing without its ages ("3s ago"), which tick
# on between two listings on a slow machine.
ageless() {
	sed -E 's/, [0-9]+[a-z]+ ago$/, (age)/' "$1"
}

test_case 'inbox lists the queue oldest first and claims nothing' '
	pigeon inbox --agent bob >out 2>err &&
	expect_empty err &&
	grep "^#" out >heads &&
	test "$(wc -l <heads)" = 6 &&
	head -n 1 heads | grep -qE "^#1 from alice, [0-9]+s ago$" &&
	grep -qx "    hello   spaced there" out &&
	grep -qx "    two" out && grep -qx "    lines" out &&
	pigeon inbox --agent bob >again &&
	ageless out >out.a && ageless again >again.a && test_cmp out.a again.a &&
	test "$(queued)" = 6 &&
	sql_is "SELECT count(*) FROM delivery" 0 &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}delivered${SQ}" 0
'

test_case 'inbox --json: an array of {id, from, to, created, reply_to, thread, ack_within_ms, body, priority, group}' '
	pigeon inbox --json --agent bob >out &&
	jq -e "length == 6 and
		all(.[]; keys == [\"ack_within_ms\",\"body\",\"created\",
			\"from\",\"group\",\"id\",\"priority\",\"reply_to\",
			\"thread\",\"to\"])" out &&
	jq -e --arg re "$iso" "all(.[]; .created | test(\$re))" out &&
	jq -c "[.[] | del(.created)] | .[0]" out >actual &&
	echo "{\"id\":1,\"from\":\"alice\",\"to\":\"bob\",\"reply_to\":null,\"thread\":1,\"ack_within_ms\":null,\"body\":\"hello   spaced there\",\"priority\":\"normal\",\"group\":null}" >expect &&
	test_cmp expect actual &&
	test "$(jq -r ".[].id" out | tr "\n" " ")" = "1 2 3 4 5 6 " &&
	test "$(queued)" = 6
'

test_case 'read claims every queued message, then prints "no messages"' '
	pigeon read --agent bob >out 2>err &&
	expect_empty err &&
	test "$(grep -c "^#" out)" = 6 &&
	grep -qE "^#6 from alice, [0-9]+s ago$" out &&
	grep -qx "    as json" out &&
	test "$(queued)" = 0 &&
	sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" "6|6" &&
	sql_is "SELECT DISTINCT route, host, session FROM delivery" "cli||" &&
	expect_output "no messages to read for bob" pigeon read --agent bob &&
	expect_output "no messages queued for bob" pigeon inbox --agent bob &&
	sql_is "SELECT count(*) FROM delivery" 6 &&
	kinds >actual &&
	printf "created|3\ndelivered|6\nsent|6\n" >expect && test_cmp expect actual
'

test_case 'read --json: the claimed messages; then []' '
	pigeon send --to bob --from carol first >/dev/null &&
	pigeon send --to bob --from carol second >/dev/null &&
	pigeon read --json --agent bob >out &&
	jq -c "[.[] | del(.created)]" out >actual &&
	echo "[{\"id\":7,\"from\":\"carol\",\"to\":\"bob\",\"reply_to\":null,\"thread\":7,\"ack_within_ms\":null,\"body\":\"first\",\"priority\":\"normal\",\"group\":null},{\"id\":8,\"from\":\"carol\",\"to\":\"bob\",\"reply_to\":null,\"thread\":8,\"ack_within_ms\":null,\"body\":\"second\",\"priority\":\"normal\",\"group\":null}]" >expect &&
	test_cmp expect actual &&
	expect_output "[]" pigeon read --json --agent bob &&
	expect_output "[]" pigeon inbox --json --agent bob &&
	sql_is "SELECT count(*) FROM delivery" 8
'

test_case 'agents: a table, and --json [{name, hosts, sessions, last_seen, queued}]' '
	pigeon send --to carol --from bob "for carol" >/dev/null &&
	pigeon agents >out &&
	head -n 1 out | grep -qE "^NAME +HOSTS +SESSIONS +LAST SEEN +QUEUED$" &&
	grep -qE "^alice +- +0 +never +0$" out &&
	grep -qE "^bob +- +0 +[0-9]+s ago +0$" out &&
	grep -qE "^carol +- +0 +never +1$" out &&
	pigeon agents --json >json &&
	jq -e --arg re "$iso" ".[1].last_seen | test(\$re)" json &&
	jq -c "[.[] | .last_seen |= (if . == null then null else \"T\" end)]" \
		json >actual &&
	echo "[{\"name\":\"alice\",\"hosts\":\"\",\"sessions\":0,\"last_seen\":null,\"queued\":0},{\"name\":\"bob\",\"hosts\":\"\",\"sessions\":0,\"last_seen\":\"T\",\"queued\":0},{\"name\":\"carol\",\"hosts\":\"\",\"sessions\":0,\"last_seen\":null,\"queued\":1}]" >expect &&
	test_cmp expect actual
'

test_case 'several recipients get one message each, in order' '
	pigeon send --to bob,alice --to carol --from user "to three" >out &&
	printf "queued #10 for bob\nqueued #11 for alice\nqueued #12 for carol\n" >expect &&
	test_cmp expect out &&
	sql_is "SELECT m.id, a.name, m.body FROM message m
		JOIN agent a ON a.id = m.recipient_id WHERE m.id >= 10" \
		"10|bob|to three
11|alice|to three
12|carol|to three" &&
	expect_output "queued #13 for bob" \
		pigeon send --to bob,BOB --from alice "once" &&
	pigeon send --json --to alice,bob "pair" >json &&
	echo "[{\"id\":14,\"to\":\"alice\"},{\"id\":15,\"to\":\"bob\"}]" >expect &&
	jq -c . json >actual && test_cmp expect actual
'

test_case 'all reaches every other agent of the scope' '
	pigeon send --to all --from alice "standup" >out &&
	printf "queued #16 for bob\nqueued #17 for carol\n" >expect &&
	test_cmp expect out &&
	pigeon send --to all "from a person" >out &&
	printf "queued #18 for alice\nqueued #19 for bob\nqueued #20 for carol\n" \
		>expect &&
	test_cmp expect out &&
	sql_is "SELECT count(*) FROM message WHERE body = ${SQ}standup${SQ}
		AND sender = ${SQ}alice${SQ}" 2
'

test_case '--reply-to is kept and shown as "re #N"' '
	expect_output "queued #21 for alice" \
		pigeon send --to alice --from bob --reply-to 16 "ack" &&
	sql_is "SELECT reply_to FROM message WHERE id = 21" 16 &&
	pigeon inbox --agent alice >out &&
	grep -qE "^#21 from bob, [0-9]+s ago, re #16$" out &&
	pigeon read --json --agent alice >json &&
	jq -e "map(select(.id == 21)) | .[0].reply_to == 16" json &&
	jq -e "map(select(.id != 21)) | all(.[]; .reply_to == null)" json
'

test_case '--create queues for a new name; that agent then reads it' '
	expect_output "queued #22 for dave" \
		pigeon send --to Dave --from alice --create "welcome aboard" &&
	sql_is "SELECT detail FROM journal j JOIN agent a ON a.id = j.agent_id
		WHERE a.name = ${SQ}dave${SQ} AND kind = ${SQ}created${SQ}" \
		"created by --create" &&
	pigeon agents --json | jq -e ".[] | select(.name == \"dave\") |
		.queued == 1" &&
	pigeon read --agent dave >out &&
	grep -qE "^#22 from alice, " out && grep -qx "    welcome aboard" out &&
	expect_output "no messages to read for dave" pigeon read --agent dave
'

test_case 'PIGEON_AGENT is the default --from and --agent' '
	PIGEON_AGENT=Carol pigeon send --to bob "from env" >out &&
	echo "queued #23 for bob" >expect && test_cmp expect out &&
	sql_is "SELECT sender FROM message WHERE id = 23" carol &&
	PIGEON_AGENT=alice pigeon send --to bob --from dave "flag wins" >/dev/null &&
	sql_is "SELECT sender FROM message WHERE id = 24" dave &&
	PIGEON_AGENT=bob pigeon inbox >out &&
	grep -q "^#23 from carol" out &&
	PIGEON_AGENT=carol pigeon inbox --agent bob >out2 &&
	ageless out >out.a && ageless out2 >out2.a && test_cmp out.a out2.a &&
	PIGEON_AGENT=Bob pigeon read --json >json &&
	jq -r ".[].id" json >actual &&
	grep -qx 23 actual && grep -qx 24 actual &&
	sql_is "SELECT count(*) FROM message m JOIN agent a
		ON a.id = m.recipient_id WHERE a.name = ${SQ}bob${SQ}
		AND m.delivered_ms IS NULL" 0
'

test_case 'the sender defaults to "user", which has no journal' '
	pigeon send --to carol "who am i" >out &&
	echo "queued #25 for carol" >expect && test_cmp expect out &&
	sql_is "SELECT sender FROM message WHERE id = 25" user &&
	sql_is "SELECT count(*) FROM journal WHERE message_id = 25" 0 &&
	pigeon inbox --agent carol | grep -q "^#25 from user, "
'

test_case 'names are case-folded wherever they are given' '
	expect_output "queued #26 for carol" \
		pigeon send --to CAROL --from ALICE "shout" &&
	sql_is "SELECT sender FROM message WHERE id = 26" alice &&
	pigeon inbox --agent Carol >out && grep -q "^#26 from alice" out &&
	expect_code 2 pigeon agent add BOB 2>err &&
	grep -q "already exists" err &&
	sql_is "SELECT count(*) FROM agent WHERE lower(name) = ${SQ}bob${SQ}" 1
'

test_case 'rm retires an empty agent; its name can be added again' '
	expect_output "removed dave" pigeon agent rm DAVE &&
	pigeon agents --json | jq -e "all(.[]; .name != \"dave\")" &&
	expect_output "added dave" pigeon agent add dave &&
	sql_is "SELECT count(*), count(removed_ms) FROM agent
		WHERE name = ${SQ}dave${SQ}" "2|1"
'

test_case 'the database adds up: queue, deliveries, journal' '
	pigeon read --agent carol >/dev/null &&
	test "$(queued)" = 0 &&
	sql_is "SELECT count(*) FROM message" 26 &&
	sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" \
		"26|26" &&
	sql_is "SELECT count(*) FROM message m LEFT JOIN delivery d
		ON d.message_id = m.id WHERE d.id IS NULL
		OR d.body != m.body OR d.sender != m.sender" 0 &&
	kinds >actual &&
	printf "created|5\ndelivered|26\nremoved|1\nsent|17\n" >expect &&
	test_cmp expect actual &&
	expect_output "audit chain intact: 26 deliveries verified" \
		pigeon audit verify
'

test_done
