/* entropyctl: shows what entropyd does and why, live, and asks it to reload — a Varlink client
 * of its control socket (ctl_proto.h). */
#include "autoconf.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "entropyctl_check.h"
#include "entropyctl_client.h"
#include "entropyctl_metrics.h"
#include "entropyctl_watch.h"
#include "util.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: entropyctl [OPTION]... [COMMAND]\n"
		"Show what entropyd does, live, and control it through its control socket.\n"
		"\n"
		"Commands:\n"
		"  status    the daemon, the kernel's state and the totals, then one line per\n"
		"            source instance: class, name, policy, events, the latest estimate\n"
		"            in bits per event (\"-\" before the first), bits credited, why\n"
		"            credit does not grow (\"-\" while it does), health (the default)\n"
		"  sources   every detail of each source instance\n"
		"  reload    make entropyd re-read its configuration, as SIGHUP does (root only);\n"
		"            an invalid configuration is rejected whole and its errors printed\n"
		"  metrics   the counters in the Prometheus text exposition format, for\n"
		"            node_exporter's textfile collector or a scrape\n"
		"  watch     a table refreshed every --interval seconds, with events and\n"
		"            credited bits per second, cut to the terminal's width; waits\n"
		"            while entropyd is not running; q quits\n"
		"  check     one line and a monitoring plugin's exit status: 0 OK, 1 WARNING,\n"
		"            2 CRITICAL (not running, or what credit needs is missing),\n"
		"            3 UNKNOWN (no answer, no permission, a usage error)\n"
		"\n"
		"Options:\n"
		"  -s, --socket PATH    the control socket (default %s)\n"
		"  -j, --json           print the daemon's data as JSON (status, sources, reload)\n"
		"      --color WHEN     colour the status: auto (on a terminal, unless NO_COLOR is\n"
		"                       set and not empty), always or never (default auto)\n"
		"  -t, --timeout SECS   give up on a daemon that does not answer (default 10)\n"
		"  -i, --interval SECS  watch: seconds between frames, 0.1 to 3600 (default 1)\n"
		"  -w, --warning SECS   check: while credit counts, a CRNG not ready this long\n"
		"                       after entropyd started is a warning (default %.0f)\n"
		"  -c, --critical SECS  check: and critical from this long (default %.0f)\n"
		"  -V, --version        print the version and exit\n"
		"  -h, --help           print this help and exit\n"
		"\n"
		"Exit status (check has its own, above):\n"
		"  0  success\n"
		"  1  reload refused: the configuration is invalid (the errors are printed)\n"
		"  2  usage error\n"
		"  3  entropyd is not running: no socket, or nothing answers on it\n"
		"  4  permission denied: the socket is not open to this user (run as root or as\n"
		"     a member of the socket's group), or the command needs root\n"
		"  5  protocol error: no reply in time, or a reply that makes no sense\n"
		"\n"
		"The socket speaks Varlink (interface io.entropyd), so generic Varlink clients\n"
		"can use it too. See entropyctl(8), entropyd(8) and entropyd.conf(5).\n",
		CTL_DEFAULT_SOCKET, CHECK_WARNING_S, CHECK_CRITICAL_S);
}

/* ---- status and sources, as text ---- */

static bool colour;

static const char *paint(const char *state)
{
	if (!colour || !strcmp(state, "-"))
		return "";
	if (!strcmp(state, "ok") || !strcmp(state, "ready"))
		return "\033[32m";
	if (!strcmp(state, "startup") || !strcmp(state, "not ready"))
		return "\033[33m";
	return "\033[31m";
}

static const char *unpaint(void)
{
	return colour ? "\033[0m" : "";
}

/* How this boot's CRNG got seeded, and the verdict: does this machine need entropyd? */
/* What entropyd in the initramfs did at this boot, from its boot record: counts only. */
static void print_initramfs(const json_t *r)
{
	size_t i, shown = 0;
	const json_t *src;

	if (!json_is_object(r))
		return;
	printf("initramfs: entropyd ran");
	if (!isnan(f_(r, "ran_s")))
		printf(" %.1f s", f_(r, "ran_s"));
	printf("%s, credited %.0f bits (%.0f before the CRNG was ready)",
	       b_(r, "ended") ? "" : " (cut short)", f_(r, "credited_bits"),
	       f_(r, "credited_before_ready_bits"));
	json_array_foreach(json_object_get(r, "sources"), i, src) {
		if (f_(src, "credited_bits") < 0.05)
			continue;
		printf("%s%s/%s %.1f", shown++ ? ", " : ": ", s_(src, "class"), s_(src, "name"),
		       f_(src, "credited_bits"));
	}
	printf("\n");
}

static void print_seed(const json_t *seed)
{
	const json_t *cpu = json_object_get(seed, "cpu_rng"), *bl = json_object_get(seed, "bootloader");
	const json_t *tb = json_object_get(bl, "trust_bootloader");

	if (!json_is_object(seed))
		return; /* an older daemon */
	printf("seeding: CPU RNG ");
	if (!b_(cpu, "rdrand") && !b_(cpu, "rdseed"))
		printf("none");
	else
		printf("%s%s%s, %s (%s)", b_(cpu, "rdrand") ? "RDRAND" : "",
		       b_(cpu, "rdrand") && b_(cpu, "rdseed") ? "+" : "",
		       b_(cpu, "rdseed") ? "RDSEED" : "", b_(cpu, "trusted") ? "trusted" : "not trusted",
		       s_(cpu, "trusted_from"));
	printf("; hardware RNG %s", json_is_string(json_object_get(seed, "hw_rng"))
					    ? s_(seed, "hw_rng") : "none");
	printf("; bootloader seed %s%s\n", s_(bl, "seed"),
	       json_is_boolean(tb) ? json_is_true(tb) ? " (random.trust_bootloader=on)"
						       : " (random.trust_bootloader=off)"
				   : "");
	printf("verdict: %s\n", s_(seed, "summary"));
	print_initramfs(json_object_get(seed, "initramfs"));
}

/* The walls around the collector, and each one this host allows that is missing. */
static void print_walls(const json_t *w)
{
	const json_t *m = json_object_get(w, "missing"), *x;
	bool pid = b_(w, "pid_namespace"), mnt = b_(w, "mount_namespace");
	size_t i;

	if (!json_is_object(w))
		return; /* a daemon before protocol 6 */
	printf("collector: user %s (%lld:%lld), %s%s%s%s, read-only view %s, ", s_(w, "user"),
	       i_(w, "uid"), i_(w, "gid"), pid || mnt ? "its own " : "no namespaces",
	       pid ? "PID" : "", pid && mnt ? " and mount" : mnt ? "mount" : "",
	       pid && mnt ? " namespaces" : pid || mnt ? " namespace" : "", s_(w, "read_only"));
	if (json_is_integer(json_object_get(w, "landlock_abi")))
		printf("Landlock ABI %lld, ", i_(w, "landlock_abi"));
	else
		printf("no Landlock, ");
	printf("%s\n", b_(w, "seccomp") ? "system call filter" : "no system call filter");
	json_array_foreach(m, i, x)
		printf("collector: %sWARNING%s: %s\n", paint("not ready"), unpaint(),
		       json_string_value(x));
}

static void print_overview(const json_t *st)
{
	const json_t *d = json_object_get(st, "daemon"), *k = json_object_get(st, "kernel"),
		     *t = json_object_get(st, "totals");
	bool ready = b_(k, "crng_ready");
	double after = f_(k, "ready_after_s");

	printf("entropyd %s (pid %lld), up ", s_(d, "version"), i_(d, "pid"));
	entropyctl_client_print_duration(stdout, i_(d, "uptime_s"));
	printf("; sink %s, feed mode %s, phase %s\n", s_(d, "sink"), s_(d, "feed_mode"),
	       s_(d, "feed_phase"));
	if (json_is_string(json_object_get(d, "config")))
		printf("config %s\n", s_(d, "config"));
	printf("kernel %s: CRNG %s%s%s", s_(k, "version"), paint(ready ? "ready" : "not ready"),
	       ready ? "ready" : "not ready", unpaint());
	if (!isnan(after))
		printf(" (%.1f s after entropyd started%s)", after,
		       json_is_object(json_object_get(json_object_get(k, "seed"), "initramfs")) &&
				       b_(json_object_get(k, "seed"), "ready_at_start")
			       ? " in the initramfs"
			       : "");
	printf(", credit %s", b_(k, "credit_counts") ? "counts" : "no longer counts");
	if (json_is_integer(json_object_get(k, "entropy_avail")))
		printf(", entropy_avail %lld", i_(k, "entropy_avail"));
	printf("\n");
	if (json_is_string(json_object_get(k, "semantics_reason")))
		printf("kernel semantics %s: %s\n", s_(k, "semantics"), s_(k, "semantics_reason"));
	print_seed(json_object_get(k, "seed"));
	print_walls(json_object_get(st, "collector"));
	printf("totals: %lld %s, %lld %s mixed, %.1f bits estimated, %.1f bits credited\n",
	       i_(t, "events"), N(i_(t, "events"), "event"), i_(t, "mixed_bytes"),
	       N(i_(t, "mixed_bytes"), "byte"), f_(t, "estimated_bits"), f_(t, "credited_bits"));
	printf("sink:   %lld %s, %lld %s, %lld %s credited, %lld %s, %lld %s\n", i_(t, "feeds"),
	       N(i_(t, "feeds"), "feed"), i_(t, "fed_bytes"), N(i_(t, "fed_bytes"), "byte"),
	       i_(t, "fed_credit_bits"), N(i_(t, "fed_credit_bits"), "bit"), i_(t, "reseeds"),
	       N(i_(t, "reseeds"), "reseed"), i_(t, "feed_errors"), N(i_(t, "feed_errors"), "error"));
	if (i_(t, "unsampled_completions") > 0)
		printf("block:  %lld %s perf counted and never wrote to a ring (not sampled)\n",
		       i_(t, "unsampled_completions"),
		       N(i_(t, "unsampled_completions"), "completion"));
}

static void policy_text(const json_t *src, char *buf, size_t size)
{
	const json_t *p = json_object_get(src, "policy");
	const char *mode = s_(p, "mode");

	if (!strcmp(mode, "reduced"))
		snprintf(buf, size, "reduced %.3g", f_(p, "scale"));
	else
		snprintf(buf, size, "%s", mode);
}

/* How many rows are of what policy disables (never opened; listed after the others). */
static size_t disabled_rows(const json_t *sources)
{
	size_t i, n = 0;
	const json_t *s;

	json_array_foreach(sources, i, s)
		n += !strcmp(s_(json_object_get(s, "policy"), "mode"), "disabled");
	return n;
}

enum { COL_CLASS, COL_NAME, COL_POLICY, COL_EVENTS, COL_EST, COL_CRED, COL_WHY, COL_HEALTH, NCOLS };

/* One aligned line per instance, in the manner of chronyc sources. */
static void print_table(const json_t *sources)
{
	static const char *const head[NCOLS] = {"CLASS",    "NAME",     "POLICY", "EVENTS",
						"EST b/ev", "CREDITED", "WHY NOT", "HEALTH"};
	static const bool right[NCOLS] = {false, false, false, true, true, true, false, false};
	size_t n = json_array_size(sources), w[NCOLS];
	char(*cell)[NCOLS][96] = xcalloc(n ? n : 1, sizeof(*cell));

	for (int k = 0; k < NCOLS; k++)
		w[k] = strlen(head[k]);
	for (size_t i = 0; i < n; i++) {
		const json_t *s = json_array_get(sources, i);
		double est = f_(s, "estimate_bits");

		snprintf(cell[i][COL_CLASS], 96, "%s", s_(s, "class"));
		snprintf(cell[i][COL_NAME], 96, "%s", s_(s, "name"));
		policy_text(s, cell[i][COL_POLICY], 96);
		snprintf(cell[i][COL_EVENTS], 96, "%lld", i_(s, "events"));
		if (isnan(est))
			snprintf(cell[i][COL_EST], 96, "-");
		else
			snprintf(cell[i][COL_EST], 96, "%.2f", est);
		snprintf(cell[i][COL_CRED], 96, "%.1f", f_(s, "credited_bits"));
		snprintf(cell[i][COL_WHY], 96, "%s", entropyctl_client_why_not(s));
		entropyctl_client_health_text(s, cell[i][COL_HEALTH], 96);
		for (int k = 0; k < NCOLS; k++)
			if (strlen(cell[i][k]) > w[k])
				w[k] = strlen(cell[i][k]);
	}
	printf("\n");
	for (int k = 0; k < NCOLS - 1; k++)
		printf(right[k] ? "%*s  " : "%-*s  ", (int)w[k], head[k]);
	printf("%s\n", head[NCOLS - 1]);
	for (size_t i = 0; i < n; i++) {
		const char *state = s_(json_object_get(json_array_get(sources, i), "health"),
				       "state");

		for (int k = 0; k < NCOLS - 1; k++)
			printf(right[k] ? "%*s  " : "%-*s  ", (int)w[k], cell[i][k]);
		printf("%s%s%s\n", paint(state), cell[i][COL_HEALTH], unpaint());
	}
	if (n == disabled_rows(sources))
		printf("(no source instance is open)\n");
	/* Interfaces the kernel samples, or would not let sample, under the table. */
	for (size_t i = 0; i < n; i++) {
		const json_t *s = json_array_get(sources, i), *sm = json_object_get(s, "sampling");

		if (!json_is_object(sm) || !strcmp(s_(sm, "state"), "off"))
			continue;
		if (!strcmp(s_(sm, "state"), "on") && isnan(f_(sm, "arrival_rate")))
			printf("%s/%s: sampled in the kernel, 1 in %.0f packets kept (not credited; "
			       "arrival rate not measured yet)\n",
			       s_(s, "class"), s_(s, "name"), 1 / f_(sm, "ratio"));
		else if (!strcmp(s_(sm, "state"), "on"))
			printf("%s/%s: sampled in the kernel, 1 in %.0f of about %.0f packets a second "
			       "kept (not credited)\n",
			       s_(s, "class"), s_(s, "name"), 1 / f_(sm, "ratio"),
			       f_(sm, "arrival_rate"));
		else
			printf("%s/%s: sampling %s\n", s_(s, "class"), s_(s, "name"), s_(sm, "state"));
	}
	free(cell);
}

/* Every reason that holds (an older daemon gives one). */
static void print_why(const json_t *s)
{
	const json_t *c = json_object_get(s, "credit"), *list = json_object_get(c, "reasons"), *r;
	const char *why = json_string_value(json_object_get(c, "detail"));
	size_t i;

	if (!json_is_array(list) || json_array_size(list) == 0) {
		printf("  why not     %s%s%s\n", why ? entropyctl_client_why_not(s) : "-", why ? ": " : "",
		       why ? why : "");
		return;
	}
	json_array_foreach(list, i, r)
		printf("  %-11s %s: %s\n", i ? "" : "why not", s_(r, "reason"), s_(r, "detail"));
}

/* The state, and why not open with when it is tried again. */
static void print_state(const json_t *s)
{
	const char *detail = json_string_value(json_object_get(s, "detail"));
	double retry = f_(s, "retry_in_s");
	const char *state = s_(s, "state");
	size_t n = strlen(state);

	printf("  state       %s", state);
	/* "open (one source 95% of packets)" says the state once. */
	if (detail && !strncmp(detail, state, n) && detail[n] == ' ')
		printf("%s", s_(s, "detail") + n);
	else if (detail && strcmp(detail, state))
		printf(": %s", s_(s, "detail"));
	if (!isnan(retry))
		printf("; tried again in %.0f s", retry);
	else if (json_is_string(json_object_get(s, "retry")))
		printf("; tried again %s", s_(s, "retry"));
	printf("\n");
}

static void print_sources(const json_t *sources)
{
	size_t i;
	const json_t *s;

	json_array_foreach(sources, i, s) {
		const json_t *p = json_object_get(s, "policy"), *h = json_object_get(s, "health");
		double est = f_(s, "estimate_bits");
		char pol[96];

		policy_text(s, pol, sizeof(pol));
		printf("%s%s/%s\n", i ? "\n" : "", s_(s, "class"), s_(s, "name"));
		if (!strcmp(s_(p, "mode"), "disabled")) {
			/* never opened: nothing else to say */
			print_state(s);
			printf("  policy      %s\n", pol);
			print_why(s);
			continue;
		}
		printf("  kind        %s\n", s_(s, "kind"));
		print_state(s);
		printf("  backend     %s\n", s_(s, "backend"));
		printf("  policy      %s; caps %g bits/event, %g bits/s\n", pol,
		       f_(p, "cap_bits_per_event"), f_(p, "cap_bits_per_second"));
		printf("  estimator   %s; latest estimate ", s_(s, "estimator"));
		if (isnan(est))
			printf("none yet\n");
		else
			printf("%.3f bits/event\n", est);
		if (b_(s, "kernel_credits"))
			printf("  symbols     %s: the kernel credits these events itself (tick %lld ns)\n",
			       s_(s, "symbols"), i_(s, "jiffy_ns"));
		else
			printf("  symbols     %s\n", s_(s, "symbols"));
		printf("  health      %s%s%s; last failure %s; %lld %s; re-qualified %lld %s\n",
		       paint(s_(h, "state")), s_(h, "state"), unpaint(), s_(h, "last_failure"),
		       i_(h, "failures"), N(i_(h, "failures"), "failure"), i_(h, "requalified"),
		       N(i_(h, "requalified"), "time"));
		if (!isnan(f_(h, "retry_in_s")) && !strncmp(s_(h, "state"), "failed", 6))
			printf("  retry       re-qualified after %.0f more seconds of its events\n",
			       f_(h, "retry_in_s"));
		printf("  events      %lld (%lld skipped, %lld merged)\n", i_(s, "events"),
		       i_(s, "skipped"), i_(s, "merged"));
		printf("  mixed       %lld %s\n", i_(s, "mixed_bytes"), N(i_(s, "mixed_bytes"), "byte"));
		printf("  estimated   %.1f bits\n", f_(s, "estimated_bits"));
		printf("  credited    %.1f bits (%.1f more waiting for the health tests)\n",
		       f_(s, "credited_bits"), f_(s, "held_bits"));
		if (json_is_object(json_object_get(s, "sampling"))) {
			const json_t *sm = json_object_get(s, "sampling");
			double rate = f_(sm, "arrival_rate");

			printf("  sampling    %s; 1 in %.0f kept", s_(sm, "state"), 1 / f_(sm, "ratio"));
			if (isnan(rate))
				printf("; arrival rate not measured yet\n");
			else
				printf("; about %.0f arriving a second\n", rate);
		}
		if (json_is_object(json_object_get(s, "credit"))) {
			printf("  weight      %.3g in force\n",
			       f_(json_object_get(s, "credit"), "weight"));
			print_why(s);
		}
	}
	if (json_array_size(sources) == disabled_rows(sources))
		printf("(no source instance is open)\n");
}

/* ---- commands ---- */

static void print_json(json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2));
	putchar('\n');
}

static int cmd_status(struct conn *c, bool json, bool metrics)
{
	json_t *st = NULL, *src = NULL;
	int rc = entropyctl_client_fetch(c, CTL_INTERFACE ".GetStatus", &st);

	if (rc == XC_OK)
		rc = entropyctl_client_fetch(c, CTL_INTERFACE ".GetSources", &src);
	if (rc != XC_OK)
		goto out;
	if (metrics) {
		entropyctl_metrics_print(stdout, st, json_object_get(src, "sources"));
	} else if (json) {
		json_object_set(st, "sources", json_object_get(src, "sources"));
		print_json(st);
	} else {
		print_overview(st);
		print_table(json_object_get(src, "sources"));
	}
out:
	json_decref(st);
	json_decref(src);
	return rc;
}

static int cmd_sources(struct conn *c, bool json)
{
	json_t *src = NULL;
	int rc = entropyctl_client_fetch(c, CTL_INTERFACE ".GetSources", &src);

	if (rc != XC_OK)
		return rc;
	if (json)
		print_json(src);
	else
		print_sources(json_object_get(src, "sources"));
	json_decref(src);
	return XC_OK;
}

/* Is stderr the journal (systemd's JOURNAL_STREAM names it, as for ExecReload=)? The daemon
 * has logged every error and notice there already: once is enough. */
static bool stderr_to_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static int cmd_reload(struct conn *c, bool json)
{
	bool again = stderr_to_journal();
	static const char method[] = CTL_INTERFACE ".Reload";
	struct ctl_reply r;
	const json_t *errs, *e;
	int rc = entropyctl_client_call(c, method, NULL, &r);
	size_t i;

	if (rc != XC_OK)
		return rc;
	if (!r.error) {
		/* A daemon before protocol 5 sends no notices. */
		const json_t *notes = json_object_get(r.params, "notices");

		if (json) {
			json_t *out = json_pack("{s:b, s:o}", "reloaded", 1, "notices",
						notes ? json_deep_copy(notes) : json_array());

			print_json(out);
			json_decref(out);
		} else {
			json_array_foreach(notes, i, e)
				if (!again)
					fprintf(stderr, "%s\n",
						json_string_value(e) ? json_string_value(e) : "?");
			printf("configuration reloaded\n");
		}
	} else if (strcmp(r.error, CTL_E_CONFIG_INVALID) == 0) {
		errs = json_object_get(r.params, "errors");
		if (json) {
			/* The errors once, in the form asked for; stderr keeps the one line. */
			json_t *out = json_pack("{s:b, s:O}", "reloaded", 0, "errors", errs);

			print_json(out);
			json_decref(out);
		} else if (!again) {
			json_array_foreach(errs, i, e)
				fprintf(stderr, "%s\n",
					json_string_value(e) ? json_string_value(e) : "?");
		}
		entropyctl_client_errx_msg("reload refused: the configuration has %zu %s%s; the running one stays",
			 json_array_size(errs), N(json_array_size(errs), "error"),
			 again && !json ? " (each in the daemon's log above)" : "");
		rc = XC_REFUSED;
	} else {
		rc = entropyctl_client_reply_failed(method, &r);
	}
	ctl_proto_reply_free(&r);
	return rc;
}

/* NO_COLOR (no-color.org): set to a value that is not empty. */
static bool no_color(void)
{
	const char *v = getenv("NO_COLOR");

	return v && *v;
}

enum { OPT_COLOR = 256, OPT_INTERVAL };

/* Seconds from 0.1 to 3600 in *out, or false. */
static bool seconds_arg(const char *arg, double max, double *out)
{
	char *end;

	*out = strtod(arg, &end);
	return !*end && end != arg && *out >= 0.1 && *out <= max;
}

static const struct option long_opts[] = {
	{"socket", required_argument, NULL, 's'},
	{"json", no_argument, NULL, 'j'},
	{"color", required_argument, NULL, OPT_COLOR},
	{"colour", required_argument, NULL, OPT_COLOR},
	{"timeout", required_argument, NULL, 't'},
	{"interval", required_argument, NULL, 'i'},
	{"warning", required_argument, NULL, 'w'},
	{"critical", required_argument, NULL, 'c'},
	{"version", no_argument, NULL, 'V'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
	const char *path = CTL_DEFAULT_SOCKET, *cmd = "status", *when = "auto";
	double timeout = 10, every = 1;
	struct check_limits lim = {CHECK_WARNING_S, CHECK_CRITICAL_S};
	bool json = false;
	struct conn c;
	int opt, rc, usage_rc = XC_USAGE;

	ctl_proto_json_seed_client(); /* reads no randomness: see ctl_proto.h */
	/* A monitoring plugin's usage error is UNKNOWN: 2 would read as CRITICAL. */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "check"))
			usage_rc = CHECK_UNKNOWN;
	while ((opt = getopt_long(argc, argv, "s:jt:i:w:c:Vh", long_opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case OPT_COLOR:
			when = optarg;
			if (strcmp(when, "auto") && strcmp(when, "always") && strcmp(when, "never")) {
				entropyctl_client_errx_msg("--color: %s: use auto, always or never", when);
				return usage_rc;
			}
			break;
		case 't':
			if (!seconds_arg(optarg, 3600, &timeout)) {
				entropyctl_client_errx_msg("--timeout: %s: give seconds from 0.1 to 3600", optarg);
				return usage_rc;
			}
			break;
		case 'i':
			if (!seconds_arg(optarg, 3600, &every)) {
				entropyctl_client_errx_msg("--interval: %s: give seconds from 0.1 to 3600", optarg);
				return usage_rc;
			}
			break;
		case 'w':
		case 'c':
			if (!seconds_arg(optarg, 86400, opt == 'w' ? &lim.warning_s
								  : &lim.critical_s)) {
				entropyctl_client_errx_msg("--%s: %s: give seconds from 0.1 to 86400",
					 opt == 'w' ? "warning" : "critical", optarg);
				return usage_rc;
			}
			break;
		case 'V':
			printf("entropyctl %s (control protocol %d)\n", PACKAGE_VERSION,
			       CTL_PROTO_VERSION);
			return XC_OK;
		case 'h':
			usage(stdout);
			return XC_OK;
		default:
			/* getopt said what was wrong; the whole help would bury it. */
			fputs("Try \"entropyctl --help\" for more information.\n", stderr);
			return usage_rc;
		}
	}
	if (optind < argc)
		cmd = argv[optind++];
	if (optind < argc) {
		entropyctl_client_errx_msg("%s: unexpected argument after the command", argv[optind]);
		return usage_rc;
	}
	if (strcmp(cmd, "status") && strcmp(cmd, "sources") && strcmp(cmd, "reload") &&
	    strcmp(cmd, "metrics") && strcmp(cmd, "watch") && strcmp(cmd, "check")) {
		entropyctl_client_errx_msg("%s: unknown command (status, sources, watch, reload, metrics or check)",
			 cmd);
		return usage_rc;
	}
	if (json && !strcmp(cmd, "check")) {
		entropyctl_client_errx_msg("--json: check answers with its exit status and one line (status --json "
			 "has every detail)");
		return usage_rc;
	}
	if (lim.warning_s > lim.critical_s) {
		entropyctl_client_errx_msg("--warning %g is above --critical %g", lim.warning_s, lim.critical_s);
		return usage_rc;
	}
	if (json && !strcmp(cmd, "watch")) {
		entropyctl_client_errx_msg("--json: watch is for people (status --json, repeated, is for scripts)");
		return XC_USAGE;
	}
	if (json && !strcmp(cmd, "metrics")) {
		entropyctl_client_errx_msg("--json: metrics are in the Prometheus text format only (status --json "
			 "has the same counters)");
		return XC_USAGE;
	}
	colour = !strcmp(when, "always") ||
		 (!strcmp(when, "auto") && isatty(STDOUT_FILENO) && !no_color() &&
		  !(getenv("TERM") && !strcmp(getenv("TERM"), "dumb")));
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(cmd, "watch"))
		return entropyctl_watch_cmd(path, timeout, every);
	if (!strcmp(cmd, "check")) {
		rc = entropyctl_check_cmd(path, timeout, &lim);
		if (fflush(stdout) != 0 || ferror(stdout))
			return CHECK_UNKNOWN;
		return rc;
	}
	rc = entropyctl_client_open(&c, path, timeout);
	if (rc != XC_OK)
		return rc;
	if (!strcmp(cmd, "status"))
		rc = cmd_status(&c, json, false);
	else if (!strcmp(cmd, "metrics"))
		rc = cmd_status(&c, false, true);
	else if (!strcmp(cmd, "sources"))
		rc = cmd_sources(&c, json);
	else
		rc = cmd_reload(&c, json);
	entropyctl_client_close(&c);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		entropyctl_client_errx_msg("cannot write the output: %s", strerror(errno));
		return rc ? rc : XC_PROTOCOL;
	}
	return rc;
}
