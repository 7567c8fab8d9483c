/*
 * Fuzz the lease stamp's reader (store/stamp.c, decision 0160): the
 * before-tool hook parses whatever bytes lie beside the database. On
 * any bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - a stamp accepted has exactly its count of entries, each inside
 *     the bytes, its normal form one string shorter than
 *     PGN_LEASE_NORM_SIZE, and the walk ends at the entries' end;
 *   - input "M" PATTERN NUL PATH: the prefilter pgn_stamp_may_match
 *     never says 0 where pgn_glob_match says 1 (the pattern normalized
 *     by pgn_glob_check first).
 * Seeds (fuzz/corpus/fuzz_stamp): stamps as the writer makes them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pgn_glob.h"
#include "pigeon/lease.h"
#include "stamp.h"

/* "M" PATTERN NUL PATH: the prefilter is never wrong. */
static void
prefilter(const uint8_t *data, size_t size)
{
	char norm[PGN_LEASE_NORM_SIZE];
	struct pgn_err err;
	const char *path = "";
	char *s = fuzz_cstr(data, size);
	size_t n;

	if (s == NULL)
		return;
	n = strlen(s);
	if (n < size)
		path = s + n + 1;
	if (pgn_glob_check(s, norm, sizeof(norm), &err) == PGN_OK &&
	    pgn_glob_match(norm, path))
		check(pgn_stamp_may_match(norm, path));
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_stamp_view v;
	struct pgn_stamp_entry e;
	const unsigned char *end;
	size_t off = 0, n = 0, len;

	if (size > PGN_LEASE_STAMP_MAX + 16)
		return 0;
	if (size > 0 && data[0] == 'M') {
		prefilter(data + 1, size - 1);
		return 0;
	}
	if (!pgn_stamp_parse(data, size, &v))
		return 0;
	check(v.entries_len <= size);
	end = v.entries + v.entries_len;
	while (pgn_stamp_next(&v, &off, &e)) {
		len = strlen(e.norm);
		check(len + 1 <= PGN_LEASE_NORM_SIZE);
		check((const unsigned char *)e.norm + len < end);
		n++;
	}
	check(n == v.nentries);
	check(off == v.entries_len);
	return 0;
}
