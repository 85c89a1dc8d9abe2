/* entropyctl_metrics: status and sources in the Prometheus text exposition format (0.0.4),
 * for node_exporter's textfile collector or a scrape: one family per counter, HELP and TYPE
 * first, families never interleaved, label values escaped. Made from the replies as read
 * (entropyctl_client.h), tolerant of what an older daemon lacks: a family it gives no figure
 * for is left out, never made up. */
#include "autoconf.h"

#include "entropyctl_metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entropyctl_client.h"

static void prom_label(FILE *out, const char *name, const char *value, bool first)
{
	fprintf(out, "%s%s=\"", first ? "" : ",", name);
	for (const char *p = value; *p; p++) {
		if (*p == '\\' || *p == '"')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fprintf(out, "\\n");
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void prom_value(FILE *out, double v)
{
	char buf[64];

	if (isnan(v)) {
		fprintf(out, " NaN\n");
		return;
	}
	if (isinf(v)) {
		fprintf(out, " %sInf\n", v > 0 ? "+" : "-");
		return;
	}
	/* The shortest form that reads back as the same number. */
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fprintf(out, " %s\n", buf);
}

static void prom_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_plain(FILE *out, const char *name, const char *type, const char *help,
		       double v)
{
	prom_family(out, name, type, help);
	fprintf(out, "%s", name);
	prom_value(out, v);
}

/* Per instance: one label set {class, name}. */
enum {
	PROM_INT,
	PROM_REAL,
	PROM_HEALTH_OK,
	PROM_WEIGHT,
	PROM_HEALTH_FAILURES,
	PROM_REASON,
	PROM_SAMPLING, /* from Source.sampling's key; only instances that sample have it */
	PROM_UP,
	PROM_HEALTH_FAILED,
	PROM_STATE,
};
static const struct {
	const char *name, *type, *key;
	int how;
	const char *help;
} per_source[] = {
	{"entropyd_source_up", "gauge", NULL, PROM_UP,
	 "1 if the instance is open (read now), 0 if it could not be opened or waits (its state)."},
	{"entropyd_source_state", "gauge", NULL, PROM_STATE,
	 "The instance's state (label state: open, sampled, waiting for a condition of its own such as a link set down, not-open after an error, ended); always 1."},
	{"entropyd_source_health_failed", "gauge", NULL, PROM_HEALTH_FAILED,
	 "1 while the instance's health tests have failed (its timing became periodic, or its source is broken) and it earns no credit, 0 otherwise."},
	{"entropyd_source_events_total", "counter", "events", PROM_INT, "Events received."},
	{"entropyd_source_skipped_events_total", "counter", "skipped", PROM_INT,
	 "Events counted but not estimated: over sources.network.max_events_per_second, dropped by the kernel's capture buffer, without a usable timestamp, or arriving as policy disables the instance."},
	{"entropyd_source_mixed_bytes_total", "counter", "mixed_bytes", PROM_INT,
	 "Bytes handed to the pool."},
	{"entropyd_source_estimated_bits_total", "counter", "estimated_bits", PROM_REAL,
	 "Sum of the per-event entropy estimates, after the class cap."},
	{"entropyd_source_credited_bits_total", "counter", "credited_bits", PROM_REAL,
	 "Bits credited by policy."},
	{"entropyd_source_health_failures_total", "counter", NULL, PROM_HEALTH_FAILURES,
	 "SP 800-90B health test failures."},
	{"entropyd_source_estimate_bits_per_event", "gauge", "estimate_bits", PROM_REAL,
	 "The latest entropy estimate in bits per event (NaN before the first)."},
	{"entropyd_source_health_ok", "gauge", NULL, PROM_HEALTH_OK,
	 "1 if the instance passes its health tests, 0 in start-up or after a failure."},
	{"entropyd_source_credit_weight", "gauge", NULL, PROM_WEIGHT,
	 "The weight in force on the estimate: the policy's (1 trusted, the scale if reduced, 0 mix-only) times the source's own (the dominant-flow rule)."},
	{"entropyd_source_credit_reason", "gauge", NULL, PROM_REASON,
	 "Why the instance's credit does not grow now (label reason; none while it does); always 1."},
	{"entropyd_source_sample_ratio", "gauge", "ratio", PROM_SAMPLING,
	 "Network interfaces: the share of packets the kernel keeps (1: not sampling; it samples above max_events_per_second)."},
	{"entropyd_source_arrival_rate_per_second", "gauge", "arrival_rate", PROM_SAMPLING,
	 "Network interfaces: packets arriving a second that the filter takes, as last measured (NaN before)."},
};

/* Does the family have a member: sampling ones only where an instance samples. */
static bool prom_has(const json_t *sources, int how)
{
	size_t i;
	const json_t *s;

	json_array_foreach(sources, i, s)
		if (how != PROM_SAMPLING || json_is_object(json_object_get(s, "sampling")))
			return true;
	return false;
}

/* Open: from a daemon that does not say, every instance it lists but what is disabled. */
static bool up(const json_t *src)
{
	const json_t *u = json_object_get(src, "up");

	return json_is_boolean(u) ? json_is_true(u)
				  : strcmp(s_(json_object_get(src, "policy"), "mode"), "disabled");
}

/* The daemon's weight in force; from a daemon that does not give it, the policy's. */
static double weight(const json_t *src)
{
	const json_t *p = json_object_get(src, "policy");
	const char *mode = s_(p, "mode");
	double w = f_(json_object_get(src, "credit"), "weight");

	if (!isnan(w))
		return w;
	return !strcmp(mode, "trusted") ? 1 : !strcmp(mode, "reduced") ? f_(p, "scale") : 0;
}

/* The collector's walls (Status.collector): each one up or down, and how many are down
 * that this host allows. A daemon without them says nothing. */
static void print_walls(FILE *out, const json_t *w)
{
	const json_t *uid = json_object_get(w, "uid");
	const struct {
		const char *wall;
		bool up;
	} walls[] = {
		{"user", json_is_integer(uid) && json_integer_value(uid) != 0},
		{"bounding_set", b_(w, "bounding_set_empty")},
		{"no_new_privs", b_(w, "no_new_privs")},
		{"pid_namespace", b_(w, "pid_namespace")},
		{"mount_namespace", b_(w, "mount_namespace")},
		{"read_only_recursive", !strcmp(s_(w, "read_only"), "recursive")},
		{"landlock", i_(w, "landlock_abi") > 0},
		{"seccomp", b_(w, "seccomp")},
	};

	if (!json_is_object(w))
		return;
	prom_family(out, "entropyd_collector_wall", "gauge",
		    "1 if the collector's wall (label wall: user, not root; bounding_set, emptied; "
		    "no_new_privs; pid_namespace and mount_namespace, its own; read_only_recursive, "
		    "every mount it keeps; landlock; seccomp) is up, 0 if it is down.");
	for (size_t i = 0; i < ARRAY_SIZE(walls); i++) {
		fprintf(out, "entropyd_collector_wall{");
		prom_label(out, "wall", walls[i].wall, true);
		fprintf(out, "}");
		prom_value(out, walls[i].up);
	}
	prom_plain(out, "entropyd_collector_landlock_abi", "gauge",
		   "The Landlock ABI the collector is confined by; 0: none.",
		   (double)i_(w, "landlock_abi"));
	prom_plain(out, "entropyd_collector_walls_missing", "gauge",
		   "Walls of the collector that are down though this host allows them (logged as "
		   "a warning at start).",
		   (double)json_array_size(json_object_get(w, "missing")));
}

void entropyctl_metrics_print(FILE *out, const json_t *st, const json_t *sources)
{
	const json_t *d = json_object_get(st, "daemon"), *k = json_object_get(st, "kernel"),
		     *t = json_object_get(st, "totals");
	static const struct {
		const char *name, *key, *help;
	} totals[] = {
		{"entropyd_events_total", "events", "Events from every instance, gone ones too."},
		{"entropyd_skipped_events_total", "skipped", "Events not estimated."},
		{"entropyd_mixed_bytes_total", "mixed_bytes", "Bytes handed to the pool."},
		{"entropyd_estimated_bits_total", "estimated_bits", "Sum of entropy estimates."},
		{"entropyd_credited_bits_total", "credited_bits", "Bits credited by policy."},
		{"entropyd_feeds_total", "feeds", "Batches handed to the sink."},
		{"entropyd_fed_bytes_total", "fed_bytes", "Bytes handed to the sink."},
		{"entropyd_fed_credit_bits_total", "fed_credit_bits",
		 "Bits of credit given to the kernel."},
		{"entropyd_reseeds_total", "reseeds", "CRNG reseeds forced (RNDRESEEDCRNG)."},
		{"entropyd_feed_errors_total", "feed_errors", "Failed feeds (RNDADDENTROPY errors)."},
	};
	size_t i;
	const json_t *s;

	prom_family(out, "entropyd_info", "gauge", "entropyd's version and feed state; always 1.");
	fprintf(out, "entropyd_info{");
	prom_label(out, "version", s_(d, "version"), true);
	prom_label(out, "feed_mode", s_(d, "feed_mode"), false);
	prom_label(out, "feed_phase", s_(d, "feed_phase"), false);
	prom_label(out, "sink", s_(d, "sink"), false);
	prom_label(out, "kernel", s_(k, "version"), false);
	fprintf(out, "} 1\n");
	prom_plain(out, "entropyd_uptime_seconds", "gauge", "Seconds since entropyd started.",
		   (double)i_(d, "uptime_s"));
	if (json_is_string(json_object_get(k, "semantics"))) {
		prom_family(out, "entropyd_kernel_semantics_info", "gauge",
			    "How the kernel treats credit, and what told it; always 1.");
		fprintf(out, "entropyd_kernel_semantics_info{");
		prom_label(out, "semantics", s_(k, "semantics"), true);
		prom_label(out, "evidence", s_(k, "semantics_evidence"), false);
		fprintf(out, "} 1\n");
	}
	prom_plain(out, "entropyd_kernel_crng_ready", "gauge", "1 once the kernel's CRNG is ready.",
		   b_(k, "crng_ready"));
	prom_plain(out, "entropyd_kernel_credit_counts", "gauge",
		   "1 while the kernel still counts credited entropy.", b_(k, "credit_counts"));
	if (json_is_integer(json_object_get(k, "entropy_avail")))
		prom_plain(out, "entropyd_kernel_entropy_avail_bits", "gauge",
			   "The kernel's entropy_avail.", (double)i_(k, "entropy_avail"));
	if (json_is_number(json_object_get(k, "ready_after_s")))
		prom_plain(out, "entropyd_kernel_crng_ready_after_seconds", "gauge",
			   "Seconds from entropyd's start until the CRNG became ready.",
			   f_(k, "ready_after_s"));
	if (json_is_object(json_object_get(json_object_get(k, "seed"), "initramfs")))
		prom_plain(out, "entropyd_initramfs_credited_bits", "gauge",
			   "Bits entropyd in the initramfs credited at this boot (its boot record).",
			   f_(json_object_get(json_object_get(k, "seed"), "initramfs"),
			      "credited_bits"));
	prom_plain(out, "entropyd_sources", "gauge",
		   "Source instances found and enabled by policy, open or waiting to be.",
		   (double)i_(t, "instances"));
	for (size_t j = 0; j < ARRAY_SIZE(totals); j++)
		prom_plain(out, totals[j].name, "counter", totals[j].help, f_(t, totals[j].key));
	if (json_is_integer(json_object_get(t, "unsampled_completions")))
		prom_plain(out, "entropyd_block_unsampled_completions_total", "counter",
			   "Block tracepoint: completions perf counted and never wrote to a ring "
			   "(not sampled).",
			   (double)i_(t, "unsampled_completions"));
	prom_plain(out, "entropyd_reloads_total", "counter", "Configuration reloads applied.",
		   (double)i_(d, "reloads"));
	prom_plain(out, "entropyd_reload_failures_total", "counter",
		   "Configuration reloads rejected.", (double)i_(d, "reload_failures"));
	print_walls(out, json_object_get(st, "collector"));
	for (size_t j = 0; j < ARRAY_SIZE(per_source); j++) {
		if (!prom_has(sources, per_source[j].how))
			continue;
		prom_family(out, per_source[j].name, per_source[j].type, per_source[j].help);
		json_array_foreach(sources, i, s) {
			const json_t *h = json_object_get(s, "health");
			double v = 0;

			/* What policy disables is never opened: its reason, nothing more. */
			if (per_source[j].how != PROM_REASON &&
			    !strcmp(s_(json_object_get(s, "policy"), "mode"), "disabled"))
				continue;
			if (per_source[j].how == PROM_SAMPLING &&
			    !json_is_object(json_object_get(s, "sampling")))
				continue;

			switch (per_source[j].how) {
			case PROM_INT:
			case PROM_REAL:
				v = f_(s, per_source[j].key);
				break;
			case PROM_HEALTH_OK:
				v = !strcmp(s_(h, "state"), "ok");
				break;
			case PROM_WEIGHT:
				v = weight(s);
				break;
			case PROM_HEALTH_FAILURES:
				v = (double)i_(h, "failures");
				break;
			case PROM_REASON:
			case PROM_STATE:
				v = 1;
				break;
			case PROM_SAMPLING:
				v = f_(json_object_get(s, "sampling"), per_source[j].key);
				break;
			case PROM_UP:
				v = up(s);
				break;
			case PROM_HEALTH_FAILED:
				v = !strncmp(s_(h, "state"), "failed", 6);
				break;
			}
			fprintf(out, "%s{", per_source[j].name);
			prom_label(out, "class", s_(s, "class"), true);
			prom_label(out, "name", s_(s, "name"), false);
			if (per_source[j].how == PROM_REASON)
				prom_label(out, "reason", strcmp(entropyctl_client_why_not(s), "-") ? entropyctl_client_why_not(s) : "none",
					   false);
			else if (per_source[j].how == PROM_STATE)
				prom_label(out, "state", s_(s, "state"), false);
			fprintf(out, "}");
			prom_value(out, v);
		}
	}
}
