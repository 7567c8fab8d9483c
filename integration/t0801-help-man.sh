#!/bin/sh
# One help source (docs/decisions/0120): every paragraph of every
# --help is in the man page, word for word; 'pigeon help CMD' is
# 'pigeon CMD --help'; the pages render without a groff warning; an
# option the help does not list is refused.
. "$(dirname "$0")/lib.sh"

MAN1=$PGN_BIN/share/man1

# flat FILE: the text on one line, every run of white space one space.
flat() {
	tr -s ' \t\n' '   ' <"$1"
}

# man_flat PAGE OUT: the page as man shows it, flattened.
man_flat() {
	MANWIDTH=100 man -l "$1" >"$2.raw" 2>"$2.err" &&
	expect_empty "$2.err" &&
	col -b <"$2.raw" >"$2.txt" &&
	flat "$2.txt" >"$2"
}

# in_man HELP MAN: each paragraph of HELP (header lines like
# "commands:" and the word "usage:" aside) occurs in MAN, flattened.
in_man() {
	awk '
	/^$/ { if (p != "") print p; p = ""; next }
	/^[a-z][a-z ]*:$/ { next }
	{ sub(/^usage: /, ""); p = p " " $0 }
	END { if (p != "") print p }' "$1" |
	while IFS= read -r para; do
		para=$(printf '%s\n' "$para" | tr -s ' \t' '  ' |
		    sed 's/^ //; s/ $//')
		if ! grep -qF -e "$para" "$2"; then
			echo "error: not in the man page: $para" >&9
			return 1
		fi
	done
}

commands() {
	pigeon --help | awk '/^commands:$/ { on = 1; next } /^$/ { on = 0 }
	    on { print $1 }'
}

test_case 'the pages exist and groff has nothing to say about them' '
	for p in pigeon pigeon-hook; do
		test -s "$MAN1/$p.1" &&
		LC_ALL=C.UTF-8 MANROFFSEQ= MANWIDTH=80 man --warnings \
		    -E UTF-8 -l -Tutf8 -Z "$MAN1/$p.1" >/dev/null 2>warn &&
		expect_empty warn || return 1
	done
'

test_case 'pigeon --help says nothing the man page does not' '
	pigeon --help >help &&
	man_flat "$MAN1/pigeon.1" man &&
	in_man help man &&
	grep -q "^PIGEON(1)" man.txt
'

test_case 'every command'"'"'s --help is in pigeon(1), each in its section' '
	man_flat "$MAN1/pigeon.1" man &&
	n=0 &&
	for c in $(commands); do
		pigeon "$c" --help >"help.$c" &&
		in_man "help.$c" man &&
		grep -q "^   pigeon $c\$" man.txt || {
			echo "error: no section for $c" >&9
			return 1
		}
		n=$((n + 1))
	done &&
	test "$n" -ge 13
'

test_case 'every section of pigeon(1) is a --help, other forms too' '
	man_flat "$MAN1/pigeon.1" man &&
	sed -n "s/^\.SS pigeon //p" "$MAN1/pigeon.1" >sections &&
	grep -qx "install instructions" sections &&
	while read -r s; do
		# shellcheck disable=SC2086
		pigeon $s --help >help.form &&
		in_man help.form man || return 1
	done <sections &&
	pigeon install --help >help.install &&
	grep -q "^       pigeon install instructions --file PATH" help.install
'

test_case 'pigeon-hook --help is pigeon-hook(1)' '
	pigeon-hook --help >help &&
	man_flat "$MAN1/pigeon-hook.1" man &&
	in_man help man &&
	grep -q "cursor  *sessionStart beforeSubmitPrompt" man.txt
'

# docs/cli.md quotes every --help: what the binary says, the reference
# says, word for word (issue 24 item 10), so they cannot drift apart.
test_case 'every --help (commands, other forms, pigeon-hook) is in docs/cli.md' '
	flat "$PGN_SRC/docs/cli.md" >doc &&
	n=0 &&
	for c in $(commands); do
		pigeon "$c" --help >"help.$c" &&
		in_man "help.$c" doc || {
			echo "error: docs/cli.md does not quote pigeon $c --help" >&9
			return 1
		}
		n=$((n + 1))
	done &&
	test "$n" -ge 13 &&
	for f in "install instructions" "uninstall instructions"; do
		# shellcheck disable=SC2086
		pigeon $f --help >help.form &&
		in_man help.form doc || return 1
	done &&
	pigeon-hook --help >help.hook &&
	in_man help.hook doc &&
	pigeon --help >help.main &&
	head -n 1 help.main | sed "s/^usage: //" >usage &&
	grep -qF -e "$(cat usage)" doc
'

test_case 'the man page names this version' '
	v=$(pigeon --version | sed "s/^pigeon \([0-9.]*\).*/\1/") &&
	grep -q "^\.TH PIGEON 1 \"[^\"]*\" \"pigeon $v\"" "$MAN1/pigeon.1"
'

test_case 'pigeon help CMD is pigeon CMD --help, byte for byte' '
	for c in $(commands); do
		pigeon help "$c" >a &&
		pigeon "$c" --help >b &&
		test_cmp a b || return 1
	done &&
	pigeon help >a && pigeon --help >b && test_cmp a b
'

test_case 'help for an unknown command is a usage error' '
	expect_error 2 "unknown command ${SQ}nope${SQ}" pigeon help nope &&
	expect_error 2 "help takes one COMMAND" pigeon help send read
'

test_case 'an option no help lists is refused' '
	expect_error 2 "bad or incomplete option ${SQ}--bogus${SQ}" \
	    pigeon send --bogus --to x hi &&
	expect_error 2 "bad or incomplete option" pigeon agents --to x
'

test_case 'help text fits 80 columns' '
	for c in $(commands); do
		pigeon "$c" --help
	done >all &&
	pigeon --help >>all && pigeon-hook --help >>all &&
	! awk "length > 79 { print; bad = 1 } END { exit !bad }" all
'

test_case '--version: the project version, and the git revision of a checkout' '
	pigeon --version >v &&
	grep -Eqx "pigeon [0-9]+\.[0-9]+\.[0-9]+( \(git [0-9a-f]{12}\))?" v &&
	pigeon-hook --version >hv &&
	test "$(sed "s/^pigeon-hook /pigeon /" hv)" = "$(cat v)" &&
	if git -C "$PGN_SRC" rev-parse HEAD >/dev/null 2>&1; then
		grep -q "(git " v
	fi
'

test_case 'doctor prints the version first, and in JSON' '
	pigeon doctor >out 2>&1 || :
	head -n 1 out >first &&
	pigeon --version >v && test_cmp v first &&
	{ pigeon doctor --json >doc || :; } &&
	test "$(jq -r .version doc)" = "$(cat first)"
'

test_done
