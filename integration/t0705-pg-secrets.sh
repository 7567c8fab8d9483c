#!/bin/sh
# Secrets: a role that must give a password (the harness makes members
# of pgn_password use scram-sha-256), the password planted only where
# libpq reads it: ~/.pgpass, then PGPASSFILE, then a service file. Every
# command works, and the password never shows: not in any process's
# argv (/proc/PID/cmdline, read while `pigeon wait` runs), not in any
# output or error of send, read, agents, doctor (text and --json), audit
# or the hook, not in hook.log or any file of PIGEON_HOME. A wrong
# password and a password written into PIGEON_DB itself fail without
# echoing it; so does any keyword libpq marks secret (sslpassword) in
# every form, and a string libpq refuses. Doctor, error lines and
# hook.log name the database by host, port, dbname and user only.
# doctor reports the server, its version and the schema.
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
ROLE=pgn_pw_$$
SECRET=pgn-Secret-$$-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
WRONG=pgn-Wrong-$$-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
# The patterns grep reads from files, so that no grep's argv holds them.
printf '%s\n' "$SECRET" >"$TEST_DIR/secret.pat"
printf '%s\n' "$WRONG" >"$TEST_DIR/wrong.pat"
SOCK_DIR=$(printf '%s\n' "$PGN_TEST_PG" | sed -n 's/.*host=\([^ ]*\).*/\1/p')
DB_PW="host=$SOCK_DIR port=5432 dbname=$PG_DBNAME user=$ROLE"
mkdir "$TEST_DIR/proj" "$TEST_DIR/proj/.git" || exit 2

# no_secret FILE...: none of the files holds the password (or the wrong
# one).
no_secret() {
	if grep -lF -f "$TEST_DIR/secret.pat" -f "$TEST_DIR/wrong.pat" "$@" \
	    >leaks 2>/dev/null; then
		echo "the password is in: $(cat leaks)"
		return 1
	fi
}

# every_command: the commands a user and a host run, outputs kept in
# cmd.*.out / cmd.*.err; each must exit 0.
every_command() {
	(cd proj &&
	pigeon send --create --to bob --from alice "with a password" \
		>../cmd.send.out 2>../cmd.send.err &&
	pigeon agents >../cmd.agents.out 2>../cmd.agents.err &&
	pigeon inbox --agent bob >../cmd.inbox.out 2>../cmd.inbox.err &&
	printf '{"session_id":"sec-%s","cwd":"%s","prompt_id":"p-%s","hook_event_name":"UserPromptSubmit","prompt":"hi"}\n' \
		"$1" "$PWD" "$1" |
		PIGEON_AGENT=bob "$HOOK" claude UserPromptSubmit \
		>../cmd.hook.out 2>../cmd.hook.err &&
	pigeon audit --agent bob >../cmd.audit.out 2>../cmd.audit.err &&
	pigeon audit verify >../cmd.verify.out 2>../cmd.verify.err &&
	pigeon doctor >../cmd.doctor.out 2>../cmd.doctor.err &&
	pigeon doctor --json >../cmd.doctorj.out 2>../cmd.doctorj.err) &&
	jq -e ".hookSpecificOutput.additionalContext |
		contains(\"with a password\")" cmd.hook.out >/dev/null
}

test_case 'setup: a role that must give its password, owning the database' '
	pg_sql "CREATE ROLE $ROLE LOGIN PASSWORD ${SQ}$SECRET${SQ}
		IN ROLE pgn_password;
		ALTER DATABASE $PG_DBNAME OWNER TO $ROLE" &&
	PIGEON_DB=$DB_PW PGPASSFILE=/dev/null expect_code 1 pigeon agents \
		>out 2>err &&
	test_note "without the password: $(cat err)" &&
	grep -q "password" err
'

test_case 'the password in ~/.pgpass: every command works, nothing shows it' '
	printf "*:*:*:%s:%s\n" "$ROLE" "$SECRET" >"$HOME/.pgpass" &&
	chmod 600 "$HOME/.pgpass" &&
	PIGEON_DB=$DB_PW every_command pgpass &&
	no_secret cmd.* &&
	no_secret -r "$PIGEON_HOME"
'

test_case 'the password never reaches argv: /proc/PID/cmdline while pigeon waits' '
	(cd proj && PIGEON_DB=$DB_PW exec pigeon wait --agent bob --timeout 300 \
		>../wait.out 2>../wait.err) & pid=$! && bg_track $pid &&
	i=0 && while kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do
		pg_sql "SELECT 1 FROM pg_stat_activity WHERE usename = ${SQ}$ROLE${SQ}" |
			grep -q 1 && break
		sleep 0.1; i=$((i + 1))
	done &&
	kill -0 $pid && test $i -lt 600 &&
	tr "\0" " " </proc/$pid/cmdline >wait.cmdline &&
	test_note "pigeon wait runs as: $(cat wait.cmdline)" &&
	# A process may end between the glob and the read: skip it.
	for f in /proc/[0-9]*/cmdline; do
		{ tr "\0" "\n" <"$f"; } 2>/dev/null || :
	done >all.cmdlines &&
	no_secret all.cmdlines &&
	tr "\0" "\n" </proc/$pid/environ >wait.environ &&
	no_secret wait.environ &&
	(cd proj && PIGEON_DB=$DB_PW pigeon send --to bob --from alice wake >/dev/null) &&
	bg_wait $pid &&
	no_secret wait.out wait.err
'

test_case 'PGPASSFILE and a service file work the same' '
	mv "$HOME/.pgpass" pgpass.elsewhere &&
	PGPASSFILE=$TEST_DIR/pgpass.elsewhere PIGEON_DB=$DB_PW \
		every_command passfile &&
	no_secret cmd.* &&
	printf "[pigeon-test]\nhost=%s\nport=5432\ndbname=%s\nuser=%s\n" \
		"$SOCK_DIR" "$PG_DBNAME" "$ROLE" >services &&
	PGSERVICEFILE=$TEST_DIR/services PGPASSFILE=$TEST_DIR/pgpass.elsewhere \
		PIGEON_DB=service=pigeon-test every_command service &&
	no_secret cmd.* &&
	no_secret -r "$PIGEON_HOME"
'

test_case 'a wrong password fails with one line that does not hold it' '
	printf "*:*:*:%s:%s\n" "$ROLE" "$WRONG" >wrong.pgpass &&
	chmod 600 wrong.pgpass &&
	PGPASSFILE=$TEST_DIR/wrong.pgpass PIGEON_DB=$DB_PW \
		expect_error 1 "$SOCK_DIR" pigeon send --project proj --to bob \
		--from alice nope &&
	test_note "$(cat err)" &&
	no_secret out err &&
	printf "{\"session_id\":\"w\",\"cwd\":\"%s/proj\",\"prompt_id\":\"w\",\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"hi\"}\n" \
		"$TEST_DIR" >in.json &&
	PGPASSFILE=$TEST_DIR/wrong.pgpass PIGEON_DB=$DB_PW \
		expect_code 0 "$HOOK" claude UserPromptSubmit <in.json >out 2>err &&
	expect_empty out && expect_empty err &&
	PGPASSFILE=$TEST_DIR/wrong.pgpass PIGEON_DB=$DB_PW \
		pigeon doctor >doctor.out 2>&1 || :
	no_secret doctor.out "$PIGEON_HOME/hook.log" &&
	tail -n 1 "$PIGEON_HOME/hook.log" | grep -v "status=ok"
'

test_case 'a password written into PIGEON_DB is never echoed' '
	for db in "postgresql://$ROLE:$SECRET@/nodb?host=$SOCK_DIR" \
	    "host=$SOCK_DIR dbname=nodb user=$ROLE password=$SECRET"; do
		PIGEON_DB=$db expect_code 1 pigeon agents --project proj \
			>out 2>err &&
		test_note "$(cat err)" &&
		no_secret out err &&
		PIGEON_DB=$db pigeon doctor >doctor.out 2>&1 || :
		no_secret doctor.out || return 1
		printf "{\"session_id\":\"u\",\"cwd\":\"%s/proj\",\"prompt_id\":\"u\",\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"hi\"}\n" \
			"$TEST_DIR" | PIGEON_DB=$db "$HOOK" claude UserPromptSubmit \
			>out 2>err &&
		expect_empty out && expect_empty err &&
		no_secret "$PIGEON_HOME/hook.log" || return 1
	done
'

# As a role that may only SELECT, so that every write fails and names
# the database: an error line, and a hook run's line in hook.log.
RO=pgn_ro_$$
SHOWN="host=$SOCK_DIR port=5432 dbname=$PG_DBNAME user=$RO"

test_case 'setup: a role that may only SELECT' '
	pg_sql "CREATE ROLE $RO LOGIN;
		GRANT USAGE ON SCHEMA public TO $RO;
		GRANT SELECT ON ALL TABLES IN SCHEMA public TO $RO" &&
	PIGEON_DB=$SHOWN expect_error 1 "permission denied" \
		pigeon send --project proj --to bob --from alice nope &&
	test_note "$(cat err)"
'

# hook_as DB: one prompt hook run with PIGEON_DB=DB; neutral, silent.
hook_as() {
	printf "{\"session_id\":\"ro-%s\",\"cwd\":\"%s/proj\",\"prompt_id\":\"ro\",\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"hi\"}\n" \
		"$$" "$TEST_DIR" | PIGEON_DB=$1 "$HOOK" claude UserPromptSubmit \
		>hook.out 2>hook.err &&
	expect_empty hook.out && expect_empty hook.err
}

# Strings that hold the secret: a secret keyword, bare, quoted, in a URI
# and percent-encoded there; a mistyped keyword; strings libpq refuses,
# whose messages quote what it could not read.
test_case 'a secret keyword (sslpassword, in every form) or a string libpq refuses is never shown' '
	for db in "$SHOWN sslpassword=$SECRET" \
	    "$SHOWN sslpassword = ${SQ}x $SECRET${SQ}" \
	    "postgresql:///$PG_DBNAME?host=$SOCK_DIR&user=$RO&sslpassword=$SECRET" \
	    "postgresql:///$PG_DBNAME?host=$SOCK_DIR&user=$RO&ssl%70assword=$SECRET" \
	    "$SHOWN PASSWORD=$SECRET" \
	    "$SHOWN sslpassword=x $SECRET" \
	    "postgresql://$RO:$SECRET@[::1/$PG_DBNAME"; do
		PIGEON_DB=$db pigeon doctor >doctor.out 2>&1 || :
		PIGEON_DB=$db pigeon doctor --json >doctorj.out 2>&1 || :
		PIGEON_DB=$db expect_code 1 pigeon send --project proj \
			--to bob --from alice nope >out 2>err &&
		test_note "$(cat err)" &&
		hook_as "$db" &&
		no_secret doctor.out doctorj.out out err &&
		no_secret -r "$PIGEON_HOME" || return 1
		grep -qx "database: (PostgreSQL)" doctor.out || {
			cat doctor.out; return 1; }
	done &&
	grep -q "secret (sslpassword)" "$PIGEON_HOME/hook.log" &&
	grep -q "invalid connection option" "$PIGEON_HOME/hook.log"
'

test_case 'doctor, an error line and hook.log show the string by host, port, dbname and user only' '
	db="$SHOWN application_name=pgn-not-shown connect_timeout=7" &&
	PIGEON_DB=$db pigeon doctor >doctor.out 2>&1 || :
	grep -qxF "database: $SHOWN" doctor.out &&
	PIGEON_DB=$db expect_error 1 "database ${SQ}$SHOWN${SQ}: " \
		pigeon send --project proj --to bob --from alice nope &&
	hook_as "$db" &&
	tail -n 1 "$PIGEON_HOME/hook.log" >last.log &&
	grep -qF "database ${SQ}$SHOWN${SQ}: " last.log &&
	! grep -l "not-shown\|connect_timeout" doctor.out err last.log
'

test_case 'doctor reports the server, its version and the schema' '
	v=$(pg_sql "SHOW server_version" | cut -d" " -f1) &&
	schema=$(pg_sql "SELECT max(version) FROM pigeon_schema") &&
	test_note "server $v, schema $schema" &&
	grep -qxF "  server PostgreSQL $v at host $SOCK_DIR port 5432, database $PG_DBNAME" \
		cmd.doctor.out &&
	grep -qF "  schema version $schema (this pigeon: " cmd.doctor.out &&
	jq -e --arg v "$v" --argjson n "$schema" ".database.backend == \"postgresql\"
		and (.database.server | startswith(\"PostgreSQL \" + \$v))
		and .database.schema_version == \$n" cmd.doctorj.out >/dev/null
'

test_done
