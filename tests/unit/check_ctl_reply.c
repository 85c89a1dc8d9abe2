/* check_ctl_reply: the control socket's replies, built from a fixed snapshot and fixed
 * instances, and checked member by member as a client reads them; and every request's
 * answer through ctl_reply_request, the daemon's own entry point: malformed ones, refused
 * ones, oneway ones, and the methods it routes to the daemon. The socket, its clients and
 * the pacing of what users other than root see are t_ctl.sh's. */
#include "autoconf.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ctl_proto.h"
#include "ctl_reply.h"
#include "testutil.h"
#include "util.h"

static struct config *cfg;

static void setup(void)
{
	cfg = config_defaults();
}

static void teardown(void)
{
	config_free(cfg);
}

/* ---- status ---- */

static const struct priv_sandbox_walls walls_all = {
	.user = "entropyd",
	.uid = 998,
	.gid = 997,
	.bounding = true,
	.no_new_privs = true,
	.landlock_abi = 6,
	.seccomp = true,
};

static const struct kseed seed = {
	.major = 6,
	.minor = 1,
	.trust_cpu = -1,
	.trust_cpu_config = 0,
	.cpu_trust_from = "CONFIG_RANDOM_TRUST_CPU is off",
	.trust_bootloader = 0,
};

/* A daemon on 6.1 whose CRNG became ready 1.26 s after it started, with 200 of the 256
 * bits it waited for from entropyd. */
static struct ctl_snapshot snapshot(void)
{
	struct ctl_snapshot s = {
		.st = {
			.uptime_ns = 3 * NS_PER_SEC + NS_PER_SEC / 2,
			.feed_mode = "auto",
			.feed_phase = "mix",
			.sink = "kernel",
			.kernel_major = 6,
			.kernel_minor = 1,
			.kernel_semantics = "until-ready",
			.kernel_evidence = "poolsize",
			.kernel_reason = "poolsize 256: credit counts until the CRNG is ready",
			.crng_ready = true,
			.credit_counts = false,
			.entropy_avail = 256,
			.ready_after_s = 1.26,
			.credit_until_ready = true,
			.credited_before_ready = 200,
			.feeds = 12,
			.fed_bytes = 4096,
			.fed_credit_bits = 230,
			.reseeds = 2,
			.feed_errors = 1,
			.reloads = 3,
			.reload_failures = 1,
			.block_tracepoint = true,
			.block_unsampled = 7,
			.config = "/etc/entropyd.conf",
		},
		.totals = {.events = 5000, .skipped = 10, .merged = 3, .mixed_bytes = 40000,
			   .estimated_bits = 900.5, .credited_bits = 230.25, .held_bits = 1.5},
		.instances = 3,
		.hz = 250,
		.hz_from = "CONFIG_HZ",
		.pid = 4242,
		.walls = &walls_all,
		.seed = &seed,
		.ready_at_start = false,
		.needed_at_start = 256,
	};

	return s;
}

START_TEST(test_status)
{
	struct ctl_snapshot s = snapshot();
	json_t *v = ctl_reply_status(&s), *walls, *seedj;
	json_int_t pid, uptime, proto, instances, events, skipped, feeds, reseeds, unsampled, hz;
	json_int_t avail;
	const char *version, *mode, *phase, *kver, *sem, *ev, *summary, *config;
	double ready, credited, held;
	int crng, counts;
	json_error_t e;

	ck_assert_ptr_nonnull(v);
	ck_assert_msg(json_unpack_ex(v, &e, 0,
				     "{s:{s:s, s:I, s:I, s:I, s:s, s:s, s:s}, s:{s:s, s:s, s:s, s:b,"
				     " s:b, s:I, s:f, s:I, s:o}, s:{s:I, s:I, s:I, s:f, s:f, s:I,"
				     " s:I, s:I}}",
				     "daemon", "version", &version, "protocol", &proto, "pid", &pid,
				     "uptime_s", &uptime, "feed_mode", &mode, "feed_phase", &phase,
				     "config", &config, "kernel", "version", &kver, "semantics", &sem,
				     "semantics_evidence", &ev, "crng_ready", &crng, "credit_counts",
				     &counts, "entropy_avail", &avail, "ready_after_s", &ready, "hz",
				     &hz, "seed", &seedj, "totals", "instances", &instances, "events",
				     &events, "skipped", &skipped, "credited_bits", &credited,
				     "held_bits", &held, "feeds", &feeds, "reseeds", &reseeds,
				     "unsampled_completions", &unsampled) == 0,
		      "%s", e.text);
	ck_assert_str_eq(version, PACKAGE_VERSION);
	ck_assert_int_eq(proto, CTL_PROTO_VERSION);
	ck_assert_int_eq(pid, 4242);
	ck_assert_int_eq(uptime, 3); /* whole seconds */
	ck_assert_str_eq(mode, "auto");
	ck_assert_str_eq(phase, "mix");
	ck_assert_str_eq(config, "/etc/entropyd.conf");
	ck_assert_str_eq(kver, "6.1");
	ck_assert_str_eq(sem, "until-ready");
	ck_assert_str_eq(ev, "poolsize");
	ck_assert(crng);
	ck_assert(!counts);
	ck_assert_int_eq(avail, 256);
	ck_assert_double_eq(ready, 1.3); /* a tenth of a second is all anyone needs */
	ck_assert_int_eq(hz, 250);
	ck_assert_int_eq(instances, 3);
	ck_assert_int_eq(events, 5000);
	ck_assert_int_eq(skipped, 10);
	ck_assert_double_eq(credited, 230.25);
	ck_assert_double_eq(held, 1.5);
	ck_assert_int_eq(feeds, 12);
	ck_assert_int_eq(reseeds, 2);
	ck_assert_int_eq(unsampled, 7);
	/* The verdict: entropyd's credit made it ready, and the summary says how much. */
	ck_assert_str_eq(json_string_value(json_object_get(seedj, "verdict")), "credited");
	summary = json_string_value(json_object_get(seedj, "summary"));
	ck_assert_ptr_nonnull(strstr(summary, "credited 200 of the 256 bits"));
	ck_assert_ptr_nonnull(strstr(summary, "ready 1.3 s after entropyd started"));
	ck_assert_double_eq(json_real_value(json_object_get(seedj, "credited_before_ready_bits")),
			    200);
	ck_assert_int_eq(json_integer_value(json_object_get(seedj, "needed_bits_at_start")), 256);
	ck_assert(json_is_null(json_object_get(seedj, "initramfs")));
	ck_assert(json_is_false(json_object_get(json_object_get(seedj, "cpu_rng"), "trusted")));
	/* Every wall up: the collector's record says so, field by field. */
	walls = json_object_get(v, "collector");
	{
		json_t *want = json_pack("{s:s, s:i, s:i, s:b, s:b, s:b, s:b, s:s, s:i, s:b, s:[]}",
					 "user", "entropyd", "uid", 998, "gid", 997,
					 "bounding_set_empty", 1, "no_new_privs", 1, "pid_namespace",
					 1, "mount_namespace", 1, "read_only", "recursive",
					 "landlock_abi", 6, "seccomp", 1, "missing");

		ck_assert_msg(json_equal(walls, want), "%s", json_dumps(walls, JSON_COMPACT));
		json_decref(want);
	}
	json_decref(v);
}
END_TEST

/* What is not known is null, not a made-up number. */
START_TEST(test_status_unknowns)
{
	struct ctl_snapshot s = snapshot();
	json_t *v, *k;

	s.st.entropy_avail = -1;
	s.st.ready_after_s = -1;
	s.st.block_tracepoint = false;
	s.st.crng_ready = false;
	s.needed_at_start = -1;
	v = ctl_reply_status(&s);
	ck_assert_ptr_nonnull(v);
	k = json_object_get(v, "kernel");
	ck_assert(json_is_null(json_object_get(k, "entropy_avail")));
	ck_assert(json_is_null(json_object_get(k, "ready_after_s")));
	ck_assert(json_is_null(json_object_get(json_object_get(v, "totals"),
					       "unsampled_completions")));
	ck_assert(json_is_null(json_object_get(json_object_get(k, "seed"),
					       "needed_bits_at_start")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(k, "seed"), "verdict")),
			 "not-ready");
	json_decref(v);
}
END_TEST

/* Walls down: each shows as down, and the reasons a host allowed more are listed. */
START_TEST(test_status_walls_down)
{
	struct priv_sandbox_walls w = walls_all;
	struct ctl_snapshot s = snapshot();
	json_t *v, *c;

	w.pidns_errno = 1;
	w.ro_errno = 38;
	w.landlock_abi = 0;
	w.seccomp = false;
	snprintf(w.missing[0], sizeof(w.missing[0]), "Landlock: the kernel has it, yet EPERM");
	w.n_missing = 1;
	s.walls = &w;
	v = ctl_reply_status(&s);
	c = json_object_get(v, "collector");
	ck_assert(json_is_false(json_object_get(c, "pid_namespace")));
	ck_assert(json_is_true(json_object_get(c, "mount_namespace")));
	ck_assert_str_eq(json_string_value(json_object_get(c, "read_only")), "top-mounts");
	ck_assert(json_is_null(json_object_get(c, "landlock_abi")));
	ck_assert(json_is_false(json_object_get(c, "seccomp")));
	ck_assert_uint_eq(json_array_size(json_object_get(c, "missing")), 1);
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(c, "missing"), 0)),
			 "Landlock: the kernel has it, yet EPERM");
	json_decref(v);
	w.mntns_errno = 1;
	v = ctl_reply_status(&s);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(v, "collector"),
							    "read_only")),
			 "none");
	json_decref(v);
}
END_TEST

/* The initramfs's instance did it: the verdict and the record are that instance's. */
START_TEST(test_status_initramfs)
{
	struct kboot boot = {
		.started_s = 0.8,
		.ran_s = 2.5,
		.ended = true,
		.ready_at_start = false,
		.needed_at_start = 256,
		.ready_after_s = 0.6,
		.credited_bits = 300,
		.credited_before_ready = 256,
		.n_sources = 1,
	};
	struct ctl_snapshot s = snapshot();
	json_t *v, *seedj, *r;

	snprintf(boot.src[0].cls, sizeof(boot.src[0].cls), "block");
	snprintf(boot.src[0].name, sizeof(boot.src[0].name), "vda\xff");
	boot.src[0].events = 900;
	boot.src[0].credited_bits = 300;
	s.st.boot = &boot;
	s.ready_at_start = true;
	v = ctl_reply_status(&s);
	seedj = json_object_get(json_object_get(v, "kernel"), "seed");
	ck_assert_str_eq(json_string_value(json_object_get(seedj, "verdict")), "credited");
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(seedj, "summary")),
				     "entropyd in the initramfs credited 256 of the 256 bits"));
	/* Ready at this instance's start: nothing of its own was credited before. */
	ck_assert(json_is_null(json_object_get(seedj, "credited_before_ready_bits")));
	r = json_object_get(seedj, "initramfs");
	ck_assert_double_eq(json_real_value(json_object_get(r, "credited_bits")), 300);
	ck_assert(json_is_true(json_object_get(r, "ended")));
	/* A name that is not UTF-8 is still a string: the byte becomes '?'. */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(r,
									   "sources"),
								   0),
						   "name")),
			 "vda?");
	json_decref(v);
}
END_TEST

/* ---- sources ---- */

static struct inst_info instance(enum src_class cls, const char *name)
{
	struct inst_info in = {
		.cls = cls,
		.name = name,
		.kind = "disk",
		.state = "open",
		.rule = {.mode = MODE_TRUSTED, .scale = 1, .cap_bits_per_event = 2,
			 .cap_bits_per_second = 64},
		.estimator = "sp800-90b",
		.last_estimate = 1.5,
		.health = "ok",
		.health_last = "none",
		.health_retry_in = NAN,
		.c = {.events = 100, .skipped = 1, .merged = 2, .mixed_bytes = 800,
		      .estimated_bits = 150, .credited_bits = 140, .held_bits = 0},
		.reason = PIPELINE_CREDITS,
		.weight = 1,
	};

	return in;
}

static const char *reason_at(const json_t *row, size_t i)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(json_object_get(row, "credit"),
								"reasons"),
						i),
				"reason"));
}

START_TEST(test_source_credits)
{
	struct inst_info in = instance(CLASS_BLOCK, "loop0");
	struct src_view core = {.state = "open", .detail = NULL, .retry = NULL,
				.retry_in_s = NAN};
	json_t *row = ctl_reply_source(cfg, &in, &core, true);
	json_int_t events, mixed;
	const char *cls, *name, *state, *mode, *health, *backend;
	double est, credited, weight;
	int up;
	json_error_t e;

	ck_assert_ptr_nonnull(row);
	ck_assert_msg(json_unpack_ex(row, &e, 0,
				     "{s:s, s:s, s:s, s:b, s:s, s:{s:s}, s:f, s:{s:s}, s:I, s:I,"
				     " s:f, s:{s:f}}",
				     "class", &cls, "name", &name, "state", &state, "up", &up,
				     "backend", &backend, "policy", "mode", &mode, "estimate_bits",
				     &est, "health", "state", &health, "events", &events,
				     "mixed_bytes", &mixed, "credited_bits", &credited, "credit",
				     "weight", &weight) == 0,
		      "%s", e.text);
	ck_assert_str_eq(cls, "block");
	ck_assert_str_eq(name, "loop0");
	ck_assert_str_eq(state, "open");
	ck_assert(up);
	ck_assert_str_eq(backend, "auto"); /* the class's, from the configuration */
	ck_assert_str_eq(mode, "trusted");
	ck_assert_double_eq(est, 1.5);
	ck_assert_str_eq(health, "ok");
	ck_assert_int_eq(events, 100);
	ck_assert_int_eq(mixed, 800);
	ck_assert_double_eq(credited, 140);
	ck_assert_double_eq(weight, 1);
	/* Credit grows: no reason it does not. */
	ck_assert(json_is_null(json_object_get(json_object_get(row, "credit"), "reason")));
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(row, "credit"),
							  "reasons")),
			  0);
	ck_assert(json_is_null(json_object_get(json_object_get(row, "policy"), "scale")));
	ck_assert(json_is_null(json_object_get(row, "sampling")));
	json_decref(row);
}
END_TEST

/* The reasons credit does not grow, the one that decides first. */
START_TEST(test_source_reasons)
{
	struct inst_info in = instance(CLASS_NETWORK, "eth0");
	struct src_view core = {.state = "open", .retry_in_s = NAN};
	struct src_view waiting = {.state = "not-open", .detail = "ENETDOWN: the link is down",
				   .retry = "when it comes up", .retry_in_s = 5};
	json_t *row;

	/* Mix-only, on a kernel that no longer counts: the policy decides first. */
	in.rule.mode = MODE_MIX_ONLY;
	in.reason = PIPELINE_MIX_ONLY;
	snprintf(in.reason_text, sizeof(in.reason_text), "policy: mix-only");
	row = ctl_reply_source(cfg, &in, &core, false);
	ck_assert_str_eq(reason_at(row, 0), "mix-only");
	ck_assert_str_eq(reason_at(row, 1), "kernel");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "credit"),
							    "reason")),
			 "mix-only");
	json_decref(row);

	/* Not open: that comes before anything said of its events, with when it is retried. */
	in = instance(CLASS_NETWORK, "eth0");
	row = ctl_reply_source(cfg, &in, &waiting, true);
	ck_assert(json_is_false(json_object_get(row, "up")));
	ck_assert_str_eq(reason_at(row, 0), "not-open");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
				 json_object_get(json_object_get(row, "credit"), "reasons"), 0),
							    "detail")),
			 "ENETDOWN: the link is down; tried again when it comes up");
	ck_assert_double_eq(json_real_value(json_object_get(row, "retry_in_s")), 5);
	/* Its health is not shown while it is not open. */
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "health"),
							    "state")),
			 "-");
	json_decref(row);

	/* A failed health test, in the pipeline's own sentence. */
	in = instance(CLASS_BLOCK, "sda");
	in.health = "failed-permanent";
	in.health_last = "repetition count";
	in.reason = PIPELINE_HEALTH;
	snprintf(in.reason_text, sizeof(in.reason_text), "its timing became periodic");
	row = ctl_reply_source(cfg, &in, &core, true);
	ck_assert_str_eq(reason_at(row, 0), "health");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "credit"),
							    "detail")),
			 "its timing became periodic");
	json_decref(row);

	/* Sampled by the kernel: its state says so, and it is mixed, not credited. */
	in = instance(CLASS_NETWORK, "eth1");
	in.sampling = "on";
	in.sample_ratio = 0.25;
	in.arrival_rate = 40000;
	row = ctl_reply_source(cfg, &in, &core, true);
	ck_assert_str_eq(json_string_value(json_object_get(row, "state")), "sampled");
	ck_assert(json_is_true(json_object_get(row, "up")));
	ck_assert_str_eq(reason_at(row, 0), "sampled");
	ck_assert_double_eq(json_real_value(json_object_get(json_object_get(row, "sampling"),
							     "ratio")),
			    0.25);
	json_decref(row);

	/* Reduced: the scale is shown. */
	in = instance(CLASS_NETWORK, "eth2");
	in.rule.mode = MODE_REDUCED;
	in.rule.scale = 0.25;
	row = ctl_reply_source(cfg, &in, &core, true);
	ck_assert_double_eq(json_real_value(json_object_get(json_object_get(row, "policy"),
							     "scale")),
			    0.25);
	json_decref(row);
}
END_TEST

/* What policy disables has no instance in the core: its own row says so. */
START_TEST(test_source_disabled)
{
	struct inst_info in = instance(CLASS_NETWORK, "*");
	json_t *row;

	in.rule.mode = MODE_DISABLED;
	in.state = "policy: disabled";
	in.reason = PIPELINE_DISABLED;
	snprintf(in.reason_text, sizeof(in.reason_text), "policy: disabled (never opened)");
	row = ctl_reply_source(cfg, &in, NULL, true);
	ck_assert_str_eq(json_string_value(json_object_get(row, "state")), "disabled");
	ck_assert_str_eq(json_string_value(json_object_get(row, "detail")), "policy: disabled");
	ck_assert(json_is_false(json_object_get(row, "up")));
	ck_assert_str_eq(reason_at(row, 0), "disabled");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "policy"), "mode")),
			 "disabled");
	json_decref(row);
	/* Without a core's view but enabled (the core has not seen it yet): open. */
	in = instance(CLASS_INPUT, "event3");
	row = ctl_reply_source(cfg, &in, NULL, true);
	ck_assert_str_eq(json_string_value(json_object_get(row, "state")), "open");
	json_decref(row);
}
END_TEST

START_TEST(test_unmatched)
{
	json_t *row = ctl_reply_unmatched(cfg, CLASS_NETWORK, "wlan*", "sources.network.interfaces",
					  true);
	const char *detail;

	ck_assert_str_eq(json_string_value(json_object_get(row, "class")), "network");
	ck_assert_str_eq(json_string_value(json_object_get(row, "name")), "wlan*");
	ck_assert_str_eq(json_string_value(json_object_get(row, "state")), "not-open");
	ck_assert(json_is_false(json_object_get(row, "up")));
	detail = json_string_value(json_object_get(row, "detail"));
	ck_assert_str_eq(detail, "matches nothing on this host: check sources.network.interfaces "
				 "\"wlan*\" (ip link lists the interfaces)");
	ck_assert_str_eq(reason_at(row, 0), "not-open");
	ck_assert_str_eq(json_string_value(json_object_get(row, "retry")), "when one appears");
	/* The rule that would apply to it, from the configuration: network is reduced. */
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(row, "policy"), "mode")),
			 config_mode_name_policy(cfg->policy[CLASS_NETWORK].rule.mode));
	json_decref(row);
	row = ctl_reply_unmatched(cfg, CLASS_INPUT, "Logitech*", "sources.input.include", true);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(row, "detail")),
				     "the devices are the event* nodes of /dev/input"));
	json_decref(row);
}
END_TEST

/* ---- requests ---- */

struct calls {
	int status, sources, reload;
	int reload_rc;
};

static json_t *m_status(void *arg)
{
	struct calls *c = arg;

	c->status++;
	return json_pack("{s:s}", "from", "status");
}

static json_t *m_sources(void *arg)
{
	struct calls *c = arg;

	c->sources++;
	return json_pack("{s:[]}", "sources");
}

static json_t *m_reload(void *arg, json_t **params)
{
	struct calls *c = arg;
	static char bad[] = "/etc/entropyd.conf:3: policy.block.mode: \"sometimes\" is not a mode";
	static char noted[] = "a note";
	char *msg[] = {bad};
	char *note[] = {noted};
	struct config_errors errs = {.msg = msg, .n = 1, .note = note, .n_note = 1};

	c->reload++;
	return ctl_reply_reload(c->reload_rc, &errs, params);
}

static const struct ctl_reply_methods methods = {m_status, m_sources, m_reload};

/* The reply to msg, as a client would read it; NULL if none was to be sent. */
static json_t *ask(const char *msg, bool root, struct calls *c, enum ctl_reply_verdict *v,
		   const char **method)
{
	json_t *reply = NULL;

	if (!ctl_reply_request(msg, strlen(msg), root, &methods, c, &reply, v, method))
		return NULL;
	ck_assert_msg(reply != NULL, "no reply made for %s", msg);
	return reply;
}

static const char *error_of(const json_t *reply)
{
	return json_string_value(json_object_get(reply, "error"));
}

/* Malformed requests: each gets the error that names its problem, and no method runs. */
static const struct {
	const char *msg, *error, *param, *value;
} malformed[] = {
	{"{", CTL_E_INVALID_REQUEST, NULL, NULL},
	{"[]", CTL_E_INVALID_REQUEST, NULL, NULL},
	{"\"io.entropyd.GetStatus\"", CTL_E_INVALID_REQUEST, NULL, NULL},
	{"{\"parameters\":{}}", CTL_E_INVALID_REQUEST, NULL, NULL},
	{"{\"method\":7}", CTL_E_INVALID_REQUEST, NULL, NULL},
	{"{\"method\":\"io.entropyd.GetStatus\",\"extra\":1}", CTL_E_INVALID_REQUEST, NULL, NULL},
	{"{\"method\":\"io.entropyd.GetStatus\",\"method\":\"io.entropyd.Reload\"}",
	 CTL_E_INVALID_REQUEST, NULL, NULL},
	{"{\"method\":\"io.entropyd.GetStatus\",\"parameters\":[]}", CTL_E_INVALID_REQUEST, NULL,
	 NULL},
	{"{\"method\":\"io.entropyd.GetStatus\",\"oneway\":\"yes\"}", CTL_E_INVALID_REQUEST, NULL,
	 NULL},
	{"{\"method\":\"io.entropyd.GetStatus\",\"upgrade\":true}", CTL_E_INVALID_REQUEST, NULL,
	 NULL},
	{"{\"method\":\"io.entropyd.Shutdown\"}", CTL_E_METHOD_NOT_FOUND, "method",
	 "io.entropyd.Shutdown"},
	{"{\"method\":\"com.example.Get\"}", CTL_E_INTERFACE_NOT_FOUND, "interface",
	 "com.example"},
	{"{\"method\":\"io.entropyd.GetStatus\",\"parameters\":{\"verbose\":true}}",
	 CTL_E_INVALID_PARAMETER, "parameter", "verbose"},
	{"{\"method\":\"org.varlink.service.GetInterfaceDescription\"}", CTL_E_INVALID_PARAMETER,
	 "parameter", "interface"},
	{"{\"method\":\"org.varlink.service.GetInterfaceDescription\",\"parameters\":"
	 "{\"interface\":3}}",
	 CTL_E_INVALID_PARAMETER, "parameter", "interface"},
};

START_TEST(test_request_malformed)
{
	struct calls c = {0};
	enum ctl_reply_verdict v;
	const char *method = "x";
	json_t *reply = ask(malformed[_i].msg, true, &c, &v, &method);

	ck_assert_ptr_nonnull(reply);
	ck_assert_int_eq(v, CTL_REPLY_MALFORMED);
	ck_assert_ptr_null(method);
	ck_assert_msg(!strcmp(error_of(reply), malformed[_i].error), "%s: %s, not %s",
		      malformed[_i].msg, error_of(reply), malformed[_i].error);
	if (malformed[_i].param)
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(reply,
										    "parameters"),
								   malformed[_i].param)),
				 malformed[_i].value);
	else /* InvalidRequest says why in words */
		ck_assert_uint_gt(strlen(json_string_value(json_object_get(
					  json_object_get(reply, "parameters"), "reason"))),
				  0);
	ck_assert_int_eq(c.status + c.sources + c.reload, 0);
	json_decref(reply);
}
END_TEST

/* Oneway, a malformed request gets no answer at all where it could be told oneway: its
 * shape was right, its method or parameters were not. A call of the wrong shape is refused
 * before its flags are read, and answered. */
START_TEST(test_request_malformed_oneway)
{
	static const char *const silent[] = {
		"{\"oneway\":true,\"method\":\"io.entropyd.Shutdown\"}",
		"{\"oneway\":true,\"method\":\"io.entropyd.GetStatus\",\"parameters\":{\"x\":1}}",
	};
	const char *shape = "{\"oneway\":true,\"method\":\"io.entropyd.GetStatus\",\"extra\":1}";
	struct calls c = {0};
	enum ctl_reply_verdict v;
	const char *method;
	json_t *reply;

	for (size_t i = 0; i < ARRAY_SIZE(silent); i++) {
		ck_assert_ptr_null(ask(silent[i], true, &c, &v, &method));
		ck_assert_int_eq(v, CTL_REPLY_MALFORMED);
	}
	reply = ask(shape, true, &c, &v, &method);
	ck_assert_int_eq(v, CTL_REPLY_MALFORMED);
	ck_assert_str_eq(error_of(reply), CTL_E_INVALID_REQUEST);
	json_decref(reply);
	ck_assert_int_eq(c.status + c.sources + c.reload, 0);
}
END_TEST

START_TEST(test_request_methods)
{
	struct calls c = {0};
	enum ctl_reply_verdict v;
	const char *method;
	json_t *reply;

	/* GetInfo: answered here, for anyone. */
	reply = ask("{\"method\":\"org.varlink.service.GetInfo\"}", false, &c, &v, &method);
	ck_assert_int_eq(v, CTL_REPLY_ANSWERED);
	ck_assert_str_eq(method, "org.varlink.service.GetInfo");
	ck_assert_ptr_null(error_of(reply));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(reply, "parameters"),
							    "vendor")),
			 "entropyd");
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_object_get(reply, "parameters"),
						 "interfaces"),
				 1)),
			 CTL_INTERFACE);
	json_decref(reply);
	/* GetInterfaceDescription: ours, and one that is not. */
	reply = ask("{\"method\":\"org.varlink.service.GetInterfaceDescription\",\"parameters\":"
		    "{\"interface\":\"io.entropyd\"}}",
		    false, &c, &v, &method);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(
					     json_object_get(reply, "parameters"), "description")),
				     "interface io.entropyd"));
	json_decref(reply);
	reply = ask("{\"method\":\"org.varlink.service.GetInterfaceDescription\",\"parameters\":"
		    "{\"interface\":\"org.example\"}}",
		    false, &c, &v, &method);
	ck_assert_int_eq(v, CTL_REPLY_ANSWERED);
	ck_assert_str_eq(error_of(reply), CTL_E_INTERFACE_NOT_FOUND);
	json_decref(reply);
	/* Status and sources: the daemon's to make, for anyone. */
	reply = ask("{\"method\":\"io.entropyd.GetStatus\"}", false, &c, &v, &method);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(reply, "parameters"),
							    "from")),
			 "status");
	json_decref(reply);
	reply = ask("{\"method\":\"io.entropyd.GetSources\",\"parameters\":null}", false, &c, &v,
		    &method);
	ck_assert(json_is_array(json_object_get(json_object_get(reply, "parameters"),
						"sources")));
	json_decref(reply);
	ck_assert_int_eq(c.status, 1);
	ck_assert_int_eq(c.sources, 1);
	/* Oneway: the method runs, nothing is sent. */
	ck_assert_ptr_null(ask("{\"method\":\"io.entropyd.GetStatus\",\"oneway\":true}", false, &c,
			       &v, &method));
	ck_assert_int_eq(c.status, 2);
}
END_TEST

START_TEST(test_request_reload)
{
	struct calls c = {0};
	enum ctl_reply_verdict v;
	const char *method;
	json_t *reply;

	/* Only root may: anyone else is refused, and nothing is reloaded. */
	reply = ask("{\"method\":\"io.entropyd.Reload\"}", false, &c, &v, &method);
	ck_assert_int_eq(v, CTL_REPLY_DENIED);
	ck_assert_str_eq(method, "io.entropyd.Reload");
	ck_assert_str_eq(error_of(reply), CTL_E_PERMISSION_DENIED);
	ck_assert_int_eq(c.reload, 0);
	json_decref(reply);
	/* Root, a configuration that is rejected: its errors, every one. */
	c.reload_rc = -1;
	reply = ask("{\"method\":\"io.entropyd.Reload\"}", true, &c, &v, &method);
	ck_assert_int_eq(v, CTL_REPLY_ANSWERED);
	ck_assert_str_eq(error_of(reply), CTL_E_CONFIG_INVALID);
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_object_get(reply, "parameters"), "errors"),
				 0)),
			 "/etc/entropyd.conf:3: policy.block.mode: \"sometimes\" is not a mode");
	json_decref(reply);
	/* Root, applied: the notices. */
	c.reload_rc = 0;
	reply = ask("{\"method\":\"io.entropyd.Reload\"}", true, &c, &v, &method);
	ck_assert_ptr_null(error_of(reply));
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_object_get(json_object_get(reply, "parameters"), "notices"),
				 0)),
			 "a note");
	ck_assert_int_eq(c.reload, 2);
	json_decref(reply);
}
END_TEST

/* A method that cannot make its parameters: a reply is due, and none could be made (the
 * socket closes the connection rather than let the client wait). */
static json_t *m_nothing(void *arg)
{
	(void)arg;
	return NULL;
}

START_TEST(test_request_unmade)
{
	struct ctl_reply_methods m = {m_nothing, m_nothing, m_reload};
	enum ctl_reply_verdict v;
	const char *method;
	json_t *before = json_object(), *reply = before;
	const char *msg = "{\"method\":\"io.entropyd.GetSources\"}";

	ck_assert(ctl_reply_request(msg, strlen(msg), true, &m, NULL, &reply, &v, &method));
	ck_assert_ptr_null(reply);
	ck_assert_int_eq(v, CTL_REPLY_ANSWERED);
	json_decref(before);
}
END_TEST

static Suite *ctl_reply_suite(void)
{
	Suite *s = suite_create("ctl_reply");
	TCase *st = tcase_create("status");
	TCase *src = tcase_create("sources");
	TCase *req = tcase_create("requests");

	tcase_add_test(st, test_status);
	tcase_add_test(st, test_status_unknowns);
	tcase_add_test(st, test_status_walls_down);
	tcase_add_test(st, test_status_initramfs);
	suite_add_tcase(s, st);
	tcase_add_checked_fixture(src, setup, teardown);
	tcase_add_test(src, test_source_credits);
	tcase_add_test(src, test_source_reasons);
	tcase_add_test(src, test_source_disabled);
	tcase_add_test(src, test_unmatched);
	suite_add_tcase(s, src);
	tcase_add_loop_test(req, test_request_malformed, 0, (int)ARRAY_SIZE(malformed));
	tcase_add_test(req, test_request_malformed_oneway);
	tcase_add_test(req, test_request_methods);
	tcase_add_test(req, test_request_reload);
	tcase_add_test(req, test_request_unmade);
	suite_add_tcase(s, req);
	return s;
}

int main(void)
{
	return tu_run_suite(ctl_reply_suite());
}
