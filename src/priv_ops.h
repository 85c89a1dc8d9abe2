/* priv_ops: the privileged steps themselves, every system call that needs privilege (see
 * priv_ops.c): made by the privileged process on a checked message, or through priv.c by a
 * process that has none. */
#ifndef ENTROPYD_PRIV_OPS_H
#define ENTROPYD_PRIV_OPS_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "priv_wire.h"

/* RNDADDENTROPY of len bytes (at most PRIV_ENTROPY_BYTES) crediting bits, on fd
 * (/dev/random). 0, or -1 with errno. */
int priv_ops_add_entropy(int fd, const uint8_t *data, size_t len, int bits);
/* RNDRESEEDCRNG on fd (/dev/random). 0, or -1 with errno. */
int priv_ops_reseed(int fd);

/* The block tracepoint's id, read by the block driver from tracefs, which is root's alone
 * (so before the fork): what PRIV_PERF_DISK and PRIV_PERF_WAKER events open. */
void priv_ops_tracepoint(unsigned id);
/* The perf event `what` (enum priv_perf) on cpu; flags: PRIV_PERF_LOST. A descriptor
 * (close-on-exec), or -1 with errno (ENOENT: no tracepoint id yet). */
int priv_ops_perf_open(unsigned cpu, unsigned what, unsigned flags);

#define PRIV_INPUT_MAJOR 13 /* the kernel's input subsystem (evdev nodes) */
/* An input node's name: "event" then [A-Za-z0-9._-], NUL-terminated within size, zeros
 * after. */
bool priv_ops_input_name_ok(const char *s, size_t size);
/* Open input node name of directory watch as priv_input_open says (priv.h); why (160
 * bytes, or NULL) gets the reason of a refusal (EACCES). */
int priv_ops_input_open(const char *watch, const char *name, char *why);

/* The state file, in the runtime directory, that lists the disks this daemon has a blktrace
 * on; what a crashed instance left in it is torn down by the next one. */
#define PRIV_BLKTRACE_STATE "blktrace.state"
/* The runtime directory: systemd's RuntimeDirectory= (the first, if it names several), else
 * /run/entropyd. Freed by the caller. */
char *priv_ops_rundir(void);
/* BLKTRACESETUP (completions only) and BLKTRACESTART on whole disk name, major:minor, listed
 * in the state file first. 0 with the relay directory's name in trace_name (PRIV_DISK_NAME
 * bytes); else an errno, with *stage: 0 opening the node, 1 BLKTRACESETUP, 2 BLKTRACESTART
 * (then nothing is left on the disk). */
int priv_ops_blktrace_start(const char *name, unsigned major, unsigned minor,
			      char *trace_name, int *stage);
/* BLKTRACESTOP, and BLKTRACETEARDOWN if teardown (then off the state file). 0, or an errno
 * (of opening the node if *opened is false, else of the teardown). */
int priv_ops_blktrace_stop(const char *name, unsigned major, unsigned minor, bool teardown,
			     bool *opened);
/* The state file is kept by the process that makes the steps above, taken at its first
 * trace (or now, in rundir; NULL: priv_ops_rundir()): what it lists is torn down first. Without
 * one tracing still works, but is not crash-safe (and says so). */
void priv_ops_blktrace_take(const char *rundir);
/* Release it (removed if it lists nothing) once this process's traces are torn down. */
void priv_ops_blktrace_release(void);
/* For a daemon that does not trace: tear down what a crashed instance left listed in
 * rundir's state file (unless a live instance holds it), and remove the file. */
void priv_ops_blktrace_cleanup(const char *rundir);

/* The relay file DEBUGFS/block/TRACE/traceCPU of a trace started above, read-only, not
 * followed if a symlink; debugfs NULL: the first debugfs mounted (ENOENT if none). A
 * descriptor, or -1 with errno. */
int priv_ops_relay_open(const char *debugfs, const char *trace, unsigned cpu);

/* socket(AF_PACKET, type | SOCK_CLOEXEC, 0): protocol 0, so nothing arrives yet. */
int priv_ops_packet_socket(int type);
/* Bind packet socket fd to interface ifindex (0: every interface) for protocol (host order;
 * 0: none, so that nothing arrives; ETH_P_ALL: every one). 0, or -1 with errno. */
int priv_ops_packet_bind(int fd, unsigned ifindex, uint16_t protocol);
/* Is packet socket fd bound where addr (len bytes, a struct sockaddr_ll) asks: its interface,
 * and protocol 0 or the one it has? 0: yes, for protocol 0; 1: yes, for its protocol; -1:
 * no (not a packet socket, not an address of one, or bound elsewhere). */
int priv_ops_packet_bound(int fd, const struct sockaddr *addr, socklen_t len);
/* Attach socket filter prog to fd (SO_ATTACH_FILTER). 0, or -1 with errno. */
int priv_ops_attach_filter(int fd, const struct sock_fprog *prog);
/* Attach eBPF socket filter program prog (a descriptor) to fd (SO_ATTACH_BPF). 0, or -1
 * with errno. */
int priv_ops_attach_bpf(int fd, int prog);
/* Lock fd's socket filter (SO_LOCK_FILTER): from now on no process, this one included, can
 * remove or replace it. 0, or -1 with errno. */
int priv_ops_lock_filter(int fd);

/* Remove the control socket at path once the collector is gone: the collector, no longer
 * uid 0, cannot remove it from a directory root owns. Only a socket root owns (the collector
 * made it before it left uid 0; as its own user it could make none that root owns) that no
 * one answers on any more, as ctl.c's start removes a stale one. */
void priv_ops_remove_socket(const char *path);

/* sd_notify: text is STATUS's, or NULL. */
void priv_ops_notify(enum priv_notify what, const char *text);

struct bpf_insn;
/* An eBPF socket filter program of n instructions: its descriptor, or -1 with errno and, if
 * the verifier refused it, its account in log (size bytes). */
int priv_ops_bpf_load(const struct bpf_insn *insns, size_t n, char *log, size_t size);
/* A program array of one slot, for socket filters: its descriptor, or -1 with errno. */
int priv_ops_bpf_slots(void);
/* Program prog in slot 0 of slots, in place of the one there, in one step. 0, or -1 with
 * errno. */
int priv_ops_bpf_set(int slots, int prog);

#endif
