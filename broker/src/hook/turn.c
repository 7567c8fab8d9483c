/*
 * The hook's turn: payload → scope → session → config → provider →
 * claim, with the whole output built inside the claim's transaction, so
 * a message is marked delivered only together with the line that shows
 * it. The one place that computes the context budget.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "pgn_int.h"
#include "render.h"
#include "pigeon/setup.h"
#include "claim.h"

struct turn {
	/* Set before the payload is read, and released on every path. */
	const struct pgn_hook_in *in;
	struct pgn_hook_out *o;
	struct pgn_payload p;
	char *dir_scope; /* the scope of the payload's directory */
	pgn_db *db;
	struct pgn_config cfg;
	struct pgn_provider_result prov;
	struct pgn_agents peers;
	int64_t start;
	int64_t wait_until; /* a stop waits for mail until then; 0: not */
	char *context;
	char *found; /* the pigeon beside in->self */
	/*
	 * From here on cleared only once the event is not a before-tool
	 * one (turn_rest): that run never reads them, and keeps its
	 * stack to the pages it touches (decision 0259).
	 */
	const char *scope;
	const char *project; /* the directory of the project's config */
	const char *cfg_for; /* the project cfg was loaded for, or NULL */
	size_t reminded;     /* the render's: reminders it showed (0157) */
	int snapped;
	/* after a tool call, a prompt: the files before the read */
	struct pgn_quiet_snap snap;
	char pigeon[PGN_HOOK_MAX_SHOWN + 3]; /* a shell word */
	char wanted[PGN_MAX_NAME + 1];       /* the agent a new session gets */
	/* For the person, in the host's user_note field (decision 0180) */
	char note[PGN_MAX_NAME * 3 + 128];
	struct pgn_peek peek;
};

/* The fields of 't' from 'scope' on, cleared (see struct turn). */
static void
turn_rest(struct turn *t)
{
	memset(&t->scope, 0, sizeof(*t) - offsetof(struct turn, scope));
}

static const char *
event_name(pgn_host h, pgn_event e)
{
	const struct pgn_host_info *hi = pgn_host_get(h);

	return hi != NULL && e != PGN_EVENT_NONE && hi->events[e] != NULL ?
	    hi->events[e] :
	    "-";
}

/*
 * The grammar of every hook.log line (docs/hook-protocol.md), into 'b'
 * (bounded by its max): the detail cut at 'max' bytes.
 */
static void log_line(struct pgn_buf *b, size_t max, pgn_host h, pgn_event e,
    const char *mode, const char *session, const char *status, long long ms,
    const char *fmt, va_list ap) PGN_PRINTF(9, 0);

static void
log_line(struct pgn_buf *b, size_t max, pgn_host h, pgn_event e,
    const char *mode, const char *session, const char *status, long long ms,
    const char *fmt, va_list ap)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_buf d;

	pgn_buf_init(&d, max);
	pgn_buf_vaddf(&d, fmt, ap);
	pgn_buf_addf(b, "host=%s event=%s%s%s session=%s status=%s ms=%lld",
	    hi != NULL ? hi->name : "-", event_name(h, e),
	    mode != NULL ? " mode=" : "", mode != NULL ? mode : "",
	    session != NULL && session[0] ? session : "-", status, ms);
	if (d.len > 0) {
		pgn_buf_adds(b, " ");
		pgn_render_safe(b, d.data, max);
	}
	pgn_buf_release(&d);
}

/* A detail that is already one line of printable ASCII: shown as it is. */
static int
plain_ascii(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/*
 * Straight into the caller's buffer, without the heap: pigeon-hook
 * calls it on every run for its deadline line (the benchmark's path).
 */
size_t
pgn_hook_logf(char *line, size_t cap, pgn_host h, pgn_event e, const char *mode,
    const char *session, const char *status, long long ms, const char *fmt, ...)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	char detail[PGN_HOOK_LOG_DETAIL];
	struct pgn_buf b, dd;
	va_list ap;
	size_t n;
	int k, d;

	if (cap == 0)
		return 0;
	k = snprintf(line, cap,
	    "host=%s event=%s%s%s session=%s status=%s ms=%lld",
	    hi != NULL ? hi->name : "-", event_name(h, e),
	    mode != NULL ? " mode=" : "", mode != NULL ? mode : "",
	    session != NULL && session[0] ? session : "-", status, ms);
	if (k < 0)
		k = 0;
	n = (size_t)k < cap ? (size_t)k : cap - 1;
	if (strchr(fmt, '%') == NULL) { /* a constant detail: no formatting */
		d = (int)strnlen(fmt, sizeof(detail));
		if ((size_t)d < sizeof(detail))
			memcpy(detail, fmt, (size_t)d + 1);
	} else {
		va_start(ap, fmt);
		d = vsnprintf(detail, sizeof(detail), fmt, ap);
		va_end(ap);
	}
	if (d <= 0 || n + 2 >= cap)
		return n;
	if ((size_t)d < sizeof(detail) && plain_ascii(detail, (size_t)d)) {
		if ((size_t)d > cap - n - 2)
			d = (int)(cap - n - 2);
		line[n++] = ' ';
		memcpy(line + n, detail, (size_t)d);
		n += (size_t)d;
		line[n] = '\0';
		return n;
	}
	/* Anything else as the turn's lines show it. */
	pgn_buf_init(&b, cap - 1);
	pgn_buf_add(&b, line, n);
	pgn_buf_init(&dd, cap);
	va_start(ap, fmt);
	pgn_buf_vaddf(&dd, fmt, ap);
	va_end(ap);
	if (dd.len > 0) {
		pgn_buf_adds(&b, " ");
		pgn_render_safe(&b, dd.data, cap);
	}
	pgn_buf_release(&dd);
	if (b.data != NULL) {
		memcpy(line, b.data, b.len);
		line[b.len] = '\0';
		n = b.len;
	}
	pgn_buf_release(&b);
	return n;
}

void
pgn_hook_vlog(struct pgn_hook_out *o, const char *mode, int64_t start,
    const char *status, const char *fmt, va_list ap)
{
	struct pgn_buf b;
	size_t n;

	if (o->nlog == PGN_HOOK_MAX_LOG)
		return;
	pgn_buf_init(&b, PGN_HOOK_LOG_LINE - 1);
	log_line(&b, PGN_HOOK_LOG_LINE, o->host, o->event, mode, o->session,
	    status, (long long)(pgn_mono_ms() - start), fmt, ap);
	n = b.data != NULL ? b.len : 0;
	if (n > 0)
		memcpy(o->log[o->nlog], b.data, n);
	o->log[o->nlog][n] = '\0';
	o->nlog++;
	pgn_buf_release(&b);
}

long
pgn_hook_grace_ms(pgn_event named, int rewake)
{
	if (rewake)
		return PGN_MAX_REWAKE_WAIT_S * 1000L + PGN_HOOK_REWAKE_CLAIM_MS;
	return named == PGN_EVENT_STOP ? PGN_MAX_STOP_WAIT_MS : 0;
}

int64_t
pgn_hook_wait_until(const struct pgn_hook_in *in, int rewake)
{
	long grace;

	if (in->wait_until != 0)
		return in->wait_until;
	grace = in->may_wait ? pgn_hook_grace_ms(in->event, rewake) : 0;
	if (grace == 0)
		return 0;
	/* What the wait leaves: the claim and the write after it. */
	return in->deadline + grace -
	    (rewake ? PGN_HOOK_REWAKE_CLAIM_MS : PGN_HOOK_TAIL_MS);
}

/* One log line: who, what, how long, and a detail shown safely. */
static void logf_turn(struct turn *t, const char *status, const char *fmt, ...)
    PGN_PRINTF(3, 4);

static void
logf_turn(struct turn *t, const char *status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pgn_hook_vlog(t->o, NULL, t->start, status, fmt, ap);
	va_end(ap);
}

/* Non-empty once surrounding whitespace is gone. */
static int
has_text(const char *s)
{
	for (; s != NULL && *s != '\0'; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
			return 1;
	return 0;
}

/*
 * opencode's idle wake claims nothing: it answers this line, the plugin
 * starts a turn with it as the prompt, and that turn's chat.message
 * claims the mail into its message (docs/decisions/0137).
 */
static const char wake_line[] =
    "Pigeon woke you: mail arrived while you were idle.";

/* The prompt of a turn opencode's idle wake or a doorbell started. */
static int
woken(const struct turn *t)
{
	const struct pgn_host_info *hi = pgn_host_get(t->p.host);

	return hi != NULL && t->p.prompt != NULL &&
	    ((hi->wake_prompt && strcmp(t->p.prompt, wake_line) == 0) ||
	        (hi->doorbell != NULL &&
	            strncmp(t->p.prompt, hi->doorbell->line,
	                strlen(hi->doorbell->line)) == 0));
}

/*
 * A prompt a person typed, not one the host made: Claude Code runs
 * UserPromptSubmit for the turn a task-notification starts (the idle
 * wake's, measured with 2.1.332), its prompt that notification; opencode
 * runs chat.message for the turn its idle wake starts, its prompt the
 * wake line. Such a turn is a continuation: it must not reset the
 * governor's count.
 */
static int
from_a_person(const struct turn *t)
{
	const struct pgn_host_info *hi = pgn_host_get(t->p.host);
	const char *mark = hi != NULL ? hi->continuation_prefix : NULL;

	return !woken(t) &&
	    !(mark != NULL && t->p.prompt != NULL &&
	        strncmp(t->p.prompt, mark, strlen(mark)) == 0);
}

/* Would the project's provider run for this prompt? */
static int
provider_runs(const struct turn *t)
{
	return t->p.event == PGN_EVENT_PROMPT && t->cfg.argc > 0 &&
	    !t->p.subagent && has_text(t->p.prompt) && t->in->home != NULL;
}

/* A stop or an idle wake: the agent goes on with mail, governed. */
static int
continues(pgn_event e)
{
	return e == PGN_EVENT_STOP || e == PGN_EVENT_IDLE;
}

/*
 * The project's config: the reminder and provider for a prompt, "reach"
 * for a stop or an idle wake. Problems are logged; a feature in error
 * is off.
 */
static void
load_config(struct turn *t)
{
	/* Loaded once a run: a prompt's stamp may have loaded it (0230). */
	if (t->cfg_for != NULL && strcmp(t->cfg_for, t->project) == 0)
		return;
	if (t->cfg_for != NULL)
		pgn_config_release(&t->cfg);
	memset(&t->cfg, 0, sizeof(t->cfg));
	t->cfg_for = t->project;
	t->cfg.max_auto_continues = PGN_AUTO_CONTINUES_DEFAULT;
	if ((t->p.event != PGN_EVENT_PROMPT && !continues(t->p.event)) ||
	    t->project[0] == '\0')
		return;
	if (pgn_config_load(t->project, &t->cfg) != PGN_OK) {
		memset(&t->cfg, 0, sizeof(t->cfg));
		t->cfg.max_auto_continues = PGN_AUTO_CONTINUES_DEFAULT;
		return;
	}
	if (continues(t->p.event)) {
		if (t->cfg.reach_problem != NULL)
			logf_turn(t, "config", "%s", t->cfg.reach_problem);
		return;
	}
	if (t->cfg.problem != NULL)
		logf_turn(t, "config", "%s", t->cfg.problem);
	if (t->cfg.reminder_problem != NULL)
		logf_turn(t, "config", "%s", t->cfg.reminder_problem);
	if (t->cfg.provider_problem != NULL)
		logf_turn(t, "config", "%s", t->cfg.provider_problem);
	if (t->cfg.agents_problem != NULL)
		logf_turn(t, "config", "%s", t->cfg.agents_problem);
	if (t->cfg.notes_problem != NULL)
		logf_turn(t, "config", "%s", t->cfg.notes_problem);
}

/*
 * The provider runs before the claim's transaction (it may take a
 * second; the write lock is not held for it) and within the deadline.
 * Logged: status, duration, bytes, a keyed fingerprint — never text.
 */
static void
run_provider(struct turn *t)
{
	struct pgn_provider_request rq;
	long left;

	memset(&rq, 0, sizeof(rq));
	rq.host = pgn_host_get(t->p.host)->name;
	rq.session = t->p.session;
	rq.turn = t->p.turn;
	rq.cwd = t->p.dir != NULL ? t->p.dir : t->project;
	rq.prompt = t->p.prompt;
	left = (long)(t->in->deadline - pgn_mono_ms()) - PGN_HOOK_TAIL_MS;
	pgn_provider_run(t->in->home, t->project, &t->cfg, &rq,
	    left > 0 ? left : 0, &t->prov);
	logf_turn(t, "provider", "provider=%s ms=%ld bytes=%zu%s%s%s%s",
	    pgn_provider_status_name(t->prov.status), t->prov.ms, t->prov.bytes,
	    t->prov.fingerprint[0] ? " fp=" : "", t->prov.fingerprint,
	    t->prov.why.msg[0] ? " " : "", t->prov.why.msg);
}

/* Peers for an introduction: the most recently seen first. */
static int
by_seen(const void *a, const void *b)
{
	const struct pgn_agent *x = a, *y = b;

	if (x->last_seen_ms != y->last_seen_ms)
		return x->last_seen_ms > y->last_seen_ms ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The rendered text itself and a newline: the idle wake's stderr. */
static pgn_status
plain_line(struct turn *t)
{
	size_t n;

	if (t->context == NULL || t->context[0] == '\0')
		return PGN_OK;
	n = strlen(t->context);
	t->o->line = malloc(n + 1);
	if (t->o->line == NULL)
		return PGN_ENOMEM;
	memcpy(t->o->line, t->context, n);
	t->o->line[n] = '\n';
	t->o->len = n + 1;
	return PGN_OK;
}

/*
 * Cursor's sessionStart output may set environment variables ("env"):
 * PIGEON_SESSION names the session to `pigeon handoff` where Cursor
 * passes them on (docs/hook-protocol.md). Takes 'line'; NULL on ENOMEM.
 */
static char *
with_session_env(char *line, const char *session)
{
	cJSON *root, *env;
	char *out = NULL;

	root = cJSON_Parse(line);
	cJSON_free(line);
	if (root == NULL)
		return NULL;
	env = cJSON_AddObjectToObject(root, "env");
	if (env != NULL &&
	    cJSON_AddStringToObject(env, "PIGEON_SESSION", session) != NULL)
		out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return out;
}

/*
 * The output with the person's note in the host's user_note key: a bad
 * PIGEON_AGENT (t->note, naming the session's agent; decision 0180),
 * and with notes.mailInjected how many messages from whom went into
 * the model's context (decision 0229). Takes 'line'.
 */
static char *
with_user_note(char *line, const struct turn *t, const char *agent,
    const struct pgn_msgs *msgs, size_t shown)
{
	const char *key = pgn_host_get(t->p.host)->user_note;
	struct pgn_buf b;
	char *safe = NULL;
	cJSON *root;
	char *out = NULL;
	size_t i, k;

	if (key == NULL ||
	    (t->note[0] == '\0' && (!t->cfg.note_injected || shown == 0)))
		return line;
	pgn_buf_init(&b, PGN_MAX_USER_NOTE);
	if (t->note[0] != '\0')
		pgn_buf_addf(&b, "%s: %s.", t->note, agent);
	if (t->cfg.note_injected && shown > 0) {
		pgn_buf_addf(&b, "%sPigeon: %zu message%s for %s from ",
		    b.len > 0 ? " " : "", shown, shown == 1 ? "" : "s", agent);
		/* Each sender once, in order of their first message; the
		 * first PGN_NOTE_SENDERS of them. */
		for (i = 0, k = 0; i < shown && i < msgs->n; i++) {
			size_t j;

			for (j = 0; j < i; j++)
				if (strcmp(msgs->v[j].sender,
				        msgs->v[i].sender) == 0)
					break;
			if (j < i)
				continue;
			if (k == PGN_NOTE_SENDERS) {
				pgn_buf_adds(&b, " and others");
				break;
			}
			pgn_buf_addf(&b, "%s%s", k++ > 0 ? ", " : "",
			    msgs->v[i].sender);
		}
		pgn_buf_adds(&b, " put in the model's context.");
	}
	root = cJSON_Parse(line);
	cJSON_free(line);
	/* Over its bound: the note is dropped, never the output. */
	if (b.err == PGN_OK)
		safe = pgn_text_safe(b.data, b.len, 0);
	if (root != NULL &&
	    (b.err == PGN_ETOOBIG ||
	        (safe != NULL &&
	            cJSON_AddStringToObject(root, key, safe) != NULL)))
		out = cJSON_PrintUnformatted(root);
	free(safe);
	pgn_buf_release(&b);
	cJSON_Delete(root);
	return out;
}

/* Inside the claim's transaction: the output, or a rollback. */
static pgn_status
render_turn(const struct pgn_turn_out *out, size_t *keep, void *arg)
{
	struct turn *t = arg;
	struct pgn_render r;
	pgn_status st;
	char *line;

	free(t->context);
	t->context = NULL;
	free(t->o->line);
	t->o->line = NULL;
	t->o->len = 0;
	/* The idle wake: still the newest waiter, of a host still there? */
	if (t->in->still != NULL && !t->in->still(t->in->still_arg)) {
		t->o->stale = 1;
		*keep = 0;
		return PGN_OK;
	}
	memset(&r, 0, sizeof(r));
	r.agent = out->agent;
	r.scope = out->scope;
	r.host = pgn_host_get(t->p.host)->name;
	r.pigeon = t->pigeon;
	r.intro = t->p.event == PGN_EVENT_SESSION_START || out->bound;
	r.peers = &t->peers;
	r.baton = &out->baton;
	r.msgs = &out->msgs;
	r.reminders = &out->reminders;
	r.reminded = &t->reminded;
	r.held = out->held;
	r.reminder = t->p.event == PGN_EVENT_PROMPT ? t->cfg.reminder : NULL;
	r.provider = t->prov.context;
	r.now_ms = pgn_now_ms();
	st = pgn_render_fit(&r, PGN_MAX_CONTEXT, &t->context, keep);
	if (st != PGN_OK)
		return st;
	if (t->in->plain)
		return plain_line(t);
	line = pgn_envelope(t->p.host, t->p.event, t->context, &st);
	if (line == NULL)
		return st; /* PGN_OK: the neutral output says it all */
	if (pgn_host_get(t->p.host)->session_env &&
	    t->p.event == PGN_EVENT_SESSION_START) {
		line = with_session_env(line, t->p.session);
		if (line == NULL)
			return PGN_ENOMEM;
	}
	line = with_user_note(line, t, out->agent, &out->msgs, *keep);
	if (line == NULL)
		return PGN_ENOMEM;
	t->o->len = strlen(line);
	line[t->o->len++] = '\n'; /* over the NUL: written with its length */
	t->o->line = line;
	return PGN_OK;
}

/*
 * "12,13,14" of the claimed messages, the taken baton's copy first
 * ('baton', 0: none), for a lost-output line.
 */
static void
list_ids(struct pgn_hook_out *o, int64_t baton, const struct pgn_msgs *m)
{
	struct pgn_buf b;
	size_t i;

	pgn_buf_init(&b, sizeof(o->ids) - 1);
	if (baton != 0)
		pgn_buf_addf(&b, "%lld", (long long)baton);
	for (i = 0; i < m->n; i++)
		pgn_buf_addf(&b, "%s%lld", i || baton ? "," : "",
		    (long long)m->v[i].id);
	if (b.err == PGN_OK && b.len > 0)
		memcpy(o->ids, b.data, b.len + 1);
	else if (m->n > 0)
		snprintf(o->ids, sizeof(o->ids), "%lld..%lld",
		    (long long)m->v[0].id, (long long)m->v[m->n - 1].id);
	pgn_buf_release(&b);
}

static pgn_status
claim(struct turn *t)
{
	struct pgn_turn req;
	struct pgn_turn_out out;
	char baton[32] = "", held[64] = "";
	size_t budget;
	pgn_status st;

	memset(&req, 0, sizeof(req));
	req.host = pgn_host_get(t->p.host)->name;
	req.session = t->p.session;
	req.agent = t->wanted[0] ? t->wanted : NULL;
	req.turn = t->p.turn[0] != '\0' ? t->p.turn : NULL;
	req.turn_window_ms = t->p.turn_window_ms;
	req.transcript = t->p.transcript;
	req.route = pgn_turn_route(t->p.event);
	req.max_continues = t->cfg.max_auto_continues;
	req.keep_continues = !from_a_person(t);
	req.continuation = woken(t);
	/* The idle wake's claim begins the turn the host starts with it. */
	req.turn_begins = t->in->plain;
	/*
	 * Cursor counts its own follow-ups (loop_count): a follow-up that
	 * passed for a person's prompt must not reset the governor's count.
	 */
	if (t->p.loop_count >= t->cfg.max_auto_continues)
		req.max_continues = 0;
	/*
	 * The one budget: what candidates may cost, an upper bound of their
	 * rendering. pgn_render_fit then shows exactly what fits.
	 */
	budget = PGN_MAX_CONTEXT;
	if (t->p.event == PGN_EVENT_SESSION_START || !t->peek.bound)
		budget -= PGN_MAX_INTRO;
	if (t->cfg.reminder != NULL && t->p.event == PGN_EVENT_PROMPT)
		budget -= strlen(t->cfg.reminder) + PGN_RENDER_MAX_HEADER;
	req.budget = budget;
	req.cost = pgn_render_cost;
	req.take_baton = t->p.new_conversation;
	req.baton_cost = pgn_render_baton_cost;
	req.render = render_turn;
	req.render_arg = t;
	req.committing = t->in->committing;
	req.committing_arg = t->in->arg;
	req.reminded = &t->reminded;
	req.no_reminders = t->peek.bound && !t->peek.remind;
	st = pgn_turn_claim(t->db, &req, &out);
	if (st == PGN_OK) {
		memcpy(t->o->agent, out.agent, sizeof(out.agent));
		t->o->claimed = out.msgs.n + (out.baton.id != 0);
		t->o->governed = out.governed;
		list_ids(t->o, out.baton.message_id, &out.msgs);
		if (out.duplicate) {
			free(t->o->line);
			t->o->line = NULL;
			t->o->len = 0;
		} else if (out.governed && t->peek.queued) {
			logf_turn(t, "governed",
			    "agent=%s: %lld continuations in a row, the cap; the mail waits for the next prompt",
			    out.agent, (long long)out.continues);
		} else if (out.msgs.n > 0 || out.bound || out.baton.id != 0 ||
		    out.reminders.n > 0) {
			if (out.baton.id != 0)
				snprintf(baton, sizeof(baton), " baton=%lld",
				    (long long)out.baton.id);
			if (out.held > 0)
				snprintf(held, sizeof(held), " held=%zu",
				    out.held);
			if (out.reminders.n > 0)
				snprintf(held + strlen(held),
				    sizeof(held) - strlen(held),
				    " reminded=%zu", out.reminders.n);
			logf_turn(t, "ok",
			    "agent=%s delivered=%zu waiting=%zu bytes=%zu%s%s",
			    out.agent, out.msgs.n, out.msgs.left,
			    t->context != NULL ? strlen(t->context) : 0, baton,
			    held);
		} else if (out.held > 0) {
			logf_turn(t, "held",
			    "agent=%s: %zu message%s wait%s for the next turn: a sender's share of this turn (%d bytes) is used",
			    out.agent, out.held, out.held == 1 ? "" : "s",
			    out.held == 1 ? "s" : "", PGN_TURN_SENDER_MAX);
		}
	} else {
		free(t->o->line);
		t->o->line = NULL;
		t->o->len = 0;
	}
	pgn_msgs_release(&out.msgs);
	pgn_msgs_release(&out.reminders);
	pgn_baton_release(&out.baton);
	return st;
}

/* Open the database; the default one is created, a named one is not. */
static pgn_status
open_db(struct turn *t)
{
	long left;

	left = (long)(t->in->deadline - pgn_mono_ms()) - PGN_HOOK_TAIL_MS;
	if (left < PGN_HOOK_MIN_WAIT_MS)
		left = PGN_HOOK_MIN_WAIT_MS;
	/* A hook never checkpoints before writing: its latency matters. */
	return pgn_db_open(t->in->db_path,
	    PGN_OPEN_LATENCY | (t->in->db_create ? PGN_OPEN_CREATE : 0), left,
	    &t->db);
}

/* The agent a new session binds to: PIGEON_AGENT, else --agent. */
static void
wanted_agent(struct turn *t)
{
	const char *cand[2];
	struct pgn_err rule;
	size_t i;

	cand[0] = t->in->agent_env;
	cand[1] = t->in->agent_arg;
	for (i = 0; i < 2; i++) {
		if (cand[i] == NULL || cand[i][0] == '\0')
			continue;
		if (pgn_name_check(cand[i], t->wanted, &rule) == PGN_OK)
			return;
		t->wanted[0] = '\0';
		/* A bound session keeps its agent: nothing to say then. */
		if (t->peek.bound)
			continue;
		logf_turn(t, "bad-agent", "%s '%s' is not an agent name (%s)",
		    i == 0 ? "PIGEON_AGENT" : "the agent argument", cand[i],
		    rule.msg);
		/* cut to its bound: the note is one short line */
		snprintf(t->note, sizeof(t->note),
		    "Pigeon: %s '%.*s' is not an agent name (%.*s), so this session got a generated name",
		    i == 0 ? "PIGEON_AGENT" : "the agent argument",
		    PGN_MAX_NAME, cand[i], PGN_MAX_NAME * 2, rule.msg);
	}
}

/*
 * The one read before a turn. What waits counts only if this event
 * claims it: low mail waits for a session start or a prompt, so after a
 * tool call, at a stop or an idle wake the run is as quiet as with none
 * (no write, the quiet stamp recorded; decision 0158).
 */
static pgn_status
peek(struct turn *t)
{
	return pgn_turn_peek_for(t->db, t->p.session,
	    pgn_turn_lowest(t->p.event), &t->peek);
}

/*
 * A stop with no mail may wait for some (reach.stopWaitMs), looking
 * every PGN_HOOK_STOP_POLL_MS with the same one read, never past
 * the turn's wait_until. Only a bound session waits.
 */
static void
stop_wait(struct turn *t)
{
	int64_t until, now, step;
	struct timespec ts;

	/* Past the governor's cap a stop claims nothing: no use waiting. */
	if (t->cfg.stop_wait_ms <= 0 || t->wait_until == 0 || !t->peek.bound ||
	    t->peek.queued || t->peek.continues >= t->cfg.max_auto_continues ||
	    t->p.loop_count >= t->cfg.max_auto_continues)
		return;
	until = pgn_mono_ms() + t->cfg.stop_wait_ms;
	if (until > t->wait_until)
		until = t->wait_until;
	while (!t->peek.queued && (now = pgn_mono_ms()) < until) {
		step = until - now < PGN_HOOK_STOP_POLL_MS ?
		    until - now :
		    PGN_HOOK_STOP_POLL_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)step * 1000000L;
		(void)nanosleep(&ts, NULL);
		if (peek(t) != PGN_OK)
			break;
	}
}

/*
 * opencode's session.idle claims nothing, so nothing claimed can go
 * unseen if the new turn never starts: with mail queued and the
 * governor under its cap it answers the wake line; the turn the plugin
 * starts with it claims the mail in its chat.message and counts the
 * continuation, mail or not (claim.c): the cap bounds the wakes
 * themselves. Nothing is written here.
 */
static pgn_status
wake(struct turn *t)
{
	pgn_status st;
	char *line;

	if (!t->peek.bound || !t->peek.queued)
		return PGN_OK;
	memcpy(t->o->agent, t->peek.agent, sizeof(t->o->agent));
	if (t->peek.continues >= t->cfg.max_auto_continues) {
		t->o->governed = 1;
		logf_turn(t, "governed",
		    "agent=%s: %lld continuations in a row, the cap; the mail waits for the next prompt",
		    t->peek.agent, (long long)t->peek.continues);
		return PGN_OK;
	}
	line = pgn_envelope(t->p.host, t->p.event, wake_line, &st);
	if (line == NULL)
		return st;
	t->o->len = strlen(line);
	line[t->o->len++] = '\n'; /* over the NUL: written with its length */
	t->o->line = line;
	logf_turn(t, "wake",
	    "agent=%s: mail waits; the turn the plugin starts claims it",
	    t->peek.agent);
	return PGN_OK;
}

/*
 * A prompt answered from the quiet stamp (decision 0230): the files are
 * as they were before a read that found the session bound, nothing of
 * any priority queued, no continuation counted, no mail in its turn,
 * seen lately and no reminder due by now; the payload's directory is in
 * the scope that read named. The project's config is read as the full
 * run reads it, and decides as there: a reminder or a provider to run
 * means the full run (which keeps the config read here).
 */
static int
quiet_prompt(struct turn *t)
{
	struct pgn_quiet_facts f;

	if (woken(t) ||
	    !pgn_quiet_hit_prompt(t->in->home, t->p.session, &t->snap,
	        pgn_now_ms(), &f))
		return 0;
	if (pgn_scope_find(t->p.dir, &t->dir_scope) != PGN_OK ||
	    (t->dir_scope[0] != '/' && t->dir_scope[0] != '\0') ||
	    pgn_quiet_hash(t->dir_scope, strlen(t->dir_scope)) != f.scope_hash)
		return 0;
	t->scope = t->dir_scope;
	t->project = t->dir_scope;
	load_config(t);
	if ((t->cfg.reminder != NULL && t->cfg.reminder[0] != '\0') ||
	    provider_runs(t))
		return 0;
	memcpy(t->o->agent, f.agent, sizeof(t->o->agent));
	return 1;
}

/* What the read that found the session quiet knew, for the next run. */
static void
record_quiet(struct turn *t)
{
	struct pgn_quiet_facts f;

	memset(&f, 0, sizeof(f));
	f.seen_ms = t->peek.seen_ms;
	f.remind_ms = t->peek.remind_ms;
	/* A directory or the global scope: not a shared store's key (0117). */
	f.prompt = !t->peek.queued_any && t->peek.continues == 0 &&
	    !t->peek.turn_mail &&
	    (t->peek.scope[0] == '/' || t->peek.scope[0] == '\0');
	f.scope_hash = pgn_quiet_hash(t->peek.scope, strlen(t->peek.scope));
	memcpy(f.agent, t->peek.agent, sizeof(f.agent));
	/* A prompt makes no file (decision 0021): a tool call made it. */
	pgn_quiet_record(t->in->home, t->p.session, &t->snap, &f,
	    t->p.event == PGN_EVENT_AFTER_TOOL);
}

/*
 * A run of another host's hooks replayed by its own (Cursor running
 * Claude's): nothing is claimed, and the answer is the replaying host's
 * neutral one, which Cursor needs as JSON on every event and as a
 * permission before a tool (decision 0258); nothing for a host whose
 * neutral answer is nothing, or an event it does not have.
 */
static pgn_status
replay_answer(struct turn *t)
{
	pgn_status st;
	char *line;

	line = pgn_envelope(t->p.replayer, t->p.event, NULL, &st);
	if (line == NULL)
		return st == PGN_ENOMEM ? st : PGN_OK;
	t->o->len = strlen(line);
	line[t->o->len++] = '\n'; /* over the NUL: written with its length */
	t->o->line = line;
	return PGN_OK;
}

static pgn_status
run(struct turn *t)
{
	const struct pgn_hook_in *in = t->in;
	struct pgn_hook_out *o = t->o;
	char why[PGN_MAX_ERRMSG];
	pgn_status st;
	int only_mail;

	why[0] = '\0';
	st = pgn_payload_parse(in->payload, in->len, in->host, in->event, &t->p,
	    why, sizeof(why));
	o->host = t->p.host;
	o->event = t->p.event;
	if (st != PGN_OK) {
		logf_turn(t, "bad-input", "%s", why);
		return st;
	}
	if (t->p.skip)
		return replay_answer(t);
	if (t->p.ignore)
		return PGN_OK;
	if (t->p.event == PGN_EVENT_BEFORE_TOOL) /* a lease check, no mail */
		return pgn_hook_pretool(in, o, &t->p, t->start);
	turn_rest(t);
	st = pgn_payload_cursor_transcript(&t->p, in->user_home);
	if (st != PGN_OK)
		goto dberr;
	memcpy(o->session, t->p.session, sizeof(o->session));
	/* opencode's plugin: the woken turn did not start; nothing claimed. */
	if (t->p.wake_error[0] != '\0') {
		logf_turn(t, "wake-failed",
		    "the turn the idle wake asked for did not start (%s); nothing was claimed, the mail stays queued",
		    t->p.wake_error);
		return PGN_OK;
	}
	/*
	 * After a tool call, mail is rare and runs are many: the database
	 * files unchanged since a read that found nothing answer without
	 * SQLite (decision 0085). The snapshot precedes the read below.
	 */
	if (t->p.event == PGN_EVENT_AFTER_TOOL) {
		t->snapped = pgn_quiet_snapshot(in->db_path, &t->snap);
		if (t->snapped &&
		    pgn_quiet_hit(in->home, t->p.session, &t->snap,
		        pgn_now_ms()))
			return PGN_OK;
	}
	if (t->p.event == PGN_EVENT_PROMPT) {
		t->snapped = pgn_quiet_snapshot(in->db_path, &t->snap);
		if (t->snapped && quiet_prompt(t))
			return PGN_OK;
	}
	st = open_db(t);
	if (st == PGN_OK)
		st = peek(t);
	/*
	 * A session keeps the scope it was bound in: only a new one needs
	 * the walk up from its directory (not on every tool call).
	 */
	if (st == PGN_OK && !t->peek.bound && t->dir_scope == NULL)
		st = pgn_scope_find(t->p.dir, &t->dir_scope);
	if (st != PGN_OK)
		goto dberr;
	t->scope = t->peek.bound ? t->peek.scope : t->dir_scope;
	/*
	 * On a store several machines share, a bound session's scope is a
	 * key (the origin remote), no directory: the project's config is
	 * found from the payload's directory (decision 0117).
	 */
	t->project = t->scope;
	if (t->scope[0] != '\0' && t->scope[0] != '/') {
		if (t->dir_scope == NULL)
			st = pgn_scope_find(t->p.dir, &t->dir_scope);
		if (st != PGN_OK)
			goto dberr;
		t->project = t->dir_scope;
	}
	st = pgn_db_set_scope(t->db, t->scope);
	if (st != PGN_OK)
		goto dberr;
	wanted_agent(t);
	load_config(t);
	only_mail = t->p.event == PGN_EVENT_AFTER_TOOL ||
	    continues(t->p.event) ||
	    (t->p.event == PGN_EVENT_PROMPT &&
	        (t->cfg.reminder == NULL || t->cfg.reminder[0] == '\0') &&
	        !provider_runs(t));
	if (t->p.event == PGN_EVENT_STOP)
		stop_wait(t);
	/*
	 * Most runs find no mail: one read, no lock, no fsync — but a prompt
	 * after continuations writes, to reset the governor's count, and a
	 * prompt after a turn that had mail records that a new turn begins
	 * (each sender's share of it starts empty, decision 0136), and so
	 * does a turn opencode's idle wake started, to count itself.
	 */
	if (only_mail && pgn_turn_quiet(&t->peek, pgn_now_ms()) &&
	    !(t->p.event == PGN_EVENT_PROMPT && t->peek.continues > 0 &&
	        from_a_person(t)) &&
	    !woken(t) &&
	    !(t->p.event == PGN_EVENT_PROMPT && t->peek.turn_mail) &&
	    !(t->p.event == PGN_EVENT_PROMPT && t->peek.remind)) {
		memcpy(o->agent, t->peek.agent, sizeof(o->agent));
		if (t->snapped)
			record_quiet(t);
		return PGN_OK;
	}
	if (t->p.event == PGN_EVENT_IDLE) {
		st = wake(t);
		if (st != PGN_OK)
			goto dberr;
		return PGN_OK;
	}
	if (provider_runs(t))
		run_provider(t);
	if (t->p.event == PGN_EVENT_SESSION_START || !t->peek.bound) {
		/* Peers are for the introduction, which goes without them. */
		if (pgn_agents_list(t->db, &t->peers) != PGN_OK)
			pgn_agents_release(&t->peers);
		else if (t->peers.n > 1)
			qsort(t->peers.v, t->peers.n, sizeof(t->peers.v[0]),
			    by_seen);
	}
	/* Found only now: the walk costs a dozen system calls. */
	if (in->pigeon == NULL && in->self != NULL)
		t->found = pgn_pigeon_beside(in->self);
	pgn_shell_word(in->pigeon != NULL ? in->pigeon : t->found, t->pigeon,
	    sizeof(t->pigeon));
	st = claim(t);
	if (st != PGN_OK)
		goto dberr;
	return PGN_OK;
dberr:
	logf_turn(t, pgn_status_name(st), "%s",
	    t->db != NULL ? pgn_errmsg(t->db) : "out of memory");
	return st;
}

/*
 * A session start of a host with an export file (the row's env_export:
 * Claude Code's $CLAUDE_ENV_FILE) names its session to the agent's Bash
 * commands, an export line in that file, for `pigeon handoff`.
 * A failure is logged; the turn goes on.
 */
static void
export_session(struct turn *t)
{
	const struct pgn_host_info *hi = pgn_host_get(t->o->host);
	struct pgn_err err;

	if (t->in->env_file == NULL || t->in->env_file[0] == '\0' ||
	    hi == NULL || hi->env_export == NULL ||
	    t->o->event != PGN_EVENT_SESSION_START || t->o->session[0] == '\0')
		return;
	if (pgn_env_file_export(t->in->env_file, t->o->session, &err) != PGN_OK)
		logf_turn(t, "env-file", "%s", err.msg);
}

void
pgn_hook_out_reset(struct pgn_hook_out *o, pgn_host h, pgn_event e)
{
	o->host = h;
	o->event = e;
	o->st = PGN_OK;
	o->line = NULL;
	o->len = o->claimed = o->nlog = 0;
	o->governed = o->stale = o->unsure = 0;
	o->ids[0] = o->session[0] = o->agent[0] = '\0';
}

void
pgn_hook_out_release(struct pgn_hook_out *o)
{
	if (o == NULL)
		return;
	free(o->line);
	o->line = NULL;
	o->len = 0;
}

void
pgn_hook_turn(const struct pgn_hook_in *in, struct pgn_hook_out *o)
{
	struct turn t;

	pgn_hook_out_reset(o, in->host, in->event);
	memset(&t, 0, offsetof(struct turn, scope));
	t.in = in;
	t.o = o;
	t.start = pgn_mono_ms();
	t.wait_until = pgn_hook_wait_until(in, 0);
	o->st = run(&t);
	o->unsure = o->st != PGN_OK && pgn_db_outcome_unknown(t.db);
	export_session(&t);
	if (o->st != PGN_OK) {
		free(o->line);
		o->line = NULL;
		o->len = 0;
		o->claimed = 0;
	}
	free(t.context);
	pgn_agents_release(&t.peers);
	pgn_config_release(&t.cfg);
	pgn_provider_result_release(&t.prov);
	pgn_db_close(t.db);
	free(t.dir_scope);
	free(t.found);
	pgn_payload_release(&t.p);
}
