/* check_priv_policy: what the privileged process allows (priv_policy.c), from real
 * configuration files and what this machine shows: the interfaces and input nodes selected,
 * the credit ceiling (its rate, the bucket, the clip, the boot allowance, a reload), and the
 * budgets of packet sockets and perf events. */
#include "autoconf.h"

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "priv_policy.h"
#include "testutil.h"
#include "util.h"

static char dir[64];

/* A configuration from text, its input.watch then the test's directory. */
static struct config *load(const char *text)
{
	struct config_errors errs = {0};
	char *path = xasprintf("%s/entropyd.conf", dir);
	FILE *f = fopen(path, "we");
	struct config *cfg;

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	cfg = config_load(path, &errs);
	ck_assert_msg(cfg != NULL, "%s: %s", text, errs.n ? errs.msg[0] : "?");
	config_errors_free(&errs);
	free(path);
	free(cfg->input.watch);
	cfg->input.watch = xasprintf("%s/input", dir);
	return cfg;
}

/* Only the input class, at cap bits per second an instance, in mode. */
static struct config *input_only(const char *mode, double cap)
{
	char *text = xasprintf("policy = { input = { mode = \"%s\"; cap_bits_per_second = %.1f; "
			       "scale = 0.25; };\n block = { mode = \"disabled\"; };\n"
			       " network = { mode = \"disabled\"; }; };\n",
			       mode, cap);
	struct config *cfg = load(text);

	free(text);
	return cfg;
}

static void node(const char *name)
{
	char *path = xasprintf("%s/input/%s", dir, name);

	ck_assert_int_eq(mkfifo(path, 0600), 0);
	free(path);
}

static void setup(void)
{
	char *input;

	log_open(true, 0);
	tu_mkdtemp(dir, sizeof(dir), "%s/priv_policy.XXXXXX", tu_tmpdir());
	input = xasprintf("%s/input", dir);
	ck_assert_int_eq(mkdir(input, 0755), 0);
	free(input);
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}

/* The input nodes it vouches for: event* entries there at start (and, of those made later,
 * only character devices of the input major, which a collector cannot make). */
START_TEST(test_rate_counts_start_nodes)
{
	struct priv_policy pol;

	node("event0");
	node("event1");
	node("mouse0"); /* not an event node */
	priv_policy_init(&pol, input_only("trusted", 64));
	ck_assert_double_eq(priv_policy_rate(&pol), 128);
	node("event2"); /* a FIFO made after the start: no more credit */
	priv_policy_recount(&pol);
	ck_assert_double_eq(priv_policy_rate(&pol), 128);
	ck_assert_double_eq(pol.rate, 128);
	ck_assert_double_eq(pol.depth, fmax(PRIV_DEPTH_S * 128, PRIV_DEPTH_MIN));
	priv_policy_free(&pol);
}
END_TEST

START_TEST(test_rate_by_mode)
{
	static const struct {
		const char *mode;
		double rate;
	} modes[] = {{"trusted", 2 * 64}, {"reduced", 2 * 0.25 * 64}, {"mix-only", 0},
		     {"disabled", 0}};

	node("event0");
	node("event1");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct priv_policy pol;

		priv_policy_init(&pol, input_only(modes[i].mode, 64));
		ck_assert_msg(priv_policy_rate(&pol) == modes[i].rate, "%s: %g bits/s, want %g",
			      modes[i].mode, priv_policy_rate(&pol), modes[i].rate);
		priv_policy_free(&pol);
	}
}
END_TEST

/* An instance's override that allows more than its class raises what one instance may get. */
START_TEST(test_rate_override)
{
	struct priv_policy pol;

	node("event0");
	priv_policy_init(&pol, load("policy = { input = { mode = \"mix-only\"; "
				    "cap_bits_per_second = 64.0; instances = (\n"
				    "{ name = \"event9\"; mode = \"trusted\"; "
				    "cap_bits_per_second = 100.0; } ); };\n"
				    "block = { mode = \"disabled\"; }; network = { mode = "
				    "\"disabled\"; }; };\n"));
	ck_assert_double_eq(priv_policy_rate(&pol), 100);
	priv_policy_free(&pol);
}
END_TEST

/* The bucket starts with one second of the rate: a request for more is clipped to it, the rest
 * counted; what was credited is spent; then only what the rate refilled since is left. */
START_TEST(test_ceiling_clips)
{
	struct priv_policy pol;
	uint64_t r0;
	double left;
	int got, again;
	char *log;

	node("event0");
	priv_policy_init(&pol, input_only("trusted", 64));
	pol.boot_left = 0; /* whatever this kernel still needs */
	ck_assert_double_eq(pol.tokens, 64);
	r0 = pol.refill_ns;
	tu_capture_begin();
	got = priv_policy_ceiling(&pol, 1000);
	log = tu_capture_end();
	/* One second of 64 bits/s, and what the rate refilled since its last look. */
	ck_assert_int_eq(got, (int)floor(64.0 + 64.0 * (double)(pol.refill_ns - r0) / 1e9));
	ck_assert_int_lt(got, 1000);
	ck_assert_uint_eq(pol.asked, 1000);
	ck_assert_uint_eq(pol.clipped, (uint64_t)(1000 - got));
	ck_assert_ptr_nonnull(strstr(log, "credit ceiling"));
	free(log);
	priv_policy_spend(&pol, got);
	ck_assert_uint_eq(pol.credited, (uint64_t)got);
	left = pol.tokens;
	ck_assert(left >= 0 && left < 1);
	r0 = pol.refill_ns;
	tu_capture_begin();
	again = priv_policy_ceiling(&pol, 1000);
	free(tu_capture_end());
	ck_assert_int_eq(again, (int)floor(left + 64.0 * (double)(pol.refill_ns - r0) / 1e9));
	/* Within the bucket, nothing is clipped. */
	ck_assert_int_eq(priv_policy_ceiling(&pol, 0), 0);
	priv_policy_free(&pol);
}
END_TEST

/* The boot allowance is spent after the tokens, and never refilled. */
START_TEST(test_ceiling_boot_allowance)
{
	struct priv_policy pol;
	int got;

	priv_policy_init(&pol, input_only("disabled", 64)); /* no tokens at all */
	ck_assert_double_eq(pol.rate, 0);
	pol.boot_left = 300;
	tu_capture_begin();
	got = priv_policy_ceiling(&pol, 1000);
	ck_assert_int_eq(got, 300);
	priv_policy_spend(&pol, got);
	ck_assert_double_eq(pol.boot_left, 0);
	ck_assert_int_eq(priv_policy_ceiling(&pol, 8), 0);
	free(tu_capture_end());
	ck_assert_uint_eq(pol.credited, 300);
	ck_assert_uint_eq(pol.clipped, 700 + 8);
	priv_policy_free(&pol);
}
END_TEST

/* A reload to a configuration that allows nothing empties the bucket at once. */
START_TEST(test_reload)
{
	struct priv_policy pol;

	node("event0");
	priv_policy_init(&pol, input_only("trusted", 64));
	pol.boot_left = 0;
	ck_assert_double_gt(pol.tokens, 0);
	priv_policy_reload(&pol, input_only("disabled", 64));
	ck_assert_double_eq(pol.rate, 0);
	ck_assert_double_eq(pol.tokens, 0);
	tu_capture_begin();
	ck_assert_int_eq(priv_policy_ceiling(&pol, 64), 0);
	free(tu_capture_end());
	priv_policy_free(&pol);
}
END_TEST

START_TEST(test_iface_selected)
{
	struct priv_policy pol;

	priv_policy_init(&pol, load("policy = { network = { mode = \"trusted\"; }; };\n"
				    "sources = { network = { interfaces = [ \"lo\" ]; }; };\n"));
	ck_assert(priv_policy_iface(&pol, "lo"));
	ck_assert(!priv_policy_iface(&pol, "lo0"));
	ck_assert(!priv_policy_iface(&pol, "nosuch9"));
	priv_policy_free(&pol);
	priv_policy_init(&pol, load("policy = { network = { mode = \"trusted\"; instances = (\n"
				    "{ name = \"lx\"; mode = \"disabled\"; } ); }; };\n"
				    "sources = { network = { interfaces = [ \"l?\" ]; }; };\n"));
	ck_assert(priv_policy_iface(&pol, "lo"));  /* by the glob */
	ck_assert(!priv_policy_iface(&pol, "lx")); /* disabled by its own rule */
	priv_policy_free(&pol);
	/* auto: any interface but loopback */
	priv_policy_init(&pol, load("policy = { network = { mode = \"trusted\"; }; };\n"));
	ck_assert(!priv_policy_iface(&pol, "lo"));
	priv_policy_free(&pol);
	/* the class disabled: none */
	priv_policy_init(&pol, load("policy = { network = { mode = \"disabled\"; }; };\n"
				    "sources = { network = { interfaces = [ \"lo\" ]; }; };\n"));
	ck_assert(!priv_policy_iface(&pol, "lo"));
	priv_policy_free(&pol);
}
END_TEST

START_TEST(test_disk_selected)
{
	struct priv_policy pol;
	struct block_disk_info info;

	priv_policy_init(&pol, load("sources = { block = { devices = [ \"nosuch9\", \"..\" ]; }; };\n"));
	ck_assert(!priv_policy_disk(&pol, "nosuch9", &info)); /* not in /sys/block */
	ck_assert(!priv_policy_disk(&pol, "..", &info));
	priv_policy_free(&pol);
}
END_TEST

/* One packet socket per selected interface (lo) and PRIV_PACKET_SPARE more at once; then
 * EAGAIN until the budget refills (one per PRIV_PACKET_EVERY_S). */
START_TEST(test_packet_budget)
{
	struct priv_policy pol;
	int given = 0;
	char *log;

	priv_policy_init(&pol, load("policy = { network = { mode = \"trusted\"; }; };\n"
				    "sources = { network = { interfaces = [ \"lo\" ]; }; };\n"));
	tu_capture_begin();
	for (int i = 0; i < 10; i++)
		given += priv_policy_packet(&pol);
	log = tu_capture_end();
	ck_assert_int_eq(given, 1 + PRIV_PACKET_SPARE);
	ck_assert_ptr_nonnull(strstr(log, "more packet sockets than 1 selected interface need"));
	free(log);
	priv_policy_free(&pol);
}
END_TEST

/* Perf events per CPU and kind: an owner needs one, and PRIV_PERF_SPARE more come at once;
 * then NULL. A CPU the system cannot have gets none. */
START_TEST(test_perf_budget)
{
	struct priv_policy pol;
	int given = 0;
	double *tokens;
	char *log;

	priv_policy_init(&pol, load(""));
	ck_assert_uint_eq(pol.perf_cpus, (unsigned)get_nprocs_conf());
	ck_assert_ptr_null(priv_policy_perf(&pol, pol.perf_cpus, PRIV_PERF_OWNER));
	ck_assert_ptr_null(priv_policy_perf(&pol, 0, PRIV_PERF_WAKER + 1));
	tu_capture_begin();
	for (int i = 0; i < 10 && (tokens = priv_policy_perf(&pol, 0, PRIV_PERF_OWNER)); i++) {
		*tokens -= 1; /* made: as priv_dispatch.c takes it */
		given++;
	}
	log = tu_capture_end();
	ck_assert_int_eq(given, 1 + PRIV_PERF_SPARE);
	ck_assert_ptr_nonnull(strstr(log, "more owner perf events on CPU 0"));
	free(log);
	/* Another CPU's, or another kind's, is its own. */
	ck_assert_ptr_nonnull(priv_policy_perf(&pol, 0, PRIV_PERF_WAKER));
	if (pol.perf_cpus > 1)
		ck_assert_ptr_nonnull(priv_policy_perf(&pol, 1, PRIV_PERF_OWNER));
	priv_policy_free(&pol);
}
END_TEST

/* The disk kind needs one event per disk the configuration selects: the ceiling's count of
 * /sys/block, taken at init and again on a reload, serves the budget without a walk of its
 * own; its need at once is that many (at least one) and PRIV_PERF_SPARE more. */
START_TEST(test_perf_budget_disks)
{
	struct priv_policy pol;
	struct block_disk_info info;
	struct dirent *e;
	unsigned disks = 0;
	int given = 0;
	double *tokens;
	DIR *d;
	char *log;

	priv_policy_init(&pol, load(""));
	d = opendir("/sys/block");
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		disks += e->d_name[0] != '.' && priv_policy_disk(&pol, e->d_name, &info);
	closedir(d);
	ck_assert_uint_eq(pol.disks, disks);
	tu_capture_begin();
	for (int i = 0; i < 100 && (tokens = priv_policy_perf(&pol, 0, PRIV_PERF_DISK)); i++) {
		*tokens -= 1;
		given++;
	}
	log = tu_capture_end();
	ck_assert_int_eq(given, (disks ? (int)disks : 1) + PRIV_PERF_SPARE);
	ck_assert_ptr_nonnull(strstr(log, "more disk perf events on CPU 0"));
	free(log);
	/* A reload that disables the class counts none at once. */
	priv_policy_reload(&pol, load("policy = { block = { mode = \"disabled\"; }; };\n"));
	ck_assert_uint_eq(pol.disks, 0);
	priv_policy_free(&pol);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("priv_policy");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_rate_counts_start_nodes);
	tcase_add_test(tc, test_rate_by_mode);
	tcase_add_test(tc, test_rate_override);
	tcase_add_test(tc, test_ceiling_clips);
	tcase_add_test(tc, test_ceiling_boot_allowance);
	tcase_add_test(tc, test_reload);
	tcase_add_test(tc, test_iface_selected);
	tcase_add_test(tc, test_disk_selected);
	tcase_add_test(tc, test_packet_budget);
	tcase_add_test(tc, test_perf_budget);
	tcase_add_test(tc, test_perf_budget_disks);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
