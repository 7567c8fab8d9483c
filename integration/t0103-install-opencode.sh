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
		\"session.created,chat.message,tool.execute.after,session.idle\"" \
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
	grep -q "^nothing to remove in $PLUGIN$" out &&
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

test_done
