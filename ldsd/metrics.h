/*
 * metrics.h - ldsd's status as OpenMetrics text (the Prometheus
 * exposition format's standard form), for `ldsctl metrics` and the
 * optional metrics_listen HTTP endpoint.
 *
 * The input is the status document of the control socket ("status
 * json", parsed with jsonr), so the metrics can never disagree with
 * `ldsctl status`.  Names, types and units are fixed by a table in
 * metrics.c and listed in ldsctl(1); a name is never reused for another
 * meaning.  Every family has HELP and TYPE, counters end in _total,
 * links are told apart by the label peer="CLUSTER", and the text ends
 * with "# EOF".
 */
#ifndef LDS_METRICS_H
#define LDS_METRICS_H

#include <stdio.h>

#include "jsonr.h"

/* The media type of what metrics_write() produces. */
#define METRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Writes the metrics of status (the parsed status document) to out.
 * Returns 0, or -EINVAL if status is not an ldsd status document. */
int metrics_write(const struct jsonr *status, FILE *out);

#endif
