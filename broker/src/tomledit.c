/*
 * A minimal, byte-exact TOML editor: one scan of the document that
 * knows enough TOML (keys, the four string kinds, arrays, inline
 * tables, comments, headers) to find one table and one array of
 * strings in it, then one splice on the original text.
 * See docs/decisions/0074-codex-writable-root-toml-edit.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "tomledit.h"

/* A decoded key part or string element compared with ours. */
#define VAL_MAX (PGN_MAX_PATH * 2)

struct scan {
	const char *s;
	size_t len, i;
	char *err;
	size_t errlen;
	int bad;
};

/* A key: its first two parts, decoded (longer parts are never ours). */
struct key {
	size_t n;
	char part[2][PGN_MAX_TOML_KEY + 1];
};

/* What the scan found of [table] key. */
struct found {
	int table;           /* the header was seen */
	size_t hstart, hend; /* the header line, its line end included */
	size_t tend;         /* where the table's body ends */
	size_t body_lines;   /* key/value lines in the body */
	int array;           /* the key was seen, an array */
	size_t kstart, kend; /* the key's line, its line end included */
	size_t astart, aend; /* the array, brackets included */
	size_t n;            /* elements */
	size_t last_start, last_end; /* the last element */
	size_t last_comma;           /* a comma after the last element, or 0 */
	int multiline;               /* a line break inside the brackets */
	size_t indent_start;         /* the last element's line start */
	int indent_ok;               /* only blanks before it on its line */
	int hit;                     /* an element equals the value */
	size_t hit_start, hit_end;   /* the last such element */
	size_t hit_prev_end;         /* the element before it ends, or 0 */
	size_t hit_prev_comma;       /* the comma after that one, or 0 */
	size_t hit_comma;            /* the comma right after the hit, or 0 */
	size_t hit_next_start;       /* the element after it, or 0 */
};

static void
fail(struct scan *sc, const char *what)
{
	size_t k, line = 1, col = 1;

	if (sc->bad)
		return;
	sc->bad = 1;
	for (k = 0; k < sc->i && k < sc->len; k++) {
		if (sc->s[k] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	pgn_errf(sc->err, sc->errlen,
	    "is not TOML Pigeon can edit (line %zu, column %zu: %s)", line, col,
	    what);
}

static int
peek(const struct scan *sc, size_t k)
{
	return sc->i + k < sc->len ? (unsigned char)sc->s[sc->i + k] : -1;
}

static void
skip_blank(struct scan *sc)
{
	while (peek(sc, 0) == ' ' || peek(sc, 0) == '\t')
		sc->i++;
}

/* A comment up to (not including) the line end; control chars refused. */
static void
skip_comment(struct scan *sc)
{
	int c;

	if (peek(sc, 0) != '#')
		return;
	for (; (c = peek(sc, 0)) != -1 && c != '\n'; sc->i++) {
		if (c == '\r' && peek(sc, 1) == '\n')
			return;
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			fail(sc, "a control character in a comment");
			return;
		}
	}
}

/* A line end (LF or CRLF) or the end; else an error. */
static void
line_end(struct scan *sc)
{
	skip_blank(sc);
	skip_comment(sc);
	if (sc->bad || peek(sc, 0) == -1)
		return;
	if (peek(sc, 0) == '\r' && peek(sc, 1) == '\n')
		sc->i += 2;
	else if (peek(sc, 0) == '\n')
		sc->i++;
	else
		fail(sc, "unexpected text after a value");
}

/* Blanks, comments and line breaks (inside an array). */
static void
skip_space(struct scan *sc, int *newline)
{
	for (;;) {
		skip_blank(sc);
		skip_comment(sc);
		if (sc->bad)
			return;
		if (peek(sc, 0) == '\n') {
			sc->i++;
			*newline = 1;
		} else if (peek(sc, 0) == '\r' && peek(sc, 1) == '\n') {
			sc->i += 2;
			*newline = 1;
		} else {
			return;
		}
	}
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void
add_utf8(struct pgn_buf *b, unsigned long cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	pgn_buf_add(b, u, n);
}

/* One escape of a basic string, after its backslash. */
static void
escape(struct scan *sc, struct pgn_buf *dec, int multi)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	const char *p;
	unsigned long cp = 0;
	int c = peek(sc, 0), digits, k, h;

	if (c != -1 && (p = strchr(from, c)) != NULL && c != '\0') {
		pgn_buf_add(dec, &to[p - from], 1);
		sc->i++;
		return;
	}
	if (c == 'u' || c == 'U') {
		digits = c == 'u' ? 4 : 8;
		for (k = 1; k <= digits; k++) {
			h = hexval(peek(sc, (size_t)k));
			if (h < 0) {
				fail(sc, "a bad \\u escape");
				return;
			}
			cp = cp * 16 + (unsigned long)h;
		}
		if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) ||
		    cp > 0x10ffff) {
			fail(sc,
			    "an escape that is not a Unicode scalar (or is NUL)");
			return;
		}
		add_utf8(dec, cp);
		sc->i += (size_t)digits + 1;
		return;
	}
	if (multi) {
		/* A line-ending backslash trims the break and the blanks after.
		 */
		k = 0;
		while (
		    peek(sc, (size_t)k) == ' ' || peek(sc, (size_t)k) == '\t')
			k++;
		if (peek(sc, (size_t)k) == '\n' ||
		    (peek(sc, (size_t)k) == '\r' &&
		        peek(sc, (size_t)k + 1) == '\n')) {
			for (;;) {
				c = peek(sc, 0);
				if (c == ' ' || c == '\t' || c == '\n')
					sc->i++;
				else if (c == '\r' && peek(sc, 1) == '\n')
					sc->i += 2;
				else
					return;
			}
		}
	}
	fail(sc, "an unknown escape");
}

/* A string of any of the four kinds, decoded into 'dec'. */
static void
string(struct scan *sc, struct pgn_buf *dec)
{
	int q = peek(sc, 0), c, multi, n;

	multi = peek(sc, 1) == q && peek(sc, 2) == q;
	sc->i += multi ? 3 : 1;
	/* A line break right after the opening delimiter is trimmed. */
	if (multi && peek(sc, 0) == '\n')
		sc->i++;
	else if (multi && peek(sc, 0) == '\r' && peek(sc, 1) == '\n')
		sc->i += 2;
	for (;;) {
		c = peek(sc, 0);
		if (c == -1) {
			fail(sc, "a string that does not end");
			return;
		}
		if (c == q) {
			if (!multi) {
				sc->i++;
				return;
			}
			for (n = 0; peek(sc, (size_t)n) == q; n++)
				;
			if (n >= 3 && n <= 5) {
				/* Up to two quotes belong to the string. */
				pgn_buf_add(dec, sc->s + sc->i, (size_t)n - 3);
				sc->i += (size_t)n;
				return;
			}
			if (n > 5) {
				fail(sc, "too many quotes");
				return;
			}
			pgn_buf_add(dec, sc->s + sc->i, (size_t)n);
			sc->i += (size_t)n;
			continue;
		}
		if (c == '\\' && q == '"') {
			sc->i++;
			escape(sc, dec, multi);
			if (sc->bad)
				return;
			continue;
		}
		if (c == '\n' || (c == '\r' && peek(sc, 1) == '\n')) {
			if (!multi) {
				fail(sc, "a line break in a one-line string");
				return;
			}
		} else if ((c < 0x20 && c != '\t') || c == 0x7f) {
			fail(sc, "a control character in a string");
			return;
		}
		pgn_buf_add(dec, sc->s + sc->i, 1);
		sc->i++;
	}
}

static int
bare_key_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* A dotted key; its first two parts kept when they are short enough. */
static void
key(struct scan *sc, struct key *k)
{
	struct pgn_buf part;
	size_t start;
	int c;

	memset(k, 0, sizeof(*k));
	pgn_buf_init(&part, VAL_MAX);
	for (;;) {
		skip_blank(sc);
		pgn_buf_reset(&part);
		c = peek(sc, 0);
		if (c == '"' || c == '\'') {
			if (peek(sc, 1) == c && peek(sc, 2) == c) {
				fail(sc, "a multi-line string as a key");
				break;
			}
			string(sc, &part);
		} else if (bare_key_char(c)) {
			start = sc->i;
			while (bare_key_char(peek(sc, 0)))
				sc->i++;
			pgn_buf_add(&part, sc->s + start, sc->i - start);
		} else {
			fail(sc, "a key was expected");
		}
		if (sc->bad)
			break;
		if (k->n < 2 && part.err == PGN_OK &&
		    part.len <= PGN_MAX_TOML_KEY)
			memcpy(k->part[k->n],
			    part.data != NULL ? part.data : "", part.len);
		else if (k->n < 2)
			k->part[k->n][0] = '\001'; /* never a bare key */
		k->n++;
		skip_blank(sc);
		if (peek(sc, 0) != '.')
			break;
		sc->i++;
	}
	pgn_buf_release(&part);
}

static void value(struct scan *sc, int depth, struct found *f,
    const char *want);

/* A number, boolean or date: up to a delimiter (a space inside a date-time). */
static void
scalar(struct scan *sc)
{
	size_t start = sc->i;
	int c;

	for (;;) {
		c = peek(sc, 0);
		if (c == -1 || c == ' ' || c == '\t' || c == '\r' ||
		    c == '\n' || c == '#' || c == ',' || c == ']' || c == '}') {
			/* 1979-05-27 07:32:00: the space joins date and time.
			 */
			if (c == ' ' && sc->i - start == 10 &&
			    sc->s[start + 4] == '-' && peek(sc, 1) >= '0' &&
			    peek(sc, 1) <= '9') {
				sc->i++;
				continue;
			}
			break;
		}
		if (c < 0x21 || c > 0x7e || c == '"' || c == '\'' || c == '=' ||
		    c == '[' || c == '{') {
			fail(sc, "a value was expected");
			return;
		}
		sc->i++;
	}
	if (sc->i == start)
		fail(sc, "a value was expected");
}

/*
 * An array; with 'f', it is the one we edit: note its elements, and
 * which one is a string equal to 'want'.
 */
static void
array(struct scan *sc, int depth, struct found *f, const char *want)
{
	struct pgn_buf dec;
	size_t start, prev_end = 0, prev_comma = 0, ls;
	int nl = 0, is_hit, after_hit = 0;

	pgn_buf_init(&dec, VAL_MAX);
	if (f != NULL)
		f->astart = sc->i;
	sc->i++;
	for (;;) {
		skip_space(sc, &nl);
		if (sc->bad)
			break;
		if (peek(sc, 0) == ']') {
			sc->i++;
			break;
		}
		start = sc->i;
		is_hit = 0;
		if (f != NULL && (peek(sc, 0) == '"' || peek(sc, 0) == '\'')) {
			pgn_buf_reset(&dec);
			string(sc, &dec);
			is_hit = !sc->bad && dec.err == PGN_OK &&
			    dec.len == strlen(want) &&
			    memcmp(dec.data != NULL ? dec.data : "", want,
			        dec.len) == 0;
		} else {
			value(sc, depth + 1, NULL, NULL);
		}
		if (sc->bad)
			break;
		if (f != NULL) {
			if (after_hit)
				f->hit_next_start = start;
			after_hit = is_hit;
			f->n++;
			f->last_start = start;
			f->last_end = sc->i;
			f->last_comma = 0;
			for (ls = start; ls > 0 && sc->s[ls - 1] != '\n'; ls--)
				;
			f->indent_start = ls;
			f->indent_ok = 1;
			for (; ls < start; ls++)
				if (sc->s[ls] != ' ' && sc->s[ls] != '\t')
					f->indent_ok = 0;
			if (is_hit) {
				f->hit = 1;
				f->hit_start = start;
				f->hit_end = sc->i;
				f->hit_prev_end = prev_end;
				f->hit_prev_comma = prev_comma;
				f->hit_comma = 0;
				f->hit_next_start = 0;
			}
		}
		prev_end = sc->i;
		prev_comma = 0;
		skip_space(sc, &nl);
		if (sc->bad)
			break;
		if (peek(sc, 0) == ',') {
			prev_comma = sc->i;
			if (f != NULL) {
				f->last_comma = sc->i;
				/* Its comma, even past blanks or a comment. */
				if (is_hit)
					f->hit_comma = sc->i;
			}
			sc->i++;
			continue;
		}
		if (peek(sc, 0) == ']') {
			sc->i++;
			break;
		}
		fail(sc, "',' or ']' was expected in an array");
		break;
	}
	if (f != NULL) {
		f->aend = sc->i;
		f->multiline = nl;
	}
	pgn_buf_release(&dec);
}

/* An inline table: { k = v, ... } on one line. */
static void
inline_table(struct scan *sc, int depth)
{
	struct key k;

	sc->i++;
	skip_blank(sc);
	if (peek(sc, 0) == '}') {
		sc->i++;
		return;
	}
	for (;;) {
		key(sc, &k);
		if (sc->bad)
			return;
		if (peek(sc, 0) != '=') {
			fail(sc, "'=' was expected after a key");
			return;
		}
		sc->i++;
		skip_blank(sc);
		value(sc, depth + 1, NULL, NULL);
		if (sc->bad)
			return;
		skip_blank(sc);
		if (peek(sc, 0) == ',') {
			sc->i++;
			continue;
		}
		if (peek(sc, 0) == '}') {
			sc->i++;
			return;
		}
		fail(sc, "',' or '}' was expected in an inline table");
		return;
	}
}

static void
value(struct scan *sc, int depth, struct found *f, const char *want)
{
	struct pgn_buf dec;
	int c = peek(sc, 0);

	if (depth >= PGN_MAX_TOML_DEPTH) {
		fail(sc, "arrays or inline tables nested too deep");
		return;
	}
	if (c == '"' || c == '\'') {
		pgn_buf_init(&dec, VAL_MAX);
		string(sc, &dec);
		pgn_buf_release(&dec);
	} else if (c == '[') {
		array(sc, depth, f, want);
	} else if (c == '{') {
		inline_table(sc, depth);
	} else {
		scalar(sc);
	}
}

static int
key_is(const struct key *k, size_t i, const char *name)
{
	return k->n > i && strcmp(k->part[i], name) == 0;
}

/* The whole document: find [table] and its array 'name'. */
static pgn_status
scan_doc(const char *text, size_t len, const char *table, const char *name,
    const char *want, struct found *f, char *errbuf, size_t errlen)
{
	struct scan sc = {text, len, 0, errbuf, errlen, 0};
	struct key k;
	size_t ls;
	int in_root = 1, in_ours = 0, aot;

	memset(f, 0, sizeof(*f));
	if (memchr(text, '\0', len) != NULL) {
		pgn_errf(errbuf, errlen, "is not TOML (it holds a NUL byte)");
		return PGN_EINVAL;
	}
	/* A UTF-8 BOM is allowed before the first line. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		sc.i = 3;
	while (!sc.bad && sc.i < len) {
		ls = sc.i;
		skip_blank(&sc);
		skip_comment(&sc);
		if (peek(&sc, 0) == -1 || peek(&sc, 0) == '\n' ||
		    (peek(&sc, 0) == '\r' && peek(&sc, 1) == '\n')) {
			line_end(&sc);
			continue;
		}
		if (sc.bad)
			break;
		if (peek(&sc, 0) == '[') {
			if (in_ours)
				f->tend = ls;
			aot = peek(&sc, 1) == '[';
			sc.i += aot ? 2 : 1;
			key(&sc, &k);
			if (sc.bad)
				break;
			if (peek(&sc, 0) != ']' ||
			    (aot && peek(&sc, 1) != ']')) {
				fail(&sc,
				    "']' was expected after a table name");
				break;
			}
			sc.i += aot ? 2 : 1;
			line_end(&sc);
			in_root = 0;
			in_ours = k.n == 1 && key_is(&k, 0, table);
			if (in_ours && aot) {
				pgn_errf(errbuf, errlen,
				    "defines [[%s]] as an array of tables, which Pigeon does not edit",
				    table);
				return PGN_EINVAL;
			}
			if (in_ours && f->table) {
				pgn_errf(errbuf, errlen,
				    "defines [%s] twice (not valid TOML)",
				    table);
				return PGN_EINVAL;
			}
			if (in_ours) {
				f->table = 1;
				f->hstart = ls;
				f->hend = sc.i;
				f->tend = len;
			}
			continue;
		}
		key(&sc, &k);
		if (sc.bad)
			break;
		if (peek(&sc, 0) != '=') {
			fail(&sc, "'=' was expected after a key");
			break;
		}
		sc.i++;
		skip_blank(&sc);
		if (in_root && key_is(&k, 0, table)) {
			pgn_errf(errbuf, errlen,
			    "defines %s with a dotted key or an inline table, which Pigeon does not edit: write it as a [%s] table",
			    table, table);
			return PGN_EINVAL;
		}
		if (in_ours)
			f->body_lines++;
		if (in_ours && key_is(&k, 0, name)) {
			if (k.n > 1 || peek(&sc, 0) != '[') {
				pgn_errf(errbuf, errlen,
				    "has [%s] %s as something other than an array, which Pigeon does not edit",
				    table, name);
				return PGN_EINVAL;
			}
			if (f->array) {
				pgn_errf(errbuf, errlen,
				    "defines [%s] %s twice (not valid TOML)",
				    table, name);
				return PGN_EINVAL;
			}
			f->array = 1;
			f->kstart = ls;
			value(&sc, 0, f, want);
			if (!sc.bad)
				line_end(&sc);
			f->kend = sc.i;
			continue;
		}
		value(&sc, 0, NULL, NULL);
		if (!sc.bad)
			line_end(&sc);
	}
	return sc.bad ? PGN_EINVAL : PGN_OK;
}

char *
te_quote(const char *value)
{
	struct pgn_buf b;
	const unsigned char *p;

	pgn_buf_init(&b, VAL_MAX * 6 + 3);
	pgn_buf_adds(&b, "\"");
	for (p = (const unsigned char *)value; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			pgn_buf_addf(&b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			pgn_buf_addf(&b, "\\u%04x", *p);
		else
			pgn_buf_add(&b, p, 1);
	}
	pgn_buf_adds(&b, "\"");
	return pgn_buf_take(&b, NULL);
}

pgn_status
te_array_has(const char *text, size_t len, const char *table, const char *key,
    const char *value, int *has, char *errbuf, size_t errlen)
{
	struct found f;
	pgn_status rc;

	*has = 0;
	rc = scan_doc(text != NULL ? text : "", len, table, key, value, &f,
	    errbuf, errlen);
	*has = rc == PGN_OK && f.hit;
	return rc;
}

/* The line end the text uses: CRLF if its first line ends so. */
static const char *
eol_of(const char *text, size_t len)
{
	const char *nl = memchr(text, '\n', len);

	return nl != NULL && nl > text && nl[-1] == '\r' ? "\r\n" : "\n";
}

/* One splice: text[at, at + del) becomes 'ins'. */
struct splice {
	size_t at, del;
	struct pgn_buf ins;
};

/* The line Pigeon writes for a new key: KEY = ["VALUE"] # MARK */
static void
key_line(struct pgn_buf *b, const char *key, const char *q)
{
	pgn_buf_addf(b, "%s = [%s] # " TE_MARK, key, q);
}

static int
ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static void
plan_add(const char *text, size_t len, const struct found *f, const char *table,
    const char *key, const char *q, struct splice *sp)
{
	const char *eol = eol_of(text, len);
	size_t e;

	if (!f->table) {
		/*
		 * At the end, after a line end: a blank line before the header
		 * when the text ended with one, else just the missing one.
		 */
		sp->at = len;
		if (len > 0)
			pgn_buf_adds(&sp->ins, eol);
		pgn_buf_addf(&sp->ins, "[%s] # " TE_MARK "%s", table, eol);
		key_line(&sp->ins, key, q);
		pgn_buf_adds(&sp->ins, eol);
		return;
	}
	if (!f->array) {
		sp->at = f->hend;
		if (f->hend == len && !ends_with(text, len, "\n")) {
			pgn_buf_adds(&sp->ins, eol);
			key_line(&sp->ins, key, q);
		} else {
			key_line(&sp->ins, key, q);
			pgn_buf_adds(&sp->ins, eol);
		}
		return;
	}
	if (f->n == 0) {
		sp->at = f->astart + 1;
		pgn_buf_adds(&sp->ins, q);
		return;
	}
	if (f->last_comma != 0) {
		sp->at = f->last_comma + 1;
		/* On a line of its own, after a comment the comma's line has.
		 */
		for (e = sp->at; f->multiline && f->indent_ok &&
		     e + 1 < f->aend && text[e] != '\n';
		     e++)
			;
		if (f->multiline && f->indent_ok && e + 1 < f->aend)
			sp->at = e > 0 && text[e - 1] == '\r' ? e - 1 : e;
		if (f->multiline && f->indent_ok) {
			pgn_buf_adds(&sp->ins, eol);
			pgn_buf_add(&sp->ins, text + f->indent_start,
			    f->last_start - f->indent_start);
		} else {
			pgn_buf_adds(&sp->ins, " ");
		}
		pgn_buf_addf(&sp->ins, "%s,", q);
		return;
	}
	sp->at = f->last_end;
	pgn_buf_adds(&sp->ins, ",");
	if (f->multiline && f->indent_ok) {
		pgn_buf_adds(&sp->ins, eol);
		pgn_buf_add(&sp->ins, text + f->indent_start,
		    f->last_start - f->indent_start);
	} else {
		pgn_buf_adds(&sp->ins, " ");
	}
	pgn_buf_adds(&sp->ins, q);
}

/* Is text[s, e) exactly 'want' followed by a line end (or the end)? */
static int
line_is(const char *text, size_t len, size_t s, size_t e, const char *want)
{
	size_t k = strlen(want);

	if (e - s < k || memcmp(text + s, want, k) != 0)
		return 0;
	if (s + k == e)
		return e == len;
	return (e - s - k == 1 && text[s + k] == '\n') ||
	    (e - s - k == 2 && text[s + k] == '\r' && text[s + k + 1] == '\n');
}

/* Only blanks from 'i' to the end of its line? */
static int
rest_is_blank(const char *text, size_t len, size_t i)
{
	for (; i < len && (text[i] == ' ' || text[i] == '\t'); i++)
		;
	return i == len || text[i] == '\n' || text[i] == '\r';
}

static pgn_status
plan_remove(const char *text, size_t len, const struct found *f,
    const char *table, const char *key, const char *q, struct splice *sp)
{
	struct pgn_buf want;
	size_t s, e;

	pgn_buf_init(&want, VAL_MAX * 6 + 64);
	key_line(&want, key, q);
	if (want.err != PGN_OK)
		return want.err;
	if (f->n == 1 && line_is(text, len, f->kstart, f->kend, want.data)) {
		/* The key line as the add wrote it: the line goes. */
		s = f->kstart;
		e = f->kend;
		if (e == len && !ends_with(text, len, "\n"))
			s -= s >= 2 && text[s - 2] == '\r' ? 2 :
			                                     (s >= 1 ? 1 : 0);
		pgn_buf_reset(&want);
		pgn_buf_addf(&want, "[%s] # " TE_MARK, table);
		if (f->body_lines == 1 && f->kstart == f->hend && e == len &&
		    f->tend == len &&
		    line_is(text, len, f->hstart, f->hend, want.data) &&
		    ends_with(text, len, "\n")) {
			/* And the table the add created, with its line end. */
			s = f->hstart;
			if (s > 0 && text[s - 1] == '\n')
				s -= s >= 2 && text[s - 2] == '\r' ? 2 : 1;
		}
		sp->at = s;
		sp->del = e - s;
		pgn_buf_release(&want);
		return PGN_OK;
	}
	pgn_buf_release(&want);
	for (s = f->hit_start;
	     s > 0 && (text[s - 1] == ' ' || text[s - 1] == '\t'); s--)
		;
	if (f->hit_comma != 0 && s > 0 && text[s - 1] == '\n' &&
	    rest_is_blank(text, len, f->hit_comma + 1)) {
		/* Alone on its line: the line goes, with the break before it.
		 */
		s -= s >= 2 && text[s - 2] == '\r' ? 2 : 1;
		sp->at = s;
		sp->del = f->hit_comma + 1 - s;
	} else if (f->hit_comma != 0 && f->hit_prev_comma != 0) {
		sp->at = f->hit_prev_comma + 1;
		sp->del = f->hit_comma + 1 - sp->at;
	} else if (f->hit_prev_end != 0) {
		sp->at = f->hit_prev_end;
		sp->del = f->hit_end - sp->at;
	} else if (f->hit_next_start != 0) {
		sp->at = f->hit_start;
		sp->del = f->hit_next_start - sp->at;
	} else {
		sp->at = f->hit_start;
		sp->del = (f->hit_comma != 0 ? f->hit_comma + 1 : f->hit_end) -
		    sp->at;
	}
	return PGN_OK;
}

pgn_status
te_array_edit(const char *text, size_t len, const char *table, const char *key,
    const char *value, int add, size_t max, char **out, size_t *outlen,
    int *changed, char *errbuf, size_t errlen)
{
	struct found f;
	struct splice sp;
	struct pgn_buf b;
	char *q = NULL;
	char why[PGN_MAX_ERR];
	int has;
	pgn_status rc;

	*out = NULL;
	*outlen = 0;
	*changed = 0;
	if (text == NULL)
		text = "";
	memset(&sp, 0, sizeof(sp));
	pgn_buf_init(&sp.ins, VAL_MAX * 6 + 128);
	pgn_buf_init(&b, max);
	rc = scan_doc(text, len, table, key, value, &f, errbuf, errlen);
	if (rc != PGN_OK)
		goto out;
	rc = PGN_ENOMEM;
	q = te_quote(value);
	if (q == NULL)
		goto out;
	if (add && !f.hit)
		plan_add(text, len, &f, table, key, q, &sp);
	else if (!add && f.hit &&
	    (rc = plan_remove(text, len, &f, table, key, q, &sp)) != PGN_OK)
		goto out;
	if (sp.ins.err != PGN_OK) {
		rc = sp.ins.err;
		goto out;
	}
	*changed = sp.del > 0 || sp.ins.len > 0;
	pgn_buf_add(&b, text, sp.at);
	pgn_buf_add(&b, sp.ins.data != NULL ? sp.ins.data : "", sp.ins.len);
	if (!*changed)
		pgn_buf_add(&b, text + sp.at, len - sp.at);
	else
		pgn_buf_add(&b, text + sp.at + sp.del, len - sp.at - sp.del);
	if (b.err == PGN_ETOOBIG) {
		pgn_errf(errbuf, errlen, "would grow past %zu bytes", max);
		rc = PGN_ETOOBIG;
		goto out;
	}
	if (b.err != PGN_OK) {
		rc = b.err;
		goto out;
	}
	rc = PGN_ENOMEM;
	*outlen = b.len;
	*out = pgn_buf_take(&b, NULL);
	if (*out == NULL)
		goto out;
	/* The result must read back, holding the value or not. */
	rc = te_array_has(*out, *outlen, table, key, value, &has, why,
	    sizeof(why));
	if (rc == PGN_OK && add && !has)
		rc = PGN_EINVAL;
	if (rc != PGN_OK) {
		pgn_errf(errbuf, errlen,
		    "would not stay valid after Pigeon's edit: please report this");
		free(*out);
		*out = NULL;
		*outlen = 0;
		*changed = 0;
		rc = PGN_EINVAL;
		goto out;
	}
	rc = PGN_OK;
out:
	if (rc == PGN_ENOMEM && errbuf != NULL && errlen > 0)
		pgn_errf(errbuf, errlen, "out of memory");
	pgn_buf_release(&sp.ins);
	pgn_buf_release(&b);
	free(q);
	return rc;
}
