#!/bin/sh
# The README's "The first ten minutes", followed literally with the real
# Claude Code (reviewer) and Codex (builder) at their pinned versions
# (integration/hosts/versions), against the mock model server: the same
# commands in the same order, in a git repository ~/src/app of the test's
# own HOME, each host at its defaults plus what `pigeon install` wrote
# (docs/decisions/0242). Label "hosts"; skipped (exit 77) when a host
# cannot be installed, unless CI=true.
#
# The README's terminals: `pigeon watch` runs in a tmux terminal; Claude
# Code is one live session (its stream-json input, one prompt after
# another, as a person types them); Codex is a new session, then the
# same one resumed (codex exec). "The model" is the mock: it follows the
# introduction its host's request holds (mock-intro-send-new), or runs
# the README's command (mock-shell).
HOST=claude
. "$(dirname "$0")/hosts/lib.sh"
. "$(dirname "$0")/tmux.sh"

if ! why=$(PIGEON_HOSTS_CACHE=$hosts_cache "$hosts_dir/install" codex \
    2>&1 >/dev/null); then
	if [ "${CI:-}" = true ]; then
		echo "Bail out! CI=true and codex cannot be installed: $why"
		exit 1
	fi
	echo "# SKIPPED the README's first ten minutes: codex: $why"
	exit 77
fi
if ! host_seed || ! as_host codex host_seed; then
	echo "Bail out! cannot write the host configurations in $HOME"
	exit 2
fi

APP=$HOME/src/app
mkdir -p "$APP" && git init -q "$APP" || exit 2
ASK="tell builder the API moved to v2"
PING="the API moved to v2"
REPLY="done, on v2"

test_case 'pigeon install claude && pigeon install codex; doctor: both installed, Codex: trust them with /hooks' '
	(cd "$APP" && pigeon install claude && pigeon install codex) \
	    >install.out &&
	(cd "$APP" && pigeon doctor) >doctor.out 2>&1
	grep -q "^  claude  *user  .*: installed (" doctor.out &&
	grep -q "^  codex  *user  .*: installed (" doctor.out &&
	grep -q "codex: .*/hooks" doctor.out ||
		{ cat install.out doctor.out >&9; exit 1; }
'

# The whole flow is one case: the live Claude session and the watch
# terminal live as long as it does.
test_case 'reviewer reaches builder before builder ever ran; builder answers; the reply reaches reviewer, each once' '
	term_start env PATH="$PATH" HOME="$HOME" PIGEON_HOME="$PIGEON_HOME" \
	    TERM=xterm-256color sh -c "cd \"$APP\" && exec pigeon watch" &&
	term_wait "watch" "AGENTS" &&
	AGENT=reviewer && HOST_MODE=defaults &&
	live_start "$APP" &&
	{
		live_prompt r1 "$(printf "%s\nmock-intro-send-new: builder %s" \
		    "$ASK" "$PING")"; rc=$?
		test "$rc" = 0 &&
		# The introduction told the model how to reach an agent not
		# here yet; its first send worked.
		intro_line r1 "An agent not here yet: " | grep -q -- "add --create" &&
		requests r1 | grep -q "queued #1 for builder" &&
		! requests r1 | grep -q "no agent .builder." &&
		sql_is "SELECT m.sender, a.name, m.delivered_ms IS NULL
			FROM message m JOIN agent a ON a.id = m.recipient_id" \
			"reviewer|builder|1" &&
		term_wait "the queued ping" "reviewer -> builder" &&
		AGENT=builder &&
		as_host codex host_run b1 "$APP" new "what is new?" &&
		as_host codex arrives b1 "$PING" codex &&
		sql_is "SELECT count(*), route, host FROM delivery
			WHERE message_id = 1" "1|session-start|codex" &&
		term_wait "the delivery" "reviewer -> builder via session-start" &&
		as_host codex host_run b2 "$APP" resume "$(printf \
		    "answer it\nmock-intro-reply: 1 reviewer %s" \
		    "$REPLY")" &&
		requests b2 | grep -q "queued #2 for reviewer" &&
		as_host codex not_new b2 "$PING" &&
		sql_is "SELECT m.sender, a.name, m.reply_to
			FROM message m JOIN agent a ON a.id = m.recipient_id
			WHERE m.id = 2" "builder|reviewer|1" &&
		AGENT=reviewer &&
		live_prompt r2 "what did builder say?" &&
		arrives r2 "$REPLY" claude:UserPromptSubmit &&
		! { requests r1; requests r2; } | grep -q "#1 from reviewer" &&
		! as_host codex requests b2 | grep -q "#2 from builder"
	}
	ok=$?
	live_stop
	term_stop
	test "$ok" = 0
'

test_case 'each message delivered once, to the session of its recipient'"'"'s host' '
	sql_is "SELECT m.id, m.sender, a.name, coalesce(m.reply_to, 0),
		count(d.message_id), d.route, d.host
		FROM message m JOIN agent a ON a.id = m.recipient_id
		LEFT JOIN delivery d ON d.message_id = m.id
		GROUP BY m.id ORDER BY m.id" \
		"1|reviewer|builder|0|1|session-start|codex
2|builder|reviewer|1|1|prompt|claude"
'

test_case 'pigeon audit, audit verify, journal builder: the story as the README tells it' '
	(cd "$APP" && pigeon audit) >audit.out &&
	grep -q "reviewer -> builder" audit.out &&
	grep -q "builder -> reviewer" audit.out &&
	grep -q "session-start" audit.out && grep -q "codex:" audit.out &&
	grep -q "claude:" audit.out &&
	(cd "$APP" && pigeon audit verify) >verify.out &&
	(cd "$APP" && pigeon journal builder) >journal.out &&
	for what in created bound delivered sent; do
		grep -q "$what" journal.out ||
			{ echo "error: no $what in the journal" >&9; exit 1; }
	done ||
		{ cat audit.out verify.out journal.out >&9; exit 1; }
'

test_done
