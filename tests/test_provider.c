/*
 * Unit tests of the provider's secrets and approval: the key in
 * $PIGEON_HOME/key (created 0600, reused, refused when the wrong size
 * or readable by others), the sealed provider.state (round trip; any
 * flipped byte or another key is PGN_ETAMPER), keyed fingerprints; the
 * approval of a real script in a temp project (absent until allowed,
 * withdrawn by any change to the config, the program, the root, the
 * key or the state, removed by deny, refused for a program outside the
 * project); pgn_provider_validate on every shape of bad output; and a
 * few bounded runs of pgn_provider_run.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "harness.h"
#include "pgn_int.h"
#include "pigeon/setup.h"

#define ERRLEN PGN_MAX_ERRMSG

static char home[PATH_MAX]; /* the state directory: key, provider.state */
static char root[PATH_MAX]; /* the project */
static char err[ERRLEN];
static struct pgn_err perr; /* the provider's allow and deny */
static struct pgn_err kerr; /* the key and state functions' */

/* A valid provider script; its output, without the newline. */
#define OUTPUT                                                                 \
	"{\"schema\":\"pigeon.prompt-context/v1\",\"context\":"                \
	"\"from the provider\"}"
static const char script[] = "#!/bin/sh\ncat >/dev/null\n"
                             "printf '%s\\n' '" OUTPUT "'\n";
static const char config[] =
    "{\"promptContext\":{\"command\":"
    "[\"scripts/ctx\",\"--brief\"],\"timeoutMs\":900}}";

/* ---- helpers ------------------------------------------------------- */

static void
make_home(void)
{
	H_PATH(home, "home");
	h_mkdir(home);
}

static void
in_home(char *out, size_t len, const char *name)
{
	h_join(out, len, home, name);
}

/* Write 'data' to 'dir'/'name' with mode 'mode'. */
static void
put(const char *dir, const char *name, const char *data, size_t len,
    mode_t mode)
{
	char path[PATH_MAX];

	h_join(path, sizeof(path), dir, name);
	h_write_file(path, data, len);
	REQUIRE(chmod(path, mode) == 0);
}

static void
put_script(const char *dir, const char *text)
{
	put(dir, "scripts/ctx", text, strlen(text), 0755);
}

static void
put_config(const char *dir, const char *text)
{
	put(dir, ".pigeon/config.json", text, strlen(text), 0644);
}

/* A project at h_tmp/'name': .pigeon/config.json and scripts/ctx. */
static void
make_project_at(char *out, size_t len, const char *name)
{
	char path[PATH_MAX];

	h_join(out, len, h_tmp, name);
	h_mkdir(out);
	h_join(path, sizeof(path), out, ".pigeon");
	h_mkdir(path);
	h_join(path, sizeof(path), out, "scripts");
	h_mkdir(path);
	put_config(out, config);
	put_script(out, script);
}

static void
make_project(void)
{
	make_home();
	make_project_at(root, sizeof(root), "proj");
}

static void
load(const char *dir, struct pgn_config *c)
{
	REQUIRE(pgn_config_load(dir, c) == PGN_OK);
	REQUIRE(c->problem == NULL && c->provider_problem == NULL);
	REQUIRE(c->argc > 0);
}

/* pgn_provider_check of 'dir''s current config: the approval. */
static void
check_dir(const char *dir, struct pgn_approval *a)
{
	struct pgn_config c;

	load(dir, &c);
	REQUIRE(pgn_provider_check(home, dir, &c, a) == PGN_OK);
	pgn_config_release(&c);
}

/* Allowed now? (prints why not when 'want' differs) */
static int
allowed(const char *dir, int want)
{
	struct pgn_approval a;
	int got;

	check_dir(dir, &a);
	got = a.allowed;
	if (got != want)
		printf("  allowed %d, want %d: %s\n", got, want, a.why.msg);
	pgn_approval_release(&a);
	return got;
}

/* Not allowed, and why holds 'text'. */
static int
withdrawn(const char *dir, const char *text)
{
	struct pgn_approval a;
	int ok;

	check_dir(dir, &a);
	ok = CHECK_INT(a.allowed, 0) && CHECK_CONTAINS(a.why.msg, text);
	pgn_approval_release(&a);
	return ok;
}

static void
allow_dir(const char *dir)
{
	struct pgn_config c;
	struct pgn_approval a;
	pgn_status rc;

	load(dir, &c);
	rc = pgn_provider_allow(home, dir, &c, &a, &perr);
	if (!CHECK_INT(rc, PGN_OK))
		printf("  allow: %s\n", perr.msg);
	CHECK_INT(a.allowed, 1);
	pgn_approval_release(&a);
	pgn_config_release(&c);
}

/* Flip bits 'mask' of byte 'off' of 'path'. */
static void
flip(const char *path, size_t off, unsigned char mask)
{
	char *data;
	size_t len;

	data = h_read_file(path, &len);
	REQUIRE(data != NULL && off < len);
	data[off] = (char)((unsigned char)data[off] ^ mask);
	h_write_file(path, data, len);
	free(data);
}

static mode_t
mode_of(const char *path)
{
	struct stat sb;

	REQUIRE(stat(path, &sb) == 0);
	return sb.st_mode & 07777;
}

/* A fresh random 32-byte key file at 'path', 0600. */
static void
random_key(const char *path)
{
	unsigned char k[PGN_KEY_BYTES];

	randombytes_buf(k, sizeof(k));
	h_write_file(path, k, sizeof(k));
	REQUIRE(chmod(path, 0600) == 0);
}

/* Load the key of 'home', which must exist. */
static unsigned char *
key_of(const char *dir)
{
	unsigned char *key = NULL;

	REQUIRE(pgn_key_load(dir, 0, &key, &kerr) == PGN_OK);
	return key;
}

/* ---- the key -------------------------------------------------------- */

static void
test_key_is_created_32_bytes_0600_when_asked_and_reused(void)
{
	unsigned char *k1 = NULL, *k2 = NULL, *k3 = NULL;
	char path[PATH_MAX];
	char *data;
	size_t len;

	make_home();
	in_home(path, sizeof(path), "key");
	REQUIRE(pgn_key_load(home, 1, &k1, &kerr) == PGN_OK);
	REQUIRE(k1 != NULL);
	CHECK_INT(mode_of(path), 0600);
	data = h_read_file(path, &len);
	REQUIRE(data != NULL);
	CHECK_INT(len, PGN_KEY_BYTES);
	CHECK(memcmp(data, k1, PGN_KEY_BYTES) == 0);
	/* Reused, with or without create. */
	CHECK_INT(pgn_key_load(home, 1, &k2, &kerr), PGN_OK);
	CHECK_INT(pgn_key_load(home, 0, &k3, &kerr), PGN_OK);
	CHECK(k2 != NULL && memcmp(k1, k2, PGN_KEY_BYTES) == 0);
	CHECK(k3 != NULL && memcmp(k1, k3, PGN_KEY_BYTES) == 0);
	free(data);
	data = h_read_file(path, &len);
	CHECK(data != NULL && memcmp(data, k1, PGN_KEY_BYTES) == 0);
	free(data);
	/* No temp file is left behind. */
	in_home(path, sizeof(path), ".key.XXXXXX");
	CHECK(!h_exists(path));
	pgn_key_free(k1);
	pgn_key_free(k2);
	pgn_key_free(k3);
	pgn_key_free(NULL);
}

static void
test_two_homes_get_different_keys(void)
{
	unsigned char *k1 = NULL, *k2 = NULL;
	char other[PATH_MAX];

	make_home();
	H_PATH(other, "home2");
	h_mkdir(other);
	REQUIRE(pgn_key_load(home, 1, &k1, &kerr) == PGN_OK);
	REQUIRE(pgn_key_load(other, 1, &k2, &kerr) == PGN_OK);
	CHECK(memcmp(k1, k2, PGN_KEY_BYTES) != 0);
	pgn_key_free(k1);
	pgn_key_free(k2);
}

static void
test_key_absent_without_create_is_not_found(void)
{
	unsigned char *key = (unsigned char *)err;
	char path[PATH_MAX];

	make_home();
	CHECK_INT(pgn_key_load(home, 0, &key, &kerr), PGN_ENOTFOUND);
	CHECK(key == NULL);
	CHECK_CONTAINS(kerr.msg, "no key");
	in_home(path, sizeof(path), "key");
	CHECK(!h_exists(path));
}

static void
test_key_of_the_wrong_size_is_refused_and_kept(void)
{
	static const size_t sizes[] = {0, 1, 31, 33, 64};
	unsigned char bytes[64], *key;
	char path[PATH_MAX], *data;
	size_t i, len;

	make_home();
	in_home(path, sizeof(path), "key");
	memset(bytes, 'k', sizeof(bytes));
	for (i = 0; i < H_COUNT(sizes); i++) {
		h_write_file(path, bytes, sizes[i]);
		REQUIRE(chmod(path, 0600) == 0);
		key = (unsigned char *)err;
		pgn_err_clear(&kerr);
		CHECK_INT(pgn_key_load(home, 1, &key, &kerr), PGN_EINVAL);
		CHECK(key == NULL);
		CHECK_CONTAINS(kerr.msg, "is not a 32-byte file");
		/* Not replaced: approvals made with it would be lost. */
		data = h_read_file(path, &len);
		CHECK(data != NULL && len == sizes[i]);
		free(data);
	}
}

static void
test_key_with_group_or_other_bits_is_refused(void)
{
	static const mode_t modes[] = {0640, 0604, 0620, 0602, 0610, 0601, 0660,
	    0644, 0666, 0777};
	unsigned char *key;
	char path[PATH_MAX];
	size_t i;

	make_home();
	in_home(path, sizeof(path), "key");
	random_key(path);
	for (i = 0; i < H_COUNT(modes); i++) {
		REQUIRE(chmod(path, modes[i]) == 0);
		key = (unsigned char *)err;
		pgn_err_clear(&kerr);
		if (!CHECK_INT(pgn_key_load(home, 1, &key, &kerr), PGN_EINVAL))
			printf("  mode %o\n", (unsigned)modes[i]);
		CHECK(key == NULL);
		CHECK_CONTAINS(kerr.msg, "readable by others");
		CHECK_INT(mode_of(path), modes[i]); /* left as it was */
	}
	/* Owner bits alone are fine. */
	REQUIRE(chmod(path, 0400) == 0);
	CHECK_INT(pgn_key_load(home, 0, &key, &kerr), PGN_OK);
	pgn_key_free(key);
	REQUIRE(chmod(path, 0600) == 0);
}

static void
test_key_that_is_a_symlink_or_a_directory_is_refused(void)
{
	unsigned char *key;
	char path[PATH_MAX], real[PATH_MAX];

	make_home();
	H_PATH(real, "real-key");
	random_key(real);
	in_home(path, sizeof(path), "key");
	REQUIRE(symlink(real, path) == 0);
	key = (unsigned char *)err;
	CHECK(pgn_key_load(home, 1, &key, &kerr) != PGN_OK);
	CHECK(key == NULL);
	REQUIRE(unlink(path) == 0);
	h_mkdir(path);
	key = (unsigned char *)err;
	CHECK_INT(pgn_key_load(home, 1, &key, &kerr), PGN_EINVAL);
	CHECK(key == NULL);
}

/* ---- the sealed state ---------------------------------------------- */

static void
test_state_round_trip(void)
{
	static const char plain[] =
	    "{\"approvals\":[{\"root\":\"/secret/p\"}]}";
	unsigned char *key;
	char path[PATH_MAX], *out = NULL, *file1, *file2;
	size_t len = 99, flen1, flen2;

	make_home();
	REQUIRE(pgn_key_load(home, 1, &key, &kerr) == PGN_OK);
	/* No state yet: nothing, and no error. */
	CHECK_INT(pgn_state_read(home, key, &out, &len, &kerr), PGN_OK);
	CHECK(out == NULL);
	CHECK_INT(len, 0);
	REQUIRE(pgn_state_write(home, key, plain, sizeof(plain) - 1, &kerr) ==
	    PGN_OK);
	in_home(path, sizeof(path), "provider.state");
	CHECK_INT(mode_of(path), 0600);
	file1 = h_read_file(path, &flen1);
	REQUIRE(file1 != NULL);
	/* magic, nonce, tag, ciphertext: and no plaintext in sight. */
	CHECK_INT(flen1,
	    4 + crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES +
	        sizeof(plain) - 1);
	CHECK(memcmp(file1, "PGS1", 4) == 0);
	CHECK(strstr(file1 + 4, "approvals") == NULL);
	CHECK(strstr(file1 + 4, "/secret/p") == NULL);
	REQUIRE(pgn_state_read(home, key, &out, &len, &kerr) == PGN_OK);
	REQUIRE(out != NULL);
	CHECK_INT(len, sizeof(plain) - 1);
	CHECK_STR(out, plain);
	pgn_secret_free(out, len);
	/* Sealed again: a fresh nonce, so other bytes, same plaintext. */
	REQUIRE(pgn_state_write(home, key, plain, sizeof(plain) - 1, &kerr) ==
	    PGN_OK);
	file2 = h_read_file(path, &flen2);
	REQUIRE(file2 != NULL);
	CHECK_INT(flen2, flen1);
	CHECK(memcmp(file1, file2, flen1) != 0);
	REQUIRE(pgn_state_read(home, key, &out, &len, &kerr) == PGN_OK);
	CHECK_STR(out, plain);
	pgn_secret_free(out, len);
	/* An empty plaintext round-trips too. */
	REQUIRE(pgn_state_write(home, key, "", 0, &kerr) == PGN_OK);
	REQUIRE(pgn_state_read(home, key, &out, &len, &kerr) == PGN_OK);
	CHECK(out != NULL && len == 0 && out[0] == '\0');
	pgn_secret_free(out, len);
	free(file1);
	free(file2);
	pgn_key_free(key);
}

static void
test_state_over_its_cap_is_not_written(void)
{
	unsigned char *key;
	char path[PATH_MAX], *big;

	make_home();
	REQUIRE(pgn_key_load(home, 1, &key, &kerr) == PGN_OK);
	big = calloc(1, PGN_MAX_STATE);
	REQUIRE(big != NULL);
	CHECK_INT(pgn_state_write(home, key, big, PGN_MAX_STATE, &kerr),
	    PGN_ETOOBIG);
	in_home(path, sizeof(path), "provider.state");
	CHECK(!h_exists(path));
	free(big);
	pgn_key_free(key);
}

static void
test_state_with_any_byte_flipped_is_tampered(void)
{
	static const char plain[] = "{\"approvals\":[]}";
	static const unsigned char masks[] = {0x01, 0x80, 0xff};
	unsigned char *key;
	char path[PATH_MAX], *out, *orig;
	size_t len, flen, off, m, tampered = 0;
	pgn_status rc;

	make_home();
	REQUIRE(pgn_key_load(home, 1, &key, &kerr) == PGN_OK);
	REQUIRE(pgn_state_write(home, key, plain, sizeof(plain) - 1, &kerr) ==
	    PGN_OK);
	in_home(path, sizeof(path), "provider.state");
	orig = h_read_file(path, &flen);
	REQUIRE(orig != NULL);
	/* Every byte: magic, nonce, tag and ciphertext alike. */
	for (off = 0; off < flen; off++) {
		for (m = 0; m < H_COUNT(masks); m++) {
			flip(path, off, masks[m]);
			out = (char *)path;
			len = 7;
			pgn_err_clear(&kerr);
			rc = pgn_state_read(home, key, &out, &len, &kerr);
			if (CHECK_INT(rc, PGN_ETAMPER) && CHECK(out == NULL) &&
			    CHECK_INT(len, 0))
				tampered++;
			else
				printf("  byte %zu mask %02x\n", off,
				    (unsigned)masks[m]);
			CHECK_CONTAINS(kerr.msg,
			    "failed to decrypt or authenticate");
			h_write_file(path, orig, flen);
		}
	}
	CHECK_INT(tampered, flen * H_COUNT(masks));
	/* Cut short, grown, emptied, or only the magic. */
	h_write_file(path, orig, flen - 1);
	CHECK_INT(pgn_state_read(home, key, &out, &len, &kerr), PGN_ETAMPER);
	h_write_file(path, orig,
	    4 + crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES - 1);
	CHECK_INT(pgn_state_read(home, key, &out, &len, &kerr), PGN_ETAMPER);
	h_write_file(path, "PGS1", 4);
	CHECK_INT(pgn_state_read(home, key, &out, &len, &kerr), PGN_ETAMPER);
	h_write_file(path, "", 0);
	CHECK_INT(pgn_state_read(home, key, &out, &len, &kerr), PGN_ETAMPER);
	{
		char *grown = malloc(flen + 1);

		REQUIRE(grown != NULL);
		memcpy(grown, orig, flen);
		grown[flen] = 'x';
		h_write_file(path, grown, flen + 1);
		free(grown);
	}
	CHECK_INT(pgn_state_read(home, key, &out, &len, &kerr), PGN_ETAMPER);
	CHECK(out == NULL);
	/* Restored: it reads again. */
	h_write_file(path, orig, flen);
	CHECK_INT(pgn_state_read(home, key, &out, &len, &kerr), PGN_OK);
	CHECK_STR(out, plain);
	pgn_secret_free(out, len);
	free(orig);
	pgn_key_free(key);
}

static void
test_state_sealed_under_another_key_is_tampered(void)
{
	static const char plain[] = "{\"approvals\":[]}";
	unsigned char *k1, *k2;
	char other[PATH_MAX], *out = NULL;
	size_t len = 0;

	make_home();
	H_PATH(other, "home2");
	h_mkdir(other);
	REQUIRE(pgn_key_load(home, 1, &k1, &kerr) == PGN_OK);
	REQUIRE(pgn_key_load(other, 1, &k2, &kerr) == PGN_OK);
	REQUIRE(pgn_state_write(other, k2, plain, sizeof(plain) - 1, &kerr) ==
	    PGN_OK);
	/* home2's state read with home's key. */
	CHECK_INT(pgn_state_read(other, k1, &out, &len, &kerr), PGN_ETAMPER);
	CHECK(out == NULL);
	CHECK_INT(pgn_state_read(other, k2, &out, &len, &kerr), PGN_OK);
	CHECK_STR(out, plain);
	pgn_secret_free(out, len);
	pgn_key_free(k1);
	pgn_key_free(k2);
}

static void
test_fingerprint_depends_on_key_and_data(void)
{
	unsigned char *k1, *k2;
	char other[PATH_MAX];
	char a[2 * PGN_FP_BYTES + 1], b[2 * PGN_FP_BYTES + 1];
	char c[2 * PGN_FP_BYTES + 1], d[2 * PGN_FP_BYTES + 1];
	size_t i;

	make_home();
	H_PATH(other, "home2");
	h_mkdir(other);
	REQUIRE(pgn_key_load(home, 1, &k1, &kerr) == PGN_OK);
	REQUIRE(pgn_key_load(other, 1, &k2, &kerr) == PGN_OK);
	pgn_fingerprint(k1, "context", 7, a);
	pgn_fingerprint(k1, "context", 7, b);
	pgn_fingerprint(k2, "context", 7, c);
	pgn_fingerprint(k1, "contexT", 7, d);
	CHECK_INT(strlen(a), 2 * PGN_FP_BYTES);
	for (i = 0; a[i] != '\0'; i++)
		CHECK(strchr("0123456789abcdef", a[i]) != NULL);
	CHECK_STR(a, b);
	CHECK(strcmp(a, c) != 0);
	CHECK(strcmp(a, d) != 0);
	/* Only the given length counts. */
	pgn_fingerprint(k1, "context and more", 7, d);
	CHECK_STR(a, d);
	pgn_key_free(k1);
	pgn_key_free(k2);
}

/* ---- approval -------------------------------------------------------- */

static void
test_provider_is_not_allowed_before_allow(void)
{
	struct pgn_approval a;
	char path[PATH_MAX];

	make_project();
	/* No key at all yet. */
	check_dir(root, &a);
	CHECK_INT(a.allowed, 0);
	CHECK_CONTAINS(a.why.msg, "not allowed");
	CHECK_INT(a.why.hint, PGN_HINT_ALLOW);
	pgn_approval_release(&a);
	in_home(path, sizeof(path), "key");
	CHECK(!h_exists(path)); /* check never creates the key */
	/* A key, but no approval for this root. */
	random_key(path);
	check_dir(root, &a);
	CHECK_INT(a.allowed, 0);
	CHECK_CONTAINS(a.why.msg, "not allowed for ");
	CHECK_CONTAINS(a.why.msg, root);
	pgn_approval_release(&a);
}

static void
test_provider_is_allowed_after_allow(void)
{
	struct pgn_config c;
	struct pgn_approval a;
	unsigned char d[32];
	char hex[65], path[PATH_MAX], want[PATH_MAX];

	make_project();
	load(root, &c);
	REQUIRE(pgn_provider_allow(home, root, &c, &a, &perr) == PGN_OK);
	CHECK_INT(a.allowed, 1);
	CHECK_CONTAINS(a.why.msg, "allowed at 2");
	h_join(want, sizeof(want), root, "scripts/ctx");
	CHECK_STR(a.path, want);
	/* The digest shown is BLAKE2b-256 of the program's bytes. */
	crypto_generichash(d, sizeof(d), (const unsigned char *)script,
	    strlen(script), NULL, 0);
	sodium_bin2hex(hex, sizeof(hex), d, sizeof(d));
	CHECK_STR(a.digest, hex);
	pgn_approval_release(&a);
	/* The key and the state were made private. */
	in_home(path, sizeof(path), "key");
	CHECK_INT(mode_of(path), 0600);
	in_home(path, sizeof(path), "provider.state");
	CHECK_INT(mode_of(path), 0600);
	REQUIRE(pgn_provider_check(home, root, &c, &a) == PGN_OK);
	CHECK_INT(a.allowed, 1);
	CHECK_CONTAINS(a.why.msg, "allowed at 2");
	CHECK_STR(a.path, want);
	CHECK_STR(a.digest, hex);
	pgn_approval_release(&a);
	pgn_config_release(&c);
	/* Allowing again is fine and stays allowed. */
	allow_dir(root);
	CHECK(allowed(root, 1));
}

static void
test_approval_is_withdrawn_when_the_timeout_changes(void)
{
	make_project();
	allow_dir(root);
	CHECK(allowed(root, 1));
	put_config(root,
	    "{\"promptContext\":{\"command\":[\"scripts/ctx\","
	    "\"--brief\"],\"timeoutMs\":901}}");
	withdrawn(root, "withdrawn: the promptContext configuration changed");
	/* The default is not the same as the old value either. */
	put_config(root,
	    "{\"promptContext\":{\"command\":[\"scripts/ctx\","
	    "\"--brief\"]}}");
	withdrawn(root, "configuration changed");
	/* Back as it was: the approval matches again. */
	put_config(root, config);
	CHECK(allowed(root, 1));
	/* maxOutputBytes too, even when written as its default. */
	put_config(root,
	    "{\"promptContext\":{\"command\":[\"scripts/ctx\","
	    "\"--brief\"],\"timeoutMs\":900,\"maxOutputBytes\":8191}}");
	withdrawn(root, "configuration changed");
	put_config(root,
	    "{\"promptContext\":{\"command\":[\"scripts/ctx\","
	    "\"--brief\"],\"timeoutMs\":900,\"maxOutputBytes\":8192}}");
	CHECK(allowed(root, 1));
	/* A reminder or unknown key is not the provider's: no change. */
	put_config(root,
	    "{\"instructions\":{\"promptReminder\":\"hi\"},"
	    "\"x\":1,\"promptContext\":{\"command\":[\"scripts/ctx\","
	    "\"--brief\"],\"timeoutMs\":900}}");
	CHECK(allowed(root, 1));
}

static void
test_approval_is_withdrawn_when_the_arguments_change(void)
{
	static const char *const changed[] = {
	    "[\"scripts/ctx\",\"--full\"]",
	    "[\"scripts/ctx\"]",
	    "[\"scripts/ctx\",\"--brief\",\"x\"]",
	    "[\"scripts/ctx\",\"--brie\",\"f\"]", /* same bytes, split */
	    "[\"./scripts/ctx\",\"--brief\"]",
	};
	char text[512];
	size_t i;

	make_project();
	allow_dir(root);
	for (i = 0; i < H_COUNT(changed); i++) {
		snprintf(text, sizeof(text),
		    "{\"promptContext\":{\"command\":"
		    "%s,\"timeoutMs\":900}}",
		    changed[i]);
		put_config(root, text);
		if (!withdrawn(root, "configuration changed"))
			printf("  command %s\n", changed[i]);
	}
	put_config(root, config);
	CHECK(allowed(root, 1));
}

static void
test_approval_is_withdrawn_when_the_program_changes(void)
{
	char path[PATH_MAX], *data;
	size_t len, off;

	make_project();
	allow_dir(root);
	h_join(path, sizeof(path), root, "scripts/ctx");
	data = h_read_file(path, &len);
	REQUIRE(data != NULL);
	/* One byte anywhere: first, middle, last. */
	for (off = 0; off<len; off += len / 2> 0 ? len / 2 : 1) {
		flip(path, off, 0x20);
		if (!withdrawn(root, "withdrawn: the provider program"))
			printf("  byte %zu\n", off);
		CHECK(withdrawn(root, "changed since it was allowed"));
		h_write_file(path, data, len);
		CHECK(allowed(root, 1));
	}
	flip(path, len - 1, 0x01);
	withdrawn(root, "program");
	h_write_file(path, data, len);
	/* One byte more. */
	{
		char *more = malloc(len + 1);

		REQUIRE(more != NULL);
		memcpy(more, data, len);
		more[len] = '\n';
		h_write_file(path, more, len + 1);
		free(more);
	}
	withdrawn(root, "program");
	h_write_file(path, data, len);
	CHECK(allowed(root, 1));
	/* Not executable any more: not allowed either. */
	REQUIRE(chmod(path, 0644) == 0);
	withdrawn(root, "is not an executable file");
	REQUIRE(chmod(path, 0755) == 0);
	CHECK(allowed(root, 1));
	/* Gone. */
	REQUIRE(unlink(path) == 0);
	withdrawn(root, "cannot be found");
	free(data);
}

static void
test_approval_does_not_follow_a_moved_project(void)
{
	char moved[PATH_MAX], renamed[PATH_MAX];

	make_project();
	allow_dir(root);
	/* Identical files at another root. */
	make_project_at(moved, sizeof(moved), "moved");
	withdrawn(moved, "not allowed for ");
	withdrawn(moved, moved);
	CHECK(allowed(root, 1));
	/* The same directory renamed. */
	H_PATH(renamed, "renamed");
	REQUIRE(rename(root, renamed) == 0);
	withdrawn(renamed, "not allowed for ");
	REQUIRE(rename(renamed, root) == 0);
	CHECK(allowed(root, 1));
	/* Each root has its own approval. */
	allow_dir(moved);
	CHECK(allowed(moved, 1));
	CHECK(allowed(root, 1));
}

static void
test_approval_is_withdrawn_when_the_key_is_replaced(void)
{
	char path[PATH_MAX];

	make_project();
	allow_dir(root);
	in_home(path, sizeof(path), "key");
	REQUIRE(unlink(path) == 0);
	random_key(path);
	withdrawn(root, "failed to authenticate");
	/* Without a key at all. */
	REQUIRE(unlink(path) == 0);
	withdrawn(root, "not allowed");
	/* Allowed again under a new key. */
	allow_dir(root);
	CHECK(allowed(root, 1));
}

static void
test_approval_is_withdrawn_when_the_state_is_tampered(void)
{
	char path[PATH_MAX], *orig;
	size_t flen, off, never = 0;
	struct pgn_approval a;

	make_project();
	allow_dir(root);
	in_home(path, sizeof(path), "provider.state");
	orig = h_read_file(path, &flen);
	REQUIRE(orig != NULL);
	for (off = 0; off < flen; off++) {
		flip(path, off, 0x04);
		check_dir(root, &a);
		if (a.allowed == 0 &&
		    strstr(a.why.msg, "failed to authenticate"))
			never++;
		else
			printf("  byte %zu: allowed %d: %s\n", off, a.allowed,
			    a.why.msg);
		pgn_approval_release(&a);
		h_write_file(path, orig, flen);
	}
	CHECK_INT(never, flen);
	CHECK(allowed(root, 1));
	/* Removed or replaced by another home's state: no approval. */
	REQUIRE(unlink(path) == 0);
	withdrawn(root, "not allowed for ");
	h_write_file(path, "PGS1garbage", 11);
	withdrawn(root, "failed to authenticate");
	/* allow starts a fresh state, and deny of a tampered state saves
	 * a clean one. */
	allow_dir(root);
	CHECK(allowed(root, 1));
	flip(path, flen / 2, 0x01);
	{
		int removed = 1;

		CHECK_INT(pgn_provider_deny(home, root, &removed, &perr),
		    PGN_OK);
		CHECK_INT(removed, 0);
	}
	withdrawn(root, "not allowed for ");
	free(orig);
}

static void
test_deny_removes_the_approval(void)
{
	char other[PATH_MAX], path[PATH_MAX];
	int removed = 0;

	make_project();
	make_project_at(other, sizeof(other), "other");
	allow_dir(root);
	allow_dir(other);
	CHECK_INT(pgn_provider_deny(home, root, &removed, &perr), PGN_OK);
	CHECK_INT(removed, 1);
	withdrawn(root, "not allowed for ");
	CHECK(allowed(other, 1)); /* the other project keeps its own */
	removed = 1;
	CHECK_INT(pgn_provider_deny(home, root, &removed, &perr), PGN_OK);
	CHECK_INT(removed, 0);
	/* Without a key nothing was ever allowed; deny makes no key. */
	H_PATH(home, "empty-home");
	h_mkdir(home);
	removed = 1;
	CHECK_INT(pgn_provider_deny(home, root, &removed, &perr), PGN_OK);
	CHECK_INT(removed, 0);
	in_home(path, sizeof(path), "key");
	CHECK(!h_exists(path));
}

/* allow must refuse 'dir''s provider with 'text'; nothing is recorded. */
static void
allow_refused(const char *dir, const char *text)
{
	struct pgn_config c;
	struct pgn_approval a;
	pgn_status rc;

	load(dir, &c);
	pgn_err_clear(&perr);
	rc = pgn_provider_allow(home, dir, &c, &a, &perr);
	CHECK_INT(rc, PGN_EINVAL);
	CHECK_INT(a.allowed, 0);
	CHECK_CONTAINS(perr.msg, text);
	pgn_approval_release(&a);
	REQUIRE(pgn_provider_check(home, dir, &c, &a) == PGN_OK);
	CHECK_INT(a.allowed, 0);
	pgn_approval_release(&a);
	pgn_config_release(&c);
}

static void
test_allow_refuses_a_program_outside_the_project(void)
{
	char path[PATH_MAX], sib[PATH_MAX];

	make_project();
	h_join(path, sizeof(path), root, "scripts/ctx");
	REQUIRE(unlink(path) == 0);
	REQUIRE(symlink("/bin/echo", path) == 0);
	allow_refused(root, "outside the project");
	/* A sibling whose name starts with the root's. */
	REQUIRE(unlink(path) == 0);
	H_PATH(sib, "proj2");
	h_mkdir(sib);
	put(sib, "ctx", script, strlen(script), 0755);
	REQUIRE(symlink("../../proj2/ctx", path) == 0);
	allow_refused(root, "outside the project");
	/* A directory symlink out of the project. */
	REQUIRE(unlink(path) == 0);
	h_join(path, sizeof(path), root, "scripts");
	REQUIRE(rmdir(path) == 0);
	REQUIRE(symlink(sib, path) == 0);
	put_config(root, "{\"promptContext\":{\"command\":[\"scripts/ctx\"]}}");
	allow_refused(root, "outside the project");
	/* A symlink that stays inside is resolved and hashed. */
	REQUIRE(unlink(path) == 0);
	h_mkdir(path);
	put(root, "real-ctx", script, strlen(script), 0755);
	h_join(path, sizeof(path), root, "scripts/ctx");
	REQUIRE(symlink("../real-ctx", path) == 0);
	allow_dir(root);
	{
		struct pgn_approval a;

		check_dir(root, &a);
		CHECK_INT(a.allowed, 1);
		h_join(path, sizeof(path), root, "real-ctx");
		CHECK_STR(a.path, path);
		pgn_approval_release(&a);
	}
	/* The target's content is what is approved. */
	put(root, "real-ctx", "#!/bin/sh\nexit 0\n", 17, 0755);
	withdrawn(root, "program");
}

static void
test_allow_refuses_a_missing_or_unusable_program(void)
{
	char path[PATH_MAX];

	make_project();
	h_join(path, sizeof(path), root, "scripts/ctx");
	REQUIRE(chmod(path, 0644) == 0);
	allow_refused(root, "is not an executable file");
	REQUIRE(unlink(path) == 0);
	allow_refused(root, "cannot be found");
	h_mkdir(path);
	allow_refused(root, "is not an executable file");
	/* The root itself is not a program. */
	put_config(root, "{\"promptContext\":{\"command\":[\".\"]}}");
	allow_refused(root, "outside the project");
}

static void
test_nothing_to_allow_without_a_provider(void)
{
	struct pgn_config c;
	struct pgn_approval a;

	make_project();
	put_config(root, "{\"promptContext\":{\"command\":[]}}");
	REQUIRE(pgn_config_load(root, &c) == PGN_OK);
	CHECK_INT(c.argc, 0);
	CHECK_INT(pgn_provider_allow(home, root, &c, &a, &perr), PGN_EINVAL);
	CHECK_CONTAINS(perr.msg, "promptContext.command");
	pgn_approval_release(&a);
	REQUIRE(pgn_provider_check(home, root, &c, &a) == PGN_OK);
	CHECK_INT(a.allowed, 0);
	pgn_approval_release(&a);
	pgn_config_release(&c);
}

/* ---- validation ----------------------------------------------------- */

/* Validate 'n' bytes of 'out'; returns the context (caller frees). */
static char *
valid(const char *out, size_t n)
{
	struct pgn_err why;
	char *ctx = NULL;
	pgn_status rc;

	pgn_err_clear(&why);
	rc = pgn_provider_validate(out, n, &ctx, &why);
	if (!CHECK_INT(rc, PGN_OK))
		printf("  output \"%.100s\": %s\n", out, why.msg);
	return ctx;
}

static int
invalid_n(const char *out, size_t n, const char *text)
{
	struct pgn_err why;
	char *ctx = why.msg;
	pgn_status rc;
	int ok;

	pgn_err_clear(&why);
	rc = pgn_provider_validate(out, n, &ctx, &why);
	ok = CHECK_INT(rc, PGN_EINVAL) && CHECK(ctx == NULL) &&
	    CHECK_CONTAINS(why.msg, text);
	if (!ok) {
		printf("  output \"%.100s\"\n", out);
		if (rc == PGN_OK)
			free(ctx);
	}
	return ok;
}

static int
invalid(const char *out, const char *text)
{
	return invalid_n(out, strlen(out), text);
}

#define SCHEMA "\"schema\":\"pigeon.prompt-context/v1\""

static void
test_validate_accepts_the_exact_output(void)
{
	static const char spaced[] = "\n \t{ " SCHEMA " ,\n \"context\" : "
	                             "\"x\" }\r\n\n";
	static const char swapped[] = "{\"context\":\"y\"," SCHEMA "}";
	char *c;

	c = valid(OUTPUT "\n", strlen(OUTPUT) + 1);
	CHECK_STR(c, "from the provider");
	free(c);
	c = valid(OUTPUT, strlen(OUTPUT));
	CHECK_STR(c, "from the provider");
	free(c);
	/* Whitespace around and inside the object; the keys any order. */
	c = valid(spaced, sizeof(spaced) - 1);
	CHECK_STR(c, "x");
	free(c);
	c = valid(swapped, sizeof(swapped) - 1);
	CHECK_STR(c, "y");
	free(c);
}

static void
test_validate_keeps_newlines_tabs_and_unicode(void)
{
	static const char o1[] = "{" SCHEMA ",\"context\":\"a\\nb\\tc\\n\"}";
	static const char o2[] = "{" SCHEMA ",\"context\":\"h\303\251llo "
	                         "\\u00e9 \\ud83d\\udc26 \360\237\220\246\"}";
	static const char o3[] = "{" SCHEMA ",\"context\":\"raw\ttab\nline\"}";
	static const char o4[] = "{" SCHEMA ",\"context\":\"q\\\" b\\\\ "
	                         "\\/ \\\\u0000\"}";
	char *c;

	c = valid(o1, sizeof(o1) - 1);
	CHECK_STR(c, "a\nb\tc\n");
	free(c);
	c = valid(o2, sizeof(o2) - 1);
	CHECK_STR(c, "h\303\251llo \303\251 \360\237\220\246 \360\237\220\246");
	free(c);
	c = valid(o3, sizeof(o3) - 1);
	CHECK_STR(c, "raw\ttab\nline");
	free(c);
	/* An escaped backslash before "u0000" is text, not a NUL. */
	c = valid(o4, sizeof(o4) - 1);
	CHECK_STR(c, "q\" b\\ / \\u0000");
	free(c);
}

static void
test_validate_accepts_an_empty_context(void)
{
	static const char o[] = "{" SCHEMA ",\"context\":\"\"}\n";
	char *c;

	c = valid(o, sizeof(o) - 1);
	CHECK_STR(c, "");
	free(c);
}

static void
test_validate_refuses_other_keys_and_shapes(void)
{
	invalid("{" SCHEMA ",\"context\":\"x\",\"extra\":1}", "unknown key");
	invalid("{\"extra\":1," SCHEMA ",\"context\":\"x\"}", "unknown key");
	invalid("{" SCHEMA ",\"context\":\"x\",\"Context\":\"y\"}",
	    "unknown key");
	invalid("{" SCHEMA "}", "output must be exactly");
	invalid("{\"context\":\"x\"}", "output must be exactly");
	invalid("{}", "output must be exactly");
	invalid("{\"schema\":\"pigeon.prompt-context/v2\",\"context\":\"x\"}",
	    "output must be exactly");
	invalid("{\"schema\":\"Pigeon.prompt-context/v1\",\"context\":\"x\"}",
	    "output must be exactly");
	invalid("{\"schema\":\"pigeon.prompt-context/v1 \",\"context\":\"x\"}",
	    "output must be exactly");
	invalid("{\"schema\":\"\",\"context\":\"x\"}",
	    "output must be exactly");
	invalid("{\"schema\":1,\"context\":\"x\"}", "output must be exactly");
	/* Duplicate keys. */
	invalid("{" SCHEMA ",\"context\":\"x\",\"context\":\"y\"}",
	    "output must be exactly");
	invalid("{" SCHEMA "," SCHEMA ",\"context\":\"x\"}",
	    "output must be exactly");
	invalid("{" SCHEMA "," SCHEMA "}", "output must be exactly");
	/* The context must be a string. */
	invalid("{" SCHEMA ",\"context\":1}", "output must be exactly");
	invalid("{" SCHEMA ",\"context\":null}", "output must be exactly");
	invalid("{" SCHEMA ",\"context\":true}", "output must be exactly");
	invalid("{" SCHEMA ",\"context\":[\"x\"]}", "output must be exactly");
	invalid("{" SCHEMA ",\"context\":{\"text\":\"x\"}}",
	    "output must be exactly");
}

static void
test_validate_refuses_what_is_not_one_object(void)
{
	invalid("", "not valid JSON");
	invalid("\n", "not valid JSON");
	invalid("hello", "not valid JSON");
	invalid("{", "not valid JSON");
	invalid("{" SCHEMA ",\"context\":\"x\"", "not valid JSON");
	invalid("{" SCHEMA ",\"context\":\"x}", "not valid JSON");
	invalid("{" SCHEMA ",\"context\":'x'}", "not valid JSON");
	invalid("{" SCHEMA ",\"context\":\"\\ud800\"}", "not valid JSON");
	invalid("{" SCHEMA ",\"context\":\"\\x41\"}", "not valid JSON");
	/* Anything but whitespace before the object (cJSON would skip it). */
	invalid("\033" OUTPUT, "text before the JSON object");
	invalid("\001\002 " OUTPUT, "text before the JSON object");
	invalid(" \n\f" OUTPUT, "text before the JSON object");
	invalid("\357\273\277" OUTPUT, "text before the JSON object");
	invalid("\033[0m\n" OUTPUT, "text before the JSON object");
	invalid("x" OUTPUT, "not valid JSON");
	/* Text after the object. */
	invalid(OUTPUT " x", "text after the JSON object");
	invalid(OUTPUT "\n" OUTPUT "\n", "text after the JSON object");
	invalid(OUTPUT "{}", "text after the JSON object");
	invalid(OUTPUT "\nok\n", "text after the JSON object");
	invalid(OUTPUT "\n\033[0m", "text after the JSON object");
	invalid(OUTPUT "\f", "text after the JSON object");
	/* Not an object. */
	invalid("[" OUTPUT "]", "not a JSON object");
	invalid("[]", "not a JSON object");
	invalid("\"context\"", "not a JSON object");
	invalid("42", "not a JSON object");
	invalid("null", "not a JSON object");
}

static void
test_validate_refuses_nul_and_control_characters(void)
{
	static const char nul[] = "{" SCHEMA ",\"context\":\"a\0b\"}";
	static const char nul_after[] = OUTPUT "\n\0";

	invalid_n(nul, sizeof(nul) - 1, "NUL byte");
	invalid_n(nul_after, sizeof(nul_after) - 1, "NUL byte");
	invalid("{" SCHEMA ",\"context\":\"a\\u0000b\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"\\u0000\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\\u0001b\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\\u001bb\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"\\u001b[31mred\"}",
	    "control character");
	invalid("{" SCHEMA ",\"context\":\"a\\rb\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\\bb\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\\fb\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\\u007fb\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\177b\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\001b\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\033b\"}", "control character");
	invalid("{" SCHEMA ",\"context\":\"a\rb\"}", "control character");
}

static void
test_validate_refuses_invalid_utf8(void)
{
	invalid("{" SCHEMA ",\"context\":\"\377\"}", "not valid UTF-8");
	invalid("{" SCHEMA ",\"context\":\"ab\303\"}", "not valid UTF-8");
	invalid("{" SCHEMA ",\"context\":\"\300\257\"}", "not valid UTF-8");
	invalid("{" SCHEMA ",\"context\":\"\355\240\200\"}", "not valid UTF-8");
	invalid("{" SCHEMA ",\"context\":\"\200x\"}", "not valid UTF-8");
	invalid("{" SCHEMA ",\"context\":\"\364\220\200\200\"}",
	    "not valid UTF-8");
}

/* ---- bounded runs ----------------------------------------------------- */

static void
run(const char *dir, long budget_ms, struct pgn_provider_result *r)
{
	struct pgn_config c;
	struct pgn_provider_request rq;

	memset(&rq, 0, sizeof(rq));
	rq.host = "claude";
	rq.session = "claude:s1";
	rq.turn = "UserPromptSubmit:p1";
	rq.cwd = dir;
	rq.prompt = "what next?";
	load(dir, &c);
	pgn_provider_run(home, dir, &c, &rq, budget_ms, r);
	pgn_config_release(&c);
}

static void
test_run_of_an_unapproved_provider_does_not_start_it(void)
{
	struct pgn_provider_result r;
	char marker[PATH_MAX], text[PATH_MAX + 64];

	make_project();
	H_PATH(marker, "ran");
	snprintf(text, sizeof(text), "#!/bin/sh\ntouch '%s'\n", marker);
	put_script(root, text);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "not-allowed");
	CHECK(r.context == NULL);
	CHECK_INT(r.bytes, 0);
	CHECK_STR(r.fingerprint, "");
	CHECK_CONTAINS(r.why.msg, "not allowed");
	pgn_provider_result_release(&r);
	CHECK(!h_exists(marker));
}

static void
test_run_of_an_approved_provider_keeps_its_context(void)
{
	struct pgn_provider_result r;
	unsigned char *key;
	char fp[2 * PGN_FP_BYTES + 1];

	make_project();
	allow_dir(root);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "ok");
	CHECK_STR(r.context, "from the provider");
	CHECK_INT(r.bytes, strlen(OUTPUT) + 1);
	key = key_of(home);
	pgn_fingerprint(key, "from the provider", 17, fp);
	CHECK_STR(r.fingerprint, fp);
	pgn_key_free(key);
	CHECK(r.ms >= 0 && r.ms < 1000);
	pgn_provider_result_release(&r);
}

static void
test_run_gives_the_provider_default_signal_handling(void)
{
	struct pgn_provider_result r;

	/*
	 * A provider whose pipe reader has gone must die of SIGPIPE as any
	 * program does: the hook's own SIG_IGN must not be inherited.
	 */
	make_project();
	put_script(root,
	    "#!/bin/sh\nkill -PIPE $$\nprintf '%s' '" OUTPUT "'\n");
	allow_dir(root);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "crashed");
	CHECK_STR(r.why.msg, "killed by signal 13");
	CHECK(r.context == NULL);
	pgn_provider_result_release(&r);
}

static void
test_run_past_the_budget_is_a_timeout(void)
{
	struct pgn_provider_result r;

	make_project();
	put_script(root, "#!/bin/sh\nsleep 5\nprintf '%s' '" OUTPUT "'\n");
	allow_dir(root);
	run(root, 200, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "timeout");
	CHECK(r.context == NULL);
	CHECK_STR(r.fingerprint, "");
	CHECK(r.ms >= 150 && r.ms < 3000);
	pgn_provider_result_release(&r);
}

static void
test_run_refuses_output_past_the_cap(void)
{
	struct pgn_provider_result r;

	make_project();
	put_config(root,
	    "{\"promptContext\":{\"command\":[\"scripts/ctx\"],"
	    "\"maxOutputBytes\":16}}");
	allow_dir(root);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "too-big");
	CHECK(r.context == NULL);
	CHECK(r.bytes > 16);
	pgn_provider_result_release(&r);
}

static void
test_run_sends_the_request_on_stdin(void)
{
	struct pgn_provider_result r;
	char saved[PATH_MAX], text[PATH_MAX + 128], want[PATH_MAX + 256];
	char *data;
	size_t len;

	make_project();
	H_PATH(saved, "request.json");
	snprintf(text, sizeof(text),
	    "#!/bin/sh\ncat >'%s'\nprintf '%%s' '" OUTPUT "'\n", saved);
	put_script(root, text);
	allow_dir(root);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "ok");
	pgn_provider_result_release(&r);
	data = h_read_file(saved, &len);
	REQUIRE(data != NULL);
	snprintf(want, sizeof(want),
	    "{\"schema\":\"pigeon.prompt-context-"
	    "request/v1\",\"host\":\"claude\",\"session\":\"claude:s1\","
	    "\"turn\":\"UserPromptSubmit:p1\",\"cwd\":\"%s\",\"prompt\":"
	    "\"what next?\"}",
	    root);
	CHECK_STR(data, want);
	free(data);
}

/* ---- the program run is the program approved (defect 10) -------------- */

/* The other script: its output, and a trace that it ran at all. */
#define UNAPPROVED_OUTPUT                                                      \
	"{\"schema\":\"pigeon.prompt-context/v1\",\"context\":"                \
	"\"UNAPPROVED\"}"
#define SWAP_RUNS 60

/* Kill and reap a helper process started by a test. */
static void
stop(pid_t pid)
{
	if (pid <= 0)
		return;
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);
}

/*
 * A child that swaps scripts/ctx between the two files 'a' and 'b' until
 * killed: by link() + rename() (a new inode each time, as an attacker
 * without write access to the file itself does), or by rewriting the
 * same inode in place.
 */
static pid_t
start_swapper(const char *a, const char *b, int in_place)
{
	char ctx[PATH_MAX], tmp[PATH_MAX], *data[2];
	size_t len[2];
	pid_t pid;
	int i, fd;

	h_join(ctx, sizeof(ctx), root, "scripts/ctx");
	h_join(tmp, sizeof(tmp), root, "scripts/.swap");
	data[0] = h_read_file(a, &len[0]);
	data[1] = h_read_file(b, &len[1]);
	REQUIRE(data[0] != NULL && data[1] != NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid > 0) {
		free(data[0]);
		free(data[1]);
		return pid;
	}
	for (i = 0;; i ^= 1) {
		if (!in_place) {
			(void)unlink(tmp);
			if (link(i ? b : a, tmp) == 0)
				(void)rename(tmp, ctx);
			continue;
		}
		fd = open(ctx, O_WRONLY | O_TRUNC);
		if (fd >= 0) {
			if (write(fd, data[i], len[i]) < 0) {
				/* keep swapping */
			}
			close(fd);
		}
	}
}

/*
 * Run the approved provider SWAP_RUNS times while the file is swapped
 * with an unapproved one: the unapproved script must never run, so its
 * output is never kept; the approved one does run.
 */
static void
race(int in_place)
{
	struct pgn_provider_result r;
	char a[PATH_MAX], b[PATH_MAX], ran[PATH_MAX], ctx[PATH_MAX];
	char text[PATH_MAX + 128];
	int i, ok = 0, refused = 0, unapproved = 0;
	pid_t pid;

	make_project();
	allow_dir(root);
	H_PATH(a, "approved");
	H_PATH(b, "unapproved");
	H_PATH(ran, "unapproved-ran");
	h_write_file(a, script, strlen(script));
	snprintf(text, sizeof(text),
	    "#!/bin/sh\necho x >>'%s'\ncat >/dev/null\nprintf '%%s\\n' '" UNAPPROVED_OUTPUT
	    "'\n",
	    ran);
	h_write_file(b, text, strlen(text));
	REQUIRE(chmod(a, 0755) == 0 && chmod(b, 0755) == 0);
	pid = start_swapper(a, b, in_place);
	for (i = 0; i < SWAP_RUNS; i++) {
		run(root, 1000, &r);
		if (r.context != NULL && strstr(r.context, "UNAPPROVED"))
			unapproved++;
		else if (r.status == PGN_PROVIDER_OK)
			ok++;
		else
			refused++;
		pgn_provider_result_release(&r);
	}
	stop(pid);
	printf("  %d ok, %d refused, %d unapproved injected of %d\n", ok,
	    refused, unapproved, SWAP_RUNS);
	CHECK_INT(unapproved, 0);
	CHECK(!h_exists(ran));
	/*
	 * How many runs met the approved file is the scheduler's business
	 * (under a sanitizer on a loaded machine, none may): with the
	 * swapping over and the approved file back in place, it runs.
	 */
	h_join(ctx, sizeof(ctx), root, "scripts/ctx");
	h_write_file(ctx, script, strlen(script));
	REQUIRE(chmod(ctx, 0755) == 0);
	run(root, 1000, &r);
	CHECK_INT(r.status, PGN_PROVIDER_OK);
	CHECK(r.context == NULL || strstr(r.context, "UNAPPROVED") == NULL);
	pgn_provider_result_release(&r);
}

static void
test_run_executes_only_approved_bytes_while_the_file_is_swapped(void)
{
	race(0);
}

static void
test_run_executes_only_approved_bytes_while_the_file_is_rewritten(void)
{
	race(1);
}

static void
test_run_reports_a_program_that_cannot_be_executed(void)
{
	struct pgn_provider_result r;

	/* The kernel refuses it (no such interpreter): never a retry by path.
	 */
	make_project();
	put_script(root, "#!/nonexistent/interpreter\n");
	allow_dir(root);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "error");
	CHECK_CONTAINS(r.why.msg, "cannot execute the provider");
	CHECK(r.context == NULL);
	pgn_provider_result_release(&r);
}

static void
test_run_follows_a_symlink_inside_the_project(void)
{
	struct pgn_provider_result r;
	char link_path[PATH_MAX];

	make_project();
	put(root, "scripts/real-ctx", script, strlen(script), 0755);
	h_join(link_path, sizeof(link_path), root, "scripts/ctx");
	REQUIRE(unlink(link_path) == 0);
	REQUIRE(symlink("real-ctx", link_path) == 0);
	allow_dir(root);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "ok");
	CHECK_STR(r.context, "from the provider");
	pgn_provider_result_release(&r);
}

/* ---- descriptors (defect 11) ------------------------------------------- */

#define HIGH_FD 1500
#define EXE_FD  3 /* the program, for a #! interpreter */

/*
 * 'list' gets the caller's open descriptors as `ls -l /proc/PID/fd`
 * shows them: a script the provider runs, so that the listing (its
 * redirection, its directory) adds none to the provider itself.
 */
static void
put_lister(char *cmd, size_t len, const char *list)
{
	static const char lister[] = "ls -l /proc/$PPID/fd >\"$1\"\n";
	char path[PATH_MAX];

	H_PATH(path, "lister.sh");
	h_write_file(path, lister, strlen(lister));
	snprintf(cmd, len, "/bin/sh %s %s", path, list);
}

/* One "N -> TARGET" line of that listing: N, and 'target' set. */
static int
fd_line(char *line, const char **target)
{
	char *arrow = strstr(line, " -> "), *p;

	if (arrow == NULL)
		return -1;
	*arrow = '\0';
	*target = arrow + 4;
	p = strrchr(line, ' ');
	return p != NULL ? (int)strtol(p + 1, NULL, 10) : -1;
}

/*
 * How many descriptors above 2 'path' lists; each must be the program
 * itself (the target of descriptor 3), and 'forbidden' appear nowhere.
 */
static int
fds_above_2(const char *path, const char *forbidden)
{
	char *data, *line, *save = NULL, prog[PATH_MAX] = "";
	const char *t;
	int n = 0, fd, pass;
	size_t len;

	data = h_read_file(path, &len);
	REQUIRE(data != NULL);
	CHECK(strstr(data, forbidden) == NULL);
	/* Two passes: descriptor 3 first, wherever ls put it. */
	for (pass = 0; pass < 2; pass++) {
		char *copy = pgn_strndup(data, len);

		REQUIRE(copy != NULL);
		for (line = strtok_r(copy, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save)) {
			fd = fd_line(line, &t);
			if (fd < 0)
				continue;
			if (pass == 0 && fd == EXE_FD)
				snprintf(prog, sizeof(prog), "%s", t);
			if (pass == 0 || fd <= 2)
				continue;
			n++;
			if (!CHECK(fd != HIGH_FD) || !CHECK_STR(t, prog))
				printf("  unexpected descriptor %d: %s\n", fd,
				    t);
		}
		free(copy);
	}
	free(data);
	return n;
}

static void
test_run_closes_descriptors_above_2_whatever_their_number(void)
{
	struct pgn_provider_result r;
	struct rlimit old, rl;
	char leak[PATH_MAX], list[PATH_MAX], cmd[3 * PATH_MAX];
	char text[4 * PATH_MAX];
	int fd;

	make_project();
	H_PATH(leak, "leaked-file");
	H_PATH(list, "fds.txt");
	put_lister(cmd, sizeof(cmd), list);
	snprintf(text, sizeof(text),
	    "#!/bin/sh\n%s\ncat >/dev/null\n"
	    "printf '%%s\\n' '" OUTPUT "'\n",
	    cmd);
	put_script(root, text);
	allow_dir(root);
	REQUIRE(getrlimit(RLIMIT_NOFILE, &old) == 0);
	if (old.rlim_max != RLIM_INFINITY && old.rlim_max <= HIGH_FD) {
		printf("  skipped: RLIMIT_NOFILE hard limit %llu\n",
		    (unsigned long long)old.rlim_max);
		return;
	}
	rl = old;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= HIGH_FD)
		rl.rlim_cur = HIGH_FD + 1;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	fd = open(leak, O_WRONLY | O_CREAT, 0600);
	REQUIRE(fd >= 0);
	REQUIRE(dup2(fd, HIGH_FD) == HIGH_FD);
	close(fd);
	run(root, 1000, &r);
	close(HIGH_FD);
	REQUIRE(setrlimit(RLIMIT_NOFILE, &old) == 0);
	CHECK_STR(pgn_provider_status_name(r.status), "ok");
	pgn_provider_result_release(&r);
	/*
	 * Above 2 only the program itself: descriptor 3, which the kernel
	 * hands a #! interpreter as /dev/fd/3, and the shell's own
	 * descriptor of its script, the same file.
	 */
	CHECK(fds_above_2(list, "leaked-file") >= 1);
}

static void
test_run_of_a_binary_leaves_it_only_0_1_2(void)
{
	struct pgn_provider_result r;
	char list[PATH_MAX], cmd[3 * PATH_MAX], cfg[4 * PATH_MAX], *sh;
	size_t len;

	/* A copy of /bin/sh as the program: a binary keeps no descriptor 3. */
	make_project();
	H_PATH(list, "fds.txt");
	sh = h_read_file("/bin/sh", &len);
	REQUIRE(sh != NULL);
	put(root, "scripts/sh", sh, len, 0755);
	free(sh);
	put_lister(cmd, sizeof(cmd), list);
	snprintf(cfg, sizeof(cfg),
	    "{\"promptContext\":{\"command\":[\"scripts/sh\",\"-c\",\""
	    "%s; cat >/dev/null; printf %%s '%s'\"]}}",
	    cmd,
	    "{\\\"schema\\\":\\\"pigeon.prompt-context/v1\\\","
	    "\\\"context\\\":\\\"elf\\\"}");
	put_config(root, cfg);
	allow_dir(root);
	run(root, 1000, &r);
	CHECK_STR(pgn_provider_status_name(r.status), "ok");
	CHECK_STR(r.context, "elf");
	pgn_provider_result_release(&r);
	CHECK_INT(fds_above_2(list, "leaked-file"), 0);
}

/* ---- the provider dies with its caller (defect 12) --------------------- */

/* Has process 'pid' ended (gone, or a zombie nobody reaped)? */
static int
ended(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p != NULL && (p[2] == 'Z' || p[2] == 'X');
}

static void on_alarm(int sig) H_UNUSED;

static void
on_alarm(int sig)
{
	(void)sig;
	_exit(0); /* as the hook's deadline backstop does */
}

/*
 * A caller of pgn_provider_run (a forked child) ends mid-run, by
 * SIGKILL or by _exit from a timer; the provider and the two `sleep 30`
 * it started must all be gone within 2 s.
 */
static void
caller_ends_mid_run(int by_kill)
{
	struct pgn_provider_result r;
	char pids[PATH_MAX], text[3 * PATH_MAX + 128], *data, *line;
	char *save = NULL;
	long p[8];
	int i, n = 0, alive;
	size_t len;
	pid_t caller;

	make_project();
	put_config(root,
	    "{\"promptContext\":{\"command\":[\"scripts/ctx\"],"
	    "\"timeoutMs\":5000}}");
	H_PATH(pids, "pids");
	snprintf(text, sizeof(text),
	    "#!/bin/sh\nsleep 30 & a=$!\nsleep 30 & b=$!\n"
	    "echo \"$$ $a $b\" >'%s.tmp' && mv '%s.tmp' '%s'\nwait\n",
	    pids, pids, pids);
	put_script(root, text);
	allow_dir(root);
	caller = fork();
	REQUIRE(caller >= 0);
	if (caller == 0) {
		if (!by_kill) {
			struct itimerval it;

			memset(&it, 0, sizeof(it));
			it.it_value.tv_usec = 400000;
			(void)signal(SIGALRM, on_alarm);
			(void)setitimer(ITIMER_REAL, &it, NULL);
		}
		run(root, 5000, &r);
		_exit(3); /* the provider finished: it should not have */
	}
	for (i = 0; i < 300 && !h_exists(pids); i++)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	if (by_kill)
		(void)kill(caller, SIGKILL);
	(void)waitpid(caller, &i, 0);
	CHECK(by_kill ? WIFSIGNALED(i) : WIFEXITED(i) && WEXITSTATUS(i) == 0);
	data = h_read_file(pids, &len);
	REQUIRE(data != NULL);
	for (line = strtok_r(data, " \n", &save); line != NULL && n < 8;
	     line = strtok_r(NULL, " \n", &save))
		p[n++] = strtol(line, NULL, 10);
	free(data);
	CHECK_INT(n, 3);
	for (i = 0, alive = n; i < 200 && alive > 0; i++) {
		int k;

		for (k = 0, alive = 0; k < n; k++)
			alive += !ended((pid_t)p[k]);
		if (alive > 0)
			nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	if (!CHECK_INT(alive, 0))
		for (i = 0; i < n; i++)
			(void)kill((pid_t)p[i], SIGKILL);
}

static void
test_provider_group_dies_when_the_caller_is_killed(void)
{
	caller_ends_mid_run(1);
}

static void
test_provider_group_dies_when_the_caller_exits_mid_run(void)
{
	caller_ends_mid_run(0);
}

static const struct h_test tests[] = {
    H_TEST(test_key_is_created_32_bytes_0600_when_asked_and_reused),
    H_TEST(test_two_homes_get_different_keys),
    H_TEST(test_key_absent_without_create_is_not_found),
    H_TEST(test_key_of_the_wrong_size_is_refused_and_kept),
    H_TEST(test_key_with_group_or_other_bits_is_refused),
    H_TEST(test_key_that_is_a_symlink_or_a_directory_is_refused),
    H_TEST(test_state_round_trip),
    H_TEST(test_state_over_its_cap_is_not_written),
    H_TEST(test_state_with_any_byte_flipped_is_tampered),
    H_TEST(test_state_sealed_under_another_key_is_tampered),
    H_TEST(test_fingerprint_depends_on_key_and_data),
    H_TEST(test_provider_is_not_allowed_before_allow),
    H_TEST(test_provider_is_allowed_after_allow),
    H_TEST(test_approval_is_withdrawn_when_the_timeout_changes),
    H_TEST(test_approval_is_withdrawn_when_the_arguments_change),
    H_TEST(test_approval_is_withdrawn_when_the_program_changes),
    H_TEST(test_approval_does_not_follow_a_moved_project),
    H_TEST(test_approval_is_withdrawn_when_the_key_is_replaced),
    H_TEST(test_approval_is_withdrawn_when_the_state_is_tampered),
    H_TEST(test_deny_removes_the_approval),
    H_TEST(test_allow_refuses_a_program_outside_the_project),
    H_TEST(test_allow_refuses_a_missing_or_unusable_program),
    H_TEST(test_nothing_to_allow_without_a_provider),
    H_TEST(test_validate_accepts_the_exact_output),
    H_TEST(test_validate_keeps_newlines_tabs_and_unicode),
    H_TEST(test_validate_accepts_an_empty_context),
    H_TEST(test_validate_refuses_other_keys_and_shapes),
    H_TEST(test_validate_refuses_what_is_not_one_object),
    H_TEST(test_validate_refuses_nul_and_control_characters),
    H_TEST(test_validate_refuses_invalid_utf8),
    H_TEST(test_run_of_an_unapproved_provider_does_not_start_it),
    H_TEST(test_run_of_an_approved_provider_keeps_its_context),
    H_TEST(test_run_gives_the_provider_default_signal_handling),
    H_TEST(test_run_past_the_budget_is_a_timeout),
    H_TEST(test_run_refuses_output_past_the_cap),
    H_TEST(test_run_sends_the_request_on_stdin),
    H_TEST(test_run_executes_only_approved_bytes_while_the_file_is_swapped),
    H_TEST(test_run_executes_only_approved_bytes_while_the_file_is_rewritten),
    H_TEST(test_run_reports_a_program_that_cannot_be_executed),
    H_TEST(test_run_follows_a_symlink_inside_the_project),
    H_TEST(test_run_closes_descriptors_above_2_whatever_their_number),
    H_TEST(test_run_of_a_binary_leaves_it_only_0_1_2),
    H_TEST(test_provider_group_dies_when_the_caller_is_killed),
    H_TEST(test_provider_group_dies_when_the_caller_exits_mid_run),
};

int
main(void)
{
	if (sodium_init() < 0)
		return 1;
	return h_run(tests, H_COUNT(tests));
}
