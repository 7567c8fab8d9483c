/*
 * pigeon-hook's logic (built as the static library hookcore so tests
 * can link it): bounded stdin, payload parsing and host detection, the
 * turn, and the fail-open policy. main.c only maps argv to hook_run().
 */
#ifndef PGN_HOOK_H
#define PGN_HOOK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pigeon/pigeon.h"

#define HOOK_EXIT_OK        0         /* always, for hosts: fail open */
#define HOOK_DEADLINE_MS    1500      /* the whole run, lock waits included */
#define HOOK_STDIN_IDLE_MS  500       /* stop reading after this much quiet */
#define HOOK_MAX_STDIN      (1 << 20) /* payload bytes */
#define HOOK_MAX_LOG        (256 * 1024) /* hook.log before rotation */
#define HOOK_MAX_ID         200          /* a host's session or turn id */
#define HOOK_TURN_WINDOW_MS 30000        /* dedupe window for hashed turns */
#define HOOK_MAX_DEPTH      64           /* JSON nesting of a payload */

struct hook_opts {
	pgn_host host;     /* PGN_HOST_NONE: detect */
	pgn_event event;   /* PGN_EVENT_NONE: detect */
	const char *agent; /* --agent NAME */
	long deadline_ms;  /* 0: HOOK_DEADLINE_MS */
	int no_timer;      /* tests: no SIGALRM backstop */
};

/*
 * Parse "pigeon-hook [HOST EVENT] [--agent NAME]". Returns 0 to run,
 * 1 when help was printed to 'out', -1 on misuse (message to 'err').
 */
int hook_parse_args(struct hook_opts *o, int argc, char **argv, FILE *out,
    FILE *err);

/*
 * Read one JSON object from 'fd': stop when it is complete, at EOF, or
 * after 'idle_ms' without input, never past 'deadline' (monotonic ms).
 * '*buf' (caller frees) gets the bytes read. Returns PGN_OK (complete),
 * PGN_EINVAL (empty, not an object, or cut short), PGN_ETOOBIG (over
 * 'max'), PGN_EIO, PGN_ENOMEM.
 */
pgn_status hook_read_json(int fd, size_t max, long idle_ms, int64_t deadline,
    char **buf, size_t *len);

struct hook_input {
	pgn_host host;
	pgn_event event;
	int skip;   /* Cursor replaying a Claude hook */
	int ignore; /* an event Pigeon does not handle */
	char session[PGN_MAX_SESSION_KEY + 1];
	char turn[PGN_MAX_SESSION_KEY + 1];
	int64_t turn_window_ms;
	char *dir;    /* the project directory, or NULL */
	char *prompt; /* the submitted prompt, or NULL */
	int subagent; /* not a top-level session */
};

void hook_input_release(struct hook_input *in);

/*
 * Parse a payload and settle host, event, session, scope directory and
 * turn key; hosts and events named in 'o' win over detection. Returns
 * PGN_EINVAL with the reason in 'why'.
 */
pgn_status hook_parse_payload(const char *buf, size_t len,
    const struct hook_opts *o, struct hook_input *in, char *why, size_t whylen);

/* Detect the host of a parsed payload's fields (see docs/hook-protocol.md). */
pgn_host hook_detect_host(const char *event, int cursor_version, int timestamp,
    int turn_id, int model, int permission_mode);

/*
 * One hook run: read 'in_fd', deliver, write at most one line to
 * 'out_fd'. Always returns HOOK_EXIT_OK; failures print the neutral
 * output and go to $PIGEON_HOME/hook.log.
 */
int hook_run(const struct hook_opts *o, int in_fd, int out_fd);

/* Append one line to hook.log in 'home' (rotated past HOOK_MAX_LOG). */
void hook_log(const char *home, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
