/*
 * Fuzz the project config parser and validator, pgn_config_parse: it
 * never fails but for memory, and what it accepts is what the hook may
 * run and inject: a bounded provider command relative to the project,
 * limits in range, a one-line reminder of valid UTF-8 under the cap.
 */

#include "fuzz.h"

#include "pigeon/pigeon.h"
#include "pigeon/setup.h"

static size_t
chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static void
check_reminder(const char *r)
{
	size_t i, n = strlen(r);

	check(n > 0 && pgn_utf8_valid(r, n));
	check(chars(r) <= PGN_MAX_REMINDER);
	check(r[0] != ' ' && r[0] != '\t');
	check(r[n - 1] != ' ' && r[n - 1] != '\t');
	for (i = 0; i < n; i++)
		check((unsigned char)r[i] >= 0x20 && r[i] != 0x7f);
}

static void
check_provider(const struct pgn_config *c)
{
	const char *a0;
	size_t i, n;

	check(c->argc <= PGN_MAX_PROVIDER_ARGS && c->argv != NULL);
	check(c->argv[c->argc] == NULL);
	for (i = 0; i < c->argc; i++) {
		n = strlen(c->argv[i]);
		check(n > 0 && n <= PGN_MAX_PROVIDER_ARG);
	}
	a0 = c->argv[0];
	n = strlen(a0);
	check(a0[0] != '/' && strcmp(a0, "..") != 0 &&
	    strncmp(a0, "../", 3) != 0 && strstr(a0, "/../") == NULL &&
	    (n < 3 || strcmp(a0 + n - 3, "/..") != 0));
	check(c->timeout_ms >= 1 && c->timeout_ms <= PGN_PROVIDER_TIMEOUT_MAX);
	check(c->max_output >= 1 && c->max_output <= PGN_PROVIDER_OUTPUT_MAX);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_config c;
	pgn_status st;

	st = pgn_config_parse((const char *)data, size, &c);
	/* Nothing but memory can fail, and memory does not here. */
	check(st == PGN_OK);
	if (c.problem != NULL)
		check(c.reminder == NULL && c.argc == 0);
	if (c.reminder != NULL) {
		check(c.reminder_problem == NULL);
		check_reminder(c.reminder);
	}
	if (c.argc > 0) {
		check(c.provider_problem == NULL);
		check_provider(&c);
	} else {
		check(c.argv == NULL);
	}
	if (c.unknown != NULL)
		check(c.unknown[0] != '\0');
	pgn_config_release(&c);
	return 0;
}
