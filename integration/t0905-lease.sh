#!/bin/sh
# pigeon lease take|release|list (decision 0155): a take is stored and
# journalled, printed and --json; an overlapping exclusive lease of
# another agent refuses a take (exit 1, the holder, pattern, reason and
# expiry on one line), stores no lease and journals the refusal for both
# agents (decision 0207); shared leases coexist;
# taking again renews; --wait takes the lease once the holder lets go,
# and gives up at its bound; release by pattern or --all; list, --agent,
# --all with expired leases until swept; bad input is one line, exit 2,
# nothing stored; racing processes never both take overlapping exclusive
# leases; the lease stamp beside the database follows the leases.
. "$(dirname "$0")/lib.sh"

# waiting PID: wait (up to a minute) until PID is asleep on its watch of the
# database (it holds an inotify descriptor), after its first refusal.
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
leases() {
	sql "SELECT count(*) FROM lease"
}

test_case 'setup: a repository, agents alice, bob and carol' '
	mkdir -p repo/.git repo/src/api repo/docs &&
	cd repo &&
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon agent add carol >/dev/null
'

test_case 'take: stored, journalled, printed; an empty stamp before the first' '
	cd repo &&
	test -s "$DB-leases" &&
	test ! -e "$DB-leases.tmp" &&
	pigeon lease take --agent alice --reason "api refactor" src/api >out &&
	grep -q "^leased: alice  *\./src/api/ exclusive, until 20[0-9-]*T[0-9:]*Z (in [23][09]m): api refactor$" out &&
	sql_is "SELECT pattern, norm, shared, reason, expires_ms - created_ms FROM lease" \
		"./src/api/|src/api/**|0|api refactor|1800000" &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}lease${SQ} AND detail LIKE ${SQ}took ${SQ}${SQ}./src/api/${SQ}${SQ} exclusive until %: api refactor${SQ}" 1 &&
	test -s "$DB-leases" &&
	pigeon journal alice | grep -q "lease  *took ${SQ}./src/api/${SQ} exclusive"
'

test_case 'an overlapping exclusive take of another agent: exit 1, one line, no lease, journalled' '
	cd repo &&
	expect_error 1 "${SQ}src/**/*.c${SQ} is held by alice${SQ}s exclusive lease on ${SQ}./src/api/${SQ}, until " \
		pigeon lease take --agent bob "src/**/*.c" &&
	grep -q ": api refactor; ask with: pigeon send --to alice$" err &&
	test "$(leases)" = 1 &&
	sql_is "SELECT a.name, j.peer FROM journal j JOIN agent a ON a.id = j.agent_id WHERE j.kind = ${SQ}lease${SQ} AND j.detail LIKE ${SQ}refused %${SQ} ORDER BY a.name" "alice|bob
bob|alice" &&
	pigeon journal bob | grep -q "lease  *refused ${SQ}src/\*\*/\*\.c${SQ} exclusive: held by alice${SQ}s exclusive lease on ${SQ}./src/api/${SQ} until " &&
	pigeon journal alice | grep -q "lease  *refused ${SQ}src/\*\*/\*\.c${SQ} exclusive to bob: its exclusive lease on ${SQ}./src/api/${SQ} until "
'

test_case '--json: the lease taken, or who holds it (exit 1)' '
	cd repo &&
	pigeon lease take --json --agent bob --ttl 1h30m "./docs/*.md" >out &&
	jq -e ".taken == true and .agent == \"bob\" and .renewed == 0 and
	    (.leases | length) == 1 and .leases[0].pattern == \"./docs/*.md\" and
	    .leases[0].normalized == \"docs/*.md\" and
	    .leases[0].mode == \"exclusive\" and
	    .leases[0].expires_ms - (now * 1000) > 5300000" out >/dev/null &&
	expect_code 1 pigeon lease take --json --agent carol docs/a.md >out 2>err &&
	jq -e ".taken == false and .wanted == \"docs/a.md\" and
	    .held_by.agent == \"bob\" and .held_by.pattern == \"./docs/*.md\"" \
		out >/dev/null &&
	expect_one_error err "held by bob"
'

test_case 'shared leases coexist; an exclusive one over them is refused' '
	cd repo &&
	pigeon lease take --agent alice --shared "./README*" >/dev/null &&
	pigeon lease take --agent carol --shared ./README.md >/dev/null &&
	expect_error 1 "held by alice${SQ}s shared lease on ${SQ}./README*${SQ}" \
		pigeon lease take --agent bob ./README.md &&
	sql_is "SELECT count(*) FROM lease WHERE shared = 1" 2
'

test_case 'taking what one holds renews it, keeping its reason' '
	cd repo &&
	pigeon lease take --agent alice --ttl 2h ./src/api/ >out &&
	grep -q "(1 of them renewed)" out &&
	sql_is "SELECT count(*), max(expires_ms - created_ms) > 7100000, reason FROM lease WHERE pattern = ${SQ}./src/api/${SQ}" \
		"1|1|api refactor" &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}lease${SQ} AND detail LIKE ${SQ}renewed %${SQ}" 1
'

test_case 'list: live leases by holder; --agent; --json' '
	cd repo &&
	pigeon lease list >out &&
	test "$(wc -l <out)" = 4 &&
	head -1 out | grep -q "^alice .*\./README\* shared" &&
	pigeon lease list --agent bob >out &&
	test "$(wc -l <out)" = 1 &&
	pigeon lease list --json >out &&
	jq -e "length == 4 and all(.live)" out >/dev/null &&
	expect_error 2 "no agent ${SQ}dave${SQ}" pigeon lease list --agent dave
'

test_case 'bad input: one line, exit 2, nothing stored' '
	cd repo &&
	before=$(sql "SELECT count(*) FROM journal") &&
	expect_error 2 "leaves the scope root" pigeon lease take --agent bob ../x &&
	expect_error 2 "is outside the scope" pigeon lease take --agent bob /etc/passwd &&
	expect_error 2 "without its ${SQ}]${SQ}" pigeon lease take --agent bob "x[" &&
	expect_error 2 "a lease cannot exclude paths" pigeon lease take --agent bob "!x" &&
	expect_error 2 "--ttl ${SQ}9h${SQ}: a duration from 1s to 8h" \
		pigeon lease take --agent bob --ttl 9h x &&
	expect_error 2 "--ttl ${SQ}0s${SQ}: a duration from 1s to 8h" \
		pigeon lease take --agent bob --ttl 0s x &&
	expect_error 2 "--ttl ${SQ}1h30${SQ}" pigeon lease take --agent bob --ttl 1h30 x &&
	expect_error 2 "no agent ${SQ}dave${SQ} in scope" pigeon lease take --agent dave x &&
	expect_error 2 "a lease${SQ}s reason is one line" \
		pigeon lease take --agent bob --reason "$(printf "a\nb")" x &&
	expect_error 2 "over the limit of 256 bytes" \
		pigeon lease take --agent bob --reason "$(repeat 257 r)" x &&
	expect_error 2 "--wait ${SQ}0${SQ}: a number of seconds from 1 to 3600" \
		pigeon lease take --agent bob --wait 0 x &&
	expect_error 2 "--wait ${SQ}3601${SQ}" pigeon lease take --agent bob --wait 3601 x &&
	expect_error 2 "name a PATTERN" pigeon lease take --agent bob &&
	expect_error 2 "not both" pigeon lease release --agent bob --all x &&
	expect_error 2 "not both" pigeon lease release --agent bob &&
	expect_error 2 "go with lease take" pigeon lease list --shared &&
	expect_error 2 "not a lease command" pigeon lease grab x &&
	expect_error 2 "agent ${SQ}bob${SQ} holds no lease on ${SQ}x${SQ}" \
		pigeon lease release --agent bob x &&
	expect_error 2 "over the limit of 16" pigeon lease take --agent bob \
		a b c d e f g h i j k l m n o p q &&
	test "$(leases)" = 4 &&
	test "$(sql "SELECT count(*) FROM journal")" = "$before"
'

test_case 'the session acts as its agent; --agent may name only it' '
	cd repo &&
	sql "INSERT INTO session(key, host, agent_id, created_ms, last_seen_ms)
	    SELECT ${SQ}claude:s1${SQ}, ${SQ}claude${SQ}, id, 1, 1 FROM agent
	    WHERE name = ${SQ}carol${SQ}" &&
	PIGEON_SESSION=claude:s1 PIGEON_AGENT=bob pigeon lease take ./notes/ >out &&
	grep -q "^leased: carol " out &&
	PIGEON_SESSION=claude:s1 expect_error 2 "session ${SQ}claude:s1${SQ} acts as its agent ${SQ}carol${SQ}, not as ${SQ}bob${SQ}" \
		pigeon lease release --agent bob ./notes/ &&
	PIGEON_SESSION=claude:s1 pigeon lease release ./notes/ >out &&
	grep -qx "released 1 lease" out
'

test_case '--wait: the take waits, and takes the lease once its holder releases' '
	cd repo || exit 1
	pigeon lease take --agent carol --wait 60 --reason waited src/api/x.c >wait.out 2>wait.err &
	pid=$! && bg_track $pid &&
	waiting $pid &&
	test "$(sql "SELECT count(*) FROM lease l JOIN agent a ON a.id = l.agent_id WHERE a.name = ${SQ}carol${SQ}")" = 1 &&
	pigeon lease release --agent alice ./src/api/ >/dev/null &&
	bg_wait $pid &&
	grep -q "^leased: carol  *src/api/x.c exclusive" wait.out &&
	expect_empty wait.err
'

test_case '--wait gives up at its bound: exit 1, still held' '
	cd repo &&
	t0=$(date +%s) &&
	expect_error 1 "is held by carol${SQ}s exclusive lease on ${SQ}src/api/x.c${SQ}" \
		pigeon lease take --agent bob --wait 1 "src/**" &&
	grep -q "(still, after --wait)" err &&
	test $(($(date +%s) - t0)) -le 10
'

test_case 'a signal ends a --wait quietly (128 + N), nothing taken' '
	cd repo || exit 1
	pigeon lease take --agent bob --wait 60 "src/**" >sig.out 2>sig.err &
	pid=$! && bg_track $pid &&
	waiting $pid &&
	kill -TERM $pid &&
	{ bg_wait $pid; rc=$?; } ; test "$rc" = 143 &&
	expect_empty sig.out && expect_empty sig.err &&
	sql_is "SELECT count(*) FROM lease WHERE pattern = ${SQ}src/**${SQ}" 0
'

test_case 'release by pattern (normalized) and --all' '
	cd repo &&
	pigeon lease take --agent bob ./b1/ ./b2/ ./b3/ >/dev/null &&
	pigeon lease release --agent bob b1/../b1/ >out &&
	grep -qx "released 1 lease" out &&
	pigeon lease release --agent bob --all --json >out &&
	jq -e ".released == 3" out >/dev/null &&
	sql_is "SELECT count(*) FROM lease l JOIN agent a ON a.id = l.agent_id WHERE a.name = ${SQ}bob${SQ}" 0 &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}lease${SQ} AND detail LIKE ${SQ}released %${SQ}" 6
'

test_case 'expired: not live, listed with --all until the next change sweeps it' '
	cd repo &&
	sql "UPDATE lease SET expires_ms = 1000 WHERE pattern = ${SQ}src/api/x.c${SQ}" &&
	pigeon lease list --agent carol >out &&
	! grep -q "src/api/x.c" out &&
	pigeon lease list --all --agent carol >out &&
	grep -q "src/api/x.c exclusive, expired 1970-01-01T00:00:01Z" out &&
	pigeon lease list --all --json >out &&
	jq -e "[.[] | select(.live | not)] | length == 1" out >/dev/null &&
	pigeon lease take --agent bob "src/**" >/dev/null &&
	sql_is "SELECT count(*) FROM lease WHERE pattern = ${SQ}src/api/x.c${SQ}" 0 &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}lease${SQ} AND detail LIKE ${SQ}expired ${SQ}${SQ}src/api/x.c${SQ}${SQ}%${SQ}" 1
'

test_case 'racing processes never both take overlapping exclusive leases' '
	cd repo &&
	pigeon lease release --agent bob --all >/dev/null &&
	for k in 1 2 3 4 5 6; do pigeon agent add racer$k >/dev/null || exit 1; done &&
	for round in 1 2 3 4 5; do
		pids= &&
		for k in 1 2 3 4 5 6; do
			pigeon lease take --agent racer$k ./race/ >/dev/null 2>&1 &
			pids="$pids $!"
		done &&
		won=0 &&
		for p in $pids; do
			if wait $p; then won=$((won + 1)); fi
		done &&
		test "$won" = 1 &&
		test "$(sql "SELECT count(*) FROM lease WHERE pattern = ${SQ}./race/${SQ}")" = 1 &&
		sql "DELETE FROM lease WHERE pattern = ${SQ}./race/${SQ}" || exit 1
	done
'

test_case 'the stamp: private, and kept (not removed) after the last release' '
	cd repo &&
	test "$(stat -c %a "$DB-leases")" = 600 &&
	sql "SELECT a.name FROM lease l JOIN agent a ON a.id = l.agent_id" | sort -u >holders &&
	while read -r who; do
		pigeon lease release --agent "$who" --all >/dev/null || exit 1
	done <holders &&
	test "$(leases)" = 0 &&
	test -s "$DB-leases"
'

test_done
