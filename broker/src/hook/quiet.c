/*
 * The quiet stamp: a no-mail after-tool run answered without opening
 * SQLite (docs/decisions/0085-quiet-stamp.md).
 *
 * A full run that finds a session quiet (bound, nothing queued, seen
 * lately) records, in one slot of $PIGEON_HOME/quiet, what the database
 * files looked like BEFORE its read: identity, size and times of the
 * database and its WAL (not the change time, see file_id), the WAL's
 * 32-byte header, and the WAL index's header (in -shm). Every commit in
 * WAL mode appends frames to the WAL's current generation (the index's
 * frame count and running checksum change) or starts a new one (its
 * salts change); the WAL file's size and time alone do not tell, since
 * a restarted WAL is written over in place and a file's time may keep
 * its clock tick (decision 0230). So while all of that is unchanged no
 * commit has happened since a moment before a read that found nothing,
 * and the answer is still "nothing". Anything else — no slot, another session's
 * slot, a torn or foreign slot, a missing or changed file, a last-seen
 * time grown old — means a full run. The stamp can only ever save work;
 * it never decides that mail exists or not on its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_int.h"
#include "pigeon/hook.h"
#include "claim.h"

#define QUIET_MAGIC  0x32545150u /* "PQT2": with the WAL index (0230) */
#define WAL_MAGIC_LE 0x377f0682u
#define WAL_MAGIC_BE 0x377f0683u

/*
 * The WAL index's header (SQLite's file format, "WAL-Index Format"):
 * two copies of 48 bytes at the start of -shm, in the machine's byte
 * order. Of a copy: the version (bytes 0-3), the change counter (8-11),
 * whether it is initialized (12), the frame count (16-19), the running
 * checksum of the last frame (24-31), the salts (32-39).
 */
#define WALIDX_COPY    48
#define WALIDX_VERSION 3007000u
#define WALIDX_FROM    8 /* the snapshot keeps bytes 8 to 39 */
#define WALIDX_CHANGE  8 /* the change counter: zeroed, see walidx */
#define WALIDX_INIT    12
#define WALIDX_SALTS   32

/* One slot as stored: native layout, this machine's files only. */
struct slot {
	uint32_t magic;
	uint32_t keylen;
	char key[PGN_MAX_SESSION_KEY];
	struct pgn_quiet_snap snap;
	int64_t seen_ms;
	int64_t remind_ms;   /* -1: none */
	uint64_t scope_hash; /* of the scope root */
	uint32_t prompt;     /* a prompt may answer from it (0230) */
	char agent[PGN_MAX_NAME + 1];
	uint64_t sum; /* FNV-1a of everything before it: a torn slot misses */
};

_Static_assert(sizeof(struct slot) <= PGN_QUIET_SLOT_SIZE,
    "a quiet slot fits its place in the file");

uint64_t
pgn_quiet_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ULL;

	while (n-- > 0) {
		h ^= *s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static void
file_id(const struct stat *sb, struct pgn_quiet_file *f)
{
	f->dev = (uint64_t)sb->st_dev;
	f->ino = (uint64_t)sb->st_ino;
	f->size = (uint64_t)sb->st_size;
	f->mtime_ns =
	    (int64_t)sb->st_mtim.tv_sec * 1000000000 + sb->st_mtim.tv_nsec;
	/*
	 * Not the change time: SQLite run as root fchowns the WAL on every
	 * open, which changes it without a write.
	 */
}

/*
 * The WAL index's header, as SQLite's readers take it: both copies
 * equal (a writer puts the second, then the first), initialized, of the
 * version we know, and naming a WAL generation (salts not zero). The
 * change counter is left out: the first connection to open rebuilds
 * the index and restarts it from 0, which says nothing of the data;
 * frames and salts do.
 */
static int
walidx(const char *db_path, size_t len, struct pgn_quiet_snap *s)
{
	unsigned char h[2 * WALIDX_COPY];
	char shm[PGN_MAX_PATH + 8];
	static const unsigned char zero[8];
	struct stat sb;
	uint32_t version;
	ssize_t n;
	int fd;

	memcpy(shm, db_path, len);
	memcpy(shm + len, "-shm", 5);
	fd = open(shm, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	n = -1;
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode))
		n = pread(fd, h, sizeof(h), 0);
	close(fd);
	if (n != (ssize_t)sizeof(h) ||
	    memcmp(h, h + WALIDX_COPY, WALIDX_COPY) != 0)
		return 0;
	memcpy(&version, h, sizeof(version));
	if (version != WALIDX_VERSION || h[WALIDX_INIT] != 1 ||
	    memcmp(h + WALIDX_SALTS, zero, sizeof(zero)) == 0)
		return 0;
	memset(h + WALIDX_CHANGE, 0, 4);
	memcpy(s->walidx, h + WALIDX_FROM, sizeof(s->walidx));
	return 1;
}

/* A database in WAL mode: its header's read and write versions are 2. */
static int
in_wal_mode(const char *db_path, struct stat *sb)
{
	unsigned char h[20];
	int fd, ok;

	fd = open(db_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ok = fstat(fd, sb) == 0 && S_ISREG(sb->st_mode) &&
	    pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    memcmp(h, "SQLite format 3", 16) == 0 && h[18] == 2 && h[19] == 2;
	close(fd);
	return ok;
}

int
pgn_quiet_snapshot(const char *db_path, struct pgn_quiet_snap *s)
{
	char wal[PGN_MAX_PATH + 8];
	struct stat sb;
	uint32_t magic;
	size_t len;
	ssize_t n;
	int fd, ok = 0;

	memset(s, 0, sizeof(*s));
	/* PostgreSQL has no files here: never a snapshot (decision 0230). */
	if (db_path == NULL || pgn_db_is_postgres(db_path) ||
	    (len = strlen(db_path)) > PGN_MAX_PATH)
		return 0;
	memcpy(wal, db_path, len);
	memcpy(wal + len, "-wal", 5);
	/* The WAL first: a commit between the two looks changes it. */
	fd = open(wal, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0; /* no WAL: the next open makes one */
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		goto out;
	file_id(&sb, &s->wal);
	if (sb.st_size > 0) {
		n = pread(fd, s->walhdr, sizeof(s->walhdr), 0);
		if (n != (ssize_t)sizeof(s->walhdr))
			goto out;
		magic = (uint32_t)s->walhdr[0] << 24 |
		    (uint32_t)s->walhdr[1] << 16 | (uint32_t)s->walhdr[2] << 8 |
		    s->walhdr[3];
		if (magic != WAL_MAGIC_LE && magic != WAL_MAGIC_BE)
			goto out; /* not a WAL SQLite wrote: no claim */
		if (!walidx(db_path, len, s))
			goto out;
	}
	/*
	 * An empty WAL (emptied by a checkpoint) grows with the next
	 * commit: its index, which a checkpoint or a rebuild rewrites with
	 * no commit, is not kept then. Either way only a database in WAL
	 * mode writes there: one in rollback mode writes in place.
	 */
	if (!in_wal_mode(db_path, &sb))
		goto out;
	file_id(&sb, &s->db);
	ok = 1;
out:
	close(fd);
	if (!ok)
		memset(s, 0, sizeof(*s));
	return ok;
}

static size_t
slot_of(const char *session, size_t len)
{
	return (size_t)(pgn_quiet_hash(session, len) % PGN_QUIET_SLOTS);
}

/*
 * Open the stamp file, ours and private (decision 0042), or -1; 'write'
 * 2 makes it when missing.
 */
static int
open_stamps(const char *home, int write)
{
	char path[PGN_MAX_PATH + 8];
	struct stat sb;
	int fd;

	if (home == NULL || strlen(home) > PGN_MAX_PATH)
		return -1;
	memcpy(path, home, strlen(home));
	memcpy(path + strlen(home), "/quiet", 7);
	fd = open(path,
	    (write == 2   ? O_WRONLY | O_CREAT :
	            write ? O_WRONLY :
	                    O_RDONLY) |
	        O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
	    0600);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || (sb.st_mode & 077) != 0 ||
	    sb.st_size > (off_t)PGN_QUIET_SLOTS * PGN_QUIET_SLOT_SIZE) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The slot of 'session' if it holds a stamp of snapshot 's', or 0. */
static int
read_slot(const char *home, const char *session, const struct pgn_quiet_snap *s,
    struct slot *sl)
{
	size_t len;
	ssize_t n;
	int fd;

	if (session == NULL || s->wal.ino == 0)
		return 0;
	len = strlen(session);
	if (len == 0 || len > PGN_MAX_SESSION_KEY)
		return 0;
	fd = open_stamps(home, 0);
	if (fd < 0)
		return 0;
	n = pread(fd, sl, sizeof(*sl),
	    (off_t)(slot_of(session, len) * PGN_QUIET_SLOT_SIZE));
	close(fd);
	if (n != (ssize_t)sizeof(*sl) || sl->magic != QUIET_MAGIC ||
	    sl->sum != pgn_quiet_hash(sl, offsetof(struct slot, sum)))
		return 0;
	if (sl->keylen != len || memcmp(sl->key, session, len) != 0)
		return 0;
	if (memcmp(&sl->snap, s, sizeof(*s)) != 0)
		return 0;
	return 1;
}

int
pgn_quiet_hit(const char *home, const char *session,
    const struct pgn_quiet_snap *s, int64_t now_ms)
{
	struct slot sl;

	if (!read_slot(home, session, s, &sl))
		return 0;
	/* The full run writes last-seen times once they are this old. */
	return now_ms >= sl.seen_ms &&
	    now_ms - sl.seen_ms < PGN_SEEN_REFRESH_MS;
}

int
pgn_quiet_hit_prompt(const char *home, const char *session,
    const struct pgn_quiet_snap *s, int64_t now_ms, struct pgn_quiet_facts *f)
{
	struct slot sl;

	memset(f, 0, sizeof(*f));
	if (!read_slot(home, session, s, &sl) || sl.prompt != 1 ||
	    !(now_ms >= sl.seen_ms &&
	        now_ms - sl.seen_ms < PGN_SEEN_REFRESH_MS))
		return 0;
	/* The peek's reminder is due once remind_ms < now: never here. */
	if (sl.remind_ms >= 0 && now_ms >= sl.remind_ms)
		return 0;
	if (memchr(sl.agent, '\0', sizeof(sl.agent)) == NULL ||
	    sl.agent[0] == '\0')
		return 0;
	f->seen_ms = sl.seen_ms;
	f->remind_ms = sl.remind_ms;
	f->prompt = 1;
	f->scope_hash = sl.scope_hash;
	memcpy(f->agent, sl.agent, sizeof(f->agent));
	return 1;
}

void
pgn_quiet_record(const char *home, const char *session,
    const struct pgn_quiet_snap *s, const struct pgn_quiet_facts *f, int create)
{
	struct slot sl;
	size_t len;
	int fd;

	if (session == NULL || s->wal.ino == 0)
		return;
	len = strlen(session);
	if (len == 0 || len > PGN_MAX_SESSION_KEY)
		return;
	memset(&sl, 0, sizeof(sl));
	sl.magic = QUIET_MAGIC;
	sl.keylen = (uint32_t)len;
	memcpy(sl.key, session, len);
	sl.snap = *s;
	sl.seen_ms = f->seen_ms;
	sl.remind_ms = f->remind_ms;
	sl.scope_hash = f->scope_hash;
	sl.prompt = f->prompt ? 1 : 0;
	memcpy(sl.agent, f->agent, sizeof(sl.agent));
	sl.agent[sizeof(sl.agent) - 1] = '\0';
	sl.sum = pgn_quiet_hash(&sl, offsetof(struct slot, sum));
	fd = open_stamps(home, create ? 2 : 1);
	if (fd < 0)
		return;
	/* Best effort, never synced: a lost stamp costs one full run. */
	if (pwrite(fd, &sl, sizeof(sl),
	        (off_t)(slot_of(session, len) * PGN_QUIET_SLOT_SIZE)) < 0) {
		/* nothing to undo */
	}
	close(fd);
}
