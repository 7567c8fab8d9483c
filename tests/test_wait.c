/*
 * Unit tests of waiting for mail and of a message's status: the claim's
 * filter (sender, reply_to, at most one) leaves other mail queued, the
 * timeout and its bounds, a wake-up from another process's write, leaving
 * on a replaced database, cancelling, the partial index, and where a
 * message stands (queued, delivered with its audit facts, unknown).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "pgn_int.h"
#include "store_int.h"

static pgn_db *db;   /* the library's handle on h_tmp/pigeon.db */
static sqlite3 *raw; /* a plain connection to the same file */

static void
setup(void)
{
	db = h_open();
	raw = h_raw();
	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
}

static void
teardown(void)
{
	sqlite3_close(raw);
	raw = NULL;
	pgn_db_close(db);
	db = NULL;
}

/* Send 'body' from 'from' to 'to'; the new id. */
static int64_t
send1(pgn_db *d, const char *from, const char *to, const char *body,
    int64_t reply_to)
{
	struct pgn_send req;
	struct pgn_sent sent[1];
	const char *rcpt[1] = {to};
	size_t n = 0;

	memset(&req, 0, sizeof(req));
	req.from = from;
	req.to = rcpt;
	req.nto = 1;
	req.body = body;
	req.body_len = strlen(body);
	req.reply_to = reply_to;
	REQUIRE(pgn_send(d, &req, sent, 1, &n) == PGN_OK);
	REQUIRE(n == 1);
	return sent[0].id;
}

static void
wait_init(struct pgn_wait *w, const char *agent, int64_t timeout_ms)
{
	memset(w, 0, sizeof(*w));
	w->claim.agent = agent;
	w->claim.route = "cli";
	w->timeout_ms = timeout_ms;
}

/* 1 if message 'id' is still queued, else 0. */
static long long
queued(int64_t id)
{
	char sql[128];

	snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM message WHERE delivered_ms IS NULL "
	    "AND id = %lld",
	    (long long)id);
	return H_INT(raw, sql);
}
#define QUEUED(id) queued(id)

static void
test_wait_from_a_sender_leaves_other_mail_queued(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;
	int64_t a, c;

	setup();
	a = send1(db, "alice", "bob", "from alice", 0);
	c = send1(db, "carol", "bob", "from carol", 0);
	wait_init(&w, "bob", 1000);
	w.claim.from = "CAROL"; /* names fold, as everywhere */
	REQUIRE(pgn_wait(db, &w, &m) == PGN_OK);
	if (CHECK_INT(m.n, 1)) {
		CHECK_INT(m.v[0].id, c);
		CHECK_STR(m.v[0].body, "from carol");
	}
	CHECK_INT(m.left, 1);
	CHECK_INT(QUEUED(a), 1);
	CHECK_INT(QUEUED(c), 0);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM delivery"), 1);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM delivery WHERE route = "
	              "'cli' AND sender = 'carol'"),
	    1);
	pgn_msgs_release(&m);
	teardown();
}

static void
test_wait_for_a_reply_takes_only_that_reply(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;
	int64_t q, other, plain, reply;

	setup();
	q = send1(db, "alice", "bob", "question", 0);
	other = send1(db, "alice", "bob", "another", 0);
	plain = send1(db, "bob", "alice", "not a reply", 0);
	send1(db, "bob", "alice", "a reply to another", other);
	reply = send1(db, "bob", "alice", "the answer", q);
	wait_init(&w, "alice", 1000);
	w.claim.reply_to = q;
	REQUIRE(pgn_wait(db, &w, &m) == PGN_OK);
	if (CHECK_INT(m.n, 1)) {
		CHECK_INT(m.v[0].id, reply);
		CHECK_INT(m.v[0].reply_to, q);
	}
	CHECK_INT(QUEUED(plain), 1);
	CHECK_INT(QUEUED(reply), 0);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE "
	              "delivered_ms IS NULL AND recipient_id = "
	              "(SELECT id FROM agent WHERE name = 'alice')"),
	    2);
	pgn_msgs_release(&m);
	teardown();
}

static void
test_wait_claims_one_message_the_oldest(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;
	int64_t first, second;

	setup();
	first = send1(db, "alice", "bob", "one", 0);
	second = send1(db, "alice", "bob", "two", 0);
	wait_init(&w, "bob", 1000);
	REQUIRE(pgn_wait(db, &w, &m) == PGN_OK);
	if (CHECK_INT(m.n, 1))
		CHECK_INT(m.v[0].id, first);
	CHECK_INT(m.left, 1);
	CHECK_INT(QUEUED(second), 1);
	CHECK_INT(w.looks, 1);
	pgn_msgs_release(&m);
	teardown();
}

static void
test_a_plain_claim_with_max_takes_that_many(void)
{
	struct pgn_claim req;
	struct pgn_msgs m;

	setup();
	send1(db, "alice", "bob", "one", 0);
	send1(db, "alice", "bob", "two", 0);
	send1(db, "alice", "bob", "three", 0);
	memset(&req, 0, sizeof(req));
	req.agent = "bob";
	req.route = "cli";
	req.max = 2;
	REQUIRE(pgn_claim(db, &req, &m) == PGN_OK);
	CHECK_INT(m.n, 2);
	CHECK_INT(m.left, 1);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM delivery"), 2);
	pgn_msgs_release(&m);
	teardown();
}

static void
test_wait_times_out_looking_at_most_ten_times_a_second(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;
	int64_t t0, took;

	setup();
	send1(db, "alice", "bob", "not from carol", 0);
	wait_init(&w, "bob", 700);
	w.claim.from = "carol";
	t0 = pgn_mono_ms();
	REQUIRE(pgn_wait(db, &w, &m) == PGN_OK);
	took = pgn_mono_ms() - t0;
	CHECK_INT(m.n, 0);
	CHECK(took >= 700);
	CHECK(took < 700 + 500);
	/* idle: a look a second, plus the first and the last */
	CHECK(w.looks >= 1);
	CHECK(w.looks <= took / PGN_WAIT_TICK_MS + 1);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE "
	              "delivered_ms IS NULL"),
	    1);
	teardown();
}

static void
test_wait_timeout_bounds(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;

	setup();
	wait_init(&w, "bob", 0);
	CHECK_INT(pgn_wait(db, &w, &m), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "a wait lasts 1 to 3600000 ms");
	wait_init(&w, "bob", PGN_WAIT_MAX_MS + 1);
	CHECK_INT(pgn_wait(db, &w, &m), PGN_EINVAL);
	send1(db, "alice", "bob", "there already", 0);
	wait_init(&w, "bob", PGN_WAIT_MAX_MS);
	CHECK_INT(pgn_wait(db, &w, &m), PGN_OK);
	CHECK_INT(m.n, 1);
	pgn_msgs_release(&m);
	wait_init(&w, "bob", 1);
	CHECK_INT(pgn_wait(db, &w, &m), PGN_OK);
	CHECK_INT(m.n, 0);
	teardown();
}

static void
test_wait_for_an_unknown_agent_fails_at_once(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;
	int64_t t0;

	setup();
	wait_init(&w, "nobody", 5000);
	t0 = pgn_mono_ms();
	CHECK_INT(pgn_wait(db, &w, &m), PGN_ENOTFOUND);
	CHECK(pgn_mono_ms() - t0 < 1000);
	CHECK_CONTAINS(pgn_errmsg(db), "no agent 'nobody'");
	wait_init(&w, "bob", 5000);
	w.claim.from = "Not A Name";
	CHECK_INT(pgn_wait(db, &w, &m), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "sender");
	teardown();
}

static int
cancel_now(void *arg)
{
	(*(int *)arg)++;
	return 1;
}

static void
test_wait_stops_when_cancelled(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;
	int calls = 0;
	int64_t t0;

	setup();
	wait_init(&w, "bob", 5000);
	w.cancel = cancel_now;
	w.cancel_arg = &calls;
	t0 = pgn_mono_ms();
	CHECK_INT(pgn_wait(db, &w, &m), PGN_OK);
	CHECK_INT(m.n, 0);
	CHECK_INT(calls, 1);
	CHECK(pgn_mono_ms() - t0 < 1000);
	teardown();
}

/* A child process sends after 'delay_ms', on its own connection. */
static pid_t
send_later(long delay_ms, const char *from, int64_t reply_to)
{
	struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
	pgn_db *d;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid != 0)
		return pid;
	nanosleep(&ts, NULL);
	d = h_open();
	send1(d, from, "bob", "late", reply_to);
	pgn_db_close(d);
	_exit(h_failures != 0);
}

static void
test_wait_wakes_on_another_process_sending(void)
{
	struct pgn_msgs m;
	struct pgn_wait w;
	int64_t t0, took;
	pid_t pid;
	int status = 0;

	setup();
	/* a first write, so the -wal file exists to be watched */
	send1(db, "alice", "bob", "not from carol", 0);
	wait_init(&w, "bob", 5000);
	w.claim.from = "carol";
	t0 = pgn_mono_ms();
	pid = send_later(300, "carol", 0);
	REQUIRE(pid > 0);
	REQUIRE(pgn_wait(db, &w, &m) == PGN_OK);
	took = pgn_mono_ms() - t0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (CHECK_INT(m.n, 1))
		CHECK_STR(m.v[0].sender, "carol");
	CHECK(took >= 300);
	/* woken by the write, well before the 1 s fallback look */
	CHECK(took < 300 + 600);
	CHECK(w.looks <= took / PGN_WAIT_TICK_MS + 1);
	pgn_msgs_release(&m);
	teardown();
}

static void
test_wait_leaves_when_the_database_is_replaced(void)
{
	char path[PATH_MAX], other[PATH_MAX];
	struct pgn_msgs m;
	struct pgn_wait w;
	pgn_db *d2;
	int64_t t0;
	pid_t pid;
	int status = 0;

	setup();
	H_PATH(other, "other.db");
	H_PATH(path, "pigeon.db");
	d2 = h_open_path(other, 0);
	pgn_db_close(d2);
	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct timespec ts = {0, 300 * 1000000L};

		nanosleep(&ts, NULL);
		_exit(rename(other, path) != 0);
	}
	wait_init(&w, "bob", 5000);
	t0 = pgn_mono_ms();
	CHECK_INT(pgn_wait(db, &w, &m), PGN_EIO);
	CHECK(pgn_mono_ms() - t0 < 1500);
	CHECK_CONTAINS(pgn_errmsg(db), "was replaced or removed");
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	teardown();
}

static void
test_filtered_claim_and_look_use_the_partial_index(void)
{
	setup();
	H_QUEUE_PLAN(raw, pgn_sql_queued_match, NULL, "filtered claim");
	H_QUEUE_PLAN(raw, pgn_sql_wait_look, NULL, "wait look");
	teardown();
}

static void
test_status_queued_delivered_and_unknown(void)
{
	struct pgn_msg_status s[3];
	struct pgn_msgs m;
	struct pgn_claim req;
	int64_t ids[3], q, d;

	setup();
	d = send1(db, "alice", "bob", "delivered one", 0);
	memset(&req, 0, sizeof(req));
	req.agent = "bob";
	req.route = "cli";
	REQUIRE(pgn_claim(db, &req, &m) == PGN_OK);
	pgn_msgs_release(&m);
	REQUIRE(pgn_session_bind(db, "claude", "claude:s1", "alice",
	            (char[PGN_MAX_NAME + 1]){0}) == PGN_OK);
	q = send1(db, "bob", "alice", "queued one", d);
	/* the audit's facts, as a hook's delivery would have them */
	REQUIRE(H_EXEC(raw,
	    "UPDATE delivery SET session = 'claude:s1', "
	    "host = 'claude', route = 'prompt'"));
	ids[0] = q;
	ids[1] = d;
	ids[2] = 999;
	REQUIRE(pgn_msg_status(db, ids, 3, s) == PGN_OK);
	CHECK_INT(s[0].found, 1);
	CHECK_INT(s[0].delivered_ms, 0);
	CHECK_STR(s[0].sender, "bob");
	CHECK_STR(s[0].recipient, "alice");
	CHECK_INT(s[0].reply_to, d);
	CHECK_STR(s[0].route, "");
	CHECK(s[0].created_ms > 0);
	CHECK_INT(s[1].found, 1);
	CHECK_INT(s[1].delivered_ms,
	    H_INT(raw, "SELECT delivered_ms FROM message WHERE id = 1"));
	CHECK(s[1].delivered_ms > 0);
	CHECK_STR(s[1].session, "claude:s1");
	CHECK_STR(s[1].host, "claude");
	CHECK_STR(s[1].route, "prompt");
	CHECK_STR(s[1].recipient, "bob");
	CHECK_INT(s[2].found, 0);
	CHECK_INT(s[2].id, 999);
	CHECK_STR(s[2].sender, "");
	teardown();
}

static void
test_status_knows_only_its_scope(void)
{
	struct pgn_msg_status s[1];
	int64_t id;

	setup();
	id = send1(db, "alice", "bob", "global", 0);
	REQUIRE(pgn_db_set_scope(db, "/some/project") == PGN_OK);
	REQUIRE(pgn_msg_status(db, &id, 1, s) == PGN_OK);
	CHECK_INT(s[0].found, 0);
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	REQUIRE(pgn_msg_status(db, &id, 1, s) == PGN_OK);
	CHECK_INT(s[0].found, 1);
	teardown();
}

static void
test_status_bounds(void)
{
	static int64_t ids[PGN_MAX_STATUS_IDS + 1];
	static struct pgn_msg_status s[PGN_MAX_STATUS_IDS + 1];
	size_t i;

	setup();
	for (i = 0; i < PGN_MAX_STATUS_IDS + 1; i++)
		ids[i] = (int64_t)i + 1;
	CHECK_INT(pgn_msg_status(db, ids, PGN_MAX_STATUS_IDS, s), PGN_OK);
	CHECK_INT(s[PGN_MAX_STATUS_IDS - 1].id, PGN_MAX_STATUS_IDS);
	CHECK_INT(pgn_msg_status(db, ids, PGN_MAX_STATUS_IDS + 1, s),
	    PGN_ETOOBIG);
	CHECK_INT(pgn_msg_status(db, ids, 0, s), PGN_EINVAL);
	ids[0] = 0;
	CHECK_INT(pgn_msg_status(db, ids, 1, s), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "message id 0");
	teardown();
}

static const struct h_test tests[] = {
    H_TEST(test_wait_from_a_sender_leaves_other_mail_queued),
    H_TEST(test_wait_for_a_reply_takes_only_that_reply),
    H_TEST(test_wait_claims_one_message_the_oldest),
    H_TEST(test_a_plain_claim_with_max_takes_that_many),
    H_TEST(test_wait_times_out_looking_at_most_ten_times_a_second),
    H_TEST(test_wait_timeout_bounds),
    H_TEST(test_wait_for_an_unknown_agent_fails_at_once),
    H_TEST(test_wait_stops_when_cancelled),
    H_TEST(test_wait_wakes_on_another_process_sending),
    H_TEST(test_wait_leaves_when_the_database_is_replaced),
    H_TEST(test_filtered_claim_and_look_use_the_partial_index),
    H_TEST(test_status_queued_delivered_and_unknown),
    H_TEST(test_status_knows_only_its_scope),
    H_TEST(test_status_bounds),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
