/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "openmetrics.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "macro.h"
#include "utf8.h"

static const char *const format_names[_METRICS_FORMAT_MAX] = {
        [METRICS_PROMETHEUS] = "prometheus",
        [METRICS_OPENMETRICS] = "openmetrics",
};

const char *metrics_format_to_string(MetricsFormat f) {
        return f >= 0 && f < _METRICS_FORMAT_MAX ? format_names[f] : NULL;
}

MetricsFormat metrics_format_from_string(const char *s) {
        for (int f = 0; f < _METRICS_FORMAT_MAX; f++)
                if (s && streq(s, format_names[f]))
                        return (MetricsFormat) f;
        return _METRICS_FORMAT_INVALID;
}

const char *metrics_format_content_type(MetricsFormat f) {
        return f == METRICS_OPENMETRICS
                       ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                       : "text/plain; version=0.0.4; charset=utf-8";
}

bool metrics_name_valid(const char *s, bool label) {
        if (!s || !*s)
                return false;
        for (const char *p = s; *p; p++) {
                bool alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                             (!label && *p == ':');

                if (!alpha && !(p > s && *p >= '0' && *p <= '9'))
                        return false;
        }
        return true;
}

/* The suffix a sample of the family's type carries. */
static const char *type_suffix(MetricType t) {
        switch (t) {
        case METRIC_COUNTER: return "_total";
        case METRIC_INFO: return "_info";
        default: return "";
        }
}

static const char *type_name(MetricsFormat f, MetricType t) {
        switch (t) {
        case METRIC_COUNTER: return "counter";
        case METRIC_HISTOGRAM: return "histogram";
        /* the text format 0.0.4 has no info type: a gauge of 1, as client libraries write it */
        case METRIC_INFO: return f == METRICS_OPENMETRICS ? "info" : "gauge";
        default: return "gauge";
        }
}

/* HELP text: one line, backslash and newline escaped (and the quote, in OpenMetrics). */
static void write_help(const MetricsWriter *w, const char *s) {
        for (; *s; s++) {
                if (*s == '\\')
                        fputs("\\\\", w->f);
                else if (*s == '\n')
                        fputs("\\n", w->f);
                else if (*s == '"' && w->format == METRICS_OPENMETRICS)
                        fputs("\\\"", w->f);
                else
                        fputc(*s, w->f);
        }
}

void metrics_write_label_value(FILE *f, const char *s) {
        while (*s) {
                size_t len = utf8_char_length(s);

                if (len == 1 && (*s == '\\' || *s == '"'))
                        fprintf(f, "\\%c", *s);
                else if (len == 1 && *s == '\n')
                        fputs("\\n", f);
                else if (len == 0 || utf8_is_control(s, len, /* keep_lines= */ false))
                        /* U+FFFD: neither format has an escape for other bytes */
                        fputs("\xef\xbf\xbd", f);
                else
                        fwrite(s, 1, len, f);
                s += len ? len : 1;
        }
}

void metrics_family(MetricsWriter *w, const char *name, MetricType type, const char *unit,
                    const char *help) {
        /* OpenMetrics names the family; the text format names the samples. */
        const char *suffix = w->format == METRICS_OPENMETRICS ? "" : type_suffix(type);

        w->family = name;
        w->type = type;
        fprintf(w->f, "# HELP %s%s ", name, suffix);
        write_help(w, help);
        fprintf(w->f, "\n# TYPE %s%s %s\n", name, suffix, type_name(w->format, type));
        if (unit && w->format == METRICS_OPENMETRICS)
                fprintf(w->f, "# UNIT %s %s\n", name, unit);
}

static void write_labels(const MetricsWriter *w, const char *const *labels, const char *le) {
        bool any = false;

        for (size_t i = 0; labels && labels[i] && labels[i + 1]; i += 2) {
                fprintf(w->f, "%s%s=\"", any ? "," : "{", labels[i]);
                metrics_write_label_value(w->f, labels[i + 1]);
                fputc('"', w->f);
                any = true;
        }
        if (le) {
                fprintf(w->f, "%sle=\"%s\"", any ? "," : "{", le);
                any = true;
        }
        if (any)
                fputc('}', w->f);
}

/* A number as both formats spell it: integers without a fraction, else the shortest %g that
 * reads back the same (up to 17 digits). */
static const char *format_number(double v, char buf[static 32]) {
        if (isnan(v))
                return "NaN";
        if (isinf(v))
                return v > 0 ? "+Inf" : "-Inf";
        if (v == floor(v) && fabs(v) < 1e15) {
                snprintf(buf, 32, "%.0f", v);
                return buf;
        }
        for (int prec = 6; prec <= 17; prec++) {
                snprintf(buf, 32, "%.*g", prec, v);
                if (strtod(buf, NULL) == v)
                        break;
        }
        return buf;
}

void metrics_sample(MetricsWriter *w, const char *const *labels, double value) {
        char buf[32];

        fprintf(w->f, "%s%s", w->family, type_suffix(w->type));
        write_labels(w, labels, NULL);
        fprintf(w->f, " %s\n", format_number(w->type == METRIC_INFO ? 1 : value, buf));
}

void metrics_histogram_observe(MetricsHistogram *h, double value) {
        size_t i = 0;

        while (i < h->n_bounds && value > h->bounds[i])
                i++;
        h->counts[i]++;
        h->sum += value;
        h->count++;
}

void metrics_histogram(MetricsWriter *w, const char *const *labels, const MetricsHistogram *h) {
        uint64_t cumulative = 0;
        char buf[32];

        for (size_t i = 0; i <= h->n_bounds; i++) {
                cumulative += h->counts[i];
                fprintf(w->f, "%s_bucket", w->family);
                write_labels(w, labels,
                             format_number(i < h->n_bounds ? h->bounds[i] : INFINITY, buf));
                fprintf(w->f, " %" PRIu64 "\n", cumulative);
        }
        fprintf(w->f, "%s_sum", w->family);
        write_labels(w, labels, NULL);
        fprintf(w->f, " %s\n%s_count", format_number(h->sum, buf), w->family);
        write_labels(w, labels, NULL);
        fprintf(w->f, " %" PRIu64 "\n", h->count);
}

int metrics_end(MetricsWriter *w) {
        if (w->format == METRICS_OPENMETRICS)
                fputs("# EOF\n", w->f);
        if (fflush(w->f) != 0 || ferror(w->f))
                return -EIO;
        return 0;
}
