/*
 * A small-block allocator for SQLite in single-threaded processes
 * (docs/decisions/0145-hook-instruction-cost.md): no locks, no lookaside.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

/*
 * Every block starts with its size (8 bytes: SQLite wants blocks 8-byte
 * aligned and asks their size back). A block of up to PGN_MEM_SMALL
 * bytes, rounded up to its class, is cut from the arena once and goes
 * to its class's free list when freed, for the next block of that class;
 * nothing returns to the arena. Larger blocks, and every block once the
 * arena is used up, are malloc's, with the same header.
 */
#define HDR    8
#define NCLASS (PGN_MEM_SMALL / PGN_MEM_GRAIN)

static _Alignas(16) unsigned char arena[PGN_MEM_ARENA];
static size_t top;              /* bytes of the arena cut so far */
static void *freed[NCLASS + 1]; /* free blocks of class k: k grains */

int
pgn_mem_in_arena(const void *p)
{
	uintptr_t a = (uintptr_t)p, lo = (uintptr_t)arena;

	return a >= lo && a < lo + sizeof(arena);
}

static size_t
size_of(const void *p)
{
	uint64_t sz;

	memcpy(&sz, (const unsigned char *)p - HDR, sizeof(sz));
	return (size_t)sz;
}

static void *
with_size(unsigned char *b, size_t sz)
{
	uint64_t v = sz;

	memcpy(b, &v, sizeof(v));
	return b + HDR;
}

int
pgn_mem_roundup(int n)
{
	if (n <= 0)
		return PGN_MEM_GRAIN;
	if (n <= PGN_MEM_SMALL)
		return (n + PGN_MEM_GRAIN - 1) / PGN_MEM_GRAIN * PGN_MEM_GRAIN;
	return n <= INT32_MAX - 7 ? (n + 7) & ~7 : n;
}

void *
pgn_mem_malloc(int n)
{
	unsigned char *b;
	size_t sz, k;

	if (n <= 0)
		return NULL;
	if (n <= PGN_MEM_SMALL) {
		k = ((size_t)n + PGN_MEM_GRAIN - 1) / PGN_MEM_GRAIN;
		sz = k * PGN_MEM_GRAIN;
		if (freed[k] != NULL) {
			b = freed[k];
			memcpy(&freed[k], b, sizeof(void *));
			return b;
		}
		if (sizeof(arena) - top >= sz + HDR) {
			b = arena + top;
			top += sz + HDR;
			return with_size(b, sz);
		}
	} else {
		sz = (size_t)pgn_mem_roundup(n);
	}
	b = malloc(sz + HDR);
	return b != NULL ? with_size(b, sz) : NULL;
}

void
pgn_mem_free(void *p)
{
	size_t k;

	if (p == NULL)
		return;
	if (!pgn_mem_in_arena(p)) {
		free((unsigned char *)p - HDR);
		return;
	}
	k = size_of(p) / PGN_MEM_GRAIN;
	memcpy(p, &freed[k], sizeof(void *));
	freed[k] = p;
}

void *
pgn_mem_realloc(void *p, int n)
{
	unsigned char *b;
	size_t old, sz;
	void *q;

	if (p == NULL)
		return pgn_mem_malloc(n);
	if (n <= 0)
		return NULL;
	old = size_of(p);
	if ((size_t)n <= old)
		return p; /* it fits: a shrunk block keeps its size */
	if (!pgn_mem_in_arena(p) && n > PGN_MEM_SMALL) {
		sz = (size_t)pgn_mem_roundup(n);
		b = realloc((unsigned char *)p - HDR, sz + HDR);
		return b != NULL ? with_size(b, sz) : NULL;
	}
	q = pgn_mem_malloc(n);
	if (q == NULL)
		return NULL;
	memcpy(q, p, old < (size_t)n ? old : (size_t)n);
	pgn_mem_free(p);
	return q;
}

int
pgn_mem_size(void *p)
{
	return p != NULL ? (int)size_of(p) : 0;
}
