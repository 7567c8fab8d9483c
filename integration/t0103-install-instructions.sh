#!/bin/sh
# pigeon install / uninstall instructions against real files: the block
# and its exact commands (which work as written), the agent added to the
# file's scope, refresh in place, the exact inverse on uninstall (BOM,
# CRLF, a lone CR, no final line end; a created file removed), the
# user's own marker pairs (quoted in fenced code: kept; elsewhere: never
# overwritten), and the refusals (a symlink, a directory, non-UTF-8, a
# huge file, a concurrent run).
. "$(dirname "$0")/lib.sh"

git init -q "$TEST_DIR/proj" || exit 2
BOM=$(printf '\357\273\277')
CR=$(printf '\r')

test_case 'install writes the block at the end and adds the agent to the scope' '
	cd proj &&
	printf "%s# Rules\r\nBe brief." "$BOM" >AGENTS.md &&
	cp AGENTS.md ../orig &&
	pigeon install instructions --file AGENTS.md --agent Bob >out 2>err &&
	expect_empty err &&
	echo "wrote Pigeon${SQ}s instructions for agent bob in AGENTS.md" >expect &&
	test_cmp expect out &&
	grep -c "^<!-- pigeon:begin -->$CR\$" AGENTS.md >n && echo 1 | test_cmp - n &&
	tail -c 19 AGENTS.md | grep -qx "<!-- pigeon:end -->" &&
	grep -qF "\`pigeon read --agent bob\`$CR" AGENTS.md &&
	grep -qF "\`pigeon send --to NAME --from bob \"text\"\`$CR" AGENTS.md &&
	grep -qF "\`pigeon wait --agent bob\`$CR" AGENTS.md &&
	sql_is "SELECT a.name FROM agent a JOIN scope s ON s.id = a.scope_id WHERE s.root = ${SQ}$TEST_DIR/proj${SQ}" bob
'

test_case 'the block'"'"'s commands work as written' '
	cd proj &&
	pigeon send --to bob --from carol --create "hello from carol" >/dev/null &&
	read_cmd=$(sed -n "s/^- Read new messages: \`\\(.*\\)\`$CR\$/\\1/p" AGENTS.md) &&
	test "$read_cmd" = "pigeon read --agent bob" &&
	eval "$read_cmd" >got &&
	grep -q "hello from carol" got &&
	sql_is "SELECT count(*) FROM delivery" 1
'

test_case 'install again is a no-op; a new name refreshes the block in place' '
	cd proj &&
	cp AGENTS.md before &&
	pigeon install instructions --file AGENTS.md >out &&
	grep -q "for bob are up to date in AGENTS.md" out &&
	cmp before AGENTS.md &&
	printf "after the block\r\n" >>AGENTS.md &&
	pigeon install instructions --file AGENTS.md --agent dora >out &&
	grep -q "agent dora" out &&
	grep -c "pigeon:begin" AGENTS.md >n && echo 1 | test_cmp - n &&
	! grep -q "agent bob" AGENTS.md &&
	tail -n 1 AGENTS.md | grep -qx "<!-- pigeon:end -->after the block$CR"
'

test_case 'uninstall gives the bytes back, keeping what was added after' '
	cd proj &&
	pigeon uninstall instructions --file AGENTS.md >out &&
	grep -qx "removed Pigeon${SQ}s instructions from AGENTS.md" out &&
	{ cat ../orig; printf "\r\nafter the block\r\n"; } >want &&
	cmp want AGENTS.md &&
	cp ../orig AGENTS.md &&
	pigeon install instructions --file AGENTS.md --agent bob >/dev/null &&
	pigeon uninstall instructions --file AGENTS.md >/dev/null &&
	cmp ../orig AGENTS.md &&
	pigeon uninstall instructions --file AGENTS.md >out &&
	grep -q "nothing to remove in AGENTS.md" out &&
	ls -a >list && ! grep -q pigeon list
'

test_case 'markers quoted in a fenced code block stay the user'"'"'s text' '
	cd proj &&
	printf "# Agents\n\nExample:\n\n\`\`\`\n<!-- pigeon:begin -->\n(our own explanation)\n<!-- pigeon:end -->\n\`\`\`\n" >DOCS.md &&
	cp DOCS.md docs.orig &&
	pigeon install instructions --file DOCS.md --agent bob >/dev/null &&
	grep -c "our own explanation" DOCS.md >n && echo 1 | test_cmp - n &&
	grep -c "pigeon:begin" DOCS.md >n && echo 2 | test_cmp - n &&
	head -c "$(wc -c <docs.orig)" DOCS.md | cmp - docs.orig &&
	pigeon install instructions --file DOCS.md --agent dora >/dev/null &&
	grep -c "pigeon:begin" DOCS.md >n && echo 2 | test_cmp - n &&
	grep -q "read --agent dora" DOCS.md &&
	pigeon uninstall instructions --file DOCS.md >/dev/null &&
	cmp docs.orig DOCS.md
'

test_case 'a marker pair around the user'"'"'s own text is never overwritten' '
	cd proj &&
	printf "# Agents\n<!-- pigeon:begin -->\n(our own explanation)\n<!-- pigeon:end -->\n" >OWN.md &&
	cp OWN.md own.orig &&
	expect_error 1 "${SQ}OWN.md${SQ} holds <!-- pigeon:begin --> and <!-- pigeon:end --> on lines 2 and 4 around text that is not Pigeon${SQ}s block" \
	    pigeon install instructions --file OWN.md --agent bob &&
	cmp own.orig OWN.md &&
	pigeon uninstall instructions --file OWN.md >out &&
	grep -q "nothing to remove in OWN.md" out &&
	cmp own.orig OWN.md
'

test_case 'a classic Mac file (lone CR line ends) comes back byte for byte' '
	cd proj &&
	printf "a\rb\rc\r" >MAC.md && cp MAC.md mac.orig &&
	pigeon install instructions --file MAC.md --agent bob >/dev/null &&
	test "$(tr -cd "\n" <MAC.md | wc -c)" -eq 0 &&
	tr "\r" "\n" <MAC.md | grep -qx "<!-- pigeon:end -->" &&
	pigeon uninstall instructions --file MAC.md >/dev/null &&
	cmp mac.orig MAC.md
'

test_case 'a file install created is removed by uninstall; the agent stays' '
	cd proj &&
	pigeon install instructions --file .windsurfrules >out &&
	name=$(sed -n "s/^wrote .* for agent \\([a-z-]*\\) in .windsurfrules\$/\\1/p" out) &&
	test -n "$name" &&
	grep -q "read --agent $name\`" .windsurfrules &&
	pigeon uninstall instructions --file .windsurfrules >out &&
	grep -q "deleted .windsurfrules, which Pigeon had created" out &&
	test ! -e .windsurfrules &&
	sql_is "SELECT count(*) FROM agent WHERE name = ${SQ}$name${SQ} AND removed_ms IS NULL" 1
'

test_case 'a --dry-run writes nothing' '
	cd proj &&
	pigeon install instructions --file GROK.md --agent eve --dry-run >out &&
	grep -q "would write Pigeon${SQ}s instructions for agent eve" out &&
	test ! -e GROK.md &&
	sql_is "SELECT count(*) FROM agent WHERE name = ${SQ}eve${SQ}" 0
'

test_case 'a symlink, a directory, non-UTF-8 and a huge file are refused untouched' '
	cd proj &&
	printf "mine\n" >real.md && ln -s real.md link.md &&
	expect_error 1 "${SQ}link.md${SQ} is a symbolic link: left untouched" \
	    pigeon install instructions --file link.md &&
	expect_error 1 "is a symbolic link" \
	    pigeon uninstall instructions --file link.md &&
	printf "mine\n" | cmp - real.md &&
	expect_error 1 "is a directory" pigeon install instructions --file . &&
	printf "caf\351\n" >latin1.md && cp latin1.md latin1.orig &&
	expect_error 1 "${SQ}latin1.md${SQ} is not UTF-8 text: left untouched" \
	    pigeon install instructions --file latin1.md &&
	cmp latin1.orig latin1.md &&
	head -c 1048577 /dev/zero | tr "\\0" x >huge.md &&
	expect_error 1 "is larger than 1048576 bytes: left untouched" \
	    pigeon install instructions --file huge.md &&
	test "$(wc -c <huge.md)" -eq 1048577 &&
	expect_error 1 "no such directory" \
	    pigeon install instructions --file nodir/AGENTS.md &&
	test ! -e nodir
'

test_case 'broken markers are refused, naming the line' '
	cd proj &&
	printf "a\n<!-- pigeon:begin -->\nb\n" >broken.md && cp broken.md broken.orig &&
	expect_error 1 "line 2 with no <!-- pigeon:end --> after it" \
	    pigeon uninstall instructions --file broken.md &&
	expect_error 1 "line 2 with no" \
	    pigeon install instructions --file broken.md --agent bob &&
	cmp broken.orig broken.md
'

test_case 'a concurrent install is refused untouched' '
	cd proj &&
	printf "x\n" >AGENTS.md &&
	flock .AGENTS.md.pigeon-lock pigeon install instructions \
	    --file AGENTS.md --agent bob >out 2>err ; test $? -eq 1 &&
	expect_empty out && expect_one_error err "another pigeon is changing ${SQ}AGENTS.md${SQ} right now" &&
	printf "x\n" | cmp - AGENTS.md &&
	pigeon install instructions --file AGENTS.md --agent bob >/dev/null &&
	test ! -e .AGENTS.md.pigeon-lock
'

test_case 'usage errors: no --file, --agent on uninstall, a bad name' '
	expect_error 2 "which file? name it with --file PATH" \
	    pigeon install instructions &&
	expect_error 2 "--agent is for install" \
	    pigeon uninstall instructions --file x.md --agent bob &&
	expect_error 2 "--agent ${SQ}no way${SQ}" \
	    pigeon install instructions --file x.md --agent "no way" &&
	test ! -e x.md
'

test_done
