/* bench/packet: the packet source's own work per packet, in process, beside what
 * "tcpdump -w" does with each packet (pcap_dump() to /dev/null, its stdio buffer written out
 * every 4 KiB), on the same packets: UDP/IPv4 frames cut to 64 bytes, from one sender, laid
 * out as in a capture ring, at random gaps. What both leave to the kernel and to libpcap
 * (the ring, the filter, the wakeups, libpcap's walk over a block) is left out here;
 * bench/pcap.sh measures the whole, side by side on a veth pair.
 *
 * entropyd's side is net_capture_packet() for every packet and what it hands on: the event cap
 * (none on the first three rates, the default 10,000 a second on the +cap ones), the
 * dominant-flow counter, the estimator (its 60-second schedule included, as the packets'
 * time passes), the health tests, the policy, the pool and the dry-run sink. The two take
 * turns over each rate's packets, ROUNDS times; the median ratio is what to quote.
 *   bench/packet [PACKETS [ROUNDS]]     (defaults 2000000, 5)
 *   RATES="low medium" bench/packet      (only those rates) */
#include "autoconf.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_pipeline.h"
#include "log.h"
#include "net_int.h"
#include "rig.h"

#define SNAPLEN 64
#define FRAME_STRIDE 128 /* a TPACKET_V3 frame of a 64-byte capture: header, padding, data */
#define RING_FRAMES 2048 /* one 256 KiB block of such frames */
#define WARM 6000        /* the instance's start-up estimates come before the clock starts */
#define CHUNK 8192       /* packets each side takes in its turn */

struct rate {
	const char *name, *gaps;
	uint64_t min_gap_ns, max_gap_ns;
	bool capped; /* under the default event cap; else every packet is timed */
};

static const struct rate rates[] = {
	{"low", "0.5-1.5 ms", 500000, 1500000, false},
	{"medium", "20-80 us", 20000, 80000, false},
	{"flood", "3-10 us", 3000, 10000, false},
	{"medium+cap", "20-80 us", 20000, 80000, true},
	{"flood+cap", "3-10 us", 3000, 10000, true},
};

static uint8_t ring[RING_FRAMES][FRAME_STRIDE];

/* An Ethernet frame with an IPv4/UDP packet from 10.201.0.1 to 10.201.0.2 port 9999. */
static void make_frames(void)
{
	static const uint8_t frame[42] = {
		0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,         /* Ethernet */
		0x45, 0, 0, 86, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 201, 0, 1, /* IPv4 */
		10, 201, 0, 2, 0x9c, 0x40, 0x27, 0x0f, 0, 66, 0, 0,          /* UDP */
	};

	for (size_t i = 0; i < RING_FRAMES; i++) {
		memcpy(ring[i], frame, sizeof(frame));
		memset(ring[i] + sizeof(frame), (int)i, SNAPLEN - sizeof(frame));
	}
}

static void make_headers(struct pcap_pkthdr *h, size_t n, const struct rate *r)
{
	uint64_t now = 1700000000ULL * NS_PER_SEC;

	for (size_t i = 0; i < n; i++) {
		now += r->min_gap_ns + (uint64_t)random() % (r->max_gap_ns - r->min_gap_ns);
		h[i].ts.tv_sec = (time_t)(now / NS_PER_SEC);
		h[i].ts.tv_usec = (suseconds_t)(now % NS_PER_SEC); /* nanoseconds, as captured */
		h[i].caplen = SNAPLEN;
		h[i].len = 100;
	}
}

/* One round over the stream: net_capture_packet() and pcap_dump() take it in turns, CHUNK
 * packets at a time, so that the machine's slow and fast spells fall on both alike; the
 * CPU each took, in ns a packet. entropyd's instance first takes WARM packets unclocked. */
static void one_round(const struct pcap_pkthdr *h, size_t n, bool capped, double *ed,
		      double *td)
{
	static struct capture c;
	struct rig rig;
	pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, SNAPLEN,
							 PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d = p ? pcap_dump_open(p, "/dev/null") : NULL;
	double ed_ns = 0, td_ns = 0;
	struct instance *inst;

	if (!d) {
		fprintf(stderr, "bench/packet: cannot open a pcap dumper on /dev/null\n");
		exit(1);
	}
	rig_open(&rig, false);
	inst = feed_pipeline_attach(CLASS_NETWORK, "bench0", "veth", 0);
	net_capture_attach(&c, inst);
	net_capture_begin(&c, DLT_EN10MB, true, capped ? net_capture_max_eps(rig.cfg) : 100000000);
	for (size_t i = 0; i < WARM; i++)
		net_capture_packet((u_char *)&c, &h[i], ring[i % RING_FRAMES]);
	net_capture_flush(&c);
	for (size_t at = WARM; at < n; at += CHUNK) {
		size_t end = n - at < CHUNK ? n : at + CHUNK;
		volatile uint32_t touch = 0;
		double t0, t1, t2;

		/* The chunk's headers are read into the cache first, for both: libpcap hands
		 * each its header hot, made on the stack from the ring's. */
		for (size_t i = at; i < end; i++)
			touch += h[i].caplen;
		t0 = rig_cpu_ns();
		for (size_t i = at; i < end; i++)
			net_capture_packet((u_char *)&c, &h[i], ring[i % RING_FRAMES]);
		t1 = rig_cpu_ns();
		for (size_t i = at; i < end; i++)
			pcap_dump((u_char *)d, &h[i], ring[i % RING_FRAMES]);
		t2 = rig_cpu_ns();
		ed_ns += t1 - t0;
		td_ns += t2 - t1;
	}
	/* What is still buffered is each side's too. */
	{
		double t0 = rig_cpu_ns(), t1;

		net_capture_flush(&c);
		t1 = rig_cpu_ns();
		pcap_dump_flush(d);
		ed_ns += t1 - t0;
		td_ns += rig_cpu_ns() - t1;
	}
	*ed = ed_ns / (double)(n - WARM);
	*td = td_ns / (double)(n - WARM);
	net_capture_detach(&c, "bench0");
	feed_pipeline_detach(inst);
	rig_close(&rig, false);
	pcap_dump_close(d);
	pcap_close(p);
}

static bool word_in(const char *list, const char *word)
{
	size_t len = strlen(word);

	for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
		if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
			return true;
	return false;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	const char *only = getenv("RATES");
	struct pcap_pkthdr *h;

	if (n <= WARM || rounds < 1 || rounds > 99) {
		fprintf(stderr, "usage: bench/packet [PACKETS (> %d) [ROUNDS (1-99)]]\n", WARM);
		return 2;
	}
	h = calloc(n, sizeof(*h));
	if (!h)
		return 1;
	log_open(true, 0);
	srandom(1);
	make_frames();
	printf("packet benchmark: %zu packets a round, %d rounds; user-space CPU ns a packet,\n"
	       "entropyd's net_capture_packet() beside pcap_dump() to /dev/null (tcpdump -w -s %d)\n",
	       n - WARM, rounds, SNAPLEN);
	for (size_t r = 0; r < ARRAY_SIZE(rates); r++) {
		double ratio[99];

		if (only && !word_in(only, rates[r].name))
			continue;
		make_headers(h, n, &rates[r]);
		printf("%s (%s gaps): %.0f s of packet time\n", rates[r].name, rates[r].gaps,
		       (double)(h[n - 1].ts.tv_sec - h[WARM].ts.tv_sec));
		for (int k = 0; k < rounds; k++) {
			double ed, td;

			one_round(h, n, rates[r].capped, &ed, &td);
			ratio[k] = ed / td;
			printf("  round %d: entropyd %6.1f ns, pcap_dump %6.1f ns, ratio %.2f\n", k + 1,
			       ed, td, ratio[k]);
		}
		qsort(ratio, (size_t)rounds, sizeof(ratio[0]), by_value);
		printf("  median ratio %.2f (target: <= 1)\n", ratio[rounds / 2]);
	}
	free(h);
	return 0;
}
