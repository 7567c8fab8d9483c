/*
 * Unit tests of what pigeon watch reads (watch.c): agents with their
 * state, the newest queued messages with the scope's total, the newest
 * deliveries, the open batons (taken and dropped ones left out), the
 * row bound at its edges, and the notifier waking on another
 * connection's write.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "pgn_int.h"
#include "pigeon/lease.h"
#include "store_int.h"

static pgn_db *db;
static sqlite3 *raw;

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

static void
send1(pgn_db *d, const char *from, const char *to, const char *body)
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
	REQUIRE(pgn_send(d, &req, sent, 1, &n) == PGN_OK);
	REQUIRE(n == 1);
}

static void
test_watch_reads_agents_queue_deliveries_newest_first(void)
{
	struct pgn_claim c = {.agent = "bob", .route = "cli"};
	struct pgn_msgs got = {0};
	struct pgn_watch w;

	setup();
	send1(db, "alice", "bob", "one");
	send1(db, "alice", "bob", "two");
	send1(db, "bob", "alice", "three");
	REQUIRE(pgn_claim(db, &c, &got) == PGN_OK);
	CHECK_INT(got.n, 2);
	pgn_msgs_release(&got);
	REQUIRE(pgn_watch_read(db, 10, &w) == PGN_OK);
	CHECK_INT(w.agents.n, 2);
	CHECK_STR(w.agents.v[0].name, "alice");
	CHECK_INT(w.agents.v[0].queued, 1);
	CHECK_INT(w.state[0], PGN_AGENT_NEW); /* never seen, mail or not */
	/* bob claimed just now: seen, nothing queued */
	CHECK_INT(w.state[1], PGN_AGENT_ACTIVE);
	CHECK_INT(w.queued_total, 1);
	CHECK_INT(w.queued.n, 1);
	CHECK_STR(w.queued.v[0].body, "three");
	CHECK_STR(w.queued.v[0].recipient, "alice");
	CHECK_INT(w.deliveries.n, 2);
	CHECK_STR(w.deliveries.v[0].body, "two"); /* newest first */
	CHECK_STR(w.deliveries.v[1].body, "one");
	CHECK_INT(w.nbatons, 0);
	pgn_watch_release(&w);
	/* the database agrees, through a second connection */
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM message WHERE delivered_ms IS NULL"),
	    1);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM delivery"), 2);
	teardown();
}

static void
test_watch_rows_bound_cuts_lists_not_totals(void)
{
	struct pgn_watch w;
	int i;

	setup();
	for (i = 0; i < 5; i++)
		send1(db, "alice", "bob", "x");
	REQUIRE(pgn_watch_read(db, 1, &w) == PGN_OK);
	CHECK_INT(w.queued.n, 1);
	CHECK_INT(w.queued_total, 5);
	pgn_watch_release(&w);
	REQUIRE(pgn_watch_read(db, PGN_WATCH_MAX_ROWS, &w) == PGN_OK);
	CHECK_INT(w.queued.n, 5);
	pgn_watch_release(&w);
	CHECK_INT(pgn_watch_read(db, 0, &w), PGN_EINVAL);
	CHECK_INT(pgn_watch_read(db, PGN_WATCH_MAX_ROWS + 1, &w), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "1 to 200 rows");
	CHECK_INT(w.agents.n, 0); /* released on failure */
	teardown();
}

static void
test_watch_lists_open_batons_only(void)
{
	struct pgn_watch w;

	setup();
	H_EXEC(raw,
	    "INSERT INTO baton(scope_id, sender_id, sender, senders, body, "
	    " created_ms, updated_ms, expires_ms) SELECT scope_id, id, name, "
	    " name, 'open one', 1, 2, 9000000000000 FROM agent "
	    " WHERE name = 'alice';"
	    "INSERT INTO baton(scope_id, sender_id, sender, senders, target_id, "
	    " body, created_ms, updated_ms, expires_ms, dropped_ms) "
	    " SELECT scope_id, id, name, name, id, 'dropped', 1, 2, 3, 4 "
	    " FROM agent WHERE name = 'alice';"
	    "INSERT INTO baton(scope_id, sender_id, sender, senders, target_id, "
	    " body, created_ms, updated_ms, expires_ms) SELECT a.scope_id, a.id, "
	    " a.name, 'alice,bob', b.id, 'for bob', 1, 5, 9000000000000 "
	    " FROM agent a, agent b WHERE a.name = 'alice' AND b.name = 'bob';");
	REQUIRE(pgn_watch_read(db, 10, &w) == PGN_OK);
	CHECK_INT(w.batons_total, 2);
	CHECK_INT(w.nbatons, 2);
	CHECK_STR(w.batons[0].body, "for bob");
	CHECK_STR(w.batons[0].target, "bob");
	CHECK_STR(w.batons[0].senders, "alice,bob");
	CHECK_STR(w.batons[1].body, "open one");
	CHECK_STR(w.batons[1].target, "");
	pgn_watch_release(&w);
	teardown();
}

static void
test_watch_lists_live_leases_not_expired_ones(void)
{
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	const char *p[2] = {"./src/", "*.sql"};
	struct pgn_watch w;

	setup();
	memset(&req, 0, sizeof(req));
	req.who.agent = "alice";
	req.patterns = p;
	req.npatterns = 2;
	req.reason = "schema";
	REQUIRE(pgn_lease_take(db, &req, &t) == PGN_OK);
	REQUIRE(!t.held);
	pgn_lease_taken_release(&t);
	H_EXEC(raw, "UPDATE lease SET expires_ms = 1 WHERE pattern = '*.sql'");
	REQUIRE(pgn_watch_read(db, 10, &w) == PGN_OK);
	CHECK_INT(w.nleases, 1);
	CHECK_STR(w.leases[0].holder, "alice");
	CHECK_STR(w.leases[0].pattern, "./src/");
	CHECK_STR(w.leases[0].reason, "schema");
	pgn_watch_release(&w);
	teardown();
}

/* Queued and delivered mail carry their priority and group (0158). */
static void
test_watch_marks_priority_and_group(void)
{
	struct pgn_claim c = {.agent = "bob", .route = "cli"};
	const char *bob = "bob", *team = "@team", *alice = "alice";
	struct pgn_msgs got = {0};
	struct pgn_sent sent[1];
	struct pgn_send req;
	struct pgn_watch w;
	size_t n = 0;

	setup();
	REQUIRE(pgn_group_add(db, "team", &bob, 1) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = &team;
	req.nto = 1;
	req.body = "to the team";
	req.body_len = strlen(req.body);
	req.priority = PGN_PRIORITY_URGENT;
	REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);
	REQUIRE(pgn_claim(db, &c, &got) == PGN_OK);
	REQUIRE(got.n == 1);
	pgn_msgs_release(&got);
	req.from = "bob";
	req.to = &alice;
	req.body = "later";
	req.body_len = strlen(req.body);
	req.priority = PGN_PRIORITY_LOW;
	REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);
	send1(db, "bob", "alice", "plain");
	REQUIRE(pgn_watch_read(db, 10, &w) == PGN_OK);
	REQUIRE(w.queued.n == 2);
	CHECK_STR(w.queued.v[0].body, "plain");
	CHECK_INT(w.queued.v[0].priority, PGN_PRIORITY_NORMAL);
	CHECK(w.queued.v[0].group == NULL);
	CHECK_STR(w.queued.v[1].body, "later");
	CHECK_INT(w.queued.v[1].priority, PGN_PRIORITY_LOW);
	REQUIRE(w.deliveries.n == 1);
	CHECK_INT(w.deliveries.v[0].priority, PGN_PRIORITY_URGENT);
	REQUIRE(w.deliveries.v[0].group != NULL);
	CHECK_STR(w.deliveries.v[0].group, "team");
	pgn_watch_release(&w);
	teardown();
}

static void
test_agent_state_from_sighting_and_queue(void)
{
	struct pgn_agent a = {0};
	int64_t now = 10 * PGN_ACTIVE_MS;

	CHECK_INT(pgn_agent_state(&a, now), PGN_AGENT_NEW);
	a.last_seen_ms = now - PGN_ACTIVE_MS;
	CHECK_INT(pgn_agent_state(&a, now), PGN_AGENT_ACTIVE);
	a.queued = 1;
	CHECK_INT(pgn_agent_state(&a, now), PGN_AGENT_BEHIND);
	a.last_seen_ms = now - PGN_ACTIVE_MS - 1;
	CHECK_INT(pgn_agent_state(&a, now), PGN_AGENT_AWAY_MAIL);
	a.queued = 0;
	CHECK_INT(pgn_agent_state(&a, now), PGN_AGENT_IDLE);
	CHECK_STR(pgn_agent_state_name(PGN_AGENT_BEHIND), "mail");
	CHECK_STR(pgn_agent_state_name(PGN_AGENT_IDLE), "idle");
}

static void
test_notifier_wakes_on_another_connections_write(void)
{
	struct pgn_notify *n = NULL;
	struct pollfd p;
	pgn_db *other;

	setup();
	send1(db, "alice", "bob", "makes the -wal file");
	REQUIRE(pgn_notify_open(db, &n) == PGN_OK);
	REQUIRE(pgn_notify_fd(n) >= 0);
	pgn_notify_drain(n);
	other = h_open();
	send1(other, "bob", "alice", "wake up");
	p.fd = pgn_notify_fd(n);
	p.events = POLLIN;
	p.revents = 0;
	/* a bound on the wait, not a claim about speed */
	CHECK_INT(poll(&p, 1, 10000), 1);
	pgn_notify_drain(n);
	pgn_db_close(other);
	pgn_notify_close(n);
	pgn_notify_close(NULL);
	CHECK_INT(pgn_notify_fd(NULL), -1);
	teardown();
}

static const struct h_test tests[] = {
    H_TEST(test_watch_reads_agents_queue_deliveries_newest_first),
    H_TEST(test_watch_rows_bound_cuts_lists_not_totals),
    H_TEST(test_watch_lists_open_batons_only),
    H_TEST(test_watch_lists_live_leases_not_expired_ones),
    H_TEST(test_watch_marks_priority_and_group),
    H_TEST(test_agent_state_from_sighting_and_queue),
    H_TEST(test_notifier_wakes_on_another_connections_write),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
