/*
 * Fuzz the quiet stamp's readers (hook/quiet.c, decisions 0085, 0230):
 * a hook run reads the WAL index beside the database (-shm) and its
 * session's slot of $PIGEON_HOME/quiet, both files that any process of
 * the user (or a crash) may have left in any state. The input is the
 * -shm's first bytes (its first byte says how many, at most 136: both
 * header copies and the checkpoint's) then the stamp file. On any bytes:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - a snapshot is taken only from an index whose two copies are equal;
 *   - a prompt's hit names an agent, a string inside its field, and
 *     no reminder due at the time asked;
 *   - what pgn_quiet_record writes for a snapshot is what the next
 *     look at the same snapshot finds (a hit, the same agent), and a
 *     snapshot of other bytes never hits it.
 * Seeds (fuzz/corpus/fuzz_quiet): an index as SQLite 3.40 leaves it,
 * with and without a slot the writer made.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "pgn_int.h"

#define SHM_MAX 136

static char dir[64], db[96], wal[96], shm[96], quiet[96], home[80];

static void
put(const char *path, const void *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	check(fd >= 0);
	check(n == 0 || write(fd, p, n) == (ssize_t)n);
	close(fd);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	unsigned char h[100];

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/fuzz_quiet.XXXXXX");
	check(mkdtemp(dir) != NULL);
	snprintf(db, sizeof(db), "%s/pigeon.db", dir);
	snprintf(wal, sizeof(wal), "%s/pigeon.db-wal", dir);
	snprintf(shm, sizeof(shm), "%s/pigeon.db-shm", dir);
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(quiet, sizeof(quiet), "%s/home/quiet", dir);
	check(mkdir(home, 0700) == 0);
	/* A database header in WAL mode, and a WAL header: its magic. */
	memset(h, 0, sizeof(h));
	memcpy(h, "SQLite format 3", 16);
	h[18] = 2;
	h[19] = 2;
	put(db, h, sizeof(h));
	memset(h, 0, sizeof(h));
	memcpy(h, "\x37\x7f\x06\x82", 4);
	put(wal, h, 32);
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_quiet_snap s, t;
	struct pgn_quiet_facts f, got;
	unsigned char idx[SHM_MAX];
	size_t n, rest;
	int64_t now = 1000000;
	int ok;

	if (size == 0)
		return 0;
	n = data[0] % (SHM_MAX + 1);
	if (n > size - 1)
		n = size - 1;
	put(shm, data + 1, n);
	rest = size - 1 - n;
	if (rest > (size_t)PGN_QUIET_SLOTS * PGN_QUIET_SLOT_SIZE)
		rest = (size_t)PGN_QUIET_SLOTS * PGN_QUIET_SLOT_SIZE;
	put(quiet, data + 1 + n, rest);
	ok = pgn_quiet_snapshot(db, &s);
	if (ok)
		check(n >= 96 && memcmp(data + 1, data + 1 + 48, 48) == 0);
	if (!ok)
		return 0;
	(void)pgn_quiet_hit(home, "claude:s1", &s, now);
	if (pgn_quiet_hit_prompt(home, "claude:s1", &s, now, &got)) {
		check(memchr(got.agent, '\0', sizeof(got.agent)) != NULL);
		check(got.agent[0] != '\0');
		check(got.remind_ms < 0 || now < got.remind_ms);
		check(now >= got.seen_ms);
	}
	/* What is written is what is read. */
	memset(&f, 0, sizeof(f));
	f.seen_ms = now;
	f.remind_ms = -1;
	f.prompt = 1;
	f.scope_hash = 42;
	memcpy(f.agent, "bob", 4);
	pgn_quiet_record(home, "claude:s1", &s, &f, 1);
	check(pgn_quiet_hit(home, "claude:s1", &s, now));
	check(pgn_quiet_hit_prompt(home, "claude:s1", &s, now, &got));
	check(strcmp(got.agent, "bob") == 0 && got.scope_hash == 42);
	/* Another index: no hit (a frame more, the copies kept equal). */
	memcpy(idx, data + 1, n);
	idx[16]++;
	idx[48 + 16]++;
	put(shm, idx, n);
	if (pgn_quiet_snapshot(db, &t))
		check(!pgn_quiet_hit(home, "claude:s1", &t, now));
	return 0;
}
