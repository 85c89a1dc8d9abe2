/* ctl_reply: the control socket's replies, made from a snapshot of the daemon's state — the
 * status, the sources, and every request's answer or error — touching nothing else. */
#ifndef ENTROPYD_CTL_REPLY_H
#define ENTROPYD_CTL_REPLY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ctl.h"
#include "feed_pipeline.h"
#include "kernel_seed.h"
#include "priv_sandbox.h"
#include "source.h"

/* What a status reply is made of: the daemon's state at one moment (ctl.c takes it). */
struct ctl_snapshot {
	struct ctl_status st;           /* the daemon's own (ctl_ops.status) */
	struct inst_counters totals;    /* every instance's counters, gone ones too */
	size_t instances;               /* instances found and enabled */
	unsigned hz;                    /* the kernel's tick, */
	const char *hz_from;            /* and how it was found */
	long pid;                       /* the daemon's main process */
	const struct priv_sandbox_walls *walls; /* the collector's walls */
	const struct kseed *seed;       /* what the machine offers, read at start */
	bool ready_at_start;            /* the CRNG was ready when the socket opened */
	int needed_at_start;            /* the bits it still waited for then; -1 unknown */
};

/* GetInfo's parameters. */
json_t *ctl_reply_info(void);

/* GetStatus's parameters; NULL if they could not be made. */
json_t *ctl_reply_status(const struct ctl_snapshot *snap);

/* One row of GetSources for instance in: core is what the core says of it (source_view), or
 * NULL where the core has no instance of it (what policy disables); counts: the kernel still
 * counts credit. */
json_t *ctl_reply_source(const struct config *cfg, const struct inst_info *in,
			 const struct src_view *core, bool counts);

/* The row of a name of the configuration (key, as "sources.block.devices") that matches
 * nothing on this host: not open, and what to check. */
json_t *ctl_reply_unmatched(const struct config *cfg, enum src_class cls, const char *pattern,
			    const char *key, bool counts);

/* Reload's answer: rc, what the daemon's reload returned (< 0: the configuration was
 * rejected); errs, its errors and notices. The error to send, or NULL with the notices in
 * *params. */
json_t *ctl_reply_reload(int rc, const struct config_errors *errs, json_t **params);

/* The methods whose answers are the daemon's to make, with the caller's arg. Each returns
 * the method's parameters (NULL: they could not be made); reload returns NULL and sets
 * *params on success, or returns the Varlink error. */
struct ctl_reply_methods {
	json_t *(*status)(void *arg);
	json_t *(*sources)(void *arg);
	json_t *(*reload)(void *arg, json_t **params);
};

/* What became of a request. */
enum ctl_reply_verdict {
	CTL_REPLY_ANSWERED, /* a method ran (its reply may still be an error of its own) */
	CTL_REPLY_MALFORMED, /* not a call this interface knows: an error says why */
	CTL_REPLY_DENIED,    /* a method only root may call, from a client that is not root */
};

/* The reply to one request, msg (len bytes, its NUL terminator not included), from a client
 * that is root or not. Returns false when nothing is to be sent (a oneway call); else *reply
 * is the message to encode (ctl_proto_encode), or NULL if it could not be made. *verdict says what
 * happened, and *method names the method where one was asked for (else NULL), for the log. */
bool ctl_reply_request(const char *msg, size_t len, bool root,
		       const struct ctl_reply_methods *m, void *arg, json_t **reply,
		       enum ctl_reply_verdict *verdict, const char **method);

#endif
