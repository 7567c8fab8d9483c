#!/bin/sh
# pigeon watch in a real terminal (tmux): it shows the scope's agents,
# queued messages (urgent and low marked), deliveries, batons and live
# leases, redraws when the database
# changes (a ping shows up without a key pressed), shows a hostile body
# escaped, survives a resize (and says when the terminal is too small)
# and a replaced database, and gives the terminal back exactly as it was
# (termios, main screen) after q, Ctrl-C and SIGTERM. Bad starts are one
# line: no terminal, a terminal too small, no database named by --db or
# PIGEON_DB (the default one is made, decision 0244).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

ESC=$(printf '\033')

# watch_in_term [ARGS...]: pigeon watch in the terminal, its exit code
# in ./rc afterwards, the termios before and after in ./before, ./after.
watch_in_term() {
	rm -f rc before after sh.pid
	term_start env PATH="$PATH" HOME="$HOME" PIGEON_HOME="$PIGEON_HOME" \
	    TERM=xterm-256color sh -c 'trap : INT; echo $$ >sh.pid; stty -g >before
	    pigeon watch "$@" 2>watch.err; echo $? >rc; stty -g >after
	    echo "watch ended"; exec sleep 600' _ "$@"
}

# watch_pid: the pid of the pigeon watch the terminal's shell runs.
watch_pid() {
	wp_i=0
	while ! pgrep -P "$(cat sh.pid 2>/dev/null || echo 0)" -x pigeon; do
		wp_i=$((wp_i + 1))
		[ "$wp_i" -lt 600 ] || return 1
		sleep 0.1
	done
}

# restored CODE: watch exited CODE; termios and the main screen are back.
restored() {
	term_wait "the end" "watch ended" &&
	test "$(cat rc)" = "$1" &&
	test_cmp before after &&
	test "$(tmux -S "$TERM_SOCK" display -p -t t '#{alternate_on}')" = 0 &&
	expect_empty watch.err
}

# The README's live view starts before any session (decision 0244).
test_case 'the default database missing: watch makes it and shows the empty scope' '
	test ! -e "$DB" &&
	watch_in_term &&
	term_wait "the empty scope" "AGENTS 0" &&
	test -f "$DB" &&
	sql_is "SELECT count(*) FROM agent" 0 &&
	term_keys q &&
	restored 0 &&
	term_stop
'
term_stop

test_case 'PIGEON_DB naming a missing file: one line, exit 1, no file made' '
	term_start env PATH="$PATH" HOME="$HOME" PIGEON_HOME="$PIGEON_HOME" \
	    PIGEON_DB="$TEST_DIR/none2.db" TERM=xterm-256color \
	    sh -c "pigeon watch 2>watch.err; echo \$? >rc; echo watch ended; exec sleep 600" &&
	term_wait "the end" "watch ended" &&
	test "$(cat rc)" = 1 &&
	expect_one_error watch.err "no database at" &&
	test ! -e none2.db &&
	term_stop
'
term_stop

test_case 'setup: two agents, one ping queued' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon send --to bob --from alice "first ping" >/dev/null
'

test_case 'not a terminal: one line, exit 2' '
	expect_error 2 "watch draws on a terminal" pigeon watch
'

test_case 'a missing database: one line, exit 1, and no file made' '
	watch_in_term --db "$TEST_DIR/none.db" &&
	term_wait "the end" "watch ended" &&
	test "$(cat rc)" = 1 &&
	expect_one_error watch.err "no database at" &&
	test ! -e none.db &&
	term_stop
'
term_stop

test_case 'a terminal too small: one line, exit 1' '
	tmux -S "$TERM_SOCK" -f /dev/null new-session -d -s t -x 40 -y 8 \
	    -c "$TEST_DIR" env PATH="$PATH" PIGEON_HOME="$PIGEON_HOME" \
	    sh -c "pigeon watch 2>watch.err; echo \$? >rc; echo watch ended; exec sleep 600" &&
	term_wait "the end" "watch ended" &&
	test "$(cat rc)" = 1 &&
	expect_one_error watch.err "the terminal is 40x8: watch needs at least 60x12" &&
	term_stop
'
term_stop

test_case 'it shows the scope, then a ping as it is sent, without a key' '
	watch_in_term &&
	term_wait "first frame" "AGENTS 2" &&
	term_wait "the queued ping" "alice -> bob" &&
	term_screen >screen && grep -q "first ping" screen &&
	test "$(tmux -S "$TERM_SOCK" display -p -t t "#{alternate_on}")" = 1 &&
	pigeon send --to alice --from bob "second ping, live" >/dev/null &&
	term_wait "a ping sent while it runs" "second ping, live" &&
	pigeon read --agent bob >/dev/null &&
	term_wait "the delivery" "via cli" &&
	term_screen >screen &&
	grep -q "alice -> bob via cli  first ping" screen
'

test_case 'urgent and low mail are marked; a lease shows live, then goes' '
	pigeon send --to alice --from bob --priority urgent "build broken" >/dev/null &&
	term_wait "the urgent ping" ", urgent  build broken" &&
	pigeon send --to alice --from bob --priority low "no hurry" >/dev/null &&
	term_wait "the low ping" ", low  no hurry" &&
	pigeon lease take --agent bob --reason "the schema" "*.sql" >/dev/null &&
	term_wait "the lease" "bob *.sql exclusive, " &&
	term_screen >screen &&
	grep -q "bob \*\.sql exclusive, [0-9]*m left  the schema$" screen &&
	term_wait "one lease" "LEASES 1" &&
	pigeon lease release --agent bob --all >/dev/null &&
	term_wait "no lease" "LEASES 0" &&
	# An expiry changes no file: the once-a-second read takes it away
	# (10 s: time for the redraw that shows it first, on a loaded machine;
	# term_wait allows 30 s for it to go).
	pigeon lease take --agent bob --ttl 10s "*.md" >/dev/null &&
	term_wait "a short lease" "bob *.md exclusive, " &&
	term_wait "the short lease expired" "LEASES 0" &&
	pigeon read --agent alice >/dev/null &&
	term_wait "the urgent delivery" "bob -> alice via cli, urgent  build broken"
'

test_case 'a body with escape sequences is shown escaped' '
	title=$(tmux -S "$TERM_SOCK" display -p -t t "#{pane_title}") &&
	pigeon send --to alice --from bob \
	    "$(printf "evil \033]2;pwned\007\033[2J end")" >/dev/null &&
	term_wait "the escaped body" "evil \\x1b]2;pwned\\x07\\x1b[2J end" &&
	test "$(tmux -S "$TERM_SOCK" display -p -t t "#{pane_title}")" = "$title" &&
	term_screen >screen && ! grep -qF "$ESC" screen
'

test_case 'a resize redraws; too small says so, then it comes back' '
	tmux -S "$TERM_SOCK" resize-window -t t -x 62 -y 14 &&
	term_wait "narrow" "AGENTS 2" &&
	term_lacks "narrow" "too small" &&
	tmux -S "$TERM_SOCK" resize-window -t t -x 40 -y 8 &&
	term_wait "too small" "too small: 40x8, need 60x12" &&
	tmux -S "$TERM_SOCK" resize-window -t t -x 100 -y 30 &&
	term_wait "large again" "DELIVERIES" &&
	term_lacks "large again" "too small"
'

test_case 'a replaced database: it shows the new file' '
	pigeon agent add --db "$TEST_DIR/other.db" carol >/dev/null &&
	pigeon agent add --db "$TEST_DIR/other.db" dave >/dev/null &&
	sqlite3 other.db ".backup $TEST_DIR/new.db" &&
	mv new.db "$DB" &&
	term_wait "the new file" "AGENTS 2" &&
	term_wait "its agents" "carol" &&
	term_screen >screen && grep -q dave screen && ! grep -q alice screen
'

test_case 'q quits: exit 0, the terminal as it was' '
	term_keys q &&
	restored 0 &&
	term_stop
'
term_stop

test_case 'Ctrl-C quits: exit 0, the terminal as it was' '
	watch_in_term &&
	term_wait "first frame" "AGENTS" &&
	term_keys C-c &&
	restored 0 &&
	term_stop
'
term_stop

test_case 'SIGTERM: exit 143, the terminal as it was' '
	watch_in_term &&
	term_wait "first frame" "AGENTS" &&
	pid=$(watch_pid) &&
	kill -TERM "$pid" &&
	restored 143 &&
	term_stop
'
term_stop

test_done
