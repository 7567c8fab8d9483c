/* pigeon transcript: the digest of a session's transcript and journal. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "pigeon/transcript.h"

enum { OPT_SESSION = OPT_CMD, OPT_AGENT, OPT_FILE, OPT_FORMAT };

const struct cli_cmd cli_cmd_transcript = {
    .name = "transcript",
    .fn = cmd_transcript,
    .summary = "the digest of a session's transcript",
    .synopsis =
        {"[--session KEY | --agent NAME | --file PATH] [--format F] [--json]"},
    .text =
        "Print the digest of a session: its first and last prompt, its last answer, the outcome of its last turn, the files it touched, the commands it ran, and the messages its agent sent and received. The transcript is the one the session's hooks recorded; only its last 64 MiB are read, and credential-looking strings are redacted. Without --session or --file: $PIGEON_SESSION, else the most recently active session of --agent or $PIGEON_AGENT.",
    .opts = {{"session", OPT_SESSION, "KEY", CLI_K_NONE, NULL,
                 "the session \"<host>:<id>\""},
        {"agent", OPT_AGENT, "NAME", CLI_K_AGENT, NULL,
            "that agent's most recently active session"},
        {"file", OPT_FILE, "PATH", CLI_K_FILE, NULL,
            "read this transcript file (no database, no journal)"},
        {"format", OPT_FORMAT, "F", CLI_K_WORDS, "cursor claude codex",
            "cursor, claude or codex (default: from the file)"}},
    .common = CLI_DB | CLI_PROJECT | CLI_JSON,
};

struct tr_opts {
	const char *session;
	const char *agent;
	const char *file;
	pgn_transcript_format format;
};

static int
opt(struct cli *c, int ch, const char *arg, void *p)
{
	struct tr_opts *o = p;

	switch (ch) {
	case OPT_SESSION:
		o->session = arg;
		return 0;
	case OPT_AGENT:
		o->agent = arg;
		return 0;
	case OPT_FILE:
		o->file = arg;
		return 0;
	case OPT_FORMAT:
		o->format = pgn_transcript_format_by_name(arg);
		if (o->format == PGN_TRANSCRIPT_UNKNOWN)
			return cli_usage(c,
			    "unknown format '%s': use cursor, claude or codex",
			    cli_safe(arg));
		return 0;
	}
	return cli_usage(c, "unknown option");
}

static cJSON *
json_strs(char *const *v, size_t n)
{
	cJSON *a = cJSON_CreateArray();
	size_t i;

	for (i = 0; a != NULL && i < n; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
	return a;
}

static void
json_str(cJSON *o, const char *key, const char *s)
{
	if (s != NULL)
		cJSON_AddStringToObject(o, key, s);
	else
		cJSON_AddNullToObject(o, key);
}

/* The reader's findings as JSON (every string escaped for a terminal). */
static cJSON *
json_transcript(const struct pgn_transcript *t, const char *path)
{
	cJSON *o, *a, *it;
	size_t i;

	o = cJSON_CreateObject();
	if (o == NULL)
		return NULL;
	json_str(o, "path", path);
	cJSON_AddStringToObject(o, "format",
	    pgn_transcript_format_name(t->format));
	cJSON_AddNumberToObject(o, "size", (double)t->size);
	cJSON_AddNumberToObject(o, "read", (double)t->read);
	cJSON_AddBoolToObject(o, "cut", t->cut);
	cJSON_AddNumberToObject(o, "lines", (double)t->lines);
	it = cJSON_AddObjectToObject(o, "skipped");
	cJSON_AddNumberToObject(it, "blank", (double)t->blank);
	cJSON_AddNumberToObject(it, "malformed", (double)t->malformed);
	cJSON_AddNumberToObject(it, "oversized", (double)t->oversized);
	cJSON_AddNumberToObject(o, "frames", (double)t->frames);
	cJSON_AddNumberToObject(o, "unknown_frames", (double)t->unknown);
	cJSON_AddNumberToObject(o, "prompts", (double)t->prompts);
	cJSON_AddNumberToObject(o, "answers", (double)t->answers);
	cJSON_AddNumberToObject(o, "calls", (double)t->calls);
	json_str(o, "first_prompt", t->first_prompt);
	json_str(o, "last_prompt", t->last_prompt);
	json_str(o, "last_answer", t->last_text);
	json_str(o, "last_question", t->question);
	cJSON_AddStringToObject(o, "outcome",
	    pgn_transcript_outcome_name(t->outcome));
	json_str(o, "status", t->status);
	json_str(o, "error", t->error);
	cJSON_AddItemToObject(o, "files", json_strs(t->files, t->nfiles));
	cJSON_AddNumberToObject(o, "files_more", (double)t->files_more);
	cJSON_AddItemToObject(o, "commands", json_strs(t->cmds, t->ncmds));
	cJSON_AddNumberToObject(o, "commands_seen", (double)t->cmds_seen);
	a = cJSON_AddArrayToObject(o, "tools");
	for (i = 0; a != NULL && i < t->ntools; i++) {
		it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "name", t->tools[i].name);
		cJSON_AddNumberToObject(it, "calls", (double)t->tools[i].n);
		cJSON_AddItemToArray(a, it);
	}
	cJSON_AddNumberToObject(o, "tools_more", (double)t->tools_more);
	json_str(o, "parent", t->parent);
	a = cJSON_AddArrayToObject(o, "subagents");
	for (i = 0; a != NULL && i < t->nsubs; i++) {
		it = cJSON_CreateObject();
		cJSON_AddStringToObject(it, "id", t->subs[i].id);
		cJSON_AddStringToObject(it, "outcome",
		    pgn_transcript_outcome_name(t->subs[i].outcome));
		cJSON_AddNumberToObject(it, "calls", (double)t->subs[i].calls);
		cJSON_AddItemToArray(a, it);
	}
	cJSON_AddNumberToObject(o, "subagents_more", (double)t->subs_more);
	return o;
}

/*
 * Print the digest (and with --json the findings); an exit code.
 * 'digest' NULL: rendered here, from 't' alone; else it is freed here.
 */
static int
print(struct cli *c, const struct pgn_transcript *t, const char *path,
    const char *session, const char *agent, const struct pgn_entries *j,
    char *digest)
{
	cJSON *doc;
	pgn_status st;

	if (digest == NULL)
		digest = pgn_digest_render(t, session, agent, j, PGN_DIGEST_MAX,
		    &st);
	if (digest == NULL)
		return cli_err(EXIT_FAIL, "cannot build the digest: %s",
		    pgn_status_name(st));
	if (!c->json) {
		fputs(digest, stdout);
		free(digest);
		return EXIT_OK;
	}
	doc = cJSON_CreateObject();
	if (doc != NULL) {
		json_str(doc, "session", session);
		json_str(doc, "agent", agent);
		if (t != NULL)
			cJSON_AddItemToObject(doc, "transcript",
			    json_transcript(t, path));
		else
			cJSON_AddNullToObject(doc, "transcript");
		cJSON_AddNumberToObject(doc, "digest_bytes",
		    (double)strlen(digest));
		cli_json_safe(doc);
		/* already terminal-safe, its newlines kept */
		cJSON_AddStringToObject(doc, "digest", digest);
	}
	free(digest);
	return cli_json_print(doc);
}

/* --session, $PIGEON_SESSION, or the agent's latest session. */
static int
from_session(struct cli *c, const struct tr_opts *o)
{
	struct pgn_session_info s;
	struct pgn_transcript t;
	const char *key = o->session, *agent = NULL;
	char *digest = NULL;
	pgn_status st;
	int code;

	memset(&s, 0, sizeof(s));
	pgn_transcript_init(&t);
	if (key == NULL && o->agent == NULL) {
		key = getenv("PIGEON_SESSION");
		if (key != NULL && key[0] == '\0')
			key = NULL;
	}
	if (key == NULL) {
		agent = cli_agent(c, o->agent);
		if (agent == NULL)
			return EXIT_USAGE;
	}
	code = cli_open(c);
	if (code != EXIT_OK)
		goto out;
	st = pgn_session_find(c->db, key, agent, &s);
	if (st == PGN_OK)
		st = pgn_session_digest(c->db, &s, PGN_DIGEST_MAX, &t, &digest);
	if (st != PGN_OK) {
		code = cli_fail(c, st);
		goto out;
	}
	code = print(c, &t, s.transcript, s.key, s.agent, NULL, digest);
	digest = NULL;
out:
	free(digest);
	pgn_transcript_release(&t);
	pgn_session_info_release(&s);
	cli_close(c);
	return code;
}

int
cli_digest_append(struct cli *c, const char *session, const char *agent,
    char *text, size_t *len, size_t cap)
{
	struct pgn_session_info s;
	char *digest = NULL;
	size_t sep = *len > 0 ? 2 : 0, room, dlen;
	pgn_status st;

	room = cap > *len + sep ? cap - *len - sep : 0;
	if (room < PGN_DIGEST_MIN)
		return cli_usage(c,
		    "the note leaves %zu bytes for the digest, which needs %d: shorten the note",
		    room, PGN_DIGEST_MIN);
	if (room > PGN_DIGEST_MAX)
		room = PGN_DIGEST_MAX;
	if (session != NULL && session[0] == '\0')
		session = NULL;
	st = pgn_session_find(c->db, session, session == NULL ? agent : NULL,
	    &s);
	/* a session this database does not know: the agent's latest */
	if (st == PGN_ENOTFOUND && session != NULL && agent != NULL &&
	    agent[0] != '\0')
		st = pgn_session_find(c->db, NULL, agent, &s);
	if (st == PGN_OK)
		st = pgn_session_digest(c->db, &s, room, NULL, &digest);
	pgn_session_info_release(&s);
	if (st != PGN_OK)
		return cli_fail(c, st);
	dlen = strlen(digest);
	/* the digest ends with a newline: the note's text does not */
	while (dlen > 0 && digest[dlen - 1] == '\n')
		dlen--;
	if (sep > 0) {
		memcpy(text + *len, "\n\n", 2);
		*len += 2;
	}
	memcpy(text + *len, digest, dlen);
	*len += dlen;
	text[*len] = '\0';
	free(digest);
	return EXIT_OK;
}

int
cmd_transcript(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_transcript};
	struct tr_opts o = {0};
	struct pgn_transcript t;
	char err[PGN_MAX_ERRMSG];
	pgn_status st;
	int code;

	pgn_transcript_init(&t);
	code = cli_parse(&c, argc, argv, opt, &o);
	if (code >= 0)
		return code;
	if (argc - optind != 0)
		return cli_usage(&c, "unexpected argument '%s'",
		    cli_safe(argv[optind]));
	if ((o.session != NULL) + (o.agent != NULL) + (o.file != NULL) > 1)
		return cli_usage(&c,
		    "name one of --session, --agent and --file");
	if (o.file == NULL && o.format != PGN_TRANSCRIPT_UNKNOWN)
		return cli_usage(&c,
		    "--format goes with --file: a session is read as its host's format");
	if (o.file == NULL) {
		code = from_session(&c, &o);
		goto out;
	}
	st = pgn_transcript_read(o.file, o.format, &t, err, sizeof(err));
	if (st != PGN_OK) {
		code = cli_err(st == PGN_ENOMEM ? EXIT_FAIL : EXIT_USAGE, "%s",
		    err);
		goto out;
	}
	code = print(&c, &t, o.file, NULL, NULL, NULL, NULL);
out:
	pgn_transcript_release(&t);
	return cli_finish(code);
}
