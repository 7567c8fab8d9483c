#!/bin/sh
# The before-tool hook with the real pigeon-hook binary (decision 0156):
# installed by `pigeon install cursor|copilot` and run by
# integration/pretool-sim the way Cursor and Copilot CLI document their
# preToolUse hooks (neither can be installed here). A write of a file
# another agent's exclusive lease covers is denied in the host's form,
# with one line naming path, holder, reason, expiry and the command to
# ask, and the file is unchanged; the holder's own write, a read, and
# the write after `pigeon lease release` run. With no live lease the
# hook opens no database and writes nothing (the lease stamp); a bad
# payload passes, with one hook.log line.
. "$(dirname "$0")/lib.sh"

SIM="sh $PGN_SRC/integration/pretool-sim"
PROJ=$TEST_DIR/proj
HOOK=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook
mkdir -p "$PROJ/.git" "$PROJ/src" || exit 2
echo original >"$PROJ/src/a.c" || exit 2
unset PIGEON_HOOK CURSOR_PROJECT_DIR CURSOR_VERSION COPILOT_HOME

# payload HOST SESSION TOOL PATH: a preToolUse payload of HOST, its tool
# TOOL writing (or reading) PATH under $PROJ, into payload.json.
payload() {
	case $1 in
	cursor)
		jq -n --arg c "$2" --arg d "$PROJ" --arg t "$3" \
		    --arg p "$PROJ/$4" '{hook_event_name: "preToolUse",
			conversation_id: $c, generation_id: "g1",
			cursor_version: "2.0.77", workspace_roots: [$d],
			tool_name: $t, tool_input: {file_path: $p}}' ;;
	copilot)
		# toolArgs as Copilot CLI passes them: JSON text.
		jq -n --arg s "$2" --arg d "$PROJ" --arg t "$3" \
		    --arg p "$PROJ/$4" '{sessionId: $s, timestamp: 1767225600000,
			cwd: $d, toolName: $t,
			toolArgs: ({path: $p, file_text: "x"} | tojson)}' ;;
	esac >payload.json
}

# start HOST SESSION AGENT: the session starts, bound to AGENT.
start() {
	case $1 in
	cursor) jq -n --arg c "$2" --arg d "$PROJ" '{
		hook_event_name: "sessionStart", conversation_id: $c,
		cursor_version: "2.0.77", workspace_roots: [$d]}' ;;
	copilot) jq -n --arg s "$2" --arg d "$PROJ" '{sessionId: $s,
		timestamp: 1767225600000, cwd: $d, source: "new"}' ;;
	esac | PIGEON_AGENT=$3 "$HOOK" "$1" "$(event "$1" start)" >/dev/null
}

event() {
	case $1:$2 in
	*:pre) echo preToolUse ;;
	cursor:start) echo sessionStart ;;
	copilot:start) echo sessionStart ;;
	esac
}

# sim HOST [FILE TEXT]: one tool call of payload.json; its answer in sim.json.
sim() {
	s_host=$1
	shift
	$SIM "$s_host" "$(config "$s_host")" payload.json "$@" >sim.json &&
		jq -e . sim.json >/dev/null && return 0
	echo "error: pretool-sim $s_host failed" >&9
	cat sim.json >&9
	return 1
}

config() {
	case $1 in
	cursor) echo "$HOME/.cursor/hooks.json" ;;
	copilot) echo "$HOME/.copilot/hooks/pigeon.json" ;;
	esac
}

simq() {
	jq -e "$1" sim.json >/dev/null && return 0
	echo "error: sim.json fails $1:" >&9
	cat sim.json >&9
	return 1
}

hook_lines() {
	wc -l <"$PIGEON_HOME/hook.log" 2>/dev/null || echo 0
}

test_case 'the simulator: a deny of each form stops the tool, and in Cursor an answer without a permission; anything else runs it' '
	mkdir -p simh && echo old >simh/f &&
	printf "#!/bin/sh\ncat >/dev/null\necho \"\$1\"\n" >simh/say &&
	chmod +x simh/say &&
	jq -n --arg c "simh/say {\\\"permission\\\":\\\"deny\\\",\\\"agent_message\\\":\\\"no\\\"}" \
	    "{version: 1, hooks: {preToolUse: [{command: \$c}]}}" >simh/c.json &&
	echo "{}" >payload.json &&
	$SIM cursor simh/c.json payload.json simh/f new >sim.json &&
	simq ".denied and .message == \"no\" and (.ran | not)" &&
	test "$(cat simh/f)" = old &&
	jq -n "{version: 1, hooks: {preToolUse: [{command: \"exit 2\"}]}}" \
	    >simh/c2.json &&
	$SIM cursor simh/c2.json payload.json simh/f new >sim.json &&
	simq ".denied" &&
	for out in "" nonsense "{}" "{\\\"continue\\\":true}"; do
		jq -n --arg c "simh/say \"$out\"" \
		    "{version: 1, hooks: {preToolUse: [{command: \$c}]}}" \
		    >simh/c3.json &&
		$SIM cursor simh/c3.json payload.json simh/f new >sim.json &&
		simq ".denied and (.ran | not)" || exit 1
	done &&
	jq -n --arg c "simh/say {\\\"permission\\\":\\\"allow\\\"}" \
	    "{version: 1, hooks: {preToolUse: [{command: \$c}]}}" >simh/c4.json &&
	$SIM cursor simh/c4.json payload.json simh/f new >sim.json &&
	simq "(.denied | not) and .ran" &&
	test "$(cat simh/f)" = new && echo old >simh/f &&
	jq -n "{version: 1, hooks: {preToolUse: [{command: \"exit 2\"}]}}" \
	    >simh/p2.json &&
	$SIM copilot simh/p2.json payload.json simh/f new >sim.json &&
	simq "(.denied | not) and .ran" &&
	test "$(cat simh/f)" = new &&
	jq -n "{version: 1, hooks: {preToolUse: [{bash: \"echo nonsense\"}]}}" \
	    >simh/p3.json &&
	$SIM copilot simh/p3.json payload.json >sim.json &&
	simq "(.denied | not) and .ran"
'

test_case 'pigeon install cursor and copilot register preToolUse' '
	pigeon install cursor >/dev/null &&
	pigeon install copilot >/dev/null &&
	test "$(jq -r ".hooks.preToolUse[0].command" "$(config cursor)")" = \
	    "[ -x $HOOK ] || { echo '"'"'{\"permission\":\"allow\"}'"'"'; exit 0; }; exec $HOOK cursor preToolUse" &&
	test "$(jq -r ".hooks.preToolUse[0].command" "$(config copilot)")" = \
	    "[ -x $HOOK ] || exit 0; exec $HOOK copilot preToolUse" &&
	pigeon doctor --json >doc.json ; test $? -le 1 &&
	jq -e ".hooks[] | select(.host == \"cursor\" and .level == \"user\") |
		.installed and (.events | index(\"preToolUse\") != null)" \
	    doc.json >/dev/null
'

test_case 'sessions bound: alice and bob on each host' '
	for h in cursor copilot; do
		start $h "$h-alice" alice && start $h "$h-bob" bob || exit 1
	done &&
	test "$(sql "SELECT count(*) FROM session")" = 4
'

test_case 'no live lease: the call runs, no database opened, nothing written' '
	n=$(hook_lines) &&
	ls -l --time-style=+%s.%N "$PIGEON_HOME"/pigeon.db* >before &&
	for h in cursor copilot; do
		case $h in cursor) t=Write ;; copilot) t=edit ;; esac
		payload $h "$h-bob" $t src/a.c &&
		sim $h && simq ".ran and (.denied | not)" || exit 1
	done &&
	ls -l --time-style=+%s.%N "$PIGEON_HOME"/pigeon.db* >after &&
	test_cmp before after &&
	test "$(hook_lines)" = "$n" &&
	test -s "$PIGEON_HOME/pigeon.db-leases"
'

test_case 'another agent'"'"'s write under alice'"'"'s lease is denied, the file unchanged' '
	echo original >"$PROJ/src/a.c" &&
	(cd "$PROJ" && pigeon lease take --agent alice --reason "parser rewrite" \
	    "src/**" >/dev/null) &&
	payload cursor cursor-bob Write src/a.c &&
	sim cursor "$PROJ/src/a.c" edited &&
	simq ".denied and (.ran | not)" &&
	jq -r .message sim.json >msg &&
	test "$(wc -l <msg)" = 1 &&
	grep -q "^Pigeon: src/a.c is leased by alice (pattern src/\*\*, reason: parser rewrite) until 20[0-9-]*T[0-9:]*Z (" msg &&
	grep -qF "pigeon send --to alice ${SQ}May I edit src/a.c?${SQ}" msg &&
	test "$(cat "$PROJ/src/a.c")" = original &&
	payload copilot copilot-bob edit src/a.c &&
	sim copilot "$PROJ/src/a.c" edited &&
	simq ".denied and (.message | test(\"is leased by alice\"))" &&
	test "$(cat "$PROJ/src/a.c")" = original &&
	grep -q " host=cursor event=preToolUse .* status=deny ms=[0-9]* tool=Write path=src/a.c holder=alice" \
	    "$PIGEON_HOME/hook.log"
'

test_case 'the holder'"'"'s own write, a read and a path outside the lease run' '
	payload cursor cursor-alice Write src/a.c &&
	sim cursor "$PROJ/src/a.c" by-alice &&
	simq ".ran and (.denied | not)" &&
	test "$(cat "$PROJ/src/a.c")" = by-alice &&
	payload copilot copilot-bob view src/a.c &&
	sim copilot && simq ".ran" &&
	payload cursor cursor-bob Write README.md &&
	sim cursor && simq ".ran"
'

test_case 'a bad payload passes, with one hook.log line' '
	n=$(hook_lines) &&
	jq -n --arg d "$PROJ" "{sessionId: \"copilot-bob\", cwd: \$d,
		timestamp: 1, toolName: \"edit\", toolArgs: \"{not json\"}" \
	    >payload.json &&
	sim copilot && simq ".ran" &&
	test "$(hook_lines)" = "$((n + 1))" &&
	tail -n 1 "$PIGEON_HOME/hook.log" | grep -q "status=pass .*passes unjudged"
'

test_case 'after pigeon lease release the same write runs' '
	(cd "$PROJ" && pigeon lease release --agent alice --all >/dev/null) &&
	payload cursor cursor-bob Write src/a.c &&
	sim cursor "$PROJ/src/a.c" by-bob &&
	simq ".ran" && test "$(cat "$PROJ/src/a.c")" = by-bob &&
	payload copilot copilot-bob edit src/a.c &&
	sim copilot && simq ".ran"
'

test_case 'pigeon uninstall removes the preToolUse entries' '
	pigeon uninstall cursor >/dev/null &&
	pigeon uninstall copilot >/dev/null &&
	! grep -qs preToolUse "$HOME/.cursor/hooks.json" &&
	! grep -qs preToolUse "$HOME/.copilot/hooks/pigeon.json"
'

test_done
