/*
 * Full-text search (pigeon search, decision 0170) on every backend: all
 * words required, newest first, the filters and the keyset page, the
 * scope, text that is no syntax, the bounds, the index kept in step
 * with the messages in their transactions (checked through a second
 * connection), and the migration that fills it for a database made
 * before; a page's rows and their doorbell state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "schema_int.h"
#include "store_int.h"
#include "pigeon/search.h"

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */

static void
setup(void)
{
	be_open_pair("pgn_search", &db, &chk);
}

static void
teardown(void)
{
	(void)be_close_pair(&db, &chk);
}

static pgn_status
send_to(const char *from, const char *to, const char *body)
{
	return be_send_one(db, from, to, body, PGN_PRIORITY_NORMAL);
}

static void
agents(void)
{
	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "carol") == PGN_OK);
}

/* The search's ids, newest first, as "3 1", or the error's status. */
static pgn_status
found(const char *text, const char *agent, int64_t before, size_t limit,
    char *ids, size_t size)
{
	struct pgn_search q;
	struct pgn_hits h;
	pgn_status rc;
	size_t i, len = 0;

	memset(&q, 0, sizeof(q));
	q.text = text;
	q.agent = agent;
	q.before_id = before;
	q.limit = limit;
	ids[0] = '\0';
	rc = pgn_search(db, &q, &h);
	for (i = 0; rc == PGN_OK && i < h.n && len + 24 < size; i++)
		len += (size_t)snprintf(ids + len, size - len, "%s%lld",
		    i ? " " : "", (long long)h.v[i].id);
	pgn_hits_release(&h);
	return rc;
}

/*
 * Through the second connection: the index holds exactly the messages
 * (SQLite's FTS5 check against its content table), and how many
 * messages hold 'word' by the backend's own full-text test.
 */
static void
index_in_step(void)
{
	if (!be_on_pg)
		CHECK_INT(pgn_exec(chk,
		              "INSERT INTO message_fts(message_fts, rank) "
		              "VALUES ('integrity-check', 1)",
		              "checking the index", PGN_NONE),
		    PGN_OK);
}

static int64_t
matching(const char *word)
{
	char sql[256];

	(void)snprintf(sql, sizeof(sql),
	    be_on_pg ? "SELECT count(*) FROM message WHERE to_tsvector("
	               "'simple', body) @@ plainto_tsquery('simple', '%s')" :
	               "SELECT count(*) FROM message_fts WHERE message_fts "
	               "MATCH '\"%s\"'",
	    word);
	return be_count(chk, sql);
}

static void
test_every_word_is_required_and_the_newest_comes_first(void)
{
	char ids[256];

	agents();
	REQUIRE(send_to("alice", "bob", "deploy the api tonight") == PGN_OK);
	REQUIRE(send_to("bob", "alice", "the API is deployed") == PGN_OK);
	REQUIRE(send_to("carol", "bob", "lunch?") == PGN_OK);
	REQUIRE(send_to("alice", "carol", "Api, docs and tests") == PGN_OK);
	CHECK_INT(found("api", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "4 2 1");
	CHECK_INT(found("  the\tapi ", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "2 1");
	CHECK_INT(found("api lunch", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "");
	CHECK_INT(found("deployed", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "2"); /* words, not stems */
	CHECK_INT(matching("api"), 3);
	index_in_step();
}

static void
test_a_hit_carries_its_message(void)
{
	struct pgn_search q;
	struct pgn_hits h;
	struct pgn_msgs m;

	agents();
	REQUIRE(send_to("alice", "bob", "first words") == PGN_OK);
	REQUIRE(pgn_inbox(db, "bob", &m) == PGN_OK);
	pgn_msgs_release(&m);
	{
		struct pgn_send req;
		struct pgn_sent sent[1];
		const char *to = "alice";
		size_t n;

		memset(&req, 0, sizeof(req));
		req.from = "bob";
		req.to = &to;
		req.nto = 1;
		req.body = "second words";
		req.body_len = strlen(req.body);
		req.reply_to = 1;
		REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);
	}
	memset(&q, 0, sizeof(q));
	q.text = "WORDS";
	REQUIRE(pgn_search(db, &q, &h) == PGN_OK);
	CHECK_INT(h.n, 2);
	if (h.n == 2) {
		CHECK_INT(h.v[0].id, 2);
		CHECK_INT(h.v[0].reply_to, 1);
		CHECK_INT(h.v[0].thread, 1);
		CHECK_STR(h.v[0].sender, "bob");
		CHECK_STR(h.v[0].recipient, "alice");
		CHECK_STR(h.v[0].body, "second words");
		CHECK_INT(h.v[0].delivered_ms, 0);
		CHECK(h.v[0].created_ms > 0);
		CHECK_INT(h.v[1].thread, 1);
		CHECK_INT(h.v[1].reply_to, 0);
	}
	pgn_hits_release(&h);
}

static void
test_agent_since_limit_and_the_page_below_an_id(void)
{
	struct pgn_search q;
	struct pgn_hits h;
	char ids[256];

	agents();
	REQUIRE(send_to("alice", "bob", "note one") == PGN_OK);
	REQUIRE(send_to("bob", "carol", "note two") == PGN_OK);
	REQUIRE(send_to("carol", "alice", "note three") == PGN_OK);
	REQUIRE(send_to("carol", "bob", "note four") == PGN_OK);
	/* --agent: sent by it or to it */
	CHECK_INT(found("note", "alice", 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "3 1");
	CHECK_INT(found("note", "carol", 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "4 3 2");
	CHECK_INT(found("note", "nobody", 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "");
	/* the limit, then the page below the last id shown */
	CHECK_INT(found("note", NULL, 0, 2, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "4 3");
	CHECK_INT(found("note", NULL, 3, 2, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "2 1");
	CHECK_INT(found("note", NULL, 1, 2, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "");
	/* --since: created at or after */
	REQUIRE(
	    pgn_exec(chk, "UPDATE message SET created_ms = 1000 WHERE id < 3",
	        "aging", PGN_NONE) == PGN_OK);
	memset(&q, 0, sizeof(q));
	q.text = "note";
	q.since_ms = 2000;
	REQUIRE(pgn_search(db, &q, &h) == PGN_OK);
	CHECK_INT(h.n, 2);
	pgn_hits_release(&h);
	q.since_ms = 1000;
	REQUIRE(pgn_search(db, &q, &h) == PGN_OK);
	CHECK_INT(h.n, 4);
	pgn_hits_release(&h);
}

static void
test_another_scope_is_not_searched(void)
{
	char ids[256];

	agents();
	REQUIRE(send_to("alice", "bob", "global secret") == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, "/elsewhere") == PGN_OK);
	CHECK_INT(found("secret", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, ""); /* a scope nothing was sent in */
	REQUIRE(pgn_agent_add(db, "dave") == PGN_OK);
	REQUIRE(send_to("alice", "dave", "local secret") == PGN_OK);
	CHECK_INT(found("secret", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "2");
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	CHECK_INT(found("secret", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "1");
}

/* The query languages' operators are words like any other. */
static void
test_quotes_and_operators_are_plain_words(void)
{
	static const char *const texts[] = {"\"", "\"a", "a\"b\"", "NOT",
	    "a OR", "NEAR(a b)", "body:x", "x*", "^y", "(", "-z", "a AND", "'",
	    "\\", "!", "&", "|", ":*", "\xc3\xa9t\xc3\xa9", "<script>"};
	char ids[256];
	size_t i;

	agents();
	REQUIRE(send_to("alice", "bob",
	            "x y z \"quoted\" NOT this OR that AND near") == PGN_OK);
	for (i = 0; i < H_COUNT(texts); i++)
		CHECK_INT(found(texts[i], NULL, 0, 0, ids, sizeof(ids)),
		    PGN_OK);
	CHECK_INT(found("\"quoted\"", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "1");
	CHECK_INT(found("not OR and", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "1");
	CHECK_INT(found("x, (y)", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "1");
}

static void
test_the_bounds_of_a_search(void)
{
	char text[PGN_MAX_SEARCH_TEXT + 2], ids[64];
	struct pgn_search q;
	struct pgn_hits h;
	size_t i;

	agents();
	/* PGN_MAX_SEARCH_TEXT bytes: accepted; one more refused */
	memset(text, 'a', PGN_MAX_SEARCH_TEXT);
	text[PGN_MAX_SEARCH_TEXT] = '\0';
	CHECK_INT(found(text, NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	text[PGN_MAX_SEARCH_TEXT] = 'a';
	text[PGN_MAX_SEARCH_TEXT + 1] = '\0';
	CHECK_INT(found(text, NULL, 0, 0, ids, sizeof(ids)), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "1025 bytes: at most 1024");
	/* PGN_MAX_SEARCH_TERMS words: accepted; one more refused */
	for (i = 0; i < PGN_MAX_SEARCH_TERMS; i++)
		memcpy(text + 2 * i, "w ", 3);
	CHECK_INT(found(text, NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	memcpy(text + 2 * i, "w", 2);
	CHECK_INT(found(text, NULL, 0, 0, ids, sizeof(ids)), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "33 words: at most 32");
	CHECK_INT(found(" \t\n", NULL, 0, 0, ids, sizeof(ids)), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "nothing to search for");
	CHECK_INT(found("", NULL, 0, 0, ids, sizeof(ids)), PGN_EINVAL);
	CHECK_INT(found("caf\xc3", NULL, 0, 0, ids, sizeof(ids)), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "not valid UTF-8");
	CHECK_INT(found("x", "Bad Name", 0, 0, ids, sizeof(ids)), PGN_EINVAL);
	/* the limit: PGN_MAX_LIST accepted, one more refused */
	memset(&q, 0, sizeof(q));
	q.text = "x";
	q.limit = PGN_MAX_LIST;
	CHECK_INT(pgn_search(db, &q, &h), PGN_OK);
	pgn_hits_release(&h);
	q.limit = PGN_MAX_LIST + 1;
	CHECK_INT(pgn_search(db, &q, &h), PGN_ETOOBIG);
	CHECK_CONTAINS(pgn_errmsg(db), "at most 10000");
	CHECK_INT(h.n, 0);
}

/* A refused send leaves no index entry; a fan-out indexes each row. */
static void
test_the_index_commits_and_rolls_back_with_the_messages(void)
{
	const char *const all[] = {"all"};
	struct pgn_send req;
	struct pgn_sent sent[PGN_MAX_RECIPIENTS];
	char ids[256];
	size_t n;
	int i;

	agents();
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = all;
	req.nto = 1;
	req.body = "fanned out";
	req.body_len = strlen(req.body);
	REQUIRE(pgn_send(db, &req, sent, PGN_MAX_RECIPIENTS, &n) == PGN_OK);
	CHECK_INT(n, 2);
	CHECK_INT(matching("fanned"), 2);
	index_in_step();
	/* carol's queue full (the fan-out's one, then fillers from two
	 * senders): the next fan-out to bob and carol stores nothing */
	for (i = 0; i < PGN_MAX_PENDING_FROM; i++)
		REQUIRE(send_to("bob", "carol", "filler") == PGN_OK);
	for (i = 0; i < PGN_MAX_PENDING - PGN_MAX_PENDING_FROM - 1; i++)
		REQUIRE(send_to("dave", "carol", "filler") == PGN_OK);
	req.body = "refused words";
	req.body_len = strlen(req.body);
	CHECK_INT(pgn_send(db, &req, sent, PGN_MAX_RECIPIENTS, &n), PGN_EFULL);
	CHECK_INT(matching("refused"), 0);
	CHECK_INT(found("refused", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "");
	index_in_step();
}

/* pigeon web's pages: newest first, below an id, one thread's only. */
static void
test_a_page_of_messages_walks_down_by_id_and_thread(void)
{
	struct pgn_hits h;
	struct pgn_send req;
	struct pgn_sent sent[1];
	const char *to = "alice";
	size_t n;

	agents();
	REQUIRE(send_to("alice", "bob", "one") == PGN_OK);
	REQUIRE(send_to("carol", "bob", "two") == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "bob";
	req.to = &to;
	req.nto = 1;
	req.body = "three, re one";
	req.body_len = strlen(req.body);
	req.reply_to = 1;
	req.ack_ms = PGN_ACK_MIN_MS;
	REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);
	REQUIRE(pgn_messages_page(db, 0, 0, 2, &h) == PGN_OK);
	CHECK_INT(h.n, 2);
	if (h.n == 2) {
		CHECK_INT(h.v[0].id, 3);
		CHECK_INT(h.v[0].thread, 1);
		CHECK_INT(h.v[0].ack_ms, PGN_ACK_MIN_MS);
		CHECK_INT(h.v[0].acked_ms, 0);
		CHECK_INT(h.v[1].id, 2);
	}
	pgn_hits_release(&h);
	REQUIRE(pgn_messages_page(db, 2, 0, 2, &h) == PGN_OK);
	CHECK_INT(h.n, 1);
	CHECK(h.n == 1 && h.v[0].id == 1);
	pgn_hits_release(&h);
	REQUIRE(pgn_messages_page(db, 0, 1, 0, &h) == PGN_OK);
	CHECK_INT(h.n, 2); /* thread 1: the first message and its reply */
	pgn_hits_release(&h);
	CHECK_INT(pgn_messages_page(db, 0, 0, PGN_MAX_LIST + 1, &h),
	    PGN_ETOOBIG);
	REQUIRE(pgn_db_set_scope(db, "/nowhere") == PGN_OK);
	REQUIRE(pgn_messages_page(db, 0, 0, 0, &h) == PGN_OK);
	CHECK_INT(h.n, 0);
}

/*
 * A page's rows carry the doorbell as pigeon status tells it (decision
 * 0222): when the send rang, by what, and heard or not, at the edge of
 * PGN_WAKE_HEARD_MS. The ring and the delivery are set through the
 * second connection: a real ring needs a live Claude Code session.
 */
static void
test_a_page_carries_the_doorbell_as_status_tells_it(void)
{
	struct pgn_hits h;
	int64_t now = pgn_now_ms();
	char sql[256];
	int i;

	agents();
	for (i = 0; i < 5; i++)
		REQUIRE(send_to("alice", "bob", "rung or not") == PGN_OK);
	/* 1: never rung; 2: rung a second ago, queued: heard (so far);
	 * 3: rung past the bound, still queued: unheard; 4: delivered
	 * exactly the bound after the ring: heard; 5: a ms past: unheard. */
	(void)snprintf(sql, sizeof(sql),
	    "UPDATE message SET woken_ms = %lld, woken_via = 'claude-socket' "
	    "WHERE id = 2",
	    (long long)(now - 1000));
	REQUIRE(pgn_exec(chk, sql, "ringing", PGN_NONE) == PGN_OK);
	(void)snprintf(sql, sizeof(sql),
	    "UPDATE message SET woken_ms = %lld, woken_via = 'claude-socket' "
	    "WHERE id = 3",
	    (long long)(now - PGN_WAKE_HEARD_MS - 60000));
	REQUIRE(pgn_exec(chk, sql, "ringing", PGN_NONE) == PGN_OK);
	(void)snprintf(sql, sizeof(sql),
	    "UPDATE message SET woken_ms = 1000, woken_via = 'x', "
	    "delivered_ms = 1000 + %d + (id - 4) WHERE id >= 4",
	    PGN_WAKE_HEARD_MS);
	REQUIRE(pgn_exec(chk, sql, "ringing", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_messages_page(db, 0, 0, 0, &h) == PGN_OK);
	CHECK_INT(h.n, 5);
	if (h.n == 5) {
		CHECK_INT(h.v[4].woken_ms, 0); /* id 1 */
		CHECK_STR(h.v[4].woken_via, "");
		CHECK_INT(h.v[4].unheard, 0);
		CHECK_INT(h.v[3].woken_ms, now - 1000); /* id 2 */
		CHECK_STR(h.v[3].woken_via, "claude-socket");
		CHECK_INT(h.v[3].unheard, 0);
		CHECK_INT(h.v[2].unheard, 1); /* id 3 */
		CHECK_INT(h.v[1].unheard, 0); /* id 4: at the bound */
		CHECK_INT(h.v[0].unheard, 1); /* id 5: a ms past it */
		CHECK_STR(h.v[0].woken_via, "x");
	}
	pgn_hits_release(&h);
}

/* The keys of object 'o', in order, space-separated, into 'buf'. */
static const char *
keys_of(const cJSON *o, char *buf, size_t size)
{
	const cJSON *k;
	size_t at = 0;

	buf[0] = '\0';
	for (k = o != NULL ? o->child : NULL; k != NULL && at < size;
	     k = k->next)
		at += (size_t)snprintf(buf + at, size - at, "%s%s",
		    at > 0 ? " " : "", k->string);
	return buf;
}

/* 'key' of 'o' printed, as "null", "123" or "\"text\"" (static). */
static const char *
val(const cJSON *o, const char *key)
{
	static char buf[256];
	char *t = cJSON_PrintUnformatted(cJSON_GetObjectItem(o, key));

	(void)snprintf(buf, sizeof(buf), "%s", t != NULL ? t : "(none)");
	cJSON_free(t);
	return buf;
}

/*
 * A hit's JSON (decision 0238) is the message's (pgn_msg_json: the same
 * keys in the same order, the same values) and then its states; with
 * PGN_HIT_JSON_MS its times are milliseconds. The group comes from the
 * store on both backends.
 */
static void
test_a_hit_is_the_message_json_and_its_states(void)
{
	static const char *const team[] = {"bob"};
	const char *to = "@team";
	struct pgn_send req;
	struct pgn_sent sent[1];
	struct pgn_claim cl;
	struct pgn_search q;
	struct pgn_hits h = {0};
	struct pgn_msgs m = {0};
	char k1[512], k2[512], want[64];
	cJSON *msg = NULL, *hit = NULL, *hms = NULL;
	size_t n;

	agents();
	REQUIRE(pgn_group_add(db, "team", team, 1) == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = &to;
	req.nto = 1;
	req.body = "ship the parser";
	req.body_len = strlen(req.body);
	req.ack_ms = 1800000;
	req.priority = PGN_PRIORITY_URGENT;
	REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);
	REQUIRE(pgn_inbox(db, "bob", &m) == PGN_OK);
	REQUIRE(m.n == 1);
	memset(&q, 0, sizeof(q));
	q.text = "parser";
	REQUIRE(pgn_search(db, &q, &h) == PGN_OK);
	REQUIRE(h.n == 1);
	CHECK_STR(h.v[0].group, "team");
	msg = pgn_msg_json(&m.v[0]);
	hit = pgn_hit_json(&h.v[0], 0);
	hms = pgn_hit_json(&h.v[0], PGN_HIT_JSON_MS);
	REQUIRE(msg != NULL && hit != NULL && hms != NULL);
	(void)keys_of(msg, k1, sizeof(k1));
	CHECK_STR(k1,
	    "id from to created reply_to thread ack_within_ms body priority group");
	/* The message's keys first, then the hit's states. */
	CHECK_STR(keys_of(hit, k1, sizeof(k1)),
	    "id from to created reply_to thread ack_within_ms body priority group "
	    "delivered acknowledged woken woken_via heard");
	CHECK_STR(keys_of(hms, k2, sizeof(k2)), k1);
	{
		static const char *const same[] = {"id", "from", "to",
		    "created", "reply_to", "thread", "ack_within_ms", "body",
		    "priority", "group"};
		size_t i;

		for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
			(void)snprintf(k2, sizeof(k2), "%s", val(msg, same[i]));
			CHECK_STR(val(hit, same[i]), k2);
		}
	}
	CHECK_STR(val(hit, "group"), "\"team\"");
	CHECK_STR(val(hit, "priority"), "\"urgent\"");
	CHECK_STR(val(hit, "ack_within_ms"), "1800000");
	CHECK_STR(val(hit, "delivered"), "null");
	CHECK_STR(val(hit, "woken_via"), "null");
	CHECK_STR(val(hit, "heard"), "false");
	(void)snprintf(want, sizeof(want), "%lld",
	    (long long)h.v[0].created_ms);
	CHECK_STR(val(hms, "created"), want);
	CHECK_STR(val(hms, "delivered"), "null");
	cJSON_Delete(hit);
	cJSON_Delete(hms);
	pgn_hits_release(&h);
	/* Claimed: a time, text or milliseconds. */
	memset(&cl, 0, sizeof(cl));
	cl.agent = "bob";
	cl.route = "cli";
	pgn_msgs_release(&m);
	REQUIRE(pgn_claim(db, &cl, &m) == PGN_OK);
	REQUIRE(pgn_search(db, &q, &h) == PGN_OK);
	REQUIRE(h.n == 1);
	hit = pgn_hit_json(&h.v[0], 0);
	hms = pgn_hit_json(&h.v[0], PGN_HIT_JSON_MS);
	REQUIRE(hit != NULL && hms != NULL);
	CHECK(cJSON_IsString(cJSON_GetObjectItem(hit, "delivered")));
	(void)snprintf(want, sizeof(want), "%lld",
	    (long long)h.v[0].delivered_ms);
	CHECK_STR(val(hms, "delivered"), want);
	CHECK(be_count(chk,
	          "SELECT count(*) FROM message WHERE grp = 'team' "
	          "AND delivered_ms IS NOT NULL") == 1);
	cJSON_Delete(hit);
	cJSON_Delete(hms);
	cJSON_Delete(msg);
	pgn_hits_release(&h);
	pgn_msgs_release(&m);
}

static void (*const rules[])(void) = {
    test_a_page_carries_the_doorbell_as_status_tells_it,
    test_a_hit_is_the_message_json_and_its_states,
    test_a_page_of_messages_walks_down_by_id_and_thread,
    test_every_word_is_required_and_the_newest_comes_first,
    test_a_hit_carries_its_message,
    test_agent_since_limit_and_the_page_below_an_id,
    test_another_scope_is_not_searched,
    test_quotes_and_operators_are_plain_words,
    test_the_bounds_of_a_search,
    test_the_index_commits_and_rolls_back_with_the_messages,
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

/* The FTS5 query: each word quoted, '"' doubled; the text's bounds. */
static void
test_the_fts5_query_quotes_each_word(void)
{
	struct pgn_err err;
	char *q = NULL;

	pgn_err_clear(&err);
	REQUIRE(pgn_search_query(" a\tb\"c  NOT ", &q, &err) == PGN_OK);
	CHECK_STR(q, "\"a\" \"b\"\"c\" \"NOT\"");
	free(q);
	CHECK_INT(pgn_search_query("   ", &q, &err), PGN_EINVAL);
	CHECK(q == NULL);
}

static const char seed[] =
    "INSERT INTO scope(id, root) VALUES (1, '');"
    "INSERT INTO agent(id, scope_id, name, created_ms) VALUES (1, 1, 'bob', 1);"
    "INSERT INTO message(id, scope_id, sender, recipient_id, body, created_ms) VALUES (7, 1, 'alice', 1, 'old words', 1);";

/* The old message is found; a new one is indexed beside it. */
static void
check_migrated(void)
{
	char ids[64];

	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	CHECK_INT(found("old", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK_STR(ids, "7");
	CHECK_INT(send_to("alice", "bob", "new words"), PGN_OK);
	CHECK_INT(found("new words", NULL, 0, 0, ids, sizeof(ids)), PGN_OK);
	CHECK(ids[0] != '\0' && strchr(ids, ' ') == NULL);
	CHECK_INT(matching("words"), 2);
	index_in_step();
}

static void
test_a_database_from_before_is_indexed_on_sqlite(void)
{
	be_migrate_from(0, NULL, "_search.sql", seed, &db, &chk,
	    check_migrated);
}

static void
test_a_database_from_before_is_indexed_on_postgresql(void)
{
	be_migrate_from(1, "pgn_search_old", "_search.sql", seed, &db, &chk,
	    check_migrated);
}

/*
 * Decision 0254: pgn_hit_json and pgn_msg_json parse what the one
 * writer wrote, within PGN_MAX_MSG_JSON bytes: a hit whose JSON is
 * exactly that long is an object, one byte more is NULL (as out of
 * memory); the worst real body (4096 control bytes, 6 bytes each) fits.
 */
static void
test_a_hits_json_is_bounded_at_its_edge(void)
{
	char alice[] = "alice", bob[] = "bob", none[] = "";
	struct pgn_hit h;
	struct pgn_buf b;
	size_t fixed;
	char *body;
	cJSON *o;

	memset(&h, 0, sizeof(h));
	h.id = 7;
	h.sender = alice;
	h.recipient = bob;
	h.body = none;
	h.created_ms = 1700000000000;
	pgn_buf_init(&b, 2 * PGN_MAX_MSG_JSON);
	pgn_hit_write(&b, &h, 0);
	fixed = b.len;
	pgn_buf_release(&b);
	body = malloc(PGN_MAX_MSG_JSON + 1);
	CHECK(body != NULL);
	if (body == NULL)
		return;
	memset(body, 'x', PGN_MAX_MSG_JSON - fixed);
	body[PGN_MAX_MSG_JSON - fixed] = '\0';
	h.body = body;
	o = pgn_hit_json(&h, 0);
	CHECK(o != NULL);
	CHECK(cJSON_IsString(cJSON_GetObjectItem(o, "body")) &&
	    strlen(cJSON_GetObjectItem(o, "body")->valuestring) ==
	        PGN_MAX_MSG_JSON - fixed);
	cJSON_Delete(o);
	memset(body, 'x', PGN_MAX_MSG_JSON - fixed + 1);
	body[PGN_MAX_MSG_JSON - fixed + 1] = '\0';
	CHECK(pgn_hit_json(&h, 0) == NULL);
	memset(body, '\x01', PGN_MAX_BODY);
	body[PGN_MAX_BODY] = '\0';
	o = pgn_hit_json(&h, PGN_HIT_JSON_MS);
	CHECK(o != NULL);
	cJSON_Delete(o);
	free(body);
}

static const struct h_test tests[] = {
    H_TEST(test_the_fts5_query_quotes_each_word),
    H_TEST(test_a_hits_json_is_bounded_at_its_edge),
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
    H_TEST(test_a_database_from_before_is_indexed_on_sqlite),
    H_TEST(test_a_database_from_before_is_indexed_on_postgresql),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
