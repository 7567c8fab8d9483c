/*
 * The capability cells of the host table (pigeon hosts): every cell has
 * evidence of the kind its answer needs, and every test it names exists
 * in the tree.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pigeon/hosts.h"

/* The source tree: tests/fixtures/../.. */
static void
tree_root(char *out, size_t len)
{
	const char *f = getenv("PGN_TEST_FIXTURES");
	const char *slash;

	if (f != NULL && *f != '\0') {
		snprintf(out, len, "%s/../..", f);
		return;
	}
	slash = strrchr(__FILE__, '/');
	REQUIRE(slash != NULL);
	snprintf(out, len, "%.*s/..", (int)(slash - __FILE__), __FILE__);
}

/* Does 's' hold a date read "(YYYY-MM-DD)"? */
static int
has_date(const char *s)
{
	const char *p;

	for (p = strstr(s, "(20"); p != NULL; p = strstr(p + 1, "(20"))
		if (strlen(p) >= 12 && isdigit((unsigned char)p[3]) &&
		    isdigit((unsigned char)p[4]) && p[5] == '-' &&
		    isdigit((unsigned char)p[6]) && p[8] == '-' &&
		    isdigit((unsigned char)p[9]) && p[11] == ')')
			return 1;
	return 0;
}

/*
 * The tests 'evidence' names ("integration/tNNNN-NAME"): '*named' how
 * many, 0 returned if one of them is not a file of the tree (its name
 * in 'missing').
 */
static int
tests_exist(const char *root, const char *evidence, int *named, char *missing,
    size_t mlen)
{
	char path[PATH_MAX], name[128];
	const char *p;
	size_t n;

	*named = 0;
	for (p = strstr(evidence, "integration/t"); p != NULL;
	     p = strstr(p + 1, "integration/t")) {
		n = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-_/");
		if (n >= sizeof(name))
			return 0;
		memcpy(name, p, n);
		name[n] = '\0';
		(*named)++;
		snprintf(path, sizeof(path), "%s/%s.sh", root, name);
		if (!h_exists(path)) {
			snprintf(missing, mlen, "%s", name);
			return 0;
		}
	}
	return 1;
}

/*
 * Why cell 'c' is not acceptable, or NULL: evidence must be there; a
 * "yes" names a test of the tree that proved it; a "no" names the
 * document (address and date), flag or issue behind it; a "partial"
 * one of the two. Every test named must exist.
 */
static const char *
cell_problem(const char *root, const struct pgn_cell *c)
{
	static char why[256];
	char missing[128] = "";
	int named = 0;

	if (c->evidence == NULL || strlen(c->evidence) < 10)
		return "no evidence";
	if (!tests_exist(root, c->evidence, &named, missing, sizeof(missing))) {
		snprintf(why, sizeof(why), "names %s, which is not in the tree",
		    missing);
		return why;
	}
	if (c->cap == PGN_CAP_YES && named == 0)
		return "a yes without the test that proved it";
	if (c->cap == PGN_CAP_NO && !has_date(c->evidence) &&
	    strchr(c->evidence, '#') == NULL)
		return "a no without the document (and date) or issue behind it";
	if (c->cap == PGN_CAP_PARTIAL && named == 0 && !has_date(c->evidence))
		return "a partial without a test or a document";
	return NULL;
}

static void
test_every_cell_of_every_row_has_its_evidence(void)
{
	char root[PATH_MAX];
	const struct pgn_host_info *hi;
	const char *why;
	int i, e, n;

	tree_root(root, sizeof(root));
	n = pgn_host_rows();
	CHECK(n > PGN_NHOSTS);
	for (i = 0; i < n; i++) {
		hi = pgn_host_row(i);
		REQUIRE(hi != NULL);
		CHECK(hi->name != NULL && hi->title != NULL);
		for (e = 0; e < PGN_NEVENTS; e++) {
			why = cell_problem(root, &hi->cells[e]);
			if (why != NULL) {
				CHECK(why == NULL);
				printf("  %s %s: %s\n", hi->name,
				    pgn_facet_name((pgn_event)e), why);
			}
		}
		/* The doorbell's cell (decisions 0176, 0178). */
		why = cell_problem(root, &hi->wake);
		if (why != NULL) {
			CHECK(why == NULL);
			printf("  %s doorbell: %s\n", hi->name, why);
		}
		CHECK(hi->doorbell == NULL || hi->wake.cap == PGN_CAP_YES);
	}
	CHECK(pgn_host_row(n) == NULL);
	CHECK(pgn_host_row(-1) == NULL);
}

static void
test_the_checker_refuses_cells_without_evidence(void)
{
	static const struct pgn_cell bad[] = {
	    {PGN_CAP_YES, NULL},
	    {PGN_CAP_NO, ""},
	    {PGN_CAP_YES, "Claude Code 2.1.332, by hand"},
	    {PGN_CAP_NO, "the docs say so somewhere"},
	    {PGN_CAP_YES, "Foo 1.0, integration/t9999-host-foo"},
	    {PGN_CAP_PARTIAL, "it sort of works"},
	};
	static const struct pgn_cell good[] = {
	    {PGN_CAP_YES, "Claude Code 2.1.332, integration/t0501-host-claude"},
	    {PGN_CAP_NO, "example.com/docs/hooks (2026-08-25): no such event"},
	    {PGN_CAP_NO, "no event for it: owner/repo#123"},
	};
	char root[PATH_MAX];
	size_t i;

	tree_root(root, sizeof(root));
	for (i = 0; i < H_COUNT(bad); i++)
		CHECK(cell_problem(root, &bad[i]) != NULL);
	for (i = 0; i < H_COUNT(good); i++)
		CHECK(cell_problem(root, &good[i]) == NULL);
}

static void
test_rows_are_found_by_name_and_hook_rows_are_the_hook_hosts(void)
{
	const struct pgn_host_info *hi;
	static const char *const want[] = {"cursor", "claude", "codex",
	    "gemini", "copilot", "grok", "windsurf"};
	size_t i;
	int h;

	for (i = 0; i < H_COUNT(want); i++) {
		hi = pgn_host_row_by_name(want[i]);
		REQUIRE(hi != NULL);
		CHECK_STR(hi->name, want[i]);
	}
	CHECK(pgn_host_row_by_name("vim") == NULL);
	for (h = 0; h < PGN_NHOSTS; h++) {
		CHECK(pgn_host_row(h) == pgn_host_get((pgn_host)h));
		CHECK(pgn_host_row(h)->mechanism != PGN_MECH_INSTRUCTIONS);
	}
	/* The rows past the hook rows have no hook: install never sees them. */
	for (h = PGN_NHOSTS; h < pgn_host_rows(); h++) {
		hi = pgn_host_row(h);
		CHECK_INT(hi->mechanism, PGN_MECH_INSTRUCTIONS);
		CHECK(pgn_host_by_name(hi->name) == PGN_HOST_NONE);
		CHECK(hi->events[PGN_EVENT_SESSION_START] == NULL);
	}
	CHECK_STR(pgn_cap_name(PGN_CAP_PARTIAL), "partial");
	CHECK_STR(pgn_mechanism_name(PGN_MECH_INSTRUCTIONS), "instructions");
}

static const struct h_test tests[] = {
    H_TEST(test_every_cell_of_every_row_has_its_evidence),
    H_TEST(test_the_checker_refuses_cells_without_evidence),
    H_TEST(test_rows_are_found_by_name_and_hook_rows_are_the_hook_hosts),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
