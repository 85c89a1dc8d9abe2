/* priv: the collector's side of the privileged process's protocol (see priv.c).
 *
 * The call sites are the same whether or not a privileged process exists: without one (unit
 * tests, a process that never called priv_start, priv_start.h) each priv_ call does the
 * privileged step itself; after priv_start, in the collector, it asks the privileged process
 * over a socketpair and gets back an errno and, where one was asked for, a descriptor. */
#ifndef ENTROPYD_PRIV_H
#define ENTROPYD_PRIV_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#include "priv_wire.h"

/* Is a privileged process answering for this one (the collector after priv_start)? */
bool priv_active(void);
/* Did the privileged process refuse the last request because the configuration it read
 * does not allow it (EACCES: the file changed since this process read it)? */
bool priv_refused(void);
/* What to say then, after the reason. */
#define PRIV_REFUSED_HINT                                                                  \
	"refused by entropyd's privileged process, whose configuration does not allow it (was " \
	"the file changed since the last reload? reload again)"
/* The daemon's main process: the privileged one where there is one (what the service
 * manager and signals know), else this one. */
pid_t priv_main_pid(void);

/* In the collector, after the fork (priv_start.c): fd is its end of the socketpair, pid the
 * privileged process. */
void priv_connect(int fd, pid_t pid);
/* Exit (status EXIT_LOST) if the privileged process is gone already. */
void priv_check_peer(void);
/* Exit (status EXIT_LOST) as soon as the privileged process goes. */
void priv_watch(struct event_base *base);
/* The collector is done with the privileged process: it sees the end and exits too. */
void priv_close(void);

/* RNDADDENTROPY of len bytes (at most PRIV_ENTROPY_BYTES) crediting bits on fd (ignored in
 * the collector). 0 with *credited the bits the kernel was given (the privileged process
 * may clip them to its ceiling); -1 with errno. */
int priv_add_entropy(int fd, const uint8_t *data, size_t len, int bits, int *credited);
/* RNDRESEEDCRNG on fd (ignored in the collector). 0, or -1 with errno. */
int priv_reseed(int fd);

/* A perf event descriptor (close-on-exec), or -1 with errno. */
int priv_perf_open(unsigned cpu, enum priv_perf what, unsigned flags);

/* BLKTRACESETUP (completions only) and BLKTRACESTART on whole disk NAME, major:minor.
 * 0 with the relay directory's name in trace_name (PRIV_DISK_NAME bytes); else an errno,
 * with *stage saying what failed: 0 opening the node, 1 BLKTRACESETUP, 2 BLKTRACESTART
 * (then nothing is left on the disk). */
int priv_blktrace_start(const char *name, unsigned major, unsigned minor, char *trace_name,
			int *stage);
/* BLKTRACESTOP, and BLKTRACETEARDOWN if teardown. 0, or an errno (of opening the node if
 * *opened is false, else of the teardown). */
int priv_blktrace_stop(const char *name, unsigned major, unsigned minor, bool teardown,
		       bool *opened);

/* Input node NAME of directory watch, opened O_RDONLY (a FIFO O_RDWR: see priv_serve.c)
 * with O_NONBLOCK and O_CLOEXEC: by the privileged process, which opens only an input
 * character device (major 13), or a FIFO or a regular file root owns, that is an entry of
 * its own input.watch (no symlink). A descriptor, or -1 with errno (EACCES: refused). */
int priv_input_open(const char *watch, const char *name);

/* The relay file DEBUGFS/block/TRACE/traceCPU of a blktrace started with
 * priv_blktrace_start (TRACE: the name it gave back), O_RDONLY | O_NONBLOCK | O_CLOEXEC:
 * from the privileged process, which finds debugfs itself, where there is one. A
 * descriptor, or -1 with errno (ENOENT: a CPU that is not online). */
int priv_relay_open(const char *debugfs, const char *trace, unsigned cpu);

/* Around our own pcap_activate on interface ifname: socket(AF_PACKET, ...) then comes from
 * the privileged process, bound to that interface (libpcap has no way to be given a socket;
 * see socket() in priv_socket.c). */
void priv_capture_begin(const char *ifname);
void priv_capture_end(void);
/* socket(2), but AF_PACKET from the privileged process between the two above: bound to
 * the interface for every protocol (ETH_P_ALL) under the privileged process's filter,
 * locked (priv_filter.h). */
int priv_packet_socket(int domain, int type, int protocol);
/* bind(2), but a packet socket the privileged process handed over, asked to bind where it
 * is bound already (its interface, and protocol 0 or the one it has: libpcap's two binds),
 * is answered here: 0, what its ring did not take (what came before the ring was set up)
 * dropped. Any other bind goes to the kernel, whose answer in the collector is EPERM (its
 * system call filter, priv_sandbox.c). */
int priv_bind(int fd, const struct sockaddr *addr, socklen_t len);
/* The socket filter of packet socket fd on interface ifindex (priv_filter.h), keeping the
 * share keep (priv_filter_keep()): the privileged process puts it in place on its own copy
 * of the socket, as its configuration captures the interface. 0, or -1 with errno and the
 * reason in err (EPERM: the socket's filter cannot change: a new capture takes a new one). */
int priv_packet_filter(int fd, unsigned ifindex, enum net_direction direction,
		       const char *filter, uint32_t keep, char *err, size_t size);

/* sd_notify, from the main process. text: STATUS's text, or NULL. */
void priv_service_notify(enum priv_notify what, const char *text);

/* Tell the privileged process to re-read the configuration. 0, or -1 with errno. */
int priv_reload(void);

#endif
