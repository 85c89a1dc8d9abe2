/* config: the settings tables of /etc/entropyd.conf, and loading, checking and printing it. */
#include "autoconf.h"

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "est.h"
#include "settings.h"
#include "source_pcap.h"
#include "util.h"

static const char *const feed_mode_names[] = {"auto", "boot", "watermark", "always", NULL};
static const char *const policy_mode_names[] = {"trusted", "reduced", "mix-only", "disabled",
						NULL};
static const char *const backend_names[] = {"auto", "tracepoint", "blktrace", NULL};
static const char *const direction_names[] = {"in", "out", "both", NULL};
static const char *const class_names[] = {"input", "block", "network", NULL};
static const char *const list_auto[] = {"auto", NULL};
static const char *const list_empty[] = {NULL};

/* settings.c writes every enum through an int pointer. */
_Static_assert(sizeof(enum feed_mode) == sizeof(int) && sizeof(enum policy_mode) == sizeof(int) &&
		       sizeof(enum block_backend) == sizeof(int) &&
		       sizeof(enum net_direction) == sizeof(int),
	       "an enum of the config is not int-sized");

#define CFG(field) offsetof(struct config, field)
#define GROUP(k, h) {.key = (k), .type = SET_GROUP, .help = (h)}

static const struct setting root_tab[] = {
	GROUP("feed", "how and when entropy is handed to the kernel"),
	GROUP("policy", "how much of each source class is credited"),
	GROUP("sources", "what each source class watches"),
	GROUP("control", "the control socket"),
	GROUP("record", "recording of estimator symbols for offline assessment"),
	{0},
};

static const struct setting feed_tab[] = {
	{.key = "mode", .type = SET_ENUM, .offset = CFG(feed.mode), .names = feed_mode_names,
	 .def_num = FEED_AUTO, .help = "when to credit the kernel; auto follows the kernel's state"},
	{.key = "device", .type = SET_STRING, .offset = CFG(feed.device), .flags = SF_ABSPATH,
	 .def_str = "/dev/random", .help = "the device the RNDADDENTROPY ioctl goes to"},
	{.key = "reseed", .type = SET_BOOL, .offset = CFG(feed.reseed), .def_num = 1,
	 .help = "force a CRNG reseed after mixing, once the CRNG is ready"},
	{.key = "batch_bits", .type = SET_INT, .offset = CFG(feed.batch_bits), .min = 8,
	 .max = 4096, .def_num = 64, .unit = "bits",
	 .help = "boot/always: flush once this much credit is pending"},
	{.key = "batch_interval", .type = SET_FLOAT, .offset = CFG(feed.batch_interval),
	 .min = 0.01, .max = 3600, .def_num = 1.0, .unit = "seconds",
	 .help = "the longest a pending batch waits"},
	{.key = "mix_interval", .type = SET_FLOAT, .offset = CFG(feed.mix_interval), .min = 1,
	 .max = 86400, .def_num = 60.0, .unit = "seconds",
	 .help = "time between mixes once the CRNG is ready"},
	{.key = "low_watermark", .type = SET_INT, .offset = CFG(feed.low_watermark), .min = 0,
	 .max = 4096, .def_num = 2048, .unit = "bits",
	 .help = "watermark: feed while entropy_avail is below this"},
	{0},
};

static const struct setting policy_tab[] = {
	GROUP("input", "policy for input devices"),
	GROUP("block", "policy for block devices"),
	GROUP("network", "policy for network interfaces"),
	{0},
};

/* The keys of a policy rule, for a class (with its defaults) and for an override (whose
 * defaults are never used: what it does not give, it inherits from its class). */
#define RULE_KEYS(off, def_mode, def_event, def_second)                                          \
	{.key = "mode", .type = SET_ENUM, .offset = (off) + offsetof(struct policy_rule, mode), \
	 .set_bit = RULE_SET_MODE, .names = policy_mode_names, .def_num = (def_mode),             \
	 .help = "how the capped estimate is credited"},                                        \
	{.key = "scale", .type = SET_FLOAT, .offset = (off) + offsetof(struct policy_rule, scale), \
	 .set_bit = RULE_SET_SCALE, .flags = SF_MIN_EXCL | SF_MAX_EXCL, .min = 0, .max = 1,   \
	 .def_num = 0.25, .help = "reduced: the fraction of the capped estimate credited"},    \
	{.key = "cap_bits_per_event", .type = SET_FLOAT,                                       \
	 .offset = (off) + offsetof(struct policy_rule, cap_bits_per_event),                   \
	 .set_bit = RULE_SET_CAP_EVENT, .min = 0, .max = 8, .def_num = (def_event),           \
	 .unit = "bits/event", .help = "the most one event can be credited"},                  \
	{.key = "cap_bits_per_second", .type = SET_FLOAT,                                      \
	 .offset = (off) + offsetof(struct policy_rule, cap_bits_per_second),                  \
	 .set_bit = RULE_SET_CAP_SECOND, .min = 0, .max = 1000000, .def_num = (def_second),   \
	 .unit = "bits/s", .help = "the most one instance can be credited per second"}

/* The first key of each element of a list of instances. */
#define NAME_KEY(elem)                                                                         \
	{.key = "name", .type = SET_STRING, .offset = offsetof(elem, name),                     \
	 .flags = SF_NONEMPTY | SF_REQUIRED,                                                    \
	 .help = "instance name or fnmatch(3) glob; the first match wins"}

static const struct setting override_tab[] = {
	NAME_KEY(struct policy_override),
	RULE_KEYS(offsetof(struct policy_override, rule), 0, 0, 0),
	{0},
};

#define CLASS_KEYS(def_mode, def_event, def_second)                                            \
	RULE_KEYS(offsetof(struct class_policy, rule), def_mode, def_event, def_second),          \
	{.key = "instances", .type = SET_GROUPLIST, .sub = override_tab,                       \
	 .help = "per-instance overrides: ( { name = \"GLOB\"; mode = ...; }, ... )"},          \
	{0}

/* Input: human timing, and the kernel credits only its own jiffy-resolution view of it.
 * Block: quantised disk latency is largely predictable. Network: an attacker on the path
 * can observe and set packet timing, so only a fraction is credited by default. */
static const struct setting class_tab[CLASS_COUNT][6] = {
	[CLASS_INPUT] = {CLASS_KEYS(MODE_TRUSTED, 2.0, 64)},
	[CLASS_BLOCK] = {CLASS_KEYS(MODE_TRUSTED, 1.0, 128)},
	[CLASS_NETWORK] = {CLASS_KEYS(MODE_REDUCED, 0.5, 32)},
};

static const struct setting sources_tab[] = {
	GROUP("input", "input devices (evdev)"),
	GROUP("block", "block-device I/O completions"),
	GROUP("network", "packet arrivals (libpcap)"),
	{0},
};

#define QUANTUM_KEY(field)                                                                 \
	{.key = "quantum_ns", .type = SET_INT64, .offset = CFG(field), .min = 1, .max = 1e9,   \
	 .def_num = EST_QUANTUM_DEFAULT_NS, .unit = "ns", .help = "timing quantum of the symbols estimated"}

/* How often the SP 800-90B estimators look at the instance's symbols (est_sp90b.c): a block
 * at most every `estimate_interval` seconds of event time, the costlier estimators 12 and 60
 * times as seldom. */
#define ESTIMATE_KEY(field, def)                                                           \
	{.key = "estimate_interval", .type = SET_FLOAT, .offset = CFG(field), .min = 1,        \
	 .max = 3600, .def_num = (def), .unit = "seconds",                                    \
	 .help = "event time between estimated blocks of 4096 symbols"}

static const struct setting src_input_tab[] = {
	{.key = "watch", .type = SET_STRING, .offset = CFG(input.watch), .flags = SF_ABSPATH,
	 .def_str = "/dev/input", .help = "directory watched for event* device nodes"},
	{.key = "exclude_virtual", .type = SET_BOOL, .offset = CFG(input.exclude_virtual),
	 .def_num = 1, .help = "skip virtual devices: software can time their events exactly"},
	{.key = "include", .type = SET_STRLIST, .offset = CFG(input.include),
	 .def_list = list_empty, .help = "only devices whose name or node matches (empty: all)"},
	{.key = "exclude", .type = SET_STRLIST, .offset = CFG(input.exclude),
	 .def_list = list_empty, .help = "never devices whose name or node matches"},
	QUANTUM_KEY(input.quantum_ns),
	ESTIMATE_KEY(input.estimate_interval, 10),
	{0},
};

static const struct setting src_block_tab[] = {
	{.key = "backend", .type = SET_ENUM, .offset = CFG(block.backend), .names = backend_names,
	 .def_num = BACKEND_AUTO, .help = "auto: the tracepoint where it works, else blktrace"},
	{.key = "devices", .type = SET_STRLIST, .offset = CFG(block.devices),
	 .flags = SF_NONEMPTY | SF_AUTO, .def_list = list_auto,
	 .help = "disk names or globs; auto: every whole physical disk"},
	QUANTUM_KEY(block.quantum_ns),
	ESTIMATE_KEY(block.estimate_interval, 10),
	{0},
};

/* How an interface is captured: for the class (sources.network) and for one entry of its
 * instances, which inherits what it does not give. */
#define CAPTURE_KEYS(off)                                                                      \
	{.key = "direction", .type = SET_ENUM,                                                 \
	 .offset = (off) + offsetof(struct net_capture, direction),                            \
	 .set_bit = NET_SET_DIRECTION, .names = direction_names, .def_num = DIR_IN,            \
	 .help = "which packets are timed"},                                                   \
	{.key = "filter", .type = SET_STRING,                                                  \
	 .offset = (off) + offsetof(struct net_capture, filter), .set_bit = NET_SET_FILTER,    \
	 .def_str = "", .help = "BPF filter expression (empty: none)"},                        \
	{.key = "snaplen", .type = SET_INT,                                                    \
	 .offset = (off) + offsetof(struct net_capture, snaplen), .set_bit = NET_SET_SNAPLEN,  \
	 .min = 16, .max = 65535, .def_num = 64, .unit = "bytes",                              \
	 .help = "bytes captured per packet"}

static const struct setting net_override_tab[] = {
	NAME_KEY(struct net_override),
	CAPTURE_KEYS(offsetof(struct net_override, cap)),
	{0},
};

static const struct setting src_network_tab[] = {
	{.key = "interfaces", .type = SET_STRLIST, .offset = CFG(network.interfaces),
	 .flags = SF_NONEMPTY | SF_AUTO, .def_list = list_auto,
	 .help = "interface names or globs; auto: every interface that is up, not loopback"},
	CAPTURE_KEYS(CFG(network.capture)),
	{.key = "file", .type = SET_STRING, .offset = CFG(network.file), .def_str = "",
	 .help = "pcap savefile to replay (empty: live capture)"},
	QUANTUM_KEY(network.quantum_ns),
	ESTIMATE_KEY(network.estimate_interval, 60),
	{.key = "max_events_per_second", .type = SET_INT,
	 .offset = CFG(network.max_events_per_second), .min = 1, .max = 100000000,
	 .def_num = 10000, .unit = "packets/s",
	 .help = "packets timed per interface per second; the rest are only counted"},
	{.key = "instances", .type = SET_GROUPLIST, .sub = net_override_tab,
	 .help = "per-interface capture: ( { name = \"GLOB\"; filter = ...; }, ... )"},
	{0},
};

static const struct setting control_tab[] = {
	{.key = "socket", .type = SET_STRING, .offset = CFG(control.socket), .flags = SF_ABSPATH,
	 .def_str = "/run/entropyd/io.entropyd", .help = "the control socket's path"},
	{.key = "group", .type = SET_STRING, .offset = CFG(control.group), .flags = SF_NONEMPTY,
	 .def_str = "entropyd", .help = "the group that may connect to the control socket"},
	{.key = "timeout", .type = SET_FLOAT, .offset = CFG(control.timeout), .min = 0.1,
	 .max = 3600, .def_num = 10.0, .unit = "seconds",
	 .help = "how long a client may take to send a request or to read a reply"},
	{0},
};

/* dir is an absolute path or empty (off); parse_root checks that, as SF_ABSPATH refuses "". */
static const struct setting record_tab[] = {
	{.key = "dir", .type = SET_STRING, .offset = CFG(record.dir), .def_str = "",
	 .help = "write each instance's symbols to DIR/CLASS-NAME.bin (empty: off)"},
	{.key = "max_bytes", .type = SET_INT64, .offset = CFG(record.max_bytes), .min = 4096,
	 .max = 1073741824, .def_num = 16777216, .unit = "bytes",
	 .help = "bound of each file; recording of that instance stops there"},
	{0},
};

/* The groups below the root whose keys all go straight into struct config. */
static const struct {
	const char *path;
	const struct setting *tab;
} plain_groups[] = {
	{"feed", feed_tab},
	{"sources.input", src_input_tab},
	{"sources.block", src_block_tab},
	{"sources.network", src_network_tab},
	{"control", control_tab},
	{"record", record_tab},
};

/* ---- names ---- */

static const char *name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : NULL;
}

const char *class_name(enum src_class cls)
{
	return name_of(class_names, CLASS_COUNT, (int)cls);
}

int class_from_name(const char *name)
{
	int c;

	for (c = 0; c < CLASS_COUNT; c++)
		if (name && strcmp(name, class_names[c]) == 0)
			return c;
	return -1;
}

const char *feed_mode_name(enum feed_mode m)
{
	return name_of(feed_mode_names, ARRAY_SIZE(feed_mode_names) - 1, (int)m);
}

const char *policy_mode_name(enum policy_mode m)
{
	return name_of(policy_mode_names, ARRAY_SIZE(policy_mode_names) - 1, (int)m);
}

/* ---- lists of instances ----
 * policy.CLASS.instances and sources.network.instances are both lists of groups
 * ( { name = "GLOB"; ... }, ... ) whose first match by name wins and whose elements inherit
 * from their class what they do not give. One set of functions parses, checks, matches,
 * prints and frees both; a kind says what differs. */

struct inst_kind {
	const struct setting *tab; /* tab[0] is "name" */
	size_t size;               /* of one element */
	size_t set_off;            /* of its `unsigned set`: the set_bit of every key given */
	const char *what;          /* for -p's comment */
	const char *shape;         /* what an element looks like, for messages */
	/* Fill an element with what it inherits from `parent`, before its own keys. */
	void (*inherit)(void *el, const void *parent);
	/* Checks across keys, once its own are in; NULL if none. */
	void (*check)(struct settings_ctx *ctx, const config_setting_t *grp, const void *el,
		      const char *path);
};

/* A mode was given in grp but was wrong: that is reported, and rules on it would be noise. */
static bool mode_was_wrong(const config_setting_t *grp, unsigned given)
{
	return !(given & RULE_SET_MODE) && config_setting_get_member(grp, "mode");
}

/* The cross-field rule: scale only where the mode in effect is reduced. */
static void check_scale(struct settings_ctx *ctx, const config_setting_t *grp, unsigned given,
			enum policy_mode mode, const char *prefix)
{
	char *path;

	if (!(given & RULE_SET_SCALE) || mode == MODE_REDUCED)
		return;
	path = xasprintf("%s.scale", prefix);
	settings_err(ctx, config_setting_get_member(grp, "scale"), path,
		     "remove scale, or set mode = \"reduced\"",
		     "scale applies only to mode = \"reduced\" (the mode here is \"%s\")",
		     policy_mode_name(mode));
	free(path);
}

static void inherit_rule(void *el, const void *parent)
{
	((struct policy_override *)el)->rule = *(const struct policy_rule *)parent;
}

static void check_override(struct settings_ctx *ctx, const config_setting_t *grp,
			   const void *el, const char *path)
{
	const struct policy_override *ov = el;

	if (!mode_was_wrong(grp, ov->set))
		check_scale(ctx, grp, ov->set, ov->rule.mode, path);
}

static void inherit_capture(void *el, const void *parent)
{
	struct net_capture *cap = &((struct net_override *)el)->cap;

	*cap = *(const struct net_capture *)parent;
	cap->filter = xstrdup(cap->filter);
}

/* A BPF filter that does not compile is an error here, with its line, not only when a capture
 * opens. grp: the group that may give "filter". */
static void check_filter(struct settings_ctx *ctx, const config_setting_t *grp,
			 const struct net_capture *cap, const char *path)
{
	const config_setting_t *cs = grp ? config_setting_get_member(grp, "filter") : NULL;
	char msg[512], *key;

	if (!cs || config_setting_type(cs) != CONFIG_TYPE_STRING ||
	    net_filter_compiles(cap->filter, cap->snaplen, msg, sizeof(msg)))
		return;
	key = xasprintf("%s.filter", path);
	settings_err(ctx, cs, key, "an expression in the syntax of pcap-filter(7), or \"\"",
		     "\"%s\" does not compile: %s", cap->filter, msg);
	free(key);
}

static void check_capture(struct settings_ctx *ctx, const config_setting_t *grp,
			  const void *el, const char *path)
{
	check_filter(ctx, grp, &((const struct net_override *)el)->cap, path);
}

static const struct inst_kind policy_kind = {
	.tab = override_tab,
	.size = sizeof(struct policy_override),
	.set_off = offsetof(struct policy_override, set),
	.what = "per-instance overrides",
	.shape = "a group { name = \"NAME\"; mode = ...; }",
	.inherit = inherit_rule,
	.check = check_override,
};

static const struct inst_kind net_kind = {
	.tab = net_override_tab,
	.size = sizeof(struct net_override),
	.set_off = offsetof(struct net_override, set),
	.what = "per-interface capture settings",
	.shape = "a group { name = \"NAME\"; filter = ...; }",
	.inherit = inherit_capture,
	.check = check_capture,
};

/* Element i of the array v. */
static const char *inst_at(const struct inst_kind *k, const void *v, size_t i)
{
	return (const char *)v + i * k->size;
}

static const char *inst_name(const struct inst_kind *k, const void *v, size_t i)
{
	return *(char *const *)(inst_at(k, v, i) + k->tab[0].offset);
}

static void check_duplicate(struct settings_ctx *ctx, const struct inst_kind *k, const void *v,
			    const config_setting_t *list, size_t i, const char *prefix)
{
	const char *name = inst_name(k, v, i);
	size_t j;

	for (j = 0; name && j < i; j++) {
		const config_setting_t *first, *dup;
		char *path;

		if (!inst_name(k, v, j) || strcmp(inst_name(k, v, j), name) != 0)
			continue;
		first = config_setting_get_member(config_setting_get_elem(list, (unsigned)j), "name");
		dup = config_setting_get_member(config_setting_get_elem(list, (unsigned)i), "name");
		path = xasprintf("%s.instances[%zu].name", prefix, i);
		settings_err(ctx, dup, path, "each name once in a list",
			     "duplicate instance \"%s\" (first at line %u)", name,
			     config_setting_source_line(first));
		free(path);
		return;
	}
}

/* The elements of grp's "instances" (none if it is missing or not a list); *n is their
 * number, the same whatever was wrong with them, for free_instances. */
static void *parse_instances(struct settings_ctx *ctx, const config_setting_t *grp,
			     const char *prefix, const struct inst_kind *k, const void *parent,
			     size_t *n)
{
	const config_setting_t *list = settings_member(grp, "instances", SET_GROUPLIST);
	char *v;
	size_t i;

	*n = list ? (size_t)config_setting_length(list) : 0;
	v = *n ? xcalloc(*n, k->size) : NULL;
	for (i = 0; i < *n; i++) {
		const config_setting_t *el = config_setting_get_elem(list, (unsigned)i);
		char *path = xasprintf("%s.instances[%zu]", prefix, i), *e = v + i * k->size;

		k->inherit(e, parent);
		if (config_setting_type(el) != CONFIG_TYPE_GROUP) {
			settings_err(ctx, el, path, k->shape, "wrong type (%s)",
				     settings_type_name(el));
		} else {
			*(unsigned *)(e + k->set_off) = settings_apply(ctx, k->tab, el, path, e);
			if (k->check)
				k->check(ctx, el, e, path);
			check_duplicate(ctx, k, v, list, i, prefix);
		}
		free(path);
	}
	return v;
}

/* The first element whose name matches `name`, or NULL. */
static const void *match_instance(const struct inst_kind *k, const void *v, size_t n,
				  const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fnmatch(inst_name(k, v, i), name, 0) == 0)
			return inst_at(k, v, i);
	return NULL;
}

static void print_instances(FILE *out, const struct inst_kind *k, const void *v, size_t n,
			    int indent)
{
	size_t i;

	if (!n) {
		fprintf(out, "%*sinstances = ();  # %s\n", indent, "", k->what);
		return;
	}
	fprintf(out, "%*sinstances = (  # %s; the first match wins\n", indent, "", k->what);
	for (i = 0; i < n; i++) {
		const char *e = inst_at(k, v, i);

		fprintf(out, "%*s{\n", indent + 2, "");
		settings_print(k->tab, e, *(const unsigned *)(e + k->set_off), indent + 4, out);
		fprintf(out, "%*s}%s\n", indent + 2, "", i + 1 < n ? "," : "");
	}
	fprintf(out, "%*s);\n", indent, "");
}

static void free_instances(const struct inst_kind *k, void *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		settings_free(k->tab, (char *)v + i * k->size);
	free(v);
}

const struct net_capture *config_net_capture(const struct config *cfg, const char *name)
{
	const struct net_override *o =
		match_instance(&net_kind, cfg->network.instances, cfg->network.n_instances, name);

	return o ? &o->cap : &cfg->network.capture;
}

/* ---- defaults and freeing ---- */

struct config *config_defaults(void)
{
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	size_t i;
	int c;

	for (i = 0; i < ARRAY_SIZE(plain_groups); i++)
		settings_defaults(plain_groups[i].tab, cfg);
	for (c = 0; c < CLASS_COUNT; c++)
		settings_defaults(class_tab[c], &cfg->policy[c]);
	return cfg;
}

void config_free(struct config *cfg)
{
	size_t i;
	int c;

	if (!cfg)
		return;
	for (i = 0; i < ARRAY_SIZE(plain_groups); i++)
		settings_free(plain_groups[i].tab, cfg);
	for (c = 0; c < CLASS_COUNT; c++)
		free_instances(&policy_kind, cfg->policy[c].overrides, cfg->policy[c].n_overrides);
	free_instances(&net_kind, cfg->network.instances, cfg->network.n_instances);
	free(cfg->path);
	free(cfg);
}

void config_errors_free(struct config_errors *errs)
{
	size_t i;

	if (!errs)
		return;
	for (i = 0; i < errs->n; i++)
		free(errs->msg[i]);
	free(errs->msg);
	errs->msg = NULL;
	errs->n = 0;
}

/* ---- integer literals that libconfig wrapped ----
 * libconfig reads an integer literal without an L suffix with atoi(), so 5000000000
 * silently becomes 705032704 and would pass any range check (upstream issues #69, #153).
 * We find such literals in the file text ourselves and remember what libconfig made of
 * them, so that the range check can report what was written. */

struct wrapped_int {
	unsigned line;
	int value; /* what libconfig stored */
	char *text;
};
struct int_scan {
	char *file;
	struct wrapped_int *v;
	size_t n;
};
struct int_scans {
	struct int_scan *v;
	size_t n;
};

static void add_wrapped(struct int_scan *sc, unsigned line, int value, const char *text,
			size_t len)
{
	struct wrapped_int *w;

	sc->v = xreallocarray(sc->v, sc->n + 1, sizeof(*sc->v));
	w = &sc->v[sc->n++];
	w->line = line;
	w->value = value;
	w->text = xasprintf("%.*s", (int)len, text);
}

/* One number token starting at p: records it if libconfig would have wrapped it. */
static const char *scan_number(struct int_scan *sc, const char *p, unsigned line)
{
	const char *start = p, *digits;
	bool hex, is_float = false;
	char *text, *end;

	if (*p == '+' || *p == '-')
		p++;
	digits = p;
	hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	while (isalnum((unsigned char)*p) || *p == '.' ||
	       (!hex && (*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E'))) {
		if (!hex && (*p == '.' || *p == 'e' || *p == 'E'))
			is_float = true;
		p++;
	}
	if (p == digits || is_float || p[-1] == 'L')
		return p;
	text = xasprintf("%.*s", (int)(p - start), start);
	errno = 0;
	if (hex) {
		unsigned long long u = strtoull(text, &end, 16);

		/* libconfig takes hex as a 32-bit pattern: 0xFFFFFFFF is -1 */
		if (!*end && (errno == ERANGE || u > INT_MAX))
			add_wrapped(sc, line, (int)u, start, (size_t)(p - start));
	} else {
		long long v = strtoll(text, &end, 10);

		if (!*end && (errno == ERANGE || v < INT_MIN || v > INT_MAX))
			add_wrapped(sc, line, (int)v, start, (size_t)(p - start));
	}
	free(text);
	return p;
}

/* Skip a comment or string at p, counting lines; NULL if p starts neither. */
static const char *skip_noise(const char *p, unsigned *line)
{
	if (*p == '#' || (p[0] == '/' && p[1] == '/'))
		return p + strcspn(p, "\n");
	if (p[0] == '/' && p[1] == '*') {
		for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
			*line += *p == '\n';
		return *p ? p + 2 : p;
	}
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;
			*line += *p == '\n';
		}
		return *p ? p + 1 : p;
	}
	return NULL;
}

static void scan_text(struct int_scan *sc, const char *p)
{
	unsigned line = 1;
	const char *q;

	while (*p) {
		if ((q = skip_noise(p, &line))) {
			p = q;
		} else if (*p == '\n') {
			line++;
			p++;
		} else if (isalpha((unsigned char)*p) || *p == '*' || *p == '_') {
			/* a setting name: digits inside it are not numbers */
			while (isalnum((unsigned char)*p) || (*p && strchr("-_*", *p)))
				p++;
		} else if (isdigit((unsigned char)*p) ||
			   ((*p == '-' || *p == '+') && isdigit((unsigned char)p[1]))) {
			p = scan_number(sc, p, line);
		} else {
			p++;
		}
	}
}

static struct int_scan *scan_file(struct int_scans *scans, const char *file)
{
	struct int_scan *sc;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	scans->v = xreallocarray(scans->v, scans->n + 1, sizeof(*scans->v));
	sc = &scans->v[scans->n++];
	memset(sc, 0, sizeof(*sc));
	sc->file = xstrdup(file);
	/* The file was just parsed: if it cannot be read now, there is nothing to correct. */
	f = fopen(file, "re");
	if (!f)
		return sc;
	if (getdelim(&text, &len, '\0', f) > 0)
		scan_text(sc, text);
	free(text);
	fclose(f);
	return sc;
}

/* settings_ctx.wrapped_int: files are scanned when a setting from them is first checked. */
static const char *wrapped_int(struct settings_ctx *ctx, const config_setting_t *cs)
{
	struct int_scans *scans = ctx->arg;
	const char *file = settings_file(ctx, cs);
	const struct int_scan *sc = NULL;
	int value = config_setting_get_int(cs);
	size_t i;

	for (i = 0; i < scans->n && !sc; i++)
		if (strcmp(scans->v[i].file, file) == 0)
			sc = &scans->v[i];
	if (!sc)
		sc = scan_file(scans, file);
	for (i = 0; i < sc->n; i++)
		if (sc->v[i].line == config_setting_source_line(cs) && sc->v[i].value == value)
			return sc->v[i].text;
	return NULL;
}

static void int_scans_free(struct int_scans *scans)
{
	size_t i, j;

	for (i = 0; i < scans->n; i++) {
		for (j = 0; j < scans->v[i].n; j++)
			free(scans->v[i].v[j].text);
		free(scans->v[i].v);
		free(scans->v[i].file);
	}
	free(scans->v);
}

/* ---- parsing ---- */

static void parse_class(struct settings_ctx *ctx, const config_setting_t *grp, int c,
			struct class_policy *cp)
{
	char *prefix = xasprintf("policy.%s", class_names[c]);
	unsigned given = settings_apply(ctx, class_tab[c], grp, prefix, cp);

	if (grp && !mode_was_wrong(grp, given))
		check_scale(ctx, grp, given, cp->rule.mode, prefix);
	cp->overrides =
		parse_instances(ctx, grp, prefix, &policy_kind, &cp->rule, &cp->n_overrides);
	free(prefix);
}

/* The group at a dotted path below root, if every step is a group. */
static const config_setting_t *group_at(const config_setting_t *root, const char *path)
{
	char *copy = xstrdup(path), *save = NULL, *part;
	const config_setting_t *g = root;

	for (part = strtok_r(copy, ".", &save); part && g; part = strtok_r(NULL, ".", &save))
		g = settings_member(g, part, SET_GROUP);
	free(copy);
	return g;
}

static void check_record_dir(struct settings_ctx *ctx, const config_setting_t *grp,
			     const struct config *cfg)
{
	const config_setting_t *cs = grp ? config_setting_get_member(grp, "dir") : NULL;

	if (cs && cfg->record.dir[0] && cfg->record.dir[0] != '/')
		settings_err(ctx, cs, "record.dir",
			     "an absolute path (a string starting with \"/\"), or \"\" for off",
			     "\"%s\" is not an absolute path", cfg->record.dir);
}

static void parse_root(struct settings_ctx *ctx, const config_setting_t *root,
		       struct config *cfg)
{
	const config_setting_t *policy = settings_member(root, "policy", SET_GROUP);
	size_t i;
	int c;

	settings_apply(ctx, root_tab, root, "", cfg);
	settings_apply(ctx, policy_tab, policy, "policy", cfg);
	settings_apply(ctx, sources_tab, settings_member(root, "sources", SET_GROUP), "sources",
		       cfg);
	for (i = 0; i < ARRAY_SIZE(plain_groups); i++)
		settings_apply(ctx, plain_groups[i].tab, group_at(root, plain_groups[i].path),
			       plain_groups[i].path, cfg);
	for (c = 0; c < CLASS_COUNT; c++)
		parse_class(ctx, settings_member(policy, class_names[c], SET_GROUP), c,
			    &cfg->policy[c]);
	check_filter(ctx, group_at(root, "sources.network"), &cfg->network.capture,
		     "sources.network");
	cfg->network.instances = parse_instances(ctx, group_at(root, "sources.network"),
						 "sources.network", &net_kind,
						 &cfg->network.capture, &cfg->network.n_instances);
	check_record_dir(ctx, group_at(root, "record"), cfg);
}

/* libconfig says only "syntax error"; say where to look. */
static const char *syntax_text(const char *text)
{
	if (!text)
		return "unreadable";
	if (strcmp(text, "syntax error") == 0)
		return "cannot parse this line or the end of the one before "
		       "(a missing value, quote or bracket?)";
	return text;
}

/* Open and parse; false (with the message recorded) if the file is not valid libconfig. */
static bool read_file(struct settings_ctx *ctx, config_t *lc)
{
	struct stat st;
	FILE *f = fopen(ctx->path, "re");
	int err = f ? 0 : errno;
	bool ok;

	/* fopen() opens a directory, and libconfig would read it as an empty file */
	if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		err = EISDIR;
	if (err) {
		settings_err_raw(ctx, ctx->path, 0, "%s: cannot open: %s", ctx->path, strerror(err));
		if (f)
			fclose(f);
		return false;
	}
	config_init(lc);
	ok = config_read(lc, f) == CONFIG_TRUE;
	fclose(f);
	if (!ok) {
		const char *file = config_error_file(lc) ? config_error_file(lc) : ctx->path;

		settings_err_raw(ctx, file, (unsigned)config_error_line(lc),
				 "%s:%d: syntax error: %s", file, config_error_line(lc),
				 syntax_text(config_error_text(lc)));
		config_destroy(lc);
	}
	return ok;
}

/* errs is overwritten (not appended to); NULL discards the messages. */
struct config *config_load(const char *path, struct config_errors *errs)
{
	struct config_errors discard = {0};
	struct int_scans scans = {0};
	struct settings_ctx ctx;
	struct config *cfg = NULL;
	config_t lc;
	bool bad;

	if (!errs)
		errs = &discard;
	errs->msg = NULL;
	errs->n = 0;
	settings_ctx_init(&ctx, path);
	ctx.wrapped_int = wrapped_int;
	ctx.arg = &scans;
	if (read_file(&ctx, &lc)) {
		cfg = config_defaults();
		cfg->path = xstrdup(path);
		parse_root(&ctx, config_root_setting(&lc), cfg);
		config_destroy(&lc);
	}
	bad = ctx.n_msgs > 0;
	settings_ctx_finish(&ctx, errs);
	int_scans_free(&scans);
	config_errors_free(&discard);
	if (bad) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* ---- printing ---- */

/* A group's keys; and its list of instances where kind is not NULL. */
static void print_group(FILE *out, const char *key, const struct setting *tab,
			const void *base, unsigned only, int indent, bool blank_after,
			const struct inst_kind *kind, const void *v, size_t n)
{
	fprintf(out, "%*s%s = {\n", indent, "", key);
	settings_print(tab, base, only, indent + 2, out);
	if (kind)
		print_instances(out, kind, v, n, indent + 2);
	fprintf(out, "%*s};\n%s", indent, "", blank_after ? "\n" : "");
}

static void print_class(FILE *out, int c, const struct class_policy *cp)
{
	unsigned only = ~(unsigned)RULE_SET_SCALE;

	/* scale is printed only where it is allowed, so the output reads back */
	if (cp->rule.mode == MODE_REDUCED)
		only |= RULE_SET_SCALE;
	print_group(out, class_names[c], class_tab[c], cp, only, 2, false, &policy_kind,
		    cp->overrides, cp->n_overrides);
}

void config_print(const struct config *cfg, FILE *out)
{
	const char *p;
	int c;

	fputs("# entropyd configuration in effect, defaults filled in; from ", out);
	for (p = cfg->path ? cfg->path : "built-in defaults"; *p; p++)
		fputc((unsigned char)*p < 0x20 ? '?' : *p, out);
	fputs("\n\n", out);
	print_group(out, "feed", feed_tab, cfg, ~0u, 0, true, NULL, NULL, 0);
	fputs("policy = {\n", out);
	for (c = 0; c < CLASS_COUNT; c++)
		print_class(out, c, &cfg->policy[c]);
	fputs("};\n\nsources = {\n", out);
	print_group(out, "input", src_input_tab, cfg, ~0u, 2, false, NULL, NULL, 0);
	print_group(out, "block", src_block_tab, cfg, ~0u, 2, false, NULL, NULL, 0);
	print_group(out, "network", src_network_tab, cfg, ~0u, 2, false, &net_kind,
		    cfg->network.instances, cfg->network.n_instances);
	fputs("};\n\n", out);
	print_group(out, "control", control_tab, cfg, ~0u, 0, true, NULL, NULL, 0);
	print_group(out, "record", record_tab, cfg, ~0u, 0, false, NULL, NULL, 0);
}

void config_print_keys(FILE *out)
{
	size_t i;
	int c;

	settings_print_keys(feed_tab, "feed", out);
	for (c = 0; c < CLASS_COUNT; c++) {
		char *prefix = xasprintf("policy.%s", class_names[c]);

		settings_print_keys(class_tab[c], prefix, out);
		free(prefix);
	}
	/* plain_groups[0] is feed, listed first to follow the file's order */
	for (i = 1; i < ARRAY_SIZE(plain_groups); i++)
		settings_print_keys(plain_groups[i].tab, plain_groups[i].path, out);
}
