#!/bin/sh
# pigeon install / uninstall against real files under a temporary HOME:
# the config path of each host (user, --project, CLAUDE_CONFIG_DIR,
# CODEX_HOME), idempotency, --dry-run, the exact inverse on uninstall
# (an empty config.toml stays), and the refusals (invalid JSON, a
# config.toml that is not TOML: duplicate keys, bare words, lone CRs;
# unknown host, bad options).
. "$(dirname "$0")/lib.sh"

mkdir "$TEST_DIR/bin" "$TEST_DIR/proj" || exit 2
HOOK=$TEST_DIR/bin/pigeon-hook
printf '#!/bin/sh\nexit 0\n' >"$HOOK" && chmod 755 "$HOOK" || exit 2
PIGEON_HOOK=$HOOK
export PIGEON_HOOK
unset CLAUDE_CONFIG_DIR CODEX_HOME
CR=$(printf '\r')

# cfg HOST: the user config file of HOST under $HOME.
cfg() {
	case $1 in
	cursor) echo "$HOME/.cursor/hooks.json" ;;
	claude) echo "$HOME/.claude/settings.json" ;;
	codex) echo "$HOME/.codex/hooks.json" ;;
	gemini) echo "$HOME/.gemini/settings.json" ;;
	esac
}
# events HOST: the two event names Pigeon registers.
events() {
	case $1 in
	cursor) echo "sessionStart beforeSubmitPrompt" ;;
	claude | codex) echo "SessionStart UserPromptSubmit" ;;
	gemini) echo "SessionStart BeforeAgent" ;;
	esac
}
# has_hooks FILE HOST: one Pigeon command per event, both events.
has_hooks() {
	for hh_e in $(events "$2"); do
		# The guarded form: every host runs hooks through a shell
		# (0225; Cursor, 0243).
		hh_c="[ -x $HOOK ] || exit 0; exec $HOOK $2 $hh_e"
		# Cursor's answers JSON even then (0258).
		case $2/$hh_e in
		cursor/sessionStart)
			hh_c="[ -x $HOOK ] || { echo '{}'; exit 0; }; exec $HOOK $2 $hh_e" ;;
		cursor/beforeSubmitPrompt)
			hh_c="[ -x $HOOK ] || { echo '{\\\"continue\\\":true}'; exit 0; }; exec $HOOK $2 $hh_e" ;;
		esac
		hh_n=$(grep -c -F "\"$hh_c\"" "$1") || return 1
		[ "$hh_n" -eq 1 ] || {
			echo "error: $hh_n entries for $2 $hh_e in $1" >&9
			return 1
		}
	done
}

test_case 'install writes both events for each host in the user config' '
	for h in cursor claude codex gemini; do
		f=$(cfg $h) &&
		test ! -e "$f" &&
		pigeon install $h >out 2>err &&
		expect_empty err &&
		head -n 1 out >line &&
		echo "installed Pigeon${SQ}s hooks for $h in $f" >expect &&
		test_cmp expect line &&
		has_hooks "$f" $h &&
		test ! -e "$f.pigeon.bak" &&
		test "$(stat -c %a "$f")" = 644 || return 1
	done &&
	grep -q "^  \"version\": 1,$" "$(cfg cursor)" &&
	grep -q "\"timeout\": 5000$" "$(cfg gemini)" &&
	grep -q "\"timeout\": 5$" "$(cfg claude)"
'

test_case 'a second install changes nothing' '
	for h in cursor claude codex gemini; do
		f=$(cfg $h) &&
		cp "$f" before &&
		pigeon install $h >out &&
		head -n 1 out >line &&
		echo "already installed in $f" >expect &&
		test_cmp expect line &&
		cmp before "$f" || return 1
	done
'

test_case 'codex install says the hooks must be trusted' '
	pigeon install codex >out &&
	grep -q "^note: Codex runs hooks only once they are trusted" out &&
	grep -q -e "--dangerously-bypass-hook-trust" out &&
	pigeon install claude >out &&
	! grep -q "^note:" out
'

test_case 'uninstall removes a file pigeon created, and nothing else' '
	for h in cursor claude codex gemini; do
		f=$(cfg $h) &&
		pigeon uninstall $h >out 2>err &&
		expect_empty err &&
		grep -q "^removed Pigeon${SQ}s hooks for $h" out &&
		test ! -e "$f" && test ! -e "$f.pigeon.bak" &&
		test -d "$(dirname "$f")" &&
		pigeon uninstall $h >out &&
		head -n 1 out >line &&
		echo "nothing to remove in $f: Pigeon${SQ}s hooks for $h were not there" >expect &&
		test_cmp expect line || return 1
	done
'

test_case 'install then uninstall gives back an odd file byte for byte' '
	f=$(cfg claude) &&
	{
		printf "{ \"model\" :\"x\",\r\n  \"hooks\":{\"Stop\":[ "
		printf "{\"hooks\":[{\"type\":\"command\",\"command\":"
		printf "\"say done\"}]}],\n \"SessionStart\": [ ] } }"
	} >"$f" &&
	cp "$f" orig &&
	pigeon install claude >/dev/null &&
	has_hooks "$f" claude &&
	grep -q "say done" "$f" &&
	cmp orig "$f.pigeon.bak" &&
	pigeon uninstall claude >out &&
	grep -q "^removed" out &&
	cmp orig "$f" &&
	test ! -e "$f.pigeon.bak"
'

test_case 'the same round trip for every host, user and project' '
	for h in cursor claude codex gemini; do
		for where in user project; do
			if [ $where = user ]; then
				f=$(cfg $h) && opt=--user
			else
				f=$(cfg $h) &&
				f=$TEST_DIR/proj/${f#"$HOME"/} &&
				opt="--project proj"
			fi &&
			mkdir -p "$(dirname "$f")" &&
			printf "{\"a\" : [1, 2 ],\n\t\"hooks\" : {}}" >"$f" &&
			cp "$f" orig &&
			pigeon install $h $opt >/dev/null &&
			has_hooks "$f" $h &&
			pigeon uninstall $h $opt >/dev/null &&
			cmp orig "$f" && test ! -e "$f.pigeon.bak" &&
			rm "$f" || return 1
		done
	done
'

test_case 'install --project writes the project config' '
	for h in cursor claude codex gemini; do
		rel=$(cfg $h) && rel=${rel#"$HOME"/} &&
		pigeon install $h --project proj >out &&
		head -n 1 out >line &&
		echo "installed Pigeon${SQ}s hooks for $h in $TEST_DIR/proj/$rel" \
			>expect &&
		test_cmp expect line &&
		has_hooks "proj/$rel" $h &&
		test ! -e "$(cfg $h)" || return 1
	done &&
	for h in cursor claude codex gemini; do
		pigeon uninstall $h --project "$TEST_DIR/proj" >/dev/null ||
		return 1
	done &&
	test -z "$(find proj -type f)"
'

test_case '--dry-run prints the diff and writes nothing' '
	f=$(cfg gemini) &&
	pigeon install gemini --dry-run >out 2>err &&
	expect_empty err &&
	test ! -e "$f" &&
	grep -q "^would install Pigeon${SQ}s hooks for gemini in $f" out &&
	grep -q "^--- /dev/null$" out &&
	grep -q "^+++ $f$" out &&
	grep -q "^+.*$HOOK gemini BeforeAgent" out &&
	tail -n 1 out | grep -q "^dry run: nothing written$" &&
	echo "{\"ui\": {}}" >"$f" &&
	cp "$f" orig &&
	pigeon install gemini --dry-run >out &&
	grep -q "^-{\"ui\": {}}$" out &&
	cmp orig "$f" && test ! -e "$f.pigeon.bak" &&
	pigeon install gemini --no-mcp >/dev/null &&
	cp "$f" installed &&
	pigeon uninstall gemini --dry-run >out &&
	grep -q "^would remove" out &&
	grep -q "^+{\"ui\": {}}$" out &&
	cmp installed "$f" && cmp orig "$f.pigeon.bak" &&
	pigeon uninstall gemini >/dev/null &&
	cmp orig "$f"
'

test_case 'uninstall keeps an entry the user added after install' '
	f=$(cfg cursor) &&
	pigeon install cursor >/dev/null &&
	sed "s|\"sessionStart\": \[|\"sessionStart\": [{\"command\": \"mine\"},|" \
		"$f" >edited &&
	cp edited "$f" &&
	grep -q "\"mine\"" "$f" &&
	pigeon uninstall cursor >/dev/null &&
	grep -q "\"mine\"" "$f" &&
	! grep -q pigeon-hook "$f" &&
	rm "$f"
'

test_case 'invalid JSON is refused and left untouched' '
	f=$(cfg codex) &&
	printf "{\n  \"hooks\": {\n    \"Stop\": [,]\n}\n" >"$f" &&
	cp "$f" orig &&
	expect_error 1 "is not valid JSON (line 3" pigeon install codex &&
	expect_one_error err "$f" &&
	cmp orig "$f" && test ! -e "$f.pigeon.bak" &&
	expect_error 1 "left untouched" pigeon uninstall codex &&
	cmp orig "$f" &&
	echo "{\"hooks\": []}" >"$f" &&
	expect_error 1 "\"hooks\" as an array" pigeon install codex &&
	rm "$f"
'

test_case 'a file keeps its bytes: CRLF, BOM, numbers, no final newline' '
	f=$(cfg codex) &&
	printf "\357\273\277{\r\n    \"n\": 12345678901234567890,\r\n    \"x\": 1e400\r\n}" >"$f" &&
	cp "$f" orig &&
	pigeon install codex >/dev/null &&
	has_hooks "$f" codex &&
	grep -q "12345678901234567890,$CR\$" "$f" &&
	test "$(grep -c "$CR\$" "$f")" = "$(wc -l <"$f")" &&
	test "$(wc -l <"$f")" -gt 20 &&
	head -c 3 "$f" | od -An -tx1 | grep -q "ef bb bf" &&
	pigeon uninstall codex >/dev/null &&
	cmp orig "$f" && test ! -e "$f.pigeon.bak" &&
	rm "$f"
'

test_case 'gemini settings with comments install and uninstall exactly' '
	f=$(cfg gemini) &&
	printf "// mine\n{\n  /* ui */ \"ui\": {\"theme\": \"x\"}\n}\n" >"$f" &&
	cp "$f" orig &&
	pigeon install gemini >/dev/null &&
	has_hooks "$f" gemini &&
	grep -q "^// mine$" "$f" &&
	pigeon uninstall gemini >/dev/null &&
	cmp orig "$f" &&
	rm "$f" &&
	printf "// mine\n{}\n" >"$(cfg claude)" &&
	expect_error 1 "is not valid JSON (line 1, column 1)" pigeon install claude &&
	rm "$(cfg claude)"
'

test_case 'the user'"$SQ"'s own .bak is never touched' '
	f=$(cfg claude) &&
	echo "{\"model\": \"a\"}" >"$f" &&
	cp "$f" orig &&
	cp "$f" "$f.bak" &&
	pigeon install claude >/dev/null &&
	cmp orig "$f.bak" && cmp orig "$f.pigeon.bak" &&
	pigeon uninstall claude >/dev/null &&
	cmp orig "$f" && cmp orig "$f.bak" && test ! -e "$f.pigeon.bak" &&
	rm "$f" "$f.bak"
'

test_case 'a hard-linked config stays linked' '
	f=$(cfg cursor) &&
	echo "{\"x\": 1}" >linked.json &&
	cp linked.json orig &&
	ln linked.json "$f" &&
	pigeon install cursor >/dev/null &&
	has_hooks linked.json cursor &&
	test "$(stat -c %h "$f")" = 2 &&
	test ! -e "$f.pigeon-save" &&
	pigeon uninstall cursor >/dev/null &&
	cmp orig linked.json &&
	test "$(stat -c %h "$f")" = 2 &&
	rm "$f" linked.json
'

test_case 'CLAUDE_CONFIG_DIR and CODEX_HOME name the user config' '
	CLAUDE_CONFIG_DIR=$TEST_DIR/cc CODEX_HOME=$TEST_DIR/cx &&
	export CLAUDE_CONFIG_DIR CODEX_HOME &&
	pigeon install claude >out &&
	head -n 1 out >line &&
	echo "installed Pigeon${SQ}s hooks for claude in $TEST_DIR/cc/settings.json" >expect &&
	test_cmp expect line &&
	pigeon install codex >out &&
	grep -q "in $TEST_DIR/cx/hooks.json$" out &&
	has_hooks cc/settings.json claude &&
	has_hooks cx/hooks.json codex &&
	test ! -e "$(cfg claude)" && test ! -e "$(cfg codex)"
'

test_case 'install lets the agent run pigeon; uninstall takes exactly that back' '
	PIGEON_HOME=$TEST_DIR/state && export PIGEON_HOME && mkdir -p state &&
	mkdir -p "$HOME/.claude" "$HOME/.codex" &&
	printf "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(ls:*)\"\n    ]\n  }\n}\n" >"$(cfg claude)" &&
	printf "# mine\r\n[sandbox_workspace_write]\r\nnetwork_access = true\r\n" >"$HOME/.codex/config.toml" &&
	cp "$(cfg claude)" claude.orig && cp "$HOME/.codex/config.toml" codex.orig &&
	pigeon install claude --dry-run >out &&
	grep -q "^+      \"Bash(pigeon send:\*)\",\?$" out &&
	cmp claude.orig "$(cfg claude)" &&
	pigeon install claude >out &&
	grep -q "^permissions: permissions.allow holds Bash(pigeon send:\*)" out &&
	for s in send read wait status; do
		grep -q "\"Bash(pigeon $s:\*)\"" "$(cfg claude)" || return 1
	done &&
	pigeon install codex >out &&
	grep -q "^permissions: .*writable_roots holds \"$TEST_DIR/state\" in $HOME/.codex/config.toml (written)$" out &&
	grep -q "^writable_roots = \[\"$TEST_DIR/state\"\] # added by pigeon install$CR$" "$HOME/.codex/config.toml" &&
	pigeon install gemini >out &&
	grep -q "^commandPrefix = \[\"pigeon send\", " "$HOME/.gemini/policies/pigeon.toml" &&
	pigeon doctor --json >doc &&
	grep -q "\"state\":\"allowed\"" doc &&
	pigeon uninstall claude >/dev/null && cmp claude.orig "$(cfg claude)" &&
	pigeon uninstall codex >/dev/null && cmp codex.orig "$HOME/.codex/config.toml" &&
	pigeon uninstall gemini >/dev/null &&
	test ! -e "$HOME/.gemini/policies/pigeon.toml" &&
	pigeon install codex --no-permissions --no-mcp >out &&
	! grep -q "^permissions:" out &&
	cmp codex.orig "$HOME/.codex/config.toml" &&
	pigeon uninstall codex >/dev/null &&
	printf "sandbox_workspace_write.writable_roots = []\n" >"$HOME/.codex/config.toml" &&
	cp "$HOME/.codex/config.toml" codex.orig &&
	expect_error 1 "dotted key" pigeon install codex &&
	cmp codex.orig "$HOME/.codex/config.toml" &&
	test ! -e "$(cfg codex)" &&
	rm -f "$HOME/.codex/config.toml" "$(cfg claude)"
'

test_case 'a config.toml that is not TOML stops codex install, both files untouched' '
	PIGEON_HOME=$TEST_DIR/state && export PIGEON_HOME && mkdir -p state "$HOME/.codex" &&
	t=$HOME/.codex/config.toml &&
	printf "{\"hooks\": {}}\n" >"$(cfg codex)" && cp "$(cfg codex)" hooks.orig &&
	printf "model = \"o3\"\nmodel = \"o4\"\n" >"$t" && cp "$t" toml.orig &&
	expect_error 1 "${SQ}$t${SQ} defines model twice (lines 1 and 2), which is not valid TOML: left untouched" \
	    pigeon install codex &&
	cmp toml.orig "$t" && cmp hooks.orig "$(cfg codex)" &&
	expect_error 1 "defines model twice" pigeon uninstall codex &&
	cmp toml.orig "$t" && cmp hooks.orig "$(cfg codex)" &&
	printf "[tui]\r\nnotifications = true\r\nnotifications = false\r\n" >"$t" && cp "$t" toml.orig &&
	expect_error 1 "defines tui.notifications twice (lines 2 and 3)" pigeon install codex &&
	cmp toml.orig "$t" && cmp hooks.orig "$(cfg codex)" &&
	printf "profile.x = 1\n[profile]\n" >"$t" && cp "$t" toml.orig &&
	expect_error 1 "defines profile twice (lines 1 and 2)" pigeon install codex &&
	cmp toml.orig "$t" &&
	printf "mcp = { a = 1 }\nmcp.b = 2\n" >"$t" && cp "$t" toml.orig &&
	expect_error 1 "defines mcp twice (lines 1 and 2)" pigeon install codex &&
	cmp toml.orig "$t" &&
	printf "model = o3\n" >"$t" && cp "$t" toml.orig &&
	expect_error 1 "(line 1, column 9: a value that is not a TOML number, boolean or date; a string needs quotes): left untouched" \
	    pigeon install codex &&
	cmp toml.orig "$t" && cmp hooks.orig "$(cfg codex)" &&
	printf "model = \"o3\"\rx = 1\r" >"$t" && cp "$t" toml.orig &&
	expect_error 1 "a carriage return without a line feed" pigeon install codex &&
	cmp toml.orig "$t" && cmp hooks.orig "$(cfg codex)" &&
	rm -f "$t" "$(cfg codex)"
'

test_case 'an empty config.toml stays after codex install and uninstall; Pigeon'"'"'s table goes' '
	PIGEON_HOME=$TEST_DIR/state && export PIGEON_HOME && mkdir -p state "$HOME/.codex" &&
	t=$HOME/.codex/config.toml &&
	: >"$t" &&
	pigeon install codex >/dev/null &&
	grep -q "^writable_roots = \[\"$TEST_DIR/state\"\] # added by pigeon install$" "$t" &&
	pigeon uninstall codex >/dev/null &&
	test -f "$t" && test ! -s "$t" &&
	rm "$t" &&
	pigeon install codex >/dev/null && test -s "$t" &&
	pigeon uninstall codex >/dev/null && test ! -e "$t" &&
	printf "model = \"o3\"\n" >"$t" &&
	pigeon install codex >/dev/null &&
	printf "\n[tui]\nnotifications = true\n" >>"$t" &&
	pigeon uninstall codex >/dev/null &&
	printf "model = \"o3\"\n\n[tui]\nnotifications = true\n" | cmp - "$t" &&
	rm "$t" && test ! -e "$(cfg codex)"
'

test_case 'unknown host and bad options exit 2' '
	expect_error 2 "unknown host ${SQ}vim${SQ}: say cursor, claude, codex, gemini, copilot or opencode" \
		pigeon install vim &&
	expect_error 2 "cursor, claude, codex, gemini, copilot or opencode" pigeon uninstall &&
	expect_error 2 "exclusive" pigeon install claude --user --project proj &&
	expect_error 2 "no such directory" pigeon install claude --project nope &&
	expect_error 2 "unexpected argument" pigeon install claude codex &&
	expect_error 2 "--bogus" pigeon install claude --bogus &&
	(PIGEON_HOOK=bin/pigeon-hook &&
	    expect_error 2 "absolute path" pigeon install claude) &&
	(PIGEON_HOOK=/bin/true &&
	    expect_error 2 "/pigeon-hook" pigeon install claude) &&
	test ! -e "$(cfg claude)"
'

test_case '--help prints the usage on stdout' '
	pigeon install --help >out 2>err &&
	expect_empty err &&
	head -n 1 out | grep -q "^usage: pigeon install HOST" &&
	pigeon uninstall -h >out &&
	head -n 1 out | grep -q "^usage: pigeon uninstall HOST" &&
	pigeon --help >out &&
	grep -q "^  install " out && grep -q "^  uninstall " out
'

test_case 'without PIGEON_HOOK the hook is found next to pigeon' '
	unset PIGEON_HOOK &&
	if [ -x "$PGN_BIN/hookcli/pigeon-hook" ]; then
		want=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook &&
		pigeon install claude >/dev/null &&
		grep -q -F "exec $want claude SessionStart\"" "$(cfg claude)" &&
		pigeon uninstall claude >/dev/null &&
		test ! -e "$(cfg claude)"
	else
		test_note "no pigeon-hook built: checking the refusal" &&
		expect_error 1 "no pigeon-hook found" pigeon install claude &&
		test ! -e "$(cfg claude)"
	fi
'

test_done
