/*
 * Unit tests of the mailbox store: send, inbox, claim, agents, sessions,
 * scopes, journal and audit listing. Each checks the result and, through
 * a second raw SQLite connection, what the database holds.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pgn_int.h"
#include "sqlite.h"
#include "store_int.h"

static pgn_db *db;   /* the library's handle on h_tmp/pigeon.db */
static sqlite3 *raw; /* a plain connection to the same file */

static void
setup(void)
{
	db = h_open();
	raw = h_raw();
}

static void
teardown(void)
{
	sqlite3_close(raw);
	raw = NULL;
	pgn_db_close(db);
	db = NULL;
}

#define COUNT(sql) H_INT(raw, (sql))

/* Row counts used over and over. */
#define N_MESSAGES COUNT("SELECT count(*) FROM message")
#define N_QUEUED                                                               \
	COUNT("SELECT count(*) FROM message WHERE "                            \
	      "delivered_ms IS NULL")
#define N_DELIVERIES COUNT("SELECT count(*) FROM delivery")
#define N_AGENTS                                                               \
	COUNT("SELECT count(*) FROM agent WHERE "                              \
	      "removed_ms IS NULL")

static pgn_status
sendv(const char *from, const char *const *to, size_t nto, const char *body,
    size_t len, int create, int64_t reply_to, struct pgn_sent *sent,
    size_t maxsent, size_t *nsent)
{
	struct pgn_send req;

	memset(&req, 0, sizeof(req));
	req.from = from;
	req.to = to;
	req.nto = nto;
	req.body = body;
	req.body_len = len;
	req.create = create;
	req.reply_to = reply_to;
	return pgn_send(db, &req, sent, maxsent, nsent);
}

/* One message 'from' -> 'to'; its id in '*id' if not NULL. */
static pgn_status
send_id(const char *from, const char *to, const char *body, int64_t *id)
{
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	size_t nsent = 0;
	pgn_status rc;

	rc = sendv(from, &to, 1, body, strlen(body), 0, 0, sent,
	    PGN_MAX_RECIPIENTS, &nsent);
	if (id != NULL)
		*id = rc == PGN_OK && nsent == 1 ? sent[0].id : 0;
	return rc;
}

static pgn_status
send1(const char *from, const char *to, const char *body)
{
	return send_id(from, to, body, NULL);
}

static pgn_status
claim(const char *agent, size_t budget, struct pgn_msgs *out)
{
	struct pgn_claim req;

	memset(&req, 0, sizeof(req));
	req.agent = agent;
	req.route = "cli";
	req.budget = budget;
	return pgn_claim(db, &req, out);
}

/* Claim everything queued for 'agent' and return how many. */
static size_t
drain(const char *agent)
{
	struct pgn_msgs m;
	size_t n;

	CHECK_INT(claim(agent, 0, &m), PGN_OK);
	n = m.n;
	pgn_msgs_release(&m);
	return n;
}

static void
add(const char *name)
{
	pgn_status rc;

	rc = pgn_agent_add(db, name);
	if (!CHECK_INT(rc, PGN_OK))
		printf("  adding %s: %s\n", name, pgn_errmsg(db));
}

/* ---- send, inbox, claim --------------------------------------------- */

static void
test_send_queues_a_message_that_inbox_lists_without_claiming(void)
{
	static const char *const to[] = {"Bob"};
	struct pgn_sent sent[4];
	struct pgn_msgs in;
	size_t nsent = 99;
	int64_t t0;

	setup();
	add("bob");
	t0 = pgn_now_ms();
	CHECK_INT(sendv("alice", to, 1, "hello bob", 9, 0, 0, sent, 4, &nsent),
	    PGN_OK);
	CHECK_INT(nsent, 1);
	CHECK(sent[0].id > 0);
	CHECK_STR(sent[0].to, "bob");
	CHECK_INT(N_MESSAGES, 1);
	CHECK_INT(N_QUEUED, 1);
	CHECK_INT(COUNT("SELECT count(*) FROM message WHERE sender = 'alice' "
	                "AND body = 'hello bob' AND reply_to IS NULL"),
	    1);

	CHECK_INT(pgn_inbox(db, "BOB", &in), PGN_OK);
	REQUIRE(in.n == 1);
	CHECK_INT(in.v[0].id, sent[0].id);
	CHECK_STR(in.v[0].sender, "alice");
	CHECK_STR(in.v[0].recipient, "bob");
	CHECK_STR(in.v[0].body, "hello bob");
	CHECK_INT(in.v[0].body_len, 9);
	CHECK_INT(in.v[0].reply_to, 0);
	CHECK(in.v[0].created_ms >= t0 && in.v[0].created_ms <= pgn_now_ms());
	pgn_msgs_release(&in);
	/* looking is not claiming */
	CHECK_INT(pgn_inbox(db, "bob", &in), PGN_OK);
	CHECK_INT(in.n, 1);
	pgn_msgs_release(&in);
	CHECK_INT(N_QUEUED, 1);
	CHECK_INT(N_DELIVERIES, 0);
	teardown();
}

static void
test_inbox_of_unknown_agent_is_not_found(void)
{
	struct pgn_msgs in;

	setup();
	CHECK_INT(pgn_inbox(db, "ghost", &in), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "ghost");
	CHECK_INT(in.n, 0);
	add("bob");
	CHECK_INT(pgn_inbox(db, "bobb", &in), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "Did you mean 'bob'?");
	CHECK_INT(pgn_inbox(db, "Not A Name", &in), PGN_EINVAL);
	teardown();
}

static void
test_claim_marks_delivered_and_writes_audit_and_journal(void)
{
	struct pgn_claim req;
	struct pgn_msgs m;
	int64_t ids[3], t0;
	size_t i;

	setup();
	add("bob");
	CHECK_INT(send_id("alice", "bob", "one", &ids[0]), PGN_OK);
	CHECK_INT(send_id("alice", "bob", "two", &ids[1]), PGN_OK);
	CHECK_INT(send_id("carol", "bob", "three", &ids[2]), PGN_OK);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'bob' AND "
	                "last_seen_ms IS NOT NULL"),
	    0);

	t0 = pgn_now_ms();
	memset(&req, 0, sizeof(req));
	req.agent = "bob";
	req.session = "claude:s1";
	req.host = "claude";
	req.route = "prompt";
	CHECK_INT(pgn_claim(db, &req, &m), PGN_OK);
	REQUIRE(m.n == 3);
	CHECK_INT(m.left, 0);
	for (i = 0; i < 3; i++)
		CHECK_INT(m.v[i].id, ids[i]); /* oldest first */
	CHECK_STR(m.v[0].body, "one");
	CHECK_STR(m.v[2].body, "three");
	CHECK_STR(m.v[2].sender, "carol");
	pgn_msgs_release(&m);

	CHECK_INT(N_QUEUED, 0);
	CHECK_INT(COUNT("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NOT NULL"),
	    3);
	/* exactly one delivery and one journal entry per message */
	CHECK_INT(N_DELIVERIES, 3);
	CHECK_INT(COUNT("SELECT count(DISTINCT message_id) FROM delivery"), 3);
	CHECK_INT(
	    COUNT("SELECT count(*) FROM delivery d JOIN message m ON "
	          "m.id = d.message_id AND m.body = d.body AND m.sender = "
	          "d.sender "
	          "WHERE d.recipient = 'bob' AND d.session = 'claude:s1' AND "
	          "d.host = 'claude' AND d.route = 'prompt' AND d.bytes = "
	          "length(m.body) AND d.delivered_ms = m.delivered_ms"),
	    3);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = "
	                "'delivered'"),
	    3);
	CHECK_INT(COUNT("SELECT count(DISTINCT j.message_id) FROM journal j "
	                "JOIN agent a ON a.id = j.agent_id WHERE a.name = "
	                "'bob' AND "
	                "j.kind = 'delivered' AND j.detail = 'prompt'"),
	    3);
	CHECK_INT(COUNT("SELECT count(*) FROM audit_head WHERE n = 3"), 1);
	/* claiming is a sign of life */
	CHECK(COUNT("SELECT last_seen_ms FROM agent WHERE name = 'bob'") >= t0);
	teardown();
}

static void
test_claim_of_empty_queue_returns_nothing(void)
{
	struct pgn_msgs m;

	setup();
	add("bob");
	CHECK_INT(claim("bob", 0, &m), PGN_OK);
	CHECK_INT(m.n, 0);
	CHECK_INT(m.left, 0);
	pgn_msgs_release(&m);
	CHECK_INT(N_DELIVERIES, 0);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = "
	                "'delivered'"),
	    0);
	teardown();
}

static void
test_claim_of_unknown_agent_or_bad_route_fails(void)
{
	struct pgn_claim req;
	struct pgn_msgs m;

	setup();
	add("bob");
	CHECK_INT(claim("ghost", 0, &m), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "ghost");
	memset(&req, 0, sizeof(req));
	req.agent = "bob";
	req.route = "carrier-pigeon";
	CHECK_INT(pgn_claim(db, &req, &m), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "route");
	req.route = NULL;
	CHECK_INT(pgn_claim(db, &req, &m), PGN_EINVAL);
	teardown();
}

static void
test_claim_takes_each_message_exactly_once(void)
{
	struct pgn_msgs m;

	setup();
	add("bob");
	CHECK_INT(send1("alice", "bob", "a"), PGN_OK);
	CHECK_INT(send1("alice", "bob", "b"), PGN_OK);
	CHECK_INT(claim("bob", 0, &m), PGN_OK);
	CHECK_INT(m.n, 2);
	pgn_msgs_release(&m);
	CHECK_INT(claim("bob", 0, &m), PGN_OK);
	CHECK_INT(m.n, 0);
	pgn_msgs_release(&m);
	CHECK_INT(N_DELIVERIES, 2);
	/* a new message is claimed alone */
	CHECK_INT(send1("alice", "bob", "c"), PGN_OK);
	CHECK_INT(claim("bob", 0, &m), PGN_OK);
	REQUIRE(m.n == 1);
	CHECK_STR(m.v[0].body, "c");
	pgn_msgs_release(&m);
	CHECK_INT(N_DELIVERIES, 3);
	CHECK_INT(COUNT("SELECT count(DISTINCT message_id) FROM delivery"), 3);
	teardown();
}

static void
test_claim_budget_takes_only_the_oldest_that_fit(void)
{
	struct pgn_msgs m;

	setup();
	add("bob");
	CHECK_INT(send1("alice", "bob", "0123456789"), PGN_OK);
	CHECK_INT(send1("alice", "bob", "abcdefghij"), PGN_OK);
	CHECK_INT(send1("alice", "bob", "ABCDEFGHIJ"), PGN_OK);
	/* 15 bytes: the first (10) fits, the second would make 20 */
	CHECK_INT(claim("bob", 15, &m), PGN_OK);
	REQUIRE(m.n == 1);
	CHECK_STR(m.v[0].body, "0123456789");
	CHECK_INT(m.left, 2);
	pgn_msgs_release(&m);
	CHECK_INT(N_QUEUED, 2);
	CHECK_INT(N_DELIVERIES, 1);
	/* exactly at the budget: both */
	CHECK_INT(claim("bob", 20, &m), PGN_OK);
	REQUIRE(m.n == 2);
	CHECK_STR(m.v[0].body, "abcdefghij");
	CHECK_STR(m.v[1].body, "ABCDEFGHIJ");
	CHECK_INT(m.left, 0);
	pgn_msgs_release(&m);
	CHECK_INT(N_QUEUED, 0);
	teardown();
}

static void
test_claim_always_takes_the_oldest_even_over_budget(void)
{
	struct pgn_msgs m;
	char big[200];

	setup();
	add("bob");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(send1("alice", "bob", big), PGN_OK);
	CHECK_INT(send1("alice", "bob", "small"), PGN_OK);
	CHECK_INT(claim("bob", 10, &m), PGN_OK);
	REQUIRE(m.n == 1);
	CHECK_INT(m.v[0].body_len, sizeof(big) - 1);
	CHECK_INT(m.left, 1);
	pgn_msgs_release(&m);
	CHECK_INT(claim("bob", 10, &m), PGN_OK);
	REQUIRE(m.n == 1);
	CHECK_STR(m.v[0].body, "small");
	CHECK_INT(m.left, 0);
	pgn_msgs_release(&m);
	teardown();
}

struct cost_arg {
	size_t calls;
	size_t each;
};

static size_t
fixed_cost(const struct pgn_msg *m, void *arg)
{
	struct cost_arg *c = arg;

	(void)m;
	c->calls++;
	return c->each;
}

static void
test_claim_uses_the_cost_callback(void)
{
	struct pgn_claim req;
	struct cost_arg ca = {0, 100};
	struct pgn_msgs m;
	int i;

	setup();
	add("bob");
	for (i = 0; i < 3; i++)
		CHECK_INT(send1("alice", "bob", "x"), PGN_OK);
	memset(&req, 0, sizeof(req));
	req.agent = "bob";
	req.route = "session-start";
	req.budget = 250; /* bodies are 1 byte, costs 100 each */
	req.cost = fixed_cost;
	req.cost_arg = &ca;
	CHECK_INT(pgn_claim(db, &req, &m), PGN_OK);
	CHECK_INT(m.n, 2);
	CHECK_INT(m.left, 1);
	CHECK(ca.calls >= 2);
	pgn_msgs_release(&m);
	CHECK_INT(N_QUEUED, 1);
	CHECK_INT(COUNT("SELECT count(*) FROM delivery WHERE route = "
	                "'session-start'"),
	    2);
	teardown();
}

static void
test_send_to_several_recipients_makes_one_message_each(void)
{
	static const char *const to[] = {"bob", "carol"};
	struct pgn_sent sent[2];
	struct pgn_msgs in;
	size_t nsent = 0;

	setup();
	add("bob");
	add("carol");
	CHECK_INT(sendv("alice", to, 2, "hi both", 7, 0, 0, sent, 2, &nsent),
	    PGN_OK);
	REQUIRE(nsent == 2);
	CHECK_STR(sent[0].to, "bob");
	CHECK_STR(sent[1].to, "carol");
	CHECK(sent[0].id != sent[1].id);
	CHECK_INT(N_MESSAGES, 2);
	CHECK_INT(pgn_inbox(db, "carol", &in), PGN_OK);
	REQUIRE(in.n == 1);
	CHECK_INT(in.v[0].id, sent[1].id);
	CHECK_STR(in.v[0].body, "hi both");
	pgn_msgs_release(&in);
	teardown();
}

static void
test_send_to_a_name_listed_twice_queues_once(void)
{
	static const char *const to[] = {"bob", "BOB", "bob"};
	struct pgn_sent sent[3];
	size_t nsent = 0;

	setup();
	add("bob");
	CHECK_INT(sendv("alice", to, 3, "once", 4, 0, 0, sent, 3, &nsent),
	    PGN_OK);
	CHECK_INT(nsent, 1);
	CHECK_INT(N_MESSAGES, 1);
	teardown();
}

static void
test_send_with_too_few_slots_stores_nothing(void)
{
	static const char *const to[] = {"bob", "carol"};
	struct pgn_sent sent[1];
	size_t nsent = 9;

	setup();
	add("bob");
	add("carol");
	CHECK_INT(sendv("alice", to, 2, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_ETOOBIG);
	CHECK_INT(nsent, 0);
	CHECK_INT(N_MESSAGES, 0);
	teardown();
}

static void
test_send_to_all_reaches_every_other_agent(void)
{
	static const char *const to[] = {"all"};
	struct pgn_sent sent[8];
	struct pgn_msgs in;
	size_t nsent = 0;

	setup();
	add("alice");
	add("bob");
	add("carol");
	CHECK_INT(sendv("alice", to, 1, "standup", 7, 0, 0, sent, 8, &nsent),
	    PGN_OK);
	REQUIRE(nsent == 2);
	CHECK_STR(sent[0].to, "bob");
	CHECK_STR(sent[1].to, "carol");
	CHECK_INT(N_MESSAGES, 2);
	CHECK_INT(pgn_inbox(db, "alice", &in), PGN_OK);
	CHECK_INT(in.n, 0); /* not the sender */
	pgn_msgs_release(&in);
	CHECK_INT(COUNT("SELECT count(*) FROM message m JOIN agent a ON a.id = "
	                "m.recipient_id WHERE a.name = 'alice'"),
	    0);
	/* from a person (no agent of that name), "all" is everyone */
	CHECK_INT(sendv("dave", to, 1, "hello", 5, 0, 0, sent, 8, &nsent),
	    PGN_OK);
	CHECK_INT(nsent, 3);
	CHECK_INT(N_MESSAGES, 5);
	teardown();
}

static void
test_send_to_all_with_no_other_agent_fails(void)
{
	static const char *const to[] = {"all"};
	struct pgn_sent sent[8];
	size_t nsent = 0;

	setup();
	CHECK_INT(sendv("alice", to, 1, "anyone?", 7, 0, 0, sent, 8, &nsent),
	    PGN_ENOTFOUND);
	CHECK_INT(N_MESSAGES, 0);
	add("alice");
	CHECK_INT(sendv("alice", to, 1, "anyone?", 7, 0, 0, sent, 8, &nsent),
	    PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "all");
	CHECK_INT(nsent, 0);
	CHECK_INT(N_MESSAGES, 0);
	teardown();
}

static void
test_send_with_create_makes_the_unknown_agent(void)
{
	static const char *const to[] = {"Newbie"};
	struct pgn_sent sent[1];
	struct pgn_agents a;
	struct pgn_entries j;
	size_t nsent = 0;

	setup();
	CHECK_INT(sendv("alice", to, 1, "welcome", 7, 1, 0, sent, 1, &nsent),
	    PGN_OK);
	CHECK_INT(nsent, 1);
	CHECK_STR(sent[0].to, "newbie");
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'newbie'"), 1);
	CHECK_INT(N_QUEUED, 1);
	CHECK_INT(pgn_agents_list(db, &a), PGN_OK);
	REQUIRE(a.n == 1);
	CHECK_STR(a.v[0].name, "newbie");
	CHECK_INT(a.v[0].queued, 1);
	pgn_agents_release(&a);
	CHECK_INT(pgn_journal_list(db, "newbie", 0, 0, &j), PGN_OK);
	REQUIRE(j.n >= 1);
	CHECK_STR(j.v[0].kind, "created");
	pgn_entries_release(&j);
	/* the backlog is delivered on its first claim */
	CHECK_INT(drain("newbie"), 1);
	teardown();
}

static void
test_send_to_unknown_name_lists_known_names_and_suggests(void)
{
	static const char *const to[] = {"bobb"};
	static const char *const far[] = {"zebediah"};
	struct pgn_sent sent[1];
	size_t nsent = 0;

	setup();
	add("bob");
	add("carol");
	CHECK_INT(sendv("alice", to, 1, "typo", 4, 0, 0, sent, 1, &nsent),
	    PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "'bobb'");
	CHECK_CONTAINS(pgn_errmsg(db), "bob, carol");
	CHECK_CONTAINS(pgn_errmsg(db), "Did you mean 'bob'?");
	/* The fact only: the remedy is the front end's to word. */
	CHECK(strstr(pgn_errmsg(db), "--create") == NULL);
	{
		const char *arg = NULL;

		CHECK_INT(pgn_errhint(db, &arg), PGN_HINT_CREATE);
		CHECK_STR(arg, "bobb");
	}
	CHECK_INT(nsent, 0);
	CHECK_INT(N_MESSAGES, 0);
	CHECK_INT(N_AGENTS, 2); /* nothing created */
	/* no suggestion when nothing is close */
	CHECK_INT(sendv("alice", far, 1, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_ENOTFOUND);
	CHECK(strstr(pgn_errmsg(db), "Did you mean") == NULL);
	teardown();
}

/*
 * A real step error inside the agent listing: SQLite's progress handler
 * interrupts a statement whose text is pgn_sql_agent_names while it runs,
 * so sqlite3_step returns SQLITE_INTERRUPT there and nowhere else.
 */
static int
interrupt_agent_names(void *arg)
{
	sqlite3_stmt *p = NULL;
	int *hits = arg;

	while ((p = sqlite3_next_stmt(pgn_sqlite_conn(db), p)) != NULL) {
		if (sqlite3_stmt_busy(p) &&
		    strcmp(sqlite3_sql(p), pgn_sql_agent_names) == 0) {
			(*hits)++;
			return 1;
		}
	}
	return 0;
}

static void
test_send_to_all_fails_whole_when_listing_agents_fails(void)
{
	static const char *const to[] = {"bob", "all"};
	struct pgn_sent sent[8];
	size_t nsent = 9;
	int hits = 0;

	setup();
	add("alice");
	add("bob");
	add("carol");
	sqlite3_progress_handler(pgn_sqlite_conn(db), 1, interrupt_agent_names,
	    &hits);
	/* Before the fix this queued for bob alone and returned PGN_OK. */
	CHECK_INT(sendv("alice", to, 2, "standup", 7, 0, 0, sent, 8, &nsent),
	    PGN_EDB);
	sqlite3_progress_handler(pgn_sqlite_conn(db), 0, NULL, NULL);
	CHECK(hits > 0);
	CHECK_CONTAINS(pgn_errmsg(db), "listing agents");
	CHECK_CONTAINS(pgn_errmsg(db), "interrupted");
	CHECK_INT(nsent, 0);
	CHECK_INT(N_MESSAGES, 0);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = 'sent'"), 0);
	/* the same send goes through once the listing works */
	CHECK_INT(sendv("alice", to, 2, "standup", 7, 0, 0, sent, 8, &nsent),
	    PGN_OK);
	CHECK_INT(nsent, 2);
	CHECK_INT(N_MESSAGES, 2);
	teardown();
}

static void
test_unknown_name_reports_a_failed_listing_not_no_agents(void)
{
	static const char *const to[] = {"bobb"};
	struct pgn_sent sent[1];
	size_t nsent = 0;
	int hits = 0;

	setup();
	add("bob");
	sqlite3_progress_handler(pgn_sqlite_conn(db), 1, interrupt_agent_names,
	    &hits);
	/* Before the fix: PGN_ENOTFOUND, "known: none", a false account. */
	CHECK_INT(sendv("alice", to, 1, "typo", 4, 0, 0, sent, 1, &nsent),
	    PGN_EDB);
	sqlite3_progress_handler(pgn_sqlite_conn(db), 0, NULL, NULL);
	CHECK(hits > 0);
	CHECK_CONTAINS(pgn_errmsg(db), "listing agents");
	CHECK(strstr(pgn_errmsg(db), "known: none") == NULL);
	CHECK_INT(N_MESSAGES, 0);
	CHECK_INT(N_AGENTS, 1);
	teardown();
}

static void
test_send_is_all_or_nothing_when_one_recipient_is_unknown(void)
{
	static const char *const to[] = {"bob", "zed"};
	struct pgn_sent sent[2];
	size_t nsent = 0;

	setup();
	add("alice");
	add("bob");
	CHECK_INT(sendv("alice", to, 2, "x", 1, 0, 0, sent, 2, &nsent),
	    PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "zed");
	CHECK_INT(nsent, 0);
	CHECK_INT(N_MESSAGES, 0);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = 'sent'"), 0);
	teardown();
}

static void
test_send_reply_to_must_name_a_message_of_the_scope(void)
{
	struct pgn_sent sent[1];
	struct pgn_msgs in;
	size_t nsent = 0;
	int64_t first = 0;
	const char *to = "alice";

	setup();
	add("alice");
	add("bob");
	CHECK_INT(send_id("alice", "bob", "question", &first), PGN_OK);
	REQUIRE(first > 0);
	CHECK_INT(sendv("bob", &to, 1, "answer", 6, 0, first, sent, 1, &nsent),
	    PGN_OK);
	CHECK_INT(pgn_inbox(db, "alice", &in), PGN_OK);
	REQUIRE(in.n == 1);
	CHECK_INT(in.v[0].reply_to, first);
	pgn_msgs_release(&in);
	CHECK_INT(COUNT("SELECT count(*) FROM message WHERE reply_to IS NOT "
	                "NULL"),
	    1);

	CHECK_INT(sendv("bob", &to, 1, "lost", 4, 0, 99999, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "99999");
	CHECK_INT(sendv("bob", &to, 1, "neg", 3, 0, -1, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_INT(N_MESSAGES, 2);
	teardown();
}

static void
test_send_body_limits(void)
{
	static char body[PGN_MAX_BODY + 2];
	const char *to = "bob";
	struct pgn_sent sent[1];
	size_t nsent = 0;

	setup();
	add("bob");
	memset(body, 'a', sizeof(body));
	CHECK_INT(sendv("alice", &to, 1, body, PGN_MAX_BODY, 0, 0, sent, 1,
	              &nsent),
	    PGN_OK);
	CHECK_INT(COUNT("SELECT length(body) FROM message"), 4096);
	CHECK_INT(sendv("alice", &to, 1, body, PGN_MAX_BODY + 1, 0, 0, sent, 1,
	              &nsent),
	    PGN_ETOOBIG);
	CHECK_CONTAINS(pgn_errmsg(db), "4096");
	CHECK_CONTAINS(pgn_errmsg(db), "file");
	CHECK_INT(sendv("alice", &to, 1, "", 0, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "empty");
	CHECK_INT(sendv("alice", &to, 1, "a\0b", 3, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "NUL");
	CHECK_INT(sendv("alice", &to, 1, "caf\xe9", 4, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "UTF-8");
	CHECK_INT(sendv("alice", &to, 1, "\xed\xa0\x80", 3, 0, 0, sent, 1,
	              &nsent),
	    PGN_EINVAL);
	/* multi-byte text is fine, and stored byte for byte */
	CHECK_INT(sendv("alice", &to, 1, "caf\xc3\xa9 \xf0\x9f\x90\xa6", 10, 0,
	              0, sent, 1, &nsent),
	    PGN_OK);
	CHECK_INT(COUNT("SELECT count(*) FROM message WHERE body = "
	                "'caf\xc3\xa9 \xf0\x9f\x90\xa6'"),
	    1);
	CHECK_INT(N_MESSAGES, 2);
	teardown();
}

static void
test_send_refuses_bad_names_naming_the_rule(void)
{
	char long_name[PGN_MAX_NAME + 2];
	const char *to = "bob";
	const char *bad;
	struct pgn_sent sent[1];
	size_t nsent = 0;

	setup();
	add("bob");
	CHECK_INT(sendv("Bad Name", &to, 1, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "sender");
	CHECK_CONTAINS(pgn_errmsg(db), "a-z, 0-9");
	CHECK_INT(sendv(NULL, &to, 1, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "sender");
	bad = "-rf";
	CHECK_INT(sendv("alice", &bad, 1, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "recipient");
	CHECK_CONTAINS(pgn_errmsg(db), "starts with a letter or a digit");
	memset(long_name, 'b', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	bad = long_name;
	CHECK_INT(sendv("alice", &bad, 1, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "at most 64");
	bad = "";
	CHECK_INT(sendv("alice", &bad, 1, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_INT(sendv("alice", &to, 0, "x", 1, 0, 0, sent, 1, &nsent),
	    PGN_EINVAL);
	CHECK_INT(N_MESSAGES, 0);
	teardown();
}

static void
test_send_refuses_a_recipient_over_the_pending_cap(void)
{
	static const char *const both[] = {"carol", "bob"};
	struct pgn_sent sent[2];
	size_t nsent = 0;
	int i, ok = 1;

	setup();
	add("bob");
	add("carol");
	/* two senders: one holds at most PGN_MAX_PENDING_FROM */
	for (i = 0; i < PGN_MAX_PENDING && ok; i++)
		ok = send1(i % 2 ? "alice" : "dave", "bob", "fill") == PGN_OK;
	CHECK(ok);
	CHECK_INT(N_QUEUED, 200);
	CHECK_INT(send1("alice", "bob", "one too many"), PGN_EFULL);
	CHECK_CONTAINS(pgn_errmsg(db), "bob");
	CHECK_CONTAINS(pgn_errmsg(db), "the cap is 200");
	CHECK_INT(N_QUEUED, 200);
	/* all or nothing: carol is not full but gets nothing either */
	CHECK_INT(sendv("alice", both, 2, "x", 1, 0, 0, sent, 2, &nsent),
	    PGN_EFULL);
	CHECK_INT(nsent, 0);
	CHECK_INT(COUNT("SELECT count(*) FROM message m JOIN agent a ON a.id = "
	                "m.recipient_id WHERE a.name = 'carol'"),
	    0);
	CHECK_INT(N_MESSAGES, 200);
	/* once bob reads, sending works again */
	CHECK_INT(drain("bob"), 200);
	CHECK_INT(send1("alice", "bob", "room again"), PGN_OK);
	CHECK_INT(N_QUEUED, 1);
	teardown();
}

/* ---- agents ---------------------------------------------------------- */

static void
test_agent_add_refuses_a_taken_name(void)
{
	setup();
	CHECK_INT(pgn_agent_add(db, "Bob"), PGN_OK);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'bob'"), 1);
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_EEXIST);
	CHECK_CONTAINS(pgn_errmsg(db), "'bob'");
	CHECK_INT(pgn_agent_add(db, "all"), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "reserved");
	CHECK_INT(pgn_agent_add(db, ".bob"), PGN_EINVAL);
	CHECK_INT(N_AGENTS, 1);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = 'created'"),
	    1);
	teardown();
}

static void
test_agents_list_shows_queued_counts_and_hosts(void)
{
	char bound[PGN_MAX_NAME + 1];
	struct pgn_agents a;

	setup();
	CHECK_INT(pgn_agents_list(db, &a), PGN_OK); /* empty scope */
	CHECK_INT(a.n, 0);
	pgn_agents_release(&a);
	add("carol");
	add("alice");
	CHECK_INT(pgn_session_bind(db, "cursor", "cursor:c1", "bob", bound),
	    PGN_OK);
	CHECK_INT(pgn_session_bind(db, "claude", "claude:c2", "bob", bound),
	    PGN_OK);
	CHECK_INT(send1("alice", "bob", "1"), PGN_OK);
	CHECK_INT(send1("alice", "bob", "2"), PGN_OK);
	CHECK_INT(send1("bob", "carol", "3"), PGN_OK);
	CHECK_INT(pgn_agents_list(db, &a), PGN_OK);
	REQUIRE(a.n == 3);
	CHECK_STR(a.v[0].name, "alice"); /* by name */
	CHECK_STR(a.v[1].name, "bob");
	CHECK_STR(a.v[2].name, "carol");
	CHECK_INT(a.v[0].queued, 0);
	CHECK_INT(a.v[1].queued, 2);
	CHECK_INT(a.v[2].queued, 1);
	CHECK_STR(a.v[0].hosts, "");
	CHECK_STR(a.v[1].hosts, "claude,cursor");
	CHECK_INT(a.v[0].sessions, 0);
	CHECK_INT(a.v[1].sessions, 2);
	CHECK_INT(a.v[0].last_seen_ms, 0);
	CHECK(a.v[1].last_seen_ms > 0);
	CHECK(a.v[1].created_ms > 0);
	pgn_agents_release(&a);
	pgn_agents_release(NULL);
	teardown();
}

static void
test_agent_rename_keeps_queue_and_journal(void)
{
	struct pgn_msgs in;
	struct pgn_entries j;
	size_t i;
	int renamed = 0, created = 0;
	long long id;

	setup();
	add("bob");
	id = COUNT("SELECT id FROM agent WHERE name = 'bob'");
	CHECK_INT(send1("alice", "bob", "first"), PGN_OK);
	CHECK_INT(send1("alice", "bob", "second"), PGN_OK);
	CHECK_INT(pgn_agent_rename(db, "bob", "Robert"), PGN_OK);
	CHECK_INT(COUNT("SELECT id FROM agent WHERE name = 'robert'"), id);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'bob'"), 0);
	CHECK_INT(pgn_inbox(db, "robert", &in), PGN_OK);
	REQUIRE(in.n == 2);
	CHECK_STR(in.v[0].recipient, "robert");
	CHECK_STR(in.v[0].body, "first");
	pgn_msgs_release(&in);
	CHECK_INT(pgn_inbox(db, "bob", &in), PGN_ENOTFOUND);

	CHECK_INT(pgn_journal_list(db, "robert", 0, 0, &j), PGN_OK);
	for (i = 0; i < j.n; i++) {
		if (strcmp(j.v[i].kind, "created") == 0)
			created++;
		if (strcmp(j.v[i].kind, "renamed") == 0) {
			renamed++;
			CHECK_STR(j.v[i].detail, "bob -> robert");
		}
	}
	CHECK_INT(created, 1);
	CHECK_INT(renamed, 1);
	pgn_entries_release(&j);
	CHECK_INT(drain("robert"), 2);
	teardown();
}

static void
test_agent_rename_refuses_taken_missing_or_same_name(void)
{
	setup();
	add("bob");
	add("carol");
	CHECK_INT(pgn_agent_rename(db, "bob", "carol"), PGN_EEXIST);
	CHECK_CONTAINS(pgn_errmsg(db), "carol");
	CHECK_INT(pgn_agent_rename(db, "ghost", "casper"), PGN_ENOTFOUND);
	CHECK_INT(pgn_agent_rename(db, "bob", "BOB"), PGN_EINVAL);
	CHECK_INT(pgn_agent_rename(db, "bob", "all"), PGN_EINVAL);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name IN ('bob', "
	                "'carol')"),
	    2);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = "
	                "'renamed'"),
	    0);
	teardown();
}

static void
test_agent_rm_waits_for_an_empty_queue_and_frees_the_name(void)
{
	char bound[PGN_MAX_NAME + 1];
	struct pgn_agents a;
	struct pgn_entries j;
	size_t i;
	int delivered = 0, removed = 0;

	setup();
	add("bob");
	CHECK_INT(pgn_session_bind(db, "codex", "codex:1", "bob", bound),
	    PGN_OK);
	CHECK_INT(send1("alice", "bob", "read me first"), PGN_OK);
	CHECK_INT(pgn_agent_rm(db, "bob"), PGN_EFULL);
	CHECK_CONTAINS(pgn_errmsg(db), "queued");
	CHECK_INT(N_AGENTS, 1);
	CHECK_INT(pgn_agent_rm(db, "ghost"), PGN_ENOTFOUND);

	CHECK_INT(drain("bob"), 1);
	CHECK_INT(pgn_agent_rm(db, "bob"), PGN_OK);
	CHECK_INT(N_AGENTS, 0);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'bob' AND "
	                "removed_ms IS NOT NULL"),
	    1);
	CHECK_INT(COUNT("SELECT count(*) FROM session"), 0);
	CHECK_INT(N_DELIVERIES, 1); /* the audit stays */
	CHECK_INT(pgn_agents_list(db, &a), PGN_OK);
	CHECK_INT(a.n, 0);
	pgn_agents_release(&a);
	CHECK_INT(send1("alice", "bob", "gone?"), PGN_ENOTFOUND);

	/* the retired name's journal is still readable */
	CHECK_INT(pgn_journal_list(db, "bob", 0, 0, &j), PGN_OK);
	for (i = 0; i < j.n; i++) {
		if (strcmp(j.v[i].kind, "delivered") == 0) {
			delivered++;
			CHECK_STR(j.v[i].body, "read me first");
		}
		if (strcmp(j.v[i].kind, "removed") == 0)
			removed++;
	}
	CHECK_INT(delivered, 1);
	CHECK_INT(removed, 1);
	pgn_entries_release(&j);

	/* and the name can be taken again, by a new agent */
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_OK);
	CHECK_INT(N_AGENTS, 1);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'bob'"), 2);
	CHECK_INT(send1("alice", "bob", "hello again"), PGN_OK);
	CHECK_INT(drain("bob"), 1);
	teardown();
}

/* ---- sessions -------------------------------------------------------- */

static void
test_session_bind_creates_the_agent_and_binds(void)
{
	char bound[PGN_MAX_NAME + 1];
	struct pgn_entries j;
	size_t i;
	int seen = 0;

	setup();
	CHECK_INT(pgn_session_bind(db, "claude", "claude:abc", "Reviewer",
	              bound),
	    PGN_OK);
	CHECK_STR(bound, "reviewer");
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = "
	                "'reviewer'"),
	    1);
	CHECK_INT(COUNT("SELECT count(*) FROM session s JOIN agent a ON a.id = "
	                "s.agent_id WHERE s.key = 'claude:abc' AND s.host = "
	                "'claude' AND "
	                "a.name = 'reviewer'"),
	    1);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'reviewer' "
	                "AND last_seen_ms IS NOT NULL"),
	    1);
	CHECK_INT(pgn_journal_list(db, "reviewer", 0, 0, &j), PGN_OK);
	for (i = 0; i < j.n; i++)
		if (strcmp(j.v[i].kind, "bound") == 0) {
			seen++;
			CHECK_STR(j.v[i].detail, "claude:abc");
		}
	CHECK_INT(seen, 1);
	pgn_entries_release(&j);
	/* an existing agent is bound, not duplicated */
	add("writer");
	CHECK_INT(pgn_session_bind(db, "cursor", "cursor:w1", "writer", bound),
	    PGN_OK);
	CHECK_STR(bound, "writer");
	CHECK_INT(N_AGENTS, 2);
	teardown();
}

static void
test_session_rebind_keeps_the_first_agent(void)
{
	char bound[PGN_MAX_NAME + 1];

	setup();
	CHECK_INT(pgn_session_bind(db, "gemini", "gemini:s", "alpha", bound),
	    PGN_OK);
	CHECK_STR(bound, "alpha");
	CHECK_INT(pgn_session_bind(db, "gemini", "gemini:s", "beta", bound),
	    PGN_OK);
	CHECK_STR(bound, "alpha");
	CHECK_INT(COUNT("SELECT count(*) FROM session"), 1);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'beta'"), 0);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = 'bound'"),
	    1);
	teardown();
}

static void
test_session_bind_refuses_bad_input(void)
{
	char bound[PGN_MAX_NAME + 1];
	char key[PGN_MAX_SESSION_KEY + 2];

	setup();
	CHECK_INT(pgn_session_bind(db, "", "claude:x", "bob", bound),
	    PGN_EINVAL);
	CHECK_INT(pgn_session_bind(db, "claude", "", "bob", bound), PGN_EINVAL);
	CHECK_INT(pgn_session_bind(db, NULL, "claude:x", "bob", bound),
	    PGN_EINVAL);
	CHECK_INT(pgn_session_bind(db, "claude", "claude:x", "-bob", bound),
	    PGN_EINVAL);
	CHECK_STR(bound, "");
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	CHECK_INT(pgn_session_bind(db, "claude", key, "bob", bound),
	    PGN_ETOOBIG);
	CHECK_INT(COUNT("SELECT count(*) FROM session"), 0);
	CHECK_INT(N_AGENTS, 0);
	teardown();
}

/* ---- scopes ---------------------------------------------------------- */

static void
test_scopes_are_isolated(void)
{
	struct pgn_msgs in;
	struct pgn_agents a;

	setup();
	CHECK_INT(pgn_db_set_scope(db, "/projects/one"), PGN_OK);
	add("bob");
	CHECK_INT(send1("alice", "bob", "for one"), PGN_OK);
	CHECK_INT(pgn_db_set_scope(db, "/projects/two"), PGN_OK);
	CHECK_INT(pgn_inbox(db, "bob", &in), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "/projects/two");
	add("bob");
	CHECK_INT(send1("alice", "bob", "for two"), PGN_OK);
	CHECK_INT(pgn_inbox(db, "bob", &in), PGN_OK);
	REQUIRE(in.n == 1);
	CHECK_STR(in.v[0].body, "for two");
	pgn_msgs_release(&in);

	CHECK_INT(pgn_db_set_scope(db, "/projects/one"), PGN_OK);
	CHECK_INT(claim("bob", 0, &in), PGN_OK);
	REQUIRE(in.n == 1);
	CHECK_STR(in.v[0].body, "for one");
	pgn_msgs_release(&in);
	CHECK_INT(COUNT("SELECT count(*) FROM delivery WHERE scope = "
	                "'/projects/one'"),
	    1);

	CHECK_INT(pgn_db_set_scope(db, "/projects/two"), PGN_OK);
	CHECK_INT(pgn_inbox(db, "bob", &in), PGN_OK);
	CHECK_INT(in.n, 1); /* untouched */
	pgn_msgs_release(&in);

	CHECK_INT(pgn_db_set_scope(db, ""), PGN_OK); /* global */
	CHECK_INT(pgn_agents_list(db, &a), PGN_OK);
	CHECK_INT(a.n, 0);
	pgn_agents_release(&a);
	CHECK_INT(COUNT("SELECT count(*) FROM scope"), 2);
	CHECK_INT(COUNT("SELECT count(*) FROM agent WHERE name = 'bob'"), 2);
	teardown();
}

/* ---- journal --------------------------------------------------------- */

static void
test_journal_records_sent_and_delivered_with_bodies(void)
{
	struct pgn_entries j;
	struct pgn_msgs m;
	int64_t id = 0;
	size_t i;
	int sent = 0, delivered = 0;

	setup();
	add("alice");
	add("bob");
	CHECK_INT(send_id("alice", "bob", "hi bob", &id), PGN_OK);
	CHECK_INT(pgn_journal_list(db, "alice", 0, 0, &j), PGN_OK);
	for (i = 0; i < j.n; i++)
		if (strcmp(j.v[i].kind, "sent") == 0) {
			sent++;
			CHECK_INT(j.v[i].message_id, id);
			CHECK_STR(j.v[i].peer, "bob");
			CHECK_STR(j.v[i].body, "hi bob");
		}
	CHECK_INT(sent, 1);
	pgn_entries_release(&j);

	CHECK_INT(claim("bob", 0, &m), PGN_OK);
	pgn_msgs_release(&m);
	CHECK_INT(pgn_journal_list(db, "bob", 0, 0, &j), PGN_OK);
	for (i = 0; i < j.n; i++)
		if (strcmp(j.v[i].kind, "delivered") == 0) {
			delivered++;
			CHECK_INT(j.v[i].message_id, id);
			CHECK_STR(j.v[i].peer, "alice");
			CHECK_STR(j.v[i].detail, "cli");
			CHECK_STR(j.v[i].body, "hi bob");
			CHECK(j.v[i].at_ms > 0);
		}
	CHECK_INT(delivered, 1);
	pgn_entries_release(&j);
	/* a sender that is no agent has no journal */
	CHECK_INT(send1("dave", "bob", "from a person"), PGN_OK);
	CHECK_INT(pgn_journal_list(db, "dave", 0, 0, &j), PGN_ENOTFOUND);
	CHECK_INT(COUNT("SELECT count(*) FROM journal WHERE kind = 'sent'"), 1);
	teardown();
}

static void
test_journal_after_and_limit_page_through_entries(void)
{
	struct pgn_entries all, page;
	size_t i;
	int ok = 1;

	setup();
	add("bob");
	for (i = 0; i < 5; i++)
		CHECK_INT(send1("alice", "bob", "m"), PGN_OK);
	CHECK_INT(drain("bob"), 5);
	CHECK_INT(pgn_journal_list(db, "bob", 0, 0, &all), PGN_OK);
	REQUIRE(all.n == 6); /* created + 5 delivered */
	CHECK_STR(all.v[0].kind, "created");
	for (i = 1; i < all.n; i++)
		if (all.v[i].id <= all.v[i - 1].id)
			ok = 0;
	CHECK(ok); /* oldest first */

	CHECK_INT(pgn_journal_list(db, "bob", 0, 2, &page), PGN_OK);
	REQUIRE(page.n == 2);
	CHECK_INT(page.v[0].id, all.v[0].id);
	CHECK_INT(page.v[1].id, all.v[1].id);
	pgn_entries_release(&page);
	CHECK_INT(pgn_journal_list(db, "bob", all.v[1].id, 3, &page), PGN_OK);
	REQUIRE(page.n == 3);
	CHECK_INT(page.v[0].id, all.v[2].id);
	CHECK_INT(page.v[2].id, all.v[4].id);
	pgn_entries_release(&page);
	CHECK_INT(pgn_journal_list(db, "bob", all.v[5].id, 0, &page), PGN_OK);
	CHECK_INT(page.n, 0);
	pgn_entries_release(&page);
	pgn_entries_release(&all);
	CHECK_INT(pgn_journal_list(db, "ghost", 0, 0, &page), PGN_ENOTFOUND);
	teardown();
}

/* ---- audit listing --------------------------------------------------- */

/* alice->bob, carol->bob, alice->carol; all claimed. */
static void
three_deliveries(void)
{
	add("alice");
	add("bob");
	add("carol");
	CHECK_INT(send1("alice", "bob", "a to b"), PGN_OK);
	CHECK_INT(send1("carol", "bob", "c to b"), PGN_OK);
	CHECK_INT(drain("bob"), 2);
	CHECK_INT(send1("alice", "carol", "a to c"), PGN_OK);
	CHECK_INT(drain("carol"), 1);
	CHECK_INT(N_DELIVERIES, 3);
}

static size_t
audit_n(const char *rcpt, const char *sender, int64_t since, size_t limit)
{
	struct pgn_audit_filter f;
	struct pgn_deliveries d;
	size_t n;

	memset(&f, 0, sizeof(f));
	f.recipient = rcpt;
	f.sender = sender;
	f.since_ms = since;
	f.limit = limit;
	if (!CHECK_INT(pgn_audit_list(db, &f, &d), PGN_OK))
		return (size_t)-1;
	n = d.n;
	pgn_deliveries_release(&d);
	return n;
}

static void
test_audit_list_is_newest_first_and_filters(void)
{
	struct pgn_audit_filter f;
	struct pgn_deliveries d;

	setup();
	three_deliveries();
	memset(&f, 0, sizeof(f));
	CHECK_INT(pgn_audit_list(db, &f, &d), PGN_OK);
	REQUIRE(d.n == 3);
	CHECK(d.v[0].id > d.v[1].id && d.v[1].id > d.v[2].id);
	CHECK_STR(d.v[0].body, "a to c");
	CHECK_STR(d.v[2].body, "a to b");
	CHECK_STR(d.v[0].route, "cli");
	CHECK_STR(d.v[0].scope, "");
	pgn_deliveries_release(&d);

	CHECK_INT(audit_n("bob", NULL, 0, 0), 2);
	CHECK_INT(audit_n("carol", NULL, 0, 0), 1);
	CHECK_INT(audit_n(NULL, "alice", 0, 0), 2);
	CHECK_INT(audit_n(NULL, "ALICE", 0, 0), 2);
	CHECK_INT(audit_n("bob", "carol", 0, 0), 1);
	CHECK_INT(audit_n("alice", NULL, 0, 0), 0);
	CHECK_INT(audit_n(NULL, NULL, 1, 0), 3);
	CHECK_INT(audit_n(NULL, NULL, pgn_now_ms() + 3600000, 0), 0);

	f.limit = 1;
	CHECK_INT(pgn_audit_list(db, &f, &d), PGN_OK);
	REQUIRE(d.n == 1);
	CHECK_STR(d.v[0].body, "a to c"); /* the newest */
	pgn_deliveries_release(&d);
	CHECK_INT(audit_n(NULL, NULL, 0, PGN_MAX_LIST), 3);
	f.limit = PGN_MAX_LIST + 1;
	CHECK_INT(pgn_audit_list(db, &f, &d), PGN_ETOOBIG);
	CHECK_CONTAINS(pgn_errmsg(db), "10000");
	CHECK_INT(d.n, 0);
	f.limit = 0;
	f.recipient = "Not Valid";
	CHECK_INT(pgn_audit_list(db, &f, &d), PGN_EINVAL);
	/* other scopes see none of it */
	CHECK_INT(pgn_db_set_scope(db, "/elsewhere"), PGN_OK);
	CHECK_INT(audit_n(NULL, NULL, 0, 0), 0);
	teardown();
}

static void
test_audit_get_returns_one_delivery_by_id(void)
{
	struct pgn_audit_filter f;
	struct pgn_deliveries d, one;
	unsigned char zero[PGN_HASH_BYTES];

	setup();
	three_deliveries();
	memset(&f, 0, sizeof(f));
	f.sender = "carol";
	CHECK_INT(pgn_audit_list(db, &f, &d), PGN_OK);
	REQUIRE(d.n == 1);
	CHECK_INT(pgn_audit_get(db, d.v[0].id, &one), PGN_OK);
	REQUIRE(one.n == 1);
	CHECK_INT(one.v[0].id, d.v[0].id);
	CHECK_INT(one.v[0].message_id, d.v[0].message_id);
	CHECK_STR(one.v[0].sender, "carol");
	CHECK_STR(one.v[0].recipient, "bob");
	CHECK_STR(one.v[0].body, "c to b");
	CHECK_INT(one.v[0].bytes, 6);
	CHECK_STR(one.v[0].session, "");
	CHECK_STR(one.v[0].host, "");
	CHECK_STR(one.v[0].route, "cli");
	CHECK(one.v[0].delivered_ms >= one.v[0].created_ms);
	memset(zero, 0, sizeof(zero));
	CHECK(memcmp(one.v[0].hash, zero, sizeof(zero)) != 0);
	CHECK(memcmp(one.v[0].hash, d.v[0].hash, sizeof(zero)) == 0);
	pgn_deliveries_release(&one);
	pgn_deliveries_release(&d);
	CHECK_INT(pgn_audit_get(db, 9999, &one), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "9999");
	CHECK_INT(one.n, 0);
	pgn_deliveries_release(NULL);
	teardown();
}

static const struct h_test tests[] = {
    H_TEST(test_send_queues_a_message_that_inbox_lists_without_claiming),
    H_TEST(test_inbox_of_unknown_agent_is_not_found),
    H_TEST(test_claim_marks_delivered_and_writes_audit_and_journal),
    H_TEST(test_claim_of_empty_queue_returns_nothing),
    H_TEST(test_claim_of_unknown_agent_or_bad_route_fails),
    H_TEST(test_claim_takes_each_message_exactly_once),
    H_TEST(test_claim_budget_takes_only_the_oldest_that_fit),
    H_TEST(test_claim_always_takes_the_oldest_even_over_budget),
    H_TEST(test_claim_uses_the_cost_callback),
    H_TEST(test_send_to_several_recipients_makes_one_message_each),
    H_TEST(test_send_to_a_name_listed_twice_queues_once),
    H_TEST(test_send_with_too_few_slots_stores_nothing),
    H_TEST(test_send_to_all_reaches_every_other_agent),
    H_TEST(test_send_to_all_with_no_other_agent_fails),
    H_TEST(test_send_with_create_makes_the_unknown_agent),
    H_TEST(test_send_to_unknown_name_lists_known_names_and_suggests),
    H_TEST(test_send_is_all_or_nothing_when_one_recipient_is_unknown),
    H_TEST(test_send_to_all_fails_whole_when_listing_agents_fails),
    H_TEST(test_unknown_name_reports_a_failed_listing_not_no_agents),
    H_TEST(test_send_reply_to_must_name_a_message_of_the_scope),
    H_TEST(test_send_body_limits),
    H_TEST(test_send_refuses_bad_names_naming_the_rule),
    H_TEST(test_send_refuses_a_recipient_over_the_pending_cap),
    H_TEST(test_agent_add_refuses_a_taken_name),
    H_TEST(test_agents_list_shows_queued_counts_and_hosts),
    H_TEST(test_agent_rename_keeps_queue_and_journal),
    H_TEST(test_agent_rename_refuses_taken_missing_or_same_name),
    H_TEST(test_agent_rm_waits_for_an_empty_queue_and_frees_the_name),
    H_TEST(test_session_bind_creates_the_agent_and_binds),
    H_TEST(test_session_rebind_keeps_the_first_agent),
    H_TEST(test_session_bind_refuses_bad_input),
    H_TEST(test_scopes_are_isolated),
    H_TEST(test_journal_records_sent_and_delivered_with_bodies),
    H_TEST(test_journal_after_and_limit_page_through_entries),
    H_TEST(test_audit_list_is_newest_first_and_filters),
    H_TEST(test_audit_get_returns_one_delivery_by_id),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
