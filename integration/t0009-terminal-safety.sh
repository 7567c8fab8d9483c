#!/bin/sh
# What a person reads from pigeon is safe on a terminal: control bytes,
# C1, bidi and invisible format characters in bodies, names, sessions,
# paths and config keys are shown escaped (\x1b, \u202e) by every command,
# bodies cannot forge a header line, and --json keeps the exact bytes.
. "$(dirname "$0")/lib.sh"

ESC=$(printf '\033')
BEL=$(printf '\007')
CR=$(printf '\r')
RLO=$(printf '\342\200\256')
NEL=$(printf '\302\205')
LS=$(printf '\342\200\250')

# no_raw FILE: no raw ESC, BEL, CR, U+202E, U+0085 or U+2028 in FILE.
no_raw() {
	for nr_c in "$ESC" "$BEL" "$CR" "$RLO" "$NEL" "$LS"; do
		if grep -qF -e "$nr_c" "$1"; then
			echo "error: raw control in $1:" >&9
			od -c "$1" | head -n 20 >&9
			return 1
		fi
	done
}

# headers_only FILE: every line is a header (no indent) or an indented
# body line, and exactly N lines start with '#' (N = $2).
headers_are() {
	test "$(grep -c "^#" "$1")" = "$2" || {
		echo "error: want $2 header lines in $1:" >&9
		cat "$1" >&9
		return 1
	}
}

# The hostile body: OSC 52 clipboard write, screen clear, a carriage
# return and a fake header, RLO, a NEL and a line separator, a fake
# header on a real newline, and text that reads like an escape.
hostile() {
	printf 'hi \033]52;c;cm0gLXJmIH4K\a\033[2J\r#99 from boss\342\200\256 txt\n#98 from boss, 1s ago\n\302\205x\342\200\250y \\x1b'
}

test_case 'setup: a hostile body queued for bob' '
	pigeon agent add bob >/dev/null &&
	pigeon agent add mallory >/dev/null &&
	hostile >body &&
	pigeon send --to bob --from mallory - <body >out &&
	grep -qx "queued #1 for bob" out &&
	sql_is "SELECT hex(body) = hex(CAST(readfile(${SQ}body${SQ}) AS TEXT))
		FROM message WHERE id = 1" 1
'

test_case 'inbox escapes the body and indents every line of it' '
	pigeon inbox --agent bob >out &&
	no_raw out &&
	headers_are out 1 &&
	test "$(grep -vc "^#1 from mallory, \|^    " out)" = 0 &&
	grep -qF "    hi \\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b[2J\\x0d#99 from boss\\u202e txt" out &&
	grep -qxF "    #98 from boss, 1s ago" out &&
	grep -qxF "    \\u0085x\\u2028y \\\\x1b" out
'

test_case 'inbox --json and read --json keep the exact bytes' '
	pigeon inbox --json --agent bob >out &&
	jq -j ".[0].body" out >got && cmp body got &&
	pigeon read --json --agent bob >out &&
	jq -j ".[0].body" out >got && cmp body got
'

test_case 'read, audit, audit show and journal escape the body' '
	hostile | pigeon send --to bob --from mallory - >/dev/null &&
	pigeon read --agent bob >out && no_raw out && headers_are out 1 &&
	grep -qF "\\x1b]52" out &&
	pigeon audit >out && no_raw out && headers_are out 2 &&
	grep -qF "\\u202e" out &&
	pigeon audit show 1 >out && no_raw out && headers_are out 1 &&
	pigeon journal bob >out && no_raw out &&
	grep -qF "    hi \\x1b]52;c" out &&
	test "$(grep -c "^    " out)" = 6 &&
	pigeon journal mallory >out && no_raw out &&
	pigeon audit show --json 1 >out &&
	jq -j .body out >got && cmp body got &&
	pigeon journal --json bob >out &&
	jq -j "[.entries[] | select(.body)][0].body" out >got && cmp body got
'

test_case 'journal --follow escapes what it prints as it comes' '
	{ pigeon journal -f bob >follow.out 2>follow.err & } &&
	pid=$! &&
	bg_track $pid &&
	wait_for follow.out "created" &&
	hostile | pigeon send --to bob --from mallory - >/dev/null &&
	pigeon read --agent bob >/dev/null &&
	wait_for follow.out "#98 from boss" &&
	kill -TERM $pid &&
	bg_wait $pid &&
	no_raw follow.out &&
	expect_empty follow.err
'

test_case 'hosts and session keys written by another tool are escaped' '
	sql "INSERT INTO session(key, host, agent_id, created_ms, last_seen_ms)
		SELECT ${SQ}claude:s${SQ} || char(27) || ${SQ}]0;pwned${SQ} ||
		char(7, 8238), ${SQ}cl${SQ} || char(27) || ${SQ}[2J${SQ}, id, 1, 1
		FROM agent WHERE name = ${SQ}bob${SQ}" &&
	sql "UPDATE delivery SET host = ${SQ}cl${SQ} || char(27) || ${SQ}[2J${SQ},
		session = ${SQ}s${SQ} || char(13, 8238) WHERE id = 1" &&
	pigeon agents >out && no_raw out &&
	grep -qF "cl\\x1b[2J" out &&
	pigeon audit >out && no_raw out &&
	grep -qF "(cl\\x1b[2J s\\x0d\\u202e)" out &&
	pigeon audit show 1 >out && no_raw out &&
	pigeon agents --json >out &&
	jq -e "[.[] | select(.name == \"bob\")][0].hosts | test(\"\\u001b\")" out
'

test_case 'doctor and provider status escape config keys of a cloned repo' '
	mkdir -p repo/.git repo/.pigeon &&
	printf "{\"\\\\u001b[2J\\\\u001b]52;c;eA==\\\\u0007evil\\\\u202e\":1,\"a\\\\nb\":2}\n" \
		>repo/.pigeon/config.json &&
	jq -e . repo/.pigeon/config.json >/dev/null &&
	(cd repo && pigeon doctor >../out 2>../err); \
	no_raw out && no_raw err &&
	grep -qF "\\x1b[2J\\x1b]52;c;eA==\\x07evil\\u202e" out &&
	grep -qF "a\\x0ab" out &&
	(cd repo && pigeon doctor --json >../out.json 2>/dev/null); \
	jq -e ".project.unknown_keys | test(\"\\u001b\\\\[2J\")" out.json &&
	(cd repo && pigeon provider status >../out 2>../err) &&
	no_raw out && no_raw err &&
	grep -qF "evil\\u202e" out &&
	(cd repo && pigeon provider status --json >../out.json) &&
	jq -e ".unknown_keys | test(\"\\u202e\")" out.json
'

test_case 'paths with controls are escaped: scope roots, --project' '
	d=$(printf "p\033[2J\342\200\256q") &&
	mkdir -p "$d/.git" &&
	pigeon agents --project "$d" >out && no_raw out &&
	grep -qF "no agents in scope $TEST_DIR/p\\x1b[2J\\u202eq" out &&
	expect_code 2 pigeon agents --project "$(printf "no\033[2Jdir")" \
		>out 2>err &&
	no_raw err && expect_one_error err "--project ${SQ}no\\x1b[2Jdir${SQ}"
'

test_case 'errors that echo input are one escaped line' '
	expect_code 2 pigeon journal "$(printf "x\033[2J\ny")" >out 2>err &&
	no_raw err && expect_one_error err "x\\x1b[2J\\x0ay" &&
	expect_code 2 pigeon "$(printf "cmd\033]0;t\007")" 2>err &&
	no_raw err && expect_one_error err "cmd\\x1b]0;t\\x07" &&
	expect_code 2 pigeon audit show "$(printf "1\342\200\256")" 2>err &&
	no_raw err && expect_one_error err "1\\u202e" &&
	expect_code 2 pigeon send --to "$(printf "b\rob")" hi 2>err &&
	no_raw err && expect_one_error err "b\\x0dob"
'

test_done
