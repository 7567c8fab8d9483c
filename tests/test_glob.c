/* Unit tests of lease patterns (base/glob.c, decision 0153). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pgn_glob.h"
#include "pgn_int.h"

/* Check 'pattern' into 'norm', which must succeed. */
static int
norm_of(const char *pattern, char *norm)
{
	struct pgn_err err;

	pgn_err_clear(&err);
	if (pgn_glob_check(pattern, norm, PGN_LEASE_NORM_SIZE, &err) !=
	    PGN_OK) {
		printf("  check '%s': %s\n", pattern, err.msg);
		return 0;
	}
	return 1;
}

static void
test_check_normalizes_patterns(void)
{
	static const struct {
		const char *in, *norm;
	} t[] = {
	    {"src/api/**", "src/api/**"},
	    {"src/api/x.c", "src/api/x.c"},
	    /* no slash but a trailing one: at any depth */
	    {"*.sql", "**/*.sql"},
	    {"Makefile", "**/Makefile"},
	    {"docs/", "**/docs/**"},
	    {"docs//", "**/docs/**"},
	    /* './' anchors such a pattern at the root */
	    {"./docs/", "docs/**"},
	    {"./Makefile", "Makefile"},
	    {"./src/x.c", "src/x.c"},
	    {"src//api/./x.c", "src/api/x.c"},
	    {"src/api/../db/*.c", "src/db/*.c"},
	    {"a/*/..", "a"},
	    {"src/api/", "src/api/**"},
	    /* the whole scope */
	    {".", "**"},
	    {"./", "**"},
	    {"a/..", "**"},
	    {"**", "**"},
	    /* '**': runs collapse; before a trailing '/', one at least */
	    {"**/**/x", "**/x"},
	    {"a/**/**", "a/**"},
	    {"a/***", "a/**"},
	    {"a/**/", "a/*/**"},
	    {"**/", "*/**"},
	    {"*/x/", "*/x/**"},
	    /* '**' inside a name is '*'; runs of '*' are one */
	    {"a***b", "**/a*b"},
	    {"x/a**", "x/a*"},
	    /* escapes: kept only where they matter */
	    {"\\a\\*", "**/a\\*"},
	    {"\\!x", "**/!x"},
	    {"x/\\[y\\]", "x/\\[y]"},
	    {"#notes", "**/#notes"},
	    {"[!a]*.c", "**/[!a]*.c"},
	    {"[]a]", "**/[]a]"},
	    {"x[[:digit:]]", "**/x[[:digit:]]"},
	    {".env", "**/.env"},
	};
	char norm[PGN_LEASE_NORM_SIZE];
	size_t i;

	for (i = 0; i < H_COUNT(t); i++) {
		if (!CHECK(norm_of(t[i].in, norm)))
			continue;
		CHECK_STR(norm, t[i].norm);
	}
}

static void
test_check_refuses_bad_patterns_with_one_line(void)
{
	static const struct {
		const char *in;
		pgn_status st;
		const char *msg;
	} t[] = {
	    {"", PGN_EINVAL,
	        "empty lease pattern: give a path relative to the scope root, as in 'src/api/**'"},
	    {"a\tb", PGN_EINVAL,
	        "lease pattern has a control byte (0x09) at offset 1: a pattern is a printable path"},
	    {"a\x7f", PGN_EINVAL,
	        "lease pattern has a control byte (0x7f) at offset 1: a pattern is a printable path"},
	    {"/etc/passwd", PGN_EINVAL,
	        "lease pattern '/etc/passwd' is an absolute path: give it relative to the scope root"},
	    {"!x", PGN_EINVAL,
	        "lease pattern '!x' starts with '!': a lease cannot exclude paths; write '\\!' for a name that starts with '!'"},
	    {"..", PGN_EINVAL,
	        "lease pattern '..' leaves the scope root through '..'"},
	    {"../x", PGN_EINVAL,
	        "lease pattern '../x' leaves the scope root through '..'"},
	    {"a/../../x", PGN_EINVAL,
	        "lease pattern 'a/../../x' leaves the scope root through '..'"},
	    {"./..", PGN_EINVAL,
	        "lease pattern './..' leaves the scope root through '..'"},
	    {"**/../x", PGN_EINVAL,
	        "lease pattern '**/../x' has '..' after '**', which has no one parent to go back to: remove the '..'"},
	    {"a[bc", PGN_EINVAL,
	        "lease pattern 'a[bc' has a '[' without its ']': close the class, or write '\\[' for a literal '['"},
	    {"[]", PGN_EINVAL,
	        "lease pattern '[]' has a '[' without its ']': close the class, or write '\\[' for a literal '['"},
	    {"[!]", PGN_EINVAL,
	        "lease pattern '[!]' has a '[' without its ']': close the class, or write '\\[' for a literal '['"},
	    {"a[b/c]", PGN_EINVAL,
	        "lease pattern 'a[b/c]' has a '/' inside [...]: a class stands for one character of a name"},
	    {"[z-a]", PGN_EINVAL,
	        "lease pattern '[z-a]' has a range that runs backwards in [...]: write it low to high, as in '[a-z]'"},
	    {"[[:word:]]", PGN_EINVAL,
	        "lease pattern '[[:word:]]' names an unknown class in [...]: the classes are [:alnum:], [:alpha:], [:blank:], [:cntrl:], [:digit:], [:graph:], [:lower:], [:print:], [:punct:], [:space:], [:upper:] and [:xdigit:]"},
	    {"a\\", PGN_EINVAL,
	        "lease pattern 'a\\' has a '\\' that escapes nothing: write '\\\\' for a literal backslash"},
	    {"a\\/b", PGN_EINVAL,
	        "lease pattern 'a\\/b' has a '\\' that escapes nothing: write '\\\\' for a literal backslash"},
	    {"x/[.]", PGN_EINVAL,
	        "lease pattern 'x/[.]' matches no path: '.' and '..' are not names"},
	    {"[.][.]", PGN_EINVAL,
	        "lease pattern '[.][.]' matches no path: '.' and '..' are not names"},
	};
	char norm[PGN_LEASE_NORM_SIZE];
	struct pgn_err err;
	size_t i;

	for (i = 0; i < H_COUNT(t); i++) {
		pgn_err_clear(&err);
		memcpy(norm, "junk", 5);
		CHECK_INT(pgn_glob_check(t[i].in, norm, sizeof(norm), &err),
		    t[i].st);
		CHECK_STR(err.msg, t[i].msg);
		CHECK_STR(norm, "");
	}
	pgn_err_clear(&err);
	CHECK_INT(pgn_glob_check(NULL, norm, sizeof(norm), &err), PGN_EINVAL);
	CHECK_STR(err.msg,
	    "empty lease pattern: give a path relative to the scope root, as in 'src/api/**'");
	/* the caller's buffer too small for the normal form */
	pgn_err_clear(&err);
	CHECK_INT(pgn_glob_check("docs/", norm, 10, &err), PGN_EINVAL);
	CHECK_STR(err.msg,
	    "lease pattern 'docs/': no room for its normal form (10 bytes): pass PGN_LEASE_NORM_SIZE");
	CHECK_STR(norm, "");
	pgn_err_clear(&err);
	CHECK_INT(pgn_glob_check("docs/", norm, 11, &err), PGN_OK);
	CHECK_STR(norm, "**/docs/**");
}

static void
test_pattern_length_bound_is_max_lease_pattern(void)
{
	char pat[PGN_MAX_LEASE_PATTERN + 2], norm[PGN_LEASE_NORM_SIZE];
	char path[PGN_MAX_LEASE_PATTERN + 8];
	struct pgn_err err;

	/* 512 bytes with a trailing '/': the longest normal form */
	memset(pat, 'a', PGN_MAX_LEASE_PATTERN);
	pat[PGN_MAX_LEASE_PATTERN - 1] = '/';
	pat[PGN_MAX_LEASE_PATTERN] = '\0';
	pgn_err_clear(&err);
	CHECK_INT(pgn_glob_check(pat, norm, sizeof(norm), &err), PGN_OK);
	CHECK_INT(strlen(norm), PGN_MAX_LEASE_PATTERN + 5);
	memcpy(path, pat, PGN_MAX_LEASE_PATTERN);
	memcpy(path + PGN_MAX_LEASE_PATTERN, "f.c", 4);
	CHECK(pgn_glob_match(norm, path));
	CHECK(!pgn_glob_match(norm, "a"));
	/* 513: refused */
	memset(pat, 'a', PGN_MAX_LEASE_PATTERN + 1);
	pat[PGN_MAX_LEASE_PATTERN + 1] = '\0';
	pgn_err_clear(&err);
	CHECK_INT(pgn_glob_check(pat, norm, sizeof(norm), &err), PGN_ETOOBIG);
	CHECK_STR(err.msg,
	    "lease pattern is over the limit of 512 bytes: lease a directory ('dir/') or a shorter glob");
	/* 512 of components: 256 of them */
	memset(pat, 'a', PGN_MAX_LEASE_PATTERN);
	for (size_t i = 1; i < PGN_MAX_LEASE_PATTERN; i += 2)
		pat[i] = '/';
	pat[PGN_MAX_LEASE_PATTERN] = '\0';
	pgn_err_clear(&err);
	CHECK_INT(pgn_glob_check(pat, norm, sizeof(norm), &err), PGN_OK);
	CHECK(pgn_glob_overlap(norm, norm));
	/* a normal form over its bound is none: it covers nothing */
	{
		char big[PGN_LEASE_NORM_SIZE + 1];

		memset(big, 'a', PGN_LEASE_NORM_SIZE - 1);
		big[PGN_LEASE_NORM_SIZE - 1] = '\0';
		CHECK(pgn_glob_overlap(big, "**"));
		memset(big, 'a', PGN_LEASE_NORM_SIZE);
		big[PGN_LEASE_NORM_SIZE] = '\0';
		CHECK(!pgn_glob_overlap(big, "**"));
	}
}

static void
test_match_covers_paths_as_gitignore_does(void)
{
	static const struct {
		const char *pat, *path;
		int want;
	} t[] = {
	    {"src/api/**", "src/api/x.c", 1},
	    {"src/api/**", "src/api/v1/y.c", 1},
	    {"src/api/**", "src/api", 0},
	    {"src/api/**", "src/apix/y.c", 0},
	    {"src/api/**", "lib/src/api/x.c", 0},
	    {"*.sql", "a.sql", 1},
	    {"*.sql", "db/m/a.sql", 1},
	    {"*.sql", ".sql", 1},
	    {"*.sql", "a.sqlx", 0},
	    {"*.sql", "a.SQL", 0},
	    {"docs/", "docs/a.md", 1},
	    {"docs/", "web/docs/a/b.md", 1},
	    {"docs/", "docs", 0},
	    {"./docs/", "docs/x/y", 1},
	    {"./docs/", "web/docs/x", 0},
	    {"Makefile", "Makefile", 1},
	    {"Makefile", "tools/Makefile", 1},
	    {"Makefile", "makefile", 0},
	    {"./Makefile", "tools/Makefile", 0},
	    /* a pattern covers the files it matches, not what is below */
	    {"src/*", "src/x/y.c", 0},
	    {"src/*", "src/x", 1},
	    {"src/*", "src", 0},
	    {"src", "src/x/y.c", 0},
	    {"src/", "src/x/y.c", 1},
	    {"src/*.c", "src/api/x.c", 0},
	    {"a/**/b", "a/b", 1},
	    {"a/**/b", "a/x/y/b", 1},
	    {"a/**/b", "a/b/c", 0},
	    {"a/**/b", "a/bc", 0},
	    {"a/**/", "a/x/f", 1},
	    {"a/**/", "a/f", 0},
	    {"**/", "f", 0},
	    {"**/", "d/f", 1},
	    {"**", "f", 1},
	    {"*", ".env", 1},
	    {".*", "a/.env", 1},
	    {".*", "a/.git/config", 0},
	    {".*", "a/b", 0},
	    {"[ab].c", "a.c", 1},
	    {"[ab].c", "c.c", 0},
	    {"[!ab].c", "c.c", 1},
	    {"[!ab].c", "a.c", 0},
	    {"[^ab].c", "a.c", 0},
	    {"[a-c]x", "bx", 1},
	    {"[a-c]x", "dx", 0},
	    {"[]a]", "]", 1},
	    {"x[[:digit:]]", "x1", 1},
	    {"x[[:digit:]]", "xa", 0},
	    {"?.c", "ab.c", 0},
	    {"?.c", "\xc3.c", 1},
	    {"\\*", "*", 1},
	    {"\\*", "a", 0},
	    {"a?c", "a/c", 0},
	    {"a*c", "a/c", 0},
	    /* not a path in normal form: never covered */
	    {"**", "/abs", 0},
	    {"**", "a//b", 0},
	    {"**", "a/./b", 0},
	    {"**", "../a", 0},
	    {"**", "a/", 0},
	    {"**", "", 0},
	};
	char norm[PGN_LEASE_NORM_SIZE];
	size_t i;

	for (i = 0; i < H_COUNT(t); i++) {
		if (!CHECK(norm_of(t[i].pat, norm)))
			continue;
		if (pgn_glob_match(norm, t[i].path) != t[i].want) {
			CHECK(!"match");
			printf("  '%s' (%s) and '%s': want %d\n", t[i].pat,
			    norm, t[i].path, t[i].want);
		}
	}
	CHECK(!pgn_glob_match(NULL, "a"));
	CHECK(!pgn_glob_match("a", NULL));
	CHECK(!pgn_glob_match("", "a"));
}

static void
test_overlap_table_of_pattern_pairs(void)
{
	static const struct {
		const char *a, *b;
		int want;
	} t[] = {
	    /* from the contract */
	    {"src/**", "*.c", 1},
	    {"src/*.c", "src/api/*.c", 0},
	    {"docs/", "docs/a.md", 1},
	    {"a/**/b", "a/x/**", 1},
	    {"[ab].c", "[bc].c", 1},
	    {"[a].c", "[b].c", 0},
	    /* '**' */
	    {"**", "x", 1},
	    {"**", "./x/y", 1},
	    {"a/**", "a", 1}, /* a/a */
	    {"./a/**", "./a", 0},
	    {"./a/**", "./a/*", 1},
	    {"a/**", "b/**", 0},
	    {"**/x", "**/y", 0},
	    {"./**/x", "y", 0},
	    {"./**/x", "x/", 1},
	    {"a/**/b", "a/b", 1},
	    {"a/**/b/c", "a/c/**", 1},
	    {"a/**/d", "a/b/c/d", 1},
	    {"a/**/z", "a/b/c/d", 0},
	    {"x/**/y", "./x/*", 1},
	    {"x/**/y", "./x/q", 0},
	    {"./**/a/b", "./c/d", 0},
	    {"**/", "./f", 0},
	    {"**/", "./d/", 1},
	    {"a/**/", "./a/f", 0},
	    {"a/**/", "./a/d/", 1},
	    /* '*' */
	    {"*", ".hidden", 1},
	    {"./*", "./a/b/c", 0},
	    {"./*/*/*", "./a/b/c", 1},
	    {"./*.c", "./src/x.c", 0},
	    {"src/*", "src/a/b.c", 0},
	    {"src/**", "src/a/b.c", 1},
	    {"*a*", "*b*", 1},
	    {"a*", "*b", 1},
	    {"a*", "b*", 0},
	    {"./a*", "./b*", 0},
	    {"./a*b", "./*ba", 0},
	    {"./a*b", "./*ab", 1},
	    {"./*.c", "./*.h", 0},
	    {"*.c", "*.h", 0},
	    {"./x/*.c", "./x/*.h", 0},
	    {"./x/a?", "./x/?b", 1},
	    {"./x/a?", "./x/??b", 0},
	    {"./?", "./??", 0},
	    /* directories, trailing slashes */
	    {"docs/", "docs", 1}, /* docs/docs */
	    {"./docs/", "./docs", 0},
	    {"./docs/", "docs/", 1},
	    {"./docs/", "./docs/a/b/c.md", 1},
	    {"./docs/", "./doc/", 0},
	    {"./src/api/", "./src/", 1},
	    {"./src/api/", "./src/db/", 0},
	    {"./src/api/", "src/*/x.c", 1},
	    {"./src/api/", "./src/*.c", 0},
	    {"./src/api", "./src/api.c", 0},
	    {"./a/b/", "./a/b", 0},
	    {"./a/b/", "./a/", 1},
	    {"./a/b/", "./a/**/c", 1},
	    {"build/", "*.o", 1},
	    /* the literal prefix first (decision 0208), then the automaton */
	    {"./a/b/c/", "./a/b/d/", 0},
	    {"./a/b/c/", "./a/b/c/d", 1},
	    {"./a/b/", "./a/?/x", 1},
	    {"./a/\\*/", "./a/x/", 0},
	    {"./a/\\*/", "./a/*/", 1},
	    {"./a/b/", "./a/[bc]/", 1},
	    {"./ab/", "./a/", 0},
	    {"./a/", "**/a/x", 1},
	    /* case */
	    {"README.md", "readme.md", 0},
	    {"./Src/", "./src/", 0},
	    {"[Rr]eadme.md", "readme.md", 1},
	    {"[[:upper:]]*", "./a*", 0},
	    {"[[:upper:]]*", "B*", 1},
	    /* '..' and '.' */
	    {"a/../b", "./b", 1},
	    {"a/../b", "./a", 0},
	    {"./a/./b", "./a/b", 1},
	    {"./x/..", "./anything", 1},
	    /* brackets */
	    {"[!a].c", "[a].c", 0},
	    {"[!a].c", "?.c", 1},
	    {"[a-c]", "[c-e]", 1},
	    {"./[a-c]", "./[d-f]", 0},
	    {"./[!a-z]", "./[a-z]", 0},
	    {"x[[:digit:]]", "x[0-3]", 1},
	    {"./x[[:digit:]]", "./x[a-z]", 0},
	    {"\\*", "./\\?", 0},
	    {"\\*", "?", 1},
	    /* dotfiles: '.' and '..' are not names */
	    {".*", "*.", 1},
	    {"./.*", "./*.", 1},
	    {"./.?", "./?.", 0},
	    {"./[.a]", "./[.b]", 0},
	    {"./.*", "./[!.]*", 0},
	    {".env", "*.env", 1},
	    {"./.env", "./*", 1},
	    /* any depth against the root */
	    {"Makefile", "./tools/", 1},
	    {"./Makefile", "./tools/", 0},
	    {"*.sql", "./db/", 1},
	    {"./*.sql", "./db/", 0},
	    {"*.sql", "./db/m.sql", 1},
	    {"./db/*.sql", "./*.sql", 0},
	    /* what lease takes are made of (decision 0155) */
	    {"src/", "tests/", 1}, /* src/tests/ and tests/src/ */
	    {"./src/", "docs/", 1},
	    {"./src/", "./docs/", 0},
	    {"./src/", "./src", 0},
	    {"src/api/", "src/**/*.c", 1},
	    {"src/api/**", "./src/api/", 1},
	    {"./src/api/", "./src/api.c", 0},
	    {"./src/../docs/", "./docs/x.md", 1},
	    {"./a/b/../../c/", "./c/", 1},
	    {"./a/b/../../c/", "./a/", 0},
	    {"src/API/", "src/api/", 0},
	    {"./SRC/", "./src/**", 0},
	    {"**/*.test.c", "./src/", 1},
	    {"./src/*.c", "./src/**/*.c", 1},
	    {"./src/*/", "./src/*.c", 0},
	};
	char na[PGN_LEASE_NORM_SIZE], nb[PGN_LEASE_NORM_SIZE];
	size_t i;

	CHECK(H_COUNT(t) >= 60);
	for (i = 0; i < H_COUNT(t); i++) {
		if (!CHECK(norm_of(t[i].a, na)) || !CHECK(norm_of(t[i].b, nb)))
			continue;
		if (pgn_glob_overlap(na, nb) != t[i].want ||
		    pgn_glob_overlap(nb, na) != t[i].want) {
			CHECK(!"overlap");
			printf("  '%s' (%s) and '%s' (%s): want %d\n", t[i].a,
			    na, t[i].b, nb, t[i].want);
		}
	}
	CHECK(!pgn_glob_overlap(NULL, "**"));
	CHECK(!pgn_glob_overlap("**", "a//b"));
	CHECK(!pgn_glob_overlap("**", "a/[b"));
}

/*
 * Adversarial patterns of the length bound: the work stays within the
 * product of the lengths (cells of the two automata), no exponential.
 */
static void
test_overlap_work_is_bounded_by_the_product_of_lengths(void)
{
	char a[PGN_MAX_LEASE_PATTERN + 1], b[PGN_MAX_LEASE_PATTERN + 1];
	char na[PGN_LEASE_NORM_SIZE], nb[PGN_LEASE_NORM_SIZE];
	const uint64_t bound =
	    (uint64_t)4 * PGN_LEASE_NORM_SIZE * PGN_LEASE_NORM_SIZE;
	uint64_t cells;
	size_t i;

	for (i = 0; i < PGN_MAX_LEASE_PATTERN; i++) {
		a[i] = "**/"[i % 3];
		b[i] = "*a"[i % 2];
	}
	a[PGN_MAX_LEASE_PATTERN - 1] = '*';
	a[PGN_MAX_LEASE_PATTERN] = b[PGN_MAX_LEASE_PATTERN] = '\0';
	REQUIRE(norm_of(a, na) && norm_of(b, nb));
	cells = 0;
	CHECK(pgn_glob_overlap_cells(na, nb, &cells));
	CHECK(cells <= bound);
	/* one long name against itself: 256 stars each */
	cells = 0;
	CHECK(pgn_glob_overlap_cells(nb, nb, &cells));
	CHECK(cells <= bound);
	/* '*a*a*...*b' never meets 'a...a': the classic backtracking trap */
	b[PGN_MAX_LEASE_PATTERN - 1] = 'b';
	memset(a, 'a', PGN_MAX_LEASE_PATTERN);
	REQUIRE(norm_of(a, na) && norm_of(b, nb));
	cells = 0;
	CHECK(!pgn_glob_overlap_cells(na, nb, &cells));
	CHECK(cells <= bound);
	/* many components: names '*a*' against '**' and 'a', alternating */
	for (i = 0; i < PGN_MAX_LEASE_PATTERN; i++) {
		a[i] = "*a*/"[i % 4];
		b[i] = "**/a/"[i % 5];
	}
	a[PGN_MAX_LEASE_PATTERN - 1] = 'b';
	b[PGN_MAX_LEASE_PATTERN - 1] = 'c';
	REQUIRE(norm_of(a, na) && norm_of(b, nb));
	cells = 0;
	(void)pgn_glob_overlap_cells(na, nb, &cells);
	CHECK(cells <= bound);
	printf("  adversarial pair: %llu cells (bound %llu)\n",
	    (unsigned long long)cells, (unsigned long long)bound);
	/* a long path against a star pattern */
	{
		char path[4000];

		memset(path, 'a', sizeof(path) - 1);
		path[sizeof(path) - 1] = '\0';
		CHECK(!pgn_glob_match(nb, path));
	}
}

/* ---- property: overlap agrees with brute force ------------------------ */

#define BF_DEPTH 4
/* Names of one or two bytes over {a, b, .}, '.' and '..' left out. */
static const char *const bf_names[] = {"a", "b", "aa", "ab", "a.", "ba", "bb",
    "b.", ".a", ".b"};
#define BF_NNAMES (sizeof(bf_names) / sizeof(bf_names[0]))
#define BF_NPATHS                                                              \
	(BF_NNAMES + BF_NNAMES * BF_NNAMES +                                   \
	    BF_NNAMES * BF_NNAMES * BF_NNAMES +                                \
	    BF_NNAMES * BF_NNAMES * BF_NNAMES * BF_NNAMES)

static char (*bf_paths)[16];
static size_t bf_npaths;

/* Append 's' to the string in 'dst' of 'cap' bytes (cut at the end). */
static void
cat(char *dst, size_t cap, const char *s)
{
	size_t n = strlen(dst), k = strlen(s);

	if (n + k >= cap)
		k = n + 1 < cap ? cap - n - 1 : 0;
	memcpy(dst + n, s, k);
	dst[n + k] = '\0';
}

static void
bf_build(void)
{
	size_t d, k, idx, n;

	bf_paths = calloc(BF_NPATHS, sizeof(*bf_paths));
	if (bf_paths == NULL)
		return;
	bf_npaths = 0;
	for (d = 1; d <= BF_DEPTH; d++) {
		for (n = 1, k = 0; k < d; k++)
			n *= BF_NNAMES;
		for (idx = 0; idx < n; idx++) {
			char *p = bf_paths[bf_npaths++];
			size_t v = idx;

			p[0] = '\0';
			for (k = 0; k < d; k++) {
				if (k > 0)
					cat(p, sizeof(bf_paths[0]), "/");
				cat(p, sizeof(bf_paths[0]),
				    bf_names[v % BF_NNAMES]);
				v /= BF_NNAMES;
			}
		}
	}
}

static uint32_t bf_seed = 20261202;

static uint32_t
bf_rand(void)
{
	bf_seed = bf_seed * 1103515245u + 12345u;
	return (bf_seed >> 16) & 0x7fff;
}

/*
 * A random pattern: one or two components (or '**'), each one or two
 * tokens; '.' only first in a name, so a common name, if any, has at
 * most two bytes and a common path at most BF_DEPTH components.
 */
static void
bf_pattern(char *out)
{
	static const char *const toks[] = {"a", "b", "?", "*", "[ab]", "[!a]",
	    "[.a]"};
	size_t nc = 1 + bf_rand() % 2, c, nt, k;

	out[0] = '\0';
	if (bf_rand() % 3 == 0)
		cat(out, 64, "./");
	for (c = 0; c < nc; c++) {
		if (c > 0)
			cat(out, 64, "/");
		if (bf_rand() % 5 == 0) {
			cat(out, 64, "**");
			continue;
		}
		nt = 1 + bf_rand() % 2;
		for (k = 0; k < nt; k++) {
			if (k == 0 && nt == 2 && bf_rand() % 4 == 0)
				cat(out, 64, ".");
			else
				cat(out, 64, toks[bf_rand() % 7]);
		}
	}
	if (bf_rand() % 4 == 0)
		cat(out, 64, "/");
}

#define BF_NPAT 150

static void
test_overlap_agrees_with_brute_force(void)
{
	static char pats[BF_NPAT][64], norms[BF_NPAT][PGN_LEASE_NORM_SIZE];
	static unsigned char cover[BF_NPAT][(BF_NPATHS + 7) / 8];
	struct pgn_err err;
	size_t n = 0, i, j, p, agree = 0, both = 0;

	bf_build();
	REQUIRE(bf_paths != NULL);
	while (n < BF_NPAT) {
		bf_pattern(pats[n]);
		pgn_err_clear(&err);
		if (pgn_glob_check(pats[n], norms[n], PGN_LEASE_NORM_SIZE,
		        &err) != PGN_OK)
			continue;
		memset(cover[n], 0, sizeof(cover[n]));
		for (p = 0; p < bf_npaths; p++)
			if (pgn_glob_match(norms[n], bf_paths[p]))
				cover[n][p / 8] |=
				    (unsigned char)(1u << (p % 8));
		n++;
	}
	for (i = 0; i < n; i++) {
		for (j = i; j < n; j++) {
			int brute = 0,
			    got = pgn_glob_overlap(norms[i], norms[j]);

			for (p = 0; p < sizeof(cover[i]) && !brute; p++)
				brute = (cover[i][p] & cover[j][p]) != 0;
			if (got != brute ||
			    got != pgn_glob_overlap(norms[j], norms[i])) {
				CHECK(!"brute force");
				printf("  '%s' (%s) and '%s' (%s): brute %d, "
				       "overlap %d\n",
				    pats[i], norms[i], pats[j], norms[j], brute,
				    got);
			} else {
				agree++;
			}
			both += (size_t)brute;
		}
	}
	printf("  %zu pairs agree, %zu of them overlap, over %zu paths\n",
	    agree, both, bf_npaths);
	free(bf_paths);
	bf_paths = NULL;
}

static const struct h_test tests[] = {
    H_TEST(test_check_normalizes_patterns),
    H_TEST(test_check_refuses_bad_patterns_with_one_line),
    H_TEST(test_pattern_length_bound_is_max_lease_pattern),
    H_TEST(test_match_covers_paths_as_gitignore_does),
    H_TEST(test_overlap_table_of_pattern_pairs),
    H_TEST(test_overlap_work_is_bounded_by_the_product_of_lengths),
    H_TEST(test_overlap_agrees_with_brute_force),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
