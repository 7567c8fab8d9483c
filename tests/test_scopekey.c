/*
 * Unit tests of the scope key (scopekey.c): every form of a remote url
 * one repository has, what tells repositories apart, urls that name no
 * host, git's config syntax, and configs on disk that are huge,
 * malformed, symlinked or not files at all.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "pgn_int.h"

#define KEY_ALARM_S 5 /* a read that blocks this long fails the test */

/* out = h_tmp/rel */
static void
at(char *out, size_t len, const char *rel)
{
	h_join(out, len, h_tmp, rel);
}

/* mkdir -p h_tmp/rel */
static void
mkdirs(const char *rel)
{
	char path[PATH_MAX];
	size_t i, base;

	at(path, sizeof(path), rel);
	base = strlen(h_tmp) + 1;
	for (i = base; path[i] != '\0'; i++) {
		if (path[i] != '/')
			continue;
		path[i] = '\0';
		if (!h_exists(path))
			h_mkdir(path);
		path[i] = '/';
	}
	if (!h_exists(path))
		h_mkdir(path);
}

static void
put(const char *rel, const char *text)
{
	char path[PATH_MAX];

	at(path, sizeof(path), rel);
	h_write_file(path, text, strlen(text));
}

/* A repository h_tmp/rel whose .git/config holds 'config'. */
static void
repo(const char *rel, const char *config)
{
	char path[PATH_MAX];

	h_join(path, sizeof(path), rel, ".git");
	mkdirs(path);
	h_join(path, sizeof(path), rel, ".git/config");
	put(path, config);
}

static const char origin_fmt[] =
    "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    "[remote \"origin\"]\n\turl = %s\n"
    "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
    "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";

/* The key of url, or NULL; 'why' gets the reason when refused. */
static char *
key_of(const char *url, const char **why)
{
	static struct pgn_err err;
	char *key = NULL;

	*why = NULL;
	pgn_err_clear(&err);
	if (pgn_remote_key(url, &key, &err) != PGN_OK) {
		*why = err.msg[0] != '\0' ? err.msg : NULL;
		return NULL;
	}
	return key;
}

static void
check_key(const char *url, const char *want, const char *file, int line)
{
	const char *why;
	char *key = key_of(url, &why);

	if (key == NULL)
		printf("%s:%d: '%s' refused: %s\n", file, line, url,
		    why != NULL ? why : "(no reason)");
	h_check_str(key, want, file, line, url, want);
	free(key);
}

#define CHECK_KEY(url, want) check_key((url), (want), __FILE__, __LINE__)

static void
check_refused(const char *url, const char *reason, const char *file, int line)
{
	const char *why = NULL;
	char *key = key_of(url, &why);

	h_check_str(key, NULL, file, line, url, "refused");
	h_check_contains(why, reason, file, line, url, reason);
	free(key);
}

#define CHECK_REFUSED(url, reason)                                             \
	check_refused((url), (reason), __FILE__, __LINE__)

static void
test_every_form_of_one_remote_is_one_key(void)
{
	static const char *const forms[] = {
	    "git@github.com:owner/repo.git",
	    "git@github.com:owner/repo",
	    "git@github.com:owner/repo.git/",
	    "git@GitHub.COM:owner/repo.git",
	    "github.com:owner/repo",
	    "git@github.com:/owner/repo.git",
	    "[git@github.com:22]:owner/repo.git",
	    "ssh://git@github.com/owner/repo.git",
	    "ssh://git@github.com:22/owner/repo.git",
	    "ssh://github.com/owner/repo",
	    "SSH://git@GITHUB.com/owner/repo.git",
	    "git+ssh://git@github.com/owner/repo.git",
	    "ssh+git://git@github.com/owner/repo.git",
	    "git://github.com/owner/repo.git",
	    "https://github.com/owner/repo",
	    "https://github.com/owner/repo.git",
	    "https://github.com/owner/repo/",
	    "https://github.com/owner/repo.git/",
	    "https://github.com/owner/repo.git//",
	    "https://github.com//owner//repo.git",
	    "https://user@github.com/owner/repo.git",
	    "https://user:s3cret-token@github.com/owner/repo.git",
	    "https://github.com:443/owner/repo",
	    "http://github.com/owner/repo.git",
	    "HTTPS://GitHub.Com/owner/repo",
	};
	size_t i;

	for (i = 0; i < H_COUNT(forms); i++)
		CHECK_KEY(forms[i], "github.com/owner/repo");
}

static void
test_keys_keep_what_tells_repositories_apart(void)
{
	/* The path keeps its case: some hosts fold it, others do not. */
	CHECK_KEY("git@github.com:Owner/Repo.git", "github.com/Owner/Repo");
	CHECK_KEY("git@gitlab.com:group/sub/repo.git",
	    "gitlab.com/group/sub/repo");
	CHECK_KEY("https://git.example.org/scm/team/repo.git",
	    "git.example.org/scm/team/repo");
	CHECK_KEY("ssh://git@git.example.org:2222/team/repo.git",
	    "git.example.org/team/repo");
	CHECK_KEY("host:~user/repo.git", "host/~user/repo");
	CHECK_KEY("ssh://git@[::1]:2222/o/r.git", "[::1]/o/r");
	CHECK_KEY("[::1]:o/r.git", "[::1]/o/r");
	CHECK_KEY("https://10.0.0.7/o/r", "10.0.0.7/o/r");
	CHECK_KEY("https://git_host/o/r", "git_host/o/r");
	/* Only one ".git" goes, and only at the end. */
	CHECK_KEY("https://h/o/r.git.git", "h/o/r.git");
	CHECK_KEY("https://h/o.git/r", "h/o.git/r");
	CHECK_KEY("https://h/o/r.gitx", "h/o/r.gitx");
	/* Non-ASCII paths are kept as they are (valid UTF-8). */
	CHECK_KEY("https://h/o/r\xc3\xa9po", "h/o/r\xc3\xa9po");
}

static void
test_urls_without_a_host_are_refused_with_a_reason(void)
{
	CHECK_REFUSED("", "is empty");
	CHECK_REFUSED("/srv/git/repo.git", "local path");
	CHECK_REFUSED("./repo", "local path");
	CHECK_REFUSED("../repo.git", "local path");
	CHECK_REFUSED("repo", "local path");
	CHECK_REFUSED("dir/sub:name", "local path");
	CHECK_REFUSED("file:///srv/git/repo.git", "local path (file://)");
	CHECK_REFUSED("FILE://host/srv/repo", "local path (file://)");
	CHECK_REFUSED("codecommit::us-east-1://repo", "remote helper");
	CHECK_REFUSED("persistent-https::https://h/o/r", "remote helper");
	CHECK_REFUSED("https:///owner/repo", "no host");
	CHECK_REFUSED("ssh://git@/owner/repo", "no host");
	CHECK_REFUSED(":owner/repo", "no host");
	CHECK_REFUSED("git@:owner/repo", "no host");
	CHECK_REFUSED("https://bad!host/o/r", "not a host name");
	CHECK_REFUSED("https://h\xc3\xa9st/o/r", "not a host name");
	CHECK_REFUSED("[::1/o/r", "no host");
	/* A bracket never closed by "]:" (it once read from a null pointer). */
	CHECK_REFUSED("[git@host:owner/repo", "no host");
	CHECK_REFUSED("[host:repo", "no host");
	CHECK_REFUSED("1ttp://h/o/r", "scheme");
	CHECK_REFUSED("ht~tp://h/o/r", "scheme");
	CHECK_REFUSED("https://github.com", "no repository path");
	CHECK_REFUSED("https://github.com/", "no repository path");
	CHECK_REFUSED("https://github.com/.git", "no repository path");
	CHECK_REFUSED("git@github.com:", "no repository path");
	CHECK_REFUSED("https://h/o/r x", "space or a control character");
	CHECK_REFUSED("https://h/o/r\x1b[31m", "space or a control character");
	CHECK_REFUSED("https://h/o/r\t", "space or a control character");
	CHECK_REFUSED("https://h/o/r\x7f", "space or a control character");
	CHECK_REFUSED("https://h/o/r\xff", "not valid UTF-8");
}

static void
test_a_refusal_never_quotes_the_url(void)
{
	static const char *const urls[] = {
	    "https://user:hunter2@/o/r",
	    "file://user:hunter2@host/o/r",
	    "https://user:hunter2@bad!host/o/r",
	    "https://user:hunter2@h",
	    "hunter2::https://h/o/r",
	};
	const char *why;
	char *key;
	size_t i;

	for (i = 0; i < H_COUNT(urls); i++) {
		key = key_of(urls[i], &why);
		CHECK(key == NULL);
		REQUIRE(why != NULL);
		CHECK(strstr(why, "hunter2") == NULL);
		free(key);
	}
	/* And an accepted one drops the user and the password. */
	key = key_of("https://user:hunter2@github.com/o/r.git", &why);
	CHECK_STR(key, "github.com/o/r");
	free(key);
}

static void
test_url_length_bound_is_max_remote_url(void)
{
	char url[PGN_MAX_REMOTE_URL + 2], want[PGN_MAX_REMOTE_URL + 2];
	struct pgn_err why;
	char *key;
	size_t n = strlen("https://h/");

	memcpy(url, "https://h/", n);
	memset(url + n, 'a', PGN_MAX_REMOTE_URL - n);
	url[PGN_MAX_REMOTE_URL] = '\0';
	memcpy(want, "h/", 2);
	memset(want + 2, 'a', PGN_MAX_REMOTE_URL - n);
	want[2 + PGN_MAX_REMOTE_URL - n] = '\0';
	CHECK_KEY(url, want);
	url[PGN_MAX_REMOTE_URL] = 'a';
	url[PGN_MAX_REMOTE_URL + 1] = '\0';
	key = NULL;
	CHECK_INT(pgn_remote_key(url, &key, &why), PGN_ETOOBIG);
	CHECK(key == NULL);
	CHECK_CONTAINS(why.msg, "over 2048 bytes");
}

/* The origin url of config text, or NULL; '*st' and '*line' as returned. */
static char *
origin_of(const char *text, pgn_status *st, size_t *line)
{
	char *url = NULL;

	*st = pgn_gitconfig_origin(text, strlen(text), &url, line);
	return url;
}

static void
check_origin(const char *text, const char *want, const char *file, int line)
{
	pgn_status st;
	size_t at_line;
	char *url = origin_of(text, &st, &at_line);

	h_check_int(st, PGN_OK, file, line, "pgn_gitconfig_origin", "PGN_OK");
	h_check_str(url, want, file, line, text, want ? want : "(none)");
	free(url);
}

#define CHECK_ORIGIN(text, want)                                               \
	check_origin((text), (want), __FILE__, __LINE__)

static void
check_bad_config(const char *text, size_t want_line, const char *file, int line)
{
	pgn_status st;
	size_t at_line = 0;
	char *url = origin_of(text, &st, &at_line);

	h_check_int(st, PGN_EINVAL, file, line, text, "PGN_EINVAL");
	h_check_int((long long)at_line, (long long)want_line, file, line,
	    "line", "want_line");
	h_check_str(url, NULL, file, line, "url", "NULL");
	free(url);
}

#define CHECK_BAD_CONFIG(text, line)                                           \
	check_bad_config((text), (line), __FILE__, __LINE__)

static void
test_config_gives_the_first_url_of_remote_origin(void)
{
	char text[1024];

	snprintf(text, sizeof(text), origin_fmt, "git@h:o/r.git");
	CHECK_ORIGIN(text, "git@h:o/r.git");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = first\n\turl = second\n",
	    "first");
	CHECK_ORIGIN("[remote \"origin\"]\n\tfetch = x\n[remote \"up\"]\n"
	             "\turl = up\n[remote \"origin\"]\n\turl = later\n",
	    "later");
	CHECK_ORIGIN("[remote \"upstream\"]\n\turl = up\n", NULL);
	CHECK_ORIGIN("[remote \"origin\"]\n\tpushurl = p\n", NULL);
	CHECK_ORIGIN("", NULL);
	CHECK_ORIGIN("[core]\n\tbare\n", NULL);
	/* The url of another section is not the remote's. */
	CHECK_ORIGIN("[branch \"origin\"]\n\turl = b\n", NULL);
	CHECK_ORIGIN("[remote \"origin\"]\n[core]\n\turl = c\n", NULL);
}

static void
test_config_names_fold_case_as_git_does(void)
{
	CHECK_ORIGIN("[REMOTE \"origin\"]\n\tURL = a\n", "a");
	CHECK_ORIGIN("[Remote \"origin\"]\n\tUrl = a\n", "a");
	/* A quoted subsection keeps its case; the old form folds it. */
	CHECK_ORIGIN("[remote \"Origin\"]\n\turl = a\n", NULL);
	CHECK_ORIGIN("[remote.origin]\n\turl = a\n", "a");
	CHECK_ORIGIN("[remote.Origin]\n\turl = a\n", "a");
	CHECK_ORIGIN("[remote \"ori\\gin\"]\n\turl = a\n", "a");
	CHECK_ORIGIN("[remote \"originx\"]\n\turl = a\n", NULL);
	CHECK_ORIGIN("[remote \"origin\"]\n\turlx = a\n\turls = b\n", NULL);
}

static void
test_config_values_follow_gits_syntax(void)
{
	CHECK_ORIGIN("[remote \"origin\"]\n  url   =   https://h/o/r.git   \n",
	    "https://h/o/r.git");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = https://h/o/r # a comment\n",
	    "https://h/o/r");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = https://h/o/r;comment\n",
	    "https://h/o/r");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = \"https://h/o/r#x;y\"\n",
	    "https://h/o/r#x;y");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = a\" b \"c\n", "a b c");
	/* Each inner blank is one space (git's parse_value). */
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = a \t  b\n", "a    b");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = a\\\"b\\\\c\n", "a\"b\\c");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = https://h/o/\\\nr.git\n",
	    "https://h/o/r.git");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl=x\n", "x");
	CHECK_ORIGIN("[remote \"origin\"] url = same-line\n", "same-line");
	CHECK_ORIGIN("\xef\xbb\xbf[remote \"origin\"]\n\turl = bom\n", "bom");
	CHECK_ORIGIN("[remote \"origin\"]\r\n\turl = crlf\r\n", "crlf");
	CHECK_ORIGIN("# a comment\n; another\n[remote \"origin\"] # c\n"
	             "\turl = c\n",
	    "c");
	CHECK_ORIGIN("[remote \"origin\"]\n\turl = no-newline", "no-newline");
	/* An empty value is a url, which the key then refuses. */
	CHECK_ORIGIN("[remote \"origin\"]\n\turl =\n", "");
}

static void
test_config_git_would_refuse_is_refused_with_its_line(void)
{
	CHECK_BAD_CONFIG("[remote \"origin\"]\n\turl = \"open\n", 2);
	CHECK_BAD_CONFIG("[core]\n\tx = \\q\n", 2);
	CHECK_BAD_CONFIG("[core]\n= nothing\n", 2);
	CHECK_BAD_CONFIG("[remote \"origin\"\n\turl = a\n", 1);
	CHECK_BAD_CONFIG("[remote origin]\n\turl = a\n", 1);
	CHECK_BAD_CONFIG("[]\n", 1);
	CHECK_BAD_CONFIG("[remote \"ori\ngin\"]\n", 1);
	CHECK_BAD_CONFIG("[core]\n\t1x = a\n", 2);
	CHECK_BAD_CONFIG("[core]\n\tx y = a\n", 2);
	/* A url needs a value: git says "missing value". */
	CHECK_BAD_CONFIG("[remote \"origin\"]\n\n\turl\n", 3);
	CHECK_BAD_CONFIG("[core]\n\tx = a\\", 2);
	/* A NUL byte anywhere. */
	{
		static const char nul[] = "[remote \"origin\"]\n\turl = a\0b\n";
		char *url = NULL;
		size_t line = 0;

		CHECK_INT(pgn_gitconfig_origin(nul, sizeof(nul) - 1, &url,
		              &line),
		    PGN_EINVAL);
		CHECK_INT(line, 2);
		CHECK(url == NULL);
		CHECK_INT(pgn_gitconfig_origin("\0", 1, &url, &line),
		    PGN_EINVAL);
	}
}

static void
test_config_url_bound_is_max_remote_url(void)
{
	static const char head[] = "[remote \"origin\"]\n\turl = ";
	char text[sizeof(head) + PGN_MAX_REMOTE_URL + 8];
	char *url = NULL;
	size_t n = sizeof(head) - 1, line = 0;

	memcpy(text, head, n);
	memset(text + n, 'u', PGN_MAX_REMOTE_URL);
	memcpy(text + n + PGN_MAX_REMOTE_URL, "\n", 2);
	CHECK_INT(pgn_gitconfig_origin(text, strlen(text), &url, &line),
	    PGN_OK);
	CHECK(url != NULL && strlen(url) == PGN_MAX_REMOTE_URL);
	free(url);
	url = NULL;
	memcpy(text + n + PGN_MAX_REMOTE_URL, "u\n", 3);
	CHECK_INT(pgn_gitconfig_origin(text, strlen(text), &url, &line),
	    PGN_ETOOBIG);
	CHECK_INT(line, 2);
	CHECK(url == NULL);
	/* Another remote's long url is no concern of the origin's. */
	memcpy(text, "[remote \"upstrm\"]", 17);
	CHECK_INT(pgn_gitconfig_origin(text, strlen(text), &url, &line),
	    PGN_OK);
	CHECK(url == NULL);
}

/* pgn_scope_key of h_tmp/rel ("" for the global scope). */
static void
scope_key(const char *rel, char **key, char **why)
{
	char root[PATH_MAX];
	struct pgn_err warn;

	if (rel[0] != '\0')
		at(root, sizeof(root), rel);
	else
		root[0] = '\0';
	*key = NULL;
	*why = NULL;
	alarm(KEY_ALARM_S);
	CHECK_INT(pgn_scope_key(root, key, &warn), PGN_OK);
	alarm(0);
	if (warn.msg[0] != '\0')
		*why = strdup(warn.msg);
}

/* The key of h_tmp/rel is 'want' (h_tmp/want when want_root) and no why. */
static void
check_scope_key(const char *rel, const char *want, const char *file, int line)
{
	char *key, *why;

	scope_key(rel, &key, &why);
	h_check_str(key, want, file, line, rel, want);
	h_check_str(why, NULL, file, line, "why", "NULL");
	free(key);
	free(why);
}

#define CHECK_SCOPE_KEY(rel, want)                                             \
	check_scope_key((rel), (want), __FILE__, __LINE__)

/* The key of h_tmp/rel is its root, and why mentions 'reason'. */
static void
check_root_key(const char *rel, const char *reason, const char *file, int line)
{
	char root[PATH_MAX];
	char *key, *why;

	at(root, sizeof(root), rel);
	scope_key(rel, &key, &why);
	h_check_str(key, root, file, line, rel, "its root");
	if (reason != NULL) {
		h_check_contains(why, reason, file, line, "why", reason);
		h_check_contains(why, "the scope key is the root path", file,
		    line, "why", "the fallback");
		h_check(why != NULL && strchr(why, '\n') == NULL, file, line,
		    "why is one line");
	} else {
		h_check_str(why, NULL, file, line, "why", "NULL");
	}
	free(key);
	free(why);
}

#define CHECK_ROOT_KEY(rel, reason)                                            \
	check_root_key((rel), (reason), __FILE__, __LINE__)

static void
test_two_checkouts_of_one_repository_have_one_key(void)
{
	char text[1024];

	snprintf(text, sizeof(text), origin_fmt, "git@github.com:team/app.git");
	repo("laptop/src/app", text);
	snprintf(text, sizeof(text), origin_fmt,
	    "https://ci-bot@github.com/team/app");
	repo("vm/home/me/work/app-checkout", text);
	CHECK_SCOPE_KEY("laptop/src/app", "github.com/team/app");
	CHECK_SCOPE_KEY("vm/home/me/work/app-checkout", "github.com/team/app");
}

static void
test_without_an_origin_the_key_is_the_root(void)
{
	repo("plain", "[core]\n\tbare = false\n");
	CHECK_ROOT_KEY("plain", NULL);
	repo("other", "[remote \"upstream\"]\n\turl = git@h:o/r.git\n");
	CHECK_ROOT_KEY("other", NULL);
	/* A repository with no config file at all. */
	mkdirs("bare-dotgit/.git");
	CHECK_ROOT_KEY("bare-dotgit", NULL);
	/* A directory with no .git (the root of a vanished repository). */
	mkdirs("gone");
	CHECK_ROOT_KEY("gone", NULL);
	CHECK_SCOPE_KEY("", "");
}

static void
test_a_key_given_back_stays_the_key(void)
{
	struct pgn_err why;
	char *key = NULL;

	/* A bound session's scope read back from the store is a key. */
	repo("github.com/team/app", "[remote \"origin\"]\n\turl = h:x/y\n");
	REQUIRE(chdir(h_tmp) == 0);
	CHECK_INT(pgn_scope_key("github.com/team/app", &key, &why), PGN_OK);
	CHECK_STR(key, "github.com/team/app");
	CHECK_STR(why.msg, "");
	free(key);
	CHECK_INT(pgn_scope_key("relative/path", &key, &why), PGN_OK);
	CHECK_STR(key, "relative/path");
	CHECK_STR(why.msg, "");
	free(key);
	REQUIRE(chdir("/") == 0);
}

static void
test_an_unusable_origin_keys_the_root_and_says_why(void)
{
	char text[1024];

	snprintf(text, sizeof(text), origin_fmt, "/srv/git/app.git");
	repo("local", text);
	CHECK_ROOT_KEY("local", "is a local path");
	snprintf(text, sizeof(text), origin_fmt,
	    "https://me:hunter2@/team/app");
	repo("nohost", text);
	CHECK_ROOT_KEY("nohost", "names no host");
	{
		char *key, *why;

		scope_key("nohost", &key, &why);
		CHECK(why != NULL && strstr(why, "hunter2") == NULL);
		CHECK_CONTAINS(why, "nohost/.git/config");
		free(key);
		free(why);
	}
	repo("broken", "[remote \"origin\"]\n\turl = \"git@h:o/r.git\n");
	CHECK_ROOT_KEY("broken", "line 2 is not valid git config");
}

static void
test_config_size_bound_is_max_gitconfig(void)
{
	static const char tail[] = "[remote \"origin\"]\n\turl = git@h:o/r\n";
	size_t n = PGN_MAX_GITCONFIG, pad = n - (sizeof(tail) - 1);
	char *text = malloc(n + 2);
	char path[PATH_MAX];

	REQUIRE(text != NULL);
	/* A comment line padding the file to exactly the bound. */
	text[0] = '#';
	memset(text + 1, 'x', pad - 2);
	text[pad - 1] = '\n';
	memcpy(text + pad, tail, sizeof(tail));
	mkdirs("big/.git");
	at(path, sizeof(path), "big/.git/config");
	h_write_file(path, text, n);
	CHECK_SCOPE_KEY("big", "h/o/r");
	/* One byte more: not read at all. */
	memmove(text + 1, text, n);
	h_write_file(path, text, n + 1);
	CHECK_ROOT_KEY("big", "is over 262144 bytes");
	free(text);
}

static void
test_a_symlinked_config_is_followed_and_a_fifo_refused(void)
{
	char text[1024], target[PATH_MAX], link[PATH_MAX];

	snprintf(text, sizeof(text), origin_fmt, "git@h:team/shared.git");
	put("shared-config", text);
	mkdirs("linked/.git");
	at(target, sizeof(target), "shared-config");
	at(link, sizeof(link), "linked/.git/config");
	REQUIRE(symlink(target, link) == 0);
	CHECK_SCOPE_KEY("linked", "h/team/shared");
	/* A dangling link: no config. */
	mkdirs("dangling/.git");
	at(link, sizeof(link), "dangling/.git/config");
	REQUIRE(symlink("/nonexistent/pigeon-config", link) == 0);
	CHECK_ROOT_KEY("dangling", NULL);
	/* A FIFO, directly or through a link: refused without waiting. */
	mkdirs("fifo/.git");
	at(target, sizeof(target), "fifo/.git/config");
	REQUIRE(mkfifo(target, 0600) == 0);
	CHECK_ROOT_KEY("fifo", "is not a regular file");
	mkdirs("fifolink/.git");
	at(link, sizeof(link), "fifolink/.git/config");
	REQUIRE(symlink(target, link) == 0);
	CHECK_ROOT_KEY("fifolink", "is not a regular file");
	/* A directory, and /dev/zero. */
	mkdirs("dirconf/.git/config");
	CHECK_ROOT_KEY("dirconf", "is not a regular file");
	mkdirs("zero/.git");
	at(link, sizeof(link), "zero/.git/config");
	REQUIRE(symlink("/dev/zero", link) == 0);
	CHECK_ROOT_KEY("zero", "is not a regular file");
}

static void
test_submodules_separate_git_dirs_and_bare_repositories(void)
{
	char text[1024];

	/* A submodule: .git is a file naming ../.git/modules/sub. */
	repo("super", "[remote \"origin\"]\n\turl = git@h:o/super.git\n");
	mkdirs("super/.git/modules/sub");
	snprintf(text, sizeof(text), origin_fmt, "git@h:o/sub.git");
	put("super/.git/modules/sub/config", text);
	mkdirs("super/sub");
	put("super/sub/.git", "gitdir: ../.git/modules/sub\n");
	CHECK_SCOPE_KEY("super", "h/o/super");
	CHECK_SCOPE_KEY("super/sub", "h/o/sub");
	/* A .git file whose git dir has a commondir: the common config. */
	mkdirs("common/.git/worktrees/w");
	put("common/.git/config", "[remote \"origin\"]\n\turl = h:o/common\n");
	put("common/.git/worktrees/w/commondir", "../..\n");
	mkdirs("w");
	put("w/.git", "gitdir: ../common/.git/worktrees/w");
	CHECK_SCOPE_KEY("w", "h/o/common");
	/* A .git file that names nothing: no config. */
	mkdirs("lost");
	put("lost/.git", "gitdir: /nonexistent/pigeon\n");
	CHECK_ROOT_KEY("lost", NULL);
	put("lost/.git", "not a gitdir line\n");
	CHECK_ROOT_KEY("lost", NULL);
	/* A bare repository (the scope of its linked worktrees). */
	mkdirs("bare.git");
	put("bare.git/HEAD", "ref: refs/heads/main\n");
	put("bare.git/config",
	    "[core]\n\tbare = true\n[remote \"origin\"]\n"
	    "\turl = https://h/o/bare.git\n");
	CHECK_SCOPE_KEY("bare.git", "h/o/bare");
	/* config without HEAD is no bare repository. */
	mkdirs("nohead");
	put("nohead/config", "[remote \"origin\"]\n\turl = https://h/o/x\n");
	CHECK_ROOT_KEY("nohead", NULL);
}

static void
on_alarm(int sig)
{
	(void)sig;
	printf("a scope key read blocked for %d s\n", KEY_ALARM_S);
	fflush(stdout);
	_exit(1);
}

static const struct h_test tests[] = {
    H_TEST(test_every_form_of_one_remote_is_one_key),
    H_TEST(test_keys_keep_what_tells_repositories_apart),
    H_TEST(test_urls_without_a_host_are_refused_with_a_reason),
    H_TEST(test_a_refusal_never_quotes_the_url),
    H_TEST(test_url_length_bound_is_max_remote_url),
    H_TEST(test_config_gives_the_first_url_of_remote_origin),
    H_TEST(test_config_names_fold_case_as_git_does),
    H_TEST(test_config_values_follow_gits_syntax),
    H_TEST(test_config_git_would_refuse_is_refused_with_its_line),
    H_TEST(test_config_url_bound_is_max_remote_url),
    H_TEST(test_two_checkouts_of_one_repository_have_one_key),
    H_TEST(test_without_an_origin_the_key_is_the_root),
    H_TEST(test_a_key_given_back_stays_the_key),
    H_TEST(test_an_unusable_origin_keys_the_root_and_says_why),
    H_TEST(test_config_size_bound_is_max_gitconfig),
    H_TEST(test_a_symlinked_config_is_followed_and_a_fifo_refused),
    H_TEST(test_submodules_separate_git_dirs_and_bare_repositories),
};

int
main(void)
{
	signal(SIGALRM, on_alarm);
	return h_run(tests, H_COUNT(tests));
}
