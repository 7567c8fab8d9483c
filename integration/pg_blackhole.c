/*
 * pg-blackhole: a server that takes connections and never answers, the
 * worst a PostgreSQL client can meet (a hung server, a dead proxy).
 *
 *	pg-blackhole DIR        the Unix socket DIR/.s.PGSQL.5432
 *	pg-blackhole --tcp FILE 127.0.0.1 on a free port, written to FILE
 *
 * Every connection is accepted and held open, unread, until the process
 * is killed. The socket (or FILE) appears once it listens.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define BLACKHOLE_MAX_HELD 4096 /* connections held before closing more */

static int
fail(const char *what)
{
	fprintf(stderr, "pg-blackhole: %s: %s\n", what, strerror(errno));
	return 1;
}

static int
listen_unix(const char *dir)
{
	struct sockaddr_un sa;
	int fd, n;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/.s.PGSQL.5432", dir);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path)) {
		fprintf(stderr, "pg-blackhole: '%s' is too long\n", dir);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 64) != 0) {
		fail("listening on the socket");
		return -1;
	}
	return fd;
}

static int
listen_tcp(const char *portfile)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	FILE *f;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 64) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		fail("listening on 127.0.0.1");
		return -1;
	}
	f = fopen(portfile, "w");
	if (f == NULL || fprintf(f, "%d\n", ntohs(sa.sin_port)) < 0 ||
	    fclose(f) != 0) {
		fail("writing the port file");
		return -1;
	}
	return fd;
}

int
main(int argc, char **argv)
{
	int fd, c, held = 0;

	if (argc == 2 && argv[1][0] != '-')
		fd = listen_unix(argv[1]);
	else if (argc == 3 && strcmp(argv[1], "--tcp") == 0)
		fd = listen_tcp(argv[2]);
	else {
		fprintf(stderr, "usage: pg-blackhole DIR | --tcp PORTFILE\n");
		return 2;
	}
	if (fd < 0)
		return 1;
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return fail("accept");
		}
		if (held < BLACKHOLE_MAX_HELD)
			held++;
		else
			close(c);
	}
}
