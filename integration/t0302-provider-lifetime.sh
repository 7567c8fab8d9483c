#!/bin/sh
# The prompt-context provider dies with the hook (defect 12): the real
# `pigeon-hook claude UserPromptSubmit` runs an approved shell-script
# provider that starts `sleep 30` children and waits; the hook is
# SIGKILLed mid-run, and within 2 s no process of that provider (found
# by a marker in its environment, which its children inherit) is left.
# Also: a provider that exits leaving a background child, and one past
# the hook's deadline, leave nothing behind either; and the provider is
# run from its descriptor (its $0 is /dev/fd/3, its only extra fd 3).
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
PROJ=$TEST_DIR/proj
MARK=t0302-$(date +%s)-$$
VALID='{"schema":"pigeon.prompt-context/v1","context":"lifetime"}'
PIGEON_AGENT=bob
export PIGEON_AGENT
mkdir -p "$PROJ/.git" "$PROJ/.pigeon" "$PROJ/scripts" || exit 2
cat >"$PROJ/.pigeon/config.json" <<EOF || exit 2
{"promptContext": {"command": ["scripts/ctx"], "timeoutMs": 5000}}
EOF

# write_provider KIND: scripts/ctx, every process it starts carrying
# PGN_T0302_MARK=$MARK-KIND in its environment (the shell's own
# /proc/PID/environ is what it was started with: it has no marker).
write_provider() {
	{
		echo '#!/bin/sh'
		echo "PGN_T0302_MARK=$MARK-$1"
		echo 'export PGN_T0302_MARK'
		case $1 in
		waits) cat <<EOF
sleep 30 &
sleep 30 &
echo "\$\$" >"$TEST_DIR/started.tmp" && mv "$TEST_DIR/started.tmp" "$TEST_DIR/started"
wait
EOF
			;;
		leaves-child) cat <<EOF
cat >/dev/null
sleep 30 >/dev/null 2>&1 &
printf '%s\n' '$VALID'
EOF
			;;
		self) cat <<EOF
cat >/dev/null
echo "\$0" >"$TEST_DIR/dollar0"
ls /proc/\$\$/fd >"$TEST_DIR/fds"
printf '%s\n' '$VALID'
EOF
			;;
		esac
	} >"$PROJ/scripts/ctx" && chmod 755 "$PROJ/scripts/ctx" &&
	pigeon provider allow --project "$PROJ" >/dev/null
}

# payload N: a Claude UserPromptSubmit in $PROJ, prompt id N, to in.json.
payload() {
	jq -nc --arg dir "$PROJ" --arg pid "p$1" '{session_id: "s1",
		transcript_path: "/dev/null", cwd: $dir, prompt_id: $pid,
		hook_event_name: "UserPromptSubmit", prompt: "what next?"}' \
	    >in.json
}

# gone PID: ended (a zombie nobody reaps has ended too).
gone() {
	kill -0 "$1" 2>/dev/null || return 0
	[ "$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" \
	    2>/dev/null)" = Z ]
}

# marked KIND: the live processes carrying the marker of KIND.
marked() {
	for mk_env in /proc/[0-9]*/environ; do
		mk_pid=${mk_env#/proc/}
		mk_pid=${mk_pid%/environ}
		{ tr '\0' '\n' <"$mk_env"; } 2>/dev/null |
		    grep -qx "PGN_T0302_MARK=$MARK-$1" || continue
		gone "$mk_pid" || echo "$mk_pid"
	done
}

# marked_count KIND N: N processes of KIND, within 5 s. The provider says
# it started once it forked both children; a child shows the marker only
# once it has exec'd sleep (until then its environ is the shell's).
marked_count() {
	mc_i=0
	while [ "$(marked "$1" | wc -l)" -ne "$2" ]; do
		mc_i=$((mc_i + 1))
		if [ "$mc_i" -gt 50 ]; then
			echo "error: $(marked "$1" | wc -l) processes of $1," \
			    "want $2" >&9
			return 1
		fi
		sleep 0.1
	done
}

# none_left KIND: within 2 s no process of KIND is left (else they are
# listed, and killed).
none_left() {
	nl_i=0
	while [ -n "$(marked "$1")" ]; do
		nl_i=$((nl_i + 1))
		if [ "$nl_i" -gt 20 ]; then
			echo "error: still running after 2 s:" >&9
			for nl_p in $(marked "$1"); do
				ps -o pid,pgid,stat,args -p "$nl_p" >&9
				kill -9 "$nl_p"
			done
			return 1
		fi
		sleep 0.1
	done
}

test_case 'a SIGKILLed hook takes its provider and the provider'"'"'s children with it' '
	write_provider waits &&
	for round in 1 2 3; do
		tries=0
		while :; do
			rm -f "$TEST_DIR/started" && payload "$round" || return 1
			"$HOOK" claude UserPromptSubmit <in.json >out 2>err &
			hook=$!
			test_note "round $round: hook $hook"
			bg_track "$hook" &&
			wait_for "$TEST_DIR/started" . &&
			shell=$(cat "$TEST_DIR/started") || return 1
			# Stopped, the hook cannot reach its own 1.5 s deadline
			# while the (slow, on a loaded machine) /proc scan looks
			# for the provider${SQ}s children.
			kill -STOP "$hook" 2>/dev/null
			marked_count waits 2 && ! gone "$hook" && break
			# It may have reached the deadline (and ended the
			# provider) before the provider started: not the case
			# under test; run the round again.
			kill -CONT "$hook" 2>/dev/null
			bg_wait "$hook"
			none_left waits || return 1
			tries=$((tries + 1))
			test "$tries" -lt 5 || return 1
			test_note "round $round: the hook ended first; again"
		done
		kill -KILL "$hook" &&
		{ bg_wait "$hook"; test $? -eq 137; } &&
		none_left waits &&
		gone "$shell" || return 1
	done
'

test_case 'a provider that exits leaves no background child behind' '
	write_provider leaves-child &&
	payload 10 &&
	"$HOOK" claude UserPromptSubmit <in.json >out 2>err &&
	jq -r .hookSpecificOutput.additionalContext out | grep -qx lifetime &&
	none_left leaves-child
'

test_case 'a provider past the hook'"'"'s deadline leaves nothing behind' '
	write_provider waits &&
	payload 11 &&
	"$HOOK" claude UserPromptSubmit <in.json >out 2>err &&
	grep -q " provider=timeout " "$PIGEON_HOME/hook.log" &&
	none_left waits
'

test_case 'the provider runs from its descriptor: $0 is /dev/fd/3' '
	write_provider self &&
	payload 12 &&
	"$HOOK" claude UserPromptSubmit <in.json >out 2>err &&
	jq -r .hookSpecificOutput.additionalContext out | grep -qx lifetime &&
	test "$(cat "$TEST_DIR/dollar0")" = /dev/fd/3 &&
	grep -qx 3 "$TEST_DIR/fds" &&
	! grep -qx 1[0-9][0-9][0-9] "$TEST_DIR/fds"
'

test_done
