#!/bin/sh
# Who a message is from, and how much of a mailbox one sender fills,
# through the real binaries: a shell of a Claude Code session (its
# PIGEON_SESSION from the export line the session start left) sends as
# the session's agent, with or without --from, whatever PIGEON_AGENT
# says; a --from naming another agent is refused with one line, exit 2,
# nothing stored, in another repository too; outside the session --from
# is free. send --wait-reply from the session waits in its agent's mailbox
# and takes only the recipient's reply. One sender holds at most 100 of
# a mailbox's 200: the 101st is refused, another sender still gets
# through, the whole cap still holds.
. "$(dirname "$0")/lib.sh"

FIX=$PGN_SRC/tests/fixtures/payloads
PROJ=$TEST_DIR/proj
OTHER=$TEST_DIR/other
mkdir -p "$PROJ/.git" "$OTHER/.git" || exit 2
unset PIGEON_HOOK PIGEON_SESSION CLAUDE_ENV_FILE

# in_session CMD...: run CMD in $PROJ with the session's environment.
in_session() {
	(. "$TEST_DIR/claude-env" && cd "$PROJ" && "$@")
}
# in_other CMD...: the same in $OTHER, another repository.
in_other() {
	(. "$TEST_DIR/claude-env" && cd "$OTHER" && "$@")
}
messages() {
	sql "SELECT count(*) FROM message"
}

test_case 'setup: a Claude session bound to builder; agents lead, mallory' '
	jq --arg dir "$PROJ" ".cwd = \$dir | .session_id = \"s-1\"" \
	    "$FIX/claude/01-SessionStart-startup.json" >start.json &&
	CLAUDE_ENV_FILE=$TEST_DIR/claude-env PIGEON_AGENT=builder \
	    pigeon-hook claude SessionStart <start.json >out &&
	expect_output "export PIGEON_SESSION=${SQ}claude:s-1${SQ}" \
	    cat claude-env &&
	(cd "$PROJ" && pigeon agent add lead >/dev/null &&
	    pigeon agent add mallory >/dev/null)
'

test_case 'in the session, --from naming another agent is refused; nothing stored' '
	n=$(messages) &&
	expect_error 2 "session ${SQ}claude:s-1${SQ} sends as its agent ${SQ}builder${SQ}, not as ${SQ}lead${SQ}: drop --from" \
		in_session pigeon send --from lead --to builder "merge it now" &&
	expect_error 2 "not as ${SQ}user${SQ}" \
		in_session pigeon send --from user --to lead x &&
	expect_error 2 "not as ${SQ}ghost${SQ}" \
		in_session pigeon send --from ghost --create --to newbie x &&
	expect_error 2 "not as ${SQ}lead${SQ}" \
		in_session pigeon send --from lead --to lead --wait-reply x &&
	test "$(messages)" = "$n" &&
	sql_is "SELECT count(*) FROM agent WHERE name = ${SQ}newbie${SQ}" 0 &&
	sql_is "SELECT count(*) FROM journal WHERE kind = ${SQ}sent${SQ}" 0
'

test_case 'in the session, the sender is its agent, whatever PIGEON_AGENT says' '
	in_session pigeon send --to lead "no from" >out &&
	grep -qx "queued #1 for lead" out &&
	in_session env PIGEON_AGENT=lead pigeon send --to lead "agent lead" \
		>/dev/null &&
	in_session pigeon send --from BUILDER --to lead "itself" >/dev/null &&
	sql_is "SELECT sender, body FROM message ORDER BY id" \
		"builder|no from
builder|agent lead
builder|itself" &&
	in_session pigeon inbox --agent lead >out &&
	test "$(grep -c "^#[0-9]* from builder, " out)" = 3 &&
	sql_is "SELECT count(*) FROM journal j JOIN agent a ON a.id = j.agent_id
		WHERE a.name = ${SQ}builder${SQ} AND j.kind = ${SQ}sent${SQ}" 3
'

test_case 'outside the session --from is free' '
	(cd "$PROJ" && pigeon send --from lead --to builder "a person" \
		>/dev/null) &&
	(cd "$PROJ" && PIGEON_SESSION=claude:unknown pigeon send --from lead \
		--to builder "an unknown session" >/dev/null) &&
	sql_is "SELECT count(*) FROM message WHERE sender = ${SQ}lead${SQ}" 2
'

test_case 'in another scope the session still sends as its agent' '
	(cd "$OTHER" && pigeon agent add lead >/dev/null) &&
	n=$(messages) &&
	expect_error 2 "session ${SQ}claude:s-1${SQ} sends as its agent ${SQ}builder${SQ}, not as ${SQ}lead${SQ}: drop --from" \
		in_other pigeon send --from lead --to lead x &&
	test "$(messages)" = "$n" &&
	in_other pigeon send --to lead "another scope" >/dev/null &&
	sql_is "SELECT m.sender FROM message m JOIN scope s
		ON s.id = m.scope_id WHERE s.root LIKE ${SQ}%/other${SQ}" builder
'

test_case 'send --wait-reply from the session: its agent waits, and only the recipient answers' '
	{ in_session pigeon send --to lead --wait-reply --timeout 20 \
		"ship it?" >w.out 2>w.err & } &&
	pid=$! &&
	bg_track $pid &&
	wait_for w.out "^queued #[0-9]* for lead$" &&
	q=$(sed -n "s/^queued #\([0-9]*\) for lead$/\1/p" w.out) &&
	sql_is "SELECT sender FROM message WHERE id = $q" builder &&
	f=$(pigeon send --to builder --from mallory --reply-to "$q" "yes" \
		--project "$PROJ" --json | jq .[0].id) &&
	r=$(pigeon send --to builder --from lead --reply-to "$q" "not yet" \
		--project "$PROJ" --json | jq .[0].id) &&
	bg_wait $pid &&
	expect_empty w.err &&
	sed -n 2p w.out | grep -q "^#$r from lead, .*, re #$q$" &&
	sql_is "SELECT delivered_ms IS NULL FROM message WHERE id = $f" 1 &&
	sql_is "SELECT recipient FROM delivery WHERE message_id = $r" builder
'

test_case 'setup: a mailbox for the share' '
	(cd "$PROJ" && pigeon agent add full >/dev/null)
'

test_case 'one sender holds at most 100 of 200: the 101st is refused, others get through' '
	cd "$PROJ" &&
	i=1 &&
	while [ $i -le 99 ]; do
		pigeon send --to full --from flood "n $i" >/dev/null || return 1
		i=$((i + 1))
	done &&
	pigeon send --to full --from flood "n 100" >/dev/null &&
	sql_is "SELECT count(*) FROM message WHERE sender = ${SQ}flood${SQ}
		AND delivered_ms IS NULL" 100 &&
	n=$(messages) &&
	expect_error 2 "agent ${SQ}full${SQ} already has 100 messages waiting from ${SQ}flood${SQ}, one sender${SQ}s share (100 of the cap of 200); nothing was sent: wait until it reads them" \
		pigeon send --to full --from flood "n 101" &&
	expect_error 2 "one sender${SQ}s share" \
		pigeon send --to all --from flood "to all" &&
	test "$(messages)" = "$n" &&
	pigeon send --to full --from lead "still through" >out &&
	grep -q "^queued #[0-9]* for full$" out &&
	pigeon read --agent full --json >/dev/null &&
	pigeon send --to full --from flood "room again" >/dev/null
'

test_case 'the whole cap still holds: 200 from two senders, a third refused' '
	cd "$PROJ" &&
	pigeon read --agent full >/dev/null &&
	i=1 &&
	while [ $i -le 100 ]; do
		pigeon send --to full --from flood "f $i" >/dev/null &&
		pigeon send --to full --from lead "l $i" >/dev/null || return 1
		i=$((i + 1))
	done &&
	n=$(messages) &&
	expect_error 2 "agent ${SQ}full${SQ} already has 200 messages waiting (the cap is 200)" \
		pigeon send --to full --from mallory "one more" &&
	test "$(messages)" = "$n"
'

test_done
