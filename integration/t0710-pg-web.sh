#!/bin/sh
# pigeon web on PostgreSQL (product.md §16, decisions 0171, 0221): the
# page and every data endpoint answer from a real server (search through
# its full-text index), each message's doorbell and acknowledgement
# state included; a send from the CLI reaches an open event stream as
# one change through LISTEN/NOTIFY, as does a row another client
# inserts; read-only without --allow-send, and the send form writes
# with it. Each wait is bounded by the event it waits for.
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"
. "$PGN_SRC/integration/weblib.sh"

test_case 'a scope on the server: agents, a thread, an ack, a ring' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon send --from alice --to bob --ack "review the <b>parser</b>" >/dev/null &&
	pigeon send --from bob --to alice --reply-to 1 "on it" >/dev/null &&
	pigeon read --agent alice >/dev/null &&
	pigeon read --agent bob >/dev/null &&
	pigeon ack --from bob 1 "done" >/dev/null &&
	pigeon send --from alice --to bob "rung and heard" >/dev/null &&
	pigeon send --from alice --to bob "rung, never heard" >/dev/null &&
	now=$(($(date +%s) * 1000)) &&
	pg_sql "UPDATE message SET woken_ms = $now, woken_via = $SQ""claude-socket$SQ WHERE id = 3" &&
	pg_sql "UPDATE message SET woken_ms = $((now - 200000)), woken_via = $SQ""claude-socket$SQ WHERE id = 4" &&
	pigeon lease take --agent bob "src/**" --reason "refactor" >/dev/null
'

test_case 'the page and every data endpoint answer' '
	web_start w &&
	get w "/?token=$(tok w)" && code_is 200 && grep -q "<title>Pigeon</title>" body &&
	get w "/api/state?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".agents | map(.name) | join(\",\")" body)" = "alice,bob" &&
	test "$(jq -r ".queued, .agents[1].queued, .agents[1].leases, .leases[0].pattern" body)" = "2
2
1
src/**" &&
	get w "/api/messages?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".messages | map(.id) | join(\",\")" body)" = "4,3,2,1" &&
	test "$(jq -r ".messages[3].acknowledged > 0, .messages[3].ack_within_ms > 0, .messages[2].thread" body)" = "true
true
1" &&
	get w "/api/messages?token=$(tok w)&limit=2&before=3" && code_is 200 &&
	test "$(jq -r "(.messages | map(.id) | join(\",\")), .next" body)" = "2,1
1" &&
	get w "/api/search?token=$(tok w)&q=parser" && code_is 200 &&
	test "$(jq -r ".messages | map(.id) | join(\",\")" body)" = 1 &&
	get w "/api/audit?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".deliveries | length" body)" = 2 &&
	get w "/api/verify?token=$(tok w)" && code_is 200 &&
	test "$(jq -r ".ok, .rows" body)" = "true
2" &&
	get w "/api/state" && code_is 401
'

test_case 'each message says whether its send rang and was heard' '
	get w "/api/messages?token=$(tok w)&limit=2" && code_is 200 &&
	test "$(jq -r ".messages[1] | [.id, .woken > 0, .woken_via, .heard] | join(\" \")" body)" = "3 true claude-socket true" &&
	test "$(jq -r ".messages[0] | [.id, .woken > 0, .woken_via, .heard] | join(\" \")" body)" = "4 true claude-socket false" &&
	get w "/api/messages?token=$(tok w)&before=3" && code_is 200 &&
	test "$(jq -c ".messages[0] | [.woken, .woken_via, .heard]" body)" = "[null,null,false]"
'

test_case 'a send from the CLI is one change on the stream (LISTEN/NOTIFY)' '
	curl -sS -N "http://127.0.0.1:$(cat w.port)/api/events?token=$(tok w)" >ev &
	echo $! >ev.pid && bg_track "$(cat ev.pid)" &&
	web_wait ev "^: pigeon" &&
	! grep -q "^event:" ev &&
	pigeon send --from alice --to bob "live over the server" >/dev/null &&
	web_wait ev "^event: change" &&
	get w "/api/messages?token=$(tok w)&limit=1" && code_is 200 &&
	test "$(jq -r ".messages[0].body" body)" = "live over the server"
'

test_case 'a message inserted by another client (psql) is a change too' '
	n=$(grep -c "^event: change" ev) &&
	pg_sql "INSERT INTO message(scope_id, sender, recipient_id, body, created_ms)
		SELECT scope_id, $SQ""alice$SQ, id, $SQ""from another client$SQ, 1 FROM agent
		WHERE name = $SQ""bob$SQ" &&
	i=0 &&
	while [ "$(grep -c "^event: change" ev)" -le "$n" ] && [ "$i" -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done &&
	test "$(grep -c "^event: change" ev)" -gt "$n" &&
	kill "$(cat ev.pid)"
'

test_case 'read-only without --allow-send; the form writes with it' '
	before=$(pg_sql "SELECT count(*) FROM message") &&
	get w "/api/send?token=$(tok w)" -X POST -d "from=carol&to=bob&body=hi" && code_is 403 &&
	test "$(pg_sql "SELECT count(*) FROM message")" = "$before" &&
	web_start s --allow-send &&
	get s "/api/send?token=$(tok s)" -X POST --data-urlencode "from=carol" \
	    --data-urlencode "to=bob" --data-urlencode "body=from the page" && code_is 200 &&
	id=$(jq -r ".sent[0]" body) &&
	pg_sql_is "SELECT sender || $SQ|$SQ || body FROM message WHERE id = $id" "carol|from the page"
'

test_case 'SIGTERM stops both servers cleanly' '
	kill -TERM "$(cat w.pid)" "$(cat s.pid)" &&
	web_wait w.out "^pigeon web: stopped$" &&
	web_wait s.out "^pigeon web: stopped$" &&
	test ! -s w.err && test ! -s s.err
'

test_done
