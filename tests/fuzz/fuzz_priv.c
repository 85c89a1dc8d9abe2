/* fuzz_priv: the privileged process's reading of the collector's messages (priv_dispatch.c),
 * as a compromised collector could send them. The input is cut into messages (a length byte and
 * that many bytes after it, scaled to reach past the largest request), sent over a
 * SOCK_SEQPACKET pair, and the real loop (priv_serve) answers them until the end or a
 * message that breaks the protocol. The configuration disables every class, so nothing
 * privileged can succeed (a well-formed request for what it does not allow gets EACCES);
 * /dev/random is not open, so ADD_ENTROPY fails with EBADF. Properties: every reply is one
 * whole reply of the request's type, and no reply carries a descriptor. */
#include "autoconf.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "fuzz.h"
#include "log.h"
#include "priv_serve.h"
#include "priv_wire.h"

#define MAX_MESSAGES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool opened;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct priv_reply rep;
	struct config *cfg;
	int sv[2], sent = 0;
	size_t at = 0;

	if (!opened) {
		log_open(true, 0);
		opened = true;
	}
	FUZZ_ASSERT(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	while (at < size && sent < MAX_MESSAGES) {
		/* 0..255 scaled to 0..~1000 bytes: every request size, and beyond. */
		size_t len = (size_t)data[at++] * 4;

		if (len > size - at)
			len = size - at;
		if (send(sv[1], data + at, len, MSG_DONTWAIT) < 0)
			break;
		at += len;
		sent++;
	}
	shutdown(sv[1], SHUT_WR);
	cfg = config_defaults();
	for (int c = 0; c < CLASS_COUNT; c++)
		cfg->policy[c].rule.mode = MODE_DISABLED;
	(void)priv_serve(sv[0], cfg, "/nonexistent/entropyd.conf", -1, 0);
	for (;;) {
		struct iovec iov = {.iov_base = &rep, .iov_len = sizeof(rep)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		ssize_t n = recvmsg(sv[1], &mh, MSG_DONTWAIT);

		if (n <= 0)
			break;
		FUZZ_ASSERT(n == (ssize_t)sizeof(rep) && rep.h.version == PRIV_VERSION &&
			    rep.h.size == sizeof(rep) && rep.h.type >= 1 &&
			    rep.h.type <= PRIV_TYPE_MAX);
		FUZZ_ASSERT(mh.msg_controllen == 0);
	}
	close(sv[1]);
	return 0;
}
