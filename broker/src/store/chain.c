/*
 * The audit hash chain: each delivery's hash is BLAKE2b-256 over the
 * previous row's hash and a canonical, length-prefixed encoding of the
 * row, so an edited, deleted or reordered row breaks the chain.
 */
#include <string.h>

#include <sodium.h>

#include "pgn_int.h"

static void
put_u64(crypto_generichash_state *h, uint64_t v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	crypto_generichash_update(h, b, sizeof(b));
}

static void
put_str(crypto_generichash_state *h, const char *s)
{
	size_t n;

	n = s == NULL ? 0 : strlen(s);
	put_u64(h, (uint64_t)n);
	if (n > 0)
		crypto_generichash_update(h, (const unsigned char *)s, n);
}

void
pgn_chain_hash(const unsigned char prev[PGN_HASH_BYTES],
    const struct pgn_delivery *d, unsigned char out[PGN_HASH_BYTES])
{
	static const char tag[] = "pigeon.audit/v1";
	crypto_generichash_state h;

	crypto_generichash_init(&h, NULL, 0, PGN_HASH_BYTES);
	crypto_generichash_update(&h, (const unsigned char *)tag,
	    sizeof(tag) - 1);
	crypto_generichash_update(&h, prev, PGN_HASH_BYTES);
	put_u64(&h, (uint64_t)d->id);
	put_u64(&h, (uint64_t)d->message_id);
	put_u64(&h, (uint64_t)d->reply_to);
	put_u64(&h, (uint64_t)d->created_ms);
	put_u64(&h, (uint64_t)d->delivered_ms);
	put_u64(&h, (uint64_t)d->bytes);
	put_str(&h, d->scope);
	put_str(&h, d->sender);
	put_str(&h, d->recipient);
	put_str(&h, d->session);
	put_str(&h, d->host);
	put_str(&h, d->route);
	put_str(&h, d->body);
	crypto_generichash_final(&h, out, PGN_HASH_BYTES);
}
