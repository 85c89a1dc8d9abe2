/* config_settings: the table engine behind the config file: defaults, parsing, validation, -p. */
#include "autoconf.h"

#include "config_settings.h"

#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct settings_msg {
	char *text;
	char *file;
	size_t file_rank; /* 0 for the main file, then files in the order they were met */
	unsigned line;
	size_t seq;
	bool note; /* a notice, not an error */
};

/* ---- messages ---- */

void config_settings_ctx_init(struct settings_ctx *ctx, const char *path)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->path = path;
}

const char *config_settings_file(const struct settings_ctx *ctx, const config_setting_t *at)
{
	const char *f = at ? config_setting_source_file(at) : NULL;

	return f ? f : ctx->path;
}

static void add_msg(struct settings_ctx *ctx, const char *file, unsigned line, char *text,
		    bool note)
{
	struct settings_msg *m;
	size_t rank = ctx->n_msgs + 1, i;

	for (i = 0; i < ctx->n_msgs; i++) {
		if (strcmp(ctx->msgs[i].file, file) == 0) {
			rank = ctx->msgs[i].file_rank;
			break;
		}
	}
	if (strcmp(file, ctx->path) == 0)
		rank = 0;
	ctx->msgs = xreallocarray(ctx->msgs, ctx->n_msgs + 1, sizeof(*ctx->msgs));
	m = &ctx->msgs[ctx->n_msgs];
	m->text = text;
	m->file = xstrdup(file);
	m->file_rank = rank;
	m->line = line;
	m->note = note;
	m->seq = ctx->n_msgs++;
	ctx->n_notes += note;
}

void config_settings_err(struct settings_ctx *ctx, const config_setting_t *at, const char *key,
		  const char *allowed, const char *fmt, ...)
{
	const char *file = config_settings_file(ctx, at);
	unsigned line = at ? config_setting_source_line(at) : 0;
	char *problem;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&problem, fmt, ap) < 0)
		problem = NULL;
	va_end(ap);
	add_msg(ctx, file, line,
		xasprintf("%s:%u: %s: %s; allowed: %s", file, line, key,
			  problem ? problem : "(out of memory)", allowed),
		false);
	free(problem);
}

void config_settings_note(struct settings_ctx *ctx, const config_setting_t *at, const char *key,
		   const char *fmt, ...)
{
	const char *file = config_settings_file(ctx, at);
	unsigned line = at ? config_setting_source_line(at) : 0;
	char *what;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&what, fmt, ap) < 0)
		what = NULL;
	va_end(ap);
	add_msg(ctx, file, line,
		xasprintf("%s:%u: notice: %s: %s; ignored", file, line, key,
			  what ? what : "(out of memory)"),
		true);
	free(what);
}

void config_settings_err_raw(struct settings_ctx *ctx, const char *file, unsigned line,
		      const char *fmt, ...)
{
	char *text;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = xstrdup("(out of memory)");
	va_end(ap);
	add_msg(ctx, file ? file : ctx->path, line, text, false);
}

/* Messages in file order: the main file first, by line within a file. */
static int cmp_msg(const void *pa, const void *pb)
{
	const struct settings_msg *a = pa, *b = pb;

	if (a->file_rank != b->file_rank)
		return a->file_rank < b->file_rank ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void config_settings_ctx_finish(struct settings_ctx *ctx, struct config_errors *errs)
{
	size_t i;

	if (ctx->n_msgs)
		qsort(ctx->msgs, ctx->n_msgs, sizeof(*ctx->msgs), cmp_msg);
	if (ctx->n_msgs > ctx->n_notes)
		errs->msg = xreallocarray(errs->msg, errs->n + ctx->n_msgs - ctx->n_notes,
					  sizeof(*errs->msg));
	if (ctx->n_notes)
		errs->note = xreallocarray(errs->note, errs->n_note + ctx->n_notes,
					   sizeof(*errs->note));
	for (i = 0; i < ctx->n_msgs; i++) {
		if (ctx->msgs[i].note)
			errs->note[errs->n_note++] = ctx->msgs[i].text;
		else
			errs->msg[errs->n++] = ctx->msgs[i].text;
	}
	for (i = 0; i < ctx->n_msgs; i++)
		free(ctx->msgs[i].file);
	free(ctx->msgs);
	memset(ctx, 0, sizeof(*ctx));
}

/* ---- describing keys ---- */

/* The shortest decimal form that reads back as the same double, and that libconfig reads
 * as a number (a float where `as_float`). */
static void fmt_num(double v, bool as_float, char *buf, size_t size)
{
	int prec;

	for (prec = 1; prec < 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(buf, size, "%.17g", v);
	if (v > -1e15 && v < 1e15 && v == (double)(long long)v && strchr(buf, 'e'))
		snprintf(buf, size, "%.0f", v);
	if (as_float && !strpbrk(buf, ".e"))
		strncat(buf, ".0", size - strlen(buf) - 1);
}

static const char *type_name(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP: return "a group";
	case CONFIG_TYPE_INT: return "an integer";
	case CONFIG_TYPE_INT64: return "a 64-bit integer";
	case CONFIG_TYPE_FLOAT: return "a number with a fraction";
	case CONFIG_TYPE_STRING: return "a string";
	case CONFIG_TYPE_BOOL: return "a boolean";
	case CONFIG_TYPE_ARRAY: return "an array";
	case CONFIG_TYPE_LIST: return "a list";
	default: return "an empty value";
	}
}

static bool is_number(const struct setting *s)
{
	return s->type == SET_INT || s->type == SET_INT64 || s->type == SET_FLOAT;
}

/* "8..4096" or "0 < scale < 1": the range for comments and messages. */
static char *range_text(const struct setting *s)
{
	char lo[32], hi[32];

	fmt_num(s->min, false, lo, sizeof(lo));
	fmt_num(s->max, false, hi, sizeof(hi));
	if (!(s->flags & (SF_MIN_EXCL | SF_MAX_EXCL)))
		return xasprintf("%s..%s", lo, hi);
	return xasprintf("%s %s %s %s %s", lo, s->flags & SF_MIN_EXCL ? "<" : "<=", s->key,
			 s->flags & SF_MAX_EXCL ? "<" : "<=", hi);
}

/* "an integer from 8 to 4096 bits", "a number > 0 and < 1" */
static char *number_text(const struct setting *s)
{
	const char *what = s->type == SET_FLOAT ? "a number" : "an integer";
	const char *unit = s->unit ? s->unit : "";
	char lo[32], hi[32];

	fmt_num(s->min, false, lo, sizeof(lo));
	fmt_num(s->max, false, hi, sizeof(hi));
	if (!(s->flags & (SF_MIN_EXCL | SF_MAX_EXCL)))
		return xasprintf("%s from %s to %s%s%s", what, lo, hi, *unit ? " " : "", unit);
	return xasprintf("%s %s %s and %s %s%s%s", what, s->flags & SF_MIN_EXCL ? ">" : ">=", lo,
			 s->flags & SF_MAX_EXCL ? "<" : "<=", hi, *unit ? " " : "", unit);
}

static char *join_names(const char *const *names, const char *sep, bool quote)
{
	size_t len = 1, i;
	char *out;

	for (i = 0; names[i]; i++)
		len += strlen(names[i]) + strlen(sep) + 2;
	out = xmalloc(len);
	out[0] = '\0';
	for (i = 0; names[i]; i++) {
		if (i)
			strcat(out, sep);
		if (quote)
			strcat(out, "\"");
		strcat(out, names[i]);
		if (quote)
			strcat(out, "\"");
	}
	return out;
}

/* What a key accepts, in words, for error messages. */
static char *allowed_text(const struct setting *s)
{
	switch (s->type) {
	case SET_BOOL:
		return xstrdup("true or false");
	case SET_INT:
	case SET_INT64:
	case SET_FLOAT:
		return number_text(s);
	case SET_STRING:
		if (s->flags & SF_ABSPATH)
			return xstrdup("an absolute path (a string starting with \"/\")");
		return xstrdup(s->flags & SF_NONEMPTY ? "a non-empty string" : "a string");
	case SET_ENUM:
		return join_names(s->names, ", ", true);
	case SET_STRLIST:
		if (s->flags & SF_AUTO)
			return xasprintf("[ \"auto\" ], or a non-empty list of names or globs%s%s",
					 s->example ? ", e.g. " : "", s->example ? s->example : "");
		return xstrdup("a list of non-empty strings, e.g. [ \"a\", \"b*\" ] or []");
	case SET_GROUP:
		return xstrdup("a group { key = value; ... }");
	case SET_GROUPLIST:
		return xstrdup("a list of groups ( { key = value; ... }, ... )");
	}
	return xstrdup("?");
}

/* ---- defaults and freeing ---- */

static void *at_off(void *base, const struct setting *s)
{
	return (char *)base + s->offset;
}

static const void *at_coff(const void *base, const struct setting *s)
{
	return (const char *)base + s->offset;
}

void config_settings_strlist_free(struct strlist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void config_settings_strlist_add(struct strlist *l, const char *s)
{
	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = xstrdup(s);
}

static void set_string(char **dst, const char *s)
{
	free(*dst);
	*dst = s ? xstrdup(s) : NULL;
}

void config_settings_defaults(const struct setting *tab, void *base)
{
	const struct setting *s;
	size_t i;

	for (s = tab; s->key; s++) {
		void *p = at_off(base, s);

		switch (s->type) {
		case SET_BOOL: *(bool *)p = s->def_num != 0; break;
		case SET_INT: *(int *)p = (int)s->def_num; break;
		case SET_INT64: *(int64_t *)p = (int64_t)s->def_num; break;
		case SET_FLOAT: *(double *)p = s->def_num; break;
		case SET_ENUM: *(int *)p = (int)s->def_num; break;
		case SET_STRING: set_string(p, s->def_str ? s->def_str : ""); break;
		case SET_STRLIST:
			config_settings_strlist_free(p);
			for (i = 0; s->def_list && s->def_list[i]; i++)
				config_settings_strlist_add(p, s->def_list[i]);
			break;
		case SET_GROUP:
		case SET_GROUPLIST:
			break;
		}
	}
}

void config_settings_free(const struct setting *tab, void *base)
{
	const struct setting *s;

	for (s = tab; s->key; s++) {
		if (s->type == SET_STRING)
			set_string(at_off(base, s), NULL);
		else if (s->type == SET_STRLIST)
			config_settings_strlist_free(at_off(base, s));
	}
}

/* ---- parsing one key ---- */

struct keyctx {
	struct settings_ctx *ctx;
	const struct setting *s;
	const config_setting_t *cs;
	const char *path; /* full dotted key */
};

static void key_err(const struct keyctx *k, const config_setting_t *at, const char *path,
		    const char *fmt, ...) PRINTF_LIKE(4, 5);
static void key_err(const struct keyctx *k, const config_setting_t *at, const char *path,
		    const char *fmt, ...)
{
	char *allowed = allowed_text(k->s), *problem;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&problem, fmt, ap) < 0)
		problem = NULL;
	va_end(ap);
	config_settings_err(k->ctx, at, path, allowed, "%s", problem ? problem : "(out of memory)");
	free(problem);
	free(allowed);
}

static void wrong_type(const struct keyctx *k)
{
	key_err(k, k->cs, k->path, "wrong type (%s)", type_name(config_setting_type(k->cs)));
}

/* A number in range, or false after saying why not. */
static bool get_number(const struct keyctx *k, double *out)
{
	const struct setting *s = k->s;
	int type = config_setting_type(k->cs);
	const char *literal;
	char buf[40];
	double v;

	if (type == CONFIG_TYPE_INT || type == CONFIG_TYPE_INT64) {
		literal = type == CONFIG_TYPE_INT && k->ctx->wrapped_int
				  ? k->ctx->wrapped_int(k->ctx, k->cs)
				  : NULL;
		if (literal) {
			key_err(k, k->cs, k->path, "%s is out of range", literal);
			return false;
		}
		v = (double)config_setting_get_int64(k->cs);
	} else if (type == CONFIG_TYPE_FLOAT && s->type == SET_FLOAT) {
		v = config_setting_get_float(k->cs);
	} else {
		wrong_type(k);
		return false;
	}
	if (!(s->flags & SF_MIN_EXCL ? v > s->min : v >= s->min) ||
	    !(s->flags & SF_MAX_EXCL ? v < s->max : v <= s->max)) {
		fmt_num(v, type == CONFIG_TYPE_FLOAT, buf, sizeof(buf));
		key_err(k, k->cs, k->path, "%s is out of range", buf);
		return false;
	}
	*out = v;
	return true;
}

static bool check_string(const struct keyctx *k, const config_setting_t *cs, const char *path,
			 const char *v)
{
	if ((k->s->flags & SF_ABSPATH) && v[0] != '/') {
		key_err(k, cs, path, "\"%s\" is not an absolute path", v);
		return false;
	}
	if ((k->s->flags & (SF_NONEMPTY | SF_ABSPATH)) && !v[0]) {
		key_err(k, cs, path, "the value is empty");
		return false;
	}
	return true;
}

static bool get_enum(const struct keyctx *k, int *out)
{
	const char *v = config_setting_get_string(k->cs);
	int i;

	for (i = 0; k->s->names[i]; i++) {
		if (strcmp(v, k->s->names[i]) == 0) {
			*out = i;
			return true;
		}
	}
	key_err(k, k->cs, k->path, "unknown value \"%s\"", v);
	return false;
}

static bool get_strlist(const struct keyctx *k, struct strlist *out)
{
	int n = config_setting_length(k->cs), i;
	bool ok = true, has_auto = false;

	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(k->cs, (unsigned)i);
		char *path = xasprintf("%s[%d]", k->path, i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			key_err(k, e, path, "wrong type (%s)", type_name(config_setting_type(e)));
			ok = false;
		} else if (!config_setting_get_string(e)[0]) {
			key_err(k, e, path, "the value is empty");
			ok = false;
		} else {
			has_auto |= strcmp(config_setting_get_string(e), "auto") == 0;
			config_settings_strlist_add(out, config_setting_get_string(e));
		}
		free(path);
	}
	if (ok && n == 0 && (k->s->flags & SF_NONEMPTY)) {
		key_err(k, k->cs, k->path, "the list is empty");
		ok = false;
	}
	if (ok && has_auto && n > 1 && (k->s->flags & SF_AUTO)) {
		key_err(k, k->cs, k->path, "\"auto\" mixed with names");
		ok = false;
	}
	return ok;
}

static bool is_list_type(int type)
{
	return type == CONFIG_TYPE_ARRAY || type == CONFIG_TYPE_LIST;
}

/* Parse one given key into base; false if it was wrong (and said so). */
static bool apply_one(const struct keyctx *k, void *base)
{
	const struct setting *s = k->s;
	int type = config_setting_type(k->cs);
	void *p = at_off(base, s);
	struct strlist l = {0};
	double num;
	int e;

	if (is_number(s)) {
		if (!get_number(k, &num))
			return false;
		if (s->type == SET_INT)
			*(int *)p = (int)num;
		else if (s->type == SET_INT64)
			*(int64_t *)p = config_setting_get_int64(k->cs);
		else
			*(double *)p = num;
		return true;
	}
	switch (s->type) {
	case SET_BOOL:
		if (type != CONFIG_TYPE_BOOL)
			break;
		*(bool *)p = config_setting_get_bool(k->cs);
		return true;
	case SET_STRING:
		if (type != CONFIG_TYPE_STRING)
			break;
		if (!check_string(k, k->cs, k->path, config_setting_get_string(k->cs)))
			return false;
		set_string(p, config_setting_get_string(k->cs));
		return true;
	case SET_ENUM:
		if (type != CONFIG_TYPE_STRING)
			break;
		if (!get_enum(k, &e))
			return false;
		*(int *)p = e;
		return true;
	case SET_STRLIST:
		if (!is_list_type(type))
			break;
		if (!get_strlist(k, &l)) {
			config_settings_strlist_free(&l);
			return false;
		}
		config_settings_strlist_free(p);
		*(struct strlist *)p = l;
		return true;
	case SET_GROUP:
		if (type != CONFIG_TYPE_GROUP)
			break;
		return true;
	case SET_GROUPLIST:
		/* libconfig writes an empty list of anything as [] as well as (). */
		if (type != CONFIG_TYPE_LIST &&
		    !(type == CONFIG_TYPE_ARRAY && config_setting_length(k->cs) == 0))
			break;
		return true;
	default:
		break;
	}
	wrong_type(k);
	return false;
}

static const struct setting *find_key(const struct setting *tab, const char *key)
{
	for (; tab->key; tab++)
		if (strcmp(tab->key, key) == 0)
			return tab;
	return NULL;
}

static char *key_list(const struct setting *tab)
{
	const char *names[64];
	size_t n = 0;

	for (; tab->key && n < ARRAY_SIZE(names) - 1; tab++)
		names[n++] = tab->key;
	names[n] = NULL;
	return join_names(names, ", ", false);
}

static char *join_path(const char *prefix, const char *key)
{
	return prefix && prefix[0] ? xasprintf("%s.%s", prefix, key) : xstrdup(key);
}

unsigned config_settings_apply(struct settings_ctx *ctx, const struct setting *tab,
			const config_setting_t *grp, const char *prefix, void *base)
{
	const struct setting *s;
	unsigned given = 0;
	int i, n;

	if (!grp)
		return 0;
	n = config_setting_length(grp);
	for (i = 0; i < n; i++) {
		const config_setting_t *cs = config_setting_get_elem(grp, (unsigned)i);
		const char *name = config_setting_name(cs);
		char *path = join_path(prefix, name ? name : "?");
		struct keyctx k = {ctx, NULL, cs, path};

		k.s = name ? find_key(tab, name) : NULL;
		if (!k.s) {
			char *keys = key_list(tab);

			config_settings_err(ctx, cs, path, keys, "unknown key");
			free(keys);
		} else if (apply_one(&k, base)) {
			given |= k.s->set_bit;
		}
		free(path);
	}
	for (s = tab; s->key; s++) {
		if ((s->flags & SF_REQUIRED) && !config_setting_get_member(grp, s->key)) {
			char *path = join_path(prefix, s->key);
			struct keyctx k = {ctx, s, grp, path};

			key_err(&k, grp, path, "missing required key");
			free(path);
		}
	}
	return given;
}

const config_setting_t *config_settings_member(const config_setting_t *grp, const char *key,
					enum setting_type type)
{
	const config_setting_t *m = grp ? config_setting_get_member(grp, key) : NULL;
	int want = type == SET_GROUPLIST ? CONFIG_TYPE_LIST : CONFIG_TYPE_GROUP;

	return m && config_setting_type(m) == want ? m : NULL;
}

const char *config_settings_type_name(const config_setting_t *cs)
{
	return type_name(config_setting_type(cs));
}

/* ---- printing ---- */

/* A string the way libconfig reads it back. */
static void print_string(const char *s, FILE *out)
{
	const unsigned char *p;

	fputc('"', out);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void print_value(const struct setting *s, const void *p, FILE *out)
{
	const struct strlist *l;
	char buf[40];
	size_t i;

	switch (s->type) {
	case SET_BOOL: fputs(*(const bool *)p ? "true" : "false", out); break;
	case SET_INT: fprintf(out, "%d", *(const int *)p); break;
	case SET_INT64:
		/* libconfig reads an integer without its L as 32 bits, cut */
		fprintf(out, "%" PRId64 "%s", *(const int64_t *)p,
			*(const int64_t *)p > INT32_MAX || *(const int64_t *)p < INT32_MIN ? "L" : "");
		break;
	case SET_FLOAT:
		fmt_num(*(const double *)p, true, buf, sizeof(buf));
		fputs(buf, out);
		break;
	case SET_STRING: print_string(*(char *const *)p, out); break;
	case SET_ENUM: print_string(s->names[*(const int *)p], out); break;
	case SET_STRLIST:
		l = p;
		fputc('[', out);
		for (i = 0; i < l->n; i++) {
			fputs(i ? ", " : " ", out);
			print_string(l->v[i], out);
		}
		fputs(l->n ? " ]" : "]", out);
		break;
	case SET_GROUP:
	case SET_GROUPLIST:
		break;
	}
}

/* "# help (unit, range)" */
static void print_comment(const struct setting *s, FILE *out)
{
	char *r = NULL;

	if (is_number(s))
		r = range_text(s);
	else if (s->type == SET_ENUM)
		r = join_names(s->names, " | ", false);
	fprintf(out, "  # %s", s->help);
	if (s->unit || r)
		fprintf(out, " (%s%s%s)", s->unit ? s->unit : "", s->unit && r ? ", " : "",
			r ? r : "");
	fputc('\n', out);
	free(r);
}

void config_settings_print(const struct setting *tab, const void *base, unsigned only, int indent,
		    FILE *out)
{
	const struct setting *s;

	for (s = tab; s->key; s++) {
		if (s->type == SET_GROUP || s->type == SET_GROUPLIST)
			continue;
		if (s->set_bit && !(s->set_bit & only))
			continue;
		fprintf(out, "%*s%s = ", indent, "", s->key);
		print_value(s, at_coff(base, s), out);
		fputc(';', out);
		print_comment(s, out);
	}
}

void config_settings_print_keys(const struct setting *tab, const char *prefix, FILE *out)
{
	const struct setting *s;

	for (s = tab; s->key; s++) {
		if (s->type != SET_GROUP)
			fprintf(out, "%s.%s\n", prefix, s->key);
		if (s->type == SET_GROUPLIST && s->sub) {
			char *sub = xasprintf("%s.%s[]", prefix, s->key);

			config_settings_print_keys(s->sub, sub, out);
			free(sub);
		}
	}
}
