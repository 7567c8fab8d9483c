/* The zero-context line diff install and the plugin drop show. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pgn_int.h"
#include "setup_int.h"

/* Bound on the LCS table of a diff (cells); past it the middle is replaced. */
#define DIFF_MAX_CELLS (1u << 22)

/* A line of text, with its '\n' when it has one. */
struct line {
	const char *p;
	size_t n;
};

static pgn_status
split_lines(const char *s, size_t len, struct line **v, size_t *n)
{
	size_t cap = 0, i, start;

	*v = NULL;
	*n = 0;
	for (start = 0, i = 0; i < len; i++) {
		if (s[i] != '\n' && i + 1 < len)
			continue;
		if (!pgn_vec_grow((void **)v, &cap, *n, sizeof(**v))) {
			free(*v);
			*v = NULL;
			*n = 0;
			return PGN_ENOMEM;
		}
		(*v)[*n].p = s + start;
		(*v)[*n].n = i + 1 - start;
		(*n)++;
		start = i + 1;
	}
	return PGN_OK;
}

static int
line_eq(const struct line *a, const struct line *b)
{
	return a->n == b->n && memcmp(a->p, b->p, a->n) == 0;
}

static void
diff_line(struct pgn_buf *b, char sign, const struct line *l)
{
	pgn_buf_add(b, &sign, 1);
	pgn_buf_add(b, l->p, l->n);
	if (l->n == 0 || l->p[l->n - 1] != '\n')
		pgn_buf_adds(b, "\n\\ No newline at end of file\n");
}

/* One hunk of -U0 unified diff: old lines [ai, ai+na), new [bi, bi+nb). */
static void
diff_hunk(struct pgn_buf *b, const struct line *a, size_t ai, size_t na,
    const struct line *bl, size_t bi, size_t nb)
{
	size_t i;

	/* With a count of 0 the start names the line before the hunk. */
	pgn_buf_addf(b, "@@ -%zu,%zu +%zu,%zu @@\n", na ? ai + 1 : ai, na,
	    nb ? bi + 1 : bi, nb);
	for (i = 0; i < na; i++)
		diff_line(b, '-', &a[ai + i]);
	for (i = 0; i < nb; i++)
		diff_line(b, '+', &bl[bi + i]);
}

/*
 * A minimal line diff of 'old' and 'new' (either NULL: absent) as a
 * zero-context unified diff, "" if equal. Common head and tail are
 * trimmed first; an LCS over the rest is bounded by DIFF_MAX_CELLS,
 * past which the middle is shown as replaced whole.
 */
pgn_status
pgn_line_diff(const char *path, const char *old, size_t oldlen, const char *new,
    size_t newlen, char **out)
{
	struct line *a = NULL, *bl = NULL;
	size_t na = 0, nb = 0, pre = 0, suf = 0, ma, mb, i, j, cells, w;
	size_t hi, hj;
	uint32_t *L = NULL;
	struct pgn_buf b;
	pgn_status rc;

	*out = NULL;
	/* Each line at most doubled (its sign, a hunk's header, "\ No ..."). */
	pgn_buf_init(&b,
	    4 * (oldlen > newlen ? oldlen : newlen) +
	        4 * (size_t)PGN_MAX_CONFIG + 4 * PGN_MAX_PATH);
	rc = split_lines(old != NULL ? old : "", oldlen, &a, &na);
	if (rc == PGN_OK)
		rc = split_lines(new != NULL ? new : "", newlen, &bl, &nb);
	if (rc != PGN_OK)
		goto out;
	if ((old == NULL) == (new == NULL) && oldlen == newlen &&
	    (oldlen == 0 || memcmp(old, new, oldlen) == 0)) {
		*out = pgn_buf_take(&b, NULL);
		rc = *out == NULL ? PGN_ENOMEM : PGN_OK;
		goto out;
	}
	pgn_buf_addf(&b, "--- %s\n+++ %s\n", old != NULL ? path : "/dev/null",
	    new != NULL ? path : "/dev/null");
	while (pre < na && pre < nb && line_eq(&a[pre], &bl[pre]))
		pre++;
	while (suf < na - pre && suf < nb - pre &&
	    line_eq(&a[na - 1 - suf], &bl[nb - 1 - suf]))
		suf++;
	ma = na - pre - suf;
	mb = nb - pre - suf;
	if (!pgn_size_mul(ma + 1, mb + 1, &cells) || cells > DIFF_MAX_CELLS) {
		diff_hunk(&b, a, pre, ma, bl, pre, mb);
		goto take;
	}
	L = calloc(cells, sizeof(*L));
	if (L == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	/* L[i][j]: LCS length of a[pre+i..] and bl[pre+j..] (middle only). */
	w = mb + 1;
	for (i = ma; i-- > 0;)
		for (j = mb; j-- > 0;) {
			if (line_eq(&a[pre + i], &bl[pre + j]))
				L[i * w + j] = L[(i + 1) * w + j + 1] + 1;
			else if (L[(i + 1) * w + j] >= L[i * w + j + 1])
				L[i * w + j] = L[(i + 1) * w + j];
			else
				L[i * w + j] = L[i * w + j + 1];
		}
	i = 0;
	j = 0;
	while (i < ma || j < mb) {
		if (i < ma && j < mb && line_eq(&a[pre + i], &bl[pre + j])) {
			i++;
			j++;
			continue;
		}
		/* A run of changes up to the next common line. */
		hi = i;
		hj = j;
		while (i < ma || j < mb) {
			if (i < ma && j < mb &&
			    line_eq(&a[pre + i], &bl[pre + j]))
				break;
			if (j >= mb ||
			    (i < ma && L[(i + 1) * w + j] >= L[i * w + j + 1]))
				i++;
			else
				j++;
		}
		diff_hunk(&b, a, pre + hi, i - hi, bl, pre + hj, j - hj);
	}
take:
	if (b.err != PGN_OK) {
		rc = b.err;
		goto out;
	}
	*out = pgn_buf_take(&b, NULL);
	rc = *out == NULL ? PGN_ENOMEM : PGN_OK;
out:
	free(L);
	free(a);
	free(bl);
	pgn_buf_release(&b);
	return rc;
}
