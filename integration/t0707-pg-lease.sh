#!/bin/sh
# Path leases on one PostgreSQL server from two machines (decision
# 0155): two PIGEON_HOMEs with their own checkouts of one repository
# (one scope, keyed by the origin remote). A lease taken on one machine
# refuses an overlapping take on the other; eight racing processes, four
# on each machine, never both take overlapping exclusive leases; a
# release on one lets the other take; no lease stamp is written for a
# PostgreSQL store (other machines' leases would not be in it).
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

ROUNDS=${PGN_T0707_ROUNDS:-4}

# machine_setup M REPO: machine M's home and checkout, remote team/app.
machine_setup() {
	mkdir -p "$TEST_DIR/$1/home" "$2/.git" "$2/src" &&
	printf '[remote "origin"]\n\turl = %s\n' \
	    git@github.com:team/app.git >"$2/.git/config"
}
A_REPO=$TEST_DIR/a/home/src/app
B_REPO=$TEST_DIR/b/srv/app-checkout
machine_setup a "$A_REPO" || exit 2
machine_setup b "$B_REPO" || exit 2

# on M CMD...: run CMD as machine M, in its checkout.
on() {
	on_m=$1
	shift
	if [ "$on_m" = a ]; then on_r=$A_REPO; else on_r=$B_REPO; fi
	(cd "$on_r" && HOME=$TEST_DIR/$on_m/home \
	    PIGEON_HOME=$TEST_DIR/$on_m/state "$@")
}

test_case 'setup: agents of the one scope' '
	on a pigeon agent add alice >/dev/null &&
	on b pigeon agent add bob >/dev/null &&
	for k in 1 2 3 4 5 6 7 8; do
		on a pigeon agent add racer$k >/dev/null || exit 1
	done
'

test_case 'a lease taken on one machine refuses the other, with its holder' '
	on a pigeon lease take --agent alice --reason "schema" "$A_REPO/src/" \
		>out &&
	grep -q "^leased: alice  *\./src/ exclusive" out &&
	on b expect_error 1 "${SQ}src/db.c${SQ} is held by alice${SQ}s exclusive lease on ${SQ}./src/${SQ}" \
		pigeon lease take --agent bob src/db.c &&
	grep -q ": schema; ask with: pigeon send --to alice$" "$B_REPO/err" &&
	on b pigeon lease list --json >out &&
	jq -e "length == 1 and .[0].agent == \"alice\" and .[0].live" out \
		>/dev/null &&
	pg_sql_is "SELECT count(*) FROM lease" 1 &&
	pg_sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}lease${SQ} AND detail LIKE ${SQ}took %${SQ}" 1 &&
	pg_sql_is "SELECT a.name, j.peer FROM journal j JOIN agent a ON a.id = j.agent_id WHERE j.kind = ${SQ}lease${SQ} AND j.detail LIKE ${SQ}refused ${SQ}${SQ}src/db.c${SQ}${SQ} exclusive%${SQ} ORDER BY a.name" "alice|bob
bob|alice"
'

test_case 'no lease stamp for a PostgreSQL store' '
	! ls "$TEST_DIR"/a/state "$TEST_DIR"/b/state 2>/dev/null |
		grep -q leases
'

test_case 'released on one machine, taken on the other' '
	on a pigeon lease release --agent alice ./src/ >/dev/null &&
	on b pigeon lease take --agent bob src/db.c >out &&
	grep -q "^leased: bob " out &&
	on b pigeon lease release --agent bob --all >/dev/null &&
	pg_sql_is "SELECT count(*) FROM lease" 0
'

test_case "racing processes on two machines: one winner, $ROUNDS rounds" '
	round=0 &&
	while [ "$round" -lt "$ROUNDS" ]; do
		pids= &&
		for k in 1 2 3 4 5 6 7 8; do
			if [ $((k % 2)) = 0 ]; then m=a; p="src/**/*.c";
			else m=b; p=./src/api/; fi
			on $m pigeon lease take --agent racer$k "$p" \
				>/dev/null 2>&1 &
			pids="$pids $!"
		done &&
		won=0 &&
		for p in $pids; do
			if wait $p; then won=$((won + 1)); fi
		done &&
		test "$won" = 1 &&
		pg_sql_is "SELECT count(*) FROM lease" 1 &&
		pg_sql "DELETE FROM lease" >/dev/null &&
		round=$((round + 1)) || exit 1
	done
'

test_done
