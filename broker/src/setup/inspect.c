/* What a host's config holds of Pigeon's, for pigeon doctor. */
#include <stdlib.h>
#include <string.h>

#include "setup_int.h"
#include "trust.h"
#include "pigeon/setup.h"

/* ---- inspect (pigeon doctor) ---------------------------------------- */

void
pgn_install_state_release(struct pgn_install_state *s)
{
	if (s == NULL)
		return;
	free(s->path);
	free(s->problem);
	free(s->hook);
	free(s->perm_path);
	free(s->perm_problem);
	memset(s, 0, sizeof(*s));
}

/*
 * What a config's settings do to the doorbell (decision 0176): Claude
 * Code's crossSessionInbound refuses or holds peer frames; unset, a
 * session in bypass-permissions mode holds frames from a sender that
 * asserts no mode, as Pigeon's. NULL: nothing holds it.
 */
static const char *
doorbell_note(const struct pgn_doorbell *db, const struct je_node *root)
{
	const struct je_node *v, *perm;
	char prog[PGN_MAX_PATH];

	/* A queue doorbell: no setting holds it; its command must be found. */
	if (db->kind == PGN_BELL_QUEUE)
		return pgn_doorbell_program(db, prog) ?
		    NULL :
		    "not rung: its command is not on PATH (a send finds it there)";
	if (db->inbound_key == NULL)
		return NULL;
	v = je_get(root, db->inbound_key);
	if (v != NULL && v->str != NULL) {
		if (strcmp(v->str, "refuse") == 0)
			return "refused (crossSessionInbound is \"refuse\")";
		if (strcmp(v->str, "hold") == 0)
			return "held until a person releases it (crossSessionInbound is \"hold\")";
		return NULL;
	}
	perm = je_get(root, "permissions");
	v = perm != NULL ? je_get(perm, db->mode_key) : NULL;
	if (v != NULL && v->str != NULL && strcmp(v->str, db->hold_mode) == 0)
		return "held in bypass-permissions mode (permissions.defaultMode); set crossSessionInbound to \"accept\" to be woken";
	return NULL;
}

pgn_status
pgn_install_inspect(pgn_host h, const char *project,
    struct pgn_install_state *s)
{
	const struct pgn_host_info *hi = pgn_host_get(h);
	struct pgn_install req;
	struct je_doc d;
	struct pgn_err err;
	const struct je_node *hooks, *holder, *hs, *hd;
	char *data = NULL;
	size_t len = 0;
	mode_t mode = 0;
	pgn_status rc;
	int e, rules;

	pgn_err_clear(&err);
	memset(s, 0, sizeof(*s));
	memset(&d, 0, sizeof(d));
	if (hi != NULL && hi->mechanism == PGN_MECH_PLUGIN)
		return pgn_plugin_inspect(h, project, s);
	if (hi == NULL || hi->mechanism != PGN_MECH_COMMAND)
		return PGN_EINVAL;
	memset(&req, 0, sizeof(req));
	req.host = h;
	req.project = project;
	rules = ins_perm_kind(&req) == PGN_PERM_RULES;
	s->perm = rules ? 0 : -1;
	rc = pgn_host_config_path(req.host, req.project, &s->path, &err);
	if (rc != PGN_OK)
		goto problem;
	rc = pgn_read_file(s->path, PGN_MAX_CONFIG, &data, &len, &s->exists,
	    &mode, &err);
	if (rc != PGN_OK || !s->exists)
		goto problem;
	rc = ins_parse_config(h, data, len, &d, &err);
	if (rc != PGN_OK)
		goto problem;
	hooks = je_get(d.root, "hooks");
	if (hi->doorbell != NULL)
		s->doorbell = doorbell_note(hi->doorbell, d.root);
	if (hi->rewake && hooks != NULL)
		s->rewake =
		    ins_count_which(je_get(hooks, hi->events[PGN_EVENT_STOP]),
		        hi->shape, PIG_REWAKE, &holder);
	for (e = 0; e < PGN_NEVENTS && hooks != NULL; e++) {
		if (hi->events[e] == NULL)
			continue;
		s->entries[e] = ins_count_event(je_get(hooks, hi->events[e]),
		    hi->shape, &holder);
		if (holder == NULL || s->hook != NULL)
			continue;
		/* The program of the first Pigeon command found. */
		if (hi->shape == PGN_SHAPE_FLAT) {
			s->hook =
			    pgn_command_hook(je_get(holder, "command")->str);
			s->guarded =
			    pgn_command_guarded(je_get(holder, "command")->str);
			continue;
		}
		hs = je_get(holder, "hooks");
		for (hd = hs->child; hd != NULL; hd = hd->next) {
			if (ins_handler_is_pigeon(hd)) {
				s->hook = pgn_command_hook(
				    je_get(hd, "command")->str);
				s->guarded = pgn_command_guarded(
				    je_get(hd, "command")->str);
				break;
			}
		}
	}
	if (hi->trust != PGN_TRUST_NONE)
		s->trusted = pgn_install_trusted(h, s->path);
	if (rules) {
		s->perm_path = pgn_strdup(s->path);
		s->perm = ins_count_rules(d.root) >= PERM_NSUBS;
		rc = s->perm_path != NULL ? PGN_OK : PGN_ENOMEM;
		goto out;
	}
	rc = PGN_OK;
	goto out;
problem:
	if (err.msg[0] != '\0') {
		s->problem = pgn_strdup(err.msg);
		rc = s->problem == NULL ? PGN_ENOMEM : PGN_OK;
	}
out:
	if (rc == PGN_OK && !rules)
		rc = ins_perm_inspect(&req, s);
	je_release(&d);
	free(data);
	return rc;
}
