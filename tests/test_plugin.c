/*
 * The plugin drop (opencode): pigeon install writes Pigeon's plugin into
 * the host's plugin directory, uninstall removes exactly what install
 * wrote, and a directory or file that is not Pigeon's is never touched.
 * Then opencode's idle wake, on SQLite and (PGN_TEST_PG) PostgreSQL: the
 * library's turns, and the installed plugin run under node against a
 * stub opencode client, its hook this test's own executable (linked as
 * pigeon-hook, it is pigeon-hook): nothing claimed goes unseen.
 */
#include <signal.h>
#include <sys/wait.h>

#include "harness.h"
#include "backends.h"
#include "hook_int.h"
#include "hookio.h" /* hookcli */
#include "store_int.h"
#include "pigeon/setup.h"

#define HOOK "/opt/pigeon/bin/pigeon-hook"
#define MARK "// Written by pigeon install opencode;"
/* Concurrent installs in the race test. */
#define RACERS 8

static void
use_home(char *home, size_t len)
{
	h_join(home, len, h_tmp, "home");
	REQUIRE(mkdir(home, 0755) == 0);
	REQUIRE(setenv("HOME", home, 1) == 0);
	unsetenv("XDG_CONFIG_HOME");
}

static pgn_status
apply(const char *project, const char *hook, int remove, int dry_run,
    struct pgn_install_result *res, struct pgn_err *err)
{
	struct pgn_install req = {0};

	req.host = PGN_HOST_OPENCODE;
	req.project = project;
	req.hook = hook;
	req.remove = remove;
	req.dry_run = dry_run;
	req.permissions = 1;
	pgn_err_clear(err);
	return pgn_install_apply(&req, res, err);
}

/* Every path under 'dir', one a line, sorted: a tree to compare. */
static char *
tree(const char *dir)
{
	char cmd[PATH_MAX + 64], *out;
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "cd '%s' && find . | LC_ALL=C sort", dir);
	f = popen(cmd, "r");
	REQUIRE(f != NULL);
	out = calloc(1, 65536);
	REQUIRE(out != NULL);
	n = fread(out, 1, 65535, f);
	out[n] = '\0';
	REQUIRE(pclose(f) == 0);
	return out;
}

static void
test_install_writes_the_plugin_and_uninstall_leaves_the_tree_as_it_was(void)
{
	struct pgn_install_result res;
	struct pgn_install_state s;
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX];
	char *before, *after, *text;
	size_t n;
	int e;

	use_home(home, sizeof(home));
	before = tree(home);
	h_join(path, sizeof(path), home, ".config/opencode/plugin/pigeon.js");
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, &err) == PGN_OK);
	CHECK_STR(err.msg, "");
	CHECK_STR(res.path, path);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.perm_what, "none: opencode's default permissions");
	pgn_install_result_release(&res);
	text = h_read_file(path, &n);
	REQUIRE(text != NULL);
	CHECK(strncmp(text, MARK, strlen(MARK)) == 0);
	CHECK_CONTAINS(text, "const HOOK = \"" HOOK "\";\n");
	CHECK_CONTAINS(text, "const TIMEOUT_MS = 5000;\n");
	/* It records the three directories it made for itself. */
	CHECK_CONTAINS(text, "/home/.config\",\"");
	CHECK_CONTAINS(text, "/home/.config/opencode/plugin\"];\n");
	free(text);
	/* Doctor sees it: every event the row has, and the hook. */
	CHECK_INT(pgn_install_inspect(PGN_HOST_OPENCODE, NULL, &s), PGN_OK);
	CHECK_INT(s.exists, 1);
	CHECK_STR(s.hook, HOOK);
	for (e = 0; e < PGN_NEVENTS; e++)
		CHECK_INT(s.entries[e],
		    pgn_host_get(PGN_HOST_OPENCODE)->events[e] != NULL);
	CHECK(s.problem == NULL);
	pgn_install_state_release(&s);
	/* Again: nothing changes. */
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, &err) == PGN_OK);
	CHECK_INT(res.changed, 0);
	CHECK_STR(res.diff, "");
	pgn_install_result_release(&res);
	/* Uninstall: the file and the directories it made, nothing else. */
	REQUIRE(apply(NULL, NULL, 1, 0, &res, &err) == PGN_OK);
	CHECK_STR(err.msg, "");
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff, "+++ /dev/null\n");
	pgn_install_result_release(&res);
	after = tree(home);
	CHECK_STR(after, before);
	free(before);
	free(after);
	/* Uninstalling again: nothing to remove. */
	REQUIRE(apply(NULL, NULL, 1, 0, &res, &err) == PGN_OK);
	CHECK_INT(res.changed, 0);
	pgn_install_result_release(&res);
}

static void
test_directories_that_were_there_stay_and_so_does_what_opencode_added(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], dir[PATH_MAX], extra[PATH_MAX];

	use_home(home, sizeof(home));
	h_join(dir, sizeof(dir), home, ".config");
	REQUIRE(mkdir(dir, 0755) == 0);
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, &err) == PGN_OK);
	pgn_install_result_release(&res);
	/* opencode puts its own files next to the plugin directory. */
	h_join(extra, sizeof(extra), home, ".config/opencode/package.json");
	h_write_file(extra, "{}\n", 3);
	REQUIRE(apply(NULL, NULL, 1, 0, &res, &err) == PGN_OK);
	pgn_install_result_release(&res);
	h_join(dir, sizeof(dir), home, ".config/opencode/plugin");
	CHECK(!h_exists(dir));
	CHECK(h_exists(extra));
	h_join(dir, sizeof(dir), home, ".config");
	CHECK(h_exists(dir));
}

static void
test_a_file_that_is_not_pigeons_is_refused_and_kept(void)
{
	static const char mine[] = "export const Mine = async () => ({});\n";
	struct pgn_install_result res;
	struct pgn_install_state s;
	struct pgn_err err;
	char home[PATH_MAX], dir[PATH_MAX], path[PATH_MAX];
	char cmd[PATH_MAX + 16], *text;
	size_t n;

	use_home(home, sizeof(home));
	h_join(dir, sizeof(dir), home, ".config/opencode/plugin");
	h_join(path, sizeof(path), dir, "pigeon.js");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	REQUIRE(system(cmd) == 0);
	h_write_file(path, mine, strlen(mine));
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, &err), PGN_EINVAL);
	CHECK_CONTAINS(err.msg,
	    "exists and is not Pigeon's plugin: left untouched");
	pgn_install_result_release(&res);
	/* Uninstall leaves it too, and says why. */
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, &err), PGN_OK);
	CHECK_INT(res.changed, 0);
	CHECK_CONTAINS(res.note, "not Pigeon's plugin");
	pgn_install_result_release(&res);
	text = h_read_file(path, &n);
	CHECK_STR(text, mine);
	free(text);
	/* Doctor: there, not installed, not a problem of the config. */
	CHECK_INT(pgn_install_inspect(PGN_HOST_OPENCODE, NULL, &s), PGN_OK);
	CHECK_INT(s.exists, 1);
	CHECK_INT(s.entries[PGN_EVENT_PROMPT], 0);
	CHECK(s.hook == NULL && s.problem == NULL);
	pgn_install_state_release(&s);
}

static void
test_a_symlinked_or_read_only_plugin_dir_is_a_clear_error(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], cmd[4 * PATH_MAX],
	    path[PATH_MAX];
	char *before;

	use_home(home, sizeof(home));
	H_PATH(real, "elsewhere");
	REQUIRE(mkdir(real, 0755) == 0);
	h_join(dir, sizeof(dir), home, ".config/opencode");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && ln -s '%s' '%s/plugin'",
	    dir, real, dir);
	REQUIRE(system(cmd) == 0);
	before = tree(h_tmp);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, &err), PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "/.config/opencode/plugin' is a symbolic link");
	pgn_install_result_release(&res);
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, &err), PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "is a symbolic link");
	pgn_install_result_release(&res);
	/* Read-only (owner's write bit off: refused even for root). */
	snprintf(cmd, sizeof(cmd),
	    "rm '%s/plugin' && mkdir '%s/plugin' && chmod 555 '%s/plugin'", dir,
	    dir, dir);
	REQUIRE(system(cmd) == 0);
	free(before);
	before = tree(h_tmp);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, &err), PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "/.config/opencode/plugin' is read-only");
	CHECK_CONTAINS(err.msg, "chmod u+w");
	pgn_install_result_release(&res);
	{
		char *now = tree(h_tmp);

		CHECK_STR(now, before);
		free(now);
	}
	h_join(path, sizeof(path), dir, "plugin");
	REQUIRE(chmod(path, 0755) == 0);
	free(before);
}

static void
test_dry_run_and_project_installs(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], proj[PATH_MAX], path[PATH_MAX];
	char *before, *after;

	use_home(home, sizeof(home));
	H_PATH(proj, "proj");
	REQUIRE(mkdir(proj, 0755) == 0);
	before = tree(h_tmp);
	REQUIRE(apply(proj, HOOK, 0, 1, &res, &err) == PGN_OK);
	h_join(path, sizeof(path), proj, ".opencode/plugin/pigeon.js");
	CHECK_STR(res.path, path);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff, "+" MARK);
	pgn_install_result_release(&res);
	after = tree(h_tmp);
	CHECK_STR(after, before);
	free(after);
	REQUIRE(apply(proj, HOOK, 0, 0, &res, &err) == PGN_OK);
	pgn_install_result_release(&res);
	CHECK(h_exists(path));
	/* A dry uninstall shows the removal and removes nothing. */
	REQUIRE(apply(proj, NULL, 1, 1, &res, &err) == PGN_OK);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff, "-" MARK);
	pgn_install_result_release(&res);
	CHECK(h_exists(path));
	REQUIRE(apply(proj, NULL, 1, 0, &res, &err) == PGN_OK);
	pgn_install_result_release(&res);
	after = tree(h_tmp);
	CHECK_STR(after, before);
	free(after);
	free(before);
}

static void
test_a_new_hook_path_rewrites_pigeons_plugin(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], path[PATH_MAX], *text;
	size_t n;

	use_home(home, sizeof(home));
	REQUIRE(apply(NULL, HOOK, 0, 0, &res, &err) == PGN_OK);
	pgn_install_result_release(&res);
	REQUIRE(apply(NULL, "/usr/local/bin/pigeon-hook", 0, 0, &res, &err) ==
	    PGN_OK);
	CHECK_INT(res.changed, 1);
	CHECK_CONTAINS(res.diff,
	    "+const HOOK = \"/usr/local/bin/pigeon-hook\"");
	pgn_install_result_release(&res);
	h_join(path, sizeof(path), home, ".config/opencode/plugin/pigeon.js");
	text = h_read_file(path, &n);
	/* The directories it made are still remembered. */
	CHECK_CONTAINS(text, "/home/.config\",\"");
	free(text);
	/* A hook that is not pigeon-hook is refused, nothing written. */
	CHECK_INT(apply(NULL, "/usr/bin/true", 0, 0, &res, &err), PGN_EINVAL);
	pgn_install_result_release(&res);
}

static void
test_concurrent_installs_leave_one_plugin(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], dir[PATH_MAX], *listing;
	pid_t pid[RACERS];
	int i, status, ok = 0;

	use_home(home, sizeof(home));
	for (i = 0; i < RACERS; i++) {
		pid[i] = fork();
		REQUIRE(pid[i] >= 0);
		if (pid[i] == 0) {
			pgn_status st = apply(NULL, HOOK, 0, 0, &res, &err);

			_exit(st == PGN_OK ? 0 : 1);
		}
	}
	for (i = 0; i < RACERS; i++) {
		REQUIRE(waitpid(pid[i], &status, 0) == pid[i]);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	CHECK_INT(ok, RACERS);
	/* One plugin, no temp file left. */
	h_join(dir, sizeof(dir), home, ".config/opencode/plugin");
	listing = tree(dir);
	CHECK_STR(listing, ".\n./pigeon.js\n");
	free(listing);
	REQUIRE(apply(NULL, NULL, 1, 0, &res, &err) == PGN_OK);
	pgn_install_result_release(&res);
	CHECK(!h_exists(dir));
}

static void
test_bounds_missing_directories_and_file_size(void)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char home[PATH_MAX], xdg[PATH_MAX], path[PATH_MAX];
	char *big;
	size_t n = 64 * 1024 + 1;

	use_home(home, sizeof(home));
	/* Six missing, plus opencode/plugin: eight, the most it creates. */
	h_join(xdg, sizeof(xdg), home, "1/2/3/4/5/6");
	REQUIRE(setenv("XDG_CONFIG_HOME", xdg, 1) == 0);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, &err), PGN_OK);
	pgn_install_result_release(&res);
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, &err), PGN_OK);
	pgn_install_result_release(&res);
	h_join(path, sizeof(path), home, "1");
	CHECK(!h_exists(path));
	/* Nine: refused, nothing made. */
	h_join(xdg, sizeof(xdg), home, "1/2/3/4/5/6/7");
	REQUIRE(setenv("XDG_CONFIG_HOME", xdg, 1) == 0);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, &err), PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "more than 8 directories are missing");
	pgn_install_result_release(&res);
	CHECK(!h_exists(path));
	unsetenv("XDG_CONFIG_HOME");
	/* A pigeon.js over 64 KiB is not Pigeon's, whatever it starts with. */
	h_join(path, sizeof(path), home, ".config/opencode/plugin");
	{
		char cmd[PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
		REQUIRE(system(cmd) == 0);
	}
	h_join(path, sizeof(path), home, ".config/opencode/plugin/pigeon.js");
	big = malloc(n);
	REQUIRE(big != NULL);
	memset(big, ' ', n);
	memcpy(big, MARK, strlen(MARK));
	big[n - 1] = '\n';
	h_write_file(path, big, n);
	free(big);
	CHECK_INT(apply(NULL, HOOK, 0, 0, &res, &err), PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "is not Pigeon's plugin");
	pgn_install_result_release(&res);
	CHECK_INT(apply(NULL, NULL, 1, 0, &res, &err), PGN_OK);
	CHECK_INT(res.changed, 0);
	pgn_install_result_release(&res);
	CHECK(h_exists(path));
}

/* ---- opencode's idle wake ------------------------------------------ */

#define SID  "ses_1"
#define WAKE "Pigeon woke you: mail arrived while you were idle."
/* One line of the stub's output: bytes. */
#define STUB_LINE 65536

static char proj[PATH_MAX]; /* the pass's project: a scope, a config */
static pgn_db *chk;         /* a second connection, for checks */

/*
 * A fresh store for one pass, SQLite in h_tmp/NAME or a PostgreSQL
 * database of its own, and the project NAME/proj (a git work tree),
 * whose config caps the continuations at 'cap'.
 */
static void
pass_begin(int on_pg, const char *name, int cap)
{
	char dir[PATH_MAX], path[PATH_MAX], cfg[128], cmd[3 * PATH_MAX];
	pgn_db *d;

	H_PATH(dir, name);
	h_mkdir(dir);
	h_join(proj, sizeof(proj), dir, "proj");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/.git/x' '%s/.pigeon'", proj,
	    proj);
	REQUIRE(be_sh(cmd) == 0);
	h_join(path, sizeof(path), proj, ".pigeon/config.json");
	snprintf(cfg, sizeof(cfg), "{\"reach\": {\"maxAutoContinues\": %d}}\n",
	    cap);
	h_write_file(path, cfg, strlen(cfg));
	be_on_pg = on_pg;
	be_store("pgn_plugin", dir);
	/* The schema, for a hook that creates none. */
	d = h_open_path(be_where, 0);
	pgn_db_close(d);
	chk = h_open_path(be_where, 0);
}

static void
pass_end(void)
{
	pgn_db_close(chk);
	chk = NULL;
	(void)be_drop();
}

/* One number, through the second connection. */
static int64_t
count(const char *sql)
{
	return be_count(chk, sql);
}

/* Messages still queued. */
#define QUEUED count("SELECT count(*) FROM message WHERE delivered_ms IS NULL")
/* The governor's count of the session. */
static int64_t
session_continues(void)
{
	return count("SELECT auto_continues FROM session "
	             "WHERE key = 'opencode:" SID "'");
}

#define CONTINUES session_continues()

/* How many deliveries of the message BODY went by 'route'. */
static int64_t
routed(const char *body, const char *route)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM delivery d JOIN message m ON m.id = "
	    "d.message_id WHERE m.body = '%s' AND d.route = '%s'",
	    body, route);
	return count(sql);
}

/* Queue BODY from alice for bob in the project's scope. */
static void
mail(const char *body)
{
	const char *to = "bob";
	struct pgn_sent sent[1];
	struct pgn_send req;
	size_t nsent = 0;
	pgn_db *d;

	d = h_open_path(be_where, 0);
	REQUIRE(pgn_db_set_scope(d, proj) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = &to;
	req.nto = 1;
	req.create = 1;
	req.body = body;
	req.body_len = strlen(body);
	CHECK_INT(pgn_send(d, &req, sent, 1, &nsent), PGN_OK);
	CHECK_INT(nsent, 1);
	pgn_db_close(d);
}

/* How often 'needle' occurs in 'hay'. */
static int
times(const char *hay, const char *needle)
{
	int k = 0;

	while (hay != NULL && (hay = strstr(hay, needle)) != NULL) {
		k++;
		hay += strlen(needle);
	}
	return k;
}

/*
 * One library turn of opencode EVENT: payload {"hook_event_name": NAME,
 * "session_id": SID, "cwd": the project, MORE}, agent bob. Returns what
 * the hook prints ("" for nothing; the caller frees); 'log' gets its
 * log lines, one a line.
 */
static char *
turn(pgn_event e, const char *more, char *log, size_t loglen)
{
	struct pgn_hook_in in;
	struct pgn_hook_out o;
	char payload[PATH_MAX + 512];
	char *s;
	size_t i, k = 0;

	snprintf(payload, sizeof(payload),
	    "{\"hook_event_name\":\"%s\",\"session_id\":\"" SID
	    "\",\"cwd\":\"%s\"%s}",
	    pgn_host_get(PGN_HOST_OPENCODE)->events[e], proj, more);
	memset(&in, 0, sizeof(in));
	in.payload = payload;
	in.len = strlen(payload);
	in.host = PGN_HOST_OPENCODE;
	in.event = e;
	in.agent_env = "bob";
	in.db_path = be_where;
	in.deadline = pgn_mono_ms() + 30000;
	pgn_hook_turn(&in, &o);
	s = calloc(1, o.len + 1);
	REQUIRE(s != NULL);
	if (o.len > 0)
		memcpy(s, o.line, o.len);
	log[0] = '\0';
	for (i = 0; i < o.nlog; i++)
		k += (size_t)snprintf(log + k, k < loglen ? loglen - k : 0,
		    "%s\n", o.log[i]);
	pgn_hook_out_release(&o);
	return s;
}

static void
idle_claims_nothing_and_the_woken_message_claims_once(int on_pg)
{
	char log[PGN_HOOK_MAX_LOG * PGN_HOOK_LOG_LINE];
	char *s;

	pass_begin(on_pg, on_pg ? "lib-pg" : "lib-sqlite", 1);
	s = turn(PGN_EVENT_SESSION_START, ",\"source\":\"startup\"", log,
	    sizeof(log));
	CHECK_CONTAINS(s, "you are agent \\\"bob\\\"");
	free(s);
	mail("PING-ONE");
	/* Idle with mail: the wake line, nothing claimed or counted. */
	s = turn(PGN_EVENT_IDLE, "", log, sizeof(log));
	CHECK_STR(s, "{\"continue\":\"" WAKE "\"}\n");
	free(s);
	CHECK_CONTAINS(log,
	    "event=session.idle session=opencode:" SID " status=wake ");
	CHECK_INT(QUEUED, 1);
	CHECK_INT(CONTINUES, 0);
	/* The turn it starts: its message claims the mail, and counts. */
	s = turn(PGN_EVENT_PROMPT,
	    ",\"message_id\":\"msg_w\",\"prompt\":\"" WAKE "\"", log,
	    sizeof(log));
	CHECK_INT(times(s, "PING-ONE"), 1);
	free(s);
	CHECK_INT(QUEUED, 0);
	CHECK_INT(routed("PING-ONE", "prompt"), 1);
	CHECK_INT(CONTINUES, 1);
	/* At the cap: the next idle answers nothing, the mail waits. */
	mail("PING-TWO");
	s = turn(PGN_EVENT_IDLE, "", log, sizeof(log));
	CHECK_STR(s, "");
	free(s);
	CHECK_CONTAINS(log, "status=governed ");
	CHECK_CONTAINS(log, "agent=bob: 1 continuations in a row, the cap");
	CHECK_INT(QUEUED, 1);
	/* A person's prompt: the mail, and the count starts again. */
	s = turn(PGN_EVENT_PROMPT,
	    ",\"message_id\":\"msg_p\",\"prompt\":\"and now?\"", log,
	    sizeof(log));
	CHECK_INT(times(s, "PING-TWO"), 1);
	free(s);
	CHECK_INT(routed("PING-TWO", "prompt"), 1);
	CHECK_INT(CONTINUES, 0);
	/*
	 * A woken turn that finds its mail taken (a person's prompt came
	 * first): nothing to show, and it counts all the same, so the cap
	 * bounds the wakes themselves.
	 */
	s = turn(PGN_EVENT_PROMPT,
	    ",\"message_id\":\"msg_e\",\"prompt\":\"" WAKE "\"", log,
	    sizeof(log));
	CHECK_STR(s, "");
	free(s);
	CHECK_INT(QUEUED, 0);
	CHECK_INT(CONTINUES, 1);
	/* A turn that did not start: one line; nothing read or written. */
	mail("PING-THREE");
	s = turn(PGN_EVENT_IDLE, ",\"wake_error\":\"Session not found\"", log,
	    sizeof(log));
	CHECK_STR(s, "");
	free(s);
	CHECK_CONTAINS(log, "status=wake-failed ");
	CHECK_CONTAINS(log,
	    "(Session not found); nothing was claimed, the "
	    "mail stays queued");
	CHECK_INT(QUEUED, 1);
	CHECK_INT(count("SELECT count(*) FROM delivery d JOIN message m ON "
	                "m.id = d.message_id WHERE m.body = 'PING-THREE'"),
	    0);
	CHECK_INT(CONTINUES, 1);
	pass_end();
}

static void
test_opencode_idle_claims_nothing_its_woken_turn_claims_once(void)
{
	idle_claims_nothing_and_the_woken_message_claims_once(0);
	if (be_have_pg())
		idle_claims_nothing_and_the_woken_message_claims_once(1);
}

/*
 * Low mail never wakes an idle agent by itself (decision 0158): the
 * idle event answers nothing while only low mail waits; urgent mail
 * wakes it, and the woken turn takes both.
 */
static void
idle_never_wakes_for_low_mail(int on_pg)
{
	char log[PGN_HOOK_MAX_LOG * PGN_HOOK_LOG_LINE];
	const char *to = "bob";
	struct pgn_sent sent[1];
	struct pgn_send req;
	size_t nsent = 0;
	pgn_db *d;
	char *s;

	pass_begin(on_pg, on_pg ? "low-pg" : "low-sqlite", 1);
	s = turn(PGN_EVENT_SESSION_START, ",\"source\":\"startup\"", log,
	    sizeof(log));
	free(s);
	d = h_open_path(be_where, 0);
	REQUIRE(pgn_db_set_scope(d, proj) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = &to;
	req.nto = 1;
	req.body = "LOW-ONE";
	req.body_len = strlen(req.body);
	req.priority = PGN_PRIORITY_LOW;
	CHECK_INT(pgn_send(d, &req, sent, 1, &nsent), PGN_OK);
	s = turn(PGN_EVENT_IDLE, "", log, sizeof(log));
	CHECK_STR(s, "");
	free(s);
	CHECK_INT(QUEUED, 1);
	req.body = "URGENT-ONE";
	req.body_len = strlen(req.body);
	req.priority = PGN_PRIORITY_URGENT;
	CHECK_INT(pgn_send(d, &req, sent, 1, &nsent), PGN_OK);
	pgn_db_close(d);
	s = turn(PGN_EVENT_IDLE, "", log, sizeof(log));
	CHECK_STR(s, "{\"continue\":\"" WAKE "\"}\n");
	free(s);
	s = turn(PGN_EVENT_PROMPT,
	    ",\"message_id\":\"msg_w\",\"prompt\":\"" WAKE "\"", log,
	    sizeof(log));
	CHECK_INT(times(s, "URGENT-ONE"), 1);
	CHECK_INT(times(s, "LOW-ONE"), 1);
	free(s);
	CHECK_INT(QUEUED, 0);
	pass_end();
}

static void
test_opencode_idle_never_wakes_for_low_mail(void)
{
	idle_never_wakes_for_low_mail(0);
	if (be_have_pg())
		idle_never_wakes_for_low_mail(1);
}

static void
test_a_wake_error_is_kept_to_its_bound(void)
{
	char payload[PGN_HOOK_WAKE_ERROR + 256], why[PGN_MAX_ERRMSG];
	char text[PGN_HOOK_WAKE_ERROR + 2];
	struct pgn_payload p;
	size_t n;

	for (n = PGN_HOOK_WAKE_ERROR; n <= PGN_HOOK_WAKE_ERROR + 1; n++) {
		memset(text, 'x', n);
		text[n] = '\0';
		snprintf(payload, sizeof(payload),
		    "{\"session_id\":\"" SID "\",\"wake_error\":\"%s\"}", text);
		REQUIRE(pgn_payload_parse(payload, strlen(payload),
		            PGN_HOST_OPENCODE, PGN_EVENT_IDLE, &p, why,
		            sizeof(why)) == PGN_OK);
		CHECK_INT(strlen(p.wake_error), PGN_HOOK_WAKE_ERROR);
		pgn_payload_release(&p);
	}
	/* Only the idle event has one. */
	REQUIRE(pgn_payload_parse(payload, strlen(payload), PGN_HOST_OPENCODE,
	            PGN_EVENT_PROMPT, &p, why, sizeof(why)) == PGN_OK);
	CHECK_STR(p.wake_error, "");
	pgn_payload_release(&p);
}

/* node >= 20 on PATH; without it, skipped with a line (not under CI). */
static int
have_node(void)
{
	const char *ci = getenv("CI");

	if (be_sh(
	        "node -e 'process.exit(+process.versions.node.split(\".\")[0] "
	        ">= 20 ? 0 : 1)' >/dev/null 2>&1") == 0)
		return 1;
	if (ci != NULL && strcmp(ci, "true") == 0) {
		h_check(0, __FILE__, __LINE__, "node >= 20 on PATH (CI=true)");
		return 0;
	}
	printf("# SKIP the plugin under node: no node >= 20 on PATH\n");
	return 0;
}

/*
 * The installed plugin of pass NAME, its hook this test's executable
 * linked as NAME/bin/pigeon-hook; HOME, PIGEON_HOME, PIGEON_DB and
 * PIGEON_AGENT set for the hooks node runs. 'plugin' gets its path.
 */
static void
plugin_install(const char *name, char *plugin, size_t len)
{
	struct pgn_install_result res;
	struct pgn_err err;
	char dir[PATH_MAX], path[PATH_MAX], self[PATH_MAX];
	ssize_t n;

	H_PATH(dir, name);
	h_join(path, sizeof(path), dir, "bin");
	h_mkdir(path);
	h_join(path, sizeof(path), dir, "bin/pigeon-hook");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	REQUIRE(n > 0);
	self[n] = '\0';
	REQUIRE(symlink(self, path) == 0);
	h_join(plugin, len, dir, "home");
	h_mkdir(plugin);
	REQUIRE(setenv("HOME", plugin, 1) == 0);
	unsetenv("XDG_CONFIG_HOME");
	REQUIRE(apply(NULL, path, 0, 0, &res, &err) == PGN_OK);
	pgn_install_result_release(&res);
	h_join(plugin, len, dir, "home/.config/opencode/plugin/pigeon.js");
	h_join(path, sizeof(path), dir, "state");
	h_mkdir(path);
	REQUIRE(setenv("PIGEON_HOME", path, 1) == 0);
	REQUIRE(setenv("PIGEON_DB", be_where, 1) == 0);
	REQUIRE(setenv("PIGEON_AGENT", "bob", 1) == 0);
}

/* hook.log of pass NAME ("" if none; the caller frees). */
static char *
hook_log_of(const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX], *s;
	size_t n;

	H_PATH(dir, name);
	h_join(path, sizeof(path), dir, "state/hook.log");
	s = h_read_file(path, &n);
	return s != NULL ? s : calloc(1, 1);
}

/* What the test does at the stub's holds, in turn. */
typedef void hold_fn(const char *name, int at);

/*
 * Run the stub (tests/fixtures/plugin/opencode-stub.mjs) in MODE with
 * 'steps' (shell words), calling 'at_hold' at each hold; returns its
 * output (the caller frees).
 */
static char *
drive(const char *name, const char *plugin, const char *mode, const char *steps,
    hold_fn *at_hold)
{
	char cmd[4 * PATH_MAX], go[PATH_MAX], line[STUB_LINE], *out;
	size_t k = 0, cap = 16 * STUB_LINE;
	int holds = 0, st;
	FILE *f;

	REQUIRE(getenv("PGN_TEST_FIXTURES") != NULL);
	H_PATH(go, "go");
	snprintf(cmd, sizeof(cmd),
	    "node '%s/plugin/opencode-stub.mjs' '%s' '%s' '%s' '%s' %s",
	    getenv("PGN_TEST_FIXTURES"), plugin, mode, proj, go, steps);
	out = calloc(1, cap);
	REQUIRE(out != NULL);
	f = popen(cmd, "r");
	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		k += (size_t)snprintf(out + k, k < cap ? cap - k : 0, "%s",
		    line);
		if (strstr(line, "{\"step\":\"hold\"}") == NULL)
			continue;
		at_hold(name, holds++);
		h_write_file(go, "", 0);
	}
	st = pclose(f);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return out;
}

/* A promptAsync that fails: at the second hold, the mail is queued. */
static void
failed_holds(const char *name, int at)
{
	char *log;

	if (at == 0) {
		mail("PING-IDLE");
		return;
	}
	CHECK_INT(QUEUED, 1);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 0);
	CHECK_INT(CONTINUES, 0);
	log = hook_log_of(name);
	CHECK_INT(times(log, "status=wake-failed"), 1);
	CHECK_CONTAINS(log, "nothing was claimed, the mail stays queued");
	free(log);
}

static void
a_wake_that_cannot_start(int on_pg, const char *mode, const char *why)
{
	char plugin[PATH_MAX], name[64], *out, *log;

	snprintf(name, sizeof(name), "%s-%s", mode, on_pg ? "pg" : "sqlite");
	pass_begin(on_pg, name, 3);
	plugin_install(name, plugin, sizeof(plugin));
	out = drive(name, plugin, mode,
	    "created 'prompt:hello' hold idle hold 'prompt:and now?'",
	    failed_holds);
	/* Asked for, with the wake line; then shown once, by the prompt. */
	CHECK_CONTAINS(out, "{\"step\":\"promptAsync\",\"text\":\"" WAKE "\"");
	CHECK_INT(times(out, "PING-IDLE"), 1);
	CHECK_CONTAINS(out, "{\"step\":\"prompt\",\"shown\":\"Pigeon: 1 new");
	CHECK_INT(QUEUED, 0);
	CHECK_INT(routed("PING-IDLE", "prompt"), 1);
	log = hook_log_of(name);
	CHECK_CONTAINS(log, why);
	free(log);
	free(out);
	pass_end();
}

static void
test_an_idle_wake_whose_prompt_fails_leaves_the_mail_queued(void)
{
	int pg;

	if (!have_node())
		return;
	for (pg = 0; pg <= 1; pg++) {
		if (pg && !be_have_pg())
			break;
		/* The request fails (rejects) or the server refuses. */
		a_wake_that_cannot_start(pg, "reject",
		    "did not start (fetch failed)");
		a_wake_that_cannot_start(pg, "error",
		    "did not start (Session not found: " SID ")");
	}
}

/* A woken turn: the first mail before the wake, the second after it. */
static void
woken_holds(const char *name, int at)
{
	(void)name;
	if (at == 0) {
		mail("PING-IDLE-1");
		return;
	}
	CHECK_INT(QUEUED, 0);
	CHECK_INT(routed("PING-IDLE-1", "prompt"), 1);
	CHECK_INT(CONTINUES, 1);
	mail("PING-IDLE-2");
}

static void
a_wake_that_starts(int on_pg)
{
	char plugin[PATH_MAX], name[64], *out, *log;

	snprintf(name, sizeof(name), "ok-%s", on_pg ? "pg" : "sqlite");
	pass_begin(on_pg, name, 1);
	plugin_install(name, plugin, sizeof(plugin));
	out = drive(name, plugin, "ok",
	    "created 'prompt:hello' hold idle hold idle 'prompt:and now?'",
	    woken_holds);
	/* The woken turn's message shows the mail, once; then governed. */
	CHECK_INT(times(out, "\"step\":\"promptAsync\""), 1);
	CHECK_INT(times(out, "PING-IDLE-1"), 1);
	CHECK_CONTAINS(out,
	    "{\"step\":\"promptAsync\",\"text\":\"" WAKE
	    "\",\"shown\":\"Pigeon: 1 new");
	CHECK_INT(times(out, "PING-IDLE-2"), 1);
	CHECK_INT(routed("PING-IDLE-2", "prompt"), 1);
	CHECK_INT(CONTINUES, 0);
	log = hook_log_of(name);
	CHECK_INT(times(log, "status=governed"), 1);
	free(log);
	free(out);
	pass_end();
}

static void
test_an_idle_wake_shows_the_mail_once_in_the_turn_it_starts(void)
{
	if (!have_node())
		return;
	a_wake_that_starts(0);
	if (be_have_pg())
		a_wake_that_starts(1);
}

static const struct h_test tests[] = {
    H_TEST(
        test_install_writes_the_plugin_and_uninstall_leaves_the_tree_as_it_was),
    H_TEST(
        test_directories_that_were_there_stay_and_so_does_what_opencode_added),
    H_TEST(test_a_file_that_is_not_pigeons_is_refused_and_kept),
    H_TEST(test_a_symlinked_or_read_only_plugin_dir_is_a_clear_error),
    H_TEST(test_dry_run_and_project_installs),
    H_TEST(test_a_new_hook_path_rewrites_pigeons_plugin),
    H_TEST(test_concurrent_installs_leave_one_plugin),
    H_TEST(test_bounds_missing_directories_and_file_size),
    H_TEST(test_opencode_idle_claims_nothing_its_woken_turn_claims_once),
    H_TEST(test_opencode_idle_never_wakes_for_low_mail),
    H_TEST(test_a_wake_error_is_kept_to_its_bound),
    H_TEST(test_an_idle_wake_whose_prompt_fails_leaves_the_mail_queued),
    H_TEST(test_an_idle_wake_shows_the_mail_once_in_the_turn_it_starts),
};

int
main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	struct hook_opts o;
	int r;

	/* Linked as pigeon-hook, this is the hook the plugin runs. */
	if (strcmp(base != NULL ? base + 1 : argv[0], "pigeon-hook") == 0) {
		pgn_single_threaded();
		r = hook_parse_args(&o, argc, argv, stdout);
		if (r == 1)
			return HOOK_EXIT_OK;
		return hook_run(&o, STDIN_FILENO, STDOUT_FILENO,
		    r < 0 ? o.why : NULL);
	}
	be_init();
	return h_run(tests, H_COUNT(tests));
}
