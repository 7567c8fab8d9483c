/*
 * Secrets: the key in $PIGEON_HOME/key (32 random bytes, 0600), keyed
 * BLAKE2b under per-purpose subkeys, and the provider state sealed with
 * crypto_secretbox. Keys live in sodium_malloc memory and every
 * plaintext is wiped before it is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "pgn_int.h"

#define KEY_FILE        "key"
#define STATE_FILE      "provider.state"
#define STATE_MAGIC     "PGS1"
#define STATE_MAGIC_LEN 4

void
pgn_key_free(unsigned char *key)
{
	if (key != NULL)
		sodium_free(key); /* zeroes it first */
}

void
pgn_secret_free(void *p, size_t len)
{
	if (p == NULL)
		return;
	sodium_memzero(p, len);
	free(p);
}

/* Derive the subkey of 'tag' from the key. */
static void
subkey(const unsigned char *key, const char *tag,
    unsigned char out[PGN_KEY_BYTES])
{
	crypto_generichash(out, PGN_KEY_BYTES, (const unsigned char *)tag,
	    strlen(tag), key, PGN_KEY_BYTES);
}

void
pgn_mac_start(crypto_generichash_state *h, const unsigned char *key,
    const char *tag, size_t outlen)
{
	unsigned char sk[PGN_KEY_BYTES];

	subkey(key, tag, sk);
	crypto_generichash_init(h, sk, sizeof(sk), outlen);
	sodium_memzero(sk, sizeof(sk));
}

void
pgn_fingerprint(const unsigned char *key, const char *data, size_t len,
    char hex[2 * PGN_FP_BYTES + 1])
{
	crypto_generichash_state h;
	unsigned char fp[PGN_FP_BYTES];

	pgn_mac_start(&h, key, "pigeon.fingerprint/v1", sizeof(fp));
	crypto_generichash_update(&h, (const unsigned char *)data, len);
	crypto_generichash_final(&h, fp, sizeof(fp));
	sodium_bin2hex(hex, 2 * PGN_FP_BYTES + 1, fp, sizeof(fp));
}

/* Read exactly PGN_KEY_BYTES from a private regular file. */
static pgn_status
read_key(const char *path, unsigned char *key, struct pgn_err *err)
{
	struct stat sb;
	ssize_t n;
	size_t got = 0;
	int fd;
	pgn_status rc = PGN_OK;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return PGN_ENOTFOUND;
		return pgn_err_set(err, PGN_EIO, "cannot read key '%s': %s",
		    path, strerror(errno));
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size != PGN_KEY_BYTES) {
		rc = pgn_err_set(err, PGN_EINVAL,
		    "key '%s' is not a %d-byte file: move it aside (approvals made with it are lost)",
		    path, PGN_KEY_BYTES);
		goto out;
	}
	if ((sb.st_mode & 077) != 0) {
		rc = pgn_err_set(err, PGN_EINVAL,
		    "key '%s' is readable by others: chmod 600 it", path);
		goto out;
	}
	while (got < PGN_KEY_BYTES) {
		n = read(fd, key + got, PGN_KEY_BYTES - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = pgn_err_set(err, PGN_EIO, "cannot read key '%s'",
			    path);
			goto out;
		}
		got += (size_t)n;
	}
out:
	close(fd);
	return rc;
}

/* Make a new key: write a temp file, then link it in (first one wins). */
static pgn_status
create_key(const char *home, const char *path, struct pgn_err *err)
{
	unsigned char k[PGN_KEY_BYTES];
	struct pgn_buf tmp;
	int fd = -1;
	pgn_status rc = PGN_EIO;

	pgn_buf_init(&tmp, PGN_MAX_PATH);
	pgn_buf_addf(&tmp, "%s/.key.XXXXXX", home);
	if (tmp.err != PGN_OK) {
		pgn_buf_release(&tmp);
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	}
	randombytes_buf(k, sizeof(k));
	fd = mkstemp(tmp.data);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, 0600) != 0 ||
	    write(fd, k, sizeof(k)) != (ssize_t)sizeof(k) || fsync(fd) != 0)
		goto fail;
	if (link(tmp.data, path) != 0 && errno != EEXIST)
		goto fail;
	(void)pgn_fsync_dir(home);
	rc = PGN_OK;
	goto out;
fail:
	(void)pgn_err_set(err, rc, "cannot create key '%s': %s", path,
	    strerror(errno));
out:
	sodium_memzero(k, sizeof(k));
	if (fd >= 0) {
		close(fd);
		(void)unlink(tmp.data);
	}
	pgn_buf_release(&tmp);
	return rc;
}

pgn_status
pgn_key_load(const char *home, int create, unsigned char **key,
    struct pgn_err *err)
{
	char *path;
	pgn_status rc;

	*key = NULL;
	/* Callers need not have opened a database (sodium_init is idempotent).
	 */
	if (sodium_init() < 0) {
		return pgn_err_set(err, PGN_EIO,
		    "libsodium failed to initialise");
	}
	path = pgn_path_join(home, KEY_FILE);
	if (path == NULL)
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	*key = sodium_malloc(PGN_KEY_BYTES);
	if (*key == NULL) {
		free(path);
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	}
	rc = read_key(path, *key, err);
	if (rc == PGN_ENOTFOUND && create) {
		rc = create_key(home, path, err);
		if (rc == PGN_OK)
			rc = read_key(path, *key, err);
	} else if (rc == PGN_ENOTFOUND) {
		(void)pgn_err_set(err, rc, "no key '%s' yet", path);
	}
	if (rc != PGN_OK) {
		pgn_key_free(*key);
		*key = NULL;
	}
	free(path);
	return rc;
}

pgn_status
pgn_state_read(const char *home, const unsigned char *key, char **plain,
    size_t *len, struct pgn_err *err)
{
	unsigned char sk[PGN_KEY_BYTES];
	const unsigned char *nonce, *box;
	char *path = NULL, *data = NULL;
	size_t dlen = 0, boxlen;
	mode_t mode;
	int exists = 0;
	pgn_status rc;

	*plain = NULL;
	*len = 0;
	path = pgn_path_join(home, STATE_FILE);
	if (path == NULL)
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	rc = pgn_read_file(path, PGN_MAX_STATE, &data, &dlen, &exists, &mode,
	    err);
	if (rc != PGN_OK || !exists)
		goto out;
	if (dlen < STATE_MAGIC_LEN + crypto_secretbox_NONCEBYTES +
	            crypto_secretbox_MACBYTES ||
	    memcmp(data, STATE_MAGIC, STATE_MAGIC_LEN) != 0) {
		rc = PGN_ETAMPER;
		goto tamper;
	}
	nonce = (const unsigned char *)data + STATE_MAGIC_LEN;
	box = nonce + crypto_secretbox_NONCEBYTES;
	boxlen = dlen - STATE_MAGIC_LEN - crypto_secretbox_NONCEBYTES;
	*plain = malloc(boxlen - crypto_secretbox_MACBYTES + 1);
	if (*plain == NULL) {
		rc = pgn_err_set(err, PGN_ENOMEM, "out of memory");
		goto out;
	}
	subkey(key, "pigeon.state/v1", sk);
	if (crypto_secretbox_open_easy((unsigned char *)*plain, box, boxlen,
	        nonce, sk) != 0) {
		free(*plain);
		*plain = NULL;
		rc = PGN_ETAMPER;
		goto tamper;
	}
	*len = boxlen - crypto_secretbox_MACBYTES;
	(*plain)[*len] = '\0';
	goto out;
tamper:
	(void)pgn_err_set(err, rc,
	    "provider state '%s' failed to decrypt or authenticate: every approval counts as absent; allow the provider again",
	    path);
out:
	sodium_memzero(sk, sizeof(sk));
	free(data);
	free(path);
	return rc;
}

pgn_status
pgn_state_write(const char *home, const unsigned char *key, const char *plain,
    size_t len, struct pgn_err *err)
{
	unsigned char sk[PGN_KEY_BYTES];
	unsigned char *out = NULL;
	size_t outlen;
	char *path;
	pgn_status rc;

	path = pgn_path_join(home, STATE_FILE);
	if (path == NULL)
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	outlen = STATE_MAGIC_LEN + crypto_secretbox_NONCEBYTES +
	    crypto_secretbox_MACBYTES + len;
	if (outlen > PGN_MAX_STATE) {
		free(path);
		return pgn_err_set(err, PGN_ETOOBIG,
		    "provider state over %d bytes", PGN_MAX_STATE);
	}
	out = malloc(outlen);
	if (out == NULL) {
		free(path);
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	}
	memcpy(out, STATE_MAGIC, STATE_MAGIC_LEN);
	randombytes_buf(out + STATE_MAGIC_LEN, crypto_secretbox_NONCEBYTES);
	subkey(key, "pigeon.state/v1", sk);
	crypto_secretbox_easy(out + STATE_MAGIC_LEN +
	        crypto_secretbox_NONCEBYTES,
	    (const unsigned char *)plain, len, out + STATE_MAGIC_LEN, sk);
	sodium_memzero(sk, sizeof(sk));
	rc = pgn_write_atomic(path, (const char *)out, outlen, 0600, err);
	free(out);
	free(path);
	return rc;
}
