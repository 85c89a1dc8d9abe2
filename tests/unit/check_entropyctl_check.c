/* check_entropyctl_check: unit tests for entropyctl_check.c — the verdict of `entropyctl
 * check` on replies as a daemon sends them, for what the host cannot show: a CRNG not ready,
 * before, at and past each limit, and how much a failure weighs where credit counts. The
 * daemon's own replies are judged in tests/integration/t_check.sh. */
#include <check.h>
#include <jansson.h>
#include <string.h>

#include "entropyctl_check.h"
#include "testutil.h"

static const struct check_limits lim = {CHECK_WARNING_S, CHECK_CRITICAL_S};

static json_t *status(bool ready, bool counts, long long uptime)
{
	return json_pack("{s:{s:I}, s:{s:b, s:b}}", "daemon", "uptime_s", (json_int_t)uptime,
			 "kernel", "crng_ready", ready, "credit_counts", counts);
}

static json_t *source(const char *name, const char *mode, const char *state, const char *health)
{
	return json_pack("{s:s, s:s, s:{s:s}, s:s, s:{s:s}}", "class", "input", "name", name,
			 "policy", "mode", mode, "state", state, "health", "state", health);
}

static enum check_state judge(json_t *st, json_t *src, char *line, size_t size)
{
	enum check_state s = entropyctl_check_judge(st, src, &lim, line, size);

	json_decref(st);
	json_decref(src);
	return s;
}

START_TEST(crng_not_ready_by_the_limits)
{
	static const struct {
		long long uptime;
		enum check_state want;
	} cases[] = {
		{0, CHECK_OK},
		{(long long)CHECK_WARNING_S - 1, CHECK_OK},
		{(long long)CHECK_WARNING_S, CHECK_WARNING},
		{(long long)CHECK_CRITICAL_S - 1, CHECK_WARNING},
		{(long long)CHECK_CRITICAL_S, CHECK_CRITICAL},
	};
	char line[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *src = json_pack("[o]", source("event0", "trusted", "open", "startup"));
		enum check_state s = judge(status(false, true, cases[i].uptime), src, line,
					   sizeof(line));

		ck_assert_msg(s == cases[i].want, "uptime %lld: %s, want %s: %s", cases[i].uptime,
			      entropyctl_check_state_name(s), entropyctl_check_state_name(cases[i].want), line);
		if (s != CHECK_OK)
			ck_assert_msg(strstr(line, "CRNG not ready ") == line, "%s", line);
		else
			ck_assert_ptr_nonnull(strstr(line, "; CRNG not ready yet ("));
	}
}
END_TEST

START_TEST(ready_or_not_counting_is_not_judged_by_time)
{
	char line[512];
	json_t *src = json_pack("[o]", source("event0", "trusted", "open", "ok"));

	/* The old semantics with a ready CRNG, long after start: nothing waits. */
	ck_assert_int_eq(judge(status(true, true, 100000), src, line, sizeof(line)), CHECK_OK);
	ck_assert_ptr_nonnull(strstr(line, "1 of 1 source open; CRNG ready, credit counts | "));
}
END_TEST

START_TEST(failure_weighed_by_whether_credit_counts)
{
	char line[512];

	ck_assert_int_eq(judge(status(true, false, 10),
			       json_pack("[o]", source("event0", "trusted", "open", "failed-permanent")),
			       line, sizeof(line)),
			 CHECK_WARNING);
	ck_assert_int_eq(judge(status(true, true, 10),
			       json_pack("[o]", source("event0", "trusted", "open", "failed-permanent")),
			       line, sizeof(line)),
			 CHECK_CRITICAL);
	/* mix-only earns nothing anyway: a warning, even where credit counts. */
	ck_assert_int_eq(judge(status(true, true, 10),
			       json_pack("[oo]", source("event0", "mix-only", "open", "failed-permanent"),
					 source("event1", "trusted", "open", "ok")),
			       line, sizeof(line)),
			 CHECK_WARNING);
	ck_assert_msg(strstr(line, "input/event0 failed its health tests for good; ") == line, "%s",
		      line);
	/* Failing for now is said, not judged. */
	ck_assert_int_eq(judge(status(true, true, 10),
			       json_pack("[o]", source("event0", "trusted", "open", "failed")), line,
			       sizeof(line)),
			 CHECK_OK);
	ck_assert_ptr_nonnull(strstr(line, ", 1 failing its health tests for now"));
}
END_TEST

START_TEST(waiting_and_disabled_are_not_problems)
{
	char line[512];
	json_t *src = json_pack("[oooo]", source("event0", "trusted", "open", "ok"),
				source("event1", "trusted", "waiting", "-"),
				source("event2", "trusted", "refused", "-"),
				source("*", "disabled", "disabled", "-"));

	ck_assert_int_eq(judge(status(true, false, 10), src, line, sizeof(line)), CHECK_OK);
	ck_assert_msg(strstr(line, "1 of 3 sources open, 2 waiting; ") == line, "%s", line);
}
END_TEST

START_TEST(worst_first_and_cut_to_size)
{
	char line[512], small[40];
	json_t *src = json_pack("[oo]", source("event0", "trusted", "not-open", "-"),
				source("event1", "trusted", "not-open", "-"));

	/* Nothing open while credit counts, past the critical limit: both critical findings
	 * first, the CRNG's before the sources'; the warning after them. */
	ck_assert_int_eq(judge(status(false, true, 1000), json_deep_copy(src), line, sizeof(line)),
			 CHECK_CRITICAL);
	ck_assert_msg(strstr(line, "CRNG not ready 1000 s after entropyd started; no source open, "
				   "and credit counts: nothing can credit; input/event0, input/event1 "
				   "not open; 0 of 2 sources open; ") == line, "%s", line);
	ck_assert_int_eq(judge(status(false, true, 1000), src, small, sizeof(small)),
			 CHECK_CRITICAL);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
}
END_TEST

static Suite *check_suite(void)
{
	Suite *s = suite_create("entropyctl_check");
	TCase *tc = tcase_create("judge");

	tcase_add_test(tc, crng_not_ready_by_the_limits);
	tcase_add_test(tc, ready_or_not_counting_is_not_judged_by_time);
	tcase_add_test(tc, failure_weighed_by_whether_credit_counts);
	tcase_add_test(tc, waiting_and_disabled_are_not_problems);
	tcase_add_test(tc, worst_first_and_cut_to_size);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(check_suite());
}
