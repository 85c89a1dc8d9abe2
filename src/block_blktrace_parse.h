/* block_blktrace_parse: struct blk_io_trace records (the blktrace relay format) in, completion times
 * out. The bytes come from the kernel, but a parser that trusts them is one kernel or
 * reader bug away from a crash, so every record is checked before it is believed. */
#ifndef ENTROPYD_BLOCK_BLKTRACE_PARSE_H
#define ENTROPYD_BLOCK_BLKTRACE_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The record header, as the kernel's uapi <linux/blktrace_api.h> (version 7) lays it out:
 * native byte order, no padding, 48 bytes, followed by pdu_len bytes of payload. */
struct blkt_rec {
	uint32_t magic; /* BLKT_MAGIC | version */
	uint32_t sequence;
	uint64_t time; /* ktime_get(): CLOCK_MONOTONIC, nanoseconds */
	uint64_t sector;
	uint32_t bytes;
	uint32_t action; /* category bits << 16 | action */
	uint32_t pid;
	uint32_t device; /* the kernel's dev_t: major << 20 | minor */
	uint32_t cpu;
	uint16_t error;
	uint16_t pdu_len;
};

#define BLKT_REC_SIZE 48
#define BLKT_MAGIC 0x65617400u
#define BLKT_MAGIC_MASK 0xffffff00u
#define BLKT_VERSION 0x07u

/* Actions and categories this parser needs (blktrace_api.h names in comments). */
#define BLKT_TA_COMPLETE 8u          /* __BLK_TA_COMPLETE */
#define BLKT_TA_CGROUP (1u << 8)     /* __BLK_TA_CGROUP: a cgroup id leads the pdu */
#define BLKT_TC_COMPLETE (1u << 7)   /* BLK_TC_COMPLETE */
#define BLKT_TC_NOTIFY (1u << 10)    /* BLK_TC_NOTIFY */
#define BLKT_TC_SHIFT 16
#define BLKT_TA_COMPLETE_FULL (BLKT_TA_COMPLETE | (BLKT_TC_COMPLETE << BLKT_TC_SHIFT))

/* The longest pdu believed. The kernel's are a cgroup id (8 bytes), a remap (16), a process
 * name, or a message of at most 1 KiB; a header claiming more is taken for garbage. */
#define BLKT_PDU_MAX 4096

struct blkt_parser {
	/* Set by the reader when the trace's mask is completions only: then every record that
	 * is not a notify is a completion, even one read before the kernel wrote its action. */
	bool completions_only;
	/* A partial header waiting for its rest. */
	size_t ncarry;
	unsigned char carry[BLKT_REC_SIZE];
	/* Payload bytes of the current record still to be skipped. */
	size_t skip;
	/* Counters; nothing else about the records is kept. */
	uint64_t records;     /* well-formed records */
	uint64_t completions; /* ... of which completions, each handed to the callback */
	uint64_t notify;      /* ... notify records (process names, timestamps, messages) */
	uint64_t other;       /* ... other actions (none with a completions-only mask) */
	uint64_t half;        /* ... read half-written: magic set, action not yet (see below) */
	uint64_t half_untimed; /* ... of which counted as completions, without a time */
	uint64_t bad_version; /* headers with the right magic but another version */
	uint64_t garbage;     /* bytes skipped while looking for the next valid header */
};

/* A completion: the kernel's dev_t of the record and its time (CLOCK_MONOTONIC ns); or
 * BLKT_NO_TIME for both, a completion whose time (and device) were not yet written. */
#define BLKT_NO_TIME 0
typedef void blkt_sample_fn(void *ctx, uint32_t device, uint64_t t_ns);

void blkt_parser_init(struct blkt_parser *p);

/* Feed the next len bytes of one relay file's stream (one parser per file: each is its own
 * stream). Whole records are parsed at once; a partial one is kept until the rest arrives.
 * After bytes that are not a valid header, the parser looks for the next one byte by byte.
 * Returns the number of completions handed to fn.
 *
 * read() of a relay file returns the current sub-buffer up to what the kernel has reserved,
 * so the last record may be one it is still writing: magic, sequence and time come first,
 * the action (0 in a fresh buffer) later. Such a record is read once and never again. With
 * completions_only it is counted as the completion it almost always is, with BLKT_NO_TIME
 * as device and time (the relay file says which device): its time is not used, since a
 * notify record being written looks the same. Without completions_only it is counted in
 * half and dropped. */
size_t blkt_parse(struct blkt_parser *p, const void *buf, size_t len, blkt_sample_fn *fn,
		  void *ctx);

/* Decode one header from 48 bytes; true if its magic, version and pdu_len are valid. */
bool blkt_decode(const unsigned char *b, struct blkt_rec *r);

/* Encode a header (for tests and tools that synthesise streams). */
void blkt_encode(const struct blkt_rec *r, unsigned char *b);

#endif
