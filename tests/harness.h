/*
 * The unit-test harness: checks that print file:line and count failures,
 * a table runner that gives each test a fresh temp directory, and
 * helpers for temp paths, raw SQLite connections and file contents.
 *
 * A test file includes its system headers first, then this header (it
 * pulls in banned.h, which must come after every system header), writes
 * static void test_<behaviour>(void) cases and ends with
 *
 *	static const struct h_test tests[] = { H_TEST(test_x), ... };
 *	int main(void) { return h_run(tests, H_COUNT(tests)); }
 */
#ifndef PGN_TEST_HARNESS_H
#define PGN_TEST_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <sqlite3.h>

#include "pigeon/pigeon.h"
#include "banned.h"

#if defined(__GNUC__)
#define H_UNUSED __attribute__((unused))
#else
#define H_UNUSED
#endif

/*
 * 1 in a build with AddressSanitizer (gcc's macro, clang's feature):
 * its runtime replaces malloc and loads libm itself.
 */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

struct h_test {
	const char *name;
	void (*fn)(void);
};

#define H_TEST(fn)                                                             \
	{                                                                      \
#fn, fn                                                        \
	}
#define H_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Failures of the current test; its fresh temp directory (realpath). */
static int h_failures;
static char h_tmp[PATH_MAX];
static jmp_buf h_abort;

/* Each check evaluates to 1 if it held, so a test can stop early. */
#define CHECK(expr) h_check((expr) != 0, __FILE__, __LINE__, #expr)
#define CHECK_INT(a, b)                                                        \
	h_check_int((long long)(a), (long long)(b), __FILE__, __LINE__, #a, #b)
#define CHECK_STR(a, b) h_check_str((a), (b), __FILE__, __LINE__, #a, #b)
#define CHECK_CONTAINS(hay, needle)                                            \
	h_check_contains((hay), (needle), __FILE__, __LINE__, #hay, #needle)
/* A check the rest of the test cannot do without: stop the test. */
#define REQUIRE(expr)                                                          \
	do {                                                                   \
		if (!CHECK(expr))                                              \
			longjmp(h_abort, 1);                                   \
	} while (0)

static H_UNUSED int
h_check(int ok, const char *file, int line, const char *expr)
{
	if (ok)
		return 1;
	h_failures++;
	printf("%s:%d: %s\n", file, line, expr);
	fflush(stdout);
	return 0;
}

static H_UNUSED int
h_check_int(long long a, long long b, const char *file, int line,
    const char *ea, const char *eb)
{
	if (a == b)
		return 1;
	h_failures++;
	printf("%s:%d: %s == %s: %lld != %lld\n", file, line, ea, eb, a, b);
	fflush(stdout);
	return 0;
}

static H_UNUSED int
h_check_str(const char *a, const char *b, const char *file, int line,
    const char *ea, const char *eb)
{
	if ((a == NULL && b == NULL) ||
	    (a != NULL && b != NULL && strcmp(a, b) == 0))
		return 1;
	h_failures++;
	printf("%s:%d: %s == %s: \"%s\" != \"%s\"\n", file, line, ea, eb,
	    a != NULL ? a : "(null)", b != NULL ? b : "(null)");
	fflush(stdout);
	return 0;
}

static H_UNUSED int
h_check_contains(const char *hay, const char *needle, const char *file,
    int line, const char *eh, const char *en)
{
	if (hay != NULL && needle != NULL && strstr(hay, needle) != NULL)
		return 1;
	h_failures++;
	printf("%s:%d: %s contains %s: \"%s\" lacks \"%s\"\n", file, line, eh,
	    en, hay != NULL ? hay : "(null)",
	    needle != NULL ? needle : "(null)");
	fflush(stdout);
	return 0;
}

/* ---- paths and files ------------------------------------------------ */

/* out = dir + "/" + name; a path too long for 'out' stops the test. */
static H_UNUSED void
h_join(char *out, size_t len, const char *dir, const char *name)
{
	int n;

	n = snprintf(out, len, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= len) {
		h_check(0, __FILE__, __LINE__, "path fits its buffer");
		longjmp(h_abort, 1);
	}
}

/* A path under the current test's temp directory. */
#define H_PATH(buf, name) h_join((buf), sizeof(buf), h_tmp, (name))

static H_UNUSED void
h_mkdir(const char *path)
{
	if (mkdir(path, 0700) != 0) {
		printf("mkdir %s: %s\n", path, strerror(errno));
		h_check(0, __FILE__, __LINE__, "mkdir succeeds");
		longjmp(h_abort, 1);
	}
}

/* Write 'len' bytes of 'data' to a new (or truncated) file 'path'. */
static H_UNUSED void
h_write_file(const char *path, const void *data, size_t len)
{
	FILE *f;
	int ok;

	f = fopen(path, "wb");
	ok = f != NULL && fwrite(data, 1, len, f) == len;
	if (f != NULL && fclose(f) != 0)
		ok = 0;
	if (!ok) {
		printf("writing %s: %s\n", path, strerror(errno));
		h_check(0, __FILE__, __LINE__, "file written");
		longjmp(h_abort, 1);
	}
}

/* Whole file as a malloc'd buffer (NUL-terminated), or NULL. */
static H_UNUSED char *
h_read_file(const char *path, size_t *len)
{
	FILE *f;
	char *p = NULL, *q;
	size_t cap = 0, n = 0, r;

	*len = 0;
	f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			q = realloc(p, cap + 65536);
			if (q == NULL) {
				free(p);
				fclose(f);
				return NULL;
			}
			p = q;
			cap += 65536;
		}
		r = fread(p + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	p[n] = '\0';
	*len = n;
	return p;
}

static H_UNUSED int
h_exists(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0;
}

static int
h_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) != 0 ? -1 : 0;
	return unlink(path) != 0 ? -1 : 0;
}

/* rm -rf 'path' (no symlinks followed). */
static H_UNUSED int
h_rmrf(const char *path)
{
	return nftw(path, h_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh directory under $TMPDIR or /tmp, resolved with realpath. */
static int
h_tmp_new(void)
{
	char tmpl[PATH_MAX];
	const char *base;
	int n;

	base = getenv("TMPDIR");
	if (base == NULL || *base == '\0')
		base = "/tmp";
	n = snprintf(tmpl, sizeof(tmpl), "%s/pigeon-test.XXXXXX", base);
	if (n < 0 || (size_t)n >= sizeof(tmpl))
		return 0;
	if (mkdtemp(tmpl) == NULL)
		return 0;
	if (realpath(tmpl, h_tmp) == NULL) {
		(void)rmdir(tmpl);
		return 0;
	}
	return 1;
}

/* ---- databases ------------------------------------------------------ */

/* Open (creating) the database at 'path'; failure stops the test. */
static H_UNUSED pgn_db *
h_open_path(const char *path, long deadline_ms)
{
	pgn_db *db = NULL;
	pgn_status rc;

	rc = pgn_db_open(path, PGN_OPEN_CREATE, deadline_ms, &db);
	if (rc != PGN_OK) {
		printf("pgn_db_open %s: %s: %s\n", path, pgn_status_name(rc),
		    pgn_errmsg(db));
		pgn_db_close(db);
		h_check(0, __FILE__, __LINE__, "database opens");
		longjmp(h_abort, 1);
	}
	return db;
}

/* A fresh database, h_tmp/pigeon.db. */
static H_UNUSED pgn_db *
h_open(void)
{
	char path[PATH_MAX];

	H_PATH(path, "pigeon.db");
	return h_open_path(path, 0);
}

/* A second, plain SQLite connection to 'path' (for state checks). */
static H_UNUSED sqlite3 *
h_raw_open(const char *path)
{
	sqlite3 *s = NULL;

	if (sqlite3_open_v2(path, &s,
	        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
	        NULL) != SQLITE_OK) {
		printf("sqlite3_open %s: %s\n", path,
		    s != NULL ? sqlite3_errmsg(s) : "out of memory");
		sqlite3_close(s);
		h_check(0, __FILE__, __LINE__, "raw connection opens");
		longjmp(h_abort, 1);
	}
	sqlite3_busy_timeout(s, 5000);
	return s;
}

/* The raw connection to h_tmp/pigeon.db. */
static H_UNUSED sqlite3 *
h_raw(void)
{
	char path[PATH_MAX];

	H_PATH(path, "pigeon.db");
	return h_raw_open(path);
}

/*
 * Check that the plan of 'sql' (EXPLAIN QUERY PLAN on 'raw') reads the
 * queue through the partial index message_queued and scans neither the
 * message table nor, when 'forbid' is set, a table whose scan starts
 * with it ("SCAN s"); prints the plan, with 'label', when it does not.
 */
#define H_QUEUE_PLAN(raw, sql, forbid, label)                                  \
	h_queue_plan((raw), (sql), (forbid), (label), __FILE__, __LINE__)

static H_UNUSED void
h_queue_plan(sqlite3 *raw, const char *sql, const char *forbid,
    const char *label, const char *file, int line)
{
	char text[8192], plan[4096];
	sqlite3_stmt *st = NULL;
	size_t n = 0;
	int uses = 0, scans = 0, k;
	const char *d;

	plan[0] = '\0';
	k = snprintf(text, sizeof(text), "EXPLAIN QUERY PLAN %s", sql);
	if (k < 0 || (size_t)k >= sizeof(text) ||
	    sqlite3_prepare_v2(raw, text, -1, &st, NULL) != SQLITE_OK) {
		h_check(0, file, line, "EXPLAIN QUERY PLAN prepares");
		return;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		d = (const char *)sqlite3_column_text(st, 3);
		if (d == NULL)
			continue;
		k = snprintf(plan + n, sizeof(plan) - n, "%s; ", d);
		if (k > 0 && (size_t)k < sizeof(plan) - n)
			n += (size_t)k;
		if (strstr(d, "INDEX message_queued") != NULL)
			uses = 1;
		if (strncmp(d, "SCAN m", 6) == 0 ||
		    strstr(d, "SCAN message") != NULL ||
		    strstr(d, "SCAN TABLE message") != NULL ||
		    (forbid != NULL && strncmp(d, forbid, strlen(forbid)) == 0))
			scans = 1;
	}
	sqlite3_finalize(st);
	if (!h_check(uses, file, line, "the plan uses message_queued") ||
	    !h_check(!scans, file, line, "the plan scans no table"))
		printf("  %s: plan: %s\n", label, plan);
}

#define H_EXEC(s, sql) h_exec((s), (sql), __FILE__, __LINE__)
#define H_INT(s, sql)  h_int((s), (sql), __FILE__, __LINE__)

static H_UNUSED int
h_exec(sqlite3 *s, const char *sql, const char *file, int line)
{
	char *err = NULL;
	int rc;

	rc = sqlite3_exec(s, sql, NULL, NULL, &err);
	if (rc == SQLITE_OK)
		return 1;
	h_failures++;
	printf("%s:%d: sql failed: %s: %s\n", file, line, sql,
	    err != NULL ? err : sqlite3_errstr(rc));
	fflush(stdout);
	sqlite3_free(err);
	return 0;
}

/* First column of the first row of 'sql' as an integer; -1 on error. */
static H_UNUSED long long
h_int(sqlite3 *s, const char *sql, const char *file, int line)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;
	int rc;

	rc = sqlite3_prepare_v2(s, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_ROW) {
		h_failures++;
		printf("%s:%d: sql gave no row: %s: %s\n", file, line, sql,
		    sqlite3_errmsg(s));
		fflush(stdout);
	}
	sqlite3_finalize(st);
	return v;
}

/* ---- runner --------------------------------------------------------- */

/*
 * The only setjmp frame. A REQUIRE's longjmp returns here, and C11
 * 7.13.2.1 leaves indeterminate every non-volatile local changed after
 * setjmp; this frame has none live after it (gcc -O2 -Wclobbered), and
 * never being inlined, it cannot lend h_run's counters to the setjmp.
 */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static H_UNUSED void
h_call(void (*fn)(void))
{
	if (setjmp(h_abort) == 0)
		fn();
}

static H_UNUSED int
h_run(const struct h_test *t, size_t n)
{
	size_t i, passed = 0, failed = 0;

	umask(022);
	for (i = 0; i < n; i++) {
		h_failures = 0;
		printf("-- %s\n", t[i].name);
		fflush(stdout);
		if (!h_tmp_new()) {
			printf("cannot make a temp directory: %s\n",
			    strerror(errno));
			h_failures++;
		} else {
			h_call(t[i].fn);
			if (h_rmrf(h_tmp) != 0) {
				printf("cannot remove %s: %s\n", h_tmp,
				    strerror(errno));
				h_failures++;
			}
		}
		if (h_failures == 0) {
			passed++;
			printf("ok   %s\n", t[i].name);
		} else {
			failed++;
			printf("FAIL %s (%d)\n", t[i].name, h_failures);
		}
		fflush(stdout);
	}
	printf("%zu passed, %zu failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}

#endif /* PGN_TEST_HARNESS_H */
