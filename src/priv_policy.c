/* priv_policy: what the privileged process allows the collector, decided from the
 * configuration it reads itself and from what it can see (the watched directory, /sys/block,
 * /sys/class/net), never from what the collector says: which disks, interfaces and input
 * nodes are selected, how many perf events and packet sockets may be handed out, and the
 * credit ceiling. It makes no privileged system call (priv_ops.c does) and sends nothing
 * (priv_dispatch.c answers). */
#include "autoconf.h"

#include "priv_policy.h"

#include <dirent.h>
#include <fnmatch.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/sysmacros.h>

#include "config_policy.h"
#include "kernel.h"
#include "log.h"
#include "priv_ops.h"
#include "util.h"

#define MAX_COUNT 65536 /* instances counted in a directory, at most */
#define RATE_EVERY_NS NS_PER_SEC
#define MAX_START_NODES 4096

static struct log_ratelimit rl_clip = LOG_RATELIMIT_INIT;

/* What one instance under this rule can be credited per second at most. */
static double rule_rate(const struct policy_rule *r)
{
	switch (r->mode) {
	case MODE_TRUSTED:
		return r->cap_bits_per_second;
	case MODE_REDUCED:
		return r->scale * r->cap_bits_per_second;
	default:
		return 0;
	}
}

/* The most any one instance of a class can be credited per second: the class rule or any
 * of its overrides, whichever allows more. */
static double class_rate(const struct config *cfg, enum src_class cls)
{
	const struct class_policy *cp = &cfg->policy[cls];
	double best = rule_rate(&cp->rule);

	for (size_t i = 0; i < cp->n_overrides; i++) {
		struct policy_rule r = config_policy_override_apply(&cp->rule, &cp->overrides[i]);

		best = fmax(best, rule_rate(&r));
	}
	return best;
}

bool priv_policy_disk(const struct priv_policy *pol, const char *name,
		      struct block_disk_info *info)
{
	struct policy_rule r;

	if (!block_disks_probe("", name, info) ||
	    !block_disks_selects(&pol->cfg->block.devices, name, info))
		return false;
	r = config_policy_resolve(pol->cfg, CLASS_BLOCK, name);
	return r.mode != MODE_DISABLED;
}

/* Entries of dir (not . and ..) that pass want. */
static unsigned count_dir(const struct priv_policy *pol, const char *dir,
			  bool (*want)(const struct priv_policy *, const char *))
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < MAX_COUNT)
		if (e->d_name[0] != '.' && want(pol, e->d_name))
			n++;
	closedir(d);
	return n;
}

/* An input node: an event* character device of the input major in the watched directory,
 * or any other event* entry that was there at start (start_nodes). */
static bool input_node(const struct config *cfg, const char *name, bool *chr)
{
	char *path;
	struct stat st;
	bool ok;

	if (strncmp(name, "event", 5) != 0)
		return false;
	path = xasprintf("%s/%s", cfg->input.watch, name);
	ok = lstat(path, &st) == 0;
	free(path);
	*chr = ok && S_ISCHR(st.st_mode) && major(st.st_rdev) == PRIV_INPUT_MAJOR;
	return ok;
}

static bool want_input(const struct priv_policy *pol, const char *name)
{
	bool chr;

	if (!input_node(pol->cfg, name, &chr))
		return false;
	if (chr)
		return true;
	for (size_t i = 0; i < pol->start_nodes.n; i++)
		if (strcmp(pol->start_nodes.v[i], name) == 0)
			return true;
	return false;
}

/* The input nodes there at start that are not character devices. */
static void note_start_nodes(struct priv_policy *pol)
{
	DIR *d;
	struct dirent *e;
	bool chr;

	if (!config_policy_class_runs(pol->cfg, CLASS_INPUT) || !(d = opendir(pol->cfg->input.watch)))
		return;
	while ((e = readdir(d)) && pol->start_nodes.n < MAX_START_NODES)
		if (input_node(pol->cfg, e->d_name, &chr) && !chr)
			config_settings_strlist_add(&pol->start_nodes, e->d_name);
	closedir(d);
}

bool priv_policy_iface(const struct priv_policy *pol, const char *name)
{
	const struct strlist *l = &pol->cfg->network.interfaces;
	struct policy_rule r;
	bool sel = false;

	if (l->n == 0 || (l->n == 1 && strcmp(l->v[0], "auto") == 0)) {
		char *path = xasprintf("/sys/class/net/%s/flags", name);
		FILE *f = fopen(path, "re");
		unsigned long flags;

		sel = f && fscanf(f, "%lx", &flags) == 1 && !(flags & IFF_LOOPBACK);
		if (f)
			fclose(f);
		free(path);
	} else {
		for (size_t i = 0; i < l->n && !sel; i++)
			sel = strcmp(l->v[i], name) == 0 || fnmatch(l->v[i], name, 0) == 0;
	}
	if (!sel)
		return false;
	r = config_policy_resolve(pol->cfg, CLASS_NETWORK, name);
	return r.mode != MODE_DISABLED;
}

static bool want_disk(const struct priv_policy *pol, const char *name)
{
	struct block_disk_info info;

	return priv_policy_disk(pol, name, &info);
}

/* The ceiling's rate: per class, the most one instance may be credited per second (over
 * the class rule and its overrides, the largest cap_bits_per_second times the rule's
 * weight: 1 trusted, scale reduced, 0 otherwise) times the instances this process can vouch
 * for: input, the event* character devices of the input major in the watched directory, and
 * other event* entries (FIFOs, files) that were there at start; block, the whole disks of
 * /sys/block the configuration selects; network, the interfaces of /sys/class/net the
 * configuration selects (priv_policy_iface: not every entry, and not how many packet sockets
 * the collector asked for), plus one for a configured savefile. */
static double rate_count(const struct priv_policy *pol, unsigned *disks)
{
	const struct config *cfg = pol->cfg;
	unsigned n_in = 0, n_blk = 0, n_net = 0;

	if (config_policy_class_runs(cfg, CLASS_INPUT))
		n_in = count_dir(pol, cfg->input.watch, want_input);
	if (config_policy_class_runs(cfg, CLASS_BLOCK))
		n_blk = count_dir(pol, SYS_BLOCK, want_disk);
	if (config_policy_class_runs(cfg, CLASS_NETWORK)) {
		n_net = count_dir(pol, "/sys/class/net", priv_policy_iface);
		if (cfg->network.file && cfg->network.file[0])
			n_net++;
	}
	*disks = n_blk;
	return class_rate(cfg, CLASS_INPUT) * n_in + class_rate(cfg, CLASS_BLOCK) * n_blk +
	       class_rate(cfg, CLASS_NETWORK) * n_net;
}

double priv_policy_rate(const struct priv_policy *pol)
{
	unsigned disks;

	return rate_count(pol, &disks);
}

static void ceiling_update(struct priv_policy *pol, bool recount)
{
	uint64_t now = util_mono_ns();

	pol->tokens = fmin(pol->depth, pol->tokens + pol->rate * (double)(now - pol->refill_ns) / 1e9);
	pol->refill_ns = now;
	if (recount || now - pol->rate_ns >= RATE_EVERY_NS) {
		/* The disks counted are the perf events' budget too (priv_policy_perf): one walk
		 * of /sys/block for both. */
		double rate = rate_count(pol, &pol->disks);

		/* The collector's own per-instance caps start with one second's worth: so does
		 * each instance here, when it is first counted; an instance that goes and comes
		 * back does not bring another (so no flapping can fill the bucket). */
		if (rate > pol->rate_high) {
			pol->tokens += rate - pol->rate_high;
			pol->rate_high = rate;
		}
		pol->rate = rate;
		pol->depth = pol->rate > 0 ? fmax(PRIV_DEPTH_S * pol->rate, PRIV_DEPTH_MIN) : 0;
		pol->tokens = fmin(pol->tokens, pol->depth);
		pol->rate_ns = now;
	}
}

void priv_policy_recount(struct priv_policy *pol)
{
	ceiling_update(pol, true);
}

int priv_policy_ceiling(struct priv_policy *pol, int bits)
{
	int allowed = bits;

	ceiling_update(pol, false);
	if (allowed > floor(pol->tokens + pol->boot_left)) {
		allowed = (int)floor(pol->tokens + pol->boot_left);
		pol->clipped += (uint64_t)(bits - allowed);
		log_limited(&rl_clip, LOG_WARNING,
			    "credit ceiling: %d of %d bits asked were not credited (the data was "
			    "mixed); %llu bits clipped so far; the ceiling is %.1f bits/s, "
			    "at most %.0f at once",
			    bits - allowed, bits, (unsigned long long)pol->clipped, pol->rate,
			    pol->depth);
	}
	pol->asked += (uint64_t)bits;
	return allowed;
}

void priv_policy_spend(struct priv_policy *pol, int bits)
{
	pol->tokens -= bits;
	if (pol->tokens < 0) { /* the rest came from the boot allowance */
		pol->boot_left = fmax(0, pol->boot_left + pol->tokens);
		pol->tokens = 0;
	}
	pol->credited += (uint64_t)bits;
}

/* Each kind has a budget per CPU as packet sockets have one (priv_policy_packet): what the
 * kind needs there (one owner, one waker, a disk event per disk the configuration selects)
 * and PRIV_PERF_SPARE more at once, then that many every PRIV_PERF_EVERY_S (a disk added, a
 * CPU back online, a reload). Every enabled event costs the kernel at each completion of
 * every disk; the collector keeps its copies, so one that asks again and again gets EAGAIN. */
double *priv_policy_perf(struct priv_policy *pol, unsigned cpu, unsigned what)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	uint64_t now = util_mono_ns();
	unsigned need = 1;
	size_t i;
	double most;

	if (cpu >= pol->perf_cpus || what > PRIV_PERF_WAKER)
		return NULL;
	if (what == PRIV_PERF_DISK) {
		ceiling_update(pol, false); /* the disks, counted again if a second old */
		need = pol->disks ? pol->disks : 1;
	}
	most = need + PRIV_PERF_SPARE;
	i = (size_t)cpu * (PRIV_PERF_WAKER + 1) + what;
	if (!pol->perf_ns[i])
		pol->perf_tokens[i] = most;
	else
		pol->perf_tokens[i] = fmin(most, pol->perf_tokens[i] +
							 need * (double)(now - pol->perf_ns[i]) /
								 1e9 / PRIV_PERF_EVERY_S);
	pol->perf_ns[i] = now;
	if (pol->perf_tokens[i] >= 1)
		return &pol->perf_tokens[i];
	log_limited(&rl, LOG_WARNING,
		    "privileged process: the collector asked for more %s perf events on CPU %u "
		    "than it needs (%u; %llu handed out since start); refused for now",
		    what == PRIV_PERF_OWNER ? "owner" : what == PRIV_PERF_DISK ? "disk" : "waker",
		    cpu, need, (unsigned long long)pol->perf_events);
	return NULL;
}

/* One per selected interface at once, and PRIV_PACKET_SPARE more; then one per selected
 * interface every PRIV_PACKET_EVERY_S (a capture reopened after its link went down, a
 * reload). Each socket handed out can still send frames, however deaf (entropyd(8)), and the
 * collector keeps its copy: so a collector that asks again and again gets EAGAIN, and its
 * driver's retry backs off. */
bool priv_policy_packet(struct priv_policy *pol)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	uint64_t now = util_mono_ns();
	unsigned n = count_dir(pol, "/sys/class/net", priv_policy_iface);
	double most = n + PRIV_PACKET_SPARE;

	if (!pol->socket_ns)
		pol->socket_tokens = most;
	else
		pol->socket_tokens = fmin(most, pol->socket_tokens + n * (double)(now - pol->socket_ns) /
								     1e9 / PRIV_PACKET_EVERY_S);
	pol->socket_ns = now;
	if (pol->socket_tokens >= 1) {
		pol->socket_tokens -= 1;
		return true;
	}
	log_limited(&rl, LOG_WARNING,
		    "privileged process: the collector asked for more packet sockets than %u "
		    "selected interface%s need (%u handed out since start); refused for now",
		    n, n == 1 ? "" : "s", pol->packet_sockets);
	return false;
}

void priv_policy_init(struct priv_policy *pol, struct config *cfg)
{
	int ncpus = get_nprocs_conf();

	memset(pol, 0, sizeof(*pol));
	pol->cfg = cfg;
	pol->refill_ns = util_mono_ns();
	pol->perf_cpus = ncpus > 0 ? (unsigned)ncpus : 1;
	pol->perf_tokens =
		xcalloc((size_t)pol->perf_cpus * (PRIV_PERF_WAKER + 1), sizeof(*pol->perf_tokens));
	pol->perf_ns = xcalloc((size_t)pol->perf_cpus * (PRIV_PERF_WAKER + 1), sizeof(*pol->perf_ns));
	note_start_nodes(pol);
	ceiling_update(pol, true);
	if (cfg->feed.boot_allowance) {
		struct kernel_state ks;

		kernel_probe(&ks);
		pol->boot_left = kernel_bits_needed(&ks);
	}
}

void priv_policy_reload(struct priv_policy *pol, struct config *next)
{
	config_free(pol->cfg);
	pol->cfg = next;
	ceiling_update(pol, true);
}

void priv_policy_free(struct priv_policy *pol)
{
	config_free(pol->cfg);
	free(pol->perf_tokens);
	free(pol->perf_ns);
	config_settings_strlist_free(&pol->start_nodes);
	util_wipe(pol, sizeof(*pol));
}
