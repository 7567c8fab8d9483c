/*
 * Transcript readers (Cursor, Claude Code and Codex JSONL), the redaction
 * of credential-looking strings, and the bounded digest of a session
 * built from its transcript and its agent's journal (product.md §9).
 */
#ifndef PIGEON_TRANSCRIPT_H
#define PIGEON_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "pigeon/pigeon.h"

/* Limits (docs/limits.md, docs/decisions/0090). */
#define PGN_TRANSCRIPT_MAX_READ                                                \
	(64 << 20)                         /* the tail of a file read, bytes   \
	                                    */
#define PGN_TRANSCRIPT_MAX_LINE  (4 << 20) /* a longer line is skipped */
#define PGN_TRANSCRIPT_MAX_TEXT  2000      /* a prompt or answer kept, bytes */
#define PGN_TRANSCRIPT_MAX_FILES 64        /* distinct paths kept */
#define PGN_TRANSCRIPT_MAX_CMDS  16        /* the newest commands kept */
#define PGN_TRANSCRIPT_MAX_CMD   512       /* a command kept, bytes */
#define PGN_TRANSCRIPT_MAX_PATH  1024      /* a path kept, bytes */
#define PGN_TRANSCRIPT_MAX_TOOLS 32        /* distinct tool names counted */
#define PGN_TRANSCRIPT_MAX_SUBS  16        /* Cursor subagent files read */
#define PGN_TRANSCRIPT_SUB_READ  (8 << 20) /* the tail of each, bytes */
#define PGN_DIGEST_MAX           4000      /* a digest, bytes */
#define PGN_DIGEST_MIN           400       /* the smallest one asked for */

typedef enum pgn_transcript_format {
	PGN_TRANSCRIPT_UNKNOWN = 0, /* detect from the frames */
	PGN_TRANSCRIPT_CURSOR,
	PGN_TRANSCRIPT_CLAUDE,
	PGN_TRANSCRIPT_CODEX
} pgn_transcript_format;

typedef enum pgn_transcript_outcome {
	PGN_TRANSCRIPT_NONE,    /* no turn in what was read */
	PGN_TRANSCRIPT_OPEN,    /* unterminated: the last turn has no end */
	PGN_TRANSCRIPT_SUCCESS, /* ended normally */
	PGN_TRANSCRIPT_ERROR,   /* ended with an error ('error' says which) */
	PGN_TRANSCRIPT_ABORTED, /* stopped by the user */
	PGN_TRANSCRIPT_OTHER    /* ended with a status of no known meaning */
} pgn_transcript_outcome;

struct pgn_transcript_tool {
	char *name; /* Cursor MCP calls: "CallMcpTool server/tool" */
	size_t n;
};

struct pgn_transcript_sub {
	char *id; /* the file name without .jsonl */
	pgn_transcript_outcome outcome;
	size_t calls;
};

/*
 * What a reader found. Every string is valid to print only after
 * escaping (pgn_text_safe); every string has been redacted (pgn_redact)
 * and is at most its PGN_TRANSCRIPT_MAX_* bound. The counts satisfy
 * lines == blank + malformed + oversized + frames, and frames ==
 * known + unknown.
 */
struct pgn_transcript {
	pgn_transcript_format format;
	uint64_t size;      /* the file's size; the bytes parsed otherwise */
	uint64_t read;      /* bytes parsed */
	int cut;            /* the head was not read (over the read bound) */
	size_t lines;       /* complete lines looked at (a cut first one not) */
	size_t blank;       /* skipped: empty or only white space */
	size_t malformed;   /* skipped: not a JSON object */
	size_t oversized;   /* skipped: over PGN_TRANSCRIPT_MAX_LINE */
	size_t frames;      /* JSON objects */
	size_t known;       /* frames of a shape the reader knows */
	size_t unknown;     /* frames it does not (counted, ignored) */
	size_t prompts;     /* user prompts */
	size_t answers;     /* assistant texts */
	size_t calls;       /* tool calls */
	char *first_prompt; /* NULL: none */
	char *last_prompt;
	char *last_text; /* the last assistant text */
	char *question;  /* the last question asked of the user */
	pgn_transcript_outcome outcome;
	char *status; /* the host's word for the outcome, or NULL */
	char *error;  /* the error of an ended turn, or NULL */
	char **files; /* distinct paths written, first seen first */
	size_t nfiles;
	size_t files_more; /* path mentions not kept: the list was full */
	char **cmds;       /* the newest commands, oldest first */
	size_t ncmds;
	size_t cmds_seen; /* commands in all */
	struct pgn_transcript_tool
	    *tools; /* calls by tool name, first seen first */
	size_t ntools;
	size_t tools_more; /* calls of names not counted: the table was full */
	char *parent;      /* Cursor: a subagent's parent id, or NULL */
	struct pgn_transcript_sub
	    *subs; /* Cursor: subagents/ beside the file */
	size_t nsubs;
	size_t subs_more; /* subagent files not read */
};

void pgn_transcript_init(struct pgn_transcript *t);
void pgn_transcript_release(struct pgn_transcript *t);

/* "cursor", "claude", "codex" ("unknown"); by name (and host), or UNKNOWN. */
const char *pgn_transcript_format_name(pgn_transcript_format f);
pgn_transcript_format pgn_transcript_format_by_name(const char *name);
/* "none", "unterminated", "success", "error", "aborted", "other". */
const char *pgn_transcript_outcome_name(pgn_transcript_outcome o);

/*
 * Read JSONL bytes data[0..len) as a transcript of format 'fmt' (UNKNOWN:
 * detected from the first frame of a known shape). Of more than
 * PGN_TRANSCRIPT_MAX_READ bytes only the tail is read, from the first
 * line that starts in it. A blank, malformed or oversized line is counted
 * and skipped. Returns PGN_EINVAL (no frame of any known format, with
 * 'fmt' UNKNOWN; 'err' says so), PGN_ENOMEM. Never fails on content.
 */
PGN_NODISCARD pgn_status pgn_transcript_parse(const char *data, size_t len,
    pgn_transcript_format fmt, struct pgn_transcript *t, char *err,
    size_t errlen);

/*
 * Read the transcript file at 'path' as pgn_transcript_parse does, in
 * bounded memory (a line at a time, at most PGN_TRANSCRIPT_MAX_LINE).
 * For Cursor, a file <dir>/<id>/<id>.jsonl also reads the subagent
 * files <dir>/<id>/subagents/ (each .jsonl; their files touched are the
 * session's), and a file <p>/subagents/<id>.jsonl names its parent.
 * Nothing else is opened (never agent-tools/). Returns PGN_ENOTFOUND
 * (no such file), PGN_EIO (unreadable; 'err' has the reason), PGN_EINVAL
 * (not a regular file, or an unknown format), PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_transcript_read(const char *path,
    pgn_transcript_format fmt, struct pgn_transcript *t, char *err,
    size_t errlen);

/*
 * pgn_transcript_read of a path this process did not choose (a
 * session's, from the database; decision 0129): the file, and each
 * Cursor subagent file beside it, is read only when it is a regular
 * file of the effective user, opened without following a symbolic link
 * and without blocking. Returns PGN_EINVAL ('err' says why: a symbolic
 * link, not a regular file, another user's) besides pgn_transcript_read's
 * errors; a subagent file that is refused is left out.
 */
PGN_NODISCARD pgn_status pgn_transcript_read_owned(const char *path,
    pgn_transcript_format fmt, struct pgn_transcript *t, char *err,
    size_t errlen);

/*
 * s[0..len) with every credential-looking string replaced by
 * "[REDACTED]" (the patterns: docs/decisions/0091 and 0128; one pass,
 * linear in len). '*n' (may be NULL) gets how many were replaced. A new
 * string (free()), NULL on ENOMEM.
 */
char *pgn_redact(const char *s, size_t len, size_t *n);

/*
 * The digest of a session: header, first and last prompt, last answer,
 * the outcome of its last turn, files touched, commands run, tools, and
 * the messages 'agent' sent and received in 'journal' (entries of
 * pgn_journal_tail; may be NULL), newest kept, framed as data. 't' may
 * be NULL (no transcript: only the journal). At most 'max' bytes
 * (0: PGN_DIGEST_MAX; never more than PGN_DIGEST_MAX), terminal-safe
 * (pgn_text_safe with newlines), redacted; sections that do not fit are
 * cut and the last line says so. A new string, NULL with '*st' set
 * (PGN_ENOMEM, PGN_EINVAL for a 'max' under PGN_DIGEST_MIN).
 */
char *pgn_digest_render(const struct pgn_transcript *t, const char *session,
    const char *agent, const struct pgn_entries *journal, size_t max,
    pgn_status *st);

/* ---- a session's digest from the database (session_digest.c) ----- */

#define PGN_DIGEST_JOURNAL 50 /* journal entries a digest looks at */

struct pgn_session_info {
	char key[PGN_MAX_SESSION_KEY + 1];
	char host[PGN_MAX_NAME + 1];
	char agent[PGN_MAX_NAME + 1];
	int64_t created_ms;
	int64_t last_seen_ms;
	char *transcript; /* session.transcript_path, NULL: none recorded */
	/*
	 * The transcript was named on this machine (session.machine, decision
	 * 0129): only then is it read.
	 */
	int here;
};

void pgn_session_info_release(struct pgn_session_info *s);

/*
 * The session 'key', in whatever scope (which becomes the current
 * scope, as pgn_handoff_leave does), or with 'key' NULL the most
 * recently active session of agent 'agent' of the current scope.
 * Returns PGN_EINVAL (a bad key or name), PGN_ENOTFOUND (no such
 * session, no such agent, or an agent with no session yet), PGN_EBUSY,
 * PGN_EDB, PGN_ENOMEM; pgn_errmsg() says which.
 */
PGN_NODISCARD pgn_status pgn_session_find(pgn_db *db, const char *key,
    const char *agent, struct pgn_session_info *out);

/*
 * The digest (pgn_digest_render, at most 'max' bytes) of session 's':
 * its transcript read as its host's format, and its agent's journal
 * since the session began (the newest PGN_DIGEST_JOURNAL entries).
 * '*digest' is the caller's (free()); 't' (may be NULL) gets what the
 * reader found, released by the caller. Returns PGN_ENOTFOUND (no
 * transcript recorded, or the file is gone), PGN_EIO (unreadable),
 * PGN_EINVAL (not a regular file, or not the host's format), the
 * journal's errors; pgn_errmsg() says which.
 */
PGN_NODISCARD pgn_status pgn_session_digest(pgn_db *db,
    const struct pgn_session_info *s, size_t max, struct pgn_transcript *t,
    char **digest);

#endif /* PIGEON_TRANSCRIPT_H */
