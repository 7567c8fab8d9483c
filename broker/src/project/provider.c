/*
 * The project's prompt-context provider: approval by a keyed MAC over
 * the project root, the provider config and the executable's content,
 * kept in the sealed state; a bounded run (no shell, own process group,
 * allow-listed environment, timeout and output caps); and strict
 * validation of what it prints.
 */
/* memfd_create, pipe2, close_range's syscall number, prctl: Linux. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <dirent.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#endif
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "pgn_int.h"
#include "pigeon/setup.h"

#define MAC_BYTES 32
#define HEX_BYTES (2 * MAC_BYTES + 1)

/*
 * In the provider: descriptor EXE_FD is its program (what a #!
 * interpreter opens as /dev/fd/3), REPORT_FD (close-on-exec) tells the
 * hook why an exec failed; nothing else above 2 is open.
 */
#define EXE_FD        3
#define REPORT_FD     4
#define FIRST_FREE_FD 5

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: an executable memfd, asked for */
#endif

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
		    "the provider resolves to '%s', outside the project", real);
		free(real);
		return PGN_EINVAL;
	}
	if (stat(real, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    access(real, X_OK) != 0) {
		pgn_errf(why, whylen,
		    "the provider '%s' is not an executable file", real);
		free(real);
		return PGN_EINVAL;
	}
	*path = real;
	return PGN_OK;
}

/*
 * Open the resolved program once: not a symbolic link now (realpath
 * resolved every link; one that appears since is a swap in progress), a
 * regular file with an execute bit, at most PGN_MAX_PROVIDER_EXE bytes.
 * Everything after this uses the descriptor, never the path again.
 */
static pgn_status
open_exe(const char *path, int *fd, char *why, size_t whylen)
{
	struct stat sb;

	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (*fd < 0) {
		pgn_errf(why, whylen, "cannot open the provider '%s': %s", path,
		    strerror(errno));
		return PGN_EINVAL;
	}
	if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (sb.st_mode & 0111) == 0) {
		pgn_errf(why, whylen,
		    "the provider '%s' is not an executable file", path);
		goto fail;
	}
	if (sb.st_size > PGN_MAX_PROVIDER_EXE) {
		pgn_errf(why, whylen, "the provider '%s' is over 16 MiB", path);
		goto fail;
	}
	return PGN_OK;
fail:
	close(*fd);
	*fd = -1;
	return PGN_EINVAL;
}

/*
 * A private, sealed, executable copy for the bytes about to be hashed
 * (Linux memfd), so that what runs is what was hashed even if the file
 * is rewritten in place after the check. -1 where there is none (no
 * memfd, vm.memfd_noexec=2, or no sealing): the caller then runs the
 * opened file itself.
 */
static int
copy_open(void)
{
#ifdef __linux__
	int fd;

	fd = memfd_create("pigeon-provider",
	    MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* a kernel before MFD_EXEC */
		fd = memfd_create("pigeon-provider",
		    MFD_CLOEXEC | MFD_ALLOW_SEALING);
	return fd;
#else
	return -1;
#endif
}

static int
copy_seal(int fd)
{
#ifdef __linux__
	return fcntl(fd, F_ADD_SEALS,
	    F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE);
#else
	(void)fd;
	return -1;
#endif
}

static int
write_all(int fd, const unsigned char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Hash the content of descriptor 'fd' (from offset 0), keyed (for the
 * MAC) and plain. With 'copy' >= 0 each byte hashed is also written to
 * it. '*script' says whether it starts with "#!".
 */
static pgn_status
hash_fd(const unsigned char *key, int fd, int copy, const char *path,
    char exe[HEX_BYTES], char digest[65], int *script, char *why, size_t whylen)
{
	crypto_generichash_state k, p;
	unsigned char buf[16384], d[32];
	size_t total = 0;
	ssize_t n;

	*script = 0;
	pgn_mac_start(&k, key, "pigeon.provider-exe/v1", MAC_BYTES);
	crypto_generichash_init(&p, NULL, 0, sizeof(d));
	for (;;) {
		n = pread(fd, buf, sizeof(buf), (off_t)total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (total == 0 && n >= 2 && buf[0] == '#' && buf[1] == '!')
			*script = 1;
		total += (size_t)n;
		if (total > PGN_MAX_PROVIDER_EXE)
			break;
		if (copy >= 0 && write_all(copy, buf, (size_t)n) != 0) {
			pgn_errf(why, whylen,
			    "cannot copy the provider '%s': %s", path,
			    strerror(errno));
			return PGN_EIO;
		}
		crypto_generichash_update(&k, buf, (size_t)n);
		crypto_generichash_update(&p, buf, (size_t)n);
	}
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
	struct pgn_err fe;
	char *plain = NULL;
	size_t len = 0;
	cJSON *root = NULL, *arr;
	pgn_status rc;

	*tampered = 0;
	rc = pgn_state_read(home, key, &plain, &len, &fe);
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
save_state(const char *home, const unsigned char *key, cJSON *state,
    struct pgn_err *err)
{
	char *text;
	pgn_status rc;

	text = cJSON_PrintUnformatted(state);
	if (text == NULL)
		return PGN_ENOMEM;
	rc = pgn_state_write(home, key, text, strlen(text), err);
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

/* The program to run: a descriptor holding exactly the bytes hashed. */
struct exe {
	int fd;     /* -1: none */
	int script; /* it starts with #!: an interpreter reads /dev/fd/3 */
};

/*
 * Resolve, open once and hash that descriptor; shared by check, allow
 * and run. With 'x', x->fd gets a descriptor of the hashed bytes (the
 * caller closes it): a sealed private copy, or the opened file itself.
 */
static pgn_status
prepare(const unsigned char *key, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a, struct digests *d,
    struct exe *x)
{
	int fd = -1, copy = -1, script = 0;
	pgn_status rc;

	if (x != NULL)
		x->fd = -1;
	if (cfg->argc == 0) {
		pgn_errf(a->why.msg, sizeof(a->why.msg), "%s",
		    cfg->provider_problem ? cfg->provider_problem :
		                            "no provider is configured");
		return PGN_EINVAL;
	}
	rc = resolve(root, cfg, &a->path, a->why.msg, sizeof(a->why.msg));
	if (rc == PGN_OK)
		rc = open_exe(a->path, &fd, a->why.msg, sizeof(a->why.msg));
	if (rc != PGN_OK)
		goto out;
	if (x != NULL)
		copy = copy_open();
	rc = hash_fd(key, fd, copy, a->path, d->exe, a->digest, &script,
	    a->why.msg, sizeof(a->why.msg));
	if (rc != PGN_OK)
		goto out;
	compute(key, root, cfg, d);
	if (x != NULL) {
		x->script = script;
		if (copy >= 0 && copy_seal(copy) == 0) {
			x->fd = copy;
			copy = -1;
		} else {
			x->fd = fd;
			fd = -1;
		}
	}
out:
	if (copy >= 0)
		close(copy);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* pgn_provider_check, and with 'x' the descriptor to run (see prepare). */
static pgn_status
check(const char *home, const char *root, const struct pgn_config *cfg,
    struct pgn_approval *a, struct exe *x)
{
	unsigned char *key = NULL;
	struct digests d;
	cJSON *state = NULL, *ap;
	const char *at;
	int tampered = 0;
	pgn_status rc;

	memset(a, 0, sizeof(*a));
	if (x != NULL)
		x->fd = -1;
	rc = pgn_key_load(home, 0, &key, &a->why);
	if (rc == PGN_ENOMEM)
		return rc;
	if (rc != PGN_OK) {
		if (rc == PGN_ENOTFOUND)
			pgn_err_hint(&a->why, rc, PGN_HINT_ALLOW, NULL,
			    "not allowed");
		return PGN_OK;
	}
	rc = prepare(key, root, cfg, a, &d, x);
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
		pgn_err_hint(&a->why, rc, PGN_HINT_ALLOW_AGAIN, NULL,
		    "the provider state failed to authenticate, so no approval counts");
	else if (ap == NULL)
		pgn_err_hint(&a->why, rc, PGN_HINT_ALLOW, NULL,
		    "not allowed for %s", root);
	else if (!field_eq(ap, "config", d.config))
		pgn_err_hint(&a->why, rc, PGN_HINT_REVIEW_ALLOW, NULL,
		    "withdrawn: the promptContext configuration changed since it was allowed");
	else if (!field_eq(ap, "exe", d.exe))
		pgn_err_hint(&a->why, rc, PGN_HINT_REVIEW_ALLOW, NULL,
		    "withdrawn: the provider program '%s' changed since it was allowed",
		    a->path);
	else if (!field_eq(ap, "mac", d.mac))
		pgn_err_hint(&a->why, rc, PGN_HINT_REALLOW, NULL,
		    "withdrawn: the approval does not match");
	else {
		a->allowed = 1;
		at = cJSON_GetStringValue(
		    cJSON_GetObjectItemCaseSensitive(ap, "at"));
		pgn_errf(a->why.msg, sizeof(a->why.msg), "allowed at %s",
		    at != NULL ? at : "an unknown time");
	}
out:
	if (x != NULL && x->fd >= 0 && (rc != PGN_OK || !a->allowed)) {
		close(x->fd);
		x->fd = -1;
	}
	cJSON_Delete(state);
	sodium_memzero(&d, sizeof(d));
	pgn_key_free(key);
	return rc;
}

pgn_status
pgn_provider_check(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a)
{
	return check(home, root, cfg, a, NULL);
}

pgn_status
pgn_provider_allow(const char *home, const char *root,
    const struct pgn_config *cfg, struct pgn_approval *a, struct pgn_err *err)
{
	unsigned char *key = NULL;
	struct digests d;
	cJSON *state = NULL, *ap = NULL, *arr;
	char at[32];
	int tampered = 0;
	pgn_status rc;

	memset(a, 0, sizeof(*a));
	rc = pgn_key_load(home, 1, &key, err);
	if (rc != PGN_OK)
		return rc;
	rc = prepare(key, root, cfg, a, &d, NULL);
	if (rc != PGN_OK) {
		*err = a->why;
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
		rc = pgn_err_set(err, PGN_ETOOBIG,
		    "%d projects already have an approved provider: deny some first",
		    PGN_MAX_APPROVALS);
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
	rc = save_state(home, key, state, err);
	if (rc == PGN_OK) {
		a->allowed = 1;
		pgn_errf(a->why.msg, sizeof(a->why.msg), "allowed at %s", at);
	}
out:
	cJSON_Delete(state);
	sodium_memzero(&d, sizeof(d));
	pgn_key_free(key);
	return rc;
}

pgn_status
pgn_provider_deny(const char *home, const char *root, int *removed,
    struct pgn_err *err)
{
	unsigned char *key = NULL;
	cJSON *state = NULL, *ap;
	int tampered = 0;
	pgn_status rc;

	*removed = 0;
	rc = pgn_key_load(home, 0, &key, err);
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
		rc = save_state(home, key, state, err);
out:
	cJSON_Delete(state);
	pgn_key_free(key);
	return rc;
}

/* ---- output validation ---------------------------------------------- */

pgn_status
pgn_provider_validate(const char *out, size_t len, char **context,
    struct pgn_err *err)
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
		pgn_err_set(err, PGN_EINVAL, "output holds a NUL byte");
		return PGN_EINVAL;
	}
	/* cJSON skips a BOM and any byte below '!' before the value. */
	for (p = out; p < out + len &&
	     (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r');
	     p++)
		;
	if (p < out + len &&
	    ((unsigned char)*p < 0x20 || (unsigned char)*p == 0xef)) {
		pgn_err_set(err, PGN_EINVAL,
		    "output has text before the JSON object");
		return PGN_EINVAL;
	}
	/* "\u0000" would cut the decoded string short: refuse it. */
	if (pgn_json_nul_escape(out, len)) {
		pgn_err_set(err, PGN_EINVAL,
		    "context holds a control character");
		return PGN_EINVAL;
	}
	copy = pgn_strndup(out, len);
	if (copy == NULL)
		return PGN_ENOMEM;
	root = cJSON_ParseWithLengthOpts(copy, len, &end, 0);
	if (root == NULL) {
		pgn_err_set(err, PGN_EINVAL, "output is not valid JSON");
		goto out;
	}
	for (p = end; p < copy + len; p++) {
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
			pgn_err_set(err, PGN_EINVAL,
			    "output has text after the JSON object");
			goto out;
		}
	}
	if (!cJSON_IsObject(root)) {
		pgn_err_set(err, PGN_EINVAL, "output is not a JSON object");
		goto out;
	}
	n = 0;
	cJSON_ArrayForEach(it, root)
	{
		if (strcmp(it->string, "schema") != 0 &&
		    strcmp(it->string, "context") != 0) {
			pgn_err_set(err, PGN_EINVAL,
			    "output has an unknown key");
			goto out;
		}
		n++;
	}
	sch = cJSON_GetObjectItemCaseSensitive(root, "schema");
	ctx = cJSON_GetObjectItemCaseSensitive(root, "context");
	if (n != 2 || !cJSON_IsString(sch) || !cJSON_IsString(ctx) ||
	    strcmp(sch->valuestring, schema) != 0) {
		pgn_err_set(err, PGN_EINVAL,
		    "output must be exactly {\"schema\":"
		    "\"%s\",\"context\":STRING}",
		    schema);
		goto out;
	}
	n = strlen(ctx->valuestring);
	if (!pgn_utf8_valid(ctx->valuestring, n)) {
		pgn_err_set(err, PGN_EINVAL, "context is not valid UTF-8");
		goto out;
	}
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)ctx->valuestring[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
			pgn_err_set(err, PGN_EINVAL,
			    "context holds a control character");
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

static void
close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

/*
 * Close every descriptor from 'lo' up, whatever its number (a hook may
 * hold one past 1023): close_range (Linux 5.9), else each entry of
 * /proc/self/fd, else every number below the RLIMIT_NOFILE hard limit.
 * Runs in a forked child only.
 */
static void
close_from(int lo)
{
	struct rlimit rl;
	long fd, max = 1024;
#ifdef __linux__
	struct dirent *de;
	DIR *dir;
	char *end;
	long n;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0) == 0)
		return;
#endif
	dir = opendir("/proc/self/fd");
	if (dir != NULL) {
		while ((de = readdir(dir)) != NULL) {
			n = strtol(de->d_name, &end, 10);
			if (*end == '\0' && end != de->d_name && n >= lo &&
			    n != dirfd(dir))
				(void)close((int)n);
		}
		closedir(dir);
		return;
	}
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY)
		max = (long)rl.rlim_max;
	else
		max = sysconf(_SC_OPEN_MAX) > max ? sysconf(_SC_OPEN_MAX) : max;
	for (fd = lo; fd < max; fd++)
		(void)close((int)fd);
}

static void
default_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	/* The parent ignores SIGPIPE; an ignored signal survives execve. */
	(void)signal(SIGPIPE, SIG_DFL);
}

/*
 * The guard: leader of the provider's process group, forked by the
 * hook before the provider. It holds nothing but the read end of a pipe
 * whose write end only the hook holds: end of file (or the parent-death
 * signal) means the hook is gone, however it went (SIGKILL, _exit from
 * its deadline timer), and the whole group is killed, the guard with
 * it. Never returns.
 */
static void
on_parent_death(int sig)
{
	(void)sig;
	(void)kill(0, SIGKILL);
	_exit(0);
}

static void
guard(int life, pid_t hook)
{
	char c;
	ssize_t n;

	(void)setpgid(0, 0);
	(void)signal(SIGTERM, on_parent_death);
	default_signals();
	if (dup2(life, 0) < 0)
		(void)kill(0, SIGKILL);
	close_from(1);
#ifdef __linux__
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
	/* The hook may have died before the prctl: then nobody signals. */
	if (getppid() != hook)
		(void)kill(0, SIGKILL);
	for (;;) {
		n = read(0, &c, 1);
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	(void)kill(0, SIGKILL);
	_exit(0);
}

/* Tell the hook why the provider did not start, then end. */
static void
child_fail(int report)
{
	int e = errno;

	if (write(report, &e, sizeof(e)) < 0) {
		/* the hook sees exit status 127 then */
	}
	_exit(127);
}

/*
 * The provider's side: join the guard's group, die with the hook, set
 * up 0, 1, 2 and EXE_FD, close everything else, and execute the
 * descriptor whose bytes were approved. Never returns; never executes
 * the path.
 */
static void
exec_child(const char *root, int exe, int script, char *const argv[],
    const char **envp, int in, int out, int report, pid_t group, pid_t hook)
{
	int src[REPORT_FD + 1], tmp[REPORT_FD + 1], i;

	if (setpgid(0, group) != 0)
		child_fail(report);
#ifdef __linux__
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	if (getppid() != hook)
		_exit(127);
	default_signals();
	src[0] = in;
	src[1] = out;
	src[2] = open("/dev/null", O_WRONLY);
	src[EXE_FD] = exe;
	src[REPORT_FD] = report;
	if (src[2] < 0)
		child_fail(report);
	/* Above every source first, so no dup2 below overwrites one. */
	for (i = 0; i <= REPORT_FD; i++) {
		tmp[i] = fcntl(src[i], F_DUPFD, FIRST_FREE_FD + REPORT_FD + 1);
		if (tmp[i] < 0)
			child_fail(report);
	}
	for (i = 0; i <= REPORT_FD; i++) {
		if (dup2(tmp[i], i) < 0)
			child_fail(REPORT_FD < i ? report : tmp[REPORT_FD]);
	}
	close_from(FIRST_FREE_FD);
	/*
	 * A #! script is read by its interpreter from /dev/fd/3, so that
	 * descriptor must survive the exec; a binary needs nothing.
	 */
	if (fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(EXE_FD, F_SETFD, script ? 0 : FD_CLOEXEC) != 0)
		child_fail(REPORT_FD);
	if (chdir(root) != 0)
		child_fail(REPORT_FD);
	fexecve(EXE_FD, argv, (char *const *)envp);
	child_fail(REPORT_FD);
}

/* After the provider ended: the errno of a failed exec, or 0. */
static int
exec_error(int report)
{
	int e = 0;

	if (read(report, &e, sizeof(e)) != (ssize_t)sizeof(e))
		return 0;
	return e;
}

/* One run of the provider: its pipes, processes and output so far. */
struct run {
	int in[2], op[2], life[2],
	    rep[2];           /* stdin, stdout, guard, exec report */
	pid_t pid, grd, hook; /* the provider, its guard, us */
	char *req;            /* the request, written to stdin */
	size_t reqlen, sent;
	struct pgn_buf out; /* what it printed, up to cfg->max_output */
	int64_t deadline;   /* pgn_mono_ms() past which it is killed */
	int status;         /* its wait status */
	int done;           /* its output ended before the deadline */
};

/*
 * Start the provider in a process group of its own, led by a guard
 * that kills the group if we die: the guard, then the provider under
 * it, with the request's pipe on stdin. Returns 0, or -1 with r->status
 * and r->why set.
 */
static int
run_spawn(const char *root, const struct pgn_config *cfg, const struct exe *x,
    const char **envp, struct run *u, struct pgn_provider_result *r)
{
	u->grd = fork();
	if (u->grd == 0)
		guard(u->life[0], u->hook);
	if (u->grd < 0) {
		r->status = PGN_PROVIDER_ERROR;
		pgn_errf(r->why.msg, sizeof(r->why.msg), "fork: %s",
		    strerror(errno));
		return -1;
	}
	(void)setpgid(u->grd, u->grd);
	close(u->life[0]);
	u->life[0] = -1;
	u->pid = fork();
	if (u->pid == 0)
		exec_child(root, x->fd, x->script, cfg->argv, envp, u->in[0],
		    u->op[1], u->rep[1], u->grd, u->hook);
	if (u->pid < 0) {
		r->status = PGN_PROVIDER_ERROR;
		pgn_errf(r->why.msg, sizeof(r->why.msg), "fork: %s",
		    strerror(errno));
		return -1;
	}
	(void)setpgid(u->pid, u->grd);
	close(u->in[0]);
	close(u->op[1]);
	close(u->rep[1]);
	u->in[0] = u->op[1] = u->rep[1] = -1;
	(void)fcntl(u->in[1], F_SETFL, O_NONBLOCK);
	return 0;
}

/*
 * Feed the request and read the output until the output ends, the
 * deadline passes or the output is over its bound (r->status says which
 * of the last two); after the end, wait for the exit within the time
 * left. u->done says the output ended and the provider exited in time.
 */
static void
run_poll(struct run *u, struct pgn_provider_result *r)
{
	static const struct timespec poll_pause = {0, 2000000};
	struct pollfd pfd[2];
	char chunk[4096];
	int64_t left;
	ssize_t n;
	int np;

	while (!u->done) {
		left = u->deadline - pgn_mono_ms();
		if (left <= 0) {
			r->status = PGN_PROVIDER_TIMEOUT;
			break;
		}
		np = 0;
		pfd[np].fd = u->op[0];
		pfd[np++].events = POLLIN;
		if (u->in[1] >= 0) {
			pfd[np].fd = u->in[1];
			pfd[np++].events = POLLOUT;
		}
		if (poll(pfd, (nfds_t)np, (int)left) < 0 && errno != EINTR)
			break;
		if (u->in[1] >= 0 && np == 2 &&
		    (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
			n = write(u->in[1], u->req + u->sent,
			    u->reqlen - u->sent);
			if (n > 0)
				u->sent += (size_t)n;
			if ((n < 0 && errno != EAGAIN) ||
			    u->sent == u->reqlen) {
				close(u->in[1]);
				u->in[1] = -1;
			}
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(u->op[0], chunk, sizeof(chunk));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				u->done = 1;
				break;
			}
			r->bytes += (size_t)n;
			pgn_buf_add(&u->out, chunk, (size_t)n);
			if (u->out.err != PGN_OK) {
				r->status = u->out.err == PGN_ETOOBIG ?
				    PGN_PROVIDER_TOO_BIG :
				    PGN_PROVIDER_ERROR;
				break;
			}
		}
	}
	/* Output closed: wait for the exit within what is left. */
	while (u->done && waitpid(u->pid, &u->status, WNOHANG) == 0) {
		if (pgn_mono_ms() >= u->deadline) {
			r->status = PGN_PROVIDER_TIMEOUT;
			u->done = 0;
			break;
		}
		nanosleep(&poll_pause, NULL);
	}
}

/*
 * Kill what is left of the group and say what the run was: an exec
 * that failed, a crash, output that does not validate, or the context
 * (fingerprinted with 'key').
 */
static void
run_classify(struct run *u, const unsigned char *key,
    struct pgn_provider_result *r)
{
	int e;

	/* The whole group goes, guard and stray children included. */
	(void)kill(-u->grd, SIGKILL);
	if (!u->done || r->status != PGN_PROVIDER_OFF)
		(void)waitpid(u->pid, &u->status, 0);
	e = exec_error(u->rep[0]);
	if (e != 0) {
		r->status = PGN_PROVIDER_ERROR;
		pgn_errf(r->why.msg, sizeof(r->why.msg),
		    "cannot execute the provider from its open file: %s (check its #! line; /proc must be mounted for a script)",
		    strerror(e));
	} else if (u->done && r->status == PGN_PROVIDER_OFF) {
		if (!WIFEXITED(u->status) || WEXITSTATUS(u->status) != 0) {
			r->status = PGN_PROVIDER_CRASHED;
			pgn_errf(r->why.msg, sizeof(r->why.msg),
			    WIFEXITED(u->status) ? "exit status %d" :
			                           "killed by signal %d",
			    WIFEXITED(u->status) ? WEXITSTATUS(u->status) :
			                           WTERMSIG(u->status));
		} else if (pgn_provider_validate(u->out.data ? u->out.data : "",
		               u->out.len, &r->context, &r->why) != PGN_OK) {
			r->status = PGN_PROVIDER_INVALID;
		} else {
			r->status = r->context[0] ? PGN_PROVIDER_OK :
			                            PGN_PROVIDER_EMPTY;
			pgn_fingerprint(key, r->context, strlen(r->context),
			    r->fingerprint);
		}
	}
}

void
pgn_provider_run(const char *home, const char *root,
    const struct pgn_config *cfg, const struct pgn_provider_request *rq,
    long budget_ms, struct pgn_provider_result *r)
{
	struct pgn_approval a;
	struct sigaction ign, old;
	struct exe x = {-1, 0};
	struct run u;
	const char *envp[32];
	unsigned char *key = NULL;
	int64_t start;
	long limit;

	memset(r, 0, sizeof(*r));
	memset(&u, 0, sizeof(u));
	u.in[0] = u.in[1] = u.op[0] = u.op[1] = -1;
	u.life[0] = u.life[1] = u.rep[0] = u.rep[1] = -1;
	u.pid = u.grd = -1;
	u.hook = getpid();
	start = pgn_mono_ms();
	pgn_buf_init(&u.out, cfg->max_output);
	if (cfg->argc == 0) {
		r->status = PGN_PROVIDER_OFF;
		return;
	}
	if (check(home, root, cfg, &a, &x) != PGN_OK || !a.allowed) {
		r->status = PGN_PROVIDER_NOT_ALLOWED;
		r->why = a.why;
		pgn_approval_release(&a);
		return;
	}
	limit = cfg->timeout_ms < budget_ms ? cfg->timeout_ms : budget_ms;
	u.deadline = start + (limit > 0 ? limit : 0);
	u.req = request_json(rq);
	if (u.req == NULL || pipe2(u.in, O_CLOEXEC) != 0 ||
	    pipe2(u.op, O_CLOEXEC) != 0 || pipe2(u.life, O_CLOEXEC) != 0 ||
	    pipe2(u.rep, O_CLOEXEC) != 0 ||
	    pgn_key_load(home, 0, &key, &r->why) != PGN_OK) {
		r->status = PGN_PROVIDER_ERROR;
		goto out;
	}
	u.reqlen = strlen(u.req);
	build_env(envp, sizeof(envp) / sizeof(envp[0]));
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &old);
	if (run_spawn(root, cfg, &x, envp, &u, r) == 0) {
		run_poll(&u, r);
		run_classify(&u, key, r);
	}
	if (u.grd > 0) {
		/* Reaped only now: until then its pid cannot be reused. */
		(void)kill(-u.grd, SIGKILL);
		(void)waitpid(u.grd, NULL, 0);
	}
	sigaction(SIGPIPE, &old, NULL);
out:
	if (r->status == PGN_PROVIDER_OFF)
		r->status = PGN_PROVIDER_ERROR;
	if (r->status != PGN_PROVIDER_OK && r->status != PGN_PROVIDER_EMPTY) {
		free(r->context);
		r->context = NULL;
	}
	close_pair(u.in);
	close_pair(u.op);
	close_pair(u.life);
	close_pair(u.rep);
	if (x.fd >= 0)
		close(x.fd);
	if (u.out.data != NULL)
		sodium_memzero(u.out.data, u.out.cap);
	pgn_buf_release(&u.out);
	if (u.req != NULL) {
		sodium_memzero(u.req, u.reqlen);
		cJSON_free(u.req);
	}
	pgn_key_free(key);
	pgn_approval_release(&a);
	r->ms = (long)(pgn_mono_ms() - start);
}
