/*
 * Whether a host that asks trust before it runs hooks (the row's
 * 'trust', struct pgn_host_info) has recorded it for Pigeon's (trust.c).
 */
#ifndef PGN_TRUST_H
#define PGN_TRUST_H

#include "pigeon/pigeon.h"
#include "pigeon/hosts.h"

/* Bytes of the file read for it (Codex's config.toml). */
#define PGN_MAX_TRUST_FILE (1 << 20)

/*
 * 1 when host 'h' has recorded trust for the hooks of its config file
 * 'hooks' (the user's or a project's), 0 when not, or not known (no
 * file, unreadable, or a host whose row asks no trust).
 */
int pgn_install_trusted(pgn_host h, const char *hooks);

#endif
