#!/bin/sh
# pigeon web in a real browser (product.md §16, decision 0171): Debian's
# headless Chromium, driven through chromedriver's WebDriver API with
# curl, against a running pigeon web on a throwaway database. The page
# loads; the agents and a thread are in the DOM; a send from the CLI
# appears without a reload; each message's delivery, doorbell and
# acknowledgement state; the XSS corpus stays text (no element, no
# script run, the layout holds); without the token the browser gets
# 401. A screenshot of the page is kept: $PGN_BIN/web-page.png. Every
# wait is bounded by the event it waits for (at most 60 s).
. "$(dirname "$0")/lib.sh"

. "$PGN_SRC/integration/browserlib.sh"

SHOT=$PGN_BIN/web-page.png

test_case 'a scope with agents, a thread and the XSS corpus' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon send --from alice --to bob "can you review the parser?" >/dev/null &&
	pigeon send --from bob --to alice --reply-to 1 "on it" >/dev/null &&
	pigeon read --agent alice >/dev/null &&
	pigeon send --from alice --to bob "<script>window.pwned=1</script>xss-script" >/dev/null &&
	pigeon send --from alice --to bob "<img src=x onerror=\"window.pwned=2\">xss-img" >/dev/null &&
	pigeon send --from alice --to bob "<a href=\"javascript:window.pwned=3\">xss-link</a>" >/dev/null &&
	pigeon send --from alice --to bob "$(printf "xss-bidi \342\200\256evil\342\200\254 end")" >/dev/null &&
	pigeon send --from alice --to bob "xss-long $(repeat 4000 W)" >/dev/null &&
	pigeon send --from alice --to bob --ack "please ack this" >/dev/null &&
	pigeon read --agent bob >/dev/null &&
	pigeon ack --from bob 8 "done" >/dev/null &&
	pigeon send --from alice --to bob --ack --ack-within 1h "ack me later" >/dev/null &&
	pigeon send --from alice --to bob "rung and heard" >/dev/null &&
	pigeon send --from alice --to bob "rung, never heard" >/dev/null &&
	now=$(($(date +%s) * 1000)) &&
	sql "UPDATE message SET woken_ms = $now, woken_via = $SQ""claude-socket$SQ WHERE id = 10" &&
	sql "UPDATE message SET woken_ms = $((now - 200000)), woken_via = $SQ""claude-socket$SQ WHERE id = 11" &&
	pigeon send --from alice --to bob "$(printf "\342\200\256bidi-open never closed")" >/dev/null &&
	alef=$(printf "\327\220") &&
	pigeon send --from alice --to bob "$(printf "\342\200\217\342\200\256")$(repeat 2045 "$alef")" >/dev/null &&
	pigeon send --from alice --to bob "$(repeat 4096 y)" >/dev/null &&
	test "$(sql "SELECT group_concat(length(CAST(body AS BLOB))) FROM message WHERE id >= 13")" = "4096,4096" &&
	pigeon lease take --agent bob "src/parser/**" --reason "$(printf "\342\200\256<i>review</i>")" >/dev/null
'

test_case 'pigeon web and chromedriver start' '
	pigeon web --port 0 >web.out 2>web.err &
	echo $! >web.pid && bg_track "$(cat web.pid)" &&
	until_ok 60 grep -q "^pigeon web: http" web.out &&
	sed -n "s/^pigeon web: //p" web.out >url &&
	browser_start 1280,1000
'

test_case 'the page loads: agents, leases and a thread in the DOM' '
	wd POST "/session/$(cat sid)/url" "$(jq -cn --arg u "$(cat url)" "{url: \$u}")" &&
	until_ok 60 js_has "return document.querySelector(\"#agents tbody\").innerText" alice &&
	js_has "return document.querySelector(\"#agents tbody\").innerText" bob &&
	until_ok 60 js_has "return document.getElementById(\"thread-1\") ? document.getElementById(\"thread-1\").innerText : \"\"" "on it" &&
	js_has "return document.getElementById(\"thread-1\").innerText" "can you review the parser?" &&
	js_has "return document.querySelector(\"#leases tbody\").innerText" "<i>review</i>" &&
	until_ok 60 js_has "return document.getElementById(\"live\").textContent" live
'

test_case 'the XSS corpus stays text: no element made, no script run, the layout holds' '
	js_has "return document.getElementById(\"threads\").innerText" "<script>window.pwned=1</script>xss-script" &&
	js_has "return document.getElementById(\"threads\").innerText" "<img src=x onerror=\"window.pwned=2\">xss-img" &&
	js_has "return document.getElementById(\"threads\").innerText" "javascript:window.pwned=3" &&
	js_has "return document.getElementById(\"threads\").innerText" "xss-bidi" &&
	js_has "return String(document.querySelectorAll(\"main script, main img, main a, main iframe\").length)" 0 &&
	js "return String(window.pwned)" && test "$(cat js.out)" = undefined &&
	js "return String(document.documentElement.scrollWidth <= window.innerWidth)" &&
	test "$(cat js.out)" = true
'

test_case 'each message shows its delivery, doorbell and acknowledgement' '
	until_ok 60 js_has "var e = document.querySelector(\"#msg-14\"); return e ? e.innerText : \"\"" yyyy &&
	js_has "return document.querySelector(\"#msg-8 .ack\").textContent" "acknowledged" &&
	js_has "return document.querySelector(\"#msg-8 .delivery\").textContent" "delivered" &&
	js_has "return document.querySelector(\"#msg-9 .ack\").textContent" "ack asked within 3600s" &&
	js_has "return document.querySelector(\"#msg-9 .delivery\").textContent" "queued" &&
	js_has "return document.querySelector(\"#msg-10 .wake\").textContent" "woken" &&
	js_has "return document.querySelector(\"#msg-10 .wake\").textContent" "by claude-socket" &&
	js "return document.querySelector(\"#msg-10 .wake\").className" &&
	grep -q state-woken js.out &&
	js_has "return document.querySelector(\"#msg-11 .wake\").textContent" "unheard" &&
	js "return String(document.querySelector(\"#msg-1 .wake\") === null && document.querySelector(\"#msg-1 .ack\") === null)" &&
	test "$(cat js.out)" = true
'

test_case 'bidi overrides stay in their field: dir=auto, isolated, the order around them holds' '
	js "var f = document.querySelectorAll(\".msg .body, .msg .from, .msg .to, #agents td > *, #leases td > *, #audit td > *\"); var bad = 0; f.forEach(function (e) { var u = getComputedStyle(e).unicodeBidi; if (e.dir !== \"auto\" || (u !== \"isolate\" && u !== \"plaintext\")) bad++; }); return f.length + \" \" + bad" &&
	test "$(cut -d" " -f2 js.out)" = 0 && test "$(cut -d" " -f1 js.out)" -gt 30 &&
	js "var bad = []; document.querySelectorAll(\".msg .meta\").forEach(function (m) { var x = -1; Array.prototype.forEach.call(m.children, function (c) { var l = c.getBoundingClientRect().left; if (l <= x) bad.push(m.parentNode.id); x = l; }); }); return bad.join(\",\") || \"none\"" &&
	test "$(cat js.out)" = none &&
	js "var bad = []; document.querySelectorAll(\"#leases tr, #agents tr, #audit tr\").forEach(function (tr) { var x = -1; Array.prototype.forEach.call(tr.cells, function (c) { var l = c.getBoundingClientRect().left; if (l <= x) bad.push(tr.rowIndex); x = l; }); }); return bad.join(\",\") || \"none\"" &&
	test "$(cat js.out)" = none &&
	js "var b = document.querySelector(\"#msg-13 .body\"), t = b.closest(\".thread\").getBoundingClientRect(), r = b.getBoundingClientRect(); return [getComputedStyle(b).direction, r.left >= t.left, r.right <= t.right].join(\" \")" &&
	test "$(cat js.out)" = "rtl true true" &&
	js "return getComputedStyle(document.querySelector(\"#msg-12 .meta\")).direction" &&
	test "$(cat js.out)" = ltr
'

test_case 'a 4 KiB line wraps inside its box; the page never scrolls sideways' '
	for id in 7 13 14; do
		js "var b = document.querySelector(\"#msg-$id .body\"); return [b.scrollWidth <= b.clientWidth + 1, b.clientHeight <= 13 * parseFloat(getComputedStyle(b).fontSize), b.textContent.length > 2000].join(\" \")" &&
		test "$(cat js.out)" = "true true true" || return 1
	done &&
	js "return String(document.documentElement.scrollWidth <= window.innerWidth)" &&
	test "$(cat js.out)" = true
'

test_case 'a send from the CLI appears without a reload' '
	js "window.pigeonMark = 42; return \"set\"" &&
	pigeon send --from bob --to alice --reply-to 2 "live from the cli" >/dev/null &&
	until_ok 60 js_has "return document.getElementById(\"threads\").innerText" "live from the cli" &&
	js "return String(window.pigeonMark)" && test "$(cat js.out)" = 42
'

# streams N: event streams held open with curl until N stream; their
# pids in streams.pids (the server refuses past its 16: those curls end
# at once, and another is started, at most 60 tries).
streams() {
	: >streams.pids
	st_n=0
	st_try=0
	while [ "$st_n" -lt "$1" ]; do
		st_try=$((st_try + 1))
		[ "$st_try" -le 60 ] || { echo "error: $st_n streams only" >&9; return 1; }
		curl -sS -N -o "ev$st_try" "$(sed "s|/?token=|/api/events?token=|" url)" 2>/dev/null &
		st_pid=$!
		bg_track "$st_pid"
		until grep -q "^: pigeon" "ev$st_try" 2>/dev/null || ! kill -0 "$st_pid" 2>/dev/null; do
			sleep 0.1
		done
		if grep -q "^: pigeon" "ev$st_try"; then
			echo "$st_pid" >>streams.pids
			st_n=$((st_n + 1))
		fi
	done
}

test_case 'a page refused its live updates (all 16 streams taken) gets them once one is free' '
	wd POST "/session/$(cat sid)/url" "{\"url\": \"about:blank\"}" &&
	streams 16 &&
	wd POST "/session/$(cat sid)/url" "$(jq -cn --arg u "$(cat url)" "{url: \$u}")" &&
	until_ok 60 js_has "return document.getElementById(\"threads\").innerText" "live from the cli" &&
	until_ok 60 js_has "return document.getElementById(\"live\").textContent" reconnecting &&
	kill $(cat streams.pids) &&
	until_ok 60 js_has "return document.getElementById(\"live\").textContent" live &&
	pigeon send --from bob --to alice --reply-to 2 "after the reconnection" >/dev/null &&
	until_ok 60 js_has "return document.getElementById(\"threads\").innerText" "after the reconnection"
'

test_case 'a screenshot of the page is kept' '
	browser_shot "$SHOT" &&
	test_note "screenshot: $SHOT"
'

test_case 'without the token the browser gets 401 and no page' '
	wd POST "/session/$(cat sid)/url" "$(jq -cn --arg u "$(sed "s/?token=.*//" url)" "{url: \$u}")" &&
	until_ok 60 js_has "return document.body.innerText" "token" &&
	js "return String(document.getElementById(\"agents\"))" && test "$(cat js.out)" = null &&
	js "return fetch(\"/api/state\").then(function (r) { return String(r.status); })" &&
	test "$(cat js.out)" = 401
'

test_case 'the browser and the server stop' '
	browser_stop &&
	kill "$(cat web.pid)" &&
	until_ok 60 grep -q "^pigeon web: stopped" web.out &&
	until_ok 60 sh -c "! kill -0 $(cat web.pid) && ! kill -0 $(cat cd.pid)"
'

test_done
