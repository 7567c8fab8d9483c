/*
 * Internals of the transcript readers: the line splitter every format
 * shares, the helpers that keep what a frame says within its bounds,
 * and the one frame handler per format.
 */
#ifndef PGN_TRANSCRIPT_INT_H
#define PGN_TRANSCRIPT_INT_H

#include <cjson/cJSON.h>

#include "pigeon/transcript.h"
#include "pgn_int.h"

/* Bytes past a kept text's bound still redacted, so a cut never shows
 * the start of a credential that runs over it. */
#define TR_REDACT_SLACK 1024

/*
 * How far each of redact.c's matchers looks before it gives up, so
 * redaction stays linear in the text (docs/decisions/0128).
 */
#define TR_REDACT_MAX_NAME      64 /* bytes of a name or flag */
#define TR_REDACT_MAX_PARTS     8  /* last parts of a name looked at */
#define TR_REDACT_MAX_TAILS     2  /* _BASE, _HASH... skipped at its end */
#define TR_REDACT_KEY_REACH     3  /* parts before _KEY that may say its kind */
#define TR_REDACT_MAX_VALUE     1024 /* bytes sought for a closing quote */
#define TR_REDACT_MAX_GAP       8    /* spaces between a flag and its value */
#define TR_REDACT_MAX_PEM_LABEL 64   /* bytes between -----BEGIN and PRIVATE */
#define TR_REDACT_MAX_USERINFO  256  /* bytes of user:password in a URL */
#define TR_REDACT_KEY_MIN       16   /* a bare *_KEY value this long, mixed */
#define TR_REDACT_BEARER_MIN    16   /* a token after a bare Bearer/Basic */

/*
 * Row k of redact.c's token shapes: its prefix, the least body after it
 * and whether the prefix stays (a webhook's host). 0 past the last row.
 */
int tr_redact_shape(size_t k, const char **prefix, size_t *min, int *keep);

/* A stream of JSONL bytes becoming a transcript, a chunk at a time. */
struct tr_parser {
	struct pgn_transcript *t;
	int skip; /* drop bytes up to the first newline: a cut line */
	int over; /* the current line went over the bound */
	size_t linelen;
	char *line; /* PGN_TRANSCRIPT_MAX_LINE + 1 bytes, allocated lazily */
	size_t cap;
	pgn_status err;
};

/* 'cut': the bytes start inside the file, so the first line is partial. */
void tr_parser_init(struct tr_parser *p, struct pgn_transcript *t, int cut);
void tr_parser_release(struct tr_parser *p);
/* Feed any split of the bytes: the result does not depend on the split. */
PGN_NODISCARD pgn_status tr_feed(struct tr_parser *p, const char *data,
    size_t len);
/* The last line, when the bytes do not end with a newline. */
PGN_NODISCARD pgn_status tr_finish(struct tr_parser *p);

/* ---- what a frame says, kept within bounds (all redacted) ---------- */

/* Append as much of 's' as fits in b->max (cut at a character). */
void tr_buf_fit(struct pgn_buf *b, const char *s);
/* A new string: s[0..len) redacted, cut to 'max' bytes at a character. */
char *tr_clip(const char *s, size_t len, size_t max);
PGN_NODISCARD pgn_status tr_prompt(struct pgn_transcript *t, const char *s);
PGN_NODISCARD pgn_status tr_answer(struct pgn_transcript *t, const char *s);
PGN_NODISCARD pgn_status tr_question(struct pgn_transcript *t, const char *s);
PGN_NODISCARD pgn_status tr_file(struct pgn_transcript *t, const char *path,
    size_t len);
/* The paths of a patch ("*** Add File: P", Update, Delete, "Move to"). */
PGN_NODISCARD pgn_status tr_patch(struct pgn_transcript *t, const char *patch);
PGN_NODISCARD pgn_status tr_command(struct pgn_transcript *t, const char *cmd,
    int background);
/* One call of tool 'name' ('sub': an MCP server/tool, or NULL). */
PGN_NODISCARD pgn_status tr_call(struct pgn_transcript *t, const char *name,
    const char *sub);
/* The last turn ended ('status': the host's word) or opened (OPEN). */
PGN_NODISCARD pgn_status tr_end(struct pgn_transcript *t,
    pgn_transcript_outcome o, const char *status, const char *error);

/* Settle every kept field within its bound (the end of a parse). */
PGN_NODISCARD pgn_status tr_settle(struct pgn_transcript *t);
/* Is s[0..len) empty or only white space? */
int tr_blank(const char *s, size_t len);

/* Helpers over cJSON that never fail on a wrong type. */
const char *tr_str(const cJSON *obj, const char *key);
const cJSON *tr_obj(const cJSON *obj, const char *key);
const cJSON *tr_arr(const cJSON *obj, const char *key);
int tr_true(const cJSON *obj, const char *key);
/* The first string of obj's keys[] (a NULL-terminated list), or NULL. */
const char *tr_str_any(const cJSON *obj, const char *const *keys);
/* A command given as an array: ["bash","-lc",X] is X, else words joined. */
PGN_NODISCARD pgn_status tr_command_argv(struct pgn_transcript *t,
    const cJSON *argv, int background);
/* An edit tool's input object: its path (file_path, path, ...). */
PGN_NODISCARD pgn_status tr_edit_input(struct pgn_transcript *t,
    const cJSON *input);
/* Is 'name' a tool that writes the file its input names? */
int tr_is_edit_tool(const char *name);

/* ---- one frame of each format: '*known' says whether it was one ---- */

pgn_transcript_format tr_detect(const cJSON *frame);
PGN_NODISCARD pgn_status tr_cursor_frame(struct pgn_transcript *t,
    const cJSON *frame, int *known);
PGN_NODISCARD pgn_status tr_claude_frame(struct pgn_transcript *t,
    const cJSON *frame, int *known);
PGN_NODISCARD pgn_status tr_codex_frame(struct pgn_transcript *t,
    const cJSON *frame, int *known);

#endif
