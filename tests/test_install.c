/*
 * Unit tests of install.c: recognising Pigeon's commands, the install and
 * uninstall merges against golden files in fixtures/install/, and
 * pgn_install_apply on real files under a temporary HOME.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "jsonedit.h"
#include "tomledit.h"
#include "pigeon/setup.h"

/* The hosts whose config takes hook commands (the JSON merges). */
#define EACH_COMMAND_HOST(h)                                                   \
	for ((h) = 0; (h) < PGN_NHOSTS; (h)++)                                 \
		if (pgn_host_get((pgn_host)(h))->mechanism == PGN_MECH_COMMAND)

#define HOOK       "/opt/pigeon/bin/pigeon-hook"
#define OTHER_HOOK "/usr/local/lib/pigeon/pigeon-hook"
/* The guarded command of a host that runs hooks through /bin/sh (0225). */
#define GUARDED(hook, rest) "[ -x " hook " ] || exit 0; exec " hook " " rest
/* The same where the event's neutral answer is not empty (0258). */
#define GUARDED_SAYING(hook, answer, rest)                                     \
	"[ -x " hook " ] || { echo '" answer "'; exit 0; }; exec " hook " " rest

/* How often a command names its hook: twice in the guarded form. */
static size_t
per_command(pgn_host h)
{
	return pgn_host_get(h)->shell_guard ? 2 : 1;
}

static const char *const env_vars[] = {"HOME", "CLAUDE_CONFIG_DIR",
    "CODEX_HOME", "COPILOT_HOME", "PIGEON_HOME"};
static char *saved_env[5];

/* ---- helpers -------------------------------------------------------- */

static void
env_save(void)
{
	const char *v;
	size_t i;

	for (i = 0; i < H_COUNT(env_vars); i++) {
		v = getenv(env_vars[i]);
		saved_env[i] = v != NULL ? strdup(v) : NULL;
	}
}

/* Put the environment back as the test found it. */
static void
env_restore(void)
{
	size_t i;

	for (i = 0; i < H_COUNT(env_vars); i++) {
		if (saved_env[i] != NULL)
			setenv(env_vars[i], saved_env[i], 1);
		else
			unsetenv(env_vars[i]);
	}
}

/* 'dir' and its missing parents (Copilot's config is two deep). */
static void
ensure_dir(const char *dir)
{
	char parent[PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (slash != NULL && slash != parent && access(dir, F_OK) != 0) {
		*slash = '\0';
		if (access(parent, F_OK) != 0)
			ensure_dir(parent);
	}
	REQUIRE(mkdir(dir, 0755) == 0 || errno == EEXIST);
}

/* HOME = h_tmp/home (created), no host overrides. */
static void
use_home(char *home, size_t len)
{
	h_join(home, len, h_tmp, "home");
	ensure_dir(home);
	REQUIRE(setenv("HOME", home, 1) == 0);
	unsetenv("CLAUDE_CONFIG_DIR");
	unsetenv("CODEX_HOME");
	unsetenv("COPILOT_HOME");
}

/* The user config of host 'h' under $HOME. */
static void
user_config(pgn_host h, char *out, size_t len)
{
	h_join(out, len, getenv("HOME"), pgn_host_get(h)->user_path);
}

/* 'path' with 'suffix' appended, into 'out'. */
static void
suffixed(const char *path, const char *suffix, char *out, size_t len)
{
	size_t n = strlen(path), k = strlen(suffix);

	REQUIRE(n + k < len);
	memcpy(out, path, n);
	memcpy(out + n, suffix, k + 1);
}

/* Pigeon's backup of 'path'. */
static void
bak_of(const char *path, char *out, size_t len)
{
	suffixed(path, ".pigeon.bak", out, len);
}

/* A file of fixtures/install/; a missing one stops the test. */
static char *
fixture(const char *name, size_t *len)
{
	char dir[PATH_MAX], path[PATH_MAX];
	const char *base, *slash;
	char *data;

	base = getenv("PGN_TEST_FIXTURES");
	if (base == NULL || *base == '\0') {
		/* Run by hand: fixtures sit next to this file. */
		slash = strrchr(__FILE__, '/');
		REQUIRE(slash != NULL);
		REQUIRE(
		    snprintf(dir, sizeof(dir), "%.*s/fixtures",
		        (int)(slash - __FILE__), __FILE__) < (int)sizeof(dir));
		base = dir;
	}
	REQUIRE(snprintf(path, sizeof(path), "%s/install/%s", base, name) <
	    (int)sizeof(path));
	data = h_read_file(path, len);
	if (data == NULL)
		printf("fixture %s: %s\n", path, strerror(errno));
	REQUIRE(data != NULL);
	return data;
}

static char *
host_fixture(pgn_host h, const char *suffix, size_t *len)
{
	char name[128];

	snprintf(name, sizeof(name), "%s-%s", pgn_host_get(h)->name, suffix);
	return fixture(name, len);
}

static size_t
count(const char *hay, const char *needle)
{
	size_t n = 0;
	const char *p;

	for (p = hay; p != NULL && (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

/*
 * 'out' holds exactly one Pigeon command, "HOOK HOST EVENT", for each of
 * host h's events (the host table's), and no other Pigeon command.
 */
static void
check_one_entry_per_event(pgn_host h, const char *out, const char *hook)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	char want[PATH_MAX + 64];
	int e;

	for (e = 0; e < PGN_NEVENTS; e++) {
		if (hi->events[e] == NULL)
			continue;
		snprintf(want, sizeof(want), "%s %s %s\"", hook, hi->name,
		    hi->events[e]);
		if (!CHECK_INT(count(out, want), 1))
			printf("  for %s\n", want);
	}
	CHECK_INT(count(out, "pigeon-hook"),
	    pgn_host_nevents(h) * per_command(h));
}

/* The number of lines of 'text' (a last line without '\n' counts). */
static size_t
lines_of(const char *text)
{
	size_t n = count(text, "\n");

	return n + (*text != '\0' && text[strlen(text) - 1] != '\n');
}

static int
file_is(const char *path, const char *data, size_t len)
{
	char *got;
	size_t n;
	int same;

	got = h_read_file(path, &n);
	same = got != NULL && n == len && memcmp(got, data, len) == 0;
	free(got);
	return same;
}

static int
absent(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) != 0 && errno == ENOENT;
}

static pgn_status
apply(pgn_host h, const char *project, const char *hook, int remove,
    int dry_run, struct pgn_install_result *res, struct pgn_err *err)
{
	struct pgn_install req = {0};

	req.host = h;
	req.project = project;
	req.hook = hook;
	req.remove = remove;
	req.dry_run = dry_run;
	return pgn_install_apply(&req, res, err);
}

/* Install then uninstall through files; each must succeed. */
static void
install_ok(pgn_host h, const char *project, const char *hook)
{
	struct pgn_install_result res;
	struct pgn_err err;

	CHECK_INT(apply(h, project, hook, 0, 0, &res, &err), PGN_OK);
	CHECK_STR(err.msg, "");
	pgn_install_result_release(&res);
}

static void
uninstall_ok(pgn_host h, const char *project)
{
	struct pgn_install_result res;
	struct pgn_err err;

	CHECK_INT(apply(h, project, NULL, 1, 0, &res, &err), PGN_OK);
	CHECK_STR(err.msg, "");
	pgn_install_result_release(&res);
}

static char *
merge_in(pgn_host h, const char *in, const char *hook, int *changed)
{
	struct pgn_err err;
	char *out = NULL;
	pgn_status st;

	st = pgn_install_merge(h, in, in != NULL ? strlen(in) : 0, hook, &out,
	    changed, &err);
	if (!CHECK_INT(st, PGN_OK))
		printf("  %s\n", err.msg);
	return out;
}

static char *
merge_out(pgn_host h, const char *in, int *changed)
{
	struct pgn_err err;
	char *out = NULL;
	pgn_status st;

	st = pgn_uninstall_merge(h, in, in != NULL ? strlen(in) : 0, &out,
	    changed, &err);
	if (!CHECK_INT(st, PGN_OK))
		printf("  %s\n", err.msg);
	return out;
}

/* ---- recognising Pigeon's commands ---------------------------------- */

static void
test_command_is_pigeon_by_first_word_basename(void)
{
	CHECK(
	    pgn_command_is_pigeon("/usr/bin/pigeon-hook claude SessionStart"));
	CHECK(pgn_command_is_pigeon("pigeon-hook"));
	CHECK(pgn_command_is_pigeon("pigeon-hook cursor sessionStart"));
	CHECK(pgn_command_is_pigeon("  \t/opt/p/pigeon-hook x"));
	CHECK(pgn_command_is_pigeon(
	    "'/opt/my dir/pigeon-hook' gemini BeforeAgent"));
	CHECK(pgn_command_is_pigeon("\"/opt/my dir/pigeon-hook\" codex x"));
	CHECK(pgn_command_is_pigeon("/opt/my\\ dir/pigeon-hook codex x"));
	CHECK(pgn_command_is_pigeon("'/it'\\''s/pigeon-hook' claude x"));
	CHECK(pgn_command_is_pigeon("\"$CLAUDE_PROJECT_DIR\"/bin/pigeon-hook"
	                            " claude SessionStart"));
	CHECK(pgn_command_is_pigeon("/a/pigeon-hook;echo x"));
	CHECK(pgn_command_is_pigeon("pig\"eon\"-hook"));
}

static void
test_command_is_not_pigeon_for_others(void)
{
	CHECK(!pgn_command_is_pigeon(NULL));
	CHECK(!pgn_command_is_pigeon(""));
	CHECK(!pgn_command_is_pigeon("   "));
	CHECK(!pgn_command_is_pigeon("/usr/bin/pigeon-hooks claude x"));
	CHECK(!pgn_command_is_pigeon("/usr/bin/xpigeon-hook claude x"));
	CHECK(!pgn_command_is_pigeon("pigeon claude x"));
	CHECK(!pgn_command_is_pigeon("sh -c pigeon-hook"));
	CHECK(!pgn_command_is_pigeon("env pigeon-hook claude x"));
	CHECK(!pgn_command_is_pigeon("/usr/bin/pigeon-hook/ x"));
	CHECK(!pgn_command_is_pigeon("'' pigeon-hook"));
	CHECK(!pgn_command_is_pigeon("; pigeon-hook"));
	CHECK(!pgn_command_is_pigeon("PIGEON_AGENT=x pigeon-hook"));
	/* Unbalanced quoting cannot be parsed: never Pigeon's. */
	CHECK(!pgn_command_is_pigeon("'/opt/my dir/pigeon-hook claude x"));
	CHECK(!pgn_command_is_pigeon("\"/opt/pigeon-hook claude x"));
	CHECK(!pgn_command_is_pigeon("/opt/pigeon-hook claude 'x"));
	CHECK(!pgn_command_is_pigeon("/opt/pigeon-hook claude \\"));
}

/*
 * The guarded form (decision 0225): recognised with its program, the
 * same path twice; anything else around "[ -x" is not Pigeon's.
 */
static void
test_guarded_command_is_pigeon_and_names_its_program(void)
{
	static const char *const yes[] = {
	    GUARDED("/usr/bin/pigeon-hook", "claude Stop"),
	    GUARDED("/usr/bin/pigeon-hook", "claude Stop --rewake"),
	    ("[ -x '/opt/my dir/pigeon-hook' ] || exit 0; "
	     "exec '/opt/my dir/pigeon-hook' codex Stop"),
	    "  [  -x /a/pigeon-hook ]||exit 0 ;exec /a/pigeon-hook gemini x",
	    GUARDED_SAYING("/a/pigeon-hook", "{}", "cursor stop"),
	    "[ -x /a/pigeon-hook ]||{ echo x;exit 0;};exec /a/pigeon-hook cursor x",
	};
	static const char *const no[] = {
	    "[ -x /a/pigeon-hook ] || exit 0; exec /b/pigeon-hook claude x",
	    "[ -x /a/pigeon-hook ] || exit 1; exec /a/pigeon-hook claude x",
	    "[ -x /a/pigeon-hook ] && exit 0; exec /a/pigeon-hook claude x",
	    "[ -x /a/pigeon-hook ] || exit 0; /a/pigeon-hook claude x",
	    "[ -f /a/pigeon-hook ] || exit 0; exec /a/pigeon-hook claude x",
	    "[ -x /a/other ] || exit 0; exec /a/other claude x",
	    "[ -x /a/pigeon-hook ] || exit 0; exec /a/pigeon-hook 'x",
	    "[ -x /a/pigeon-hook ] || exit 0",
	    "[ -x",
	    "[ -x /a/pigeon-hook ] || { echo x; exit 1; }; exec /a/pigeon-hook cursor x",
	    "[ -x /a/pigeon-hook ] || { echo x; exit 0; } exec /a/pigeon-hook cursor x",
	    "[ -x /a/pigeon-hook ] || { echo x y; exit 0; }; exec /a/pigeon-hook cursor x",
	    "[ -x /a/pigeon-hook ] || { echo x; }; exec /a/pigeon-hook cursor x",
	    "[ -x /a/pigeon-hook ] || { echo x; exit 0; }; exec /b/pigeon-hook cursor x",
	};
	char *hook;
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!CHECK(pgn_command_is_pigeon(yes[i])) ||
		    !CHECK(pgn_command_guarded(yes[i])))
			printf("  for %s\n", yes[i]);
	}
	hook = pgn_command_hook(yes[2]);
	CHECK_STR(hook, "/opt/my dir/pigeon-hook");
	free(hook);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (!CHECK(!pgn_command_is_pigeon(no[i])) ||
		    !CHECK(!pgn_command_guarded(no[i])))
			printf("  for %s\n", no[i]);
	}
	/* The bare form is Pigeon's, not guarded. */
	CHECK(!pgn_command_guarded("/usr/bin/pigeon-hook claude Stop"));
	CHECK(!pgn_command_guarded(NULL));
}

/*
 * Install writes the guarded form for every host whose hooks are
 * commands run through a shell: measured for four, documented for
 * Cursor (decision 0243); a plugin host writes no command at all.
 */
static void
test_install_guards_every_command_host(void)
{
	char *out;
	int changed, h;

	out = merge_in(PGN_HOST_CLAUDE, NULL, "/opt/my dir/pigeon-hook",
	    &changed);
	CHECK_CONTAINS(out,
	    "\"[ -x '/opt/my dir/pigeon-hook' ] || exit 0; exec "
	    "'/opt/my dir/pigeon-hook' claude SessionStart\"");
	free(out);
	/* Cursor's: a gone binary still answers its JSON (0258). */
	out = merge_in(PGN_HOST_CURSOR, NULL, HOOK, &changed);
	CHECK_CONTAINS(out,
	    "\"" GUARDED_SAYING(HOOK, "{}", "cursor sessionStart") "\"");
	CHECK_CONTAINS(out,
	    "\"" GUARDED_SAYING(HOOK, "{\\\"continue\\\":true}",
	        "cursor beforeSubmitPrompt") "\"");
	CHECK_CONTAINS(out,
	    "\"" GUARDED_SAYING(HOOK, "{\\\"permission\\\":\\\"allow\\\"}",
	        "cursor preToolUse") "\"");
	free(out);
	for (h = 0; h < PGN_NHOSTS; h++)
		if (pgn_host_get((pgn_host)h)->mechanism == PGN_MECH_COMMAND &&
		    !CHECK(pgn_host_get((pgn_host)h)->shell_guard))
			printf("  for %s\n", pgn_host_get((pgn_host)h)->name);
}

/* ---- install merge -------------------------------------------------- */

static void
test_install_into_missing_file_matches_golden(void)
{
	char *want, *out;
	size_t n;
	int h, changed;

	EACH_COMMAND_HOST(h)
	{
		want = host_fixture((pgn_host)h, "new.json", &n);
		out = merge_in((pgn_host)h, NULL, HOOK, &changed);
		CHECK_STR(out, want);
		CHECK_INT(changed, 1);
		free(out);
		free(want);
	}
}

static void
test_install_into_empty_or_blank_file_creates_the_object(void)
{
	static const char *const blanks[] = {"", " \n\t\r\n  "};
	char *want, *out;
	size_t n, i;
	int h, changed;

	EACH_COMMAND_HOST(h)
	{
		want = host_fixture((pgn_host)h, "new.json", &n);
		for (i = 0; i < H_COUNT(blanks); i++) {
			out = merge_in((pgn_host)h, blanks[i], HOOK, &changed);
			CHECK_STR(out, want);
			CHECK_INT(changed, 1);
			free(out);
		}
		free(want);
	}
}

static void
test_install_keeps_foreign_entries_and_unknown_keys_in_order(void)
{
	char *in, *want, *out;
	size_t n;
	int h, changed;

	EACH_COMMAND_HOST(h)
	{
		in = host_fixture((pgn_host)h, "foreign.in.json", &n);
		want = host_fixture((pgn_host)h, "foreign.out.json", &n);
		out = merge_in((pgn_host)h, in, HOOK, &changed);
		CHECK_STR(out, want);
		CHECK_INT(changed, 1);
		free(out);
		free(want);
		free(in);
	}
}

static void
test_install_keeps_an_existing_cursor_version(void)
{
	char *out;
	int changed;

	out = merge_in(PGN_HOST_CURSOR, "{\"version\":2,\"hooks\":{}}", HOOK,
	    &changed);
	CHECK_CONTAINS(out, "\"version\":2");
	CHECK_INT(count(out, "\"version\""), 1);
	free(out);
	/* An existing object without a version gets none added. */
	out = merge_in(PGN_HOST_CURSOR, "{}", HOOK, &changed);
	CHECK_INT(count(out, "\"version\""), 0);
	free(out);
}

static void
test_install_twice_changes_nothing(void)
{
	char *in, *once, *twice;
	size_t n;
	int h, changed;

	EACH_COMMAND_HOST(h)
	{
		in = host_fixture((pgn_host)h, "odd.json", &n);
		once = merge_in((pgn_host)h, in, HOOK, &changed);
		CHECK_INT(changed, 1);
		twice = merge_in((pgn_host)h, once, HOOK, &changed);
		CHECK_INT(changed, 0);
		CHECK_STR(twice, once);
		free(twice);
		free(once);
		free(in);
	}
}

static void
test_second_install_keeps_bytes_even_if_reformatted(void)
{
	static const char in[] =
	    "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\","
	    "\"command\":\"" GUARDED(HOOK,
	        "claude SessionStart") "\","
	                               "\"timeout\":5}]}],"
	                               "\"UserPromptSubmit\":[{\"hooks\":[{\"type\":\"command\","
	                               "\"command\":\"" GUARDED(HOOK,
	                                   "claude UserPromptSubmit") "\","
	                                                              "\"timeout\":5}]}],"
	                                                              "\"PostToolUse\":[{\"hooks\":[{\"type\":\"command\","
	                                                              "\"command\":\"" GUARDED(
	                                                                  HOOK,
	                                                                  "claude PostToolUse") "\","
	                                                                                        "\"timeout\":5}]}],"
	                                                                                        "\"Stop\":[{\"hooks\":[{\"type\":\"command\","
	                                                                                        "\"command\":\"" GUARDED(
	                                                                                            HOOK,
	                                                                                            "claude Stop") "\","
	                                                                                                           "\"timeout\":5}]}],"
	                                                                                                           "\"PreToolUse\":[{\"hooks\":[{\"type\":\"command\","
	                                                                                                           "\"command\":\"" GUARDED(
	                                                                                                               HOOK,
	                                                                                                               "claude PreToolUse") "\","
	                                                                                                                                    "\"timeout\":5}]}]}}";
	cJSON *root;
	char *fresh, *compact, *out;
	int changed, h;

	out = merge_in(PGN_HOST_CLAUDE, in, HOOK, &changed);
	CHECK_INT(changed, 0);
	CHECK_STR(out, in);
	free(out);
	/* Every host: its own four entries, laid out on one line. */
	EACH_COMMAND_HOST(h)
	{
		fresh = merge_in((pgn_host)h, NULL, HOOK, &changed);
		root = cJSON_Parse(fresh);
		REQUIRE(root != NULL);
		compact = cJSON_PrintUnformatted(root);
		REQUIRE(compact != NULL);
		CHECK(strcmp(compact, fresh) != 0);
		out = merge_in((pgn_host)h, compact, HOOK, &changed);
		CHECK_INT(changed, 0);
		CHECK_STR(out, compact);
		free(out);
		cJSON_free(compact);
		cJSON_Delete(root);
		free(fresh);
	}
}

/* Cursor's up-to-date entries, as install writes them. */
#define CUR_ENTRY(answer, ev)                                                  \
	"{\"command\":\"" GUARDED_SAYING(HOOK, answer,                         \
	    "cursor " ev) "\",\"timeout\":5}"
#define CUR_START  CUR_ENTRY("{}", "sessionStart")
#define CUR_PROMPT CUR_ENTRY("{\\\"continue\\\":true}", "beforeSubmitPrompt")
#define CUR_STOP   CUR_ENTRY("{}", "stop")
#define CUR_TOOL   CUR_ENTRY("{}", "postToolUse")
#define CUR_PRE    CUR_ENTRY("{\\\"permission\\\":\\\"allow\\\"}", "preToolUse")

static void
test_up_to_date_entry_keeps_its_place_after_a_reorder(void)
{
	static const char in[] =
	    "{\"version\":1,\"hooks\":{"
	    "\"sessionStart\":[" CUR_START ",{\"command\":\"b\"}],"
	    "\"beforeSubmitPrompt\":[" CUR_PROMPT "],"
	    "\"stop\":[" CUR_STOP ",{\"command\":\"c\",\"loop_limit\":3}],"
	    "\"postToolUse\":[{\"command\":\"a\"}," CUR_TOOL "],"
	    "\"preToolUse\":[" CUR_PRE "]}}";
	char *out;
	int changed;

	out = merge_in(PGN_HOST_CURSOR, in, HOOK, &changed);
	CHECK_INT(changed, 0);
	CHECK_STR(out, in);
	free(out);
}

static void
test_install_replaces_an_old_pigeon_entry(void)
{
	static const char in[] =
	    "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\","
	    "\"command\":\"/old/place/pigeon-hook claude SessionStart\"}]},"
	    "{\"hooks\":[{\"type\":\"command\",\"command\":\"mine\"}]}],"
	    "\"UserPromptSubmit\":[{\"hooks\":[{\"type\":\"command\","
	    "\"command\":\"'/old place/pigeon-hook' claude "
	    "UserPromptSubmit\"}]},{\"hooks\":[{\"type\":\"command\","
	    "\"command\":\"/old/place/pigeon-hook claude "
	    "UserPromptSubmit\"}]}],\"Stop\":[{\"hooks\":[{\"type\":"
	    "\"command\",\"command\":\"/old/place/pigeon-hook claude Stop\","
	    "\"timeout\":5}]}]}}";
	char *out;
	int changed;

	out = merge_in(PGN_HOST_CLAUDE, in, OTHER_HOOK, &changed);
	CHECK_INT(changed, 1);
	check_one_entry_per_event(PGN_HOST_CLAUDE, out, OTHER_HOOK);
	CHECK_INT(count(out, "old"), 0);
	CHECK_INT(count(out, "\"mine\""), 1);
	/* The foreign entry now comes before Pigeon's. */
	CHECK(out != NULL &&
	    strstr(out, "\"mine\"") <
	        strstr(out, OTHER_HOOK " claude SessionStart"));
	free(out);
}

static void
test_install_removes_pigeon_entries_from_other_events(void)
{
	static const char in[] =
	    "{\"hooks\":{\"Notification\":[{\"hooks\":[{\"type\":"
	    "\"command\",\"command\":\"/x/pigeon-hook claude "
	    "Notification\"}]}],"
	    "\"PreToolUse\":[{\"hooks\":[{\"type\":\"command\","
	    "\"command\":\"/x/pigeon-hook claude PreToolUse\"},"
	    "{\"type\":\"command\",\"command\":\"keep-me\"}]}]}}";
	cJSON *root, *hooks;
	char *out;
	int changed;

	out = merge_in(PGN_HOST_CLAUDE, in, HOOK, &changed);
	CHECK_INT(changed, 1);
	root = cJSON_Parse(out);
	hooks = cJSON_GetObjectItemCaseSensitive(root, "hooks");
	CHECK(cJSON_GetObjectItemCaseSensitive(hooks, "Notification") == NULL);
	CHECK(cJSON_GetObjectItemCaseSensitive(hooks, "PreToolUse") != NULL);
	CHECK_INT(count(out, "keep-me"), 1);
	check_one_entry_per_event(PGN_HOST_CLAUDE, out, HOOK);
	cJSON_Delete(root);
	free(out);
}

static void
test_install_writes_only_the_hosts_five_events(void)
{
	const struct pgn_host_info *hi;
	cJSON *root, *hooks, *ev, *cmd;
	char want[PATH_MAX + 64];
	int h, e, changed, n;
	char *out, *answer;
	pgn_status st;

	EACH_COMMAND_HOST(h)
	{
		hi = pgn_host_get((pgn_host)h);
		if (hi->mechanism != PGN_MECH_COMMAND)
			continue;
		/*
		 * Five, and no sixth: none of these has an idle event; each
		 * has its before-tool one (decision 0156).
		 */
		CHECK_INT(pgn_host_nevents((pgn_host)h), 5);
		CHECK(hi->events[PGN_EVENT_IDLE] == NULL);
		CHECK(hi->events[PGN_EVENT_BEFORE_TOOL] != NULL);
		out = merge_in((pgn_host)h, NULL, HOOK, &changed);
		root = cJSON_Parse(out);
		hooks = cJSON_GetObjectItemCaseSensitive(root, "hooks");
		/* The host's events, in the table's order, one entry each. */
		n = 0;
		e = -1;
		cJSON_ArrayForEach(ev, hooks)
		{
			n++;
			/* The next event the host has, in the table's order. */
			for (e++; e < PGN_NEVENTS && hi->events[e] == NULL; e++)
				;
			if (!CHECK(e < PGN_NEVENTS))
				break;
			CHECK_STR(ev->string, hi->events[e]);
			CHECK_INT(cJSON_GetArraySize(ev), 1);
			cmd = cJSON_GetArrayItem(ev, 0);
			if (hi->shape == PGN_SHAPE_NESTED)
				cmd = cJSON_GetArrayItem(
				    cJSON_GetObjectItemCaseSensitive(cmd,
				        "hooks"),
				    0);
			answer =
			    pgn_envelope((pgn_host)h, (pgn_event)e, NULL, &st);
			if (hi->shell_guard && answer != NULL)
				snprintf(want, sizeof(want),
				    "[ -x %s ] || { echo '%s'; exit 0; }; "
				    "exec %s %s %s",
				    HOOK, answer, HOOK, hi->name,
				    hi->events[e]);
			else if (hi->shell_guard)
				snprintf(want, sizeof(want),
				    "[ -x %s ] || exit 0; exec %s %s %s", HOOK,
				    HOOK, hi->name, hi->events[e]);
			else
				snprintf(want, sizeof(want), "%s %s %s", HOOK,
				    hi->name, hi->events[e]);
			CHECK_STR(cJSON_GetStringValue(
			              cJSON_GetObjectItemCaseSensitive(cmd,
			                  "command")),
			    want);
			free(answer);
		}
		CHECK_INT(n, pgn_host_nevents((pgn_host)h));
		check_one_entry_per_event((pgn_host)h, out, HOOK);
		CHECK_INT(cJSON_GetArraySize(root),
		    hi->shape == PGN_SHAPE_FLAT ? 2 : 1);
		cJSON_Delete(root);
		free(out);
	}
}

static void
test_hook_path_is_quoted_only_when_needed(void)
{
	char *out;
	int changed;

	out = merge_in(PGN_HOST_CURSOR, NULL, "/opt/my dir/it's/pigeon-hook",
	    &changed);
	CHECK_CONTAINS(out,
	    "exec '/opt/my dir/it'\\\\''s/pigeon-hook' cursor "
	    "sessionStart\"");
	free(out);
	out = merge_in(PGN_HOST_CURSOR, NULL, "/opt/a-b_c.d+1/pigeon-hook",
	    &changed);
	CHECK_CONTAINS(out,
	    "exec /opt/a-b_c.d+1/pigeon-hook cursor "
	    "sessionStart\"");
	free(out);
}

static void
test_install_refuses_a_hook_that_is_not_an_absolute_pigeon_hook(void)
{
	static const char *const bad[] = {"pigeon-hook", "bin/pigeon-hook",
	    "/bin/true", "", "/a/pigeon-hook\n"};
	struct pgn_err err;
	char *out = NULL;
	size_t i;
	int changed;

	for (i = 0; i < H_COUNT(bad); i++) {
		CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, NULL, 0, bad[i],
		              &out, &changed, &err),
		    PGN_EINVAL);
		CHECK(out == NULL);
		CHECK_CONTAINS(err.msg, "absolute path");
	}
	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, NULL, 0, NULL, &out,
	              &changed, &err),
	    PGN_EINVAL);
	CHECK_INT(pgn_install_merge(PGN_HOST_NONE, NULL, 0, HOOK, &out,
	              &changed, &err),
	    PGN_EINVAL);
}

/* ---- refusals ------------------------------------------------------- */

static void
test_invalid_json_is_refused_saying_where(void)
{
	static const char *const bad[] = {"{", "{\"hooks\":{}} x", "{\"a\":1,}",
	    "{\n\"a\": [1, 2\n,]\n}", "nul", "// c\n{}"};
	struct pgn_err err;
	char *out = NULL;
	size_t i;
	int changed = 7;

	for (i = 0; i < H_COUNT(bad); i++) {
		CHECK_INT(pgn_install_merge(PGN_HOST_CODEX, bad[i],
		              strlen(bad[i]), HOOK, &out, &changed, &err),
		    PGN_EINVAL);
		CHECK(out == NULL);
		CHECK_CONTAINS(err.msg, "not valid JSON (line ");
		CHECK_INT(pgn_uninstall_merge(PGN_HOST_CODEX, bad[i],
		              strlen(bad[i]), &out, &changed, &err),
		    PGN_EINVAL);
		CHECK(out == NULL);
	}
	CHECK_INT(pgn_install_merge(PGN_HOST_CODEX, bad[3], strlen(bad[3]),
	              HOOK, &out, &changed, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "(line 3, column ");
}

static void
test_nul_byte_is_refused(void)
{
	static const char in[] = "{}\0{\"x\":1}";
	struct pgn_err err;
	char *out = NULL;
	int changed;

	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, in, sizeof(in) - 1, HOOK,
	              &out, &changed, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "NUL");
	CHECK(out == NULL);
}

static void
test_nul_escape_is_refused_not_rewritten(void)
{
	static const char in[] = "{\"model\":\"opus\\u0000-beta\"}";
	struct pgn_err err;
	char *out = NULL;
	int changed;

	/* cJSON would decode it into a NUL and write back "opus". */
	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, in, sizeof(in) - 1, HOOK,
	              &out, &changed, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "\\u0000");
	CHECK(out == NULL);
}

static void
test_wrong_shapes_are_refused(void)
{
	static const struct {
		pgn_host h;
		const char *in;
		const char *why;
	} bad[] = {
	    {PGN_HOST_CLAUDE, "[]", "top level"},
	    {PGN_HOST_CLAUDE, "\"x\"", "top level"},
	    {PGN_HOST_CLAUDE, "{\"hooks\":[]}", "\"hooks\" as an array"},
	    {PGN_HOST_CURSOR, "{\"hooks\":null}", "\"hooks\" as null"},
	    {PGN_HOST_CURSOR, "{\"hooks\":{\"sessionStart\":\"x\"}}",
	        "\"sessionStart\" as a string"},
	    {PGN_HOST_CODEX, "{\"hooks\":{\"UserPromptSubmit\":{}}}",
	        "\"UserPromptSubmit\" as an object"},
	    {PGN_HOST_GEMINI, "{\"hooks\":{\"BeforeAgent\":1}}",
	        "\"BeforeAgent\" as a number"},
	};
	struct pgn_err err;
	char *out = NULL;
	size_t i;
	int changed;

	for (i = 0; i < H_COUNT(bad); i++) {
		CHECK_INT(pgn_install_merge(bad[i].h, bad[i].in,
		              strlen(bad[i].in), HOOK, &out, &changed, &err),
		    PGN_EINVAL);
		CHECK_CONTAINS(err.msg, bad[i].why);
		CHECK(out == NULL);
		CHECK_INT(pgn_uninstall_merge(bad[i].h, bad[i].in,
		              strlen(bad[i].in), &out, &changed, &err),
		    PGN_EINVAL);
		CHECK(out == NULL);
	}
}

static void
test_other_keys_under_hooks_may_be_anything(void)
{
	/* Gemini has kept settings such as "enabled" inside "hooks". */
	static const char in[] =
	    "{\"hooks\":{\"enabled\":true,\"disabled\":[\"x\"]}}";
	char *out, *back;
	int changed;

	out = merge_in(PGN_HOST_GEMINI, in, HOOK, &changed);
	CHECK_INT(changed, 1);
	CHECK_CONTAINS(out, "\"enabled\":true");
	back = merge_out(PGN_HOST_GEMINI, out, &changed);
	CHECK_INT(changed, 1);
	CHECK_INT(count(back, "pigeon-hook"), 0);
	CHECK_CONTAINS(back, "\"disabled\"");
	free(back);
	free(out);
}

static void
test_config_over_max_is_refused(void)
{
	struct pgn_err err;
	char *big, *out = NULL;
	size_t n = PGN_MAX_CONFIG + 1;
	int changed;

	big = malloc(n);
	REQUIRE(big != NULL);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, big, n, HOOK, &out,
	              &changed, &err),
	    PGN_ETOOBIG);
	CHECK(out == NULL);
	CHECK_INT(pgn_uninstall_merge(PGN_HOST_CLAUDE, big, n, &out, &changed,
	              &err),
	    PGN_ETOOBIG);
	/* Exactly the limit is fine. */
	big[n - 2] = '}';
	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, big, n - 1, HOOK, &out,
	              &changed, &err),
	    PGN_OK);
	free(out);
	free(big);
}

/* ---- uninstall merge ------------------------------------------------ */

static void
test_uninstall_without_pigeon_entries_changes_nothing(void)
{
	char *in, *out;
	size_t n;
	int h, changed;

	EACH_COMMAND_HOST(h)
	{
		in = host_fixture((pgn_host)h, "foreign.in.json", &n);
		out = merge_out((pgn_host)h, in, &changed);
		CHECK_INT(changed, 0);
		CHECK_STR(out, in);
		free(out);
		free(in);
		out = merge_out((pgn_host)h, NULL, &changed);
		CHECK_INT(changed, 0);
		CHECK(out == NULL);
		out = merge_out((pgn_host)h, "", &changed);
		CHECK_INT(changed, 0);
		CHECK_STR(out, "");
		free(out);
	}
}

static void
test_uninstall_merge_is_the_inverse_of_install_semantically(void)
{
	cJSON *a, *b;
	char *in, *once, *back;
	size_t n;
	int h, changed;

	EACH_COMMAND_HOST(h)
	{
		in = host_fixture((pgn_host)h, "foreign.in.json", &n);
		once = merge_in((pgn_host)h, in, HOOK, &changed);
		back = merge_out((pgn_host)h, once, &changed);
		CHECK_INT(changed, 1);
		a = cJSON_Parse(in);
		b = cJSON_Parse(back);
		CHECK(cJSON_Compare(a, b, 1));
		cJSON_Delete(a);
		cJSON_Delete(b);
		free(back);
		free(once);
		free(in);
	}
}

static void
test_uninstall_leaves_the_skeleton_of_a_new_file(void)
{
	char *once, *back;
	int changed;

	once = merge_in(PGN_HOST_CURSOR, NULL, HOOK, &changed);
	back = merge_out(PGN_HOST_CURSOR, once, &changed);
	CHECK_INT(changed, 1);
	CHECK_STR(back, "{\n  \"version\": 1\n}\n");
	free(back);
	free(once);
	once = merge_in(PGN_HOST_CLAUDE, NULL, HOOK, &changed);
	back = merge_out(PGN_HOST_CLAUDE, once, &changed);
	CHECK_STR(back, "{}\n");
	free(back);
	free(once);
}

static void
test_uninstall_keeps_foreign_handlers_sharing_a_group(void)
{
	static const char in[] =
	    "{\"hooks\":{\"SessionStart\":[{\"matcher\":\"startup\","
	    "\"hooks\":[{\"type\":\"command\",\"command\":\"/a/pigeon-hook "
	    "codex SessionStart\"},{\"type\":\"command\",\"command\":\"x\"}]"
	    "}],\"UserPromptSubmit\":[]}}";
	cJSON *root, *ss, *g;
	char *out;
	int changed;

	out = merge_out(PGN_HOST_CODEX, in, &changed);
	CHECK_INT(changed, 1);
	root = cJSON_Parse(out);
	ss = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(root, "hooks"), "SessionStart");
	CHECK_INT(cJSON_GetArraySize(ss), 1);
	g = cJSON_GetArrayItem(ss, 0);
	CHECK_INT(cJSON_GetArraySize(
	              cJSON_GetObjectItemCaseSensitive(g, "hooks")),
	    1);
	CHECK(cJSON_GetObjectItemCaseSensitive(g, "matcher") != NULL);
	/* An empty array the user wrote is not ours to remove. */
	CHECK_CONTAINS(out, "\"UserPromptSubmit\":[]");
	cJSON_Delete(root);
	free(out);
}

/* ---- apply: files --------------------------------------------------- */

static void
test_install_uninstall_on_missing_file_leaves_it_absent(void)
{
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX], *want;
	size_t n;
	int h;

	use_home(home, sizeof(home));
	EACH_COMMAND_HOST(h)
	{
		user_config((pgn_host)h, path, sizeof(path));
		bak_of(path, bak, sizeof(bak));
		install_ok((pgn_host)h, NULL, HOOK);
		want = host_fixture((pgn_host)h, "new.json", &n);
		CHECK(file_is(path, want, n));
		CHECK(absent(bak));
		free(want);
		uninstall_ok((pgn_host)h, NULL);
		CHECK(absent(path));
		CHECK(absent(bak));
	}
	env_restore();
}

static void
test_install_uninstall_on_odd_file_is_byte_identical(void)
{
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX], dir[PATH_MAX];
	char *orig;
	size_t n;
	int h;

	use_home(home, sizeof(home));
	EACH_COMMAND_HOST(h)
	{
		user_config((pgn_host)h, path, sizeof(path));
		bak_of(path, bak, sizeof(bak));
		snprintf(dir, sizeof(dir), "%s", path);
		*strrchr(dir, '/') = '\0';
		ensure_dir(dir);
		orig = host_fixture((pgn_host)h, "odd.json", &n);
		h_write_file(path, orig, n);
		install_ok((pgn_host)h, NULL, HOOK);
		CHECK(!file_is(path, orig, n));
		CHECK(file_is(bak, orig, n));
		uninstall_ok((pgn_host)h, NULL);
		CHECK(file_is(path, orig, n));
		CHECK(absent(bak));
		free(orig);
	}
	env_restore();
}

static void
test_install_uninstall_on_blank_file_is_byte_identical(void)
{
	static const char *const blanks[] = {"", "\n  \n"};
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX];
	size_t i;
	int h;

	use_home(home, sizeof(home));
	EACH_COMMAND_HOST(h)
	{
		user_config((pgn_host)h, path, sizeof(path));
		bak_of(path, bak, sizeof(bak));
		install_ok((pgn_host)h, NULL, HOOK); /* makes the dir */
		uninstall_ok((pgn_host)h, NULL);
		for (i = 0; i < H_COUNT(blanks); i++) {
			h_write_file(path, blanks[i], strlen(blanks[i]));
			install_ok((pgn_host)h, NULL, HOOK);
			CHECK(file_is(bak, blanks[i], strlen(blanks[i])));
			uninstall_ok((pgn_host)h, NULL);
			CHECK(file_is(path, blanks[i], strlen(blanks[i])));
			CHECK(absent(bak));
		}
	}
	env_restore();
}

static void
test_install_uninstall_on_foreign_file_is_byte_identical(void)
{
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX], *orig, *want;
	size_t n, wn;
	int h;

	use_home(home, sizeof(home));
	EACH_COMMAND_HOST(h)
	{
		user_config((pgn_host)h, path, sizeof(path));
		bak_of(path, bak, sizeof(bak));
		orig = host_fixture((pgn_host)h, "foreign.in.json", &n);
		want = host_fixture((pgn_host)h, "foreign.out.json", &wn);
		/* The directory is created by the first install. */
		install_ok((pgn_host)h, NULL, HOOK);
		uninstall_ok((pgn_host)h, NULL);
		h_write_file(path, orig, n);
		install_ok((pgn_host)h, NULL, HOOK);
		CHECK(file_is(path, want, wn));
		install_ok((pgn_host)h, NULL, HOOK);
		CHECK(file_is(path, want, wn));
		uninstall_ok((pgn_host)h, NULL);
		CHECK(file_is(path, orig, n));
		CHECK(absent(bak));
		free(want);
		free(orig);
	}
	env_restore();
}

/* Add a foreign entry to the first event of the host's installed file. */
static void
user_adds_entry(pgn_host h, const char *path)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	cJSON *root, *ev, *item;
	char *data, *s;
	size_t n;

	data = h_read_file(path, &n);
	REQUIRE(data != NULL);
	root = cJSON_Parse(data);
	free(data);
	REQUIRE(root != NULL);
	ev = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(root, "hooks"), hi->events[0]);
	item = cJSON_Parse(hi->shape == PGN_SHAPE_FLAT ?
	        "{\"command\":\"user-added\"}" :
	        "{\"hooks\":[{\"type\":\"command\",\"command\":\"user-added\"}]"
	        "}");
	cJSON_AddItemToArray(ev, item);
	s = cJSON_Print(root);
	h_write_file(path, s, strlen(s));
	cJSON_free(s);
	cJSON_Delete(root);
}

static void
test_uninstall_keeps_a_user_edit_made_after_install(void)
{
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX], *data, *orig;
	size_t n, on;
	int h;

	use_home(home, sizeof(home));
	EACH_COMMAND_HOST(h)
	{
		user_config((pgn_host)h, path, sizeof(path));
		bak_of(path, bak, sizeof(bak));
		/* A file Pigeon created. */
		install_ok((pgn_host)h, NULL, HOOK);
		user_adds_entry((pgn_host)h, path);
		uninstall_ok((pgn_host)h, NULL);
		data = h_read_file(path, &n);
		CHECK_INT(count(data, "user-added"), 1);
		CHECK_INT(count(data, "pigeon-hook"), 0);
		CHECK(absent(bak));
		free(data);
		/* A file that was there before: the .bak stays. */
		orig = host_fixture((pgn_host)h, "foreign.in.json", &on);
		h_write_file(path, orig, on);
		install_ok((pgn_host)h, NULL, HOOK);
		user_adds_entry((pgn_host)h, path);
		uninstall_ok((pgn_host)h, NULL);
		data = h_read_file(path, &n);
		CHECK_INT(count(data, "user-added"), 1);
		CHECK_INT(count(data, "pigeon-hook"), 0);
		CHECK(file_is(bak, orig, on));
		free(data);
		free(orig);
	}
	env_restore();
}

static void
test_bak_is_written_only_for_the_first_original(void)
{
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX], *data;
	static const char first[] = "{\"model\":\"first\"}\n";
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	bak_of(path, bak, sizeof(bak));
	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	uninstall_ok(PGN_HOST_CLAUDE, NULL);
	h_write_file(path, first, strlen(first));
	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	CHECK(file_is(bak, first, strlen(first)));
	/* The user edits; a reinstall with another hook keeps the .bak. */
	data = h_read_file(path, &n);
	REQUIRE(data != NULL);
	*strstr(data, "first") = 'F';
	h_write_file(path, data, n);
	free(data);
	install_ok(PGN_HOST_CLAUDE, NULL, OTHER_HOOK);
	CHECK(file_is(bak, first, strlen(first)));
	data = h_read_file(path, &n);
	check_one_entry_per_event(PGN_HOST_CLAUDE, data, OTHER_HOOK);
	CHECK_INT(count(data, "First"), 1);
	free(data);
	env_restore();
}

static void
test_unreadable_bak_is_kept_not_restored(void)
{
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX], *data;
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	bak_of(path, bak, sizeof(bak));
	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	uninstall_ok(PGN_HOST_CLAUDE, NULL);
	h_write_file(path, "{\"a\":1}", 7);
	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	REQUIRE(unlink(bak) == 0);
	h_mkdir(bak);
	uninstall_ok(PGN_HOST_CLAUDE, NULL);
	data = h_read_file(path, &n);
	CHECK_STR(data, "{\"a\":1}");
	free(data);
	CHECK(!absent(bak));
	env_restore();
}

static void
test_install_creates_the_config_directory_and_a_0644_file(void)
{
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];
	struct stat sb;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_GEMINI, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".gemini");
	CHECK(absent(dir));
	install_ok(PGN_HOST_GEMINI, NULL, HOOK);
	CHECK(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0644);
	/* Deep directories too ($CODEX_HOME may not exist yet). */
	h_join(dir, sizeof(dir), h_tmp, "a/b/codex");
	REQUIRE(setenv("CODEX_HOME", dir, 1) == 0);
	install_ok(PGN_HOST_CODEX, NULL, HOOK);
	h_join(path, sizeof(path), dir, "hooks.json");
	CHECK(!absent(path));
	env_restore();
}

static void
test_install_keeps_the_files_mode(void)
{
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];
	struct stat sb;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".claude");
	h_mkdir(dir);
	h_write_file(path, "{}", 2);
	REQUIRE(chmod(path, 0600) == 0);
	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600);
	uninstall_ok(PGN_HOST_CLAUDE, NULL);
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600);
	CHECK(file_is(path, "{}", 2));
	env_restore();
}

static void
test_user_env_overrides_are_respected(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], dir[PATH_MAX], want[PATH_MAX];

	use_home(home, sizeof(home));
	h_join(dir, sizeof(dir), h_tmp, "claude-config");
	REQUIRE(setenv("CLAUDE_CONFIG_DIR", dir, 1) == 0);
	CHECK_INT(apply(PGN_HOST_CLAUDE, NULL, HOOK, 0, 0, &res, &err), PGN_OK);
	h_join(want, sizeof(want), dir, "settings.json");
	CHECK_STR(res.path, want);
	CHECK(!absent(want));
	pgn_install_result_release(&res);

	h_join(dir, sizeof(dir), h_tmp, "codex-home");
	REQUIRE(setenv("CODEX_HOME", dir, 1) == 0);
	CHECK_INT(apply(PGN_HOST_CODEX, NULL, HOOK, 0, 0, &res, &err), PGN_OK);
	h_join(want, sizeof(want), dir, "hooks.json");
	CHECK_STR(res.path, want);
	CHECK(!absent(want));
	pgn_install_result_release(&res);

	/* Empty means unset: back to $HOME. */
	REQUIRE(setenv("CODEX_HOME", "", 1) == 0);
	CHECK_INT(apply(PGN_HOST_CODEX, NULL, HOOK, 0, 1, &res, &err), PGN_OK);
	h_join(want, sizeof(want), home, ".codex/hooks.json");
	CHECK_STR(res.path, want);
	pgn_install_result_release(&res);
	env_restore();
}

static void
test_project_config_paths(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], proj[PATH_MAX], want[PATH_MAX];
	int h;

	use_home(home, sizeof(home));
	h_join(proj, sizeof(proj), h_tmp, "proj");
	h_mkdir(proj);
	EACH_COMMAND_HOST(h)
	{
		CHECK_INT(apply((pgn_host)h, proj, HOOK, 0, 0, &res, &err),
		    PGN_OK);
		h_join(want, sizeof(want), proj,
		    pgn_host_get((pgn_host)h)->project_path);
		CHECK_STR(res.path, want);
		CHECK(!absent(want));
		pgn_install_result_release(&res);
		uninstall_ok((pgn_host)h, proj);
		CHECK(absent(want));
	}
	env_restore();
}

static void
test_dry_run_writes_nothing_and_shows_the_diff(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX], want[128];
	static const char orig[] = "{\"x\":1}";
	char *golden;
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CURSOR, path, sizeof(path));
	CHECK_INT(apply(PGN_HOST_CURSOR, NULL, HOOK, 0, 1, &res, &err), PGN_OK);
	CHECK_INT(res.changed, 1);
	CHECK(absent(path));
	CHECK(res.diff != NULL &&
	    strncmp(res.diff, "--- /dev/null\n+++ ", 18) == 0);
	/* Every line of the new file (the golden, four entries) added. */
	golden = fixture("cursor-new.json", &n);
	snprintf(want, sizeof(want),
	    "@@ -0,0 +1,%zu @@\n+{\n+  \"version\": 1,\n", lines_of(golden));
	CHECK_CONTAINS(res.diff, want);
	CHECK_INT(count(res.diff, "\n+"), lines_of(golden) + 1); /* "+++" */
	free(golden);
	pgn_install_result_release(&res);

	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_write_file(path, orig, strlen(orig));
	CHECK_INT(apply(PGN_HOST_CLAUDE, NULL, HOOK, 0, 1, &res, &err), PGN_OK);
	CHECK(file_is(path, orig, strlen(orig)));
	CHECK_CONTAINS(res.diff, "-{\"x\":1}\n\\ No newline at end of file\n");
	pgn_install_result_release(&res);
	env_restore();
}

static void
test_diff_is_minimal(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX], *text;
	char want[4 * PATH_MAX];
	size_t n, lines;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CURSOR, path, sizeof(path));
	install_ok(PGN_HOST_CURSOR, NULL, HOOK);
	text = h_read_file(path, &n);
	REQUIRE(text != NULL);
	lines = lines_of(text);
	free(text);
	/* Removing a file Pigeon created shows every line removed. */
	CHECK_INT(apply(PGN_HOST_CURSOR, NULL, NULL, 1, 1, &res, &err), PGN_OK);
	snprintf(want, sizeof(want),
	    "--- %s\n+++ /dev/null\n"
	    "@@ -1,%zu +0,0 @@\n-{\n-  \"version\": 1,\n",
	    path, lines);
	CHECK(res.diff != NULL && strncmp(res.diff, want, strlen(want)) == 0);
	CHECK_INT(count(res.diff, "\n-"), lines);
	CHECK_INT(count(res.diff, "\n+"), 1); /* "+++" */
	pgn_install_result_release(&res);
	/* A one-line change is one hunk of one line each way. */
	text = h_read_file(path, &n);
	REQUIRE(text != NULL);
	strstr(text, "\"timeout\": 5")[11] = '9';
	h_write_file(path, text, n);
	free(text);
	CHECK_INT(apply(PGN_HOST_CURSOR, NULL, HOOK, 0, 1, &res, &err), PGN_OK);
	snprintf(want, sizeof(want),
	    "--- %s\n+++ %s\n@@ -7,1 +7,1 @@\n"
	    "-        \"timeout\": 9\n+        \"timeout\": 5\n",
	    path, path);
	CHECK_STR(res.diff, want);
	pgn_install_result_release(&res);
	env_restore();
}

static void
test_invalid_json_file_is_left_untouched(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], path[PATH_MAX], bak[PATH_MAX], dir[PATH_MAX];
	struct pgn_err err;
	static const char bad[] = "{\n  \"hooks\": {\n    \"Stop\": [,]\n}\n";

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	bak_of(path, bak, sizeof(bak));
	h_join(dir, sizeof(dir), home, ".claude");
	h_mkdir(dir);
	h_write_file(path, bad, strlen(bad));
	CHECK_INT(apply(PGN_HOST_CLAUDE, NULL, HOOK, 0, 0, &res, &err),
	    PGN_EINVAL);
	CHECK(file_is(path, bad, strlen(bad)));
	CHECK(absent(bak));
	CHECK_CONTAINS(err.msg, path);
	CHECK_CONTAINS(err.msg, "is not valid JSON (line 3, column ");
	CHECK_CONTAINS(err.msg, "left untouched");
	CHECK(strchr(err.msg, '\n') == NULL);
	CHECK(res.diff == NULL);
	pgn_install_result_release(&res);
	CHECK_INT(apply(PGN_HOST_CLAUDE, NULL, NULL, 1, 0, &res, &err),
	    PGN_EINVAL);
	CHECK(file_is(path, bad, strlen(bad)));
	pgn_install_result_release(&res);
	/* Wrong shape: the same refusal. */
	h_write_file(path, "{\"hooks\":[]}", 12);
	CHECK_INT(apply(PGN_HOST_CLAUDE, NULL, HOOK, 0, 0, &res, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "\"hooks\" as an array");
	CHECK(file_is(path, "{\"hooks\":[]}", 12));
	pgn_install_result_release(&res);
	env_restore();
}

static void
test_oversized_file_is_refused_untouched(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];
	char *big;
	size_t n = PGN_MAX_CONFIG + 10;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CURSOR, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".cursor");
	h_mkdir(dir);
	big = malloc(n);
	REQUIRE(big != NULL);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	h_write_file(path, big, n);
	CHECK_INT(apply(PGN_HOST_CURSOR, NULL, HOOK, 0, 0, &res, &err),
	    PGN_ETOOBIG);
	CHECK_CONTAINS(err.msg, path);
	CHECK(file_is(path, big, n));
	pgn_install_result_release(&res);
	free(big);
	env_restore();
}

static void
test_uninstall_of_missing_or_foreign_file_changes_nothing(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX], *orig;
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CODEX, path, sizeof(path));
	CHECK_INT(apply(PGN_HOST_CODEX, NULL, NULL, 1, 0, &res, &err), PGN_OK);
	CHECK_INT(res.changed, 0);
	CHECK_STR(res.diff, "");
	CHECK(res.note == NULL);
	CHECK(absent(path));
	pgn_install_result_release(&res);
	/* A skeleton the user wrote is not deleted: it changes nothing. */
	install_ok(PGN_HOST_CODEX, NULL, HOOK);
	h_write_file(path, "{}\n", 3);
	CHECK_INT(apply(PGN_HOST_CODEX, NULL, NULL, 1, 0, &res, &err), PGN_OK);
	CHECK_INT(res.changed, 0);
	CHECK(file_is(path, "{}\n", 3));
	pgn_install_result_release(&res);
	orig = host_fixture(PGN_HOST_CODEX, "foreign.in.json", &n);
	h_write_file(path, orig, n);
	CHECK_INT(apply(PGN_HOST_CODEX, NULL, NULL, 1, 0, &res, &err), PGN_OK);
	CHECK_INT(res.changed, 0);
	CHECK(file_is(path, orig, n));
	pgn_install_result_release(&res);
	free(orig);
	env_restore();
}

static void
test_codex_install_explains_trust(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX];
	int h;

	use_home(home, sizeof(home));
	EACH_COMMAND_HOST(h)
	{
		CHECK_INT(apply((pgn_host)h, NULL, HOOK, 0, 1, &res, &err),
		    PGN_OK);
		if (h == PGN_HOST_CODEX) {
			CHECK_CONTAINS(res.note, "/hooks");
			CHECK_CONTAINS(res.note,
			    "--dangerously-bypass-hook-trust");
		} else {
			CHECK(res.note == NULL);
		}
		pgn_install_result_release(&res);
	}
	env_restore();
}

static void
test_symlinked_config_stays_a_link(void)
{
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
	char bak[PATH_MAX];
	struct stat sb;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".claude");
	h_mkdir(dir);
	h_join(real, sizeof(real), h_tmp, "dotfiles.json");
	h_write_file(real, "{}", 2);
	REQUIRE(symlink(real, path) == 0);
	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	CHECK(lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode));
	bak_of(real, bak, sizeof(bak));
	CHECK(file_is(bak, "{}", 2));
	uninstall_ok(PGN_HOST_CLAUDE, NULL);
	CHECK(lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode));
	CHECK(file_is(real, "{}", 2));
	CHECK(absent(bak));
	env_restore();
}

static void
test_missing_home_is_an_error(void)
{
	struct pgn_install_result res;
	struct pgn_err err;

	unsetenv("HOME");
	unsetenv("CLAUDE_CONFIG_DIR");
	CHECK_INT(apply(PGN_HOST_CLAUDE, NULL, HOOK, 0, 1, &res, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "HOME");
	pgn_install_result_release(&res);
	pgn_install_result_release(NULL);
	env_restore();
}

/* ---- format-preserving edits (defect 22) ---------------------------- */

/*
 * Install 'in' for host 'h', check the result with 'want' (a substring,
 * or NULL), and that uninstalling it gives 'in' back byte for byte.
 * Returns the installed text (caller frees).
 */
static char *
round_trip(pgn_host h, const char *in, size_t len, const char *want)
{
	struct pgn_err err;
	char *out = NULL, *back = NULL;
	pgn_status st;
	int changed;

	st = pgn_install_merge(h, in, len, HOOK, &out, &changed, &err);
	if (!CHECK_INT(st, PGN_OK))
		printf("  %s\n", err.msg);
	CHECK_INT(changed, 1);
	if (out == NULL)
		return NULL;
	if (want != NULL)
		CHECK_CONTAINS(out, want);
	CHECK_INT(count(out, "pigeon-hook"),
	    pgn_host_nevents(h) * per_command(h));
	st = pgn_uninstall_merge(h, out, strlen(out), &back, &changed, &err);
	CHECK_INT(st, PGN_OK);
	CHECK_INT(changed, 1);
	CHECK(
	    back != NULL && strlen(back) == len && memcmp(back, in, len) == 0);
	if (back != NULL && (strlen(back) != len || memcmp(back, in, len)))
		printf("  want <%s>\n  got  <%s>\n", in, back);
	free(back);
	return out;
}

/* Write 'in' as the user config of 'h', install, uninstall: same bytes. */
static void
file_round_trip(pgn_host h, const char *in, size_t len)
{
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], bak[PATH_MAX];
	char *slash;

	use_home(home, sizeof(home));
	user_config(h, path, sizeof(path));
	bak_of(path, bak, sizeof(bak));
	suffixed(path, "", dir, sizeof(dir));
	slash = strrchr(dir, '/');
	REQUIRE(slash != NULL);
	*slash = '\0';
	ensure_dir(dir);
	h_write_file(path, in, len);
	install_ok(h, NULL, HOOK);
	CHECK(!file_is(path, in, len));
	uninstall_ok(h, NULL);
	CHECK(file_is(path, in, len));
	CHECK(absent(bak));
	unlink(path);
	env_restore();
}

static void
test_big_integers_and_1e400_survive_install_and_uninstall_byte_exact(void)
{
	static const char in[] =
	    "{\n  \"big\": 12345678901234567890,\n  \"huge\": 1e400,\n"
	    "  \"tiny\": -0.000000000000000000001E-5,\n"
	    "  \"esc\": \"\\u00e9\\/\\ud83d\\ude00\"\n}\n";
	char *out;

	out = round_trip(PGN_HOST_CLAUDE, in, strlen(in), NULL);
	CHECK_CONTAINS(out, "\"big\": 12345678901234567890,\n");
	CHECK_CONTAINS(out, "\"huge\": 1e400,\n");
	CHECK_CONTAINS(out, "-0.000000000000000000001E-5");
	CHECK_CONTAINS(out, "\"\\u00e9\\/\\ud83d\\ude00\"");
	free(out);
	file_round_trip(PGN_HOST_CLAUDE, in, strlen(in));
}

static void
test_bom_is_kept(void)
{
	static const char in[] = "\xef\xbb\xbf{\n  \"model\": \"opus\"\n}\n";
	char *out;

	out = round_trip(PGN_HOST_CLAUDE, in, strlen(in), NULL);
	CHECK(out != NULL && strncmp(out, "\xef\xbb\xbf{\n", 4) == 0);
	free(out);
	file_round_trip(PGN_HOST_GEMINI, in, strlen(in));
}

static void
test_crlf_is_kept_and_inserted_lines_use_crlf(void)
{
	static const char in[] =
	    "{\r\n  \"hooks\": {\r\n    \"Stop\": [\r\n      { \"hooks\": "
	    "[ { \"type\": \"command\", \"command\": \"beep\" } ] }\r\n"
	    "    ]\r\n  }\r\n}\r\n";
	const char *p;
	char *out;
	size_t lf = 0;

	out = round_trip(PGN_HOST_CODEX, in, strlen(in),
	    "\r\n    \"SessionStart\": [\r\n      {\r\n        \"hooks\": [\r\n");
	for (p = out; p != NULL && *p != '\0'; p++)
		if (*p == '\n') {
			lf++;
			CHECK(p > out && p[-1] == '\r');
		}
	CHECK(lf > 20);
	free(out);
	file_round_trip(PGN_HOST_CODEX, in, strlen(in));
}

/* 'lf' with each "\n" made 'eol' ("\n", "\r\n", "\r"); caller frees. */
static char *
with_eol(const char *lf, const char *eol)
{
	char *s = malloc(strlen(lf) * 2 + 1);
	size_t n = 0;
	const char *p;

	REQUIRE(s != NULL);
	for (p = lf; *p != '\0'; p++) {
		if (*p == '\n') {
			memcpy(s + n, eol, strlen(eol));
			n += strlen(eol);
		} else {
			s[n++] = *p;
		}
	}
	s[n] = '\0';
	return s;
}

static void
test_every_line_end_style_is_kept_and_used_by_inserted_lines(void)
{
	static const char *const docs[] = {
	    "{\n  \"model\": \"x\"\n}\n",
	    "{\n    \"hooks\": {\n        \"Stop\": [\n            { \"hooks\": "
	    "[ { \"type\": \"command\", \"command\": \"beep\" } ] }\n"
	    "        ]\n    }\n}",
	    "\xef\xbb\xbf{\n\t\"a\": [\n\t\t1\n\t]\n}\n\n",
	    "{}\n",
	};
	static const char *const eols[] = {"\n", "\r\n", "\r"};
	char *in, *out, want[64];
	const char *p;
	size_t i, k;
	int h, ok;

	for (i = 0; i < H_COUNT(docs); i++)
		for (k = 0; k < H_COUNT(eols); k++)
			EACH_COMMAND_HOST(h)
			{
				in = with_eol(docs[i], eols[k]);
				out = round_trip((pgn_host)h, in, strlen(in),
				    NULL);
				/* Only the file's own line end is added. */
				ok = out != NULL;
				for (p = out; ok && *p != '\0'; p++)
					if (*p == '\n')
						ok = k == 0 ||
						    (k == 1 && p > out &&
						        p[-1] == '\r');
					else if (*p == '\r')
						ok = k == 2 ||
						    (k == 1 && p[1] == '\n');
				if (!CHECK(ok))
					printf("  doc %zu eol %zu host %d\n", i,
					    k, h);
				/* Laid out on lines of their own, indented. */
				snprintf(want, sizeof(want),
				    "%s%s\"%s\": ", eols[k],
				    i == 1 ? "        " : "  ",
				    i == 1 ?
				        pgn_host_get((pgn_host)h)
				            ->events[PGN_EVENT_SESSION_START] :
				        "hooks");
				if (i < 2 && !CHECK_CONTAINS(out, want))
					printf("  doc %zu eol %zu host %d\n", i,
					    k, h);
				free(out);
				free(in);
			}
}

static void
test_mixed_line_ends_round_trip_and_inserted_lines_use_the_first(void)
{
	static const char *const docs[][2] = {
	    {"{\r\n  \"a\": 1,\n  \"b\": {\r    \"c\": [\r\n      2\n    ]\r"
	     "  }\r\n}",
	        "\r\n"},
	    {"{\r  \"a\": 1,\r\n  \"b\": 2\n}\r\n", "\r"},
	    {"{\n  \"a\": 1\r\n}\r", "\n"},
	};
	char *out, want[64];
	size_t i;
	int h;

	for (i = 0; i < H_COUNT(docs); i++)
		EACH_COMMAND_HOST(h)
		{
			out = round_trip((pgn_host)h, docs[i][0],
			    strlen(docs[i][0]), NULL);
			snprintf(want, sizeof(want),
			    "%s  \"hooks\": ", docs[i][1]);
			if (!CHECK_CONTAINS(out, want))
				printf("  doc %zu host %d\n", i, h);
			free(out);
			if (h == PGN_HOST_CURSOR)
				file_round_trip((pgn_host)h, docs[i][0],
				    strlen(docs[i][0]));
		}
}

/*
 * Gemini's settings reader ends a // comment at LF only (a CR does not
 * end it), and so does Pigeon's: in a lone-CR file such a comment runs
 * to the end, the JSON is cut short, and install refuses, untouched.
 */
static void
test_gemini_line_comment_in_a_lone_cr_file_is_refused(void)
{
	static const char in[] = "// mine\r{\r  \"a\": 1\r}\r";
	struct pgn_err err;
	char *out = NULL;
	int changed = 1;

	CHECK_INT(pgn_install_merge(PGN_HOST_GEMINI, in, strlen(in), HOOK, &out,
	              &changed, &err),
	    PGN_EINVAL);
	CHECK(out == NULL);
	CHECK_CONTAINS(err.msg, "not valid JSON");
	/* A block comment ends where it says: that file is fine. */
	out = round_trip(PGN_HOST_GEMINI, "/* mine */\r{\r  \"a\": 1\r}\r",
	    strlen("/* mine */\r{\r  \"a\": 1\r}\r"), "\r  \"hooks\": ");
	free(out);
}

static void
test_two_four_space_and_tab_indentation_is_kept_and_matched(void)
{
	static const char *const units[] = {"  ", "    ", "\t"};
	char in[256], want[512];
	const char *u;
	char *out;
	size_t i;

	for (i = 0; i < H_COUNT(units); i++) {
		u = units[i];
		snprintf(in, sizeof(in),
		    "{\n%s\"model\": \"x\",\n%s\"env\": {\n%s%s\"A\": \"1\"\n"
		    "%s}\n}\n",
		    u, u, u, u, u);
		snprintf(want, sizeof(want),
		    "\n%s},\n%s\"hooks\": {\n%s%s\"SessionStart\": [\n"
		    "%s%s%s{\n%s%s%s%s\"hooks\": [\n",
		    u, u, u, u, u, u, u, u, u, u, u);
		out = round_trip(PGN_HOST_CLAUDE, in, strlen(in), want);
		free(out);
		file_round_trip(PGN_HOST_CLAUDE, in, strlen(in));
	}
}

static void
test_missing_final_newline_is_kept(void)
{
	static const char *const ins[] = {"{\n  \"a\": [1, 2]\n}", "{\"a\": 1}",
	    "{\"hooks\": {\"Stop\": []}}"};
	char *out;
	size_t i;

	for (i = 0; i < H_COUNT(ins); i++) {
		out = round_trip(PGN_HOST_CURSOR, ins[i], strlen(ins[i]), NULL);
		CHECK(out != NULL && out[strlen(out) - 1] == '}');
		free(out);
		file_round_trip(PGN_HOST_CURSOR, ins[i], strlen(ins[i]));
	}
	/* A one-line file gets one-line entries. */
	out = round_trip(PGN_HOST_CURSOR, ins[1], strlen(ins[1]),
	    "{\"a\": 1, \"hooks\": {\"sessionStart\": [{\"command\": ");
	CHECK(out != NULL && strchr(out, '\n') == NULL);
	free(out);
}

static void
test_gemini_settings_with_comments_install_and_uninstall_byte_exact(void)
{
	static const char in[] =
	    "// Gemini CLI settings\n{\n  /* the theme */\n"
	    "  \"ui\": { \"theme\": \"GitHub\" }, // trailing\n"
	    "  \"url\": \"http://example.com/*not a comment*/\",\n"
	    "  \"hooks\": {\n    // mine\n    \"BeforeAgent\": [\n"
	    "      { \"hooks\": [ { \"type\": \"command\", "
	    "\"command\": \"lint\" } ] } /* last */\n    ]\n  }\n}\n"
	    "/* end */\n";
	struct pgn_err err;
	char *out = NULL;
	int changed;

	out = round_trip(PGN_HOST_GEMINI, in, strlen(in), "// mine\n");
	CHECK_CONTAINS(out, "/* last */");
	CHECK_CONTAINS(out, "\"http://example.com/*not a comment*/\"");
	CHECK_CONTAINS(out, "}\n/* end */\n");
	free(out);
	file_round_trip(PGN_HOST_GEMINI, in, strlen(in));
	/* Only Gemini accepts comments. */
	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, in, strlen(in), HOOK, &out,
	              &changed, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "not valid JSON (line 1, column 1)");
	/* An unterminated comment is not JSON either. */
	CHECK_INT(pgn_install_merge(PGN_HOST_GEMINI, "{} /* x", 7, HOOK, &out,
	              &changed, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "not valid JSON");
	CHECK_INT(pgn_install_merge(PGN_HOST_GEMINI, "// only\n", 8, HOOK, &out,
	              &changed, &err),
	    PGN_EINVAL);
}

static void
test_foreign_entries_keep_their_order_and_bytes(void)
{
	static const char in[] =
	    "{\"version\": 1, \"hooks\": {\"sessionStart\": [\n"
	    "  {\"command\": \"/x/pigeon-hook cursor sessionStart\"},\n"
	    "  {\"command\":  \"a\"},\n"
	    "  {\"command\": \"/y/pigeon-hook cursor sessionStart\"},\n"
	    "  {\"command\": \"/z/pigeon-hook cursor sessionStart\"},\n"
	    "  { \"command\": \"b\" },\n"
	    "  {\"command\": \"/w/pigeon-hook cursor sessionStart\"}\n]}}";
	static const char want[] =
	    "{\"version\": 1, \"hooks\": {\"sessionStart\": [\n"
	    "  {\"command\":  \"a\"},\n"
	    "  { \"command\": \"b\" }\n]}}";
	char *out;
	int changed;

	out = merge_out(PGN_HOST_CURSOR, in, &changed);
	CHECK_INT(changed, 1);
	CHECK_STR(out, want);
	free(out);
	/* Install puts its one entry after the foreign ones. */
	out = merge_in(PGN_HOST_CURSOR, in, HOOK, &changed);
	CHECK(out != NULL && strstr(out, "\"a\"") < strstr(out, "\"b\"") &&
	    strstr(out, "\"b\"") < strstr(out, HOOK " cursor sessionStart"));
	check_one_entry_per_event(PGN_HOST_CURSOR, out, HOOK);
	free(out);
}

/*
 * The events added since the first two (after a tool, before a stop)
 * already holding the user's own entries: Pigeon's goes after them, and
 * uninstall gives every byte back, for each host (CRLF, tabs, one line).
 */
static void
test_new_events_shared_with_foreign_entries_go_back_byte_exact(void)
{
	const struct pgn_host_info *hi;
	char in[1024], item[128], cmd2[256], cmd3[256], *out;
	const char *ev2, *ev3, *mine;
	int h;

	EACH_COMMAND_HOST(h)
	{
		hi = pgn_host_get((pgn_host)h);
		ev2 = hi->events[PGN_EVENT_AFTER_TOOL];
		ev3 = hi->events[PGN_EVENT_STOP];
		snprintf(cmd2, sizeof(cmd2), "%s %s %s", HOOK, hi->name, ev2);
		snprintf(cmd3, sizeof(cmd3), "%s %s %s", HOOK, hi->name, ev3);
		snprintf(item, sizeof(item), "%s",
		    hi->shape == PGN_SHAPE_FLAT ?
		        "{ \"command\": \"mine\", \"loop_limit\": 2 }" :
		        "{ \"matcher\": \"*\", \"hooks\": [ { \"type\": "
		        "\"command\", \"command\": \"mine\" } ] }");
		snprintf(in, sizeof(in),
		    "{\r\n\t\"hooks\": {\r\n\t\t\"%s\": [ %s ],\r\n"
		    "\t\t\"%s\": [\r\n\t\t\t%s\r\n\t\t]\r\n\t}\r\n}\r\n",
		    ev2, item, ev3, item);
		out = round_trip((pgn_host)h, in, strlen(in), NULL);
		check_one_entry_per_event((pgn_host)h, out, HOOK);
		CHECK_INT(count(out, "\"mine\""), 2);
		/* Each array: the user's entry, then Pigeon's. */
		mine = out != NULL ? strstr(out, "\"mine\"") : NULL;
		CHECK(mine != NULL && mine < strstr(out, cmd2) &&
		    strstr(out, cmd2) < strstr(mine + 1, "\"mine\"") &&
		    strstr(mine + 1, "\"mine\"") < strstr(out, cmd3));
		free(out);
		file_round_trip((pgn_host)h, in, strlen(in));
		/* The same on one line. */
		snprintf(in, sizeof(in),
		    "{\"hooks\":{\"%s\":[%s],\"%s\":[%s]}}", ev3, item, ev2,
		    item);
		out = round_trip((pgn_host)h, in, strlen(in), NULL);
		CHECK(out != NULL && strchr(out, '\n') == NULL);
		free(out);
	}
}

static void
test_reinstall_changes_no_byte(void)
{
	static const char in[] = "{\n    \"a\": 1\n}";
	char *once, *twice;
	int changed, h;

	EACH_COMMAND_HOST(h)
	{
		once = merge_in((pgn_host)h, in, HOOK, &changed);
		CHECK_INT(changed, 1);
		twice = merge_in((pgn_host)h, once, HOOK, &changed);
		CHECK_INT(changed, 0);
		CHECK_STR(twice, once);
		free(twice);
		free(once);
	}
}

static void
test_duplicate_key_is_refused_naming_it(void)
{
	/* Deep inside: the error names the key after its node is freed. */
	static const char in[] =
	    "{\"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": "
	    "\"command\", \"command\": \"a\", \"command\": \"b\"}]}]}}";
	struct pgn_err err;
	char *out = NULL;
	int changed, h;

	EACH_COMMAND_HOST(h)
	{
		CHECK_INT(pgn_install_merge((pgn_host)h, in, strlen(in), HOOK,
		              &out, &changed, &err),
		    PGN_EINVAL);
		CHECK_STR(err.msg,
		    "is not strict JSON (the key \"command\" appears twice in one object)");
		CHECK(out == NULL);
	}
}

static void
test_nesting_is_bounded(void)
{
	struct pgn_err err;
	char in[4 * PGN_MAX_JSON_DEPTH + 64], *out = NULL;
	size_t i, n = 0;
	int changed;

	/* The root and PGN_MAX_JSON_DEPTH - 1 arrays: accepted. */
	n += (size_t)snprintf(in, sizeof(in), "{\"a\":");
	for (i = 1; i < PGN_MAX_JSON_DEPTH; i++)
		in[n++] = '[';
	for (i = 1; i < PGN_MAX_JSON_DEPTH; i++)
		in[n++] = ']';
	in[n++] = '}';
	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, in, n, HOOK, &out,
	              &changed, &err),
	    PGN_OK);
	free(out);
	/* One more: refused. */
	memmove(in + 6, in + 5, n - 5);
	in[5] = '[';
	memmove(in + n + 1 - 1, in + n - 1, 1);
	in[n - 1] = ']';
	n++;
	CHECK_INT(pgn_install_merge(PGN_HOST_CLAUDE, in, n, HOOK, &out,
	              &changed, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "not valid JSON");
}

static void
test_hard_linked_config_is_edited_in_place(void)
{
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], other[PATH_MAX];
	char save[PATH_MAX];
	static const char orig[] = "{\n  \"model\": \"x\"\n}\n";
	struct stat a, b;
	char *data;
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".claude");
	h_mkdir(dir);
	h_join(other, sizeof(other), h_tmp, "dotfiles-settings.json");
	suffixed(path, ".pigeon-save", save, sizeof(save));
	h_write_file(other, orig, strlen(orig));
	REQUIRE(link(other, path) == 0);
	install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
	CHECK(stat(path, &a) == 0 && stat(other, &b) == 0);
	CHECK(a.st_ino == b.st_ino && a.st_nlink == 2);
	data = h_read_file(other, &n);
	check_one_entry_per_event(PGN_HOST_CLAUDE, data, HOOK);
	free(data);
	CHECK(absent(save));
	uninstall_ok(PGN_HOST_CLAUDE, NULL);
	CHECK(stat(path, &a) == 0 && a.st_ino == b.st_ino && a.st_nlink == 2);
	CHECK(file_is(other, orig, strlen(orig)));
	CHECK(absent(save));
	unlink(other);
	unlink(path);
	env_restore();
}

static void
test_interrupted_in_place_write_stops_the_next_one(void)
{
	struct pgn_install_result res;
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], other[PATH_MAX];
	struct pgn_err err;
	char save[PATH_MAX];
	static const char orig[] = "{}";

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".claude");
	h_mkdir(dir);
	h_join(other, sizeof(other), h_tmp, "linked.json");
	suffixed(path, ".pigeon-save", save, sizeof(save));
	h_write_file(other, orig, 2);
	REQUIRE(link(other, path) == 0);
	h_write_file(save, "{\"old\":1}", 9);
	CHECK_INT(apply(PGN_HOST_CLAUDE, NULL, HOOK, 0, 0, &res, &err),
	    PGN_EIO);
	CHECK_CONTAINS(err.msg, "was interrupted");
	CHECK_CONTAINS(err.msg, save);
	CHECK(strchr(err.msg, '\n') == NULL);
	CHECK(file_is(path, orig, 2));
	CHECK(file_is(save, "{\"old\":1}", 9));
	pgn_install_result_release(&res);
	unlink(save);
	unlink(other);
	unlink(path);
	env_restore();
}

static void
test_existing_bak_is_kept_byte_identical_through_install_and_uninstall(void)
{
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], ubak[PATH_MAX];
	static const char orig[] = "{\n  \"model\": \"opus\"\n}\n";
	static const char other[] = "{\"model\":\"sonnet\"} my notes";
	const char *baks[] = {orig, other, "{}"};
	size_t i;

	for (i = 0; i < H_COUNT(baks); i++) {
		use_home(home, sizeof(home));
		user_config(PGN_HOST_CLAUDE, path, sizeof(path));
		h_join(dir, sizeof(dir), home, ".claude");
		ensure_dir(dir);
		suffixed(path, ".bak", ubak, sizeof(ubak));
		/* The user's own backup, even one equal to the file. */
		h_write_file(ubak, baks[i], strlen(baks[i]));
		h_write_file(path, orig, strlen(orig));
		install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
		CHECK(file_is(ubak, baks[i], strlen(baks[i])));
		uninstall_ok(PGN_HOST_CLAUDE, NULL);
		CHECK(file_is(ubak, baks[i], strlen(baks[i])));
		CHECK(file_is(path, orig, strlen(orig)));
		/* A file Pigeon created goes, the user's .bak stays. */
		REQUIRE(unlink(path) == 0);
		install_ok(PGN_HOST_CLAUDE, NULL, HOOK);
		uninstall_ok(PGN_HOST_CLAUDE, NULL);
		CHECK(absent(path));
		CHECK(file_is(ubak, baks[i], strlen(baks[i])));
		REQUIRE(unlink(ubak) == 0);
		env_restore();
	}
}

static void
test_filled_empty_containers_come_back_from_the_backup(void)
{
	static const char *const ins[] = {"{ }", "{\"hooks\": {}}\n",
	    "{\n  \"hooks\": { \"SessionStart\": [ ] }\n}\n", " \n\t"};
	size_t i;

	for (i = 0; i < H_COUNT(ins); i++)
		file_round_trip(PGN_HOST_CLAUDE, ins[i], strlen(ins[i]));
}

/* ---- permissions (issue 10 item 5, decision 0073) ------------------- */

/* h_tmp/DIR/pigeon-hook and, with 'cli', an executable pigeon beside it. */
static void
make_bin(const char *dir, int cli, char *hook, size_t len)
{
	char d[PATH_MAX], p[PATH_MAX];

	H_PATH(d, dir);
	ensure_dir(d);
	h_join(hook, len, d, "pigeon-hook");
	h_write_file(hook, "#!/bin/sh\n", 10);
	REQUIRE(chmod(hook, 0755) == 0);
	if (cli) {
		h_join(p, sizeof(p), d, "pigeon");
		h_write_file(p, "#!/bin/sh\n", 10);
		REQUIRE(chmod(p, 0755) == 0);
	}
}

static pgn_status
apply_perm(pgn_host h, const char *hook, int remove, int dry_run,
    struct pgn_install_result *res, struct pgn_err *err)
{
	struct pgn_install req = {0};

	req.host = h;
	req.hook = hook;
	req.remove = remove;
	req.dry_run = dry_run;
	req.permissions = 1;
	return pgn_install_apply(&req, res, err);
}

static void
perm_ok(pgn_host h, const char *hook, int remove)
{
	struct pgn_install_result res;
	struct pgn_err err;

	CHECK_INT(apply_perm(h, hook, remove, 0, &res, &err), PGN_OK);
	CHECK_STR(err.msg, "");
	pgn_install_result_release(&res);
}

/* $PIGEON_HOME = h_tmp/state (created); its resolved path in 'root'. */
static void
use_state(char *root, size_t len)
{
	h_join(root, len, h_tmp, "state");
	ensure_dir(root);
	REQUIRE(setenv("PIGEON_HOME", root, 1) == 0);
}

static void
test_claude_rules_name_the_cli_beside_the_hook_and_go_byte_exact(void)
{
	static const char *const inputs[] = {
	    ("{\n    \"permissions\": {\n        \"allow\": [\n            "
	     "\"Bash(ls:*)\",\n            \"Read(~/notes)\"\n        ],\n"
	     "        \"deny\": [\"Bash(rm:*)\"]\n    },\n    \"model\": "
	     "\"opus\"\n}\n"),
	    "{\"permissions\":{\"allow\":[\"Bash(git status)\"]}}",
	    ("{\r\n\t\"permissions\": {\r\n\t\t\"defaultMode\": \"plan\"\r\n"
	     "\t}\r\n}\r\n"),
	    "{\n  \"model\": \"opus\"\n}\n",
	};
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], hook[PATH_MAX];
	char rule[PATH_MAX + 64], bak[PATH_MAX], *got;
	const char *subs[] = {"send", "read", "wait", "status"};
	size_t i, k, n;

	use_home(home, sizeof(home));
	make_bin("bin", 1, hook, sizeof(hook));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".claude");
	ensure_dir(dir);
	bak_of(path, bak, sizeof(bak));
	for (i = 0; i < H_COUNT(inputs); i++) {
		h_write_file(path, inputs[i], strlen(inputs[i]));
		perm_ok(PGN_HOST_CLAUDE, hook, 0);
		got = h_read_file(path, &n);
		REQUIRE(got != NULL);
		for (k = 0; k < H_COUNT(subs); k++) {
			snprintf(rule, sizeof(rule),
			    "\"Bash(%s/bin/pigeon %s:*)\"", h_tmp, subs[k]);
			CHECK_INT(count(got, rule), 1);
			/* and as the instructions block writes it (0181) */
			snprintf(rule, sizeof(rule), "\"Bash(pigeon %s:*)\"",
			    subs[k]);
			CHECK_INT(count(got, rule), 1);
		}
		CHECK(i >= 2 ||
		    count(got, "Bash(l") + count(got, "git status") == 1);
		free(got);
		/* Idempotent: a second install changes no byte. */
		got = h_read_file(path, &n);
		perm_ok(PGN_HOST_CLAUDE, hook, 0);
		CHECK(got != NULL && file_is(path, got, n));
		free(got);
		perm_ok(PGN_HOST_CLAUDE, NULL, 1);
		CHECK(file_is(path, inputs[i], strlen(inputs[i])));
		CHECK(absent(bak));
	}
	/* A file Pigeon created goes again. */
	REQUIRE(unlink(path) == 0);
	perm_ok(PGN_HOST_CLAUDE, hook, 0);
	perm_ok(PGN_HOST_CLAUDE, NULL, 1);
	CHECK(absent(path));
	env_restore();
}

static void
test_claude_rules_quote_the_cli_as_the_introduction_does(void)
{
	char home[PATH_MAX], path[PATH_MAX], hook[PATH_MAX], want[PATH_MAX * 2];
	char *got;
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	make_bin("my dir", 1, hook, sizeof(hook));
	perm_ok(PGN_HOST_CLAUDE, hook, 0);
	got = h_read_file(path, &n);
	snprintf(want, sizeof(want), "\"Bash('%s/my dir/pigeon' send:*)\"",
	    h_tmp);
	CHECK_CONTAINS(got, want);
	/* The plain word too: pigeon send as a model writes it (0181). */
	CHECK_INT(count(got, "\"Bash(pigeon send:*)\""), 1);
	CHECK_INT(count(got, "\"Bash(pigeon thread:*)\""), 1);
	CHECK_INT(count(got, "Bash("), 14);
	free(got);
	/* No pigeon beside the hook: the introduction says plain pigeon. */
	make_bin("lone", 0, hook, sizeof(hook));
	perm_ok(PGN_HOST_CLAUDE, hook, 0);
	got = h_read_file(path, &n);
	CHECK_CONTAINS(got, "\"Bash(pigeon send:*)\"");
	CHECK_INT(count(got, "my dir/pigeon'"), 0); /* the old rules went */
	CHECK_INT(count(got, "Bash("), 7);
	free(got);
	perm_ok(PGN_HOST_CLAUDE, NULL, 1);
	CHECK(absent(path));
	env_restore();
}

static void
test_claude_lookalike_rules_are_not_pigeons(void)
{
	const char *in =
	    "{\"permissions\": {\"allow\": [\"Bash(/old/pigeon "
	    "send:*)\", \"Bash(/old/pigeon send --to x:*)\", "
	    "\"Bash(pigeon-x send:*)\", \"Bash(/a/pigeon push:*)\", "
	    "\"Bash(pigeon send)\"]}}\n";
	const char *out =
	    "{\"permissions\": {\"allow\": [\"Bash(/old/pigeon "
	    "send --to x:*)\", \"Bash(pigeon-x send:*)\", "
	    "\"Bash(/a/pigeon push:*)\", \"Bash(pigeon send)\"]}}\n";
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".claude");
	ensure_dir(dir);
	h_write_file(path, in, strlen(in));
	perm_ok(PGN_HOST_CLAUDE, NULL, 1);
	CHECK(file_is(path, out, strlen(out)));
	env_restore();
}

static void
test_codex_writable_root_is_added_and_removed_byte_exact(void)
{
	const char *in = "# my codex\r\nmodel = \"o3\"\r\n\r\n"
	                 "[sandbox_workspace_write]\r\nwritable_roots = [\r\n"
	                 "  \"/srv/data\", # shared\r\n]\r\nnetwork_access = "
	                 "true\r\n";
	char home[PATH_MAX], state[PATH_MAX], dir[PATH_MAX], toml[PATH_MAX];
	char hooks[PATH_MAX], want[PATH_MAX + 16], *got;
	struct pgn_install_state st;
	size_t n;

	use_home(home, sizeof(home));
	use_state(state, sizeof(state));
	h_join(dir, sizeof(dir), home, ".codex");
	ensure_dir(dir);
	h_join(toml, sizeof(toml), dir, "config.toml");
	h_join(hooks, sizeof(hooks), dir, "hooks.json");
	h_write_file(toml, in, strlen(in));
	perm_ok(PGN_HOST_CODEX, HOOK, 0);
	got = h_read_file(toml, &n);
	snprintf(want, sizeof(want), "  \"%s\",\r\n]", state);
	CHECK_CONTAINS(got, want);
	free(got);
	CHECK(pgn_install_inspect(PGN_HOST_CODEX, NULL, &st) == PGN_OK);
	CHECK_INT(st.perm, 1);
	CHECK_STR(st.perm_path, toml);
	pgn_install_state_release(&st);
	got = h_read_file(toml, &n);
	perm_ok(PGN_HOST_CODEX, HOOK, 0);
	CHECK(got != NULL && file_is(toml, got, n));
	free(got);
	perm_ok(PGN_HOST_CODEX, NULL, 1);
	CHECK(file_is(toml, in, strlen(in)));
	CHECK(absent(hooks));
	CHECK(pgn_install_inspect(PGN_HOST_CODEX, NULL, &st) == PGN_OK);
	CHECK_INT(st.perm, 0);
	pgn_install_state_release(&st);
	/* No config.toml: Pigeon creates it, and removes it again. */
	REQUIRE(unlink(toml) == 0);
	perm_ok(PGN_HOST_CODEX, HOOK, 0);
	CHECK(!absent(toml));
	perm_ok(PGN_HOST_CODEX, NULL, 1);
	CHECK(absent(toml) && absent(hooks));
	env_restore();
}

static void
test_uneditable_codex_toml_stops_the_install_before_any_write(void)
{
	const char *in = "sandbox_workspace_write.writable_roots = [\"/a\"]\n";
	char home[PATH_MAX], state[PATH_MAX], dir[PATH_MAX], toml[PATH_MAX];
	struct pgn_err err;
	char hooks[PATH_MAX];
	struct pgn_install_result res;

	use_home(home, sizeof(home));
	use_state(state, sizeof(state));
	h_join(dir, sizeof(dir), home, ".codex");
	ensure_dir(dir);
	h_join(toml, sizeof(toml), dir, "config.toml");
	h_join(hooks, sizeof(hooks), dir, "hooks.json");
	h_write_file(toml, in, strlen(in));
	CHECK_INT(apply_perm(PGN_HOST_CODEX, HOOK, 0, 0, &res, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "dotted key");
	CHECK_INT(err.hint, PGN_HINT_PERM_FIX);
	CHECK_CONTAINS(err.msg, toml);
	pgn_install_result_release(&res);
	CHECK(file_is(toml, in, strlen(in)));
	CHECK(absent(hooks));
	env_restore();
}

static void
test_codex_toml_with_a_key_defined_twice_stops_the_install_untouched(void)
{
	static const char *const bad[] = {
	    "model = \"o3\"\nmodel = \"o4\"\n",
	    "[tui]\nnotifications = true\nnotifications = false\n",
	    "profile.x = 1\n[profile]\n",
	    "mcp = { a = 1 }\nmcp.b = 2\n",
	};
	const char *hooks_in = "{\"hooks\": {}}\n";
	char home[PATH_MAX], state[PATH_MAX], dir[PATH_MAX], toml[PATH_MAX];
	struct pgn_err err;
	char hooks[PATH_MAX];
	struct pgn_install_result res;
	size_t i;
	int rm;

	use_home(home, sizeof(home));
	use_state(state, sizeof(state));
	h_join(dir, sizeof(dir), home, ".codex");
	ensure_dir(dir);
	h_join(toml, sizeof(toml), dir, "config.toml");
	h_join(hooks, sizeof(hooks), dir, "hooks.json");
	for (i = 0; i < H_COUNT(bad); i++)
		for (rm = 0; rm < 2; rm++) {
			h_write_file(toml, bad[i], strlen(bad[i]));
			h_write_file(hooks, hooks_in, strlen(hooks_in));
			CHECK_INT(apply_perm(PGN_HOST_CODEX, rm ? NULL : HOOK,
			              rm, 0, &res, &err),
			    PGN_EINVAL);
			CHECK_CONTAINS(err.msg, "twice (lines");
			CHECK_CONTAINS(err.msg, "not valid TOML");
			CHECK_CONTAINS(err.msg, toml);
			pgn_install_result_release(&res);
			CHECK(file_is(toml, bad[i], strlen(bad[i])));
			CHECK(file_is(hooks, hooks_in, strlen(hooks_in)));
		}
	env_restore();
}

static void
test_codex_empty_config_toml_stays_empty_after_install_and_uninstall(void)
{
	char home[PATH_MAX], state[PATH_MAX], dir[PATH_MAX], toml[PATH_MAX];
	char hooks[PATH_MAX], *got;
	size_t n;

	use_home(home, sizeof(home));
	use_state(state, sizeof(state));
	h_join(dir, sizeof(dir), home, ".codex");
	ensure_dir(dir);
	h_join(toml, sizeof(toml), dir, "config.toml");
	h_join(hooks, sizeof(hooks), dir, "hooks.json");
	h_write_file(toml, "", 0);
	perm_ok(PGN_HOST_CODEX, HOOK, 0);
	got = h_read_file(toml, &n);
	CHECK(got != NULL && n > 0 && got[0] == '\n');
	CHECK_CONTAINS(got, "[sandbox_workspace_write] # " TE_MARK);
	free(got);
	perm_ok(PGN_HOST_CODEX, NULL, 1);
	CHECK(!absent(toml));
	CHECK(file_is(toml, "", 0));
	CHECK(absent(hooks));
	env_restore();
}

static void
test_codex_table_pigeon_made_goes_even_with_a_table_added_after_it(void)
{
	const char *orig = "model = \"o3\"\n";
	const char *later = "\n[tui]\nnotifications = true\n";
	char home[PATH_MAX], state[PATH_MAX], dir[PATH_MAX], toml[PATH_MAX];
	char want[256], *got;
	size_t n;
	FILE *fp;

	use_home(home, sizeof(home));
	use_state(state, sizeof(state));
	h_join(dir, sizeof(dir), home, ".codex");
	ensure_dir(dir);
	h_join(toml, sizeof(toml), dir, "config.toml");
	h_write_file(toml, orig, strlen(orig));
	perm_ok(PGN_HOST_CODEX, HOOK, 0);
	/* The user adds a table after Pigeon's. */
	fp = fopen(toml, "a");
	REQUIRE(fp != NULL);
	fputs(later, fp);
	fclose(fp);
	perm_ok(PGN_HOST_CODEX, NULL, 1);
	snprintf(want, sizeof(want), "%s%s", orig, later);
	got = h_read_file(toml, &n);
	CHECK_STR(got, want);
	CHECK(got == NULL || strstr(got, "sandbox_workspace_write") == NULL);
	free(got);
	env_restore();
}

static void
test_gemini_policy_is_pigeons_own_file(void)
{
	char home[PATH_MAX], hook[PATH_MAX], pol[PATH_MAX], want[PATH_MAX * 8];
	struct pgn_err err;
	char settings[PATH_MAX], dir[PATH_MAX], *got;
	struct pgn_install_result res;
	const char *mine = "[[rule]]\ntoolName = \"x\"\n";
	size_t n;

	use_home(home, sizeof(home));
	make_bin("bin", 1, hook, sizeof(hook));
	h_join(pol, sizeof(pol), home, ".gemini/policies/pigeon.toml");
	user_config(PGN_HOST_GEMINI, settings, sizeof(settings));
	perm_ok(PGN_HOST_GEMINI, hook, 0);
	got = h_read_file(pol, &n);
	REQUIRE(got != NULL);
	snprintf(want, sizeof(want),
	    "commandPrefix = [\"%s/bin/pigeon send\", \"%s/bin/pigeon read\", "
	    "\"%s/bin/pigeon wait\", \"%s/bin/pigeon status\", "
	    "\"%s/bin/pigeon ack\", \"%s/bin/pigeon lease\", "
	    "\"%s/bin/pigeon thread\"]\n",
	    h_tmp, h_tmp, h_tmp, h_tmp, h_tmp, h_tmp, h_tmp);
	CHECK_CONTAINS(got, want);
	CHECK_CONTAINS(got, "toolName = \"run_shell_command\"\n");
	CHECK_CONTAINS(got, "decision = \"allow\"\npriority = 100\n");
	perm_ok(PGN_HOST_GEMINI, hook, 0);
	CHECK(file_is(pol, got, n));
	free(got);
	perm_ok(PGN_HOST_GEMINI, NULL, 1);
	CHECK(absent(pol) && absent(settings));
	/* install made ~/.gemini/policies: uninstall took it, empty. */
	h_join(dir, sizeof(dir), home, ".gemini/policies");
	CHECK(absent(dir));
	/* A policy of the same name that is not Pigeon's stops it all. */
	ensure_dir(dir);
	h_write_file(pol, mine, strlen(mine));
	CHECK_INT(apply_perm(PGN_HOST_GEMINI, hook, 0, 0, &res, &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "is not Pigeon's");
	pgn_install_result_release(&res);
	CHECK(file_is(pol, mine, strlen(mine)) && absent(settings));
	perm_ok(PGN_HOST_GEMINI, NULL, 1);
	CHECK(file_is(pol, mine, strlen(mine)));
	env_restore();
}

static void
test_no_permissions_and_dry_run(void)
{
	char home[PATH_MAX], state[PATH_MAX], toml[PATH_MAX], pol[PATH_MAX];
	struct pgn_err err;
	char path[PATH_MAX], *got;
	struct pgn_install_result res;
	size_t n;
	int h;

	use_home(home, sizeof(home));
	use_state(state, sizeof(state));
	h_join(toml, sizeof(toml), home, ".codex/config.toml");
	h_join(pol, sizeof(pol), home, ".gemini/policies/pigeon.toml");
	/* Without the flag (--no-permissions): only the hooks. */
	EACH_COMMAND_HOST(h)
	install_ok((pgn_host)h, NULL, HOOK);
	CHECK(absent(toml) && absent(pol));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	got = h_read_file(path, &n);
	CHECK_INT(count(got, "permissions"), 0);
	free(got);
	EACH_COMMAND_HOST(h)
	uninstall_ok((pgn_host)h, NULL);
	/* A dry run shows the second file's diff and writes nothing. */
	CHECK_INT(apply_perm(PGN_HOST_CODEX, HOOK, 0, 1, &res, &err), PGN_OK);
	CHECK(res.perm_changed);
	CHECK_STR(res.perm_path, toml);
	CHECK_CONTAINS(res.perm_diff,
	    "+[sandbox_workspace_write] # " TE_MARK "\n");
	CHECK_CONTAINS(res.perm_diff, "+writable_roots = [\"");
	CHECK_CONTAINS(res.perm_what, state);
	pgn_install_result_release(&res);
	CHECK(absent(toml));
	/* Cursor has none, and says so. */
	CHECK_INT(apply_perm(PGN_HOST_CURSOR, HOOK, 0, 1, &res, &err), PGN_OK);
	CHECK(res.perm_path == NULL && !res.perm_changed);
	CHECK_CONTAINS(res.perm_what, "none");
	pgn_install_result_release(&res);
	env_restore();
}

/*
 * Uninstall removes ~/.gemini/policies only if install created it and
 * it is empty: one that was there stays, and so does one holding a file
 * of the user's.
 */
static void
test_gemini_policies_dir_goes_only_if_pigeon_made_it_and_it_is_empty(void)
{
	char home[PATH_MAX], hook[PATH_MAX], dir[PATH_MAX], other[PATH_MAX];
	char *got;
	size_t n;

	use_home(home, sizeof(home));
	make_bin("bin", 1, hook, sizeof(hook));
	h_join(dir, sizeof(dir), home, ".gemini/policies");
	h_join(other, sizeof(other), dir, "mine.toml");
	/* Made by install, something of the user's added since: stays. */
	perm_ok(PGN_HOST_GEMINI, hook, 0);
	h_write_file(other, "# mine\n", 7);
	perm_ok(PGN_HOST_GEMINI, NULL, 1);
	CHECK(!absent(dir) && !absent(other));
	/* There before install: stays, even empty. */
	REQUIRE(unlink(other) == 0);
	perm_ok(PGN_HOST_GEMINI, hook, 0);
	h_join(other, sizeof(other), dir, "pigeon.toml");
	got = h_read_file(other, &n);
	REQUIRE(got != NULL);
	CHECK(strstr(got, "created this directory") == NULL);
	free(got);
	perm_ok(PGN_HOST_GEMINI, NULL, 1);
	CHECK(absent(other));
	CHECK(!absent(dir));
	/* Made by install, installed twice: the mark stays, it goes. */
	REQUIRE(rmdir(dir) == 0);
	perm_ok(PGN_HOST_GEMINI, hook, 0);
	perm_ok(PGN_HOST_GEMINI, hook, 0);
	got = h_read_file(other, &n);
	REQUIRE(got != NULL);
	CHECK_CONTAINS(got, "created this directory");
	free(got);
	perm_ok(PGN_HOST_GEMINI, NULL, 1);
	CHECK(absent(dir));
	env_restore();
}

/* ---- Claude's idle wake (--rewake, decisions 0081 and 0082) --------- */

static pgn_status
apply_rewake(const char *hook, int rewake, int remove, struct pgn_err *err)
{
	struct pgn_install_result res;
	struct pgn_install req = {0};
	pgn_status st;

	req.host = PGN_HOST_CLAUDE;
	req.hook = hook;
	req.remove = remove;
	req.rewake = rewake;
	st = pgn_install_apply(&req, &res, err);
	pgn_install_result_release(&res);
	return st;
}

/* The idle wake's entry of Stop in 'text', or NULL; checks it is one. */
static cJSON *
rewake_entry(const char *text)
{
	cJSON *root, *stop, *it, *hd, *cmd, *found = NULL;
	size_t n = 0;

	root = cJSON_Parse(text);
	REQUIRE(root != NULL);
	stop = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(root, "hooks"), "Stop");
	cJSON_ArrayForEach(it, stop)
	{
		cJSON_ArrayForEach(hd, cJSON_GetObjectItem(it, "hooks"))
		{
			cmd = cJSON_GetObjectItem(hd, "command");
			if (cJSON_IsString(cmd) &&
			    strstr(cmd->valuestring, " --rewake") != NULL) {
				n++;
				cJSON_Delete(found);
				found = cJSON_Duplicate(hd, 1);
			}
		}
	}
	CHECK(n <= 1);
	cJSON_Delete(root);
	return found;
}

static void
test_install_rewake_adds_one_async_stop_entry_beside_the_ordinary(void)
{
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX], dir[PATH_MAX];
	char *got, *want;
	struct pgn_install_state st;
	cJSON *e, *w;
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	h_join(dir, sizeof(dir), home, ".claude");
	ensure_dir(dir);
	want = host_fixture(PGN_HOST_CLAUDE, "odd.json", &n);
	h_write_file(path, want, n);
	CHECK_INT(apply_rewake(HOOK, 1, 0, &err), PGN_OK);
	got = h_read_file(path, &n);
	REQUIRE(got != NULL);
	/* The ordinary Stop entry is there once, the idle wake once. */
	CHECK_INT(count(got, "\"" GUARDED(HOOK, "claude Stop") "\""), 1);
	CHECK_INT(count(got, "pigeon-hook"),
	    (pgn_host_nevents(PGN_HOST_CLAUDE) + 1) * 2);
	CHECK_CONTAINS(got, "\"beep\""); /* the user's own Stop hook */
	e = rewake_entry(got);
	w = cJSON_Parse("{\"type\":\"command\",\"command\":\"" GUARDED(HOOK,
	    "claude Stop --rewake") "\",\"asyncRewake\":true,"
	                            "\"timeout\":600,\"rewakeMessage\":\"Pigeon woke you: "
	                            "mail arrived while you were idle.\"}");
	CHECK(e != NULL && cJSON_Compare(e, w, 1));
	cJSON_Delete(e);
	cJSON_Delete(w);
	CHECK(pgn_install_inspect(PGN_HOST_CLAUDE, NULL, &st) == PGN_OK);
	CHECK_INT(st.rewake, 1);
	CHECK_INT(st.entries[PGN_EVENT_STOP], 1);
	pgn_install_state_release(&st);
	/* Sticky: installing again, with or without it, changes nothing. */
	CHECK_INT(apply_rewake(HOOK, 0, 0, &err), PGN_OK);
	CHECK(file_is(path, got, n));
	CHECK_INT(apply_rewake(HOOK, 1, 0, &err), PGN_OK);
	CHECK(file_is(path, got, n));
	/* A new hook path moves both entries along. */
	CHECK_INT(apply_rewake("/usr/bin/pigeon-hook", 0, 0, &err), PGN_OK);
	free(got);
	got = h_read_file(path, &n);
	CHECK_INT(count(got,
	              "\"" GUARDED("/usr/bin/pigeon-hook",
	                  "claude Stop --rewake") "\""),
	    1);
	CHECK_INT(count(got, HOOK), 0);
	free(got);
	/* --no-rewake takes it away, leaving the install as without it. */
	CHECK_INT(apply_rewake(HOOK, -1, 0, &err), PGN_OK);
	got = h_read_file(path, &n);
	e = rewake_entry(got);
	CHECK(e == NULL);
	CHECK_INT(count(got, "pigeon-hook"),
	    pgn_host_nevents(PGN_HOST_CLAUDE) * 2);
	free(got);
	/* Uninstall takes everything, the original bytes come back. */
	CHECK_INT(apply_rewake(HOOK, 1, 0, &err), PGN_OK);
	CHECK_INT(apply_rewake(NULL, 0, 1, &err), PGN_OK);
	CHECK(file_is(path, want, strlen(want)));
	free(want);
	env_restore();
}

static void
test_install_rewake_then_no_rewake_is_byte_exact(void)
{
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX], *plain;
	size_t n;

	use_home(home, sizeof(home));
	user_config(PGN_HOST_CLAUDE, path, sizeof(path));
	CHECK_INT(apply_rewake(HOOK, 0, 0, &err), PGN_OK);
	plain = h_read_file(path, &n);
	REQUIRE(plain != NULL);
	CHECK_INT(apply_rewake(HOOK, 1, 0, &err), PGN_OK);
	CHECK(!file_is(path, plain, n));
	CHECK_INT(apply_rewake(HOOK, -1, 0, &err), PGN_OK);
	CHECK(file_is(path, plain, n));
	/* Only Claude has it. */
	{
		struct pgn_install_result res;
		struct pgn_install req = {0};

		req.host = PGN_HOST_CODEX;
		req.hook = HOOK;
		req.rewake = 1;
		CHECK_INT(pgn_install_apply(&req, &res, &err), PGN_EINVAL);
		CHECK_CONTAINS(err.msg, "only Claude Code has an idle wake");
		pgn_install_result_release(&res);
	}
	free(plain);
	env_restore();
}

static const struct h_test tests[] = {
    H_TEST(test_command_is_pigeon_by_first_word_basename),
    H_TEST(test_nul_escape_is_refused_not_rewritten),
    H_TEST(test_command_is_not_pigeon_for_others),
    H_TEST(test_guarded_command_is_pigeon_and_names_its_program),
    H_TEST(test_install_guards_every_command_host),
    H_TEST(test_install_into_missing_file_matches_golden),
    H_TEST(test_install_into_empty_or_blank_file_creates_the_object),
    H_TEST(test_install_keeps_foreign_entries_and_unknown_keys_in_order),
    H_TEST(test_install_keeps_an_existing_cursor_version),
    H_TEST(test_install_twice_changes_nothing),
    H_TEST(test_second_install_keeps_bytes_even_if_reformatted),
    H_TEST(test_up_to_date_entry_keeps_its_place_after_a_reorder),
    H_TEST(test_install_replaces_an_old_pigeon_entry),
    H_TEST(test_install_removes_pigeon_entries_from_other_events),
    H_TEST(test_install_writes_only_the_hosts_five_events),
    H_TEST(test_hook_path_is_quoted_only_when_needed),
    H_TEST(test_install_refuses_a_hook_that_is_not_an_absolute_pigeon_hook),
    H_TEST(test_invalid_json_is_refused_saying_where),
    H_TEST(test_nul_byte_is_refused),
    H_TEST(test_wrong_shapes_are_refused),
    H_TEST(test_other_keys_under_hooks_may_be_anything),
    H_TEST(test_config_over_max_is_refused),
    H_TEST(test_uninstall_without_pigeon_entries_changes_nothing),
    H_TEST(test_uninstall_merge_is_the_inverse_of_install_semantically),
    H_TEST(test_uninstall_leaves_the_skeleton_of_a_new_file),
    H_TEST(test_uninstall_keeps_foreign_handlers_sharing_a_group),
    H_TEST(test_install_uninstall_on_missing_file_leaves_it_absent),
    H_TEST(test_install_uninstall_on_odd_file_is_byte_identical),
    H_TEST(test_install_uninstall_on_blank_file_is_byte_identical),
    H_TEST(test_install_uninstall_on_foreign_file_is_byte_identical),
    H_TEST(test_uninstall_keeps_a_user_edit_made_after_install),
    H_TEST(test_bak_is_written_only_for_the_first_original),
    H_TEST(test_unreadable_bak_is_kept_not_restored),
    H_TEST(test_install_creates_the_config_directory_and_a_0644_file),
    H_TEST(test_install_keeps_the_files_mode),
    H_TEST(test_user_env_overrides_are_respected),
    H_TEST(test_project_config_paths),
    H_TEST(test_dry_run_writes_nothing_and_shows_the_diff),
    H_TEST(test_diff_is_minimal),
    H_TEST(test_invalid_json_file_is_left_untouched),
    H_TEST(test_oversized_file_is_refused_untouched),
    H_TEST(test_uninstall_of_missing_or_foreign_file_changes_nothing),
    H_TEST(test_codex_install_explains_trust),
    H_TEST(test_symlinked_config_stays_a_link),
    H_TEST(test_missing_home_is_an_error),
    H_TEST(
        test_big_integers_and_1e400_survive_install_and_uninstall_byte_exact),
    H_TEST(test_bom_is_kept),
    H_TEST(test_crlf_is_kept_and_inserted_lines_use_crlf),
    H_TEST(test_every_line_end_style_is_kept_and_used_by_inserted_lines),
    H_TEST(test_mixed_line_ends_round_trip_and_inserted_lines_use_the_first),
    H_TEST(test_gemini_line_comment_in_a_lone_cr_file_is_refused),
    H_TEST(test_two_four_space_and_tab_indentation_is_kept_and_matched),
    H_TEST(test_missing_final_newline_is_kept),
    H_TEST(test_gemini_settings_with_comments_install_and_uninstall_byte_exact),
    H_TEST(test_foreign_entries_keep_their_order_and_bytes),
    H_TEST(test_new_events_shared_with_foreign_entries_go_back_byte_exact),
    H_TEST(test_reinstall_changes_no_byte),
    H_TEST(test_duplicate_key_is_refused_naming_it),
    H_TEST(test_nesting_is_bounded),
    H_TEST(test_hard_linked_config_is_edited_in_place),
    H_TEST(test_interrupted_in_place_write_stops_the_next_one),
    H_TEST(
        test_existing_bak_is_kept_byte_identical_through_install_and_uninstall),
    H_TEST(test_filled_empty_containers_come_back_from_the_backup),
    H_TEST(test_claude_rules_name_the_cli_beside_the_hook_and_go_byte_exact),
    H_TEST(test_claude_rules_quote_the_cli_as_the_introduction_does),
    H_TEST(test_claude_lookalike_rules_are_not_pigeons),
    H_TEST(test_codex_writable_root_is_added_and_removed_byte_exact),
    H_TEST(test_uneditable_codex_toml_stops_the_install_before_any_write),
    H_TEST(
        test_codex_toml_with_a_key_defined_twice_stops_the_install_untouched),
    H_TEST(
        test_codex_empty_config_toml_stays_empty_after_install_and_uninstall),
    H_TEST(test_codex_table_pigeon_made_goes_even_with_a_table_added_after_it),
    H_TEST(test_gemini_policy_is_pigeons_own_file),
    H_TEST(
        test_gemini_policies_dir_goes_only_if_pigeon_made_it_and_it_is_empty),
    H_TEST(test_install_rewake_adds_one_async_stop_entry_beside_the_ordinary),
    H_TEST(test_install_rewake_then_no_rewake_is_byte_exact),
    H_TEST(test_no_permissions_and_dry_run),
};

int
main(void)
{
	int code;
	size_t i;

	env_save();
	code = h_run(tests, H_COUNT(tests));
	env_restore();
	for (i = 0; i < H_COUNT(env_vars); i++)
		free(saved_env[i]);
	return code;
}
