/* privs: once started, each process keeps only the capabilities it still needs.
 *
 * Started as root by hand, entropyd would otherwise keep every capability root has for as
 * long as it runs. The privileged process (privsep.c) still needs two: CAP_SYS_ADMIN to
 * feed the kernel (RNDADDENTROPY) and to open the block tracepoint or blktrace for disks
 * and CPUs that appear; CAP_NET_RAW to make packet sockets for interfaces that come up.
 * The collector, which parses packets, trace records and control requests, needs none.
 * The rest goes for good, bounding set included, so nothing either could exec gets them
 * back: no CAP_DAC_OVERRIDE (files it reads on a reload
 * must be readable by their owner, root), no CAP_CHOWN (the control socket's group is set
 * at start-up, before this), no module loading, no ptrace. Under systemd the unit's
 * CapabilityBoundingSet= says the same, and this changes nothing. */
#include "autoconf.h"

#include "privs.h"

#include <cap-ng.h>
#include <stdbool.h>

#include "log.h"
#include "util.h"

static const unsigned keep[] = {CAP_SYS_ADMIN, CAP_NET_RAW};

static bool kept(unsigned cap)
{
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		if (keep[i] == cap)
			return true;
	return false;
}

/* Does the process hold any capability it should not? (Under systemd the unit's bounding
 * set has seen to it already; the privileged process then calls no capset().) */
static bool holds_others(void)
{
	for (unsigned cap = 0; cap < 64; cap++)
		if (!kept(cap) && (capng_have_capability(CAPNG_EFFECTIVE, cap) ||
				   capng_have_capability(CAPNG_PERMITTED, cap) ||
				   capng_have_capability(CAPNG_INHERITABLE, cap) ||
				   capng_have_capability(CAPNG_AMBIENT, cap)))
			return true;
	return false;
}

int privs_drop(void)
{
	bool have[ARRAY_SIZE(keep)];
	capng_select_t what = CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT;

	if (capng_get_caps_process() < 0) {
		log_warn("cannot read the process's capabilities: keeping them");
		return -1;
	}
	if (!holds_others())
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		have[i] = capng_have_capability(CAPNG_PERMITTED, keep[i]);
	/* Changing the bounding set takes CAP_SETPCAP, which a unit's bounding set leaves out
	 * (it is already as small as it should be). */
	if (capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP))
		what |= CAPNG_SELECT_BOUNDS;
	capng_clear(CAPNG_SELECT_ALL);
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		if (have[i])
			capng_update(CAPNG_ADD,
				     CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
				     keep[i]);
	if (capng_apply(what) < 0) {
		log_warn("cannot drop capabilities: the daemon keeps those it was started with");
		return -1;
	}
	log_info("capabilities: kept %s, dropped the rest",
		 have[0] && have[1] ? "CAP_SYS_ADMIN and CAP_NET_RAW"
		 : have[0]	    ? "CAP_SYS_ADMIN"
		 : have[1]	    ? "CAP_NET_RAW"
				    : "none");
	return 0;
}

int privs_drop_all(bool *bounding)
{
	capng_select_t what = CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT;

	*bounding = false;
	if (capng_get_caps_process() < 0) {
		log_err("cannot read the collector's capabilities");
		return -1;
	}
	if (capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP)) {
		what |= CAPNG_SELECT_BOUNDS;
		*bounding = true;
	}
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_apply(what) < 0) {
		log_err("cannot drop the collector's capabilities");
		return -1;
	}
	return 0;
}
