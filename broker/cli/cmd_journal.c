/* pigeon journal: one agent's journal, optionally followed live. */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define FOLLOW_POLL_MS 200 /* --follow: how often to look */

static const char usage[] =
    "usage: pigeon journal NAME [--follow]\n\n"
    "Print the agent's journal, oldest first: created, sent, delivered,\n"
    "bound to a session, renamed, removed. With --follow, keep printing new\n"
    "entries until interrupted (--json prints one object per line).\n\n"
    "  --follow, -f     wait for new entries\n"
    "  --db PATH, --project DIR, --json, -h/--help\n";

enum { OPT_FOLLOW = 'f' };

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
	(void)arg;
	if (ch == OPT_FOLLOW) {
		*(int *)p = 1;
		return 0;
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

static void
print_entry(const struct pgn_entry *e)
{
	char at[32];

	pgn_format_time(e->at_ms, at, sizeof(at));
	if (strcmp(e->kind, "sent") == 0)
		printf("%s %-9s #%lld to %s\n", at, e->kind,
		    (long long)e->message_id, e->peer);
	else if (strcmp(e->kind, "delivered") == 0)
		printf("%s %-9s #%lld from %s via %s\n", at, e->kind,
		    (long long)e->message_id, e->peer, e->detail);
	else if (e->detail[0] != '\0')
		printf("%s %-9s %s\n", at, e->kind, e->detail);
	else
		printf("%s %s\n", at, e->kind);
	if (e->body[0] != '\0')
		cli_print_body(stdout, e->body);
}

static int
print_entries(struct cli *c, const struct pgn_entries *e, int lines)
{
	cJSON *arr;
	size_t i;
	int code = EXIT_OK;

	if (c->json && !lines) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < e->n; i++)
			cJSON_AddItemToArray(arr, json_entry(&e->v[i]));
		return cli_json_print(arr);
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
	static const struct option longopts[] = {{"follow", no_argument, NULL,
	                                             OPT_FOLLOW},
	    CLI_COMMON_OPTS, {NULL, 0, NULL, 0}};
	struct cli c = {.cmd = "journal", .usage = usage};
	struct pgn_entries e = {0};
	struct timespec ts = {0, FOLLOW_POLL_MS * 1000000L};
	struct sigaction sa;
	int64_t after = 0;
	const char *name;
	pgn_status st;
	int code, follow = 0;

	code = cli_parse(&c, argc, argv, "hf", longopts, opt, &follow);
	if (code >= 0)
		return code;
	if (argc - optind != 1)
		return cli_usage(&c, "name one agent");
	name = argv[optind];
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	if (follow) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	do {
		st = pgn_journal_list(c.db, name, after, 0, &e);
		if (st != PGN_OK) {
			code = cli_fail(&c, st);
			goto out;
		}
		if (e.n > 0)
			after = e.v[e.n - 1].id;
		code = print_entries(&c, &e, follow);
		pgn_entries_release(&e);
		code = cli_finish(code);
		if (code != EXIT_OK || ferror(stdout))
			break;
		if (follow && !stop)
			nanosleep(&ts, NULL);
	} while (follow && !stop);
out:
	pgn_entries_release(&e);
	cli_close(&c);
	return code;
}
