#!/bin/sh
# The throwaway PostgreSQL server of the tests (scripts/pg-test-server,
# integration/pglib.sh): a Unix socket in its own directory and no TCP
# port, never run as root, passwords required of the password role,
# everything gone after stop, and a private server stopped when a test
# script fails.
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

# The directory of the server PGN_TEST_PG names (its host=); the first
# two cases are about a server of scripts/pg-test-server's, not one a
# developer named.
SOCK_DIR=$(printf '%s\n' "$PGN_TEST_PG" | sed -n 's/.*host=\([^ ]*\).*/\1/p')
OURS=0
[ ! -f "$SOCK_DIR/conninfo" ] || OURS=1

test_case 'the server listens on a Unix socket only, in its own directory' '
	[ "$OURS" = 1 ] || { test_note "not a pg-test-server: skipped"; return 0; }
	pg_sql_is "SHOW listen_addresses" "" &&
	pg_sql_is "SELECT current_setting(${SQ}unix_socket_directories${SQ})" \
		"$SOCK_DIR" &&
	test -S "$SOCK_DIR/.s.PGSQL.5432" &&
	pg_sql_is "SELECT count(*) FROM pg_stat_activity
		WHERE client_addr IS NOT NULL" 0
'

test_case 'the server runs as a user that is not root' '
	[ "$OURS" = 1 ] || { test_note "not a pg-test-server: skipped"; return 0; }
	pid=$(head -n 1 "$SOCK_DIR/data/postmaster.pid") &&
	uid=$(awk "/^Uid:/ { print \$2 }" /proc/$pid/status) &&
	test_note "server pid $pid runs as uid $uid" &&
	test "$uid" -ne 0
'

test_case 'this script has a database of its own' '
	pg_sql_is "SELECT current_database()" "$PG_DBNAME" &&
	pg_sql "CREATE TABLE t (x int); INSERT INTO t VALUES (1)" &&
	pg_sql_is "SELECT x FROM t" 1
'

test_case 'a member of pgn_password needs its password, from PGPASSFILE' '
	role=pgn_pw_$$ &&
	pg_sql "CREATE ROLE $role LOGIN PASSWORD ${SQ}s3cret-$$${SQ}
		IN ROLE pgn_password" &&
	c="$PG user=$role" &&
	! PGPASSFILE=/dev/null pg_psql "$c" -c "SELECT 1" >out 2>err &&
	grep -q "password" err &&
	printf "*:*:*:%s:s3cret-%s\n" "$role" "$$" >pgpass &&
	chmod 600 pgpass &&
	test "$(PGPASSFILE=$PWD/pgpass pg_psql "$c" -c "SELECT current_user")" = \
		"$role" &&
	pg_sql "DROP ROLE $role"
'

# alive PID: PID runs (a zombie, dead but not yet reaped, does not).
alive() {
	al_s=$(ps -o stat= -p "$1") && case $al_s in Z*) return 1 ;; esac
}

# A second server, started and stopped by hand.
test_case 'start refuses a directory that is not empty; stop removes all' '
	mkdir full && : >full/x &&
	expect_code 1 "$PG_SERVER" start full 2>err &&
	grep -q "not an empty directory" err &&
	d=$(mktemp -d "${TMPDIR:-/tmp}/pigeon-pg.XXXXXX") &&
	c=$("$PG_SERVER" start "$d") &&
	test "$c" = "host=$d port=5432 user=pigeon dbname=postgres" &&
	test "$("$PG_SERVER" env "$d")" = "PGN_TEST_PG=${SQ}$c${SQ}" &&
	pid=$(head -n 1 "$d/data/postmaster.pid") &&
	alive "$pid" &&
	"$PG_SERVER" stop "$d" &&
	test ! -e "$d" &&
	! alive "$pid" &&
	"$PG_SERVER" stop "$d"
'

test_case 'a failing script stops the private server it started' '
	mkdir fail && chmod 711 "$TEST_DIR" fail &&
	cat >fail/t-fails.sh <<-EOF &&
		. "$PGN_SRC/integration/lib.sh"
		. "$PGN_SRC/integration/pglib.sh"
		echo "dir \$PG_OWN_DIR" >&8
		test_case "fails" "false"
		test_done
	EOF
	expect_code 1 env -u PGN_TEST_PG TMPDIR="$TEST_DIR/fail" \
		sh fail/t-fails.sh >fail.out &&
	own=$(sed -n "s/^dir //p" fail.out) &&
	test_note "the private server was in $own" &&
	case $own in "$TEST_DIR"/fail/pigeon-pg.*) ;; *) false ;; esac &&
	test ! -e "$own" &&
	! ps -eo stat=,args= | OWN="$own/data" awk "index(\$0, ENVIRON[\"OWN\"]) &&
		\$1 !~ /^Z/ { f = 1 } END { exit !f }" &&
	kept=$(sed -n "s/^# kept //p" fail.out) &&
	rm -rf "$kept"
'

test_case 'no server to be had: skipped (77) with a line, failed under CI' '
	expect_code 77 env -u PGN_TEST_PG -u CI PGN_PG_BINDIR=/nonexistent \
		sh fail/t-fails.sh >skip.out &&
	test "$(cat skip.out)" = \
		"1..0 # SKIP no PostgreSQL server: no initdb/pg_ctl (apt-get install postgresql, or set PGN_PG_BINDIR)" &&
	expect_code 1 env -u PGN_TEST_PG CI=true PGN_PG_BINDIR=/nonexistent \
		sh fail/t-fails.sh >ci.out &&
	grep -q "^Bail out! no PostgreSQL server (CI=true: never skipped)" ci.out &&
	kept=$(sed -n "s/^# kept //p" ci.out) && rm -rf "$kept"
'

test_done
