#!/bin/sh
# Scopes with real git: every worktree and subdirectory of a repository
# shares one scope (the main worktree's root); another repository is
# another scope; outside any repository is the global scope; --project
# DIR picks a scope explicitly.
. "$(dirname "$0")/lib.sh"

GIT_CONFIG_NOSYSTEM=1
GIT_AUTHOR_NAME=pigeon GIT_AUTHOR_EMAIL=pigeon@example.com
GIT_COMMITTER_NAME=pigeon GIT_COMMITTER_EMAIL=pigeon@example.com
export GIT_CONFIG_NOSYSTEM GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL \
	GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL

test_case 'setup: a repository with a linked worktree, another, a plain dir' '
	! git -C "$TEST_DIR" rev-parse --git-dir >/dev/null 2>&1 &&
	git init -q repo &&
	echo hello >repo/file &&
	git -C repo add file &&
	git -C repo commit -q -m init &&
	git -C repo worktree add -q "$TEST_DIR/wt" &&
	test -f wt/.git &&
	mkdir -p repo/sub/dir wt/deep outside &&
	git init -q other &&
	ln -s repo link
'

test_case 'agents and messages made in the main worktree' '
	cd repo &&
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	expect_output "queued #1 for bob" pigeon send --to bob "from main" &&
	sql_is "SELECT root FROM scope" "$TEST_DIR/repo"
'

test_case 'a linked worktree sees them: one scope, rooted at the main one' '
	cd wt &&
	pigeon agents --json | jq -r ".[].name" >names &&
	printf "alice\nbob\n" >expect && test_cmp expect names &&
	pigeon inbox --agent bob >out &&
	grep -q "^#1 from user" out &&
	expect_output "queued #2 for alice" \
		pigeon send --to alice --from bob "from the worktree" &&
	cd deep &&
	pigeon inbox --agent alice | grep -q "^#2 from bob" &&
	sql_is "SELECT root FROM scope" "$TEST_DIR/repo"
'

test_case 'agents names the scope last: its root path, even with a remote' '
	git -C repo remote add origin git@github.com:team/app.git &&
	cd wt/deep &&
	pigeon agents >out &&
	test "$(tail -n 1 out)" = "scope: $TEST_DIR/repo" &&
	# In a database of its own: the cases below count the scopes of $DB.
	cd "$TEST_DIR/outside" &&
	PIGEON_DB=$TEST_DIR/solo.db pigeon agent add solo >/dev/null &&
	PIGEON_DB=$TEST_DIR/solo.db pigeon agents >out &&
	test "$(tail -n 1 out)" = "scope: global"
'

test_case 'a subdirectory and a symlink to the repository see them too' '
	cd repo/sub/dir &&
	pigeon read --agent alice >out &&
	grep -q "^#2 from bob" out &&
	cd "$TEST_DIR/link" &&
	pigeon read --agent bob >out &&
	grep -q "^#1 from user" out &&
	pigeon audit --json >out &&
	jq -e --arg root "$TEST_DIR/repo" "length == 2 and
		all(.[]; .scope == \$root)" out &&
	sql_is "SELECT root FROM scope" "$TEST_DIR/repo"
'

test_case 'another repository is another scope' '
	cd other &&
	expect_output "no agents in scope $TEST_DIR/other" pigeon agents &&
	expect_error 2 "no agent ${SQ}bob${SQ} in scope ${SQ}$TEST_DIR/other${SQ}" \
		pigeon inbox --agent bob &&
	expect_error 2 "no agent" pigeon send --to alice "cross-scope" &&
	expect_output "added bob" pigeon agent add bob &&
	expect_output "queued #3 for bob" pigeon send --to bob "other bob" &&
	expect_output "[]" pigeon audit --json &&
	cd ../repo &&
	expect_output "no messages queued for bob" pigeon inbox --agent bob &&
	sql_is "SELECT root FROM scope ORDER BY id" "$TEST_DIR/repo
$TEST_DIR/other"
'

test_case 'outside any repository: the global scope' '
	cd outside &&
	expect_output "no agents in scope global" pigeon agents &&
	expect_output "added carol" pigeon agent add carol &&
	pigeon send --to carol "global mail" >/dev/null &&
	cd ../repo &&
	expect_error 2 "no agent ${SQ}carol${SQ}" pigeon inbox --agent carol &&
	sql_is "SELECT quote(root) FROM scope ORDER BY id" "${SQ}$TEST_DIR/repo${SQ}
${SQ}$TEST_DIR/other${SQ}
${SQ}${SQ}"
'

test_case '--project DIR selects the scope of DIR' '
	cd outside &&
	pigeon inbox --project "$TEST_DIR/other" --agent bob >out &&
	grep -q "^#3 from user" out &&
	pigeon agents --json --project ../wt | jq -r ".[].name" >names &&
	printf "alice\nbob\n" >expect && test_cmp expect names &&
	expect_output "queued #5 for alice" \
		pigeon send --project ../repo/sub --to alice "by --project" &&
	cd ../repo &&
	pigeon agents --json --project "$TEST_DIR/outside" >out &&
	test "$(jq -r ".[].name" out)" = carol &&
	pigeon inbox --project "$TEST_DIR/outside" --agent carol >out &&
	grep -q "^#4 from user" out &&
	pigeon inbox --agent alice | grep -q "^#5 from user"
'

test_case '--project on a missing directory, or a file, exits 2' '
	expect_error 2 "--project" pigeon agents --project "$TEST_DIR/nowhere" &&
	grep -q "nowhere" err &&
	expect_error 2 "--project" \
		pigeon send --project nowhere --to alice "lost" &&
	expect_error 2 "--project" pigeon agents --project repo/file &&
	sql_is "SELECT count(*) FROM message" 5 &&
	sql_is "SELECT count(*) FROM scope" 3
'

test_case 'a FIFO as a worktree commondir: the CLI answers at once, in the worktree scope' '
	git init -q fifo-main &&
	git -C fifo-main commit -q --allow-empty -m init &&
	git -C fifo-main worktree add -q "$TEST_DIR/fifo-wt" &&
	cd fifo-wt &&
	common=$(sed -n "s/^gitdir: //p" .git)/commondir &&
	rm "$common" && mkfifo "$common" &&
	expect_code 0 timeout 5 pigeon agent add fred >out &&
	grep -q "added fred" out &&
	expect_code 0 timeout 5 pigeon agents --json >out &&
	jq -e "map(.name) == [\"fred\"]" out >/dev/null &&
	sql_is "SELECT root FROM scope WHERE id = (SELECT scope_id FROM agent
		WHERE name = ${SQ}fred${SQ})" "$TEST_DIR/fifo-wt" &&
	fixture_payload "$PGN_SRC/tests/fixtures/payloads/claude/01-SessionStart-startup.json" \
	    "$TEST_DIR/fifo-wt" fifo0 >in.json &&
	t0=$(date +%s%N) &&
	expect_code 0 timeout 5 pigeon-hook claude SessionStart <in.json >out &&
	ms=$(( ($(date +%s%N) - t0) / 1000000 )) &&
	test_note "hook with a FIFO commondir: $ms ms" &&
	test "$ms" -lt 1000 &&
	grep -q "in scope $TEST_DIR/fifo-wt" out &&
	test -p "$common"
'

test_case 'a FIFO as .git: the hook answers at once, no marker there' '
	mkdir -p fifo-git/sub && mkfifo fifo-git/.git &&
	fixture_payload "$PGN_SRC/tests/fixtures/payloads/claude/01-SessionStart-startup.json" \
	    "$TEST_DIR/fifo-git/sub" fifo1 >in.json &&
	t0=$(date +%s%N) &&
	expect_code 0 timeout 5 pigeon-hook claude SessionStart <in.json >out &&
	ms=$(( ($(date +%s%N) - t0) / 1000000 )) &&
	test_note "hook with a FIFO .git: $ms ms" &&
	test "$ms" -lt 1000 &&
	grep -q "in scope global" out &&
	! grep -v "status=ok" "$PIGEON_HOME/hook.log"
'

# Codex's sandbox mounts an empty read-only tmpfs at .git in the working
# directory; it must not hide the repository around it.
mkdir -p masked/.git masked/sub/.git
if mount -t tmpfs -o size=16k,mode=0555 pigeon-t0004 masked/sub/.git 2>/dev/null; then
	MASKED=yes
	# The script's status must reach lib_cleanup past the umount's.
	trap 't0004_rc=$?; umount "$TEST_DIR/masked/sub/.git" 2>/dev/null
	    (exit "$t0004_rc"); lib_cleanup' EXIT
else
	MASKED=
fi
if [ -n "$MASKED" ]; then
	test_case 'an empty mount at .git (Codex sandbox) is no repository: the one above is' '
		(cd masked/sub && pigeon agent add masked-bob >/dev/null) &&
		sql_is "SELECT root FROM scope s JOIN agent a ON a.scope_id = s.id WHERE a.name = ${SQ}masked-bob${SQ}" "$TEST_DIR/masked"
	'
else
	test_count=$((test_count + 1))
	echo "ok $test_count - an empty mount at .git is no repository # SKIP cannot mount tmpfs here"
fi

test_done
