/* entropyctl_check: `entropyctl check` — one line and a monitoring plugin's exit status,
 * judged by what matters on this machine: the daemon runs, every configured source is open
 * or waits for a reason, none has failed its health tests for good, and where credit counts
 * the CRNG became ready in time. */
#include "autoconf.h"

#include "entropyctl_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctl_proto.h"
#include "entropyctl_client.h"
#include "util.h"

const char *entropyctl_check_state_name(enum check_state s)
{
	switch (s) {
	case CHECK_OK: return "OK";
	case CHECK_WARNING: return "WARNING";
	case CHECK_CRITICAL: return "CRITICAL";
	case CHECK_UNKNOWN: break;
	}
	return "UNKNOWN";
}

/* A line built piece by piece, cut at its size. */
struct text {
	char *buf;
	size_t size, len;
};

static void PRINTF_LIKE(2, 3) add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->len + 1 >= t->size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len - 1;
}

/* Names of the instances one finding is about, "class/name, class/name". */
struct finding {
	enum check_state state;
	char what[96];
	char names[512];
	size_t n;
};

static void name_in(struct finding *f, const json_t *src)
{
	size_t len = strlen(f->names);

	snprintf(f->names + len, sizeof(f->names) - len, "%s%s/%s", f->n ? ", " : "",
		 s_(src, "class"), s_(src, "name"));
	f->n++;
}

static bool is(const json_t *o, const char *key, const char *value)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s && !strcmp(s, value);
}

enum check_state entropyctl_check_judge(const json_t *st, const json_t *sources,
			     const struct check_limits *lim, char *line, size_t size)
{
	const json_t *k = json_object_get(st, "kernel"), *d = json_object_get(st, "daemon"), *s;
	bool counts = b_(k, "credit_counts"), ready = b_(k, "crng_ready");
	double up = (double)i_(d, "uptime_s");
	size_t i, configured = 0, open = 0, waiting = 0, failing = 0;
	/* The worst kinds first: that is the order they are said in. */
	struct finding crng = {0}, none = {0}, dead = {0}, closed = {0};
	struct finding *order[] = {&crng, &none, &dead, &closed};
	enum check_state worst = CHECK_OK;
	struct text t = {line, size, 0};

	if (size)
		line[0] = '\0';
	json_array_foreach(sources, i, s) {
		const json_t *h = json_object_get(s, "health");
		bool credited = !is(json_object_get(s, "policy"), "mode", "mix-only");

		if (is(json_object_get(s, "policy"), "mode", "disabled"))
			continue;
		configured++;
		if (is(s, "state", "open") || is(s, "state", "sampled"))
			open++;
		else if (is(s, "state", "not-open"))
			name_in(&closed, s);
		else
			waiting++; /* waiting, refused, ended: each says why, none is broken */
		if (is(h, "state", "failed-permanent")) {
			/* Where the kernel no longer counts credit, a failure costs nothing. */
			if (counts && credited)
				dead.state = CHECK_CRITICAL;
			name_in(&dead, s);
		} else if (is(h, "state", "failed")) {
			failing++;
		}
	}
	if (closed.n) {
		closed.state = CHECK_WARNING;
		snprintf(closed.what, sizeof(closed.what), "%s", "not open");
	}
	if (dead.n) {
		if (dead.state != CHECK_CRITICAL)
			dead.state = CHECK_WARNING;
		snprintf(dead.what, sizeof(dead.what), "failed %s health tests for good",
			 dead.n == 1 ? "its" : "their");
	}
	if (counts && !open) {
		none.state = CHECK_CRITICAL;
		snprintf(none.what, sizeof(none.what), "%s",
			 configured ? "no source open, and credit counts: nothing can credit"
				    : "no source configured, and credit counts: nothing can credit");
	}
	if (counts && !ready && up >= lim->warning_s) {
		crng.state = up >= lim->critical_s ? CHECK_CRITICAL : CHECK_WARNING;
		snprintf(crng.what, sizeof(crng.what), "CRNG not ready %.0f s after entropyd started",
			 up);
	}
	for (int sev = CHECK_CRITICAL; sev >= CHECK_WARNING; sev--)
		for (size_t j = 0; j < ARRAY_SIZE(order); j++) {
			struct finding *f = order[j];

			if (f->state != (enum check_state)sev)
				continue;
			if (worst == CHECK_OK)
				worst = f->state;
			if (f->n)
				add(&t, "%s %s; ", f->names, f->what);
			else
				add(&t, "%s; ", f->what);
		}
	add(&t, "%zu of %zu %s open", open, configured, N(configured, "source"));
	if (waiting)
		add(&t, ", %zu waiting", waiting);
	if (failing)
		add(&t, ", %zu failing %s health tests for now", failing,
		    failing == 1 ? "its" : "their");
	if (ready)
		add(&t, "; CRNG ready");
	else
		add(&t, "; CRNG not ready yet (%.0f s)", up);
	add(&t, ", credit %s", counts ? "counts" : "no longer counts");
	add(&t, " | open=%zu;;;0;%zu not_open=%zu failed_for_good=%zu crng_ready=%d", open,
	    configured, closed.n, dead.n, ready ? 1 : 0);
	return worst;
}

int entropyctl_check_cmd(const char *path, double timeout, const struct check_limits *lim)
{
	struct conn c;
	json_t *st, *src;
	enum check_state state;
	char line[1024], reason[512];
	/* What would go to stderr is the line's reason. */
	int rc = entropyctl_client_fetch_snapshot(&c, path, timeout, &st, &src, reason, sizeof(reason));

	if (rc != XC_OK) {
		/* Not running is critical; anything else (no permission, a path that is
		 * not the socket, no reply) leaves the state unknown. */
		state = entropyctl_client_absent(&c, rc) ? CHECK_CRITICAL : CHECK_UNKNOWN;
		snprintf(line, sizeof(line), "%s", reason);
	} else {
		state = entropyctl_check_judge(st, json_object_get(src, "sources"), lim, line, sizeof(line));
	}
	json_decref(st);
	json_decref(src);
	printf("ENTROPYD %s: %s\n", entropyctl_check_state_name(state), line);
	return (int)state;
}
