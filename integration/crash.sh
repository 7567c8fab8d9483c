# crash.sh: the body of the crash tests, sourced after lib.sh (and
# pglib.sh) by t0401-crash.sh (SQLite) and t0702-pg-crash.sh
# (PostgreSQL); what it proves is said there. The caller defines sql and
# sql_is for its database (lib.sh's are SQLite's) and db_intact, the
# engine's own integrity check.

HOOK=$PGN_BIN/hookcli/pigeon-hook
READERS=4		# claimer loops running pigeon read
HOOKS=4			# claimer loops running pigeon-hook
SENDERS=4
# printed ids per sender: 500, or 100 under the sanitizers, whose
# processes start ten times slower (integration/CMakeLists.txt)
PER_SENDER=500
[ "${PGN_SANITIZED:-0}" != 1 ] || PER_SENDER=100
PER_SENDER=${PGN_CRASH_PER_SENDER:-$PER_SENDER}
MIN_MESSAGES=$((SENDERS * PER_SENDER))	# 2000 by default, 400 sanitized
KILL_PCT=60		# chance that the killer aims at a process
MIN_KILLED_PCT=20	# share of processes that must die by SIGKILL
# The test directory is the project (its own scope), whatever lies above.
mkdir "$TEST_DIR/.git" || exit 2

# plan SEED: one line per process of a loop, "KILL SLEEP": KILL 1 to
# kill it, after SLEEP seconds (0.000: at once, maybe before it runs),
# a delay from 0 to 0.8 times the lifetime measured at setup (spawning
# sleep itself takes about a process lifetime here, so later aims would
# mostly miss and the share killed would drift towards the floor).
plan() {
	awk -v seed="$(($1 * 1000 + $$ % 1000))" -v pct=$KILL_PCT \
	    -v life="$LIFE_MS" 'BEGIN {
		srand(seed)
		for (i = 0; i < 20000; i++) {
			ms = int(rand() * life * 0.8)
			printf "%d %d.%03d\n", rand() * 100 < pct, ms / 1000,
				ms % 1000
		}
	}'
}

# run_killable IN CMD...: run CMD in the background with stdin from IN
# (stdout and stderr as the caller redirected them), maybe kill it as
# the plan on fd 3 says; set rc to its exit status (137: killed).
run_killable() {
	read -r rk_kill rk_sleep <&3 || rk_kill=0
	rk_in=$1
	shift
	"$@" <"$rk_in" &
	rk_pid=$!
	if [ "$rk_kill" = 1 ]; then
		[ "$rk_sleep" = 0.000 ] || sleep "$rk_sleep"
		kill -9 "$rk_pid" 2>/dev/null
	fi
	wait "$rk_pid"
	rc=$?
	procs=$((procs + 1))
	[ "$rc" -ne 137 ] || kills=$((kills + 1))
}

# tally NAME: record the loop's process and kill counts.
tally() {
	echo "$procs $kills" >"$1.tally"
}

# A claimer is done when a run that completed after every sender had
# finished found nothing; it pauses after finding nothing before that,
# so that processes go to claiming, not to polling an empty queue.

# reader I: pigeon read --json in a loop; completed outputs go to
# reader.I.json.
reader() {
	procs=0 kills=0 n=0
	while :; do
		n=$((n + 1))
		done_before=0
		[ -e senders.done ] && done_before=1
		run_killable /dev/null pigeon read --agent bob --json \
			>out.r$1 2>err.r$1
		if [ "$rc" -eq 0 ]; then
			cat out.r$1 >>reader.$1.json
			if [ "$(cat out.r$1)" = "[]" ]; then
				[ "$done_before" = 1 ] && break
				sleep 0.2
			fi
		elif [ "$rc" -ne 137 ]; then
			echo "pigeon read exited $rc: $(cat err.r$1)" \
				>>claimer.r$1.fail
			break
		fi
		[ "$rc" -eq 137 ] || [ ! -s err.r$1 ] ||
			cat err.r$1 >>claimer.r$1.stderr
	done 3<plan.r$1
	tally claimer.r$1
}

# hooker I: pigeon-hook for session crash-I bound to bob, a new prompt id
# each run; completed outputs go to hook.I.out, one line each.
hooker() {
	procs=0 kills=0 n=0
	PIGEON_AGENT=bob
	export PIGEON_AGENT
	while :; do
		n=$((n + 1))
		done_before=0
		[ -e senders.done ] && done_before=1
		printf '{"session_id":"crash-%s","cwd":"%s",%s,%s}\n' "$1" \
			"$TEST_DIR" "\"prompt_id\":\"p-$1-$n\"" \
			'"hook_event_name":"UserPromptSubmit","prompt":"next"' \
			>in.h$1
		run_killable in.h$1 "$HOOK" claude UserPromptSubmit \
			>out.h$1 2>err.h$1
		if [ "$rc" -eq 0 ]; then
			cat out.h$1 >>hook.$1.out
			if ! grep -q '\[#' out.h$1; then
				[ "$done_before" = 1 ] && break
				sleep 0.2
			fi
		elif [ "$rc" -ne 137 ]; then
			echo "pigeon-hook exited $rc" >>claimer.h$1.fail
			break
		fi
		[ "$rc" -eq 137 ] || [ ! -s err.h$1 ] ||
			cat err.h$1 >>claimer.h$1.stderr
	done 3<plan.h$1
	tally claimer.h$1
}

# sender I: send "message K of sI" to bob until PER_SENDER ids were
# printed. A killed send may or may not have queued its message: its K
# goes to sender.I.killed and the next one gets K + 1. A send refused
# because bob's queue is full is tried again.
sender() {
	procs=0 kills=0 k=1 ok=0 full=0
	while [ "$ok" -lt "$PER_SENDER" ]; do
		run_killable /dev/null pigeon send --to bob --from "s$1" \
			"message $k of s$1" >out.s$1 2>err.s$1
		if [ "$rc" -eq 0 ]; then
			out=$(cat out.s$1)
			id=${out#queued #}
			id=${id%% *}
			echo "$id|s$1|message $k of s$1" >>sender.$1.ids
			ok=$((ok + 1))
			k=$((k + 1))
		elif [ "$rc" -eq 137 ]; then
			echo "$k" >>sender.$1.killed
			k=$((k + 1))
		elif [ "$rc" -eq 2 ] && grep -q "messages waiting" err.s$1; then
			full=$((full + 1))
			sleep 0.02
		else
			echo "send $k exited $rc: $(cat err.s$1)" >>sender.$1.fail
			break
		fi
		[ "$rc" -ne 0 ] || [ ! -s err.s$1 ] ||
			cat err.s$1 >>sender.$1.stderr
	done 3<plan.s$1
	echo "$full" >sender.$1.full
	tally sender.$1
}

test_case 'setup: bob, four senders, a lifetime measured for the killer' '
	for a in bob s1 s2 s3 s4; do
		pigeon agent add $a >/dev/null || return 1
	done &&
	t0=$(date +%s%N) &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pigeon inbox --agent bob --json >/dev/null || return 1
	done &&
	t1=$(date +%s%N) &&
	life=$(( (t1 - t0) / 10000000 )) &&
	{ [ "$life" -ge 2 ] || life=2; } &&
	echo "$life" >life_ms &&
	test_note "an idle pigeon process lives about $life ms here"
'

LIFE_MS=$(cat "$TEST_DIR/life_ms" 2>/dev/null || echo 10)

test_case "$READERS readers, $HOOKS hooks and $SENDERS senders under SIGKILL" '
	start=$(date +%s) &&
	for i in $(seq $READERS); do plan $i >plan.r$i || return 1; done &&
	for i in $(seq $HOOKS); do plan $((10 + i)) >plan.h$i || return 1; done &&
	for i in $(seq $SENDERS); do plan $((20 + i)) >plan.s$i || return 1; done &&
	cpids= && spids= &&
	for i in $(seq $READERS); do
		: >reader.$i.json && { reader $i & } &&
		cpids="$cpids $!" && bg_track $! || return 1
	done &&
	for i in $(seq $HOOKS); do
		: >hook.$i.out && { hooker $i & } &&
		cpids="$cpids $!" && bg_track $! || return 1
	done &&
	for i in $(seq $SENDERS); do
		: >sender.$i.ids && : >sender.$i.killed && { sender $i & } &&
		spids="$spids $!" && bg_track $! || return 1
	done &&
	for p in $spids; do bg_wait $p || return 1; done &&
	: >senders.done &&
	for p in $cpids; do bg_wait $p || return 1; done &&
	test_note "run took $(($(date +%s) - start)) s;" \
		"$(cat sender.*.full | awk "{ s += \$1 } END { print s }")" \
		"sends refused for a full queue and retried"
'

test_case 'drain: pigeon read claims what is left' '
	pigeon read --agent bob --json >drain.json &&
	expect_output "[]" pigeon read --agent bob --json
'

test_case "at least $MIN_KILLED_PCT % of the processes died by SIGKILL" '
	cat claimer.*.tally sender.*.tally >tallies &&
	procs=$(awk "{ s += \$1 } END { print s }" tallies) &&
	kills=$(awk "{ s += \$2 } END { print s }" tallies) &&
	ckills=$(cat claimer.*.tally | awk "{ s += \$2 } END { print s }") &&
	skills=$(cat sender.*.tally | awk "{ s += \$2 } END { print s }") &&
	test_note "SIGKILLed $kills of $procs processes" \
		"($((kills * 100 / procs)) %): $ckills claimers, $skills senders" &&
	test "$((kills * 100))" -ge "$((procs * MIN_KILLED_PCT))" &&
	test "$ckills" -gt 0 && test "$skills" -gt 0
'

test_case 'every process that was not killed exited 0, and said nothing' '
	for f in claimer.*.fail sender.*.fail; do
		test ! -e "$f" || { cat "$f"; return 1; }
	done &&
	for f in claimer.*.stderr sender.*.stderr; do
		test ! -e "$f" || { cat "$f"; return 1; }
	done
'

# The ids each completed claimer printed, one per line.
seen_ids() {
	cat reader.*.json drain.json | jq -r ".[].id" &&
	cat hook.*.out | jq -r ".hookSpecificOutput.additionalContext" |
		sed -n "s/^\[#\([0-9]*\) from .*/\1/p"
}

test_case "at least $MIN_MESSAGES messages, none seen twice" '
	seen_ids >seen &&
	n=$(sql "SELECT count(*) FROM message") &&
	test_note "$n messages queued;" \
		"$(cat sender.*.killed | wc -l) sends killed" &&
	test "$n" -ge $MIN_MESSAGES &&
	sort -n seen | uniq -d >dups &&
	expect_empty dups
'

test_case 'every message delivered exactly once, audited and journalled once' '
	sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 0 &&
	n=$(sql "SELECT count(*) FROM message") &&
	sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" \
		"$n|$n" &&
	sql_is "SELECT count(*) FROM message m LEFT JOIN delivery d
		ON d.message_id = m.id WHERE d.id IS NULL" 0 &&
	sql_is "SELECT count(*), count(DISTINCT message_id) FROM journal
		WHERE kind = ${SQ}delivered${SQ}" "$n|$n" &&
	sql_is "SELECT count(*) FROM message m LEFT JOIN journal j
		ON j.message_id = m.id AND j.kind = ${SQ}delivered${SQ}
		WHERE j.id IS NULL" 0 &&
	sql_is "SELECT count(*) FROM delivery d JOIN message m
		ON m.id = d.message_id WHERE d.body != m.body" 0
'

test_case 'every id a sender printed is there; nothing no sender tried' '
	cat sender.*.ids | sort >reported &&
	sql "SELECT id || ${SQ}|${SQ} || sender || ${SQ}|${SQ} || body
		FROM message" | sort >stored &&
	comm -23 reported stored >missing &&
	expect_empty missing &&
	comm -13 reported stored >extra &&
	while IFS="|" read -r id from body; do
		k=${body#message } && k=${k%% *} &&
		grep -qx "$k" "sender.${from#s}.killed" || {
			echo "message #$id ($body) was never sent"; return 1; }
	done <extra &&
	test_note "$(wc -l <extra) messages queued by sends killed after" \
		"their commit (no id printed)"
'

test_case 'delivered but unseen messages are in the journal and the audit' '
	sql "SELECT id FROM message" | sort >all &&
	sort seen | comm -23 all - >unseen &&
	test_note "$(wc -l <unseen) messages delivered but never printed" \
		"(claimer killed, or hook past its deadline, after its commit)" &&
	pigeon journal bob --limit 10000 --json |
		jq -r ".entries[] | select(.kind == \"delivered\") | .message_id" |
		sort >journalled &&
	pigeon audit --agent bob --limit 10000 --json |
		jq -r ".[].message_id" | sort >audited &&
	comm -23 unseen journalled >not.journalled &&
	expect_empty not.journalled &&
	comm -23 unseen audited >not.audited &&
	expect_empty not.audited
'

test_case 'the audit chain verifies and the database is intact' '
	n=$(sql "SELECT count(*) FROM delivery") &&
	expect_output "audit chain intact: $n deliveries verified" \
		pigeon audit verify &&
	db_intact
'

test_done
