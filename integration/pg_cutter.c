/*
 * pg-cutter: a proxy to a PostgreSQL server that loses one answer, the
 * way a network can: the connection drops after the server received a
 * transaction's commit and before its answer reached the client.
 *
 *	pg-cutter after|before[-gone]|fatal DIR SERVER_SOCKET MARK1 MARK2
 *
 * Listens on DIR/.s.PGSQL.5432 and relays each connection, one at a
 * time, to the Unix socket SERVER_SOCKET. The first time the client's
 * bytes hold both MARK1 and MARK2 in one read, the connection is cut:
 * "after", those bytes go to the server first, the client's side is
 * closed at once, and the server's answers are read and dropped until
 * it is ready for the next query (the commit happened, its answer is
 * lost); "before", they are dropped (the commit never arrived). Later
 * connections are relayed whole; with "-gone" there are none: the
 * socket is removed at the cut, so the client cannot ask the server
 * what became of its commit. "fatal": those bytes go to the server and
 * its answers to the client, all but the last (ReadyForQuery), which is
 * replaced by a FATAL error, the way a backend terminated right after
 * its commit answers; the client's side stays open, as a socket whose
 * close has not been read yet. Prints "conn" for each connection, "cut"
 * when it has cut and "gone" when it has removed its socket.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CUTTER_BUF      65536
#define CUTTER_DRAIN_MS 500

static int
unix_addr(struct sockaddr_un *sa, const char *path)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path)) {
		fprintf(stderr, "pg-cutter: '%s' is too long\n", path);
		return -1;
	}
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* 'n' bytes of 'b' hold the 'k' bytes of 's' (either may hold NULs). */
static int
holds_n(const char *b, size_t n, const char *s, size_t k)
{
	size_t i;

	for (i = 0; i + k <= n; i++)
		if (memcmp(b + i, s, k) == 0)
			return 1;
	return 0;
}

static int
holds(const char *b, size_t n, const char *s)
{
	return holds_n(b, n, s, strlen(s));
}

/* The server's ReadyForQuery: 'Z', length 5, then the status byte. */
static const char READY[] = {'Z', 0, 0, 0, 5};

static int
write_all(int fd, const char *b, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A backend's FATAL error, as pg_terminate_backend() makes it say. */
static const char FATAL_MSG[] = "SFATAL\0VFATAL\0C57P01\0"
                                "Mterminating connection due to administrator "
                                "command\0";

/*
 * "fatal": relay the server's answers on 's' to 'c' up to its
 * ReadyForQuery, which becomes FATAL_MSG; 'c' is left open.
 */
static void
answer_fatal(int c, int s, char *buf, size_t cap)
{
	size_t have = 0, len;
	ssize_t n;
	char hdr[5];

	for (;;) {
		while (have >= 5) {
			len = ((size_t)(unsigned char)buf[1] << 24) |
			    ((size_t)(unsigned char)buf[2] << 16) |
			    ((size_t)(unsigned char)buf[3] << 8) |
			    (size_t)(unsigned char)buf[4];
			if (len < 4 || len + 1 > cap)
				return;
			if (have < len + 1)
				break;
			if (buf[0] == 'Z') {
				len =
				    sizeof(FATAL_MSG) + 4; /* and the end NUL */
				hdr[0] = 'E';
				hdr[1] = (char)(len >> 24);
				hdr[2] = (char)(len >> 16);
				hdr[3] = (char)(len >> 8);
				hdr[4] = (char)len;
				(void)write_all(c, hdr, sizeof(hdr));
				(void)write_all(c, FATAL_MSG,
				    sizeof(FATAL_MSG));
				return;
			}
			if (write_all(c, buf, len + 1) != 0)
				return;
			have -= len + 1;
			memmove(buf, buf + len + 1, have);
		}
		n = read(s, buf + have, cap - have);
		if (n <= 0)
			return;
		have += (size_t)n;
	}
}

/* Relay one connection; 1 if it was the one cut. */
static int
relay(int c, const char *server, const char *const *m, int after, int cut)
{
	static char buf[CUTTER_BUF];
	struct sockaddr_un sa;
	struct pollfd p[2];
	ssize_t n;
	int s, i;

	if (unix_addr(&sa, server) != 0)
		return 0;
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (s >= 0)
			close(s);
		return 0;
	}
	p[0].fd = c;
	p[1].fd = s;
	for (;;) {
		p[0].events = p[1].events = POLLIN;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n <= 0)
				goto done;
			if (i == 0 && !cut && !after &&
			    holds(buf, (size_t)n, m[0]) &&
			    holds(buf, (size_t)n, m[1])) {
				/* The server never gets it. */
				close(s);
				close(c);
				printf("cut\n");
				fflush(stdout);
				return 1;
			}
			if (write_all(p[1 - i].fd, buf, (size_t)n) != 0)
				goto done;
			if (i == 0 && !cut && after == 2 &&
			    holds(buf, (size_t)n, m[0]) &&
			    holds(buf, (size_t)n, m[1])) {
				/* Its answers, then FATAL; 'c' stays open. */
				answer_fatal(c, s, buf, sizeof(buf));
				close(s);
				printf("cut\n");
				fflush(stdout);
				return 1;
			}
			if (i == 0 && !cut && holds(buf, (size_t)n, m[0]) &&
			    holds(buf, (size_t)n, m[1])) {
				/* The server has it; its answer is lost. */
				close(c);
				p[1].events = POLLIN;
				while (poll(&p[1], 1, CUTTER_DRAIN_MS) > 0 &&
				    (n = read(s, buf, sizeof(buf))) > 0 &&
				    !holds_n(buf, (size_t)n, READY,
				        sizeof(READY)))
					;
				close(s);
				printf("cut\n");
				fflush(stdout);
				return 1;
			}
		}
	}
done:
	close(s);
	close(c);
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sa;
	char path[sizeof(sa.sun_path)];
	int fd, c, after, gone, cut = 0;

	if (argc != 6 ||
	    (strncmp(argv[1], "after", 5) != 0 &&
	        strncmp(argv[1], "before", 6) != 0 &&
	        strcmp(argv[1], "fatal") != 0)) {
		fprintf(stderr,
		    "usage: pg-cutter after|before[-gone]|fatal DIR "
		    "SERVER_SOCKET MARK1 MARK2\n");
		return 2;
	}
	after = strcmp(argv[1], "fatal") == 0 ? 2 :
	    strncmp(argv[1], "after", 5) == 0 ? 1 :
	                                        0;
	gone = strstr(argv[1], "-gone") != NULL;
	if (snprintf(path, sizeof(path), "%s/.s.PGSQL.5432", argv[2]) >=
	        (int)sizeof(path) ||
	    unix_addr(&sa, path) != 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 16) != 0) {
		fprintf(stderr, "pg-cutter: listening: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return 1;
		}
		printf("conn\n");
		fflush(stdout);
		cut |= relay(c, argv[3], (const char *const *)argv + 4, after,
		    cut);
		if (cut && gone) {
			/* Nobody reaches the server through here again. */
			close(fd);
			unlink(path);
			printf("gone\n");
			fflush(stdout);
			return 0;
		}
	}
}
