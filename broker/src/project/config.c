/*
 * The project's own configuration, <project>/.pigeon/config.json: the
 * prompt reminder and the prompt-context provider. Strict: each feature
 * is applied whole or not at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"
#include "pigeon/setup.h"
#include "reach.h"

#define CONFIG_PATH ".pigeon/config.json"

void
pgn_config_release(struct pgn_config *c)
{
	size_t i;

	if (c == NULL)
		return;
	free(c->reminder);
	free(c->reminder_problem);
	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	free(c->provider_problem);
	free(c->problem);
	free(c->reach_problem);
	free(c->agents_problem);
	free(c->notes_problem);
	free(c->unknown);
	memset(c, 0, sizeof(*c));
}

static char *fmt(const char *f, ...) PGN_PRINTF(1, 2);

static char *
fmt(const char *f, ...)
{
	struct pgn_buf b;
	va_list ap;

	pgn_buf_init(&b, 512);
	va_start(ap, f);
	pgn_buf_vaddf(&b, f, ap);
	va_end(ap);
	return pgn_buf_take(&b, NULL);
}

/* Characters (code points) of valid UTF-8 text. */
static size_t
chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static int
is_space(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * Note keys of 'obj' not in 'known' into 'u' ("prefix.key"). A list
 * too long for 'u' ends in "..." (a report, not a failure).
 */
static void
unknown_keys(const cJSON *obj, const char *prefix, const char *const known[],
    struct pgn_buf *u)
{
	const cJSON *it;
	size_t i;
	int ok;

	cJSON_ArrayForEach(it, obj)
	{
		ok = 0;
		for (i = 0; known[i] != NULL; i++)
			if (strcmp(it->string, known[i]) == 0)
				ok = 1;
		if (ok)
			continue;
		/* Room for ", " and a final ", ..." must stay. */
		if (u->len + strlen(prefix) + strlen(it->string) + 7 > u->max) {
			if (u->len + 5 <= u->max)
				pgn_buf_adds(u, u->len ? ", ..." : "...");
			u->max = u->len; /* list no more */
			continue;
		}
		pgn_buf_addf(u, "%s%s%s", u->len ? ", " : "", prefix,
		    it->string);
	}
}

static char *
parse_reminder(const cJSON *v, char **text)
{
	const char *s, *e;
	size_t n, i;

	*text = NULL;
	if (!cJSON_IsString(v))
		return fmt("instructions.promptReminder must be a string");
	s = v->valuestring;
	while (is_space(*s))
		s++;
	e = s + strlen(s);
	while (e > s && is_space(e[-1]))
		e--;
	n = (size_t)(e - s);
	if (n == 0)
		return fmt("instructions.promptReminder is empty");
	if (!pgn_utf8_valid(s, n))
		return fmt("instructions.promptReminder is not valid UTF-8");
	for (i = 0; i < n; i++) {
		if (s[i] == '\n' || s[i] == '\r')
			return fmt(
			    "instructions.promptReminder must be one line");
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fmt(
			    "instructions.promptReminder holds a control character");
	}
	*text = pgn_strndup(s, n);
	if (*text == NULL)
		return NULL;
	if ((n = chars(*text)) > PGN_MAX_REMINDER) {
		free(*text);
		*text = NULL;
		return fmt(
		    "instructions.promptReminder has %zu characters, over %d",
		    n, PGN_MAX_REMINDER);
	}
	return NULL;
}

/* An integer in [min, max] or absent (default). NULL if fine. */
static char *
parse_int(const cJSON *obj, const char *section, const char *key, long min,
    long max, long def, long *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = def;
	if (v == NULL)
		return NULL;
	/* The range first: casting an out-of-range double is undefined. */
	if (!cJSON_IsNumber(v) || v->valuedouble < (double)min ||
	    v->valuedouble > (double)max ||
	    v->valuedouble != (double)(long)v->valuedouble)
		return fmt("%s.%s must be an integer from %ld to %ld", section,
		    key, min, max);
	*out = (long)v->valuedouble;
	return NULL;
}

static char *
parse_provider(const cJSON *pc, struct pgn_config *c, struct pgn_buf *u)
{
	static const char *const known[] = {"command", "timeoutMs",
	    "maxOutputBytes", NULL};
	const cJSON *cmd, *it;
	char *why;
	long v;
	size_t n, i = 0;

	if (!cJSON_IsObject(pc))
		return fmt("promptContext must be an object");
	unknown_keys(pc, "promptContext.", known, u);
	cmd = cJSON_GetObjectItemCaseSensitive(pc, "command");
	if (!cJSON_IsArray(cmd))
		return fmt("promptContext.command must be an array of strings");
	n = (size_t)cJSON_GetArraySize(cmd);
	if (n == 0 || n > PGN_MAX_PROVIDER_ARGS)
		return fmt("promptContext.command must have 1 to %d entries",
		    PGN_MAX_PROVIDER_ARGS);
	cJSON_ArrayForEach(it, cmd)
	{
		if (!cJSON_IsString(it) || it->valuestring[0] == '\0' ||
		    strlen(it->valuestring) > PGN_MAX_PROVIDER_ARG)
			return fmt(
			    "promptContext.command[%zu] must be a string of 1 to %d bytes",
			    i, PGN_MAX_PROVIDER_ARG);
		i++;
	}
	why = parse_int(pc, "promptContext", "timeoutMs", 1,
	    PGN_PROVIDER_TIMEOUT_MAX, PGN_PROVIDER_TIMEOUT_DEFAULT,
	    &c->timeout_ms);
	if (why == NULL)
		why = parse_int(pc, "promptContext", "maxOutputBytes", 1,
		    PGN_PROVIDER_OUTPUT_MAX, PGN_PROVIDER_OUTPUT_DEFAULT, &v);
	if (why != NULL)
		return why;
	c->max_output = (size_t)v;
	/* The program is a path inside the project: no escape upwards. */
	it = cmd->child;
	if (it->valuestring[0] == '/' || strcmp(it->valuestring, "..") == 0 ||
	    strncmp(it->valuestring, "../", 3) == 0 ||
	    strstr(it->valuestring, "/../") != NULL ||
	    (strlen(it->valuestring) >= 3 &&
	        strcmp(it->valuestring + strlen(it->valuestring) - 3, "/..") ==
	            0))
		return fmt(
		    "promptContext.command[0] must be a path inside the project, relative to its root");
	c->argv = calloc(n + 1, sizeof(*c->argv));
	if (c->argv == NULL)
		return NULL;
	cJSON_ArrayForEach(it, cmd)
	{
		c->argv[c->argc] = pgn_strdup(it->valuestring);
		if (c->argv[c->argc] == NULL) {
			/* argc 0 tells the caller: out of memory. */
			while (c->argc > 0)
				free(c->argv[--c->argc]);
			return NULL;
		}
		c->argc++;
	}
	return NULL;
}

/*
 * "reach": how a stop hook may keep the agent going with mail. Taken
 * whole or not at all: an invalid section leaves the defaults.
 */
static char *
parse_reach(const cJSON *r, struct pgn_config *c, struct pgn_buf *u)
{
	static const char *const known[] = {"maxAutoContinues", "stopWaitMs",
	    "rewakeWaitS", "wake", NULL};
	const cJSON *w;
	long cont, wait, rewake;
	int wake = 0;
	char *why;

	if (!cJSON_IsObject(r))
		return fmt("reach must be an object");
	unknown_keys(r, "reach.", known, u);
	why = parse_int(r, "reach", "maxAutoContinues", 0,
	    PGN_MAX_AUTO_CONTINUES, PGN_AUTO_CONTINUES_DEFAULT, &cont);
	if (why == NULL)
		why = parse_int(r, "reach", "stopWaitMs", 0,
		    PGN_MAX_STOP_WAIT_MS, 0, &wait);
	if (why == NULL)
		why = parse_int(r, "reach", "rewakeWaitS", 0,
		    PGN_MAX_REWAKE_WAIT_S, PGN_REWAKE_WAIT_S_DEFAULT, &rewake);
	w = cJSON_GetObjectItemCaseSensitive(r, "wake");
	if (why == NULL && w != NULL) {
		if (cJSON_IsString(w) && strcmp(w->valuestring, "normal") == 0)
			wake = 0;
		else if (cJSON_IsString(w) &&
		    strcmp(w->valuestring, "urgent") == 0)
			wake = 1;
		else if (cJSON_IsString(w) &&
		    strcmp(w->valuestring, "off") == 0)
			wake = PGN_WAKE_OFF; /* reach.h */
		else
			why = fmt(
			    "reach.wake must be \"normal\", \"urgent\" or \"off\"");
	}
	if (why != NULL)
		return why;
	c->wake_min = wake;
	c->max_auto_continues = (int)cont;
	c->stop_wait_ms = wait;
	c->rewake_wait_s = rewake;
	return NULL;
}

static void
drop_provider(struct pgn_config *c)
{
	size_t i;

	for (i = 0; i < c->argc; i++)
		free(c->argv[i]);
	free(c->argv);
	c->argv = NULL;
	c->argc = 0;
}

/*
 * "agents": when a generated agent is retired automatically (decision
 * 0228). Taken whole or not at all: a bad value keeps the default.
 */
static char *
parse_agents(const cJSON *a, struct pgn_config *c, struct pgn_buf *u)
{
	static const char *const known[] = {"retireAfterDays", NULL};
	char *why;
	long v;

	if (!cJSON_IsObject(a))
		return fmt("agents must be an object");
	unknown_keys(a, "agents.", known, u);
	why = parse_int(a, "agents", "retireAfterDays", 0,
	    PGN_RETIRE_AFTER_DAYS_MAX, PGN_RETIRE_AFTER_DAYS_DEFAULT, &v);
	if (why == NULL)
		c->retire_after_days = v;
	return why;
}

/*
 * "notes": what the hook tells the person beside what it tells the
 * model (decision 0229). A bad value keeps the default (off).
 */
static char *
parse_notes(const cJSON *n, struct pgn_config *c, struct pgn_buf *u)
{
	static const char *const known[] = {"mailInjected", NULL};
	const cJSON *v;

	if (!cJSON_IsObject(n))
		return fmt("notes must be an object");
	unknown_keys(n, "notes.", known, u);
	v = cJSON_GetObjectItemCaseSensitive(n, "mailInjected");
	if (v == NULL)
		return NULL;
	if (!cJSON_IsBool(v))
		return fmt("notes.mailInjected must be true or false");
	c->note_injected = cJSON_IsTrue(v);
	return NULL;
}

pgn_status
pgn_config_parse(const char *text, size_t len, struct pgn_config *c)
{
	static const char *const top[] = {"instructions", "promptContext",
	    "reach", "agents", "notes", NULL};
	static const char *const instr[] = {"promptReminder", NULL};
	const cJSON *ins, *pc, *rem, *reach, *agents, *notes;
	struct pgn_buf u;
	cJSON *root = NULL;
	char *copy = NULL;
	pgn_status rc = PGN_OK;

	memset(c, 0, sizeof(*c));
	c->max_auto_continues = PGN_AUTO_CONTINUES_DEFAULT;
	c->rewake_wait_s = PGN_REWAKE_WAIT_S_DEFAULT;
	c->retire_after_days = PGN_RETIRE_AFTER_DAYS_DEFAULT;
	pgn_buf_init(&u, 1024);
	if (len > PGN_MAX_PROJECT_CONFIG) {
		c->problem = fmt("is over %d bytes", PGN_MAX_PROJECT_CONFIG);
		goto bad;
	}
	copy = pgn_strndup(text, len);
	if (copy == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	if (memchr(text, '\0', len) != NULL ||
	    (root = cJSON_ParseWithLengthOpts(copy, len + 1, NULL, 1)) ==
	        NULL) {
		c->problem = fmt("is not valid JSON");
		goto bad;
	}
	if (!cJSON_IsObject(root)) {
		c->problem = fmt("must hold a JSON object");
		goto bad;
	}
	/* cJSON ends a string at "\u0000": refuse it, never cut short. */
	if (pgn_json_nul_escape(text, len)) {
		c->problem = fmt("holds \\u0000 (a NUL character)");
		goto bad;
	}
	unknown_keys(root, "", top, &u);
	ins = cJSON_GetObjectItemCaseSensitive(root, "instructions");
	if (ins != NULL && !cJSON_IsObject(ins)) {
		c->reminder_problem = fmt("instructions must be an object");
	} else if (ins != NULL) {
		unknown_keys(ins, "instructions.", instr, &u);
		rem = cJSON_GetObjectItemCaseSensitive(ins, "promptReminder");
		if (rem != NULL)
			c->reminder_problem = parse_reminder(rem, &c->reminder);
		if (rem != NULL && c->reminder == NULL &&
		    c->reminder_problem == NULL)
			rc = PGN_ENOMEM;
	}
	pc = cJSON_GetObjectItemCaseSensitive(root, "promptContext");
	if (pc != NULL && rc == PGN_OK) {
		c->provider_problem = parse_provider(pc, c, &u);
		if (c->provider_problem != NULL || c->argc == 0) {
			if (c->provider_problem == NULL)
				rc = PGN_ENOMEM;
			drop_provider(c);
		}
	}
	reach = cJSON_GetObjectItemCaseSensitive(root, "reach");
	if (reach != NULL && rc == PGN_OK)
		c->reach_problem = parse_reach(reach, c, &u);
	agents = cJSON_GetObjectItemCaseSensitive(root, "agents");
	if (agents != NULL && rc == PGN_OK)
		c->agents_problem = parse_agents(agents, c, &u);
	notes = cJSON_GetObjectItemCaseSensitive(root, "notes");
	if (notes != NULL && rc == PGN_OK)
		c->notes_problem = parse_notes(notes, c, &u);
	if (u.err != PGN_OK)
		rc = PGN_ENOMEM;
	else if (u.len > 0 && (c->unknown = pgn_buf_take(&u, NULL)) == NULL)
		rc = PGN_ENOMEM;
	goto out;
bad:
	if (c->problem == NULL)
		rc = PGN_ENOMEM;
out:
	cJSON_Delete(root);
	free(copy);
	pgn_buf_release(&u);
	if (rc != PGN_OK)
		pgn_config_release(c);
	return rc;
}

pgn_status
pgn_config_load(const char *root, struct pgn_config *c)
{
	struct pgn_buf path;
	struct pgn_err why;
	char *text = NULL;
	size_t len = 0;
	mode_t mode;
	int exists = 0;
	pgn_status rc = PGN_OK, st;

	memset(c, 0, sizeof(*c));
	c->max_auto_continues = PGN_AUTO_CONTINUES_DEFAULT;
	c->rewake_wait_s = PGN_REWAKE_WAIT_S_DEFAULT;
	c->retire_after_days = PGN_RETIRE_AFTER_DAYS_DEFAULT;
	pgn_buf_init(&path, PGN_MAX_PATH);
	if (root == NULL || root[0] == '\0')
		goto out; /* the global scope has no project config */
	pgn_buf_addf(&path, "%s/%s", root, CONFIG_PATH);
	if (path.err != PGN_OK) {
		rc = path.err == PGN_ENOMEM ? PGN_ENOMEM : PGN_OK;
		goto out;
	}
	/* Never blocks: a FIFO planted as the config is not a config. */
	st = pgn_read_file(path.data, PGN_MAX_PROJECT_CONFIG, &text, &len,
	    &exists, &mode, &why);
	if (st == PGN_ETOOBIG)
		c->problem = fmt("is over %d bytes", PGN_MAX_PROJECT_CONFIG);
	else if (st == PGN_EINVAL)
		c->problem = fmt("cannot be read: not a regular file");
	else if (st == PGN_ENOMEM)
		rc = PGN_ENOMEM;
	else if (st != PGN_OK)
		c->problem = fmt("cannot be read: %s", why.msg);
	else if (exists)
		rc = pgn_config_parse(text != NULL ? text : "", len, c);
out:
	free(text);
	pgn_buf_release(&path);
	return rc;
}

pgn_status
pgn_reach_load(const char *root, struct pgn_reach *r)
{
	struct pgn_config c;
	pgn_status rc;

	rc = pgn_config_load(root, &c);
	r->wake_min = c.wake_min;
	r->max_auto_continues = c.max_auto_continues;
	pgn_config_release(&c);
	return rc;
}
