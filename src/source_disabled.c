/* source_disabled: the classes and instances that policy disables, for status (see source_disabled.h). */
#include "autoconf.h"

#include "source_disabled.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config_policy.h"
#include "util.h"

struct disabled {
	struct disabled *next;
	enum src_class cls;
	char *name; /* NULL: the whole class */
};

static struct disabled *head, **tail = &head;

static bool same(const struct disabled *d, enum src_class cls, const char *name)
{
	return d->cls == cls && (name && d->name ? strcmp(name, d->name) == 0 : !name && !d->name);
}

void source_disabled_set(enum src_class cls, const char *name, bool on)
{
	struct disabled **pp, *d;

	for (pp = &head; *pp; pp = &(*pp)->next)
		if (same(*pp, cls, name))
			break;
	if (on && !*pp) {
		d = xcalloc(1, sizeof(*d));
		d->cls = cls;
		d->name = name ? xstrdup(name) : NULL;
		*tail = d;
		tail = &d->next;
	} else if (!on && *pp) {
		d = *pp;
		*pp = d->next;
		if (tail == &d->next)
			tail = pp;
		free(d->name);
		free(d);
	}
}

void source_disabled_forget_all(void)
{
	while (head)
		source_disabled_set(head->cls, head->name, false);
}

bool source_disabled_info(size_t i, const struct config *cfg, struct inst_info *out)
{
	const struct disabled *d = head;

	for (; d && i; i--)
		d = d->next;
	if (!d)
		return false;
	memset(out, 0, sizeof(*out));
	out->cls = d->cls;
	out->name = d->name ? d->name : DISABLED_CLASS_NAME;
	out->kind = d->name ? "-" : "class";
	out->state = "disabled by policy";
	out->backend = "-";
	out->rule = d->name ? config_policy_resolve(cfg, d->cls, d->name) : cfg->policy[d->cls].rule;
	out->estimator = "-";
	out->last_estimate = NAN;
	out->health = "-";
	out->health_last = "none";
	out->health_retry_in = NAN;
	out->reason = PIPELINE_DISABLED;
	strlcopy(out->reason_text, "policy: disabled (never opened)", sizeof(out->reason_text));
	out->weight = 0;
	return true;
}
