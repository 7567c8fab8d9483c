# bad_input.sh: sourced by t0925-bad-input.sh (SQLite) and
# t0708-pg-bad-input.sh (PostgreSQL), after lib.sh (and pglib.sh).
#
# product.md §13's bad input, every case of every command that takes it:
# a bad glob, a pattern that leaves the scope, a TTL out of range, an
# unknown id, acknowledging someone else's message, an unknown group (and
# the unknown agent and member beside them, and an agent that would take
# a group's name). Each one is one line on
# stderr naming the problem, nothing on stdout, exit 2, and nothing
# stored: the whole database is dumped before and after each case and
# compared (SQLite: .dump and the lease stamp; PostgreSQL: pg_dump's
# data, a sequence's position aside, which no rollback restores).

# snapshot FILE: everything stored, as text.
snapshot() {
	if [ -n "${PG:-}" ]; then
		pg_dump --data-only --no-owner --no-privileges "$PG" 2>/dev/null |
		    grep -v -e '^--' -e '^\\restrict' -e '^\\unrestrict' \
			-e 'pg_catalog.setval' >"$1"
	else
		sqlite3 -batch "$DB" .dump >"$1" &&
		od -An -tx1 "$DB-leases" >>"$1"
	fi
}

test_case 'setup: agents alice, bob and carol, group @g1, an --ack message, a lease' '
	mkdir -p repo/.git repo/src &&
	cd repo &&
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon agent add carol >/dev/null &&
	pigeon group add g1 alice carol >/dev/null &&
	pigeon send --from alice --to bob --ack first >out &&
	grep -q "^queued #1 for bob" out &&
	pigeon lease take --agent alice src/ >/dev/null &&
	snapshot ../before &&
	test -s ../before
'

# The table: the error's text (a fixed string), a tab, the command's
# words (run by eval, in repo/). Every one exits 2 with that one line.
cat >cases <<'EOF'
lease pattern 'src/[a' has a '[' without its ']'	pigeon lease take --agent bob "src/[a"
lease pattern '../x' leaves the scope root through '..'	pigeon lease take --agent bob ../x
lease pattern './../x' leaves the scope root through '..'	pigeon lease take --agent bob "$TEST_DIR/repo/../x"
'/etc/passwd' is outside the scope	pigeon lease take --agent bob /etc/passwd
a lease cannot exclude paths	pigeon lease take --agent bob "!x"
--ttl '9h': a duration from 1s to 8h	pigeon lease take --agent bob --ttl 9h x
--ttl '8h1s': a duration from 1s to 8h	pigeon lease take --agent bob --ttl 8h1s x
--ttl '0s': a duration from 1s to 8h	pigeon lease take --agent bob --ttl 0s x
no agent 'dave' in scope	pigeon lease take --agent dave x
lease pattern 'src/[a' has a '[' without its ']'	pigeon lease release --agent alice "src/[a"
lease pattern '../x' leaves the scope root through '..'	pigeon lease release --agent alice ../x
'/etc' is outside the scope	pigeon lease release --agent alice /etc
agent 'bob' holds no lease on './src/' in scope	pigeon lease release --agent bob src
no agent 'dave' in scope	pigeon lease release --agent dave --all
no agent 'dave' in scope	pigeon lease list --agent dave
no message 999 in scope	pigeon ack --from bob 999
message 1 went to 'bob', not to 'alice': only its recipient acknowledges it	pigeon ack --from alice 1 done
message 1 went to 'bob', not to 'dave': only its recipient acknowledges it	pigeon ack --from dave 1
'x': not a message id	pigeon ack --from bob x
no message #999 in scope	pigeon status 999
no messages #998, #999 in scope	pigeon status 998 999
no message 999 in scope	pigeon thread 999
no message 999 in scope '	pigeon thread --json 999
no message 999 in scope	pigeon wait --ack 999 --timeout 1
no message 999 in scope	pigeon wait --agent bob --reply-to 999 --timeout 1
no message 999 in scope	pigeon send --from alice --to bob --reply-to 999 reply
--ack-within '9d': a duration from 1s to 7d	pigeon send --from alice --to bob --ack --ack-within 9d x
no group '@nogroup' in scope	pigeon send --from alice --to @nogroup x
no group '@nogroup' in scope	pigeon send --from alice --to bob --to @nogroup x
no group '@nogroup' in scope	pigeon group rm nogroup
no group '@nogroup' in scope	pigeon group rm nogroup alice
agent 'bob' is not in group '@g1'	pigeon group rm g1 bob
no agent 'dave' in scope	pigeon group rm g1 dave
no agent 'dave' in scope	pigeon group add g1 dave
'alice' is an agent of scope	pigeon group add alice bob
'g1' is a group of scope	pigeon agent add g1
'g1' is a group of scope	pigeon agent rename bob g1
EOF

# shellcheck disable=SC2034 # bi_text: read by each case's body
while IFS='	' read -r bi_text bi_cmd; do
	test_case "bad input, exit 2, one line, nothing stored: $bi_cmd" '
		cd repo &&
		eval "expect_code 2 $bi_cmd" >out 2>err &&
		expect_empty out &&
		expect_one_error err "$bi_text" &&
		snapshot ../after &&
		test_cmp ../before ../after
	'
done <cases

test_case 'status prints the known ids, names the others in one line, exit 2' '
	cd repo &&
	expect_code 2 pigeon status 998 1 999 >out 2>err &&
	grep -q "^#1 alice -> bob: queued since " out &&
	test "$(wc -l <out)" = 1 &&
	expect_one_error err "no messages #998, #999 in scope" &&
	expect_code 2 pigeon status --json 999 >out 2>err &&
	test "$(cat out)" = "[{\"id\":999,\"state\":\"unknown\"}]" &&
	expect_one_error err "no message #999 in scope" &&
	snapshot ../after &&
	test_cmp ../before ../after
'

test_case 'the table ran every case, and a good command does store' '
	test "$(wc -l <cases)" -eq 37 &&
	cd repo &&
	pigeon ack --from bob 1 done >/dev/null &&
	snapshot ../after &&
	! cmp -s ../before ../after
'
