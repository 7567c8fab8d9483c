/*
 * The scope key of a store that several machines share: the normalised
 * URL of the repository's "origin" remote, read from its git config
 * without running git; the root path without one (decision 0117).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pgn_int.h"

/* How a message about an unusable remote ends. */
#define KEY_FALLBACK "the scope key is the root path"
#define STR_(x)      #x
#define STR(x)       STR_(x)

static int
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int
is_alnum(char c)
{
	return is_alpha(c) || (c >= '0' && c <= '9');
}

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* A git config being parsed: the text, where we are, the line number. */
struct cfg {
	const char *s;
	size_t len, pos, line;
};

static int
at_end(const struct cfg *c)
{
	return c->pos >= c->len;
}

static char
peek(const struct cfg *c)
{
	return at_end(c) ? '\0' : c->s[c->pos];
}

static void
skip_line(struct cfg *c)
{
	while (!at_end(c) && c->s[c->pos] != '\n')
		c->pos++;
}

/*
 * A section header, '[' taken: "[name]", "[name "sub"]" or the old
 * "[name.sub]". Sets '*origin' when it is [remote "origin"] (section
 * names fold case; a quoted subsection does not, an old-style one does,
 * as in git). 0 if it is not a header git would take.
 */
static int
section(struct cfg *c, int *origin)
{
	char name[16], sub[16];
	size_t n = 0, m = 0;
	int long_name = 0, long_sub = 0;
	char ch;

	*origin = 0;
	for (;;) {
		ch = peek(c);
		if (!is_alnum(ch) && ch != '-' && ch != '.')
			break;
		if (n + 1 < sizeof(name))
			name[n++] = lower(ch);
		else
			long_name = 1;
		c->pos++;
	}
	name[n] = '\0';
	if (n == 0)
		return 0;
	if (peek(c) == ']') {
		c->pos++;
		*origin = !long_name && strcmp(name, "remote.origin") == 0;
		return 1;
	}
	if (!is_space(peek(c)))
		return 0;
	while (is_space(peek(c)))
		c->pos++;
	if (peek(c) != '"')
		return 0;
	c->pos++;
	for (;;) {
		if (at_end(c) || c->s[c->pos] == '\n')
			return 0;
		ch = c->s[c->pos++];
		if (ch == '"')
			break;
		if (ch == '\\') {
			if (at_end(c) || c->s[c->pos] == '\n')
				return 0;
			ch = c->s[c->pos++];
		}
		if (m + 1 < sizeof(sub))
			sub[m++] = ch;
		else
			long_sub = 1;
	}
	sub[m] = '\0';
	if (peek(c) != ']')
		return 0;
	c->pos++;
	*origin = !long_name && !long_sub && strcmp(name, "remote") == 0 &&
	    strcmp(sub, "origin") == 0;
	return 1;
}

/*
 * A value, after '=': leading blanks skipped, trailing ones dropped,
 * each inner blank a space, "..." quoting, the escapes \" \\
 * \n \t \b, a backslash-newline joining lines, ';' and '#' starting a
 * comment outside quotes (git's rules). Kept in 'out' only when 'keep'.
 * 0 if malformed (an open quote at the end of a line, another escape).
 */
static int
value(struct cfg *c, struct pgn_buf *out, int keep)
{
	size_t blanks = 0;
	int quote = 0, comment = 0;
	char ch;

	while (is_space(peek(c)))
		c->pos++;
	for (;;) {
		if (at_end(c))
			return !quote;
		ch = c->s[c->pos++];
		if (ch == '\0')
			return 0;
		if (ch == '\n') {
			if (quote)
				return 0;
			c->line++;
			return 1;
		}
		if (comment)
			continue;
		if (is_space(ch) && !quote) {
			if (out->len > 0)
				blanks++;
			continue;
		}
		if (!quote && (ch == ';' || ch == '#')) {
			comment = 1;
			continue;
		}
		for (; blanks > 0; blanks--)
			if (keep)
				pgn_buf_add(out, " ", 1);
		if (ch == '\\') {
			if (at_end(c))
				return 0;
			ch = c->s[c->pos++];
			switch (ch) {
			case '\n':
				c->line++;
				continue;
			case 't':
				ch = '\t';
				break;
			case 'b':
				ch = '\b';
				break;
			case 'n':
				ch = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return 0;
			}
		} else if (ch == '"') {
			quote = !quote;
			continue;
		}
		if (keep)
			pgn_buf_add(out, &ch, 1);
	}
}

pgn_status
pgn_gitconfig_origin(const char *text, size_t len, char **url, size_t *line)
{
	struct cfg c = {text, len, 0, 1};
	struct pgn_buf v;
	char name[8]; /* "url" and a bit: longer names are not it */
	size_t n;
	int origin = 0, keep;

	*url = NULL;
	*line = 0;
	pgn_buf_init(&v, PGN_MAX_REMOTE_URL);
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		c.pos = 3;
	while (!at_end(&c)) {
		char ch = c.s[c.pos];

		if (ch == '\n') {
			c.line++;
			c.pos++;
		} else if (is_space(ch)) {
			c.pos++;
		} else if (ch == '#' || ch == ';') {
			skip_line(&c);
		} else if (ch == '[') {
			c.pos++;
			if (!section(&c, &origin))
				goto bad;
		} else if (is_alpha(ch)) {
			n = 0;
			while (is_alnum(peek(&c)) || peek(&c) == '-') {
				if (n < sizeof(name) - 1)
					name[n] = lower(c.s[c.pos]);
				n++;
				c.pos++;
			}
			name[n < sizeof(name) - 1 ? n : sizeof(name) - 1] =
			    '\0';
			if (n >= sizeof(name) - 1)
				name[0] = '\0';
			while (is_space(peek(&c)))
				c.pos++;
			keep =
			    origin && *url == NULL && strcmp(name, "url") == 0;
			if (peek(&c) == '=') {
				size_t vline = c.line;

				c.pos++;
				pgn_buf_reset(&v);
				if (!value(&c, &v, keep))
					goto bad;
				if (v.err == PGN_ETOOBIG) {
					pgn_buf_release(&v);
					*line = vline;
					return PGN_ETOOBIG;
				}
				if (keep) {
					*url = pgn_buf_take(&v, NULL);
					if (*url == NULL)
						goto nomem;
				}
			} else if (at_end(&c) || peek(&c) == '\n' ||
			    peek(&c) == '#' || peek(&c) == ';') {
				/* A boolean "true"; a url needs a value. */
				if (keep)
					goto bad;
				skip_line(&c);
			} else {
				goto bad;
			}
		} else {
			goto bad;
		}
	}
	pgn_buf_release(&v);
	return PGN_OK;
bad:
	*line = c.line;
	free(*url);
	*url = NULL;
	pgn_buf_release(&v);
	return PGN_EINVAL;
nomem:
	pgn_buf_release(&v);
	return PGN_ENOMEM;
}

/* A host name, folded: letters, digits, '.', '-', '_'; or "[v6]". */
static int
add_host(struct pgn_buf *b, const char *h, size_t n)
{
	size_t i;
	char ch;

	if (n == 0)
		return 0;
	if (h[0] == '[') {
		if (n < 3 || h[n - 1] != ']')
			return 0;
		for (i = 1; i + 1 < n; i++)
			if (!is_alnum(h[i]) && h[i] != ':' && h[i] != '.')
				return 0;
	} else {
		for (i = 0; i < n; i++)
			if (!is_alnum(h[i]) && h[i] != '.' && h[i] != '-' &&
			    h[i] != '_')
				return 0;
	}
	for (i = 0; i < n; i++) {
		ch = lower(h[i]);
		pgn_buf_add(b, &ch, 1);
	}
	return 1;
}

/*
 * The authority "[user[:password]@]host[:port]" (the user, a password
 * and the port dropped) appended to 'b' as the host. 0 if no host.
 */
static int
add_authority(struct pgn_buf *b, const char *a, size_t n)
{
	const char *at, *end = a + n, *colon;

	at = NULL;
	for (const char *p = a; p < end; p++)
		if (*p == '@')
			at = p;
	if (at != NULL)
		a = at + 1;
	if (a < end && *a == '[') {
		const char *close = memchr(a, ']', (size_t)(end - a));

		if (close == NULL)
			return 0;
		/* "[host:port]" (git's scp form) or an IPv6 "[::1]". */
		colon = memchr(a, ':', (size_t)(close - a));
		if (colon != NULL &&
		    memchr(colon + 1, ':', (size_t)(close - colon - 1)) == NULL)
			return add_host(b, a + 1, (size_t)(colon - a - 1));
		return add_host(b, a, (size_t)(close - a + 1));
	}
	colon = memchr(a, ':', (size_t)(end - a));
	return add_host(b, a, (size_t)((colon != NULL ? colon : end) - a));
}

/*
 * The repository path: separators collapsed, no leading or trailing '/',
 * one ".git" suffix dropped. 0 if nothing is left.
 */
static int
add_path(struct pgn_buf *b, const char *p, size_t n)
{
	size_t start = b->len, i;
	char prev = '/'; /* a '/' first, or after a '/', is dropped */

	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n >= 4 && memcmp(p + n - 4, ".git", 4) == 0)
		n -= 4;
	while (n > 0 && p[n - 1] == '/')
		n--;
	for (i = 0; i < n; i++) {
		if (p[i] == '/' && prev == '/')
			continue;
		pgn_buf_add(b, p + i, 1);
		prev = p[i];
	}
	return b->err != PGN_OK || b->len > start;
}

pgn_status
pgn_remote_key(const char *url, char **key, struct pgn_err *err)
{
	struct pgn_buf b;
	const char *sep, *slash, *colon, *auth, *path;
	size_t len = strlen(url), i;
	int ok;

	*key = NULL;
	if (len == 0) {
		return pgn_err_set(err, PGN_EINVAL, "is empty");
	}
	if (len > PGN_MAX_REMOTE_URL) {
		return pgn_err_set(err, PGN_ETOOBIG,
		    "is over " STR(PGN_MAX_REMOTE_URL) " bytes");
	}
	for (i = 0; i < len; i++)
		if ((unsigned char)url[i] < 0x20 || url[i] == 0x7f ||
		    url[i] == ' ') {
			return pgn_err_set(err, PGN_EINVAL,
			    "holds a space or a control character");
		}
	if (!pgn_utf8_valid(url, len)) {
		return pgn_err_set(err, PGN_EINVAL, "is not valid UTF-8");
	}
	/* git's "HELPER::ADDRESS": scheme characters, then "::". */
	for (i = 0; is_alnum(url[i]) || url[i] == '+' || url[i] == '-' ||
	     url[i] == '.';
	     i++)
		;
	if (i > 0 && strncmp(url + i, "::", 2) == 0) {
		return pgn_err_set(err, PGN_EINVAL,
		    "names a remote helper (HELPER::ADDRESS)");
	}
	pgn_buf_init(&b, PGN_MAX_PATH);
	sep = strstr(url, "://");
	slash = strchr(url, '/');
	colon = strchr(url, ':');
	if (sep != NULL && (slash == NULL || sep < slash)) {
		/* scheme://authority/path: a scheme of git's URL syntax. */
		ok = is_alpha(url[0]);
		for (i = 1; ok && url + i < sep; i++)
			ok = is_alnum(url[i]) || url[i] == '+' ||
			    url[i] == '-' || url[i] == '.';
		if (!ok) {
			pgn_err_set(err, PGN_EINVAL,
			    "has a scheme that is not one");
			goto refuse;
		}
		if ((size_t)(sep - url) == 4 && lower(url[0]) == 'f' &&
		    lower(url[1]) == 'i' && lower(url[2]) == 'l' &&
		    lower(url[3]) == 'e') {
			pgn_err_set(err, PGN_EINVAL,
			    "is a local path (file://), not shared by machines");
			goto refuse;
		}
		auth = sep + 3;
		path = strchr(auth, '/');
		if (path == NULL)
			path = auth + strlen(auth);
		if (!add_authority(&b, auth, (size_t)(path - auth))) {
			pgn_err_set(err, PGN_EINVAL,
			    "names no host, or one that is not a host name");
			goto refuse;
		}
	} else if (colon != NULL &&
	    (slash == NULL || colon < slash ||
	        (url[0] == '[' && strstr(url, "]:") != NULL))) {
		/* scp-like [user@]host:path, or [user@host:port]:path. */
		if (url[0] == '[')
			colon = strstr(url, "]:");
		if (colon != NULL && url[0] == '[')
			colon++;
		if (colon == NULL ||
		    !add_authority(&b, url, (size_t)(colon - url))) {
			pgn_err_set(err, PGN_EINVAL,
			    "names no host, or one that is not a host name");
			goto refuse;
		}
		path = colon + 1;
	} else {
		pgn_err_set(err, PGN_EINVAL,
		    "is a local path, not shared by machines");
		goto refuse;
	}
	pgn_buf_add(&b, "/", 1);
	if (!add_path(&b, path, strlen(path))) {
		pgn_err_set(err, PGN_EINVAL, "names no repository path");
		goto refuse;
	}
	if (b.err == PGN_ENOMEM) {
		pgn_buf_release(&b);
		return pgn_err_set(err, PGN_ENOMEM, "out of memory");
	}
	*key = pgn_buf_take(&b, NULL);
	return *key == NULL ? pgn_err_set(err, PGN_ENOMEM, "out of memory") :
	                      PGN_OK;
refuse:
	pgn_buf_release(&b);
	return PGN_EINVAL;
}

/* dir/name as a new string (NULL on ENOMEM or too long). */
static char *
join(const char *dir, const char *name)
{
	return pgn_path_join(dir, name);
}

/* A small file's text, trailing blanks cut; NULL if absent or unusable. */
static char *
read_small(const char *path)
{
	struct pgn_err err;
	char *data = NULL, *text;
	size_t len = 0;
	mode_t mode;
	int exists = 0;

	if (pgn_read_file(path, PGN_MAX_PATH, &data, &len, &exists, &mode,
	        &err) != PGN_OK ||
	    !exists) {
		free(data);
		return NULL;
	}
	while (len > 0 &&
	    (data[len - 1] == '\n' || data[len - 1] == '\r' ||
	        data[len - 1] == ' ' || data[len - 1] == '\t'))
		len--;
	text = pgn_strndup(data, len);
	free(data);
	return text;
}

/* realpath of 'rel' taken from directory 'base' unless absolute. */
static char *
resolve(const char *base, const char *rel)
{
	char *joined, *real;

	if (rel[0] == '/')
		return realpath(rel, NULL);
	joined = join(base, rel);
	if (joined == NULL)
		return NULL;
	real = realpath(joined, NULL);
	free(joined);
	return real;
}

/*
 * The config file holding the repository's remotes: .git/config; for a
 * .git file (a submodule, a separate git dir) the config of the git dir
 * it names, or of that dir's commondir; for a bare repository (the
 * scope of its linked worktrees) root/config. NULL in '*path' if none.
 */
static pgn_status
config_path(const char *root, char **path)
{
	char *dotgit = NULL, *text = NULL, *gitdir = NULL, *cd = NULL;
	char *common = NULL, *head = NULL;
	struct stat sb;
	pgn_status rc = PGN_ENOMEM;

	*path = NULL;
	dotgit = join(root, ".git");
	if (dotgit == NULL)
		goto out;
	if (lstat(dotgit, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		*path = join(dotgit, "config");
	} else if (lstat(dotgit, &sb) == 0 && S_ISREG(sb.st_mode)) {
		text = read_small(dotgit);
		if (text == NULL || strncmp(text, "gitdir:", 7) != 0) {
			rc = PGN_OK;
			goto out;
		}
		gitdir = resolve(root, text + 7 + strspn(text + 7, " \t"));
		if (gitdir == NULL) {
			rc = PGN_OK;
			goto out;
		}
		cd = join(gitdir, "commondir");
		if (cd == NULL)
			goto out;
		free(text);
		text = read_small(cd);
		if (text != NULL)
			common = resolve(gitdir, text);
		*path = join(common != NULL ? common : gitdir, "config");
	} else {
		head = join(root, "HEAD");
		if (head == NULL)
			goto out;
		if (lstat(head, &sb) == 0 && S_ISREG(sb.st_mode))
			*path = join(root, "config");
		else {
			rc = PGN_OK;
			goto out;
		}
	}
	rc = *path == NULL ? PGN_ENOMEM : PGN_OK;
out:
	free(dotgit);
	free(text);
	free(gitdir);
	free(cd);
	free(common);
	free(head);
	return rc;
}

pgn_status
pgn_scope_key(const char *root, char **key, struct pgn_err *warn)
{
	struct pgn_err err, reason;
	char *cfg = NULL, *data = NULL, *url = NULL;
	size_t len = 0, line = 0;
	mode_t mode;
	int exists = 0;
	pgn_status rc, st;

	*key = NULL;
	pgn_err_clear(warn);
	/*
	 * "" (global) and a key itself (a bound session's scope, read back
	 * from the store: a key from a remote never starts with '/') stay.
	 */
	if (root[0] != '/')
		goto root;
	rc = config_path(root, &cfg);
	if (rc != PGN_OK)
		goto out;
	if (cfg == NULL)
		goto root;
	st = pgn_read_file(cfg, PGN_MAX_GITCONFIG, &data, &len, &exists, &mode,
	    &err);
	if (st == PGN_ENOMEM) {
		rc = st;
		goto out;
	}
	if (st == PGN_ETOOBIG)
		(void)pgn_err_set(warn, PGN_OK,
		    "'%s' is over %d bytes: " KEY_FALLBACK, cfg,
		    PGN_MAX_GITCONFIG);
	else if (st == PGN_EINVAL)
		(void)pgn_err_set(warn, PGN_OK,
		    "'%s' is not a regular file: " KEY_FALLBACK, cfg);
	else if (st != PGN_OK)
		(void)pgn_err_set(warn, PGN_OK, "%s: " KEY_FALLBACK, err.msg);
	if (st != PGN_OK)
		goto root;
	if (!exists)
		goto root;
	st = pgn_gitconfig_origin(data, len, &url, &line);
	if (st == PGN_ENOMEM) {
		rc = st;
		goto out;
	}
	if (st == PGN_ETOOBIG) {
		(void)pgn_err_set(warn, PGN_OK,
		    "the origin url in '%s' (line %zu) is over %d bytes: " KEY_FALLBACK,
		    cfg, line, PGN_MAX_REMOTE_URL);
		goto root;
	}
	if (st != PGN_OK) {
		(void)pgn_err_set(warn, PGN_OK,
		    "'%s' line %zu is not valid git config: " KEY_FALLBACK
		    "; fix the file (git config -l shows the error)",
		    cfg, line);
		goto root;
	}
	if (url == NULL)
		goto root;
	st = pgn_remote_key(url, key, &reason);
	if (st == PGN_ENOMEM) {
		rc = st;
		goto out;
	}
	if (st == PGN_OK) {
		rc = PGN_OK;
		goto out;
	}
	/* Never the url itself: it may hold a password or a token. */
	(void)pgn_err_set(warn, PGN_OK,
	    "the origin url in '%s' %s: " KEY_FALLBACK, cfg, reason.msg);
root:
	*key = pgn_strdup(root);
	rc = *key == NULL ? PGN_ENOMEM : PGN_OK;
out:
	if (rc != PGN_OK) {
		free(*key);
		*key = NULL;
		pgn_err_clear(warn);
	}
	free(cfg);
	free(data);
	free(url);
	return rc;
}
