/*
 * Helpers shared by the hook's unit tests (test_payload.c,
 * test_envelope.c, test_hookio.c, test_turn.c).
 */
#ifndef PGN_TESTS_HOOK_FIXTURES_H
#define PGN_TESTS_HOOK_FIXTURES_H

#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "hookio.h"

static H_UNUSED void
sleep_ms(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0)
		;
}

static H_UNUSED const char *
jstr(const cJSON *root, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring :
	                                                        NULL;
}

static H_UNUSED struct hook_opts
opts(pgn_host h, pgn_event e)
{
	struct hook_opts o;

	memset(&o, 0, sizeof(o));
	o.host = h;
	o.event = e;
	return o;
}

#endif
