# integration/hosts/lib.sh: sourced by integration/t05NN-host-HOST.sh
# (with HOST set to claude, codex, gemini or copilot) before anything else.
#
# Installs the pinned host CLI if the cache lacks it (integration/hosts/
# install), then sources integration/lib.sh (fresh $TEST_DIR, HOME,
# PIGEON_HOME) and starts the mock model server on a free port of
# 127.0.0.1. If the host cannot be installed, the script is skipped
# (exit 77, which CTest reports as skipped), except when CI=true, where
# it fails.
#
# host_run runs one non-interactive turn of the real host, with
# $HOME/.claude (CLAUDE_CONFIG_DIR), $HOME/.codex (CODEX_HOME) or
# $HOME/.gemini as its configuration, and records which lines of the
# mock's request log the turn added. The helpers after it assert on
# those requests with jq (integration/hosts/log.jq).

hosts_dir=$(cd "$(dirname "$0")/hosts" && pwd -P) || exit 2
# The cache is named from the real HOME: lib.sh replaces HOME below.
hosts_cache=${PIGEON_HOSTS_CACHE:-${HOME:-/nonexistent}/.cache/pigeon-hosts}
if ! hosts_why=$(PIGEON_HOSTS_CACHE=$hosts_cache \
    "$hosts_dir/install" "$HOST" 2>&1 >/dev/null); then
	if [ "${CI:-}" = true ]; then
		echo "Bail out! CI=true and $HOST cannot be installed: $hosts_why"
		exit 1
	fi
	echo "# SKIPPED real-host scenarios for $HOST: $hosts_why"
	exit 77
fi
. "$hosts_dir/versions"
# host_bin H: HOST_BIN, HOST_CACHE and HOST_XDG_CACHE of host H's cache.
host_bin() {
	case $1 in
	claude) HOST_BIN=$hosts_cache/$PGN_CLAUDE_PKG@$PGN_CLAUDE_VERSION ;;
	codex) HOST_BIN=$hosts_cache/$PGN_CODEX_PKG@$PGN_CODEX_VERSION ;;
	gemini) HOST_BIN=$hosts_cache/$PGN_GEMINI_PKG@$PGN_GEMINI_VERSION ;;
	copilot) HOST_BIN=$hosts_cache/$PGN_COPILOT_PKG@$PGN_COPILOT_VERSION ;;
	opencode) HOST_BIN=$hosts_cache/$PGN_OPENCODE_PKG@$PGN_OPENCODE_VERSION ;;
	esac
	# Copilot CLI's unpacked JavaScript (integration/hosts/install).
	HOST_XDG_CACHE=$HOST_BIN/xdg-cache
	HOST_CACHE=$HOST_BIN
	HOST_BIN=$HOST_BIN/node_modules/.bin/$1
}
host_bin "$HOST"

. "$(dirname "$0")/lib.sh"

REQLOG=$TEST_DIR/requests.jsonl
PIG=$(cd "$PGN_BIN/cli" && pwd -P)/pigeon
LOG_JQ=$(cat "$hosts_dir/log.jq") || exit 2
: >"$REQLOG"

# ---- the mock model server ---------------------------------------------

node "$hosts_dir/mock-server.js" "$TEST_DIR/mock.port" "$REQLOG" \
    >"$TEST_DIR/mock.out" 2>&1 &
bg_track $!
hl_i=0
while [ ! -s "$TEST_DIR/mock.port" ]; do
	hl_i=$((hl_i + 1))
	if [ "$hl_i" -ge 100 ] || ! kill -0 $! 2>/dev/null; then
		echo "Bail out! the mock model server did not start:"
		cat "$TEST_DIR/mock.out"
		exit 2
	fi
	sleep 0.1
done
PORT=$(cat "$TEST_DIR/mock.port")
test_note "$HOST $("$HOST_BIN" --version 2>/dev/null </dev/null | head -n 1)" \
    "against the mock on 127.0.0.1:$PORT"

# ---- the host's configuration ------------------------------------------

# The files `pigeon install $HOST` edits, and the one a user hook of the
# user's own logs to (it must keep running whatever Pigeon does).
host_config() {
	case $1 in
	claude) HOST_CONFIG=$HOME/.claude/settings.json ;;
	codex) HOST_CONFIG=$HOME/.codex/hooks.json ;;
	gemini) HOST_CONFIG=$HOME/.gemini/settings.json ;;
	copilot) HOST_CONFIG=$HOME/.copilot/hooks/pigeon.json ;;
	opencode) HOST_CONFIG=$HOME/.config/opencode/opencode.json ;;
	esac
}
host_config "$HOST"
USER_HOOK_LOG=$TEST_DIR/user-hook.log

# host_seed: the host's configuration as a user has it before Pigeon:
# the mock as the model provider, telemetry off, and one hook of the
# user's own on session start (it appends a line to $USER_HOOK_LOG).
host_seed() {
	hs_cmd="echo \"\$PPID user-hook\" >>$USER_HOOK_LOG"
	mkdir -p "$(dirname "$HOST_CONFIG")" || return 1
	case $HOST in
	claude)
		jq -n --arg c "$hs_cmd" '{
			hooks: {SessionStart: [{hooks: [
				{type: "command", command: $c}]}]},
			cleanupPeriodDays: 30}' ;;
	codex)
		cat >"$HOME/.codex/config.toml" <<-EOF || return 1
		# the mock model server as the provider (integration/hosts)
		model = "mock-model"
		model_provider = "mock"

		[model_providers.mock]
		name = "mock"
		base_url = "http://127.0.0.1:$PORT/v1"
		wire_api = "responses"
		env_key = "MOCK_API_KEY"
		request_max_retries = 0
		stream_max_retries = 0

		[features]
		daemon_auto_start = false

		[analytics]
		enabled = false

		# (what the terminal UI writes here on its first start)
		[tui]
		screen_reader_detection_done = true
		EOF
		jq -n --arg c "$hs_cmd" '{hooks: {SessionStart: [{hooks: [
			{type: "command", command: $c}]}]}}' ;;
	gemini)
		jq -n --arg c "$hs_cmd" '{
			security: {auth: {selectedType: "gemini-api-key"}},
			general: {enableAutoUpdate: false,
			    enableAutoUpdateNotification: false},
			privacy: {usageStatisticsEnabled: false},
			telemetry: {enabled: false},
			hooks: {SessionStart: [{hooks: [
				{type: "command", command: $c}]}]}}' ;;
	copilot)
		# The user's own hook file beside Pigeon's (a directory of
		# them); Pigeon's own file does not exist before install.
		jq -n --arg c "$hs_cmd" '{version: 1, hooks: {sessionStart: [
			{type: "command", bash: $c, timeoutSec: 10}]}}' \
		    >"$(dirname "$HOST_CONFIG")/user.json" || return 1
		echo '{"version": 1, "hooks": {}}' ;;
	opencode)
		# The mock as an Anthropic provider; opencode's config-directory
		# dependency from the cache (versions); and a plugin of the
		# user's own, which logs each message to $USER_HOOK_LOG.
		hs_dir=$(dirname "$HOST_CONFIG")
		cp "$HOST_CACHE/config/package.json" \
		    "$HOST_CACHE/config/package-lock.json" "$hs_dir/" &&
		ln -s "$HOST_CACHE/config/node_modules" "$hs_dir/node_modules" &&
		mkdir "$hs_dir/plugin" &&
		cat >"$hs_dir/plugin/mine.js" <<-EOF || return 1
		import { appendFileSync } from "node:fs";
		export const Mine = async () => ({
		  "chat.message": async () => {
		    appendFileSync("$USER_HOOK_LOG", "user-plugin\\n");
		  },
		});
		EOF
		jq -n --arg url "http://127.0.0.1:$PORT/v1" '{
			provider: {mock: {npm: "@ai-sdk/anthropic", name: "mock",
			    options: {baseURL: $url, apiKey: "mock"},
			    models: {"mock-model": {name: "mock-model"}}}},
			model: "mock/mock-model", small_model: "mock/mock-model",
			autoupdate: false, share: "disabled"}' ;;
	esac >"$HOST_CONFIG"
}

# ---- a second host in one scenario --------------------------------------

# other_host H: install host H (as this script's own host is) and give it
# its seeded configuration and `pigeon install H`, in the same HOME, the
# same mock and the same state; 1 with a line on fd 9 if it cannot be
# installed (a scenario of two hosts is then skipped, except under CI).
other_host() {
	if ! oh_why=$(PIGEON_HOSTS_CACHE=$hosts_cache \
	    "$hosts_dir/install" "$1" 2>&1 >/dev/null); then
		echo "error: the second host $1 cannot be installed: $oh_why" >&9
		return 1
	fi
	as_host "$1" host_seed && as_host "$1" "$PIG" install "$1" >/dev/null
}

# as_host H CMD...: run CMD in a subshell as if this script's host were
# H (HOST, HOST_BIN, HOST_CONFIG...): host_run, requests, arrives... for
# a second real host in a scenario; the turn files are shared.
as_host() (
	HOST=$1 # this subshell's only (shellcheck's SC2030/SC2031 notes)
	shift
	host_bin "$HOST"
	host_config "$HOST"
	"$@"
)

# ---- running the host --------------------------------------------------

# host_exec new|resume|live PROMPT: the host, in the working directory:
# one turn in a new session or in the latest one of this directory, or
# (live) a session that takes prompts as they come: Claude's stream-json
# input on stdin, the terminal UI of Codex and Gemini (run it in tmux).
# The environment is only what is listed here: PIGEON_AGENT from $AGENT,
# PIGEON_DB if set. Each host may run a shell tool without asking (the
# mock's "mock-shell:" turns), unless HOST_MODE says otherwise:
#   defaults   the host's own approvals and sandbox, plus only what
#              `pigeon install` wrote: Claude without --allowedTools,
#              Gemini without --yolo, Codex in its workspace-write
#              sandbox (approval never; hooks still trusted for the run,
#              as pigeon install tells the user to do)
#   bare       as defaults, and Codex without even the hook-trust flag:
#              no --dangerously flag at all (its hooks do not run)
# HOST_ARGS: more arguments for the host (before the prompt).
# shellcheck disable=SC2086 # $he_limit is options for timeout
host_exec() {
	he_mode=$1
	he_prompt=$2
	he_term=dumb
	he_limit="-k 5 120"
	if [ "$he_mode" = live ]; then
		# A terminal UI must stay in the terminal's foreground.
		he_term=xterm-256color
		he_limit="--foreground -k 5 300"
	fi
	set -- PATH="$PATH" HOME="$HOME" LANG=C.UTF-8 TERM=$he_term \
	    PIGEON_HOME="$PIGEON_HOME"
	[ -z "${PIGEON_DB:-}" ] || set -- "$@" PIGEON_DB="$PIGEON_DB"
	[ -z "${AGENT:-}" ] || set -- "$@" PIGEON_AGENT="$AGENT"
	case $HOST in
	claude)
		set -- "$@" CLAUDE_CONFIG_DIR="$HOME/.claude" \
		    ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" \
		    ANTHROPIC_API_KEY=sk-pigeon-mock-0123456789abcdefghij \
		    DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
		    DISABLE_ERROR_REPORTING=1 \
		    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
		    timeout $he_limit "$HOST_BIN" -p
		[ -n "${HOST_MODE:-}" ] || set -- "$@" --allowedTools Bash
		# shellcheck disable=SC2086 # HOST_ARGS is words
		set -- "$@" ${HOST_ARGS:-}
		case $he_mode in
		resume) set -- "$@" --continue -- "$he_prompt" ;;
		live) set -- "$@" --input-format stream-json \
		    --output-format stream-json --verbose ;;
		*) set -- "$@" -- "$he_prompt" ;;
		esac
		;;
	codex)
		# Hooks of a user config run only once trusted: the bypass
		# flag trusts them for this run (pigeon install says so).
		set -- "$@" CODEX_HOME="$HOME/.codex" MOCK_API_KEY=mock \
		    timeout $he_limit "$HOST_BIN"
		[ "$he_mode" = live ] || set -- "$@" exec --skip-git-repo-check
		case ${HOST_MODE:-} in
		defaults) set -- "$@" --dangerously-bypass-hook-trust \
		    --sandbox workspace-write ;;
		bare) set -- "$@" --sandbox workspace-write ;;
		*) set -- "$@" --dangerously-bypass-hook-trust \
		    --dangerously-bypass-approvals-and-sandbox ;;
		esac
		# shellcheck disable=SC2086 # HOST_ARGS is words
		set -- "$@" ${HOST_ARGS:-}
		case $he_mode in
		resume) set -- "$@" resume --last "$he_prompt" ;;
		new) set -- "$@" "$he_prompt" ;;
		esac
		;;
	gemini)
		set -- "$@" GEMINI_API_KEY=mock \
		    GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$PORT" \
		    GEMINI_CLI_TRUST_WORKSPACE=true \
		    timeout $he_limit "$HOST_BIN"
		[ -n "${HOST_MODE:-}" ] || set -- "$@" --yolo
		case $he_mode in
		resume) set -- "$@" --resume latest -p "$he_prompt" ;;
		new) set -- "$@" -p "$he_prompt" ;;
		esac
		;;
	copilot)
		# Offline with the mock as its model provider (BYOK): no
		# GitHub sign-in, no telemetry, no update.
		set -- "$@" XDG_CACHE_HOME="$HOST_XDG_CACHE" \
		    COPILOT_OFFLINE=true COPILOT_AUTO_UPDATE=false \
		    COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$PORT" \
		    COPILOT_PROVIDER_TYPE=anthropic \
		    COPILOT_PROVIDER_API_KEY=mock \
		    COPILOT_MODEL=claude-sonnet-4.5 \
		    timeout $he_limit "$HOST_BIN" --disable-client-telemetry \
		    --no-auto-update
		# --allow-all: tools, and paths outside the directory (the
		# state directory pigeon send writes to).
		[ -n "${HOST_MODE:-}" ] || set -- "$@" --allow-all
		# shellcheck disable=SC2086 # HOST_ARGS is words
		set -- "$@" ${HOST_ARGS:-}
		case $he_mode in
		resume) set -- "$@" --continue -p "$he_prompt" ;;
		new) set -- "$@" -p "$he_prompt" ;;
		esac
		;;
	opencode)
		set -- "$@" XDG_CONFIG_HOME="$HOME/.config" \
		    XDG_DATA_HOME="$HOME/.local/share" \
		    XDG_CACHE_HOME="$HOME/.cache" \
		    XDG_STATE_HOME="$HOME/.local/state" \
		    OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_MODELS_FETCH=1 \
		    OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 \
		    timeout $he_limit "$HOST_BIN" run
		[ "$he_mode" != resume ] || set -- "$@" --continue
		# opencode run quotes an argument that holds a space: the
		# prompt goes as its words (no globbing).
		set -f
		# shellcheck disable=SC2086 # the prompt's words
		set -- "$@" -- $he_prompt
		set +f
		;;
	esac
	if [ "$he_mode" = live ] && [ "$HOST" != claude ]; then
		tmux -S "$TEST_DIR/tmux.sock" new-session -d -s live \
		    -x 200 -y 50 -c "$(pwd)" env -i "$@"
	else
		env -i "$@"
	fi
}

# host_run NAME DIR new|resume PROMPT: one turn of the host in DIR (see
# host_exec), stdout and stderr in NAME.out and NAME.err, the range of
# request log lines it added in NAME.range, its wall time in NAME.ms.
# The turn must work: exit 0, the mock's reply printed, and at least one
# model request made.
host_run() {
	hr_name=$1
	hr_from=$(wc -l <"$REQLOG")
	hr_t0=$(date +%s%N)
	(cd "$2" && host_exec "$3" "$4") >"$TEST_DIR/$hr_name.out" \
	    2>"$TEST_DIR/$hr_name.err" </dev/null
	hr_rc=$?
	hr_ms=$((($(date +%s%N) - hr_t0) / 1000000))
	echo "$hr_from $(wc -l <"$REQLOG")" >"$TEST_DIR/$hr_name.range"
	echo "$hr_ms" >"$TEST_DIR/$hr_name.ms"
	echo "$HOST $hr_name $hr_ms ms" >>"$TEST_DIR/timings"
	if [ "$hr_rc" -ne 0 ] || ! grep -q MOCK-REPLY "$TEST_DIR/$hr_name.out"
	then
		echo "error: $HOST turn $hr_name ($3) exited $hr_rc:" >&9
		tail -n 20 "$TEST_DIR/$hr_name.out" "$TEST_DIR/$hr_name.err" >&9
		return 1
	fi
	[ "$(requests "$hr_name" | jq -c "$LOG_JQ select(model_request)" |
	    wc -l)" -gt 0 ] && return 0
	echo "error: $HOST turn $hr_name made no model request" >&9
	return 1
}

# requests NAME: the request log lines of turn NAME.
requests() {
	rq_range=$(cat "$TEST_DIR/$1.range") || return 1
	sed -n "$((${rq_range% *} + 1)),${rq_range#* }p" "$REQLOG"
}

# counts NAME TEXT: for each model request of turn NAME, one line
# "TOTAL NEW LANDING": how often TEXT occurs in the whole request, how
# often among the items new in it (after the model's last item: what
# this turn added), and where the first new one landed (log.jq).
counts() {
	requests "$1" | jq -r --arg s "$2" "$LOG_JQ"'
		select(model_request) | .body |
		"\(count($s)) \(turn | count($s)) \(landing($s))"'
}

# show NAME TEXT: explain a failed assertion about TEXT in turn NAME.
show() {
	echo "error: '$2' in the model requests of $HOST turn $1" \
	    "(total, new, landing):" >&9
	counts "$1" "$2" >&9
}

# arrives NAME TEXT LANDING: TEXT is new in the first model request of
# turn NAME, exactly once in it, landed as LANDING (claude:EVENT, codex,
# gemini; an extended regular expression); later requests of the turn
# (after a tool call) carry it only as history, once.
arrives() {
	counts "$1" "$2" >counts.out || return 1
	if head -n 1 counts.out | grep -Eqx "1 1 ($3)" &&
	    ! sed 1d counts.out | grep -qv '^1 0 '; then
		return 0
	fi
	show "$1" "$2"
	echo "want: 1 1 $3, then 1 0 ..." >&9
	return 1
}

# again NAME TEXT LANDING: TEXT is new in the first model request of
# turn NAME, exactly once among the new items (it may also be in the
# history, from earlier turns).
again() {
	counts "$1" "$2" >counts.out || return 1
	head -n 1 counts.out | grep -Eqx "[0-9]+ 1 ($3)" && return 0
	show "$1" "$2"
	echo "want: N 1 $3" >&9
	return 1
}

# not_new NAME TEXT [MAX]: in no model request of turn NAME is TEXT
# new, and none holds it more than MAX times (default 1): earlier turns
# stay in the history.
not_new() {
	counts "$1" "$2" >counts.out || return 1
	awk -v max="${3:-1}" '$1 > max || $2 != 0 { bad = 1 }
		END { exit bad }' counts.out && return 0
	show "$1" "$2"
	echo "want: at most ${3:-1} as history, never new" >&9
	return 1
}

# absent NAME TEXT: no request of turn NAME holds TEXT at all (Gemini's
# router requests included).
absent() {
	requests "$1" | grep -qF -e "$2" || return 0
	show "$1" "$2"
	echo "want: absent" >&9
	return 1
}

# intro_line NAME PREFIX: the line of the session intro that turn NAME's
# first model request holds starting with PREFIX, as the model read it.
intro_line() {
	requests "$1" | jq -r "$LOG_JQ"'select(model_request) | .body |
		turn | [.. | strings] | .[]' | tr -d '\r' |
	    sed -n "s/^.*<hook_context>//; s/^.*hook additional context: //
		/^$2/{p;q;}"
}

# ---- a live session: prompts into one running host ---------------------

# live_start DIR: start the host in DIR as a live session (host_exec
# live) and wait until it takes prompts.
live_start() {
	if [ "$HOST" = claude ]; then
		mkfifo "$TEST_DIR/live.in" || return 1
		(cd "$1" && host_exec live "") <"$TEST_DIR/live.in" \
		    >"$TEST_DIR/live.out" 2>"$TEST_DIR/live.err" &
		LIVE_PID=$!
		bg_track "$LIVE_PID"
		exec 7>"$TEST_DIR/live.in"
		return 0
	fi
	ls_n=$(hook_lines)
	(cd "$1" && host_exec live "") || return 1
	# Ready: the input box is drawn and (Gemini runs it at launch)
	# the session start hook is done.
	case $HOST in
	codex) ls_ready="Ask Codex" ;;
	*) ls_ready="Type your message" ;;
	esac
	ls_i=0
	until live_screen | grep -q "$ls_ready" &&
	    { [ "$HOST" = codex ] || [ "$(hook_lines)" -gt "$ls_n" ]; }; do
		ls_i=$((ls_i + 1))
		if [ "$ls_i" -ge 600 ]; then
			echo "error: $HOST did not get ready in 60 s:" >&9
			live_screen >&9
			return 1
		fi
		sleep 0.1
	done
	sleep 1
}

# live_screen: what the terminal UI shows (and its scrollback).
live_screen() {
	tmux -S "$TEST_DIR/tmux.sock" capture-pane -p -t live -S -2000
}

# live_replies: how many replies of the mock the live session has shown.
live_replies() {
	if [ "$HOST" = claude ]; then
		grep -c '"type":"result"' "$TEST_DIR/live.out"
	else
		live_screen | grep -c MOCK-REPLY
	fi
}

# live_prompt NAME TEXT: submit TEXT to the live session, wait for the
# mock's reply to show; the requests it made are turn NAME (NAME.range).
live_prompt() {
	lp_from=$(wc -l <"$REQLOG")
	lp_want=$(($(live_replies) + 1))
	if [ "$HOST" = claude ]; then
		jq -cn --arg t "$2" \
		    '{type: "user", message: {role: "user", content: $t}}' >&7
	else
		tmux -S "$TEST_DIR/tmux.sock" send-keys -t live -l "$2" &&
		sleep 0.5 &&
		tmux -S "$TEST_DIR/tmux.sock" send-keys -t live Enter
	fi || return 1
	lp_i=0
	while [ "$(live_replies)" -lt "$lp_want" ]; do
		lp_i=$((lp_i + 1))
		# Under load a terminal UI can take the Enter as part of
		# the typed text (a paste) and keep it in the input box:
		# while the prompt has made no model request, press Enter
		# again every 5 s. An Enter on an empty input box does
		# nothing in either UI.
		if [ "$HOST" != claude ] && [ $((lp_i % 50)) -eq 0 ] &&
		    [ "$(wc -l <"$REQLOG")" -eq "$lp_from" ]; then
			tmux -S "$TEST_DIR/tmux.sock" send-keys -t live Enter
		fi
		if [ "$lp_i" -ge 600 ]; then
			echo "error: no reply to '$2' from $HOST in 60 s" >&9
			[ "$HOST" = claude ] && tail -n 5 "$TEST_DIR/live.out" \
			    "$TEST_DIR/live.err" >&9
			[ "$HOST" = claude ] || live_screen >&9
			return 1
		fi
		sleep 0.1
	done
	sleep 0.5
	echo "$lp_from $(wc -l <"$REQLOG")" >"$TEST_DIR/$1.range"
}

# live_stop: end the live session.
live_stop() {
	if [ "$HOST" = claude ]; then
		exec 7>&-
		bg_wait "$LIVE_PID"
	else
		tmux -S "$TEST_DIR/tmux.sock" kill-server
	fi
}

# hook_lines: the number of lines in hook.log.
hook_lines() {
	if [ -e "$PIGEON_HOME/hook.log" ]; then
		wc -l <"$PIGEON_HOME/hook.log"
	else
		echo 0
	fi
}

# ms_of NAME: the wall time of turn NAME in milliseconds.
ms_of() {
	cat "$TEST_DIR/$1.ms"
}
