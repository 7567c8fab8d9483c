/*
 * The project's prompt-context provider: approval by a keyed MAC over
 * the project root, the provider config and the executable's content,
 * kept in the sealed state; a bounded run (no shell, own process group,
 * allow-listed environment, timeout and output caps); and strict
 * validation of what it prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "pgn_int.h"

#define MAC_BYTES 32
#define HEX_BYTES (2 * MAC_BYTES + 1)

extern char **environ;

/* Variables a provider may see; nothing of Pigeon's, no secrets. */
static const char *const env_allow[] = {"HOME", "PATH", "SHELL", "USER",
    "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "TMPDIR",
    "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", NULL};

const char *
pgn_provider_status_name(pgn_provider_status st)
{
	switch (st) {
	case PGN_PROVIDER_OFF:
		return "off";
	case PGN_PROVIDER_OK:
		return "ok";
	case PGN_PROVIDER_EMPTY:
		return "empty";
	case PGN_PROVIDER_TIMEOUT:
		return "timeout";
	case PGN_PROVIDER_TOO_BIG:
		return "too-big";
	case PGN_PROVIDER_INVALID:
		return "invalid";
	case PGN_PROVIDER_CRASHED:
		return "crashed";
	case PGN_PROVIDER_NOT_ALLOWED:
		return "not-allowed";
	case PGN_PROVIDER_ERROR:
		return "error";
	}
	return "unknown";
}

void
pgn_approval_release(struct pgn_approval *a)
{
	if (a == NULL)
		return;
	free(a->path);
	memset(a, 0, sizeof(*a));
}

/* ---- what an approval covers ---------------------------------------- */

struct digests {
	char root[PGN_MAX_PATH];
	char config[HEX_BYTES]; /* keyed MAC of the provider config */
	char exe[HEX_BYTES];    /* keyed MAC of the executable */
	char mac[HEX_BYTES];    /* keyed MAC over all three */
};

static void
put_str(crypto_generichash_state *h, const char *s)
{
	unsigned char n[8];
	size_t len = strlen(s), i;

	for (i = 0; i < 8; i++)
		n[i] = (unsigned char)((uint64_t)len >> (8 * i));
	crypto_generichash_update(h, n, sizeof(n));
	crypto_generichash_update(h, (const unsigned char *)s, len);
}

static void
finish_hex(crypto_generichash_state *h, char hex[HEX_BYTES])
{
	unsigned char mac[MAC_BYTES];

	crypto_generichash_final(h, mac, sizeof(mac));
	sodium_bin2hex(hex, HEX_BYTES, mac, sizeof(mac));
}

/*
 * The executable: argv[0] resolved inside 'root', a regular executable
 * file. '*path' is the caller's.
 */
static pgn_status
resolve(const char *root, const struct pgn_config *cfg, char **path, char *why,
    size_t whylen)
{
	char *joined, *real;
	struct stat sb;
	size_t n = strlen(root);

	*path = NULL;
	joined = pgn_path_join(root, cfg->argv[0]);
	if (joined == NULL)
		return PGN_ENOMEM;
	real = realpath(joined, NULL);
	if (real == NULL) {
		pgn_errf(why, whylen, "the provider '%s' cannot be found: %s",
		    joined, strerror(errno));
		free(joined);
		return PGN_EINVAL;
	}
	free(joined);
	if (strncmp(real, root, n) != 0 || (real[n] != '/' && n > 1)) {
		pgn_errf(why, whylen,
		    "the provider resolves to '%s', outside "
		    "the project",
		    real);
		free(real);
		return PGN_EINVAL;
	}
	if (stat(real, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    access(real, X_OK) != 0) {
		pgn_errf(why, whylen,
		    "the provider '%s' is not an executable "
		    "file",
		    real);
		free(real);
		return PGN_EINVAL;
	}
	*path = real;
	return PGN_OK;
}

/* Hash the executable's content, keyed (for the MAC) and plain. */
static pgn_status
hash_exe(const unsigned char *key, const char *path, char exe[HEX_BYTES],
    char digest[65], char *why, size_t whylen)
{
	crypto_generichash_state k, p;
	unsigned char buf[16384], d[32];
	size_t total = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pgn_errf(why, whylen, "cannot read the provider '%s': %s", path,
		    strerror(errno));
		return PGN_EIO;
	}
	pgn_mac_start(&k, key, "pigeon.provider-exe/v1", MAC_BYTES);
	crypto_generichash_init(&p, NULL, 0, sizeof(d));
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		total += (size_t)n;
		if (total > PGN_MAX_PROVIDER_EXE)
			break;
		crypto_generichash_update(&k, buf, (size_t)n);
		crypto_generichash_update(&p, buf, (size_t)n);
	}
	close(fd);
	if (n < 0 || total > PGN_MAX_PROVIDER_EXE) {
		pgn_errf(why, whylen, "the provider '%s' is %s", path,
		    n < 0 ? "unreadable" : "over 16 MiB");
		return PGN_EINVAL;
	}
	finish_hex(&k, exe);
	crypto_generichash_final(&p, d, sizeof(d));
	sodium_bin2hex(digest, 65, d, sizeof(d));
	return PGN_OK;
}

static void
compute(const unsigned char *key, const char *root,
    const struct pgn_config *cfg, struct digests *d)
{
	crypto_generichash_state h;
	char num[32];
	size_t i;

	pgn_mac_start(&h, key, "pigeon.provider-config/v1", MAC_BYTES);
	snprintf(num, sizeof(num), "%zu", cfg->argc);
	put_str(&h, num);
	for (i = 0; i < cfg->argc; i++)
		put_str(&h, cfg->argv[i]);
	snprintf(num, sizeof(num), "%ld %zu", cfg->timeout_ms, cfg->max_output);
	put_str(&h, num);
	finish_hex(&h, d->config);
	snprintf(d->root, sizeof(d->root), "%s", root);
	pgn_mac_start(&h, key, "pigeon.provider-approval/v1", MAC_BYTES);
	put_str(&h, d->root);
	put_str(&h, d->config);
	put_str(&h, d->exe);
	finish_hex(&h, d->mac);
}

/* ---- the sealed state: {"approvals":[{root,config,exe,mac,at}]} ---- */

/* Parse the state; a missing or unreadable state is an empty one. */
static cJSON *
load_state(const char *home, const unsigned char *key, int *tampered)
{
	char err[PGN_MAX_ERR], *plain = NULL;
	size_t len = 0;
	cJSON *root = NULL, *arr;
	pgn_status rc;

	*tampered = 0;
	rc = pgn_state_read(home, key, &plain, &len, err, sizeof(err));
	if (rc == PGN_ETAMPER)
		*tampered = 1;
	if (rc == PGN_OK && plain != NULL)
		root = cJSON_ParseWithLength(plain, len);
	pgn_secret_free(plain, len);
	arr = root != NULL ?
	    cJSON_GetObjectItemCaseSensitive(root, "approvals") :
	    NULL;
	if (!cJSON_IsArray(arr)) {
		cJSON_Delete(root);
		root = cJSON_CreateObject();
		if (root != NULL &&
		    cJSON_AddArrayToObject(root, "approvals") == NULL) {
			cJSON_Delete(root);
			root = NULL;
		}
	}
	return root;
}

static pgn_status
save_state(const char *home, const unsigned char *key, cJSON *state, char *err,
    size_t errlen)
{
	char *text;
	pgn_status rc;

	text = cJSON_PrintUnformatted(state);
	if (text == NULL)
		return PGN_ENOMEM;
	rc = pgn_state_write(home, key, text, strlen(text), err, errlen);
	sodium_memzero(text, strlen(text));
	cJSON_free(text);
	return rc;
}

static cJSON *
find_approval(cJSON *state, const char *root)
{
	cJSON *it;

	cJSON_ArrayForEach(it,
	    cJSON_GetObjectItemCaseSensitive(state, "approvals"))
	{
		if (strcmp(cJSON_GetStringValue(
		               cJSON_GetObjectItemCaseSensitive(it, "root")) ?
		            cJSON_GetStringValue(
		                cJSON_GetObjectItemCaseSensitive(it, "root")) :
		            "",
		        root) == 0)
			return it;
	}
	return NULL;
}

static int
field_eq(const cJSON *o, const char *k, const char *v)
{
	const char *s =
	    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));

	return s != NULL && strlen(s) == strlen(v) &&
	    sodium_memcmp(s, v, strlen(v)) == 0;
}

/* Resolve and hash; shared by check and allow. */
static pgn_status
prepare(const unsigned char *key, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a, struct digests *d)
{
	pgn_status rc;

	if (cfg->argc == 0) {
		pgn_errf(a->why, sizeof(a->why), "%s",
		    cfg->provider_problem ? cfg->provider_problem :
		                            "no provider is configured");
		return PGN_EINVAL;
	}
	rc = resolve(root, cfg, &a->path, a->why, sizeof(a->why));
	if (rc == PGN_OK)
		rc = hash_exe(key, a->path, d->exe, a->digest, a->why,
		    sizeof(a->why));
	if (rc == PGN_OK)
		compute(key, root, cfg, d);
	return rc;
}

pgn_status
pgn_provider_check(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a)
{
	unsigned char *key = NULL;
	struct digests d;
	cJSON *state = NULL, *ap;
	const char *at;
	int tampered = 0;
	pgn_status rc;

	memset(a, 0, sizeof(*a));
	rc = pgn_key_load(home, 0, &key, a->why, sizeof(a->why));
	if (rc == PGN_ENOMEM)
		return rc;
	if (rc != PGN_OK) {
		if (rc == PGN_ENOTFOUND)
			pgn_errf(a->why, sizeof(a->why),
			    "not allowed: run "
			    "pigeon provider allow in the project");
		return PGN_OK;
	}
	rc = prepare(key, root, cfg, a, &d);
	if (rc != PGN_OK) {
		rc = rc == PGN_ENOMEM ? rc : PGN_OK;
		goto out;
	}
	state = load_state(home, key, &tampered);
	if (state == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	ap = find_approval(state, root);
	if (tampered)
		pgn_errf(a->why, sizeof(a->why),
		    "the provider state failed "
		    "to authenticate, so no approval counts: run pigeon "
		    "provider allow again");
	else if (ap == NULL)
		pgn_errf(a->why, sizeof(a->why),
		    "not allowed for %s: run "
		    "pigeon provider allow in the project",
		    root);
	else if (!field_eq(ap, "config", d.config))
		pgn_errf(a->why, sizeof(a->why),
		    "withdrawn: the promptContext "
		    "configuration changed since it was allowed; review it and "
		    "run pigeon provider allow again");
	else if (!field_eq(ap, "exe", d.exe))
		pgn_errf(a->why, sizeof(a->why),
		    "withdrawn: the provider "
		    "program '%s' changed since it was allowed; review it and "
		    "run pigeon provider allow again",
		    a->path);
	else if (!field_eq(ap, "mac", d.mac))
		pgn_errf(a->why, sizeof(a->why),
		    "withdrawn: the approval does "
		    "not match; run pigeon provider allow again");
	else {
		a->allowed = 1;
		at = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(ap, "at"));
		pgn_errf(a->why, sizeof(a->why), "allowed at %s",
		    at != NULL ? at : "an unknown time");
	}
out:
	cJSON_Delete(state);
	sodium_memzero(&d, sizeof(d));
	pgn_key_free(key);
	return rc;
}

pgn_status
pgn_provider_allow(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a, char *err,
    size_t errlen)
{
	unsigned char *key = NULL;
	struct digests d;
	cJSON *state = NULL, *ap = NULL, *arr;
	char at[32];
	int tampered = 0;
	pgn_status rc;

	memset(a, 0, sizeof(*a));
	rc = pgn_key_load(home, 1, &key, err, errlen);
	if (rc != PGN_OK)
		return rc;
	rc = prepare(key, root, cfg, a, &d);
	if (rc != PGN_OK) {
		pgn_errf(err, errlen, "%s", a->why);
		goto out;
	}
	state = load_state(home, key, &tampered);
	arr = state != NULL ?
	    cJSON_GetObjectItemCaseSensitive(state, "approvals") :
	    NULL;
	if (arr == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	ap = find_approval(state, root);
	if (ap != NULL)
		cJSON_Delete(cJSON_DetachItemViaPointer(arr, ap));
	if (cJSON_GetArraySize(arr) >= PGN_MAX_APPROVALS) {
		pgn_errf(err, errlen,
		    "%d projects already have an approved "
		    "provider: deny some first",
		    PGN_MAX_APPROVALS);
		rc = PGN_ETOOBIG;
		goto out;
	}
	pgn_format_time(pgn_now_ms(), at, sizeof(at));
	ap = cJSON_CreateObject();
	if (ap == NULL || !cJSON_AddItemToArray(arr, ap) ||
	    !cJSON_AddStringToObject(ap, "root", d.root) ||
	    !cJSON_AddStringToObject(ap, "config", d.config) ||
	    !cJSON_AddStringToObject(ap, "exe", d.exe) ||
	    !cJSON_AddStringToObject(ap, "mac", d.mac) ||
	    !cJSON_AddStringToObject(ap, "at", at)) {
		rc = PGN_ENOMEM;
		goto out;
	}
	rc = save_state(home, key, state, err, errlen);
	if (rc == PGN_OK) {
		a->allowed = 1;
		pgn_errf(a->why, sizeof(a->why), "allowed at %s", at);
	}
out:
	cJSON_Delete(state);
	sodium_memzero(&d, sizeof(d));
	pgn_key_free(key);
	return rc;
}

pgn_status
pgn_provider_deny(const char *home, const char *root, int *removed, char *err,
    size_t errlen)
{
	unsigned char *key = NULL;
	cJSON *state = NULL, *ap;
	int tampered = 0;
	pgn_status rc;

	*removed = 0;
	rc = pgn_key_load(home, 0, &key, err, errlen);
	if (rc == PGN_ENOTFOUND)
		return PGN_OK; /* no key: nothing was ever allowed */
	if (rc != PGN_OK)
		return rc;
	state = load_state(home, key, &tampered);
	if (state == NULL) {
		rc = PGN_ENOMEM;
		goto out;
	}
	ap = find_approval(state, root);
	if (ap != NULL) {
		cJSON_Delete(cJSON_DetachItemViaPointer(
		    cJSON_GetObjectItemCaseSensitive(state, "approvals"), ap));
		*removed = 1;
	}
	if (ap != NULL || tampered)
		rc = save_state(home, key, state, err, errlen);
out:
	cJSON_Delete(state);
	pgn_key_free(key);
	return rc;
}

/* ---- output validation ---------------------------------------------- */

pgn_status
pgn_provider_validate(const char *out, size_t len, char **context, char *why,
    size_t whylen)
{
	static const char schema[] = "pigeon.prompt-context/v1";
	const cJSON *sch, *ctx, *it;
	const char *end = NULL, *p;
	cJSON *root = NULL;
	char *copy = NULL;
	size_t i, n;
	pgn_status rc = PGN_EINVAL;

	*context = NULL;
	if (memchr(out, '\0', len) != NULL) {
		pgn_errf(why, whylen, "output holds a NUL byte");
		return PGN_EINVAL;
	}
	/* cJSON skips a BOM and any byte below '!' before the value. */
	for (p = out; p < out + len &&
	     (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r');
	     p++)
		;
	if (p < out + len &&
	    ((unsigned char)*p < 0x20 || (unsigned char)*p == 0xef)) {
		pgn_errf(why, whylen, "output has text before the JSON object");
		return PGN_EINVAL;
	}
	/* "\u0000" would cut the decoded string short: refuse it. */
	if (pgn_json_nul_escape(out, len)) {
		pgn_errf(why, whylen, "context holds a control character");
		return PGN_EINVAL;
	}
	copy = pgn_strndup(out, len);
	if (copy == NULL)
		return PGN_ENOMEM;
	root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
	if (root == NULL) {
		pgn_errf(why, whylen, "output is not valid JSON");
		goto out;
	}
	for (p = end; p < copy + len; p++) {
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
			pgn_errf(why, whylen,
			    "output has text after the JSON "
			    "object");
			goto out;
		}
	}
	if (!cJSON_IsObject(root)) {
		pgn_errf(why, whylen, "output is not a JSON object");
		goto out;
	}
	n = 0;
	cJSON_ArrayForEach(it, root)
	{
		if (strcmp(it->string, "schema") != 0 &&
		    strcmp(it->string, "context") != 0) {
			pgn_errf(why, whylen, "output has an unknown key");
			goto out;
		}
		n++;
	}
	sch = cJSON_GetObjectItemCaseSensitive(root, "schema");
	ctx = cJSON_GetObjectItemCaseSensitive(root, "context");
	if (n != 2 || !cJSON_IsString(sch) || !cJSON_IsString(ctx) ||
	    strcmp(sch->valuestring, schema) != 0) {
		pgn_errf(why, whylen,
		    "output must be exactly {\"schema\":"
		    "\"%s\",\"context\":STRING}",
		    schema);
		goto out;
	}
	n = strlen(ctx->valuestring);
	if (!pgn_utf8_valid(ctx->valuestring, n)) {
		pgn_errf(why, whylen, "context is not valid UTF-8");
		goto out;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)ctx->valuestring[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			pgn_errf(why, whylen,
			    "context holds a control "
			    "character");
			goto out;
		}
	}
	*context = pgn_strndup(ctx->valuestring, n);
	rc = *context != NULL ? PGN_OK : PGN_ENOMEM;
out:
	cJSON_Delete(root);
	free(copy);
	return rc;
}

/* ---- the bounded run ------------------------------------------------ */

void
pgn_provider_result_release(struct pgn_provider_result *r)
{
	if (r == NULL)
		return;
	free(r->context);
	memset(r, 0, sizeof(*r));
}

static char *
request_json(const struct pgn_provider_request *rq)
{
	cJSON *o;
	char *s = NULL;

	o = cJSON_CreateObject();
	if (o != NULL &&
	    cJSON_AddStringToObject(o, "schema",
	        "pigeon.prompt-context-request/v1") &&
	    cJSON_AddStringToObject(o, "host", rq->host ? rq->host : "") &&
	    cJSON_AddStringToObject(o, "session",
	        rq->session ? rq->session : "") &&
	    cJSON_AddStringToObject(o, "turn", rq->turn ? rq->turn : "") &&
	    cJSON_AddStringToObject(o, "cwd", rq->cwd ? rq->cwd : "") &&
	    cJSON_AddStringToObject(o, "prompt", rq->prompt ? rq->prompt : ""))
		s = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return s;
}

/* The allow-listed environment, as a NULL-terminated vector of borrowed
 * strings in a caller-sized array. */
static void
build_env(const char **envp, size_t max)
{
	size_t n = 0, i, k;
	char **e;

	for (e = environ; e != NULL && *e != NULL && n + 1 < max; e++) {
		for (i = 0; env_allow[i] != NULL; i++) {
			k = strlen(env_allow[i]);
			if (strncmp(*e, env_allow[i], k) == 0 &&
			    (*e)[k] == '=') {
				envp[n++] = *e;
				break;
			}
		}
	}
	envp[n] = NULL;
}

/* Child side: never returns. */
static void
exec_child(const char *root, const char *path, char *const argv[],
    const char **envp, int in, int out)
{
	int null, fd;

	(void)setpgid(0, 0);
	/* The parent ignores SIGPIPE; an ignored signal survives execve. */
	(void)signal(SIGPIPE, SIG_DFL);
	null = open("/dev/null", O_WRONLY);
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || null < 0 ||
	    dup2(null, 2) < 0)
		_exit(127);
	for (fd = 3; fd < 1024; fd++)
		(void)close(fd);
	if (chdir(root) != 0)
		_exit(127);
	execve(path, argv, (char *const *)envp);
	_exit(127);
}

void
pgn_provider_run(const char *home, const char *root,
    const struct pgn_config *cfg, const struct pgn_provider_request *rq,
    long budget_ms, struct pgn_provider_result *r)
{
	static const struct timespec poll_pause = {0, 2000000};
	struct pgn_approval a;
	struct sigaction ign, old;
	struct pollfd pfd[2];
	struct pgn_buf out;
	const char *envp[32];
	unsigned char *key = NULL;
	char *req = NULL, chunk[4096];
	int in[2] = {-1, -1}, op[2] = {-1, -1}, status = 0, done = 0, np;
	int64_t start, deadline, left;
	size_t reqlen = 0, sent = 0;
	long limit;
	pid_t pid = -1, w;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	start = pgn_mono_ms();
	pgn_buf_init(&out, cfg->max_output);
	if (cfg->argc == 0) {
		r->status = PGN_PROVIDER_OFF;
		return;
	}
	if (pgn_provider_check(home, root, cfg, &a) != PGN_OK || !a.allowed) {
		r->status = PGN_PROVIDER_NOT_ALLOWED;
		pgn_errf(r->why, sizeof(r->why), "%s", a.why);
		pgn_approval_release(&a);
		return;
	}
	limit = cfg->timeout_ms < budget_ms ? cfg->timeout_ms : budget_ms;
	deadline = start + (limit > 0 ? limit : 0);
	req = request_json(rq);
	if (req == NULL || pipe(in) != 0 || pipe(op) != 0 ||
	    pgn_key_load(home, 0, &key, r->why, sizeof(r->why)) != PGN_OK) {
		r->status = PGN_PROVIDER_ERROR;
		goto out;
	}
	reqlen = strlen(req);
	build_env(envp, sizeof(envp) / sizeof(envp[0]));
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	pid = fork();
	if (pid == 0) {
		close(in[1]);
		close(op[0]);
		exec_child(root, a.path, cfg->argv, envp, in[0], op[1]);
	}
	if (pid < 0) {
		r->status = PGN_PROVIDER_ERROR;
		pgn_errf(r->why, sizeof(r->why), "fork: %s", strerror(errno));
		goto restore;
	}
	(void)setpgid(pid, pid);
	close(in[0]);
	close(op[1]);
	in[0] = op[1] = -1;
	(void)fcntl(in[1], F_SETFL, O_NONBLOCK);
	while (!done) {
		left = deadline - pgn_mono_ms();
		if (left <= 0) {
			r->status = PGN_PROVIDER_TIMEOUT;
			break;
		}
		np = 0;
		pfd[np].fd = op[0];
		pfd[np++].events = POLLIN;
		if (in[1] >= 0) {
			pfd[np].fd = in[1];
			pfd[np++].events = POLLOUT;
		}
		if (poll(pfd, (nfds_t)np, (int)left) < 0 && errno != EINTR)
			break;
		if (in[1] >= 0 && np == 2 &&
		    (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = write(in[1], req + sent, reqlen - sent);
			if (n > 0)
				sent += (size_t)n;
			if ((n < 0 && errno != EAGAIN) || sent == reqlen) {
				close(in[1]);
				in[1] = -1;
			}
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(op[0], chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				done = 1;
				break;
			}
			r->bytes += (size_t)n;
			pgn_buf_add(&out, chunk, (size_t)n);
			if (out.err != PGN_OK) {
				r->status = out.err == PGN_ETOOBIG ?
				    PGN_PROVIDER_TOO_BIG :
				    PGN_PROVIDER_ERROR;
				break;
			}
		}
	}
	/* Output closed: wait for the exit within what is left. */
	while (done && (w = waitpid(pid, &status, WNOHANG)) == 0) {
		if (pgn_mono_ms() >= deadline) {
			r->status = PGN_PROVIDER_TIMEOUT;
			done = 0;
			break;
		}
		nanosleep(&poll_pause, NULL);
	}
	/* The whole group goes, stray children included. */
	(void)kill(-pid, SIGKILL);
	if (!done || r->status != PGN_PROVIDER_OFF)
		(void)waitpid(pid, &status, 0);
	if (done && r->status == PGN_PROVIDER_OFF) {
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			r->status = PGN_PROVIDER_CRASHED;
			pgn_errf(r->why, sizeof(r->why),
			    WIFEXITED(status) ? "exit status %d" :
			                        "killed by signal %d",
			    WIFEXITED(status) ? WEXITSTATUS(status) :
			                        WTERMSIG(status));
		} else if (pgn_provider_validate(out.data ? out.data : "",
		               out.len, &r->context, r->why,
		               sizeof(r->why)) != PGN_OK) {
			r->status = PGN_PROVIDER_INVALID;
		} else {
			r->status = r->context[0] ? PGN_PROVIDER_OK :
			                            PGN_PROVIDER_EMPTY;
			pgn_fingerprint(key, r->context, strlen(r->context),
			    r->fingerprint);
		}
	}
restore:
	sigaction(SIGPIPE, &old, NULL);
out:
	if (r->status == PGN_PROVIDER_OFF)
		r->status = PGN_PROVIDER_ERROR;
	if (r->status != PGN_PROVIDER_OK && r->status != PGN_PROVIDER_EMPTY) {
		free(r->context);
		r->context = NULL;
	}
	if (in[0] >= 0)
		close(in[0]);
	if (in[1] >= 0)
		close(in[1]);
	if (op[0] >= 0)
		close(op[0]);
	if (op[1] >= 0)
		close(op[1]);
	if (out.data != NULL)
		sodium_memzero(out.data, out.cap);
	pgn_buf_release(&out);
	if (req != NULL) {
		sodium_memzero(req, reqlen);
		cJSON_free(req);
	}
	pgn_key_free(key);
	pgn_approval_release(&a);
	r->ms = (long)(pgn_mono_ms() - start);
}
