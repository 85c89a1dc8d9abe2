/* assess: entropyd --assess, the daemon's own SP 800-90B estimators over a recorded file. */
#include "autoconf.h"

#include "assess.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "sp80090b.h"
#include "util.h"

/* Everything one report shows. */
struct assessment {
	const char *file;
	size_t samples;
	size_t above_bits; /* samples with bits set above the low `bits`: masked off */
	struct sp90b_literal lit;
	enum src_class cls;
	const char *config; /* the file the policy came from; NULL: built-in defaults */
	struct policy_rule rule;
	double credit;
};

const char *assess_key(unsigned estimator)
{
	static const char *const keys[] = {
		[SP90B_MCV] = "mcv",
		[SP90B_MULTI_MCW] = "multimcw",
		[SP90B_LAG] = "lag",
		[SP90B_MULTI_MMC] = "multimmc",
		[SP90B_LZ78Y] = "lz78y",
	};

	return estimator < SP90B_N_ESTIMATORS ? keys[estimator] : NULL;
}

static const struct sp90b_pred *pred_of(const struct sp90b_literal *lit, unsigned e)
{
	switch (e) {
	case SP90B_MULTI_MCW: return &lit->mcw;
	case SP90B_LAG: return &lit->lag;
	case SP90B_MULTI_MMC: return &lit->mmc;
	case SP90B_LZ78Y: return &lit->lz78y;
	default: return NULL;
	}
}

static double h_of(const struct sp90b_literal *lit, unsigned e)
{
	return e == SP90B_MCV ? lit->mcv.h : pred_of(lit, e)->h;
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

static void print_json(const struct assessment *a, FILE *out)
{
	const struct sp90b_literal *lit = &a->lit;
	json_t *root = json_object(), *est = json_object(), *det = json_object(), *pol;
	unsigned e;

	for (e = 0; e < SP90B_N_ESTIMATORS; e++) {
		json_object_set_new(est, assess_key(e), lit->valid[e] ? num(h_of(lit, e))
								    : json_null());
		if (!lit->valid[e])
			json_object_set_new(det, assess_key(e), json_null());
		else if (e == SP90B_MCV)
			json_object_set_new(det, assess_key(e),
					    json_pack("{s:I, s:o, s:o}", "mode",
						      (json_int_t)lit->mcv.mode, "p_hat",
						      num(lit->mcv.p_hat), "p_u", num(lit->mcv.p_u)));
		else
			json_object_set_new(det, assess_key(e), pred_detail(pred_of(lit, e)));
	}
	pol = json_pack("{s:s, s:o, s:o, s:o}", "mode", policy_mode_name(a->rule.mode), "scale",
			a->rule.mode == MODE_REDUCED ? num(a->rule.scale) : json_null(),
			"cap_bits_per_event", num(a->rule.cap_bits_per_event),
			"cap_bits_per_second", num(a->rule.cap_bits_per_second));
	json_object_set_new(root, "file", json_string(a->file));
	json_object_set_new(root, "samples", json_integer((json_int_t)a->samples));
	json_object_set_new(root, "bits", json_integer(lit->bits));
	json_object_set_new(root, "distinct", json_integer(lit->k));
	json_object_set_new(root, "above_bits", json_integer((json_int_t)a->above_bits));
	json_object_set_new(root, "estimators", est);
	json_object_set_new(root, "min_entropy", num(lit->h));
	json_object_set_new(root, "min_by", lit->min_by < SP90B_N_ESTIMATORS
						    ? json_string(assess_key(lit->min_by))
						    : json_null());
	json_object_set_new(root, "details", det);
	json_object_set_new(root, "class", json_string(class_name(a->cls)));
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
		fprintf(out, "  %-20s= min(cap %g, %.6f)\n", "", r->cap_bits_per_event, a->lit.h);
		break;
	case MODE_REDUCED:
		fprintf(out, "  %-20s= %g x min(cap %g, %.6f)\n", "", r->scale,
			r->cap_bits_per_event, a->lit.h);
		break;
	case MODE_MIX_ONLY:
		fprintf(out, "  %-20smix-only: the data is mixed, never credited\n", "");
		break;
	case MODE_DISABLED:
		fprintf(out, "  %-20sdisabled: the source is never opened\n", "");
		break;
	}
}

static void print_text(const struct assessment *a, FILE *out)
{
	const struct sp90b_literal *lit = &a->lit;
	const struct policy_rule *r = &a->rule;
	unsigned e;

	fprintf(out, "%-22s%s\n", "file", a->file);
	fprintf(out, "%-22s%zu, %u bit%s each, %u distinct value%s\n", "samples", a->samples,
		lit->bits, lit->bits == 1 ? "" : "s", lit->k, lit->k == 1 ? "" : "s");
	if (a->above_bits)
		fprintf(out, "%-22s%zu samples have bits above the low %u: only the low bits are "
			"used, as ea_non_iid does\n", "", a->above_bits, lit->bits);
	fputs("\nSP 800-90B literal estimators, min-entropy in bits per symbol:\n", out);
	for (e = 0; e < SP90B_N_ESTIMATORS; e++) {
		if (lit->valid[e])
			fprintf(out, "  %-20s%.6f\n", sp90b_name(e), h_of(lit, e));
		else if (lit->k < 2)
			fprintf(out, "  %-20s(not run: every sample is the same symbol)\n",
				sp90b_name(e));
		else if (e == SP90B_MULTI_MCW)
			fprintf(out, "  %-20s(not run: needs at least %d samples)\n", sp90b_name(e),
				SP90B_MCW_MIN_SAMPLES);
		else
			fprintf(out, "  %-20s(not run: too few samples)\n", sp90b_name(e));
	}
	if (lit->min_by < SP90B_N_ESTIMATORS)
		fprintf(out, "  %-20s%.6f, set by %s\n", "minimum", lit->h, sp90b_name(lit->min_by));
	else
		fprintf(out, "  %-20s%.6f: a single symbol value carries no entropy\n", "minimum",
			lit->h);

	fprintf(out, "\nPolicy for class %s, from %s:\n", class_name(a->cls),
		a->config ? a->config : "built-in defaults");
	fprintf(out, "  %-20s%s", "mode", policy_mode_name(r->mode));
	if (r->mode == MODE_REDUCED)
		fprintf(out, ", scale %g", r->scale);
	fprintf(out, "\n  %-20s%g bits/event, %g bits/s per instance\n", "caps",
		r->cap_bits_per_event, r->cap_bits_per_second);
	print_credit(a, out);

	fputs("\nThis is a bound from the five literal estimators only. NIST's full assessment\n"
	      "(ea_non_iid) also runs the restart tests, the IID tests, the literal t-Tuple and\n"
	      "LRS estimates and the bitstring estimators, and may find less: its result is the\n"
	      "one to trust. Set caps and policy no higher than it supports.\n",
	      out);
}

int assess_run(const struct assess_opts *opts, const struct config *cfg, FILE *out, FILE *err)
{
	struct assessment a = {.file = opts->file, .cls = opts->cls};
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
	for (i = 0; i < a.samples; i++)
		a.above_bits += (data[i] >> opts->bits) != 0;
	if (sp90b_literal(data, a.samples, opts->bits, &a.lit) < 0) {
		/* the arguments were checked above and by the caller */
		fprintf(err, "entropyd: --assess: %s: cannot be estimated\n", opts->file);
		free(data);
		return 1;
	}
	free(data);

	a.config = cfg->path;
	a.rule = cfg->policy[opts->cls].rule;
	/* policy_credit caps the estimate itself: credit = weight x min(cap, H). */
	a.credit = policy_credit(&a.rule, a.lit.h);
	if (opts->json)
		print_json(&a, out);
	else
		print_text(&a, out);
	return 0;
}
