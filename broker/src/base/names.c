/*
 * Generated agent names: a memorable adjective-noun pair, drawn with
 * libsodium's uniform generator.
 */
#include <string.h>

#include <sodium.h>

#include "pgn_int.h"

static const char *const adjectives[] = {
    "amber",
    "bold",
    "brave",
    "brisk",
    "calm",
    "clever",
    "cosmic",
    "crisp",
    "dapper",
    "eager",
    "early",
    "fancy",
    "fleet",
    "gentle",
    "glad",
    "golden",
    "grand",
    "happy",
    "hardy",
    "humble",
    "jolly",
    "keen",
    "kind",
    "lively",
    "lucky",
    "merry",
    "mellow",
    "mighty",
    "nimble",
    "noble",
    "patient",
    "plucky",
    "polite",
    "proud",
    "quick",
    "quiet",
    "rapid",
    "ready",
    "rosy",
    "rustic",
    "shiny",
    "silent",
    "silver",
    "sleek",
    "smart",
    "snappy",
    "solid",
    "spry",
    "steady",
    "sunny",
    "swift",
    "tidy",
    "trusty",
    "upbeat",
    "vivid",
    "warm",
    "wise",
    "witty",
    "young",
    "zesty",
    "zippy",
    "bright",
    "fresh",
    "jaunty",
};

static const char *const nouns[] = {
    "otter",
    "falcon",
    "badger",
    "heron",
    "lynx",
    "marten",
    "osprey",
    "panda",
    "puffin",
    "raven",
    "robin",
    "sparrow",
    "swift",
    "tiger",
    "walrus",
    "wombat",
    "beaver",
    "bison",
    "crane",
    "dingo",
    "egret",
    "ferret",
    "gecko",
    "gull",
    "hare",
    "ibis",
    "jackal",
    "kestrel",
    "koala",
    "lemur",
    "magpie",
    "mole",
    "moose",
    "newt",
    "owl",
    "pelican",
    "quail",
    "rabbit",
    "seal",
    "shrike",
    "skunk",
    "stork",
    "tapir",
    "toucan",
    "trout",
    "viper",
    "vole",
    "weasel",
    "wren",
    "yak",
    "zebra",
    "finch",
    "gopher",
    "hawk",
    "ibex",
    "kiwi",
    "llama",
    "mink",
    "orca",
    "plover",
    "stoat",
    "tern",
    "vireo",
    "wolf",
};

#define NADJ  (sizeof(adjectives) / sizeof(adjectives[0]))
#define NNOUN (sizeof(nouns) / sizeof(nouns[0]))

void
pgn_name_generate(char out[PGN_MAX_NAME + 1], unsigned attempt)
{
	struct pgn_buf b;
	const char *a, *n;

	a = adjectives[randombytes_uniform(NADJ)];
	n = nouns[randombytes_uniform(NNOUN)];
	pgn_buf_init(&b, PGN_MAX_NAME);
	if (attempt < 8)
		pgn_buf_addf(&b, "%s-%s", a, n);
	else
		pgn_buf_addf(&b, "%s-%s-%u", a, n, attempt);
	if (b.err == PGN_OK)
		memcpy(out, b.data, b.len + 1);
	else
		memcpy(out, "agent", 6);
	pgn_buf_release(&b);
}

/* 1 if 'w' (of 'n' bytes) is one of the 'k' words of 'list'. */
static int
in_list(const char *const *list, size_t k, const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < k; i++)
		if (strlen(list[i]) == n && memcmp(list[i], w, n) == 0)
			return 1;
	return 0;
}

int
pgn_name_is_generated(const char *name)
{
	const char *d1, *d2, *p;

	d1 = strchr(name, '-');
	if (d1 == NULL || !in_list(adjectives, NADJ, name, (size_t)(d1 - name)))
		return 0;
	d2 = strchr(d1 + 1, '-');
	if (d2 == NULL)
		return in_list(nouns, NNOUN, d1 + 1, strlen(d1 + 1));
	if (!in_list(nouns, NNOUN, d1 + 1, (size_t)(d2 - d1 - 1)) ||
	    d2[1] == '\0')
		return 0;
	for (p = d2 + 1; *p != '\0'; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}
