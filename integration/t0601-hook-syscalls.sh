#!/bin/sh
# A prompt that finds no mail writes nothing: no fsync, no file created,
# deleted or renamed (strace -f, file listings with inode numbers). A
# prompt that claims mail a `pigeon send` queued syncs nothing either:
# -wal and -shm persist, the send checkpointed what was in the WAL, and
# the hook only appends (docs/decisions/0021, 0023). Skipped, visibly,
# without a working strace.
. "${PGN_SRC:-$(dirname "$0")/..}/integration/lib.sh"

PROJ=$TEST_DIR/proj
mkdir -p "$PROJ/.git" || exit 2

# test_skip TITLE REASON: a case this environment cannot run.
test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

# prompt ID: a Claude prompt payload for session s1, turn ID.
prompt() {
	printf '{"session_id":"s1","prompt_id":"%s","cwd":"%s","hook_event_name":"UserPromptSubmit","prompt":"go"}\n' "$1" "$PROJ"
}

# files: every file under the state directory, with its inode.
files() {
	find "$PIGEON_HOME" -printf '%i %p\n' | sort
}

# traced ID: one prompt under strace; the trace in ./trace, stdout ./out.
# (LeakSanitizer cannot run under ptrace: off for the traced run only.)
traced() {
	prompt "$1" >in.json &&
	files >before &&
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -qq -o trace -e trace=%file,%desc,fsync,fdatasync \
		pigeon-hook claude UserPromptSubmit <in.json >out &&
	files >after
}

# no_churn: no file appeared, went away or was replaced; every O_CREAT
# open named a file that existed before; no unlink or rename.
no_churn() {
	test_cmp before after &&
	! grep -E '(^|[ ])(unlink|unlinkat|rename|renameat|renameat2|rmdir)\(' trace &&
	sed -n 's/.*open[a-z]*([^"]*"\([^"]*\)".*O_CREAT.*/\1/p' trace |
	while read -r path; do
		grep -q " $path\$" before || {
			echo "error: created $path" >&9
			exit 1
		}
	done
}

fsyncs() {
	grep -cE '(^|[ ])(fsync|fdatasync|sync_file_range|msync)\(' trace
}

# The loader binds every symbol at start (full RELRO), searching the
# shared libraries in the order they are needed: libc first, where all
# but cJSON's are (decision 0154; libm is opened only by SQLite's first
# math call, 0250). A sanitizer's
# runtime comes first instead, and the build leaves the order alone.
needed() {
	readelf -d "$(command -v pigeon-hook)" |
	    sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}
if ! command -v readelf >/dev/null 2>&1; then
	test_skip 'the loader searches libc first' 'readelf is not installed'
elif [ -n "${PGN_SANITIZED:-}" ]; then
	test_skip 'the loader searches libc first' 'a sanitizer build'
else
	test_case 'the loader searches libc first' '
		needed >libs &&
		test "$(head -n 1 libs)" = libc.so.6
	'
fi

if ! command -v strace >/dev/null 2>&1; then
	test_skip 'a prompt that finds no mail: no fsync, no file churn' \
		'strace is not installed'
	test_skip 'a prompt claiming a sent ping: no fsync, no file churn' \
		'strace is not installed'
	test_done
fi
if ! strace -f -qq -o /dev/null true 2>/dev/null; then
	test_skip 'a prompt that finds no mail: no fsync, no file churn' \
		'strace cannot trace here (ptrace refused)'
	test_skip 'a prompt claiming a sent ping: no fsync, no file churn' \
		'strace cannot trace here (ptrace refused)'
	test_done
fi

test_case 'setup: session s1 bound to bob by its first prompt' '
	prompt p0 | PIGEON_AGENT=bob pigeon-hook claude UserPromptSubmit >out &&
	test -s "$DB" && test -e "$DB-wal" && test -e "$DB-shm"
'

test_case 'a prompt that finds no mail: no fsync, no file churn' '
	traced p1 &&
	expect_empty out &&
	test "$(fsyncs)" -eq 0 &&
	no_churn &&
	sql_is "SELECT last_turn FROM session" "UserPromptSubmit:p0"
'

test_case 'a prompt claiming a sent ping: no fsync, no file churn' '
	pigeon send --project "$PROJ" --to bob "a ping" >/dev/null &&
	traced p2 &&
	grep -q "a ping" out &&
	test "$(fsyncs)" -eq 0 &&
	no_churn &&
	sql_is "SELECT count(*) FROM delivery" 1
'

# (The sqlite3 shell above, closing last, deleted -wal and -shm: it does
# not keep them as Pigeon does. One untraced run brings them back.)
test_case 'and the next prompt without mail is quiet again' '
	prompt p3 | pigeon-hook claude UserPromptSubmit >out &&
	traced p4 &&
	expect_empty out &&
	test "$(fsyncs)" -eq 0 &&
	no_churn
'

test_done
