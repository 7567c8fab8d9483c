/* The version string (cmake/version.cmake): the only file that sees it. */
#include "pgn_version.h"

#include "pgn_int.h"

const char *
pgn_version(void)
{
	return PGN_VERSION_STRING;
}
