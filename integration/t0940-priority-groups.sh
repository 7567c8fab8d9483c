#!/bin/sh
# Priority and groups (product.md §13, decision 0158) with the real
# binaries: send --priority, its order and mark in inbox, audit and the
# injected text; low mail waits past tool calls and stops for a prompt,
# urgent mail comes with the next tool call and continues a stop; the
# urgent cap; pigeon group add|rm|list and --to @NAME; bad input is one
# error line, exit 2, nothing stored.
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
mkdir -p "$PROJ/.git" || exit 2

messages() {
	sql "SELECT count(*) FROM message"
}
# hook EVENT FILE SID: claude's hook for that payload of session SID in
# $PROJ (the CLI's cases above run in the global scope; these name it).
hook() {
	fixture_payload "$FIX/claude/$2" "$PROJ" "$3" >"$TEST_DIR/in.json" &&
	"$HOOK" claude "$1" <"$TEST_DIR/in.json" >"$TEST_DIR/out"
}
ctx() { # the injected text of ./out ("" for none)
	if [ -s "$TEST_DIR/out" ]; then
		jq -r '.hookSpecificOutput.additionalContext // .reason' \
		    "$TEST_DIR/out"
	fi
}

test_case 'agents and a group of them' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon agent add carol >/dev/null &&
	expect_output "group @team: added 3" pigeon group add Team alice bob carol &&
	expect_output "@team: alice bob carol" pigeon group list &&
	pigeon group list --json >out &&
	test "$(jq -r ".[0].name, (.[0].members | join(\",\"))" out)" = "team
alice,bob,carol" &&
	sql_is "SELECT count(*) FROM agent WHERE grps = '\'',team,'\''" 3
'

test_case 'send --to @NAME queues one message per member but the sender, with the group' '
	pigeon send --from alice --to @team "standup in 5" >out &&
	printf "queued #1 for bob\nqueued #2 for carol\n" >expect &&
	test_cmp expect out &&
	sql_is "SELECT grp FROM message ORDER BY id" "team
team" &&
	sql_is "SELECT count(*) FROM journal WHERE kind = '\''sent'\'' AND detail = '\''@team'\''" 2 &&
	pigeon inbox --agent bob >out &&
	grep -q "^#1 from alice, .* ago, to @team$" out
'

test_case 'bad group input: one error line, exit 2, nothing stored' '
	expect_error 2 "no group '\''@nobody'\''" \
		pigeon send --from alice --to bob,@nobody hi &&
	expect_error 2 "is an agent" pigeon group add bob carol &&
	expect_error 2 "no agent '\''zed'\''" pigeon group add crew alice zed &&
	expect_error 2 "a name" pigeon group add "bad name" alice &&
	expect_error 2 "group add takes NAME" pigeon group add crew &&
	expect_error 2 "no group" pigeon group rm crew &&
	expect_error 2 "no agent '\''zz'\''" pigeon group rm team zz &&
	pigeon agent add erin >/dev/null &&
	expect_error 2 "not in group" pigeon group rm team erin &&
	expect_error 2 "--wait-reply waits for one reply" \
		pigeon send --from alice --to @team --wait-reply hi &&
	test "$(messages)" = 2 &&
	sql_is "SELECT count(*) FROM agent WHERE grps IS NOT NULL" 3
'

test_case 'group rm takes members out, then the whole group' '
	pigeon agent add dora >/dev/null &&
	expect_output "{\"group\":\"team\",\"added\":1}" pigeon group add --json team dora &&
	expect_output "{\"group\":\"team\",\"removed\":1}" pigeon group rm --json team dora &&
	expect_output "group @team: removed 1" pigeon group rm team carol &&
	expect_output "@team: alice bob" pigeon group list &&
	expect_output "removed group @team" pigeon group rm @team &&
	expect_output "no groups" pigeon group list &&
	expect_output "[]" pigeon group list --json &&
	pigeon read --agent bob >/dev/null && pigeon read --agent carol >/dev/null
'

test_case 'each member that joins or leaves has a journal entry (0191)' '
	pigeon journal dora >out &&
	grep -q " group     joined @team$" out &&
	grep -q " group     left @team$" out &&
	pigeon journal alice >out &&
	test "$(grep -c " group " out)" = 2 &&
	grep -q " group     left @team$" out &&
	pigeon journal --json carol | jq -e ".entries | map(select(.kind == \"group\") | .detail) == [\"joined @team\", \"left @team\"]" >/dev/null &&
	pigeon journal erin >out && ! grep -q " group " out &&
	sql_is "SELECT count(*) FROM journal WHERE kind = '\''group'\''" 8
'

test_case 'bad priority: one error line, exit 2, nothing stored' '
	expect_error 2 "say urgent, normal or low" \
		pigeon send --from alice --to bob --priority high hi &&
	expect_error 2 "say urgent, normal or low" \
		pigeon send --from alice --to bob --priority "" hi &&
	test "$(messages)" = 2
'

test_case 'inbox, read and audit: urgent first and marked, low last' '
	pigeon send --from alice --to bob "routine" >/dev/null &&
	pigeon send --from alice --to bob --priority low "no hurry" >/dev/null &&
	pigeon send --from alice --to bob --priority urgent "build broken" >/dev/null &&
	pigeon inbox --agent bob >out &&
	grep "^#" out >heads &&
	sed -n 1p heads | grep -q "^#5 from alice, .*, urgent$" &&
	sed -n 2p heads | grep -q "^#3 from alice, [^,]*$" &&
	sed -n 3p heads | grep -q "^#4 from alice, .*, low$" &&
	pigeon inbox --agent bob --json >out &&
	test "$(jq -r "map(.priority) | join(\",\")" out)" = "urgent,normal,low" &&
	pigeon read --agent bob >/dev/null &&
	pigeon audit --limit 3 >out &&
	grep -q "message #5, urgent, " out &&
	grep -q "message #4, low, " out &&
	pigeon audit --limit 3 --json >out &&
	test "$(jq -r "map(.priority) | join(\",\")" out)" = "low,normal,urgent"
'

test_case 'status and thread mark urgent and low, and name the group' '
	pigeon status 5 4 3 1 >out &&
	grep -q "^#5 alice -> bob, urgent: delivered " out &&
	grep -q "^#4 alice -> bob, low: delivered " out &&
	grep -q "^#3 alice -> bob: delivered " out &&
	grep -q "^#1 alice -> bob, to @team: " out &&
	pigeon status --json 5 4 3 1 >out &&
	test "$(jq -r "map(.priority) | join(\",\")" out)" = "urgent,low,normal,normal" &&
	test "$(jq -r "map(.group // \"-\") | join(\",\")" out)" = "-,-,-,team" &&
	pigeon thread 5 >out &&
	grep -q "^#5 alice -> bob, urgent: delivered " out &&
	pigeon thread --json 1 | jq -e ".[0].group == \"team\"" >/dev/null
'

test_case 'the urgent cap: 20 per sender and recipient, then refused' '
	i=0 &&
	while [ $i -lt 20 ]; do
		pigeon send --from alice --to carol --priority urgent "u$i" \
		    >/dev/null || break
		i=$((i + 1))
	done &&
	test $i = 20 &&
	expect_error 2 "urgent messages waiting from '\''alice'\''" \
		pigeon send --from alice --to carol --priority urgent "one more" &&
	test "$(sql "SELECT count(*) FROM message WHERE delivered_ms IS NULL")" = 20 &&
	pigeon send --from dave --to carol --priority urgent "other sender" >/dev/null &&
	pigeon send --from alice --to carol "normal still goes" >/dev/null &&
	pigeon read --agent carol >/dev/null
'

test_case 'the hook: low waits past a tool call and a stop, a prompt brings it' '
	PIGEON_AGENT=bob hook SessionStart 01-SessionStart-startup.json s1 &&
	pigeon send --project "$PROJ" --from alice --to bob --priority low "when you can" >/dev/null &&
	hook PostToolUse 10-PostToolUse-bash.json s1 &&
	expect_empty "$TEST_DIR/out" &&
	hook Stop 11-Stop-end.json s1 &&
	expect_empty "$TEST_DIR/out" &&
	sql_is "SELECT auto_continues FROM session WHERE key = '\''claude:s1'\''" 0 &&
	hook UserPromptSubmit 02-UserPromptSubmit-prompt.json s1 &&
	ctx >text &&
	grep -q "^  when you can$" text
'

test_case 'the hook: urgent comes with the next tool call, first and marked' '
	pigeon send --project "$PROJ" --from alice --to bob "ordinary" >/dev/null &&
	pigeon send --project "$PROJ" --from alice --to bob --priority urgent "stop pushing" >/dev/null &&
	hook PostToolUse 10-PostToolUse-bash.json s1 &&
	ctx >text &&
	grep -n "^\[" text >heads &&
	sed -n 1p heads | grep -q "\[URGENT #[0-9]* from alice, " &&
	sed -n 2p heads | grep -q "\[#[0-9]* from alice, " &&
	sql_is "SELECT count(*) FROM delivery WHERE route = '\''after-tool'\''" 2
'

test_case 'the hook: urgent mail continues a stop' '
	pigeon send --project "$PROJ" --from alice --to bob --priority urgent "one more thing" >/dev/null &&
	hook Stop 11-Stop-end.json s1 &&
	test "$(jq -r .decision "$TEST_DIR/out")" = block &&
	jq -r .reason "$TEST_DIR/out" | grep -q "URGENT" &&
	sql_is "SELECT auto_continues FROM session WHERE key = '\''claude:s1'\''" 1
'

test_done
