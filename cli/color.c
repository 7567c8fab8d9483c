/*
 * Colour on a terminal only (docs/decisions/0123): --color, NO_COLOR,
 * TERM=dumb, and never with --json. Only this file holds escape codes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int color_on;

static const char *const sgr[] = {
    [CLI_SGR_RESET] = "\033[0m",
    [CLI_SGR_BOLD] = "\033[1m",
    [CLI_SGR_DIM] = "\033[2m",
    [CLI_SGR_OK] = "\033[32m",
    [CLI_SGR_WARN] = "\033[33m",
    [CLI_SGR_BAD] = "\033[1;31m",
    [CLI_SGR_NAME] = "\033[36m",
};

int
cli_color_arg(struct cli *c, const char *arg)
{
	if (strcmp(arg, "auto") == 0)
		c->color = CLI_COLOR_AUTO;
	else if (strcmp(arg, "always") == 0)
		c->color = CLI_COLOR_ALWAYS;
	else if (strcmp(arg, "never") == 0)
		c->color = CLI_COLOR_NEVER;
	else
		return -1;
	return 0;
}

void
cli_color_setup(const struct cli *c)
{
	const char *nc, *term;

	if (c->json || c->color == CLI_COLOR_NEVER) {
		color_on = 0;
		return;
	}
	if (c->color == CLI_COLOR_ALWAYS) {
		color_on = 1;
		return;
	}
	nc = getenv("NO_COLOR");
	term = getenv("TERM");
	color_on = isatty(STDOUT_FILENO) && (nc == NULL || *nc == '\0') &&
	    (term == NULL || strcmp(term, "dumb") != 0);
}

int
cli_color_on(void)
{
	return color_on;
}

const char *
cli_sgr(enum cli_sgr what)
{
	if (!color_on || (size_t)what >= sizeof(sgr) / sizeof(sgr[0]))
		return "";
	return sgr[what];
}
