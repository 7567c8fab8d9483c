/*
 * Fuzz the provider output validator, pgn_provider_validate: accepted
 * output yields a context of valid UTF-8 with no control character but
 * newline and tab, and that context, wrapped again in the schema,
 * validates to itself (nothing is lost or cut on the way).
 */

#include <cjson/cJSON.h>

#include "fuzz.h"

#include "pigeon/pigeon.h"
#include "pigeon/setup.h"

static void
check_context(const char *ctx)
{
	size_t i, n = strlen(ctx);

	check(pgn_utf8_valid(ctx, n));
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)ctx[i];

		check(c >= 0x20 || c == '\n' || c == '\t');
		check(c != 0x7f);
	}
}

/* {"schema":...,"context":ctx} validates back to ctx. */
static void
round_trip(const char *ctx)
{
	cJSON *o;
	char *text, *again = NULL;
	struct pgn_err why;

	o = cJSON_CreateObject();
	if (o == NULL ||
	    cJSON_AddStringToObject(o, "schema", "pigeon.prompt-context/v1") ==
	        NULL ||
	    cJSON_AddStringToObject(o, "context", ctx) == NULL) {
		cJSON_Delete(o);
		return;
	}
	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (text == NULL)
		return;
	check(
	    pgn_provider_validate(text, strlen(text), &again, &why) == PGN_OK);
	check(again != NULL && strcmp(again, ctx) == 0);
	free(again);
	cJSON_free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *ctx = (char *)data;
	struct pgn_err why;
	pgn_status st;

	if (size > PGN_PROVIDER_OUTPUT_MAX)
		return 0;
	pgn_err_clear(&why);
	st = pgn_provider_validate((const char *)data, size, &ctx, &why);
	if (st != PGN_OK) {
		check(st == PGN_EINVAL && ctx == NULL && why.msg[0] != '\0');
		return 0;
	}
	check(ctx != NULL);
	check_context(ctx);
	round_trip(ctx);
	free(ctx);
	return 0;
}
