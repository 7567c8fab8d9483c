/*
 * pigeon ack: acknowledge a message as its recipient; pigeon thread: a
 * conversation in order, with each message's delivery and
 * acknowledgement (decision 0157). The rules are the library's
 * (broker/src/store/ack.c).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const struct cli_cmd cli_cmd_ack = {
    .name = "ack",
    .fn = cmd_ack,
    .summary = "acknowledge a message sent to you",
    .synopsis = {"[--from NAME] ID [TEXT...]"},
    .text =
        "Acknowledge message ID, which was sent to you (pigeon send --ack asks for it), with an optional TEXT (at most 1024 bytes). Only its recipient may (exit 2 otherwise); a reply with pigeon send --reply-to ID acknowledges it too. Acknowledging again changes nothing: the first acknowledgement is kept, and a line says so.\n\n"
        "Who acknowledges is found as pigeon send finds its sender: inside an agent's session, that agent; else --from, else $PIGEON_AGENT.",
    .opts = {{"from", OPT_CMD, "NAME", CLI_K_AGENT, NULL,
        "the recipient (default: $PIGEON_SESSION's agent, else $PIGEON_AGENT)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

const struct cli_cmd cli_cmd_thread = {
    .name = "thread",
    .fn = cmd_thread,
    .summary = "a conversation in order, with delivery and acknowledgement",
    .synopsis = {"ID"},
    .text =
        "The thread message ID belongs to (its first message, and every reply in it), oldest first, each message as pigeon status shows it, then its text, indented. At most 1000 messages; a longer thread says so.",
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

int
cli_duration(struct cli *c, const char *name, const char *arg, int64_t min,
    int64_t max, int64_t *ms)
{
	size_t n = strlen(arg);
	int64_t v;

	/* An age of pgn_parse_time ("90s", "15m", "2h", "7d"), from 0. */
	if (n < 2 || strchr("smhd", arg[n - 1]) == NULL ||
	    pgn_parse_time(arg, 0, &v) != PGN_OK || -v < min || -v > max)
		return cli_usage(c,
		    "%s '%s': a duration from %llds to %lldd, as 90s, 15m, 2h or 7d",
		    name, arg, (long long)(min / 1000),
		    (long long)(max / 86400000));
	*ms = -v;
	return 0;
}

struct ack_opts {
	const char *from;
};

static int
ack_opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct ack_opts *o = p;

	if (ch == OPT_CMD) {
		o->from = arg;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

/* "12" or "#12", as the listings show it; 0 when it is no id. */
static int64_t
msg_id(const char *a)
{
	int64_t id;

	if (a[0] == '#')
		a++;
	return pgn_parse_i64(a, 1, INT64_MAX, &id) == PGN_OK ? id : 0;
}

int
cmd_ack(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_ack};
	struct ack_opts o = {NULL};
	struct pgn_ack req;
	struct pgn_acked out;
	char text[PGN_MAX_ACK_TEXT + 2], at[32];
	size_t len = 0, n;
	int64_t id;
	pgn_status st;
	cJSON *j;
	int code, k;

	code = cli_parse(&c, argc, argv, ack_opt, &o);
	if (code >= 0)
		return code;
	if (optind == argc)
		return cli_usage(&c, "name the message to acknowledge: ID");
	id = msg_id(argv[optind]);
	if (id == 0)
		return cli_usage(&c, "'%s': not a message id", argv[optind]);
	/* TEXT from the arguments only: an agent's shell has no stdin. */
	for (k = optind + 1; k < argc; k++) {
		n = strlen(argv[k]);
		if (len + n + 1 > PGN_MAX_ACK_TEXT)
			return cli_usage(&c,
			    "the acknowledgement's text is over %d bytes",
			    PGN_MAX_ACK_TEXT);
		if (len > 0)
			text[len++] = ' ';
		memcpy(text + len, argv[k], n);
		len += n;
	}
	text[len] = '\0';
	memset(&req, 0, sizeof(req));
	req.id = id;
	req.text = len > 0 ? text : NULL;
	req.text_len = len;
	req.from = o.from;
	req.session = getenv("PIGEON_SESSION");
	req.from_default = getenv("PIGEON_AGENT");
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	st = pgn_ack(c.db, &req, &out);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	pgn_format_time(out.acked_ms, at, sizeof(at));
	if (c.json) {
		j = cJSON_CreateObject();
		if (j != NULL) {
			cJSON_AddNumberToObject(j, "id", (double)id);
			cJSON_AddStringToObject(j, "by", out.agent);
			cJSON_AddStringToObject(j, "from", out.sender);
			cli_json_time(j, "acknowledged", out.acked_ms);
			cJSON_AddBoolToObject(j, "already", out.already);
		}
		code = cli_json_print(j);
	} else if (out.already) {
		printf(
		    "#%lld was already acknowledged at %s: the first acknowledgement is kept\n",
		    (long long)id, at);
	} else {
		printf("acknowledged #%lld from %s\n", (long long)id,
		    cli_safe(out.sender));
	}
	code = cli_finish(code);
out:
	cli_close(&c);
	return code;
}

int
cmd_thread(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_thread};
	struct pgn_msg_status *v = NULL;
	size_t n = 0, i;
	int64_t id, now;
	pgn_status st;
	cJSON *arr;
	int code, more = 0;

	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind == argc)
		return cli_usage(&c, "name a message of the thread: ID");
	if (optind + 1 < argc)
		return cli_usage(&c, "unexpected argument '%s'",
		    argv[optind + 1]);
	id = msg_id(argv[optind]);
	if (id == 0)
		return cli_usage(&c, "'%s': not a message id", argv[optind]);
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	st = pgn_thread(c.db, id, &v, &n, &more);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	if (c.json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < n; i++)
			cJSON_AddItemToArray(arr, pgn_msg_status_json(&v[i]));
		code = cli_json_print(arr);
	} else {
		now = pgn_now_ms();
		printf("thread #%lld: %zu message%s%s\n",
		    (long long)(n > 0 ? v[0].thread : id), n, n == 1 ? "" : "s",
		    more ? " (the first ones: more follow)" : "");
		for (i = 0; i < n; i++) {
			cli_print_status(&v[i], now);
			if (v[i].body != NULL)
				cli_print_body(stdout, v[i].body);
		}
		code = EXIT_OK;
	}
	code = cli_finish(code);
out:
	pgn_msg_status_release(v, n);
	free(v);
	cli_close(&c);
	return code;
}
