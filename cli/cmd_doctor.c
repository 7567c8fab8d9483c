/*
 * pigeon doctor: what is installed where, database health, the tail of
 * hook.log, and host-specific warnings. Builds one JSON document, then
 * prints it as is (--json) or as text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "pigeon/setup.h"

#define LOG_TAIL_LINES 10
#define LOG_TAIL_BYTES 8192

const struct cli_cmd cli_cmd_doctor = {
    .name = "doctor",
    .fn = cmd_doctor,
    .summary = "check hooks, database and hook log",
    .synopsis = {"[--project DIR] [--db PATH] [--json]"},
    .text =
        "Report, for each host, where Pigeon's hooks are installed (user and project) and whether they run this pigeon-hook; the database's health (integrity, schema version, sizes, queued messages); the tail of hook.log; and warnings. Exits 1 when the database or a host config is broken, 0 otherwise.",
    .opts = {{"project", OPT_PROJECT, "DIR", CLI_K_DIR, NULL,
        "the project whose hooks to check (default: the scope of the working directory)"}},
    .common = CLI_DB | CLI_JSON | CLI_COLOR,
};

static cJSON *warnings;

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
warn(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(line, sizeof(line), fmt, ap) >= 0)
		cJSON_AddItemToArray(warnings, cJSON_CreateString(line));
	va_end(ap);
}

/* Read up to 'max' bytes of a file ("" if absent); NULL on failure. */
static char *
slurp(const char *path, size_t max, off_t from_end)
{
	struct stat sb;
	char *buf;
	ssize_t n;
	size_t len = 0;
	int fd;

	/* Never wait on a FIFO (decision 0040): regular files only. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? strdup("") : NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return NULL;
	}
	if (from_end > 0 && sb.st_size > from_end)
		(void)lseek(fd, sb.st_size - from_end, SEEK_SET);
	buf = malloc(max + 1);
	while (buf != NULL && len < max &&
	    (n = read(fd, buf + len, max - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (buf != NULL)
		buf[len] = '\0';
	return buf;
}

/*
 * The permission edit of one host config (decision 0073): where it
 * lives and whether it is in place; "none" for hosts without one.
 */
static void
add_permissions(cJSON *o, const struct pgn_install_state *s, int installed,
    const char *host, int project)
{
	cJSON *p = cJSON_AddObjectToObject(o, "permissions");

	if (p == NULL)
		return;
	if (s->perm < 0) {
		cJSON_AddStringToObject(p, "state", "none");
		return;
	}
	cJSON_AddStringToObject(p, "state",
	    s->perm_problem != NULL ? "problem" :
	        s->perm             ? "allowed" :
	                              "missing");
	if (s->perm_path != NULL)
		cJSON_AddStringToObject(p, "path", s->perm_path);
	if (s->perm_problem != NULL)
		cJSON_AddStringToObject(p, "problem", s->perm_problem);
	if (installed && !s->perm)
		warn(
		    "%s: the agent cannot run pigeon send|read|wait|status|ack|lease|thread without asking (or outside its sandbox): run pigeon install %s%s",
		    s->perm_path != NULL ? s->perm_path : s->path, host,
		    project ? " --project DIR" : "");
}

/* The first of the host's events without a Pigeon entry, or NULL. */
static const char *
missing_event(const struct pgn_host_info *hi, const struct pgn_install_state *s)
{
	int e;

	for (e = 0; e < PGN_NEVENTS; e++)
		if (hi->events[e] != NULL && s->entries[e] == 0)
			return hi->events[e];
	return NULL;
}

/*
 * One warning for an installed host with facets its cells say it cannot
 * carry (no, or only partly): "cursor cannot carry: prompt (partial),
 * idle (no)".
 */
static void
warn_facets(const struct pgn_host_info *hi)
{
	char list[256];
	size_t k = 0;
	int e, n;

	list[0] = '\0';
	for (e = 0; e < PGN_NEVENTS; e++) {
		/* Before a tool nothing reaches the model but a denial. */
		if (hi->cells[e].cap == PGN_CAP_YES ||
		    e == PGN_EVENT_BEFORE_TOOL)
			continue;
		n = snprintf(list + k, sizeof(list) - k, "%s%s (%s)",
		    k > 0 ? ", " : "", pgn_facet_name((pgn_event)e),
		    pgn_cap_name(hi->cells[e].cap));
		if (n < 0 || (size_t)n >= sizeof(list) - k)
			break;
		k += (size_t)n;
	}
	if (k > 0)
		warn(
		    "%s is installed, but Pigeon cannot reach its model at: %s; pigeon hosts gives the evidence",
		    hi->name, list);
}

static void
check_hosts(const char *project, const char *hook, cJSON *out, int *broken)
{
	struct pgn_install_state s;
	const struct pgn_host_info *hi;
	const char *where[2];
	cJSON *o, *ev;
	pgn_host r;
	int h, w, e, installed, any[PGN_NHOSTS] = {0};

	where[0] = NULL;
	where[1] = project;
	for (h = 0; h < PGN_NHOSTS; h++) {
		hi = pgn_host_get((pgn_host)h);
		for (w = 0; w < 2; w++) {
			if (w == 1 && project == NULL)
				continue;
			if (pgn_install_inspect((pgn_host)h, where[w], &s) !=
			    PGN_OK)
				continue;
			o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "host", hi->name);
			cJSON_AddStringToObject(o, "level",
			    w ? "project" : "user");
			cJSON_AddStringToObject(o, "path",
			    s.path ? s.path : "");
			cJSON_AddBoolToObject(o, "exists", s.exists);
			ev = cJSON_AddArrayToObject(o, "events");
			installed = 0;
			for (e = 0; e < PGN_NEVENTS; e++) {
				if (s.entries[e] == 0)
					continue;
				installed = 1;
				cJSON_AddItemToArray(ev,
				    cJSON_CreateString(hi->events[e]));
				if (s.entries[e] > 1)
					warn(
					    "%s: %zu Pigeon entries for %s: run pigeon install %s again to leave one",
					    s.path, s.entries[e], hi->events[e],
					    hi->name);
			}
			cJSON_AddBoolToObject(o, "installed", installed);
			if (hi->rewake)
				cJSON_AddBoolToObject(o, "rewake",
				    s.rewake > 0);
			if (s.rewake > 1)
				warn(
				    "%s: %zu idle-wake entries in Stop: run pigeon install claude --rewake to leave one",
				    s.path, s.rewake);
			if (s.rewake > 0 && !installed)
				warn(
				    "%s: the idle wake (--rewake) is there without Pigeon's other hooks: run pigeon install claude",
				    s.path);
			if (hi->doorbell != NULL)
				cJSON_AddStringToObject(o, "doorbell",
				    s.doorbell != NULL ? s.doorbell : "rings");
			if (s.hook != NULL)
				cJSON_AddStringToObject(o, "hook", s.hook);
			add_permissions(o, &s, installed, hi->name, w == 1);
			cli_mcp_doctor(o, (pgn_host)h, where[w]);
			if (s.problem != NULL) {
				cJSON_AddStringToObject(o, "problem",
				    s.problem);
				*broken = 1;
			}
			if (installed && s.hook != NULL && s.guarded &&
			    access(s.hook, X_OK) != 0)
				warn(
				    "%s: the hook '%s' is not an executable file, so %s's Pigeon hooks do nothing (each checks for it first): take the registration away (pigeon uninstall %s%s%s, or pigeon uninstall --all), or put pigeon-hook back there",
				    s.path, s.hook, hi->title, hi->name,
				    w ? " --project " : "", w ? project : "");
			else if (installed && s.hook != NULL &&
			    access(s.hook, X_OK) != 0)
				warn(
				    "%s: the hook '%s' is not an executable file, so %s fails on every event: take the registration away (pigeon uninstall %s%s%s, or pigeon uninstall --all), or put pigeon-hook back there and run pigeon install %s%s%s",
				    s.path, s.hook, hi->title, hi->name,
				    w ? " --project " : "", w ? project : "",
				    hi->name, w ? " --project " : "",
				    w ? project : "");
			else if (installed && s.hook != NULL && hook != NULL &&
			    strcmp(s.hook, hook) != 0)
				warn(
				    "%s runs '%s', not this pigeon's hook '%s'",
				    s.path, s.hook, hook);
			if (installed && missing_event(hi, &s) != NULL)
				warn(
				    "%s: %s's event %s has no Pigeon hook: run pigeon install %s",
				    s.path, hi->name, missing_event(hi, &s),
				    hi->name);
			if (installed && hi->trust == PGN_TRUST_CODEX_TOML) {
				cJSON_AddBoolToObject(o, "trusted", s.trusted);
				if (!s.trusted)
					warn("codex: the hooks in %s are not "
					     "trusted yet, so Codex skips "
					     "them: "
					     "run codex and review them with "
					     "/hooks (\"Trust all and "
					     "continue\")",
					    s.path);
			}
			any[h] |= installed;
			cJSON_AddItemToArray(out, o);
			pgn_install_state_release(&s);
		}
	}
	/* What an installed host cannot carry, by the table's cells. */
	for (h = 0; h < PGN_NHOSTS; h++)
		if (any[h])
			warn_facets(pgn_host_get((pgn_host)h));
	/* A host that runs another's hooks, both installed (the table's). */
	for (h = 0; h < PGN_NHOSTS; h++) {
		hi = pgn_host_get((pgn_host)h);
		r = pgn_host_by_name(hi->replays);
		if (any[h] && r != PGN_HOST_NONE && any[r])
			warn(
			    "Pigeon's hook is installed for both %s and %s: %s",
			    pgn_host_get(r)->title, hi->title, hi->replay_note);
	}
}

/*
 * The state home and its files (decision 0042): each must be ours, not a
 * link, and private. Looked at before the database is opened (which
 * makes a loose database, -wal and -shm private, as pgn_home_ensure
 * does the home), then reported after: fixed, or the command to run.
 */
#define STATE_NFILES 8

struct state_file {
	char path[PGN_MAX_PATH + 16];
	mode_t mode; /* permission bits seen; 0: nothing to report */
	mode_t want; /* 0600, or 0700 for the home */
};

static const char *const state_names[STATE_NFILES] = {"", "pigeon.db",
    "pigeon.db-wal", "pigeon.db-shm", "key", "hook.log", "hook.log.1",
    "provider.state"};

static void
state_look(struct state_file f[STATE_NFILES])
{
	struct stat sb;
	char *home = NULL;
	int i;

	memset(f, 0, sizeof(struct state_file) * STATE_NFILES);
	if (pgn_home_path(&home) != PGN_OK)
		return;
	for (i = 0; i < STATE_NFILES; i++) {
		if (snprintf(f[i].path, sizeof(f[i].path), "%s%s%s", home,
		        i > 0 ? "/" : "",
		        state_names[i]) >= (int)sizeof(f[i].path) ||
		    lstat(f[i].path, &sb) != 0)
			continue;
		f[i].want = i == 0 ? 0700 : 0600;
		if (S_ISLNK(sb.st_mode))
			warn(
			    "%s is a symbolic link, which pigeon does not follow: replace it with the file itself",
			    f[i].path);
		else if (sb.st_uid != geteuid())
			warn(
			    "%s belongs to uid %u, not to you (uid %u): run pigeon as that user, or give it back with chown",
			    f[i].path, (unsigned)sb.st_uid,
			    (unsigned)geteuid());
		else if ((sb.st_mode & 077) != 0)
			f[i].mode = sb.st_mode & 0777;
	}
	free(home);
}

static void
state_report(const struct state_file f[STATE_NFILES])
{
	struct stat sb;
	int i;

	for (i = 0; i < STATE_NFILES; i++) {
		if (f[i].mode == 0)
			continue;
		if (lstat(f[i].path, &sb) == 0 &&
		    S_ISREG(sb.st_mode) == (i > 0) &&
		    (sb.st_mode & 0777) == f[i].want)
			warn(
			    "%s was mode %03o (group or others could read it): pigeon made it %03o",
			    f[i].path, (unsigned)f[i].mode,
			    (unsigned)f[i].want);
		else
			warn(
			    "%s is mode %03o, readable by group or others: run chmod %03o '%s'",
			    f[i].path, (unsigned)f[i].mode, (unsigned)f[i].want,
			    f[i].path);
	}
}

static void
check_db(struct cli *c, cJSON *out, int *broken)
{
	struct pgn_health h;
	struct stat sb;
	char *path = NULL, wal[PGN_MAX_PATH + 8];
	struct pgn_err err;
	pgn_db *db = NULL;
	pgn_status st;
	int pg;

	/* What this build has, whatever the path: never blamed on libpq. */
	cJSON_AddBoolToObject(out, "postgresql_built", pgn_pg_available());
	st = pgn_db_path(c->db_flag, &path, &err);
	if (st != PGN_OK) {
		cJSON_AddStringToObject(out, "problem", cli_errtext(&err));
		*broken = 1;
		goto out;
	}
	pg = pgn_db_is_postgres(path);
	/* A PostgreSQL string is never shown: only the library's safe
	 * form of it, host, port, dbname, user (docs/decisions/0130). */
	if (!pg)
		cJSON_AddStringToObject(out, "path", path);
	cJSON_AddStringToObject(out, "backend", pg ? "postgresql" : "sqlite");
	if (!pg && stat(path, &sb) != 0) {
		cJSON_AddStringToObject(out, "problem",
		    "no database yet: it is created by the first pigeon command or hook");
		goto out;
	}
	if (!pg)
		cJSON_AddNumberToObject(out, "bytes", (double)sb.st_size);
	if (!pg &&
	    snprintf(wal, sizeof(wal), "%s-wal", path) < (int)sizeof(wal) &&
	    stat(wal, &sb) == 0)
		cJSON_AddNumberToObject(out, "wal_bytes", (double)sb.st_size);
	st = pgn_db_open(path, 0, PGN_BUSY_DEADLINE_MS, &db);
	if (pg)
		cJSON_AddStringToObject(out, "path",
		    db != NULL ? pgn_db_shown(db) : "(not shown)");
	if (st == PGN_OK)
		st = pgn_db_health(db, &h);
	if (st != PGN_OK) {
		cJSON_AddStringToObject(out, "problem", cli_errmsg(db));
		*broken = 1;
		goto out;
	}
	cJSON_AddNumberToObject(out, "schema_version", h.schema_version);
	cJSON_AddNumberToObject(out, "schema_supported",
	    pg ? pgn_pg_schema_version() : pgn_schema_version());
	if (h.server != NULL)
		cJSON_AddStringToObject(out, "server", h.server);
	if (pg)
		cJSON_AddNumberToObject(out, "bytes", (double)h.pages);
	cJSON_AddStringToObject(out, "integrity", h.integrity);
	if (strcmp(h.integrity, "ok") != 0) {
		*broken = 1;
		warn(
		    "database %s fails its integrity check: %s; copy it aside before anything else",
		    pgn_db_shown(db), h.integrity);
	}
	cJSON_AddNumberToObject(out, "scopes", (double)h.scopes);
	cJSON_AddNumberToObject(out, "agents", (double)h.agents);
	cJSON_AddNumberToObject(out, "sessions", (double)h.sessions);
	cJSON_AddNumberToObject(out, "queued", (double)h.queued);
	cJSON_AddNumberToObject(out, "deliveries", (double)h.deliveries);
	cJSON_AddNumberToObject(out, "journal", (double)h.journal);
	pgn_health_release(&h);
out:
	pgn_db_close(db);
	free(path);
}

static void
check_log(cJSON *out)
{
	char *home = NULL, path[PGN_MAX_PATH + 16], *text = NULL, *p, *nl;
	cJSON *lines;
	int n = 0;

	lines = cJSON_AddArrayToObject(out, "tail");
	if (pgn_home_path(&home) != PGN_OK ||
	    snprintf(path, sizeof(path), "%s/hook.log", home) >=
	        (int)sizeof(path))
		goto out;
	cJSON_AddStringToObject(out, "path", path);
	text = slurp(path, LOG_TAIL_BYTES, LOG_TAIL_BYTES);
	if (text == NULL)
		goto out;
	/* Keep the last LOG_TAIL_LINES complete lines. */
	for (p = text + strlen(text); p > text && n <= LOG_TAIL_LINES; p--)
		if (p[-1] == '\n')
			n++;
	if (n > LOG_TAIL_LINES) {
		p = strchr(p, '\n');
		p = p != NULL ? p + 1 : text;
	}
	for (; *p != '\0'; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl == NULL)
			break;
		*nl = '\0';
		cJSON_AddItemToArray(lines, cJSON_CreateString(p));
	}
out:
	free(text);
	free(home);
}

/*
 * The project's scope key in a store several machines share (decision
 * 0117), and why its origin remote could not be used, if it could not.
 */
static void
check_scope_key(const char *root, cJSON *out)
{
	struct pgn_err why;
	char *key = NULL;

	if (pgn_scope_key(root, &key, &why) == PGN_OK) {
		cJSON_AddStringToObject(out, "scope_key", key);
		if (why.msg[0] != '\0')
			warn("%s", cli_errtext(&why));
	}
	free(key);
}

/* The project's config and provider approval. */
static void
check_project(const char *root, int shared, cJSON *out)
{
	struct pgn_config cfg;
	struct pgn_approval a;
	char *home = NULL;

	memset(&a, 0, sizeof(a));
	cJSON_AddStringToObject(out, "root", root);
	if (shared)
		check_scope_key(root, out);
	if (pgn_config_load(root, &cfg) != PGN_OK)
		return;
	if (cfg.problem != NULL) {
		cJSON_AddStringToObject(out, "config_problem", cfg.problem);
		warn(
		    "%s/.pigeon/config.json %s: the reminder and the provider are off",
		    root, cfg.problem);
	}
	if (cfg.unknown != NULL) {
		cJSON_AddStringToObject(out, "unknown_keys", cfg.unknown);
		warn("%s/.pigeon/config.json has unknown keys (ignored): %s",
		    root, cfg.unknown);
	}
	if (cfg.reminder_problem != NULL)
		warn("the prompt reminder is off: %s", cfg.reminder_problem);
	if (cfg.provider_problem != NULL)
		warn("the provider is off: %s", cfg.provider_problem);
	cJSON_AddBoolToObject(out, "reminder", cfg.reminder != NULL);
	if (cfg.argc > 0 && pgn_home_path(&home) == PGN_OK &&
	    pgn_provider_check(home, root, &cfg, &a) == PGN_OK) {
		cJSON_AddBoolToObject(out, "provider_allowed", a.allowed);
		cJSON_AddStringToObject(out, "provider", cli_errtext(&a.why));
		if (!a.allowed)
			warn("the provider does not run: %s",
			    cli_errtext(&a.why));
	}
	pgn_approval_release(&a);
	pgn_config_release(&cfg);
	free(home);
}

/* Why a host config of doctor's list has no permission edit. */
static const char *
perm_brief(const cJSON *it)
{
	const struct pgn_host_info *hi = pgn_host_get(pgn_host_by_name(
	    cJSON_GetStringValue(cJSON_GetObjectItem(it, "host"))));
	const char *level =
	    cJSON_GetStringValue(cJSON_GetObjectItem(it, "level"));
	const char *s = NULL;

	if (hi != NULL)
		s = hi->perm_brief[level != NULL &&
		    strcmp(level, "project") == 0];
	return s != NULL ? s : "Pigeon makes no permission edit here";
}

static void
print_text(const cJSON *doc)
{
	const cJSON *it, *ev, *db, *log, *w, *x;
	const char *s;
	int installed, hw = 0;

	printf("%s\nhooks:\n",
	    cJSON_GetStringValue(cJSON_GetObjectItem(doc, "version")));
	/* The host column as wide as its longest name. */
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "hooks"))
	{
		s = cJSON_GetStringValue(cJSON_GetObjectItem(it, "host"));
		if (s != NULL && (int)strlen(s) > hw)
			hw = (int)strlen(s);
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(doc, "hooks"))
	{
		printf("  %-*s %-7s %s: ", hw,
		    cJSON_GetStringValue(cJSON_GetObjectItem(it, "host")),
		    cJSON_GetStringValue(cJSON_GetObjectItem(it, "level")),
		    cJSON_GetStringValue(cJSON_GetObjectItem(it, "path")));
		if ((s = cJSON_GetStringValue(
		         cJSON_GetObjectItem(it, "problem"))) != NULL)
			printf("%s\n", s);
		else if (!cJSON_IsTrue(cJSON_GetObjectItem(it, "installed")))
			printf("%s\n",
			    cJSON_IsTrue(cJSON_GetObjectItem(it, "exists")) ?
			        "not installed" :
			        "not installed (no file)");
		else {
			printf("installed (");
			cJSON_ArrayForEach(ev,
			    cJSON_GetObjectItem(it, "events")) printf("%s%s",
			    ev == cJSON_GetObjectItem(it, "events")->child ?
			        "" :
			        ", ",
			    ev->valuestring);
			printf(") -> %s",
			    cJSON_GetStringValue(
			        cJSON_GetObjectItem(it, "hook")));
			x = cJSON_GetObjectItem(it, "trusted");
			if (x != NULL)
				printf(", %s",
				    cJSON_IsTrue(x) ? "trusted" :
				                      "NOT trusted");
			if (cJSON_IsTrue(cJSON_GetObjectItem(it, "rewake")))
				printf(", idle wake on (Stop --rewake)");
			s = cJSON_GetStringValue(
			    cJSON_GetObjectItem(it, "doorbell"));
			if (s != NULL && strcmp(s, "rings") != 0)
				printf(", doorbell %s", s);
			printf("\n");
		}
		installed = cJSON_IsTrue(cJSON_GetObjectItem(it, "installed"));
		x = cJSON_GetObjectItem(it, "mcp");
		if (x != NULL &&
		    (installed ||
		        cJSON_IsTrue(cJSON_GetObjectItem(x, "registered"))))
			printf("  %*s mcp: %s %s\n", hw, "",
			    cJSON_IsTrue(cJSON_GetObjectItem(x, "registered")) ?
			        "pigeon mcp registered in" :
			        "not registered (pigeon install registers it) in",
			    cJSON_GetStringValue(
			        cJSON_GetObjectItem(x, "path")));
		if (x != NULL &&
		    cJSON_IsTrue(cJSON_GetObjectItem(x, "registered"))) {
			s = cJSON_GetStringValue(
			    cJSON_GetObjectItem(x, "approval_path"));
			/* Decision 0217: a file's approval is checked; an
			 * entry's (Codex, Gemini) or none is the table's. */
			if (s != NULL &&
			    cJSON_IsTrue(cJSON_GetObjectItem(x, "approved")))
				printf("  %*s mcp: tools approved in %s\n", hw,
				    "", s);
			else
				printf("  %*s mcp: %s%s\n", hw, "",
				    s != NULL ? "tools not approved: " :
				                "approval: ",
				    cJSON_GetStringValue(
				        cJSON_GetObjectItem(x, "approval")));
		}
		x = cJSON_GetObjectItem(it, "permissions");
		s = cJSON_GetStringValue(cJSON_GetObjectItem(x, "state"));
		if (s == NULL || (!installed && strcmp(s, "allowed") != 0))
			continue;
		if (strcmp(s, "none") == 0)
			printf("  %*s permissions: none: %s\n", hw, "",
			    perm_brief(it));
		else
			printf("  %*s permissions: %s%s%s\n", hw, "", s,
			    cJSON_GetObjectItem(x, "path") != NULL ? " in " :
			                                             "",
			    cJSON_GetObjectItem(x, "path") != NULL ?
			        cJSON_GetStringValue(
			            cJSON_GetObjectItem(x, "path")) :
			        "");
	}
	db = cJSON_GetObjectItem(doc, "database");
	printf("database: %s\n",
	    (s = cJSON_GetStringValue(cJSON_GetObjectItem(db, "path"))) !=
	            NULL ?
	        s :
	        "-");
	printf("  backends: %s\n",
	    cJSON_IsTrue(cJSON_GetObjectItem(db, "postgresql_built")) ?
	        "sqlite, postgresql" :
	        "sqlite (built without PostgreSQL: no libpq-dev)");
	if ((s = cJSON_GetStringValue(cJSON_GetObjectItem(db, "problem"))) !=
	    NULL) {
		printf("  %s\n", s);
	} else {
		if ((s = cJSON_GetStringValue(
		         cJSON_GetObjectItem(db, "server"))) != NULL)
			printf("  server %s\n", s);
		printf("  schema version %d (this pigeon: %d), integrity %s\n",
		    cJSON_GetObjectItem(db, "schema_version")->valueint,
		    cJSON_GetObjectItem(db, "schema_supported")->valueint,
		    cJSON_GetStringValue(cJSON_GetObjectItem(db, "integrity")));
		x = cJSON_GetObjectItem(db, "wal_bytes");
		printf(
		    "  %.0f bytes (WAL %.0f), %.0f scopes, %.0f agents, %.0f sessions, %.0f queued, %.0f deliveries, %.0f journal entries\n",
		    cJSON_GetNumberValue(cJSON_GetObjectItem(db, "bytes")),
		    x != NULL ? cJSON_GetNumberValue(x) : 0.0,
		    cJSON_GetNumberValue(cJSON_GetObjectItem(db, "scopes")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(db, "agents")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(db, "sessions")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(db, "queued")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(db, "deliveries")),
		    cJSON_GetNumberValue(cJSON_GetObjectItem(db, "journal")));
	}
	log = cJSON_GetObjectItem(doc, "hook_log");
	printf("hook log: %s\n",
	    (s = cJSON_GetStringValue(cJSON_GetObjectItem(log, "path"))) !=
	            NULL ?
	        s :
	        "-");
	if (cJSON_GetArraySize(cJSON_GetObjectItem(log, "tail")) == 0)
		printf("  (empty)\n");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(log, "tail"))
	    printf("  %s\n", it->valuestring);
	x = cJSON_GetObjectItem(doc, "project");
	if (x != NULL) {
		printf("project: %s\n",
		    cJSON_GetStringValue(cJSON_GetObjectItem(x, "root")));
		if ((s = cJSON_GetStringValue(
		         cJSON_GetObjectItem(x, "scope_key"))) != NULL)
			printf("  scope key %s\n", s);
		printf("  reminder %s, provider %s\n",
		    cJSON_IsTrue(cJSON_GetObjectItem(x, "reminder")) ? "on" :
		                                                       "off",
		    (s = cJSON_GetStringValue(
		         cJSON_GetObjectItem(x, "provider"))) != NULL ?
		        s :
		        "none configured");
	}
	w = cJSON_GetObjectItem(doc, "warnings");
	if (cJSON_GetArraySize(w) > 0)
		printf("%swarnings:%s\n", cli_sgr(CLI_SGR_WARN),
		    cli_sgr(CLI_SGR_RESET));
	cJSON_ArrayForEach(it, w) printf("  - %s\n", it->valuestring);
}

int
cmd_doctor(int argc, char **argv)
{
	struct cli c = {.def = &cli_cmd_doctor};
	struct state_file state[STATE_NFILES];
	char *hook = NULL, *cwd = NULL, *scope = NULL;
	cJSON *doc;
	int code, broken = 0;

	code = cli_parse(&c, argc, argv, NULL, NULL);
	if (code >= 0)
		return code;
	if (optind < argc)
		return cli_usage(&c, "unexpected argument '%s'", argv[optind]);
	doc = cJSON_CreateObject();
	warnings = cJSON_CreateArray();
	if (doc == NULL || warnings == NULL) {
		cJSON_Delete(doc);
		cJSON_Delete(warnings);
		return cli_err(EXIT_FAIL, "out of memory");
	}
	if (c.project == NULL) {
		cwd = getcwd(NULL, 0);
		if (pgn_scope_find(cwd, &scope) == PGN_OK && scope[0] != '\0')
			c.project = scope;
	}
	cJSON_AddStringToObject(doc, "version", cli_version_line());
	if (cli_find_hook(&c, &hook) != EXIT_OK)
		warn(
		    "no pigeon-hook next to this pigeon: hooks cannot be installed from here");
	check_hosts(c.project, hook, cJSON_AddArrayToObject(doc, "hooks"),
	    &broken);
	state_look(state);
	check_db(&c, cJSON_AddObjectToObject(doc, "database"), &broken);
	state_report(state);
	check_log(cJSON_AddObjectToObject(doc, "hook_log"));
	if (c.project != NULL)
		check_project(c.project,
		    cJSON_IsString(cJSON_GetObjectItem(cJSON_GetObjectItem(doc,
		                                           "database"),
		        "backend")) &&
		        strcmp(cJSON_GetStringValue(
		                   cJSON_GetObjectItem(cJSON_GetObjectItem(doc,
		                                           "database"),
		                       "backend")),
		            "postgresql") == 0,
		    cJSON_AddObjectToObject(doc, "project"));
	cJSON_AddItemToObject(doc, "warnings", warnings);
	cJSON_AddBoolToObject(doc, "ok", !broken);
	code = EXIT_OK;
	if (c.json) {
		code = cli_json_print(doc);
	} else {
		cli_json_safe(doc); /* keys and paths from a cloned repo */
		print_text(doc);
		cJSON_Delete(doc);
	}
	warnings = NULL;
	free(hook);
	free(cwd);
	free(scope);
	return cli_finish(code != EXIT_OK ? code :
	        broken                    ? EXIT_FAIL :
	                                    EXIT_OK);
}
