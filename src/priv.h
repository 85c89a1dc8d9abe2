/* priv: the privileged process and the collector's side of its protocol.
 *
 * The call sites are the same whether or not a privileged process exists: without one
 * (unit tests, a process that never called priv_start) each priv_ call does the privileged
 * step itself; after priv_start, in the collector, it asks the privileged process over a
 * socketpair and gets back an errno and, where one was asked for, a descriptor. */
#ifndef ENTROPYD_PRIV_H
#define ENTROPYD_PRIV_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#include "priv_wire.h"

/* The credit ceiling is a token bucket of bits: it refills at the ceiling's rate (see
 * ceiling_rate in priv.c) and holds at most max(PRIV_DEPTH_S seconds of it,
 * PRIV_DEPTH_MIN bits, the most one batch can carry); it starts with one second's worth, and
 * each rise of the rate (an instance newly counted) adds one second of the rise, as the
 * collector's per-instance caps start full. */
#define PRIV_DEPTH_S 10
#define PRIV_DEPTH_MIN 4096

/* Packet sockets: one per selected interface and PRIV_PACKET_SPARE more at once, then one
 * per selected interface every PRIV_PACKET_EVERY_S seconds; past that, EAGAIN. */
#define PRIV_PACKET_SPARE 2
#define PRIV_PACKET_EVERY_S 10
/* Perf events, per CPU and kind (enum priv_perf): as many as the kind needs on a CPU (one
 * owner, one waker, one disk event per disk the configuration selects) and PRIV_PERF_SPARE
 * more at once, then that many every PRIV_PERF_EVERY_S seconds; past that, EAGAIN. */
#define PRIV_PERF_SPARE 2
#define PRIV_PERF_EVERY_S 10

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

/* Fork. The parent becomes the privileged process: it keeps CAP_SYS_ADMIN and CAP_NET_RAW
 * only, answers the collector's messages and passes signals on to it, until the collector
 * goes; then it returns 1 with the exit status in *status (the collector's own, or
 * EXIT_LOST if it broke the protocol or was killed). The child, the collector, returns 0 with
 * priv_active() true. -1 (logged) if the fork failed. rnd_fd: /dev/random, opened and
 * probed (or -1 in a dry run); the collector does not keep it. cfg: the configuration the
 * privileged process starts from (its own copy after the fork, freed by it; it re-reads
 * config_path on RELOAD). ready_fd: the start-up status pipe (entropyd.c), which only the
 * collector keeps. */
int priv_start(struct config *cfg, const char *config_path, int rnd_fd, int ready_fd,
	       int *status);

/* The collector, once everything that needs root's other powers is done: the bounding set
 * emptied (where CAP_SETPCAP allows), no supplementary groups, the uid and gid of the system
 * user cfg->collector.user (never uid 0: a user that is missing or root's is an error), no
 * capability in any other set, no new privileges, death with the privileged process (set
 * after the change of uid, which clears it); before all that, where it can, a mount
 * namespace whose root is empty and read-only but for the paths it still needs
 * (priv_sandbox_namespaces()), beside the PID namespace priv_start() gave it; Landlock where the
 * kernel has it (nothing written but beneath record_dir, NULL for nowhere; no signal outside
 * itself), then the system call filter. The walls up are logged (priv_sandbox_walls_log()). 0, or
 * -1 (logged). */
int priv_collector_lockdown(const struct config *cfg, const char *config_path);

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
/* socket(2), but AF_PACKET from the privileged process between the two above. */
int priv_packet_socket(int domain, int type, int protocol);
/* The socket filter of packet socket fd on interface ifindex (priv_filter.h), keeping the
 * share keep (priv_filter_keep()): the privileged process sets it on its own copy of the
 * socket, as its configuration captures the interface; without one, this process sets it
 * with direction and filter. 0, or -1 with errno and the reason in err. */
int priv_packet_filter(int fd, unsigned ifindex, enum net_direction direction,
		       const char *filter, uint32_t keep, char *err, size_t size);

/* sd_notify, from the main process. text: STATUS's text, or NULL. */
void priv_service_notify(enum priv_notify what, const char *text);

/* Tell the privileged process to re-read the configuration. 0, or -1 with errno. */
int priv_reload(void);

/* The privileged process's loop on sock, for priv_start and for tests: answers until the
 * peer goes or breaks the protocol, then tears down what it set up. cfg is its own
 * (freed on reload); child, if > 0, is sent the signals and reaped. Returns the exit
 * status. */
int priv_serve(int sock, struct config *cfg, const char *config_path, int rnd_fd, pid_t child);

#endif
