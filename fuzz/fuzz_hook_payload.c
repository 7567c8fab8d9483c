/*
 * Fuzz the hook's input side: hook_read_json over a pipe (bounded read,
 * the JSON object scanner), pgn_payload_parse with detection and with
 * every explicit HOST EVENT, and pgn_payload_detect. Checks what the hook
 * relies on afterwards: a settled host and event, a session key
 * "<host>:<id>" that fits, a turn key named after the event, an
 * absolute project directory.
 */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sodium.h>

#include "fuzz.h"
#include "hook_int.h"
#include "hookio.h"
#include "pigeon/hosts.h"

/* The most a pipe holds without a reader: keep the writer non-blocking. */
#define PIPE_MAX 60000

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (sodium_init() < 0)
		abort();
	return 0;
}

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The bounded reader: whatever it returns is a prefix of the input. */
static void
fuzz_read(const uint8_t *data, size_t size, size_t max)
{
	char *buf = NULL;
	size_t len = 0, n = size < PIPE_MAX ? size : PIPE_MAX;
	pgn_status st;
	int fd[2];

	if (pipe(fd) != 0)
		return;
	(void)fcntl(fd[1], F_SETFL, O_NONBLOCK);
	if (n > 0 && write(fd[1], data, n) != (ssize_t)n) {
		close(fd[0]);
		close(fd[1]);
		return;
	}
	close(fd[1]); /* EOF after the data: no idle wait */
	st = hook_read_json(fd[0], max, 200, mono_ms() + 2000, &buf, &len);
	close(fd[0]);
	check(st == PGN_OK || st == PGN_EINVAL || st == PGN_ETOOBIG);
	check(len <= n);
	check(len == 0 || (buf != NULL && memcmp(buf, data, len) == 0));
	check(buf == NULL || buf[len] == '\0');
	/*
	 * The scanner counts brackets without matching their kinds, so
	 * "{]" ends an object too; the JSON parser refuses it next.
	 */
	if (st == PGN_OK)
		check(len > 0 && len <= max &&
		    (buf[len - 1] == '}' || buf[len - 1] == ']'));
	free(buf);
}

static void
check_input(const struct hook_opts *o, const struct pgn_payload *in,
    pgn_status st, const char *why)
{
	const struct pgn_host_info *hi;
	size_t n;

	if (st != PGN_OK) {
		check(st == PGN_EINVAL);
		check(why[0] != '\0');
		return;
	}
	check(in->host >= 0 && in->host < PGN_NHOSTS);
	if (o->host != PGN_HOST_NONE)
		check(in->host == o->host);
	if (in->skip) {
		check(in->host == PGN_HOST_CLAUDE);
		return;
	}
	if (in->ignore) {
		check(o->event == PGN_EVENT_NONE);
		return;
	}
	check(in->event >= 0 && in->event < PGN_NEVENTS);
	if (o->event != PGN_EVENT_NONE)
		check(in->event == o->event);
	hi = pgn_host_get(in->host);
	n = strlen(hi->name);
	check(strncmp(in->session, hi->name, n) == 0 && in->session[n] == ':');
	check(strlen(in->session) > n + 1 &&
	    strlen(in->session) <= PGN_MAX_SESSION_KEY);
	n = strlen(hi->events[in->event]);
	/*
	 * Tool (before or after), stop, idle events have no turn key; the
	 * others always one.
	 */
	if (in->event == PGN_EVENT_AFTER_TOOL || in->event == PGN_EVENT_STOP ||
	    in->event == PGN_EVENT_IDLE || in->event == PGN_EVENT_BEFORE_TOOL)
		check(in->turn[0] == '\0' && in->turn_window_ms == 0);
	else
		check(strncmp(in->turn, hi->events[in->event], n) == 0 &&
		    in->turn[n] == ':' && in->turn[n + 1] != '\0');
	check(in->dir == NULL || in->dir[0] == '/');
	check(in->prompt == NULL || in->event == PGN_EVENT_PROMPT);
	check(in->turn_window_ms == 0 ||
	    in->turn_window_ms == PGN_HOOK_DUP_WINDOW_MS);
}

static void
fuzz_parse(const char *buf, size_t len, pgn_host h, pgn_event e)
{
	struct hook_opts o;
	struct pgn_payload in;
	char why[PGN_MAX_ERRMSG];
	pgn_status st;

	memset(&o, 0, sizeof(o));
	o.host = h;
	o.event = e;
	why[0] = '\0';
	st =
	    pgn_payload_parse(buf, len, o.host, o.event, &in, why, sizeof(why));
	check_input(&o, &in, st, why);
	pgn_payload_release(&in);
}

/* Detection on a fuzzed event name and keys: always one known host. */
static void
fuzz_detect(const uint8_t *data, size_t size)
{
	static const char *const keys[5] = {"cursor_version", "timestamp",
	    "turn_id", "model", "permission_mode"};
	char event[64];
	size_t n, i;
	unsigned f;
	pgn_host h;
	cJSON *root;
	char *json;

	if (size == 0)
		return;
	f = data[0];
	n = size - 1 < sizeof(event) - 1 ? size - 1 : sizeof(event) - 1;
	memcpy(event, data + 1, n);
	event[n] = '\0';
	root = cJSON_CreateObject();
	if (root == NULL)
		return;
	if (!(f & 32))
		cJSON_AddStringToObject(root, "hook_event_name", event);
	for (i = 0; i < 5; i++)
		if (f & (1u << i))
			cJSON_AddStringToObject(root, keys[i], "x");
	json = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (json == NULL)
		return;
	h = pgn_payload_detect(json, strlen(json));
	free(json);
	check(h >= 0 && h < PGN_NHOSTS);
	if ((f & 1) ||
	    (!(f & 32) && event[0] != '\0' &&
	        pgn_event_by_name(PGN_HOST_CURSOR, event) != PGN_EVENT_NONE))
		check(h == PGN_HOST_CURSOR);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;
	int h, e;

	if (size > HOOK_MAX_STDIN)
		return 0;
	fuzz_read(data, size, HOOK_MAX_STDIN);
	fuzz_read(data, size, 64);
	fuzz_detect(data, size);
	/* As hook_read_json leaves it: NUL-terminated. */
	buf = fuzz_cstr(data, size);
	if (buf == NULL)
		return 0;
	fuzz_parse(buf, size, PGN_HOST_NONE, PGN_EVENT_NONE);
	for (h = 0; h < PGN_NHOSTS; h++)
		for (e = 0; e < PGN_NEVENTS; e++)
			if (pgn_host_get((pgn_host)h)->events[e] != NULL)
				fuzz_parse(buf, size, (pgn_host)h,
				    (pgn_event)e);
	free(buf);
	return 0;
}
