/*
 * Redaction of credential-looking strings in text a digest shows: a
 * scanner over known token shapes, key blocks, bearer tokens, URL
 * passwords and secret-named assignments (docs/decisions/0091).
 */
#include <stdlib.h>
#include <string.h>

#include "pigeon/transcript.h"
#include "pgn_int.h"

#define MARK "[REDACTED]"

enum cls { ALNUM, ALNUM_DASH, ALNUM_UNDER, UPPER_DIGIT, TOKEN68 };

struct shape {
	const char *prefix;
	size_t min; /* body bytes after the prefix */
	enum cls cls;
};

/* Tokens whose prefix says what they are. */
static const struct shape shapes[] = {
    {"sk-", 20, ALNUM_DASH},          /* OpenAI, Anthropic (sk-ant-...) */
    {"sk_live_", 16, ALNUM},          /* Stripe */
    {"sk_test_", 16, ALNUM},          /* Stripe */
    {"rk_live_", 16, ALNUM},          /* Stripe restricted */
    {"ghp_", 20, ALNUM},              /* GitHub personal */
    {"gho_", 20, ALNUM},              /* GitHub OAuth */
    {"ghu_", 20, ALNUM},              /* GitHub user-to-server */
    {"ghs_", 20, ALNUM},              /* GitHub server-to-server */
    {"ghr_", 20, ALNUM},              /* GitHub refresh */
    {"github_pat_", 20, ALNUM_UNDER}, /* GitHub fine-grained */
    {"glpat-", 20, ALNUM_DASH},       /* GitLab */
    {"xoxb-", 10, ALNUM_DASH},        /* Slack bot */
    {"xoxp-", 10, ALNUM_DASH},        /* Slack user */
    {"xoxa-", 10, ALNUM_DASH},        /* Slack app */
    {"xoxs-", 10, ALNUM_DASH},        /* Slack session */
    {"AKIA", 16, UPPER_DIGIT},        /* AWS access key id */
    {"ASIA", 16, UPPER_DIGIT},        /* AWS temporary key id */
    {"AIza", 35, ALNUM_DASH},         /* Google API key */
    {"npm_", 36, ALNUM},              /* npm */
    {"hf_", 30, ALNUM},               /* Hugging Face */
};

/* An assignment to a name ending so has its value redacted. */
static const char *const secret_names[] = {"password", "passwd", "pwd",
    "passphrase", "secret", "token", "apikey", "api_key", "api-key",
    "access_key", "accesskey", "private_key", "credential", "credentials",
    NULL};

static int
is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

static int
in_cls(unsigned char c, enum cls k)
{
	switch (k) {
	case ALNUM:
		return is_alnum(c);
	case ALNUM_DASH:
		return is_alnum(c) || c == '-' || c == '_';
	case ALNUM_UNDER:
		return is_alnum(c) || c == '_';
	case UPPER_DIGIT:
		return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
	case TOKEN68:
		return is_alnum(c) || c == '-' || c == '.' || c == '_' ||
		    c == '~' || c == '+' || c == '/' || c == '=';
	}
	return 0;
}

static unsigned char
lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

static int
ident(unsigned char c)
{
	return is_alnum(c) || c == '_' || c == '-' || c == '.';
}

static size_t
run(const unsigned char *s, size_t len, size_t i, enum cls k)
{
	size_t j = i;

	while (j < len && in_cls(s[j], k))
		j++;
	return j - i;
}

static int
starts(const unsigned char *s, size_t len, size_t i, const char *w, int fold)
{
	size_t n = strlen(w), k;

	if (len - i < n)
		return 0;
	for (k = 0; k < n; k++) {
		unsigned char a = s[i + k], b = (unsigned char)w[k];
		if (fold ? lower(a) != lower(b) : a != b)
			return 0;
	}
	return 1;
}

/*
 * Does a secret start at s[i]? '*m' gets its length, '*keep' how many
 * of its first bytes stay (a key's name, "Bearer "). 0 if none.
 */
static int
token_shape(const unsigned char *s, size_t len, size_t i, size_t *m)
{
	size_t k, n, body;

	for (k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
		if (!starts(s, len, i, shapes[k].prefix, 0))
			continue;
		n = strlen(shapes[k].prefix);
		body = run(s, len, i + n, shapes[k].cls);
		if (body >= shapes[k].min) {
			*m = n + body;
			return 1;
		}
	}
	return 0;
}

/* A JSON Web Token: eyJ<header>.<payload>.<signature>. */
static int
jwt(const unsigned char *s, size_t len, size_t i, size_t *m)
{
	size_t a, b, c;

	if (!starts(s, len, i, "eyJ", 0))
		return 0;
	a = run(s, len, i, ALNUM_DASH);
	if (a < 10 || i + a >= len || s[i + a] != '.')
		return 0;
	b = run(s, len, i + a + 1, ALNUM_DASH);
	if (b < 10)
		return 0;
	c = 0;
	if (i + a + 1 + b < len && s[i + a + 1 + b] == '.')
		c = 1 + run(s, len, i + a + 2 + b, ALNUM_DASH);
	*m = a + 1 + b + c;
	return 1;
}

/* -----BEGIN ... PRIVATE KEY----- through its END line, or the end. */
static int
key_block(const unsigned char *s, size_t len, size_t i, size_t *m)
{
	static const char tail[] = "PRIVATE KEY-----";
	size_t j, lim;
	const unsigned char *e;

	if (!starts(s, len, i, "-----BEGIN ", 0))
		return 0;
	lim = i + 11 + 64 < len ? i + 11 + 64 : len;
	for (j = i + 11; j < lim && s[j] != '\n'; j++)
		if (starts(s, len, j, tail, 0))
			break;
	if (j >= lim || s[j] == '\n')
		return 0;
	j += strlen(tail);
	e = NULL;
	for (; j + 8 <= len; j++) {
		if (starts(s, len, j, "-----END", 0)) {
			e = s + j;
			break;
		}
	}
	if (e == NULL) {
		*m = len - i;
		return 1;
	}
	j += 8;
	while (j < len && s[j] != '\n' && !starts(s, len, j, "-----", 0))
		j++;
	if (starts(s, len, j, "-----", 0))
		j += 5;
	*m = j - i;
	return 1;
}

/* "Bearer TOKEN" / "Basic TOKEN": the scheme stays. */
static int
auth_scheme(const unsigned char *s, size_t len, size_t i, size_t *m,
    size_t *keep)
{
	size_t n, sp, t;

	if (starts(s, len, i, "bearer", 1))
		n = 6;
	else if (starts(s, len, i, "basic", 1))
		n = 5;
	else
		return 0;
	sp = 0;
	while (i + n + sp < len && s[i + n + sp] == ' ')
		sp++;
	if (sp == 0)
		return 0;
	t = run(s, len, i + n + sp, TOKEN68);
	if (t < 16)
		return 0;
	*keep = n + sp;
	*m = n + sp + t;
	return 1;
}

/* scheme://user:PASSWORD@host: the password goes. */
static int
url_password(const unsigned char *s, size_t len, size_t i, size_t *m,
    size_t *keep)
{
	size_t j, colon = 0;

	if (!starts(s, len, i, "://", 0))
		return 0;
	for (j = i + 3; j < len && j < i + 3 + 256; j++) {
		unsigned char c = s[j];
		if (c == '/' || c == ' ' || c == '\n' || c == '\t' ||
		    c == '"' || c == '\'' || c == '<' || c == '>')
			return 0;
		if (c == ':' && colon == 0)
			colon = j;
		else if (c == '@')
			break;
	}
	if (j >= len || s[j] != '@' || colon == 0 || colon + 1 == j)
		return 0;
	*keep = colon + 1 - i;
	*m = j - i;
	return 1;
}

/* A value ends at white space, a quote or punctuation that ends a field. */
static int
value_end(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' ||
	    c == '\'' || c == ',' || c == ';' || c == '&' || c == '}' ||
	    c == ')' || c == ']' || c == '`';
}

/* NAME=VALUE, NAME: VALUE, "NAME": "VALUE" with a secret's name. */
static int
assignment(const unsigned char *s, size_t len, size_t i, size_t *m,
    size_t *keep)
{
	size_t j, k, n, w, v;
	int hit = 0;

	for (j = i; j < len && ident(s[j]); j++)
		;
	w = j - i;
	if (w == 0)
		return 0;
	for (k = 0; secret_names[k] != NULL && !hit; k++) {
		n = strlen(secret_names[k]);
		hit = w >= n && starts(s, len, j - n, secret_names[k], 1);
	}
	if (!hit)
		return 0;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	while (j < len && s[j] == ' ')
		j++;
	if (j >= len || (s[j] != '=' && s[j] != ':'))
		return 0;
	j++;
	while (j < len && s[j] == ' ')
		j++;
	if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	for (v = j; v < len && !value_end(s[v]); v++)
		;
	if (v == j || starts(s, len, j, MARK, 0))
		return 0;
	*keep = j - i;
	*m = v - i;
	return 1;
}

char *
pgn_redact(const char *str, size_t len, size_t *count)
{
	const unsigned char *s = (const unsigned char *)str;
	struct pgn_buf b;
	size_t i = 0, m, keep, n = 0, max;
	unsigned char c, prev;
	int tok, id, hit;

	if (!pgn_size_mul(len, 4, &max) || !pgn_size_add(max, 64, &max))
		return NULL;
	pgn_buf_init(&b, max);
	pgn_buf_add(&b, "", 0);
	while (i < len && b.err == PGN_OK) {
		c = s[i];
		prev = i > 0 ? s[i - 1] : ' ';
		/* a token starts after a non-word byte; a name after a non-name
		 */
		tok = !is_alnum(prev) && prev != '_';
		id = !ident(prev);
		m = 0;
		keep = 0;
		hit = 0;
		if (tok && strchr("srgxAnhe", c) != NULL && c != '\0')
			hit = token_shape(s, len, i, &m) || jwt(s, len, i, &m);
		if (!hit && tok && (c == 'b' || c == 'B'))
			hit = auth_scheme(s, len, i, &m, &keep);
		if (!hit && id && ident(c))
			hit = assignment(s, len, i, &m, &keep);
		if (!hit && c == '-')
			hit = key_block(s, len, i, &m);
		if (!hit && c == ':')
			hit = url_password(s, len, i, &m, &keep);
		if (hit) {
			pgn_buf_add(&b, s + i, keep);
			pgn_buf_adds(&b, MARK);
			i += m;
			n++;
			continue;
		}
		pgn_buf_add(&b, s + i, 1);
		i++;
	}
	if (count != NULL)
		*count = n;
	return pgn_buf_take(&b, NULL);
}
