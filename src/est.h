/* est: the estimator interface. An estimator turns an instance's event timestamps into
 * symbols and a conservative per-event entropy estimate; it never sees input contents. */
#ifndef ENTROPYD_EST_H
#define ENTROPYD_EST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "est_90b_noniid.h"
#include "util.h"

/* The least estimate credited, in bits per event. A source whose timing is replayed or
 * nearly periodic estimates at a few hundredths of a bit: what an estimator cannot yet
 * predict in each block (the first pass of a replayed loop), not fresh entropy. Below a
 * tenth of a bit the estimate is that residue, and it counts as zero. */
#define EST_MIN_BITS 0.1

/* The default quantum (sources.*.quantum_ns), a microsecond. */
#define EST_QUANTUM_DEFAULT_NS 1000

/* x in quanta. Every event is divided by its quantum, twice: the default one is a constant
 * here, which the compiler turns into a multiplication (a division by a variable costs
 * tens of cycles, as much as the rest of the estimator's step). */
static inline uint64_t est_quanta(uint64_t x, uint64_t quantum_ns)
{
	return quantum_ns == EST_QUANTUM_DEFAULT_NS ? x / EST_QUANTUM_DEFAULT_NS : x / quantum_ns;
}

struct est_params {
	uint64_t quantum_ns; /* timing resolution that symbols are taken at */
	double cap_bits;     /* the class's physical cap, bits per event */
	/* 0: full resolution. Otherwise the kernel already credits these events at this
	 * resolution (one jiffy): symbols come from the phase within the jiffy only. */
	uint64_t jiffy_ns;
	/* Event time between estimated blocks (est_online.c); 0: its default, 10 s. */
	uint64_t estimate_every_ns;
	/* Events closer than this to the one before are one batch (est_merge_ns()); 0: the
	 * quantum alone. */
	uint64_t batch_ns;
};

struct est_out {
	double bits;      /* estimate for this event, 0 <= bits <= cap_bits */
	bool have_symbol; /* false for the first event (no delta yet), and a merged one */
	uint8_t symbol;   /* the 8-bit symbol this event produced, for health tests/recording */
	bool merged;      /* part of the timing event before it (est_merged()): no symbol, 0 bits */
};

/*
 * Events closer together than the quantum, or than the class's batch gap, are one timing
 * event: the later ones (the rest of a busy disk's completions handled in one interrupt, a
 * burst of packets) are mixed and counted but have no timing of their own, so they give no
 * symbol, earn nothing and are not health-tested. A virtio disk's interrupt drains its
 * ring in order, one completion every 1 to 6 microseconds: those gaps are the handler's
 * loop, not the device, and as runs of up to 65 equal symbols they tripped the repetition
 * count test, at the permanent cutoff, on exactly the busiest sources (tests/data/health).
 * The next event's delta is taken from the last of them, not from the first: the span of
 * the burst (how many events the interrupt found) is not the next event's timing, and the
 * shorter delta is what the estimators saw before, so a merged run never adds to what the
 * event after it earns. An event earlier than the one before (a clock stepped back) is
 * merged too. merge_ns: est_merge_ns().
 */
static inline bool est_merged(uint64_t t_ns, uint64_t last_ns, uint64_t merge_ns)
{
	return t_ns < last_ns || t_ns - last_ns < merge_ns;
}

/* The most events merged in a row: one interrupt drains at most a ring (a virtio queue holds
 * 256 requests; the longest batch recorded was 73). Events closer than the gap for longer
 * than that are a source with a short fixed period, not a batch: the next one gives a
 * symbol, so the health tests see it (and fail it, as the gap repeats). */
#define EST_BATCH_MAX 256

/* est_merged(), counting the merged run in *run: false, and the run over, past
 * EST_BATCH_MAX. */
static inline bool est_merge_run(uint64_t t_ns, uint64_t last_ns, uint64_t merge_ns,
				 uint32_t *run)
{
	if (!est_merged(t_ns, last_ns, merge_ns) || *run >= EST_BATCH_MAX) {
		*run = 0;
		return false;
	}
	++*run;
	return true;
}

/* The least gap between two timing events: the quantum, or the batch gap if longer. */
static inline uint64_t est_merge_ns(const struct est_params *p)
{
	uint64_t q = p->quantum_ns ? p->quantum_ns : 1;

	return p->batch_ns > q ? p->batch_ns : q;
}

/* What an estimator currently thinks, for status (optional). */
struct est_report {
	uint64_t symbols;
	uint64_t blocks, estimated; /* full blocks seen, and estimated (see est_online.c) */
	uint64_t costly_runs, full_runs; /* estimates with the costly, and with all, estimators */
	uint64_t long_runs; /* estimates of the long window (est_online.c) */
	/* Its bound (bits per symbol; 8 before the first), the symbols it holds, and the bits
	 * its budget has left (below EST_MIN_BITS: its events earn nothing until it is back). */
	double long_h, long_budget;
	uint64_t long_symbols;
	bool have_estimate;
	double h;           /* min-entropy per symbol now used, when have_estimate */
	const char *min_by; /* which estimator set it, e.g. "LZ78Y", "bitstring Compression" */
	/* The latest result of each SP 800-90B estimator (enum sp90b_test), per view: literal in
	 * bits per symbol, bitstring in bits per bit. */
	double h_lit[SP90B_N_TESTS], h_bit[SP90B_N_TESTS];
	bool valid_lit[SP90B_N_TESTS], valid_bit[SP90B_N_TESTS];
};

struct est_ops {
	const char *name;
	void *(*create)(const struct est_params *p);
	/* n events in time order, out[i] for t_ns[i] (every field set): a run at once, so that
	 * a busy source makes one call, not one an event. */
	void (*add)(void *state, const uint64_t *t_ns, size_t n, struct est_out *out);
	void (*destroy)(void *state);
	void (*report)(void *state, struct est_report *r); /* may be NULL */
	/* Of the bits the last run's events were given (est_out.bits), those that did not go on
	 * to credit (est_uncredited()); may be NULL. */
	void (*uncredited)(void *state, double bits);
};

/* One estimator instance. */
struct est {
	const struct est_ops *ops;
	void *state;
	struct est_params params;
};

/* The kernel's own rule (Δ, Δ², Δ³), at the instance's quantum. */
extern const struct est_ops est_kernel_ops;
extern const struct est_ops est_online_sp90b_ops;
/* est_sp90b's schedule: the estimators (SP90B_TEST_BIT()s) a level runs, per view: the
 * cheap ones on every estimated block, the costly ones too on one in 12 intervals, all of
 * them on one in 60. */
enum { EST_LEVEL_CHEAP, EST_LEVEL_COSTLY, EST_LEVEL_ALL, EST_LEVELS };
extern const unsigned est_online_sp90b_lit[EST_LEVELS], est_online_sp90b_bit[EST_LEVELS];

const struct est_ops *est_find(const char *name);
void est_init(struct est *e, const struct est_ops *ops, const struct est_params *p);
/* A run of events, as est_add() on each in turn (inline: every event of every source comes
 * through here). */
static inline void est_add_run(struct est *e, const uint64_t *t_ns, size_t n,
			       struct est_out *out)
{
	e->ops->add(e->state, t_ns, n, out);
	/* The class cap is the last word, whatever an estimator says; and an estimate too small
	 * to tell from zero is zero. */
	for (size_t i = 0; i < n; i++) {
		if (!(out[i].bits >= EST_MIN_BITS))
			out[i].bits = 0;
		if (out[i].bits > e->params.cap_bits)
			out[i].bits = e->params.cap_bits;
	}
}
/* Of the bits est_add_run() gave the events of a run, `bits` did not go on to credit (the
 * policy, the per-second cap, a full pool or the health tests held them back). */
static inline void est_uncredited(struct est *e, double bits)
{
	if (e->ops->uncredited && bits > 0)
		e->ops->uncredited(e->state, bits);
}
/* One event. */
static inline void est_add(struct est *e, uint64_t t_ns, struct est_out *out)
{
	est_add_run(e, &t_ns, 1, out);
}
void est_fini(struct est *e);

#endif
