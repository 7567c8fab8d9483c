#!/bin/sh
# Reaching an agent while it works and before it stops (product.md §8),
# with the real binaries and each host's payloads: after a tool call the
# ping is injected once, and a run with no mail writes nothing; at a
# stop with mail the host is told to go on with it, in its own envelope;
# with none, nothing is printed; the governor stops two agents that
# answer each other; reach.stopWaitMs waits for a ping. The new events
# fail open like the old ones: bad stdin, stdin left open, a bad config.
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
LOG=$PIGEON_HOME/hook.log
mkdir -p "$PROJ/.git" || exit 2

# tool_file HOST / stop_file HOST / start_file HOST: the captured payload.
tool_file() {
	case $1 in
	cursor) echo cursor/07-postToolUse-shell.json ;;
	claude) echo claude/10-PostToolUse-bash.json ;;
	codex) echo codex/10-PostToolUse-exec.json ;;
	gemini) echo gemini/10-AfterTool-shell.json ;;
	esac
}
stop_file() {
	case $1 in
	cursor) echo cursor/06-stop-completed.json ;;
	claude) echo claude/11-Stop-end.json ;;
	codex) echo codex/11-Stop-end.json ;;
	gemini) echo gemini/11-AfterAgent-end.json ;;
	esac
}
start_file() {
	case $1 in
	cursor) echo cursor/01-sessionStart-ide.json ;;
	*) echo "$1/01-SessionStart-startup.json" ;;
	esac
}
event_of() { # HOST KIND: the host's event name (start, tool, stop)
	case $1:$2 in
	cursor:start) echo sessionStart ;;
	cursor:tool) echo postToolUse ;;
	cursor:stop) echo stop ;;
	gemini:tool) echo AfterTool ;;
	gemini:stop) echo AfterAgent ;;
	*:start) echo SessionStart ;;
	*:tool) echo PostToolUse ;;
	*:stop) echo Stop ;;
	esac
}

# run HOST KIND SID: the hook for that event of session SID in $PROJ;
# stdout in ./out; it must exit 0.
run() {
	fixture_payload "$FIX/$(file_of "$1" "$2")" "$PROJ" "$3" >in.json &&
	"$HOOK" "$1" "$(event_of "$1" "$2")" <in.json >out
}
file_of() {
	case $2 in
	start) start_file "$1" ;;
	tool) tool_file "$1" ;;
	stop) stop_file "$1" ;;
	esac
}
ping() { # TO TEXT [FROM]
	pigeon send --project "$PROJ" --create --from "${3:-alice}" \
	    --to "$1" "$2" >/dev/null
}
queued() {
	sql "SELECT count(*) FROM message WHERE delivered_ms IS NULL"
}
# said_nothing HOST: ./out is what HOST's hook prints with nothing to say
# on these events: {} for Cursor (decision 0258), else nothing.
said_nothing() {
	if [ "$1" = cursor ]; then
		echo "{}" >nothing.want && test_cmp nothing.want out
	else
		expect_empty out
	fi
}

for h in cursor claude codex gemini; do
	test_case "$h: a ping after a tool call is injected once, in the tool envelope" '
		PIGEON_AGENT=w-$h run $h start s-$h >/dev/null &&
		ping w-$h "rebase before you push ($h)" &&
		run $h tool s-$h &&
		case $h in
		cursor) jq -er .additional_context out >ctx ;;
		*) jq -er .hookSpecificOutput.additionalContext out >ctx &&
		   test "$(jq -r .hookSpecificOutput.hookEventName out)" = \
		       "$(event_of $h tool)" ;;
		esac &&
		grep -q "^  rebase before you push ($h)\$" ctx &&
		! grep -q "you are agent" ctx &&
		run $h tool s-$h && said_nothing $h &&
		sql_is "SELECT count(*) FROM delivery WHERE route = ${SQ}after-tool${SQ} AND recipient = ${SQ}w-$h${SQ}" 1
	'

	test_case "$h: a stop with mail makes the agent go on; without, nothing" '
		run $h stop s-$h && said_nothing $h &&
		ping w-$h "review PR 12 ($h)" &&
		run $h stop s-$h &&
		case $h in
		cursor) jq -er .followup_message out >ctx ;;
		gemini) test "$(jq -r .decision out)" = deny &&
			jq -er .reason out >ctx ;;
		*) test "$(jq -r .decision out)" = block &&
		   jq -er .reason out >ctx ;;
		esac &&
		grep -q "^  review PR 12 ($h)\$" ctx &&
		sql_is "SELECT count(*) FROM delivery WHERE route = ${SQ}stop${SQ} AND recipient = ${SQ}w-$h${SQ}" 1
	'
done

test_case 'a tool call with no mail writes nothing to the database' '
	run claude tool s-claude >/dev/null &&
	cp "$DB" db.before && { cp "$DB-wal" wal.before 2>/dev/null || :; } &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		run claude tool s-claude && expect_empty out || return 1
	done &&
	cmp "$DB" db.before &&
	{ ! test -s wal.before || cmp "$DB-wal" wal.before; }
'

# The quiet stamp (decision 0085): a tool call that finds the database
# files as they were when a read found nothing answers without SQLite;
# a ping changes them and the next tool call reads and delivers it.
# (LeakSanitizer cannot run under ptrace: off for the traced run.)
if command -v strace >/dev/null 2>&1; then
	test_case 'an unchanged database answers a tool call without opening it' '
		run claude tool s-claude >/dev/null &&
		run claude tool s-claude >/dev/null &&
		fixture_payload "$FIX/$(tool_file claude)" "$PROJ" s-claude \
		    >in.json &&
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		    strace -f -qq -e trace=openat -o trace \
		    "$HOOK" claude PostToolUse <in.json >out &&
		expect_empty out &&
		grep -q "pigeon.db-wal\", O_RDONLY" trace &&
		grep -q "/quiet\", O_RDONLY" trace &&
		! grep -q "pigeon.db\", O_RDWR" trace &&
		ping w-claude "while you work" &&
		run claude tool s-claude &&
		jq -er .hookSpecificOutput.additionalContext out >ctx &&
		grep -q "^  while you work\$" ctx &&
		run claude tool s-claude && expect_empty out
	'
else
	test_count=$((test_count + 1))
	echo "ok $test_count - an unchanged database answers a tool call" \
	    "without opening it # SKIP strace is not installed"
fi

test_case 'two agents answering each other at every stop halt after the cap' '
	PIGEON_AGENT=ann run claude start s-ann >/dev/null &&
	PIGEON_AGENT=ben run claude start s-ben >/dev/null &&
	ping ann "ping 0" ben &&
	goes=0 && stops=0 && n=0 &&
	while [ "$stops" -lt 2 ] && [ "$n" -lt 20 ]; do
		n=$((n + 1))
		if [ $((n % 2)) -eq 1 ]; then me=ann you=ben; else me=ben you=ann; fi
		run claude stop s-$me || return 1
		if [ -s out ]; then
			goes=$((goes + 1)) && ping $you "ping $n" $me || return 1
		else
			stops=$((stops + 1))
		fi
	done &&
	test "$goes" -eq 6 && test "$stops" -eq 2 &&
	test "$(queued)" -eq 1 &&
	grep -q "status=governed" "$LOG"
'

test_case 'a prompt from a person resets the count and delivers what waited' '
	fixture_payload "$FIX/claude/02-UserPromptSubmit-prompt.json" "$PROJ" s-ann p-ann >in.json &&
	"$HOOK" claude UserPromptSubmit <in.json >out &&
	fixture_payload "$FIX/claude/02-UserPromptSubmit-prompt.json" "$PROJ" s-ben p-ben >in.json &&
	"$HOOK" claude UserPromptSubmit <in.json >out2 &&
	test "$(queued)" -eq 0 &&
	sql_is "SELECT sum(auto_continues) FROM session WHERE key IN (${SQ}claude:s-ann${SQ}, ${SQ}claude:s-ben${SQ})" 0
'

test_case 'reach.stopWaitMs: a stop waits for a ping sent meanwhile' '
	mkdir -p "$PROJ/.pigeon" &&
	echo "{\"reach\":{\"stopWaitMs\":2500}}" >"$PROJ/.pigeon/config.json" &&
	PIGEON_AGENT=waiter run claude start s-wait >/dev/null || return 1
	(sleep 0.5 && ping waiter "worth the wait") &
	run claude stop s-wait; rc=$?
	wait
	test "$rc" -eq 0 &&
	jq -er .reason out | grep -q "^  worth the wait\$" &&
	rm "$PROJ/.pigeon/config.json"
'

test_case 'a bad reach config is logged and never blocks a stop' '
	mkdir -p "$PROJ/.pigeon" &&
	echo "{\"reach\":{\"maxAutoContinues\":\"many\"}}" >"$PROJ/.pigeon/config.json" &&
	PIGEON_AGENT=cfg run claude start s-cfg >/dev/null &&
	ping cfg "still comes" &&
	run claude stop s-cfg &&
	jq -er .reason out | grep -q "^  still comes\$" &&
	grep -q "status=config .*reach.maxAutoContinues must be an integer" "$LOG" &&
	rm "$PROJ/.pigeon/config.json"
'

for h in cursor claude codex gemini; do
	for kind in tool stop; do
		test_case "$h $kind: bad stdin fails open: the neutral answer, one log line, exit 0" '
			ev=$(event_of $h $kind) &&
			n0=$(wc -l <"$LOG") &&
			printf "not json" | "$HOOK" $h $ev >out && said_nothing $h &&
			printf "{\"hook_event_name\":\"$ev\"}" | "$HOOK" $h $ev >out &&
			said_nothing $h &&
			test $(($(wc -l <"$LOG") - n0)) -eq 2
		'
	done
done

test_case 'a stop whose stdin is left open returns after the idle time' '
	mkfifo in.fifo &&
	{ sleep 3 >in.fifo & } &&
	start=$(date +%s) &&
	"$HOOK" claude Stop <in.fifo >out &&
	expect_empty out &&
	test $(($(date +%s) - start)) -le 2
'

test_case 'Cursor: a stop past the cap of its own loop_count claims nothing' '
	PIGEON_AGENT=loopy run cursor start s-loop >/dev/null &&
	ping loopy "after three follow-ups" &&
	fixture_payload "$FIX/cursor/06-stop-completed.json" "$PROJ" s-loop |
		jq -c ".loop_count = 3" >in.json &&
	"$HOOK" cursor stop <in.json >out && said_nothing cursor &&
	sql_is "SELECT count(*) FROM message m JOIN agent a ON a.id = m.recipient_id WHERE a.name = ${SQ}loopy${SQ} AND m.delivered_ms IS NULL" 1 &&
	fixture_payload "$FIX/cursor/06-stop-completed.json" "$PROJ" s-loop |
		jq -c ".loop_count = 1" >in.json &&
	"$HOOK" cursor stop <in.json >out &&
	jq -er .followup_message out | grep -q "^  after three follow-ups\$"
'

test_case 'a stop past the cap does not wait for mail it would not claim' '
	mkdir -p "$PROJ/.pigeon" &&
	echo "{\"reach\":{\"stopWaitMs\":3000,\"maxAutoContinues\":0}}" >"$PROJ/.pigeon/config.json" &&
	PIGEON_AGENT=capped run claude start s-cap >/dev/null &&
	start=$(date +%s) &&
	run claude stop s-cap && expect_empty out &&
	test $(($(date +%s) - start)) -le 1 &&
	rm "$PROJ/.pigeon/config.json"
'

# waiting_for NAME: messages still queued for agent NAME.
waiting_for() {
	sql "SELECT count(*) FROM message m JOIN agent a ON a.id = m.recipient_id
	    WHERE a.name = $SQ$1$SQ AND m.delivered_ms IS NULL"
}

test_case 'one sender puts at most 8192 bytes into a turn; its next byte waits for the next prompt' '
	PIGEON_AGENT=sharer run claude start s-share >/dev/null &&
	fixture_payload "$FIX/claude/02-UserPromptSubmit-prompt.json" "$PROJ" \
	    s-share p-share-1 >in.json &&
	"$HOOK" claude UserPromptSubmit <in.json >/dev/null &&
	repeat 4096 a >big &&
	for i in 1 2; do
		pigeon send --project "$PROJ" --create --from alice \
		    --to sharer - <big >/dev/null &&
		run claude tool s-share &&
		jq -er .hookSpecificOutput.additionalContext out >ctx &&
		grep -q "^  aaaa" ctx || return 1
	done &&
	ping sharer "one byte more" &&
	run claude tool s-share && test ! -s out &&
	grep -q "session=claude:s-share status=held .*agent=sharer: 1 message waits for the next turn" "$LOG" &&
	test "$(waiting_for sharer)" -eq 1 &&
	ping sharer "not held" carol &&
	run claude tool s-share &&
	jq -er .hookSpecificOutput.additionalContext out >ctx &&
	grep -qx "  not held" ctx &&
	grep -q "^1 more message waits (a sender${SQ}s share of this turn is used)" ctx &&
	run claude stop s-share && test ! -s out &&
	test "$(waiting_for sharer)" -eq 1 &&
	fixture_payload "$FIX/claude/02-UserPromptSubmit-prompt.json" "$PROJ" \
	    s-share p-share-2 >in.json &&
	"$HOOK" claude UserPromptSubmit <in.json >out &&
	jq -er .hookSpecificOutput.additionalContext out | grep -qx "  one byte more" &&
	test "$(waiting_for sharer)" -eq 0 &&
	sql_is "SELECT sum(bytes) FROM delivery WHERE sender = ${SQ}alice$SQ
	    AND session = ${SQ}claude:s-share$SQ AND route = ${SQ}after-tool$SQ" 8192
'

test_case 'the Claude permission rules name the pigeon the introduction shows' '
	install_at "bin with space" &&
	"bin with space/pigeon" install claude >/dev/null &&
	fixture_payload "$FIX/claude/01-SessionStart-startup.json" "$PROJ" s-rule >in.json &&
	PIGEON_AGENT=ruler "$TEST_DIR/bin with space/pigeon-hook" claude SessionStart <in.json >out &&
	jq -er .hookSpecificOutput.additionalContext out |
		sed -n "s/^Send a message: \(.*\) send --from .*/\1/p" >word &&
	test -s word &&
	for sub in send read wait status; do
		jq -e --arg r "Bash($(cat word) $sub:*)" \
			".permissions.allow | index(\$r) != null" \
			"$HOME/.claude/settings.json" >/dev/null || return 1
	done &&
	"bin with space/pigeon" uninstall claude >/dev/null
'

test_done
