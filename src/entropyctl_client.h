/* entropyctl_client: what entropyctl's commands share — the exit statuses, the connection to
 * the control socket, a call, and reading a reply tolerant of what a newer daemon adds or an
 * older one lacks. entropyctl.c has the commands and main(), entropyctl_watch.c the live
 * view. */
#ifndef ENTROPYD_ENTROPYCTL_CLIENT_H
#define ENTROPYD_ENTROPYCTL_CLIENT_H

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ctl_proto.h"
#include "util.h"

/* Exit statuses, as --help lists them. */
enum {
	XC_OK = 0,
	XC_REFUSED = 1,     /* reload refused: the configuration is invalid */
	XC_USAGE = 2,
	XC_NOT_RUNNING = 3, /* no socket, or nothing answers on it */
	XC_DENIED = 4,      /* the socket or the method is not for this user */
	XC_PROTOCOL = 5,    /* no reply in time, or one that makes no sense */
};

struct conn {
	const char *path;
	int fd;
	int timeout_ms;
	int err;     /* why connect(2) failed; 0 if it did not */
	bool closed; /* the daemon closed the connection before it replied */
	char *buf; /* received bytes not yet consumed */
	size_t len, cap;
};

/* "entropyctl: " and the message, on stderr. */
void entropyctl_client_errx_msg(const char *fmt, ...) PRINTF_LIKE(1, 2);
/* From now on the messages of entropyctl_client_errx_msg go into buf (the last one, without "entropyctl: "),
 * not to stderr; NULL: to stderr again. */
void entropyctl_client_errx_into(char *buf, size_t size);

/* Connect to path within timeout_s; XC_OK or the exit status, said once on stderr. */
int entropyctl_client_open(struct conn *c, const char *path, double timeout_s);
void entropyctl_client_close(struct conn *c);
/* After entropyctl_client_open or a call returned rc: is the daemon simply not there (no socket, a socket
 * nothing answers on, or one that closed as the daemon went), rather than unreachable for
 * another reason (a path that is not a socket, no permission)? */
bool entropyctl_client_absent(const struct conn *c, int rc);
/* Send one call and read its reply into *r. XC_OK (r may hold an error reply) or an exit
 * status, said once. */
int entropyctl_client_call(struct conn *c, const char *method, json_t *params, struct ctl_reply *r);
/* An error reply, said once, as an exit status. */
int entropyctl_client_reply_failed(const char *method, const struct ctl_reply *r);
/* Call a method that must succeed; its parameters go to *out (a new reference). */
int entropyctl_client_fetch(struct conn *c, const char *method, json_t **out);

/* Connect, ask GetStatus and GetSources, close: XC_OK with both replies (new references),
 * or the exit status with why in why (not on stderr) and both NULL; *c keeps what
 * entropyctl_client_absent() reads. */
int entropyctl_client_fetch_snapshot(struct conn *c, const char *path, double timeout_s, json_t **st,
		   json_t **src, char *why, size_t size);

/* A string as it may be printed: whatever the daemon at the other end sends, no byte of it
 * reaches the terminal as a control sequence. Valid until the eighth call after (in the
 * same file: each file that includes this has its own ring). */
static inline const char *s_(const json_t *o, const char *key)
{
	static char ring[8][1024];
	static unsigned next;
	const char *s = json_string_value(json_object_get(o, key));
	char *out = ring[next++ % 8];

	util_printable(out, sizeof(ring[0]), s ? s : "?");
	return out;
}

static inline long long i_(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* NaN for null or missing. */
static inline double f_(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The noun of a count, singular for 1: N(n, "event"). */
#define N(n, one) util_plural((unsigned long long)(n), one, one "s")

static inline bool b_(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

/* "1d 02h 03m", "4m 05s": an uptime. */
void entropyctl_client_print_duration(FILE *f, long long s);
/* An instance's health, "ok", or the state with its last failure: at most size bytes. */
void entropyctl_client_health_text(const json_t *src, char *buf, size_t size);
/* Why an instance's credit does not grow, short; "-" while it does. */
const char *entropyctl_client_why_not(const json_t *src);

#endif
