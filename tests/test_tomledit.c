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
#include "tomledit.h"

#define TABLE "sandbox_workspace_write"
#define KEY   "writable_roots"
#define ROOT  "/home/u/.local/state/pigeon"
#define MAX   (1 << 20)
/* The header and the key line the add creates. */
#define HDR  "[sandbox_workspace_write] # " TE_MARK
#define LINE "writable_roots = [\"" ROOT "\"] # " TE_MARK

/* Add then remove ROOT: 'after' (NULL: not checked) and the bytes back. */
static void
round_trip(const char *in, const char *after)
{
	char err[PGN_MAX_ERR], *out = NULL, *back = NULL, *again = NULL;
	size_t outlen = 0, backlen = 0, againlen = 0;
	int changed = 0, has = 0;

	REQUIRE(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, MAX, &out,
	            &outlen, &changed, err, sizeof(err)) == PGN_OK);
	CHECK(changed);
	if (after != NULL)
		CHECK_STR(out, after);
	CHECK(te_array_has(out, outlen, TABLE, KEY, ROOT, &has, err,
	          sizeof(err)) == PGN_OK &&
	    has);
	/* A second add changes nothing. */
	CHECK(te_array_edit(out, outlen, TABLE, KEY, ROOT, 1, MAX, &again,
	          &againlen, &changed, err, sizeof(err)) == PGN_OK);
	CHECK(!changed);
	CHECK(again != NULL && againlen == outlen &&
	    memcmp(again, out, outlen) == 0);
	CHECK(te_array_edit(out, outlen, TABLE, KEY, ROOT, 0, MAX, &back,
	          &backlen, &changed, err, sizeof(err)) == PGN_OK);
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
	char err[PGN_MAX_ERR] = "", *out = NULL;
	size_t outlen = 0;
	int changed = 1;

	CHECK(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, MAX, &out,
	          &outlen, &changed, err, sizeof(err)) == PGN_EINVAL);
	CHECK(out == NULL && !changed);
	CHECK_CONTAINS(err, why);
}

static void
test_missing_table_is_appended_and_removed_byte_exact(void)
{
	round_trip("", HDR "\n" LINE "\n");
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
	char err[PGN_MAX_ERR], *out = NULL;
	size_t outlen = 0;
	int changed = 1, has = 0;

	CHECK(te_array_has(in, strlen(in), TABLE, KEY, ROOT, &has, err,
	          sizeof(err)) == PGN_OK &&
	    has);
	CHECK(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, MAX, &out,
	          &outlen, &changed, err, sizeof(err)) == PGN_OK);
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
	char err[PGN_MAX_ERR], *out = NULL;
	size_t i, outlen = 0;
	int changed = 0;

	for (i = 0; i < H_COUNT(cases); i++) {
		CHECK(te_array_edit(cases[i][0], strlen(cases[i][0]), TABLE,
		          KEY, ROOT, 0, MAX, &out, &outlen, &changed, err,
		          sizeof(err)) == PGN_OK);
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
	char err[PGN_MAX_ERR], *out = NULL;
	size_t outlen = 0;
	int changed = 0;
	const char *in = "x = 1\n";

	CHECK(te_array_edit(in, strlen(in), TABLE, KEY, ROOT, 1, strlen(in) + 5,
	          &out, &outlen, &changed, err, sizeof(err)) == PGN_ETOOBIG);
	CHECK(out == NULL);
	CHECK_CONTAINS(err, "would grow past");
}

static void
test_quote_escapes_quotes_backslashes_and_controls(void)
{
	char *q = te_quote("/a \"b\"\\c\td");

	CHECK_STR(q, "\"/a \\\"b\\\"\\\\c\\u0009d\"");
	free(q);
	round_trip("", NULL);
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
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
