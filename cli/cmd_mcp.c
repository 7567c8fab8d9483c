/*
 * pigeon mcp: the mailbox as MCP tools over stdio (docs/mcp.md). The
 * protocol is the library's (pigeon/mcp.h); here lines are read from
 * stdin, bounded, and answers written to stdout, one a line.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/mcp.h"
#include "pigeon/setup.h"

enum { OPT_AGENT = OPT_CMD };

const struct cli_cmd cli_cmd_mcp = {
    .name = "mcp",
    .fn = cmd_mcp,
    .summary = "serve the mailbox as MCP tools on stdin and stdout",
    .synopsis = {"[--agent NAME]"},
    .text =
        "A Model Context Protocol server on standard input and output (JSON-RPC 2.0, one message a line of at most 262144 bytes), which pigeon install registers in each host's MCP configuration. Its tools: send, inbox, read, wait, status, ack, thread, lease_take, lease_release and lease_list (docs/mcp.md).\n\n"
        "The tools act as one agent: the one the database binds $PIGEON_SESSION to, else --agent NAME, else $PIGEON_AGENT; no tool argument names it. read and wait claim messages as pigeon read does, with route 'mcp' in the audit and the journal; wait waits at most 50 seconds, under the hosts' tool timeouts. An answer that cannot be written (standard output closed) is logged with the ids it claimed, on standard error and in mcp.log in the state directory.\n\n"
        "Exits 0 at the end of its input, 141 when its output is closed.",
    .opts = {{"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
        "the agent the tools act as (default: $PIGEON_SESSION's, else $PIGEON_AGENT)"}},
    .common = CLI_DB | CLI_PROJECT,
};

#define MCP_MAX_LOG (256 * 1024) /* mcp.log before it starts again */

/* Standard input, a line at a time, each at most PGN_MCP_MAX_LINE. */
struct lines {
	char buf[PGN_MCP_MAX_LINE + 1];
	size_t len;   /* bytes held */
	size_t taken; /* bytes of the line handed out, to drop next */
	int eof;
	int skip; /* inside a line over the bound: drop to its newline */
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	if (ch == OPT_AGENT) {
		*(const char **)p = arg;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

/* Read what stdin has into the buffer; 0, or -1 on a read error. */
static int
fill(struct lines *l)
{
	ssize_t n;

	if (l->len == sizeof(l->buf) || l->eof)
		return 0;
	do
		n = read(STDIN_FILENO, l->buf + l->len,
		    sizeof(l->buf) - l->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		l->eof = 1;
	l->len += (size_t)n;
	return 0;
}

/*
 * The next line into '*line' (its '*len' bytes; NUL-terminated), '*long'
 * set for a line over the bound; 1, or 0 at the end of the input.
 */
static int
next_line(struct lines *l, char **line, size_t *len, int *too_long)
{
	char *nl;

	memmove(l->buf, l->buf + l->taken, l->len - l->taken);
	l->len -= l->taken;
	l->taken = 0;
	for (;;) {
		nl = memchr(l->buf, '\n', l->len);
		if (nl != NULL) {
			*nl = '\0';
			l->taken = (size_t)(nl - l->buf) + 1;
			if (l->skip) {
				l->skip = 0;
				memmove(l->buf, l->buf + l->taken,
				    l->len - l->taken);
				l->len -= l->taken;
				l->taken = 0;
				continue;
			}
			*line = l->buf;
			*len = (size_t)(nl - l->buf);
			*too_long = 0;
			return 1;
		}
		if (l->len == sizeof(l->buf)) {
			/* Over the bound: answered once, dropped to its end. */
			int first = !l->skip;

			l->len = 0;
			l->skip = 1;
			if (first) {
				*line = l->buf;
				*len = 0;
				*too_long = 1;
				return 1;
			}
			continue;
		}
		if (l->eof) {
			if (l->len == 0 || l->skip)
				return 0;
			l->buf[l->len] = '\0';
			l->taken = l->len;
			*line = l->buf;
			*len = l->len;
			*too_long = 0;
			return 1;
		}
		if (fill(l) != 0)
			return 0;
	}
}

/*
 * The wait tool's question: has stdin closed, or did the host cancel the
 * request? (What came is kept, and handled after the answer.)
 */
static int
closed_input(void *arg)
{
	struct lines *l = arg;
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	const char *at, *nl;

	if (l->eof)
		return 1;
	if (l->len < sizeof(l->buf) && poll(&p, 1, 0) == 1 &&
	    (p.revents & (POLLIN | POLLHUP)) != 0)
		(void)fill(l);
	for (at = l->buf + l->taken;
	     (nl = memchr(at, '\n', (size_t)(l->buf + l->len - at))) != NULL;
	     at = nl + 1)
		if (pgn_mcp_is_cancel(at, (size_t)(nl - at)))
			return 1;
	return l->eof;
}

static int
write_all(const char *s, size_t n)
{
	ssize_t w;

	while (n > 0) {
		w = write(STDOUT_FILENO, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A claim whose answer was lost: on stderr and in <home>/mcp.log. */
static void
log_lost(const struct pgn_mcp *s)
{
	char line[1024], path[PGN_MAX_PATH + 16], *home = NULL;
	struct stat sb;
	size_t len;
	int fd;

	len = pgn_mcp_lost_line(s, line, sizeof(line) - 1);
	line[len++] = '\n';
	(void)!write(STDERR_FILENO, line, len);
	if (pgn_home_path(&home) != PGN_OK)
		return;
	if (strlen(home) > PGN_MAX_PATH) {
		free(home);
		return;
	}
	(void)snprintf(path, sizeof(path), "%s/mcp.log", home);
	free(home);
	if (stat(path, &sb) == 0 && sb.st_size > MCP_MAX_LOG)
		(void)unlink(path);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd >= 0) {
		(void)!write(fd, line, len);
		(void)close(fd);
	}
}

int
cmd_mcp(int argc, char **argv)
{
	static struct lines in;
	struct cli c = {.def = &cli_cmd_mcp};
	struct pgn_mcp_config cfg;
	struct pgn_mcp *s = NULL;
	const char *flag = NULL;
	char *line, *out, *cwd = NULL;
	struct pgn_err err;
	size_t len, nclaimed;
	int code, too_long;

	code = cli_parse(&c, argc, argv, opt, &flag);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	memset(&in, 0, sizeof(in));
	memset(&cfg, 0, sizeof(cfg));
	if (c.project == NULL)
		cwd = getcwd(NULL, 0);
	cfg.db_flag = c.db_flag;
	cfg.dir = c.project != NULL ? c.project : cwd;
	cfg.agent = flag;
	cfg.agent_default = getenv("PIGEON_AGENT");
	cfg.session = getenv("PIGEON_SESSION");
	cfg.cancel = closed_input;
	cfg.cancel_arg = &in;
	if (pgn_mcp_open(&cfg, &s, &err) != PGN_OK) {
		free(cwd);
		return cli_usage(&c, "--agent: %s", err.msg);
	}
	free(cwd);
	code = EXIT_OK;
	while (next_line(&in, &line, &len, &too_long)) {
		out = NULL;
		if (pgn_mcp_handle(s, line, len, too_long, &out) != PGN_OK &&
		    out == NULL) {
			code = cli_err(EXIT_FAIL, "out of memory");
			break;
		}
		if (out != NULL &&
		    (write_all(out, strlen(out)) != 0 ||
		        write_all("\n", 1) != 0)) {
			(void)pgn_mcp_claimed(s, &nclaimed);
			if (nclaimed > 0)
				log_lost(s);
			free(out);
			code = EXIT_PIPE;
			break;
		}
		if (out == NULL || !pgn_mcp_claim_answered(s)) {
			(void)pgn_mcp_claimed(s, &nclaimed);
			if (nclaimed > 0)
				log_lost(s);
		}
		free(out);
	}
	pgn_mcp_close(s);
	return code;
}

int
cli_mcp_apply(pgn_host h, const char *project, int remove, int dry_run,
    struct pgn_mcp_reg_result *res, struct pgn_err *err)
{
	struct pgn_mcp_reg req = {0};
	char *self = NULL;
	pgn_status st;

	pgn_err_clear(err);
	if (!remove) {
		self = realpath("/proc/self/exe", NULL);
		if (self == NULL) /* said here: 'err' stays empty */
			return cli_err(EXIT_FAIL,
			    "cannot find this pigeon's own path: %s",
			    strerror(errno));
	}
	req.host = h;
	req.project = project;
	req.pigeon = self;
	req.dry_run = dry_run;
	req.remove = remove;
	st = pgn_mcp_register(&req, res, err);
	free(self);
	return st == PGN_OK ? EXIT_OK : EXIT_FAIL;
}

int
cli_mcp_print(const struct pgn_mcp_reg_result *res, pgn_host h, int remove,
    int dry_run)
{
	int changed = res->changed || res->allow_changed;

	if (res->path == NULL || (remove && !changed))
		return changed;
	if (!res->changed)
		printf("mcp: already registered in %s\n", res->path);
	else
		printf("mcp: %s pigeon mcp for %s %s %s\n",
		    dry_run ? (remove ? "would remove" : "would register") :
		              (remove ? "removed" : "registered"),
		    pgn_host_get(h)->name, remove ? "from" : "in", res->path);
	if (!remove && res->approval != NULL)
		printf("mcp: approval: %s%s%s\n", res->approval,
		    res->allow_path == NULL ? "" :
		        !res->approved      ? ": not written in " :
		        !res->allow_changed ? ": unchanged in " :
		        dry_run             ? ": would be written in " :
		                              ": written in ",
		    res->allow_path == NULL ? "" : res->allow_path);
	if (dry_run && res->changed)
		fputs(res->diff, stdout);
	if (dry_run && res->allow_changed)
		fputs(res->allow_diff, stdout);
	return changed;
}

void
cli_mcp_doctor(cJSON *o, pgn_host h, const char *project)
{
	struct pgn_mcp_reg_state s;
	cJSON *m;

	if (pgn_mcp_reg_inspect(h, project, &s) != PGN_OK || s.path == NULL) {
		pgn_mcp_reg_state_release(&s);
		return;
	}
	m = cJSON_AddObjectToObject(o, "mcp");
	cJSON_AddStringToObject(m, "path", s.path);
	cJSON_AddBoolToObject(m, "registered", s.registered);
	/* Decision 0217: where the host keeps Pigeon's approval, if it does. */
	if (s.allow_path != NULL)
		cJSON_AddStringToObject(m, "approval_path", s.allow_path);
	else
		cJSON_AddNullToObject(m, "approval_path");
	cJSON_AddBoolToObject(m, "approved", s.approved);
	if (s.approval != NULL)
		cJSON_AddStringToObject(m, "approval", s.approval);
	pgn_mcp_reg_state_release(&s);
}
