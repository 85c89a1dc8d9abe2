/* bench/pcapfloor: what libpcap alone costs a packet, for bench/pcap.sh (FLOOR=1). A capture
 * opened as entropyd opens one (snaplen, no promiscuous mode, a 1 s buffer timeout, a 2 MiB
 * ring, nanosecond timestamps, a direction, a filter, read when the descriptor is ready)
 * whose handler only counts: the part of entropyd's and tcpdump's CPU a packet that neither
 * can change, so that what each does with a packet can be told apart from it.
 *   bench/pcapfloor INTERFACE SNAPLEN DIRECTION FILTER   (root; ends on SIGINT or SIGTERM,
 *                                                         printing "N packets" on stderr) */
#include "autoconf.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	unsigned long long n = 0;
	struct bpf_program prog;
	struct sigaction sa;
	struct pollfd pfd;
	pcap_t *p;

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
	if (pcap_activate(p) < 0 || pcap_setdirection(p, direction(argv[3])) < 0 ||
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
	pfd.fd = pcap_get_selectable_fd(p);
	pfd.events = POLLIN;
	fprintf(stderr, "listening on %s\n", argv[1]);
	while (!stop) {
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			break;
		while (pcap_dispatch(p, 256, count, (u_char *)&n) == 256)
			;
	}
	pcap_dispatch(p, -1, count, (u_char *)&n);
	fprintf(stderr, "%llu packets\n", n);
	pcap_close(p);
	return 0;
}
