# lib.sh: sourced by every integration/tNNNN-*.sh (POSIX sh, run by dash).
#
# Gives each script a fresh temporary directory ($TEST_DIR, the working
# directory of every case) holding its own PIGEON_HOME and HOME, puts the
# built binaries first on PATH, and runs titled, &&-chained cases in the
# style of git's t/:
#
#	test_case 'read claims once' '
#		pigeon read --agent bob >out &&
#		expect_code 0 pigeon read --agent bob >out &&
#		grep -q "no messages" out
#	'
#	test_done
#
# A case runs in a subshell with stdin from /dev/null; if it fails, its
# body and output are shown (PGN_TEST_TRACE=1 adds set -x, which also
# lands in files a case redirects stderr of a helper function to). The
# directory is removed at exit unless a case failed.

if [ -z "${PGN_BIN:-}" ]; then
	echo "Bail out! PGN_BIN is not set: run through ctest, or set" \
	    "PGN_BIN to the build directory" >&2
	exit 2
fi
PIGEON_BIN=$PGN_BIN/cli/pigeon
RACY_BIN=$PGN_BIN/integration/racy-claimer
if [ ! -x "$PIGEON_BIN" ]; then
	echo "Bail out! no pigeon binary at $PIGEON_BIN: build first" >&2
	exit 2
fi
PATH=$PGN_BIN/cli:$PGN_BIN/hookcli:$PGN_BIN/integration:$PATH
export PATH

TEST_DIR=$(mktemp -d "${TMPDIR:-/tmp}/pigeon-$(basename "$0" .sh).XXXXXX") ||
	exit 2
cd "$TEST_DIR" || exit 2
TEST_DIR=$(pwd -P)
HOME=$TEST_DIR/home
PIGEON_HOME=$TEST_DIR/state
DB=$PIGEON_HOME/pigeon.db
mkdir "$HOME" || exit 2
export HOME PIGEON_HOME
unset PIGEON_DB PIGEON_AGENT XDG_STATE_HOME GIT_DIR GIT_WORK_TREE
LC_ALL=C
export LC_ALL
SQ="'"

test_count=0
test_failed=0
exec 8>&1	# the script's stdout: for notes from inside a case
exec 9>&2	# where helpers explain a failure: the case's output

lib_cleanup() {
	lib_rc=$?
	# Background processes a failed case left running: only those
	# still working in $TEST_DIR, so a reused pid is never hit.
	if [ -s "$TEST_DIR/.pids" ]; then
		while read -r lib_pid; do
			case $(readlink "/proc/$lib_pid/cwd" 2>/dev/null) in
			"$TEST_DIR"*) kill "$lib_pid" 2>/dev/null ;;
			esac
		done <"$TEST_DIR/.pids"
	fi
	if [ "$lib_rc" -eq 0 ] && [ "$test_failed" -eq 0 ]; then
		rm -rf "$TEST_DIR"
	else
		echo "# kept $TEST_DIR"
	fi
	exit "$lib_rc"
}
trap lib_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# test_case TITLE BODY: run BODY in a subshell; print ok / not ok.
test_case() {
	test_count=$((test_count + 1))
	if (cd "$TEST_DIR" || exit 1
	    [ -z "${PGN_TEST_TRACE:-}" ] || set -x
	    eval "$2") >"$TEST_DIR/.case" 2>&1 9>&1 </dev/null; then
		echo "ok $test_count - $1"
	else
		test_failed=$((test_failed + 1))
		echo "not ok $test_count - $1"
		printf '%s\n' "$2" | sed 's/^/#	/'
		sed 's/^/#	> /' "$TEST_DIR/.case"
	fi
}

# test_done: the summary line; exit 1 if any case failed.
test_done() {
	echo "$((test_count - test_failed)) passed, $test_failed failed"
	[ "$test_failed" -eq 0 ] || exit 1
	exit 0
}

# test_note TEXT: a TAP comment on the script's stdout, even from a case.
test_note() {
	echo "# $*" >&8
}

# bg_track PID: kill PID at exit if it is still running then.
bg_track() {
	echo "$1" >>"$TEST_DIR/.pids"
}

# bg_wait PID: wait for a tracked PID, return its exit status, untrack it.
bg_wait() {
	wait "$1"
	bw_rc=$?
	grep -vx "$1" "$TEST_DIR/.pids" >"$TEST_DIR/.pids.new"
	mv "$TEST_DIR/.pids.new" "$TEST_DIR/.pids"
	return "$bw_rc"
}

# expect_code N CMD...: run CMD; it must exit N.
expect_code() {
	ec_want=$1
	shift
	"$@"
	ec_got=$?
	[ "$ec_got" -eq "$ec_want" ] && return 0
	echo "error: '$*' exited $ec_got, want $ec_want" >&9
	return 1
}

# expect_error N TEXT CMD...: CMD exits N, prints nothing on stdout
# (./out) and exactly one line on stderr (./err), which starts with
# "pigeon: " and contains TEXT.
expect_error() {
	ee_want=$1
	ee_text=$2
	shift 2
	expect_code "$ee_want" "$@" >out 2>err || { cat err >&9; return 1; }
	expect_empty out && expect_one_error err "$ee_text"
}

# long_dir BASE LEN: the path BASE/ddd.../ddd of exactly LEN bytes
# (components of at most 60 bytes; BASE must be shorter than LEN - 1).
long_dir() {
	ld_p=$1
	while [ "${#ld_p}" -lt "$2" ]; do
		ld_c=$(($2 - ${#ld_p} - 1))
		if [ "$ld_c" -gt 60 ]; then
			ld_c=60
			[ $(($2 - ${#ld_p} - 61)) -eq 1 ] && ld_c=59
		fi
		ld_p=$ld_p/$(repeat "$ld_c" d)
	done
	printf '%s\n' "$ld_p"
}

# install_at DIR: pigeon and pigeon-hook copied side by side into DIR.
install_at() {
	mkdir -p "$1" &&
	cp "$PGN_BIN/cli/pigeon" "$PGN_BIN/hookcli/pigeon-hook" "$1/"
}

# flip_byte FILE OFFSET: change the byte at OFFSET of FILE (in place).
flip_byte() {
	fb_v=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d " ") &&
	fb_v=$(((fb_v + 1) % 256)) &&
	# shellcheck disable=SC2059 # the octal escape is the format
	printf "\\$(printf %03o "$fb_v")" |
	    dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# expect_one_error FILE TEXT: FILE is one line "pigeon: ..." with TEXT.
expect_one_error() {
	if [ "$(wc -l <"$1")" -ne 1 ] || ! grep -q '^pigeon: ' "$1" ||
	    ! grep -qF -e "$2" "$1"; then
		echo "error: want one line 'pigeon: ...$2...' in $1, got:" >&9
		cat "$1" >&9
		return 1
	fi
}

# expect_empty FILE
expect_empty() {
	[ ! -s "$1" ] && return 0
	echo "error: $1 is not empty:" >&9
	cat "$1" >&9
	return 1
}

# test_cmp EXPECTED ACTUAL
test_cmp() {
	diff -u "$1" "$2" >&9
}

# expect_output TEXT CMD...: CMD exits 0 and prints exactly TEXT (+ newline).
expect_output() {
	eo_text=$1
	shift
	"$@" >out.actual || {
		echo "error: '$*' exited $?" >&9
		return 1
	}
	printf '%s\n' "$eo_text" >out.expect
	test_cmp out.expect out.actual
}

# sql QUERY [DB]: run QUERY with the sqlite3 shell (default: $DB).
sql() {
	sqlite3 -batch "${2:-$DB}" "$1"
}

# sql_is QUERY TEXT [DB]: QUERY prints exactly TEXT.
sql_is() {
	sql "$1" "${3:-$DB}" >sql.actual || return 1
	printf '%s\n' "$2" >sql.expect
	test_cmp sql.expect sql.actual
}

# repeat N TEXT: TEXT N times, no newline.
repeat() {
	awk -v n="$1" -v s="$2" 'BEGIN { while (n-- > 0) printf "%s", s }'
}

# wait_for FILE PATTERN: poll, up to a minute, for a line matching PATTERN
# (the event ends the wait; the ceiling only bounds a broken run).
wait_for() {
	wf_i=0
	while [ "$wf_i" -lt 600 ]; do
		grep -q -e "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		wf_i=$((wf_i + 1))
	done
	echo "error: no '$2' in $1 after 60 s" >&9
	return 1
}

# fixture_payload FILE DIR SESSION [TURN]: a captured hook payload (any
# host) re-aimed at project DIR and session SESSION, with TURN as the
# host's turn id (or, for hosts with none, in the prompt and timestamp).
fixture_payload() {
	jq -c --arg dir "$2" --arg sid "$3" --arg turn "${4:-}" '
		if has("cursor_version") then
			.conversation_id = $sid | .session_id = $sid |
			.workspace_roots = [$dir]
		else
			.session_id = $sid | .cwd = $dir
		end |
		if $turn == "" then .
		elif has("cursor_version") then .generation_id = $turn
		elif has("turn_id") then .turn_id = $turn
		elif has("prompt_id") then .prompt_id = $turn
		else .prompt = ("prompt " + $turn) | .timestamp = $turn
		end' "$1"
}
