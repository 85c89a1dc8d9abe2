/* net_file: a pcap or pcapng savefile as the network source (sources.network.file),
 * the class's one instance, named after the file.
 * The whole file is checked first, so that a truncated or corrupt one is refused before
 * any of it is used; then its packets are replayed at their recorded timestamps, a chunk
 * per turn of the event loop, as fast as they can be read. */
#include "autoconf.h"

#include "net_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feed_pipeline.h"
#include "log.h"
#include "util.h"

#define REPLAY_CHUNK 4096 /* savefile packets per turn of the event loop */

struct replay {
	struct src_inst *si;
	char *path;
	int fd;
	pcap_t *p;
	int pass; /* 1: checking the whole file; 2: timing its packets */
	uint64_t checked, bad;
	struct event *ev;
};

static struct log_ratelimit rl_file = LOG_RATELIMIT_INIT;

static struct capture *cap_of(const struct replay *rp)
{
	return &((struct iface *)rp->si->drv)->cap;
}

/* Read to its end, or given up on: closed, and the state says which. */
static void replay_end(struct replay *rp, const char *state)
{
	struct capture *c = cap_of(rp);

	source_close(rp->si, SRC_ENDED);
	net_capture_set_state(c, state);
}

/* pcap_fopen_offline on a fresh stream over our descriptor, from the start. */
static bool replay_open(struct replay *rp, char *errbuf)
{
	int fd;
	FILE *f;

	if (lseek(rp->fd, 0, SEEK_SET) < 0 || (fd = dup(rp->fd)) < 0) {
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", strerror(errno));
		return false;
	}
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(errbuf, PCAP_ERRBUF_SIZE, "%s", strerror(errno));
		close(fd);
		return false;
	}
	rp->p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!rp->p) {
		fclose(f);
		return false;
	}
	return true;
}

static void check_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct replay *rp = (struct replay *)user;
	uint64_t t;

	rp->checked++;
	if (!net_capture_time(h, true, &t) || h->caplen > h->len)
		rp->bad++;
}

static void refused(struct replay *rp, const char *why)
{
	log_err("network/%s: %s: refused, nothing of it is used: %s", rp->si->name, rp->path,
		why);
}

static void replay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct replay *rp = arg;
	struct src_inst *si = rp->si;
	struct capture *c = cap_of(rp);
	const struct config *cfg = si->src->cfg;
	char errbuf[PCAP_ERRBUF_SIZE] = "", msg[PCAP_ERRBUF_SIZE + 128];
	int n;

	if (rp->pass == 1) {
		n = pcap_dispatch(rp->p, REPLAY_CHUNK, check_packet, (u_char *)rp);
		if (n < 0) {
			snprintf(msg, sizeof(msg),
				 "the savefile is truncated or corrupt after %llu good packets (%s)",
				 (unsigned long long)rp->checked, pcap_geterr(rp->p));
			refused(rp, msg);
			replay_end(rp, "refused");
			return;
		}
		if (n > 0) {
			event_active(rp->ev, EV_READ, 0);
			return;
		}
		if (rp->bad) {
			snprintf(msg, sizeof(msg),
				 "%llu of its %llu packets have an invalid timestamp or length: "
				 "the savefile is corrupt",
				 (unsigned long long)rp->bad, (unsigned long long)rp->checked);
			refused(rp, msg);
			replay_end(rp, "refused");
			return;
		}
		pcap_close(rp->p);
		rp->p = NULL;
		if (!replay_open(rp, errbuf)) {
			snprintf(msg, sizeof(msg), "cannot read it again: %s", errbuf);
			refused(rp, msg);
			replay_end(rp, "refused");
			return;
		}
		if (net_capture_set_filter(rp->p, net_class_capture_config(cfg, si->name)->filter, msg,
				       sizeof(msg)) < 0) {
			log_err("network/%s: %s", si->name, msg);
			replay_end(rp, "filter error");
			return;
		}
		net_capture_begin(c, pcap_datalink(rp->p), true, net_capture_max_eps(cfg));
		rp->pass = 2;
		net_capture_set_state(c, "reading");
		log_info("network/%s: %s: %llu packets, link type %s; replaying at their recorded "
			 "timestamps",
			 si->name, rp->path, (unsigned long long)rp->checked,
			 pcap_datalink_val_to_name(c->dlt) ? pcap_datalink_val_to_name(c->dlt)
							    : "unknown");
		event_active(rp->ev, EV_READ, 0);
		return;
	}
	n = pcap_dispatch(rp->p, REPLAY_CHUNK, net_capture_packet, (u_char *)c);
	net_capture_flush(c);
	if (n < 0) {
		log_limited(&rl_file, LOG_ERR,
			    "network/%s: %s changed while it was read: %s; stopped after %llu "
			    "packets",
			    si->name, rp->path, pcap_geterr(rp->p), (unsigned long long)c->packets);
		replay_end(rp, "damaged");
		return;
	}
	if (n > 0) {
		event_active(rp->ev, EV_READ, 0);
		return;
	}
	log_info("network/%s: replayed %llu packets (%llu matched the filter)", si->name,
		 (unsigned long long)rp->checked, (unsigned long long)c->packets);
	replay_end(rp, "ended");
}

/* Not replayed after all: closed here, the state says why. */
static enum src_status not_replayed(struct src_inst *si, const char *state)
{
	net_file_replay_close(si);
	net_capture_set_state(&((struct iface *)si->drv)->cap, state);
	return SRC_ENDED;
}

enum src_status net_file_replay_open(struct src_inst *si)
{
	struct iface *f = si->drv;
	const struct pcap_state *st = si->src->priv;
	struct replay *rp = xcalloc(1, sizeof(*rp));
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct stat sb;

	f->rp = rp;
	rp->si = si;
	rp->fd = -1;
	rp->path = xstrdup(st->file);
	source_attach(si, "savefile", 0);
	net_capture_attach(&f->cap, si->inst);
	net_capture_set_state(&f->cap, "checking");
	/* O_NONBLOCK: a FIFO named here must not hang the event loop at open. */
	rp->fd = open(rp->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (rp->fd < 0) {
		log_errno(LOG_ERR, "network/%s: cannot open the savefile %s (sources.network.file; "
			  "empty for live capture)", si->name, rp->path);
		return not_replayed(si, "error");
	}
	if (fstat(rp->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		log_err("network/%s: %s is not a regular file", si->name, rp->path);
		return not_replayed(si, "error");
	}
	if (sb.st_size == 0) {
		refused(rp, "the file is empty");
		return not_replayed(si, "refused");
	}
	if (!replay_open(rp, errbuf)) {
		if (strstr(errbuf, "unknown file format"))
			refused(rp, "not a pcap or pcapng savefile (unknown file format)");
		else
			refused(rp, errbuf[0] ? errbuf : "not a pcap or pcapng savefile");
		return not_replayed(si, "refused");
	}
	rp->pass = 1;
	rp->ev = event_new(si->src->base, -1, 0, replay_cb, rp);
	if (!rp->ev) {
		log_err("network/%s: cannot register with the event loop", si->name);
		return not_replayed(si, "error");
	}
	event_active(rp->ev, EV_READ, 0);
	return SRC_OPEN;
}

void net_file_replay_close(struct src_inst *si)
{
	struct iface *f = si->drv;
	struct replay *rp = f->rp;

	if (!rp)
		return;
	if (rp->ev)
		event_free(rp->ev);
	if (rp->p)
		pcap_close(rp->p);
	if (rp->fd >= 0)
		close(rp->fd);
	net_capture_flush(&f->cap);
	free(rp->path);
	util_wipe(rp, sizeof(*rp));
	free(rp);
	f->rp = NULL;
}
