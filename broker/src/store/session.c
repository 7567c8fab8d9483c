/*
 * Which session is meant (a key, or an agent's most recently active one)
 * and where its transcript is (session.transcript_path), for digests;
 * this machine's id, which a session is stamped with when bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pigeon/transcript.h"
#include "store_int.h"

/* Where systemd, else D-Bus, keeps the machine's id. */
static const char *const machine_id_files[] = {
    "/etc/machine-id",
    "/var/lib/dbus/machine-id",
};

/* A key names its session in any scope: its agent's scope is then used. */
static const char SQL_SESSION_BY_KEY[] =
    "SELECT s.key, s.host, a.name, s.created_ms, s.last_seen_ms, "
    "s.transcript_path, s.machine, c.root FROM session s "
    "JOIN agent a ON a.id = s.agent_id JOIN scope c ON c.id = a.scope_id "
    "WHERE s.key = ?1 AND a.removed_ms IS NULL";
static const char SQL_SESSION_OF_AGENT[] =
    "SELECT s.key, s.host, a.name, s.created_ms, s.last_seen_ms, "
    "s.transcript_path, s.machine FROM session s "
    "JOIN agent a ON a.id = s.agent_id "
    "WHERE s.agent_id = ?1 ORDER BY s.last_seen_ms DESC, s.id DESC LIMIT 1";

/* The first line of 'path' (at most PGN_MACHINE_ID_MAX bytes) in 'out'. */
static int
read_id(const char *path, char out[PGN_MACHINE_ID_MAX + 1])
{
	ssize_t n;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	do
		n = read(fd, out, PGN_MACHINE_ID_MAX);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	for (i = 0; i < (size_t)n && out[i] != '\n'; i++)
		if (out[i] < '!' || out[i] > '~')
			return 0; /* not an id: printable, no space */
	out[i] = '\0';
	return i > 0;
}

/*
 * PIGEON_MACHINE, when set to an id (printable, no space, at most
 * PGN_MAX_MACHINE bytes), stands for this machine: two state homes on
 * one host are two machines (the suite's two-machine tests; decision
 * 0210). Anything else is ignored.
 */
static int
machine_override(char out[PGN_MAX_MACHINE + 1])
{
	const char *v = getenv("PIGEON_MACHINE");
	size_t i;

	if (v == NULL || v[0] == '\0')
		return 0;
	for (i = 0; v[i] != '\0'; i++)
		if (i >= PGN_MAX_MACHINE || v[i] < '!' || v[i] > '~')
			return 0;
	memcpy(out, v, i + 1);
	return 1;
}

/*
 * The host name tells apart containers made from one image, which
 * share the image's machine id.
 */
int
pgn_machine_id(char out[PGN_MAX_MACHINE + 1])
{
	char id[PGN_MACHINE_ID_MAX + 1];
	char host[PGN_MAX_MACHINE - PGN_MACHINE_ID_MAX]; /* with its NUL */
	size_t i;

	out[0] = '\0';
	if (machine_override(out))
		return 1;
	for (i = 0; i < sizeof(machine_id_files) / sizeof(machine_id_files[0]);
	     i++)
		if (read_id(machine_id_files[i], id))
			break;
	if (i == sizeof(machine_id_files) / sizeof(machine_id_files[0]))
		return 0;
	if (gethostname(host, sizeof(host)) != 0)
		host[0] = '\0';
	host[sizeof(host) - 1] = '\0';
	(void)snprintf(out, PGN_MAX_MACHINE + 1, "%s@%s", id, host);
	return 1;
}

struct find_ctx {
	char key[PGN_MAX_SESSION_KEY + 1];
	char agent[PGN_MAX_NAME + 1];
	int by_key;
	struct pgn_session_info *out;
};

void
pgn_session_info_release(struct pgn_session_info *s)
{
	if (s == NULL)
		return;
	free(s->transcript);
	memset(s, 0, sizeof(*s));
}

static pgn_status
find_tx(pgn_db *db, void *arg)
{
	struct find_ctx *c = arg;
	struct pgn_session_info *o = c->out;
	char here[PGN_MAX_MACHINE + 1];
	pgn_stmt *st = NULL;
	const char *root, *named;
	int64_t aid;
	pgn_status rc;

	pgn_session_info_release(o);
	if (c->by_key) {
		rc = pgn_prepare(db, SQL_SESSION_BY_KEY, &st);
		if (rc == PGN_OK)
			rc = pgn_bind(db, st, PGN_T(c->key));
	} else {
		rc = pgn_need_agent(db, c->agent, 0, &aid);
		if (rc != PGN_OK)
			return rc;
		rc = pgn_prepare(db, SQL_SESSION_OF_AGENT, &st);
		if (rc == PGN_OK)
			rc = pgn_bind(db, st, PGN_I(aid));
	}
	if (rc == PGN_OK)
		rc = pgn_step_row(db, st, "reading the session");
	if (rc == PGN_ENOTFOUND && c->by_key)
		rc = pgn_fail(db, rc, "no session '%s' in this database",
		    c->key);
	else if (rc == PGN_ENOTFOUND)
		rc = pgn_fail(db, rc, "agent '%s' has had no session yet",
		    c->agent);
	if (rc == PGN_OK) {
		pgn_col_copy(o->key, sizeof(o->key), st, 0);
		pgn_col_copy(o->host, sizeof(o->host), st, 1);
		pgn_col_copy(o->agent, sizeof(o->agent), st, 2);
		o->created_ms = pgn_col_i64(st, 3);
		o->last_seen_ms = pgn_col_i64(st, 4);
		if (pgn_col_str(st, 5, NULL) != NULL) {
			o->transcript = pgn_col_text(st, 5);
			if (o->transcript == NULL)
				rc = pgn_fail(db, PGN_ENOMEM, "out of memory");
		}
		named = pgn_col_str(st, 6, NULL);
		o->here = named != NULL && pgn_machine_id(here) &&
		    strcmp(named, here) == 0;
	}
	/* as handoff does: the session's scope, whatever the directory */
	if (rc == PGN_OK && c->by_key) {
		root = pgn_col_str(st, 7, NULL);
		rc = pgn_db_set_scope(db, root != NULL ? root : "");
	}
	pgn_finish(db, st);
	return rc;
}

pgn_status
pgn_session_find(pgn_db *db, const char *key, const char *agent,
    struct pgn_session_info *out)
{
	struct find_ctx c;
	pgn_status rc;

	memset(&c, 0, sizeof(c));
	memset(out, 0, sizeof(*out));
	c.out = out;
	if (key != NULL) {
		if (key[0] == '\0' || strlen(key) > PGN_MAX_SESSION_KEY)
			return pgn_fail(db, PGN_EINVAL,
			    "a session key is \"<host>:<id>\" of 1 to %d bytes",
			    PGN_MAX_SESSION_KEY);
		memcpy(c.key, key, strlen(key) + 1);
		c.by_key = 1;
	} else {
		rc = pgn_check_name(db, "agent", agent != NULL ? agent : "",
		    c.agent);
		if (rc != PGN_OK)
			return rc;
	}
	rc = pgn_read(db, find_tx, &c);
	if (rc != PGN_OK)
		pgn_session_info_release(out);
	return rc;
}
