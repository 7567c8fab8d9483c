# weblib.sh: sourced after lib.sh by the pigeon web tests (t0961 over
# SQLite, t0710 over PostgreSQL): start a server, request a path.

# web_wait FILE PATTERN: until a line of FILE matches (at most 30 s).
web_wait() {
	ww_i=0
	while [ "$ww_i" -lt 300 ]; do
		grep -q -e "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		ww_i=$((ww_i + 1))
	done
	echo "error: no '$2' in $1 after 30 s" >&9
	return 1
}

# web_start NAME ARGS...: pigeon web --port 0 ARGS in the background;
# its pid in NAME.pid, its URL's parts in NAME.url, NAME.port, NAME.tok.
web_start() {
	ws_n=$1
	shift
	pigeon web --port 0 "$@" >"$ws_n.out" 2>"$ws_n.err" &
	echo $! >"$ws_n.pid"
	bg_track "$(cat "$ws_n.pid")"
	web_wait "$ws_n.out" "^pigeon web: http" || return 1
	sed -n 's/^pigeon web: //p' "$ws_n.out" >"$ws_n.url"
	sed 's|^http://127.0.0.1:\([0-9]*\)/.*|\1|' "$ws_n.url" >"$ws_n.port"
	sed 's|.*token=||' "$ws_n.url" >"$ws_n.tok"
}

# get NAME PATH [CURL ARGS]: status code to ./code, body to ./body.
get() {
	g_n=$1
	g_p=$2
	shift 2
	curl -sS -o body -w "%{http_code}" "$@" \
	    "http://127.0.0.1:$(cat "$g_n.port")$g_p" >code
}
code_is() {
	[ "$(cat code)" = "$1" ] && return 0
	echo "error: status $(cat code), want $1: $(head -c 300 body)" >&9
	return 1
}
tok() {
	cat "$1.tok"
}
