/* config: /etc/entropyd.conf parsed (libconfig) and validated into plain structs. */
#ifndef ENTROPYD_CONFIG_H
#define ENTROPYD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "source_classes.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define CONFIG_DEFAULT_PATH SYSCONFDIR "/entropyd.conf"

enum feed_mode { FEED_AUTO, FEED_BOOT, FEED_WATERMARK, FEED_ALWAYS };
enum policy_mode { MODE_TRUSTED, MODE_REDUCED, MODE_MIX_ONLY, MODE_DISABLED };
enum block_backend { BACKEND_AUTO, BACKEND_TRACEPOINT, BACKEND_BLKTRACE };
enum net_direction { DIR_IN, DIR_OUT, DIR_BOTH };

const char *config_mode_name_feed(enum feed_mode m);
const char *config_mode_name_policy(enum policy_mode m);

struct strlist {
	char **v;
	size_t n;
};
/* Append a copy of s; free every string and the list (config_settings.c). */
void config_settings_strlist_add(struct strlist *l, const char *s);
void config_settings_strlist_free(struct strlist *l);

/* policy.CLASS.scale where the file gives none. */
#define POLICY_SCALE_DEFAULT 0.25

/* What policy applies to one instance. */
struct policy_rule {
	enum policy_mode mode;
	double scale;               /* weight when mode is reduced: 0 < scale < 1 */
	double cap_bits_per_event;  /* physical cap, bits per event */
	double cap_bits_per_second; /* per instance */
};

/* A per-instance override: only the fields flagged in `set` replace the class rule. */
enum {
	RULE_SET_MODE = 1 << 0,
	RULE_SET_SCALE = 1 << 1,
	RULE_SET_CAP_EVENT = 1 << 2,
	RULE_SET_CAP_SECOND = 1 << 3,
};
struct policy_override {
	char *name; /* instance name, or an fnmatch(3) glob; the first match wins */
	unsigned set;
	struct policy_rule rule;
};

struct class_policy {
	struct policy_rule rule;
	struct policy_override *overrides;
	size_t n_overrides;
};

/* How one interface is captured. */
struct net_capture {
	enum net_direction direction;
	char *filter; /* BPF expression; "" = none */
	int snaplen;
};

/* A per-interface entry of sources.network.instances: like a policy override, the fields
 * flagged in `set` were given, the others are inherited from sources.network. */
enum {
	NET_SET_DIRECTION = 1 << 0,
	NET_SET_FILTER = 1 << 1,
	NET_SET_SNAPLEN = 1 << 2,
};
struct net_override {
	char *name; /* interface name, or an fnmatch(3) glob; the first match wins */
	unsigned set;
	struct net_capture cap; /* complete: what is not given is the class's */
};

struct config {
	char *path; /* the file it came from, or NULL for built-in defaults */

	struct {
		enum feed_mode mode;
		char *device;
		bool reseed;
		int batch_bits;        /* boot/always: flush once this much credit is pending */
		double batch_interval; /* seconds a pending batch may wait at most */
		double mix_interval;   /* seconds between mixes once the CRNG is ready */
		int low_watermark;     /* watermark mode: feed while entropy_avail is below; 0: the
				* kernel's write_wakeup_threshold (feed_watermark) */
		bool boot_allowance;   /* CRNG not ready: what the kernel needs, not the
					* per-second caps, bounds credit (feed_pipeline.c) */
	} feed;

	struct class_policy policy[CLASS_COUNT];

	struct {
		char *watch;
		bool exclude_virtual;
		struct strlist include; /* globs on device name or node; empty = all */
		struct strlist exclude;
		int64_t quantum_ns;
		double estimate_interval; /* seconds of event time between estimated blocks */
		double health_retry;      /* seconds of event time before a re-qualification */
	} input;

	struct {
		enum block_backend backend;
		struct strlist devices;
		int64_t quantum_ns;
		double estimate_interval; /* seconds of event time between estimated blocks */
		double health_retry;      /* seconds of event time before a re-qualification */
	} block;

	struct {
		struct strlist interfaces;
		struct net_capture capture; /* for interfaces no entry of instances matches */
		char *file;
		int64_t quantum_ns;
		double estimate_interval; /* seconds of event time between estimated blocks */
		double health_retry;      /* seconds of event time before a re-qualification */
		int max_events_per_second; /* per interface; the rest are counted as skipped */
		struct net_override *instances;
		size_t n_instances;
	} network;

	struct {
		char *socket;
		char *group;
		double timeout; /* seconds a client may take for a request, or to read a reply */
		double max_hold; /* seconds a connection of a user other than root may stay open */
	} control;

	struct {
		char *dir;      /* per-instance symbol files; "" = off (the default) */
		int64_t max_bytes; /* bound of each file */
	} record;

	struct {
		char *user; /* the collector's system user; its existence is checked at start */
	} collector;
};

/* Every problem found in one file, each "FILE:LINE: KEY: what is wrong; what is allowed";
 * and every notice, "FILE:LINE: notice: KEY: what; ignored", about what the file says to no
 * effect (scale beside a mode other than "reduced"): a file with notices only is valid. */
struct config_errors {
	char **msg;
	size_t n;
	char **note;
	size_t n_note;
};

/* Built-in defaults (what an empty file gives). */
struct config *config_defaults(void);

/* Parse and validate PATH. On any error returns NULL with every error of the file in errs;
 * the notices are in errs either way. */
struct config *config_load(const char *path, struct config_errors *errs);

/* The effective configuration, defaults filled in, in libconfig syntax that config_load
 * accepts again. */
void config_print(const struct config *cfg, FILE *out);

/* The capture settings of interface (or savefile) `name`: those of the first entry of
 * sources.network.instances whose name matches, else sources.network's own. */
const struct net_capture *net_class_capture_config(const struct config *cfg, const char *name);

/* Every key the file accepts, as a full path, one per line; the keys of the elements of a
 * list of instances as, for example, policy.CLASS.instances[].KEY. The man page is checked
 * against this list. */
void config_print_keys(FILE *out);

void config_free(struct config *cfg);
void config_errors_free(struct config_errors *errs);

#endif
