/* input: input devices (evdev) as a timing source: one sample per input report. */
#ifndef ENTROPYD_INPUT_H
#define ENTROPYD_INPUT_H

#include <limits.h>
#include <linux/input.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "source.h"

/* The "input" class driver. */
extern const struct source_ops input_source_ops;

/* Does a directory entry name an input node ("event*")? */
bool input_node_name(const char *name);

/* Capability bitmaps as EVIOCGBIT fills them. */
#define EVDEV_LONG_BITS (sizeof(unsigned long) * CHAR_BIT)
#define EVDEV_NLONGS(bits) (((bits) + EVDEV_LONG_BITS - 1) / EVDEV_LONG_BITS)
struct evdev_caps {
	unsigned long ev[EVDEV_NLONGS(EV_CNT)];
	unsigned long key[EVDEV_NLONGS(KEY_CNT)];
	unsigned long rel[EVDEV_NLONGS(REL_CNT)];
	unsigned long abs[EVDEV_NLONGS(ABS_CNT)];
};

void input_bit_set(unsigned long *bits, unsigned bit);
bool input_bit_test(const unsigned long *bits, unsigned bit);

/* "keyboard", "mouse", "touchpad" or "other" (static strings). */
const char *input_classify(const struct evdev_caps *caps);

/* The first glob in `globs` (fnmatch) that matches the node's basename, its full path, the
 * device name or the kind; NULL if none does. Any of the strings may be NULL. */
const char *input_glob_match(const struct strlist *globs, const char *base, const char *path,
			     const char *devname, const char *kind);

/* The frame parser: struct input_event records in, one sample per SYN_REPORT out. Only the
 * type, the SYN code and the timestamp are looked at; key codes and values are not kept. */
struct evdev_parser {
	bool dropping;          /* after SYN_DROPPED, until the next SYN_REPORT */
	uint64_t dropped;       /* reports not sampled because the kernel dropped events */
	uint64_t bad_time;      /* reports not sampled because their timestamp is invalid */
};

typedef void evdev_sample_fn(void *ctx, uint64_t t_ns);

/* Parse the whole records in buf[0..len) and call fn once per sampled report. Returns the
 * bytes consumed, a multiple of sizeof(struct input_event); the caller keeps the rest (a
 * partial record) until more arrives. */
size_t input_parse(struct evdev_parser *p, const void *buf, size_t len, evdev_sample_fn *fn,
		   void *ctx);

#endif
