/*
 * A minimal, byte-exact TOML editor (tomledit.c) for one job: adding a
 * string to, or removing it from, an array of strings 'key' in table
 * '[table]' (Codex's [sandbox_workspace_write] writable_roots), keeping
 * every other byte: comments, layout, CRLF. Shapes it cannot edit
 * safely, and text that is not TOML (duplicate keys included), are
 * refused with the text untouched.
 */
#ifndef PGN_TOMLEDIT_H
#define PGN_TOMLEDIT_H

#include <stddef.h>

#include "pigeon/pigeon.h"

/* Nesting of arrays and inline tables in a TOML value (deeper: refused). */
#define PGN_MAX_TOML_DEPTH 32
/*
 * The comment on the header and the key line the add creates: how the
 * removal knows they are its own, not a user's identical lines.
 */
#define TE_MARK "added by pigeon install"
/* Bytes of one key part compared (a longer part is never ours). */
#define PGN_MAX_TOML_KEY 64

/*
 * With 'add', make 'value' an element of array 'key' of table 'table'
 * (both bare keys), creating the table (at the end) or the key (right
 * after the table's header) when missing; nothing changes if it is an
 * element already. Without 'add', remove the last element equal to
 * 'value', and the key line and the table when they are left exactly as
 * the add created them. 'text' NULL: the file is absent; '*gone' (may
 * be NULL) is 1 when a removal leaves nothing of a file the add created
 * (an empty file the add found stays: the add wrote a line end first).
 * '*out' is the caller's (the input's bytes when '*changed' is 0).
 * PGN_OK, PGN_EINVAL (text that is not TOML: a syntax error, a lone CR,
 * a value TOML does not know, a key, table or array of tables defined
 * twice in any of TOML's ways;
 * or the table or key defined in a shape this editor does not edit: a
 * dotted key, an inline table, an array of tables, a table at the key;
 * 'err' gets a phrase with the file as subject), PGN_ETOOBIG (over
 * 'max'), PGN_ENOMEM.
 */
pgn_status te_array_edit(const char *text, size_t len, const char *table,
    const char *key, const char *value, int add, size_t max, char **out,
    size_t *outlen, int *changed, int *gone, struct pgn_err *err);

/* '*has' 1 if 'value' is an element of [table] key; errors as above. */
pgn_status te_array_has(const char *text, size_t len, const char *table,
    const char *key, const char *value, int *has, struct pgn_err *err);

/* 'value' as a TOML basic string, quotes included (caller frees). */
char *te_quote(const char *value);

#endif
