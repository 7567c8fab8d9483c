#!/bin/sh
# pigeon search (product.md §16, decision 0170) with the real binary:
# every word required, newest first, queued and delivered, --agent,
# --since, --limit, --json; quotes and operators are plain words; bad
# input is one error line, exit 2. (The migration that indexes an old
# database: tests/test_search.c.)
. "$(dirname "$0")/lib.sh"

test_case 'messages found by their words, newest first, queued or delivered' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon send --from alice --to bob "deploy the API tonight" >/dev/null &&
	pigeon send --from bob --to alice "the api is deployed" >/dev/null &&
	pigeon send --from alice --to bob "lunch at noon" >/dev/null &&
	pigeon read --agent alice >/dev/null &&
	pigeon search api >out &&
	grep -c "^#" out >n && test "$(cat n)" = 2 &&
	head -1 out | grep -q "^#2 .* bob -> alice, delivered$" &&
	sed -n 3p out | grep -q "^#1 .* alice -> bob, queued$" &&
	grep -q "^    deploy the API tonight$" out &&
	expect_output "no messages found" pigeon search api lunch
'

test_case 'search --json: one object per message, with the body as sent' '
	pigeon search --json the api >out &&
	test "$(jq -r "map(.id) | join(\",\")" out)" = "2,1" &&
	test "$(jq -r ".[1].body" out)" = "deploy the API tonight" &&
	test "$(jq -r ".[0].delivered != null, .[1].delivered" out)" = "true
null" &&
	test "$(jq -r ".[0].thread, .[0].from, .[0].to" out)" = "2
bob
alice" &&
	# pigeon read --json'"'"'s object, then its states (decision 0238).
	pigeon inbox --json --agent bob >inbox.out &&
	test "$(jq -c ".[1] | keys_unsorted | .[0:10]" out)" = \
	    "$(jq -c ".[0] | keys_unsorted" inbox.out)" &&
	test "$(jq -c ".[1] | keys_unsorted | .[10:]" out)" = \
	    "[\"delivered\",\"acknowledged\",\"woken\",\"woken_via\",\"heard\"]" &&
	test "$(jq -c ".[1] | del(.delivered, .acknowledged, .woken, .woken_via, .heard)" out)" = \
	    "$(jq -c ".[0]" inbox.out)"
'

test_case '--agent, --since and --limit narrow the search' '
	test "$(pigeon search --json --agent bob api | jq length)" = 2 &&
	pigeon agent add carol >/dev/null &&
	pigeon send --from carol --to bob "api review" >/dev/null &&
	test "$(pigeon search --json --agent alice api | jq length)" = 2 &&
	test "$(pigeon search --json --agent carol api | jq -r ".[0].id")" = 4 &&
	test "$(pigeon search --json --limit 1 api | jq -r "map(.id) | join(\",\")")" = 4 &&
	pigeon search --limit 1 api >out &&
	grep -q "the newest 1 shown" out &&
	test "$(pigeon search --json --since 1h api | jq length)" = 3 &&
	test "$(pigeon search --json --since 2099-01-01 api | jq length)" = 0
'

test_case 'quotes, operators and markup are words like any other' '
	pigeon send --from alice --to bob "x \"quoted\" NOT this OR <script>alert(1)</script>" >/dev/null &&
	test "$(pigeon search --json "\"quoted\"" | jq -r ".[0].id")" = 5 &&
	test "$(pigeon search --json NOT OR | jq -r ".[0].id")" = 5 &&
	test "$(pigeon search --json "<script>" | jq -r ".[0].id")" = 5 &&
	for t in "\"" "NEAR(a b)" "body:x" "x*" "(" "^y" "-z"; do
		pigeon search -- "$t" >/dev/null || return 1
	done
'

test_case 'bad search input: one error line, exit 2' '
	expect_error 2 "search takes the TEXT to find" pigeon search &&
	expect_error 2 "nothing to search for" pigeon search "  " &&
	expect_error 2 "--limit" pigeon search --limit 0 api &&
	expect_error 2 "--limit" pigeon search --limit 10001 api &&
	expect_error 2 "--since" pigeon search --since never api &&
	expect_error 2 "33 words: at most 32" pigeon search $(seq 33) &&
	long=$(head -c 1025 /dev/zero | tr "\0" a) &&
	expect_error 2 "at most 1024" pigeon search "$long" &&
	pigeon search "$(head -c 1024 /dev/zero | tr "\0" a)" >/dev/null &&
	expect_error 2 "agent" pigeon search --agent "Bad Name" api
'

test_done
