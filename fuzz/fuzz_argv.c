/*
 * Fuzz the pre-parse of common options before the command (cli/cli.c
 * cli_global_parse, decision 0180): pigeon --db X --json agents. The
 * input is argv[1..], its arguments separated by NUL bytes (at most
 * FUZZ_ARGS). On any arguments:
 *   - never a crash, undefined behaviour or a read past argv;
 *   - the answer is -1 (a usage line) or the index of the command word,
 *     1..argc; at that index, when below argc, is an argument that does
 *     not start with '-', or --help, -h or --version;
 *   - every value taken points into the argument that held it (after
 *     "--NAME=") or is a whole argument; --json was set only if an
 *     argument before the command is exactly "--json".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "cli.h"

#define FUZZ_ARGS 64

/* Does 'p' point into one of argv[1..n-1] (its text, not past it)? */
static int
inside(char **argv, int n, const char *p)
{
	int i;

	for (i = 1; i < n; i++)
		if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[FUZZ_ARGS + 2], *s = fuzz_cstr(data, size), *p;
	static char name[] = "pigeon";
	int argc = 1, r, i, json = 0;

	if (s == NULL)
		return 0;
	argv[0] = name;
	/* NUL-separated: fuzz_cstr's copy keeps the NULs inside. */
	p = s;
	while (argc <= FUZZ_ARGS && p <= s + size && size > 0) {
		argv[argc++] = p;
		p += strlen(p) + 1;
	}
	argv[argc] = NULL;
	memset(&cli_global, 0, sizeof(cli_global));
	r = cli_global_parse(argc, argv);
	check(r == -1 || (r >= 1 && r <= argc));
	if (r >= 1 && r < argc)
		check(argv[r][0] != '-' || strcmp(argv[r], "--help") == 0 ||
		    strcmp(argv[r], "-h") == 0 ||
		    strcmp(argv[r], "--version") == 0);
	check(cli_global.db == NULL || inside(argv, argc, cli_global.db));
	check(cli_global.project == NULL ||
	    inside(argv, argc, cli_global.project));
	check(cli_global.color == NULL || inside(argv, argc, cli_global.color));
	for (i = 1; i < (r < 0 ? argc : r); i++)
		json |= strcmp(argv[i], "--json") == 0;
	check(!cli_global.json || json);
	free(s);
	return 0;
}
