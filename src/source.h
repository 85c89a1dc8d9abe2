/* source: the source core. For every class it owns the instances its driver finds: the table
 * of them by name, each one's state, the policy gate before one is opened, retries with a
 * backoff, rescans on a notifier's word or on a timer, the reconciliation on reload, and
 * attaching each to the pipeline. A driver finds candidates, opens, reads and closes them;
 * the rules that decide between instances of one class (stacking) stay the driver's own.
 * Sources only produce timestamped samples (feed_pipeline_sample); they never decide credit. */
#ifndef ENTROPYD_SOURCE_H
#define ENTROPYD_SOURCE_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "log.h"
#include "source_classes.h"

struct source;
struct src_inst;
struct source_names;

/* Where an instance stands. */
enum src_status {
	SRC_CLOSED,  /* found, not open: not tried yet, or closed by the driver's rules */
	SRC_OPEN,    /* the driver reads it */
	SRC_RETRY,   /* could not be opened now: tried again at retry_at, backing off */
	SRC_WAIT,    /* could not be opened: tried again when a rescan or the driver's notifier
		      * says it changed, not on a timer */
	SRC_SKIPPED, /* disabled by policy or refused by the configuration: until a reload */
	SRC_ENDED,   /* a stream read to its end: not read again */
};

struct source_ops {
	const char *name; /* the class name used in the config: "input", "block", "network" */
	enum src_class cls;
	size_t inst_size;        /* the driver's part of each instance (src_inst.drv), zeroed */
	unsigned retry_min_s;    /* SRC_RETRY: first retry after this, */
	unsigned retry_max_s;    /* doubling up to this */
	unsigned rescan_delay_ms; /* a notifier's burst settles this long before the rescan */

	/* The class as a whole: its notifier, its backend, and its first source_rescan(). -1:
	 * a fatal start-up error (already logged). At stop every instance is forgotten first. */
	int (*start)(struct source *src);
	void (*stop)(struct source *src);
	/* Find every candidate there now: source_found() for each. False: could not look, and
	 * nothing is taken for gone. */
	bool (*scan)(struct source *src);
	/* Open one instance that policy allows: SRC_OPEN, SRC_RETRY, SRC_WAIT, SRC_SKIPPED or
	 * SRC_ENDED (with the state set and anything said). */
	enum src_status (*open)(struct src_inst *si);
	/* Stop reading and release what open took; a no-op for what is not open (it is called
	 * before any instance is forgotten). The pipeline instance stays attached. */
	void (*close)(struct src_inst *si);
	/* Optional. */
	void (*detach)(struct src_inst *si);  /* its pipeline instance is about to go: sum up */
	void (*forget)(struct src_inst *si);  /* release the rest of drv before it is freed */
	void (*gone)(struct src_inst *si);    /* a rescan no longer found it; default: forget */
	void (*settle)(struct source *src);   /* after a rescan or retry: rules across instances */
	/* A reload: the class's own part, before its instances are gone through. False: the
	 * driver started afresh (a new directory, a savefile), nothing more to do. */
	bool (*reload)(struct source *src);
	/* A reload: may this open instance stay open under the new config? NULL: yes.
	 * Otherwise SRC_OPEN (stays), SRC_CLOSED (opened afresh by its rescan), or SRC_SKIPPED
	 * with the reason in why (closed until the next reload). */
	enum src_status (*recheck)(struct src_inst *si, char *why, size_t size);
	/* Optional: the names the configuration's globs may match, its own first (at most
	 * max); 0 while it is not there (a named interface that is absent). NULL: its name. */
	size_t (*names)(const struct src_inst *si, const char **out, size_t max);
	/* Optional: log the class's own account at prio (the summary on SIGUSR1 and at stop):
	 * counts only, never a time. */
	void (*summary)(struct source *src, int prio);
};

/* One instance, as the core keeps it. */
struct src_inst {
	struct src_inst *next;
	struct source *src;
	char *name;
	enum src_status status;
	bool seen;          /* found by the rescan going on */
	bool disabled;      /* policy said "disabled" last time it was asked (said once) */
	unsigned retry_s;   /* the backoff of the last SRC_RETRY; 0 after an open */
	uint64_t retry_at;  /* CLOCK_MONOTONIC ns */
	struct instance *inst; /* the pipeline's, while attached */
	char state[256];    /* what status shows; the pipeline keeps a pointer to it */
	char error[256];    /* why it could not be opened (source_set_error); "" once open */
	void *drv;          /* the driver's, ops->inst_size bytes */
};

/* One class at run time. */
struct source {
	const struct source_ops *ops;
	struct event_base *base;
	const struct config *cfg;
	void *priv; /* the driver's class-wide state */
	bool running;
	struct src_inst *insts;
	struct event *rescan_ev; /* a rescan soon */
	struct event *poll_ev;   /* a rescan every poll_s, without a notifier */
	struct event *retry_ev;
	unsigned poll_s;
	struct source_names *names; /* the config's names for it, and which have matched */
};

/* One class: started with `ops` (the driver's start, then a rescan), reloaded with a new,
 * valid config, stopped. For sources_* and for the drivers' own tests. */
int source_start(struct source *src, const struct source_ops *ops, struct event_base *base,
		 const struct config *cfg);
void source_reload(struct source *src, const struct config *cfg);
void source_stop(struct source *src);

/* ---- for drivers ---- */

#define SOURCE_FOREACH(si, src) for (struct src_inst *si = (src)->insts; si; si = si->next)
/* Safe when si is forgotten in the body. */
#define SOURCE_FOREACH_SAFE(si, nx, src)                                                       \
	for (struct src_inst *si = (src)->insts, *nx = si ? si->next : NULL; si;                \
	     si = nx, nx = si ? si->next : NULL)

struct src_inst *source_find(struct source *src, const char *name);
/* A candidate found by a scan, or by a notifier: the instance of that name (marked seen), a
 * new one if there was none (*added set; NULL allowed). */
struct src_inst *source_found(struct source *src, const char *name, bool *added);
/* Close it if open, detach it, and free it. */
void source_forget(struct src_inst *si);
void source_forget_all(struct source *src);

/* Open it if policy allows (else SRC_SKIPPED, said once); with SRC_RETRY the core backs off
 * and tries again on its timer. Returns the new status. */
enum src_status source_open(struct src_inst *si);
/* Have the driver close it; its status becomes `status` (SRC_CLOSED: may be opened again
 * by the driver's rules; SRC_WAIT, SRC_SKIPPED, SRC_ENDED). */
void source_close(struct src_inst *si, enum src_status status);
/* An open instance stopped working (a read error): closed, and retried with the backoff. */
void source_failed(struct src_inst *si);
/* The backoff the next SRC_RETRY will wait, in seconds (for the driver's message). */
unsigned source_next_retry_s(const struct src_inst *si);
/* Does policy let it be opened? Says "not opened" / "closed: now disabled by policy" once
 * each time the answer turns to no. */
bool source_allowed(struct src_inst *si);

/* Attach it to the pipeline (kind shown in status; INST_* flags), detach it. */
void source_attach(struct src_inst *si, const char *kind, unsigned flags);
void source_detach(struct src_inst *si);
void source_set_state(struct src_inst *si, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* It could not be opened, and why (what happened and what to do): the state too. Shown as
 * state "not-open" with this as its detail until it opens, or the driver closes it by its
 * own rules (SRC_CLOSED). */
void source_set_error(struct src_inst *si, const char *fmt, ...) PRINTF_LIKE(2, 3);

/* What status shows of an instance, as the core sees it: state is one of "open",
 * "not-open" (tried and failed, or retrying), "waiting" (closed by the driver's rules until
 * something changes: a link down, a disk stacked on another), "refused" (by the
 * configuration, until a reload), "disabled" (by policy), "ended" (a stream read to its
 * end). */
struct src_view {
	const char *state;
	const char *detail; /* the error, or the driver's state; NULL: none of the core's */
	const char *retry;  /* when it is tried again, in words; NULL if not */
	double retry_in_s;  /* seconds to the next try on the retry timer; NaN if none */
};
/* The instance of class cls shown under `name` (its printable name) in a running class.
 * False if there is none (the class is not running, or the instance is gone). The strings
 * stay valid until the event loop runs again. */
bool source_view(enum src_class cls, const char *name, struct src_view *out);

/* The i-th name of a running class's configuration that chooses what is read and matches
 * nothing, for a row of status: its pattern and its key (valid until the next reload).
 * Names the driver shows an instance of (a named interface that is absent) are left out.
 * False past the last. */
bool source_unmatched(enum src_class cls, size_t i, const char **pattern, const char **key);

/* Rescans: now (forgets, or says gone, what the scan did not find, then settles); soon,
 * after the driver's rescan_delay_ms (coalescing a burst); every `seconds`, for a class
 * without a notifier (0: no longer). */
void source_rescan(struct source *src);
void source_rescan_soon(struct source *src);
void source_poll_every(struct source *src, unsigned seconds);

#endif
