/* priv_ops: the privileged steps themselves, and nothing else: each a few system calls on
 * arguments already checked. Every system call the privileged process makes for the collector
 * is here, and only here (make check-layers: only this file includes the privileged
 * interfaces' headers, and names their requests); its loop (priv_serve.c) only passes signals
 * on to the collector and reaps it. Each is made on a message checked by priv_dispatch.c,
 * against priv_policy.c; a daemon without a privileged process (unit tests, the steps before
 * the fork) makes them itself through priv.c. It includes no driver and no part of the
 * collector.
 *
 *   RNDADDENTROPY, RNDRESEEDCRNG  priv_ops_add_entropy, priv_ops_reseed
 *   perf_event_open (tracepoint)  priv_ops_perf_open, with the id of priv_ops_tracepoint
 *   input nodes                   priv_ops_input_open (priv_ops_input_name_ok first)
 *   BLKTRACESETUP/START/STOP/     priv_ops_blktrace_start, _stop, and the state file that
 *     TEARDOWN                    lists the traces set up (_take, _release, _cleanup)
 *   relay files (debugfs)         priv_ops_relay_open
 *   packet sockets                priv_ops_packet_socket, _bind, _bound (for the collector's
 *                                 bind(), priv_socket.c), and the filter's attachment and
 *                                 lock (priv_ops_attach_filter, _attach_bpf, _lock_filter,
 *                                 for priv_filter.c)
 *   bpf (a socket filter's        priv_ops_bpf_load, priv_ops_bpf_slots, priv_ops_bpf_set
 *     program and its slot)
 *   the control socket, at exit   priv_ops_remove_socket
 *   sd_notify                     priv_ops_notify
 */
#include "autoconf.h"

#include "priv_ops.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/blktrace_api.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/if_packet.h>
#include <linux/perf_event.h>
#include <linux/random.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "block_blktrace_parse.h"
#include "log.h"
#include "util.h"

#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

/* ---- /dev/random ---- */

/* struct rand_pool_info with room for one batch. */
struct rand_req {
	int entropy_count;
	int buf_size;
	uint32_t buf[PRIV_ENTROPY_BYTES / sizeof(uint32_t)];
};

int priv_ops_add_entropy(int fd, const uint8_t *data, size_t len, int bits)
{
	struct rand_req req;
	int rc;

	req.entropy_count = bits;
	req.buf_size = (int)len;
	memcpy(req.buf, data, len);
	rc = ioctl(fd, RNDADDENTROPY, &req);
	util_wipe(&req, sizeof(req));
	return rc;
}

int priv_ops_reseed(int fd)
{
	return ioctl(fd, RNDRESEEDCRNG);
}

/* ---- perf events of the block tracepoint ---- */

/* The tracepoint's id, as the block driver read it from tracefs (root's alone: before the
 * fork). 0 until then. */
static unsigned tracepoint_id;

void priv_ops_tracepoint(unsigned id)
{
	tracepoint_id = id;
}

static int perf_event(unsigned id, unsigned cpu, enum priv_perf what, bool lost)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	/* A ring takes writers on its owner's clock only. */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	if (what == PRIV_PERF_OWNER) {
		/* Never fires; its enabled time says whether its CPU has been offline. */
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED;
	} else {
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = id;
		a.sample_period = 1;
		a.disabled = 1;
	}
	if (what == PRIV_PERF_DISK) {
		a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
		if (lost)
			a.read_format = PERF_FORMAT_LOST;
	} else if (what == PRIV_PERF_WAKER) {
		a.sample_type = PERF_SAMPLE_IDENTIFIER;
		a.wakeup_events = 1;
	}
	return (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int priv_ops_perf_open(unsigned cpu, unsigned what, unsigned flags)
{
	if (what > PRIV_PERF_WAKER || (what != PRIV_PERF_OWNER && !tracepoint_id)) {
		errno = what > PRIV_PERF_WAKER ? EINVAL : ENOENT;
		return -1;
	}
	return perf_event(tracepoint_id, cpu, (enum priv_perf)what, flags & PRIV_PERF_LOST);
}

/* ---- input nodes ---- */

bool priv_ops_input_name_ok(const char *s, size_t size)
{
	size_t len = strnlen(s, size);

	if (len == size || strncmp(s, "event", 5) != 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    s[i]))
			return false;
	for (size_t i = len; i < size; i++) /* nothing hides after the NUL */
		if (s[i])
			return false;
	return true;
}

/* What may be opened as an input node, by whoever opens it: an input character device, or a
 * FIFO or (with one link) regular file that root owns. Never a symlink, a block device, a
 * directory, a socket or a character device of another driver (a terminal, /dev/mem). */
static bool input_kind_ok(const struct stat *st)
{
	if (S_ISCHR(st->st_mode))
		return major(st->st_rdev) == PRIV_INPUT_MAJOR;
	if (st->st_uid != 0)
		return false;
	return S_ISFIFO(st->st_mode) || (S_ISREG(st->st_mode) && st->st_nlink == 1);
}

int priv_ops_input_open(const char *watch, const char *name, char *why)
{
	struct stat st, fst;
	char *real;
	int dfd, fd, e;

	if (!priv_ops_input_name_ok(name, strlen(name) + 1)) {
		errno = EINVAL;
		return -1;
	}
	/* The directory as the configuration names it, symlinks in it resolved (the
	 * configuration is root's); the entry itself is never followed. */
	real = realpath(watch, NULL);
	if (!real)
		return -1;
	dfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(real);
	if (dfd < 0)
		return -1;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		e = errno;
		close(dfd);
		errno = e;
		return -1;
	}
	if (!input_kind_ok(&st)) {
		if (why)
			snprintf(why, 160, "%s/%s: not an input device (major %d), nor a FIFO or "
				 "file root owns", watch, name, PRIV_INPUT_MAJOR);
		close(dfd);
		errno = EACCES;
		return -1;
	}
	/* A FIFO read and write: a writer that closes then never leaves it readable at EOF
	 * for ever (which would spin the event loop). */
	fd = openat(dfd, name,
		    (S_ISFIFO(st.st_mode) ? O_RDWR : O_RDONLY) | O_NONBLOCK | O_CLOEXEC |
			    O_NOFOLLOW | O_NOCTTY);
	e = errno;
	close(dfd);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	/* Not something else swapped in between the look and the open. */
	if (fstat(fd, &fst) < 0 || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino ||
	    !input_kind_ok(&fst)) {
		close(fd);
		errno = EAGAIN;
		return -1;
	}
	return fd;
}

/* ---- blktrace ---- */

/* BLKTRACESETUP's argument, as <linux/blktrace_api.h> defines it. */
struct blkt_setup {
	char name[32];
	uint16_t act_mask;
	uint32_t buf_size;
	uint32_t buf_nr;
	uint64_t start_lba;
	uint64_t end_lba;
	uint32_t pid;
};

_Static_assert(sizeof(struct blkt_setup) == sizeof(struct blk_user_trace_setup),
	       "blk_user_trace_setup");

#define DEFAULT_RUNDIR "/run/entropyd"
#define SUBBUF_SIZE (32 * 1024) /* relay sub-buffer: ~680 completion records */
#define SUBBUF_NR 4

/* A disk listed in the state file. */
struct rec_entry {
	unsigned major, minor;
	char name[64];
};

static struct log_ratelimit rl_state = LOG_RATELIMIT_INIT;

/* ---- the state file ---- */

/* Kept by the process that makes the privileged steps (the privileged process, or the
 * daemon itself without one): it alone can write the runtime directory, and it alone knows
 * for certain which traces it set up. Opened at its first trace. */
struct blkt_state {
	char *state_path;
	int state_fd; /* flock'ed; -1 without a state file */
	struct rec_entry *recs;
	size_t nrecs;
	bool tried;
};

static struct blkt_state steps_state = { .state_fd = -1 };

static void state_write(struct blkt_state *b)
{
	char *text = xstrdup("# entropyd: disks with a blktrace set up by this daemon; the next "
			     "instance tears down what is left here\n");
	size_t len;

	if (b->state_fd < 0) {
		free(text);
		return;
	}
	for (size_t i = 0; i < b->nrecs; i++) {
		char *next = xasprintf("%s%u:%u %s\n", text, b->recs[i].major, b->recs[i].minor,
				       b->recs[i].name);

		free(text);
		text = next;
	}
	len = strlen(text);
	/* Overwrite, then cut: a crash in between leaves extra lines, never too few. */
	if (pwrite(b->state_fd, text, len, 0) != (ssize_t)len ||
	    ftruncate(b->state_fd, (off_t)len) < 0)
		log_limited(&rl_state, LOG_WARNING,
			    "block: cannot update %s (%s); a trace left by a crash would not "
			    "be torn down by the next start",
			    b->state_path, strerror(errno));
	free(text);
}

static void state_add(struct blkt_state *b, const char *name, unsigned major, unsigned minor)
{
	struct rec_entry *e;

	b->recs = xreallocarray(b->recs, b->nrecs + 1, sizeof(*b->recs));
	e = &b->recs[b->nrecs++];
	e->major = major;
	e->minor = minor;
	strlcopy(e->name, name, sizeof(e->name));
	state_write(b);
}

static void state_remove(struct blkt_state *b, unsigned major, unsigned minor)
{
	for (size_t i = 0; i < b->nrecs; i++) {
		if (b->recs[i].major == major && b->recs[i].minor == minor) {
			b->recs[i] = b->recs[--b->nrecs];
			state_write(b);
			return;
		}
	}
}
/* The device node of major:minor, from sysfs's DEVNAME (or /dev/NAME), checked by number.
 * Read-only: the trace ioctls need nothing more. -1 with errno on failure. */
static int open_node(unsigned major, unsigned minor, const char *name, char *path, size_t size)
{
	char uevent[64], line[256];
	FILE *f;
	struct stat sb;
	int fd;

	snprintf(path, size, "/dev/%s", name);
	snprintf(uevent, sizeof(uevent), "/sys/dev/block/%u:%u/uevent", major, minor);
	f = fopen(uevent, "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "DEVNAME=", 8) == 0) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(path, size, "/dev/%s", line + 8);
				break;
			}
		}
		fclose(f);
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &sb) < 0 || !S_ISBLK(sb.st_mode) || major(sb.st_rdev) != major ||
	    minor(sb.st_rdev) != minor) {
		close(fd);
		errno = ENODEV;
		return -1;
	}
	return fd;
}

/* BLKTRACESTOP then BLKTRACETEARDOWN; 0, or the errno of the teardown. */
static int stop_teardown(int fd)
{
	(void)ioctl(fd, BLKTRACESTOP); /* EINVAL if it was not running: fine */
	if (ioctl(fd, BLKTRACETEARDOWN) < 0)
		return errno ? errno : EIO;
	return 0;
}
/* Tear down what a previous instance listed and did not remove. */
static void recover(struct blkt_state *b)
{
	char line[256];
	FILE *f;
	int fd = dup(b->state_fd);

	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned major, minor;
		char name[64], path[300];
		int nfd, td;

		if (line[0] == '#' || sscanf(line, "%u:%u %63s", &major, &minor, name) != 3)
			continue;
		nfd = open_node(major, minor, name, path, sizeof(path));
		if (nfd < 0) {
			log_info("block/%s: listed in %s, but %s: %s; nothing to tear down", name,
				 b->state_path, path, strerror(errno));
			continue;
		}
		td = stop_teardown(nfd);
		close(nfd);
		if (!td)
			log_notice("block/%s: tore down a blktrace left by an entropyd that did not "
				   "exit cleanly",
				   name);
		else if (td != EINVAL && td != ENXIO)
			log_warn("block/%s: a blktrace left by an earlier entropyd could not be "
				 "torn down: %s",
				 name, strerror(td));
	}
	fclose(f);
}

char *priv_ops_rundir(void)
{
	const char *env = getenv("RUNTIME_DIRECTORY");

	if (!env || env[0] != '/')
		return xstrdup(DEFAULT_RUNDIR);
	return xasprintf("%.*s", (int)strcspn(env, ":"), env);
}

/* The state file in the runtime directory, taken at the first trace: what a crashed
 * instance left listed is torn down first. Without it tracing still works, but is not
 * crash-safe (and says so). */
static struct blkt_state *state_take(const char *rundir)
{
	struct blkt_state *b = &steps_state;
	char *own = NULL;

	if (b->tried)
		return b;
	b->tried = true;
	if (!rundir)
		rundir = own = priv_ops_rundir();
	b->state_path = xasprintf("%s/%s", rundir, PRIV_BLKTRACE_STATE);
	if (mkdir(rundir, 0755) < 0 && errno != EEXIST)
		log_errno(LOG_WARNING, "block: cannot create %s", rundir);
	free(own);
	b->state_fd = open(b->state_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (b->state_fd < 0) {
		log_errno(LOG_WARNING, "block: cannot open %s; blktrace traces would outlive a "
				       "crash",
			  b->state_path);
	} else if (flock(b->state_fd, LOCK_EX | LOCK_NB) < 0) {
		log_warn("block: %s is held by another entropyd: its traces are left alone, and "
			 "this instance's would outlive a crash",
			 b->state_path);
		close(b->state_fd);
		b->state_fd = -1;
	} else {
		recover(b);
		state_write(b);
	}
	return b;
}

void priv_ops_blktrace_take(const char *rundir)
{
	(void)state_take(rundir);
}

void priv_ops_blktrace_release(void)
{
	struct blkt_state *b = &steps_state;

	if (b->state_fd >= 0) {
		if (!b->nrecs)
			unlink(b->state_path);
		close(b->state_fd);
	}
	free(b->recs);
	free(b->state_path);
	memset(b, 0, sizeof(*b));
	b->state_fd = -1;
}


int priv_ops_blktrace_start(const char *name, unsigned major, unsigned minor, char *trace_name,
		   int *stage)
{
	struct blkt_setup su;
	char path[300];
	int fd, e;

	*stage = 0;
	trace_name[0] = '\0';
	fd = open_node(major, minor, name, path, sizeof(path));
	if (fd < 0)
		return errno ? errno : EIO;
	/* Remembered before it exists, so that no crash can leave a trace we forgot. */
	state_add(state_take(NULL), name, major, minor);
	memset(&su, 0, sizeof(su));
	su.act_mask = BLKT_TC_COMPLETE;
	su.buf_size = SUBBUF_SIZE;
	su.buf_nr = SUBBUF_NR;
	*stage = 1;
	if (ioctl(fd, BLKTRACESETUP, &su) < 0) {
		e = errno;
		close(fd);
		state_remove(&steps_state, major, minor);
		return e;
	}
	*stage = 2;
	if (ioctl(fd, BLKTRACESTART) < 0) {
		e = errno;
		if (!stop_teardown(fd))
			state_remove(&steps_state, major, minor);
		close(fd);
		return e;
	}
	close(fd);
	su.name[sizeof(su.name) - 1] = '\0';
	strlcopy(trace_name, su.name[0] ? su.name : name, PRIV_DISK_NAME);
	return 0;
}

int priv_ops_blktrace_stop(const char *name, unsigned major, unsigned minor, bool teardown,
		  bool *opened)
{
	char path[300];
	int fd = open_node(major, minor, name, path, sizeof(path)), td = 0;

	*opened = fd >= 0;
	if (fd < 0) {
		/* The disk is gone, and the kernel took its trace with it. */
		td = errno ? errno : EIO;
		state_remove(&steps_state, major, minor);
		return td;
	}
	if (teardown)
		td = stop_teardown(fd);
	else
		(void)ioctl(fd, BLKTRACESTOP);
	close(fd);
	if (teardown && (!td || td == EINVAL || td == ENXIO))
		state_remove(&steps_state, major, minor);
	return td;
}
/* Tear down whatever a crashed instance listed in rundir's state file, unless a live
 * instance holds it; then remove the file. For a daemon that does not use blktrace. */
void priv_ops_blktrace_cleanup(const char *rundir)
{
	char *path = xasprintf("%s/%s", rundir, PRIV_BLKTRACE_STATE);
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
		struct blkt_state st = { .state_fd = fd, .state_path = path };

		recover(&st);
		unlink(path);
	}
	if (fd >= 0)
		close(fd);
	free(path);
}

/* ---- blktrace's relay files ---- */

/* The first debugfs mount point (a copy), or NULL. */
static char *debugfs_dir(void)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	char *dir = NULL;

	while (f && (m = getmntent(f)))
		if (strcmp(m->mnt_type, "debugfs") == 0) {
			dir = xstrdup(m->mnt_dir);
			break;
		}
	if (f)
		endmntent(f);
	return dir;
}

int priv_ops_relay_open(const char *debugfs, const char *trace, unsigned cpu)
{
	char *own = NULL, *path;
	int fd, e;

	if (!debugfs && !(debugfs = own = debugfs_dir())) {
		errno = ENOENT;
		return -1;
	}
	path = xasprintf("%s/block/%s/trace%u", debugfs, trace, cpu);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	e = errno;
	free(path);
	free(own);
	errno = e;
	return fd;
}

/* ---- packet sockets ---- */

int priv_ops_packet_socket(int type)
{
	/* Not socket(): in entropyd that is libpcap's, answered by priv_socket.c. */
	return (int)syscall(SYS_socket, AF_PACKET, type | SOCK_CLOEXEC, 0);
}

int priv_ops_packet_bind(int fd, unsigned ifindex, uint16_t protocol)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(protocol),
				  .sll_ifindex = (int)ifindex};

	return bind(fd, (const struct sockaddr *)&sll, sizeof(sll));
}

int priv_ops_packet_bound(int fd, const struct sockaddr *addr, socklen_t len)
{
	const struct sockaddr_ll *want = (const struct sockaddr_ll *)addr;
	struct sockaddr_ll has;
	socklen_t n = sizeof(has);

	if (!addr || len < sizeof(*want) || addr->sa_family != AF_PACKET ||
	    getsockname(fd, (struct sockaddr *)&has, &n) < 0 || has.sll_family != AF_PACKET ||
	    has.sll_ifindex != want->sll_ifindex ||
	    (want->sll_protocol != 0 && want->sll_protocol != has.sll_protocol))
		return -1;
	return want->sll_protocol != 0;
}

int priv_ops_attach_filter(int fd, const struct sock_fprog *prog)
{
	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, prog, sizeof(*prog));
}

int priv_ops_attach_bpf(int fd, int prog)
{
	return setsockopt(fd, SOL_SOCKET, SO_ATTACH_BPF, &prog, sizeof(prog));
}

int priv_ops_lock_filter(int fd)
{
	int one = 1;

	return setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof(one));
}

/* ---- the control socket ---- */

void priv_ops_remove_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (!path || !strlcopy(sa.sun_path, path, sizeof(sa.sun_path)) || lstat(path, &st) < 0 ||
	    !S_ISSOCK(st.st_mode) || st.st_uid != 0)
		return;
	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	rc = connect(fd, (const struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0 && errno == ECONNREFUSED)
		unlink(path);
	close(fd);
}

/* ---- the service manager ---- */

static void notify_send(const char *msg)
{
#ifdef HAVE_LIBSYSTEMD
	sd_notify(0, msg);
#else
	(void)msg;
#endif
}

void priv_ops_notify(enum priv_notify what, const char *text)
{
	char msg[64 + PRIV_STATUS_TEXT];

	switch (what) {
	case PRIV_N_READY:
		notify_send("READY=1");
		break;
	case PRIV_N_RELOADING:
		/* MONOTONIC_USEC lets newer managers (Type=notify-reload) match the reload. */
		snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
			 (unsigned long long)(util_mono_ns() / 1000));
		notify_send(msg);
		break;
	case PRIV_N_STOPPING:
		notify_send("STOPPING=1");
		break;
	case PRIV_N_WATCHDOG:
		notify_send("WATCHDOG=1");
		break;
	case PRIV_N_STATUS:
		snprintf(msg, sizeof(msg), "STATUS=%s", text ? text : "");
		notify_send(msg);
		break;
	}
}

/* ---- eBPF socket filters (priv_filter_bpf.c) ---- */

static long bpf(int cmd, union bpf_attr *a)
{
	return syscall(SYS_bpf, cmd, a, sizeof(*a));
}

int priv_ops_bpf_load(const struct bpf_insn *insns, size_t n, char *log, size_t size)
{
	union bpf_attr a;
	int fd, e;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = (uint32_t)n;
	a.license = (uintptr_t)"GPL";
	fd = (int)bpf(BPF_PROG_LOAD, &a);
	if (fd >= 0 || !log || size < 2 || (errno != EACCES && errno != EINVAL))
		return fd;
	/* Again, for the verifier's reason; the first answer's errno stands (a log longer than
	 * size would make it ENOSPC). */
	e = errno;
	log[0] = 0;
	a.log_buf = (uintptr_t)log;
	a.log_size = (uint32_t)size;
	a.log_level = 1;
	fd = (int)bpf(BPF_PROG_LOAD, &a);
	if (fd >= 0)
		close(fd); /* not refused this time: not to be used either */
	errno = e;
	return -1;
}

int priv_ops_bpf_slots(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_PROG_ARRAY;
	a.key_size = sizeof(uint32_t);
	a.value_size = sizeof(uint32_t);
	a.max_entries = 1;
	return (int)bpf(BPF_MAP_CREATE, &a);
}

int priv_ops_bpf_set(int slots, int prog)
{
	union bpf_attr a;
	uint32_t key = 0, value = (uint32_t)prog;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)slots;
	a.key = (uintptr_t)&key;
	a.value = (uintptr_t)&value;
	a.flags = BPF_ANY;
	return (int)bpf(BPF_MAP_UPDATE_ELEM, &a);
}
