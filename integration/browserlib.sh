# browserlib.sh: sourced after lib.sh by the browser tests (t0962 over
# SQLite, t0712 over PostgreSQL): Debian's headless Chromium driven
# through chromedriver's WebDriver API with curl. Sourcing it skips the
# script when chromium or chromedriver is missing (exit BROWSER_SKIP,
# 0 unless set; CI=true fails instead).

if ! command -v chromium >/dev/null 2>&1 ||
    ! command -v chromedriver >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then
		echo "error: chromium or chromedriver missing (scripts/deps installs them)"
		exit 1
	fi
	echo "1..0 # SKIP chromium or chromedriver missing (scripts/deps installs them)"
	trap - EXIT
	cd / && rm -rf "$TEST_DIR"
	exit "${BROWSER_SKIP:-0}"
fi
export HOME # chromium's profile and crash dirs stay in the test's home

# until_ok SECONDS CMD...: run CMD every 0.1 s until it succeeds.
until_ok() {
	uo_n=$(($1 * 10))
	shift
	while [ "$uo_n" -gt 0 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		uo_n=$((uo_n - 1))
	done
	echo "error: '$*' did not succeed in time" >&9
	return 1
}

wd() { # METHOD PATH [JSON]: chromedriver's answer in ./wd.json
	curl -sS --max-time 120 -X "$1" -H "Content-Type: application/json" \
	    ${3:+-d "$3"} "http://127.0.0.1:$(cat cd.port)$2" >wd.json
}
js() { # SCRIPT: its value (a string) in ./js.out
	wd POST "/session/$(cat sid)/execute/sync" \
	    "$(jq -cn --arg s "$1" '{script: $s, args: []}')" &&
	jq -r '.value' wd.json >js.out
}
js_has() { # SCRIPT TEXT: the script's value contains TEXT
	js "$1" && grep -qF -e "$2" js.out
}
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
	    echo $((20000 + $$ % 20000))
}

# browser_start WIDTH,HEIGHT: chromedriver on a free port (cd.port,
# cd.pid) and a headless session of that window size (./sid).
browser_start() {
	free_port >cd.port || return 1
	chromedriver --port="$(cat cd.port)" >cd.log 2>&1 &
	echo $! >cd.pid && bg_track "$(cat cd.pid)" &&
	until_ok 60 sh -c "curl -s http://127.0.0.1:$(cat cd.port)/status | grep -q \"\\\"ready\\\":true\"" &&
	wd POST /session "{\"capabilities\":{\"alwaysMatch\":{\"goog:chromeOptions\":{\"binary\":\"$(command -v chromium)\",\"args\":[\"--headless=new\",\"--no-sandbox\",\"--disable-gpu\",\"--disable-dev-shm-usage\",\"--no-first-run\",\"--user-data-dir=$TEST_DIR/profile\",\"--window-size=$1\"]}}}}" &&
	jq -r ".value.sessionId" wd.json >sid &&
	test -s sid && test "$(cat sid)" != null
}

# browser_go URL: the session loads URL.
browser_go() {
	wd POST "/session/$(cat sid)/url" "$(jq -cn --arg u "$1" "{url: \$u}")"
}

# browser_shot FILE: a screenshot of the window into FILE (a PNG).
browser_shot() {
	wd GET "/session/$(cat sid)/screenshot" &&
	jq -r .value wd.json | base64 -d >"$1" &&
	test "$(head -c 8 "$1" | od -An -tx1 | tr -d " ")" = 89504e470d0a1a0a
}

# browser_stop: the session and chromedriver end.
browser_stop() {
	wd DELETE "/session/$(cat sid)" &&
	kill "$(cat cd.pid)"
}
