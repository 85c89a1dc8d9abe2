/* config: the settings tables of /etc/entropyd.conf, and loading, checking and printing it. */
#include "autoconf.h"

#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_include.h"
#include "config_scan.h"
#include "config_settings.h"
#include "source_class.h"
#include "util.h"

static const char *const feed_mode_names[] = {"auto", "boot", "watermark", "always", NULL};
static const char *const policy_mode_names[] = {"trusted", "reduced", "mix-only", "disabled",
						NULL};

/* config_settings.c writes every enum through an int pointer. */
_Static_assert(sizeof(enum feed_mode) == sizeof(int) && sizeof(enum policy_mode) == sizeof(int),
	       "an enum of the config is not int-sized");

#define GROUP(k, h) {.key = (k), .type = SET_GROUP, .help = (h)}

static const struct setting root_tab[] = {
	GROUP("feed", "how and when entropy is handed to the kernel"),
	GROUP("policy", "how much of each source class is credited"),
	GROUP("sources", "what each source class watches"),
	GROUP("control", "the control socket"),
	GROUP("record", "recording of estimator symbols for offline assessment"),
	GROUP("collector", "the unprivileged process that reads every source"),
	{0},
};

static const struct setting feed_tab[] = {
	{.key = "mode", .type = SET_ENUM, .offset = CFG(feed.mode), .names = feed_mode_names,
	 .def_num = FEED_AUTO, .help = "when to credit the kernel; auto follows the kernel's state"},
	{.key = "device", .type = SET_STRING, .offset = CFG(feed.device), .flags = SF_ABSPATH,
	 .def_str = "/dev/random", .help = "the device the RNDADDENTROPY ioctl goes to"},
	{.key = "reseed", .type = SET_BOOL, .offset = CFG(feed.reseed), .def_num = 1,
	 .help = "force a CRNG reseed after mixing, once the CRNG is ready"},
	{.key = "batch_bits", .type = SET_INT, .offset = CFG(feed.batch_bits), .min = 8,
	 .max = 4096, .def_num = 64, .unit = "bits",
	 .help = "boot/always: flush once this much credit is pending"},
	{.key = "batch_interval", .type = SET_FLOAT, .offset = CFG(feed.batch_interval),
	 .min = 0.01, .max = 3600, .def_num = 1.0, .unit = "seconds",
	 .help = "the longest a pending batch waits"},
	{.key = "mix_interval", .type = SET_FLOAT, .offset = CFG(feed.mix_interval), .min = 1,
	 .max = 86400, .def_num = 60.0, .unit = "seconds",
	 .help = "time between mixes once the CRNG is ready"},
	{.key = "low_watermark", .type = SET_INT, .offset = CFG(feed.low_watermark), .min = 0,
	 .max = 4096, .def_num = 0, .unit = "bits",
	 .help = "watermark: feed while entropy_avail is below this; 0: the kernel's "
		 "write_wakeup_threshold"},
	{.key = "boot_allowance", .type = SET_BOOL, .offset = CFG(feed.boot_allowance),
	 .def_num = 1,
	 .help = "CRNG not ready: credit up to what the kernel needs, not the per-second caps"},
	{0},
};

/* The keys of a policy rule, for a class and for an override. Only scale has its default
 * here: mode and the caps default to the class's own (struct source_class), and an override
 * inherits from its class what it does not give. */
#define RULE_KEYS(off)                                                                         \
	{.key = "mode", .type = SET_ENUM, .offset = (off) + offsetof(struct policy_rule, mode), \
	 .set_bit = RULE_SET_MODE, .names = policy_mode_names,                                   \
	 .help = "how the capped estimate is credited"},                                        \
	{.key = "scale", .type = SET_FLOAT, .offset = (off) + offsetof(struct policy_rule, scale), \
	 .set_bit = RULE_SET_SCALE, .flags = SF_MIN_EXCL | SF_MAX_EXCL, .min = 0, .max = 1,   \
	 .def_num = POLICY_SCALE_DEFAULT,                                                       \
	 .help = "reduced: the fraction of the capped estimate credited"},                    \
	{.key = "cap_bits_per_event", .type = SET_FLOAT,                                       \
	 .offset = (off) + offsetof(struct policy_rule, cap_bits_per_event),                   \
	 .set_bit = RULE_SET_CAP_EVENT, .min = 0, .max = 8,                                   \
	 .unit = "bits/event", .help = "the most one event can be credited"},                  \
	{.key = "cap_bits_per_second", .type = SET_FLOAT,                                      \
	 .offset = (off) + offsetof(struct policy_rule, cap_bits_per_second),                  \
	 .set_bit = RULE_SET_CAP_SECOND, .min = 0, .max = 1000000,                            \
	 .unit = "bits/s", .help = "the most one instance can be credited per second"}

static const struct setting override_tab[] = {
	NAME_KEY(struct policy_override),
	RULE_KEYS(offsetof(struct policy_override, rule)),
	{0},
};

/* The keys of policy.CLASS, for every class. */
static const struct setting class_tab[] = {
	RULE_KEYS(offsetof(struct class_policy, rule)),
	{.key = "instances", .type = SET_GROUPLIST, .sub = override_tab,
	 .help = "per-instance overrides: ( { name = \"GLOB\"; mode = ...; }, ... )"},
	{0},
};

static const struct setting control_tab[] = {
	{.key = "socket", .type = SET_STRING, .offset = CFG(control.socket), .flags = SF_ABSPATH,
	 .def_str = "/run/entropyd/io.entropyd", .help = "the control socket's path"},
	{.key = "group", .type = SET_STRING, .offset = CFG(control.group), .flags = SF_NONEMPTY,
	 .def_str = "entropyd", .help = "the group that may connect to the control socket"},
	{.key = "timeout", .type = SET_FLOAT, .offset = CFG(control.timeout), .min = 0.1,
	 .max = 3600, .def_num = 10.0, .unit = "seconds",
	 .help = "how long a client may take to send a request or to read a reply"},
	{.key = "max_hold", .type = SET_FLOAT, .offset = CFG(control.max_hold), .min = 1,
	 .max = 86400, .def_num = 60.0, .unit = "seconds",
	 .help = "how long a connection of a user other than root may stay open"},
	{0},
};

/* dir is an absolute path or empty (off); parse_root checks that, as SF_ABSPATH refuses "". */
static const struct setting record_tab[] = {
	{.key = "dir", .type = SET_STRING, .offset = CFG(record.dir), .def_str = "",
	 .help = "write each instance's symbols to DIR/CLASS-NAME.bin (empty: off)"},
	{.key = "max_bytes", .type = SET_INT64, .offset = CFG(record.max_bytes), .min = 4096,
	 .max = 1073741824, .def_num = 16777216, .unit = "bytes",
	 .help = "bound of each file; recording of that instance stops there"},
	{0},
};

/* Read at start only: the collector has left root by the time of any reload. */
static const struct setting collector_tab[] = {
	{.key = "user", .type = SET_STRING, .offset = CFG(collector.user), .flags = SF_NONEMPTY,
	 .def_str = COLLECTOR_USER,
	 .help = "the unprivileged system user the collector runs as; never root"},
	{0},
};

/* The groups below the root, besides the classes' own, whose keys all go straight into
 * struct config. */
static const struct {
	const char *path;
	const struct setting *tab;
} plain_groups[] = {
	{"feed", feed_tab},
	{"control", control_tab},
	{"record", record_tab},
	{"collector", collector_tab},
};

/* ---- names ---- */

static const char *name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : NULL;
}

const char *config_mode_name_feed(enum feed_mode m)
{
	return name_of(feed_mode_names, ARRAY_SIZE(feed_mode_names) - 1, (int)m);
}

const char *config_mode_name_policy(enum policy_mode m)
{
	return name_of(policy_mode_names, ARRAY_SIZE(policy_mode_names) - 1, (int)m);
}

/* ---- lists of instances (struct inst_kind) ---- */

/* A mode was given in grp but was wrong: that is reported, and rules on it would be noise. */
static bool mode_was_wrong(const config_setting_t *grp, unsigned given)
{
	return !(given & RULE_SET_MODE) && config_setting_get_member(grp, "mode");
}

/* scale given where the mode in effect is not reduced has no effect: a notice, not an error,
 * so that switching a class to "disabled" or "trusted" is one edit of its mode. */
static void note_scale(struct settings_ctx *ctx, const config_setting_t *grp,
		       enum policy_mode mode, const char *prefix)
{
	char *path = xasprintf("%s.scale", prefix);

	config_settings_note(ctx, config_setting_get_member(grp, "scale"), path,
		      "scale applies only to mode \"reduced\" (the mode here is \"%s\")",
		      config_mode_name_policy(mode));
	free(path);
}

static void inherit_rule(void *el, const void *parent)
{
	((struct policy_override *)el)->rule = *(const struct policy_rule *)parent;
}

static const struct inst_kind policy_kind = {
	.tab = override_tab,
	.size = sizeof(struct policy_override),
	.set_off = offsetof(struct policy_override, set),
	.what = "per-instance overrides",
	.shape = "a group { name = \"NAME\"; mode = ...; }",
	.inherit = inherit_rule,
};

/* Element i of the array v. */
static const char *inst_at(const struct inst_kind *k, const void *v, size_t i)
{
	return (const char *)v + i * k->size;
}

static const char *inst_name(const struct inst_kind *k, const void *v, size_t i)
{
	return *(char *const *)(inst_at(k, v, i) + k->tab[0].offset);
}

struct named {
	const char *name;
	size_t i;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

/* Each name once in a list: sorted, so that thousands of entries cost n log n, not n^2. Each
 * repeat is reported, in the list's order, with the line of the first. */
static void check_duplicates(struct settings_ctx *ctx, const struct inst_kind *k, const void *v,
			     const config_setting_t *list, size_t n, const bool *checked,
			     const char *prefix)
{
	struct named *by = n ? xcalloc(n, sizeof(*by)) : NULL;
	size_t *first = n ? xcalloc(n, sizeof(*first)) : NULL, m = 0;

	for (size_t i = 0; i < n; i++) {
		first[i] = SIZE_MAX;
		if (inst_name(k, v, i))
			by[m++] = (struct named){inst_name(k, v, i), i};
	}
	if (m > 1)
		qsort(by, m, sizeof(*by), named_cmp);
	/* Sorted by name, then place: the head of each run of one name is its first. */
	for (size_t i = 1, run = 0; i < m; i++) {
		if (strcmp(by[i - 1].name, by[i].name) != 0)
			run = i;
		else
			first[by[i].i] = by[run].i;
	}
	for (size_t i = 0; i < n; i++) {
		const config_setting_t *a, *b;
		char *path;

		if (first[i] == SIZE_MAX || !checked[i])
			continue;
		a = config_setting_get_member(config_setting_get_elem(list, (unsigned)first[i]),
					      "name");
		b = config_setting_get_member(config_setting_get_elem(list, (unsigned)i), "name");
		path = xasprintf("%s.instances[%zu].name", prefix, i);
		config_settings_err(ctx, b, path, "each name once in a list",
			     "duplicate instance \"%s\" (first at line %u)", inst_name(k, v, i),
			     config_setting_source_line(a));
		free(path);
	}
	free(by);
	free(first);
}

/* The elements of grp's "instances" (none if it is missing or not a list); *n is their
 * number, the same whatever was wrong with them, for free_instances. */
static void *parse_instances(struct settings_ctx *ctx, const config_setting_t *grp,
			     const char *prefix, const struct inst_kind *k, const void *parent,
			     size_t *n)
{
	const config_setting_t *list = config_settings_member(grp, "instances", SET_GROUPLIST);
	char *v;
	bool *checked;
	size_t i;

	*n = list ? (size_t)config_setting_length(list) : 0;
	v = *n ? xcalloc(*n, k->size) : NULL;
	checked = *n ? xcalloc(*n, sizeof(*checked)) : NULL;
	for (i = 0; i < *n; i++) {
		const config_setting_t *el = config_setting_get_elem(list, (unsigned)i);
		char *path = xasprintf("%s.instances[%zu]", prefix, i), *e = v + i * k->size;

		k->inherit(e, parent);
		if (config_setting_type(el) != CONFIG_TYPE_GROUP) {
			config_settings_err(ctx, el, path, k->shape, "wrong type (%s)",
				     config_settings_type_name(el));
		} else {
			*(unsigned *)(e + k->set_off) = config_settings_apply(ctx, k->tab, el, path, e);
			if (k->check)
				k->check(ctx, el, e, path);
			checked[i] = true;
		}
		free(path);
	}
	check_duplicates(ctx, k, v, list, *n, checked, prefix);
	free(checked);
	return v;
}

static void print_instances(FILE *out, const struct inst_kind *k, const void *v, size_t n,
			    int indent)
{
	size_t i;

	if (!n) {
		fprintf(out, "%*sinstances = ();  # %s\n", indent, "", k->what);
		return;
	}
	fprintf(out, "%*sinstances = (  # %s; the first match wins\n", indent, "", k->what);
	for (i = 0; i < n; i++) {
		const char *e = inst_at(k, v, i);

		fprintf(out, "%*s{\n", indent + 2, "");
		config_settings_print(k->tab, e, *(const unsigned *)(e + k->set_off), indent + 4, out);
		fprintf(out, "%*s}%s\n", indent + 2, "", i + 1 < n ? "," : "");
	}
	fprintf(out, "%*s);\n", indent, "");
}

static void free_instances(const struct inst_kind *k, void *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		config_settings_free(k->tab, (char *)v + i * k->size);
	free(v);
}

/* A class's sources.NAME.instances in cfg: the array, and its length in *n. The array's
 * pointer has its element's type; memcpy reads and writes it as a void * without punning. */
static void *class_instances(const struct config *cfg, const struct source_class *sc,
			     size_t *n)
{
	void *v;

	memcpy(&v, (const char *)cfg + sc->instances.array, sizeof(v));
	memcpy(n, (const char *)cfg + sc->instances.count, sizeof(*n));
	return v;
}

static void set_class_instances(struct config *cfg, const struct source_class *sc, void *v,
				size_t n)
{
	memcpy((char *)cfg + sc->instances.array, &v, sizeof(v));
	memcpy((char *)cfg + sc->instances.count, &n, sizeof(n));
}

/* ---- defaults and freeing ---- */

struct config *config_defaults(void)
{
	struct config *cfg = xcalloc(1, sizeof(*cfg));
	size_t i;
	int c;

	for (i = 0; i < ARRAY_SIZE(plain_groups); i++)
		config_settings_defaults(plain_groups[i].tab, cfg);
	for (c = 0; c < CLASS_COUNT; c++) {
		const struct source_class *sc = source_class_all[c];
		struct policy_rule *r = &cfg->policy[c].rule;

		config_settings_defaults(sc->settings, cfg);
		config_settings_defaults(class_tab, &cfg->policy[c]);
		r->mode = sc->policy.mode;
		r->cap_bits_per_event = sc->policy.cap_bits_per_event;
		r->cap_bits_per_second = sc->policy.cap_bits_per_second;
	}
	return cfg;
}

void config_free(struct config *cfg)
{
	size_t i, n;
	int c;

	if (!cfg)
		return;
	for (i = 0; i < ARRAY_SIZE(plain_groups); i++)
		config_settings_free(plain_groups[i].tab, cfg);
	for (c = 0; c < CLASS_COUNT; c++) {
		const struct source_class *sc = source_class_all[c];

		config_settings_free(sc->settings, cfg);
		free_instances(&policy_kind, cfg->policy[c].overrides, cfg->policy[c].n_overrides);
		if (sc->instances.kind) {
			void *v = class_instances(cfg, sc, &n);

			free_instances(sc->instances.kind, v, n);
		}
	}
	free(cfg->path);
	free(cfg);
}

void config_errors_free(struct config_errors *errs)
{
	size_t i;

	if (!errs)
		return;
	for (i = 0; i < errs->n; i++)
		free(errs->msg[i]);
	free(errs->msg);
	for (i = 0; i < errs->n_note; i++)
		free(errs->note[i]);
	free(errs->note);
	memset(errs, 0, sizeof(*errs));
}

/* ---- integer literals that libconfig wrapped ----
 * libconfig reads an integer literal without an L suffix with atoi(), so 5000000000
 * silently becomes 705032704 and would pass any range check (upstream issues #69, #153).
 * We find such literals in the file text ourselves and remember what libconfig made of
 * them, so that the range check can report what was written. What it made of them depends
 * on the width of long: atoi() is (int)strtol() and a hex literal is (int)strtoul(), which
 * truncate where long has 64 bits and saturate where it has 32 (armhf, i386), so the same
 * calls are made here. */

struct wrapped_int {
	unsigned line;
	int value; /* what libconfig stored */
	char *text;
};
struct int_scan {
	char *file;
	struct wrapped_int *v;
	size_t n;
};
struct int_scans {
	struct int_scan *v;
	size_t n;
};

static void add_wrapped(struct int_scan *sc, unsigned line, int value, const char *text,
			size_t len)
{
	struct wrapped_int *w;

	sc->v = xreallocarray(sc->v, sc->n + 1, sizeof(*sc->v));
	w = &sc->v[sc->n++];
	w->line = line;
	w->value = value;
	w->text = xasprintf("%.*s", (int)len, text);
}

/* One number token starting at p: records it if libconfig would have wrapped it. */
static const char *scan_number(struct int_scan *sc, const char *p, unsigned line)
{
	const char *start = p, *digits;
	bool hex, is_float = false;
	char *text, *end;

	if (*p == '+' || *p == '-')
		p++;
	digits = p;
	hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
	while (isalnum((unsigned char)*p) || *p == '.' ||
	       (!hex && (*p == '+' || *p == '-') && (p[-1] == 'e' || p[-1] == 'E'))) {
		if (!hex && (*p == '.' || *p == 'e' || *p == 'E'))
			is_float = true;
		p++;
	}
	if (p == digits || is_float || p[-1] == 'L')
		return p;
	text = xasprintf("%.*s", (int)(p - start), start);
	errno = 0;
	if (hex) {
		unsigned long long u = strtoull(text, &end, 16);

		/* libconfig takes hex as a 32-bit pattern: 0xFFFFFFFF is -1 */
		if (!*end && (errno == ERANGE || u > INT_MAX))
			add_wrapped(sc, line, (int)strtoul(text, NULL, 16), start,
				    (size_t)(p - start));
	} else {
		long long v = strtoll(text, &end, 10);

		if (!*end && (errno == ERANGE || v < INT_MIN || v > INT_MAX))
			add_wrapped(sc, line, (int)strtol(text, NULL, 10), start,
				    (size_t)(p - start));
	}
	free(text);
	return p;
}

/* Skip a comment or string at p, counting lines; NULL if p starts neither. */
static const char *skip_noise(const char *p, unsigned *line)
{
	if (*p == '#' || (p[0] == '/' && p[1] == '/'))
		return p + strcspn(p, "\n");
	if (p[0] == '/' && p[1] == '*') {
		for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
			*line += *p == '\n';
		return *p ? p + 2 : p;
	}
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;
			*line += *p == '\n';
		}
		return *p ? p + 1 : p;
	}
	return NULL;
}

static void scan_text(struct int_scan *sc, const char *p)
{
	unsigned line = 1;
	const char *q;

	while (*p) {
		if ((q = skip_noise(p, &line))) {
			p = q;
		} else if (*p == '\n') {
			line++;
			p++;
		} else if (isalpha((unsigned char)*p) || *p == '*' || *p == '_') {
			/* a setting name: digits inside it are not numbers */
			while (isalnum((unsigned char)*p) || (*p && strchr("-_*", *p)))
				p++;
		} else if (isdigit((unsigned char)*p) ||
			   ((*p == '-' || *p == '+') && isdigit((unsigned char)p[1]))) {
			p = scan_number(sc, p, line);
		} else {
			p++;
		}
	}
}

static struct int_scan *scan_file(struct int_scans *scans, const char *file)
{
	struct int_scan *sc;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	scans->v = xreallocarray(scans->v, scans->n + 1, sizeof(*scans->v));
	sc = &scans->v[scans->n++];
	memset(sc, 0, sizeof(*sc));
	sc->file = xstrdup(file);
	/* The file was just parsed: if it cannot be read now, there is nothing to correct. */
	f = fopen(file, "re");
	if (!f)
		return sc;
	if (getdelim(&text, &len, '\0', f) > 0)
		scan_text(sc, text);
	free(text);
	fclose(f);
	return sc;
}

/* settings_ctx.wrapped_int: files are scanned when a setting from them is first checked. */
static const char *wrapped_int(struct settings_ctx *ctx, const config_setting_t *cs)
{
	struct int_scans *scans = ctx->arg;
	const char *file = config_settings_file(ctx, cs);
	const struct int_scan *sc = NULL;
	int value = config_setting_get_int(cs);
	size_t i;

	for (i = 0; i < scans->n && !sc; i++)
		if (strcmp(scans->v[i].file, file) == 0)
			sc = &scans->v[i];
	if (!sc)
		sc = scan_file(scans, file);
	for (i = 0; i < sc->n; i++)
		if (sc->v[i].line == config_setting_source_line(cs) && sc->v[i].value == value)
			return sc->v[i].text;
	return NULL;
}

static void int_scans_free(struct int_scans *scans)
{
	size_t i, j;

	for (i = 0; i < scans->n; i++) {
		for (j = 0; j < scans->v[i].n; j++)
			free(scans->v[i].v[j].text);
		free(scans->v[i].v);
		free(scans->v[i].file);
	}
	free(scans->v);
}

/* ---- parsing ---- */

/* An override with scale where its mode is not reduced: noticed, and the scale dropped, so
 * that the override takes its class's (config_policy_override_apply). */
static void check_override_scales(struct settings_ctx *ctx, const config_setting_t *grp,
				  struct class_policy *cp, const char *prefix)
{
	const config_setting_t *list = config_settings_member(grp, "instances", SET_GROUPLIST);

	for (size_t i = 0; list && i < cp->n_overrides; i++) {
		struct policy_override *ov = &cp->overrides[i];
		const config_setting_t *el = config_setting_get_elem(list, (unsigned)i);
		char *path;

		if (!(ov->set & RULE_SET_SCALE) || ov->rule.mode == MODE_REDUCED ||
		    mode_was_wrong(el, ov->set))
			continue;
		path = xasprintf("%s.instances[%zu]", prefix, i);
		note_scale(ctx, el, ov->rule.mode, path);
		free(path);
		ov->set &= ~(unsigned)RULE_SET_SCALE;
	}
}

/* Whether an override takes the class's scale: it makes its mode reduced, without a scale. */
static bool scale_inherited(const struct class_policy *cp)
{
	for (size_t i = 0; i < cp->n_overrides; i++) {
		const struct policy_override *ov = &cp->overrides[i];

		if ((ov->set & RULE_SET_MODE) && ov->rule.mode == MODE_REDUCED &&
		    !(ov->set & RULE_SET_SCALE))
			return true;
	}
	return false;
}

static void parse_class(struct settings_ctx *ctx, const config_setting_t *grp, int c,
			struct class_policy *cp)
{
	char *prefix = xasprintf("policy.%s", source_class_all[c]->name);
	unsigned given = config_settings_apply(ctx, class_tab, grp, prefix, cp);

	cp->overrides =
		parse_instances(ctx, grp, prefix, &policy_kind, &cp->rule, &cp->n_overrides);
	check_override_scales(ctx, grp, cp, prefix);
	/* The class's scale counts where it or an override of it is reduced; elsewhere it is
	 * noticed and put back to the default, which -p then leaves out. */
	if (grp && (given & RULE_SET_SCALE) && cp->rule.mode != MODE_REDUCED &&
	    !mode_was_wrong(grp, given) && !scale_inherited(cp)) {
		note_scale(ctx, grp, cp->rule.mode, prefix);
		cp->rule.scale = POLICY_SCALE_DEFAULT;
	}
	/* and an override without a scale of its own holds its class's, as it would have if
	 * the ignored ones were not in the file */
	for (size_t i = 0; i < cp->n_overrides; i++)
		if (!(cp->overrides[i].set & RULE_SET_SCALE))
			cp->overrides[i].rule.scale = cp->rule.scale;
	free(prefix);
}

/* The group at a dotted path below root, if every step is a group. */
static const config_setting_t *group_at(const config_setting_t *root, const char *path)
{
	char *copy = xstrdup(path), *save = NULL, *part;
	const config_setting_t *g = root;

	for (part = strtok_r(copy, ".", &save); part && g; part = strtok_r(NULL, ".", &save))
		g = config_settings_member(g, part, SET_GROUP);
	free(copy);
	return g;
}

/* sources.NAME, once its keys are in: the class's own checks, and its list of instances. */
static void parse_sources(struct settings_ctx *ctx, const config_setting_t *sources,
			  const struct source_class *sc, struct config *cfg)
{
	const config_setting_t *grp = config_settings_member(sources, sc->name, SET_GROUP);
	char *prefix = xasprintf("sources.%s", sc->name);
	void *v;
	size_t n;

	if (sc->check)
		sc->check(ctx, grp, cfg, prefix);
	if (sc->instances.kind) {
		v = parse_instances(ctx, grp, prefix, sc->instances.kind,
				    (const char *)cfg + sc->instances.parent, &n);
		set_class_instances(cfg, sc, v, n);
	}
	free(prefix);
}

/* A group for each class, named after it: the keys of policy or of sources. */
static void class_groups(struct setting tab[CLASS_COUNT + 1], bool policy)
{
	int c;

	for (c = 0; c < CLASS_COUNT; c++) {
		const struct source_class *sc = source_class_all[c];

		tab[c] = (struct setting)GROUP(sc->name,
					       policy ? sc->policy_help : sc->sources_help);
	}
	tab[CLASS_COUNT] = (struct setting){0};
}

static void check_record_dir(struct settings_ctx *ctx, const config_setting_t *grp,
			     const struct config *cfg)
{
	const config_setting_t *cs = grp ? config_setting_get_member(grp, "dir") : NULL;

	if (cs && cfg->record.dir[0] && cfg->record.dir[0] != '/')
		config_settings_err(ctx, cs, "record.dir",
			     "an absolute path (a string starting with \"/\"), or \"\" for off",
			     "\"%s\" is not an absolute path", cfg->record.dir);
}

/* Whether the user exists is the start's business (priv_drop_collector_user): it depends on the
 * system, not on the file. Root, by name, is wrong anywhere. */
static void check_collector_user(struct settings_ctx *ctx, const config_setting_t *grp,
				 const struct config *cfg)
{
	const config_setting_t *cs = grp ? config_setting_get_member(grp, "user") : NULL;

	if (cs && strcmp(cfg->collector.user, "root") == 0)
		config_settings_err(ctx, cs, "collector.user", "an unprivileged system user (not uid 0)",
			     "the collector never runs as root");
}

static void parse_root(struct settings_ctx *ctx, const config_setting_t *root,
		       struct config *cfg)
{
	const config_setting_t *policy = config_settings_member(root, "policy", SET_GROUP);
	const config_setting_t *sources = config_settings_member(root, "sources", SET_GROUP);
	struct setting policy_tab[CLASS_COUNT + 1], sources_tab[CLASS_COUNT + 1];
	size_t i;
	int c;

	class_groups(policy_tab, true);
	class_groups(sources_tab, false);
	config_settings_apply(ctx, root_tab, root, "", cfg);
	config_settings_apply(ctx, policy_tab, policy, "policy", cfg);
	config_settings_apply(ctx, sources_tab, sources, "sources", cfg);
	/* in the file's order: feed (plain_groups[0]), the sources, the others */
	config_settings_apply(ctx, plain_groups[0].tab, group_at(root, plain_groups[0].path),
		       plain_groups[0].path, cfg);
	for (c = 0; c < CLASS_COUNT; c++) {
		char *prefix = xasprintf("sources.%s", source_class_all[c]->name);

		config_settings_apply(ctx, source_class_all[c]->settings,
			       config_settings_member(sources, source_class_all[c]->name, SET_GROUP), prefix,
			       cfg);
		free(prefix);
	}
	for (i = 1; i < ARRAY_SIZE(plain_groups); i++)
		config_settings_apply(ctx, plain_groups[i].tab, group_at(root, plain_groups[i].path),
			       plain_groups[i].path, cfg);
	for (c = 0; c < CLASS_COUNT; c++)
		parse_class(ctx, config_settings_member(policy, source_class_all[c]->name, SET_GROUP), c,
			    &cfg->policy[c]);
	for (c = 0; c < CLASS_COUNT; c++)
		parse_sources(ctx, sources, source_class_all[c], cfg);
	check_record_dir(ctx, group_at(root, "record"), cfg);
	check_collector_user(ctx, group_at(root, "collector"), cfg);
}

/* libconfig says only "syntax error"; say where to look. */
static const char *syntax_text(const char *text)
{
	if (!text)
		return "unreadable";
	if (strcmp(text, "syntax error") == 0)
		return "cannot parse this line or the end of the one before "
		       "(a missing value, quote or bracket?)";
	return text;
}

/* libconfig reads an unclosed quote on into the lines after it and reports the line where
 * it gave up, often far below. The first line before that one which ends inside a string
 * is where the quote was opened; 0 if there is none. */
static unsigned unclosed_quote_line(const char *file, unsigned upto)
{
	FILE *f = fopen(file, "re");
	char line[4096];
	unsigned n = 0, found = 0;
	bool in_comment = false;

	if (!f)
		return 0;
	while (!found && n < upto && fgets(line, sizeof(line), f)) {
		bool in_str = false;

		n++;
		for (const char *p = line; *p && *p != '\n'; p++) {
			if (in_comment) {
				if (p[0] == '*' && p[1] == '/') {
					in_comment = false;
					p++;
				}
			} else if (in_str) {
				if (*p == '\\' && p[1])
					p++;
				else if (*p == '"')
					in_str = false;
			} else if (*p == '"') {
				in_str = true;
			} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
				break;
			} else if (p[0] == '/' && p[1] == '*') {
				in_comment = true;
				p++;
			}
		}
		if (in_str)
			found = n;
	}
	fclose(f);
	return found;
}

/* libconfig's "duplicate setting name" names neither: say which and where it was first. */
static bool duplicate(struct settings_ctx *ctx, const char *file, const config_t *lc)
{
	unsigned line = (unsigned)config_error_line(lc), first;
	char key[256];

	if (!config_error_text(lc) || strcmp(config_error_text(lc), "duplicate setting name") ||
	    !config_scan_duplicate(file, line, key, sizeof(key), &first))
		return false;
	config_settings_err_raw(ctx, file, line,
			 "%s:%u: %s: given twice in its group (first at line %u); libconfig "
			 "refuses the file: keep one", file, line, key, first);
	return true;
}

/* libconfig 1.5 puts its include directory before every @include path, an absolute one
 * too: say so at the line rather than let it look for DIR//PATH. True if there is none. */
static bool includes_relative(struct settings_ctx *ctx, FILE *f)
{
	char line[4096];
	unsigned n = 0;
	bool ok = true;

	while (fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " \t");

		n += strchr(line, '\n') != NULL;
		if (strncmp(p, "@include", 8) != 0)
			continue;
		p += 8;
		p += strspn(p, " \t");
		if (p[0] == '"' && p[1] == '/') {
			config_settings_err_raw(ctx, ctx->path, n + (strchr(line, '\n') == NULL),
					 "%s:%u: @include: an absolute path; give it relative to "
					 "the directory of %s", ctx->path,
					 n + (strchr(line, '\n') == NULL), ctx->path);
			ok = false;
		}
	}
	rewind(f);
	return ok;
}

/* Open and parse; false (with the message recorded) if the file is not valid libconfig. */
static bool read_file(struct settings_ctx *ctx, config_t *lc)
{
	struct stat st;
	FILE *f = fopen(ctx->path, "re");
	int err = f ? 0 : errno;
	char *dir;
	bool ok;

	/* fopen() opens a directory, and libconfig would read it as an empty file */
	if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
		err = EISDIR;
	if (err) {
		config_settings_err_raw(ctx, ctx->path, 0, "%s: cannot open: %s", ctx->path, strerror(err));
		if (f)
			fclose(f);
		return false;
	}
	if (!includes_relative(ctx, f)) {
		fclose(f);
		return false;
	}
	config_init(lc);
	/* @include "x" means the x beside this file, not in the working directory (which is
	 * "/" under systemd). */
	dir = config_include_dir(ctx->path);
	config_set_include_dir(lc, dir);
	free(dir);
	ok = config_read(lc, f) == CONFIG_TRUE;
	fclose(f);
	if (!ok) {
		const char *file = config_error_file(lc) ? config_error_file(lc) : ctx->path;
		unsigned quote = unclosed_quote_line(file, (unsigned)config_error_line(lc));

		if (quote && quote < (unsigned)config_error_line(lc))
			config_settings_err_raw(ctx, file, quote,
					 "%s:%u: syntax error: a quote opened on this line is not "
					 "closed (libconfig stopped at line %d); close it with \" "
					 "before the end of the line", file, quote,
					 config_error_line(lc));
		else if (!duplicate(ctx, file, lc))
			config_settings_err_raw(ctx, file, (unsigned)config_error_line(lc),
					 "%s:%d: syntax error: %s", file, config_error_line(lc),
					 syntax_text(config_error_text(lc)));
		config_destroy(lc);
	}
	return ok;
}

/* errs is overwritten (not appended to); NULL discards the messages. */
struct config *config_load(const char *path, struct config_errors *errs)
{
	struct config_errors discard = {0};
	struct int_scans scans = {0};
	struct settings_ctx ctx;
	struct config *cfg = NULL;
	config_t lc;
	bool bad;

	if (!errs)
		errs = &discard;
	memset(errs, 0, sizeof(*errs));
	config_settings_ctx_init(&ctx, path);
	ctx.wrapped_int = wrapped_int;
	ctx.arg = &scans;
	if (read_file(&ctx, &lc)) {
		cfg = config_defaults();
		cfg->path = xstrdup(path);
		parse_root(&ctx, config_root_setting(&lc), cfg);
		config_destroy(&lc);
	}
	bad = ctx.n_msgs > ctx.n_notes;
	config_settings_ctx_finish(&ctx, errs);
	int_scans_free(&scans);
	config_errors_free(&discard);
	if (bad) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* ---- printing ---- */

/* A group's keys; and its list of instances where kind is not NULL. */
static void print_group(FILE *out, const char *key, const struct setting *tab,
			const void *base, unsigned only, int indent, bool blank_after,
			const struct inst_kind *kind, const void *v, size_t n)
{
	fprintf(out, "%*s%s = {\n", indent, "", key);
	config_settings_print(tab, base, only, indent + 2, out);
	if (kind)
		print_instances(out, kind, v, n, indent + 2);
	fprintf(out, "%*s};\n%s", indent, "", blank_after ? "\n" : "");
}

static void print_class(FILE *out, int c, const struct class_policy *cp)
{
	unsigned only = ~(unsigned)RULE_SET_SCALE;

	/* scale is printed only where it counts, so the output reads back without a notice */
	if (cp->rule.mode == MODE_REDUCED || scale_inherited(cp))
		only |= RULE_SET_SCALE;
	print_group(out, source_class_all[c]->name, class_tab, cp, only, 2, false, &policy_kind,
		    cp->overrides, cp->n_overrides);
}

void config_print(const struct config *cfg, FILE *out)
{
	const char *p;
	int c;

	fputs("# entropyd configuration in effect, defaults filled in; from ", out);
	for (p = cfg->path ? cfg->path : "built-in defaults"; *p; p++)
		fputc((unsigned char)*p < 0x20 ? '?' : *p, out);
	fputs("\n\n", out);
	print_group(out, "feed", feed_tab, cfg, ~0u, 0, true, NULL, NULL, 0);
	fputs("policy = {\n", out);
	for (c = 0; c < CLASS_COUNT; c++)
		print_class(out, c, &cfg->policy[c]);
	fputs("};\n\nsources = {\n", out);
	for (c = 0; c < CLASS_COUNT; c++) {
		const struct source_class *sc = source_class_all[c];
		size_t n = 0;
		const void *v = sc->instances.kind ? class_instances(cfg, sc, &n) : NULL;

		print_group(out, sc->name, sc->settings, cfg, ~0u, 2, false, sc->instances.kind, v,
			    n);
	}
	fputs("};\n\n", out);
	print_group(out, "control", control_tab, cfg, ~0u, 0, true, NULL, NULL, 0);
	print_group(out, "record", record_tab, cfg, ~0u, 0, true, NULL, NULL, 0);
	print_group(out, "collector", collector_tab, cfg, ~0u, 0, false, NULL, NULL, 0);
}

void config_print_keys(FILE *out)
{
	size_t i;
	int c;

	config_settings_print_keys(feed_tab, "feed", out);
	for (c = 0; c < CLASS_COUNT; c++) {
		char *prefix = xasprintf("policy.%s", source_class_all[c]->name);

		config_settings_print_keys(class_tab, prefix, out);
		free(prefix);
	}
	for (c = 0; c < CLASS_COUNT; c++) {
		char *prefix = xasprintf("sources.%s", source_class_all[c]->name);

		config_settings_print_keys(source_class_all[c]->settings, prefix, out);
		free(prefix);
	}
	/* plain_groups[0] is feed, listed first to follow the file's order */
	for (i = 1; i < ARRAY_SIZE(plain_groups); i++)
		config_settings_print_keys(plain_groups[i].tab, plain_groups[i].path, out);
}
