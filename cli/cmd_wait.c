/*
 * pigeon wait: block until matching mail is queued, then claim it; and
 * pigeon status: where sent messages stand. The waiting itself is
 * pgn_wait's (broker/src/wait.c); here are signals, output, exit codes.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_AGENT = OPT_CMD, OPT_FROM, OPT_REPLY, OPT_TIMEOUT, OPT_ACK };

const struct cli_cmd cli_cmd_wait = {
    .name = "wait",
    .fn = cmd_wait,
    .summary = "wait for a message, then claim and print it",
    .synopsis = {"[--agent NAME] [--from NAME] [--reply-to ID] [--timeout S]",
        "--ack ID [--timeout S]"},
    .text =
        "Block until a matching message is queued for the agent, then claim it and print it as pigeon read does (route 'cli'). Other mail stays queued. Exits 3 if nothing came within the timeout.\n\n"
        "With --ack ID, wait instead until message ID is acknowledged (pigeon ack, or a reply from its recipient), then print its status as pigeon status does.",
    .opts = {{"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
                 "the agent (default: $PIGEON_AGENT)"},
        {"from", OPT_FROM, "NAME", CLI_K_AGENT, NULL,
            "only a message from this sender"},
        {"reply-to", OPT_REPLY, "ID", CLI_K_NONE, NULL,
            "only a reply to message ID, from its recipient"},
        {"timeout", OPT_TIMEOUT, "S", CLI_K_NONE, NULL,
            "give up after S seconds (default 100, at most 3600)"},
        {"ack", OPT_ACK, "ID", CLI_K_NONE, NULL,
            "wait for message ID's acknowledgement"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

const struct cli_cmd cli_cmd_status = {
    .name = "status",
    .fn = cmd_status,
    .summary = "where sent messages stand: queued, delivered, acknowledged",
    .synopsis = {"ID..."},
    .text =
        "Where each message of the scope stands: queued (since when, for whom), woken (when its send rang the recipient's idle session, by which mechanism; or rung and unheard) or delivered (when, to which session and host, by which route), and, for a message sent with --ack, acknowledged (when, with which text or reply) or overdue. A reply names its thread where that is not the message it answers (--json: always); an urgent or low message says so, and one sent to a group names it, as inbox does. The ids the scope does not hold are named in one line on standard error, after the others are printed, and the exit code is 2.",
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

struct wait_opts {
	const char *agent;
	const char *from;
	int64_t reply_to;
	int64_t timeout_ms;
	int64_t ack; /* --ack ID, 0: none */
};

static volatile sig_atomic_t stop_sig;

static void
on_signal(int sig)
{
	stop_sig = sig;
}

static int
cancelled(void *arg)
{
	(void)arg;
	return stop_sig != 0;
}

int
cli_timeout(struct cli *c, const char *arg, int64_t *ms)
{
	int64_t s;

	if (pgn_parse_i64(arg, 1, PGN_WAIT_MAX_MS / 1000, &s) != PGN_OK)
		return cli_usage(c, "--timeout '%s': seconds from 1 to %d", arg,
		    PGN_WAIT_MAX_MS / 1000);
	*ms = s * 1000;
	return 0;
}

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct wait_opts *o = p;

	switch (ch) {
	case OPT_AGENT:
		o->agent = arg;
		return 0;
	case OPT_FROM:
		o->from = arg;
		return 0;
	case OPT_ACK:
		if (arg[0] == '#')
			arg++;
		if (pgn_parse_i64(arg, 1, INT64_MAX, &o->ack) != PGN_OK)
			return cli_usage(c, "--ack '%s': not a message id",
			    arg);
		return 0;
	case OPT_REPLY:
		if (pgn_parse_i64(arg, 1, INT64_MAX, &o->reply_to) != PGN_OK)
			return cli_usage(c, "--reply-to '%s': not a message id",
			    arg);
		return 0;
	case OPT_TIMEOUT:
		return cli_timeout(c, arg, &o->timeout_ms);
	}
	return cli_usage(c, "unknown option");
}

int
cli_wait_print(struct cli *c, struct pgn_wait *w)
{
	struct sigaction sa, old_int, old_term;
	struct pgn_msgs m = {0};
	cJSON *arr;
	int64_t now;
	pgn_status st;
	size_t i;
	int code;

	/* No SA_RESTART: a signal ends the sleep, and the wait, at once. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	stop_sig = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	w->cancel = cancelled;
	w->cancel_arg = NULL;
	st = pgn_wait(c->db, w, &m);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (st == PGN_EIO) {
		code = cli_err(EXIT_FAIL,
		    "%s: run the wait again to wait on the new one",
		    cli_errmsg(c->db));
		goto out;
	}
	if (st != PGN_OK) {
		code = cli_fail(c, st);
		goto out;
	}
	if (m.n == 0 && stop_sig != 0) {
		code = 128 + stop_sig; /* as a shell reports it: quietly */
		goto out;
	}
	if (m.n == 0) {
		code = cli_err(EXIT_TIMEOUT,
		    "no matching message for %s within %lld s: wait longer with --timeout S (at most %d)",
		    w->claim.agent, (long long)(w->timeout_ms / 1000),
		    PGN_WAIT_MAX_MS / 1000);
		goto out;
	}
	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < m.n; i++)
			arr = cli_json_push(arr, pgn_msg_json(&m.v[i]));
		code = cli_json_print(arr);
	} else {
		now = pgn_now_ms();
		for (i = 0; i < m.n; i++)
			cli_print_msg(stdout, &m.v[i], now);
		code = EXIT_OK;
	}
	code = cli_finish(code);
out:
	pgn_msgs_release(&m);
	return code;
}

/* pigeon wait --ack ID: pgn_wait_ack, then the message's status. */
static int
wait_ack(struct cli *c, int64_t id, int64_t timeout_ms)
{
	struct sigaction sa, old_int, old_term;
	struct pgn_msg_status s;
	pgn_status st;
	int code, acked = 0;

	memset(&s, 0, sizeof(s));
	code = cli_open(c);
	if (code != EXIT_OK)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	stop_sig = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	st = pgn_wait_ack(c->db, id, timeout_ms, cancelled, NULL, &acked);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (st != PGN_OK) {
		code = cli_fail(c, st);
		goto out;
	}
	if (!acked && stop_sig != 0) {
		code = 128 + stop_sig;
		goto out;
	}
	if (!acked) {
		code = cli_err(EXIT_TIMEOUT,
		    "message #%lld was not acknowledged within %lld s: wait longer with --timeout S (at most %d), or see pigeon status %lld",
		    (long long)id, (long long)(timeout_ms / 1000),
		    PGN_WAIT_MAX_MS / 1000, (long long)id);
		goto out;
	}
	st = pgn_msg_status(c->db, &id, 1, &s);
	if (st != PGN_OK) {
		code = cli_fail(c, st);
		goto out;
	}
	if (c->json)
		code = cli_json_print(pgn_msg_status_json(&s));
	else
		cli_print_status(&s, pgn_now_ms());
	code = cli_finish(code);
out:
	pgn_msg_status_release(&s, 1);
	cli_close(c);
	return code;
}

int
cmd_wait(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_wait};
	struct wait_opts o = {.timeout_ms = PGN_WAIT_DEFAULT_MS};
	struct pgn_wait w;
	const char *agent;
	int code;

	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	if (o.ack != 0 &&
	    (o.agent != NULL || o.from != NULL || o.reply_to != 0))
		return cli_usage(&c,
		    "--ack waits for one acknowledgement: it goes with --timeout only");
	if (o.ack != 0)
		return wait_ack(&c, o.ack, o.timeout_ms);
	agent = cli_agent(&c, o.agent);
	if (agent == NULL)
		return EXIT_USAGE;
	code = cli_open(&c);
	if (code == EXIT_OK) {
		memset(&w, 0, sizeof(w));
		w.claim.agent = agent;
		w.claim.route = "cli";
		w.claim.from = o.from;
		w.claim.reply_to = o.reply_to;
		w.claim.max = 1;
		w.timeout_ms = o.timeout_ms;
		code = cli_wait_print(&c, &w);
	}
	cli_close(&c);
	return code;
}

/* "woken T (age) by MECH" or "rung ..., unheard: ...", after a comma. */
static void
print_woken(const struct pgn_msg_status *s, int64_t now)
{
	char at[32], age[32];

	if (s->woken_ms == 0)
		return;
	pgn_format_time(s->woken_ms, at, sizeof(at));
	cli_age(s->woken_ms, now, age, sizeof(age));
	if (s->unheard)
		printf("rung %s (%s) by %s, unheard: no delivery within %ds",
		    at, age, cli_safe(s->woken_via), PGN_WAKE_HEARD_MS / 1000);
	else
		printf("woken %s (%s) by %s", at, age, cli_safe(s->woken_via));
}

/* "; acknowledged ...", "; overdue ...", "; asks ...": after the state. */
static void
print_ack(const struct pgn_msg_status *s, int64_t now)
{
	char at[32], age[32];

	if (s->acked_ms != 0) {
		pgn_format_time(s->acked_ms, at, sizeof(at));
		cli_age(s->acked_ms, now, age, sizeof(age));
		printf("; acknowledged %s (%s)", at, age);
		if (s->ack_reply != 0)
			printf(" by reply #%lld", (long long)s->ack_reply);
		else if (s->ack_text != NULL && s->ack_text[0] != '\0')
			printf(": %s", cli_safe(s->ack_text));
		return;
	}
	if (s->ack_ms == 0)
		return;
	if (s->overdue) {
		pgn_format_time(s->delivered_ms + s->ack_ms, at, sizeof(at));
		printf("; overdue: no acknowledgement since %s", at);
		if (s->reminded_ms != 0) {
			cli_age(s->reminded_ms, now, age, sizeof(age));
			printf(", reminded %s", age);
		}
		return;
	}
	if (s->delivered_ms == 0) {
		/* "30m", "2h", "90s": as --ack-within gave it */
		if (s->ack_ms % 3600000 == 0)
			printf("; asks for an acknowledgement within %lldh",
			    (long long)(s->ack_ms / 3600000));
		else if (s->ack_ms % 60000 == 0)
			printf("; asks for an acknowledgement within %lldm",
			    (long long)(s->ack_ms / 60000));
		else
			printf("; asks for an acknowledgement within %llds",
			    (long long)(s->ack_ms / 1000));
		printf(" of delivery");
		return;
	}
	pgn_format_time(s->delivered_ms + s->ack_ms, at, sizeof(at));
	printf("; awaits an acknowledgement by %s", at);
}

void
cli_print_status(const struct pgn_msg_status *s, int64_t now)
{
	char at[32], age[32];

	printf("#%lld %s -> %s", (long long)s->id, cli_safe(s->sender),
	    cli_safe(s->recipient));
	if (s->reply_to != 0)
		printf(" re #%lld", (long long)s->reply_to);
	/*
	 * A reply names its thread, the conversation's first message, when
	 * that is not the message it answers (decision 0157).
	 */
	if (s->thread != 0 && s->thread != s->id && s->thread != s->reply_to)
		printf(", thread #%lld", (long long)s->thread);
	/* As inbox marks them (decision 0158): normal goes unsaid. */
	if (s->priority != PGN_PRIORITY_NORMAL)
		printf(", %s%s%s",
		    s->priority == PGN_PRIORITY_URGENT ? cli_sgr(CLI_SGR_WARN) :
		                                         "",
		    pgn_priority_name(s->priority), cli_sgr(CLI_SGR_RESET));
	if (s->group[0] != '\0')
		printf(", to @%s", cli_safe(s->group));
	if (s->delivered_ms == 0) {
		pgn_format_time(s->created_ms, at, sizeof(at));
		cli_age(s->created_ms, now, age, sizeof(age));
		printf(": queued since %s (%s)", at, age);
		if (s->woken_ms != 0)
			printf(", ");
		print_woken(s, now);
		print_ack(s, now);
		putchar('\n');
		return;
	}
	pgn_format_time(s->delivered_ms, at, sizeof(at));
	cli_age(s->delivered_ms, now, age, sizeof(age));
	printf(": ");
	if (s->woken_ms != 0) {
		print_woken(s, now);
		printf(", ");
	}
	printf("delivered %s (%s) via %s", at, age, cli_safe(s->route));
	if (s->session[0] != '\0')
		printf(", session %s", cli_safe(s->session));
	if (s->host[0] != '\0')
		printf(", host %s", cli_safe(s->host));
	print_ack(s, now);
	putchar('\n');
}

int
cmd_status(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_status};
	static int64_t ids[PGN_MAX_STATUS_IDS];
	static struct pgn_msg_status out[PGN_MAX_STATUS_IDS];
	/* the unknown ids, "#N, " each: at most 21 digits and signs each */
	static char unknown_ids[PGN_MAX_STATUS_IDS * 24];
	size_t n, i, unknown = 0, len = 0;
	cJSON *arr;
	int64_t now;
	pgn_status st;
	int code;

	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind == argc)
		return cli_usage(&c, "name at least one message id");
	if (argc - optind > PGN_MAX_STATUS_IDS)
		return cli_usage(&c, "at most %d message ids at once",
		    PGN_MAX_STATUS_IDS);
	n = (size_t)(argc - optind);
	for (i = 0; i < n; i++) {
		const char *a = argv[optind + (int)i];

		if (a[0] == '#')
			a++; /* "#12", as the listings show it */
		if (pgn_parse_i64(a, 1, INT64_MAX, &ids[i]) != PGN_OK)
			return cli_usage(&c, "'%s': not a message id",
			    argv[optind + (int)i]);
	}
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	st = pgn_msg_status(c.db, ids, n, out);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	now = pgn_now_ms();
	arr = c.json ? cJSON_CreateArray() : NULL;
	for (i = 0; i < n; i++) {
		if (!out[i].found) {
			unknown++;
			len += (size_t)snprintf(unknown_ids + len,
			    sizeof(unknown_ids) - len, "%s#%lld",
			    len > 0 ? ", " : "", (long long)out[i].id);
		}
		if (c.json && arr != NULL)
			cJSON_AddItemToArray(arr, pgn_msg_status_json(&out[i]));
		else if (!c.json && out[i].found)
			cli_print_status(&out[i], now);
	}
	code = c.json ? cli_json_print(arr) : EXIT_OK;
	/* one line for them all, and exit 2 (decision 0205) */
	if (code == EXIT_OK && unknown > 0)
		code = cli_err(EXIT_USAGE,
		    "no message%s %s in scope '%s': check the id%s with pigeon audit --from NAME or pigeon inbox",
		    unknown == 1 ? "" : "s", unknown_ids,
		    c.scope[0] != '\0' ? c.scope : "global",
		    unknown == 1 ? "" : "s");
	code = cli_finish(code);
out:
	pgn_msg_status_release(out, n);
	cli_close(&c);
	return code;
}
