/*
 * Rendering the injected context (render.c), for the turn (turn.c):
 * its bounds, and the one function that makes the text fit them.
 */
#ifndef PGN_RENDER_H
#define PGN_RENDER_H

#include "pgn_int.h"
#include "pigeon/handoff.h"
#include "hook_int.h"
#include "pigeon/hook.h"
#include "pigeon/hosts.h"

/* The session introduction, whatever the lengths of paths and names. */
#define PGN_MAX_INTRO 2000
/* "[#id from NAME, AGE, re #id]\n" with a 64-character name. */
#define PGN_RENDER_MAX_HEADER 160
/* ", thread #id" in a header, where a reply names its thread (0157). */
#define PGN_RENDER_MAX_THREAD 32
/*
 * What a header may add (decision 0158): "URGENT " for urgent mail,
 * ", to @GROUP" (cut like a name) for mail sent to a group. Counted
 * only for the messages that have them.
 */
#define PGN_RENDER_MAX_URGENT (sizeof("URGENT ") - 1)
#define PGN_RENDER_MAX_GROUP  (sizeof(", to @...") - 1 + PGN_MAX_NAME)
/* A cut note: "[cut: ... read it whole with: PIGEON journal NAME]". */
#define PGN_RENDER_MAX_NOTE (PGN_HOOK_MAX_SHOWN + PGN_MAX_NAME + 160)
/* "Pigeon: a handoff baton for this new conversation: ..." */
#define PGN_RENDER_MAX_BATON_LEAD 200
/*
 * Acknowledgements (decision 0157): the line under an --ack message's
 * header, "[acknowledge within D: PIGEON ack ID "TEXT", or reply ...]",
 * and the lead of the reminders ("Pigeon: N messages ... overdue ...").
 */
#define PGN_RENDER_MAX_ACK    (PGN_HOOK_MAX_SHOWN + 200)
#define PGN_RENDER_MAX_REMIND 300
/* Peers named in an introduction, and the room of one. */
#define PGN_RENDER_MAX_PEERS 20
#define PGN_RENDER_MAX_PEER  (PGN_MAX_NAME + 40 + 48)
/* ", and N more: PIGEON agents.\n" */
#define PGN_RENDER_MAX_MORE (PGN_HOOK_MAX_SHOWN + 64)

struct pgn_render {
	const char *agent;              /* the recipient */
	const char *scope;              /* "" = global */
	const char *host;               /* "claude", ... */
	const char *pigeon;             /* how to run the CLI: a shell word */
	int intro;                      /* introduce the agent first */
	const struct pgn_agents *peers; /* for the introduction, or NULL */
	const struct pgn_baton *baton;  /* a baton to hand over, or NULL */
	const struct pgn_msgs *msgs;    /* candidates, in claim order */
	/* overdue acknowledgements, shown once more (0157), or NULL */
	const struct pgn_msgs *reminders;
	size_t *reminded;     /* out: how many of them were shown, or NULL */
	size_t held;          /* of msgs->left: senders' share */
	const char *reminder; /* the project's, or NULL */
	const char *provider; /* provider context, or NULL */
	int64_t now_ms;
};

/* Upper bound of the rendered size of one message (a pgn_cost_fn). */
size_t pgn_render_cost(const struct pgn_msg *m, void *arg);

/* Upper bound of the rendered size of a baton, its lead line included. */
size_t pgn_render_baton_cost(const struct pgn_baton *b);

/*
 * Render the context within 'max' bytes: the introduction (r->intro),
 * then the baton (r->baton), framed as data from its sender like a
 * message (cut with a note only when no message is shown beside it),
 * then the oldest '*shown' messages of r->msgs — each a header and its
 * body with every line indented, whatever line separator it uses — then
 * how many wait (and why, when some wait for their senders' share of
 * the turn: r->held), the reminder and the provider's context, each
 * labelled; how many wait is never said alone (nothing shown, nothing
 * else to say). As many candidates as fit are shown, at least the oldest
 * (none, beside a baton): alone, its body may be cut with a note. Space gives
 * way in this order: the provider's section, the notes' advice, the newest
 * candidate. '*out' (caller frees) is "" when there is nothing to say.
 * Returns PGN_ENOMEM, or PGN_ETOOBIG if even the oldest cannot be shown
 * (not with the bounds above and PGN_MAX_CONTEXT).
 */
pgn_status pgn_render_fit(const struct pgn_render *r, size_t max, char **out,
    size_t *shown);

/*
 * Append 's' for a model or a log: at most 'max' bytes of its tail
 * ("..." before a cut), with every control character, line separator
 * or byte that is not UTF-8 shown as '?', so it is one line of valid
 * UTF-8 whatever it held.
 */
void pgn_render_safe(struct pgn_buf *b, const char *s, size_t max);

/*
 * One more log line in 'o' (dropped past PGN_HOOK_MAX_LOG): "host=H
 * event=E[ mode=MODE] session=S status=STATUS ms=N", the time since
 * 'start', then the detail 'fmt' shown safely (turn.c, rewake.c).
 */
void pgn_hook_vlog(struct pgn_hook_out *o, const char *mode, int64_t start,
    const char *status, const char *fmt, va_list ap) PGN_PRINTF(5, 0);

/*
 * Until when a stop (or, with 'rewake', the idle wake) may wait for
 * mail: in->wait_until when set, else, when in->may_wait, 'deadline'
 * plus pgn_hook_grace_ms less what the claim and the write after the
 * wait need (PGN_HOOK_TAIL_MS; the idle wake's PGN_HOOK_REWAKE_CLAIM_MS);
 * 0: no waiting.
 */
int64_t pgn_hook_wait_until(const struct pgn_hook_in *in, int rewake);

#endif
