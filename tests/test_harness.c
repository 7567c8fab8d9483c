/*
 * The test harness itself: a REQUIRE stops only its own test, the runner
 * goes on to the next, counts and reports each, and removes every test's
 * temporary directory, the stopped test's too.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define INNER_N 3

/* What the inner tests saw; filled while an inner h_run runs. */
static int inner_ran[INNER_N];
static int inner_after_require;
static char inner_tmp[INNER_N][PATH_MAX];

static void
inner_note(int i)
{
	char path[PATH_MAX];

	inner_ran[i] = 1;
	memcpy(inner_tmp[i], h_tmp, sizeof(h_tmp));
	H_PATH(path, "left-behind");
	h_write_file(path, "x", 1);
}

static void
inner_first_passes(void)
{
	inner_note(0);
	CHECK_INT(1 + 1, 2);
}

static void
inner_required_check_fails(void)
{
	inner_note(1);
	REQUIRE(1 + 1 == 3);
	inner_after_require = 1;
}

static void
inner_last_passes(void)
{
	inner_note(2);
	CHECK_STR("a", "a");
}

static const struct h_test inner[INNER_N] = {
    H_TEST(inner_first_passes),
    H_TEST(inner_required_check_fails),
    H_TEST(inner_last_passes),
};

/* Send stdout to 'path'; the old stdout's descriptor, or -1. */
static int
stdout_to(const char *path)
{
	int saved, fd;

	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (saved < 0 || fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
		if (fd >= 0)
			close(fd);
		if (saved >= 0)
			close(saved);
		return -1;
	}
	close(fd);
	return saved;
}

static void
stdout_back(int saved)
{
	fflush(stdout);
	(void)dup2(saved, STDOUT_FILENO);
	close(saved);
}

/*
 * Run 'inner' with h_run, its stdout going to 'out'; the outer test's
 * failures, temp directory and abort point are saved and put back.
 */
static int
run_inner(const char *out)
{
	char tmp[PATH_MAX];
	jmp_buf abort_to;
	int failures, saved, rc;

	saved = stdout_to(out);
	if (saved < 0)
		return -1;
	failures = h_failures;
	memcpy(tmp, h_tmp, sizeof(tmp));
	memcpy(abort_to, h_abort, sizeof(jmp_buf));
	rc = h_run(inner, INNER_N);
	memcpy(h_abort, abort_to, sizeof(jmp_buf));
	memcpy(h_tmp, tmp, sizeof(tmp));
	h_failures = failures;
	stdout_back(saved);
	return rc;
}

static void
test_require_stops_only_its_own_test(void)
{
	char out[PATH_MAX];
	char *text;
	size_t len;
	int i;

	H_PATH(out, "inner.out");
	CHECK_INT(run_inner(out), 1);
	for (i = 0; i < INNER_N; i++) {
		CHECK_INT(inner_ran[i], 1);
		/* Each had its own directory, and it is gone. */
		CHECK(inner_tmp[i][0] == '/');
		CHECK(!h_exists(inner_tmp[i]));
	}
	CHECK(strcmp(inner_tmp[0], inner_tmp[1]) != 0);
	CHECK_INT(inner_after_require, 0);
	text = h_read_file(out, &len);
	REQUIRE(text != NULL);
	CHECK_CONTAINS(text, "ok   inner_first_passes\n");
	CHECK_CONTAINS(text, "test_harness.c:");
	CHECK_CONTAINS(text, ": 1 + 1 == 3\n");
	CHECK_CONTAINS(text, "FAIL inner_required_check_fails (1)\n");
	CHECK_CONTAINS(text, "ok   inner_last_passes\n");
	CHECK_CONTAINS(text, "2 passed, 1 failed\n");
	free(text);
	/* The outer test's own state came back. */
	CHECK_INT(h_failures, 0);
	CHECK(h_exists(out));
}

static void
test_checks_count_each_failure_and_say_if_they_held(void)
{
	char out[PATH_MAX];
	char *text;
	size_t len;
	int before = h_failures, held[3], after[3], saved;

	H_PATH(out, "checks.out");
	saved = stdout_to(out);
	REQUIRE(saved >= 0);
	held[0] = h_check(0, "f.c", 7, "expr");
	after[0] = h_failures;
	held[1] = h_check_str(NULL, "x", "f.c", 8, "a", "b");
	after[1] = h_failures;
	held[2] = h_check_int(3, 3, "f.c", 9, "a", "b");
	after[2] = h_failures;
	/* The two deliberate failures are not this test's. */
	h_failures = before;
	stdout_back(saved);
	CHECK_INT(held[0], 0);
	CHECK_INT(after[0], before + 1);
	CHECK_INT(held[1], 0);
	CHECK_INT(after[1], before + 2);
	CHECK_INT(held[2], 1);
	CHECK_INT(after[2], before + 2);
	text = h_read_file(out, &len);
	REQUIRE(text != NULL);
	CHECK_STR(text, "f.c:7: expr\nf.c:8: a == b: \"(null)\" != \"x\"\n");
	free(text);
}

static const struct h_test tests[] = {
    H_TEST(test_require_stops_only_its_own_test),
    H_TEST(test_checks_count_each_failure_and_say_if_they_held),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
