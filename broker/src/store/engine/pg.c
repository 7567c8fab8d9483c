/*
 * The PostgreSQL backend over libpq (store_int.h; docs/decisions/0111
 * to 0115): connecting within the caller's deadline, the database
 * string's rules (no password in it), schema/pg migrations, statements
 * run with binary parameters and results, write transactions serialized
 * by one advisory lock, read transactions on one snapshot, and
 * pgn_wait's wake-up by LISTEN/NOTIFY. The only file that calls PQ*.
 * Built without libpq, it only says so.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pgn_int.h"
#include "store_int.h"

/*
 * From the moment a database string is taken for PostgreSQL's, it is
 * never shown (docs/decisions/0130): the copy pgn_db_open made is wiped
 * and db->path, what every message names, is "(PostgreSQL)" until
 * check_conninfo puts the display form there.
 */
static pgn_status
hide_string(pgn_db *db)
{
	if (db->path != NULL) {
		sodium_memzero(db->path, strlen(db->path));
		free(db->path);
	}
	db->path = pgn_strdup("(PostgreSQL)");
	return db->path != NULL ? PGN_OK :
	                          pgn_fail(db, PGN_ENOMEM, "out of memory");
}

#if PGN_HAVE_LIBPQ

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>

#include <libpq-fe.h>

#include "schema_int.h"

/*
 * libpq is loaded with dlopen when a PostgreSQL database is opened, not
 * linked: linked, its two dozen libraries (TLS, Kerberos, LDAP) would
 * cost every SQLite hook run their loading (docs/decisions/0111).
 */
#define PGN_LIBPQ_SONAME "libpq.so.5"
#define PQ_FUNCS(X)                                                            \
	X(PQbackendPID)                                                        \
	X(PQclear)                                                             \
	X(PQcmdStatus)                                                         \
	X(PQcmdTuples)                                                         \
	X(PQconnectPoll)                                                       \
	X(PQconnectStartParams)                                                \
	X(PQconninfoFree)                                                      \
	X(PQconninfoParse)                                                     \
	X(PQconsumeInput)                                                      \
	X(PQdb)                                                                \
	X(PQerrorMessage)                                                      \
	X(PQexec)                                                              \
	X(PQexecParams)                                                        \
	X(PQfinish)                                                            \
	X(PQfreemem)                                                           \
	X(PQftype)                                                             \
	X(PQgetisnull)                                                         \
	X(PQgetlength)                                                         \
	X(PQgetvalue)                                                          \
	X(PQisBusy)                                                            \
	X(PQhost)                                                              \
	X(PQnfields)                                                           \
	X(PQnotifies)                                                          \
	X(PQntuples)                                                           \
	X(PQport)                                                              \
	X(PQresultErrorField)                                                  \
	X(PQresultStatus)                                                      \
	X(PQserverVersion)                                                     \
	X(PQsetNoticeProcessor)                                                \
	X(PQsocket)                                                            \
	X(PQstatus)                                                            \
	X(PQtransactionStatus)
/* libpq 14's pipeline mode: used when there (docs/decisions/0126). */
#define PQ_PIPE_FUNCS(X)                                                       \
	X(PQenterPipelineMode)                                                 \
	X(PQexitPipelineMode)                                                  \
	X(PQgetResult)                                                         \
	X(PQpipelineSync)                                                      \
	X(PQsendQueryParams)
#define PQ_DECL(f) static __typeof__(f) *pq_##f;
PQ_FUNCS(PQ_DECL)
PQ_PIPE_FUNCS(PQ_DECL)
#undef PQ_DECL
/* All of PQ_PIPE_FUNCS were found. */
static int have_pipeline;

/* Load libpq once; 0 and a message in 'err' when it is missing. */
static int
load_libpq(char *err, size_t len)
{
	static int loaded;
	void *h, *sym;

	if (loaded)
		return 1;
	h = dlopen(PGN_LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		(void)snprintf(err, len, "%s", dlerror());
		return 0;
	}
#define PQ_LOAD(f)                                                             \
	sym = dlsym(h, #f);                                                    \
	if (sym == NULL) {                                                     \
		(void)snprintf(err, len, "%s lacks %s", PGN_LIBPQ_SONAME, #f); \
		return 0;                                                      \
	}                                                                      \
	memcpy(&pq_##f, &sym, sizeof(pq_##f));
	PQ_FUNCS(PQ_LOAD)
#undef PQ_LOAD
	have_pipeline = 1;
#define PQ_LOAD_PIPE(f)                                                        \
	sym = dlsym(h, #f);                                                    \
	if (sym == NULL)                                                       \
		have_pipeline = 0;                                             \
	else                                                                   \
		memcpy(&pq_##f, &sym, sizeof(pq_##f));
	PQ_PIPE_FUNCS(PQ_LOAD_PIPE)
#undef PQ_LOAD_PIPE
	loaded = 1;
	return 1;
}

/* From here on every PQ call goes through the loaded pointers. */
#define PQbackendPID         pq_PQbackendPID
#define PQclear              pq_PQclear
#define PQcmdStatus          pq_PQcmdStatus
#define PQcmdTuples          pq_PQcmdTuples
#define PQconnectPoll        pq_PQconnectPoll
#define PQconnectStartParams pq_PQconnectStartParams
#define PQconninfoFree       pq_PQconninfoFree
#define PQconninfoParse      pq_PQconninfoParse
#define PQconsumeInput       pq_PQconsumeInput
#define PQdb                 pq_PQdb
#define PQerrorMessage       pq_PQerrorMessage
#define PQexec               pq_PQexec
#define PQexecParams         pq_PQexecParams
#define PQfinish             pq_PQfinish
#define PQfreemem            pq_PQfreemem
#define PQftype              pq_PQftype
#define PQgetisnull          pq_PQgetisnull
#define PQgetlength          pq_PQgetlength
#define PQgetvalue           pq_PQgetvalue
#define PQisBusy             pq_PQisBusy
#define PQsetNoticeProcessor pq_PQsetNoticeProcessor
#define PQhost               pq_PQhost
#define PQnfields            pq_PQnfields
#define PQnotifies           pq_PQnotifies
#define PQntuples            pq_PQntuples
#define PQport               pq_PQport
#define PQresultErrorField   pq_PQresultErrorField
#define PQresultStatus       pq_PQresultStatus
#define PQserverVersion      pq_PQserverVersion
#define PQsocket             pq_PQsocket
#define PQstatus             pq_PQstatus
#define PQtransactionStatus  pq_PQtransactionStatus
#define PQenterPipelineMode  pq_PQenterPipelineMode
#define PQexitPipelineMode   pq_PQexitPipelineMode
#define PQgetResult          pq_PQgetResult
#define PQpipelineSync       pq_PQpipelineSync
#define PQsendQueryParams    pq_PQsendQueryParams

/* Parameters one statement takes; ours have at most 14. */
#define PGN_PG_MAX_PARAMS 32
/*
 * The advisory lock every write transaction takes first: PostgreSQL's
 * writers are serialized as SQLite's are (docs/decisions/0112).
 * Another for migrations. Arbitrary constants ("pigeon" in ASCII).
 */
#define PGN_PG_WRITE_LOCK   0x706967656f6e01LL
#define PGN_PG_MIGRATE_LOCK 0x706967656f6e02LL
/* Kept of a server message in ours. */
#define PGN_PG_MAX_MSG 300
/*
 * Writes a transaction sends before it reads an answer (pgn_step_write,
 * docs/decisions/0126); one more first reads theirs. And the bytes kept
 * of each one's 'what', for its error.
 */
#define PGN_PG_MAX_PENDING 64
#define PGN_PG_MAX_WHAT    64
/*
 * A commit whose answer was lost (docs/decisions/0127): the time a new
 * connection and the server's word on the transaction may take, and the
 * pause between looks while it is still in progress.
 */
#define PGN_PG_RESOLVE_MS     1000
#define PGN_PG_RESOLVE_NAP_MS 20
/* Still in progress after this long: its server process is ended. */
#define PGN_PG_RESOLVE_WAIT_MS 200

/* PostgreSQL's type oids (catalog/pg_type.h), for binary values. */
#define OID_BOOL  16
#define OID_BYTEA 17
#define OID_INT8  20
#define OID_INT2  21
#define OID_INT4  23
#define OID_TEXT  25

struct pgn_pg {
	PGconn *conn;
	/*
	 * The database string as given: connect_within's alone, never shown
	 * (db->path is its display form, docs/decisions/0130); wiped at close.
	 */
	char *conninfo;
	char host[PGN_MAX_PATH + 1]; /* where it went, for messages */
	char port[16];
	int listening; /* LISTEN pigeon done */
	int bell;      /* LISTEN pigeon_bell done */
	int bell_lost; /* it was, on a session lost since: rings missed */
	int pipe;      /* in libpq's pipeline mode (a transaction, or after a
	                  read until the next statement) */
	int in_tx;     /* inside run_tx: a write may wait for its answer */
	int npend;     /* writes sent whose answers are not read yet */
	int nsynced;   /* the first of them, followed by a Sync (tx_end) */
	char pend[PGN_PG_MAX_PENDING][PGN_PG_MAX_WHAT]; /* their 'what' */
	/* The one whose answer is the write transaction's id, or -1. */
	int xid_at;
	int64_t xid; /* that id (txid_current()), 0 until read */
	int pid;     /* the server process of the transaction */
	/*
	 * The server said FATAL (or PANIC): it is ending this session, though
	 * libpq may not have seen the socket close yet (decision 0131).
	 */
	int ending;
};

/* A statement: SQLite's text turned into PostgreSQL's ($N), its
 * parameters and, once run, its result. */
struct pgstmt {
	char *sql;
	int nparams;
	const char *values[PGN_PG_MAX_PARAMS];
	int lengths[PGN_PG_MAX_PARAMS];
	int formats[PGN_PG_MAX_PARAMS];
	unsigned int types[PGN_PG_MAX_PARAMS];
	unsigned char ints[PGN_PG_MAX_PARAMS][8];
	PGresult *res;
	int row;   /* the current row; -1 before the first step */
	int nrows; /* rows of 'res' */
	int64_t changes;
};

static const struct pgn_backend pg_be;

/* The engine's state behind db->engine (decision 0149). */
static struct pgn_pg *
pg_of(const pgn_db *db)
{
	return db->engine;
}

#define PGS(st) ((struct pgstmt *)(st)->h)

/* The first line of a libpq or server message, bounded. */
static void
first_line(const char *msg, char *out, size_t len)
{
	size_t n = 0;

	if (msg != NULL)
		while (msg[n] != '\0' && msg[n] != '\n' && n + 1 < len)
			n++;
	if (n > 0)
		memcpy(out, msg, n);
	out[n] = '\0';
}

static pgn_status
fail_conn(pgn_db *db, const char *what)
{
	char line[PGN_PG_MAX_MSG];

	first_line(PQerrorMessage(pg_of(db)->conn), line, sizeof(line));
	return pgn_fail(db, PGN_EIO,
	    "lost the connection to PostgreSQL at host %s port %s while %s: %s",
	    pg_of(db)->host, pg_of(db)->port, what, line);
}

/*
 * Map a failed result to a status. Serialization failures, deadlocks
 * and lock timeouts are PGN_EBUSY (the transaction is retried until the
 * deadline); a lost connection PGN_EIO; the rest PGN_EDB.
 */
static pgn_status
fail_res(pgn_db *db, const PGresult *res, const char *what)
{
	const char *state, *sev;
	char line[PGN_PG_MAX_MSG];

	if (PQstatus(pg_of(db)->conn) == CONNECTION_BAD)
		return fail_conn(db, what);
	state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	sev = res != NULL ?
	    PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED) :
	    NULL;
	if (res == NULL)
		first_line(PQerrorMessage(pg_of(db)->conn), line, sizeof(line));
	else
		first_line(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
		    line, sizeof(line));
	/*
	 * A FATAL error ends the session: the connection is lost, whether or
	 * not libpq has read the close yet. Sent as a commit's answer, it
	 * may follow the commit itself (a backend terminated right after
	 * it): tx_end asks the server.
	 */
	if (sev != NULL &&
	    (strcmp(sev, "FATAL") == 0 || strcmp(sev, "PANIC") == 0)) {
		pg_of(db)->ending = 1;
		return pgn_fail(db, PGN_EIO,
		    "lost the connection to PostgreSQL at host %s port %s while %s: %s",
		    pg_of(db)->host, pg_of(db)->port, what, line);
	}
	if (state != NULL &&
	    (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 ||
	        strcmp(state, "55P03") == 0))
		return pgn_fail(db, PGN_EBUSY,
		    "database '%s' is busy: another process held its write lock for over %ld ms; try again",
		    db->path, db->deadline_ms);
	if (state != NULL && strcmp(state, "53200") == 0)
		return pgn_fail(db, PGN_ENOMEM, "out of memory %s", what);
	/* Every statement names Pigeon's tables, which migrate made. */
	if (state != NULL && strcmp(state, "42P01") == 0)
		return pgn_fail(db, PGN_ECORRUPT,
		    "database '%s': %s: %s: a table of Pigeon's is missing: the database was damaged; restore it from a backup, or give pigeon a new database",
		    db->path, what, line);
	return pgn_fail(db, PGN_EDB, "database '%s': %s: %s", db->path, what,
	    line);
}

/* ---- the pipeline ---------------------------------------------------- */

/*
 * Inside a transaction the connection is in libpq's pipeline mode
 * (docs/decisions/0126): a write nobody reads the answer of is sent and
 * not waited for (pipe_defer); a statement whose rows are read is sent
 * with a Sync (pipe_sync), and the answers come back in order, the
 * pending writes' first. After an error the server skips the rest up
 * to the Sync, so a failed write fails the statement read after it and
 * the commit: nothing after it takes effect.
 */

/* Send one statement into the pipeline, rows in 'fmt' (1 binary). */
static pgn_status
pipe_send(pgn_db *db, const char *sql, const struct pgstmt *s, int fmt,
    const char *what)
{
	int ok;

	if (s != NULL)
		ok = PQsendQueryParams(pg_of(db)->conn, sql, s->nparams,
		    s->types, s->values, s->lengths, s->formats, fmt);
	else
		ok = PQsendQueryParams(pg_of(db)->conn, sql, 0, NULL, NULL,
		    NULL, NULL, fmt);
	return ok ? PGN_OK : fail_conn(db, what);
}

/*
 * Read one statement's answer: its result, into '*keep' if that is not
 * NULL, and the NULL that ends it. The error, with 'what', is recorded
 * only if 'report'; a statement the server skipped after an earlier
 * error is PGN_EDB, the earlier error being the one to tell.
 */
static pgn_status
pipe_result(pgn_db *db, PGresult **keep, int report, const char *what)
{
	PGconn *conn = pg_of(db)->conn;
	PGresult *res, *more;
	ExecStatusType t;
	pgn_status rc = PGN_OK;

	res = PQgetResult(conn);
	if (res == NULL)
		return report ? fail_conn(db, what) : PGN_EIO;
	t = PQresultStatus(res);
	if (t == PGRES_PIPELINE_ABORTED)
		rc = report ? pgn_fail(db, PGN_EDB,
		                  "database '%s': %s: skipped after an error",
		                  db->path, what) :
		              PGN_EDB;
	else if (t != PGRES_TUPLES_OK && t != PGRES_COMMAND_OK)
		rc = report ? fail_res(db, res, what) : PGN_EDB;
	if (PQstatus(conn) == CONNECTION_BAD) {
		PQclear(res);
		return rc != PGN_OK ? rc : PGN_EIO;
	}
	while ((more = PQgetResult(conn)) != NULL)
		PQclear(more);
	if (rc == PGN_OK && keep != NULL)
		*keep = res;
	else
		PQclear(res);
	return rc;
}

/*
 * Read the answers a Sync was sent for and not waited for: a read's
 * commit (tx_end), then the Sync's own. Nothing is recorded: a read's
 * commit loses nothing, and a lost connection fails what comes next.
 */
static void
pipe_settle(pgn_db *db)
{
	struct pgn_pg *pg = pg_of(db);
	PGresult *res;
	int i, n = pg->nsynced;

	if (n == 0)
		return;
	pg->nsynced = 0;
	for (i = 0; i < n && PQstatus(pg->conn) == CONNECTION_OK; i++)
		(void)pipe_result(db, NULL, 0, pg->pend[i]);
	res =
	    PQstatus(pg->conn) == CONNECTION_OK ? PQgetResult(pg->conn) : NULL;
	PQclear(res);
	pg->npend -= n;
	memmove(pg->pend, pg->pend + n,
	    (size_t)pg->npend * sizeof(pg->pend[0]));
	if (pg->xid_at >= 0)
		pg->xid_at -= n;
}

/* Column 0 of row 0 of a binary result as an 8-byte integer, else 0. */
static int64_t
result_i64(const PGresult *res)
{
	const unsigned char *p;
	uint64_t u = 0;
	int k;

	if (PQntuples(res) < 1 || PQgetisnull(res, 0, 0) ||
	    PQgetlength(res, 0, 0) != 8)
		return 0;
	p = (const unsigned char *)PQgetvalue(res, 0, 0);
	for (k = 0; k < 8; k++)
		u = (u << 8) | p[k];
	return (int64_t)u;
}

/*
 * Send a Sync and read every answer up to it: the pending writes' (the
 * first error wins, told with its own 'what'), then, if 'keep' is not
 * NULL, that of the statement sent last, into '*keep'. 'report' 0: read
 * and drop everything, recording no error (a transaction that failed
 * already, before its rollback).
 */
static pgn_status
pipe_sync(pgn_db *db, PGresult **keep, int report, const char *what)
{
	struct pgn_pg *pg = pg_of(db);
	PGresult *res;
	pgn_status rc = PGN_OK, r;
	int i, n;

	pipe_settle(db);
	n = pg->npend;
	pg->npend = 0;
	if (!PQpipelineSync(pg->conn))
		return report ? fail_conn(db, what) : PGN_EIO;
	for (i = 0; i < n + (keep != NULL); i++) {
		if (i == pg->xid_at) {
			r = pipe_result(db, &res, report && rc == PGN_OK,
			    pg->pend[i]);
			pg->xid_at = -1;
			if (r == PGN_OK)
				pg->xid = result_i64(res);
			if (r == PGN_OK)
				PQclear(res);
		} else {
			r = pipe_result(db, i < n || rc != PGN_OK ? NULL : keep,
			    report && rc == PGN_OK, i < n ? pg->pend[i] : what);
		}
		if (rc == PGN_OK)
			rc = r;
		if (PQstatus(pg->conn) == CONNECTION_BAD)
			return rc;
	}
	res = PQgetResult(pg->conn);
	if (res == NULL || PQresultStatus(res) != PGRES_PIPELINE_SYNC) {
		/*
		 * Not the Sync's answer (a FATAL error in its place, its
		 * close not read yet): the connection is out of step.
		 */
		pg->ending = 1;
		PQclear(res);
		if (keep != NULL) {
			PQclear(*keep);
			*keep = NULL;
		}
		return rc != PGN_OK ? rc :
		    report          ? fail_conn(db, what) :
		                      PGN_EIO;
	}
	PQclear(res);
	return rc;
}

/* Send a write and go on; its answer is read at the next Sync. */
static pgn_status
pipe_defer(pgn_db *db, const char *sql, const struct pgstmt *s,
    const char *what)
{
	struct pgn_pg *pg = pg_of(db);
	pgn_status rc;

	if (pg->npend == PGN_PG_MAX_PENDING) {
		rc = pipe_sync(db, NULL, 1, what);
		if (rc != PGN_OK)
			return rc;
	}
	rc = pipe_send(db, sql, s, 1, what);
	if (rc == PGN_OK)
		(void)snprintf(pg->pend[pg->npend++], PGN_PG_MAX_WHAT, "%s",
		    what);
	return rc;
}

/*
 * Run one statement of fixed text (several only outside the pipeline:
 * migrate, and tx_begin without it) and keep its text-format result in
 * '*keep', or clear it when 'keep' is NULL.
 */
static pgn_status
exec_text(pgn_db *db, const char *sql, PGresult **keep, const char *what)
{
	PGresult *res = NULL;
	pgn_status rc;
	ExecStatusType t;

	if (keep != NULL)
		*keep = NULL;
	if (pg_of(db)->pipe) {
		rc = pipe_send(db, sql, NULL, 0, what);
		if (rc == PGN_OK)
			rc = pipe_sync(db, &res, 1, what);
	} else {
		res = PQexec(pg_of(db)->conn, sql);
		t = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;
		rc = t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK ?
		    PGN_OK :
		    fail_res(db, res, what);
	}
	if (rc == PGN_OK && keep != NULL)
		*keep = res;
	else
		PQclear(res);
	return rc;
}

/* Run fixed text (no parameters; outside a transaction, several). */
static pgn_status
run_simple(pgn_db *db, const char *sql, const char *what)
{
	return exec_text(db, sql, NULL, what);
}

/* ---- statements ----------------------------------------------------- */

/* SQLite's "?N" as "$N", outside quotes; '*n' the highest N. */
static char *
translate(const char *sql, int *n)
{
	struct pgn_buf b;
	const char *p;
	char quote = 0;
	long v;
	char *end;

	*n = 0;
	pgn_buf_init(&b, PGN_MAX_SQL_LENGTH);
	for (p = sql; *p != '\0'; p++) {
		if (quote != 0) {
			if (*p == quote)
				quote = 0;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
		} else if (*p == '?' && p[1] >= '0' && p[1] <= '9') {
			v = strtol(p + 1, &end, 10);
			if (v > *n)
				*n = (int)v;
			pgn_buf_addf(&b, "$%ld", v);
			p = end - 1;
			continue;
		}
		pgn_buf_add(&b, p, 1);
	}
	return pgn_buf_take(&b, NULL);
}

static pgn_status
pg_prepare(pgn_db *db, const char *sql, pgn_stmt **out)
{
	struct pgn_stmt *st;
	struct pgstmt *s;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	s = calloc(1, sizeof(*s));
	if (st == NULL || s == NULL) {
		free(st);
		free(s);
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	s->sql = translate(sql, &s->nparams);
	if (s->sql == NULL || s->nparams > PGN_PG_MAX_PARAMS) {
		free(s->sql);
		free(s);
		free(st);
		return pgn_fail(db, PGN_EDB,
		    "preparing a statement: too long, or over %d parameters",
		    PGN_PG_MAX_PARAMS);
	}
	s->row = -1;
	st->be = &pg_be;
	st->sql = sql;
	st->h = s;
	st->busy = 1;
	*out = st;
	return PGN_OK;
}

static void
pg_reset(pgn_stmt *st)
{
	struct pgstmt *s = PGS(st);

	PQclear(s->res);
	s->res = NULL;
	s->row = -1;
	s->nrows = 0;
	s->changes = 0;
}

static void
pg_finish(pgn_db *db, pgn_stmt *st)
{
	(void)db;
	pg_reset(st);
	free(PGS(st)->sql);
	free(st->h);
	free(st);
}

static int
pg_nparams(pgn_stmt *st)
{
	return PGS(st)->nparams;
}

static pgn_status
pg_bind(pgn_db *db, pgn_stmt *st, int i, const struct pgn_arg *a)
{
	struct pgstmt *s = PGS(st);
	uint64_t u;
	int k, j = i - 1;

	if (i < 1 || i > s->nparams)
		return pgn_fail(db, PGN_EDB,
		    "binding: parameter %d of a statement with %d", i,
		    s->nparams);
	/* Binary values: no text conversion, and bytes are bytes. */
	s->formats[j] = 1;
	switch (a->kind) {
	case PGN_ARG_I64:
		u = (uint64_t)a->i;
		for (k = 0; k < 8; k++)
			s->ints[j][k] = (unsigned char)(u >> (56 - 8 * k));
		s->values[j] = (const char *)s->ints[j];
		s->lengths[j] = 8;
		s->types[j] = OID_INT8;
		return PGN_OK;
	case PGN_ARG_TEXT:
		s->values[j] = a->t;
		s->lengths[j] = a->t != NULL ? (int)strlen(a->t) : 0;
		s->types[j] = OID_TEXT;
		return PGN_OK;
	case PGN_ARG_TEXTN:
		s->values[j] = a->t;
		s->lengths[j] = (int)a->len;
		s->types[j] = OID_TEXT;
		return PGN_OK;
	case PGN_ARG_BLOB:
		s->values[j] = a->b;
		s->lengths[j] = (int)a->len;
		s->types[j] = OID_BYTEA;
		return PGN_OK;
	case PGN_ARG_NONE:
		break;
	}
	return pgn_fail(db, PGN_EDB, "binding: a value of no kind");
}

/* Run statement 's' now, its result into s->res. */
static pgn_status
run_stmt(pgn_db *db, struct pgstmt *s, const char *what)
{
	ExecStatusType t;
	pgn_status rc;

	if (pg_of(db)->pipe) {
		rc = pipe_send(db, s->sql, s, 1, what);
		return rc == PGN_OK ? pipe_sync(db, &s->res, 1, what) : rc;
	}
	s->res = PQexecParams(pg_of(db)->conn, s->sql, s->nparams, s->types,
	    s->values, s->lengths, s->formats, 1);
	t = s->res != NULL ? PQresultStatus(s->res) : PGRES_FATAL_ERROR;
	if (t == PGRES_TUPLES_OK || t == PGRES_COMMAND_OK)
		return PGN_OK;
	rc = fail_res(db, s->res, what);
	PQclear(s->res);
	s->res = NULL;
	return rc;
}

static pgn_status
pg_step(pgn_db *db, pgn_stmt *st, const char *what)
{
	struct pgstmt *s = PGS(st);
	const char *n;
	pgn_status rc;

	if (s->res == NULL) {
		rc = run_stmt(db, s, what);
		if (rc != PGN_OK)
			return rc;
		s->nrows = PQresultStatus(s->res) == PGRES_TUPLES_OK ?
		    PQntuples(s->res) :
		    0;
		n = PQcmdTuples(s->res);
		s->changes = n != NULL && *n != '\0' ? strtoll(n, NULL, 10) : 0;
		s->row = 0;
	} else if (s->row < s->nrows) {
		s->row++;
	}
	return s->row < s->nrows ? PGN_OK : PGN_ENOTFOUND;
}

/* Inside a transaction: sent, its answer read at the next Sync. */
static pgn_status
pg_step_write(pgn_db *db, pgn_stmt *st, const char *what)
{
	struct pgstmt *s = PGS(st);
	pgn_status rc;

	/* Outside a transaction nothing would commit it: run it now. */
	if (pg_of(db)->in_tx && s->res == NULL)
		return pipe_defer(db, s->sql, s, what);
	rc = pg_step(db, st, what);
	return rc == PGN_ENOTFOUND ? PGN_OK : rc;
}

static int
have_value(const struct pgstmt *s, int col)
{
	return s->res != NULL && s->row >= 0 && s->row < s->nrows && col >= 0 &&
	    col < PQnfields(s->res) && !PQgetisnull(s->res, s->row, col);
}

/* A big-endian integer of 'n' bytes, sign-extended. */
static int64_t
be_int(const unsigned char *p, int n)
{
	uint64_t u = 0;
	int k;

	for (k = 0; k < n; k++)
		u = (u << 8) | p[k];
	if (n < 8 && (p[0] & 0x80) != 0)
		u |= ~(uint64_t)0 << (8 * n);
	return (int64_t)u;
}

static int64_t
pg_col_i64(pgn_stmt *st, int col)
{
	struct pgstmt *s = PGS(st);
	const unsigned char *p;
	int len;

	if (!have_value(s, col))
		return 0;
	p = (const unsigned char *)PQgetvalue(s->res, s->row, col);
	len = PQgetlength(s->res, s->row, col);
	switch (PQftype(s->res, col)) {
	case OID_INT8:
	case OID_INT4:
	case OID_INT2:
		return len == 8 || len == 4 || len == 2 ? be_int(p, len) : 0;
	case OID_BOOL:
		return len == 1 && p[0] != 0;
	case OID_TEXT:
		return strtoll((const char *)p, NULL, 10);
	default:
		return 0;
	}
}

/* Text and bytea alike: binary results are the bytes, NUL-ended. */
static const char *
pg_col_text(pgn_stmt *st, int col, size_t *len)
{
	struct pgstmt *s = PGS(st);

	*len = 0;
	if (!have_value(s, col))
		return NULL;
	*len = (size_t)PQgetlength(s->res, s->row, col);
	return PQgetvalue(s->res, s->row, col);
}

static const void *
pg_col_blob(pgn_stmt *st, int col, size_t *len)
{
	return pg_col_text(st, col, len);
}

static int64_t
pg_inserted_id(pgn_db *db, pgn_stmt *st)
{
	(void)db;
	return pg_col_i64(st, 0);
}

static int64_t
pg_changes(pgn_db *db, pgn_stmt *st)
{
	(void)db;
	return PGS(st)->changes;
}

/* ---- transactions --------------------------------------------------- */

/*
 * Begin: the transaction, a lock wait bounded by 'left' ms and, for a
 * write, the lock that serializes writers as SQLite's BEGIN IMMEDIATE
 * does (docs/decisions/0112). In the pipeline they are sent and not
 * waited for: the transaction's first read carries them. Without it,
 * one round trip.
 */
static pgn_status
tx_begin(pgn_db *db, int write, int64_t left)
{
	const char *begin =
	    write ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
	char set[64], lock[64], all[192];
	pgn_status rc;

	(void)snprintf(set, sizeof(set), "SET LOCAL lock_timeout = %lld",
	    (long long)left);
	(void)snprintf(lock, sizeof(lock), "SELECT pg_advisory_xact_lock(%lld)",
	    (long long)PGN_PG_WRITE_LOCK);
	if (!have_pipeline) {
		(void)snprintf(all, sizeof(all), "%s; %s; %s", begin, set,
		    lock);
		return run_simple(db, write ? all : begin,
		    "starting a transaction");
	}
	/* Still in it after a read, whose commit is pending (tx_end). */
	if (!pg_of(db)->pipe && !PQenterPipelineMode(pg_of(db)->conn))
		return fail_conn(db, "starting a transaction");
	pg_of(db)->pipe = 1;
	rc = pipe_defer(db, begin, NULL, "starting a transaction");
	if (rc == PGN_OK && write)
		rc = pipe_defer(db, set, NULL, "starting a transaction");
	if (rc == PGN_OK && write)
		rc = pipe_defer(db, lock, NULL, "taking the write lock");
	/* Its id, read with the first answer: what resolve() asks about. */
	pg_of(db)->xid = 0;
	pg_of(db)->xid_at = -1;
	pg_of(db)->pid = PQbackendPID(pg_of(db)->conn);
	if (rc == PGN_OK && write) {
		pg_of(db)->xid_at = pg_of(db)->npend;
		rc = pipe_defer(db, "SELECT txid_current()", NULL,
		    "numbering the transaction");
	}
	return rc;
}

/*
 * Leave the pipeline, reading what is pending (a read's commit): the
 * connection in the state the rest of libpq expects. 0 when answers
 * could not be placed: the connection is closed, and if 'report' the
 * error recorded.
 */
static int
pipe_leave(pgn_db *db, int report, const char *what)
{
	struct pgn_pg *pg = pg_of(db);

	if (!pg->pipe || PQstatus(pg->conn) != CONNECTION_OK)
		return 1;
	pipe_settle(db);
	if (pg->npend > 0)
		(void)pipe_sync(db, NULL, 0, what);
	if (PQexitPipelineMode(pg->conn)) {
		pg->pipe = 0;
		return 1;
	}
	if (report)
		(void)pgn_fail(db, PGN_EIO,
		    "lost track of the connection to PostgreSQL at host %s port %s while %s: closed it",
		    pg->host, pg->port, what);
	PQfinish(pg->conn);
	pg->conn = NULL;
	pg->pipe = 0;
	return 0;
}

static pgn_status connect_within(pgn_db *db, const char *conninfo);

/*
 * A connection lost between transactions (the server ended the session,
 * or this side lost track of its pipeline) is opened again before the
 * next use: a long-lived caller (pigeon web, watch, wait, wake --follow,
 * mcp) must not stay broken for the rest of its life. Its LISTENs went
 * with it: the waiters listen again (decision 0245).
 */
static pgn_status
reconnect_if_lost(pgn_db *db)
{
	struct pgn_pg *pg = pg_of(db);

	if (pg->conn != NULL && PQstatus(pg->conn) == CONNECTION_OK)
		return PGN_OK;
	pg->bell_lost |= pg->bell;
	PQfinish(pg->conn);
	pg->conn = NULL;
	pg->pipe = pg->in_tx = pg->npend = pg->nsynced = pg->listening =
	    pg->bell = 0;
	pg->xid_at = -1;
	pg->xid = 0;
	return connect_within(db, pg->conninfo);
}

/*
 * One statement with one text parameter, its answer awaited under
 * poll() until 'until' (monotonic ms): the result, or NULL when it did
 * not come in time or the connection failed. Only resolve() uses it: a
 * server that takes the new connection and then never answers must not
 * hold the caller past its bound.
 */
static PGresult *
query_until(PGconn *conn, const char *sql, const char *arg, int64_t until)
{
	struct pollfd p;
	PGresult *res, *more;
	int64_t left;
	int r;

	if (!PQsendQueryParams(conn, sql, 1, NULL, &arg, NULL, NULL, 0))
		return NULL;
	while (PQisBusy(conn)) {
		left = until - pgn_mono_ms();
		p.fd = PQsocket(conn);
		p.events = POLLIN;
		p.revents = 0;
		if (left <= 0 || p.fd < 0)
			return NULL;
		r = poll(&p, 1, (int)left);
		/* A signal (the hook's deadline backstop) is no answer. */
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || !PQconsumeInput(conn))
			return NULL;
	}
	res = PQgetResult(conn);
	while ((more = PQgetResult(conn)) != NULL)
		PQclear(more);
	return res;
}

/* Pause 'ms' between the resolution's tries, a signal or not. */
static void
resolve_nap(int64_t ms)
{
	int64_t until = pgn_mono_ms() + ms;

	while (pgn_mono_ms() < until)
		(void)poll(NULL, 0, (int)(until - pgn_mono_ms()));
}

/*
 * The connection was lost with the commit sent (docs/decisions/0127):
 * it may have committed. A new connection asks the server what became
 * of the transaction: committed, PGN_OK (its work stands, and the
 * caller goes on as if the answer had come); aborted, PGN_EDB (nothing
 * changed). Still in progress past PGN_PG_RESOLVE_WAIT_MS (its server
 * process has not yet seen the client go), that process is ended and
 * the server asked again. A new connection that fails or is lost, or a
 * question with no answer, is tried again. No word within
 * PGN_PG_RESOLVE_MS: PGN_EIO, the lost connection's message saying the
 * outcome is unknown (docs/decisions/0131: a claim's caller then names
 * what it held). The new connection replaces the lost one either way.
 */
static pgn_status
resolve(pgn_db *db)
{
	struct pgn_pg *pg = pg_of(db);
	char err[PGN_MAX_ERRMSG], xid[24], pid[16];
	const char *state = "";
	int64_t start = pgn_mono_ms(), left;
	long keep = db->deadline_ms;
	PGresult *res;
	int ended = 0;

	memcpy(err, db->err.msg, sizeof(err));
	(void)snprintf(xid, sizeof(xid), "%lld", (long long)pg->xid);
	(void)snprintf(pid, sizeof(pid), "%d", pg->pid);
	PQfinish(pg->conn);
	pg->conn = NULL;
	pg->bell_lost |= pg->bell;
	pg->pipe = pg->in_tx = pg->npend = pg->nsynced = pg->listening =
	    pg->bell = 0;
	pg->xid_at = -1;
	pg->xid = 0;
	while ((left = start + PGN_PG_RESOLVE_MS - pgn_mono_ms()) > 0) {
		if (pg->conn == NULL || PQstatus(pg->conn) != CONNECTION_OK) {
			PQfinish(pg->conn);
			pg->conn = NULL;
			db->deadline_ms = (long)left;
			if (connect_within(db, pg->conninfo) != PGN_OK) {
				resolve_nap(PGN_PG_RESOLVE_NAP_MS);
				continue;
			}
		}
		res = query_until(pg->conn, "SELECT txid_status($1::bigint)",
		    xid, start + PGN_PG_RESOLVE_MS);
		if (res == NULL) {
			/* Lost, or silent: a query may be in flight. */
			PQfinish(pg->conn);
			pg->conn = NULL;
			continue;
		}
		state = PQresultStatus(res) == PGRES_TUPLES_OK &&
		        PQntuples(res) == 1 && !PQgetisnull(res, 0, 0) ?
		    PQgetvalue(res, 0, 0) :
		    "";
		if (strcmp(state, "committed") == 0 ||
		    strcmp(state, "aborted") == 0) {
			state = state[0] == 'c' ? "committed" : "aborted";
			PQclear(res);
			break;
		}
		state = "";
		PQclear(res);
		if (!ended && pgn_mono_ms() - start >= PGN_PG_RESOLVE_WAIT_MS) {
			res = query_until(pg->conn,
			    "SELECT pg_terminate_backend($1::int)", pid,
			    start + PGN_PG_RESOLVE_MS);
			PQclear(res);
			ended = 1;
		}
		resolve_nap(PGN_PG_RESOLVE_NAP_MS);
	}
	db->deadline_ms = keep;
	memcpy(db->err.msg, err, sizeof(err));
	if (strcmp(state, "committed") == 0)
		return PGN_OK;
	if (strcmp(state, "aborted") == 0)
		return pgn_fail(db, PGN_EDB,
		    "%.800s; the server did not commit it: nothing changed",
		    err);
	db->unknown = 1;
	return pgn_fail(db, PGN_EIO,
	    "%.800s; whether it committed is unknown: the server gave no word within %d ms",
	    err, PGN_PG_RESOLVE_MS);
}

/*
 * Commit when 'rc' is PGN_OK (reading every pending answer first: a
 * failed write fails the commit), else roll back. A read's commit, which
 * loses nothing, is sent with a Sync and not waited for: the server
 * ends the transaction (its snapshot, its locks) at once, and its
 * answer is read with the next statement's or at pg_close. The commit's
 * own tag is checked: PostgreSQL answers COMMIT in a failed transaction
 * with ROLLBACK, and that is no commit.
 */
static pgn_status
tx_end(pgn_db *db, int write, pgn_status rc)
{
	struct pgn_pg *pg = pg_of(db);
	PGresult *res = NULL;

	if (rc == PGN_OK && pg->pipe && !write) {
		rc = pipe_defer(db, "COMMIT", NULL, "ending a read");
		if (rc == PGN_OK && !PQpipelineSync(pg->conn))
			rc = fail_conn(db, "ending a read");
		if (rc == PGN_OK) {
			pg->nsynced = pg->npend;
			return PGN_OK;
		}
	}
	if (rc == PGN_OK) {
		rc = exec_text(db, "COMMIT", &res, "committing");
		if (rc == PGN_OK && strcmp(PQcmdStatus(res), "COMMIT") != 0)
			rc = pgn_fail(db, PGN_EDB,
			    "database '%s': committing: the server rolled the transaction back",
			    db->path);
		PQclear(res);
		/*
		 * Sent, and no answer, or the connection lost or ended
		 * with it (a backend terminated right after its commit
		 * answers FATAL in place of the Sync's answer, and libpq
		 * may not have read the close yet): ask what became of
		 * it; with no transaction id to ask about, its outcome
		 * stays unknown.
		 */
		if (rc != PGN_OK && write &&
		    (PQstatus(pg->conn) != CONNECTION_OK || pg->ending ||
		        rc == PGN_EIO)) {
			if (pg->xid != 0)
				return resolve(db);
			db->unknown = rc == PGN_EIO;
		}
	}
	/* A session the server ended is closed here, not read further. */
	if (pg->ending) {
		PQfinish(pg->conn);
		pg->conn = NULL;
		pg->bell_lost |= pg->bell;
		pg->pipe = pg->npend = pg->nsynced = pg->listening = pg->bell =
		    0;
		pg->xid_at = -1;
	}
	if (PQstatus(pg->conn) != CONNECTION_OK)
		return rc;
	/*
	 * Lost track of the connection after the answer: a write that
	 * committed stands (the caller must show what it claimed), and the
	 * next statement finds the connection closed.
	 */
	if (!pipe_leave(db, rc == PGN_OK, "committing"))
		return rc != PGN_OK || write ? rc : PGN_EIO;
	if (rc != PGN_OK && PQtransactionStatus(pg->conn) != PQTRANS_IDLE) {
		res = PQexec(pg->conn, "ROLLBACK");
		PQclear(res);
	}
	return rc;
}

static pgn_status
run_tx(pgn_db *db, int write, pgn_tx_fn *fn, void *arg)
{
	int64_t until, left;
	pgn_status rc;

	until = pgn_mono_ms() + db->deadline_ms;
	for (;;) {
		left = until - pgn_mono_ms();
		if (left < 1)
			left = 1;
		rc = reconnect_if_lost(db);
		if (rc != PGN_OK)
			return rc;
		rc = tx_begin(db, write, left);
		pg_of(db)->in_tx = pg_of(db)->pipe;
		if (rc == PGN_OK)
			rc = fn(db, arg);
		pg_of(db)->in_tx = 0;
		rc = tx_end(db, write, rc);
		if (rc == PGN_OK || PQstatus(pg_of(db)->conn) != CONNECTION_OK)
			return rc;
		if (rc != PGN_EBUSY || pgn_mono_ms() >= until)
			return rc;
	}
}

static pgn_status
pg_tx(pgn_db *db, pgn_tx_fn *fn, void *arg)
{
	return run_tx(db, 1, fn, arg);
}

static pgn_status
pg_read(pgn_db *db, pgn_tx_fn *fn, void *arg)
{
	return run_tx(db, 0, fn, arg);
}

/* ---- schema ----------------------------------------------------------- */

/* Run 'sql' for one row of one column as text ('*isnull' for NULL). */
static pgn_status
query_one(pgn_db *db, const char *sql, char *out, size_t len, int *isnull,
    const char *what)
{
	PGresult *res = NULL;
	pgn_status rc;

	out[0] = '\0';
	*isnull = 1;
	rc = exec_text(db, sql, &res, what);
	if (rc == PGN_OK && PQntuples(res) == 1 && PQnfields(res) >= 1 &&
	    !PQgetisnull(res, 0, 0)) {
		*isnull = 0;
		(void)snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
	}
	PQclear(res);
	return rc;
}

/* What read_version found besides a version. */
enum pg_schema_state {
	PG_SCHEMA_FINE,       /* a version, or an empty database */
	PG_SCHEMA_FOREIGN,    /* a 'message' table, none of Pigeon's others */
	PG_SCHEMA_NO_TABLE,   /* Pigeon's tables, no pigeon_schema */
	PG_SCHEMA_NO_VERSION, /* pigeon_schema without its version row */
};

/*
 * Pigeon's tables, for telling a damaged database (some of them, no
 * schema version) from another program's: audit_head is a name only
 * Pigeon uses; of the common names, PGN_PG_OURS_MIN together.
 */
#define PGN_PG_OURS_MIN 3
#define PG_OURS_SQL                                                            \
	"(to_regclass('audit_head') IS NOT NULL OR (SELECT count(*) FROM "     \
	"unnest(ARRAY['scope', 'agent', 'session', 'message', 'delivery', "    \
	"'journal', 'baton']) AS t(name) WHERE to_regclass(t.name) IS NOT "    \
	"NULL) >= " PGN_STR(PGN_PG_OURS_MIN) ")"

/*
 * The version in pigeon_schema (0 when there is none) and '*state':
 * whether the tables say something else, a foreign or a damaged
 * database.
 */
static pgn_status
read_version(pgn_db *db, int *version, int *state)
{
	char v[32];
	int isnull;
	pgn_status rc;

	*version = 0;
	*state = PG_SCHEMA_FINE;
	rc = query_one(db,
	    "SELECT CASE WHEN to_regclass('pigeon_schema') IS NOT NULL "
	    "THEN 's' WHEN " PG_OURS_SQL " THEN 'p' "
	    "WHEN to_regclass('message') IS NOT NULL THEN 'f' ELSE '' END",
	    v, sizeof(v), &isnull, "reading the schema");
	if (rc != PGN_OK || v[0] != 's') {
		if (rc == PGN_OK && v[0] == 'p')
			*state = PG_SCHEMA_NO_TABLE;
		else if (rc == PGN_OK && v[0] == 'f')
			*state = PG_SCHEMA_FOREIGN;
		return rc;
	}
	rc = query_one(db, "SELECT version FROM pigeon_schema WHERE id = 1", v,
	    sizeof(v), &isnull, "reading the schema");
	if (rc == PGN_OK && !isnull)
		*version = (int)strtol(v, NULL, 10);
	if (rc == PGN_OK && *version <= 0)
		*state = PG_SCHEMA_NO_VERSION;
	return rc;
}

static int
pg_schema_version(void)
{
	return pgn_pg_migrations[pgn_pg_nmigrations - 1].version;
}

int
pgn_pg_schema_version(void)
{
	return pg_schema_version();
}

/* The version if pigeon_schema is there, else 0 (no error kept). */
static int
fast_version(pgn_db *db)
{
	PGresult *res;
	int v = 0;

	res = PQexec(pg_of(db)->conn,
	    "SELECT version FROM pigeon_schema WHERE id = 1");
	if (res != NULL && PQresultStatus(res) == PGRES_TUPLES_OK &&
	    PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		v = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

/*
 * Refuse a newer schema, another program's database, and a damaged one:
 * migrating over half a schema would fail on the first table that is
 * there, with a message that names the wrong cause.
 */
static pgn_status
judge(pgn_db *db, int version, int state)
{
	if (version > pg_schema_version())
		return pgn_fail(db, PGN_ETOONEW,
		    "database '%s' has PostgreSQL schema version %d, newer than this pigeon (%d): upgrade pigeon; the database was not changed",
		    db->path, version, pg_schema_version());
	if (state == PG_SCHEMA_FOREIGN)
		return pgn_fail_hint(db, PGN_ECORRUPT, PGN_HINT_OTHER_DB, NULL,
		    "database '%s' has a table 'message' but no pigeon schema: give pigeon a database of its own",
		    db->path);
	if (state == PG_SCHEMA_NO_TABLE || state == PG_SCHEMA_NO_VERSION)
		return pgn_fail(db, PGN_ECORRUPT,
		    "database '%s' has Pigeon's tables but no schema version (%s): it was damaged; pigeon changed nothing: restore it from a backup, or give pigeon a new database",
		    db->path,
		    state == PG_SCHEMA_NO_TABLE ?
		        "the table pigeon_schema is missing" :
		        "pigeon_schema holds no version");
	return PGN_OK;
}

/*
 * Bring the database to our schema: one statement when it is there
 * already; else, under the migration lock, judge again and apply the
 * missing files of schema/pg in one transaction.
 */
static pgn_status
migrate(pgn_db *db)
{
	char sql[128];
	int version, state, i;
	pgn_status rc;

	/* The common case costs one statement: a database at our version. */
	if (fast_version(db) == pg_schema_version())
		return PGN_OK;
	rc = read_version(db, &version, &state);
	if (rc == PGN_OK)
		rc = judge(db, version, state);
	if (rc != PGN_OK || version == pg_schema_version())
		return rc;
	(void)snprintf(sql, sizeof(sql),
	    "BEGIN; SET LOCAL lock_timeout = %ld; "
	    "SELECT pg_advisory_xact_lock(%lld)",
	    db->deadline_ms, (long long)PGN_PG_MIGRATE_LOCK);
	rc = run_simple(db, sql, "starting the migration");
	if (rc == PGN_OK)
		rc = read_version(db, &version, &state);
	if (rc == PGN_OK)
		rc = judge(db, version, state);
	for (i = 0; rc == PGN_OK && i < pgn_pg_nmigrations; i++)
		if (pgn_pg_migrations[i].version > version)
			rc = run_simple(db, pgn_pg_migrations[i].sql,
			    pgn_pg_migrations[i].name);
	if (rc == PGN_OK && version < pg_schema_version()) {
		(void)snprintf(sql, sizeof(sql),
		    "INSERT INTO pigeon_schema(id, version) VALUES (1, %d) "
		    "ON CONFLICT (id) DO UPDATE SET version = excluded.version",
		    pg_schema_version());
		rc = run_simple(db, sql, "recording the schema version");
	}
	if (rc == PGN_OK)
		return run_simple(db, "COMMIT", "committing the migration");
	if (PQstatus(pg_of(db)->conn) == CONNECTION_OK) {
		PGresult *res = PQexec(pg_of(db)->conn, "ROLLBACK");

		PQclear(res);
	}
	return rc;
}

static pgn_status
pg_user_version(pgn_db *db, int *version)
{
	int state;

	return read_version(db, version, &state);
}

/* ---- connecting ------------------------------------------------------- */

/*
 * libpq's mark of a secret keyword (PQconninfoOption.dispchar "*":
 * password, sslpassword, and any a later libpq adds).
 */
#define PGN_PG_SECRET "*"
/* The keywords of the display form, in its order. */
static const char *const shown_keys[] = {"host", "port", "dbname", "user",
    "service"};

/*
 * A dbname libpq would take for a database string of its own (a URI, or
 * keyword=value): its keywords would escape every check made here.
 */
static int
nested_string(const char *v)
{
	return strncmp(v, "postgresql://", 13) == 0 ||
	    strncmp(v, "postgres://", 11) == 0 || strchr(v, '=') != NULL;
}

/*
 * Append " key=value", the value quoted as conninfo quotes it; a control
 * character is shown as '?' (the form goes into one-line messages and
 * hook.log).
 */
static void
add_shown(struct pgn_buf *b, const char *key, const char *v)
{
	const char *p;
	int quote;

	quote = v[0] == '\0' || strpbrk(v, " '\\") != NULL;
	for (p = v; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			quote = 1;
	pgn_buf_addf(b, "%s%s=%s", b->len > 0 ? " " : "", key,
	    quote ? "'" : "");
	for (p = v; *p != '\0'; p++) {
		if (*p == '\'' || *p == '\\')
			pgn_buf_add(b, "\\", 1);
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			pgn_buf_add(b, "?", 1);
		else
			pgn_buf_add(b, p, 1);
	}
	if (quote)
		pgn_buf_add(b, "'", 1);
}

/* 'w' (n bytes) is one of libpq's keywords, whatever its case. */
static int
libpq_keyword(const char *w, size_t n)
{
	PQconninfoOption *opts, *o;
	char *err = NULL;
	int found = 0;

	opts = PQconninfoParse("", &err);
	PQfreemem(err);
	for (o = opts; o != NULL && o->keyword != NULL && !found; o++)
		found = strlen(o->keyword) == n &&
		    strncasecmp(o->keyword, w, n) == 0;
	PQconninfoFree(opts);
	return found;
}

/*
 * The first line of libpq's word on a string it refused, each part it
 * quotes replaced by "..." unless that part is one of its keywords (a
 * mistyped PASSWORD=): libpq quotes what it could not read, which may
 * be a value, part of one, or the whole URI with its password.
 */
static void
tame_parse_error(const char *msg, char *out, size_t len)
{
	char line[PGN_PG_MAX_MSG];
	struct pgn_buf b;
	const char *p, *q, *end;

	first_line(msg, line, sizeof(line));
	pgn_buf_init(&b, 2 * sizeof(line)); /* "x" grows to "..." */
	for (p = line; *p != '\0'; p = end) {
		q = strchr(p, '"');
		if (q == NULL || (end = strchr(q + 1, '"')) == NULL) {
			/* No closing quote: what follows is cut. */
			pgn_buf_add(&b, p,
			    q == NULL ? strlen(p) : (size_t)(q - p));
			if (q != NULL)
				pgn_buf_adds(&b, "\"...\"");
			break;
		}
		end++;
		pgn_buf_add(&b, p, (size_t)(q + 1 - p));
		if ((end - q == 3 && ispunct((unsigned char)q[1])) ||
		    libpq_keyword(q + 1, (size_t)(end - q - 2)))
			pgn_buf_add(&b, q + 1, (size_t)(end - q - 2));
		else
			pgn_buf_adds(&b, "...");
		pgn_buf_add(&b, "\"", 1);
	}
	(void)snprintf(out, len, "%s",
	    b.err == PGN_OK && b.data != NULL ? b.data : "");
	pgn_buf_release(&b);
}

/*
 * The database string's display form (docs/decisions/0130): host, port,
 * dbname, user and service as the string gives them, keyword=value in
 * that order; "(PostgreSQL)" when it gives none. NULL when out of
 * memory.
 */
static char *
shown_form(const PQconninfoOption *opts)
{
	const PQconninfoOption *o;
	struct pgn_buf b;
	size_t k;

	pgn_buf_init(&b, PGN_MAX_PATH);
	for (k = 0; k < sizeof(shown_keys) / sizeof(shown_keys[0]); k++)
		for (o = opts; o->keyword != NULL; o++)
			if (strcmp(o->keyword, shown_keys[k]) == 0 &&
			    o->val != NULL && o->val[0] != '\0')
				add_shown(&b, o->keyword, o->val);
	if (b.err == PGN_OK && b.len == 0)
		pgn_buf_adds(&b, "(PostgreSQL)");
	return pgn_buf_take(&b, NULL);
}

/*
 * Check the database string and, if it is taken, show it from now on
 * by its display form (db->path). Refused: one libpq does not accept
 * (not shown: it may hold a secret), one holding a secret keyword
 * (docs/decisions/0114 and 0130: it would sit in argv, the shell's
 * history and every message that names the database; libpq reads
 * ~/.pgpass, PGPASSFILE and service files itself), and a dbname that
 * is a database string of its own.
 */
static pgn_status
check_conninfo(pgn_db *db, const char *conninfo)
{
	PQconninfoOption *opts, *o;
	char *err = NULL, *shown;
	char line[PGN_PG_MAX_MSG], secret[PGN_PG_MAX_WHAT] = "";
	int nested = 0;

	opts = PQconninfoParse(conninfo, &err);
	if (opts == NULL) {
		tame_parse_error(err, line, sizeof(line));
		PQfreemem(err);
		/* The string itself is not shown: it may hold a secret. */
		return pgn_fail(db, PGN_EINVAL,
		    "the database string is not a PostgreSQL URI or conninfo libpq accepts: %s",
		    line[0] != '\0' ? line : "out of memory");
	}
	for (o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		/* libpq says which of its keywords are secrets. */
		if (o->dispchar != NULL &&
		    strcmp(o->dispchar, PGN_PG_SECRET) == 0 &&
		    secret[0] == '\0')
			(void)snprintf(secret, sizeof(secret), "%s",
			    o->keyword);
		if (strcmp(o->keyword, "dbname") == 0 && nested_string(o->val))
			nested = 1;
	}
	shown = secret[0] == '\0' && !nested ? shown_form(opts) : NULL;
	PQconninfoFree(opts);
	if (strcmp(secret, "password") == 0)
		return pgn_fail(db, PGN_EINVAL,
		    "the database string holds a password: pigeon takes none there (it would show in process lists and logs); remove it and put it in ~/.pgpass, the file PGPASSFILE names, or a service file (PGSERVICE)");
	if (secret[0] != '\0')
		return pgn_fail(db, PGN_EINVAL,
		    "the database string holds a secret (%s): pigeon takes none there (it would show in process lists and logs); remove it and put it in a service file (PGSERVICE)",
		    secret);
	if (nested)
		return pgn_fail(db, PGN_EINVAL,
		    "the database string's dbname is a database string of its own: pigeon does not take one there (it would escape the check for passwords); write its keywords in the string itself");
	if (shown == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	free(db->path);
	db->path = shown;
	return PGN_OK;
}

static void
quiet_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static void
note_target(struct pgn_pg *pg)
{
	const char *h, *p;

	h = PQhost(pg->conn);
	p = PQport(pg->conn);
	(void)snprintf(pg->host, sizeof(pg->host), "%s",
	    h != NULL && *h != '\0' ? h : "(default)");
	(void)snprintf(pg->port, sizeof(pg->port), "%s",
	    p != NULL && *p != '\0' ? p : "5432");
}

/*
 * PQconnectStartParams and PQconnectPoll under poll(), bounded by the
 * connection's deadline: libpq's own connect_timeout waits at least 2 s,
 * more than a hook has.
 */
static pgn_status
connect_within(pgn_db *db, const char *conninfo)
{
	static const char *const keys[] = {"dbname",
	    "fallback_application_name", NULL};
	const char *vals[] = {conninfo, "pigeon", NULL};
	struct pgn_pg *pg = pg_of(db);
	PostgresPollingStatusType ps = PGRES_POLLING_WRITING;
	struct pollfd p;
	int64_t until, left;
	char line[PGN_PG_MAX_MSG];
	int r;

	until = pgn_mono_ms() + db->deadline_ms;
	pg->ending = 0;
	pg->conn = PQconnectStartParams(keys, vals, 1);
	if (pg->conn == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	/*
	 * libpq's default prints the server's notices on stderr, among them
	 * the FATAL of a terminated backend: the library never prints.
	 */
	PQsetNoticeProcessor(pg->conn, quiet_notice, NULL);
	if (PQstatus(pg->conn) == CONNECTION_BAD)
		ps = PGRES_POLLING_FAILED;
	while (ps != PGRES_POLLING_OK && ps != PGRES_POLLING_FAILED) {
		left = until - pgn_mono_ms();
		if (left <= 0) {
			note_target(pg);
			return pgn_fail(db, PGN_EIO,
			    "cannot connect to PostgreSQL at host %s port %s: no answer within %ld ms",
			    pg->host, pg->port, db->deadline_ms);
		}
		p.fd = PQsocket(pg->conn);
		p.events = ps == PGRES_POLLING_READING ? POLLIN : POLLOUT;
		p.revents = 0;
		r = p.fd >= 0 ? poll(&p, 1, (int)left) : 1;
		if (r < 0 && errno != EINTR)
			break;
		if (r > 0 || p.fd < 0)
			ps = PQconnectPoll(pg->conn);
	}
	note_target(pg);
	if (ps != PGRES_POLLING_OK || PQstatus(pg->conn) != CONNECTION_OK) {
		first_line(PQerrorMessage(pg->conn), line, sizeof(line));
		return pgn_fail(db, PGN_EIO,
		    "cannot connect to PostgreSQL at host %s port %s: %s",
		    pg->host, pg->port, line[0] != '\0' ? line : "refused");
	}
	return PGN_OK;
}

int
pgn_pg_available(void)
{
	return 1;
}

pgn_status
pgn_pg_open(pgn_db *db, const char *conninfo, unsigned flags)
{
	struct pgn_pg *pg;
	char err[256];
	pgn_status rc;

	(void)flags;
	rc = hide_string(db);
	if (rc != PGN_OK)
		return rc;
	if (!load_libpq(err, sizeof(err)))
		return pgn_fail(db, PGN_EIO,
		    "cannot load PostgreSQL's client library (%s): apt-get install libpq5",
		    err);
	db->be = &pg_be;
	pg = calloc(1, sizeof(*pg));
	if (pg == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	db->engine = pg;
	pg->xid_at = -1;
	pg->conninfo = pgn_strdup(conninfo);
	if (pg->conninfo == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	rc = check_conninfo(db, conninfo);
	if (rc == PGN_OK)
		rc = connect_within(db, conninfo);
	if (rc == PGN_OK)
		rc = migrate(db);
	return rc;
}

static void
pg_close(pgn_db *db)
{
	struct pgn_pg *pg = pg_of(db);

	if (pg == NULL)
		return;
	/*
	 * A read's commit still pending is answered before the goodbye: a
	 * pooler such as PgBouncer drops a server connection its client
	 * left mid-transaction, and the next client pays for a new one.
	 */
	(void)pipe_leave(db, 0, "closing");
	if (pg->conn != NULL)
		PQfinish(pg->conn);
	if (pg->conninfo != NULL) {
		sodium_memzero(pg->conninfo, strlen(pg->conninfo));
		free(pg->conninfo);
	}
	free(pg);
	db->engine = NULL;
}

static pgn_status
pg_check_file(pgn_db *db)
{
	if (PQstatus(pg_of(db)->conn) != CONNECTION_OK)
		return fail_conn(db, "waiting");
	return PGN_OK;
}

/* ---- doctor ----------------------------------------------------------- */

static pgn_status
pg_health(pgn_db *db, struct pgn_health *h)
{
	struct pgn_buf b;
	int v, state;
	pgn_status rc;

	rc = read_version(db, &v, &state);
	if (rc != PGN_OK)
		return rc;
	h->schema_version = v;
	v = PQserverVersion(pg_of(db)->conn);
	pgn_buf_init(&b, PGN_MAX_PATH + 128);
	pgn_buf_addf(&b, "PostgreSQL %d.%d at host %s port %s, database %s",
	    v / 10000, v % 10000, pg_of(db)->host, pg_of(db)->port,
	    PQdb(pg_of(db)->conn) != NULL ? PQdb(pg_of(db)->conn) : "?");
	h->server = pgn_buf_take(&b, NULL);
	pgn_buf_release(&b);
	h->integrity = pgn_strdup("ok");
	if (h->server == NULL || h->integrity == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	h->page_size = 1; /* the size in bytes, as one page each */
	return pgn_select_i64(db, "SELECT pg_database_size(current_database())",
	    &h->pages, "reading the database size", PGN_NONE);
}

/* ---- pgn_wait: LISTEN/NOTIFY ------------------------------------------ */

struct pgn_waker {
	pgn_db *db;
};

/* 'extra' (a directory) is left to the waiter's poll: no inotify here. */
static struct pgn_waker *
pg_wait_open(pgn_db *db, const char *extra)
{
	struct pgn_waker *w;

	(void)extra;
	if (reconnect_if_lost(db) != PGN_OK || !pipe_leave(db, 1, "listening"))
		return NULL;
	if (!pg_of(db)->listening &&
	    run_simple(db, "LISTEN pigeon", "listening") != PGN_OK)
		return NULL; /* the waiter polls */
	pg_of(db)->listening = 1;
	w = calloc(1, sizeof(*w));
	if (w != NULL)
		w->db = db;
	return w;
}

/* LISTEN pigeon again after a reconnect; false if it failed. */
static int
listen_again(pgn_db *db)
{
	if (pg_of(db)->listening)
		return 1;
	if (run_simple(db, "LISTEN pigeon", "listening") != PGN_OK)
		return 0;
	pg_of(db)->listening = 1;
	return 1;
}

/* Take every notification libpq holds; true if there was one. */
static int
drain(PGconn *conn)
{
	PGnotify *n;
	int any = 0;

	while ((n = PQnotifies(conn)) != NULL) {
		any = 1;
		PQfreemem(n);
	}
	return any;
}

static int
pg_wait_sleep(pgn_db *db, struct pgn_waker *w, int64_t ms)
{
	PGconn *conn;
	struct pollfd p;
	int r;

	(void)w;
	if (reconnect_if_lost(db) != PGN_OK || !pipe_leave(db, 1, "waiting") ||
	    !listen_again(db))
		return 0;
	conn = pg_of(db)->conn;
	if (drain(conn))
		return 0; /* one came during the last look */
	p.fd = PQsocket(conn);
	p.events = POLLIN;
	p.revents = 0;
	if (p.fd < 0)
		return 0;
	r = poll(&p, 1, (int)ms);
	if (r < 0 && errno == EINTR)
		return -1;
	if (r > 0 && PQconsumeInput(conn))
		(void)drain(conn);
	return 0;
}

/*
 * The socket, for a poll beside others (pigeon watch): readable when a
 * notification comes. The pipeline is left first, so a read's pending
 * answers are not what wakes the poll.
 */
static int
pg_wait_fd(struct pgn_waker *w)
{
	if (reconnect_if_lost(w->db) != PGN_OK ||
	    !pipe_leave(w->db, 0, "waiting") || !listen_again(w->db))
		return -1;
	return PQsocket(pg_of(w->db)->conn);
}

static void
pg_wait_close(pgn_db *db, struct pgn_waker *w)
{
	(void)db;
	free(w);
}

/* ---- the doorbell across machines: LISTEN pigeon_bell --------------- */

/* Take the bell's ids libpq holds; past 'max', '*over' is set. */
static void
bell_drain(PGconn *conn, int64_t *ids, size_t max, size_t *got, int *over)
{
	PGnotify *n;
	int64_t v;

	while ((n = PQnotifies(conn)) != NULL) {
		if (strcmp(n->relname, "pigeon_bell") == 0) {
			if (pgn_parse_i64(n->extra, 1, INT64_MAX, &v) != PGN_OK)
				*over = 1; /* not an id: look at everything */
			else if (*got < max)
				ids[(*got)++] = v;
			else
				*over = 1;
		}
		PQfreemem(n);
	}
}

/*
 * The ids schema/pg/0011's trigger notifies for each queued message that
 * may wake, in commit order (decision 0210).
 */
static int
pg_bell_take(pgn_db *db, int64_t ms, int64_t *ids, size_t max)
{
	struct pgn_pg *pg = pg_of(db);
	struct pollfd p;
	size_t got = 0;
	int over = 0, r;

	if (reconnect_if_lost(db) != PGN_OK ||
	    !pipe_leave(db, 1, "listening for the doorbell"))
		return -2;
	if (!pg->bell &&
	    run_simple(db, "LISTEN pigeon_bell",
	        "listening for the doorbell") != PGN_OK)
		return -2;
	pg->bell = 1;
	if (pg->bell_lost) {
		/* Rings notified while no session listened: look at all. */
		pg->bell_lost = 0;
		return (int)max + 1;
	}
	bell_drain(pg->conn, ids, max, &got, &over);
	if (got == 0 && !over && ms > 0) {
		p.fd = PQsocket(pg->conn);
		p.events = POLLIN;
		p.revents = 0;
		r = p.fd < 0 ?
		    -1 :
		    poll(&p, 1, ms > INT32_MAX ? INT32_MAX : (int)ms);
		if (r < 0 && p.fd >= 0 && errno == EINTR)
			return -1;
		if (r < 0 || (r > 0 && !PQconsumeInput(pg->conn))) {
			(void)fail_conn(db, "listening for the doorbell");
			return -2;
		}
		bell_drain(pg->conn, ids, max, &got, &over);
	}
	return over ? (int)max + 1 : (int)got;
}

static const struct pgn_backend pg_be = {
    .name = "postgresql",
    .dialect = PGN_DIALECT_PG,
    .prepare = pg_prepare,
    .finish = pg_finish,
    .reset = pg_reset,
    .nparams = pg_nparams,
    .bind = pg_bind,
    .step = pg_step,
    .step_write = pg_step_write,
    .col_i64 = pg_col_i64,
    .col_text = pg_col_text,
    .col_blob = pg_col_blob,
    .changes = pg_changes,
    .inserted_id = pg_inserted_id,
    .tx = pg_tx,
    .read = pg_read,
    .user_version = pg_user_version,
    .check_file = pg_check_file,
    .health = pg_health,
    .wait_open = pg_wait_open,
    .wait_sleep = pg_wait_sleep,
    .wait_close = pg_wait_close,
    .wait_fd = pg_wait_fd,
    .bell_take = pg_bell_take,
    .close = pg_close,
};

#else /* no libpq */

int
pgn_pg_available(void)
{
	return 0;
}

int
pgn_pg_schema_version(void)
{
	return 0;
}

pgn_status
pgn_pg_open(pgn_db *db, const char *conninfo, unsigned flags)
{
	(void)conninfo;
	(void)flags;
	if (hide_string(db) != PGN_OK)
		return PGN_ENOMEM;
	return pgn_fail_hint(db, PGN_EINVAL, PGN_HINT_NO_PG, NULL,
	    "this pigeon was built without PostgreSQL (libpq-dev was missing when it was built)");
}

#endif
