/*
 * The doorbell (docs/decisions/0175, 0176): one fixed frame written to
 * an idle session's messaging socket, which starts a turn whose prompt
 * hook then claims the mail. Everything about the session is checked
 * first, and nothing here waits longer than PGN_DOORBELL_CONNECT_MS:
 * the sessions file is this user's regular file, not a link, its pid
 * alive with the start time the file names (a recycled pid is another
 * process), its status idle; the socket is this user's socket in the
 * host's own socket directory (this user's, 0700), named for that pid,
 * and the process listening on it is that pid (SO_PEERCRED). The frame
 * names the session, so a session the host has since replaced drops it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"
#include "hosts_int.h"

static const char *const ring_names[] = {"rung", "busy", "gone", "refused",
    "failed"};

const char *
pgn_ring_name(pgn_ring r)
{
	return (unsigned)r < sizeof(ring_names) / sizeof(ring_names[0]) ?
	    ring_names[r] :
	    "?";
}

pgn_ring
pgn_ring_say(char why[PGN_DOORBELL_WHY], pgn_ring r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(why, PGN_DOORBELL_WHY, fmt, ap);
	va_end(ap);
	return r;
}

int
pgn_ring_id_ok(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > PGN_RING_ID_MAX || id[0] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		        (id[i] >= 'a' && id[i] <= 'z') ||
		        (id[i] >= 'A' && id[i] <= 'Z') || id[i] == '-' ||
		        id[i] == '_'))
			return 0;
	return 1;
}

/* A directory that is this user's and no one else's to write. */
static int
dir_mine(const struct stat *sb)
{
	return S_ISDIR(sb->st_mode) && sb->st_uid == geteuid() &&
	    (sb->st_mode & 022) == 0;
}

/* "<digits>.json": the pid the file is named for, else 0. */
static long
json_pid(const char *name)
{
	char *end;
	long pid;

	if (name[0] < '1' || name[0] > '9')
		return 0;
	errno = 0;
	pid = strtol(name, &end, 10);
	if (errno != 0 || pid <= 0 || pid > 1L << 30 ||
	    strcmp(end, ".json") != 0)
		return 0;
	return pid;
}

/* Read sessions file 'name' of directory 'dfd' (bounded, no links,
 * this user's regular file) into a fresh string. */
static char *
read_session_file(int dfd, const char *name)
{
	struct stat sb;
	char *text = NULL;
	ssize_t got;
	size_t len = 0;
	int fd;

	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || sb.st_size > PGN_DOORBELL_FILE_MAX)
		goto out;
	text = malloc((size_t)sb.st_size + 1);
	if (text == NULL)
		goto out;
	while (len < (size_t)sb.st_size) {
		got = read(fd, text + len, (size_t)sb.st_size - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	text[len] = '\0';
out:
	close(fd);
	return text;
}

/* Field 22 of /proc/PID/stat, the start time in clock ticks; 0: none. */
static int
proc_start(long pid, char out[32])
{
	char path[64], buf[1024], *p, *f;
	ssize_t n;
	int fd, i;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The command's name is in parentheses and may hold spaces. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return 0;
	p++;
	/* After ")" come fields 3, 4, ...: field 22 is the 20th. */
	for (i = 3; i <= 22; i++) {
		while (*p == ' ')
			p++;
		f = p;
		while (*p != ' ' && *p != '\0')
			p++;
		if (i == 22 && p > f && (size_t)(p - f) < 32) {
			memcpy(out, f, (size_t)(p - f));
			out[p - f] = '\0';
			return 1;
		}
		if (*p == '\0')
			return 0;
	}
	return 0;
}

int
pgn_doorbell_parse(const char *text, const char *id, long pid,
    struct pgn_doorbell_file *f)
{
	const cJSON *v;
	cJSON *j;
	int ok = 0;

	memset(f, 0, sizeof(*f));
	j = cJSON_Parse(text);
	if (j == NULL)
		return 0;
	v = cJSON_GetObjectItemCaseSensitive(j, "sessionId");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, id) != 0)
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(j, "pid");
	f->pid = cJSON_IsNumber(v) && v->valuedouble == (double)pid ? pid : 0;
	v = cJSON_GetObjectItemCaseSensitive(j, "procStart");
	if (cJSON_IsString(v) && strlen(v->valuestring) < sizeof(f->start))
		memcpy(f->start, v->valuestring, strlen(v->valuestring) + 1);
	v = cJSON_GetObjectItemCaseSensitive(j, "status");
	if (cJSON_IsString(v) && strlen(v->valuestring) < sizeof(f->status))
		memcpy(f->status, v->valuestring, strlen(v->valuestring) + 1);
	v = cJSON_GetObjectItemCaseSensitive(j, "messagingSocketPath");
	if (cJSON_IsString(v)) {
		if (strlen(v->valuestring) < sizeof(f->sock))
			memcpy(f->sock, v->valuestring,
			    strlen(v->valuestring) + 1);
		else
			f->sock_long = 1;
	}
	ok = 1;
out:
	cJSON_Delete(j);
	return ok;
}

/* The sessions directory of a transcript path, into 'out'. */
static int
sessions_dir(const struct pgn_doorbell *d, const char *transcript,
    char out[PGN_MAX_PATH])
{
	size_t n = strlen(transcript);
	int up;

	if (transcript[0] != '/' || n >= PGN_MAX_PATH)
		return 0;
	for (up = 0; up < d->transcript_up; up++) {
		while (n > 1 && transcript[n - 1] != '/')
			n--;
		while (n > 1 && transcript[n - 1] == '/')
			n--;
		if (n <= 1)
			return 0;
	}
	return snprintf(out, PGN_MAX_PATH, "%.*s/%s", (int)n, transcript,
	           d->sessions) < PGN_MAX_PATH;
}

/* Find session 'id' in directory 'dir' ('*f' filled): 1, else 0 with
 * 'why' said. */
static pgn_ring
find(const struct pgn_doorbell *d, const char *dir, const char *id,
    struct pgn_doorbell_file *f, char why[PGN_DOORBELL_WHY])
{
	struct dirent *e;
	struct stat sb;
	DIR *ds;
	char *text;
	long pid;
	int dfd, seen = 0, hit = 0;

	(void)d;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return pgn_ring_say(why, PGN_RING_GONE,
		    "no sessions directory %s: %s", dir, strerror(errno));
	if (fstat(dfd, &sb) != 0 || !dir_mine(&sb)) {
		close(dfd);
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "sessions directory %s is not this user's alone", dir);
	}
	ds = fdopendir(dfd);
	if (ds == NULL) {
		close(dfd);
		return pgn_ring_say(why, PGN_RING_GONE, "cannot list %s", dir);
	}
	while (!hit && (e = readdir(ds)) != NULL) {
		pid = json_pid(e->d_name);
		if (pid == 0)
			continue;
		if (++seen > PGN_DOORBELL_SCAN_MAX)
			break;
		text = read_session_file(dirfd(ds), e->d_name);
		/* Cheap first: the id must be in the text at all. */
		if (text != NULL && strstr(text, id) != NULL &&
		    pgn_doorbell_parse(text, id, pid, f))
			hit = 1;
		free(text);
	}
	closedir(ds);
	if (hit)
		return PGN_RING_RUNG;
	if (seen > PGN_DOORBELL_SCAN_MAX)
		return pgn_ring_say(why, PGN_RING_GONE,
		    "over %d session files in %s: not looked further",
		    PGN_DOORBELL_SCAN_MAX, dir);
	return pgn_ring_say(why, PGN_RING_GONE,
	    "no live session file for it in %s", dir);
}

/* The socket path: this user's socket, named "<pid>.sock", in the
 * host's socket directory, which is this user's alone. */
static pgn_ring
check_socket(const struct pgn_doorbell *d, const struct pgn_doorbell_file *f,
    char why[PGN_DOORBELL_WHY])
{
	char dir[sizeof(f->sock)], want[64], mine[64];
	const char *base, *dbase;
	struct stat sb;
	size_t n;

	if (f->sock_long || f->sock[0] != '/')
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "socket path is not an absolute path that fits");
	base = strrchr(f->sock, '/') + 1;
	(void)snprintf(want, sizeof(want), "%ld.sock", f->pid);
	if (strcmp(base, want) != 0)
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "socket '%s' is not named for pid %ld", f->sock, f->pid);
	n = (size_t)(base - 1 - f->sock);
	memcpy(dir, f->sock, n);
	dir[n] = '\0';
	dbase = strrchr(dir, '/');
	dbase = dbase != NULL ? dbase + 1 : dir;
	(void)snprintf(mine, sizeof(mine), "%s-%lu", d->socket_dir,
	    (unsigned long)geteuid());
	if (strcmp(dbase, d->socket_dir) != 0 && strcmp(dbase, mine) != 0)
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "socket '%s' is outside a %s directory", f->sock,
		    d->socket_dir);
	if (lstat(dir, &sb) != 0 || !dir_mine(&sb) || (sb.st_mode & 077) != 0)
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "socket directory '%s' is not this user's alone", dir);
	if (lstat(f->sock, &sb) != 0)
		return pgn_ring_say(why, PGN_RING_GONE, "socket '%s': %s",
		    f->sock, strerror(errno));
	if (!S_ISSOCK(sb.st_mode))
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "'%s' is not a socket", f->sock);
	if (sb.st_uid != geteuid())
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "socket '%s' belongs to another user (uid %lu)", f->sock,
		    (unsigned long)sb.st_uid);
	return PGN_RING_RUNG;
}

/* Connect within PGN_DOORBELL_CONNECT_MS; the listener must be 'pid'
 * of this user. The descriptor, else -1 with 'why' said. */
static int
connect_bounded(const struct pgn_doorbell_file *f, pgn_ring *r,
    char why[PGN_DOORBELL_WHY])
{
	struct sockaddr_un sa;
	struct pollfd p;
	struct ucred cred;
	socklen_t len;
	int fd, err = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, f->sock, strlen(f->sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*r = pgn_ring_say(why, PGN_RING_FAILED, "socket: %s",
		    strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		/* A Unix socket's connect does not wait: a full backlog is
		 * EAGAIN at once (a session that takes nothing). */
		if (errno == EAGAIN) {
			*r = pgn_ring_say(why, PGN_RING_FAILED,
			    "connect %s: the socket takes no more connections",
			    f->sock);
			goto bad;
		}
		if (errno != EINPROGRESS) {
			*r = pgn_ring_say(why,
			    errno == ECONNREFUSED || errno == ENOENT ?
			        PGN_RING_GONE :
			        PGN_RING_FAILED,
			    "connect %s: %s", f->sock, strerror(errno));
			goto bad;
		}
		p.fd = fd;
		p.events = POLLOUT;
		p.revents = 0;
		if (poll(&p, 1, PGN_DOORBELL_CONNECT_MS) != 1) {
			*r = pgn_ring_say(why, PGN_RING_FAILED,
			    "connect %s: no answer within %d ms", f->sock,
			    PGN_DOORBELL_CONNECT_MS);
			goto bad;
		}
		len = sizeof(err);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
		    err != 0) {
			*r =
			    pgn_ring_say(why, PGN_RING_FAILED, "connect %s: %s",
			        f->sock, strerror(err != 0 ? err : errno));
			goto bad;
		}
	}
	len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
	    cred.uid != geteuid() || (long)cred.pid != f->pid) {
		*r = pgn_ring_say(why, PGN_RING_REFUSED,
		    "the process listening on %s is not pid %ld of this user",
		    f->sock, f->pid);
		goto bad;
	}
	return fd;
bad:
	close(fd);
	return -1;
}

pgn_ring
pgn_doorbell_ring(const struct pgn_doorbell *d, const char *id,
    const char *transcript, int64_t msg, char why[PGN_DOORBELL_WHY])
{
	char dir[PGN_MAX_PATH], start[32], frame[512];
	struct pgn_doorbell_file f;
	pgn_ring r;
	size_t off = 0;
	ssize_t got;
	int fd, n;

	why[0] = '\0';
	if (d == NULL || id == NULL || !pgn_ring_id_ok(id))
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "not a session id to ring");
	if (transcript == NULL || !sessions_dir(d, transcript, dir))
		return pgn_ring_say(why, PGN_RING_GONE,
		    "no transcript path to find its sessions directory by");
	r = find(d, dir, id, &f, why);
	if (r != PGN_RING_RUNG)
		return r;
	if (f.pid == 0 || f.start[0] == '\0')
		return pgn_ring_say(why, PGN_RING_REFUSED,
		    "session file for %s names no pid or start time", id);
	if (!proc_start(f.pid, start) || strcmp(start, f.start) != 0)
		return pgn_ring_say(why, PGN_RING_GONE,
		    "pid %ld is gone or is another process (start time)",
		    f.pid);
	if (strcmp(f.status, d->idle) != 0)
		return pgn_ring_say(why, PGN_RING_BUSY, "session is %s, not %s",
		    f.status[0] != '\0' ? f.status : "of no status", d->idle);
	r = check_socket(d, &f, why);
	if (r != PGN_RING_RUNG)
		return r;
	n = snprintf(frame, sizeof(frame),
	    "{\"type\":\"user\",\"session_id\":\"%s\",\"from\":\"%s\","
	    "\"message\":{\"role\":\"user\",\"content\":\"%s (#%lld).\"}}\n",
	    id, d->from, d->line, (long long)msg);
	if (n < 0 || (size_t)n >= sizeof(frame))
		return pgn_ring_say(why, PGN_RING_FAILED, "frame too long");
	fd = connect_bounded(&f, &r, why);
	if (fd < 0)
		return r;
	/* A fresh connection takes a few hundred bytes at once: a short
	 * write is a failure, never a wait. */
	while (off < (size_t)n) {
		got = send(fd, frame + off, (size_t)n - off,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r = pgn_ring_say(why, PGN_RING_FAILED, "write %s: %s",
			    f.sock, got < 0 ? strerror(errno) : "short");
			close(fd);
			return r;
		}
		off += (size_t)got;
	}
	close(fd);
	return PGN_RING_RUNG;
}
