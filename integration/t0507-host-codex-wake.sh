#!/bin/sh
# Codex's doorbell with the real Codex (decisions 0211, 0233): an idle
# terminal session of the pinned Codex, in tmux, against the mock model
# server, is woken by `pigeon send`, which runs `codex queue --thread ID
# --message LINE` detached; the woken turn's prompt hook delivers the
# mail, once. A second send while that ring is outstanding rings
# nothing more; low and reach.wake off ring nothing. Label "hosts";
# skipped (exit 77) when Codex cannot be installed, unless CI=true.
# Every wait is bounded by the event it waits for.
HOST=codex
. "$(dirname "$0")/hosts/lib.sh"

PROJ=$TEST_DIR/proj
# Not an empty .git (Codex's sandbox mounts one read-only; 0077).
mkdir -p "$PROJ/.git/pigeon-test" "$PROJ/w" || exit 2
if ! host_seed || ! "$PIG" install codex >/dev/null; then
	echo "Bail out! cannot set up codex in $HOME"
	exit 2
fi
# The sender finds codex on PATH, as a user's shell does.
SEND_PATH=$(dirname "$HOST_BIN"):$PATH

# wsend TO TEXT [ARGS]: send as tester from $PROJ; prints the id.
wsend() {
	ws_to=$1 ws_text=$2
	shift 2
	PATH=$SEND_PATH "$PIG" send --project "$PROJ" --create --from tester \
	    --to "$ws_to" "$@" "$ws_text" >sent.out || return 1
	sed -n 's/^queued #\([0-9]*\) for .*/\1/p' sent.out
}

# route_of ID: the route by which message ID was delivered, and how often.
route_of() {
	sql "SELECT count(*) || '|' || group_concat(route) FROM delivery
		WHERE message_id = $1"
}

# woken ID: the JSON status's "woken" of message ID ("null" if none).
woken() {
	"$PIG" status --project "$PROJ" --json "$1" | jq -c '.[0].woken'
}

# wait_until WHAT CMD...: poll CMD until it succeeds (60 s at most).
wait_until() {
	wu_what=$1
	shift
	wu_i=0
	until "$@" >/dev/null 2>&1; do
		wu_i=$((wu_i + 1))
		if [ "$wu_i" -ge 600 ]; then
			echo "error: $wu_what: not within 60 s" >&9
			cat "$PIGEON_HOME/wake.log" >&9 2>/dev/null
			live_screen >&9
			return 1
		fi
		sleep 0.1
	done
}

delivered() {
	"$PIG" status --project "$PROJ" --json "$1" |
	    jq -e '.[0].delivered != null'
}

# logged ID TEXT: wake.log has TEXT for message ID.
logged() {
	grep -q "msg=$1 .*$2" "$PIGEON_HOME/wake.log"
}

# range NAME FROM TEXT: the request log lines since FROM are turn NAME,
# once a model request holding TEXT is among them and the terminal shows
# the reply (the turn is over: the session is idle again).
range() {
	wait_until "a request with $3" sh -c \
	    "sed -n '$(($2 + 1)),\$p' '$REQLOG' | grep -qF -e '$3'" &&
	wait_until "the reply to the woken turn" sh -c \
	    "[ \$(tmux -S '$TEST_DIR/tmux.sock' capture-pane -p -t live \
	    -S -2000 | grep -c MOCK-REPLY) -ge $4 ]" &&
	echo "$2 $(wc -l <"$REQLOG")" >"$TEST_DIR/$1.range"
}

# bells NAME: how often the doorbell line is new in turn NAME's requests.
bells() {
	requests "$1" | jq "$LOG_JQ select(model_request) | .body |
		[turn[]] | count(\"Pigeon: mail is waiting for you\")" |
	    awk '{ n += $1 } END { print n + 0 }'
}

# codex_pids: the session's processes (the pane's and their children,
# only this test's: never another codex on the machine).
codex_pids() {
	cp_top=$(tmux -S "$TEST_DIR/tmux.sock" display -p -t live \
	    '#{pane_pid}') || return 1
	cp_all=$cp_top cp_new=$cp_top
	while [ -n "$cp_new" ]; do
		cp_next=
		for cp_p in $cp_new; do
			cp_next="$cp_next $(pgrep -P "$cp_p" | tr '\n' ' ')"
		done
		cp_new=$(echo $cp_next)
		cp_all="$cp_all $cp_new"
	done
	echo $cp_all
}

# watch_shows PATTERN: pigeon watch, in a terminal of its own beside the
# session's, shows a line matching PATTERN (grep -E).
watch_shows() {
	tmux -S "$TEST_DIR/tmux.sock" new-session -d -s watch -x 120 -y 30 \
	    -c "$PROJ" env PIGEON_HOME="$PIGEON_HOME" HOME="$HOME" \
	    TERM=xterm-256color "$PIG" watch --color never &&
	wait_until "watch showing $1" sh -c "tmux -S '$TEST_DIR/tmux.sock' \
	    capture-pane -p -t watch | grep -Eq -e '$1'"
	ws_ok=$?
	tmux -S "$TEST_DIR/tmux.sock" kill-session -t watch 2>/dev/null
	return "$ws_ok"
}

test_case 'an idle Codex terminal session is bound by its first prompt' '
	AGENT=sleeper &&
	live_start "$PROJ/w" &&
	live_prompt p1 "first prompt" &&
	sql_is "SELECT count(*) FROM session s JOIN agent a ON a.id =
		s.agent_id WHERE a.name = '"'"'sleeper'"'"' AND s.host =
		'"'"'codex'"'"' AND s.transcript_path LIKE '"'"'%/.codex/sessions/%'"'"'" 1
'

test_case 'pigeon send wakes it through codex queue; the next request carries the mail once' '
	from=$(wc -l <"$REQLOG") &&
	replies=$(live_replies) &&
	t0=$(date +%s%N) &&
	id=$(wsend sleeper PGN-QBELL-1) &&
	t1=$(date +%s%N) &&
	woken "$id" | jq -e ".via == \"codex-queue\"" >/dev/null &&
	wait_until "message $id delivered" delivered "$id" &&
	range q1 "$from" PGN-QBELL-1 $((replies + 1)) &&
	arrives q1 PGN-QBELL-1 codex &&
	test "$(bells q1)" = 1 &&
	test "$(route_of "$id")" = "1|prompt" &&
	wait_until "the ring logged" logged "$id" "codex-queue: exit 0" &&
	woken "$id" | jq -e ".heard == true" >/dev/null &&
	"$PIG" status --project "$PROJ" "$id" |
		grep -q ": woken .* by codex-queue, delivered .* via prompt, session codex:" &&
	"$PIG" journal --project "$PROJ" sleeper |
		grep -q "woken     #$id rang session codex:" &&
	sql_is "SELECT auto_continues FROM session s JOIN agent a
		ON a.id = s.agent_id WHERE a.name = '"'"'sleeper'"'"'" 1 &&
	test_note "codex: the send that rang took $(((t1 - t0) / 1000000)) ms"
'

# Stopped, the session takes nothing from its queue: the ring stays
# outstanding (no delivery) until it goes on.
test_case 'a second send while the ring is outstanding rings nothing; both arrive once' '
	pids=$(codex_pids) && test -n "$pids" &&
	from=$(wc -l <"$REQLOG") &&
	replies=$(live_replies) &&
	kill -STOP $pids &&
	a=$(wsend sleeper PGN-QBELL-A-2) &&
	b=$(wsend sleeper PGN-QBELL-B-2 --priority urgent) &&
	woken "$a" | jq -e ".via == \"codex-queue\"" >/dev/null &&
	test "$(woken "$b")" = null &&
	wait_until "the ring logged" logged "$a" "codex-queue: exit 0" &&
	watch_shows "#$a tester -> sleeper .* woken [0-9]+[smhd] ago by codex-queue" &&
	kill -CONT $pids &&
	wait_until "message $a delivered" delivered "$a" &&
	wait_until "message $b delivered" delivered "$b" &&
	range q2 "$from" PGN-QBELL-A-2 $((replies + 1)) &&
	arrives q2 PGN-QBELL-A-2 codex &&
	arrives q2 PGN-QBELL-B-2 codex &&
	test "$(bells q2)" = 1 &&
	! grep -q "msg=$b " "$PIGEON_HOME/wake.log" &&
	test "$("$PIG" journal --project "$PROJ" sleeper |
		grep -c "woken ")" = 2
	ok=$?
	kill -CONT $pids 2>/dev/null
	test "$ok" = 0
'

test_case 'low priority and reach.wake off wake nothing' '
	low=$(wsend sleeper PGN-QBELL-LOW-3 --priority low) &&
	test "$(woken "$low")" = null &&
	mkdir -p "$PROJ/.pigeon" &&
	echo "{\"reach\": {\"wake\": \"off\"}}" >"$PROJ/.pigeon/config.json" &&
	off=$(wsend sleeper PGN-QBELL-OFF-3 --priority urgent) &&
	test "$(woken "$off")" = null &&
	! grep -q "msg=$low \|msg=$off " "$PIGEON_HOME/wake.log" &&
	test "$("$PIG" journal --project "$PROJ" sleeper | grep -c "woken ")" = 2 &&
	"$PIG" status --project "$PROJ" "$low" "$off" |
		grep -c ": queued since" | grep -qx 2
	ok=$?
	rm -f "$PROJ/.pigeon/config.json"
	test "$ok" = 0
'

test_case 'pigeon hosts: the Codex wake cell is measured by this test' '
	"$PIG" hosts --json | jq -e ".[] | select(.host == \"codex\") |
		.doorbell.cap == \"yes\" and .doorbell.via == \"codex-queue\" and
		(.doorbell.evidence | contains(\"t0507-host-codex-wake\"))" >/dev/null
'

live_stop
test_done
