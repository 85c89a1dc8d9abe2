/* net_sock: sampling in the kernel on a live capture — the sampled socket filter
 * (net_sample.c decides it) set on the capture's packet socket, the rate it follows
 * measured from what the socket took, and the instance told (pipeline_set_sampling()).
 *
 * The filter is set with setsockopt(SO_ATTACH_FILTER) on libpcap's socket rather than with
 * pcap_setfilter(): libpcap filters again, in user space, the packets its ring already holds
 * when a filter changes, and there the kernel's random load cannot be evaluated (it would
 * reject them all). The kernel swaps one filter for the other at once, and what the ring
 * holds stays. The administrator's filter is the program libpcap attached for it
 * (SO_GET_FILTER, as libpcap adapted it to the link type); where libpcap filters in user
 * space instead, none is attached, and the sampled program keeps its share of everything
 * for libpcap to filter. */
#include "autoconf.h"

#include "net_int.h"

#include <errno.h>
#include <pcap/dlt.h>
#include <linux/filter.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "feed_pipeline.h"
#include "log.h"
#include "util.h"

static struct log_ratelimit rl_sample = LOG_RATELIMIT_INIT;

static void tell(struct iface *f)
{
	if (f->cap.inst)
		pipeline_set_sampling(f->cap.inst, f->sampling, f->smp.ratio, f->smp.rate);
	capture_sampled(&f->cap, f->smp.ratio < 1);
}

/* The program libpcap attached for the filter; false if the kernel does not say. */
static bool read_base(struct iface *f)
{
	int fd = pcap_fileno(f->p);
	socklen_t n = 0;

	free(f->base);
	f->base = NULL;
	f->n_base = 0;
	/* The length is in instructions: asked with none, the kernel gives the count. */
	if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, NULL, &n) < 0)
		return false;
	if (n == 0)
		return true;
	if (n > BPF_MAXINSNS)
		return false;
	f->base = xcalloc(n, sizeof(*f->base));
	if (getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, f->base, &n) < 0 || n == 0 ||
	    n > BPF_MAXINSNS) {
		free(f->base);
		f->base = NULL;
		return false;
	}
	f->n_base = n;
	return true;
}

/* The kernel's filter for the share `ratio` (1: the base alone); 0, or -1 with errno. */
static int attach(struct iface *f, double ratio)
{
	int fd = pcap_fileno(f->p);
	struct sock_filter *prog;
	struct sock_fprog fp;
	int rc;

	if (ratio >= 1) {
		if (!f->n_base) { /* libpcap had none attached */
			if (setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, NULL, 0) < 0 &&
			    errno != ENOENT)
				return -1;
			return 0;
		}
		fp = (struct sock_fprog){.len = (unsigned short)f->n_base, .filter = f->base};
		return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
	}
	prog = xcalloc(f->n_base + SAMPLE_PREFIX + 1, sizeof(*prog));
	fp.len = (unsigned short)sample_program(ratio, f->base, f->n_base, prog);
	fp.filter = prog;
	rc = setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
	free(prog);
	return rc;
}

static void refused(struct src_inst *si, const char *what)
{
	struct iface *f = si->drv;

	log_limited(&rl_sample, LOG_WARNING,
		    "network/%s: %s (%s): not sampled; every packet the filter takes is copied "
		    "to entropyd as without sampling",
		    si->name, what, strerror(errno));
	f->sampling = "refused";
	if (f->smp.ratio < 1) {
		(void)attach(f, 1.0); /* the filter as libpcap set it, if the kernel lets us */
		sampler_set(&f->smp, 1.0, mono_ns());
	}
	if (f->sample_ev)
		event_del(f->sample_ev);
}

static void sample_cb(evutil_socket_t fd, short what, void *arg)
{
	if_sample_tick(arg);
}

/* Sampling now at `ratio` (1: off): the kernel's filter, the timer, the instance. */
static void set_ratio(struct src_inst *si, double ratio)
{
	struct iface *f = si->drv;
	struct timeval tv = {1, 0};

	if (attach(f, ratio) < 0) {
		refused(si, ratio < 1 ? "the kernel refused the sampling filter"
				      : "cannot set the filter without sampling again");
		return;
	}
	if (ratio < 1 && f->smp.ratio >= 1)
		log_info("network/%s: about %.0f packets a second: the kernel keeps 1 in %.0f",
			 si->name, f->smp.rate, 1 / ratio);
	else if (ratio >= 1 && f->smp.ratio < 1)
		log_info("network/%s: about %.0f packets a second: sampling stops", si->name,
			 f->smp.rate);
	sampler_set(&f->smp, ratio, mono_ns());
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

int if_set_filter(struct src_inst *si, const char *filter, char *err, size_t size)
{
	struct iface *f = si->drv;
	struct bpf_program prog;
	int dlt = pcap_datalink(f->p);
	struct sock_filter *was = f->base;
	size_t n_was = f->n_base;

	if (pcap_compile(f->p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, size, "the filter \"%s\" does not compile: %s", filter,
			 pcap_geterr(f->p));
		return -1;
	}
	/* libpcap's kernel program is the compiled one but on cooked captures, whose loads it
	 * moves; and with none read back, libpcap may be filtering in user space. */
	if (f->base_known && f->n_base && dlt != DLT_LINUX_SLL && dlt != DLT_LINUX_SLL2 &&
	    prog.bf_len <= BPF_MAXINSNS) {
		f->base = xcalloc(prog.bf_len, sizeof(*f->base));
		memcpy(f->base, prog.bf_insns, prog.bf_len * sizeof(*f->base));
		f->n_base = prog.bf_len;
		if (attach(f, f->smp.ratio) == 0) {
			free(was);
			pcap_freecode(&prog);
			return 0;
		}
		free(f->base);
		f->base = was;
		f->n_base = n_was;
	}
	if (pcap_setfilter(f->p, &prog) < 0) {
		snprintf(err, size, "cannot set the filter: %s", pcap_geterr(f->p));
		pcap_freecode(&prog);
		return -1;
	}
	pcap_freecode(&prog);
	if_sample_start(si);
	return 0;
}

void if_sample_start(struct src_inst *si)
{
	struct iface *f = si->drv;
	double ratio = f->p && f->base_known ? f->smp.ratio : 1.0;

	if (!f->p)
		return;
	if (!taken(f, &f->taken))
		f->taken = 0;
	if (!f->base_known)
		sampler_init(&f->smp);
	f->base_known = read_base(f);
	if (!f->base_known) {
		refused(si, "cannot read the capture's filter from the kernel");
		tell(f);
		return;
	}
	f->sampling = "off";
	if (ratio < 1)
		set_ratio(si, ratio);
	tell(f);
}

void if_sample_tick(struct src_inst *si)
{
	struct iface *f = si->drv;
	uint64_t n;
	double ratio;

	if (!f->p || !taken(f, &n))
		return;
	/* libpcap's sum is an unsigned int: it wraps. */
	sampler_count(&f->smp, (uint32_t)(n - f->taken));
	f->taken = n;
	switch (sampler_tick(&f->smp, f->cap.max_eps, mono_ns(), &ratio)) {
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

void if_sample_stop(struct src_inst *si)
{
	struct iface *f = si->drv;

	if (f->sample_ev) {
		event_free(f->sample_ev);
		f->sample_ev = NULL;
	}
	free(f->base);
	f->base = NULL;
	f->n_base = 0;
	f->base_known = false;
	sampler_init(&f->smp);
	f->sampling = NULL;
	tell(f); /* a new capture starts unsampled */
}
