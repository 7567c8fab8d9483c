/*
 * What every fuzz target shares: libFuzzer's entry points, check() for
 * an invariant, and the input as a C string. A target includes its
 * system headers, then this one, then the library's.
 */
#ifndef PGN_FUZZ_H
#define PGN_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's: each input; once, before the first (a target may omit it). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An invariant: on failure name it, then abort (libFuzzer saves the input). */
#define check(x)                                                               \
	do {                                                                   \
		if (!(x)) {                                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
			    __LINE__, #x);                                     \
			abort();                                               \
		}                                                              \
	} while (0)

/* The input as a NUL-terminated copy (free()), or NULL without memory. */
static inline char *
fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s == NULL)
		return NULL;
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif /* PGN_FUZZ_H */
