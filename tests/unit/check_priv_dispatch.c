/* check_priv_dispatch: the privileged process's answer to each message (priv_dispatch.c),
 * driven through its real loop (priv_serve) over a socketpair, as a compromised collector
 * would send them: every message of the fuzz corpus (tests/fuzz/corpus/priv) and a table of
 * malformed ones, each with its expected answer (the replies' errnos, or the reason the
 * connection was closed), under a configuration that allows nothing; then, as root, what a
 * configuration allows: an input node handed over as a descriptor. */
#include "autoconf.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "priv_dispatch.h"
#include "priv_serve.h"
#include "priv_wire.h"
#include "testutil.h"
#include "util.h"

#define CORPUS SRCDIR "/tests/fuzz/corpus/priv"
#define NO_CONFIG "/nonexistent/entropyd.conf"
#define MAX_REPLIES 16

/* What the loop answered: the replies (type and errno), whether one carried a descriptor, the
 * exit status and what it logged. */
struct answer {
	int n;
	struct priv_reply rep[MAX_REPLIES];
	int fds;
	int status;
	char *log;
};

/* A configuration in which every class is disabled: nothing privileged may succeed. */
static struct config *nothing_allowed(void)
{
	struct config *cfg = config_defaults();

	for (int c = 0; c < CLASS_COUNT; c++)
		cfg->policy[c].rule.mode = MODE_DISABLED;
	return cfg;
}

/* Send each of msgs (lens[i] bytes) on a socketpair, end it, run the loop on the other end
 * with cfg (taken) and read back every reply. */
static struct answer serve(struct config *cfg, const char *path, const void *const *msgs,
			   const size_t *lens, int n)
{
	struct answer a = {0};
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(send(sv[1], msgs[i], lens[i], MSG_DONTWAIT), (ssize_t)lens[i]);
	shutdown(sv[1], SHUT_WR);
	tu_capture_begin();
	a.status = priv_serve(sv[0], cfg, path, -1, 0);
	a.log = tu_capture_end();
	for (;;) {
		struct priv_reply rep;
		struct iovec iov = {.iov_base = &rep, .iov_len = sizeof(rep)};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};
		ssize_t got = recvmsg(sv[1], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (got <= 0)
			break;
		ck_assert_int_eq(got, sizeof(rep));
		ck_assert_int_lt(a.n, MAX_REPLIES);
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			int fd;

			ck_assert(cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS);
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
			close(fd);
			a.fds++;
		}
		a.rep[a.n++] = rep;
	}
	close(sv[1]);
	return a;
}

/* The messages of a corpus file: a length byte (times 4) and that many bytes, as
 * tests/fuzz/fuzz_priv.c cuts them. */
static int corpus_messages(const char *name, char **buf, const void **msgs, size_t *lens)
{
	char *path = xasprintf("%s/%s", CORPUS, name);
	size_t size, at = 0;
	int n = 0;

	*buf = tu_read_file(path, &size);
	free(path);
	while (at < size && n < MAX_REPLIES) {
		size_t len = (size_t)(unsigned char)(*buf)[at++] * 4;

		if (len > size - at)
			len = size - at;
		msgs[n] = *buf + at;
		lens[n++] = len;
		at += len;
	}
	return n;
}

/* Each file of the corpus and what the privileged process answers it with, under a
 * configuration that allows nothing and without /dev/random. */
static const struct corpus_case {
	const char *file;
	const char *closed; /* the reason the connection is closed, or NULL: it stays */
	int n;              /* replies before that */
	enum priv_type type[5];
	int err[5];
} corpus_cases[] = {
	/* RESEED and ADD_ENTROPY without /dev/random, two NOTIFYs (STATUS, WATCHDOG) relayed,
	 * RELOAD of a configuration that is not there */
	{"answered", NULL, 5,
	 {PRIV_RESEED, PRIV_ADD_ENTROPY, PRIV_NOTIFY, PRIV_NOTIFY, PRIV_RELOAD},
	 {EBADF, EBADF, 0, 0, EPERM}},
	{"bad-type", "the collector sent a message of unknown type 99", 0, {0}, {0}},
	{"bad-version", "the collector sent a message of version 5 (this is 4)", 0, {0}, {0}},
	{"blktrace", NULL, 1, {PRIV_BLKTRACE_START}, {EACCES}},
	{"blktrace-stop", "BLKTRACE_STOP on loop0, which it did not start", 0, {0}, {0}},
	{"input", NULL, 1, {PRIV_INPUT_OPEN}, {EACCES}},
	{"oversized", "the collector sent a message of type 2 and 24 bytes (8 said)", 0, {0}, {0}},
	{"packet", NULL, 1, {PRIV_PACKET_SOCKET}, {EACCES}},
	{"packet-filter", NULL, 1, {PRIV_PACKET_FILTER}, {ENOENT}},
	{"perf", NULL, 1, {PRIV_PERF_OPEN}, {EACCES}},
	{"relay", "RELAY_OPEN of loop0, which it did not start", 0, {0}, {0}},
	{"short", "the collector sent a message of 4 bytes", 0, {0}, {0}},
	{"size-lie", "the collector sent a message of type 2 and 8 bytes (528 said)", 0, {0}, {0}},
};
#define N_CORPUS (sizeof(corpus_cases) / sizeof(corpus_cases[0]))

static void check_answer(const char *what, const struct answer *a, const char *closed, int n,
			 const enum priv_type *type, const int *err)
{
	ck_assert_msg(a->n == n, "%s: %d replies, want %d", what, a->n, n);
	for (int i = 0; i < n; i++) {
		ck_assert_msg(a->rep[i].h.version == PRIV_VERSION &&
				      a->rep[i].h.size == sizeof(struct priv_reply),
			      "%s: reply %d is not a whole reply", what, i);
		ck_assert_msg(a->rep[i].h.type == type[i], "%s: reply %d of type %u, want %u", what,
			      i, a->rep[i].h.type, type[i]);
		ck_assert_msg(a->rep[i].err == err[i], "%s: reply %d: errno %d (%s), want %d (%s)",
			      what, i, a->rep[i].err, strerror(a->rep[i].err), err[i],
			      strerror(err[i]));
	}
	ck_assert_msg(a->fds == 0, "%s: a reply carried a descriptor", what);
	if (closed) {
		char *want = xasprintf("privileged process: %s", closed);

		ck_assert_msg(a->status == EXIT_LOST, "%s: status %d, want EXIT_LOST", what,
			      a->status);
		ck_assert_msg(strstr(a->log, want) && strstr(a->log, ": closing the connection"),
			      "%s: want \"%s...: closing the connection\" in the log, got: %s",
			      what, want, a->log);
		free(want);
	} else {
		ck_assert_msg(a->status == EXIT_OK, "%s: status %d, want EXIT_OK", what, a->status);
		ck_assert_msg(!strstr(a->log, "closing the connection"), "%s: closed: %s", what,
			      a->log);
	}
}

START_TEST(test_corpus)
{
	const struct corpus_case *c = &corpus_cases[_i];
	const void *msgs[MAX_REPLIES];
	size_t lens[MAX_REPLIES];
	char *buf;
	int n = corpus_messages(c->file, &buf, msgs, lens);
	struct answer a = serve(nothing_allowed(), NO_CONFIG, msgs, lens, n);

	check_answer(c->file, &a, c->closed, c->n, c->type, c->err);
	free(a.log);
	free(buf);
}
END_TEST

/* A new corpus file needs its expected answer here. */
START_TEST(test_corpus_complete)
{
	DIR *d = opendir(CORPUS);
	struct dirent *e;
	size_t files = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		bool known = false;

		if (e->d_name[0] == '.')
			continue;
		for (size_t i = 0; i < N_CORPUS; i++)
			known = known || strcmp(corpus_cases[i].file, e->d_name) == 0;
		ck_assert_msg(known, "corpus file %s has no expected answer in corpus_cases",
			      e->d_name);
		files++;
	}
	closedir(d);
	ck_assert_uint_eq(files, N_CORPUS);
}
END_TEST

/* ---- malformed messages, each closing the connection ---- */

static void m_bits_over(union priv_req *r) { r->entropy.len = 1; r->entropy.bits = 9; }
static void m_bits_negative(union priv_req *r) { r->entropy.len = 8; r->entropy.bits = -1; }
static void m_len_over(union priv_req *r) { r->entropy.len = PRIV_ENTROPY_BYTES + 1; }
static void m_notify_kind(union priv_req *r) { r->notify.what = PRIV_N_STATUS + 1; }
static void m_notify_control(union priv_req *r)
{
	r->notify.what = PRIV_N_STATUS;
	memcpy(r->notify.text, "a\nb", 3);
}
static void m_notify_hidden(union priv_req *r)
{
	r->notify.what = PRIV_N_STATUS;
	memcpy(r->notify.text, "ab\0c", 4);
}
static void m_notify_text_not_status(union priv_req *r)
{
	r->notify.what = PRIV_N_READY;
	r->notify.text[0] = 'x';
}
static void m_notify_unterminated(union priv_req *r)
{
	r->notify.what = PRIV_N_STATUS;
	memset(r->notify.text, 'x', sizeof(r->notify.text));
}
static void m_perf_cpu(union priv_req *r) { r->perf.cpu = 1u << 20; }
static void m_perf_kind(union priv_req *r) { r->perf.what = PRIV_PERF_WAKER + 1; }
static void m_perf_flags(union priv_req *r) { r->perf.flags = 2; }
static void m_blkt_dotdot(union priv_req *r) { strcpy(r->blkt.name, ".."); }
static void m_blkt_slash(union priv_req *r) { strcpy(r->blkt.name, "loop0/../sda"); }
static void m_blkt_empty(union priv_req *r) { (void)r; }
static void m_blkt_teardown(union priv_req *r)
{
	strcpy(r->blkt.name, "loop0");
	r->blkt.teardown = 1;
}
static void m_blkt_stop_flag(union priv_req *r)
{
	strcpy(r->blkt.name, "loop0");
	r->blkt.teardown = 2;
}
static void m_packet_stream(union priv_req *r)
{
	r->packet.type = SOCK_STREAM;
	r->packet.ifindex = 1;
}
static void m_packet_protocol(union priv_req *r)
{
	r->packet.type = SOCK_RAW;
	r->packet.protocol = 3;
	r->packet.ifindex = 1;
}
static void m_packet_ifindex(union priv_req *r) { r->packet.type = SOCK_RAW; }
static void m_filter_ifindex(union priv_req *r) { r->packet_filter.keep = 1; }
static void m_input_name(union priv_req *r) { strcpy(r->input.name, "mouse0"); }
static void m_input_dots(union priv_req *r) { strcpy(r->input.name, "event0/../../x"); }
static void m_relay_cpu(union priv_req *r)
{
	strcpy(r->relay.name, "loop0");
	r->relay.cpu = 1u << 20;
}
static void m_nothing(union priv_req *r) { (void)r; }

static const struct malformed {
	enum priv_type type;
	void (*fill)(union priv_req *r);
	size_t extra; /* bytes beyond the type's size */
	const char *closed;
} malformed[] = {
	{PRIV_ADD_ENTROPY, m_bits_over, 0, "ADD_ENTROPY with 1 bytes and 9 bits"},
	{PRIV_ADD_ENTROPY, m_bits_negative, 0, "ADD_ENTROPY with 8 bytes and -1 bits"},
	{PRIV_ADD_ENTROPY, m_len_over, 0, "ADD_ENTROPY with 513 bytes and 0 bits"},
	{PRIV_NOTIFY, m_notify_kind, 0, "NOTIFY of kind 5 with text not allowed"},
	{PRIV_NOTIFY, m_notify_control, 0, "NOTIFY of kind 4 with text not allowed"},
	{PRIV_NOTIFY, m_notify_hidden, 0, "NOTIFY of kind 4 with text not allowed"},
	{PRIV_NOTIFY, m_notify_text_not_status, 0, "NOTIFY of kind 0 with text not allowed"},
	{PRIV_NOTIFY, m_notify_unterminated, 0, "NOTIFY of kind 4 with text not allowed"},
	{PRIV_PERF_OPEN, m_perf_cpu, 0, "PERF_OPEN of kind 0 on CPU 1048576 (flags 0)"},
	{PRIV_PERF_OPEN, m_perf_kind, 0, "PERF_OPEN of kind 3 on CPU 0 (flags 0)"},
	{PRIV_PERF_OPEN, m_perf_flags, 0, "PERF_OPEN of kind 0 on CPU 0 (flags 0x2)"},
	{PRIV_BLKTRACE_START, m_blkt_dotdot, 0, "BLKTRACE request with a malformed disk name"},
	{PRIV_BLKTRACE_START, m_blkt_slash, 0, "BLKTRACE request with a malformed disk name"},
	{PRIV_BLKTRACE_START, m_blkt_empty, 0, "BLKTRACE request with a malformed disk name"},
	{PRIV_BLKTRACE_START, m_blkt_teardown, 0, "BLKTRACE request with a malformed disk name"},
	{PRIV_BLKTRACE_STOP, m_blkt_stop_flag, 0, "BLKTRACE request with a malformed disk name"},
	{PRIV_PACKET_SOCKET, m_packet_stream, 0, "PACKET_SOCKET of type 1, protocol 0, interface 1"},
	{PRIV_PACKET_SOCKET, m_packet_protocol, 0,
	 "PACKET_SOCKET of type 3, protocol 3, interface 1"},
	{PRIV_PACKET_SOCKET, m_packet_ifindex, 0, "PACKET_SOCKET of type 3, protocol 0, interface 0"},
	{PRIV_PACKET_FILTER, m_filter_ifindex, 0, "PACKET_FILTER on interface 0"},
	{PRIV_INPUT_OPEN, m_input_name, 0, "INPUT_OPEN with a malformed node name"},
	{PRIV_INPUT_OPEN, m_input_dots, 0, "INPUT_OPEN with a malformed node name"},
	{PRIV_RELAY_OPEN, m_relay_cpu, 0, "RELAY_OPEN with a malformed trace name or CPU 1048576"},
	{PRIV_RELAY_OPEN, m_nothing, 0, "RELAY_OPEN with a malformed trace name or CPU 0"},
	{PRIV_RESEED, m_nothing, 4, "the collector sent a message of type 2 and 12 bytes (12 said)"},
	{PRIV_RELOAD, m_nothing, 8, "the collector sent a message of type 8 and 16 bytes (16 said)"},
};

START_TEST(test_malformed)
{
	const struct malformed *m = &malformed[_i];
	union priv_req req[2]; /* room for the extra bytes */
	size_t len = priv_dispatch_size(m->type) + m->extra;
	const void *msgs[1] = {req};
	struct answer a;

	memset(req, 0, sizeof(req));
	m->fill(&req[0]);
	req[0].h.version = PRIV_VERSION;
	req[0].h.type = (uint16_t)m->type;
	req[0].h.size = (uint32_t)len;
	a = serve(nothing_allowed(), NO_CONFIG, msgs, &len, 1);
	check_answer(m->closed, &a, m->closed, 0, NULL, NULL);
	free(a.log);
}
END_TEST

/* Every type's size is its struct's, and no other number is a type. */
START_TEST(test_sizes)
{
	static const size_t want[PRIV_TYPE_MAX + 1] = {
		[PRIV_ADD_ENTROPY] = sizeof(struct req_entropy),
		[PRIV_RESEED] = sizeof(struct priv_hdr),
		[PRIV_PERF_OPEN] = sizeof(struct req_perf),
		[PRIV_BLKTRACE_START] = sizeof(struct req_blkt),
		[PRIV_BLKTRACE_STOP] = sizeof(struct req_blkt),
		[PRIV_PACKET_SOCKET] = sizeof(struct req_packet),
		[PRIV_NOTIFY] = sizeof(struct req_notify),
		[PRIV_RELOAD] = sizeof(struct priv_hdr),
		[PRIV_INPUT_OPEN] = sizeof(struct req_input),
		[PRIV_RELAY_OPEN] = sizeof(struct req_relay),
		[PRIV_PACKET_FILTER] = sizeof(struct req_packet_filter),
	};

	for (unsigned t = 1; t <= PRIV_TYPE_MAX; t++)
		ck_assert_msg(priv_dispatch_size(t) == want[t], "type %u: %zu bytes, want %zu", t,
			      priv_dispatch_size(t), want[t]);
	ck_assert_uint_eq(priv_dispatch_size(0), 0);
	ck_assert_uint_eq(priv_dispatch_size(PRIV_TYPE_MAX + 1), 0);
	ck_assert_uint_eq(priv_dispatch_size(65535), 0);
}
END_TEST

/* ---- what a configuration allows (as root) ---- */

/* A FIFO that root owns in a watched directory: the input class allowed, it comes back as a
 * descriptor; a node that is not an input device (a symlink, a FIFO of another user) is
 * refused with EACCES, the connection kept. */
START_TEST(test_input_allowed)
{
	char dir[64], path[128];
	struct config *cfg;
	union priv_req req[3];
	const void *msgs[3] = {&req[0], &req[1], &req[2]};
	size_t lens[3];
	struct answer a;
	static const enum priv_type type[3] = {PRIV_INPUT_OPEN, PRIV_INPUT_OPEN, PRIV_INPUT_OPEN};
	static const int err[3] = {0, EACCES, ENOENT};

	if (geteuid() != 0) {
		printf("test_input_allowed: skipped: only a node root owns is handed over, and "
		       "this test is not root\n");
		return;
	}
	tu_mkdtemp(dir, sizeof(dir), "%s/priv_dispatch.XXXXXX", tu_tmpdir());
	snprintf(path, sizeof(path), "%s/event0", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/event1", dir);
	ck_assert_int_eq(symlink("/dev/null", path), 0);
	cfg = nothing_allowed();
	cfg->policy[CLASS_INPUT].rule.mode = MODE_TRUSTED;
	free(cfg->input.watch);
	cfg->input.watch = xstrdup(dir);
	memset(req, 0, sizeof(req));
	for (int i = 0; i < 3; i++) {
		req[i].h.version = PRIV_VERSION;
		req[i].h.type = PRIV_INPUT_OPEN;
		req[i].h.size = sizeof(struct req_input);
		snprintf(req[i].input.name, sizeof(req[i].input.name), "event%d", i);
		lens[i] = sizeof(struct req_input);
	}
	a = serve(cfg, NO_CONFIG, msgs, lens, 3);
	ck_assert_int_eq(a.n, 3);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(a.rep[i].h.type, type[i]);
		ck_assert_msg(a.rep[i].err == err[i], "event%d: errno %d, want %d", i,
			      a.rep[i].err, err[i]);
	}
	ck_assert_int_eq(a.fds, 1);
	ck_assert_int_eq(a.status, EXIT_OK);
	ck_assert_ptr_nonnull(strstr(a.log, "refused to open"));
	free(a.log);
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}
END_TEST

static void setup(void)
{
	log_open(true, 0);
}

static Suite *suite(void)
{
	Suite *s = suite_create("priv_dispatch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_loop_test(tc, test_corpus, 0, (int)N_CORPUS);
	tcase_add_test(tc, test_corpus_complete);
	tcase_add_loop_test(tc, test_malformed, 0,
			    (int)(sizeof(malformed) / sizeof(malformed[0])));
	tcase_add_test(tc, test_sizes);
	tcase_add_test(tc, test_input_allowed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
