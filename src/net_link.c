/* net_link: which network interfaces there are and what state they are in — an
 * RTM_GETLINK dump, the RTMGRP_LINK notifications, and /proc/net/dev with device ioctls
 * where rtnetlink cannot be used. Every link found goes to the owner's update callback. */
#include "autoconf.h"

#include "net_int.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

#define NL_BUF 32768

/* The kernel's NLMSG_* and RTA_* macros cast their argument to char *, dropping the const of a
 * message we only read, and NLMSG_OK compares the unsigned nlmsg_len with an int: these are
 * the same walks over const messages, with unsigned lengths. Where the macros let the length
 * go negative after the last (unpadded) message, the step here stops at the end, at 0. */
static bool nl_ok(const struct nlmsghdr *nh, size_t len)
{
	return len >= sizeof(*nh) && nh->nlmsg_len >= sizeof(*nh) && nh->nlmsg_len <= len;
}

static const struct nlmsghdr *nl_next(const struct nlmsghdr *nh, size_t *len)
{
	size_t step = NLMSG_ALIGN(nh->nlmsg_len);

	step = step < *len ? step : *len;
	*len -= step;
	return (const void *)((const char *)nh + step);
}

static const void *nl_data(const struct nlmsghdr *nh)
{
	return (const char *)nh + NLMSG_HDRLEN;
}

static bool rta_ok(const struct rtattr *rta, size_t len)
{
	return len >= sizeof(*rta) && rta->rta_len >= sizeof(*rta) && rta->rta_len <= len;
}

static const struct rtattr *rta_next(const struct rtattr *rta, size_t *len)
{
	size_t step = RTA_ALIGN(rta->rta_len);

	step = step < *len ? step : *len;
	*len -= step;
	return (const void *)((const char *)rta + step);
}

static const void *rta_data(const struct rtattr *rta)
{
	return (const char *)rta + RTA_LENGTH(0);
}

static const struct rtattr *ifla_rta(const struct ifinfomsg *ifi)
{
	return (const void *)((const char *)ifi + NLMSG_ALIGN(sizeof(*ifi)));
}

/* Kinds whose IFLA_LINK is a peer, not a device below them. */
static bool link_is_peer(const char *kind)
{
	static const char *const peers[] = {"veth", "vxcan", "netkit"};

	for (size_t i = 0; i < ARRAY_SIZE(peers); i++)
		if (strcmp(kind, peers[i]) == 0)
			return true;
	return false;
}

static bool parse_link(const struct nlmsghdr *nh, struct link_info *li)
{
	const struct ifinfomsg *ifi = nl_data(nh);
	const struct rtattr *rta;
	size_t len;
	int link = 0;
	bool other_netns = false;

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return false;
	/* The bridge's own notices about its ports (AF_BRIDGE) carry neither the kind nor the
	 * lower device, and its RTM_DELLINK means "no longer a port", not "gone": the link's
	 * own messages (AF_UNSPEC) say all of it. */
	if (ifi->ifi_family == AF_BRIDGE)
		return false;
	memset(li, 0, sizeof(*li));
	li->ifindex = ifi->ifi_index;
	li->flags = ifi->ifi_flags;
	li->arphrd = ifi->ifi_type;
	li->loopback = ifi->ifi_type == ARPHRD_LOOPBACK || (ifi->ifi_flags & IFF_LOOPBACK);
	len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi));
	for (rta = ifla_rta(ifi); rta_ok(rta, len); rta = rta_next(rta, &len)) {
		size_t plen = RTA_PAYLOAD(rta);

		if (rta->rta_type == IFLA_IFNAME && plen > 0) {
			size_t n = plen < sizeof(li->name) ? plen : sizeof(li->name) - 1;

			memcpy(li->name, rta_data(rta), n);
			li->name[n] = '\0';
		} else if (rta->rta_type == IFLA_MASTER && plen >= 4) {
			uint32_t m;

			memcpy(&m, rta_data(rta), 4);
			li->master = m <= INT32_MAX ? (int)m : 0;
		} else if (rta->rta_type == IFLA_LINK && plen >= 4) {
			int32_t l;

			memcpy(&l, rta_data(rta), 4);
			link = l;
		} else if (rta->rta_type == IFLA_LINK_NETNSID) {
			other_netns = true;
		} else if (rta->rta_type == IFLA_LINKINFO) {
			const struct rtattr *in = rta_data(rta);
			size_t ilen = plen;

			for (; rta_ok(in, ilen); in = rta_next(in, &ilen)) {
				if (in->rta_type != IFLA_INFO_KIND || RTA_PAYLOAD(in) == 0)
					continue;
				snprintf(li->kind, sizeof(li->kind), "%.*s",
					 (int)RTA_PAYLOAD(in), (const char *)rta_data(in));
			}
		}
	}
	/* IFLA_LINK is the lower device of a VLAN, macvlan, ipvlan, macsec or tunnel bound to a
	 * device; of a veth, the peer; in another namespace, nothing here. */
	if (link > 0 && link != li->ifindex && !other_netns && !link_is_peer(li->kind))
		li->lower = link;
	return li->ifindex > 0 && li->name[0];
}

/* Handle every message in buf[0..n). Returns 1 at NLMSG_DONE, -1 on NLMSG_ERROR, else 0. */
static int nl_messages(struct net_links *nl, const char *buf, size_t n)
{
	const struct nlmsghdr *nh = (const struct nlmsghdr *)buf;
	size_t len = n;
	struct link_info li;

	for (; nl_ok(nh, len); nh = nl_next(nh, &len)) {
		if (nh->nlmsg_type == NLMSG_DONE)
			return 1;
		if (nh->nlmsg_type == NLMSG_ERROR)
			return -1;
		if (nh->nlmsg_type == RTM_NEWLINK && parse_link(nh, &li))
			nl->update(nl->arg, &li);
		else if (nh->nlmsg_type == RTM_DELLINK && parse_link(nh, &li))
			nl->gone(nl->arg, li.ifindex);
	}
	return 0;
}

/* Every link, from an RTM_GETLINK dump. -1 if rtnetlink cannot be used. */
static int nl_dump(struct net_links *nl)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req;
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct timeval tv = {2, 0};
	char *buf;
	int fd, r = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = ++nl->seq;
	req.ifi.ifi_family = AF_UNSPEC;
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	buf = xmalloc(NL_BUF);
	while (r == 0) {
		ssize_t n = recv(fd, buf, NL_BUF, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = -1;
			break;
		}
		r = nl_messages(nl, buf, (size_t)n);
	}
	free(buf);
	close(fd);
	return r < 0 ? -1 : 0;
}

/* The number in /sys/class/net/<name>/<file>, or -1 if it cannot be read. */
static long sys_number(const char *name, const char *file)
{
	char path[PATH_MAX], line[32];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", name, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		v = strtol(line, NULL, 10);
	fclose(f);
	return v;
}

/* The ifindex of /sys/class/net/<name>/<rel> (a link to a device), 0 if there is none. */
static int sys_ifindex(const char *name, const char *rel)
{
	char file[PATH_MAX];
	long ix;

	snprintf(file, sizeof(file), "%s/ifindex", rel);
	ix = sys_number(name, file);
	return ix > 0 && ix <= INT_MAX ? (int)ix : 0;
}

int net_link_dev_ioctl(const char *ifname, unsigned long request, void *data)
{
	struct ifreq ifr;
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	strlcopy(ifr.ifr_name, ifname, sizeof(ifr.ifr_name));
	ifr.ifr_data = data;
	r = ioctl(s, request, &ifr);
	close(s);
	return r;
}

/* The name of a device's driver, as ethtool reports it; false if it does not say, or if the
 * name does not fit in out (cut short, it would be another name). */
static bool driver_name(const char *ifname, char *out, size_t size)
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
	int n;

	if (net_link_dev_ioctl(ifname, SIOCETHTOOL, &info) < 0 || !info.driver[0])
		return false;
	n = snprintf(out, size, "%.*s", (int)sizeof(info.driver), info.driver);
	return n >= 0 && (size_t)n < size;
}

/* Without rtnetlink, from sysfs: the kind (the device type a driver gives, or "tun" for a
 * tun/tap device), and the link type. A device with neither whose driver is that of a
 * device of secondhand packets (an ifb's: ifb), or a veth, is given the driver's name, which
 * for these is their kind; other drivers (a card's) are not kinds. */
static void sys_kind(struct link_info *li)
{
	char driver[sizeof(li->kind)];
	char path[PATH_MAX], line[64];
	long type = sys_number(li->name, "type");
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/uevent", li->name);
	if ((f = fopen(path, "re"))) {
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "DEVTYPE=", 8) == 0)
				snprintf(li->kind, sizeof(li->kind), "%.*s",
					 (int)strcspn(line + 8, "\n"), line + 8);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags", li->name);
	if (access(path, F_OK) == 0)
		snprintf(li->kind, sizeof(li->kind), "tun");
	li->arphrd = type > 0 && type <= UINT16_MAX ? (unsigned)type : 0;
	if (!li->kind[0] && driver_name(li->name, driver, sizeof(driver)) &&
	    (net_stack_link_secondhand(driver, ARPHRD_ETHER) || strcmp(driver, "veth") == 0))
		snprintf(li->kind, sizeof(li->kind), "%s", driver);
}

/* Without rtnetlink, from sysfs: the master, and the device below (a lower_* link to a
 * device that is not a port of this one: a bridge's lower devices are its ports); then
 * the kind. */
static void sys_stacking(struct link_info *li)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	li->master = sys_ifindex(li->name, "master");
	snprintf(path, sizeof(path), "/sys/class/net/%s", li->name);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) && !li->lower) {
		char rel[sizeof(e->d_name) + 8];
		int ix;

		if (strncmp(e->d_name, "lower_", 6) != 0)
			continue;
		ix = sys_ifindex(li->name, e->d_name);
		snprintf(rel, sizeof(rel), "%s/master", e->d_name);
		if (ix && sys_ifindex(li->name, rel) != li->ifindex)
			li->lower = ix;
	}
	closedir(d);
	sys_kind(li);
}

/* Without rtnetlink: the names in /proc/net/dev, flags and index by ioctl. */
static int proc_scan(struct net_links *nl)
{
	FILE *f = fopen("/proc/net/dev", "re");
	char line[512];
	int s;

	if (!f)
		return -1;
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0); /* any family does the device ioctls */
	if (s < 0) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *name = line;
		struct link_info li;
		struct ifreq ifr;

		if (!colon)
			continue;
		*colon = '\0';
		while (*name == ' ')
			name++;
		memset(&li, 0, sizeof(li));
		if (!strlcopy(li.name, name, sizeof(li.name)) || !li.name[0])
			continue;
		memset(&ifr, 0, sizeof(ifr));
		strlcopy(ifr.ifr_name, li.name, sizeof(ifr.ifr_name));
		if (ioctl(s, SIOCGIFINDEX, &ifr) < 0)
			continue;
		li.ifindex = ifr.ifr_ifindex;
		if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
			continue;
		li.flags = (unsigned short)ifr.ifr_flags;
		li.loopback = li.flags & IFF_LOOPBACK;
		sys_stacking(&li);
		nl->update(nl->arg, &li);
	}
	close(s);
	fclose(f);
	return 0;
}

static void nl_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct net_links *nl = arg;
	char *buf = xmalloc(NL_BUF);

	for (int round = 0; round < 16; round++) {
		ssize_t n = recv(nl->fd, buf, NL_BUF, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* Messages were lost: ask for the whole picture again. */
			nl->lost(nl->arg);
			continue;
		}
		if (n <= 0)
			break;
		nl_messages(nl, buf, (size_t)n);
	}
	free(buf);
	nl->settle(nl->arg);
}

int net_link_monitor(struct net_links *nl, struct event_base *base)
{
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl->fd < 0)
		return -1;
	if (util_netlink_listen(nl->fd, RTNLGRP_LINK) < 0) {
		close(nl->fd);
		nl->fd = -1;
		return -1;
	}
	nl->ev = event_new(base, nl->fd, EV_READ | EV_PERSIST, nl_read_cb, nl);
	if (!nl->ev || event_add(nl->ev, NULL) < 0) {
		if (nl->ev)
			event_free(nl->ev);
		nl->ev = NULL;
		close(nl->fd);
		nl->fd = -1;
		return -1;
	}
	return 0;
}

void net_link_monitor_stop(struct net_links *nl)
{
	if (nl->ev)
		event_free(nl->ev);
	if (nl->fd >= 0)
		close(nl->fd);
	nl->ev = NULL;
	nl->fd = -1;
}

int net_link_dump(struct net_links *nl)
{
	return nl_dump(nl) < 0 && proc_scan(nl) < 0 ? -1 : 0;
}
