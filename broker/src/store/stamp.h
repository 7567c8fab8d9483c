/*
 * The lease stamp's format (stamp.c, decision 0160): the file
 * "<database>-leases" beside an SQLite database that lets the
 * before-tool hook judge a write without opening SQLite. Private to the
 * store: lease.c writes and reads it, the SQLite engine writes the empty
 * one when it creates or migrates a database; the tests and fuzz_stamp
 * include it by its bare name. Only files and bytes here: no database
 * handle, so either may call it without a loop of calls.
 *
 * Layout, native byte order (a stamp is this machine's only):
 *   magic u32 "PLS2", flags u32 (bit 0: overflow), dev u64, ino u64,
 *   slot[PGN_LEASE_STAMP_SLOTS] i64 (the latest expiry of any live lease,
 *   shared or not, of the scopes in that slot), nentries u32, entry
 *   bytes u32, then the entries: scope u64 (FNV-1a of the scope key),
 *   expiry i64, length u16 (the normal form's bytes with its NUL), the
 *   normal form; last, sum u64 (FNV-1a of every byte before it).
 * The entries are the live exclusive leases (only those block a write);
 * "overflow" says they did not fit in PGN_LEASE_STAMP_MAX bytes and were
 * left out: then a live slot means "ask the database".
 */
#ifndef PGN_STAMP_H
#define PGN_STAMP_H

#include <stddef.h>
#include <stdint.h>

#include "pigeon/lease.h"

#define PGN_STAMP_MAGIC     0x32534c50u /* "PLS2" */
#define PGN_STAMP_OVERFLOW  1u
#define PGN_STAMP_SUFFIX    "-leases"
#define PGN_STAMP_TMPSUFFIX "-leases.tmp"
/* magic, flags, dev, ino, the slots, nentries, entry bytes */
#define PGN_STAMP_HEAD       (4 + 4 + 8 + 8 + 8 * PGN_LEASE_STAMP_SLOTS + 4 + 4)
#define PGN_STAMP_ENTRY_HEAD (8 + 8 + 2)

/* A stamp as parsed: pointers into the caller's bytes. */
struct pgn_stamp_view {
	uint32_t flags;
	uint64_t dev, ino;
	int64_t slot[PGN_LEASE_STAMP_SLOTS];
	uint32_t nentries;
	const unsigned char *entries; /* nentries of them, checked */
	size_t entries_len;
};

/* One entry of a view. */
struct pgn_stamp_entry {
	uint64_t scope;
	int64_t expires_ms;
	const char *norm; /* NUL-terminated, inside the view's bytes */
};

/* A stamp being built (lease.c): the entries as a growing list. */
struct pgn_stamp_set {
	int64_t slot[PGN_LEASE_STAMP_SLOTS];
	struct pgn_stamp_item {
		uint64_t scope;
		int64_t expires_ms;
		char norm[PGN_LEASE_NORM_SIZE];
	} * v;
	size_t n, cap;
};

uint64_t pgn_stamp_hash(const void *p, size_t n);
size_t pgn_stamp_slot(const char *scope);

/*
 * 'len' bytes at 'buf' as a stamp into 'v': 1 when whole and sound
 * (magic, size, checksum, every entry inside the bytes with one NUL at
 * its end and a length below PGN_LEASE_NORM_SIZE), else 0. Any bytes.
 */
int pgn_stamp_parse(const void *buf, size_t len, struct pgn_stamp_view *v);

/* The entry at '*off' of 'v' into 'e', '*off' moved on; 0 past the last. */
int pgn_stamp_next(const struct pgn_stamp_view *v, size_t *off,
    struct pgn_stamp_entry *e);

/*
 * 0 only when normalized pattern 'norm' cannot match clean path 'path'
 * (pgn_glob_match would say 0): a leading component of the pattern with
 * no glob byte ('*', '?', '[', '\\') and a '/' after it stands for one
 * equal component of the path. A few instructions instead of compiling
 * the pattern: the hook's test of each live lease in the stamp.
 */
int pgn_stamp_may_match(const char *norm, const char *path);

void pgn_stamp_set_release(struct pgn_stamp_set *s);
/* Add a live lease of scope key 'scope'; 0 out of memory. */
int pgn_stamp_set_add(struct pgn_stamp_set *s, const char *scope,
    const char *norm, int shared, int64_t expires_ms);
/*
 * 'a' grown by what 'b' has that it has not (an entry, a higher slot);
 * '*grew' 1 when it did. 0 out of memory.
 */
int pgn_stamp_set_union(struct pgn_stamp_set *a, const struct pgn_stamp_set *b,
    int *grew);

/*
 * Write 's' as the stamp of the database file 'db_path' (its device and
 * inode): the whole file to "<db_path>-leases.tmp" (0600, created anew),
 * then renamed over the stamp, so a reader sees the old stamp or the new
 * one, never a mix. 0, or an errno value. Not synced (a lost stamp is
 * absent, and absent means "ask"). 'narrower' 1: 's' is known to be no
 * wider than the stamp there (the exact stamp after a change that
 * lowered it), which is then written in place where it is a regular
 * file of ours alone (decision 0260); a mix a reader might see fails
 * its checksum.
 */
int pgn_stamp_write(const char *db_path, const struct pgn_stamp_set *s,
    int narrower);

/*
 * The stamp 's' of 'db_path' made only if there is none (written to a
 * name of this process's own, then linked: EEXIST when a stamp is
 * there). For a reader that found none and read 's' from the database:
 * a change that commits a lease writes its stamp before its commit, so
 * a stamp made from a read that missed it finds that one there and
 * leaves it. 0, or an errno value.
 */
int pgn_stamp_make(const char *db_path, const struct pgn_stamp_set *s);

/* "<db_path>-leases" into 'buf'; 0 when it does not fit. */
int pgn_stamp_path(const char *db_path, const char *suffix, char *buf,
    size_t len);

#endif
