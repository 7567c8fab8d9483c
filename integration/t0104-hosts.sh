#!/bin/sh
# pigeon hosts: the capability table from the host table, every cell
# with its evidence; pigeon install of a host Pigeon serves only with
# the instructions block; doctor's warnings for what an installed host
# cannot carry.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TEST_DIR/bin" || exit 2
HOOK=$TEST_DIR/bin/pigeon-hook
printf '#!/bin/sh\nexit 0\n' >"$HOOK" && chmod 755 "$HOOK" || exit 2
PIGEON_HOOK=$HOOK
export PIGEON_HOOK
unset CLAUDE_CONFIG_DIR CODEX_HOME COPILOT_HOME

test_case 'hosts --json: every row of issue 12, every cell yes, no or partial with evidence' '
	pigeon hosts --json >hosts.json &&
	for h in cursor claude codex gemini copilot grok windsurf cline kiro qwen docker-agent amp droid; do
		jq -e --arg h "$h" "map(select(.host == \$h)) | length == 1" hosts.json >/dev/null ||
			{ echo "error: no row $h" >&9; exit 1; }
	done &&
	jq -e "all(.[]; (.cells | length) == 6 and
		all(.cells[]; (.cap | IN(\"yes\", \"no\", \"partial\")) and
			(.evidence | length) > 10))" hosts.json >/dev/null &&
	jq -e "map(select(.host == \"copilot\"))[0] |
		.mechanism == \"command\" and
		.config.user == \"~/.copilot/hooks/pigeon.json\" and
		.config.project == \".github/hooks/pigeon.json\" and
		.cells[\"after-tool\"].event == \"postToolUse\" and
		(.cells[\"stop\"].evidence | test(\"t0505-host-copilot\"))" hosts.json >/dev/null &&
	jq -e "map(select(.host == \"windsurf\"))[0] |
		.mechanism == \"instructions\" and .cells.prompt.cap == \"no\" and
		(.cells.prompt.evidence | test(\"docs.windsurf.com\"))" hosts.json >/dev/null
'

test_case 'hosts prints the table, then each cell'"'"'s evidence' '
	pigeon hosts >out 2>err &&
	expect_empty err &&
	head -n 1 out | grep -q "^HOST  *MECHANISM  *CONFIG  *SESSION-START  *PROMPT  *AFTER-TOOL  *STOP  *IDLE-WAKE  *BEFORE-TOOL  *DOORBELL\$" &&
	grep -Eq "^copilot +command +~/.copilot/hooks/pigeon.json +yes +yes +yes +yes +no +partial +no\$" out &&
	grep -Eq "^grok +instructions +an instructions file \(--file\) +partial +no +no +no +no +no +no\$" out &&
	# The columns line up: each row${SQ}s first cell starts under its head,
	# the longest config path (opencode${SQ}s) included.
	sed "/^\$/q" out | awk -v n="$(jq length hosts.json)" '"'"'
		NR == 1 { at = index($0, "SESSION-START") }
		NR > 1 && NF > 0 && (substr($0, at - 1, 1) != " " ||
		    substr($0, at, 1) == " ") { bad = 1 }
		END { exit bad || at < 2 || NR != n + 2 }'"'"' &&
	grep -q "^  grok prompt no: superagent-ai/grok-cli:src/agent/agent.ts@" out &&
	test "$(grep -c "^  [a-z-]* [a-z-]* \(yes\|no\|partial\): ." out)" = \
	    "$(($(jq length hosts.json) * 7))" &&
	expect_error 2 "unexpected argument" pigeon hosts extra
'

test_case 'install of a host with no usable hook points to the instructions block' '
	expect_error 2 "Pigeon has no hook for Grok CLI (pigeon hosts says why): write its block into the instructions file the agent reads, pigeon install instructions --file FILE --agent NAME" \
	    pigeon install grok &&
	expect_error 2 "pigeon uninstall instructions --file FILE" \
	    pigeon uninstall windsurf &&
	test ! -e "$HOME/.grok"
'

test_case 'doctor warns where an installed host cannot carry a facet' '
	pigeon install copilot >/dev/null &&
	pigeon doctor --json >d.json ; test $? -le 1 &&
	jq -r ".warnings[]" d.json >w &&
	grep -qx "copilot is installed, but Pigeon cannot reach its model at: idle (no); pigeon hosts gives the evidence" w &&
	! grep -q "^claude is installed" w &&
	pigeon install cursor >/dev/null && pigeon install claude >/dev/null &&
	pigeon doctor --json >d.json ; test $? -le 1 &&
	jq -r ".warnings[]" d.json >w &&
	grep -qx "cursor is installed, but Pigeon cannot reach its model at: prompt (partial), idle (no); pigeon hosts gives the evidence" w &&
	grep -q "installed for both Claude Code and GitHub Copilot CLI: Copilot CLI also runs Claude${SQ}s hooks" w
'

test_done
