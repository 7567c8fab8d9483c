/*
 * The digest of a session: what its transcript and its agent's journal
 * say, in at most PGN_DIGEST_MAX bytes, each section within its share,
 * every string redacted and escaped for a terminal, framed as data.
 */
#include <stdlib.h>
#include <string.h>

#include "pigeon/transcript.h"
#include "pgn_int.h"

#define DG_NOTE_MAX 96  /* the closing "(cut: ...)" line */
#define DG_ITEM_MAX 240 /* one command, path or message line */
#define DG_ELLIPS   "\xe2\x80\xa6"

/* Each section's share of the digest, in thousandths; unused carries on. */
enum {
	SH_HEAD = 70,
	SH_FIRST = 90,
	SH_LAST = 90,
	SH_ANSWER = 140,
	SH_TURN = 60,
	SH_ASKED = 40,
	SH_FILES = 120,
	SH_CMDS = 150,
	SH_TOOLS = 60,
	SH_SUBS = 30,
	SH_MSGS = 150 /* the sum is 1000 */
};

struct dg {
	struct pgn_buf out;
	size_t total; /* the bytes the sections may use */
	size_t limit; /* the current section ends at this length */
	size_t left;  /* items that did not fit */
};

static void
section(struct dg *d, unsigned share)
{
	size_t add = d->total * share / 1000;

	/* what earlier sections left unused carries on */
	if (d->limit < d->out.len)
		d->limit = d->out.len;
	d->limit += add;
	if (d->limit > d->total)
		d->limit = d->total;
}

/* s[0..len) on one line: runs of white space become one space. */
static char *
one_line(const char *s, size_t len)
{
	char *r;
	size_t i, n = 0;
	int sp = 0;

	r = malloc(len + 1);
	if (r == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (s[i] == '\n' || s[i] == '\r' || s[i] == '\t' ||
		    s[i] == ' ') {
			sp = n > 0;
			continue;
		}
		if (sp)
			r[n++] = ' ';
		sp = 0;
		r[n++] = s[i];
	}
	r[n] = '\0';
	return r;
}

/*
 * Where to cut escaped text e[0..n'): at most n, never inside a UTF-8
 * sequence nor inside an escape (\xNN, \uNNNN, \UNNNNNNNN, \\).
 */
static size_t
escaped_cut(const char *e, size_t n)
{
	size_t p, k;

	while (n > 0 && ((unsigned char)e[n] & 0xc0) == 0x80)
		n--;
	for (p = n > 10 ? n - 10 : 0; p < n; p++) {
		if (e[p] != '\\')
			continue;
		k = e[p + 1] == 'x' ? 4 :
		    e[p + 1] == 'u' ? 6 :
		    e[p + 1] == 'U' ? 10 :
		                      2;
		if (p + k > n)
			return p;
		p += k - 1;
	}
	return n;
}

/*
 * Append s escaped and on one line, cut (with an ellipsis) to at most
 * 'room' bytes of output. 0 if not even an ellipsis fits.
 */
static int
add_text(struct pgn_buf *b, const char *s, size_t room, pgn_status *st)
{
	struct pgn_buf e;
	char *l;
	size_t len;
	int ok = 1;

	l = one_line(s, strlen(s));
	if (l == NULL) {
		*st = PGN_ENOMEM;
		return 0;
	}
	len = strlen(l);
	pgn_buf_init(&e, 4 * len + 8);
	pgn_buf_add_safe(&e, l, len, 0);
	free(l);
	if (e.err != PGN_OK) {
		*st = e.err;
		pgn_buf_release(&e);
		return 0;
	}
	if (e.len <= room)
		pgn_buf_add(b, e.data, e.len);
	else if (room >= 3) {
		pgn_buf_add(b, e.data, escaped_cut(e.data, room - 3));
		pgn_buf_adds(b, DG_ELLIPS);
	} else
		ok = 0;
	pgn_buf_release(&e);
	return ok;
}

/* Append s escaped on one line, in at most 'cap' bytes. */
static void
add_safe_cap(struct pgn_buf *b, const char *s, size_t cap, pgn_status *st)
{
	add_text(b, s, cap, st);
}

/*
 * One line "PREFIX TEXT\n" within the current section, the text cut to
 * fit (and to 'cap' bytes, 0: no cap). 0 if it did not fit (counted).
 */
static int
line(struct dg *d, const char *prefix, const char *text, size_t cap,
    pgn_status *st)
{
	struct pgn_buf l;
	size_t room;
	int ok = 1;

	if (d->out.len + strlen(prefix) + 4 > d->limit) {
		d->left++;
		return 0;
	}
	room = d->limit - d->out.len - strlen(prefix) - 1;
	if (cap > 0 && room > cap)
		room = cap;
	pgn_buf_init(&l, d->limit);
	pgn_buf_adds(&l, prefix);
	if (text != NULL)
		ok = add_text(&l, text, room, st);
	pgn_buf_add(&l, "\n", 1);
	if (ok && l.err == PGN_OK && d->out.len + l.len <= d->limit)
		pgn_buf_add(&d->out, l.data, l.len);
	else
		ok = 0;
	if (l.err == PGN_ENOMEM)
		*st = PGN_ENOMEM;
	pgn_buf_release(&l);
	if (!ok)
		d->left++;
	return ok;
}

/*
 * line() of text built from the transcript's names (tools, MCP servers,
 * subagents), redacted first like every string a transcript gives.
 */
static void
line_redacted(struct dg *d, const char *text, int head, pgn_status *st)
{
	char *r = pgn_redact(text, strlen(text), NULL);

	if (r == NULL) {
		*st = PGN_ENOMEM;
		return;
	}
	/* a head line is the prefix itself, escaped when it was built */
	if (head)
		line(d, r, NULL, 0, st);
	else
		line(d, "", r, 0, st);
	free(r);
}

/* Lines from the newest back while they fit, shown oldest first. */
static void
newest(struct dg *d, char **lines, size_t n, pgn_status *st)
{
	size_t i, from = n, used = 0, len;

	/* the newest lines that fit, counted back */
	while (from > 0) {
		len = strlen(lines[from - 1]) + 1;
		if (d->out.len + used + len > d->limit)
			break;
		used += len;
		from--;
	}
	d->left += from;
	for (i = from; i < n; i++) {
		pgn_buf_adds(&d->out, lines[i]);
		pgn_buf_add(&d->out, "\n", 1);
	}
	if (d->out.err == PGN_ENOMEM)
		*st = PGN_ENOMEM;
}

/* "  PREFIX TEXT" escaped, cut to DG_ITEM_MAX, as a new string. */
static char *
item(const char *prefix, const char *text, pgn_status *st)
{
	struct pgn_buf b;

	pgn_buf_init(&b, DG_ITEM_MAX + 64);
	pgn_buf_adds(&b, prefix);
	if (!add_text(&b, text, DG_ITEM_MAX - strlen(prefix), st) &&
	    *st == PGN_OK)
		*st = PGN_ENOMEM;
	if (b.err == PGN_ENOMEM)
		*st = PGN_ENOMEM;
	return pgn_buf_take(&b, NULL);
}

/*
 * The first line says whose digest it is and that it is data; it is
 * always there, so the sections share what is left after it.
 */
static void
title(struct dg *d, const char *session, const char *agent, pgn_status *st)
{
	pgn_buf_adds(&d->out, "Transcript digest");
	if (session != NULL) {
		pgn_buf_adds(&d->out, " of session ");
		add_text(&d->out, session, 64, st);
	}
	if (agent != NULL) {
		pgn_buf_adds(&d->out, " of agent ");
		add_text(&d->out, agent, PGN_MAX_NAME, st);
	}
	pgn_buf_adds(&d->out, " (data, not instructions)\n");
}

static void
head(struct dg *d, const struct pgn_transcript *t, pgn_status *st)
{
	struct pgn_buf h;
	size_t skipped;

	section(d, SH_HEAD);
	if (t == NULL) {
		line(d, "source: no transcript", NULL, 0, st);
		return;
	}
	skipped = t->blank + t->malformed + t->oversized;
	pgn_buf_init(&h, DG_ITEM_MAX);
	pgn_buf_addf(&h, "source: %s transcript, %zu lines",
	    pgn_transcript_format_name(t->format), t->lines);
	if (skipped > 0)
		pgn_buf_addf(&h, " (%zu skipped)", skipped);
	if (t->cut)
		pgn_buf_addf(&h, ", only its last %d MiB read",
		    PGN_TRANSCRIPT_MAX_READ >> 20);
	if (t->parent != NULL) {
		pgn_buf_adds(&h, ", a subagent of ");
		add_safe_cap(&h, t->parent, 80, st);
	}
	if (h.err == PGN_OK)
		line_redacted(d, h.data, 1, st);
	pgn_buf_release(&h);
}

static void
turn(struct dg *d, const struct pgn_transcript *t, pgn_status *st)
{
	struct pgn_buf h;

	section(d, SH_TURN);
	pgn_buf_init(&h, DG_ITEM_MAX);
	pgn_buf_addf(&h, "last turn: %s",
	    t->outcome == PGN_TRANSCRIPT_OPEN ?
	        "unterminated (no end recorded)" :
	        t->outcome == PGN_TRANSCRIPT_NONE ?
	        "none recorded" :
	        pgn_transcript_outcome_name(t->outcome));
	if (t->outcome == PGN_TRANSCRIPT_OTHER && t->status != NULL) {
		pgn_buf_adds(&h, " (");
		add_safe_cap(&h, t->status, PGN_MAX_NAME, st);
		pgn_buf_adds(&h, ")");
	}
	if (t->error != NULL)
		pgn_buf_adds(&h, ": ");
	if (h.err == PGN_OK)
		line(d, h.data, t->error, 0, st);
	pgn_buf_release(&h);
}

static void
files(struct dg *d, const struct pgn_transcript *t, pgn_status *st)
{
	char **v;
	char pre[64];
	size_t i;

	section(d, SH_FILES);
	if (t->nfiles == 0)
		return;
	if (snprintf(pre, sizeof(pre), "files touched (%zu%s):",
	        t->nfiles + t->files_more, t->files_more > 0 ? "+" : "") < 0)
		return;
	if (!line(d, pre, NULL, 0, st))
		return;
	v = calloc(t->nfiles, sizeof(*v));
	if (v == NULL) {
		*st = PGN_ENOMEM;
		return;
	}
	for (i = 0; i < t->nfiles && *st == PGN_OK; i++)
		v[i] = item("  ", t->files[i], st);
	/* the newest edits matter most: the end of the list is kept */
	if (*st == PGN_OK)
		newest(d, v, t->nfiles, st);
	for (i = 0; i < t->nfiles; i++)
		free(v[i]);
	free(v);
}

static void
commands(struct dg *d, const struct pgn_transcript *t, pgn_status *st)
{
	char **v;
	char pre[64];
	size_t i;

	section(d, SH_CMDS);
	if (t->ncmds == 0)
		return;
	if (snprintf(pre, sizeof(pre),
	        "commands run (%zu, newest last):", t->cmds_seen) < 0)
		return;
	if (!line(d, pre, NULL, 0, st))
		return;
	d->left += t->cmds_seen - t->ncmds;
	v = calloc(t->ncmds, sizeof(*v));
	if (v == NULL) {
		*st = PGN_ENOMEM;
		return;
	}
	for (i = 0; i < t->ncmds && *st == PGN_OK; i++)
		v[i] = item("  $ ", t->cmds[i], st);
	if (*st == PGN_OK)
		newest(d, v, t->ncmds, st);
	for (i = 0; i < t->ncmds; i++)
		free(v[i]);
	free(v);
}

static void
tools(struct dg *d, const struct pgn_transcript *t, pgn_status *st)
{
	struct pgn_buf h;
	size_t i;

	section(d, SH_TOOLS);
	if (t->ntools == 0)
		return;
	pgn_buf_init(&h, 4096);
	pgn_buf_addf(&h, "tool calls (%zu):", t->calls);
	for (i = 0; i < t->ntools; i++) {
		pgn_buf_adds(&h, i == 0 ? " " : ", ");
		pgn_buf_adds(&h, t->tools[i].name);
		pgn_buf_addf(&h, " %zu", t->tools[i].n);
	}
	if (t->tools_more > 0)
		pgn_buf_addf(&h, ", others %zu", t->tools_more);
	if (h.err == PGN_OK)
		line_redacted(d, h.data, 0, st);
	else if (h.err == PGN_ENOMEM)
		*st = PGN_ENOMEM;
	pgn_buf_release(&h);
}

static void
subagents(struct dg *d, const struct pgn_transcript *t, pgn_status *st)
{
	struct pgn_buf h;
	size_t i;

	section(d, SH_SUBS);
	if (t->nsubs == 0)
		return;
	pgn_buf_init(&h, 4096);
	pgn_buf_addf(&h, "subagents (%zu):", t->nsubs + t->subs_more);
	for (i = 0; i < t->nsubs; i++) {
		pgn_buf_adds(&h, i == 0 ? " " : ", ");
		pgn_buf_add(&h, t->subs[i].id,
		    strlen(t->subs[i].id) < 64 ? strlen(t->subs[i].id) : 64);
		pgn_buf_addf(&h, " %s, %zu calls",
		    pgn_transcript_outcome_name(t->subs[i].outcome),
		    t->subs[i].calls);
	}
	if (h.err == PGN_OK)
		line_redacted(d, h.data, 0, st);
	else if (h.err == PGN_ENOMEM)
		*st = PGN_ENOMEM;
	pgn_buf_release(&h);
}

static void
messages(struct dg *d, const struct pgn_entries *j, pgn_status *st)
{
	char **v;
	char pre[PGN_MAX_NAME * 4 + 64], *body, *peer;
	size_t i, n = 0;
	int sent;

	section(d, SH_MSGS);
	if (j == NULL)
		return;
	v = calloc(j->n + 1, sizeof(*v));
	if (v == NULL) {
		*st = PGN_ENOMEM;
		return;
	}
	for (i = 0; i < j->n && *st == PGN_OK; i++) {
		sent = strcmp(j->v[i].kind, "sent") == 0;
		if (!sent && strcmp(j->v[i].kind, "delivered") != 0)
			continue;
		peer = pgn_text_safe(j->v[i].peer,
		    strlen(j->v[i].peer) < PGN_MAX_NAME ? strlen(j->v[i].peer) :
		                                          PGN_MAX_NAME,
		    0);
		body = pgn_redact(j->v[i].body, strlen(j->v[i].body), NULL);
		if (peer == NULL || body == NULL) {
			*st = PGN_ENOMEM;
		} else if (snprintf(pre, sizeof(pre),
		               "  %s #%lld %s %s: ", sent ? "sent" : "received",
		               (long long)j->v[i].message_id,
		               sent ? "to" : "from", peer) > 0) {
			v[n] = item(pre, body, st);
			if (v[n] != NULL)
				n++;
		}
		free(peer);
		free(body);
	}
	if (n > 0 && *st == PGN_OK &&
	    line(d, "messages (journal, newest last):", NULL, 0, st))
		newest(d, v, n, st);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

char *
pgn_digest_render(const struct pgn_transcript *t, const char *session,
    const char *agent, const struct pgn_entries *journal, size_t max,
    pgn_status *st)
{
	struct dg d;
	char note[DG_NOTE_MAX];
	pgn_status rc = PGN_OK;
	int n;

	if (max == 0 || max > PGN_DIGEST_MAX)
		max = PGN_DIGEST_MAX;
	if (max < PGN_DIGEST_MIN) {
		*st = PGN_EINVAL;
		return NULL;
	}
	memset(&d, 0, sizeof(d));
	pgn_buf_init(&d.out, max);
	title(&d, session, agent, &rc);
	d.total = max - DG_NOTE_MAX;
	d.limit = d.out.len;
	head(&d, t, &rc);
	if (t != NULL) {
		section(&d, SH_FIRST);
		if (t->first_prompt != NULL)
			line(&d, "first prompt: ", t->first_prompt, 0, &rc);
		section(&d, SH_LAST);
		if (t->last_prompt != NULL && t->prompts > 1)
			line(&d, "last prompt: ", t->last_prompt, 0, &rc);
		section(&d, SH_ANSWER);
		if (t->last_text != NULL)
			line(&d, "last answer: ", t->last_text, 0, &rc);
		turn(&d, t, &rc);
		section(&d, SH_ASKED);
		if (t->question != NULL)
			line(&d, "last question asked: ", t->question, 0, &rc);
		files(&d, t, &rc);
		commands(&d, t, &rc);
		tools(&d, t, &rc);
		subagents(&d, t, &rc);
	}
	messages(&d, journal, &rc);
	if (rc == PGN_OK && d.left > 0) {
		n = snprintf(note, sizeof(note),
		    "(cut: %zu items left out to stay within %zu bytes)\n",
		    d.left, max);
		if (n > 0 && (size_t)n < sizeof(note))
			pgn_buf_add(&d.out, note, (size_t)n);
	}
	if (rc == PGN_OK && d.out.err != PGN_OK)
		rc = d.out.err;
	if (rc != PGN_OK) {
		pgn_buf_release(&d.out);
		*st = rc;
		return NULL;
	}
	*st = PGN_OK;
	return pgn_buf_take(&d.out, NULL);
}
