/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/openmetrics.c: the two text formats byte for byte (family lines, suffixes, units, the end),
 * label escaping and UTF-8 repair, numbers, histograms, and the names it accepts. The daemon's
 * whole output against promtool and the OpenMetrics reference parser is test-cgbalancectl's.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "openmetrics.h"

typedef struct Out {
        char *buf;
        size_t size;
        MetricsWriter w;
} Out;

static void out_open(Out *o, MetricsFormat format) {
        o->buf = NULL;
        o->size = 0;
        o->w = (MetricsWriter){ .f = open_memstream(&o->buf, &o->size), .format = format };
        cr_assert_not_null(o->w.f);
}

/* Ends the exposition and returns its text (caller frees). */
static char *out_close(Out *o) {
        cr_assert_eq(metrics_end(&o->w), 0);
        cr_assert_eq(fclose(o->w.f), 0);
        return o->buf;
}

Test(openmetrics, format_names_round_trip) {
        for (MetricsFormat f = 0; f < _METRICS_FORMAT_MAX; f++)
                cr_expect_eq(metrics_format_from_string(metrics_format_to_string(f)), f);
        cr_expect_eq(metrics_format_from_string("json"), _METRICS_FORMAT_INVALID);
        cr_expect_eq(metrics_format_from_string(NULL), _METRICS_FORMAT_INVALID);
        cr_expect_null(metrics_format_to_string(_METRICS_FORMAT_MAX));
        cr_expect(strstr(metrics_format_content_type(METRICS_OPENMETRICS), "openmetrics-text"));
        cr_expect(strstr(metrics_format_content_type(METRICS_PROMETHEUS), "version=0.0.4"));
}

Test(openmetrics, a_counter_is_typed_by_sample_in_text_and_by_family_in_openmetrics) {
        Out o;
        _cleanup_free_ char *prom = NULL, *om = NULL;

        out_open(&o, METRICS_PROMETHEUS);
        metrics_family(&o.w, "x_moves", METRIC_COUNTER, NULL, "Moves.");
        metrics_sample(&o.w, NULL, 3);
        prom = out_close(&o);
        cr_expect_str_eq(prom, "# HELP x_moves_total Moves.\n# TYPE x_moves_total counter\n"
                               "x_moves_total 3\n");

        out_open(&o, METRICS_OPENMETRICS);
        metrics_family(&o.w, "x_moves", METRIC_COUNTER, NULL, "Moves.");
        metrics_sample(&o.w, NULL, 3);
        om = out_close(&o);
        cr_expect_str_eq(om, "# HELP x_moves Moves.\n# TYPE x_moves counter\nx_moves_total 3\n"
                             "# EOF\n");
}

Test(openmetrics, info_is_a_gauge_of_one_in_text_and_info_in_openmetrics) {
        Out o;
        _cleanup_free_ char *prom = NULL, *om = NULL;

        out_open(&o, METRICS_PROMETHEUS);
        metrics_family(&o.w, "x_build", METRIC_INFO, NULL, "Build.");
        metrics_sample(&o.w, (const char *[]){ "version", "1.2", NULL }, 42);
        prom = out_close(&o);
        cr_expect_str_eq(prom, "# HELP x_build_info Build.\n# TYPE x_build_info gauge\n"
                               "x_build_info{version=\"1.2\"} 1\n");

        out_open(&o, METRICS_OPENMETRICS);
        metrics_family(&o.w, "x_build", METRIC_INFO, NULL, "Build.");
        metrics_sample(&o.w, (const char *[]){ "version", "1.2", NULL }, 42);
        om = out_close(&o);
        cr_expect_str_eq(om, "# HELP x_build Build.\n# TYPE x_build info\n"
                             "x_build_info{version=\"1.2\"} 1\n# EOF\n");
}

Test(openmetrics, unit_is_said_in_openmetrics_only) {
        Out o;
        _cleanup_free_ char *prom = NULL, *om = NULL;

        out_open(&o, METRICS_PROMETHEUS);
        metrics_family(&o.w, "x_rss_bytes", METRIC_GAUGE, "bytes", "RSS.");
        prom = out_close(&o);
        cr_expect_null(strstr(prom, "# UNIT"), "%s", prom);

        out_open(&o, METRICS_OPENMETRICS);
        metrics_family(&o.w, "x_rss_bytes", METRIC_GAUGE, "bytes", "RSS.");
        om = out_close(&o);
        cr_expect(strstr(om, "# UNIT x_rss_bytes bytes\n"), "%s", om);
}

Test(openmetrics, help_escapes_backslash_and_newline_and_in_openmetrics_the_quote) {
        Out o;
        _cleanup_free_ char *prom = NULL, *om = NULL;

        out_open(&o, METRICS_PROMETHEUS);
        metrics_family(&o.w, "x", METRIC_GAUGE, NULL, "a\\b\nc \"d\"");
        prom = out_close(&o);
        cr_expect(strstr(prom, "# HELP x a\\\\b\\nc \"d\"\n"), "%s", prom);

        out_open(&o, METRICS_OPENMETRICS);
        metrics_family(&o.w, "x", METRIC_GAUGE, NULL, "a\\b\nc \"d\"");
        om = out_close(&o);
        cr_expect(strstr(om, "# HELP x a\\\\b\\nc \\\"d\\\"\n"), "%s", om);
}

static char *label_text(const char *value) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        cr_assert_not_null(f);
        metrics_write_label_value(f, value);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

Test(openmetrics, label_values_escape_quote_backslash_newline) {
        _cleanup_free_ char *t = label_text("a\"b\\c\nd");

        cr_expect_str_eq(t, "a\\\"b\\\\c\\nd");
}

Test(openmetrics, label_values_keep_utf8_and_replace_what_is_not_or_is_a_control) {
        _cleanup_free_ char *good = label_text("caf\xc3\xa9 \xf0\x9f\x99\x82");
        _cleanup_free_ char *bad = label_text("a\xff"
                                              "b\xc3");
        _cleanup_free_ char *ctl = label_text("a\tb\x1b[1mc\x7f");

        cr_expect_str_eq(good, "caf\xc3\xa9 \xf0\x9f\x99\x82");
        cr_expect_str_eq(bad, "a\xef\xbf\xbd"
                              "b\xef\xbf\xbd");
        cr_expect_str_eq(ctl, "a\xef\xbf\xbd"
                              "b\xef\xbf\xbd[1mc\xef\xbf\xbd");
}

Test(openmetrics, labels_are_joined_in_order) {
        Out o;
        _cleanup_free_ char *t = NULL;

        out_open(&o, METRICS_PROMETHEUS);
        metrics_family(&o.w, "x", METRIC_GAUGE, NULL, "X.");
        metrics_sample(&o.w, (const char *[]){ "node", "0", "cgroup", "a/\"b\"", NULL }, 1);
        t = out_close(&o);
        cr_expect(strstr(t, "\nx{node=\"0\",cgroup=\"a/\\\"b\\\"\"} 1\n"), "%s", t);
}

Test(openmetrics, numbers_are_integers_when_whole_else_the_shortest_exact_decimal) {
        Out o;
        _cleanup_free_ char *t = NULL;

        out_open(&o, METRICS_PROMETHEUS);
        metrics_family(&o.w, "x", METRIC_GAUGE, NULL, "X.");
        metrics_sample(&o.w, (const char *[]){ "v", "int", NULL }, 1796459473);
        metrics_sample(&o.w, (const char *[]){ "v", "frac", NULL }, 0.1);
        metrics_sample(&o.w, (const char *[]){ "v", "usec", NULL }, 1796459473.153795);
        metrics_sample(&o.w, (const char *[]){ "v", "neg", NULL }, -2.5);
        metrics_sample(&o.w, (const char *[]){ "v", "nan", NULL }, NAN);
        metrics_sample(&o.w, (const char *[]){ "v", "inf", NULL }, -INFINITY);
        t = out_close(&o);
        cr_expect(strstr(t, "x{v=\"int\"} 1796459473\n"), "%s", t);
        cr_expect(strstr(t, "x{v=\"frac\"} 0.1\n"), "%s", t);
        cr_expect(strstr(t, "x{v=\"usec\"} 1796459473.153795\n"), "%s", t);
        cr_expect(strstr(t, "x{v=\"neg\"} -2.5\n"), "%s", t);
        cr_expect(strstr(t, "x{v=\"nan\"} NaN\n"), "%s", t);
        cr_expect(strstr(t, "x{v=\"inf\"} -Inf\n"), "%s", t);
}

Test(openmetrics, histogram_buckets_are_cumulative_up_to_inf_with_sum_and_count) {
        static const double bounds[] = { 0.001, 0.01 };
        MetricsHistogram h = { .bounds = bounds, .n_bounds = 2 };
        Out o;
        _cleanup_free_ char *t = NULL;

        metrics_histogram_observe(&h, 0.0005);
        metrics_histogram_observe(&h, 0.001); /* le: on the bound counts in it */
        metrics_histogram_observe(&h, 0.005);
        metrics_histogram_observe(&h, 2);
        cr_expect_eq(h.counts[0], 2);
        cr_expect_eq(h.counts[1], 1);
        cr_expect_eq(h.counts[2], 1);
        out_open(&o, METRICS_OPENMETRICS);
        metrics_family(&o.w, "x_seconds", METRIC_HISTOGRAM, "seconds", "X.");
        metrics_histogram(&o.w, (const char *[]){ "a", "b", NULL }, &h);
        t = out_close(&o);
        cr_expect_str_eq(t, "# HELP x_seconds X.\n# TYPE x_seconds histogram\n"
                            "# UNIT x_seconds seconds\n"
                            "x_seconds_bucket{a=\"b\",le=\"0.001\"} 2\n"
                            "x_seconds_bucket{a=\"b\",le=\"0.01\"} 3\n"
                            "x_seconds_bucket{a=\"b\",le=\"+Inf\"} 4\n"
                            "x_seconds_sum{a=\"b\"} 2.0065\n"
                            "x_seconds_count{a=\"b\"} 4\n# EOF\n");
}

Test(openmetrics, names_follow_the_data_model) {
        cr_expect(metrics_name_valid("cgbalance_moves", false));
        cr_expect(metrics_name_valid("a:b_c9", false));
        cr_expect_not(metrics_name_valid("a:b", true), "no colon in a label name");
        cr_expect(metrics_name_valid("_x", true));
        cr_expect_not(metrics_name_valid("9x", false));
        cr_expect_not(metrics_name_valid("a-b", false));
        cr_expect_not(metrics_name_valid("", false));
        cr_expect_not(metrics_name_valid(NULL, true));
}

Test(openmetrics, a_write_error_is_returned) {
        MetricsWriter w = { .f = fopen("/dev/full", "w"), .format = METRICS_OPENMETRICS };

        cr_assert_not_null(w.f);
        metrics_family(&w, "x", METRIC_GAUGE, NULL, "X.");
        metrics_sample(&w, NULL, 1);
        cr_expect_eq(metrics_end(&w), -EIO);
        fclose(w.f);
}
