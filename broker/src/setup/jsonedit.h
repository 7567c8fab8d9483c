/*
 * Format-preserving JSON editing (jsonedit.c): a syntax tree that keeps
 * each value's byte span, and edits applied as text splices, so every
 * byte outside what an edit adds or removes stays as it was.
 */
#ifndef PGN_JSONEDIT_H
#define PGN_JSONEDIT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "pigeon/pigeon.h"

/* Nesting of arrays and objects in a host config (deeper is refused). */
#define PGN_MAX_JSON_DEPTH 64

enum je_type {
	JE_NULL,
	JE_FALSE,
	JE_TRUE,
	JE_NUMBER,
	JE_STRING,
	JE_ARRAY,
	JE_OBJECT
};

struct je_node {
	enum je_type type;
	size_t start, end;   /* the value: text[start, end) */
	size_t kstart, kend; /* a member's key with its quotes; else start */
	char *key;           /* a member's decoded key, else NULL */
	char *str; /* a string's decoded value, a number's literal, or NULL */
	size_t n;  /* children */
	struct je_node *parent, *child, *last, *next, *prev;
	int drop;   /* an edit removes this member or element */
	cJSON *add; /* members (object) or elements (array) to append */
};

struct je_doc {
	const char *text; /* borrowed, must outlive the doc */
	size_t len;
	struct je_node *root; /* NULL for blank text */
	cJSON *fresh;         /* blank text: the document edits create */
	char eol[3];   /* "\n", "\r\n" or "\r": the text's first line end */
	char unit[9];  /* one level of indentation */
	char colon[5]; /* between a key and its value */
};

/*
 * Parse 'text' strictly (RFC 8259; with 'comments', also // and
 * block comments, as Gemini CLI accepts; a leading UTF-8 BOM is
 * skipped), refusing an object that holds a key twice, raw control
 * characters in strings and nesting past PGN_MAX_JSON_DEPTH. Blank text
 * gives a NULL root. On failure 'err' gets a phrase with the file as
 * subject ("is not valid JSON (line 3, column 7)"). PGN_OK, PGN_EINVAL,
 * PGN_ENOMEM; the doc is safe to release either way.
 */
pgn_status je_parse(struct je_doc *d, const char *text, size_t len,
    int comments, struct pgn_err *err);
void je_release(struct je_doc *d);

/* The member 'key' of object 'obj' not marked dropped, or NULL. */
struct je_node *je_get(const struct je_node *obj, const char *key);

/* "an array", "an object", "a string", ...: the node's type as a phrase. */
const char *je_type_phrase(const struct je_node *x);

/* The value as a cJSON tree (numbers as raw text), or NULL on ENOMEM. */
cJSON *je_to_cjson(const struct je_node *x);

/*
 * Edits. je_drop removes a member or element (never the root). je_push
 * appends 'value' (taken, also on failure) to the array at the object
 * path 'keys', creating the objects and the array that are missing;
 * je_put appends the member 'key': 'value' to the object at 'keys'.
 * PGN_OK, PGN_EINVAL (a path through a value of another type),
 * PGN_ENOMEM.
 */
void je_drop(struct je_node *x);
pgn_status je_push(struct je_doc *d, const char *const *keys, size_t nkeys,
    cJSON *value);
pgn_status je_put(struct je_doc *d, const char *const *keys, size_t nkeys,
    const char *key, cJSON *value);

/*
 * The text with the edits applied ('*out' the caller's, '*changed' 0 if
 * there were none). Removing an element takes its separator with it;
 * appended values copy the surrounding indentation, line ending and
 * spacing; a removal right after an append gives the bytes back.
 * PGN_OK, PGN_ETOOBIG (over 'max'), PGN_ENOMEM, PGN_EINVAL (edits that
 * overlap: a bug).
 */
pgn_status je_apply(const struct je_doc *d, size_t max, char **out,
    size_t *outlen, int *changed);

#endif
