/* check_priv_ops: the privileged steps themselves (priv_ops.c), on the real kernel: the
 * /dev/random ioctls, packet sockets on lo (made, bound, made deaf for good), socket
 * filters, perf events, input nodes of each kind, relay files, the blktrace state file and
 * the control socket's removal. What needs root (CAP_SYS_ADMIN, CAP_NET_RAW, files root
 * owns) says so and skips where this process has not got it; as anyone else, the refusal
 * the kernel gives is what is checked. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "priv_ops.h"
#include "testutil.h"
#include "util.h"

static char dir[64];

static void setup(void)
{
	log_open(true, 0);
	tu_mkdtemp(dir, sizeof(dir), "%s/priv_ops.XXXXXX", tu_tmpdir());
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}

static bool root(const char *test, const char *why)
{
	if (geteuid() == 0)
		return true;
	printf("%s: skipped: %s, and this test is not root\n", test, why);
	return false;
}

/* RNDADDENTROPY and RNDRESEEDCRNG: done with CAP_SYS_ADMIN, EPERM without it; ENOTTY on a
 * file that is not a random device. Nothing is credited: 0 bits. */
START_TEST(test_random)
{
	uint8_t data[16];
	int fd = open("/dev/random", O_WRONLY | O_CLOEXEC);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(null, 0);
	ck_assert_int_eq(getrandom(data, sizeof(data), 0), (ssize_t)sizeof(data));
	if (tu_have_sys_admin()) {
		ck_assert_int_eq(priv_ops_add_entropy(fd, data, sizeof(data), 0), 0);
		ck_assert_int_eq(priv_ops_reseed(fd), 0);
	} else {
		printf("test_random: without CAP_SYS_ADMIN: EPERM is checked\n");
		ck_assert_int_eq(priv_ops_add_entropy(fd, data, sizeof(data), 0), -1);
		ck_assert_int_eq(errno, EPERM);
		ck_assert_int_eq(priv_ops_reseed(fd), -1);
		ck_assert_int_eq(errno, EPERM);
	}
	ck_assert_int_eq(priv_ops_add_entropy(null, data, sizeof(data), 0), -1);
	ck_assert_int_eq(errno, ENOTTY);
	ck_assert_int_eq(priv_ops_reseed(null), -1);
	ck_assert_int_eq(errno, ENOTTY);
	close(fd);
	close(null);
}
END_TEST

/* A packet socket on lo: made close-on-exec, bound to lo for a protocol as asked (getsockname
 * says so); once locked its filter stays, for whoever holds it: neither detached, replaced
 * nor unlocked. */
START_TEST(test_packet_socket)
{
	struct sock_filter accept = BPF_STMT(BPF_RET | BPF_K, 0xffff);
	struct sock_fprog prog = {.len = 1, .filter = &accept};
	struct sockaddr_ll sll;
	socklen_t sl = sizeof(sll);
	unsigned lo = if_nametoindex("lo");
	int fd = priv_ops_packet_socket(SOCK_RAW), e = errno, dummy = 0;

	ck_assert_uint_gt(lo, 0);
	if (fd < 0) {
		ck_assert_int_eq(e, EPERM);
		printf("test_packet_socket: skipped: packet sockets need CAP_NET_RAW (EPERM)\n");
		return;
	}
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(priv_ops_attach_filter(fd, &prog), 0);
	ck_assert_int_eq(priv_ops_packet_bind(fd, lo, ETH_P_ALL), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sll, &sl), 0);
	ck_assert_int_eq(sll.sll_ifindex, (int)lo);
	ck_assert_uint_eq(sll.sll_protocol, htons(ETH_P_ALL));
	/* Where it is bound: libpcap's two binds match, any other does not. */
	sll = (struct sockaddr_ll){.sll_family = AF_PACKET, .sll_ifindex = (int)lo};
	ck_assert_int_eq(priv_ops_packet_bound(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	sll.sll_protocol = htons(ETH_P_ALL);
	ck_assert_int_eq(priv_ops_packet_bound(fd, (struct sockaddr *)&sll, sizeof(sll)), 1);
	sll.sll_protocol = htons(ETH_P_IP);
	ck_assert_int_eq(priv_ops_packet_bound(fd, (struct sockaddr *)&sll, sizeof(sll)), -1);
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = 0;
	ck_assert_int_eq(priv_ops_packet_bound(fd, (struct sockaddr *)&sll, sizeof(sll)), -1);
	ck_assert_int_eq(priv_ops_packet_bound(fd, (struct sockaddr *)&sll, sizeof(sll) - 8), -1);
	ck_assert_int_eq(priv_ops_packet_bound(STDIN_FILENO, (struct sockaddr *)&sll,
					       sizeof(sll)), -1);
	ck_assert_int_eq(priv_ops_lock_filter(fd), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &dummy, sizeof(dummy)), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(priv_ops_attach_filter(fd, &prog), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &dummy, sizeof(dummy)), -1);
	ck_assert_int_eq(errno, EPERM);
	close(fd);
	/* An interface that is not there. */
	fd = priv_ops_packet_socket(SOCK_DGRAM);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(priv_ops_packet_bind(fd, 0x7ffffff0, 0), -1);
	ck_assert_int_eq(errno, ENODEV);
	close(fd);
}
END_TEST

/* A filter the kernel cannot take is refused, on any socket. */
START_TEST(test_attach_filter)
{
	struct sock_filter accept = BPF_STMT(BPF_RET | BPF_K, 0xffff);
	struct sock_fprog ok = {.len = 1, .filter = &accept}, empty = {.len = 0, .filter = &accept};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(priv_ops_attach_filter(fd, &ok), 0);
	ck_assert_int_eq(priv_ops_attach_filter(fd, &empty), -1);
	ck_assert_int_eq(errno, EINVAL);
	close(fd);
}
END_TEST

/* The owner event (a software event: no tracepoint id needed) opens on CPU 0 as root; the
 * tracepoint's events need its id first; no other kind. */
START_TEST(test_perf_open)
{
	int fd;

	ck_assert_int_eq(priv_ops_perf_open(0, PRIV_PERF_WAKER + 1, 0), -1);
	ck_assert_int_eq(errno, EINVAL);
	priv_ops_tracepoint(0);
	ck_assert_int_eq(priv_ops_perf_open(0, PRIV_PERF_DISK, 0), -1);
	ck_assert_int_eq(errno, ENOENT);
	if (!root("test_perf_open", "a perf event on a CPU needs CAP_PERFMON or root"))
		return;
	fd = priv_ops_perf_open(0, PRIV_PERF_OWNER, 0);
	ck_assert_msg(fd >= 0, "owner event on CPU 0: %s", strerror(errno));
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
}
END_TEST

START_TEST(test_input_name)
{
	static const struct {
		const char *name;
		bool ok;
	} names[] = {{"event0", true}, {"event-kbd.1_x", true}, {"event", true},
		     {"mouse0", false}, {"event0/..", false}, {"event 0", false},
		     {"", false}, {"Event0", false}};
	char buf[PRIV_INPUT_NAME];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		memset(buf, 0, sizeof(buf));
		strcpy(buf, names[i].name);
		ck_assert_msg(priv_ops_input_name_ok(buf, sizeof(buf)) == names[i].ok, "%s",
			      names[i].name);
	}
	memset(buf, 0, sizeof(buf));
	strcpy(buf, "event0");
	buf[10] = 'x'; /* something hidden after the NUL */
	ck_assert(!priv_ops_input_name_ok(buf, sizeof(buf)));
	memset(buf, 'e', sizeof(buf)); /* no NUL */
	ck_assert(!priv_ops_input_name_ok(buf, sizeof(buf)));
}
END_TEST

/* Input nodes: a FIFO (opened read and write) and a single-link file root owns are opened;
 * a symlink, a second link, another driver's character device are refused with EACCES and
 * the reason. */
START_TEST(test_input_open)
{
	char path[128], why[160] = "";
	int fd;

	ck_assert_int_eq(priv_ops_input_open(dir, "mouse0", why), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(priv_ops_input_open(dir, "event9", why), -1);
	ck_assert_int_eq(errno, ENOENT);
	if (!root("test_input_open", "only nodes root owns are opened"))
		return;
	snprintf(path, sizeof(path), "%s/event0", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	fd = priv_ops_input_open(dir, "event0", why);
	ck_assert_msg(fd >= 0, "FIFO: %s", strerror(errno));
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	close(fd);
	snprintf(path, sizeof(path), "%s/event1", dir);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	fd = priv_ops_input_open(dir, "event1", why);
	ck_assert_msg(fd >= 0, "file: %s", strerror(errno));
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	{
		char link2[128];

		snprintf(link2, sizeof(link2), "%s/event2", dir);
		ck_assert_int_eq(link(path, link2), 0); /* event1 and event2: two links */
		ck_assert_int_eq(priv_ops_input_open(dir, "event2", why), -1);
		ck_assert_int_eq(errno, EACCES);
	}
	snprintf(path, sizeof(path), "%s/event3", dir);
	ck_assert_int_eq(symlink("/dev/null", path), 0);
	ck_assert_int_eq(priv_ops_input_open(dir, "event3", why), -1);
	ck_assert_int_eq(errno, EACCES);
	snprintf(path, sizeof(path), "%s/event4", dir);
	ck_assert_int_eq(mknod(path, S_IFCHR | 0600, makedev(1, 3)), 0); /* /dev/null's */
	why[0] = '\0';
	ck_assert_int_eq(priv_ops_input_open(dir, "event4", why), -1);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_ptr_nonnull(strstr(why, "event4: not an input device (major 13)"));
}
END_TEST

/* A relay file, read-only and never through a symlink; ENOENT where there is none. */
START_TEST(test_relay_open)
{
	char path[160];
	int fd;

	snprintf(path, sizeof(path), "%s/block", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/block/loop7", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/block/loop7/trace0", dir);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	fd = priv_ops_relay_open(dir, "loop7", 0);
	ck_assert_msg(fd >= 0, "%s", strerror(errno));
	ck_assert_int_eq(fcntl(fd, F_GETFL) & (O_ACCMODE | O_NONBLOCK), O_RDONLY | O_NONBLOCK);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
	snprintf(path, sizeof(path), "%s/block/loop7/trace1", dir);
	ck_assert_int_eq(symlink("trace0", path), 0);
	ck_assert_int_eq(priv_ops_relay_open(dir, "loop7", 1), -1);
	ck_assert_int_eq(errno, ELOOP);
	ck_assert_int_eq(priv_ops_relay_open(dir, "loop7", 2), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* The state file of blktraces: taken in the runtime directory, removed when released with
 * nothing listed; a crashed instance's file is torn down (nothing left there) and removed. */
START_TEST(test_blktrace_state)
{
	char *state = xasprintf("%s/%s", dir, PRIV_BLKTRACE_STATE);
	struct stat st;
	FILE *f;
	char *log;

	priv_ops_blktrace_take(dir);
	ck_assert_int_eq(stat(state, &st), 0);
	priv_ops_blktrace_release();
	ck_assert_int_eq(stat(state, &st), -1);
	f = fopen(state, "we");
	ck_assert_ptr_nonnull(f);
	fputs("# left by a crash\n259:99 nosuchdisk9\n", f);
	ck_assert_int_eq(fclose(f), 0);
	log_open(true, 1); /* what it found is said at LOG_INFO */
	tu_capture_begin();
	priv_ops_blktrace_cleanup(dir);
	log = tu_capture_end();
	ck_assert_int_eq(stat(state, &st), -1);
	ck_assert_ptr_nonnull(strstr(log, "block/nosuchdisk9: listed in"));
	free(log);
	free(state);
}
END_TEST

START_TEST(test_rundir)
{
	char *d;

	setenv("RUNTIME_DIRECTORY", "/run/a:/run/b", 1);
	d = priv_ops_rundir();
	ck_assert_str_eq(d, "/run/a");
	free(d);
	setenv("RUNTIME_DIRECTORY", "relative", 1);
	d = priv_ops_rundir();
	ck_assert_str_eq(d, "/run/entropyd");
	free(d);
	unsetenv("RUNTIME_DIRECTORY");
	d = priv_ops_rundir();
	ck_assert_str_eq(d, "/run/entropyd");
	free(d);
}
END_TEST

/* A socket at path, left there as a crashed listener leaves it (listen: keep it answering). */
static int unix_socket(const char *path, bool listen_on)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert(strlcopy(sa.sun_path, path, sizeof(sa.sun_path)));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	if (listen_on) {
		ck_assert_int_eq(listen(fd, 1), 0);
		return fd;
	}
	close(fd);
	return -1;
}

/* The control socket is removed once no one answers on it, only if root owns it, and only if
 * it is a socket. */
START_TEST(test_remove_socket)
{
	char *stale = xasprintf("%s/stale", dir), *live = xasprintf("%s/live", dir);
	char *other = xasprintf("%s/other", dir), *file = xasprintf("%s/file", dir);
	struct stat st;
	int fd;

	if (!root("test_remove_socket", "only a socket root owns is removed")) {
		free(stale), free(live), free(other), free(file);
		return;
	}
	unix_socket(stale, false);
	fd = unix_socket(live, true);
	unix_socket(other, false);
	ck_assert_int_eq(lchown(other, 65534, 65534), 0);
	close(open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	priv_ops_remove_socket(stale);
	priv_ops_remove_socket(live);
	priv_ops_remove_socket(other);
	priv_ops_remove_socket(file);
	priv_ops_remove_socket(NULL);
	ck_assert_int_eq(lstat(stale, &st), -1);
	ck_assert_int_eq(lstat(live, &st), 0);
	ck_assert_int_eq(lstat(other, &st), 0);
	ck_assert_int_eq(lstat(file, &st), 0);
	close(fd);
	free(stale), free(live), free(other), free(file);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("priv_ops");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_random);
	tcase_add_test(tc, test_packet_socket);
	tcase_add_test(tc, test_attach_filter);
	tcase_add_test(tc, test_perf_open);
	tcase_add_test(tc, test_input_name);
	tcase_add_test(tc, test_input_open);
	tcase_add_test(tc, test_relay_open);
	tcase_add_test(tc, test_blktrace_state);
	tcase_add_test(tc, test_rundir);
	tcase_add_test(tc, test_remove_socket);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
