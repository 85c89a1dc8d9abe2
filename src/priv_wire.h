/* priv_wire: the messages between the collector and the privileged process, and nothing
 * else: fixed-size, versioned, one struct per type. The collector writes them (priv.c);
 * the privileged process checks every field before it acts (priv_dispatch.c, whose table
 * gives each type's size). */
#ifndef ENTROPYD_PRIV_WIRE_H
#define ENTROPYD_PRIV_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* The protocol's version: any change to a message's layout or meaning bumps it (both ends
 * are the same binary; the number catches a mismatch, not a negotiation).
 *   1: ADD_ENTROPY, RESEED, PERF_OPEN, BLKTRACE_START, BLKTRACE_STOP, PACKET_SOCKET,
 *      NOTIFY, RELOAD.
 *   2: INPUT_OPEN (the collector, no longer uid 0, cannot open input nodes); PACKET_SOCKET
 *      names the interface (ifindex), which the privileged process binds it to;
 *      RELAY_OPEN (blktrace's relay files are root's, under debugfs).
 *   3: PACKET_FILTER (the socket filter of a packet socket is the privileged process's:
 *      the collector asks for the share kept while sampling).
 *   4: PACKET_SOCKET's socket comes bound to its interface for every protocol, under a
 *      filter locked there (the collector binds it no more). */
#define PRIV_VERSION 4

enum priv_type {
	PRIV_ADD_ENTROPY = 1, /* RNDADDENTROPY: bytes and bits, bounded by the ceiling */
	PRIV_RESEED,          /* RNDRESEEDCRNG */
	PRIV_PERF_OPEN,       /* a perf event of the block tracepoint on one CPU: a descriptor */
	PRIV_BLKTRACE_START,  /* BLKTRACESETUP and BLKTRACESTART on a configured disk */
	PRIV_BLKTRACE_STOP,   /* BLKTRACESTOP (and BLKTRACETEARDOWN) on a disk it started */
	PRIV_PACKET_SOCKET,   /* socket(AF_PACKET, SOCK_RAW or SOCK_DGRAM, 0): a descriptor */
	PRIV_NOTIFY,          /* sd_notify, sent on by the main process */
	PRIV_RELOAD,          /* re-read the configuration (the ceiling, what may be opened) */
	PRIV_INPUT_OPEN,      /* an input node of the watched directory: a descriptor */
	PRIV_RELAY_OPEN,      /* a relay file of a blktrace it started: a descriptor */
	PRIV_PACKET_FILTER,   /* the filter of an interface's packet socket, with a share kept */
	PRIV_TYPE_MAX = PRIV_PACKET_FILTER,
};

/* What PRIV_NOTIFY relays. */
enum priv_notify { PRIV_N_READY, PRIV_N_RELOADING, PRIV_N_STOPPING, PRIV_N_WATCHDOG,
		   PRIV_N_STATUS };

#define PRIV_DISK_NAME 32  /* a disk's name, NUL-terminated */
#define PRIV_STATUS_TEXT 200 /* STATUS= text, NUL-terminated, printable ASCII */
#define PRIV_ENTROPY_BYTES 512 /* POOL_BYTES: one batch */
#define PRIV_INPUT_NAME 64 /* an input node's name in the watched directory */

/* The messages: fixed-size, one struct per type; a message's size is its type's. */
struct priv_hdr {
	uint16_t version; /* PRIV_VERSION */
	uint16_t type;    /* enum priv_type */
	uint32_t size;    /* the whole message's size: the size of its type */
};

struct req_entropy {
	struct priv_hdr h;
	int32_t bits; /* 0 .. 8 * len */
	uint32_t len; /* 0 .. PRIV_ENTROPY_BYTES */
	uint8_t data[PRIV_ENTROPY_BYTES];
};

struct req_perf {
	struct priv_hdr h;
	uint32_t cpu;   /* < the number of CPUs the system can have */
	uint32_t what;  /* enum priv_perf */
	uint32_t flags; /* PRIV_PERF_LOST */
};

struct req_blkt {
	struct priv_hdr h;
	char name[PRIV_DISK_NAME]; /* an entry of /sys/block, NUL-terminated */
	uint32_t major, minor;     /* what its dev file says */
	uint32_t teardown;         /* STOP: 0 or 1; START: 0 */
};

struct req_packet {
	struct priv_hdr h;
	int32_t type;     /* SOCK_RAW or SOCK_DGRAM, no flags */
	int32_t protocol; /* 0, as libpcap asks it */
	uint32_t ifindex; /* the interface, which the configuration must select (> 0) */
};

/* The filter of the packet socket last handed out for ifindex (priv_filter.h): the
 * privileged process's own, with the share `keep` of sampling (UINT32_MAX: every frame). */
struct req_packet_filter {
	struct priv_hdr h;
	uint32_t ifindex;
	uint32_t keep;
};

struct req_notify {
	struct priv_hdr h;
	uint32_t what;                /* enum priv_notify */
	char text[PRIV_STATUS_TEXT];  /* STATUS: printable ASCII; else empty; NUL-terminated */
};

/* An entry of the watched directory (input.watch as the privileged process read it): a
 * name of [A-Za-z0-9._-] starting with "event", NUL-terminated, zeros after. */
struct req_input {
	struct priv_hdr h;
	char name[PRIV_INPUT_NAME];
};

/* The relay file of one CPU of a blktrace the privileged process started: the trace's
 * directory name as BLKTRACE_START returned it (NUL-terminated, zeros after). */
struct req_relay {
	struct priv_hdr h;
	char name[PRIV_DISK_NAME];
	uint32_t cpu; /* < the number of CPUs the system can have */
};

/* RESEED and RELOAD: the header alone. */

union priv_req {
	struct priv_hdr h;
	struct req_entropy entropy;
	struct req_perf perf;
	struct req_blkt blkt;
	struct req_packet packet;
	struct req_packet_filter packet_filter;
	struct req_notify notify;
	struct req_input input;
	struct req_relay relay;
};

/* Every reply: an errno (0: done), a value (ADD_ENTROPY: the bits credited; BLKTRACE_START:
 * the stage that failed; BLKTRACE_STOP: 1 if the node opened), the relay directory's name
 * (BLKTRACE_START), and with PERF_OPEN, PACKET_SOCKET and INPUT_OPEN the descriptor
 * (SCM_RIGHTS). */
struct priv_reply {
	struct priv_hdr h;
	int32_t err;
	int32_t value;
	char name[PRIV_DISK_NAME];
};

/* What PRIV_PERF_OPEN opens on a CPU (see block_tp.c). */
enum priv_perf { PRIV_PERF_OWNER, PRIV_PERF_DISK, PRIV_PERF_WAKER };
#define PRIV_PERF_LOST 1u /* flag: PERF_FORMAT_LOST (Linux >= 6.0) */

#endif
