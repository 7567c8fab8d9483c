/*
 * Acknowledgements and threads (decision 0157), on every backend: what
 * send --ack stores and its bounds, a reply's thread, pigeon ack (only
 * the recipient, once, its text's bound), a reply that acknowledges,
 * status through queued, delivered, overdue and acknowledged, the one
 * reminder of a prompt or session start (journalled, no second
 * delivery), wait --ack, a thread's listing and its bound. A second
 * connection asserts what the database holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "store_int.h"
#include "claim.h"

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */

static void
setup(void)
{
	be_open_pair("pgn_ack", &db, &chk);
	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "carol") == PGN_OK);
}

static void
teardown(void)
{
	(void)be_close_pair(&db, &chk);
}

static int64_t
count(const char *sql)
{
	return be_count(chk, sql);
}

/*
 * Send 'body' from 'from' to 'to' (a name or "@GROUP") with 'priority';
 * its id, or 0 with '*st' the status.
 */
static int64_t
send_with(const char *from, const char *to, const char *body, int64_t reply_to,
    int64_t ack_ms, int priority, pgn_status *st)
{
	struct pgn_send req;
	struct pgn_sent sent[1];
	size_t n = 0;

	memset(&req, 0, sizeof(req));
	req.from = from;
	req.to = &to;
	req.nto = 1;
	req.body = body;
	req.body_len = strlen(body);
	req.reply_to = reply_to;
	req.ack_ms = ack_ms;
	req.priority = priority;
	*st = pgn_send(db, &req, sent, 1, &n);
	return *st == PGN_OK && n == 1 ? sent[0].id : 0;
}

static int64_t
send_ack(const char *from, const char *to, const char *body, int64_t reply_to,
    int64_t ack_ms, pgn_status *st)
{
	return send_with(from, to, body, reply_to, ack_ms, PGN_PRIORITY_NORMAL,
	    st);
}

static int64_t
send_ok(const char *from, const char *to, const char *body, int64_t reply_to,
    int64_t ack_ms)
{
	pgn_status st;
	int64_t id = send_ack(from, to, body, reply_to, ack_ms, &st);

	REQUIRE(st == PGN_OK);
	return id;
}

static pgn_status
ack(const char *from, int64_t id, const char *text, struct pgn_acked *out)
{
	struct pgn_ack req;

	memset(&req, 0, sizeof(req));
	req.id = id;
	req.from = from;
	req.text = text;
	req.text_len = text != NULL ? strlen(text) : 0;
	return pgn_ack(db, &req, out);
}

static void
read_all(const char *agent)
{
	struct pgn_claim req;
	struct pgn_msgs m;

	memset(&req, 0, sizeof(req));
	req.agent = agent;
	req.route = "cli";
	REQUIRE(pgn_claim(db, &req, &m) == PGN_OK);
	pgn_msgs_release(&m);
}

static struct pgn_msg_status
status_of(int64_t id)
{
	struct pgn_msg_status s;

	REQUIRE(pgn_msg_status(db, &id, 1, &s) == PGN_OK);
	return s;
}

/* Is message 'id' overdue? */
static int
overdue(int64_t id)
{
	struct pgn_msg_status s = status_of(id);
	int o = s.overdue;

	pgn_msg_status_release(&s, 1);
	return o;
}

/* ---- the rules ----------------------------------------------------- */

static void
test_send_ack_stores_its_time_within_its_bounds(void)
{
	pgn_status st;
	int64_t id;

	id = send_ok("alice", "bob", "default", 0, PGN_ACK_DEFAULT_MS);
	CHECK_INT(count("SELECT ack_ms FROM message WHERE id = 1"),
	    PGN_ACK_DEFAULT_MS);
	CHECK_INT(id, 1);
	send_ok("alice", "bob", "least", 0, PGN_ACK_MIN_MS);
	send_ok("alice", "bob", "most", 0, PGN_ACK_MAX_MS);
	CHECK_INT(count("SELECT count(*) FROM message WHERE ack_ms IS NULL"),
	    0);
	CHECK_INT(send_ack("alice", "bob", "too soon", 0, PGN_ACK_MIN_MS - 1,
	              &st),
	    0);
	CHECK_INT(st, PGN_EINVAL);
	CHECK_INT(send_ack("alice", "bob", "too late", 0, PGN_ACK_MAX_MS + 1,
	              &st),
	    0);
	CHECK_INT(st, PGN_EINVAL);
	CHECK_INT(send_ack("alice", "bob", "negative", 0, -5, &st), 0);
	CHECK_INT(st, PGN_EINVAL);
	CHECK_INT(count("SELECT count(*) FROM message"), 3);
	send_ok("alice", "bob", "no ack", 0, 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE id = 4 "
	                "AND ack_ms IS NULL"),
	    1);
}

static void
test_a_reply_joins_its_first_messages_thread(void)
{
	int64_t a, b, c, d;

	a = send_ok("alice", "bob", "first", 0, 0);
	b = send_ok("bob", "alice", "second", a, 0);
	c = send_ok("alice", "bob", "third", b, 0);
	d = send_ok("carol", "bob", "elsewhere", 0, 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE id = 1 AND "
	                "thread IS NULL"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM message WHERE thread = 1"), 2);
	CHECK_INT(status_of(c).thread, a);
	CHECK_INT(status_of(d).thread, d);
	CHECK_INT(status_of(a).thread, a);
}

static void
test_only_the_recipient_acknowledges_and_nothing_is_stored_otherwise(void)
{
	struct pgn_acked out;
	int64_t id;

	id = send_ok("alice", "bob", "do it", 0, PGN_ACK_DEFAULT_MS);
	CHECK_INT(ack("carol", id, "not mine", &out), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "only its recipient acknowledges it");
	CHECK_INT(ack("alice", id, NULL, &out), PGN_EINVAL);
	CHECK_INT(ack("bob", 99, NULL, &out), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no message 99");
	CHECK_INT(ack("bob", 0, NULL, &out), PGN_EINVAL);
	CHECK_INT(count("SELECT count(*) FROM message WHERE acked_ms IS NOT "
	                "NULL OR ack_text IS NOT NULL"),
	    0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'acked'"),
	    0);
}

static void
test_acknowledging_twice_keeps_the_first(void)
{
	struct pgn_acked out;
	int64_t id, first;

	id = send_ok("alice", "bob", "do it", 0, PGN_ACK_DEFAULT_MS);
	CHECK_INT(ack("bob", id, "done", &out), PGN_OK);
	CHECK_INT(out.already, 0);
	CHECK_STR(out.sender, "alice");
	CHECK_STR(out.agent, "bob");
	first = out.acked_ms;
	CHECK(first > 0);
	CHECK_INT(ack("bob", id, "again", &out), PGN_OK);
	CHECK_INT(out.already, 1);
	CHECK_INT(out.acked_ms, first);
	CHECK_INT(count("SELECT count(*) FROM message WHERE ack_text = 'done'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal j JOIN agent a ON "
	                "a.id = j.agent_id WHERE j.kind = 'acked' AND "
	                "a.name = 'bob' AND j.peer = 'alice'"),
	    1);
}

static void
test_an_acknowledgements_text_is_bounded(void)
{
	char text[PGN_MAX_ACK_TEXT + 2];
	struct pgn_acked out;
	int64_t a, b;

	a = send_ok("alice", "bob", "one", 0, PGN_ACK_DEFAULT_MS);
	b = send_ok("alice", "bob", "two", 0, PGN_ACK_DEFAULT_MS);
	memset(text, 'x', sizeof(text) - 1);
	text[PGN_MAX_ACK_TEXT + 1] = '\0';
	CHECK_INT(ack("bob", a, text, &out), PGN_ETOOBIG);
	text[PGN_MAX_ACK_TEXT] = '\0';
	CHECK_INT(ack("bob", b, text, &out), PGN_OK);
	CHECK_INT(ack("bob", a, "\xff", &out), PGN_EINVAL);
	CHECK_INT(count("SELECT count(*) FROM message WHERE acked_ms IS NOT "
	                "NULL"),
	    1);
	CHECK_INT(count("SELECT length(ack_text) FROM message WHERE id = 2"),
	    PGN_MAX_ACK_TEXT);
}

static void
test_a_reply_from_the_recipient_acknowledges_what_asked(void)
{
	struct pgn_msg_status s;
	int64_t asked, plain, r;

	asked = send_ok("alice", "bob", "asks", 0, PGN_ACK_DEFAULT_MS);
	plain = send_ok("alice", "bob", "asks nothing", 0, 0);
	/* Not its recipient: no acknowledgement. */
	send_ok("carol", "alice", "me too", asked, 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE acked_ms IS NOT "
	                "NULL"),
	    0);
	r = send_ok("bob", "alice", "on it", asked, 0);
	send_ok("bob", "alice", "and this", plain, 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE acked_ms IS NOT "
	                "NULL AND id = 1 AND ack_text IS NULL"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM message WHERE acked_ms IS NOT "
	                "NULL"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'acked'"),
	    1);
	s = status_of(asked);
	CHECK(s.acked_ms > 0);
	CHECK_INT(s.ack_reply, r);
	CHECK(s.ack_text == NULL);
	pgn_msg_status_release(&s, 1);
}

static void
test_status_goes_queued_delivered_overdue_acknowledged(void)
{
	struct pgn_msg_status s;
	struct pgn_acked out;
	int64_t id;

	id = send_ok("alice", "bob", "do it", 0, 60000);
	s = status_of(id);
	CHECK_INT(s.delivered_ms, 0);
	CHECK_INT(s.ack_ms, 60000);
	CHECK(!s.overdue);
	read_all("bob");
	s = status_of(id);
	CHECK(s.delivered_ms > 0);
	CHECK(!s.overdue);
	CHECK_STR(s.route, "cli");
	/* Its time passed: delivered two minutes ago. */
	REQUIRE(pgn_exec(chk,
	            "UPDATE message SET delivered_ms = delivered_ms - 120000",
	            "backdating", PGN_NONE) == PGN_OK);
	s = status_of(id);
	CHECK(s.overdue);
	CHECK_INT(s.acked_ms, 0);
	CHECK_INT(ack("bob", id, "sorry, done", &out), PGN_OK);
	s = status_of(id);
	CHECK(!s.overdue);
	CHECK(s.acked_ms > 0);
	REQUIRE(s.ack_text != NULL);
	CHECK_STR(s.ack_text, "sorry, done");
	pgn_msg_status_release(&s, 1);
}

/* One hook turn for bob's session claude:s (render: NULL, all shown). */
static void
turn(const char *route, const char *key, struct pgn_turn_out *out)
{
	struct pgn_turn t;

	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = "claude:s";
	t.agent = "bob";
	t.turn = key;
	t.route = route;
	t.max_continues = 3;
	REQUIRE(pgn_turn_claim(db, &t, out) == PGN_OK);
}

static void
test_an_overdue_message_is_reminded_once_at_a_prompt(void)
{
	struct pgn_turn_out out;
	struct pgn_peek p;
	int64_t id;

	id = send_ok("alice", "bob", "do it", 0, 60000);
	turn("prompt", "t1", &out);
	CHECK_INT(out.msgs.n, 1);
	CHECK_INT(out.msgs.v[0].ack_ms, 60000);
	CHECK_INT(out.reminders.n, 0);
	pgn_msgs_release(&out.msgs);
	REQUIRE(pgn_turn_peek(db, "claude:s", &p) == PGN_OK);
	CHECK(!p.remind);
	/* when it is due, kept on bob's row too (decision 0160) */
	CHECK_INT(count("SELECT count(*) FROM agent a JOIN message m ON "
	                "m.recipient_id = a.id WHERE a.remind_ms = "
	                "m.delivered_ms + m.ack_ms"),
	    1);
	REQUIRE(pgn_exec(chk,
	            "UPDATE message SET delivered_ms = delivered_ms - 120000",
	            "backdating", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_exec(chk, "UPDATE agent SET remind_ms = remind_ms - 120000",
	            "backdating", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_turn_peek(db, "claude:s", &p) == PGN_OK);
	CHECK(p.remind);
	/* Not after a tool call: a prompt or a session start. */
	turn("after-tool", NULL, &out);
	CHECK_INT(out.reminders.n, 0);
	pgn_msgs_release(&out.reminders);
	turn("prompt", "t2", &out);
	CHECK_INT(out.msgs.n, 0);
	REQUIRE(out.reminders.n == 1);
	CHECK_INT(out.reminders.v[0].id, id);
	CHECK(out.reminders.v[0].reminder);
	CHECK_STR(out.reminders.v[0].body, "do it");
	pgn_msgs_release(&out.reminders);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 1);
	CHECK_INT(count("SELECT count(*) FROM message WHERE reminded_ms IS "
	                "NOT NULL"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = "
	                "'reminded' AND message_id = 1 AND peer = 'alice' "
	                "AND detail = 'prompt'"),
	    1);
	/* reminded: nothing else is due */
	CHECK_INT(count("SELECT count(*) FROM agent WHERE remind_ms IS NOT "
	                "NULL"),
	    0);
	turn("prompt", "t3", &out);
	CHECK_INT(out.reminders.n, 0);
	REQUIRE(pgn_turn_peek(db, "claude:s", &p) == PGN_OK);
	CHECK(!p.remind);
	CHECK(overdue(id));
	CHECK(status_of(id).reminded_ms > 0);
}

/* Send from alice with a priority to 'to', asking for an ack. */
static int64_t
send_prio(const char *to, int priority, const char *body)
{
	pgn_status st;
	int64_t id = send_with("alice", to, body, 0, 60000, priority, &st);

	REQUIRE(st == PGN_OK);
	return id;
}

/*
 * Status, a thread and a reminder carry the message's priority and
 * group (decision 0158): the reminder is marked as the delivery was,
 * urgent first.
 */
static void
test_status_thread_and_reminder_carry_priority_and_group(void)
{
	const char *bob = "bob";
	struct pgn_msg_status s, *v = NULL;
	struct pgn_turn_out out;
	int64_t low, plain, urgent;
	size_t n = 0;
	int more = 0;

	REQUIRE(pgn_group_add(db, "team", &bob, 1) == PGN_OK);
	low = send_prio("bob", PGN_PRIORITY_LOW, "when you can");
	plain = send_prio("@team", PGN_PRIORITY_NORMAL, "to the team");
	urgent = send_prio("bob", PGN_PRIORITY_URGENT, "stop pushing");
	s = status_of(urgent);
	CHECK_INT(s.priority, PGN_PRIORITY_URGENT);
	CHECK_STR(s.group, "");
	s = status_of(low);
	CHECK_INT(s.priority, PGN_PRIORITY_LOW);
	s = status_of(plain);
	CHECK_INT(s.priority, PGN_PRIORITY_NORMAL);
	CHECK_STR(s.group, "team");
	REQUIRE(pgn_thread(db, plain, &v, &n, &more) == PGN_OK);
	REQUIRE(n == 1);
	CHECK_INT(v[0].id, plain);
	CHECK_STR(v[0].group, "team");
	CHECK_STR(v[0].body, "to the team");
	pgn_msg_status_release(v, n);
	free(v);
	REQUIRE(pgn_thread(db, urgent, &v, &n, &more) == PGN_OK);
	REQUIRE(n == 1);
	CHECK_INT(v[0].priority, PGN_PRIORITY_URGENT);
	pgn_msg_status_release(v, n);
	free(v);
	turn("prompt", "t1", &out);
	CHECK_INT(out.msgs.n, 3);
	pgn_msgs_release(&out.msgs);
	REQUIRE(pgn_exec(chk,
	            "UPDATE message SET delivered_ms = delivered_ms - 120000",
	            "backdating", PGN_NONE) == PGN_OK);
	turn("prompt", "t2", &out);
	REQUIRE(out.reminders.n == 3);
	CHECK_INT(out.reminders.v[0].id, urgent);
	CHECK_INT(out.reminders.v[0].priority, PGN_PRIORITY_URGENT);
	CHECK(out.reminders.v[0].group == NULL);
	CHECK_INT(out.reminders.v[1].id, plain);
	REQUIRE(out.reminders.v[1].group != NULL);
	CHECK_STR(out.reminders.v[1].group, "team");
	CHECK_INT(out.reminders.v[2].id, low);
	CHECK_INT(out.reminders.v[2].priority, PGN_PRIORITY_LOW);
	pgn_msgs_release(&out.reminders);
	CHECK_INT(count("SELECT count(*) FROM message WHERE reminded_ms IS "
	                "NOT NULL"),
	    3);
}

static void
test_an_acknowledged_message_is_never_reminded(void)
{
	struct pgn_turn_out out;
	struct pgn_acked a;

	send_ok("alice", "bob", "do it", 0, 60000);
	turn("session-start", "s1", &out);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(ack("bob", 1, NULL, &a), PGN_OK);
	REQUIRE(pgn_exec(chk,
	            "UPDATE message SET delivered_ms = delivered_ms - 120000",
	            "backdating", PGN_NONE) == PGN_OK);
	turn("session-start", "s2", &out);
	CHECK_INT(out.reminders.n, 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE reminded_ms IS "
	                "NOT NULL"),
	    0);
	CHECK(!overdue(1));
}

/*
 * The due time on the agent row is never later than the truth, and may
 * be earlier (an acknowledgement leaves it): the first look then says
 * "maybe", the prompt finds none due, and the row is set right.
 */
static void
test_a_due_time_left_by_an_acknowledgement_is_set_right_by_a_prompt(void)
{
	struct pgn_turn_out out;
	struct pgn_acked a;
	struct pgn_peek p;

	send_ok("alice", "bob", "do it", 0, 60000);
	send_ok("alice", "bob", "and this", 0, 600000);
	turn("prompt", "t1", &out);
	CHECK_INT(out.msgs.n, 2);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM agent a JOIN message m ON "
	                "m.id = 1 AND a.remind_ms = m.delivered_ms + m.ack_ms"),
	    1);
	CHECK_INT(ack("bob", 1, NULL, &a), PGN_OK);
	REQUIRE(pgn_exec(chk, "UPDATE agent SET remind_ms = remind_ms - 120000",
	            "backdating", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_turn_peek(db, "claude:s", &p) == PGN_OK);
	CHECK(p.remind);
	turn("prompt", "t2", &out);
	CHECK_INT(out.reminders.n, 0);
	pgn_msgs_release(&out.reminders);
	/* the second message's time, exactly */
	CHECK_INT(count("SELECT count(*) FROM agent a JOIN message m ON "
	                "m.id = 2 AND a.remind_ms = m.delivered_ms + m.ack_ms"),
	    1);
	REQUIRE(pgn_turn_peek(db, "claude:s", &p) == PGN_OK);
	CHECK(!p.remind);
}

static void
test_wait_ack_returns_once_acknowledged_and_times_out_before(void)
{
	struct pgn_acked out;
	int acked = -1;

	send_ok("alice", "bob", "do it", 0, 60000);
	CHECK_INT(pgn_wait_ack(db, 1, 1, NULL, NULL, &acked), PGN_OK);
	CHECK_INT(acked, 0);
	CHECK_INT(pgn_wait_ack(db, 7, 1, NULL, NULL, &acked), PGN_ENOTFOUND);
	CHECK_INT(pgn_wait_ack(db, 1, 0, NULL, NULL, &acked), PGN_EINVAL);
	CHECK_INT(pgn_wait_ack(db, 1, PGN_WAIT_MAX_MS + 1, NULL, NULL, &acked),
	    PGN_EINVAL);
	CHECK_INT(ack("bob", 1, NULL, &out), PGN_OK);
	CHECK_INT(pgn_wait_ack(db, 1, PGN_WAIT_MAX_MS, NULL, NULL, &acked),
	    PGN_OK);
	CHECK_INT(acked, 1);
}

static void
test_a_thread_lists_its_messages_in_order(void)
{
	struct pgn_msg_status *v = NULL;
	size_t n = 0;
	int more = -1;

	send_ok("alice", "bob", "first", 0, 60000);
	send_ok("carol", "bob", "another thread", 0, 0);
	send_ok("bob", "alice", "second", 1, 0);
	send_ok("alice", "bob", "third", 3, 0);
	REQUIRE(pgn_thread(db, 4, &v, &n, &more) == PGN_OK);
	REQUIRE(n == 3);
	CHECK_INT(more, 0);
	CHECK_INT(v[0].id, 1);
	CHECK_INT(v[1].id, 3);
	CHECK_INT(v[2].id, 4);
	CHECK_STR(v[1].body, "second");
	CHECK_INT(v[2].reply_to, 3);
	CHECK(v[0].acked_ms > 0); /* bob's reply */
	CHECK_INT(v[0].ack_reply, 3);
	pgn_msg_status_release(v, n);
	free(v);
	CHECK_INT(pgn_thread(db, 99, &v, &n, &more), PGN_ENOTFOUND);
	CHECK_INT(pgn_thread(db, 0, &v, &n, &more), PGN_EINVAL);
}

/* PGN_MAX_THREAD replies (delivered: no queue's cap) after message 1. */
static void
fill_thread(int64_t replies)
{
	REQUIRE(pgn_exec(chk,
	            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
	            "FROM n WHERE i < ?1) INSERT INTO message(scope_id, "
	            "sender, recipient_id, body, created_ms, reply_to, "
	            "thread, delivered_ms) SELECT m.scope_id, 'alice', "
	            "m.recipient_id, 'r', 1, 1, 1, 1 FROM n, message m "
	            "WHERE m.id = 1",
	            "filling a thread", PGN_I(replies)) == PGN_OK);
}

static void
test_a_thread_of_exactly_the_bound_is_whole(void)
{
	struct pgn_msg_status *v = NULL;
	size_t n = 0;
	int more = -1;

	send_ok("alice", "bob", "first", 0, 0);
	fill_thread(PGN_MAX_THREAD - 1);
	REQUIRE(pgn_thread(db, 1, &v, &n, &more) == PGN_OK);
	CHECK_INT(n, PGN_MAX_THREAD);
	CHECK_INT(more, 0);
	pgn_msg_status_release(v, n);
	free(v);
}

static void
test_a_thread_past_the_bound_says_more_follow(void)
{
	struct pgn_msg_status *v = NULL;
	size_t n = 0;
	int more = -1;

	send_ok("alice", "bob", "first", 0, 0);
	fill_thread(PGN_MAX_THREAD);
	REQUIRE(pgn_thread(db, 1, &v, &n, &more) == PGN_OK);
	CHECK_INT(n, PGN_MAX_THREAD);
	CHECK_INT(more, 1);
	CHECK_INT(v[0].id, 1);
	pgn_msg_status_release(v, n);
	free(v);
}

static void (*const rules[])(void) = {
    test_send_ack_stores_its_time_within_its_bounds,
    test_a_reply_joins_its_first_messages_thread,
    test_only_the_recipient_acknowledges_and_nothing_is_stored_otherwise,
    test_acknowledging_twice_keeps_the_first,
    test_an_acknowledgements_text_is_bounded,
    test_a_reply_from_the_recipient_acknowledges_what_asked,
    test_status_goes_queued_delivered_overdue_acknowledged,
    test_an_overdue_message_is_reminded_once_at_a_prompt,
    test_an_acknowledged_message_is_never_reminded,
    test_status_thread_and_reminder_carry_priority_and_group,
    test_a_due_time_left_by_an_acknowledgement_is_set_right_by_a_prompt,
    test_wait_ack_returns_once_acknowledged_and_times_out_before,
    test_a_thread_lists_its_messages_in_order,
    test_a_thread_of_exactly_the_bound_is_whole,
    test_a_thread_past_the_bound_says_more_follow,
};

static void
test_rules_on_sqlite(void)
{
	be_rules(0, rules, H_COUNT(rules), setup, teardown);
}

/* Skipped, with a line, without a server; never under CI=true. */
static void
test_rules_on_postgresql(void)
{
	if (be_have_pg())
		be_rules(1, rules, H_COUNT(rules), setup, teardown);
}

/* psql -f on this pass's database for each schema/pg file below 'v'. */
static void
pg_schema_below(int v)
{
	char cmd[2 * PATH_MAX + 256];
	const char *fix = getenv("PGN_TEST_FIXTURES");
	int i;

	REQUIRE(fix != NULL);
	for (i = 1; i < v; i++) {
		(void)snprintf(cmd, sizeof(cmd),
		    "psql -X -q -v ON_ERROR_STOP=1 '%s' -f \"$(ls "
		    "'%s'/../../schema/pg/%04d_*.sql)\" >/dev/null",
		    be_where, fix, i);
		REQUIRE(be_sh(cmd) == 0);
	}
}

/*
 * PostgreSQL's version 3 moves to 4 (SQLite's 7): old replies join
 * their first message's thread, the journal admits the new kinds.
 */
static void
test_postgresql_migration_threads_old_replies(void)
{
	char cmd[PATH_MAX + 1024];
	pgn_db *d;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	be_store("pgn_ackmig", h_tmp);
	pg_schema_below(4);
	(void)snprintf(cmd, sizeof(cmd),
	    "psql -X -q -v ON_ERROR_STOP=1 '%s' -c \""
	    "INSERT INTO pigeon_schema VALUES (1, 3);"
	    "INSERT INTO scope(id, root) VALUES (1, '');"
	    "INSERT INTO agent(id, scope_id, name, created_ms) VALUES "
	    "(1, 1, 'bob', 1), (2, 1, 'alice', 1);"
	    "INSERT INTO message(id, scope_id, sender, recipient_id, body, "
	    "created_ms, reply_to) VALUES (1, 1, 'alice', 1, 'a', 1, NULL), "
	    "(2, 1, 'bob', 2, 'b', 2, 1), (3, 1, 'alice', 1, 'c', 3, 2), "
	    "(4, 1, 'alice', 1, 'd', 4, NULL);"
	    "INSERT INTO journal(agent_id, at_ms, kind) VALUES (1, 1, "
	    "'created');\" >/dev/null",
	    be_where);
	REQUIRE(be_sh(cmd) == 0);
	d = h_open_path(be_where, 0);
	chk = h_open_path(be_where, 0);
	REQUIRE(d != NULL && chk != NULL);
	CHECK_INT(count("SELECT version FROM pigeon_schema"),
	    pgn_pg_schema_version());
	CHECK_INT(count("SELECT count(*) FROM message WHERE id IN (1, 4) AND "
	                "thread IS NULL"),
	    2);
	CHECK_INT(count("SELECT count(*) FROM message WHERE id IN (2, 3) AND "
	                "thread = 1"),
	    2);
	CHECK_INT(count("SELECT count(*) FROM journal"), 1);
	CHECK_INT(pgn_exec(chk,
	              "INSERT INTO journal(agent_id, at_ms, kind) VALUES "
	              "(1, 2, 'acked'), (1, 2, 'reminded')",
	              "journal", PGN_NONE),
	    PGN_OK);
	CHECK_INT(pgn_exec(chk,
	              "INSERT INTO journal(agent_id, at_ms, kind) VALUES "
	              "(1, 2, 'sideways')",
	              "journal", PGN_NONE),
	    PGN_EDB);
	pgn_db_close(d);
	pgn_db_close(chk);
	chk = NULL;
	(void)be_drop();
}

static const struct h_test tests[] = {
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
    H_TEST(test_postgresql_migration_threads_old_replies),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
