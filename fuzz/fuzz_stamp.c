/*
 * Fuzz the lease stamp's reader (store/stamp.c, decision 0160): the
 * before-tool hook parses whatever bytes lie beside the database. On
 * any bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - a stamp accepted has exactly its count of entries, each inside
 *     the bytes, its normal form one string shorter than
 *     PGN_LEASE_NORM_SIZE, and the walk ends at the entries' end.
 * Seeds (fuzz/corpus/fuzz_stamp): stamps as the writer makes them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pigeon/lease.h"
#include "stamp.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_stamp_view v;
	struct pgn_stamp_entry e;
	const unsigned char *end;
	size_t off = 0, n = 0, len;

	if (size > PGN_LEASE_STAMP_MAX + 16)
		return 0;
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
