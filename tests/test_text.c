/*
 * Unit tests of the text rules: agent names, UTF-8, text made safe for a
 * terminal, integers, times, edit distance and status names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "pgn_int.h"

/* A fixed "now": 2027-01-15T08:00:00Z. */
#define NOW_MS INT64_C(1800000000000)

/* ---- pgn_name_check ------------------------------------------------- */

/* pgn_name_check with 'out' pre-filled, so a missing NUL would show. */
static pgn_status
name(const char *in, char *out, struct pgn_err *rule)
{
	memset(out, 'X', PGN_MAX_NAME + 1);
	return pgn_name_check(in, out, rule);
}

static void
test_name_accepts_one_char_and_folds_case(void)
{
	char out[PGN_MAX_NAME + 1];
	struct pgn_err rule;

	pgn_err_clear(&rule);
	CHECK_INT(name("a", out, &rule), PGN_OK);
	CHECK_STR(out, "a");
	CHECK_STR(rule.msg, ""); /* untouched */
	CHECK_INT(name("7", out, &rule), PGN_OK);
	CHECK_STR(out, "7");
	CHECK_INT(name("Bob", out, &rule), PGN_OK);
	CHECK_STR(out, "bob");
	CHECK_INT(name("REVIEWER-2.x_Y", out, &rule), PGN_OK);
	CHECK_STR(out, "reviewer-2.x_y");
	CHECK_INT(name("9lives", out, &rule), PGN_OK);
	CHECK_STR(out, "9lives");
}

static void
test_name_refuses_empty(void)
{
	char out[PGN_MAX_NAME + 1];
	struct pgn_err rule;

	CHECK_INT(name("", out, &rule), PGN_EINVAL);
	REQUIRE(rule.msg[0] != '\0');
	CHECK_CONTAINS(rule.msg, "1 to 64");
}

static void
test_name_length_bound_is_64(void)
{
	char in[PGN_MAX_NAME + 2];
	char out[PGN_MAX_NAME + 1];
	struct pgn_err rule;

	memset(in, 'a', sizeof(in));
	in[PGN_MAX_NAME] = '\0'; /* 64 chars */
	CHECK_INT(name(in, out, &rule), PGN_OK);
	CHECK_INT(strlen(out), 64);
	CHECK_INT(memcmp(in, out, 65), 0);
	in[PGN_MAX_NAME] = 'A';
	in[PGN_MAX_NAME + 1] = '\0'; /* 65 chars */
	CHECK_INT(name(in, out, &rule), PGN_EINVAL);
	REQUIRE(rule.msg[0] != '\0');
	CHECK_CONTAINS(rule.msg, "at most 64");
}

static void
test_name_must_start_with_letter_or_digit(void)
{
	static const char *const bad[] = {".hidden", "_x", "-rf", ".", "-"};
	char out[PGN_MAX_NAME + 1];
	struct pgn_err rule;
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		pgn_err_clear(&rule);
		CHECK_INT(name(bad[i], out, &rule), PGN_EINVAL);
		CHECK(rule.msg[0] != '\0');
		if (rule.msg[0] != '\0')
			CHECK_CONTAINS(rule.msg,
			    "starts with a letter or a digit");
	}
	/* the same characters are fine after the first */
	CHECK_INT(name("a.b_c-d", out, &rule), PGN_OK);
	CHECK_STR(out, "a.b_c-d");
}

static void
test_name_refuses_characters_outside_the_set(void)
{
	static const char *const bad[] = {"a b", "a/b", "bob!", "tab\tx",
	    "caf\xc3\xa9", "a:b", "a@b", "a+b", "x\n"};
	char out[PGN_MAX_NAME + 1];
	struct pgn_err rule;
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		pgn_err_clear(&rule);
		CHECK_INT(name(bad[i], out, &rule), PGN_EINVAL);
		CHECK(rule.msg[0] != '\0');
		if (rule.msg[0] != '\0')
			CHECK_CONTAINS(rule.msg, "a-z, 0-9");
	}
}

static void
test_name_all_is_reserved_in_any_case(void)
{
	static const char *const bad[] = {"all", "ALL", "All", "aLl"};
	char out[PGN_MAX_NAME + 1];
	struct pgn_err rule;
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		pgn_err_clear(&rule);
		CHECK_INT(name(bad[i], out, &rule), PGN_EINVAL);
		CHECK(rule.msg[0] != '\0');
		if (rule.msg[0] != '\0')
			CHECK_CONTAINS(rule.msg, "reserved");
	}
	CHECK_INT(name("al", out, &rule), PGN_OK);
	CHECK_INT(name("alls", out, &rule), PGN_OK);
	CHECK_INT(name("all-hands", out, &rule), PGN_OK);
	CHECK_STR(out, "all-hands");
}

/* ---- pgn_utf8_valid ------------------------------------------------- */

#define U8(s) pgn_utf8_valid((s), sizeof(s) - 1)

static void
test_utf8_accepts_ascii_and_empty(void)
{
	CHECK(U8("hello, world\n\t~"));
	CHECK(pgn_utf8_valid("", 0));
	CHECK(U8("\x01\x7f"));
}

static void
test_utf8_accepts_two_three_and_four_byte_forms(void)
{
	CHECK(U8("\xc2\x80"));         /* U+0080, smallest 2-byte */
	CHECK(U8("caf\xc3\xa9"));      /* é */
	CHECK(U8("\xdf\xbf"));         /* U+07FF */
	CHECK(U8("\xe0\xa0\x80"));     /* U+0800, smallest 3-byte */
	CHECK(U8("\xe2\x82\xac"));     /* € */
	CHECK(U8("\xed\x9f\xbf"));     /* U+D7FF, below surrogates */
	CHECK(U8("\xee\x80\x80"));     /* U+E000, above surrogates */
	CHECK(U8("\xef\xbf\xbf"));     /* U+FFFF */
	CHECK(U8("\xf0\x90\x80\x80")); /* U+10000, smallest 4-byte */
	CHECK(U8("\xf0\x9f\x98\x80")); /* 😀 */
	CHECK(U8("\xf4\x8f\xbf\xbf")); /* U+10FFFF, the last */
	CHECK(U8("a\xc3\xa9"
	         "b\xe2\x82\xac"
	         "c\xf0\x9f\x98\x80"
	         "d"));
}

static void
test_utf8_refuses_overlong_forms(void)
{
	CHECK(!U8("\xc0\x80")); /* NUL in 2 bytes */
	CHECK(!U8("\xc0\xaf")); /* '/' in 2 bytes */
	CHECK(!U8("\xc1\xbf"));
	CHECK(!U8("\xe0\x80\xaf"));     /* '/' in 3 bytes */
	CHECK(!U8("\xe0\x9f\xbf"));     /* U+07FF in 3 bytes */
	CHECK(!U8("\xf0\x80\x80\xaf")); /* '/' in 4 bytes */
	CHECK(!U8("\xf0\x8f\xbf\xbf")); /* U+FFFF in 4 bytes */
}

static void
test_utf8_refuses_surrogates(void)
{
	CHECK(!U8("\xed\xa0\x80"));             /* U+D800 */
	CHECK(!U8("\xed\xaf\xbf"));             /* U+DBFF */
	CHECK(!U8("\xed\xb0\x80"));             /* U+DC00 */
	CHECK(!U8("\xed\xbf\xbf"));             /* U+DFFF */
	CHECK(!U8("\xed\xa0\xbd\xed\xb8\x80")); /* CESU-8 pair */
}

static void
test_utf8_refuses_code_points_above_10ffff(void)
{
	CHECK(!U8("\xf4\x90\x80\x80")); /* U+110000 */
	CHECK(!U8("\xf5\x80\x80\x80"));
	CHECK(!U8("\xf7\xbf\xbf\xbf"));
	CHECK(!U8("\xf8\x88\x80\x80\x80"));     /* 5-byte form */
	CHECK(!U8("\xfc\x84\x80\x80\x80\x80")); /* 6-byte form */
	CHECK(!U8("\xfe"));
	CHECK(!U8("\xff"));
}

static void
test_utf8_refuses_truncated_and_broken_sequences(void)
{
	CHECK(!U8("\xc3"));
	CHECK(!U8("\xe2\x82"));
	CHECK(!U8("\xf0\x9f\x98"));
	CHECK(!U8("abc\xe2"));
	CHECK(!U8("\x80")); /* lone continuation */
	CHECK(!U8("a\xbf"
	          "b"));
	CHECK(!U8("\xc3\x28")); /* bad continuation */
	CHECK(!U8("\xe2\x28\xa1"));
	CHECK(!U8("\xf0\x9f\x28\x80"));
	/* the length is honoured: a valid sequence cut by 'len' */
	CHECK(!pgn_utf8_valid("\xc3\xa9", 1));
	CHECK(!pgn_utf8_valid("\xf0\x9f\x98\x80", 3));
	CHECK(pgn_utf8_valid("ab\xc3\xa9", 2));
}

static void
test_utf8_refuses_nul(void)
{
	CHECK(!pgn_utf8_valid("a\0b", 3));
	CHECK(!pgn_utf8_valid("\0", 1));
	CHECK(!pgn_utf8_valid("abc\0", 4));
}

/* ---- pgn_text_safe and pgn_buf_add_safe ----------------------------- */

/* pgn_text_safe of a literal (its length, so NUL and cuts count). */
#define SAFE(s, f) safe_of((s), sizeof(s) - 1, (f))

static char safe_out[4096];

static const char *
safe_of(const char *s, size_t len, unsigned flags)
{
	char *t;

	t = pgn_text_safe(s, len, flags);
	if (t == NULL)
		return "(NULL)";
	if (strlen(t) >= sizeof(safe_out)) {
		free(t);
		return "(too long for the test)";
	}
	memcpy(safe_out, t, strlen(t) + 1);
	free(t);
	return safe_out;
}

static void
test_safe_keeps_printable_text_and_utf8(void)
{
	CHECK_STR(SAFE("", 0), "");
	CHECK_STR(SAFE("hello, world ~!", 0), "hello, world ~!");
	CHECK_STR(SAFE("tab\there", 0), "tab\there");
	CHECK_STR(SAFE("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 0),
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	CHECK_STR(SAFE("\xc2\xa0", 0), "\xc2\xa0"); /* U+00A0 nbsp */
	CHECK_STR(SAFE("\xf4\x8f\xbf\xbf", 0), "\xf4\x8f\xbf\xbf"); /* last */
	CHECK_STR(SAFE("two\nlines\n", PGN_SAFE_LINES), "two\nlines\n");
}

static void
test_safe_escapes_c0_controls_but_tab(void)
{
	char in[2], want[8];
	unsigned c;

	for (c = 0; c < 0x20; c++) {
		in[0] = (char)c;
		if (c == '\t') {
			CHECK_STR(safe_of(in, 1, 0), "\t");
			continue;
		}
		snprintf(want, sizeof(want), "\\x%02x", c);
		if (!CHECK_STR(safe_of(in, 1, 0), want))
			printf("  byte 0x%02x\n", c);
		if (c != '\n' &&
		    !CHECK_STR(safe_of(in, 1, PGN_SAFE_LINES), want))
			printf("  byte 0x%02x with PGN_SAFE_LINES\n", c);
	}
	/* one line: a newline cannot start a line of its own */
	CHECK_STR(SAFE("a\nb", 0), "a\\x0ab");
	/* the classic attacks, each byte shown */
	CHECK_STR(SAFE("hi \033]52;c;cm0gLXJmIH4K\a\033[2J", PGN_SAFE_LINES),
	    "hi \\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b[2J");
	CHECK_STR(SAFE("ok\r#99 from boss", PGN_SAFE_LINES),
	    "ok\\x0d#99 from boss");
	CHECK_STR(SAFE("\v\f\x1c\x1e", PGN_SAFE_LINES), "\\x0b\\x0c\\x1c\\x1e");
}

static void
test_safe_escapes_del_and_c1_controls(void)
{
	CHECK_STR(SAFE("\x7f", 0), "\\x7f");
	CHECK_STR(SAFE("~\x7f~", PGN_SAFE_LINES), "~\\x7f~");
	CHECK_STR(SAFE("\xc2\x80", 0), "\\u0080");
	CHECK_STR(SAFE("\xc2\x85", PGN_SAFE_LINES), "\\u0085"); /* NEL */
	CHECK_STR(SAFE("\xc2\x9b"
	               "2J",
	              0),
	    "\\u009b2J"); /* CSI */
	CHECK_STR(SAFE("\xc2\x9f", 0), "\\u009f");
	CHECK_STR(SAFE("\xc2\xa1", 0), "\xc2\xa1"); /* ¡ is text */
}

static void
test_safe_escapes_bidi_controls(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"\xd8\x9c", "\\u061c"},
	    {"\xe2\x80\x8e", "\\u200e"},
	    {"\xe2\x80\x8f", "\\u200f"},
	    {"\xe2\x80\xaa", "\\u202a"},
	    {"\xe2\x80\xab", "\\u202b"},
	    {"\xe2\x80\xac", "\\u202c"},
	    {"\xe2\x80\xad", "\\u202d"},
	    {"\xe2\x80\xae", "\\u202e"},
	    {"\xe2\x81\xa6", "\\u2066"},
	    {"\xe2\x81\xa7", "\\u2067"},
	    {"\xe2\x81\xa8", "\\u2068"},
	    {"\xe2\x81\xa9", "\\u2069"},
	};
	size_t i;

	for (i = 0; i < H_COUNT(cases); i++)
		if (!CHECK_STR(safe_of(cases[i].in, strlen(cases[i].in), 0),
		        cases[i].want))
			printf("  case %zu\n", i);
	CHECK_STR(SAFE("evil\xe2\x80\xaetxt.exe", PGN_SAFE_LINES),
	    "evil\\u202etxt.exe");
}

static void
test_safe_escapes_invisible_format_characters(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"\xc2\xad", "\\u00ad"},             /* soft hyphen */
	    {"\xe2\x80\x8b", "\\u200b"},         /* zero width space */
	    {"\xe2\x80\x8c", "\\u200c"},         /* ZWNJ */
	    {"\xe2\x80\x8d", "\\u200d"},         /* ZWJ */
	    {"\xe2\x80\xa8", "\\u2028"},         /* line separator */
	    {"\xe2\x80\xa9", "\\u2029"},         /* paragraph separator */
	    {"\xe2\x81\xa0", "\\u2060"},         /* word joiner */
	    {"\xe2\x81\xa4", "\\u2064"},         /* invisible plus */
	    {"\xe2\x81\xaf", "\\u206f"},         /* nominal digit shapes */
	    {"\xef\xbb\xbf", "\\ufeff"},         /* BOM */
	    {"\xef\xbf\xb9", "\\ufff9"},         /* interlinear annotation */
	    {"\xd8\x80", "\\u0600"},             /* Arabic number sign */
	    {"\xe1\xa0\x8e", "\\u180e"},         /* Mongolian vowel sep. */
	    {"\xf0\x9d\x85\xb3", "\\U0001d173"}, /* musical format */
	    {"\xf3\xa0\x80\x81", "\\U000e0001"}, /* language tag */
	    {"\xf3\xa0\x81\x81", "\\U000e0041"}, /* tag 'A' */
	    {"\xf3\xa0\x81\xbf", "\\U000e007f"}, /* cancel tag */
	};
	/* their neighbours are ordinary text */
	static const char *const kept[] = {
	    "\xc2\xac",         /* U+00AC ¬ */
	    "\xe2\x80\x8a",     /* U+200A hair space */
	    "\xe2\x80\x90",     /* U+2010 hyphen */
	    "\xe2\x80\xa7",     /* U+2027 hyphenation point */
	    "\xe2\x80\xaf",     /* U+202F narrow no-break space */
	    "\xe2\x81\x9f",     /* U+205F math space */
	    "\xe2\x81\xb0",     /* U+2070 superscript zero */
	    "\xef\xbb\xbe",     /* U+FEFE */
	    "\xef\xbf\xbc",     /* U+FFFC */
	    "\xf3\xa0\x82\x80", /* U+E0080 */
	};
	size_t i;

	for (i = 0; i < H_COUNT(cases); i++)
		if (!CHECK_STR(safe_of(cases[i].in, strlen(cases[i].in),
		                   PGN_SAFE_LINES),
		        cases[i].want))
			printf("  case %zu\n", i);
	for (i = 0; i < H_COUNT(kept); i++)
		if (!CHECK_STR(safe_of(kept[i], strlen(kept[i]), 0), kept[i]))
			printf("  kept %zu\n", i);
}

static void
test_safe_escapes_invalid_utf8_byte_by_byte(void)
{
	CHECK_STR(SAFE("\x80", 0), "\\x80"); /* lone continuation */
	CHECK_STR(SAFE("a\xbf"
	               "b",
	              0),
	    "a\\xbfb");
	CHECK_STR(SAFE("\xfe\xff", 0), "\\xfe\\xff");
	CHECK_STR(SAFE("\xc3\x28", 0), "\\xc3("); /* bad continuation */
	CHECK_STR(SAFE("\xe2\x28\xa1", 0), "\\xe2(\\xa1");
	CHECK_STR(SAFE("\xf8\x88\x80\x80\x80", 0),
	    "\\xf8\\x88\\x80\\x80\\x80"); /* 5-byte form */
	CHECK_STR(SAFE("\xf4\x90\x80\x80", 0),
	    "\\xf4\\x90\\x80\\x80"); /* U+110000 */
}

static void
test_safe_escapes_overlong_forms(void)
{
	CHECK_STR(SAFE("\xc0\x80", 0), "\\xc0\\x80");          /* NUL */
	CHECK_STR(SAFE("\xc0\xaf", 0), "\\xc0\\xaf");          /* '/' */
	CHECK_STR(SAFE("\xc1\x9b", 0), "\\xc1\\x9b");          /* ESC */
	CHECK_STR(SAFE("\xe0\x80\x8a", 0), "\\xe0\\x80\\x8a"); /* LF */
	CHECK_STR(SAFE("\xe0\x82\x9b", 0), "\\xe0\\x82\\x9b"); /* U+009B */
	CHECK_STR(SAFE("\xf0\x82\x80\xae", 0),
	    "\\xf0\\x82\\x80\\xae"); /* U+202E in 4 bytes */
}

static void
test_safe_escapes_surrogates(void)
{
	CHECK_STR(SAFE("\xed\xa0\x80", 0), "\\xed\\xa0\\x80"); /* U+D800 */
	CHECK_STR(SAFE("\xed\xbf\xbf", 0), "\\xed\\xbf\\xbf"); /* U+DFFF */
	CHECK_STR(SAFE("\xed\xa0\xbd\xed\xb8\x80", 0),
	    "\\xed\\xa0\\xbd\\xed\\xb8\\x80");              /* CESU-8 pair */
	CHECK_STR(SAFE("\xed\x9f\xbf", 0), "\xed\x9f\xbf"); /* U+D7FF ok */
}

static void
test_safe_escapes_a_sequence_cut_at_the_end(void)
{
	CHECK_STR(SAFE("abc\xe2", 0), "abc\\xe2");
	CHECK_STR(SAFE("abc\xe2\x80", 0), "abc\\xe2\\x80");
	CHECK_STR(SAFE("\xf0\x9f\x98", 0), "\\xf0\\x9f\\x98");
	/* the length is honoured: a valid sequence cut by 'len' */
	CHECK_STR(safe_of("\xe2\x80\xae", 2, 0), "\\xe2\\x80");
	CHECK_STR(safe_of("ok\xc3\xa9", 3, 0), "ok\\xc3");
	/* and so is a NUL inside it */
	CHECK_STR(safe_of("a\0b", 3, 0), "a\\x00b");
}

static void
test_safe_doubles_a_backslash_only_before_an_escape_look(void)
{
	/* ordinary backslashes stay as they are */
	CHECK_STR(SAFE("C:\\dir\\file", 0), "C:\\dir\\file");
	CHECK_STR(SAFE("printf(\"%s\\n\")", 0), "printf(\"%s\\n\")");
	CHECK_STR(SAFE("end\\", 0), "end\\");
	CHECK_STR(SAFE("\\", 0), "\\");
	/* text that reads like an escape is not taken for one */
	CHECK_STR(SAFE("\\x1b", 0), "\\\\x1b");
	CHECK_STR(SAFE("\\u202e", 0), "\\\\u202e");
	CHECK_STR(SAFE("\\U000e0041", 0), "\\\\U000e0041");
	CHECK_STR(SAFE("\\\\", 0), "\\\\\\");
	/* a backslash before an escaped character */
	CHECK_STR(SAFE("\\\033", 0), "\\\\\\x1b");
	CHECK_STR(SAFE("\\\xe2\x80\xae", 0), "\\\\\\u202e");
}

/* Undo the escapes of pgn_text_safe; the result's length in '*len'. */
static char *
unescape(const char *s, size_t *len)
{
	char *out, hex[9];
	size_t n = 0, k, w;
	unsigned long cp;

	out = malloc(strlen(s) + 1);
	if (out == NULL)
		return NULL;
	while (*s != '\0') {
		if (s[0] != '\\' ||
		    (s[1] != '\\' && s[1] != 'x' && s[1] != 'u' &&
		        s[1] != 'U')) {
			out[n++] = *s++;
			continue;
		}
		if (s[1] == '\\') {
			out[n++] = '\\';
			s += 2;
			continue;
		}
		w = s[1] == 'x' ? 2 : s[1] == 'u' ? 4 : 8;
		memcpy(hex, s + 2, w);
		hex[w] = '\0';
		cp = strtoul(hex, NULL, 16);
		s += 2 + w;
		if (w == 2) {
			out[n++] = (char)cp;
		} else if (cp < 0x800) {
			out[n++] = (char)(0xc0 | (cp >> 6));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out[n++] = (char)(0xe0 | (cp >> 12));
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (char)(0x80 | (cp & 0x3f));
		} else {
			out[n++] = (char)(0xf0 | (cp >> 18));
			for (k = 3; k-- > 0;)
				out[n++] =
				    (char)(0x80 | ((cp >> (6 * k)) & 0x3f));
		}
	}
	*len = n;
	return out;
}

/* Is 't' free of raw controls (but tab/newline), DEL and C1, valid UTF-8? */
static int
looks_safe(const char *t)
{
	const unsigned char *p = (const unsigned char *)t;
	size_t i;

	if (!pgn_utf8_valid(t, strlen(t)))
		return 0;
	for (i = 0; p[i] != '\0'; i++) {
		if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n') ||
		    p[i] == 0x7f)
			return 0;
		if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
			return 0;
		if (p[i] == 0xe2 && p[i + 1] == 0x80 && p[i + 2] >= 0xa8 &&
		    p[i + 2] <= 0xae)
			return 0;
	}
	return 1;
}

static void
test_safe_output_is_safe_and_undoes_to_the_input(void)
{
	/* bytes that make up the interesting cases, picked at random */
	static const unsigned char alphabet[] = {'a', 'x', 'u', 'U', '0', '\\',
	    '\n', '\t', '\r', 0x1b, 0x00, 0x7f, 0x80, 0x85, 0x9b, 0xa0, 0xad,
	    0xae, 0xbf, 0xc0, 0xc2, 0xe2, 0xed, 0xef, 0xf0, 0xf3, 0xf4, 0xff};
	unsigned char in[24];
	char *t, *back;
	size_t i, k, len, blen, bad = 0;
	unsigned seed = 12345;

	for (i = 0; i < 20000; i++) {
		len = i % sizeof(in);
		for (k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			in[k] = alphabet[(seed >> 16) % sizeof(alphabet)];
		}
		t = pgn_text_safe((const char *)in, len,
		    i % 2 ? PGN_SAFE_LINES : 0);
		if (!CHECK(t != NULL))
			return;
		back = unescape(t, &blen);
		if (back == NULL || !looks_safe(t) || strlen(t) > 4 * len ||
		    (i % 2 == 0 && strchr(t, '\n') != NULL) || blen != len ||
		    memcmp(back, in, len) != 0)
			bad++;
		free(back);
		free(t);
	}
	CHECK_INT(bad, 0);
}

static void
test_safe_input_bound_is_max_safe_text(void)
{
	char *in, *t;

	in = malloc(PGN_MAX_SAFE_TEXT + 1);
	REQUIRE(in != NULL);
	memset(in, '\033', PGN_MAX_SAFE_TEXT + 1);
	/* at the bound: every byte escaped, four times the size */
	t = pgn_text_safe(in, PGN_MAX_SAFE_TEXT, 0);
	CHECK(t != NULL);
	if (t != NULL) {
		CHECK_INT(strlen(t), 4 * (size_t)PGN_MAX_SAFE_TEXT);
		CHECK_INT(memcmp(t, "\\x1b\\x1b", 8), 0);
	}
	free(t);
	/* one byte over: refused, never cut */
	CHECK(pgn_text_safe(in, PGN_MAX_SAFE_TEXT + 1, 0) == NULL);
	free(in);
}

static void
test_buf_add_safe_stops_at_the_buffer_cap(void)
{
	struct pgn_buf b;

	pgn_buf_init(&b, 8);
	pgn_buf_add_safe(&b, "ab\033", 3, 0); /* "ab\x1b": 6 bytes */
	CHECK_INT(b.err, PGN_OK);
	CHECK_STR(b.data, "ab\\x1b");
	pgn_buf_add_safe(&b, "\033", 1, 0); /* 10 > 8 */
	CHECK_INT(b.err, PGN_ETOOBIG);
	CHECK(pgn_buf_take(&b, NULL) == NULL);
	pgn_buf_release(&b);
	/* appends after text already in the buffer */
	pgn_buf_init(&b, 64);
	pgn_buf_adds(&b, "from ");
	pgn_buf_add_safe(&b,
	    "bo\xe2\x80\xae"
	    "b",
	    6, 0);
	CHECK_INT(b.err, PGN_OK);
	CHECK_STR(b.data, "from bo\\u202eb");
	pgn_buf_release(&b);
}

/* ---- pgn_parse_i64 -------------------------------------------------- */

static void
test_parse_i64_reads_numbers_in_range(void)
{
	int64_t v = -1;

	CHECK_INT(pgn_parse_i64("0", 0, 10, &v), PGN_OK);
	CHECK_INT(v, 0);
	CHECK_INT(pgn_parse_i64("10", 0, 10, &v), PGN_OK);
	CHECK_INT(v, 10);
	CHECK_INT(pgn_parse_i64("-7", -10, 10, &v), PGN_OK);
	CHECK_INT(v, -7);
	CHECK_INT(pgn_parse_i64("007", 0, 10, &v), PGN_OK);
	CHECK_INT(v, 7);
	CHECK_INT(pgn_parse_i64("9223372036854775807", INT64_MIN, INT64_MAX,
	              &v),
	    PGN_OK);
	CHECK(v == INT64_MAX);
	CHECK_INT(pgn_parse_i64("-9223372036854775808", INT64_MIN, INT64_MAX,
	              &v),
	    PGN_OK);
	CHECK(v == INT64_MIN);
}

static void
test_parse_i64_refuses_out_of_range(void)
{
	int64_t v = 123;

	CHECK_INT(pgn_parse_i64("11", 0, 10, &v), PGN_ETOOBIG);
	CHECK_INT(pgn_parse_i64("-1", 0, 10, &v), PGN_ETOOBIG);
	CHECK_INT(pgn_parse_i64("-11", -10, 10, &v), PGN_ETOOBIG);
	CHECK_INT(pgn_parse_i64("9223372036854775808", INT64_MIN, INT64_MAX,
	              &v),
	    PGN_ETOOBIG);
	CHECK_INT(pgn_parse_i64("-9223372036854775809", INT64_MIN, INT64_MAX,
	              &v),
	    PGN_ETOOBIG);
	CHECK_INT(pgn_parse_i64("99999999999999999999999", 0, INT64_MAX, &v),
	    PGN_ETOOBIG);
	CHECK_INT(v, 123); /* untouched on failure */
}

static void
test_parse_i64_refuses_junk_and_empty(void)
{
	static const char *const bad[] = {"", "abc", "12abc", " 12", "12 ",
	    "+5", "-", "1.5", "0x10", "1e3", "--1", "- 1", "\t3"};
	int64_t v = 123;
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		if (!CHECK_INT(pgn_parse_i64(bad[i], INT64_MIN, INT64_MAX, &v),
		        PGN_EINVAL))
			printf("  input \"%s\"\n", bad[i]);
	}
	CHECK_INT(pgn_parse_i64(NULL, 0, 10, &v), PGN_EINVAL);
	CHECK_INT(v, 123);
}

/* ---- pgn_parse_time and pgn_format_time ----------------------------- */

static void
test_parse_time_reads_ages_before_now(void)
{
	int64_t v = 0;

	CHECK_INT(pgn_parse_time("90s", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, NOW_MS - 90 * 1000);
	CHECK_INT(pgn_parse_time("15m", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, NOW_MS - 15 * 60 * 1000);
	CHECK_INT(pgn_parse_time("2h", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, NOW_MS - 2 * 3600 * 1000);
	CHECK_INT(pgn_parse_time("7d", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, NOW_MS - INT64_C(7) * 86400 * 1000);
	CHECK_INT(pgn_parse_time("0s", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, NOW_MS);
	CHECK_INT(pgn_parse_time("365d", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, NOW_MS - INT64_C(365) * 86400 * 1000);
}

static void
test_parse_time_reads_utc_dates_and_times(void)
{
	int64_t v = 0;

	CHECK_INT(pgn_parse_time("1970-01-01", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, 0);
	CHECK_INT(pgn_parse_time("2026-11-30", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1795996800) * 1000);
	CHECK_INT(pgn_parse_time("2026-11-30Z", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1795996800) * 1000);
	CHECK_INT(pgn_parse_time("2026-11-30T06:20", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1796019600) * 1000);
	CHECK_INT(pgn_parse_time("2026-11-30T06:20Z", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1796019600) * 1000);
	CHECK_INT(pgn_parse_time("2026-11-30T06:20:28Z", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1796019628) * 1000);
	CHECK_INT(pgn_parse_time("2026-11-30T06:20:28", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1796019628) * 1000);
	CHECK_INT(pgn_parse_time("2026-11-30 06:20:28", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1796019628) * 1000);
	CHECK_INT(pgn_parse_time("2024-02-29", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1709164800) * 1000);
	CHECK_INT(pgn_parse_time("2000-01-01T23:59:59Z", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(946771199) * 1000);
}

static void
test_parse_time_reads_epoch_seconds(void)
{
	int64_t v = -1;

	CHECK_INT(pgn_parse_time("@0", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, 0);
	CHECK_INT(pgn_parse_time("@1796019628", NOW_MS, &v), PGN_OK);
	CHECK_INT(v, INT64_C(1796019628) * 1000);
	CHECK_INT(pgn_parse_time("@", NOW_MS, &v), PGN_EINVAL);
	CHECK_INT(pgn_parse_time("@-1", NOW_MS, &v), PGN_EINVAL);
	CHECK_INT(pgn_parse_time("@12x", NOW_MS, &v), PGN_EINVAL);
	CHECK_INT(pgn_parse_time("@99999999999999999999", NOW_MS, &v),
	    PGN_EINVAL);
}

static void
test_parse_time_refuses_bad_fields(void)
{
	static const char *const bad[] = {
	    "2026-00-10", "2026-13-01", "2026-99-01", /* months */
	    "2026-01-00", "2026-01-32", "2026-04-31", /* days */
	    "2026-11-31", "2026-02-30", "2026-11-30T24:00",
	    "2026-11-30T99:00",                        /* hours */
	    "2026-11-30T06:60", "2026-11-30T06:20:61", /* min, sec */
	};
	int64_t v = 5;
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		if (!CHECK_INT(pgn_parse_time(bad[i], NOW_MS, &v), PGN_EINVAL))
			printf("  input \"%s\"\n", bad[i]);
	}
	CHECK_INT(v, 5);
}

static void
test_parse_time_refuses_junk(void)
{
	static const char *const bad[] = {
	    "",
	    "yesterday",
	    "now",
	    "s",
	    "90",
	    "90x",
	    "-5m",
	    "1.5h",
	    "2026/11/30",
	    "2026-1-30",
	    "26-11-30",
	    "2026-11-30T",
	    "2026-11-30T06",
	    "2026-11-30T0620",
	    "2026-11-30T06:2",
	    "2026-11-30T06:20:2",
	    "2026-11-30T06:20:",
	    "2026-11-30T06:20:28ZZ",
	    "2026-11-30T06:20:28+01:00",
	    "2026-11-30x",
	    "2026-11-30T06:20:28.5Z",
	    " 2026-11-30",
	    "123456789s",
	};
	int64_t v = 5;
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		if (!CHECK_INT(pgn_parse_time(bad[i], NOW_MS, &v), PGN_EINVAL))
			printf("  input \"%s\"\n", bad[i]);
	}
	CHECK_INT(pgn_parse_time(NULL, NOW_MS, &v), PGN_EINVAL);
	CHECK_INT(v, 5);
}

static void
test_format_time_round_trips_with_parse(void)
{
	static const char *const in[] = {"1970-01-01T00:00:00Z",
	    "2026-11-30T06:20:28Z", "2024-02-29T23:59:59Z",
	    "2000-01-01T00:00:01Z"};
	char buf[32];
	int64_t v;
	size_t i;

	for (i = 0; i < H_COUNT(in); i++) {
		CHECK_INT(pgn_parse_time(in[i], NOW_MS, &v), PGN_OK);
		pgn_format_time(v, buf, sizeof(buf));
		CHECK_STR(buf, in[i]);
	}
	/* milliseconds are dropped, not rounded */
	pgn_format_time(INT64_C(1796019628999), buf, sizeof(buf));
	CHECK_STR(buf, "2026-11-30T06:20:28Z");
	/* 21 bytes is enough; a smaller buffer gets "" */
	pgn_format_time(0, buf, 21);
	CHECK_STR(buf, "1970-01-01T00:00:00Z");
	pgn_format_time(0, buf, 20);
	CHECK_STR(buf, "");
	pgn_format_time(0, buf, 5);
	CHECK_STR(buf, "");
}

/* The calendar maths agrees with the C library's over centuries. */
static void
test_format_time_matches_gmtime(void)
{
	char buf[32], want[32];
	struct tm tm;
	int64_t secs;
	time_t t;

	/* Every 7h13m from 1901 to 2199, before and after the epoch. */
	for (secs = -INT64_C(2177452800); secs < INT64_C(7258118400);
	     secs += 25980) {
		t = (time_t)secs;
		CHECK(gmtime_r(&t, &tm) != NULL);
		strftime(want, sizeof(want), "%Y-%m-%dT%H:%M:%SZ", &tm);
		pgn_format_time(secs * 1000 + 999, buf, sizeof(buf));
		CHECK_STR(buf, want);
	}
	/* A negative millisecond belongs to the second before the epoch. */
	pgn_format_time(-1, buf, sizeof(buf));
	CHECK_STR(buf, "1969-12-31T23:59:59Z");
	/* Out of four digits of year: "" */
	pgn_format_time(INT64_C(253402300800000), buf, sizeof(buf));
	CHECK_STR(buf, "");
	pgn_format_time(INT64_C(253402300799000), buf, sizeof(buf));
	CHECK_STR(buf, "9999-12-31T23:59:59Z");
}

/* ---- pgn_edit_distance ---------------------------------------------- */

static void
test_edit_distance_counts_edits_up_to_max(void)
{
	char long_name[PGN_MAX_NAME + 2];

	CHECK_INT(pgn_edit_distance("bob", "bob", 2), 0);
	CHECK_INT(pgn_edit_distance("bobb", "bob", 2), 1); /* delete */
	CHECK_INT(pgn_edit_distance("bo", "bob", 2), 1);   /* insert */
	CHECK_INT(pgn_edit_distance("bib", "bob", 2), 1);  /* replace */
	CHECK_INT(pgn_edit_distance("carol", "karl", 5), 2);
	CHECK_INT(pgn_edit_distance("kitten", "sitting", 5), 3);
	CHECK_INT(pgn_edit_distance("", "abc", 5), 3);
	CHECK_INT(pgn_edit_distance("abc", "", 5), 3);
	CHECK_INT(pgn_edit_distance("", "", 0), 0);
	/* capped at max + 1 */
	CHECK_INT(pgn_edit_distance("kitten", "sitting", 2), 3);
	CHECK_INT(pgn_edit_distance("alice", "bob", 2), 3);
	CHECK_INT(pgn_edit_distance("abcdefgh", "zyxwvuts", 1), 2);
	/* over the name limit: never a suggestion */
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CHECK_INT(pgn_edit_distance(long_name, "a", 2), 3);
	CHECK_INT(pgn_edit_distance("a", long_name, 2), 3);
}

/* ---- statuses ------------------------------------------------------- */

static void
test_status_names_are_stable_words(void)
{
	static const struct {
		pgn_status st;
		const char *name;
	} want[] = {
	    {PGN_OK, "ok"},
	    {PGN_EINVAL, "invalid"},
	    {PGN_ETOOBIG, "too big"},
	    {PGN_ENOTFOUND, "not found"},
	    {PGN_EEXIST, "exists"},
	    {PGN_EFULL, "full"},
	    {PGN_EBUSY, "busy"},
	    {PGN_ECORRUPT, "corrupt"},
	    {PGN_ETOONEW, "too new"},
	    {PGN_EDB, "database error"},
	    {PGN_EIO, "i/o error"},
	    {PGN_ENOMEM, "out of memory"},
	    {PGN_ETAMPER, "tampered"},
	};
	size_t i, j;

	CHECK_INT(H_COUNT(want), PGN_ETAMPER + 1);
	for (i = 0; i < H_COUNT(want); i++) {
		CHECK_STR(pgn_status_name(want[i].st), want[i].name);
		for (j = 0; j < i; j++)
			CHECK(strcmp(pgn_status_name(want[i].st),
			          pgn_status_name(want[j].st)) != 0);
	}
	CHECK_STR(pgn_status_name((pgn_status)99), "unknown");
}

static void
test_status_is_usage_only_for_bad_input(void)
{
	CHECK(pgn_status_is_usage(PGN_EINVAL));
	CHECK(pgn_status_is_usage(PGN_ETOOBIG));
	CHECK(pgn_status_is_usage(PGN_ENOTFOUND));
	CHECK(pgn_status_is_usage(PGN_EEXIST));
	CHECK(pgn_status_is_usage(PGN_EFULL));
	CHECK(!pgn_status_is_usage(PGN_OK));
	CHECK(!pgn_status_is_usage(PGN_EBUSY));
	CHECK(!pgn_status_is_usage(PGN_ECORRUPT));
	CHECK(!pgn_status_is_usage(PGN_ETOONEW));
	CHECK(!pgn_status_is_usage(PGN_EDB));
	CHECK(!pgn_status_is_usage(PGN_EIO));
	CHECK(!pgn_status_is_usage(PGN_ENOMEM));
	CHECK(!pgn_status_is_usage(PGN_ETAMPER));
}

static const struct h_test tests[] = {
    H_TEST(test_name_accepts_one_char_and_folds_case),
    H_TEST(test_name_refuses_empty),
    H_TEST(test_name_length_bound_is_64),
    H_TEST(test_name_must_start_with_letter_or_digit),
    H_TEST(test_name_refuses_characters_outside_the_set),
    H_TEST(test_name_all_is_reserved_in_any_case),
    H_TEST(test_utf8_accepts_ascii_and_empty),
    H_TEST(test_utf8_accepts_two_three_and_four_byte_forms),
    H_TEST(test_utf8_refuses_overlong_forms),
    H_TEST(test_utf8_refuses_surrogates),
    H_TEST(test_utf8_refuses_code_points_above_10ffff),
    H_TEST(test_utf8_refuses_truncated_and_broken_sequences),
    H_TEST(test_utf8_refuses_nul),
    H_TEST(test_safe_keeps_printable_text_and_utf8),
    H_TEST(test_safe_escapes_c0_controls_but_tab),
    H_TEST(test_safe_escapes_del_and_c1_controls),
    H_TEST(test_safe_escapes_bidi_controls),
    H_TEST(test_safe_escapes_invisible_format_characters),
    H_TEST(test_safe_escapes_invalid_utf8_byte_by_byte),
    H_TEST(test_safe_escapes_overlong_forms),
    H_TEST(test_safe_escapes_surrogates),
    H_TEST(test_safe_escapes_a_sequence_cut_at_the_end),
    H_TEST(test_safe_doubles_a_backslash_only_before_an_escape_look),
    H_TEST(test_safe_output_is_safe_and_undoes_to_the_input),
    H_TEST(test_safe_input_bound_is_max_safe_text),
    H_TEST(test_buf_add_safe_stops_at_the_buffer_cap),
    H_TEST(test_parse_i64_reads_numbers_in_range),
    H_TEST(test_parse_i64_refuses_out_of_range),
    H_TEST(test_parse_i64_refuses_junk_and_empty),
    H_TEST(test_parse_time_reads_ages_before_now),
    H_TEST(test_parse_time_reads_utc_dates_and_times),
    H_TEST(test_parse_time_reads_epoch_seconds),
    H_TEST(test_parse_time_refuses_bad_fields),
    H_TEST(test_parse_time_refuses_junk),
    H_TEST(test_format_time_round_trips_with_parse),
    H_TEST(test_format_time_matches_gmtime),
    H_TEST(test_edit_distance_counts_edits_up_to_max),
    H_TEST(test_status_names_are_stable_words),
    H_TEST(test_status_is_usage_only_for_bad_input),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
