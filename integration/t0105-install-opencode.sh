#!/bin/sh
# pigeon install / uninstall opencode (the plugin drop) through the CLI,
# under a temporary HOME: the plugin file and the directories it needs,
# the exact inverse on uninstall, --dry-run, --project, doctor, and the
# refusals (a pigeon.js that is not Pigeon's, a plugin directory that is
# a symbolic link or read-only), with nothing of the user's lost.
. "$(dirname "$0")/lib.sh"

mkdir "$TEST_DIR/bin" "$TEST_DIR/proj" || exit 2
HOOK=$TEST_DIR/bin/pigeon-hook
printf '#!/bin/sh\nexit 0\n' >"$HOOK" && chmod 755 "$HOOK" || exit 2
PIGEON_HOOK=$HOOK
export PIGEON_HOOK
unset XDG_CONFIG_HOME
PLUGIN=$HOME/.config/opencode/plugin/pigeon.js

# tree DIR: every path under DIR, sorted.
tree() {
	(cd "$1" && find . | LC_ALL=C sort)
}

test_case 'install writes the plugin, uninstall leaves HOME as it was' '
	tree "$HOME" >before &&
	pigeon install opencode >out &&
	grep -q "^installed Pigeon${SQ}s plugin for opencode in $PLUGIN$" out &&
	grep -q "^permissions: none: opencode${SQ}s default permissions" out &&
	head -n 1 "$PLUGIN" | grep -q "^// Written by pigeon install opencode;" &&
	grep -qxF "const HOOK = \"$HOOK\";" "$PLUGIN" &&
	pigeon install opencode >out &&
	grep -q "^already installed in $PLUGIN$" out &&
	pigeon doctor --json >doc.json &&
	jq -e --arg p "$PLUGIN" --arg h "$HOOK" ".hooks[] |
		select(.host == \"opencode\" and .level == \"user\") |
		.path == \$p and .installed and .hook == \$h and
		(.events | join(\",\")) ==
		\"session.created,chat.message,tool.execute.after,session.idle,tool.execute.before\"" \
		doc.json >/dev/null &&
	pigeon uninstall opencode >out &&
	grep -q "^removed Pigeon${SQ}s plugin for opencode: deleted $PLUGIN" out &&
	tree "$HOME" >after &&
	test_cmp before after
'

test_case 'with XDG_CONFIG_HOME, --project and --dry-run' '
	XDG_CONFIG_HOME=$TEST_DIR/xdg pigeon install opencode >out &&
	test -f "$TEST_DIR/xdg/opencode/plugin/pigeon.js" &&
	XDG_CONFIG_HOME=$TEST_DIR/xdg pigeon uninstall opencode >out &&
	test ! -e "$TEST_DIR/xdg" &&
	tree proj >before &&
	pigeon install opencode --project proj --dry-run >out &&
	grep -q "^would install Pigeon${SQ}s plugin for opencode in $TEST_DIR/proj/.opencode/plugin/pigeon.js$" out &&
	grep -q "^+const HOOK = " out &&
	grep -q "^dry run: nothing written$" out &&
	tree proj >after && test_cmp before after &&
	pigeon install opencode --project proj >out &&
	test -f proj/.opencode/plugin/pigeon.js &&
	pigeon uninstall opencode --project proj --dry-run >out &&
	grep -q "^would remove" out && test -f proj/.opencode/plugin/pigeon.js &&
	pigeon uninstall opencode --project proj >out &&
	tree proj >after && test_cmp before after
'

test_case 'a foreign pigeon.js is never touched' '
	mkdir -p "$(dirname "$PLUGIN")" &&
	echo "export const Mine = async () => ({});" >"$PLUGIN" &&
	cp "$PLUGIN" mine.orig &&
	expect_error 1 "exists and is not Pigeon${SQ}s plugin: left untouched" \
		pigeon install opencode &&
	cmp mine.orig "$PLUGIN" &&
	pigeon uninstall opencode >out &&
	grep -q "^nothing to remove in $PLUGIN: Pigeon${SQ}s plugin for opencode was not there$" out &&
	grep -q "not Pigeon${SQ}s plugin, left as it is" out &&
	cmp mine.orig "$PLUGIN" &&
	rm -r "$HOME/.config"
'

test_case 'a plugin directory that is a link or read-only is a clear error' '
	mkdir -p "$HOME/.config/opencode" "$TEST_DIR/real" &&
	ln -s "$TEST_DIR/real" "$HOME/.config/opencode/plugin" &&
	expect_error 1 "plugin${SQ} is a symbolic link: Pigeon writes no plugin through a link" \
		pigeon install opencode &&
	test -z "$(ls -A "$TEST_DIR/real")" &&
	rm "$HOME/.config/opencode/plugin" &&
	mkdir "$HOME/.config/opencode/plugin" &&
	chmod 555 "$HOME/.config/opencode/plugin" &&
	expect_error 1 "plugin${SQ} is read-only" pigeon install opencode &&
	test -z "$(ls -A "$HOME/.config/opencode/plugin")" &&
	chmod 755 "$HOME/.config/opencode/plugin" &&
	rm -r "$HOME/.config"
'

test_case 'concurrent installs leave one plugin, and uninstall all of it' '
	tree "$HOME" >before &&
	for i in 1 2 3 4 5 6; do
		pigeon install opencode >"out.$i" 2>&1 &
	done &&
	wait &&
	cat out.1 out.2 out.3 out.4 out.5 out.6 >all &&
	test "$(grep -c "^installed Pigeon\|^already installed" all)" -eq 6 &&
	test "$(ls -A "$(dirname "$PLUGIN")")" = pigeon.js &&
	pigeon uninstall opencode >out &&
	tree "$HOME" >after &&
	test_cmp before after
'

# The plugin itself, under node (opencode runs it under Bun): whatever
# it is given and whatever the hook does, it never throws and always
# comes back; a context lands where the model reads it.
test_case 'the plugin never throws, and its hook calls always come back' '
	command -v node >/dev/null 2>&1 || { test_note "no node: skipped"; exit 0; }
	mkdir -p fake &&
	cat >fake/pigeon-hook <<-EOF &&
	#!/bin/sh
	payload=\$(cat)
	echo "\$* \$payload" >>"$TEST_DIR/fake.log"
	case "\$FAKE_MODE:\$2" in
	hang:*) sleep 30 ;;
	fail:*) echo "{not json"; exit 1 ;;
	*:session.idle) echo "{\"continue\":\"WAKE\"}" ;;
	*) echo "{\"context\":\"CTX-\$2\"}" ;;
	esac
	EOF
	chmod 755 fake/pigeon-hook &&
	PIGEON_HOOK=$TEST_DIR/fake/pigeon-hook pigeon install opencode >/dev/null &&
	sed "s/^const TIMEOUT_MS = 5000;$/const TIMEOUT_MS = 300;/" "$PLUGIN" \
	    >plugin.mjs &&
	grep -q "^const TIMEOUT_MS = 300;$" plugin.mjs &&
	cat >check.mjs <<-\EOF &&
	const { PigeonPlugin } = await import(process.argv[2]);
	const woke = [];
	// As in the SDK, the methods need their this; WAKE_FAILS: rejects.
	class Session {
	  constructor() { this.woke = woke; }
	  async promptAsync(o) {
	    if (process.env.WAKE_FAILS) throw new TypeError("fetch failed");
	    this.woke.push(o);
	  }
	}
	const client = { session: new Session() };
	const h = await PigeonPlugin({ client, directory: "/nowhere" });
	const part = () => ({ id: "prt_1", sessionID: "s1", messageID: "m1",
	  type: "text", text: "hi" });
	const bad = [undefined, null, 5, "x", {}, { sessionID: 7 },
	  { sessionID: "" }];
	for (const b of bad) {
	  await h.event(b); await h.event({ event: b });
	  await h["chat.message"](b, b); await h["chat.message"](b, { parts: 5 });
	  await h["tool.execute.after"](b, b);
	}
	await h.event({ event: { type: "session.created",
	  properties: { info: { id: "s1" } } } });
	const out = { message: { id: "m1" }, parts: [part()] };
	await h["chat.message"]({ sessionID: "s1" }, out);
	const tool = { output: "ran", title: "", metadata: {} };
	await h["tool.execute.after"]({ sessionID: "s1", tool: "bash" }, tool);
	await h.event({ event: { type: "session.idle",
	  properties: { sessionID: "s1" } } });
	await h.event({ event: { type: "session.created",
	  properties: { info: { id: "c1", parentID: "s1" } } } });
	const child = { parts: [part()] };
	await h["chat.message"]({ sessionID: "c1" }, child);
	await h.event({ event: { type: "session.idle",
	  properties: { sessionID: "c1" } } });
	if (child.parts.length !== 1) process.exit(3);
	console.log(JSON.stringify({ parts: out.parts.map((p) => [p.id, p.text,
	  p.synthetic === true]), tool: tool.output, woke: woke.length }));
	EOF
	node check.mjs "$TEST_DIR/plugin.mjs" >ok.json &&
	jq -e ".parts == [[\"prt_1\",\"hi\",false],
		[\"prt_1pigeon0\",\"CTX-session.created\",true],
		[\"prt_1pigeon1\",\"CTX-chat.message\",true]] and
		.tool == \"ran\\n\\nCTX-tool.execute.after\" and .woke == 1" \
		ok.json >/dev/null &&
	grep -q "^opencode chat.message .*\"message_id\":\"m1\"" fake.log &&
	! grep -q "c1" fake.log &&
	! grep -q "wake_error" fake.log &&
	# A wake whose prompt fails: the hook hears why, once.
	WAKE_FAILS=1 node check.mjs "$TEST_DIR/plugin.mjs" >failed.json &&
	jq -e ".woke == 0" failed.json >/dev/null &&
	test "$(grep -c "^opencode session.idle .*\"wake_error\":\"fetch failed\"" fake.log)" = 1 &&
	for mode in hang fail; do
		FAKE_MODE=$mode node check.mjs "$TEST_DIR/plugin.mjs" >"$mode.json" &&
		jq -e ".parts == [[\"prt_1\",\"hi\",false]] and
			.tool == \"ran\" and .woke == 0" "$mode.json" >/dev/null ||
			return 1
	done &&
	! pgrep -f "$TEST_DIR/fake/pigeon-hook" >/dev/null &&
	pigeon uninstall opencode >/dev/null
'

test_done
