/*
 * Unit tests of the connection: opening, creating and refusing files,
 * migrations, the state home and database path, the claim's partial
 * index, and waiting on a busy write lock.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "pgn_int.h"
#include "store_int.h"

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Contents of 'path' equal 'want' (of 'len' bytes). */
static int
same_bytes(const char *path, const char *want, size_t len)
{
	size_t n;
	char *got;
	int same;

	got = h_read_file(path, &n);
	same = got != NULL && n == len && memcmp(got, want, len) == 0;
	free(got);
	return same;
}

/* ---- opening -------------------------------------------------------- */

static void
test_open_creates_private_file(void)
{
	char path[PATH_MAX];
	struct stat sb;
	pgn_db *db = NULL;

	H_PATH(path, "new.db");
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_OK);
	REQUIRE(db != NULL);
	CHECK_STR(pgn_errmsg(db), "");
	pgn_db_close(db);
	REQUIRE(stat(path, &sb) == 0);
	CHECK(S_ISREG(sb.st_mode));
	CHECK_INT(sb.st_mode & 0777, 0600);
}

static void
test_open_without_create_refuses_missing_file(void)
{
	char path[PATH_MAX];
	pgn_db *db = NULL;

	H_PATH(path, "missing.db");
	CHECK_INT(pgn_db_open(path, 0, 0, &db), PGN_ENOTFOUND);
	REQUIRE(db != NULL);
	CHECK_CONTAINS(pgn_errmsg(db), path);
	pgn_db_close(db);
	CHECK(!h_exists(path));
}

static void
test_open_sets_wal_and_schema_version(void)
{
	pgn_db *db;
	sqlite3 *raw;
	sqlite3_stmt *st = NULL;
	int version = -1;

	db = h_open();
	CHECK(pgn_schema_version() >= 1);
	CHECK_INT(pgn_db_user_version(db, &version), PGN_OK);
	CHECK_INT(version, pgn_schema_version());
	raw = h_raw();
	CHECK_INT(H_INT(raw, "PRAGMA user_version"), pgn_schema_version());
	CHECK(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, NULL) ==
	        SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW);
	CHECK_STR((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	/* the schema is there */
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM sqlite_schema WHERE "
	              "type = 'table' AND name IN ('scope', 'agent', "
	              "'session', "
	              "'message', 'delivery', 'audit_head', 'journal')"),
	    7);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM sqlite_schema WHERE "
	              "name = 'message_queued'"),
	    1);
	sqlite3_close(raw);
	pgn_db_close(db);
}

/* Every connection enforces the schema's REFERENCES clauses. */
static void
test_open_turns_foreign_keys_on(void)
{
	pgn_db *db = h_open();
	sqlite3 *raw;
	int64_t on = 0;

	CHECK_INT(pgn_select_i64(db, "PRAGMA foreign_keys", &on, "reading",
	              PGN_NONE),
	    PGN_OK);
	CHECK_INT(on, 1);
	/* An agent of a scope that does not exist is refused. */
	CHECK_INT(pgn_exec(db,
	              "INSERT INTO agent(scope_id, name, created_ms) "
	              "VALUES (9999, 'ghost', 1)",
	              "adding", PGN_NONE),
	    PGN_EDB);
	pgn_db_close(db);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM agent WHERE name = 'ghost'"),
	    0);
	sqlite3_close(raw);
}

/* The text of schema/NAME (the tree's, beside tests/fixtures). */
static char *
schema_text(const char *name)
{
	char path[PATH_MAX];
	const char *fix = getenv("PGN_TEST_FIXTURES");
	size_t len;

	REQUIRE(fix != NULL);
	snprintf(path, sizeof(path), "%s/../../schema/%s", fix, name);
	return h_read_file(path, &len);
}

/*
 * A version 2 database moves to 3 keeping every row: the audit table is
 * rebuilt for its new routes, the sessions gain their continuation
 * count.
 */
static void
test_migration_from_version_2_keeps_the_audit_and_sessions(void)
{
	char path[PATH_MAX], *v1, *v2;
	pgn_db *db;
	sqlite3 *raw;

	H_PATH(path, "pigeon.db");
	raw = h_raw_open(path);
	v1 = schema_text("0001_init.sql");
	v2 = schema_text("0002_session_turn.sql");
	REQUIRE(v1 != NULL && v2 != NULL);
	REQUIRE(H_EXEC(raw, v1));
	REQUIRE(H_EXEC(raw, v2));
	REQUIRE(H_EXEC(raw,
	    "PRAGMA user_version = 2;"
	    "INSERT INTO scope(id, root) VALUES (1, '');"
	    "INSERT INTO agent(id, scope_id, name, created_ms) VALUES (1, 1, 'bob', 1);"
	    "INSERT INTO session(id, key, host, agent_id, created_ms, last_seen_ms, last_turn) VALUES (1, 'claude:s', 'claude', 1, 1, 1, 'UserPromptSubmit:p');"
	    "INSERT INTO message(id, scope_id, sender, recipient_id, body, created_ms, delivered_ms) VALUES (7, 1, 'alice', 1, 'hi', 1, 2);"
	    "INSERT INTO delivery VALUES (1, 7, '', 'alice', 'bob', 'hi', 1, NULL, 2, 'claude:s', 'claude', 'prompt', 2, x'00');"
	    "INSERT INTO audit_head(id, n, hash) VALUES (1, 1, x'00');"));
	sqlite3_close(raw);
	free(v1);
	free(v2);
	db = h_open_path(path, 1000);
	REQUIRE(db != NULL);
	pgn_db_close(db);
	raw = h_raw_open(path);
	CHECK_INT(H_INT(raw, "PRAGMA user_version"), pgn_schema_version());
	CHECK_INT(
	    H_INT(raw,
	        "SELECT count(*) FROM delivery WHERE id = 1 AND message_id = 7 AND route = 'prompt' AND body = 'hi' AND hash = x'00'"),
	    1);
	CHECK_INT(
	    H_INT(raw,
	        "SELECT auto_continues FROM session WHERE key = 'claude:s'"),
	    0);
	CHECK_INT(H_INT(raw,
	              "SELECT last_turn = 'UserPromptSubmit:p' FROM session"),
	    1);
	/* The new routes are admitted, others still refused. */
	CHECK(H_EXEC(raw,
	    "INSERT INTO message(id, scope_id, sender, recipient_id, body, created_ms, delivered_ms) VALUES (8, 1, 'alice', 1, 'yo', 1, 2);"
	    "INSERT INTO delivery VALUES (2, 8, '', 'alice', 'bob', 'yo', 1, NULL, 2, 'claude:s', 'claude', 'after-tool', 2, x'00')"));
	CHECK(
	    sqlite3_exec(raw,
	        "INSERT INTO delivery VALUES (3, 8, '', 'a', 'b', 'c', 1, NULL, 2, 's', 'h', 'sideways', 1, x'00')",
	        NULL, NULL, NULL) != SQLITE_OK);
	sqlite3_close(raw);
}

/* The text of schema version 'v', whatever its name (schema/NNNN_*). */
static char *
schema_version_text(int v)
{
	char dir[PATH_MAX], prefix[16], *t = NULL;
	const char *fix = getenv("PGN_TEST_FIXTURES");
	struct dirent *e;
	DIR *d;

	REQUIRE(fix != NULL);
	snprintf(dir, sizeof(dir), "%s/../../schema", fix);
	snprintf(prefix, sizeof(prefix), "%04d_", v);
	d = opendir(dir);
	REQUIRE(d != NULL);
	while (t == NULL && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			t = schema_text(e->d_name);
	closedir(d);
	return t;
}

/*
 * A version 6 database moves to 7 (decision 0157): replies sent before
 * join their first message's thread, the journal keeps every row and
 * admits the new kinds (and still refuses others), nothing is asked to
 * be acknowledged.
 */
static void
test_migration_to_version_7_threads_old_replies_and_keeps_the_journal(void)
{
	char path[PATH_MAX], *t;
	pgn_db *db;
	sqlite3 *raw;
	int v;

	H_PATH(path, "pigeon.db");
	raw = h_raw_open(path);
	for (v = 1; v <= 6; v++) {
		t = schema_version_text(v);
		REQUIRE(t != NULL);
		REQUIRE(H_EXEC(raw, t));
		free(t);
	}
	REQUIRE(H_EXEC(raw,
	    "PRAGMA user_version = 6;"
	    "INSERT INTO scope(id, root) VALUES (1, '');"
	    "INSERT INTO agent(id, scope_id, name, created_ms) VALUES (1, 1, 'bob', 1), (2, 1, 'alice', 1);"
	    "INSERT INTO message(id, scope_id, sender, recipient_id, body, created_ms) VALUES (1, 1, 'alice', 1, 'a', 1);"
	    "INSERT INTO message(id, scope_id, sender, recipient_id, body, created_ms, reply_to) VALUES (2, 1, 'bob', 2, 'b', 2, 1), (3, 1, 'alice', 1, 'c', 3, 2), (4, 1, 'alice', 1, 'd', 4, NULL), (5, 1, 'bob', 2, 'e', 5, 4);"
	    "INSERT INTO journal(id, agent_id, at_ms, kind, message_id, peer, detail) VALUES (1, 1, 1, 'created', NULL, '', 'x'), (2, 2, 2, 'sent', 1, 'bob', '');"));
	sqlite3_close(raw);
	db = h_open_path(path, 1000);
	REQUIRE(db != NULL);
	pgn_db_close(db);
	raw = h_raw_open(path);
	CHECK_INT(H_INT(raw, "PRAGMA user_version"), pgn_schema_version());
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE id IN (1, 4) "
	              "AND thread IS NULL"),
	    2);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE id IN (2, 3) "
	              "AND thread = 1"),
	    2);
	CHECK_INT(H_INT(raw, "SELECT thread FROM message WHERE id = 5"), 4);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE ack_ms IS "
	              "NOT NULL OR acked_ms IS NOT NULL"),
	    0);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM journal WHERE (id = 1 AND "
	              "kind = 'created' AND detail = 'x') OR (id = 2 "
	              "AND kind = 'sent' AND message_id = 1)"),
	    2);
	CHECK(H_EXEC(raw,
	    "INSERT INTO journal(agent_id, at_ms, kind, message_id) VALUES "
	    "(1, 9, 'acked', 1), (1, 9, 'reminded', 1)"));
	CHECK(sqlite3_exec(raw,
	          "INSERT INTO journal(agent_id, at_ms, kind) VALUES (1, 9, "
	          "'sideways')",
	          NULL, NULL, NULL) != SQLITE_OK);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM sqlite_schema WHERE name IN "
	              "('journal_agent', 'message_thread', "
	              "'message_unacked', 'journal_new')"),
	    3);
	sqlite3_close(raw);
}

static void
test_reopen_keeps_data_and_changes_nothing(void)
{
	char path[PATH_MAX];
	pgn_db *db;
	sqlite3 *raw;
	char *before;
	size_t len;
	long long tables;
	int version = -1;

	H_PATH(path, "pigeon.db");
	db = h_open();
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_OK);
	pgn_db_close(db);
	raw = h_raw();
	tables = H_INT(raw, "SELECT count(*) FROM sqlite_schema");
	sqlite3_close(raw);
	before = h_read_file(path, &len);
	REQUIRE(before != NULL);

	db = h_open();
	CHECK_INT(pgn_db_user_version(db, &version), PGN_OK);
	CHECK_INT(version, pgn_schema_version());
	pgn_db_close(db);
	CHECK(same_bytes(path, before, len));
	free(before);

	db = h_open();
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_EEXIST); /* still there */
	pgn_db_close(db);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM sqlite_schema"), tables);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM agent"), 1);
	sqlite3_close(raw);
}

static void
test_open_refuses_newer_schema_and_leaves_file_alone(void)
{
	char path[PATH_MAX];
	pgn_db *db;
	sqlite3 *raw;
	char *before;
	size_t len;

	H_PATH(path, "pigeon.db");
	db = h_open();
	pgn_db_close(db);
	raw = h_raw();
	H_EXEC(raw, "PRAGMA user_version = 999");
	sqlite3_close(raw);
	before = h_read_file(path, &len);
	REQUIRE(before != NULL);

	db = NULL;
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_ETOONEW);
	REQUIRE(db != NULL);
	CHECK_CONTAINS(pgn_errmsg(db), path);
	CHECK_CONTAINS(pgn_errmsg(db), "999");
	CHECK_CONTAINS(pgn_errmsg(db), "not changed");
	pgn_db_close(db);
	CHECK(same_bytes(path, before, len));
	free(before);
	raw = h_raw();
	CHECK_INT(H_INT(raw, "PRAGMA user_version"), 999);
	sqlite3_close(raw);
}

static void
test_open_refuses_foreign_database_and_leaves_it_alone(void)
{
	char path[PATH_MAX];
	pgn_db *db = NULL;
	sqlite3 *raw;
	char *before;
	size_t len;

	H_PATH(path, "other.db");
	raw = h_raw_open(path);
	H_EXEC(raw,
	    "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);"
	    "INSERT INTO notes(text) VALUES ('keep me')");
	sqlite3_close(raw);
	before = h_read_file(path, &len);
	REQUIRE(before != NULL);

	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_ECORRUPT);
	REQUIRE(db != NULL);
	CHECK_CONTAINS(pgn_errmsg(db), "not made by pigeon");
	CHECK_CONTAINS(pgn_errmsg(db), path);
	pgn_db_close(db);
	CHECK(same_bytes(path, before, len));
	free(before);

	raw = h_raw_open(path);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM sqlite_schema"), 1);
	CHECK_INT(H_INT(raw, "PRAGMA user_version"), 0);
	sqlite3_close(raw);
}

static void
test_open_refuses_garbage_file_naming_it(void)
{
	char path[PATH_MAX], junk[2000];
	pgn_db *db = NULL;
	size_t i;

	H_PATH(path, "junk.db");
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)('A' + i % 23);
	h_write_file(path, junk, sizeof(junk));
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_ECORRUPT);
	REQUIRE(db != NULL);
	CHECK_CONTAINS(pgn_errmsg(db), path);
	pgn_db_close(db);
	CHECK(same_bytes(path, junk, sizeof(junk)));
}

static void
test_open_refuses_directory(void)
{
	char path[PATH_MAX];
	pgn_db *db = NULL;

	H_PATH(path, "adir");
	h_mkdir(path);
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_EIO);
	REQUIRE(db != NULL);
	CHECK_CONTAINS(pgn_errmsg(db), path);
	pgn_db_close(db);
}

static void
test_open_in_missing_directory_fails_with_eio(void)
{
	char path[PATH_MAX];
	pgn_db *db = NULL;

	H_PATH(path, "no/such/dir/pigeon.db");
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_EIO);
	REQUIRE(db != NULL);
	CHECK_CONTAINS(pgn_errmsg(db), path);
	pgn_db_close(db);
}

/* ---- the files are ours, private, never links (defect 14) ---------- */

#define OTHER_UID 65534 /* nobody: owns files in the other-user cases */
#define PRECIOUS  "an outside file that must stay as it is\n"

/* h_tmp/name as a new file holding PRECIOUS. */
static void
outside_file(char *path, size_t len, const char *name)
{
	h_join(path, len, h_tmp, name);
	h_write_file(path, PRECIOUS, strlen(PRECIOUS));
}

static int
mode_of(const char *path)
{
	struct stat sb;

	return lstat(path, &sb) == 0 ? (int)(sb.st_mode & 0777) : -1;
}

static void
test_open_refuses_symlinked_database_leaving_its_target_alone(void)
{
	char path[PATH_MAX], target[PATH_MAX], side[PATH_MAX + 8];
	pgn_db *db = NULL;

	outside_file(target, sizeof(target), "outside");
	H_PATH(path, "pigeon.db");
	REQUIRE(symlink(target, path) == 0);
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_EIO);
	REQUIRE(db != NULL);
	CHECK_CONTAINS(pgn_errmsg(db), path);
	CHECK_CONTAINS(pgn_errmsg(db), "is a symbolic link");
	CHECK(strchr(pgn_errmsg(db), '\n') == NULL);
	pgn_db_close(db);
	db = NULL;
	/* Without PGN_OPEN_CREATE too. */
	CHECK_INT(pgn_db_open(path, 0, 0, &db), PGN_EIO);
	pgn_db_close(db);
	CHECK(same_bytes(target, PRECIOUS, strlen(PRECIOUS)));
	snprintf(side, sizeof(side), "%s-wal", target);
	CHECK(!h_exists(side));
	snprintf(side, sizeof(side), "%s-wal", path);
	CHECK(!h_exists(side));
}

static void
test_open_refuses_dangling_symlink_creating_nothing(void)
{
	char path[PATH_MAX], target[PATH_MAX];
	pgn_db *db = NULL;

	H_PATH(target, "elsewhere.db");
	H_PATH(path, "pigeon.db");
	REQUIRE(symlink(target, path) == 0);
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_EIO);
	CHECK_CONTAINS(pgn_errmsg(db), "is a symbolic link");
	pgn_db_close(db);
	CHECK(!h_exists(target));
}

static void
test_open_refuses_symlinked_wal_or_shm_leaving_the_target_alone(void)
{
	static const char *const suffix[] = {"-wal", "-shm"};
	char path[PATH_MAX], target[PATH_MAX], side[PATH_MAX + 8];
	pgn_db *db;
	size_t i;

	outside_file(target, sizeof(target), "outside");
	H_PATH(path, "pigeon.db");
	pgn_db_close(h_open_path(path, 0));
	for (i = 0; i < 2; i++) {
		snprintf(side, sizeof(side), "%s%s", path, suffix[i]);
		(void)unlink(side);
		REQUIRE(symlink(target, side) == 0);
		db = NULL;
		CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_EIO);
		CHECK_CONTAINS(pgn_errmsg(db), side);
		CHECK_CONTAINS(pgn_errmsg(db), "is a symbolic link");
		pgn_db_close(db);
		CHECK(same_bytes(target, PRECIOUS, strlen(PRECIOUS)));
		REQUIRE(unlink(side) == 0);
	}
	/* With the links gone it opens again. */
	pgn_db_close(h_open_path(path, 0));
}

static void
test_open_follows_a_linked_directory_above_the_database(void)
{
	char real[PATH_MAX], link[PATH_MAX], path[PATH_MAX];
	pgn_db *db = NULL;

	H_PATH(real, "disk");
	h_mkdir(real);
	H_PATH(link, "home");
	REQUIRE(symlink(real, link) == 0);
	h_join(path, sizeof(path), link, "pigeon.db");
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_OK);
	CHECK_STR(pgn_errmsg(db), "");
	pgn_db_close(db);
	h_join(path, sizeof(path), real, "pigeon.db");
	CHECK_INT(mode_of(path), 0600);
}

static void
test_open_tightens_a_loose_database_wal_and_shm(void)
{
	static const char *const suffix[] = {"", "-wal", "-shm"};
	char path[PATH_MAX], side[PATH_MAX + 8];
	pgn_db *db;
	sqlite3 *raw;
	size_t i;

	H_PATH(path, "pigeon.db");
	db = h_open_path(path, 0);
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_OK);
	pgn_db_close(db);
	for (i = 0; i < 3; i++) {
		snprintf(side, sizeof(side), "%s%s", path, suffix[i]);
		REQUIRE(chmod(side, 0644) == 0);
	}
	db = h_open_path(path, 0);
	for (i = 0; i < 3; i++) {
		snprintf(side, sizeof(side), "%s%s", path, suffix[i]);
		CHECK_INT(mode_of(side), 0600);
	}
	pgn_db_close(db);
	/* Nothing else changed: a second connection sees the agent. */
	raw = h_raw_open(path);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM agent WHERE name = 'bob'"),
	    1);
	sqlite3_close(raw);
}

static void
test_open_creates_0600_whatever_the_umask(void)
{
	char path[PATH_MAX];
	pgn_db *db = NULL;
	mode_t old;

	H_PATH(path, "pigeon.db");
	old = umask(0277);
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_OK);
	umask(old);
	CHECK_STR(pgn_errmsg(db), "");
	pgn_db_close(db);
	CHECK_INT(mode_of(path), 0600);
}

static void
test_open_refuses_database_of_another_user_as_root_too(void)
{
	char path[PATH_MAX], want[64];
	pgn_db *db;

	if (geteuid() != 0) {
		printf("skip (needs root to give a file away)\n");
		return;
	}
	H_PATH(path, "pigeon.db");
	pgn_db_close(h_open_path(path, 0));
	REQUIRE(chown(path, OTHER_UID, OTHER_UID) == 0);
	REQUIRE(chmod(path, 0644) == 0);
	db = NULL;
	CHECK_INT(pgn_db_open(path, PGN_OPEN_CREATE, 0, &db), PGN_EIO);
	CHECK_CONTAINS(pgn_errmsg(db), path);
	snprintf(want, sizeof(want), "belongs to uid %d, not to you (uid 0)",
	    OTHER_UID);
	CHECK_CONTAINS(pgn_errmsg(db), want);
	CHECK(strstr(pgn_errmsg(db), "--db") == NULL); /* the fact only */
	CHECK_INT(pgn_errhint(db, NULL), PGN_HINT_OWNER);
	pgn_db_close(db);
	/* Left as it was: not made private, not given back. */
	CHECK_INT(mode_of(path), 0644);
}

static void
test_home_ensure_refuses_home_of_another_user_as_root_too(void)
{
	char dir[PATH_MAX], want[64];
	struct pgn_err err;

	if (geteuid() != 0) {
		printf("skip (needs root to give a directory away)\n");
		return;
	}
	H_PATH(dir, "theirs");
	h_mkdir(dir);
	REQUIRE(chmod(dir, 0755) == 0);
	REQUIRE(chown(dir, OTHER_UID, OTHER_UID) == 0);
	CHECK_INT(pgn_home_ensure(dir, &err), PGN_EIO);
	REQUIRE(err.msg[0] != '\0');
	CHECK_CONTAINS(err.msg, dir);
	snprintf(want, sizeof(want), "belongs to uid %d, not to you (uid 0)",
	    OTHER_UID);
	CHECK_CONTAINS(err.msg, want);
	CHECK_INT(err.hint, PGN_HINT_HOME_OWNER);
	/* Checked before any chmod: their directory keeps its mode. */
	CHECK_INT(mode_of(dir), 0755);
	/* pgn_db_path reports the same, and makes no database path. */
	{
		char *path = NULL;

		REQUIRE(setenv("PIGEON_HOME", dir, 1) == 0);
		unsetenv("PIGEON_DB");
		CHECK_INT(pgn_db_path(NULL, &path, &err), PGN_EIO);
		CHECK(path == NULL);
		CHECK_CONTAINS(err.msg, want);
		unsetenv("PIGEON_HOME");
	}
}

static void
test_close_accepts_null(void)
{
	pgn_db_close(NULL);
	CHECK_STR(pgn_errmsg(NULL), "out of memory");
}

/* ---- state home and database path ---------------------------------- */

struct saved_env {
	const char *name;
	char *value; /* NULL: was unset */
};

static void
env_save(struct saved_env *e, const char *name)
{
	const char *v;

	e->name = name;
	v = getenv(name);
	e->value = v != NULL ? pgn_strdup(v) : NULL;
}

static void
env_restore(struct saved_env *e)
{
	if (e->value != NULL)
		setenv(e->name, e->value, 1);
	else
		unsetenv(e->name);
	free(e->value);
	e->value = NULL;
}

/* '*dir' from pgn_home_path equals 'want', then freed. */
static void
check_home(const char *want, const char *file, int line)
{
	char *dir = NULL;
	pgn_status rc;

	rc = pgn_home_path(&dir);
	h_check_int(rc, PGN_OK, file, line, "pgn_home_path", "PGN_OK");
	h_check_str(dir, want, file, line, "home", want);
	free(dir);
}

#define CHECK_HOME(want) check_home((want), __FILE__, __LINE__)

static void
test_home_path_precedence(void)
{
	struct saved_env env[3];
	char *dir = NULL;

	env_save(&env[0], "PIGEON_HOME");
	env_save(&env[1], "XDG_STATE_HOME");
	env_save(&env[2], "HOME");

	setenv("PIGEON_HOME", "/p/home", 1);
	setenv("XDG_STATE_HOME", "/x/state", 1);
	setenv("HOME", "/h/user", 1);
	CHECK_HOME("/p/home");
	/* an empty PIGEON_HOME counts as unset */
	setenv("PIGEON_HOME", "", 1);
	CHECK_HOME("/x/state/pigeon");
	unsetenv("PIGEON_HOME");
	CHECK_HOME("/x/state/pigeon");
	setenv("XDG_STATE_HOME", "/x/state/", 1);
	CHECK_HOME("/x/state/pigeon");
	/* XDG requires an absolute path; a relative one is ignored */
	setenv("XDG_STATE_HOME", "relative/state", 1);
	CHECK_HOME("/h/user/.local/state/pigeon");
	unsetenv("XDG_STATE_HOME");
	CHECK_HOME("/h/user/.local/state/pigeon");
	unsetenv("HOME");
	CHECK_INT(pgn_home_path(&dir), PGN_EINVAL);
	CHECK(dir == NULL);

	env_restore(&env[0]);
	env_restore(&env[1]);
	env_restore(&env[2]);
}

static void
test_home_ensure_creates_missing_parents_private(void)
{
	char dir[PATH_MAX], parent[PATH_MAX];
	struct stat sb;
	struct pgn_err err;

	pgn_err_clear(&err);
	H_PATH(dir, "state/deep/pigeon");
	H_PATH(parent, "state/deep");
	CHECK_INT(pgn_home_ensure(dir, &err), PGN_OK);
	CHECK_STR(err.msg, "");
	REQUIRE(stat(dir, &sb) == 0);
	CHECK(S_ISDIR(sb.st_mode));
	CHECK_INT(sb.st_mode & 0777, 0700);
	REQUIRE(stat(parent, &sb) == 0);
	CHECK(S_ISDIR(sb.st_mode));
	/* again: already there, still fine */
	CHECK_INT(pgn_home_ensure(dir, &err), PGN_OK);
	CHECK_STR(err.msg, "");
}

static void
test_home_ensure_tightens_existing_dir(void)
{
	char dir[PATH_MAX];
	struct stat sb;
	struct pgn_err err;

	pgn_err_clear(&err);
	H_PATH(dir, "loose");
	h_mkdir(dir);
	REQUIRE(chmod(dir, 0755) == 0);
	CHECK_INT(pgn_home_ensure(dir, &err), PGN_OK);
	CHECK_STR(err.msg, "");
	REQUIRE(stat(dir, &sb) == 0);
	CHECK_INT(sb.st_mode & 0777, 0700);
}

static void
test_home_ensure_refuses_a_file(void)
{
	char path[PATH_MAX];
	struct pgn_err err;

	H_PATH(path, "afile");
	h_write_file(path, "x", 1);
	CHECK_INT(pgn_home_ensure(path, &err), PGN_EIO);
	CHECK_CONTAINS(err.msg, path);
}

static void
test_db_path_precedence(void)
{
	struct saved_env env[4];
	char home[PATH_MAX], want[PATH_MAX];
	struct stat sb;
	char *path = NULL;
	struct pgn_err err;

	pgn_err_clear(&err);
	env_save(&env[0], "PIGEON_DB");
	env_save(&env[1], "PIGEON_HOME");
	env_save(&env[2], "XDG_STATE_HOME");
	env_save(&env[3], "HOME");
	H_PATH(home, "home/pigeon");
	H_PATH(want, "home/pigeon/pigeon.db");
	setenv("PIGEON_HOME", home, 1);
	setenv("PIGEON_DB", "/env/pigeon.db", 1);

	CHECK_INT(pgn_db_path("/flag/x.db", &path, &err), PGN_OK);
	CHECK_STR(path, "/flag/x.db");
	free(path);
	CHECK_INT(pgn_db_path(NULL, &path, &err), PGN_OK);
	CHECK_STR(path, "/env/pigeon.db");
	free(path);
	CHECK_INT(pgn_db_path("", &path, &err), PGN_OK);
	CHECK_STR(path, "/env/pigeon.db");
	free(path);
	CHECK(!h_exists(home)); /* no home made for a named db */

	unsetenv("PIGEON_DB");
	CHECK_INT(pgn_db_path(NULL, &path, &err), PGN_OK);
	CHECK_STR(path, want);
	CHECK_STR(err.msg, "");
	free(path);
	REQUIRE(stat(home, &sb) == 0);
	CHECK(S_ISDIR(sb.st_mode));
	CHECK_INT(sb.st_mode & 0777, 0700);

	setenv("PIGEON_DB", "", 1);
	CHECK_INT(pgn_db_path(NULL, &path, &err), PGN_OK);
	CHECK_STR(path, want);
	free(path);

	env_restore(&env[0]);
	env_restore(&env[1]);
	env_restore(&env[2]);
	env_restore(&env[3]);
}

/* ---- the claim's partial index -------------------------------------- */

/* 'n' delivered messages to bob (agent 1), one queued; one transaction. */
static void
fill_history(sqlite3 *raw, int n)
{
	char sql[1024];
	int len;

	len = snprintf(sql, sizeof(sql),
	    "BEGIN;"
	    "INSERT INTO scope(id, root) VALUES (1, '') "
	    " ON CONFLICT DO NOTHING;"
	    "INSERT INTO agent(id, scope_id, name, created_ms) "
	    " VALUES (1, 1, 'bob', 0), (2, 1, 'carol', 0) "
	    " ON CONFLICT DO NOTHING;"
	    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c "
	    " WHERE i < %d) INSERT INTO message(scope_id, sender, "
	    " recipient_id, body, created_ms, delivered_ms) "
	    " SELECT 1, 'alice', 1 + (i %% 2), 'old ' || i, i, i + 1 FROM c;"
	    "INSERT INTO message(scope_id, sender, recipient_id, body, "
	    " created_ms) VALUES (1, 'alice', 1, 'new', 0);"
	    "COMMIT",
	    n);
	REQUIRE(len > 0 && (size_t)len < sizeof(sql));
	REQUIRE(H_EXEC(raw, sql));
}

static void
test_claim_query_uses_partial_index_with_small_history(void)
{
	pgn_db *db;
	sqlite3 *raw;

	db = h_open();
	raw = h_raw();
	fill_history(raw, 10);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM message"), 11);
	H_QUEUE_PLAN(raw, pgn_sql_queued, NULL, "10 delivered");
	H_QUEUE_PLAN(raw, pgn_sql_queued_of, NULL, "10 delivered, claim");
	sqlite3_close(raw);
	pgn_db_close(db);
}

static void
test_claim_query_uses_partial_index_with_large_history(void)
{
	pgn_db *db;
	sqlite3 *raw;
	struct pgn_msgs in;

	db = h_open();
	raw = h_raw();
	fill_history(raw, 20000);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM message"), 20001);
	H_QUEUE_PLAN(raw, pgn_sql_queued, NULL, "20000 delivered");
	H_QUEUE_PLAN(raw, pgn_sql_queued_of, NULL, "20000 delivered, claim");
	/* with statistics too, the planner keeps the index */
	REQUIRE(H_EXEC(raw, "ANALYZE"));
	H_QUEUE_PLAN(raw, pgn_sql_queued, NULL, "20000 delivered, analyzed");
	H_QUEUE_PLAN(raw, pgn_sql_queued_of, NULL,
	    "20000 delivered, analyzed, claim");
	sqlite3_close(raw);
	/* and the library sees just the one queued message */
	CHECK_INT(pgn_inbox(db, "bob", &in), PGN_OK);
	CHECK_INT(in.n, 1);
	if (in.n == 1)
		CHECK_STR(in.v[0].body, "new");
	pgn_msgs_release(&in);
	pgn_db_close(db);
}

/* ---- busy ------------------------------------------------------------ */

static pgn_status
send_one(pgn_db *db, const char *body)
{
	static const char *const to[] = {"bob"};
	struct pgn_send req;
	struct pgn_sent sent[1];
	size_t nsent = 0;

	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = to;
	req.nto = 1;
	req.body = body;
	req.body_len = strlen(body);
	req.create = 1;
	return pgn_send(db, &req, sent, 1, &nsent);
}

static void
test_send_gives_up_with_ebusy_at_the_deadline(void)
{
	pgn_db *db;
	sqlite3 *raw;
	long long t0, took;
	pgn_status rc;
	char path[PATH_MAX];

	H_PATH(path, "pigeon.db");
	db = h_open_path(path, 300);
	raw = h_raw();
	sqlite3_busy_timeout(raw, 0);
	REQUIRE(H_EXEC(raw, "BEGIN IMMEDIATE"));
	t0 = mono_ms();
	rc = send_one(db, "blocked");
	took = mono_ms() - t0;
	CHECK_INT(rc, PGN_EBUSY);
	CHECK(took >= 250);
	CHECK(took < 3000);
	if (took < 250 || took >= 3000)
		printf("  took %lld ms with a 300 ms deadline\n", took);
	CHECK(strstr(pgn_errmsg(db), "database is locked") == NULL);
	CHECK_CONTAINS(pgn_errmsg(db), "busy");
	CHECK_CONTAINS(pgn_errmsg(db), path);
	H_EXEC(raw, "ROLLBACK");
	/* nothing half-written; with the lock free it goes through */
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM message"), 0);
	CHECK_INT(send_one(db, "free"), PGN_OK);
	CHECK_INT(H_INT(raw, "SELECT count(*) FROM message"), 1);
	sqlite3_close(raw);
	pgn_db_close(db);
}

static void
test_send_waits_for_a_lock_released_before_the_deadline(void)
{
	char path[PATH_MAX], c;
	pgn_db *db;
	sqlite3 *raw;
	int fds[2], status = 0;
	pid_t pid;
	pgn_status rc;

	H_PATH(path, "pigeon.db");
	db = h_open_path(path, 5000);
	CHECK_INT(pgn_agent_add(db, "bob"), PGN_OK);
	pgn_db_close(db);
	REQUIRE(pipe(fds) == 0);
	fflush(stdout);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* Child: hold the write lock ~300 ms, write, commit. */
		sqlite3 *s = NULL;
		struct timespec ts = {0, 300 * 1000000L};
		int ok;

		close(fds[0]);
		ok = sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE, NULL) ==
		        SQLITE_OK &&
		    sqlite3_exec(s, "BEGIN IMMEDIATE", NULL, NULL, NULL) ==
		        SQLITE_OK;
		if (write(fds[1], ok ? "1" : "0", 1) != 1)
			ok = 0;
		close(fds[1]);
		nanosleep(&ts, NULL);
		if (ok &&
		    sqlite3_exec(s,
		        "INSERT INTO agent(scope_id, name, "
		        "created_ms) SELECT id, 'child', 0 FROM scope; COMMIT",
		        NULL, NULL, NULL) != SQLITE_OK)
			ok = 0;
		sqlite3_close(s);
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1 && c == '1');
	close(fds[0]);
	db = h_open_path(path, 5000);
	rc = send_one(db, "after the child");
	CHECK_INT(rc, PGN_OK);
	if (rc != PGN_OK)
		printf("  %s\n", pgn_errmsg(db));
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pgn_db_close(db);
	raw = h_raw();
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM message WHERE body = "
	              "'after the child'"),
	    1);
	CHECK_INT(H_INT(raw,
	              "SELECT count(*) FROM agent WHERE name = "
	              "'child'"),
	    1);
	sqlite3_close(raw);
}

static const struct h_test tests[] = {
    H_TEST(test_open_creates_private_file),
    H_TEST(test_open_without_create_refuses_missing_file),
    H_TEST(test_open_sets_wal_and_schema_version),
    H_TEST(test_open_turns_foreign_keys_on),
    H_TEST(test_migration_from_version_2_keeps_the_audit_and_sessions),
    H_TEST(
        test_migration_to_version_7_threads_old_replies_and_keeps_the_journal),
    H_TEST(test_reopen_keeps_data_and_changes_nothing),
    H_TEST(test_open_refuses_newer_schema_and_leaves_file_alone),
    H_TEST(test_open_refuses_foreign_database_and_leaves_it_alone),
    H_TEST(test_open_refuses_garbage_file_naming_it),
    H_TEST(test_open_refuses_directory),
    H_TEST(test_open_in_missing_directory_fails_with_eio),
    H_TEST(test_open_refuses_symlinked_database_leaving_its_target_alone),
    H_TEST(test_open_refuses_dangling_symlink_creating_nothing),
    H_TEST(test_open_refuses_symlinked_wal_or_shm_leaving_the_target_alone),
    H_TEST(test_open_follows_a_linked_directory_above_the_database),
    H_TEST(test_open_tightens_a_loose_database_wal_and_shm),
    H_TEST(test_open_creates_0600_whatever_the_umask),
    H_TEST(test_open_refuses_database_of_another_user_as_root_too),
    H_TEST(test_home_ensure_refuses_home_of_another_user_as_root_too),
    H_TEST(test_close_accepts_null),
    H_TEST(test_home_path_precedence),
    H_TEST(test_home_ensure_creates_missing_parents_private),
    H_TEST(test_home_ensure_tightens_existing_dir),
    H_TEST(test_home_ensure_refuses_a_file),
    H_TEST(test_db_path_precedence),
    H_TEST(test_claim_query_uses_partial_index_with_small_history),
    H_TEST(test_claim_query_uses_partial_index_with_large_history),
    H_TEST(test_send_gives_up_with_ebusy_at_the_deadline),
    H_TEST(test_send_waits_for_a_lock_released_before_the_deadline),
};

int
main(void)
{
	return h_run(tests, H_COUNT(tests));
}
