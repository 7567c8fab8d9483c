#!/bin/sh
# Two machines, one PostgreSQL server: two PIGEON_HOMEs, each with its
# own checkout of one repository at a different path, its origin remote
# written in another form (scp-like on one, https on the other). Both
# see one scope, keyed by the normalised remote, with the same agents
# and mail; 8 claimers (pigeon read and the prompt hook, half on each
# machine) and 4 senders (two on each) race, and every message is
# delivered exactly once, checked through psql; the audit verifies from
# both; hook.log stays on the machine that wrote it.
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
PER_SENDER=${PGN_T0701_PER_SENDER:-100}
TOTAL=$((4 * PER_SENDER))
KEY=github.com/team/app

# machine_setup M REPO URL: machine M's home, state and checkout.
machine_setup() {
	mkdir -p "$TEST_DIR/$1/home" "$2/.git" "$2/src" &&
	cat >"$2/.git/config" <<-EOF
		[core]
			repositoryformatversion = 0
			bare = false
		[remote "origin"]
			url = $3
			fetch = +refs/heads/*:refs/remotes/origin/*
	EOF
}
A_REPO=$TEST_DIR/a/home/src/app
B_REPO=$TEST_DIR/b/srv/work/app-checkout
machine_setup a "$A_REPO" git@github.com:team/app.git || exit 2
machine_setup b "$B_REPO" https://ci-bot@GitHub.com/team/app.git/ || exit 2

# on M CMD...: run CMD as machine M: its HOME, its PIGEON_HOME, in a
# subdirectory of its checkout.
on() {
	on_m=$1
	shift
	if [ "$on_m" = a ]; then on_r=$A_REPO; else on_r=$B_REPO; fi
	(cd "$on_r/src" && HOME=$TEST_DIR/$on_m/home \
	    PIGEON_HOME=$TEST_DIR/$on_m/state "$@")
}

test_case 'both machines see one scope, keyed by the origin remote' '
	on a pigeon agent add bob >/dev/null &&
	on a pigeon agent add alice >/dev/null &&
	on b pigeon agents --json | jq -r ".[].name" >names &&
	printf "alice\nbob\n" >expect && test_cmp expect names &&
	on b pigeon agents >out &&
	grep -qxF "scope: $KEY" out &&
	on a pigeon agents >out.a &&
	grep -qxF "scope: $KEY" out.a &&
	pg_sql_is "SELECT root FROM scope ORDER BY root" "$KEY"
'

test_case 'doctor names the scope key, and why a remote could not be used' '
	on b pigeon doctor >doctor.out &&
	grep -qxF "  scope key $KEY" doctor.out &&
	on b pigeon doctor --json | jq -e --arg k "$KEY" \
		".project.scope_key == \$k" >/dev/null &&
	mkdir -p c/local/.git &&
	printf "[remote \"origin\"]\n\turl = /srv/git/app.git\n" \
		>c/local/.git/config &&
	(cd c/local && pigeon doctor >../../doctor.local) &&
	grep -qxF "  scope key $TEST_DIR/c/local" doctor.local &&
	grep -qF "the origin url in ${SQ}$TEST_DIR/c/local/.git/config${SQ} is a local path, not shared by machines: the scope key is the root path" \
		doctor.local
'

test_case 'a message sent on one machine is read on the other' '
	on a pigeon send --from alice --to bob "from the laptop" >out &&
	id=$(sed -n "s/^queued #\([0-9]*\) .*/\1/p" out) &&
	test -n "$id" &&
	on b pigeon read --agent bob --json >got &&
	jq -e --arg id "$id" "length == 1 and .[0].id == (\$id | tonumber)
		and .[0].from == \"alice\" and .[0].body == \"from the laptop\"" got &&
	on a pigeon read --agent bob --json >again &&
	test "$(cat again)" = "[]" &&
	pg_sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 0
'

test_case 'a ping sent on one machine reaches the other at its next tool call' '
	fixture_payload "$PGN_SRC/tests/fixtures/payloads/claude/02-UserPromptSubmit-prompt.json" \
		"$B_REPO/src" tool-b p1 >prompt.json &&
	fixture_payload "$PGN_SRC/tests/fixtures/payloads/claude/10-PostToolUse-bash.json" \
		"$B_REPO/src" tool-b >tool.json &&
	on b env PIGEON_AGENT=carol "$HOOK" claude UserPromptSubmit \
		<prompt.json >out.p &&
	for i in 1 2 3; do
		on b "$HOOK" claude PostToolUse <tool.json >out.t || return 1
		expect_empty out.t || return 1
	done &&
	on a pigeon send --from alice --to carol "while you work" >/dev/null &&
	on b "$HOOK" claude PostToolUse <tool.json >out.t &&
	jq -e ".hookSpecificOutput.additionalContext |
		contains(\"while you work\")" out.t &&
	pg_sql_is "SELECT d.route FROM delivery d JOIN message m
		ON m.id = d.message_id WHERE m.body = ${SQ}while you work${SQ}" \
		after-tool
'

# reader M I: pigeon read on machine M until the senders are done and
# the queue is empty; every output goes to reader.M.I.json.
reader() {
	while :; do
		done_before=0
		[ -e senders.done ] && done_before=1
		out=$(on "$1" pigeon read --agent bob --json 2>>"err.r$1$2")
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "pigeon read exited $rc" >>"fail.r$1$2"
			return
		fi
		printf '%s\n' "$out" >>"reader.$1.$2.json"
		[ "$out" = "[]" ] && [ "$done_before" = 1 ] && return
	done
}

# hooker M I: the prompt hook of session m-M-I (bound to bob) on M, a
# new prompt id each run; each output goes to hook.M.I.out.
hooker() {
	n=0
	if [ "$1" = a ]; then h_r=$A_REPO; else h_r=$B_REPO; fi
	while :; do
		n=$((n + 1))
		done_before=0
		[ -e senders.done ] && done_before=1
		printf '{"session_id":"m-%s-%s","cwd":"%s/src","prompt_id":"p-%s","hook_event_name":"UserPromptSubmit","prompt":"next"}\n' \
			"$1" "$2" "$h_r" "$n" >"in.h$1$2"
		on "$1" env PIGEON_AGENT=bob "$HOOK" claude UserPromptSubmit \
			<"in.h$1$2" >"out.h$1$2" 2>>"err.h$1$2"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "pigeon-hook exited $rc" >>"fail.h$1$2"
			return
		fi
		cat "out.h$1$2" >>"hook.$1.$2.out"
		if ! grep -q '\[#' "out.h$1$2"; then
			[ "$done_before" = 1 ] && return
			sleep 0.1
		fi
	done
}

# sender M I: PER_SENDER messages to bob from sI, on machine M.
sender() {
	k=1
	while [ "$k" -le "$PER_SENDER" ]; do
		on "$1" pigeon send --to bob --from "s$2" "message $k of s$2" \
			>>"sender.$2.out" 2>>"err.s$2" ||
			echo "pigeon send $k exited $?" >>"fail.s$2"
		k=$((k + 1))
	done
}

test_case "8 claimers and 4 senders on two machines run to completion" '
	for s in 1 2 3 4; do on a pigeon agent add s$s >/dev/null || return 1; done &&
	start=$(date +%s) && cpids= && spids= &&
	for m in a b; do
		for i in 1 2; do
			: >reader.$m.$i.json && { reader $m $i & } &&
			cpids="$cpids $!" && bg_track $! &&
			: >hook.$m.$i.out && { hooker $m $i & } &&
			cpids="$cpids $!" && bg_track $! || return 1
		done
	done &&
	{ sender a 1 & } && spids="$spids $!" && bg_track $! &&
	{ sender a 2 & } && spids="$spids $!" && bg_track $! &&
	{ sender b 3 & } && spids="$spids $!" && bg_track $! &&
	{ sender b 4 & } && spids="$spids $!" && bg_track $! &&
	for p in $spids; do bg_wait $p || return 1; done &&
	: >senders.done &&
	for p in $cpids; do bg_wait $p || return 1; done &&
	test_note "$TOTAL messages sent and claimed in $(($(date +%s) - start)) s"
'

test_case 'every process exited 0 and wrote nothing on stderr' '
	for f in fail.*; do
		test ! -e "$f" || { cat "$f"; return 1; }
	done &&
	for f in err.*; do
		expect_empty "$f" || return 1
	done &&
	test "$(cat sender.*.out | wc -l)" = $TOTAL
'

# The ids the claimers of machine M printed, one per line.
claimed_on() {
	cat reader.$1.*.json | jq -r ".[].id" &&
	cat hook.$1.*.out | jq -r ".hookSpecificOutput.additionalContext" |
		sed -n "s/^\[#\([0-9]*\) from .*/\1/p"
}

test_case 'no message claimed twice, none lost, on either machine' '
	claimed_on a >claimed.a && claimed_on b >claimed.b &&
	test_note "machine a claimed $(wc -l <claimed.a), machine b" \
		"$(wc -l <claimed.b)" &&
	test -s claimed.a && test -s claimed.b &&
	cat claimed.a claimed.b | sort -n >claimed &&
	uniq -d claimed >dups && expect_empty dups &&
	pg_sql "SELECT id FROM message WHERE sender LIKE ${SQ}s_${SQ}
		ORDER BY id" >all &&
	test "$(wc -l <all)" = $TOTAL &&
	test_cmp all claimed
'

test_case 'the database: each message delivered once, audited, journalled' '
	n=$((TOTAL + 2)) &&
	pg_sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 0 &&
	pg_sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" \
		"$n|$n" &&
	pg_sql_is "SELECT count(*) FROM message m LEFT JOIN delivery d
		ON d.message_id = m.id WHERE d.id IS NULL" 0 &&
	pg_sql_is "SELECT kind, count(*), count(DISTINCT message_id)
		FROM journal WHERE kind IN (${SQ}sent${SQ}, ${SQ}delivered${SQ})
		GROUP BY kind ORDER BY kind" "delivered|$n|$n
sent|$n|$n" &&
	pg_sql_is "SELECT count(*) FROM delivery d JOIN message m
		ON m.id = d.message_id WHERE d.body <> m.body" 0 &&
	pg_sql_is "SELECT sender, count(*) FROM message GROUP BY sender
		ORDER BY sender" "alice|2
s1|$PER_SENDER
s2|$PER_SENDER
s3|$PER_SENDER
s4|$PER_SENDER"
'

test_case 'what was sent is what was claimed' '
	{ cat reader.*.json | jq -r ".[] | \"\(.id) \(.from) \(.body)\"" &&
	  cat hook.*.out | jq -r ".hookSpecificOutput.additionalContext" |
		sed -n "s/^\[#\([0-9]*\) from \([^ ,]*\).*/\1 \2/p" |
		while read -r id from; do
			echo "$id $from $(pg_sql "SELECT body FROM message
				WHERE id = $id")"
		done
	} | sort -n >claimed.rows &&
	pg_sql "SELECT id || ${SQ} ${SQ} || sender || ${SQ} ${SQ} || body
		FROM message WHERE sender LIKE ${SQ}s_${SQ} ORDER BY id" >sent.rows &&
	test_cmp sent.rows claimed.rows
'

test_case 'the audit chain verifies from both machines' '
	n=$((TOTAL + 2)) &&
	on a pigeon audit verify >out.a &&
	on b pigeon audit verify >out.b &&
	echo "audit chain intact: $n deliveries verified" >expect &&
	test_cmp expect out.a && test_cmp expect out.b
'

test_case 'each hook.log is on its own machine, naming its own sessions' '
	grep -q "session=claude:m-a-" a/state/hook.log &&
	! grep -q "session=claude:m-b-" a/state/hook.log &&
	grep -q "session=claude:m-b-" b/state/hook.log &&
	! grep -q "session=claude:m-a-" b/state/hook.log &&
	pg_sql_is "SELECT count(*) FROM session
		WHERE key LIKE ${SQ}claude:m-%${SQ}" 4 &&
	grep -q "session=claude:tool-b" b/state/hook.log &&
	! grep -q "session=claude:tool-b" a/state/hook.log
'

test_done
