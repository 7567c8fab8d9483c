/*
 * The one string builder: a hard cap fixed at init and a sticky error,
 * so callers append freely and check b->err once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"

void
pgn_buf_init(struct pgn_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->err = PGN_OK;
}

void
pgn_buf_release(struct pgn_buf *b)
{
	if (b == NULL)
		return;
	free(b->data);
	pgn_buf_init(b, b->max);
}

void
pgn_buf_reset(struct pgn_buf *b)
{
	b->len = 0;
	b->err = PGN_OK;
	if (b->data != NULL)
		b->data[0] = '\0';
}

static int
reserve(struct pgn_buf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (b->err != PGN_OK)
		return 0;
	if (!pgn_size_add(b->len, n, &need) || need > b->max) {
		b->err = PGN_ETOOBIG;
		return 0;
	}
	if (need + 1 <= b->cap)
		return 1;
	cap = b->cap ? b->cap : 64;
	while (cap < need + 1)
		cap = cap > SIZE_MAX / 2 ? need + 1 : cap * 2;
	p = realloc(b->data, cap);
	if (p == NULL) {
		b->err = PGN_ENOMEM;
		return 0;
	}
	b->data = p;
	b->cap = cap;
	return 1;
}

void
pgn_buf_presize(struct pgn_buf *b, size_t n)
{
	if (b->err == PGN_OK && b->len <= b->max)
		(void)reserve(b, n < b->max - b->len ? n : b->max - b->len);
}

void
pgn_buf_truncate(struct pgn_buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

void
pgn_buf_add(struct pgn_buf *b, const void *p, size_t n)
{
	if (!reserve(b, n))
		return;
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
pgn_buf_adds(struct pgn_buf *b, const char *s)
{
	pgn_buf_add(b, s, strlen(s));
}

void
pgn_buf_vaddf(struct pgn_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (b->err != PGN_OK)
		return;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0) {
		b->err = PGN_EINVAL;
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	if (vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap) != n) {
		b->err = PGN_EINVAL;
		return;
	}
	b->len += (size_t)n;
}

void
pgn_buf_addf(struct pgn_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pgn_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

char *
pgn_buf_take(struct pgn_buf *b, size_t *len)
{
	char *s;

	if (b->err != PGN_OK) {
		pgn_buf_release(b);
		return NULL;
	}
	if (b->data == NULL && !reserve(b, 0))
		return NULL;
	s = b->data;
	s[b->len] = '\0';
	if (len != NULL)
		*len = b->len;
	pgn_buf_init(b, b->max);
	return s;
}

/*
 * The bytes a JSON string's byte takes past its own: 1 for \" \\ \b \f
 * \n \r \t, 5 for another control byte (\u00xx), else 0. A table: the
 * measuring pass is one load and one add a byte.
 */
/* clang-format off */
static const unsigned char json_extra[256] = {
    5, 5, 5, 5, 5, 5, 5, 5, 1, 1, 1, 5, 1, 1, 5, 5, /* 0x00-0x0f */
    5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, /* 0x10-0x1f */
    ['"'] = 1,
    ['\\'] = 1,
};
/* clang-format on */

/*
 * One pass to measure (most strings escape nothing: one copy then),
 * one room reserved, then written in place: no append per byte run.
 */
void
pgn_buf_json_str(struct pgn_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p;
	size_t n, extra = 0;
	char *o;

	if (s == NULL) {
		PGN_BUF_LIT(b, "null");
		return;
	}
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		extra += json_extra[*p];
	n = (size_t)(p - (const unsigned char *)s);
	if (!pgn_size_add(n, extra + 2, &n) || !reserve(b, n))
		return;
	o = b->data + b->len;
	*o++ = '"';
	if (extra == 0) {
		memcpy(o, s, n - 2);
		o += n - 2;
	} else
		for (p = (const unsigned char *)s; *p != '\0'; p++) {
			if (json_extra[*p] == 0) {
				*o++ = (char)*p;
				continue;
			}
			*o++ = '\\';
			switch (*p) {
			case '\b':
				*o++ = 'b';
				break;
			case '\f':
				*o++ = 'f';
				break;
			case '\n':
				*o++ = 'n';
				break;
			case '\r':
				*o++ = 'r';
				break;
			case '\t':
				*o++ = 't';
				break;
			case '"':
			case '\\':
				*o++ = (char)*p;
				break;
			default:
				*o++ = 'u';
				*o++ = '0';
				*o++ = '0';
				*o++ = hex[*p >> 4];
				*o++ = hex[*p & 15];
			}
		}
	*o++ = '"';
	b->len += n;
	*o = '\0';
}

void
pgn_buf_json_i64(struct pgn_buf *b, int64_t v)
{
	static const char pairs[] = "00010203040506070809"
	                            "10111213141516171819"
	                            "20212223242526272829"
	                            "30313233343536373839"
	                            "40414243444546474849"
	                            "50515253545556575859"
	                            "60616263646566676869"
	                            "70717273747576777879"
	                            "80818283848586878889"
	                            "90919293949596979899";
	char d[24];
	size_t n = sizeof(d);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	/* Two digits a division: a time in ms has 13. */
	while (u >= 100) {
		n -= 2;
		memcpy(d + n, pairs + 2 * (u % 100), 2);
		u /= 100;
	}
	if (u >= 10) {
		n -= 2;
		memcpy(d + n, pairs + 2 * u, 2);
	} else
		d[--n] = (char)('0' + u);
	if (v < 0)
		d[--n] = '-';
	pgn_buf_put(b, d + n, sizeof(d) - n);
}

int
pgn_size_add(size_t a, size_t b, size_t *out)
{
	if (a > SIZE_MAX - b)
		return 0;
	*out = a + b;
	return 1;
}

int
pgn_size_mul(size_t a, size_t b, size_t *out)
{
	if (a != 0 && b > SIZE_MAX / a)
		return 0;
	*out = a * b;
	return 1;
}

char *
pgn_strndup(const char *s, size_t n)
{
	char *p;

	p = malloc(n + 1);
	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
pgn_strdup(const char *s)
{
	return pgn_strndup(s, strlen(s));
}

int
pgn_vec_grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t ncap, bytes;
	void *p;

	if (n < *cap)
		return 1;
	ncap = *cap ? *cap * 2 : 8;
	if (!pgn_size_mul(ncap, size, &bytes))
		return 0;
	p = realloc(*v, bytes);
	if (p == NULL)
		return 0;
	*v = p;
	*cap = ncap;
	return 1;
}
