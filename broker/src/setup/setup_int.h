/*
 * Internals of install (docs/decisions/0151): what hookcmd.c (Pigeon's
 * commands and entries), merge.c (the pure merges), perm.c (the agents'
 * permissions), apply.c (plan, then execute) and inspect.c (doctor's
 * view) share.
 */
#ifndef PGN_SETUP_INT_H
#define PGN_SETUP_INT_H

#include <stddef.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "jsonedit.h"
#include "pgn_int.h"
#include "pigeon/hook.h"
#include "pigeon/setup.h"

/* ---- Pigeon's commands and entries (hookcmd.c) ---------------------- */

#define HOOK_NAME     "pigeon-hook"
#define HOOK_NAME_LEN (sizeof(HOOK_NAME) - 1)
/* The flag that makes a Stop entry Claude's idle wake (decision 0081). */
#define REWAKE_FLAG "--rewake"

/* The first word of a command, bounded; 'len' may exceed the buffer. */
struct word {
	size_t len;
	char buf[PGN_MAX_PATH];
};

int ins_is_blank(char c);
/*
 * Is the first word of 'command', split as a POSIX shell would for
 * quoting, a path whose basename is 'name'? '*wp' gets the word if so.
 */
int ins_command_word(const char *command, const char *name, struct word *wp);
/* The entry for event 'e' of host 'h' running 'hook' (caller deletes). */
cJSON *ins_make_entry(pgn_host h, const char *hook, pgn_event e);
/* Claude's idle-wake Stop entry running 'hook' (caller deletes). */
cJSON *ins_make_rewake_entry(const char *hook);
/* An absolute path ending in /pigeon-hook, no control characters. */
int ins_hook_path_ok(const char *hook);

/* ---- walking, parsing, merging (merge.c) ---------------------------- */

/* Which of Pigeon's handlers a walk is about. */
enum which {
	PIG_ANY,      /* all of them (uninstall) */
	PIG_ORDINARY, /* the synchronous ones, one per event */
	PIG_REWAKE,   /* Claude's idle wake, in Stop */
};

/* A merge's result. */
struct merged {
	cJSON *root; /* the result as a tree (numbers as raw text) */
	char *out;   /* its bytes; NULL if 'in' was */
	size_t outlen;
	int changed;
	size_t had; /* Pigeon's entries in the input */
};

int ins_handler_is_pigeon(const struct je_node *x);
/* Pigeon's 'which' handlers in event array 'arr'; '*holder' the last's item. */
size_t ins_count_which(const struct je_node *arr, pgn_config_shape shape,
    enum which which, const struct je_node **holder);
/* Pigeon's synchronous entries in 'arr' (the idle wake's not counted). */
size_t ins_count_event(const struct je_node *arr, pgn_config_shape shape,
    const struct je_node **holder);
/* Pigeon's entries in every event array of 'root'. */
size_t ins_count_all(const struct je_node *root, pgn_config_shape shape);
/* Only {} or Cursor's {"version":1}, "hooks" empty or absent. */
int ins_is_skeleton(const cJSON *root, pgn_config_shape shape);
/* Parse host 'h''s config strictly into 'd' ('err': a phrase). */
pgn_status ins_parse_config(pgn_host h, const char *in, size_t len,
    struct je_doc *d, struct pgn_err *err);
/*
 * The merge ('hook' NULL: uninstall; 'word' non-NULL: Claude's
 * permission rules for that CLI word too; 'rewake' as in pgn_install).
 */
pgn_status ins_merge(pgn_host h, const char *in, size_t len, const char *hook,
    const char *word, int rewake, struct merged *m, struct pgn_err *err);
void ins_merged_release(struct merged *m);
/* Is 'bak' what an uninstall whose result is 'result' should restore? */
int ins_bak_matches(pgn_host h, const char *bak, size_t baklen,
    const cJSON *result);

/* ---- the agents' permissions (perm.c, decision 0073) ---------------- */

#define PIGEON_NAME "pigeon"
/* A shell word for the pigeon CLI, quoted, as the hook shows it. */
#define WORD_MAX (PGN_HOOK_MAX_SHOWN + 3)
/* A Claude rule: "Bash(" WORD " " SUB ":*)". */
#define RULE_MAX   (WORD_MAX + 32)
#define PERM_NSUBS 7 /* send, read, wait, status, ack, lease, thread */

/* What a permission edit in its own file will do. */
struct perm_plan {
	char *path;   /* as shown */
	char *target; /* what is written (a symlink's target) */
	char *in;     /* current bytes, NULL if absent */
	size_t len;
	int exists;
	mode_t mode;
	char *out; /* new bytes; NULL with 'del' (remove the file) */
	size_t outlen;
	int changed, del;
	int rmdir; /* with 'del': Pigeon made the directory, remove it empty */
};

/* The word the installed hook will show for the pigeon CLI. */
void ins_hook_pigeon_word(const char *hook, char *out, size_t len);
/* Pigeon's rules in Claude's "permissions"."allow". */
size_t ins_count_rules(const struct je_node *root);
/* Make "permissions"."allow" hold the rules for 'word', each once. */
pgn_status ins_add_rules(struct je_doc *d, const char *word,
    struct pgn_err *err);
/* Remove Pigeon's rules, and the containers that left empty. */
void ins_strip_rules(struct je_node *root);
/* The permission edit of the request's host at its level. */
pgn_perm ins_perm_kind(const struct pgn_install *req);
void ins_perm_plan_release(struct perm_plan *p);
/* Plan the edit of a file of its own (Codex, Gemini); writes nothing. */
pgn_status ins_perm_plan_make(const struct pgn_install *req,
    const char *hooks_path, struct perm_plan *p, char **what,
    struct pgn_err *err);
/* Carry out a plan made by ins_perm_plan_make. */
pgn_status ins_perm_plan_write(const struct perm_plan *p, struct pgn_err *err);
/* res->perm_what for the request; '*own_file' 1: a file to plan. */
pgn_status ins_perm_describe(const struct pgn_install *req,
    struct pgn_install_result *res, const char *word, int *own_file,
    struct pgn_err *err);
/* Codex's and Gemini's edit for doctor, into s->perm*. */
pgn_status ins_perm_inspect(struct pgn_install *req,
    struct pgn_install_state *s);

/* ---- shared by apply, inspect and the plugin drop ------------------- */

/* A zero-context line diff of 'old' and 'new' (NULL: absent), "" if equal. */
pgn_status pgn_line_diff(const char *path, const char *old, size_t oldlen,
    const char *new, size_t newlen, char **out);
/* The plugin drop (PGN_MECH_PLUGIN): pgn_install_apply's and inspect's. */
pgn_status pgn_plugin_apply(const struct pgn_install *req,
    struct pgn_install_result *res, struct pgn_err *err);
pgn_status pgn_plugin_inspect(pgn_host h, const char *project,
    struct pgn_install_state *s);

#endif /* PGN_SETUP_INT_H */
