/*
 * pigeon-hook's I/O (built as the static library hookcore so tests can
 * link it): argv, bounded stdin, the deadline backstop, hook.log and the
 * one write. The turn itself is the library's (pigeon/hook.h).
 */
#ifndef PGN_HOOKCLI_H
#define PGN_HOOKCLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pigeon/hook.h"
#include "pigeon/hosts.h"

#define HOOK_EXIT_OK   0 /* always, for hosts: fail open */
#define HOOK_EXIT_WAKE 2 /* --rewake: mail on stderr, Claude wakes */
#define HOOK_EXIT_USAGE                                                        \
	1 /* by hand on a terminal: the usage (2 blocks Claude) */
#define HOOK_DEADLINE_MS   1500         /* the whole run, lock waits included */
#define HOOK_STDIN_IDLE_MS 500          /* stop reading after this much quiet */
#define HOOK_MAX_STDIN     (1 << 20)    /* payload bytes */
#define HOOK_MAX_LOG       (256 * 1024) /* hook.log before rotation */
#define HOOK_MAX_LOG_LINE  1024         /* one hook.log line, bytes */
#define HOOK_NAMES_MAX     256          /* a list of host or event names */

struct hook_opts {
	pgn_host host;     /* PGN_HOST_NONE: detect */
	pgn_event event;   /* PGN_EVENT_NONE: detect */
	const char *agent; /* --agent NAME */
	long deadline_ms;  /* 0: HOOK_DEADLINE_MS */
	int no_timer;      /* tests: no SIGALRM backstop */
	int rewake;        /* --rewake: Claude's idle wake (claude Stop) */
	char why[256];     /* misuse: what was wrong */
};

/*
 * Parse "pigeon-hook [HOST EVENT] [--agent NAME] [--rewake]" (--rewake
 * only as "claude Stop --rewake"). Returns 0 to run,
 * 1 when help was printed to 'out', -1 on misuse (o->why says what; the
 * host and event named, if any, are kept for the neutral output).
 */
int hook_parse_args(struct hook_opts *o, int argc, char **argv, FILE *out);

/*
 * Read one JSON object from 'fd': stop when it is complete, at EOF, or
 * after 'idle_ms' without input, never past 'deadline' (monotonic ms).
 * '*buf' (caller frees) gets the bytes read. Returns PGN_OK (complete),
 * PGN_EINVAL (empty, not an object, or cut short), PGN_ETOOBIG (over
 * 'max'), PGN_EIO, PGN_ENOMEM.
 */
pgn_status hook_read_json(int fd, size_t max, long idle_ms, int64_t deadline,
    char **buf, size_t *len);

/*
 * One hook run: read 'in_fd', run the turn, write at most one line to
 * 'out_fd'. 'misuse' (not NULL) means the arguments were wrong: the
 * neutral output is printed and the reason logged. Always returns
 * HOOK_EXIT_OK; failures print the neutral output and go to hook.log.
 */
int hook_run(const struct hook_opts *o, int in_fd, int out_fd,
    const char *misuse);

/*
 * The idle wake (o->rewake, arguments already checked): read the Stop
 * payload from 'in_fd' and run pgn_hook_rewake, under a backstop that
 * allows its wait. The mail it claimed goes to 'err_fd' and the run
 * returns HOOK_EXIT_WAKE; otherwise nothing is printed and it returns
 * HOOK_EXIT_OK. Everything else goes to hook.log.
 */
int hook_rewake(const struct hook_opts *o, int in_fd, int err_fd);

/* Append one line to hook.log in 'home' (rotated past HOOK_MAX_LOG). */
void hook_log(const char *home, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
