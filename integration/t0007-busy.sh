#!/bin/sh
# Another process holds the write lock. A short hold: send waits, then
# succeeds. A hold past the CLI's deadline (5 s): send and read exit 1
# with one line saying the database is busy, never SQLite's "database is
# locked", and change nothing. Readers are not blocked meanwhile (WAL).
. "$(dirname "$0")/lib.sh"

# hold_lock NAME: in the background, take the write lock of $DB with the
# sqlite3 shell, which touches NAME.held once BEGIN IMMEDIATE succeeded
# and keeps the lock until release_lock NAME (or 30 s). Returns once it
# is held.
hold_lock() {
	{
		echo ".timeout 10000"
		echo "BEGIN IMMEDIATE;"
		echo "INSERT INTO scope(root) VALUES ('$1');"
		echo ".shell touch $1.held"
		# Bounded, so a failed case cannot leave it polling forever.
		i=0
		while [ ! -e "$1.release" ] && [ "$i" -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		echo "ROLLBACK;"
	} | sqlite3 -bail "$DB" >"$1.out" 2>"$1.err" &
	echo $! >"$1.pid"
	bg_track $!
	hl_i=0
	while [ ! -e "$1.held" ]; do
		hl_i=$((hl_i + 1))
		if [ "$hl_i" -ge 100 ] || ! kill -0 "$(cat "$1.pid")"; then
			echo "error: sqlite3 did not take the lock" >&9
			cat "$1.err" >&9
			return 1
		fi
		sleep 0.1
	done
}

# release_lock NAME: let go of the lock; wait until its holder is gone.
release_lock() {
	: >"$1.release"
	bg_wait "$(cat "$1.pid")"
}

test_case 'setup: bob and one queued message' '
	pigeon agent add bob >/dev/null &&
	pigeon send --to bob "before" >/dev/null
'

test_case 'a lock held for a second: send waits for it, then succeeds' '
	hold_lock short &&
	{ pigeon send --to bob "waited for the lock" >send.out 2>send.err & } &&
	spid=$! &&
	bg_track $spid &&
	pigeon inbox --json --agent bob >inbox.out &&
	jq -e "length == 1" inbox.out &&
	sleep 1 &&
	release_lock short &&
	bg_wait $spid &&
	expect_empty send.err &&
	grep -q "^queued #2 for bob$" send.out &&
	sql_is "SELECT body FROM message WHERE id = 2" "waited for the lock" &&
	expect_empty short.err
'

test_case 'a lock held past the deadline: send exits 1, says busy' '
	hold_lock long &&
	expect_error 1 "busy" pigeon send --to bob "too late" ;
	rc=$? ;
	release_lock long &&
	test "$rc" = 0 &&
	! grep -qi "database is locked" err &&
	grep -q "$DB" err &&
	sql_is "SELECT count(*) FROM message" 2 &&
	sql_is "SELECT count(*) FROM message WHERE body = ${SQ}too late${SQ}" 0
'

test_case 'a lock held past the deadline: read exits 1, claims nothing' '
	hold_lock long2 &&
	expect_error 1 "busy" pigeon read --agent bob ;
	rc=$? ;
	release_lock long2 &&
	test "$rc" = 0 &&
	! grep -qi "locked" err &&
	sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 2 &&
	sql_is "SELECT count(*) FROM delivery" 0
'

test_case 'after the locks: everything is still there, and works' '
	sql_is "SELECT count(*) FROM scope WHERE root LIKE ${SQ}%long%${SQ}
		OR root LIKE ${SQ}short${SQ}" 0 &&
	pigeon read --json --agent bob >out &&
	jq -e "map(.body) == [\"before\", \"waited for the lock\"]" out &&
	expect_output "audit chain intact: 2 deliveries verified" \
		pigeon audit verify
'

test_done
