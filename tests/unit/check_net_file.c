/* check_net_file: a savefile as the network source (net_file.c), through the driver and the
 * real pipeline: a table of pcap and pcapng files written byte by byte here (the headers of
 * pcap-savefile(5) and of the pcapng draft: a section, an interface, enhanced packets), each
 * replayed whole or refused whole with the reason it logs, nothing of a refused file used;
 * what is not a regular file, or is not there, is an error that names it. */
#include "autoconf.h"

#include <check.h>
#include <event2/event.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "log.h"
#include "net.h"
#include "source.h"
#include "testutil.h"
#include "util.h"

static struct event_base *base;
static struct config *cfg;
static struct pool pool;
static struct source src;
static bool started;

static void setup(void)
{
	log_open(true, 1);
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	cfg = config_defaults();
	cfg->policy[CLASS_NETWORK].rule.mode = MODE_TRUSTED;
	cfg->network.max_events_per_second = 100000000;
	feed_pool_init(&pool);
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
	memset(&src, 0, sizeof(src));
	started = false;
}

static void teardown(void)
{
	if (started)
		source_stop(&src);
	ck_assert_ptr_null(src.priv);
	feed_pipeline_fini();
	config_free(cfg);
	event_base_free(base);
}

/* The state's first word (the dominant share may follow it) is word. */
static bool state_is(const char *state, const char *word)
{
	size_t n = strlen(word);

	return strncmp(state, word, n) == 0 && (state[n] == '\0' || state[n] == ' ');
}

static bool finished(const char *name)
{
	struct inst_info in;

	return tu_instance(CLASS_NETWORK, name, &in) &&
	       (state_is(in.state, "ended") || state_is(in.state, "refused") ||
		state_is(in.state, "error"));
}

/* The savefile at tu_tmpdir()/name replayed to its end (or refused); what was logged. */
static char *replay(const char *name, struct inst_info *in)
{
	free(cfg->network.file);
	cfg->network.file = xasprintf("%s/%s", tu_tmpdir(), name);
	tu_capture_begin();
	ck_assert_int_eq(source_start(&src, &net_source_ops, base, cfg), 0);
	started = true;
	for (int turn = 0; turn < 3000 && !finished(name); turn++)
		tu_turn(base);
	ck_assert_msg(tu_instance(CLASS_NETWORK, name, in), "no instance %s", name);
	return tu_capture_end();
}

/* ---- savefiles, byte by byte ---- */

enum format { PCAP_US, PCAP_NS, PCAPNG, JUNK, EMPTY };

struct rec {
	uint32_t sec, frac; /* the fraction in the file's unit */
	uint32_t caplen, len;
	uint32_t src;       /* the frame's IPv4 source */
};

static void put32(FILE *f, uint32_t v)
{
	ck_assert_uint_eq(fwrite(&v, 4, 1, f), 1);
}

static void put16(FILE *f, uint16_t v)
{
	ck_assert_uint_eq(fwrite(&v, 2, 1, f), 1);
}

/* A record's frame: the first caplen bytes of a 60-byte UDP frame, zeros after it. */
static void put_frame(FILE *f, const struct rec *r, uint32_t bytes)
{
	uint8_t frame[64];
	static const uint8_t zero[256];

	tu_frame_ipv4(frame, r->src);
	ck_assert_uint_eq(fwrite(frame, 1, bytes < 60 ? bytes : 60, f), bytes < 60 ? bytes : 60);
	for (uint32_t left = bytes > 60 ? bytes - 60 : 0; left;) {
		uint32_t n = left < sizeof(zero) ? left : (uint32_t)sizeof(zero);

		ck_assert_uint_eq(fwrite(zero, 1, n, f), n);
		left -= n;
	}
}

/* pcap-savefile(5), in host byte order: the magic number tells the fraction's unit. An
 * absurd caplen is written with a whole frame only. */
static void put_pcap(FILE *f, bool nano, const struct rec *r, size_t n)
{
	put32(f, nano ? 0xa1b23c4d : 0xa1b2c3d4);
	put16(f, 2);
	put16(f, 4);
	put32(f, 0);
	put32(f, 0);
	put32(f, 65535);
	put32(f, DLT_EN10MB);
	for (size_t i = 0; i < n; i++) {
		put32(f, r[i].sec);
		put32(f, r[i].frac);
		put32(f, r[i].caplen);
		put32(f, r[i].len);
		put_frame(f, &r[i], r[i].caplen > 4096 ? 60 : r[i].caplen);
	}
}

/* pcapng: a section header, one Ethernet interface with the default resolution (us), an
 * enhanced packet block a record (a 64-bit timestamp in us, split high and low). */
static void put_pcapng(FILE *f, const struct rec *r, size_t n)
{
	put32(f, 0x0a0d0d0a); /* section header block */
	put32(f, 28);
	put32(f, 0x1a2b3c4d);
	put16(f, 1);
	put16(f, 0);
	put32(f, 0xffffffff); /* section length: not given */
	put32(f, 0xffffffff);
	put32(f, 28);
	put32(f, 1); /* interface description block */
	put32(f, 20);
	put16(f, DLT_EN10MB);
	put16(f, 0);
	put32(f, 65535);
	put32(f, 20);
	for (size_t i = 0; i < n; i++) {
		uint64_t us = (uint64_t)r[i].sec * 1000000 + r[i].frac;
		uint32_t padded = (r[i].caplen + 3) & ~3u;

		put32(f, 6); /* enhanced packet block */
		put32(f, 32 + padded);
		put32(f, 0);
		put32(f, (uint32_t)(us >> 32));
		put32(f, (uint32_t)us);
		put32(f, r[i].caplen);
		put32(f, r[i].len);
		put_frame(f, &r[i], padded);
		put32(f, 32 + padded);
	}
}

static void write_file(const char *name, enum format fmt, const struct rec *r, size_t n,
		       long cut)
{
	char *path = xasprintf("%s/%s", tu_tmpdir(), name);
	FILE *f = fopen(path, "wbe");
	long size;

	ck_assert_msg(f != NULL, "%s", path);
	if (fmt == PCAP_US || fmt == PCAP_NS)
		put_pcap(f, fmt == PCAP_NS, r, n);
	else if (fmt == PCAPNG)
		put_pcapng(f, r, n);
	else if (fmt == JUNK)
		ck_assert_int_ge(fputs("this is not a savefile, only words in a file\n", f), 0);
	size = ftell(f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(truncate(path, size - cut), 0);
	free(path);
}

#define GOOD3                                                                              \
	{{1700000000, 1, 60, 60, 0x0a000001},                                              \
	 {1700000000, 2000, 60, 60, 0x0a000002},                                           \
	 {1700000001, 500, 60, 60, 0x0a000001}}

static const struct {
	const char *name;
	enum format fmt;
	struct rec r[3];
	size_t n;
	long cut; /* bytes cut off the end */
	const char *state;
	uint64_t events;
	const char *said; /* in the log */
} files[] = {
	{"us.pcap", PCAP_US, GOOD3, 3, 0, "ended", 3, "replayed 3 packets (3 matched the filter)"},
	{"ns.pcap", PCAP_NS, GOOD3, 3, 0, "ended", 3, "replayed 3 packets (3 matched the filter)"},
	{"us.pcapng", PCAPNG, GOOD3, 3, 0, "ended", 3, ": 3 packets, link type EN10MB"},
	{"header.pcap", PCAP_US, {{0}}, 0, 0, "ended", 0, "replayed 0 packets"},
	{"empty.pcap", EMPTY, {{0}}, 0, 0, "refused", 0,
	 "refused, nothing of it is used: the file is empty"},
	{"words.pcap", JUNK, {{0}}, 0, 0, "refused", 0,
	 "refused, nothing of it is used: not a pcap or pcapng savefile (unknown file format)"},
	{"cut.pcap", PCAP_US, GOOD3, 3, 5, "refused", 0,
	 "the savefile is truncated or corrupt after 2 good packets"},
	{"cuthdr.pcap", PCAP_US, GOOD3, 3, 60 + 9, "refused", 0,
	 "the savefile is truncated or corrupt after 2 good packets"},
	{"cut.pcapng", PCAPNG, GOOD3, 3, 6, "refused", 0,
	 "the savefile is truncated or corrupt after 2 good packets"},
	{"caplen.pcap", PCAP_US,
	 {{1700000000, 1, 60, 60, 1}, {1700000000, 2, 60, 50, 2}, {1700000000, 3, 60, 60, 1}}, 3,
	 0, "refused", 0,
	 "1 of its 3 packets have an invalid timestamp or length: the savefile is corrupt"},
	{"usfield.pcap", PCAP_US,
	 {{1700000000, 1, 60, 60, 1}, {1700000000, 1000000, 60, 60, 2}}, 2, 0, "refused", 0,
	 "1 of its 2 packets have an invalid timestamp or length: the savefile is corrupt"},
	{"nsfield.pcap", PCAP_NS,
	 {{1700000000, 1500000000, 60, 60, 1}, {1700000000, 1, 60, 60, 2}}, 2, 0, "refused", 0,
	 "1 of its 2 packets have an invalid timestamp or length: the savefile is corrupt"},
	{"absurd.pcap", PCAP_US,
	 {{1700000000, 1, 60, 60, 1}, {1700000000, 2, 0x7fffffff, 0x7fffffff, 2}}, 2, 0,
	 "refused", 0, "the savefile is truncated or corrupt after 1 good packets"},
};

START_TEST(test_files)
{
	struct inst_info in;
	char *said;

	write_file(files[_i].name, files[_i].fmt, files[_i].r, files[_i].n, files[_i].cut);
	said = replay(files[_i].name, &in);
	ck_assert_msg(state_is(in.state, files[_i].state), "%s: state %s; said: %s",
		      files[_i].name, in.state, said);
	ck_assert_uint_eq(in.c.events, files[_i].events);
	ck_assert_msg(strstr(said, files[_i].said), "%s: said: %s", files[_i].name, said);
	if (strcmp(files[_i].state, "refused") == 0)
		ck_assert_msg(strstr(said, "network/"), "the instance is not named: %s", said);
	free(said);
}
END_TEST

/* The filter applies to the replay, after the whole file was checked. */
START_TEST(test_filter)
{
	static const struct rec r[] = GOOD3;
	struct inst_info in;
	char *said;

	free(cfg->network.capture.filter);
	cfg->network.capture.filter = xstrdup("src host 10.0.0.1");
	write_file("filtered.pcap", PCAP_NS, r, ARRAY_SIZE(r), 0);
	said = replay("filtered.pcap", &in);
	ck_assert_msg(state_is(in.state, "ended"), "state %s", in.state);
	ck_assert_uint_eq(in.c.events, 2);
	ck_assert_msg(strstr(said, "replayed 3 packets (2 matched the filter)"), "said: %s", said);
	free(said);
}
END_TEST

/* Not there, a directory, a FIFO (opened without waiting for a writer): an error that names
 * the file; nothing read. */
START_TEST(test_not_a_file)
{
	static const struct {
		const char *name, *said;
	} t[] = {
		{"missing.pcap", "cannot open the savefile "},
		{"dir.pcap", " is not a regular file"},
		{"fifo.pcap", " is not a regular file"},
	};
	char *path = xasprintf("%s/dir.pcap", tu_tmpdir());

	ck_assert_int_eq(mkdir(path, 0700), 0);
	free(path);
	path = xasprintf("%s/fifo.pcap", tu_tmpdir());
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	free(path);
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct inst_info in;
		char *said;

		if (started)
			source_stop(&src);
		started = false;
		said = replay(t[i].name, &in);
		ck_assert_msg(state_is(in.state, "error"), "%s: state %s", t[i].name, in.state);
		ck_assert_uint_eq(in.c.events, 0);
		ck_assert_msg(strstr(said, t[i].said) && strstr(said, t[i].name), "%s: said: %s",
			      t[i].name, said);
		free(said);
	}
}
END_TEST

static Suite *net_file_suite(void)
{
	Suite *s = suite_create("net_file");
	TCase *tc = tcase_create("savefiles");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_files, 0, ARRAY_SIZE(files));
	tcase_add_test(tc, test_filter);
	tcase_add_test(tc, test_not_a_file);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_file_suite());
}
