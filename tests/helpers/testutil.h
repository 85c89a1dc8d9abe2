/* testutil: the helpers the Check unit tests share. */
#ifndef ENTROPYD_TESTUTIL_H
#define ENTROPYD_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct event_base;

/* ---- the runner ---- */

/* Runs every test of s (CK_NORMAL) and frees the runner. EXIT_SUCCESS if none failed, else
 * EXIT_FAILURE: what main() returns. The tests run with TMPDIR set to a directory of the
 * run's own (tu_tmpdir()), which is removed afterwards with everything in it, whether the
 * tests passed, failed or were killed: a test makes its files there. */
int tu_run_suite(Suite *s);

/* Where a test makes its temporary files: the run's directory under tu_run_suite(), else
 * TMPDIR, else /tmp. */
const char *tu_tmpdir(void);

/* ---- stderr, files, text ---- */

/* From here to tu_capture_end(), stderr goes to a temporary file. */
void tu_capture_begin(void);

/* Puts stderr back; returns what was written to it since tu_capture_begin() (malloc'd,
 * NUL-terminated). */
char *tu_capture_end(void);

/* What was written into the temporary file f through its descriptor (by this process or a
 * child), up to the file offset: malloc'd, NUL-terminated. Closes f. */
char *tu_read_tmpfile(FILE *f);

/* The whole file at path (malloc'd, NUL-terminated); its length in *n if n is not NULL. */
char *tu_read_file(const char *path, size_t *n);

/* How many times needle occurs in text, overlapping occurrences included. */
size_t tu_count(const char *text, const char *needle);

/* ---- descriptors and privilege ---- */

/* How many descriptors this process has open, from /proc/self/fd; -1 if that cannot be read.
 * For a child, which must not fail a test itself. */
int tu_open_fds(void);

/* The same, failing the test if /proc/self/fd cannot be read. */
int tu_count_fds(void);

/* Whether CAP_SYS_ADMIN is in this thread's effective set. */
bool tu_have_sys_admin(void);

/* ---- seeded random numbers ---- */

/* splitmix64: advances *state and returns the next number. */
uint64_t tu_splitmix64(uint64_t *state);

/* The seed tu_rng_seed() last started the run's generator at, for failure messages:
 * "(seed %#llx)", (unsigned long long)tu_seed. */
extern uint64_t tu_seed;

/* Starts the run's generator (splitmix64) at ENTROPYD_TEST_SEED if that is set, else at
 * default_seed. A failing test prints tu_seed; that value in ENTROPYD_TEST_SEED replays it. */
void tu_rng_seed(uint64_t default_seed);

/* The run's generator: the next number, and one in [0, 1) from its top 53 bits. */
uint64_t tu_rng_next(void);
double tu_rng_unit(void);

/* ---- packets ---- */

/* A 60-byte Ethernet frame into b (64 bytes at least): a UDP datagram (port 9 to 9) over
 * IPv4, its header checksum right, from src_ip (host order) to 10.0.0.2, from the link
 * address 02:00:00:00:00:01. Its length. */
size_t tu_frame_ipv4(uint8_t *b, uint32_t src_ip);

/* A packet socket that sends on the interface ifname (root only: fails the test otherwise). */
int tu_frames_open(const char *ifname);

/* n of those frames out of fd, to the link's broadcast address, from `sources` IPv4 source
 * addresses in turn starting at first_src; fails the test if one is not sent. */
void tu_frames_send(int fd, uint32_t first_src, unsigned sources, unsigned n);

/* ---- network namespaces ---- */

/* Moves the calling test's process into a network namespace of its own, with its loopback
 * up, and a mount namespace where sysfs is that network namespace's (as ip netns exec makes
 * it): the interfaces, captures and mounts the test makes there go with the process, however
 * it ends (Check runs each test in a process of its own). False, with the reason in why,
 * where that cannot be done: not root (CAP_SYS_ADMIN), no namespaces, or the tests run in
 * the runner's own process (CK_FORK=no), which would keep the namespace. */
bool tu_netns_enter(char *why, size_t size);

/* A test's first step where it needs tu_netns_enter(): returns from the test, saying why it
 * skipped, where there is none. */
#define TU_NEED_NETNS()                                                                    \
	do {                                                                               \
		char tu_why_[256];                                                         \
		if (!tu_netns_enter(tu_why_, sizeof(tu_why_))) {                           \
			printf("%s: skipped: %s\n", __func__, tu_why_);                     \
			return;                                                            \
		}                                                                          \
	} while (0)

/* Runs the shell command fmt makes (ip(8), in the test's namespace); fails the test, naming
 * it and its output, unless it exits 0. */
void tu_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- temporary directories ---- */

/* Makes a new directory named by fmt (a template ending in XXXXXX) in dir, a buffer of size
 * bytes; fails the test if the name does not fit or mkdtemp(3) fails. */
void tu_mkdtemp(char *dir, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same for an unchecked fixture, which runs outside any test: on failure it says why on
 * stderr and exits. */
void tu_mkdtemp_or_exit(char *dir, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Removes path and everything below it, following no links. 0, or -1 (with errno) at the
 * first entry that could not be removed. */
int tu_rm_tree(const char *path);

/* ---- loop devices ---- */

struct tu_loop {
	char name[32];  /* "loop7", as in /sys/block */
	char path[48];  /* "/dev/loop7" */
	unsigned major, minor;
	int fd;         /* the device, open read-write; -1: none */
	char file[64];  /* the file made for it in /dev/shm; "" none */
};

/* A loop device on `on` (a file or a block device), or if that is NULL on a new file of
 * `bytes` bytes in /dev/shm (l->file, removed by tu_loop_free); detached by the kernel when
 * its last descriptor closes, however the test ends. False, with the reason in why, where it
 * cannot be made (not root, no loop driver): for an unchecked fixture too, as it never fails
 * the test itself. */
bool tu_loop_new(struct tu_loop *l, const char *on, size_t bytes, char *why, size_t size);

/* Detach it now, close it and remove its file; nothing if it is not attached. */
void tu_loop_free(struct tu_loop *l);

/* blocks reads of 4 KiB from its start that reach the device (O_DIRECT): as many
 * completions it must see. Fails the test if one does not read it all. */
void tu_loop_read(const struct tu_loop *l, int blocks);

/* Holds the lock of the tests that attach and detach loop devices (lib.sh's block_lock:
 * t_block, t_block_nouevent), which take over each other's numbers, until the process ends
 * or tu_block_unlock(); waits up to `seconds`. False, with the reason in why, if it could
 * not be had. */
bool tu_block_lock(unsigned seconds, char *why, size_t size);
void tu_block_unlock(void);

/* ---- configurations ---- */

struct config;
struct config_errors;

/* text as a configuration file of its own in tu_tmpdir(), read by config_load(): the
 * configuration, or NULL with every error in errs. The file's path in *path (malloc'd) if
 * path is not NULL; else the file is removed. */
struct config *tu_config_text(const char *text, struct config_errors *errs, char **path);

/* Every error config_load() finds in text, one a line, each without its "FILE:LINE: "
 * (malloc'd); NULL if there is none. */
char *tu_config_errors(const char *text);

/* The same errors must be want, and there must be some. */
void tu_assert_config_says(const char *text, const char *want);

/* ---- the event loop ---- */

/* One turn of base's loop: returns once something happened, or after 10 ms at most. */
void tu_turn(struct event_base *base);

/* Turns base's loop until cond holds, max_turns times at most (10 ms each when nothing at all
 * happens), then fails the test, naming cond, if it still does not hold. */
#define TU_PUMP_UNTIL(base, max_turns, cond)                                               \
	do {                                                                               \
		for (int tu_turns_ = 0; tu_turns_ < (max_turns) && !(cond); tu_turns_++)   \
			tu_turn(base);                                                     \
		ck_assert_msg((cond), "timed out waiting for: %s", #cond);                 \
	} while (0)

/* ---- the pipeline's instances ---- */

struct inst_info;

/* The instance of class cls named name, as feed_pipeline_info() shows it: true with it in
 * *out, false if there is none. */
bool tu_instance(int cls, const char *name, struct inst_info *out);

/* ---- the privileged process ---- */

struct config;

/* The real privileged loop (priv_serve) in a child, on a socketpair, with cfg (taken: the child
 * serves it, this process frees its copy) and rnd_fd (/dev/random or -1; the configuration's
 * path is one that is not there); this process its collector (priv_connect). The child's pid. */
int tu_privileged_start(struct config *cfg, int rnd_fd);

/* The collector closes its end (priv_close): the privileged process ends, and must exit with
 * EXIT_OK, without a word of a broken protocol. */
void tu_privileged_end(int pid);

/* ---- a source under test ---- */

struct source;
struct source_ops;
struct pool;

/* A source started as the daemon starts it: its own event loop, the real pipeline on a pool
 * of its own, and (if priv_cfg is not NULL) the real privileged process serving priv_cfg,
 * which reads what the collector's cfg says (two copies: each process frees its own). */
struct tu_source {
	struct event_base *base;
	struct config *cfg;
	struct pool *pool;
	struct source *src;
	int privileged; /* its pid; 0: none */
};

/* A configuration for the network source alone (every other class disabled, the network's
 * policy trusted): live on these interfaces, under filter, at most max_eps packets timed a
 * second per interface. */
struct config *tu_net_config(const char *const *ifaces, size_t n, const char *filter,
			     int max_eps);

/* Starts ops on cfg (taken); fails the test if source_start() does. */
void tu_source_start(struct tu_source *t, const struct source_ops *ops, struct config *cfg,
		     struct config *priv_cfg);

/* Stops it, ends the privileged process (which must exit cleanly) and frees all; nothing
 * if it was not started. */
void tu_source_stop(struct tu_source *t);

/* ---- the pool ---- */

/* A pipeline `added` hook that, like the feed, hands the pool on (to nowhere) once it is full,
 * so that later events are carried, not folded in. arg: the struct pool. */
void tu_pool_drain_full(void *arg);

#endif
