#!/bin/sh
# pigeon doctor: where hooks are installed and whether they run this
# pigeon-hook, Codex trust, database health, the hook log, warnings, and
# exit 1 for a broken database or host config.
. "$(dirname "$0")/lib.sh"

HOOK=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook
unset CLAUDE_CONFIG_DIR CODEX_HOME PIGEON_HOOK
mkdir -p "$TEST_DIR/proj/.git" || exit 2

test_case 'a fresh machine: nothing installed, no database yet, exit 0' '
	expect_code 0 pigeon doctor >out 2>err &&
	grep -q "^  cursor   user    $HOME/.cursor/hooks.json: not installed (no file)$" out &&
	# One column per field, as wide as its longest host name (opencode).
	grep -q "^  opencode user    $HOME/.config/opencode/plugin/pigeon.js: " out &&
	grep -q "^  copilot  user    $HOME/.copilot/hooks/pigeon.json: " out &&
	grep -q "no database yet" out &&
	test ! -e "$DB"
'

test_case 'installed hooks point at this pigeon-hook' '
	pigeon install cursor >/dev/null &&
	(cd proj && pigeon install claude --project . >/dev/null) &&
	(cd proj && expect_code 0 pigeon doctor >../out) &&
	grep -q "cursor  *user .*installed (sessionStart, beforeSubmitPrompt, postToolUse, stop, preToolUse) -> $HOOK" out &&
	grep -q "claude  *project $TEST_DIR/proj/.claude/settings.json: installed (SessionStart, UserPromptSubmit, PostToolUse, Stop, PreToolUse) -> $HOOK" out &&
	grep -q "installed for both Claude Code and Cursor" out
'

test_case 'doctor says when Claude settings hold or refuse the doorbell' '
	pigeon install claude >/dev/null &&
	cfg=$HOME/.claude/settings.json && cp "$cfg" doorbell.orig &&
	pigeon doctor --json >out.json &&
	jq -e "[.hooks[] | select(.host == \"claude\" and .level == \"user\")][0].doorbell == \"rings\"" out.json >/dev/null &&
	jq ". + {crossSessionInbound: \"refuse\"}" doorbell.orig >"$cfg" &&
	pigeon doctor >out &&
	grep -q "^  claude .*installed (.*, doorbell refused (crossSessionInbound is \"refuse\")$" out &&
	jq ". + {crossSessionInbound: \"hold\"}" doorbell.orig >"$cfg" &&
	pigeon doctor >out && grep -q "doorbell held until a person releases it" out &&
	jq ".permissions.defaultMode = \"bypassPermissions\"" doorbell.orig >"$cfg" &&
	pigeon doctor >out && grep -q "doorbell held in bypass-permissions mode" out &&
	jq ".permissions.defaultMode = \"bypassPermissions\" | .crossSessionInbound = \"accept\"" doorbell.orig >"$cfg" &&
	pigeon doctor >out && ! grep -q "doorbell" out &&
	cp doorbell.orig "$cfg" && pigeon uninstall claude >/dev/null
'

test_case 'doctor says whether the Codex doorbell finds codex on PATH' '
	pigeon install codex >/dev/null &&
	mkdir -p cbin &&
	PATH=/usr/bin:/bin "$PIGEON_BIN" doctor --json >out.json &&
	test "$(jq -r ".hooks[] | select(.host==\"codex\" and .level==\"user\") | .doorbell" out.json)" = \
		"not rung: its command is not on PATH (a send finds it there)" &&
	printf "#!/bin/sh\nexit 0\n" >cbin/codex && chmod +x cbin/codex &&
	PATH=$TEST_DIR/cbin:/usr/bin:/bin "$PIGEON_BIN" doctor --json >out.json &&
	test "$(jq -r ".hooks[] | select(.host==\"codex\" and .level==\"user\") | .doorbell" out.json)" = rings &&
	pigeon uninstall codex >/dev/null
'

test_case 'codex hooks are reported untrusted until Codex records trust' '
	pigeon install codex >/dev/null &&
	pigeon doctor --json >out.json &&
	test "$(jq -r ".hooks[] | select(.host==\"codex\" and .level==\"user\") | .trusted" out.json)" = false &&
	jq -r ".warnings[]" out.json | grep -q "not trusted yet" &&
	printf "[hooks.state.\"%s:user_prompt_submit:0:0\"]\ntrusted_hash = \"sha256:00\"\n" \
	    "$HOME/.codex/hooks.json" >"$HOME/.codex/config.toml" &&
	pigeon doctor --json >out.json &&
	test "$(jq -r ".hooks[] | select(.host==\"codex\" and .level==\"user\") | .trusted" out.json)" = true &&
	! jq -r ".warnings[]" out.json | grep -q "not trusted"
'

test_case 'a hook that no longer exists is a warning' '
	mkdir -p "$HOME/.gemini" &&
	printf "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"/gone/pigeon-hook gemini SessionStart\"}]}]}}\n" \
	    >"$HOME/.gemini/settings.json" &&
	pigeon doctor >out &&
	grep -q "/gone/pigeon-hook. is not an executable file" out &&
	grep -q "gemini/settings.json: gemini.s event BeforeAgent has no Pigeon hook: run pigeon install gemini" out
'

test_case 'database health and the hook log tail' '
	pigeon agent add bob >/dev/null &&
	pigeon send --to bob hello >/dev/null &&
	echo garbage | pigeon-hook cursor beforeSubmitPrompt >/dev/null;
	pigeon doctor --json >out.json &&
	test "$(jq -r .database.integrity out.json)" = ok &&
	test "$(jq -r .database.schema_version out.json)" = "$(jq -r .database.schema_supported out.json)" &&
	test "$(jq -r .database.queued out.json)" = 1 &&
	test "$(jq -r .database.agents out.json)" = 1 &&
	jq -r ".hook_log.tail[]" out.json | grep -q "status=bad-input" &&
	test "$(jq -r .ok out.json)" = true
' 

test_case 'the project config: unknown keys and a withdrawn provider are reported' '
	mkdir -p proj/.pigeon proj/scripts &&
	printf "#!/bin/sh\necho {}\n" >proj/scripts/ctx && chmod 755 proj/scripts/ctx &&
	printf "{\"instructions\":{\"promptReminder\":\"be brief\"},\"promptContext\":{\"command\":[\"scripts/ctx\"]},\"colour\":1}\n" \
	    >proj/.pigeon/config.json &&
	(cd proj && pigeon doctor --json >../out.json) &&
	test "$(jq -r .project.reminder out.json)" = true &&
	test "$(jq -r .project.unknown_keys out.json)" = colour &&
	test "$(jq -r .project.provider_allowed out.json)" = false &&
	(cd proj && pigeon provider allow >/dev/null) &&
	(cd proj && pigeon doctor --json >../out.json) &&
	test "$(jq -r .project.provider_allowed out.json)" = true &&
	flip_byte "$PIGEON_HOME/provider.state" 40 &&
	(cd proj && pigeon doctor --json >../out.json) &&
	test "$(jq -r .project.provider_allowed out.json)" = false &&
	jq -r ".warnings[]" out.json | grep -q "failed to authenticate"
'

test_case 'a host config that is not JSON makes doctor exit 1' '
	cp "$HOME/.gemini/settings.json" gemini.keep &&
	echo "{nope" >"$HOME/.gemini/settings.json" &&
	expect_code 1 pigeon doctor >out &&
	grep -q "gemini  *user .*is not valid JSON" out &&
	cp gemini.keep "$HOME/.gemini/settings.json"
'

test_case 'a corrupt database makes doctor exit 1 and is left as it was' '
	head -c 8192 /dev/urandom >bad.db && cp bad.db bad.keep &&
	expect_code 1 pigeon doctor --db bad.db >out &&
	grep -q "bad.db" out && grep -q "not a database" out &&
	cmp bad.db bad.keep
'

test_case 'loose state files: doctor says what pigeon fixed and what to run' '
	pigeon agents >/dev/null &&
	: >>"$PIGEON_HOME/hook.log" &&
	chmod 755 "$PIGEON_HOME" &&
	chmod 644 "$DB" "$DB-wal" "$PIGEON_HOME/hook.log" &&
	pigeon doctor >out &&
	grep -q "^  - $PIGEON_HOME was mode 755 (group or others could read it): pigeon made it 700\$" out &&
	grep -q "^  - $DB was mode 644 (group or others could read it): pigeon made it 600\$" out &&
	grep -q "^  - $DB-wal was mode 644 .*: pigeon made it 600\$" out &&
	grep -q "^  - $PIGEON_HOME/hook.log is mode 644, readable by group or others: run chmod 600 ${SQ}$PIGEON_HOME/hook.log${SQ}\$" out &&
	test "$(stat -c %a "$PIGEON_HOME" "$DB" "$DB-wal")" = "700
600
600" &&
	chmod 600 "$PIGEON_HOME/hook.log" &&
	pigeon doctor --json >out.json &&
	! jq -r ".warnings[]" out.json | grep -q "mode 6\|mode 7"
'

test_case 'a symlinked state file is flagged; the database behind one is refused' '
	mv "$DB" real.db && ln -s "$TEST_DIR/real.db" "$DB" &&
	expect_code 1 pigeon doctor >out &&
	grep -q "$DB is a symbolic link, which pigeon does not follow" out &&
	grep -q "database file ${SQ}$DB${SQ} is a symbolic link" out &&
	rm "$DB" && mv real.db "$DB" &&
	expect_code 0 pigeon doctor >out
'

test_case 'a FIFO as hook.log or Codex config does not hang doctor' '
	mv "$PIGEON_HOME/hook.log" hook.keep && mkfifo "$PIGEON_HOME/hook.log" &&
	mv "$HOME/.codex/config.toml" toml.keep && mkfifo "$HOME/.codex/config.toml" &&
	expect_code 0 timeout 5 pigeon doctor >out &&
	rm "$PIGEON_HOME/hook.log" "$HOME/.codex/config.toml" &&
	mv hook.keep "$PIGEON_HOME/hook.log" && mv toml.keep "$HOME/.codex/config.toml"
'

test_done
