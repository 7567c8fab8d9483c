/*
 * Retiring agents (store/retire.c, decision 0184), on every backend:
 * pigeon agent prune retires only generated agents made by a session,
 * idle past the cutoff, with nothing queued; rm and prune release the
 * agent's leases with a journal entry each, in the same transaction as
 * the removal; nothing stored is lost.
 * The database is read back through a second connection.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "store_int.h"
#include "pigeon/lease.h"

#define DAY_MS (24LL * 3600 * 1000)

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */

static void
setup(void)
{
	be_open_pair("pgn_retire", &db, &chk);
}

static void
teardown(void)
{
	(void)be_close_pair(&db, &chk);
}

static int64_t
count(const char *sql)
{
	return be_count(chk, sql);
}

/*
 * An agent made for an unnamed session, as the hook makes it: a
 * generated name (distinct: the generator's numbered form), created by
 * the session's bind. Its name into 'name'.
 */
static void
generated(const char *key, char name[PGN_MAX_NAME + 1])
{
	static unsigned next = 8;
	char bound[PGN_MAX_NAME + 1];

	pgn_name_generate(name, next++);
	REQUIRE(pgn_name_is_generated(name));
	REQUIRE(pgn_session_bind(db, "claude", key, name, bound) == PGN_OK);
}

/* Everything of agent 'name' seen last 'days' days ago, through chk. */
static void
age(const char *name, int64_t days)
{
	int64_t t = pgn_now_ms() - days * DAY_MS;

	REQUIRE(pgn_exec(chk,
	            "UPDATE agent SET created_ms = ?1, last_seen_ms = ?1 "
	            "WHERE name = ?2",
	            "ageing", PGN_I(t), PGN_T(name)) == PGN_OK);
	REQUIRE(pgn_exec(chk,
	            "UPDATE session SET created_ms = ?1, last_seen_ms = ?1 "
	            "WHERE agent_id IN (SELECT id FROM agent WHERE name = ?2)",
	            "ageing", PGN_I(t), PGN_T(name)) == PGN_OK);
}

static int
live(const char *name)
{
	char sql[256];

	(void)snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM agent WHERE name = '%s' AND "
	    "removed_ms IS NULL",
	    name);
	return (int)count(sql);
}

static void
take(const char *agent, const char *pat)
{
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	const char *p[1] = {pat};

	memset(&req, 0, sizeof(req));
	req.who.agent = agent;
	req.patterns = p;
	req.npatterns = 1;
	REQUIRE(pgn_lease_take(db, &req, &t) == PGN_OK);
	pgn_lease_taken_release(&t);
}

static void
rule_prune_takes_only_idle_generated_agents_with_nothing_queued(void)
{
	char old[PGN_MAX_NAME + 1], fresh[PGN_MAX_NAME + 1];
	char mail[PGN_MAX_NAME + 1], edge[PGN_MAX_NAME + 1];
	char added[PGN_MAX_NAME + 1], bound[PGN_MAX_NAME + 1];
	struct pgn_agents a = {0};
	struct pgn_send req;
	struct pgn_sent sent[1];
	const char *to[1];
	int64_t cutoff = pgn_now_ms() - 7 * DAY_MS;
	size_t n;

	generated("claude:old", old);
	generated("claude:fresh", fresh);
	generated("claude:mail", mail);
	generated("claude:edge", edge);
	/* named by a person: never pruned, however idle, even one that
	 * looks generated (pigeon agent add) */
	pgn_name_generate(added, 999);
	REQUIRE(pgn_agent_add(db, added) == PGN_OK);
	REQUIRE(pgn_session_bind(db, "claude", "claude:named", "reviewer",
	            bound) == PGN_OK);
	age(old, 8);
	age(fresh, 6);
	age(mail, 30);
	age(added, 30);
	age("reviewer", 30);
	/* one millisecond short of the cutoff stays (edge) */
	REQUIRE(pgn_exec(chk,
	            "UPDATE agent SET created_ms = ?1 - 1, last_seen_ms = ?1 "
	            "WHERE name = ?2",
	            "ageing", PGN_I(cutoff + 1000), PGN_T(edge)) == PGN_OK);
	REQUIRE(pgn_exec(chk,
	            "UPDATE session SET last_seen_ms = ?1 WHERE key = "
	            "'claude:edge'",
	            "ageing", PGN_I(cutoff + 1000)) == PGN_OK);
	memset(&req, 0, sizeof(req));
	to[0] = mail;
	req.from = "bob";
	req.to = to;
	req.nto = 1;
	req.body = "still for you";
	req.body_len = strlen(req.body);
	REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);

	/* --dry-run: listed, nothing changed */
	REQUIRE(pgn_agents_prune(db, cutoff, 1, &a) == PGN_OK);
	CHECK_INT(a.n, 1);
	CHECK(a.n == 1 && strcmp(a.v[0].name, old) == 0);
	CHECK_INT(live(old), 1);
	pgn_agents_release(&a);

	REQUIRE(pgn_agents_prune(db, cutoff, 0, &a) == PGN_OK);
	CHECK_INT(a.n, 1);
	CHECK(a.n == 1 && strcmp(a.v[0].name, old) == 0);
	pgn_agents_release(&a);
	CHECK_INT(live(old), 0);
	CHECK_INT(live(fresh), 1);
	CHECK_INT(live(mail), 1);
	CHECK_INT(live(edge), 1);
	CHECK_INT(live(added), 1);
	CHECK_INT(live("reviewer"), 1);
	/* its rows stay: journal, one 'removed' entry saying why */
	CHECK_INT(count("SELECT count(*) FROM journal j JOIN agent a ON "
	                "a.id = j.agent_id WHERE a.removed_ms IS NOT NULL AND "
	                "j.kind = 'removed' AND j.detail LIKE 'pruned: %'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
	/* a second prune finds nothing */
	REQUIRE(pgn_agents_prune(db, cutoff, 0, &a) == PGN_OK);
	CHECK_INT(a.n, 0);
	pgn_agents_release(&a);
}

static void
rule_retire_releases_leases_and_journals_each(void)
{
	char g[PGN_MAX_NAME + 1];
	struct pgn_agents a = {0};
	size_t leases = 9;

	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	take("alice", "src/");
	take("alice", "docs/");
	REQUIRE(pgn_agent_retire(db, "alice", NULL, &leases) == PGN_OK);
	CHECK_INT(leases, 2);
	CHECK_INT(live("alice"), 0);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' "
	                "AND detail LIKE 'released %'"),
	    2);
	/* prune does the same for a generated agent's lease */
	generated("claude:g", g);
	take(g, "lib/");
	age(g, 8);
	REQUIRE(
	    pgn_agents_prune(db, pgn_now_ms() - 7 * DAY_MS, 0, &a) == PGN_OK);
	CHECK_INT(a.n, 1);
	pgn_agents_release(&a);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' "
	                "AND detail = 'released ''lib/'''"),
	    1);
}

static void
rule_retire_refuses_queued_mail_and_keeps_the_leases(void)
{
	struct pgn_send req;
	struct pgn_sent sent[1];
	const char *to[1] = {"bob"};
	size_t n, leases = 9;

	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	take("bob", "src/");
	memset(&req, 0, sizeof(req));
	req.from = "alice";
	req.to = to;
	req.nto = 1;
	req.body = "queued";
	req.body_len = strlen(req.body);
	REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);
	CHECK_INT(pgn_agent_retire(db, "bob", NULL, &leases), PGN_EFULL);
	CHECK_INT(leases, 0);
	CHECK_CONTAINS(pgn_errmsg(db), "agent 'bob' still has 1 queued");
	CHECK_INT(live("bob"), 1);
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
	CHECK_INT(pgn_agent_retire(db, "nobody", NULL, &leases), PGN_ENOTFOUND);
}

/*
 * Scope hints (decision 0185): an unknown name that is an agent in other
 * scopes names them, the latest seen first, with how to get there.
 */
static void
rule_an_unknown_name_names_the_scopes_that_hold_it(void)
{
	struct pgn_send req;
	struct pgn_sent sent[1];
	const char *to[1] = {"reviewer"};
	size_t n;

	REQUIRE(pgn_db_set_scope(db, "/src/app") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "reviewer") == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, "github.com/team/app") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "reviewer") == PGN_OK);
	REQUIRE(pgn_exec(chk,
	            "UPDATE agent SET last_seen_ms = 5 WHERE scope_id = "
	            "(SELECT id FROM scope WHERE root = 'github.com/team/app')",
	            "ageing", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "me";
	req.to = to;
	req.nto = 1;
	req.body = "hi";
	req.body_len = 2;
	CHECK_INT(pgn_send(db, &req, sent, 1, &n), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db),
	    "no agent 'reviewer' in scope 'global' (known: none). It is an "
	    "agent in scope '/src/app', 'github.com/team/app': run pigeon "
	    "there, or pass --project /src/app.");
	CHECK_INT(count("SELECT count(*) FROM message"), 0);
	/* the scope's own name: no hint; a name nowhere: none either */
	REQUIRE(pgn_db_set_scope(db, "/src/app") == PGN_OK);
	to[0] = "nobody";
	CHECK_INT(pgn_send(db, &req, sent, 1, &n), PGN_ENOTFOUND);
	CHECK(strstr(pgn_errmsg(db), "It is an agent") == NULL);
	/* a key from a remote: run it in a clone */
	REQUIRE(pgn_db_set_scope(db, "/other") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "x") == PGN_OK);
	CHECK_INT(pgn_agent_rm(db, "reviewer"), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "It is an agent in scope '/src/app'");
	REQUIRE(pgn_db_set_scope(db, "/src/app") == PGN_OK);
	REQUIRE(pgn_agent_rm(db, "reviewer") == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, "/other") == PGN_OK);
	CHECK_INT(pgn_agent_rm(db, "reviewer"), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db),
	    "It is an agent in scope 'github.com/team/app': run pigeon in a "
	    "clone of that repository");
	/* an origin added since: the old path's scope is named as such */
	REQUIRE(pgn_db_set_scope(db, "github.com/team/new") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "y") == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, "/src/new") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "builder") == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, "github.com/team/new") == PGN_OK);
	CHECK_INT(pgn_agent_rm(db, "builder"), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db),
	    "It is an agent in scope '/src/new': if that is this repository "
	    "before its origin remote was added, see docs/postgres.md, moving "
	    "a scope.");
}

/*
 * One transaction (decision 0206): when the agent's removal fails after
 * its leases were released (here a trigger refuses the agent row's
 * update, as a send committing first would refuse it with queued mail),
 * nothing is released: the leases and the agent stay, unjournalled.
 */
static void
rule_retire_is_one_transaction_a_failed_removal_keeps_the_leases(void)
{
	size_t leases = 9;

	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	take("alice", "src/");
	take("alice", "docs/");
	if (be_on_pg) {
		REQUIRE(pgn_exec(chk,
		            "CREATE FUNCTION no_rm() RETURNS trigger "
		            "LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION "
		            "''refused by the test''; END'",
		            "a trigger", PGN_NONE) == PGN_OK);
		REQUIRE(pgn_exec(chk,
		            "CREATE TRIGGER no_rm BEFORE UPDATE OF removed_ms "
		            "ON agent FOR EACH ROW EXECUTE FUNCTION no_rm()",
		            "a trigger", PGN_NONE) == PGN_OK);
	} else {
		REQUIRE(pgn_exec(chk,
		            "CREATE TRIGGER no_rm BEFORE UPDATE OF removed_ms "
		            "ON agent BEGIN SELECT RAISE(ABORT, "
		            "'refused by the test'); END",
		            "a trigger", PGN_NONE) == PGN_OK);
	}
	CHECK(pgn_agent_retire(db, "alice", NULL, &leases) != PGN_OK);
	CHECK_CONTAINS(pgn_errmsg(db), "refused by the test");
	CHECK_INT(leases, 0);
	CHECK_INT(live("alice"), 1);
	CHECK_INT(count("SELECT count(*) FROM lease"), 2);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' "
	                "AND detail LIKE 'released %'"),
	    0);
	REQUIRE(
	    pgn_exec(chk,
	        be_on_pg ? "DROP TRIGGER no_rm ON agent" : "DROP TRIGGER no_rm",
	        "a trigger", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_agent_retire(db, "alice", NULL, &leases) == PGN_OK);
	CHECK_INT(leases, 2);
	CHECK_INT(live("alice"), 0);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
}

/*
 * prune chooses, then retires each in its own transaction: one whose
 * session came back in between is left as it is, leases and all; one
 * still idle goes (decision 0206).
 */
static void
rule_prune_leaves_an_agent_seen_since_it_was_chosen(void)
{
	char g[PGN_MAX_NAME + 1];
	int64_t cutoff = pgn_now_ms() - 7 * DAY_MS;
	size_t leases = 9;
	int kept = 9;

	generated("claude:back", g);
	take(g, "lib/");
	age(g, 8);
	/* its session is seen again after the choice */
	REQUIRE(pgn_exec(chk,
	            "UPDATE session SET last_seen_ms = ?1 WHERE key = "
	            "'claude:back'",
	            "a session", PGN_I(pgn_now_ms())) == PGN_OK);
	REQUIRE(pgn_agent_retire_idle(db, g, "pruned", cutoff, &leases,
	            &kept) == PGN_OK);
	CHECK_INT(kept, 1);
	CHECK_INT(leases, 0);
	CHECK_INT(live(g), 1);
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind IN "
	                "('removed', 'lease') AND detail NOT LIKE 'took %'"),
	    0);
	/* idle again: retired, its lease released */
	age(g, 8);
	REQUIRE(pgn_agent_retire_idle(db, g, "pruned", cutoff, &leases,
	            &kept) == PGN_OK);
	CHECK_INT(kept, 0);
	CHECK_INT(leases, 1);
	CHECK_INT(live(g), 0);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
}

/* The automatic prune's stamps in the state home (h_tmp/home). */
static size_t
stamps(void)
{
	char home[PATH_MAX];
	size_t n = 0;
	DIR *d;
	struct dirent *e;

	H_PATH(home, "home");
	d = opendir(home);
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, "pruned-", 7) == 0;
	closedir(d);
	return n;
}

/* Set every stamp's time to 'ms' (0: leave). */
static void
stamp_at(int64_t ms)
{
	char home[PATH_MAX], path[PATH_MAX + 512];
	struct timespec t[2];
	DIR *d;
	struct dirent *e;

	H_PATH(home, "home");
	d = opendir(home);
	REQUIRE(d != NULL);
	t[0].tv_sec = t[1].tv_sec = (time_t)(ms / 1000);
	t[0].tv_nsec = t[1].tv_nsec = 0;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "pruned-", 7) != 0)
			continue;
		(void)snprintf(path, sizeof(path), "%s/%s", home, e->d_name);
		REQUIRE(utimensat(AT_FDCWD, path, t, 0) == 0);
	}
	closedir(d);
}

/*
 * Decision 0228: the automatic prune retires what prune would, with the
 * scope's days, at most once a day per database and scope: a second
 * call within the day does nothing; a stamp a day old (or in the
 * future) makes it due again; 0 days never prunes and writes no stamp.
 */
static void
rule_the_automatic_prune_runs_once_a_day(void)
{
	char home[PATH_MAX], g1[PGN_MAX_NAME + 1], g2[PGN_MAX_NAME + 1];
	struct pgn_agents a = {0};
	int64_t now = pgn_now_ms();

	H_PATH(home, "home");
	REQUIRE(setenv("PIGEON_HOME", home, 1) == 0);
	generated("claude:auto1", g1);
	age(g1, 8);
	CHECK_INT(pgn_agents_autoprune(db, 0, now, &a), PGN_OK);
	CHECK_INT((int)a.n, 0);
	CHECK_INT((int)stamps(), 0);
	CHECK_INT(live(g1), 1);
	/* Due: no stamp yet. 10 days: g1 (8 days idle) stays. */
	CHECK_INT(pgn_agents_autoprune(db, 10, now, &a), PGN_OK);
	CHECK_INT((int)a.n, 0);
	CHECK_INT((int)stamps(), 1);
	CHECK_INT(live(g1), 1);
	/* Not due within the day, whatever the days. */
	CHECK_INT(pgn_agents_autoprune(db, 7, now, &a), PGN_OK);
	CHECK_INT((int)a.n, 0);
	CHECK_INT(live(g1), 1);
	/* A day later: due, g1 retired, told. */
	stamp_at(now - PGN_AUTOPRUNE_EVERY_MS - 1000);
	CHECK_INT(pgn_agents_autoprune(db, 7, now, &a), PGN_OK);
	CHECK_INT((int)a.n, 1);
	if (a.n == 1)
		CHECK_STR(a.v[0].name, g1);
	pgn_agents_release(&a);
	CHECK_INT(live(g1), 0);
	CHECK_INT((int)count("SELECT count(*) FROM journal WHERE "
	                     "kind = 'removed' AND detail LIKE 'pruned:%'"),
	    1);
	/* A stamp in the future (a clock set back) is due. */
	generated("claude:auto2", g2);
	age(g2, 8);
	stamp_at(now + 3600 * 1000);
	CHECK_INT(pgn_agents_autoprune(db, 7, now, &a), PGN_OK);
	CHECK_INT((int)a.n, 1);
	pgn_agents_release(&a);
	CHECK_INT(live(g2), 0);
	CHECK_INT((int)stamps(), 1);
	REQUIRE(unsetenv("PIGEON_HOME") == 0);
}

/*
 * pigeon scope move (decision 0185): the old key's rows follow to the
 * current key; refused, changing nothing, with live leases, when the
 * new key has a scope, for the global scope and for itself.
 */
static void
rule_a_scope_moves_to_the_current_key_with_its_rows(void)
{
	struct pgn_send req;
	struct pgn_sent sent[1];
	const char *to[1] = {"reviewer"};
	size_t n;

	REQUIRE(pgn_db_set_scope(db, "/src/app") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "reviewer") == PGN_OK);
	memset(&req, 0, sizeof(req));
	req.from = "me";
	req.to = to;
	req.nto = 1;
	req.body = "kept";
	req.body_len = 4;
	REQUIRE(pgn_send(db, &req, sent, 1, &n) == PGN_OK);
	take("reviewer", "src/");
	REQUIRE(pgn_db_set_scope(db, "github.com/team/app") == PGN_OK);
	CHECK_INT(pgn_scope_move(db, "/src/app"), PGN_EFULL);
	CHECK_CONTAINS(pgn_errmsg(db),
	    "scope '/src/app' has 1 live lease: "
	    "release them first");
	CHECK_INT(count("SELECT count(*) FROM scope WHERE root = '/src/app'"),
	    1);
	REQUIRE(pgn_exec(chk, "UPDATE lease SET expires_ms = 1", "expiring",
	            PGN_NONE) == PGN_OK);
	CHECK_INT(pgn_scope_move(db, "/src/app"), PGN_OK);
	CHECK_INT(count("SELECT count(*) FROM scope WHERE root = '/src/app'"),
	    0);
	CHECK_INT(count("SELECT count(*) FROM agent a JOIN scope s ON "
	                "s.id = a.scope_id WHERE s.root = "
	                "'github.com/team/app' AND a.name = 'reviewer'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM message m JOIN scope s ON "
	                "s.id = m.scope_id WHERE s.root = "
	                "'github.com/team/app' AND m.delivered_ms IS NULL"),
	    1);
	CHECK_INT(pgn_scope_move(db, "/src/app"), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no scope '/src/app'");
	/* The new key has a scope already: refused, both kept. */
	REQUIRE(pgn_db_set_scope(db, "/y") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "z") == PGN_OK);
	REQUIRE(pgn_db_set_scope(db, "/x") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "w") == PGN_OK);
	CHECK_INT(pgn_scope_move(db, "/y"), PGN_EEXIST);
	CHECK_CONTAINS(pgn_errmsg(db), "scope '/x' already exists");
	CHECK_INT(count("SELECT count(*) FROM scope WHERE root IN "
	                "('/x', '/y')"),
	    2);
	/* The global scope, and a scope onto itself. */
	CHECK_INT(pgn_scope_move(db, "/x"), PGN_EINVAL);
	CHECK_INT(pgn_scope_move(db, ""), PGN_EINVAL);
	REQUIRE(pgn_db_set_scope(db, "") == PGN_OK);
	CHECK_INT(pgn_scope_move(db, "/x"), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "the global scope is not moved");
}

static void (*const rules[])(void) = {
    rule_an_unknown_name_names_the_scopes_that_hold_it,
    rule_prune_takes_only_idle_generated_agents_with_nothing_queued,
    rule_retire_releases_leases_and_journals_each,
    rule_retire_refuses_queued_mail_and_keeps_the_leases,
    rule_retire_is_one_transaction_a_failed_removal_keeps_the_leases,
    rule_prune_leaves_an_agent_seen_since_it_was_chosen,
    rule_the_automatic_prune_runs_once_a_day,
    rule_a_scope_moves_to_the_current_key_with_its_rows,
};

static void
test_rules_on_sqlite(void)
{
	be_rules(0, rules, H_COUNT(rules), setup, teardown);
}

static void
test_rules_on_postgresql(void)
{
	if (be_have_pg())
		be_rules(1, rules, H_COUNT(rules), setup, teardown);
}

static void
test_generated_names_are_told_from_others(void)
{
	char n[PGN_MAX_NAME + 1];
	unsigned i;

	for (i = 0; i < 20; i++) {
		pgn_name_generate(n, i);
		CHECK(pgn_name_is_generated(n));
	}
	CHECK(!pgn_name_is_generated("reviewer"));
	CHECK(!pgn_name_is_generated("calm"));
	CHECK(!pgn_name_is_generated("calm-"));
	CHECK(!pgn_name_is_generated("calm-otter-"));
	CHECK(!pgn_name_is_generated("calm-otter-1x"));
	CHECK(!pgn_name_is_generated("code-reviewer"));
}

static const struct h_test tests[] = {
    H_TEST(test_generated_names_are_told_from_others),
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
