/* entropyctl_metrics: entropyctl metrics — the daemon's status and sources in the Prometheus
 * text exposition format. */
#ifndef ENTROPYD_ENTROPYCTL_METRICS_H
#define ENTROPYD_ENTROPYCTL_METRICS_H

#include <jansson.h>
#include <stdio.h>

/* Print the metrics of st (GetStatus's parameters) and sources (GetSources's "sources"
 * array) to out. */
void entropyctl_metrics_print(FILE *out, const json_t *st, const json_t *sources);

#endif
