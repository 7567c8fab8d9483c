/* pigeon search: the scope's messages whose bodies hold some words. */
#include <string.h>

#include "cli.h"
#include "pigeon/search.h"

enum { OPT_AGENT = OPT_CMD, OPT_SINCE, OPT_LIMIT };

const struct cli_cmd cli_cmd_search = {
    .name = "search",
    .fn = cmd_search,
    .summary = "find messages by the words of their bodies",
    .synopsis = {"TEXT... [--agent NAME] [--since T] [--limit K]"},
    .text =
        "List the messages of the scope whose bodies hold every word of TEXT, newest first: queued or delivered, one line per recipient. Words match whole words, in any case, without stemming; quotes and other punctuation are no syntax. At most 1024 bytes and 32 words.",
    .opts = {{"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
                 "messages sent by or to this agent"},
        {"since", OPT_SINCE, "T", CLI_K_NONE, NULL,
            "sent at or after T: an age (90s, 15m, 2h, 7d), a UTC date or time (2026-11-30, 2026-11-30T06:20:00Z) or @SECS"},
        {"limit", OPT_LIMIT, "K", CLI_K_NONE, NULL,
            "at most K messages (default 50, at most 10000)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct pgn_search *q = p;

	switch (ch) {
	case OPT_AGENT:
		q->agent = arg;
		return 0;
	case OPT_SINCE:
		return cli_since(c, arg, &q->since_ms);
	case OPT_LIMIT:
		return cli_limit(c, arg, &q->limit);
	}
	return cli_usage(c, "unknown option");
}

static int
print_hits(struct cli *c, const struct pgn_hits *h, size_t limit)
{
	char at[32];
	cJSON *arr;
	size_t i;

	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < h->n; i++)
			arr = cli_json_push(arr, pgn_hit_json(&h->v[i], 0));
		return cli_json_print(arr);
	}
	if (h->n == 0)
		printf("no messages found\n");
	for (i = 0; i < h->n; i++) {
		pgn_format_time(h->v[i].created_ms, at, sizeof(at));
		printf("#%lld %s %s -> %s", (long long)h->v[i].id, at,
		    cli_safe(h->v[i].sender), cli_safe(h->v[i].recipient));
		if (h->v[i].reply_to != 0)
			printf(" re #%lld", (long long)h->v[i].reply_to);
		printf(", %s\n",
		    h->v[i].delivered_ms != 0 ? "delivered" : "queued");
		cli_print_body(stdout, h->v[i].body);
	}
	if (h->n == limit)
		printf("(the newest %zu shown; --limit K shows more)\n", limit);
	return EXIT_OK;
}

int
cmd_search(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_search};
	struct pgn_search q;
	struct pgn_hits h = {0};
	char text[PGN_MAX_SEARCH_TEXT + 1];
	size_t len = 0, n;
	int i;
	pgn_status st;
	int code;

	memset(&q, 0, sizeof(q));
	code = cli_parse(&c, argc, argv, opt, &q);
	if (code >= 0)
		return code;
	if (optind >= argc)
		return cli_usage(&c, "search takes the TEXT to find");
	/* The words of every operand, one space between. */
	for (i = optind, n = 0; i < argc; i++)
		n += strlen(argv[i]) + (i > optind);
	if (n > PGN_MAX_SEARCH_TEXT)
		return cli_usage(&c, "search text of %zu bytes: at most %d", n,
		    PGN_MAX_SEARCH_TEXT);
	for (text[0] = '\0'; optind < argc; optind++) {
		n = strlen(argv[optind]);
		if (len > 0)
			text[len++] = ' ';
		memcpy(text + len, argv[optind], n + 1);
		len += n;
	}
	q.text = text;
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	st = pgn_search(c.db, &q, &h);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	code = cli_finish(
	    print_hits(&c, &h, q.limit ? q.limit : PGN_DEFAULT_LIST));
out:
	pgn_hits_release(&h);
	cli_close(&c);
	return code;
}
