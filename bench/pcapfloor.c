/* bench/pcapfloor: what libpcap alone costs a packet, for bench/pcap.sh (FLOOR=1). A capture
 * opened and read as entropyd opens and reads one (src/net.c: snaplen, no
 * promiscuous mode, a 1 s buffer timeout, a 2 MiB ring, nanosecond timestamps, a direction,
 * a filter; read when the descriptor is ready, in batches of 256, at most 16 a turn, and
 * under a flood every 20 ms without asking) whose handler only counts: the part of
 * entropyd's and tcpdump's CPU a packet that neither can change, so that what each does with
 * a packet can be told apart from it.
 *   bench/pcapfloor INTERFACE SNAPLEN DIRECTION FILTER   (root; ends on SIGINT or SIGTERM,
 *                                                         printing "N packets" on stderr) */
#include "autoconf.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 256   /* as entropyd's DISPATCH_BATCH */
#define ROUNDS 16   /* DISPATCH_ROUNDS */
#define DRAIN_MS 20 /* DRAIN_MS */

static const struct timespec drain_ts = {0, DRAIN_MS * 1000000L};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void count(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	(void)h;
	(void)bytes;
	++*(unsigned long long *)user;
}

static pcap_direction_t direction(const char *s)
{
	return strcmp(s, "out") == 0 ? PCAP_D_OUT : strcmp(s, "both") == 0 ? PCAP_D_INOUT : PCAP_D_IN;
}

static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Up to ROUNDS batches: the packets read, or -1. */
static int drain(pcap_t *p, unsigned long long *n)
{
	int got = 0, r = 0;

	for (int round = 0; round < ROUNDS; round++) {
		r = pcap_dispatch(p, BATCH, count, (u_char *)n);
		if (r < 0)
			return -1;
		got += r;
		if (r < BATCH)
			break;
	}
	return got;
}

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	unsigned long long n = 0;
	long long woken = 0;
	bool busy = false;
	struct bpf_program prog;
	struct sigaction sa;
	sigset_t block, unblocked;
	struct pollfd pfd;
	pcap_t *p;
	int rc;

	if (argc != 5) {
		fprintf(stderr, "usage: pcapfloor INTERFACE SNAPLEN DIRECTION FILTER\n");
		return 2;
	}
	p = pcap_create(argv[1], err);
	if (!p) {
		fprintf(stderr, "pcapfloor: %s\n", err);
		return 1;
	}
	pcap_set_snaplen(p, atoi(argv[2]));
	pcap_set_promisc(p, 0);
	pcap_set_timeout(p, 1000);
	pcap_set_buffer_size(p, 2 * 1024 * 1024);
	pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO);
	rc = pcap_activate(p);
	if (rc < 0) {
		fprintf(stderr, "pcapfloor: %s: %s %s\n", argv[1], pcap_statustostr(rc), pcap_geterr(p));
		return 1;
	}
	if (pcap_setdirection(p, direction(argv[3])) < 0 ||
	    pcap_compile(p, &prog, argv[4], 1, PCAP_NETMASK_UNKNOWN) < 0 ||
	    pcap_setfilter(p, &prog) < 0 || pcap_setnonblock(p, 1, err) < 0) {
		fprintf(stderr, "pcapfloor: %s: %s\n", argv[1], err[0] ? err : pcap_geterr(p));
		return 1;
	}
	pcap_freecode(&prog);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* The signals are let in only inside ppoll, so one cannot land between the test of
	 * `stop` and the wait, and the wait needs no timeout (which would wake us for nothing). */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &unblocked);
	pfd.fd = pcap_get_selectable_fd(p);
	pfd.events = POLLIN;
	fprintf(stderr, "listening on %s\n", argv[1]);
	while (!stop) {
		long long now;
		int got, ready;

		/* Busy: the ring is read every DRAIN_MS without asking; else on readiness. */
		ready = ppoll(busy ? NULL : &pfd, busy ? 0 : 1, busy ? &drain_ts : NULL, &unblocked);
		if (ready < 0 && errno != EINTR)
			break;
		if (!busy && ready <= 0)
			continue;
		now = mono_ms();
		do {
			got = drain(p, &n);
			if (got < 0) {
				fprintf(stderr, "pcapfloor: %s: %s\n", argv[1], pcap_geterr(p));
				return 1;
			}
		} while (got >= ROUNDS * BATCH && !stop);
		if (busy) {
			busy = got > 0;
		} else {
			busy = got > 0 && now - woken < DRAIN_MS;
			woken = now;
		}
	}
	drain(p, &n);
	fprintf(stderr, "%llu packets\n", n);
	pcap_close(p);
	return 0;
}
