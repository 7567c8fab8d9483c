/*
 * Fuzz the reader of the record of registrations (setup/record.c,
 * decision 0186): $PIGEON_HOME/installs is a user-writable text file
 * that pigeon uninstall --all trusts. On any bytes as that file:
 *   - never a crash, a leak, undefined behaviour or a hang;
 *   - every entry read has a kind and a place with no tab and no line
 *     end, and a place "-" is read as the user's config (NULL);
 *   - noting a registration makes it read once more than before (or
 *     the same if it was there), and noting its removal takes every
 *     copy away, the other entries staying in their order.
 * The state home is a private directory made once (in $TMPDIR).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "pgn_int.h"
#include "pigeon/setup.h"

static char home[4096];
static char file[4200];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(home, sizeof(home), "%s/pigeon-fuzz-installs.XXXXXX",
	    tmp != NULL && tmp[0] == '/' ? tmp : "/tmp");
	if (mkdtemp(home) == NULL)
		abort();
	snprintf(file, sizeof(file), "%s/installs", home);
	setenv("PIGEON_HOME", home, 1);
	return 0;
}

static size_t
count_of(const struct pgn_install_notes *n, const char *kind, const char *where)
{
	size_t i, k = 0;

	for (i = 0; i < n->n; i++)
		if (strcmp(n->v[i].kind, kind) == 0 && n->v[i].where != NULL &&
		    strcmp(n->v[i].where, where) == 0)
			k++;
	return k;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char kind[] = "claude", where[] = "/fuzz/project";
	struct pgn_install_notes a, b;
	struct pgn_err err;
	size_t i, had;
	FILE *f;

	f = fopen(file, "wb");
	if (f == NULL)
		abort();
	if (size > 0 && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	if (pgn_install_notes(&a, &err) != PGN_OK)
		return 0; /* over the bound, or out of memory: an error */
	for (i = 0; i < a.n; i++) {
		check(a.v[i].kind != NULL);
		check(strchr(a.v[i].kind, '\t') == NULL);
		check(strchr(a.v[i].kind, '\n') == NULL);
		check(a.v[i].where == NULL ||
		    (strchr(a.v[i].where, '\n') == NULL &&
		        strcmp(a.v[i].where, "-") != 0));
	}
	had = count_of(&a, kind, where);
	if (pgn_install_note(kind, where, 0, &err) == PGN_OK &&
	    pgn_install_notes(&b, &err) == PGN_OK) {
		check(count_of(&b, kind, where) == (had > 0 ? had : 1));
		pgn_install_notes_release(&b);
		if (pgn_install_note(kind, where, 1, &err) == PGN_OK &&
		    pgn_install_notes(&b, &err) == PGN_OK) {
			check(count_of(&b, kind, where) == 0);
			check(b.n + had == a.n);
			pgn_install_notes_release(&b);
		}
	}
	pgn_install_notes_release(&a);
	return 0;
}
