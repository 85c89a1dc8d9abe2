/* source: the source core (see source.h): for one class, its instances, their states,
 * retries, rescans and reloads. It names no driver: source_table.c holds the table of them. */
#include "autoconf.h"

#include "source.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_pipeline.h"
#include "log.h"
#include "source_disabled.h"
#include "source_names.h"
#include "util.h"

/* The running classes, for source_view(). */
static struct source *running[CLASS_COUNT];

/* ---- instances ---- */

struct src_inst *source_find(struct source *src, const char *name)
{
	SOURCE_FOREACH(si, src)
		if (strcmp(si->name, name) == 0)
			return si;
	return NULL;
}

struct src_inst *source_found(struct source *src, const char *name, bool *added)
{
	struct src_inst *si = source_find(src, name);

	if (added)
		*added = !si;
	if (!si) {
		si = xcalloc(1, sizeof(*si));
		si->src = src;
		si->name = xstrdup(name);
		si->drv = xcalloc(1, src->ops->inst_size ? src->ops->inst_size : 1);
		si->next = src->insts;
		src->insts = si;
	}
	si->seen = true;
	return si;
}

void source_attach(struct src_inst *si, const char *kind, unsigned flags)
{
	if (si->inst)
		return;
	si->inst = feed_pipeline_attach(si->src->ops->cls, si->name, kind, flags);
	if (si->state[0])
		feed_pipeline_set_state(si->inst, si->state);
}

void source_detach(struct src_inst *si)
{
	if (!si->inst)
		return;
	if (si->src->ops->detach)
		si->src->ops->detach(si);
	feed_pipeline_detach(si->inst);
	si->inst = NULL;
}

void source_set_state(struct src_inst *si, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(si->state, sizeof(si->state), fmt, ap);
	va_end(ap);
	if (si->inst)
		feed_pipeline_set_state(si->inst, si->state);
}

void source_set_error(struct src_inst *si, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(si->error, sizeof(si->error), fmt, ap);
	va_end(ap);
	source_set_state(si, "%s", si->error);
}

bool source_view(enum src_class cls, const char *name, struct src_view *out)
{
	static char retry[64];
	struct source *src = (unsigned)cls < CLASS_COUNT ? running[cls] : NULL;
	char shown[256];

	if (!src)
		return false;
	SOURCE_FOREACH(si, src) {
		uint64_t now = util_mono_ns();

		util_printable(shown, sizeof(shown), si->name);
		if (strcmp(shown, name) != 0)
			continue;
		out->detail = si->error[0] ? si->error : si->state[0] ? si->state : NULL;
		out->retry = NULL;
		out->retry_in_s = NAN;
		switch (si->status) {
		case SRC_OPEN:
			out->state = "open";
			out->detail = si->state[0] ? si->state : NULL;
			break;
		case SRC_RETRY:
			out->state = "not-open";
			out->retry_in_s = si->retry_at > now ? (double)(si->retry_at - now) / NS_PER_SEC
							     : 0;
			snprintf(retry, sizeof(retry), "in %.0f s", out->retry_in_s);
			out->retry = retry;
			break;
		case SRC_WAIT:
		case SRC_CLOSED:
			/* A rescan or the driver's notifier tries it again: closed by the
			 * driver's rules (SRC_CLOSED) it waits for the device to come back. */
			out->state = si->error[0] ? "not-open" : "waiting";
			out->retry = si->status == SRC_WAIT ? "when it changes"
				     : si->error[0]		? "when it appears or changes"
								: NULL;
			break;
		case SRC_SKIPPED:
			out->state = si->disabled ? "disabled" : "refused";
			out->retry = si->disabled ? NULL : "at a reload";
			break;
		case SRC_ENDED:
			out->state = "ended";
			break;
		}
		return true;
	}
	return false;
}

bool source_unmatched(enum src_class cls, size_t i, const char **pattern, const char **key)
{
	struct source *src = (unsigned)cls < CLASS_COUNT ? running[cls] : NULL;

	if (!src)
		return false;
	for (size_t j = 0; source_names_unmatched(src->names, j, pattern, key); j++) {
		/* A named instance the driver keeps a row of itself (an interface not there):
		 * that row says it. */
		const struct src_inst *si = source_find(src, *pattern);

		if ((si && si->inst) || i--)
			continue;
		return true;
	}
	return false;
}

void source_forget(struct src_inst *si)
{
	struct source *src = si->src;

	for (struct src_inst **pp = &src->insts; *pp; pp = &(*pp)->next)
		if (*pp == si) {
			*pp = si->next;
			break;
		}
	src->ops->close(si);
	source_detach(si);
	if (si->disabled)
		source_disabled_set(src->ops->cls, si->name, false);
	if (src->ops->forget)
		src->ops->forget(si);
	util_wipe(si->drv, src->ops->inst_size);
	free(si->drv);
	free(si->name);
	util_wipe(si, sizeof(*si));
	free(si);
}

void source_forget_all(struct source *src)
{
	while (src->insts)
		source_forget(src->insts);
}

/* ---- opening, closing, retrying ---- */

static void arm_retry(struct source *src)
{
	uint64_t now = util_mono_ns(), first = 0;
	struct timeval tv;

	if (!src->retry_ev)
		return;
	SOURCE_FOREACH(si, src)
		if (si->status == SRC_RETRY && (!first || si->retry_at < first))
			first = si->retry_at;
	if (!first) {
		event_del(src->retry_ev);
		return;
	}
	first = first > now ? first - now : 0;
	tv.tv_sec = (time_t)(first / NS_PER_SEC);
	tv.tv_usec = (suseconds_t)(first % NS_PER_SEC / 1000);
	evtimer_add(src->retry_ev, &tv);
}

unsigned source_next_retry_s(const struct src_inst *si)
{
	const struct source_ops *ops = si->src->ops;
	unsigned s = si->retry_s ? si->retry_s * 2 : ops->retry_min_s;

	return s > ops->retry_max_s ? ops->retry_max_s : s;
}

static void back_off(struct src_inst *si)
{
	si->retry_s = source_next_retry_s(si);
	si->retry_at = util_mono_ns() + (uint64_t)si->retry_s * NS_PER_SEC;
	si->status = SRC_RETRY;
	arm_retry(si->src);
}

bool source_allowed(struct src_inst *si)
{
	const struct source_ops *ops = si->src->ops;

	if (feed_pipeline_enabled(ops->cls, si->name)) {
		if (si->disabled)
			source_disabled_set(ops->cls, si->name, false);
		si->disabled = false;
		return true;
	}
	source_disabled_set(ops->cls, si->name, true); /* shown in status as such */
	if (!si->disabled)
		log_info("%s/%s: %s", ops->name, si->name,
			 si->inst || si->status == SRC_OPEN ? "closed: now disabled by policy"
							   : "not opened: disabled by policy");
	si->disabled = true;
	return false;
}

/* What failed before no longer holds: nor does the state that said it (source_set_error),
 * which would otherwise still show as the detail of an instance open or waiting now. */
static void forget_error(struct src_inst *si)
{
	if (si->error[0] && !strcmp(si->state, si->error))
		si->state[0] = '\0';
	si->error[0] = '\0';
}

void source_close(struct src_inst *si, enum src_status status)
{
	si->src->ops->close(si);
	si->status = status;
	si->retry_at = 0;
	if (status != SRC_CLOSED)
		return;
	/* Closed by the driver's rules (down, stacked): a later open starts the backoff anew,
	 * and what failed before no longer holds. */
	si->retry_s = 0;
	forget_error(si);
}

enum src_status source_open(struct src_inst *si)
{
	if (!source_allowed(si)) {
		if (si->status == SRC_OPEN || si->status == SRC_RETRY)
			si->src->ops->close(si);
		si->status = SRC_SKIPPED;
		si->retry_at = 0;
		source_detach(si);
		return si->status;
	}
	si->status = si->src->ops->open(si);
	si->retry_at = 0;
	if (si->status == SRC_OPEN) {
		si->retry_s = 0;
		forget_error(si);
	}
	else if (si->status == SRC_RETRY)
		back_off(si);
	return si->status;
}

void source_failed(struct src_inst *si)
{
	si->src->ops->close(si);
	back_off(si);
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct source *src = arg;
	uint64_t now = util_mono_ns();
	bool retried = false;

	SOURCE_FOREACH_SAFE(si, nx, src)
		if (si->status == SRC_RETRY && si->retry_at <= now) {
			source_open(si);
			retried = true;
		}
	if (retried && src->ops->settle)
		src->ops->settle(src);
	arm_retry(src);
}

/* ---- rescans ---- */

/* The config's names that match none of the instances found so far, said once each. */
static void check_names(struct source *src)
{
	if (!src->names)
		return;
	SOURCE_FOREACH(si, src) {
		const char *names[4] = {si->name};
		size_t n = src->ops->names ? src->ops->names(si, names, ARRAY_SIZE(names)) : 1;

		source_names_saw(src->names, names, n);
	}
	source_names_report(src->names, "(yet)", NULL);
}

void source_rescan(struct source *src)
{
	SOURCE_FOREACH(si, src)
		si->seen = false;
	if (!src->ops->scan(src))
		return;
	SOURCE_FOREACH_SAFE(si, nx, src)
		if (!si->seen) {
			if (src->ops->gone)
				src->ops->gone(si);
			else
				source_forget(si);
		}
	if (src->ops->settle)
		src->ops->settle(src);
	check_names(src);
	arm_retry(src);
}

static void rescan_cb(evutil_socket_t fd, short what, void *arg)
{
	source_rescan(arg);
}

void source_rescan_soon(struct source *src)
{
	unsigned ms = src->ops->rescan_delay_ms;
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	if (src->rescan_ev && !evtimer_pending(src->rescan_ev, NULL))
		evtimer_add(src->rescan_ev, &tv);
}

void source_poll_every(struct source *src, unsigned seconds)
{
	struct timeval tv = {.tv_sec = seconds};

	src->poll_s = seconds;
	if (!src->poll_ev)
		return;
	event_del(src->poll_ev);
	if (seconds)
		event_add(src->poll_ev, &tv);
}

/* ---- one class ---- */

static void free_timers(struct source *src)
{
	if (src->rescan_ev)
		event_free(src->rescan_ev);
	if (src->poll_ev)
		event_free(src->poll_ev);
	if (src->retry_ev)
		event_free(src->retry_ev);
	src->rescan_ev = src->poll_ev = src->retry_ev = NULL;
}

int source_start(struct source *src, const struct source_ops *ops, struct event_base *base,
		 const struct config *cfg)
{
	memset(src, 0, sizeof(*src));
	src->ops = ops;
	src->base = base;
	src->cfg = cfg;
	running[ops->cls] = src;
	src->rescan_ev = evtimer_new(base, rescan_cb, src);
	src->poll_ev = event_new(base, -1, EV_PERSIST, rescan_cb, src);
	src->retry_ev = evtimer_new(base, retry_cb, src);
	src->names = source_names_new(cfg, ops->cls);
	if (!src->rescan_ev || !src->poll_ev || !src->retry_ev)
		log_warn("%s source: cannot register timers with the event loop; devices that "
			 "fail or change are not looked at again until a reload",
			 ops->name);
	if (ops->start(src) < 0) {
		running[ops->cls] = NULL;
		source_forget_all(src);
		free_timers(src);
		source_names_free(src->names);
		src->names = NULL;
		return -1;
	}
	src->running = true;
	return 0;
}

/* A reload: what policy now disables is closed, what waits is tried again, an open instance
 * the driver no longer wants as it is is closed; then a rescan opens what is wanted. */
void source_reload(struct source *src, const struct config *cfg)
{
	const struct source_ops *ops = src->ops;
	char why[256];

	src->cfg = cfg;
	/* A reload says again what still matches nothing. */
	source_names_free(src->names);
	src->names = source_names_new(cfg, ops->cls);
	if (ops->reload && !ops->reload(src))
		return;
	SOURCE_FOREACH_SAFE(si, nx, src) {
		if ((si->inst || si->status == SRC_OPEN || si->status == SRC_RETRY) &&
		    !source_allowed(si)) {
			source_close(si, SRC_SKIPPED);
			source_detach(si);
			continue;
		}
		switch (si->status) {
		case SRC_OPEN:
			if (!ops->recheck)
				break;
			switch (ops->recheck(si, why, sizeof(why))) {
			case SRC_CLOSED:
				source_close(si, SRC_CLOSED);
				break;
			case SRC_SKIPPED:
				log_info("%s/%s: closed: %s", ops->name, si->name, why);
				source_close(si, SRC_SKIPPED);
				source_detach(si);
				break;
			default:
				break;
			}
			break;
		case SRC_RETRY:
			/* A reload is also the way to say "try again now": on the retry timer, so
			 * that it holds even if the rescan below cannot look. */
			si->retry_s = 0;
			si->retry_at = util_mono_ns();
			break;
		case SRC_SKIPPED:
		case SRC_WAIT:
			/* Opened by the rescan below, or by the next one that can look. */
			si->status = SRC_CLOSED;
			si->retry_at = 0;
			break;
		case SRC_CLOSED:
		case SRC_ENDED:
			break;
		}
	}
	source_rescan(src);
	arm_retry(src);
}

void source_stop(struct source *src)
{
	if (src->running) {
		source_forget_all(src);
		src->ops->stop(src);
	}
	src->running = false;
	if (src->ops && running[src->ops->cls] == src)
		running[src->ops->cls] = NULL;
	free_timers(src);
	source_names_free(src->names);
	src->names = NULL;
}
