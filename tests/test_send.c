/*
 * Who a message is from, and how much of a mailbox one sender may fill,
 * on SQLite and, when PGN_TEST_PG names a server, on PostgreSQL (each
 * rule in a database of its own, as test_backends.c does): a send from
 * inside a bound session is from that session's agent (a --from naming
 * another is refused, nothing stored), a reply ends a wait only from
 * the recipient of the message it answers, and one sender holds at most
 * its share of a recipient's pending cap, the whole cap still holding.
 * What the database holds is checked through a second connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "store_int.h"

#define SHARE PGN_MAX_PENDING_FROM

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */

static void
setup(void)
{
	be_open_pair("pgn_send", &db, &chk);
}

static void
teardown(void)
{
	CHECK_INT(be_close_pair(&db, &chk), 0);
}

/* One number from the second connection. */
static int64_t
count(const char *sql)
{
	return be_count(chk, sql);
}

/* Queued messages for 'to' from 'from', through the second connection. */
static int64_t
queued_from(const char *from, const char *to)
{
	char sql[256];

	(void)snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM message m JOIN agent a ON a.id = "
	    "m.recipient_id WHERE a.name = '%s' AND m.sender = '%s' "
	    "AND m.delivered_ms IS NULL",
	    to, from);
	return count(sql);
}

/* A send as the CLI makes it: --from, $PIGEON_SESSION, the default. */
static pgn_status
send_as(const char *from, const char *session, const char *dflt,
    const char *const *to, size_t nto, const char *body, int64_t reply_to,
    struct pgn_sent *sent, size_t *nsent)
{
	struct pgn_send req;

	memset(&req, 0, sizeof(req));
	req.from = from;
	req.session = session;
	req.from_default = dflt;
	req.to = to;
	req.nto = nto;
	req.body = body;
	req.body_len = strlen(body);
	req.reply_to = reply_to;
	return pgn_send(db, &req, sent, PGN_MAX_RECIPIENTS, nsent);
}

static pgn_status
send1(const char *from, const char *to)
{
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	size_t n;

	return send_as(from, NULL, NULL, &to, 1, "ping", 0, sent, &n);
}

/* 'n' messages from 'from' to 'to'; 1 if all were queued. */
static int
fill(const char *from, const char *to, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (send1(from, to) != PGN_OK) {
			printf("send %d of %d from %s: %s\n", i + 1, n, from,
			    pgn_errmsg(db));
			return 0;
		}
	return 1;
}

/* Bind session 'key' to 'agent' in the current scope. */
static void
bind(const char *key, const char *agent)
{
	char bound[PGN_MAX_NAME + 1];

	REQUIRE(pgn_session_bind(db, "claude", key, agent, bound) == PGN_OK);
	REQUIRE(strcmp(bound, agent) == 0);
}

/* ---- a session sends as its agent ---------------------------------- */

static void
test_a_session_without_from_sends_as_its_agent(void)
{
	const char *to = "lead";
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	size_t n = 0;

	REQUIRE(pgn_agent_add(db, "lead") == PGN_OK);
	bind("claude:s-b", "builder");
	/* the default ($PIGEON_AGENT, else "user") gives way to it */
	CHECK_INT(send_as(NULL, "claude:s-b", "user", &to, 1, "hi", 0, sent,
	              &n),
	    PGN_OK);
	CHECK_INT(n, 1);
	CHECK_STR(sent[0].from, "builder");
	CHECK_INT(send_as(NULL, "claude:s-b", "lead", &to, 1, "hi", 0, sent,
	              &n),
	    PGN_OK);
	CHECK_STR(sent[0].from, "builder");
	/* naming itself, in any case, is no forgery */
	CHECK_INT(send_as("Builder", "claude:s-b", NULL, &to, 1, "hi", 0, sent,
	              &n),
	    PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message WHERE sender = "
	                "'builder'"),
	    3);
	CHECK_INT(count("SELECT count(*) FROM message"), 3);
	CHECK_INT(count("SELECT count(*) FROM journal j JOIN agent a ON "
	                "a.id = j.agent_id WHERE a.name = 'builder' AND "
	                "j.kind = 'sent'"),
	    3);
}

static void
test_a_session_cannot_send_as_another_agent(void)
{
	const char *to[] = {"builder", "lead"};
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	size_t n = 7;

	REQUIRE(pgn_agent_add(db, "lead") == PGN_OK);
	bind("claude:s-b", "builder");
	CHECK_INT(send_as("lead", "claude:s-b", NULL, to, 1, "forged", 0, sent,
	              &n),
	    PGN_EINVAL);
	CHECK(pgn_status_is_usage(PGN_EINVAL));
	CHECK_INT(n, 0);
	CHECK_STR(pgn_errmsg(db),
	    "session 'claude:s-b' sends as its agent 'builder', not as "
	    "'lead'");
	CHECK_INT(pgn_errhint(db, NULL), PGN_HINT_DROP_FROM);
	/* a person's name, an unknown one, --create: refused the same */
	CHECK_INT(send_as("user", "claude:s-b", NULL, to + 1, 1, "x", 0, sent,
	              &n),
	    PGN_EINVAL);
	CHECK_INT(send_as("ghost", "claude:s-b", NULL, to, 2, "x", 0, sent, &n),
	    PGN_EINVAL);
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'sent'"), 0);
}

static void
test_outside_a_bound_session_from_is_free(void)
{
	const char *to = "builder";
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	size_t n = 0;

	REQUIRE(pgn_agent_add(db, "lead") == PGN_OK);
	bind("claude:s-b", "builder");
	/* no session, a session no database knows */
	CHECK_INT(send_as("lead", NULL, NULL, &to, 1, "a", 0, sent, &n),
	    PGN_OK);
	CHECK_INT(send_as("lead", "claude:nobody", "user", &to, 1, "b", 0, sent,
	              &n),
	    PGN_OK);
	CHECK_STR(sent[0].from, "lead");
	CHECK_INT(send_as(NULL, "claude:nobody", "user", &to, 1, "c", 0, sent,
	              &n),
	    PGN_OK);
	CHECK_STR(sent[0].from, "user");
	CHECK_INT(count("SELECT count(*) FROM message WHERE sender = 'lead'"),
	    2);
	CHECK_INT(count("SELECT count(*) FROM message WHERE sender = 'user'"),
	    1);
}

/* A session keeps its agent wherever it sends from: in another scope
 * too it sends as that agent, and --from may name no other. */
static void
test_in_another_scope_a_session_still_sends_as_its_agent(void)
{
	const char *to = "lead";
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	size_t n = 0;

	bind("claude:s-b", "builder");
	REQUIRE(pgn_db_set_scope(db, "/elsewhere") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "lead") == PGN_OK);
	CHECK_INT(send_as("lead", "claude:s-b", NULL, &to, 1, "d", 0, sent, &n),
	    PGN_EINVAL);
	CHECK_STR(pgn_errmsg(db),
	    "session 'claude:s-b' sends as its agent 'builder', not as "
	    "'lead'");
	CHECK_INT(pgn_errhint(db, NULL), PGN_HINT_DROP_FROM);
	CHECK_INT(n, 0);
	CHECK_INT(send_as(NULL, "claude:s-b", "lead", &to, 1, "e", 0, sent, &n),
	    PGN_OK);
	CHECK_STR(sent[0].from, "builder");
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
	/* 'lead' is an agent of the other scope only */
	CHECK_INT(count("SELECT count(*) FROM message m JOIN agent a ON "
	                "a.id = m.recipient_id WHERE m.sender = 'builder' AND "
	                "a.name = 'lead' AND a.scope_id = m.scope_id"),
	    1);
	/* no agent of this scope sent it: no journal entry here */
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'sent'"), 0);
}

static void
test_a_send_needs_a_sender_and_a_mailbox_when_asked(void)
{
	const char *to = "builder";
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	struct pgn_send req;
	size_t n = 0;

	REQUIRE(pgn_agent_add(db, "builder") == PGN_OK);
	CHECK_INT(send_as(NULL, "claude:nobody", NULL, &to, 1, "x", 0, sent,
	              &n),
	    PGN_EINVAL);
	CHECK_STR(pgn_errmsg(db), "no sender");
	CHECK_INT(pgn_errhint(db, NULL), PGN_HINT_SENDER);
	memset(&req, 0, sizeof(req));
	req.from = "dave";
	req.to = &to;
	req.nto = 1;
	req.body = "x";
	req.body_len = 1;
	req.need_mailbox = 1;
	CHECK_INT(pgn_send(db, &req, sent, 1, &n), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no agent 'dave'");
	/* a bad default unused is no error; used, it is */
	CHECK_INT(send_as("dave", NULL, "Not A Name", &to, 1, "y", 0, sent, &n),
	    PGN_OK);
	CHECK_INT(send_as(NULL, NULL, "Not A Name", &to, 1, "z", 0, sent, &n),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "sender 'Not A Name'");
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
}

/* ---- a reply counts from the recipient only ------------------------ */

static void
wait_for_reply(const char *agent, int64_t to, const char *from,
    struct pgn_msgs *m, pgn_status want)
{
	struct pgn_wait w;

	memset(&w, 0, sizeof(w));
	w.claim.agent = agent;
	w.claim.route = "cli";
	w.claim.reply_to = to;
	w.claim.from = from;
	w.timeout_ms = 200; /* nothing to wait for: the look decides */
	CHECK_INT(pgn_wait(db, &w, m), want);
}

static void
test_a_reply_from_a_third_agent_does_not_end_the_wait(void)
{
	const char *lead = "lead", *builder = "builder";
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	struct pgn_msgs m;
	int64_t q, forged, real;
	size_t n = 0;

	REQUIRE(pgn_agent_add(db, "lead") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "builder") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "mallory") == PGN_OK);
	REQUIRE(send_as("lead", NULL, NULL, &builder, 1, "done?", 0, sent,
	            &n) == PGN_OK);
	q = sent[0].id;
	REQUIRE(send_as("mallory", NULL, NULL, &lead, 1, "yes, merge it", q,
	            sent, &n) == PGN_OK);
	forged = sent[0].id;
	wait_for_reply("lead", q, NULL, &m, PGN_OK);
	CHECK_INT(m.n, 0);
	pgn_msgs_release(&m);
	/* asking for the third agent's reply by name is refused */
	wait_for_reply("lead", q, "mallory", &m, PGN_EINVAL);
	CHECK_STR(pgn_errmsg(db),
	    "message 1 went to 'builder': a reply to it comes from 'builder', "
	    "not 'mallory'");
	REQUIRE(send_as("builder", NULL, NULL, &lead, 1, "not yet", q, sent,
	            &n) == PGN_OK);
	real = sent[0].id;
	wait_for_reply("lead", q, "BUILDER", &m, PGN_OK);
	if (CHECK_INT(m.n, 1)) {
		CHECK_INT(m.v[0].id, real);
		CHECK_STR(m.v[0].sender, "builder");
	}
	pgn_msgs_release(&m);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 1);
	/* the forged reply stays queued, for pigeon read to show */
	CHECK_INT(queued_from("mallory", "lead"), 1);
	CHECK(forged != real);
	/* a message the scope does not hold: said at once */
	wait_for_reply("lead", 999, NULL, &m, PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no message 999 in scope");
}

/* ---- one sender's share of the pending cap ------------------------- */

static void
test_one_sender_fills_at_most_its_share(void)
{
	struct pgn_msgs m;
	struct pgn_claim c;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	CHECK(SHARE == PGN_MAX_PENDING / 2);
	REQUIRE(fill("flood", "bob", SHARE - 1));
	CHECK_INT(queued_from("flood", "bob"), SHARE - 1);
	/* the share-th is queued; the next is refused, nothing stored */
	CHECK_INT(send1("flood", "bob"), PGN_OK);
	CHECK_INT(queued_from("flood", "bob"), SHARE);
	CHECK_INT(send1("flood", "bob"), PGN_EFULL);
	CHECK_STR(pgn_errmsg(db),
	    "agent 'bob' already has 100 messages waiting from 'flood', one "
	    "sender's share (100 of the cap of 200); nothing was sent: wait "
	    "until it reads them");
	CHECK_INT(queued_from("flood", "bob"), SHARE);
	CHECK_INT(count("SELECT count(*) FROM message"), SHARE);
	/* another sender still gets through */
	CHECK_INT(send1("alice", "bob"), PGN_OK);
	CHECK_INT(queued_from("alice", "bob"), 1);
	/* one read frees one slot of the share */
	memset(&c, 0, sizeof(c));
	c.agent = "bob";
	c.route = "cli";
	c.max = 1;
	REQUIRE(pgn_claim(db, &c, &m) == PGN_OK);
	CHECK_INT(m.n, 1);
	pgn_msgs_release(&m);
	CHECK_INT(send1("flood", "bob"), PGN_OK);
	CHECK_INT(send1("flood", "bob"), PGN_EFULL);
	CHECK_INT(queued_from("flood", "bob"), SHARE);
}

static void
test_the_whole_cap_holds_across_senders(void)
{
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(fill("alice", "bob", SHARE));
	REQUIRE(fill("carol", "bob", PGN_MAX_PENDING - SHARE));
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    PGN_MAX_PENDING);
	CHECK_INT(send1("dave", "bob"), PGN_EFULL);
	CHECK_CONTAINS(pgn_errmsg(db),
	    "agent 'bob' already has 200 messages waiting (the cap is 200)");
	CHECK_INT(count("SELECT count(*) FROM message"), PGN_MAX_PENDING);
}

static void
test_a_fan_out_counts_the_share_per_recipient(void)
{
	const char *all = "all", *two[] = {"carol", "bob"};
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	size_t n = 9;

	REQUIRE(pgn_agent_add(db, "flood") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "carol") == PGN_OK);
	REQUIRE(fill("flood", "bob", SHARE - 1));
	REQUIRE(fill("flood", "carol", SHARE - 2));
	/* each recipient one under: 'all' reaches both */
	CHECK_INT(send_as("flood", NULL, NULL, &all, 1, "x", 0, sent, &n),
	    PGN_OK);
	CHECK_INT(n, 2);
	/* bob at the share: all or nothing, carol gets nothing either */
	CHECK_INT(send_as("flood", NULL, NULL, two, 2, "y", 0, sent, &n),
	    PGN_EFULL);
	CHECK_INT(n, 0);
	CHECK_CONTAINS(pgn_errmsg(db), "agent 'bob' already has 100");
	CHECK_INT(send_as("flood", NULL, NULL, &all, 1, "y", 0, sent, &n),
	    PGN_EFULL);
	CHECK_INT(queued_from("flood", "carol"), SHARE - 1);
	CHECK_INT(queued_from("flood", "bob"), SHARE);
	CHECK_INT(send_as("flood", NULL, NULL, two, 1, "z", 0, sent, &n),
	    PGN_OK);
	CHECK_INT(queued_from("flood", "carol"), SHARE);
}

/* ---- runner ---------------------------------------------------------- */

static void (*const rules[])(void) = {
    test_a_session_without_from_sends_as_its_agent,
    test_a_session_cannot_send_as_another_agent,
    test_outside_a_bound_session_from_is_free,
    test_in_another_scope_a_session_still_sends_as_its_agent,
    test_a_send_needs_a_sender_and_a_mailbox_when_asked,
    test_a_reply_from_a_third_agent_does_not_end_the_wait,
    test_one_sender_fills_at_most_its_share,
    test_the_whole_cap_holds_across_senders,
    test_a_fan_out_counts_the_share_per_recipient,
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

/* SQLite's plan: the sender's count reads the partial index. */
static void
test_the_sender_count_reads_the_partial_index(void)
{
	sqlite3 *raw;

	be_on_pg = 0;
	setup();
	raw = h_raw();
	H_QUEUE_PLAN(raw, pgn_sql_queued_from, NULL, "sender's count");
	sqlite3_close(raw);
	teardown();
}

static const struct h_test tests[] = {
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
    H_TEST(test_the_sender_count_reads_the_partial_index),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
