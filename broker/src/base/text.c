/*
 * Text rules: agent names, UTF-8 validity, text made safe for a
 * terminal, edit distance for suggestions, and the names of statuses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pgn_int.h"
#include "pigeon/hook.h"

const char *
pgn_status_name(pgn_status st)
{
	switch (st) {
	case PGN_OK:
		return "ok";
	case PGN_EINVAL:
		return "invalid";
	case PGN_ETOOBIG:
		return "too big";
	case PGN_ENOTFOUND:
		return "not found";
	case PGN_EEXIST:
		return "exists";
	case PGN_EFULL:
		return "full";
	case PGN_EBUSY:
		return "busy";
	case PGN_ECORRUPT:
		return "corrupt";
	case PGN_ETOONEW:
		return "too new";
	case PGN_EDB:
		return "database error";
	case PGN_EIO:
		return "i/o error";
	case PGN_ENOMEM:
		return "out of memory";
	case PGN_ETAMPER:
		return "tampered";
	}
	return "unknown";
}

int
pgn_status_is_usage(pgn_status st)
{
	return st == PGN_EINVAL || st == PGN_ETOOBIG || st == PGN_ENOTFOUND ||
	    st == PGN_EEXIST || st == PGN_EFULL;
}

pgn_status
pgn_name_check(const char *in, char *out, struct pgn_err *err)
{
	size_t i, n;
	unsigned char c;

	n = strlen(in);
	if (n == 0) {
		return pgn_err_set(err, PGN_EINVAL,
		    "a name has 1 to 64 characters");
	}
	if (n > PGN_MAX_NAME) {
		return pgn_err_set(err, PGN_EINVAL,
		    "a name has at most 64 characters");
	}
	for (i = 0; i < n; i++) {
		c = (unsigned char)in[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		        c == '.' || c == '_' || c == '-')) {
			return pgn_err_set(err, PGN_EINVAL,
			    "a name uses only a-z, 0-9, '.', '_' and '-'");
		}
		if (i == 0 &&
		    !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			return pgn_err_set(err, PGN_EINVAL,
			    "a name starts with a letter or a digit");
		}
		out[i] = (char)c;
	}
	out[n] = '\0';
	if (strcmp(out, "all") == 0) {
		return pgn_err_set(err, PGN_EINVAL,
		    "'all' is reserved: it addresses every other agent");
	}
	return PGN_OK;
}

/* The words of pgn_priority, by value + 1 (decision 0158). */
static const char *const priority_words[] = {"low", "normal", "urgent"};

const char *
pgn_priority_name(int priority)
{
	if (priority < PGN_PRIORITY_LOW || priority > PGN_PRIORITY_URGENT)
		priority = PGN_PRIORITY_NORMAL;
	return priority_words[priority - PGN_PRIORITY_LOW];
}

pgn_status
pgn_priority_parse(const char *s, int *out, struct pgn_err *err)
{
	int p;

	for (p = PGN_PRIORITY_LOW; s != NULL && p <= PGN_PRIORITY_URGENT; p++)
		if (strcmp(s, priority_words[p - PGN_PRIORITY_LOW]) == 0) {
			*out = p;
			return PGN_OK;
		}
	return pgn_err_set(err, PGN_EINVAL,
	    "'%.64s' is no priority: say urgent, normal or low",
	    s != NULL ? s : "");
}

/*
 * The UTF-8 sequence at 's' (len > 0 bytes): its length, with the code
 * point in '*cp'; 0 if it is not a valid, shortest-form sequence of a
 * scalar value (overlong, surrogate, above U+10FFFF, cut short).
 */
static size_t
utf8_next(const unsigned char *p, size_t len, uint32_t *cp)
{
	size_t n, k;
	uint32_t v, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0) {
		n = 1;
		v = p[0] & 0x1f;
		min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 2;
		v = p[0] & 0x0f;
		min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 3;
		v = p[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len - 1 < n)
		return 0;
	for (k = 1; k <= n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (p[k] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n + 1;
}

int
pgn_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		if (p[i] == 0)
			return 0;
		n = utf8_next(p + i, len - i, &cp);
		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}

/*
 * Code points a terminal must not get raw: C1 controls, and every format
 * character (Unicode 15.1 category Cf: bidi controls, zero-width and
 * invisible operators, the tag characters of "ASCII smuggling"), plus the
 * line and paragraph separators. Sorted, for a binary search.
 */
static const struct {
	uint32_t lo, hi;
} hidden[] = {
    {0x0080, 0x009f},   /* C1 controls */
    {0x00ad, 0x00ad},   /* soft hyphen */
    {0x0600, 0x0605},   /* Arabic number signs */
    {0x061c, 0x061c},   /* Arabic letter mark */
    {0x06dd, 0x06dd},   /* Arabic end of ayah */
    {0x070f, 0x070f},   /* Syriac abbreviation mark */
    {0x0890, 0x0891},   /* Arabic pound and piastre marks above */
    {0x08e2, 0x08e2},   /* Arabic disputed end of ayah */
    {0x180e, 0x180e},   /* Mongolian vowel separator */
    {0x200b, 0x200f},   /* zero width space, ZWNJ, ZWJ, LRM, RLM */
    {0x2028, 0x202e},   /* line/paragraph separators, LRE..RLO */
    {0x2060, 0x206f},   /* word joiner..invisible plus, LRI..PDI, ... */
    {0xfeff, 0xfeff},   /* zero width no-break space (BOM) */
    {0xfff9, 0xfffb},   /* interlinear annotation */
    {0x110bd, 0x110bd}, /* Kaithi number sign */
    {0x110cd, 0x110cd}, /* Kaithi number sign above */
    {0x13430, 0x1343f}, /* Egyptian hieroglyph format controls */
    {0x1bca0, 0x1bca3}, /* shorthand format controls */
    {0x1d173, 0x1d17a}, /* musical symbol format controls */
    {0xe0001, 0xe0001}, /* language tag */
    {0xe0020, 0xe007f}, /* tag characters */
};

static int
is_hidden(uint32_t cp)
{
	size_t lo = 0, hi = sizeof(hidden) / sizeof(hidden[0]), mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cp < hidden[mid].lo)
			hi = mid;
		else if (cp > hidden[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/*
 * A backslash is written as is unless the next character of the output
 * starts like an escape ('\\', 'x', 'u', 'U'): then it is doubled, so
 * every escape in the output is one and a reader can undo them all.
 */
static void
flush_backslash(struct pgn_buf *b, int *pending, char next)
{
	if (!*pending)
		return;
	*pending = 0;
	if (next == '\\' || next == 'x' || next == 'u' || next == 'U')
		pgn_buf_add(b, "\\\\", 2);
	else
		pgn_buf_add(b, "\\", 1);
}

void
pgn_buf_add_safe(struct pgn_buf *b, const char *s, size_t len, unsigned flags)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n;
	uint32_t cp = 0;
	int pending = 0;

	while (i < len && b->err == PGN_OK) {
		n = utf8_next(p + i, len - i, &cp);
		if (n == 0 || cp == 0x7f ||
		    (cp < 0x20 && cp != '\t' &&
		        !(cp == '\n' && (flags & PGN_SAFE_LINES)))) {
			/* a control byte, or one byte of a broken sequence */
			flush_backslash(b, &pending, '\\');
			pgn_buf_addf(b, "\\x%02x", p[i]);
			i++;
			continue;
		}
		if (is_hidden(cp)) {
			flush_backslash(b, &pending, '\\');
			pgn_buf_addf(b, cp <= 0xffff ? "\\u%04x" : "\\U%08x",
			    (unsigned)cp);
		} else {
			flush_backslash(b, &pending, s[i]);
			if (cp == '\\')
				pending = 1;
			else
				pgn_buf_add(b, s + i, n);
		}
		i += n;
	}
	flush_backslash(b, &pending, '\0');
}

char *
pgn_text_safe(const char *s, size_t len, unsigned flags)
{
	struct pgn_buf b;

	if (len > PGN_MAX_SAFE_TEXT)
		return NULL;
	/* An escape is at most 4 bytes of output per byte of input. */
	pgn_buf_init(&b, 4 * PGN_MAX_SAFE_TEXT);
	pgn_buf_add_safe(&b, s, len, flags);
	return pgn_buf_take(&b, NULL);
}

size_t
pgn_edit_distance(const char *a, const char *b, size_t max)
{
	size_t row[PGN_MAX_NAME + 1];
	size_t la, lb, i, j, prev, cur, best;

	la = strlen(a);
	lb = strlen(b);
	if (la > PGN_MAX_NAME || lb > PGN_MAX_NAME)
		return max + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		best = row[0];
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			if (row[j] < best)
				best = row[j];
			prev = cur;
		}
		if (best > max)
			return max + 1;
	}
	return row[lb] > max ? max + 1 : row[lb];
}

pgn_status
pgn_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	long long v;
	char *end;
	int neg;

	if (s == NULL || *s == '\0')
		return PGN_EINVAL;
	neg = *s == '-';
	if (!(neg || (*s >= '0' && *s <= '9')))
		return PGN_EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || end == s + neg)
		return PGN_EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return PGN_ETOOBIG;
	*out = (int64_t)v;
	return PGN_OK;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t
days_from_civil(int64_t y, int64_t m, int64_t d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int
digits(const char *s, size_t n, int64_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return 0;
		*v = *v * 10 + (s[i] - '0');
	}
	return 1;
}

pgn_status
pgn_parse_time(const char *s, int64_t now_ms, int64_t *out)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30,
	    31};
	int64_t y, mo, d, h = 0, mi = 0, sec = 0, v, unit;
	size_t n;
	char last;

	if (s == NULL || *s == '\0')
		return PGN_EINVAL;
	n = strlen(s);
	if (s[0] == '@')
		return pgn_parse_i64(s + 1, 0, INT64_MAX / 1000, &v) == PGN_OK ?
		    (*out = v * 1000, PGN_OK) :
		    PGN_EINVAL;
	last = s[n - 1];
	if (n >= 2 && n <= 8 &&
	    (last == 's' || last == 'm' || last == 'h' || last == 'd') &&
	    digits(s, n - 1, &v)) {
		unit = last == 's' ? 1000 :
		    last == 'm'    ? 60000 :
		    last == 'h'    ? 3600000 :
		                     86400000;
		*out = now_ms - v * unit;
		return PGN_OK;
	}
	if (n < 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4, &y) ||
	    !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d))
		return PGN_EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1])
		return PGN_EINVAL;
	s += 10;
	if (*s == 'T' || *s == ' ') {
		if (strlen(s) < 6 || s[3] != ':' || !digits(s + 1, 2, &h) ||
		    !digits(s + 4, 2, &mi))
			return PGN_EINVAL;
		s += 6;
		if (*s == ':') {
			if (!digits(s + 1, 2, &sec) || s[1] == '\0' ||
			    s[2] == '\0')
				return PGN_EINVAL;
			s += 3;
		}
		if (h > 23 || mi > 59 || sec > 60)
			return PGN_EINVAL;
	}
	if (*s == 'Z')
		s++;
	if (*s != '\0')
		return PGN_EINVAL;
	*out = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 +
	    sec * 1000;
	return PGN_OK;
}

/* 'v' (0 or more) in 'width' decimal digits, zero-padded. */
static void
put_digits(char *p, int64_t v, int width)
{
	while (width-- > 0) {
		p[width] = (char)('0' + v % 10);
		v /= 10;
	}
}

/*
 * UTC without gmtime_r, whose first call reads /etc/localtime: the
 * hook logs a time on every run (days to civil date: the proleptic
 * Gregorian calendar, exact for every time_t, negative ones too).
 */
void
pgn_format_time(int64_t ms, char *buf, size_t len)
{
	int64_t secs, days, rem, era, doe, yoe, doy, mp, y, m, d;

	if (len == 0)
		return;
	secs = ms / 1000 - (ms % 1000 < 0);
	days = secs / 86400;
	rem = secs % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	days += 719468; /* from 0000-03-01 */
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = days - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = yoe + era * 400 + (m <= 2);
	if (y < 0 || y > 9999 || len < sizeof("YYYY-MM-DDThh:mm:ssZ")) {
		buf[0] = '\0';
		return;
	}
	/* By hand: snprintf's six fields cost 3,000 instructions a call. */
	put_digits(buf, y, 4);
	buf[4] = '-';
	put_digits(buf + 5, m, 2);
	buf[7] = '-';
	put_digits(buf + 8, d, 2);
	buf[10] = 'T';
	put_digits(buf + 11, rem / 3600, 2);
	buf[13] = ':';
	put_digits(buf + 14, rem % 3600 / 60, 2);
	buf[16] = ':';
	put_digits(buf + 17, rem % 60, 2);
	buf[19] = 'Z';
	buf[20] = '\0';
}

int
pgn_hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
pgn_json_nul_escape(const char *s, size_t len)
{
	const char *p, *end = s + len;

	/* A backslash starts an escape; skip the escaped character. */
	for (p = s; p < end && (p = memchr(p, '\\', (size_t)(end - p))) != NULL;
	     p += 2) {
		if (end - p >= 6 && memcmp(p + 1, "u0000", 5) == 0)
			return 1;
		if (end - p < 2)
			break;
	}
	return 0;
}

/*
 * How the agent runs the CLI: the path as one shell word, quoted when
 * it needs it (or is not ASCII), or plain "pigeon" (on PATH) for a path
 * that is too long, not UTF-8, or holds a quote or a control character.
 */
void
pgn_shell_word(const char *path, char *out, size_t len)
{
	const unsigned char *p;
	int quote = 0;

	snprintf(out, len, "pigeon");
	if (path == NULL || strlen(path) > PGN_HOOK_MAX_SHOWN ||
	    strlen(path) + 3 > len)
		return;
	if (!pgn_utf8_valid(path, strlen(path)))
		return;
	for (p = (const unsigned char *)path; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\'' ||
		    (*p == 0xc2 && p[1] < 0xa0))
			return; /* a control character, C1 too */
		if (*p >= 0x80 ||
		    strchr(" \t\"$`\\!*?[]#~=%&;<>|(){}", *p) != NULL)
			quote = 1;
	}
	snprintf(out, len, quote ? "'%s'" : "%s", path);
}
