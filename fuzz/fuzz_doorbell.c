/*
 * Fuzz the sessions-file parser of the doorbell, pgn_doorbell_parse
 * (decision 0176): any bytes another process may leave in Claude Code's
 * sessions directory. It never crashes, reads no further than the text,
 * and what it hands on is bounded and NUL-terminated: a pid only when it
 * is the file's own, a socket path that fits a socket address or none.
 */

#include "fuzz.h"

#include "pigeon/hosts.h"
#include "pigeon/pigeon.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgn_doorbell_file f;
	char *text;
	int hit;

	if (size > PGN_DOORBELL_FILE_MAX)
		return 0;
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	hit = pgn_doorbell_parse(text, "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0",
	    1234, &f);
	check(hit == 0 || hit == 1);
	check(f.pid == 0 || f.pid == 1234);
	check(memchr(f.start, '\0', sizeof(f.start)) != NULL);
	check(memchr(f.status, '\0', sizeof(f.status)) != NULL);
	check(memchr(f.sock, '\0', sizeof(f.sock)) != NULL);
	check(!f.sock_long || f.sock[0] == '\0');
	if (!hit)
		check(f.pid == 0 && f.start[0] == '\0' && f.sock[0] == '\0');
	free(text);
	return 0;
}
