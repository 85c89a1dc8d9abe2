/* net: packet arrivals as a timing source — the driver: the class's state, live or replayed,
 * its scans, reloads and the source_ops the core calls. Live capture per interface is
 * net_live.c, a savefile's replay net_file.c, the per-packet path net_capture.c.
 *
 * Interfaces come and go: rtnetlink (net_link.c) says when one appears, goes up or down, is
 * enslaved or disappears; where rtnetlink is not available, the list is rescanned on a timer.
 * None of that is ever fatal: it shows as the instance's state. */
#include "autoconf.h"

#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net_class.h"
#include "net_int.h"
#include "util.h"

#define RETRY_MIN_S 5             /* a capture that failed to open is retried after this, */
#define RETRY_MAX_S 300           /* doubling up to this */
#define RESCAN_S 10               /* without rtnetlink: how often interfaces are rescanned */

static struct log_ratelimit rl_open = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_link = LOG_RATELIMIT_INIT;


static bool filter_ok(const struct config *cfg, const char *key, const struct net_capture *cap,
		      const char *then)
{
	char msg[PCAP_ERRBUF_SIZE];
	const char *filter = cap->filter;

	if (net_class_filter_compiles(filter, cap->snaplen, msg, sizeof(msg)))
		return true;
	log_err("%s: %s: \"%s\" does not compile: %s; %s", cfg->path ? cfg->path : "configuration",
		key, filter, msg, then);
	return false;
}

/* Does every filter of cfg compile? Each one that does not is logged, with its key and
 * `then`: what follows. */
static bool filters_compile(const struct config *cfg, const char *then)
{
	bool ok = filter_ok(cfg, "sources.network.filter", &cfg->network.capture, then);

	for (size_t i = 0; i < cfg->network.n_instances; i++) {
		const struct net_override *o = &cfg->network.instances[i];
		char key[64];

		snprintf(key, sizeof(key), "sources.network.instances[%zu].filter", i);
		if (o->set & NET_SET_FILTER)
			ok = filter_ok(cfg, key, &o->cap, then) && ok;
	}
	return ok;
}

/* ---- the driver ---- */

static bool offline(const struct config *cfg)
{
	return cfg->network.file && cfg->network.file[0];
}

/* The savefile's instance is named after the file. */
static void savefile_found(struct pcap_state *st)
{
	const char *base = strrchr(st->file, '/');
	char name[64];
	bool added;
	struct src_inst *si;

	snprintf(name, sizeof(name), "%s", base ? base + 1 : st->file);
	si = source_found(st->src, name, &added);
	if (added || si->status == SRC_CLOSED)
		source_open(si);
}

static bool pcap_scan(struct source *src)
{
	struct pcap_state *st = src->priv;

	if (st->offline) {
		savefile_found(st);
		return true;
	}
	if (net_link_dump(&st->links) < 0) {
		log_limited(&rl_link, LOG_WARNING,
			    "network: cannot list interfaces (rtnetlink and /proc/net/dev); "
			    "policy.network.mode = \"disabled\" turns the class off");
		return false;
	}
	return true;
}

static enum src_status pcap_src_open(struct src_inst *si)
{
	struct pcap_state *st = si->src->priv;

	return st->offline ? net_file_replay_open(si) : net_live_open(si);
}

static void pcap_src_close(struct src_inst *si)
{
	struct pcap_state *st = si->src->priv;

	if (st->offline)
		net_file_replay_close(si);
	else
		net_live_close(si);
}

static void pcap_src_detach(struct src_inst *si)
{
	net_capture_detach(&((struct iface *)si->drv)->cap, si->name);
}

static void pcap_src_forget(struct src_inst *si)
{
	free(((struct iface *)si->drv)->filter);
}

/* A reload: an interface whose snaplen or direction changed is captured afresh (closing a
 * capture loses what the kernel had not handed over yet); one whose filter alone changed
 * gets the new filter in place, losing nothing (net_sock_set_filter()). Neither happens if
 * the new filter does not compile (filters_compile said so): the capture stays as it is.
 * The others keep theirs, and every instance its state. A new direction needs a new capture:
 * libpcap leaves the kernel's PACKET_IGNORE_OUTGOING set once "in" was asked for. A savefile
 * being read goes on. */
static enum src_status pcap_recheck(struct src_inst *si, char *why, size_t size)
{
	const struct pcap_state *st = si->src->priv;
	const struct config *cfg = si->src->cfg;
	const struct net_capture *want = net_class_capture_config(cfg, si->name);
	struct iface *f = si->drv;
	char msg[PCAP_ERRBUF_SIZE + 64];

	if (st->offline)
		return SRC_OPEN;
	f->cap.max_eps = net_capture_max_eps(cfg);
	if (!net_class_filter_compiles(want->filter, want->snaplen, msg, sizeof(msg)))
		return SRC_OPEN;
	if (f->snaplen != want->snaplen || f->direction != want->direction)
		return SRC_CLOSED;
	if (strcmp(f->filter, want->filter) == 0)
		return SRC_OPEN;
	if (net_sock_set_filter(si, want->filter, msg, sizeof(msg)) < 0) {
		log_limited(&rl_open, LOG_WARNING, "network/%s: %s; captured afresh", si->name, msg);
		return SRC_CLOSED;
	}
	free(f->filter);
	f->filter = xstrdup(want->filter);
	log_info("network/%s: filter now \"%s\" (set in place)", si->name, f->filter);
	return SRC_OPEN;
}

static void state_start(struct pcap_state *st)
{
	struct source *src = st->src;
	const struct strlist *l = &src->cfg->network.interfaces;

	st->offline = offline(src->cfg);
	if (st->offline) {
		st->file = xstrdup(src->cfg->network.file);
		source_rescan(src);
		return;
	}
	st->links = (struct net_links){.update = net_live_link_update, .gone = net_live_link_gone,
				       .settle = net_live_links_settle, .lost = net_live_links_lost, .arg = st,
				       .fd = -1};
	if (net_link_monitor(&st->links, src->base) < 0) {
		log_errno(LOG_WARNING, "network: no rtnetlink link notifications; interfaces are "
				       "rescanned every %d s",
			  RESCAN_S);
		source_poll_every(src, RESCAN_S);
	}
	/* Named interfaces exist from the start, so that a missing one shows as absent. */
	if (!net_live_is_auto(l))
		for (size_t i = 0; i < l->n; i++)
			if (!strpbrk(l->v[i], "*?["))
				net_live_entry(st, l->v[i]);
	/* One named but absent is said by the core (source_names), and captured when it
	 * appears. */
	source_rescan(src);
}

static void state_stop(struct pcap_state *st)
{
	source_forget_all(st->src);
	net_link_monitor_stop(&st->links);
	source_poll_every(st->src, 0);
	free(st->file);
	st->file = NULL;
}

/* An interface the config names that is not there does not count as one found. */
static size_t pcap_names(const struct src_inst *si, const char **out, size_t max)
{
	const struct pcap_state *st = si->src->priv;

	if (!max || (!st->offline && !((const struct iface *)si->drv)->ifindex))
		return 0;
	out[0] = si->name;
	return 1;
}

static int pcap_src_start(struct source *src)
{
	struct pcap_state *st;

	if (!filters_compile(src->cfg, "see pcap-filter(7)"))
		return -1;
	st = xcalloc(1, sizeof(*st));
	st->src = src;
	st->links.fd = -1;
	src->priv = st;
	state_start(st);
	return 0;
}

static bool pcap_src_reload(struct source *src)
{
	struct pcap_state *st = src->priv;
	const struct config *cfg = src->cfg;
	const struct strlist *l = &cfg->network.interfaces;

	filters_compile(cfg, "the interfaces it applies to keep the capture they have");
	if (offline(cfg) != st->offline ||
	    (st->offline && strcmp(cfg->network.file, st->file) != 0)) {
		log_info("network: now %s", offline(cfg) ? "replaying a savefile" : "capturing live");
		state_stop(st);
		state_start(st);
		return false;
	}
	/* Named interfaces that are new in the list. */
	if (!st->offline && !net_live_is_auto(l))
		for (size_t i = 0; i < l->n; i++)
			if (!strpbrk(l->v[i], "*?[") && !source_find(src, l->v[i]))
				net_live_entry(st, l->v[i]);
	return true;
}

static void pcap_src_stop(struct source *src)
{
	struct pcap_state *st = src->priv;

	if (!st)
		return;
	state_stop(st);
	util_wipe(st, sizeof(*st));
	free(st);
	src->priv = NULL;
}

const struct source_ops net_source_ops = {
	.name = "network",
	.cls = CLASS_NETWORK,
	.inst_size = sizeof(struct iface),
	.retry_min_s = RETRY_MIN_S,
	.retry_max_s = RETRY_MAX_S,
	.rescan_delay_ms = 0,
	.start = pcap_src_start,
	.stop = pcap_src_stop,
	.scan = pcap_scan,
	.open = pcap_src_open,
	.close = pcap_src_close,
	.detach = pcap_src_detach,
	.forget = pcap_src_forget,
	.gone = net_live_gone,
	.settle = net_live_settle,
	.reload = pcap_src_reload,
	.recheck = pcap_recheck,
	.names = pcap_names,
};
