/*
 * The queue doorbell (decisions 0211, 0233) on every backend: a send
 * for an idle bound Codex session runs `codex queue --thread ID
 * --message LINE (#MSG).` detached, the fixed line and never the mail,
 * with the session's CODEX_HOME and none of Pigeon's variables; the
 * send waits for none of it (a command that hangs is killed past
 * PGN_DOORBELL_QUEUE_MS, and the send had returned long before); its
 * outcome is a wake.log line. One ring outstanding, never for low or
 * where reach.wake is off; no codex on PATH gives the claim back. The
 * "codex" here is a script first on PATH that records what it was given.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "store_int.h"
#include "pigeon/hook.h"
#include "pigeon/hosts.h"
#include "claim.h"

#define SID "01a23c1c-63a9-7792-8a22-63349b37bfb3"
#define KEY "codex:" SID

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */
static char home[PATH_MAX], codex_home[PATH_MAX], transcript[PATH_MAX],
    bin[PATH_MAX], seen[PATH_MAX], gate[PATH_MAX], old_path[8192];

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	REQUIRE(fputs(text, f) >= 0);
	REQUIRE(fclose(f) == 0);
}

/* The stand-in codex: its arguments, CODEX_HOME and any PIGEON_
 * variable to 'seen' (written whole, then renamed), then 'mode':
 * "ok" exits 0, "fail" exits 3, "hang" waits until the file 'gate'
 * exists (only the test makes it). */
static void
fake_codex(const char *mode)
{
	char path[PATH_MAX], text[2048];

	h_join(path, sizeof(path), bin, "codex");
	REQUIRE(snprintf(text, sizeof(text),
	            "#!/bin/sh\n"
	            "{ for a in \"$@\"; do echo \"arg=$a\"; done\n"
	            "  echo \"home=$CODEX_HOME\"\n"
	            "  echo \"nice=$(nice)\"\n"
	            "  env | grep '^PIGEON_' | sed 's/^/leak=/'; } >'%s.tmp'\n"
	            "mv '%s.tmp' '%s'\n"
	            "case %s in fail) exit 3 ;;\n"
	            "hang) while [ ! -e '%s' ]; do sleep 0.05; done ;; esac\n"
	            "exit 0\n",
	            seen, seen, seen, mode, gate) < (int)sizeof(text));
	put(path, text);
	REQUIRE(chmod(path, 0700) == 0);
}

/* bob, bound to Codex session KEY with its transcript. */
static void
bind_bob_turn(const char *turn)
{
	be_claim_turn(db, "codex", KEY, "bob", turn, transcript);
}

static void
setup(void)
{
	char dir[PATH_MAX], path[PATH_MAX * 2];
	const char *p = getenv("PATH");

	H_PATH(home, "state");
	REQUIRE(mkdir(home, 0700) == 0);
	REQUIRE(setenv("PIGEON_HOME", home, 1) == 0);
	H_PATH(codex_home, "codex");
	REQUIRE(mkdir(codex_home, 0700) == 0);
	h_join(dir, sizeof(dir), codex_home, "sessions");
	REQUIRE(mkdir(dir, 0700) == 0);
	REQUIRE(snprintf(transcript, sizeof(transcript),
	            "%s/2026/12/03/rollout-2026-12-03T13-33-43-%s.jsonl", dir,
	            SID) < (int)sizeof(transcript));
	H_PATH(bin, "bin");
	REQUIRE(mkdir(bin, 0700) == 0);
	H_PATH(seen, "seen");
	H_PATH(gate, "gate");
	fake_codex("ok");
	(void)snprintf(old_path, sizeof(old_path), "%s", p != NULL ? p : "");
	REQUIRE(snprintf(path, sizeof(path), "%s:%s", bin, old_path) <
	    (int)sizeof(path));
	REQUIRE(setenv("PATH", path, 1) == 0);
	be_open_pair("pgn_wakeq", &db, &chk);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	bind_bob_turn("p1");
}

static void
teardown(void)
{
	REQUIRE(setenv("PATH", old_path, 1) == 0);
	(void)be_close_pair(&db, &chk);
}

static int64_t
count(const char *sql)
{
	return be_count(chk, sql);
}

static pgn_status
send_p(const char *body, int priority)
{
	return be_send_one(db, "alice", "bob", body, priority);
}

static void
slurp(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	out[0] = '\0';
	if (f == NULL)
		return;
	n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	fclose(f);
}

static void
wake_log(char *out, size_t cap)
{
	char path[PATH_MAX];

	h_join(path, sizeof(path), home, "wake.log");
	slurp(path, out, cap);
}

/*
 * Wait until wake.log holds 'what' (the detached watcher's last word):
 * an event, polled; the limit only ends a broken run, it is no claim
 * about time (a hang is killed at PGN_DOORBELL_QUEUE_MS, well within).
 */
static int
log_shows(const char *what)
{
	static const struct timespec tick = {0, 50000000};
	char text[8192];
	int i;

	for (i = 0; i < 2400; i++) {
		wake_log(text, sizeof(text));
		if (strstr(text, what) != NULL)
			return 1;
		(void)nanosleep(&tick, NULL);
	}
	return 0;
}

static const char *
line(void)
{
	return pgn_host_get(pgn_host_by_name("codex"))->doorbell->line;
}

/* ---- rules ------------------------------------------------------------ */

static void
rule_a_send_queues_the_fixed_line_for_an_idle_codex_session(void)
{
	char got[4096], want[1024], log[8192];
	int ni;

	/* The watcher runs PGN_DOORBELL_NICE nicer than its sender. */
	errno = 0;
	ni = nice(0);
	REQUIRE(errno == 0);
	ni = ni + PGN_DOORBELL_NICE > 19 ? 19 : ni + PGN_DOORBELL_NICE;
	REQUIRE(send_p("SECRET-BODY the build is broken", 0) == PGN_OK);
	REQUIRE(log_shows(" codex-queue: exit 0"));
	slurp(seen, got, sizeof(got));
	REQUIRE(snprintf(want, sizeof(want),
	            "arg=queue\narg=--thread\narg=%s\narg=--message\n"
	            "arg=%s (#1).\nhome=%s\nnice=%d\n",
	            SID, line(), codex_home, ni) < (int)sizeof(want));
	CHECK_STR(got, want); /* no leak= line: no PIGEON_ variable */
	CHECK(strstr(got, "SECRET") == NULL);
	wake_log(log, sizeof(log));
	CHECK(strstr(log,
	          "agent=bob session=" KEY " msg=1 codex-queue: "
	          "exit 0\n") != NULL);
	CHECK_INT(count("SELECT count(*) FROM message WHERE id = 1 AND "
	                "woken_ms > 0 AND woken_via = 'codex-queue'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'woken' "
	                "AND peer = '" KEY "' AND message_id = 1 "
	                "AND detail = 'codex-queue'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 1);
}

static void
rule_a_second_send_while_the_ring_is_outstanding_queues_nothing(void)
{
	char log[8192];

	REQUIRE(send_p("one", 0) == PGN_OK);
	REQUIRE(send_p("two", PGN_PRIORITY_URGENT) == PGN_OK);
	REQUIRE(log_shows(" codex-queue: exit 0"));
	wake_log(log, sizeof(log));
	CHECK(strstr(log, "msg=2") == NULL);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'woken'"),
	    1);
}

static void
rule_low_queues_nothing(void)
{
	char log[256];

	REQUIRE(send_p("low", PGN_PRIORITY_LOW) == PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 0);
	wake_log(log, sizeof(log));
	CHECK_STR(log, "");
	CHECK(access(seen, F_OK) != 0); /* the fork would precede the return */
}

static void
rule_reach_wake_off_queues_nothing(void)
{
	char dir[PATH_MAX], path[PATH_MAX], log[256];

	H_PATH(dir, "proj");
	REQUIRE(mkdir(dir, 0700) == 0);
	h_join(path, sizeof(path), dir, ".pigeon");
	REQUIRE(mkdir(path, 0700) == 0);
	h_join(path, sizeof(path), dir, ".pigeon/config.json");
	put(path, "{\"reach\": {\"wake\": \"off\"}}");
	REQUIRE(pgn_db_set_scope(db, dir) == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_exec(chk, "DELETE FROM session", "unbinding", PGN_NONE) ==
	    PGN_OK);
	bind_bob_turn("p-project");
	REQUIRE(send_p("urgent", PGN_PRIORITY_URGENT) == PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
	wake_log(log, sizeof(log));
	CHECK_STR(log, "");
	CHECK(access(seen, F_OK) != 0);
}

static void
rule_no_codex_on_path_gives_the_claim_back_and_the_send_succeeds(void)
{
	char path[PATH_MAX], log[2048];

	h_join(path, sizeof(path), bin, "codex");
	REQUIRE(unlink(path) == 0);
	REQUIRE(send_p("hello", 0) == PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message WHERE id = 1 AND "
	                "delivered_ms IS NULL"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 0);
	wake_log(log, sizeof(log));
	CHECK(
	    strstr(log, "msg=1 not rung (gone): codex is not on PATH") != NULL);
}

static void
rule_a_failing_queue_is_logged_with_its_exit_status(void)
{
	fake_codex("fail");
	REQUIRE(send_p("hello", 0) == PGN_OK);
	CHECK(log_shows("msg=1 codex-queue: failed: exit 3\n"));
	CHECK_INT(count("SELECT count(*) FROM message WHERE id = 1 AND "
	                "delivered_ms IS NULL"),
	    1);
}

/* The send returns while the command still waits; it goes on when let. */
static void
rule_a_queue_that_hangs_never_holds_the_send(void)
{
	static const struct timespec tick = {0, 50000000};
	int i;

	fake_codex("hang");
	REQUIRE(send_p("hello", 0) == PGN_OK);
	/* The command has started (it wrote 'seen') and waits for the gate
	 * that only this process makes: the send is back. */
	for (i = 0; i < 2400 && access(seen, F_OK) != 0; i++)
		(void)nanosleep(&tick, NULL);
	REQUIRE(access(seen, F_OK) == 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE id = 1 AND "
	                "woken_via = 'codex-queue'"),
	    1);
	put(gate, "go\n");
	CHECK(log_shows("msg=1 codex-queue: exit 0\n"));
}

/* At the bound: a command that never ends is killed, its group with it,
 * and the log says so (SQLite only: the bound is not the store's). */
static void
rule_a_queue_past_the_bound_is_killed_and_logged(void)
{
	char want[128];

	fake_codex("hang");
	REQUIRE(send_p("hello", 0) == PGN_OK);
	REQUIRE(snprintf(want, sizeof(want),
	            "msg=1 codex-queue: not done within %d ms: killed\n",
	            PGN_DOORBELL_QUEUE_MS) < (int)sizeof(want));
	CHECK(log_shows(want));
}

/*
 * One past PGN_DOORBELL_WATCHERS watchers of this process still running:
 * every ring is still handed off (the last through a child that ends at
 * once), and each command's outcome is logged.
 */
static void
rule_past_the_watchers_bound_a_ring_is_still_handed_off(void)
{
	char want[64], log[65536];
	int i;

	fake_codex("hang");
	for (i = 1; i <= PGN_DOORBELL_WATCHERS + 1; i++) {
		/* Re-armed: as if the last ring had been heard. */
		REQUIRE(pgn_exec(chk, "UPDATE session SET rung_ms = NULL",
		            "re-arming", PGN_NONE) == PGN_OK);
		REQUIRE(send_p("hello", 0) == PGN_OK);
	}
	CHECK_INT(count("SELECT count(*) FROM message WHERE "
	                "woken_via = 'codex-queue'"),
	    PGN_DOORBELL_WATCHERS + 1);
	put(gate, "go\n");
	for (i = 1; i <= PGN_DOORBELL_WATCHERS + 1; i++) {
		REQUIRE(snprintf(want, sizeof(want),
		            " msg=%d codex-queue: exit 0\n",
		            i) < (int)sizeof(want));
		CHECK(log_shows(want));
	}
	wake_log(log, sizeof(log));
	CHECK(strstr(log, "not rung") == NULL);
}

static void (*const rules[])(void) = {
    rule_a_send_queues_the_fixed_line_for_an_idle_codex_session,
    rule_a_second_send_while_the_ring_is_outstanding_queues_nothing,
    rule_low_queues_nothing,
    rule_reach_wake_off_queues_nothing,
    rule_no_codex_on_path_gives_the_claim_back_and_the_send_succeeds,
    rule_a_failing_queue_is_logged_with_its_exit_status,
    rule_a_queue_that_hangs_never_holds_the_send,
};

static void (*const bound_rules[])(void) = {
    rule_a_queue_past_the_bound_is_killed_and_logged,
    rule_past_the_watchers_bound_a_ring_is_still_handed_off,
};

static void
test_rules_on_sqlite(void)
{
	be_rules(0, rules, H_COUNT(rules), setup, teardown);
	be_rules(0, bound_rules, H_COUNT(bound_rules), setup, teardown);
}

static void
test_rules_on_postgresql(void)
{
	if (be_have_pg())
		be_rules(1, rules, H_COUNT(rules), setup, teardown);
}

static const struct h_test tests[] = {
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
