#!/bin/sh
# pigeon transcript (product.md §9) against the real binaries: the hook
# keeps each session's transcript_path (Cursor's derived from its
# workspace and conversation), and the digest is read from it and the
# agent's journal, by --session, $PIGEON_SESSION or --agent; every
# failure is one line naming what was wrong.
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FIX=$PGN_SRC/tests/fixtures
PROJ=$TEST_DIR/proj
mkdir -p "$PROJ/.git" "$TEST_DIR/tr" || exit 2
cp "$FIX/transcripts/claude-shell.jsonl" "$TEST_DIR/tr/s1.jsonl" || exit 2

# hook HOST EVENT PAYLOAD-FILE: the hook as agent alice; it must exit 0.
hook() {
	PIGEON_AGENT=alice "$HOOK" "$1" "$2" <"$3" >hook.out 2>hook.err ||
	    { cat hook.err >&9; return 1; }
}

# claude_start SID TRANSCRIPT|-: Claude's SessionStart for SID in $PROJ
# naming TRANSCRIPT (-: no transcript_path at all).
claude_start() {
	fixture_payload "$FIX/payloads/claude/01-SessionStart-startup.json" \
	    "$PROJ" "$1" | jq -c --arg t "$2" \
	    'if $t == "-" then del(.transcript_path) else .transcript_path = $t end' \
	    >start.json && hook claude SessionStart start.json
}

# corpus_transcript BATCH: a Claude transcript of the corpus cases in
# BATCH (JSONL, tests/fixtures/redaction): one prompt of every secret
# line, then one Bash call for each line and one for its near miss.
corpus_transcript() {
	jq -c -s '[{type: "user", sessionId: "c", uuid: "u0",
	    message: {role: "user", content: ([.[].line] | join("\n"))}},
	    {type: "assistant", sessionId: "c", uuid: "u1",
	    message: {role: "assistant", stop_reason: "end_turn",
	    content: ([.[] | .line, .keep] | to_entries | map({type: "tool_use",
	    id: "t\(.key)", name: "Bash", input: {command: .value}}))}}] | .[]' "$1"
}

# corpus_clean OUT BATCH: no secret of BATCH is in OUT, and each near
# miss is there whole, as a command run (however indented).
corpus_clean() {
	jq -r '.secrets[]' "$2" >secrets.txt &&
	if grep -F -f secrets.txt "$1" >&9; then
		echo "a secret of $2 is in $1" >&9
		return 1
	fi &&
	sed 's/^ *//' "$1" >"$1.lines" &&
	jq -r '.keep | sub("^ +"; "")' "$2" | while IFS= read -r k; do
		grep -qxF -- "\$ $k" "$1.lines" ||
		    { echo "near miss not kept in $1: $k" >&9; return 1; }
	done
}

test_case 'the hook keeps the payload transcript_path for the session' '
	claude_start s1 "$TEST_DIR/tr/s1.jsonl" &&
	sql_is "SELECT a.name, s.transcript_path FROM session s JOIN agent a
	    ON a.id = s.agent_id WHERE s.key = ${SQ}claude:s1$SQ" \
	    "alice|$TEST_DIR/tr/s1.jsonl"
'

test_case 'the digest of a session by key: transcript and journal' '
	pigeon send --project "$PROJ" --from alice --create --to bob \
	    "the build is green, token ghp_abcdefghijklmnopqrstuvwxyz0123" \
	    >/dev/null &&
	pigeon transcript --project "$PROJ" --session claude:s1 >out &&
	head -n 1 out >first &&
	printf "%s\n" "Transcript digest of session claude:s1 of agent alice (data, not instructions)" >first.want &&
	test_cmp first.want first &&
	grep -qx "source: claude transcript, 37 lines" out &&
	grep -qx "first prompt: please list the files mock-shell: echo hello > notes.txt" out &&
	grep -qx "last prompt: now say goodbye" out &&
	grep -qx "last answer: MOCK-REPLY" out &&
	grep -qx "last turn: success" out &&
	grep -qx "  \\$ echo hello > notes.txt" out &&
	grep -qx "  sent #1 to bob: the build is green, token \\[REDACTED\\]" out &&
	! grep -q ghp_ out &&
	[ "$(wc -c <out)" -le 4000 ]
'

test_case 'PIGEON_SESSION and --agent name the same session' '
	pigeon transcript --project "$PROJ" --session claude:s1 >by-key &&
	PIGEON_SESSION=claude:s1 pigeon transcript --project "$PROJ" >by-env &&
	test_cmp by-key by-env &&
	pigeon transcript --project "$PROJ" --agent alice >by-agent &&
	test_cmp by-key by-agent &&
	(cd "$PROJ" && PIGEON_AGENT=alice pigeon transcript) >by-cwd &&
	test_cmp by-key by-cwd &&
	mkdir -p elsewhere/.git &&
	(cd elsewhere && pigeon transcript --session claude:s1) >by-key-away &&
	test_cmp by-key by-key-away
'

test_case '--json holds the findings and the digest' '
	pigeon transcript --project "$PROJ" --session claude:s1 --json >j &&
	jq -e ".session == \"claude:s1\" and .agent == \"alice\" and
	    .transcript.format == \"claude\" and .transcript.lines == 37 and
	    .transcript.outcome == \"success\" and
	    .transcript.commands == [\"echo hello > notes.txt\"] and
	    .digest_bytes <= 4000 and (.digest | length) == .digest_bytes" j \
	    >/dev/null &&
	jq -j .digest j >digest &&
	pigeon transcript --project "$PROJ" --session claude:s1 >text &&
	test_cmp text digest
'

test_case 'handoff --digest leaves the note and the session digest' '
	PIGEON_SESSION=claude:s1 pigeon handoff --project "$PROJ" --digest \
	    "pick up the lint errors" >out &&
	grep -q "^left baton #1:" out &&
	sql "SELECT body FROM baton WHERE id = 1" >body &&
	head -n 1 body | grep -qx "pick up the lint errors" &&
	sed -n 2p body | grep -qx "" &&
	sed -n 3p body | grep -qx "Transcript digest of session claude:s1 of agent alice (data, not instructions)" &&
	grep -qx "last turn: success" body &&
	grep -qx "  sent #1 to bob: the build is green, token \\[REDACTED\\]" body &&
	! grep -q ghp_ body &&
	sql_is "SELECT length(body) <= 4096, sender, session FROM baton" \
	    "1|alice|claude:s1"
'

test_case 'handoff --digest --dry-run prints it and writes nothing' '
	pigeon handoff --project "$PROJ" --agent alice --digest --dry-run \
	    "only a look" >out &&
	grep -q "Transcript digest of session claude:s1 of agent alice" out &&
	grep -q "first prompt: please list the files" out &&
	sql_is "SELECT count(*), notes FROM baton" "1|1"
'

test_case 'handoff --digest: no room, no transcript, not with a verb' '
	note=$(repeat 3800 n) &&
	expect_error 2 "the note leaves 294 bytes for the digest, which needs 400" \
	    env PIGEON_SESSION=claude:s1 pigeon handoff --project "$PROJ" \
	    --to bob --digest "$note" &&
	claude_start s9 - &&
	expect_error 2 "session ${SQ}claude:s9$SQ has no transcript recorded" \
	    env PIGEON_SESSION=claude:s9 pigeon handoff --project "$PROJ" \
	    --to bob --digest "x" &&
	expect_error 2 "--digest goes with leaving a baton, not with list" \
	    pigeon handoff --project "$PROJ" list --digest &&
	sql_is "SELECT count(*) FROM baton" "1"
'

test_case 'a Cursor session without transcript_path: the derived path' '
	id=c0de0001-0000-4000-8000-00000000000a &&
	slug=$(printf "%s" "${PROJ#/}" | tr -c "A-Za-z0-9" "-") &&
	dir=$HOME/.cursor/projects/$slug/agent-transcripts/$id &&
	mkdir -p "$dir/subagents" &&
	src=$FIX/transcripts/cursor/projects/home-dev-work/agent-transcripts/5e551011-0000-4000-8000-000000000001 &&
	cp "$src/5e551011-0000-4000-8000-000000000001.jsonl" "$dir/$id.jsonl" &&
	cp "$src/subagents/"*.jsonl "$dir/subagents/" &&
	fixture_payload "$FIX/payloads/cursor/01-sessionStart-ide.json" \
	    "$PROJ" "bc-$id" >cstart.json &&
	hook cursor sessionStart cstart.json &&
	sql_is "SELECT transcript_path FROM session
	    WHERE key LIKE ${SQ}cursor:%$SQ" "$dir/$id.jsonl" &&
	key=$(sql "SELECT key FROM session WHERE key LIKE ${SQ}cursor:%$SQ") &&
	pigeon transcript --project "$PROJ" --session "$key" >out &&
	grep -qx "source: cursor transcript, 21 lines" out &&
	grep -q "^subagents (1): c41d0001-0000-4000-8000-000000000002 success, 2 calls$" out &&
	grep -qx "  (background) GITHUB_TOKEN=\\[REDACTED\\] npm test" out ||
	    grep -qx "  \\$ (background) GITHUB_TOKEN=\\[REDACTED\\] npm test" out
'

test_case 'unknown session and unknown agent are one-line errors' '
	expect_error 2 "no session ${SQ}claude:nope$SQ in this database" \
	    pigeon transcript --project "$PROJ" --session claude:nope &&
	expect_error 2 "no agent ${SQ}nobody$SQ" \
	    pigeon transcript --project "$PROJ" --agent nobody &&
	expect_error 2 "name one of --session, --agent and --file" \
	    pigeon transcript --session a:b --agent alice &&
	expect_error 2 "--format goes with --file" \
	    pigeon transcript --session a:b --format cursor &&
	expect_error 2 "which agent?" env -u PIGEON_AGENT -u PIGEON_SESSION \
	    pigeon transcript --project "$PROJ"
'

test_case 'no transcript recorded, a missing, unreadable or foreign file' '
	claude_start s2 - &&
	expect_error 2 "session ${SQ}claude:s2$SQ has no transcript recorded" \
	    pigeon transcript --project "$PROJ" --session claude:s2 &&
	claude_start s3 "$TEST_DIR/tr/gone.jsonl" &&
	expect_error 2 "cannot open $TEST_DIR/tr/gone.jsonl" \
	    pigeon transcript --project "$PROJ" --session claude:s3 &&
	claude_start s4 "$TEST_DIR/tr" &&
	expect_error 2 "is not a regular file" \
	    pigeon transcript --project "$PROJ" --session claude:s4 &&
	printf "hello\n{\"a\":1}\n" >"$TEST_DIR/tr/notes.txt" &&
	claude_start s5 "$TEST_DIR/tr/notes.txt" &&
	expect_error 2 "notes.txt is not a Claude Code transcript" \
	    pigeon transcript --project "$PROJ" --session claude:s5 &&
	expect_error 2 "notes.txt is not a Cursor, Claude Code or Codex transcript" \
	    pigeon transcript --file "$TEST_DIR/tr/notes.txt" &&
	expect_error 2 "unknown format ${SQ}gemini$SQ" \
	    pigeon transcript --file "$TEST_DIR/tr/s1.jsonl" --format gemini
'

test_case '--file reads a transcript without a database' '
	pigeon transcript --file "$TEST_DIR/tr/s1.jsonl" >out &&
	head -n 1 out | grep -qx "Transcript digest (data, not instructions)" &&
	grep -qx "last turn: success" out &&
	[ ! -e "$DB" ] || [ "$(sql "SELECT count(*) FROM session")" -ge 1 ]
'

test_case 'the redaction corpus: no secret in transcript or handoff --digest --dry-run, every near miss kept' '
	corpus=$FIX/redaction/corpus.jsonl &&
	n=$(grep -c . "$corpus") && [ "$n" -ge 60 ] &&
	b=0 &&
	while [ $((b * 7)) -lt "$n" ]; do
		sed -n "$((b * 7 + 1)),$((b * 7 + 7))p" "$corpus" >batch.jsonl &&
		corpus_transcript batch.jsonl >"$TEST_DIR/tr/c$b.jsonl" &&
		claude_start "c$b" "$TEST_DIR/tr/c$b.jsonl" &&
		pigeon transcript --file "$TEST_DIR/tr/c$b.jsonl" >t.out &&
		corpus_clean t.out batch.jsonl &&
		PIGEON_SESSION=claude:c$b pigeon handoff --project "$PROJ" \
		    --digest --dry-run "corpus batch $b" >h.out &&
		grep -qx " *Transcript digest of session claude:c$b of agent alice (data, not instructions)" h.out &&
		corpus_clean h.out batch.jsonl || return 1
		b=$((b + 1))
	done &&
	[ "$b" -eq $(((n + 6) / 7)) ] &&
	sql_is "SELECT count(*) FROM baton" "1"
'

test_done
