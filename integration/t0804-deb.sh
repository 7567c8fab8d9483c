#!/bin/sh
# cmake --install and the .deb (docs/decisions/0124): cpack builds it from this build; its
# contents, dependencies (what the binaries link dynamically; libpq5,
# which the PostgreSQL backend loads, recommended) and
# maintainer scripts (prerm, which only tells: 0226) are as designed; the unpacked binaries run
# and find each other; its man page renders; lintian reports no error;
# it installs into and removes from a private dpkg root leaving nothing.
. "$(dirname "$0")/lib.sh"

for t in cpack dpkg-deb dpkg lintian man; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "Bail out! $t is missing: scripts/deps installs it" >&2
		exit 2
	fi
done

PIG=$PGN_BIN/cli/pigeon
VERSION=$("$PIG" --version | sed 's/^pigeon \([0-9.]*\).*/\1/')

test_case 'cmake --install puts everything where its readers look' '
	cmake --install "$PGN_BIN" --prefix "$TEST_DIR/inst" >inst.log 2>&1 ||
	    { cat inst.log >&9; return 1; }
	for f in bin/pigeon bin/pigeon-hook share/man/man1/pigeon.1.gz \
	    share/man/man1/pigeon-hook.1.gz \
	    share/bash-completion/completions/pigeon \
	    share/bash-completion/completions/pigeon-hook \
	    share/zsh/vendor-completions/_pigeon \
	    share/fish/vendor_completions.d/pigeon.fish \
	    share/fish/vendor_completions.d/pigeon-hook.fish \
	    share/doc/pigeon/README.md share/doc/pigeon/cli.md; do
		test -s "inst/$f" || {
			echo "error: cmake --install wrote no $f" >&9
			return 1
		}
	done &&
	inst/bin/pigeon --version >v && "$PIG" --version >w && test_cmp w v &&
	MANPATH=$TEST_DIR/inst/share/man man -w pigeon >where &&
	grep -q "inst/share/man/man1/pigeon.1.gz" where
'

test_case 'cpack -G DEB builds pigeon_VERSION_ARCH.deb' '
	(cd "$PGN_BIN" && cpack -G DEB -B "$TEST_DIR/debout") >cpack.log 2>&1 ||
	    { cat cpack.log >&9; return 1; }
	ls debout/pigeon_${VERSION}_*.deb >debs &&
	test "$(wc -l <debs)" = 1 &&
	cp "$(cat debs)" pigeon.deb
'

test_case 'control: name, version, architecture, sections, maintainer' '
	test "$(dpkg-deb -f pigeon.deb Package)" = pigeon &&
	test "$(dpkg-deb -f pigeon.deb Version)" = "$VERSION" &&
	test "$(dpkg-deb -f pigeon.deb Architecture)" = \
	    "$(dpkg --print-architecture)" &&
	test -n "$(dpkg-deb -f pigeon.deb Maintainer)" &&
	dpkg-deb -f pigeon.deb Description | grep -q "AI coding agents"
'

# dep_for LIB PKG: PKG is a dependency exactly when pigeon or
# pigeon-hook links LIB dynamically.
dep_for() {
	if ldd "$PIG" "$PGN_BIN/hookcli/pigeon-hook" | grep -q "$1"; then
		echo "$deps" | grep -q "$2" || {
			echo "error: links $1 but does not depend on $2: $deps" >&9
			return 1
		}
	elif echo "$deps" | grep -q "$2"; then
		echo "error: depends on $2 but links no $1: $deps" >&9
		return 1
	fi
}

test_case 'Depends: libc6 and what the binaries link dynamically' '
	deps=$(dpkg-deb -f pigeon.deb Depends) &&
	echo "$deps" | grep -q "libc6 (>= " &&
	dep_for libcjson "libcjson1 (>= " &&
	dep_for libsqlite3 libsqlite3-0 &&
	dep_for libsodium libsodium &&
	dep_for libpq libpq5 &&
	dep_for libmicrohttpd libmicrohttpd12
'

test_case 'Recommends: libpq5 exactly when pigeon loads libpq.so.5 (PostgreSQL backend); libmicrohttpd12 (pigeon web)' '
	recs=$(dpkg-deb -f pigeon.deb Recommends) &&
	grep -qa "libmicrohttpd\.so\.12" "$PIG" &&
	case $recs in *libmicrohttpd12) ;; *) echo "error: Recommends \"$recs\" lacks libmicrohttpd12" >&9; false ;; esac &&
	recs=${recs%libmicrohttpd12} && recs=${recs%, } &&
	if grep -qa "libpq\.so\.5" "$PIG"; then
		test "$recs" = libpq5 || {
			echo "error: loads libpq.so.5 but Recommends is \"$recs\"" >&9
			return 1
		}
	else
		test -z "$recs" || {
			echo "error: no PostgreSQL backend but Recommends is \"$recs\"" >&9
			return 1
		}
	fi
'

test_case 'contents: binaries, man pages, three completions, docs, all root-owned' '
	dpkg-deb -c pigeon.deb >list &&
	for f in usr/bin/pigeon usr/bin/pigeon-hook \
	    usr/share/man/man1/pigeon.1.gz usr/share/man/man1/pigeon-hook.1.gz \
	    usr/share/bash-completion/completions/pigeon \
	    usr/share/bash-completion/completions/pigeon-hook \
	    usr/share/zsh/vendor-completions/_pigeon \
	    usr/share/fish/vendor_completions.d/pigeon.fish \
	    usr/share/fish/vendor_completions.d/pigeon-hook.fish \
	    usr/share/doc/pigeon/README.md usr/share/doc/pigeon/cli.md \
	    usr/share/doc/pigeon/copyright usr/share/doc/pigeon/changelog.gz; do
		grep -q " \./$f\$" list || {
			echo "error: no $f in the package" >&9
			return 1
		}
	done &&
	! grep -v " \./usr/" list | grep -v " \./\$" &&
	! grep -v " root/root " list &&
	grep " \./usr/bin/pigeon\$" list | grep -q "^-rwxr-xr-x"
'

test_case 'one maintainer script, prerm: it tells, on removal only' '
	dpkg-deb -e pigeon.deb ctrl &&
	ls ctrl >have &&
	printf "control\nmd5sums\nprerm\n" >want &&
	test_cmp want have &&
	test "$(stat -c %a ctrl/prerm)" = 755 &&
	sh ctrl/prerm remove >out 2>err &&
	expect_empty out &&
	grep -q "^    pigeon uninstall --all$" err &&
	for a in upgrade deconfigure failed-upgrade; do
		sh ctrl/prerm $a 1.0 >out 2>err &&
		expect_empty out && expect_empty err || return 1
	done
'

test_case 'unpacked: pigeon --version is this build'"'"'s; md5sums hold' '
	dpkg-deb -x pigeon.deb root &&
	(cd root && md5sum --quiet -c ../ctrl/md5sums) &&
	root/usr/bin/pigeon --version >v &&
	"$PIG" --version >w && test_cmp w v &&
	root/usr/bin/pigeon-hook --version >v &&
	grep -q "^pigeon-hook $VERSION" v
'

test_case 'unpacked: it works, and finds the pigeon-hook beside it' '
	root/usr/bin/pigeon agent add bob >/dev/null &&
	root/usr/bin/pigeon send --to bob hello >/dev/null &&
	root/usr/bin/pigeon read --agent bob >out &&
	grep -q hello out &&
	root/usr/bin/pigeon install claude --dry-run >out &&
	grep -q "$TEST_DIR/root/usr/bin/pigeon-hook" out
'

test_case 'man -l renders the packaged pages without a warning' '
	MANWIDTH=80 man -l root/usr/share/man/man1/pigeon.1.gz >page 2>err &&
	expect_empty err &&
	grep -q "^NAME" page && grep -q "pigeon - a mailbox" page &&
	MANWIDTH=80 man -l root/usr/share/man/man1/pigeon-hook.1.gz >page \
	    2>err &&
	expect_empty err && grep -q "pigeon-hook - " page
'

test_case 'the packaged bash completion completes with the packaged pigeon' '
	test "$(PATH=$TEST_DIR/root/usr/bin:$PATH bash -c ". \"\$1\"
	    COMP_WORDS=(pigeon sen); COMP_CWORD=1; _pigeon
	    echo \"\${COMPREPLY[*]}\"" _ \
	    root/usr/share/bash-completion/completions/pigeon)" = send
'

test_case 'lintian: no error' '
	lintian --no-tag-display-limit pigeon.deb >lint 2>lint.err
	rc=$?
	cat lint >&9
	! grep "^E: " lint && test "$rc" = 0
'

test_case 'installs into a private dpkg root and removes without a trace' '
	mkdir -p droot/var/lib/dpkg/info droot/var/lib/dpkg/updates &&
	: >droot/var/lib/dpkg/status &&
	dpkg --root="$TEST_DIR/droot" --force-depends --force-not-root \
	    --force-script-chrootless -i pigeon.deb >dpkg.log 2>&1 ||
	    { cat dpkg.log >&9; return 1; }
	test -x droot/usr/bin/pigeon &&
	droot/usr/bin/pigeon --version >v && "$PIG" --version >w &&
	test_cmp w v &&
	dpkg --root="$TEST_DIR/droot" --force-not-root \
	    --force-script-chrootless -r pigeon \
	    >dpkg.log 2>&1 || { cat dpkg.log >&9; return 1; }
	grep -q "^    pigeon uninstall --all$" dpkg.log &&
	test ! -e droot/usr
'

test_done
