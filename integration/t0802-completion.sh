#!/bin/sh
# The completions (generated from the help, docs/decisions/0120)
# complete commands, options, option values, host names and events from
# the host table and agent names from 'pigeon agents --names' of the
# scope the line names: bash and fish through their own completion
# engines, zsh in a real terminal (tmux).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/tmux.sh"

SHARE=$PGN_BIN/share

# bash_complete FUNC FILE WORD...: COMPREPLY for the line WORD... (the
# last one is the word under the cursor), one a line.
bash_complete() {
	bash -c '. "$2"; f=$1; shift 2; COMP_WORDS=("$@")
	    COMP_CWORD=$(($# - 1)); "$f"; printf "%s\n" "${COMPREPLY[@]}"' \
	    _ "$@"
}

bash_pigeon() {
	bash_complete _pigeon "$SHARE/bash/pigeon" pigeon "$@" | sort
}

# fish_complete LINE: fish's candidates for LINE, without descriptions.
fish_complete() {
	fish --no-config -c "source $SHARE/fish/pigeon.fish
	    source $SHARE/fish/pigeon-hook.fish
	    complete -C '$1'" | cut -f1 | sort
}

# The hosts and events as pigeon-hook --help lists them (the table).
hosts() {
	pigeon-hook --help | awk '/^  HOST EVENT$/ { on = 1; next }
	    on && NF == 0 { exit } on && /^    [^ ]/ { print $1 }' | sort
}
events() {
	# A long list goes on in indented lines (within 80 columns).
	pigeon-hook --help | awk -v h="$1" '
	    $1 == h && NF > 2 { on = 1; for (i = 2; i <= NF; i++) print $i; next }
	    on && /^             [^ ]/ { for (i = 1; i <= NF; i++) print $i; next }
	    { on = 0 }' | sort
}

printf 'alice\nbob\n' >agents.want

test_case 'setup: two agents here, one in another database' '
	pigeon agent add alice >/dev/null &&
	pigeon agent add bob >/dev/null &&
	pigeon agent add --db other.db zed >/dev/null &&
	hosts >hosts.want && test "$(wc -l <hosts.want)" -ge 4
'

test_case 'pigeon agents --names: the names alone, sorted; JSON too' '
	pigeon agents --names >out &&
	test_cmp agents.want out &&
	pigeon agents --names --json >out &&
	test "$(cat out)" = "[\"alice\",\"bob\"]"
'

test_case 'pigeon agents --names never makes a database' '
	expect_code 1 pigeon agents --names --db none.db >out 2>err &&
	expect_empty out &&
	expect_one_error err "no database at" &&
	test ! -e none.db
'

test_case 'bash: commands, options, values' '
	test "$(bash_pigeon sen)" = send &&
	test "$(bash_pigeon send --ti)" = --timeout &&
	bash_pigeon agents --co >out && grep -qx -- --color out &&
	test "$(bash_pigeon agents --color al)" = always &&
	test "$(bash_pigeon agents --color = ne)" = never &&
	test "$(bash_pigeon agent re)" = rename &&
	test "$(bash_pigeon help jo)" = journal
'

test_case 'bash: agent names of the scope, of --db, in a --to list' '
	bash_pigeon send --to "" >out && test_cmp agents.want out &&
	bash_pigeon journal "" >out && test_cmp agents.want out &&
	bash_pigeon agent rm "" >out && test_cmp agents.want out &&
	test "$(bash_pigeon send --to alice,b)" = alice,bob &&
	test "$(bash_pigeon send --db other.db --to "")" = zed
'

test_case 'bash: hosts and events from the host table' '
	bash_pigeon install "" >out &&
	{ cat hosts.want; echo instructions; } | sort >want &&
	test_cmp want out &&
	for h in $(cat hosts.want); do
		events "$h" >want &&
		bash_complete _pigeon_hook "$SHARE/bash/pigeon-hook" \
		    pigeon-hook "$h" "" | sort >out &&
		test_cmp want out || return 1
	done &&
	bash_complete _pigeon_hook "$SHARE/bash/pigeon-hook" pigeon-hook \
	    --agent "" | sort >out && test_cmp agents.want out
'

test_case 'bash: the options of install instructions, not of install' '
	bash_pigeon install instructions -- >out &&
	grep -qx -- --file out && ! grep -qx -- --user out &&
	bash_pigeon install claude -- >out &&
	grep -qx -- --user out && ! grep -qx -- --file out &&
	bash_pigeon install instructions --agent "" >out &&
	test_cmp agents.want out
'

test_case 'fish: commands, options, agents, hosts, events' '
	test "$(fish_complete "pigeon sen")" = send &&
	fish_complete "pigeon journal --f" >out && grep -qx -- --follow out &&
	fish_complete "pigeon send --to " >out && test_cmp agents.want out &&
	fish_complete "pigeon send --to alice," >out && grep -qx alice,bob out &&
	fish_complete "pigeon install " >out &&
	{ cat hosts.want; echo instructions; } | sort >want &&
	test_cmp want out &&
	fish_complete "pigeon install instructions --" >out &&
	grep -qx -- --file out && ! grep -qx -- --user out &&
	fish_complete "pigeon agent " >out &&
	printf "add\nprune\nrename\nrm\n" >want && test_cmp want out &&
	events codex >want &&
	fish_complete "pigeon-hook codex " >out && test_cmp want out
'

test_case 'zsh: the file parses; TAB completes in a real terminal' '
	zsh -n "$SHARE/zsh/_pigeon" &&
	term_start env PATH="$PATH" HOME="$HOME" PIGEON_HOME="$PIGEON_HOME" \
	    PS1="z> " zsh -f &&
	term_wait "zsh start" "z>" &&
	term_type "fpath=($SHARE/zsh \$fpath); autoload -U compinit; compinit -u -D; clear" &&
	term_keys Enter &&
	term_type "pigeon sen" && term_keys Tab &&
	term_wait "command" "z> pigeon send" &&
	term_type "--to al" && term_keys Tab &&
	term_wait "agent name" "pigeon send --to alice" &&
	term_keys C-u &&
	term_type "pigeon install cl" && term_keys Tab &&
	term_wait "host name" "pigeon install claude" &&
	term_keys C-u &&
	term_type "pigeon install instructions --agent al" && term_keys Tab &&
	term_wait "a form'"'"'s option" "pigeon install instructions --agent alice" &&
	term_keys C-u &&
	term_type "pigeon journal --fol" && term_keys Tab &&
	term_wait "an option" "pigeon journal --follow" &&
	term_keys C-u &&
	term_type "pigeon-hook gemini BeforeA" && term_keys Tab &&
	term_wait "event" "pigeon-hook gemini BeforeAgent" &&
	term_stop
'
term_stop

test_done
