#!/bin/sh
# Crash safety on PostgreSQL: t0401's run (integration/crash.sh) against
# the server: 4 `pigeon read` loops, 4 prompt-hook loops and 4 sender
# loops whose processes are SIGKILLed at random instants, at least 20 %
# of them, 1000 messages sent. A client killed mid-transaction leaves its backend to roll it
# back when the socket closes; one killed after COMMIT left leaves the
# transaction applied whole. Then a drain, and psql must show every
# message delivered exactly once, one audit row and one 'delivered'
# journal entry each, every id a sender printed stored, nothing no
# sender tried, and the audit chain intact. Delivered but unseen
# messages (a claimer killed after its commit) are in the journal and
# the audit.
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

# Half of t0401's run: each process connects to the server (a backend
# forked per process), so a message costs several times more here.
PGN_CRASH_PER_SENDER=${PGN_CRASH_PER_SENDER:-250}

sql() {
	pg_sql "$1"
}

sql_is() {
	pg_sql_is "$1" "$2"
}

# Nothing half-applied is what the row checks of crash.sh prove; the
# server has no client-side integrity check to add to them.
db_intact() {
	pg_sql_is "SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()
		AND state LIKE ${SQ}idle in transaction%${SQ}" 0
}

. "$PGN_SRC/integration/crash.sh"
