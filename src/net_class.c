/* net_class: the network class (libpcap) as the configuration and the status see it. */
#include "autoconf.h"

#include "net_class.h"

#include <fnmatch.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>

#include "est.h"
#include "source_class.h"
#include "util.h"

/* config_settings.c writes every enum through an int pointer. */
_Static_assert(sizeof(enum net_direction) == sizeof(int), "enum net_direction is not int-sized");

static const char *const direction_names[] = {"in", "out", "both", NULL};
static const char *const list_auto[] = {"auto", NULL};

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

static const struct setting network_tab[] = {
	{.key = "interfaces", .type = SET_STRLIST, .offset = CFG(network.interfaces),
	 .flags = SF_NONEMPTY | SF_AUTO | SF_PICKS, .def_list = list_auto,
	 .example = "[ \"eth0\", \"wlan*\" ]",
	 .help = "interface names or globs; auto: every interface that is up, not loopback"},
	CAPTURE_KEYS(CFG(network.capture)),
	{.key = "file", .type = SET_STRING, .offset = CFG(network.file), .def_str = "",
	 .help = "pcap savefile to replay (empty: live capture)"},
	QUANTUM_KEY(network.quantum_ns),
	ESTIMATE_KEY(network.estimate_interval, 60),
	HEALTH_RETRY_KEY(network.health_retry),
	{.key = "max_events_per_second", .type = SET_INT,
	 .offset = CFG(network.max_events_per_second), .min = 1, .max = 100000000,
	 .def_num = 10000, .unit = "packets/s",
	 .help = "packets timed per interface per second; the rest are only counted"},
	{.key = "instances", .type = SET_GROUPLIST, .sub = net_override_tab,
	 .help = "per-interface capture: ( { name = \"GLOB\"; filter = ...; }, ... )"},
	{0},
};

/* A filter that does not compile for Ethernet is a configuration error. */
bool net_class_filter_compiles(const char *filter, int snaplen, char *err, size_t size)
{
	pcap_t *p;
	struct bpf_program prog;
	bool ok;

	if (!filter || !filter[0])
		return true;
	p = pcap_open_dead(DLT_EN10MB, snaplen > 0 ? snaplen : 65535);
	if (!p)
		return true; /* cannot tell; each capture compiles it again */
	ok = pcap_compile(p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) == 0;
	if (ok)
		pcap_freecode(&prog);
	else
		snprintf(err, size, "%s", pcap_geterr(p));
	pcap_close(p);
	return ok;
}

/* A BPF filter that does not compile is an error here, with its line, not only when a capture
 * opens. grp: the group that may give "filter". */
static void check_filter(struct settings_ctx *ctx, const config_setting_t *grp,
			 const struct net_capture *cap, const char *path)
{
	const config_setting_t *cs = grp ? config_setting_get_member(grp, "filter") : NULL;
	char msg[512], *key;

	if (!cs || config_setting_type(cs) != CONFIG_TYPE_STRING ||
	    net_class_filter_compiles(cap->filter, cap->snaplen, msg, sizeof(msg)))
		return;
	key = xasprintf("%s.filter", path);
	config_settings_err(ctx, cs, key, "an expression in the syntax of pcap-filter(7), or \"\"",
		     "\"%s\" does not compile: %s", cap->filter, msg);
	free(key);
}

static void check_network(struct settings_ctx *ctx, const config_setting_t *grp,
			  const struct config *cfg, const char *path)
{
	check_filter(ctx, grp, &cfg->network.capture, path);
}

static void inherit_capture(void *el, const void *parent)
{
	struct net_capture *cap = &((struct net_override *)el)->cap;

	*cap = *(const struct net_capture *)parent;
	cap->filter = xstrdup(cap->filter);
}

static void check_capture(struct settings_ctx *ctx, const config_setting_t *grp,
			  const void *el, const char *path)
{
	check_filter(ctx, grp, &((const struct net_override *)el)->cap, path);
}

static const struct inst_kind net_kind = {
	.tab = net_override_tab,
	.size = sizeof(struct net_override),
	.set_off = offsetof(struct net_override, set),
	.what = "per-interface capture settings",
	.shape = "a group { name = \"NAME\"; filter = ...; }",
	.inherit = inherit_capture,
	.check = check_capture,
};

const struct net_capture *net_class_capture_config(const struct config *cfg, const char *name)
{
	for (size_t i = 0; i < cfg->network.n_instances; i++)
		if (fnmatch(cfg->network.instances[i].name, name, 0) == 0)
			return &cfg->network.instances[i].cap;
	return &cfg->network.capture;
}

static const char *network_backend(const struct config *cfg)
{
	(void)cfg;
	return "pcap";
}

/* An attacker on the path can observe and set packet timing, so only a fraction is
 * credited by default. */
const struct source_class net_class = {
	.name = "network",
	.policy_help = "policy for network interfaces",
	.sources_help = "packet arrivals (libpcap)",
	.settings = network_tab,
	.instance_noun = "interface",
	.instances = {.kind = &net_kind,
		      .array = CFG(network.instances),
		      .count = CFG(network.n_instances),
		      .parent = CFG(network.capture)},
	.check = check_network,
	.policy = {.mode = MODE_REDUCED, .cap_bits_per_event = 0.5, .cap_bits_per_second = 32},
	.quantum_ns = CFG(network.quantum_ns),
	.estimate_interval = CFG(network.estimate_interval),
	.health_retry = CFG(network.health_retry),
	/* A poll that drains a receive queue (a NIC's, or the backlog another CPU fills under
	 * RPS) stamps one packet every 2 to 3 us as it hands each to the capture; between
	 * polls, and a sender's own pace, the gaps start at 4.75 us (tests/data/health/README:
	 * 12.0 packets a poll, 16,751 batches at this gap). */
	.batch_ns = 4000,
	.backend = network_backend,
};
