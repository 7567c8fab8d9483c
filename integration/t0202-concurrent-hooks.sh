#!/bin/sh
# Exactly once through the hook: 8 pigeon-hook loops, one session each
# (two per host), all bound to agent bob with PIGEON_AGENT, submit
# prompts with distinct turn ids while 4 senders queue 400 messages for
# bob. Then they drain. Every message id appears exactly once across
# all hook outputs (no duplicate, no loss), every hook exits 0, the
# audit chain verifies and SQLite finds the database intact.
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
WORKERS=8
SENDERS=4
PER_SENDER=100
TOTAL=$((SENDERS * PER_SENDER))
mkdir -p "$PROJ/.git" || exit 2

host_of() {	# worker I's host: two workers per host
	case $(($1 % 4)) in
	0) echo cursor ;;
	1) echo claude ;;
	2) echo codex ;;
	3) echo gemini ;;
	esac
}
ss_event() {
	case $1 in
	cursor) echo sessionStart ;;
	*) echo SessionStart ;;
	esac
}
pr_event() {
	case $1 in
	cursor) echo beforeSubmitPrompt ;;
	gemini) echo BeforeAgent ;;
	*) echo UserPromptSubmit ;;
	esac
}

# template HOST start|prompt SID: HOST's captured payload for session SID
# in $PROJ, its turn id (Gemini: prompt and timestamp) set to @TURN@.
template() {
	case $1:$2 in
	cursor:start) tp_f=01-sessionStart-ide.json ;;
	cursor:prompt) tp_f=02-beforeSubmitPrompt-ide.json ;;
	gemini:prompt) tp_f=02-BeforeAgent-prompt.json ;;
	*:start) tp_f=01-SessionStart-startup.json ;;
	*) tp_f=02-UserPromptSubmit-prompt.json ;;
	esac
	fixture_payload "$FIX/$1/$tp_f" "$PROJ" "$3" "$4"
}

# worker I: prompt after prompt in session wI until the senders are done
# and a prompt found nothing. Each stdout line goes to worker.I.out.
worker() {
	wk_h=$(host_of "$1")
	wk_ev=$(pr_event "$wk_h")
	wk_k=0
	while :; do
		wk_k=$((wk_k + 1))
		# Sampled before the hook: if every sender had finished
		# then, an empty prompt means the queue is empty for good.
		wk_done=0
		[ -e senders.done ] && wk_done=1
		sed "s/@TURN@/w$1-t$wk_k/g" "tmpl.$1" >"in.$1"
		"$HOOK" "$wk_h" "$wk_ev" <"in.$1" >"last.$1" 2>>"worker.$1.err"
		echo "$? $wk_h $wk_k" >>"worker.$1.codes"
		cat "last.$1" >>"worker.$1.out"
		if ! grep -q '"additional[_C]' "last.$1"; then
			[ "$wk_done" = 1 ] && return
			sleep 0.05
		fi
		if [ "$wk_k" -ge 5000 ]; then
			echo "worker $1 gave up" >>"worker.$1.err"
			return
		fi
	done
}

# sender I: queue PER_SENDER messages for bob from agent sI; a send
# refused because bob's queue is full is retried (bounded).
sender() {
	sd_k=1
	sd_try=0
	while [ "$sd_k" -le "$PER_SENDER" ]; do
		if pigeon send --project "$PROJ" --to bob --from "s$1" \
		    "message $sd_k of s$1" >>"sender.$1.out" \
		    2>"sender.$1.last"; then
			sd_k=$((sd_k + 1))
			sd_try=0
			continue
		fi
		cat "sender.$1.last" >>"sender.$1.err"
		sd_try=$((sd_try + 1))
		if [ "$sd_try" -ge 200 ] ||
		    ! grep -q "pending" "sender.$1.last"; then
			echo "sender $1 failed at $sd_k" >>"sender.$1.fail"
			return
		fi
		sleep 0.1
	done
}

test_case 'setup: 8 sessions of four hosts bound to bob' '
	PIGEON_AGENT=bob && export PIGEON_AGENT &&
	i=0 &&
	while [ $i -lt $WORKERS ]; do
		h=$(host_of $i) &&
		template $h start "w$i" "" >start.json &&
		"$HOOK" $h "$(ss_event $h)" <start.json >start.out &&
		grep -q "you are agent \\\\\"bob\\\\\"" start.out &&
		template $h prompt "w$i" @TURN@ >tmpl.$i || return 1
		i=$((i + 1))
	done &&
	sql_is "SELECT count(*) FROM session s JOIN agent a ON
		a.id = s.agent_id WHERE a.name = ${SQ}bob${SQ}" $WORKERS &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}bound${SQ}" \
		$WORKERS
'

test_case "8 hook loops and 4 senders: $TOTAL messages, each injected once" '
	PIGEON_AGENT=bob && export PIGEON_AGENT &&
	start=$(date +%s) &&
	i=0 &&
	while [ $i -lt $WORKERS ]; do
		worker $i &
		echo $! >>workers.pids
		bg_track $!
		i=$((i + 1))
	done &&
	i=1 &&
	while [ $i -le $SENDERS ]; do
		sender $i &
		echo $! >>senders.pids
		bg_track $!
		i=$((i + 1))
	done &&
	for p in $(cat senders.pids); do wait $p; done &&
	: >senders.done &&
	for p in $(cat workers.pids); do wait $p; done &&
	end=$(date +%s) &&
	test_note "hooks and senders took $((end - start)) s" &&
	! ls sender.*.fail 2>/dev/null &&
	cat sender.*.out | sed -n "s/^queued #\\([0-9]*\\) for bob\$/\\1/p" |
		sort -n >sent.ids &&
	test "$(wc -l <sent.ids)" = $TOTAL &&
	cat worker.*.codes >codes &&
	test_note "$(wc -l <codes) hook runs" &&
	! grep -v "^0 " codes &&
	! grep -v "^ *\$" worker.*.err &&
	cat worker.*.out | jq -r ".hookSpecificOutput.additionalContext //
		.additional_context // empty" >contexts &&
	grep "^\\[#" contexts >heads &&
	sed -n "s/^\\[#\\([0-9]*\\) from s[1-4], .*/\\1/p" heads | sort -n >got.ids &&
	test "$(wc -l <heads)" = "$(wc -l <got.ids)" &&
	sort -n got.ids | uniq -d >dups &&
	expect_empty dups &&
	test_cmp sent.ids got.ids
'

test_case 'drained: nothing queued, a last prompt finds nothing' '
	PIGEON_AGENT=bob && export PIGEON_AGENT &&
	pigeon inbox --project "$PROJ" --agent bob --json >inbox &&
	jq -e "length == 0" inbox >/dev/null &&
	sed "s/@TURN@/final/g" tmpl.1 >final.json &&
	"$HOOK" claude UserPromptSubmit <final.json >final.out &&
	expect_empty final.out
'

test_case 'audit: one delivery per message, the chain verifies' '
	sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" \
		"$TOTAL|$TOTAL" &&
	sql_is "SELECT count(*) FROM delivery WHERE route <> ${SQ}prompt${SQ}
		OR session NOT LIKE ${SQ}%:w_${SQ}" 0 &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}delivered${SQ}" \
		$TOTAL &&
	sql_is "SELECT count(DISTINCT host) FROM delivery" 4 &&
	pigeon audit verify --project "$PROJ" >verify.out 2>verify.err &&
	expect_empty verify.err &&
	sql_is "PRAGMA integrity_check" ok &&
	busy=$(grep -c "status=busy" "$PIGEON_HOME/hook.log" || :) &&
	test_note "hook.log: ${busy:-0} busy runs (fail-open, claimed later)" &&
	! grep "status=" "$PIGEON_HOME/hook.log" | grep -v "status=ok" |
		grep -v "status=busy"
'

test_done
