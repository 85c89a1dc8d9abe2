/* net_flow: the pure parts of the packet source — a frame's source address, the
 * dominant-flow counter and its credit weight, the per-second event cap, and whether a
 * card's timestamping may be changed. No libpcap calls here, and nothing here ever logs an
 * address: the counter only compares them. */
#include "autoconf.h"

#include "net_flow.h"

#include <linux/net_tstamp.h>
#include <math.h>
#include <pcap/dlt.h>
#include <stddef.h>
#include <string.h>

#include "util.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86dd
#define ETHERTYPE_VLAN 0x8100
#define ETHERTYPE_QINQ 0x88a8
#define ETHERTYPE_QINQ_OLD 0x9100
#define SLL_HDR_LEN 16
#define SLL2_HDR_LEN 20

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* Up to 8 bytes as a word, in memory order (a word in a register when n is constant). */
static uint64_t word_of(const uint8_t *p, size_t n)
{
	uint64_t w = 0;

	memcpy(&w, p, n);
	return w;
}

/* The key is built in registers and stored as whole words: key_eq() reads it back as
 * words at once, and a word loaded from narrower stores would stall (no store-to-load
 * forwarding). */
static inline void set_key(struct flow_key *k, enum flow_family fam, const uint8_t *addr, size_t len)
{
	const uint8_t head[8] = {(uint8_t)fam, (uint8_t)len};
	uint64_t w0 = word_of(head, sizeof(head)), w1 = word_of(addr, len < 8 ? len : 8);
	uint64_t w2 = len > 8 ? word_of(addr + 8, len - 8) : 0;

	_Static_assert(sizeof(*k) == 24 && offsetof(struct flow_key, addr) == 8,
		       "struct flow_key is a header word and two address words");
	memcpy((uint8_t *)k, &w0, 8);
	memcpy(k->addr, &w1, 8);
	memcpy(k->addr + 8, &w2, 8);
}

/* An IP header at pkt[off..caplen): its source address. false if it is not one. */
static inline bool ip_source(const uint8_t *pkt, size_t caplen, size_t off, unsigned version_hint,
		      struct flow_key *k)
{
	unsigned version;

	if (off >= caplen)
		return false;
	version = pkt[off] >> 4;
	if (version_hint && version != version_hint)
		return false;
	if (version == 4 && caplen >= off + 20) {
		set_key(k, FLOW_IPV4, pkt + off + 12, 4);
		return true;
	}
	if (version == 6 && caplen >= off + 40) {
		set_key(k, FLOW_IPV6, pkt + off + 8, 16);
		return true;
	}
	return false;
}

static unsigned version_of_ethertype(unsigned type)
{
	return type == ETHERTYPE_IPV4 ? 4 : type == ETHERTYPE_IPV6 ? 6 : 0;
}

static void ethernet(const uint8_t *pkt, size_t caplen, struct flow_key *k)
{
	size_t off = 12;
	unsigned type;

	if (caplen < 14)
		return;
	type = be16(pkt + off);
	/* Up to two VLAN tags (802.1Q, 802.1ad). */
	for (int tags = 0; tags < 2 && (type == ETHERTYPE_VLAN || type == ETHERTYPE_QINQ ||
					type == ETHERTYPE_QINQ_OLD);
	     tags++) {
		off += 4;
		if (caplen < off + 2)
			return;
		type = be16(pkt + off);
	}
	off += 2;
	if (version_of_ethertype(type) && ip_source(pkt, caplen, off, version_of_ethertype(type), k))
		return;
	set_key(k, FLOW_LINK, pkt + 6, 6);
}

/* Linux cooked captures: v1 (16 bytes: type, ARPHRD, halen, 8-byte address, protocol) and
 * v2 (20 bytes: protocol, reserved, ifindex, ARPHRD, type, halen, 8-byte address). */
static void cooked(const uint8_t *pkt, size_t caplen, bool v2, struct flow_key *k)
{
	size_t hdr = v2 ? SLL2_HDR_LEN : SLL_HDR_LEN;
	unsigned proto, halen;
	const uint8_t *addr;

	if (caplen < hdr)
		return;
	proto = be16(pkt + (v2 ? 0 : 14));
	halen = v2 ? pkt[11] : be16(pkt + 4);
	addr = pkt + (v2 ? 12 : 6);
	if (version_of_ethertype(proto) && ip_source(pkt, caplen, hdr, version_of_ethertype(proto), k))
		return;
	if (halen > 0 && halen <= 8)
		set_key(k, FLOW_LINK, addr, halen);
}

/* BSD loopback encapsulation: a 4-byte address family in host (DLT_NULL) or network
 * (DLT_LOOP) byte order. Values: 2 for IPv4, 10 (Linux), 24, 28, 30 for IPv6. */
static void null_loop(const uint8_t *pkt, size_t caplen, struct flow_key *k)
{
	if (caplen < 4)
		return;
	(void)ip_source(pkt, caplen, 4, 0, k);
}

void net_flow_key_of(int dlt, const uint8_t *pkt, size_t caplen, struct flow_key *k)
{
	memset(k, 0, sizeof(*k));
	switch (dlt) {
	case DLT_EN10MB:
		ethernet(pkt, caplen, k);
		break;
	case DLT_LINUX_SLL:
		cooked(pkt, caplen, false, k);
		break;
	case DLT_LINUX_SLL2:
		cooked(pkt, caplen, true, k);
		break;
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		(void)ip_source(pkt, caplen, 0, 0, k);
		break;
	case DLT_NULL:
	case DLT_LOOP:
		null_loop(pkt, caplen, k);
		break;
	default:
		break;
	}
}

/* Word i of a key, loaded as one word (as set_key() stored it). */
static uint64_t key_word(const struct flow_key *k, size_t i)
{
	uint64_t w;

	memcpy(&w, (const uint8_t *)k + i * sizeof(w), sizeof(w));
	return w;
}

/* Keys are zero beyond len (net_flow_key_of clears them), so the whole struct compares; as
 * words, since this runs for every packet. */
static bool key_eq(const struct flow_key *a, const struct flow_key *b)
{
	return ((key_word(a, 0) ^ key_word(b, 0)) | (key_word(a, 1) ^ key_word(b, 1)) |
		(key_word(a, 2) ^ key_word(b, 2))) == 0;
}

static unsigned slot_of(struct flow_top *ft, const struct flow_key *k)
{
	unsigned min_i = 0, free_i = FLOW_SLOTS;

	if (ft->count[ft->last] && key_eq(&ft->key[ft->last], k))
		return ft->last;
	for (unsigned i = 0; i < FLOW_SLOTS; i++) {
		if (ft->count[i] && key_eq(&ft->key[i], k))
			return i;
		if (!ft->count[i] && free_i == FLOW_SLOTS)
			free_i = i;
		if (ft->count[i] < ft->count[min_i])
			min_i = i;
	}
	/* A free slot, or else space-saving: the newcomer takes the smallest count over, so
	 * every count is an over-estimate by at most what it inherited. */
	if (free_i < FLOW_SLOTS)
		min_i = free_i;
	ft->key[min_i] = *k;
	return min_i;
}

void net_flow_top_add(struct flow_top *ft, const struct flow_key *k)
{
	unsigned i = slot_of(ft, k);

	ft->total++;
	ft->count[i]++;
	ft->last = i;
	if (ft->count[i] > ft->count[ft->top])
		ft->top = i;
	if (++ft->since_halving < FLOW_WINDOW)
		return;
	ft->since_halving = 0;
	ft->total /= 2;
	for (i = 0; i < FLOW_SLOTS; i++) {
		ft->count[i] /= 2;
		if (!ft->count[i])
			util_wipe(&ft->key[i], sizeof(ft->key[i]));
	}
}

double net_flow_top_share(const struct flow_top *ft)
{
	uint32_t top = ft->count[ft->top];

	if (!ft->total)
		return 0;
	/* Halving rounds counts down and the total too: keep the share within 0..1. */
	return top >= ft->total ? 1.0 : (double)top / ft->total;
}

double net_flow_weight(double share)
{
	if (!(share > FLOW_DOMINANT))
		return share >= 0 ? 1.0 : 0.0; /* NaN: no credit */
	if (share >= FLOW_ZERO)
		return 0;
	return 1 - share;
}

double net_flow_share_bound(double share, uint32_t n)
{
	double z2 = FLOW_Z * FLOW_Z, b;

	if (!(share >= 0 && share <= 1) || n == 0)
		return 1.0; /* nothing to go on: the worst case */
	b = (share + z2 / (2.0 * n) +
	     FLOW_Z * sqrt(share * (1 - share) / n + z2 / (4.0 * n * (double)n))) /
	    (1 + z2 / n);
	return b < 1 ? b : 1.0;
}

bool net_flow_event_cap_take(struct event_cap *c, uint32_t max_per_second, uint64_t t_ns)
{
	if (!c->started || t_ns < c->start_ns || t_ns - c->start_ns >= NS_PER_SEC) {
		c->started = true;
		c->start_ns = t_ns;
		c->n = 0;
	}
	if (c->n >= max_per_second)
		return false;
	c->n++;
	return true;
}

bool net_flow_hwtstamp_config_free(int tx_type, int rx_filter)
{
	return tx_type == HWTSTAMP_TX_OFF &&
	       (rx_filter == HWTSTAMP_FILTER_NONE || rx_filter == HWTSTAMP_FILTER_ALL);
}
