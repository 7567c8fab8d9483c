/*
 * Full-text search of message bodies (store/search.c, docs/decisions/
 * 0170): SQLite's FTS5 index message_fts, filled by the store in the
 * transaction that inserts each message, and PostgreSQL's full-text
 * search over a GIN index of to_tsvector('simple', body). A search is
 * a list of words, all required, matched as words (no stemming), in
 * the current scope, newest first. Ownership as in pigeon.h.
 */
#ifndef PIGEON_SEARCH_H
#define PIGEON_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "pigeon/pigeon.h"

#define PGN_MAX_SEARCH_TEXT  1024 /* bytes of a search's text */
#define PGN_MAX_SEARCH_TERMS 32   /* words of a search's text */

struct pgn_search {
	const char *text;  /* the words, separated by white space */
	const char *agent; /* NULL: any; else sent by or to this agent */
	int64_t since_ms;  /* 0: any; else created at or after */
	int64_t before_id; /* 0: the newest; else ids below it (paging) */
	size_t limit;      /* 0: PGN_DEFAULT_LIST; at most PGN_MAX_LIST */
};

/* One message a search found (one row per recipient, as stored). */
struct pgn_hit {
	int64_t id;
	int64_t thread;   /* its thread: its first message's id */
	int64_t reply_to; /* 0: none */
	int64_t created_ms;
	int64_t delivered_ms; /* 0: still queued */
	char *sender;
	char *recipient;
	char *body;
	int64_t ack_ms;   /* 0, or an acknowledgement is asked (0157) */
	int64_t acked_ms; /* 0, or when it was acknowledged */
	int priority;     /* pgn_priority */
	int64_t woken_ms; /* 0, or when its send rang an idle session (0177) */
	char woken_via[32]; /* the mechanism: "claude-socket" */
	int unheard;        /* rung, but no delivery within PGN_WAKE_HEARD_MS */
	char group[PGN_MAX_NAME + 1]; /* sent to @group: its name, else "" */
};

struct pgn_hits {
	struct pgn_hit *v;
	size_t n;
	size_t cap;
};

void pgn_hits_release(struct pgn_hits *h);

/*
 * The messages of the current scope whose bodies hold every word of
 * q->text, newest first. PGN_EINVAL for a text with no word, over
 * PGN_MAX_SEARCH_TEXT bytes or PGN_MAX_SEARCH_TERMS words, or a bad
 * agent name; PGN_ETOOBIG for a limit over PGN_MAX_LIST. An unknown
 * agent or scope finds nothing.
 */
PGN_NODISCARD pgn_status pgn_search(pgn_db *db, const struct pgn_search *q,
    struct pgn_hits *out);

/*
 * One page of the current scope's messages, newest first (pigeon web):
 * ids below 'before_id' (0: the newest), of thread 'thread' only (0:
 * any), at most 'limit' (0: PGN_DEFAULT_LIST; at most PGN_MAX_LIST). A
 * page costs the same whatever the history's size: it walks the
 * primary key (or the thread index) down from 'before_id'.
 */
PGN_NODISCARD pgn_status pgn_messages_page(pgn_db *db, int64_t before_id,
    int64_t thread, size_t limit, struct pgn_hits *out);

/*
 * pgn_search and pgn_messages_page handing each hit to 'fn' as it is
 * read, copying nothing (pigeon web writes it straight into its answer,
 * decision 0254): the hit's strings are borrowed, valid during the call
 * only. fn(arg, NULL) comes first and again whenever the read starts
 * over (a retried snapshot): forget the hits given so far. A status
 * other than PGN_OK from 'fn' ends the read with it.
 */
typedef pgn_status pgn_hit_fn(void *arg, const struct pgn_hit *h);
PGN_NODISCARD pgn_status pgn_search_each(pgn_db *db, const struct pgn_search *q,
    pgn_hit_fn *fn, void *arg);
PGN_NODISCARD pgn_status pgn_messages_page_each(pgn_db *db, int64_t before_id,
    int64_t thread, size_t limit, pgn_hit_fn *fn, void *arg);

/*
 * The FTS5 query for 'text' into 'out' (malloc'd, the caller frees):
 * each word a string, quoted, '"' doubled, separated by spaces (all
 * required). Errors as pgn_search's, in 'err'. Pure: fuzz/fuzz_search.c.
 */
PGN_NODISCARD pgn_status pgn_search_query(const char *text, char **out,
    struct pgn_err *err);

/*
 * A hit as JSON (store/msgjson.c, decision 0238): pgn_msg_json's object,
 * the same keys in the same order with the same nulls, then the states
 * a hit carries: {"id", "from", "to", "created", "reply_to", "thread",
 * "ack_within_ms", "body", "priority", "group", "delivered",
 * "acknowledged", "woken", "woken_via", "heard"} (a time or null, the
 * mechanism or null, a boolean). `pigeon search --json` and pigeon web
 * write it. Times as pgn_msg_json writes them (UTC text), or with
 * PGN_HIT_JSON_MS as integer milliseconds since the epoch, for a reader
 * that computes with them (the web page: overdue = delivered + window).
 * A new cJSON object (cJSON_Delete), NULL on ENOMEM.
 */
enum { PGN_HIT_JSON_MS = 1 };
struct cJSON;
struct cJSON *pgn_hit_json(const struct pgn_hit *h, int flags);

#endif
