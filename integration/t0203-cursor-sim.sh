#!/bin/sh
# Pigeon in Cursor, simulated: `pigeon install cursor` writes hooks.json,
# integration/cursor-sim runs its entries the way Cursor documents (sh -c,
# working directory, payload on stdin, timeout, fail-open, exit 2 blocks)
# and prints what Cursor would take. A session start introduces the
# agent; a ping arrives in the first prompt's additional_context with
# continue true, not in the second; after `pigeon uninstall cursor` the
# simulator runs no Pigeon hook and the file is as before. First, the
# simulator itself is checked against hand-written hooks.json files.
. "$(dirname "$0")/lib.sh"

SIM="sh $PGN_SRC/integration/cursor-sim"
FIX=$PGN_SRC/tests/fixtures/payloads/cursor
PROJ=$TEST_DIR/proj
SIMPROJ=$TEST_DIR/simproj	# the simulator's self-checks
HOOK_REAL=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook
mkdir -p "$PROJ/.git" "$SIMPROJ/.cursor" "$TEST_DIR/bin" || exit 2
unset PIGEON_HOOK CURSOR_PROJECT_DIR CURSOR_VERSION

# cursor_payload start|prompt CONVERSATION [GENERATION]: a Cursor payload
# for a conversation in $PROJ.
cursor_payload() {
	if [ "$1" = start ]; then
		cp_f=$FIX/01-sessionStart-ide.json
	else
		cp_f=$FIX/02-beforeSubmitPrompt-ide.json
	fi
	jq --arg dir "$PROJ" --arg c "$2" --arg g "${3:-}" '
		.conversation_id = $c | .session_id = $c |
		.workspace_roots = [$dir] |
		if $g == "" then . else .generation_id = $g end' "$cp_f"
}

# sim ARGS...: run the simulator; its JSON to ./sim.json, notes to sim.err.
sim() {
	$SIM "$@" >sim.json 2>sim.err && jq -e . sim.json >/dev/null && return 0
	echo "error: cursor-sim $* failed:" >&9
	cat sim.json sim.err >&9
	return 1
}

# simq JQ: the jq filter JQ holds on ./sim.json.
simq() {
	jq -e "$1" sim.json >/dev/null && return 0
	echo "error: sim.json fails $1:" >&9
	cat sim.json >&9
	return 1
}

# Commands of the self-checks: small scripts, so hooks.json stays plain.
mkscript() {
	printf '#!/bin/sh\n%s\n' "$2" >"$TEST_DIR/bin/$1" &&
	chmod 755 "$TEST_DIR/bin/$1"
}
mkscript record 'pwd >"$1.cwd"
cat >"$1.stdin"
printf "%s|%s|%s\n" "$CURSOR_PROJECT_DIR" "$CURSOR_VERSION" \
    "$CLAUDE_PROJECT_DIR" >"$1.env"
printf "{\"continue\":true,\"additional_context\":\"from %s\"}\n" "$2"' &&
mkscript crash 'kill -SEGV $$' &&
mkscript garbage 'echo "{not json"' &&
mkscript slow 'sleep 30; echo "{\"additional_context\":\"too late\"}"' &&
mkscript block 'echo "blocked by policy" >&2; exit 2' &&
mkscript fail 'exit 1' &&
mkscript halt 'echo "{\"continue\":false,\"user_message\":\"halted\"}"' &&
mkscript other 'cat >>"$HOME/other.log"; echo "{\"continue\":true}"' ||
	exit 2
B=$TEST_DIR/bin

test_case 'simulator: user and project hooks, as Cursor runs them' '
	mkdir -p "$HOME/.cursor" &&
	jq -n --arg b "$B" --arg t "$TEST_DIR" "{version: 1, hooks: {
		beforeSubmitPrompt: [
			{command: (\$b + \"/record \" + \$t + \"/user user\")},
			{command: (\$b + \"/crash\")},
			{command: (\$b + \"/garbage\")},
			{command: (\$b + \"/fail\")},
			{command: (\$b + \"/slow\"), timeout: 1},
			{command: \"echo never\", matcher: \"^Stop\$\"},
			{command: \"echo never\", type: \"prompt\"}],
		stop: [{command: \"echo {}\"}]}}" >"$HOME/.cursor/hooks.json" &&
	jq -n --arg b "$B" --arg t "$TEST_DIR" "{version: 1, hooks: {
		beforeSubmitPrompt: [{command: (\$b + \"/record \" + \$t +
		\"/project project\"), matcher: \"UserPromptSubmit\"}]}}" \
		>"$SIMPROJ/.cursor/hooks.json" &&
	cursor_payload prompt conv-1 g1 >p.json &&
	start=$(date +%s) &&
	sim --project "$SIMPROJ" beforeSubmitPrompt p.json &&
	end=$(date +%s) &&
	test $((end - start)) -lt 30 &&
	simq ".continue == true and .user_message == null" &&
	simq ".additional_context == \"from project\\n\\nfrom user\"" &&
	simq "[.hooks[] | .source + \":\" + .status] == [\"project:ok\",
		\"user:ok\", \"user:failed\", \"user:invalid-json\",
		\"user:failed\", \"user:timeout\"]" &&
	simq ".hooks[5].exit == 124" &&
	test "$(cat user.cwd)" = "$HOME/.cursor" &&
	test "$(cat project.cwd)" = "$SIMPROJ" &&
	cmp p.json user.stdin && cmp p.json project.stdin &&
	test "$(cat user.env)" = "$SIMPROJ|3.12.17|$SIMPROJ" &&
	sim beforeSubmitPrompt p.json &&
	simq "[.hooks[].source] | all(. == \"user\")" &&
	simq ".additional_context == \"from user\"" &&
	test "$(cat user.env)" = "$PROJ|3.12.17|$PROJ"
'

test_case 'simulator: exit 2 and continue false block, failClosed too' '
	mkdir -p "$HOME/.cursor" &&
	cursor_payload prompt conv-1 g2 >p.json &&
	jq -n --arg b "$B" "{hooks: {beforeSubmitPrompt: [
		{command: (\$b + \"/block\")}]}}" >"$HOME/.cursor/hooks.json" &&
	sim beforeSubmitPrompt p.json &&
	simq ".continue == false and .hooks[0].status == \"blocked\"" &&
	jq -n --arg b "$B" "{hooks: {beforeSubmitPrompt: [
		{command: (\$b + \"/halt\")}]}}" >"$HOME/.cursor/hooks.json" &&
	sim beforeSubmitPrompt p.json &&
	simq ".continue == false and .user_message == \"halted\"" &&
	jq -n --arg b "$B" "{hooks: {beforeSubmitPrompt: [
		{command: (\$b + \"/fail\"), failClosed: true},
		{command: (\$b + \"/garbage\")}]}}" >"$HOME/.cursor/hooks.json" &&
	sim beforeSubmitPrompt p.json &&
	simq ".continue == false" &&
	jq -n --arg b "$B" "{hooks: {sessionStart: [
		{command: (\$b + \"/block\")}]}}" >"$HOME/.cursor/hooks.json" &&
	cursor_payload start conv-1 >s.json &&
	sim sessionStart s.json &&
	simq "has(\"continue\") | not" &&
	simq ".hooks[0].status == \"blocked\""
'

test_case 'simulator: one unknown event and the whole file loads nothing' '
	mkdir -p "$HOME/.cursor" &&
	jq -n --arg b "$B" --arg t "$TEST_DIR" "{version: 1, hooks: {
		beforeSubmitPrompt: [{command: (\$b + \"/halt\")}],
		notification: [{command: \"echo {}\"}]}}" \
		>"$HOME/.cursor/hooks.json" &&
	cursor_payload prompt conv-1 g3 >p.json &&
	sim beforeSubmitPrompt p.json &&
	simq ".continue == true and .hooks == []" &&
	grep -q "unknown event \"notification\"" sim.err &&
	echo "{\"version\": \"1\", \"hooks\": {}}" >"$HOME/.cursor/hooks.json" &&
	sim beforeSubmitPrompt p.json &&
	grep -q "loads nothing" sim.err &&
	echo "{\"hooks\": {" >"$HOME/.cursor/hooks.json" &&
	sim beforeSubmitPrompt p.json &&
	grep -q "not valid JSON" sim.err &&
	rm "$HOME/.cursor/hooks.json" &&
	sim beforeSubmitPrompt p.json &&
	simq ".hooks == [] and .additional_context == null"
'

test_case 'simulator: usage errors exit 2' '
	expect_code 2 $SIM >/dev/null 2>&1 &&
	expect_code 2 $SIM stop p.json >/dev/null 2>&1 &&
	expect_code 2 $SIM beforeSubmitPrompt missing.json >/dev/null 2>&1 &&
	echo "[1]" >arr.json &&
	expect_code 2 $SIM beforeSubmitPrompt arr.json >/dev/null 2>&1 &&
	expect_code 0 $SIM --help >/dev/null
'

# ---- Pigeon through the simulator ------------------------------------

test_case 'pigeon install cursor: absolute hook commands, Cursor loads them' '
	HOME=$TEST_DIR/home-a && export HOME && mkdir "$HOME" &&
	pigeon install cursor >out 2>err &&
	expect_empty err &&
	f=$HOME/.cursor/hooks.json &&
	jq -e --arg h "$HOOK_REAL" ".version == 1 and
		(.hooks | keys == [\"beforeSubmitPrompt\", \"sessionStart\"]) and
		.hooks.sessionStart == [{command: (\$h + \" cursor sessionStart\"),
			timeout: 5}] and
		.hooks.beforeSubmitPrompt == [{command:
			(\$h + \" cursor beforeSubmitPrompt\"), timeout: 5}]" "$f" \
		>/dev/null &&
	cursor_payload start conv-a >s.json &&
	sim sessionStart s.json &&
	! grep -q "loads nothing" sim.err
'

test_case 'session start, a ping, two prompts, uninstall: through Cursor' '
	HOME=$TEST_DIR/home-a && export HOME &&
	cursor_payload start conv-b >s.json &&
	sim sessionStart s.json &&
	simq ".hooks | length == 1 and .[0].status == \"ok\" and
		.[0].source == \"user\"" &&
	jq -r .additional_context sim.json >intro &&
	name=$(sed -n "s/^Pigeon: you are agent \"\\([a-z-]*\\)\" (cursor session) in scope .*/\\1/p" intro) &&
	test -n "$name" &&
	grep -qF "in scope $PROJ." intro &&
	grep -q "^Reply to message N: .* send --from $name --to SENDER --reply-to N \"text\"\$" intro &&
	pigeon send --project "$PROJ" --from alice --to "$name" \
		"ping through Cursor" >sent &&
	id=$(sed -n "s/^queued #\\([0-9]*\\) for .*/\\1/p" sent) &&
	cursor_payload prompt conv-b gen-1 >p1.json &&
	sim beforeSubmitPrompt p1.json &&
	simq ".continue == true and .user_message == null" &&
	jq -r .additional_context sim.json >ctx1 &&
	grep -q "^\\[#$id from alice, [0-9]*s ago\\]\$" ctx1 &&
	grep -qx "  ping through Cursor" ctx1 &&
	cursor_payload prompt conv-b gen-2 >p2.json &&
	sim beforeSubmitPrompt p2.json &&
	simq ".continue == true and .additional_context == null and
		.hooks[0].status == \"ok\"" &&
	pigeon uninstall cursor >out 2>err &&
	expect_empty err &&
	test ! -e "$HOME/.cursor/hooks.json" &&
	pigeon send --project "$PROJ" --from alice --to "$name" \
		"after uninstall" >/dev/null &&
	cursor_payload prompt conv-b gen-3 >p3.json &&
	sim beforeSubmitPrompt p3.json &&
	simq ".continue == true and .additional_context == null and
		.hooks == []" &&
	pigeon inbox --project "$PROJ" --agent "$name" --json >inbox &&
	jq -e "length == 1 and .[0].body == \"after uninstall\"" inbox \
		>/dev/null
'

test_case 'another tool'"'"'s hooks.json: kept, run alongside, restored' '
	HOME=$TEST_DIR/home-c && export HOME && mkdir -p "$HOME/.cursor" &&
	f=$HOME/.cursor/hooks.json &&
	printf "{\n  \"version\": 1,\n  \"hooks\": {\n    \"beforeSubmitPrompt\": [\n      { \"command\": \"%s/other\", \"timeout\": 3 }\n    ],\n    \"stop\": [ { \"command\": \"echo {}\" } ]\n  }\n}\n" "$B" >"$f" &&
	cp "$f" before.json &&
	pigeon install cursor >/dev/null &&
	jq -e --arg b "$B" ".hooks.stop == [{command: \"echo {}\"}] and
		(.hooks.beforeSubmitPrompt | length == 2) and
		(.hooks.beforeSubmitPrompt | any(.command == (\$b + \"/other\")))" \
		"$f" >/dev/null &&
	cursor_payload start conv-c >s.json &&
	sim sessionStart s.json &&
	name=$(jq -r .additional_context sim.json |
		sed -n "s/^Pigeon: you are agent \"\\([a-z-]*\\)\".*/\\1/p") &&
	test -n "$name" &&
	id=$(pigeon send --project "$PROJ" --from alice --to "$name" hello |
		sed -n "s/^queued #\\([0-9]*\\) for .*/\\1/p") &&
	cursor_payload prompt conv-c gen-1 >p1.json &&
	sim beforeSubmitPrompt p1.json &&
	simq ".continue == true and (.hooks | length == 2) and
		all(.hooks[]; .status == \"ok\")" &&
	jq -r .additional_context sim.json | grep -q "^\\[#$id from alice" &&
	cmp p1.json "$HOME/other.log" &&
	pigeon uninstall cursor >/dev/null &&
	cmp before.json "$f" &&
	cursor_payload prompt conv-c gen-2 >p2.json &&
	pigeon send --project "$PROJ" --from alice --to "$name" again >/dev/null &&
	sim beforeSubmitPrompt p2.json &&
	simq ".continue == true and .additional_context == null and
		(.hooks | length == 1) and
		(.hooks[0].command | endswith(\"/other\"))"
'

test_case 'user and project installs: both run, the ping comes once' '
	HOME=$TEST_DIR/home-d && export HOME && mkdir "$HOME" &&
	pigeon install cursor >/dev/null &&
	pigeon install cursor --project "$PROJ" >/dev/null &&
	test -e "$PROJ/.cursor/hooks.json" &&
	PIGEON_AGENT=twice && export PIGEON_AGENT &&
	cursor_payload start conv-d >s.json &&
	sim --project "$PROJ" sessionStart s.json &&
	simq "[.hooks[].source] == [\"project\", \"user\"]" &&
	test "$(jq -r .additional_context sim.json |
		grep -c "you are agent \"twice\"")" = 1 &&
	pigeon send --project "$PROJ" --from alice --to twice "only once" \
		>/dev/null &&
	cursor_payload prompt conv-d gen-1 >p1.json &&
	sim --project "$PROJ" beforeSubmitPrompt p1.json &&
	simq ".continue == true and all(.hooks[]; .status == \"ok\")" &&
	test "$(jq -r .additional_context sim.json |
		grep -c "^  only once\$")" = 1 &&
	pigeon uninstall cursor --project "$PROJ" >/dev/null &&
	pigeon uninstall cursor >/dev/null &&
	test ! -e "$PROJ/.cursor/hooks.json" &&
	test ! -e "$HOME/.cursor/hooks.json"
'

test_done
