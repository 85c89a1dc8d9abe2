/* input_class: the input class (evdev) as the configuration and the status see it. */
#include "autoconf.h"

#include "source_class.h"

#include "est.h"

static const char *const list_empty[] = {NULL};

static const struct setting input_tab[] = {
	{.key = "watch", .type = SET_STRING, .offset = CFG(input.watch), .flags = SF_ABSPATH,
	 .def_str = "/dev/input", .help = "directory watched for event* device nodes"},
	{.key = "exclude_virtual", .type = SET_BOOL, .offset = CFG(input.exclude_virtual),
	 .def_num = 1, .help = "skip virtual devices: software can time their events exactly"},
	{.key = "include", .type = SET_STRLIST, .offset = CFG(input.include),
	 .flags = SF_PICKS_ANY, .def_list = list_empty, .help = "only devices whose name or node matches (empty: all)"},
	{.key = "exclude", .type = SET_STRLIST, .offset = CFG(input.exclude),
	 .flags = SF_PICKS_ANY | SF_EXCLUDES, .def_list = list_empty,
	 .help = "never devices whose name or node matches"},
	QUANTUM_KEY(input.quantum_ns),
	ESTIMATE_KEY(input.estimate_interval, 10),
	HEALTH_RETRY_KEY(input.health_retry),
	{0},
};

static const char *input_backend(const struct config *cfg)
{
	(void)cfg;
	return "evdev";
}

/* Human timing, and the kernel credits only its own jiffy-resolution view of it. */
const struct source_class input_class = {
	.name = "input",
	.policy_help = "policy for input devices",
	.sources_help = "input devices (evdev)",
	.settings = input_tab,
	.instance_noun = "input device",
	.policy = {.mode = MODE_TRUSTED, .cap_bits_per_event = 2.0, .cap_bits_per_second = 64},
	.quantum_ns = CFG(input.quantum_ns),
	.estimate_interval = CFG(input.estimate_interval),
	.health_retry = CFG(input.health_retry),
	.backend = input_backend,
};
