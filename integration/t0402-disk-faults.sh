#!/bin/sh
# A full disk and a read-only database: the hook prints exactly its
# neutral output and exits 0, the CLI prints one line "pigeon: ..." naming
# the database and exits 1, and nothing already stored is lost — once
# space is freed or the file system is writable again, every earlier
# message is there, byte for byte, and is delivered.
#
# The database lives on a small tmpfs mounted for the test (as root, as
# CI runs); a full disk is that tmpfs filled up, read-only is a remount.
# Where mounting is not permitted, read-only falls back to `chattr +i`
# (root) or `chmod a-w` (others) on the database and its directory, and
# the full-disk cases are skipped with a TAP "# SKIP" line.
. "$(dirname "$0")/lib.sh"

HOOK=$PGN_BIN/hookcli/pigeon-hook
FS=$TEST_DIR/fs
DB=$FS/pigeon.db		# what sql() reads
PIGEON_DB=$DB
export PIGEON_DB
mkdir "$FS" "$TEST_DIR/.git" || exit 2

# How this environment freezes the database: mount, chattr or chmod.
mode=
if [ -z "${PGN_T0402_NO_MOUNT:-}" ] &&
    mount -t tmpfs -o size=1m,mode=0700 pigeon-t0402 "$FS" 2>/dev/null; then
	mode=mount
elif [ "$(id -u)" -eq 0 ] && touch "$FS/probe" &&
    chattr +i "$FS/probe" 2>/dev/null; then
	chattr -i "$FS/probe"
	mode=chattr
elif [ "$(id -u)" -ne 0 ]; then
	mode=chmod
fi
rm -f "$FS/probe"

# freeze / thaw: make the database's file system (or its files) read-only
# and writable again.
freeze() {
	case $mode in
	mount) mount -o remount,ro "$FS" ;;
	chattr) chattr +i "$FS" "$FS"/* ;;
	chmod) chmod a-w "$FS" "$FS"/* ;;
	esac
}
thaw() {
	case $mode in
	mount) mount -o remount,rw "$FS" ;;
	chattr) chattr -i "$FS" "$FS"/* ;;
	chmod) chmod u+w "$FS" "$FS"/* ;;
	esac
}

# Undo the mount (or the freeze) before lib.sh removes $TEST_DIR.
t0402_cleanup() {
	t0402_rc=$?
	case $mode in
	mount) umount "$FS" 2>/dev/null || umount -l "$FS" 2>/dev/null ;;
	chattr) chattr -i "$FS" "$FS"/* 2>/dev/null ;;
	chmod) chmod -R u+w "$FS" 2>/dev/null ;;
	esac
	(exit "$t0402_rc")
	lib_cleanup
}
trap t0402_cleanup EXIT

# test_skip TITLE REASON: a case this environment cannot run.
test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

# prompt HOST ID: a prompt payload of HOST for session s-HOST, turn ID.
prompt() {
	case $1 in
	cursor)
		printf '{"conversation_id":"s-cursor","generation_id":"%s",' "$2"
		printf '"hook_event_name":"beforeSubmitPrompt",'
		printf '"cursor_version":"3.12.17","workspace_roots":["%s"],' \
			"$TEST_DIR"
		;;
	claude)
		printf '{"session_id":"s-claude","prompt_id":"%s",' "$2"
		printf '"cwd":"%s","hook_event_name":"UserPromptSubmit",' \
			"$TEST_DIR"
		;;
	esac
	printf '"prompt":"go"}\n'
}

# hooks_stay_neutral TAG: Claude's and Cursor's prompt hooks, as bob,
# print exactly their neutral output, exit 0 and log the failure.
hooks_stay_neutral() {
	prompt claude "$1" >in.json &&
	PIGEON_AGENT=bob expect_code 0 "$HOOK" claude UserPromptSubmit \
		<in.json >out 2>err &&
	expect_empty out && expect_empty err &&
	tail -n 1 "$PIGEON_HOME/hook.log" | grep -F "$DB" >/dev/null &&
	prompt cursor "$1" >in.json &&
	PIGEON_AGENT=bob expect_code 0 "$HOOK" cursor beforeSubmitPrompt \
		<in.json >out 2>err &&
	printf "%s\n" "{\"continue\":true}" >expect &&
	test_cmp expect out && expect_empty err &&
	tail -n 1 "$PIGEON_HOME/hook.log" | grep -F "$DB" >/dev/null
}

# cli_fails: sending and reading fail with one line naming the database.
cli_fails() {
	expect_error 1 "$DB" pigeon send --to bob --from alice "$1" &&
	expect_error 1 "$DB" pigeon read --agent bob
}

# stored: every message, as "id|sender|body|delivered" (the file system
# must be writable: sqlite3 needs its -shm).
stored() {
	sql "SELECT id || '|' || sender || '|' || body || '|' ||
		(delivered_ms IS NOT NULL) FROM message ORDER BY id"
}

test_case "setup (${mode:-no way to freeze}): 40 messages for bob, 30 delivered" '
	for a in bob alice; do
		pigeon agent add $a >/dev/null || return 1
	done &&
	for i in $(seq 30); do
		pigeon send --to bob --from alice "stored $i: $(repeat 20 "ab")" \
			>/dev/null || return 1
	done &&
	pigeon read --agent bob --json >first.json &&
	test "$(jq length first.json)" = 30 &&
	for i in $(seq 10); do
		pigeon send --to bob --from alice "queued $i" >/dev/null ||
			return 1
	done &&
	stored >before &&
	test "$(wc -l <before)" = 40 &&
	sql_is "SELECT count(*) FROM message WHERE delivered_ms IS NULL" 10
'

if [ "$mode" = mount ]; then
test_case 'disk full: hooks neutral, the CLI fails in one line naming the database' '
	{ dd if=/dev/zero of="$FS/filler" bs=4k 2>/dev/null || :; } &&
	test "$(df -P "$FS" | awk "NR == 2 { print \$4 }")" = 0 &&
	hooks_stay_neutral full-1 &&
	cli_fails "lost on a full disk" &&
	rm "$FS/filler" &&
	stored >now &&
	test_cmp before now
'

test_case 'disk full under an open connection: the failed write rolls back' '
	mkfifo keep.fifo &&
	{ sqlite3 -batch "$DB" <keep.fifo >keep.out 2>&1 & } &&
	keeper=$! && bg_track $keeper &&
	exec 7>keep.fifo &&
	echo "SELECT count(*) FROM message;" >&7 &&
	wait_for keep.out "^40$" &&
	{ dd if=/dev/zero of="$FS/filler" bs=4k 2>/dev/null || :; } &&
	hooks_stay_neutral full-2 &&
	i=1 && failed= && : >sent.big &&
	while [ $i -le 50 ] && [ -z "$failed" ]; do
		if pigeon send --to bob --from alice \
		    "big $i: $(repeat 300 "0123456789")" >out 2>err; then
			echo "$i" >>sent.big
		else
			rc=$? && failed=$i &&
			test "$rc" = 1 && expect_empty out &&
			expect_one_error err "$DB" || return 1
		fi
		i=$((i + 1))
	done &&
	test -n "$failed" &&
	test_note "the disk was full at send $failed" &&
	expect_error 1 "$DB" pigeon read --agent bob &&
	exec 7>&- && bg_wait $keeper &&
	rm "$FS/filler" &&
	stored >now &&
	grep -v "|big " now >now.old &&
	test_cmp before now.old &&
	test "$(grep "|big " now | wc -l)" = "$(wc -l <sent.big)" &&
	! grep -q "|big $failed: " now
'
else
test_skip 'disk full: hooks neutral, the CLI fails in one line naming the database' \
	"cannot mount a tmpfs here ($mode): no way to fill a disk"
test_skip 'disk full under an open connection: the failed write rolls back' \
	"cannot mount a tmpfs here ($mode): no way to fill a disk"
fi

test_case 'after the disk was full: sending works again' '
	pigeon send --to bob --from alice "after the full disk" >out &&
	grep -q "^queued #" out
'

if [ -n "$mode" ]; then
test_case "read-only ($mode): hooks neutral, the CLI fails in one line naming the database" '
	stored >before.ro &&
	freeze &&
	hooks_stay_neutral ro-1 &&
	cli_fails "lost on a read-only disk" &&
	thaw &&
	stored >now &&
	test_cmp before.ro now
'
else
test_skip 'read-only: hooks neutral, the CLI fails in one line naming the database' \
	"root without mount or chattr +i here: no way to make the database read-only"
fi

test_case 'writable again: every stored message is intact and delivered once' '
	sql "SELECT id || ${SQ}|${SQ} || body FROM message
		WHERE delivered_ms IS NULL ORDER BY id" >queued &&
	pigeon read --agent bob --json >last.json &&
	jq -r ".[] | \"\(.id)|\(.body)\"" last.json >claimed &&
	test_cmp queued claimed &&
	expect_output "[]" pigeon read --agent bob --json &&
	n=$(sql "SELECT count(*) FROM message") &&
	sql_is "SELECT count(*), count(DISTINCT message_id) FROM delivery" \
		"$n|$n" &&
	expect_output "audit chain intact: $n deliveries verified" \
		pigeon audit verify &&
	sql_is "PRAGMA integrity_check" ok
'

test_done
