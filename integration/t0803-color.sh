#!/bin/sh
# Colour only on a terminal (docs/decisions/0123): on a pty by default,
# off when stdout is no terminal, with NO_COLOR, with TERM=dumb, with
# --color=never; --color=always wins over all of them but --json; an
# unknown --color value is a usage error. The hook never colours, and
# neither does --json, even on a terminal asked for colour.
. "$(dirname "$0")/lib.sh"

FIX=$PGN_SRC/tests/fixtures/payloads
ESC=$(printf '\033')
mkdir -p proj/.git || exit 2

# on_tty CMD...: CMD's output as it writes it on a pseudo-terminal.
on_tty() {
	script -qec "$*" /dev/null </dev/null
}

has_esc() {
	grep -qF -e "$ESC" "$1" || {
		echo "error: no colour in $1:" >&9
		cat "$1" >&9
		return 1
	}
}

no_esc() {
	if grep -qF -e "$ESC" "$1"; then
		echo "error: an escape sequence in $1:" >&9
		od -c "$1" | head -n 12 >&9
		return 1
	fi
}

test_case 'setup: an agent with queued mail' '
	pigeon agent add bob >/dev/null &&
	pigeon send --to bob "hello bob" >/dev/null
'

test_case 'on a terminal: colour by default' '
	TERM=xterm on_tty pigeon agents >out &&
	has_esc out &&
	grep -q bob out
'

test_case 'stdout not a terminal: no colour' '
	TERM=xterm pigeon agents >out &&
	no_esc out && grep -q bob out &&
	TERM=xterm pigeon inbox --agent bob | cat >out &&
	no_esc out && grep -q "hello bob" out
'

test_case 'NO_COLOR, TERM=dumb and --color=never turn it off on a terminal' '
	NO_COLOR=1 TERM=xterm on_tty pigeon agents >out && no_esc out &&
	TERM=dumb on_tty pigeon agents >out && no_esc out &&
	TERM=xterm on_tty pigeon agents --color=never >out && no_esc out &&
	TERM=xterm on_tty pigeon agents --color never >out && no_esc out &&
	grep -q bob out
'

test_case 'an empty NO_COLOR is no NO_COLOR' '
	NO_COLOR= TERM=xterm on_tty pigeon agents >out && has_esc out
'

test_case '--color=always colours a pipe, and wins over NO_COLOR' '
	pigeon agents --color=always >out && has_esc out &&
	NO_COLOR=1 pigeon inbox --agent bob --color=always >out &&
	has_esc out && grep -q "hello bob" out &&
	pigeon audit verify --color=always >out && has_esc out
'

test_case '--color=auto is the default: off in a pipe' '
	pigeon agents --color=auto >out && no_esc out
'

test_case '--json is never coloured, whatever is asked' '
	TERM=xterm on_tty pigeon agents --json --color=always >out &&
	no_esc out && grep -q "\"name\":\"bob\"" out &&
	pigeon inbox --agent bob --json --color=always >out &&
	no_esc out && jq -e ".[0].body == \"hello bob\"" out >/dev/null
'

test_case 'an unknown --color value: one line, exit 2, nothing done' '
	expect_error 2 "--color ${SQ}sometimes${SQ}: say auto, always or never" \
	    pigeon agents --color=sometimes &&
	expect_error 2 "--color ${SQ}${SQ}: say auto, always or never" \
	    pigeon read --agent bob --color= &&
	pigeon inbox --agent bob >out && grep -q "hello bob" out
'

test_case 'the hook on a terminal prints no escape sequence' '
	fixture_payload "$FIX/claude/01-SessionStart-startup.json" \
	    "$TEST_DIR/proj" s1 >start.json &&
	fixture_payload "$FIX/claude/02-UserPromptSubmit-prompt.json" \
	    "$TEST_DIR/proj" s1 t1 >prompt.json &&
	(cd proj && PIGEON_AGENT=carol TERM=xterm on_tty \
	    "pigeon-hook claude SessionStart <../start.json") >out &&
	no_esc out && grep -q carol out &&
	(cd proj && pigeon send --to carol --from bob "ping carol" \
	    --color=always >/dev/null) &&
	(cd proj && TERM=xterm on_tty \
	    "pigeon-hook claude UserPromptSubmit <../prompt.json") >out &&
	no_esc out && grep -q "ping carol" out
'

test_done
