# integration/hosts/scenarios.sh: the end-to-end scenarios, the same for
# each real host; sourced by integration/t05NN-host-HOST.sh with HOST set.
# See "Real hosts" in docs/testing.md for what each one proves.
#
# Every turn is a real, non-interactive run of the host (claude -p,
# codex exec, gemini -p; "resume" continues the latest session of the
# directory), with Pigeon's hooks installed by `pigeon install HOST`
# into the test's own HOME, against the mock model server. Assertions
# read the mock's request log: a text is new in exactly the request of
# the turn where it belongs, once, and never new again later (it may
# stay in the history of later requests, once).
. "$(dirname "$0")/hosts/lib.sh"

PROJ=$TEST_DIR/proj
# The project's .git is not empty, as a real one never is: Codex's
# sandbox mounts an empty read-only tmpfs at a .git that holds no
# repository, and Pigeon's scope walk passes over an empty mount
# (docs/decisions/0077). Not a git repository either (no HEAD), so the
# hosts run no git of their own here.
mkdir -p "$PROJ/.git/pigeon-test" || exit 2
if ! host_seed; then
	echo "Bail out! cannot write the $HOST configuration in $HOME"
	exit 2
fi
cp "$HOST_CONFIG" config.orig || exit 2
if [ "$HOST" = codex ]; then
	cp "$HOME/.codex/config.toml" toml.orig || exit 2
fi

# Where a hook's text lands in the request (see log.jq "landing").
# On a resumed session, the session start hook delivers what waits; but
# a resume whose payload repeats the previous one byte for byte within
# 30 s counts as the same turn (docs/hook-protocol.md), and then the
# prompt hook right after it delivers instead.
case $HOST in
claude)
	AT_START=claude:SessionStart AT_PROMPT=claude:UserPromptSubmit
	AT_RESUME="claude:(SessionStart|UserPromptSubmit)"
	;;
*) AT_START=$HOST AT_PROMPT=$HOST AT_RESUME=$HOST ;;
esac
# After a tool call (PostToolUse / AfterTool), and what a stop hook makes
# the host go on with (Stop / AfterAgent): see log.jq "landing". Claude
# puts a stop hook's reason in its continuation request twice ("Stop hook
# feedback:" and "Stop hook blocking error from command: …").
case $HOST in
claude) AT_TOOL=claude:PostToolUse STOP_TIMES=2 ;;
*) AT_TOOL=$HOST STOP_TIMES=1 ;;
esac
AT_STOP=$HOST:stop
# After `gemini --resume`, the restored history holds a tool's
# functionResponse part twice (the same part; one delivery).
TOOL_HISTORY=1
[ "$HOST" != gemini ] || TOOL_HISTORY=2
# The events `pigeon install` registers, and the files of its permission
# edit (besides $HOST_CONFIG).
case $HOST in
gemini) EVENTS="SessionStart BeforeAgent AfterTool AfterAgent BeforeTool" ;;
*) EVENTS="SessionStart UserPromptSubmit PostToolUse Stop PreToolUse" ;;
esac
POLICY=$HOME/.gemini/policies/pigeon.toml

# ping TO TEXT: queue TEXT from alice for TO in $PROJ; prints the id.
ping() {
	"$PIG" send --project "$PROJ" --create --from alice --to "$1" "$2" \
	    >sent.out || return 1
	sed -n 's/^queued #\([0-9]*\) for .*/\1/p' sent.out
}

# sessions_of NAME: how many sessions agent NAME is bound to.
sessions_of() {
	sql "SELECT count(*) FROM session s JOIN agent a ON a.id = s.agent_id
		WHERE a.name = '$1' AND s.host = '$HOST'"
}

# provider CONTEXT [SLEEP]: make $PROJ/.pigeon/context a provider that
# answers CONTEXT, after SLEEP seconds (with a child that holds its
# stdout as long) if given.
provider() {
	{
		echo "#!/bin/sh"
		echo "cat >/dev/null"
		if [ -n "${2:-}" ]; then
			echo "sleep $2 &"
			echo "sleep $2"
		fi
		printf "echo '%s'\n" "$(jq -cn --arg c "$1" \
		    '{schema: "pigeon.prompt-context/v1", context: $c}')"
	} >"$PROJ/.pigeon/context" && chmod +x "$PROJ/.pigeon/context"
}

# later NAME TEXT LANDING [TIMES]: TEXT is in no part of the first model
# request of turn NAME, and new in a later one, TIMES times (default 1),
# landed as LANDING; the requests after that carry it only as history.
later() {
	counts "$1" "$2" >counts.out || return 1
	if awk -v n="${4:-1}" -v at="^($3)\$" '
		NR == 1 { if ($1 != 0) bad = 1; next }
		!seen && $2 == 0 { if ($1 != 0) bad = 1; next }
		!seen { seen = 1; if ($1 != n || $2 != n || $3 !~ at) bad = 1
			next }
		{ if ($1 != n || $2 != 0) bad = 1 }
		END { exit bad || !seen }' counts.out; then
		return 0
	fi
	show "$1" "$2"
	echo "want: 0 0 first, then ${4:-1} ${4:-1} $3 once, then ${4:-1} 0" >&9
	return 1
}

# route_of ID: the route by which message ID was delivered, and how often.
route_of() {
	sql "SELECT count(*) || '|' || group_concat(route) FROM delivery
		WHERE message_id = $1"
}

# msg_of TEXT: "SENDER|RECIPIENT|REPLY_TO|QUEUED" of the one message
# whose body is TEXT (QUEUED 1 while not delivered).
msg_of() {
	sql "SELECT m.sender || '|' || a.name || '|' ||
		coalesce(m.reply_to, '') || '|' || (m.delivered_ms IS NULL)
		FROM message m JOIN agent a ON a.id = m.recipient_id
		WHERE m.body = '$1'"
}

# new_log N: the lines hook.log gained after its first N.
new_log() {
	tail -n "+$(($1 + 1))" "$PIGEON_HOME/hook.log" 2>/dev/null
}

test_case "pigeon install $HOST adds its hooks, its permission edit, and keeps the user's" '
	"$PIG" install "$HOST" >install.out &&
	hook=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook &&
	for ev in $EVENTS; do
		# bare, or guarded where the host runs sh (decision 0225)
		test "$(($(grep -cF "\"$hook $HOST $ev\"" "$HOST_CONFIG") +
		    $(grep -cF "exec $hook $HOST $ev\"" "$HOST_CONFIG")))" = 1 ||
			{ echo "error: no $ev hook in $HOST_CONFIG" >&9; exit 1; }
	done &&
	grep -qF "user-hook" "$HOST_CONFIG" &&
	! cmp -s config.orig "$HOST_CONFIG" &&
	case $HOST in
	claude) jq -e --arg r "Bash($PIG send:*)" \
		".permissions.allow | index(\$r) != null" "$HOST_CONFIG" ;;
	codex) grep -qF "writable_roots = [\"$PIGEON_HOME\"]" \
		"$HOME/.codex/config.toml" ;;
	gemini) grep -qF "\"$PIG send\"" "$POLICY" ;;
	esac >/dev/null
'

test_case 'a ping sent before the session starts arrives in its first request, once' '
	mkdir "$PROJ/s" &&
	id=$(ping bob PGN-BACKLOG-1) && test -n "$id" &&
	AGENT=bob &&
	host_run s1 "$PROJ/s" new "first prompt" &&
	arrives s1 PGN-BACKLOG-1 "$AT_START" &&
	requests s1 | grep -q "\[#$id from alice, [0-9]*s ago\]" &&
	intro_line s1 "Pigeon: you are agent " | grep -qF "\"bob\" ($HOST session)" &&
	sql_is "SELECT count(*), route FROM delivery WHERE message_id = $id" \
		"1|session-start" &&
	test -s user-hook.log
'

test_case 'a ping sent between two prompts arrives in the second, never again' '
	body=$(printf "PGN-BETWEEN-2 h\303\251llo \"quoted\" \\\\ back\ttab") &&
	id=$(ping bob "$body") && test -n "$id" &&
	AGENT=bob &&
	host_run s2 "$PROJ/s" resume "second prompt" &&
	arrives s2 PGN-BETWEEN-2 "$AT_RESUME" &&
	requests s2 | jq -r ".. | strings" | grep -qxF "  $body" &&
	not_new s2 PGN-BACKLOG-1 &&
	host_run s3 "$PROJ/s" resume "third prompt" &&
	not_new s3 PGN-BACKLOG-1 &&
	not_new s3 PGN-BETWEEN-2 &&
	sql_is "SELECT count(*) FROM delivery WHERE message_id = $id" 1 &&
	test "$(sessions_of bob)" = 1
'

# live_turns: three prompts into the live session, a ping for livy queued
# between the first and the second (its id in live.id).
live_turns() {
	live_prompt l1 "first live prompt" &&
	ping livy PGN-LIVE-10 >live.id && test -s live.id &&
	live_prompt l2 "second live prompt" &&
	live_prompt l3 "third live prompt"
}

test_case 'a live session: a ping between two prompts comes with the second, by the prompt hook' '
	if [ "$HOST" != claude ] && ! command -v tmux >/dev/null 2>&1; then
		test "${CI:-}" != true || { echo "error: no tmux" >&9; exit 1; }
		test_note "SKIPPED the live $HOST session: no tmux"
		exit 0
	fi &&
	mkdir "$PROJ/live" && AGENT=livy &&
	live_start "$PROJ/live" &&
	{ live_turns; lv=$?; live_stop; test "$lv" = 0; } &&
	id=$(cat live.id) &&
	intro_line l1 "Pigeon: you are agent " |
		grep -qF "\"livy\" ($HOST session)" &&
	absent l1 PGN-LIVE-10 &&
	arrives l2 PGN-LIVE-10 "$AT_PROMPT" &&
	not_new l3 PGN-LIVE-10 &&
	sql_is "SELECT count(*), route FROM delivery WHERE message_id = $id" \
		"1|prompt" &&
	test "$(sessions_of livy)" = 1
'

test_case 'two sessions bound to two agents exchange a message and a reply' '
	mkdir "$PROJ/a" "$PROJ/b" &&
	AGENT=alpha && host_run xa1 "$PROJ/a" new "hello, I am a" &&
	AGENT=beta && host_run xb1 "$PROJ/b" new "hello, I am b" &&
	intro_line xb1 "Other agents here: " | grep -qF "alpha ($HOST, seen" &&
	send=$(intro_line xa1 "Send a message: ") &&
	send=${send#Send a message: } &&
	case $send in *"send --from alpha --to NAME \"text\"") ;; *) false ;; esac &&
	send=${send%"--to NAME \"text\""} &&
	AGENT=alpha &&
	host_run xa2 "$PROJ/a" resume \
		"mock-shell: $send--to beta \"PGN-QUESTION-3\"" &&
	q=$(requests xa2 | grep -o "queued #[0-9]* for beta" | head -n 1 |
		tr -dc 0-9) &&
	test -n "$q" &&
	reply=$(intro_line xb1 "Reply to message N: ") &&
	reply=${reply#Reply to message N: } &&
	reply=${reply%"--to SENDER --reply-to N \"text\""} &&
	AGENT=beta &&
	host_run xb2 "$PROJ/b" resume \
		"mock-shell: $reply--to alpha --reply-to $q \"PGN-ANSWER-4\"" &&
	arrives xb2 PGN-QUESTION-3 "$AT_RESUME" &&
	requests xb2 | grep -q "\[#$q from alpha, [0-9]*s ago\]" &&
	a=$(requests xb2 | grep -o "queued #[0-9]* for alpha" | head -n 1 |
		tr -dc 0-9) &&
	test -n "$a" &&
	AGENT=alpha && host_run xa3 "$PROJ/a" resume "any news?" &&
	arrives xa3 PGN-ANSWER-4 "$AT_RESUME" &&
	requests xa3 | grep -q "\[#$a from beta, [0-9]*s ago, re #$q\]" &&
	not_new xa3 PGN-QUESTION-3 2 &&
	test "$(sessions_of alpha)" = 1 && test "$(sessions_of beta)" = 1 &&
	sql_is "SELECT reply_to FROM message WHERE id = $a" "$q"
'

test_case 'a ping sent while a tool runs is in the same turn'"'"'s next request, once' '
	mkdir "$PROJ/t" && AGENT=tina &&
	# alice sends from outside tina'"'"'s session: inside it (Claude Code
	# exports PIGEON_SESSION to its shell) a send is tina'"'"'s own (0134)
	host_run t1 "$PROJ/t" new "mock-shell: env -u PIGEON_SESSION $PIG send --project $PROJ --create --from alice --to tina PGN-TOOL-1\"\"1" &&
	later t1 PGN-TOOL-11 "$AT_TOOL" &&
	requests t1 | grep -q "queued #[0-9]* for tina" &&
	id=$(sql "SELECT id FROM message WHERE body = '"'"'PGN-TOOL-11'"'"'") &&
	test "$(route_of "$id")" = "1|after-tool" &&
	host_run t2 "$PROJ/t" resume "next prompt" &&
	not_new t2 PGN-TOOL-11 "$TOOL_HISTORY" &&
	test "$(route_of "$id")" = "1|after-tool" &&
	test "$(sessions_of tina)" = 1
'

test_case 'a ping queued as the turn ends makes the host go on with it' '
	mkdir "$PROJ/e" && AGENT=stan &&
	host_run e1 "$PROJ/e" new "mock-before-reply: $PIG send --project $PROJ --create --from alice --to stan PGN-STOP-1\"\"2" &&
	later e1 PGN-STOP-12 "$AT_STOP" "$STOP_TIMES" &&
	test "$(counts e1 MOCK | wc -l)" -ge 2 &&
	id=$(sql "SELECT id FROM message WHERE body = '"'"'PGN-STOP-12'"'"'") &&
	test "$(route_of "$id")" = "1|stop" &&
	host_run e2 "$PROJ/e" resume "next prompt" &&
	not_new e2 PGN-STOP-12 "$STOP_TIMES" &&
	test "$(route_of "$id")" = "1|stop"
'

# Claude Code only: the idle wake. `pigeon install claude --rewake` adds
# a background (asyncRewake) Stop entry beside the ordinary one; once the
# turn has ended it waits for mail (pigeon-hook claude Stop --rewake) and,
# exiting 2 with the mail on stderr, makes Claude start a new turn with it
# (docs/decisions/0076, 0081). Claude runs it in the background only with
# a live input (interactive, or stream-json on stdin): a live session
# here. The governor (maxAutoContinues 1) then keeps a second ping
# queued: the woken turn was a continuation, and no prompt came between.
# A plain claude -p turn runs the entry in the foreground: it does not
# wait there (status=foreground). The doorbell (reach.wake) is off here:
# a stream-json session has a messaging socket too, and this scenario
# is the waiter's alone (the doorbell's are below).
# rewake_checks: the assertions of the idle-wake scenario (below).
rewake_checks() {
	absent w1 PGN-REWAKE-14 &&
	arrives w2 PGN-REWAKE-14 claude:rewake &&
	test "$(requests w2 | jq "$LOG_JQ select(model_request) |
		.body | [turn[]] | count(\"Pigeon woke you: mail arrived\")" |
		awk "{ n += \$1 } END { print n }")" = 1 &&
	test "$(route_of "$(cat rewake.id)")" = "1|stop" &&
	test "$(sessions_of rita)" = 1 &&
	sql_is "SELECT auto_continues FROM session s JOIN agent a
		ON a.id = s.agent_id WHERE a.name = 'rita'" 1 &&
	absent w3 PGN-REWAKE-GOVERNED-15 &&
	test "$(msg_of PGN-REWAKE-GOVERNED-15)" = "alice|rita||1" &&
	grep -q " mode=rewake session=claude:[^ ]* status=woken " rewake.log &&
	grep -q " mode=rewake session=claude:[^ ]* status=governed " rewake.log &&
	test "$(grep -c " mode=rewake .* status=foreground " rewake.log)" = 1
}

test_case 'Claude: pigeon install claude --rewake wakes an idle session once, governed' '
	if [ "$HOST" != claude ]; then
		test_note "claude only"; exit 0
	fi &&
	cp "$HOST_CONFIG" before-rewake.json &&
	"$PIG" install claude --rewake >rewake-install.out &&
	hook=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook &&
	jq -e --arg c "[ -x $hook ] || exit 0; exec $hook claude Stop --rewake" "[.hooks.Stop[].hooks[] |
		select(.command | endswith(\" --rewake\"))] == [{type: \"command\",
		command: \$c, asyncRewake: true, timeout: 600,
		rewakeMessage: \"Pigeon woke you: mail arrived while you were idle.\"}]" \
		"$HOST_CONFIG" >/dev/null &&
	test "$(grep -cF "exec $hook claude Stop\"" "$HOST_CONFIG")" = 1 &&
	"$PIG" doctor >doctor.out && grep -q "idle wake on" doctor.out &&
	mkdir -p "$PROJ/.pigeon" "$PROJ/w" && AGENT=rita &&
	echo "{\"reach\": {\"maxAutoContinues\": 1, \"rewakeWaitS\": 30, \"wake\": \"off\"}}" \
		>"$PROJ/.pigeon/config.json" &&
	rm -f "$TEST_DIR/live.in" &&
	n=$(hook_lines) &&
	live_start "$PROJ/w" &&
	{
		live_prompt w1 "first prompt" &&
		sleep 1 && w_from=$(wc -l <"$REQLOG") &&
		t_ping=$(date +%s%N) && ping rita PGN-REWAKE-14 >rewake.id &&
		i=0 && while [ "$(wc -l <"$REQLOG")" -le "$w_from" ] &&
			[ "$i" -lt 3000 ]; do
			i=$((i + 1)); sleep 0.01
		done &&
		t_req=$(date +%s%N) &&
		i=0 && while [ "$(live_replies)" -lt 2 ] && [ "$i" -lt 300 ]; do
			i=$((i + 1)); sleep 0.1
		done &&
		sleep 1 && echo "$w_from $(wc -l <"$REQLOG")" >w2.range &&
		ping rita PGN-REWAKE-GOVERNED-15 >governed.id &&
		g_from=$(wc -l <"$REQLOG") && sleep 3 &&
		echo "$g_from $(wc -l <"$REQLOG")" >w3.range &&
		test "$(live_replies)" = 2
		lv=$?; t0=$(date +%s%N); live_stop; t1=$(date +%s%N)
		test "$lv" = 0
	} &&
	test_note "claude: the woken turn asked the model" \
		"$(((t_req - t_ping) / 1000000)) ms after pigeon send; the session" \
		"ended in $(((t1 - t0) / 1000000)) ms (no waiter left: governed)" &&
	AGENT=pia && host_run wp "$PROJ/w" new "a plain claude -p turn" &&
	new_log "$n" >rewake.log &&
	{ rewake_checks; ok=$?; } &&
	"$PIG" install claude --no-rewake >no-rewake.out &&
	rm "$PROJ/.pigeon/config.json" &&
	cmp before-rewake.json "$HOST_CONFIG" &&
	test "$ok" = 0 &&
	"$PIG" read --project "$PROJ" --agent rita >read.out &&
	grep -q PGN-REWAKE-GOVERNED-15 read.out
'
# Whatever happened above, the later scenarios run without the idle wake.
if [ "$HOST" = claude ]; then
	"$PIG" install claude --no-rewake >/dev/null 2>&1
	rm -f "$PROJ/.pigeon/config.json"
fi

# ---- Claude Code only: the doorbell (decisions 0175-0177) -------------
# An interactive Claude Code session (the terminal UI in tmux, the idle
# wake's waiter off) whose turn has ended is rung by `pigeon send`
# through its messaging socket; the woken turn's prompt hook delivers
# the mail, once. Every wait is bounded by the event it waits for.

# bell_start DIR AGENT: Claude's terminal UI in DIR as AGENT, its socket
# under $TEST_DIR/cc (Claude falls back to /tmp/cc-socks-UID for a long
# path); returns once its sessions file says idle and Pigeon's session
# start has bound it. BELL_PID: its pid; BELL_FILE: its sessions file.
bell_start() {
	bs_dir=$1 bs_cfg=$HOME/.claude
	mkdir -p "$TEST_DIR/cc" || return 1
	# What a person accepted once: onboarding, this key, trusting DIR.
	jq -n --arg p "$bs_dir" '{hasCompletedOnboarding: true,
		theme: "dark", customApiKeyResponses: {approved:
		["0123456789abcdefghij"], rejected: []}, projects: {($p):
		{hasTrustDialogAccepted: true,
		hasCompletedProjectOnboarding: true}}}' >"$bs_cfg/.claude.json" ||
		return 1
	bs_n=$(hook_lines)
	tmux -S "$TEST_DIR/bell.sock" -f /dev/null new-session -d -s bell \
	    -x 150 -y 40 -c "$bs_dir" env -i PATH="$PATH" HOME="$HOME" \
	    LANG=C.UTF-8 TERM=xterm-256color TMPDIR="$TEST_DIR/cc" \
	    PIGEON_HOME="$PIGEON_HOME" PIGEON_AGENT="$2" \
	    CLAUDE_CONFIG_DIR="$bs_cfg" \
	    ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" \
	    ANTHROPIC_API_KEY=sk-pigeon-mock-0123456789abcdefghij \
	    DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
	    DISABLE_ERROR_REPORTING=1 \
	    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
	    "$HOST_BIN" || return 1
	bs_i=0
	BELL_FILE=
	until [ -n "$BELL_FILE" ] &&
	    [ "$(jq -r .status "$BELL_FILE" 2>/dev/null)" = idle ] &&
	    new_log "$bs_n" | grep -q "event=SessionStart .* agent=$2 "; do
		bs_i=$((bs_i + 1))
		if [ "$bs_i" -ge 600 ]; then
			echo "error: claude did not get idle in 60 s:" >&9
			tmux -S "$TEST_DIR/bell.sock" capture-pane -p -t bell >&9
			return 1
		fi
		sleep 0.1
		BELL_FILE=$(grep -l "\"kind\":\"interactive\"" \
		    "$bs_cfg"/sessions/*.json 2>/dev/null | head -n 1)
	done
	BELL_PID=$(jq -r .pid "$BELL_FILE")
}

bell_stop() {
	kill -CONT "$BELL_PID" 2>/dev/null
	tmux -S "$TEST_DIR/bell.sock" kill-server 2>/dev/null
	bs_i=0
	while kill -0 "$BELL_PID" 2>/dev/null && [ "$bs_i" -lt 100 ]; do
		bs_i=$((bs_i + 1)); sleep 0.1
	done
	rm -f "$HOME/.claude/.claude.json"
}

# bell_delivered ID: wait (60 s at most) until message ID is delivered.
bell_delivered() {
	bd_i=0
	until "$PIG" status --project "$PROJ" --json "$1" |
	    jq -e '.[0].delivered != null' >/dev/null; do
		bd_i=$((bd_i + 1))
		if [ "$bd_i" -ge 600 ]; then
			echo "error: message $1 was not delivered in 60 s" >&9
			"$PIG" status --project "$PROJ" "$1" >&9
			cat "$PIGEON_HOME/wake.log" >&9 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
}

# bell_woken ID: the JSON status's "woken" of message ID ("null" if none).
bell_woken() {
	"$PIG" status --project "$PROJ" --json "$1" | jq -c '.[0].woken'
}

# bell_send TO TEXT [ARGS]: send as tester; the id.
bell_send() {
	bsd_to=$1 bsd_text=$2
	shift 2
	"$PIG" send --project "$PROJ" --from tester --to "$bsd_to" "$@" \
	    "$bsd_text" >bell-sent.out || return 1
	sed -n 's/^queued #\([0-9]*\) for .*/\1/p' bell-sent.out
}

# bell_range NAME FROM: the request log lines since FROM are turn NAME,
# once a model request holding TEXT ($3) is among them (60 s at most).
bell_range() {
	br_i=0
	until sed -n "$(($2 + 1)),\$p" "$REQLOG" | grep -qF -e "$3"; do
		br_i=$((br_i + 1))
		[ "$br_i" -lt 600 ] || return 1
		sleep 0.1
	done
	echo "$2 $(wc -l <"$REQLOG")" >"$TEST_DIR/$1.range"
}

test_case 'Claude: an idle interactive session is woken by pigeon send, its next request carries the mail once' '
	if [ "$HOST" != claude ]; then
		test_note "claude only"; exit 0
	fi &&
	mkdir -p "$PROJ/bell" &&
	bell_start "$PROJ/bell" sleeper &&
	{
		from=$(wc -l <"$REQLOG") &&
		t0=$(date +%s%N) &&
		id=$(bell_send sleeper PGN-BELL-21) &&
		t1=$(date +%s%N) &&
		bell_woken "$id" | jq -e ".via == \"claude-socket\" and .heard" \
		    >/dev/null &&
		bell_delivered "$id" &&
		bell_range b1 "$from" PGN-BELL-21 &&
		arrives b1 PGN-BELL-21 claude:UserPromptSubmit &&
		test "$(requests b1 | jq "$LOG_JQ select(model_request) | .body |
			[turn[]] | count(\"Pigeon: mail is waiting for you\")" |
			awk "{ n += \$1 } END { print n }")" = 1 &&
		test "$(route_of "$id")" = "1|prompt" &&
		"$PIG" status --project "$PROJ" "$id" | grep -q ": woken .* by claude-socket, delivered .* via prompt, session claude:" &&
		"$PIG" journal --project "$PROJ" sleeper | grep -q "woken     #$id rang session claude:" &&
		sql_is "SELECT auto_continues FROM session s JOIN agent a
			ON a.id = s.agent_id WHERE a.name = '"'"'sleeper'"'"'" 1
		ok=$?
		test_note "claude: the send that rang took $(((t1 - t0) / 1000000)) ms"
		bell_stop
		test "$ok" = 0
	}
'

test_case 'Claude: a second send while the frame is outstanding rings nothing; both arrive once' '
	if [ "$HOST" != claude ]; then
		test_note "claude only"; exit 0
	fi &&
	mkdir -p "$PROJ/bell2" &&
	bell_start "$PROJ/bell2" sleeper2 &&
	{
		# Stopped, the session takes nothing: the frame stays
		# outstanding (the kernel holds it) until it goes on.
		kill -STOP "$BELL_PID" &&
		from=$(wc -l <"$REQLOG") &&
		a=$(bell_send sleeper2 PGN-BELL-A-22) &&
		b=$(bell_send sleeper2 PGN-BELL-B-22 --priority urgent) &&
		bell_woken "$a" | jq -e ".via == \"claude-socket\"" >/dev/null &&
		test "$(bell_woken "$b")" = null &&
		kill -CONT "$BELL_PID" &&
		bell_delivered "$a" && bell_delivered "$b" &&
		bell_range b2 "$from" PGN-BELL-A-22 &&
		test "$(requests b2 | jq "$LOG_JQ select(model_request) | .body |
			[turn[]] | count(\"Pigeon: mail is waiting for you\")" |
			awk "{ n += \$1 } END { print n }")" = 1 &&
		arrives b2 PGN-BELL-A-22 "claude:UserPromptSubmit" &&
		arrives b2 PGN-BELL-B-22 "claude:UserPromptSubmit" &&
		test "$("$PIG" journal --project "$PROJ" sleeper2 |
			grep -c "woken ")" = 1
		ok=$?
		bell_stop
		test "$ok" = 0
	}
'

test_case 'Claude: low priority and reach.wake off wake nothing' '
	if [ "$HOST" != claude ]; then
		test_note "claude only"; exit 0
	fi &&
	mkdir -p "$PROJ/bell3" &&
	bell_start "$PROJ/bell3" sleeper3 &&
	{
		low=$(bell_send sleeper3 PGN-BELL-LOW-23 --priority low) &&
		test "$(bell_woken "$low")" = null &&
		mkdir -p "$PROJ/.pigeon" &&
		echo "{\"reach\": {\"wake\": \"off\"}}" >"$PROJ/.pigeon/config.json" &&
		off=$(bell_send sleeper3 PGN-BELL-OFF-23 --priority urgent) &&
		test "$(bell_woken "$off")" = null &&
		test "$(jq -r .status "$BELL_FILE")" = idle &&
		! "$PIG" journal --project "$PROJ" sleeper3 | grep -q "woken " &&
		"$PIG" status --project "$PROJ" "$low" "$off" | grep -c ": queued since" | grep -qx 2
		ok=$?
		rm -f "$PROJ/.pigeon/config.json"
		bell_stop
		test "$ok" = 0
	}
'

# From a subdirectory of the project, for every host: Codex's sandbox
# mounts an empty read-only .git there (a writable root without one),
# which the scope walk passes over to find the project.
test_case 'a model that follows the introduction sends through its own shell tool, host at its defaults' '
	mkdir "$PROJ/i" && AGENT=ivy && HOST_MODE=defaults && dir=$PROJ/i &&
	host_run i1 "$dir" new "mock-intro-send: bob PGN-INTRO-13" &&
	intro_line i1 "Send a message: " | grep -qF "send --from ivy --to NAME" &&
	requests i1 | grep -q "queued #[0-9]* for bob" &&
	test "$(msg_of PGN-INTRO-13)" = "ivy|bob||1"
'

# Codex: its default sandbox, workspace-write, with no --dangerously flag
# at all (its hooks do not even run); /tmp, where the test lives, taken
# out of the writable roots so that only the project and what pigeon
# install added to writable_roots (the state directory) are writable.
test_case 'Codex in its default sandbox replies with pigeon send; without the writable root it cannot' '
	if [ "$HOST" != codex ]; then
		test_note "codex only"; exit 0
	fi &&
	"$PIG" send --project "$PROJ" --from tina --to ivy PGN-QUESTION-16 \
		>sent.out &&
	id=$(sed -n "s/^queued #\([0-9]*\) for .*/\1/p" sent.out) &&
	test -n "$id" &&
	"$PIG" read --project "$PROJ" --agent ivy >read.out &&
	grep -q PGN-QUESTION-16 read.out &&
	AGENT= && HOST_MODE=bare &&
	notmp="-c sandbox_workspace_write.exclude_slash_tmp=true -c sandbox_workspace_write.exclude_tmpdir_env_var=true" &&
	HOST_ARGS="$notmp -c sandbox_workspace_write.writable_roots=[]" &&
	host_run d0 "$PROJ" new "mock-shell: $PIG send --from ivy --to tina --reply-to $id \"PGN-REPLY-17\"" &&
	requests d0 | grep -q "readonly database\|unable to open database" &&
	test -z "$(msg_of PGN-REPLY-17)" &&
	HOST_ARGS=$notmp &&
	host_run d1 "$PROJ" new "mock-shell: $PIG send --from ivy --to tina --reply-to $id \"PGN-REPLY-15\"" &&
	requests d1 | grep -q "queued #[0-9]* for tina" &&
	test "$(msg_of PGN-REPLY-15)" = "ivy|tina|$id|1"
'

test_case 'the project reminder and the provider context reach every prompt' '
	mkdir -p "$PROJ/.pigeon" "$PROJ/p" &&
	jq -n "{instructions: {promptReminder: \"PGN-REMINDER-5: run the tests\"},
		promptContext: {command: [\".pigeon/context\"],
		timeoutMs: 5000}}" >"$PROJ/.pigeon/config.json" &&
	provider "PGN-PROVIDER-6 from the provider" &&
	(cd "$PROJ" && "$PIG" provider allow) >allow.out &&
	n=$(hook_lines) &&
	AGENT=carol && host_run p1 "$PROJ/p" new "prompt one" &&
	arrives p1 PGN-REMINDER-5 "$AT_PROMPT" &&
	arrives p1 PGN-PROVIDER-6 "$AT_PROMPT" &&
	requests p1 | grep -q "PGN-REMINDER-5.*PGN-PROVIDER-6" &&
	host_run p2 "$PROJ/p" resume "prompt two" &&
	again p2 PGN-REMINDER-5 "$AT_PROMPT" &&
	again p2 PGN-PROVIDER-6 "$AT_PROMPT" &&
	test "$(new_log "$n" | grep -c " provider=ok ")" = 2
'

test_case 'a provider past the deadline: the turn works, the hook ends within 1.5 s' '
	provider PGN-SLOW-7 30 &&
	(cd "$PROJ" && "$PIG" provider status) >status.out &&
	grep -q "withdrawn" status.out &&
	(cd "$PROJ" && "$PIG" provider allow) >allow.out &&
	n=$(hook_lines) &&
	AGENT=carol && host_run p3 "$PROJ/p" resume "prompt three" &&
	again p3 PGN-REMINDER-5 "$AT_PROMPT" &&
	absent p3 PGN-SLOW-7 &&
	not_new p3 PGN-PROVIDER-6 2 &&
	new_log "$n" >log.new &&
	ms=$(sed -n "s/.* provider=timeout ms=\([0-9]*\) .*/\1/p" log.new) &&
	test -n "$ms" && test "$ms" -le 1500 &&
	# Not held by the provider: the turn ends before its 30 s sleep
	# would (a bound of what is guarded, not of how fast a turn is).
	test "$(ms_of p3)" -lt 30000 &&
	test_note "$HOST: provider cut after $ms ms; turn $(ms_of p3) ms," \
		"the one before $(ms_of p2) ms"
'

test_case 'a provider not allowed: the reminder alone, no delay' '
	(cd "$PROJ" && "$PIG" provider deny) >deny.out &&
	n=$(hook_lines) &&
	AGENT=carol && host_run p4 "$PROJ/p" resume "prompt four" &&
	again p4 PGN-REMINDER-5 "$AT_PROMPT" &&
	not_new p4 PGN-PROVIDER-6 2 &&
	absent p4 PGN-SLOW-7 &&
	new_log "$n" | grep -q " provider=not-allowed ms=[01] " &&
	test "$(ms_of p4)" -lt 30000
'

# baton_scenario: a turn whose model runs `pigeon handoff` in its shell
# leaves a baton; a resume does not take it, the next new session does,
# at its session start, once; a later one finds none. Claude Code runs
# without PIGEON_AGENT, so the CLI knows its session only from the
# PIGEON_SESSION its session start hook exported (CLAUDE_ENV_FILE);
# Codex and Gemini CLI, which have no such mechanism, name the agent.
baton_scenario() {
	mkdir "$PROJ/h" &&
	AGENT=hana && [ "$HOST" != claude ] || AGENT= &&
	host_run h1 "$PROJ/h" new "mock-shell: $PIG handoff PGN-BATON-1\"\"9 >/dev/null" &&
	sql_is "SELECT count(*) FROM baton" 1 &&
	sql_is "SELECT count(*) FROM baton b JOIN session s ON s.key = b.session
		AND s.agent_id = b.sender_id AND s.host = '$HOST'
		WHERE b.body = 'PGN-BATON-19' AND b.consumed_ms IS NULL" 1 &&
	absent h1 PGN-BATON-19 &&
	host_run h2 "$PROJ/h" resume "a resumed prompt" &&
	absent h2 PGN-BATON-19 &&
	sql_is "SELECT count(*) FROM baton WHERE consumed_ms IS NULL" 1 &&
	host_run h3 "$PROJ/h" new "a new session" &&
	arrives h3 PGN-BATON-19 "$AT_START" &&
	requests h3 | grep -q "\[baton #[0-9]* from [a-z-]*, [0-9]*s ago\]" &&
	sql_is "SELECT count(*), d.route FROM delivery d JOIN baton b
		ON b.message_id = d.message_id
		WHERE b.consumed_session != b.session AND d.host = '$HOST'" \
		"1|handoff" &&
	host_run h4 "$PROJ/h" resume "a resumed prompt again" &&
	not_new h4 PGN-BATON-19 &&
	host_run h5 "$PROJ/h" new "another new session" &&
	absent h5 PGN-BATON-19 &&
	sql_is "SELECT count(*) FROM delivery WHERE route = 'handoff'" 1
}

test_case 'a baton left through the shell is taken by the next new session, not a resume, once' '
	baton_scenario
'

# ---- an acknowledgement asked and given through the shell (0157) -------

# ack_asked TURN BODY: the id of the message BODY that sam's model queued
# for ada with --ack in turn TURN (the command's output, in the turn's
# next request), checked in the table: asked within 30m, not yet given.
ack_asked() {
	aa_id=$(requests "$1" | grep -o "queued #[0-9]* for ada" |
		head -n 1 | tr -dc 0-9) &&
	test -n "$aa_id" &&
	sql_is "SELECT m.sender, a.name, m.ack_ms, m.acked_ms IS NULL
		FROM message m JOIN agent a ON a.id = m.recipient_id
		WHERE m.id = $aa_id AND m.body = '$2'" "sam|ada|1800000|1" \
		>&9 &&
	echo "$aa_id"
}

# ack_given TURN ID: ada's turn TURN read Pigeon's line on how to
# acknowledge ID, and its model's pigeon ack answered in the next request.
ack_given() {
	requests "$1" | grep -qF "[the sender asks for an acknowledgement within 30m: $PIG ack $2" &&
	requests "$1" | grep -q "acknowledged #$2 from sam"
}

# Two sessions of the real host, two agents: sam's model runs pigeon send
# --ack in its shell tool; the message is in ada's first request, with
# Pigeon's line on how to acknowledge; ada's model runs pigeon ack in its
# shell tool, the host at its defaults: for Claude Code only the
# Bash(PIGEON ack:*) rule pigeon install wrote lets it run (no
# --allowedTools), for Codex its workspace-write sandbox with the state
# directory as a writable root. Claude Code and Codex only: Gemini CLI's
# suite is near its time limit, and the path is the same.
test_case 'a message sent with --ack through the shell is acknowledged through the shell; status shows it' '
	case $HOST in
	claude | codex) ;;
	*) test_note "claude and codex only"; exit 0 ;;
	esac &&
	{ test "$HOST" != claude || jq -e --arg r "Bash($PIG ack:*)" \
		".permissions.allow | index(\$r) != null" "$HOST_CONFIG" \
		>/dev/null; } &&
	mkdir "$PROJ/ks" "$PROJ/kr" &&
	AGENT=sam &&
	host_run k1 "$PROJ/ks" new \
		"mock-shell: $PIG send --create --ack --to ada PGN-ACK-2\"\"0" &&
	id=$(ack_asked k1 PGN-ACK-20) &&
	AGENT=ada && HOST_MODE=defaults &&
	host_run k2 "$PROJ/kr" new "mock-shell: $PIG ack $id done" &&
	arrives k2 PGN-ACK-20 "$AT_START" &&
	ack_given k2 "$id" &&
	test "$(route_of "$id")" = "1|session-start" &&
	sql_is "SELECT ack_text, acked_ms >= delivered_ms FROM message
		WHERE id = $id" "done|1" &&
	"$PIG" status --project "$PROJ" "$id" >status.out &&
	grep -q "^#$id sam -> ada: delivered .* via session-start, session $HOST:[^,]*, host $HOST; acknowledged [0-9T:-]*Z ([0-9]*[smhd] ago): done\$" status.out &&
	"$PIG" status --project "$PROJ" --json "$id" >status.json &&
	jq -e --argjson id "$id" "length == 1 and (.[0] | .id == \$id and
		.state == \"acknowledged\" and .from == \"sam\" and
		.to == \"ada\" and .route == \"session-start\" and
		.host == \"$HOST\" and
		.ack.within_ms == 1800000 and .ack.text == \"done\" and
		.ack.acknowledged != null and .ack.reply == null)" \
		status.json >/dev/null
'

# ---- an acknowledgement between two different real hosts (0192) -------

# Claude Code's model sends --ack through its shell tool as sam; Codex,
# installed beside it in the same HOME (other_host), delivers it to ada
# at its session start and ada's model acknowledges through Codex's
# shell tool, Codex at its defaults (workspace-write sandbox, the state
# directory a writable root); then sam's model, in Claude Code again,
# reads `pigeon status` through its shell tool: acknowledged, delivered
# by Codex. Run by the Claude Code suite only (one pair is the proof;
# the same pair the other way would double its time).
test_case 'an --ack message from Claude Code is acknowledged in Codex; Claude Code sees it acknowledged' '
	if [ "$HOST" != claude ]; then
		test_note "the Claude Code suite runs it"; exit 0
	fi &&
	if ! other_host codex; then
		[ "${CI:-}" = true ] && exit 1
		test_note "skipped: codex cannot be installed"; exit 0
	fi &&
	mkdir "$PROJ/xs" "$PROJ/xr" &&
	AGENT=sam &&
	host_run x1 "$PROJ/xs" new \
		"mock-shell: $PIG send --create --ack --to ada PGN-XACK-3\"\"0" &&
	id=$(ack_asked x1 PGN-XACK-30) &&
	AGENT=ada &&
	HOST_MODE=defaults as_host codex host_run x2 "$PROJ/xr" new \
		"mock-shell: $PIG ack $id done in codex" &&
	arrives x2 PGN-XACK-30 codex &&
	ack_given x2 "$id" &&
	test "$(route_of "$id")" = "1|session-start" &&
	sql_is "SELECT d.host, m.ack_text, m.acked_ms >= m.delivered_ms
		FROM message m JOIN delivery d ON d.message_id = m.id
		WHERE m.id = $id" "codex|done in codex|1" &&
	AGENT=sam &&
	host_run x3 "$PROJ/xs" new "mock-shell: $PIG status $id" &&
	requests x3 | grep -q "#$id sam -> ada: delivered [^;]* via session-start, session codex:[^,]*, host codex; acknowledged [0-9T:-]*Z ([0-9]*[smhd] ago): done in codex" &&
	"$PIG" status --project "$PROJ" --json "$id" >status.json &&
	jq -e "length == 1 and (.[0] | .state == \"acknowledged\" and
		.host == \"codex\" and .ack.text == \"done in codex\")" \
		status.json >/dev/null
'

# ---- path leases, enforced before each tool call (decision 0156) --------

# The host's edit of $PROJ/lease/f.txt (its text made NEW), and its read
# of it, as one mock tool call: Claude's Edit and Read, Codex's
# apply_patch heredoc through its shell tool (it offers no apply_patch
# tool to a model it does not know), Gemini's replace and read_file.
lease_edit() {
	case $HOST in
	claude) printf "%s\n" "mock-tool: Edit {\"file_path\":\"$PROJ/lease/f.txt\",\"old_string\":\"$1\",\"new_string\":\"$2\"}" ;;
	codex) printf "%s\n" "mock-tool: exec_command {\"cmd\":\"apply_patch <<'EOF'\\n*** Begin Patch\\n*** Update File: f.txt\\n@@\\n-$1\\n+$2\\n*** End Patch\\nEOF\\n\"}" ;;
	gemini) printf "%s\n" "mock-tool: replace {\"file_path\":\"$PROJ/lease/f.txt\",\"old_string\":\"$1\",\"new_string\":\"$2\",\"instruction\":\"edit\"}" ;;
	esac
}
lease_read() {
	case $HOST in
	claude) printf "%s\n" "mock-tool: Read {\"file_path\":\"$PROJ/lease/f.txt\"}" ;;
	codex) printf "%s\n" "mock-shell: cat f.txt" ;;
	gemini) printf "%s\n" "mock-tool: read_file {\"file_path\":\"$PROJ/lease/f.txt\"}" ;;
	esac
}
# denied_in NAME TEXT: TEXT is in no part of the first model request of
# turn NAME, and new in a later one (the tool call's denial).
denied_in() {
	counts "$1" "$2" >counts.out || return 1
	awk 'NR == 1 { if ($1 != 0) bad = 1; next } $2 > 0 { seen = 1 }
		END { exit bad || !seen }' counts.out && return 0
	show "$1" "$2"
	return 1
}
# Claude -p edits files only in acceptEdits mode (a test's choice, not
# something Pigeon installs).
LEASE_ARGS=
[ "$HOST" != claude ] || LEASE_ARGS="--permission-mode acceptEdits"

test_case 'a write of a file another agent leased is denied: the reason in the next request, the file unchanged' '
	mkdir -p "$PROJ/lease" && echo one >"$PROJ/lease/f.txt" &&
	"$PIG" agent add --project "$PROJ" lena >/dev/null &&
	(cd "$PROJ" && "$PIG" lease take --agent lena --reason "PGN-LEASE-WHY" \
	    lease/ >/dev/null) &&
	AGENT=olaf HOST_ARGS=$LEASE_ARGS &&
	host_run l1 "$PROJ/lease" new "$(lease_edit one two)" &&
	test "$(cat "$PROJ/lease/f.txt")" = one &&
	denied_in l1 "lease/f.txt is leased by lena" &&
	requests l1 | grep -q "PGN-LEASE-WHY" &&
	requests l1 | grep -qF "send --to lena" &&
	grep -q " host=$HOST .* status=deny .*path=lease/f.txt holder=lena" \
	    "$PIGEON_HOME/hook.log"
'

test_case 'the holder'"'"'s own edit and another'"'"'s read pass; after release the edit passes' '
	AGENT=lena HOST_ARGS=$LEASE_ARGS &&
	host_run l2 "$PROJ/lease" new "$(lease_edit one two)" &&
	test "$(cat "$PROJ/lease/f.txt")" = two &&
	AGENT=olaf &&
	host_run l3 "$PROJ/lease" new "$(lease_read)" &&
	requests l3 | grep -q "two" &&
	absent l3 "is leased by" &&
	(cd "$PROJ" && "$PIG" lease release --agent lena --all >/dev/null) &&
	host_run l4 "$PROJ/lease" new "$(lease_edit two three)" &&
	test "$(cat "$PROJ/lease/f.txt")" = three &&
	absent l4 "is leased by"
'

test_case 'a broken database: the turn works, without Pigeon' '
	rm -r "$PROJ/.pigeon" && mkdir "$PROJ/bd" &&
	repeat 4096 "not a database! " >broken.db && cp broken.db broken.orig &&
	n=$(hook_lines) &&
	PIGEON_DB=$TEST_DIR/broken.db && AGENT=erin &&
	host_run bd1 "$PROJ/bd" new "prompt" &&
	absent bd1 "Pigeon:" &&
	cmp broken.orig broken.db &&
	new_log "$n" >log.new &&
	for ev in $EVENTS; do
		case $ev in PostToolUse | AfterTool | PreToolUse | BeforeTool) continue ;; esac
		test "$(grep -c " event=$ev .* status=corrupt " log.new)" = 1 ||
			exit 1
	done &&
	test "$(wc -l <log.new)" = 3
'

# pigeon mcp's scenarios, a block of their own (integration/hosts/mcp.sh).
. "$hosts_dir/mcp.sh"

test_case "pigeon uninstall $HOST restores every file byte for byte; no hook runs" '
	"$PIG" uninstall "$HOST" >uninstall.out &&
	cmp config.orig "$HOST_CONFIG" &&
	test ! -e "$HOST_CONFIG.pigeon.bak" &&
	for ev in $EVENTS; do
		! grep -qF "pigeon-hook $HOST $ev" "$HOST_CONFIG" || exit 1
	done &&
	{ test "$HOST" != codex || cmp toml.orig "$HOME/.codex/config.toml"; } &&
	{ test "$HOST" != codex || test ! -e "$HOME/.codex/config.toml.pigeon.bak"; } &&
	{ test "$HOST" != gemini || { test ! -e "$POLICY" &&
		test ! -e "$POLICY.pigeon.bak"; }; } &&
	id=$(ping frank PGN-AFTER-9) && test -n "$id" &&
	n=$(hook_lines) && u=$(wc -l <user-hook.log) &&
	mkdir "$PROJ/un" && AGENT=frank &&
	host_run un1 "$PROJ/un" new "mock-shell: $PIG send --project $PROJ --from alice --to frank PGN-AFTER-1\"\"8" &&
	requests un1 | grep -q "queued #[0-9]* for frank" &&
	absent un1 PGN-AFTER-18 &&
	absent un1 PGN-AFTER-9 &&
	absent un1 "Pigeon:" &&
	test "$(hook_lines)" = "$n" &&
	test "$(wc -l <user-hook.log)" -gt "$u" &&
	"$PIG" inbox --project "$PROJ" --agent frank --json >inbox &&
	jq -e "length == 2" inbox >/dev/null
'

# A hook whose binary is gone (decision 0225): measured before the guarded
# form, Claude Code's hook failed (exit 127, "/bin/sh: 1: ...: not found"
# on every event), Codex printed "hook: UserPromptSubmit Failed" for each
# event, and Gemini CLI blocked the turn ("Agent execution blocked: bash:
# ...: No such file or directory", exit 1).
test_case 'a hook whose binary is gone stays silent; the turn works' '
	if [ "$HOST" = opencode ]; then
		test_note "opencode runs Pigeon through its plugin"; exit 0
	fi &&
	mkdir -p gonebin "$PROJ/gone" && AGENT= &&
	cp "$PGN_BIN/hookcli/pigeon-hook" gonebin/ &&
	PIGEON_HOOK=$TEST_DIR/gonebin/pigeon-hook "$PIG" install "$HOST" \
	    --no-mcp >/dev/null &&
	grep -qF "[ -x $TEST_DIR/gonebin/pigeon-hook ] || exit 0; exec" \
	    "$HOST_CONFIG" &&
	{ [ "$HOST" != claude ] ||
		HOST_ARGS="--output-format stream-json --verbose"; } &&
	host_run gone1 "$PROJ/gone" new "hello while it is there" &&
	requests gone1 | grep -q "you are agent" &&
	rm gonebin/pigeon-hook &&
	host_run gone2 "$PROJ/gone" new "hello after it went" &&
	HOST_ARGS= &&
	! grep -q "pigeon-hook" gone2.err &&
	! grep -q "Failed$\|failed for event\|: not found$\|No such file\|execution blocked" \
	    gone2.err gone2.out &&
	{ [ "$HOST" != claude ] ||
		jq -e -s "[.[] | select(.type == \"system\" and
		    .subtype == \"hook_response\")] | length > 0 and
		    all(.exit_code == 0 and .outcome == \"success\")" \
		    gone2.out >/dev/null; } &&
	"$PIG" uninstall "$HOST" --no-mcp >/dev/null &&
	cmp config.orig "$HOST_CONFIG"
'

mcp_gone

# (The idle wake's lines count its wait, bounded by reach.rewakeWaitS.)
test_case 'no hook run came near the deadline' '
	grep -v " mode=rewake " "$PIGEON_HOME/hook.log" |
		sed -n "s/.* ms=\([0-9]*\).*/\1/p" >ms.all &&
	test -s ms.all &&
	! awk "\$1 > 1500 { bad = 1 } END { exit !bad }" ms.all &&
	test_note "$HOST turns (ms): $(awk "{ printf \"%s=%s \", \$2, \$3 }" timings)"
'

test_done
