/*
 * The instructions block (instructions.c): for a host with no usable
 * hook, Pigeon writes a marked block into a file the agent reads
 * (AGENTS.md, .windsurfrules, ...) telling it its name and how to read,
 * send and wait for mail (docs/decisions/0105).
 */
#ifndef PIGEON_INSTRUCTIONS_H
#define PIGEON_INSTRUCTIONS_H

#include <stddef.h>

#include "pigeon/pigeon.h"

#define PGN_INSTR_BEGIN "<!-- pigeon:begin -->"
#define PGN_INSTR_END   "<!-- pigeon:end -->"
/* An instructions file Pigeon reads and rewrites, bytes. */
#define PGN_MAX_INSTRUCTIONS (1 << 20)
/* The command word naming the pigeon CLI in the block, bytes. */
#define PGN_MAX_INSTR_WORD 1024

/*
 * The block for agent 'agent' (a valid name) with 'pigeon' as the
 * command word, lines ended by 'eol' ("\n" or "\r\n"), from the begin
 * marker to the end marker, without a line end after it. Caller frees;
 * NULL on ENOMEM.
 */
char *pgn_instr_block(const char *agent, const char *pigeon, const char *eol);

/*
 * Pure edits of an instructions file's bytes ('in' NULL: absent).
 * Install puts the block in (refreshing one already there, in place);
 * uninstall takes it out again so that a file install changed and
 * nothing else touched comes back byte-identical. '*out' is the new
 * content (caller frees), NULL with '*gone' 1 when the file is to be
 * removed (install created it); '*changed' says whether anything
 * differs. '*found' (may be NULL) gets the agent name the block already
 * there holds ("" if none), PGN_MAX_NAME + 1 bytes.
 * PGN_EINVAL with 'err' set: not UTF-8, a NUL byte, markers out of
 * order or repeated; PGN_ETOOBIG past PGN_MAX_INSTRUCTIONS.
 */
PGN_NODISCARD pgn_status pgn_instr_merge(const char *in, size_t len,
    const char *agent, const char *pigeon, int remove, char **out,
    size_t *outlen, int *gone, int *changed, char *found, struct pgn_err *err);

struct pgn_instr {
	const char *path;   /* the instructions file */
	const char *agent;  /* NULL: the block's own, else a generated one */
	const char *pigeon; /* the CLI: "pigeon", or its absolute path */
	int remove;         /* 1: uninstall */
	int dry_run;        /* 1: decide, write nothing */
};

struct pgn_instr_result {
	int changed;
	int created; /* install made the file */
	int deleted; /* uninstall removed the file install had made */
	char agent[PGN_MAX_NAME + 1]; /* the name in the block */
	int generated;                /* 'agent' was drawn just now */
};

/*
 * Install or uninstall the block in req->path: refuse a symbolic link,
 * anything but a regular file, a file over PGN_MAX_INSTRUCTIONS, non-
 * UTF-8 text and a file another pigeon is changing at the same moment
 * (each with one line in 'err', the file untouched); otherwise write
 * atomically (temp file and rename in the same directory, the file's
 * mode kept), or in place after a durable copy when the file has other
 * hard links. PGN_EINVAL, PGN_ETOOBIG, PGN_EBUSY, PGN_EIO, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_instr_apply(const struct pgn_instr *req,
    struct pgn_instr_result *res, struct pgn_err *err);

/* The lock file next to 'path' while it is being changed (caller frees). */
char *pgn_instr_lock_path(const char *path);

#endif
