#!/bin/sh
# The core limits that no other test reaches: PGN_MAX_RECIPIENTS,
# PGN_DEFAULT_LIST, PGN_MAX_PATH, PGN_MAX_LIST for journal pages and
# PGN_MAX_MSG_JSON.
. "$(dirname "$0")/lib.sh"

test_case 'a send names at most 64 recipients (PGN_MAX_RECIPIENTS)' '
	names=$(seq 1 65 | sed "s/^/a/" | paste -sd, -) &&
	expect_error 2 "at most 64 recipients" pigeon send --to "$names" hi &&
	names64=$(seq 1 64 | sed "s/^/a/" | paste -sd, -) &&
	pigeon send --create --to "$names64" hi >out &&
	test "$(wc -l <out)" -eq 64 &&
	sql_is "SELECT count(*) FROM message" 64
'

test_case 'audit lists the newest 50 by default and says so (PGN_DEFAULT_LIST)' '
	pigeon agent add bob >/dev/null &&
	for i in $(seq 1 51); do echo "m$i"; done | while read -r m; do
		pigeon send --to bob "$m" >/dev/null || exit 1
	done &&
	pigeon read --agent bob >/dev/null &&
	pigeon audit --json >out.json &&
	test "$(jq length out.json)" -eq 50 &&
	test "$(jq -r ".[0].body" out.json)" = m51 &&
	pigeon audit >out &&
	grep -q "the newest 50 shown; --limit K shows more" out &&
	test "$(pigeon audit --limit 51 --json | jq length)" -eq 51
'

test_case 'a PIGEON_HOME of 4096 bytes or more is refused (PGN_MAX_PATH)' '
	long=/$(head -c 4100 /dev/zero | tr "\0" a) &&
	PIGEON_HOME=$long expect_error 1 "over 4096 bytes" pigeon agents &&
	expect_error 1 "over 4096 bytes" pigeon agents --db "$long"
'

test_case 'a relative PIGEON_HOME is refused' '
	PIGEON_HOME=relative/home expect_error 1 "absolute path" pigeon agents &&
	test ! -e relative
'

# A body only an edit of the database could make: 200,000 control bytes,
# 1.2 MB escaped, over PGN_MAX_MSG_JSON. The JSON readers fail with one
# line; none prints a list that silently lacks the message.
test_case 'a message whose JSON is over 1 MiB (PGN_MAX_MSG_JSON): the JSON readers fail, not drop it' '
	pigeon agent add carol >/dev/null &&
	pigeon send --to carol "first word" >/dev/null &&
	pigeon send --to carol "second word" >/dev/null &&
	sql "UPDATE message SET body = replace(hex(zeroblob(200000)), ${SQ}00${SQ}, char(1)) WHERE body = ${SQ}second word${SQ}" &&
	expect_error 1 "out of memory" pigeon inbox --agent carol --json &&
	expect_error 1 "out of memory" pigeon search --json word &&
	expect_error 1 "out of memory" pigeon read --agent carol --json &&
	pigeon audit --json --limit 2 >a.json &&
	test "$(jq "[.[] | select(.to == \"carol\")] | length" a.json)" -eq 2
'

test_done
