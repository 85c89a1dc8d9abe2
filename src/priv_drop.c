/* priv_drop: once started, each process keeps only the capabilities it still needs.
 *
 * Started as root by hand, entropyd would otherwise keep every capability root has for as
 * long as it runs. The privileged process (priv_start.c) still needs three: CAP_SYS_ADMIN to
 * feed the kernel (RNDADDENTROPY) and to open the block tracepoint or blktrace for disks
 * and CPUs that appear; CAP_NET_RAW to make packet sockets for interfaces that come up;
 * CAP_KILL to pass signals on to the collector, which runs as another user (and to kill
 * it when it breaks the protocol). The collector, which parses packets, trace records and
 * control requests, needs none, and leaves uid 0 (priv_drop_collector), always: uid 0
 * without capabilities still owns root's files, processes and sockets.
 * The rest goes for good, bounding set included, so nothing either could exec gets them
 * back: no CAP_DAC_OVERRIDE (files it reads on a reload
 * must be readable by their owner, root), no CAP_CHOWN (the control socket's group is set
 * at start-up, before this), no module loading, no ptrace. Under systemd the unit's
 * CapabilityBoundingSet= says the same, and this changes nothing. */
#include "autoconf.h"

#include "priv_drop.h"

#include <cap-ng.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdbool.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static const unsigned keep[] = {CAP_SYS_ADMIN, CAP_NET_RAW, CAP_KILL};

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

int priv_drop(void)
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
	{
		static const char *const names[] = {"CAP_SYS_ADMIN", "CAP_NET_RAW", "CAP_KILL"};
		char list[64] = "";
		size_t n = 0, k = 0;

		for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
			n += have[i];
		for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
			if (have[i])
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 !k++ ? "" : k == n ? " and " : ", ", names[i]);
		log_info("capabilities: kept %s, dropped the rest", n ? list : "none");
	}
	return 0;
}

bool priv_drop_lookup(const char *user, uid_t *uid, gid_t *gid)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int err = getpwnam_r(user, &pw, buf, sizeof(buf), &found);

	if (!found) {
		if (err)
			log_warn("collector: cannot look up user %s: %s", user, strerror(err));
		return false;
	}
	*uid = found->pw_uid;
	*gid = found->pw_gid;
	return *uid != 0;
}

bool priv_drop_collector_user(const char *user, uid_t *uid, gid_t *gid, char *why, size_t size)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int err = getpwnam_r(user, &pw, buf, sizeof(buf), &found);

	if (!found && err) {
		snprintf(why, size, "cannot look up user %s: %s", user, strerror(err));
		return false;
	}
	if (!found) {
		snprintf(why, size, "no user %s on this system, and the collector never runs as root: "
			 "create it (%sadduser --system --group --no-create-home --home "
			 "/nonexistent %s), or name another unprivileged user in collector.user",
			 user, strcmp(user, COLLECTOR_USER) == 0
				       ? "systemd-sysusers, which reads entropyd's sysusers.d file; or "
				       : "",
			 user);
		return false;
	}
	if (found->pw_uid == 0 || found->pw_gid == 0) {
		snprintf(why, size, "user %s is %s 0, root's, and the collector never runs as root: "
			 "name an unprivileged system user in collector.user", user,
			 found->pw_uid == 0 ? "uid" : "in group");
		return false;
	}
	*uid = found->pw_uid;
	*gid = found->pw_gid;
	return true;
}

int priv_drop_collector(const char *user, bool *bounding)
{
	uid_t uid = 0, r, e, s;
	gid_t gid = 0;
	char why[512];

	*bounding = false;
	/* Checked at start already; the user may have gone since. */
	if (!priv_drop_collector_user(user, &uid, &gid, why, sizeof(why))) {
		log_err("collector: %s", why);
		return -1;
	}
	if (capng_get_caps_process() < 0) {
		log_err("cannot read the collector's capabilities");
		return -1;
	}
	/* The bounding set first: emptying it takes CAP_SETPCAP, which leaving uid 0 takes
	 * away. The other sets keep CAP_SETUID and CAP_SETGID for the steps after. */
	if (capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP)) {
		capng_clear(CAPNG_SELECT_BOUNDS);
		if (capng_apply(CAPNG_SELECT_BOUNDS) < 0) {
			log_err("cannot empty the collector's bounding set");
			return -1;
		}
		*bounding = true;
	}
	/* Groups before the uid (setgroups and setresgid need CAP_SETGID); no supplementary
	 * group at all: every device descriptor comes from the privileged process. */
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0) {
		log_errno(LOG_ERR, "collector: cannot become user %s (%u:%u)", user, (unsigned)uid,
			  (unsigned)gid);
		return -1;
	}
	/* The kernel emptied the permitted and effective sets with the uid; check that root
	 * cannot be had back. */
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid || setuid(0) == 0 ||
	    getgroups(0, NULL) != 0) {
		log_err("collector: the change of user to %s did not hold", user);
		return -1;
	}
	/* A change of uid resets the dumpable flag to fs.suid_dumpable's value. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		log_errno(LOG_ERR, "collector: cannot turn off core dumps");
		return -1;
	}
	capng_clear(CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT);
	if (capng_apply(CAPNG_SELECT_CAPS | CAPNG_SELECT_AMBIENT) < 0) {
		log_err("cannot drop the collector's capabilities");
		return -1;
	}
	return 0;
}
