/* priv_policy: what the privileged process allows the collector, from the configuration it
 * reads itself (see priv_policy.c): what is selected, the budgets, the credit ceiling. */
#ifndef ENTROPYD_PRIV_POLICY_H
#define ENTROPYD_PRIV_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "block_disks.h"
#include "config.h"
#include "priv_wire.h"

/* The credit ceiling is a token bucket of bits: it refills at the ceiling's rate (see
 * ceiling_rate in priv_policy.c) and holds at most max(PRIV_DEPTH_S seconds of it,
 * PRIV_DEPTH_MIN bits, the most one batch can carry); it starts with one second's worth, and
 * each rise of the rate (an instance newly counted) adds one second of the rise, as the
 * collector's per-instance caps start full. */
#define PRIV_DEPTH_S 10
#define PRIV_DEPTH_MIN 4096

/* Packet sockets: one per selected interface and PRIV_PACKET_SPARE more at once, then one
 * per selected interface every PRIV_PACKET_EVERY_S seconds; past that, EAGAIN. */
#define PRIV_PACKET_SPARE 2
#define PRIV_PACKET_EVERY_S 10
/* Perf events, per CPU and kind (enum priv_perf): as many as the kind needs on a CPU (one
 * owner, one waker, one disk event per disk the configuration selects) and PRIV_PERF_SPARE
 * more at once, then that many every PRIV_PERF_EVERY_S seconds; past that, EAGAIN. */
#define PRIV_PERF_SPARE 2
#define PRIV_PERF_EVERY_S 10

struct priv_policy {
	struct config *cfg; /* its own: freed with it, replaced on reload */
	/* Input nodes that are not the input major's character devices (FIFOs and files of
	 * recorded events) count only if they were there at start: a collector can make those
	 * (uid 0), but not character devices (no CAP_MKNOD). */
	struct strlist start_nodes;
	/* The ceiling. */
	double rate;      /* bits per second */
	double rate_high; /* the highest it has been */
	double depth;     /* bits */
	double tokens;    /* starts with a second's worth (ceiling_update) */
	/* The boot allowance (feed.boot_allowance): what the kernel still needed at start, as
	 * this process reads it itself; spent after the tokens, never refilled. */
	double boot_left;
	uint64_t refill_ns, rate_ns;
	uint64_t asked, credited, clipped; /* bits */
	/* Packet sockets that may still be handed out now, and when that was last brought up
	 * to date (0: never). */
	double socket_tokens;
	uint64_t socket_ns;
	unsigned packet_sockets; /* handed out since start */
	/* Perf events that may still be handed out now, per CPU and kind, and when each count
	 * was last brought up to date (0: never). */
	unsigned perf_cpus;
	double *perf_tokens;
	uint64_t *perf_ns;
	unsigned disks;       /* the disks the configuration selects (the ceiling counts them) */
	uint64_t perf_events; /* handed out since start */
};

/* Start from cfg (taken: freed by priv_policy_free): the input nodes there now, the
 * ceiling counted, the boot allowance read from the kernel if feed.boot_allowance. */
void priv_policy_init(struct priv_policy *pol, struct config *cfg);
void priv_policy_free(struct priv_policy *pol);
/* A reloaded configuration (taken) replaces the one before; the ceiling is counted again. */
void priv_policy_reload(struct priv_policy *pol, struct config *next);

/* Does the configuration select whole disk NAME of /sys/block (its numbers in *info) for
 * blktrace or the tracepoint? */
bool priv_policy_disk(const struct priv_policy *pol, const char *name,
		      struct block_disk_info *info);
/* Does it select interface NAME for capture: named in network.interfaces (exactly or by a
 * glob), or, with "auto", any that is not loopback (the collector's auto also leaves out
 * tunnels whose packets arrived on another interface first: this is the upper bound), and
 * its policy is not "disabled"? */
bool priv_policy_iface(const struct priv_policy *pol, const char *name);

/* Of a request to credit `bits`, how many the ceiling lets through now (the rest clipped,
 * counted, logged at a limited rate). Counts them as asked. */
int priv_policy_ceiling(struct priv_policy *pol, int bits);
/* `bits` were credited: taken from the tokens, then from the boot allowance. */
void priv_policy_spend(struct priv_policy *pol, int bits);
/* Count the instances again now (a trace started, a reload). */
void priv_policy_recount(struct priv_policy *pol);
/* The ceiling's rate now, bits per second: per class, the most one instance may be credited
 * per second times the instances this process can vouch for (priv_policy.c). */
double priv_policy_rate(const struct priv_policy *pol);

/* May one more perf event of kind what (enum priv_perf) be made on cpu? Its count (to take
 * one from once the event is made), or NULL (said, at a limited rate): EAGAIN. */
double *priv_policy_perf(struct priv_policy *pol, unsigned cpu, unsigned what);
/* May one more packet socket be handed out? Taken from the budget if so; false (said, at a
 * limited rate): EAGAIN. */
bool priv_policy_packet(struct priv_policy *pol);

#endif
