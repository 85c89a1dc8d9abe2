/* check_entropyctl_metrics: entropyctl metrics from a fixed status and source list, as the
 * daemon sends them: the figures of each family, the collector's walls, what an older daemon
 * does not say left out, label values escaped; and the whole output through the strict
 * checker of the exposition format (tests/helpers/prom_check.awk) that t_ctl.sh runs on a
 * live daemon's. */
#include "autoconf.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "entropyctl_metrics.h"
#include "testutil.h"
#include "util.h"

static const char status_json[] =
	"{\"collector\": {\"user\": \"entropyd\", \"uid\": 998, \"gid\": 997,"
	" \"bounding_set_empty\": true, \"no_new_privs\": true, \"pid_namespace\": true,"
	" \"mount_namespace\": true, \"read_only\": \"recursive\", \"landlock_abi\": 6,"
	" \"seccomp\": true, \"missing\": []},"
	" \"daemon\": {\"version\": \"1.2\", \"protocol\": 3, \"pid\": 42, \"uptime_s\": 3600,"
	" \"feed_mode\": \"auto\", \"feed_phase\": \"mix\", \"sink\": \"kernel\", \"reloads\": 2,"
	" \"reload_failures\": 1, \"config\": \"/etc/entropyd.conf\"},"
	" \"kernel\": {\"version\": \"6.1\", \"semantics\": \"until-ready\","
	" \"semantics_evidence\": \"poolsize\", \"crng_ready\": true, \"credit_counts\": false,"
	" \"entropy_avail\": 256, \"ready_after_s\": 1.4, \"hz\": 250,"
	" \"seed\": {\"verdict\": \"credited\", \"initramfs\": {\"credited_bits\": 300.0}}},"
	" \"totals\": {\"instances\": 2, \"events\": 5000, \"skipped\": 10, \"mixed_bytes\": 40000,"
	" \"estimated_bits\": 900.5, \"credited_bits\": 230.25, \"held_bits\": 0.0, \"feeds\": 12,"
	" \"fed_bytes\": 4096, \"fed_credit_bits\": 230, \"reseeds\": 2, \"feed_errors\": 0,"
	" \"unsampled_completions\": 7}}";

static const char sources_json[] =
	"[{\"class\": \"block\", \"name\": \"loop0\", \"state\": \"open\", \"up\": true,"
	"  \"policy\": {\"mode\": \"trusted\", \"scale\": null}, \"estimate_bits\": 1.5,"
	"  \"health\": {\"state\": \"ok\", \"failures\": 0}, \"events\": 100, \"skipped\": 1,"
	"  \"mixed_bytes\": 800, \"estimated_bits\": 150.0, \"credited_bits\": 140.0,"
	"  \"credit\": {\"reason\": null, \"weight\": 1.0}, \"sampling\": null},"
	" {\"class\": \"network\", \"name\": \"eth\\\"0\\\\\", \"state\": \"sampled\", \"up\": true,"
	"  \"policy\": {\"mode\": \"reduced\", \"scale\": 0.25}, \"estimate_bits\": null,"
	"  \"health\": {\"state\": \"failed-permanent\", \"failures\": 3}, \"events\": 9,"
	"  \"skipped\": 0, \"mixed_bytes\": 72, \"estimated_bits\": 0.0, \"credited_bits\": 0.0,"
	"  \"credit\": {\"reason\": \"health\", \"weight\": 0.25},"
	"  \"sampling\": {\"state\": \"on\", \"ratio\": 0.5, \"arrival_rate\": 30000.0}},"
	" {\"class\": \"input\", \"name\": \"*\", \"state\": \"disabled\", \"up\": false,"
	"  \"policy\": {\"mode\": \"disabled\"}, \"health\": {\"state\": \"-\"},"
	"  \"credit\": {\"reason\": \"disabled\"}}]";

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);

	ck_assert_msg(v != NULL, "fixture: %s at %d", e.text, e.position);
	return v;
}

/* The status and sources each test starts from (and may change). */
static json_t *st, *src;

static void setup(void)
{
	st = parse(status_json);
	src = parse(sources_json);
}

static void teardown(void)
{
	json_decref(st);
	json_decref(src);
}

/* The metrics of st and sources, as entropyctl prints them. */
static char *metrics(const json_t *status, const json_t *sources)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(out);
	entropyctl_metrics_print(out, status, sources);
	ck_assert_int_eq(fclose(out), 0);
	return buf;
}

/* Does text hold this exact line. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

#define ASSERT_LINE(text, line) \
	ck_assert_msg(has_line(text, line), "no line \"%s\" in:\n%s", line, text)
#define ASSERT_NO(text, s) ck_assert_msg(!strstr(text, s), "\"%s\" in:\n%s", s, text)

/* The strict checker's verdict on text: its exit status, its complaints in *why. */
static int prom_check(const char *text, char **why)
{
	char *path = xasprintf("%s/check_entropyctl_metrics.XXXXXX", tu_tmpdir());
	int fd = mkstemp(path);
	FILE *f, *p;
	char *cmd, line[512];
	int rc;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	cmd = xasprintf("awk -f '%s/tests/helpers/prom_check.awk' '%s' 2>&1", SRCDIR, path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	*why = xstrdup("");
	while (fgets(line, sizeof(line), p)) {
		char *more = xasprintf("%s%s", *why, line);

		free(*why);
		*why = more;
	}
	rc = pclose(p);
	unlink(path);
	free(path);
	free(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

START_TEST(test_daemon_and_totals)
{
	char *m = metrics(st, src);

	ASSERT_LINE(m, "entropyd_info{version=\"1.2\",feed_mode=\"auto\",feed_phase=\"mix\","
		       "sink=\"kernel\",kernel=\"6.1\"} 1");
	ASSERT_LINE(m, "entropyd_uptime_seconds 3600");
	ASSERT_LINE(m, "entropyd_kernel_semantics_info{semantics=\"until-ready\","
		       "evidence=\"poolsize\"} 1");
	ASSERT_LINE(m, "entropyd_kernel_crng_ready 1");
	ASSERT_LINE(m, "entropyd_kernel_credit_counts 0");
	ASSERT_LINE(m, "entropyd_kernel_entropy_avail_bits 256");
	ASSERT_LINE(m, "entropyd_kernel_crng_ready_after_seconds 1.4");
	ASSERT_LINE(m, "entropyd_initramfs_credited_bits 300");
	ASSERT_LINE(m, "entropyd_sources 2");
	ASSERT_LINE(m, "entropyd_events_total 5000");
	ASSERT_LINE(m, "entropyd_estimated_bits_total 900.5");
	ASSERT_LINE(m, "entropyd_credited_bits_total 230.25");
	ASSERT_LINE(m, "entropyd_fed_credit_bits_total 230");
	ASSERT_LINE(m, "entropyd_reseeds_total 2");
	ASSERT_LINE(m, "entropyd_feed_errors_total 0");
	ASSERT_LINE(m, "entropyd_block_unsampled_completions_total 7");
	ASSERT_LINE(m, "entropyd_reloads_total 2");
	ASSERT_LINE(m, "entropyd_reload_failures_total 1");
	ASSERT_LINE(m, "# TYPE entropyd_events_total counter");
	ASSERT_LINE(m, "# TYPE entropyd_sources gauge");
	free(m);
}
END_TEST

START_TEST(test_per_source)
{
	char *m = metrics(st, src);

	ASSERT_LINE(m, "entropyd_source_up{class=\"block\",name=\"loop0\"} 1");
	ASSERT_LINE(m, "entropyd_source_state{class=\"block\",name=\"loop0\",state=\"open\"} 1");
	ASSERT_LINE(m, "entropyd_source_events_total{class=\"block\",name=\"loop0\"} 100");
	ASSERT_LINE(m, "entropyd_source_credited_bits_total{class=\"block\",name=\"loop0\"} 140");
	ASSERT_LINE(m, "entropyd_source_estimate_bits_per_event{class=\"block\",name=\"loop0\"} 1.5");
	ASSERT_LINE(m, "entropyd_source_health_ok{class=\"block\",name=\"loop0\"} 1");
	ASSERT_LINE(m, "entropyd_source_health_failed{class=\"block\",name=\"loop0\"} 0");
	ASSERT_LINE(m, "entropyd_source_credit_weight{class=\"block\",name=\"loop0\"} 1");
	ASSERT_LINE(m, "entropyd_source_credit_reason{class=\"block\",name=\"loop0\","
		       "reason=\"none\"} 1");
	/* A name with a quote and a backslash, escaped; no estimate yet is NaN. */
	ASSERT_LINE(m, "entropyd_source_estimate_bits_per_event{class=\"network\","
		       "name=\"eth\\\"0\\\\\"} NaN");
	ASSERT_LINE(m, "entropyd_source_health_failed{class=\"network\",name=\"eth\\\"0\\\\\"} 1");
	ASSERT_LINE(m, "entropyd_source_health_failures_total{class=\"network\","
		       "name=\"eth\\\"0\\\\\"} 3");
	ASSERT_LINE(m, "entropyd_source_credit_weight{class=\"network\",name=\"eth\\\"0\\\\\"} 0.25");
	ASSERT_LINE(m, "entropyd_source_state{class=\"network\",name=\"eth\\\"0\\\\\","
		       "state=\"sampled\"} 1");
	/* Sampling families: only the instance that samples. */
	ASSERT_LINE(m, "entropyd_source_sample_ratio{class=\"network\",name=\"eth\\\"0\\\\\"} 0.5");
	ASSERT_LINE(m, "entropyd_source_arrival_rate_per_second{class=\"network\","
		       "name=\"eth\\\"0\\\\\"} 30000");
	ASSERT_NO(m, "entropyd_source_sample_ratio{class=\"block\"");
	/* What policy disables: its reason, nothing more. */
	ASSERT_LINE(m, "entropyd_source_credit_reason{class=\"input\",name=\"*\","
		       "reason=\"disabled\"} 1");
	ASSERT_NO(m, "entropyd_source_up{class=\"input\"");
	ASSERT_NO(m, "entropyd_source_events_total{class=\"input\"");
	free(m);
}
END_TEST

START_TEST(test_walls_up)
{
	char *m = metrics(st, src);
	static const char *const walls[] = {"user", "bounding_set", "no_new_privs",
					    "pid_namespace", "mount_namespace",
					    "read_only_recursive", "landlock", "seccomp"};

	ASSERT_LINE(m, "# TYPE entropyd_collector_wall gauge");
	for (size_t i = 0; i < ARRAY_SIZE(walls); i++) {
		char *line = xasprintf("entropyd_collector_wall{wall=\"%s\"} 1", walls[i]);

		ASSERT_LINE(m, line);
		free(line);
	}
	ck_assert_uint_eq(tu_count(m, "\nentropyd_collector_wall{"), ARRAY_SIZE(walls));
	ASSERT_LINE(m, "entropyd_collector_landlock_abi 6");
	ASSERT_LINE(m, "entropyd_collector_walls_missing 0");
	free(m);
}
END_TEST

/* Walls down, as a collector on an older kernel or in a container has them. */
START_TEST(test_walls_down)
{
	json_t *w = json_object_get(st, "collector");
	char *m;

	json_object_set_new(w, "uid", json_integer(0));
	json_object_set_new(w, "pid_namespace", json_false());
	json_object_set_new(w, "read_only", json_string("top-mounts"));
	json_object_set_new(w, "landlock_abi", json_null());
	json_object_set_new(w, "missing", json_pack("[s, s]", "Landlock: EPERM", "PID namespace"));
	m = metrics(st, src);
	ASSERT_LINE(m, "entropyd_collector_wall{wall=\"user\"} 0");
	ASSERT_LINE(m, "entropyd_collector_wall{wall=\"pid_namespace\"} 0");
	ASSERT_LINE(m, "entropyd_collector_wall{wall=\"mount_namespace\"} 1");
	ASSERT_LINE(m, "entropyd_collector_wall{wall=\"read_only_recursive\"} 0");
	ASSERT_LINE(m, "entropyd_collector_wall{wall=\"landlock\"} 0");
	ASSERT_LINE(m, "entropyd_collector_wall{wall=\"seccomp\"} 1");
	ASSERT_LINE(m, "entropyd_collector_landlock_abi 0");
	ASSERT_LINE(m, "entropyd_collector_walls_missing 2");
	free(m);
}
END_TEST

/* An older daemon: no collector, no semantics, no tracepoint, no weight, no "up". Nothing
 * is made up for what it does not say. */
START_TEST(test_older_daemon)
{
	json_t *s0 = json_array_get(src, 0), *s1 = json_array_get(src, 1);
	char *m, *why;

	json_object_del(st, "collector");
	json_object_del(json_object_get(st, "kernel"), "semantics");
	json_object_del(json_object_get(st, "kernel"), "ready_after_s");
	json_object_set_new(json_object_get(st, "kernel"), "entropy_avail", json_null());
	json_object_del(json_object_get(st, "kernel"), "seed");
	json_object_set_new(json_object_get(st, "totals"), "unsampled_completions", json_null());
	json_object_del(s0, "up");
	json_object_del(json_object_get(s0, "credit"), "weight");
	json_object_del(json_object_get(s1, "credit"), "weight");
	json_array_remove(src, 2);
	m = metrics(st, src);
	ASSERT_NO(m, "entropyd_collector_");
	ASSERT_NO(m, "entropyd_kernel_semantics_info");
	ASSERT_NO(m, "entropyd_kernel_crng_ready_after_seconds");
	ASSERT_NO(m, "entropyd_kernel_entropy_avail_bits");
	ASSERT_NO(m, "entropyd_initramfs_credited_bits");
	ASSERT_NO(m, "entropyd_block_unsampled_completions_total");
	/* Up: from the policy; weight: the policy's (reduced: its scale). */
	ASSERT_LINE(m, "entropyd_source_up{class=\"block\",name=\"loop0\"} 1");
	ASSERT_LINE(m, "entropyd_source_credit_weight{class=\"block\",name=\"loop0\"} 1");
	ASSERT_LINE(m, "entropyd_source_credit_weight{class=\"network\",name=\"eth\\\"0\\\\\"} 0.25");
	ck_assert_msg(prom_check(m, &why) == 0, "%s\n%s", why, m);
	free(why);
	free(m);
}
END_TEST

/* The whole output passes the strict checker; and the checker does fail a broken copy, so
 * that its pass means something. */
START_TEST(test_strict_format)
{
	char *m = metrics(st, src), *why, *broken;

	ck_assert_msg(prom_check(m, &why) == 0, "%s\n%s", why, m);
	free(why);
	broken = xasprintf("%sentropyd_events_total 1\n", m);
	ck_assert_int_eq(prom_check(broken, &why), 1);
	ck_assert_ptr_nonnull(strstr(why, "interleaved"));
	free(why);
	free(broken);
	/* No instance at all: still valid, and no per-source family is opened empty. */
	free(m);
	json_array_clear(src);
	m = metrics(st, src);
	ASSERT_NO(m, "entropyd_source_");
	ck_assert_msg(prom_check(m, &why) == 0, "%s\n%s", why, m);
	free(why);
	free(m);
}
END_TEST

static Suite *entropyctl_metrics_suite(void)
{
	Suite *s = suite_create("entropyctl_metrics");
	TCase *tc = tcase_create("metrics");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_daemon_and_totals);
	tcase_add_test(tc, test_per_source);
	tcase_add_test(tc, test_walls_up);
	tcase_add_test(tc, test_walls_down);
	tcase_add_test(tc, test_older_daemon);
	tcase_add_test(tc, test_strict_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(entropyctl_metrics_suite());
}
