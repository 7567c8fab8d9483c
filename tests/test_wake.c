/*
 * The doorbell (decisions 0175-0177) on every backend: a send rings an
 * idle bound Claude session's messaging socket once — a fixed line that
 * names the session, never the mail — and records it (the message
 * woken, the journal); a second send while that ring is outstanding
 * rings nothing; low, reach.wake, the governor's cap and a busy session
 * ring nothing; a hostile or stale sessions file, a socket that is not
 * one, not ours, or does not answer: the send still succeeds and the
 * reason is in wake.log. The "session" here is this test process: it
 * publishes a sessions file as Claude Code 2.1.332 does and listens on
 * the socket, so the listener's pid (SO_PEERCRED) is the file's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "backends.h"
#include "pgn_int.h"
#include "hosts_int.h"
#include "store_int.h"
#include "pigeon/hook.h"
#include "pigeon/hosts.h"
#include "claim.h"

#define SID "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
#define KEY "claude:" SID

static pgn_db *db;   /* the library's handle */
static pgn_db *chk;  /* a second connection, for checks */
static int lfd = -1; /* the fake session's listening socket */
static char cfgdir[PATH_MAX], transcript[PATH_MAX], sessdir[PATH_MAX],
    sockdir[PATH_MAX], sockpath[PATH_MAX], sessfile[PATH_MAX], home[PATH_MAX];

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f != NULL);
	REQUIRE(fputs(text, f) >= 0);
	REQUIRE(fclose(f) == 0);
}

/* This process's start time, field 22 of /proc/self/stat. */
static void
own_start(char out[32])
{
	char buf[1024], *p;
	int fd, i;
	ssize_t n;

	fd = open("/proc/self/stat", O_RDONLY);
	REQUIRE(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	REQUIRE(n > 0);
	buf[n] = '\0';
	p = strrchr(buf, ')') + 1;
	for (i = 3; i < 22; i++) {
		p = strchr(p + 1, ' ');
		REQUIRE(p != NULL);
	}
	(void)sscanf(p + 1, "%31s", out);
}

/* The sessions file as Claude writes it, with these fields. */
static void
publish(const char *status, const char *start, const char *sock)
{
	char text[4096], mine[32];

	own_start(mine);
	REQUIRE(
	    snprintf(text, sizeof(text),
	        "{\"pid\":%ld,\"sessionId\":\"%s\",\"cwd\":\"/x\","
	        "\"procStart\":\"%s\",\"version\":\"2.1.332\","
	        "\"kind\":\"interactive\",\"messagingSocketPath\":\"%s\","
	        "\"status\":\"%s\"}",
	        (long)getpid(), SID, start != NULL ? start : mine,
	        sock != NULL ? sock : sockpath, status) < (int)sizeof(text));
	put(sessfile, text);
}

static void
listen_at(const char *path)
{
	struct sockaddr_un sa;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	REQUIRE(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(lfd >= 0);
	REQUIRE(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	REQUIRE(listen(lfd, 16) == 0);
}

/* bob, bound to session KEY, whose transcript names the config dir. */
static void
bind_bob_turn(const char *turn)
{
	be_claim_turn(db, "claude", KEY, "bob", turn, transcript);
}

static void
bind_bob(void)
{
	bind_bob_turn("p1");
}

static void
setup(void)
{
	H_PATH(home, "state");
	REQUIRE(mkdir(home, 0700) == 0);
	REQUIRE(setenv("PIGEON_HOME", home, 1) == 0);
	H_PATH(cfgdir, "claude");
	REQUIRE(mkdir(cfgdir, 0700) == 0);
	h_join(sessdir, sizeof(sessdir), cfgdir, "sessions");
	REQUIRE(mkdir(sessdir, 0700) == 0);
	REQUIRE(
	    snprintf(transcript, sizeof(transcript), "%s/projects/-p/%s.jsonl",
	        cfgdir, SID) < (int)sizeof(transcript));
	H_PATH(sockdir, "cc-socks");
	REQUIRE(mkdir(sockdir, 0700) == 0);
	REQUIRE(snprintf(sockpath, sizeof(sockpath), "%s/%ld.sock", sockdir,
	            (long)getpid()) < (int)sizeof(sockpath));
	REQUIRE(snprintf(sessfile, sizeof(sessfile), "%s/%ld.json", sessdir,
	            (long)getpid()) < (int)sizeof(sessfile));
	listen_at(sockpath);
	publish("idle", NULL, NULL);
	be_open_pair("pgn_wake", &db, &chk);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	bind_bob();
}

static void
teardown(void)
{
	if (lfd >= 0)
		close(lfd);
	lfd = -1;
	(void)be_close_pair(&db, &chk);
}

static int64_t
count(const char *sql)
{
	return be_count(chk, sql);
}

static pgn_status
send_p(const char *body, int priority)
{
	return be_send_one(db, "alice", "bob", body, priority);
}

/*
 * The frame a ring left on the socket, or "" when none: the ring is
 * done when pgn_send returns, so a connection is either pending now or
 * never comes (a zero-timeout look, no timing).
 */
static void
frame(char *out, size_t cap)
{
	struct pollfd p = {.fd = lfd, .events = POLLIN};
	size_t len = 0;
	ssize_t got;
	int c;

	out[0] = '\0';
	if (poll(&p, 1, 0) != 1)
		return;
	c = accept(lfd, NULL, NULL);
	REQUIRE(c >= 0);
	/* The writer has written and closed: read to the end. */
	while (len + 1 < cap && (got = read(c, out + len, cap - 1 - len)) > 0)
		len += (size_t)got;
	out[len] = '\0';
	close(c);
}

static void
wake_log(char *out, size_t cap)
{
	char path[PATH_MAX];
	FILE *f;
	size_t n = 0;

	out[0] = '\0';
	h_join(path, sizeof(path), home, "wake.log");
	f = fopen(path, "r");
	if (f == NULL)
		return;
	n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	fclose(f);
}

/* The line the model reads: Claude's own doorbell row. */
static const char *
line(void)
{
	return pgn_host_get(pgn_host_by_name("claude"))->doorbell->line;
}

/* ---- rules ------------------------------------------------------------ */

static void
rule_a_send_rings_an_idle_session_once_with_the_fixed_line(void)
{
	char f[2048], want[512];

	REQUIRE(send_p("SECRET-BODY the build is broken", 0) == PGN_OK);
	frame(f, sizeof(f));
	REQUIRE(
	    snprintf(want, sizeof(want),
	        "{\"type\":\"user\",\"session_id\":\"%s\",\"from\":\"pigeon\","
	        "\"message\":{\"role\":\"user\",\"content\":\"%s (#1).\"}}\n",
	        SID, line()) < (int)sizeof(want));
	CHECK_STR(f, want);
	CHECK(strstr(f, "SECRET") == NULL);
	CHECK(strchr(line(), '"') == NULL && strchr(line(), '\\') == NULL);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0 "
	                "AND woken_via = 'claude-socket'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'woken' "
	                "AND peer = '" KEY "' AND message_id = 1"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 1);
}

static void
rule_a_second_send_while_the_ring_is_outstanding_rings_nothing(void)
{
	char f[2048];

	REQUIRE(send_p("one", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK(f[0] != '\0');
	REQUIRE(send_p("two", 1) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'woken'"),
	    1);
}

static void
rule_after_a_delivery_the_next_send_rings_again(void)
{
	struct pgn_turn t;
	struct pgn_turn_out out;
	char f[2048];

	REQUIRE(send_p("one", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK(f[0] != '\0');
	/* The woken turn's prompt hook delivers it. */
	memset(&t, 0, sizeof(t));
	t.host = "claude";
	t.session = KEY;
	t.agent = "bob";
	t.turn = "p2";
	t.route = "prompt";
	t.transcript = transcript;
	t.max_continues = 3;
	t.continuation = 1;
	t.keep_continues = 1;
	memset(&out, 0, sizeof(out));
	REQUIRE(pgn_turn_claim(db, &t, &out) == PGN_OK);
	CHECK_INT((int64_t)out.msgs.n, 1);
	pgn_msgs_release(&out.msgs);
	CHECK_INT(count("SELECT auto_continues FROM session"), 1);
	REQUIRE(send_p("two", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK(f[0] != '\0');
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 2);
}

/* Claude drops a body it saw from the same sender within 30 s: two
 * rings in a row must differ (they name the message that rang). */
static void
rule_two_rings_in_a_row_are_not_the_same_frame(void)
{
	char f1[2048], f2[2048];

	REQUIRE(send_p("one", 0) == PGN_OK);
	frame(f1, sizeof(f1));
	bind_bob_turn("p2");
	REQUIRE(send_p("two", 0) == PGN_OK);
	frame(f2, sizeof(f2));
	CHECK(f1[0] != '\0' && f2[0] != '\0');
	CHECK(strcmp(f1, f2) != 0);
	CHECK_CONTAINS(f2, "this turn (#2).");
}

/* A session stamped by another machine (PostgreSQL: one store, many
 * machines, decision 0177): its socket is not this machine's to ring. */
static void
rule_a_session_of_another_machine_is_not_rung(void)
{
	char f[2048];

	REQUIRE(pgn_exec(chk, "UPDATE session SET machine = 'elsewhere@b'",
	            "moving", PGN_NONE) == PGN_OK);
	REQUIRE(send_p("across", PGN_PRIORITY_URGENT) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 0);
}

/*
 * Two machines on one PostgreSQL store (decision 0210): bob's session
 * lives on B (its own PIGEON_HOME and PIGEON_MACHINE); a send on A
 * writes to no socket and leaves the ring to B's follower, which rings
 * exactly once; low and reach.wake off ring nothing there either. On
 * SQLite there is no other machine: the follower is refused.
 */
static void
as_machine(const char *m, const char *state)
{
	char dir[PATH_MAX];

	H_PATH(dir, state);
	(void)mkdir(dir, 0700);
	REQUIRE(setenv("PIGEON_HOME", dir, 1) == 0);
	REQUIRE(setenv("PIGEON_MACHINE", m, 1) == 0);
}

static void
rule_a_send_from_another_machine_rings_on_the_sessions_machine(void)
{
	pgn_db *b = NULL;
	char f[2048];
	size_t rung = 9;

	b = h_open_path(be_where, 0);
	as_machine("machine-b", "state-b");
	REQUIRE(pgn_exec(chk, "DELETE FROM session", "unbinding", PGN_NONE) ==
	    PGN_OK);
	bind_bob_turn("p-b");
	if (!be_on_pg) {
		CHECK_INT(pgn_wake_listen(b, &rung), PGN_EINVAL);
		goto out;
	}
	REQUIRE(pgn_wake_listen(b, &rung) == PGN_OK);
	CHECK_INT(rung, 0);
	as_machine("machine-a", "state-a");
	REQUIRE(send_p("low from A", PGN_PRIORITY_LOW) == PGN_OK);
	REQUIRE(send_p("from A", PGN_PRIORITY_NORMAL) == PGN_OK);
	REQUIRE(send_p("again from A", PGN_PRIORITY_URGENT) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, ""); /* A writes to no socket */
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
	as_machine("machine-b", "state-b");
	/* The bell comes at A's commit: bounded by it, capped generously. */
	rung = 0;
	REQUIRE(pgn_wake_next(b, 30000, &rung) == PGN_OK);
	CHECK_INT(rung, 1);
	frame(f, sizeof(f));
	CHECK_CONTAINS(f, "(#2).");
	CHECK_STR(strstr(f, "from A") == NULL ? "" : f, "");
	frame(f, sizeof(f));
	CHECK_STR(f, ""); /* once */
	REQUIRE(pgn_wake_next(b, 0, &rung) == PGN_OK);
	CHECK_INT(rung, 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0 "
	                "AND woken_via = 'claude-socket'"),
	    1);
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'woken'"),
	    1);
	/* A later look (a restart) rings nothing while the ring is out. */
	REQUIRE(pgn_wake_listen(b, &rung) == PGN_OK);
	CHECK_INT(rung, 0);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
out:
	(void)unsetenv("PIGEON_MACHINE");
	REQUIRE(setenv("PIGEON_HOME", home, 1) == 0);
	pgn_db_close(b);
}

static void
rule_low_rings_nothing(void)
{
	char f[2048];

	REQUIRE(send_p("low", PGN_PRIORITY_LOW) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
}

/* bob of a project whose config says "reach": {"wake": WAKE}. */
static void
project(const char *wake)
{
	char dir[PATH_MAX], path[PATH_MAX], text[128];

	H_PATH(dir, "proj");
	REQUIRE(mkdir(dir, 0700) == 0);
	h_join(path, sizeof(path), dir, ".pigeon");
	REQUIRE(mkdir(path, 0700) == 0);
	h_join(path, sizeof(path), dir, ".pigeon/config.json");
	REQUIRE(snprintf(text, sizeof(text), "{\"reach\": {\"wake\": \"%s\"}}",
	            wake) < (int)sizeof(text));
	put(path, text);
	REQUIRE(pgn_db_set_scope(db, dir) == PGN_OK);
	REQUIRE(pgn_agent_add(db, "bob") == PGN_OK);
	/* A session keeps its agent: this one starts over in the project. */
	REQUIRE(pgn_exec(chk, "DELETE FROM session", "unbinding", PGN_NONE) ==
	    PGN_OK);
	bind_bob_turn("p-project");
}

static void
rule_reach_wake_off_rings_nothing(void)
{
	char f[2048];

	project("off");
	REQUIRE(send_p("urgent", PGN_PRIORITY_URGENT) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
}

static void
rule_reach_wake_urgent_rings_for_urgent_only(void)
{
	char f[2048];

	project("urgent");
	REQUIRE(send_p("normal", PGN_PRIORITY_NORMAL) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	REQUIRE(send_p("urgent", PGN_PRIORITY_URGENT) == PGN_OK);
	frame(f, sizeof(f));
	CHECK(f[0] != '\0');
}

static void
rule_the_governors_cap_rings_nothing(void)
{
	char f[2048], log[4096];

	REQUIRE(pgn_exec(chk, "UPDATE session SET auto_continues = 3",
	            "capping", PGN_NONE) == PGN_OK);
	REQUIRE(send_p("capped", 1) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	wake_log(log, sizeof(log));
	CHECK_CONTAINS(log, "continuations in a row, the cap");
}

static void
rule_a_busy_session_is_not_rung_and_the_claim_is_given_back(void)
{
	char f[2048], log[4096];

	publish("busy", NULL, NULL);
	REQUIRE(send_p("busy", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 0);
	wake_log(log, sizeof(log));
	CHECK_CONTAINS(log, "not rung (busy)");
	/* Idle again: the next send rings. */
	publish("idle", NULL, NULL);
	REQUIRE(send_p("idle", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK(f[0] != '\0');
}

/* Every hostile or stale file: no frame, the send queued, a reason. */
static void
refused(const char *want)
{
	char f[2048], log[4096];

	REQUIRE(send_p("hostile", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK_STR(f, "");
	CHECK_INT(count("SELECT count(*) FROM message"), 1);
	CHECK_INT(count("SELECT count(*) FROM session WHERE rung_ms > 0"), 0);
	wake_log(log, sizeof(log));
	CHECK_CONTAINS(log, want);
}

static void
rule_a_recycled_pid_is_not_rung(void)
{
	publish("idle", "1", NULL);
	refused("is gone or is another process");
}

static void
rule_a_symlinked_sessions_file_is_not_read(void)
{
	char real[PATH_MAX];

	H_PATH(real, "elsewhere.json");
	REQUIRE(rename(sessfile, real) == 0);
	REQUIRE(symlink(real, sessfile) == 0);
	refused("no live session file");
}

static void
rule_a_socket_outside_the_hosts_directory_is_not_rung(void)
{
	char other[PATH_MAX], dir[PATH_MAX];

	close(lfd);
	H_PATH(dir, "elsewhere");
	REQUIRE(mkdir(dir, 0700) == 0);
	REQUIRE(snprintf(other, sizeof(other), "%s/%ld.sock", dir,
	            (long)getpid()) < (int)sizeof(other));
	listen_at(other);
	publish("idle", NULL, other);
	refused("is outside a cc-socks directory");
}

static void
rule_a_path_that_is_not_a_socket_is_not_rung(void)
{
	close(lfd);
	lfd = -1;
	REQUIRE(unlink(sockpath) == 0);
	put(sockpath, "not a socket");
	refused("is not a socket");
}

static void
rule_a_socket_named_for_another_pid_is_not_rung(void)
{
	char other[PATH_MAX];

	REQUIRE(snprintf(other, sizeof(other), "%s/1.sock", sockdir) <
	    (int)sizeof(other));
	publish("idle", NULL, other);
	refused("is not named for pid");
}

static void
rule_a_shared_sessions_directory_is_not_trusted(void)
{
	REQUIRE(chmod(sessdir, 0777) == 0);
	refused("is not this user's alone");
}

static void
rule_a_socket_that_does_not_answer_fails_within_the_bound(void)
{
	struct sockaddr_un sa;
	int i, fds[64], n = 0;

	/* A full backlog: the listener accepts nothing. */
	close(lfd);
	REQUIRE(unlink(sockpath) == 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sockpath, strlen(sockpath) + 1);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	REQUIRE(lfd >= 0);
	REQUIRE(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	REQUIRE(listen(lfd, 0) == 0);
	for (i = 0; i < 64; i++) {
		fds[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fds[n] < 0)
			break;
		if (connect(fds[n], (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			close(fds[n]);
			break;
		}
		n++;
	}
	{
		char f[2048], log[4096];

		REQUIRE(send_p("no answer", 0) == PGN_OK);
		CHECK_INT(count("SELECT count(*) FROM message"), 1);
		CHECK_INT(
		    count("SELECT count(*) FROM message WHERE woken_ms > 0"),
		    0);
		wake_log(log, sizeof(log));
		CHECK_CONTAINS(log, "not rung (failed)");
		(void)f;
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
}

static void
rule_a_dead_session_is_gone_and_the_send_succeeds(void)
{
	REQUIRE(unlink(sessfile) == 0);
	refused("not rung (gone)");
}

static void
rule_a_stale_ring_is_journalled_unheard_and_rings_again(void)
{
	struct pgn_msg_status s;
	int64_t id = 1;
	char f[2048];

	REQUIRE(send_p("one", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK(f[0] != '\0');
	/* The ring is older than PGN_WAKE_HEARD_MS, with no delivery. */
	REQUIRE(pgn_exec(chk, "UPDATE session SET rung_ms = rung_ms - 120001",
	            "ageing", PGN_NONE) == PGN_OK);
	REQUIRE(pgn_exec(chk, "UPDATE message SET woken_ms = woken_ms - 120001",
	            "ageing", PGN_NONE) == PGN_OK);
	memset(&s, 0, sizeof(s));
	REQUIRE(pgn_msg_status(db, &id, 1, &s) == PGN_OK);
	CHECK(s.woken_ms != 0);
	CHECK_STR(s.woken_via, "claude-socket");
	CHECK(s.unheard);
	pgn_msg_status_release(&s, 1);
	REQUIRE(send_p("two", 0) == PGN_OK);
	frame(f, sizeof(f));
	CHECK(f[0] != '\0');
	CHECK_INT(count("SELECT count(*) FROM journal WHERE kind = 'woken' "
	                "AND detail LIKE 'unheard:%'"),
	    1);
}

static void
rule_status_shows_a_fresh_ring_heard(void)
{
	struct pgn_msg_status s;
	int64_t id = 1;
	char f[2048];

	REQUIRE(send_p("one", 0) == PGN_OK);
	frame(f, sizeof(f));
	memset(&s, 0, sizeof(s));
	REQUIRE(pgn_msg_status(db, &id, 1, &s) == PGN_OK);
	CHECK(s.woken_ms != 0);
	CHECK(!s.unheard);
	pgn_msg_status_release(&s, 1);
}

/*
 * A follower whose session the server ended (decision 0245) connects
 * again and, since rings notified while nobody listened are gone, looks
 * at every queued message once: the send made meanwhile still rings.
 */
static void
rule_a_follower_that_lost_its_session_rings_what_came_meanwhile(void)
{
	static const struct timespec tick = {0, 10000000};
	pgn_db *b = NULL;
	size_t rung = 9, total = 0;
	int i;

	if (!be_on_pg)
		return; /* one machine on SQLite: no follower (above) */
	b = h_open_path(be_where, 0);
	as_machine("machine-b", "state-b");
	REQUIRE(pgn_exec(chk, "DELETE FROM session", "unbinding", PGN_NONE) ==
	    PGN_OK);
	bind_bob_turn("p-b");
	REQUIRE(pgn_wake_listen(b, &rung) == PGN_OK);
	CHECK_INT(rung, 0);
	REQUIRE(pgn_exec(chk,
	            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
	            "WHERE datname = current_database() "
	            "AND pid <> pg_backend_pid()",
	            "ending the other sessions", PGN_NONE) == PGN_OK);
	for (i = 0; i < 3000 &&
	     count("SELECT count(*) FROM pg_stat_activity "
	           "WHERE datname = current_database() "
	           "AND pid <> pg_backend_pid()") != 0;
	     i++)
		(void)nanosleep(&tick, NULL);
	as_machine("machine-a", "state-a");
	/* The sender's handle met the same end: its first try may fail. */
	if (send_p("while B was away", PGN_PRIORITY_NORMAL) != PGN_OK)
		REQUIRE(
		    send_p("while B was away", PGN_PRIORITY_NORMAL) == PGN_OK);
	as_machine("machine-b", "state-b");
	/* The dead session shows itself (an error, or nothing), the next
	 * look connects again and rings; without the look at every queued
	 * message it would wait here for a bell that was lost. */
	for (i = 0; i < 50 && total == 0; i++) {
		rung = 0;
		if (pgn_wake_next(b, 100, &rung) == PGN_OK)
			total += rung;
	}
	CHECK_INT(total, 1);
	CHECK_INT(count("SELECT count(*) FROM message WHERE woken_ms > 0"), 1);
	(void)unsetenv("PIGEON_MACHINE");
	REQUIRE(setenv("PIGEON_HOME", home, 1) == 0);
	pgn_db_close(b);
}

static void (*const rules[])(void) = {
    rule_a_send_rings_an_idle_session_once_with_the_fixed_line,
    rule_a_second_send_while_the_ring_is_outstanding_rings_nothing,
    rule_after_a_delivery_the_next_send_rings_again,
    rule_two_rings_in_a_row_are_not_the_same_frame,
    rule_a_session_of_another_machine_is_not_rung,
    rule_a_send_from_another_machine_rings_on_the_sessions_machine,
    rule_low_rings_nothing,
    rule_reach_wake_off_rings_nothing,
    rule_reach_wake_urgent_rings_for_urgent_only,
    rule_the_governors_cap_rings_nothing,
    rule_a_busy_session_is_not_rung_and_the_claim_is_given_back,
    rule_a_recycled_pid_is_not_rung,
    rule_a_symlinked_sessions_file_is_not_read,
    rule_a_socket_outside_the_hosts_directory_is_not_rung,
    rule_a_path_that_is_not_a_socket_is_not_rung,
    rule_a_socket_named_for_another_pid_is_not_rung,
    rule_a_shared_sessions_directory_is_not_trusted,
    rule_a_socket_that_does_not_answer_fails_within_the_bound,
    rule_a_dead_session_is_gone_and_the_send_succeeds,
    rule_a_stale_ring_is_journalled_unheard_and_rings_again,
    rule_status_shows_a_fresh_ring_heard,
    rule_a_follower_that_lost_its_session_rings_what_came_meanwhile,
};

/* PGN_RING_ID_MAX at its edge; what a frame or a command may name. */
static void
test_a_ring_id_is_checked_at_its_edge(void)
{
	char id[PGN_RING_ID_MAX + 2];

	memset(id, 'a', PGN_RING_ID_MAX);
	id[PGN_RING_ID_MAX] = '\0';
	CHECK(pgn_ring_id_ok(id));
	id[PGN_RING_ID_MAX] = 'a';
	id[PGN_RING_ID_MAX + 1] = '\0';
	CHECK(!pgn_ring_id_ok(id));
	CHECK(pgn_ring_id_ok("0199a2b3-c4d5_e6"));
	CHECK(!pgn_ring_id_ok(""));
	CHECK(!pgn_ring_id_ok("-h"));
	CHECK(!pgn_ring_id_ok("../x"));
	CHECK(!pgn_ring_id_ok("a b"));
}

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

static const struct h_test tests[] = {
    H_TEST(test_a_ring_id_is_checked_at_its_edge),
    H_TEST(test_rules_on_sqlite),
    H_TEST(test_rules_on_postgresql),
};

int
main(void)
{
	be_init();
	return h_run(tests, H_COUNT(tests));
}
