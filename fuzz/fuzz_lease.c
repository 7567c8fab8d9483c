/*
 * Fuzz what the lease CLI parses (store/lease.c, decision 0155): a
 * duration (--ttl) and a pattern made relative to a scope root. The
 * input is up to two strings split at NUL: the text and a root. On any
 * bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - a duration accepted is not negative, and its text starts with a
 *     digit and ends with a unit or a digit;
 *   - a relative form fits its buffer, is "." or "./..." for an absolute
 *     input inside the root, the input itself for a relative one, and
 *     an absolute input outside the root is refused with a message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pigeon/lease.h"

#define LE_FUZZ_MAX 8192

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[PGN_MAX_LEASE_PATTERN + 4];
	const char *root = "";
	struct pgn_err err;
	int64_t ms = -1;
	size_t n;
	char *s;

	if (size > LE_FUZZ_MAX)
		return 0;
	s = fuzz_cstr(data, size);
	if (s == NULL)
		return 0;
	n = strlen(s);
	if (n < size)
		root = s + n + 1;
	if (pgn_parse_duration(s, &ms) == PGN_OK) {
		check(ms >= 0);
		check(n > 0 && s[0] >= '0' && s[0] <= '9');
		check(strchr("smhd0123456789", s[n - 1]) != NULL);
	} else {
		check(ms == 0);
	}
	pgn_err_clear(&err);
	if (pgn_lease_relative(root, s, out, sizeof(out), &err) == PGN_OK) {
		check(strlen(out) < sizeof(out));
		if (s[0] != '/')
			check(strcmp(out, s) == 0);
		else
			check(strcmp(out, ".") == 0 ||
			    strncmp(out, "./", 2) == 0);
	} else {
		check(err.msg[0] != '\0');
	}
	free(s);
	return 0;
}
