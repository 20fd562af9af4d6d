/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen kernbench: the --jobs parser, the statistics and the row, then the real binary on the
 * quick tree: the seed's table, figures that make sense, the JSON the same as the table, nothing
 * left behind, SIGINT in the middle, bad values refused before anything starts.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernbench.h"
#include "load.h"
#include "macro.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- --jobs */

Test(kernbench_jobs, keywords_follow_the_cpus) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0;

        cr_assert_eq(kernbench_parse_jobs("half,cpus,4xcpus,unbounded", 6, &v, &n, NULL), 0);
        cr_assert_eq(n, 4);
        cr_expect_eq(v[0], 3);
        cr_expect_eq(v[1], 6);
        cr_expect_eq(v[2], 24);
        cr_expect_eq(v[3], 0);
}

Test(kernbench_jobs, half_of_one_cpu_is_one) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0;

        cr_assert_eq(kernbench_parse_jobs("half", 1, &v, &n, NULL), 0);
        cr_assert_eq(n, 1);
        cr_expect_eq(v[0], 1);
}

Test(kernbench_jobs, numbers_in_order_with_zero_unbounded) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0;

        cr_assert_eq(kernbench_parse_jobs("8,0,2,cpus,4096", 2, &v, &n, NULL), 0);
        cr_assert_eq(n, 5);
        cr_expect_eq(v[0], 8);
        cr_expect_eq(v[1], 0);
        cr_expect_eq(v[2], 2);
        cr_expect_eq(v[3], 2);
        cr_expect_eq(v[4], 4096);
}

Test(kernbench_jobs, bad_items_are_refused_with_their_offset) {
        static const struct {
                const char *s;
                int r;
                size_t pos;
        } bad[] = {
                { "", -EINVAL, 0 },     { "x", -EINVAL, 0 },
                { "2,,3", -EINVAL, 2 }, { "half,", -EINVAL, 5 },
                { "cpu", -EINVAL, 0 },  { "4,-2", -EINVAL, 2 },
                { "4097", -ERANGE, 0 }, { "2,99999999999", -ERANGE, 2 },
                { "HALF", -EINVAL, 0 }, { " 2", -EINVAL, 0 },
                { "2x", -EINVAL, 0 },   { "4xcpus2", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                unsigned *v = NULL;
                size_t n = 0, pos = 999;

                cr_expect_eq(kernbench_parse_jobs(bad[i].s, 4, &v, &n, &pos), bad[i].r, "\"%s\"",
                             bad[i].s);
                cr_expect_eq(pos, bad[i].pos, "\"%s\": at %zu", bad[i].s, pos);
                cr_expect_null(v, "\"%s\"", bad[i].s);
        }
}

/* ---- statistics and the row */

Test(kernbench_stats, mean_and_sample_stddev) {
        static const double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
        double mean, sd;

        kernbench_mean_stddev(v, ELEMENTSOF(v), &mean, &sd);
        cr_expect_float_eq(mean, 5.0, 1e-12);
        /* sum of squares 32 over n - 1 = 7 */
        cr_expect_float_eq(sd, sqrt(32.0 / 7.0), 1e-12);
        kernbench_mean_stddev(v, 1, &mean, &sd);
        cr_expect_float_eq(mean, 2.0, 1e-12);
        cr_expect_float_eq(sd, 0.0, 1e-12);
        kernbench_mean_stddev(v, 0, &mean, &sd);
        cr_expect_float_eq(mean, 0.0, 1e-12);
        cr_expect_float_eq(sd, 0.0, 1e-12);
}

Test(kernbench_stats, row_of_runs) {
        static const JobResult runs[] = {
                { .elapsed_usec = 2000000,
                  .user_usec = 3000000,
                  .sys_usec = 1000000,
                  .vol_ctxsw = 100,
                  .invol_ctxsw = 50 },
                { .elapsed_usec = 4000000,
                  .user_usec = 5000000,
                  .sys_usec = 1000000,
                  .vol_ctxsw = 200,
                  .invol_ctxsw = 150 },
        };
        KernbenchRow row;

        kernbench_row(runs, 2, 4, &row);
        cr_expect_eq(row.jobs, 4);
        cr_expect_eq(row.runs, 2);
        cr_expect_float_eq(row.elapsed_s.mean, 3.0, 1e-9);
        cr_expect_float_eq(row.elapsed_s.stddev, sqrt(2.0), 1e-9);
        cr_expect_float_eq(row.user_s.mean, 4.0, 1e-9);
        cr_expect_float_eq(row.sys_s.mean, 1.0, 1e-9);
        cr_expect_float_eq(row.sys_s.stddev, 0.0, 1e-9);
        /* (3 + 1) / 2 = 200%, (5 + 1) / 4 = 150% */
        cr_expect_float_eq(row.cpu_pct.mean, 175.0, 1e-9);
        cr_expect_float_eq(row.cpu_pct.stddev, sqrt(1250.0), 1e-9);
        /* voluntary + involuntary: 150 and 350 */
        cr_expect_float_eq(row.ctxsw.mean, 250.0, 1e-9);
}

static char *format(const char *label, const KernbenchRow *row) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        cr_assert(f);
        if (row)
                kernbench_format_row(f, label, row);
        else
                kernbench_format_header(f);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

Test(kernbench_format, header_and_rows_line_up) {
        KernbenchRow row = {
                .jobs = 8,
                .runs = 5,
                .elapsed_s = { 29.574, 0.214 },
                .user_s = { 284.922, 1.5 },
                .sys_s = { 84.542, 0.3 },
                .cpu_pct = { 1249.04, 3.14 },
                .ctxsw = { 81234.4, 210.2 },
        };
        _cleanup_free_ char *h = format(NULL, NULL);
        _cleanup_free_ char *r = format("ingoI50B10", &row);
        _cleanup_free_ char *u = NULL;

        cr_expect_str_eq(h, "                          Jobs           Elapsed              User"
                            "            System             CPU      ctx-switches\n");
        cr_expect_str_eq(r, "          ingoI50B10         8    29.574s (0.21)   284.922s (1.50)"
                            "    84.542s (0.30)   1249.0% (3.1)       81234 (210)\n");
        row.jobs = 0;
        u = format("stock59", &row);
        cr_expect(strstr(u, "   stock59 unbounded "), "%s", u);
        cr_expect_eq(strlen(h), strlen(r), "header and row differ in width:\n%s%s", h, r);
}

/* ---- the real binary */

/* The number after "key": (searching from p), or NAN. */
static double json_after(const char *p, const char *key, const char **ret_end) {
        _cleanup_free_ char *k = NULL;
        const char *q;
        char *end;
        double v;

        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        q = strstr(p, k);
        if (!q)
                return NAN;
        v = strtod(q + strlen(k), &end);
        if (ret_end)
                *ret_end = end;
        return v;
}

/* One table cell "M[s%] (S)": mean and stddev. */
static void parse_cell(char **p, double *mean, double *sd) {
        char *end;

        *mean = strtod(*p, &end);
        cr_assert_neq(end, *p, "no number at \"%s\"", *p);
        while (*end == 's' || *end == '%')
                end++;
        cr_assert_eq(*end, ' ', "at \"%s\"", end);
        cr_assert_eq(end[1], '(', "at \"%s\"", end);
        *sd = strtod(end + 2, &end);
        cr_assert_eq(*end, ')', "at \"%s\"", end);
        *p = end + 1;
}

Test(kernbench_run, quick_tree_two_runs_table_matches_json_and_nothing_is_left, .timeout = 90) {
        static const char *const keys[] = { "elapsed_s", "user_s", "sys_s", "cpu_pct", "ctxsw" };
        static const double tol[] = { 0.0005, 0.0005, 0.0005, 0.05, 0.5 };
        _cleanup_free_ char *json_dir = NULL, *json_path = NULL, *json_arg = NULL, *json = NULL;
        Dirs d;
        Run r;
        char *line, *p;
        const char *j;
        double mean, sd;

        skip_unless_root();
        d = test_dirs();
        json_dir = make_tmpdir();
        cr_assert_gt(asprintf(&json_path, "%s/k.json", json_dir), 0);
        cr_assert_gt(asprintf(&json_arg, "--json=%s", json_path), 0);
        r = bin_run((const char *const[]){ LOADGEN, "kernbench", "--quick", "--tree-files", "2",
                                           "--jobs", "2", "--runs", "2", "--label", "mine", "--dir",
                                           d.dir, json_arg, NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_log_info("%s", r.out);
        cr_assert(strncmp(r.out, "Kernbench:\n", 11) == 0, "%s", r.out);
        cr_expect(strstr(r.out, "Elapsed") && strstr(r.out, "ctx-switches"), "%s", r.out);
        line = strstr(r.out, "mine");
        cr_assert(line, "no row: %s", r.out);
        cr_expect_null(strstr(line + 1, "mine"), "more than one row: %s", r.out);
        p = line + 4;
        cr_assert_eq(strtoul(p, &p, 10), 2, "jobs column: %s", line);
        json = read_all(json_path);
        cr_assert(strstr(json, "\"benchmark\": \"kernbench\""), "%s", json);
        j = strstr(json, "\"rows\"");
        cr_assert(j, "%s", json);
        cr_expect_eq(json_after(j, "jobs", NULL), 2);
        cr_expect(strstr(j, "\"label\": \"mine\""));
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                _cleanup_free_ char *qk = NULL;
                const char *k;
                double jm, js;

                cr_assert_gt(asprintf(&qk, "\"%s\"", keys[i]), 0);
                k = strstr(j, qk);
                while (*p == ' ')
                        p++;
                parse_cell(&p, &mean, &sd);
                cr_assert(k, "no %s in %s", keys[i], j);
                jm = json_after(k, "mean", NULL);
                js = json_after(k, "stddev", NULL);
                cr_expect_gt(mean, 0, "%s mean %f: %s", keys[i], mean, line);
                cr_expect_geq(sd, 0, "%s stddev %f", keys[i], sd);
                /* the table rounds what the JSON holds */
                cr_expect(fabs(jm - mean) <= tol[i], "%s: table %f, JSON %f", keys[i], mean, jm);
                cr_expect(fabs(js - sd) <= 0.005 + tol[i], "%s: table sd %f, JSON %f", keys[i], sd,
                          js);
        }
        /* plausible: the quick tree builds in seconds and keeps at most 2 CPUs busy */
        mean = json_after(j, "mean", NULL);
        cr_expect(mean > 0.2 && mean < 60, "elapsed %f s", mean);
        mean = json_after(strstr(j, "cpu_pct"), "mean", NULL);
        cr_expect(mean > 20 && mean < 100.0 * (double) sysconf(_SC_NPROCESSORS_ONLN) + 20,
                  "CPU %f%%", mean);
        /* two runs listed, each with its own elapsed */
        p = strstr(j, "\"runs\"");
        cr_assert(p);
        cr_expect_gt(json_after(p, "elapsed_usec", &j), 0);
        cr_expect_gt(json_after(j, "elapsed_usec", NULL), 0);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
        rm_rf(json_dir);
}

Test(kernbench_run, json_on_stdout_replaces_the_table, .timeout = 60) {
        Dirs d;
        Run r;

        skip_unless_root();
        d = test_dirs();
        r = bin_run((const char *const[]){ LOADGEN, "kernbench", "--quick", "--tree-files", "2",
                                           "--jobs", "cpus", "--runs", "1", "--quiet", "--dir",
                                           d.dir, "--json", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect_null(strstr(r.out, "Kernbench:"), "%s", r.out);
        cr_expect_eq(r.out[0], '{', "%s", r.out);
        cr_expect_eq(json_after(strstr(r.out, "\"rows\""), "jobs", NULL),
                     (double) sysconf(_SC_NPROCESSORS_ONLN));
        cr_expect_str_empty(r.err);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(kernbench_run, sigint_mid_build_ends_everything_and_leaves_nothing, .timeout = 60) {
        _cleanup_free_ char *err = NULL;
        uint64_t t0 = now_usec();
        Dirs d;
        Run r = { 0 };

        skip_unless_root();
        d = test_dirs();
        bin_start(&r, (const char *const[]){ LOADGEN, "kernbench", "--quick", "--jobs", "2",
                                             "--runs", "3", "--dir", d.dir, NULL });
        while (now_usec() - t0 < 45 * 1000000u) {
                free(err);
                err = read_all(r.err_path);
                if (strstr(err, "run 1 of 3"))
                        break;
                usleep(50000);
        }
        cr_assert(strstr(err, "run 1 of 3"), "never got there: %s", err);
        usleep(1200000); /* inside the build: cc1 running */
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        bin_finish(&r);
        cr_expect(exited_with(r.status, 128 + SIGINT), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "Interrupted"), "stderr: %s", r.err);
        cr_expect_null(strstr(r.out, "default"), "a row after SIGINT: %s", r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(kernbench_run, bad_values_exit_2_before_anything_runs) {
        static const char *const bad[][3] = {
                { "--jobs", "x", "--jobs" },    { "--jobs", "2,,4", "--jobs" },
                { "--jobs", "5000", "--jobs" }, { "--jobs", "", "--jobs" },
                { "--runs", "0", "--runs" },    { "--runs", "101", "--runs" },
                { "--cpus", "999", "--cpus" },  { "--jobs", "cpu", "--jobs" },
        };
        Dirs d = test_dirs();

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = bin_run((const char *const[]){ LOADGEN, "kernbench", "--quick", bad[i][0],
                                                       bad[i][1], "--dir", d.dir, NULL });

                cr_expect(exited_with(r.status, 2), "%s %s: status %d", bad[i][0], bad[i][1],
                          r.status);
                cr_expect(strstr(r.err, bad[i][2]), "%s %s: %s", bad[i][0], bad[i][1], r.err);
                cr_expect_str_empty(r.out, "%s %s", bad[i][0], bad[i][1]);
                expect_clean(&r, &d);
                bin_run_done(&r);
        }
        test_dirs_done(&d);
}

Test(kernbench_run, help_names_every_option) {
        static const char *const opts[] = { "--jobs",       "--runs", "--label", "--json",
                                            "--cpus",       "--dir",  "--quick", "--quiet",
                                            "--no-sandbox", "half",   "4xcpus",  "unbounded" };
        Run r = bin_run((const char *const[]){ LOADGEN, "kernbench", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(opts); i++)
                cr_expect(strstr(r.out, opts[i]), "no %s in: %s", opts[i], r.out);
        bin_run_done(&r);
}
