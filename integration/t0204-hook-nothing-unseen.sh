#!/bin/sh
# Nothing claimed goes unseen (product.md §4): a message the hook marks
# delivered is in the envelope it printed or, when that one write
# failed, named by a lost-output line in hook.log. Checked against the
# real binaries whatever the lengths of the install path, the scope and
# the agent's name (defect 1), with the deadline firing at chosen
# syscalls (strace fault injection, defect 2), a closed stdout (3), a
# file-size limit (4); every other exit leaves the message queued,
# prints the host's neutral output and logs its line: a dripping or
# stalled stdin (15), bad arguments (16).
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
LOG=$PIGEON_HOME/hook.log
mkdir -p "$PROJ/.git" || exit 2
: >"$TEST_DIR/seen"

# test_skip TITLE REASON: a case this environment cannot run.
test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}


# start DIR SID / prompt DIR SID TURN: Claude's captured payloads,
# re-aimed at DIR and session SID (TURN: its prompt_id).
start() {
	fixture_payload "$FIX/claude/01-SessionStart-startup.json" "$1" "$2"
}
prompt() {
	fixture_payload "$FIX/claude/02-UserPromptSubmit-prompt.json" \
	    "$1" "$2" "$3"
}

# run_hook HOOK HOST EVENT: HOOK on stdin, stdout ./out, stderr
# ./hook.err; it must exit 0 (every status is kept in ./codes).
run_hook() {
	rh_hook=$1
	shift
	"$rh_hook" "$@" >out 2>hook.err
	rh_rc=$?
	echo "$rh_rc pigeon-hook $*" >>"$TEST_DIR/codes"
	[ "$rh_rc" -eq 0 ] && return 0
	echo "error: pigeon-hook $* exited $rh_rc" >&9
	cat hook.err >&9
	return 1
}

# shown: ./out is empty, or one line holding one valid
# JSON envelope whose context has at most 6000 bytes; the ids of the
# messages it shows ("[#ID from" headers) are added to $TEST_DIR/seen,
# the context is left in ./ctx.txt.
shown() {
	: >ctx.txt
	[ -s out ] || return 0
	if [ "$(wc -l <out)" -ne 1 ] || ! jq -e . out >/dev/null; then
		echo "error: out is not one JSON line:" >&9
		head -c 2000 out >&9
		return 1
	fi
	jq -j '.hookSpecificOutput.additionalContext //
		.additional_context // ""' out >ctx.txt || return 1
	sh_n=$(wc -c <ctx.txt)
	if [ "$sh_n" -gt 6000 ]; then
		echo "error: the context has $sh_n bytes, over 6000" >&9
		return 1
	fi
	sed -n 's/^\[#\([0-9][0-9]*\) from .*/\1/p' ctx.txt >>"$TEST_DIR/seen"
}

# lost: the ids hook.log's lost-output lines name, one a line (a line
# naming FIRST..LAST, when the list is too long, names every id between).
lost() {
	[ -e "$LOG" ] || return 0
	sed -n 's/.*status=lost-output .* ids=\([0-9,]*\):.*/\1/p' "$LOG" |
		tr , '\n'
	sed -n 's/.*status=lost-output .* ids=\([0-9]*\)\.\.\([0-9]*\):.*/\1 \2/p' \
	    "$LOG" | while read -r lo_first lo_last; do
		sql "SELECT id FROM message WHERE id BETWEEN $lo_first AND $lo_last"
	done
}

# delivered NAME: the ids of agent NAME's messages marked delivered;
# messages NAME: the ids of all its messages.
delivered() {
	sql "SELECT m.id FROM message m JOIN agent a ON a.id = m.recipient_id
		WHERE a.name = '$1' AND m.delivered_ms IS NOT NULL" | sort
}
messages() {
	sql "SELECT m.id FROM message m JOIN agent a ON a.id = m.recipient_id
		WHERE a.name = '$1'" | sort
}

# is_queued ID: message ID is still queued.
is_queued() {
	test "$(sql "SELECT count(*) FROM message WHERE id = $1
		AND delivered_ms IS NULL")" = 1
}

# nothing_unseen NAME SCOPE: every message of agent NAME marked delivered
# was shown in a printed envelope or named by a lost-output line; every
# one shown is delivered; the audit of SCOPE holds exactly those.
nothing_unseen() {
	delivered "$1" >delivered.ids &&
	{ cat "$TEST_DIR/seen"; lost; } | sort -u >accounted.ids &&
	messages "$1" >all.ids &&
	sort -u "$TEST_DIR/seen" | comm -12 all.ids - >seen.ids &&
	comm -23 delivered.ids accounted.ids >unseen.ids &&
	comm -13 delivered.ids seen.ids >phantom.ids &&
	pigeon audit --project "$2" --agent "$1" --limit 10000 --json |
		jq '.[].message_id' | sort >audit.ids &&
	if [ -s unseen.ids ] || [ -s phantom.ids ]; then
		echo "error: delivered but unseen: $(tr "\n" " " <unseen.ids)" >&9
		echo "error: shown but queued: $(tr "\n" " " <phantom.ids)" >&9
		return 1
	fi &&
	test_cmp delivered.ids audit.ids
}

# send SCOPE TO [TEXT]: queue TEXT (or stdin) from alice; prints the id.
send() {
	if [ $# -ge 3 ]; then
		pigeon send --project "$1" --create --from alice --to "$2" "$3"
	else
		pigeon send --project "$1" --create --from alice --to "$2" -
	fi >sent.out || return 1
	sed -n 's/^queued #\([0-9]*\) for .*/\1/p' sent.out
}

# many_lines: a 4095-byte body of 2048 one-letter lines (the shape that
# needs the cut note, with its path and name, to fit).
many_lines() {
	awk 'BEGIN { for (i = 0; i < 2047; i++) printf "a\n"; printf "a" }'
}

log_lines() {
	if [ -e "$LOG" ]; then
		wc -l <"$LOG"
	else
		echo 0
	fi
}

# one_new_line BEFORE PATTERN: hook.log grew by exactly one line since
# it had BEFORE lines, and that line matches PATTERN (grep -E).
one_new_line() {
	onl_now=$(log_lines)
	if [ "$onl_now" -ne $(($1 + 1)) ]; then
		echo "error: hook.log went from $1 to $onl_now lines" >&9
		tail -n 3 "$LOG" >&9
		return 1
	fi
	tail -n 1 "$LOG" | grep -Eq -e "$2" && return 0
	echo "error: the new hook.log line does not match '$2':" >&9
	tail -n 1 "$LOG" >&9
	return 1
}

# ---- long paths, a long name, many peers (defect 1) -----------------

SCOPE=$(long_dir "$TEST_DIR/scope" 300)
# "$BIN_Q/pigeon" is exactly PGN_HOOK_MAX_SHOWN (300) bytes, with a
# space: shown quoted. "$BIN_L/pigeon" is 307 bytes: shown as 'pigeon'.
BIN_Q=$(long_dir "$TEST_DIR/bin with space" 293)
BIN_L=$(long_dir "$TEST_DIR/bin" 300)
NAME_Q=$(repeat 64 q)
NAME_L=$(repeat 64 l)
mkdir -p "$SCOPE/.git" && install_at "$BIN_Q" && install_at "$BIN_L" ||
	exit 2

test_case 'setup: a 300-byte scope with 40 agents, two 64-character ones' '
	test "${#SCOPE}" = 300 &&
	test "$(printf "%s" "$BIN_Q/pigeon" | wc -c)" = 300 &&
	i=1 &&
	while [ $i -le 40 ]; do
		pigeon agent add --project "$SCOPE" "peer-$i" >/dev/null ||
			return 1
		i=$((i + 1))
	done &&
	pigeon agent add --project "$SCOPE" "$NAME_Q" >/dev/null &&
	pigeon agent add --project "$SCOPE" "$NAME_L" >/dev/null &&
	sql_is "SELECT count(*) FROM agent" 42
'

# drain BIN NAME SID: queue for agent NAME in $SCOPE two many-line 4 KiB
# bodies among short and long ones, then run BIN's pigeon-hook for a
# session start and prompts until the queue is empty (at most 12).
drain() {
	dr_bin=$1 dr_name=$2 dr_sid=$3
	many_lines | send "$SCOPE" "$dr_name" >/dev/null &&
	send "$SCOPE" "$dr_name" "short one" >/dev/null &&
	send "$SCOPE" "$dr_name" "short two" >/dev/null &&
	many_lines | send "$SCOPE" "$dr_name" >/dev/null &&
	repeat 3000 x | send "$SCOPE" "$dr_name" >/dev/null &&
	repeat 1500 y | send "$SCOPE" "$dr_name" >/dev/null &&
	send "$SCOPE" "$dr_name" "short three" >/dev/null &&
	start "$SCOPE" "$dr_sid" >in.json &&
	PIGEON_AGENT=$dr_name run_hook "$dr_bin/pigeon-hook" claude \
		SessionStart <in.json &&
	shown && cp ctx.txt intro.txt &&
	grep -q "^Pigeon: you are agent \"$dr_name\" (claude session)" \
		intro.txt &&
	dr_turn=0 &&
	while [ "$(pigeon inbox --project "$SCOPE" --agent "$dr_name" --json |
		jq length)" != 0 ]; do
		dr_turn=$((dr_turn + 1))
		if [ "$dr_turn" -gt 12 ]; then
			echo "error: the queue did not empty in 12 prompts" >&9
			return 1
		fi
		prompt "$SCOPE" "$dr_sid" "t$dr_turn" >in.json &&
		run_hook "$dr_bin/pigeon-hook" claude UserPromptSubmit \
			<in.json &&
		test -s out &&
		shown &&
		cat ctx.txt >>all.txt || return 1
	done &&
	test_note "$dr_name: drained in $dr_turn prompts" &&
	test "$(sql "SELECT count(*) FROM message m JOIN agent a
		ON a.id = m.recipient_id WHERE a.name = '$dr_name'")" = 7 &&
	nothing_unseen "$dr_name" "$SCOPE" &&
	test "$(wc -l <delivered.ids)" = 7 &&
	! grep -q "too big" "$LOG"
}

test_case 'a 300-byte quoted pigeon path: every delivered message was shown' '
	drain "$BIN_Q" "$NAME_Q" long-q &&
	grep -qxF "Send a message: $SQ$BIN_Q/pigeon$SQ send --from $NAME_Q --to NAME \"text\"" intro.txt &&
	cat intro.txt all.txt |
		grep -q "^  \[cut: message #[0-9]* has 4095 bytes"
'

test_case 'a 307-byte pigeon path: shown as pigeon, every delivered message was shown' '
	drain "$BIN_L" "$NAME_L" long-l &&
	grep -qxF "Send a message: pigeon send --from $NAME_L --to NAME \"text\"" intro.txt &&
	cat intro.txt all.txt |
		grep -q "^  \[cut: message #[0-9]* has 4095 bytes" &&
	! grep -qF "$BIN_L" intro.txt
'

# ---- the deadline at any syscall (defect 2) ---------------------------

# traced_hook ARGS...: pigeon-hook under strace with ARGS (strace's own
# options) then "--", stdin and stdout as given. LeakSanitizer cannot
# run under ptrace: off for the traced run only.
traced_hook() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	    strace -f -qq "$@"
}

# One syscall delayed by 1.7 s, past the 1.5 s deadline.
DELAY=1700000
SYSCALLS="poll access readlink openat pwrite64 write"

if ! command -v strace >/dev/null 2>&1; then
	test_skip 'a deadline at any syscall: shown, or still queued' \
		'strace is not installed'
	test_skip 'a deadline exit prints the neutral output and logs its line' \
		'strace is not installed'
elif ! strace -f -qq -o /dev/null true 2>/dev/null; then
	test_skip 'a deadline at any syscall: shown, or still queued' \
		'strace cannot trace here (ptrace refused)'
	test_skip 'a deadline exit prints the neutral output and logs its line' \
		'strace cannot trace here (ptrace refused)'
elif ! strace -qq -o /dev/null -e inject=getpid:delay_exit=1:when=1 \
    true 2>/dev/null; then
	test_skip 'a deadline at any syscall: shown, or still queued' \
		'this strace cannot inject delays (strace 4.22 or later can)'
	test_skip 'a deadline exit prints the neutral output and logs its line' \
		'this strace cannot inject delays (strace 4.22 or later can)'
else
	test_case 'a deadline at any syscall: shown, or still queued' '
		PIGEON_AGENT=dl && export PIGEON_AGENT &&
		start "$PROJ" dl >in.json &&
		run_hook "$HOOK" claude SessionStart <in.json && shown &&
		send "$PROJ" dl "counted" >/dev/null &&
		prompt "$PROJ" dl t0 >in.json &&
		traced_hook -o count.trace -e trace=$(echo $SYSCALLS |
			tr " " ,) "$HOOK" claude UserPromptSubmit <in.json >out &&
		shown && test -s ctx.txt &&
		combos= &&
		for sc in $SYSCALLS; do
			c=$(grep -cE "(^|[ ])$sc\(" count.trace)
			case $sc:$c in
			*:0) ;;
			*:1) combos="$combos $sc:1" ;;
			access:*) combos="$combos $sc:1 $sc:2 $sc:$c" ;;
			pwrite64:*) combos="$combos $sc:1 $sc:$((c / 2)) $sc:$c" ;;
			*) combos="$combos $sc:1 $sc:$c" ;;
			esac
		done &&
		test_note "delayed syscalls:$combos" &&
		deadlines=0 lates=0 turn=0 &&
		for combo in $combos; do
			sc=${combo%:*} n=${combo#*:} turn=$((turn + 1)) &&
			id=$(send "$PROJ" dl "before $combo") &&
			prompt "$PROJ" dl "t$turn" >in.json &&
			before=$(log_lines) &&
			traced_hook -o /dev/null -e trace="$sc" \
				-e inject="$sc:delay_exit=$DELAY:when=$n" \
				"$HOOK" claude UserPromptSubmit <in.json >out \
				2>hook.err
			rc=$?
			echo "$rc pigeon-hook (strace $combo)" >>"$TEST_DIR/codes"
			test "$rc" = 0 && shown &&
			if [ -s out ]; then
				grep -q "^\[#$id from alice" ctx.txt
			else
				is_queued "$id" &&
				sed -n "$((before + 1)),\$p" "$LOG" |
					grep -q "status=deadline .*nothing was claimed"
			fi &&
			nothing_unseen dl "$PROJ" || {
				echo "error: with $sc delayed at call $n" >&9
				tail -n 3 "$LOG" >&9
				return 1
			}
			if [ ! -s out ]; then
				deadlines=$((deadlines + 1))
			elif sed -n "$((before + 1)),\$p" "$LOG" |
				grep -q "status=late .*delivered"; then
				lates=$((lates + 1))
			fi
		done &&
		test_note "deadline exits: $deadlines, late commits: $lates" &&
		test "$deadlines" -ge 1 && test "$lates" -ge 1 &&
		prompt "$PROJ" dl last >in.json &&
		run_hook "$HOOK" claude UserPromptSubmit <in.json && shown &&
		nothing_unseen dl "$PROJ" &&
		test "$(pigeon inbox --project "$PROJ" --agent dl --json |
			jq length)" = 0
	'

	test_case 'a deadline exit prints the neutral output and logs its line' '
		PIGEON_AGENT=dc && export PIGEON_AGENT &&
		fixture_payload "$FIX/cursor/01-sessionStart-ide.json" \
			"$PROJ" dc >in.json &&
		run_hook "$HOOK" cursor sessionStart <in.json && shown &&
		id=$(send "$PROJ" dc "held by a slow stdin") &&
		fixture_payload "$FIX/cursor/02-beforeSubmitPrompt-ide.json" \
			"$PROJ" dc g1 >in.json &&
		before=$(log_lines) &&
		traced_hook -o /dev/null -e trace=poll \
			-e inject=poll:delay_exit=$DELAY:when=1 \
			"$HOOK" cursor beforeSubmitPrompt <in.json >out &&
		echo "{\"continue\":true}" >want &&
		test_cmp want out &&
		one_new_line "$before" "host=cursor event=beforeSubmitPrompt .*status=deadline .*nothing was claimed" &&
		is_queued "$id" &&
		run_hook "$HOOK" cursor beforeSubmitPrompt <in.json &&
		shown && grep -q "^\[#$id from alice" ctx.txt &&
		nothing_unseen dc "$PROJ"
	'
fi

# ---- the one write fails (defects 3, 4) -------------------------------

# no_reader HOST EVENT: pigeon-hook HOST EVENT with ./in.json as its
# payload and stdout a pipe whose reader closed its end before the hook
# started reading; its exit status in ./rc (and ./codes).
no_reader() {
	rm -f in.fifo reader.gone rc
	mkfifo in.fifo || return 1
	({ "$HOOK" "$1" "$2" <in.fifo 2>hook.err; echo $? >rc; } |
		{ exec <&-; : >reader.gone; }) &
	nr_pid=$!
	bg_track $nr_pid &&
	wait_for_file reader.gone &&
	cat in.json >in.fifo &&
	bg_wait $nr_pid &&
	echo "$(cat rc) pigeon-hook $1 $2 (no reader)" >>"$TEST_DIR/codes" &&
	test "$(cat rc)" = 0
}

# wait_for_file FILE: poll, up to a minute, for FILE to exist.
wait_for_file() {
	wff_i=0
	while [ ! -e "$1" ]; do
		wff_i=$((wff_i + 1))
		if [ "$wff_i" -ge 600 ]; then
			echo "error: no $1 after 60 s" >&9
			return 1
		fi
		sleep 0.1
	done
}

test_case 'stdout a pipe with no reader: exit 0, a lost-output line, the audit has it' '
	PIGEON_AGENT=pipe && export PIGEON_AGENT &&
	start "$PROJ" pp >in.json &&
	run_hook "$HOOK" claude SessionStart <in.json && shown &&
	id=$(send "$PROJ" pipe "into a pipe nobody reads") &&
	prompt "$PROJ" pp t1 >in.json &&
	no_reader claude UserPromptSubmit &&
	grep -q "status=lost-output .* ids=$id: stdout failed after the claim" "$LOG" &&
	! is_queued "$id" &&
	nothing_unseen pipe "$PROJ" &&
	did=$(pigeon audit --project "$PROJ" --agent pipe --json |
		jq ".[] | select(.message_id == $id) | .id") &&
	test -n "$did" &&
	pigeon audit --project "$PROJ" show "$did" >show.out &&
	grep -q "into a pipe nobody reads" show.out
'

test_case 'an introduction into a pipe with no reader: exit 0, a lost-output line' '
	PIGEON_AGENT=intro-lost && export PIGEON_AGENT &&
	start "$PROJ" il >in.json &&
	before=$(log_lines) &&
	no_reader claude SessionStart &&
	test "$(sql "SELECT a.name FROM session s JOIN agent a
		ON a.id = s.agent_id WHERE s.key = ${SQ}claude:il${SQ}")" = intro-lost &&
	sed -n "$((before + 1)),\$p" "$LOG" >new.log &&
	grep -q "session=claude:il status=lost-output .* ids=-: stdout failed" new.log &&
	resume_file=$FIX/claude/03-SessionStart-resume.json &&
	fixture_payload "$resume_file" "$PROJ" il >in.json &&
	run_hook "$HOOK" claude SessionStart <in.json && shown &&
	grep -q "^Pigeon: you are agent \"intro-lost\"" ctx.txt
'

test_case 'a lost-output line past PGN_HOOK_IDS_TEXT names FIRST..LAST' '
	PIGEON_AGENT=many && export PIGEON_AGENT &&
	start "$PROJ" mn >in.json &&
	run_hook "$HOOK" claude SessionStart <in.json && shown &&
	first=$(send "$PROJ" many "the first of many") &&
	# 16-digit ids from here on, so 36 of them need 611 bytes.
	sql "INSERT INTO message(id, scope_id, sender, recipient_id, body,
		created_ms) SELECT 1000000000000000, scope_id, sender,
		recipient_id, ${SQ}queued at a 16-digit id${SQ}, created_ms
		FROM message WHERE id = $first" &&
	i=0 &&
	while [ $i -lt 40 ]; do
		send "$PROJ" many "m$i" >/dev/null || return 1
		i=$((i + 1))
	done &&
	prompt "$PROJ" mn t1 >in.json &&
	no_reader claude UserPromptSubmit &&
	tail -n 1 "$LOG" >line &&
	grep -q "status=lost-output .* ids=$first\.\.10000000000000[0-9][0-9]: stdout failed" line &&
	claimed=$(sql "SELECT count(*) FROM message m JOIN agent a
		ON a.id = m.recipient_id WHERE a.name = ${SQ}many${SQ}
		AND m.delivered_ms IS NOT NULL") &&
	test_note "claimed into the closed pipe: $claimed, $(wc -c <line) bytes logged" &&
	test "$claimed" -ge 30 &&
	nothing_unseen many "$PROJ"
'

test_case 'a file-size limit stdout cannot grow past: exit 0 (not 153), a lost-output line' '
	PIGEON_AGENT=fsz && export PIGEON_AGENT &&
	start "$PROJ" fz >in.json &&
	run_hook "$HOOK" claude SessionStart <in.json && shown &&
	id=$(send "$PROJ" fsz "into a file at its size limit") &&
	prompt "$PROJ" fz t1 >in.json &&
	dd if=/dev/null of=full.out bs=1 seek=8388608 2>/dev/null &&
	test "$(wc -c <full.out)" = 8388608 &&
	test "$(wc -c <"$DB")" -lt 1048576 &&
	test "$(wc -c <"$DB-wal")" -lt 1048576 &&
	(ulimit -f 4096 && exec "$HOOK" claude UserPromptSubmit <in.json \
		>>full.out 2>hook.err)
	rc=$?
	echo "$rc pigeon-hook (ulimit -f)" >>"$TEST_DIR/codes" &&
	test "$rc" = 0 &&
	test "$(wc -c <full.out)" = 8388608 &&
	grep -q "status=lost-output .* ids=$id: stdout failed after the claim" "$LOG" &&
	nothing_unseen fsz "$PROJ" &&
	id2=$(send "$PROJ" fsz "into a file that can grow") &&
	prompt "$PROJ" fz t2 >in.json &&
	(ulimit -f 4096 && exec "$HOOK" claude UserPromptSubmit <in.json \
		>out 2>hook.err) &&
	shown && grep -q "^\[#$id2 from alice" ctx.txt &&
	nothing_unseen fsz "$PROJ"
'

# ---- stdin that never completes (defect 15) ---------------------------

# drip GAP N: "{" and then N more bytes of an object that never closes,
# GAP seconds apart.
drip() {
	printf "{"
	dp_i=0
	while [ "$dp_i" -lt "$2" ]; do
		sleep "$1"
		printf "\""
		dp_i=$((dp_i + 1))
	done
}

# timed_neutral BEFORE: ./rc is 0, ./out empty, ./t0 and ./t1 at most
# 3 s apart, and hook.log has one line more than BEFORE, for the exit.
timed_neutral() {
	test "$(cat rc)" = 0 &&
	expect_empty out &&
	test $(($(cat t1) - $(cat t0))) -le 3 &&
	one_new_line "$1" "status=(bad-input|deadline) "
}

test_case 'stdin dripping slower than the deadline: neutral, and one log line' '
	before=$(log_lines) &&
	date +%s >t0 &&
	drip 0.3 12 | { "$HOOK" claude UserPromptSubmit >out 2>hook.err;
		echo $? >rc; date +%s >t1; } &&
	timed_neutral "$before" &&
	before=$(log_lines) &&
	date +%s >t0 &&
	drip 0.7 5 | { "$HOOK" claude UserPromptSubmit >out 2>hook.err;
		echo $? >rc; date +%s >t1; } &&
	timed_neutral "$before"
'

test_case 'stdin held open with no complete object: neutral, and one log line' '
	before=$(log_lines) &&
	date +%s >t0 &&
	{ printf "{\"session_id\":\"held\",\"cwd\":"; sleep 3; } |
		{ "$HOOK" claude UserPromptSubmit >out 2>hook.err;
		echo $? >rc; date +%s >t1; } &&
	timed_neutral "$before" &&
	tail -n 1 "$LOG" | grep -q "no complete JSON object on stdin"
'

# ---- bad arguments (defect 16) ------------------------------------------

test_case 'bad arguments print the host'"'"'s neutral output and log a bad-args line' '
	PIGEON_AGENT=args && export PIGEON_AGENT &&
	fixture_payload "$FIX/cursor/01-sessionStart-ide.json" "$PROJ" ar \
		>in.json &&
	run_hook "$HOOK" cursor sessionStart <in.json && shown &&
	id=$(send "$PROJ" args "not for a bad command line") &&
	fixture_payload "$FIX/cursor/02-beforeSubmitPrompt-ide.json" "$PROJ" \
		ar g1 >in.json &&
	before=$(log_lines) &&
	run_hook "$HOOK" cursor beforeSubmitPrompt --bogus <in.json &&
	echo "{\"continue\":true}" >want && test_cmp want out &&
	grep -q "unexpected argument .--bogus." hook.err &&
	one_new_line "$before" "host=cursor .*status=bad-args .*--bogus" &&
	before=$(log_lines) &&
	prompt "$PROJ" ar p1 >claude.json &&
	run_hook "$HOOK" claude UserPromptSubmit --agent <claude.json &&
	expect_empty out &&
	one_new_line "$before" "host=claude .*status=bad-args .*--agent needs a NAME" &&
	before=$(log_lines) &&
	run_hook "$HOOK" cursor beforeSubmitPrompt extra <in.json &&
	test_cmp want out &&
	one_new_line "$before" "status=bad-args" &&
	is_queued "$id" &&
	run_hook "$HOOK" cursor beforeSubmitPrompt <in.json &&
	shown && grep -q "^\[#$id from alice" ctx.txt
'

test_case 'the hook never exited non-zero' '
	test "$(wc -l <"$TEST_DIR/codes")" -gt 20 &&
	! grep -v "^0 " "$TEST_DIR/codes"
'

test_done
