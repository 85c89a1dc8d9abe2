/* util: allocation that never returns NULL, clocks, small string helpers. */
#ifndef ENTROPYD_UTIL_H
#define ENTROPYD_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* entropyd's exit statuses (entropyd(8), EXIT STATUS), shared by both of its processes. */
enum {
	EXIT_OK = 0,
	EXIT_CONFIG = 1,  /* the configuration is invalid */
	EXIT_USAGE = 2,   /* bad command line */
	EXIT_STARTUP = 3, /* could not start: sink, permissions, event loop */
	EXIT_LOST = 4,    /* the other process (privileged or collector) went */
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NS_PER_SEC 1000000000ULL

#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* Allocation failures are fatal: a daemon that cannot allocate a few bytes cannot go on. */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);

/* Clear memory that held raw input or timing data; the compiler may not elide it. */
void util_wipe(void *p, size_t n);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t util_mono_ns(void);
/* CLOCK_MONOTONIC_COARSE: a few ns to read, a tick (1-10 ms) fine. */
uint64_t util_mono_coarse_ns(void);

/* Copy at most size-1 bytes and terminate; returns false if src was truncated. */
bool strlcopy(char *dst, const char *src, size_t size);

/* The noun that goes with a count: one for 1, many for any other ("1 batch", "0 batches").
 * Every count shown or logged with its noun uses it. */
const char *util_plural(unsigned long long n, const char *one, const char *many);

/* Names from outside (interfaces, devices, disks) may hold any byte, terminal escapes too:
 * shown anywhere, every byte that is not printable ASCII becomes \xHH. Writes at most
 * size-1 bytes and never splits an escape; returns false if src did not fit. */
bool util_printable(char *dst, size_t size, const char *src);
/* The same, allocated. */
char *util_printable_dup(const char *src);

/* The symbolic name of an errno value ("EPERM"), or NULL for one it does not know: ours,
 * not glibc's strerrorname_np(), which musl and glibc before 2.32 lack. */
const char *util_errno_name(int e);

/* One message of len bytes on sock, with descriptor fd attached (SCM_RIGHTS) if fd >= 0;
 * no SIGPIPE. sendmsg(2)'s result. */
ssize_t util_send_with_fd(int sock, void *buf, size_t len, int fd);

/* Netlink socket fd (of the kernel's uevents, or rtnetlink) in multicast group `group` (1
 * or more, as the kernel numbers them: 1 is the bit 1 of bind()'s nl_groups), without
 * bind(), which the collector may not make: connect() to the kernel gives it its port (the
 * kernel's messages skip a socket without one), NETLINK_ADD_MEMBERSHIP the group. 0, or -1
 * with errno. */
int util_netlink_listen(int fd, unsigned group);

/* SipHash-2-4: a keyed pseudo-random function (Aumasson and Bernstein); the output tells
 * nothing useful about the key. */
uint64_t util_siphash24(const uint8_t key[16], const void *data, size_t len);

#endif
