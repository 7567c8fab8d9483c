/*
 * Fuzz the redactor (redact.c). On any bytes:
 *   - never a crash, a leak or undefined behaviour;
 *   - the output is a string of at most 4 bytes per input byte + 64, and
 *     no more replacements than input bytes;
 *   - nothing counted, nothing changed; something counted, a [REDACTED];
 *   - the output redacted again holds to the same bounds. (It may redact
 *     more: a bounded look-ahead can reach further in the shorter text.)
 */

#include "fuzz.h"

#include "pigeon/transcript.h"

#define RD_FUZZ_MAX (1 << 16)

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *once, *twice;
	size_t n = 0, len;

	if (size > RD_FUZZ_MAX)
		return 0;
	/* callers redact C strings: the text ends at a NUL */
	for (len = 0; len < size && data[len] != 0; len++)
		;
	size = len;
	once = pgn_redact((const char *)data, size, &n);
	check(once != NULL);
	len = strlen(once);
	check(len <= 4 * size + 64);
	check(n <= size);
	if (n == 0)
		check(len == size && memcmp(once, data, size) == 0);
	else
		check(strstr(once, "[REDACTED]") != NULL);
	twice = pgn_redact(once, len, NULL);
	check(twice != NULL);
	check(strlen(twice) <= 4 * len + 64);
	free(once);
	free(twice);
	return 0;
}
