/* Unit tests of mem.c, SQLite's allocator in single-threaded processes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mem.h"

static int
aligned8(const void *p)
{
	return ((uintptr_t)p & 7) == 0;
}

static void
test_mem_small_blocks_come_from_the_arena_rounded_to_their_class(void)
{
	void *a = pgn_mem_malloc(1), *b = pgn_mem_malloc(PGN_MEM_SMALL);
	void *c = pgn_mem_malloc(PGN_MEM_GRAIN + 1);

	REQUIRE(a != NULL && b != NULL && c != NULL);
	CHECK(pgn_mem_in_arena(a));
	CHECK(pgn_mem_in_arena(b));
	CHECK(pgn_mem_in_arena(c));
	CHECK(aligned8(a) && aligned8(b) && aligned8(c));
	CHECK_INT(pgn_mem_size(a), PGN_MEM_GRAIN);
	CHECK_INT(pgn_mem_size(b), PGN_MEM_SMALL);
	CHECK_INT(pgn_mem_size(c), 2 * PGN_MEM_GRAIN);
	memset(b, 0xab, PGN_MEM_SMALL); /* the whole class is usable */
	pgn_mem_free(a);
	pgn_mem_free(b);
	pgn_mem_free(c);
}

static void
test_mem_past_the_small_bound_a_block_is_mallocs(void)
{
	void *p = pgn_mem_malloc(PGN_MEM_SMALL + 1);

	REQUIRE(p != NULL);
	CHECK(!pgn_mem_in_arena(p));
	CHECK(aligned8(p));
	CHECK_INT(pgn_mem_size(p), PGN_MEM_SMALL + 8);
	memset(p, 0xcd, PGN_MEM_SMALL + 1);
	pgn_mem_free(p);
	CHECK(pgn_mem_malloc(0) == NULL);
	CHECK(pgn_mem_malloc(-1) == NULL);
	pgn_mem_free(NULL);
	CHECK_INT(pgn_mem_size(NULL), 0);
}

static void
test_mem_a_freed_block_serves_the_next_of_its_class(void)
{
	void *p = pgn_mem_malloc(40), *q, *r;

	REQUIRE(p != NULL);
	pgn_mem_free(p);
	q = pgn_mem_malloc(33); /* 40 and 33 round to the same class */
	CHECK(q == p);
	r = pgn_mem_malloc(40); /* the list is empty again */
	CHECK(r != NULL && r != q);
	pgn_mem_free(q);
	pgn_mem_free(r);
}

static void
test_mem_roundup_is_the_size_a_block_reports(void)
{
	int n, bad = 0;
	void *p;

	for (n = 1; n <= PGN_MEM_SMALL + 64; n++) {
		p = pgn_mem_malloc(pgn_mem_roundup(n));
		if (p == NULL || pgn_mem_roundup(n) < n ||
		    pgn_mem_size(p) != pgn_mem_roundup(n))
			bad++;
		pgn_mem_free(p);
	}
	CHECK_INT(bad, 0);
	CHECK_INT(pgn_mem_roundup(0), PGN_MEM_GRAIN);
	CHECK_INT(pgn_mem_roundup(PGN_MEM_SMALL), PGN_MEM_SMALL);
	CHECK_INT(pgn_mem_roundup(PGN_MEM_SMALL + 1), PGN_MEM_SMALL + 8);
}

static void
test_mem_realloc_keeps_the_bytes_from_arena_to_heap_and_back(void)
{
	unsigned char *p, *q;
	size_t i;
	int same = 1;

	p = pgn_mem_malloc(100);
	REQUIRE(p != NULL);
	for (i = 0; i < 100; i++)
		p[i] = (unsigned char)i;
	q = pgn_mem_realloc(p, 50);
	CHECK(q == p); /* it fits */
	q = pgn_mem_realloc(p, 500);
	REQUIRE(q != NULL);
	CHECK(pgn_mem_in_arena(q));
	for (i = 0; i < 100; i++)
		same &= q[i] == (unsigned char)i;
	memset(q + 100, 0xee, 400);
	p = pgn_mem_realloc(q, 5000);
	REQUIRE(p != NULL);
	CHECK(!pgn_mem_in_arena(p));
	CHECK_INT(pgn_mem_size(p), 5000);
	for (i = 0; i < 100; i++)
		same &= p[i] == (unsigned char)i;
	for (i = 100; i < 500; i++)
		same &= p[i] == 0xee;
	q = pgn_mem_realloc(p, 20000);
	REQUIRE(q != NULL);
	for (i = 0; i < 100; i++)
		same &= q[i] == (unsigned char)i;
	CHECK(same);
	pgn_mem_free(q);
	p = pgn_mem_realloc(NULL, 10); /* a malloc */
	CHECK(p != NULL && pgn_mem_in_arena(p));
	pgn_mem_free(p);
}

static void
test_mem_sqlite_allocates_from_the_arena_once_single_threaded(void)
{
	static const char *const to[] = {"bob"};
	struct pgn_send rq;
	struct pgn_sent sent[1];
	sqlite3 *raw;
	sqlite3_stmt *st = NULL;
	pgn_db *db = h_open();
	void *p = sqlite3_malloc(10);
	size_t n = 0;

	/* under AddressSanitizer SQLite keeps malloc (0145), checked */
	CHECK(p != NULL && pgn_mem_in_arena(p) == !UNDER_ASAN);
	sqlite3_free(p);
	CHECK_INT(pgn_agent_add(db, "alice"), PGN_OK);
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_OK);
	memset(&rq, 0, sizeof(rq));
	rq.from = "alice";
	rq.to = to;
	rq.nto = 1;
	rq.body = "on the arena";
	rq.body_len = strlen(rq.body);
	CHECK_INT(pgn_send(db, &rq, sent, 1, &n), PGN_OK);
	CHECK_INT(n, 1);
	pgn_db_close(db);
	raw = h_raw();
	REQUIRE(sqlite3_prepare_v2(raw,
	            "SELECT body FROM message WHERE delivered_ms IS NULL", -1,
	            &st, NULL) == SQLITE_OK);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "on the arena");
	CHECK_INT(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(raw);
}

/* Last: the arena stays used up for the rest of the process. */
static void
test_mem_a_used_up_arena_hands_out_mallocs_blocks(void)
{
	enum { N = PGN_MEM_ARENA / PGN_MEM_SMALL + 2 };
	void **v = calloc(N, sizeof(*v));
	size_t i, heap = 0, missing = 0;
	void *p;

	REQUIRE(v != NULL);
	for (i = 0; i < N; i++) {
		v[i] = pgn_mem_malloc(PGN_MEM_SMALL);
		missing += v[i] == NULL;
		heap += v[i] != NULL && !pgn_mem_in_arena(v[i]);
	}
	CHECK_INT(missing, 0);
	CHECK(heap >= 2);
	CHECK(!pgn_mem_in_arena(v[N - 1]));
	CHECK_INT(pgn_mem_size(v[N - 1]), PGN_MEM_SMALL);
	for (i = 0; i < N; i++)
		pgn_mem_free(v[i]);
	p = pgn_mem_malloc(PGN_MEM_SMALL); /* a freed arena block again */
	CHECK(p != NULL && pgn_mem_in_arena(p));
	pgn_mem_free(p);
	free(v);
}

static const struct h_test tests[] = {
    H_TEST(test_mem_small_blocks_come_from_the_arena_rounded_to_their_class),
    H_TEST(test_mem_past_the_small_bound_a_block_is_mallocs),
    H_TEST(test_mem_a_freed_block_serves_the_next_of_its_class),
    H_TEST(test_mem_roundup_is_the_size_a_block_reports),
    H_TEST(test_mem_realloc_keeps_the_bytes_from_arena_to_heap_and_back),
    H_TEST(test_mem_sqlite_allocates_from_the_arena_once_single_threaded),
    H_TEST(test_mem_a_used_up_arena_hands_out_mallocs_blocks),
};

int
main(void)
{
	pgn_single_threaded(); /* before SQLite initialises */
	return h_run(tests, H_COUNT(tests));
}
