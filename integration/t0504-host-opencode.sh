#!/bin/sh
# opencode, the real CLI at its pinned version (integration/hosts/versions),
# with Pigeon's plugin installed by `pigeon install opencode`, against the
# mock model server: `opencode run` turns, and an `opencode serve` session
# for the idle wake. Label "hosts"; skipped (exit 77) when opencode cannot
# be installed, unless CI=true. What each case proves: docs/testing.md.
HOST=opencode
. "$(dirname "$0")/hosts/lib.sh"

PROJ=$TEST_DIR/proj
mkdir -p "$PROJ/.git/pigeon-test" "$PROJ/.pigeon" || exit 2
if ! host_seed; then
	echo "Bail out! cannot write the opencode configuration in $HOME"
	exit 2
fi
CONF=$HOME/.config/opencode
PLUGIN=$CONF/plugin/pigeon.js
HOOK=$(cd "$PGN_BIN/hookcli" && pwd -P)/pigeon-hook
AGENT=bob
# The stops an idle session may go on with, in a row (product.md §8).
echo '{"reach": {"maxAutoContinues": 1}}' >"$PROJ/.pigeon/config.json" ||
	exit 2

# ping TO TEXT: queue TEXT from alice for TO in $PROJ; prints the id.
ping() {
	"$PIG" send --project "$PROJ" --create --from alice --to "$1" "$2" \
	    >sent.out || return 1
	sed -n 's/^queued #\([0-9]*\) for .*/\1/p' sent.out
}

# route_of ID: "COUNT|ROUTES" of message ID's deliveries.
route_of() {
	sql "SELECT count(*) || '|' || coalesce(group_concat(route), '')
		FROM delivery WHERE message_id = $1"
}

# seen NAME TEXT: for each model request of turn NAME, "TOTAL NEW": how
# often TEXT is in the request, and among its new items (log.jq).
seen() {
	requests "$1" | jq -r --arg s "$2" "$LOG_JQ"'
		select(model_request) | .body | "\(count($s)) \(turn | count($s))"'
}

# once NAME TEXT AT: TEXT is new in model request AT (1-based) of turn
# NAME, once, absent before it, and only history (once) after it.
once() {
	seen "$1" "$2" >seen.out || return 1
	awk -v at="$3" 'NR < at && $1 != 0 { bad = 1 }
		NR == at && ($1 != 1 || $2 != 1) { bad = 1 }
		NR > at && ($1 != 1 || $2 != 0) { bad = 1 }
		END { exit bad || NR < at }' seen.out && return 0
	echo "error: '$2' in the model requests of $1 (total, new):" >&9
	cat seen.out >&9
	echo "want: absent before request $3, new once in it, history after" >&9
	return 1
}

# until FILE PATTERN: wait up to 60 s for a line of FILE matching PATTERN
# (a turn of the real host on a loaded machine; no time is asserted).
until_line() {
	ul_i=0
	until grep -q -e "$2" "$1" 2>/dev/null; do
		ul_i=$((ul_i + 1))
		if [ "$ul_i" -ge 600 ]; then
			echo "error: no '$2' in $1 after 60 s" >&9
			return 1
		fi
		sleep 0.1
	done
}

# tree DIR: every path under DIR, sorted.
tree() {
	(cd "$1" && find . | LC_ALL=C sort)
}

test_case 'pigeon install opencode drops the plugin beside the user'"'"'s own' '
	tree "$CONF" >conf.before &&
	"$PIG" install opencode >install.out &&
	grep -q "^installed Pigeon${SQ}s plugin for opencode in $PLUGIN$" install.out &&
	grep -qxF "const HOOK = \"$HOOK\";" "$PLUGIN" &&
	test -f "$CONF/plugin/mine.js" &&
	"$PIG" doctor --json >doctor.json &&
	jq -e ".hooks[] | select(.host == \"opencode\" and .level == \"user\")
		| .installed and .hook == \"$HOOK\"" doctor.json >/dev/null
'

test_case 'a ping reaches the model once, and one sent by a tool within the same turn' '
	id=$(ping bob "PING-START ready when you are") &&
	: >"$USER_HOOK_LOG" &&
	host_run start "$PROJ" new \
	    "mock-shell: $PIG send --from carol --to bob \$(echo PINGxTOOL | tr x -)" &&
	once start "PING-START ready" 1 &&
	once start "PING-TOOL" 2 &&
	test "$(route_of "$id")" = "1|session-start" &&
	tool=$(sql "SELECT id FROM message WHERE body = ${SQ}PING-TOOL${SQ}") &&
	test "$(route_of "$tool")" = "1|after-tool" &&
	test "$(sql "SELECT count(*) FROM session WHERE host = ${SQ}opencode${SQ}
		AND key LIKE ${SQ}opencode:ses_%${SQ}")" = 1 &&
	grep -qx user-plugin "$USER_HOOK_LOG"
'

test_case 'opencode run --continue: what came between arrives at its start, once' '
	id=$(ping bob "PING-BETWEEN the second prompt") &&
	host_run again "$PROJ" resume "what is new" &&
	once again "PING-BETWEEN the second" 1 &&
	test "$(route_of "$id")" = "1|session-start" &&
	test "$(sql "SELECT count(*) FROM session WHERE host = ${SQ}opencode${SQ}")" = 1
'

# write_of FILE TEXT: the mock's call of opencode's write tool (a new
# file: opencode's edit and write of an existing one first want it read).
write_of() {
	printf "%s\n" "mock-tool: write {\"filePath\":\"$PROJ/lease/$1\",\"content\":\"$2\"}"
}

test_case 'the plugin'"'"'s tool.execute.before: a write under another'"'"'s lease is denied; the holder'"'"'s, a read and after release pass' '
	mkdir -p "$PROJ/lease" &&
	"$PIG" agent add --project "$PROJ" lena >/dev/null &&
	(cd "$PROJ" && "$PIG" lease take --agent lena --reason PGN-LEASE-WHY \
	    lease/ >/dev/null) &&
	AGENT=olaf &&
	host_run l1 "$PROJ" new "$(write_of g.txt olaf)" &&
	test ! -e "$PROJ/lease/g.txt" &&
	seen l1 "lease/g.txt is leased by lena" >seen.out &&
	head -n 1 seen.out | grep -qx "0 0" &&
	awk "\$2 > 0 { ok = 1 } END { exit !ok }" seen.out &&
	requests l1 | grep -q PGN-LEASE-WHY &&
	AGENT=lena &&
	host_run l2 "$PROJ" new "$(write_of h.txt lena)" &&
	test "$(cat "$PROJ/lease/h.txt")" = lena &&
	AGENT=olaf &&
	host_run l3 "$PROJ" new "mock-tool: read {\"filePath\":\"$PROJ/lease/h.txt\"}" &&
	requests l3 | grep -q lena && ! requests l3 | grep -q "is leased by" &&
	(cd "$PROJ" && "$PIG" lease release --agent lena --all >/dev/null) &&
	host_run l4 "$PROJ" new "$(write_of g.txt olaf)" &&
	test "$(cat "$PROJ/lease/g.txt")" = olaf
'

# serve_start: opencode serve in $PROJ on a free port of 127.0.0.1, the
# environment host_exec gives its turns, its sessions agent
# ${SERVE_AGENT:-dora}'s; SERVE is its address.
serve_start() {
	ss_port=$(node -e 'const s = require("net").createServer();
		s.listen(0, "127.0.0.1", () => {
			console.log(s.address().port); s.close(); });') || return 1
	(cd "$PROJ" && env -i PATH="$PATH" HOME="$HOME" LANG=C.UTF-8 \
	    PIGEON_HOME="$PIGEON_HOME" PIGEON_AGENT="${SERVE_AGENT:-dora}" \
	    XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share" \
	    XDG_CACHE_HOME="$HOME/.cache" XDG_STATE_HOME="$HOME/.local/state" \
	    OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 \
	    OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 \
	    timeout -k 5 300 "$HOST_BIN" serve --hostname 127.0.0.1 \
	    --port "$ss_port") >serve.out 2>serve.err &
	bg_track $!
	SERVE=http://127.0.0.1:$ss_port
	until_line serve.out "listening on"
}

# http METHOD PATH [JSON]: one request to the server; the body on stdout.
http() {
	node -e 'const [m, u, b] = process.argv.slice(1);
		fetch(u, { method: m, headers: { "content-type": "application/json" },
		    body: b || undefined })
		.then(async (r) => { const t = await r.text();
			if (!r.ok) { console.error(r.status, t); process.exit(1); }
			process.stdout.write(t); })
		.catch((e) => { console.error(String(e)); process.exit(1); });' \
	    "$1" "$SERVE$2" "${3:-}"
}

# say NAME TEXT: a person's prompt to the served session; it returns when
# the turn has ended. Its requests are turn NAME (NAME.range).
say() {
	sy_from=$(wc -l <"$REQLOG")
	http POST "/session/$SID/message" "$(jq -cn --arg t "$2" \
	    '{parts: [{type: "text", text: $t}]}')" >"$1.json" || return 1
	echo "$sy_from $(wc -l <"$REQLOG")" >"$TEST_DIR/$1.range"
}

test_case 'an idle session goes on with mail, governed by maxAutoContinues' '
	serve_start &&
	SID=$(http POST /session "{}" | jq -r .id) &&
	test -n "$SID" &&
	say hello "hello" &&
	# Mail that comes while a turn runs, after its prompt hook (the mock
	# sends it before answering); and more while the wake it causes
	# runs (the mock sends it on seeing the first mail).
	printf "%s\t%s\n" "PING-IDLE-1" \
	    "$PIG send --project $PROJ --from alice --to dora PING-IDLE-2" \
	    >"$REQLOG.on-text" &&
	n=$(hook_lines) &&
	say work "mock-before-reply: $PIG send --project $PROJ --from alice --to dora \$(echo PINGxIDLEx1 | tr x -)" &&
	# The idle wake claims nothing: it starts a new turn whose prompt is
	# the wake line, and that turn${SQ}s chat.message claims the mail
	# into its message (a prompt${SQ}s route), counted as a continuation;
	# at its end the governor holds the second mail back. The woken
	# turn may begin before the reply to the work prompt reaches us, so
	# its requests are counted from the work turn${SQ}s start: that
	# turn${SQ}s one model request (a text reply) must not hold the mail,
	# the first woken one must, once, beside the wake line.
	until_line "$PIGEON_HOME/hook.log" "event=session.idle .*status=wake .*agent=dora" &&
	until_line "$PIGEON_HOME/hook.log" "event=chat.message .*status=ok .*delivered=1" &&
	until_line "$PIGEON_HOME/hook.log" "event=session.idle .*status=governed" &&
	echo "$(cut -d" " -f1 "$TEST_DIR/work.range") $(wc -l <"$REQLOG")" \
	    >"$TEST_DIR/wake.range" &&
	once wake "PING-IDLE-1" 2 &&
	once wake "Pigeon woke you: mail arrived while you were idle." 2 &&
	id1=$(sql "SELECT id FROM message WHERE body = ${SQ}PING-IDLE-1${SQ}") &&
	id2=$(sql "SELECT id FROM message WHERE body = ${SQ}PING-IDLE-2${SQ}") &&
	test "$(route_of "$id1")" = "1|prompt" &&
	test "$(route_of "$id2")" = "0|" &&
	test "$(sql "SELECT auto_continues FROM session
		WHERE key = ${SQ}opencode:$SID${SQ}")" = 1 &&
	test "$(tail -n "+$((n + 1))" "$PIGEON_HOME/hook.log" |
	    grep -c "status=governed .*agent=dora: 1 continuations in a row")" = 1 &&
	# A person${SQ}s prompt: the mail that waited comes with it, and the
	# count starts again.
	say after "and now?" &&
	once after "PING-IDLE-2" 1 &&
	test "$(route_of "$id2")" = "1|prompt" &&
	test "$(sql "SELECT auto_continues FROM session
		WHERE key = ${SQ}opencode:$SID${SQ}")" = 0
'

# The idle wake when opencode refuses the turn it asks for: a hook that
# runs the real one and, the first time session.idle answers a wake,
# deletes the session before the plugin prompts it (a person closing it
# meanwhile). opencode then answers the plugin's promptAsync with a 404
# NotFoundError (measured, docs/decisions/0137). Nothing was claimed, so
# nothing is lost: the mail stays queued, hook.log says why the turn did
# not start, and the agent's next session gets the mail.
test_case 'an idle wake opencode refuses claims nothing: the mail stays queued, the reason logged' '
	mkdir -p gone &&
	cat >gone/pigeon-hook <<-EOF &&
	#!/bin/sh
	out=\$("$HOOK" "\$@")
	rc=\$?
	if [ "\$2" = session.idle ] && [ -n "\$out" ] &&
	    mkdir "$TEST_DIR/gone/once" 2>/dev/null; then
		node -e "fetch(process.argv[1], { method: \"DELETE\" })
			.then((r) => process.exit(r.ok ? 0 : 1),
			    () => process.exit(1));" \\
		    "\$(cat "$TEST_DIR/gone/serve")/session/\$(cat "$TEST_DIR/gone/sid")" ||
			echo "the session was not deleted" >"$TEST_DIR/gone/failed"
	fi
	printf "%s\\n" "\$out"
	exit \$rc
	EOF
	chmod 755 gone/pigeon-hook &&
	PIGEON_HOOK=$TEST_DIR/gone/pigeon-hook "$PIG" install opencode >/dev/null &&
	SERVE_AGENT=erin serve_start &&
	echo "$SERVE" >gone/serve &&
	SID=$(http POST /session "{}" | jq -r .id) &&
	test -n "$SID" && echo "$SID" >gone/sid &&
	say greet "hello" &&
	say closing "mock-before-reply: $PIG send --project $PROJ --from alice --to erin \$(echo PINGxGONE | tr x -)" &&
	until_line "$PIGEON_HOME/hook.log" "event=session.idle .*status=wake .*agent=erin" &&
	until_line "$PIGEON_HOME/hook.log" "event=session.idle session=opencode:$SID status=wake-failed" &&
	test ! -e gone/failed &&
	! http GET "/session/$SID" >/dev/null 2>&1 &&
	grep -q "status=wake-failed .*(Session not found: $SID); nothing was claimed, the mail stays queued" \
	    "$PIGEON_HOME/hook.log" &&
	id=$(sql "SELECT id FROM message WHERE body = ${SQ}PING-GONE${SQ}") &&
	test "$(route_of "$id")" = "0|" &&
	test "$(sql "SELECT delivered_ms IS NULL FROM message WHERE id = $id")" = 1 &&
	# Not lost: the agent${SQ}s next session has it, once.
	SID=$(http POST /session "{}" | jq -r .id) &&
	test -n "$SID" &&
	say next "hello again" &&
	once next "PING-GONE" 1 &&
	test "$(sql "SELECT count(*) FROM delivery WHERE message_id = $id
		AND session = ${SQ}opencode:$SID${SQ}")" = 1 &&
	"$PIG" install opencode >/dev/null
'

test_case 'a pigeon-hook that hangs or fails never breaks a prompt' '
	mkdir -p slow bad &&
	printf "#!/bin/sh\nsleep 30\n" >slow/pigeon-hook &&
	printf "#!/bin/sh\necho {not json\nexit 1\n" >bad/pigeon-hook &&
	chmod 755 slow/pigeon-hook bad/pigeon-hook &&
	PIGEON_HOOK=$TEST_DIR/slow/pigeon-hook "$PIG" install opencode >/dev/null &&
	grep -qF "slow/pigeon-hook" "$PLUGIN" &&
	host_run slow "$PROJ" new "hello while the hook hangs" &&
	# Each call was cut at the plugin'"'"'s timeout, its group killed.
	test "$(grep -c "const TIMEOUT_MS = 5000;" "$PLUGIN")" = 1 &&
	! pgrep -f "$TEST_DIR/slow/pigeon-hook" >/dev/null &&
	PIGEON_HOOK=$TEST_DIR/bad/pigeon-hook "$PIG" install opencode >/dev/null &&
	host_run bad "$PROJ" new "mock-shell: echo hello while the hook fails" &&
	test "$(seen bad "not json" | grep -vc "^0 0$")" = 0 &&
	"$PIG" install opencode >/dev/null
'

# pigeon mcp's scenarios (integration/hosts/mcp.sh): the model calls
# Pigeon's send and wait tools through opencode's MCP client.
. "$hosts_dir/mcp.sh"

test_case 'pigeon uninstall opencode removes exactly what install wrote' '
	"$PIG" uninstall opencode >uninstall.out &&
	grep -q "^removed Pigeon${SQ}s plugin for opencode: deleted $PLUGIN" uninstall.out &&
	test ! -e "$PLUGIN" && test -f "$CONF/plugin/mine.js" &&
	# What opencode itself added to its config directory stays its own.
	tree "$CONF" | grep -v "^./\.gitignore$" >conf.after &&
	test_cmp conf.before conf.after &&
	n=$(hook_lines) &&
	host_run gone "$PROJ" new "no pigeon now" &&
	test "$(hook_lines)" = "$n"
'

mcp_gone

test_done
