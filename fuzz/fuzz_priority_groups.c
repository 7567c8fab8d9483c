/*
 * Fuzz what priority and groups read (decision 0158): the --priority
 * word (pgn_priority_parse) and an agent's groups list (agent.grps,
 * ",a,b,", matched by pgn_grps_has). The input is two strings split at
 * the first NUL byte: a list, then a name. On any bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - a word is accepted only as urgent, normal or low, and its name
 *     comes back the same; a refused word leaves a message;
 *   - a name without commas is found in a list exactly when one of the
 *     list's comma-separated fields is that name; ",name," always holds
 *     it, and a list that does not contain the name as text never does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pigeon/pigeon.h"
#include "store_int.h"

#define PG_FUZZ_MAX 4096

/* The reference: is 'name' one of the comma-separated fields of 'list'? */
static int
field_of(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list, *e;

	for (;;) {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		if ((size_t)(e - p) == n && memcmp(p, name, n) == 0 &&
		    p > list && *e == ',')
			return 1;
		if (*e == '\0')
			return 0;
		p = e + 1;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_err err;
	const char *name;
	char *s, *wrapped;
	int p = 7;

	if (size > PG_FUZZ_MAX)
		return 0;
	s = fuzz_cstr(data, size);
	if (s == NULL)
		return 0;
	/* the priority word: the whole input up to its first NUL */
	pgn_err_clear(&err);
	if (pgn_priority_parse(s, &p, &err) == PGN_OK) {
		check(p >= PGN_PRIORITY_LOW && p <= PGN_PRIORITY_URGENT);
		check(strcmp(pgn_priority_name(p), s) == 0);
	} else {
		check(p == 7);
		check(err.msg[0] != '\0');
	}
	/* a list, then a name */
	name = strlen(s) < size ? s + strlen(s) + 1 : "";
	if (name[0] != '\0' && strchr(name, ',') == NULL) {
		check(pgn_grps_has(s, name) == field_of(s, name));
		if (strstr(s, name) == NULL)
			check(!pgn_grps_has(s, name));
		wrapped = malloc(strlen(name) + 3);
		if (wrapped != NULL) {
			wrapped[0] = ',';
			memcpy(wrapped + 1, name, strlen(name));
			memcpy(wrapped + 1 + strlen(name), ",", 2);
			check(pgn_grps_has(wrapped, name));
			free(wrapped);
		}
	}
	free(s);
	return 0;
}
