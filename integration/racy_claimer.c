/*
 * A deliberately broken claimer for the concurrency test: it reads the
 * queue, then marks what it read as delivered, with no transaction
 * around the two and no "still queued" guard. The concurrency test runs
 * it to show that it produces duplicates, so the test has teeth.
 * usage: racy-claimer DB AGENT   (prints claimed ids, one per line)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <sqlite3.h>

int
main(int argc, char **argv)
{
	static const char sel[] =
	    "SELECT m.id FROM message m JOIN agent a "
	    "ON a.id = m.recipient_id WHERE a.name = ?1 AND "
	    "m.delivered_ms IS NULL ORDER BY m.id LIMIT 50";
	static const char upd[] = "UPDATE message SET delivered_ms = 1 "
	                          "WHERE id = ?1";
	struct timespec pause = {0, 2000000};
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long ids[50];
	int n = 0, i, rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: racy-claimer DB AGENT\n");
		return 2;
	}
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK)
		goto out;
	sqlite3_busy_timeout(db, 5000);
	if (sqlite3_prepare_v2(db, sel, -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_text(st, 1, argv[2], -1, SQLITE_STATIC);
	while (n < 50 && sqlite3_step(st) == SQLITE_ROW)
		ids[n++] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	nanosleep(&pause, NULL); /* the window a real race needs */
	if (sqlite3_prepare_v2(db, upd, -1, &st, NULL) != SQLITE_OK)
		goto out;
	for (i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, ids[i]);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto out;
		printf("%lld\n", ids[i]);
	}
	rc = 0;
out:
	if (rc != 0)
		fprintf(stderr, "racy-claimer: %s\n", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return rc;
}
