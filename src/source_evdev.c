/* source_evdev: input devices (evdev) as a timing source: one sample per input report.
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

#include "source_evdev.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pipeline.h"
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

enum dev_status {
	DS_OPEN,    /* attached and read */
	DS_SKIPPED, /* disabled by policy or excluded: stays closed until a reload or a new node */
	DS_FAILED,  /* could not be opened or was lost: retried when its attributes change */
	DS_ENDED,   /* a file read to its end: not read again unless a new file replaces it */
};

struct evdev_state;

struct dev {
	struct dev *next;
	struct evdev_state *st;
	char *name; /* the node's basename, which is the instance name */
	char *path;
	enum dev_status status;
	enum node_type type;
	bool seen; /* during a rescan */
	int fd;
	struct event *ev;
	struct instance *inst;
	const char *kind;
	char devname[128]; /* EVIOCGNAME, made printable; empty for streams */
	bool virt;
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
	struct dev *devs;
	/* The one buffer raw records are read into: a carried partial record plus a batch. */
	unsigned char buf[(READ_RECORDS + 1) * REC_SIZE] __attribute__((aligned(8)));
};

static struct log_ratelimit rl_open = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_lost = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_data = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_notify = LOG_RATELIMIT_INIT;

/* ---- pure parts: node names, classification, globs, the frame parser ---- */

bool evdev_node_name(const char *name)
{
	return strncmp(name, "event", 5) == 0;
}

void evdev_bit_set(unsigned long *bits, unsigned bit)
{
	bits[bit / EVDEV_LONG_BITS] |= 1UL << (bit % EVDEV_LONG_BITS);
}

bool evdev_bit_test(const unsigned long *bits, unsigned bit)
{
	return (bits[bit / EVDEV_LONG_BITS] >> (bit % EVDEV_LONG_BITS)) & 1;
}

static const unsigned short letter_keys[] = {
	KEY_A, KEY_B, KEY_C, KEY_D, KEY_E, KEY_F, KEY_G, KEY_H, KEY_I, KEY_J, KEY_K, KEY_L, KEY_M,
	KEY_N, KEY_O, KEY_P, KEY_Q, KEY_R, KEY_S, KEY_T, KEY_U, KEY_V, KEY_W, KEY_X, KEY_Y, KEY_Z,
};

const char *evdev_classify(const struct evdev_caps *c)
{
	/* Any letter key makes a keyboard, even alongside pointer axes: "exclude keyboard" must
	 * catch everything that can type text (a gaming mouse's macro node, a combo receiver). */
	if (evdev_bit_test(c->ev, EV_KEY))
		for (size_t i = 0; i < ARRAY_SIZE(letter_keys); i++)
			if (evdev_bit_test(c->key, letter_keys[i]))
				return "keyboard";
	if (evdev_bit_test(c->ev, EV_REL) && evdev_bit_test(c->rel, REL_X) &&
	    evdev_bit_test(c->rel, REL_Y))
		return "mouse";
	if (evdev_bit_test(c->ev, EV_ABS) && evdev_bit_test(c->abs, ABS_X) &&
	    evdev_bit_test(c->abs, ABS_Y) && evdev_bit_test(c->ev, EV_KEY) &&
	    (evdev_bit_test(c->key, BTN_TOUCH) || evdev_bit_test(c->key, BTN_TOOL_FINGER)))
		return "touchpad";
	return "other";
}

const char *evdev_glob_match(const struct strlist *globs, const char *base, const char *path,
			     const char *devname, const char *kind)
{
	const char *subject[] = {base, path, devname, kind};

	for (size_t i = 0; i < globs->n; i++)
		for (size_t j = 0; j < ARRAY_SIZE(subject); j++)
			if (subject[j] && fnmatch(globs->v[i], subject[j], 0) == 0)
				return globs->v[i];
	return NULL;
}

size_t evdev_parse(struct evdev_parser *p, const void *buf, size_t len, evdev_sample_fn *fn,
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
	wipe(&ev, sizeof(ev));
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

static struct dev *dev_find(struct evdev_state *st, const char *name)
{
	for (struct dev *d = st->devs; d; d = d->next)
		if (strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

/* Close the fd and detach the instance; the entry stays (its status says why). */
static void dev_close(struct dev *d, const char *final_state)
{
	if (d->ev) {
		event_free(d->ev);
		d->ev = NULL;
	}
	if (d->fd >= 0) {
		close(d->fd);
		d->fd = -1;
	}
	if (d->inst) {
		if (d->parser.dropped || d->parser.bad_time)
			log_info("input/%s: %llu reports not sampled after overruns, %llu with an "
				 "invalid timestamp",
				 d->name, (unsigned long long)d->parser.dropped,
				 (unsigned long long)d->parser.bad_time);
		if (final_state)
			pipeline_set_state(d->inst, final_state);
		pipeline_detach(d->inst);
		d->inst = NULL;
	}
	wipe(d->carry, sizeof(d->carry));
	d->ncarry = 0;
	memset(&d->parser, 0, sizeof(d->parser));
	d->logged_dropped = d->logged_bad_time = 0;
	d->devname[0] = '\0';
	d->kind = NULL;
	d->virt = false;
}

static void dev_free(struct dev *d)
{
	dev_close(d, NULL);
	free(d->name);
	free(d->path);
	wipe(d, sizeof(*d));
	free(d);
}

static void dev_remove(struct evdev_state *st, struct dev *d)
{
	for (struct dev **pp = &st->devs; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			dev_free(d);
			return;
		}
	}
}

static void drop_all(struct evdev_state *st)
{
	while (st->devs) {
		struct dev *d = st->devs;

		st->devs = d->next;
		dev_free(d);
	}
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
static int probe_evdev(struct dev *d, int fd, const struct stat *sb)
{
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
			    d->name, strerror(errno));
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
	d->kind = evdev_classify(&caps);
	d->virt = id.bustype == BUS_VIRTUAL || sysfs_virtual(sb->st_rdev);
	return 1;
}

/* Why config keeps an opened node from being used, or NULL if it may be. */
static const char *rejection(const struct config *cfg, const struct dev *d, char *why,
			     size_t size)
{
	const char *devname = d->devname[0] ? d->devname : NULL;
	const char *pat;

	pat = evdev_glob_match(&cfg->input.exclude, d->name, d->path, devname, d->kind);
	if (pat) {
		snprintf(why, size, "matches the input exclude pattern \"%s\"", pat);
		return why;
	}
	if (cfg->input.include.n &&
	    !evdev_glob_match(&cfg->input.include, d->name, d->path, devname, d->kind)) {
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

static void dev_sample(void *ctx, uint64_t t_ns)
{
	struct dev *d = ctx;

	pipeline_sample(d->inst, t_ns);
}

/* Say the first time per instance that reports were not sampled; dev_close sums up. */
static void dev_report_parser(struct dev *d)
{
	const struct evdev_parser *p = &d->parser;

	if (p->dropped && !d->logged_dropped)
		log_limited(&rl_data, LOG_INFO,
			    "input/%s: the kernel dropped events (reader overrun); the report "
			    "that ends each gap is not sampled",
			    d->name);
	if (p->bad_time && !d->logged_bad_time)
		log_limited(&rl_data, LOG_WARNING,
			    "input/%s: reports with an invalid timestamp are ignored", d->name);
	d->logged_dropped = p->dropped;
	d->logged_bad_time = p->bad_time;
}

/* A regular file was read to its end. */
static void dev_end(struct dev *d)
{
	if (d->ncarry)
		log_limited(&rl_data, LOG_NOTICE,
			    "input/%s: %zu trailing bytes (less than one record) ignored",
			    d->name, d->ncarry);
	log_info("input/%s: read to its end; closed", d->name);
	dev_close(d, "ended");
	d->status = DS_ENDED;
}

/* A read error (ENODEV: the device was unplugged): close it and carry on. */
static void dev_lost(struct dev *d, const char *why)
{
	log_limited(&rl_lost, LOG_NOTICE, "input/%s: %s; closed", d->name, why);
	dev_close(d, NULL);
	d->status = DS_FAILED;
}

static void dev_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct dev *d = arg;
	struct evdev_state *st = d->st;

	for (int round = 0; round < READS_PER_WAKEUP; round++) {
		size_t len, used;
		ssize_t n = read(d->fd, st->buf + d->ncarry, READ_RECORDS * REC_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			dev_lost(d, errno == ENODEV ? "device gone (ENODEV)" : strerror(errno));
			return;
		}
		if (n == 0) {
			if (d->type == NODE_FILE)
				dev_end(d);
			else
				dev_lost(d, "unexpected end of file");
			return;
		}
		memcpy(st->buf, d->carry, d->ncarry);
		len = d->ncarry + (size_t)n;
		used = evdev_parse(&d->parser, st->buf, len, dev_sample, d);
		d->ncarry = len - used;
		wipe(d->carry, sizeof(d->carry));
		memcpy(d->carry, st->buf + used, d->ncarry);
		wipe(st->buf, len);
		dev_report_parser(d);
	}
	/* A regular file never says EAGAIN: come back for the rest after other events. */
	if (d->type == NODE_FILE)
		event_active(d->ev, EV_READ, 0);
}

/* Open a node if policy and config allow it, and attach it to the pipeline. */
static void dev_open(struct dev *d)
{
	struct evdev_state *st = d->st;
	const struct config *cfg = st->src->cfg;
	const char *pat;
	char why[256];
	struct stat sb, fsb;
	int fd, flags, r;

	d->status = DS_SKIPPED;
	if (!pipeline_enabled(CLASS_INPUT, d->name)) {
		log_info("input/%s: not opened: disabled by policy", d->name);
		return;
	}
	/* Excluded by node name or path: never opened at all. */
	pat = evdev_glob_match(&cfg->input.exclude, d->name, d->path, NULL, NULL);
	if (pat) {
		log_info("input/%s: not opened: matches the input exclude pattern \"%s\"",
			 d->name, pat);
		return;
	}
	d->status = DS_FAILED;
	if (stat(d->path, &sb) < 0) {
		log_limited(&rl_open, LOG_WARNING, "input/%s: cannot stat %s: %s", d->name,
			    d->path, strerror(errno));
		return;
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
			    d->name);
		d->status = DS_SKIPPED;
		return;
	}
	fd = open(d->path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		log_limited(&rl_open, LOG_WARNING, "input/%s: cannot open %s: %s", d->name,
			    d->path, strerror(errno));
		return;
	}
	if (fstat(fd, &fsb) < 0 || (fsb.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
		/* Replaced between stat and open; the inotify event for that follows. */
		close(fd);
		return;
	}
	r = probe_evdev(d, fd, &fsb);
	if (r < 0) {
		log_limited(&rl_open, LOG_WARNING, "input/%s: evdev ioctl failed: %s", d->name,
			    strerror(errno));
		close(fd);
		return;
	}
	if (r == 0 && S_ISCHR(fsb.st_mode)) {
		/* A character device that is not evdev could be anything (/dev/zero would
		 * keep the loop busy forever): leave it alone. */
		log_limited(&rl_open, LOG_NOTICE,
			    "input/%s: not an evdev device (ENOTTY) and not a FIFO or file; skipped",
			    d->name);
		close(fd);
		d->status = DS_SKIPPED;
		return;
	}
	d->type = r ? NODE_EVDEV : S_ISFIFO(fsb.st_mode) ? NODE_FIFO : NODE_FILE;
	if (d->type != NODE_EVDEV)
		d->kind = "stream";
	if (rejection(cfg, d, why, sizeof(why))) {
		log_info("input/%s%s%s%s: not used: %s", d->name, d->devname[0] ? " (\"" : "",
			 d->devname, d->devname[0] ? "\")" : "", why);
		close(fd);
		dev_close(d, NULL);
		d->status = DS_SKIPPED;
		return;
	}
	if (d->type != NODE_EVDEV)
		log_info("input/%s: not an evdev device (ENOTTY): %s, read as a stream of "
			 "struct input_event records",
			 d->name, type_name(d->type));
	d->fd = fd;
	if (d->type == NODE_FILE) {
		d->ev = event_new(st->src->base, -1, 0, dev_read_cb, d);
	} else {
		d->ev = event_new(st->src->base, fd, EV_READ | EV_PERSIST, dev_read_cb, d);
	}
	if (!d->ev || (d->type != NODE_FILE && event_add(d->ev, NULL) < 0)) {
		log_limited(&rl_open, LOG_WARNING, "input/%s: cannot register with the event loop",
			    d->name);
		dev_close(d, NULL);
		return;
	}
	d->inst = pipeline_attach(CLASS_INPUT, d->name, d->kind,
				  d->type == NODE_EVDEV ? INST_KERNEL_CREDITS : 0);
	pipeline_set_state(d->inst, d->type == NODE_EVDEV ? "open" : "stream");
	if (d->type == NODE_FILE)
		event_active(d->ev, EV_READ, 0);
	d->status = DS_OPEN;
}

static void node_add(struct evdev_state *st, const char *name)
{
	struct dev *d = xcalloc(1, sizeof(*d));

	d->st = st;
	d->name = xstrdup(name);
	d->path = xasprintf("%s/%s", st->watch, name);
	d->fd = -1;
	d->seen = true;
	d->next = st->devs;
	st->devs = d;
	dev_open(d);
}

/* ---- the watched directory ---- */

static int cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

static int filter_names(const struct dirent *de)
{
	return evdev_node_name(de->d_name);
}

/* Bring the list in line with the directory: open new nodes, forget vanished ones, retry
 * failed ones. At start, after an inotify overflow, when the directory appears, on reload. */
static void rescan(struct evdev_state *st)
{
	struct dirent **names;
	int n = scandir(st->watch, &names, filter_names, cmp_names);

	if (n < 0) {
		log_errno(LOG_WARNING, "input: cannot read %s", st->watch);
		return;
	}
	for (struct dev *d = st->devs; d; d = d->next)
		d->seen = false;
	for (int i = 0; i < n; i++) {
		struct dev *d = dev_find(st, names[i]->d_name);

		if (!d) {
			node_add(st, names[i]->d_name);
		} else {
			d->seen = true;
			if (d->status == DS_FAILED)
				dev_open(d);
		}
		free(names[i]);
	}
	free(names);
	for (struct dev *d = st->devs, *next; d; d = next) {
		next = d->next;
		if (!d->seen)
			dev_remove(st, d);
	}
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

/* Watch the directory; while it does not exist, watch its parent for it to appear. */
static void watch_dir(struct evdev_state *st)
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
			return;
	}
	if (st->wd < 0) {
		if (errno != ENOENT)
			log_errno(LOG_WARNING, "input: cannot watch %s; no input devices until a "
					       "reload",
				  st->watch);
		return;
	}
	if (st->pwd >= 0) {
		inotify_rm_watch(st->ifd, st->pwd);
		st->pwd = -1;
	}
	rescan(st);
}

static void dir_gone(struct evdev_state *st)
{
	log_warn("input: %s went away; its devices are closed until it reappears", st->watch);
	st->wd = -1; /* the kernel has removed the watch itself */
	drop_all(st);
	watch_dir(st);
}

static void handle_dir_event(struct evdev_state *st, const struct inotify_event *ie)
{
	struct dev *d;

	if (ie->mask & (IN_DELETE_SELF | IN_IGNORED | IN_UNMOUNT)) {
		dir_gone(st);
		return;
	}
	if (!ie->len || (ie->mask & IN_ISDIR) || !evdev_node_name(ie->name))
		return;
	d = dev_find(st, ie->name);
	if (ie->mask & (IN_DELETE | IN_MOVED_FROM)) {
		if (d) {
			if (d->status == DS_OPEN)
				log_info("input/%s: node removed; closed", d->name);
			dev_remove(st, d);
		}
	} else if (ie->mask & (IN_CREATE | IN_MOVED_TO)) {
		/* A new node under an old name is a new device. */
		if (d)
			dev_remove(st, d);
		node_add(st, ie->name);
	} else if (ie->mask & IN_ATTRIB) {
		/* udev sets owner and mode after the node appears: retry what failed. */
		if (!d)
			node_add(st, ie->name);
		else if (d->status == DS_FAILED)
			dev_open(d);
	}
}

static void handle_event(struct evdev_state *st, const struct inotify_event *ie)
{
	if (ie->mask & IN_Q_OVERFLOW) {
		log_limited(&rl_notify, LOG_NOTICE, "input: inotify queue overflowed; rescanning");
		if (st->wd >= 0)
			rescan(st);
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
		rescan(st);
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

static void evdev_reload(struct source *src)
{
	struct evdev_state *st = src->priv;
	char *watch = normalise_dir(watch_path(src->cfg));
	char why[256];

	if (strcmp(watch, st->watch) != 0) {
		log_info("input: now watching %s instead of %s", watch, st->watch);
		watch_stop(st);
		drop_all(st);
		free(st->watch);
		st->watch = watch;
		watch_start(st);
		return;
	}
	free(watch);
	for (struct dev *d = st->devs; d; d = d->next) {
		switch (d->status) {
		case DS_OPEN:
			/* Still wanted: keep the instance and its pipeline state untouched. */
			if (!pipeline_enabled(CLASS_INPUT, d->name)) {
				log_info("input/%s: closed: now disabled by policy", d->name);
			} else if (rejection(src->cfg, d, why, sizeof(why))) {
				log_info("input/%s: closed: %s", d->name, why);
			} else {
				break;
			}
			dev_close(d, NULL);
			d->status = DS_SKIPPED;
			break;
		case DS_SKIPPED:
		case DS_FAILED:
			dev_open(d);
			break;
		case DS_ENDED:
			break;
		}
	}
	if (st->wd >= 0 || st->ifd < 0)
		rescan(st);
	else if (st->pwd < 0)
		watch_dir(st);
}

static void evdev_stop(struct source *src)
{
	struct evdev_state *st = src->priv;

	if (!st)
		return;
	watch_stop(st);
	drop_all(st);
	free(st->watch);
	wipe(st, sizeof(*st));
	free(st);
	src->priv = NULL;
}

const struct source_ops source_evdev_ops = {
	.name = "input",
	.cls = CLASS_INPUT,
	.missing = NULL,
	.start = evdev_start,
	.reload = evdev_reload,
	.stop = evdev_stop,
};
