/* input: input devices (evdev) as a timing source: one sample per input report.
 *
 * Not a keylogger, by construction: a record's type, its SYN code and its timestamp are the
 * only fields ever looked at. Key codes and values live only in the one read buffer and in a
 * partial record waiting for its rest; both are wiped as soon as they are parsed, and nothing
 * about them reaches a log, a counter or the pipeline.
 *
 * Nodes come and go under the watched directory (inotify). A node that is not an evdev device
 * but a FIFO or a regular file of struct input_event records is read as a record stream: that
 * is how tests and replays feed the daemon. A replay file should be renamed into place once
 * written; it is read to its end as soon as it appears, then closed. */
#include "autoconf.h"

#include "input.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "feed_pipeline.h"
#include "log.h"
#include "priv.h"
#include "util.h"

#define REC_SIZE sizeof(struct input_event)
#define READ_RECORDS 64     /* records per read() */
#define READS_PER_WAKEUP 8  /* batches per callback before other events get a turn */
#define DEFAULT_WATCH "/dev/input"

#define DIR_MASK                                                                          \
	(IN_CREATE | IN_ATTRIB | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF |  \
	 IN_ONLYDIR)
#define PARENT_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_ONLYDIR)

enum node_type { NODE_EVDEV, NODE_FIFO, NODE_FILE };

/* One node: the driver's part of its instance (src_inst.drv). The core keeps the instance's
 * status: open, skipped (disabled or excluded: until a reload or a new node), waiting
 * (could not be opened or was lost: tried again when its attributes change), ended (a file
 * read to its end). */
struct dev {
	struct src_inst *si;
	char *path;
	enum node_type type;
	int fd;
	struct event *ev;
	const char *kind;
	char devname[128]; /* EVIOCGNAME, made printable; empty for streams */
	bool virt;
	bool unopened_row; /* attached only to show why it could not be opened */
	struct evdev_parser parser;
	uint64_t logged_dropped, logged_bad_time;
	size_t ncarry;
	unsigned char carry[REC_SIZE]; /* a partial record waiting for its rest */
};

struct evdev_state {
	struct source *src;
	char *watch; /* the directory being watched, without trailing slashes */
	int ifd;
	struct event *iev;
	int wd;  /* watch on the directory; -1 if none */
	int pwd; /* watch on its parent while the directory does not exist; -1 if none */
	/* The one buffer raw records are read into: a carried partial record plus a batch. */
	unsigned char buf[(READ_RECORDS + 1) * REC_SIZE] __attribute__((aligned(8)));
};

static struct log_ratelimit rl_open = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_lost = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_data = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_notify = LOG_RATELIMIT_INIT;

/* ---- pure parts: node names, classification, globs, the frame parser ---- */

bool input_node_name(const char *name)
{
	return strncmp(name, "event", 5) == 0;
}

void input_bit_set(unsigned long *bits, unsigned bit)
{
	bits[bit / EVDEV_LONG_BITS] |= 1UL << (bit % EVDEV_LONG_BITS);
}

bool input_bit_test(const unsigned long *bits, unsigned bit)
{
	return (bits[bit / EVDEV_LONG_BITS] >> (bit % EVDEV_LONG_BITS)) & 1;
}

static const unsigned short letter_keys[] = {
	KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, KEY_G, KEY_H, KEY_I, KEY_J, KEY_K, KEY_L, KEY_M,
	KEY_N, KEY_O, KEY_P, KEY_Q, KEY_R, KEY_S, KEY_T, KEY_U, KEY_V, KEY_W, KEY_X, KEY_Y, KEY_Z,
};

const char *input_classify(const struct evdev_caps *c)
{
	/* Any letter key makes a keyboard, even alongside pointer axes: "exclude keyboard" must
	 * catch everything that can type text (a gaming mouse's macro node, a combo receiver). */
	if (input_bit_test(c->ev, EV_KEY))
		for (size_t i = 0; i < ARRAY_SIZE(letter_keys); i++)
			if (input_bit_test(c->key, letter_keys[i]))
				return "keyboard";
	if (input_bit_test(c->ev, EV_REL) && input_bit_test(c->rel, REL_X) &&
	    input_bit_test(c->rel, REL_Y))
		return "mouse";
	if (input_bit_test(c->ev, EV_ABS) && input_bit_test(c->abs, ABS_X) &&
	    input_bit_test(c->abs, ABS_Y) && input_bit_test(c->ev, EV_KEY) &&
	    (input_bit_test(c->key, BTN_TOUCH) || input_bit_test(c->key, BTN_TOOL_FINGER)))
		return "touchpad";
	return "other";
}

const char *input_glob_match(const struct strlist *globs, const char *base, const char *path,
			     const char *devname, const char *kind)
{
	const char *subject[] = {base, path, devname, kind};

	for (size_t i = 0; i < globs->n; i++)
		for (size_t j = 0; j < ARRAY_SIZE(subject); j++)
			if (subject[j] && fnmatch(globs->v[i], subject[j], 0) == 0)
				return globs->v[i];
	return NULL;
}

size_t input_parse(struct evdev_parser *p, const void *buf, size_t len, evdev_sample_fn *fn,
		   void *ctx)
{
	const unsigned char *b = buf;
	size_t n = len / REC_SIZE;
	struct input_event ev;

	for (size_t i = 0; i < n; i++) {
		long long sec, usec;

		memcpy(&ev, b + i * REC_SIZE, REC_SIZE);
		if (ev.type != EV_SYN)
			continue;
		if (ev.code == SYN_DROPPED) {
			p->dropping = true;
			continue;
		}
		if (ev.code != SYN_REPORT)
			continue;
		if (p->dropping) {
			/* The report that closes a dropped stretch is not sampled. The evdev
			 * protocol (Documentation/input/event-codes.rst) says to ignore everything
			 * up to and including it, as its frame is partial; and overruns are
			 * something whoever floods a device can cause at will, so skipping keeps
			 * "samples" equal to "complete reports". One sample lost per overrun, when
			 * events are plentiful anyway, costs nothing. */
			p->dropping = false;
			p->dropped++;
			continue;
		}
		sec = (long long)ev.input_event_sec;
		usec = (long long)ev.input_event_usec;
		if (sec < 0 || usec < 0 || usec >= 1000000 ||
		    (unsigned long long)sec >= UINT64_MAX / NS_PER_SEC - 1) {
			p->bad_time++;
			continue;
		}
		fn(ctx, (uint64_t)sec * NS_PER_SEC + (uint64_t)usec * 1000);
	}
	util_wipe(&ev, sizeof(ev));
	return n * REC_SIZE;
}

/* ---- devices ---- */

static const char *type_name(enum node_type t)
{
	return t == NODE_FIFO ? "a FIFO" : t == NODE_FILE ? "a regular file" : "an evdev device";
}

static const char *watch_path(const struct config *cfg)
{
	return cfg->input.watch && cfg->input.watch[0] ? cfg->input.watch : DEFAULT_WATCH;
}

static struct evdev_state *state_of(const struct src_inst *si)
{
	return si->src->priv;
}

/* Stop reading; what the node was is forgotten with it, so that a node reopened is probed
 * afresh. */
static void evdev_close(struct src_inst *si)
{
	struct dev *d = si->drv;

	if (d->ev) {
		event_free(d->ev);
		d->ev = NULL;
	}
	if (d->fd >= 0) {
		close(d->fd);
		d->fd = -1;
	}
	util_wipe(d->carry, sizeof(d->carry));
	d->ncarry = 0;
	d->devname[0] = '\0';
	d->kind = NULL;
	d->virt = false;
}

static void evdev_detach(struct src_inst *si)
{
	struct dev *d = si->drv;

	if (d->parser.dropped || d->parser.bad_time)
		log_info("input/%s: %llu reports not sampled after overruns, %llu with an invalid "
			 "timestamp",
			 si->name, (unsigned long long)d->parser.dropped,
			 (unsigned long long)d->parser.bad_time);
}

static void evdev_forget(struct src_inst *si)
{
	struct dev *d = si->drv;

	free(d->path);
}

/* Device names come from whoever made the device (uinput lets anyone with access pick
 * one): keep them printable so they cannot forge log lines. */
static void set_devname(struct dev *d, const char *raw)
{
	size_t i;

	for (i = 0; i < sizeof(d->devname) - 1 && raw[i]; i++) {
		unsigned char ch = (unsigned char)raw[i];

		d->devname[i] = ch >= 0x20 && ch < 0x7f && ch != '"' ? (char)ch : '?';
	}
	d->devname[i] = '\0';
}

/* uinput devices live under /sys/devices/virtual whatever bus type their creator claims.
 * Found through the node's device number rather than /sys/class/input/<basename>, so that a
 * watch directory other than /dev/input, or a renamed node, still finds the right device. */
static bool sysfs_virtual(dev_t rdev)
{
	char link[64], real[PATH_MAX];
	static const char prefix[] = "/sys/devices/virtual/";

	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/device", major(rdev), minor(rdev));
	if (!realpath(link, real))
		return false;
	return strncmp(real, prefix, sizeof(prefix) - 1) == 0;
}

/* Ask an evdev device what it is. 1: evdev; 0: not evdev (ENOTTY); -1: error (errno). */
static int probe_evdev(struct src_inst *si, int fd, const struct stat *sb)
{
	struct dev *d = si->drv;
	struct input_id id;
	struct evdev_caps caps;
	char raw[256];
	int clk = CLOCK_MONOTONIC;

	if (ioctl(fd, EVIOCGID, &id) < 0)
		return errno == ENOTTY ? 0 : -1;
	if (ioctl(fd, EVIOCSCLOCKID, &clk) < 0)
		log_limited(&rl_open, LOG_WARNING,
			    "input/%s: cannot ask for CLOCK_MONOTONIC timestamps (%s); "
			    "using the device's default clock",
			    si->name, strerror(errno));
	memset(raw, 0, sizeof(raw));
	if (ioctl(fd, EVIOCGNAME(sizeof(raw) - 1), raw) < 0)
		raw[0] = '\0';
	set_devname(d, raw);
	memset(&caps, 0, sizeof(caps));
	/* A failed EVIOCGBIT leaves its bitmap empty: the device is then "other". */
	(void)ioctl(fd, EVIOCGBIT(0, sizeof(caps.ev)), caps.ev);
	(void)ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(caps.key)), caps.key);
	(void)ioctl(fd, EVIOCGBIT(EV_REL, sizeof(caps.rel)), caps.rel);
	(void)ioctl(fd, EVIOCGBIT(EV_ABS, sizeof(caps.abs)), caps.abs);
	d->kind = input_classify(&caps);
	d->virt = id.bustype == BUS_VIRTUAL || sysfs_virtual(sb->st_rdev);
	return 1;
}

/* Why config keeps an opened node from being used, or NULL if it may be. */
static const char *rejection(const struct config *cfg, const struct src_inst *si, char *why,
			     size_t size)
{
	const struct dev *d = si->drv;
	const char *devname = d->devname[0] ? d->devname : NULL;
	const char *pat;

	pat = input_glob_match(&cfg->input.exclude, si->name, d->path, devname, d->kind);
	if (pat) {
		snprintf(why, size, "matches the input exclude pattern \"%s\"", pat);
		return why;
	}
	if (cfg->input.include.n &&
	    !input_glob_match(&cfg->input.include, si->name, d->path, devname, d->kind)) {
		snprintf(why, size, "matches no input include pattern");
		return why;
	}
	if (d->virt && cfg->input.exclude_virtual) {
		snprintf(why, size,
			 "a virtual device (bus virtual or uinput), and exclude_virtual is set: a "
			 "process that can create a virtual device can time its events perfectly");
		return why;
	}
	return NULL;
}

/* A reload: an open node the new config excludes is closed until the next one. */
static enum src_status evdev_recheck(struct src_inst *si, char *why, size_t size)
{
	return rejection(si->src->cfg, si, why, size) ? SRC_SKIPPED : SRC_OPEN;
}

static void dev_sample(void *ctx, uint64_t t_ns)
{
	struct src_inst *si = ctx;

	feed_pipeline_sample(si->inst, t_ns);
}

/* Say the first time per instance that reports were not sampled; evdev_detach sums up. */
static void dev_report_parser(struct src_inst *si)
{
	struct dev *d = si->drv;
	const struct evdev_parser *p = &d->parser;

	if (p->dropped && !d->logged_dropped)
		log_limited(&rl_data, LOG_INFO,
			    "input/%s: the kernel dropped events (reader overrun); the report "
			    "that ends each gap is not sampled",
			    si->name);
	if (p->bad_time && !d->logged_bad_time)
		log_limited(&rl_data, LOG_WARNING,
			    "input/%s: reports with an invalid timestamp are ignored", si->name);
	d->logged_dropped = p->dropped;
	d->logged_bad_time = p->bad_time;
}

/* A regular file was read to its end. */
static void dev_end(struct src_inst *si)
{
	struct dev *d = si->drv;

	if (d->ncarry)
		log_limited(&rl_data, LOG_NOTICE,
			    "input/%s: %zu trailing bytes (less than one record) ignored",
			    si->name, d->ncarry);
	log_info("input/%s: read to its end; closed", si->name);
	source_set_state(si, "ended");
	source_close(si, SRC_ENDED);
	source_detach(si);
}

/* A read error (ENODEV: the device was unplugged): close it and carry on. */
static void dev_lost(struct src_inst *si, const char *why)
{
	log_limited(&rl_lost, LOG_NOTICE, "input/%s: %s; closed", si->name, why);
	source_close(si, SRC_WAIT);
	source_detach(si);
}

static void dev_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct src_inst *si = arg;
	struct dev *d = si->drv;
	struct evdev_state *st = state_of(si);

	for (int round = 0; round < READS_PER_WAKEUP; round++) {
		size_t len, used;
		ssize_t n = read(d->fd, st->buf + d->ncarry, READ_RECORDS * REC_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			dev_lost(si, errno == ENODEV ? "device gone (ENODEV)" : strerror(errno));
			return;
		}
		if (n == 0) {
			if (d->type == NODE_FILE)
				dev_end(si);
			else
				dev_lost(si, "unexpected end of file");
			return;
		}
		memcpy(st->buf, d->carry, d->ncarry);
		len = d->ncarry + (size_t)n;
		used = input_parse(&d->parser, st->buf, len, dev_sample, si);
		d->ncarry = len - used;
		util_wipe(d->carry, sizeof(d->carry));
		memcpy(d->carry, st->buf + used, d->ncarry);
		util_wipe(st->buf, len);
		dev_report_parser(si);
	}
	/* A regular file never says EAGAIN: come back for the rest after other events. */
	if (d->type == NODE_FILE)
		event_active(d->ev, EV_READ, 0);
}


/* A node that could not be opened: why, in the log and in status (a row of its own, no kind
 * yet), tried again when it changes. */
static enum src_status not_opened(struct src_inst *si, const char *fmt, ...) PRINTF_LIKE(2, 3);
static enum src_status not_opened(struct src_inst *si, const char *fmt, ...)
{
	struct dev *d = si->drv;
	char why[sizeof(si->error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	source_set_error(si, "%s", why);
	log_limited(&rl_open, LOG_WARNING, "input/%s: %s", si->name, why);
	if (!si->inst) {
		source_attach(si, NULL, 0);
		d->unopened_row = true;
	}
	return SRC_WAIT;
}
/* Open a node that policy allows if config does too, and attach it to the pipeline. */
static enum src_status evdev_open(struct src_inst *si)
{
	struct dev *d = si->drv;
	const struct config *cfg = si->src->cfg;
	const char *pat;
	char why[256];
	struct stat sb, fsb;
	int fd, flags, r;

	memset(&d->parser, 0, sizeof(d->parser));
	d->logged_dropped = d->logged_bad_time = 0;
	/* Excluded by node name or path: never opened at all. */
	pat = input_glob_match(&cfg->input.exclude, si->name, d->path, NULL, NULL);
	if (pat) {
		log_info("input/%s: not opened: matches the input exclude pattern \"%s\"",
			 si->name, pat);
		return SRC_SKIPPED;
	}
	if (stat(d->path, &sb) < 0) {
		return not_opened(si, "cannot stat %s: %s", d->path, strerror(errno));
	}
	if (S_ISFIFO(sb.st_mode)) {
		/* Holding a write end too means a writer that closes never makes the FIFO
		 * readable-at-EOF forever, which would have the event loop spin. */
		flags = O_RDWR;
	} else if (S_ISCHR(sb.st_mode) || S_ISREG(sb.st_mode)) {
		flags = O_RDONLY;
	} else {
		log_limited(&rl_open, LOG_NOTICE,
			    "input/%s: not a character device, FIFO or regular file; skipped",
			    si->name);
		return SRC_SKIPPED;
	}
	/* From the privileged process where there is one: the collector is not uid 0 and
	 * has no group that could open a device node. */
	(void)flags;
	{
		char *watch = xasprintf("%.*s", (int)(strlen(d->path) - strlen(si->name) - 1),
					d->path);

		fd = priv_input_open(watch, si->name);
		free(watch);
	}
	if (fd < 0) {
		return not_opened(si, "cannot open %s: %s", d->path, strerror(errno));
	}
	d->fd = fd;
	if (fstat(fd, &fsb) < 0 || (fsb.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
		/* Replaced between stat and open; the inotify event for that follows. */
		evdev_close(si);
		return SRC_WAIT;
	}
	r = probe_evdev(si, fd, &fsb);
	if (r < 0) {
		evdev_close(si);
		return not_opened(si, "evdev ioctl failed: %s", strerror(errno));
	}
	if (r == 0 && S_ISCHR(fsb.st_mode)) {
		/* A character device that is not evdev could be anything (/dev/zero would
		 * keep the loop busy forever): leave it alone. */
		log_limited(&rl_open, LOG_NOTICE,
			    "input/%s: not an evdev device (ENOTTY) and not a FIFO or file; skipped",
			    si->name);
		evdev_close(si);
		return SRC_SKIPPED;
	}
	d->type = r ? NODE_EVDEV : S_ISFIFO(fsb.st_mode) ? NODE_FIFO : NODE_FILE;
	if (d->type != NODE_EVDEV)
		d->kind = "stream";
	if (rejection(cfg, si, why, sizeof(why))) {
		log_info("input/%s%s%s%s: not used: %s", si->name, d->devname[0] ? " (\"" : "",
			 d->devname, d->devname[0] ? "\")" : "", why);
		evdev_close(si);
		return SRC_SKIPPED;
	}
	if (d->type != NODE_EVDEV)
		log_info("input/%s: not an evdev device (ENOTTY): %s, read as a stream of "
			 "struct input_event records",
			 si->name, type_name(d->type));
	if (d->type == NODE_FILE)
		d->ev = event_new(si->src->base, -1, 0, dev_read_cb, si);
	else
		d->ev = event_new(si->src->base, fd, EV_READ | EV_PERSIST, dev_read_cb, si);
	if (!d->ev || (d->type != NODE_FILE && event_add(d->ev, NULL) < 0)) {
		log_limited(&rl_open, LOG_WARNING, "input/%s: cannot register with the event loop",
			    si->name);
		evdev_close(si);
		return SRC_WAIT;
	}
	if (d->unopened_row) {
		/* Its kind and whether the kernel credits it are known only now. */
		source_detach(si);
		d->unopened_row = false;
	}
	source_set_state(si, "%s", d->type == NODE_EVDEV ? "open" : "stream");
	source_attach(si, d->kind, d->type == NODE_EVDEV ? INST_KERNEL_CREDITS : 0);
	if (d->type == NODE_FILE)
		event_active(d->ev, EV_READ, 0);
	return SRC_OPEN;
}

/* A node found: a new instance, or one that waits tried again. */
static void node_found(struct evdev_state *st, const char *name)
{
	bool added;
	struct src_inst *si = source_found(st->src, name, &added);
	struct dev *d = si->drv;

	if (added) {
		d->si = si;
		d->fd = -1;
		d->path = xasprintf("%s/%s", st->watch, name);
	}
	if (added || si->status == SRC_CLOSED || si->status == SRC_WAIT)
		source_open(si);
}

/* ---- the watched directory ---- */

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

static int filter_names(const struct dirent *de)
{
	return input_node_name(de->d_name);
}

static bool watch_dir_add(struct evdev_state *st);

/* Every node in the directory: at start, after an inotify overflow, when the directory
 * appears, on reload. While the directory is not there (and inotify waits for it), none. */
static bool evdev_scan(struct source *src)
{
	struct evdev_state *st = src->priv;
	struct dirent **names;
	int n;

	/* Not watched: nothing to read, unless the directory (whose parent could not be
	 * watched for it) is there now, which a reload's rescan looks for. */
	if (st->wd < 0 && st->ifd >= 0 && (st->pwd >= 0 || !watch_dir_add(st)))
		return false;
	n = scandir(st->watch, &names, filter_names, cmp_names);
	if (n < 0) {
		log_errno(LOG_WARNING, "input: cannot read %s (sources.input.watch)", st->watch);
		return false;
	}
	for (int i = 0; i < n; i++) {
		node_found(st, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return true;
}

static char *parent_dir(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	if (slash == path)
		return xstrdup("/");
	return xasprintf("%.*s", (int)(slash - path), path);
}

static const char *leaf(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Watch the directory; while it does not exist, watch its parent for it to appear. True if
 * the directory is watched now. */
static bool watch_dir_add(struct evdev_state *st)
{
	char *parent;

	st->wd = inotify_add_watch(st->ifd, st->watch, DIR_MASK);
	if (st->wd < 0 && errno == ENOENT && st->pwd < 0) {
		parent = parent_dir(st->watch);
		st->pwd = inotify_add_watch(st->ifd, parent, PARENT_MASK);
		if (st->pwd < 0)
			log_errno(LOG_WARNING,
				  "input: %s does not exist, and %s cannot be watched for it; no "
				  "input devices until a reload",
				  st->watch, parent);
		else
			log_warn("input: %s does not exist (no input devices yet); waiting for "
				 "it to appear",
				 st->watch);
		free(parent);
		/* It may have appeared between the two calls. */
		if (st->pwd >= 0)
			st->wd = inotify_add_watch(st->ifd, st->watch, DIR_MASK);
		else
			return false;
	}
	if (st->wd < 0) {
		if (errno != ENOENT)
			log_errno(LOG_WARNING, "input: cannot watch %s (sources.input.watch); no "
					       "input devices until a reload",
				  st->watch);
		return false;
	}
	if (st->pwd >= 0) {
		inotify_rm_watch(st->ifd, st->pwd);
		st->pwd = -1;
	}
	return true;
}

static void watch_dir(struct evdev_state *st)
{
	if (watch_dir_add(st))
		source_rescan(st->src);
}

static void dir_gone(struct evdev_state *st)
{
	log_warn("input: %s went away; its devices are closed until it reappears", st->watch);
	st->wd = -1; /* the kernel has removed the watch itself */
	source_forget_all(st->src);
	watch_dir(st);
}

static void handle_dir_event(struct evdev_state *st, const struct inotify_event *ie)
{
	struct src_inst *si;

	if (ie->mask & (IN_DELETE_SELF | IN_IGNORED | IN_UNMOUNT)) {
		dir_gone(st);
		return;
	}
	if (!ie->len || (ie->mask & IN_ISDIR) || !input_node_name(ie->name))
		return;
	si = source_find(st->src, ie->name);
	if (ie->mask & (IN_DELETE | IN_MOVED_FROM)) {
		if (si) {
			if (si->status == SRC_OPEN)
				log_info("input/%s: node removed; closed", si->name);
			source_forget(si);
		}
	} else if (ie->mask & (IN_CREATE | IN_MOVED_TO)) {
		/* A new node under an old name is a new device. */
		if (si)
			source_forget(si);
		node_found(st, ie->name);
	} else if (ie->mask & IN_ATTRIB) {
		/* udev sets owner and mode after the node appears: retry what failed. */
		if (!si || si->status == SRC_WAIT || si->status == SRC_CLOSED)
			node_found(st, ie->name);
	}
}

static void handle_event(struct evdev_state *st, const struct inotify_event *ie)
{
	if (ie->mask & IN_Q_OVERFLOW) {
		log_limited(&rl_notify, LOG_NOTICE, "input: inotify queue overflowed; rescanning");
		if (st->wd >= 0)
			source_rescan(st->src);
		return;
	}
	if (st->wd >= 0 && ie->wd == st->wd) {
		handle_dir_event(st, ie);
	} else if (st->pwd >= 0 && ie->wd == st->pwd) {
		if (ie->mask & (IN_DELETE_SELF | IN_IGNORED | IN_UNMOUNT)) {
			st->pwd = -1;
			log_warn("input: the parent of %s went away; no input devices until a "
				 "reload",
				 st->watch);
		} else if (ie->len && strcmp(ie->name, leaf(st->watch)) == 0) {
			watch_dir(st);
		}
	}
}

static void inotify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct evdev_state *st = arg;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	for (int round = 0; round < 16 && st->ifd >= 0; round++) {
		ssize_t n = read(st->ifd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			log_limited(&rl_notify, LOG_WARNING, "input: inotify read failed: %s",
				    strerror(errno));
		if (n <= 0)
			return;
		for (size_t off = 0; off + sizeof(struct inotify_event) <= (size_t)n;) {
			const struct inotify_event *ie = (const struct inotify_event *)(buf + off);

			handle_event(st, ie);
			off += sizeof(*ie) + ie->len;
		}
	}
}

static void watch_start(struct evdev_state *st)
{
	st->wd = st->pwd = -1;
	st->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (st->ifd < 0) {
		log_errno(LOG_WARNING, "input: inotify unavailable; devices present now are "
				       "used, later ones are not seen until a reload");
		source_rescan(st->src);
		return;
	}
	st->iev = event_new(st->src->base, st->ifd, EV_READ | EV_PERSIST, inotify_cb, st);
	if (!st->iev || event_add(st->iev, NULL) < 0)
		log_warn("input: cannot register inotify with the event loop; later devices "
			 "are not seen until a reload");
	watch_dir(st);
}

static void watch_stop(struct evdev_state *st)
{
	if (st->iev) {
		event_free(st->iev);
		st->iev = NULL;
	}
	if (st->ifd >= 0)
		close(st->ifd); /* removes every watch and the queued events with it */
	st->ifd = st->wd = st->pwd = -1;
}

static char *normalise_dir(const char *path)
{
	char *s = xstrdup(path);
	size_t n = strlen(s);

	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	return s;
}

/* ---- the driver ---- */

static int evdev_start(struct source *src)
{
	struct evdev_state *st = xcalloc(1, sizeof(*st));

	st->src = src;
	st->ifd = st->wd = st->pwd = -1;
	st->watch = normalise_dir(watch_path(src->cfg));
	src->priv = st;
	watch_start(st);
	return 0;
}

/* A new watch directory starts afresh; otherwise the core goes through the nodes and
 * rescans (evdev_scan tries again a directory whose parent could not be watched). */
static bool evdev_reload(struct source *src)
{
	struct evdev_state *st = src->priv;
	char *watch = normalise_dir(watch_path(src->cfg));

	if (strcmp(watch, st->watch) != 0) {
		log_info("input: now watching %s instead of %s", watch, st->watch);
		watch_stop(st);
		source_forget_all(src);
		free(st->watch);
		st->watch = watch;
		watch_start(st);
		return false;
	}
	free(watch);
	return true;
}

static void evdev_stop(struct source *src)
{
	struct evdev_state *st = src->priv;

	if (!st)
		return;
	watch_stop(st);
	free(st->watch);
	util_wipe(st, sizeof(*st));
	free(st);
	src->priv = NULL;
}

/* What include and exclude are matched against: node, path, device name, kind. */
static size_t evdev_names(const struct src_inst *si, const char **out, size_t max)
{
	const struct dev *d = si->drv;
	const char *v[] = {si->name, d->path, d->devname[0] ? d->devname : NULL, d->kind};
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(v) && n < max; i++)
		if (v[i])
			out[n++] = v[i];
	return n;
}

const struct source_ops input_source_ops = {
	.name = "input",
	.cls = CLASS_INPUT,
	.inst_size = sizeof(struct dev),
	.start = evdev_start,
	.stop = evdev_stop,
	.scan = evdev_scan,
	.open = evdev_open,
	.close = evdev_close,
	.detach = evdev_detach,
	.forget = evdev_forget,
	.reload = evdev_reload,
	.recheck = evdev_recheck,
	.names = evdev_names,
};
