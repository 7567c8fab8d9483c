/*
 * Path leases (lease.c, decision 0155) on every backend: take, renew,
 * release, list; refusals by overlap (exclusive against any, shared
 * against shared), exactly once from racing processes; --wait woken by
 * a release; what blocks a write for the before-tool hook; the journal;
 * bad input stores nothing. What the database holds is checked through a
 * second connection. Then SQLite's lease stamp, the no-lease fast path.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "backends.h"
#include "pgn_glob.h"
#include "pgn_int.h"
#include "pigeon/lease.h"
#include "stamp.h"
#include "store_int.h"

#define ROOT     "/nonexistent/lease-repo"
#define RACERS   6
#define RACE_RUN 8

static pgn_db *db;  /* the library's handle */
static pgn_db *chk; /* a second connection, for checks */

static pgn_db *
open_scoped(void)
{
	pgn_db *d = h_open_path(be_where, 5000);

	REQUIRE(pgn_db_set_scope(d, ROOT) == PGN_OK);
	return d;
}

static void
setup(void)
{
	be_store("pgn_lease", h_tmp);
	db = open_scoped();
	chk = open_scoped();
	REQUIRE(pgn_agent_add(db, "alice") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	REQUIRE(pgn_agent_add(db, "carol") == PGN_OK);
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

/* Take 'n' patterns as 'agent' (shared or not) with 'ttl_ms', no wait. */
static pgn_status
take_on(pgn_db *d, const char *agent, int shared, int64_t ttl_ms,
    const char *reason, const char *const *pats, size_t n,
    struct pgn_lease_taken *out)
{
	struct pgn_lease_take req;

	memset(&req, 0, sizeof(req));
	req.who.agent = agent;
	req.patterns = pats;
	req.npatterns = n;
	req.ttl_ms = ttl_ms;
	req.reason = reason;
	req.shared = shared;
	return pgn_lease_take(d, &req, out);
}

/* Take one pattern; 1 when taken, 0 when held by another. */
static int
take1(const char *agent, int shared, const char *pat)
{
	struct pgn_lease_taken t;
	const char *p[1] = {pat};
	int held;

	REQUIRE(take_on(db, agent, shared, 0, NULL, p, 1, &t) == PGN_OK);
	held = t.held;
	pgn_lease_taken_release(&t);
	return !held;
}

static pgn_status
release_as(const char *agent, const char *pat, size_t *n)
{
	struct pgn_lease_actor who = {.agent = agent};
	const char *p[1] = {pat};

	return pgn_lease_release(db, &who, pat != NULL ? p : NULL,
	    pat != NULL ? 1 : 0, pat == NULL, n);
}

/* ---- rules on every backend ---------------------------------------- */

static void
rule_a_take_is_stored_and_journalled(void)
{
	struct pgn_lease_taken t;
	const char *p[2] = {"src/api/", "*.sql"};

	REQUIRE(take_on(db, "alice", 0, 0, "schema work", p, 2, &t) == PGN_OK);
	CHECK_INT(t.held, 0);
	CHECK_INT((int64_t)t.leases.n, 2);
	CHECK_STR(t.agent, "alice");
	CHECK_STR(t.leases.v[0].pattern, "src/api/");
	CHECK_STR(t.leases.v[0].norm, "src/api/**");
	CHECK_STR(t.leases.v[1].norm, "**/*.sql");
	CHECK(t.leases.v[0].expires_ms - t.leases.v[0].created_ms ==
	    PGN_LEASE_TTL_DEFAULT_MS);
	pgn_lease_taken_release(&t);
	CHECK_INT(count("SELECT count(*) FROM lease WHERE shared = 0 "
	                "AND reason = 'schema work'"),
	    2);
	CHECK_INT(count(
	              "SELECT count(*) FROM journal WHERE kind = 'lease' "
	              "AND detail LIKE 'took ''src/api/'' exclusive until %'"),
	    1);
}

static void
rule_overlapping_exclusive_leases_of_two_agents_exclude(void)
{
	struct pgn_lease_taken t;
	const char *p[1] = {"src/api/users.c"};

	CHECK(take1("alice", 0, "src/**"));
	REQUIRE(take_on(db, "bob", 0, 0, NULL, p, 1, &t) == PGN_OK);
	CHECK_INT(t.held, 1);
	CHECK_STR(t.blocker.holder, "alice");
	CHECK_STR(t.blocker.pattern, "src/**");
	CHECK_STR(t.wanted, "src/api/users.c");
	CHECK(t.blocker.expires_ms > pgn_now_ms());
	CHECK_INT((int64_t)t.leases.n, 0);
	pgn_lease_taken_release(&t);
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
	/* not overlapping: taken */
	CHECK(take1("bob", 0, "./docs/"));
	CHECK(take1("bob", 0, "./*.md"));
	/* unanchored, "docs/" is every docs directory: src/docs/ too */
	CHECK(!take1("bob", 0, "docs/"));
	/* the same agent's own leases never refuse each other */
	CHECK(take1("alice", 0, "src/api/"));
}

static void
rule_shared_leases_coexist_and_exclude_exclusive_ones(void)
{
	CHECK(take1("alice", 1, "./docs/"));
	CHECK(take1("bob", 1, "docs/**/*.md"));
	CHECK(!take1("carol", 0, "docs/guide.md"));
	CHECK(take1("carol", 0, "./src/"));
	CHECK(!take1("alice", 1, "src/x.c"));
	CHECK_INT(count("SELECT count(*) FROM lease WHERE shared = 1"), 2);
}

static void
rule_taking_what_one_holds_renews_it(void)
{
	struct pgn_lease_taken t;
	const char *p[1] = {"./src/../src/api/"};
	int64_t id;

	CHECK(take1("alice", 0, "src/api/"));
	id = count("SELECT id FROM lease");
	REQUIRE(take_on(db, "alice", 1, 3600000, "longer", p, 1, &t) == PGN_OK);
	CHECK_INT(t.held, 0);
	CHECK_INT((int64_t)t.renewed, 1);
	CHECK_INT(t.leases.v[0].id, id);
	CHECK(t.leases.v[0].expires_ms > pgn_now_ms() + 3500000);
	pgn_lease_taken_release(&t);
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
	CHECK_INT(count("SELECT count(*) FROM lease WHERE shared = 1 AND "
	                "reason = 'longer' AND pattern = './src/../src/api/'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' "
	                "AND detail LIKE 'renewed %shared until %: longer'"),
	    1);
	/* A renewal without a reason keeps the reason and the time taken. */
	REQUIRE(take_on(db, "alice", 1, 3600000, NULL, p, 1, &t) == PGN_OK);
	CHECK_INT((int64_t)t.renewed, 1);
	CHECK_STR(t.leases.v[0].reason, "longer");
	CHECK_STR(t.leases.v[0].pattern, "./src/../src/api/");
	CHECK_INT(t.leases.v[0].created_ms,
	    count("SELECT created_ms FROM lease"));
	CHECK(t.leases.v[0].created_ms > 0 &&
	    t.leases.v[0].created_ms <= pgn_now_ms());
	pgn_lease_taken_release(&t);
	CHECK_INT(count("SELECT count(*) FROM lease WHERE reason = 'longer'"),
	    1);
}

static void
rule_release_by_pattern_or_all(void)
{
	size_t n = 9;

	CHECK(take1("alice", 0, "./a/"));
	CHECK(take1("alice", 0, "./b/"));
	CHECK(take1("alice", 0, "./c/"));
	CHECK(take1("bob", 0, "./d/"));
	CHECK_INT(release_as("alice", "a/../a/", &n), PGN_OK);
	CHECK_INT((int64_t)n, 1);
	/* not held: refused, nothing released */
	CHECK_INT(release_as("alice", "./d/", &n), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db),
	    "agent 'alice' holds no lease on './d/'");
	CHECK_INT(count("SELECT count(*) FROM lease"), 3);
	CHECK_INT(release_as("alice", NULL, &n), PGN_OK);
	CHECK_INT((int64_t)n, 2);
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' "
	                "AND detail LIKE 'released %'"),
	    3);
	/* each names the pattern as it was given */
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' "
	                "AND detail IN ('released ''./a/''', "
	                "'released ''./b/''', 'released ''./c/''')"),
	    3);
	/* released: another may take it */
	CHECK(take1("bob", 0, "./a/"));
}

static void
rule_an_expired_lease_is_listed_until_swept_and_never_enforced(void)
{
	struct pgn_lease_hit hit;
	struct pgn_leases l;
	int found = 1;

	CHECK(take1("alice", 0, "src/"));
	REQUIRE(pgn_exec(chk, "UPDATE lease SET expires_ms = 5", "test",
	            PGN_NONE) == PGN_OK);
	REQUIRE(pgn_lease_list(db, NULL, 0, &l) == PGN_OK);
	CHECK_INT((int64_t)l.n, 0);
	pgn_leases_release(&l);
	REQUIRE(pgn_lease_list(db, NULL, 1, &l) == PGN_OK);
	REQUIRE(l.n == 1);
	CHECK(!pgn_lease_live(&l.v[0], pgn_now_ms()));
	pgn_leases_release(&l);
	REQUIRE(pgn_lease_blocking(db, "bob", NULL, "src/a.c", &hit, &found) ==
	    PGN_OK);
	CHECK_INT(found, 0);
	/* the next change of the scope sweeps it, with a journal entry */
	CHECK(take1("bob", 0, "src/a.c"));
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
	CHECK_INT(count(
	              "SELECT count(*) FROM journal j JOIN agent a ON "
	              "a.id = j.agent_id WHERE a.name = 'alice' AND "
	              "j.kind = 'lease' AND j.detail LIKE 'expired ''src/''%'"),
	    1);
}

static void
rule_list_by_agent_sorted(void)
{
	struct pgn_leases l;

	CHECK(take1("bob", 0, "./z/"));
	CHECK(take1("alice", 1, "./y/"));
	CHECK(take1("alice", 0, "./x/"));
	REQUIRE(pgn_lease_list(db, NULL, 0, &l) == PGN_OK);
	REQUIRE(l.n == 3);
	CHECK_STR(l.v[0].holder, "alice");
	CHECK_STR(l.v[0].pattern, "./x/");
	CHECK_STR(l.v[1].pattern, "./y/");
	CHECK_INT(l.v[1].shared, 1);
	CHECK_STR(l.v[2].holder, "bob");
	pgn_leases_release(&l);
	REQUIRE(pgn_lease_list(db, "BOB", 0, &l) == PGN_OK);
	CHECK_INT((int64_t)l.n, 1);
	pgn_leases_release(&l);
	CHECK_INT(pgn_lease_list(db, "dave", 0, &l), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no agent 'dave'");
}

static void
rule_blocking_names_another_agents_exclusive_lease(void)
{
	struct pgn_lease_hit hit;
	struct pgn_lease_taken t;
	const char *p[1] = {"src/api/**"};
	int found = 0;

	REQUIRE(take_on(db, "alice", 0, 0, "refactor", p, 1, &t) == PGN_OK);
	pgn_lease_taken_release(&t);
	CHECK(take1("carol", 1, "./docs/"));
	REQUIRE(pgn_lease_blocking(db, "bob", NULL, "src/api/v1/users.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 1);
	CHECK_STR(hit.holder, "alice");
	CHECK_STR(hit.pattern, "src/api/**");
	CHECK_STR(hit.reason, "refactor");
	CHECK(hit.expires_ms > pgn_now_ms());
	CHECK(hit.id > 0);
	/* the holder's own call passes; so does nobody's named path */
	REQUIRE(pgn_lease_blocking(db, "alice", NULL, "src/api/x.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 0);
	/* a shared lease never blocks */
	REQUIRE(pgn_lease_blocking(db, "bob", NULL, "docs/a.md", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 0);
	REQUIRE(pgn_lease_blocking(db, "bob", NULL, "src/other.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 0);
	/* without an actor, every holder blocks */
	REQUIRE(pgn_lease_blocking(db, NULL, NULL, "src/api/x.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 1);
	/* the path's text is cleaned; one leaving the root is covered by
	 * nothing */
	REQUIRE(pgn_lease_blocking(db, "bob", NULL, "./src//x/../api/a.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 1);
	REQUIRE(pgn_lease_blocking(db, "bob", NULL, "../src/api/a.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 0);
	REQUIRE(pgn_lease_blocking(db, "bob", NULL, "/src/api/a.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 0);
	REQUIRE(
	    pgn_lease_blocking(db, "bob", NULL, "", &hit, &found) == PGN_OK);
	CHECK_INT(found, 0);
}

static void
rule_blocking_knows_the_acting_agent_by_its_session(void)
{
	struct pgn_lease_hit hit;
	char bound[PGN_MAX_NAME + 1];
	int found = 0;

	REQUIRE(pgn_session_bind(db, "claude", "claude:s1", "alice", bound) ==
	    PGN_OK);
	CHECK(take1("alice", 0, "src/"));
	REQUIRE(pgn_lease_blocking(db, NULL, "claude:s1", "src/a.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 0);
	REQUIRE(pgn_lease_blocking(db, NULL, "claude:unknown", "src/a.c", &hit,
	            &found) == PGN_OK);
	CHECK_INT(found, 1);
}

static void
rule_the_session_acts_as_its_agent(void)
{
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	char bound[PGN_MAX_NAME + 1];
	const char *p[1] = {"src/"};

	REQUIRE(pgn_session_bind(db, "claude", "claude:s1", "alice", bound) ==
	    PGN_OK);
	memset(&req, 0, sizeof(req));
	req.who.session = "claude:s1";
	req.who.agent_default = "bob";
	req.patterns = p;
	req.npatterns = 1;
	REQUIRE(pgn_lease_take(db, &req, &t) == PGN_OK);
	CHECK_STR(t.agent, "alice");
	pgn_lease_taken_release(&t);
	req.who.agent = "bob";
	CHECK_INT(pgn_lease_take(db, &req, &t), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db),
	    "session 'claude:s1' acts as its agent 'alice', not as 'bob'");
	req.who.session = NULL;
	req.who.agent = NULL;
	req.who.agent_default = NULL;
	CHECK_INT(pgn_lease_take(db, &req, &t), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "no agent to hold the lease");
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
}

static void
rule_bad_input_is_refused_and_nothing_is_stored(void)
{
	struct pgn_lease_taken t;
	const char *bad[1], *two[2] = {"ok/", "../x"};
	char big[PGN_MAX_LEASE_REASON + 2];
	const char *many[PGN_MAX_LEASE_PATTERNS + 1];
	size_t i;

	bad[0] = "../x";
	CHECK_INT(take_on(db, "alice", 0, 0, NULL, bad, 1, &t), PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "leaves");
	bad[0] = "src/[a";
	CHECK_INT(take_on(db, "alice", 0, 0, NULL, bad, 1, &t), PGN_EINVAL);
	bad[0] = "/etc/passwd";
	CHECK_INT(take_on(db, "alice", 0, 0, NULL, bad, 1, &t), PGN_EINVAL);
	CHECK_INT(take_on(db, "alice", 0, 0, NULL, two, 2, &t), PGN_EINVAL);
	bad[0] = "src/";
	CHECK_INT(take_on(db, "alice", 0, PGN_LEASE_TTL_MAX_MS + 1, NULL, bad,
	              1, &t),
	    PGN_EINVAL);
	CHECK_CONTAINS(pgn_errmsg(db), "a lease lasts 1 s to 8 h");
	CHECK_INT(take_on(db, "alice", 0, PGN_LEASE_TTL_MIN_MS - 1, NULL, bad,
	              1, &t),
	    PGN_EINVAL);
	CHECK_INT(take_on(db, "dave", 0, 0, NULL, bad, 1, &t), PGN_ENOTFOUND);
	CHECK_CONTAINS(pgn_errmsg(db), "no agent 'dave' in scope");
	CHECK_INT(take_on(db, "alice", 0, 0, "two\nlines", bad, 1, &t),
	    PGN_EINVAL);
	memset(big, 'r', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(take_on(db, "alice", 0, 0, big, bad, 1, &t), PGN_ETOOBIG);
	big[PGN_MAX_LEASE_REASON] = '\0'; /* at the bound: taken */
	for (i = 0; i < H_COUNT(many); i++)
		many[i] = "src/";
	CHECK_INT(take_on(db, "alice", 0, 0, NULL, many, H_COUNT(many), &t),
	    PGN_ETOOBIG);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease'"),
	    0);
	/* at the bounds: taken */
	CHECK_INT(take_on(db, "alice", 0, PGN_LEASE_TTL_MAX_MS, big, many,
	              PGN_MAX_LEASE_PATTERNS, &t),
	    PGN_OK);
	CHECK_INT((int64_t)t.leases.n, 1); /* the same pattern, once */
	pgn_lease_taken_release(&t);
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
}

static void
rule_a_scope_holds_at_most_max_leases(void)
{
	char pat[PGN_MAX_LEASES + 1][32];
	const char *p[1];
	struct pgn_lease_taken t;
	int i;

	for (i = 0; i <= PGN_MAX_LEASES; i++) {
		(void)snprintf(pat[i], sizeof(pat[i]), "./d%d/", i);
		p[0] = pat[i];
		REQUIRE(take_on(db, i % 2 ? "alice" : "bob", 0, 0, NULL, p, 1,
		            &t) == (i < PGN_MAX_LEASES ? PGN_OK : PGN_ETOOBIG));
		pgn_lease_taken_release(&t);
	}
	CHECK_CONTAINS(pgn_errmsg(db), "the limit of 256");
	CHECK_INT(count("SELECT count(*) FROM lease"), PGN_MAX_LEASES);
	/* a renewal adds nothing: still taken */
	p[0] = pat[0];
	CHECK_INT(take_on(db, "bob", 0, 0, NULL, p, 1, &t), PGN_OK);
	CHECK_INT(t.held, 0);
	pgn_lease_taken_release(&t);
}

/*
 * RACERS processes, each its own agent and connection, take overlapping
 * exclusive leases RACE_RUN times (releasing between rounds through the
 * parent): each round exactly one wins.
 */
static void
rule_racing_processes_never_both_take_overlapping_exclusive_leases(void)
{
	char name[16];
	pid_t kids[RACERS];
	int i, k, status, round, go[2], done[2];
	int64_t held;
	char byte;

	for (k = 0; k < RACERS; k++) {
		(void)snprintf(name, sizeof(name), "racer%d", k);
		REQUIRE(pgn_agent_add(db, name) == PGN_OK);
	}
	for (round = 0; round < RACE_RUN; round++) {
		REQUIRE(pipe(go) == 0);
		REQUIRE(pipe(done) == 0);
		for (k = 0; k < RACERS; k++) {
			kids[k] = fork();
			REQUIRE(kids[k] >= 0);
			if (kids[k] == 0) {
				struct pgn_lease_taken t;
				const char *p[1];
				pgn_db *d;
				int won;

				close(go[1]);
				close(done[0]);
				d = open_scoped();
				(void)snprintf(name, sizeof(name), "racer%d",
				    k);
				p[0] = k % 2 ? "src/**/*.c" : "src/api/";
				/* all start together */
				if (read(go[0], &byte, 1) < 0)
					_exit(3);
				if (take_on(d, name, 0, 0, NULL, p, 1, &t) !=
				    PGN_OK)
					_exit(2);
				won = !t.held;
				pgn_lease_taken_release(&t);
				pgn_db_close(d);
				_exit(won ? 0 : 1);
			}
		}
		close(go[0]);
		close(done[1]);
		close(done[0]);
		/* closing the pipe starts every one of them */
		close(go[1]);
		held = 0;
		for (k = 0; k < RACERS; k++) {
			REQUIRE(waitpid(kids[k], &status, 0) == kids[k]);
			REQUIRE(WIFEXITED(status));
			CHECK(WEXITSTATUS(status) <= 1);
			held += WEXITSTATUS(status) == 0;
		}
		CHECK_INT(held, 1);
		CHECK_INT(count("SELECT count(*) FROM lease"), 1);
		REQUIRE(pgn_exec(chk, "DELETE FROM lease", "test", PGN_NONE) ==
		    PGN_OK);
	}
	i = 0;
	(void)i;
}

/* The waiter's first refusal, told through a pipe; never cancels. */
static int
first_refusal(void *arg)
{
	int *fd = arg;

	if (*fd >= 0) {
		if (write(*fd, "r", 1) != 1) {
			/* the parent waits on the pipe's end instead */
		}
		close(*fd);
		*fd = -1;
	}
	return 0;
}

static void
rule_wait_takes_the_lease_once_its_holder_releases(void)
{
	int fds[2], status;
	char byte;
	size_t n;
	pid_t kid;

	CHECK(take1("alice", 0, "src/"));
	REQUIRE(pipe(fds) == 0);
	kid = fork();
	REQUIRE(kid >= 0);
	if (kid == 0) {
		struct pgn_lease_take req;
		struct pgn_lease_taken t;
		const char *p[1] = {"src/a.c"};
		pgn_db *d;
		int wfd = fds[1];

		close(fds[0]);
		d = open_scoped();
		memset(&req, 0, sizeof(req));
		req.who.agent = "bob";
		req.patterns = p;
		req.npatterns = 1;
		req.wait_ms = PGN_WAIT_MAX_MS;
		req.cancel = first_refusal;
		req.cancel_arg = &wfd;
		if (pgn_lease_take(d, &req, &t) != PGN_OK)
			_exit(2);
		_exit(t.held ? 1 : 0);
	}
	close(fds[1]);
	/* once the waiter has been refused, alice lets go */
	CHECK(read(fds[0], &byte, 1) == 1);
	close(fds[0]);
	REQUIRE(release_as("alice", "src/", &n) == PGN_OK);
	REQUIRE(waitpid(kid, &status, 0) == kid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_INT(count("SELECT count(*) FROM lease l JOIN agent a ON "
	                "a.id = l.agent_id WHERE a.name = 'bob'"),
	    1);
}

static void
rule_a_wait_ends_at_its_timeout_holding_nothing(void)
{
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	const char *p[1] = {"src/a.c"};

	CHECK(take1("alice", 0, "src/"));
	memset(&req, 0, sizeof(req));
	req.who.agent = "bob";
	req.patterns = p;
	req.npatterns = 1;
	req.wait_ms = 1;
	REQUIRE(pgn_lease_take(db, &req, &t) == PGN_OK);
	CHECK_INT(t.held, 1);
	pgn_lease_taken_release(&t);
	req.wait_ms = PGN_WAIT_MAX_MS + 1;
	CHECK_INT(pgn_lease_take(db, &req, &t), PGN_EINVAL);
}

/* Counts the calls: the wait asks after every look (and every sleep). */
static int
count_asks(void *arg)
{
	(*(int *)arg)++;
	return 0;
}

/*
 * A refused take is journalled (decision 0207): one entry of the agent
 * refused, naming the holder, and one of the holder, naming who asked;
 * a --wait that is refused look after look writes them once.
 */
static void
rule_a_refused_take_is_journalled_for_both_agents_once(void)
{
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	const char *p[1] = {"src/a.c"};
	int asks = 0;

	CHECK(take1("alice", 0, "src/**"));
	CHECK(!take1("bob", 0, "src/a.c"));
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
	CHECK_INT(count("SELECT count(*) FROM journal j JOIN agent a ON "
	                "a.id = j.agent_id WHERE a.name = 'bob' AND "
	                "j.kind = 'lease' AND j.peer = 'alice' AND j.detail "
	                "LIKE 'refused ''src/a.c'' exclusive: held by "
	                "alice''s exclusive lease on ''src/**'' until %Z'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal j JOIN agent a ON "
	                "a.id = j.agent_id WHERE a.name = 'alice' AND "
	                "j.kind = 'lease' AND j.peer = 'bob' AND j.detail "
	                "LIKE 'refused ''src/a.c'' exclusive to bob: its "
	                "exclusive lease on ''src/**'' until %Z'"),
	    1);
	/* a shared take against the exclusive lease says so */
	CHECK(!take1("carol", 1, "src/b.c"));
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' AND "
	                "detail LIKE 'refused ''src/b.c'' shared%'"),
	    2);
	/* a wait of more than one look: still one pair of entries */
	memset(&req, 0, sizeof(req));
	req.who.agent = "bob";
	req.patterns = p;
	req.npatterns = 1;
	req.wait_ms = PGN_WAIT_POLL_MS + PGN_WAIT_POLL_MS / 5;
	req.cancel = count_asks;
	req.cancel_arg = &asks;
	REQUIRE(pgn_lease_take(db, &req, &t) == PGN_OK);
	CHECK_INT(t.held, 1);
	pgn_lease_taken_release(&t);
	CHECK(asks >= 3); /* looked twice at least: asked after each */
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' AND "
	                "detail LIKE 'refused ''src/a.c''%'"),
	    4);
	CHECK_INT(count("SELECT count(*) FROM lease"), 1);
}

/*
 * --wait on pgn_wait_until: a blocker that expires, with nothing else
 * changing the database, ends the wait by its expiry; the expired lease
 * is swept (journalled) and the take passes.
 */
static void
rule_a_wait_takes_the_lease_once_the_blocker_expires(void)
{
	struct pgn_lease_take req;
	struct pgn_lease_taken t;
	const char *p[1] = {"src/a.c"}, *a[1] = {"src/"};

	REQUIRE(take_on(db, "alice", 0, PGN_LEASE_TTL_MIN_MS, NULL, a, 1, &t) ==
	    PGN_OK);
	pgn_lease_taken_release(&t);
	memset(&req, 0, sizeof(req));
	req.who.agent = "bob";
	req.patterns = p;
	req.npatterns = 1;
	req.wait_ms = PGN_WAIT_MAX_MS;
	REQUIRE(pgn_lease_take(db, &req, &t) == PGN_OK);
	CHECK_INT(t.held, 0);
	CHECK_INT((int64_t)t.leases.n, 1);
	pgn_lease_taken_release(&t);
	CHECK_INT(count("SELECT count(*) FROM lease l JOIN agent a ON "
	                "a.id = l.agent_id WHERE a.name = 'bob'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' AND "
	                "detail LIKE 'expired ''src/''%'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease' AND "
	                "detail LIKE 'refused %'"),
	    2);
}

static void (*const rules[])(void) = {
    rule_a_take_is_stored_and_journalled,
    rule_overlapping_exclusive_leases_of_two_agents_exclude,
    rule_shared_leases_coexist_and_exclude_exclusive_ones,
    rule_taking_what_one_holds_renews_it,
    rule_release_by_pattern_or_all,
    rule_an_expired_lease_is_listed_until_swept_and_never_enforced,
    rule_list_by_agent_sorted,
    rule_blocking_names_another_agents_exclusive_lease,
    rule_blocking_knows_the_acting_agent_by_its_session,
    rule_the_session_acts_as_its_agent,
    rule_bad_input_is_refused_and_nothing_is_stored,
    rule_a_scope_holds_at_most_max_leases,
    rule_racing_processes_never_both_take_overlapping_exclusive_leases,
    rule_wait_takes_the_lease_once_its_holder_releases,
    rule_a_wait_ends_at_its_timeout_holding_nothing,
    rule_a_refused_take_is_journalled_for_both_agents_once,
    rule_a_wait_takes_the_lease_once_the_blocker_expires,
};

static void
test_lease_rules_on_sqlite(void)
{
	be_rules(0, rules, H_COUNT(rules), setup, teardown);
}

static void
test_lease_rules_on_postgresql(void)
{
	if (be_have_pg())
		be_rules(1, rules, H_COUNT(rules), setup, teardown);
}

/* ---- the lease stamp (SQLite) -------------------------------------- */

static char dbpath[sizeof(be_where)], stamp[sizeof(be_where) + 16];

static void
stamp_setup(void)
{
	be_on_pg = 0;
	setup();
	(void)snprintf(dbpath, sizeof(dbpath), "%s", be_where);
	(void)snprintf(stamp, sizeof(stamp), "%s-leases", be_where);
}

static void
test_a_new_database_has_an_empty_stamp_and_a_missing_one_means_ask(void)
{
	stamp_setup();
	CHECK(access(stamp, F_OK) == 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 1);
	/* removed: nothing says there is no lease, so ask */
	REQUIRE(unlink(stamp) == 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, NULL, 0, pgn_now_ms()),
	    PGN_LEASE_NO_STAMP);
	/* the next change writes it again */
	CHECK(take1("alice", 0, "src/"));
	REQUIRE(release_as("alice", NULL, &(size_t){0}) == PGN_OK);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 1);
	/* no database at all: no lease */
	CHECK_INT(pgn_lease_none_live("/nonexistent/x.db", ROOT, 0), 1);
	teardown();
}

static void
test_the_stamp_judges_paths_without_the_database(void)
{
	const char *inside[2] = {"docs/a.md", "src/x.c"};
	const char *outside[3] = {"docs/a.md", "../src/x.c", NULL};
	const char *dotted[1] = {"docs/../src/./x.c"};
	int64_t now;

	stamp_setup();
	CHECK(take1("alice", 0, "./src/"));
	CHECK(take1("bob", 1, "./docs/"));
	now = pgn_now_ms();
	/* a path the exclusive lease covers: ask; others: clear */
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, inside, 2, now),
	    PGN_LEASE_ASK);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, dotted, 1, now),
	    PGN_LEASE_ASK);
	/* a shared lease never blocks; a path leaving the root is no one's */
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, outside, 3, now),
	    PGN_LEASE_CLEAR);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, NULL, 0, now),
	    PGN_LEASE_CLEAR);
	/* another scope of the database */
	CHECK_INT(pgn_lease_stamp_judge(dbpath, "/some/other/repo", inside, 2,
	              now),
	    PGN_LEASE_NONE);
	/* past every expiry: none, without a write */
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, inside, 2,
	              now + PGN_LEASE_TTL_DEFAULT_MS + 1000),
	    PGN_LEASE_NONE);
	/* a change in another scope keeps this scope's leases, and back */
	{
		pgn_db *o = h_open_path(be_where, 5000);
		struct pgn_lease_taken t;
		const char *p[1] = {"./lib/"}, *lib[1] = {"lib/a.c"};

		REQUIRE(pgn_db_set_scope(o, "/some/other/repo") == PGN_OK);
		REQUIRE(pgn_agent_add(o, "dave") == PGN_OK);
		REQUIRE(take_on(o, "dave", 0, 0, NULL, p, 1, &t) == PGN_OK);
		pgn_lease_taken_release(&t);
		CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, inside, 2,
		              pgn_now_ms()),
		    PGN_LEASE_ASK);
		CHECK_INT(pgn_lease_stamp_judge(dbpath, "/some/other/repo", lib,
		              1, pgn_now_ms()),
		    PGN_LEASE_ASK);
		CHECK(take1("carol", 0, "./tmp/"));
		CHECK_INT(pgn_lease_stamp_judge(dbpath, "/some/other/repo", lib,
		              1, pgn_now_ms()),
		    PGN_LEASE_ASK);
		pgn_db_close(o);
	}
	/* released: the exclusive one is gone from the stamp */
	REQUIRE(release_as("alice", NULL, &(size_t){0}) == PGN_OK);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, inside, 2, pgn_now_ms()),
	    PGN_LEASE_CLEAR);
	teardown();
}

/*
 * A reader that found no stamp makes it from the database (the hook
 * does), with what is live; it never replaces a stamp that is there.
 */
static void
test_a_missing_stamp_is_made_from_the_database_never_replaced(void)
{
	const char *in[1] = {"src/x.c"}, *out[1] = {"lib/y.c"};
	unsigned char junk[544];
	char *now;
	size_t len;

	stamp_setup();
	CHECK(take1("alice", 0, "./src/"));
	REQUIRE(unlink(stamp) == 0);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, in, 1, pgn_now_ms()),
	    PGN_LEASE_NO_STAMP);
	REQUIRE(pgn_lease_stamp_make(db) == PGN_OK);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, in, 1, pgn_now_ms()),
	    PGN_LEASE_ASK);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, out, 1, pgn_now_ms()),
	    PGN_LEASE_CLEAR);
	/* one there, even one not to be trusted, stays as it is */
	memset(junk, 7, sizeof(junk));
	h_write_file(stamp, (const char *)junk, sizeof(junk));
	REQUIRE(chmod(stamp, 0600) == 0);
	REQUIRE(pgn_lease_stamp_make(db) == PGN_OK);
	now = h_read_file(stamp, &len);
	REQUIRE(now != NULL);
	CHECK(len == sizeof(junk) && memcmp(now, junk, len) == 0);
	free(now);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, out, 1, pgn_now_ms()),
	    PGN_LEASE_ASK);
	teardown();
}

/*
 * The stamp's prefilter (pgn_stamp_may_match) says 0 only where the
 * match says 0: each pair's verdicts, and what the match says.
 */
static void
test_the_stamp_prefilter_never_refuses_a_match(void)
{
	static const struct {
		const char *pattern, *path;
		int match, may;
	} t[] = {
	    {"./src/", "src/x.c", 1, 1},
	    {"./src/", "srcx/x.c", 0, 0},
	    {"./src/", "src", 0, 1},
	    {"./other/d000/", "other/d000/a", 1, 1},
	    {"./other/d000/", "other/d001/a", 0, 0},
	    {"./other/d000/", "other/d000", 0, 1},
	    {"./other/d000/", "other", 0, 1},
	    {"docs/", "x/docs/y", 1, 1},
	    {"./a/b*/c", "a/bx/c", 1, 1},
	    {"./a/b*/c", "b/bx/c", 0, 0},
	    {"./a\\*b/c", "a*b/c", 1, 1},
	    {"./a/[bc]/d", "a/c/d", 1, 1},
	    {"./x.c", "x.c", 1, 1},
	    {"./A/", "a/x", 0, 0},
	    {"./a/**/z", "a/z", 1, 1},
	};
	char norm[PGN_LEASE_NORM_SIZE];
	struct pgn_err err;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		REQUIRE(pgn_glob_check(t[i].pattern, norm, sizeof(norm),
		            &err) == PGN_OK);
		CHECK_INT(pgn_glob_match(norm, t[i].path), t[i].match);
		CHECK_INT(pgn_stamp_may_match(norm, t[i].path), t[i].may);
	}
}

/* A take whose stamp cannot be written fails and stores nothing. */
static void
test_a_take_whose_stamp_cannot_be_written_stores_nothing(void)
{
	char tmp[sizeof(dbpath) + 32];
	struct pgn_lease_taken t;
	const char *p[1] = {"src/"};

	struct rlimit was, small;
	struct pgn_stamp_set set;
	struct stat sb;
	pgn_status rc;
	int none, e;

	stamp_setup();
	/* The temporary name taken by a directory. */
	(void)snprintf(tmp, sizeof(tmp), "%s-leases.tmp", dbpath);
	REQUIRE(mkdir(tmp, 0700) == 0);
	CHECK_INT(take_on(db, "alice", 0, 0, NULL, p, 1, &t), PGN_EIO);
	pgn_lease_taken_release(&t);
	CHECK(strstr(pgn_errmsg(db), "lease stamp") != NULL);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'lease'"),
	    0);
	/* and the stamp it had still says none */
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 1);
	REQUIRE(rmdir(tmp) == 0);
	/* Cut short (a full disk, a file size limit): the take stores
	 * nothing and the stamp it had still says none; a narrower stamp
	 * written in place and cut short is torn, which means ask. */
	REQUIRE(stat(stamp, &sb) == 0);
	REQUIRE(getrlimit(RLIMIT_FSIZE, &was) == 0);
	small = was;
	small.rlim_cur = (rlim_t)sb.st_size;
	REQUIRE(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	memset(&set, 0, sizeof(set));
	REQUIRE(pgn_stamp_set_add(&set, ROOT, "src/", 0, pgn_now_ms() + 60000));
	REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
	rc = take_on(db, "alice", 0, 0, NULL, p, 1, &t);
	none = pgn_lease_none_live(dbpath, ROOT, pgn_now_ms());
	e = pgn_stamp_write(dbpath, &set, 1);
	REQUIRE(setrlimit(RLIMIT_FSIZE, &was) == 0);
	pgn_stamp_set_release(&set);
	pgn_lease_taken_release(&t);
	CHECK_INT(rc, PGN_EIO);
	CHECK(strstr(pgn_errmsg(db), "lease stamp") != NULL);
	CHECK_INT(count("SELECT count(*) FROM lease"), 0);
	CHECK_INT(none, 1);
	CHECK(e != 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	CHECK(take1("alice", 0, "src/"));
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	REQUIRE(release_as("alice", NULL, &(size_t){0}) == PGN_OK);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 1);
	teardown();
}

/*
 * A change puts its stamp where the old one was (decision 0252: the two
 * exchanged, then the old removed): a new file, no temporary left; and
 * where a directory stands in the stamp's place the take fails and the
 * directory stays, as a rename over it would refuse.
 */
static void
test_a_take_puts_its_stamp_in_the_old_ones_place(void)
{
	char tmp[sizeof(dbpath) + 32], other[sizeof(dbpath) + 32];
	struct pgn_stamp_set set;
	struct pgn_lease_taken t;
	const char *p[1] = {"lib/"};
	struct stat before, after, dir;

	stamp_setup();
	(void)snprintf(tmp, sizeof(tmp), "%s-leases.tmp", dbpath);
	REQUIRE(stat(stamp, &before) == 0);
	CHECK(take1("alice", 0, "src/"));
	REQUIRE(stat(stamp, &after) == 0);
	CHECK(S_ISREG(after.st_mode) && (after.st_mode & 0777) == 0600);
	CHECK(after.st_ino != before.st_ino); /* wider: a new file (0260) */
	CHECK(access(tmp, F_OK) != 0 && errno == ENOENT);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	/* One known no wider is written in place where the file is ours
	 * alone (mode 0600, one name); else a new file takes its place and
	 * another name keeps the old one. */
	memset(&set, 0, sizeof(set));
	REQUIRE(stat(stamp, &before) == 0);
	REQUIRE(pgn_stamp_write(dbpath, &set, 1) == 0);
	REQUIRE(stat(stamp, &after) == 0);
	CHECK(after.st_ino == before.st_ino && (after.st_mode & 0777) == 0600);
	CHECK(access(tmp, F_OK) != 0 && errno == ENOENT);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 1);
	REQUIRE(chmod(stamp, 0644) == 0);
	REQUIRE(pgn_stamp_write(dbpath, &set, 1) == 0);
	REQUIRE(stat(stamp, &after) == 0);
	CHECK(after.st_ino != before.st_ino && (after.st_mode & 0777) == 0600);
	CHECK(access(tmp, F_OK) != 0 && errno == ENOENT);
	(void)snprintf(other, sizeof(other), "%s-leases.other", dbpath);
	REQUIRE(link(stamp, other) == 0);
	REQUIRE(stat(stamp, &before) == 0);
	REQUIRE(pgn_stamp_write(dbpath, &set, 1) == 0);
	REQUIRE(stat(stamp, &after) == 0);
	CHECK(after.st_ino != before.st_ino && after.st_nlink == 1);
	REQUIRE(stat(other, &dir) == 0);
	CHECK(dir.st_ino == before.st_ino && dir.st_size == before.st_size);
	REQUIRE(unlink(other) == 0);
	/* the next change writes the truth again */
	CHECK(take1("alice", 0, "etc/"));
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	/* a directory in the stamp's place */
	REQUIRE(unlink(stamp) == 0);
	REQUIRE(mkdir(stamp, 0700) == 0);
	CHECK_INT(take_on(db, "alice", 0, 0, NULL, p, 1, &t), PGN_EIO);
	pgn_lease_taken_release(&t);
	CHECK(stat(stamp, &dir) == 0 && S_ISDIR(dir.st_mode));
	CHECK(access(tmp, F_OK) != 0 && errno == ENOENT);
	CHECK_INT(count("SELECT count(*) FROM lease"), 2);
	REQUIRE(rmdir(stamp) == 0);
	teardown();
}

/*
 * The states a crash can leave are wider than the database, never
 * narrower: the stamp is written before the commit that adds a lease,
 * and narrowed only after the commit that removes one. Both only ask.
 */
static void
test_a_crash_between_commit_and_stamp_leaves_it_wider_only(void)
{
	const char *path[1] = {"src/x.c"};
	struct pgn_lease_hit hit;
	size_t len;
	char *wide;
	int found;

	stamp_setup();
	CHECK(take1("alice", 0, "src/"));
	wide = h_read_file(stamp, &len);
	REQUIRE(wide != NULL);
	/* a release committed, its narrowing lost (the old stamp back) */
	REQUIRE(release_as("alice", NULL, &(size_t){0}) == PGN_OK);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, path, 1, pgn_now_ms()),
	    PGN_LEASE_NONE);
	h_write_file(stamp, wide, len);
	REQUIRE(chmod(stamp, 0600) == 0);
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, path, 1, pgn_now_ms()),
	    PGN_LEASE_ASK);
	REQUIRE(pgn_lease_blocking(db, NULL, NULL, "src/x.c", &hit, &found) ==
	    PGN_OK);
	CHECK_INT(found, 0);
	/* a take's stamp written, its commit lost (the row never came) */
	CHECK(take1("alice", 0, "lib/"));
	REQUIRE(pgn_exec(chk, "DELETE FROM lease", "test", PGN_NONE) == PGN_OK);
	path[0] = "lib/y.c";
	CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, path, 1, pgn_now_ms()),
	    PGN_LEASE_ASK);
	free(wide);
	teardown();
}

/* An old stamp (version 1, 544 bytes) or an oversized one: ask. */
static void
test_an_old_or_oversized_stamp_means_ask(void)
{
	unsigned char v1[544];
	unsigned char *big;
	uint32_t magic = 0x31534c50u;

	stamp_setup();
	memset(v1, 0, sizeof(v1));
	memcpy(v1, &magic, sizeof(magic));
	h_write_file(stamp, (const char *)v1, sizeof(v1));
	REQUIRE(chmod(stamp, 0600) == 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	big = calloc(1, PGN_LEASE_STAMP_MAX + 1);
	REQUIRE(big != NULL);
	h_write_file(stamp, (const char *)big, PGN_LEASE_STAMP_MAX + 1);
	REQUIRE(chmod(stamp, 0600) == 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	free(big);
	teardown();
}

/*
 * PGN_LEASE_STAMP_MAX at its edge: entries that fill it exactly are
 * kept; one byte more and they are left out, the stamp saying so, and a
 * scope with a live lease asks.
 */
static void
test_the_stamp_holds_leases_up_to_its_bound(void)
{
	const char *path[1] = {"elsewhere/x.c"};
	struct pgn_stamp_set set;
	struct pgn_stamp_view v;
	char norm[PGN_LEASE_NORM_SIZE];
	unsigned char *bytes;
	size_t len, i, room, last;
	int64_t exp = pgn_now_ms() + 600000;

	stamp_setup();
	/* 62 entries of 500-byte forms, then one that fills the rest */
	room = PGN_LEASE_STAMP_MAX - PGN_STAMP_HEAD - 8;
	for (last = 0; last < 2; last++) {
		memset(&set, 0, sizeof(set));
		for (i = 0; i < 62; i++) {
			memset(norm, 'a', 500);
			(void)snprintf(norm, sizeof(norm), "%02zu", i);
			norm[2] = 'a';
			norm[500] = '\0';
			REQUIRE(pgn_stamp_set_add(&set, ROOT, norm, 0, exp));
		}
		len = room - 62 * (PGN_STAMP_ENTRY_HEAD + 501) -
		    PGN_STAMP_ENTRY_HEAD - 1 + last;
		memset(norm, 'b', len);
		norm[len] = '\0';
		REQUIRE(pgn_stamp_set_add(&set, ROOT, norm, 0, exp));
		REQUIRE(pgn_stamp_write(dbpath, &set, 0) == 0);
		pgn_stamp_set_release(&set);
		bytes = (unsigned char *)h_read_file(stamp, &len);
		REQUIRE(bytes != NULL);
		CHECK_INT(pgn_stamp_parse(bytes, len, &v), 1);
		if (last == 0) {
			CHECK_INT(len, PGN_LEASE_STAMP_MAX);
			CHECK_INT(v.nentries, 63);
			CHECK_INT(v.flags & PGN_STAMP_OVERFLOW, 0);
			CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, path, 1,
			              pgn_now_ms()),
			    PGN_LEASE_CLEAR);
		} else {
			CHECK_INT(v.nentries, 0);
			CHECK_INT(v.flags & PGN_STAMP_OVERFLOW,
			    PGN_STAMP_OVERFLOW);
			CHECK_INT(pgn_lease_stamp_judge(dbpath, ROOT, path, 1,
			              pgn_now_ms()),
			    PGN_LEASE_ASK);
			/* another scope's slot is still empty: none */
			CHECK_INT(pgn_lease_stamp_judge(dbpath, "/other", path,
			              1, pgn_now_ms()),
			    PGN_LEASE_NONE);
		}
		free(bytes);
	}
	teardown();
}

static void
test_the_stamp_follows_take_release_and_expiry(void)
{
	struct pgn_leases l;
	int64_t exp;
	size_t n;

	stamp_setup();
	CHECK(take1("alice", 0, "src/"));
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	/* another scope of the database: its slot says none */
	CHECK_INT(pgn_lease_none_live(dbpath, "/some/other/repo", pgn_now_ms()),
	    1);
	REQUIRE(pgn_lease_list(db, NULL, 0, &l) == PGN_OK);
	REQUIRE(l.n == 1);
	exp = l.v[0].expires_ms;
	pgn_leases_release(&l);
	/* past the expiry the stamp says none, without a write */
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, exp - 1), 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, exp), 1);
	REQUIRE(release_as("alice", NULL, &n) == PGN_OK);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 1);
	/* a shared lease is live too (the hook asks; it never blocks) */
	CHECK(take1("bob", 1, "docs/"));
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	teardown();
}

static void
test_a_renewal_that_shortens_lowers_the_stamp(void)
{
	struct pgn_lease_taken t;
	const char *p[1] = {"src/"};
	int64_t now;

	stamp_setup();
	REQUIRE(take_on(db, "alice", 0, PGN_LEASE_TTL_MAX_MS, NULL, p, 1, &t) ==
	    PGN_OK);
	pgn_lease_taken_release(&t);
	REQUIRE(take_on(db, "alice", 0, 60000, NULL, p, 1, &t) == PGN_OK);
	pgn_lease_taken_release(&t);
	now = pgn_now_ms();
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, now + 120000), 1);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, now), 0);
	teardown();
}

static void
test_a_stamp_not_to_be_trusted_means_ask_the_database(void)
{
	char other[sizeof(dbpath) + 32], moved[sizeof(dbpath) + 32];
	unsigned char b[8];
	int fd;

	stamp_setup();
	CHECK(take1("alice", 0, "src/"));
	REQUIRE(release_as("alice", NULL, &(size_t){0}) == PGN_OK);
	REQUIRE(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()) == 1);
	/* a PostgreSQL store: other machines take leases there */
	CHECK_INT(pgn_lease_none_live("host=/tmp dbname=x", ROOT, 0), 0);
	/* readable by others */
	REQUIRE(chmod(stamp, 0644) == 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	REQUIRE(chmod(stamp, 0600) == 0);
	/* torn: a byte changed */
	fd = open(stamp, O_RDWR);
	REQUIRE(fd >= 0);
	REQUIRE(pread(fd, b, 1, 40) == 1);
	b[0] ^= 1;
	REQUIRE(pwrite(fd, b, 1, 40) == 1);
	close(fd);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	/* rewritten by the next change */
	CHECK(take1("alice", 0, "src/"));
	REQUIRE(release_as("alice", NULL, &(size_t){0}) == PGN_OK);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 1);
	/* another database file under the same name (a restore) */
	pgn_db_close(db);
	pgn_db_close(chk);
	db = chk = NULL;
	(void)snprintf(moved, sizeof(moved), "%s.old", dbpath);
	(void)snprintf(other, sizeof(other), "%s.copy", dbpath);
	REQUIRE(rename(dbpath, moved) == 0);
	{
		size_t len;
		char *bytes = h_read_file(moved, &len);

		REQUIRE(bytes != NULL);
		h_write_file(other, bytes, len);
		free(bytes);
	}
	REQUIRE(rename(other, dbpath) == 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	/* a symbolic link in its place */
	REQUIRE(unlink(stamp) == 0);
	REQUIRE(symlink(moved, stamp) == 0);
	CHECK_INT(pgn_lease_none_live(dbpath, ROOT, pgn_now_ms()), 0);
	be_drop();
}

/* ---- the CLI's helpers -------------------------------------------- */

static void
test_durations_are_numbers_with_units(void)
{
	static const struct {
		const char *s;
		int64_t ms; /* -1: refused */
	} t[] = {
	    {"90s", 90000},
	    {"30m", 1800000},
	    {"2h", 7200000},
	    {"1h30m", 5400000},
	    {"1d", 86400000},
	    {"45", 45000},
	    {"0s", 0},
	    {"999999999s", 999999999000LL},
	    {"", -1},
	    {"m", -1},
	    {"1x", -1},
	    {"1h30", -1},
	    {"-5m", -1},
	    {" 5m", -1},
	    {"5m ", -1},
	    {"1000000000s", -1},
	    {"1.5h", -1},
	};
	int64_t ms;
	size_t i;

	for (i = 0; i < H_COUNT(t); i++) {
		pgn_status st = pgn_parse_duration(t[i].s, &ms);

		if (t[i].ms < 0) {
			CHECK_INT(st, PGN_EINVAL);
			CHECK_INT(ms, 0);
		} else {
			CHECK_INT(st, PGN_OK);
			CHECK_INT(ms, t[i].ms);
		}
	}
	CHECK_INT(pgn_parse_duration(NULL, &ms), PGN_EINVAL);
}

static void
test_an_absolute_path_in_the_scope_names_that_place(void)
{
	char out[PGN_MAX_LEASE_PATTERN + 4];
	struct pgn_err err;

	pgn_err_clear(&err);
	REQUIRE(pgn_lease_relative("/repo", "/repo/src/api/", out, sizeof(out),
	            &err) == PGN_OK);
	CHECK_STR(out, "./src/api/");
	REQUIRE(pgn_lease_relative("/repo/", "/repo//docs", out, sizeof(out),
	            &err) == PGN_OK);
	CHECK_STR(out, "./docs");
	REQUIRE(pgn_lease_relative("/repo", "/repo", out, sizeof(out), &err) ==
	    PGN_OK);
	CHECK_STR(out, ".");
	REQUIRE(pgn_lease_relative("/repo", "src/**", out, sizeof(out), &err) ==
	    PGN_OK);
	CHECK_STR(out, "src/**");
	CHECK_INT(pgn_lease_relative("/repo", "/repository/x", out, sizeof(out),
	              &err),
	    PGN_EINVAL);
	CHECK_STR(err.msg, "'/repository/x' is outside the scope /repo");
	CHECK_INT(pgn_lease_relative("/repo", "/etc/passwd", out, sizeof(out),
	              &err),
	    PGN_EINVAL);
	CHECK_INT(pgn_lease_relative("", "/etc/passwd", out, sizeof(out), &err),
	    PGN_EINVAL);
	CHECK_CONTAINS(err.msg, "outside the scope (global)");
	CHECK_INT(pgn_lease_relative("/repo", "abcdef", out, 6, &err),
	    PGN_ETOOBIG);
	REQUIRE(pgn_lease_relative("/repo", "abcde", out, 6, &err) == PGN_OK);
	CHECK_INT(pgn_lease_relative("/repo", "/repo/abcd", out, 6, &err),
	    PGN_ETOOBIG);
}

static const struct h_test tests[] = {
    H_TEST(test_lease_rules_on_sqlite),
    H_TEST(test_lease_rules_on_postgresql),
    H_TEST(test_a_new_database_has_an_empty_stamp_and_a_missing_one_means_ask),
    H_TEST(test_the_stamp_judges_paths_without_the_database),
    H_TEST(test_a_missing_stamp_is_made_from_the_database_never_replaced),
    H_TEST(test_the_stamp_prefilter_never_refuses_a_match),
    H_TEST(test_a_take_whose_stamp_cannot_be_written_stores_nothing),
    H_TEST(test_a_take_puts_its_stamp_in_the_old_ones_place),
    H_TEST(test_a_crash_between_commit_and_stamp_leaves_it_wider_only),
    H_TEST(test_an_old_or_oversized_stamp_means_ask),
    H_TEST(test_the_stamp_holds_leases_up_to_its_bound),
    H_TEST(test_the_stamp_follows_take_release_and_expiry),
    H_TEST(test_a_renewal_that_shortens_lowers_the_stamp),
    H_TEST(test_a_stamp_not_to_be_trusted_means_ask_the_database),
    H_TEST(test_durations_are_numbers_with_units),
    H_TEST(test_an_absolute_path_in_the_scope_names_that_place),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
