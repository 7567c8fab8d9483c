#!/bin/sh
# Bad input exits 2, runtime failures exit 1; either way exactly one line
# on stderr, "pigeon: ..." naming the problem, nothing on stdout, and
# nothing stored. Databases pigeon did not make are left byte-identical.
. "$(dirname "$0")/lib.sh"

messages() {
	sql "SELECT count(*) FROM message"
}
# mark, then unchanged: no row was added to or removed from any table.
db_state() {
	sql "SELECT (SELECT count(*) FROM scope), (SELECT count(*) FROM agent),
		(SELECT count(*) FROM message), (SELECT count(*) FROM delivery),
		(SELECT count(*) FROM journal), (SELECT count(*) FROM session)"
}
mark() {
	db_state >"$TEST_DIR/.state"
}
unchanged() {
	db_state >"$TEST_DIR/.state.now" &&
	cmp -s "$TEST_DIR/.state" "$TEST_DIR/.state.now" && return 0
	echo "error: rows were stored: $(cat "$TEST_DIR/.state") ->" \
	    "$(cat "$TEST_DIR/.state.now")" >&9
	return 1
}

test_case 'setup: agents alice, bob and carol, one message' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon agent add carol >/dev/null &&
	pigeon send --to bob --from alice "the first" >/dev/null &&
	test "$(messages)" = 1
'

test_case 'no arguments: usage on stderr, exit 2' '
	expect_code 2 pigeon >out 2>err &&
	expect_empty out &&
	head -n 1 err | grep -q "^usage: pigeon \[COMMON OPTIONS\] COMMAND"
'

test_case 'an unknown command is one line naming it' '
	expect_error 2 "unknown command ${SQ}frobnicate${SQ}" pigeon frobnicate
'

test_case 'an unknown or incomplete option is one line naming it' '
	mark &&
	expect_error 2 "--bogus" pigeon send --to bob --bogus hi &&
	expect_error 2 "-x" pigeon inbox -x &&
	expect_error 2 "--to" pigeon send --to &&
	expect_error 2 "--wat" pigeon audit --wat &&
	expect_error 2 "--wat" pigeon journal bob --wat &&
	expect_error 2 "--wat" pigeon agents --wat &&
	expect_error 2 "--wat" pigeon agent add x --wat &&
	unchanged
'

test_case 'send without --to is refused' '
	mark &&
	expect_error 2 "--to" pigeon send --from alice hello &&
	expect_error 2 "empty name" pigeon send --to bob,,carol hello &&
	expect_error 2 "empty name" pigeon send --to "" hello &&
	unchanged
'

test_case 'missing operands and extra arguments are refused' '
	expect_error 2 "--agent" pigeon read &&
	expect_error 2 "--agent" pigeon inbox &&
	expect_error 2 "unexpected argument" pigeon inbox --agent bob extra &&
	expect_error 2 "unexpected argument" pigeon agents extra &&
	expect_error 2 "add, rename, rm or prune" pigeon agent &&
	expect_error 2 "unknown action" pigeon agent frob x &&
	expect_error 2 "one NAME" pigeon agent add &&
	expect_error 2 "OLD and NEW" pigeon agent rename bob &&
	expect_error 2 "unknown action" pigeon audit frob &&
	expect_error 2 "one ID" pigeon audit show &&
	expect_error 2 "not a delivery id" pigeon audit show abc &&
	expect_error 2 "no argument" pigeon audit verify 3 &&
	expect_error 2 "name one agent" pigeon journal &&
	expect_error 2 "name one agent" pigeon journal bob carol
'

test_case 'a 4096-byte body is accepted, 4097 bytes refused (arguments)' '
	pigeon send --to bob "$(repeat 4096 a)" >out &&
	grep -q "^queued #2 for bob$" out &&
	sql_is "SELECT length(body) FROM message WHERE id = 2" 4096 &&
	expect_error 2 "4096" pigeon send --to bob "$(repeat 4097 a)" &&
	grep -q "file" err &&
	expect_error 2 "4096" pigeon send --to bob "$(repeat 4000 a)" \
		"$(repeat 96 b)" &&
	test "$(messages)" = 2
'

test_case 'a 4096-byte body is accepted, 4097 bytes refused (stdin)' '
	repeat 4096 é | head -c 4096 >body4096 &&
	pigeon send --to bob - <body4096 >out &&
	grep -q "^queued #3 for bob$" out &&
	sql "SELECT body FROM message WHERE id = 3" | head -c 4096 |
		cmp - body4096 &&
	repeat 4097 a >body4097 &&
	expect_error 2 "4096" pigeon send --to bob - <body4097 &&
	repeat 100000 a | expect_error 2 "4096" pigeon send --to bob &&
	test "$(messages)" = 3
'

test_case 'a 4096-byte body piped with a final newline is accepted' '
	{ repeat 4096 z && echo; } >body &&
	pigeon send --to bob - <body >out &&
	grep -q "^queued #[0-9]* for bob$" out &&
	sql_is "SELECT length(body), substr(body, 4096) FROM message
		WHERE id = (SELECT max(id) FROM message)" "4096|z" &&
	mark &&
	{ repeat 4097 z && echo; } >body &&
	expect_error 2 "4096" pigeon send --to bob - <body &&
	unchanged
'

test_case 'a NUL byte in the body is refused' '
	mark &&
	printf "before\000after" >nul &&
	expect_error 2 "NUL" pigeon send --to bob - <nul &&
	printf "\000" | expect_error 2 "NUL" pigeon send --to bob &&
	unchanged
'

test_case 'invalid UTF-8 is refused' '
	mark &&
	printf "bad \377 byte" | expect_error 2 "UTF-8" pigeon send --to bob &&
	printf "overlong \300\257" |
		expect_error 2 "UTF-8" pigeon send --to bob &&
	printf "surrogate \355\240\200" |
		expect_error 2 "UTF-8" pigeon send --to bob &&
	printf "cut \342\202" | expect_error 2 "UTF-8" pigeon send --to bob &&
	expect_error 2 "UTF-8" pigeon send --to bob "$(printf "arg \377")" &&
	unchanged
'

test_case 'an empty body is refused' '
	mark &&
	expect_error 2 "empty" pigeon send --to bob "" &&
	expect_error 2 "empty" pigeon send --to bob - </dev/null &&
	expect_error 2 "empty" pigeon send --to bob </dev/null &&
	printf "\n" | expect_error 2 "empty" pigeon send --to bob &&
	unchanged
'

test_case 'agent names: 64 characters accepted, 65 refused' '
	expect_output "added $(repeat 64 n)" pigeon agent add "$(repeat 64 N)" &&
	mark &&
	expect_error 2 "at most 64" pigeon agent add "$(repeat 65 n)" &&
	expect_error 2 "64" pigeon send --to "$(repeat 65 n)" hi &&
	expect_error 2 "at most 64" pigeon send --to bob \
		--from "$(repeat 65 n)" hi &&
	unchanged
'

test_case 'agent names: only a-z, 0-9, dot, underscore and dash' '
	mark &&
	for bad in "bob!" "a b" "b@d" "ünï" "tab	x" "semi;colon"; do
		expect_error 2 "only a-z, 0-9" pigeon agent add "$bad" || return 1
	done &&
	expect_error 2 "only a-z, 0-9" pigeon send --to "bo b" hi &&
	expect_error 2 "only a-z, 0-9" pigeon send --to bob --from "x/y" hi &&
	expect_error 2 "only a-z, 0-9" pigeon inbox --agent "b?b" &&
	expect_error 2 "only a-z, 0-9" pigeon agent rename bob "b*b" &&
	unchanged
'

test_case 'agent names start with a letter or a digit' '
	mark &&
	expect_error 2 "starts with a letter or a digit" \
		pigeon agent add -- -bob &&
	expect_error 2 "starts with a letter or a digit" pigeon agent add .bob &&
	expect_error 2 "starts with a letter or a digit" pigeon agent add _bob &&
	expect_error 2 "starts with a letter or a digit" \
		pigeon send --to bob --from=-x hi &&
	expect_error 2 "starts with a letter or a digit" \
		pigeon send --to=-bob hi &&
	unchanged &&
	expect_output "added 9lives" pigeon agent add 9lives
'

test_case 'all is reserved and cannot name an agent' '
	mark &&
	expect_error 2 "reserved" pigeon agent add all &&
	expect_error 2 "reserved" pigeon agent add ALL &&
	expect_error 2 "reserved" pigeon agent rename bob all &&
	expect_error 2 "reserved" pigeon send --to bob --from all hi &&
	expect_error 2 "reserved" pigeon read --agent all &&
	sql_is "SELECT count(*) FROM agent WHERE name = ${SQ}all${SQ}" 0 &&
	unchanged
'

test_case 'an unknown recipient lists the known names and a suggestion' '
	mark &&
	expect_error 2 "Did you mean ${SQ}bob${SQ}?" pigeon send --to bbo hi &&
	grep -q "no agent ${SQ}bbo${SQ}" err &&
	grep -q "alice, bob, carol" err &&
	grep -q -- "--create" err &&
	expect_error 2 "no agent ${SQ}zzzzzz${SQ}" pigeon send --to zzzzzz hi &&
	! grep -q "Did you mean" err &&
	expect_error 2 "no agent ${SQ}bbo${SQ}" pigeon send --to bob,bbo hi &&
	expect_error 2 "no agent" pigeon read --agent bbo &&
	expect_error 2 "no agent" pigeon inbox --agent bbo &&
	sql_is "SELECT count(*) FROM agent WHERE name = ${SQ}bbo${SQ}" 0 &&
	unchanged
'

test_case '--reply-to must be the id of a message of the scope' '
	mark &&
	for bad in x 1x "" -1 0 1.5 99999999999999999999; do
		expect_error 2 "--reply-to" pigeon send --to bob \
			--reply-to "$bad" hi || return 1
	done &&
	expect_error 2 "no message 999 in scope ${SQ}global${SQ} to reply to; check the --reply-to id" \
		pigeon send --to bob --reply-to 999 hi &&
	unchanged
'

test_case 'the pending cap: the 201st queued message is refused' '
	pigeon agent add full >/dev/null &&
	n=$(messages) &&
	i=1 &&
	while [ $i -le 200 ]; do
		# two senders: one holds at most 100 (t0011)
		pigeon send --to full --from "s$((i % 2))" "n $i" >/dev/null ||
		    return 1
		i=$((i + 1))
	done &&
	sql_is "SELECT count(*) FROM message m JOIN agent a
		ON a.id = m.recipient_id WHERE a.name = ${SQ}full${SQ}
		AND m.delivered_ms IS NULL" 200 &&
	test "$(messages)" = $((n + 200)) &&
	mark &&
	expect_error 2 "cap is 200" pigeon send --to full "n 201" &&
	expect_error 2 "cap" pigeon send --to bob,full "both" &&
	expect_error 2 "cap" pigeon send --to all --from alice "all" &&
	unchanged &&
	pigeon inbox --json --agent full | jq -e "length == 200"
'

test_case 'removing an agent with queued messages is refused' '
	mark &&
	expect_error 2 "queued" pigeon agent rm full &&
	expect_error 2 "queued" pigeon agent rm bob &&
	expect_error 2 "no agent" pigeon agent rm nobody &&
	unchanged
'

test_case 'renaming onto a taken name, or from an unknown one, is refused' '
	expect_error 2 "already exists" pigeon agent rename alice bob &&
	expect_error 2 "already exists" pigeon agent rename alice CAROL &&
	expect_error 2 "already has that name" pigeon agent rename bob BOB &&
	expect_error 2 "no agent" pigeon agent rename nobody somebody &&
	expect_error 2 "already exists" pigeon agent add alice &&
	sql_is "SELECT name FROM agent WHERE name IN
		(${SQ}alice${SQ}, ${SQ}bob${SQ}, ${SQ}carol${SQ}) ORDER BY name" \
		"alice
bob
carol" &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}renamed${SQ}" 0
'

test_case 'audit --limit takes 1 to 10000; --since takes a time' '
	expect_error 2 "--limit" pigeon audit --limit 0 &&
	expect_error 2 "--limit" pigeon audit --limit 10001 &&
	expect_error 2 "--limit" pigeon audit --limit -5 &&
	expect_error 2 "--limit" pigeon audit --limit ten &&
	pigeon audit --limit 10000 >out &&
	pigeon audit --limit 1 >out &&
	expect_error 2 "--since" pigeon audit --since junk &&
	expect_error 2 "--since" pigeon audit --since 2026-13-01 &&
	expect_error 2 "--since" pigeon audit --since 5y &&
	expect_error 2 "only a-z" pigeon audit --agent "b b"
'

test_case 'the journal of an unknown agent is refused' '
	expect_error 2 "no agent ${SQ}nobody${SQ}" pigeon journal nobody &&
	expect_error 2 "only a-z" pigeon journal "no body"
'

test_case '--help of each command prints usage on stdout, exit 0' '
	mark &&
	for cmd in send inbox read agents agent audit journal; do
		pigeon $cmd --help >out 2>err &&
		expect_empty err &&
		head -n 1 out | grep -q "^usage: pigeon $cmd" &&
		pigeon $cmd -h >out2 &&
		test_cmp out out2 || return 1
	done &&
	for h in --help -h help; do
		pigeon $h >out 2>err &&
		expect_empty err &&
		head -n 1 out | grep -q "^usage: pigeon \[COMMON OPTIONS\] COMMAND" || return 1
	done &&
	pigeon send --to bob --help >out &&
	grep -q "^usage: pigeon send" out &&
	unchanged
'

test_case 'runtime: a write error on stdout is exit 1, one line' '
	expect_code 1 pigeon agents >/dev/full 2>err &&
	expect_one_error err "cannot write output" &&
	expect_code 1 pigeon inbox --agent bob >&- 2>err &&
	expect_one_error err "cannot write output" &&
	expect_code 1 pigeon audit verify >/dev/full 2>err &&
	expect_one_error err "cannot write output" &&
	expect_code 1 pigeon send --help >/dev/full 2>err &&
	expect_one_error err "cannot write output" &&
	pigeon inbox --json --agent bob >queued.json &&
	expect_code 1 pigeon read --agent bob >/dev/full 2>err &&
	expect_one_error err "cannot write output" &&
	pigeon audit --json --agent bob >audit.json &&
	test "$(jq -c "map(.id) | sort" queued.json)" = \
		"$(jq -c "map(.message_id) | sort" audit.json)"
'

test_case 'runtime: a file of garbage bytes is refused, byte-identical' '
	mark &&
	awk "BEGIN { srand(7); for (i = 0; i < 8192; i++)
		printf \"%c\", 1 + int(rand() * 255) }" >garbage.db &&
	cp garbage.db garbage.orig &&
	expect_error 1 "$TEST_DIR/garbage.db" \
		pigeon agents --db "$TEST_DIR/garbage.db" &&
	grep -q "file is not a database" err &&
	expect_error 1 "garbage.db" pigeon send --db garbage.db --to bob hi &&
	expect_error 1 "garbage.db" pigeon read --db garbage.db --agent bob &&
	cmp garbage.db garbage.orig &&
	test ! -e garbage.db-wal && test ! -e garbage.db-journal &&
	unchanged
'

test_case 'runtime: a database of a newer schema is refused, unchanged' '
	sqlite3 "$DB" ".backup newer.db" &&
	sqlite3 newer.db "PRAGMA user_version = 99" &&
	cp newer.db newer.orig &&
	expect_error 1 "newer" pigeon agents --db newer.db &&
	grep -q "newer.db" err && grep -q "99" err &&
	expect_error 1 "newer" pigeon send --db newer.db --to bob hi &&
	cmp newer.db newer.orig &&
	sql_is "PRAGMA user_version" 99 newer.db
'

test_case 'runtime: a foreign SQLite database is refused, unchanged' '
	sqlite3 foreign.db "CREATE TABLE notes(x TEXT);
		INSERT INTO notes VALUES (${SQ}mine${SQ});" &&
	cp foreign.db foreign.orig &&
	expect_error 1 "foreign.db" pigeon agents --db foreign.db &&
	grep -q "not made by pigeon" err &&
	expect_error 1 "foreign.db" pigeon agent add --db foreign.db x &&
	sql_is "PRAGMA user_version" 0 foreign.db &&
	sql_is "SELECT name FROM sqlite_schema" notes foreign.db &&
	cmp foreign.db foreign.orig
'

test_case 'runtime: --db naming a directory is refused' '
	mkdir dir.db &&
	expect_error 1 "$TEST_DIR/dir.db" pigeon agents --db "$TEST_DIR/dir.db" &&
	test -z "$(ls -A dir.db)"
'

test_case 'runtime: --db in a directory that does not exist is refused' '
	expect_error 1 "$TEST_DIR/no/such/dir/p.db" \
		pigeon agent add --db "$TEST_DIR/no/such/dir/p.db" x &&
	test ! -e no
'

test_case 'the database is whole and holds only what was accepted' '
	k=$(sql "SELECT count(*) FROM message WHERE delivered_ms IS NOT NULL") &&
	test "$k" -ge 3 &&
	sql_is "SELECT count(*) FROM delivery" "$k" &&
	sql_is "SELECT sender, count(*) FROM message GROUP BY sender
		ORDER BY sender" \
		"alice|1
s0|100
s1|100
user|$(($(messages) - 201))" &&
	sql_is "SELECT name FROM agent ORDER BY id" "alice
bob
carol
$(repeat 64 n)
9lives
full" &&
	sql_is "SELECT kind, count(*) FROM journal GROUP BY kind ORDER BY kind" \
		"created|6
delivered|$k
sent|1" &&
	sql_is "PRAGMA integrity_check" ok
'

test_done
