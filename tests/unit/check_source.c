/* check_source: the source core's contract, with a scripted driver whose scan finds the
 * names a test gives and whose open answers what the test says: instances found and
 * forgotten, the policy gate, retries and their backoff on a real event loop, and the
 * reconciliation on reload. The real drivers are tested on the core in check_input,
 * check_net, check_source_table and the shell suites. */
#include "autoconf.h"

#include <check.h>
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "log.h"
#include "source.h"
#include "testutil.h"
#include "util.h"

#define MAX_NAMES 4

/* What the scripted driver finds, answers and was asked. */
static struct {
	const char *names[MAX_NAMES]; /* found by a scan */
	bool scan_fails;
	enum src_status answer;       /* what open says */
	enum src_status recheck;      /* what a reload's recheck says */
	bool with_gone;               /* a gone hook: a rescan does not forget */
	int starts, stops, scans, opens, closes, detaches, forgets, gones, settles;
} drv;

static struct event_base *base;
static struct config *cfg;
static struct pool pool;
static struct source src;
static bool started;

static int fake_start(struct source *s)
{
	drv.starts++;
	source_rescan(s);
	return 0;
}

static void fake_stop(struct source *s)
{
	drv.stops++;
}

static bool fake_scan(struct source *s)
{
	drv.scans++;
	if (drv.scan_fails)
		return false;
	for (int i = 0; i < MAX_NAMES && drv.names[i]; i++) {
		bool added;
		struct src_inst *si = source_found(s, drv.names[i], &added);

		if (added || si->status == SRC_CLOSED)
			source_open(si);
	}
	return true;
}

static enum src_status fake_open(struct src_inst *si)
{
	drv.opens++;
	source_attach(si, "fake", 0);
	source_set_state(si, "opened %d", drv.opens);
	return drv.answer;
}

static void fake_close(struct src_inst *si)
{
	drv.closes++;
}

static void fake_detach(struct src_inst *si)
{
	drv.detaches++;
}

static void fake_forget(struct src_inst *si)
{
	drv.forgets++;
}

static void fake_gone(struct src_inst *si)
{
	drv.gones++;
}

static void fake_settle(struct source *s)
{
	drv.settles++;
}

static enum src_status fake_recheck(struct src_inst *si, char *why, size_t size)
{
	snprintf(why, size, "the script says so");
	return drv.recheck;
}

static void fake_gone_maybe(struct src_inst *si)
{
	if (drv.with_gone)
		fake_gone(si);
	else
		source_forget(si);
}

static const struct source_ops fake_ops = {
	.name = "input",
	.cls = CLASS_INPUT,
	.inst_size = sizeof(int),
	.retry_min_s = 1,
	.retry_max_s = 4,
	.start = fake_start,
	.stop = fake_stop,
	.scan = fake_scan,
	.open = fake_open,
	.close = fake_close,
	.detach = fake_detach,
	.forget = fake_forget,
	.gone = fake_gone_maybe,
	.settle = fake_settle,
	.recheck = fake_recheck,
};

/* ---- helpers ---- */

/* The instance of that name, which must be there. */
static struct src_inst *find(const char *name)
{
	struct src_inst *si = source_find(&src, name);

	ck_assert_ptr_nonnull(si);
	return si;
}

static bool attached(const char *name)
{
	struct inst_info in;

	for (size_t i = 0; feed_pipeline_info(i, &in); i++)
		if (strcmp(in.name, name) == 0)
			return true;
	return false;
}

static void start(void)
{
	ck_assert_int_eq(source_start(&src, &fake_ops, base, cfg), 0);
	started = true;
}

/* A copy of the running config with instance `name` disabled or not. */
static struct config *with_disabled(const char *name)
{
	struct config *c = config_defaults();
	struct class_policy *cp = &c->policy[CLASS_INPUT];

	if (name) {
		cp->overrides = xcalloc(1, sizeof(*cp->overrides));
		cp->n_overrides = 1;
		cp->overrides[0].name = xstrdup(name);
		cp->overrides[0].set = RULE_SET_MODE;
		cp->overrides[0].rule = cp->rule;
		cp->overrides[0].rule.mode = MODE_DISABLED;
	}
	return c;
}

/* The daemon's reload order: the pipeline learns the new config, then the sources do. */
static void reload(struct config *next)
{
	struct config *old = cfg;

	cfg = next;
	feed_pipeline_reconfigure(next);
	source_reload(&src, next);
	config_free(old);
}

/* ---- fixture ---- */

static void setup(void)
{
	unsetenv("JOURNAL_STREAM");
	log_open(true, 0);
	memset(&drv, 0, sizeof(drv));
	drv.answer = SRC_OPEN;
	drv.recheck = SRC_OPEN;
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	cfg = with_disabled(NULL);
	feed_pool_init(&pool);
	feed_pipeline_init(cfg, &pool, NULL, NULL);
	memset(&src, 0, sizeof(src));
	started = false;
}

static void teardown(void)
{
	if (started)
		source_stop(&src);
	feed_pipeline_fini();
	config_free(cfg);
	event_base_free(base);
}

/* ---- tests ---- */

/* What a scan finds is opened once; what a later scan no longer finds is closed, detached
 * and forgotten; stop forgets the rest, then stops the driver. */
START_TEST(test_found_and_forgotten)
{
	drv.names[0] = "a";
	drv.names[1] = "b";
	start();
	ck_assert_int_eq(drv.starts, 1);
	ck_assert_int_eq(drv.opens, 2);
	ck_assert_int_eq(find("a")->status, SRC_OPEN);
	ck_assert_str_eq(find("b")->state, "opened 2");
	ck_assert(attached("a") && attached("b"));
	ck_assert_int_eq(drv.settles, 1);

	drv.names[1] = NULL;
	source_rescan(&src);
	ck_assert_int_eq(drv.opens, 2); /* "a" is not opened again */
	ck_assert_ptr_null(source_find(&src, "b"));
	ck_assert(!attached("b"));
	ck_assert_int_eq(drv.closes, 1);
	ck_assert_int_eq(drv.detaches, 1);
	ck_assert_int_eq(drv.forgets, 1);

	/* A scan that cannot look takes nothing for gone. */
	drv.scan_fails = true;
	source_rescan(&src);
	ck_assert_ptr_nonnull(source_find(&src, "a"));

	source_stop(&src);
	started = false;
	ck_assert_int_eq(drv.stops, 1);
	ck_assert_int_eq(drv.forgets, 2);
	ck_assert_int_eq(feed_pipeline_count(), 0);
	/* Stopping twice is harmless. */
	source_stop(&src);
	ck_assert_int_eq(drv.stops, 1);
}
END_TEST

/* A driver with a gone hook decides itself what a rescan's miss means. */
START_TEST(test_gone_hook)
{
	drv.names[0] = "a";
	drv.with_gone = true;
	start();
	drv.names[0] = NULL;
	source_rescan(&src);
	ck_assert_int_eq(drv.gones, 1);
	ck_assert_ptr_nonnull(source_find(&src, "a"));
	ck_assert_int_eq(drv.forgets, 0);
}
END_TEST

/* Disabled by policy: never opened, never attached; enabled by a reload: opened. */
START_TEST(test_policy_gate)
{
	struct config *next = with_disabled("b");

	config_free(cfg);
	cfg = next;
	feed_pipeline_reconfigure(cfg);
	drv.names[0] = "a";
	drv.names[1] = "b";
	start();
	ck_assert_int_eq(drv.opens, 1);
	ck_assert_int_eq(find("b")->status, SRC_SKIPPED);
	ck_assert(find("b")->disabled);
	ck_assert(!attached("b"));

	/* Now "a" is disabled, "b" enabled: "a" is closed and detached, "b" opened. */
	reload(with_disabled("a"));
	ck_assert_int_eq(find("a")->status, SRC_SKIPPED);
	ck_assert(!attached("a"));
	ck_assert_int_eq(drv.closes, 1);
	ck_assert_int_eq(find("b")->status, SRC_OPEN);
	ck_assert(attached("b"));
	ck_assert_int_eq(drv.opens, 2);
}
END_TEST

/* SRC_RETRY backs off from retry_min_s, doubling, up to retry_max_s; an open resets it. */
START_TEST(test_backoff)
{
	struct src_inst *si;
	uint64_t now;

	drv.names[0] = "a";
	drv.answer = SRC_RETRY;
	start();
	si = find("a");
	ck_assert_int_eq(si->status, SRC_RETRY);
	ck_assert_uint_eq(si->retry_s, 1);
	now = util_mono_ns();
	ck_assert(si->retry_at > now && si->retry_at <= now + NS_PER_SEC);
	ck_assert_uint_eq(source_next_retry_s(si), 2);
	source_open(si);
	ck_assert_uint_eq(si->retry_s, 2);
	source_open(si);
	ck_assert_uint_eq(si->retry_s, 4);
	source_open(si);
	ck_assert_uint_eq(si->retry_s, 4);
	drv.answer = SRC_OPEN;
	source_open(si);
	ck_assert_int_eq(si->status, SRC_OPEN);
	ck_assert_uint_eq(si->retry_s, 0);

	/* Lost at run time: closed, and retried from the start of the backoff. */
	source_failed(si);
	ck_assert_int_eq(si->status, SRC_RETRY);
	ck_assert_uint_eq(si->retry_s, 1);
	ck_assert_int_eq(drv.closes, 1);
}
END_TEST

/* The retry timer opens what waits once its time has come, then settles the class. */
START_TEST(test_retry_timer)
{
	struct src_inst *si;
	int settles;

	drv.names[0] = "a";
	drv.answer = SRC_RETRY;
	start();
	si = find("a");
	settles = drv.settles;
	drv.answer = SRC_OPEN;
	/* Due after 1 s: at most 3 s of turns. */
	TU_PUMP_UNTIL(base, 300, si->status == SRC_OPEN);
	ck_assert_int_eq(drv.opens, 2);
	ck_assert_int_eq(drv.settles, settles + 1);
	/* Nothing is pending once it is open. */
	ck_assert(!evtimer_pending(src.retry_ev, NULL));
}
END_TEST

/* A reload: what waits is tried again at once (the backoff starts afresh), even when the
 * reload's rescan cannot look; an open instance
 * the driver's recheck refuses is closed and detached until the next reload; one it wants
 * reopened is closed and opened again by the reload's rescan. */
START_TEST(test_reload_reconciles)
{
	struct src_inst *a, *b;
	int opens, closes;

	drv.names[0] = "a";
	drv.names[1] = "b";
	start();
	a = find("a");
	b = find("b");
	drv.answer = SRC_RETRY;
	source_failed(b);
	source_open(b);
	ck_assert_uint_eq(b->retry_s, 2);

	drv.answer = SRC_OPEN;
	drv.recheck = SRC_SKIPPED;
	reload(with_disabled(NULL));
	/* a is refused by the recheck; b, waiting, is due now: on the next turn of the loop,
	 * without waiting out its backoff (2 s). */
	ck_assert_int_eq(a->status, SRC_SKIPPED);
	ck_assert(!attached("a"));
	ck_assert_int_eq(b->status, SRC_RETRY);
	ck_assert_uint_eq(b->retry_s, 0);
	tu_turn(base);
	ck_assert_int_eq(b->status, SRC_OPEN);

	/* The next reload tries a skipped one again; b, open, is reopened by the recheck. */
	drv.recheck = SRC_CLOSED;
	opens = drv.opens;
	closes = drv.closes;
	reload(with_disabled(NULL));
	ck_assert_int_eq(a->status, SRC_OPEN);
	ck_assert(attached("a"));
	ck_assert_int_eq(b->status, SRC_OPEN);
	ck_assert_int_eq(drv.opens, opens + 2);
	ck_assert_int_eq(drv.closes, closes + 1); /* b's close; a was closed already */

	/* A reload whose rescan cannot look still retries what waited. */
	drv.answer = SRC_RETRY;
	source_failed(b);
	drv.answer = SRC_OPEN;
	drv.recheck = SRC_OPEN;
	drv.scan_fails = true;
	reload(with_disabled(NULL));
	tu_turn(base);
	ck_assert_int_eq(b->status, SRC_OPEN);
}
END_TEST

/* An instance read to its end stays ended, and attached, across reloads. */
START_TEST(test_ended_stays)
{
	struct src_inst *si;

	drv.names[0] = "a";
	drv.answer = SRC_ENDED;
	start();
	si = find("a");
	ck_assert_int_eq(si->status, SRC_ENDED);
	reload(with_disabled(NULL));
	reload(with_disabled(NULL));
	ck_assert_int_eq(drv.opens, 1);
	ck_assert(attached("a"));
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("source_core");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_found_and_forgotten);
	tcase_add_test(tc, test_gone_hook);
	tcase_add_test(tc, test_policy_gate);
	tcase_add_test(tc, test_backoff);
	tcase_add_test(tc, test_retry_timer);
	tcase_add_test(tc, test_reload_reconciles);
	tcase_add_test(tc, test_ended_stays);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(core_suite());
}
