/*
 * The SQLite backend (store_int.h, docs/decisions/0110): open, schema
 * migrations, pragmas, the WAL lifecycle, the statement cache, SQLite's
 * errors, transactions that retry a busy lock with jitter up to a
 * deadline, and pgn_wait's wake-up on the WAL. The only file of the
 * store that calls sqlite3_*.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <poll.h>
#include <sys/inotify.h>
#endif

#include <sodium.h>
#include <sqlite3.h>

#include "mem.h"
#include "pgn_int.h"
#include "schema_int.h"
#include "sqlite.h"
#include "stamp.h"
#include "store_int.h"

/*
 * The engine's state behind db->engine (decision 0149): the connection,
 * the statement cache (docs/decisions/0022), whether the first write
 * checkpointed. One allocation, as the cache alone was before.
 */
struct lite_conn {
	sqlite3 *sql;
	int checkpointed;
	struct pgn_stmt stmts[PGN_STMT_CACHE];
};

static struct lite_conn *
lc(const pgn_db *db)
{
	return db->engine;
}

static void
sleep_ms(long ms)
{
	struct timespec ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Map an SQLite result to a status, recording its message with 'what'. */
static pgn_status
fail_sql(pgn_db *db, int rc, const char *what)
{
	const char *msg;

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		/* Never "database is locked": say what happened and why. */
		return pgn_fail(db, PGN_EBUSY,
		    "database '%s' is busy: another process held its write lock for over %ld ms; try again",
		    db->path, db->deadline_ms);
	case SQLITE_NOMEM:
		return pgn_fail(db, PGN_ENOMEM, "out of memory %s", what);
	default:
		break;
	}
	msg = sqlite3_errmsg(lc(db)->sql);
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return pgn_fail(db, PGN_ECORRUPT,
		    "database '%s' is damaged or not a database: %s", db->path,
		    msg);
	case SQLITE_IOERR:
	case SQLITE_FULL:
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		return pgn_fail(db, PGN_EIO, "database '%s': %s: %s", db->path,
		    what, msg);
	default:
		return pgn_fail(db, PGN_EDB, "database '%s': %s: %s", db->path,
		    what, msg);
	}
}

static const struct pgn_backend lite;

/* The SQLite statement of 'st'. */
#define LITE(st) ((sqlite3_stmt *)(st)->h)

/*
 * A cached statement for 'sql' (docs/decisions/0022): a free one
 * prepared from the same static text, else a new one in a free slot
 * (SQLITE_PREPARE_PERSISTENT), else (nested, or the cache is full) a
 * one-off freed by lite_finish.
 */
static pgn_status
lite_prepare(pgn_db *db, const char *sql, pgn_stmt **out)
{
	struct pgn_stmt *s, *slot = NULL;
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < PGN_STMT_CACHE; i++) {
		s = &lc(db)->stmts[i];
		if (s->h == NULL) {
			if (slot == NULL)
				slot = s;
		} else if (s->sql == sql && !s->busy &&
		    strcmp(sqlite3_sql(LITE(s)), sql) == 0) {
			s->busy = 1;
			*out = s;
			return PGN_OK;
		}
	}
	rc = sqlite3_prepare_v3(lc(db)->sql, sql, -1,
	    slot != NULL ? SQLITE_PREPARE_PERSISTENT : 0, &st, NULL);
	if (rc != SQLITE_OK)
		return fail_sql(db, rc, "preparing a statement");
	if (slot == NULL) {
		slot = calloc(1, sizeof(*slot));
		if (slot == NULL) {
			sqlite3_finalize(st);
			return fail_sql(db, SQLITE_NOMEM,
			    "preparing a statement");
		}
	}
	slot->be = &lite;
	slot->sql = sql;
	slot->h = st;
	slot->busy = 1;
	*out = slot;
	return PGN_OK;
}

static int
cached(pgn_db *db, const pgn_stmt *st)
{
	return st >= lc(db)->stmts && st < lc(db)->stmts + PGN_STMT_CACHE;
}

static void
lite_finish(pgn_db *db, pgn_stmt *st)
{
	if (cached(db, st)) {
		/* Locks and bound pointers go now, as with finalize. */
		(void)sqlite3_reset(LITE(st));
		(void)sqlite3_clear_bindings(LITE(st));
		st->busy = 0;
		return;
	}
	sqlite3_finalize(LITE(st));
	free(st);
}

static void
lite_reset(pgn_stmt *st)
{
	(void)sqlite3_reset(LITE(st));
}

static int
lite_nparams(pgn_stmt *st)
{
	return sqlite3_bind_parameter_count(LITE(st));
}

static pgn_status
lite_bind(pgn_db *db, pgn_stmt *st, int i, const struct pgn_arg *a)
{
	sqlite3_stmt *s = LITE(st);
	int rc = SQLITE_MISUSE;

	switch (a->kind) {
	case PGN_ARG_I64:
		rc = sqlite3_bind_int64(s, i, a->i);
		break;
	case PGN_ARG_TEXT:
		rc = a->t == NULL ?
		    sqlite3_bind_null(s, i) :
		    sqlite3_bind_text(s, i, a->t, -1, SQLITE_STATIC);
		break;
	case PGN_ARG_TEXTN:
		rc = sqlite3_bind_text(s, i, a->t, (int)a->len, SQLITE_STATIC);
		break;
	case PGN_ARG_BLOB:
		rc = sqlite3_bind_blob(s, i, a->b, (int)a->len, SQLITE_STATIC);
		break;
	case PGN_ARG_NONE:
		break;
	}
	return rc == SQLITE_OK ? PGN_OK : fail_sql(db, rc, "binding");
}

static pgn_status
lite_step(pgn_db *db, pgn_stmt *st, const char *what)
{
	int r;

	r = sqlite3_step(LITE(st));
	if (r == SQLITE_ROW)
		return PGN_OK;
	if (r == SQLITE_DONE)
		return PGN_ENOTFOUND;
	return fail_sql(db, r, what);
}

/* SQLite has nothing to overlap: the statement runs now. */
static pgn_status
lite_step_write(pgn_db *db, pgn_stmt *st, const char *what)
{
	pgn_status rc = lite_step(db, st, what);

	return rc == PGN_ENOTFOUND ? PGN_OK : rc;
}

static int64_t
lite_col_i64(pgn_stmt *st, int col)
{
	return sqlite3_column_int64(LITE(st), col);
}

/* The pointer first: it makes the byte count the text's (or blob's). */
static const char *
lite_col_text(pgn_stmt *st, int col, size_t *len)
{
	const unsigned char *p = sqlite3_column_text(LITE(st), col);

	*len = p != NULL ? (size_t)sqlite3_column_bytes(LITE(st), col) : 0;
	return (const char *)p;
}

static const void *
lite_col_blob(pgn_stmt *st, int col, size_t *len)
{
	const void *p = sqlite3_column_blob(LITE(st), col);

	*len = p != NULL ? (size_t)sqlite3_column_bytes(LITE(st), col) : 0;
	return p;
}

static int64_t
lite_changes(pgn_db *db, pgn_stmt *st)
{
	(void)st;
	return sqlite3_changes(lc(db)->sql);
}

static int64_t
lite_inserted_id(pgn_db *db, pgn_stmt *st)
{
	(void)st;
	return sqlite3_last_insert_rowid(lc(db)->sql);
}

/* One statement of static text, prepared once per connection. */
static pgn_status
lite_exec_static(pgn_db *db, const char *sql, const char *what)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	rc = lite_prepare(db, sql, &st);
	if (rc == PGN_OK)
		rc = lite_step(db, st, what);
	if (rc == PGN_ENOTFOUND)
		rc = PGN_OK;
	if (st != NULL)
		lite_finish(db, st);
	return rc;
}

static pgn_status
exec(pgn_db *db, const char *sql, const char *what)
{
	int rc;

	rc = sqlite3_exec(lc(db)->sql, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return fail_sql(db, rc, what);
	return PGN_OK;
}

/* Busy handler: sleep a jittered, growing slice until the deadline. */
static int
on_busy(void *arg, int count)
{
	pgn_db *db = arg;
	long left, slice;

	left = (long)(db->until_ms - pgn_mono_ms());
	if (left <= 0)
		return 0;
	slice = 1 +
	    (long)randombytes_uniform((uint32_t)(count < 10 ? count + 1 : 10));
	sleep_ms(slice < left ? slice : left);
	return 1;
}

static void
arm_deadline(pgn_db *db)
{
	db->until_ms = pgn_mono_ms() + db->deadline_ms;
}

/* Sleep a few jittered ms: SQLite gave up without its handler. */
static void
busy_pause(void)
{
	sleep_ms(1 + (long)randombytes_uniform(8));
}

/* run() against the deadline already armed. */
static pgn_status
run_armed(pgn_db *db, const char *begin, pgn_tx_fn *fn, void *arg)
{
	pgn_status rc;

	for (;;) {
		rc = lite_exec_static(db, begin, "starting a transaction");
		if (rc == PGN_OK)
			rc = fn(db, arg);
		if (rc == PGN_OK)
			rc = lite_exec_static(db, "COMMIT", "committing");
		if (rc == PGN_OK)
			return PGN_OK;
		if (!sqlite3_get_autocommit(lc(db)->sql))
			(void)sqlite3_exec(lc(db)->sql, "ROLLBACK", NULL, NULL,
			    NULL);
		if (rc != PGN_EBUSY || pgn_mono_ms() >= db->until_ms)
			return rc;
		/* SQLite gave up without its handler (WAL edge cases). */
		busy_pause();
	}
}

static pgn_status
run(pgn_db *db, const char *begin, pgn_tx_fn *fn, void *arg)
{
	arm_deadline(db);
	return run_armed(db, begin, fn, arg);
}

/* Size of the connection's WAL file; 0 if there is none. */
static long long
wal_bytes(pgn_db *db)
{
	const char *wal;
	struct stat sb;

	wal = sqlite3_filename_wal(sqlite3_db_filename(lc(db)->sql, "main"));
	if (wal == NULL || stat(wal, &sb) != 0)
		return 0;
	return (long long)sb.st_size;
}

/*
 * Before a connection's first write: when other processes left more
 * than PGN_WAL_CKPT_FIRST in the WAL, copy it into the database
 * (PASSIVE: never waits; syncs the WAL and the database), so the write
 * that follows restarts the WAL from its start and pays that sync too.
 * Hooks skip this: their latency matters, a CLI's or a library's less.
 */
static void
checkpoint_first(pgn_db *db)
{
	if (lc(db)->checkpointed || (db->flags & PGN_OPEN_LATENCY))
		return;
	lc(db)->checkpointed = 1;
	if (wal_bytes(db) > PGN_WAL_CKPT_FIRST)
		(void)sqlite3_wal_checkpoint_v2(lc(db)->sql, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

static pgn_status
lite_tx(pgn_db *db, pgn_tx_fn *fn, void *arg)
{
	checkpoint_first(db);
	return run(db, "BEGIN IMMEDIATE", fn, arg);
}

static pgn_status
lite_read(pgn_db *db, pgn_tx_fn *fn, void *arg)
{
	return run(db, "BEGIN", fn, arg);
}

int
pgn_schema_version(void)
{
	return pgn_migrations[pgn_nmigrations - 1].version;
}

static pgn_status
read_int(pgn_db *db, const char *sql, int *out)
{
	pgn_stmt *st = NULL;
	pgn_status rc;
	int r;

	rc = lite_prepare(db, sql, &st);
	if (rc != PGN_OK)
		return rc;
	r = sqlite3_step(LITE(st));
	if (r == SQLITE_ROW)
		*out = sqlite3_column_int(LITE(st), 0);
	else
		rc = fail_sql(db, r, "reading the schema");
	lite_finish(db, st);
	return rc;
}

static pgn_status
lite_user_version(pgn_db *db, int *version)
{
	return read_int(db, "PRAGMA user_version", version);
}

/* What one snapshot of the file holds, before migrating it. */
struct schema_state {
	int version; /* user_version */
	int tables;  /* rows of sqlite_schema, read when version is 0 */
};

/* Read both in the caller's transaction, so from one snapshot. */
static pgn_status
read_state(pgn_db *db, void *arg)
{
	struct schema_state *s = arg;
	pgn_status rc;

	s->tables = 0;
	rc = lite_user_version(db, &s->version);
	if (rc == PGN_OK && s->version == 0)
		rc = read_int(db, "SELECT count(*) FROM sqlite_schema",
		    &s->tables);
	return rc;
}

/* Refuse a newer schema, or tables but no version (another program's). */
static pgn_status
judge(pgn_db *db, const struct schema_state *s)
{
	if (s->version > pgn_schema_version())
		return pgn_fail(db, PGN_ETOONEW,
		    "database '%s' has schema version %d, newer than this pigeon (%d): upgrade pigeon; the database was not changed",
		    db->path, s->version, pgn_schema_version());
	if (s->version == 0 && s->tables > 0)
		return pgn_fail_hint(db, PGN_ECORRUPT, PGN_HINT_OTHER_DB, NULL,
		    "database '%s' was not made by pigeon (it has tables but no pigeon schema)",
		    db->path);
	return PGN_OK;
}

/*
 * The lease stamp of a database with no lease row (decision 0160):
 * written empty, under the write lock, so the before-tool hook's fast
 * path holds from the first run on (a missing stamp means "ask the
 * database"). With a lease row the stamp is the next lease change's to
 * write. Failing to write it fails nothing: the hook asks, slower.
 */
static pgn_status
empty_stamp(pgn_db *db)
{
	struct pgn_stamp_set none;
	pgn_status rc;
	int n = 1;

	if (db->path == NULL || db->path[0] == '\0')
		return PGN_OK;
	rc = read_int(db, "SELECT count(*) FROM lease", &n);
	if (rc != PGN_OK || n != 0)
		return rc;
	memset(&none, 0, sizeof(none));
	(void)pgn_stamp_write(db->path, &none, 0);
	return PGN_OK;
}

/* Under the write lock: judge again, then migrate unless another did. */
static pgn_status
migrate_tx(pgn_db *db, void *arg)
{
	struct schema_state s;
	char sql[64];
	int i;
	pgn_status rc;

	(void)arg;
	rc = read_state(db, &s);
	if (rc == PGN_OK)
		rc = judge(db, &s);
	if (rc != PGN_OK || s.version == pgn_schema_version())
		return rc;
	for (i = 0; i < pgn_nmigrations; i++) {
		if (pgn_migrations[i].version <= s.version)
			continue;
		rc = exec(db, pgn_migrations[i].sql, pgn_migrations[i].name);
		if (rc != PGN_OK)
			return rc;
	}
	rc = empty_stamp(db);
	if (rc != PGN_OK)
		return rc;
	/* An integer from our own table, not input: safe to format. */
	if (snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
	        pgn_schema_version()) >= (int)sizeof(sql))
		return pgn_fail(db, PGN_EDB, "schema version too long");
	return exec(db, sql, "recording the schema version");
}

/*
 * Bring the file to our schema. On first use many processes race here
 * (docs/decisions/0041-first-use-race.md): the version and the tables
 * are read in one read transaction, so a file another process is
 * migrating is seen empty or migrated, never as version 0 with the
 * tables just committed (two separate reads once called our own new
 * database foreign); every step retries a busy lock to the deadline;
 * and the migration judges again under the write lock.
 */
static pgn_status
migrate(pgn_db *db)
{
	struct schema_state s;
	int version;
	pgn_status rc;

	arm_deadline(db);
	/* The common case costs one statement: a database at our version. */
	rc = lite_user_version(db, &version);
	if (rc == PGN_OK && version == pgn_schema_version())
		return PGN_OK;
	if (rc != PGN_OK && rc != PGN_EBUSY)
		return rc;
	for (;;) {
		rc = run_armed(db, "BEGIN", read_state, &s);
		if (rc == PGN_OK)
			rc = judge(db, &s);
		if (rc == PGN_OK && s.version == pgn_schema_version())
			return PGN_OK;
		/* Refuse before WAL rewrites the header of a foreign file. */
		if (rc == PGN_OK && s.version == 0)
			rc =
			    exec(db, "PRAGMA journal_mode=WAL", "enabling WAL");
		if (rc == PGN_OK)
			return run_armed(db, "BEGIN IMMEDIATE", migrate_tx,
			    NULL);
		if (rc != PGN_EBUSY || pgn_mono_ms() >= db->until_ms)
			return rc;
		busy_pause();
	}
}

static pgn_status
create_file(pgn_db *db)
{
	int fd;

	fd = open(db->path,
	    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno != EEXIST)
		return pgn_fail(db, PGN_EIO, "cannot create database '%s': %s",
		    db->path, strerror(errno));
	if (fd >= 0) {
		/* 0600 exactly, whatever the umask took away. */
		(void)fchmod(fd, 0600);
		close(fd);
	}
	return PGN_OK;
}

/* Make one of the database's files 0600: the very file lstat saw. */
static pgn_status
tighten(pgn_db *db, const char *path, const struct stat *seen)
{
	struct stat sb;
	pgn_status rc = PGN_OK;
	int fd;

	fd = open(path,
	    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return pgn_fail(db, PGN_EIO,
		    "cannot make database file '%s' private: %s", path,
		    strerror(errno));
	errno = 0;
	if (fstat(fd, &sb) != 0 || sb.st_dev != seen->st_dev ||
	    sb.st_ino != seen->st_ino || fchmod(fd, 0600) != 0)
		rc = pgn_fail(db, PGN_EIO,
		    "cannot make database file '%s' private: %s", path,
		    errno != 0 ? strerror(errno) : "it was replaced");
	close(fd);
	return rc;
}

/*
 * The database and its -wal and -shm as lstat sees them: a regular file
 * of the effective user, never a symbolic link (one could point the
 * database or its WAL into any file the user can write), made private
 * when group or others may read it (SQLite gives -wal and -shm the
 * database's mode). docs/decisions/0042-state-files-ours-and-private.md
 */
static pgn_status
check_file(pgn_db *db, const char *path, const struct stat *sb)
{
	if (S_ISLNK(sb->st_mode))
		return pgn_fail_hint(db, PGN_EIO, PGN_HINT_OTHER_DB, NULL,
		    "database file '%s' is a symbolic link, which pigeon does not follow",
		    path);
	if (!S_ISREG(sb->st_mode))
		return pgn_fail(db, PGN_EIO,
		    "database '%s' is not a regular file", path);
	if (sb->st_uid != geteuid())
		return pgn_fail_hint(db, PGN_EIO, PGN_HINT_OWNER, NULL,
		    "database file '%s' belongs to uid %u, not to you (uid %u)",
		    path, (unsigned)sb->st_uid, (unsigned)geteuid());
	if ((sb->st_mode & 077) != 0)
		return tighten(db, path, sb);
	return PGN_OK;
}

/* Check '<real><suffix>' (-wal, -shm) if it exists. */
static pgn_status
check_side(pgn_db *db, const char *real, const char *suffix)
{
	struct pgn_buf b;
	struct stat sb;
	pgn_status rc = PGN_OK;

	pgn_buf_init(&b, PGN_MAX_PATH + 8);
	pgn_buf_adds(&b, real);
	pgn_buf_adds(&b, suffix);
	if (b.err != PGN_OK)
		rc = pgn_fail(db, b.err, "database path '%s' too long", real);
	else if (lstat(b.data, &sb) == 0)
		rc = check_file(db, b.data, &sb);
	else if (errno != ENOENT)
		rc = pgn_fail(db, PGN_EIO, "cannot read database file '%s': %s",
		    b.data, strerror(errno));
	pgn_buf_release(&b);
	return rc;
}

/*
 * The path SQLite opens: the real directory and the file's own name.
 * SQLITE_OPEN_NOFOLLOW refuses a symbolic link anywhere in the path, and
 * a linked directory above the database (a home on another disk) is
 * the user's choice; a linked database file is not.
 */
static char *
real_path(const char *path)
{
	const char *base;
	char *dir, *rdir, *out = NULL;

	base = strrchr(path, '/');
	base = base != NULL ? base + 1 : path;
	dir = pgn_path_dir(path);
	if (dir == NULL)
		return NULL;
	rdir = realpath(dir, NULL);
	if (rdir != NULL)
		out = pgn_path_join(rdir, base);
	free(rdir);
	free(dir);
	return out;
}

/* Find, create if asked and check the files; '*real' is for SQLite. */
static pgn_status
prepare_files(pgn_db *db, const char *path, unsigned flags, char **real)
{
	struct stat sb;
	pgn_status rc;

	*real = NULL;
	if (lstat(path, &sb) != 0) {
		if (errno != ENOENT)
			return pgn_fail(db, PGN_EIO,
			    "cannot read database '%s': %s", path,
			    strerror(errno));
		if (!(flags & PGN_OPEN_CREATE))
			return pgn_fail(db, PGN_ENOTFOUND,
			    "no database at '%s'", path);
		rc = create_file(db);
		if (rc != PGN_OK)
			return rc;
		/* Ours now, a racing creator's, or a dangling link. */
		if (lstat(path, &sb) != 0)
			return pgn_fail(db, PGN_EIO,
			    "cannot read database '%s': %s", path,
			    strerror(errno));
	}
	rc = check_file(db, path, &sb);
	if (rc != PGN_OK)
		return rc;
	*real = real_path(path);
	if (*real == NULL)
		return pgn_fail(db, PGN_EIO, "cannot resolve database '%s': %s",
		    path, strerror(errno));
	rc = check_side(db, *real, "-wal");
	if (rc == PGN_OK)
		rc = check_side(db, *real, "-shm");
	return rc;
}

pgn_status
pgn_sqlite_open(pgn_db *db, const char *path, unsigned flags)
{
	char *real = NULL;
	pgn_status rc;
	int r;

	db->be = &lite;
	db->engine = calloc(1, sizeof(struct lite_conn));
	if (db->engine == NULL)
		return pgn_fail(db, PGN_ENOMEM, "out of memory");
	rc = prepare_files(db, path, flags, &real);
	if (rc != PGN_OK) {
		free(real);
		return rc;
	}
	/* NOFOLLOW: a link swapped in since the check is refused too. */
	r = sqlite3_open_v2(real, &lc(db)->sql,
	    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
	    NULL);
	free(real);
	if (r != SQLITE_OK)
		return fail_sql(db, r, "opening");
	/*
	 * Keep -wal and -shm when the last connection closes, and do not
	 * checkpoint there (see lite_close): a hook run creates, deletes
	 * and syncs no file (docs/decisions/0021-wal-lifecycle.md).
	 */
	r = 1;
	(void)sqlite3_file_control(lc(db)->sql, "main",
	    SQLITE_FCNTL_PERSIST_WAL, &r);
	(void)sqlite3_db_config(lc(db)->sql, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
	    1, NULL);
	sqlite3_extended_result_codes(lc(db)->sql, 0);
	sqlite3_limit(lc(db)->sql, SQLITE_LIMIT_LENGTH, PGN_MAX_SQL_LENGTH);
	sqlite3_busy_handler(lc(db)->sql, on_busy, db);
	rc = migrate(db);
	if (rc != PGN_OK)
		return rc;
	/* PRAGMA foreign_keys=ON without parsing one (decision 0145). */
	r = sqlite3_db_config(lc(db)->sql, SQLITE_DBCONFIG_ENABLE_FKEY, 1,
	    NULL);
	if (r != SQLITE_OK)
		return fail_sql(db, r, "setting pragmas");
	return exec(db,
	    "PRAGMA synchronous=NORMAL; "
	    "PRAGMA journal_size_limit=" PGN_STR(PGN_WAL_LIMIT),
	    "setting pragmas");
}

#if defined(__SANITIZE_ADDRESS__)
#define PGN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PGN_ASAN 1
#endif
#endif

#if !defined(PGN_ASAN)
static int
mem_init(void *arg)
{
	(void)arg;
	return SQLITE_OK;
}

static void
mem_shutdown(void *arg)
{
	(void)arg;
}

/* mem.c, decision 0145: no locks, so for one thread only. */
static const sqlite3_mem_methods small_blocks = {pgn_mem_malloc, pgn_mem_free,
    pgn_mem_realloc, pgn_mem_size, pgn_mem_roundup, mem_init, mem_shutdown,
    NULL};
#endif

void
pgn_single_threaded(void)
{
	/* SQLITE_MISUSE once initialised: then the defaults simply stay. */
	(void)sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
#if !defined(PGN_ASAN)
	/* Under AddressSanitizer SQLite's blocks stay malloc's, checked. */
	(void)sqlite3_config(SQLITE_CONFIG_MALLOC, &small_blocks);
#endif
}

static void
lite_close(pgn_db *db)
{
	struct lite_conn *c = lc(db);
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < PGN_STMT_CACHE; i++)
		sqlite3_finalize(LITE(&c->stmts[i]));
	/*
	 * A WAL past the bound is checkpointed and cut to zero bytes by the
	 * last connection to close (journal_size_limit), as SQLite does by
	 * default; a smaller one is left for the next writer.
	 */
	if (c->sql != NULL && wal_bytes(db) > PGN_WAL_CLOSE_CKPT)
		(void)sqlite3_db_config(c->sql,
		    SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	sqlite3_close(c->sql);
	free(c);
	db->engine = NULL;
}

struct sqlite3 *
pgn_sqlite_conn(pgn_db *db)
{
	return db != NULL && db->be == &lite && db->engine != NULL ?
	    lc(db)->sql :
	    NULL;
}

static pgn_status
lite_check_file(pgn_db *db)
{
	int moved = 0, rc;

	/* SQLite compares the open file's inode with a stat of its path. */
	rc = sqlite3_file_control(lc(db)->sql, "main", SQLITE_FCNTL_HAS_MOVED,
	    &moved);
	if (rc != SQLITE_OK)
		return fail_sql(db, rc, "checking the database file");
	if (moved)
		return pgn_fail(db, PGN_EIO,
		    "database '%s' was replaced or removed since it was opened",
		    db->path);
	return PGN_OK;
}

/* ---- what doctor reports of the file (pgn_db_health) -------------- */

static pgn_status
lite_health(pgn_db *db, struct pgn_health *h)
{
	pgn_stmt *st = NULL;
	pgn_status rc;

	rc = lite_user_version(db, &h->schema_version);
	if (rc == PGN_OK)
		rc = lite_prepare(db, "PRAGMA integrity_check(1)", &st);
	if (rc == PGN_OK)
		rc = lite_step(db, st, "checking integrity");
	if (rc == PGN_OK) {
		h->integrity = pgn_col_text(st, 0);
		if (h->integrity == NULL)
			rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
	}
	if (st != NULL)
		lite_finish(db, st);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, "PRAGMA page_size", &h->page_size,
		    "reading the database size", PGN_NONE);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, "PRAGMA page_count", &h->pages,
		    "reading the database size", PGN_NONE);
	if (rc == PGN_OK)
		rc = pgn_select_i64(db, "PRAGMA freelist_count", &h->free_pages,
		    "reading the database size", PGN_NONE);
	return rc;
}

/* ---- pgn_wait's wake-up: inotify on the WAL ----------------------- */

struct pgn_waker {
	int fd;  /* -1: no notification, the waiter polls */
	int wal; /* watch of the -wal file, -1 while there is none */
	char *wal_path;
};

static void
waker_watch_wal(struct pgn_waker *w)
{
#if defined(__linux__)
	if (w->fd >= 0 && w->wal < 0 && w->wal_path != NULL)
		w->wal = inotify_add_watch(w->fd, w->wal_path,
		    IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF);
#else
	(void)w;
#endif
}

static struct pgn_waker *
lite_wait_open(pgn_db *db, const char *extra)
{
	struct pgn_waker *w;
	struct pgn_buf b;
	char *dir;

	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->fd = -1;
	w->wal = -1;
	pgn_buf_init(&b, PGN_MAX_PATH + 8);
	pgn_buf_adds(&b, db->path);
	pgn_buf_adds(&b, "-wal");
	w->wal_path = pgn_buf_take(&b, NULL);
	pgn_buf_release(&b);
#if defined(__linux__)
	dir = pgn_path_dir(db->path);
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	/* The database replaced or removed: wake up to see it at once. */
	if (w->fd >= 0 && dir != NULL &&
	    inotify_add_watch(w->fd, dir,
	        IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
	            IN_ONLYDIR) < 0) {
		close(w->fd);
		w->fd = -1;
	}
	free(dir);
	/* The caller's directory: a failed watch leaves the poll for it. */
	if (w->fd >= 0 && extra != NULL)
		(void)inotify_add_watch(w->fd, extra,
		    IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE |
		        IN_ONLYDIR);
#else
	(void)dir;
	(void)extra;
#endif
	waker_watch_wal(w);
	return w;
}

static void
lite_wait_close(pgn_db *db, struct pgn_waker *w)
{
	(void)db;
	if (w == NULL)
		return;
	if (w->fd >= 0)
		close(w->fd);
	free(w->wal_path);
	free(w);
}

static int
lite_wait_fd(struct pgn_waker *w)
{
	return w != NULL ? w->fd : -1;
}

static void
waker_drain(struct pgn_waker *w)
{
#if defined(__linux__)
	char buf[4096]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	size_t off;

	for (;;) {
		n = read(w->fd, buf, sizeof(buf));
		if (n <= 0)
			return;
		for (off = 0; off + sizeof(*ev) <= (size_t)n;
		     off += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			if (ev->wd == w->wal && (ev->mask & IN_IGNORED) != 0)
				w->wal = -1;
		}
	}
#else
	(void)w;
#endif
}

/* Up to 'ms', until the WAL (or the directory) changes. */
static int
lite_wait_sleep(pgn_db *db, struct pgn_waker *w, int64_t ms)
{
#if defined(__linux__)
	struct pollfd p;
	int r;

	(void)db;
	if (w == NULL)
		return 0;
	waker_watch_wal(w);
	if (w->fd >= 0 && w->wal >= 0) {
		p.fd = w->fd;
		p.events = POLLIN;
		p.revents = 0;
		r = poll(&p, 1, (int)ms);
		if (r < 0 && errno == EINTR)
			return -1;
		if (r > 0)
			waker_drain(w);
	}
#else
	(void)db;
	(void)w;
	(void)ms;
#endif
	return 0;
}

static const struct pgn_backend lite = {
    .name = "sqlite",
    .dialect = PGN_DIALECT_SQLITE,
    .prepare = lite_prepare,
    .finish = lite_finish,
    .reset = lite_reset,
    .nparams = lite_nparams,
    .bind = lite_bind,
    .step = lite_step,
    .step_write = lite_step_write,
    .col_i64 = lite_col_i64,
    .col_text = lite_col_text,
    .col_blob = lite_col_blob,
    .changes = lite_changes,
    .inserted_id = lite_inserted_id,
    .tx = lite_tx,
    .read = lite_read,
    .user_version = lite_user_version,
    .check_file = lite_check_file,
    .health = lite_health,
    .wait_open = lite_wait_open,
    .wait_sleep = lite_wait_sleep,
    .wait_close = lite_wait_close,
    .wait_fd = lite_wait_fd,
    .close = lite_close,
};
