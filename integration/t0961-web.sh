#!/bin/sh
# pigeon web over HTTP with curl (product.md §16, decision 0171): the
# page and every endpoint; the token (missing, wrong, of another
# length: 401) and the Host header (another name or port: 403) on each;
# oversized and malformed requests; read-only without --allow-send, the
# send form with it; events within the second; a replaced database; a
# taken port; SIGTERM. Each wait is bounded by the event it waits for.
. "$(dirname "$0")/lib.sh"

. "$PGN_SRC/integration/weblib.sh"

test_case 'a scope with agents, a thread and hostile text' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon send --from alice --to bob "<script>alert(1)</script> first" >/dev/null &&
	pigeon send --from bob --to alice --reply-to 1 "re: <img src=x onerror=alert(1)>" >/dev/null &&
	pigeon read --agent alice >/dev/null &&
	pigeon lease take --agent bob "src/**" --reason "<b>refactor</b>" >/dev/null
'

test_case 'the URL is printed; the page and its files carry the policy' '
	web_start w &&
	grep -q "^http://127.0.0.1:[0-9]*/?token=[0-9a-f]\{32\}$" w.url &&
	get w "/?token=$(tok w)" -D head && code_is 200 &&
	grep -q "<title>Pigeon</title>" body &&
	grep -qi "^Content-Security-Policy: default-src .none.; script-src .self.;" head &&
	! grep -qi "unsafe-inline" head &&
	grep -qi "^X-Content-Type-Options: nosniff" head &&
	! grep -qi "^Access-Control-Allow" head &&
	grep -qi "^Content-Type: text/html" head &&
	! grep -q "<script>[^<]" body &&
	get w "/app.js?token=$(tok w)" -D head && code_is 200 &&
	grep -qi "^Content-Type: text/javascript" head &&
	grep -q textContent body && ! grep -q innerHTML body &&
	get w "/app.css?token=$(tok w)" && code_is 200
'

test_case 'state: agents with host, state, last seen, queued and leases' '
	get w "/api/state?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".agents | map(.name) | join(\",\")" body)" = "alice,bob" &&
	test "$(jq -r ".agents[1].queued, .agents[1].leases, .agents[0].state" body)" = "1
1
active" &&
	test "$(jq -r ".leases[0].holder, .leases[0].pattern, .leases[0].reason" body)" = "bob
src/**
<b>refactor</b>" &&
	test "$(jq -r ".replaced, .allow_send" body)" = "false
false"
'

test_case 'messages: newest first, by thread, with delivery state, paged by id' '
	get w "/api/messages?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".messages | map(.id) | join(\",\")" body)" = "2,1" &&
	test "$(jq -r ".messages[0].thread, .messages[0].reply_to" body)" = "1
1" &&
	jq -e ".messages[0].delivered > 0 and .messages[1].delivered == null" body >/dev/null &&
	test "$(jq -r ".messages[1].body" body)" = "<script>alert(1)</script> first" &&
	get w "/api/messages?token=$(tok w)&limit=1" && code_is 200 &&
	test "$(jq -r ".next" body)" = 2 &&
	get w "/api/messages?token=$(tok w)&limit=1&before=2" && code_is 200 &&
	test "$(jq -r ".messages[0].id" body)" = 1 &&
	get w "/api/messages?token=$(tok w)&thread=1" && code_is 200 &&
	test "$(jq -r ".messages | length" body)" = 2 &&
	get w "/api/messages?token=$(tok w)&limit=201" && code_is 400 &&
	get w "/api/messages?token=$(tok w)&before=x" && code_is 400
'

test_case 'a message is the object pigeon search --json prints, times in ms, no other name' '
	get w "/api/messages?token=$(tok w)" && code_is 200 &&
	pigeon search --json first >cli.json &&
	test "$(jq -c ".messages[1] | keys_unsorted" body)" = "$(jq -c ".[0] | keys_unsorted" cli.json)" &&
	test "$(jq -c ".messages[1] | del(.created, .delivered)" body)" = \
	    "$(jq -c ".[0] | del(.created, .delivered)" cli.json)" &&
	jq -e ".messages[1].created > 0 and .messages[1].ack_within_ms == null and .messages[1].acknowledged == null" body >/dev/null
'

test_case 'search, audit and the chain verified' '
	get w "/api/search?token=$(tok w)&q=first" && code_is 200 &&
	test "$(jq -r ".messages[0].id" body)" = 1 &&
	get w "/api/search?token=$(tok w)&q=%3Cscript%3E+first" && code_is 200 &&
	test "$(jq -r ".messages | length" body)" = 1 &&
	get w "/api/search?token=$(tok w)" && code_is 400 &&
	get w "/api/search?token=$(tok w)&q=+" && code_is 400 &&
	jq -e ".error | test(\"nothing to search for\")" body >/dev/null &&
	get w "/api/audit?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".deliveries[0].message, .deliveries[0].route" body)" = "2
cli" &&
	get w "/api/verify?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".ok, .rows" body)" = "true
1"
'

test_case 'no token, a wrong one, one of another length: 401 on every path' '
	t=$(tok w) &&
	for p in / /app.js /api/state /api/messages /api/search?q=a /api/audit /api/verify /api/events /nope; do
		case $p in *\?*) s="&" ;; *) s="?" ;; esac
		get w "$p" && code_is 401 || return 1
		get w "$p${s}token=00000000000000000000000000000000" && code_is 401 || return 1
		get w "$p${s}token=${t}0" && code_is 401 || return 1
		get w "$p${s}token=$(printf %s "$t" | cut -c1-31)" && code_is 401 || return 1
		get w "$p${s}token=$t&token=$t" && code_is 401 || return 1
	done &&
	jq -e ".error | test(\"token\")" body >/dev/null
'

test_case 'a Host header other than this address and port: 403' '
	port=$(cat w.port) &&
	for h in "evil.example" "evil.example:$port" "127.0.0.1:$((port + 1))" "127.0.0.1" "localhost.evil:$port" "0.0.0.0:$port"; do
		get w "/api/state?token=$(tok w)" -H "Host: $h" && code_is 403 || return 1
	done &&
	get w "/api/state?token=$(tok w)" -H "Host: localhost:$port" && code_is 200 &&
	get w "/api/state?token=$(tok w)" -H "Origin: http://evil.example" -D head && code_is 200 &&
	! grep -qi "^Access-Control" head
'

test_case 'read-only: no write without --allow-send' '
	before=$(sql "SELECT count(*) FROM message") &&
	get w "/api/send?token=$(tok w)" -X POST -d "from=eve&to=bob&body=hi" && code_is 403 &&
	jq -e ".error | test(\"--allow-send\")" body >/dev/null &&
	for m in PUT DELETE PATCH; do
		get w "/api/state?token=$(tok w)" -X $m && code_is 405 || return 1
	done &&
	get w "/api/state?token=$(tok w)" -X POST -d x=1 && code_is 405 &&
	test "$(sql "SELECT count(*) FROM message")" = "$before"
'

test_case 'oversized and malformed requests are refused, the server goes on' '
	long=$(repeat 4100 a) &&
	get w "/api/search?token=$(tok w)&q=$long" && code_is 400 &&
	get w "/api/state?token=$(tok w)" -H "X-Big: $(repeat 20000 b)" &&
	case $(cat code) in 4*) ;; *) echo "status $(cat code)" >&9; false ;; esac &&
	get w "/api/search?token=$(tok w)&q=%ZZ" && code_is 400 &&
	get w "/api/search?token=$(tok w)&q=%00" && code_is 400 &&
	get w "/api/search?token=$(tok w)&q=%C3" && code_is 400 &&
	get w "/api/search?token=$(tok w)&a=1&b=2&c=3&d=4&e=5&f=6&g=7&q=x" && code_is 401 &&
	get w "/../etc/passwd?token=$(tok w)" --path-as-is && code_is 404 &&
	printf "GARBAGE\r\n\r\n" | timeout 30 curl -sS -o /dev/null -w "%{http_code}" \
	    --data-binary @- -X "BAD METHOD" "http://127.0.0.1:$(cat w.port)/" >code 2>/dev/null;
	get w "/api/state?token=$(tok w)" && code_is 200
'

test_case 'events: a send from the CLI is one change within the second' '
	curl -sS -N "http://127.0.0.1:$(cat w.port)/api/events?token=$(tok w)" >ev &
	echo $! >ev.pid && bg_track "$(cat ev.pid)" &&
	web_wait ev "^: pigeon" &&
	pigeon send --from alice --to bob "live one" >/dev/null &&
	web_wait ev "^event: change" &&
	kill "$(cat ev.pid)"
'

test_case '--allow-send: the form sends as the named person, bad input refused' '
	web_start s --allow-send &&
	get s "/api/state?token=$(tok s)" && code_is 200 &&
	test "$(jq -r .allow_send body)" = true &&
	get s "/api/send?token=$(tok s)" -X POST --data-urlencode "from=carol" \
	    --data-urlencode "to=bob" --data-urlencode "body=<script>x</script> from the page" && code_is 200 &&
	id=$(jq -r ".sent[0]" body) &&
	test "$(sql "SELECT sender || \"|\" || body FROM message WHERE id = $id")" = "carol|<script>x</script> from the page" &&
	get s "/api/send?token=$(tok s)" -X POST -d "from=Bad Name&to=bob&body=x" && code_is 400 &&
	get s "/api/send?token=$(tok s)" -X POST -d "from=carol&to=nobody&body=x" && code_is 400 &&
	get s "/api/send?token=$(tok s)" -X POST -d "to=bob&body=x" && code_is 400 &&
	get s "/api/send?token=$(tok s)" -X POST -H "Content-Type: text/plain" -d "from=a&to=bob&body=x" && code_is 415 &&
	get s "/api/send?token=$(tok s)" -X POST -d "from=a&to=bob&body=$(repeat 9000 x)" && code_is 413 &&
	get s "/api/send?token=$(tok s)" && code_is 405 &&
	get s "/api/send" -X POST -d "from=carol&to=bob&body=x" && code_is 401 &&
	test "$(sql "SELECT count(*) FROM message WHERE sender = \"carol\"")" = 1 &&
	kill "$(cat s.pid)" && bg_wait "$(cat s.pid)"
'

# hold.py PORT N MODE TOKEN: up to N connections to PORT held open
# (each connect given a second: past the server's limit and its listen
# backlog a connect waits); MODE "idle" sends nothing, "proven" sends
# one request with the token on the first (and reads its answer) and
# nothing on the rest, "events" asks each for the event stream, "big"
# asks each for the largest page with a receive buffer of 4 KiB; none
# reads a byte (but the first of "proven"). Prints "held K" once they
# are open, then holds them until a line on stdin.
cat >hold.py <<'PY'
import socket, sys
port, n, mode, tok = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
held = []
for i in range(n):
    s = socket.socket()
    s.settimeout(1)
    if mode == "big":
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        s.connect(("127.0.0.1", port))
    except OSError:
        break
    path = {"events": "/api/events?", "big": "/api/messages?limit=200&"}.get(mode)
    if mode == "proven" and i == 0:
        path = "/api/state?"
    if path:
        s.sendall(b"GET %stoken=%s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path.encode(), tok.encode(), port))
        if mode == "proven":  # its answer read: it showed the token
            got = b""
            while b"\r\n\r\n" not in got:
                s.settimeout(60)
                part = s.recv(4096)
                if not part:
                    break
                got += part
            s.settimeout(1)
    held.append(s)
print("held", len(held), flush=True)
sys.stdin.readline()
PY

# hold NAME N MODE: hold.py against server NAME in the background, fd 7
# its stdin (close it to end the holder); returns once they are held.
hold() {
	rm -f hold.in hold.out && mkfifo hold.in &&
	{ python3 hold.py "$(cat "$1.port")" "$2" "$3" "$(tok "$1")" <hold.in >hold.out & } &&
	echo $! >hold.pid && bg_track "$(cat hold.pid)" &&
	exec 7>hold.in &&
	web_wait hold.out "^held"
}
unhold() {
	echo >&7 && exec 7>&- && bg_wait "$(cat hold.pid)"
}

# threads PID: the number of threads of process PID.
threads() {
	awk "/^Threads:/ { print \$2 }" "/proc/$1/status"
}

# until_code NAME PATH CODE: request PATH of server NAME (1 s each)
# until it answers CODE, at most 60 s.
until_code() {
	uc_i=0
	until { get "$1" "$2" --max-time 1 || :; } && [ "$(cat code)" = "$3" ]; do
		uc_i=$((uc_i + 1))
		[ "$uc_i" -lt 120 ] || { code_is "$3"; return 1; }
		sleep 0.5
	done
}

test_case 'a server on a database of its own for the floods' '
	PIGEON_DB=$PWD/flood.db pigeon agent add alice >/dev/null &&
	PIGEON_DB=$PWD/flood.db pigeon agent add bob >/dev/null &&
	for i in $(seq 40); do
		PIGEON_DB=$PWD/flood.db pigeon send --from alice --to bob "$(repeat 1365 "<&>")" >/dev/null || return 1
	done &&
	web_start f --db "$PWD/flood.db" &&
	threads "$(cat f.pid)" >f.idle
'

# until_threads NAME: until server NAME has no more threads than when
# it started (its connections' threads ended), at most 120 s; the
# seconds waited in ./waited.
until_threads() {
	ut_i=0
	while [ "$(threads "$(cat "$1.pid")")" -gt "$(cat "$1.idle")" ] &&
	    [ "$ut_i" -lt 1200 ]; do
		sleep 0.1
		ut_i=$((ut_i + 1))
	done
	echo $((ut_i / 10)) >waited
	[ "$(threads "$(cat "$1.pid")")" -le "$(cat "$1.idle")" ]
}

test_case 'a flood of requests: all answered or refused, the server goes on' '
	seq 400 | xargs -P 32 -I{} curl -s -o /dev/null -w "%{http_code}\n" \
	    "http://127.0.0.1:$(cat f.port)/api/state?token=$(tok f)" >flood.codes 2>/dev/null;
	test "$(wc -l <flood.codes)" = 400 &&
	test_note "$(sort flood.codes | uniq -c | tr -s " \n" "  ")" &&
	test "$(grep -c "^200$" flood.codes)" -ge 1 &&
	! grep -v "^200$\|^000$\|^503$" flood.codes &&
	get f "/api/state?token=$(tok f)" && code_is 200
'

# until_threads_are NAME K: until server NAME has K threads more than
# when it started, at most 120 s.
until_threads_are() {
	uta_i=0
	while [ "$(threads "$(cat "$1.pid")")" -ne $(($(cat "$1.idle") + $2)) ] &&
	    [ "$uta_i" -lt 1200 ]; do
		sleep 0.1
		uta_i=$((uta_i + 1))
	done
	[ "$(threads "$(cat "$1.pid")")" -eq $(($(cat "$1.idle") + $2)) ]
}

test_case 'a flood of connections without the token: the page served, strangers closed first' '
	until_threads f &&
	hold f 200 proven &&
	get f "/api/state?token=$(tok f)" && code_is 200 &&
	n=$(threads "$(cat f.pid)") &&
	test_note "$(cat hold.out) connections: $n threads in pigeon web (idle: $(cat f.idle))" &&
	test "$(cut -d" " -f2 hold.out)" -ge 64 &&
	test "$n" -le $((48 + $(cat f.idle))) &&
	until_threads_are f 1 &&
	test_note "the silent ones closed, the one that showed the token still open" &&
	unhold &&
	until_threads f &&
	until_code f "/api/state?token=$(tok f)" 200
'

test_case 'clients that never read: 16 event streams at most, a big page closed after the timeout' '
	hold f 16 events &&
	until_code f "/api/events?token=$(tok f)" 503 &&
	get f "/api/state?token=$(tok f)" && code_is 200 &&
	unhold &&
	until_code f "/api/events?token=$(tok f)" 200 &&
	until_threads f &&
	hold f 4 big &&
	test "$(threads "$(cat f.pid)")" -gt "$(cat f.idle)" &&
	get f "/api/state?token=$(tok f)" && code_is 200 &&
	until_threads f &&
	test_note "4 clients not reading a page: their connections closed after $(cat waited) s" &&
	unhold &&
	kill "$(cat f.pid)"
'

test_case 'a taken port: one error line naming it, exit 1' '
	expect_error 1 "port $(cat w.port) of 127.0.0.1 is taken" \
	    pigeon web --port "$(cat w.port)" &&
	expect_error 2 "--port" pigeon web --port 70000 &&
	expect_error 2 "no argument" pigeon web extra
'

test_case 'a database replaced underneath: the state and the events say so' '
	curl -sS -N "http://127.0.0.1:$(cat w.port)/api/events?token=$(tok w)" >ev2 &
	echo $! >ev2.pid && bg_track "$(cat ev2.pid)" &&
	web_wait ev2 "^: pigeon" &&
	PIGEON_DB=$PWD/other.db pigeon agent add zed >/dev/null &&
	mv other.db "$DB" &&
	web_wait ev2 "^event: replaced" &&
	get w "/api/state?token=$(tok w)" && code_is 200 &&
	test "$(jq -r .replaced body)" = true &&
	kill "$(cat ev2.pid)"
'

test_case '--open hands the browser a private file, never the token' '
	mkdir -p fakebin &&
	printf "#!/bin/sh\nprintf \"%%s\\\\n\" \"\$@\" >\"%s/xdg.args\"\n" "$PWD" >fakebin/xdg-open &&
	chmod +x fakebin/xdg-open &&
	PATH=$PWD/fakebin:$PATH web_start o --open &&
	web_wait xdg.args "web-open.html" &&
	page=$(cat xdg.args) &&
	! grep -q "$(tok o)" xdg.args &&
	test "$(stat -c %a "$page")" = 600 &&
	grep -q "url=$(cat o.url)" "$page" &&
	kill -TERM "$(cat o.pid)" &&
	bg_wait "$(cat o.pid)" &&
	test ! -e "$page"
'

test_case 'SIGTERM and SIGINT stop it cleanly: exit 0, the port free again' '
	for sig in TERM INT; do
		web_start t || return 1
		curl -sS -N "http://127.0.0.1:$(cat t.port)/api/events?token=$(tok t)" >ev3 &
		echo $! >ev3.pid && bg_track "$(cat ev3.pid)" &&
		web_wait ev3 "^: pigeon" &&
		kill -$sig "$(cat t.pid)" &&
		bg_wait "$(cat t.pid)" &&
		{ bg_wait "$(cat ev3.pid)" || true; } &&
		grep -q "^pigeon web: stopped$" t.out &&
		test ! -s t.err &&
		! curl -sS -o /dev/null "http://127.0.0.1:$(cat t.port)/" 2>/dev/null ||
		return 1
	done
'

test_done
