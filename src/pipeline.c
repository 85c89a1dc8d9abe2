/* pipeline: per-instance state and the path sample -> estimator -> health -> policy -> pool.
 * Sources hand in timestamps; everything that decides credit happens here. */
#include "autoconf.h"

#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "est.h"
#include "log.h"
#include "policy.h"
#include "pool.h"
#include "util.h"

struct instance {
	struct instance *next;
	enum src_class cls;
	char *name;
	char *kind;
	const char *state;
	unsigned flags;
	struct policy_rule rule;
	struct est est;
	struct rate_cap rate;
	double last_estimate;
	struct inst_counters c;
};

static struct {
	const struct config *cfg;
	struct pool *pool;
	struct instance *head;
	size_t n;
	struct inst_counters gone; /* counters of detached instances */
} P;

static long class_quantum(const struct config *cfg, enum src_class cls)
{
	switch (cls) {
	case CLASS_INPUT:
		return cfg->input.quantum_ns;
	case CLASS_BLOCK:
		return cfg->block.quantum_ns;
	case CLASS_NETWORK:
	case CLASS_COUNT:
		break;
	}
	return cfg->network.quantum_ns;
}

static struct est_params est_params_for(const struct instance *inst)
{
	return (struct est_params){
		.quantum_ns = (uint64_t)class_quantum(P.cfg, inst->cls),
		.cap_bits = inst->rule.cap_bits_per_event,
	};
}

void pipeline_init(const struct config *cfg, struct pool *pool)
{
	memset(&P, 0, sizeof(P));
	P.cfg = cfg;
	P.pool = pool;
}

static void add_counters(struct inst_counters *to, const struct inst_counters *from)
{
	to->events += from->events;
	to->skipped += from->skipped;
	to->mixed_bytes += from->mixed_bytes;
	to->estimated_bits += from->estimated_bits;
	to->credited_bits += from->credited_bits;
}

static void free_instance(struct instance *inst)
{
	est_fini(&inst->est);
	free(inst->name);
	free(inst->kind);
	wipe(inst, sizeof(*inst));
	free(inst);
}

void pipeline_fini(void)
{
	while (P.head) {
		struct instance *inst = P.head;

		P.head = inst->next;
		free_instance(inst);
	}
	memset(&P, 0, sizeof(P));
}

void pipeline_reconfigure(const struct config *cfg)
{
	P.cfg = cfg;
	for (struct instance *i = P.head; i; i = i->next) {
		struct est_params p;

		i->rule = policy_resolve(cfg, i->cls, i->name);
		p = est_params_for(i);
		if (p.quantum_ns != i->est.params.quantum_ns) {
			/* Symbols at another resolution are another stream: start afresh. */
			const struct est_ops *ops = i->est.ops;

			est_fini(&i->est);
			est_init(&i->est, ops, &p);
		}
		i->est.params = p;
	}
}

bool pipeline_enabled(enum src_class cls, const char *name)
{
	return policy_resolve(P.cfg, cls, name).mode != MODE_DISABLED;
}

struct instance *pipeline_attach(enum src_class cls, const char *name, const char *kind,
				 unsigned flags)
{
	struct instance *inst = xcalloc(1, sizeof(*inst));
	struct est_params p;

	inst->cls = cls;
	inst->name = xstrdup(name);
	inst->kind = xstrdup(kind ? kind : "");
	inst->state = "open";
	inst->flags = flags;
	inst->rule = policy_resolve(P.cfg, cls, name);
	p = est_params_for(inst);
	est_init(&inst->est, &est_kernel_ops, &p);
	inst->next = P.head;
	P.head = inst;
	P.n++;
	log_info("%s/%s: attached (%s), policy %s", class_name(cls), name,
		 inst->kind[0] ? inst->kind : "-", policy_mode_name(inst->rule.mode));
	return inst;
}

void pipeline_set_state(struct instance *inst, const char *state)
{
	inst->state = state;
}

void pipeline_sample(struct instance *inst, uint64_t t_ns)
{
	struct est_out out;
	double credit;

	inst->c.events++;
	if (inst->rule.mode == MODE_DISABLED) {
		inst->c.skipped++;
		return;
	}
	est_add(&inst->est, t_ns, &out);
	inst->last_estimate = out.bits;
	credit = policy_credit(&inst->rule, out.bits);
	credit = rate_cap_take(&inst->rate, inst->rule.cap_bits_per_second, credit, t_ns);
	inst->c.estimated_bits += out.bits;
	inst->c.credited_bits += credit;
	inst->c.mixed_bytes += sizeof(t_ns);
	pool_add(P.pool, &t_ns, sizeof(t_ns), credit);
}

void pipeline_detach(struct instance *inst)
{
	for (struct instance **pp = &P.head; *pp; pp = &(*pp)->next) {
		if (*pp != inst)
			continue;
		*pp = inst->next;
		P.n--;
		add_counters(&P.gone, &inst->c);
		log_info("%s/%s: detached after %llu events", class_name(inst->cls), inst->name,
			 (unsigned long long)inst->c.events);
		free_instance(inst);
		return;
	}
}

size_t pipeline_count(void)
{
	return P.n;
}

bool pipeline_info(size_t idx, struct inst_info *out)
{
	struct instance *i = P.head;

	/* Instances are listed oldest first. */
	if (idx >= P.n)
		return false;
	for (size_t k = P.n - 1 - idx; k > 0; k--)
		i = i->next;
	out->cls = i->cls;
	out->name = i->name;
	out->kind = i->kind;
	out->state = i->state;
	out->rule = i->rule;
	out->estimator = i->est.ops->name;
	out->last_estimate = i->last_estimate;
	out->kernel_credits = (i->flags & INST_KERNEL_CREDITS) != 0;
	out->c = i->c;
	return true;
}

void pipeline_totals(struct inst_counters *out)
{
	*out = P.gone;
	for (struct instance *i = P.head; i; i = i->next)
		add_counters(out, &i->c);
}
