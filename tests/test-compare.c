/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen compare and sweep: the pure merge of the suites' tables (from outputs the suites
 * really printed here, at tiny sizes, labelled A and B), names, sweeps and generated configs;
 * bad arguments refused before anything runs; and real runs as root: the suite once per row,
 * cgbalanced really started for a daemon row and really stopped after it, the results JSON.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* json-c's typedef json_bool and lib/json.h's json_bool() share a name: rename the typedef. */
#define json_bool json_c_bool
#include <json-c/json.h>
#undef json_bool

#include "benchmark.h"
#include "compare.h"
#include "config.h"
#include "json.h"
#include "macro.h"
#include "runbin.h"
#include "testutil.h"
#include "tunables.h"

#define LOADGEN BUILD_DIR "/loadgen"

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

/* ---- json_raw: another program's JSON, embedded */

Test(json, raw_values_are_indented_to_their_level) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        Json j = { .f = open_memstream(&buf, &size) };

        cr_assert(j.f);
        json_begin(&j, '{');
        json_key(&j, "rows");
        json_begin(&j, '[');
        json_raw(&j, NULL, "{\n  \"a\": \"x\\ny\",\n  \"b\": [\n    1\n  ]\n}\n\n");
        json_null(&j, NULL);
        json_end(&j, ']');
        json_end(&j, '}');
        cr_assert_eq(fclose(j.f), 0);
        cr_expect_str_eq(buf, "{\n"
                              "  \"rows\": [\n"
                              "    {\n"
                              "      \"a\": \"x\\ny\",\n"
                              "      \"b\": [\n"
                              "        1\n"
                              "      ]\n"
                              "    },\n"
                              "    null\n"
                              "  ]\n"
                              "}\n");
}

/* ---- bad arguments: exit 2, naming what is wrong, before anything runs */

static void expect_refused(const char *const argv[], const char *what) {
        Run r = bin_run(argv);

        cr_expect(exited_with(r.status, 2), "%s: status %d, stderr: %s", what, r.status, r.err);
        cr_expect(strstr(r.err, what), "stderr does not name %s: %s", what, r.err);
        cr_expect_str_empty(r.out, "%s: printed %s", what, r.out);
        cr_expect_null(strstr(r.err, "Row "), "%s: a row ran: %s", what, r.err);
        bin_run_done(&r);
}

Test(args, bad_arguments_exit_2_naming_the_field) {
        _cleanup_free_ char *dir = make_tmpdir(), *bad = NULL, *same = NULL, *spaced = NULL;
        int fd;

        cr_assert_gt(asprintf(&bad, "%s/bad.conf", dir), 0);
        fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_gt(dprintf(fd, "[balance]\n\nimbalance_pct = 50\n"), 0);
        close(fd);
        cr_assert_gt(asprintf(&same, "%s/default.conf", dir), 0);
        fd = open(same, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        close(fd);
        cr_assert_gt(asprintf(&spaced, "%s/a b.conf", dir), 0);
        fd = open(spaced, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        cr_assert_geq(fd, 0);
        close(fd);

        expect_refused((const char *const[]){ LOADGEN, "sweep", "no_such_key=1,2", "--",
                                              "hackbench", NULL },
                       "no_such_key");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,50", "--",
                                              "hackbench", NULL },
                       "\"50\" for imbalance_pct");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "balance.interval=1s", "--",
                                              "hackbench", NULL },
                       "balance.interval");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "state_directory=/x", "--",
                                              "hackbench", NULL },
                       "state_directory");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,,120", "--",
                                              "hackbench", NULL },
                       "imbalance_pct=110,,120");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,110", "--",
                                              "hackbench", NULL },
                       "imbalance_pct=110");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "--", "hackbench", NULL },
                       "KEY=V1,V2");
        expect_refused((const char *const[]){ LOADGEN, "compare", "hackbench", NULL }, "\"--\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--", NULL }, "SUITE");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--", "nosuch", NULL },
                       "\"nosuch\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", "/nonexistent/A.conf",
                                              "--", "hackbench", NULL },
                       "/nonexistent/A.conf");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", bad, "--",
                                              "hackbench", NULL },
                       "bad.conf:3: imbalance_pct");
        expect_refused((const char *const[]){ LOADGEN, "sweep", "--config", bad,
                                              "imbalance_pct=110", "--", "hackbench", NULL },
                       "bad.conf:3: imbalance_pct");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", same, "--",
                                              "hackbench", NULL },
                       "\"default\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--config", spaced, "--",
                                              "hackbench", NULL },
                       "\"a b\"");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--", "hackbench",
                                              "--json=x.json", NULL },
                       "--json=x.json");
        expect_refused(
                (const char *const[]){ LOADGEN, "compare", "--", "contest", "--label", "x", NULL },
                "--label");
        expect_refused((const char *const[]){ LOADGEN, "compare", "--daemon=/nonexistent/cgb", "--",
                                              "hackbench", NULL },
                       "--daemon=/nonexistent/cgb");
        expect_refused(
                (const char *const[]){ LOADGEN, "compare", "extra", "--", "hackbench", NULL },
                "\"extra\"");
        rm_rf(dir);
}

Test(args, help_names_both_commands_and_the_suites) {
        Run c = bin_run((const char *const[]){ LOADGEN, "compare", "--help", NULL });
        Run s = bin_run((const char *const[]){ LOADGEN, "sweep", "--help", NULL });
        Run top = bin_run((const char *const[]){ LOADGEN, "--help", NULL });

        cr_expect(exited_with(c.status, 0));
        cr_expect(exited_with(s.status, 0));
        cr_expect(strstr(c.out, "loadgen compare [OPTIONS] -- SUITE"), "%s", c.out);
        cr_expect(strstr(s.out, "loadgen sweep KEY=V1,V2,..."), "%s", s.out);
        cr_expect(strstr(c.out, "hackbench") && strstr(c.out, "contest"), "%s", c.out);
        cr_expect(strstr(top.out, "compare") && strstr(top.out, "sweep KEY=V1"), "%s", top.out);
        bin_run_done(&c);
        bin_run_done(&s);
        bin_run_done(&top);
}

/* ---- real runs */

/* bin_run(), again while compare refused because another test's cgbalanced (one managing
 * cgbalance.slice) ran meanwhile: that refusal is right, and tested on its own below. */
static Run run_compare(const char *const argv[]) {
        Run r = bin_run(argv);

        for (int i = 0; i < 30 && strstr(r.err, "is already running (pid"); i++) {
                bin_run_done(&r);
                sleep(2);
                r = bin_run(argv);
        }
        return r; /* still refused: the test fails, saying so */
}

/* The daemons compare started ("started /.../cgbalanced --config F (pid N).") are all gone. */
static void expect_daemons_gone(const char *err, size_t want) {
        size_t n = 0;

        for (const char *p = err; (p = strstr(p, "cgbalanced --config ")); p++) {
                const char *pid_at = strstr(p, " (pid ");
                _cleanup_free_ char *path = NULL, *comm = NULL;
                int pid;

                cr_assert(pid_at, "%s", err);
                pid = atoi(pid_at + 6);
                n++;
                cr_assert_gt(asprintf(&path, "/proc/%d/comm", pid), 0);
                comm = read_all(path);
                cr_expect_str_neq(comm, "cgbalanced\n", "cgbalanced %d was left running", pid);
        }
        cr_expect_eq(n, want, "%zu daemons started, not %zu: %s", n, want, err);
}

static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;

        cr_assert(json_object_object_get_ex(o, key, &v), "no \"%s\" in %s", key,
                  json_object_to_json_string(o));
        return v;
}

/* The suites the rows ran ("Row X: started loadgen SUITE (pid N).") left no cgroup behind. */
static void expect_no_suite_group_left(const char *err) {
        size_t n = 0;

        for (const char *p = err; (p = strstr(p, " (pid ")); p++) {
                _cleanup_free_ char *g = NULL;
                int pid = atoi(p + 6);

                if (p - err < 9 || strncmp(p - 9, "hackbench", 9) != 0)
                        continue;
                n++;
                g = group_left(pid);
                cr_expect_null(g, "the sandbox of loadgen %d is left: %s", pid, g);
        }
        cr_expect_gt(n, 0, "no suite pid in: %s", err);
}

Test(run, compare_runs_the_suite_without_and_with_the_daemon, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *log = NULL, *text = NULL;
        json_object *root, *rows;
        double t0 = 0, t1 = 0;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&json, "%s/r.json", dir), 0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", "--no-daemon", "--json", json,
                                               "--", "hackbench", "-g", "1", "-l", "5", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect(starts_with(r.out, "Hackbench:\tno-daemon\tdefault\n1 groups: Time:\t"), "%s",
                  r.out);
        cr_expect_eq(sscanf(r.out + 45, "%lf\t%lf\n", &t0, &t1), 2, "two columns: %s", r.out);
        cr_expect(t0 > 0 && t1 > 0, "%s", r.out);
        cr_expect(session_gone(r.pid), "a process of the run is left");
        expect_daemons_gone(r.err, 1);
        expect_no_suite_group_left(r.err);

        /* The daemon really ran for "default", and was stopped by SIGTERM. */
        cr_assert_gt(asprintf(&log, "%s.daemon-default.log", json), 0);
        text = read_all(log);
        cr_expect(strstr(text, "cgbalanced 0.1.0 starting"), "log: %s", text);
        cr_expect(strstr(text, "Received Terminated, stopping."), "log: %s", text);
        cr_expect(strstr(text, "Restored "), "log: %s", text);
        cr_expect(access(log, F_OK) == 0);
        free(log);
        cr_assert_gt(asprintf(&log, "%s.daemon-no-daemon.log", json), 0);
        cr_expect_neq(access(log, F_OK), 0, "a log for the row without a daemon");

        root = json_object_from_file(json);
        cr_assert(root, "%s does not parse", json);
        cr_expect_str_eq(json_object_get_string(member(root, "command")), "compare");
        cr_expect_str_eq(json_object_get_string(member(root, "suite")), "hackbench");
        cr_expect_eq(json_object_array_length(member(root, "suite_args")), 4);
        rows = member(root, "rows");
        cr_assert_eq(json_object_array_length(rows), 2);
        for (size_t i = 0; i < 2; i++) {
                json_object *row = json_object_array_get_idx(rows, i);
                json_object *res = member(row, "result"), *tl = member(row, "timeline");
                json_object *grp = json_object_array_get_idx(member(res, "rows"), 0);

                cr_expect_str_eq(json_object_get_string(member(row, "name")),
                                 i == 0 ? "no-daemon" : "default");
                cr_expect_eq(json_object_get_boolean(member(row, "daemon")), i == 1);
                cr_expect_str_eq(json_object_get_string(member(res, "benchmark")), "hackbench");
                cr_expect_str_eq(json_object_get_string(member(member(res, "parameters"), "label")),
                                 i == 0 ? "no-daemon" : "default");
                cr_expect_eq(json_object_get_int(member(grp, "groups")), 1);
                cr_expect_gt(json_object_get_int64(member(grp, "time_usec")), 0);
                cr_expect(json_object_is_type(member(tl, "samples"), json_type_array));
                if (i == 0)
                        cr_expect(json_object_is_type(member(row, "config"), json_type_null));
                else
                        cr_expect(strstr(json_object_get_string(member(row, "config")),
                                         "\n[balance]\nimbalance_pct = 117\n"),
                                  "%s", json_object_get_string(member(row, "config")));
        }
        json_object_put(root);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(run, sweep_gives_a_row_per_value, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *json = NULL;
        json_object *root, *rows;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&json, "%s/s.json", dir), 0);
        r = run_compare((const char *const[]){ LOADGEN, "sweep", "imbalance_pct=110,130", "--json",
                                               json, "--", "hackbench", "-g", "1", "-l", "5",
                                               NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect(starts_with(r.out, "Hackbench:\timbalance_pct=110\timbalance_pct=130\n1 groups"),
                  "%s", r.out);
        expect_daemons_gone(r.err, 2);
        cr_expect(session_gone(r.pid));
        root = json_object_from_file(json);
        cr_assert(root);
        cr_expect_str_eq(json_object_get_string(member(root, "command")), "sweep");
        rows = member(root, "rows");
        cr_assert_eq(json_object_array_length(rows), 2);
        for (size_t i = 0; i < 2; i++) {
                json_object *row = json_object_array_get_idx(rows, i);
                const char *conf = json_object_get_string(member(row, "config"));
                _cleanup_free_ char *log = NULL, *text = NULL;
                const char *name = i == 0 ? "imbalance_pct=110" : "imbalance_pct=130";

                cr_expect_str_eq(json_object_get_string(member(row, "name")), name);
                cr_expect(strstr(conf, i == 0 ? "imbalance_pct = 110\n" : "imbalance_pct = 130\n"),
                          "%s", conf);
                cr_expect(strstr(conf, "state_directory = /"), "%s", conf);
                cr_assert_gt(asprintf(&log, "%s.daemon-%s.log", json, name), 0);
                text = read_all(log);
                cr_expect(strstr(text, "starting") && strstr(text, "Restored "), "%s: %s", log,
                          text);
        }
        json_object_put(root);
        bin_run_done(&r);
        rm_rf(dir);
}

static char *write_script(const char *dir, const char *name, const char *body) {
        char *path = NULL;
        int fd;

        cr_assert_gt(asprintf(&path, "%s/%s", dir, name), 0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        cr_assert_geq(fd, 0);
        cr_assert_gt(dprintf(fd, "#!/bin/sh\n%s\n", body), 0);
        close(fd);
        return path;
}

Test(run, a_daemon_that_fails_to_start_is_an_error_naming_the_row_and_its_log, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *daemon = NULL, *opt = NULL, *kept_dir = NULL, *log = NULL,
                            *text = NULL;
        const char *kept;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        daemon = write_script(dir, "broken-daemon", "echo 'cannot do this: Bad thing' >&2; exit 3");
        cr_assert_gt(asprintf(&opt, "--daemon=%s", daemon), 0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", opt, "--", "hackbench", "-g",
                                               "1", "-l", "5", NULL });
        cr_expect(exited_with(r.status, 1), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "Row default: cgbalanced exited before it was ready: it exited "
                                "with status 3"),
                  "%s", r.err);
        cr_expect(strstr(r.err, "  cannot do this: Bad thing\n"), "%s", r.err);
        cr_expect(strstr(r.err, "Its whole log: /"), "%s", r.err);
        cr_expect_null(strstr(r.err, "started loadgen hackbench"), "the suite ran: %s", r.err);
        cr_expect_str_empty(r.out);
        cr_expect(session_gone(r.pid));
        /* Without --json the log is in the run's directory, kept for the person to read. */
        kept = strstr(r.err, "The run's files are kept in ");
        cr_assert(kept, "%s", r.err);
        kept_dir = strndup(kept + 28, strcspn(kept + 28, "\n") - 1);
        cr_assert_gt(asprintf(&log, "%s/row-0.daemon.log", kept_dir), 0);
        cr_expect(strstr(r.err, log), "%s", r.err);
        text = read_all(log);
        cr_expect(strstr(text, "] cannot do this: Bad thing\n"), "%s: %s", log, text);
        rm_rf(kept_dir);
        bin_run_done(&r);
        rm_rf(dir);
}

/* A daemon that speaks only the contract: an event on the fd of --events, and on stderr the
 * words of a move that is not one. Ready through NOTIFY_SOCKET, stopped by SIGTERM. */
#define EVENTS_DAEMON                                                                              \
        "for a; do case $a in --events=*) fd=${a#--events=};; esac; done\n"                        \
        "[ -n \"$fd\" ] || { echo 'no --events' >&2; exit 2; }\n"                                  \
        "t=$(awk '{ printf \"%d\", $1 * 1000000 }' /proc/uptime)\n"                                \
        "echo 'cgbalanced: Moved pid 4242 (decoy) node 0 -> 1, CPUs 0: r' >&2\n"                   \
        "printf '{\"version\":1,\"kind\":\"task-moved\",\"monotonic_usec\":%s,"                    \
        "\"realtime_usec\":1,\"pid\":77,\"comm\":\"fake (task)\",\"from_node\":0,\"to_node\":1,"   \
        "\"reason\":\"r\"}\\n' \"$t\" >/proc/self/fd/$fd\n"                                        \
        "printf 'not an event\\n{\"version\":1,\"kind\":\"weight-changed\",\"monotonic_usec\":%s," \
        "\"realtime_usec\":1,\"cgroup\":\"a/b\",\"old_weight\":100,\"new_weight\":150,"            \
        "\"reason\":\"w\"}\\n' \"$t\" >/proc/self/fd/$fd\n"                                        \
        "systemd-notify --ready\n"                                                                 \
        "trap 'exit 0' TERM\n"                                                                     \
        "while :; do sleep 0.1; done"

/* What the daemon's --events pipe carried is the row's timeline; its log's words are not. */
Test(run, the_timeline_is_what_the_daemon_s_events_say, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *daemon = NULL, *opt = NULL, *json = NULL;
        json_object *root, *tl, *a, *m, *w;
        Run r;

        skip_unless_root();
        if (access("/usr/bin/systemd-notify", X_OK) < 0 && access("/bin/systemd-notify", X_OK) < 0)
                cr_skip_test("no systemd-notify for the fake daemon");
        dir = make_tmpdir();
        daemon = write_script(dir, "events-daemon", EVENTS_DAEMON);
        cr_assert_gt(asprintf(&opt, "--daemon=%s", daemon), 0);
        cr_assert_gt(asprintf(&json, "%s/r.json", dir), 0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", opt, "--json", json, "--",
                                               "hackbench", "-g", "1", "-l", "5", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        root = json_object_from_file(json);
        cr_assert(root, "%s does not parse", json);
        tl = member(json_object_array_get_idx(member(root, "rows"), 0), "timeline");
        a = member(tl, "moves");
        cr_assert_eq(json_object_array_length(a), 1, "%s", json_object_to_json_string(tl));
        m = json_object_array_get_idx(a, 0);
        cr_expect_eq(json_object_get_int(member(m, "pid")), 77);
        cr_expect_str_eq(json_object_get_string(member(m, "comm")), "fake (task)");
        cr_expect_eq(json_object_get_int(member(m, "from")), 0);
        cr_expect_eq(json_object_get_int(member(m, "to")), 1);
        a = member(tl, "weights");
        cr_assert_eq(json_object_array_length(a), 1, "%s", json_object_to_json_string(tl));
        w = json_object_array_get_idx(a, 0);
        cr_expect_str_eq(json_object_get_string(member(w, "cgroup")), "a/b");
        cr_expect_eq(json_object_get_int(member(w, "from")), 100);
        cr_expect_eq(json_object_get_int(member(w, "to")), 150);
        json_object_put(root);
        bin_run_done(&r);
        rm_rf(dir);
}

/* A process called cgbalanced: a shell script of that name (its comm), sleeping, with args. */
static pid_t fake_daemon(const char *dir, const char *const args[]) {
        _cleanup_free_ char *path = write_script(dir, "cgbalanced", "sleep 60");
        pid_t pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                const char *argv[8] = { path };

                for (size_t i = 0; args[i] && i < 6; i++)
                        argv[i + 1] = args[i];
                (void) setpgid(0, 0);
                execv(path, (char *const *) argv);
                _exit(127);
        }
        (void) setpgid(pid, pid);
        for (int i = 0; i < 100; i++) {
                _cleanup_free_ char *p = NULL, *comm = NULL;

                cr_assert_gt(asprintf(&p, "/proc/%d/comm", (int) pid), 0);
                comm = read_all(p);
                if (streq(comm, "cgbalanced\n"))
                        return pid;
                usleep(50000);
        }
        cr_assert_fail("the fake cgbalanced did not start");
        return -1;
}

static void fake_daemon_stop(pid_t pid) {
        (void) kill(-pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

Test(run, another_cgbalanced_managing_loadgens_groups_is_refused, .timeout = 60) {
        _cleanup_free_ char *dir = NULL, *want = NULL;
        pid_t pid;
        Run r;

        skip_unless_root();
        dir = make_tmpdir();
        /* No --config: /etc/cgbalance/cgbalance.conf or the defaults, cgbalance.slice. */
        pid = fake_daemon(dir, (const char *const[]){ NULL });
        cr_assert_gt(asprintf(&want, "cgbalanced is already running (pid %d, config ", (int) pid),
                     0);
        r = bin_run((const char *const[]){ LOADGEN, "compare", "--no-daemon", "--", "hackbench",
                                           "-g", "1", "-l", "5", NULL });
        fake_daemon_stop(pid);
        cr_expect(exited_with(r.status, 1), "status %d, stderr: %s", r.status, r.err);
        /* A real daemon of another test, with a lower pid, may be named instead: refused alike. */
        cr_expect(strstr(r.err, want) || strstr(r.err, "cgbalanced is already running (pid "), "%s",
                  r.err);
        cr_expect_null(strstr(r.err, "Row "), "a row ran: %s", r.err);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(run, another_cgbalanced_managing_other_groups_is_let_be, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *conf = NULL, *want = NULL;
        pid_t pid;
        Run r;
        int fd;

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&conf, "%s/other.conf", dir), 0);
        fd = open(conf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_gt(dprintf(fd, "[manage]\ncgroups = other.slice\n"), 0);
        close(fd);
        pid = fake_daemon(dir, (const char *const[]){ "--config", conf, NULL });
        cr_assert_gt(asprintf(&want, "Another cgbalanced runs (pid %d, config %s), managing none",
                              (int) pid, conf),
                     0);
        r = run_compare((const char *const[]){ LOADGEN, "compare", "--", "hackbench", "-g", "1",
                                               "-l", "5", NULL });
        fake_daemon_stop(pid);
        cr_expect(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, want), "%s", r.err);
        cr_expect(starts_with(r.out, "Hackbench:\tdefault\n1 groups: Time:\t"), "%s", r.out);
        expect_daemons_gone(r.err, 1);
        bin_run_done(&r);
        rm_rf(dir);
}

/* SIGINT while the suite runs beside the daemon: both end, the daemon restores, 130. */
Test(run, sigint_stops_the_suite_and_the_daemon, .timeout = 300) {
        _cleanup_free_ char *dir = NULL, *json = NULL, *log = NULL, *text = NULL;
        Run r = { 0 };

        skip_unless_root();
        dir = make_tmpdir();
        cr_assert_gt(asprintf(&json, "%s/i.json", dir), 0);
        cr_assert_gt(asprintf(&log, "%s.daemon-default.log", json), 0);
        for (int attempt = 0; attempt < 30; attempt++) {
                if (attempt > 0)
                        sleep(2);
                bin_start(&r,
                          (const char *const[]){ LOADGEN, "compare", "--json", json, "--",
                                                 "hackbench", "-g", "1", "-l", "1000000", NULL });
                /* Until the suite runs beside the ready daemon, or compare refused. */
                for (int i = 0; i < 1200; i++) {
                        free(text);
                        text = read_all(r.err_path);
                        if (strstr(text, "started loadgen hackbench") ||
                            strstr(text, "is already running (pid"))
                                break;
                        usleep(100000);
                }
                if (!strstr(text, "is already running (pid"))
                        break;
                bin_finish(&r);
                bin_run_done(&r);
                r = (Run){ 0 };
        }
        cr_assert(strstr(text, "started loadgen hackbench"), "%s", text);
        usleep(500000);
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        bin_finish(&r);
        cr_expect(exited_with(r.status, 128 + SIGINT), "status %d, stderr: %s", r.status, r.err);
        cr_expect(session_gone(r.pid), "a process of the run is left");
        expect_daemons_gone(r.err, 1);
        expect_no_suite_group_left(r.err);
        free(text);
        text = read_all(log);
        cr_expect(strstr(text, "Received Terminated") && strstr(text, "Restored "), "%s", text);
        cr_expect_neq(access(json, F_OK), 0, "an interrupted run wrote its JSON");
        bin_run_done(&r);
        rm_rf(dir);
}
