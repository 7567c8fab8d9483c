/*
 * The instructions block (instructions.c): what install writes, that
 * uninstall gives the bytes back exactly, and every refusal leaving the
 * user's file as it was.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pigeon/instructions.h"

/* install then uninstall of 'in' through the pure merge; '*mid' kept. */
static void
round_trip(const char *in, size_t len, char **mid, size_t *midlen)
{
	struct pgn_err err;
	char *out = NULL, *back = NULL;
	size_t outlen = 0, backlen = 0;
	int gone = 1, changed = 0;

	REQUIRE(pgn_instr_merge(in, len, "bob", "pigeon", 0, &out, &outlen,
	            &gone, &changed, NULL, &err) == PGN_OK);
	CHECK(changed);
	CHECK(!gone);
	CHECK(outlen > len);
	/* Installing again changes nothing. */
	REQUIRE(pgn_instr_merge(out, outlen, "bob", "pigeon", 0, &back,
	            &backlen, &gone, &changed, NULL, &err) == PGN_OK);
	CHECK(!changed);
	CHECK(backlen == outlen && memcmp(back, out, outlen) == 0);
	free(back);
	back = NULL;
	REQUIRE(pgn_instr_merge(out, outlen, NULL, NULL, 1, &back, &backlen,
	            &gone, &changed, NULL, &err) == PGN_OK);
	CHECK(changed);
	if (in == NULL) {
		CHECK(gone);
		CHECK(back == NULL);
	} else {
		CHECK(!gone);
		REQUIRE(back != NULL);
		CHECK_INT(backlen, len);
		CHECK(backlen == len && memcmp(back, in, len) == 0);
	}
	free(back);
	if (mid != NULL) {
		*mid = out;
		*midlen = outlen;
	} else {
		free(out);
	}
}

static void
test_uninstall_gives_back_every_shape_of_file_byte_identical(void)
{
	static const char *const files[] = {"", "\xEF\xBB\xBF", "x", "x\n",
	    "x\n\n", "\n", "a\r\nb", "a\r\nb\r\n", "a\r\nb\r\n\r\n",
	    "\xEF\xBB\xBF# Rules\r\nBe kind.", "\xEF\xBB\xBF# Rules\n",
	    "caf\xC3\xA9 \xE2\x9C\x93\n", "mixed\r\nends\n", "no final\nline"};
	size_t i;

	for (i = 0; i < H_COUNT(files); i++)
		round_trip(files[i], strlen(files[i]), NULL, NULL);
	round_trip(NULL, 0, NULL, NULL);
}

static void
test_block_names_the_agent_and_the_exact_commands(void)
{
	char *out;
	size_t len;

	round_trip("# Project\n", 10, &out, &len);
	CHECK(strncmp(out, "# Project\n\n" PGN_INSTR_BEGIN "\n", 33) == 0);
	CHECK_CONTAINS(out, "You are agent \"bob\"");
	CHECK_CONTAINS(out, "`pigeon read --agent bob`");
	CHECK_CONTAINS(out, "`pigeon send --to NAME --from bob \"text\"`");
	CHECK_CONTAINS(out, "`pigeon wait --agent bob`");
	CHECK(len > strlen(PGN_INSTR_END) + 1 &&
	    memcmp(out + len - strlen(PGN_INSTR_END) - 1, PGN_INSTR_END "\n",
	        strlen(PGN_INSTR_END) + 1) == 0);
	free(out);
}

static void
test_crlf_file_gets_a_crlf_block_and_no_final_line_end_stays_so(void)
{
	char *out;
	size_t len, i;
	int lf = 0;

	round_trip("a\r\nb", 4, &out, &len);
	for (i = 0; i < len; i++)
		if (out[i] == '\n' && (i == 0 || out[i - 1] != '\r'))
			lf++;
	CHECK_INT(lf, 0);
	/* No final line end before install: none after it either. */
	CHECK(out[len - 1] == '>');
	free(out);
}

static void
test_refresh_rewrites_the_block_in_place_keeping_text_around_it(void)
{
	static const char before[] =
	    "top\n\n" PGN_INSTR_BEGIN "\n## Pigeon: messages from other "
	    "agents\n\nYou are agent \"old\" in Pigeon\n"
	    "stale text\n" PGN_INSTR_END "\nbottom\n";
	struct pgn_err err;
	char found[PGN_MAX_NAME + 1], *out = NULL;
	char *back = NULL;
	size_t len = 0, blen = 0;
	int gone, changed;

	REQUIRE(pgn_instr_merge(before, strlen(before), "new", "pigeon", 0,
	            &out, &len, &gone, &changed, found, &err) == PGN_OK);
	CHECK(changed);
	CHECK_STR(found, "old");
	CHECK(strncmp(out, "top\n\n" PGN_INSTR_BEGIN "\n", 27) == 0);
	CHECK(len > 8 && strcmp(out + len - 8, "\nbottom\n") == 0);
	CHECK(strstr(out, "stale text") == NULL);
	CHECK_CONTAINS(out, "`pigeon read --agent new`");
	/* Uninstall keeps the user's text after the block. */
	REQUIRE(pgn_instr_merge(out, len, NULL, NULL, 1, &back, &blen, &gone,
	            &changed, NULL, &err) == PGN_OK);
	CHECK_STR(back, "top\nbottom\n");
	free(out);
	free(back);
}

static void
test_broken_markers_are_refused_naming_the_line(void)
{
	static const char *const bad[] = {PGN_INSTR_BEGIN
	    "\nx\n" PGN_INSTR_END "\n" PGN_INSTR_BEGIN "\n",
	    "a\n" PGN_INSTR_BEGIN "\nno end\n", "a\n" PGN_INSTR_END "\n",
	    PGN_INSTR_BEGIN "\n" PGN_INSTR_END "\n" PGN_INSTR_END "\n",
	    "a\r" PGN_INSTR_BEGIN "\rb\r" PGN_INSTR_BEGIN "\r" PGN_INSTR_END,
	    "```\n" PGN_INSTR_BEGIN "\n```\n" PGN_INSTR_END "\n"};
	static const char *const why[] = {"line 4 with no", "line 2 with no",
	    "line 2 without", "line 3 without", "twice (lines 2 and 4)",
	    "line 4 without"};
	struct pgn_err err;
	char *out = NULL;
	size_t len, i;
	int gone, changed, rm;

	for (i = 0; i < H_COUNT(bad); i++)
		for (rm = 0; rm < 2; rm++) {
			pgn_err_clear(&err);
			CHECK(pgn_instr_merge(bad[i], strlen(bad[i]), "bob",
			          "pigeon", rm, &out, &len, &gone, &changed,
			          NULL, &err) == PGN_EINVAL);
			CHECK(out == NULL);
			CHECK_CONTAINS(err.msg, why[i]);
		}
}

static void
test_non_utf8_nul_and_oversized_text_are_refused(void)
{
	struct pgn_err err;
	char *out = NULL, *big;
	size_t len;
	int gone, changed;

	CHECK(pgn_instr_merge("a\xff", 2, "bob", "pigeon", 0, &out, &len, &gone,
	          &changed, NULL, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "not UTF-8");
	CHECK(pgn_instr_merge("a\0b", 3, "bob", "pigeon", 0, &out, &len, &gone,
	          &changed, NULL, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "NUL byte at offset 1");
	big = malloc(PGN_MAX_INSTRUCTIONS + 1);
	REQUIRE(big != NULL);
	memset(big, 'a', PGN_MAX_INSTRUCTIONS + 1);
	CHECK(pgn_instr_merge(big, PGN_MAX_INSTRUCTIONS + 1, "bob", "pigeon", 0,
	          &out, &len, &gone, &changed, NULL, &err) == PGN_ETOOBIG);
	CHECK_CONTAINS(err.msg, "larger than 1048576 bytes");
	CHECK(out == NULL);
	/* At the bound it is read, but the block does not fit any more. */
	CHECK(pgn_instr_merge(big, PGN_MAX_INSTRUCTIONS, "bob", "pigeon", 0,
	          &out, &len, &gone, &changed, NULL, &err) == PGN_ETOOBIG);
	CHECK_CONTAINS(err.msg, "would be larger than 1048576 bytes");
	CHECK(out == NULL);
	CHECK(pgn_instr_merge(big, PGN_MAX_INSTRUCTIONS, NULL, NULL, 1, &out,
	          &len, &gone, &changed, NULL, &err) == PGN_OK);
	CHECK(!changed);
	free(out);
	free(big);
}

/* The block's first lines as Pigeon writes them, LF. */
#define HEAD PGN_INSTR_BEGIN "\n## Pigeon: messages from other agents\n\n"

/* Install must refuse 'in' untouched, naming 'why'; uninstall keeps it. */
static void
refused_on_install(const char *in, const char *why)
{
	struct pgn_err err;
	char *out = NULL;
	size_t len = 0;
	int gone = 0, changed = 1;

	CHECK(pgn_instr_merge(in, strlen(in), "bob", "pigeon", 0, &out, &len,
	          &gone, &changed, NULL, &err) == PGN_EINVAL);
	CHECK(out == NULL && !changed);
	CHECK_CONTAINS(err.msg, why);
	CHECK(pgn_instr_merge(in, strlen(in), NULL, NULL, 1, &out, &len, &gone,
	          &changed, NULL, &err) == PGN_OK);
	CHECK(!changed && !gone);
	CHECK(out != NULL && len == strlen(in) && memcmp(out, in, len) == 0);
	free(out);
}

static void
test_markers_quoted_in_a_fenced_code_block_stay_the_users(void)
{
	static const char *const files[] = {
	    /* The review's file: docs showing what Pigeon writes. */
	    "# Agents\n\nExample:\n\n```\n" PGN_INSTR_BEGIN
	    "\n(our own explanation)\n" PGN_INSTR_END "\n```\n",
	    "~~~ markdown\n" PGN_INSTR_BEGIN "\n(our own explanation)\n"
	    "~~~\n",
	    "   ````html title=\"x\"\n" PGN_INSTR_BEGIN "\n```\n"
	    "(our own explanation)\n" PGN_INSTR_END "\n   `````  \r\n",
	    "a\r\n\r\n```\r\n" PGN_INSTR_END "\r\n```\r\nb",
	    /* Even a whole block of Pigeon's, shown as an example. */
	    "```\n" HEAD "You are agent \"eve\" in Pigeon\n" PGN_INSTR_END
	    "\n```\n",
	    "~~~\n" PGN_INSTR_BEGIN "\n~~~~\n\n(our own explanation)\n",
	};
	struct pgn_err err;
	char found[PGN_MAX_NAME + 1], *out;
	size_t i, len;
	int gone, changed;

	for (i = 0; i < H_COUNT(files); i++) {
		round_trip(files[i], strlen(files[i]), &out, &len);
		CHECK(len > strlen(files[i]) &&
		    memcmp(out, files[i], strlen(files[i])) == 0);
		free(out);
		out = NULL;
		/* And the user's block is not taken for Pigeon's. */
		CHECK(pgn_instr_merge(files[i], strlen(files[i]), NULL, NULL, 1,
		          &out, &len, &gone, &changed, found, &err) == PGN_OK);
		CHECK(!changed);
		CHECK_STR(found, "");
		free(out);
	}
}

static void
test_a_marker_pair_around_text_not_pigeons_is_never_overwritten(void)
{
	refused_on_install("# Agents\n\n" PGN_INSTR_BEGIN
	                   "\n(our own explanation)\n" PGN_INSTR_END "\n",
	    "lines 3 and 5");
	refused_on_install("x\r\n" PGN_INSTR_BEGIN "\r\n" PGN_INSTR_END "\r\n",
	    "lines 2 and 3");
	/* Four spaces make no fence (CommonMark): the markers count. */
	refused_on_install("    ```\n" PGN_INSTR_BEGIN "\nmine\n" PGN_INSTR_END
	                   "\n    ```\n",
	    "lines 2 and 4");
	/* A block whose second line is not Pigeon's, or names no agent. */
	refused_on_install(PGN_INSTR_BEGIN
	    "\n## Pigeon: messages from other agents!\n\nYou are agent \"bob\" "
	    "in Pigeon\n" PGN_INSTR_END "\n",
	    "not Pigeon's block");
	refused_on_install(HEAD "Agents here: bob\n" PGN_INSTR_END "\n",
	    "not Pigeon's block");
	refused_on_install("\n" PGN_INSTR_BEGIN
	                   "\n\n## Pigeon: messages from other agents\n"
	                   "You are agent \"bob\"\n" PGN_INSTR_END "\n",
	    "not Pigeon's block");
}

static void
test_pigeons_block_beside_a_users_pair_is_the_only_one_touched(void)
{
	static const char user[] =
	    "```\n" PGN_INSTR_BEGIN "\nexample\n"
	    "```\n" PGN_INSTR_BEGIN "\nkept\n" PGN_INSTR_END "\n";
	struct pgn_err err;
	char *mid = NULL, *out = NULL, *back = NULL;
	char *both = NULL;
	size_t midlen = 0, len = 0, blen = 0;
	int gone, changed;

	/* A pair of the user's after Pigeon's block: refresh, uninstall. */
	round_trip("top\n", 4, &mid, &midlen);
	both = malloc(midlen + sizeof(user));
	REQUIRE(both != NULL);
	memcpy(both, mid, midlen);
	memcpy(both + midlen, user, sizeof(user));
	REQUIRE(pgn_instr_merge(both, strlen(both), "dora", "pigeon", 0, &out,
	            &len, &gone, &changed, NULL, &err) == PGN_OK);
	CHECK(changed);
	CHECK_CONTAINS(out, "`pigeon read --agent dora`");
	CHECK(
	    len > strlen(user) && strcmp(out + len - strlen(user), user) == 0);
	REQUIRE(pgn_instr_merge(out, len, NULL, NULL, 1, &back, &blen, &gone,
	            &changed, NULL, &err) == PGN_OK);
	CHECK_STR(back,
	    "top\n```\n" PGN_INSTR_BEGIN "\nexample\n```\n" PGN_INSTR_BEGIN
	    "\nkept\n" PGN_INSTR_END "\n");
	free(mid);
	free(both);
	free(out);
	free(back);
}

static void
test_two_pigeon_blocks_are_refused_naming_both(void)
{
	static const char two[] =
	    HEAD "You are agent \"a\" in Pigeon\n" PGN_INSTR_END "\n" HEAD
	         "You are agent \"b\" in Pigeon\n" PGN_INSTR_END "\n";
	struct pgn_err err;
	char *out = NULL;
	size_t len;
	int gone, changed, rm;

	for (rm = 0; rm < 2; rm++) {
		CHECK(
		    pgn_instr_merge(two, strlen(two), "bob", "pigeon", rm, &out,
		        &len, &gone, &changed, NULL, &err) == PGN_EINVAL);
		CHECK(out == NULL);
		CHECK_CONTAINS(err.msg, "lines 1 and 6");
	}
}

static void
test_a_fence_left_open_does_not_hide_the_block_appended_after_it(void)
{
	char *out;
	size_t len;

	/* Counted, it would hide the block: a second install would add
	 * another, and uninstall would find none. */
	round_trip("```\nunclosed code\n", 18, &out, &len);
	free(out);
	round_trip("~~~\n```\n", 8, &out, &len);
	free(out);
}

/* Install, install again, uninstall over every line-end style. */
static void
test_every_line_end_style_round_trips_byte_identical(void)
{
	static const char *const texts[] = {"a", "", "\xC3\xA9 b"};
	static const char *const ends[] = {"\n", "\r\n", "\r", ""};
	char buf[64];
	size_t len, n, k, line, pick, bom, combos, i;

	/* Up to four lines, each with any text and any line end, the last
	 * with none too; with and without a BOM. */
	for (bom = 0; bom < 2; bom++)
		for (n = 0; n <= 4; n++) {
			combos = 1;
			for (k = 0; k < n; k++)
				combos *= H_COUNT(texts) * H_COUNT(ends);
			for (i = 0; i < combos; i++) {
				len = 0;
				if (bom) {
					memcpy(buf, "\xEF\xBB\xBF", 3);
					len = 3;
				}
				pick = i;
				for (line = 0; line < n; line++) {
					k = pick %
					    (H_COUNT(texts) * H_COUNT(ends));
					pick /= H_COUNT(texts) * H_COUNT(ends);
					/* Only the last line may lack an end.
					 */
					if (line + 1 < n &&
					    k % H_COUNT(ends) == 3)
						k--;
					memcpy(buf + len,
					    texts[k / H_COUNT(ends)],
					    strlen(texts[k / H_COUNT(ends)]));
					len += strlen(texts[k / H_COUNT(ends)]);
					memcpy(buf + len,
					    ends[k % H_COUNT(ends)],
					    strlen(ends[k % H_COUNT(ends)]));
					len += strlen(ends[k % H_COUNT(ends)]);
				}
				buf[len] = '\0';
				round_trip(buf, len, NULL, NULL);
			}
		}
}

static void
test_classic_mac_file_gets_a_cr_block_and_comes_back_identical(void)
{
	char *out;
	size_t len;

	round_trip("a\rb\rc\r", 6, &out, &len);
	CHECK(memchr(out, '\n', len) == NULL);
	CHECK(
	    strncmp(out, "a\rb\rc\r\r" PGN_INSTR_BEGIN "\r## Pigeon", 37) == 0);
	CHECK(len > 20 && memcmp(out + len - 20, PGN_INSTR_END "\r", 20) == 0);
	free(out);
	round_trip("a\rb", 3, &out, &len);
	CHECK(memchr(out, '\n', len) == NULL);
	free(out);
}

/* ---- the file ------------------------------------------------------- */

static pgn_status
apply(const char *path, const char *agent, int remove,
    struct pgn_instr_result *res, struct pgn_err *err)
{
	struct pgn_instr req = {.path = path,
	    .agent = agent,
	    .pigeon = "/opt/pigeon tools/pigeon",
	    .remove = remove};

	return pgn_instr_apply(&req, res, err);
}

static int
file_is(const char *path, const char *want, size_t len)
{
	char *d;
	size_t n = 0;
	int ok;

	d = h_read_file(path, &n);
	ok = d != NULL && n == len && memcmp(d, want, len) == 0;
	free(d);
	return ok;
}

static void
test_file_install_refresh_uninstall_keeps_mode_and_leaves_no_lock(void)
{
	static const char orig[] = "Be brief.\r\n";
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX], *lock, *d;
	struct stat sb;
	size_t n;

	h_join(path, sizeof(path), h_tmp, "AGENTS.md");
	h_write_file(path, orig, strlen(orig));
	REQUIRE(chmod(path, 0600) == 0);
	REQUIRE(apply(path, "bob", 0, &res, &err) == PGN_OK);
	CHECK(res.changed && !res.created);
	CHECK_STR(res.agent, "bob");
	d = h_read_file(path, &n);
	CHECK_CONTAINS(d, "`'/opt/pigeon tools/pigeon' read --agent bob`");
	free(d);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600);
	lock = pgn_instr_lock_path(path);
	CHECK(!h_exists(lock));
	/* No --agent: the block keeps its name. */
	REQUIRE(apply(path, NULL, 0, &res, &err) == PGN_OK);
	CHECK(!res.changed);
	CHECK_STR(res.agent, "bob");
	REQUIRE(apply(path, NULL, 1, &res, &err) == PGN_OK);
	CHECK(res.changed && !res.deleted);
	CHECK(file_is(path, orig, strlen(orig)));
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600);
	CHECK(!h_exists(lock));
	free(lock);
}

static void
test_file_created_by_install_is_removed_by_uninstall(void)
{
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX];

	h_join(path, sizeof(path), h_tmp, ".windsurfrules");
	REQUIRE(apply(path, NULL, 0, &res, &err) == PGN_OK);
	CHECK(res.changed && res.created && res.generated);
	CHECK(res.agent[0] != '\0');
	CHECK(h_exists(path));
	REQUIRE(apply(path, NULL, 1, &res, &err) == PGN_OK);
	CHECK(res.deleted);
	CHECK(!h_exists(path));
	REQUIRE(apply(path, NULL, 1, &res, &err) == PGN_OK);
	CHECK(!res.changed);
}

/*
 * One identity per session (decision 0182): the block says the name a
 * Pigeon hook gave this session wins over its own.
 */
static void
test_block_says_the_hooks_name_wins(void)
{
	char *block;

	block = pgn_instr_block("windsurf", "pigeon", "\n");
	REQUIRE(block != NULL);
	CHECK_CONTAINS(block,
	    "\nIf Pigeon has already told you in this session \"Pigeon: you are agent\" another name, that name wins: use it instead of \"windsurf\" in every command below.\n");
	free(block);
}

static void
test_symlink_directory_and_fifo_are_refused_untouched(void)
{
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX], target[PATH_MAX];

	h_join(target, sizeof(target), h_tmp, "real.md");
	h_join(path, sizeof(path), h_tmp, "link.md");
	h_write_file(target, "mine\n", 5);
	REQUIRE(symlink(target, path) == 0);
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "is a symbolic link: left untouched");
	CHECK(file_is(target, "mine\n", 5));
	CHECK(apply(path, NULL, 1, &res, &err) == PGN_EINVAL);
	CHECK(file_is(target, "mine\n", 5));
	/* A dangling link is refused too, and nothing is created. */
	h_join(path, sizeof(path), h_tmp, "dangling.md");
	REQUIRE(symlink("/nonexistent/x.md", path) == 0);
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_EINVAL);
	CHECK(apply(h_tmp, "bob", 0, &res, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "is a directory");
	h_join(path, sizeof(path), h_tmp, "fifo.md");
	REQUIRE(mkfifo(path, 0600) == 0);
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "is not a regular file");
	h_join(path, sizeof(path), h_tmp, "no/such/dir.md");
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "no such directory");
}

static void
test_non_utf8_and_oversized_files_are_refused_untouched(void)
{
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX], *big;

	h_join(path, sizeof(path), h_tmp, "latin1.md");
	h_write_file(path, "caf\xe9\n", 5);
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "latin1.md' is not UTF-8 text: left untouched");
	CHECK(file_is(path, "caf\xe9\n", 5));
	big = malloc(PGN_MAX_INSTRUCTIONS + 1);
	REQUIRE(big != NULL);
	memset(big, 'x', PGN_MAX_INSTRUCTIONS + 1);
	h_join(path, sizeof(path), h_tmp, "huge.md");
	h_write_file(path, big, PGN_MAX_INSTRUCTIONS + 1);
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_ETOOBIG);
	CHECK_CONTAINS(err.msg, "larger than 1048576 bytes: left untouched");
	CHECK(file_is(path, big, PGN_MAX_INSTRUCTIONS + 1));
	free(big);
}

static void
test_a_concurrent_install_is_refused_untouched(void)
{
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX], *lock;
	int fd;

	h_join(path, sizeof(path), h_tmp, "AGENTS.md");
	h_write_file(path, "x\n", 2);
	lock = pgn_instr_lock_path(path);
	REQUIRE(lock != NULL);
	/* Another run holds the lock. */
	fd = open(lock, O_RDWR | O_CREAT, 0600);
	REQUIRE(fd >= 0 && flock(fd, LOCK_EX) == 0);
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_EBUSY);
	CHECK_CONTAINS(err.msg, "another pigeon is changing");
	CHECK(file_is(path, "x\n", 2));
	close(fd);
	/* A lock file left by a run that died holds no lock. */
	REQUIRE(h_exists(lock));
	CHECK(apply(path, "bob", 0, &res, &err) == PGN_OK);
	CHECK(!h_exists(lock));
	free(lock);
}

static void
test_hard_linked_file_stays_linked_through_install_and_uninstall(void)
{
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX], other[PATH_MAX];
	struct stat a, b;
	char *d;
	size_t n;

	h_join(path, sizeof(path), h_tmp, "AGENTS.md");
	h_join(other, sizeof(other), h_tmp, "shared-rules.md");
	h_write_file(other, "shared\n", 7);
	REQUIRE(link(other, path) == 0);
	REQUIRE(apply(path, "bob", 0, &res, &err) == PGN_OK);
	CHECK(stat(path, &a) == 0 && stat(other, &b) == 0);
	CHECK(a.st_ino == b.st_ino && a.st_nlink == 2);
	d = h_read_file(other, &n);
	CHECK_CONTAINS(d, "read --agent bob");
	free(d);
	REQUIRE(apply(path, NULL, 1, &res, &err) == PGN_OK);
	CHECK(file_is(other, "shared\n", 7));
	CHECK(stat(path, &a) == 0 && a.st_ino == b.st_ino);
}

static void
test_created_file_with_a_new_hard_link_is_emptied_not_removed(void)
{
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX], other[PATH_MAX];

	h_join(path, sizeof(path), h_tmp, "AGENTS.md");
	h_join(other, sizeof(other), h_tmp, "copy.md");
	REQUIRE(apply(path, "bob", 0, &res, &err) == PGN_OK);
	REQUIRE(link(path, other) == 0);
	REQUIRE(apply(path, NULL, 1, &res, &err) == PGN_OK);
	CHECK(!res.deleted);
	CHECK(file_is(path, "", 0));
	CHECK(file_is(other, "", 0));
}

static void
test_bad_agent_name_is_refused_before_reading(void)
{
	struct pgn_instr_result res;
	struct pgn_err err;
	char path[PATH_MAX];

	h_join(path, sizeof(path), h_tmp, "AGENTS.md");
	CHECK(apply(path, "Bad Name!", 0, &res, &err) == PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "is not an agent name");
	CHECK(!h_exists(path));
}

static const struct h_test tests[] = {
    H_TEST(test_uninstall_gives_back_every_shape_of_file_byte_identical),
    H_TEST(test_block_names_the_agent_and_the_exact_commands),
    H_TEST(test_crlf_file_gets_a_crlf_block_and_no_final_line_end_stays_so),
    H_TEST(test_refresh_rewrites_the_block_in_place_keeping_text_around_it),
    H_TEST(test_broken_markers_are_refused_naming_the_line),
    H_TEST(test_non_utf8_nul_and_oversized_text_are_refused),
    H_TEST(test_markers_quoted_in_a_fenced_code_block_stay_the_users),
    H_TEST(test_a_marker_pair_around_text_not_pigeons_is_never_overwritten),
    H_TEST(test_pigeons_block_beside_a_users_pair_is_the_only_one_touched),
    H_TEST(test_two_pigeon_blocks_are_refused_naming_both),
    H_TEST(test_a_fence_left_open_does_not_hide_the_block_appended_after_it),
    H_TEST(test_every_line_end_style_round_trips_byte_identical),
    H_TEST(test_classic_mac_file_gets_a_cr_block_and_comes_back_identical),
    H_TEST(test_file_install_refresh_uninstall_keeps_mode_and_leaves_no_lock),
    H_TEST(test_file_created_by_install_is_removed_by_uninstall),
    H_TEST(test_symlink_directory_and_fifo_are_refused_untouched),
    H_TEST(test_non_utf8_and_oversized_files_are_refused_untouched),
    H_TEST(test_a_concurrent_install_is_refused_untouched),
    H_TEST(test_hard_linked_file_stays_linked_through_install_and_uninstall),
    H_TEST(test_created_file_with_a_new_hard_link_is_emptied_not_removed),
    H_TEST(test_bad_agent_name_is_refused_before_reading),
    H_TEST(test_block_says_the_hooks_name_wins),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
