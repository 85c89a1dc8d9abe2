/* util: allocation that never returns NULL, clocks, small string helpers. */
#include "autoconf.h"

#include "util.h"

#include <errno.h>
#include <linux/netlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static void __attribute__((noreturn)) out_of_memory(void)
{
	static const char msg[] = "entropyd: out of memory\n";
	/* Not through the logger: it may need memory itself. */
	if (fwrite(msg, 1, sizeof(msg) - 1, stderr) == 0)
		abort();
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p = reallocarray(ptr, nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		out_of_memory();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		out_of_memory();
	va_end(ap);
	return s;
}

void util_wipe(void *p, size_t n)
{
	explicit_bzero(p, n);
}

uint64_t util_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t util_mono_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

bool strlcopy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);

	if (size == 0)
		return n == 0;
	if (n >= size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
		return false;
	}
	memcpy(dst, src, n + 1);
	return true;
}

static bool is_printable(unsigned char ch)
{
	return ch >= 0x20 && ch < 0x7f;
}

bool util_printable(char *dst, size_t size, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (size == 0)
		return !*src;
	for (; *src; src++) {
		unsigned char ch = (unsigned char)*src;
		size_t need = is_printable(ch) ? 1 : 4;

		if (o + need >= size) {
			dst[o] = '\0';
			return false;
		}
		if (need == 1) {
			dst[o++] = (char)ch;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[ch >> 4];
			dst[o++] = hex[ch & 15];
		}
	}
	dst[o] = '\0';
	return true;
}

char *util_printable_dup(const char *src)
{
	size_t size = strlen(src) * 4 + 1;
	char *dst = xmalloc(size);

	util_printable(dst, size, src);
	return dst;
}

ssize_t util_send_with_fd(int sock, void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = buf, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL);
}

const char *util_plural(unsigned long long n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#define ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                       \
	do {                                                                           \
		v0 += v1; v1 = ROTL64(v1, 13); v1 ^= v0; v0 = ROTL64(v0, 32);          \
		v2 += v3; v3 = ROTL64(v3, 16); v3 ^= v2;                               \
		v0 += v3; v3 = ROTL64(v3, 21); v3 ^= v0;                               \
		v2 += v1; v1 = ROTL64(v1, 17); v1 ^= v2; v2 = ROTL64(v2, 32);          \
	} while (0)

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t util_siphash24(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *in = data;
	uint64_t k0 = le64(key), k1 = le64(key + 8), m, b = (uint64_t)len << 56;
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	size_t left = len & 7;

	for (const uint8_t *end = in + (len - left); in != end; in += 8) {
		m = le64(in);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t i = 0; i < left; i++)
		b |= (uint64_t)in[i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The errors the system calls we make can give (those a message names), plus the common
 * ones of the others. */
#define ERRNO_NAMES(X)                                                                         \
	X(EPERM) X(ENOENT) X(ESRCH) X(EINTR) X(EIO) X(ENXIO) X(E2BIG) X(ENOEXEC) X(EBADF)      \
	X(ECHILD) X(EAGAIN) X(ENOMEM) X(EACCES) X(EFAULT) X(EBUSY) X(EEXIST) X(EXDEV)          \
	X(ENODEV) X(ENOTDIR) X(EISDIR) X(EINVAL) X(ENFILE) X(EMFILE) X(ENOTTY) X(EFBIG)        \
	X(ENOSPC) X(ESPIPE) X(EROFS) X(EMLINK) X(EPIPE) X(ERANGE) X(EDEADLK) X(ENAMETOOLONG)   \
	X(ENOSYS) X(ENOTEMPTY) X(ELOOP) X(ENODATA) X(ETIME) X(EOVERFLOW) X(EBADFD)             \
	X(ENOTSOCK) X(EDESTADDRREQ) X(EMSGSIZE) X(EPROTOTYPE) X(ENOPROTOOPT)                   \
	X(EPROTONOSUPPORT) X(EOPNOTSUPP) X(EAFNOSUPPORT) X(EADDRINUSE) X(EADDRNOTAVAIL)        \
	X(ENETDOWN) X(ENETUNREACH) X(ECONNABORTED) X(ECONNRESET) X(ENOBUFS) X(EISCONN)         \
	X(ENOTCONN) X(ETIMEDOUT) X(ECONNREFUSED) X(EHOSTUNREACH) X(EALREADY) X(EINPROGRESS)    \
	X(ESTALE) X(EDQUOT) X(ECANCELED) X(EOWNERDEAD) X(ENOTRECOVERABLE) X(ENOMEDIUM)

const char *util_errno_name(int e)
{
	switch (e) {
#define ERRNO_CASE(name)                                                                       \
	case name:                                                                             \
		return #name;
		ERRNO_NAMES(ERRNO_CASE)
#undef ERRNO_CASE
	default:
		return NULL;
	}
}

int util_netlink_listen(int fd, unsigned group)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};

	if (connect(fd, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -1;
	return setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group));
}
