/*
 * The host table (hosts/host.c): everything Pigeon knows of each host
 * it serves, one row per host, and the envelope each host's hook output
 * takes. Used by the hook, by setup and by the front ends; ownership as
 * in pigeon.h.
 */
#ifndef PIGEON_HOSTS_H
#define PIGEON_HOSTS_H

#include "pigeon/pigeon.h"

/* ---- hosts (host.c): the one table of host facts ------------------- */
/*
 * Everything Pigeon knows of a host is one row of the table in host.c
 * (struct pgn_host_info): how context reaches its model (mechanism),
 * where its config lives, its event name for each facet, the payload
 * keys the hook reads, how a payload is recognised, the envelope the
 * hook prints, trust and permission notes, and the capability cells
 * `pigeon hosts` prints. install.c, doctor, the hook (payload.c,
 * turn.c) read only the row: adding a host is adding an enum value and
 * a row, plus its envelope function if none of host.c's fits
 * (docs/architecture.md, "The host table").
 */

#define PGN_MAX_CONTEXT 6000 /* injected context, bytes */
/* The person's note in a host's user_note field (decisions 0180, 0229):
 * its bytes (over: dropped, never the output), the senders it names. */
#define PGN_MAX_USER_NOTE  1024
#define PGN_NOTE_SENDERS   5
#define PGN_HOOK_TIMEOUT_S 5 /* timeout written into host configs */

typedef enum pgn_host {
	PGN_HOST_NONE = -1,
	PGN_HOST_CURSOR,
	PGN_HOST_CLAUDE,
	PGN_HOST_CODEX,
	PGN_HOST_GEMINI,
	PGN_HOST_COPILOT, /* GitHub Copilot CLI */
	PGN_HOST_OPENCODE,
	PGN_NHOSTS
} pgn_host;

/*
 * The facets: the moments at which context can reach a model. Each is
 * one hook event of a host (or none), one audit route, one column of
 * `pigeon hosts`.
 */
typedef enum pgn_event {
	PGN_EVENT_NONE = -1,
	PGN_EVENT_SESSION_START,
	PGN_EVENT_PROMPT,
	PGN_EVENT_AFTER_TOOL, /* after each tool call, inside a turn */
	PGN_EVENT_STOP,       /* the agent is about to stop */
	PGN_EVENT_IDLE,       /* its turn has ended: a new one may start */
	/*
	 * Before a tool runs: no context, a lease check (product.md §13,
	 * decision 0156); it may deny the call, never anything else.
	 */
	PGN_EVENT_BEFORE_TOOL,
	PGN_NEVENTS
} pgn_event;

/* How context reaches the host's model (the Coffer seed's three). */
typedef enum pgn_mechanism {
	PGN_MECH_NONE,        /* none Pigeon can use */
	PGN_MECH_COMMAND,     /* the host runs pigeon-hook from its config */
	PGN_MECH_PLUGIN,      /* a plugin file Pigeon drops runs pigeon-hook */
	PGN_MECH_INSTRUCTIONS /* a marked block in an instructions file */
} pgn_mechanism;

typedef enum pgn_config_shape {
	PGN_SHAPE_FLAT,  /* Cursor: {"version":1,"hooks":{E:[{command}]}} */
	PGN_SHAPE_NESTED /* Claude, Codex, Gemini: {"hooks":{E:[{hooks:[...]}]}}
	                  */
} pgn_config_shape;

/* What install does so the host's agent may run pigeon (decision 0073). */
typedef enum pgn_perm {
	PGN_PERM_NONE,   /* nothing: the row's perm_none says why */
	PGN_PERM_RULES,  /* Claude's permissions.allow rules, same file */
	PGN_PERM_ROOT,   /* Codex's writable_roots in config.toml beside */
	PGN_PERM_POLICY, /* Gemini's policy file ~/.gemini/policies/ */
} pgn_perm;

/* How doctor learns whether the host will run hooks it has not trusted. */
typedef enum pgn_trust {
	PGN_TRUST_NONE,      /* it runs them as they are */
	PGN_TRUST_CODEX_TOML /* [hooks.state."FILE:..."] trusted_hash */
} pgn_trust;

/* Where the hook finds a session's transcript (struct pgn_host_info). */
typedef enum pgn_transcript_from {
	PGN_TRANSCRIPT_FROM_PAYLOAD, /* its payload's transcript_path, or none
	                              */
	PGN_TRANSCRIPT_FROM_CURSOR /* else Cursor's agent-transcripts folder */
} pgn_transcript_from;

/* A capability cell of `pigeon hosts`. */
typedef enum pgn_cap { PGN_CAP_NO, PGN_CAP_PARTIAL, PGN_CAP_YES } pgn_cap;

struct pgn_cell {
	pgn_cap cap;
	/*
	 * Never NULL for a row of the table: the host version and the test
	 * that proved it, or the document's address and the date it was
	 * read (a "no" too: the documentation, flag or issue behind it).
	 */
	const char *evidence;
};

/*
 * The keys the hook reads from a host's JSON payload (string fields;
 * an empty string counts as absent).
 */
struct pgn_payload_keys {
	const char *session[2];    /* the session id: the first present */
	const char *session_strip; /* a prefix dropped from it, or NULL */
	const char *dir;           /* the project directory */
	int dir_first;             /* 1: 'dir' is an array: its first item */
	const char *turn[PGN_NEVENTS]; /* the turn id per event; NULL: none */
	const char *prompt;            /* the submitted prompt */
	/*
	 * A session start begins a new conversation (it may take a baton)
	 * when 'source' is NULL, or its value is one of 'new_sources'.
	 */
	const char *source;
	const char *new_sources[2];
	const char *subagent; /* present: not a top-level session */
};

/*
 * How a payload is recognised when the command names no host. Rows are
 * tried by ascending 'rank' (0: never detected); a row matches when
 * any one of its rules holds. The row with 'fallback' is the answer
 * when none matched.
 */
struct pgn_detect {
	int rank;
	const char *keys[2];  /* these string keys, all present */
	const char *keys2[2]; /* or these */
	int own_event;        /* or its hook_event_name is one of the row's */
	/* or it is one no other row has, or one of the row's with this key */
	int unique_event;
	const char *event_key;
	int fallback;
};

/*
 * The before-tool event (decision 0156): how a tool call's name and
 * arguments are found in the payload, which tools write which paths,
 * and how the host is told no.
 */
#define PGN_HOST_TOOLS 10 /* write tools mapped per host */
#define PGN_TOOL_KEYS  3  /* argument keys tried per tool */

typedef enum pgn_tool_form {
	PGN_TOOL_NONE,  /* the end of a row's map */
	PGN_TOOL_PATH,  /* the argument is the path it writes */
	PGN_TOOL_PATCH, /* the argument is a patch: its paths are written */
	/*
	 * A shell command: only an apply_patch heredoc in it is judged
	 * (Codex with a model it does not know, decision 0156); any other
	 * command passes.
	 */
	PGN_TOOL_SHELL
} pgn_tool_form;

struct pgn_tool_map {
	const char *tool; /* the host's tool name, case-sensitive */
	pgn_tool_form form;
	const char *keys[PGN_TOOL_KEYS]; /* argument keys: every one present */
};

/* How a host is told to refuse a tool call. */
typedef enum pgn_deny_form {
	PGN_DENY_NONE, /* no before-tool event */
	/* {"hookSpecificOutput":{hookEventName,permissionDecision:"deny",
	 * permissionDecisionReason}} (Claude Code, Codex) */
	PGN_DENY_SPECIFIC,
	PGN_DENY_DECISION,   /* {"decision":"deny","reason"} (Gemini CLI) */
	PGN_DENY_PERMISSION, /* {"permission":"deny",user_message,
	                        agent_message} (Cursor) */
	PGN_DENY_TOP,        /* {"permissionDecision":"deny",
	                        "permissionDecisionReason"} (Copilot CLI) */
	PGN_DENY_PLUGIN      /* {"deny":TEXT}: Pigeon's plugin throws it */
} pgn_deny_form;

struct pgn_tool_keys {
	const char *name;  /* the payload key of the tool's name */
	const char *input; /* of its arguments: an object, or JSON text */
};

/*
 * Where and how a host registers an MCP server (pigeon install, decision
 * 0168); 'entry' NULL: none. The file is 'env_file' under $'user_env'
 * when set, else 'user_path' under $HOME, or 'project_path' in a
 * project (NULL: no project registration).
 */
/*
 * Claude Code's ~/.claude.json holds its state (projects, history
 * caches) beside mcpServers and grows to 8-100 MB; Claude rewrites it
 * itself. Pigeon's MCP entry is edited in it under this bound.
 */
#define PGN_MAX_CLAUDE_STATE ((size_t)256 << 20) /* bytes */

struct pgn_mcp_reg_info {
	const char *user_env;
	const char *env_file;
	const char *user_path;
	const char *project_path;
	/*
	 * The user file's bound in bytes, enforced before it is read
	 * (Claude's .claude.json is its state, routinely 8-100 MB:
	 * PGN_MAX_CLAUDE_STATE); 0: PGN_MAX_CONFIG. A project file is a
	 * config of the person's, bound by PGN_MAX_CONFIG.
	 */
	size_t user_max;
	/*
	 * JSON: the object of servers ("mcpServers", opencode's "mcp");
	 * NULL: the entry is a TOML table appended as a block (Codex).
	 */
	const char *key;
	/* The entry: JSON, or TOML lines; @PIGEON@ the CLI's path, quoted. */
	const char *entry;
	/*
	 * The approval of exactly Pigeon's tools, written where the host
	 * reads it so they run without a prompt, or NULL (allow): the
	 * string appended to the array allow_array (inside the object
	 * allow_parent unless NULL) of allow_file (under $HOME, user level
	 * only; NULL: the host's hooks config, at either level). Claude:
	 * "mcp__pigeon" in "permissions"."allow" of settings.json; Cursor:
	 * "pigeon:*" in "mcpAllowlist" of ~/.cursor/permissions.json (JSON
	 * with comments: allow_comments). allow_existing: only into an
	 * array that is already there (Cursor: a new mcpAllowlist would
	 * replace the person's in-app allowlist whole).
	 */
	const char *allow;
	const char *allow_file;
	const char *allow_parent;
	const char *allow_array;
	int allow_comments;
	int allow_existing;
	const char *approval; /* one line: how the tools are approved */
};

struct pgn_host_info;

/*
 * A host's envelope: the one line (no newline) the hook prints for
 * event 'e' around 'context', or its neutral output when 'context' is
 * NULL or empty; NULL when that is to print nothing ('*st' PGN_OK) or
 * on failure ('*st' PGN_ENOMEM).
 */
typedef char *pgn_envelope_fn(const struct pgn_host_info *hi, pgn_event e,
    const char *context, pgn_status *st);

/* ---- the doorbell: waking an idle session (doorbell.c, 0175-0177) --- */

#define PGN_DOORBELL_CONNECT_MS 250   /* a socket not accepting by then */
#define PGN_DOORBELL_FILE_MAX   16384 /* bytes of one sessions file */
#define PGN_DOORBELL_SCAN_MAX   256   /* entries of a sessions directory */
#define PGN_DOORBELL_WHY        200   /* bytes of the reason, with NUL */
/*
 * A queue doorbell (Codex's `codex queue`, decision 0233) runs the
 * host's own command, detached from the send: the send waits only for
 * the fork; the command itself is killed, with its process group, once
 * it has run this long (measured: 1-2 s on a loaded machine).
 */
#define PGN_DOORBELL_QUEUE_MS 20000
/* The watcher's and its command's niceness, added (bellqueue.c). */
#define PGN_DOORBELL_NICE 10
/* Watchers one process has started and not reaped (bellqueue.c). */
#define PGN_DOORBELL_WATCHERS 16

/* How a doorbell reaches a session. */
typedef enum pgn_bell_kind {
	PGN_BELL_SOCKET, /* a frame on the session's socket (Claude, 0175) */
	PGN_BELL_QUEUE,  /* the host's queue command (Codex, 0233) */
} pgn_bell_kind;

/*
 * A host's messaging socket, as measured (decision 0175): where its
 * sessions publish themselves, and the frame that starts a turn.
 */
struct pgn_doorbell {
	pgn_bell_kind kind;
	const char *via; /* the mechanism's name: status, journal, hosts */
	/* The frame's content: this fixed line, then " (#ID)." naming the
	 * message that rang (never mail, never a token): Claude drops a
	 * body it saw from the same sender within 30 s (0175). */
	const char *line;
	const char *from; /* the frame's sender label (the host's guard key) */
	/* The sessions directory: this many levels above the transcript
	 * file (the config directory), then this name. */
	int transcript_up;
	const char *sessions;
	const char *socket_dir; /* the socket's directory: NAME or NAME-<uid> */
	const char *idle;       /* the "status" of a session between turns */
	/* Its settings that hold or refuse a frame (doctor): the key, and
	 * the permission mode that holds frames when the key is unset. */
	const char *inbound_key; /* "crossSessionInbound" */
	const char *mode_key;    /* "permissions" member: "defaultMode" */
	const char *hold_mode;   /* "bypassPermissions" */
	/*
	 * PGN_BELL_QUEUE: the command found on PATH ("codex"), run as
	 * "PROGRAM queue --thread ID --message LINE (#MSG).", with
	 * 'home_env' set to the directory 'transcript_up' levels above
	 * the transcript (the session's own config home).
	 */
	const char *program;
	const char *home_env;
};

typedef enum pgn_ring {
	PGN_RING_RUNG,    /* the frame was written */
	PGN_RING_BUSY,    /* the session is in a turn: its hooks deliver */
	PGN_RING_GONE,    /* no live session file for it: nothing to ring */
	PGN_RING_REFUSED, /* a file or socket that is not to be trusted */
	PGN_RING_FAILED,  /* the socket did not take the frame */
} pgn_ring;

/*
 * Ring session 'id' (the hooks' session id) of a host whose transcript
 * is 'transcript': find its sessions file, check it (owner, no link,
 * its pid alive with the same start time, idle), check the socket (a
 * socket of this user in the host's socket directory, its listener
 * that pid), connect within PGN_DOORBELL_CONNECT_MS and write one
 * frame naming the session. Never blocks longer; the reason for any
 * outcome but RUNG goes to 'why'.
 */
pgn_ring pgn_doorbell_ring(const struct pgn_doorbell *d, const char *id,
    const char *transcript, int64_t msg, char why[PGN_DOORBELL_WHY]);
/*
 * Ring a PGN_BELL_QUEUE doorbell (bellqueue.c): check the id and the
 * session's config home (this user's directory), find the program on
 * PATH, and start it detached (its own session, no descriptor of ours
 * but /dev/null); return once the watcher is forked, RUNG meaning handed
 * off (never waiting for it while fewer than PGN_DOORBELL_WATCHERS of
 * this process's run). The
 * watcher kills it past PGN_DOORBELL_QUEUE_MS and appends its outcome,
 * prefixed with 'tag', to the file 'log' (NULL: none). The environment
 * passed is ours less PIGEON_* (no database string reaches the host).
 */
/* 1 when a PGN_BELL_QUEUE doorbell's program is on PATH ('out': its
 * path), else 0 (doctor). */
int pgn_doorbell_program(const struct pgn_doorbell *d, char out[PGN_MAX_PATH]);
pgn_ring pgn_doorbell_queue(const struct pgn_doorbell *d, const char *id,
    const char *transcript, int64_t msg, const char *log, const char *tag,
    char why[PGN_DOORBELL_WHY]);
/* What a sessions file says (doorbell.c; its parser, fuzzed). */
struct pgn_doorbell_file {
	long pid;        /* its "pid" when it equals the file's name, else 0 */
	char start[32];  /* "procStart", "" if absent or too long */
	char status[16]; /* "status", the same */
	char sock[108];  /* "messagingSocketPath" (a sun_path's size) */
	int sock_long;   /* the path does not fit a socket address */
};

/*
 * 1 when 'text' (NUL-terminated JSON) is the sessions file of session
 * 'id', the file named for 'pid'; 'f' filled (zeroed first, always).
 */
int pgn_doorbell_parse(const char *text, const char *id, long pid,
    struct pgn_doorbell_file *f);
/* The host table's doorbell mechanism named 'via' (its static name),
 * or NULL. */
const char *pgn_doorbell_via(const char *via);
/* "rung", "busy", ... (static). */
const char *pgn_ring_name(pgn_ring r);

struct pgn_host_info {
	const char *name;  /* "cursor", ...: the command line's and the key's */
	const char *title; /* "Claude Code": for people */
	pgn_mechanism mechanism;
	/* -- its config (install, doctor) -- */
	pgn_config_shape shape; /* command hooks: the file's JSON shape */
	/*
	 * PGN_MECH_PLUGIN: the plugin file's text, its first line the mark
	 * that makes a file Pigeon's, with @PIGEON_HOOK@ (the hook's path),
	 * @PIGEON_MADE@ (the directories install created) and
	 * @PIGEON_TIMEOUT_MS@ filled in by install (plugin.c).
	 */
	const char *plugin;
	const char *user_env;     /* env var naming the user config dir */
	const char *env_file;     /* file (or plugin) inside user_env's dir */
	const char *user_path;    /* else relative to $HOME */
	const char *project_path; /* relative to the project root */
	int timeout_ms;           /* 1: the host's timeout is in ms */
	int json_comments;        /* 1: its JSON config may hold comments */
	pgn_perm perm[2]; /* the permission edit: [0] user, [1] project */
	const char *perm_none[2]; /* install's line where it is PGN_PERM_NONE */
	const char *perm_brief[2]; /* doctor's */
	pgn_trust trust;
	const char *trust_note[2]; /* install's advice: [0] user, [1] project */
	/* -- its hooks (the hook) -- */
	const char *events[PGN_NEVENTS]; /* its event names; NULL: none */
	struct pgn_payload_keys keys;
	struct pgn_detect detect;
	/*
	 * The name of a host whose hooks this one also runs with its own
	 * payload (Cursor runs Claude's), or NULL: a run named as that host
	 * whose payload matches this row's detection keys prints nothing.
	 */
	const char *replays;
	const char *replay_note; /* doctor's, when both are installed */
	pgn_envelope_fn *envelope;
	/*
	 * How a stop hook makes the host go on with TEXT: "decision" with
	 * this word and "reason" (Claude, Codex "block"; Gemini "deny");
	 * NULL where the envelope has its own form (Cursor's
	 * "followup_message").
	 */
	const char *stop_decision;
	/*
	 * The top-level key of its hook output that the person sees and the
	 * model does not ("systemMessage": Claude Code, Codex, Gemini CLI),
	 * or NULL: a note for the person (a bad PIGEON_AGENT, decision
	 * 0180) then goes to hook.log only.
	 */
	const char *user_note;
	/*
	 * 1: it runs a hook's command through a shell (measured: /bin/sh;
	 * Cursor: documented as a shell string, decision 0243), so install
	 * writes the guarded form "[ -x HOOK ] || exit 0; exec HOOK ...":
	 * a hook whose binary is gone is silent (decision 0225); 0: the
	 * bare command, which the host may run without a shell.
	 */
	int shell_guard;
	/* -- what only some hosts do (decision 0147) -- */
	/*
	 * 1: its agent can be woken when idle by pigeon-hook --rewake, an
	 * asynchronous hook on its stop event (Claude's asyncRewake,
	 * docs/decisions/0081): install's --rewake, doctor's "rewake".
	 */
	int rewake;
	/*
	 * 1: its idle wake starts a turn whose prompt is Pigeon's wake line
	 * (opencode's plugin, docs/decisions/0137): that prompt is the
	 * host's, and the turn a continuation.
	 */
	int wake_prompt;
	/*
	 * A prompt starting with this is the host's own, not a person's: the
	 * turn is a continuation (Claude's "<task-notification>" turn after
	 * an idle wake). NULL: none.
	 */
	const char *continuation_prefix;
	/*
	 * 1: its session-start envelope also sets PIGEON_SESSION in the
	 * agent's environment (its output's "env", Cursor).
	 */
	int session_env;
	/*
	 * The environment variable naming a file a session start appends
	 * "export PIGEON_SESSION=..." to (Claude's CLAUDE_ENV_FILE), or NULL.
	 */
	const char *env_export;
	/* Where its transcript is found when the payload names none. */
	pgn_transcript_from transcript_from;
	/* -- the before-tool event (decision 0156) -- */
	struct pgn_tool_keys tool;
	struct pgn_tool_map tools[PGN_HOST_TOOLS]; /* ends at PGN_TOOL_NONE */
	pgn_deny_form deny;
	/*
	 * What its before-tool hook prints to let a call run; NULL: nothing
	 * (an explicit allow would skip the host's own permission prompt
	 * where that is what it means). Cursor fails a preToolUse answer
	 * without a permission closed (decision 0258).
	 */
	const char *allow;
	/* -- pigeon hosts: a cell per facet -- */
	struct pgn_cell cells[PGN_NEVENTS];
	/* -- waking an idle session (0175-0177) -- */
	const struct pgn_doorbell *doorbell; /* NULL: none Pigeon rings */
	struct pgn_cell wake; /* what wakes it from outside, with evidence */
	/* -- pigeon mcp's registration (decision 0168) -- */
	struct pgn_mcp_reg_info mcp;
};

/* The row of 'h' (static), or NULL for PGN_HOST_NONE. */
const struct pgn_host_info *pgn_host_get(pgn_host h);
pgn_host pgn_host_by_name(const char *name);
/* The event of host 'h' named 'name' (case-sensitive), or NONE. */
pgn_event pgn_event_by_name(pgn_host h, const char *name);
/* "session-start", "prompt", "after-tool", "stop", "idle" (static). */
const char *pgn_facet_name(pgn_event e);
/* How many of the facets host 'h' has an event for. */
int pgn_host_nevents(pgn_host h);

/*
 * Every row of the table, for pigeon hosts and doctor: the hook rows
 * (0 .. PGN_NHOSTS - 1, as pgn_host_get), then the hosts Pigeon serves
 * with the instructions block only (mechanism PGN_MECH_INSTRUCTIONS, no
 * events, no config). NULL out of range.
 */
int pgn_host_rows(void);
const struct pgn_host_info *pgn_host_row(int i);
const struct pgn_host_info *pgn_host_row_by_name(const char *name);
/* "yes", "partial", "no"; "command", "plugin", "instructions", "none". */
const char *pgn_cap_name(pgn_cap c);
const char *pgn_mechanism_name(pgn_mechanism m);
/*
 * The file a host named for session exports: the value of the first
 * row's env_export variable that is set and not empty, or NULL.
 */
const char *pgn_host_env_export(void);

/* A mask of mechanisms, for pgn_host_names. */
#define PGN_MECH_BIT(m) (1u << (m))
/* The mechanisms pigeon-hook serves: a command, or a plugin running it. */
#define PGN_MECH_HOOK                                                          \
	(PGN_MECH_BIT(PGN_MECH_COMMAND) | PGN_MECH_BIT(PGN_MECH_PLUGIN))

/*
 * Host names, for messages: "cursor, claude, codex or gemini" of the
 * rows whose mechanism is in mask 'mechs' (0: every row), in table
 * order. Written to 'out', cut to 'len'.
 */
void pgn_host_names(unsigned mechs, char *out, size_t len);

/* "A, B, C or D": host 'h''s event names, cut to 'len'. */
void pgn_host_event_names(pgn_host h, char *out, size_t len);

/*
 * Which host a payload is, by the rows' detection rules (struct
 * pgn_detect): 'event' its hook_event_name (or NULL), 'has' true for a
 * key the payload holds as a non-empty string. 'keys_only' tries only
 * the key rules (no event name, no fallback): PGN_HOST_NONE if none.
 */
pgn_host pgn_host_detect(const char *event,
    int (*has)(const char *key, void *arg), void *arg, int keys_only);

/*
 * The map entry of host 'h' for tool 'name', or NULL: a tool Pigeon
 * does not judge (reads, searches, unknown tools).
 */
const struct pgn_tool_map *pgn_host_tool(pgn_host h, const char *name);

/*
 * The one line a hook prints for host 'h' and event 'e': the row's
 * envelope around 'context', or the neutral output when 'context' is
 * NULL or empty. For PGN_EVENT_BEFORE_TOOL 'context' is the reason of a
 * denial, put in the host's deny form (the row's 'deny'); the neutral
 * output is the row's 'allow'. Returns a string the caller frees, or NULL when
 * the host's neutral output is to print nothing; '*st' gets PGN_ENOMEM on
 * failure, PGN_EINVAL for a host or event out of range.
 */
char *pgn_envelope(pgn_host h, pgn_event e, const char *context,
    pgn_status *st);

/*
 * The config file of host 'h' (a plugin host: its plugin file): in
 * 'project' when not NULL, else under the host's environment override
 * or $HOME. '*path' is the caller's. PGN_EINVAL, PGN_ETOOBIG with 'err'.
 */
PGN_NODISCARD pgn_status pgn_host_config_path(pgn_host h, const char *project,
    char **path, struct pgn_err *err);

#endif /* PIGEON_HOSTS_H */
