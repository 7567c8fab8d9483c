/*
 * Unit tests of what keeps a hook run cheap: the per-connection
 * statement cache, the WAL lifecycle (-wal and -shm kept; a writer's
 * first transaction checkpoints a WAL others left past its bound, hooks
 * only append; a close checkpoints only a WAL past its bound) and the
 * read-only answer of pgn_turn_claim to a prompt that finds no mail.
 * No timings: the benchmark (bench/) measures time; these check
 * behaviour and files.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "pgn_int.h"
#include "sqlite.h"
#include "store_int.h"
#include "pigeon/hook.h"
#include "claim.h"

#define SCOPE   "/src/fastpath"
#define SESSION "claude:fp-1"

static long long
file_size(const char *name)
{
	char path[PATH_MAX];
	struct stat sb;

	H_PATH(path, name);
	if (stat(path, &sb) != 0)
		return -1;
	return (long long)sb.st_size;
}

static pgn_db *
open_scoped(void)
{
	pgn_db *db = h_open();

	REQUIRE(pgn_db_set_scope(db, SCOPE) == PGN_OK);
	return db;
}

/* Whether the last turn() was answered by the peek alone. */
static int fast;

/*
 * A prompt as the hook's turn runs it: the peek first; with nothing but
 * mail to say ('only_mail') and a quiet session, no write at all.
 */
static pgn_status
turn(pgn_db *db, const char *session, const char *key, int only_mail,
    struct pgn_turn_out *out)
{
	struct pgn_turn t;
	struct pgn_peek p;
	pgn_status st;

	memset(out, 0, sizeof(*out));
	fast = 0;
	st = pgn_turn_peek(db, session, &p);
	if (st != PGN_OK)
		return st;
	if (only_mail && pgn_turn_quiet(&p, pgn_now_ms())) {
		fast = 1;
		memcpy(out->agent, p.agent, sizeof(out->agent));
		return PGN_OK;
	}
	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = session;
	t.agent = "bob";
	t.turn = key;
	t.route = "prompt";
	return pgn_turn_claim(db, &t, out);
}

static void
queue_for_bob(pgn_db *db, const char *body)
{
	struct pgn_send rq;
	struct pgn_sent sent[1];
	const char *to = "bob";
	size_t n;

	memset(&rq, 0, sizeof(rq));
	rq.from = "alice";
	rq.to = &to;
	rq.nto = 1;
	rq.body = body;
	rq.body_len = strlen(body);
	REQUIRE(pgn_send(db, &rq, sent, 1, &n) == PGN_OK);
}

/* A database where SESSION is bound to bob (by a first prompt). */
static void
bind_bob(void)
{
	struct pgn_turn_out out;
	pgn_db *db = open_scoped();

	REQUIRE(turn(db, SESSION, "UserPromptSubmit:t1", 0, &out) == PGN_OK);
	CHECK(out.bound);
	CHECK(!fast);
	pgn_msgs_release(&out.msgs);
	pgn_db_close(db);
}

static char *
last_turn(void)
{
	sqlite3 *raw = h_raw();
	sqlite3_stmt *st = NULL;
	char *s = NULL;

	if (sqlite3_prepare_v2(raw,
	        "SELECT last_turn FROM session WHERE "
	        "key = '" SESSION "'",
	        -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		s = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(raw);
	REQUIRE(s != NULL);
	return s;
}

/* ---- statement cache ------------------------------------------------ */

static const char SQL_ECHO[] = "SELECT ?1";

static void
test_prepare_reuses_a_finished_statement(void)
{
	pgn_stmt *a = NULL, *b = NULL;
	pgn_db *db = h_open();

	REQUIRE(pgn_prepare(db, SQL_ECHO, &a) == PGN_OK);
	pgn_finish(db, a);
	REQUIRE(pgn_prepare(db, SQL_ECHO, &b) == PGN_OK);
	CHECK(a == b);
	pgn_finish(db, b);
	pgn_db_close(db);
}

static void
test_prepare_while_in_use_gives_a_second_statement(void)
{
	pgn_stmt *a = NULL, *b = NULL, *c = NULL;
	pgn_db *db = h_open();

	REQUIRE(pgn_prepare(db, SQL_ECHO, &a) == PGN_OK);
	REQUIRE(pgn_prepare(db, SQL_ECHO, &b) == PGN_OK);
	CHECK(a != b);
	CHECK_INT(pgn_bind(db, a, PGN_I(1)), PGN_OK);
	CHECK_INT(pgn_bind(db, b, PGN_I(2)), PGN_OK);
	CHECK_INT(pgn_step_row(db, a, "stepping"), PGN_OK);
	CHECK_INT(pgn_step_row(db, b, "stepping"), PGN_OK);
	CHECK_INT((int)pgn_col_i64(a, 0), 1);
	CHECK_INT((int)pgn_col_i64(b, 0), 2);
	pgn_finish(db, b);
	pgn_finish(db, a);
	REQUIRE(pgn_prepare(db, SQL_ECHO, &c) == PGN_OK);
	CHECK(c == a || c == b);
	pgn_finish(db, c);
	pgn_db_close(db);
}

static void
test_finish_resets_and_clears_bindings(void)
{
	pgn_stmt *st = NULL;
	size_t len;
	pgn_db *db = h_open();

	REQUIRE(pgn_prepare(db, SQL_ECHO, &st) == PGN_OK);
	CHECK_INT(pgn_bind(db, st, PGN_I(42)), PGN_OK);
	CHECK_INT(pgn_step_row(db, st, "stepping"), PGN_OK);
	CHECK_INT((int)pgn_col_i64(st, 0), 42);
	pgn_finish(db, st);
	REQUIRE(pgn_prepare(db, SQL_ECHO, &st) == PGN_OK);
	CHECK_INT(pgn_step_row(db, st, "stepping"), PGN_OK);
	CHECK(pgn_col_bytes(st, 0, &len) == NULL);
	pgn_finish(db, st);
	pgn_finish(db, NULL);
	pgn_db_close(db);
}

static void
test_more_statements_than_the_cache_holds(void)
{
	static const char *const sql[] = {
	    "SELECT 1",
	    "SELECT 2",
	    "SELECT 3",
	    "SELECT 4",
	    "SELECT 5",
	    "SELECT 6",
	    "SELECT 7",
	    "SELECT 8",
	    "SELECT 9",
	    "SELECT 10",
	    "SELECT 11",
	    "SELECT 12",
	    "SELECT 13",
	    "SELECT 14",
	    "SELECT 15",
	    "SELECT 16",
	    "SELECT 17",
	    "SELECT 18",
	    "SELECT 19",
	    "SELECT 20",
	    "SELECT 21",
	    "SELECT 22",
	    "SELECT 23",
	    "SELECT 24",
	    "SELECT 25",
	    "SELECT 26",
	    "SELECT 27",
	    "SELECT 28",
	    "SELECT 29",
	    "SELECT 30",
	    "SELECT 31",
	    "SELECT 32",
	    "SELECT 33",
	    "SELECT 34",
	    "SELECT 35",
	    "SELECT 36",
	    "SELECT 37",
	    "SELECT 38",
	};
	pgn_stmt *st[sizeof(sql) / sizeof(sql[0])];
	size_t i, n = sizeof(sql) / sizeof(sql[0]);
	pgn_db *db = h_open();

	CHECK(n > PGN_STMT_CACHE);
	/* All held at once: the ones past the cache are one-offs. */
	for (i = 0; i < n; i++) {
		REQUIRE(pgn_prepare(db, sql[i], &st[i]) == PGN_OK);
		CHECK_INT(pgn_step_row(db, st[i], "stepping"), PGN_OK);
		CHECK_INT((int)pgn_col_i64(st[i], 0), (int)i + 1);
	}
	for (i = 0; i < n; i++)
		pgn_finish(db, st[i]);
	/* Cached ones come back; the rest still work. */
	for (i = 0; i < n; i++) {
		REQUIRE(pgn_prepare(db, sql[i], &st[i]) == PGN_OK);
		CHECK_INT(pgn_step_row(db, st[i], "stepping"), PGN_OK);
		CHECK_INT((int)pgn_col_i64(st[i], 0), (int)i + 1);
		pgn_finish(db, st[i]);
	}
	pgn_db_close(db); /* LSan: nothing leaks */
}

/* ---- WAL lifecycle --------------------------------------------------- */

/* Frames in the WAL as 'db' sees it (a PASSIVE checkpoint reports it). */
static int
wal_frames(pgn_db *db)
{
	int log = -1, ckpt = -1;

	CHECK_INT(sqlite3_wal_checkpoint_v2(pgn_sqlite_conn(db), NULL,
	              SQLITE_CHECKPOINT_PASSIVE, &log, &ckpt),
	    SQLITE_OK);
	return log;
}

static void
test_close_keeps_wal_and_shm(void)
{
	sqlite3 *raw;
	pgn_db *db = open_scoped();

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	queue_for_bob(db, "first");
	pgn_db_close(db);
	/* Not deleted, not checkpointed: left for the next writer. */
	CHECK(file_size("pigeon.db-wal") > 0);
	CHECK(file_size("pigeon.db-shm") > 0);
	db = open_scoped();
	queue_for_bob(db, "second");
	pgn_db_close(db);
	raw = h_raw();
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE body IN "
	              "('first', 'second')"),
	    2);
	sqlite3_close(raw);
}

static void
test_close_checkpoints_a_wal_past_its_bound(void)
{
	static char body[PGN_MAX_BODY + 1];
	struct pgn_send rq;
	struct pgn_sent sent[8];
	const char *to[8] = {"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"};
	sqlite3 *raw;
	size_t i, n;
	pgn_db *db = open_scoped();

	for (i = 0; i < 8; i++)
		REQUIRE(pgn_agent_add(db, to[i]) == PGN_OK);
	memset(body, 'x', PGN_MAX_BODY);
	memset(&rq, 0, sizeof(rq));
	rq.from = "alice";
	rq.to = to;
	rq.nto = 8;
	rq.body = body;
	rq.body_len = PGN_MAX_BODY;
	for (i = 0; i < 20; i++)
		REQUIRE(pgn_send(db, &rq, sent, 8, &n) == PGN_OK);
	CHECK(file_size("pigeon.db-wal") > PGN_WAL_CLOSE_CKPT);
	pgn_db_close(db);
	/* Checkpointed by the last close and cut to zero, still there. */
	CHECK_INT(file_size("pigeon.db-wal"), 0);
	CHECK(file_size("pigeon.db-shm") > 0);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM message"), 160);
	sqlite3_close(raw);
}

/* Fill the WAL from a hook-like connection, as a prompt's claim does. */
static int
leave_frames(int sends)
{
	char path[PATH_MAX];
	sqlite3 *raw;
	pgn_db *db;
	int i, frames;

	H_PATH(path, "pigeon.db");
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, SCOPE) == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	pgn_db_close(db);
	/*
	 * Only what the hook-like writes leave: the database's creation
	 * (every migration's pages, more with each schema version) is
	 * checkpointed first.
	 */
	raw = h_raw();
	REQUIRE(H_EXEC(raw, "PRAGMA wal_checkpoint(TRUNCATE)"));
	sqlite3_close(raw);
	REQUIRE(pgn_db_open(path, PGN_OPEN_LATENCY, 0, &db) == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, SCOPE) == PGN_OK);
	/*
	 * sends < 0: until the WAL is just past PGN_WAL_CKPT_FIRST, and so
	 * below PGN_WAL_CLOSE_CKPT, which the close below would checkpoint
	 * (how many sends that takes grows with what each one writes).
	 */
	for (i = 0;
	     sends < 0 ? file_size("pigeon.db-wal") <= PGN_WAL_CKPT_FIRST :
	                 i < sends;
	     i++)
		queue_for_bob(db, "left in the WAL");
	frames = wal_frames(db);
	pgn_db_close(db);
	return frames;
}

static void
test_first_write_checkpoints_what_others_left(void)
{
	int left = leave_frames(-1);
	pgn_db *db;

	CHECK(file_size("pigeon.db-wal") > PGN_WAL_CKPT_FIRST);
	db = open_scoped();
	CHECK(left > 10);
	queue_for_bob(db, "one more");
	/* The WAL restarted: it holds this write's frames only. */
	CHECK(wal_frames(db) < 10);
	pgn_db_close(db);
}

static void
test_first_write_appends_to_a_small_wal(void)
{
	int left = leave_frames(2);
	pgn_db *db;

	CHECK(file_size("pigeon.db-wal") <= PGN_WAL_CKPT_FIRST);
	db = open_scoped();
	queue_for_bob(db, "one more");
	CHECK(wal_frames(db) > left);
	pgn_db_close(db);
}

static void
test_latency_connection_appends_without_checkpointing(void)
{
	char path[PATH_MAX];
	int left = leave_frames(-1);
	pgn_db *db = NULL;

	H_PATH(path, "pigeon.db");
	REQUIRE(pgn_db_open(path, PGN_OPEN_LATENCY, 0, &db) == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, SCOPE) == PGN_OK);
	queue_for_bob(db, "one more");
	CHECK(wal_frames(db) > left);
	pgn_db_close(db);
}

/* ---- the no-mail turn ------------------------------------------------- */

static void
test_no_mail_prompt_leaves_database_and_wal_untouched(void)
{
	char path[PATH_MAX], wal[PATH_MAX], *before, *after, *key;
	char *wbefore, *wafter;
	size_t nb, na, nwb, nwa;
	struct pgn_turn_out out;
	pgn_db *db;

	bind_bob();
	H_PATH(path, "pigeon.db");
	H_PATH(wal, "pigeon.db-wal");
	before = h_read_file(path, &nb);
	wbefore = h_read_file(wal, &nwb);
	REQUIRE(before != NULL && wbefore != NULL);
	db = open_scoped();
	db->flags |= PGN_OPEN_LATENCY;
	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t2", 1, &out), PGN_OK);
	CHECK(fast);
	CHECK(!out.bound);
	CHECK(!out.duplicate);
	CHECK_STR(out.agent, "bob");
	CHECK_INT(out.msgs.n, 0);
	pgn_db_close(db);
	/* No write transaction: database and WAL byte for byte. */
	after = h_read_file(path, &na);
	wafter = h_read_file(wal, &nwa);
	REQUIRE(after != NULL && wafter != NULL);
	CHECK(nb == na && memcmp(before, after, nb) == 0);
	CHECK(nwb == nwa && memcmp(wbefore, wafter, nwb) == 0);
	free(wbefore);
	free(wafter);
	/* Nothing injected, so the turn is not recorded. */
	key = last_turn();
	CHECK_STR(key, "UserPromptSubmit:t1");
	free(key);
	free(before);
	free(after);
}

static void
test_no_mail_prompt_with_mail_claims_and_records_the_turn(void)
{
	struct pgn_turn_out out;
	pgn_db *db;
	char *key;

	bind_bob();
	db = open_scoped();
	queue_for_bob(db, "a ping");
	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t2", 1, &out), PGN_OK);
	CHECK(!fast);
	CHECK_INT(out.msgs.n, 1);
	CHECK_STR(out.msgs.n == 1 ? out.msgs.v[0].body : "", "a ping");
	pgn_msgs_release(&out.msgs);
	/* The same turn again: a duplicate, as before. */
	queue_for_bob(db, "another");
	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t2", 1, &out), PGN_OK);
	CHECK(out.duplicate);
	CHECK_INT(out.msgs.n, 0);
	pgn_db_close(db);
	key = last_turn();
	CHECK_STR(key, "UserPromptSubmit:t2");
	free(key);
}

static void
test_no_mail_prompt_refreshes_a_stale_last_seen(void)
{
	struct pgn_turn_out out;
	sqlite3 *raw;
	pgn_db *db;
	long long now_s;

	bind_bob();
	raw = h_raw();
	H_EXEC(raw, "UPDATE session SET last_seen_ms = last_seen_ms - 120000");
	H_EXEC(raw, "UPDATE agent SET last_seen_ms = last_seen_ms - 120000");
	sqlite3_close(raw);
	db = open_scoped();
	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t2", 1, &out), PGN_OK);
	CHECK(!fast);
	CHECK_INT(out.msgs.n, 0);
	/* Once refreshed, the next prompt is answered without a write. */
	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t3", 1, &out), PGN_OK);
	CHECK(fast);
	pgn_db_close(db);
	now_s = (long long)(pgn_now_ms() / 1000);
	raw = h_raw();
	CHECK(H_INT(raw, "SELECT last_seen_ms / 1000 FROM session") >=
	    now_s - 30);
	CHECK(H_INT(raw,
	          "SELECT last_seen_ms / 1000 FROM agent WHERE "
	          "name = 'bob'") >= now_s - 30);
	sqlite3_close(raw);
}

static void
test_no_mail_prompt_of_a_new_session_binds_it(void)
{
	struct pgn_turn_out out;
	pgn_db *db = open_scoped();

	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t1", 1, &out), PGN_OK);
	CHECK(!fast);
	CHECK(out.bound);
	CHECK_STR(out.agent, "bob");
	pgn_db_close(db);
}

/*
 * A session is bound once: a payload naming another scope (a submodule,
 * a nested repository) finds it all the same, with its agent and scope.
 */
static void
test_no_mail_prompt_in_another_scope_finds_the_bound_session(void)
{
	struct pgn_turn_out out;
	struct pgn_peek p;
	pgn_db *db;

	bind_bob();
	db = h_open();
	REQUIRE(pgn_db_set_scope(db, "/src/elsewhere") == PGN_OK);
	CHECK_INT(pgn_turn_peek(db, SESSION, &p), PGN_OK);
	CHECK(p.bound);
	CHECK_STR(p.agent, "bob");
	CHECK_STR(p.scope, SCOPE);
	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t2", 1, &out), PGN_OK);
	CHECK(fast);
	CHECK_STR(out.agent, "bob");
	pgn_msgs_release(&out.msgs);
	pgn_db_close(db);
}

static void
test_without_only_mail_every_prompt_records_its_turn(void)
{
	struct pgn_turn_out out;
	pgn_db *db;
	char *key;

	bind_bob();
	db = open_scoped();
	CHECK_INT(turn(db, SESSION, "UserPromptSubmit:t2", 0, &out), PGN_OK);
	CHECK(!fast);
	CHECK_INT(out.msgs.n, 0);
	pgn_db_close(db);
	key = last_turn();
	CHECK_STR(key, "UserPromptSubmit:t2");
	free(key);
}

/* The peek reads the queue through the partial index, never a scan. */
static void
test_turn_peek_uses_the_partial_index(void)
{
	sqlite3 *raw;
	pgn_db *db = open_scoped();

	pgn_db_close(db);
	raw = h_raw();
	H_QUEUE_PLAN(raw, pgn_sql_turn_peek, "SCAN s", "turn peek");
	sqlite3_close(raw);
}

static const struct h_test tests[] = {
    H_TEST(test_prepare_reuses_a_finished_statement),
    H_TEST(test_prepare_while_in_use_gives_a_second_statement),
    H_TEST(test_finish_resets_and_clears_bindings),
    H_TEST(test_more_statements_than_the_cache_holds),
    H_TEST(test_close_keeps_wal_and_shm),
    H_TEST(test_close_checkpoints_a_wal_past_its_bound),
    H_TEST(test_first_write_checkpoints_what_others_left),
    H_TEST(test_first_write_appends_to_a_small_wal),
    H_TEST(test_latency_connection_appends_without_checkpointing),
    H_TEST(test_no_mail_prompt_leaves_database_and_wal_untouched),
    H_TEST(test_no_mail_prompt_with_mail_claims_and_records_the_turn),
    H_TEST(test_no_mail_prompt_refreshes_a_stale_last_seen),
    H_TEST(test_no_mail_prompt_of_a_new_session_binds_it),
    H_TEST(test_no_mail_prompt_in_another_scope_finds_the_bound_session),
    H_TEST(test_without_only_mail_every_prompt_records_its_turn),
    H_TEST(test_turn_peek_uses_the_partial_index),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
