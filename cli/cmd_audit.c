/* pigeon audit: list deliveries, show one, verify the hash chain. */
#include <string.h>

#include "cli.h"

enum { OPT_AGENT = OPT_CMD, OPT_FROM, OPT_SINCE, OPT_LIMIT };

const struct cli_cmd cli_cmd_audit = {
    .name = "audit",
    .fn = cmd_audit,
    .summary = "inspect deliveries; verify the hash chain",
    .synopsis = {"[--agent NAME] [--from NAME] [--since T] [--limit K]",
        "show ID", "verify"},
    .text =
        "List the deliveries of the scope, newest first, each with a copy of the message; show one in full; or recompute the hash chain of the whole audit and report the first row that was edited, deleted or reordered (exit 1).",
    .opts = {{"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
                 "deliveries to this agent"},
        {"from", OPT_FROM, "NAME", CLI_K_AGENT, NULL,
            "deliveries from this sender"},
        {"since", OPT_SINCE, "T", CLI_K_NONE, NULL,
            "at or after T: an age (90s, 15m, 2h, 7d), a UTC date or time (2026-11-30, 2026-11-30T06:20:00Z) or @SECS"},
        {"limit", OPT_LIMIT, "K", CLI_K_NONE, NULL,
            "at most K rows (default 50, at most 10000)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
    .verbs = "show verify",
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct pgn_audit_filter *f = p;

	switch (ch) {
	case OPT_AGENT:
		f->recipient = arg;
		return 0;
	case OPT_FROM:
		f->sender = arg;
		return 0;
	case OPT_SINCE:
		return cli_since(c, arg, &f->since_ms);
	case OPT_LIMIT:
		return cli_limit(c, arg, &f->limit);
	}
	return cli_usage(c, "unknown option");
}

static cJSON *
json_delivery(const struct pgn_delivery *d)
{
	char hex[2 * PGN_HASH_BYTES + 1];
	static const char digits[] = "0123456789abcdef";
	cJSON *o;
	size_t i;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	for (i = 0; i < PGN_HASH_BYTES; i++) {
		hex[2 * i] = digits[d->hash[i] >> 4];
		hex[2 * i + 1] = digits[d->hash[i] & 15];
	}
	hex[2 * PGN_HASH_BYTES] = '\0';
	cJSON_AddNumberToObject(o, "id", (double)d->id);
	cJSON_AddNumberToObject(o, "message_id", (double)d->message_id);
	cJSON_AddStringToObject(o, "scope", d->scope);
	cJSON_AddStringToObject(o, "from", d->sender);
	cJSON_AddStringToObject(o, "to", d->recipient);
	cli_json_time(o, "created", d->created_ms);
	cli_json_time(o, "delivered", d->delivered_ms);
	if (d->reply_to != 0)
		cJSON_AddNumberToObject(o, "reply_to", (double)d->reply_to);
	else
		cJSON_AddNullToObject(o, "reply_to");
	if (d->thread != 0)
		cJSON_AddNumberToObject(o, "thread", (double)d->thread);
	else
		cJSON_AddNullToObject(o, "thread");
	cJSON_AddStringToObject(o, "route", d->route);
	cJSON_AddStringToObject(o, "host", d->host);
	cJSON_AddStringToObject(o, "session", d->session);
	cJSON_AddNumberToObject(o, "bytes", (double)d->bytes);
	cJSON_AddStringToObject(o, "hash", hex);
	cJSON_AddStringToObject(o, "body", d->body);
	cJSON_AddStringToObject(o, "priority", pgn_priority_name(d->priority));
	if (d->group != NULL)
		cJSON_AddStringToObject(o, "group", d->group);
	else
		cJSON_AddNullToObject(o, "group");
	return o;
}

static void
print_delivery(const struct pgn_delivery *d, int full)
{
	char at[32], made[32];
	size_t i;

	pgn_format_time(d->delivered_ms, at, sizeof(at));
	printf("#%lld %s %s -> %s via %s", (long long)d->id, at,
	    cli_safe(d->sender), cli_safe(d->recipient), cli_safe(d->route));
	if (d->host[0] != '\0')
		printf(" (%s %s)", cli_safe(d->host), cli_safe(d->session));
	printf(", message #%lld", (long long)d->message_id);
	if (d->reply_to != 0)
		printf(" re #%lld", (long long)d->reply_to);
	if (d->thread != 0 && d->thread != d->message_id &&
	    d->thread != d->reply_to)
		printf(", thread #%lld", (long long)d->thread);
	/* Normal is the default and goes unsaid (decision 0158). */
	if (d->priority != PGN_PRIORITY_NORMAL)
		printf(", %s", pgn_priority_name(d->priority));
	if (d->group != NULL)
		printf(", to @%s", cli_safe(d->group));
	printf(", %lld bytes\n", (long long)d->bytes);
	if (full) {
		pgn_format_time(d->created_ms, made, sizeof(made));
		printf("  scope:   %s\n  sent:    %s\n  hash:    ",
		    d->scope[0] ? cli_safe(d->scope) : "global", made);
		for (i = 0; i < PGN_HASH_BYTES; i++)
			printf("%02x", d->hash[i]);
		printf("\n");
	}
	cli_print_body(stdout, d->body);
}

static int
print_list(struct cli *c, const struct pgn_deliveries *d, size_t limit)
{
	cJSON *arr;
	size_t i;

	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < d->n; i++)
			cJSON_AddItemToArray(arr, json_delivery(&d->v[i]));
		return cli_json_print(arr);
	}
	if (d->n == 0)
		printf("no deliveries\n");
	for (i = 0; i < d->n; i++)
		print_delivery(&d->v[i], 0);
	if (d->n == limit)
		printf("(the newest %zu shown; --limit K shows more)\n", limit);
	return EXIT_OK;
}

static int
verify(struct cli *c)
{
	int64_t checked = 0, bad = 0;
	pgn_status st;
	cJSON *o;

	st = pgn_audit_verify(c->db, &checked, &bad);
	if (st != PGN_OK && st != PGN_ETAMPER)
		return cli_fail(c, st);
	if (c->json) {
		o = cJSON_CreateObject();
		cJSON_AddBoolToObject(o, "ok", st == PGN_OK);
		cJSON_AddNumberToObject(o, "rows", (double)checked);
		if (st != PGN_OK) {
			cJSON_AddNumberToObject(o, "bad", (double)bad);
			cJSON_AddStringToObject(o, "error", cli_errmsg(c->db));
		}
		if (cli_json_print(o) != EXIT_OK)
			return EXIT_FAIL;
	} else if (st == PGN_OK) {
		printf("%saudit chain intact%s: %lld deliveries verified\n",
		    cli_sgr(CLI_SGR_OK), cli_sgr(CLI_SGR_RESET),
		    (long long)checked);
	}
	if (st != PGN_OK)
		return cli_err(EXIT_FAIL, "%s", cli_errmsg(c->db));
	return EXIT_OK;
}

int
cmd_audit(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_audit};
	struct pgn_audit_filter f;
	struct pgn_deliveries d = {0};
	const char *verb = NULL;
	int64_t id = 0;
	pgn_status st;
	int code;

	memset(&f, 0, sizeof(f));
	code = cli_parse(&c, argc, argv, opt, &f);
	if (code >= 0)
		return code;
	if (optind < argc)
		verb = argv[optind++];
	if (verb != NULL && strcmp(verb, "show") == 0) {
		if (argc - optind != 1)
			return cli_usage(&c, "audit show takes one ID");
		if (pgn_parse_i64(argv[optind], 1, INT64_MAX, &id) != PGN_OK)
			return cli_usage(&c, "'%s' is not a delivery id",
			    argv[optind]);
	} else if (verb != NULL && strcmp(verb, "verify") == 0) {
		if (optind < argc)
			return cli_usage(&c, "audit verify takes no argument");
	} else if (verb != NULL) {
		return cli_usage(&c, "unknown action '%s': say show or verify",
		    verb);
	}
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (verb != NULL && strcmp(verb, "verify") == 0) {
		code = cli_finish(verify(&c));
		goto out;
	}
	st = id != 0 ? pgn_audit_get(c.db, id, &d) :
	               pgn_audit_list(c.db, &f, &d);
	if (st != PGN_OK) {
		code = cli_fail(&c, st);
		goto out;
	}
	if (id != 0 && c.json)
		code = cli_json_print(json_delivery(&d.v[0]));
	else if (id != 0)
		print_delivery(&d.v[0], 1);
	else
		code = print_list(&c, &d, f.limit ? f.limit : PGN_DEFAULT_LIST);
	code = cli_finish(code);
out:
	pgn_deliveries_release(&d);
	cli_close(&c);
	return code;
}
