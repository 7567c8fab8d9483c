/*
 * pigeon web: serve the scope's live page over libmicrohttpd, on
 * 127.0.0.1 only (docs/web.md, decision 0171). The logic (Host, token,
 * routes, JSON, the page) is the library's pgn_web_handle; this file is
 * the socket, the threads, the event stream and the signals. Every call
 * into the library holds one lock: the handle is one connection.
 */
#define _GNU_SOURCE /* POLLRDHUP */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/web.h"

/* Event streams open at once: past it a 503, so the page stays served. */
#define WEB_MAX_STREAMS 16
/* A change is told once the database is quiet this long (at most the
 * second): a send's several WAL writes make one event. */
#define WEB_SETTLE_MS     30
#define WEB_SETTLE_MAX_MS 300

/*
 * libmicrohttpd is loaded with dlopen by pigeon web alone: linked, it
 * and the TLS libraries it needs (gnutls and eight more) would be
 * loaded and relocated by every pigeon command, a send or a read
 * included (decision 0171).
 */
#define WEB_MHD_SONAME "libmicrohttpd.so.12"
#define MHD_FUNCS(X)                                                           \
	X(MHD_start_daemon)                                                    \
	X(MHD_stop_daemon)                                                     \
	X(MHD_create_response_from_buffer)                                     \
	X(MHD_create_response_from_callback)                                   \
	X(MHD_add_response_header)                                             \
	X(MHD_queue_response)                                                  \
	X(MHD_destroy_response)                                                \
	X(MHD_lookup_connection_value)                                         \
	X(MHD_get_connection_info)                                             \
	X(MHD_set_connection_option)
#define MHD_DECL(f) static __typeof__(f) *mhd_##f;
MHD_FUNCS(MHD_DECL)
#undef MHD_DECL

/* Load libmicrohttpd: 0 and a message on stderr when it is missing. */
static int
load_mhd(void)
{
	void *h, *sym;

	h = dlopen(WEB_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		cli_err(EXIT_FAIL,
		    "pigeon web needs %s (apt-get install libmicrohttpd12): %s",
		    WEB_MHD_SONAME, dlerror());
		return 0;
	}
#define MHD_LOAD(f)                                                            \
	sym = dlsym(h, #f);                                                    \
	if (sym == NULL) {                                                     \
		cli_err(EXIT_FAIL, "%s lacks %s", WEB_MHD_SONAME, #f);         \
		return 0;                                                      \
	}                                                                      \
	memcpy(&mhd_##f, &sym, sizeof(mhd_##f));
	MHD_FUNCS(MHD_LOAD)
#undef MHD_LOAD
	return 1;
}

/* From here on every MHD call goes through the loaded pointers. */
#define MHD_start_daemon                  mhd_MHD_start_daemon
#define MHD_stop_daemon                   mhd_MHD_stop_daemon
#define MHD_create_response_from_buffer   mhd_MHD_create_response_from_buffer
#define MHD_create_response_from_callback mhd_MHD_create_response_from_callback
#define MHD_add_response_header           mhd_MHD_add_response_header
#define MHD_queue_response                mhd_MHD_queue_response
#define MHD_destroy_response              mhd_MHD_destroy_response
#define MHD_lookup_connection_value       mhd_MHD_lookup_connection_value
#define MHD_get_connection_info           mhd_MHD_get_connection_info
#define MHD_set_connection_option         mhd_MHD_set_connection_option

enum { OPT_PORT = OPT_CMD, OPT_OPEN, OPT_ALLOW_SEND };

const struct cli_cmd cli_cmd_web = {
    .name = "web",
    .fn = cmd_web,
    .summary = "a live page of the scope in the browser",
    .synopsis = {"[--port N] [--open] [--allow-send]"},
    .text =
        "Serve a live page of the scope on 127.0.0.1 only: the agents (host, state, last seen, queued, leases), the conversations by thread with each message's delivery and acknowledgement, the live leases, the audit with its verification, and search. It updates within a second of a change. Every request needs the random token of the URL printed at start. Read-only unless --allow-send. Ctrl-C or SIGTERM stops it (exit 0).",
    .opts =
        {{"port", OPT_PORT, "N", CLI_K_NONE, NULL,
             "listen on port N of 127.0.0.1 (default 7734; 0: any free port)"},
            {"open", OPT_OPEN, NULL, CLI_K_NONE, NULL,
                "open the page with xdg-open"},
            {"allow-send", OPT_ALLOW_SEND, NULL, CLI_K_NONE, NULL,
                "add a form to send as a named person (else no writes at all)"}},
    .common = CLI_DB | CLI_PROJECT,
};

struct web_opts {
	int port;
	int open;
	int allow_send;
};

/*
 * A connection that has not yet made a request with the Host and the
 * token: a stranger. Strangers are listed oldest first; past
 * PGN_WEB_MAX_STRANGERS the oldest is shut down, and each has
 * PGN_WEB_HEAD_TIMEOUT_S of silence, not PGN_WEB_TIMEOUT_S: idle
 * connections from any local user never hold every slot (decision
 * 0239).
 */
struct conn {
	struct conn *prev, *next;
	int fd;
	int listed;
};

/* What the threads share; 'lock' guards the library and these fields. */
struct server {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct pgn_web *web;
	unsigned long gen; /* bumped on each change */
	unsigned long
	    probe; /* bumped when a stream is refused: see stream_read */
	int replaced;
	int stopping;
	int streams;
	/* 'conns' guards the strangers' list; never held with 'lock' */
	pthread_mutex_t conns;
	struct conn *oldest, *youngest;
	int strangers;
};

/* One request: its raw target (from the URI callback) and its body. */
struct request {
	char *target;
	char body[PGN_WEB_MAX_BODY + 1];
	size_t len;
	int too_big;
	int started;
};

struct stream {
	struct server *s;
	int fd; /* the client's socket, looked at, never read or written */
	unsigned long seen;
	unsigned long probed;
	int replaced_told;
	int started;
};

static volatile sig_atomic_t got_signal;
static int sig_pipe[2] = {-1, -1};

static void
on_signal(int sig)
{
	int saved = errno;

	got_signal = sig;
	if (sig_pipe[1] >= 0)
		(void)!write(sig_pipe[1], "x", 1);
	errno = saved;
}

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct web_opts *o = p;
	int64_t v;

	switch (ch) {
	case OPT_PORT:
		if (pgn_parse_i64(arg, 0, 65535, &v) != PGN_OK)
			return cli_usage(c,
			    "--port '%s': a number from 0 to 65535", arg);
		o->port = (int)v;
		return 0;
	case OPT_OPEN:
		o->open = 1;
		return 0;
	case OPT_ALLOW_SEND:
		o->allow_send = 1;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *con)
{
	struct request *r = calloc(1, sizeof(*r));

	(void)cls;
	(void)con;
	if (r != NULL && uri != NULL && strlen(uri) <= PGN_WEB_MAX_TARGET)
		r->target = strdup(uri);
	return r;
}

static void
on_done(void *cls, struct MHD_Connection *con, void **ctx,
    enum MHD_RequestTerminationCode why)
{
	struct request *r = *ctx;

	(void)cls;
	(void)con;
	(void)why;
	if (r != NULL)
		free(r->target);
	free(r);
	*ctx = NULL;
}

/* Takes 'c' off the strangers' list; 'conns' held. */
static void
unlist(struct server *s, struct conn *c)
{
	if (!c->listed)
		return;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		s->oldest = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		s->youngest = c->prev;
	c->prev = c->next = NULL;
	c->listed = 0;
	s->strangers--;
}

/*
 * A connection starts a stranger, the youngest; past the bound the
 * oldest stranger's socket is shut down, and its thread closes it as
 * a client that went. libmicrohttpd tells CLOSED before it closes the
 * socket, so a listed fd is always still that connection's own.
 */
static void
on_connection(void *cls, struct MHD_Connection *con, void **ctx,
    enum MHD_ConnectionNotificationCode toe)
{
	struct server *s = cls;
	const union MHD_ConnectionInfo *info;
	struct conn *c = *ctx;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		if (c == NULL)
			return;
		pthread_mutex_lock(&s->conns);
		unlist(s, c);
		pthread_mutex_unlock(&s->conns);
		free(c);
		*ctx = NULL;
		return;
	}
	info = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
	c = calloc(1, sizeof(*c));
	if (c == NULL || info == NULL) {
		free(c); /* untracked: it keeps the short timeout */
		return;
	}
	c->fd = info->connect_fd;
	pthread_mutex_lock(&s->conns);
	c->prev = s->youngest;
	if (s->youngest != NULL)
		s->youngest->next = c;
	else
		s->oldest = c;
	s->youngest = c;
	c->listed = 1;
	s->strangers++;
	if (s->strangers > PGN_WEB_MAX_STRANGERS) {
		(void)shutdown(s->oldest->fd, SHUT_RDWR);
		unlist(s, s->oldest);
	}
	pthread_mutex_unlock(&s->conns);
	*ctx = c;
}

/* The connection made a request with the token: no longer a stranger,
 * and the long timeout (a page's keep-alive, a slow reader). */
static void
proven(struct server *s, struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *info;
	struct conn *c;

	/* First: a connection that was never listed is proven all the same. */
	(void)MHD_set_connection_option(con, MHD_CONNECTION_OPTION_TIMEOUT,
	    (unsigned)PGN_WEB_TIMEOUT_S);
	info = MHD_get_connection_info(con, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	c = info != NULL ? info->socket_context : NULL;
	if (c == NULL)
		return;
	pthread_mutex_lock(&s->conns);
	unlist(s, c);
	pthread_mutex_unlock(&s->conns);
}

static void
add_headers(struct MHD_Response *resp)
{
	size_t i;

	for (i = 0; pgn_web_headers[i][0] != NULL; i++)
		(void)MHD_add_response_header(resp, pgn_web_headers[i][0],
		    pgn_web_headers[i][1]);
}

/*
 * The event stream: a comment at once, then 'change' each time the
 * database changed, 'replaced' once the file was replaced, a comment
 * every PGN_WEB_KEEPALIVE_MS; ends when the server stops.
 */
/* The client closed its end (an event stream never sends after its
 * request): the stream's slot can go. */
static int
peer_gone(int fd)
{
	struct pollfd p;

	if (fd < 0)
		return 0;
	p.fd = fd;
	p.events = POLLIN | POLLRDHUP;
	p.revents = 0;
	return poll(&p, 1, 0) > 0 &&
	    (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

/*
 * A closed page's stream would keep its slot until a write to it
 * failed, a keepalive or two later (15-30 s): reloading the page 16
 * times then left the next one without live updates. So each time the
 * streams wake (a change, a keepalive, or a stream refused for want of
 * a slot, which wakes them all: 'probe'), a stream whose client has
 * gone ends at once (decision 0224).
 */
static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct stream *st = cls;
	struct server *s = st->s;
	struct timespec until;
	ssize_t n = 0;
	int rc = 0;

	(void)pos;
	if (!st->started) {
		st->started = 1;
		return snprintf(buf, max, "retry: 1000\n: pigeon\n\n");
	}
	(void)clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PGN_WEB_KEEPALIVE_MS / 1000;
	pthread_mutex_lock(&s->lock);
	while (!s->stopping && s->gen == st->seen &&
	    (s->replaced == st->replaced_told) && s->probe == st->probed &&
	    rc == 0)
		rc = pthread_cond_timedwait(&s->changed, &s->lock, &until);
	st->probed = s->probe;
	if (s->stopping)
		n = MHD_CONTENT_READER_END_OF_STREAM;
	else if (peer_gone(st->fd))
		n = MHD_CONTENT_READER_END_WITH_ERROR;
	else if (s->replaced && !st->replaced_told) {
		st->replaced_told = 1;
		n = snprintf(buf, max, "event: replaced\ndata: 1\n\n");
	} else if (s->gen != st->seen) {
		st->seen = s->gen;
		n = snprintf(buf, max, "event: change\ndata: %lu\n\n",
		    st->seen);
	} else
		n = snprintf(buf, max, ": keepalive\n\n");
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void
stream_free(void *cls)
{
	struct stream *st = cls;

	pthread_mutex_lock(&st->s->lock);
	st->s->streams--;
	pthread_mutex_unlock(&st->s->lock);
	free(st);
}

static enum MHD_Result
queue_stream(struct server *s, struct MHD_Connection *con)
{
	const union MHD_ConnectionInfo *info;
	struct MHD_Response *resp;
	struct stream *st;
	enum MHD_Result ret;

	pthread_mutex_lock(&s->lock);
	if (s->streams >= WEB_MAX_STREAMS) {
		/* Refused; the streams look whether their clients went. */
		s->probe++;
		pthread_cond_broadcast(&s->changed);
		pthread_mutex_unlock(&s->lock);
		resp = MHD_create_response_from_buffer(
		    strlen("{\"error\":\"too many event streams\"}"),
		    (void *)"{\"error\":\"too many event streams\"}",
		    MHD_RESPMEM_PERSISTENT);
		if (resp == NULL)
			return MHD_NO;
		add_headers(resp);
		ret = MHD_queue_response(con, 503, resp);
		MHD_destroy_response(resp);
		return ret;
	}
	st = calloc(1, sizeof(*st));
	if (st == NULL) {
		pthread_mutex_unlock(&s->lock);
		return MHD_NO;
	}
	s->streams++;
	st->s = s;
	info = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CONNECTION_FD);
	st->fd = info != NULL ? info->connect_fd : -1;
	st->seen = s->gen;
	st->probed = s->probe;
	st->replaced_told = s->replaced;
	pthread_mutex_unlock(&s->lock);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024,
	    stream_read, st, stream_free);
	if (resp == NULL) {
		stream_free(st);
		return MHD_NO;
	}
	add_headers(resp);
	(void)MHD_add_response_header(resp, "Content-Type",
	    "text/event-stream");
	ret = MHD_queue_response(con, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *con, const char *url,
    const char *method, const char *version, const char *data,
    size_t *data_size, void **ctx)
{
	struct server *s = cls;
	struct request *r = *ctx;
	struct pgn_web_req req;
	struct pgn_web_resp out;
	struct MHD_Response *resp;
	enum MHD_Result ret;

	(void)url;
	(void)version;
	if (r == NULL)
		return MHD_NO;
	if (!r->started) { /* the head: the body, if any, comes next */
		r->started = 1;
		return MHD_YES;
	}
	if (*data_size > 0) { /* a body, in pieces: kept up to the bound */
		if (r->len + *data_size > PGN_WEB_MAX_BODY)
			r->too_big = 1;
		else {
			memcpy(r->body + r->len, data, *data_size);
			r->len += *data_size;
		}
		*data_size = 0;
		return MHD_YES;
	}
	memset(&req, 0, sizeof(req));
	req.method = method;
	req.target = r->target != NULL ? r->target : "";
	req.host = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_HOST);
	req.content_type = MHD_lookup_connection_value(con, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_TYPE);
	r->body[r->len] = '\0';
	req.body = r->body;
	req.body_len = r->too_big ? PGN_WEB_MAX_BODY + 1 : r->len;
	pthread_mutex_lock(&s->lock);
	pgn_web_handle(s->web, &req, &out);
	pthread_mutex_unlock(&s->lock);
	if (out.authorised)
		proven(s, con);
	if (out.events) {
		pgn_web_resp_release(&out);
		return queue_stream(s, con);
	}
	resp = MHD_create_response_from_buffer(out.len, out.body,
	    MHD_RESPMEM_MUST_COPY);
	if (resp == NULL) {
		pgn_web_resp_release(&out);
		return MHD_NO;
	}
	add_headers(resp);
	(void)MHD_add_response_header(resp, "Content-Type", out.type);
	ret = MHD_queue_response(con, (unsigned)out.status, resp);
	MHD_destroy_response(resp);
	pgn_web_resp_release(&out);
	return ret;
}

/* A listening socket on 127.0.0.1:'*port' (0: any; the real one back). */
static int
listen_on(int *port)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int fd, one = 1, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cli_err(EXIT_FAIL, "a socket: %s", strerror(errno)), -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)*port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, PGN_WEB_MAX_CONNECTIONS) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
		err = errno;
		close(fd);
		if (err == EADDRINUSE)
			cli_err(EXIT_FAIL,
			    "port %d of 127.0.0.1 is taken: pick another with --port N (0: any free port)",
			    *port);
		else
			cli_err(EXIT_FAIL, "listening on 127.0.0.1:%d: %s",
			    *port, strerror(err));
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/*
 * --open: the browser gets a file of the state directory (this user's
 * alone, 0600) that sends it on to the URL, never the URL itself: a
 * command line is anyone's to read in /proc, and the token is the one
 * guard of a port every local user can reach. Written to 'page' (removed
 * when the server stops).
 */
static void
open_page(const char *url, char *page, size_t cap)
{
	char *home = NULL;
	FILE *f = NULL;
	pid_t pid;
	int fd = -1;

	page[0] = '\0';
	if (pgn_home_path(&home) != PGN_OK ||
	    snprintf(page, cap, "%s/web-open.html", home) >= (int)cap) {
		page[0] = '\0';
		cli_err(EXIT_FAIL,
		    "--open: no state directory; open the URL by hand");
		goto out;
	}
	(void)unlink(page);
	fd = open(page, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f == NULL) {
		cli_err(EXIT_FAIL, "--open: %s: %s; open the URL by hand", page,
		    strerror(errno));
		page[0] = '\0';
		goto out;
	}
	fd = -1;
	fprintf(f,
	    "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url=%s\">"
	    "<title>pigeon web</title><a href=\"%s\">pigeon web</a>\n",
	    url, url);
	if (fclose(f) != 0) {
		f = NULL;
		cli_err(EXIT_FAIL, "--open: %s: %s; open the URL by hand", page,
		    strerror(errno));
		(void)unlink(page);
		page[0] = '\0';
		goto out;
	}
	f = NULL;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			(void)dup2(null, 1);
			(void)dup2(null, 2);
		}
		execlp("xdg-open", "xdg-open", page, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		cli_err(EXIT_FAIL, "--open: %s; open the URL by hand",
		    strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	free(home);
}

/*
 * One write is many wake-ups (each page of the WAL): drain them until
 * the file is quiet for WEB_SETTLE_MS, at most WEB_SETTLE_MAX_MS, so a
 * send is one event. Called and returns with the lock held.
 */
static void
settle(struct server *s, struct pgn_notify *n, struct pollfd *p)
{
	int waited;

	for (waited = 0; waited < WEB_SETTLE_MAX_MS; waited += WEB_SETTLE_MS) {
		pgn_notify_drain(n);
		pthread_mutex_unlock(&s->lock);
		p->revents = 0;
		if (poll(p, 1, WEB_SETTLE_MS) <= 0)
			waited = WEB_SETTLE_MAX_MS;
		pthread_mutex_lock(&s->lock);
	}
	pgn_notify_drain(n);
}

/*
 * Until a signal: wake on the database's change notifier (the -wal
 * file's, or LISTEN/NOTIFY), tell the streams; look at the file once a
 * PGN_WEB_CHECK_MS for a replacement.
 */
static void
serve(struct server *s, pgn_db *db, struct pgn_notify *n)
{
	struct pollfd p[2];
	int nfd, changed;

	while (!got_signal) {
		p[0].fd = sig_pipe[0];
		p[0].events = POLLIN;
		/* Under the lock: on PostgreSQL this leaves the connection's
		 * pipeline, which a request's transaction may be using. */
		pthread_mutex_lock(&s->lock);
		p[1].fd = pgn_notify_fd(n);
		pthread_mutex_unlock(&s->lock);
		p[1].events = POLLIN;
		nfd = p[1].fd >= 0 ? 2 : 1;
		p[0].revents = p[1].revents = 0;
		if (poll(p, (nfds_t)nfd, PGN_WEB_CHECK_MS) < 0 &&
		    errno != EINTR)
			break;
		changed = nfd == 2 && (p[1].revents & POLLIN) != 0;
		pthread_mutex_lock(&s->lock);
		if (changed)
			settle(s, n, &p[1]);
		if (nfd == 1)
			changed = 1; /* no notifier: look on the timer */
		if (!s->replaced && pgn_db_check_file(db) != PGN_OK) {
			s->replaced = 1;
			pgn_web_set_replaced(s->web, 1);
		}
		if (changed)
			s->gen++;
		pthread_cond_broadcast(&s->changed);
		pthread_mutex_unlock(&s->lock);
	}
}

int
cmd_web(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_web};
	struct web_opts o = {PGN_WEB_PORT_DEFAULT, 0, 0};
	struct server s;
	struct pgn_notify *n = NULL;
	struct MHD_Daemon *d = NULL;
	struct sigaction sa;
	char url[128], page[PATH_MAX] = "";
	int code, fd = -1;
	pgn_status st;

	memset(&s, 0, sizeof(s));
	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "web takes no argument");
	if (!load_mhd())
		return EXIT_FAIL;
	code = cli_open(&c);
	if (code != EXIT_OK)
		return code;
	pthread_mutex_init(&s.lock, NULL);
	pthread_mutex_init(&s.conns, NULL);
	pthread_cond_init(&s.changed, NULL);
	fd = listen_on(&o.port);
	if (fd < 0) {
		code = EXIT_FAIL;
		goto out;
	}
	st = pgn_web_new(c.db, o.port, o.allow_send, &s.web);
	if (st == PGN_OK)
		st = pgn_notify_open(c.db, &n);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	if (pipe(sig_pipe) != 0 ||
	    fcntl(sig_pipe[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(sig_pipe[1], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(sig_pipe[1], F_SETFL, O_NONBLOCK) != 0) {
		code = cli_err(EXIT_FAIL, "a pipe: %s", strerror(errno));
		goto out;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
	        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC,
	    0, NULL, NULL, on_request, &s, MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)PGN_WEB_MAX_CONNECTIONS,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PGN_WEB_HEAD_TIMEOUT_S,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, &s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PGN_WEB_MAX_HEADERS,
	    MHD_OPTION_URI_LOG_CALLBACK, on_uri, NULL,
	    MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
	if (d == NULL) {
		code = cli_err(EXIT_FAIL,
		    "the HTTP server did not start on "
		    "127.0.0.1:%d",
		    o.port);
		goto out;
	}
	fd = -1; /* the daemon's now */
	(void)snprintf(url, sizeof(url), "http://127.0.0.1:%d/?token=%s",
	    o.port, pgn_web_token(s.web));
	printf("pigeon web: %s\n", url);
	printf("(read-only%s; Ctrl-C stops it)\n",
	    o.allow_send ? " but for the send form" : "");
	fflush(stdout);
	if (o.open)
		open_page(url, page, sizeof(page));
	serve(&s, c.db, n);
	pthread_mutex_lock(&s.lock);
	s.stopping = 1;
	pthread_cond_broadcast(&s.changed);
	pthread_mutex_unlock(&s.lock);
	MHD_stop_daemon(d);
	if (page[0] != '\0')
		(void)unlink(page);
	printf("pigeon web: stopped\n");
	code = EXIT_OK;
out:
	if (fd >= 0)
		close(fd);
	pgn_notify_close(n);
	pgn_web_free(s.web);
	if (sig_pipe[0] >= 0) {
		close(sig_pipe[0]);
		close(sig_pipe[1]);
		sig_pipe[0] = sig_pipe[1] = -1;
	}
	pthread_cond_destroy(&s.changed);
	pthread_mutex_destroy(&s.lock);
	pthread_mutex_destroy(&s.conns);
	cli_close(&c);
	return code;
}
