/* est_assess: entropyd --assess, the daemon's own SP 800-90B estimators over a recorded file. */
#include "autoconf.h"

#include "est_assess.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_policy.h"
#include "est_90b_noniid.h"
#include "util.h"

/* Everything one report shows. */
struct assessment {
	const char *file;
	size_t samples;
	size_t above_bits; /* samples with bits set above the low `bits`: masked off */
	struct sp90b_noniid_result r;
	enum src_class cls;
	const char *instance; /* NULL: the class rule */
	const char *override; /* the override of instance that applies, or NULL */
	const char *config; /* the file the policy came from; NULL: built-in defaults */
	struct policy_rule rule;
	double credit;
};

const char *est_assess_key(unsigned estimator)
{
	static const char *const keys[] = {
#define ASSESS_KEY(id, name, key) [SP90B_T_##id] = key,
		SP90B_TESTS(ASSESS_KEY)
#undef ASSESS_KEY
	};

	return estimator < SP90B_N_TESTS ? keys[estimator] : NULL;
}

static const struct sp90b_pred *pred_of(const struct sp90b_noniid_result *r, unsigned e)
{
	switch (e) {
	case SP90B_T_MULTI_MCW: return &r->mcw;
	case SP90B_T_LAG: return &r->lag;
	case SP90B_T_MULTI_MMC: return &r->mmc;
	case SP90B_T_LZ78Y: return &r->lz78y;
	default: return NULL;
	}
}

/* Which estimator, of which view, set the assessment (NULL: none, a single value). */
static const char *decided_by(const struct sp90b_noniid_result *r, bool json)
{
	static char buf[64];

	if (r->k < 2)
		return NULL;
	if (r->n_bits && r->bits * r->h_bitstring < r->h_original) {
		snprintf(buf, sizeof(buf), json ? "bitstring %s" : "bitstring %s",
			 json ? est_assess_key(r->bitstring.min_by) : sp90b_test_name(r->bitstring.min_by));
		return buf;
	}
	if (r->literal.min_by >= SP90B_N_TESTS)
		return NULL;
	return json ? est_assess_key(r->literal.min_by) : sp90b_test_name(r->literal.min_by);
}

/* The whole file (regular file, FIFO or character device), or NULL with a message. */
static uint8_t *read_all(const char *path, size_t *n, FILE *err)
{
	size_t cap = 0, len = 0;
	uint8_t *buf = NULL;
	struct stat st;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		fprintf(err, "entropyd: --assess: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		fprintf(err, "entropyd: --assess: cannot read %s: %s\n", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(err, "entropyd: --assess: %s is a directory, not a file of samples\n", path);
		close(fd);
		return NULL;
	}
	/* a regular file in one read, and one more to see its end */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size < SP90B_MAX_SAMPLES
		      ? (size_t)st.st_size + 1
		      : 65536;
	buf = xmalloc(cap);
	for (;;) {
		if (len == cap) {
			cap *= 2;
			buf = xreallocarray(buf, cap, 1);
		}
		got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			fprintf(err, "entropyd: --assess: cannot read %s: %s\n", path,
				strerror(errno));
			break;
		}
		if (got == 0) {
			close(fd);
			*n = len;
			return buf;
		}
		len += (size_t)got;
		if (len > SP90B_MAX_SAMPLES) {
			fprintf(err, "entropyd: --assess: %s is too large: more than %zu samples\n",
				path, SP90B_MAX_SAMPLES);
			break;
		}
	}
	close(fd);
	free(buf);
	return NULL;
}

/* A JSON number, or null for what is not one (never expected; jansson refuses NaN). */
static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *pred_detail(const struct sp90b_pred *p)
{
	return json_pack("{s:I, s:I, s:I, s:o, s:o, s:o}", "C", (json_int_t)p->c, "r",
			 (json_int_t)p->r, "N", (json_int_t)p->n, "P_global", num(p->p_global),
			 "P_global'", num(p->p_global_prime), "P_local",
			 p->p_local < 0 ? json_null() : num(p->p_local));
}

static json_t *view_json(const struct sp90b_view *v)
{
	json_t *est = json_object();

	for (unsigned e = 0; e < SP90B_N_TESTS; e++)
		json_object_set_new(est, est_assess_key(e), v->valid[e] ? num(v->h[e]) : json_null());
	return est;
}

static json_t *details_json(const struct sp90b_noniid_result *r)
{
	const struct sp90b_view *v = &r->literal;
	json_t *det = json_object();

	for (unsigned e = 0; e < SP90B_N_TESTS; e++) {
		json_t *d = NULL;

		if (!v->valid[e])
			d = json_null();
		else if (e == SP90B_T_MCV)
			d = json_pack("{s:I, s:o, s:o}", "mode", (json_int_t)r->mcv.mode, "p_hat",
				      num(r->mcv.p_hat), "p_u", num(r->mcv.p_u));
		else if (e == SP90B_T_TUPLE)
			d = json_pack("{s:I, s:o, s:o}", "t", (json_int_t)r->t_tuple.t, "p_hat_max",
				      num(r->t_tuple.p_hat_max), "p_u", num(r->t_tuple.p_u));
		else if (e == SP90B_T_LRS)
			d = json_pack("{s:I, s:I, s:o, s:o}", "u", (json_int_t)r->lrs.u, "v",
				      (json_int_t)r->lrs.v, "p_hat", num(r->lrs.p_hat), "p_u",
				      num(r->lrs.p_u));
		else if (pred_of(r, e))
			d = pred_detail(pred_of(r, e));
		if (d)
			json_object_set_new(det, est_assess_key(e), d);
	}
	return det;
}

static void print_json(const struct assessment *a, FILE *out)
{
	const struct sp90b_noniid_result *r = &a->r;
	json_t *root = json_object(), *pol;
	const char *by = decided_by(r, true);

	pol = json_pack("{s:s, s:o, s:o, s:o}", "mode", config_mode_name_policy(a->rule.mode), "scale",
			a->rule.mode == MODE_REDUCED ? num(a->rule.scale) : json_null(),
			"cap_bits_per_event", num(a->rule.cap_bits_per_event),
			"cap_bits_per_second", num(a->rule.cap_bits_per_second));
	json_object_set_new(root, "file", json_string(a->file));
	json_object_set_new(root, "samples", json_integer((json_int_t)a->samples));
	json_object_set_new(root, "bits", json_integer(r->bits));
	json_object_set_new(root, "distinct", json_integer(r->k));
	json_object_set_new(root, "above_bits", json_integer((json_int_t)a->above_bits));
	json_object_set_new(root, "estimators", view_json(&r->literal));
	json_object_set_new(root, "bitstring",
			    r->n_bits ? json_pack("{s:I, s:o}", "length", (json_int_t)r->n_bits,
						  "estimators", view_json(&r->bitstring))
				      : json_null());
	json_object_set_new(root, "h_original", r->k < 2 ? json_null() : num(r->h_original));
	json_object_set_new(root, "h_bitstring", r->n_bits ? num(r->h_bitstring) : json_null());
	json_object_set_new(root, "min_entropy", num(r->h_assessed));
	json_object_set_new(root, "min_by", by ? json_string(by) : json_null());
	json_object_set_new(root, "details", details_json(r));
	json_object_set_new(root, "class", json_string(source_class_name(a->cls)));
	json_object_set_new(root, "instance", a->instance ? json_string(a->instance) : json_null());
	json_object_set_new(root, "override", a->override ? json_string(a->override) : json_null());
	json_object_set_new(root, "config", a->config ? json_string(a->config) : json_null());
	json_object_set_new(root, "policy", pol);
	json_object_set_new(root, "credit_per_event", num(a->credit));
	json_dumpf(root, out, JSON_INDENT(2));
	fputc('\n', out);
	json_decref(root);
}

/* How the credit follows from the rule, in words. */
static void print_credit(const struct assessment *a, FILE *out)
{
	const struct policy_rule *r = &a->rule;

	fprintf(out, "  %-20s%.6f bits (one symbol per event)\n", "credit per event", a->credit);
	switch (r->mode) {
	case MODE_TRUSTED:
		fprintf(out, "  %-20s= min(cap %g, %.6f)\n", "", r->cap_bits_per_event, a->r.h_assessed);
		break;
	case MODE_REDUCED:
		fprintf(out, "  %-20s= %g x min(cap %g, %.6f)\n", "", r->scale,
			r->cap_bits_per_event, a->r.h_assessed);
		break;
	case MODE_MIX_ONLY:
		fprintf(out, "  %-20smix-only: the data is mixed, never credited\n", "");
		break;
	case MODE_DISABLED:
		fprintf(out, "  %-20sdisabled: the source is never opened\n", "");
		break;
	}
}

/* Why an estimator of a view has no result. */
static const char *not_run(const struct sp90b_noniid_result *r, bool bitstring, unsigned e)
{
	if (r->k < 2)
		return "-";
	if (bitstring && !r->n_bits)
		return "-";
	if (!bitstring && r->k > 2 &&
	    (e == SP90B_T_COLLISION || e == SP90B_T_MARKOV || e == SP90B_T_COMPRESSION))
		return "- (bitstrings only)";
	if (!bitstring && e == SP90B_T_MULTI_MCW)
		return "- (needs 4096 samples)";
	return "- (too few or no repeat)";
}

static void print_text(const struct assessment *a, FILE *out)
{
	const struct sp90b_noniid_result *r = &a->r;
	const struct policy_rule *rule = &a->rule;
	const char *by = decided_by(r, false);
	char cell[64];

	fprintf(out, "%-22s%s\n", "file", a->file);
	fprintf(out, "%-22s%zu, %u %s each, %u distinct %s\n", "samples", a->samples, r->bits,
		util_plural(r->bits, "bit", "bits"), r->k, util_plural(r->k, "value", "values"));
	if (a->above_bits)
		fprintf(out, "%-22s%zu %s bits above the low %u: only the low bits are "
			"used, as ea_non_iid does\n", "", a->above_bits,
			util_plural(a->above_bits, "sample has", "samples have"), r->bits);
	fprintf(out, "\nSP 800-90B non-IID estimators, min-entropy (as ea_non_iid computes them):\n"
		     "  %-20s%-26s%s\n", "", "literal, bits per sample",
		"bitstring, bits per bit");
	for (unsigned e = 0; e < SP90B_N_TESTS; e++) {
		if (r->literal.valid[e])
			snprintf(cell, sizeof(cell), "%.6f", r->literal.h[e]);
		else
			snprintf(cell, sizeof(cell), "%s", not_run(r, false, e));
		fprintf(out, "  %-20s%-26s", sp90b_test_name(e), cell);
		if (r->bitstring.valid[e])
			fprintf(out, "%.6f\n", r->bitstring.h[e]);
		else
			fprintf(out, "%s\n", not_run(r, true, e));
	}
	if (r->k < 2) {
		fprintf(out, "  %-20s%.6f: a single symbol value carries no entropy\n", "minimum",
			r->h_assessed);
	} else {
		fprintf(out, "  %-20s%.6f, set by %s\n", "H_original", r->h_original,
			r->literal.min_by < SP90B_N_TESTS ? sp90b_test_name(r->literal.min_by)
							  : "the sample width");
		if (r->n_bits)
			fprintf(out, "  %-20s%.6f, set by %s (x %u = %.6f)\n", "H_bitstring",
				r->h_bitstring,
				r->bitstring.min_by < SP90B_N_TESTS
					? sp90b_test_name(r->bitstring.min_by)
					: "the maximum",
				r->bits, r->bits * r->h_bitstring);
		else
			fprintf(out, "  %-20s(no bitstring view: 2 values only)\n", "H_bitstring");
		fprintf(out, "  %-20s%.6f, set by %s\n", "minimum", r->h_assessed,
			by ? by : "the sample width");
	}

	if (a->instance)
		fprintf(out, "\nPolicy for instance %s of class %s, from %s:\n", a->instance,
			source_class_name(a->cls), a->config ? a->config : "built-in defaults");
	else
		fprintf(out, "\nPolicy for class %s, from %s:\n", source_class_name(a->cls),
			a->config ? a->config : "built-in defaults");
	if (a->instance && a->override)
		fprintf(out, "  %-20s%s\n", "override", a->override);
	else if (a->instance)
		fprintf(out, "  %-20snone matches %s: the class rule applies\n", "override",
			a->instance);
	fprintf(out, "  %-20s%s", "mode", config_mode_name_policy(rule->mode));
	if (rule->mode == MODE_REDUCED)
		fprintf(out, ", scale %g", rule->scale);
	fprintf(out, "\n  %-20s%g bits/event, %g bits/s per instance\n", "caps",
		rule->cap_bits_per_event, rule->cap_bits_per_second);
	print_credit(a, out);

	fputs("\nThis is ea_non_iid's estimate over the whole file, literal and bitstring views.\n"
	      "NIST's full procedure also runs the restart tests and, for IID claims, the IID tests;\n"
	      "a source is only as good as those say. Set caps and policy no higher than they\n"
	      "support.\n",
	      out);
}

int est_assess_run(const struct assess_opts *opts, const struct config *cfg, FILE *out, FILE *err)
{
	struct assessment a = {.file = opts->file, .cls = opts->cls, .instance = opts->instance};
	const struct policy_override *ov = NULL;
	uint8_t *data;
	size_t i;

	data = read_all(opts->file, &a.samples, err);
	if (!data)
		return 1;
	if (a.samples < 2) {
		fprintf(err, "entropyd: --assess: %s %s; at least 2 samples (bytes) are needed\n",
			opts->file, a.samples ? "holds 1 sample" : "is empty");
		free(data);
		return 1;
	}
	if (a.samples < ASSESS_MIN_SAMPLES)
		fprintf(err, "entropyd: --assess: warning: %s holds %zu samples; SP 800-90B asks for "
			"at least %d, and estimates from fewer mean little\n", opts->file, a.samples,
			ASSESS_MIN_SAMPLES);
	for (i = 0; i < a.samples; i++)
		a.above_bits += (data[i] >> opts->bits) != 0;
	if (sp90b_noniid(NULL, data, a.samples, opts->bits, SP90B_ALL_TESTS, SP90B_ALL_TESTS,
			 &a.r) < 0) {
		/* the arguments were checked above and by the caller */
		fprintf(err, "entropyd: --assess: %s: cannot be estimated\n", opts->file);
		free(data);
		return 1;
	}
	free(data);

	a.config = cfg->path;
	a.rule = cfg->policy[opts->cls].rule;
	if (opts->instance) {
		ov = config_policy_override_for(cfg, opts->cls, opts->instance);
		a.override = ov ? ov->name : NULL;
		a.rule = config_policy_resolve(cfg, opts->cls, opts->instance);
	}
	/* config_policy_credit caps the estimate itself: credit = weight x min(cap, H). */
	a.credit = config_policy_credit(&a.rule, a.r.h_assessed);
	if (opts->json)
		print_json(&a, out);
	else
		print_text(&a, out);
	return 0;
}
