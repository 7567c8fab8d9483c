#!/bin/sh
# The prompt reminder and the prompt-context provider end to end: real
# provider scripts in a temp project, run by the real
# `pigeon-hook claude UserPromptSubmit` and approved with
# `pigeon provider status|allow|deny`. Disabled until allowed; after
# allow the provider's context follows the messages and the reminder;
# any change to the script or the config withdraws it; deny removes
# it; a provider.state with one byte changed, or a program outside the
# project, is never approved. Faulty providers (too slow, with a background child; flooding;
# invalid JSON; an extra key; control characters; a non-zero exit)
# leave the prompt as it would be without them, within the hook's
# deadline. The provider gets the request on stdin, an allow-listed
# environment and no way to reach the hook's stdout through stderr.
# Subagents and empty prompts do not run it. Neither its output nor
# the prompt reaches the database, the state, hook.log, the audit or
# the journal.
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
PROJ=$TEST_DIR/proj
# Unique strings: the provider's output and the prompt, to be found
# nowhere but in the hook's stdout.
SENT=ctx-sentinel-$(date +%s)-$$-q7
PSENT=prompt-sentinel-$(date +%s)-$$-k3
REMINDER="Run make check before you commit."
VALID='{"schema":"pigeon.prompt-context/v1","context":"'$SENT' from the provider"}'
PIGEON_AGENT=bob
export PIGEON_AGENT
mkdir -p "$PROJ/.git" "$PROJ/.pigeon" "$PROJ/scripts" "$PROJ/sub" || exit 2

now_ms() {
	date +%s%3N
}

# write_config [TIMEOUT [MAXOUT [ARG]]]: the project's config.json with
# the reminder and promptContext running scripts/ctx ARG.
write_config() {
	cat >"$PROJ/.pigeon/config.json" <<EOF
{
  "instructions": { "promptReminder": "$REMINDER" },
  "promptContext": {
    "command": ["scripts/ctx", "${3:---brief}"],
    "timeoutMs": ${1:-1000},
    "maxOutputBytes": ${2:-8192}
  }
}
EOF
}

# write_provider KIND: scripts/ctx becomes one of the test providers.
write_provider() {
	{
		echo '#!/bin/sh'
		case $1 in
		valid) cat <<EOF
cat >/dev/null
echo run >>"$TEST_DIR/runs"
printf '%s\n' '$VALID'
EOF
			;;
		sleeper) cat <<EOF
echo \$\$ >"$TEST_DIR/leader.pid"
sleep 10 &
echo \$! >"$TEST_DIR/child.pid"
sleep 10
printf '%s\n' '$VALID'
EOF
			;;
		flood-head) cat <<EOF
yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 1000000
EOF
			;;
		flood-loop) cat <<EOF
while :; do echo '$VALID'; done
EOF
			;;
		not-json) cat <<EOF
cat >/dev/null
echo 'here is some context, but not as JSON'
EOF
			;;
		extra-key) cat <<EOF
printf '%s\n' '{"schema":"pigeon.prompt-context/v1","context":"$SENT","extra":1}'
EOF
			;;
		escaped-control) cat <<EOF
printf '%s\n' '{"schema":"pigeon.prompt-context/v1","context":"$SENT \u0001"}'
EOF
			;;
		raw-escape) cat <<EOF
printf '{"schema":"pigeon.prompt-context/v1","context":"\033[31m$SENT"}\n'
EOF
			;;
		exit-1) cat <<EOF
printf '%s\n' '$VALID'
exit 1
EOF
			;;
		request) cat <<EOF
cat >"$TEST_DIR/request.json"
pwd -P >"$TEST_DIR/pwd.txt"
printf '%s\n' '$VALID'
EOF
			;;
		env) cat <<EOF
cat >/dev/null
env >"$TEST_DIR/env.txt"
printf '%s\n' '$VALID'
EOF
			;;
		stderr) cat <<EOF
echo "STDERR-MARK-from-the-provider" >&2
cat >/dev/null
echo "STDERR-MARK-again" >&2
printf '%s\n' '$VALID'
EOF
			;;
		esac
	} >"$PROJ/scripts/ctx" && chmod 755 "$PROJ/scripts/ctx"
}

# prompt SID [TEXT [JQ]]: a Claude UserPromptSubmit of session SID in
# $PROJ with a fresh prompt_id (TEXT, kept in ./prompt.txt: default, one
# holding $PSENT; JQ
# edits the payload) through the hook; stdout ./out, stderr ./hook.err,
# its wall time in ms in $TEST_DIR/.ms. The hook must exit 0.
prompt() {
	pr_n=$(($(cat "$TEST_DIR/.n" 2>/dev/null || echo 0) + 1))
	echo "$pr_n" >"$TEST_DIR/.n"
	printf '%s' "${2-what next? $PSENT}" >prompt.txt
	jq -nc --arg sid "$1" --arg dir "$PROJ" --rawfile p prompt.txt \
	    --arg pid "prompt-$pr_n" '{session_id: $sid,
		transcript_path: "/dev/null", cwd: $dir, prompt_id: $pid,
		permission_mode: "default",
		hook_event_name: "UserPromptSubmit", prompt: $p}' |
	    jq -c "${3:-.}" >in.json || return 1
	pr_t0=$(now_ms)
	"$HOOK" claude UserPromptSubmit <in.json >out 2>hook.err
	pr_rc=$?
	echo $(($(now_ms) - pr_t0)) >"$TEST_DIR/.ms"
	echo "$pr_rc pigeon-hook" >>"$TEST_DIR/codes"
	[ "$pr_rc" -eq 0 ] && return 0
	echo "error: pigeon-hook exited $pr_rc" >&9
	cat hook.err >&9
	return 1
}

# ctx: the context injected by the last prompt ("" if none).
ctx() {
	jq -j '.hookSpecificOutput.additionalContext // empty' out
}

# ping TEXT: queue TEXT from alice for bob in $PROJ.
ping() {
	pigeon send --project "$PROJ" --create --from alice --to bob "$1" \
	    >/dev/null
}

# plog SID: the last provider line of session SID in hook.log.
plog() {
	grep " session=claude:$1 \(.* \)\{0,1\}provider=" "$PIGEON_HOME/hook.log" | tail -n 1
}

allow() {
	pigeon provider allow --project "$PROJ" >allow.out 2>allow.err &&
	expect_empty allow.err
}

status() {
	pigeon provider status --project "$PROJ" >status.out 2>status.err &&
	expect_empty status.err
}

# no_provider_context: the last prompt injected no provider context.
no_provider_context() {
	if grep -qF "$SENT" out || ctx | grep -q "^Project context"; then
		echo "error: provider context injected:" >&9
		cat out >&9
		return 1
	fi
}

# gone PID: the process has ended. Where nothing reaps orphans (a
# container whose pid 1 does not wait), a killed orphan stays a zombie,
# which kill -0 still finds: a zombie has ended too.
gone() {
	kill -0 "$1" 2>/dev/null || return 0
	[ "$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' "/proc/$1/stat" \
	    2>/dev/null)" = Z ]
}


# faulty SID STATUS: with the provider as written and allowed, a prompt
# still gets its message and the reminder, no provider context, exit 0
# within 2.5 s, and hook.log says provider=STATUS.
faulty() {
	fa_msg="queued before $1"
	ping "$fa_msg" || return 1
	prompt "$1" || return 1
	fa_ms=$(cat "$TEST_DIR/.ms")
	test_note "$2 ($1): the hook returned after $fa_ms ms"
	if [ "$fa_ms" -ge 2500 ]; then
		echo "error: the hook took $fa_ms ms" >&9
		return 1
	fi
	ctx >ctx.txt &&
	grep -qxF "  $fa_msg" ctx.txt &&
	grep -qxF "Project reminder: $REMINDER" ctx.txt &&
	no_provider_context &&
	expect_empty hook.err &&
	plog "$1" >plog.txt &&
	grep -q " provider=$2 ms=[0-9]* bytes=[0-9]*" plog.txt || {
		echo "error: want provider=$2 in:" >&9
		cat plog.txt >&9
		return 1
	}
}

# ---- disabled by default, allow, withdraw, deny -------------------------

test_case 'disabled by default: status says not allowed, the hook runs nothing' '
	write_config && write_provider valid &&
	status &&
	grep -qx "project:  $PROJ" status.out &&
	grep -qx "reminder: $REMINDER" status.out &&
	grep -qx "provider: scripts/ctx --brief" status.out &&
	grep -qx "  limits: 1000 ms, 8192 bytes of output" status.out &&
	grep -qx "  status: off: not allowed: run pigeon provider allow in the project" status.out &&
	pigeon provider status --project "$PROJ" --json >status.json &&
	jq -e ".provider.allowed == false and .reminder == \"$REMINDER\"" \
		status.json >/dev/null &&
	ping "first note" &&
	prompt s-off &&
	ctx >ctx.txt &&
	grep -qx "  first note" ctx.txt &&
	grep -qxF "Project reminder: $REMINDER" ctx.txt &&
	no_provider_context &&
	test ! -e "$TEST_DIR/runs" &&
	plog s-off | grep -q " provider=not-allowed ms=[0-9]* bytes=0 " &&
	test ! -e "$PIGEON_HOME/key" && test ! -e "$PIGEON_HOME/provider.state"
'

test_case 'allow shows what will run and records a private approval' '
	allow &&
	grep -qx "provider: scripts/ctx --brief" allow.out &&
	grep -qx "  runs:   $PROJ/scripts/ctx" allow.out &&
	digest=$(b2sum -l 256 "$PROJ/scripts/ctx" | cut -d " " -f 1) &&
	grep -qx "  blake2b $digest" allow.out &&
	grep -qx "  limits: 1000 ms, 8192 bytes of output" allow.out &&
	grep -q "^  status: allowed at 20[0-9-]*T[0-9:]*Z\$" allow.out &&
	status &&
	grep -q "^  status: allowed at " status.out &&
	pigeon provider status --project "$PROJ" --json >status.json &&
	jq -e ".provider.allowed == true and
		.provider.path == \"$PROJ/scripts/ctx\" and
		.provider.blake2b == \"$digest\" and
		.provider.timeout_ms == 1000 and
		.provider.max_output_bytes == 8192" status.json >/dev/null &&
	test "$(stat -c %a "$PIGEON_HOME/key")" = 600 &&
	test "$(stat -c %s "$PIGEON_HOME/key")" = 32 &&
	test "$(stat -c %a "$PIGEON_HOME/provider.state")" = 600 &&
	(cd "$PROJ/sub" && pigeon provider status) >sub.out &&
	grep -q "^  status: allowed at " sub.out
'

test_case 'after allow the context follows the messages and the reminder, labelled' '
	ping "second note" &&
	prompt s-on &&
	ctx >ctx.txt &&
	msg=$(grep -n "^  second note\$" ctx.txt | cut -d: -f1) &&
	rem=$(grep -nxF "Project reminder: $REMINDER" ctx.txt | cut -d: -f1) &&
	lab=$(grep -nx "Project context (from this project${SQ}s prompt-context provider):" ctx.txt | cut -d: -f1) &&
	body=$(grep -nxF "$SENT from the provider" ctx.txt | cut -d: -f1) &&
	test -n "$msg" && test -n "$rem" && test -n "$lab" && test -n "$body" &&
	test "$msg" -lt "$rem" && test "$rem" -lt "$lab" &&
	test "$body" -eq $((lab + 1)) &&
	grep -q "^Pigeon: 1 new message for bob\. " ctx.txt &&
	tail -n 1 ctx.txt | grep -qxF "$SENT from the provider" &&
	test "$(wc -l <"$TEST_DIR/runs")" = 1 &&
	plog s-on | grep -q " provider=ok ms=[0-9]* bytes=[0-9]* fp=[0-9a-f]\{32\}\$" &&
	prompt s-on &&
	ctx >ctx2.txt &&
	printf "%s\n" "Project reminder: $REMINDER" "" \
		"Project context (from this project${SQ}s prompt-context provider):" \
		"$SENT from the provider" >want &&
	test_cmp want ctx2.txt
'

test_case 'a changed script withdraws the approval until allowed again' '
	echo "# one more line" >>"$PROJ/scripts/ctx" &&
	status &&
	grep -qxF "  status: off: withdrawn: the provider program ${SQ}$PROJ/scripts/ctx${SQ} changed since it was allowed; review it and run pigeon provider allow again" status.out &&
	prompt s-script &&
	no_provider_context &&
	ctx | grep -qxF "Project reminder: $REMINDER" &&
	plog s-script | grep -q " provider=not-allowed .* withdrawn: the provider program" &&
	write_provider valid &&
	status && grep -q "^  status: allowed at " status.out &&
	printf "#\n" >>"$PROJ/scripts/ctx" &&
	prompt s-script-2 && no_provider_context &&
	allow &&
	prompt s-script-3 &&
	ctx | grep -qxF "$SENT from the provider" &&
	write_provider valid &&
	prompt s-script-4 && no_provider_context &&
	allow
'

test_case 'a changed config withdraws the approval until allowed again' '
	write_config 1200 &&
	status &&
	grep -qx "  limits: 1200 ms, 8192 bytes of output" status.out &&
	grep -qxF "  status: off: withdrawn: the promptContext configuration changed since it was allowed; review it and run pigeon provider allow again" status.out &&
	prompt s-config && no_provider_context &&
	plog s-config | grep -q " provider=not-allowed .* configuration changed" &&
	write_config 1000 8192 --full &&
	status && grep -q "^  status: off: withdrawn: the promptContext" status.out &&
	prompt s-config-2 && no_provider_context &&
	write_config 1000 4096 &&
	prompt s-config-3 && no_provider_context &&
	write_config &&
	status && grep -q "^  status: allowed at " status.out &&
	prompt s-config-4 &&
	ctx | grep -qxF "$SENT from the provider"
'

test_case 'deny removes the approval' '
	pigeon provider deny --project "$PROJ" >deny.out &&
	grep -qxF "denied: the provider of $PROJ will not run" deny.out &&
	status &&
	grep -qxF "  status: off: not allowed for $PROJ: run pigeon provider allow in the project" status.out &&
	prompt s-deny && no_provider_context &&
	plog s-deny | grep -q " provider=not-allowed " &&
	pigeon provider deny --project "$PROJ" >deny.out &&
	grep -qxF "nothing to deny: no provider was allowed for $PROJ" deny.out &&
	allow &&
	prompt s-deny-2 &&
	ctx | grep -qxF "$SENT from the provider"
'

test_case 'a provider.state with one byte changed counts as no approval' '
	cp "$PIGEON_HOME/provider.state" state.orig &&
	size=$(wc -c <state.orig) &&
	for off in 0 10 40 $((size - 1)); do
		cp state.orig "$PIGEON_HOME/provider.state" &&
		flip_byte "$PIGEON_HOME/provider.state" "$off" &&
		! cmp -s state.orig "$PIGEON_HOME/provider.state" &&
		status &&
		grep -qx "  status: off: the provider state failed to authenticate, so no approval counts: run pigeon provider allow again" status.out &&
		prompt s-tamper-$off && no_provider_context &&
		plog s-tamper-$off | grep -q " provider=not-allowed .*failed to authenticate" || {
			echo "error: byte $off" >&9
			return 1
		}
	done &&
	cp state.orig "$PIGEON_HOME/provider.state" &&
	prompt s-tamper-restored &&
	ctx | grep -qxF "$SENT from the provider"
'

test_case 'allow refuses a program outside the project' '
	rm "$PROJ/scripts/ctx" &&
	ln -s /bin/echo "$PROJ/scripts/ctx" &&
	expect_code 2 pigeon provider allow --project "$PROJ" >out 2>err &&
	expect_empty out &&
	expect_one_error err "resolves to ${SQ}/" &&
	grep -q "outside the project" err &&
	status && grep -q "^  status: off: the provider resolves to" status.out &&
	prompt s-outside && no_provider_context &&
	rm "$PROJ/scripts/ctx" && write_provider valid &&
	status && grep -q "^  status: allowed at " status.out
'

test_case 'an invalid promptContext turns the provider off, not the reminder' '
	cat >"$PROJ/.pigeon/config.json" <<-EOF &&
	{"instructions":{"promptReminder":"$REMINDER"},
	 "promptContext":{"command":["scripts/ctx"],"timeoutMs":0}}
	EOF
	status &&
	grep -qx "provider: off: promptContext.timeoutMs must be an integer from 1 to 5000" status.out &&
	expect_error 2 "promptContext.timeoutMs" \
		pigeon provider allow --project "$PROJ" &&
	prompt s-badcfg &&
	ctx | grep -qxF "Project reminder: $REMINDER" &&
	no_provider_context &&
	grep -q " session=claude:s-badcfg status=config .*promptContext.timeoutMs" \
		"$PIGEON_HOME/hook.log" &&
	test -z "$(plog s-badcfg)" &&
	write_config &&
	status && grep -q "^  status: allowed at " status.out
'

# ---- what the provider gets ---------------------------------------------

test_case 'the provider reads the request JSON on stdin, in the project root' '
	write_provider request && allow &&
	prompt s-req "quote \" backslash \\ tab	é $PSENT" \
		".cwd = \"$PROJ/sub\"" &&
	ctx | grep -qxF "$SENT from the provider" &&
	pid=$(jq -r .prompt_id in.json) &&
	jq -e --arg dir "$PROJ/sub" --arg turn "UserPromptSubmit:$pid" \
		--arg p "quote \" backslash \\ tab	é $PSENT" "
		(keys == [\"cwd\", \"host\", \"prompt\", \"schema\",
			\"session\", \"turn\"]) and
		.schema == \"pigeon.prompt-context-request/v1\" and
		.host == \"claude\" and .session == \"claude:s-req\" and
		.turn == \$turn and .cwd == \$dir and .prompt == \$p" \
		"$TEST_DIR/request.json" >/dev/null &&
	test "$(wc -l <"$TEST_DIR/request.json")" = 0 &&
	test "$(cat "$TEST_DIR/pwd.txt")" = "$PROJ"
'

test_case 'a prompt larger than a pipe reaches the provider whole' '
	big=$(repeat 30000 "0123456789") &&
	prompt s-big "$big" &&
	ctx | grep -qxF "$SENT from the provider" &&
	jq -j .prompt "$TEST_DIR/request.json" | cmp - prompt.txt &&
	test "$(wc -c <"$TEST_DIR/request.json")" -gt 300000
'

test_case 'the provider sees an allow-listed environment' '
	write_provider env && allow &&
	SECRET_TOKEN=hunter2-secret PIGEON_EXTRA=1 PIGEON_DEBUG=1 &&
	export SECRET_TOKEN PIGEON_EXTRA PIGEON_DEBUG &&
	prompt s-env &&
	ctx | grep -qxF "$SENT from the provider" &&
	test -s "$TEST_DIR/env.txt" &&
	! grep -q "^PIGEON_" "$TEST_DIR/env.txt" &&
	! grep -q "SECRET_TOKEN" "$TEST_DIR/env.txt" &&
	! grep -q "hunter2" "$TEST_DIR/env.txt" &&
	grep -q "^PATH=" "$TEST_DIR/env.txt" &&
	grep -qx "HOME=$HOME" "$TEST_DIR/env.txt" &&
	grep -qx "LC_ALL=C" "$TEST_DIR/env.txt" &&
	! grep -v -E "^(HOME|PATH|SHELL|USER|LOGNAME|LANG|LC_ALL|LC_CTYPE|TERM|TZ|TMPDIR|XDG_CACHE_HOME|XDG_CONFIG_HOME|XDG_DATA_HOME|PWD|OLDPWD|SHLVL|_)=" \
		"$TEST_DIR/env.txt"
'

test_case 'the provider'"'"'s stderr never reaches the hook'"'"'s output' '
	write_provider stderr && allow &&
	prompt s-stderr &&
	ctx | grep -qxF "$SENT from the provider" &&
	! grep -q STDERR-MARK out &&
	expect_empty hook.err &&
	! grep -q STDERR-MARK "$PIGEON_HOME/hook.log" &&
	test "$(wc -l <out)" = 1
'

test_case 'a subagent prompt and an empty prompt do not run the provider' '
	write_provider valid && allow &&
	runs=$(wc -l <"$TEST_DIR/runs") &&
	prompt s-sub "" ".agent_id = \"sub-1\" | .agent_type = \"Explore\" |
		.prompt = \"a subagent prompt $PSENT\"" &&
	no_provider_context &&
	prompt s-empty "" &&
	no_provider_context &&
	prompt s-blank "  	 " &&
	no_provider_context &&
	prompt s-noprompt "" "del(.prompt)" &&
	no_provider_context &&
	test "$(wc -l <"$TEST_DIR/runs")" = "$runs" &&
	! grep -q " session=claude:s-sub .*provider=" "$PIGEON_HOME/hook.log" &&
	! grep -q " session=claude:s-empty .*provider=" "$PIGEON_HOME/hook.log" &&
	! grep -q " session=claude:s-blank .*provider=" "$PIGEON_HOME/hook.log" &&
	! grep -q " session=claude:s-noprompt .*provider=" "$PIGEON_HOME/hook.log" &&
	prompt s-notsub &&
	ctx | grep -qxF "$SENT from the provider" &&
	test "$(wc -l <"$TEST_DIR/runs")" = $((runs + 1))
'

# ---- faulty providers ------------------------------------------------------

test_case 'a provider past the hook'"'"'s deadline is killed with its background child' '
	write_config 5000 && write_provider sleeper && allow &&
	rm -f "$TEST_DIR/child.pid" "$TEST_DIR/leader.pid" &&
	faulty s-sleep timeout &&
	child=$(cat "$TEST_DIR/child.pid") && leader=$(cat "$TEST_DIR/leader.pid") &&
	test -n "$child" && test -n "$leader" &&
	i=0 &&
	while ! { gone "$child" && gone "$leader"; }; do
		i=$((i + 1))
		if [ "$i" -gt 10 ]; then
			echo "error: $leader or its child $child still runs" >&9
			ps -o pid,pgid,stat,args -p "$leader,$child" >&9
			return 1
		fi
		sleep 0.1
	done
'

test_case 'a provider past its timeoutMs is killed' '
	write_config 300 && write_provider sleeper && allow &&
	faulty s-sleep-300 timeout &&
	child=$(cat "$TEST_DIR/child.pid") &&
	i=0 &&
	while ! gone "$child"; do
		i=$((i + 1))
		[ "$i" -le 10 ] || return 1
		sleep 0.1
	done
'

test_case 'a provider flooding stdout past maxOutputBytes is dropped' '
	write_config 1000 1024 && write_provider flood-head && allow &&
	faulty s-flood too-big &&
	write_provider flood-loop && allow &&
	faulty s-flood-loop too-big &&
	bytes=$(plog s-flood-loop | sed -n "s/.* bytes=\([0-9]*\).*/\1/p") &&
	test "$bytes" -gt 1024 &&
	write_config 1000 65536 && allow &&
	faulty s-flood-64k too-big
'

test_case 'invalid output is dropped: not JSON, an extra key, control characters' '
	write_config &&
	write_provider not-json && allow &&
	faulty s-notjson invalid &&
	plog s-notjson | grep -q "output is not valid JSON" &&
	write_provider extra-key && allow &&
	faulty s-extra invalid &&
	plog s-extra | grep -q "unknown key" &&
	write_provider escaped-control && allow &&
	faulty s-ctl invalid &&
	plog s-ctl | grep -q "control character" &&
	write_provider raw-escape && allow &&
	faulty s-esc invalid &&
	plog s-esc | grep -q "control character"
'

test_case 'valid output with a non-zero exit is a crash, and dropped' '
	write_provider exit-1 && allow &&
	faulty s-exit crashed &&
	plog s-exit | grep -q "exit status 1"
'

# ---- exclusion from the coordination logs ---------------------------------

test_case 'provider output and prompts stay out of every coordination log' '
	write_config && write_provider valid && allow &&
	ping "the last note" &&
	prompt s-excl &&
	ctx >ctx.txt &&
	grep -qxF "  the last note" ctx.txt &&
	grep -qxF "$SENT from the provider" ctx.txt &&
	for f in "$PIGEON_HOME"/pigeon.db "$PIGEON_HOME"/pigeon.db-wal \
	    "$PIGEON_HOME"/pigeon.db-shm "$PIGEON_HOME"/provider.state \
	    "$PIGEON_HOME"/hook.log; do
		if [ -e "$f" ] && grep -a -q -e "$SENT" -e "$PSENT" "$f"; then
			echo "error: a sentinel is in $f" >&9
			return 1
		fi
	done &&
	test -s "$PIGEON_HOME/pigeon.db" &&
	pigeon audit --project "$PROJ" --json >audit.json &&
	jq -e "length > 0" audit.json >/dev/null &&
	jq -e "any(.[]; .body == \"the last note\")" audit.json >/dev/null &&
	pigeon journal bob --project "$PROJ" --json >journal.json &&
	grep -q "the last note" journal.json &&
	pigeon inbox --project "$PROJ" --agent bob --json >inbox.json &&
	pigeon agents --project "$PROJ" --json >agents.json &&
	! grep -q -e "$SENT" -e "$PSENT" audit.json journal.json inbox.json \
		agents.json &&
	plog s-excl | grep -q " provider=ok ms=[0-9]* bytes=[0-9]* fp=[0-9a-f]\{32\}\$" &&
	grep " provider=ok " "$PIGEON_HOME/hook.log" >plines &&
	test -s plines &&
	! grep -v " provider=ok ms=[0-9]* bytes=[0-9]* fp=[0-9a-f]\{32\}\$" plines
'

test_case 'the hook never exited non-zero' '
	test "$(wc -l <"$TEST_DIR/codes")" -gt 30 &&
	! grep -v "^0 " "$TEST_DIR/codes"
'

test_done
