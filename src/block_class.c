/* block_class: the block class (I/O completions) as the configuration and the status see
 * it. */
#include "autoconf.h"

#include "source_class.h"

#include "est.h"
#include "util.h"

/* config_settings.c writes every enum through an int pointer. */
_Static_assert(sizeof(enum block_backend) == sizeof(int), "enum block_backend is not int-sized");

static const char *const backend_names[] = {"auto", "tracepoint", "blktrace", NULL};
static const char *const list_auto[] = {"auto", NULL};

static const struct setting block_tab[] = {
	{.key = "backend", .type = SET_ENUM, .offset = CFG(block.backend), .names = backend_names,
	 .def_num = BACKEND_AUTO, .help = "auto: the tracepoint where it works, else blktrace"},
	{.key = "devices", .type = SET_STRLIST, .offset = CFG(block.devices),
	 .flags = SF_NONEMPTY | SF_AUTO | SF_PICKS, .def_list = list_auto,
	 .example = "[ \"sda\", \"nvme*\" ]",
	 .help = "disk names or globs; auto: every whole physical disk"},
	QUANTUM_KEY(block.quantum_ns),
	ESTIMATE_KEY(block.estimate_interval, 10),
	HEALTH_RETRY_KEY(block.health_retry),
	{0},
};

/* The configured backend: shown only for an instance the driver has not said its own of
 * (feed_pipeline_set_backend()), which an open one has. */
static const char *block_backend(const struct config *cfg)
{
	return (unsigned)cfg->block.backend < ARRAY_SIZE(backend_names) - 1
		       ? backend_names[cfg->block.backend]
		       : "block";
}

/* Quantised disk latency is largely predictable. */
const struct source_class block_class = {
	.name = "block",
	.policy_help = "policy for block devices",
	.sources_help = "block-device I/O completions",
	.settings = block_tab,
	.instance_noun = "disk with a medium",
	.policy = {.mode = MODE_TRUSTED, .cap_bits_per_event = 1.0, .cap_bits_per_second = 128},
	.quantum_ns = CFG(block.quantum_ns),
	.estimate_interval = CFG(block.estimate_interval),
	.health_retry = CFG(block.health_retry),
	/* A virtio disk's interrupt, draining its ring, stamps one completion every 1 to 6 us
	 * (and a flush's zero-length write 1 to 3 us after the flush itself); the device's own
	 * gaps start above 8 us (tests/data/health/README). */
	.batch_ns = 10000,
	.backend = block_backend,
};
