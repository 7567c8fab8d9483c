/* The embedded schema migrations (generated from schema/ at build time). */
#ifndef PGN_SCHEMA_INT_H
#define PGN_SCHEMA_INT_H

struct pgn_migration {
	int version;
	const char *name;
	const char *sql;
};

extern const struct pgn_migration pgn_migrations[];
extern const int pgn_nmigrations;
/* schema/pg/, for the PostgreSQL backend (built with libpq only). */
extern const struct pgn_migration pgn_pg_migrations[];
extern const int pgn_pg_nmigrations;

#endif
