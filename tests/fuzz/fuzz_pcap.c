/* fuzz_pcap: a savefile of any content through the network source's per-packet path, as a
 * replay takes it: libpcap reads it, net_capture_packet() times each packet, applies the event
 * cap, counts its flow and hands the batch to a real pipeline. Each packet's flow key is
 * also taken as every link type net_flow_key_of() knows would read it; a key must stay within
 * its bounds whatever the bytes. */
#include "autoconf.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "fuzz.h"
#include "log.h"
#include "net_int.h"
#include "util.h"

static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW, DLT_IPV4,
			   DLT_IPV6,   DLT_NULL,      DLT_LOOP,       DLT_PPP /* not known */};

static struct config *cfg;
static struct pool pool;
static struct capture cap;
static uint64_t packets;

static void drain(void *arg)
{
	struct batch b;

	if (feed_pool_full(&pool)) {
		feed_pool_take(&pool, &b);
		feed_pool_batch_wipe(&b);
	}
}

static void check_key(const struct flow_key *k)
{
	static const uint8_t zero[16];

	FUZZ_ASSERT(k->family <= FLOW_LINK && k->len <= sizeof(k->addr));
	FUZZ_ASSERT((k->family == FLOW_UNKNOWN) == (k->len == 0));
	FUZZ_ASSERT(memcmp(k->pad, zero, sizeof(k->pad)) == 0);
	FUZZ_ASSERT(memcmp(k->addr + k->len, zero, sizeof(k->addr) - k->len) == 0);
}

static void packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct flow_key k;

	packets++;
	for (size_t i = 0; i < sizeof(dlts) / sizeof(dlts[0]); i++) {
		net_flow_key_of(dlts[i], bytes, h->caplen, &k);
		check_key(&k);
	}
	/* Cut short: a snap length shorter than the headers. */
	net_flow_key_of(cap.dlt, bytes, h->caplen / 2, &k);
	check_key(&k);
	net_capture_packet(user, h, bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct instance *inst;
	struct inst_info info;
	FILE *f;
	pcap_t *p;
	void *copy;

	if (!cfg) {
		log_open(true, 0);
		cfg = config_defaults();
		feed_pool_init(&pool);
		feed_pipeline_init(cfg, &pool, drain, NULL);
	}
	if (size == 0)
		return 0;
	/* A copy of its own: fmemopen takes a writable buffer. */
	copy = xmalloc(size);
	memcpy(copy, data, size);
	f = fmemopen(copy, size, "rb");
	FUZZ_ASSERT(f != NULL);
	p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!p) {
		fclose(f);
		free(copy);
		return 0;
	}
	inst = feed_pipeline_attach(CLASS_NETWORK, "savefile", "file", 0);
	FUZZ_ASSERT(inst != NULL);
	net_capture_attach(&cap, inst);
	net_capture_begin(&cap, pcap_datalink(p), true, net_capture_max_eps(cfg));
	packets = 0;
	(void)pcap_loop(p, -1, packet, (u_char *)&cap);
	net_capture_flush(&cap);
	FUZZ_ASSERT(cap.packets == packets && cap.bad_time <= cap.packets);
	FUZZ_ASSERT(cap.weight >= 0 && cap.weight <= 1);
	FUZZ_ASSERT(feed_pipeline_count() == 1 && feed_pipeline_info(0, &info));
	FUZZ_ASSERT(info.c.events == packets);
	FUZZ_ASSERT(info.c.credited_bits >= 0 && info.c.credited_bits <= info.c.estimated_bits + 1e-9);
	net_capture_detach(&cap, "savefile");
	feed_pipeline_detach(inst);
	pcap_close(p);
	free(copy);
	return 0;
}
