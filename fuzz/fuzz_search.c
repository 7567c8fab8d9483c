/*
 * Fuzz the search text's FTS5 query (store/search.c, pgn_search_query).
 * On any bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - refused: no query, a message; accepted: the text is valid UTF-8,
 *     within PGN_MAX_SEARCH_TEXT bytes and PGN_MAX_SEARCH_TERMS words;
 *   - the query read back (strings in '"', '""' for '"', one space
 *     between) gives the text's words, each whole and in order;
 *   - SQLite's FTS5 takes the query without a syntax error, whatever
 *     the words (operators, column filters, '*', '^', parentheses).
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pgn_int.h"
#include "pigeon/search.h"

static sqlite3 *lite;
static sqlite3_stmt *match;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	check(sqlite3_open(":memory:", &lite) == SQLITE_OK);
	check(sqlite3_exec(lite,
	          "CREATE TABLE message(id INTEGER PRIMARY KEY, body TEXT);"
	          "CREATE VIRTUAL TABLE message_fts USING fts5(body, "
	          "content=message, content_rowid=id, columnsize=0);"
	          "INSERT INTO message VALUES (1, 'a b c');"
	          "INSERT INTO message_fts(rowid, body) VALUES (1, 'a b c');",
	          NULL, NULL, NULL) == SQLITE_OK);
	check(sqlite3_prepare_v2(lite,
	          "SELECT rowid FROM message_fts WHERE message_fts MATCH ?1",
	          -1, &match, NULL) == SQLITE_OK);
	return 0;
}

static int
space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	    c == '\f';
}

/* The query's strings, each compared with the text's next word. */
static void
read_back(const char *text, const char *q)
{
	const char *t = text;
	size_t words = 0;

	while (*q != '\0') {
		if (words > 0) {
			check(*q == ' ');
			q++;
		}
		check(*q++ == '"');
		while (*t != '\0' && space(*t))
			t++;
		check(*t != '\0');
		for (;;) {
			if (q[0] == '"' && q[1] == '"') {
				check(*t++ == '"');
				q += 2;
			} else if (q[0] == '"') {
				q++;
				break;
			} else {
				check(*q != '\0' && *t == *q);
				q++;
				t++;
			}
		}
		check(*t == '\0' || space(*t));
		words++;
	}
	while (*t != '\0' && space(*t))
		t++;
	check(*t == '\0');
	check(words >= 1 && words <= PGN_MAX_SEARCH_TERMS);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_err err;
	char *text, *q = (char *)"x";
	int rc;

	if (size > 2 * PGN_MAX_SEARCH_TEXT)
		return 0;
	text = fuzz_cstr(data, size);
	if (text == NULL)
		return 0;
	pgn_err_clear(&err);
	if (pgn_search_query(text, &q, &err) != PGN_OK) {
		check(q == NULL);
		check(err.msg[0] != '\0');
		free(text);
		return 0;
	}
	check(q != NULL);
	check(strlen(text) <= PGN_MAX_SEARCH_TEXT);
	check(pgn_utf8_valid(text, strlen(text)));
	read_back(text, q);
	sqlite3_reset(match);
	check(sqlite3_bind_text(match, 1, q, -1, SQLITE_STATIC) == SQLITE_OK);
	while ((rc = sqlite3_step(match)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE)
		fprintf(stderr, "query '%s': %s\n", q, sqlite3_errmsg(lite));
	check(rc == SQLITE_DONE);
	sqlite3_reset(match);
	free(q);
	free(text);
	return 0;
}
