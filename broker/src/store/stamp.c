/*
 * The lease stamp's bytes and file (stamp.h, decision 0160): built from
 * the live leases by lease.c, written whole and renamed into place,
 * parsed by the before-tool hook's reader. Nothing here opens the
 * database.
 */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE (glibc 2.28) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pgn_int.h"
#include "stamp.h"

uint64_t
pgn_stamp_hash(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ULL;

	while (n-- > 0) {
		h ^= *s++;
		h *= 1099511628211ULL;
	}
	return h;
}

size_t
pgn_stamp_slot(const char *scope)
{
	return (size_t)(pgn_stamp_hash(scope, strlen(scope)) %
	    PGN_LEASE_STAMP_SLOTS);
}

int
pgn_stamp_path(const char *db_path, const char *suffix, char *buf, size_t len)
{
	size_t n = strlen(db_path), k = strlen(suffix);

	if (n > PGN_MAX_PATH || n + k + 1 > len)
		return 0;
	memcpy(buf, db_path, n);
	memcpy(buf + n, suffix, k + 1);
	return 1;
}

/* ---- reading -------------------------------------------------------- */

static uint32_t
get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int
pgn_stamp_parse(const void *buf, size_t len, struct pgn_stamp_view *v)
{
	const unsigned char *b = buf;
	size_t off, i, k, elen;

	memset(v, 0, sizeof(*v));
	if (b == NULL || len < PGN_STAMP_HEAD + 8 || len > PGN_LEASE_STAMP_MAX)
		return 0;
	if (get32(b) != PGN_STAMP_MAGIC ||
	    get64(b + len - 8) != pgn_stamp_hash(b, len - 8))
		return 0;
	v->flags = get32(b + 4);
	v->dev = get64(b + 8);
	v->ino = get64(b + 16);
	for (i = 0; i < PGN_LEASE_STAMP_SLOTS; i++)
		v->slot[i] = (int64_t)get64(b + 24 + 8 * i);
	off = 24 + 8 * PGN_LEASE_STAMP_SLOTS;
	v->nentries = get32(b + off);
	elen = get32(b + off + 4);
	off += 8;
	if (elen != len - 8 - off)
		return 0;
	v->entries = b + off;
	v->entries_len = elen;
	/* every entry inside the bytes, its form one string */
	for (i = 0, off = 0; i < v->nentries; i++) {
		if (elen - off < PGN_STAMP_ENTRY_HEAD)
			return 0;
		k = (size_t)v->entries[off + 16] |
		    (size_t)v->entries[off + 17] << 8;
		off += PGN_STAMP_ENTRY_HEAD;
		if (k == 0 || k > PGN_LEASE_NORM_SIZE || k > elen - off ||
		    v->entries[off + k - 1] != '\0' ||
		    memchr(v->entries + off, '\0', k - 1) != NULL)
			return 0;
		off += k;
	}
	return off == elen;
}

int
pgn_stamp_next(const struct pgn_stamp_view *v, size_t *off,
    struct pgn_stamp_entry *e)
{
	const unsigned char *p;
	size_t k;

	if (*off + PGN_STAMP_ENTRY_HEAD > v->entries_len)
		return 0;
	p = v->entries + *off;
	e->scope = get64(p);
	e->expires_ms = (int64_t)get64(p + 8);
	k = (size_t)p[16] | (size_t)p[17] << 8;
	e->norm = (const char *)p + PGN_STAMP_ENTRY_HEAD;
	*off += PGN_STAMP_ENTRY_HEAD + k;
	return 1;
}

int
pgn_stamp_may_match(const char *norm, const char *path)
{
	const char *p = norm, *q = path, *e;
	size_t n, i;

	for (;;) {
		e = strchr(p, '/');
		if (e == NULL || e == p)
			return 1; /* the last component: the match decides */
		n = (size_t)(e - p);
		for (i = 0; i < n; i++)
			if (p[i] == '*' || p[i] == '?' || p[i] == '[' ||
			    p[i] == '\\')
				return 1;
		/* a literal component stands for one equal component */
		if (strncmp(q, p, n) != 0 || (q[n] != '/' && q[n] != '\0'))
			return 0;
		if (q[n] == '\0')
			return 1;
		p = e + 1;
		q += n + 1;
	}
}

/* ---- building ------------------------------------------------------- */

void
pgn_stamp_set_release(struct pgn_stamp_set *s)
{
	if (s == NULL)
		return;
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int
push(struct pgn_stamp_set *s, const struct pgn_stamp_item *it)
{
	if (!pgn_vec_grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v)))
		return 0;
	s->v[s->n++] = *it;
	return 1;
}

/*
 * One item more, built in place: only its string's bytes and the
 * terminator written (the stamp stores the string, not the array), the
 * scope's hash computed once for its slot and its entry (decision 0202).
 */
int
pgn_stamp_set_add(struct pgn_stamp_set *s, const char *scope, const char *norm,
    int shared, int64_t expires_ms)
{
	struct pgn_stamp_item *it;
	uint64_t h = pgn_stamp_hash(scope, strlen(scope));
	size_t k = (size_t)(h % PGN_LEASE_STAMP_SLOTS), n = strlen(norm);

	if (expires_ms > s->slot[k])
		s->slot[k] = expires_ms;
	if (shared)
		return 1; /* never blocks a write */
	if (!pgn_vec_grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v)))
		return 0;
	it = &s->v[s->n++];
	if (n >= sizeof(it->norm))
		n = sizeof(it->norm) - 1; /* cannot be: checked when taken */
	it->scope = h;
	it->expires_ms = expires_ms;
	memcpy(it->norm, norm, n);
	it->norm[n] = '\0';
	return 1;
}

int
pgn_stamp_set_union(struct pgn_stamp_set *a, const struct pgn_stamp_set *b,
    int *grew)
{
	size_t i, j;

	*grew = 0;
	for (i = 0; i < PGN_LEASE_STAMP_SLOTS; i++)
		if (b->slot[i] > a->slot[i]) {
			a->slot[i] = b->slot[i];
			*grew = 1;
		}
	for (i = 0; i < b->n; i++) {
		for (j = 0; j < a->n; j++)
			if (a->v[j].scope == b->v[i].scope &&
			    a->v[j].expires_ms >= b->v[i].expires_ms &&
			    strcmp(a->v[j].norm, b->v[i].norm) == 0)
				break;
		if (j < a->n)
			continue;
		if (!push(a, &b->v[i]))
			return 0;
		*grew = 1;
	}
	return 1;
}

static void
put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void
put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* 's' as bytes into 'b' (PGN_LEASE_STAMP_MAX of them); its length. */
static size_t
encode(const struct pgn_stamp_set *s, uint64_t dev, uint64_t ino,
    unsigned char *b)
{
	size_t off = PGN_STAMP_HEAD, i, k;
	uint32_t flags = 0, n = 0;

	for (i = 0; i < s->n; i++) {
		k = strlen(s->v[i].norm) + 1;
		if (off + PGN_STAMP_ENTRY_HEAD + k + 8 > PGN_LEASE_STAMP_MAX) {
			flags |= PGN_STAMP_OVERFLOW;
			off = PGN_STAMP_HEAD; /* none, then: ask */
			n = 0;
			break;
		}
		put64(b + off, s->v[i].scope);
		put64(b + off + 8, (uint64_t)s->v[i].expires_ms);
		b[off + 16] = (unsigned char)(k & 0xff);
		b[off + 17] = (unsigned char)(k >> 8);
		memcpy(b + off + PGN_STAMP_ENTRY_HEAD, s->v[i].norm, k);
		off += PGN_STAMP_ENTRY_HEAD + k;
		n++;
	}
	put32(b, PGN_STAMP_MAGIC);
	put32(b + 4, flags);
	put64(b + 8, dev);
	put64(b + 16, ino);
	for (i = 0; i < PGN_LEASE_STAMP_SLOTS; i++)
		put64(b + 24 + 8 * i, (uint64_t)s->slot[i]);
	put32(b + 24 + 8 * PGN_LEASE_STAMP_SLOTS, n);
	put32(b + 28 + 8 * PGN_LEASE_STAMP_SLOTS,
	    (uint32_t)(off - PGN_STAMP_HEAD));
	put64(b + off, pgn_stamp_hash(b, off));
	return off + 8;
}

/*
 * 'tmp' put in the place of 'path', atomically: a reader opening 'path'
 * finds the old file or the new one. Where 'path' is a regular file the
 * two are exchanged and 'tmp' (the old stamp by then) removed: ext4
 * writes out the data of a file renamed over another (its
 * auto_da_alloc), measured at 1.5 to 2.3 ms a rename here, but not of
 * files exchanged (33 to 85 us with the unlink; decision 0252). Where
 * there is none, or the system cannot exchange, a plain rename. A crash
 * may then leave a stamp whose bytes never reached the disk: it fails
 * its size or checksum, which means ask, as any torn stamp does.
 */
static int
replace(const char *tmp, const char *path)
{
#ifdef RENAME_EXCHANGE
	struct stat sb;

	/* only a regular file: rename's own refusals stay as they were */
	if (lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
		(void)unlink(tmp);
		return 0;
	}
#endif
	return rename(tmp, path) != 0 ? errno : 0;
}

/*
 * The stamp 'b' ('len' bytes) written over 'path' in place, where that
 * is a regular file of ours, mode 0600, with no other name: one pwrite
 * from its start, then its length cut to 'len'. A reader in between
 * finds a size or a checksum that fails, which means ask, as with any
 * torn stamp (0160); so does one a crash or a full disk leaves half
 * written. Only for a stamp no wider than the one it overwrites: the
 * write is not synced, and a power loss may keep the old bytes whole
 * beside a commit that reached the disk; an old stamp wider than the
 * database only asks, a narrower one would let a leased path be
 * written (decision 0260). -1 when 'path' is not such a file (the
 * caller puts a new one in its place), else 0 or the errno.
 */
static int
overwrite(const char *path, const unsigned char *b, size_t len)
{
	struct stat sb;
	ssize_t w;
	int fd, e = 0;

	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || (sb.st_mode & 07777) != 0600 ||
	    sb.st_nlink != 1) {
		close(fd);
		return -1;
	}
	w = pwrite(fd, b, len, 0);
	if (w != (ssize_t)len)
		e = w < 0 ? errno : EIO;
	else if (ftruncate(fd, (off_t)len) != 0)
		e = errno;
	if (close(fd) != 0 && e == 0)
		e = errno;
	return e;
}

/* How put_file puts the stamp. */
enum put_how {
	PUT_REPLACE,  /* a new file, exchanged for or renamed over the old */
	PUT_NARROWER, /* no wider than the old: in place where it may be */
	PUT_MAKE      /* linked, only if there is none (EEXIST if there is) */
};

/*
 * 's' into the file 'tmp', then put over 'path' or linked to it, as
 * 'how' says; PUT_NARROWER writes over the stamp in place where it is
 * one to write so, and else replaces it.
 */
static int
put_file(const char *db_path, const char *tmp, const char *path,
    const struct pgn_stamp_set *s, enum put_how how)
{
	unsigned char *b = NULL;
	struct stat sb;
	size_t len;
	ssize_t w;
	int fd = -1, e = 0;

	if (stat(db_path, &sb) != 0)
		return errno;
	b = malloc(PGN_LEASE_STAMP_MAX);
	if (b == NULL)
		return ENOMEM;
	len = encode(s, (uint64_t)sb.st_dev, (uint64_t)sb.st_ino, b);
	if (how == PUT_NARROWER) {
		e = overwrite(path, b, len);
		if (e >= 0)
			goto out;
		e = 0;
	}
	/* a leftover of a crash (or anything else by that name) goes */
	if (unlink(tmp) != 0 && errno != ENOENT) {
		e = errno;
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0) {
		e = errno;
		goto out;
	}
	w = write(fd, b, len);
	if (w != (ssize_t)len) {
		e = w < 0 ? errno : EIO;
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		e = errno;
		goto out;
	}
	fd = -1;
	if (how == PUT_MAKE)
		e = link(tmp, path) != 0 ? errno : 0;
	else
		e = replace(tmp, path);
out:
	if (fd >= 0)
		close(fd);
	if (e != 0 || how == PUT_MAKE)
		(void)unlink(tmp);
	free(b);
	return e;
}

int
pgn_stamp_write(const char *db_path, const struct pgn_stamp_set *s,
    int narrower)
{
	char path[PGN_MAX_PATH + sizeof(PGN_STAMP_SUFFIX)];
	char tmp[PGN_MAX_PATH + sizeof(PGN_STAMP_TMPSUFFIX)];

	if (!pgn_stamp_path(db_path, PGN_STAMP_SUFFIX, path, sizeof(path)) ||
	    !pgn_stamp_path(db_path, PGN_STAMP_TMPSUFFIX, tmp, sizeof(tmp)))
		return ENAMETOOLONG;
	return put_file(db_path, tmp, path, s,
	    narrower ? PUT_NARROWER : PUT_REPLACE);
}

int
pgn_stamp_make(const char *db_path, const struct pgn_stamp_set *s)
{
	char path[PGN_MAX_PATH + sizeof(PGN_STAMP_SUFFIX)];
	char tmp[PGN_MAX_PATH + sizeof(PGN_STAMP_SUFFIX) + 24];
	char suffix[sizeof(PGN_STAMP_SUFFIX) + 24];

	/* a name of this process's own: no writer waits for it */
	(void)snprintf(suffix, sizeof(suffix), "%s.%ld", PGN_STAMP_SUFFIX,
	    (long)getpid());
	if (!pgn_stamp_path(db_path, PGN_STAMP_SUFFIX, path, sizeof(path)) ||
	    !pgn_stamp_path(db_path, suffix, tmp, sizeof(tmp)))
		return ENAMETOOLONG;
	return put_file(db_path, tmp, path, s, PUT_MAKE);
}
