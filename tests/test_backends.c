/*
 * The store's rules on every backend: each test runs on SQLite and, when
 * PGN_TEST_PG names a server (scripts/test starts one), on PostgreSQL,
 * in a database of its own. What the database holds is checked through
 * a second connection. Then what only PostgreSQL has: the database
 * string's rules, a newer schema refused, an unreachable server, the
 * claim from many processes at once, LISTEN/NOTIFY.
 */
#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "store_int.h"
#include "pigeon/handoff.h"
#include "pigeon/hook.h"
#include "pigeon/transcript.h"
#include "claim.h"

/* Processes of the concurrency test, and messages each sender sends. */
#define CLAIMERS   8
#define SENDERS    4
#define PER_SENDER 60

/* Sleep 'ms' milliseconds. */
static void
nap(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0)
		;
}

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */

static void
setup(void)
{
	be_open_pair("pgn_unit", &db, &chk);
}

static void
teardown(void)
{
	(void)be_close_pair(&db, &chk);
}

/* One number from the second connection. */
static int64_t
count(const char *sql)
{
	return be_count(chk, sql);
}

static pgn_status
send_to(pgn_db *d, const char *from, const char *const *to, size_t nto,
    const char *body, size_t *nsent)
{
	struct pgn_send req;
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];

	memset(&req, 0, sizeof(req));
	req.from = from;
	req.to = to;
	req.nto = nto;
	req.body = body;
	req.body_len = strlen(body);
	return pgn_send(d, &req, sent, PGN_MAX_RECIPIENTS, nsent);
}

static pgn_status
send1(pgn_db *d, const char *from, const char *to, const char *body)
{
	size_t n;

	return send_to(d, from, &to, 1, body, &n);
}

static pgn_status
claim(pgn_db *d, const char *agent, size_t budget, struct pgn_msgs *out)
{
	struct pgn_claim req;

	memset(&req, 0, sizeof(req));
	req.agent = agent;
	req.route = "cli";
	req.budget = budget;
	return pgn_claim(d, &req, out);
}

/* ---- the rules, on each backend ------------------------------------ */

static void
test_send_is_all_or_nothing_at_the_pending_cap(void)
{
	const char *to[] = {"bob", "carol"};
	struct pgn_msgs m;
	size_t n = 0;
	int i;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "carol") == PGN_OK);
	/* two senders: one holds at most PGN_MAX_PENDING_FROM */
	for (i = 0; i < PGN_MAX_PENDING; i++)
		REQUIRE(send1(db, i % 2 ? "dave" : "alice", "carol", "fill") ==
		    PGN_OK);
	CHECK_INT(send_to(db, "alice", to, 2, "to both", &n), PGN_EFULL);
	CHECK_INT(n, 0);
	CHECK_CONTAINS(pgn_errmsg(db), "agent 'carol' already has 200");
	CHECK_INT(count("SELECT count(*) FROM message"), PGN_MAX_PENDING);
	CHECK_INT(count("SELECT count(*) FROM message m JOIN agent a ON "
	                "a.id = m.recipient_id WHERE a.name = 'bob'"),
	    0);
	/* one read leaves carol under the cap: now both get it */
	REQUIRE(claim(db, "carol", 1, &m) == PGN_OK);
	CHECK_INT(m.n, 1);
	pgn_msgs_release(&m);
	CHECK_INT(send_to(db, "alice", to, 2, "to both", &n), PGN_OK);
	CHECK_INT(n, 2);
	CHECK_INT(count("SELECT count(*) FROM message WHERE body = 'to both'"),
	    2);
}

static void
test_unknown_recipient_sends_nothing(void)
{
	const char *to[] = {"bob", "nobody"};
	size_t n = 0;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	CHECK_INT(send_to(db, "alice", to, 2, "hi", &n), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no agent 'nobody'");
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
}

static void
test_claim_takes_oldest_first_and_audits_each(void)
{
	struct pgn_msgs m;
	int64_t checked = 0, bad = 0;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(send1(db, "alice", "bob", "first") == PGN_OK);
	REQUIRE(send1(db, "alice", "bob", "second") == PGN_OK);
	REQUIRE(send1(db, "alice", "bob", "third") == PGN_OK);
	/* a budget that fits one: the oldest always goes, alone */
	REQUIRE(claim(db, "bob", 1, &m) == PGN_OK);
	CHECK_INT(m.n, 1);
	if (m.n == 1)
		CHECK_STR(m.v[0].body, "first");
	CHECK_INT(m.left, 2);
	pgn_msgs_release(&m);
	REQUIRE(claim(db, "bob", 0, &m) == PGN_OK);
	CHECK_INT(m.n, 2);
	if (m.n == 2) {
		CHECK_STR(m.v[0].body, "second");
		CHECK_STR(m.v[1].body, "third");
	}
	pgn_msgs_release(&m);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    0);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 3);
	CHECK_INT(count("SELECT n FROM audit_head WHERE id = 1"), 3);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = "
	                "'delivered'"),
	    3);
	CHECK_INT(pgn_audit_verify(chk, &checked, &bad), PGN_OK);
	CHECK_INT(checked, 3);
	/* nothing left: a claim takes nothing */
	REQUIRE(claim(db, "bob", 0, &m) == PGN_OK);
	CHECK_INT(m.n, 0);
	pgn_msgs_release(&m);
}

static void
test_audit_verify_finds_an_edited_body(void)
{
	struct pgn_msgs m;
	int64_t checked = 0, bad = 0;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(send1(db, "alice", "bob", "one") == PGN_OK);
	REQUIRE(send1(db, "alice", "bob", "two") == PGN_OK);
	REQUIRE(claim(db, "bob", 0, &m) == PGN_OK);
	pgn_msgs_release(&m);
	REQUIRE(
	    pgn_exec(chk, "UPDATE delivery SET body = 'forged' WHERE id = 1",
	        "tampering", PGN_NONE) == PGN_OK);
	CHECK_INT(pgn_audit_verify(db, &checked, &bad), PGN_ETAMPER);
	CHECK_INT(bad, 1);
	CHECK_CONTAINS(pgn_errmsg(db), "audit row 1 does not match its hash");
}

static void
test_turn_is_claimed_once_per_turn_key(void)
{
	struct pgn_turn t;
	struct pgn_turn_out out;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(send1(db, "alice", "bob", "for the turn") == PGN_OK);
	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = "claude:s-1";
	t.agent = "bob";
	t.turn = "turn-1";
	t.route = "prompt";
	t.max_continues = 3;
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK_INT(out.msgs.n, 1);
	CHECK_INT(out.duplicate, 0);
	CHECK_STR(out.agent, "bob");
	pgn_msgs_release(&out.msgs);
	REQUIRE(send1(db, "alice", "bob", "after it") == PGN_OK);
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK_INT(out.duplicate, 1);
	CHECK_INT(out.msgs.n, 0);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 1);
	CHECK_INT(count("SELECT count(*) FROM session WHERE key = "
	                "'claude:s-1' AND last_turn = 'turn-1'"),
	    1);
}

static void
test_peek_sees_queued_mail_without_writing(void)
{
	struct pgn_peek p;
	struct pgn_msgs m;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_session_bind(db, "claude", "claude:s-2", "bob",
	            (char[PGN_MAX_NAME + 1]){0}) == PGN_OK);
	REQUIRE(pgn_turn_peek(db, "claude:s-2", &p) == PGN_OK);
	CHECK(p.bound);
	CHECK(!p.queued);
	CHECK_STR(p.agent, "bob");
	REQUIRE(send1(chk, "alice", "bob", "queued") == PGN_OK);
	REQUIRE(pgn_turn_peek(db, "claude:s-2", &p) == PGN_OK);
	CHECK(p.queued);
	REQUIRE(pgn_turn_peek(db, "claude:nobody", &p) == PGN_OK);
	CHECK(!p.bound);
	REQUIRE(claim(db, "bob", 0, &m) == PGN_OK);
	CHECK_INT(m.n, 1);
	pgn_msgs_release(&m);
}

static void
test_agents_journal_and_inbox_read_back(void)
{
	struct pgn_agents a;
	struct pgn_entries e;
	struct pgn_msgs m;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_session_bind(db, "codex", "codex:x", "bob",
	            (char[PGN_MAX_NAME + 1]){0}) == PGN_OK);
	REQUIRE(pgn_session_bind(db, "claude", "claude:y", "bob",
	            (char[PGN_MAX_NAME + 1]){0}) == PGN_OK);
	REQUIRE(send1(db, "alice", "bob", "hello") == PGN_OK);
	REQUIRE(pgn_agents_list(db, &a) == PGN_OK);
	CHECK_INT(a.n, 1);
	if (a.n == 1) {
		CHECK_STR(a.v[0].name, "bob");
		CHECK_STR(a.v[0].hosts, "claude,codex");
		CHECK_INT(a.v[0].sessions, 2);
		CHECK_INT(a.v[0].queued, 1);
	}
	pgn_agents_release(&a);
	REQUIRE(pgn_inbox(db, "bob", &m) == PGN_OK);
	CHECK_INT(m.n, 1);
	pgn_msgs_release(&m);
	REQUIRE(claim(db, "bob", 0, &m) == PGN_OK);
	pgn_msgs_release(&m);
	REQUIRE(pgn_journal_tail(db, "bob", 0, 10, &e) == PGN_OK);
	CHECK_INT(e.n, 4); /* created, bound, bound, delivered */
	if (e.n == 4) {
		CHECK_STR(e.v[3].kind, "delivered");
		CHECK_STR(e.v[3].body, "hello");
	}
	pgn_entries_release(&e);
}

static void
test_batons_merge_and_are_taken_once_at_a_new_conversation(void)
{
	struct pgn_handoff h;
	struct pgn_baton b;
	struct pgn_turn t;
	struct pgn_turn_out out;
	int merged = -1;

	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	memset(&h, 0, sizeof(h));
	h.agent = "alice";
	h.to = "bob";
	h.text = "first note";
	h.len = strlen(h.text);
	REQUIRE(pgn_handoff_leave(db, &h, &b, &merged) == PGN_OK);
	CHECK_INT(merged, 0);
	pgn_baton_release(&b);
	h.text = "second note";
	h.len = strlen(h.text);
	REQUIRE(pgn_handoff_leave(db, &h, &b, &merged) == PGN_OK);
	CHECK_INT(merged, 1);
	CHECK_INT(b.notes, 2);
	pgn_baton_release(&b);
	/* a scope-wide one, for whoever starts next */
	h.to = NULL;
	h.text = "anyone";
	h.len = strlen(h.text);
	REQUIRE(pgn_handoff_leave(db, &h, &b, &merged) == PGN_OK);
	pgn_baton_release(&b);
	CHECK_INT(count("SELECT count(*) FROM baton"), 2);
	CHECK_INT(count("SELECT count(*) FROM baton WHERE target_id IS NULL"),
	    1);
	/* bob's new conversation takes bob's baton, once */
	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = "claude:new-1";
	t.agent = "bob";
	t.route = "session-start";
	t.max_continues = 3;
	t.take_baton = 1;
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK(out.baton.id != 0);
	if (out.baton.body != NULL)
		CHECK_CONTAINS(out.baton.body, "second note");
	pgn_baton_release(&out.baton);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM baton WHERE consumed_ms IS NOT "
	                "NULL"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM delivery WHERE route = "
	                "'handoff'"),
	    1);
	t.session = "claude:new-2";
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK(out.baton.id != 0); /* the scope-wide one now */
	pgn_baton_release(&out.baton);
	pgn_msgs_release(&out.msgs);
	t.session = "claude:new-3";
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK_INT(out.baton.id, 0); /* none left */
	pgn_baton_release(&out.baton);
	pgn_msgs_release(&out.msgs);
	{
		int64_t checked = 0, bad = 0;

		CHECK_INT(pgn_audit_verify(chk, &checked, &bad), PGN_OK);
		CHECK_INT(checked, 2);
	}
}

static void
test_a_session_start_of_a_session_seen_before_takes_no_baton(void)
{
	struct pgn_handoff h;
	struct pgn_baton b;
	struct pgn_turn t;
	struct pgn_turn_out out;
	int merged = -1;

	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	memset(&t, 0, sizeof(t));
	t.host = "cursor";
	t.session = "cursor:c-1";
	t.agent = "bob";
	t.route = "session-start";
	t.max_continues = 3;
	t.take_baton = 1;
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK_INT(out.bound, 1);
	pgn_msgs_release(&out.msgs);
	memset(&h, 0, sizeof(h));
	h.agent = "alice";
	h.text = "for the next new conversation";
	h.len = strlen(h.text);
	REQUIRE(pgn_handoff_leave(db, &h, &b, &merged) == PGN_OK);
	pgn_baton_release(&b);
	/* Its start again (a replay, or Cursor's with no source): none. */
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK_INT(out.bound, 0);
	CHECK_INT(out.baton.id, 0);
	pgn_baton_release(&out.baton);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM baton WHERE consumed_ms IS NULL"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 0);
	t.session = "cursor:c-2";
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK(out.baton.id != 0);
	pgn_baton_release(&out.baton);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM baton WHERE consumed_session = "
	                "'cursor:c-2'"),
	    1);
}

/* ---- many processes, each its own connection ------------------------ */

static void
child_claims(void)
{
	char path[PATH_MAX], done[PATH_MAX];
	struct pgn_msgs m;
	pgn_db *d = NULL;
	FILE *f;
	int empty;
	size_t k;

	H_PATH(path, "claimed");
	if (pgn_db_open(be_where, 0, 20000, &d) != PGN_OK)
		_exit(3);
	f = fopen(path, "a");
	if (f == NULL)
		_exit(4);
	setvbuf(f, NULL, _IOLBF, 0);
	H_PATH(done, "senders-done");
	/* until every sender has ended and a claim after that found none */
	for (;;) {
		int ended = access(done, F_OK) == 0;

		if (claim(d, "bob", 0, &m) != PGN_OK)
			_exit(5);
		for (k = 0; k < m.n; k++)
			fprintf(f, "%lld\n", (long long)m.v[k].id);
		empty = m.n == 0;
		pgn_msgs_release(&m);
		if (ended && empty)
			break;
		nap(2);
	}
	fclose(f);
	pgn_db_close(d);
	_exit(0);
}

static void
child_sends(int i)
{
	char body[64];
	pgn_db *d = NULL;
	int k;

	if (pgn_db_open(be_where, 0, 20000, &d) != PGN_OK)
		_exit(3);
	for (k = 0; k < PER_SENDER; k++) {
		pgn_status st;

		(void)snprintf(body, sizeof(body), "message %d of s%d", k, i);
		/* a full queue is back-pressure: the claimers drain it */
		while ((st = send1(d, "alice", "bob", body)) == PGN_EFULL)
			nap(2);
		if (st != PGN_OK)
			_exit(5);
	}
	pgn_db_close(d);
	_exit(0);
}

static void
test_many_claimers_take_each_message_exactly_once(void)
{
	pid_t pid[CLAIMERS + SENDERS];
	char path[PATH_MAX], line[64];
	int i, st, ok = 1;
	int64_t lines = 0;
	FILE *f;
	struct pgn_msgs m;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	H_PATH(path, "senders-done");
	(void)unlink(path);
	fflush(stdout);
	for (i = 0; i < CLAIMERS + SENDERS; i++) {
		pid[i] = fork();
		REQUIRE(pid[i] >= 0);
		if (pid[i] == 0) {
			if (i < CLAIMERS)
				child_claims();
			child_sends(i - CLAIMERS);
		}
	}
	/* the senders first; then the claimers are told they have ended */
	for (i = CLAIMERS + SENDERS - 1; i >= 0; i--) {
		if (i == CLAIMERS - 1) {
			H_PATH(path, "senders-done");
			f = fopen(path, "w");
			REQUIRE(f != NULL);
			fclose(f);
		}
		if (waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0) {
			printf("process %d ended with status %d\n", i, st);
			ok = 0;
		}
	}
	CHECK(ok);
	/* what the claimers missed at the end */
	REQUIRE(claim(db, "bob", 0, &m) == PGN_OK);
	H_PATH(path, "claimed");
	f = fopen(path, "a");
	REQUIRE(f != NULL);
	for (size_t k = 0; k < m.n; k++)
		fprintf(f, "%lld\n", (long long)m.v[k].id);
	fclose(f);
	pgn_msgs_release(&m);
	f = fopen(path, "r");
	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL)
		lines++;
	fclose(f);
	/* printed once each, and the database agrees */
	CHECK_INT(lines, SENDERS * PER_SENDER);
	CHECK_INT(count("SELECT count(*) FROM message"), SENDERS * PER_SENDER);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    0);
	CHECK_INT(count("SELECT count(DISTINCT message_id) FROM delivery"),
	    SENDERS * PER_SENDER);
	CHECK_INT(count("SELECT count(*) FROM delivery"), SENDERS * PER_SENDER);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = "
	                "'delivered'"),
	    SENDERS * PER_SENDER);
	{
		int64_t checked = 0, bad = 0;

		CHECK_INT(pgn_audit_verify(chk, &checked, &bad), PGN_OK);
		CHECK_INT(checked, SENDERS * PER_SENDER);
	}
	{
		char cmd[PATH_MAX + 64];

		(void)snprintf(cmd, sizeof(cmd),
		    "test -z \"$(sort '%s' | uniq -d)\"", path);
		CHECK_INT(be_sh(cmd), 0); /* no id printed twice */
	}
}

/*
 * Writes nobody reads the answer of (pgn_step_write): on PostgreSQL they
 * are sent without waiting (docs/decisions/0126), on SQLite they run at
 * once. Either way a failed one fails its transaction, names itself,
 * and nothing of the transaction is kept.
 */
static const char SQL_W_ADD[] = "INSERT INTO scope(root) VALUES (?1)";
static const char SQL_W_COUNT[] =
    "SELECT count(*) FROM scope WHERE root LIKE 'w-%'";

static pgn_status
writes_then_fail(pgn_db *d, void *arg)
{
	pgn_status rc;

	(void)arg;
	rc = pgn_exec(d, SQL_W_ADD, "the first write", PGN_T("w-1"));
	if (rc == PGN_OK) /* the same root again: UNIQUE fails */
		rc = pgn_exec(d, SQL_W_ADD, "the failing write", PGN_T("w-1"));
	if (rc == PGN_OK)
		rc = pgn_exec(d, SQL_W_ADD, "the write after", PGN_T("w-2"));
	return rc;
}

static pgn_status
write_fails_then_read(pgn_db *d, void *arg)
{
	int64_t n = -1;
	pgn_status rc;

	rc = pgn_exec(d, SQL_W_ADD, "the first write", PGN_T("w-1"));
	if (rc == PGN_OK)
		rc = pgn_exec(d, SQL_W_ADD, "the failing write", PGN_T("w-1"));
	if (rc == PGN_OK)
		rc = pgn_select_i64(d, SQL_W_COUNT, &n, "the read", PGN_NONE);
	*(int64_t *)arg = n;
	return rc;
}

static void
test_a_failed_write_fails_its_transaction_and_keeps_nothing(void)
{
	int64_t n = 0;

	CHECK_INT(pgn_tx(db, writes_then_fail, NULL), PGN_EDB);
	CHECK_CONTAINS(pgn_errmsg(db), "the failing write");
	CHECK_INT(count(SQL_W_COUNT), 0);
	/* The read after it fails with the write's error, not its own. */
	CHECK_INT(pgn_tx(db, write_fails_then_read, &n), PGN_EDB);
	CHECK_CONTAINS(pgn_errmsg(db), "the failing write");
	CHECK(strstr(pgn_errmsg(db), "the read") == NULL);
	CHECK_INT(count(SQL_W_COUNT), 0);
	/* The connection is whole: the next transaction commits. */
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM agent WHERE name = 'bob'"), 1);
}

/* Over the pipeline's bound of unread writes, with a read among them. */
#define MANY_WRITES 200

static pgn_status
many_writes(pgn_db *d, void *arg)
{
	char root[32];
	int64_t *seen = arg;
	pgn_status rc = PGN_OK;
	int i;

	for (i = 0; rc == PGN_OK && i < MANY_WRITES; i++) {
		(void)snprintf(root, sizeof(root), "w-%d", i);
		rc = pgn_exec(d, SQL_W_ADD, "a write", PGN_T(root));
		if (rc == PGN_OK && i == MANY_WRITES / 2 - 1)
			rc = pgn_select_i64(d, SQL_W_COUNT, seen, "counting",
			    PGN_NONE);
	}
	return rc;
}

static void
test_many_writes_in_one_transaction_all_commit(void)
{
	int64_t seen = -1;

	CHECK_INT(pgn_tx(db, many_writes, &seen), PGN_OK);
	/* A read sees the transaction's own writes sent before it. */
	CHECK_INT(seen, MANY_WRITES / 2);
	CHECK_INT(count(SQL_W_COUNT), MANY_WRITES);
}

/* Outside a transaction a write is done when it returns, even right
 * after a read whose commit is still on its way (PostgreSQL). */
static void
test_a_write_outside_a_transaction_is_done_when_it_returns(void)
{
	struct pgn_peek p;

	REQUIRE(pgn_turn_peek(db, "claude:nobody", &p) == PGN_OK);
	CHECK_INT(pgn_exec(db, SQL_W_ADD, "a write on its own", PGN_T("w-0")),
	    PGN_OK);
	CHECK_INT(count(SQL_W_COUNT), 1);
	REQUIRE(pgn_turn_peek(db, "claude:nobody", &p) == PGN_OK);
	CHECK_INT(pgn_exec(db, SQL_W_ADD, "a write on its own", PGN_T("w-0")),
	    PGN_EDB);
	CHECK_CONTAINS(pgn_errmsg(db), "a write on its own");
	CHECK_INT(count(SQL_W_COUNT), 1);
}

/* ---- one sender's share of a turn, and where a transcript is read ---- */

/* A body of 'len' bytes of 'c' from 'from' to bob. */
static pgn_status
send_sized(const char *from, char c, size_t len)
{
	char body[PGN_MAX_BODY + 1];

	memset(body, c, len);
	body[len] = '\0';
	return send1(db, from, "bob", body);
}

/* One claim of bob's session "claude:s1": 'turn' NULL is mid-turn. */
static void
turn_claim(const char *turn, const char *route, int begins,
    struct pgn_turn_out *out)
{
	struct pgn_turn t;

	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = "claude:s1";
	t.agent = "bob";
	t.turn = turn;
	t.route = route;
	t.max_continues = 3;
	t.turn_begins = begins;
	REQUIRE(pgn_turn_claim(db, &t, out) == PGN_OK);
}

/*
 * PGN_TURN_SENDER_MAX bytes of one sender's text in one turn: exactly
 * the bound goes, a byte more waits; later claims of the same turn hold
 * it (and the sender's later mail, whatever its size), other senders
 * get through; a turn that begins (a prompt, an idle wake) brings it.
 */
static void
test_one_senders_text_in_one_turn_is_bounded(void)
{
	struct pgn_turn_out out;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	turn_claim("SessionStart:t0", "session-start", 0, &out);
	pgn_msgs_release(&out.msgs);
	REQUIRE(send_sized("alice", 'a', PGN_MAX_BODY) == PGN_OK);
	REQUIRE(send_sized("alice", 'b', PGN_TURN_SENDER_MAX - PGN_MAX_BODY) ==
	    PGN_OK);
	REQUIRE(send_sized("alice", 'c', 1) == PGN_OK);
	REQUIRE(send1(db, "carol", "bob", "green") == PGN_OK);
	/* A prompt: alice's first two (the bound exactly), and carol's. */
	turn_claim("UserPromptSubmit:p1", "prompt", 0, &out);
	CHECK_INT(out.msgs.n, 3);
	CHECK_INT(out.held, 1);
	CHECK_INT(out.msgs.left, 1);
	if (out.msgs.n == 3)
		CHECK_STR(out.msgs.v[2].sender, "carol");
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL AND body = 'c'"),
	    1);
	CHECK_INT(count("SELECT turn_mail FROM session"), 1);
	/* After a tool call: still this turn, alice's share is used. */
	REQUIRE(send1(db, "alice", "bob", "d") == PGN_OK);
	REQUIRE(send1(db, "dave", "bob", "hi") == PGN_OK);
	turn_claim(NULL, "after-tool", 0, &out);
	CHECK_INT(out.msgs.n, 1);
	if (out.msgs.n == 1)
		CHECK_STR(out.msgs.v[0].sender, "dave");
	CHECK_INT(out.held, 2);
	pgn_msgs_release(&out.msgs);
	turn_claim(NULL, "stop", 0, &out);
	CHECK_INT(out.msgs.n, 0);
	CHECK_INT(out.held, 2);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT auto_continues FROM session"), 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    2);
	/* The idle wake begins a turn: alice's mail comes, in order. */
	turn_claim(NULL, "stop", 1, &out);
	CHECK_INT(out.msgs.n, 2);
	CHECK_INT(out.held, 0);
	if (out.msgs.n == 2) {
		CHECK_STR(out.msgs.v[0].body, "c");
		CHECK_STR(out.msgs.v[1].body, "d");
	}
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM message WHERE delivered_ms IS "
	                "NULL"),
	    0);
	CHECK_INT(count("SELECT count(*) FROM session WHERE last_turn = '' "
	                "AND turn_mail = 1"),
	    1);
	CHECK_INT(count("SELECT CAST(sum(bytes) AS BIGINT) FROM delivery "
	                "WHERE sender = 'alice' AND route = 'prompt'"),
	    PGN_TURN_SENDER_MAX);
}

/* A Claude transcript of bob's session, copied to 'path'. */
static void
a_transcript(char *path, size_t len, const char *name)
{
	const char *d = getenv("PGN_TEST_FIXTURES");
	char from[PATH_MAX], *bytes;
	size_t n;
	FILE *f;

	REQUIRE(d != NULL);
	(void)snprintf(from, sizeof(from), "%s/transcripts/claude-shell.jsonl",
	    d);
	h_join(path, len, h_tmp, name);
	bytes = h_read_file(from, &n);
	REQUIRE(bytes != NULL);
	f = fopen(path, "wb");
	REQUIRE(f != NULL);
	REQUIRE(fwrite(bytes, 1, n, f) == n);
	fclose(f);
	free(bytes);
}

/* The digest of bob's session: its status, errmsg in 'why'. */
static pgn_status
digest_of(char *why, size_t len)
{
	struct pgn_session_info s;
	char *digest = NULL;
	pgn_status st;

	st = pgn_session_find(db, "claude:s1", NULL, &s);
	if (st == PGN_OK)
		st = pgn_session_digest(db, &s, PGN_DIGEST_MAX, NULL, &digest);
	(void)snprintf(why, len, "%s", st == PGN_OK ? "" : pgn_errmsg(db));
	free(digest);
	pgn_session_info_release(&s);
	return st;
}

/*
 * A session's transcript is read where a hook named it: the machine is
 * recorded with the path; a path named elsewhere, or one of a session
 * bound before machines were recorded, is not read (decision 0129).
 */
static void
test_a_transcript_is_read_only_on_the_machine_that_named_it(void)
{
	char path[PATH_MAX], why[PGN_MAX_ERRMSG], here[PGN_MAX_MACHINE + 1];
	char sql[PGN_MAX_MACHINE + 96];
	struct pgn_turn_out out;
	struct pgn_turn t;

	REQUIRE(pgn_machine_id(here));
	a_transcript(path, sizeof(path), "s1.jsonl");
	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = "claude:s1";
	t.agent = "bob";
	t.turn = "SessionStart:t0";
	t.route = "session-start";
	t.max_continues = 3;
	t.transcript = path;
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	pgn_msgs_release(&out.msgs);
	/* bound here, the path named here */
	(void)snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM session WHERE machine = '%s'", here);
	CHECK_INT(count(sql), 1);
	CHECK_INT(digest_of(why, sizeof(why)), PGN_OK);
	/* named on another machine (a hook there, or its rebinding) */
	REQUIRE(pgn_exec(chk, "UPDATE session SET machine = 'elsewhere@b'",
	            "moving", PGN_NONE) == PGN_OK);
	CHECK_INT(digest_of(why, sizeof(why)), PGN_EINVAL);
	CHECK_CONTAINS(why,
	    "session 'claude:s1' was not bound on this machine");
	/* bound before pigeon recorded machines */
	REQUIRE(pgn_exec(chk, "UPDATE session SET machine = NULL", "forgetting",
	            PGN_NONE) == PGN_OK);
	CHECK_INT(digest_of(why, sizeof(why)), PGN_EINVAL);
	CHECK_CONTAINS(why, "its transcript is not read");
	/* a new path named here is this machine's again */
	a_transcript(path, sizeof(path), "s1b.jsonl");
	t.turn = "UserPromptSubmit:p1";
	t.route = "prompt";
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count(sql), 1);
	CHECK_INT(digest_of(why, sizeof(why)), PGN_OK);
	/* the same path again changes nothing: the machine stays */
	REQUIRE(pgn_exec(chk, "UPDATE session SET machine = 'elsewhere@b'",
	            "moving", PGN_NONE) == PGN_OK);
	t.turn = "UserPromptSubmit:p2";
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT count(*) FROM session WHERE machine = "
	                "'elsewhere@b'"),
	    1);
	CHECK_INT(digest_of(why, sizeof(why)), PGN_EINVAL);
}

/* ---- the runner: every rule on each backend -------------------------- */

static void (*const rules[])(void) = {
    test_send_is_all_or_nothing_at_the_pending_cap,
    test_unknown_recipient_sends_nothing,
    test_claim_takes_oldest_first_and_audits_each,
    test_audit_verify_finds_an_edited_body,
    test_turn_is_claimed_once_per_turn_key,
    test_peek_sees_queued_mail_without_writing,
    test_agents_journal_and_inbox_read_back,
    test_batons_merge_and_are_taken_once_at_a_new_conversation,
    test_a_session_start_of_a_session_seen_before_takes_no_baton,
    test_many_claimers_take_each_message_exactly_once,
    test_a_failed_write_fails_its_transaction_and_keeps_nothing,
    test_many_writes_in_one_transaction_all_commit,
    test_a_write_outside_a_transaction_is_done_when_it_returns,
    test_one_senders_text_in_one_turn_is_bounded,
    test_a_transcript_is_read_only_on_the_machine_that_named_it,
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

/* ---- only PostgreSQL ------------------------------------------------- */

static void
test_a_password_in_the_database_string_is_refused(void)
{
	char s[PATH_MAX + 64];
	pgn_db *d = NULL;

	if (!be_have_pg())
		return;
	(void)snprintf(s, sizeof(s), "%s password=sekrit-4711", be_pg);
	CHECK_INT(pgn_db_open(s, 0, 2000, &d), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(d), "~/.pgpass");
	CHECK(strstr(pgn_errmsg(d), "sekrit-4711") == NULL);
	pgn_db_close(d);
	d = NULL;
	CHECK_INT(pgn_db_open("postgresql://bob:sekrit-4711@localhost/x", 0,
	              2000, &d),
	    PGN_EINVAL);
	CHECK(strstr(pgn_errmsg(d), "sekrit-4711") == NULL);
	CHECK_CONTAINS(pgn_errmsg(d), "holds a password");
	pgn_db_close(d);
}

/*
 * libpq's own list of its keywords, asked of libpq itself (not through
 * the code under test): PQconninfoOption is libpq.so.5's stable ABI.
 */
struct pq_option {
	char *keyword, *envvar, *compiled, *val, *label, *dispchar;
	int dispsize;
};

/* The keywords libpq marks secret (dispchar "*"), comma-separated. */
static void
libpq_secrets(char *out, size_t len)
{
	struct pq_option *(*parse)(const char *, char **);
	void (*free_opts)(struct pq_option *);
	struct pq_option *opts, *o;
	void *lib;
	char *err = NULL;

	out[0] = '\0';
	lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
	REQUIRE(lib != NULL);
	*(void **)&parse = dlsym(lib, "PQconninfoParse");
	*(void **)&free_opts = dlsym(lib, "PQconninfoFree");
	REQUIRE(parse != NULL && free_opts != NULL);
	opts = parse("", &err);
	REQUIRE(opts != NULL);
	for (o = opts; o->keyword != NULL; o++)
		if (o->dispchar != NULL && strcmp(o->dispchar, "*") == 0)
			(void)snprintf(out + strlen(out), len - strlen(out),
			    "%s%s", out[0] ? "," : "", o->keyword);
	free_opts(opts);
	dlclose(lib);
}

/* The socket directory of PGN_TEST_PG (its host=). */
static void
pg_sock(char *sock, size_t len)
{
	const char *h;
	size_t n;

	h = strstr(be_pg, "host=");
	REQUIRE(h != NULL);
	n = strcspn(h + 5, " ");
	REQUIRE(n < len);
	memcpy(sock, h + 5, n);
	sock[n] = '\0';
}

/* 's' is refused, says 'want', and neither message nor shown form
 * holds the secret. */
static void
refused_unshown(const char *s, const char *want)
{
	pgn_db *d = NULL;

	CHECK_INT(pgn_db_open(s, 0, 2000, &d), PGN_EINVAL);
	CHECK(strstr(pgn_errmsg(d), "sekrit") == NULL);
	CHECK(strstr(pgn_errmsg(d), "4711") == NULL);
	CHECK_CONTAINS(pgn_errmsg(d), want);
	CHECK_STR(pgn_db_shown(d), "(PostgreSQL)");
	if (strstr(pgn_errmsg(d), "sekrit") != NULL)
		fprintf(stderr, "  for %s\n", s);
	pgn_db_close(d);
}

/* Every keyword libpq marks secret, in keyword=value (bare and quoted)
 * and URI form (plain and percent-encoded): refused, never shown. */
static void
test_every_keyword_libpq_marks_secret_is_refused_and_never_shown(void)
{
	char secrets[512], sock[PATH_MAX], s[2 * PATH_MAX], want[96];
	char *k, *save = NULL;
	int n = 0;

	if (!be_have_pg())
		return;
	libpq_secrets(secrets, sizeof(secrets));
	/* libpq 13 and later: at least these two. */
	CHECK(strstr(secrets, "password") != NULL);
	CHECK(strstr(secrets, "sslpassword") != NULL);
	pg_sock(sock, sizeof(sock));
	for (k = strtok_r(secrets, ",", &save); k != NULL;
	     k = strtok_r(NULL, ",", &save), n++) {
		if (strcmp(k, "password") == 0)
			(void)snprintf(want, sizeof(want), "holds a password");
		else
			(void)snprintf(want, sizeof(want),
			    "holds a secret (%s)", k);
		(void)snprintf(s, sizeof(s), "%s %s=sekrit-4711", be_pg, k);
		refused_unshown(s, want);
		(void)snprintf(s, sizeof(s), "%s %s = 'sekrit 4711\\'x'", be_pg,
		    k);
		refused_unshown(s, want);
		(void)snprintf(s, sizeof(s),
		    "postgresql:///postgres?host=%s&%s=sekrit-4711", sock, k);
		refused_unshown(s, want);
		/* The keyword's first letter and the value percent-encoded. */
		(void)snprintf(s, sizeof(s),
		    "postgres:///postgres?host=%s&%%%02X%s=%%73ekrit%%2D4711",
		    sock, (unsigned)(unsigned char)k[0], k + 1);
		refused_unshown(s, want);
	}
	CHECK(n >= 2);
	/* A user:password pair in a URI. */
	refused_unshown("postgresql://bob:sekrit-4711@localhost/x",
	    "holds a password");
	/* A dbname that is a database string of its own. */
	(void)snprintf(s, sizeof(s), "%s dbname='host=x password=sekrit-4711'",
	    be_pg);
	refused_unshown(s, "a database string of its own");
}

/*
 * Strings libpq refuses, its own message quoting what it could not
 * read: a secret's value or the whole URI never shows; a mistyped
 * keyword (one of libpq's, in another case) does.
 */
static void
test_a_string_libpq_refuses_is_not_echoed(void)
{
	const char *uris[] = {
	    "postgresql://bob:sekrit-4711@[::1/x",
	    "postgresql://bob:sekrit-4711@[]/x",
	    "postgresql://h/x?sslpassword=sekrit-4711%zz",
	    "postgresql://h/x?sslpassword=sekrit%00-4711",
	    "postgresql://h/x?sekrit-4711",
	    "postgresql://h/x?sslpassword=a=sekrit-4711",
	};
	char s[PATH_MAX + 96];
	size_t i;

	if (!be_have_pg())
		return;
	for (i = 0; i < sizeof(uris) / sizeof(uris[0]); i++)
		refused_unshown(uris[i], "libpq accepts");
	/* An unquoted value with a space: libpq quotes its second word. */
	(void)snprintf(s, sizeof(s), "%s sslpassword=x sekrit-4711", be_pg);
	refused_unshown(s, "libpq accepts");
	(void)snprintf(s, sizeof(s), "%s sslpassword='sekrit-4711", be_pg);
	refused_unshown(s, "libpq accepts");
	(void)snprintf(s, sizeof(s), "%s sekrit-4711=x", be_pg);
	refused_unshown(s, "libpq accepts");
	/* The typo is named: it is libpq's keyword, not a value. */
	(void)snprintf(s, sizeof(s), "%s PASSWORD=sekrit-4711", be_pg);
	refused_unshown(s, "invalid connection option \"PASSWORD\"");
	(void)snprintf(s, sizeof(s), "%s SSLPassword=sekrit-4711", be_pg);
	refused_unshown(s, "invalid connection option \"SSLPassword\"");
}

/* What every message names: host, port, dbname, user and service, from
 * the string, in that order; nothing else of it. */
static void
test_the_database_is_shown_by_host_port_dbname_and_user(void)
{
	char s[sizeof(be_where) + 64], want[PATH_MAX + 128];
	pgn_db *d = NULL;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	(void)snprintf(s, sizeof(s), "%s application_name=not-shown-42",
	    be_where);
	REQUIRE(pgn_db_open(s, 0, 2000, &d) == PGN_OK);
	CHECK(strstr(pgn_db_shown(d), "not-shown-42") == NULL);
	CHECK(strstr(pgn_db_shown(d), "application_name") == NULL);
	CHECK_CONTAINS(pgn_db_shown(d), "host=");
	CHECK_CONTAINS(pgn_db_shown(d), " port=");
	CHECK_CONTAINS(pgn_db_shown(d), " user=");
	(void)snprintf(want, sizeof(want), " dbname=%s ", be_pg_db);
	CHECK_CONTAINS(pgn_db_shown(d), want);
	CHECK_INT(pgn_exec(d, "SELECT 1 / 0", "looking", PGN_NONE), PGN_EDB);
	(void)snprintf(want, sizeof(want),
	    "database '%s': looking: ", pgn_db_shown(d));
	CHECK_CONTAINS(pgn_errmsg(d), want);
	CHECK(strstr(pgn_errmsg(d), "not-shown-42") == NULL);
	pgn_db_close(d);
	teardown();
}

static void
test_an_unreachable_server_names_host_and_port(void)
{
	pgn_db *d = NULL;
	char s[PATH_MAX + 64];

	if (!be_have_pg())
		return;
	/* a socket directory with no server in it */
	(void)snprintf(s, sizeof(s), "host=%s port=5999 dbname=x", h_tmp);
	CHECK_INT(pgn_db_open(s, 0, 1000, &d), PGN_EIO);
	CHECK_CONTAINS(pgn_errmsg(d), "cannot connect to PostgreSQL at host");
	CHECK_CONTAINS(pgn_errmsg(d), "port 5999");
	pgn_db_close(d);
}

static void
test_a_newer_schema_is_refused_and_left_alone(void)
{
	pgn_db *d = NULL;
	int64_t v = 0;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	REQUIRE(pgn_exec(chk, "UPDATE pigeon_schema SET version = 99",
	            "raising the version", PGN_NONE) == PGN_OK);
	CHECK_INT(pgn_db_open(be_where, 0, 2000, &d), PGN_ETOONEW);
	CHECK_CONTAINS(pgn_errmsg(d), "schema version 99, newer than");
	pgn_db_close(d);
	REQUIRE(pgn_select_i64(chk, "SELECT version FROM pigeon_schema", &v,
	            "reading", PGN_NONE) == PGN_OK);
	CHECK_INT(v, 99);
	teardown();
}

/* The tables of the test database, for "nothing changed". */
#define PG_TABLES                                                              \
	"SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"

/* 'sql' damages the database through chk; opening it then says 'want'
 * (and not the migration's "already exists") and changes nothing. */
static void
damaged_says(const char *sql, const char *want)
{
	pgn_db *d = NULL;
	int64_t before = 0, after = 0;

	REQUIRE(pgn_exec(chk, sql, "damaging", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_select_i64(chk, PG_TABLES, &before, "counting", PGN_NONE) ==
	    PGN_OK);
	CHECK_INT(pgn_db_open(be_where, 0, 2000, &d), PGN_ECORRUPT);
	CHECK_CONTAINS(pgn_errmsg(d), want);
	CHECK_CONTAINS(pgn_errmsg(d), "it was damaged; pigeon changed nothing");
	CHECK(strstr(pgn_errmsg(d), "already exists") == NULL);
	pgn_db_close(d);
	REQUIRE(pgn_select_i64(chk, PG_TABLES, &after, "counting", PGN_NONE) ==
	    PGN_OK);
	CHECK_INT(after, before);
}

/*
 * A damaged pigeon_schema (emptied, then dropped) is named as the
 * damage, not migrated over; a table dropped under a current version
 * is named as missing.
 */
static void
test_a_damaged_schema_is_named_and_left_alone(void)
{
	char sql[256];
	pgn_db *d = NULL;
	int64_t v = -1;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	pgn_db_close(db);
	db = NULL;
	damaged_says("DELETE FROM pigeon_schema",
	    "has Pigeon's tables but no schema version (pigeon_schema holds no version)");
	REQUIRE(pgn_select_i64(chk, "SELECT count(*) FROM pigeon_schema", &v,
	            "reading", PGN_NONE) == PGN_OK);
	CHECK_INT(v, 0);
	damaged_says("DROP TABLE pigeon_schema",
	    "has Pigeon's tables but no schema version (the table pigeon_schema is missing)");
	/* A version in place, a table gone: named by what fails. */
	REQUIRE(pgn_exec(chk,
	            "CREATE TABLE pigeon_schema (id integer PRIMARY KEY, "
	            "version integer NOT NULL)",
	            "restoring", PGN_NONE) == PGN_OK);
	(void)snprintf(sql, sizeof(sql),
	    "INSERT INTO pigeon_schema VALUES (1, %d)",
	    pgn_pg_schema_version());
	REQUIRE(pgn_exec(chk, sql, "restoring", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_exec(chk, "DROP TABLE agent CASCADE", "dropping",
	            PGN_NONE) == PGN_OK);
	REQUIRE(pgn_db_open(be_where, 0, 2000, &d) == PGN_OK);
	REQUIRE(pgn_db_set_scope(d, "/tmp/l4") == PGN_OK);
	CHECK_INT(pgn_agent_add(d, "bob"), PGN_ECORRUPT);
	CHECK_CONTAINS(pgn_errmsg(d),
	    "a table of Pigeon's is missing: the database was damaged");
	pgn_db_close(d);
	teardown();
}

/*
 * A commit answered FATAL (the server ending the session as it
 * commits) is asked about on a new connection, never taken for a plain
 * refusal: a backend may be terminated right after its commit record,
 * and then what the caller claimed was delivered (decision 0131). Here
 * a deferred trigger ends its own backend inside the COMMIT, before the
 * commit record: the resolution finds the transaction aborted, nothing
 * is stored, and the handle works on its new connection.
 */
static void
test_a_commit_answered_fatal_is_resolved_on_a_new_connection(void)
{
	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(
	    pgn_exec(chk,
	        "CREATE FUNCTION t_die() RETURNS trigger LANGUAGE plpgsql "
	        "AS $$ BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); "
	        "RETURN NULL; END $$",
	        "creating", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_exec(chk,
	            "CREATE CONSTRAINT TRIGGER t_die AFTER INSERT ON message "
	            "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW "
	            "EXECUTE FUNCTION t_die()",
	            "creating", PGN_NONE) == PGN_OK);
	CHECK_INT(send1(db, "alice", "bob", "dies at commit"), PGN_EDB);
	CHECK_CONTAINS(pgn_errmsg(db), "the server did not commit it");
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
	REQUIRE(pgn_exec(chk, "DROP TRIGGER t_die ON message", "dropping",
	            PGN_NONE) == PGN_OK);
	CHECK_INT(send1(db, "alice", "bob", "after it"), PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
	teardown();
}

static void
test_wait_is_woken_by_a_send_from_another_process(void)
{
	struct pgn_wait w;
	struct pgn_msgs m;
	pid_t pid;
	int st;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		pgn_db *d = NULL;

		nap(300);
		if (pgn_db_open(be_where, 0, 5000, &d) != PGN_OK ||
		    send1(d, "alice", "bob", "wake up") != PGN_OK)
			_exit(1);
		pgn_db_close(d);
		_exit(0);
	}
	memset(&w, 0, sizeof(w));
	w.claim.agent = "bob";
	w.claim.route = "cli";
	w.timeout_ms = 20000;
	CHECK_INT(pgn_wait(db, &w, &m), PGN_OK);
	CHECK_INT(m.n, 1);
	if (m.n == 1)
		CHECK_STR(m.v[0].body, "wake up");
	pgn_msgs_release(&m);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0);
	CHECK_INT(count("SELECT count(*) FROM delivery"), 1);
	teardown();
}

/* A read's commit is not waited for, but it is sent: no transaction
 * stays open on the server (its snapshot and locks). */
static void
test_a_read_leaves_no_transaction_open(void)
{
	struct pgn_peek p;
	int64_t open = -1;
	int i;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	REQUIRE(pgn_turn_peek(db, "claude:nobody", &p) == PGN_OK);
	for (i = 0; i < 200; i++) {
		open = count("SELECT count(*) FROM pg_stat_activity "
		             "WHERE datname = current_database() "
		             "AND state LIKE 'idle in transaction%'");
		if (open == 0)
			break;
		nap(10);
	}
	CHECK_INT(open, 0);
	teardown();
}

/* Errors a transaction's function ignores: the server rolled it back,
 * and its COMMIT, answered ROLLBACK, is no commit. */
static pgn_status
ignores_its_errors(pgn_db *d, void *arg)
{
	int64_t n;
	int bad = 0;

	(void)arg;
	bad += pgn_exec(d, SQL_W_ADD, "the first write", PGN_T("w-1")) != 0;
	bad += pgn_exec(d, SQL_W_ADD, "the failing write", PGN_T("w-1")) != 0;
	bad += pgn_select_i64(d, SQL_W_COUNT, &n, "a read", PGN_NONE) != 0;
	CHECK(bad > 0); /* the read, at least, saw the failed write */
	return PGN_OK;
}

static void
test_a_transaction_the_server_rolled_back_is_not_committed(void)
{
	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	CHECK_INT(pgn_tx(db, ignores_its_errors, NULL), PGN_EDB);
	CHECK_CONTAINS(pgn_errmsg(db), "rolled the transaction back");
	CHECK_INT(count(SQL_W_COUNT), 0);
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_OK);
	teardown();
}

/* pigeon watch's notifier: the socket wakes for a send from another
 * connection, and not for the watch's own reads. */
static int
readable(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN) != 0;
}

static void
test_the_watch_notifier_wakes_for_a_send_and_not_for_reads(void)
{
	struct pgn_notify *n = NULL;
	struct pgn_watch w;
	int fd;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_notify_open(db, &n) == PGN_OK);
	REQUIRE(pgn_watch_read(db, 10, &w) == PGN_OK);
	pgn_watch_release(&w);
	fd = pgn_notify_fd(n);
	CHECK(fd >= 0);
	CHECK(!readable(fd, 300));
	REQUIRE(send1(chk, "alice", "bob", "for the watch") == PGN_OK);
	CHECK(readable(fd, 5000));
	pgn_notify_drain(n);
	REQUIRE(pgn_watch_read(db, 10, &w) == PGN_OK);
	pgn_watch_release(&w);
	CHECK(!readable(pgn_notify_fd(n), 300));
	pgn_notify_close(n);
	teardown();
}

/*
 * A handle whose session the server ended between transactions opens a
 * new one for the next (decision 0245): pigeon web and watch hold one
 * handle for their life. The transaction that meets the dead session may
 * fail; the next works, and the notifier listens again on the new one.
 */
static void
test_a_handle_whose_session_was_ended_connects_again(void)
{
	struct pgn_notify *n = NULL;
	struct pgn_watch w;
	int fd;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_notify_open(db, &n) == PGN_OK);
	REQUIRE(pgn_exec(chk,
	            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
	            "WHERE datname = current_database() "
	            "AND pid <> pg_backend_pid()",
	            "ending the other sessions", PGN_NONE) == PGN_OK);
	if (pgn_watch_read(db, 10, &w) == PGN_OK)
		pgn_watch_release(&w);
	REQUIRE(pgn_watch_read(db, 10, &w) == PGN_OK);
	pgn_watch_release(&w);
	CHECK_INT(send1(db, "alice", "bob", "on the new session"), PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
	fd = pgn_notify_fd(n);
	CHECK(fd >= 0);
	CHECK(!readable(fd, 300));
	REQUIRE(send1(chk, "alice", "bob", "for the new listener") == PGN_OK);
	CHECK(readable(pgn_notify_fd(n), 5000));
	pgn_notify_close(n);
	teardown();
}

static void
test_doctor_reports_the_server_and_schema(void)
{
	struct pgn_health h;

	if (!be_have_pg())
		return;
	be_on_pg = 1;
	setup();
	REQUIRE(pgn_db_health(db, &h) == PGN_OK);
	CHECK_INT(h.schema_version, pgn_pg_schema_version());
	CHECK(h.server != NULL);
	if (h.server != NULL) {
		CHECK_CONTAINS(h.server, "PostgreSQL ");
		CHECK_CONTAINS(h.server, be_pg_db);
	}
	CHECK_STR(pgn_db_backend(db), "postgresql");
	pgn_health_release(&h);
	teardown();
}

static void
test_a_postgres_string_without_the_backend_says_so(void)
{
	pgn_db *d = NULL;

	if (pgn_pg_available()) {
		CHECK(pgn_db_is_postgres("postgres://h/db"));
		CHECK(pgn_db_is_postgres("postgresql://h/db"));
		CHECK(pgn_db_is_postgres("host=/tmp dbname=x"));
		CHECK(pgn_db_is_postgres("service=team"));
		CHECK(!pgn_db_is_postgres("/tmp/pigeon.db"));
		CHECK(!pgn_db_is_postgres("./host=x"));
		CHECK(pgn_db_is_postgres("  HOST=/tmp dbname=x"));
		CHECK(pgn_db_is_postgres("application_name = x host=/tmp"));
		CHECK(pgn_db_is_postgres("\tPASSWORD=x"));
		CHECK(!pgn_db_is_postgres("=x"));
		CHECK(!pgn_db_is_postgres("  "));
		return;
	}
	CHECK_INT(pgn_db_open("postgres://h/db", 0, 1000, &d), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(d), "built without PostgreSQL");
	pgn_db_close(d);
}

/* A string libpq would read, in capitals or after blanks, is taken for
 * PostgreSQL's (refused: its keywords are lower case), never shown raw as
 * an SQLite file's path. */
static void
test_a_string_in_capitals_or_after_blanks_is_not_shown_as_a_path(void)
{
	static const char *const s[] = {
	    "HOST=/nonexistent SSLPASSWORD=sekrit-4711",
	    "  host=/nonexistent sslpassword=sekrit-4711",
	    "\tPassword = sekrit-4711 host=/nonexistent",
	};
	pgn_db *d;
	size_t i;

	for (i = 0; i < H_COUNT(s); i++) {
		d = NULL;
		CHECK(pgn_db_open(s[i], 0, 1000, &d) != PGN_OK);
		CHECK(strstr(pgn_errmsg(d), "sekrit-4711") == NULL);
		pgn_db_close(d);
	}
}

static const struct h_test tests[] = {
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
    H_TEST(test_a_password_in_the_database_string_is_refused),
    H_TEST(test_every_keyword_libpq_marks_secret_is_refused_and_never_shown),
    H_TEST(test_a_string_libpq_refuses_is_not_echoed),
    H_TEST(test_the_database_is_shown_by_host_port_dbname_and_user),
    H_TEST(test_an_unreachable_server_names_host_and_port),
    H_TEST(test_a_newer_schema_is_refused_and_left_alone),
    H_TEST(test_a_damaged_schema_is_named_and_left_alone),
    H_TEST(test_a_commit_answered_fatal_is_resolved_on_a_new_connection),
    H_TEST(test_wait_is_woken_by_a_send_from_another_process),
    H_TEST(test_a_read_leaves_no_transaction_open),
    H_TEST(test_a_transaction_the_server_rolled_back_is_not_committed),
    H_TEST(test_the_watch_notifier_wakes_for_a_send_and_not_for_reads),
    H_TEST(test_a_handle_whose_session_was_ended_connects_again),
    H_TEST(test_doctor_reports_the_server_and_schema),
    H_TEST(test_a_postgres_string_without_the_backend_says_so),
    H_TEST(test_a_string_in_capitals_or_after_blanks_is_not_shown_as_a_path),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
