/*
 * The host layer's private parts (broker/src/hosts/): what the two
 * doorbells, the socket (doorbell.c) and the command (bellqueue.c),
 * share. Only the host layer's files include it.
 */
#ifndef PGN_HOSTS_INT_H
#define PGN_HOSTS_INT_H

#include "pigeon/hosts.h"

#define PGN_RING_ID_MAX 64 /* bytes of a session or thread id a ring names */

/* 'r', with the reason formatted into 'why' (PGN_DOORBELL_WHY bytes). */
pgn_ring pgn_ring_say(char why[PGN_DOORBELL_WHY], pgn_ring r, const char *fmt,
    ...) __attribute__((format(printf, 3, 4)));

/*
 * Only what a UUID or a host's session or thread id holds: letters,
 * digits, '-' and '_', at most PGN_RING_ID_MAX bytes, never a leading
 * '-' (a command would read it as an option). A frame or a command is
 * built with it; a file's name is never taken from it.
 */
int pgn_ring_id_ok(const char *id);

#endif
