#!/bin/sh
# §13's bad input on PostgreSQL: one line, exit 2, nothing stored, for
# every command that takes it (the table is integration/bad_input.sh's,
# the database compared with pg_dump).
. "$(dirname "$0")/lib.sh"
. "$PGN_SRC/integration/pglib.sh"
. "$PGN_SRC/integration/bad_input.sh"
test_done
