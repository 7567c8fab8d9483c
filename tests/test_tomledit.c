/*
 * Unit tests of tomledit.c: adding Pigeon's state directory to Codex's
 * [sandbox_workspace_write] writable_roots and removing it again,
 * byte-exact, on realistic config.toml shapes; refusal of the shapes it
 * does not edit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pgn_int.h"
#include "tomledit.h"

#define TABLE "sandbox_workspace_write"
#define KEY   "writable_roots"
#define ROOT  "/home/u/.local/state/pigeon"
#define MAX   (1 << 20)
/* tomledit.c's bound on a decoded value it compares (2 * PGN_MAX_PATH). */
#define VAL_MAX_IN_TEST (2 * PGN_MAX_PATH)
/* The header and the key line the add creates. */
#define HDR  "[sandbox_workspace_write] # " TE_MARK
#define LINE "writable_roots = [\"" ROOT "\"] # " TE_MARK

/* Add then remove ROOT: 'after' (NULL: not checked) and the bytes back. */
static void
round_trip(const char *in, const char *after)
{
	struct pgn_err err;
	char *out = NULL, *back = NULL, *again = NULL;
	size_t outlen = 0, backlen = 0, againlen = 0;
	int changed = 0, has = 0;

	REQUIRE(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, MAX, &out,
	            &outlen, &changed, NULL, &err) == PGN_OK);
	CHECK(changed);
	if (after != NULL)
		CHECK_STR(out, after);
	CHECK(
	    te_array_has(out, outlen, TABLE, KEY, ROOT, &has, &err) == PGN_OK &&
	    has);
	/* A second add changes nothing. */
	CHECK(te_array_edit(out, outlen, TABLE, KEY, ROOT, 1, MAX, &again,
	          &againlen, &changed, NULL, &err) == PGN_OK);
	CHECK(!changed);
	CHECK(again != NULL && againlen == outlen &&
	    memcmp(again, out, outlen) == 0);
	CHECK(te_array_edit(out, outlen, TABLE, KEY, ROOT, 0, MAX, &back,
	          &backlen, &changed, NULL, &err) == PGN_OK);
	CHECK(changed);
	CHECK(back != NULL && backlen == strlen(in) &&
	    memcmp(back, in, backlen) == 0);
	if (back != NULL && strcmp(back, in) != 0)
		printf("  in:   [%s]\n  back: [%s]\n", in, back);
	free(out);
	free(back);
	free(again);
}

static void
refused(const char *in, const char *why)
{
	struct pgn_err err;
	char *out = NULL;
	size_t outlen = 0;
	int changed = 1;

	CHECK(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, MAX, &out,
	          &outlen, &changed, NULL, &err) == PGN_EINVAL);
	CHECK(out == NULL && !changed);
	CHECK_CONTAINS(err.msg, why);
}

static void
test_missing_table_is_appended_and_removed_byte_exact(void)
{
	/* An empty file gets the line end it lacks, as any other. */
	round_trip("", "\n" HDR "\n" LINE "\n");
	round_trip("model = \"o3\"\n", "model = \"o3\"\n\n" HDR "\n" LINE "\n");
	round_trip("model = \"o3\"", "model = \"o3\"\n" HDR "\n" LINE "\n");
	/* A user's empty table at the end keeps its header. */
	round_trip("[sandbox_workspace_write]\n",
	    "[sandbox_workspace_write]\n" LINE "\n");
	round_trip("model = \"o3\"\n\n", NULL);
	round_trip("# only a comment\n", NULL);
	round_trip("\xef\xbb\xbf", NULL);
	round_trip("[profiles.fast]\nmodel = \"o4-mini\" # quick\n", NULL);
}

static void
test_crlf_file_gets_crlf_lines(void)
{
	round_trip("model = \"o3\"\r\n\r\n[tui]\r\nnotifications = true\r\n",
	    "model = \"o3\"\r\n\r\n[tui]\r\nnotifications = true\r\n\r\n" HDR
	    "\r\n" LINE "\r\n");
	round_trip("[sandbox_workspace_write]\r\nnetwork_access = true\r\n",
	    "[sandbox_workspace_write]\r\n" LINE
	    "\r\nnetwork_access = true\r\n");
	round_trip("[sandbox_workspace_write]\r\nwritable_roots = [\r\n  "
	           "\"/a\",\r\n]\r\n",
	    "[sandbox_workspace_write]\r\nwritable_roots = [\r\n  "
	    "\"/a\",\r\n  \"" ROOT "\",\r\n]\r\n");
}

static void
test_existing_table_without_the_key_gets_it_after_the_header(void)
{
	round_trip(
	    "# Codex\n[sandbox_workspace_write] # mine\nnetwork_access = "
	    "false\n\n[tui]\nnotifications = true\n",
	    "# Codex\n[sandbox_workspace_write] # mine\n" LINE
	    "\nnetwork_access = false\n\n[tui]\nnotifications = true\n");
	round_trip("[sandbox_workspace_write]", NULL);
	round_trip("[ sandbox_workspace_write ]\n", NULL);
	round_trip("[\"sandbox_workspace_write\"]\n", NULL);
	round_trip("[sandbox_workspace_write]\n\n[other]\n", NULL);
}

static void
test_existing_arrays_get_one_element_in_their_style(void)
{
	round_trip("[sandbox_workspace_write]\nwritable_roots = [\"/a\", "
	           "'/b'] # two\n",
	    "[sandbox_workspace_write]\nwritable_roots = [\"/a\", '/b', \"" ROOT
	    "\"] # two\n");
	round_trip("[sandbox_workspace_write]\nwritable_roots = []\n",
	    "[sandbox_workspace_write]\nwritable_roots = [\"" ROOT "\"]\n");
	round_trip("[sandbox_workspace_write]\nwritable_roots = [ ]\n", NULL);
	round_trip("[sandbox_workspace_write]\nwritable_roots = [\"/a\",]\n",
	    "[sandbox_workspace_write]\nwritable_roots = [\"/a\", \"" ROOT
	    "\",]\n");
	round_trip("[sandbox_workspace_write]\nwritable_roots = [\n    "
	           "\"/a\", # tmp\n    \"/b\"\n]\nnetwork_access = true\n",
	    "[sandbox_workspace_write]\nwritable_roots = [\n    \"/a\", # tmp\n"
	    "    \"/b\",\n    \"" ROOT "\"\n]\nnetwork_access = true\n");
	round_trip(
	    "[sandbox_workspace_write]\nwritable_roots = [\n\t'''/a''',\n"
	    "\t\"\"\"/b\"\"\",\n]\n",
	    NULL);
	round_trip("[sandbox_workspace_write]\nnetwork_access = true\n"
	           "writable_roots = [\"/x\"]\n",
	    NULL);
}

static void
test_other_toml_is_kept(void)
{
	round_trip(
	    "title = \"a # not a comment\"\nmulti = \"\"\"\n[not a "
	    "table]\n\"\"\"\nlit = '''\nwritable_roots = ['''\n"
	    "when = 1979-05-27 07:32:00Z\nn = -1_000\nf = +inf\n"
	    "inl = { a = 1, b = [1, 2], c = { d = \"}\" } }\n"
	    "[mcp_servers.docs]\ncommand = \"npx\"\nargs = [\n  \"-y\",\n  "
	    "[\"nested\"],\n]\n[[profiles_list]]\nname = \"x\"\n"
	    "[sandbox_workspace_write.extra]\nwritable_roots = 3\n",
	    NULL);
}

static void
test_present_root_changes_nothing_and_is_found_through_escapes(void)
{
	const char *in = "[sandbox_workspace_write]\nwritable_roots = "
	                 "[\"/home/u/.local/state/pi\\u0067eon\"]\n";
	struct pgn_err err;
	char *out = NULL;
	size_t outlen = 0;
	int changed = 1, has = 0;

	CHECK(te_array_has(in, strlen(in), TABLE, KEY, ROOT, &has, &err) ==
	        PGN_OK &&
	    has);
	CHECK(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, MAX, &out,
	          &outlen, &changed, NULL, &err) == PGN_OK);
	CHECK(!changed);
	CHECK_STR(out, in);
	free(out);
}

static void
test_remove_takes_only_the_root_and_keeps_what_the_user_wrote(void)
{
	const char *cases[][2] = {
	    {"[sandbox_workspace_write]\nwritable_roots = [\"/a\", \"" ROOT
	     "\", \"/b\"]\n",
	        "[sandbox_workspace_write]\nwritable_roots = [\"/a\", "
	        "\"/b\"]\n"},
	    {"[sandbox_workspace_write]\nwritable_roots = [\"" ROOT
	     "\", \"/b\"]\n",
	        "[sandbox_workspace_write]\nwritable_roots = [\"/b\"]\n"},
	    {"[sandbox_workspace_write]\nwritable_roots = [\"" ROOT
	     "\"] # keep\n",
	        "[sandbox_workspace_write]\nwritable_roots = [] # keep\n"},
	    {"[sandbox_workspace_write]\n" LINE "\nnetwork_access = true\n",
	        "[sandbox_workspace_write]\nnetwork_access = true\n"},
	    /* The user's own line without the mark: only the element. */
	    {"[sandbox_workspace_write]\nwritable_roots = [\"" ROOT "\"]\n",
	        "[sandbox_workspace_write]\nwritable_roots = []\n"},
	    /* Pigeon's table with a key the user added: the table stays. */
	    {HDR "\n" LINE "\nnetwork_access = true\n",
	        HDR "\nnetwork_access = true\n"},
	    {"x = 1\n", "x = 1\n"},
	};
	struct pgn_err err;
	char *out = NULL;
	size_t i, outlen = 0;
	int changed = 0;

	for (i = 0; i < H_COUNT(cases); i++) {
		CHECK(te_array_edit(cases[i][0], strlen(cases[i][0]), TABLE,
		          KEY, ROOT, 0, MAX, &out, &outlen, &changed, NULL,
		          &err) == PGN_OK);
		CHECK_STR(out, cases[i][1]);
		CHECK_INT(changed, strcmp(cases[i][0], cases[i][1]) != 0);
		free(out);
		out = NULL;
	}
}

static void
test_uneditable_shapes_are_refused_untouched(void)
{
	refused("sandbox_workspace_write.writable_roots = [\"/a\"]\n",
	    "dotted key");
	refused("sandbox_workspace_write = { writable_roots = [] }\n",
	    "inline table");
	refused("[[sandbox_workspace_write]]\n", "array of tables");
	refused("[sandbox_workspace_write]\n[sandbox_workspace_write]\n",
	    "twice");
	refused("[sandbox_workspace_write]\nwritable_roots = \"/a\"\n",
	    "other than an array");
	refused("[sandbox_workspace_write]\nwritable_roots.x = [1]\n",
	    "other than an array");
	refused("[sandbox_workspace_write]\nwritable_roots = []\n"
	        "writable_roots = []\n",
	    "twice");
	refused("x = \"open\n", "line 1");
	refused("x = [1, 2\n", "line 2");
	refused("x = 1 2\n", "unexpected text");
	refused("[a\n", "']' was expected");
	refused("x = \"\\q\"\n", "unknown escape");
	refused("x = \"\\u0000\"\n", "NUL");
}

static void
test_nesting_is_bounded(void)
{
	char in[PGN_MAX_TOML_DEPTH * 2 + 16];
	size_t i, n = 0;

	n += (size_t)snprintf(in, sizeof(in), "x = ");
	for (i = 0; i < PGN_MAX_TOML_DEPTH + 1; i++)
		in[n++] = '[';
	for (i = 0; i < PGN_MAX_TOML_DEPTH + 1; i++)
		in[n++] = ']';
	in[n] = '\0';
	refused(in, "nested too deep");
	/* One level less is fine. */
	in[4 + PGN_MAX_TOML_DEPTH] = ' ';
	in[4 + PGN_MAX_TOML_DEPTH + 1] = ' ';
	round_trip(in, NULL);
}

static void
test_growth_past_the_bound_is_refused(void)
{
	struct pgn_err err;
	char *out = NULL;
	size_t outlen = 0;
	int changed = 0;
	const char *in = "x = 1\n";

	CHECK(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, strlen(in) + 5,
	          &out, &outlen, &changed, NULL, &err) == PGN_ETOOBIG);
	CHECK(out == NULL);
	CHECK_CONTAINS(err.msg, "would grow past");
}

static void
test_quote_escapes_quotes_backslashes_and_controls(void)
{
	char *q = te_quote("/a \"b\"\\c\td");

	CHECK_STR(q, "\"/a \\\"b\\\"\\\\c\\u0009d\"");
	free(q);
	round_trip("", NULL);
}

static void
test_duplicate_keys_anywhere_are_refused_untouched(void)
{
	static const char *const bad[][2] = {
	    {"model = \"o3\"\nmodel = \"o4\"\n", "model twice (lines 1 and 2)"},
	    {"\"model\" = 1\r\nmodel = 2\r\n", "model twice (lines 1 and 2)"},
	    {"[tui]\nx = 1\n\n# later\nx = 2\n", "tui.x twice (lines 2 and 5)"},
	    {"[a]\nb.c = 1\nb.c = 2\n", "a.b.c twice"},
	    {"a = { x = 1, x = 2 }\n", "a.x twice"},
	    {"a = [{ x = 1 }, { y = 1, y = 2 }]\n", "y twice"},
	    /* Dotted keys against a table, and a table against a key. */
	    {"a.b = 1\n[a]\n", "a twice (lines 1 and 2)"},
	    {"[a]\nb = 1\n[a.b]\n", "a.b twice (lines 2 and 3)"},
	    {"[a]\nb.c = 1\n[a.b]\n", "a.b twice"},
	    {"[a.b]\n[a]\nb.x = 1\n", "a.b twice (lines 1 and 3)"},
	    {"[a.b.c]\n[a]\nb.c.t = 1\n", "a.b.c twice"},
	    {"x = 1\n[x.y]\n", "x twice"},
	    {"x = 1\nx.y = 2\n", "x twice"},
	    /* An inline table is whole: nothing is added to it later. */
	    {"a = { x = 1 }\na.y = 2\n", "a twice"},
	    {"a = { x = 1 }\n[a]\n", "a twice"},
	    {"a = { x = 1 }\n[a.b]\n", "a twice"},
	    {"[t]\na = 1\n[t]\n", "t twice (lines 1 and 3)"},
	    {"[[a]]\n[a]\n", "a twice"},
	    {"a = []\n[[a]]\n", "a twice"},
	    {"[a]\n[[a]]\n", "a twice"},
	    {"[[a]]\nx = 1\nx = 2\n", "a.x twice"},
	    /* A dotted key does not reach into an array of tables. */
	    {"[[a.b]]\n[a]\nb.y = 2\n", "a.b twice (lines 1 and 3)"},
	    {"[[a.b]]\n[a]\nb.c.d = 2\n", "a.b twice"},
	    /* And where Pigeon would write. */
	    {"[sandbox_workspace_write]\nnetwork_access = true\n"
	     "network_access = false\n",
	        "sandbox_workspace_write.network_access twice"},
	};
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		refused(bad[i][0], bad[i][1]);
		refused(bad[i][0], "not valid TOML");
	}
}

static void
test_keys_toml_allows_to_meet_are_not_duplicates(void)
{
	/* Each is valid TOML, and is edited. */
	round_trip("'a.b' = 1\na.b = 2\n", NULL);
	round_trip("a.b = 1\na.c = 2\n[a.d]\n", NULL);
	round_trip("[a.b.c]\n[a]\nx = 1\n", NULL);
	round_trip("[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n"
	           "[fruit.apple.texture]\nsmooth = true\n",
	    NULL);
	round_trip("[[p]]\nname = 1\n[p.sub]\nx = 1\n[[p]]\nname = 2\n"
	           "[p.sub]\nx = 2\n",
	    NULL);
	round_trip("a = [{ x = 1 }, { x = 2 }]\nb = { c.d = 1, c.e = 2 }\n",
	    NULL);
	round_trip("[sandbox_workspace_write.extra]\nx = 1\n", NULL);
	round_trip("[a]\n[b]\n[a.c]\n", NULL);
}

static void
test_a_table_at_pigeons_key_is_refused_before_the_edit(void)
{
	refused("[sandbox_workspace_write]\n[sandbox_workspace_write."
	        "writable_roots]\n",
	    "writable_roots as a table");
	refused("[sandbox_workspace_write.writable_roots]\nx = 1\n",
	    "writable_roots as a table");
}

static void
test_lone_cr_line_ends_are_not_toml_and_are_refused(void)
{
	refused("model = \"o3\"\rx = 1\r", "carriage return");
	refused("# a comment\r", "carriage return");
	refused("\r", "carriage return");
	refused("x = \"\"\"\ra\"\"\"\n", "carriage return");
}

/* 'lf' with every line end made CRLF (all), or every other one (mixed). */
static char *
restyle(const char *lf, int mode, int skip)
{
	char *s = malloc(strlen(lf) * 2 + 1);
	size_t i, n = 0, line = 0;

	REQUIRE(s != NULL);
	for (i = 0; lf[i] != '\0'; i++) {
		if (lf[i] == '\n' &&
		    (mode == 1 || (mode == 2 && line++ % 2 == (size_t)skip)))
			s[n++] = '\r';
		s[n++] = lf[i];
	}
	s[n] = '\0';
	return s;
}

static void
test_every_line_end_style_round_trips_byte_exact(void)
{
	static const char *const docs[] = {
	    "model = \"o3\"\n",
	    "model = \"o3\"\n\n",
	    "[sandbox_workspace_write]\n",
	    "[sandbox_workspace_write]\nnetwork_access = true\n",
	    "[sandbox_workspace_write]\nwritable_roots = [\n  \"/a\",\n]\n",
	    ("[sandbox_workspace_write]\nwritable_roots = [\n  \"/a\"\n]\n"
	     "[tui]\nx = 1\n"),
	    "[sandbox_workspace_write]\nwritable_roots = [\"/a\"]\n",
	    "# c\n\n[a]\nb = \"\"\"\nx\ny\"\"\"\n",
	    "\n",
	};
	char buf[512], *v;
	size_t i, k, len;
	int mode, skip, bom;

	for (i = 0; i < H_COUNT(docs); i++)
		for (mode = 0; mode < 3; mode++)
			for (skip = 0; skip < (mode == 2 ? 2 : 1); skip++)
				for (bom = 0; bom < 2; bom++)
					for (k = 0; k < 2; k++) {
						v = restyle(docs[i], mode,
						    skip);
						len = strlen(v);
						/* Without the final line end
						 * too. */
						if (k == 1 && len > 0 &&
						    v[len - 1] == '\n')
							len -= len > 1 &&
							        v[len - 2] ==
							            '\r' ?
							    2 :
							    1;
						v[len] = '\0';
						snprintf(buf, sizeof(buf),
						    "%s%s",
						    bom ? "\xef\xbb\xbf" : "",
						    v);
						round_trip(buf, NULL);
						free(v);
					}
}

/*
 * Issue 24 item 9 (decision 0183): the root as the key's one element in
 * a shape other than the add's (Codex rewrote the file without the
 * marks, or a person spread it over lines), tables added after it: no
 * empty key or table is left, and no word of the user's goes.
 */
static void
test_no_empty_table_is_left_whatever_the_shape(void)
{
	static const char *const cases[][2] = {
	    /* The key line's mark gone, a table Codex added after it. */
	    {"model = \"o3\"\n\n" HDR "\nwritable_roots = [\"" ROOT
	     "\"]\n\n[hooks.state.\"x\"]\ntrusted_hash = \"a\"\n",
	        "model = \"o3\"\n\n[hooks.state.\"x\"]\ntrusted_hash = \"a\"\n"},
	    /* Spread over lines, the marks kept. */
	    {"model = \"o3\"\n\n" HDR "\nwritable_roots = [\n  \"" ROOT
	     "\",\n] # " TE_MARK "\n\n[tui]\nx = 1\n",
	        "model = \"o3\"\n\n[tui]\nx = 1\n"},
	    /* First in the file, a table after it. */
	    {HDR "\nwritable_roots = [\n\"" ROOT "\"]\n\n[tui]\nx = 1\n",
	        "[tui]\nx = 1\n"},
	    /* At the end, CRLF. */
	    {"a = 1\r\n\r\n" HDR "\r\nwritable_roots = [ \"" ROOT "\" ]\r\n",
	        "a = 1\r\n"},
	    /* A comment of the user's in the key: the key stays, emptied. */
	    {HDR "\nwritable_roots = [\n  \"" ROOT "\", # mine\n]\n",
	        HDR "\nwritable_roots = [\n   # mine\n]\n"},
	    /* Another key in the table: the table stays. */
	    {HDR "\nwritable_roots = [\"" ROOT "\"]\nnetwork_access = true\n",
	        HDR "\nnetwork_access = true\n"},
	    /* A table of the user's (no mark): only the element, as before. */
	    {"[sandbox_workspace_write]\nwritable_roots = [\"" ROOT
	     "\"]\n[tui]\n",
	        "[sandbox_workspace_write]\nwritable_roots = []\n[tui]\n"},
	};
	struct pgn_err err;
	char *out = NULL;
	size_t i, outlen = 0;
	int changed = 0, has = 1;

	for (i = 0; i < H_COUNT(cases); i++) {
		CHECK(te_array_edit(cases[i][0], strlen(cases[i][0]), TABLE,
		          KEY, ROOT, 0, MAX, &out, &outlen, &changed, NULL,
		          &err) == PGN_OK);
		CHECK_STR(out, cases[i][1]);
		CHECK(changed);
		CHECK(te_array_has(out, outlen, TABLE, KEY, ROOT, &has, &err) ==
		        PGN_OK &&
		    !has);
		free(out);
		out = NULL;
	}
}

static void
test_pigeons_table_goes_with_its_key_even_with_tables_after_it(void)
{
	static const char *const cases[][2] = {
	    {"a = 1\n\n" HDR "\n" LINE "\n\n[other]\nx = 1\n",
	        "a = 1\n\n[other]\nx = 1\n"},
	    {"a = 1\n" HDR "\n" LINE "\n[other]\n", "a = 1\n[other]\n"},
	    {HDR "\n" LINE "\n[other]\n", "[other]\n"},
	    {"a = 1\r\n\r\n" HDR "\r\n" LINE "\r\n# mine\r\n[other]\r\n",
	        "a = 1\r\n# mine\r\n[other]\r\n"},
	    {"a = 1\n\n" HDR "\n" LINE, "a = 1\n"},
	    /* A key of the user's in it, or a comment: the table stays. */
	    {HDR "\n# mine\n" LINE "\n[other]\n", HDR "\n# mine\n[other]\n"},
	};
	struct pgn_err err;
	char *out = NULL;
	size_t i, outlen = 0;
	int changed = 0;

	for (i = 0; i < H_COUNT(cases); i++) {
		CHECK(te_array_edit(cases[i][0], strlen(cases[i][0]), TABLE,
		          KEY, ROOT, 0, MAX, &out, &outlen, &changed, NULL,
		          &err) == PGN_OK);
		CHECK_STR(out, cases[i][1]);
		free(out);
		out = NULL;
	}
}

static void
test_an_absent_file_goes_again_and_an_empty_one_stays(void)
{
	struct pgn_err err;
	char *out = NULL, *back = NULL;
	size_t outlen = 0, backlen = 0;
	int changed = 0, gone = 1;

	/* Absent: the add writes the table alone; the removal says the
	 * file goes. */
	REQUIRE(te_array_edit(NULL, 0, TABLE, KEY, ROOT, 1, MAX, &out, &outlen,
	            &changed, &gone, &err) == PGN_OK);
	CHECK(changed && !gone);
	CHECK_STR(out, HDR "\n" LINE "\n");
	REQUIRE(te_array_edit(out, outlen, TABLE, KEY, ROOT, 0, MAX, &back,
	            &backlen, &changed, &gone, &err) == PGN_OK);
	CHECK(changed && gone && backlen == 0);
	free(out);
	free(back);
	/* Empty: it comes back empty, and stays. */
	REQUIRE(te_array_edit("", 0, TABLE, KEY, ROOT, 1, MAX, &out, &outlen,
	            &changed, &gone, &err) == PGN_OK);
	CHECK(changed && !gone);
	REQUIRE(te_array_edit(out, outlen, TABLE, KEY, ROOT, 0, MAX, &back,
	            &backlen, &changed, &gone, &err) == PGN_OK);
	CHECK(changed && !gone && backlen == 0);
	free(out);
	free(back);
	/* Nothing to remove from an absent file. */
	REQUIRE(te_array_edit(NULL, 0, TABLE, KEY, ROOT, 0, MAX, &out, &outlen,
	            &changed, &gone, &err) == PGN_OK);
	CHECK(!changed && !gone);
	free(out);
}

static void
test_a_long_duplicate_key_is_named_in_short(void)
{
	char in[512], part[101], why[128];

	/* Ten parts: the last eight are shown, the first ones as "...". */
	refused("p0.p1.p2.p3.p4.p5.p6.p7.p8.p9 = 1\n"
	        "p0.p1.p2.p3.p4.p5.p6.p7.p8.p9 = 2\n",
	    "defines ...p2.p3.p4.p5.p6.p7.p8.p9 twice (lines 1 and 2)");
	refused("a.b.c.d.e.f.g.h = 1\na.b.c.d.e.f.g.h = 2\n",
	    "defines a.b.c.d.e.f.g.h twice");
	/* A part of 100 bytes: its first 64, and "...". */
	memset(part, 'k', 100);
	part[100] = '\0';
	snprintf(in, sizeof(in), "%s = 1\n\"%s\" = 2\n", part, part);
	snprintf(why, sizeof(why), "defines %.64s... twice", part);
	refused(in, why);
	refused("\"a b\" = 1\n'a b' = 2\n", "defines \"a b\" twice");
}

static void
test_values_toml_does_not_know_are_refused(void)
{
	static const char *const bad[] = {
	    "o3",
	    "TRUE",
	    "true1",
	    "Inf",
	    "01",
	    "00",
	    "0_0",
	    "1__0",
	    "_1",
	    "1_",
	    "0x",
	    "0x_1",
	    "0o8",
	    "0b2",
	    "+0x1",
	    "1.",
	    ".5",
	    "1.e5",
	    "1e",
	    "1e_1",
	    "9223372036854775808",
	    "-9223372036854775809",
	    "0x8000000000000000",
	    /* 2^63: one past the largest */
	    "0b1000000000000000000000000000000000000000000000000000000000000000",
	    "1979-13-01",
	    "1979-00-10",
	    "1979-04-31",
	    "2023-02-29",
	    "1900-02-29",
	    "1979-5-27",
	    "07:32",
	    "1979-05-27T25:00:00",
	    "1979-05-27T07:32:00.",
	    "1979-05-27T07:32:00+07",
	    "1979-05-27X",
	};
	char in[128];
	size_t i;

	for (i = 0; i < H_COUNT(bad); i++) {
		snprintf(in, sizeof(in), "model = %s\n", bad[i]);
		refused(in,
		    "line 1, column 9: a value that is not a TOML number");
		snprintf(in, sizeof(in), "[t]\r\nx = [1, %s]\r\n", bad[i]);
		refused(in, "(line 2, column 9: a value that is not a TOML");
	}
}

static void
test_every_kind_of_toml_value_is_kept(void)
{
	static const char *const good[] = {
	    "1",
	    "+1",
	    "-0",
	    "0",
	    "1_000",
	    "0xDEAD_BEEF",
	    "0o755",
	    "0b1101",
	    "9223372036854775807",
	    "-9223372036854775808",
	    "0x7FFFFFFFFFFFFFFF",
	    "3.14",
	    "-0.01",
	    "5e+22",
	    "1e06",
	    "-2E-2",
	    "6.626e-34",
	    "224_617.445_991",
	    "0.0",
	    "1e-0",
	    "inf",
	    "+inf",
	    "-nan",
	    "true",
	    "false",
	    "1979-05-27T07:32:00Z",
	    "1979-05-27T00:32:00.999999-07:00",
	    "1979-05-27 07:32:00",
	    "1979-05-27t07:32:00z",
	    "1979-05-27",
	    "2024-02-29",
	    "2000-02-29",
	    "07:32:00",
	    "00:32:00.999999",
	    "23:59:60",
	};
	char in[128];
	size_t i;

	for (i = 0; i < H_COUNT(good); i++) {
		snprintf(in, sizeof(in), "model = %s\n", good[i]);
		round_trip(in, NULL);
		snprintf(in, sizeof(in), "x = [%s, %s] # c\r\n", good[i],
		    good[i]);
		round_trip(in, NULL);
	}
}

/* "" is a key like any other, found again however big the document. */
static void
test_the_empty_key_twice_is_refused_after_many_keys(void)
{
	struct pgn_buf b;
	char *in;
	size_t k;

	refused("\"\" = 1\n'' = 2\n", "defines \"\" twice (lines 1 and 2)");
	refused("[t]\n\"\" = 1\n\"\" = 2\n", "defines t.\"\" twice");
	/* Past the model's first hash table (64 slots, kept half full). */
	pgn_buf_init(&b, MAX);
	pgn_buf_adds(&b, "\"\" = 1\n");
	for (k = 0; k < 200; k++)
		pgn_buf_addf(&b, "k%zu = %zu\n", k, k);
	pgn_buf_adds(&b, "\"\" = 2\n");
	in = pgn_buf_take(&b, NULL);
	REQUIRE(in != NULL);
	refused(in, "defines \"\" twice (lines 1 and 202)");
	free(in);
}

/* Key parts have no length bound of their own: the file's is enough. */
static void
test_a_key_longer_than_any_path_is_still_toml(void)
{
	enum { LONG = 3 * VAL_MAX_IN_TEST };
	char *in = malloc(2 * LONG + 64);
	size_t n;

	REQUIRE(in != NULL);
	memset(in, 'k', LONG);
	n = LONG;
	memcpy(in + n, " = 1\n", 5);
	n += 5;
	in[n] = '\0';
	round_trip(in, NULL);
	/* And twice is still twice. */
	in[n++] = '"';
	memset(in + n, 'k', LONG);
	n += LONG;
	memcpy(in + n, "\" = 2\n", 7);
	refused(in, "twice (lines 1 and 2)");
	free(in);
}

static const struct h_test tests[] = {
    H_TEST(test_missing_table_is_appended_and_removed_byte_exact),
    H_TEST(test_crlf_file_gets_crlf_lines),
    H_TEST(test_existing_table_without_the_key_gets_it_after_the_header),
    H_TEST(test_existing_arrays_get_one_element_in_their_style),
    H_TEST(test_other_toml_is_kept),
    H_TEST(test_present_root_changes_nothing_and_is_found_through_escapes),
    H_TEST(test_remove_takes_only_the_root_and_keeps_what_the_user_wrote),
    H_TEST(test_uneditable_shapes_are_refused_untouched),
    H_TEST(test_nesting_is_bounded),
    H_TEST(test_growth_past_the_bound_is_refused),
    H_TEST(test_quote_escapes_quotes_backslashes_and_controls),
    H_TEST(test_duplicate_keys_anywhere_are_refused_untouched),
    H_TEST(test_keys_toml_allows_to_meet_are_not_duplicates),
    H_TEST(test_a_table_at_pigeons_key_is_refused_before_the_edit),
    H_TEST(test_lone_cr_line_ends_are_not_toml_and_are_refused),
    H_TEST(test_every_line_end_style_round_trips_byte_exact),
    H_TEST(test_pigeons_table_goes_with_its_key_even_with_tables_after_it),
    H_TEST(test_no_empty_table_is_left_whatever_the_shape),
    H_TEST(test_an_absent_file_goes_again_and_an_empty_one_stays),
    H_TEST(test_a_long_duplicate_key_is_named_in_short),
    H_TEST(test_values_toml_does_not_know_are_refused),
    H_TEST(test_every_kind_of_toml_value_is_kept),
    H_TEST(test_the_empty_key_twice_is_refused_after_many_keys),
    H_TEST(test_a_key_longer_than_any_path_is_still_toml),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
