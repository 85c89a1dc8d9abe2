/* priv_socket: libpcap's socket() and bind(), answered by the privileged process.
 *
 * libpcap makes its packet socket itself, inside pcap_activate, with socket(AF_PACKET,
 * SOCK_RAW, 0), and has no way to be given one. Defined in the executable, this socket()
 * is the one libpcap's calls resolve to (the dynamic linker looks in the executable first),
 * so while net.c's own pcap_activate runs (priv_capture_begin/_end), an AF_PACKET
 * socket comes from the privileged process over its socketpair; every other call goes
 * straight to the kernel. The socket comes bound to its interface, and the collector may
 * not bind (priv_sandbox.c): libpcap's binds of it, where it is bound already, are answered
 * here (priv_bind()). Linked into entropyd only: entropyctl and the tests keep libc's. */
#include "autoconf.h"

#include <sys/socket.h>

#include "priv.h"

int socket(int domain, int type, int protocol)
{
	return priv_packet_socket(domain, type, protocol);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	return priv_bind(fd, addr, len);
}
