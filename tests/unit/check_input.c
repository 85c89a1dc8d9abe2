/* check_input: the input source against the real pipeline, fed through FIFOs and files of
 * struct input_event records in a private watch directory (the host has no input devices). */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "input.h"
#include "log.h"
#include "source.h"
#include "testutil.h"
#include "util.h"

#define REC sizeof(struct input_event)
#define FRAME_RECS 4
#define SEED 0x5eed1234u

/* Distinctive codes and values: they must never show up anywhere but the read buffer. */
#define SECRET_KEY 0x2a5
#define SECRET_VALUE 0x1d2c3b
#define SECRET_SCAN 0x70071

static char tmpdir[4096];
static char watchdir[4200];
static struct event_base *base;
static struct event *probe;
static bool probe_fired;
static struct config *cfg;
static struct pool pool;
static struct source src;
static bool started;
static int fds_at_setup;

/* ---- records ---- */

static struct input_event rec(unsigned type, unsigned code, int value, long sec, long usec)
{
	struct input_event e;

	memset(&e, 0, sizeof(e));
	e.input_event_sec = sec;
	e.input_event_usec = usec;
	e.type = (unsigned short)type;
	e.code = (unsigned short)code;
	e.value = value;
	return e;
}

/* Frame i: a key, a relative motion, a scan code, then the report. */
static void frame(struct input_event *out, unsigned i)
{
	long sec = 1000 + (long)i, usec = (long)((i * 7919u) % 1000000u);

	out[0] = rec(EV_KEY, SECRET_KEY, SECRET_VALUE, sec, usec);
	out[1] = rec(EV_REL, REL_X, 0x5e7a, sec, usec);
	out[2] = rec(EV_MSC, MSC_SCAN, SECRET_SCAN, sec, usec);
	out[3] = rec(EV_SYN, SYN_REPORT, 0, sec, usec);
}

static uint64_t frame_ns(unsigned i)
{
	return (1000 + (uint64_t)i) * NS_PER_SEC + (uint64_t)((i * 7919u) % 1000000u) * 1000;
}

static void write_all(int fd, const void *buf, size_t len)
{
	ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
}

static void write_frames(int fd, unsigned first, unsigned n)
{
	struct input_event f[FRAME_RECS];

	for (unsigned i = first; i < first + n; i++) {
		frame(f, i);
		write_all(fd, f, sizeof(f));
	}
}

static uint32_t rnd_state = SEED;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

/* ---- the directory ---- */

static char *node(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", watchdir, name);
	return path;
}

/* A FIFO in the watch directory and a writer end that never blocks. */
/* The bytes written to a FIFO that its reader has not read yet. */
static int unread(int fd)
{
	int n = -1;

	ck_assert_int_eq(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

static int make_fifo(const char *name)
{
	int fd;

	ck_assert_int_eq(mkfifo(node(name), 0600), 0);
	fd = open(node(name), O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

/* Write a file elsewhere, then rename it in: how a replay is dropped into place. */
static void make_file(const char *dir, const char *name, const void *buf, size_t len,
		      bool rename_in)
{
	char tmp[256], dst[256];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", tmpdir, name);
	snprintf(dst, sizeof(dst), "%s/%s", dir, name);
	fd = open(rename_in ? tmp : dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	if (len)
		write_all(fd, buf, len);
	close(fd);
	if (rename_in)
		ck_assert_int_eq(rename(tmp, dst), 0);
}

static void make_frames_file(const char *name, unsigned n, bool rename_in)
{
	struct input_event *f = xcalloc((size_t)n * FRAME_RECS, REC);

	for (unsigned i = 0; i < n; i++)
		frame(f + (size_t)i * FRAME_RECS, i);
	make_file(watchdir, name, f, (size_t)n * FRAME_RECS * REC, rename_in);
	free(f);
}

/* ---- the pipeline's view ---- */

static bool find(const char *name, struct inst_info *out)
{
	for (size_t i = 0; i < feed_pipeline_count(); i++)
		if (feed_pipeline_info(i, out) && out->cls == CLASS_INPUT && strcmp(out->name, name) == 0)
			return true;
	return false;
}

static bool live(const char *name)
{
	struct inst_info info;

	return find(name, &info);
}

/* Samples of a live instance; -1 if there is none. */
static long long events(const char *name)
{
	struct inst_info info;

	return find(name, &info) ? (long long)info.c.events : -1;
}

static unsigned long long total_events(void)
{
	struct inst_counters c;

	feed_pipeline_totals(&c);
	return (unsigned long long)c.events;
}

/* ---- driving the loop: every wait is bounded ---- */

static void probe_cb(evutil_socket_t fd, short what, void *arg)
{
	probe_fired = true;
}

/* At most 500 turns (5 s when nothing at all happens). */
#define PUMP_UNTIL(cond) TU_PUMP_UNTIL(base, 500, cond)

/* Run whatever is ready now. */
static void settle(void)
{
	for (int i = 0; i < 20; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

/* True if, for `ms`, nothing but our own timer woke the loop: nothing is spinning. */
static bool quiet_for(long ms)
{
	struct timeval tv = {0, ms * 1000};

	probe_fired = false;
	evtimer_add(probe, &tv);
	event_base_loop(base, EVLOOP_ONCE);
	evtimer_del(probe);
	return probe_fired;
}

/* ---- fixture ---- */

static void set_list(struct strlist *l, const char *a, const char *b)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->n = (a != NULL) + (b != NULL);
	l->v = l->n ? xcalloc(l->n, sizeof(char *)) : NULL;
	if (a)
		l->v[0] = xstrdup(a);
	if (b)
		l->v[a != NULL] = xstrdup(b);
}

static void disable_instance(struct config *c, const char *glob)
{
	struct class_policy *cp = &c->policy[CLASS_INPUT];

	cp->overrides = xreallocarray(cp->overrides, cp->n_overrides + 1, sizeof(*cp->overrides));
	memset(&cp->overrides[cp->n_overrides], 0, sizeof(*cp->overrides));
	cp->overrides[cp->n_overrides].name = xstrdup(glob);
	cp->overrides[cp->n_overrides].set = RULE_SET_MODE;
	cp->overrides[cp->n_overrides].rule.mode = MODE_DISABLED;
	cp->n_overrides++;
}

static struct config *new_config(const char *watch)
{
	struct config *c = config_defaults();

	ck_assert_ptr_nonnull(c);
	free(c->input.watch);
	c->input.watch = xstrdup(watch);
	return c;
}

static void setup(void)
{
	log_open(true, 1);
	tu_mkdtemp(tmpdir, sizeof(tmpdir), "%s/evdev.XXXXXX", tu_tmpdir());
	snprintf(watchdir, sizeof(watchdir), "%s/input", tmpdir);
	ck_assert_int_eq(mkdir(watchdir, 0700), 0);
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	probe = evtimer_new(base, probe_cb, NULL);
	cfg = new_config(watchdir);
	feed_pool_init(&pool);
	feed_pipeline_init(cfg, &pool, NULL, NULL);
	memset(&src, 0, sizeof(src));
	started = false;
	fds_at_setup = tu_count_fds();
}

static void teardown(void)
{
	if (started)
		source_stop(&src);
	ck_assert_ptr_null(src.priv);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup); /* every node and inotify closed */
	feed_pipeline_fini();
	config_free(cfg);
	event_free(probe);
	event_base_free(base);
	tu_rm_tree(tmpdir);
}

static void start(void)
{
	ck_assert_int_eq(source_start(&src, &input_source_ops, base, cfg), 0);
	started = true;
}

/* The daemon's reload order: the pipeline learns the new config, then the sources do. */
static void reload(struct config *next)
{
	struct config *old = cfg;

	cfg = next;
	feed_pipeline_reconfigure(next);
	source_reload(&src, next);
	config_free(old);
}

/* ---- pure parts ---- */

struct collect {
	uint64_t t[256];
	size_t n;
};

static void collect_cb(void *ctx, uint64_t t_ns)
{
	struct collect *c = ctx;

	ck_assert_uint_lt(c->n, ARRAY_SIZE(c->t));
	c->t[c->n++] = t_ns;
}

START_TEST(test_parse_frames)
{
	struct input_event b[16];
	struct evdev_parser p = {0};
	struct collect c = {.n = 0};
	size_t n = 0;

	frame(b + n, 0);
	n += FRAME_RECS;
	/* A stretch the kernel dropped: the report that closes it is not sampled. */
	b[n++] = rec(EV_KEY, SECRET_KEY, 1, 2000, 1);
	b[n++] = rec(EV_SYN, SYN_DROPPED, 0, 2000, 2);
	b[n++] = rec(EV_KEY, SECRET_KEY, 0, 2000, 3);
	b[n++] = rec(EV_SYN, SYN_REPORT, 0, 2000, 4);
	/* Invalid timestamps are not sampled. */
	b[n++] = rec(EV_SYN, SYN_REPORT, 0, 2001, 1000000);
	/* A negative second, where the field is signed (a struct timeval); the 32-bit ABIs
	 * built with 64-bit time carry it unsigned, as their kernel does (linux/input.h's
	 * test): -1 is then 2106. */
#if __BITS_PER_LONG != 32 || !defined(__USE_TIME_BITS64)
	b[n++] = rec(EV_SYN, SYN_REPORT, 0, -1, 5);
#endif
	/* Other SYN codes are not reports. */
	b[n++] = rec(EV_SYN, SYN_MT_REPORT, 0, 2002, 0);
	frame(b + n, 7);
	n += FRAME_RECS;

	ck_assert_uint_eq(input_parse(&p, b, n * REC, collect_cb, &c), n * REC);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_uint_eq(c.t[0], frame_ns(0));
	ck_assert_uint_eq(c.t[1], frame_ns(7));
	ck_assert_uint_eq(p.dropped, 1);
	ck_assert_uint_eq(p.bad_time, 2);
	ck_assert(!p.dropping);

	/* A partial record is left to the caller; nothing is sampled from it. */
	c.n = 0;
	ck_assert_uint_eq(input_parse(&p, b, REC - 1, collect_cb, &c), 0);
	ck_assert_uint_eq(input_parse(&p, b, 2 * REC + 5, collect_cb, &c), 2 * REC);
	ck_assert_uint_eq(c.n, 0);
}
END_TEST

/* Split anywhere, carried the way the driver carries it: the same samples as in one piece. */
START_TEST(test_parse_any_split)
{
	enum { FRAMES = 40 };
	struct input_event all[FRAMES * FRAME_RECS];
	unsigned char carry[2 * REC + 64 * REC];
	struct collect whole = {.n = 0}, split = {.n = 0};
	struct evdev_parser p1 = {0}, p2 = {0};
	const unsigned char *bytes = (const unsigned char *)all;
	size_t off = 0, have = 0;

	printf("test_parse_any_split: seed 0x%x\n", SEED);
	rnd_state = SEED;
	for (unsigned i = 0; i < FRAMES; i++)
		frame(all + i * FRAME_RECS, i);
	input_parse(&p1, all, sizeof(all), collect_cb, &whole);
	while (off < sizeof(all)) {
		size_t chunk = 1 + rnd() % (3 * REC), used;

		if (chunk > sizeof(all) - off)
			chunk = sizeof(all) - off;
		memcpy(carry + have, bytes + off, chunk);
		off += chunk;
		have += chunk;
		used = input_parse(&p2, carry, have, collect_cb, &split);
		ck_assert_uint_eq(used % REC, 0);
		memmove(carry, carry + used, have - used);
		have -= used;
	}
	ck_assert_uint_eq(have, 0);
	ck_assert_uint_eq(whole.n, FRAMES);
	ck_assert_uint_eq(split.n, FRAMES);
	ck_assert_mem_eq(whole.t, split.t, FRAMES * sizeof(uint64_t));
}
END_TEST

START_TEST(test_classify)
{
	struct evdev_caps c;

	memset(&c, 0, sizeof(c));
	ck_assert_str_eq(input_classify(&c), "other");

	input_bit_set(c.ev, EV_KEY);
	input_bit_set(c.key, KEY_VOLUMEUP);
	ck_assert_str_eq(input_classify(&c), "other"); /* media keys only */
	input_bit_set(c.key, KEY_Q);
	ck_assert_str_eq(input_classify(&c), "keyboard");

	memset(&c, 0, sizeof(c));
	input_bit_set(c.ev, EV_REL);
	input_bit_set(c.rel, REL_X);
	ck_assert_str_eq(input_classify(&c), "other");
	input_bit_set(c.rel, REL_Y);
	input_bit_set(c.ev, EV_KEY);
	input_bit_set(c.key, BTN_LEFT);
	ck_assert_str_eq(input_classify(&c), "mouse");
	input_bit_set(c.key, KEY_A); /* a node that can type letters is a keyboard */
	ck_assert_str_eq(input_classify(&c), "keyboard");

	memset(&c, 0, sizeof(c));
	input_bit_set(c.ev, EV_ABS);
	input_bit_set(c.abs, ABS_X);
	input_bit_set(c.abs, ABS_Y);
	ck_assert_str_eq(input_classify(&c), "other"); /* a joystick, say */
	input_bit_set(c.ev, EV_KEY);
	input_bit_set(c.key, BTN_TOOL_FINGER);
	ck_assert_str_eq(input_classify(&c), "touchpad");
	ck_assert(input_bit_test(c.key, BTN_TOOL_FINGER));
	ck_assert(!input_bit_test(c.key, BTN_TOUCH));
}
END_TEST

START_TEST(test_glob_match)
{
	char p0[] = "*Logitech*", p1[] = "mouse", p2[] = "/dev/input/event1?";
	char *pats[] = {p0, p1, p2};
	struct strlist l = {pats, ARRAY_SIZE(pats)};
	struct strlist none = {NULL, 0};

	ck_assert_ptr_null(input_glob_match(&none, "event3", "/dev/input/event3", "x", "mouse"));
	ck_assert_str_eq(input_glob_match(&l, "event3", "/dev/input/event3", "Logitech USB", "other"),
			 "*Logitech*");
	ck_assert_str_eq(input_glob_match(&l, "event3", "/dev/input/event3", NULL, "mouse"),
			 "mouse");
	ck_assert_str_eq(input_glob_match(&l, "event12", "/dev/input/event12", NULL, "stream"),
			 "/dev/input/event1?");
	ck_assert_ptr_null(input_glob_match(&l, "event3", "/dev/input/event3", NULL, NULL));
	ck_assert(input_node_name("event0"));
	ck_assert(!input_node_name("mouse0"));
	ck_assert(!input_node_name("by-id"));
}
END_TEST

/* ---- the driver on FIFOs and files ---- */

START_TEST(test_fifo_at_start)
{
	struct inst_info info;
	int w = make_fifo("event0");

	write_frames(w, 0, 50);
	start();
	PUMP_UNTIL(events("event0") >= 50);
	settle();
	ck_assert_int_eq(events("event0"), 50);
	ck_assert(find("event0", &info));
	ck_assert_str_eq(info.kind, "stream");
	ck_assert_str_eq(info.state, "stream");
	ck_assert(!info.kernel_credits); /* only real evdev devices are credited by the kernel */
	ck_assert_uint_eq(feed_pipeline_count(), 1);
	ck_assert(quiet_for(30));
	close(w);
}
END_TEST

START_TEST(test_hotplug_and_remove)
{
	int w;

	start();
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	w = make_fifo("event1");
	PUMP_UNTIL(live("event1"));
	write_frames(w, 0, 7);
	PUMP_UNTIL(events("event1") >= 7);
	ck_assert(unlink(node("event1")) == 0);
	PUMP_UNTIL(!live("event1"));
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	ck_assert_uint_eq(total_events(), 7);
	/* Names that are not event* are not ours. */
	ck_assert_int_eq(mkfifo(node("mouse0"), 0600), 0);
	close(make_fifo("event2"));
	PUMP_UNTIL(live("event2"));
	ck_assert(!live("mouse0"));
	close(w);
}
END_TEST

START_TEST(test_split_frame)
{
	struct input_event f[2 * FRAME_RECS];
	const unsigned char *b = (const unsigned char *)f;
	int w = make_fifo("event0");

	frame(f, 0);
	frame(f + FRAME_RECS, 1);
	start();
	PUMP_UNTIL(live("event0"));
	write_all(w, b, 10);
	settle();
	ck_assert_int_eq(events("event0"), 0);
	write_all(w, b + 10, FRAME_RECS * REC - 10 + 1); /* the rest, and one byte of the next */
	PUMP_UNTIL(events("event0") == 1);
	write_all(w, b + FRAME_RECS * REC + 1, 3 * REC);
	settle();
	ck_assert_int_eq(events("event0"), 1);
	write_all(w, b + FRAME_RECS * REC + 1 + 3 * REC, REC - 1);
	PUMP_UNTIL(events("event0") == 2);
	settle();
	ck_assert_int_eq(events("event0"), 2);
	close(w);
}
END_TEST

START_TEST(test_syn_dropped)
{
	struct input_event d[4];
	int w = make_fifo("event0");

	d[0] = rec(EV_KEY, SECRET_KEY, 1, 1500, 0);
	d[1] = rec(EV_SYN, SYN_DROPPED, 0, 1500, 1);
	d[2] = rec(EV_REL, REL_X, 3, 1500, 2);
	d[3] = rec(EV_SYN, SYN_REPORT, 0, 1500, 3);
	write_frames(w, 0, 1);
	write_all(w, d, sizeof(d));
	write_frames(w, 1, 1);
	start();
	PUMP_UNTIL(events("event0") >= 2);
	settle();
	ck_assert_int_eq(events("event0"), 2);
	close(w);
}
END_TEST

START_TEST(test_excluded_and_disabled)
{
	int w5, w7, w8;

	set_list(&cfg->input.exclude, "event7", "*/event8");
	disable_instance(cfg, "event5");
	feed_pipeline_reconfigure(cfg);
	w5 = make_fifo("event5");
	start();
	w7 = make_fifo("event7");
	w8 = make_fifo("event8");
	close(make_fifo("event9")); /* inotify is in order: once event9 is in, the rest was seen */
	PUMP_UNTIL(live("event9"));
	ck_assert(!live("event5"));
	ck_assert(!live("event7"));
	ck_assert(!live("event8"));
	ck_assert_uint_eq(feed_pipeline_count(), 1);
	/* Never opened: with no reader, a non-blocking writer open fails with ENXIO. */
	close(w5);
	close(w7);
	close(w8);
	errno = 0;
	ck_assert_int_lt(open(node("event5"), O_WRONLY | O_NONBLOCK), 0);
	ck_assert_int_eq(errno, ENXIO);
	ck_assert_int_lt(open(node("event7"), O_WRONLY | O_NONBLOCK), 0);
	ck_assert_int_eq(errno, ENXIO);
	ck_assert_int_lt(open(node("event8"), O_WRONLY | O_NONBLOCK), 0);
	ck_assert_int_eq(errno, ENXIO);
	/* A change of attributes does not open them either. */
	ck_assert_int_eq(chmod(node("event7"), 0640), 0);
	close(make_fifo("event10"));
	PUMP_UNTIL(live("event10"));
	ck_assert(!live("event7"));
}
END_TEST

START_TEST(test_include_and_kind)
{
	set_list(&cfg->input.include, "event3", NULL);
	close(make_fifo("event3"));
	close(make_fifo("event4"));
	start();
	PUMP_UNTIL(live("event3"));
	settle();
	ck_assert(!live("event4"));
	/* The kind is a pattern subject too: streams excluded by kind. The node is opened to
	 * learn its kind, then closed at once; settle() runs the queued inotify events. */
	set_list(&cfg->input.include, NULL, NULL);
	set_list(&cfg->input.exclude, "stream", NULL);
	close(make_fifo("event6"));
	settle();
	ck_assert(!live("event6"));
	ck_assert(live("event3"));
}
END_TEST

START_TEST(test_file_replay)
{
	make_frames_file("event3", 30, false);
	start();
	make_frames_file("event4", 20, true);
	PUMP_UNTIL(total_events() == 50 && feed_pipeline_count() == 0);
	ck_assert(quiet_for(30)); /* an ended file leaves nothing active behind */
	/* Touching an ended file does not read it again; replacing it does. */
	ck_assert_int_eq(chmod(node("event3"), 0640), 0);
	close(make_fifo("event9"));
	PUMP_UNTIL(live("event9"));
	settle();
	ck_assert_uint_eq(total_events(), 50);
	make_frames_file("event3", 5, true);
	PUMP_UNTIL(total_events() == 55);
	PUMP_UNTIL(!live("event3"));
}
END_TEST

START_TEST(test_garbage)
{
	unsigned char junk[24 * 500 + 13];
	struct evdev_parser p = {0};
	struct collect c = {.n = 0};
	struct input_event bad[3];
	struct inst_info info;
	int w;

	printf("test_garbage: seed 0x%x\n", SEED);
	rnd_state = SEED;
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rnd();
	/* Make a few records look like reports, with both good and absurd timestamps. */
	for (size_t i = 0; i < 20; i++) {
		struct input_event e = rec(EV_SYN, SYN_REPORT, 0, (long)(rnd() % 4000) - 1000,
					   (long)(rnd() % 2000000));

		memcpy(junk + REC * (i * 17 % 500), &e, REC);
	}
	input_parse(&p, junk, sizeof(junk), collect_cb, &c);
	ck_assert_uint_gt(c.n, 0);
	ck_assert_uint_gt(p.bad_time, 0);

	make_file(watchdir, "event20", junk, sizeof(junk), false);
	make_file(watchdir, "event21", junk, 10, false);
	make_file(watchdir, "event22", junk, 0, false);
	ck_assert_int_eq(mkdir(node("event23"), 0700), 0);
	/* A link to a character device that is not evdev: never read (/dev/zero would never
	 * end); it has a row that says why. */
	ck_assert_int_eq(symlink("/dev/zero", node("event24")), 0);
	bad[0] = rec(EV_SYN, SYN_REPORT, 0, 5, 1000000);
	bad[1] = rec(EV_SYN, SYN_REPORT, 0, -5, 0);
	bad[2] = rec(EV_SYN, SYN_REPORT, 0, 5, -1);
	make_file(watchdir, "event25", bad, sizeof(bad), false);
	w = make_fifo("event26");
	write_all(w, junk, sizeof(junk));
	start();
	PUMP_UNTIL(events("event26") == (long long)c.n);
	/* The junk past its last report is read too before the loop may be quiet: one wakeup
	 * reads 512 records, all of it where a record is 24 bytes, not where it is 16 (32-bit
	 * machines: 750 records). */
	PUMP_UNTIL(unread(w) == 0);
	/* event26, and event24's row saying why it was not opened. */
	PUMP_UNTIL(feed_pipeline_count() == 2);
	ck_assert_uint_eq(total_events(), 2 * c.n);
	ck_assert(!live("event23"));
	ck_assert(find("event24", &info));
	ck_assert_uint_eq(info.c.events, 0);
	ck_assert_str_eq(info.kind, "");
	/* The privileged side never follows the link: EACCES. */
	ck_assert_msg(strncmp(info.state, "cannot open ", 12) == 0 &&
			      strstr(info.state, "Permission denied") != NULL,
		      "event24's state: %s", info.state);
	ck_assert(quiet_for(30));
	close(w);
}
END_TEST

START_TEST(test_writer_close_no_spin)
{
	int w;

	ck_assert_int_eq(mkfifo(node("event0"), 0600), 0);
	start();
	PUMP_UNTIL(live("event0"));
	w = open(node("event0"), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(w, 0);
	write_frames(w, 0, 3);
	close(w);
	PUMP_UNTIL(events("event0") == 3);
	ck_assert(quiet_for(50));
	ck_assert(live("event0"));
	/* Another writer later is read as before. */
	w = open(node("event0"), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(w, 0);
	write_frames(w, 3, 2);
	close(w);
	PUMP_UNTIL(events("event0") == 5);
}
END_TEST

START_TEST(test_missing_then_appearing_dir)
{
	tu_rm_tree(watchdir);
	start();
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	ck_assert(quiet_for(30)); /* waiting for the directory costs nothing */
	ck_assert_int_eq(mkdir(watchdir, 0700), 0);
	close(make_fifo("event0"));
	PUMP_UNTIL(live("event0"));
	/* It goes away again and comes back. */
	ck_assert_int_eq(unlink(node("event0")), 0);
	ck_assert_int_eq(rmdir(watchdir), 0);
	PUMP_UNTIL(!live("event0"));
	settle();
	ck_assert(quiet_for(30));
	ck_assert_int_eq(mkdir(watchdir, 0700), 0);
	close(make_fifo("event1"));
	PUMP_UNTIL(live("event1"));
}
END_TEST

START_TEST(test_reload)
{
	struct inst_info info;
	const char *name0;
	struct config *next;
	char otherdir[256], path9[300];
	int w0 = make_fifo("event0"), w1 = make_fifo("event1"), w9;

	start();
	write_frames(w0, 0, 3);
	write_frames(w1, 0, 2);
	PUMP_UNTIL(events("event0") == 3 && events("event1") == 2);
	ck_assert(find("event0", &info));
	name0 = info.name;

	/* Newly excluded: closed. Still allowed: the same instance, counters and all. */
	next = new_config(watchdir);
	set_list(&next->input.exclude, "event1", NULL);
	reload(next);
	ck_assert(!live("event1"));
	ck_assert(find("event0", &info));
	ck_assert_ptr_eq(info.name, name0);
	ck_assert_uint_eq(info.c.events, 3);
	write_frames(w0, 3, 1);
	PUMP_UNTIL(events("event0") == 4);

	/* Policy-disabled now: closed; no longer excluded: opened afresh. */
	next = new_config(watchdir);
	disable_instance(next, "event0");
	reload(next);
	ck_assert(!live("event0"));
	ck_assert(live("event1"));
	ck_assert_int_eq(events("event1"), 0);
	write_frames(w1, 2, 2);
	PUMP_UNTIL(events("event1") == 2);
	ck_assert_uint_eq(total_events(), 8); /* 4 + 2 detached, 2 live */

	/* Another watch directory: the old nodes go, the new ones come. */
	snprintf(otherdir, sizeof(otherdir), "%s/other", tmpdir);
	ck_assert_int_eq(mkdir(otherdir, 0700), 0);
	snprintf(path9, sizeof(path9), "%s/event9", otherdir);
	ck_assert_int_eq(mkfifo(path9, 0600), 0);
	next = new_config(otherdir);
	reload(next);
	ck_assert(!live("event1"));
	PUMP_UNTIL(live("event9"));
	strcpy(watchdir, otherdir);
	w9 = open(node("event9"), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(w9, 0);
	write_frames(w9, 0, 4);
	PUMP_UNTIL(events("event9") == 4);
	/* The new directory is watched. */
	close(make_fifo("event10"));
	PUMP_UNTIL(live("event10"));
	close(w0);
	close(w1);
	close(w9);
}
END_TEST

static Suite *evdev_suite(void)
{
	Suite *s = suite_create("evdev");
	TCase *pure = tcase_create("parse");
	TCase *drv = tcase_create("driver");

	tcase_add_test(pure, test_parse_frames);
	tcase_add_test(pure, test_parse_any_split);
	tcase_add_test(pure, test_classify);
	tcase_add_test(pure, test_glob_match);
	suite_add_tcase(s, pure);

	tcase_add_checked_fixture(drv, setup, teardown);
	tcase_set_timeout(drv, 30);
	tcase_add_test(drv, test_fifo_at_start);
	tcase_add_test(drv, test_hotplug_and_remove);
	tcase_add_test(drv, test_split_frame);
	tcase_add_test(drv, test_syn_dropped);
	tcase_add_test(drv, test_excluded_and_disabled);
	tcase_add_test(drv, test_include_and_kind);
	tcase_add_test(drv, test_file_replay);
	tcase_add_test(drv, test_garbage);
	tcase_add_test(drv, test_writer_close_no_spin);
	tcase_add_test(drv, test_missing_then_appearing_dir);
	tcase_add_test(drv, test_reload);
	suite_add_tcase(s, drv);
	return s;
}

int main(void)
{
	return tu_run_suite(evdev_suite());
}
