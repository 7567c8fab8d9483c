/*
 * The paths a patch names, in either dialect Pigeon meets: Codex's
 * "*** Begin Patch" and a unified diff. One reader, for the transcript
 * digest (digest/frame.c) and the before-tool lease check
 * (hook/pretool.c, decision 0156).
 */
#include <string.h>

#include "pgn_int.h"

/* A unified diff's path: "a/x" is x, a tab starts a date, /dev/null none. */
static pgn_status
diff_path(const char *p, size_t len, char side, pgn_patch_fn *each, void *arg)
{
	size_t n;

	for (n = 0; n < len && p[n] != '\t'; n++)
		;
	len = n;
	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' '))
		len--;
	if (len == 9 && memcmp(p, "/dev/null", 9) == 0)
		return PGN_OK;
	/* git quotes a path with unusual bytes; its escapes stay */
	if (len >= 2 && p[0] == '"' && p[len - 1] == '"') {
		p++;
		len -= 2;
	}
	if (len > 2 && p[0] == side && p[1] == '/') {
		p += 2;
		len -= 2;
	}
	return each(arg, p, len);
}

/* "diff --git a/X b/X": X, when both sides name the same path. */
static pgn_status
git_header(const char *p, size_t len, pgn_patch_fn *each, void *arg)
{
	size_t n;

	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == ' '))
		len--;
	if (len < 7 || (len - 5) % 2 != 0 || strncmp(p, "a/", 2) != 0)
		return PGN_OK;
	n = (len - 5) / 2;
	if (strncmp(p + 2 + n, " b/", 3) != 0 ||
	    memcmp(p + 2, p + 5 + n, n) != 0)
		return PGN_OK;
	return each(arg, p + 2, n);
}

/* The length of the mark of 'list' that starts line[0..len), else 0. */
static size_t
mark_len(const char *line, size_t len, const char *const *list)
{
	size_t i, n;

	for (i = 0; list[i] != NULL; i++) {
		n = strlen(list[i]);
		if (len > n && strncmp(line, list[i], n) == 0)
			return n;
	}
	return 0;
}

pgn_status
pgn_patch_paths(const char *patch, pgn_patch_fn *each, void *arg)
{
	static const char *const marks[] = {"*** Add File: ",
	    "*** Update File: ", "*** Delete File: ", "*** Move to: ", NULL};
	static const char *const moves[] = {"rename from ", "rename to ",
	    "copy to ", NULL};
	const char *line, *nl;
	size_t n, len;
	pgn_status st = PGN_OK;
	int begin = strstr(patch, PGN_PATCH_BEGIN) != NULL;

	for (line = patch; st == PGN_OK && line != NULL && *line != '\0';
	     line = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		n = mark_len(line, len, marks);
		if (n == 0 && !begin)
			n = mark_len(line, len, moves);
		if (n > 0)
			st = each(arg, line + n, len - n);
		else if (begin)
			continue;
		else if (len > 11 && strncmp(line, "diff --git ", 11) == 0)
			st = git_header(line + 11, len - 11, each, arg);
		else if (nl != NULL && len > 4 &&
		    strncmp(line, "--- ", 4) == 0 &&
		    strncmp(nl + 1, "+++ ", 4) == 0) {
			st = diff_path(line + 4, len - 4, 'a', each, arg);
			line = nl + 1;
			nl = strchr(line, '\n');
			len = nl != NULL ? (size_t)(nl - line) : strlen(line);
			if (st == PGN_OK)
				st = diff_path(line + 4, len - 4, 'b', each,
				    arg);
		}
	}
	return st;
}

/* Does 'p' (inside 's') start the word "apply_patch" as a command? */
static int
command_word(const char *s, const char *p)
{
	static const char word[] = "apply_patch";
	char before, after;

	before = p > s ? p[-1] : ' ';
	after = p[sizeof(word) - 1];
	if (!(before == ' ' || before == '\t' || before == '\n' ||
	        before == ';' || before == '&' || before == '|' ||
	        before == '(' || before == '"' || before == '\''))
		return 0;
	return after == ' ' || after == '\t' || after == '<' || after == '\n';
}

const char *
pgn_patch_in_shell(const char *cmd)
{
	const char *p, *begin;

	for (p = strstr(cmd, "apply_patch"); p != NULL;
	     p = strstr(p + 1, "apply_patch")) {
		if (!command_word(cmd, p))
			continue;
		begin = strstr(p, PGN_PATCH_BEGIN);
		/* A heredoc: "<<" between the command and the patch. */
		if (begin != NULL &&
		    memchr(p, '<', (size_t)(begin - p)) != NULL)
			return begin;
	}
	return NULL;
}
