/* testutil: the helpers the Check unit tests share. */
#include "autoconf.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/capability.h>
#include <linux/loop.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "priv.h"
#include "priv_serve.h"
#include "source.h"
#include "testutil.h"
#include "util.h"

/* ---- the runner ---- */

static char run_dir[4096];

const char *tu_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return run_dir[0] ? run_dir : t && t[0] ? t : "/tmp";
}

int tu_run_suite(Suite *s)
{
	const char *t = getenv("TMPDIR");
	char *saved = t ? xstrdup(t) : NULL;
	SRunner *sr = srunner_create(s);
	int failed, n;

	/* Every test makes its files under one directory of this process's, removed here
	 * whatever became of the tests: Check ends a failed test's process at once (in its own
	 * process, with _exit), and a test past its time is killed, so their own cleanup never
	 * runs then. */
	n = snprintf(run_dir, sizeof(run_dir), "%s/%s.XXXXXX", t && t[0] ? t : "/tmp",
		     program_invocation_short_name);
	if (n < 0 || (size_t)n >= sizeof(run_dir) || !mkdtemp(run_dir)) {
		perror("tu_run_suite: mkdtemp");
		exit(EXIT_FAILURE);
	}
	/* /tmp's own mode: what a test did in /tmp it does here, as another user too (the
	 * collector's reads a configuration; a test may drop to nobody and make files). */
	if (chmod(run_dir, 01777) < 0) {
		perror("tu_run_suite: chmod");
		exit(EXIT_FAILURE);
	}
	/* Programs the tests start, and code that reads TMPDIR, make theirs here too. */
	setenv("TMPDIR", run_dir, 1);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (tu_rm_tree(run_dir) < 0) {
		fprintf(stderr, "tu_run_suite: cannot remove %s: %s\n", run_dir, strerror(errno));
		failed++;
	}
	run_dir[0] = '\0';
	if (saved)
		setenv("TMPDIR", saved, 1);
	else
		unsetenv("TMPDIR");
	free(saved);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- stderr, files, text ---- */

static FILE *cap_tmp;
static int cap_saved = -1;

void tu_capture_begin(void)
{
	cap_tmp = tmpfile();
	ck_assert_ptr_nonnull(cap_tmp);
	fflush(stderr);
	cap_saved = dup(STDERR_FILENO);
	ck_assert_int_ge(cap_saved, 0);
	ck_assert_int_ge(dup2(fileno(cap_tmp), STDERR_FILENO), 0);
}

char *tu_capture_end(void)
{
	char *text;

	fflush(stderr);
	ck_assert_int_ge(dup2(cap_saved, STDERR_FILENO), 0);
	close(cap_saved);
	cap_saved = -1;
	text = tu_read_tmpfile(cap_tmp);
	cap_tmp = NULL;
	return text;
}

char *tu_read_tmpfile(FILE *f)
{
	char *text;
	long len = ftell(f);

	ck_assert_int_ge(len, 0);
	text = xcalloc(1, (size_t)len + 1);
	rewind(f);
	ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return text;
}

char *tu_read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_ge(len, 0);
	rewind(f);
	buf = xmalloc((size_t)len + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = '\0';
	fclose(f);
	if (n)
		*n = (size_t)len;
	return buf;
}

size_t tu_count(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* ---- descriptors and privilege ---- */

int tu_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int tu_count_fds(void)
{
	int n = tu_open_fds();

	ck_assert_msg(n >= 0, "cannot read /proc/self/fd");
	return n;
}

bool tu_have_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];

	return syscall(SYS_capget, &hdr, data) == 0 &&
	       (data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) != 0;
}

/* ---- seeded random numbers ---- */

uint64_t tu_seed;
static uint64_t rng_state;

uint64_t tu_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void tu_rng_seed(uint64_t default_seed)
{
	const char *e = getenv("ENTROPYD_TEST_SEED");

	tu_seed = e ? strtoull(e, NULL, 0) : default_seed;
	rng_state = tu_seed;
}

uint64_t tu_rng_next(void)
{
	return tu_splitmix64(&rng_state);
}

double tu_rng_unit(void)
{
	return (double)(tu_rng_next() >> 11) / 9007199254740992.0;
}

/* ---- packets ---- */

size_t tu_frame_ipv4(uint8_t *b, uint32_t src_ip)
{
	uint32_t sum = 0;

	memset(b, 0, 64);
	b[6] = 0x02; /* source MAC 02:00:00:00:00:01 */
	b[11] = 0x01;
	b[12] = 0x08; /* IPv4 */
	b[14] = 0x45;
	b[16] = 0, b[17] = 46; /* total length */
	b[22] = 64;            /* TTL */
	b[14 + 9] = 17;        /* UDP */
	b[26] = (uint8_t)(src_ip >> 24);
	b[27] = (uint8_t)(src_ip >> 16);
	b[28] = (uint8_t)(src_ip >> 8);
	b[29] = (uint8_t)src_ip;
	b[30] = 10;
	b[33] = 2;
	/* A header whose checksum holds, which a bridge's netfilter hook checks. */
	for (int i = 14; i < 34; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	b[24] = (uint8_t)(~sum >> 8);
	b[25] = (uint8_t)~sum;
	b[35] = 9, b[37] = 9; /* ports 9 (discard) to 9 */
	b[39] = 26;           /* UDP length; no checksum */
	return 60;
}

int tu_frames_open(const char *ifname)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	ck_assert_msg(fd >= 0, "a packet socket: %s", strerror(errno));
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	ck_assert_msg(sll.sll_ifindex > 0, "no interface %s", ifname);
	ck_assert_msg(bind(fd, (struct sockaddr *)&sll, sizeof(sll)) == 0, "bind to %s: %s",
		      ifname, strerror(errno));
	return fd;
}

void tu_frames_send(int fd, uint32_t first_src, unsigned sources, unsigned n)
{
	uint8_t b[64];

	for (unsigned i = 0; i < n; i++) {
		size_t len = tu_frame_ipv4(b, first_src + i % sources);

		memset(b, 0xff, 6);
		ck_assert_msg(send(fd, b, len, 0) == (ssize_t)len, "frame %u: %s", i,
			      strerror(errno));
	}
}

/* ---- network namespaces ---- */

bool tu_netns_enter(char *why, size_t size)
{
	const char *fork_mode = getenv("CK_FORK");
	struct ifreq ifr;
	int s;

	if (fork_mode && strcmp(fork_mode, "no") == 0) {
		snprintf(why, size, "CK_FORK=no: the namespace would outlive the test");
		return false;
	}
	if (!tu_have_sys_admin()) {
		snprintf(why, size, "a network namespace needs CAP_SYS_ADMIN (root)");
		return false;
	}
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0) {
		snprintf(why, size, "unshare(CLONE_NEWNET | CLONE_NEWNS): %s", strerror(errno));
		return false;
	}
	/* sysfs shows the namespace of whoever mounted it: this one's, as ip netns exec does. */
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_msg(mount("sysfs", "/sys", "sysfs", 0, NULL) == 0, "mount sysfs: %s",
		      strerror(errno));
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ck_assert_int_eq(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	ck_assert_msg(ioctl(s, SIOCSIFFLAGS, &ifr) == 0, "lo up: %s", strerror(errno));
	close(s);
	return true;
}

void tu_sh(const char *fmt, ...)
{
	char *cmd, *out;
	FILE *f = tmpfile();
	va_list ap;
	pid_t pid;
	int st;

	ck_assert_ptr_nonnull(f);
	va_start(ap, fmt);
	ck_assert_int_ge(vasprintf(&cmd, fmt, ap), 0);
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fileno(f), 1);
		dup2(fileno(f), 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	out = tu_read_tmpfile(f);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "\"%s\" failed (status %#x): %s",
		      cmd, st, out);
	free(out);
	free(cmd);
}

/* ---- temporary directories ---- */

/* The directory made from the template fmt makes in dir: 0, or an errno. */
static int vmkdtemp(char *dir, size_t size, const char *fmt, va_list ap)
{
	int n = vsnprintf(dir, size, fmt, ap);

	if (n < 0 || (size_t)n >= size)
		return ENAMETOOLONG;
	return mkdtemp(dir) ? 0 : errno;
}

void tu_mkdtemp(char *dir, size_t size, const char *fmt, ...)
{
	va_list ap;
	int e;

	va_start(ap, fmt);
	e = vmkdtemp(dir, size, fmt, ap);
	va_end(ap);
	ck_assert_msg(e == 0, "mkdtemp %s: %s", dir, strerror(e));
}

void tu_mkdtemp_or_exit(char *dir, size_t size, const char *fmt, ...)
{
	va_list ap;
	int e;

	va_start(ap, fmt);
	e = vmkdtemp(dir, size, fmt, ap);
	va_end(ap);
	if (!e)
		return;
	fprintf(stderr, "mkdtemp %s: %s\n", dir, strerror(e));
	exit(EXIT_FAILURE);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

int tu_rm_tree(const char *path)
{
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- the privileged process ---- */

int tu_privileged_start(struct config *cfg, int rnd_fd)
{
	int sv[2];
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[1]);
		_exit(priv_serve(sv[0], cfg, "/nonexistent/entropyd.conf", rnd_fd, 0));
	}
	config_free(cfg);
	if (rnd_fd >= 0)
		close(rnd_fd);
	close(sv[0]);
	priv_connect(sv[1], pid);
	return pid;
}

void tu_privileged_end(int pid)
{
	int ws;

	priv_close();
	ck_assert(!priv_active());
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_msg(WIFEXITED(ws) && WEXITSTATUS(ws) == EXIT_OK,
		      "the privileged process ended with status %#x", ws);
}

/* ---- the pipeline's instances ---- */

bool tu_instance(int cls, const char *name, struct inst_info *out)
{
	for (size_t i = 0; feed_pipeline_info(i, out); i++)
		if ((int)out->cls == cls && strcmp(out->name, name) == 0)
			return true;
	return false;
}

/* ---- a source under test ---- */

struct config *tu_net_config(const char *const *ifaces, size_t n, const char *filter,
			     int max_eps)
{
	struct config *c = config_defaults();

	for (int k = 0; k < CLASS_COUNT; k++)
		c->policy[k].rule.mode = MODE_DISABLED;
	c->policy[CLASS_NETWORK].rule.mode = MODE_TRUSTED;
	c->network.max_events_per_second = max_eps;
	free(c->network.capture.filter);
	c->network.capture.filter = xstrdup(filter);
	config_settings_strlist_free(&c->network.interfaces);
	for (size_t i = 0; i < n; i++)
		config_settings_strlist_add(&c->network.interfaces, ifaces[i]);
	return c;
}

void tu_source_start(struct tu_source *t, const struct source_ops *ops, struct config *cfg,
		     struct config *priv_cfg)
{
	memset(t, 0, sizeof(*t));
	t->base = event_base_new();
	ck_assert_ptr_nonnull(t->base);
	t->cfg = cfg;
	if (priv_cfg)
		t->privileged = tu_privileged_start(priv_cfg, -1);
	t->pool = xcalloc(1, sizeof(*t->pool));
	feed_pool_init(t->pool);
	feed_pipeline_init(cfg, t->pool, tu_pool_drain_full, t->pool);
	t->src = xcalloc(1, sizeof(*t->src));
	ck_assert_int_eq(source_start(t->src, ops, t->base, cfg), 0);
}

void tu_source_stop(struct tu_source *t)
{
	if (!t->src)
		return;
	source_stop(t->src);
	ck_assert_ptr_null(t->src->priv);
	feed_pipeline_fini();
	if (t->privileged)
		tu_privileged_end(t->privileged);
	config_free(t->cfg);
	event_base_free(t->base);
	free(t->src);
	free(t->pool);
	memset(t, 0, sizeof(*t));
}

/* ---- loop devices ---- */

bool tu_loop_new(struct tu_loop *l, const char *on, size_t bytes, char *why, size_t size)
{
	char file[] = "/dev/shm/entropyd-unit.XXXXXX";
	struct loop_info64 info = {.lo_flags = LO_FLAGS_AUTOCLEAR};
	struct stat sb;
	int ctl, back = -1, n = -1;

	memset(l, 0, sizeof(*l));
	l->fd = -1;
	if (geteuid() != 0) {
		snprintf(why, size, "loop devices need root");
		return false;
	}
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		snprintf(why, size, "/dev/loop-control: %s (no loop driver?)", strerror(errno));
		return false;
	}
	if (on) {
		file[0] = '\0';
		back = open(on, O_RDWR | O_CLOEXEC);
		if (back < 0) {
			snprintf(why, size, "%s: %s", on, strerror(errno));
			goto fail;
		}
	} else {
		back = mkstemp(file);
		if (back < 0 || ftruncate(back, (off_t)bytes) < 0) {
			snprintf(why, size, "a file in /dev/shm: %s", strerror(errno));
			goto fail;
		}
	}
	/* Another process may take the free one first: then ask again. */
	for (int tries = 0; tries < 100; tries++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0) {
			snprintf(why, size, "LOOP_CTL_GET_FREE: %s", strerror(errno));
			goto fail;
		}
		snprintf(l->path, sizeof(l->path), "/dev/loop%d", n);
		l->fd = open(l->path, O_RDWR | O_CLOEXEC);
		if (l->fd >= 0 && ioctl(l->fd, LOOP_SET_FD, back) == 0)
			break;
		if (l->fd >= 0)
			close(l->fd);
		l->fd = -1;
		if (errno != EBUSY && errno != ENOENT) {
			snprintf(why, size, "%s: %s", l->path, strerror(errno));
			goto fail;
		}
	}
	if (l->fd < 0 || ioctl(l->fd, LOOP_SET_STATUS64, &info) < 0 || fstat(l->fd, &sb) < 0) {
		snprintf(why, size, "no loop device could be attached: %s", strerror(errno));
		goto fail;
	}
	snprintf(l->name, sizeof(l->name), "loop%d", n);
	strlcopy(l->file, file, sizeof(l->file));
	l->major = major(sb.st_rdev);
	l->minor = minor(sb.st_rdev);
	close(back);
	close(ctl);
	return true;
fail:
	if (l->fd >= 0) {
		ioctl(l->fd, LOOP_CLR_FD, 0);
		close(l->fd);
	}
	l->fd = -1;
	if (back >= 0)
		close(back);
	if (file[0])
		unlink(file);
	close(ctl);
	return false;
}

void tu_loop_free(struct tu_loop *l)
{
	if (l->fd >= 0) {
		ioctl(l->fd, LOOP_CLR_FD, 0);
		close(l->fd);
	}
	l->fd = -1;
	if (l->file[0])
		unlink(l->file);
	l->file[0] = '\0';
}

void tu_loop_read(const struct tu_loop *l, int blocks)
{
	int fd = open(l->path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	void *buf;

	ck_assert_msg(fd >= 0, "%s: %s", l->path, strerror(errno));
	ck_assert_int_eq(posix_memalign(&buf, 4096, 4096), 0);
	for (int i = 0; i < blocks; i++)
		ck_assert_int_eq(pread(fd, buf, 4096, (off_t)i * 4096), 4096);
	free(buf);
	close(fd);
}

static int block_lock_fd = -1;

bool tu_block_lock(unsigned seconds, char *why, size_t size)
{
	const char *path = access("/run/lock", W_OK) == 0 ? "/run/lock/entropyd-tests-block"
							   : "/tmp/entropyd-tests-block";

	if (block_lock_fd < 0)
		block_lock_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (block_lock_fd < 0) {
		snprintf(why, size, "%s: %s", path, strerror(errno));
		return false;
	}
	/* flock(2) has no timeout: ask every 100 ms */
	for (unsigned i = 0; i <= seconds * 10; i++) {
		if (flock(block_lock_fd, LOCK_EX | LOCK_NB) == 0)
			return true;
		usleep(100000);
	}
	snprintf(why, size, "%s held for %u s by another block test", path, seconds);
	return false;
}

void tu_block_unlock(void)
{
	if (block_lock_fd >= 0)
		close(block_lock_fd);
	block_lock_fd = -1;
}

/* ---- configurations ---- */

struct config *tu_config_text(const char *text, struct config_errors *errs, char **path)
{
	char *file = xasprintf("%s/conf.XXXXXX", tu_tmpdir());
	int fd = mkstemp(file);
	size_t len = strlen(text);
	struct config *cfg;

	ck_assert_msg(fd >= 0, "mkstemp %s: %s", file, strerror(errno));
	ck_assert_msg(write(fd, text, len) == (ssize_t)len, "write %s", file);
	ck_assert_int_eq(close(fd), 0);
	cfg = config_load(file, errs);
	if (path)
		*path = file;
	else {
		unlink(file);
		free(file);
	}
	return cfg;
}

void tu_assert_config_says(const char *text, const char *want)
{
	char *said = tu_config_errors(text);

	ck_assert_msg(said != NULL, "accepted: %s", text);
	ck_assert_str_eq(said, want);
	free(said);
}

char *tu_config_errors(const char *text)
{
	struct config_errors errs = {0};
	struct config *cfg = tu_config_text(text, &errs, NULL);
	char *out = NULL, *more;

	if (cfg) {
		ck_assert_uint_eq(errs.n, 0);
		config_free(cfg);
	}
	for (size_t i = 0; i < errs.n; i++) {
		/* "FILE:LINE: KEY: ...": the file is one of ours, with a name of its own */
		const char *m = strchr(errs.msg[i], ':');

		m = m ? strchr(m + 1, ':') : NULL;
		m = m && m[1] == ' ' ? m + 2 : errs.msg[i];
		more = xasprintf("%s%s%s", out ? out : "", out ? "\n" : "", m);
		free(out);
		out = more;
	}
	config_errors_free(&errs);
	return out;
}

/* ---- the event loop ---- */

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
}

void tu_turn(struct event_base *base)
{
	struct timeval tv = {0, 10000};
	struct event *tick = evtimer_new(base, tick_cb, NULL);

	ck_assert_ptr_nonnull(tick);
	evtimer_add(tick, &tv);
	event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
}

void tu_pool_drain_full(void *arg)
{
	struct pool *p = arg;
	struct batch b;

	if (!feed_pool_full(p))
		return;
	feed_pool_take(p, &b);
	feed_pool_batch_wipe(&b);
}
