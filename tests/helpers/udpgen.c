/* udpgen: a bounded UDP generator for the packet-source tests and benchmarks. Sends N
 * datagrams with chosen gaps, rotating over source addresses; or writes the same schedule
 * as a pcap savefile (Ethernet, IPv4, UDP) with nanosecond timestamps.
 *
 *   udpgen -d ADDR [-p PORT] -n N [-g GAP] [-s SRC,SRC,...] [-r SEED] [-l LEN]
 *   udpgen -w FILE -n N [-g GAP] [-s SRC,...] [-r SEED] [-t START_S] [-l LEN] [-u]
 *
 * GAP is in microseconds: "100" (every gap exactly that: a rate, kept on average when the
 * sender runs late), "50-500" (uniform, at nanosecond resolution: each gap kept whole when
 * the sender runs late, which then only slows), or "0" (as fast as possible). Sources are used in turn, so "-s A,A,A,B" makes
 * A three quarters of the packets. Live sending binds each socket to its source address
 * (which must be local); sending stops after N packets whatever happens. -u writes a
 * savefile with microsecond timestamps. On exit, stderr says "sent=N span_us=S". */
#include "autoconf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SRC 64

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void usage(void)
{
	fputs("usage: udpgen -d ADDR [-p PORT] -n N [-g GAP_US|MIN-MAX] [-s SRC,...] [-r SEED] "
	      "[-l LEN]\n"
	      "       udpgen -w FILE -n N [-g GAP] [-s SRC,...] [-r SEED] [-t START_S] [-l LEN] "
	      "[-u]\n",
	      stderr);
	exit(2);
}

static uint64_t gap_lo_ns, gap_hi_ns;

static uint64_t next_gap(void)
{
	if (gap_hi_ns <= gap_lo_ns)
		return gap_lo_ns;
	return gap_lo_ns + next_rand() % (gap_hi_ns - gap_lo_ns + 1);
}

static void parse_gap(const char *s)
{
	char *end;
	double lo = strtod(s, &end), hi = lo;

	if (*end == '-')
		hi = strtod(end + 1, &end);
	if (*end || lo < 0 || hi < lo)
		usage();
	gap_lo_ns = (uint64_t)(lo * 1000);
	gap_hi_ns = (uint64_t)(hi * 1000);
}

static size_t parse_sources(char *list, struct in_addr *src)
{
	size_t n = 0;

	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_SRC || inet_pton(AF_INET, tok, &src[n]) != 1)
			usage();
		n++;
	}
	return n;
}

static uint16_t ip_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* One Ethernet/IPv4/UDP frame from src to dst with `len` bytes of payload. */
static size_t frame(uint8_t *buf, struct in_addr src, struct in_addr dst, unsigned port,
		    size_t len, unsigned id)
{
	static const uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0x02}, smac[6] = {0x02, 0, 0, 0, 0, 0x01};
	uint8_t *ip = buf + 14, *udp = ip + 20;
	size_t iplen = 20 + 8 + len;
	uint16_t c;

	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	buf[12] = 0x08;
	buf[13] = 0x00;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)(iplen >> 8);
	ip[3] = (uint8_t)iplen;
	ip[4] = (uint8_t)(id >> 8);
	ip[5] = (uint8_t)id;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	c = ip_checksum(ip, 20);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	udp[0] = 0x9c;
	udp[1] = 0x40;
	udp[2] = (uint8_t)(port >> 8);
	udp[3] = (uint8_t)port;
	udp[4] = (uint8_t)((8 + len) >> 8);
	udp[5] = (uint8_t)(8 + len);
	udp[6] = udp[7] = 0;
	memset(udp + 8, 0x5a, len);
	return 14 + iplen;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int write_file(const char *path, unsigned long n, struct in_addr *src, size_t nsrc,
		      struct in_addr dst, unsigned port, size_t len, double start_s, bool micro)
{
	pcap_t *p = pcap_open_dead_with_tstamp_precision(
		DLT_EN10MB, 65535, micro ? PCAP_TSTAMP_PRECISION_MICRO : PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d = p ? pcap_dump_open(p, path) : NULL;
	uint64_t t = (uint64_t)(start_s * 1e9), first = t;
	uint8_t buf[2048];

	if (!d) {
		fprintf(stderr, "udpgen: %s: %s\n", path, p ? pcap_geterr(p) : "pcap_open_dead");
		return 1;
	}
	for (unsigned long i = 0; i < n; i++) {
		struct pcap_pkthdr h;

		if (i)
			t += next_gap();
		h.caplen = h.len = (bpf_u_int32)frame(buf, src[i % nsrc], dst, port, len, (unsigned)i);
		h.ts.tv_sec = (time_t)(t / 1000000000ULL);
		h.ts.tv_usec = (suseconds_t)(micro ? t % 1000000000ULL / 1000 : t % 1000000000ULL);
		pcap_dump((u_char *)d, &h, buf);
	}
	pcap_dump_close(d);
	pcap_close(p);
	fprintf(stderr, "sent=%lu span_us=%llu\n", n, (unsigned long long)((t - first) / 1000));
	return 0;
}

static int send_live(unsigned long n, struct in_addr *src, size_t nsrc, struct in_addr dst,
		     unsigned port, size_t len)
{
	int fd[MAX_SRC];
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr = dst};
	uint8_t payload[2048];
	uint64_t start, next;
	unsigned long sent = 0;

	memset(payload, 0x5a, sizeof(payload));
	for (size_t i = 0; i < nsrc; i++) {
		struct sockaddr_in from = {.sin_family = AF_INET, .sin_addr = src[i]};

		fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd[i] < 0 || (src[i].s_addr != INADDR_ANY &&
				  bind(fd[i], (struct sockaddr *)&from, sizeof(from)) < 0)) {
			perror("udpgen: socket/bind");
			return 1;
		}
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	start = next = now_ns();
	for (unsigned long i = 0; i < n; i++) {
		uint64_t now = now_ns();

		/* Late (a busy machine kept us off the CPU): a fixed gap is a rate, kept on
		 * average by catching up; drawn gaps are a timing, so the timetable moves to now
		 * instead. Catching up would send the late packets back to back, a run of equal
		 * tiny gaps that is not the timing asked for (and that a receiver's health test
		 * rightly takes for a stuck source): every drawn gap is kept whole, and a late
		 * run is only slower. */
		if (i)
			next = (gap_hi_ns > gap_lo_ns && next < now ? now : next) + next_gap();
		if (next > now) {
			struct timespec ts = {(time_t)(next / 1000000000ULL),
					      (long)(next % 1000000000ULL)};

			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
		/* A full socket buffer (ENOBUFS) under a flood: try once more, then count it
		 * as not sent, so the caller can compare what arrived with what left. */
		if (sendto(fd[i % nsrc], payload, len, 0, (struct sockaddr *)&to, sizeof(to)) >= 0 ||
		    sendto(fd[i % nsrc], payload, len, 0, (struct sockaddr *)&to, sizeof(to)) >= 0)
			sent++;
	}
	fprintf(stderr, "sent=%lu span_us=%llu\n", sent,
		(unsigned long long)((now_ns() - start) / 1000));
	return sent == n ? 0 : 3;
}

int main(int argc, char **argv)
{
	struct in_addr src[MAX_SRC], dst = {.s_addr = htonl(0x0a000002)};
	const char *file = NULL;
	unsigned long n = 0;
	unsigned port = 9999;
	size_t nsrc = 0, len = 32;
	double start_s = 1700000000.0;
	bool micro = false;
	int c;

	while ((c = getopt(argc, argv, "d:p:n:g:s:r:l:w:t:u")) != -1) {
		switch (c) {
		case 'd':
			if (inet_pton(AF_INET, optarg, &dst) != 1)
				usage();
			break;
		case 'p':
			port = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 'g':
			parse_gap(optarg);
			break;
		case 's':
			nsrc = parse_sources(optarg, src);
			break;
		case 'r':
			rng ^= strtoull(optarg, NULL, 0) * 0x2545f4914f6cdd1dULL;
			if (!rng)
				rng = 1;
			break;
		case 'l':
			len = strtoul(optarg, NULL, 10);
			if (len > 1400)
				usage();
			break;
		case 'w':
			file = optarg;
			break;
		case 't':
			start_s = strtod(optarg, NULL);
			break;
		case 'u':
			micro = true;
			break;
		default:
			usage();
		}
	}
	if (!n || optind != argc)
		usage();
	if (!nsrc) {
		src[0].s_addr = file ? htonl(0x0a000001) : INADDR_ANY;
		nsrc = 1;
	}
	if (file)
		return write_file(file, n, src, nsrc, dst, port, len, start_s, micro);
	return send_live(n, src, nsrc, dst, port, len);
}
