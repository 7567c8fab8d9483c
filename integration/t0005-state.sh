#!/bin/sh
# Where state lives: $PIGEON_HOME (made 0700, parents too), else
# $XDG_STATE_HOME/pigeon, else ~/.local/state/pigeon; pigeon.db is 0600;
# PIGEON_DB and --db name another database, --db first.
. "$(dirname "$0")/lib.sh"

mode() {
	stat -c %a "$1"
}
agents_in() {	# agents_in DB: names of its agents, one line
	sql "SELECT group_concat(name, ${SQ} ${SQ}) FROM agent" "$1"
}

test_case 'PIGEON_HOME is created 0700, with its missing parents' '
	umask 022 &&
	PIGEON_HOME=$TEST_DIR/deep/er/home pigeon agent add alice >/dev/null &&
	test "$(mode deep/er/home)" = 700 &&
	test "$(mode deep/er/home/pigeon.db)" = 600 &&
	test "$(agents_in deep/er/home/pigeon.db)" = alice
'

test_case 'an existing PIGEON_HOME is tightened to 0700' '
	mkdir -m 755 open &&
	PIGEON_HOME=$TEST_DIR/open pigeon agents >/dev/null &&
	test "$(mode open)" = 700 &&
	test "$(mode open/pigeon.db)" = 600
'

test_case 'pigeon.db is 0600 whatever the umask' '
	umask 000 &&
	PIGEON_HOME=$TEST_DIR/loose pigeon agents >/dev/null &&
	test "$(mode loose)" = 700 &&
	test "$(mode loose/pigeon.db)" = 600
'

test_case 'without PIGEON_HOME: $XDG_STATE_HOME/pigeon' '
	unset PIGEON_HOME &&
	XDG_STATE_HOME=$TEST_DIR/xdg pigeon agent add bob >/dev/null &&
	test "$(mode xdg/pigeon)" = 700 &&
	test "$(mode xdg/pigeon/pigeon.db)" = 600 &&
	test "$(agents_in xdg/pigeon/pigeon.db)" = bob &&
	test ! -e "$HOME/.local"
'

test_case 'PIGEON_HOME wins over XDG_STATE_HOME' '
	PIGEON_HOME=$TEST_DIR/mine XDG_STATE_HOME=$TEST_DIR/xdg2 \
		pigeon agent add carol >/dev/null &&
	test "$(agents_in mine/pigeon.db)" = carol &&
	test ! -e xdg2
'

test_case 'without either: $HOME/.local/state/pigeon' '
	unset PIGEON_HOME XDG_STATE_HOME &&
	HOME=$TEST_DIR/user pigeon agent add dave >/dev/null &&
	test "$(mode user/.local/state/pigeon)" = 700 &&
	test "$(mode user/.local/state/pigeon/pigeon.db)" = 600 &&
	test "$(agents_in user/.local/state/pigeon/pigeon.db)" = dave
'

test_case 'a relative XDG_STATE_HOME is ignored (the spec wants absolute)' '
	unset PIGEON_HOME &&
	mkdir rel &&
	cd rel &&
	HOME=$TEST_DIR/user2 XDG_STATE_HOME=relative \
		pigeon agent add erin >/dev/null &&
	test ! -e relative &&
	test "$(agents_in "$TEST_DIR/user2/.local/state/pigeon/pigeon.db")" = erin
'

test_case 'PIGEON_DB names another database' '
	PIGEON_DB=$TEST_DIR/env.db pigeon agent add frank >/dev/null &&
	test "$(mode env.db)" = 600 &&
	test "$(agents_in env.db)" = frank &&
	PIGEON_DB=$TEST_DIR/env.db pigeon send --to frank "via env" >/dev/null &&
	sql_is "SELECT body FROM message" "via env" env.db &&
	test ! -e "$DB"
'

test_case '--db names another database, and wins over PIGEON_DB' '
	pigeon agent add --db "$TEST_DIR/flag.db" gina >/dev/null &&
	test "$(mode flag.db)" = 600 &&
	PIGEON_DB=$TEST_DIR/env.db pigeon agent add --db flag.db hank >/dev/null &&
	test "$(agents_in flag.db)" = "gina hank" &&
	test "$(agents_in env.db)" = frank &&
	PIGEON_DB=$TEST_DIR/env.db pigeon agents --json --db flag.db |
		jq -e "map(.name) == [\"gina\", \"hank\"]" &&
	test ! -e "$DB"
'

test_case 'the default database holds none of the above' '
	pigeon agents >out &&
	echo "no agents in scope global" >expect && test_cmp expect out &&
	test "$(mode "$PIGEON_HOME")" = 700 &&
	test "$(mode "$DB")" = 600
'

# first_hooks ROUND: 24 first hooks of four hosts at once on the fresh
# home fresh.ROUND; each one's output goes to fresh.ROUND/out.I.
first_hooks() {
	fh_home=$TEST_DIR/fresh.$1
	mkdir -p "$fh_home.proj/.git" &&
	fh_i=0 &&
	while [ $fh_i -lt 24 ]; do
		case $((fh_i % 4)) in
		0) fh_h=cursor fh_e=sessionStart fh_f=01-sessionStart-ide.json ;;
		1) fh_h=claude fh_e=SessionStart fh_f=01-SessionStart-startup.json ;;
		2) fh_h=codex fh_e=SessionStart fh_f=01-SessionStart-startup.json ;;
		3) fh_h=gemini fh_e=SessionStart fh_f=01-SessionStart-startup.json ;;
		esac
		fixture_payload "$PGN_SRC/tests/fixtures/payloads/$fh_h/$fh_f" \
		    "$fh_home.proj" "r$1-s$fh_i" >"$fh_home.in.$fh_i" || return 1
		echo "$fh_h $fh_e" >"$fh_home.argv.$fh_i"
		fh_i=$((fh_i + 1))
	done &&
	fh_i=0 &&
	while [ $fh_i -lt 24 ]; do
		# shellcheck disable=SC2046 # host and event, two words
		PIGEON_HOME=$fh_home pigeon-hook $(cat "$fh_home.argv.$fh_i") \
		    <"$fh_home.in.$fh_i" >"$fh_home.out.$fh_i" 2>&1 &
		fh_i=$((fh_i + 1))
	done &&
	wait
}

# rerun_failed_open ROUND: a first hook that failed open under the load
# of the other 23 (it passed its deadline before it claimed anything, or
# found the database busy for as long; hook.log says which) printed no
# introduction. Each is run again alone until it completes: counted in
# fresh.ROUND.reruns, and hook.log must hold one fail-open line per run.
rerun_failed_open() {
	: >"fresh.$1.reruns" &&
	for f in fresh.$1.out.*; do
		grep -q "you are agent" "$f" && continue
		i=${f##*.} && n=0 &&
		while ! grep -q "you are agent" "$f"; do
			n=$((n + 1)) &&
			echo "$i" >>"fresh.$1.reruns" &&
			test "$n" -le 20 || return 1
			# shellcheck disable=SC2046 # host and event, two words
			PIGEON_HOME=$TEST_DIR/fresh.$1 pigeon-hook \
			    $(cat "fresh.$1.argv.$i") <"fresh.$1.in.$i" \
			    >"$f" 2>&1 || return 1
		done
	done
}

test_case 'first use: 24 concurrent first hooks, 10 times, all introduced' '
	r=0 &&
	while [ $r -lt 10 ]; do
		first_hooks $r &&
		rerun_failed_open $r || {
			echo "round $r: a hook never introduced its agent:"
			cat fresh.$r/hook.log; return 1; }
		for f in fresh.$r.out.*; do
			grep -q "you are agent" "$f" ||
			{ echo "no introduction in $f:"; cat "$f" \
			    "fresh.$r/hook.log"; return 1; }
		done &&
		test "$(sql "SELECT count(*) FROM session" fresh.$r/pigeon.db)" = 24 &&
		test "$(sql "SELECT count(DISTINCT agent_id) FROM session" \
		    fresh.$r/pigeon.db)" = 24 &&
		# on a loaded machine a hook may pass its deadline while its
		# claim commits: "late", and its output is still printed; or
		# fail open before it claims anything (rerun above)
		! grep -v -e "status=ok" \
		    -e "status=late .*deadline passed while the claim committed; delivered" \
		    -e "status=deadline .*gave up at the deadline: nothing was claimed" \
		    -e "status=busy .* is busy: another process held its write lock" \
		    fresh.$r/hook.log &&
		test "$(grep -c -e "status=deadline" -e "status=busy" \
		    fresh.$r/hook.log)" = "$(wc -l <fresh.$r.reruns)" &&
		test "$(mode fresh.$r/pigeon.db)" = 600 || return 1
		r=$((r + 1))
	done
'

test_case 'first use still refuses a foreign SQLite file, left as it was' '
	mkdir -m 700 foreign && sqlite3 foreign/pigeon.db "CREATE TABLE t(x)" &&
	cp foreign/pigeon.db foreign.keep &&
	fixture_payload "$PGN_SRC/tests/fixtures/payloads/claude/01-SessionStart-startup.json" \
	    "$TEST_DIR" f1 >f1.json &&
	PIGEON_HOME=$TEST_DIR/foreign pigeon-hook claude SessionStart <f1.json >out &&
	expect_empty out &&
	grep -q "was not made by pigeon" foreign/hook.log &&
	(PIGEON_HOME=$TEST_DIR/foreign && export PIGEON_HOME &&
	    expect_error 1 "was not made by pigeon" pigeon agents) &&
	cmp foreign/pigeon.db foreign.keep
'

test_case 'a symlinked pigeon.db is refused, naming it; its target is untouched' '
	mkdir -m 700 linked && echo precious >outside && cp outside outside.keep &&
	ln -s "$TEST_DIR/outside" linked/pigeon.db &&
	(PIGEON_HOME=$TEST_DIR/linked && export PIGEON_HOME &&
	    expect_error 1 "database file ${SQ}$TEST_DIR/linked/pigeon.db${SQ} is a symbolic link" \
		pigeon agents) &&
	fixture_payload "$PGN_SRC/tests/fixtures/payloads/claude/01-SessionStart-startup.json" \
	    "$TEST_DIR" l1 >l1.json &&
	PIGEON_HOME=$TEST_DIR/linked pigeon-hook claude SessionStart <l1.json >out &&
	expect_empty out &&
	grep -q "status=i/o error .*is a symbolic link" linked/hook.log &&
	cmp outside outside.keep &&
	test ! -e outside-wal && test ! -e linked/pigeon.db-wal
'

test_case 'a loose pigeon.db, -wal and -shm of ours are made 0600' '
	mkdir -m 700 loosedb &&
	PIGEON_HOME=$TEST_DIR/loosedb pigeon agent add ivy >/dev/null &&
	chmod 644 loosedb/pigeon.db loosedb/pigeon.db-wal loosedb/pigeon.db-shm &&
	PIGEON_HOME=$TEST_DIR/loosedb pigeon agents >/dev/null &&
	test "$(mode loosedb/pigeon.db)" = 600 &&
	test "$(mode loosedb/pigeon.db-wal)" = 600 &&
	test "$(mode loosedb/pigeon.db-shm)" = 600 &&
	test "$(agents_in loosedb/pigeon.db)" = ivy
'

if [ "$(id -u)" = 0 ]; then
test_case 'a PIGEON_HOME of another user is refused, by root too' '
	mkdir -m 755 theirs && chown 65534:65534 theirs &&
	(PIGEON_HOME=$TEST_DIR/theirs && export PIGEON_HOME &&
	    expect_error 1 "state home ${SQ}$TEST_DIR/theirs${SQ} belongs to uid 65534, not to you (uid 0)" \
		pigeon agents &&
	    grep -q "set PIGEON_HOME to a directory of your own" err) &&
	fixture_payload "$PGN_SRC/tests/fixtures/payloads/claude/01-SessionStart-startup.json" \
	    "$TEST_DIR" t1 >t1.json &&
	PIGEON_HOME=$TEST_DIR/theirs pigeon-hook claude SessionStart <t1.json >out &&
	expect_empty out &&
	test -z "$(ls -A theirs)" &&
	test "$(mode theirs)" = 755
'

test_case 'a pigeon.db of another user is refused, left as it was' '
	mkdir -m 700 given &&
	PIGEON_HOME=$TEST_DIR/given pigeon agent add jay >/dev/null &&
	chown 65534:65534 given/pigeon.db && chmod 644 given/pigeon.db &&
	cp given/pigeon.db given.keep &&
	(PIGEON_HOME=$TEST_DIR/given && export PIGEON_HOME &&
	    expect_error 1 "belongs to uid 65534, not to you (uid 0): run pigeon as its owner" \
		pigeon agents) &&
	test "$(mode given/pigeon.db)" = 644 &&
	cmp given/pigeon.db given.keep
'
else
	test_note "not root: the other-user cases need chown (skipped)"
fi

test_done
