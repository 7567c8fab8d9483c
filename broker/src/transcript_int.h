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
#define TX_REDACT_SLACK 1024

/* A stream of JSONL bytes becoming a transcript, a chunk at a time. */
struct tx_parser {
	struct pgn_transcript *t;
	int skip; /* drop bytes up to the first newline: a cut line */
	int over; /* the current line went over the bound */
	size_t linelen;
	char *line; /* PGN_TRANSCRIPT_MAX_LINE + 1 bytes, allocated lazily */
	size_t cap;
	pgn_status err;
};

/* 'cut': the bytes start inside the file, so the first line is partial. */
void tx_parser_init(struct tx_parser *p, struct pgn_transcript *t, int cut);
void tx_parser_release(struct tx_parser *p);
/* Feed any split of the bytes: the result does not depend on the split. */
PGN_NODISCARD pgn_status tx_feed(struct tx_parser *p, const char *data,
    size_t len);
/* The last line, when the bytes do not end with a newline. */
PGN_NODISCARD pgn_status tx_finish(struct tx_parser *p);

/* ---- what a frame says, kept within bounds (all redacted) ---------- */

/* Append as much of 's' as fits in b->max (cut at a character). */
void tx_buf_fit(struct pgn_buf *b, const char *s);
/* A new string: s[0..len) redacted, cut to 'max' bytes at a character. */
char *tx_clip(const char *s, size_t len, size_t max);
PGN_NODISCARD pgn_status tx_prompt(struct pgn_transcript *t, const char *s);
PGN_NODISCARD pgn_status tx_answer(struct pgn_transcript *t, const char *s);
PGN_NODISCARD pgn_status tx_question(struct pgn_transcript *t, const char *s);
PGN_NODISCARD pgn_status tx_file(struct pgn_transcript *t, const char *path,
    size_t len);
/* The paths of a patch ("*** Add File: P", Update, Delete, "Move to"). */
PGN_NODISCARD pgn_status tx_patch(struct pgn_transcript *t, const char *patch);
PGN_NODISCARD pgn_status tx_command(struct pgn_transcript *t, const char *cmd,
    int background);
/* One call of tool 'name' ('sub': an MCP server/tool, or NULL). */
PGN_NODISCARD pgn_status tx_call(struct pgn_transcript *t, const char *name,
    const char *sub);
/* The last turn ended ('status': the host's word) or opened (OPEN). */
PGN_NODISCARD pgn_status tx_end(struct pgn_transcript *t, pgn_tx_outcome o,
    const char *status, const char *error);

/* Helpers over cJSON that never fail on a wrong type. */
const char *tx_str(const cJSON *obj, const char *key);
const cJSON *tx_obj(const cJSON *obj, const char *key);
const cJSON *tx_arr(const cJSON *obj, const char *key);
int tx_true(const cJSON *obj, const char *key);
/* The first string of obj's keys[] (a NULL-terminated list), or NULL. */
const char *tx_str_any(const cJSON *obj, const char *const *keys);
/* A command given as an array: ["bash","-lc",X] is X, else words joined. */
PGN_NODISCARD pgn_status tx_command_argv(struct pgn_transcript *t,
    const cJSON *argv, int background);
/* An edit tool's input object: its path (file_path, path, ...). */
PGN_NODISCARD pgn_status tx_edit_input(struct pgn_transcript *t,
    const cJSON *input);
/* Is 'name' a tool that writes the file its input names? */
int tx_is_edit_tool(const char *name);

/* ---- one frame of each format: '*known' says whether it was one ---- */

pgn_tx_format tx_detect(const cJSON *frame);
PGN_NODISCARD pgn_status tx_cursor_frame(struct pgn_transcript *t,
    const cJSON *frame, int *known);
PGN_NODISCARD pgn_status tx_claude_frame(struct pgn_transcript *t,
    const cJSON *frame, int *known);
PGN_NODISCARD pgn_status tx_codex_frame(struct pgn_transcript *t,
    const cJSON *frame, int *known);

#endif
