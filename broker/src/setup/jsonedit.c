/*
 * Format-preserving JSON editing: a strict tokenizer and parser that
 * records byte spans, pending edits on the tree, and their application
 * as text splices that keep every other byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonedit.h"
#include "pgn_int.h"
#include "pigeon/setup.h"

/* ---- parsing -------------------------------------------------------- */

struct parser {
	const char *s;
	size_t len, pos;
	int comments;
	int depth;
	size_t errpos;   /* where the text stops being JSON */
	int bad;         /* 1: not JSON; 2: a key twice (dupkey set) */
	char dupkey[65]; /* copied: the node holding it is freed first */
	pgn_status err;  /* PGN_ENOMEM */
};

static void
node_free(struct je_node *x)
{
	struct je_node *c, *next;

	if (x == NULL)
		return;
	for (c = x->child; c != NULL; c = next) {
		next = c->next;
		node_free(c);
	}
	free(x->key);
	free(x->str);
	cJSON_Delete(x->add);
	free(x);
}

static int
fail(struct parser *p)
{
	if (!p->bad) {
		p->bad = 1;
		p->errpos = p->pos;
	}
	return 0;
}

static int
ws(struct parser *p)
{
	const char *s = p->s;

	while (p->pos < p->len) {
		char c = s[p->pos];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			p->pos++;
			continue;
		}
		if (!p->comments || c != '/' || p->pos + 1 >= p->len)
			break;
		if (s[p->pos + 1] == '/') {
			while (p->pos < p->len && s[p->pos] != '\n')
				p->pos++;
		} else if (s[p->pos + 1] == '*') {
			p->pos += 2;
			while (p->pos + 1 < p->len &&
			    !(s[p->pos] == '*' && s[p->pos + 1] == '/'))
				p->pos++;
			if (p->pos + 1 >= p->len) {
				p->pos = p->len;
				return fail(p);
			}
			p->pos += 2;
		} else {
			break;
		}
	}
	return 1;
}

static int
hex4(struct parser *p, size_t at, unsigned *out)
{
	unsigned v = 0;
	size_t i;
	int h;

	if (at + 4 > p->len)
		return 0;
	for (i = 0; i < 4; i++) {
		h = pgn_hex_value(p->s[at + i]);
		if (h < 0)
			return 0;
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return 1;
}

static void
utf8_add(struct pgn_buf *b, unsigned cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	pgn_buf_add(b, u, n);
}

/* A string at p->pos (the quote), decoded into '*out'. */
static int
string(struct parser *p, char **out)
{
	struct pgn_buf b;
	unsigned cp, lo;
	char c;

	*out = NULL;
	/* Decoded, a string is never longer than the text it is in. */
	pgn_buf_init(&b, p->len + 1);
	p->pos++;
	for (;;) {
		if (p->pos >= p->len)
			goto bad;
		c = p->s[p->pos];
		if (c == '"')
			break;
		if ((unsigned char)c < 0x20)
			goto bad;
		if (c != '\\') {
			/* A run of plain bytes at once (Claude's state file).
			 */
			size_t run = p->pos + 1;

			while (run < p->len && p->s[run] != '"' &&
			    p->s[run] != '\\' &&
			    (unsigned char)p->s[run] >= 0x20)
				run++;
			pgn_buf_add(&b, p->s + p->pos, run - p->pos);
			p->pos = run;
			continue;
		}
		if (p->pos + 1 >= p->len)
			goto bad;
		c = p->s[p->pos + 1];
		p->pos += 2;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			pgn_buf_add(&b, &c, 1);
			continue;
		case 'b':
			pgn_buf_adds(&b, "\b");
			continue;
		case 'f':
			pgn_buf_adds(&b, "\f");
			continue;
		case 'n':
			pgn_buf_adds(&b, "\n");
			continue;
		case 'r':
			pgn_buf_adds(&b, "\r");
			continue;
		case 't':
			pgn_buf_adds(&b, "\t");
			continue;
		case 'u':
			break;
		default:
			p->pos -= 1;
			goto bad;
		}
		if (!hex4(p, p->pos, &cp) || cp == 0)
			goto bad;
		p->pos += 4;
		/* A surrogate pair is one character; a lone half stays. */
		if (cp >= 0xd800 && cp < 0xdc00 && p->pos + 1 < p->len &&
		    p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u' &&
		    hex4(p, p->pos + 2, &lo) && lo >= 0xdc00 && lo < 0xe000) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			p->pos += 6;
		}
		utf8_add(&b, cp);
	}
	p->pos++;
	if (b.err != PGN_OK) {
		p->err = b.err;
		pgn_buf_release(&b);
		return 0;
	}
	*out = b.len > 0 ? pgn_buf_take(&b, NULL) : pgn_strdup("");
	pgn_buf_release(&b);
	if (*out == NULL) {
		p->err = PGN_ENOMEM;
		return 0;
	}
	return 1;
bad:
	pgn_buf_release(&b);
	return fail(p);
}

static int
digits(struct parser *p)
{
	size_t at = p->pos;

	while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
		p->pos++;
	return p->pos > at;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as text. */
static int
number(struct parser *p)
{
	if (p->pos < p->len && p->s[p->pos] == '-')
		p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '0')
		p->pos++;
	else if (!digits(p))
		return fail(p);
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		if (!digits(p))
			return fail(p);
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len &&
		    (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (!digits(p))
			return fail(p);
	}
	return 1;
}

static int
literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
		return fail(p);
	p->pos += n;
	return 1;
}

static int
cmp_key(const void *a, const void *b)
{
	const struct je_node *x = *(const struct je_node *const *)a;
	const struct je_node *y = *(const struct je_node *const *)b;

	return strcmp(x->key, y->key);
}

/* Refuse an object holding a key twice: hosts read the last of them. */
static int
unique_keys(struct parser *p, const struct je_node *obj)
{
	const struct je_node **v, *c;
	size_t i = 0;
	int ok = 1;

	if (obj->n < 2)
		return 1;
	v = calloc(obj->n, sizeof(*v));
	if (v == NULL) {
		p->err = PGN_ENOMEM;
		return 0;
	}
	for (c = obj->child; c != NULL; c = c->next)
		v[i++] = c;
	qsort(v, obj->n, sizeof(*v), cmp_key);
	for (i = 1; i < obj->n && ok; i++) {
		if (strcmp(v[i - 1]->key, v[i]->key) != 0)
			continue;
		c = v[i - 1]->kstart > v[i]->kstart ? v[i - 1] : v[i];
		p->bad = 2;
		p->errpos = c->kstart;
		snprintf(p->dupkey, sizeof(p->dupkey), "%s", c->key);
		ok = 0;
	}
	free(v);
	return ok;
}

static struct je_node *value(struct parser *p);

static void
link_child(struct je_node *parent, struct je_node *c)
{
	c->parent = parent;
	c->prev = parent->last;
	if (parent->last != NULL)
		parent->last->next = c;
	else
		parent->child = c;
	parent->last = c;
	parent->n++;
}

/* The members or elements of the container at p->pos into 'x'. */
static int
container(struct parser *p, struct je_node *x)
{
	char close = x->type == JE_OBJECT ? '}' : ']';
	struct je_node *c;
	size_t kstart, kend;
	char *key = NULL;

	if (++p->depth > PGN_MAX_JSON_DEPTH)
		return fail(p);
	p->pos++;
	if (!ws(p))
		return 0;
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		p->depth--;
		return 1;
	}
	for (;;) {
		kstart = kend = p->pos;
		if (x->type == JE_OBJECT) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return fail(p);
			if (!string(p, &key))
				return 0;
			kend = p->pos;
			if (!ws(p) || p->pos >= p->len || p->s[p->pos] != ':') {
				free(key);
				return fail(p);
			}
			p->pos++;
			if (!ws(p)) {
				free(key);
				return 0;
			}
		}
		c = value(p);
		if (c == NULL) {
			free(key);
			return 0;
		}
		c->key = key;
		key = NULL;
		if (x->type == JE_OBJECT) {
			c->kstart = kstart;
			c->kend = kend;
		}
		link_child(x, c);
		if (!ws(p))
			return 0;
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			if (!ws(p))
				return 0;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			break;
		}
		return fail(p);
	}
	p->depth--;
	return x->type != JE_OBJECT || unique_keys(p, x);
}

static struct je_node *
value(struct parser *p)
{
	struct je_node *x;
	int ok;
	char c;

	if (p->pos >= p->len)
		return fail(p), NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL) {
		p->err = PGN_ENOMEM;
		return NULL;
	}
	x->start = x->kstart = x->kend = p->pos;
	c = p->s[p->pos];
	if (c == '{' || c == '[') {
		x->type = c == '{' ? JE_OBJECT : JE_ARRAY;
		ok = container(p, x);
	} else if (c == '"') {
		x->type = JE_STRING;
		ok = string(p, &x->str);
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		x->type = JE_NUMBER;
		ok = number(p);
		if (ok) {
			x->str =
			    pgn_strndup(p->s + x->start, p->pos - x->start);
			if (x->str == NULL) {
				p->err = PGN_ENOMEM;
				ok = 0;
			}
		}
	} else if (c == 't') {
		x->type = JE_TRUE;
		ok = literal(p, "true");
	} else if (c == 'f') {
		x->type = JE_FALSE;
		ok = literal(p, "false");
	} else if (c == 'n') {
		x->type = JE_NULL;
		ok = literal(p, "null");
	} else {
		ok = fail(p);
	}
	if (!ok) {
		node_free(x);
		return NULL;
	}
	x->end = p->pos;
	return x;
}

/* ---- the text's style ----------------------------------------------- */

/* A line end of any style (LF, CRLF, a lone CR) ends just before 'i'? */
static int
eol_ends_at(const char *text, size_t len, size_t i)
{
	return i > 0 &&
	    (text[i - 1] == '\n' ||
	        (text[i - 1] == '\r' && (i == len || text[i] != '\n')));
}

static size_t
line_start(const struct je_doc *d, size_t pos)
{
	while (pos > 0 && !eol_ends_at(d->text, d->len, pos))
		pos--;
	return pos;
}

/* Leading blanks of the line holding 'pos': [*from, return). */
static size_t
line_indent(const struct je_doc *d, size_t pos, size_t *from)
{
	size_t i = line_start(d, pos);

	*from = i;
	while (i < d->len && (d->text[i] == ' ' || d->text[i] == '\t'))
		i++;
	return i;
}

/* True if only blanks stand between the start of its line and 'pos'. */
static int
starts_line(const struct je_doc *d, size_t pos)
{
	size_t from;

	return line_indent(d, pos, &from) == pos && line_start(d, pos) > 0;
}

static const struct je_node *
first_member(const struct je_node *x)
{
	const struct je_node *c, *m;

	if (x->type == JE_OBJECT && x->child != NULL)
		return x->child;
	for (c = x->child; c != NULL; c = c->next) {
		m = first_member(c);
		if (m != NULL)
			return m;
	}
	return NULL;
}

static void
detect_style(struct je_doc *d)
{
	const struct je_node *m;
	size_t i, n, min = 0, gap;
	int tab = 0;

	/* The first line's end: CRLF, a lone CR (classic Mac) or LF. */
	memcpy(d->eol, "\n", 2);
	for (i = 0; i < d->len; i++) {
		if (d->text[i] == '\r' && i + 1 < d->len &&
		    d->text[i + 1] == '\n')
			memcpy(d->eol, "\r\n", 3);
		else if (d->text[i] == '\r')
			memcpy(d->eol, "\r", 2);
		else if (d->text[i] != '\n')
			continue;
		break;
	}
	/* One level: a tab if lines are indented with tabs, else the least. */
	for (i = 1; i <= d->len; i++) {
		if (!eol_ends_at(d->text, d->len, i))
			continue;
		for (n = 0; i + n < d->len && d->text[i + n] == ' '; n++)
			;
		if (i < d->len && d->text[i] == '\t')
			tab = 1;
		if (n > 0 && i + n < d->len && d->text[i + n] != '\n' &&
		    d->text[i + n] != '\r' && (min == 0 || n < min))
			min = n;
	}
	if (tab) {
		memcpy(d->unit, "\t", 2);
	} else {
		if (min == 0)
			min = 2;
		if (min > sizeof(d->unit) - 1)
			min = sizeof(d->unit) - 1;
		memset(d->unit, ' ', min);
		d->unit[min] = '\0';
	}
	memcpy(d->colon, ": ", 3);
	m = d->root != NULL ? first_member(d->root) : NULL;
	if (m == NULL)
		return;
	gap = m->start - m->kend;
	if (gap < sizeof(d->colon) &&
	    strspn(d->text + m->kend, " \t:") >= gap &&
	    memchr(d->text + m->kend, ':', gap) != NULL) {
		memcpy(d->colon, d->text + m->kend, gap);
		d->colon[gap] = '\0';
	}
}

pgn_status
je_parse(struct je_doc *d, const char *text, size_t len, int comments,
    struct pgn_err *err)
{
	struct parser p = {0};
	size_t i, line = 1, col = 1;

	memset(d, 0, sizeof(*d));
	d->text = text;
	d->len = len;
	p.s = text;
	p.len = len;
	p.comments = comments;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		p.pos = 3;
	if (ws(&p) && p.pos == len && !p.bad &&
	    memchr(text, '/', len) == NULL) {
		/* Blank: a new document, laid out as the hosts write theirs. */
		memcpy(d->eol, "\n", 2);
		memcpy(d->unit, "  ", 3);
		memcpy(d->colon, ": ", 3);
		return PGN_OK;
	}
	if (!p.bad && p.err == PGN_OK) {
		d->root = value(&p);
		if (d->root != NULL && ws(&p) && p.pos != len)
			fail(&p);
	}
	if (p.err != PGN_OK) {
		je_release(d);
		return p.err;
	}
	if (p.bad == 2) {
		pgn_err_set(err, PGN_EINVAL,
		    "is not strict JSON (the key \"%.64s\" appears twice in one object)",
		    p.dupkey);
	} else if (p.bad) {
		for (i = 0; i < p.errpos && i < len; i++) {
			if (eol_ends_at(text, len, i + 1)) {
				line++;
				col = 1;
			} else if (text[i] != '\r') {
				col++;
			}
		}
		pgn_err_set(err, PGN_EINVAL,
		    "is not valid JSON (line %zu, column %zu)", line, col);
	}
	if (p.bad) {
		je_release(d);
		return PGN_EINVAL;
	}
	detect_style(d);
	return PGN_OK;
}

void
je_release(struct je_doc *d)
{
	if (d == NULL)
		return;
	node_free(d->root);
	cJSON_Delete(d->fresh);
	d->root = NULL;
	d->fresh = NULL;
}

/* The phrase for a node's type, as the errors of a config say it. */
const char *
je_type_phrase(const struct je_node *x)
{
	switch (x->type) {
	case JE_ARRAY:
		return "an array";
	case JE_OBJECT:
		return "an object";
	case JE_STRING:
		return "a string";
	case JE_NUMBER:
		return "a number";
	case JE_TRUE:
	case JE_FALSE:
		return "a boolean";
	case JE_NULL:
		break;
	}
	return "null";
}

struct je_node *
je_get(const struct je_node *obj, const char *key)
{
	struct je_node *c;

	if (obj == NULL || obj->type != JE_OBJECT)
		return NULL;
	for (c = obj->child; c != NULL; c = c->next)
		if (!c->drop && strcmp(c->key, key) == 0)
			return c;
	return NULL;
}

cJSON *
je_to_cjson(const struct je_node *x)
{
	const struct je_node *c;
	cJSON *v = NULL, *item;

	switch (x->type) {
	case JE_NULL:
		return cJSON_CreateNull();
	case JE_TRUE:
		return cJSON_CreateTrue();
	case JE_FALSE:
		return cJSON_CreateFalse();
	case JE_STRING:
		return cJSON_CreateString(x->str);
	case JE_NUMBER:
		/* The literal, never a double: 1e400 and big integers stay. */
		return cJSON_CreateRaw(x->str);
	case JE_ARRAY:
	case JE_OBJECT:
		v = x->type == JE_ARRAY ? cJSON_CreateArray() :
		                          cJSON_CreateObject();
		break;
	}
	if (v == NULL)
		return NULL;
	for (c = x->child; c != NULL; c = c->next) {
		item = je_to_cjson(c);
		if (item == NULL) {
			cJSON_Delete(v);
			return NULL;
		}
		if (x->type == JE_ARRAY)
			cJSON_AddItemToArray(v, item);
		else
			cJSON_AddItemToObject(v, c->key, item);
	}
	return v;
}

/* ---- edits ---------------------------------------------------------- */

void
je_drop(struct je_node *x)
{
	if (x != NULL && x->parent != NULL)
		x->drop = 1;
}

/* The pending container of 'x' (an object's members, an array's items). */
static cJSON *
pending(struct je_node *x)
{
	if (x->add == NULL)
		x->add = x->type == JE_OBJECT ? cJSON_CreateObject() :
		                                cJSON_CreateArray();
	return x->add;
}

/* The object or array 'key' of pending object 'obj', created if missing. */
static cJSON *
pending_child(cJSON *obj, const char *key, int array)
{
	cJSON *c = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (c != NULL)
		return (array ? cJSON_IsArray(c) : cJSON_IsObject(c)) ? c :
		                                                        NULL;
	return array ? cJSON_AddArrayToObject(obj, key) :
	               cJSON_AddObjectToObject(obj, key);
}

/*
 * Walk the object path 'keys' (the last one naming an array when
 * 'array'): '*node' gets the deepest existing value, and '*pend' the
 * pending cJSON value at the end of the path when part of it is missing.
 */
static pgn_status
walk(struct je_doc *d, const char *const *keys, size_t nkeys, int array,
    struct je_node **node, cJSON **pend)
{
	struct je_node *x = d->root, *c;
	cJSON *p;
	size_t i;

	*node = NULL;
	*pend = NULL;
	if (x == NULL) {
		if (d->fresh == NULL)
			d->fresh = cJSON_CreateObject();
		p = d->fresh;
		i = 0;
		goto missing;
	}
	if (x->type != JE_OBJECT)
		return PGN_EINVAL;
	for (i = 0; i < nkeys; i++) {
		c = je_get(x, keys[i]);
		if (c == NULL)
			break;
		if (c->type != (array && i == nkeys - 1 ? JE_ARRAY : JE_OBJECT))
			return PGN_EINVAL;
		x = c;
	}
	*node = x;
	if (i == nkeys)
		return pending(x) != NULL ? PGN_OK : PGN_ENOMEM;
	p = pending(x);
missing:
	for (; p != NULL && i < nkeys; i++)
		p = pending_child(p, keys[i], array && i == nkeys - 1);
	if (p == NULL)
		return PGN_ENOMEM;
	*pend = p;
	return PGN_OK;
}

pgn_status
je_push(struct je_doc *d, const char *const *keys, size_t nkeys, cJSON *value)
{
	struct je_node *x;
	cJSON *p;
	pgn_status rc;

	if (value == NULL)
		return PGN_ENOMEM;
	rc = walk(d, keys, nkeys, 1, &x, &p);
	if (rc == PGN_OK && p == NULL)
		p = x->add;
	if (rc == PGN_OK && !cJSON_IsArray(p))
		rc = PGN_EINVAL;
	if (rc != PGN_OK) {
		cJSON_Delete(value);
		return rc;
	}
	cJSON_AddItemToArray(p, value);
	return PGN_OK;
}

pgn_status
je_put(struct je_doc *d, const char *const *keys, size_t nkeys, const char *key,
    cJSON *value)
{
	struct je_node *x;
	cJSON *p;
	pgn_status rc;

	if (value == NULL)
		return PGN_ENOMEM;
	rc = walk(d, keys, nkeys, 0, &x, &p);
	if (rc == PGN_OK && p == NULL)
		p = x->add;
	if (rc == PGN_OK && !cJSON_IsObject(p))
		rc = PGN_EINVAL;
	if (rc != PGN_OK) {
		cJSON_Delete(value);
		return rc;
	}
	cJSON_AddItemToObject(p, key, value);
	return PGN_OK;
}

/* ---- rendering appended values -------------------------------------- */

struct style {
	const struct je_doc *d;
	int pretty;       /* one member or element per line */
	const char *base; /* pretty: the indentation of the value's line */
	size_t baselen;
	const char *sep; /* compact: what follows a comma */
};

static void
put_indent(struct pgn_buf *b, const struct style *st, int level)
{
	int i;

	pgn_buf_add(b, st->base, st->baselen);
	for (i = 0; i < level; i++)
		pgn_buf_adds(b, st->d->unit);
}

static void
put_string(struct pgn_buf *b, const char *s)
{
	const unsigned char *p;

	pgn_buf_adds(b, "\"");
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '"' || *p == '\\')
			pgn_buf_addf(b, "\\%c", *p);
		else if (*p == '\n')
			pgn_buf_adds(b, "\\n");
		else if (*p == '\t')
			pgn_buf_adds(b, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			pgn_buf_addf(b, "\\u%04x", *p);
		else
			pgn_buf_add(b, p, 1);
	}
	pgn_buf_adds(b, "\"");
}

static void
render(struct pgn_buf *b, const struct style *st, const cJSON *v, int level)
{
	const cJSON *c;
	int obj;

	if (cJSON_IsRaw(v)) {
		pgn_buf_adds(b, v->valuestring);
		return;
	}
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble == (double)(int64_t)v->valuedouble)
			pgn_buf_addf(b, "%lld", (long long)v->valuedouble);
		else
			pgn_buf_addf(b, "%.17g", v->valuedouble);
		return;
	}
	if (cJSON_IsString(v)) {
		put_string(b, v->valuestring);
		return;
	}
	if (cJSON_IsTrue(v) || cJSON_IsFalse(v)) {
		pgn_buf_adds(b, cJSON_IsTrue(v) ? "true" : "false");
		return;
	}
	if (!cJSON_IsArray(v) && !cJSON_IsObject(v)) {
		pgn_buf_adds(b, "null");
		return;
	}
	obj = cJSON_IsObject(v);
	pgn_buf_adds(b, obj ? "{" : "[");
	for (c = v->child; c != NULL; c = c->next) {
		if (st->pretty) {
			pgn_buf_adds(b, st->d->eol);
			put_indent(b, st, level + 1);
		}
		if (obj) {
			put_string(b, c->string);
			pgn_buf_adds(b, st->d->colon);
		}
		render(b, st, c, level + 1);
		if (c->next != NULL) {
			pgn_buf_adds(b, ",");
			if (!st->pretty)
				pgn_buf_adds(b, st->sep);
		}
	}
	if (st->pretty && v->child != NULL) {
		pgn_buf_adds(b, st->d->eol);
		put_indent(b, st, level);
	}
	pgn_buf_adds(b, obj ? "}" : "]");
}

/*
 * The appended members or elements of 'add', comma-separated; 'lead'
 * 1 puts a separator before the first, 2 a comma and a separator.
 */
static void
render_items(struct pgn_buf *b, const struct style *st, const cJSON *add,
    int lead)
{
	const cJSON *c;

	for (c = add->child; c != NULL; c = c->next) {
		if (c != add->child || lead == 2)
			pgn_buf_adds(b, ",");
		if (c != add->child || lead > 0) {
			if (st->pretty) {
				pgn_buf_adds(b, st->d->eol);
				pgn_buf_add(b, st->base, st->baselen);
			} else {
				pgn_buf_adds(b, st->sep);
			}
		}
		if (cJSON_IsObject(add)) {
			put_string(b, c->string);
			pgn_buf_adds(b, st->d->colon);
		}
		render(b, st, c, 0);
	}
}

/* ---- splices -------------------------------------------------------- */

struct splice {
	size_t start, end; /* text[start, end) is replaced by 'text' */
	char *text;        /* NULL: removed */
	size_t len;
	size_t seq; /* order of creation, for a stable sort */
};

struct splices {
	struct splice *v;
	size_t n, cap;
	pgn_status err;
};

static void
splice_add(struct splices *s, size_t start, size_t end, struct pgn_buf *b)
{
	struct splice *x;

	if (s->err == PGN_OK && b != NULL && b->err != PGN_OK)
		s->err = b->err;
	if (s->err != PGN_OK)
		return;
	if (!pgn_vec_grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v))) {
		s->err = PGN_ENOMEM;
		return;
	}
	x = &s->v[s->n];
	x->start = start;
	x->end = end;
	x->seq = s->n;
	x->text = NULL;
	x->len = 0;
	if (b != NULL && b->len > 0) {
		x->text = pgn_buf_take(b, &x->len);
		if (x->text == NULL) {
			s->err = PGN_ENOMEM;
			return;
		}
	}
	s->n++;
}

static int
cmp_splice(const void *a, const void *b)
{
	const struct splice *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int
has_comment(const struct je_doc *d, size_t from, size_t to)
{
	return to > from && memchr(d->text + from, '/', to - from) != NULL;
}

/* Comments in the gaps of container 'x' (between its children). */
static int
gaps_have_comments(const struct je_doc *d, const struct je_node *x)
{
	const struct je_node *c;
	size_t at = x->start + 1;

	for (c = x->child; c != NULL; c = c->next) {
		if (has_comment(d, at, c->kstart))
			return 1;
		at = c->end;
	}
	return has_comment(d, at, x->end - 1);
}

/* How values appended to 'x' are laid out, like 'ref' or its own line. */
static void
style_for(const struct je_doc *d, const struct je_node *x,
    const struct je_node *ref, struct style *st, size_t *closefrom,
    size_t *closeto)
{
	size_t from, to, i;

	memset(st, 0, sizeof(*st));
	st->d = d;
	st->sep = strchr(d->colon, ' ') != NULL ? " " : "";
	to = line_indent(d, x->start, &from);
	*closefrom = from;
	*closeto = to;
	if (ref != NULL && starts_line(d, ref->kstart)) {
		st->pretty = 1;
		(void)line_indent(d, ref->kstart, &from);
		st->base = d->text + from;
		st->baselen = ref->kstart - from;
		return;
	}
	if (ref != NULL && ref->prev != NULL) {
		/* Inline: the spacing after the comma before 'ref'. */
		i = ref->prev->end;
		while (i < ref->kstart && d->text[i] != ',')
			i++;
		st->sep =
		    i + 1 < ref->kstart && d->text[i + 1] == ' ' ? " " : "";
		return;
	}
	if (ref != NULL)
		return;
	if (memchr(d->text, '\n', d->len) != NULL ||
	    memchr(d->text, '\r', d->len) != NULL) {
		st->pretty = 1;
		st->base =
		    NULL; /* set by the caller: the line's indent + one */
	}
}

static pgn_status
container_edits(const struct je_doc *d, const struct je_node *x,
    struct splices *s)
{
	const struct je_node *c, *lastk = NULL, *run;
	struct pgn_buf b, base;
	struct style st;
	size_t nk = 0, cf, ct;
	int np = x->add != NULL ? cJSON_GetArraySize(x->add) : 0;

	for (c = x->child; c != NULL; c = c->next)
		if (!c->drop) {
			nk++;
			lastk = c;
		}
	if (nk == x->n && np == 0)
		return PGN_OK;
	pgn_buf_init(&b, PGN_MAX_CONFIG);
	pgn_buf_init(&base, PGN_MAX_CONFIG);
	if (np == 0 && nk == 0) {
		/* Everything goes: "[]" unless a comment must stay. */
		if (!gaps_have_comments(d, x))
			splice_add(s, x->start + 1, x->end - 1, NULL);
		else
			splice_add(s, x->child->kstart, x->last->end, NULL);
		goto out;
	}
	/* Runs of removed children, each with the comma that joined it. */
	for (c = x->child; c != NULL && nk > 0; c = c->next) {
		if (!c->drop)
			continue;
		run = c;
		while (c->next != NULL && c->next->drop)
			c = c->next;
		if (run->prev != NULL)
			splice_add(s, run->prev->end, c->end, NULL);
		else
			splice_add(s, run->kstart, c->next->kstart, NULL);
	}
	if (np == 0)
		goto out;
	style_for(d, x, lastk != NULL ? lastk : x->child, &st, &cf, &ct);
	if (x->n == 0 && st.pretty) {
		pgn_buf_add(&base, d->text + cf, ct - cf);
		pgn_buf_adds(&base, d->unit);
		if (base.err != PGN_OK) {
			s->err = base.err;
			goto out;
		}
		st.base = base.data != NULL ? base.data : "";
		st.baselen = base.len;
	}
	if (nk > 0) {
		render_items(&b, &st, x->add, 2);
		splice_add(s, lastk->end, lastk->end, &b);
	} else if (x->n > 0) {
		/* All replaced: the new ones take the old ones' place. */
		render_items(&b, &st, x->add, 0);
		splice_add(s, x->child->kstart, x->last->end, &b);
	} else if (st.pretty) {
		render_items(&b, &st, x->add, 1);
		if (!has_comment(d, x->start + 1, x->end - 1)) {
			pgn_buf_adds(&b, d->eol);
			pgn_buf_add(&b, d->text + cf, ct - cf);
			splice_add(s, x->start + 1, x->end - 1, &b);
		} else {
			splice_add(s, x->start + 1, x->start + 1, &b);
		}
	} else {
		render_items(&b, &st, x->add, 0);
		if (!has_comment(d, x->start + 1, x->end - 1))
			splice_add(s, x->start + 1, x->end - 1, &b);
		else
			splice_add(s, x->start + 1, x->start + 1, &b);
	}
out:
	pgn_buf_release(&b);
	pgn_buf_release(&base);
	return s->err;
}

static pgn_status
collect(const struct je_doc *d, const struct je_node *x, struct splices *s)
{
	const struct je_node *c;
	pgn_status rc = PGN_OK;

	if (x->type != JE_ARRAY && x->type != JE_OBJECT)
		return PGN_OK;
	rc = container_edits(d, x, s);
	for (c = x->child; c != NULL && rc == PGN_OK; c = c->next)
		if (!c->drop)
			rc = collect(d, c, s);
	return rc;
}

pgn_status
je_apply(const struct je_doc *d, size_t max, char **out, size_t *outlen,
    int *changed)
{
	struct splices s = {0};
	struct pgn_buf b;
	struct style st = {0};
	size_t i, at = 0;
	pgn_status rc;

	*out = NULL;
	*outlen = 0;
	*changed = 0;
	pgn_buf_init(&b, max);
	if (d->root == NULL && d->fresh != NULL) {
		st.d = d;
		st.pretty = 1;
		st.base = "";
		render(&b, &st, d->fresh, 0);
		pgn_buf_adds(&b, d->eol);
		*changed = 1;
		goto take;
	}
	rc = d->root != NULL ? collect(d, d->root, &s) : PGN_OK;
	if (rc != PGN_OK)
		goto out;
	if (s.n > 0)
		qsort(s.v, s.n, sizeof(*s.v), cmp_splice);
	for (i = 0; i < s.n; i++) {
		if (s.v[i].start < at || s.v[i].end > d->len) {
			rc = PGN_EINVAL;
			goto out;
		}
		pgn_buf_add(&b, d->text + at, s.v[i].start - at);
		pgn_buf_add(&b, s.v[i].text, s.v[i].len);
		at = s.v[i].end;
	}
	pgn_buf_add(&b, d->text + at, d->len - at);
	*changed = s.n > 0;
take:
	rc = b.err;
	if (rc != PGN_OK)
		goto out;
	*outlen = b.len;
	*out = pgn_buf_take(&b, NULL);
	if (*out == NULL)
		rc = PGN_ENOMEM;
out:
	for (i = 0; i < s.n; i++)
		free(s.v[i].text);
	free(s.v);
	pgn_buf_release(&b);
	return rc;
}
