/*
 * The floor of any libpq client's hook run, for the benchmark's
 * PostgreSQL section (docs/decisions/0126): load libpq.so.5 as pigeon
 * does (dlopen, RTLD_NOW), connect to the conninfo in argv[1], run one
 * SELECT 1, disconnect, exit 0. Pigeon's hook does all of this and its
 * own work; the difference between the two is what Pigeon adds.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

int
main(int argc, char **argv)
{
	__typeof__(PQconnectdb) *connectdb;
	__typeof__(PQstatus) *status;
	__typeof__(PQexec) *exec;
	__typeof__(PQresultStatus) *result_status;
	__typeof__(PQclear) *clear;
	__typeof__(PQfinish) *finish;
	void *h, *sym;
	PGconn *conn;
	PGresult *res;
	int ok;

	if (argc != 2) {
		fprintf(stderr, "usage: pigeon-bench-pgfloor CONNINFO\n");
		return 2;
	}
	h = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "pigeon-bench-pgfloor: %s\n", dlerror());
		return 1;
	}
#define LOAD(var, name)                                                        \
	if ((sym = dlsym(h, name)) == NULL)                                    \
		return 1;                                                      \
	memcpy(&var, &sym, sizeof(var));
	LOAD(connectdb, "PQconnectdb")
	LOAD(status, "PQstatus")
	LOAD(exec, "PQexec")
	LOAD(result_status, "PQresultStatus")
	LOAD(clear, "PQclear")
	LOAD(finish, "PQfinish")
#undef LOAD
	conn = connectdb(argv[1]);
	if (conn == NULL || status(conn) != CONNECTION_OK) {
		fprintf(stderr, "pigeon-bench-pgfloor: cannot connect\n");
		return 1;
	}
	res = exec(conn, "SELECT 1");
	ok = res != NULL && result_status(res) == PGRES_TUPLES_OK;
	clear(res);
	finish(conn);
	return ok ? 0 : 1;
}
