/*
 * Setup (setup/, project/): editing host configs (install, inspect,
 * the plugin), a project's own config and its prompt-context
 * provider's approval and bounded run. Used by pigeon install, doctor,
 * provider and the hook's provider step; ownership as in pigeon.h.
 */
#ifndef PIGEON_SETUP_H
#define PIGEON_SETUP_H

#include "pigeon/hosts.h"

/* ---- install (setup/): the one place that edits host configs ----- */

#define PGN_MAX_CONFIG (1 << 20) /* a host config file, bytes */

/*
 * True if 'command' is Pigeon's: its first word's basename is
 * pigeon-hook, or it is the guarded form "[ -x P ] || exit 0; exec P
 * ..." with P's basename pigeon-hook (decision 0225).
 */
int pgn_command_is_pigeon(const char *command);

/* True if 'command' is Pigeon's guarded form (it is silent when P is gone). */
int pgn_command_guarded(const char *command);

/* The program of Pigeon's 'command' (caller frees), or NULL. */
char *pgn_command_hook(const char *command);

/*
 * Pure merges over a config file's bytes ('in' NULL: the file is
 * absent). Install adds Pigeon's entries for both events of host 'h'
 * running 'hook' (an absolute path), replacing Pigeon's old ones and
 * keeping every other entry and key in order; uninstall removes them.
 * '*out' (caller frees) is the new content (NULL only when 'in' was
 * NULL and nothing changed; an uninstall that leaves only Pigeon's
 * skeleton returns it, and pgn_install_apply deletes a file Pigeon
 * created); '*changed' says whether it differs from 'in'.
 * Returns PGN_EINVAL (not valid JSON, or not the host's shape; 'err'
 * says where), PGN_ETOOBIG (over PGN_MAX_CONFIG), PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_install_merge(pgn_host h, const char *in,
    size_t len, const char *hook, char **out, int *changed,
    struct pgn_err *err);
PGN_NODISCARD pgn_status pgn_uninstall_merge(pgn_host h, const char *in,
    size_t len, char **out, int *changed, struct pgn_err *err);

struct pgn_install {
	pgn_host host;
	const char *project; /* NULL: the user's config */
	const char *hook;    /* absolute path of pigeon-hook */
	int dry_run;
	int remove; /* 1: uninstall */
	/*
	 * 1: also let the host's agent run pigeon send|read|wait|status
	 * (Claude permission rules, Codex writable root, Gemini policy),
	 * or with 'remove' take that away again (docs/decisions/0073).
	 */
	int permissions;
	/*
	 * Claude only: 1 adds the idle wake's Stop entry (asyncRewake), -1
	 * removes it, 0 keeps what is there (docs/decisions/0082).
	 */
	int rewake;
};

struct pgn_install_result {
	char *path; /* the config file */
	int changed;
	char *diff;       /* what changed, as a line diff ("" if none) */
	char *note;       /* host advice (Codex trust), or NULL */
	char *perm_path;  /* the permission edit's own file, or NULL */
	int perm_changed; /* it changes */
	char *perm_diff;  /* its line diff ("" if none) */
	char *perm_what;  /* one line: what the permission edit is, or NULL */
};

void pgn_install_result_release(struct pgn_install_result *r);

/*
 * Install or uninstall Pigeon's hooks in the host's config file: read
 * (refusing invalid JSON, untouched), merge, and unless dry_run write
 * atomically (temp file, fsync, rename) keeping a '.pigeon.bak' of the first
 * original. Uninstall restores the original bytes when nothing else
 * changed since, and removes a file Pigeon created. Returns
 * PGN_EINVAL, PGN_ETOOBIG, PGN_EIO, PGN_ENOMEM with 'err' set.
 */
PGN_NODISCARD pgn_status pgn_install_apply(const struct pgn_install *req,
    struct pgn_install_result *res, struct pgn_err *err);

struct pgn_install_state {
	char *path; /* the config file */
	int exists;
	char *problem; /* why it cannot be read as the host's config */
	size_t entries[PGN_NEVENTS]; /* Pigeon's entries per event */
	size_t rewake;               /* Claude's idle-wake Stop entries */
	/* What its settings do to the doorbell (0176), static; NULL: it
	 * rings (no setting that holds or refuses it). */
	const char *doorbell;
	/*
	 * A host whose row asks trust (its 'trust'): 1 when it has recorded
	 * trust for the hooks of 'path', 0 not yet (or unknown).
	 */
	int trusted;
	char *hook;         /* the program of Pigeon's first command */
	int guarded;        /* 1: that command is the guarded form (0225) */
	char *perm_path;    /* where the permission edit lives, or NULL */
	int perm;           /* 1 in place, 0 not, -1 none for this host */
	char *perm_problem; /* why that file cannot be read, or NULL */
};

void pgn_install_state_release(struct pgn_install_state *s);

/*
 * What the host's config file (user's, or 'project''s) holds of
 * Pigeon's. A file that cannot be read or parsed is reported in
 * s->problem, not as an error. Returns PGN_OK, PGN_EINVAL, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_install_inspect(pgn_host h, const char *project,
    struct pgn_install_state *s);

/* ---- pigeon mcp's registration (setup/mcpreg.c, decision 0168) ---- */

struct pgn_mcp_reg {
	pgn_host host;
	const char *project; /* NULL: the user's config */
	const char *pigeon;  /* absolute path of the pigeon CLI (install) */
	int dry_run;
	int remove; /* 1: uninstall */
};

struct pgn_mcp_reg_result {
	char *path; /* the MCP config; NULL: none for this host here */
	int changed;
	char *diff;
	/* The approval's file (Claude's settings.json, Cursor's
	 * permissions.json), or NULL: the host has none (there). */
	char *allow_path;
	int allow_changed;
	char *allow_diff;
	int approved; /* Pigeon's approval is in allow_path (after the edit) */
	const char *approval; /* the host table's line (static), or NULL */
};

void pgn_mcp_reg_result_release(struct pgn_mcp_reg_result *r);

/*
 * Register (or with 'remove' take away) `pigeon mcp` in host h's MCP
 * configuration as the host table's mcp row says: Pigeon's entry
 * ("pigeon") in its servers object, or Codex's marked [mcp_servers.pigeon]
 * block; Claude's allow rule in the hooks' settings.json. Byte-exact
 * (an uninstall after an install gives the bytes back; a file left an
 * empty object is removed). Installing twice changes nothing. A host
 * without a registration (or none in a project) gives res->path NULL.
 * PGN_EINVAL (a file that is not the host's JSON or TOML, untouched;
 * Codex's own [mcp_servers.pigeon]), PGN_ETOOBIG, PGN_EIO, PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_mcp_register(const struct pgn_mcp_reg *req,
    struct pgn_mcp_reg_result *res, struct pgn_err *err);

struct pgn_mcp_reg_state {
	char *path;           /* NULL: no registration for this host here */
	int registered;       /* Pigeon's entry is there */
	char *allow_path;     /* the approval's file, or NULL: none */
	int approved;         /* Pigeon's approval is in allow_path */
	const char *approval; /* the host table's line (static) */
};

/*
 * What doctor shows: is the server registered, and approved where the
 * host keeps an approval? PGN_OK or PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_mcp_reg_inspect(pgn_host h, const char *project,
    struct pgn_mcp_reg_state *s);
void pgn_mcp_reg_state_release(struct pgn_mcp_reg_state *s);

/* ---- project config (config.c): <project>/.pigeon/config.json ----- */

#define PGN_MAX_PROJECT_CONFIG       (64 * 1024) /* config.json, bytes */
#define PGN_MAX_REMINDER             500  /* promptReminder, characters */
#define PGN_MAX_PROVIDER_ARGS        32   /* promptContext.command entries */
#define PGN_MAX_PROVIDER_ARG         1024 /* bytes of one entry */
#define PGN_PROVIDER_TIMEOUT_MAX     5000 /* timeoutMs: 1..5000 */
#define PGN_PROVIDER_TIMEOUT_DEFAULT 1000
#define PGN_PROVIDER_OUTPUT_MAX      65536 /* maxOutputBytes: 1..65536 */
#define PGN_PROVIDER_OUTPUT_DEFAULT  8192
/* reach: continuations a stop hook may ask in a row, without a prompt */
#define PGN_MAX_AUTO_CONTINUES     20
#define PGN_AUTO_CONTINUES_DEFAULT 3
/* reach.stopWaitMs: within the hook timeout written into host configs */
#define PGN_MAX_STOP_WAIT_MS 3000
/*
 * reach.rewakeWaitS: how long Claude's idle-wake hook (asyncRewake) waits
 * for mail after a turn ended; bounded well below the timeout install
 * writes into its entry, so the hook ends before Claude kills it
 * (docs/decisions/0081).
 */
#define PGN_REWAKE_TIMEOUT_S      600 /* the entry's "timeout" */
#define PGN_MAX_REWAKE_WAIT_S     540
#define PGN_REWAKE_WAIT_S_DEFAULT 300

struct pgn_config {
	char *reminder;         /* the valid one-line reminder, or NULL */
	char *reminder_problem; /* why the reminder is off */
	char **argv;            /* the provider command (NULL-terminated) */
	size_t argc;            /* 0: no provider */
	long timeout_ms;
	size_t max_output;
	char *provider_problem; /* why the provider is off */
	char *problem;          /* the file itself: unreadable, not JSON */
	char *unknown;          /* unknown keys, comma-separated, or NULL */
	int max_auto_continues; /* reach: 0 turns continuing off */
	long stop_wait_ms;      /* reach: a stop waits this long for mail */
	long rewake_wait_s;     /* reach: the idle wake waits this long */
	int wake_min; /* reach.wake: lowest priority that rings; 2: off (0176)
	               */
	char *reach_problem; /* why "reach" is at its defaults */
	/* agents.retireAfterDays: a generated agent idle this long is
	 * retired automatically (0: never; decision 0228) */
	long retire_after_days;
	char *agents_problem; /* why "agents" is at its defaults */
	/* notes.mailInjected: tell the person, in the host's user_note
	 * field, when mail is put in the model's context (decision 0229) */
	int note_injected;
	char *notes_problem; /* why "notes" is at its defaults */
};

/* agents.retireAfterDays: its default and its bound. */
#define PGN_RETIRE_AFTER_DAYS_DEFAULT 7
#define PGN_RETIRE_AFTER_DAYS_MAX     3650

void pgn_config_release(struct pgn_config *c);

/*
 * Parse a project config strictly. Each feature is all or nothing: an
 * invalid reminder leaves only the reminder off, an invalid
 * promptContext leaves only the provider off, invalid JSON both; the
 * reasons go to the *_problem fields. Unknown keys are listed in
 * c->unknown and change nothing. Returns PGN_OK or PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_config_parse(const char *text, size_t len,
    struct pgn_config *c);

/* Read <root>/.pigeon/config.json (absent: nothing configured). */
PGN_NODISCARD pgn_status pgn_config_load(const char *root,
    struct pgn_config *c);

/* ---- provider (provider.c): approval, bounded run, validation ------ */

#define PGN_MAX_PROVIDER_EXE (16 << 20) /* executable hashed, bytes */
#define PGN_MAX_APPROVALS    1000       /* projects in the state */

typedef enum pgn_provider_status {
	PGN_PROVIDER_OFF, /* no provider configured */
	PGN_PROVIDER_OK,
	PGN_PROVIDER_EMPTY, /* valid, empty context */
	PGN_PROVIDER_TIMEOUT,
	PGN_PROVIDER_TOO_BIG,
	PGN_PROVIDER_INVALID,
	PGN_PROVIDER_CRASHED, /* non-zero exit, signal, or no exec */
	PGN_PROVIDER_NOT_ALLOWED,
	PGN_PROVIDER_ERROR /* Pigeon could not run it */
} pgn_provider_status;

/* "ok", "timeout", "too-big", "invalid", "crashed", "not-allowed", ... */
const char *pgn_provider_status_name(pgn_provider_status st);

struct pgn_approval {
	int allowed;
	struct pgn_err
	    why;    /* why not allowed, and the remedy (or "allowed at ...") */
	char *path; /* the resolved executable, or NULL */
	char digest[65]; /* BLAKE2b-256 of its content, hex */
};

void pgn_approval_release(struct pgn_approval *a);

/*
 * Is the provider of 'cfg' approved for project 'root' under the key
 * and state in 'home'? Approval is a keyed BLAKE2b MAC over the root,
 * the provider config and the executable's content; a change to any
 * withdraws it, and a->why says which (its hint the remedy). State that fails
 * to decrypt counts as no approval. Returns PGN_OK (see a->allowed),
 * PGN_ENOMEM.
 */
PGN_NODISCARD pgn_status pgn_provider_check(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a);

/* Record an approval (creating the key); PGN_EINVAL with 'err' set. */
PGN_NODISCARD pgn_status pgn_provider_allow(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a, struct pgn_err *err);

/* Remove the approval of 'root'; '*removed' says whether there was one. */
PGN_NODISCARD pgn_status pgn_provider_deny(const char *home, const char *root,
    int *removed, struct pgn_err *err);

struct pgn_provider_request {
	const char *host;
	const char *session;
	const char *turn;
	const char *cwd;
	const char *prompt;
};

struct pgn_provider_result {
	pgn_provider_status status;
	char *context; /* validated, or NULL */
	size_t bytes;  /* output bytes read */
	long ms;
	char fingerprint[2 * 16 + 1]; /* keyed, hex */
	struct pgn_err why; /* why the status is not ok (its hint the remedy) */
};

void pgn_provider_result_release(struct pgn_provider_result *r);

/*
 * Run the approved provider of 'cfg' in 'root': no shell, its own
 * process group, an allow-listed environment, the request as one JSON
 * object on stdin, stderr discarded. Past min(cfg->timeout_ms,
 * 'budget_ms') or cfg->max_output the group is killed. Only output
 * passing pgn_provider_validate is kept. Never fails the caller:
 * everything is in r->status.
 */
void pgn_provider_run(const char *home, const char *root,
    const struct pgn_config *cfg, const struct pgn_provider_request *rq,
    long budget_ms, struct pgn_provider_result *r);

/*
 * Validate provider output: exactly {"schema":"pigeon.prompt-context/v1",
 * "context":STRING} (whitespace around it allowed), the context valid
 * UTF-8 with no control character but newline and tab. '*context' (the
 * caller's) gets it. Returns PGN_EINVAL with 'err' set.
 */
PGN_NODISCARD pgn_status pgn_provider_validate(const char *out, size_t len,
    char **context, struct pgn_err *err);

/* ---- the record of registrations (setup/record.c, decision 0186) ---- */

/* Bytes of $PIGEON_HOME/installs. */
#define PGN_MAX_INSTALL_RECORD (256 * 1024)

/*
 * Note in $PIGEON_HOME/installs that 'kind' (a host's name, or
 * "instructions") is registered at 'where' (a project directory or an
 * instructions file; NULL: the user's config), or with 'remove' that it
 * is no longer. Idempotent; written atomically, mode 0600.
 */
PGN_NODISCARD pgn_status pgn_install_note(const char *kind, const char *where,
    int remove, struct pgn_err *err);

struct pgn_install_noted {
	char *kind;  /* "claude", ..., "instructions" */
	char *where; /* NULL: the user's config */
};
struct pgn_install_notes {
	struct pgn_install_noted *v;
	size_t n, cap;
};
/* Every registration recorded, in the order they were made. */
PGN_NODISCARD pgn_status pgn_install_notes(struct pgn_install_notes *out,
    struct pgn_err *err);
void pgn_install_notes_release(struct pgn_install_notes *n);

#endif /* PIGEON_SETUP_H */
