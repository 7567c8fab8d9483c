#!/bin/sh
# pigeon web on PostgreSQL in a real browser (product.md §16, decisions
# 0221, 0241): Debian's headless Chromium against a pigeon web whose
# scope is on the test server. The page loads with the agents (two
# bound by their hosts' session hooks), a thread with its delivery and
# acknowledgement, and the leases; a send from the CLI appears without
# a reload (LISTEN/NOTIFY, then the page's event stream); another
# client's insert too. A screenshot of the page is kept:
# $PGN_BIN/web-page-pg.png (docs/web.png is a copy). Every wait is
# bounded by the event it waits for (at most 60 s).
. "$(dirname "$0")/lib.sh"
BROWSER_SKIP=77
. "$PGN_SRC/integration/browserlib.sh"
. "$PGN_SRC/integration/pglib.sh"

SHOT=$PGN_BIN/web-page-pg.png

# page_says: the page's live badge and error line, to the case's output
# (what a failed wait saw).
page_says() {
	js "return \"live: \" + document.getElementById(\"live\").textContent + \"; error: \" + document.getElementById(\"error\").textContent" &&
	cat js.out >&9
	return 1
}
PAYLOADS=$PGN_SRC/tests/fixtures/payloads

# session HOST AGENT SID: AGENT's session of HOST starts (its hook).
session() {
	fixture_payload "$PAYLOADS/$1/01-SessionStart-startup.json" \
	    "$TEST_DIR" "$3" >"$3.json" &&
	PIGEON_AGENT=$2 pigeon-hook "$1" SessionStart <"$3.json" >/dev/null
}

test_case 'a scope on the server: agents in sessions, a thread, leases' '
	session claude reviewer s-reviewer &&
	session codex builder s-builder &&
	pigeon agent add tester >/dev/null &&
	pigeon send --from reviewer --to builder --ack \
	    "The API moved to v2: rebase the parser before you push" >/dev/null &&
	pigeon read --agent builder >/dev/null &&
	pigeon send --from builder --to reviewer --reply-to 1 \
	    "Rebased on v2; the parser tests pass" >/dev/null &&
	pigeon read --agent reviewer >/dev/null &&
	pigeon send --from reviewer --to tester \
	    "Run the integration suite on v2 once builder pushes" >/dev/null &&
	pigeon lease take --agent builder "src/parser/**" \
	    --reason "moving the parser to the v2 API" >/dev/null &&
	pigeon lease take --agent reviewer --shared "docs/api.md" \
	    --reason "reviewing the v2 notes" >/dev/null &&
	pg_sql_is "SELECT count(*) FROM agent" 3 &&
	pg_sql_is "SELECT acked_ms > 0 FROM message WHERE id = 1" t
'

test_case 'pigeon web on the server and chromedriver start' '
	pigeon web --port 0 >web.out 2>web.err &
	echo $! >web.pid && bg_track "$(cat web.pid)" &&
	until_ok 60 grep -q "^pigeon web: http" web.out &&
	sed -n "s/^pigeon web: //p" web.out >url &&
	browser_start 1100,960
'

test_case 'the page loads: agents, leases and the thread in the DOM' '
	browser_go "$(cat url)" &&
	until_ok 60 js_has "return document.querySelector(\"#agents tbody\").innerText" reviewer &&
	js_has "return document.querySelector(\"#agents tbody\").innerText" builder &&
	js_has "return document.querySelector(\"#agents tbody\").innerText" tester &&
	js_has "return document.querySelector(\"#agents tbody\").innerText" claude &&
	js_has "return document.querySelector(\"#agents tbody\").innerText" codex &&
	until_ok 60 js_has "var t = document.getElementById(\"thread-1\"); return t ? t.innerText : \"\"" "the parser tests pass" &&
	js_has "return document.getElementById(\"thread-1\").innerText" "The API moved to v2" &&
	js_has "return document.querySelector(\"#msg-1 .ack\").textContent" acknowledged &&
	js_has "return document.querySelector(\"#msg-3 .delivery\").textContent" queued &&
	js_has "return document.querySelector(\"#leases tbody\").innerText" "src/parser/**" &&
	js_has "return document.querySelector(\"#leases tbody\").innerText" shared &&
	until_ok 60 js_has "return document.getElementById(\"live\").textContent" live
'

test_case 'a send from the CLI appears without a reload' '
	js "window.pigeonMark = 42; return \"set\"" &&
	pigeon send --from builder --to reviewer --reply-to 2 \
	    "Pushed v2: ready for your review" >/dev/null &&
	{ until_ok 60 js_has "return document.getElementById(\"thread-1\").innerText" "ready for your review" || page_says; } &&
	js "return String(window.pigeonMark)" && test "$(cat js.out)" = 42 &&
	pg_sql_is "SELECT thread FROM message WHERE id = 4" 1
'

test_case 'a screenshot of the page is kept' '
	browser_shot "$SHOT" &&
	test_note "screenshot: $SHOT"
'

test_case 'a row another client inserts appears too' '
	pg_sql "INSERT INTO message(scope_id, sender, recipient_id, body, created_ms)
		SELECT scope_id, $SQ""tester$SQ, id, $SQ""from another client$SQ,
		(extract(epoch from now()) * 1000)::bigint FROM agent
		WHERE name = $SQ""reviewer$SQ" &&
	{ until_ok 60 js_has "return document.getElementById(\"threads\").innerText" "from another client" || page_says; } &&
	js "return String(window.pigeonMark)" && test "$(cat js.out)" = 42
'

test_case 'without the token the browser gets 401 and no page' '
	browser_go "$(sed "s/?token=.*//" url)" &&
	until_ok 60 js_has "return document.body.innerText" "token" &&
	js "return String(document.getElementById(\"agents\"))" && test "$(cat js.out)" = null
'

test_case 'the browser and the server stop' '
	browser_stop &&
	kill "$(cat web.pid)" &&
	until_ok 60 grep -q "^pigeon web: stopped" web.out &&
	until_ok 60 sh -c "! kill -0 $(cat web.pid) && ! kill -0 $(cat cd.pid)"
'

test_done
