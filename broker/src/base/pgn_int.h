/*
 * Internals of libpigeon shared between its layers. The database
 * handle and the statement layer are the store's (store/store_int.h).
 */
#ifndef PGN_INT_H
#define PGN_INT_H

#include <stdarg.h>
#include <string.h>
#include <sys/types.h>
#include <sodium.h>

#include "pigeon/pigeon.h"
#include "banned.h"

#define PGN_MAX_ID_TEXT 24 /* an int64 in decimal, with its sign and NUL */
#define PGN_STR_(x)     #x
#define PGN_STR(x)      PGN_STR_(x)

/*
 * A function kept out of its caller: its frame (large buffers) is
 * pushed only when it runs, not by every run of a hot path that rarely
 * calls it; each stack page a run touches is a page fault
 * (docs/decisions/0251).
 */
#if defined(__GNUC__)
#define PGN_NOINLINE __attribute__((noinline))
#else
#define PGN_NOINLINE
#endif

/* ---- the quiet stamp (quiet.c, decision 0085) ----------------------- */

#define PGN_QUIET_SLOTS     256 /* sessions remembered; more share slots */
#define PGN_QUIET_SLOT_SIZE 512 /* bytes per slot in $PIGEON_HOME/quiet */

struct pgn_quiet_file {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
};

/* Bytes of the WAL-index header a snapshot keeps (decision 0230). */
#define PGN_QUIET_WALIDX 32

/* The database files as a moment before a read. */
struct pgn_quiet_snap {
	struct pgn_quiet_file db, wal;
	unsigned char walhdr[32];
	/*
	 * The WAL-index header's bytes 8-39 (in -shm), its change counter
	 * zeroed: the frame count, salts and running checksum of the WAL's
	 * committed frames, which every commit changes (decision 0230).
	 */
	unsigned char walidx[PGN_QUIET_WALIDX];
};

/*
 * Take the snapshot of 'db_path', its WAL and its WAL index: 1, or 0 (no
 * WAL with a valid header, no WAL index with a committed frame, not
 * regular files, not in WAL mode): then no stamp is used or made.
 */
int pgn_quiet_snapshot(const char *db_path, struct pgn_quiet_snap *s);
/* What a read that found a session quiet knew of it (decision 0230). */
struct pgn_quiet_facts {
	int64_t seen_ms;   /* the older of its session's and agent's */
	int64_t remind_ms; /* its agent's next reminder falls due, -1: none */
	/*
	 * A prompt may answer from it: nothing of any priority queued, no
	 * continuation counted, its turn had no mail.
	 */
	int prompt;
	uint64_t scope_hash; /* pgn_quiet_hash of its scope root */
	char agent[PGN_MAX_NAME + 1];
};

/* FNV-1a of 'n' bytes at 'p' (the slots' and the scope's hash). */
uint64_t pgn_quiet_hash(const void *p, size_t n);
/*
 * 1 when session 'session' was found quiet by a read made after
 * snapshot 's' — the files unchanged since — and its last-seen time
 * needs no refresh at 'now_ms'. Any doubt: 0.
 */
int pgn_quiet_hit(const char *home, const char *session,
    const struct pgn_quiet_snap *s, int64_t now_ms);
/*
 * The same for a prompt: the read also found the session ready for
 * one (f->prompt), and no reminder of its agent is due at 'now_ms';
 * then 1, with what the read knew in '*f'.
 */
int pgn_quiet_hit_prompt(const char *home, const char *session,
    const struct pgn_quiet_snap *s, int64_t now_ms, struct pgn_quiet_facts *f);
/*
 * Remember that a read after 's' found 'session' quiet (best effort);
 * the stamp file is made only if 'create' (a prompt makes no file).
 */
void pgn_quiet_record(const char *home, const char *session,
    const struct pgn_quiet_snap *s, const struct pgn_quiet_facts *f,
    int create);

/* ---- the paths a patch names (patch.c) ------------------------------ */

#define PGN_PATCH_BEGIN "*** Begin Patch"

/* Called with each path a patch names (not NUL-terminated); non-OK stops. */
typedef pgn_status pgn_patch_fn(void *arg, const char *path, size_t len);

/*
 * The files patch 'patch' touches, in either dialect: "*** Begin Patch"
 * (Add, Update, Delete File, Move to), or a unified diff: a "--- X"
 * line directly followed by "+++ Y" (a/ and b/ dropped, /dev/null
 * skipped), "diff --git a/X b/X", "rename from", "rename to", "copy
 * to". In a "*** Begin Patch" the unified headers are not read: a
 * removed line "-- x" shows there as "--- x". Paths come as written
 * (relative or absolute, surrounding blanks kept). Returns the first
 * non-OK status of 'each', else PGN_OK.
 */
PGN_NODISCARD pgn_status pgn_patch_paths(const char *patch, pgn_patch_fn *each,
    void *arg);

/*
 * The patch of an apply_patch heredoc in shell command 'cmd' (the word
 * apply_patch as a command, then "<<", then "*** Begin Patch"): a
 * pointer into 'cmd' at "*** Begin Patch", or NULL.
 */
const char *pgn_patch_in_shell(const char *cmd);

/* ---- bounded string builder (buf.c) -------------------------------- */

struct pgn_buf {
	char *data;     /* NUL-terminated when len > 0 */
	size_t len;     /* bytes used, excluding the NUL */
	size_t cap;     /* bytes allocated */
	size_t max;     /* hard limit on len */
	pgn_status err; /* first failure; later appends are no-ops */
};

void pgn_buf_init(struct pgn_buf *b, size_t max);
void pgn_buf_release(struct pgn_buf *b);
void pgn_buf_reset(struct pgn_buf *b);
void pgn_buf_add(struct pgn_buf *b, const void *p, size_t n);
void pgn_buf_adds(struct pgn_buf *b, const char *s);
void pgn_buf_addf(struct pgn_buf *b, const char *fmt, ...) PGN_PRINTF(2, 3);
void pgn_buf_vaddf(struct pgn_buf *b, const char *fmt, va_list ap)
    PGN_PRINTF(2, 0);
/* Hand the string to the caller ("" if empty); NULL after an error. */
char *pgn_buf_take(struct pgn_buf *b, size_t *len);
/*
 * Room for 'n' more bytes now, as far as the bound allows (a hint: a
 * failure shows at the next append), so that a large answer grows once.
 */
void pgn_buf_presize(struct pgn_buf *b, size_t n);
/* Back to its first 'len' bytes (no more than it has); its error kept. */
void pgn_buf_truncate(struct pgn_buf *b, size_t len);
/*
 * pgn_buf_add, inline when the room is there (the most appends to an
 * answer): a literal's copy is then a few moves (decision 0254).
 */
static inline void
pgn_buf_put(struct pgn_buf *b, const void *p, size_t n)
{
	if (b->err == PGN_OK && n < b->cap - b->len && b->len + n <= b->max) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
		b->data[b->len] = '\0';
	} else
		pgn_buf_add(b, p, n);
}
/* A literal's bytes (no strlen): PGN_BUF_LIT(b, ",\"id\":"). */
#define PGN_BUF_LIT(b, s) pgn_buf_put((b), (s), sizeof(s) - 1)
/*
 * JSON values straight into a buffer, as cJSON prints them (decision
 * 0240): a string quoted, with '"', '\\', \b \f \n \r \t escaped and
 * other bytes under 0x20 as \u00xx, every other byte as is (NULL writes
 * null); an integer in decimal.
 */
void pgn_buf_json_str(struct pgn_buf *b, const char *s);
void pgn_buf_json_i64(struct pgn_buf *b, int64_t v);

/*
 * A search hit's JSON object (store/msgjson.c, decisions 0238, 0254):
 * pgn_hit_json's shape and bytes, written at the end of 'b'. The one
 * writer of that shape: pgn_hit_json and pgn_msg_json parse what it
 * writes; pigeon web's pages write it straight into their answer.
 */
struct pgn_hit;
void pgn_hit_write(struct pgn_buf *b, const struct pgn_hit *h, int flags);
/*
 * Bytes of one message's or hit's JSON that pgn_msg_json and
 * pgn_hit_json write before parsing it (a body of PGN_MAX_BODY escaped
 * at the worst is 24 KiB): over it, NULL, as out of memory.
 */
#define PGN_MAX_MSG_JSON (1 << 20)

/* Overflow-checked size maths: 0 on overflow. */
int pgn_size_add(size_t a, size_t b, size_t *out);
int pgn_size_mul(size_t a, size_t b, size_t *out);

char *pgn_strdup(const char *s);
char *pgn_strndup(const char *s, size_t n);

/* Grow a vector of 'size'-byte items to hold n + 1. 0 on ENOMEM. */
int pgn_vec_grow(void **v, size_t *cap, size_t n, size_t size);

/* ---- files (file.c) ------------------------------------------------- */

/* Format a one-line error into errbuf (may cut it at errlen). */
void pgn_errf(char *errbuf, size_t errlen, const char *fmt, ...)
    PGN_PRINTF(3, 4);
/* 'a'/'b' as a new string (NULL on ENOMEM or over PGN_MAX_PATH). */
char *pgn_path_join(const char *a, const char *b);
/* The directory part of 'path' ("." if none), as a new string. */
char *pgn_path_dir(const char *path);
/*
 * The file helpers fill 'err' on every failure (decision 0146).
 * A regular file of at most 'max' bytes; absent: '*exists' 0, PGN_OK.
 */
pgn_status pgn_read_file(const char *path, size_t max, char **data, size_t *len,
    int *exists, mode_t *mode, struct pgn_err *err);
int pgn_fsync_dir(const char *dir);
/* Unlink 'path' and sync its directory; PGN_EIO with 'err'. */
pgn_status pgn_unlink_synced(const char *path, struct pgn_err *err);
/* Create 'dir' and missing parents with 'mode' (existing ones stay). */
pgn_status pgn_mkdir_p(const char *dir, mode_t mode, struct pgn_err *err);
/* Replace 'path' atomically: temp file, fsync, rename, fsync the dir. */
pgn_status pgn_write_atomic(const char *path, const char *data, size_t len,
    mode_t mode, struct pgn_err *err);
/* A durable copy of the bytes a write in place replaces (0037). */
#define PGN_SAVE_SUFFIX ".pigeon-save"
/*
 * Write 'data' to 'path', which now holds 'cur': atomically when it has
 * one link, else in place after a durable copy in PATH.pigeon-save, so
 * every hard link sees the change (docs/decisions/0037).
 */
pgn_status pgn_write_linked(const char *path, int nlinks, const char *data,
    size_t len, const char *cur, size_t curlen, mode_t mode,
    struct pgn_err *err);

/* ---- opencode's plugin (setup/opencode-plugin.js, embedded at build) */

extern const char pgn_opencode_plugin_js[];

/* ---- secrets (crypto.c) --------------------------------------------- */

#define PGN_KEY_BYTES 32           /* $PIGEON_HOME/key */
#define PGN_FP_BYTES  16           /* keyed fingerprints in hook.log */
#define PGN_MAX_STATE (256 * 1024) /* sealed provider state, bytes */

/*
 * Load the key of 'home' into sodium_malloc memory (free with
 * pgn_key_free, which wipes it), creating it when 'create'. PGN_ENOTFOUND
 * (absent, !create), PGN_EINVAL (wrong size or readable by others),
 * PGN_EIO, PGN_ENOMEM.
 */
pgn_status pgn_key_load(const char *home, int create, unsigned char **key,
    struct pgn_err *err);
void pgn_key_free(unsigned char *key);
/* Wipe 'len' bytes at 'p', then free it. */
void pgn_secret_free(void *p, size_t len);
/* Start a keyed BLAKE2b of 'outlen' bytes under the subkey for 'tag'. */
void pgn_mac_start(crypto_generichash_state *h, const unsigned char *key,
    const char *tag, size_t outlen);
/* A keyed fingerprint of 'data', as hex. */
void pgn_fingerprint(const unsigned char *key, const char *data, size_t len,
    char hex[2 * PGN_FP_BYTES + 1]);
/*
 * Open the sealed provider state: '*plain' (free with pgn_secret_free)
 * is NULL when there is none. PGN_ETAMPER when it fails to decrypt or
 * authenticate — the caller treats the state as absent.
 */
pgn_status pgn_state_read(const char *home, const unsigned char *key,
    char **plain, size_t *len, struct pgn_err *err);
/* Seal and write the provider state atomically, 0600. */
pgn_status pgn_state_write(const char *home, const unsigned char *key,
    const char *plain, size_t len, struct pgn_err *err);

/* ---- errors (base/err.c; on a handle: store/error.c) --------------- */

/* Set 'err' to 'fmt' with remedy 'hint' about 'arg' (or NULL). */
void pgn_err_vset(struct pgn_err *err, pgn_hint hint, const char *arg,
    const char *fmt, va_list ap) PGN_PRINTF(4, 0);
/* Set 'err' to the fact 'fmt' (no remedy) and return 'st'. */
pgn_status pgn_err_set(struct pgn_err *err, pgn_status st, const char *fmt, ...)
    PGN_PRINTF(3, 4);
/* pgn_err_set with the remedy 'hint' about 'arg' (or NULL). */
pgn_status pgn_err_hint(struct pgn_err *err, pgn_status st, pgn_hint hint,
    const char *arg, const char *fmt, ...) PGN_PRINTF(5, 6);

/* Record a message on 'db' and return 'st'. */
pgn_status pgn_fail(pgn_db *db, pgn_status st, const char *fmt, ...)
    PGN_PRINTF(3, 4);
/* pgn_fail with the remedy 'hint' (about name 'arg', or NULL). */
pgn_status pgn_fail_hint(pgn_db *db, pgn_status st, pgn_hint hint,
    const char *arg, const char *fmt, ...) PGN_PRINTF(5, 6);

/* ---- text (text.c) ------------------------------------------------- */
/*
 * How an agent runs the CLI at 'path' (NULL: unknown): the path as one
 * shell word in 'out' ('len' bytes), single-quoted when it needs it, or
 * plain "pigeon" for a path over PGN_HOOK_MAX_SHOWN bytes, not UTF-8, or
 * holding a quote or a control character. The hook's introduction shows
 * it; install's permission rules must match it.
 */
void pgn_shell_word(const char *path, char *out, size_t len);

/*
 * True if JSON text holds the escape \u0000, which cJSON decodes into a
 * NUL that silently cuts the string short: callers refuse such input.
 */
int pgn_json_nul_escape(const char *s, size_t len);

/*
 * Append s[0..len) escaped for a terminal, as pgn_text_safe describes
 * ('flags': PGN_SAFE_LINES or 0). The output is at most 4 * len bytes.
 */
void pgn_buf_add_safe(struct pgn_buf *b, const char *s, size_t len,
    unsigned flags);

/* The value of hexadecimal digit 'c' (either case), or -1. */
int pgn_hex_value(int c);

/* Edit distance, capped at 'max' + 1 (for "did you mean"). */
size_t pgn_edit_distance(const char *a, const char *b, size_t max);

/* ---- scope key (scopekey.c) ---------------------------------------- */

#define PGN_MAX_GITCONFIG  (256 * 1024) /* bytes of a git config read */
#define PGN_MAX_REMOTE_URL 2048         /* bytes of the origin url */

/*
 * The first remote.origin.url of git config text (git's syntax: quotes,
 * escapes, comments, continued lines; include files are not followed).
 * '*url' is NULL if there is none. PGN_EINVAL if the text is not valid
 * git config, PGN_ETOOBIG if the url is over PGN_MAX_REMOTE_URL: '*line'
 * says where. '*url' is the caller's.
 */
pgn_status pgn_gitconfig_origin(const char *text, size_t len, char **url,
    size_t *line);

/*
 * A remote url as a scope key, "host/path": scp-like, ssh://, git://,
 * http(s):// and the like are one key; the host folded to lower case,
 * the user, a password and the port dropped, the path without a leading
 * or trailing '/' or a ".git" suffix. PGN_EINVAL (PGN_ETOOBIG) for a
 * url that names no host (a local path, a remote helper, control
 * characters), with 'err' a phrase whose subject is the url ("is
 * empty"), which it never quotes; PGN_ENOMEM.
 */
pgn_status pgn_remote_key(const char *url, char **key, struct pgn_err *err);

/* ---- names (names.c) ----------------------------------------------- */

/* A random adjective-noun name; 'attempt' >= 8 adds a number. */
void pgn_name_generate(char out[PGN_MAX_NAME + 1], unsigned attempt);
/* 1 if 'name' is one pgn_name_generate makes: ADJ-NOUN or ADJ-NOUN-N. */
int pgn_name_is_generated(const char *name);

/* ---- which machine (session_digest.c, decision 0129) --------------- */

/* "<machine-id>@<hostname>", bytes: 32 hex digits and a host name. */
#define PGN_MAX_MACHINE    128
#define PGN_MACHINE_ID_MAX 64 /* bytes of /etc/machine-id read */

/*
 * This machine: its systemd machine id (/etc/machine-id, else D-Bus's)
 * and its host name, as "<id>@<host>" in 'out'. 0 when there is no
 * machine id ('out' is then ""): nothing named on this machine is read
 * as its own.
 */
int pgn_machine_id(char out[PGN_MAX_MACHINE + 1]);

/* ---- audit chain (chain.c) ----------------------------------------- */

/* hash = BLAKE2b-256(prev || canonical(d)); d->hash is not read. */
void pgn_chain_hash(const unsigned char prev[PGN_HASH_BYTES],
    const struct pgn_delivery *d, unsigned char out[PGN_HASH_BYTES]);

#endif
