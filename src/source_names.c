/* source_names: the names and globs of the configuration that pick a class's instances, and
 * a warning, once, for each that picks none (see source_names.h). */
#include "autoconf.h"

#include "source_names.h"

#include <dirent.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "config_policy.h"
#include "log.h"
#include "source_class.h"
#include "util.h"

struct source_name {
	char *key;     /* where it is written: "policy.network.instances[0].name" */
	char *pattern; /* a name or fnmatch(3) glob; "/dev/" before it is optional */
	bool any;      /* matched against every name of an instance, not only its own */
	bool selects;  /* it chooses what is read (a source list), not how (an override) */
	bool matched;
	bool said;
};

struct source_names {
	enum src_class cls;
	struct source_name *v;
	size_t n;
};

static void add(struct source_names *sn, char *key, const char *pattern, bool any, bool selects)
{
	struct source_name *e;

	sn->v = xreallocarray(sn->v, sn->n + 1, sizeof(*sn->v));
	e = &sn->v[sn->n++];
	*e = (struct source_name){.key = key, .pattern = xstrdup(pattern), .any = any,
				  .selects = selects};
}

struct source_names *source_names_new(const struct config *cfg, enum src_class cls)
{
	const struct source_class *sc = source_class_all[cls];
	const struct class_policy *cp = &cfg->policy[cls];
	struct source_names *sn = xcalloc(1, sizeof(*sn));
	const char *base = (const char *)cfg;

	sn->cls = cls;
	for (size_t i = 0; i < cp->n_overrides; i++)
		add(sn, xasprintf("policy.%s.instances[%zu].name", sc->name, i),
		    cp->overrides[i].name, false, false);
	if (sc->instances.kind) {
		const struct inst_kind *k = sc->instances.kind;
		const char *el = *(char *const *)(const void *)(base + sc->instances.array);
		size_t n = *(const size_t *)(const void *)(base + sc->instances.count);

		for (size_t i = 0; i < n; i++)
			add(sn, xasprintf("sources.%s.instances[%zu].name", sc->name, i),
			    *(char *const *)(const void *)(el + i * k->size + k->tab[0].offset),
			    false, false);
	}
	for (const struct setting *s = sc->settings; s->key; s++) {
		const struct strlist *l = (const void *)(base + s->offset);

		if (s->type != SET_STRLIST || !(s->flags & (SF_PICKS | SF_PICKS_ANY)))
			continue;
		for (size_t i = 0; i < l->n; i++)
			if (!(s->flags & SF_AUTO) || strcmp(l->v[i], "auto") != 0)
				add(sn, xasprintf("sources.%s.%s[%zu]", sc->name, s->key, i),
				    l->v[i], (s->flags & SF_PICKS_ANY) != 0,
				    !(s->flags & SF_EXCLUDES));
	}
	return sn;
}

void source_names_free(struct source_names *sn)
{
	if (!sn)
		return;
	for (size_t i = 0; i < sn->n; i++) {
		free(sn->v[i].key);
		free(sn->v[i].pattern);
	}
	free(sn->v);
	free(sn);
}

static bool matches(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, 0) == 0 ||
	       (strncmp(pattern, "/dev/", 5) == 0 && fnmatch(pattern + 5, name, 0) == 0);
}

void source_names_saw(struct source_names *sn, const char *const *names, size_t n)
{
	for (size_t i = 0; i < sn->n; i++) {
		struct source_name *e = &sn->v[i];

		for (size_t j = 0; !e->matched && j < (e->any ? n : (n ? 1 : 0)); j++)
			if (names[j])
				e->matched = matches(e->pattern, names[j]);
	}
}

size_t source_names_report(struct source_names *sn, const char *when, FILE *out)
{
	const char *cls = source_class_name(sn->cls), *noun = source_class_all[sn->cls]->instance_noun;
	size_t unmatched = 0;

	for (size_t i = 0; i < sn->n; i++) {
		struct source_name *e = &sn->v[i];
		char *shown;

		if (e->matched)
			continue;
		unmatched++;
		if (e->said)
			continue;
		e->said = true;
		shown = util_printable_dup(e->pattern);
		if (out)
			fprintf(out, "warning: %s: %s \"%s\" matches no %s %s\n", cls, e->key, shown,
				noun, when);
		else
			log_warn("%s: %s \"%s\" matches no %s %s", cls, e->key, shown, noun, when);
		free(shown);
	}
	return unmatched;
}

bool source_names_unmatched(const struct source_names *sn, size_t i, const char **pattern,
			    const char **key)
{
	for (size_t j = 0; sn && j < sn->n; j++) {
		const struct source_name *e = &sn->v[j];

		if (!e->selects || e->matched || i--)
			continue;
		*pattern = e->pattern;
		*key = e->key;
		return true;
	}
	return false;
}

/* ---- entropyd -n: what the host has now ---- */

/* The device name sysfs gives an input node ("" if none), without opening it. */
static void input_devname(const char *node, char *buf, size_t size)
{
	char *path = xasprintf("/sys/class/input/%s/device/name", node);
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)size, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	free(path);
}

static void saw_dir(struct source_names *sn, const char *dir, const char *prefix, bool input)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char devname[128], *path;
		const char *names[3];

		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)) != 0)
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		names[0] = de->d_name;
		names[1] = path;
		names[2] = NULL;
		if (input) {
			input_devname(de->d_name, devname, sizeof(devname));
			names[2] = devname[0] ? devname : NULL;
		}
		source_names_saw(sn, names, 3);
		free(path);
	}
	closedir(d);
}

size_t source_names_check_host(const struct config *cfg, FILE *out)
{
	size_t unmatched = 0;

	for (int c = 0; c < CLASS_COUNT; c++) {
		struct source_names *sn;

		if (!config_policy_class_runs(cfg, (enum src_class)c))
			continue;
		sn = source_names_new(cfg, (enum src_class)c);
		switch ((enum src_class)c) {
		case CLASS_INPUT:
			saw_dir(sn, cfg->input.watch, "event", true);
			break;
		case CLASS_BLOCK:
			saw_dir(sn, "/sys/block", "", false);
			break;
		case CLASS_NETWORK:
			if (cfg->network.file && cfg->network.file[0]) {
				const char *b = strrchr(cfg->network.file, '/');
				const char *name = b ? b + 1 : cfg->network.file;

				source_names_saw(sn, &name, 1);
			} else {
				saw_dir(sn, "/sys/class/net", "", false);
			}
			break;
		case CLASS_COUNT:
			break;
		}
		unmatched += source_names_report(sn, "on this host now", out);
		source_names_free(sn);
	}
	return unmatched;
}
