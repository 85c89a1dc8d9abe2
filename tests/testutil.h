/* testutil: the helpers the Check unit tests share. */
#ifndef ENTROPYD_TESTUTIL_H
#define ENTROPYD_TESTUTIL_H

#include <check.h>

/* ---- the runner ---- */

/* Runs every test of s (CK_NORMAL) and frees the runner. EXIT_SUCCESS if none failed, else
 * EXIT_FAILURE: what main() returns. */
int tu_run_suite(Suite *s);

#endif
