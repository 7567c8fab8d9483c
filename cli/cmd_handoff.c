/* pigeon handoff: leave a baton for the next new conversation; list, show,
 * drop. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pigeon/handoff.h"

enum { OPT_TO = OPT_CMD, OPT_AGENT, OPT_DRY, OPT_DIGEST };

const struct cli_cmd cli_cmd_handoff = {
    .name = "handoff",
    .fn = cmd_handoff,
    .summary = "leave a baton for the next new conversation",
    .synopsis =
        {"[--to NAME] [--agent NAME] [--digest] [--dry-run] [TEXT... | -]",
            "list", "show ID", "drop ID"},
    .text =
        "Leave a baton: a note for the next new conversation of the scope (of any agent), or with --to for that agent's next new conversation. It is taken once, by the session start of a new conversation (Cursor's sessionStart, Claude Code's and Gemini CLI's startup or clear, Codex's startup; never a resume, a compaction or a background agent), and shown to its model as data from the sender. Notes for the same target left within an hour of the last one are merged into one baton; a baton not taken within 24 hours expires (listed, never delivered). The text is TEXT, or standard input when TEXT is absent or '-': at most 4096 bytes of UTF-8, the merged notes included.\n\n"
        "The sender is the current session: $PIGEON_SESSION, which the session start hook exports where the host lets it (Claude Code), else the most recently active session of --agent NAME or $PIGEON_AGENT.\n\n"
        "list prints the scope's batons, newest first, with their state (open, taken, dropped or expired); show ID one in full; drop ID drops an open baton: kept and listed, never delivered.",
    .opts = {{"to", OPT_TO, "NAME", CLI_K_AGENT, NULL,
                 "the agent whose next new conversation takes it"},
        {"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
            "who leaves it (default: $PIGEON_SESSION's agent, else $PIGEON_AGENT)"},
        {"digest", OPT_DIGEST, NULL, CLI_K_NONE, NULL,
            "add the digest of the current session (pigeon transcript), within the 4096 bytes"},
        {"dry-run", OPT_DRY, NULL, CLI_K_NONE, NULL,
            "print exactly what would be left; write nothing"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON,
    .verbs = "list show drop",
};

struct handoff_opts {
	const char *to;
	const char *agent;
	int dry_run;
	int digest;
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct handoff_opts *o = p;

	switch (ch) {
	case OPT_TO:
		o->to = arg;
		return 0;
	case OPT_AGENT:
		o->agent = arg;
		return 0;
	case OPT_DRY:
		o->dry_run = 1;
		return 0;
	case OPT_DIGEST:
		o->digest = 1;
		return 0;
	}
	return cli_usage(c, "unknown option");
}

static cJSON *
json_baton(const struct pgn_baton *b, int64_t now)
{
	cJSON *o, *t;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	if (b->id != 0)
		cJSON_AddNumberToObject(o, "id", (double)b->id);
	else
		cJSON_AddNullToObject(o, "id");
	cJSON_AddStringToObject(o, "state", pgn_baton_state(b, now));
	cJSON_AddStringToObject(o, "from", b->sender);
	cJSON_AddStringToObject(o, "senders", b->senders);
	if (b->target[0] != '\0')
		cJSON_AddStringToObject(o, "to", b->target);
	else
		cJSON_AddNullToObject(o, "to");
	cJSON_AddStringToObject(o, "session", b->session);
	cJSON_AddNumberToObject(o, "notes", (double)b->notes);
	cli_json_time(o, "created", b->created_ms);
	cli_json_time(o, "updated", b->updated_ms);
	cli_json_time(o, "expires", b->expires_ms);
	if (b->taken_ms != 0) {
		t = cJSON_AddObjectToObject(o, "taken");
		cli_json_time(t, "at", b->taken_ms);
		cJSON_AddStringToObject(t, "session", b->taken_session);
		cJSON_AddStringToObject(t, "by", b->taken_by);
		cJSON_AddNumberToObject(t, "message_id", (double)b->message_id);
	} else {
		cJSON_AddNullToObject(o, "taken");
	}
	if (b->dropped_ms != 0)
		cli_json_time(o, "dropped", b->dropped_ms);
	else
		cJSON_AddNullToObject(o, "dropped");
	cJSON_AddNumberToObject(o, "bytes", (double)b->body_len);
	cJSON_AddStringToObject(o, "body", b->body);
	return o;
}

/* "#3 open, from alice for the next new conversation, 2 notes, last 5m ago" */
static void
print_head(const struct pgn_baton *b, int64_t now)
{
	char age[32];

	cli_age(b->updated_ms, now, age, sizeof(age));
	if (b->id != 0)
		printf("#%lld %s, ", (long long)b->id, pgn_baton_state(b, now));
	if (b->target[0] != '\0')
		printf("from %s for %s's next new conversation",
		    cli_safe(b->sender), cli_safe(b->target));
	else
		printf("from %s for the next new conversation",
		    cli_safe(b->sender));
	printf(", %lld note%s, last %s", (long long)b->notes,
	    b->notes == 1 ? "" : "s", age);
	if (b->taken_ms != 0)
		printf(", taken by %s (%s)", cli_safe(b->taken_by),
		    cli_safe(b->taken_session));
	printf(", %zu bytes\n", b->body_len);
}

static void
print_full(const struct pgn_baton *b, int64_t now)
{
	char at[32];

	print_head(b, now);
	if (b->senders[0] != '\0' && strcmp(b->senders, b->sender) != 0)
		printf("  senders: %s\n", cli_safe(b->senders));
	if (b->session[0] != '\0')
		printf("  session: %s\n", cli_safe(b->session));
	pgn_format_time(b->created_ms, at, sizeof(at));
	printf("  left:    %s\n", at);
	pgn_format_time(b->expires_ms, at, sizeof(at));
	printf("  expires: %s\n", at);
	if (b->taken_ms != 0) {
		pgn_format_time(b->taken_ms, at, sizeof(at));
		printf("  taken:   %s, message #%lld in the audit\n", at,
		    (long long)b->message_id);
	}
	if (b->dropped_ms != 0) {
		pgn_format_time(b->dropped_ms, at, sizeof(at));
		printf("  dropped: %s\n", at);
	}
	cli_print_body(stdout, b->body);
}

static int
do_list(struct cli *c)
{
	struct pgn_batons l;
	int64_t now = pgn_now_ms();
	pgn_status st;
	cJSON *arr;
	size_t i;
	int code = EXIT_OK;

	st = pgn_handoff_list(c->db, &l);
	if (st != PGN_OK)
		return cli_fail(c, st);
	if (c->json) {
		arr = cJSON_CreateArray();
		for (i = 0; arr != NULL && i < l.n; i++)
			cJSON_AddItemToArray(arr, json_baton(&l.v[i], now));
		code = cli_json_print(arr);
	} else {
		if (l.n == 0)
			printf("no batons\n");
		for (i = 0; i < l.n; i++)
			print_head(&l.v[i], now);
	}
	pgn_batons_release(&l);
	return code;
}

static int
do_one(struct cli *c, const char *verb, int64_t id)
{
	struct pgn_baton b;
	pgn_status st;
	cJSON *o;

	if (strcmp(verb, "drop") == 0) {
		st = pgn_handoff_drop(c->db, id);
		if (st != PGN_OK)
			return cli_fail(c, st);
	}
	st = pgn_handoff_get(c->db, id, &b);
	if (st != PGN_OK)
		return cli_fail(c, st);
	if (c->json) {
		o = json_baton(&b, pgn_now_ms());
		pgn_baton_release(&b);
		return cli_json_print(o);
	}
	if (strcmp(verb, "drop") == 0)
		printf("dropped baton #%lld: kept, never delivered\n",
		    (long long)id);
	else
		print_full(&b, pgn_now_ms());
	pgn_baton_release(&b);
	return EXIT_OK;
}

static int
do_leave(struct cli *c, const struct handoff_opts *o, const char *text,
    size_t len)
{
	struct pgn_handoff rq;
	struct pgn_baton b;
	const char *session = getenv("PIGEON_SESSION");
	const char *agent = o->agent;
	pgn_status st;
	cJSON *j;
	int merged = 0, code = EXIT_OK;

	if (agent == NULL || *agent == '\0')
		agent = getenv("PIGEON_AGENT");
	memset(&rq, 0, sizeof(rq));
	rq.session = session;
	/* $PIGEON_SESSION names its agent; $PIGEON_AGENT is the fallback. */
	rq.agent = o->agent != NULL && *o->agent != '\0' ? o->agent :
	    session != NULL && *session != '\0'          ? NULL :
	                                                   agent;
	rq.to = o->to;
	rq.text = text;
	rq.len = len;
	rq.dry_run = o->dry_run;
	st = pgn_handoff_leave(c->db, &rq, &b, &merged);
	if (st == PGN_ENOTFOUND && rq.agent == NULL && agent != NULL &&
	    *agent != '\0') {
		/* A session this database does not know: $PIGEON_AGENT. */
		rq.agent = agent;
		st = pgn_handoff_leave(c->db, &rq, &b, &merged);
	}
	if (st != PGN_OK)
		return cli_fail(c, st);
	if (c->json) {
		j = json_baton(&b, pgn_now_ms());
		if (j != NULL) {
			cJSON_AddBoolToObject(j, "merged", merged);
			cJSON_AddBoolToObject(j, "dry_run", o->dry_run);
		}
		code = cli_json_print(j);
	} else {
		if (o->dry_run && merged)
			printf(
			    "would add the note to baton #%lld, which would then be:\n",
			    (long long)b.id);
		else if (o->dry_run)
			printf("would leave a new baton:\n");
		else if (merged)
			printf("added the note to baton #%lld:\n",
			    (long long)b.id);
		else
			printf("left baton #%lld:\n", (long long)b.id);
		print_head(&b, pgn_now_ms());
		cli_print_body(stdout, b.body);
	}
	pgn_baton_release(&b);
	return code;
}

int
cmd_handoff(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_handoff};
	struct handoff_opts o;
	/* Room past the limit: a full buffer means too big. */
	char text[PGN_MAX_HANDOFF + CLI_TEXT_SLACK];
	const char *verb = NULL;
	size_t len = 0;
	int64_t id = 0;
	int code;

	memset(&o, 0, sizeof(o));
	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	if (optind < argc &&
	    (strcmp(argv[optind], "list") == 0 ||
	        strcmp(argv[optind], "show") == 0 ||
	        strcmp(argv[optind], "drop") == 0))
		verb = argv[optind++];
	if (verb != NULL && (o.to != NULL || o.agent != NULL || o.dry_run))
		return cli_usage(&c,
		    "--to, --agent and --dry-run go with leaving a baton, not with %s",
		    verb);
	if (verb != NULL && o.digest)
		return cli_usage(&c,
		    "--digest goes with leaving a baton, not with %s", verb);
	if (verb != NULL && strcmp(verb, "list") == 0 && optind < argc)
		return cli_usage(&c, "handoff list takes no argument");
	if (verb != NULL && strcmp(verb, "list") != 0) {
		if (argc - optind != 1)
			return cli_usage(&c, "handoff %s takes one ID", verb);
		if (pgn_parse_i64(argv[optind], 1, INT64_MAX, &id) != PGN_OK)
			return cli_usage(&c,
			    "'%s' is not a baton id (see pigeon handoff list)",
			    argv[optind]);
	}
	if (verb == NULL) {
		code =
		    cli_read_text(argc, argv, optind, text, sizeof(text), &len);
		if (code != EXIT_OK)
			return code;
		if (len > PGN_MAX_HANDOFF)
			return cli_usage(&c,
			    "the baton is over the limit of %d bytes: shorten it, or point to a file",
			    PGN_MAX_HANDOFF);
	}
	code = cli_open(&c);
	if (code != EXIT_OK)
		goto out;
	/* the sender's session as do_leave finds it (cmd_transcript.c) */
	if (verb == NULL && o.digest)
		code = cli_digest_append(&c,
		    o.agent != NULL ? NULL : getenv("PIGEON_SESSION"),
		    o.agent != NULL ? o.agent : getenv("PIGEON_AGENT"), text,
		    &len, PGN_MAX_HANDOFF);
	if (verb == NULL) {
		if (code == EXIT_OK)
			code = do_leave(&c, &o, text, len);
	} else if (strcmp(verb, "list") == 0)
		code = do_list(&c);
	else
		code = do_one(&c, verb, id);
	code = cli_finish(code);
out:
	cli_close(&c);
	return code;
}
