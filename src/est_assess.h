/* est_assess: entropyd --assess, the daemon's own SP 800-90B estimators over a recorded file. */
#ifndef ENTROPYD_EST_ASSESS_H
#define ENTROPYD_EST_ASSESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "source_classes.h"

struct assess_opts {
	const char *file;   /* one symbol per byte, as entropyd --record and ea_non_iid use */
	unsigned bits;      /* 1..8: the low bits of each byte are the symbol */
	enum src_class cls; /* whose policy rule says what would be credited */
	const char *instance; /* NULL, or the instance whose override (if any) applies too */
	bool json;
};

/*
 * Read opts->file whole, run NIST's non-IID assessment over it (sp90b_noniid: ten estimators,
 * literal and bitstring views), and print each result, the assessed min-entropy
 * (min(H_original, bits x H_bitstring)) and the credit per event under cfg's rule, as text
 * or JSON, to out; with opts->instance, under that instance's rule (the class rule with its
 * first matching override). Problems go to err, naming the file, and so does a warning when
 * the file holds fewer than ASSESS_MIN_SAMPLES samples. Returns 0, or 1 if the file cannot be
 * read or holds fewer than 2 samples. Never needs privileges; starts nothing.
 */
int est_assess_run(const struct assess_opts *opts, const struct config *cfg, FILE *out, FILE *err);

/* SP 800-90B §3.1.1 asks for at least this many samples of a noise source; the estimators
 * mean little on fewer, so --assess warns. */
#define ASSESS_MIN_SAMPLES 1000000

/* The JSON key of an estimator (enum sp90b_test): "mcv", "collision", ..., "lz78y". */
const char *est_assess_key(unsigned estimator);

#endif
