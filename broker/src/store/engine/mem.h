/*
 * SQLite's memory in single-threaded processes: small blocks from a
 * static arena, reused by size class (mem.c, decision 0145).
 */
#ifndef PGN_MEM_H
#define PGN_MEM_H

#define PGN_MEM_ARENA (1024 * 1024) /* bytes of the arena; then malloc */
#define PGN_MEM_SMALL 1024          /* largest block the arena serves */
#define PGN_MEM_GRAIN 16            /* size classes: multiples of this */

/* sqlite3_mem_methods' shapes: sizes are int, as SQLite passes them. */
void *pgn_mem_malloc(int n);
void pgn_mem_free(void *p);
void *pgn_mem_realloc(void *p, int n);
int pgn_mem_size(void *p);
int pgn_mem_roundup(int n);
/* 1 when 'p' is a block of the arena (tests). */
int pgn_mem_in_arena(const void *p);

#endif
