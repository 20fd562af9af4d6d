/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A streaming writer of the two text formats scrapers read: the Prometheus text exposition
 * format 0.0.4 (what node_exporter's textfile collector and `promtool check metrics` read) and
 * OpenMetrics 1.0 (application/openmetrics-text). The caller names each family once with its type,
 * unit and help, then writes its samples; the writer puts the type's suffix on sample names and
 * says TYPE the way each format wants it:
 *
 *   family cgbalance_moves, counter  -> Prometheus: # TYPE cgbalance_moves_total counter
 *                                       OpenMetrics: # TYPE cgbalance_moves counter
 *                                       both:        cgbalance_moves_total 3
 *   family cgbalance_build, info     -> Prometheus: a gauge cgbalance_build_info, value 1
 *                                       OpenMetrics: # TYPE cgbalance_build info
 *
 * Label values are escaped (backslash, double quote, newline) and made valid UTF-8 (a byte that
 * is not is written as U+FFFD), so any cgroup path can be a label. Write errors are the FILE's:
 * metrics_end() returns them.
 *
 *   MetricsWriter w = { .f = f, .format = METRICS_OPENMETRICS };
 *   metrics_family(&w, "cgbalance_node_load_cpus", METRIC_GAUGE, NULL, "Load of each node.");
 *   metrics_sample(&w, (const char *[]){ "node", "0", NULL }, 1.5);
 *   metrics_end(&w);   -> "# EOF" for OpenMetrics
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum MetricsFormat {
        METRICS_PROMETHEUS, /* text format 0.0.4 */
        METRICS_OPENMETRICS, /* OpenMetrics 1.0 */
        _METRICS_FORMAT_MAX,
        _METRICS_FORMAT_INVALID = -1,
} MetricsFormat;

/* "prometheus", "openmetrics" */
const char *metrics_format_to_string(MetricsFormat f);
MetricsFormat metrics_format_from_string(const char *s);
/* The HTTP Content-Type a scraper expects for f. */
const char *metrics_format_content_type(MetricsFormat f);

typedef enum MetricType {
        METRIC_GAUGE,
        METRIC_COUNTER, /* samples end in _total */
        METRIC_HISTOGRAM, /* metrics_histogram() writes its samples */
        METRIC_INFO, /* one sample, value 1, ends in _info */
} MetricType;

typedef struct MetricsWriter {
        FILE *f;
        MetricsFormat format;
        /* the family being written: set by metrics_family() */
        const char *family;
        MetricType type;
} MetricsWriter;

/*
 * Starts a family. name: [a-zA-Z_:][a-zA-Z0-9_:]*, without the type's suffix (_total, _info);
 * unit: NULL, or the unit the name ends in ("seconds", "bytes"), said as UNIT in OpenMetrics.
 * help: one line (a newline or backslash is escaped).
 */
void metrics_family(MetricsWriter *w, const char *name, MetricType type, const char *unit,
                    const char *help);
/* One sample of the family (not a histogram): labels are name/value pairs ending in NULL, or NULL
 * for none. A finite value with no fraction prints as an integer; NaN and infinities as the
 * formats spell them. */
void metrics_sample(MetricsWriter *w, const char *const *labels, double value);

/* A histogram's state: counts per bucket (not cumulative), the last bucket +Inf. */
#define METRICS_HISTOGRAM_MAX 16
typedef struct MetricsHistogram {
        const double *bounds; /* upper bounds, ascending, finite */
        size_t n_bounds; /* at most METRICS_HISTOGRAM_MAX - 1 */
        uint64_t counts[METRICS_HISTOGRAM_MAX]; /* [n_bounds] is past the last bound */
        double sum;
        uint64_t count;
} MetricsHistogram;

/* Counts value in the first bucket whose bound it does not exceed (le: value <= bound). */
void metrics_histogram_observe(MetricsHistogram *h, double value);
/* The family's samples: _bucket{le=...} cumulative up to +Inf, _sum, _count. */
void metrics_histogram(MetricsWriter *w, const char *const *labels, const MetricsHistogram *h);

/* Ends the exposition ("# EOF" in OpenMetrics) and flushes; 0 or -EIO if a write failed. */
int metrics_end(MetricsWriter *w);

/* Pure: whether s is a valid metric or label name ([a-zA-Z_:][a-zA-Z0-9_:]*; no ':' in a
 * label name). */
bool metrics_name_valid(const char *s, bool label);
/* Writes s as a label value's escaped text (no quotes) to f. */
void metrics_write_label_value(FILE *f, const char *s);
