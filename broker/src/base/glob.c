/*
 * Lease patterns (decision 0153): gitignore-style globs checked and
 * normalized, matched against paths, and glob-against-glob overlap
 * decided exactly by a product automaton walked in order, on the stack.
 */
#include <stdint.h>
#include <string.h>

#include "pgn_glob.h"
#include "pgn_int.h"

/* Capacities of a compiled pattern: every valid normal form fits. */
#define PAT_TOKS   PGN_LEASE_NORM_SIZE           /* a token is >= 1 byte */
#define PAT_CLS    (PGN_LEASE_NORM_SIZE / 3 + 2) /* '[x]' is 3 bytes */
#define PAT_ITEMS  (PGN_LEASE_NORM_SIZE / 2 + 4) /* 'x/' is 2 bytes */
#define PATH_ITEMS (PGN_MAX_PATH / 2 + 1)        /* components of a path */

enum tok_kind { TOK_END, TOK_LIT, TOK_CLASS, TOK_STAR };

/* One token of a component: a byte, a class (index in cls), or '*'. */
struct tok {
	uint8_t kind;
	uint8_t c;
	uint16_t cls;
};

/* A component (tokens first..first+n) or '**' (any number of them). */
struct item {
	uint16_t first;
	uint16_t n;
	uint8_t dstar;
	uint8_t ne; /* the component matches some name ('.', '..' are none) */
};

/* A compiled pattern; a path is a side too, its bytes its tokens. */
struct side {
	const struct tok *tok; /* NULL: the literal bytes of 'lit' */
	const unsigned char *lit;
	const uint8_t (*cls)[32];
	const struct item *item;
	size_t n;
};

struct pat {
	struct tok tok[PAT_TOKS + 2];
	uint8_t cls[PAT_CLS][32];
	struct item item[PAT_ITEMS];
	size_t ntok, ncls, nitem;
};

/* '?' and '*': any byte of a name (not NUL, not '/'). Class 0 of each. */
static const uint8_t any_bm[32] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff};

/* Why a pattern's text is refused (message in check_fail). */
enum gerr {
	G_OK,
	G_ESC,       /* a '\' escaping nothing (at the end, or before '/') */
	G_UNCLOSED,  /* '[' without its ']' */
	G_SLASH,     /* '/' inside [...] */
	G_RANGE,     /* a range running backwards */
	G_CLASSNAME, /* [:name:] unknown */
	G_FULL,      /* over a capacity (only a norm no check made) */
};

static int
bit(const uint8_t *bm, unsigned c)
{
	return (bm[c >> 3] >> (c & 7)) & 1;
}

static void
bit_set(uint8_t *bm, unsigned c)
{
	bm[c >> 3] |= (uint8_t)(1u << (c & 7));
}

/* The POSIX classes, ASCII only (no locale in a library). */
static int
posix_class(const char *name, size_t len, uint8_t *bm)
{
	static const char *const names[] = {"alnum", "alpha", "blank", "cntrl",
	    "digit", "graph", "lower", "print", "punct", "space", "upper",
	    "xdigit"};
	size_t k, which = sizeof(names) / sizeof(names[0]);
	unsigned c;

	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strlen(names[k]) == len && memcmp(names[k], name, len) == 0)
			which = k;
	if (which == sizeof(names) / sizeof(names[0]))
		return 0;
	if (bm == NULL)
		return 1;
	for (c = 1; c < 128; c++) {
		int up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z';
		int dg = c >= '0' && c <= '9', pr = c >= 0x20 && c < 0x7f;
		int in = 0;

		switch (which) {
		case 0:
			in = up || lo || dg;
			break;
		case 1:
			in = up || lo;
			break;
		case 2:
			in = c == ' ' || c == '\t';
			break;
		case 3:
			in = !pr;
			break;
		case 4:
			in = dg;
			break;
		case 5:
			in = pr && c != ' ';
			break;
		case 6:
			in = lo;
			break;
		case 7:
			in = pr;
			break;
		case 8:
			in = pr && c != ' ' && !up && !lo && !dg;
			break;
		case 9:
			in = c == ' ' || (c >= '\t' && c <= '\r');
			break;
		case 10:
			in = up;
			break;
		default:
			in = dg || (c >= 'a' && c <= 'f') ||
			    (c >= 'A' && c <= 'F');
			break;
		}
		if (in)
			bit_set(bm, c);
	}
	return 1;
}

/*
 * The class opening at s[i] ('['), within s[0..len): its end (after the
 * ']') in '*end', its bytes in 'bm' if not NULL. gitignore's (wildmatch)
 * syntax: '!' or '^' negates, a first ']' is a member, 'a-z' a range,
 * '\x' the byte x, '[:name:]' a POSIX class; never NUL or '/'.
 */
static enum gerr
class_scan(const char *s, size_t i, size_t len, uint8_t *bm, size_t *end)
{
	size_t j = i + 1, k;
	int neg = 0, first = 1;
	unsigned lo, hi, c;

	if (bm != NULL)
		memset(bm, 0, 32);
	if (j < len && (s[j] == '!' || s[j] == '^')) {
		neg = 1;
		j++;
	}
	for (;;) {
		if (j >= len)
			return G_UNCLOSED;
		if (s[j] == ']' && !first)
			break;
		first = 0;
		if (s[j] == '[' && j + 1 < len && s[j + 1] == ':') {
			for (k = j + 2; k + 1 < len && s[k] != ']'; k++)
				if (s[k] == ':' && s[k + 1] == ']')
					break;
			if (k + 1 < len && s[k] == ':' && s[k + 1] == ']') {
				if (!posix_class(s + j + 2, k - j - 2, bm))
					return G_CLASSNAME;
				j = k + 2;
				continue;
			}
		}
		if (s[j] == '\\') {
			if (j + 1 >= len)
				return G_UNCLOSED;
			j++;
		}
		if (s[j] == '/')
			return G_SLASH;
		lo = (unsigned char)s[j++];
		hi = lo;
		if (j + 1 < len && s[j] == '-' && s[j + 1] != ']') {
			j++;
			if (s[j] == '\\') {
				if (j + 1 >= len)
					return G_UNCLOSED;
				j++;
			}
			if (s[j] == '/')
				return G_SLASH;
			hi = (unsigned char)s[j++];
			if (hi < lo)
				return G_RANGE;
		}
		if (bm != NULL)
			for (c = lo; c <= hi; c++)
				bit_set(bm, c);
	}
	*end = j + 1;
	if (bm != NULL) {
		if (neg)
			for (k = 0; k < 32; k++)
				bm[k] = (uint8_t)~bm[k];
		for (k = 0; k < 32; k++)
			bm[k] &= any_bm[k];
	}
	return G_OK;
}

/* Text being built: a normal form, or a component of one. */
struct ntext {
	char *p;
	size_t len, cap;
};

static void
nt_add(struct ntext *t, const char *s, size_t n)
{
	if (t == NULL)
		return;
	if (t->len + n < t->cap)
		memcpy(t->p + t->len, s, n);
	t->len += n; /* past cap: the caller sees len >= cap */
}

#define F_DSTAR  1u /* the whole component is '**' (or more stars) */
#define F_DOT    2u /* it is the name '.' */
#define F_DOTDOT 4u /* it is '..' */

static enum gerr
add_tok(struct pat *pt, unsigned kind, unsigned c, size_t cls)
{
	if (pt == NULL)
		return G_OK;
	if (pt->ntok >= PAT_TOKS)
		return G_FULL;
	pt->tok[pt->ntok].kind = (uint8_t)kind;
	pt->tok[pt->ntok].c = (uint8_t)c;
	pt->tok[pt->ntok].cls = (uint16_t)cls;
	pt->ntok++;
	return G_OK;
}

/*
 * One component's text s[0..len) (no '/' in it outside escapes, which
 * are errors): its tokens to 'pt', its normal text to 'out' (either may
 * be NULL), what it is to '*flags'. The normal text drops needless
 * escapes and runs of '*'.
 */
static enum gerr
comp_scan(const char *s, size_t len, struct pat *pt, struct ntext *out,
    unsigned *flags)
{
	size_t k = 0, run, end, nlit = 0;
	int litonly = 1, dots = 1;
	enum gerr e;
	char c;

	*flags = 0;
	while (k < len) {
		c = s[k];
		if (c == '*') {
			for (run = 0; k + run < len && s[k + run] == '*'; run++)
				;
			litonly = 0;
			if (run >= 2 && k == 0 && run == len) {
				*flags |= F_DSTAR;
				nt_add(out, "**", 2);
				return G_OK;
			}
			nt_add(out, "*", 1);
			e = add_tok(pt, TOK_STAR, 0, 0);
			if (e != G_OK)
				return e;
			k += run;
		} else if (c == '?') {
			litonly = 0;
			nt_add(out, "?", 1);
			e = add_tok(pt, TOK_CLASS, 0, 0);
			if (e != G_OK)
				return e;
			k++;
		} else if (c == '[') {
			uint8_t *bm = NULL;

			litonly = 0;
			if (pt != NULL) {
				if (pt->ncls >= PAT_CLS)
					return G_FULL;
				bm = pt->cls[pt->ncls];
			}
			e = class_scan(s, k, len, bm, &end);
			if (e != G_OK)
				return e;
			if (pt != NULL) {
				e = add_tok(pt, TOK_CLASS, 0, pt->ncls);
				if (e != G_OK)
					return e;
				pt->ncls++;
			}
			nt_add(out, s + k, end - k);
			k = end;
		} else {
			if (c == '\\') {
				if (k + 1 >= len || s[k + 1] == '/')
					return G_ESC;
				c = s[++k];
				if (c == '*' || c == '?' || c == '[' ||
				    c == '\\')
					nt_add(out, "\\", 1);
			}
			nt_add(out, &c, 1);
			e = add_tok(pt, TOK_LIT, (unsigned char)c, 0);
			if (e != G_OK)
				return e;
			nlit++;
			if (c != '.')
				dots = 0;
			k++;
		}
	}
	if (litonly && dots && nlit == 1)
		*flags |= F_DOT;
	if (litonly && dots && nlit == 2)
		*flags |= F_DOTDOT;
	return G_OK;
}

/* The end of the component starting at s[i] (a '/' or len). */
static enum gerr
comp_end(const char *s, size_t i, size_t len, size_t *end)
{
	enum gerr e;

	while (i < len && s[i] != '/') {
		if (s[i] == '\\') {
			if (i + 1 >= len || s[i + 1] == '/')
				return G_ESC;
			i += 2;
		} else if (s[i] == '[') {
			e = class_scan(s, i, len, NULL, &i);
			if (e != G_OK)
				return e;
		} else {
			i++;
		}
	}
	*end = i;
	return G_OK;
}

/* ---- automata ---------------------------------------------------------- */

/*
 * A name is being read: nothing yet, ".", "..", or anything else (a
 * name). Tracked beside the two patterns so '.' and '..' never count.
 */
#define ST_E  1u
#define ST_D1 2u
#define ST_D2 4u
#define ST_OK 8u

/* The states after one byte that may be '.' ('dot') or not ('other'). */
static unsigned
step(unsigned m, int dot, int other)
{
	unsigned r = 0;

	if (dot) {
		if (m & ST_E)
			r |= ST_D1;
		if (m & ST_D1)
			r |= ST_D2;
		if (m & (ST_D2 | ST_OK))
			r |= ST_OK;
	}
	if (other && m != 0)
		r |= ST_OK;
	return r;
}

/* A token as a set of bytes. */
struct tset {
	unsigned kind;
	unsigned c;
	const uint8_t *bm;
};

static void
tok_at(const struct side *s, const struct item *it, size_t p, struct tset *t)
{
	const struct tok *k;

	t->bm = NULL;
	t->c = 0;
	if (p >= it->n) {
		t->kind = TOK_END;
		return;
	}
	if (s->tok == NULL) {
		t->kind = TOK_LIT;
		t->c = s->lit[it->first + p];
		return;
	}
	k = &s->tok[it->first + p];
	t->kind = k->kind;
	t->c = k->c;
	if (k->kind == TOK_CLASS)
		t->bm = s->cls[k->cls];
}

/* Whether the bytes both tokens accept include '.', and another byte. */
static void
meet(const struct tset *a, const struct tset *b, int *dot, int *other)
{
	size_t k;
	uint8_t w;

	if (a->kind == TOK_LIT || b->kind == TOK_LIT) {
		const struct tset *l = a->kind == TOK_LIT ? a : b;
		const struct tset *o = l == a ? b : a;
		int in = o->kind == TOK_LIT ? o->c == l->c : bit(o->bm, l->c);

		*dot = in && l->c == '.';
		*other = in && l->c != '.';
		return;
	}
	*dot = bit(a->bm, '.') && bit(b->bm, '.');
	*other = 0;
	for (k = 0; k < 32; k++) {
		w = (uint8_t)(a->bm[k] & b->bm[k]);
		if (k == ('.' >> 3))
			w = (uint8_t)(w & ~(1u << ('.' & 7)));
		if (w != 0)
			*other = 1;
	}
}

static void
solo(const struct tset *t, int *dot, int *other)
{
	struct tset any = {TOK_CLASS, 0, any_bm};

	meet(t, &any, dot, other);
}

/*
 * Do components a and b share a name? The product of their token
 * automata and the name state, walked row by row: a token moves only
 * forward, so each (p, q) cell is final once the cells before it are.
 * Rows run over the shorter component; (n + 1) * (m + 1) cells.
 */
static int
comp_meet(const struct side *sa, const struct item *a, const struct side *sb,
    const struct item *b, uint64_t *cells)
{
	unsigned char row[2][PAT_TOKS + 3];
	unsigned char *cur = row[0], *nxt = row[1], *t;
	const struct side *ss;
	const struct item *si;
	struct tset ta, tb;
	size_t n, m, p, q, i;
	unsigned mk;
	int dot, other;

	if (b->n > a->n) {
		ss = sa;
		sa = sb;
		sb = ss;
		si = a;
		a = b;
		b = si;
	}
	n = a->n;
	m = b->n;
	if (m > PAT_TOKS + 1)
		return 0;
	memset(cur, 0, m + 2);
	cur[0] = ST_E;
	for (p = 0;; p++) {
		memset(nxt, 0, m + 2);
		tok_at(sa, a, p, &ta);
		for (q = 0; q <= m; q++) {
			mk = cur[q];
			if (mk == 0)
				continue;
			(*cells)++;
			tok_at(sb, b, q, &tb);
			if (ta.kind == TOK_STAR && tb.kind == TOK_STAR) {
				/* both stay on any byte: a name of any kind */
				for (i = 0; i < 3; i++)
					mk |= step(mk, 1, 1);
				cur[q] = (unsigned char)mk;
			}
			if (ta.kind == TOK_STAR)
				nxt[q] |= (unsigned char)mk;
			if (tb.kind == TOK_STAR)
				cur[q + 1] |= (unsigned char)mk;
			if (ta.kind == TOK_STAR &&
			    (tb.kind == TOK_LIT || tb.kind == TOK_CLASS)) {
				solo(&tb, &dot, &other);
				cur[q + 1] |=
				    (unsigned char)step(mk, dot, other);
			}
			if (tb.kind == TOK_STAR &&
			    (ta.kind == TOK_LIT || ta.kind == TOK_CLASS)) {
				solo(&ta, &dot, &other);
				nxt[q] |= (unsigned char)step(mk, dot, other);
			}
			if ((ta.kind == TOK_LIT || ta.kind == TOK_CLASS) &&
			    (tb.kind == TOK_LIT || tb.kind == TOK_CLASS)) {
				meet(&ta, &tb, &dot, &other);
				nxt[q + 1] |=
				    (unsigned char)step(mk, dot, other);
			}
		}
		if (p == n)
			return (cur[m] & ST_OK) != 0;
		t = cur;
		cur = nxt;
		nxt = t;
	}
}

/*
 * Do sides a and b cover a common path? The product of their component
 * sequences, row by row as in comp_meet; rows run over b, which is a
 * pattern. A cell whose two components must meet asks comp_meet once.
 */
static int
seq_meet(const struct side *a, const struct side *b, uint64_t *cells)
{
	unsigned char row[2][PAT_ITEMS + 2];
	unsigned char *cur = row[0], *nxt = row[1], *t;
	const struct item *ia, *ib;
	size_t i, j;

	if (b->n > PAT_ITEMS)
		return 0;
	memset(cur, 0, b->n + 2);
	cur[0] = 1;
	for (i = 0;; i++) {
		memset(nxt, 0, b->n + 2);
		ia = i < a->n ? &a->item[i] : NULL;
		for (j = 0; j <= b->n; j++) {
			if (!cur[j])
				continue;
			(*cells)++;
			ib = j < b->n ? &b->item[j] : NULL;
			if (ia != NULL && ia->dstar)
				nxt[j] = 1;
			if (ib != NULL && ib->dstar)
				cur[j + 1] = 1;
			if (ia == NULL || ib == NULL)
				continue;
			if (ia->dstar && !ib->dstar && ib->ne)
				cur[j + 1] = 1;
			if (!ia->dstar && ib->dstar && ia->ne)
				nxt[j] = 1;
			if (!ia->dstar && !ib->dstar && !nxt[j + 1] &&
			    comp_meet(a, ia, b, ib, cells))
				nxt[j + 1] = 1;
		}
		if (i == a->n)
			return cur[b->n];
		t = cur;
		cur = nxt;
		nxt = t;
	}
}

static void
pat_side(const struct pat *pt, struct side *s)
{
	s->tok = pt->tok;
	s->lit = NULL;
	s->cls = (const uint8_t(*)[32])pt->cls;
	s->item = pt->item;
	s->n = pt->nitem;
}

static int
add_item(struct pat *pt, size_t first, size_t n, int dstar)
{
	struct item *it;

	if (pt->nitem >= PAT_ITEMS)
		return 0;
	it = &pt->item[pt->nitem++];
	it->first = (uint16_t)first;
	it->n = (uint16_t)n;
	it->dstar = (uint8_t)dstar;
	it->ne = 0;
	return 1;
}

/*
 * Compile normal form 'norm' (anchored, components split by single
 * slashes). A '**' is any number of components, but a trailing one is
 * one or more (as gitignore's 'dir' then '**' does not match dir itself),
 * compiled as '*' then '**'. 0 if 'norm' is not a normal form.
 */
static int
pat_compile(const char *norm, struct pat *pt, uint64_t *cells)
{
	struct side s;
	struct item star;
	size_t len, i, end, k, first;
	unsigned flags;

	len = strnlen(norm, PGN_LEASE_NORM_SIZE);
	if (len == 0 || len >= PGN_LEASE_NORM_SIZE)
		return 0;
	pt->ntok = pt->nitem = 0;
	memcpy(pt->cls[0], any_bm, sizeof(any_bm));
	pt->ncls = 1;
	for (i = 0;; i = end + 1) {
		if (comp_end(norm, i, len, &end) != G_OK || end == i)
			return 0;
		first = pt->ntok;
		if (comp_scan(norm + i, end - i, pt, NULL, &flags) != G_OK ||
		    (flags & (F_DOT | F_DOTDOT)) != 0)
			return 0;
		if ((flags & F_DSTAR) == 0) {
			if (!add_item(pt, first, pt->ntok - first, 0))
				return 0;
		} else if (pt->nitem == 0 || !pt->item[pt->nitem - 1].dstar) {
			if (!add_item(pt, first, 0, 1))
				return 0;
		}
		if (end == len)
			break;
	}
	/* the star token, for a trailing '**' and for the 'ne' flags */
	if (pt->ntok >= PAT_TOKS + 2)
		return 0;
	pt->tok[pt->ntok].kind = TOK_STAR;
	pt->tok[pt->ntok].c = 0;
	pt->tok[pt->ntok].cls = 0;
	star.first = (uint16_t)pt->ntok++;
	star.n = 1;
	star.dstar = 0;
	star.ne = 1;
	if (pt->item[pt->nitem - 1].dstar) {
		pt->item[pt->nitem - 1] = star;
		if (!add_item(pt, 0, 0, 1))
			return 0;
	}
	pat_side(pt, &s);
	for (k = 0; k < pt->nitem; k++)
		if (!pt->item[k].dstar)
			pt->item[k].ne = (uint8_t)comp_meet(&s, &pt->item[k],
			    &s, &star, cells);
	return 1;
}

int
pgn_glob_overlap_cells(const char *a, const char *b, uint64_t *cells)
{
	struct pat pa, pb;
	struct side sa, sb;

	if (a == NULL || b == NULL || !pat_compile(a, &pa, cells) ||
	    !pat_compile(b, &pb, cells))
		return 0;
	pat_side(&pa, &sa);
	pat_side(&pb, &sb);
	return seq_meet(&sa, &sb, cells);
}

/*
 * 1 when component 'p' (of 'n' bytes, a '/' after it) is literal: no
 * '*', '?', '[' or '\\', so it matches one name, itself.
 */
static int
comp_literal(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '\\')
			return 0;
	return 1;
}

/*
 * 0 when 'a' and 'b' cannot overlap because at the same place, with
 * every component before it literal and equal in both, each has a
 * literal component followed by '/' and the two differ: every path one
 * matches has that name there, every path of the other a different
 * one. 1 otherwise: the product automaton decides. A lease take checks
 * its patterns against every lease of the scope, most of them under
 * other directories: this spares compiling them (decision 0208).
 */
static int
may_overlap(const char *a, const char *b)
{
	const char *ea, *eb;
	size_t na, nb;

	for (;;) {
		ea = strchr(a, '/');
		eb = strchr(b, '/');
		if (ea == NULL || eb == NULL || ea == a || eb == b)
			return 1;
		na = (size_t)(ea - a);
		nb = (size_t)(eb - b);
		if (!comp_literal(a, na) || !comp_literal(b, nb))
			return 1;
		if (na != nb || memcmp(a, b, na) != 0)
			return 0;
		a = ea + 1;
		b = eb + 1;
	}
}

int
pgn_glob_overlap(const char *a, const char *b)
{
	uint64_t cells = 0;

	if (a != NULL && b != NULL && !may_overlap(a, b))
		return 0;
	return pgn_glob_overlap_cells(a, b, &cells);
}

int
pgn_glob_match(const char *norm, const char *path)
{
	struct pat pt;
	struct item items[PATH_ITEMS];
	struct side sp, ss;
	size_t len, i, end, n = 0;
	uint64_t cells = 0;

	if (norm == NULL || path == NULL)
		return 0;
	len = strnlen(path, PGN_MAX_PATH);
	if (len == 0 || len >= PGN_MAX_PATH || path[0] == '/')
		return 0;
	for (i = 0;; i = end + 1) {
		const char *e = memchr(path + i, '/', len - i);

		end = e != NULL ? (size_t)(e - path) : len;
		if (end == i || (end - i == 1 && path[i] == '.') ||
		    (end - i == 2 && path[i] == '.' && path[i + 1] == '.') ||
		    n >= PATH_ITEMS)
			return 0;
		items[n].first = (uint16_t)i;
		items[n].n = (uint16_t)(end - i);
		items[n].dstar = 0;
		items[n].ne = 1;
		n++;
		if (end == len)
			break;
	}
	if (!pat_compile(norm, &pt, &cells))
		return 0;
	sp.tok = NULL;
	sp.lit = (const unsigned char *)path;
	sp.cls = NULL;
	sp.item = items;
	sp.n = n;
	pat_side(&pt, &ss);
	return seq_meet(&sp, &ss, &cells);
}

/* ---- checking and normalizing ------------------------------------------ */

static pgn_status
check_fail(struct pgn_err *err, enum gerr e, const char *pattern)
{
	switch (e) {
	case G_ESC:
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' has a '\\' that escapes nothing: write '\\\\' for a literal backslash",
		    pattern);
	case G_UNCLOSED:
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' has a '[' without its ']': close the class, or write '\\[' for a literal '['",
		    pattern);
	case G_SLASH:
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' has a '/' inside [...]: a class stands for one character of a name",
		    pattern);
	case G_RANGE:
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' has a range that runs backwards in [...]: write it low to high, as in '[a-z]'",
		    pattern);
	case G_CLASSNAME:
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' names an unknown class in [...]: the classes are [:alnum:], [:alpha:], [:blank:], [:cntrl:], [:digit:], [:graph:], [:lower:], [:print:], [:punct:], [:space:], [:upper:] and [:xdigit:]",
		    pattern);
	default:
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' is too complex to normalize", pattern);
	}
}

/* A component of the normal form being built: its text in 'txt'. */
struct ncomp {
	uint16_t off, len;
	uint8_t dstar;
};

pgn_status
pgn_glob_check(const char *pattern, char *norm, size_t normlen,
    struct pgn_err *err)
{
	char txt[PGN_LEASE_NORM_SIZE];
	struct ncomp comp[PGN_MAX_LEASE_PATTERN / 2 + 2];
	struct ncomp fin[PGN_MAX_LEASE_PATTERN / 2 + 6];
	struct ntext t = {txt, 0, sizeof(txt)};
	struct ntext o = {norm, 0, normlen};
	size_t len, end, i, e, k, ncomp = 0, nfin = 0;
	int anchored, dironly;
	unsigned flags;
	enum gerr ge;

	if (norm != NULL && normlen > 0)
		norm[0] = '\0';
	if (pattern == NULL || pattern[0] == '\0')
		return pgn_err_set(err, PGN_EINVAL,
		    "empty lease pattern: give a path relative to the scope root, as in 'src/api/**'");
	len = strnlen(pattern, PGN_MAX_LEASE_PATTERN + 1);
	if (len > PGN_MAX_LEASE_PATTERN)
		return pgn_err_set(err, PGN_ETOOBIG,
		    "lease pattern is over the limit of %d bytes: lease a directory ('dir/') or a shorter glob",
		    PGN_MAX_LEASE_PATTERN);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)pattern[i];

		if (c < 0x20 || c == 0x7f)
			return pgn_err_set(err, PGN_EINVAL,
			    "lease pattern has a control byte (0x%02x) at offset %zu: a pattern is a printable path",
			    c, i);
	}
	if (pattern[0] == '/')
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' is an absolute path: give it relative to the scope root",
		    pattern);
	if (pattern[0] == '!')
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' starts with '!': a lease cannot exclude paths; write '\\!' for a name that starts with '!'",
		    pattern);
	for (end = len; end > 0 && pattern[end - 1] == '/'; end--)
		;
	dironly = end < len;
	/* gitignore: a separator before the end anchors at the root */
	anchored = memchr(pattern, '/', end) != NULL;
	for (i = 0; i < end; i = e + 1) {
		ge = comp_end(pattern, i, end, &e);
		if (ge != G_OK)
			return check_fail(err, ge, pattern);
		if (e > i) {
			k = t.len;
			ge = comp_scan(pattern + i, e - i, NULL, &t, &flags);
			if (ge != G_OK)
				return check_fail(err, ge, pattern);
			if (flags & F_DOT) {
				t.len = k;
			} else if (flags & F_DOTDOT) {
				t.len = k;
				if (ncomp == 0)
					return pgn_err_set(err, PGN_EINVAL,
					    "lease pattern '%s' leaves the scope root through '..'",
					    pattern);
				if (comp[ncomp - 1].dstar)
					return pgn_err_set(err, PGN_EINVAL,
					    "lease pattern '%s' has '..' after '**', which has no one parent to go back to: remove the '..'",
					    pattern);
				t.len = comp[--ncomp].off;
			} else {
				comp[ncomp].off = (uint16_t)k;
				comp[ncomp].len = (uint16_t)(t.len - k);
				comp[ncomp].dstar =
				    (uint8_t)((flags & F_DSTAR) != 0);
				ncomp++;
			}
		}
		if (e >= end)
			break;
	}
	if (ncomp == 0) {
		/* '.', './', 'a/..': the whole scope */
		fin[nfin++] = (struct ncomp){0, 0, 1};
	} else {
		if (!anchored)
			fin[nfin++] = (struct ncomp){0, 0, 1};
		for (k = 0; k < ncomp; k++)
			if (!comp[k].dstar || nfin == 0 || !fin[nfin - 1].dstar)
				fin[nfin++] = comp[k];
		if (dironly) {
			/*
			 * 'd/' covers what is below the directories d names,
			 * as 'd' then '**' does; but a trailing '**' is one or
			 * more components, so 'x' '**' '/' becomes 'x' '*'
			 * '**'.
			 */
			if (fin[nfin - 1].dstar)
				fin[nfin - 1] = (struct ncomp){0, 0, 0};
			fin[nfin++] = (struct ncomp){0, 0, 1};
		}
	}
	for (k = 0; k < nfin; k++) {
		if (k > 0)
			nt_add(&o, "/", 1);
		if (fin[k].dstar)
			nt_add(&o, "**", 2);
		else if (fin[k].len == 0)
			nt_add(&o, "*", 1);
		else
			nt_add(&o, txt + fin[k].off, fin[k].len);
	}
	if (norm == NULL || o.len >= normlen) {
		if (norm != NULL && normlen > 0)
			norm[0] = '\0';
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s': no room for its normal form (%zu bytes): pass PGN_LEASE_NORM_SIZE",
		    pattern, normlen);
	}
	norm[o.len] = '\0';
	if (!pgn_glob_overlap(norm, norm)) {
		norm[0] = '\0';
		return pgn_err_set(err, PGN_EINVAL,
		    "lease pattern '%s' matches no path: '.' and '..' are not names",
		    pattern);
	}
	return PGN_OK;
}
