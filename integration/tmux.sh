# tmux.sh: sourced after lib.sh by tests that drive a real terminal.
#
#	term_start CMD...       a 100x30 tmux session "t" running CMD
#	term_keys KEYS...       tmux send-keys (Enter, C-c, q, ...)
#	term_type TEXT          TEXT typed literally
#	term_screen             what the terminal shows now
#	term_wait WHAT TEXT     poll until the screen has TEXT (grep -F);
#	                        generous overall limit, never a timing claim
#	term_lacks WHAT TEXT    poll until it no longer has TEXT
#	term_stop               kill the server
# The server's socket is in $TEST_DIR, so nothing outside the test is hit.

if ! command -v tmux >/dev/null 2>&1; then
	echo "Bail out! tmux is missing: scripts/deps installs it" >&2
	exit 2
fi
TERM_SOCK=$TEST_DIR/tmux.sock
TERM_LIMIT=${TERM_LIMIT:-300} # tenths of a second term_wait polls at most

term_start() {
	tmux -S "$TERM_SOCK" -f /dev/null new-session -d -s t -x 100 -y 30 \
	    -c "$TEST_DIR" "$@"
}

term_keys() {
	tmux -S "$TERM_SOCK" send-keys -t t "$@"
}

term_type() {
	tmux -S "$TERM_SOCK" send-keys -t t -l -- "$1"
}

term_screen() {
	tmux -S "$TERM_SOCK" capture-pane -p -t t
}

# term_wait WHAT TEXT: WHAT names the step in the error.
term_wait() {
	tw_i=0
	while ! term_screen 2>/dev/null | grep -qF -e "$2"; do
		tw_i=$((tw_i + 1))
		if [ "$tw_i" -ge "$TERM_LIMIT" ]; then
			echo "error: $1: the terminal never showed '$2':" >&9
			term_screen >&9 2>&1
			return 1
		fi
		sleep 0.1
	done
}

# term_lacks WHAT TEXT: poll until the screen no longer has TEXT.
term_lacks() {
	tw_i=0
	while term_screen 2>/dev/null | grep -qF -e "$2"; do
		tw_i=$((tw_i + 1))
		if [ "$tw_i" -ge "$TERM_LIMIT" ]; then
			echo "error: $1: the terminal still shows '$2':" >&9
			term_screen >&9 2>&1
			return 1
		fi
		sleep 0.1
	done
}

term_stop() {
	tmux -S "$TERM_SOCK" kill-server 2>/dev/null
	return 0
}
