/* priv_start: the two processes: the fork, and the collector's lockdown.
 *
 * After start-up entropyd is two processes. The parent, the service's main process, stays
 * root with CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL and does nothing but answer the messages
 * below and pass signals on; the child, the collector, runs as the system user of
 * collector.user with no capability and does everything else: it reads events, estimates,
 * tests, applies the policy, batches, serves the control socket.
 * It is never uid 0: without its user (collector.user) entropyd does not start.
 * Everything the outside controls (packets, trace records, input frames, control requests)
 * is parsed in the collector; the privileged process reads only fixed-size, versioned
 * messages of a few types (priv_wire.h), each checked field by field (priv_dispatch.c); it
 * refuses (EACCES) what its configuration does not allow (priv_policy.c), and closes the
 * connection (then tears down what it set up and exits) on anything malformed. Its system
 * calls are priv_ops.c's, its loop priv_serve.c; the collector's side of the protocol is
 * priv.c. This file is the fork and the collector's lockdown. The models are OpenBSD ntpd's
 * parent/engine split, OpenSSH's monitor and chrony's privops.c: the call sites are the same
 * whether or not the privileged process exists.
 *
 * What a collector that lies can get from it: RNDADDENTROPY credit up to a ceiling the
 * privileged process derives from the configuration it reads itself and from what it can
 * vouch for (ceiling_rate in priv_policy.c); perf events of the block tracepoint on CPUs
 * that exist; blktrace on whole disks of /sys/block that the configuration selects and the
 * relay files of those traces; packet sockets bound to interfaces the configuration
 * selects, one that hears per interface, and only what its filter keeps (priv_filter.c);
 * input nodes of the watched directory (input character devices, FIFOs and files root
 * owns); sd_notify messages from a fixed set (STATUS with printable text only). */
#include "autoconf.h"

#include "priv_start.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "priv.h"
#include "priv_drop.h"
#include "priv_sandbox.h"
#include "priv_serve.h"
#include "util.h"

/* Add path (a copy in buf), or its directory (file: true), to v. */
static void view_add(struct sandbox_view *v, char *buf, size_t size, const char *path,
		     bool file, bool writable)
{
	char *slash;

	if (!path || path[0] != '/' || v->n >= SANDBOX_MAX_PATHS)
		return;
	snprintf(buf, size, "%s", path);
	if (file && (slash = strrchr(buf, '/')) != NULL)
		*(slash == buf ? slash + 1 : slash) = '\0';
	v->paths[v->n].path = buf;
	v->paths[v->n].writable = writable;
	v->paths[v->n].flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	v->n++;
}

int priv_start_lockdown(const struct config *cfg, const char *config_path)
{
	const char *record_dir = cfg->record.dir;
	bool bounding;
	/* What the collector still reads after its start: the configuration (reloads, the
	 * time zone), sysfs (disks, interfaces, input devices), /dev (input hotplug,
	 * /dev/log, /dev/null), /run (the journal's and the service manager's sockets); the
	 * directories of the control socket, the configuration, input.watch (and its parent,
	 * watched for it to appear) and network.file; it writes only beneath record.dir
	 * (Landlock says the same). */
	struct sandbox_view view = {
		.paths = {{"/etc", false, MS_NOSUID | MS_NODEV | MS_NOEXEC},
			  {"/sys", false, MS_NOSUID | MS_NODEV | MS_NOEXEC},
			  {"/dev", false, MS_NOSUID | MS_NOEXEC},
			  {"/run", false, MS_NOSUID | MS_NODEV | MS_NOEXEC}},
		.n = 4,
	};
	char conf_dir[PATH_MAX], ctl_dir[PATH_MAX], rec_dir[PATH_MAX], watch_dir[PATH_MAX];
	char net_dir[PATH_MAX];

	if (priv_active()) {
		view_add(&view, conf_dir, sizeof(conf_dir), config_path, true, false);
		view_add(&view, ctl_dir, sizeof(ctl_dir), cfg->control.socket, true, false);
		view_add(&view, watch_dir, sizeof(watch_dir), cfg->input.watch, true, false);
		view_add(&view, net_dir, sizeof(net_dir), cfg->network.file, true, false);
		view_add(&view, rec_dir, sizeof(rec_dir), record_dir, false, true);
		if (priv_sandbox_namespaces(&view) < 0)
			return -1;
	}

	/* Everything that needs root is open by now: the control socket, the configuration's
	 * files, the privileged process's socketpair. */
	if (priv_drop_collector(cfg->collector.user, &bounding) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		log_errno(LOG_ERR, "cannot set no_new_privs on the collector");
		return -1;
	}
	if (priv_active()) {
		/* After the change of uid, which clears the parent-death signal; and the parent
		 * may have gone before it was set. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
			log_errno(LOG_ERR, "cannot tie the collector to the privileged process");
			return -1;
		}
		priv_check_peer();
	}
	priv_sandbox_walls_user(cfg->collector.user, (unsigned)getuid(), (unsigned)getgid(), bounding,
			   true);
	if (priv_sandbox_landlock(record_dir) < 0 || priv_sandbox_collector() < 0)
		return -1;
	log_info("collector: user %s, no supplementary groups, every capability dropped%s, no "
		 "new privileges, system call filter",
		 cfg->collector.user,
		 bounding ? " (bounding set included)"
			  : " (the bounding set stays as given: shrinking it needs CAP_SETPCAP)");
	priv_sandbox_walls_log();
	return 0;
}

int priv_start(struct config *cfg, const char *config_path, int rnd_fd, int ready_fd,
	       int *status)
{
	int sv[2];
	sigset_t set, old;
	pid_t pid, parent;
	int pidns;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_errno(LOG_ERR, "cannot make the privileged process's socket");
		return -1;
	}
	/* The signals the privileged process passes on wait until it is ready for them. */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	parent = getpid();
	pidns = priv_sandbox_pidns_begin();
	pid = fork();
	priv_sandbox_pidns_end(pidns, pid == 0);
	if (pid < 0) {
		log_errno(LOG_ERR, "cannot start the collector");
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(sv[0]);
		if (rnd_fd >= 0)
			close(rnd_fd);
		priv_connect(sv[1], parent);
		return 0;
	}
	close(sv[1]);
	if (ready_fd >= 0)
		close(ready_fd);
	priv_drop();
	log_info("privileged process %d: the collector is process %d", (int)getpid(), (int)pid);
	*status = priv_serve(sv[0], cfg, config_path, rnd_fd, pid);
	return 1;
}
