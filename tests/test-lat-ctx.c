/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen lat_ctx and loadgen reflex (seed 000): the pure arithmetic, parsing and rows, then the
 * real binary at tiny sizes in its sandbox: the seed's shape, plausible figures, the JSON the
 * same as the table, nothing left behind (also after SIGINT), bad values refused up front.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lat_ctx.h"
#include "load.h"
#include "macro.h"
#include "reflex.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- lat_ctx: pure */

Test(lat_ctx, per_switch_divides_by_trips_and_tasks_then_subtracts_the_overhead) {
        /* 1000 trips of a ring of 4 in 20000 us: 5 us a hop, 1.5 of them overhead. */
        cr_expect_float_eq(lat_ctx_per_switch_usec(20000, 1000, 4, 1.5), 3.5, 1e-9);
        cr_expect_float_eq(lat_ctx_per_switch_usec(20000, 1000, 2, 0), 10.0, 1e-9);
        /* Cheaper than the overhead: negative, as LMbench prints it, not clamped. */
        cr_expect_float_eq(lat_ctx_per_switch_usec(1000, 1000, 1, 2.0), -1.0, 1e-9);
        cr_expect_float_eq(lat_ctx_per_switch_usec(1000, 0, 2, 1.0), 0.0, 1e-9);
        cr_expect_float_eq(lat_ctx_per_switch_usec(1000, 10, 0, 1.0), 0.0, 1e-9);
}

Test(lat_ctx, iterations_scale_the_trial_to_enough_with_a_margin) {
        /* 5 trips in 1000 us; 20000 us wanted: 100 trips, 125 with the 25% margin. */
        cr_expect_eq(lat_ctx_iterations_for(5, 1000, 20000, 5), 125);
        /* A trial already longer than enough: never fewer than the trial, nor than min. */
        cr_expect_eq(lat_ctx_iterations_for(5, 100000, 20000, 5), 5);
        cr_expect_eq(lat_ctx_iterations_for(1, 100000, 20000, 7), 7);
        /* A 0 us trial counts as 1 us rather than dividing by zero. */
        cr_expect_eq(lat_ctx_iterations_for(10, 0, 1000, 1), 12500);
        cr_expect_eq(lat_ctx_iterations_for(UINT32_MAX, 0, 1000000, 1), UINT32_MAX);
}

Test(lat_ctx, median_of_odd_even_and_empty) {
        double odd[] = { 5, 1, 4, 2, 3 }, even[] = { 8, 2, 6, 4 }, one[] = { 7 };

        cr_expect_float_eq(lat_ctx_median(odd, ELEMENTSOF(odd)), 3.0, 1e-12);
        cr_expect_float_eq(odd[0], 1.0, 1e-12); /* sorted in place: [0] is the min */
        cr_expect_float_eq(odd[4], 5.0, 1e-12);
        cr_expect_float_eq(lat_ctx_median(even, ELEMENTSOF(even)), 5.0, 1e-12);
        cr_expect_float_eq(lat_ctx_median(one, 1), 7.0, 1e-12);
        cr_expect(isnan(lat_ctx_median(NULL, 0)));
}

Test(lat_ctx, min_is_the_least_wherever_it_is) {
        static const double v[] = { 3, 9, -2, 7 }, first[] = { -5, 1, 2 }, last[] = { 4, 3, 1 };

        cr_expect_float_eq(lat_ctx_min(v, ELEMENTSOF(v)), -2.0, 1e-12);
        cr_expect_float_eq(lat_ctx_min(first, ELEMENTSOF(first)), -5.0, 1e-12);
        cr_expect_float_eq(lat_ctx_min(last, ELEMENTSOF(last)), 1.0, 1e-12);
        cr_expect(isnan(lat_ctx_min(NULL, 0)));
}

Test(lat_ctx, header_and_row_are_the_seeds) {
        char buf[64];

        lat_ctx_format_header(buf, sizeof buf, 0, 2.3);
        cr_expect_str_eq(buf, "\"size=0k ovr=2.30\n");
        lat_ctx_format_header(buf, sizeof buf, 64, 26.005);
        cr_expect_str_eq(buf, "\"size=64k ovr=26.00\n"); /* 26.005 is 26.00499... in binary */
        lat_ctx_format_row(buf, sizeof buf, 2, 2.789);
        cr_expect_str_eq(buf, "2 2.79\n");
        lat_ctx_format_row(buf, sizeof buf, 256, 238.614);
        cr_expect_str_eq(buf, "256 238.61\n");
        lat_ctx_format_row(buf, sizeof buf, 4, -0.5);
        cr_expect_str_eq(buf, "4 -0.50\n");
}

/* ---- reflex: pure */

Test(reflex, active_parses_counts_and_fractions) {
        static const struct {
                const char *s;
                ReflexActive want;
        } good[] = {
                { "1/2", { .num = 1, .den = 2 } },   { "2/3", { .num = 2, .den = 3 } },
                { "1/1", { .num = 1, .den = 1 } },   { "4", { .count = 4 } },
                { "1000000", { .count = 1000000 } },
        };
        static const char *const bad[] = { "",    "0",   "0/2", "3/2",     "-1",
                                           "+1",  "1/",  "/2",  "1/0",     "1/2x",
                                           "abc", "1.5", " 1",  "2000000", "1/2/3" };

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                ReflexActive a = { 99, 99, 99 };

                cr_expect_eq(reflex_parse_active(good[i].s, &a), 0, "%s", good[i].s);
                cr_expect(a.count == good[i].want.count && a.num == good[i].want.num &&
                                  a.den == good[i].want.den,
                          "%s: %u %u/%u", good[i].s, a.count, a.num, a.den);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ReflexActive a = { 99, 99, 99 };

                cr_expect_eq(reflex_parse_active(bad[i], &a), -EINVAL, "\"%s\"", bad[i]);
                cr_expect_eq(a.count, 99, "\"%s\" wrote its output", bad[i]);
        }
}

Test(reflex, active_sets_are_half_by_default_at_least_one_at_most_all) {
        ReflexActive half = REFLEX_ACTIVE_DEFAULT, third = { .num = 1, .den = 3 },
                     four = { .count = 4 };

        cr_expect_eq(reflex_active_sets(&half, 2), 1);
        cr_expect_eq(reflex_active_sets(&half, 128), 64);
        cr_expect_eq(reflex_active_sets(&half, 7), 3);
        cr_expect_eq(reflex_active_sets(&third, 2), 1); /* 0 rounded down, then at least 1 */
        cr_expect_eq(reflex_active_sets(&third, 9), 3);
        cr_expect_eq(reflex_active_sets(&four, 8), 4);
        cr_expect_eq(reflex_active_sets(&four, 2), 2); /* never more sets than tasks */
}

Test(reflex, tasks_are_dealt_into_sets_evenly) {
        unsigned total = 0;

        cr_expect_eq(reflex_set_size(5, 2, 0), 3);
        cr_expect_eq(reflex_set_size(5, 2, 1), 2);
        cr_expect_eq(reflex_set_size(128, 64, 63), 2);
        cr_expect_eq(reflex_set_size(5, 2, 2), 0);
        cr_expect_eq(reflex_set_size(5, 0, 0), 0);
        for (unsigned i = 0; i < 7; i++)
                total += reflex_set_size(100, 7, i);
        cr_expect_eq(total, 100);
}

Test(reflex, round_trip_time_loops_and_row) {
        char buf[64];

        cr_expect_float_eq(reflex_round_trip_usec(1000000, 250000), 4.0, 1e-12);
        cr_expect(isnan(reflex_round_trip_usec(1000000, 0)));
        cr_expect_eq(reflex_loops_for(1000, 100, 2), 20);
        cr_expect_eq(reflex_loops_for(1000, 0, 3), 3000);
        cr_expect_eq(reflex_loops_for(1, 1000, 1), 1); /* never 0 loops */
        reflex_format_row(buf, sizeof buf, 2, 6.5214);
        cr_expect_str_eq(buf, "2 6.521\n");
        reflex_format_row(buf, sizeof buf, 128, 26.2336);
        cr_expect_str_eq(buf, "128 26.234\n"); /* rounded, not cut */
}

/* ---- the binary: helpers */

/* The n-th line of s (0-based) into buf, without its newline; false past the end. */
static bool nth_line(const char *s, size_t n, char *buf, size_t size) {
        for (; n > 0; n--) {
                s = strchr(s, '\n');
                if (!s)
                        return false;
                s++;
        }
        if (*s == '\0')
                return false;
        size_t len = strcspn(s, "\n");
        cr_assert_lt(len, size);
        memcpy(buf, s, len);
        buf[len] = '\0';
        return true;
}

/* The number after "key": in the object of s starting at *pos, moving *pos past it. */
static double json_num_after(const char *s, const char **pos, const char *key) {
        _cleanup_free_ char *k = NULL;
        const char *p;
        double v;

        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        p = strstr(*pos, k);
        cr_assert(p, "no %s after offset %td in %s", key, *pos - s, s);
        cr_assert_eq(sscanf(p + strlen(k), "%lf", &v), 1, "%s", p);
        *pos = p + strlen(k);
        return v;
}

static Run run_in(const Dirs *d, const char *const *args) {
        const char *argv[32] = { LOADGEN };
        size_t n = 1;

        for (; *args; args++)
                argv[n++] = *args;
        argv[n++] = "--dir";
        argv[n++] = d->dir;
        argv[n] = NULL;
        cr_assert_lt(n, ELEMENTSOF(argv));
        return bin_run(argv);
}

/* ---- lat_ctx: the binary */

Test(lat_ctx, tiny_run_prints_the_seed_shape_with_the_json_beside_and_leaves_nothing,
     .timeout = 60) {
        static const unsigned sizes[] = { 0, 4 }, tasks[] = { 2, 4 };
        _cleanup_free_ char *jdir = NULL, *jpath = NULL, *json = NULL;
        const char *pos;
        char line[128];
        size_t ln = 0;
        Dirs d;
        Run r;

        skip_unless_root();
        d = test_dirs();
        jdir = make_tmpdir();
        cr_assert_gt(asprintf(&jpath, "%s/lat_ctx.json", jdir), 0);
        {
                _cleanup_free_ char *jarg = NULL;

                cr_assert_gt(asprintf(&jarg, "--json=%s", jpath), 0);
                r = run_in(&d, (const char *const[]){ "lat_ctx", "--tasks", "2,4", "--size", "0,4",
                                                      jarg, NULL });
        }
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        json = read_all(jpath);
        pos = strstr(json, "\"rows\"");
        cr_assert(pos, "%s", json);

        cr_assert(nth_line(r.out, ln++, line, sizeof line));
        cr_expect_str_eq(line, "Size/# tasks default");
        for (size_t si = 0; si < ELEMENTSOF(sizes); si++) {
                unsigned kb;
                double ovr;
                char tail;

                if (si > 0) {
                        cr_assert(nth_line(r.out, ln++, line, sizeof line), "%s", r.out);
                        cr_expect_str_eq(line, "", "no blank line between sizes: %s", r.out);
                }
                cr_assert(nth_line(r.out, ln++, line, sizeof line), "%s", r.out);
                cr_assert_eq(sscanf(line, "\"size=%uk ovr=%lf%c", &kb, &ovr, &tail), 2,
                             "header \"%s\"", line);
                cr_expect_eq(kb, sizes[si]);
                cr_expect(ovr > 0 && ovr < 1e6, "ovr %f", ovr);
                for (size_t ti = 0; ti < ELEMENTSOF(tasks); ti++) {
                        unsigned n;
                        double usec, jusec, jovr, jsum;
                        char twodec[32];

                        cr_assert(nth_line(r.out, ln++, line, sizeof line), "%s", r.out);
                        cr_assert_eq(sscanf(line, "%u %lf%c", &n, &usec, &tail), 2, "row \"%s\"",
                                     line);
                        cr_expect_eq(n, tasks[ti]);
                        /* Exactly two decimals, as LMbench's %.2f. */
                        snprintf(twodec, sizeof twodec, "%u %.2f", n, usec);
                        cr_expect_str_eq(line, twodec);
                        cr_expect(usec > 0 && usec < 1e6, "%u tasks: %f usec per switch", n, usec);

                        cr_expect_eq(json_num_after(json, &pos, "size_kb"), sizes[si]);
                        jovr = json_num_after(json, &pos, "overhead_usec");
                        jsum = json_num_after(json, &pos, "sum_usec");
                        cr_expect_eq(json_num_after(json, &pos, "tasks"), tasks[ti]);
                        jusec = json_num_after(json, &pos, "usec");
                        cr_expect(fabs(jovr - ovr) <= 0.005 + 1e-9, "json ovr %f, table %f", jovr,
                                  ovr);
                        cr_expect(fabs(jusec - usec) <= 0.005 + 1e-9, "json usec %f, table %f",
                                  jusec, usec);
                        /* Size 0 sums nothing; 4 KB takes time to sum. */
                        cr_expect(sizes[si] == 0 ? jsum == 0 : jsum > 0, "sum_usec %f at %u KB",
                                  jsum, sizes[si]);
                }
        }
        cr_expect(!nth_line(r.out, ln, line, sizeof line), "extra line \"%s\"", line);
        cr_expect(strstr(json, "\"interrupted\": false"), "%s", json);
        cr_log_info("lat_ctx:\n%s", r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
        rm_rf(jdir);
}

Test(lat_ctx, json_alone_goes_to_stdout_with_usec, .timeout = 30) {
        const char *pos;
        Dirs d;
        Run r;

        skip_unless_root();
        d = test_dirs();
        r = run_in(&d, (const char *const[]){ "lat_ctx", "--tasks", "2", "--size", "0", "--json",
                                              NULL });
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_expect(r.out[0] == '{', "%s", r.out);
        cr_expect(!strstr(r.out, "Size/#") && !strstr(r.out, "\"size="), "table in: %s", r.out);
        cr_expect(strstr(r.out, "\"benchmark\": \"lat_ctx\""), "%s", r.out);
        pos = strstr(r.out, "\"rows\"");
        cr_assert(pos, "%s", r.out);
        cr_expect_eq(json_num_after(r.out, &pos, "tasks"), 2);
        double usec = json_num_after(r.out, &pos, "usec");
        cr_expect(usec > 0 && usec < 1e6, "usec %f", usec);
        cr_expect(strstr(r.out, "}\n"), "%s", r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

/* Starts argv, waits for `marker` on its stdout, SIGINTs it; it must end at once, say so and
 * leave nothing. The callers confine the rings to CPU 1 (--cpus 1): a token ring of many tasks in a
 * nested cpu group starves the root group's tasks on the CPUs it spans, this test's own process
 * among them, so the measured time was the test's starvation, not loadgen's stop: reflex's 128
 * threads on both CPUs took 4.8-5.4 s in 3 of 40 runs here (1 of 40 before this session's
 * changes), all 40 in 0.05 s confined to CPU 1. */
static void sigint_mid_run(const char *const argv[], const char *marker, const Dirs *d) {
        _cleanup_free_ char *out = NULL;
        uint64_t t0 = now_usec();
        Run r = { 0 };

        bin_start(&r, argv);
        while (now_usec() - t0 < 20 * 1000000u) {
                free(out);
                out = read_all(r.out_path);
                if (strstr(out, marker))
                        break;
                usleep(50000);
        }
        cr_assert(strstr(out, marker), "never got to \"%s\": %s", marker, out);
        usleep(300000); /* into the next row's processes */
        t0 = now_usec();
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        bin_finish(&r);
        cr_expect_lt(now_usec() - t0, 5000000u, "SIGINT took %llu us",
                     (unsigned long long) (now_usec() - t0));
        cr_expect(exited_with(r.status, 128 + SIGINT), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "Interrupted"), "stderr: %s", r.err);
        expect_clean(&r, d);
        bin_run_done(&r);
}

Test(lat_ctx, sigint_mid_run_ends_every_ring_and_leaves_nothing, .timeout = 60) {
        Dirs d;

        skip_unless_root();
        d = test_dirs();
        /* The 64 KB rings of 128 and 256 take seconds: SIGINT lands inside one. */
        sigint_mid_run((const char *const[]){ LOADGEN, "lat_ctx", "--tasks", "2,128,256", "--size",
                                              "64", "--cpus", "1", "--dir", d.dir, NULL },
                       "\n2 ", &d);
        test_dirs_done(&d);
}

Test(lat_ctx, too_many_tasks_are_refused_before_anything_starts) {
        Dirs d = test_dirs();
        Run r = run_in(&d, (const char *const[]){ "lat_ctx", "--tasks", "2,100000", NULL });

        cr_expect(exited_with(r.status, 2), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "lat_ctx --tasks 100000") &&
                          (strstr(r.err, "kernel.pid_max") || strstr(r.err, "kernel.threads-max") ||
                           strstr(r.err, "RLIMIT")),
                  "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(lat_ctx, bad_axes_and_options_exit_2_before_anything_runs) {
        static const char *const bad[][2] = {
                { "--tasks", "1" },   { "--tasks", "0,2" }, { "--tasks", "2-x" },
                { "--tasks", "" },    { "--tasks", "8-2" }, { "--tasks", "2-256x1" },
                { "--size", "-1" },   { "--size", "5000" }, { "--size", "4,,8" },
                { "--cpus", "4000" }, { "--bogus", "1" },
        };
        Dirs d = test_dirs();

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = run_in(&d, (const char *const[]){ "lat_ctx", bad[i][0], bad[i][1], NULL });

                cr_expect(exited_with(r.status, 2), "%s %s: status %d", bad[i][0], bad[i][1],
                          r.status);
                cr_expect(strstr(r.err, bad[i][0] + 2), "%s %s: stderr: %s", bad[i][0], bad[i][1],
                          r.err);
                cr_expect_str_empty(r.out, "%s %s", bad[i][0], bad[i][1]);
                expect_clean(&r, &d);
                bin_run_done(&r);
        }
        test_dirs_done(&d);
}

Test(lat_ctx, help_names_every_option) {
        static const char *const want[] = { "--tasks", "--size",  "--label",      "--json",
                                            "--cpus",  "--dir",   "--no-sandbox", "median",
                                            "minimum", "2-256x2", "ovr" };
        Run r = bin_run((const char *const[]){ LOADGEN, "lat_ctx", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_expect(strstr(r.out, want[i]), "no %s in: %s", want[i], r.out);
        bin_run_done(&r);
}

/* ---- reflex: the binary */

Test(reflex, tiny_run_prints_the_seed_shape_with_the_json_beside_and_leaves_nothing,
     .timeout = 60) {
        static const unsigned tasks[] = { 2, 4 };
        _cleanup_free_ char *jdir = NULL, *jpath = NULL, *jarg = NULL, *json = NULL;
        const char *pos;
        char line[128];
        Dirs d;
        Run r;

        skip_unless_root();
        d = test_dirs();
        jdir = make_tmpdir();
        cr_assert_gt(asprintf(&jpath, "%s/reflex.json", jdir), 0);
        cr_assert_gt(asprintf(&jarg, "--json=%s", jpath), 0);
        r = run_in(&d, (const char *const[]){ "reflex", "--tasks", "2,4", "--duration", "0.3",
                                              "--label", "Vanilla", jarg, NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        json = read_all(jpath);
        pos = strstr(json, "\"rows\"");
        cr_assert(pos, "%s", json);
        cr_assert(nth_line(r.out, 0, line, sizeof line));
        cr_expect_str_eq(line, "# tasks Vanilla");
        for (size_t i = 0; i < ELEMENTSOF(tasks); i++) {
                unsigned n;
                double usec, jusec, trips, elapsed;
                char tail, threedec[32];

                cr_assert(nth_line(r.out, i + 1, line, sizeof line), "%s", r.out);
                cr_assert_eq(sscanf(line, "%u %lf%c", &n, &usec, &tail), 2, "row \"%s\"", line);
                cr_expect_eq(n, tasks[i]);
                snprintf(threedec, sizeof threedec, "%u %.3f", n, usec);
                cr_expect_str_eq(line, threedec);
                cr_expect(usec > 0 && usec < 1e6, "%u tasks: %f usec", n, usec);

                cr_expect_eq(json_num_after(json, &pos, "tasks"), tasks[i]);
                cr_expect_eq(json_num_after(json, &pos, "active_sets"), tasks[i] / 2);
                jusec = json_num_after(json, &pos, "round_trip_usec");
                trips = json_num_after(json, &pos, "round_trips");
                elapsed = json_num_after(json, &pos, "elapsed_usec");
                cr_expect(fabs(jusec - usec) <= 0.0005 + 1e-9, "json %f, table %f", jusec, usec);
                cr_expect(trips > 0 && fabs(elapsed / trips - jusec) < 1e-3 * jusec + 1e-4,
                          "%f us / %f trips != %f", elapsed, trips, jusec);
                cr_expect(elapsed >= 300000, "measured only %f us", elapsed);
        }
        cr_expect(!nth_line(r.out, 3, line, sizeof line), "extra line \"%s\"", line);
        cr_log_info("reflex:\n%s", r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
        rm_rf(jdir);
}

Test(reflex, active_count_and_no_yields_run_too, .timeout = 30) {
        const char *pos;
        Dirs d;
        Run r;

        skip_unless_root();
        d = test_dirs();
        r = run_in(&d, (const char *const[]){ "reflex", "--tasks", "6", "--active", "3", "--yields",
                                              "0", "--work", "2", "--duration", "0.2", "--json",
                                              NULL });
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        pos = strstr(r.out, "\"rows\"");
        cr_assert(pos, "%s", r.out);
        cr_expect_eq(json_num_after(r.out, &pos, "tasks"), 6);
        cr_expect_eq(json_num_after(r.out, &pos, "active_sets"), 3);
        cr_expect_gt(json_num_after(r.out, &pos, "round_trip_usec"), 0);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(reflex, sigint_mid_run_ends_every_thread_and_leaves_nothing, .timeout = 60) {
        Dirs d;

        skip_unless_root();
        d = test_dirs();
        /* Past the header, the first row's threads are running for 5 s. */
        sigint_mid_run((const char *const[]){ LOADGEN, "reflex", "--tasks", "128,2", "--duration",
                                              "5", "--cpus", "1", "--dir", d.dir, NULL },
                       "# tasks", &d);
        test_dirs_done(&d);
}

Test(reflex, too_many_tasks_and_bad_values_exit_2_before_anything_runs) {
        static const char *const bad[][4] = {
                { "--tasks", "100000", "kernel.", NULL },
                { "--tasks", "1", "--tasks", NULL },
                { "--tasks", "2-x", "--tasks", NULL },
                { "--active", "3/2", "--active", NULL },
                { "--active", "0", "--active", NULL },
                { "--active", "5", "--active", NULL }, /* more than the default's 2 tasks */
                { "--work", "0", "--work", NULL },
                { "--yields", "-1", "--yields", NULL },
                { "--duration", "0", "--duration", NULL },
                { "--cpus", "4000", "--cpus", NULL },
        };
        Dirs d = test_dirs();

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = run_in(&d, (const char *const[]){ "reflex", bad[i][0], bad[i][1], NULL });

                cr_expect(exited_with(r.status, 2), "%s %s: status %d", bad[i][0], bad[i][1],
                          r.status);
                cr_expect(strstr(r.err, bad[i][2]), "%s %s: stderr: %s", bad[i][0], bad[i][1],
                          r.err);
                cr_expect_str_empty(r.out, "%s %s", bad[i][0], bad[i][1]);
                expect_clean(&r, &d);
                bin_run_done(&r);
        }
        test_dirs_done(&d);
}

Test(reflex, help_names_every_option) {
        static const char *const want[] = { "--tasks",    "--active",     "--work",  "--yields",
                                            "--duration", "--label",      "--json",  "--cpus",
                                            "--dir",      "--no-sandbox", "2-128x2", "1/2" };
        Run r = bin_run((const char *const[]){ LOADGEN, "reflex", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_expect(strstr(r.out, want[i]), "no %s in: %s", want[i], r.out);
        bin_run_done(&r);
}
