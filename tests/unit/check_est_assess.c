/* check_est_assess: entropyd --assess (est_assess.c): NIST's reference files assessed to the
 * min-entropy NIST's ea_non_iid gives them (tests/data/sp80090b), the credit each policy rule
 * makes of it, text and JSON, and every file it refuses, with why. */
#include "autoconf.h"

#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "est_90b_noniid.h"
#include "est_assess.h"
#include "testutil.h"
#include "util.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif
#define DATADIR SRCDIR "/tests/data/sp80090b/"

struct run {
	int rc;
	char *out, *err;
};

static struct run assess(const struct assess_opts *o, const struct config *cfg)
{
	struct run r = {0};
	size_t lo = 0, le = 0;
	FILE *out = open_memstream(&r.out, &lo), *err = open_memstream(&r.err, &le);

	ck_assert(out && err);
	r.rc = est_assess_run(o, cfg, out, err);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_int_eq(fclose(err), 0);
	return r;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* NIST's "KEY: value" or "KEY = value" at the end of a .res file; NAN if it has none. */
static double nist_final(const char *res, const char *key)
{
	char *k1 = xasprintf("\n%s: ", key), *k2 = xasprintf("\n%s = ", key);
	const char *p = strstr(res, k1), *q = strstr(res, k2);
	double v = p ? strtod(p + strlen(k1), NULL) : q ? strtod(q + strlen(k2), NULL) : NAN;

	free(k1);
	free(k2);
	return v;
}

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	ck_assert_msg(v != NULL, "no \"%s\"", key);
	return json_is_null(v) ? NAN : json_number_value(v);
}

static const struct {
	const char *file;
	unsigned bits;
} refs[] = {{"rand8_short", 8}, {"rand4_short", 4}, {"rand1_short", 1}};

/* NIST's reference files, short ones: the assessed min-entropy, H_original and H_bitstring
 * NIST's tool gives, the block class's default rule (trusted, cap 1) on it, and the warning
 * that 10,000 samples are fewer than SP 800-90B asks for. */
START_TEST(test_reference_json)
{
	char *bin = xasprintf(DATADIR "%s.bin", refs[_i].file);
	char *res_path = xasprintf(DATADIR "%s.res", refs[_i].file);
	char *res = tu_read_file(res_path, NULL);
	struct assess_opts o = {.file = bin, .bits = refs[_i].bits, .cls = CLASS_BLOCK, .json = true};
	struct config *cfg = config_defaults();
	struct run r = assess(&o, cfg);
	double want = nist_final(res, "Assessed min entropy"), h;
	json_error_t je;
	json_t *j;

	ck_assert_msg(r.rc == 0, "%s", r.err);
	j = json_loads(r.out, 0, &je);
	ck_assert_msg(j != NULL, "not JSON: %s", je.text);
	ck_assert_str_eq(json_string_value(json_object_get(j, "file")), bin);
	ck_assert_int_eq(jnum(j, "samples"), 10000);
	ck_assert_int_eq(jnum(j, "bits"), refs[_i].bits);
	ck_assert_int_eq(jnum(j, "above_bits"), 0);
	h = jnum(j, "min_entropy");
	ck_assert_msg(fabs(h - want) < 1e-6, "%s: %.9f, NIST: %.9f", refs[_i].file, h, want);
	ck_assert(fabs(jnum(j, "h_original") - nist_final(res, "H_original")) < 1e-6);
	if (refs[_i].bits > 1)
		ck_assert(fabs(jnum(j, "h_bitstring") - nist_final(res, "H_bitstring")) < 1e-6);
	else
		ck_assert(isnan(jnum(j, "h_bitstring"))); /* no bitstring view of bits */
	ck_assert_str_eq(json_string_value(json_object_get(j, "class")), "block");
	ck_assert(json_is_null(json_object_get(j, "config")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "policy"), "mode")),
			 "trusted");
	ck_assert(fabs(jnum(j, "credit_per_event") - fmin(1.0, want)) < 1e-6);
	ck_assert_ptr_nonnull(strstr(r.err, "warning: "));
	ck_assert_ptr_nonnull(strstr(r.err, "holds 10000 samples; SP 800-90B asks for at least "
					    "1000000"));
	json_decref(j);
	run_free(&r);
	config_free(cfg);
	free(res);
	free(res_path);
	free(bin);
}
END_TEST

/* The rule that applies: the class's, or the instance's override; and the credit each mode
 * makes of the same estimate. */
START_TEST(test_policy)
{
	char *bin = xasprintf(DATADIR "rand4_short.bin"), *conf_path;
	struct config_errors errs = {0};
	struct config *cfg = tu_config_text(
		"policy = { network = { mode = \"reduced\"; scale = 0.25; cap_bits_per_event = 0.5;\n"
		"  instances = ( { name = \"eth1\"; mode = \"trusted\"; cap_bits_per_event = 2.0; },\n"
		"                { name = \"wlan*\"; mode = \"mix-only\"; } ); }; };\n",
		&errs, &conf_path);
	struct assess_opts o = {.file = bin, .bits = 4, .cls = CLASS_NETWORK};
	struct run r;
	const double h = 3.2154882678767365; /* NIST's, rand4_short.res */
	char *line;

	ck_assert_ptr_nonnull(cfg);
	r = assess(&o, cfg);
	ck_assert_int_eq(r.rc, 0);
	line = xasprintf("\nPolicy for class network, from %s:\n", conf_path);
	ck_assert_msg(strstr(r.out, line), "%s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "  mode                reduced, scale 0.25\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "  credit per event    0.125000 bits (one symbol per "
					    "event)\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "= 0.25 x min(cap 0.5, 3.215488)\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "  minimum             3.215488, set by "));
	run_free(&r);
	free(line);

	o.instance = "eth1";
	r = assess(&o, cfg);
	ck_assert_ptr_nonnull(strstr(r.out, "\nPolicy for instance eth1 of class network"));
	ck_assert_ptr_nonnull(strstr(r.out, "  override            eth1\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "  credit per event    2.000000 bits"));
	run_free(&r);

	o.instance = "wlan0";
	o.json = true;
	r = assess(&o, cfg);
	{
		json_t *j = json_loads(r.out, 0, NULL);

		ck_assert_ptr_nonnull(j);
		ck_assert_str_eq(json_string_value(json_object_get(j, "override")), "wlan*");
		ck_assert_str_eq(json_string_value(json_object_get(j, "instance")), "wlan0");
		ck_assert_double_eq(jnum(j, "credit_per_event"), 0);
		ck_assert(fabs(jnum(j, "min_entropy") - h) < 1e-6);
		json_decref(j);
	}
	run_free(&r);

	o.instance = "eth9";
	o.json = false;
	r = assess(&o, cfg);
	ck_assert_ptr_nonnull(strstr(r.out, "  override            none matches eth9: the class "
					    "rule applies\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "  credit per event    0.125000 bits"));
	run_free(&r);
	unlink(conf_path);
	free(conf_path);
	config_free(cfg);
	free(bin);
}
END_TEST

static char *file_of(const void *bytes, size_t n)
{
	char *path = xasprintf("%s/samples.XXXXXX", tu_tmpdir());
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
	close(fd);
	return path;
}

/* Every file it refuses: exit 1, and the file named with why. */
START_TEST(test_refused)
{
	struct config *cfg = config_defaults();
	char *empty = file_of("", 0), *one = file_of("x", 1), *missing = xasprintf("%s/nosuch",
											tu_tmpdir());
	const struct {
		const char *before, *file, *after;
	} cases[] = {
		{"cannot open ", missing, ": No such file or directory\n"},
		{"", tu_tmpdir(), " is a directory, not a file of samples\n"},
		{"", empty, " is empty; at least 2 samples (bytes) are needed\n"},
		{"", one, " holds 1 sample; at least 2 samples (bytes) are needed\n"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct assess_opts o = {.file = cases[i].file, .bits = 8, .cls = CLASS_INPUT};
		struct run r = assess(&o, cfg);
		char *want = xasprintf("entropyd: --assess: %s%s%s", cases[i].before, cases[i].file,
				       cases[i].after);

		ck_assert_int_eq(r.rc, 1);
		ck_assert_str_eq(r.err, want);
		ck_assert_str_eq(r.out, "");
		run_free(&r);
		free(want);
	}
	free(empty);
	free(one);
	free(missing);
	config_free(cfg);
}
END_TEST

/* One value only carries nothing, whatever the rule; bits above the width asked for are
 * masked off, as ea_non_iid does, and counted. */
START_TEST(test_single_value_and_width)
{
	struct config *cfg = config_defaults();
	uint8_t buf[5000];
	struct assess_opts o = {.bits = 4, .cls = CLASS_INPUT};
	size_t above = 0;
	struct run r;
	char *path, *line;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = 0x35; /* 5 in the low 4 bits, 3 above them */
	path = file_of(buf, sizeof(buf));
	o.file = path;
	r = assess(&o, cfg);
	ck_assert_int_eq(r.rc, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "samples               5000, 4 bits each, 1 distinct "
					    "value\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "5000 samples have bits above the low 4"));
	ck_assert_ptr_nonnull(strstr(r.out, "  minimum             0.000000: a single symbol value "
					    "carries no entropy\n"));
	ck_assert_ptr_nonnull(strstr(r.out, "  credit per event    0.000000 bits"));
	run_free(&r);
	free(path);

	for (size_t i = 0; i < sizeof(buf); i++) {
		buf[i] = (uint8_t)((i * 2654435761u) >> 7);
		above += buf[i] >= 16;
	}
	path = file_of(buf, sizeof(buf));
	o.file = path;
	o.json = true;
	r = assess(&o, cfg);
	ck_assert_int_eq(r.rc, 0);
	line = xasprintf("\"above_bits\": %zu,", above);
	ck_assert_msg(strstr(r.out, line), "want %s in %s", line, r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "\"distinct\": 16,"));
	run_free(&r);
	free(line);
	free(path);
	config_free(cfg);
}
END_TEST

START_TEST(test_keys)
{
	for (unsigned e = 0; e < SP90B_N_TESTS; e++) {
		ck_assert_ptr_nonnull(est_assess_key(e));
		for (unsigned f = 0; f < e; f++)
			ck_assert_str_ne(est_assess_key(e), est_assess_key(f));
	}
	ck_assert_str_eq(est_assess_key(SP90B_T_MCV), "mcv");
	ck_assert_str_eq(est_assess_key(SP90B_T_LZ78Y), "lz78y");
	ck_assert_ptr_null(est_assess_key(SP90B_N_TESTS));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("est_assess");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_reference_json, 0, ARRAY_SIZE(refs));
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_single_value_and_width);
	tcase_add_test(tc, test_keys);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
