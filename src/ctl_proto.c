/* ctl_proto: the io.entropyd Varlink interface, its framing and messages (jansson). */
#include "autoconf.h"

#include "ctl_proto.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* Raise CTL_PROTO_VERSION (ctl_proto.h) with every change here, and add a changelog line. */
#define STR_(x) #x
#define STR(x) STR_(x)
static const char io_entropyd[] =
	"# entropyd harvests entropy from the timing of hardware events, credits it by the\n"
	"# administrator's policy and feeds the kernel's random pool. This interface shows what\n"
	"# it does and why. It gives counts and estimates only: never the time of an event.\n"
	"# Interface version " STR(CTL_PROTO_VERSION) " (Daemon.protocol).\n"
	"interface io.entropyd\n"
	"\n"
	"# The daemon as a whole.\n"
	"type Daemon (\n"
	"  version: string,\n"
	"  # the version of this interface\n"
	"  protocol: int,\n"
	"  pid: int,\n"
	"  # whole seconds since start\n"
	"  uptime_s: int,\n"
	"  # the configured feed mode: auto, boot, watermark or always\n"
	"  feed_mode: string,\n"
	"  # what the feed does now: boot, mix, watermark or always\n"
	"  feed_phase: string,\n"
	"  # kernel or dry-run\n"
	"  sink: string,\n"
	"  reloads: int,\n"
	"  reload_failures: int,\n"
	"  # the configuration file in force\n"
	"  config: string\n"
	")\n"
	"\n"
	"# What the kernel does with credit.\n"
	"type Kernel (\n"
	"  # major.minor of the running kernel\n"
	"  version: string,\n"
	"  # until-ready: credit counts until the CRNG is ready, then is ignored (the 2022\n"
	"  # rewrite: 5.18, and the stable kernels it was backported to); depleting: a pool of\n"
	"  # 4096 bits that reads deplete, credit counts always\n"
	"  semantics: string,\n"
	"  # what decided it: poolsize, read_wakeup_threshold or (a last resort) version\n"
	"  semantics_evidence: string,\n"
	"  # the semantics found and why, in words\n"
	"  semantics_reason: string,\n"
	"  # the CRNG is initialised: getrandom() no longer blocks\n"
	"  crng_ready: bool,\n"
	"  # credit still counts (with the until-ready semantics only until the CRNG is ready)\n"
	"  credit_counts: bool,\n"
	"  # entropy_avail in bits; null if it cannot be read\n"
	"  entropy_avail: ?int,\n"
	"  # seconds from entropyd's start until the CRNG became ready, if entropyd saw it\n"
	"  ready_after_s: ?float,\n"
	"  # the tick rate behind the no-double-counting rule, and where it was read\n"
	"  hz: int,\n"
	"  hz_from: string,\n"
	"  # how this boot's CRNG got seeded and what entropyd added\n"
	"  seed: Seed\n"
	")\n"
	"\n"
	"# The CPU's RNG instructions and whether the kernel credits them.\n"
	"type CpuRng (\n"
	"  rdrand: bool,\n"
	"  rdseed: bool,\n"
	"  trusted: bool,\n"
	"  # random.trust_cpu on the command line; null if not given\n"
	"  trust_cpu: ?bool,\n"
	"  # CONFIG_RANDOM_TRUST_CPU in the kernel's config; null if not known\n"
	"  config_trust_cpu: ?bool,\n"
	"  # why trusted or not, in words\n"
	"  trusted_from: string\n"
	")\n"
	"\n"
	"# A seed the bootloader may have passed.\n"
	"type Bootloader (\n"
	"  # random.trust_bootloader on the command line; null if not given\n"
	"  trust_bootloader: ?bool,\n"
	"  # whether one was passed, in words\n"
	"  seed: string\n"
	")\n"
	"\n"
	"# Does this machine need entropyd? How the CRNG got seeded at this boot.\n"
	"type Seed (\n"
	"  cpu_rng: CpuRng,\n"
	"  # hw_random's current device (virtio_rng.0, tpm-rng-0); null if none\n"
	"  hw_rng: ?string,\n"
	"  bootloader: Bootloader,\n"
	"  # the CRNG was ready when entropyd started\n"
	"  ready_at_start: bool,\n"
	"  # the bits the CRNG still waited for when entropyd started; null if not known\n"
	"  needed_bits_at_start: ?int,\n"
	"  # the bits entropyd credited before it became ready; null where credit never\n"
	"  # counted for it (ready at start, or the semantics before 5.18)\n"
	"  credited_before_ready_bits: ?float,\n"
	"  # old-kernel, ready-before, credited, ready-without or not-ready (the initramfs's\n"
	"  # where the CRNG was ready at start and entropyd ran there)\n"
	"  verdict: string,\n"
	"  # the verdict in a sentence\n"
	"  summary: string,\n"
	"  # what entropyd in the initramfs did at this boot (its boot record); null if none\n"
	"  initramfs: ?Initramfs\n"
	")\n"
	"\n"
	"# What entropyd did in the initramfs at this boot, as it left it for this instance.\n"
	"type Initramfs (\n"
	"  # seconds from boot to its start, and how long it ran\n"
	"  started_s: ?float,\n"
	"  ran_s: ?float,\n"
	"  # it wrote the record as it exited (false: it was cut short)\n"
	"  ended: bool,\n"
	"  ready_at_start: bool,\n"
	"  # seconds from its start until the CRNG became ready, if it saw it\n"
	"  ready_after_s: ?float,\n"
	"  credited_bits: float,\n"
	"  credited_before_ready_bits: float,\n"
	"  sources: []InitramfsSource\n"
	")\n"
	"\n"
	"type InitramfsSource (\n"
	"  class: string,\n"
	"  name: string,\n"
	"  events: int,\n"
	"  credited_bits: float\n"
	")\n"
	"\n"
	"# Counters since start, over every instance, including those that went away.\n"
	"type Totals (\n"
	"  # source instances found and enabled by policy, open or not (Source.up says which)\n"
	"  instances: int,\n"
	"  events: int,\n"
	"  # events counted but not estimated: over the class's max_events_per_second, or the\n"
	"  # instance disabled by policy\n"
	"  skipped: int,\n"
	"  mixed_bytes: int,\n"
	"  estimated_bits: float,\n"
	"  # credit by policy, vouched for by the health tests, before the sink\n"
	"  credited_bits: float,\n"
	"  # credit earned that waits for the health tests (the end of an APT window)\n"
	"  held_bits: float,\n"
	"  # batches handed to the sink, their bytes and the bits credited to the kernel\n"
	"  feeds: int,\n"
	"  fed_bytes: int,\n"
	"  fed_credit_bits: int,\n"
	"  reseeds: int,\n"
	"  # failed feeds (RNDADDENTROPY ioctl errors)\n"
	"  feed_errors: int,\n"
	"  # the block tracepoint's completions perf counted and never wrote to a ring (not\n"
	"  # sampled); null where the block class does not read the tracepoint\n"
	"  unsampled_completions: ?int\n"
	")\n"
	"\n"
	"# The policy rule in force for one instance.\n"
	"type Policy (\n"
	"  # trusted, reduced, mix-only or disabled\n"
	"  mode: string,\n"
	"  # the weight of a reduced instance; null for the other modes\n"
	"  scale: ?float,\n"
	"  cap_bits_per_event: float,\n"
	"  cap_bits_per_second: float\n"
	")\n"
	"\n"
	"# SP 800-90B health tests of one instance.\n"
	"type Health (\n"
	"  # startup, ok, failed or failed-permanent\n"
	"  state: string,\n"
	"  # the test that failed last, or none\n"
	"  last_failure: string,\n"
	"  failures: int,\n"
	"  # times re-qualified after a permanent failure\n"
	"  requalified: int,\n"
	"  # after a permanent failure, the seconds of the instance's event time before it is\n"
	"  # re-qualified (with a whole start-up); while it is not open, the seconds before it\n"
	"  # is tried again (as Source.retry_in_s); null otherwise\n"
	"  retry_in_s: ?float\n"
	")\n"
	"\n"
	"# Why an instance's credit does not grow now, as decided for its latest event.\n"
	"type Credit (\n"
	"  # null while it grows; else the first of reasons: not-open, waiting, refused, ended,\n"
	"  # idle, disabled, mix-only, startup, health, no-estimate, estimate-0, pool-full,\n"
	"  # flow, rate-cap, held, kernel or sampled\n"
	"  reason: ?string,\n"
	"  # the reason in a sentence, with its figures; null while credit grows\n"
	"  detail: ?string,\n"
	"  # every reason that holds, the one that matters most first; empty while it grows\n"
	"  reasons: []Reason,\n"
	"  # the weight in force on the estimate: the policy's times the source's own (flow)\n"
	"  weight: float\n"
	")\n"
	"\n"
	"# One reason credit does not grow.\n"
	"type Reason (\n"
	"  reason: string,\n"
	"  detail: string\n"
	")\n"
	"\n"
	"# A network interface's sampling in the kernel: above max_events_per_second, the\n"
	"# kernel keeps a random share of the packets (none is credited while it does).\n"
	"type Sampling (\n"
	"  # off, on, or refused (the kernel did not take the sampling filter)\n"
	"  state: string,\n"
	"  # the share of packets kept: 1 when off\n"
	"  ratio: float,\n"
	"  # packets arriving a second (that the filter takes), as last measured; null before\n"
	"  arrival_rate: ?float\n"
	")\n"
	"\n"
	"# One source instance: an input device, a disk, a network interface.\n"
	"type Source (\n"
	"  # input, block or network\n"
	"  class: string,\n"
	"  # the instance; \"*\" for a whole class that policy disables\n"
	"  name: string,\n"
	"  # e.g. keyboard, mouse, stream\n"
	"  kind: string,\n"
	"  # open (read now), sampled (open, the kernel keeps a share of the packets),\n"
	"  # not-open (could not be opened: the error in detail), waiting (closed until\n"
	"  # something changes: a link down, a disk stacked on another), refused (by the\n"
	"  # configuration, until a reload), disabled (by policy), ended (a stream at its end)\n"
	"  state: string,\n"
	"  # the state in words: what failed and what to do, or the source's own state\n"
	"  detail: string,\n"
	"  # open or sampled\n"
	"  up: bool,\n"
	"  # not open: seconds before it is tried again on the retry timer; null if not\n"
	"  retry_in_s: ?float,\n"
	"  # not open: when it is tried again, in words; null if not\n"
	"  retry: ?string,\n"
	"  # how the events are read: evdev, tracepoint, blktrace, pcap\n"
	"  backend: string,\n"
	"  policy: Policy,\n"
	"  estimator: string,\n"
	"  # bits per event of the latest estimate; null if there is none\n"
	"  estimate_bits: ?float,\n"
	"  # the kernel credits these events itself\n"
	"  kernel_credits: bool,\n"
	"  # symbols from timing finer than the kernel's tick (sub-jiffy) or from all of it\n"
	"  symbols: string,\n"
	"  jiffy_ns: int,\n"
	"  health: Health,\n"
	"  events: int,\n"
	"  skipped: int,\n"
	"  # events closer than the quantum to the one before: mixed and counted, not estimated\n"
	"  merged: int,\n"
	"  mixed_bytes: int,\n"
	"  estimated_bits: float,\n"
	"  credited_bits: float,\n"
	"  held_bits: float,\n"
	"  credit: Credit,\n"
	"  # null where the source does not sample (input, block, a savefile)\n"
	"  sampling: ?Sampling\n"
	")\n"
	"\n"
	"# The walls around the collector, the process that parses everything the outside\n"
	"# sends, as they stand since its start.\n"
	"type Collector (\n"
	"  # its system user (never root), uid and gid\n"
	"  user: string,\n"
	"  uid: int,\n"
	"  gid: int,\n"
	"  # its bounding set emptied (else as the service manager gave it), no new privileges\n"
	"  bounding_set_empty: bool,\n"
	"  no_new_privs: bool,\n"
	"  pid_namespace: bool,\n"
	"  mount_namespace: bool,\n"
	"  # its view of the file system: recursive (every mount read-only), top-mounts (each\n"
	"  # path's top mount only, before Linux 5.12) or none (no mount namespace)\n"
	"  read_only: string,\n"
	"  # the Landlock ABI in force; null without Landlock\n"
	"  landlock_abi: ?int,\n"
	"  seccomp: bool,\n"
	"  # each wall this host allows that is not up, and why\n"
	"  missing: []string\n"
	")\n"
	"\n"
	"# The daemon, the kernel's state, the totals and the collector's walls.\n"
	"method GetStatus() -> (daemon: Daemon, kernel: Kernel, totals: Totals, collector: Collector)\n"
	"\n"
	"# Every source instance, oldest first; then each name of the configuration that chooses\n"
	"# what is read and matches nothing (state \"not-open\"); then each instance and whole\n"
	"# class that policy disables (never opened: state \"disabled\", health state \"-\").\n"
	"method GetSources() -> (sources: []Source)\n"
	"\n"
	"# Re-read the configuration file, as SIGHUP does; only root may. A configuration with\n"
	"# an error is rejected whole: the running one stays, and ConfigInvalid lists why. One\n"
	"# that loads may still have notices (FILE:LINE: notice: KEY: ...; ignored), and what\n"
	"# applying it said (warning: ...: a name that matches nothing, a change that takes\n"
	"# effect at restart), each also in the log.\n"
	"method Reload() -> (notices: []string)\n"
	"\n"
	"# The configuration file has errors, each as FILE:LINE: KEY: what is wrong.\n"
	"error ConfigInvalid (errors: []string)\n"
	"\n"
	"# The message is not a Varlink call: not JSON, not an object, or a member of the\n"
	"# wrong type.\n"
	"error InvalidRequest (reason: string)\n"
	"\n"
	"# No NUL byte within limit bytes; the connection is closed.\n"
	"error RequestTooLarge (limit: int)\n"
	"\n"
	"# The daemon serves at most limit connections at once; this one is closed.\n"
	"error TooManyClients (limit: int)\n";

/* As published at varlink.org/Service. */
static const char org_varlink_service[] =
	"# The Varlink Service Interface is provided by every varlink service. It\n"
	"# describes the service and the interfaces it implements.\n"
	"interface org.varlink.service\n"
	"\n"
	"# Get a list of all the interfaces a service provides and information\n"
	"# about the implementation.\n"
	"method GetInfo() -> (\n"
	"  vendor: string,\n"
	"  product: string,\n"
	"  version: string,\n"
	"  url: string,\n"
	"  interfaces: []string\n"
	")\n"
	"\n"
	"# Get the description of an interface that is implemented by this service.\n"
	"method GetInterfaceDescription(interface: string) -> (description: string)\n"
	"\n"
	"# The requested interface was not found.\n"
	"error InterfaceNotFound (interface: string)\n"
	"\n"
	"# The requested method was not found\n"
	"error MethodNotFound (method: string)\n"
	"\n"
	"# The interface defines the requested method, but the service does not\n"
	"# implement it.\n"
	"error MethodNotImplemented (method: string)\n"
	"\n"
	"# One of the passed parameters is invalid.\n"
	"error InvalidParameter (parameter: string)\n"
	"\n"
	"# Client is denied access\n"
	"error PermissionDenied ()\n"
	"\n"
	"# Method is expected to be called with 'more' set to true, but wasn't\n"
	"error ExpectedMore ()\n";

const char *const ctl_proto_interfaces[] = {CTL_SERVICE, CTL_INTERFACE, NULL};

const char *ctl_proto_interface_description(const char *interface)
{
	if (strcmp(interface, CTL_INTERFACE) == 0)
		return io_entropyd;
	if (strcmp(interface, CTL_SERVICE) == 0)
		return org_varlink_service;
	return NULL;
}

static const struct ctl_param describe_params[] = {
	{"interface", JSON_STRING, true},
	{NULL, 0, false},
};

const struct ctl_method_desc ctl_proto_methods[CTL_METHOD_COUNT] = {
	[CTL_GET_INFO] = {CTL_SERVICE ".GetInfo", NULL, false},
	[CTL_GET_INTERFACE_DESCRIPTION] = {CTL_SERVICE ".GetInterfaceDescription", describe_params,
					   false},
	[CTL_GET_STATUS] = {CTL_INTERFACE ".GetStatus", NULL, false},
	[CTL_GET_SOURCES] = {CTL_INTERFACE ".GetSources", NULL, false},
	[CTL_RELOAD] = {CTL_INTERFACE ".Reload", NULL, true},
};

enum ctl_proto_frame ctl_proto_frame(const void *buf, size_t len, size_t limit, size_t *msg_len)
{
	const char *nul = len ? memchr(buf, '\0', len < limit + 1 ? len : limit + 1) : NULL;

	if (nul) {
		*msg_len = (size_t)(nul - (const char *)buf);
		return CTL_FRAME_COMPLETE;
	}
	return len > limit ? CTL_FRAME_TOO_LARGE : CTL_FRAME_INCOMPLETE;
}

json_t *ctl_proto_reply_new(json_t *params)
{
	json_t *msg = json_object();

	json_object_set_new(msg, "parameters", params ? params : json_object());
	return msg;
}

json_t *ctl_proto_error_new(const char *error, json_t *params)
{
	json_t *msg = json_object();

	json_object_set_new(msg, "error", json_string(error));
	json_object_set_new(msg, "parameters", params ? params : json_object());
	return msg;
}

json_t *ctl_proto_error_str(const char *error, const char *key, const char *value)
{
	json_t *p = json_object(), *v = json_string(value);

	/* Text cut short or quoted from a request may not be valid UTF-8. */
	json_object_set_new(p, key, v ? v : json_string("(not valid UTF-8)"));
	return ctl_proto_error_new(error, p);
}

json_t *ctl_proto_call_new(const char *method, json_t *params)
{
	json_t *msg = json_object();

	json_object_set_new(msg, "method", json_string(method));
	if (params)
		json_object_set_new(msg, "parameters", params);
	return msg;
}

json_t *ctl_proto_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* json_object_seed(0) would have jansson read /dev/urandom: a seed is never 0. */
static void json_seed(uint64_t v)
{
	uint32_t seed = (uint32_t)(v ^ v >> 32);

	json_object_seed(seed ? seed : 1);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

void ctl_proto_json_seed_client(void)
{
	json_seed(clock_ns(CLOCK_REALTIME) ^ (uint64_t)getpid() << 32);
}

void ctl_proto_json_seed_daemon(void)
{
	const uint8_t *key = (const uint8_t *)getauxval(AT_RANDOM);
	uint64_t in[3] = {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME), (uint64_t)getpid()};
	uint8_t none[16] = {0};

	/* Linux has given AT_RANDOM since 2.6.29; without it only the clocks and pid remain. */
	json_seed(util_siphash24(key ? key : none, in, sizeof(in)));
}

char *ctl_proto_encode(const json_t *msg, size_t *len)
{
	size_t n = json_dumpb(msg, NULL, 0, JSON_COMPACT);
	char *buf;

	if (n == 0)
		return NULL;
	buf = xmalloc(n + 1);
	if (json_dumpb(msg, buf, n, JSON_COMPACT) != n) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n + 1;
	return buf;
}

static json_t *invalid_request(const char *fmt, ...) PRINTF_LIKE(1, 2);
static json_t *invalid_request(const char *fmt, ...)
{
	char reason[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return ctl_proto_error_str(CTL_E_INVALID_REQUEST, "reason", reason);
}

static bool type_matches(const json_t *v, json_type want)
{
	return want == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == want;
}

/* An optional boolean member of the call: absent and null read as false. */
static int call_flag(const json_t *msg, const char *key, bool *out)
{
	const json_t *v = json_object_get(msg, key);

	*out = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return -1;
	*out = json_is_true(v);
	return 0;
}

static json_t *check_params(const struct ctl_method_desc *m, json_t *params)
{
	const char *key;
	const json_t *v;

	json_object_foreach(params, key, v) {
		const struct ctl_param *p = m->params;

		while (p && p->name && strcmp(p->name, key) != 0)
			p++;
		if (!p || !p->name || !type_matches(v, p->type))
			return ctl_proto_error_str(CTL_E_INVALID_PARAMETER, "parameter", key);
	}
	for (const struct ctl_param *p = m->params; p && p->name; p++)
		if (p->required && !json_object_get(params, p->name))
			return ctl_proto_error_str(CTL_E_INVALID_PARAMETER, "parameter", p->name);
	return NULL;
}

int ctl_proto_parse_call(const char *msg, size_t len, struct ctl_call *call, json_t **err)
{
	static const char *const members[] = {"method", "parameters", "oneway", "more", "upgrade"};
	json_error_t jerr;
	json_t *method, *params, *v;
	const char *key, *name;
	bool upgrade;
	int i;

	memset(call, 0, sizeof(*call));
	*err = NULL;
	call->msg = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!call->msg) {
		*err = invalid_request("not valid JSON: %s", jerr.text);
		return -1;
	}
	/* The shape: an object with a string method and nothing unknown. */
	if (!json_is_object(call->msg)) {
		*err = invalid_request("the call is not a JSON object");
		goto fail;
	}
	json_object_foreach(call->msg, key, v) {
		size_t k = 0;

		while (k < ARRAY_SIZE(members) && strcmp(members[k], key) != 0)
			k++;
		if (k == ARRAY_SIZE(members)) {
			*err = invalid_request("unknown member \"%.64s\"", key);
			goto fail;
		}
	}
	if (call_flag(call->msg, "oneway", &call->oneway) < 0 ||
	    call_flag(call->msg, "more", &call->more) < 0 ||
	    call_flag(call->msg, "upgrade", &upgrade) < 0) {
		*err = invalid_request("oneway, more and upgrade must be booleans");
		goto fail;
	}
	method = json_object_get(call->msg, "method");
	if (!json_is_string(method)) {
		*err = invalid_request("the call has no method string");
		goto fail;
	}
	params = json_object_get(call->msg, "parameters");
	if (params && !json_is_null(params) && !json_is_object(params)) {
		*err = invalid_request("parameters must be an object");
		goto fail;
	}
	if (upgrade) {
		*err = invalid_request("this service does not upgrade connections");
		goto fail;
	}
	/* The method: its interface first, as a generic Varlink service answers. */
	name = json_string_value(method);
	for (i = 0; i < CTL_METHOD_COUNT; i++)
		if (strcmp(ctl_proto_methods[i].name, name) == 0)
			break;
	if (i == CTL_METHOD_COUNT) {
		const char *dot = strrchr(name, '.');
		char iface[128];

		if (dot && (size_t)(dot - name) < sizeof(iface)) {
			memcpy(iface, name, (size_t)(dot - name));
			iface[dot - name] = '\0';
			if (!ctl_proto_interface_description(iface)) {
				*err = ctl_proto_error_str(CTL_E_INTERFACE_NOT_FOUND, "interface", iface);
				goto fail;
			}
		}
		*err = ctl_proto_error_str(CTL_E_METHOD_NOT_FOUND, "method", name);
		goto fail;
	}
	call->method = (enum ctl_method)i;
	/* The parameters: known names, right types, required ones present. */
	if (!params || json_is_null(params)) {
		json_object_set_new(call->msg, "parameters", json_object());
		params = json_object_get(call->msg, "parameters");
	}
	call->params = params;
	*err = check_params(&ctl_proto_methods[i], params);
	if (*err)
		goto fail;
	return 0;
fail:
	/* oneway stays known to the caller, which must then stay silent. */
	json_decref(call->msg);
	call->msg = NULL;
	call->params = NULL;
	return -1;
}

void ctl_proto_call_free(struct ctl_call *call)
{
	json_decref(call->msg);
	memset(call, 0, sizeof(*call));
}

int ctl_proto_parse_reply(const char *msg, size_t len, struct ctl_reply *r)
{
	json_error_t jerr;
	json_t *error, *params;

	memset(r, 0, sizeof(*r));
	r->msg = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!r->msg || !json_is_object(r->msg))
		goto fail;
	error = json_object_get(r->msg, "error");
	if (error && !json_is_string(error))
		goto fail;
	r->error = error ? json_string_value(error) : NULL;
	params = json_object_get(r->msg, "parameters");
	if (!params || json_is_null(params)) {
		json_object_set_new(r->msg, "parameters", json_object());
		params = json_object_get(r->msg, "parameters");
	}
	if (!json_is_object(params))
		goto fail;
	r->params = params;
	r->continues = json_is_true(json_object_get(r->msg, "continues"));
	return 0;
fail:
	ctl_proto_reply_free(r);
	return -1;
}

void ctl_proto_reply_free(struct ctl_reply *r)
{
	json_decref(r->msg);
	memset(r, 0, sizeof(*r));
}
