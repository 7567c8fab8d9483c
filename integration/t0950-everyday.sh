#!/bin/sh
# Everyday use (issue 24, product.md §17): what a new user meets in the
# first hour. Each case is one item the review reproduced.
. "$(dirname "$0")/lib.sh"

# --- global options before the command, as in git and docker ---------------

test_case 'setup: agents alice and bob in a project, carol elsewhere' '
	mkdir proj other &&
	git -C proj init -q &&
	pigeon --project proj agent add alice >/dev/null &&
	pigeon agent add --project proj bob >/dev/null &&
	pigeon --db "$TEST_DIR/other.db" agent add carol >/dev/null
'

test_case 'pigeon --json agents is pigeon agents --json' '
	(cd proj && pigeon agents --json) >a &&
	(cd proj && pigeon --json agents) >b &&
	test_cmp a b &&
	grep -q "\"name\":\"alice\"" b
'

test_case 'pigeon --db X agents reads X' '
	pigeon --db "$TEST_DIR/other.db" agents --names >out &&
	test "$(cat out)" = carol &&
	pigeon --db="$TEST_DIR/other.db" --json agents --names >out &&
	test "$(cat out)" = "[\"carol\"]"
'

test_case 'pigeon --project DIR send sends in the scope of DIR' '
	pigeon --project proj send --to bob --from alice "hello there" >out &&
	pigeon read --project proj --agent bob >out &&
	grep -q "hello there" out
'

test_case 'an option after the command wins over the same one before it' '
	pigeon --db "$TEST_DIR/nope/x.db" agents --db "$TEST_DIR/other.db" \
	    --names >out &&
	test "$(cat out)" = carol
'

test_case 'global options and --help, --version' '
	pigeon --json --help >out &&
	grep -q "^usage: pigeon \[COMMON OPTIONS\] COMMAND" out &&
	pigeon --json --version >out &&
	grep -q "^pigeon " out &&
	pigeon --json help agents >out &&
	grep -q "^usage: pigeon agents" out
'

test_case 'another option before the command is one usage line' '
	expect_error 2 "unknown option ${SQ}--to${SQ} before the command" \
	    pigeon --to bob send hi &&
	expect_error 2 "${SQ}--db${SQ} needs a value" pigeon --db &&
	expect_error 2 "a command must follow ${SQ}--json${SQ}" pigeon --json &&
	expect_error 2 "--color ${SQ}pink${SQ}" pigeon --color pink agents
'

# --- watch --db MISSING names the path first -------------------------------

test_case 'watch --db MISSING off a terminal names the path, makes nothing' '
	expect_error 1 "no database at ${SQ}$TEST_DIR/none.db${SQ}" \
	    pigeon watch --db "$TEST_DIR/none.db" &&
	test ! -e none.db &&
	expect_error 1 "none.db" pigeon --db "$TEST_DIR/none.db" watch &&
	test ! -e none.db
'

test_case 'watch off a terminal with a database: the terminal line' '
	expect_error 2 "watch draws on a terminal" \
	    pigeon watch --db "$TEST_DIR/other.db"
'

# --- tell the person what happens ------------------------------------------

# on_tty INPUT CMD: CMD with standard input on a terminal (script(1)),
# INPUT typed into it; its stderr in ./err, its exit code in ./rc.
on_tty() {
	ot_in=$1
	shift
	printf "%s" "$ot_in" |
		script -qec "$* 2>err; echo \$? >rc" /dev/null >tty.out
}

test_case 'pigeon-hook by hand on a terminal prints its usage, exit 1 (2 blocks Claude)' '
	on_tty "" pigeon-hook claude UserPromptSubmit &&
	test "$(cat rc)" = 1 &&
	grep -q "^pigeon-hook: hosts run this with their JSON payload" err &&
	grep -q "^usage: pigeon-hook \[HOST EVENT\]" err &&
	on_tty "" pigeon-hook &&
	test "$(cat rc)" = 1 &&
	test ! -e "$PIGEON_HOME/hook.log" || ! grep -q claude "$PIGEON_HOME/hook.log"
'

test_case 'pigeon-hook from a pipe is unchanged: exit 0, no usage' '
	echo "{}" | pigeon-hook claude UserPromptSubmit >out 2>err &&
	expect_empty err
'

test_case 'send with no text on a terminal says it reads standard input' '
	on_tty "typed on the terminal
$(printf "\004")" pigeon send --project proj --to bob --from alice &&
	test "$(cat rc)" = 0 &&
	grep -q "^pigeon: reading the text from standard input: type it, then Ctrl-D" err &&
	pigeon read --project proj --agent bob >out &&
	grep -q "typed on the terminal" out
'

test_case 'send from a pipe says nothing of standard input' '
	echo "piped" | pigeon send --project proj --to bob --from alice >out 2>err &&
	expect_empty err
'

# --- one identity per session ----------------------------------------------

test_case 'instructions block and a hook naming another agent: the block says the hook wins' '
	pigeon install instructions --project proj --file proj/AGENTS.md \
	    --agent windsurf >out &&
	grep -q "that name wins: use it instead of \"windsurf\"" proj/AGENTS.md &&
	jq --arg d "$TEST_DIR/proj" ".cwd = \$d | .session_id = \"cx1\"" \
	    "$PGN_SRC/tests/fixtures/payloads/codex/01-SessionStart-startup.json" >in.json &&
	PIGEON_AGENT=builder pigeon-hook codex SessionStart <in.json >out &&
	jq -r .hookSpecificOutput.additionalContext out >ctx &&
	head -n 1 ctx | grep -q "^Pigeon: you are agent \"builder\"" &&
	grep -q "If Pigeon has already told you in this session \"Pigeon: you are agent\" another name" proj/AGENTS.md
'

# --- generated agents do not pile up ---------------------------------------

test_case 'agent prune: a generated agent idle past AGE is retired, others stay' '
	mkdir pr && git -C pr init -q &&
	pigeon --project pr agent add keeper >/dev/null &&
	jq --arg d "$TEST_DIR/pr" ".cwd = \$d | .session_id = \"gen1\"" \
	    "$PGN_SRC/tests/fixtures/payloads/claude/01-SessionStart-startup.json" >in.json &&
	pigeon-hook claude SessionStart <in.json >/dev/null &&
	g=$(pigeon --project pr agents --names | grep -v keeper) &&
	test -n "$g" &&
	pigeon --project pr lease take --agent "$g" src/ >/dev/null &&
	expect_output "nothing to prune" pigeon --project pr agent prune &&
	expect_output "would retire $g" \
	    pigeon --project pr agent prune --dry-run --older-than 0s &&
	pigeon --project pr agents --names | grep -qx "$g" &&
	expect_output "retired $g" pigeon --project pr agent prune --older-than 0s &&
	! pigeon --project pr agents --names | grep -qx "$g" &&
	pigeon --project pr agents --names | grep -qx keeper &&
	pigeon --project pr journal "$g" >j &&
	grep -q "released ${SQ}src/${SQ}" j &&
	grep -q "pruned: a generated agent with nothing queued" j &&
	expect_output "[]" pigeon --project pr --json agent prune --older-than 0s
'

# make_generated DIR ID: a generated agent made by a Claude session of DIR,
# seen last ten days ago; its name on stdout.
make_generated() {
	jq --arg d "$TEST_DIR/$1" ".cwd = \$d | .session_id = \"$2\"" \
	    "$PGN_SRC/tests/fixtures/payloads/claude/01-SessionStart-startup.json" \
	    >"$TEST_DIR/$2.json" &&
	pigeon-hook claude SessionStart <"$TEST_DIR/$2.json" >/dev/null &&
	mg_old=$(( ($(date +%s) - 10 * 86400) * 1000 )) &&
	sqlite3 "$DB" "UPDATE agent SET created_ms = $mg_old,
	    last_seen_ms = $mg_old WHERE removed_ms IS NULL AND id IN
	    (SELECT agent_id FROM session WHERE key = ${SQ}claude:$2${SQ});
	    UPDATE session SET last_seen_ms = $mg_old
	    WHERE key = ${SQ}claude:$2${SQ};" &&
	sqlite3 "$DB" "SELECT a.name FROM agent a JOIN session s ON
	    s.agent_id = a.id WHERE s.key = ${SQ}claude:$2${SQ}"
}

test_case 'an idle generated agent is retired by agents or send, once a day' '
	mkdir ap && git -C ap init -q &&
	pigeon --project ap agent add stays >/dev/null &&
	g=$(make_generated ap auto1) && test -n "$g" &&
	pigeon --project ap agents >out 2>err &&
	grep -qx "pigeon: retired 1 agent made for unnamed sessions, idle for 7 days (agents.retireAfterDays): $g" err &&
	! grep -q "$g" out && grep -q stays out &&
	pigeon --project ap journal "$g" | grep -q "pruned: a generated agent" &&
	h=$(make_generated ap auto2) && test -n "$h" &&
	pigeon --project ap send --to stays --from x "hi" >out 2>err &&
	expect_empty err &&
	pigeon --project ap agents --names | grep -qx "$h" &&
	touch -d "2 days ago" "$PIGEON_HOME"/pruned-* &&
	pigeon --project ap send --to stays --from x "hi again" >out 2>err &&
	grep -q "^pigeon: retired 1 agent .*: $h$" err &&
	! pigeon --project ap agents --names | grep -qx "$h"
'

test_case 'agents.retireAfterDays 0 keeps them; a bad value keeps the default' '
	mkdir ak && git -C ak init -q && mkdir ak/.pigeon &&
	echo "{\"agents\": {\"retireAfterDays\": 0}}" >ak/.pigeon/config.json &&
	g=$(make_generated ak keep1) && test -n "$g" &&
	pigeon --project ak agents >out 2>err &&
	expect_empty err && grep -q "$g" out &&
	echo "{\"agents\": {\"retireAfterDays\": 30}}" >ak/.pigeon/config.json &&
	touch -d "2 days ago" "$PIGEON_HOME"/pruned-* &&
	pigeon --project ak agents >out 2>err &&
	expect_empty err && grep -q "$g" out &&
	echo "{\"agents\": {\"retireAfterDays\": 9}}" >ak/.pigeon/config.json &&
	touch -d "2 days ago" "$PIGEON_HOME"/pruned-* &&
	pigeon --project ak agents >out 2>err &&
	grep -q "idle for 9 days (agents.retireAfterDays): $g$" err
'

test_case 'agent rm takes several names; queued mail refuses one, the rest go' '
	pigeon --project pr agent add a1 >/dev/null &&
	pigeon --project pr agent add a2 >/dev/null &&
	pigeon --project pr agent add a3 >/dev/null &&
	pigeon --project pr lease take --agent a1 docs/ >/dev/null &&
	pigeon --project pr send --to a2 --from a3 "wait for me" >/dev/null &&
	expect_code 2 pigeon --project pr agent rm a1 a2 a3 >out 2>err &&
	printf "removed a1 (released 1 lease)\nremoved a3\n" >expect &&
	test_cmp expect out &&
	expect_one_error err "agent ${SQ}a2${SQ} still has 1 queued message: read them first" &&
	pigeon --project pr agents --names >names &&
	grep -qx a2 names && ! grep -qx a1 names && ! grep -qx a3 names
'

test_case 'agent rm and prune: bad input is one usage line, nothing removed' '
	pigeon --project pr agent add b1 >/dev/null &&
	expect_error 2 "agent rm takes one NAME or more" pigeon --project pr agent rm &&
	expect_error 2 "agent ${SQ}-x${SQ}" pigeon --project pr agent rm b1 -- -x &&
	pigeon --project pr agents --names | grep -qx b1 &&
	expect_error 2 "--older-than ${SQ}soon${SQ}" pigeon --project pr agent prune --older-than soon &&
	expect_error 2 "are prune${SQ}s" pigeon --project pr agent rm b1 --dry-run &&
	pigeon --project pr agents --names | grep -qx b1
'

# --- scope surprises are explained ------------------------------------------

test_case 'an agent of another scope: the error names it and how to get there' '
	expect_error 2 "no agent ${SQ}bob${SQ} in scope ${SQ}global${SQ} (known: none). It is an agent in scope ${SQ}$TEST_DIR/proj${SQ}: run pigeon there, or pass --project $TEST_DIR/proj." \
	    pigeon send --to bob --from me hi &&
	expect_error 2 "It is an agent in scope ${SQ}$TEST_DIR/proj${SQ}" \
	    pigeon read --agent bob &&
	pigeon --project proj send --to bob --from me "found it" >/dev/null
'

# --- removing Pigeon leaves nothing behind ---------------------------------

test_case 'install records each registration; uninstall --all removes them all' '
	mkdir rm-proj &&
	pigeon install claude >/dev/null &&
	pigeon install codex --project rm-proj >/dev/null &&
	pigeon install instructions --file rm-proj/AGENTS.md --agent w >/dev/null &&
	printf "instructions\t%s\nclaude\t-\ncodex\t%s\ninstructions\t%s\n" \
	    "$TEST_DIR/proj/AGENTS.md" "$TEST_DIR/rm-proj" \
	    "$TEST_DIR/rm-proj/AGENTS.md" >want &&
	test_cmp want "$PIGEON_HOME/installs" &&
	test "$(stat -c %a "$PIGEON_HOME/installs")" = 600 &&
	pigeon uninstall --all --dry-run >out &&
	grep -q "^would remove Pigeon${SQ}s hooks for codex from $TEST_DIR/rm-proj/.codex/hooks.json" out &&
	test -e "$HOME/.claude/settings.json" &&
	pigeon uninstall --all >out &&
	grep -q "^removed Pigeon${SQ}s hooks for claude" out &&
	grep -q "^removed Pigeon${SQ}s hooks for codex" out &&
	grep -q "^removed Pigeon${SQ}s instructions" out &&
	grep -q "^nothing to remove in .*gemini.*: Pigeon${SQ}s hooks for gemini were not there" out &&
	test ! -e "$HOME/.claude/settings.json" &&
	test ! -e rm-proj/.codex/hooks.json &&
	test ! -e rm-proj/AGENTS.md &&
	test ! -s "$PIGEON_HOME/installs" &&
	expect_error 2 "--all takes no HOST" pigeon uninstall --all claude
'

test_case 'a hook binary gone: doctor says how to take the registration away' '
	mkdir gone && cp "$PGN_BIN/hookcli/pigeon-hook" gone/ &&
	PIGEON_HOOK=$TEST_DIR/gone/pigeon-hook pigeon install claude >/dev/null &&
	rm gone/pigeon-hook &&
	pigeon doctor >out 2>&1 || :
	grep -q "is not an executable file, so Claude Code${SQ}s Pigeon hooks do nothing (each checks for it first): take the registration away (pigeon uninstall claude, or pigeon uninstall --all), or put pigeon-hook back there" out &&
	pigeon uninstall --all >/dev/null &&
	test ! -e "$HOME/.claude/settings.json"
'

# The guarded command (decision 0225), as the host runs it: sh -c.
test_case 'a guarded hook whose binary is gone is silent: exit 0, no output' '
	mkdir -p g1 && cp "$PGN_BIN/hookcli/pigeon-hook" g1/ &&
	PIGEON_HOOK=$TEST_DIR/g1/pigeon-hook pigeon install claude \
	    --no-mcp >/dev/null &&
	cmd=$(jq -r ".hooks.UserPromptSubmit[0].hooks[0].command" \
	    "$HOME/.claude/settings.json") &&
	test "$cmd" = "[ -x $TEST_DIR/g1/pigeon-hook ] || exit 0; exec $TEST_DIR/g1/pigeon-hook claude UserPromptSubmit" &&
	rm g1/pigeon-hook &&
	echo "{\"session_id\":\"s1\",\"cwd\":\"$TEST_DIR\"}" >payload &&
	sh -c "$cmd" <payload >out 2>err &&
	test ! -s out && test ! -s err &&
	pigeon uninstall claude >/dev/null
'

test_case 'a guarded hook passes the hook${SQ}s output and exit code through' '
	mkdir -p g2 &&
	printf "#!/bin/sh\necho \"out \$*\"\necho err >&2\nexit 2\n" \
	    >g2/pigeon-hook && chmod +x g2/pigeon-hook &&
	PIGEON_HOOK=$TEST_DIR/g2/pigeon-hook pigeon install claude \
	    --no-mcp >/dev/null &&
	cmd=$(jq -r ".hooks.Stop[0].hooks[0].command" \
	    "$HOME/.claude/settings.json") &&
	{ sh -c "$cmd" </dev/null >out 2>err; rc=$?; } &&
	test "$rc" = 2 &&
	test "$(cat out)" = "out claude Stop" &&
	test "$(cat err)" = err &&
	cp "$PGN_BIN/hookcli/pigeon-hook" g2/pigeon-hook &&
	echo "{\"session_id\":\"s2\",\"cwd\":\"$TEST_DIR\"}" >payload &&
	sh -c "$(jq -r ".hooks.SessionStart[0].hooks[0].command" \
	    "$HOME/.claude/settings.json")" <payload >got &&
	jq -r .hookSpecificOutput.additionalContext got | grep -q "you are agent" &&
	pigeon uninstall claude >/dev/null
'

test_case 'entries of an older Pigeon (bare command) are found, updated and removed' '
	mkdir -p "$HOME/.claude" &&
	printf "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"/gone/pigeon-hook claude Stop\",\"timeout\":5}]}]}}\n" \
	    >"$HOME/.claude/settings.json" &&
	pigeon doctor >out 2>&1 || :
	grep -q "the hook ${SQ}/gone/pigeon-hook${SQ} is not an executable file, so Claude Code fails on every event: take the registration away (pigeon uninstall claude, or pigeon uninstall --all)" out &&
	pigeon install claude --no-mcp >/dev/null &&
	test "$(grep -c "pigeon-hook claude Stop" "$HOME/.claude/settings.json")" = 1 &&
	! grep -q /gone/ "$HOME/.claude/settings.json" &&
	jq -r ".hooks.Stop[0].hooks[0].command" "$HOME/.claude/settings.json" |
	    grep -q "^\[ -x .* \] || exit 0; exec .*pigeon-hook claude Stop$" &&
	printf "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"/gone/pigeon-hook claude Stop\",\"timeout\":5}]}]}}\n" \
	    >"$HOME/.claude/settings.json" &&
	pigeon uninstall claude >out &&
	grep -q "^removed Pigeon${SQ}s hooks for claude" out &&
	test ! -e "$HOME/.claude/settings.json"
'

# --- a scope whose key changed is moved -------------------------------------

test_case 'scope move: the old key'"'"'s agents and mail follow to this scope' '
	mkdir sm1 sm2 sm3 && git -C sm1 init -q && git -C sm2 init -q &&
	git -C sm3 init -q &&
	pigeon --project sm1 agent add rev >/dev/null &&
	pigeon --project sm1 send --to rev --from me "still here" >/dev/null &&
	expect_output "moved scope ${SQ}$TEST_DIR/sm1${SQ} to ${SQ}$TEST_DIR/sm2${SQ}" \
	    pigeon --project sm2 scope move "$TEST_DIR/sm1" &&
	pigeon --project sm2 read --agent rev >out &&
	grep -q "still here" out &&
	expect_error 2 "no scope ${SQ}$TEST_DIR/sm1${SQ} in this database" \
	    pigeon --project sm2 scope move "$TEST_DIR/sm1" &&
	pigeon --project sm3 agent add other >/dev/null &&
	expect_error 2 "scope ${SQ}$TEST_DIR/sm3${SQ} already exists" \
	    pigeon --project sm3 scope move "$TEST_DIR/sm2" &&
	pigeon --project sm2 agents --names | grep -qx rev &&
	expect_error 2 "the global scope is not moved" \
	    pigeon scope move "$TEST_DIR/sm2" &&
	expect_error 2 "say move" pigeon scope &&
	expect_error 2 "scope move takes OLD" pigeon scope move
'

# --- help, man pages and docs agree with the binary -------------------------

test_case 'doctor with PIGEON_HOME a file names it, and does not blame libpq' '
	pigeon doctor >good 2>&1 || :
	: >afile &&
	PIGEON_HOME=$TEST_DIR/afile pigeon doctor >out 2>&1 || :
	grep "^  backends: " good >want &&
	grep "^  backends: " out >got &&
	test_cmp want got &&
	grep -q "state home ${SQ}$TEST_DIR/afile${SQ}: Not a directory" out
'

test_case '--db is created where the help says, and not by watch or doctor' '
	pigeon agents --names --db "$TEST_DIR/n1.db" >/dev/null 2>&1 || :
	test ! -e n1.db &&
	pigeon doctor --db "$TEST_DIR/n2.db" >/dev/null 2>&1 || :
	test ! -e n2.db &&
	pigeon agents --db "$TEST_DIR/n3.db" >/dev/null &&
	test -e n3.db &&
	pigeon agents --help >h &&
	tr -s " \n" "  " <h | grep -q "a missing file is created, not its directory, except by watch, doctor and agents --names, which never create one"
'

test_case 'the install errors docs/cli.md quotes are the ones install prints' '
	expect_error 2 "" pigeon install &&
	grep -qF -e "    $(cat err)    (exit 2)" "$PGN_SRC/docs/cli.md" &&
	expect_error 2 "" pigeon install vim &&
	grep -qF -e "    $(cat err)    (exit 2)" "$PGN_SRC/docs/cli.md"
'

# --- the README's first ten minutes (decision 0187) ------------------------
# The README's commands and flow, the hosts' hooks driven with payloads
# captured from the real Claude Code and Codex (tests/fixtures/payloads).

test_case 'the README'"'"'s first ten minutes' '
	mkdir -p ten/home ten/app && git -C ten/app init -q &&
	(
	HOME=$TEST_DIR/ten/home && PIGEON_HOME=$TEST_DIR/ten/state &&
	export HOME PIGEON_HOME &&
	cd ten/app &&
	pigeon install claude >/dev/null && pigeon install codex >/dev/null &&
	pigeon doctor >doctor.out 2>&1 || :
	grep -q "claude   user .*installed" doctor.out &&
	grep -q "codex    user .*installed" doctor.out &&
	FIX=$PGN_SRC/tests/fixtures/payloads &&
	jq --arg d "$PWD" ".cwd = \$d | .session_id = \"rv1\"" \
	    "$FIX/claude/01-SessionStart-startup.json" >rv.json &&
	PIGEON_AGENT=reviewer pigeon-hook claude SessionStart <rv.json >out &&
	jq -r .hookSpecificOutput.additionalContext out >intro &&
	grep -q "^Pigeon: you are agent \"reviewer\"" intro &&
	grep -q "^An agent not here yet: add --create, and it gets the message when its first session starts.\$" intro &&
	expect_code 2 pigeon send --to builder --from reviewer "the API moved to v2" 2>err &&
	grep -q -- "--create queues it" err &&
	pigeon send --create --to builder --from reviewer "the API moved to v2" >sent &&
	grep -q "^queued #1 for builder" sent &&
	jq --arg d "$PWD" ".cwd = \$d | .session_id = \"bd1\"" \
	    "$FIX/codex/01-SessionStart-startup.json" >bd.json &&
	PIGEON_AGENT=builder pigeon-hook codex SessionStart <bd.json >out &&
	jq -r .hookSpecificOutput.additionalContext out >ctx &&
	grep -q "the API moved to v2" ctx &&
	pigeon send --to reviewer --from builder --reply-to 1 "done, on v2" >/dev/null &&
	jq --arg d "$PWD" ".cwd = \$d | .session_id = \"rv1\" | .prompt_id = \"p9\"" \
	    "$FIX/claude/02-UserPromptSubmit-prompt.json" >rp.json &&
	PIGEON_AGENT=reviewer pigeon-hook claude UserPromptSubmit <rp.json >out &&
	jq -r .hookSpecificOutput.additionalContext out | grep -q "done, on v2" &&
	pigeon audit >audit &&
	test "$(grep -c "^#" audit)" -ge 2 &&
	pigeon audit verify >/dev/null &&
	pigeon journal builder >j &&
	grep -q "created" j && grep -q "delivered" j && grep -q "sent" j
	) >ten.out 2>&1 || { cat ten.out >&9; return 1; }
'

test_done
