/*
 * Unit tests of SQLite's math functions as Pigeon links them: through
 * broker/src/base/libm.c, which opens libm on the first call
 * (PGN_LIBM_ON_DEMAND, docs/decisions/0250), or libm linked as before.
 * Either way every one of them answers what libm answers.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "harness.h"

#ifndef PGN_LIBM_ON_DEMAND
#define PGN_LIBM_ON_DEMAND 0
#endif

/* libm already mapped in this process (never loads it). */
static int
libm_loaded(void)
{
	void *h = dlopen("libm.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (h == NULL)
		return 0;
	dlclose(h);
	return 1;
}

/* The one REAL value of 'sql' on 'db', or NAN (no row, NULL, an error). */
static double
real_of(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	double v = NAN;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW &&
	    sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_double(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int
near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * (fabs(b) > 1 ? fabs(b) : 1);
}

/*
 * Each of the 19 functions libm alone defines that the static SQLite
 * calls, by the SQL function that calls it, against its value (the
 * mathematical constants, to 17 digits). First in the file: the check
 * that libm was not loaded before the first call needs a process in
 * which no math has run.
 */
static void
test_libm_sql_math_functions_answer_what_libm_answers(void)
{
	static const struct {
		const char *sql;
		double want;
	} cases[] = {
	    {"SELECT acos(0.5)", 1.0471975511965979},
	    {"SELECT acosh(2.0)", 1.3169578969248166},
	    {"SELECT asin(0.5)", 0.52359877559829893},
	    {"SELECT asinh(1.0)", 0.88137358701954305},
	    {"SELECT atan(1.0)", 0.78539816339744828},
	    {"SELECT atan2(1.0, -1.0)", 2.3561944901923448},
	    {"SELECT atanh(0.5)", 0.54930614433405489},
	    {"SELECT cos(1.0)", 0.54030230586813977},
	    {"SELECT cosh(1.0)", 1.5430806348152437},
	    {"SELECT exp(1.0)", 2.7182818284590451},
	    {"SELECT mod(7.5, 2.0)", 1.5},
	    {"SELECT ln(10.0)", 2.3025850929940459},
	    {"SELECT pow(2.0, 0.5)", 1.4142135623730951},
	    {"SELECT sin(1.0)", 0.8414709848078965},
	    {"SELECT sinh(1.0)", 1.1752011936438014},
	    {"SELECT sqrt(3.0)", 1.7320508075688772},
	    {"SELECT tan(1.0)", 1.5574077246549023},
	    {"SELECT tanh(1.0)", 0.76159415595576485},
	    {"SELECT trunc(-2.75)", -2.0},
	};
	sqlite3 *db = NULL;
	size_t i;
	double got;

	if (PGN_LIBM_ON_DEMAND && !UNDER_ASAN)
		CHECK(!libm_loaded()); /* not mapped at start */
	REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		got = real_of(db, cases[i].sql);
		if (!CHECK(near(got, cases[i].want)))
			printf("  %s: %.17g, not %.17g\n", cases[i].sql, got,
			    cases[i].want);
	}
	/* out of a function's domain: NULL, as SQLite answers for NaN */
	CHECK(isnan(real_of(db, "SELECT acos(2.0)")));
	CHECK(isnan(real_of(db, "SELECT sqrt(-1.0)")));
	sqlite3_close(db);
	CHECK(libm_loaded()); /* on demand, or linked */
}

/* FTS5's ranking (bm25, a log) on a MATCH query ordered by rank. */
static void
test_libm_fts5_ranks_by_bm25(void)
{
	sqlite3 *db = NULL;

	REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
	REQUIRE(sqlite3_exec(db,
	            "CREATE VIRTUAL TABLE t USING fts5(b);"
	            "INSERT INTO t VALUES ('pigeon pigeon pigeon'),"
	            "('pigeon and a crow'),('a crow')",
	            NULL, NULL, NULL) == SQLITE_OK);
	CHECK(
	    real_of(db,
	        "SELECT bm25(t) FROM t WHERE t MATCH 'pigeon' ORDER BY rank LIMIT 1") <
	    0);
	CHECK(near(
	    real_of(db,
	        "SELECT count(*) FROM t WHERE t MATCH 'pigeon' AND bm25(t) < 0"),
	    2));
	sqlite3_close(db);
}

static const struct h_test tests[] = {
    H_TEST(test_libm_sql_math_functions_answer_what_libm_answers),
    H_TEST(test_libm_fts5_ranks_by_bm25),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
