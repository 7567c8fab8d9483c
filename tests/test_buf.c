/* Unit tests of struct pgn_buf, the bounded string builder, and size maths. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "pgn_int.h"

static void
test_buf_appends_bytes_strings_and_formats(void)
{
	struct pgn_buf b;
	size_t len = 0;
	char *s;

	pgn_buf_init(&b, 100);
	pgn_buf_add(&b, "ab", 2);
	pgn_buf_adds(&b, "cd");
	pgn_buf_addf(&b, "-%d-%s-%zu", 42, "x", (size_t)7);
	CHECK_INT(b.err, PGN_OK);
	CHECK_INT(b.len, 11);
	CHECK_STR(b.data, "abcd-42-x-7");
	s = pgn_buf_take(&b, &len);
	CHECK_STR(s, "abcd-42-x-7");
	CHECK_INT(len, 11);
	/* take hands the memory over and leaves an empty, usable buffer */
	CHECK(b.data == NULL);
	CHECK_INT(b.len, 0);
	CHECK_INT(b.max, 100);
	free(s);
	pgn_buf_release(&b);
}

static void
test_buf_add_of_zero_bytes_keeps_it_empty(void)
{
	struct pgn_buf b;

	pgn_buf_init(&b, 10);
	pgn_buf_add(&b, "", 0);
	pgn_buf_adds(&b, "");
	CHECK_INT(b.err, PGN_OK);
	CHECK_INT(b.len, 0);
	pgn_buf_release(&b);
}

static void
test_buf_grows_across_many_appends(void)
{
	struct pgn_buf b;
	size_t i;
	int ok = 1;

	pgn_buf_init(&b, 100000);
	for (i = 0; i < 10000; i++)
		pgn_buf_addf(&b, "%c", (char)('a' + i % 26));
	CHECK_INT(b.err, PGN_OK);
	CHECK_INT(b.len, 10000);
	CHECK(b.cap > b.len);
	for (i = 0; b.data != NULL && i < 10000; i++)
		if (b.data[i] != (char)('a' + i % 26))
			ok = 0;
	CHECK(ok);
	CHECK(b.data != NULL && b.data[10000] == '\0');
	pgn_buf_release(&b);
	CHECK(b.data == NULL);
	CHECK_INT(b.len, 0);
}

static void
test_buf_accepts_exactly_max_bytes(void)
{
	struct pgn_buf b;

	pgn_buf_init(&b, 5);
	pgn_buf_adds(&b, "hel");
	pgn_buf_addf(&b, "%s", "lo");
	CHECK_INT(b.err, PGN_OK);
	CHECK_INT(b.len, 5);
	CHECK_STR(b.data, "hello");
	pgn_buf_release(&b);
}

static void
test_buf_refuses_to_grow_past_max(void)
{
	struct pgn_buf b;

	pgn_buf_init(&b, 4);
	pgn_buf_add(&b, "hello", 5);
	CHECK_INT(b.err, PGN_ETOOBIG);
	CHECK_INT(b.len, 0);
	CHECK(pgn_buf_take(&b, NULL) == NULL);
	/* take after an error released the buffer: still safe to release */
	CHECK(b.data == NULL);
	pgn_buf_release(&b);
}

static void
test_buf_error_is_sticky(void)
{
	struct pgn_buf b;
	size_t len = 99;

	pgn_buf_init(&b, 8);
	pgn_buf_adds(&b, "1234");
	pgn_buf_adds(&b, "56789"); /* one over: refused whole */
	CHECK_INT(b.err, PGN_ETOOBIG);
	CHECK_INT(b.len, 4);
	CHECK_STR(b.data, "1234");
	/* later appends that would fit do nothing */
	pgn_buf_adds(&b, "5");
	pgn_buf_add(&b, "6", 1);
	pgn_buf_addf(&b, "%d", 7);
	CHECK_INT(b.err, PGN_ETOOBIG);
	CHECK_INT(b.len, 4);
	CHECK_STR(b.data, "1234");
	CHECK(pgn_buf_take(&b, &len) == NULL);
	CHECK_INT(len, 99); /* untouched on failure */
	pgn_buf_release(&b);
}

static void
test_buf_addf_past_max_is_refused(void)
{
	struct pgn_buf b;

	pgn_buf_init(&b, 10);
	pgn_buf_addf(&b, "%s", "abc");
	pgn_buf_addf(&b, "%08d", 1); /* 3 + 8 = 11 > 10 */
	CHECK_INT(b.err, PGN_ETOOBIG);
	CHECK_INT(b.len, 3);
	CHECK_STR(b.data, "abc");
	pgn_buf_release(&b);
}

static void
test_buf_reset_clears_content_and_error(void)
{
	struct pgn_buf b;
	char *s;

	pgn_buf_init(&b, 6);
	pgn_buf_adds(&b, "abc");
	pgn_buf_adds(&b, "defghi");
	CHECK_INT(b.err, PGN_ETOOBIG);
	pgn_buf_reset(&b);
	CHECK_INT(b.err, PGN_OK);
	CHECK_INT(b.len, 0);
	CHECK_STR(b.data, "");
	CHECK_INT(b.max, 6);
	pgn_buf_adds(&b, "xyz");
	CHECK_INT(b.err, PGN_OK);
	s = pgn_buf_take(&b, NULL);
	CHECK_STR(s, "xyz");
	free(s);
	pgn_buf_release(&b);
}

static void
test_buf_reset_of_unused_buffer_is_safe(void)
{
	struct pgn_buf b;

	pgn_buf_init(&b, 6);
	pgn_buf_reset(&b);
	CHECK(b.data == NULL);
	CHECK_INT(b.len, 0);
	CHECK_INT(b.err, PGN_OK);
	pgn_buf_release(&b);
}

static void
test_buf_take_of_empty_buffer_gives_empty_string(void)
{
	struct pgn_buf b;
	size_t len = 99;
	char *s;

	pgn_buf_init(&b, 16);
	s = pgn_buf_take(&b, &len);
	REQUIRE(s != NULL);
	CHECK_STR(s, "");
	CHECK_INT(len, 0);
	free(s);
	/* even with max 0 */
	pgn_buf_init(&b, 0);
	s = pgn_buf_take(&b, NULL);
	CHECK_STR(s, "");
	free(s);
	pgn_buf_release(&b);
}

static void
test_buf_release_accepts_null(void)
{
	struct pgn_buf b;

	pgn_buf_release(NULL);
	pgn_buf_init(&b, 4);
	pgn_buf_release(&b);
	pgn_buf_release(&b);
	CHECK(b.data == NULL);
}

static void
test_size_add_detects_overflow(void)
{
	size_t out = 7;

	CHECK(pgn_size_add(2, 3, &out));
	CHECK_INT(out, 5);
	CHECK(pgn_size_add(SIZE_MAX - 1, 1, &out));
	CHECK(out == SIZE_MAX);
	CHECK(pgn_size_add(0, SIZE_MAX, &out));
	CHECK(out == SIZE_MAX);
	out = 7;
	CHECK(!pgn_size_add(SIZE_MAX, 1, &out));
	CHECK(!pgn_size_add(1, SIZE_MAX, &out));
	CHECK(!pgn_size_add(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1, &out));
	CHECK_INT(out, 7); /* untouched on overflow */
}

static void
test_size_mul_detects_overflow(void)
{
	size_t out = 7;

	CHECK(pgn_size_mul(6, 7, &out));
	CHECK_INT(out, 42);
	CHECK(pgn_size_mul(0, SIZE_MAX, &out));
	CHECK_INT(out, 0);
	CHECK(pgn_size_mul(SIZE_MAX, 0, &out));
	CHECK_INT(out, 0);
	CHECK(pgn_size_mul(SIZE_MAX, 1, &out));
	CHECK(out == SIZE_MAX);
	CHECK(pgn_size_mul(SIZE_MAX / 2, 2, &out));
	CHECK(out == SIZE_MAX - 1);
	out = 7;
	CHECK(!pgn_size_mul(SIZE_MAX / 2 + 1, 2, &out));
	CHECK(!pgn_size_mul(2, SIZE_MAX / 2 + 1, &out));
	CHECK(!pgn_size_mul((size_t)1 << (sizeof(size_t) * 4),
	    (size_t)1 << (sizeof(size_t) * 4), &out));
	CHECK_INT(out, 7);
}

static void
test_strndup_copies_and_terminates(void)
{
	char *s;

	s = pgn_strndup("abcdef", 3);
	CHECK_STR(s, "abc");
	free(s);
	s = pgn_strdup("");
	CHECK_STR(s, "");
	free(s);
}

static void
test_vec_grow_makes_room_for_one_more(void)
{
	int *v = NULL;
	size_t cap = 0, n;
	int ok = 1;

	for (n = 0; n < 100; n++) {
		if (!pgn_vec_grow((void **)&v, &cap, n, sizeof(*v))) {
			ok = 0;
			break;
		}
		if (cap <= n)
			ok = 0;
		v[n] = (int)n;
	}
	CHECK(ok);
	CHECK(cap >= 100);
	CHECK(v != NULL && v[99] == 99);
	free(v);
}

/* cJSON's own print of the string 's' (the bytes pigeon's JSON keeps). */
static int
json_str_is_cjsons(const char *s)
{
	struct pgn_buf b;
	cJSON *o = cJSON_CreateString(s);
	char *want = cJSON_PrintUnformatted(o);
	int same;

	pgn_buf_init(&b, 1 << 16);
	pgn_buf_json_str(&b, s);
	same = want != NULL && b.err == PGN_OK && strcmp(b.data, want) == 0;
	cJSON_free(want);
	cJSON_Delete(o);
	pgn_buf_release(&b);
	return same;
}

/*
 * Decision 0254: pigeon web's answers, `pigeon search --json` and the
 * MCP tools' messages are written by pgn_buf_json_str, not cJSON, and
 * must stay byte for byte what cJSON printed: every byte alone, and
 * runs mixing quotes, backslashes, control bytes, DEL and UTF-8.
 */
static void
test_json_strings_are_escaped_as_cjson_escapes_them(void)
{
	char one[2] = {0, 0}, big[4097];
	struct pgn_buf b;
	int c, all = 1;

	for (c = 1; c < 256; c++) {
		one[0] = (char)c;
		if (!json_str_is_cjsons(one))
			all = 0;
	}
	CHECK(all);
	CHECK(json_str_is_cjsons(""));
	CHECK(json_str_is_cjsons("plain text, no escape"));
	CHECK(json_str_is_cjsons("a \"quote\" and a \\ back\tslash\r\n"
	                         "\x01\x1f\x7f caf\xc3\xa9 \xe2\x80\xae"
	                         "</script><img onerror=x>"));
	memset(big, '\x01', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(json_str_is_cjsons(big));
	/* NULL is null; an escaped string past the bound is refused. */
	pgn_buf_init(&b, 16);
	pgn_buf_json_str(&b, NULL);
	CHECK_STR(b.data, "null");
	pgn_buf_json_str(&b, "\n\n\n\n\n\n"); /* 4 + 14 > 16 */
	CHECK_INT(b.err, PGN_ETOOBIG);
	pgn_buf_release(&b);
	pgn_buf_init(&b, 14);
	pgn_buf_json_str(&b, "ab\n\x01"); /* "ab\n\u0001": exactly 14 */
	CHECK_INT(b.err, PGN_OK);
	CHECK_STR(b.data, "\"ab\\n\\u0001\"");
	pgn_buf_release(&b);
}

static void
test_json_integers_are_their_digits(void)
{
	static const int64_t v[] = {0, 7, 9, 10, 42, 99, 100, 101, 999, 1000,
	    1700000000123, -1, -10, -99, -100, INT64_MAX, INT64_MIN};
	char want[32];
	struct pgn_buf b;
	size_t i;
	int all = 1;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		pgn_buf_init(&b, 64);
		pgn_buf_json_i64(&b, v[i]);
		(void)snprintf(want, sizeof(want), "%lld", (long long)v[i]);
		if (b.err != PGN_OK || strcmp(b.data, want) != 0)
			all = 0;
		pgn_buf_release(&b);
	}
	CHECK(all);
}

static void
test_buf_presize_and_truncate(void)
{
	struct pgn_buf b;

	pgn_buf_init(&b, 100);
	pgn_buf_presize(&b, 1000); /* only as far as the bound */
	CHECK_INT(b.err, PGN_OK);
	CHECK(b.cap >= 101);
	PGN_BUF_LIT(&b, "abcdef");
	pgn_buf_truncate(&b, 3);
	CHECK_STR(b.data, "abc");
	pgn_buf_truncate(&b, 10); /* no longer than it is */
	CHECK_INT(b.len, 3);
	PGN_BUF_LIT(&b, "d");
	CHECK_STR(b.data, "abcd");
	pgn_buf_release(&b);
}

static const struct h_test tests[] = {
    H_TEST(test_json_strings_are_escaped_as_cjson_escapes_them),
    H_TEST(test_json_integers_are_their_digits),
    H_TEST(test_buf_presize_and_truncate),
    H_TEST(test_buf_appends_bytes_strings_and_formats),
    H_TEST(test_buf_add_of_zero_bytes_keeps_it_empty),
    H_TEST(test_buf_grows_across_many_appends),
    H_TEST(test_buf_accepts_exactly_max_bytes),
    H_TEST(test_buf_refuses_to_grow_past_max),
    H_TEST(test_buf_error_is_sticky),
    H_TEST(test_buf_addf_past_max_is_refused),
    H_TEST(test_buf_reset_clears_content_and_error),
    H_TEST(test_buf_reset_of_unused_buffer_is_safe),
    H_TEST(test_buf_take_of_empty_buffer_gives_empty_string),
    H_TEST(test_buf_release_accepts_null),
    H_TEST(test_size_add_detects_overflow),
    H_TEST(test_size_mul_detects_overflow),
    H_TEST(test_strndup_copies_and_terminates),
    H_TEST(test_vec_grow_makes_room_for_one_more),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
