#!/bin/sh
# Handoff batons through the real binaries: a Claude Code session (its
# recorded hook payloads) leaves one with `pigeon handoff`, knowing its
# session from the export line its session start left in
# CLAUDE_ENV_FILE; the Cursor simulator's next new conversation takes it
# (and gets PIGEON_SESSION in its env), a background agent and a resume
# do not; two new sessions started at once: only one gets it. Then the
# CLI itself: merging, --dry-run, list, show, drop, --json, and one-line
# errors with exit 2.
. "$(dirname "$0")/lib.sh"

SIM="sh $PGN_SRC/integration/cursor-sim"
FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
mkdir -p "$PROJ/.git" || exit 2
unset PIGEON_HOOK PIGEON_SESSION CLAUDE_ENV_FILE CURSOR_PROJECT_DIR \
    CURSOR_VERSION

# claude_payload FIXTURE SESSION: a recorded Claude payload, in $PROJ.
claude_payload() {
	jq --arg dir "$PROJ" --arg s "$2" '.cwd = $dir | .session_id = $s |
	    .transcript_path = ("/t/" + $s + ".jsonl")' "$FIX/claude/$1"
}

# cursor_start CONVERSATION BACKGROUND: a recorded Cursor sessionStart.
cursor_start() {
	jq --arg dir "$PROJ" --arg c "$1" --argjson bg "$2" '
		.conversation_id = $c | .session_id = $c |
		.workspace_roots = [$dir] | .is_background_agent = $bg' \
	    "$FIX/cursor/01-sessionStart-ide.json"
}

# sim ARGS...: run the simulator; its JSON to ./sim.json.
sim() {
	$SIM --project "$PROJ" "$@" >sim.json 2>sim.err &&
	    jq -e . sim.json >/dev/null && return 0
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

# handoffs ROUTE: deliveries by that route, from the database.
handoffs() {
	sqlite3 "$DB" "SELECT count(*) FROM delivery WHERE route = '$1'"
}

test_case 'a Claude session leaves a baton; the Cursor next new conversation takes it, not a background agent or a resume' '
	claude_payload 01-SessionStart-startup.json c-one >start.json &&
	CLAUDE_ENV_FILE=$TEST_DIR/claude-env PIGEON_AGENT=alice \
	    pigeon-hook claude SessionStart <start.json >out &&
	jq -e ".hookSpecificOutput.additionalContext |
	    test(\"you are agent \\\"alice\\\"\")" out >/dev/null &&
	expect_output "export PIGEON_SESSION=${SQ}claude:c-one${SQ}" \
	    cat claude-env &&
	test "$(sqlite3 "$DB" "SELECT transcript_path FROM session
	    WHERE key = ${SQ}claude:c-one${SQ}")" = /t/c-one.jsonl &&
	(. ./claude-env && cd "$PROJ" &&
	    pigeon handoff "the parser is done; next: wire the CLI" >../left) &&
	grep -qx "left baton #1:" left &&
	grep -q "^#1 open, from alice for the next new conversation, 1 note" left &&
	pigeon install cursor --project "$PROJ" >/dev/null &&
	cursor_start bc-bg-7 true >bg.json &&
	sim sessionStart bg.json &&
	simq ".additional_context | test(\"you are agent\")" &&
	simq ".additional_context | test(\"handoff baton\") | not" &&
	claude_payload 03-SessionStart-resume.json c-one >resume.json &&
	pigeon-hook claude SessionStart <resume.json >out &&
	! grep -q "handoff baton" out &&
	test "$(handoffs handoff)" = 0 &&
	cursor_start conv-new false >new.json &&
	sim sessionStart new.json &&
	jq -r .additional_context sim.json >ctx &&
	grep -q "^Pigeon: a handoff baton for this new conversation: " ctx &&
	grep -q "^\\[baton #1 from alice, [0-9]*s ago\\]\$" ctx &&
	grep -qx "  the parser is done; next: wire the CLI" ctx &&
	simq ".env.PIGEON_SESSION == \"cursor:conv-new\"" &&
	test "$(handoffs handoff)" = 1 &&
	pigeon handoff show 1 --project "$PROJ" >show &&
	grep -q "^#1 taken, from alice .* taken by [a-z-]* (cursor:conv-new)" show &&
	pigeon audit --project "$PROJ" --json >audit &&
	jq -e "length == 1 and .[0].route == \"handoff\" and
	    .[0].from == \"alice\" and .[0].session == \"cursor:conv-new\"" \
	    audit >/dev/null &&
	pigeon journal alice --project "$PROJ" >j &&
	grep -q "handoff .*left baton #1" j &&
	grep -q "handoff .*baton #1 taken by cursor:conv-new" j &&
	cursor_start conv-later false >later.json &&
	sim sessionStart later.json &&
	simq ".additional_context | test(\"handoff baton\") | not" &&
	test "$(sqlite3 "$DB" "SELECT transcript_path FROM session
	    WHERE key = ${SQ}cursor:conv-new${SQ}")" = \
	    "$HOME/.cursor/projects/$(echo "${PROJ#/}" | tr -c "A-Za-z0-9\n" -)/agent-transcripts/conv-new/conv-new.jsonl"
'

test_case 'two new sessions started at once: only one gets the baton' '
	for round in 1 2 3 4 5; do
		(cd "$PROJ" && pigeon handoff --agent alice "round $round" \
		    >/dev/null) || return 1
		{ sqlite3 "$DB" "UPDATE baton SET updated_ms = updated_ms - 7200000" &&
		claude_payload 05-SessionStart-startup.json "r$round-a" >a.json &&
		claude_payload 05-SessionStart-startup.json "r$round-b" >b.json
		} || return 1
		pigeon-hook claude SessionStart <a.json >a.out &
		pa=$!
		pigeon-hook claude SessionStart <b.json >b.out &
		pb=$!
		wait "$pa" && wait "$pb" &&
		n=$(cat a.out b.out | grep -c "round $round") &&
		test "$n" -eq 1 || return 1
	done &&
	test "$(handoffs handoff)" = 6 &&
	test "$(sqlite3 "$DB" "SELECT count(*) FROM baton
	    WHERE consumed_ms IS NULL")" = 0
'

test_case 'notes merge within the hour; --dry-run writes nothing; list, show, drop' '
	cd "$PROJ" &&
	pigeon handoff --agent alice --to alice "one" >out &&
	grep -qx "left baton #7:" out &&
	echo "two" | pigeon handoff --agent alice --to alice - >out &&
	grep -qx "added the note to baton #7:" out &&
	grep -q "2 notes" out &&
	pigeon handoff --agent alice --to alice --dry-run "three" >out &&
	grep -qx "would add the note to baton #7, which would then be:" out &&
	grep -qx "    three" out &&
	pigeon handoff show 7 --json >j &&
	jq -e ".notes == 2 and .body == \"one\\n\\ntwo\" and .to == \"alice\" and
	    .state == \"open\" and .taken == null" j >/dev/null &&
	pigeon handoff --agent alice --dry-run --json "new one" >j &&
	jq -e ".id == null and .dry_run == true and .merged == false" j \
	    >/dev/null &&
	test "$(sqlite3 "$DB" "SELECT count(*) FROM baton")" = 7 &&
	pigeon handoff list >l &&
	test "$(wc -l <l)" = 7 &&
	head -n 1 l | grep -q "^#7 open, from alice for alice${SQ}s next new conversation, 2 notes" &&
	pigeon handoff drop 7 >out &&
	grep -qx "dropped baton #7: kept, never delivered" out &&
	pigeon handoff list --json >j &&
	jq -e ".[0].state == \"dropped\" and (.[1:] | all(.state == \"taken\"))" \
	    j >/dev/null
'

test_case 'handoff errors: one line, exit 2' '
	cd "$PROJ" &&
	expect_error 2 "no current session or agent to leave the baton from" \
	    pigeon handoff "x" &&
	expect_error 2 "the baton is empty" pigeon handoff --agent alice " " &&
	expect_error 2 "no agent ${SQ}bob${SQ} in scope" \
	    pigeon handoff --agent alice --to bob "x" &&
	expect_error 2 "no session ${SQ}claude:gone${SQ} in this database" \
	    env PIGEON_SESSION=claude:gone pigeon handoff "x" &&
	head -c 4097 /dev/zero | tr "\\0" x >big &&
	expect_error 2 "over the limit of 4096 bytes" \
	    pigeon handoff --agent alice - <big &&
	expect_error 2 "no baton #99 in scope" pigeon handoff show 99 &&
	expect_error 2 "${SQ}x${SQ} is not a baton id" pigeon handoff drop x &&
	expect_error 2 "handoff show takes one ID" pigeon handoff show &&
	expect_error 2 "--to, --agent and --dry-run go with leaving a baton" \
	    pigeon handoff list --to bob &&
	expect_error 2 "was taken already" pigeon handoff drop 1
'

# past_window KEY: age session KEY's last turn past the duplicate window
# (PGN_HOOK_DUP_WINDOW_MS, decision 0063), as if its replay came later.
past_window() {
	sqlite3 "$DB" "UPDATE session SET last_turn_ms = last_turn_ms - $DUP_MS - 1
	    WHERE key = ${SQ}$1${SQ}"
}
DUP_MS=$(sed -n 's/^#define PGN_HOOK_DUP_WINDOW_MS *\([0-9][0-9]*\).*/\1/p' \
    "$PGN_SRC/broker/src/hook/hook_int.h")

test_case 'a startup replayed past the duplicate window, a Cursor sessionStart of a known conversation: no baton' '
	test -n "$DUP_MS" &&
	(cd "$PROJ" && pigeon handoff --agent alice "for a new session only" \
	    >"$TEST_DIR/left") &&
	grep -qx "left baton #8:" left &&
	claude_payload 01-SessionStart-startup.json c-one >again.json &&
	past_window claude:c-one &&
	pigeon-hook claude SessionStart <again.json >out &&
	jq -e ".hookSpecificOutput.additionalContext |
	    test(\"you are agent \\\"alice\\\"\")" out >/dev/null &&
	! grep -q "for a new session only" out &&
	cursor_start conv-later false >later.json &&
	past_window cursor:conv-later &&
	sim sessionStart later.json &&
	simq ".additional_context | test(\"you are agent\")" &&
	simq ".additional_context | test(\"handoff baton\") | not" &&
	test "$(sqlite3 "$DB" "SELECT count(*) FROM baton
	    WHERE id = 8 AND consumed_ms IS NULL")" = 1 &&
	cursor_start conv-newest false >newest.json &&
	sim sessionStart newest.json &&
	simq ".additional_context | test(\"for a new session only\")" &&
	test "$(sqlite3 "$DB" "SELECT consumed_session FROM baton
	    WHERE id = 8")" = cursor:conv-newest
'

test_case 'handoff --digest reads only a transcript named on this machine, never through a link' '
	cp "$PGN_SRC/tests/fixtures/transcripts/claude-shell.jsonl" \
	    "$TEST_DIR/own.jsonl" &&
	ln -s own.jsonl "$TEST_DIR/link.jsonl" &&
	jq --arg dir "$PROJ" --arg t "$TEST_DIR/own.jsonl" \
	    ".cwd = \$dir | .session_id = \"far-1\" | .transcript_path = \$t" \
	    "$FIX/claude/01-SessionStart-startup.json" >far1.json &&
	jq --arg t "$TEST_DIR/link.jsonl" \
	    ".session_id = \"far-2\" | .transcript_path = \$t" far1.json \
	    >far2.json &&
	PIGEON_AGENT=farah pigeon-hook claude SessionStart <far1.json >/dev/null &&
	PIGEON_AGENT=farah pigeon-hook claude SessionStart <far2.json >/dev/null &&
	sql_is "SELECT count(*) FROM session WHERE key LIKE ${SQ}claude:far-%$SQ
	    AND machine IS NOT NULL AND machine <> ${SQ}$SQ" 2 &&
	PIGEON_SESSION=claude:far-1 pigeon handoff --project "$PROJ" --digest \
	    --dry-run "the note" >out &&
	grep -q "^ *last prompt: now say goodbye$" out &&
	expect_error 2 "link.jsonl is a symbolic link" env \
	    PIGEON_SESSION=claude:far-2 pigeon handoff --project "$PROJ" \
	    --digest "the note" &&
	sql "UPDATE session SET machine = ${SQ}elsewhere@b$SQ
	    WHERE key = ${SQ}claude:far-1$SQ" &&
	expect_error 2 "session ${SQ}claude:far-1$SQ was not bound on this machine" \
	    env PIGEON_SESSION=claude:far-1 pigeon handoff --project "$PROJ" \
	    --digest "the note" &&
	sql_is "SELECT count(*) FROM baton WHERE body LIKE ${SQ}the note%$SQ" 0
'

test_done
