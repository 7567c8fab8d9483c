#!/bin/sh
# Pigeon in Cursor, simulated: `pigeon install cursor` writes hooks.json,
# integration/cursor-sim runs its entries the way Cursor documents (sh -c,
# working directory, payload on stdin, timeout, fail-open, exit 2 blocks)
# and prints what Cursor would take. A session start introduces the
# agent; a ping arrives in the first prompt's additional_context with
# continue true, not in the second; in a simulated turn a ping sent
# during a tool call is in the next model request, once, and one queued
# as the turn ends makes the agent go on (followup_message), once; two
# agents pinging each other stop at the governor's cap (3), under
# Cursor's loop_limit (5); after `pigeon uninstall cursor` the simulator
# runs no Pigeon hook and the file is as before, byte for byte; with
# pigeon-hook removed, the guarded commands answer every event with exit
# 0 and nothing (decision 0243). First, the simulator itself is checked
# against hand-written hooks.json files.
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

# turn_plan CONVERSATION PROMPT TOOLS FOLLOWUP_TOOLS: a cursor-sim turn
# plan for a conversation in $PROJ (the tool lists as JSON arrays).
turn_plan() {
	jq -c --arg dir "$PROJ" --arg c "$1" --arg p "$2" \
	    --argjson t "$3" --argjson f "$4" '
		{payload: (del(.prompt, .attachments, .hook_event_name) |
		    .conversation_id = $c | .session_id = $c |
		    .generation_id = ("gen-" + $c) |
		    .workspace_roots = [$dir]),
		 prompt: $p, tools: $t, followup_tools: $f}' \
	    "$FIX/02-beforeSubmitPrompt-ide.json"
}

# seen TEXT: how many transcript items of ./sim.json hold TEXT.
seen() {
	jq --arg t "$1" '[.transcript[] | select(tostring | contains($t))] |
	    length' sim.json
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
mkscript other 'cat >>"$HOME/other.log"; echo "{\"continue\":true}"' &&
mkscript again 'n=$(tee -a "$HOME/stops.log" | jq .loop_count)
printf "{\"followup_message\":\"%s %s\"}\n" "${1:-again}" "$n"' &&
mkscript failfollow 'echo "{\"followup_message\":\"ignored\"}"; exit 1' ||
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
	sim --project "$SIMPROJ" beforeSubmitPrompt p.json &&
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

test_case 'simulator: a turn runs postToolUse after each tool, stop at its end' '
	HOME=$TEST_DIR/home-t && export HOME && mkdir -p "$HOME/.cursor" &&
	jq -n --arg b "$B" --arg t "$TEST_DIR" "{version: 1, hooks: {
		postToolUse: [
			{command: (\$b + \"/record \" + \$t + \"/ptu ptu\"),
			 matcher: \"^Shell\$\"},
			{command: \"echo never\", matcher: \"^MCP\"}],
		stop: [{command: (\$b + \"/again\")},
			{command: (\$b + \"/failfollow\")}]}}" \
		>"$HOME/.cursor/hooks.json" &&
	turn_plan conv-t "do it" "[\"echo one\"]" "[]" >plan.json &&
	sim turn plan.json &&
	simq "[.transcript[0:8][] | .kind] == [\"prompt\", \"request\",
		\"tool_call\", \"tool_result\", \"context\", \"request\",
		\"answer\", \"stop\"]" &&
	simq ".transcript[3] == {kind: \"tool_result\", id: \"tool-1\",
		exit: 0, output: \"one\\n\"}" &&
	simq ".transcript[4] == {kind: \"context\", event: \"postToolUse\",
		text: \"from ptu\"}" &&
	simq ".followups == 5 and .loop_limit_reached == true and
		.blocked == false" &&
	simq "[.transcript[] | select(.kind == \"stop\") | .loop_count] ==
		[0, 1, 2, 3, 4, 5]" &&
	simq "[.transcript[] | select(.kind == \"prompt\") | .from + \":\" +
		.text] == [\"person:do it\", \"followup:again 0\",
		\"followup:again 1\", \"followup:again 2\", \"followup:again 3\",
		\"followup:again 4\"]" &&
	simq "[.runs[] | select(.event == \"stop\") | .hooks[1]] |
		all(.status == \"failed\" and .followup == null)" &&
	simq ".runs[-1].hooks[0].followup == \"capped\"" &&
	jq -e --arg d "$PROJ" ".hook_event_name == \"postToolUse\" and
		.tool_name == \"Shell\" and .tool_input.command == \"echo one\" and
		.tool_output == \"one\\n\" and .tool_use_id == \"tool-1\" and
		.cwd == \$d and .conversation_id == \"conv-t\"" ptu.stdin \
		>/dev/null &&
	test "$(cat ptu.cwd)" = "$HOME/.cursor" &&
	test "$(jq -s -c "[.[] | .hook_event_name + \":\" + .status +
		\":\" + (.loop_count | tostring)]" "$HOME/stops.log")" = \
		"[\"stop:completed:0\",\"stop:completed:1\",\"stop:completed:2\",\"stop:completed:3\",\"stop:completed:4\",\"stop:completed:5\"]"
'

test_case 'simulator: loop_limit, and the first followup in priority wins' '
	HOME=$TEST_DIR/home-t && export HOME &&
	jq -n --arg b "$B" "{version: 1, hooks: {stop: [
		{command: (\$b + \"/again user\"), loop_limit: 2}]}}" \
		>"$HOME/.cursor/hooks.json" &&
	turn_plan conv-t2 "go" "[]" "[]" >plan.json &&
	sim turn plan.json &&
	simq ".followups == 2 and .loop_limit_reached == true" &&
	jq -n --arg b "$B" "{version: 1, hooks: {stop: [
		{command: (\$b + \"/again project\"), loop_limit: 1}]}}" \
		>"$SIMPROJ/.cursor/hooks.json" &&
	sim --project "$SIMPROJ" turn plan.json &&
	simq ".followups == 2" &&
	simq "[.transcript[] | select(.kind == \"prompt\") | .text] ==
		[\"go\", \"project 0\", \"user 1\"]" &&
	simq ".runs[1].hooks | map(.followup) == [\"used\", \"dropped\"]" &&
	simq ".runs[2].hooks | map(.followup) == [\"capped\", \"used\"]" &&
	simq ".runs[3].hooks | map(.followup) == [\"capped\", \"capped\"]" &&
	rm "$SIMPROJ/.cursor/hooks.json" &&
	jq -n --arg b "$B" "{version: 1, hooks: {beforeSubmitPrompt: [
		{command: (\$b + \"/halt\")}], stop: [
		{command: (\$b + \"/again\")}]}}" >"$HOME/.cursor/hooks.json" &&
	sim turn plan.json &&
	simq ".blocked == true and .followups == 0 and
		([.transcript[] | .kind] == [\"prompt\"])"
'

test_case 'simulator: usage errors exit 2' '
	expect_code 2 $SIM >/dev/null 2>&1 &&
	expect_code 2 $SIM afterAgentResponse p.json >/dev/null 2>&1 &&
	expect_code 2 $SIM turn p.json >/dev/null 2>&1 &&
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
		(.hooks | keys_unsorted == [\"sessionStart\",
			\"beforeSubmitPrompt\", \"postToolUse\", \"stop\",
			\"preToolUse\"]) and
		(.hooks | to_entries | all(.value == [{command:
			(\"[ -x \" + \$h + \" ] || { echo \" +
			 ({beforeSubmitPrompt: \"{\\\"continue\\\":true}\",
			   preToolUse: \"{\\\"permission\\\":\\\"allow\\\"}\"}[.key]
			  // \"{}\" | \"\u0027\" + . + \"\u0027\") +
			 \"; exit 0; }; exec \" + \$h + \" cursor \" + .key),
			timeout: 5}]))" "$f" \
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
	printf "{\n  \"version\": 1,\n  \"hooks\": {\n    \"beforeSubmitPrompt\": [\n      { \"command\": \"%s/other\", \"timeout\": 3 }\n    ],\n    \"postToolUse\": [ { \"command\": \"echo {}\" } ],\n    \"stop\": [ { \"command\": \"echo {}\", \"loop_limit\": 2 } ]\n  }\n}\n" "$B" >"$f" &&
	cp "$f" before.json &&
	pigeon install cursor >/dev/null &&
	jq -e --arg b "$B" --arg h "$HOOK_REAL" "
		.hooks.stop == [{command: \"echo {}\", loop_limit: 2},
			{command: (\"[ -x \" + \$h +
			\" ] || { echo \u0027{}\u0027; exit 0; }; exec \" +
			\$h + \" cursor stop\"), timeout: 5}] and
		.hooks.postToolUse == [{command: \"echo {}\"},
			{command: (\"[ -x \" + \$h +
			\" ] || { echo \u0027{}\u0027; exit 0; }; exec \" +
			\$h + \" cursor postToolUse\"), timeout: 5}] and
		(.hooks.sessionStart | length == 1) and
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
	pigeon send --project "$PROJ" --from alice --to "$name" again >/dev/null &&
	turn_plan conv-c "after uninstall" "[\"true\"]" "[]" >plan.json &&
	sim turn plan.json &&
	simq "[.runs[].hooks[].command] == [(\"$B\" + \"/other\"),
		\"echo {}\", \"echo {}\"]" &&
	simq ".followups == 0 and ([.transcript[] | select(.kind ==
		\"context\")] | length == 0)" &&
	pigeon inbox --project "$PROJ" --agent "$name" --json >inbox &&
	jq -e "length == 1 and .[0].body == \"again\"" inbox >/dev/null
'

test_case 'a ping sent during a tool call reaches the next model request, once' '
	HOME=$TEST_DIR/home-e && export HOME && mkdir "$HOME" &&
	pigeon install cursor >/dev/null &&
	PIGEON_AGENT=worker && export PIGEON_AGENT &&
	cursor_payload start conv-e >s.json &&
	sim sessionStart s.json &&
	tools=$(printf "%s\n" true \
		"pigeon send --from alice --to worker \"rebase before you push\"" \
		true true | jq -R . | jq -cs .) &&
	turn_plan conv-e "rename the API" "$tools" "[]" >plan.json &&
	sim turn plan.json &&
	simq "[.transcript | to_entries[] | select(.value.kind == \"context\")]
		as \$c | (\$c | length) == 1 and
		(\$c[0].value.event == \"postToolUse\") and
		.transcript[\$c[0].key - 1].kind == \"tool_result\" and
		.transcript[\$c[0].key - 1].id == \"tool-2\" and
		.transcript[\$c[0].key + 1] == {kind: \"request\", n: 2}" &&
	simq ".followups == 0 and ([.transcript[] | select(.kind == \"stop\")
		| .followup] == [false])" &&
	jq -r ".transcript[] | select(.kind == \"context\") | .text" sim.json \
		>ctx &&
	id=$(jq -r ".transcript[] | select(.id == \"tool-2\" and
		.kind == \"tool_result\") | .output" sim.json |
		sed -n "s/^queued #\\([0-9]*\\) for worker\$/\\1/p") &&
	test -n "$id" &&
	grep -qx "Pigeon: 1 new message for worker. .*" ctx &&
	grep -q "^\\[#$id from alice, [0-9]*s ago\\]\$" ctx &&
	grep -qx "  rebase before you push" ctx &&
	! grep -q "you are agent" ctx &&
	pigeon status --project "$PROJ" "$id" --json >st &&
	jq -e ".[0].state == \"delivered\" and .[0].route == \"after-tool\" and
		.[0].session == \"cursor:conv-e\"" st >/dev/null &&
	cursor_payload prompt conv-e gen-next >p.json &&
	sim beforeSubmitPrompt p.json &&
	simq ".continue == true and .additional_context == null"
'

test_case 'a ping queued as the turn ends makes the agent go on, once' '
	HOME=$TEST_DIR/home-f && export HOME && mkdir "$HOME" &&
	pigeon install cursor >/dev/null &&
	PIGEON_AGENT=closer && export PIGEON_AGENT &&
	cursor_payload start conv-f >s.json &&
	sim sessionStart s.json &&
	mkscript sendonce "[ -e \"\$1\" ] && exit 0; : >\"\$1\"
pigeon send --from alice --to closer \"one more thing\" >\"\$1\"" &&
	mkdir -p "$PROJ/.cursor" &&
	jq -n --arg b "$B" --arg t "$TEST_DIR" "{version: 1, hooks: {stop:
		[{command: (\$b + \"/sendonce \" + \$t + \"/sent-f\")}]}}" \
		>"$PROJ/.cursor/hooks.json" &&
	turn_plan conv-f "finish up" "[\"true\"]" "[\"true\"]" >plan.json &&
	sim --project "$PROJ" turn plan.json &&
	rm "$PROJ/.cursor/hooks.json" &&
	id=$(sed -n "s/^queued #\\([0-9]*\\) for closer\$/\\1/p" sent-f) &&
	test -n "$id" &&
	simq ".followups == 1 and .loop_limit_reached == false" &&
	simq "[.transcript[] | select(.kind == \"stop\") |
		[.loop_count, .followup]] == [[0, true], [1, false]]" &&
	simq "[.transcript | to_entries[] | select(.value.kind == \"prompt\"
		and .value.from == \"followup\")] as \$f | (\$f | length) == 1 and
		.transcript[\$f[0].key - 1].kind == \"stop\" and
		.transcript[\$f[0].key + 1].kind == \"request\"" &&
	test "$(seen "one more thing")" = 1 &&
	jq -r ".transcript[] | select(.from == \"followup\") | .text" \
		sim.json >fu &&
	grep -q "^\\[#$id from alice, [0-9]*s ago\\]\$" fu &&
	grep -qx "  one more thing" fu &&
	simq "[.runs[] | select(.event == \"stop\") | .hooks |
		map(.source + \":\" + (.followup // \"-\"))] ==
		[[\"project:-\", \"user:used\"], [\"project:-\", \"user:-\"]]" &&
	simq "[.transcript[] | select(.kind == \"context\")] | length == 0" &&
	pigeon status --project "$PROJ" "$id" --json >st &&
	jq -e ".[0].state == \"delivered\" and .[0].route == \"stop\" and
		.[0].session == \"cursor:conv-f\"" st >/dev/null
'

test_case 'two agents pinging each other stop at the governor'"'"'s cap, under loop_limit' '
	HOME=$TEST_DIR/home-g && export HOME && mkdir "$HOME" &&
	pigeon install cursor >/dev/null &&
	mkdir -p "$PROJ/.pigeon" &&
	echo "{\"reach\": {\"stopWaitMs\": 3000}}" >"$PROJ/.pigeon/config.json" &&
	mkscript reply "sleep 0.5; exec pigeon send --from \"\$1\" --to \"\$2\" \"\$1 \$SIM_LOOP\"" &&
	for a in ping pong; do
		cursor_payload start "conv-$a" >"s-$a.json" &&
		PIGEON_AGENT=$a && export PIGEON_AGENT &&
		sim sessionStart "s-$a.json" || exit 1
	done &&
	turn_plan conv-ping "start the exchange" "[\"$B/reply ping pong\"]" \
		"[\"$B/reply ping pong\"]" >plan-ping.json &&
	turn_plan conv-pong "answer pings" "[]" "[\"$B/reply pong ping\"]" \
		>plan-pong.json &&
	{ PIGEON_AGENT=pong $SIM turn plan-pong.json >pong.json 2>pong.err & } &&
	pb=$! && bg_track $pb &&
	PIGEON_AGENT=ping $SIM turn plan-ping.json >ping.json 2>ping.err &&
	bg_wait $pb &&
	rm -r "$PROJ/.pigeon" &&
	for a in ping pong; do
		jq -e ".followups == 3 and .loop_limit_reached == false" \
			"$a.json" >/dev/null || { cat "$a.json" "$a.err"; exit 1; }
	done &&
	test "$(jq -c "[.transcript[] | select(.from == \"followup\") |
		.text | split(\"\\n\")[] | select(startswith(\"  \"))]" \
		pong.json)" = "[\"  ping 0\",\"  ping 1\",\"  ping 2\"]" &&
	test "$(jq -c "[.transcript[] | select(.from == \"followup\") |
		.text | split(\"\\n\")[] | select(startswith(\"  \"))]" \
		ping.json)" = "[\"  pong 1\",\"  pong 2\",\"  pong 3\"]" &&
	pigeon inbox --project "$PROJ" --agent pong --json >inbox &&
	jq -e "length == 1 and .[0].body == \"ping 3\"" inbox >/dev/null &&
	pigeon inbox --project "$PROJ" --agent ping --json >inbox &&
	jq -e "length == 0" inbox >/dev/null
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

# Cursor runs a hook's command as a shell string (its hooks docs; decision
# 0243): the guarded form, with pigeon-hook gone, answers every event with
# exit 0 and the event's neutral JSON (0258), where the bare command failed
# (sh: exit 127).
test_case 'a hook whose binary is gone: every event exits 0 with its neutral answer, the prompt goes on' '
	HOME=$TEST_DIR/home-gone && export HOME && mkdir "$HOME" bin-g &&
	cp "$PGN_BIN/hookcli/pigeon-hook" bin-g/ &&
	PIGEON_HOOK=$TEST_DIR/bin-g/pigeon-hook pigeon install cursor \
	    --no-mcp >/dev/null &&
	test "$(jq -r ".hooks.stop[0].command" "$HOME/.cursor/hooks.json")" = \
	    "[ -x $TEST_DIR/bin-g/pigeon-hook ] || { echo '"'"'{}'"'"'; exit 0; }; exec $TEST_DIR/bin-g/pigeon-hook cursor stop" &&
	cursor_payload start conv-g >s.json &&
	sim sessionStart s.json &&
	jq -r .additional_context sim.json | grep -q "you are agent" &&
	rm bin-g/pigeon-hook &&
	cursor_payload prompt conv-g gen-1 >p.json &&
	jq --arg dir "$PROJ" ".workspace_roots = [\$dir]" \
	    "$FIX/07-postToolUse-shell.json" >t.json &&
	jq --arg dir "$PROJ" ".workspace_roots = [\$dir]" \
	    "$FIX/06-stop-completed.json" >st.json &&
	for ev in sessionStart:s.json beforeSubmitPrompt:p.json \
	    postToolUse:t.json stop:st.json; do
		sim "${ev%%:*}" "${ev#*:}" &&
		simq ".hooks | length == 1 and .[0].exit == 0 and
			.[0].status == \"ok\" and (.[0].blocks | not)" &&
		! grep -q "not found" sim.err || {
			echo "error: ${ev%%:*}:" >&9; cat sim.json sim.err >&9
			exit 1; }
	done &&
	sim beforeSubmitPrompt p.json &&
	simq ".continue == true and .additional_context == null" &&
	pigeon uninstall cursor >/dev/null &&
	test ! -e "$HOME/.cursor/hooks.json"
'

test_done
