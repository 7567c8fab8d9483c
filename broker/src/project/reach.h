/*
 * What a send needs of the project's config (config.c): the "reach"
 * settings that decide whether it rings a doorbell (decision 0176).
 * The store's view; the whole config is setup's (pigeon/setup.h).
 */
#ifndef PGN_REACH_H
#define PGN_REACH_H

#include "pigeon/pigeon.h"

#define PGN_WAKE_OFF 2 /* reach.wake "off": no priority rings */

struct pgn_reach {
	int wake_min;           /* lowest priority that rings; PGN_WAKE_OFF */
	int max_auto_continues; /* the governor's cap */
};

/* <root>/.pigeon/config.json's reach, or its defaults. PGN_ENOMEM. */
PGN_NODISCARD pgn_status pgn_reach_load(const char *root, struct pgn_reach *r);

#endif
