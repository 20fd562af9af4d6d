/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compare_merge.c, the pure half of loadgen compare and sweep: the merge of the suites' tables
 * (from outputs the suites really printed here, at tiny sizes, labelled A and B), names, sweeps
 * and generated configs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchmark.h"
#include "compare_merge.h"
#include "config.h"
#include "macro.h"
#include "tunables.h"

static const char *const AB[] = { "A", "B" };

static bool starts_with(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static char *merge(const char *suite, const char *a, const char *b) {
        const char *outputs[] = { a, b };
        char *out = NULL;
        int r = compare_merge(compare_suite_find(suite), AB, outputs, 2, &out);

        cr_assert_eq(r, 0, "%s: %s", suite, strerror(-r));
        return out;
}

/* ---- the merge, row-style */

/* loadgen contest --quick --runs 1 --loads process_load --label=A (and B), on this machine
 * while other builds ran. */
static const char CONTEST_A[] = "no_load:\n"
                                "Kernel [runs] Time CPU% Loads LCPU% Ratio\n"
                                "A [1] 160.0 3 0 0 1.00\n"
                                "\n"
                                "process_load:\n"
                                "Kernel [runs] Time CPU% Loads LCPU% Ratio\n"
                                "A [1] 484.6 2 4116 189 3.03\n";
static const char CONTEST_B[] = "no_load:\n"
                                "Kernel [runs] Time CPU% Loads LCPU% Ratio\n"
                                "B [1] 11.4 74 0 0 1.00\n"
                                "\n"
                                "process_load:\n"
                                "Kernel [runs] Time CPU% Loads LCPU% Ratio\n"
                                "B [1] 267.3 3 2323 187 23.36\n";

Test(merge, contest_gets_a_row_per_configuration_under_each_load_as_seed_001) {
        _cleanup_free_ char *m = merge("contest", CONTEST_A, CONTEST_B);

        cr_expect_str_eq(m, "no_load:\n"
                            "Kernel [runs] Time CPU% Loads LCPU% Ratio\n"
                            "A [1] 160.0 3 0 0 1.00\n"
                            "B [1] 11.4 74 0 0 1.00\n"
                            "\n"
                            "process_load:\n"
                            "Kernel [runs] Time CPU% Loads LCPU% Ratio\n"
                            "A [1] 484.6 2 4116 189 3.03\n"
                            "B [1] 267.3 3 2323 187 23.36\n");
}

Test(merge, three_configurations_keep_their_order) {
        const char *labels[] = { "no-daemon", "default", "A" };
        const char *outputs[] = { "x:\nno-daemon 1\n", "x:\ndefault 2\n", "x:\nA 3\n" };
        _cleanup_free_ char *m = NULL;

        cr_assert_eq(compare_merge(compare_suite_find("contest"), labels, outputs, 3, &m), 0);
        cr_expect_str_eq(m, "x:\nno-daemon 1\ndefault 2\nA 3\n");
}

/* kernbench --quick -n 1 -J 1,2: the rows of one job count stand together. */
Test(merge, kernbench_interleaves_the_job_counts) {
        static const char hdr[] = "Kernbench:\n"
                                  "                          Jobs           Elapsed\n";
        _cleanup_free_ char *a = NULL, *b = NULL, *m = NULL;

        cr_assert_gt(asprintf(&a, "%s%20s %9s %17s\n%20s %9s %17s\n", hdr, "A", "1",
                              "7.542s (0.00)", "A", "2", "18.063s (0.00)"),
                     0);
        cr_assert_gt(asprintf(&b, "%s%20s %9s %17s\n%20s %9s %17s\n", hdr, "B", "1",
                              "48.180s (0.00)", "B", "2", "45.007s (0.00)"),
                     0);
        m = merge("kernbench", a, b);
        cr_expect_str_eq(m, "Kernbench:\n"
                            "                          Jobs           Elapsed\n"
                            "                   A         1     7.542s (0.00)\n"
                            "                   B         1    48.180s (0.00)\n"
                            "                   A         2    18.063s (0.00)\n"
                            "                   B         2    45.007s (0.00)\n");
}

/* reaim -u 1,2 -J 2: each configuration's steps under its name, the seed's throughput table
 * with a row each. */
Test(merge, reaim_keeps_each_configurations_steps_and_merges_the_throughput) {
        _cleanup_free_ char *m = merge("reaim",
                                       "Users JPM JPM/child JTI\n"
                                       "1 27322.40 27322.40 100\n"
                                       "2 42387.85 21193.92 92\n"
                                       "Max JPM 42387.85 at 2 users\n"
                                       "\n"
                                       "2 CPU:\n"
                                       "Kernel Throughput\n"
                                       "A 42387.85\n",
                                       "Users JPM JPM/child JTI\n"
                                       "1 37014.19 37014.19 100\n"
                                       "2 19291.05 9645.53 91\n"
                                       "Max JPM 37014.19 at 1 users\n"
                                       "\n"
                                       "2 CPU:\n"
                                       "Kernel Throughput\n"
                                       "B 37014.19\n");

        cr_expect_str_eq(m, "A:\n"
                            "Users JPM JPM/child JTI\n"
                            "1 27322.40 27322.40 100\n"
                            "2 42387.85 21193.92 92\n"
                            "Max JPM 42387.85 at 2 users\n"
                            "B:\n"
                            "Users JPM JPM/child JTI\n"
                            "1 37014.19 37014.19 100\n"
                            "2 19291.05 9645.53 91\n"
                            "Max JPM 37014.19 at 1 users\n"
                            "\n"
                            "2 CPU:\n"
                            "Kernel Throughput\n"
                            "A 42387.85\n"
                            "B 37014.19\n");
}

/* schedbench -t 2 --sweeps 5 --size 100000 --disturb-after 0 (one of its two blocks). */
Test(merge, schedbench_gives_each_configuration_its_residency_table) {
        static const char hdr[] = "Schedbench 2:\n"
                                  "                        AvgUser    Elapsed  TotalUser   "
                                  "TotalSys\n";
        static const char job[] = "Job  node00 | iSched MSched   | UserTime(s)\n";
        _cleanup_free_ char *a = NULL, *b = NULL, *m = NULL, *want = NULL;

        cr_assert_gt(asprintf(&a,
                              "%s                   A       0.01       0.02       0.01       "
                              "0.02\n%s  1     0.0 |      0      - * |        0.01\n"
                              "Mismatches: 1 of 1; disturbance: hackbench 20, Time: 17.386\n\n",
                              hdr, job),
                     0);
        cr_assert_gt(asprintf(&b,
                              "%s                   B       0.01       0.04       0.02       "
                              "0.01\n%s  1   100.0 |      0      0   |        0.01\n"
                              "Mismatches: 0 of 1; disturbance: hackbench 20, Time: 20.771\n\n",
                              hdr, job),
                     0);
        cr_assert_gt(asprintf(&want,
                              "%s                   A       0.01       0.02       0.01       0.02\n"
                              "                   B       0.01       0.04       0.02       0.01\n"
                              "A:\n%s  1     0.0 |      0      - * |        0.01\n"
                              "Mismatches: 1 of 1; disturbance: hackbench 20, Time: 17.386\n"
                              "B:\n%s  1   100.0 |      0      0   |        0.01\n"
                              "Mismatches: 0 of 1; disturbance: hackbench 20, Time: 20.771\n\n",
                              hdr, job, job),
                     0);
        m = merge("schedbench", a, b);
        cr_expect_str_eq(m, want);
}

/* ---- column-style and prefixed */

/* hackbench -g 1,2 -l 5 --label=A: seed 004's tab-separated columns. */
Test(merge, hackbench_gets_a_column_per_configuration_as_seed_004) {
        _cleanup_free_ char *m = merge("hackbench",
                                       "Hackbench:\tA\n"
                                       "1 groups: Time: 0.078\n"
                                       "2 groups: Time: 0.194\n",
                                       "Hackbench:\tB\n"
                                       "1 groups: Time: 0.765\n"
                                       "2 groups: Time: 0.904\n");

        cr_expect_str_eq(m, "Hackbench:\tA\tB\n"
                            "1 groups: Time:\t0.078\t0.765\n"
                            "2 groups: Time:\t0.194\t0.904\n");
}

/* lat_ctx -t 2,4 -s 0,4: seed 000's "size=0k ovr=X ovr=Y and blocks kept apart. */
Test(merge, lat_ctx_gets_a_column_per_configuration_as_seed_000) {
        _cleanup_free_ char *m = merge("lat_ctx",
                                       "Size/# tasks A\n\"size=0k ovr=2.98\n2 6.64\n4 14.21\n\n"
                                       "\"size=4k ovr=2.96\n2 7.11\n4 10.59\n",
                                       "Size/# tasks B\n\"size=0k ovr=3.06\n2 8.30\n4 14.11\n\n"
                                       "\"size=4k ovr=2.73\n2 5.11\n4 10.97\n");

        cr_expect_str_eq(m, "Size/# tasks A B\n"
                            "\"size=0k ovr=2.98 ovr=3.06\n"
                            "2 6.64 8.30\n"
                            "4 14.21 14.11\n"
                            "\n"
                            "\"size=4k ovr=2.96 ovr=2.73\n"
                            "2 7.11 5.11\n"
                            "4 10.59 10.97\n");
}

Test(merge, equal_values_are_still_two_columns) {
        _cleanup_free_ char *m = merge("reflex", "# tasks A\n2 6.500\n", "# tasks B\n2 6.500\n");

        cr_expect_str_eq(m, "# tasks A B\n2 6.500 6.500\n");
}

Test(merge, chat_rows_keep_their_words) {
        _cleanup_free_ char *m = merge("chat", "Configuration Parms A\n1 rooms, 5 messages 10669\n",
                                       "Configuration Parms B\n1 rooms, 5 messages 27933\n");

        cr_expect_str_eq(m, "Configuration Parms A B\n1 rooms, 5 messages 10669 27933\n");
}

/* pipe -l 2000: it prints no label, so each row is named in front of its line. */
Test(merge, pipe_names_each_configurations_line) {
        _cleanup_free_ char *m = merge(
                "pipe",
                "# 2000 round trips between two processes\n"
                "same   Total time:    0.038 [sec]      18.867500 usecs/op       53001 ops/sec\n"
                "cross  Total time:    0.360 [sec]     179.880500 usecs/op        5559 ops/sec\n",
                "# 2000 round trips between two processes\n"
                "same   Total time:    0.038 [sec]      18.810000 usecs/op       53163 ops/sec\n"
                "cross  Total time:    0.260 [sec]     129.881000 usecs/op        7699 ops/sec\n");

        cr_expect_str_eq(
                m,
                "# 2000 round trips between two processes\n"
                "A same   Total time:    0.038 [sec]      18.867500 usecs/op       53001 ops/sec\n"
                "B same   Total time:    0.038 [sec]      18.810000 usecs/op       53163 ops/sec\n"
                "A cross  Total time:    0.360 [sec]     179.880500 usecs/op        5559 ops/sec\n"
                "B cross  Total time:    0.260 [sec]     129.881000 usecs/op        7699 "
                "ops/sec\n");
}

/* placement: the heading and the column names once, each task's row and the total per row. */
Test(merge, placement_names_each_configurations_line) {
        _cleanup_free_ char *m =
                merge("placement",
                      "# 1 tasks (0 holding 256 MiB) started on node 0, left pinned, 1.0 s\n"
                      "Task  Kind  Mem(MiB) Start  End  Moves  Distance  Wait(s)  Local%\n"
                      "0     cpu          0     0    0      0         0     0.50       -\n"
                      "Total: tasks per node at the end 1/0, 0 cross-node moves\n",
                      "# 1 tasks (0 holding 256 MiB) started on node 0, left pinned, 1.0 s\n"
                      "Task  Kind  Mem(MiB) Start  End  Moves  Distance  Wait(s)  Local%\n"
                      "0     cpu          0     0    1      1        20     0.10       -\n"
                      "Total: tasks per node at the end 0/1, 1 cross-node moves\n");

        cr_expect_str_eq(m, "# 1 tasks (0 holding 256 MiB) started on node 0, left pinned, 1.0 s\n"
                            "Task  Kind  Mem(MiB) Start  End  Moves  Distance  Wait(s)  Local%\n"
                            "A 0     cpu          0     0    0      0         0     0.50       -\n"
                            "B 0     cpu          0     0    1      1        20     0.10       -\n"
                            "A Total: tasks per node at the end 1/0, 0 cross-node moves\n"
                            "B Total: tasks per node at the end 0/1, 1 cross-node moves\n");
}

/* ---- outputs of different shapes */

Test(merge, outputs_of_different_shapes_are_refused_and_printed_apart) {
        static const struct {
                const char *suite, *a, *b;
        } cases[] = {
                /* a run cut short: one block fewer */
                { "contest", CONTEST_A, "no_load:\nKernel [runs] Time\nB [1] 11.4\n" },
                /* a label that is also a word of the table */
                { "reaim", "Users JPM\n1 2\n\nKernel Throughput\nA 5\n",
                  "Users JPM\n1 2\n\nKernel Throughput\n1 5\n" },
                /* a job count missing */
                { "kernbench", "K:\n A 1 x\n A 2 y\n", "K:\n B 1 x\n" },
                { "hackbench", "Hackbench:\tA\n1 groups: Time: 0.1\n", "Hackbench:\tB\n" },
                { "hackbench", "Hackbench:\tA\n1 groups: Time: 0.1\n",
                  "Hackbench:\tB\n2 groups: Time: 0.1\n" },
                { "lat_ctx", "Size/# tasks A\n\n2 1.0\n", "Size/# tasks B\n2 1.0\n\n" },
                { "pipe", "# x\nsame 1\n", "# x\n" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const CompareSuite *s = compare_suite_find(cases[i].suite);
                const char *outputs[] = { cases[i].a, cases[i].b };
                _cleanup_free_ char *m = NULL, *t = NULL, *want = NULL;

                cr_expect_eq(compare_merge(s, AB, outputs, 2, &m), -EBADMSG, "case %zu", i);
                cr_assert_eq(compare_table(s, AB, outputs, 2, &t), 0);
                cr_assert_gt(asprintf(&want, "== A\n%s%s\n== B\n%s", cases[i].a,
                                      cases[i].a[strlen(cases[i].a) - 1] == '\n' ? "" : "\n",
                                      cases[i].b),
                             0);
                cr_expect_str_eq(t, want, "case %zu", i);
        }
}

Test(merge, one_configuration_is_its_own_table) {
        const char *outputs[] = { CONTEST_A };
        _cleanup_free_ char *m = NULL;

        cr_assert_eq(compare_merge(compare_suite_find("contest"), AB, outputs, 1, &m), 0);
        cr_expect_str_eq(m, CONTEST_A);
}

Test(suites, every_benchmark_and_contest_can_be_compared) {
        cr_expect(compare_suite_find("contest"));
        for (size_t i = 0; i < n_benchmarks; i++)
                cr_expect(compare_suite_find(benchmarks[i].name), "%s has no compare layout",
                          benchmarks[i].name);
        cr_expect_null(compare_suite_find("run"));
        cr_expect_null(compare_suite_find("compare"));
}

/* ---- names, sweeps, configs */

Test(names, a_config_row_is_its_base_name_without_conf) {
        static const struct {
                const char *path, *name;
        } ok[] = {
                { "A.conf", "A" },    { "/etc/cgbalance/B.conf", "B" }, { "dir/x.y.conf", "x.y" },
                { "noext", "noext" }, { "a.conf.bak", "a.conf.bak" },   { "./.conf2", ".conf2" },
        };
        static const char *const bad[] = { "", ".conf", "dir/", "dir/.conf" };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                _cleanup_free_ char *n = NULL;

                cr_assert_eq(compare_row_name(ok[i].path, &n), 0, "%s", ok[i].path);
                cr_expect_str_eq(n, ok[i].name);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *n = NULL;

                cr_expect_eq(compare_row_name(bad[i], &n), -EINVAL, "\"%s\"", bad[i]);
                cr_expect_null(n);
        }
}

Test(names, sweeps_split_into_a_key_and_its_values) {
        static const char *const bad[] = { "",       "key",      "=1,2", "key=", "key=1,",
                                           "key=,1", "key=1,,2", "=",    "key=," };
        _cleanup_free_ char *key = NULL;
        char **values = NULL;

        cr_assert_eq(compare_parse_sweep("balance.imbalance_pct=110,1min 30s,a=b", &key, &values),
                     0);
        cr_expect_str_eq(key, "balance.imbalance_pct");
        cr_expect_str_eq(values[0], "110");
        cr_expect_str_eq(values[1], "1min 30s");
        cr_expect_str_eq(values[2], "a=b");
        cr_expect_null(values[3]);
        for (size_t i = 0; values[i]; i++)
                free(values[i]);
        free(values);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *k = NULL, **v = NULL;

                cr_expect_eq(compare_parse_sweep(bad[i], &k, &v), -EINVAL, "\"%s\"", bad[i]);
                cr_expect_null(k);
                cr_expect_null(v);
        }
}

static char *printed(const Tunables *t) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        cr_assert(f);
        cr_assert_eq(config_print(&tunables_schema, t, f), 0);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

/* The generated file loads back, through the daemon's parser, to the same configuration. */
Test(config, the_generated_text_loads_back_to_the_same_tunables) {
        _cleanup_(tunables_free) Tunables t = { 0 }, back = { 0 };
        _cleanup_free_ char *text = NULL, *p1 = NULL, *p2 = NULL;
        ConfigError e = { 0 };

        cr_assert_eq(tunables_defaults(&t), 0);
        cr_assert_eq(config_set_one(&tunables_schema, &t, "imbalance_pct", "131", &e), 0);
        cr_assert_eq(config_set_one(&tunables_schema, &t, "exclude_comms", "a* b", &e), 0);
        cr_assert_eq(config_set_one(&tunables_schema, &t, "node_imbalance_hold", "1min 30s", &e),
                     0);
        cr_assert_eq(config_set_one(&tunables_schema, &t, "state_directory", "/tmp/x y", &e), 0);
        cr_assert_eq(compare_config_text(&t, "line one\nline two", &text), 0);
        cr_expect(starts_with(text, "# line one\n# line two\n\n[daemon]\ninterval = 1s\n"), "%s",
                  text);
        cr_expect(strstr(text, "\n[balance]\nimbalance_pct = 131\n"), "%s", text);
        cr_expect(strstr(text, "\nexclude_cgroups =\n"), "%s", text);
        cr_assert_eq(config_load_string(&tunables_schema, "gen", text, strlen(text), &back, &e), 0,
                     "%s", e.message);
        p1 = printed(&t);
        p2 = printed(&back);
        cr_expect_str_eq(p2, p1);
        cr_expect(strstr(p2, "balance.node_imbalance_hold=90s\n"), "%s", p2);
}
