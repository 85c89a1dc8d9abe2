/* kernel_seed: how this boot's CRNG got seeded and what entropyd added (see kernel_seed.h).
 * Everything is read from /proc, /sys and /boot once, at start, before the collector's
 * sandbox closes them; a file that cannot be read says "not known", never an error. */
#include "autoconf.h"

#include "kernel_seed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "util.h"

/* The first size - 1 bytes of root/rel, or NULL. */
static char *slurp(const char *root, const char *rel, size_t size)
{
	char *path = xasprintf("%s/%s", root, rel);
	FILE *f = fopen(path, "re");
	char *buf;
	size_t n;

	free(path);
	if (!f)
		return NULL;
	buf = xcalloc(1, size);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A kernel boolean parameter on the command line: 1, 0, or -1 if it is not there (the last
 * one given wins, as the kernel reads them). */
static int cmdline_bool(const char *cmdline, const char *name)
{
	size_t len = strlen(name);
	int v = -1;

	for (const char *p = cmdline; p && *p;) {
		p += strspn(p, " \t\n");
		if (!strncmp(p, name, len) && p[len] == '=') {
			const char *val = p + len + 1;

			if (!strncmp(val, "on", 2) || *val == 'y' || *val == 'Y' || *val == '1')
				v = 1;
			else if (!strncmp(val, "off", 3) || *val == 'n' || *val == 'N' || *val == '0')
				v = 0;
		}
		p += strcspn(p, " \t\n");
	}
	return v;
}

/* A word in the "flags" line of /proc/cpuinfo's first processor. */
static bool cpu_flag(const char *cpuinfo, const char *flag)
{
	const char *line = cpuinfo;
	size_t len = strlen(flag);

	while (line && *line) {
		const char *end = strchr(line, '\n');

		if (!strncmp(line, "flags", 5)) {
			const char *p = strchr(line, ':');

			while (p && p < (end ? end : line + strlen(line))) {
				p++;
				p += strspn(p, " \t");
				if (!strncmp(p, flag, len) && (p[len] == ' ' || p[len] == '\n' ||
								p[len] == '\0'))
					return true;
				p += strcspn(p, " \n");
				if (*p != ' ')
					break;
			}
			return false; /* the first processor's flags are the machine's */
		}
		line = end ? end + 1 : NULL;
	}
	return false;
}

/* CONFIG_RANDOM_TRUST_CPU in /boot/config-RELEASE: 1, 0; -1 no such file; -2 the file
 * does not mention it (the option is gone: the kernel trusts by default). */
static int config_trust_cpu(const char *boot, const char *release)
{
	char rel[300], *text;
	int v;

	snprintf(rel, sizeof(rel), "config-%s", release);
	text = slurp(boot, rel, 1 << 20);
	if (!text)
		return -1;
	if (strstr(text, "\nCONFIG_RANDOM_TRUST_CPU=y"))
		v = 1;
	else if (strstr(text, "# CONFIG_RANDOM_TRUST_CPU is not set"))
		v = 0;
	else
		v = -2;
	free(text);
	return v;
}

static bool at_least(const struct kseed *k, unsigned major, unsigned minor)
{
	return k->major > major || (k->major == major && k->minor >= minor);
}

void kernel_seed_detect(struct kseed *k, const struct kseed_paths *p)
{
	struct utsname u;
	const char *proc = p && p->proc ? p->proc : "/proc";
	const char *sys = p && p->sys ? p->sys : "/sys";
	const char *boot = p && p->boot ? p->boot : "/boot";
	const char *release = p && p->release ? p->release : NULL;
	char *cmdline, *cpuinfo, *rng;
	int cfg;

	memset(k, 0, sizeof(*k));
	if (!release)
		release = uname(&u) == 0 ? u.release : "";
	if (sscanf(release, "%u.%u", &k->major, &k->minor) != 2)
		k->major = k->minor = 0;
	cmdline = slurp(proc, "cmdline", 8192);
	cpuinfo = slurp(proc, "cpuinfo", 1 << 16);
	k->rdrand = cpuinfo && cpu_flag(cpuinfo, "rdrand");
	k->rdseed = cpuinfo && cpu_flag(cpuinfo, "rdseed");
	k->trust_cpu = cmdline ? cmdline_bool(cmdline, "random.trust_cpu") : -1;
	k->trust_bootloader = cmdline ? cmdline_bool(cmdline, "random.trust_bootloader") : -1;
	cfg = config_trust_cpu(boot, release);
	k->trust_cpu_config = cfg >= 0 ? cfg : -1;
	if (k->trust_cpu >= 0) {
		k->cpu_trusted = k->trust_cpu == 1;
		snprintf(k->cpu_trust_from, sizeof(k->cpu_trust_from), "random.trust_cpu=%s on "
			 "the command line", k->trust_cpu ? "on" : "off");
	} else if (cfg >= 0) {
		k->cpu_trusted = cfg == 1;
		snprintf(k->cpu_trust_from, sizeof(k->cpu_trust_from),
			 "CONFIG_RANDOM_TRUST_CPU=%s in the kernel's config", cfg ? "y" : "n");
	} else if (at_least(k, 5, 19)) {
		k->cpu_trusted = true;
		snprintf(k->cpu_trust_from, sizeof(k->cpu_trust_from), "%s",
			 cfg == -2 ? "the kernel's default (its config has no such option)"
				   : "the kernel's default since 5.19 (its config not found)");
	} else {
		k->cpu_trusted = false;
		snprintf(k->cpu_trust_from, sizeof(k->cpu_trust_from),
			 "not known (no random.trust_cpu, no kernel config; off by default "
			 "before 5.19)");
	}
	if (!k->rdrand && !k->rdseed)
		k->cpu_trusted = false;
	rng = slurp(sys, "class/misc/hw_random/rng_current", sizeof(k->hw_rng));
	if (rng) {
		rng[strcspn(rng, "\n")] = '\0';
		if (strcmp(rng, "none") != 0)
			util_printable(k->hw_rng, sizeof(k->hw_rng), rng);
	}
	free(rng);
	free(cmdline);
	free(cpuinfo);
}

const char *kernel_seed_verdict_name(enum kernel_seed_verdict v)
{
	switch (v) {
	case KSEED_OLD_KERNEL: return "old-kernel";
	case KSEED_READY_BEFORE: return "ready-before";
	case KSEED_CREDITED: return "credited";
	case KSEED_READY_WITHOUT: return "ready-without";
	case KSEED_NOT_READY: return "not-ready";
	}
	return "?";
}

const char *kernel_seed_seeded_by(const struct kseed *k)
{
	static char buf[128];

	if (k->cpu_trusted)
		return k->rdseed ? "the CPU's RNG (RDSEED)" : "the CPU's RNG (RDRAND)";
	if (k->hw_rng[0]) {
		snprintf(buf, sizeof(buf), "a hardware RNG (%s)", k->hw_rng);
		return buf;
	}
	return "a bootloader seed or the kernel's own sources (interrupts, CPU jitter): "
	       "which cannot be told from user space";
}

enum kernel_seed_verdict kernel_seed_verdict(const struct kseed *k, const struct kseed_boot *b, char *text,
				 size_t size)
{
	int needed = b->needed_at_start >= 0 ? b->needed_at_start : 256;
	/* Where the initramfs's instance did it, the sentence says so. */
	const char *ed = b->in_initramfs ? "entropyd in the initramfs" : "entropyd";
	const char *there = b->in_initramfs ? " there" : "";

	if (!b->credit_until_ready) {
		snprintf(text, size, "this kernel counts credit all along (the semantics before "
				     "5.18): entropyd feeds it whenever entropy_avail runs low");
		return KSEED_OLD_KERNEL;
	}
	if (b->ready_at_start) {
		snprintf(text, size, "CRNG was ready before %s started, seeded by %s: "
				     "entropyd only mixes here", ed, kernel_seed_seeded_by(k));
		return KSEED_READY_BEFORE;
	}
	if (!b->ready_now) {
		snprintf(text, size, "CRNG not ready yet: entropyd has credited %.0f of the %d bits "
				     "it waits for", b->credited, needed);
		return KSEED_NOT_READY;
	}
	if (b->credited_before_ready >= 1) {
		snprintf(text, size, "%s credited %.0f of the %d bits the CRNG waited for%s", ed,
			 b->credited_before_ready > needed ? (double)needed
							   : b->credited_before_ready,
			 needed, b->ready_after_s >= 0 ? "" : " (when it became ready is not known)");
		if (b->ready_after_s >= 0) {
			size_t n = strlen(text);

			snprintf(text + n, size - n, "; ready %.1f s after entropyd started%s",
				 b->ready_after_s, there);
		}
		return KSEED_CREDITED;
	}
	snprintf(text, size, "CRNG became ready after %s started with none of its credit "
			     "(seeded by %s): entropyd did not help this boot", ed, kernel_seed_seeded_by(k));
	return KSEED_READY_WITHOUT;
}
