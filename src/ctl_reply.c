/* ctl_reply: the control socket's replies. Everything a reply says comes in as arguments (a
 * snapshot of the daemon, an instance's row, a request's bytes); nothing here reads the
 * daemon's state, the clock or a socket, so tests/unit/check_ctl_reply.c can build each
 * reply from a fixed snapshot and check its JSON. ctl.c takes the snapshots and serves the
 * socket. */
#include "autoconf.h"

#include "ctl_reply.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_policy.h"
#include "ctl_proto.h"
#include "source_class.h"
#include "source_disabled.h"
#include "util.h"

/* A JSON string even for bytes that are not UTF-8 (device names may be anything). */
static json_t *jstr(const char *s)
{
	json_t *v = json_string(s ? s : "");
	char *copy;

	if (v)
		return v;
	copy = xstrdup(s);
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

json_t *ctl_reply_info(void)
{
	json_t *ifaces = json_array();

	for (size_t i = 0; ctl_proto_interfaces[i]; i++)
		json_array_append_new(ifaces, json_string(ctl_proto_interfaces[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:o}", "vendor", "entropyd", "product", "entropyd",
			 "version", PACKAGE_VERSION, "url", PACKAGE_URL, "interfaces", ifaces);
}

/* What entropyd in the initramfs did at this boot (its boot record): Seed.initramfs. */
static json_t *initramfs_record(const struct kboot *r)
{
	json_t *srcs;

	if (!r)
		return json_null();
	srcs = json_array();
	for (size_t i = 0; i < r->n_sources; i++)
		json_array_append_new(srcs, json_pack("{s:s, s:o, s:I, s:o}", "class", r->src[i].cls,
						      "name", jstr(r->src[i].name), "events",
						      (json_int_t)r->src[i].events, "credited_bits",
						      ctl_proto_real(r->src[i].credited_bits)));
	return json_pack("{s:o, s:o, s:b, s:b, s:o, s:o, s:o, s:o}", "started_s",
			 r->started_s >= 0 ? ctl_proto_real(r->started_s) : json_null(), "ran_s",
			 r->ran_s >= 0 ? ctl_proto_real(r->ran_s) : json_null(), "ended", r->ended,
			 "ready_at_start", r->ready_at_start, "ready_after_s",
			 r->ready_after_s >= 0 ? ctl_proto_real(r->ready_after_s) : json_null(),
			 "credited_bits", ctl_proto_real(r->credited_bits), "credited_before_ready_bits",
			 ctl_proto_real(r->credited_before_ready), "sources", srcs);
}

/* How this boot's CRNG got seeded and what entropyd added: Kernel.seed. Where the CRNG was
 * ready when this instance started and entropyd ran in the initramfs, the verdict is that
 * instance's. */
static json_t *seed_record(const struct ctl_snapshot *snap)
{
	const struct ctl_status *st = &snap->st;
	const struct kseed *k = snap->seed;
	const struct kboot *r = snap->ready_at_start ? st->boot : NULL;
	struct kseed_boot b = {
		.credit_until_ready = st->credit_until_ready,
		.ready_at_start = snap->ready_at_start,
		.ready_now = st->crng_ready,
		.ready_after_s = st->ready_after_s,
		.needed_at_start = snap->needed_at_start,
		.credited_before_ready = st->credited_before_ready,
		.credited = (double)st->fed_credit_bits,
	};
	char text[512];
	enum kernel_seed_verdict v;

	if (r) {
		b.in_initramfs = true;
		b.ready_at_start = r->ready_at_start;
		b.ready_now = true;
		b.ready_after_s = r->ready_after_s;
		b.needed_at_start = r->needed_at_start;
		b.credited_before_ready = r->credited_before_ready;
		b.credited = r->credited_bits;
	}
	v = kernel_seed_verdict(k, &b, text, sizeof(text));
	return json_pack(
		"{s:{s:b, s:b, s:b, s:o, s:o, s:s}, s:o, s:{s:o, s:s}, s:b, s:o, s:o, s:s, s:s,"
		" s:o}",
		"cpu_rng", "rdrand", k->rdrand, "rdseed", k->rdseed, "trusted", k->cpu_trusted,
		"trust_cpu", k->trust_cpu < 0 ? json_null() : json_boolean(k->trust_cpu),
		"config_trust_cpu",
		k->trust_cpu_config < 0 ? json_null() : json_boolean(k->trust_cpu_config),
		"trusted_from", k->cpu_trust_from,
		"hw_rng", k->hw_rng[0] ? jstr(k->hw_rng) : json_null(),
		"bootloader", "trust_bootloader",
		k->trust_bootloader < 0 ? json_null() : json_boolean(k->trust_bootloader),
		"seed", "not detectable from user space",
		"ready_at_start", snap->ready_at_start,
		"needed_bits_at_start",
		snap->needed_at_start < 0 ? json_null() : json_integer(snap->needed_at_start),
		"credited_before_ready_bits",
		snap->ready_at_start || !st->credit_until_ready ? json_null()
							       : ctl_proto_real(st->credited_before_ready),
		"verdict", kernel_seed_verdict_name(v), "summary", text, "initramfs",
		initramfs_record(st->boot));
}

/* The collector's walls (priv_sandbox.h). */
static json_t *walls_record(const struct priv_sandbox_walls *w)
{
	json_t *missing = json_array();

	for (size_t i = 0; i < w->n_missing; i++)
		json_array_append_new(missing, json_string(w->missing[i]));
	return json_pack("{s:s, s:I, s:I, s:b, s:b, s:b, s:b, s:s, s:o, s:b, s:o}", "user",
			 w->user, "uid", (json_int_t)w->uid, "gid", (json_int_t)w->gid,
			 "bounding_set_empty", w->bounding, "no_new_privs", w->no_new_privs,
			 "pid_namespace", !w->pidns_errno, "mount_namespace", !w->mntns_errno,
			 "read_only", w->mntns_errno ? "none" : w->ro_errno ? "top-mounts" : "recursive",
			 "landlock_abi", w->landlock_abi > 0 ? json_integer(w->landlock_abi) : json_null(),
			 "seccomp", w->seccomp, "missing", missing);
}

json_t *ctl_reply_status(const struct ctl_snapshot *snap)
{
	const struct ctl_status *s = &snap->st;
	const struct inst_counters *t = &snap->totals;
	char kver[32];
	json_t *avail, *ready;

	snprintf(kver, sizeof(kver), "%u.%u", s->kernel_major, s->kernel_minor);
	avail = s->entropy_avail >= 0 ? json_integer(s->entropy_avail) : json_null();
	/* A tenth of a second is all anyone needs of it. */
	ready = s->ready_after_s >= 0 ? ctl_proto_real(round(s->ready_after_s * 10) / 10) : json_null();
	return json_pack(
		"{s:o, s:{s:s, s:i, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:o},"
		" s:{s:s, s:o, s:o, s:o, s:b, s:b, s:o, s:o, s:I, s:o, s:o},"
		" s:{s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:I, s:o}}",
		"collector", walls_record(snap->walls),
		"daemon", "version", PACKAGE_VERSION, "protocol", CTL_PROTO_VERSION, "pid",
		(json_int_t)snap->pid, "uptime_s", (json_int_t)(s->uptime_ns / NS_PER_SEC),
		"feed_mode", jstr(s->feed_mode), "feed_phase", jstr(s->feed_phase), "sink",
		jstr(s->sink), "reloads", (json_int_t)s->reloads, "reload_failures",
		(json_int_t)s->reload_failures, "config", jstr(s->config),
		"kernel", "version", kver, "semantics", jstr(s->kernel_semantics),
		"semantics_evidence", jstr(s->kernel_evidence), "semantics_reason",
		jstr(s->kernel_reason), "crng_ready", s->crng_ready, "credit_counts",
		s->credit_counts, "entropy_avail", avail, "ready_after_s", ready, "hz",
		(json_int_t)snap->hz, "hz_from", jstr(snap->hz_from), "seed", seed_record(snap),
		"totals", "instances", (json_int_t)snap->instances, "events", (json_int_t)t->events,
		"skipped", (json_int_t)t->skipped, "mixed_bytes", (json_int_t)t->mixed_bytes,
		"estimated_bits", ctl_proto_real(t->estimated_bits), "credited_bits",
		ctl_proto_real(t->credited_bits), "held_bits", ctl_proto_real(t->held_bits), "feeds",
		(json_int_t)s->feeds, "fed_bytes",
		(json_int_t)s->fed_bytes, "fed_credit_bits", (json_int_t)s->fed_credit_bits,
		"reseeds", (json_int_t)s->reseeds, "feed_errors", (json_int_t)s->feed_errors,
		"unsampled_completions",
		s->block_tracepoint ? json_integer((json_int_t)s->block_unsampled) : json_null());
}

/* Where the source samples its events: the state, the share kept, the estimated rate. */
static json_t *sampling_record(const struct inst_info *in)
{
	if (!in->sampling)
		return json_null();
	return json_pack("{s:s, s:o, s:o}", "state", in->sampling, "ratio",
			 ctl_proto_real(in->sample_ratio), "arrival_rate", ctl_proto_real(in->arrival_rate));
}

/* One reason credit does not grow, as {reason, detail}, if not listed yet. */
static void add_reason(json_t *list, const char *reason, const char *detail)
{
	size_t i;
	json_t *r;

	json_array_foreach(list, i, r)
		if (!strcmp(json_string_value(json_object_get(r, "reason")), reason))
			return;
	json_array_append_new(list, json_pack("{s:s, s:o}", "reason", reason, "detail",
					      jstr(detail)));
}

static bool health_failed(const char *h)
{
	return !strncmp(h, "failed", 6);
}

/* Every reason that holds, the one that decides first: not open before anything said of its
 * events; then what earns it nothing by rule (the policy, the kernel's sampling, a flow
 * weighed to zero); then the kernel that no longer counts credit, which decides for all the
 * rest; then the health tests', the pipeline's own and a flow weighed down. */
static json_t *reasons(const struct inst_info *in, const struct src_view *v, bool counts)
{
	json_t *list = json_array();
	char buf[320];
	bool open = !strcmp(v->state, "open");

	if (!open && strcmp(v->state, "disabled")) {
		snprintf(buf, sizeof(buf), "%s%s%s", v->detail ? v->detail : v->state,
			 v->retry ? "; tried again " : "", v->retry ? v->retry : "");
		add_reason(list, v->state, buf);
	}
	if (in->reason == PIPELINE_DISABLED)
		add_reason(list, feed_pipeline_reason_name(in->reason), in->reason_text);
	if (in->rule.mode == MODE_MIX_ONLY)
		add_reason(list, "mix-only", "policy: mix-only (mixed in, credited zero)");
	if (in->sampling && in->sample_ratio < 1)
		add_reason(list, "sampled", "sampled: the kernel keeps a share of the packets; "
			   "mixed, not credited");
	if (in->flow_zero)
		add_reason(list, "flow", in->flow_text);
	if (!counts)
		add_reason(list, "kernel", "the kernel no longer counts credit (its CRNG is ready)");
	/* The pipeline's sentence where it has one: it has the figures. */
	if (health_failed(in->health)) {
		snprintf(buf, sizeof(buf), "health test failed (%s): no credit until it passes again",
			 in->health_last);
		add_reason(list, "health", in->reason == PIPELINE_HEALTH ? in->reason_text : buf);
	} else if (open && !strcmp(in->health, "startup")) {
		add_reason(list, "startup", in->reason == PIPELINE_STARTUP
						    ? in->reason_text
						    : "health tests' start-up: no credit before it passes");
	}
	if (in->reason != PIPELINE_CREDITS && (open || in->reason != PIPELINE_IDLE))
		add_reason(list, feed_pipeline_reason_name(in->reason), in->reason_text);
	if (in->flow_text[0])
		add_reason(list, "flow", in->flow_text);
	return list;
}

/* What the core says of an instance (core); a row of what policy disables is not in the
 * core (NULL). */
static void view_of(const struct inst_info *in, const struct src_view *core, struct src_view *v)
{
	if (core) {
		*v = *core;
	} else {
		bool dis = in->rule.mode == MODE_DISABLED;

		v->state = dis ? "disabled" : "open";
		v->detail = in->state;
		v->retry = NULL;
		v->retry_in_s = NAN;
	}
	/* Where the kernel samples an open interface, that is its state. */
	if (!strcmp(v->state, "open") && in->sampling && in->sample_ratio < 1)
		v->state = "sampled";
}

/* v: the state to show. */
static json_t *source_record(const struct config *cfg, const struct inst_info *in, bool counts,
			     const struct src_view *given)
{
	struct src_view v = *given;
	json_t *why;
	const char *first;
	bool up;

	up = !strcmp(v.state, "open") || !strcmp(v.state, "sampled");
	why = reasons(in, &v, counts);
	if (json_array_size(why) == 0 && in->reason != PIPELINE_CREDITS)
		add_reason(why, feed_pipeline_reason_name(in->reason), in->reason_text);
	first = json_string_value(json_object_get(json_array_get(why, 0), "reason"));
	return json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:b, s:o, s:o, s:s, s:{s:s, s:o, s:o, s:o}, s:o, s:o, s:b,"
		" s:s, s:I,"
		" s:{s:o, s:o, s:I, s:I, s:o}, s:I, s:I, s:I, s:I, s:o, s:o, s:o,"
		" s:{s:o, s:o, s:o, s:o}, s:o}",
		"class", jstr(source_class_name(in->cls)), "name", jstr(in->name), "kind", jstr(in->kind),
		"state", json_string(v.state), "detail", jstr(v.detail ? v.detail : in->state),
		"up", up, "retry_in_s", ctl_proto_real(v.retry_in_s), "retry",
		v.retry ? json_string(v.retry) : json_null(), "backend",
		in->backend ? in->backend : source_class_backend(cfg, in->cls),
		"policy", "mode", config_mode_name_policy(in->rule.mode), "scale",
		in->rule.mode == MODE_REDUCED ? ctl_proto_real(in->rule.scale) : json_null(),
		"cap_bits_per_event", ctl_proto_real(in->rule.cap_bits_per_event), "cap_bits_per_second",
		ctl_proto_real(in->rule.cap_bits_per_second),
		"estimator", jstr(in->estimator), "estimate_bits", ctl_proto_real(in->last_estimate),
		"kernel_credits", in->kernel_credits, "symbols", in->jiffy_ns ? "sub-jiffy" : "full",
		"jiffy_ns", (json_int_t)in->jiffy_ns,
		"health", "state", jstr(up || in->rule.mode == MODE_DISABLED ? in->health : "-"),
		"last_failure", jstr(in->health_last),
		"failures", (json_int_t)in->health_failures, "requalified",
		(json_int_t)in->health_requalified, "retry_in_s",
		ctl_proto_real(isnan(in->health_retry_in) ? v.retry_in_s : in->health_retry_in),
		"events", (json_int_t)in->c.events, "skipped", (json_int_t)in->c.skipped,
		"merged", (json_int_t)in->c.merged,
		"mixed_bytes", (json_int_t)in->c.mixed_bytes, "estimated_bits",
		ctl_proto_real(in->c.estimated_bits), "credited_bits", ctl_proto_real(in->c.credited_bits),
		"held_bits", ctl_proto_real(in->c.held_bits),
		"credit", "reason", first ? json_string(first) : json_null(),
		"detail",
		first ? json_incref(json_object_get(json_array_get(why, 0), "detail")) : json_null(),
		"reasons", why,
		"weight", ctl_proto_real(in->weight), "sampling", sampling_record(in));
}

/* A name of the configuration that chooses what is read and matches nothing: a row of its
 * own, not open, that says what to check. */
json_t *ctl_reply_source(const struct config *cfg, const struct inst_info *in,
			 const struct src_view *core, bool counts)
{
	struct src_view v = {.state = "open"};

	view_of(in, core, &v);
	return source_record(cfg, in, counts, &v);
}

json_t *ctl_reply_unmatched(const struct config *cfg, enum src_class cls, const char *pattern,
			    const char *key, bool counts)
{
	char detail[400], where[200];
	struct src_view v = {.state = "not-open", .detail = detail, .retry = "when one appears",
			     .retry_in_s = NAN};
	struct inst_info in = {0};

	switch (cls) {
	case CLASS_BLOCK:
		snprintf(where, sizeof(where), "lsblk lists the disks");
		break;
	case CLASS_NETWORK:
		snprintf(where, sizeof(where), "ip link lists the interfaces");
		break;
	default:
		snprintf(where, sizeof(where), "the devices are the event* nodes of %s",
			 cfg->input.watch);
		break;
	}
	snprintf(detail, sizeof(detail), "matches nothing on this host: check %s \"%s\" (%s)",
		 key, pattern, where);
	in.cls = cls;
	in.name = pattern;
	in.kind = "-";
	in.state = detail;
	in.backend = "-";
	in.rule = config_policy_resolve(cfg, cls, pattern);
	in.estimator = "-";
	in.last_estimate = NAN;
	in.health = "-";
	in.health_last = "none";
	in.health_retry_in = NAN;
	in.reason = PIPELINE_IDLE;
	return source_record(cfg, &in, counts, &v);
}

static json_t *string_list(char *const *msgs, size_t n)
{
	json_t *list = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, jstr(msgs[i]));
	return list;
}

json_t *ctl_reply_reload(int rc, const struct config_errors *errs, json_t **params)
{
	if (rc < 0)
		return ctl_proto_error_new(CTL_E_CONFIG_INVALID,
				     json_pack("{s:o}", "errors", string_list(errs->msg, errs->n)));
	*params = json_pack("{s:o}", "notices", string_list(errs->note, errs->n_note));
	return NULL;
}

bool ctl_reply_request(const char *msg, size_t len, bool root,
		       const struct ctl_reply_methods *m, void *arg, json_t **reply,
		       enum ctl_reply_verdict *verdict, const char **method)
{
	struct ctl_call call;
	json_t *err = NULL, *params = NULL;
	const char *iface, *desc;
	bool oneway;

	*method = NULL;
	if (ctl_proto_parse_call(msg, len, &call, &err) < 0) {
		*verdict = CTL_REPLY_MALFORMED;
		if (call.oneway) {
			json_decref(err);
			return false;
		}
		*reply = err;
		return true;
	}
	*method = ctl_proto_methods[call.method].name;
	*verdict = CTL_REPLY_ANSWERED;
	if (ctl_proto_methods[call.method].root_only && !root) {
		*verdict = CTL_REPLY_DENIED;
		err = ctl_proto_error_new(CTL_E_PERMISSION_DENIED, NULL);
	} else {
		switch (call.method) {
		case CTL_GET_INFO:
			params = ctl_reply_info();
			break;
		case CTL_GET_INTERFACE_DESCRIPTION:
			iface = json_string_value(json_object_get(call.params, "interface"));
			desc = ctl_proto_interface_description(iface);
			if (desc)
				params = json_pack("{s:s}", "description", desc);
			else
				err = ctl_proto_error_str(CTL_E_INTERFACE_NOT_FOUND, "interface", iface);
			break;
		case CTL_GET_STATUS:
			params = m->status(arg);
			break;
		case CTL_GET_SOURCES:
			params = m->sources(arg);
			break;
		case CTL_RELOAD:
			err = m->reload(arg, &params);
			break;
		case CTL_METHOD_COUNT:
			break;
		}
	}
	oneway = call.oneway;
	ctl_proto_call_free(&call);
	if (oneway) {
		json_decref(err);
		json_decref(params);
		return false;
	}
	*reply = err ? err : params ? ctl_proto_reply_new(params) : NULL;
	return true;
}
