/*
 * Unit tests of pigeon-hook's I/O (hookcli/hookio.c): argument
 * parsing, bounded stdin (pipes and files) and hook_run in process.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "hook_fixtures.h"
#include "hookio.h"

/* ---- helpers ------------------------------------------------------- */

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
write_all_fd(int fd, const char *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		r = write(fd, p, n);
		if (r <= 0)
			return;
		p += r;
		n -= (size_t)r;
	}
}

/*
 * A child process writes 'a', waits 'gap_ms', writes 'b' (may be NULL),
 * then keeps the pipe open 'hold_ms' before exiting. Returns the read
 * end; '*pid' is the child (reap it with writer_end).
 */
static int
writer_start(const char *a, size_t alen, long gap_ms, const char *b,
    size_t blen, long hold_ms, pid_t *pid)
{
	int fds[2];

	REQUIRE(pipe(fds) == 0);
	*pid = fork();
	REQUIRE(*pid >= 0);
	if (*pid == 0) {
		close(fds[0]);
		signal(SIGPIPE, SIG_DFL);
		write_all_fd(fds[1], a, alen);
		if (b != NULL) {
			sleep_ms(gap_ms);
			write_all_fd(fds[1], b, blen);
		}
		if (hold_ms > 0)
			sleep_ms(hold_ms);
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

static void
writer_end(int fd, pid_t pid)
{
	int status;

	close(fd);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* hook_read_json on a pipe fed 'data' then held open 'hold_ms'. */
static pgn_status
read_pipe(const char *data, size_t len, long hold_ms, size_t max, long idle_ms,
    char **buf, size_t *n, int64_t *elapsed)
{
	pgn_status st;
	pid_t pid;
	int64_t t0;
	int fd;

	fd = writer_start(data, len, 0, NULL, 0, hold_ms, &pid);
	t0 = now_ms();
	st = hook_read_json(fd, max, idle_ms, t0 + 10000, buf, n);
	*elapsed = now_ms() - t0;
	writer_end(fd, pid);
	return st;
}

/* hook_read_json on a regular file holding 'data'. */
static pgn_status
read_file(const char *data, size_t len, size_t max, char **buf, size_t *n)
{
	char path[PATH_MAX];
	pgn_status st;
	int fd;

	H_PATH(path, "stdin.json");
	h_write_file(path, data, len);
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	st = hook_read_json(fd, max, 500, now_ms() + 10000, buf, n);
	close(fd);
	return st;
}

/* Capture what a FILE-writing call prints. */
struct capture {
	FILE *f;
	char *text;
	size_t len;
};

static FILE *
cap_open(struct capture *c)
{
	memset(c, 0, sizeof(*c));
	c->f = open_memstream(&c->text, &c->len);
	REQUIRE(c->f != NULL);
	return c->f;
}

static const char *
cap_text(struct capture *c)
{
	if (c->f != NULL) {
		fclose(c->f);
		c->f = NULL;
	}
	return c->text != NULL ? c->text : "";
}

static void
cap_release(struct capture *c)
{
	if (c->f != NULL)
		fclose(c->f);
	free(c->text);
	memset(c, 0, sizeof(*c));
}
/* ---- hook_parse_args ----------------------------------------------- */

static int
parse_args(struct hook_opts *o, char **argv, struct capture *out,
    struct capture *err)
{
	int argc = 0;
	FILE *e = cap_open(err);
	int r;

	while (argv[argc] != NULL)
		argc++;
	r = hook_parse_args(o, argc, argv, cap_open(out));
	if (r < 0)
		fprintf(e, "pigeon-hook: %s\n", o->why);
	return r;
}

static char prog[] = "pigeon-hook";

#define ARGV(...) ((char *[]){prog, __VA_ARGS__, NULL})

static void
test_args_host_event_and_agent_forms(void)
{
	struct capture out, err;
	struct hook_opts o;
	char a1[] = "cursor", a2[] = "beforeSubmitPrompt", a3[] = "--agent",
	     a4[] = "Reviewer", a5[] = "--agent=bob", a6[] = "gemini",
	     a7[] = "BeforeAgent", a8[] = "codex", a9[] = "SessionStart";

	CHECK_INT(parse_args(&o, ARGV(a1, a2), &out, &err), 0);
	CHECK_INT(o.host, PGN_HOST_CURSOR);
	CHECK_INT(o.event, PGN_EVENT_PROMPT);
	CHECK(o.agent == NULL);
	CHECK_INT(o.deadline_ms, 0);
	CHECK_STR(cap_text(&out), "");
	CHECK_STR(cap_text(&err), "");
	cap_release(&out);
	cap_release(&err);

	/* --agent NAME before the positionals, --agent=NAME after. */
	CHECK_INT(parse_args(&o, ARGV(a3, a4, a6, a7), &out, &err), 0);
	CHECK_INT(o.host, PGN_HOST_GEMINI);
	CHECK_INT(o.event, PGN_EVENT_PROMPT);
	CHECK_STR(o.agent, "Reviewer");
	cap_release(&out);
	cap_release(&err);

	CHECK_INT(parse_args(&o, ARGV(a8, a9, a5), &out, &err), 0);
	CHECK_INT(o.host, PGN_HOST_CODEX);
	CHECK_INT(o.event, PGN_EVENT_SESSION_START);
	CHECK_STR(o.agent, "bob");
	CHECK_STR(cap_text(&err), "");
	cap_release(&out);
	cap_release(&err);
}

static void
test_args_none_means_detect(void)
{
	struct capture out, err;
	struct hook_opts o;
	char *argv[] = {prog, NULL};
	char a3[] = "--agent", a4[] = "carol";

	o.host = PGN_HOST_CLAUDE;
	CHECK_INT(parse_args(&o, argv, &out, &err), 0);
	CHECK_INT(o.host, PGN_HOST_NONE);
	CHECK_INT(o.event, PGN_EVENT_NONE);
	CHECK(o.agent == NULL);
	cap_release(&out);
	cap_release(&err);

	CHECK_INT(parse_args(&o, ARGV(a3, a4), &out, &err), 0);
	CHECK_INT(o.host, PGN_HOST_NONE);
	CHECK_INT(o.event, PGN_EVENT_NONE);
	CHECK_STR(o.agent, "carol");
	cap_release(&out);
	cap_release(&err);
}

static void
test_args_refuses_bad_host_event_and_counts(void)
{
	struct capture out, err;
	struct hook_opts o;
	char vim[] = "vim", ss[] = "SessionStart", cur[] = "cursor",
	     claude[] = "claude", ups[] = "UserPromptSubmit",
	     stop[] = "SessionEnd", extra[] = "more", opt[] = "--frob",
	     agent[] = "--agent", bsp[] = "beforeSubmitPrompt";

	CHECK_INT(parse_args(&o, ARGV(vim, ss), &out, &err), -1);
	CHECK_CONTAINS(cap_text(&err), "unknown host 'vim'");
	CHECK_STR(cap_text(&out), "");
	cap_release(&out);
	cap_release(&err);

	/* Event names are the host's own, case and all. */
	CHECK_INT(parse_args(&o, ARGV(cur, ss), &out, &err), -1);
	CHECK_CONTAINS(cap_text(&err), "no event 'SessionStart'");
	CHECK_CONTAINS(cap_text(&err), "sessionStart");
	cap_release(&out);
	cap_release(&err);

	CHECK_INT(parse_args(&o, ARGV(claude, bsp), &out, &err), -1);
	cap_release(&out);
	cap_release(&err);

	CHECK_INT(parse_args(&o, ARGV(claude, stop), &out, &err), -1);
	cap_release(&out);
	cap_release(&err);

	/* One positional is neither form. */
	CHECK_INT(parse_args(&o, ARGV(claude), &out, &err), -1);
	CHECK_CONTAINS(cap_text(&err), "name both HOST and EVENT");
	cap_release(&out);
	cap_release(&err);

	CHECK_INT(parse_args(&o, ARGV(claude, ups, extra), &out, &err), -1);
	CHECK_CONTAINS(cap_text(&err), "unexpected argument 'more'");
	cap_release(&out);
	cap_release(&err);

	CHECK_INT(parse_args(&o, ARGV(opt), &out, &err), -1);
	CHECK_CONTAINS(cap_text(&err), "--frob");
	cap_release(&out);
	cap_release(&err);

	/* --agent with no value. */
	CHECK_INT(parse_args(&o, ARGV(claude, ups, agent), &out, &err), -1);
	cap_release(&out);
	cap_release(&err);
}

static void
test_args_help_prints_usage_to_out(void)
{
	struct capture out, err;
	struct hook_opts o;
	char h[] = "-h", help[] = "--help", cur[] = "cursor";

	CHECK_INT(parse_args(&o, ARGV(h), &out, &err), 1);
	CHECK_CONTAINS(cap_text(&out), "usage: pigeon-hook");
	CHECK_CONTAINS(cap_text(&out),
	    "cursor  sessionStart beforeSubmitPrompt postToolUse stop");
	CHECK_CONTAINS(cap_text(&out),
	    "gemini  SessionStart BeforeAgent AfterTool AfterAgent");
	CHECK_STR(cap_text(&err), "");
	cap_release(&out);
	cap_release(&err);

	CHECK_INT(parse_args(&o, ARGV(cur, help), &out, &err), 1);
	CHECK_CONTAINS(cap_text(&out), "usage: pigeon-hook");
	cap_release(&out);
	cap_release(&err);
}

/* ---- hook_read_json ------------------------------------------------ */

static void
test_read_stops_at_the_object_with_the_pipe_open(void)
{
	static const char obj[] = "{\"a\":{\"b\":[1,2,{\"c\":3}]},\"d\":\"e\"}";
	char data[256];
	char *buf = NULL;
	size_t n = 0;
	int64_t el;
	int k;

	k = snprintf(data, sizeof(data), "%s{\"next\":1} trailing", obj);
	/* Idle 3 s, writer holds 5 s: only the object's end can stop it. */
	CHECK_INT(read_pipe(data, (size_t)k, 5000, HOOK_MAX_STDIN, 3000, &buf,
	              &n, &el),
	    PGN_OK);
	CHECK(el < 2000);
	CHECK_INT(n, strlen(obj));
	CHECK_STR(buf, obj);
	free(buf);
}

static void
test_read_object_arriving_in_two_writes(void)
{
	static const char a[] = "{\"hook_event_name\":\"Sess";
	static const char b[] = "ionStart\",\"x\":[{}]}\n{\"late\":true}";
	char *buf = NULL;
	size_t n = 0;
	int64_t t0, el;
	pid_t pid;
	int fd;

	fd = writer_start(a, strlen(a), 150, b, strlen(b), 5000, &pid);
	t0 = now_ms();
	CHECK_INT(hook_read_json(fd, HOOK_MAX_STDIN, 3000, t0 + 10000, &buf,
	              &n),
	    PGN_OK);
	el = now_ms() - t0;
	writer_end(fd, pid);
	CHECK(el < 2500);
	CHECK_STR(buf, "{\"hook_event_name\":\"SessionStart\",\"x\":[{}]}");
	free(buf);
}

static void
test_read_braces_and_quotes_inside_strings(void)
{
	static const char obj[] = "{\"a\":\"}\\\"{\"}";
	static const char obj2[] = "{\"k\\\\\":\"\\\\\",\"v\":\"]]}}\"}";
	char data[128];
	char *buf = NULL;
	size_t n = 0;
	int64_t el;
	int k;

	k = snprintf(data, sizeof(data), "%s}}}", obj);
	CHECK_INT(read_pipe(data, (size_t)k, 3000, HOOK_MAX_STDIN, 2000, &buf,
	              &n, &el),
	    PGN_OK);
	CHECK(el < 1500);
	CHECK_STR(buf, obj);
	free(buf);

	/* An escaped backslash ends before the closing quote. */
	k = snprintf(data, sizeof(data), "%sXYZ", obj2);
	CHECK_INT(read_file(data, (size_t)k, HOOK_MAX_STDIN, &buf, &n), PGN_OK);
	CHECK_STR(buf, obj2);
	CHECK_INT(n, strlen(obj2));
	free(buf);
}

static void
test_read_skips_leading_whitespace(void)
{
	static const char data[] = " \r\n\t\n  {\"a\":1}\n";
	char *buf = NULL;
	size_t n = 0;
	int64_t el;

	CHECK_INT(read_pipe(data, strlen(data), 0, HOOK_MAX_STDIN, 500, &buf,
	              &n, &el),
	    PGN_OK);
	REQUIRE(buf != NULL);
	CHECK_INT(n, strlen(data) - 1);
	CHECK(strstr(buf, "{\"a\":1}") != NULL);
	CHECK(buf[n - 1] == '}');
	free(buf);

	CHECK_INT(read_file(data, strlen(data), HOOK_MAX_STDIN, &buf, &n),
	    PGN_OK);
	CHECK_INT(n, strlen(data) - 1);
	free(buf);
}

static void
test_read_refuses_empty_and_non_objects(void)
{
	static const char *const bad[] = {"", "   \n", "[1]", "garbage",
	    "\"str\"", "42", "null", "  [{\"a\":1}]"};
	char *buf = NULL;
	size_t i, n = 0;
	int64_t el;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!CHECK_INT(read_pipe(bad[i], strlen(bad[i]), 0,
		                   HOOK_MAX_STDIN, 2000, &buf, &n, &el),
		        PGN_EINVAL))
			printf("  input: '%s'\n", bad[i]);
		CHECK(el < 1500);
		free(buf);
		buf = NULL;
		CHECK_INT(read_file(bad[i], strlen(bad[i]), HOOK_MAX_STDIN,
		              &buf, &n),
		    PGN_EINVAL);
		free(buf);
		buf = NULL;
	}
}

static void
test_read_refuses_eof_mid_object(void)
{
	static const char *const cut[] = {"{", "{\"a\":", "{\"a\":\"}",
	    "{\"a\":[1,2}", "{\"a\":\"\\\"}\"", "  {\"a\":{\"b\":1}"};
	char *buf = NULL;
	size_t i, n = 0;
	int64_t el;

	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		if (!CHECK_INT(read_pipe(cut[i], strlen(cut[i]), 0,
		                   HOOK_MAX_STDIN, 2000, &buf, &n, &el),
		        PGN_EINVAL))
			printf("  input: '%s'\n", cut[i]);
		CHECK(el < 1500);
		free(buf);
		buf = NULL;
		CHECK_INT(read_file(cut[i], strlen(cut[i]), HOOK_MAX_STDIN,
		              &buf, &n),
		    PGN_EINVAL);
		free(buf);
		buf = NULL;
	}
}

static void
test_read_idle_pipe_gives_up_after_the_idle_time(void)
{
	char *buf = NULL;
	size_t n = 0;
	int64_t el;

	/* Nothing at all, writer holds the pipe 5 s. */
	CHECK_INT(read_pipe("", 0, 5000, HOOK_MAX_STDIN, 300, &buf, &n, &el),
	    PGN_EINVAL);
	CHECK(el >= 250);
	CHECK(el < 3000);
	free(buf);
	buf = NULL;

	/* Half an object, then silence. */
	CHECK_INT(read_pipe("{\"a\":", 5, 5000, HOOK_MAX_STDIN, 300, &buf, &n,
	              &el),
	    PGN_EINVAL);
	CHECK(el >= 250);
	CHECK(el < 3000);
	free(buf);
}

static void
test_read_never_waits_past_the_deadline(void)
{
	char *buf = NULL;
	size_t n = 0;
	int64_t t0, el;
	pid_t pid;
	int fd;

	fd = writer_start("", 0, 0, NULL, 0, 5000, &pid);
	t0 = now_ms();
	CHECK_INT(hook_read_json(fd, HOOK_MAX_STDIN, 3000, t0 + 200, &buf, &n),
	    PGN_EINVAL);
	el = now_ms() - t0;
	writer_end(fd, pid);
	CHECK(el >= 150);
	CHECK(el < 2500);
	free(buf);
	buf = NULL;

	/* A deadline already past reads nothing. */
	fd = writer_start("{}", 2, 0, NULL, 0, 0, &pid);
	CHECK_INT(hook_read_json(fd, HOOK_MAX_STDIN, 500, now_ms() - 1, &buf,
	              &n),
	    PGN_EINVAL);
	writer_end(fd, pid);
	free(buf);
}

/* '{"a":"xxx...x"}' of exactly 'len' bytes (len >= 8). */
static char *
object_of(size_t len)
{
	char *p = malloc(len + 1);

	REQUIRE(p != NULL);
	memcpy(p, "{\"a\":\"", 6);
	memset(p + 6, 'x', len - 8);
	memcpy(p + len - 2, "\"}", 2);
	p[len] = '\0';
	return p;
}

static void
test_read_refuses_more_than_max(void)
{
	char *data, *buf = NULL;
	size_t n = 0;
	int64_t el;

	/* Exactly max is fine; one byte more is not. */
	data = object_of(1000);
	CHECK_INT(read_file(data, 1000, 1000, &buf, &n), PGN_OK);
	CHECK_INT(n, 1000);
	free(buf);
	buf = NULL;
	CHECK_INT(read_pipe(data, 1000, 0, 1000, 2000, &buf, &n, &el), PGN_OK);
	free(buf);
	buf = NULL;
	free(data);

	data = object_of(1001);
	CHECK_INT(read_file(data, 1001, 1000, &buf, &n), PGN_ETOOBIG);
	free(buf);
	buf = NULL;
	CHECK_INT(read_pipe(data, 1001, 0, 1000, 2000, &buf, &n, &el),
	    PGN_ETOOBIG);
	free(buf);
	buf = NULL;
	free(data);

	/* An unfinished stream over the bound, pipe held open. */
	data = object_of(HOOK_MAX_STDIN + 4096);
	data[HOOK_MAX_STDIN + 4096 - 2] = 'x'; /* never closes */
	CHECK_INT(read_pipe(data, HOOK_MAX_STDIN + 4096, 5000, HOOK_MAX_STDIN,
	              3000, &buf, &n, &el),
	    PGN_ETOOBIG);
	CHECK(el < 2500);
	CHECK(n <= HOOK_MAX_STDIN + 1);
	free(buf);
	buf = NULL;
	free(data);

	/* A complete object of the hook's maximum is read whole. */
	data = object_of(HOOK_MAX_STDIN);
	CHECK_INT(read_file(data, HOOK_MAX_STDIN, HOOK_MAX_STDIN, &buf, &n),
	    PGN_OK);
	CHECK_INT(n, HOOK_MAX_STDIN);
	free(buf);
	free(data);
}
/* ---- hook_run, in process ----------------------------------------- */

/* Run the hook on 'input' with PIGEON_HOME under the temp dir. */
static char *
run_hook(pgn_host h, pgn_event e, const char *input, const char *agent)
{
	char home[PATH_MAX], outp[PATH_MAX];
	struct hook_opts o = opts(h, e);
	size_t len;
	char *text;
	pid_t pid;
	int fd, out;

	H_PATH(home, "state");
	H_PATH(outp, "stdout");
	REQUIRE(setenv("PIGEON_HOME", home, 1) == 0);
	unsetenv("PIGEON_DB");
	if (agent != NULL)
		REQUIRE(setenv("PIGEON_AGENT", agent, 1) == 0);
	else
		unsetenv("PIGEON_AGENT");
	o.no_timer = 1;
	out = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	REQUIRE(out >= 0);
	fd = writer_start(input, strlen(input), 0, NULL, 0, 0, &pid);
	CHECK_INT(hook_run(&o, fd, out, NULL), HOOK_EXIT_OK);
	writer_end(fd, pid);
	close(out);
	text = h_read_file(outp, &len);
	REQUIRE(text != NULL);
	return text;
}

static size_t
log_lines(void)
{
	char path[PATH_MAX];
	size_t len, n = 0, i;
	char *s;

	H_PATH(path, "state/hook.log");
	s = h_read_file(path, &len);
	if (s == NULL)
		return 0;
	for (i = 0; i < len; i++)
		n += s[i] == '\n';
	free(s);
	return n;
}

static void
test_run_fails_open_on_bad_input(void)
{
	char *s;

	s = run_hook(PGN_HOST_CURSOR, PGN_EVENT_PROMPT, "garbage", NULL);
	CHECK_STR(s, "{\"continue\":true}\n");
	free(s);
	CHECK_INT(log_lines(), 1);
	s = run_hook(PGN_HOST_CLAUDE, PGN_EVENT_PROMPT, "{\"a\":", NULL);
	CHECK_STR(s, "");
	free(s);
	CHECK_INT(log_lines(), 2);
	/* Undetectable host: nothing at all. */
	s = run_hook(PGN_HOST_NONE, PGN_EVENT_NONE, "[]", NULL);
	CHECK_STR(s, "");
	free(s);
	CHECK_INT(log_lines(), 3);
	/* Detected Cursor prompt without a session: neutral for Cursor. */
	s = run_hook(PGN_HOST_NONE, PGN_EVENT_NONE,
	    "{\"hook_event_name\":\"beforeSubmitPrompt\"}", NULL);
	CHECK_STR(s, "{\"continue\":true}\n");
	free(s);
	CHECK_INT(log_lines(), 4);
}

static void
test_run_delivers_once_per_turn(void)
{
	char dbp[PATH_MAX];
	const cJSON *inner;
	cJSON *root;
	pgn_db *d;
	char *s;
	const char *in =
	    "{\"hook_event_name\":\"UserPromptSubmit\","
	    "\"session_id\":\"u1\",\"turn_id\":\"t1\",\"model\":\"m\","
	    "\"permission_mode\":\"default\",\"cwd\":\"/nonexistent\"}";
	const char *to = "dana";
	struct pgn_send req;
	struct pgn_sent sent[1];
	size_t nsent;

	/* Bound at a prompt: the session learns who it is there. */
	s = run_hook(PGN_HOST_NONE, PGN_EVENT_NONE, in, "dana");
	CHECK_CONTAINS(s, "you are agent \\\"dana\\\" (codex session)");
	free(s);
	H_PATH(dbp, "state/pigeon.db");
	d = h_open_path(dbp, 0);
	CHECK_INT(pgn_db_set_scope(d, ""), PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "eve";
	req.to = &to;
	req.nto = 1;
	req.body = "ping \"quoted\"\nline two";
	req.body_len = strlen(req.body);
	CHECK_INT(pgn_send(d, &req, sent, 1, &nsent), PGN_OK);
	pgn_db_close(d);

	/* Same turn id: nothing. */
	s = run_hook(PGN_HOST_NONE, PGN_EVENT_NONE, in, NULL);
	CHECK_STR(s, "");
	free(s);
	s = run_hook(PGN_HOST_NONE, PGN_EVENT_NONE,
	    "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"u1\","
	    "\"turn_id\":\"t2\",\"cwd\":\"/nonexistent\"}",
	    NULL);
	root = cJSON_Parse(s);
	REQUIRE(root != NULL);
	CHECK_INT(cJSON_GetArraySize(root), 1);
	inner = cJSON_GetObjectItemCaseSensitive(root, "hookSpecificOutput");
	CHECK_STR(jstr(inner, "hookEventName"), "UserPromptSubmit");
	CHECK_CONTAINS(jstr(inner, "additionalContext"), "from eve, ");
	CHECK_CONTAINS(jstr(inner, "additionalContext"),
	    "\n  ping \"quoted\"\n  line two\n");
	cJSON_Delete(root);
	CHECK(s[strlen(s) - 1] == '\n');
	free(s);
}

static const struct h_test tests[] = {
    H_TEST(test_args_host_event_and_agent_forms),
    H_TEST(test_args_none_means_detect),
    H_TEST(test_args_refuses_bad_host_event_and_counts),
    H_TEST(test_args_help_prints_usage_to_out),
    H_TEST(test_read_stops_at_the_object_with_the_pipe_open),
    H_TEST(test_read_object_arriving_in_two_writes),
    H_TEST(test_read_braces_and_quotes_inside_strings),
    H_TEST(test_read_skips_leading_whitespace),
    H_TEST(test_read_refuses_empty_and_non_objects),
    H_TEST(test_read_refuses_eof_mid_object),
    H_TEST(test_read_idle_pipe_gives_up_after_the_idle_time),
    H_TEST(test_read_never_waits_past_the_deadline),
    H_TEST(test_read_refuses_more_than_max),
    H_TEST(test_run_fails_open_on_bad_input),
    H_TEST(test_run_delivers_once_per_turn),
};

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	return h_run(tests, H_COUNT(tests));
}
