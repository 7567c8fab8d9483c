/* pigeon journal: one agent's journal, optionally followed live. */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define FOLLOW_POLL_MS 200 /* --follow: how often to look */

enum { OPT_FOLLOW = 'f', OPT_SINCE = OPT_CMD, OPT_LIMIT };

const struct cli_cmd cli_cmd_journal = {
    .name = "journal",
    .fn = cmd_journal,
    .summary = "one agent's journal",
    .synopsis = {"NAME [--follow] [--since T] [--limit K]"},
    .text =
        "Print the agent's newest journal entries, newest last: created, sent, delivered, bound to a session, renamed, removed, acked, reminded, leases taken, renewed, refused, denied, released and expired, groups joined and left, woken (a doorbell rang its session, or a ring went unheard). A first line says how many earlier entries were left out. With --follow, keep printing new entries until interrupted (--json prints one object per line); if the database file is replaced or removed meanwhile, it stops with exit 1.",
    .opts =
        {{"since", OPT_SINCE, "T", CLI_K_NONE, NULL,
             "at or after T: an age (90s, 15m, 2h, 7d), a UTC date or time (2026-11-30, 2026-11-30T06:20:00Z) or @SECS"},
            {"limit", OPT_LIMIT, "K", CLI_K_NONE, NULL,
                "the newest K entries (default 50, at most 10000)"},
            {"follow", OPT_FOLLOW, NULL, CLI_K_NONE, NULL,
                "wait for new entries"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON | CLI_COLOR,
    .operand = CLI_K_AGENT,
};

struct journal_opts {
	int follow;
	int64_t since_ms;
	size_t limit;
};

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct journal_opts *o = p;

	switch (ch) {
	case OPT_FOLLOW:
		o->follow = 1;
		return 0;
	case OPT_SINCE:
		return cli_since(c, arg, &o->since_ms);
	case OPT_LIMIT:
		return cli_limit(c, arg, &o->limit);
	}
	return cli_usage(c, "unknown option");
}

static cJSON *
json_entry(const struct pgn_entry *e)
{
	cJSON *o;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	cJSON_AddNumberToObject(o, "id", (double)e->id);
	cli_json_time(o, "at", e->at_ms);
	cJSON_AddStringToObject(o, "kind", e->kind);
	if (e->message_id != 0)
		cJSON_AddNumberToObject(o, "message_id", (double)e->message_id);
	else
		cJSON_AddNullToObject(o, "message_id");
	cJSON_AddStringToObject(o, "peer", e->peer);
	cJSON_AddStringToObject(o, "detail", e->detail);
	if (e->body[0] != '\0')
		cJSON_AddStringToObject(o, "body", e->body);
	return o;
}

/* The cut as JSON fields: "earlier" left out, exact below the cap. */
static void
json_cut(cJSON *o, int64_t earlier)
{
	cJSON_AddNumberToObject(o, "earlier", (double)earlier);
	cJSON_AddBoolToObject(o, "earlier_exact", earlier < PGN_MAX_EARLIER);
}

static void
print_entry(const struct pgn_entry *e)
{
	char at[32];

	pgn_format_time(e->at_ms, at, sizeof(at));
	if (strcmp(e->kind, "sent") == 0)
		printf("%s %-9s #%lld to %s\n", at, e->kind,
		    (long long)e->message_id, cli_safe(e->peer));
	else if (strcmp(e->kind, "delivered") == 0)
		printf("%s %-9s #%lld from %s via %s\n", at, e->kind,
		    (long long)e->message_id, cli_safe(e->peer),
		    cli_safe(e->detail));
	else if (strcmp(e->kind, "acked") == 0 && e->peer[0] != '\0')
		printf("%s %-9s #%lld from %s\n", at, e->kind,
		    (long long)e->message_id, cli_safe(e->peer));
	else if (strcmp(e->kind, "acked") == 0)
		printf("%s %-9s #%lld by a reply\n", at, e->kind,
		    (long long)e->message_id);
	else if (strcmp(e->kind, "reminded") == 0)
		printf(
		    "%s %-9s #%lld from %s via %s: its acknowledgement is overdue\n",
		    at, e->kind, (long long)e->message_id, cli_safe(e->peer),
		    cli_safe(e->detail));
	else if (strcmp(e->kind, "woken") == 0 && e->message_id != 0)
		printf("%s %-9s #%lld rang session %s by %s\n", at, e->kind,
		    (long long)e->message_id, cli_safe(e->peer),
		    cli_safe(e->detail));
	else if (strcmp(e->kind, "woken") == 0)
		printf("%s %-9s session %s %s\n", at, e->kind,
		    cli_safe(e->peer), cli_safe(e->detail));
	else if (e->detail[0] != '\0')
		printf("%s %-9s %s\n", at, cli_safe(e->kind),
		    cli_safe(e->detail));
	else
		printf("%s %s\n", at, cli_safe(e->kind));
	if (e->body[0] != '\0')
		cli_print_body(stdout, e->body);
}

/*
 * One listing: the first (with its cut, if any) as an array or lines, or
 * what --follow found since. 'lines': --follow, one JSON object a line.
 */
static int
print_entries(struct cli *c, const struct pgn_entries *e, int lines)
{
	cJSON *doc, *arr, *o;
	size_t i;
	int code = EXIT_OK;

	if (c->json && !lines) {
		doc = cJSON_CreateObject();
		arr = cJSON_AddArrayToObject(doc, "entries");
		for (i = 0; arr != NULL && i < e->n; i++)
			cJSON_AddItemToArray(arr, json_entry(&e->v[i]));
		if (doc != NULL)
			json_cut(doc, e->earlier);
		return cli_json_print(doc);
	}
	if (e->earlier > 0 && c->json) {
		o = cJSON_CreateObject();
		if (o != NULL)
			json_cut(o, e->earlier);
		code = cli_json_print(o);
	} else if (e->earlier > 0) {
		printf(
		    "(%s%lld earlier entries not shown; use --limit K or --since T)\n",
		    e->earlier < PGN_MAX_EARLIER ? "" : "at least ",
		    (long long)e->earlier);
	}
	for (i = 0; i < e->n && code == EXIT_OK; i++) {
		if (c->json)
			code = cli_json_print(json_entry(&e->v[i]));
		else
			print_entry(&e->v[i]);
	}
	return code;
}

int
cmd_journal(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_journal};
	struct journal_opts o = {0};
	struct pgn_entries e = {0};
	struct timespec ts = {0, FOLLOW_POLL_MS * 1000000L};
	struct sigaction sa;
	int64_t after = 0;
	const char *name;
	pgn_status st;
	int code, first = 1;

	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	if (argc - optind != 1)
		return cli_usage(&c, "name one agent");
	name = argv[optind];
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (o.follow) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	do {
		if (!first && pgn_db_check_file(c.db) != PGN_OK) {
			/* a replaced file: following it would show nothing */
			code = cli_err(EXIT_FAIL,
			    "%s: run pigeon journal %s --follow again to follow the new one",
			    cli_errmsg(c.db), name);
			goto out;
		}
		st = first ?
		    pgn_journal_tail(c.db, name, o.since_ms, o.limit, &e) :
		    pgn_journal_list(c.db, name, after, 0, &e);
		if (st != PGN_OK) {
			code = cli_fail(&c, st);
			goto out;
		}
		/* --follow goes on after the newest entry, shown or not */
		if (first)
			after = e.newest;
		else if (e.n > 0)
			after = e.v[e.n - 1].id;
		code = print_entries(&c, &e, o.follow);
		pgn_entries_release(&e);
		code = cli_finish(code);
		if (code != EXIT_OK)
			break;
		first = 0;
		if (o.follow && !stop)
			nanosleep(&ts, NULL);
	} while (o.follow && !stop);
out:
	pgn_entries_release(&e);
	cli_close(&c);
	return code;
}
