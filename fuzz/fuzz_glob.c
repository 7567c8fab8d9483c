/*
 * Fuzz lease patterns (base/glob.c). The input is up to three strings
 * split at NUL bytes: patterns A and B, and a path. On any bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - a refused pattern leaves "" and a message; an accepted one has a
 *     normal form that fits PGN_LEASE_NORM_SIZE and overlaps itself;
 *     one with a '/' (not starting with '!', within the bound) checks
 *     again to itself;
 *   - overlap is symmetric, for normal forms and for raw strings alike;
 *   - a path both normal forms cover makes them overlap.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pgn_glob.h"

#define GL_FUZZ_MAX 4096

/* Check 'pattern'; on success the invariants of its normal form. */
static int
checked(const char *pattern, char *norm)
{
	char again[PGN_LEASE_NORM_SIZE];
	struct pgn_err err;

	pgn_err_clear(&err);
	if (pgn_glob_check(pattern, norm, PGN_LEASE_NORM_SIZE, &err) !=
	    PGN_OK) {
		check(norm[0] == '\0');
		check(err.msg[0] != '\0');
		return 0;
	}
	check(strlen(norm) > 0 && strlen(norm) < PGN_LEASE_NORM_SIZE);
	check(pgn_glob_overlap(norm, norm) == 1);
	if (strchr(norm, '/') != NULL && norm[0] != '!' &&
	    strlen(norm) <= PGN_MAX_LEASE_PATTERN) {
		pgn_err_clear(&err);
		check(
		    pgn_glob_check(norm, again, sizeof(again), &err) == PGN_OK);
		check(strcmp(again, norm) == 0);
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char buf[GL_FUZZ_MAX + 1];
	const char *part[3] = {"", "", ""};
	char na[PGN_LEASE_NORM_SIZE], nb[PGN_LEASE_NORM_SIZE];
	uint64_t cells = 0;
	size_t i, n = 0;
	int oka, okb, ab;

	if (size > GL_FUZZ_MAX)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	part[n++] = buf;
	for (i = 0; i < size && n < 3; i++)
		if (buf[i] == '\0')
			part[n++] = buf + i + 1;
	oka = checked(part[0], na);
	okb = checked(part[1], nb);
	/* raw strings as normal forms: whatever they mean, symmetric */
	check(pgn_glob_overlap(part[0], part[1]) ==
	    pgn_glob_overlap(part[1], part[0]));
	(void)pgn_glob_match(part[0], part[2]);
	if (oka && okb) {
		ab = pgn_glob_overlap(na, nb);
		check(ab == pgn_glob_overlap(nb, na));
		/* the literal-prefix walk agrees with the automaton alone */
		check(ab == pgn_glob_overlap_cells(na, nb, &cells));
		if (pgn_glob_match(na, part[2]) && pgn_glob_match(nb, part[2]))
			check(ab == 1);
	}
	return 0;
}
