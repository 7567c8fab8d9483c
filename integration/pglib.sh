# pglib.sh: sourced after lib.sh by the PostgreSQL tests
# (integration/t07NN-pg-*.sh, CTest label "pg").
#
# The server is the one PGN_TEST_PG names (a libpq conninfo in keyword
# form; scripts/test starts a throwaway one and exports it). Without it,
# the script starts a private server with scripts/pg-test-server, and
# stops it when it exits, whatever the outcome. With neither, the script
# is skipped (exit 77), or fails under CI=true.
#
# Each script gets a database of its own, created here and dropped at
# exit unless a case failed (the last line names it then):
#
#	PG          the conninfo of that database (also in PIGEON_DB)
#	PG_DBNAME   its name
#	pg_sql Q    run Q with psql on it: unaligned, tuples only
#	pg_sql_is Q TEXT   Q prints exactly TEXT

PG_SERVER=$PGN_SRC/scripts/pg-test-server
# libpq's environment is the test's to set, never the caller's.
unset PGHOST PGHOSTADDR PGPORT PGUSER PGDATABASE PGPASSWORD PGPASSFILE \
    PGSERVICE PGSERVICEFILE PGOPTIONS PGSSLMODE PGCONNECT_TIMEOUT PGAPPNAME
PG_OWN_DIR=
PG_DBNAME=

# pg_psql CONNINFO ARGS...: psql, no ~/.psqlrc, stop on the first error.
pg_psql() {
	pp_c=$1
	shift
	psql -X -q -A -t -v ON_ERROR_STOP=1 "$pp_c" "$@"
}

pg_cleanup() {
	pg_rc=$?
	if [ -n "$PG_DBNAME" ] && [ "$pg_rc" -eq 0 ] &&
	    [ "$test_failed" -eq 0 ] && [ -z "$PG_OWN_DIR" ]; then
		pg_psql "$PGN_TEST_PG" -c \
		    "DROP DATABASE IF EXISTS $PG_DBNAME WITH (FORCE)" \
		    >/dev/null 2>&1 || :
	elif [ -n "$PG_DBNAME" ] && [ -z "$PG_OWN_DIR" ]; then
		echo "# kept database $PG_DBNAME"
	fi
	[ -z "$PG_OWN_DIR" ] || "$PG_SERVER" stop "$PG_OWN_DIR" || :
	(exit "$pg_rc")
	lib_cleanup
}
trap pg_cleanup EXIT

if [ -z "${PGN_TEST_PG:-}" ]; then
	if ! pg_why=$("$PG_SERVER" check 2>&1); then
		pg_why=${pg_why#*pg-test-server: }
		if [ "${CI:-}" = true ]; then
			echo "Bail out! no PostgreSQL server (CI=true: never skipped): $pg_why"
			exit 1
		fi
		echo "1..0 # SKIP no PostgreSQL server: $pg_why"
		trap - EXIT
		cd / && rm -rf "$TEST_DIR"
		exit 77
	fi
	PG_OWN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/pigeon-pg.XXXXXX") || exit 2
	PGN_TEST_PG=$("$PG_SERVER" start "$PG_OWN_DIR") || {
		echo "Bail out! cannot start a PostgreSQL server"
		exit 2
	}
	export PGN_TEST_PG
fi

# A name PostgreSQL takes unquoted: letters, digits, underscores.
PG_DBNAME=pgn_$(basename "$0" .sh | tr -c 'a-z0-9\n' _)_$$
if ! pg_psql "$PGN_TEST_PG" -c "CREATE DATABASE $PG_DBNAME" >/dev/null; then
	echo "Bail out! cannot create database $PG_DBNAME on '$PGN_TEST_PG'"
	PG_DBNAME=
	exit 2
fi
# In a conninfo the last of a repeated keyword wins.
PG="$PGN_TEST_PG dbname=$PG_DBNAME"
PIGEON_DB=$PG
export PIGEON_DB

# pg_sql QUERY: run QUERY on this script's database.
pg_sql() {
	pg_psql "$PG" -c "$1"
}

# pg_sql_is QUERY TEXT: QUERY prints exactly TEXT.
pg_sql_is() {
	pg_sql "$1" >sql.actual || return 1
	printf '%s\n' "$2" >sql.expect
	test_cmp sql.expect sql.actual
}
