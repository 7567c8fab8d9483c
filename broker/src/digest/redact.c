/*
 * Redaction of credential-looking strings in text a digest shows: one
 * linear pass over token shapes, key blocks, auth headers, password
 * flags, URL passwords, webhooks and secret-named assignments (0091, 0128).
 */
#include <stdlib.h>
#include <string.h>

#include "transcript_int.h"

#define MARK "[REDACTED]"

enum cls { ALNUM, ALNUM_DASH, ALNUM_UNDER, UPPER_DIGIT, DOTTED, URLPATH };

struct shape {
	const char *prefix;
	size_t min; /* body bytes after the prefix */
	enum cls cls;
	int keep; /* the prefix stays (a webhook's host) */
};

/*
 * Tokens whose prefix says what they are (the providers' documented
 * formats), and incoming-webhook URLs, where the URL is the credential
 * and the host stays. Sorted by the prefix's first byte (a test checks):
 * shape_from() finds a byte's first row by bisection.
 */
static const struct shape shapes[] = {
    {"AKIA", 16, UPPER_DIGIT, 0},             /* AWS access key id */
    {"ASIA", 16, UPPER_DIGIT, 0},             /* AWS temporary key id */
    {"AIza", 35, ALNUM_DASH, 0},              /* Google API key */
    {"AGE-SECRET-KEY-1", 40, UPPER_DIGIT, 0}, /* age */
    {"GR1348941", 20, ALNUM_DASH, 0},         /* GitLab runner registration */
    {"GOCSPX-", 24, ALNUM_DASH, 0},           /* Google OAuth client secret */
    {"HRKU-", 20, ALNUM_DASH, 0},             /* Heroku */
    {"NRAK-", 27, UPPER_DIGIT, 0},            /* New Relic */
    {"PMAK-", 24, ALNUM_DASH, 0},             /* Postman */
    {"SG.", 50, DOTTED, 0},                   /* SendGrid SG.<22>.<43> */
    {"dop_v1_", 40, ALNUM, 0},                /* DigitalOcean */
    {"doo_v1_", 40, ALNUM, 0},                /* DigitalOcean OAuth */
    {"dckr_pat_", 20, ALNUM_DASH, 0},         /* Docker Hub */
    {"dapi", 32, ALNUM, 0},                   /* Databricks */
    {"discord.com/api/webhooks/", 10, URLPATH, 1},
    {"discordapp.com/api/webhooks/", 10, URLPATH, 1},
    {"ghp_", 20, ALNUM, 0},              /* GitHub personal */
    {"gho_", 20, ALNUM, 0},              /* GitHub OAuth */
    {"ghu_", 20, ALNUM, 0},              /* GitHub user-to-server */
    {"ghs_", 20, ALNUM, 0},              /* GitHub server-to-server */
    {"ghr_", 20, ALNUM, 0},              /* GitHub refresh */
    {"github_pat_", 20, ALNUM_UNDER, 0}, /* GitHub fine-grained */
    {"glpat-", 20, ALNUM_DASH, 0},       /* GitLab personal */
    {"gldt-", 20, ALNUM_DASH, 0},        /* GitLab deploy */
    {"glrt-", 20, ALNUM_DASH, 0},        /* GitLab runner */
    {"glptt-", 20, ALNUM_DASH, 0},       /* GitLab pipeline trigger */
    {"gsk_", 40, ALNUM, 0},              /* Groq */
    {"glsa_", 32, ALNUM_UNDER, 0},       /* Grafana service account */
    {"glc_", 32, ALNUM_DASH, 0},         /* Grafana cloud */
    {"hf_", 30, ALNUM, 0},               /* Hugging Face */
    {"hvs.", 24, ALNUM_DASH, 0},         /* HashiCorp Vault service */
    {"hvb.", 24, ALNUM_DASH, 0},         /* HashiCorp Vault batch */
    {"hooks.slack.com/services/", 10, URLPATH, 1},
    {"hooks.slack.com/workflows/", 10, URLPATH, 1},
    {"hooks.slack.com/triggers/", 10, URLPATH, 1},
    {"hooks.zapier.com/hooks/catch/", 6, URLPATH, 1},
    {"key-", 32, ALNUM, 0},       /* Mailgun */
    {"lin_api_", 30, ALNUM, 0},   /* Linear */
    {"npm_", 36, ALNUM, 0},       /* npm */
    {"pypi-", 50, ALNUM_DASH, 0}, /* PyPI */
    {"pplx-", 40, ALNUM, 0},      /* Perplexity */
    {"rk_live_", 16, ALNUM, 0},   /* Stripe restricted */
    {"rk_test_", 16, ALNUM, 0},   /* Stripe restricted */
    {"r8_", 30, ALNUM, 0},        /* Replicate */
    {"sk-", 20, ALNUM_DASH, 0},   /* OpenAI, Anthropic sk-ant-, sk-proj- */
    {"sk_live_", 16, ALNUM, 0},   /* Stripe */
    {"sk_test_", 16, ALNUM, 0},   /* Stripe */
    {"shpat_", 32, ALNUM, 0},     /* Shopify */
    {"shpss_", 32, ALNUM, 0},     /* Shopify shared secret */
    {"shpca_", 32, ALNUM, 0},     /* Shopify custom app */
    {"shppa_", 32, ALNUM, 0},     /* Shopify private app */
    {"sbp_", 40, ALNUM, 0},       /* Supabase */
    {"whsec_", 24, ALNUM, 0},     /* Stripe webhook secret */
    {"webhook.office.com/webhookb2/", 10, URLPATH, 1},
    {"xoxb-", 10, ALNUM_DASH, 0}, /* Slack bot */
    {"xoxp-", 10, ALNUM_DASH, 0}, /* Slack user */
    {"xoxa-", 10, ALNUM_DASH, 0}, /* Slack app */
    {"xoxs-", 10, ALNUM_DASH, 0}, /* Slack session */
    {"xoxr-", 10, ALNUM_DASH, 0}, /* Slack refresh */
    {"xoxe.", 10, DOTTED, 0},     /* Slack rotating (xoxe.xoxp-...) */
    {"xoxe-", 10, ALNUM_DASH, 0}, /* Slack refresh */
    {"xapp-", 10, ALNUM_DASH, 0}, /* Slack app-level */
    {"ya29.", 30, DOTTED, 0},     /* Google OAuth access token */
};

struct word {
	const char *w;
	size_t n;
};
/* clang-format off */
#define W(x) {(x), sizeof(x) - 1}
/* clang-format on */

/* A name's last part that makes its value secret (a suffix: PGPASSWORD). */
static const struct word strong_words[] = {W("password"), W("passwd"),
    W("passphrase"), W("secret"), W("token"), W("apikey"), W("credential"),
    W("storepass"), W("keypass"), {NULL, 0}};

/* Short words secret only in a name of two parts or more (DB_PASS, GH_PAT). */
static const struct word weak_words[] = {W("pass"), W("pwd"), W("pw"), W("pat"),
    W("passin"), W("passout"), W("bearer"), {NULL, 0}};

/* AUTH alone is a secret after these, or as .npmrc's _auth, or a flag. */
static const struct word auth_kinds[] = {W("basic"), W("http"), W("proxy"),
    {NULL, 0}};

/* Parts that may follow the secret word: SECRET_KEY_BASE, PASSWORD_HASH. */
static const struct word tail_words[] = {W("base"), W("value"), W("b64"),
    W("base64"), W("hex"), W("hash"), W("str"), W("string"), W("raw"), W("enc"),
    {NULL, 0}};

/* A *_KEY is a secret after one of these (SIGNING_KEY, x-api-key). */
static const struct word key_kinds[] = {W("secret"), W("private"), W("signing"),
    W("sign"), W("encryption"), W("encrypt"), W("crypt"), W("master"), W("api"),
    W("access"), W("client"), W("app"), W("auth"), W("session"), W("license"),
    W("account"), W("service"), W("hmac"), W("jwt"), W("aes"), W("deploy"),
    W("admin"), W("shared"), W("storage"), W("subscription"), W("webhook"),
    W("cookie"), W("csrf"), W("recovery"), {NULL, 0}};

/* ...and never after these. */
static const struct word key_public[] = {W("public"), W("publishable"),
    W("pub"), {NULL, 0}};

static const struct word hooks[] = {W("hook"), {NULL, 0}};
static const struct word webhooks[] = {W("webhook"), {NULL, 0}};
static const struct word keys[] = {W("key"), W("keys"), {NULL, 0}};

enum name_kind { NK_NONE, NK_SECRET, NK_KEY, NK_AUTHZ };

/* Shell commands whose short options carry a password. */
enum {
	CTX_MYSQL = 1,  /* -pSECRET, attached */
	CTX_LOGIN = 2,  /* docker login -p SECRET, sshpass -p SECRET */
	CTX_USER = 4,   /* curl -u user:SECRET, --user, httpie -a */
	CTX_REDIS = 8,  /* redis-cli -a SECRET */
	CTX_NETRC = 16, /* machine h login u password SECRET */
};

static const struct {
	const char *word;
	unsigned ctx;
} commands[] = {
    {"mysql", CTX_MYSQL},
    {"mysqldump", CTX_MYSQL},
    {"mysqladmin", CTX_MYSQL},
    {"mysqlimport", CTX_MYSQL},
    {"mysqlcheck", CTX_MYSQL},
    {"mysqlsh", CTX_MYSQL},
    {"mariadb", CTX_MYSQL},
    {"mariadb-dump", CTX_MYSQL},
    {"mariadb-admin", CTX_MYSQL},
    {"login", CTX_LOGIN},
    {"sshpass", CTX_LOGIN},
    {"curl", CTX_USER},
    {"http", CTX_USER},
    {"https", CTX_USER},
    {"redis-cli", CTX_REDIS},
    {"machine", CTX_NETRC},
};

static int
is_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
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
		return (c >= 'A' && c <= 'Z') || is_digit(c);
	case DOTTED:
		return is_alnum(c) || c == '-' || c == '_' || c == '.';
	case URLPATH:
		return is_alnum(c) || c == '-' || c == '_' || c == '/' ||
		    c == '.' || c == '@';
	}
	return 0;
}

static int
is_token68(unsigned char c)
{
	return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
	    c == '+' || c == '/' || c == '=';
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

static int
space(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* Spaces at s[j], counted up to one past TR_REDACT_MAX_GAP. */
static size_t
gap(const unsigned char *s, size_t len, size_t j)
{
	size_t n = 0;

	while (j + n < len && space(s[j + n]) && n <= TR_REDACT_MAX_GAP)
		n++;
	return n;
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
	size_t k;

	/* no strlen(w): this runs at most bytes of the text */
	for (k = 0; w[k] != '\0'; k++) {
		unsigned char a, b = (unsigned char)w[k];
		if (i + k >= len)
			return 0;
		a = s[i + k];
		if (fold ? lower(a) != lower(b) : a != b)
			return 0;
	}
	return 1;
}

/* s[a..b) equals w, any case. */
static int
is_word(const unsigned char *s, size_t a, size_t b, const char *w)
{
	size_t k;

	for (k = 0; a + k < b; k++)
		if (w[k] == '\0' || lower(s[a + k]) != (unsigned char)w[k])
			return 0;
	return w[k] == '\0';
}

/* s[a..b) ends with w, any case. */
static int
ends_with(const unsigned char *s, size_t a, size_t b, const struct word *w)
{
	return b - a >= w->n && starts(s, b, b - w->n, w->w, 1);
}

static int
in_list(const unsigned char *s, size_t a, size_t b, const struct word *l)
{
	size_t k;

	for (k = 0; l[k].w != NULL; k++)
		if (b - a == l[k].n && is_word(s, a, b, l[k].w))
			return 1;
	return 0;
}

/* s[a..b) ends with one of l's words. */
static int
ends_in_list(const unsigned char *s, size_t a, size_t b, const struct word *l)
{
	size_t k;

	for (k = 0; l[k].w != NULL; k++)
		if (ends_with(s, a, b, &l[k]))
			return 1;
	return 0;
}

#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

int
tr_redact_shape(size_t k, const char **prefix, size_t *min, int *keep)
{
	if (k >= NSHAPES)
		return 0;
	*prefix = shapes[k].prefix;
	*min = shapes[k].min;
	*keep = shapes[k].keep;
	return 1;
}

/* The first row of shapes[] whose prefix starts with c, or NSHAPES. */
static size_t
shape_from(unsigned char c)
{
	size_t lo = 0, hi = NSHAPES, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((unsigned char)shapes[mid].prefix[0] < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < NSHAPES && (unsigned char)shapes[lo].prefix[0] == c ?
	    lo :
	    NSHAPES;
}

/* Does a secret start at s[i]? '*m' gets its length, '*keep' what stays. */
static int
token_shape(const unsigned char *s, size_t len, size_t i, size_t *m,
    size_t *keep)
{
	size_t k, n, body;

	for (k = shape_from(s[i]);
	     k < NSHAPES && (unsigned char)shapes[k].prefix[0] == s[i]; k++) {
		if (!starts(s, len, i, shapes[k].prefix, 0))
			continue;
		n = strlen(shapes[k].prefix);
		body = run(s, len, i + n, shapes[k].cls);
		if (body >= shapes[k].min) {
			*m = n + body;
			*keep = shapes[k].keep ? n : 0;
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

/*
 * -----BEGIN ... PRIVATE KEY----- (PEM, OpenSSH) or -----BEGIN PGP
 * PRIVATE KEY BLOCK----- through its -----END ...----- line, or to the
 * end of the text. The block may sit anywhere, its line breaks real or
 * written \n inside a JSON string.
 */
static int
key_block(const unsigned char *s, size_t len, size_t i, size_t *m)
{
	static const char tail[] = "PRIVATE KEY";
	size_t j, lim;

	if (!starts(s, len, i, "-----BEGIN ", 0))
		return 0;
	/* "PRIVATE KEY" starts at most TR_REDACT_MAX_PEM_LABEL bytes in */
	lim = len - i > 12 + TR_REDACT_MAX_PEM_LABEL ?
	    i + 12 + TR_REDACT_MAX_PEM_LABEL :
	    len;
	for (j = i + 11; j < lim && s[j] != '\n'; j++)
		if (starts(s, len, j, tail, 0))
			break;
	if (j >= lim || s[j] == '\n')
		return 0;
	j += strlen(tail);
	if (starts(s, len, j, " BLOCK", 0))
		j += 6;
	if (!starts(s, len, j, "-----", 0))
		return 0;
	j += 5;
	for (; j < len; j++)
		if (s[j] == '-' && starts(s, len, j, "-----END", 0))
			break;
	if (j >= len) {
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

/* "Bearer TOKEN" / "Basic TOKEN" anywhere: the scheme stays. */
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
	sp = gap(s, len, i + n);
	if (sp == 0 || sp > TR_REDACT_MAX_GAP)
		return 0;
	t = 0;
	while (i + n + sp + t < len && is_token68(s[i + n + sp + t]))
		t++;
	if (t < TR_REDACT_BEARER_MIN)
		return 0;
	*keep = n + sp;
	*m = n + sp + t;
	return 1;
}

/* scheme://user:PASSWORD@host: the password goes, up to the last '@'. */
static int
url_password(const unsigned char *s, size_t len, size_t i, size_t *m,
    size_t *keep)
{
	size_t j, colon = 0, at = 0;

	if (!starts(s, len, i, "://", 0))
		return 0;
	/* the '@' ends at most TR_REDACT_MAX_USERINFO bytes of user:password */
	for (j = i + 3; j < len && j <= i + 3 + TR_REDACT_MAX_USERINFO; j++) {
		unsigned char c = s[j];
		if (c == '/' || c == ' ' || c == '\n' || c == '\t' ||
		    c == '"' || c == '\'' || c == '<' || c == '>' ||
		    c == '\\' || c == '?' || c == '#')
			break;
		if (c == ':' && colon == 0)
			colon = j;
		else if (c == '@' && colon != 0)
			at = j;
	}
	if (colon == 0 || at == 0 || colon + 1 == at)
		return 0;
	*keep = colon + 1 - i;
	*m = at - i;
	return 1;
}

/* A Telegram bot token: <8-10 digits>:AA<33>; the part after ':' goes. */
static int
telegram(const unsigned char *s, size_t len, size_t i, size_t *m, size_t *keep)
{
	size_t d = 0, t;

	while (d < i && d <= 10 && is_digit(s[i - 1 - d]))
		d++;
	if (d < 8 || d > 10 || !starts(s, len, i + 1, "AA", 0))
		return 0;
	t = run(s, len, i + 1, ALNUM_DASH);
	if (t < 33)
		return 0;
	*keep = 1;
	*m = 1 + t;
	return 1;
}

/* An unquoted value ends at white space, a quote or a field's end. */
static int
value_end(const unsigned char *s, size_t len, size_t v)
{
	unsigned char c = s[v];

	if (c == '\\' && v + 1 < len && (s[v + 1] == '"' || s[v + 1] == '\''))
		return 1;
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '"' ||
	    c == '\'' || c == ',' || c == ';' || c == '&' || c == '}' ||
	    c == ')' || c == ']' || c == '`' || c == '|' || c == '<' ||
	    c == '>';
}

/*
 * The value at s[j]: quoted ("..", '..', or \"..\" inside a JSON
 * string) to its closing quote, else to value_end. '*a' gets where it
 * starts (past an opening quote), '*b' where it ends; a key block that
 * starts inside it extends it to the block's end. 0 if there is none,
 * or it is no literal: empty, already redacted, a $reference, a
 * {{template}} or a call.
 */
static int
value_at(const unsigned char *s, size_t len, size_t j, size_t *a, size_t *b)
{
	size_t v, lim, m;
	unsigned char q = 0;
	int esc = 0;

	if (j + 1 < len && s[j] == '\\' &&
	    (s[j + 1] == '"' || s[j + 1] == '\'')) {
		q = s[j + 1];
		esc = 1;
		j += 2;
	} else if (j < len && (s[j] == '"' || s[j] == '\'')) {
		q = s[j];
		j++;
	}
	if (q != 0) {
		/* the closing quote ends at most TR_REDACT_MAX_VALUE bytes */
		lim = len - j > TR_REDACT_MAX_VALUE ?
		    j + TR_REDACT_MAX_VALUE + 1 :
		    len;
		for (v = j; v < lim && s[v] != '\n'; v++) {
			if (esc && s[v] == '\\' && v + 1 < len && s[v + 1] == q)
				break;
			if (!esc && s[v] == '\\' && v + 1 < lim) {
				v++; /* an escaped byte, quote or not */
				continue;
			}
			if (!esc && s[v] == q)
				break;
		}
		/* unclosed within the bound: all of the line goes */
		if (v == lim)
			while (v < len && s[v] != '\n')
				v++;
	} else {
		/* a MARK inside is passed whole: ']' ends no value there */
		for (v = j; v < len && !value_end(s, len, v); v++)
			if (s[v] == '[' && starts(s, len, v, MARK, 0))
				v += sizeof(MARK) - 2;
	}
	/* already redacted: matched again, so the name stays unscanned as
	 * in the first pass, and not counted */
	if (starts(s, len, j, MARK, 0) && v == j + sizeof(MARK) - 1) {
		*a = j;
		*b = v;
		return 1;
	}
	if (v == j || starts(s, len, j, MARK, 0) || s[j] == '$' ||
	    starts(s, len, j, "{{", 0))
		return 0;
	if (q == 0) {
		/* a call or an index, f(...) x[...], is code, not a value */
		for (m = j;
		     m < v && (is_alnum(s[m]) || s[m] == '_' || s[m] == '.');
		     m++)
			;
		if (m > j && m < len && (s[m] == '(' || s[m] == '['))
			return 0;
		if (s[j] == '{' || s[j] == '[' || s[j] == '(')
			return 0;
	}
	for (m = j; m < v; m++) {
		size_t kb;
		if (s[m] == '-' && key_block(s, len, m, &kb)) {
			if (m + kb > v)
				v = m + kb;
			break;
		}
	}
	*a = j;
	*b = v;
	return 1;
}

/* Looks random: a bare *_KEY's value is redacted only then. */
static int
random_looking(const unsigned char *s, size_t a, size_t b)
{
	size_t k;
	int digit = 0, alpha = 0;

	if (b - a < TR_REDACT_KEY_MIN || s[a] == '/')
		return 0;
	for (k = a; k < b; k++) {
		if (is_digit(s[k]))
			digit = 1;
		else if (is_alnum(s[k]))
			alpha = 1;
		else if (s[k] != '-' && s[k] != '_' && s[k] != '+' &&
		    s[k] != '/' && s[k] != '=')
			return 0;
	}
	return digit && alpha;
}

/*
 * What the name s[a..b) says of its value. Its parts are split at
 * '_', '-', '.' and a lower-to-upper case change; a flag (-x, --x)
 * takes the short words alone too.
 */
static enum name_kind
name_kind(const unsigned char *s, size_t a, size_t b)
{
	size_t pa[TR_REDACT_MAX_PARTS], pb[TR_REDACT_MAX_PARTS];
	size_t n = 0, e = b, k, last, q;
	int flag = s[a] == '-';

	/* the last parts, from the end */
	k = b;
	while (k > a && n < TR_REDACT_MAX_PARTS) {
		unsigned char c = s[k - 1];
		if (c == '_' || c == '-' || c == '.') {
			if (e > k) {
				pa[n] = k;
				pb[n++] = e;
			}
			k--;
			e = k;
			continue;
		}
		if (k - 1 > a && c >= 'A' && c <= 'Z' &&
		    ((s[k - 2] >= 'a' && s[k - 2] <= 'z') ||
		        is_digit(s[k - 2]))) {
			pa[n] = k - 1;
			pb[n++] = e;
			k--;
			e = k;
			continue;
		}
		k--;
	}
	if (e > a && n < TR_REDACT_MAX_PARTS && k == a) {
		pa[n] = a;
		pb[n++] = e;
	}
	if (n == 0)
		return NK_NONE;
	/* parts are numbered from the end: 0 is the last */
	if (n >= 2 && pb[n - 1] - pa[n - 1] == 2 &&
	    is_word(s, pa[n - 1], pb[n - 1], "no"))
		return NK_NONE;
	last = 0;
	while (last + 1 < n && last < TR_REDACT_MAX_TAILS &&
	    in_list(s, pa[last], pb[last], tail_words))
		last++;
	/* a trailing number: PASSWORD2 */
	e = pb[last];
	while (e > pa[last] + 1 && is_digit(s[e - 1]))
		e--;
	if (is_word(s, pa[last], e, "authorization"))
		return NK_AUTHZ;
	if (ends_in_list(s, pa[last], e, strong_words))
		return NK_SECRET;
	if ((n - last >= 2 || flag || s[a] == '_') &&
	    in_list(s, pa[last], e, weak_words))
		return NK_SECRET;
	if (is_word(s, pa[last], e, "auth") &&
	    ((n == 1 && (flag || s[a] == '_')) ||
	        (last + 1 < n &&
	            in_list(s, pa[last + 1], pb[last + 1], auth_kinds))))
		return NK_SECRET;
	if ((is_word(s, pa[last], e, "url") ||
	        is_word(s, pa[last], e, "uri")) &&
	    last + 1 < n && ends_in_list(s, pa[last + 1], pb[last + 1], hooks))
		return NK_SECRET;
	if (ends_in_list(s, pa[last], e, webhooks))
		return NK_SECRET;
	if (!ends_in_list(s, pa[last], e, keys))
		return NK_NONE;
	/* SIGNINGKEY, apikey: the kind in the same part */
	q = lower(s[e - 1]) == 's' ? 4 : 3;
	if (e - pa[last] > q && in_list(s, pa[last], e - q, key_kinds))
		return NK_SECRET;
	for (k = last + 1; k < n && k <= last + TR_REDACT_KEY_REACH; k++) {
		if (in_list(s, pa[k], pb[k], key_public))
			return NK_NONE;
		if (in_list(s, pa[k], pb[k], key_kinds) ||
		    ends_in_list(s, pa[k], pb[k], strong_words))
			return NK_SECRET;
	}
	return NK_KEY;
}

/* After an Authorization header's separator: the scheme stays. */
static size_t
skip_scheme(const unsigned char *s, size_t len, size_t j)
{
	size_t k = j, q = 0;

	if (k + 1 < len && s[k] == '\\' &&
	    (s[k + 1] == '"' || s[k + 1] == '\''))
		q = 2;
	else if (k < len && (s[k] == '"' || s[k] == '\''))
		q = 1;
	k += q;
	while (k < len && k < j + q + TR_REDACT_MAX_NAME &&
	    ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z') ||
	        s[k] == '-'))
		k++;
	if (k == j + q || k >= len || !space(s[k]))
		return j;
	while (k < len && space(s[k]))
		k++;
	return k;
}

/*
 * NAME=VALUE, NAME: VALUE, "NAME": "VALUE", NAME := VALUE, NAME => VALUE,
 * --flag VALUE, --flag=VALUE, Authorization: SCHEME VALUE, with a
 * secret's name. '*keep' is what stays (the name, the separator).
 */
static int
assignment(const unsigned char *s, size_t len, size_t i, size_t *m,
    size_t *keep)
{
	size_t j, w, a, b, sp;
	enum name_kind nk;

	for (j = i; j < len && j - i <= TR_REDACT_MAX_NAME && ident(s[j]); j++)
		;
	w = j - i;
	if (w == 0 || w > TR_REDACT_MAX_NAME)
		return 0;
	nk = name_kind(s, i, j);
	if (nk == NK_NONE)
		return 0;
	if (j + 1 < len && s[j] == '\\' &&
	    (s[j + 1] == '"' || s[j + 1] == '\''))
		j += 2;
	else if (j < len && (s[j] == '"' || s[j] == '\''))
		j++;
	sp = gap(s, len, j);
	if (sp > TR_REDACT_MAX_GAP)
		return 0;
	j += sp;
	if (j < len && (s[j] == ':' || s[j] == '?') && j + 1 < len &&
	    s[j + 1] == '=')
		j += 2;
	else if (j + 1 < len && s[j] == '=' && s[j + 1] == '>')
		j += 2;
	else if (j < len && s[j] == '=' &&
	    !(j + 1 < len && (s[j + 1] == '=' || s[j + 1] == '~')))
		j++;
	else if (j < len && s[j] == ':' && s[i] != '-' &&
	    !(j + 1 < len && s[j + 1] == ':'))
		j++;
	else if (!(s[i] == '-' && sp > 0 && j < len && s[j] != '-'))
		return 0; /* a flag's value may follow a space */
	sp = gap(s, len, j);
	if (sp > TR_REDACT_MAX_GAP)
		return 0;
	j += sp;
	if (nk == NK_AUTHZ)
		j = skip_scheme(s, len, j);
	if (!value_at(s, len, j, &a, &b))
		return 0;
	if (nk == NK_KEY && !random_looking(s, a, b) &&
	    !(b - a == sizeof(MARK) - 1 && starts(s, len, a, MARK, 0)))
		return 0;
	*keep = a - i;
	*m = b - i;
	return 1;
}

/*
 * A short option of a command that takes a password (CTX_*): -pSECRET
 * after mysql, -p SECRET after login and sshpass, -a SECRET after
 * redis-cli; -u/--user/-U/--proxy-user/-a/--auth USER:SECRET after curl
 * and httpie, where only what follows the first ':' goes.
 */
static int
short_option(const unsigned char *s, size_t len, size_t i, unsigned ctx,
    size_t *m, size_t *keep)
{
	static const char *const user_flags[] = {"--proxy-user", "--user",
	    "--auth", "-u", "-U", "-a", NULL};
	size_t j, a, b, k, n;

	if ((ctx & CTX_MYSQL) && starts(s, len, i, "-p", 0) && i + 2 < len &&
	    !space(s[i + 2]) && s[i + 2] != '\n' && s[i + 2] != '-' &&
	    value_at(s, len, i + 2, &a, &b)) {
		*keep = a - i;
		*m = b - i;
		return 1;
	}
	if (((ctx & CTX_LOGIN) && starts(s, len, i, "-p", 0)) ||
	    ((ctx & CTX_REDIS) && starts(s, len, i, "-a", 0))) {
		n = gap(s, len, i + 2);
		j = i + 2 + n;
		if (n >= 1 && n <= TR_REDACT_MAX_GAP && j < len &&
		    s[j] != '-' && value_at(s, len, j, &a, &b)) {
			*keep = a - i;
			*m = b - i;
			return 1;
		}
		return 0;
	}
	if (!(ctx & CTX_USER))
		return 0;
	for (k = 0; user_flags[k] != NULL; k++) {
		n = strlen(user_flags[k]);
		if (!starts(s, len, i, user_flags[k], 0))
			continue;
		j = i + n;
		if (j < len && (s[j] == '=' || (n == 2 && !space(s[j]))))
			j += s[j] == '=';
		else if (gap(s, len, j) >= 1 &&
		    gap(s, len, j) <= TR_REDACT_MAX_GAP)
			j += gap(s, len, j);
		else
			return 0;
		if (j >= len || s[j] == '-' || !value_at(s, len, j, &a, &b))
			return 0;
		for (j = a; j < b && s[j] != ':'; j++)
			;
		if (j + 1 >= b)
			return 0;
		*keep = j + 1 - i;
		*m = b - i;
		return 1;
	}
	return 0;
}

/* A command word at s[i] followed by a space: its CTX_*, else 0. */
static unsigned
command_word(const unsigned char *s, size_t len, size_t i)
{
	size_t k, n;

	for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
		if (s[i] != (unsigned char)commands[k].word[0] ||
		    !starts(s, len, i, commands[k].word, 0))
			continue;
		n = strlen(commands[k].word);
		if (i + n < len && space(s[i + n]))
			return commands[k].ctx;
	}
	return 0;
}

/* .netrc: "password SECRET" after "machine" on the same line. */
static int
netrc_password(const unsigned char *s, size_t len, size_t i, size_t *m,
    size_t *keep)
{
	size_t n, a, b;

	if (!starts(s, len, i, "password", 0))
		return 0;
	n = gap(s, len, i + 8);
	if (n == 0 || n > TR_REDACT_MAX_GAP ||
	    !value_at(s, len, i + 8 + n, &a, &b))
		return 0;
	*keep = a - i;
	*m = b - i;
	return 1;
}

char *
pgn_redact(const char *str, size_t len, size_t *count)
{
	const unsigned char *s = (const unsigned char *)str;
	struct pgn_buf b;
	size_t i = 0, from = 0, m, keep, n = 0, max;
	unsigned char c, prev;
	unsigned ctx = 0;
	int tok, id, hit;

	if (!pgn_size_mul(len, 4, &max) || !pgn_size_add(max, 64, &max))
		return NULL;
	pgn_buf_init(&b, max);
	pgn_buf_add(&b, "", 0);
	while (i < len) {
		c = s[i];
		/* after a redaction the next byte sees the MARK's ']' */
		prev = i == 0 ? ' ' : i == from ? ']' : s[i - 1];
		/* a command ends at ;, |, & or an uncontinued line's end */
		if ((c == '\n' && prev != '\\') || c == ';' || c == '|' ||
		    c == '&') {
			ctx = 0;
			i++;
			continue;
		}
		/* tokens start after a non-word byte, names after a non-name */
		tok = !is_alnum(prev) && prev != '_';
		id = !ident(prev);
		m = 0;
		keep = 0;
		hit = 0;
		if (c == '-') {
			hit = key_block(s, len, i, &m);
			if (!hit && ctx != 0 && id)
				hit = short_option(s, len, i, ctx, &m, &keep);
		}
		if (!hit && tok)
			hit = token_shape(s, len, i, &m, &keep) ||
			    (c == 'e' && jwt(s, len, i, &m));
		if (!hit && tok && (c == 'b' || c == 'B'))
			hit = auth_scheme(s, len, i, &m, &keep);
		if (!hit && id && (ctx & CTX_NETRC) && c == 'p')
			hit = netrc_password(s, len, i, &m, &keep);
		if (!hit && id && ident(c))
			hit = assignment(s, len, i, &m, &keep);
		if (!hit && c == ':')
			hit = url_password(s, len, i, &m, &keep) ||
			    telegram(s, len, i, &m, &keep);
		if (hit) {
			pgn_buf_add(&b, s + from, i - from);
			pgn_buf_add(&b, s + i, keep);
			pgn_buf_adds(&b, MARK);
			/* MARK for MARK: a second pass is not counted */
			if (m - keep != sizeof(MARK) - 1 ||
			    !starts(s, len, i + keep, MARK, 0))
				n++;
			i += m;
			from = i;
			continue;
		}
		if (id && c >= 'a' && c <= 'z')
			ctx |= command_word(s, len, i);
		i++;
	}
	pgn_buf_add(&b, s + from, len - from);
	if (count != NULL)
		*count = n;
	return pgn_buf_take(&b, NULL);
}
