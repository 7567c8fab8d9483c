#!/bin/sh
# Backends killed mid-transaction: while 4 `pigeon read` loops, 4
# prompt-hook loops and 4 sender loops run against the server, a killer
# calls pg_terminate_backend() on every backend of the database that is
# inside a transaction, every few milliseconds. A client whose backend
# dies gets an error (the CLI exits 1 with one line, the hook is neutral
# and logs it); its transaction is either applied whole (the backend
# died after COMMIT) or not at all. Then a drain, and nothing is lost
# or duplicated: as in the crash test (integration/crash.sh), every
# message delivered once, audited and journalled once, every printed id
# stored, every stored message from a send that was tried, and the
# delivered but unseen ones in the journal and the audit. CPU hogs run
# meanwhile (a loaded machine stretches every commit and resolution),
# and every message a hook delivered was printed by a hook or named in
# hook.log (decision 0131).
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
PER_SENDER=100		# 40 under the sanitizers (as in integration/crash.sh)
[ "${PGN_SANITIZED:-0}" != 1 ] || PER_SENDER=40
PER_SENDER=${PGN_T0704_PER_SENDER:-$PER_SENDER}
MIN_TERMINATED=20	# backends the killer must have terminated
HOGS=${PGN_T0704_HOGS:-1}	# busy loops while the clients run
mkdir "$TEST_DIR/.git" || exit 2

# killer: rounds of pg_terminate_backend() on the backends of this
# database inside a transaction (but its own), each with probability
# 0.2, printing how many, each round followed by a pause of 10-50 ms;
# 100 rounds per psql, until the senders are done. A backend may end
# between the look and the kill: the server's warning says so.
killer() {
	for i in $(seq 100); do
		cat <<-'EOF'
			SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))
			FROM pg_stat_activity WHERE datname = current_database()
			AND pid <> pg_backend_pid()
			AND backend_type = 'client backend'
			AND xact_start IS NOT NULL AND random() < 0.2;
			DO $$ BEGIN PERFORM pg_sleep(0.01 + random() * 0.04); END $$;
		EOF
	done >kill.sql
	while [ ! -e senders.done ]; do
		pg_psql "$PG" -f kill.sql >>killed.counts 2>>killer.err || {
			echo "psql exited $?" >>killer.fail; return; }
	done
}

# hog: a busy loop (no process started) until the senders are done.
hog() {
	while [ ! -e senders.done ]; do :; done
}

# is_terminated FILE: FILE holds the one error line of a client whose
# backend was terminated (or whose connection broke as it was).
is_terminated() {
	test "$(wc -l <"$1")" -eq 1 && grep -q '^pigeon: ' "$1" &&
	grep -qiE 'terminat|server closed the connection|connection|no connection' "$1"
}

reader() {
	n=0
	while :; do
		n=$((n + 1))
		done_before=0
		[ -e senders.done ] && done_before=1
		pigeon read --agent bob --json >out.r$1 2>err.r$1
		rc=$?
		if [ "$rc" -eq 0 ]; then
			cat out.r$1 >>reader.$1.json
			[ -s err.r$1 ] && cat err.r$1 >>claimer.r$1.stderr
			if [ "$(cat out.r$1)" = "[]" ]; then
				[ "$done_before" = 1 ] && break
				sleep 0.05
			fi
		elif [ "$rc" -eq 1 ] && is_terminated err.r$1; then
			echo "$n" >>reader.$1.terminated
		else
			echo "pigeon read exited $rc: $(cat err.r$1)" \
				>>claimer.r$1.fail
			break
		fi
	done
}

hooker() {
	n=0
	while :; do
		n=$((n + 1))
		done_before=0
		[ -e senders.done ] && done_before=1
		printf '{"session_id":"term-%s","cwd":"%s","prompt_id":"p-%s-%s","hook_event_name":"UserPromptSubmit","prompt":"next"}\n' \
			"$1" "$TEST_DIR" "$1" "$n" >in.h$1
		PIGEON_AGENT=bob "$HOOK" claude UserPromptSubmit <in.h$1 \
			>out.h$1 2>err.h$1
		rc=$?
		if [ "$rc" -ne 0 ] || [ -s err.h$1 ]; then
			echo "pigeon-hook exited $rc: $(cat err.h$1)" \
				>>claimer.h$1.fail
			break
		fi
		cat out.h$1 >>hook.$1.out
		if ! grep -q '\[#' out.h$1; then
			[ "$done_before" = 1 ] && break
			sleep 0.05
		fi
	done
}

# sender I: until PER_SENDER ids were printed; a send whose backend was
# terminated may or may not have stored its message: its K goes to
# sender.I.failed and the next one gets K + 1.
sender() {
	k=1 ok=0
	: >sender.$1.failed
	while [ "$ok" -lt "$PER_SENDER" ]; do
		pigeon send --to bob --from "s$1" "message $k of s$1" \
			>out.s$1 2>err.s$1
		rc=$?
		if [ "$rc" -eq 0 ]; then
			id=$(sed -n 's/^queued #\([0-9]*\) .*/\1/p' out.s$1)
			echo "$id|s$1|message $k of s$1" >>sender.$1.ids
			ok=$((ok + 1))
		elif [ "$rc" -eq 1 ] && is_terminated err.s$1; then
			echo "$k" >>sender.$1.failed
		elif [ "$rc" -eq 2 ] && grep -q "messages waiting" err.s$1; then
			sleep 0.02
			continue
		else
			echo "send $k exited $rc: $(cat err.s$1)" >>sender.$1.fail
			break
		fi
		k=$((k + 1))
	done
}

test_case 'setup: bob and four senders' '
	for a in bob s1 s2 s3 s4; do
		pigeon agent add $a >/dev/null || return 1
	done
'

test_case "readers, hooks and senders while backends are terminated" '
	start=$(date +%s) && cpids= && spids= &&
	for i in 1 2 3 4; do
		: >reader.$i.json && { reader $i & } &&
		cpids="$cpids $!" && bg_track $! &&
		: >hook.$i.out && { hooker $i & } &&
		cpids="$cpids $!" && bg_track $! || return 1
	done &&
	for i in 1 2 3 4; do
		: >sender.$i.ids && { sender $i & } &&
		spids="$spids $!" && bg_track $! || return 1
	done &&
	for i in $(seq "$HOGS"); do
		{ hog & } && bg_track $! || return 1
	done &&
	: >killed.counts && { killer & } && kpid=$! && bg_track $kpid &&
	for p in $spids; do bg_wait $p || return 1; done &&
	: >senders.done &&
	bg_wait $kpid &&
	for p in $cpids; do bg_wait $p || return 1; done &&
	test_note "run took $(($(date +%s) - start)) s"
'

test_case "at least $MIN_TERMINATED backends terminated, claimers and senders hit" '
	test ! -e killer.fail &&
	{ grep -v "is not a PostgreSQL backend process" killer.err || :; } \
		>killer.other && expect_empty killer.other &&
	t=$(awk "{ s += \$1 } END { print s + 0 }" killed.counts) &&
	r=$(cat reader.*.terminated 2>/dev/null | wc -l) &&
	s=$(cat sender.*.failed | wc -l) &&
	h=$(grep -h "status=" "$PIGEON_HOME/hook.log" | grep -vc "status=ok") &&
	test_note "$t backends terminated; failed: $r reads, $s sends, $h hooks" &&
	test "$t" -ge $MIN_TERMINATED &&
	test $((r + h)) -gt 0 && test "$s" -gt 0
'

test_case 'every other run exited 0 and said nothing; hooks stayed neutral' '
	for f in claimer.*.fail sender.*.fail claimer.*.stderr; do
		test ! -e "$f" || { cat "$f"; return 1; }
	done
'

test_case 'drain: pigeon read claims what is left' '
	pigeon read --agent bob --json >drain.json &&
	expect_output "[]" pigeon read --agent bob --json
'

seen_ids() {
	cat reader.*.json drain.json | jq -r ".[].id" &&
	cat hook.*.out | jq -r ".hookSpecificOutput.additionalContext" |
		sed -n "s/^\[#\([0-9]*\) from .*/\1/p"
}

test_case 'no message seen twice; each delivered once, audited, journalled' '
	seen_ids >seen &&
	sort -n seen | uniq -d >dups && expect_empty dups &&
	n=$(pg_sql "SELECT count(*) FROM message") &&
	test "$n" -ge $((4 * PER_SENDER)) &&
	pg_sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 0 &&
	pg_sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" \
		"$n|$n" &&
	pg_sql_is "SELECT count(*), count(DISTINCT message_id) FROM journal
		WHERE kind = ${SQ}delivered${SQ}" "$n|$n" &&
	pg_sql_is "SELECT count(*) FROM delivery d JOIN message m
		ON m.id = d.message_id WHERE d.body <> m.body" 0
'

test_case 'every printed id is stored; every stored message was tried' '
	cat sender.*.ids | sort >reported &&
	pg_sql "SELECT id || ${SQ}|${SQ} || sender || ${SQ}|${SQ} || body
		FROM message" | sort >stored &&
	comm -23 reported stored >missing && expect_empty missing &&
	comm -13 reported stored >extra &&
	while IFS="|" read -r id from body; do
		k=${body#message } && k=${k%% *} &&
		grep -qx "$k" "sender.${from#s}.failed" || {
			echo "message #$id ($body) was never sent"; return 1; }
	done <extra &&
	test_note "$(wc -l <extra) messages stored by sends that failed" \
		"(their backend died after COMMIT)"
'

test_case 'delivered but unseen messages are in the journal and the audit' '
	pg_sql "SELECT id FROM message" | sort >all &&
	sort seen | comm -23 all - >unseen &&
	test_note "$(wc -l <unseen) messages delivered but never printed" &&
	pigeon journal bob --limit 10000 --json |
		jq -r ".entries[] | select(.kind == \"delivered\") | .message_id" |
		sort >journalled &&
	pigeon audit --agent bob --limit 10000 --json |
		jq -r ".[].message_id" | sort >audited &&
	comm -23 unseen journalled >not.journalled && expect_empty not.journalled &&
	comm -23 unseen audited >not.audited && expect_empty not.audited
'

test_case 'every message a hook delivered was printed by a hook or named in hook.log' '
	pg_sql "SELECT message_id FROM delivery WHERE route = ${SQ}prompt${SQ}" |
		sort >hooked &&
	{ cat hook.*.out | jq -r ".hookSpecificOutput.additionalContext" |
		sed -n "s/^\[#\([0-9]*\) from .*/\1/p" &&
	  grep -hE " status=(unsure|lost-output) " "$PIGEON_HOME/hook.log" |
		sed -n "s/.* ids=\([0-9,]*\).*/\1/p" | tr , "\n"
	} | sort -u >shown.or.named &&
	comm -23 hooked shown.or.named >unaccounted &&
	test_note "$(wc -l <hooked) delivered by hooks;" \
		"$(grep -chE " status=unsure " "$PIGEON_HOME/hook.log") unsure" &&
	expect_empty unaccounted
'

test_case 'the audit chain verifies' '
	n=$(pg_sql "SELECT count(*) FROM delivery") &&
	expect_output "audit chain intact: $n deliveries verified" \
		pigeon audit verify
'

test_done
