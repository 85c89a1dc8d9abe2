/* net_sock: sampling in the kernel on a live capture — the share of frames the capture's
 * socket filter keeps (net_sample.c decides it), the rate it follows measured from what the
 * socket took, and the instance told (feed_pipeline_set_sampling()).
 *
 * The socket filter is not this process's to set: the privileged process puts its own on
 * every packet socket it hands over (priv_filter.c: the interface, the direction, the
 * administrator's filter, the bytes kept) and sets it again, with the share asked for,
 * through priv_packet_filter(); libpcap is never asked to set one (pcap_setfilter() would
 * replace it, and the collector's system call filter refuses that). The kernel swaps one
 * filter for the other at once, and what the ring holds stays. */
#include "autoconf.h"

#include "net_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_pipeline.h"
#include "log.h"
#include "priv.h"
#include "priv_filter.h"
#include "util.h"

static struct log_ratelimit rl_sample = LOG_RATELIMIT_INIT;

static void tell(struct iface *f)
{
	if (f->cap.inst)
		feed_pipeline_set_sampling(f->cap.inst, f->sampling, f->smp.ratio, f->smp.rate);
	net_capture_sampled(&f->cap, f->smp.ratio < 1);
}

/* The capture's socket filter, with filter (the administrator's) and the share `ratio` kept
 * (1: every frame); 0, or -1 with errno and the reason in err. */
static int attach(struct src_inst *si, const char *filter, double ratio, char *err, size_t size)
{
	struct iface *f = si->drv;

	return priv_packet_filter(pcap_fileno(f->p), (unsigned)f->ifindex, f->direction, filter,
				  priv_filter_keep(ratio), err, size);
}

static void refused(struct src_inst *si, const char *what)
{
	struct iface *f = si->drv;

	char err[256];

	log_limited(&rl_sample, LOG_WARNING,
		    "network/%s: %s: not sampled; every packet the filter takes is copied "
		    "to entropyd as without sampling",
		    si->name, what);
	f->sampling = "refused";
	if (f->smp.ratio < 1) {
		/* The filter without the share, if the privileged process sets it. */
		(void)attach(si, f->filter, 1.0, err, sizeof(err));
		net_sample_set(&f->smp, 1.0, util_mono_ns());
	}
	if (f->sample_ev)
		event_del(f->sample_ev);
}

static void sample_cb(evutil_socket_t fd, short what, void *arg)
{
	net_sock_sample_tick(arg);
}

/* Sampling now at `ratio` (1: off): the kernel's filter, the timer, the instance. */
static void set_ratio(struct src_inst *si, double ratio)
{
	struct iface *f = si->drv;
	struct timeval tv = {1, 0};
	char err[256], what[320];

	if (attach(si, f->filter, ratio, err, sizeof(err)) < 0) {
		snprintf(what, sizeof(what), "%s: %s",
			 ratio < 1 ? "the sampling filter was not set"
				   : "cannot set the filter without sampling again",
			 err);
		refused(si, what);
		return;
	}
	if (ratio < 1 && f->smp.ratio >= 1)
		log_info("network/%s: about %.0f packets a second: the kernel keeps 1 in %.0f",
			 si->name, f->smp.rate, 1 / ratio);
	else if (ratio >= 1 && f->smp.ratio < 1)
		log_info("network/%s: about %.0f packets a second: sampling stops", si->name,
			 f->smp.rate);
	net_sample_set(&f->smp, ratio, util_mono_ns());
	f->sampling = ratio < 1 ? "on" : "off";
	if (ratio < 1) {
		if (!f->sample_ev)
			f->sample_ev = event_new(si->src->base, -1, EV_PERSIST, sample_cb, si);
		if (f->sample_ev && !event_pending(f->sample_ev, EV_TIMEOUT, NULL))
			event_add(f->sample_ev, &tv);
	} else if (f->sample_ev)
		event_del(f->sample_ev);
}

/* What the socket took so far (passed its filter: handed over or dropped), as the kernel
 * counts it: libpcap's running sum of PACKET_STATISTICS. */
static bool taken(struct iface *f, uint64_t *n)
{
	struct pcap_stat ps;

	if (pcap_stats(f->p, &ps) < 0)
		return false;
	*n = ps.ps_recv;
	return true;
}

int net_sock_set_filter(struct src_inst *si, const char *filter, char *err, size_t size)
{
	struct iface *f = si->drv;

	/* While open, the share in force stays; a capture opening keeps every frame. */
	return attach(si, filter, f->sampling ? f->smp.ratio : 1.0, err, size);
}

void net_sock_sample_start(struct src_inst *si)
{
	struct iface *f = si->drv;

	if (!f->p)
		return;
	if (!taken(f, &f->taken))
		f->taken = 0;
	net_sample_init(&f->smp);
	f->sampling = "off";
	tell(f);
}

void net_sock_sample_tick(struct src_inst *si)
{
	struct iface *f = si->drv;
	uint64_t n;
	double ratio;

	if (!f->p || !taken(f, &n))
		return;
	/* libpcap's sum is an unsigned int: it wraps. */
	net_sample_count(&f->smp, (uint32_t)(n - f->taken));
	f->taken = n;
	switch (net_sample_tick(&f->smp, f->cap.max_eps, util_mono_ns(), &ratio)) {
	case SAMPLER_NONE:
		return;
	case SAMPLER_CHANGE:
		if (strcmp(f->sampling, "refused") != 0)
			set_ratio(si, ratio);
		break;
	case SAMPLER_MEASURED:
		break;
	}
	tell(f);
}

void net_sock_sample_stop(struct src_inst *si)
{
	struct iface *f = si->drv;

	if (f->sample_ev) {
		event_free(f->sample_ev);
		f->sample_ev = NULL;
	}
	net_sample_init(&f->smp);
	f->sampling = NULL;
	tell(f); /* a new capture starts unsampled */
}
