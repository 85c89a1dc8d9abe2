/* testutil: the helpers the Check unit tests share. */
#include "autoconf.h"

#include <check.h>
#include <stdlib.h>

#include "testutil.h"

/* ---- the runner ---- */

int tu_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
