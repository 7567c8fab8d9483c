/*
 * A minimal, byte-exact TOML editor: one scan of the document that
 * knows enough TOML (keys, the four string kinds, arrays, inline
 * tables, comments, headers) to find one table and one array of
 * strings in it, then one splice on the original text.
 * See docs/decisions/0074-codex-writable-root-toml-edit.md, and 0133
 * for what counts as TOML (duplicates, values) and the empty file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "tomledit.h"

/* A decoded key part or string element compared with ours. */
#define VAL_MAX (PGN_MAX_PATH * 2)

/*
 * What the document defines, for the duplicate-key check: one node per
 * key, table and array of tables, as TOML 1.0 tells them apart. A table is
 * 'implicit' when a header only named it on the way to another ([a.b] makes a),
 * 'dotted' when a dotted key made it (a.b = 1 makes a); a header may define an
 * implicit table once, dotted keys may add to implicit and dotted ones (not to
 * an array of tables' element), and nothing is added to a value or an
 * inline table.
 */
enum kind { K_IMPLICIT, K_DOTTED, K_TABLE, K_AOT, K_VALUE, K_INLINE, K_SCOPE };

#define NO_NODE ((size_t)-1)
/* Slots of the model's first hash table (a power of two). */
#define MODEL_SLOTS 64
/* A key's path in an error: its last parts, each cut to bytes. */
#define PATH_PARTS 8
#define PATH_SHOWN 64

struct node {
	size_t parent; /* the node it is a key of; NO_NODE for the root */
	size_t at, n;  /* its name in the model's names (a key may be "") */
	size_t pos;    /* where it was defined (for the line number) */
	size_t cur;    /* K_AOT: its last element, a K_SCOPE */
	enum kind kind;
};

struct model {
	struct node *v;
	size_t n, cap;
	size_t *slot; /* hash of (parent, name): node + 1; 0 free */
	size_t nslot;
	struct pgn_buf names;
};

struct scan {
	const char *s;
	size_t len, i;
	struct pgn_err *err;
	int bad;
	int oom;             /* the model ran out of memory */
	struct model *m;     /* NULL: no duplicate-key check */
	size_t cur;          /* the table key/value lines go into */
	struct pgn_buf kall; /* the last key's parts, decoded, in a row */
	size_t *kend;        /* where each part ends in 'kall' */
	size_t kn, kcap;
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

static int
peek(const struct scan *sc, size_t k)
{
	return sc->i + k < sc->len ? (unsigned char)sc->s[sc->i + k] : -1;
}

static void
fail(struct scan *sc, const char *what)
{
	size_t k, line = 1, col = 1;

	if (sc->bad)
		return;
	sc->bad = 1;
	if (peek(sc, 0) == '\r' && peek(sc, 1) != '\n')
		what =
		    "a carriage return without a line feed: TOML lines end in LF or CRLF";
	for (k = 0; k < sc->i && k < sc->len; k++) {
		if (sc->s[k] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	pgn_err_set(sc->err, PGN_EINVAL,
	    "is not TOML Pigeon can edit (line %zu, column %zu: %s)", line, col,
	    what);
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
			h = pgn_hex_value(peek(sc, (size_t)k));
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

/* Note a decoded key part in sc->kall for the model; 0 on ENOMEM. */
static int
key_part(struct scan *sc, const struct pgn_buf *part)
{
	/* Both are bounded by the text's length: only ENOMEM fails. */
	pgn_buf_add(&sc->kall, part->data != NULL ? part->data : "", part->len);
	if (part->err != PGN_OK || sc->kall.err != PGN_OK ||
	    !pgn_vec_grow((void **)&sc->kend, &sc->kcap, sc->kn,
	        sizeof(*sc->kend))) {
		sc->oom = 1;
		fail(sc, "out of memory");
		return 0;
	}
	sc->kend[sc->kn++] = sc->kall.len;
	return 1;
}

/*
 * A dotted key; its first two parts kept when they are short enough,
 * and with a model every part in sc->kall.
 */
static void
key(struct scan *sc, struct key *k)
{
	struct pgn_buf part;
	size_t start;
	int c;

	memset(k, 0, sizeof(*k));
	sc->kn = 0;
	pgn_buf_reset(&sc->kall);
	/* A decoded part is never longer than the text it comes from. */
	pgn_buf_init(&part, sc->len < SIZE_MAX / 4 ? sc->len + 16 : SIZE_MAX);
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
		if (sc->m != NULL && !key_part(sc, &part))
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

/* ---- the model: what each key defines ------------------------------ */

static size_t
model_hash(size_t parent, const char *name, size_t n)
{
	uint64_t h = 14695981039346656037ULL;
	size_t k;

	for (k = 0; k < sizeof(parent); k++) {
		h ^= (parent >> (8 * k)) & 0xff;
		h *= 1099511628211ULL;
	}
	for (k = 0; k < n; k++) {
		h ^= (unsigned char)name[k];
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

static const char *
node_name(const struct model *m, size_t x)
{
	return m->names.data + m->v[x].at;
}

/* The node 'name' of 'parent', or NO_NODE. */
static size_t
model_find(const struct model *m, size_t parent, const char *name, size_t n)
{
	size_t h, x;

	if (m->nslot == 0)
		return NO_NODE;
	for (h = model_hash(parent, name, n) & (m->nslot - 1); m->slot[h] != 0;
	     h = (h + 1) & (m->nslot - 1)) {
		x = m->slot[h] - 1;
		if (m->v[x].parent == parent && m->v[x].n == n &&
		    memcmp(node_name(m, x), name, n) == 0)
			return x;
	}
	return NO_NODE;
}

static void
model_slot(struct model *m, size_t x)
{
	size_t h = model_hash(m->v[x].parent, node_name(m, x), m->v[x].n) &
	    (m->nslot - 1);

	while (m->slot[h] != 0)
		h = (h + 1) & (m->nslot - 1);
	m->slot[h] = x + 1;
}

/* Keep the hash at most half full. */
static int
model_grow(struct model *m)
{
	size_t *old = m->slot, nold = m->nslot, k, bytes;

	if (m->nslot != 0 && (m->n + 1) * 2 <= m->nslot)
		return 1;
	m->nslot = nold != 0 ? nold * 2 : MODEL_SLOTS;
	m->slot = pgn_size_mul(m->nslot, sizeof(*m->slot), &bytes) ?
	    calloc(1, bytes) :
	    NULL;
	if (m->slot == NULL) {
		m->slot = old;
		m->nslot = nold;
		return 0;
	}
	free(old);
	for (k = 0; k < m->n; k++)
		if (m->v[k].kind != K_SCOPE) /* a key may be "" */
			model_slot(m, k);
	return 1;
}

/*
 * A new node: a key 'name' of 'parent', or a scope (n 0: the root, an
 * element of an array of tables, an inline table in an array), which
 * no name finds. NO_NODE (and the scan stopped) on ENOMEM.
 */
static size_t
model_add(struct scan *sc, size_t parent, const char *name, size_t n,
    enum kind kind, size_t pos)
{
	struct model *m = sc->m;
	struct node *x;

	if (!pgn_vec_grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)) ||
	    !model_grow(m))
		goto oom;
	x = &m->v[m->n];
	x->parent = parent;
	x->at = m->names.len;
	x->n = n;
	x->pos = pos;
	x->cur = NO_NODE;
	x->kind = kind;
	/* Never NULL data: a name may be empty (""), a scope has none. */
	pgn_buf_add(&m->names, name, n);
	pgn_buf_add(&m->names, "", 1);
	if (m->names.err != PGN_OK)
		goto oom;
	m->n++;
	if (kind != K_SCOPE)
		model_slot(m, m->n - 1);
	return m->n - 1;
oom:
	sc->oom = 1;
	fail(sc, "out of memory");
	return NO_NODE;
}

static size_t
line_of(const struct scan *sc, size_t pos)
{
	size_t k, line = 1;

	for (k = 0; k < pos && k < sc->len; k++)
		line += sc->s[k] == '\n';
	return line;
}

/* A key part as TOML would write it: bare when it can be. */
static void
show_part(struct pgn_buf *b, const char *p, size_t n)
{
	size_t k, cut = n;

	if (cut > PATH_SHOWN) {
		cut = PATH_SHOWN;
		while (cut > 0 && ((unsigned char)p[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 sequence */
	}
	for (k = 0; k < n && bare_key_char((unsigned char)p[k]); k++)
		;
	if (n > 0 && k == n) {
		pgn_buf_add(b, p, cut);
		pgn_buf_adds(b, cut < n ? "..." : "");
		return;
	}
	pgn_buf_adds(b, "\"");
	for (k = 0; k < cut; k++) {
		if (p[k] == '"' || p[k] == '\\')
			pgn_buf_addf(b, "\\%c", p[k]);
		else if ((unsigned char)p[k] < 0x20 || p[k] == 0x7f)
			pgn_buf_addf(b, "\\u%04x", (unsigned char)p[k]);
		else
			pgn_buf_add(b, p + k, 1);
	}
	pgn_buf_adds(b, cut < n ? "...\"" : "\"");
}

/* Node 'x''s dotted path into 'b': its last PATH_PARTS parts. */
static void
show_path(const struct model *m, size_t x, struct pgn_buf *b)
{
	size_t part[PATH_PARTS], k = 0;

	for (; x != NO_NODE && k < PATH_PARTS; x = m->v[x].parent)
		if (m->v[x].kind != K_SCOPE)
			part[k++] = x;
	for (; x != NO_NODE && m->v[x].kind == K_SCOPE; x = m->v[x].parent)
		;
	if (x != NO_NODE)
		pgn_buf_adds(b, "...");
	while (k-- > 0) {
		show_part(b, node_name(m, part[k]), m->v[part[k]].n);
		if (k > 0)
			pgn_buf_adds(b, ".");
	}
}

/* 'x', defined at its place, defined again at 'pos': not TOML. */
static void
twice(struct scan *sc, size_t x, size_t pos)
{
	struct pgn_buf p;

	if (sc->bad)
		return;
	sc->bad = 1;
	pgn_buf_init(&p, PGN_MAX_ERRMSG);
	show_path(sc->m, x, &p);
	pgn_err_set(sc->err, PGN_EINVAL,
	    "defines %s twice (lines %zu and %zu), which is not valid TOML",
	    p.len > 0 ? p.data : "a key", line_of(sc, sc->m->v[x].pos),
	    line_of(sc, pos));
	pgn_buf_release(&p);
}

/* Part 'k' of the last key. */
static const char *
part_at(const struct scan *sc, size_t k, size_t *n)
{
	size_t from = k > 0 ? sc->kend[k - 1] : 0;

	*n = sc->kend[k] - from;
	return sc->kall.data != NULL ? sc->kall.data + from : "";
}

/*
 * Into table 't' through its key part 'k' of the last key, as a header
 * ('dotted' 0) or a dotted key does: the table there, made when
 * missing; NO_NODE (the scan stopped) where TOML forbids it.
 */
static size_t
descend(struct scan *sc, size_t t, size_t k, int dotted, size_t pos)
{
	const char *name;
	size_t n, x;

	name = part_at(sc, k, &n);
	x = model_find(sc->m, t, name, n);
	if (x == NO_NODE)
		return model_add(sc, t, name, n, dotted ? K_DOTTED : K_IMPLICIT,
		    pos);
	switch (sc->m->v[x].kind) {
	case K_AOT:
		/* A header goes into its last element; a dotted key not. */
		if (!dotted)
			return sc->m->v[x].cur;
		break;
	case K_IMPLICIT:
	case K_DOTTED:
		return x;
	case K_TABLE:
		if (!dotted)
			return x;
		break;
	default:
		break;
	}
	twice(sc, x, pos);
	return NO_NODE;
}

/* A header [a.b] or [[a.b]] (the last key) at 'pos': sc->cur is it. */
static void
model_header(struct scan *sc, int aot, size_t pos)
{
	const char *name;
	size_t t = 0, k, n, x;

	if (sc->m == NULL || sc->bad)
		return;
	for (k = 0; k + 1 < sc->kn && t != NO_NODE; k++)
		t = descend(sc, t, k, 0, pos);
	if (t == NO_NODE)
		return;
	name = part_at(sc, sc->kn - 1, &n);
	x = model_find(sc->m, t, name, n);
	if (x == NO_NODE) {
		x = model_add(sc, t, name, n, aot ? K_AOT : K_TABLE, pos);
	} else if (!aot && sc->m->v[x].kind == K_IMPLICIT) {
		sc->m->v[x].kind = K_TABLE;
		sc->m->v[x].pos = pos;
	} else if (!aot || sc->m->v[x].kind != K_AOT) {
		twice(sc, x, pos);
		return;
	}
	if (x == NO_NODE)
		return;
	sc->cur = x;
	if (aot) {
		/* A new element: what the last one held is not reachable. */
		sc->cur = model_add(sc, x, "", 0, K_SCOPE, pos);
		sc->m->v[x].cur = sc->cur;
	}
}

/*
 * The key of a key/value line in table 'scope' at 'pos' (its value an
 * inline table or not): its node, NO_NODE when not modelled or refused.
 */
static size_t
model_key(struct scan *sc, size_t scope, int inl, size_t pos)
{
	const char *name;
	size_t t = scope, k, n, x;

	if (sc->m == NULL || sc->bad || scope == NO_NODE)
		return NO_NODE;
	for (k = 0; k + 1 < sc->kn && t != NO_NODE; k++)
		t = descend(sc, t, k, 1, pos);
	if (t == NO_NODE)
		return NO_NODE;
	name = part_at(sc, sc->kn - 1, &n);
	x = model_find(sc->m, t, name, n);
	if (x != NO_NODE) {
		twice(sc, x, pos);
		return NO_NODE;
	}
	return model_add(sc, t, name, n, inl ? K_INLINE : K_VALUE, pos);
}

static void value(struct scan *sc, int depth, struct found *f, const char *want,
    size_t node, int fresh);

static int
digit_of(int c, int base)
{
	return base == 16 ? pgn_hex_value(c) >= 0 : c >= '0' && c < '0' + base;
}

/* Digits of 'base' from p[*i], an underscore only between two: 1 if any. */
static int
digit_run(const char *p, size_t n, size_t *i, int base)
{
	size_t k = *i;

	if (k >= n || !digit_of((unsigned char)p[k], base))
		return 0;
	for (k++; k < n; k++) {
		if (p[k] == '_' && k + 1 < n &&
		    digit_of((unsigned char)p[k + 1], base))
			k++;
		else if (!digit_of((unsigned char)p[k], base))
			break;
	}
	*i = k;
	return 1;
}

/* Is the integer p[s, e) of 'base' (underscores skipped) a 64-bit one? */
static int
int_fits(const char *p, size_t s, size_t e, int base, int neg)
{
	uint64_t v = 0, max = neg ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
	int d;

	for (; s < e; s++) {
		if (p[s] == '_')
			continue;
		d = pgn_hex_value((unsigned char)p[s]);
		if (v > (max - (uint64_t)d) / (uint64_t)base)
			return 0;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	return 1;
}

/* An integer (64-bit) or a float, as TOML 1.0 writes them. */
static int
number_ok(const char *p, size_t n)
{
	size_t i = 0, start;
	int base;

	if (n > 2 && p[0] == '0' &&
	    (p[1] == 'x' || p[1] == 'o' || p[1] == 'b')) {
		base = p[1] == 'x' ? 16 : p[1] == 'o' ? 8 : 2;
		i = 2;
		return digit_run(p, n, &i, base) && i == n &&
		    int_fits(p, 2, n, base, 0);
	}
	if (i < n && (p[i] == '+' || p[i] == '-'))
		i++;
	if (n - i == 3 &&
	    (memcmp(p + i, "inf", 3) == 0 || memcmp(p + i, "nan", 3) == 0))
		return 1;
	start = i;
	if (!digit_run(p, n, &i, 10) || (p[start] == '0' && i - start > 1))
		return 0; /* none, or a leading zero */
	if (i == n)
		return int_fits(p, start, n, 10, p[0] == '-');
	if (p[i] == '.') {
		i++;
		if (!digit_run(p, n, &i, 10))
			return 0;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (!digit_run(p, n, &i, 10))
			return 0;
	}
	return i == n;
}

/* Exactly 'count' decimal digits at p[*i], their value in [lo, hi]. */
static int
fixed(const char *p, size_t n, size_t *i, int count, int lo, int hi)
{
	int k, v = 0;

	for (k = 0; k < count; k++) {
		if (*i >= n || p[*i] < '0' || p[*i] > '9')
			return 0;
		v = v * 10 + (p[(*i)++] - '0');
	}
	return v >= lo && v <= hi;
}

static int
lit(const char *p, size_t n, size_t *i, char c)
{
	if (*i >= n || p[*i] != c)
		return 0;
	(*i)++;
	return 1;
}

/* HH:MM:SS with an optional fraction (a leap second allowed). */
static int
time_ok(const char *p, size_t n, size_t *i)
{
	size_t start;

	if (!fixed(p, n, i, 2, 0, 23) || !lit(p, n, i, ':') ||
	    !fixed(p, n, i, 2, 0, 59) || !lit(p, n, i, ':') ||
	    !fixed(p, n, i, 2, 0, 60))
		return 0;
	if (*i < n && p[*i] == '.') {
		start = ++*i;
		while (*i < n && p[*i] >= '0' && p[*i] <= '9')
			(*i)++;
		return *i > start;
	}
	return 1;
}

/* A local time, a local date, or a date-time, local or with an offset. */
static int
datetime_ok(const char *p, size_t n)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30,
	    31};
	size_t i = 0;
	int y, m, d;

	if (n > 2 && p[2] == ':')
		return time_ok(p, n, &i) && i == n;
	if (!fixed(p, n, &i, 4, 0, 9999) || !lit(p, n, &i, '-') ||
	    !fixed(p, n, &i, 2, 1, 12) || !lit(p, n, &i, '-') ||
	    !fixed(p, n, &i, 2, 1, 31))
		return 0;
	/* Their digits were checked above. */
	y = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + (p[2] - '0') * 10 +
	    (p[3] - '0');
	m = (p[5] - '0') * 10 + (p[6] - '0');
	d = (p[8] - '0') * 10 + (p[9] - '0');
	if (d > mdays[m - 1] ||
	    (m == 2 && d == 29 &&
	        (y % 4 != 0 || (y % 100 == 0 && y % 400 != 0))))
		return 0; /* no such day */
	if (i == n)
		return 1;
	if (p[i] != 'T' && p[i] != 't' && p[i] != ' ')
		return 0;
	i++;
	if (!time_ok(p, n, &i))
		return 0;
	if (i == n)
		return 1;
	if ((p[i] == 'Z' || p[i] == 'z') && i + 1 == n)
		return 1;
	if (p[i] != '+' && p[i] != '-')
		return 0;
	i++;
	return fixed(p, n, &i, 2, 0, 23) && lit(p, n, &i, ':') &&
	    fixed(p, n, &i, 2, 0, 59) && i == n;
}

/*
 * A number, boolean or date: up to a delimiter (a space inside a
 * date-time), then checked against TOML's grammar for each.
 */
static void
scalar(struct scan *sc)
{
	size_t start = sc->i, n;
	const char *p;
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
	if (sc->i == start) {
		fail(sc, "a value was expected");
		return;
	}
	n = sc->i - start;
	p = sc->s + start;
	if ((n == 4 && memcmp(p, "true", 4) == 0) ||
	    (n == 5 && memcmp(p, "false", 5) == 0) || number_ok(p, n) ||
	    datetime_ok(p, n))
		return;
	sc->i = start;
	fail(sc,
	    "a value that is not a TOML number, boolean or date; a string needs quotes");
}

/*
 * An array; with 'f', it is the one we edit: note its elements, and
 * which one is a string equal to 'want'.
 */
static void
array(struct scan *sc, int depth, struct found *f, const char *want,
    size_t node)
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
			value(sc, depth + 1, NULL, NULL, node, 1);
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

/* An inline table: { k = v, ... } on one line; its keys in 'scope'. */
static void
inline_table(struct scan *sc, int depth, size_t scope)
{
	struct key k;
	size_t at, node;

	sc->i++;
	skip_blank(sc);
	if (peek(sc, 0) == '}') {
		sc->i++;
		return;
	}
	for (;;) {
		skip_blank(sc);
		at = sc->i;
		key(sc, &k);
		if (sc->bad)
			return;
		if (peek(sc, 0) != '=') {
			fail(sc, "'=' was expected after a key");
			return;
		}
		sc->i++;
		skip_blank(sc);
		node = model_key(sc, scope, peek(sc, 0) == '{', at);
		if (sc->bad)
			return;
		value(sc, depth + 1, NULL, NULL, node, 0);
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

/*
 * A value of key 'node' (NO_NODE: not modelled); 'fresh': an element of
 * array 'node', so an inline table is a scope of its own.
 */
static void
value(struct scan *sc, int depth, struct found *f, const char *want,
    size_t node, int fresh)
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
		array(sc, depth, f, want, node);
	} else if (c == '{') {
		if (fresh && sc->m != NULL && node != NO_NODE)
			node = model_add(sc, node, "", 0, K_SCOPE, sc->i);
		if (!sc->bad)
			inline_table(sc, depth, node);
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
    const char *want, struct found *f, struct pgn_err *err)
{
	struct scan sc;
	struct model m;
	struct key k;
	size_t ls, node, t;
	int in_root = 1, in_ours = 0, aot;
	pgn_status rc = PGN_EINVAL;

	memset(f, 0, sizeof(*f));
	memset(&sc, 0, sizeof(sc));
	memset(&m, 0, sizeof(m));
	sc.s = text;
	sc.len = len;
	sc.err = err;
	sc.m = &m;
	/* A name is never longer than its key in the text, plus a NUL. */
	pgn_buf_init(&m.names, len < SIZE_MAX / 4 ? 2 * len + 16 : SIZE_MAX);
	pgn_buf_init(&sc.kall, len < SIZE_MAX / 4 ? len + 16 : SIZE_MAX);
	if (memchr(text, '\0', len) != NULL) {
		pgn_err_set(err, rc, "is not TOML (it holds a NUL byte)");
		goto out;
	}
	sc.cur = model_add(&sc, NO_NODE, "", 0, K_SCOPE, 0); /* the root */
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
			model_header(&sc, aot, ls);
			if (sc.bad)
				break;
			in_root = 0;
			in_ours = k.n == 1 && key_is(&k, 0, table);
			if (in_ours && aot) {
				pgn_err_set(err, rc,
				    "defines [[%s]] as an array of tables, which Pigeon does not edit",
				    table);
				goto out;
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
			pgn_err_set(err, rc,
			    "defines %s with a dotted key or an inline table, which Pigeon does not edit: write it as a [%s] table",
			    table, table);
			goto out;
		}
		if (in_ours && key_is(&k, 0, name) &&
		    (k.n > 1 || peek(&sc, 0) != '[')) {
			pgn_err_set(err, rc,
			    "has [%s] %s as something other than an array, which Pigeon does not edit",
			    table, name);
			goto out;
		}
		node = model_key(&sc, sc.cur, peek(&sc, 0) == '{', ls);
		if (sc.bad)
			break;
		if (in_ours)
			f->body_lines++;
		if (in_ours && key_is(&k, 0, name)) {
			f->array = 1;
			f->kstart = ls;
			value(&sc, 0, f, want, node, 0);
			if (!sc.bad)
				line_end(&sc);
			f->kend = sc.i;
			continue;
		}
		value(&sc, 0, NULL, NULL, node, 0);
		if (!sc.bad)
			line_end(&sc);
	}
	if (sc.bad)
		goto out;
	/* Where the add would write the key, something else already is. */
	t = model_find(&m, 0, table, strlen(table));
	if (!f->array && t != NO_NODE &&
	    model_find(&m, t, name, strlen(name)) != NO_NODE) {
		pgn_err_set(err, rc,
		    "defines [%s] %s as a table, which Pigeon does not edit",
		    table, name);
		goto out;
	}
	rc = PGN_OK;
out:
	if (sc.oom)
		rc = PGN_ENOMEM;
	free(m.v);
	free(m.slot);
	pgn_buf_release(&m.names);
	pgn_buf_release(&sc.kall);
	free(sc.kend);
	return rc;
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
    const char *value, int *has, struct pgn_err *err)
{
	struct found f;
	pgn_status rc;

	*has = 0;
	rc =
	    scan_doc(text != NULL ? text : "", len, table, key, value, &f, err);
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
plan_add(const char *text, size_t len, int absent, const struct found *f,
    const char *table, const char *key, const char *q, struct splice *sp)
{
	const char *eol = eol_of(text, len);
	size_t e;

	if (!f->table) {
		/*
		 * At the end, after a line end: a blank line before the header
		 * when the text ended with one, else just the missing one;
		 * also in an empty file, so that the removal can tell it from
		 * one the add created (that one starts with the header).
		 */
		sp->at = len;
		if (!absent)
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

/* The length of the line end that ends just before 'at' (0: none). */
static size_t
eol_before(const char *text, size_t at)
{
	if (at == 0 || text[at - 1] != '\n')
		return 0;
	return at >= 2 && text[at - 2] == '\r' ? 2 : 1;
}

/* Does text[s, e) hold Pigeon's mark? */
static int
has_mark(const char *text, size_t s, size_t e)
{
	size_t k = sizeof(TE_MARK) - 1;

	for (; s + k <= e; s++)
		if (memcmp(text + s, TE_MARK, k) == 0)
			return 1;
	return 0;
}

/*
 * text[s, e) without blanks, line ends and Pigeon's own "# added by
 * pigeon install" comments, into 'b'; 0 if another comment is there (a
 * user's words are never dropped).
 */
static int
squeeze(const char *text, size_t s, size_t e, struct pgn_buf *b)
{
	static const char mark[] = "# " TE_MARK;
	size_t i, k = sizeof(mark) - 1;

	for (i = s; i < e; i++) {
		if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' ||
		    text[i] == '\n')
			continue;
		if (text[i] == '#') {
			if (e - i < k || memcmp(text + i, mark, k) != 0 ||
			    !rest_is_blank(text, e, i + k))
				return 0;
			i += k - 1;
			continue;
		}
		/* a quoted '#' or blank is in the value: compared whole */
		if (text[i] == '"') {
			for (k = i + 1; k < e && text[k] != '"'; k++)
				if (text[k] == '\\')
					k++;
			pgn_buf_add(b, text + i, k + 1 - i);
			i = k;
			k = sizeof(mark) - 1;
			continue;
		}
		pgn_buf_add(b, text + i, 1);
	}
	return b->err == PGN_OK;
}

/*
 * In the table the add created (its header keeps Pigeon's mark), the
 * value is the array's one element in a shape other than the one the
 * add writes (the key line reformatted, its mark gone, spread over
 * lines): the key goes, since an empty array means what none does, and
 * the table with it when nothing but blanks is left in it (decision
 * 0183). A comment of the user's keeps the key. 1 when planned.
 */
static int
plan_remove_whole(const char *text, const struct found *f, const char *table,
    const char *key, const char *q, struct splice *sp)
{
	struct pgn_buf got, want;
	size_t s, e, i;
	int ok, whole = 0;

	/* Only in the table the add created: a user's stays as it was. */
	if (f->n != 1 || !f->table || !has_mark(text, f->hstart, f->hend))
		return 0;
	pgn_buf_init(&got, VAL_MAX * 6 + 256);
	pgn_buf_init(&want, VAL_MAX * 6 + 256);
	ok = squeeze(text, f->kstart, f->kend, &got);
	pgn_buf_addf(&want, "%s=[%s]", key, q);
	if (ok &&
	    !(got.len == want.len &&
	        memcmp(got.data, want.data, got.len) == 0)) {
		pgn_buf_reset(&want);
		pgn_buf_addf(&want, "%s=[%s,]", key, q);
		ok = got.len == want.len &&
		    memcmp(got.data, want.data, got.len) == 0;
	}
	if (!ok || want.err != PGN_OK) {
		ok = 0;
		goto out;
	}
	s = f->kstart;
	e = f->kend;
	/* The table too: its header plain or Pigeon's, its body blank. */
	pgn_buf_reset(&got);
	pgn_buf_reset(&want);
	pgn_buf_addf(&want, "[%s]", table);
	if (f->body_lines == 1 && squeeze(text, f->hstart, f->hend, &got) &&
	    got.len == want.len && memcmp(got.data, want.data, got.len) == 0) {
		whole = 1;
		for (i = f->hend; i < f->tend && whole; i++)
			if (i < f->kstart || i >= f->kend)
				whole = text[i] == ' ' || text[i] == '\t' ||
				    text[i] == '\r' || text[i] == '\n';
	}
	if (whole) {
		s = f->hstart;
		/* the blank line before it goes with it; first, the one after
		 */
		if (eol_before(text, s) > 0 &&
		    eol_before(text, s - eol_before(text, s)) > 0)
			s -= eol_before(text, s);
		else if (s == 0 && e < f->tend)
			e += text[e] == '\r' ? 2 : 1;
	}
	sp->at = s;
	sp->del = e - s;
out:
	pgn_buf_release(&got);
	pgn_buf_release(&want);
	return ok;
}

static pgn_status
plan_remove(const char *text, size_t len, const struct found *f,
    const char *table, const char *key, const char *q, struct splice *sp,
    int *gone)
{
	struct pgn_buf want;
	size_t s, e, drop, start;

	start = len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	pgn_buf_init(&want, VAL_MAX * 6 + 64);
	key_line(&want, key, q);
	if (want.err != PGN_OK)
		return want.err;
	if (f->n == 1 && line_is(text, len, f->kstart, f->kend, want.data)) {
		/* The key line as the add wrote it: the line goes. */
		s = f->kstart;
		e = f->kend;
		if (e == len && !ends_with(text, len, "\n"))
			s -= eol_before(text, s);
		pgn_buf_reset(&want);
		pgn_buf_addf(&want, "[%s] # " TE_MARK, table);
		if (f->body_lines == 1 && f->kstart == f->hend &&
		    line_is(text, len, f->hstart, f->hend, want.data)) {
			/*
			 * And the table the add created, left empty, with the
			 * line end the add put before it: at the end always;
			 * with text after it (tables the user added since),
			 * only when it made a blank line or began the file.
			 */
			s = f->hstart;
			drop = eol_before(text, s);
			if (e == len || s - drop == start ||
			    eol_before(text, s - drop) > 0)
				s -= drop;
			/* Nothing left of a file the add created. */
			*gone = f->hstart == 0 && e == len;
		}
		sp->at = s;
		sp->del = e - s;
		pgn_buf_release(&want);
		return PGN_OK;
	}
	pgn_buf_release(&want);
	if (plan_remove_whole(text, f, table, key, q, sp))
		return PGN_OK;
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
    int *changed, int *gone, struct pgn_err *err)
{
	struct found f;
	struct splice sp;
	struct pgn_buf b;
	char *q = NULL;
	struct pgn_err why;
	int has, absent = text == NULL, dummy;
	pgn_status rc;

	*out = NULL;
	*outlen = 0;
	*changed = 0;
	if (gone == NULL)
		gone = &dummy;
	*gone = 0;
	if (text == NULL) {
		text = "";
		len = 0;
	}
	memset(&sp, 0, sizeof(sp));
	pgn_buf_init(&sp.ins, VAL_MAX * 6 + 128);
	pgn_buf_init(&b, max);
	rc = scan_doc(text, len, table, key, value, &f, err);
	if (rc != PGN_OK)
		goto out;
	rc = PGN_ENOMEM;
	q = te_quote(value);
	if (q == NULL)
		goto out;
	if (add && !f.hit)
		plan_add(text, len, absent, &f, table, key, q, &sp);
	if (!add && f.hit) {
		rc = plan_remove(text, len, &f, table, key, q, &sp, gone);
		if (rc != PGN_OK)
			goto out;
	}
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
		rc = pgn_err_set(err, PGN_ETOOBIG, "would grow past %zu bytes",
		    max);
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
	rc = te_array_has(*out, *outlen, table, key, value, &has, &why);
	if (rc == PGN_OK && add && !has)
		rc = PGN_EINVAL;
	if (rc != PGN_OK) {
		pgn_err_set(err, rc,
		    "would not stay valid after Pigeon's edit: please report this");
		free(*out);
		*out = NULL;
		*outlen = 0;
		*changed = 0;
		*gone = 0;
		rc = PGN_EINVAL;
		goto out;
	}
	rc = PGN_OK;
out:
	if (rc == PGN_ENOMEM)
		pgn_err_set(err, rc, "out of memory");
	pgn_buf_release(&sp.ins);
	pgn_buf_release(&b);
	free(q);
	return rc;
}
