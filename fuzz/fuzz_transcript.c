/*
 * Fuzz the transcript readers and the digest (transcript.c, digest.c,
 * redact.c). On any bytes, read as each format:
 *   - never a crash, a leak or undefined behaviour;
 *   - the counts agree: lines = blank + malformed + oversized + frames,
 *     frames = known + unknown;
 *   - every kept string and list is within its bound;
 *   - bytes fed in two pieces, split anywhere, read as fed whole;
 *   - the digest is at most PGN_DIGEST_MAX bytes of valid UTF-8 with no
 *     control byte but newline, whatever max it is asked for.
 */

#include "fuzz.h"

#include "pigeon/pigeon.h"
#include "pigeon/transcript.h"

#include "transcript_int.h"

#define TR_FUZZ_MAX (1 << 20)

static void
bounded(const char *s, size_t max)
{
	if (s != NULL)
		check(strlen(s) <= max);
}

static void
invariants(const struct pgn_transcript *t)
{
	size_t i;

	check(t->lines == t->blank + t->malformed + t->oversized + t->frames);
	check(t->frames == t->known + t->unknown);
	check(t->outcome >= PGN_TRANSCRIPT_NONE &&
	    t->outcome <= PGN_TRANSCRIPT_OTHER);
	check(t->nfiles <= PGN_TRANSCRIPT_MAX_FILES);
	check(t->ncmds <= PGN_TRANSCRIPT_MAX_CMDS);
	check(t->ncmds <= t->cmds_seen);
	check(t->ntools <= PGN_TRANSCRIPT_MAX_TOOLS);
	check(t->prompts > 0 || t->first_prompt == NULL);
	check((t->first_prompt == NULL) == (t->last_prompt == NULL));
	bounded(t->first_prompt, PGN_TRANSCRIPT_MAX_TEXT);
	bounded(t->last_prompt, PGN_TRANSCRIPT_MAX_TEXT);
	bounded(t->last_text, PGN_TRANSCRIPT_MAX_TEXT);
	bounded(t->question, PGN_TRANSCRIPT_MAX_TEXT);
	bounded(t->error, PGN_TRANSCRIPT_MAX_CMD);
	for (i = 0; i < t->nfiles; i++)
		bounded(t->files[i], PGN_TRANSCRIPT_MAX_PATH);
	for (i = 0; i < t->ncmds; i++)
		bounded(t->cmds[i], PGN_TRANSCRIPT_MAX_CMD);
}

static void
digest_ok(const struct pgn_transcript *t, size_t max)
{
	pgn_status st;
	char *d;
	size_t i, n;

	d = pgn_digest_render(t, "cursor:fuzz", "fuzz", NULL, max, &st);
	if (max != 0 && max < 400) {
		check(d == NULL && st == PGN_EINVAL);
		return;
	}
	check(d != NULL);
	n = strlen(d);
	check(n <= PGN_DIGEST_MAX && (max == 0 || n <= max));
	for (i = 0; i < n; i++)
		check((unsigned char)d[i] >= 0x20 || d[i] == '\n');
	check((unsigned char)d[n - 1] == '\n');
	check(pgn_utf8_valid(d, n));
	free(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const pgn_transcript_format formats[] = {PGN_TRANSCRIPT_UNKNOWN,
	    PGN_TRANSCRIPT_CURSOR, PGN_TRANSCRIPT_CLAUDE, PGN_TRANSCRIPT_CODEX};
	struct pgn_transcript t, u;
	struct tr_parser p;
	char err[512];
	const char *s = (const char *)data;
	size_t i, cut;
	pgn_status st;

	if (size > TR_FUZZ_MAX)
		return 0;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		st = pgn_transcript_parse(s, size, formats[i], &t, err,
		    sizeof(err));
		check(st == PGN_OK || st == PGN_EINVAL);
		check(st == PGN_OK || err[0] != '\0');
		invariants(&t);
		if (st == PGN_OK)
			digest_ok(&t, i == 0 ? 0 : size % 5000);
		/* the same bytes in two pieces */
		cut = size > 0 ? (size_t)data[0] * 7919 % (size + 1) : 0;
		pgn_transcript_init(&u);
		u.format = formats[i];
		tr_parser_init(&p, &u, 0);
		check(tr_feed(&p, s, cut) == PGN_OK);
		check(tr_feed(&p, s + cut, size - cut) == PGN_OK);
		check(tr_finish(&p) == PGN_OK);
		tr_parser_release(&p);
		check(u.lines == t.lines && u.frames == t.frames &&
		    u.oversized == t.oversized && u.calls == t.calls &&
		    u.prompts == t.prompts && u.outcome == t.outcome &&
		    u.cmds_seen == t.cmds_seen && u.format == t.format);
		pgn_transcript_release(&u);
		pgn_transcript_release(&t);
	}
	return 0;
}
