/*
 * Unit tests of redaction (redact.c): the corpus of credential shapes and
 * their near misses in tests/fixtures/redaction, every token prefix at
 * its least length, and each of the scanner's bounds at its edge.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness.h"
#include "transcript_int.h"

#define CORPUS     "redaction/corpus.jsonl"
#define CORPUS_MIN 60 /* cases the corpus must hold */
#define HUGE_INPUT (1 << 20)
#define REDACTED   "[REDACTED]"

/* pgn_redact of a C string; the count in '*n'. */
static char *
redact(const char *s, size_t *n)
{
	char *r = pgn_redact(s, strlen(s), n);

	REQUIRE(r != NULL);
	return r;
}

/* s unchanged, nothing counted. */
static int
kept(const char *s)
{
	size_t n = 99;
	char *r = redact(s, &n);
	int ok = strcmp(r, s) == 0 && n == 0;

	if (!ok)
		printf("  changed: '%s' -> '%s' (%zu)\n", s, r, n);
	free(r);
	return ok;
}

/* s redacted to exactly 'want'. */
static int
redacts_to(const char *s, const char *want)
{
	size_t n = 0;
	char *r = redact(s, &n);
	int ok = strcmp(r, want) == 0 && n > 0;

	if (!ok)
		printf("  '%s' -> '%s', not '%s'\n", s, r, want);
	free(r);
	return ok;
}

static char *
read_corpus(size_t *len)
{
	const char *d = getenv("PGN_TEST_FIXTURES");
	char path[PATH_MAX];
	char *text;

	if (d == NULL)
		printf("PGN_TEST_FIXTURES is not set: run through ctest\n");
	REQUIRE(d != NULL);
	h_join(path, sizeof(path), d, CORPUS);
	text = h_read_file(path, len);
	REQUIRE(text != NULL);
	return text;
}

static const char *
field(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	REQUIRE(cJSON_IsString(v));
	return v->valuestring;
}

/*
 * Each corpus case: the line redacts to exactly its "want", none of its
 * "secrets" is left, and its near miss "keep" comes out unchanged.
 */
static void
test_corpus_every_secret_goes_and_every_near_miss_stays(void)
{
	size_t len, cases = 0, n;
	char *text, *line, *next, *r;
	const cJSON *sec, *x;
	cJSON *o;

	text = read_corpus(&len);
	for (line = text; line != NULL && *line != '\0'; line = next) {
		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (*line == '\0')
			continue;
		o = cJSON_Parse(line);
		REQUIRE(o != NULL);
		r = redact(field(o, "line"), &n);
		if (!CHECK_STR(r, field(o, "want")))
			printf("  case '%s'\n", field(o, "name"));
		CHECK(n > 0);
		sec = cJSON_GetObjectItemCaseSensitive(o, "secrets");
		REQUIRE(cJSON_IsArray(sec) && cJSON_GetArraySize(sec) > 0);
		cJSON_ArrayForEach(x, sec)
		{
			REQUIRE(cJSON_IsString(x));
			if (!CHECK(strstr(r, x->valuestring) == NULL))
				printf("  case '%s' leaks '%s'\n",
				    field(o, "name"), x->valuestring);
		}
		if (!CHECK(kept(field(o, "keep"))))
			printf("  case '%s'\n", field(o, "name"));
		free(r);
		cJSON_Delete(o);
		cases++;
	}
	CHECK(cases >= CORPUS_MIN);
	free(text);
}

/* Every prefix body at its least length goes; one byte shorter stays. */
static void
test_each_token_prefix_at_its_least_length(void)
{
	char in[256], want[256], body[128];
	const char *prefix, *prev = NULL;
	size_t k, min, i;
	int keep;

	for (k = 0; tr_redact_shape(k, &prefix, &min, &keep); k++) {
		/* sorted by first byte: the bisection relies on it */
		if (prev != NULL)
			CHECK(
			    (unsigned char)prev[0] <= (unsigned char)prefix[0]);
		prev = prefix;
		REQUIRE(min < sizeof(body));
		/* upper case and digits fit every class */
		for (i = 0; i < min; i++)
			body[i] = i % 2 ? '7' : 'Q';
		body[min] = '\0';
		snprintf(in, sizeof(in), "x %s%s y", prefix, body);
		snprintf(want, sizeof(want), "x %s" REDACTED " y",
		    keep ? prefix : "");
		if (!CHECK(redacts_to(in, want)))
			printf("  prefix %s\n", prefix);
		body[min - 1] = '\0';
		snprintf(in, sizeof(in), "x %s%s y", prefix, body);
		if (!CHECK(kept(in)))
			printf("  prefix %s\n", prefix);
	}
	CHECK(k >= 50);
}

/* A prefix inside a word is no token: task-..., mask_live_... */
static void
test_a_prefix_inside_a_word_is_no_token(void)
{
	CHECK(kept("task-abcdefghijklmnopqrstuvwxyz"));
	CHECK(kept("mask_live_abcdefghijklmnopq"));
	CHECK(kept("xghp_abcdefghijklmnopqrstuvwxyz0123"));
	CHECK(redacts_to("(ghp_abcdefghijklmnopqrstuvwxyz0123)",
	    "(" REDACTED ")"));
}

/* A name is looked at up to TR_REDACT_MAX_NAME bytes; a longer is none. */
static void
test_a_name_at_the_name_bound_and_past_it(void)
{
	char name[TR_REDACT_MAX_NAME + 2], in[256], want[256];
	size_t n;

	for (n = TR_REDACT_MAX_NAME; n <= TR_REDACT_MAX_NAME + 1; n++) {
		memset(name, 'A', n - 6);
		memcpy(name + n - 6, "_TOKEN", 7);
		snprintf(in, sizeof(in), "%s=abc123 x", name);
		snprintf(want, sizeof(want), "%s=" REDACTED " x", name);
		if (n == TR_REDACT_MAX_NAME)
			CHECK(redacts_to(in, want));
		else
			CHECK(kept(in));
	}
}

/*
 * At most TR_REDACT_MAX_TAILS parts (_BASE, _HASH...) end a secret name,
 * a _KEY's kind is at most TR_REDACT_KEY_REACH parts before it, and only
 * the last TR_REDACT_MAX_PARTS parts are read (a --no- before them is
 * not seen).
 */
static void
test_name_parts_at_their_bounds(void)
{
	CHECK(TR_REDACT_MAX_TAILS == 2 && TR_REDACT_KEY_REACH == 3 &&
	    TR_REDACT_MAX_PARTS == 8);
	CHECK(kept("--no-a-b-c-d-e-f-password x"));
	CHECK(redacts_to("--no-a-b-c-d-e-f-g-password x",
	    "--no-a-b-c-d-e-f-g-password " REDACTED));
	CHECK(redacts_to("PASSWORD_HASH_B64=abc x",
	    "PASSWORD_HASH_B64=" REDACTED " x"));
	CHECK(kept("PASSWORD_HASH_B64_HEX=abc x"));
	CHECK(redacts_to("API_X_Y_KEY=abc x", "API_X_Y_KEY=" REDACTED " x"));
	CHECK(kept("API_X_Y_Z_KEY=abc x"));
}

/*
 * A quoted value is sought to its closing quote up to TR_REDACT_MAX_VALUE
 * bytes; past that it is taken as unclosed and redacted to the line's
 * end: more goes, never less.
 */
static void
test_a_quoted_value_at_the_value_bound_and_past_it(void)
{
	struct pgn_buf b;
	char *in;
	size_t n, k;

	for (n = TR_REDACT_MAX_VALUE; n <= TR_REDACT_MAX_VALUE + 1; n++) {
		pgn_buf_init(&b, 4096);
		pgn_buf_adds(&b, "password=\"");
		for (k = 0; k < n; k++)
			pgn_buf_add(&b, k % 2 ? " " : "w", 1);
		pgn_buf_adds(&b, "\" tail\nnext");
		in = pgn_buf_take(&b, NULL);
		REQUIRE(in != NULL);
		if (n == TR_REDACT_MAX_VALUE)
			CHECK(redacts_to(in,
			    "password=\"" REDACTED "\" tail\nnext"));
		else
			CHECK(redacts_to(in, "password=\"" REDACTED "\nnext"));
		free(in);
	}
}

/* A flag's value follows at most TR_REDACT_MAX_GAP spaces. */
static void
test_a_flag_value_at_the_gap_bound_and_past_it(void)
{
	char in[128], want[128], sp[TR_REDACT_MAX_GAP + 2];

	memset(sp, ' ', TR_REDACT_MAX_GAP);
	sp[TR_REDACT_MAX_GAP] = '\0';
	snprintf(in, sizeof(in), "x --password%shunter2 y", sp);
	snprintf(want, sizeof(want), "x --password%s" REDACTED " y", sp);
	CHECK(redacts_to(in, want));
	snprintf(in, sizeof(in), "x --password %shunter2 y", sp);
	CHECK(kept(in));
}

/* -----BEGIN <label> PRIVATE KEY: a label of TR_REDACT_MAX_PEM_LABEL. */
static void
test_a_key_block_label_at_its_bound_and_past_it(void)
{
	char in[256], label[TR_REDACT_MAX_PEM_LABEL + 2];

	memset(label, 'X', TR_REDACT_MAX_PEM_LABEL - 1);
	label[TR_REDACT_MAX_PEM_LABEL - 1] = ' ';
	label[TR_REDACT_MAX_PEM_LABEL] = '\0';
	snprintf(in, sizeof(in),
	    "a -----BEGIN %sPRIVATE KEY-----\nMIIE\n-----END %sPRIVATE "
	    "KEY----- b",
	    label, label);
	CHECK(redacts_to(in, "a " REDACTED " b"));
	memmove(label + 1, label, TR_REDACT_MAX_PEM_LABEL + 1);
	label[0] = 'X';
	snprintf(in, sizeof(in), "a -----BEGIN %sPRIVATE KEY-----\nMIIE b",
	    label);
	CHECK(kept(in));
}

/* user:password in a URL: at most TR_REDACT_MAX_USERINFO bytes of it. */
static void
test_url_userinfo_at_its_bound_and_past_it(void)
{
	char in[TR_REDACT_MAX_USERINFO + 64], want[TR_REDACT_MAX_USERINFO + 64];
	char user[TR_REDACT_MAX_USERINFO + 2];
	size_t n;

	for (n = TR_REDACT_MAX_USERINFO; n <= TR_REDACT_MAX_USERINFO + 1; n++) {
		/* user:pw with pw = "pw" */
		memset(user, 'u', n - 3);
		user[n - 3] = '\0';
		snprintf(in, sizeof(in), "https://%s:pw@h/x", user);
		snprintf(want, sizeof(want), "https://%s:" REDACTED "@h/x",
		    user);
		if (n == TR_REDACT_MAX_USERINFO)
			CHECK(redacts_to(in, want));
		else
			CHECK(kept(in));
	}
}

/* A bare *_KEY's value goes from TR_REDACT_KEY_MIN mixed bytes on. */
static void
test_a_bare_key_value_at_its_least_length(void)
{
	char v[TR_REDACT_KEY_MIN + 1], in[128], want[128];
	size_t i;

	for (i = 0; i < TR_REDACT_KEY_MIN; i++)
		v[i] = i % 2 ? '7' : 'q';
	v[TR_REDACT_KEY_MIN] = '\0';
	snprintf(in, sizeof(in), "WEATHER_KEY=%s x", v);
	snprintf(want, sizeof(want), "WEATHER_KEY=" REDACTED " x");
	CHECK(redacts_to(in, want));
	v[TR_REDACT_KEY_MIN - 1] = '\0';
	snprintf(in, sizeof(in), "WEATHER_KEY=%s x", v);
	CHECK(kept(in));
	CHECK(kept("SORT_KEY=created_at_and_then_the_name"));
	CHECK(kept("PUBLIC_KEY=q7q7q7q7q7q7q7q7q7q7q7"));
}

/* A bare Bearer takes TR_REDACT_BEARER_MIN token bytes; a header any. */
static void
test_a_bare_bearer_at_its_least_length(void)
{
	char tok[TR_REDACT_BEARER_MIN + 1], in[128];

	memset(tok, 'a', TR_REDACT_BEARER_MIN);
	tok[TR_REDACT_BEARER_MIN] = '\0';
	snprintf(in, sizeof(in), "Bearer %s", tok);
	CHECK(redacts_to(in, "Bearer " REDACTED));
	tok[TR_REDACT_BEARER_MIN - 1] = '\0';
	snprintf(in, sizeof(in), "Bearer %s", tok);
	CHECK(kept(in));
	CHECK(redacts_to("Authorization: Bearer x",
	    "Authorization: Bearer " REDACTED));
}

/* Redacting its own output changes nothing more. */
static void
test_redacted_text_is_left_as_it_is(void)
{
	CHECK(kept("password=" REDACTED " token: " REDACTED));
	CHECK(kept("-H \"Authorization: Bearer " REDACTED "\""));
	CHECK(kept("--password " REDACTED));
	/* found by fuzz_redact: a ']' inside the mark ended the value */
	CHECK(kept("curl -u admin:" REDACTED " https://h/"));
	CHECK(kept("git clone https://bob:" REDACTED "@h/r.git"));
	CHECK(kept("{\"private_key\": \"" REDACTED "\"}"));
}

/* What follows a redaction is scanned as a new word (fuzz_redact). */
static void
test_text_after_a_redaction_starts_a_word(void)
{
	CHECK(redacts_to("AKIAIOSFODNN7EXAMPLE--password hunter2",
	    REDACTED "--password " REDACTED));
}

/*
 * Input made of what starts a matcher over and over, HUGE_INPUT bytes
 * of each: every matcher gives up within its bound, so this is linear
 * (a quadratic scanner would not finish in the test's time).
 */
static void
test_adversarial_input_is_scanned_in_one_bounded_pass(void)
{
	static const char *const units[] = {"-----BEGIN ",
	    "://a:", "a:a:", "--password", "Bearer ", "\"api_key\"", "mysql ",
	    "AAAAAAAAAAAAAAAA", "A_B_C_D_E_F_G_H_", "\\\"", "x'"};
	size_t i, u, k;
	char *in, *r;

	for (i = 0; i < H_COUNT(units); i++) {
		u = strlen(units[i]);
		in = malloc(HUGE_INPUT + 1);
		REQUIRE(in != NULL);
		for (k = 0; k + u <= HUGE_INPUT; k += u)
			memcpy(in + k, units[i], u);
		in[k] = '\0';
		r = pgn_redact(in, k, NULL);
		REQUIRE(r != NULL);
		CHECK(strlen(r) <= 4 * k + 64);
		free(r);
		free(in);
	}
}

static const struct h_test tests[] = {
    H_TEST(test_corpus_every_secret_goes_and_every_near_miss_stays),
    H_TEST(test_each_token_prefix_at_its_least_length),
    H_TEST(test_a_prefix_inside_a_word_is_no_token),
    H_TEST(test_a_name_at_the_name_bound_and_past_it),
    H_TEST(test_name_parts_at_their_bounds),
    H_TEST(test_a_quoted_value_at_the_value_bound_and_past_it),
    H_TEST(test_a_flag_value_at_the_gap_bound_and_past_it),
    H_TEST(test_a_key_block_label_at_its_bound_and_past_it),
    H_TEST(test_url_userinfo_at_its_bound_and_past_it),
    H_TEST(test_a_bare_key_value_at_its_least_length),
    H_TEST(test_a_bare_bearer_at_its_least_length),
    H_TEST(test_redacted_text_is_left_as_it_is),
    H_TEST(test_text_after_a_redaction_starts_a_word),
    H_TEST(test_adversarial_input_is_scanned_in_one_bounded_pass),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
