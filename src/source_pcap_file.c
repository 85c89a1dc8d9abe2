/* source_pcap_file: a pcap or pcapng savefile as the network source (sources.network.file).
 * The whole file is checked first, so that a truncated or corrupt one is refused before
 * any of it is used; then its packets are replayed at their recorded timestamps, a chunk
 * per turn of the event loop, as fast as they can be read. */
#include "autoconf.h"

#include "source_pcap_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "pipeline.h"
#include "util.h"

#define REPLAY_CHUNK 4096 /* savefile packets per turn of the event loop */

struct replay {
	struct pcap_state *st;
	char *path;
	char name[64];
	int fd;
	pcap_t *p;
	int pass; /* 1: checking the whole file; 2: timing its packets */
	uint64_t checked, bad;
	struct event *ev;
	struct capture cap;
};

static struct log_ratelimit rl_file = LOG_RATELIMIT_INIT;

static void replay_end(struct replay *rp, const char *state)
{
	if (rp->p) {
		pcap_close(rp->p);
		rp->p = NULL;
	}
	capture_flush(&rp->cap);
	capture_set_state(&rp->cap, state);
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
	if (!capture_time(h, true, &t) || h->caplen > h->len)
		rp->bad++;
}

static void refuse(struct replay *rp, const char *why)
{
	log_err("network/%s: %s: refused, nothing of it is used: %s", rp->name, rp->path, why);
	replay_end(rp, "refused");
}

static void replay_cb(evutil_socket_t fd, short what, void *arg)
{
	struct replay *rp = arg;
	const struct config *cfg = rp->st->src->cfg;
	char errbuf[PCAP_ERRBUF_SIZE] = "", msg[PCAP_ERRBUF_SIZE + 128];
	int n;

	if (rp->pass == 1) {
		n = pcap_dispatch(rp->p, REPLAY_CHUNK, check_packet, (u_char *)rp);
		if (n < 0) {
			snprintf(msg, sizeof(msg),
				 "the savefile is truncated or corrupt after %llu good packets (%s)",
				 (unsigned long long)rp->checked, pcap_geterr(rp->p));
			refuse(rp, msg);
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
			refuse(rp, msg);
			return;
		}
		pcap_close(rp->p);
		rp->p = NULL;
		if (!replay_open(rp, errbuf)) {
			snprintf(msg, sizeof(msg), "cannot read it again: %s", errbuf);
			refuse(rp, msg);
			return;
		}
		if (capture_set_filter(rp->p, config_net_capture(cfg, rp->name)->filter, msg,
				       sizeof(msg)) < 0) {
			log_err("network/%s: %s", rp->name, msg);
			replay_end(rp, "filter error");
			return;
		}
		capture_begin(&rp->cap, pcap_datalink(rp->p), true, capture_max_eps(cfg));
		rp->pass = 2;
		capture_set_state(&rp->cap, "reading");
		log_info("network/%s: %s: %llu packets, link type %s; replaying at their recorded "
			 "timestamps",
			 rp->name, rp->path, (unsigned long long)rp->checked,
			 pcap_datalink_val_to_name(rp->cap.dlt) ? pcap_datalink_val_to_name(rp->cap.dlt)
								: "unknown");
		event_active(rp->ev, EV_READ, 0);
		return;
	}
	n = pcap_dispatch(rp->p, REPLAY_CHUNK, capture_packet, (u_char *)&rp->cap);
	capture_flush(&rp->cap);
	if (n < 0) {
		log_limited(&rl_file, LOG_ERR,
			    "network/%s: %s changed while it was read: %s; stopped after %llu "
			    "packets",
			    rp->name, rp->path, pcap_geterr(rp->p),
			    (unsigned long long)rp->cap.packets);
		replay_end(rp, "damaged");
		return;
	}
	if (n > 0) {
		event_active(rp->ev, EV_READ, 0);
		return;
	}
	log_info("network/%s: replayed %llu packets (%llu matched the filter)", rp->name,
		 (unsigned long long)rp->checked, (unsigned long long)rp->cap.packets);
	replay_end(rp, "ended");
}

void net_replay_start(struct pcap_state *st)
{
	const struct config *cfg = st->src->cfg;
	struct replay *rp = xcalloc(1, sizeof(*rp));
	const char *base = strrchr(cfg->network.file, '/');
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct stat sb;

	st->rp = rp;
	rp->st = st;
	rp->fd = -1;
	rp->path = xstrdup(cfg->network.file);
	snprintf(rp->name, sizeof(rp->name), "%s", base ? base + 1 : rp->path);
	if (!pipeline_enabled(CLASS_NETWORK, rp->name)) {
		log_info("network/%s: not opened: disabled by policy", rp->name);
		return;
	}
	capture_attach(&rp->cap, rp->name, "savefile");
	capture_set_state(&rp->cap, "checking");
	/* O_NONBLOCK: a FIFO named here must not hang the event loop at open. */
	rp->fd = open(rp->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (rp->fd < 0) {
		log_errno(LOG_ERR, "network/%s: cannot open the savefile %s", rp->name, rp->path);
		replay_end(rp, "error");
		return;
	}
	if (fstat(rp->fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		log_err("network/%s: %s is not a regular file", rp->name, rp->path);
		replay_end(rp, "error");
		return;
	}
	if (sb.st_size == 0) {
		refuse(rp, "the file is empty");
		return;
	}
	if (!replay_open(rp, errbuf)) {
		if (strstr(errbuf, "unknown file format"))
			refuse(rp, "not a pcap or pcapng savefile (unknown file format)");
		else
			refuse(rp, errbuf[0] ? errbuf : "not a pcap or pcapng savefile");
		return;
	}
	rp->pass = 1;
	rp->ev = event_new(st->src->base, -1, 0, replay_cb, rp);
	if (!rp->ev) {
		log_err("network/%s: cannot register with the event loop", rp->name);
		replay_end(rp, "error");
		return;
	}
	event_active(rp->ev, EV_READ, 0);
}

void net_replay_stop(struct pcap_state *st)
{
	struct replay *rp = st->rp;

	if (!rp)
		return;
	if (rp->ev)
		event_free(rp->ev);
	if (rp->p)
		pcap_close(rp->p);
	if (rp->fd >= 0)
		close(rp->fd);
	capture_detach(&rp->cap, rp->name);
	free(rp->path);
	wipe(rp, sizeof(*rp));
	free(rp);
	st->rp = NULL;
}

void net_replay_reload(struct pcap_state *st)
{
	bool has = st->rp->cap.inst != NULL;

	if (has != pipeline_enabled(CLASS_NETWORK, st->rp->name)) {
		if (has)
			log_info("network/%s: closed: now disabled by policy", st->rp->name);
		net_replay_stop(st);
		net_replay_start(st);
	}
}

const char *net_replay_path(const struct pcap_state *st)
{
	return st->rp ? st->rp->path : "";
}
