/* net_capture: one stream of packets, live or replayed, into one pipeline instance:
 * the timestamp, the event cap, the dominant-flow weight, and the sample. Only the time and
 * the source address (which the dominant-flow counter compares) are looked at; nothing of a
 * packet is logged, stored or shown.
 *
 * Timestamps: libpcap gives CLOCK_REALTIME (the kernel's host stamp), or the NIC's own clock
 * where the driver offers hardware stamps. Either way one instance keeps one clock for as
 * long as it lives, and the estimator only looks at differences between consecutive events,
 * so the offset of the clock is irrelevant; a step of the wall clock costs one odd delta
 * (and the per-second caps treat time running backwards as a new second, refilling no
 * credit). A savefile's timestamps are replayed as recorded, so the caps, which run on event
 * time, give a replay the same credit as the live capture it came from. */
#include "autoconf.h"

#include "net_int.h"

#include <stdio.h>
#include <string.h>

#include "feed_pipeline.h"
#include "log.h"
#include "util.h"

static void capture_state(struct capture *c)
{
	if (!c->inst)
		return;
	/* The share only: the weight it gives is the pipeline's to show, times the policy's
	 * (a mix-only instance's is 0 whatever the flows). */
	if (c->share_pct)
		snprintf(c->state, sizeof(c->state), "%s (one source %d%% of packets)",
			 c->base_state, c->share_pct);
	else
		snprintf(c->state, sizeof(c->state), "%s", c->base_state);
	feed_pipeline_set_state(c->inst, c->state);
}

void net_capture_set_state(struct capture *c, const char *base)
{
	c->base_state = base;
	capture_state(c);
}

/* A new stream on an instance: counters start afresh, the instance keeps its own state. */
void net_capture_begin(struct capture *c, int dlt, bool nano, uint32_t max_eps)
{
	net_capture_flush(c);
	c->dlt = dlt;
	c->nano = nano;
	c->max_eps = max_eps;
	memset(&c->ecap, 0, sizeof(c->ecap));
}

/* The weight follows the busiest source's share batch by batch (of at most CAPTURE_BATCH
 * packets, a quarter of the counter's window); the state shows it in whole percent. */
static void capture_weigh(struct capture *c)
{
	double s = net_flow_top_share(&c->top);
	double w = net_flow_weight(c->sampled || c->sample_left ? net_flow_share_bound(s, c->top.total) : s);
	int pct = s > FLOW_DOMINANT ? (int)(s * 100) : 0;

	if (w != c->weight) {
		c->weight = w;
		feed_pipeline_set_weight(c->inst, w, s);
	}
	if (pct != c->share_pct) {
		c->share_pct = pct;
		capture_state(c);
	}
}

void net_capture_flush(struct capture *c)
{
	if (c->n_batch && c->inst) {
		capture_weigh(c);
		feed_pipeline_samples(c->inst, c->batch, c->n_batch);
		util_wipe(c->batch, c->n_batch * sizeof(c->batch[0]));
	}
	c->n_batch = 0;
	if (c->skip_pending && c->inst)
		feed_pipeline_skip(c->inst, c->skip_pending);
	c->skip_pending = 0;
}

bool net_capture_time(const struct pcap_pkthdr *h, bool nano, uint64_t *t)
{
	long long sec = (long long)h->ts.tv_sec, frac = (long long)h->ts.tv_usec;
	long long per_sec = nano ? 1000000000LL : 1000000LL;

	if (sec < 0 || frac < 0 || frac >= per_sec ||
	    (unsigned long long)sec >= UINT64_MAX / NS_PER_SEC - 1)
		return false;
	*t = (uint64_t)sec * NS_PER_SEC + (uint64_t)frac * (nano ? 1 : 1000);
	return true;
}

void net_capture_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct capture *c = (struct capture *)user;
	struct flow_key k;
	uint64_t t;

	c->packets++;
	if (!net_capture_time(h, c->nano, &t)) {
		c->bad_time++;
		c->skip_pending++;
		return;
	}
	if (!net_flow_event_cap_take(&c->ecap, c->max_eps, t)) {
		c->skip_pending++;
		return;
	}
	net_flow_key_of(c->dlt, bytes, h->caplen, &k);
	net_flow_top_add(&c->top, &k);
	if (c->sample_left)
		c->sample_left--;
	/* For the tests' and the curious administrator's benefit (debug log, counts only): how
	 * many stamps carry more than whole microseconds. */
	c->sub_us += t % 1000 != 0;
	c->batch[c->n_batch++] = t;
	if (c->n_batch == CAPTURE_BATCH)
		net_capture_flush(c);
}

void net_capture_sampled(struct capture *c, bool on)
{
	if (!on && c->sampled)
		c->sample_left = 2 * FLOW_WINDOW;
	c->sampled = on;
}

void net_capture_attach(struct capture *c, struct instance *inst)
{
	memset(c, 0, sizeof(*c));
	c->weight = 1.0;
	c->base_state = "open";
	c->inst = inst;
	capture_state(c);
}

void net_capture_detach(struct capture *c, const char *name)
{
	if (!c->inst)
		return;
	net_capture_flush(c);
	log_debug("network/%s: %llu packets, %llu with a timestamp finer than a microsecond, "
		  "%llu with an invalid timestamp, %llu dropped by the kernel",
		  name, (unsigned long long)c->packets, (unsigned long long)c->sub_us,
		  (unsigned long long)c->bad_time, (unsigned long long)c->dropped);
	util_wipe(c, sizeof(*c));
}

int net_capture_set_filter(pcap_t *p, const char *filter, char *err, size_t size)
{
	struct bpf_program prog;

	/* No filter is the empty one, which accepts every packet: set too, so that the kernel
	 * has a program for a reload to replace in place (net_sock_set_filter()). */
	if (!filter)
		filter = "";
	if (pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, size, "the filter \"%s\" does not compile: %s", filter, pcap_geterr(p));
		return -1;
	}
	if (pcap_setfilter(p, &prog) < 0) {
		snprintf(err, size, "cannot set the filter: %s", pcap_geterr(p));
		pcap_freecode(&prog);
		return -1;
	}
	pcap_freecode(&prog);
	return 0;
}

uint32_t net_capture_max_eps(const struct config *cfg)
{
	return cfg->network.max_events_per_second > 0 ? (uint32_t)cfg->network.max_events_per_second
						       : 1;
}
