/*
 * Priority and groups (decision 0158) on every backend: the claim's
 * order, which route takes which priority, the peek a hook event reads,
 * the urgent cap, groups and --to @NAME, the migration from the schema
 * before them. What the database holds is checked through a second
 * connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "schema_int.h"
#include "store_int.h"
#include "pigeon/hook.h"
#include "claim.h"

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */

static void
setup(void)
{
	be_open_pair("pgn_prio", &db, &chk);
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

static pgn_status
send_p(const char *from, const char *to, const char *body, int priority)
{
	return be_send_one(db, from, to, body, priority);
}

static pgn_status
claim_route(const char *agent, const char *route, struct pgn_msgs *out)
{
	struct pgn_claim req;

	memset(&req, 0, sizeof(req));
	req.agent = agent;
	req.route = route;
	return pgn_claim(db, &req, out);
}

/* A hook event's claim for bob's session claude:s ('turn' NULL mid-turn). */
static pgn_status
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
	return pgn_turn_claim(db, &t, out);
}

static void
agents(const char *const *names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		REQUIRE(pgn_agent_add(db, names[i]) == PGN_OK);
}

/* ---- priority -------------------------------------------------------- */

static void
test_a_claim_takes_urgent_first_then_oldest_and_low_last(void)
{
	static const char *const who[] = {"bob"};
	struct pgn_msgs m;

	agents(who, 1);
	REQUIRE(send_p("alice", "bob", "n1", PGN_PRIORITY_NORMAL) == PGN_OK);
	REQUIRE(send_p("alice", "bob", "l1", PGN_PRIORITY_LOW) == PGN_OK);
	REQUIRE(send_p("alice", "bob", "u1", PGN_PRIORITY_URGENT) == PGN_OK);
	REQUIRE(send_p("alice", "bob", "n2", PGN_PRIORITY_NORMAL) == PGN_OK);
	REQUIRE(send_p("alice", "bob", "u2", PGN_PRIORITY_URGENT) == PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message WHERE priority = 1"), 2);
	CHECK_INT(count("SELECT count(*) FROM message WHERE priority = -1"), 1);
	/* the inbox lists in the claim's order, claiming nothing */
	REQUIRE(pgn_inbox(db, "bob", &m) == PGN_OK);
	REQUIRE(m.n == 5);
	CHECK_STR(m.v[0].body, "u1");
	CHECK_INT(m.v[0].priority, PGN_PRIORITY_URGENT);
	CHECK_STR(m.v[4].body, "l1");
	CHECK_INT(m.v[4].priority, PGN_PRIORITY_LOW);
	pgn_msgs_release(&m);
	REQUIRE(claim_route("bob", "cli", &m) == PGN_OK);
	REQUIRE(m.n == 5);
	CHECK_STR(m.v[0].body, "u1");
	CHECK_STR(m.v[1].body, "u2");
	CHECK_STR(m.v[2].body, "n1");
	CHECK_STR(m.v[3].body, "n2");
	CHECK_STR(m.v[4].body, "l1");
	pgn_msgs_release(&m);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    0);
}

static void
test_after_a_tool_and_at_a_stop_low_mail_stays_queued(void)
{
	static const char *const who[] = {"bob"};
	struct pgn_turn_out out;

	agents(who, 1);
	REQUIRE(send_p("alice", "bob", "low", PGN_PRIORITY_LOW) == PGN_OK);
	REQUIRE(
	    send_p("alice", "bob", "urgent", PGN_PRIORITY_URGENT) == PGN_OK);
	REQUIRE(
	    send_p("alice", "bob", "normal", PGN_PRIORITY_NORMAL) == PGN_OK);
	REQUIRE(turn("after-tool", NULL, &out) == PGN_OK);
	CHECK_INT(out.msgs.n, 2);
	if (out.msgs.n == 2) {
		CHECK_STR(out.msgs.v[0].body, "urgent");
		CHECK_STR(out.msgs.v[1].body, "normal");
	}
	CHECK_INT(out.msgs.left, 1);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL AND body = 'low'"),
	    1);
	/* a stop claims nothing of it, and does not go on */
	REQUIRE(turn("stop", NULL, &out) == PGN_OK);
	CHECK_INT(out.msgs.n, 0);
	CHECK_INT(out.continues, 0);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT auto_continues FROM session"), 0);
	/* the next prompt takes it */
	REQUIRE(turn("prompt", "p-2", &out) == PGN_OK);
	CHECK_INT(out.msgs.n, 1);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM delivery WHERE route = 'prompt' "
	                "AND body = 'low'"),
	    1);
}

static void
test_an_urgent_message_continues_a_stop(void)
{
	static const char *const who[] = {"bob"};
	struct pgn_turn_out out;

	agents(who, 1);
	REQUIRE(turn("prompt", "p-1", &out) == PGN_OK);
	pgn_msgs_release(&out.msgs);
	REQUIRE(send_p("alice", "bob", "stop pushing", PGN_PRIORITY_URGENT) ==
	    PGN_OK);
	REQUIRE(turn("stop", NULL, &out) == PGN_OK);
	CHECK_INT(out.msgs.n, 1);
	CHECK_INT(out.continues, 1);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM delivery WHERE route = 'stop'"),
	    1);
}

static void
test_a_session_start_takes_low_mail(void)
{
	static const char *const who[] = {"bob"};
	struct pgn_turn_out out;

	agents(who, 1);
	REQUIRE(send_p("alice", "bob", "whenever", PGN_PRIORITY_LOW) == PGN_OK);
	REQUIRE(turn("session-start", "start-1", &out) == PGN_OK);
	CHECK_INT(out.msgs.n, 1);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM delivery WHERE route = "
	                "'session-start'"),
	    1);
}

/* Does mail event 'e' claims wait for bob's session, by the peek? */
static int
waiting(pgn_event e)
{
	struct pgn_peek p;

	REQUIRE(pgn_turn_peek_for(db, "claude:s", pgn_turn_lowest(e), &p) ==
	    PGN_OK);
	return p.queued;
}

static void
test_the_peek_tells_which_events_claim_what_waits(void)
{
	static const char *const who[] = {"bob"};
	struct pgn_turn_out out;
	struct pgn_peek p;

	agents(who, 1);
	REQUIRE(turn("prompt", "p-1", &out) == PGN_OK);
	pgn_msgs_release(&out.msgs);
	CHECK(!waiting(PGN_EVENT_PROMPT));
	REQUIRE(send_p("alice", "bob", "low", PGN_PRIORITY_LOW) == PGN_OK);
	REQUIRE(pgn_turn_peek(db, "claude:s", &p) == PGN_OK);
	CHECK(p.queued); /* any priority */
	CHECK(waiting(PGN_EVENT_SESSION_START));
	CHECK(waiting(PGN_EVENT_PROMPT));
	CHECK(!waiting(PGN_EVENT_AFTER_TOOL));
	CHECK(!waiting(PGN_EVENT_STOP));
	CHECK(!waiting(PGN_EVENT_IDLE));
	REQUIRE(
	    send_p("alice", "bob", "urgent", PGN_PRIORITY_URGENT) == PGN_OK);
	CHECK(waiting(PGN_EVENT_AFTER_TOOL));
	CHECK(waiting(PGN_EVENT_STOP));
	CHECK(waiting(PGN_EVENT_IDLE));
	/* the peek wrote nothing */
	CHECK_INT(count("SELECT count(*) FROM delivery"), 0);
}

static void
test_a_wait_at_a_stop_does_not_see_low_mail(void)
{
	static const char *const who[] = {"bob"};
	struct pgn_wait w;
	struct pgn_msgs m;

	agents(who, 1);
	REQUIRE(send_p("alice", "bob", "low", PGN_PRIORITY_LOW) == PGN_OK);
	memset(&w, 0, sizeof(w));
	w.claim.agent = "bob";
	w.claim.route = "stop";
	w.timeout_ms = 1;
	w.look_only = 1;
	REQUIRE(pgn_wait(db, &w, &m) == PGN_OK);
	pgn_msgs_release(&m);
	CHECK_INT(w.found, 0);
	REQUIRE(
	    send_p("alice", "bob", "normal", PGN_PRIORITY_NORMAL) == PGN_OK);
	REQUIRE(pgn_wait(db, &w, &m) == PGN_OK);
	pgn_msgs_release(&m);
	CHECK_INT(w.found, 1);
	/* pigeon wait (route cli) takes low mail too */
	REQUIRE(claim_route("bob", "cli", &m) == PGN_OK);
	CHECK_INT(m.n, 2);
	pgn_msgs_release(&m);
}

static void
test_urgent_has_its_own_cap_per_sender_and_recipient(void)
{
	static const char *const who[] = {"bob", "carol"};
	int i;

	agents(who, 2);
	for (i = 0; i < PGN_MAX_PENDING_URGENT; i++)
		REQUIRE(
		    send_p("alice", "bob", "u", PGN_PRIORITY_URGENT) == PGN_OK);
	CHECK_INT(send_p("alice", "bob", "one more", PGN_PRIORITY_URGENT),
	    PGN_EFULL);
	CHECK_CONTAINS(pgn_errmsg(db), "urgent");
	CHECK_INT(count("SELECT count(*) FROM message"),
	    PGN_MAX_PENDING_URGENT);
	/* another sender, another recipient, or normal: room */
	CHECK_INT(send_p("dave", "bob", "u", PGN_PRIORITY_URGENT), PGN_OK);
	CHECK_INT(send_p("alice", "carol", "u", PGN_PRIORITY_URGENT), PGN_OK);
	CHECK_INT(send_p("alice", "bob", "n", PGN_PRIORITY_NORMAL), PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message"),
	    PGN_MAX_PENDING_URGENT + 3);
}

static void
test_a_priority_out_of_range_stores_nothing(void)
{
	static const char *const who[] = {"bob"};
	int p = 0;

	agents(who, 1);
	CHECK_INT(send_p("alice", "bob", "x", 2), PGN_EINVAL);
	CHECK_INT(send_p("alice", "bob", "x", -2), PGN_EINVAL);
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
	CHECK_INT(pgn_priority_parse("urgent", &p, &(struct pgn_err){0}),
	    PGN_OK);
	CHECK_INT(p, PGN_PRIORITY_URGENT);
	CHECK_INT(pgn_priority_parse("URGENT", &p, &(struct pgn_err){0}),
	    PGN_EINVAL);
	CHECK_INT(pgn_priority_parse("", &p, &(struct pgn_err){0}), PGN_EINVAL);
	CHECK_STR(pgn_priority_name(PGN_PRIORITY_LOW), "low");
	CHECK_STR(pgn_priority_name(7), "normal");
}

static void
test_the_audit_shows_priority_and_group(void)
{
	static const char *const who[] = {"alice", "bob"};
	struct pgn_deliveries d;
	struct pgn_msgs m;

	agents(who, 2);
	REQUIRE(pgn_group_add(db, "team", who, 2) == PGN_OK);
	REQUIRE(send_p("alice", "bob", "u", PGN_PRIORITY_URGENT) == PGN_OK);
	REQUIRE(send_p("alice", "@team", "g", PGN_PRIORITY_NORMAL) == PGN_OK);
	REQUIRE(claim_route("bob", "cli", &m) == PGN_OK);
	pgn_msgs_release(&m);
	REQUIRE(
	    pgn_audit_list(db, &(struct pgn_audit_filter){0}, &d) == PGN_OK);
	REQUIRE(d.n == 2);
	/* newest first */
	CHECK_INT(d.v[0].priority, PGN_PRIORITY_NORMAL);
	CHECK(d.v[0].group != NULL && strcmp(d.v[0].group, "team") == 0);
	CHECK_INT(d.v[1].priority, PGN_PRIORITY_URGENT);
	CHECK(d.v[1].group == NULL);
	pgn_deliveries_release(&d);
}

/* ---- groups ---------------------------------------------------------- */

static void
test_a_group_send_queues_one_per_member_but_the_sender(void)
{
	static const char *const who[] = {"alice", "bob", "carol"};
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	const char *to[] = {"@Team", "bob"};
	struct pgn_send req;
	struct pgn_groups g;
	size_t n = 0;

	agents(who, 3);
	REQUIRE(pgn_group_add(db, "team", who, 3) == PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM agent WHERE grps = ',team,'"), 3);
	REQUIRE(pgn_groups_list(db, &g) == PGN_OK);
	CHECK_INT(g.n, 3);
	if (g.n == 3) {
		CHECK_STR(g.v[0].group, "team");
		CHECK_STR(g.v[0].agent, "alice");
	}
	pgn_groups_release(&g);
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = to;
	req.nto = 2; /* bob twice: once */
	req.body = "hello team";
	req.body_len = strlen(req.body);
	REQUIRE(pgn_send(db, &req, sent, PGN_MAX_RECIPIENTS, &n) == PGN_OK);
	CHECK_INT(n, 2);
	CHECK_INT(count("SELECT count(*) FROM message WHERE grp = 'team'"), 2);
	CHECK_INT(count("SELECT count(*) FROM message m JOIN agent a ON a.id = "
	                "m.recipient_id WHERE a.name = 'alice'"),
	    0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'sent' AND "
	                "detail = '@team'"),
	    2);
}

static void
test_an_unknown_group_stores_nothing(void)
{
	static const char *const who[] = {"alice", "bob"};
	const char *to[] = {"bob", "@nobody"};
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	struct pgn_send req;
	size_t n = 0;

	agents(who, 2);
	REQUIRE(pgn_group_add(db, "team", who, 2) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = to;
	req.nto = 2;
	req.body = "x";
	req.body_len = 1;
	CHECK_INT(pgn_send(db, &req, sent, PGN_MAX_RECIPIENTS, &n),
	    PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no group '@nobody'");
	CHECK_CONTAINS(pgn_errmsg(db), "@team");
	to[1] = "@bad name";
	CHECK_INT(pgn_send(db, &req, sent, PGN_MAX_RECIPIENTS, &n), PGN_EINVAL);
	/* a group of the sender alone names no one */
	REQUIRE(pgn_group_rm(db, "team", &who[1], 1) == PGN_OK);
	to[1] = "@team";
	CHECK_INT(pgn_send(db, &req, sent, PGN_MAX_RECIPIENTS, &n),
	    PGN_ENOTFOUND);
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
}

static void
test_group_names_and_members_are_checked_all_or_nothing(void)
{
	static const char *const who[] = {"alice", "bob"};
	const char *bad[] = {"alice", "nobody"};
	const char *many[PGN_MAX_GROUP_MEMBERS + 1];

	agents(who, 2);
	CHECK_INT(pgn_group_add(db, "team", bad, 2), PGN_ENOTFOUND);
	CHECK_INT(pgn_group_add(db, "bob", who, 1), PGN_EEXIST);
	CHECK_INT(pgn_group_add(db, "Not ok", who, 1), PGN_EINVAL);
	CHECK_INT(pgn_group_add(db, "all", who, 1), PGN_EINVAL);
	CHECK_INT(pgn_group_add(db, "team", who, 0), PGN_EINVAL);
	for (size_t i = 0; i < PGN_MAX_GROUP_MEMBERS + 1; i++)
		many[i] = "alice";
	CHECK_INT(pgn_group_add(db, "team", many, PGN_MAX_GROUP_MEMBERS + 1),
	    PGN_ETOOBIG);
	CHECK_INT(pgn_group_add(db, "team", many, PGN_MAX_GROUP_MEMBERS),
	    PGN_OK); /* at the bound: one member, named 64 times */
	CHECK_INT(count("SELECT count(*) FROM agent WHERE grps IS NOT NULL"),
	    1);
	CHECK_INT(pgn_group_rm(db, "nobody", NULL, 0), PGN_ENOTFOUND);
	CHECK_INT(pgn_group_rm(db, "team", &who[1], 1), PGN_ENOTFOUND);
	CHECK_INT(pgn_group_rm(db, "team", bad + 1, 1), PGN_ENOTFOUND);
	CHECK_INT(count("SELECT count(*) FROM agent WHERE grps IS NOT NULL"),
	    1);
	CHECK_INT(pgn_group_rm(db, "team", NULL, 0), PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM agent WHERE grps IS NOT NULL"),
	    0);
}

static void
test_a_group_follows_a_rename_and_skips_a_removed_agent(void)
{
	static const char *const who[] = {"alice", "bob", "carol"};
	struct pgn_groups g;

	agents(who, 3);
	REQUIRE(pgn_group_add(db, "team", who + 1, 2) == PGN_OK);
	REQUIRE(pgn_agent_rename(db, "bob", "robert") == PGN_OK);
	REQUIRE(pgn_agent_rm(db, "carol") == PGN_OK);
	REQUIRE(pgn_groups_list(db, &g) == PGN_OK);
	CHECK_INT(g.n, 1);
	if (g.n == 1)
		CHECK_STR(g.v[0].agent, "robert");
	pgn_groups_release(&g);
	REQUIRE(send_p("alice", "@team", "hi", PGN_PRIORITY_NORMAL) == PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
	/* the removed member's row can still be taken out */
	CHECK_INT(pgn_group_rm(db, "team", who + 2, 1), PGN_OK);
}

static void
test_a_scope_holds_at_most_max_groups_an_agent_max_agent_groups(void)
{
	char name[32], agent[32];
	const char *who[1] = {agent};
	struct pgn_groups g;
	int i;

	/* PGN_MAX_AGENT_GROUPS groups for each agent, to fill the scope */
	for (i = 0; i < PGN_MAX_GROUPS; i++) {
		(void)snprintf(agent, sizeof(agent), "a%d",
		    i / PGN_MAX_AGENT_GROUPS);
		if (i % PGN_MAX_AGENT_GROUPS == 0)
			REQUIRE(pgn_agent_add(db, agent) == PGN_OK);
		(void)snprintf(name, sizeof(name), "g%d", i);
		REQUIRE(pgn_group_add(db, name, who, 1) == PGN_OK);
	}
	CHECK_INT(pgn_group_add(db, "one-more", who, 1), PGN_ETOOBIG);
	CHECK_CONTAINS(pgn_errmsg(db), "256 groups");
	/* an agent in as many groups as it may be: one more is refused */
	CHECK_INT(pgn_group_add(db, "g0", who, 1), PGN_ETOOBIG);
	CHECK_CONTAINS(pgn_errmsg(db), "is in 32 groups");
	/* an existing group still takes members */
	REQUIRE(pgn_agent_add(db, "fresh") == PGN_OK);
	who[0] = "fresh";
	CHECK_INT(pgn_group_add(db, "g0", who, 1), PGN_OK);
	REQUIRE(pgn_groups_list(db, &g) == PGN_OK);
	CHECK_INT(g.n, PGN_MAX_GROUPS + 1);
	pgn_groups_release(&g);
	CHECK_INT(count("SELECT count(*) FROM agent WHERE grps LIKE "
	                "'%,g0,%'"),
	    2);
}

/* Joined and left, each a 'group' entry of the member (decision 0191). */
static int64_t
group_entries(const char *agent, const char *detail)
{
	char sql[256];

	(void)snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM journal j JOIN agent a ON a.id = j.agent_id "
	    "WHERE j.kind = 'group' AND a.name = '%s' AND j.detail = '%s'",
	    agent, detail);
	return count(sql);
}

static void
test_group_changes_are_journalled_for_each_member(void)
{
	static const char *const who[] = {"alice", "bob", "carol"};
	const char *bad[] = {"carol", "nobody"};

	agents(who, 3);
	CHECK_INT(pgn_group_add(db, "team", who, 2), PGN_OK);
	CHECK_INT(group_entries("alice", "joined @team"), 1);
	CHECK_INT(group_entries("bob", "joined @team"), 1);
	/* Already in: no change, no entry; a failed add: nothing at all. */
	CHECK_INT(pgn_group_add(db, "team", who, 1), PGN_OK);
	CHECK_INT(group_entries("alice", "joined @team"), 1);
	CHECK_INT(pgn_group_add(db, "team", bad, 2), PGN_ENOTFOUND);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'group'"),
	    2);
	CHECK_INT(pgn_group_rm(db, "team", &who[1], 1), PGN_OK);
	CHECK_INT(group_entries("bob", "left @team"), 1);
	CHECK_INT(pgn_group_add(db, "team", &who[2], 1), PGN_OK);
	CHECK_INT(pgn_group_rm(db, "team", NULL, 0), PGN_OK);
	CHECK_INT(group_entries("alice", "left @team"), 1);
	CHECK_INT(group_entries("carol", "joined @team"), 1);
	CHECK_INT(group_entries("carol", "left @team"), 1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'group' "
	                "AND message_id IS NULL AND peer = ''"),
	    6);
}

/*
 * A group never shadows an agent, either way round (decision 0209):
 * agent add and rename refuse a live group's name; a name with LIKE's
 * wildcards or a group name's prefix is no group; once the group is
 * gone its name is free.
 */
static void
test_an_agent_never_takes_a_groups_name(void)
{
	static const char *const who[] = {"alice", "bob"};

	agents(who, 2);
	REQUIRE(pgn_group_add(db, "team_a", who, 1) == PGN_OK);
	CHECK_INT(pgn_agent_add(db, "team_a"), PGN_EEXIST);
	CHECK_CONTAINS(pgn_errmsg(db), "'team_a' is a group of scope '");
	CHECK_CONTAINS(pgn_errmsg(db),
	    "(@team_a): an agent takes another name");
	CHECK_INT(pgn_agent_add(db, "TEAM_A"), PGN_EEXIST);
	CHECK_INT(pgn_agent_rename(db, "bob", "team_a"), PGN_EEXIST);
	CHECK_INT(count("SELECT count(*) FROM agent WHERE name = 'team_a'"), 0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind IN "
	                "('created', 'renamed') AND detail <> 'added'"),
	    0);
	/* not the group: another name that LIKE would match, a prefix */
	CHECK_INT(pgn_agent_add(db, "team-a"), PGN_OK);
	CHECK_INT(pgn_agent_add(db, "team"), PGN_OK);
	CHECK_INT(pgn_agent_rename(db, "bob", "team_"), PGN_OK);
	/* the group gone, its name is free */
	REQUIRE(pgn_group_rm(db, "team_a", NULL, 0) == PGN_OK);
	CHECK_INT(pgn_agent_add(db, "team_a"), PGN_OK);
}

static void (*const rules[])(void) = {
    test_a_claim_takes_urgent_first_then_oldest_and_low_last,
    test_after_a_tool_and_at_a_stop_low_mail_stays_queued,
    test_an_urgent_message_continues_a_stop,
    test_a_session_start_takes_low_mail,
    test_the_peek_tells_which_events_claim_what_waits,
    test_a_wait_at_a_stop_does_not_see_low_mail,
    test_urgent_has_its_own_cap_per_sender_and_recipient,
    test_a_priority_out_of_range_stores_nothing,
    test_the_audit_shows_priority_and_group,
    test_a_group_send_queues_one_per_member_but_the_sender,
    test_an_unknown_group_stores_nothing,
    test_group_names_and_members_are_checked_all_or_nothing,
    test_a_group_follows_a_rename_and_skips_a_removed_agent,
    test_a_scope_holds_at_most_max_groups_an_agent_max_agent_groups,
    test_group_changes_are_journalled_for_each_member,
    test_an_agent_never_takes_a_groups_name,
};

static void
test_rules_on_sqlite(void)
{
	be_rules(0, rules, H_COUNT(rules), setup, teardown);
}

static void
test_rules_on_postgresql(void)
{
	if (be_have_pg())
		be_rules(1, rules, H_COUNT(rules), setup, teardown);
}

/* ---- the migrations: from the schema before a feature's file ------- */

/* A message queued before priority and groups is normal, no group. */
static void
check_migrated(void)
{
	struct pgn_msgs m;

	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	REQUIRE(pgn_inbox(db, "bob", &m) == PGN_OK);
	CHECK_INT(m.n, 1);
	if (m.n == 1) {
		CHECK_INT(m.v[0].priority, PGN_PRIORITY_NORMAL);
		CHECK(m.v[0].group == NULL);
	}
	pgn_msgs_release(&m);
	CHECK_INT(send_p("alice", "bob", "new", PGN_PRIORITY_URGENT), PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message WHERE priority = 0"), 1);
}

static const char seed[] =
    "INSERT INTO scope(id, root) VALUES (1, '');"
    "INSERT INTO agent(id, scope_id, name, created_ms) VALUES (1, 1, 'bob', 1);"
    "INSERT INTO message(id, scope_id, sender, recipient_id, body, created_ms) VALUES (7, 1, 'alice', 1, 'old', 1);";

static void
test_a_database_from_before_migrates_on_sqlite(void)
{
	be_migrate_from(0, NULL, "_priority_groups.sql", seed, &db, &chk,
	    check_migrated);
}

static void
test_a_database_from_before_migrates_on_postgresql(void)
{
	be_migrate_from(1, "pgn_prio_old", "_priority_groups.sql", seed, &db,
	    &chk, check_migrated);
}

/* ---- the migration that journals group changes (decision 0191) ---- */

static const char seed_journal[] =
    "INSERT INTO scope(id, root) VALUES (1, '');"
    "INSERT INTO agent(id, scope_id, name, created_ms) VALUES (1, 1, 'bob', 1);"
    "INSERT INTO journal(agent_id, at_ms, kind, detail) VALUES (1, 2, 'lease', 'took x'), (1, 3, 'reminded', 'prompt');";

/* Old rows are kept; the new kind is taken. */
static void
check_journal_migrated(void)
{
	const char *bob = "bob";

	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind IN "
	                "('lease', 'reminded') AND agent_id = 1"),
	    2);
	CHECK_INT(pgn_group_add(db, "team", &bob, 1), PGN_OK);
	CHECK_INT(group_entries("bob", "joined @team"), 1);
}

static void
test_a_journal_from_before_takes_group_entries_on_sqlite(void)
{
	be_migrate_from(0, NULL, "_journal_kinds.sql", seed_journal, &db, &chk,
	    check_journal_migrated);
}

static void
test_a_journal_from_before_takes_group_entries_on_postgresql(void)
{
	be_migrate_from(1, "pgn_grpj_old", "_journal_kinds.sql", seed_journal,
	    &db, &chk, check_journal_migrated);
}

static const struct h_test tests[] = {
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
    H_TEST(test_a_database_from_before_migrates_on_sqlite),
    H_TEST(test_a_database_from_before_migrates_on_postgresql),
    H_TEST(test_a_journal_from_before_takes_group_entries_on_sqlite),
    H_TEST(test_a_journal_from_before_takes_group_entries_on_postgresql),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
