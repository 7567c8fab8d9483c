/* pigeon send: queue a message for one or more agents. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_TO = OPT_CMD,
	OPT_FROM,
	OPT_REPLY,
	OPT_CREATE,
	OPT_WAIT,
	OPT_TIMEOUT,
	OPT_ACK,
	OPT_ACK_WITHIN,
	OPT_PRIORITY
};

const struct cli_cmd cli_cmd_send = {
    .name = "send",
    .fn = cmd_send,
    .summary = "queue a message for one or more agents",
    .synopsis =
        {"--to NAME[,NAME...] [--from NAME] [--reply-to ID] [--priority urgent|normal|low] [--create] [--ack [--ack-within D]] [--wait-reply [--timeout S]] [TEXT... | -]"},
    .text =
        "Queue a message (at most 4096 bytes of UTF-8) for each named agent of the scope; 'all' names every other agent, '@NAME' every other member of group NAME (pigeon group). The body is TEXT, or standard input when TEXT is absent or '-'. Prints the id queued for each.\n\n"
        "--priority urgent puts the message first and marks it, and it is delivered after the agent's next tool call (at most 20 urgent messages from one sender wait for one agent); low waits for the agent's next session start, prompt or read, and never keeps it working or wakes it.\n\n"
        "Inside an agent's session ($PIGEON_SESSION names a session the database binds to an agent) the message is from that agent, and --from may name no other (exit 2).\n\n"
        "With --ack the recipient is asked to acknowledge the message within D of its delivery (default 30m; 1s to 7d, as 90s, 15m, 2h, 7d): the text it is shown says how (pigeon ack ID [TEXT], or a reply with --reply-to ID). Past that without an acknowledgement, it is shown once more at its next prompt or session start, and pigeon status says overdue.\n\n"
        "With --wait-reply (one recipient, and the sender an agent), then wait for the reply to it from that recipient and claim and print it as pigeon wait does; exit 3 if none came within the timeout.",
    .opts = {{"to", OPT_TO, "NAME,...", CLI_K_AGENTS, NULL,
                 "recipients (repeatable)"},
        {"from", OPT_FROM, "NAME", CLI_K_AGENT, NULL,
            "sender (default: $PIGEON_SESSION's agent, else $PIGEON_AGENT, else 'user')"},
        {"reply-to", OPT_REPLY, "ID", CLI_K_NONE, NULL,
            "the message this answers"},
        {"create", OPT_CREATE, NULL, CLI_K_NONE, NULL,
            "queue for names not yet known (delivered at their first session)"},
        {"wait-reply", OPT_WAIT, NULL, CLI_K_NONE, NULL,
            "wait for the reply (the sender: as for --from, never 'user')"},
        {"timeout", OPT_TIMEOUT, "S", CLI_K_NONE, NULL,
            "give up after S seconds (default 100, at most 3600)"},
        {"ack", OPT_ACK, NULL, CLI_K_NONE, NULL,
            "ask the recipient to acknowledge it"},
        {"ack-within", OPT_ACK_WITHIN, "D", CLI_K_NONE, NULL,
            "within D of its delivery (default 30m, 1s to 7d)"},
        {"priority", OPT_PRIORITY, "P", CLI_K_NONE, NULL,
            "urgent, normal (the default) or low"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

struct send_opts {
	const char *to[PGN_MAX_RECIPIENTS];
	size_t nto;
	char names[PGN_MAX_RECIPIENTS][PGN_MAX_NAME + 2]; /* "@" + a group */
	const char *from;
	int64_t reply_to;
	int create;
	int wait_reply;
	int64_t timeout_ms; /* 0: not given */
	int ack;            /* --ack */
	int64_t ack_ms;     /* --ack-within, 0: not given */
	int priority;
};

/* Split one --to value at commas into o->names. */
static int
take_to(struct cli *c, struct send_opts *o, const char *arg)
{
	const char *p, *end;
	size_t n;

	for (p = arg;; p = end + 1) {
		end = strchr(p, ',');
		n = end != NULL ? (size_t)(end - p) : strlen(p);
		if (n == 0)
			return cli_usage(c, "--to '%s': empty name", arg);
		if (n > PGN_MAX_NAME + (*p == '@'))
			return cli_usage(c,
			    "--to '%.*s': a name has at most %d characters",
			    (int)n, p, PGN_MAX_NAME);
		if (o->nto == PGN_MAX_RECIPIENTS)
			return cli_usage(c, "at most %d recipients",
			    PGN_MAX_RECIPIENTS);
		memcpy(o->names[o->nto], p, n);
		o->names[o->nto][n] = '\0';
		o->to[o->nto] = o->names[o->nto];
		o->nto++;
		if (end == NULL)
			return 0;
	}
}

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct send_opts *o = p;
	struct pgn_err err;
	pgn_status st;

	switch (ch) {
	case OPT_TO:
		return take_to(c, o, arg);
	case OPT_FROM:
		o->from = arg;
		return 0;
	case OPT_REPLY:
		st = pgn_parse_i64(arg, 1, INT64_MAX, &o->reply_to);
		if (st != PGN_OK)
			return cli_usage(c, "--reply-to '%s': not a message id",
			    arg);
		return 0;
	case OPT_CREATE:
		o->create = 1;
		return 0;
	case OPT_WAIT:
		o->wait_reply = 1;
		return 0;
	case OPT_TIMEOUT:
		return cli_timeout(c, arg, &o->timeout_ms);
	case OPT_ACK:
		o->ack = 1;
		return 0;
	case OPT_ACK_WITHIN:
		return cli_duration(c, "--ack-within", arg, PGN_ACK_MIN_MS,
		    PGN_ACK_MAX_MS, &o->ack_ms);
	case OPT_PRIORITY:
		if (pgn_priority_parse(arg, &o->priority, &err) != PGN_OK)
			return cli_usage(c, "--priority: %s", err.msg);
		return 0;
	}
	return cli_usage(c, "unknown option");
}

int
cmd_send(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_send};
	struct pgn_send req;
	static struct pgn_sent sent[PGN_MAX_LIST];
	static struct send_opts o;
	/* Room for trailing newlines beyond the limit; full means too big. */
	char body[PGN_MAX_BODY + CLI_TEXT_SLACK];
	size_t len = 0, i, nsent = 0;
	const char *from, *session;
	cJSON *arr, *item;
	pgn_status st;
	int code;

	memset(&o, 0, sizeof(o));
	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		goto out;
	if (o.nto == 0) {
		code = cli_usage(&c, "no recipient: name one with --to NAME");
		goto out;
	}
	if (o.ack_ms != 0 && !o.ack) {
		code = cli_usage(&c, "--ack-within goes with --ack");
		goto out;
	}
	if (o.timeout_ms != 0 && !o.wait_reply) {
		code = cli_usage(&c, "--timeout goes with --wait-reply");
		goto out;
	}
	if (o.wait_reply &&
	    (o.nto != 1 || strcmp(o.to[0], "all") == 0 || o.to[0][0] == '@')) {
		code = cli_usage(&c,
		    "--wait-reply waits for one reply: name one recipient with --to NAME");
		goto out;
	}
	code = cli_read_text(argc, argv, optind, body, sizeof(body), &len);
	if (code != EXIT_OK)
		goto out;
	if (len > PGN_MAX_BODY) {
		code = cli_usage(&c,
		    "message body is over the limit of %d bytes: write it to a file and send the file's path",
		    PGN_MAX_BODY);
		goto out;
	}
	/* Inside a session, its agent sends (docs/decisions/0134). */
	session = getenv("PIGEON_SESSION");
	from = getenv("PIGEON_AGENT");
	if (o.wait_reply && (o.from == NULL || *o.from == '\0') &&
	    (from == NULL || *from == '\0') &&
	    (session == NULL || *session == '\0')) {
		code = cli_usage(&c,
		    "--wait-reply needs the sender's mailbox: name it with --from NAME or PIGEON_AGENT");
		goto out;
	}
	if ((from == NULL || *from == '\0') && !o.wait_reply)
		from = "user";
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	cli_autoprune(&c);
	memset(&req, 0, sizeof(req));
	req.from = o.from;
	req.from_default = from;
	req.session = session;
	/* The reply goes to the sender's mailbox: it must exist first. */
	req.need_mailbox = o.wait_reply;
	req.to = o.to;
	req.nto = o.nto;
	req.body = body;
	req.body_len = len;
	req.reply_to = o.reply_to;
	req.create = o.create;
	req.ack_ms = !o.ack ? 0 : o.ack_ms != 0 ? o.ack_ms : PGN_ACK_DEFAULT_MS;
	req.priority = o.priority;
	st = pgn_send(c.db, &req, sent, sizeof(sent) / sizeof(sent[0]), &nsent);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	if (c.json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < nsent; i++) {
			item = cJSON_CreateObject();
			cJSON_AddNumberToObject(item, "id", (double)sent[i].id);
			cJSON_AddStringToObject(item, "to", sent[i].to);
			cJSON_AddItemToArray(arr, item);
		}
		code = cli_json_print(arr);
	} else {
		for (i = 0; i < nsent; i++)
			printf("queued #%lld for %s\n", (long long)sent[i].id,
			    cli_safe(sent[i].to));
	}
	code = cli_finish(code);
	if (code == EXIT_OK && o.wait_reply && nsent == 1) {
		struct pgn_wait w;

		memset(&w, 0, sizeof(w));
		w.claim.agent = sent[0].from;
		w.claim.route = "cli";
		w.claim.reply_to = sent[0].id;
		w.claim.max = 1;
		w.timeout_ms =
		    o.timeout_ms != 0 ? o.timeout_ms : PGN_WAIT_DEFAULT_MS;
		code = cli_wait_print(&c, &w);
	}
out:
	cli_close(&c);
	return code;
}
