/*
 * Tests that run on every backend (decision 0116): SQLite always and,
 * when PGN_TEST_PG names a server (scripts/test starts one), PostgreSQL,
 * each pass in a store of its own: a file in the test's temp directory
 * or a database made for it on the server and dropped after.
 *
 * A test file includes harness.h, then this header, calls be_init() in
 * main before h_run, and for each pass sets be_on_pg and calls
 * be_store(); the handles it opens on be_where it closes itself before
 * be_drop(). A table of rules runs on one backend with be_rules():
 *
 *	static void test_rules_on_sqlite(void) { be_rules(0, rules, ...); }
 *	static void test_rules_on_postgresql(void)
 *	{ if (be_have_pg()) be_rules(1, rules, ...); }
 *
 * Header-only, as harness.h is: it uses the harness's per-file state
 * (h_tmp, h_failures, REQUIRE's jump).
 */
#ifndef PGN_TEST_BACKENDS_H
#define PGN_TEST_BACKENDS_H

#include <signal.h>
#include <sys/wait.h>

#include "claim.h"
#include "harness.h"
#include "schema_int.h"
#include "store_int.h"

/* A database name on the server: prefix, pid and a random number. */
#define BE_MAX_DBNAME 64

static const char *be_pg;             /* PGN_TEST_PG, or NULL */
static int be_on_pg;                  /* this pass is PostgreSQL's */
static char be_pg_db[BE_MAX_DBNAME];  /* its database, while it exists */
static char be_where[PATH_MAX + 128]; /* this pass's database string */

/* In main, before h_run: the server, the random names, SIGPIPE. */
static H_UNUSED void
be_init(void)
{
	const char *v = getenv("PGN_TEST_PG");

	be_pg = v != NULL && *v != '\0' ? v : NULL;
	srand((unsigned)getpid());
	signal(SIGPIPE, SIG_IGN);
}

/* Run 'cmd' with the shell; its exit status, or -1. */
static H_UNUSED int
be_sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * 1 when the PostgreSQL pass can run. Without a server, or in a build
 * without libpq, it prints a skip line and returns 0; under CI=true
 * that is a failure of the current test, as CI never skips it.
 */
static H_UNUSED int
be_have_pg(void)
{
	const char *ci = getenv("CI");

	if (be_pg != NULL && pgn_pg_available())
		return 1;
	if (ci != NULL && strcmp(ci, "true") == 0) {
		printf("no PostgreSQL (%s): CI=true never skips it\n",
		    be_pg == NULL ? "PGN_TEST_PG is not set" :
		                    "built without libpq-dev");
		h_check(0, __FILE__, __LINE__, "PostgreSQL available");
		return 0;
	}
	printf("# SKIP PostgreSQL: %s\n",
	    be_pg == NULL ? "PGN_TEST_PG is not set (scripts/test sets it)" :
	                    "this build has no libpq-dev");
	return 0;
}

/*
 * A fresh store for this pass in be_where: on PostgreSQL the database
 * PREFIX_<pid>_<random>, made with psql on the server's conninfo; on
 * SQLite the file DIR/pigeon.db. Not opened: the caller opens it.
 */
static H_UNUSED void
be_store(const char *prefix, const char *dir)
{
	char cmd[2 * PATH_MAX];

	if (!be_on_pg) {
		h_join(be_where, sizeof(be_where), dir, "pigeon.db");
		return;
	}
	(void)snprintf(be_pg_db, sizeof(be_pg_db), "%s_%ld_%d", prefix,
	    (long)getpid(), rand() % 100000);
	(void)snprintf(cmd, sizeof(cmd),
	    "psql -X -q -v ON_ERROR_STOP=1 '%s' -c 'CREATE DATABASE %s' "
	    ">/dev/null",
	    be_pg, be_pg_db);
	REQUIRE(be_sh(cmd) == 0);
	(void)snprintf(be_where, sizeof(be_where), "%s dbname=%s", be_pg,
	    be_pg_db);
}

/*
 * Drop this pass's PostgreSQL database, if it made one (every handle on
 * it closed, or WITH (FORCE) ends them); psql's exit status, 0 when
 * there was nothing to drop. A SQLite file stays for the runner.
 */
static H_UNUSED int
be_drop(void)
{
	char cmd[2 * PATH_MAX];
	int r;

	if (be_pg_db[0] == '\0')
		return 0;
	(void)snprintf(cmd, sizeof(cmd),
	    "psql -X -q -v ON_ERROR_STOP=1 '%s' -c 'DROP DATABASE IF EXISTS %s "
	    "WITH (FORCE)' >/dev/null 2>&1",
	    be_pg, be_pg_db);
	r = be_sh(cmd);
	be_pg_db[0] = '\0';
	return r;
}

/*
 * This pass's store ('prefix' names a PostgreSQL database), opened
 * twice: the library's handle and a second connection for checks.
 */
static H_UNUSED void
be_open_pair(const char *prefix, pgn_db **db, pgn_db **chk)
{
	be_store(prefix, h_tmp);
	*db = h_open_path(be_where, 0);
	*chk = h_open_path(be_where, 0);
}

/* Close both handles and drop this pass's database: be_drop()'s status. */
static H_UNUSED int
be_close_pair(pgn_db **db, pgn_db **chk)
{
	pgn_db_close(*db);
	pgn_db_close(*chk);
	*db = *chk = NULL;
	return be_drop();
}

/* One message from 'from' to the one agent 'to', at 'priority'. */
static H_UNUSED pgn_status
be_send_one(pgn_db *db, const char *from, const char *to, const char *body,
    int priority)
{
	struct pgn_send req;
	struct pgn_sent sent[4];
	size_t n;

	memset(&req, 0, sizeof(req));
	req.from = from;
	req.to = &to;
	req.nto = 1;
	req.body = body;
	req.body_len = strlen(body);
	req.priority = priority;
	return pgn_send(db, &req, sent, 4, &n);
}

/*
 * A prompt turn 'turn' of 'host' session 'session' (a session key)
 * claimed for 'agent': binds the session and takes what is queued.
 */
static H_UNUSED void
be_claim_turn(pgn_db *db, const char *host, const char *session,
    const char *agent, const char *turn, const char *transcript)
{
	struct pgn_turn t;
	struct pgn_turn_out out;

	memset(&t, 0, sizeof(t));
	t.host = host;
	t.session = session;
	t.agent = agent;
	t.turn = turn;
	t.route = "prompt";
	t.transcript = transcript;
	t.max_continues = 3;
	memset(&out, 0, sizeof(out));
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	pgn_msgs_release(&out.msgs);
}

/* One number read through 'chk' (a second connection); -1 on error. */
static H_UNUSED int64_t
be_count(pgn_db *chk, const char *sql)
{
	int64_t n = -1;

	if (pgn_select_i64(chk, sql, &n, "checking", PGN_NONE) != PGN_OK)
		printf("check '%s': %s\n", sql, pgn_errmsg(chk));
	return n;
}

static int
be_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	if (ftw->level == 0)
		return 0;
	if (flag == FTW_DP)
		return rmdir(path) != 0 ? -1 : 0;
	return unlink(path) != 0 ? -1 : 0;
}

/*
 * Each of the 'n' rules on one backend ('pg'), between 'setup' and
 * 'teardown', each in an empty temp directory (its SQLite file and
 * whatever else the last rule left are removed); a failed rule is
 * named with its index and backend.
 */
static H_UNUSED void
be_rules(int pg, void (*const *rules)(void), size_t n, void (*setup)(void),
    void (*teardown)(void))
{
	size_t i;
	int before;

	be_on_pg = pg;
	for (i = 0; i < n; i++) {
		before = h_failures;
		setup();
		rules[i]();
		teardown();
		if (h_failures != before)
			printf("  (rule %zu failed on %s)\n", i,
			    pg ? "PostgreSQL" : "SQLite");
		if (nftw(h_tmp, be_rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
			h_check(0, __FILE__, __LINE__,
			    "the rule's files are removed");
	}
}

/*
 * A database made before a feature's migration (the file named
 * "*SUFFIX") and opened by the library, which migrates the rest: on
 * SQLite (pg 0) the migrations before it, the version they make, then
 * 'seed' through SQLite itself; on PostgreSQL (pg 1, database 'name',
 * skipped without a server) the schema/pg files before it through psql.
 * Then 'check' with '*db' and '*chk' on it (and, on PostgreSQL, the
 * version is the latest); closed, and PostgreSQL's dropped, after.
 */
static H_UNUSED void
be_migrate_from(int pg, const char *name, const char *suffix,
    const char *seed_sql, pgn_db **db, pgn_db **chk, void (*check)(void))
{
	char path[PATH_MAX], cmd[4 * PATH_MAX], pragma[64];
	const char *fix = getenv("PGN_TEST_FIXTURES"), *where = path;
	sqlite3 *raw;
	int i, k = -1;

	be_on_pg = pg;
	if (pg) {
		if (!be_have_pg())
			return;
		REQUIRE(fix != NULL);
		be_store(name, h_tmp);
		(void)snprintf(cmd, sizeof(cmd),
		    "n=0; for f in '%s'/../../schema/pg/*.sql; do "
		    "case \"$f\" in *%s) break;; esac; "
		    "psql -X -q -v ON_ERROR_STOP=1 '%s' -f \"$f\" >/dev/null || exit 1; "
		    "n=$((n + 1)); done; "
		    "psql -X -q -v ON_ERROR_STOP=1 '%s' -c \"INSERT INTO "
		    "pigeon_schema(id, version) VALUES (1, $n); %s\" >/dev/null",
		    fix, suffix, be_where, be_where, seed_sql);
		REQUIRE(be_sh(cmd) == 0);
		where = be_where;
	} else {
		for (i = 0; i < pgn_nmigrations && k < 0; i++)
			if (strstr(pgn_migrations[i].name, suffix) != NULL)
				k = i;
		REQUIRE(k >= 1);
		H_PATH(path, "old.db");
		raw = h_raw_open(path);
		for (i = 0; i < k; i++)
			REQUIRE(H_EXEC(raw, pgn_migrations[i].sql));
		(void)snprintf(pragma, sizeof(pragma),
		    "PRAGMA user_version = %d", pgn_migrations[k - 1].version);
		REQUIRE(H_EXEC(raw, pragma));
		REQUIRE(H_EXEC(raw, seed_sql));
		sqlite3_close(raw);
	}
	*db = h_open_path(where, 1000);
	*chk = h_open_path(where, 1000);
	REQUIRE(*db != NULL && *chk != NULL);
	check();
	if (pg)
		CHECK_INT(be_count(*chk, "SELECT version FROM pigeon_schema"),
		    pgn_pg_schema_version());
	if (pg)
		(void)be_close_pair(db, chk);
	else {
		pgn_db_close(*db);
		pgn_db_close(*chk);
		*db = *chk = NULL;
	}
}

#endif /* PGN_TEST_BACKENDS_H */
