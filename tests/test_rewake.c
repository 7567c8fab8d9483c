/*
 * pgn_hook_rewake, Claude Code's idle wake in the library: it waits for
 * mail after the turn and claims it as a stop does (route "stop", the
 * governor's count), only as the session's newest waiter and while the
 * host lives; everything else ends it with nothing claimed and a log
 * line. State is checked through a second connection.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "pgn_int.h"
#include "pigeon/hook.h"
#include "pigeon/setup.h"
#include "hookio.h" /* hookcli: hook_rewake */

static char dbpath[PATH_MAX], home[PATH_MAX], root[PATH_MAX];

/* A project with a .git, an optional config, a home for the tokens. */
static void
setup(const char *config)
{
	char path[PATH_MAX + 32];
	FILE *f;

	H_PATH(dbpath, "pigeon.db");
	H_PATH(home, "home");
	H_PATH(root, "proj");
	REQUIRE(mkdir(home, 0700) == 0);
	REQUIRE(mkdir(root, 0700) == 0);
	snprintf(path, sizeof(path), "%s/.git", root);
	REQUIRE(mkdir(path, 0700) == 0);
	REQUIRE(sodium_init() >= 0);
	if (config == NULL)
		return;
	snprintf(path, sizeof(path), "%s/.pigeon", root);
	REQUIRE(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/.pigeon/config.json", root);
	f = fopen(path, "w");
	REQUIRE(f != NULL);
	fputs(config, f);
	fclose(f);
}

static void
payload(char *buf, size_t len, pgn_event e, const char *sid)
{
	snprintf(buf, len,
	    "{\"hook_event_name\":\"%s\",\"session_id\":\"%s\",\"cwd\":\"%s\","
	    "\"prompt_id\":\"p-%s\",\"prompt\":\"go\",\"source\":\"startup\","
	    "\"stop_hook_active\":false}",
	    pgn_host_get(PGN_HOST_CLAUDE)->events[e], sid, root, sid);
}

/* An ordinary turn: binds session 'sid' to 'agent' at its start. */
static void
turn(pgn_event e, const char *sid, const char *agent)
{
	struct pgn_hook_in in;
	struct pgn_hook_out o;
	char p[PATH_MAX + 512];

	payload(p, sizeof(p), e, sid);
	memset(&in, 0, sizeof(in));
	in.payload = p;
	in.len = strlen(p);
	in.host = PGN_HOST_CLAUDE;
	in.event = e;
	in.agent_env = agent;
	in.home = home;
	in.db_path = dbpath;
	in.db_create = 1;
	in.deadline = pgn_mono_ms() + 10000;
	pgn_hook_turn(&in, &o);
	REQUIRE(o.st == PGN_OK);
	pgn_hook_out_release(&o);
}

/*
 * The UserPromptSubmit Claude 2.1.332 runs for the turn an idle wake
 * starts (measured): the prompt is the task-notification.
 */
static void
woken_turn(const char *sid)
{
	struct pgn_hook_in in;
	struct pgn_hook_out o;
	char p[PATH_MAX + 1024];

	snprintf(p, sizeof(p),
	    "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"%s\","
	    "\"cwd\":\"%s\",\"prompt_id\":\"w-%lld\",\"permission_mode\":"
	    "\"default\",\"prompt\":\"<task-notification>\\n<summary>Stop "
	    "hook feedback</summary>\\n</task-notification>\\n<system-"
	    "reminder>\\nPigeon woke you: mail arrived while you were idle. "
	    "Pigeon: 1 new message\\n</system-reminder>\"}",
	    sid, root, (long long)pgn_now_ms());
	memset(&in, 0, sizeof(in));
	in.payload = p;
	in.len = strlen(p);
	in.host = PGN_HOST_CLAUDE;
	in.event = PGN_EVENT_PROMPT;
	in.home = home;
	in.db_path = dbpath;
	in.deadline = pgn_mono_ms() + 10000;
	pgn_hook_turn(&in, &o);
	REQUIRE(o.st == PGN_OK);
	pgn_hook_out_release(&o);
}

/* One idle wake of session 'sid' for host process 'host'. */
static void
rewake(struct pgn_hook_out *o, const char *sid, long host)
{
	struct pgn_hook_in in;
	char p[PATH_MAX + 512];

	payload(p, sizeof(p), PGN_EVENT_STOP, sid);
	memset(&in, 0, sizeof(in));
	in.payload = p;
	in.len = strlen(p);
	in.host = PGN_HOST_CLAUDE;
	in.event = PGN_EVENT_STOP;
	in.home = home;
	in.db_path = dbpath;
	in.deadline = pgn_mono_ms() + 10000;
	in.wait_until = pgn_mono_ms() + 60000;
	in.host_pid = host;
	pgn_hook_rewake(&in, o);
}

static int64_t
queue(const char *to, const char *body)
{
	struct pgn_sent sent[1];
	struct pgn_send rq;
	size_t n;
	pgn_db *db;

	db = h_open();
	REQUIRE(pgn_db_set_scope(db, root) == PGN_OK);
	memset(&rq, 0, sizeof(rq));
	rq.from = "alice";
	rq.to = &to;
	rq.nto = 1;
	rq.body = body;
	rq.body_len = strlen(body);
	rq.create = 1;
	REQUIRE(pgn_send(db, &rq, sent, 1, &n) == PGN_OK);
	pgn_db_close(db);
	return sent[0].id;
}

static void
pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Does one of o's log lines hold 'text'? */
static int
logged(const struct pgn_hook_out *o, const char *text)
{
	size_t i;

	for (i = 0; i < o->nlog; i++)
		if (strstr(o->log[i], text) != NULL)
			return 1;
	for (i = 0; i < o->nlog; i++)
		printf("  log: %s\n", o->log[i]);
	return 0;
}

/* The entries of home/rewake (the waiters' token files). */
static int
tokens(void)
{
	char dir[PATH_MAX + 16];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/rewake", home);
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The one token file's text into 'out' ("" when there is none). */
static void
token(char *out, size_t len)
{
	char dir[PATH_MAX + 16], path[PATH_MAX + 300];
	struct dirent *de;
	FILE *f;
	DIR *d;
	size_t n = 0;

	out[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/rewake", home);
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp") != NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (f != NULL) {
			n = fread(out, 1, len - 1, f);
			fclose(f);
		}
		out[n] = '\0';
	}
	closedir(d);
}

static long long
sql_int(const char *q)
{
	sqlite3 *raw = h_raw();
	long long v = H_INT(raw, q);

	sqlite3_close(raw);
	return v;
}

/* A child that sleeps 'ms', then queues 'body' for 'to'. */
static pid_t
later(long ms, const char *to, const char *body)
{
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		pause_ms(ms);
		queue(to, body);
		_exit(0);
	}
	return pid;
}

static void
reap(pid_t pid, int want)
{
	int status;

	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_INT(WEXITSTATUS(status), want);
}

static void
test_mail_that_arrives_while_it_waits_is_claimed_as_a_stop(void)
{
	struct pgn_hook_out o;
	pid_t pid;

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	pid = later(300, "rita", "are you there?");
	rewake(&o, "s1", (long)getpid());
	reap(pid, 0);
	CHECK_INT(o.st, PGN_OK);
	CHECK_INT(o.claimed, 1);
	/* Plain text, the framed mail: what Claude shows after exit 2. */
	if (CHECK(o.line != NULL)) {
		CHECK(o.line[0] != '{');
		CHECK_CONTAINS(o.line, "Pigeon: 1 new message for rita.");
		CHECK_CONTAINS(o.line, "\n  are you there?\n");
		CHECK(o.line[o.len - 1] == '\n');
	}
	CHECK(logged(&o, "mode=rewake session=claude:s1 status=woken"));
	CHECK_INT(sql_int("SELECT count(*) FROM delivery WHERE route = 'stop' "
	                  "AND session = 'claude:s1' AND recipient = 'rita'"),
	    1);
	CHECK_INT(sql_int("SELECT count(*) FROM message WHERE delivered_ms "
	                  "IS NULL"),
	    0);
	/* It counts toward the governor, as a stop that went on does. */
	CHECK_INT(sql_int("SELECT auto_continues FROM session "
	                  "WHERE key = 'claude:s1'"),
	    1);
	CHECK_INT(tokens(), 1); /* its token stays, for a later waiter */
	pgn_hook_out_release(&o);
}

static void
test_mail_already_queued_is_claimed_at_once(void)
{
	struct pgn_hook_out o;
	int64_t id;

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	id = queue("rita", "waiting already");
	rewake(&o, "s1", (long)getpid());
	CHECK_INT(o.claimed, 1);
	CHECK_STR(o.ids, "1");
	CHECK_INT(id, 1);
	if (CHECK(o.line != NULL))
		CHECK_CONTAINS(o.line, "  waiting already\n");
	pgn_hook_out_release(&o);
}

/*
 * Two waiters of one session: the newer one's token supersedes the
 * older, which ends claiming nothing; the newer takes the mail.
 */
static void
test_a_newer_waiter_supersedes_the_older_which_claims_nothing(void)
{
	char first[PGN_HOOK_REWAKE_TOKEN], now[PGN_HOOK_REWAKE_TOKEN];
	struct pgn_hook_out o;
	pid_t older, sender;
	int i;

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	older = fork();
	REQUIRE(older >= 0);
	if (older == 0) {
		rewake(&o, "s1", (long)getppid());
		/* 0: ended as superseded, nothing claimed */
		i = o.claimed == 0 && o.line == NULL &&
		    logged(&o, "status=superseded");
		fflush(stdout);
		_exit(i ? 0 : 1);
	}
	for (i = 0; i < 1000 && (token(first, sizeof(first)), !first[0]); i++)
		pause_ms(10);
	REQUIRE(first[0] != '\0');
	/* The mail comes only once the newer waiter has taken over. */
	sender = fork();
	REQUIRE(sender >= 0);
	if (sender == 0) {
		for (i = 0; i < 1000; i++) {
			token(now, sizeof(now));
			if (now[0] != '\0' && strcmp(now, first) != 0)
				break;
			pause_ms(10);
		}
		queue("rita", "for the newest");
		_exit(0);
	}
	rewake(&o, "s1", (long)getpid());
	reap(sender, 0);
	reap(older, 0);
	CHECK_INT(o.claimed, 1);
	if (CHECK(o.line != NULL))
		CHECK_CONTAINS(o.line, "  for the newest\n");
	CHECK_INT(sql_int("SELECT count(*) FROM delivery"), 1);
	CHECK_INT(sql_int("SELECT auto_continues FROM session"), 1);
	CHECK_INT(tokens(), 1); /* one file per session */
	pgn_hook_out_release(&o);
}

/*
 * Two agents waking each other: each wake counts, the woken turn's own
 * UserPromptSubmit (a task-notification) does not reset the count, and
 * past maxAutoContinues the waiter ends at once; the mail waits for the
 * next prompt of a person, which delivers it and resets the count.
 */
static void
test_the_governor_ends_the_idle_wake_at_the_cap(void)
{
	char before[PGN_HOOK_REWAKE_TOKEN], after[PGN_HOOK_REWAKE_TOKEN];
	struct pgn_hook_out o;
	int64_t id;

	setup("{\"reach\":{\"maxAutoContinues\":2}}");
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	queue("rita", "one");
	rewake(&o, "s1", (long)getpid());
	CHECK_INT(o.claimed, 1);
	pgn_hook_out_release(&o);
	/* The woken turn's own prompt hook is no person's prompt. */
	woken_turn("s1");
	CHECK_INT(sql_int("SELECT auto_continues FROM session"), 1);
	queue("rita", "two");
	rewake(&o, "s1", (long)getpid());
	CHECK_INT(o.claimed, 1);
	pgn_hook_out_release(&o);
	woken_turn("s1");
	CHECK_INT(sql_int("SELECT auto_continues FROM session"), 2);
	id = queue("rita", "three");
	token(before, sizeof(before));
	rewake(&o, "s1", (long)getpid());
	CHECK_INT(o.claimed, 0);
	CHECK(o.line == NULL);
	CHECK(o.governed);
	CHECK(logged(&o, "status=governed") &&
	    logged(&o, "agent=rita: 2 continuations in a row, the cap"));
	/* It did not wait, but superseded any older waiter all the same. */
	token(after, sizeof(after));
	CHECK(after[0] != '\0' && strcmp(after, before) != 0);
	CHECK_INT(sql_int("SELECT count(*) FROM message WHERE id = 3 AND "
	                  "delivered_ms IS NULL"),
	    1);
	/* A person's prompt takes it, and resets the count. */
	turn(PGN_EVENT_PROMPT, "s1", NULL);
	CHECK_INT(sql_int("SELECT auto_continues FROM session"), 0);
	CHECK_INT(sql_int("SELECT count(*) FROM delivery WHERE message_id = 3 "
	                  "AND route = 'prompt'"),
	    1);
	CHECK_INT(id, 3);
	pgn_hook_out_release(&o);
}

/* The host already gone (an ended, reaped process): nothing waits. */
static void
test_a_host_that_is_gone_claims_nothing(void)
{
	struct pgn_hook_out o;
	pid_t dead;

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	queue("rita", "nobody reads this");
	dead = fork();
	REQUIRE(dead >= 0);
	if (dead == 0)
		_exit(0);
	reap(dead, 0);
	rewake(&o, "s1", (long)dead);
	CHECK_INT(o.claimed, 0);
	CHECK(o.line == NULL);
	CHECK(logged(&o, "status=host-gone"));
	CHECK_INT(sql_int("SELECT count(*) FROM message WHERE delivered_ms "
	                  "IS NULL"),
	    1);
	CHECK_INT(tokens(), 0);
	pgn_hook_out_release(&o);
}

/*
 * The host ends while the waiter waits (killed, a zombie not reaped
 * yet), and only then does mail come: nothing is claimed.
 */
static void
test_a_host_that_ends_during_the_wait_claims_nothing(void)
{
	struct pgn_hook_out o;
	pid_t host, killer;

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	host = fork();
	REQUIRE(host >= 0);
	if (host == 0) {
		for (;;)
			pause();
	}
	killer = fork();
	REQUIRE(killer >= 0);
	if (killer == 0) {
		pause_ms(200);
		kill(host, SIGKILL);
		pause_ms(100);
		queue("rita", "too late");
		_exit(0);
	}
	rewake(&o, "s1", (long)host);
	reap(killer, 0);
	REQUIRE(waitpid(host, NULL, 0) == host);
	CHECK_INT(o.claimed, 0);
	CHECK(o.line == NULL);
	CHECK(logged(&o, "status=host-gone"));
	CHECK_INT(sql_int("SELECT count(*) FROM message WHERE delivered_ms "
	                  "IS NULL"),
	    1);
	CHECK_INT(sql_int("SELECT count(*) FROM delivery"), 0);
	pgn_hook_out_release(&o);
}

/* No mail within reach.rewakeWaitS: it ends, nothing claimed. */
static void
test_no_mail_within_rewake_wait_s_ends_quietly(void)
{
	struct pgn_hook_out o;

	setup("{\"reach\":{\"rewakeWaitS\":1}}");
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	rewake(&o, "s1", (long)getpid());
	CHECK_INT(o.st, PGN_OK);
	CHECK_INT(o.claimed, 0);
	CHECK(o.line == NULL);
	CHECK(logged(&o, "status=idle") &&
	    logged(&o, "agent=rita: no mail for it in 1 s"));
	pgn_hook_out_release(&o);
}

/* 0 turns the idle wake off: it does not even wait. */
static void
test_rewake_wait_s_zero_turns_it_off(void)
{
	struct pgn_hook_out o;

	setup("{\"reach\":{\"rewakeWaitS\":0}}");
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	queue("rita", "not by the idle wake");
	rewake(&o, "s1", (long)getpid());
	CHECK_INT(o.claimed, 0);
	CHECK(logged(&o, "status=off"));
	CHECK_INT(sql_int("SELECT count(*) FROM delivery"), 0);
	pgn_hook_out_release(&o);
}

/* Each refusal: a log line, nothing claimed, no token left behind. */
static void
test_what_cannot_wait_ends_with_a_line_and_nothing_claimed(void)
{
	struct pgn_hook_in in;
	struct pgn_hook_out o;
	char p[PATH_MAX + 512];

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	queue("rita", "stays queued");
	/* No CLAUDE_PID */
	rewake(&o, "s1", 0);
	CHECK(o.line == NULL);
	CHECK(logged(&o, "status=bad-env") &&
	    logged(&o, "no CLAUDE_PID: not run by Claude Code"));
	pgn_hook_out_release(&o);
	/* A session no turn has bound */
	rewake(&o, "s2", (long)getpid());
	CHECK(o.line == NULL);
	CHECK(logged(&o, "status=unbound"));
	pgn_hook_out_release(&o);
	/* Not a Stop payload, or not JSON */
	payload(p, sizeof(p), PGN_EVENT_PROMPT, "s1");
	memset(&in, 0, sizeof(in));
	in.payload = p;
	in.len = strlen(p);
	in.home = home;
	in.db_path = dbpath;
	in.host_pid = (long)getpid();
	in.host = PGN_HOST_CLAUDE;
	in.event = PGN_EVENT_PROMPT;
	pgn_hook_rewake(&in, &o);
	CHECK(o.line == NULL);
	CHECK(logged(&o, "status=bad-args") &&
	    logged(&o,
	        "the idle wake (--rewake) is for Claude Code's Stop only"));
	pgn_hook_out_release(&o);
	in.payload = "{\"session_id\":";
	in.len = strlen(in.payload);
	in.event = PGN_EVENT_STOP;
	pgn_hook_rewake(&in, &o);
	CHECK(o.line == NULL);
	CHECK(logged(&o, "status=bad-input"));
	pgn_hook_out_release(&o);
	CHECK_INT(sql_int("SELECT count(*) FROM delivery"), 0);
	CHECK_INT(tokens(), 0);
}

/* Token files older than the entry's timeout have no waiter: swept. */
static void
test_a_new_waiter_sweeps_stale_token_files(void)
{
	char dir[PATH_MAX + 16], old[PATH_MAX + 64], young[PATH_MAX + 64];
	struct timespec t[2];
	struct pgn_hook_out o;

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	snprintf(dir, sizeof(dir), "%s/rewake", home);
	REQUIRE(mkdir(dir, 0700) == 0);
	snprintf(old, sizeof(old), "%s/00000000000000000000000000000001", dir);
	snprintf(young, sizeof(young), "%s/00000000000000000000000000000002",
	    dir);
	h_write_file(old, "1 x\n", 4);
	h_write_file(young, "2 y\n", 4);
	t[0].tv_sec = t[1].tv_sec = time(NULL) - PGN_REWAKE_TIMEOUT_S - 61;
	t[0].tv_nsec = t[1].tv_nsec = 0;
	REQUIRE(utimensat(AT_FDCWD, old, t, 0) == 0);
	queue("rita", "hi");
	rewake(&o, "s1", (long)getpid());
	CHECK_INT(o.claimed, 1);
	CHECK(access(old, F_OK) != 0);
	CHECK(access(young, F_OK) == 0);
	CHECK_INT(tokens(), 2); /* the young one and s1's */
	pgn_hook_out_release(&o);
}

/* A host process whose command line is 'argv' (until it is killed). */
static pid_t
host_with(const char *const argv[])
{
	char *v[16];
	pid_t pid = fork();
	size_t i;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		for (i = 0; argv[i] != NULL && i + 1 < 16; i++)
			v[i] = strdup(argv[i]);
		v[i] = NULL;
		execv("/bin/sh", v);
		_exit(127);
	}
	pause_ms(100); /* exec'd: its command line is argv */
	return pid;
}

/*
 * A plain claude -p runs the entry as a blocking Stop hook: the waiter
 * ends at once there, and waits under --input-format stream-json.
 */
static void
test_a_plain_claude_p_host_is_not_waited_for(void)
{
	const char *plain[] = {"claude", "-c", "sleep 30; :", "-p", "--", "-x",
	    NULL};
	const char *stream[] = {"claude", "-c", "sleep 30; :", "-p",
	    "--input-format", "stream-json", NULL};
	struct pgn_hook_out o;
	pid_t host;

	setup("{\"reach\":{\"rewakeWaitS\":1}}");
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	host = host_with(plain);
	queue("rita", "not by the idle wake");
	rewake(&o, "s1", (long)host);
	CHECK_INT(o.claimed, 0);
	CHECK(logged(&o, "status=foreground"));
	CHECK_INT(tokens(), 0);
	pgn_hook_out_release(&o);
	kill(host, SIGKILL);
	REQUIRE(waitpid(host, NULL, 0) == host);
	host = host_with(stream);
	rewake(&o, "s1", (long)host);
	CHECK_INT(o.claimed, 1);
	pgn_hook_out_release(&o);
	kill(host, SIGKILL);
	REQUIRE(waitpid(host, NULL, 0) == host);
}

/* ---- pigeon-hook's side: hook_rewake ------------------------------ */

/* hook_rewake on the Stop payload of 'sid'; 'err' gets the mail. */
static int
hook_once(const char *sid, int err)
{
	struct hook_opts o;
	char p[PATH_MAX + 512], in[PATH_MAX], pid[32];
	int fd, rc;

	payload(p, sizeof(p), PGN_EVENT_STOP, sid);
	H_PATH(in, "stop.json");
	h_write_file(in, p, strlen(p));
	fd = open(in, O_RDONLY);
	REQUIRE(fd >= 0);
	memset(&o, 0, sizeof(o));
	o.host = PGN_HOST_CLAUDE;
	o.event = PGN_EVENT_STOP;
	o.rewake = 1;
	o.no_timer = 1;
	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	REQUIRE(setenv("CLAUDE_PID", pid, 1) == 0);
	REQUIRE(setenv("PIGEON_HOME", home, 1) == 0);
	REQUIRE(setenv("PIGEON_DB", dbpath, 1) == 0);
	rc = hook_rewake(&o, fd, err);
	close(fd);
	unsetenv("CLAUDE_PID");
	unsetenv("PIGEON_DB");
	return rc;
}

static char *
hook_log_text(void)
{
	char path[PATH_MAX + 16];
	size_t n;

	snprintf(path, sizeof(path), "%s/hook.log", home);
	return h_read_file(path, &n);
}

static void
test_pigeon_hook_prints_the_mail_on_stderr_and_exits_2(void)
{
	char errp[PATH_MAX], *text, *log;
	size_t n;
	int err;

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	queue("rita", "wake up");
	H_PATH(errp, "stderr");
	err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(err >= 0);
	CHECK_INT(hook_once("s1", err), HOOK_EXIT_WAKE);
	close(err);
	text = h_read_file(errp, &n);
	REQUIRE(text != NULL);
	CHECK_CONTAINS(text, "Pigeon: 1 new message for rita.");
	CHECK_CONTAINS(text, "\n  wake up\n");
	free(text);
	log = hook_log_text();
	CHECK_CONTAINS(log, " mode=rewake session=claude:s1 status=woken ");
	free(log);
}

/* stderr gone after the commit: delivered, logged with the ids. */
static void
test_stderr_failing_after_the_claim_logs_lost_output(void)
{
	char *log;
	int p[2];

	setup(NULL);
	turn(PGN_EVENT_SESSION_START, "s1", "rita");
	queue("rita", "into the void");
	REQUIRE(pipe(p) == 0);
	close(p[0]); /* EPIPE on write; SIGPIPE is ignored by the hook */
	CHECK_INT(hook_once("s1", p[1]), HOOK_EXIT_OK);
	close(p[1]);
	log = hook_log_text();
	CHECK_CONTAINS(log, " status=lost-output ");
	CHECK_CONTAINS(log, " ids=1: stderr failed after the claim");
	free(log);
	CHECK_INT(sql_int("SELECT count(*) FROM delivery WHERE route = 'stop'"),
	    1);
}

static const struct h_test tests[] = {
    H_TEST(test_mail_that_arrives_while_it_waits_is_claimed_as_a_stop),
    H_TEST(test_mail_already_queued_is_claimed_at_once),
    H_TEST(test_a_newer_waiter_supersedes_the_older_which_claims_nothing),
    H_TEST(test_the_governor_ends_the_idle_wake_at_the_cap),
    H_TEST(test_a_host_that_is_gone_claims_nothing),
    H_TEST(test_a_host_that_ends_during_the_wait_claims_nothing),
    H_TEST(test_no_mail_within_rewake_wait_s_ends_quietly),
    H_TEST(test_rewake_wait_s_zero_turns_it_off),
    H_TEST(test_a_new_waiter_sweeps_stale_token_files),
    H_TEST(test_a_plain_claude_p_host_is_not_waited_for),
    H_TEST(test_pigeon_hook_prints_the_mail_on_stderr_and_exits_2),
    H_TEST(test_stderr_failing_after_the_claim_logs_lost_output),
    H_TEST(test_what_cannot_wait_ends_with_a_line_and_nothing_claimed),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
