/*
 * pigeon web's logic (web/web.c, docs/web.md, decision 0171): one
 * request in, one response out, no sockets. The binary (cli/cmd_web.c)
 * serves it over libmicrohttpd, bound to 127.0.0.1; this side checks
 * the Host header and the token, routes, answers JSON, serves the
 * embedded page, and never writes unless sending was allowed.
 * Ownership as in pigeon.h.
 */
#ifndef PIGEON_WEB_H
#define PIGEON_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "pigeon/pigeon.h"

#define PGN_WEB_PORT_DEFAULT    7734      /* --port's default */
#define PGN_WEB_TOKEN_BYTES     16        /* random bytes of the token */
#define PGN_WEB_MAX_TARGET      4096      /* bytes of a request's target */
#define PGN_WEB_MAX_BODY        8192      /* bytes of a request's body */
#define PGN_WEB_MAX_PARAMS      8         /* parameters of a query or form */
#define PGN_WEB_PAGE            50        /* rows of a page by default */
#define PGN_WEB_MAX_PAGE        200       /* rows of a page at most */
#define PGN_WEB_MAX_ANSWER      (8 << 20) /* bytes of a JSON answer */
#define PGN_WEB_MAX_CONNECTIONS 64        /* connections served at once */
#define PGN_WEB_MAX_STRANGERS   32        /* of them without the token yet */
#define PGN_WEB_TIMEOUT_S       30        /* idle this long: closed */
#define PGN_WEB_HEAD_TIMEOUT_S  5         /* a stranger idle this long */
#define PGN_WEB_MAX_HEADERS     16384     /* bytes of a request's head */
#define PGN_WEB_KEEPALIVE_MS    15000     /* an event stream's comment */
#define PGN_WEB_CHECK_MS        1000      /* the database file looked at */

/* A request as the server read it. */
struct pgn_web_req {
	const char *method;       /* "GET", "POST", ... */
	const char *target;       /* the raw request target: path?query */
	const char *host;         /* the Host header, or NULL */
	const char *content_type; /* or NULL */
	const char *body;         /* POST's, or NULL */
	size_t body_len;
};

struct pgn_web_resp {
	int status;       /* HTTP status */
	const char *type; /* Content-Type */
	char *body;       /* malloc'd, or static when 'owned' is 0 */
	size_t len;
	int owned;
	int events;     /* allowed: the server streams events instead */
	int authorised; /* the Host header and the token held */
};

/* The headers every response carries: name, value; NULL ends it. */
extern const char *const pgn_web_headers[][2];

struct pgn_web;

/* A server's state over 'db' (the caller's; it must outlive it). */
PGN_NODISCARD pgn_status pgn_web_new(pgn_db *db, int port, int allow_send,
    struct pgn_web **out);
/* The token the URL carries: hex, NUL-terminated. */
const char *pgn_web_token(const struct pgn_web *w);
/* The database file was replaced or removed (the page says so). */
void pgn_web_set_replaced(struct pgn_web *w, int replaced);
int pgn_web_replaced(const struct pgn_web *w);
/* Answer 'r' into 'out' (release it after). Never fails: errors are
 * responses (400, 401, 403, 404, 405, 413, 500). */
void pgn_web_handle(struct pgn_web *w, const struct pgn_web_req *r,
    struct pgn_web_resp *out);
void pgn_web_resp_release(struct pgn_web_resp *r);
void pgn_web_free(struct pgn_web *w);

/*
 * The value of parameter 'name' in 'query' (a=b&c=d, percent-encoded,
 * '+' a space) into 'out' ('size' bytes): 1 found, 0 absent, -1 bad
 * (encoding, NUL, not UTF-8, too long, more than PGN_WEB_MAX_PARAMS).
 * Pure: fuzz/fuzz_web.c.
 */
int pgn_web_param(const char *query, size_t qlen, const char *name, char *out,
    size_t size);

#endif
