/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen reaim, re-aim-7 after AIM7 (seed 003): the workfile parser with hostile input, the
 * weighted draw, the arithmetic of JPM, JPM/child and JTI, the rows; then the real binary at tiny
 * sizes as root in its sandbox: the seed's shape, the JSON holding the table's figures, --cpus in
 * the throughput line, the crossover, workfile errors naming FILE:LINE, SIGINT in the middle,
 * nothing left behind, limits and bad values refused with exit 2.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"
#include "reaim.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- the workfile */

static ReaimWorkfile parse_ok(const char *text) {
        ReaimWorkfile w;
        ReaimParseError e = { 0 };

        cr_assert_eq(reaim_workfile_parse(text, strlen(text), &w, &e), 0, "%s: line %u: %s", text,
                     e.line, e.message);
        return w;
}

Test(reaim_workfile, comments_blanks_and_spacing_are_skipped) {
        ReaimWorkfile w = parse_ok("# a workfile\n"
                                   "\n"
                                   "  20\tcompute_int   # trailing comment\n"
                                   "5 sort\r\n"
                                   "\t\n"
                                   "1 fork");

        cr_assert_eq(w.n, 3);
        cr_expect_str_eq(w.entries[0].test->name, "compute_int");
        cr_expect_eq(w.entries[0].hits, 20);
        cr_expect_eq(w.entries[0].line, 3);
        cr_expect_str_eq(w.entries[1].test->name, "sort");
        cr_expect_eq(w.entries[1].line, 4);
        cr_expect_str_eq(w.entries[2].test->name, "fork");
        cr_expect_eq(w.entries[2].line, 6, "a last line without its newline");
        cr_expect_eq(w.total_hits, 26);
}

Test(reaim_workfile, the_built_in_one_names_every_test) {
        ReaimWorkfile w = parse_ok(reaim_default_workfile);

        cr_expect_eq(w.n, n_reaim_tests);
        for (size_t i = 0; i < n_reaim_tests; i++)
                cr_expect_not_null(reaim_test_find(reaim_tests[i].name));
        cr_expect_null(reaim_test_find("add_double"));
}

Test(reaim_workfile, errors_say_which_line_and_what) {
        static const struct {
                const char *text;
                size_t len; /* 0: strlen */
                unsigned line;
                const char *says;
        } bad[] = {
                { "10 compute_int\n5 nosuch\n", 0, 2, "unknown test \"nosuch\"" },
                { "10 compute_int\n5 nosuch\n", 0, 2, "compute_int, compute_float, fork" },
                { "0 fork\n", 0, 1, "bad weight \"0\"" },
                { "1000001 fork\n", 0, 1, "bad weight" },
                { "99999999999999999999 fork\n", 0, 1, "bad weight" },
                { "3x fork\n", 0, 1, "bad weight \"3x\"" },
                { "-3 fork\n", 0, 1, "want \"<hits> <test>\", got \"-3\"" },
                { "fork 3\n", 0, 1, "got \"fork\"" },
                { "# c\n\n  7 sort # ok\n10\n", 0, 4, "without a test name" },
                { "10 fork extra\n", 0, 1, "\"extra\" after the test name" },
                { "5 fork\n2 sort\n5 fork\n", 0, 3, "named twice (first on line 1)" },
                { "5 fork\n1 so\0rt\n", 15, 2, "NUL" },
                { "", 0, 0, "no tests" },
                { "# only a comment\n\n\t\n", 0, 0, "no tests" },
                { "FILESIZE: 10K\n", 0, 1, "got \"FILESIZE:\"" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ReaimWorkfile w = { .n = 99 };
                ReaimParseError e = { .line = 999 };
                size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);

                cr_expect_eq(reaim_workfile_parse(bad[i].text, len, &w, &e), -EINVAL, "case %zu",
                             i);
                cr_expect_eq(e.line, bad[i].line, "case %zu: line %u: %s", i, e.line, e.message);
                cr_expect(strstr(e.message, bad[i].says), "case %zu: \"%s\" lacks \"%s\"", i,
                          e.message, bad[i].says);
                cr_expect_eq(w.n, 99, "case %zu: *ret written on failure", i);
        }
}

/* ---- the draw */

Test(reaim_draw, splitmix64_gives_its_reference_numbers) {
        uint64_t s = 0;

        /* splitmix64's published sequence from 0 */
        cr_expect_eq(reaim_random(&s), UINT64_C(0xe220a8397b1dcdaf));
        cr_expect_eq(reaim_random(&s), UINT64_C(0x6e789e6aa1b965f4));
}

Test(reaim_draw, jobs_are_shared_by_hits_and_the_remainders_fairly) {
        ReaimWorkfile w = parse_ok(reaim_default_workfile);
        ReaimWorkfile three = parse_ok("1 fork\n1 sort\n1 pipe\n");
        ReaimWorkfile skew = parse_ok("3 fork\n1 sort\n");
        ReaimWorkfile odd = parse_ok("7 fork\n2 sort\n1 pipe\n");
        unsigned c[32];

        /* The built-in hits add up to 100: 100 jobs are exactly the hits. */
        cr_assert_eq(w.total_hits, 100);
        reaim_apportion(&w, 100, c);
        for (size_t i = 0; i < w.n; i++)
                cr_expect_eq(c[i], w.entries[i].hits, "entry %zu", i);
        /* 5 over three equal weights: 1.67 each, the two extra to the earliest. */
        reaim_apportion(&three, 5, c);
        cr_expect(c[0] == 2 && c[1] == 2 && c[2] == 1, "%u %u %u", c[0], c[1], c[2]);
        /* 2 over 3:1 is 1.5 and 0.5: equal remainders, the earlier wins. */
        reaim_apportion(&skew, 2, c);
        cr_expect(c[0] == 2 && c[1] == 0, "%u %u", c[0], c[1]);
        /* 4 over 7:2:1 is 2.8, 0.8, 0.4: the largest remainders get the two left. */
        reaim_apportion(&odd, 4, c);
        cr_expect(c[0] == 3 && c[1] == 1 && c[2] == 0, "%u %u %u", c[0], c[1], c[2]);
        for (unsigned jobs = 0; jobs < 300; jobs++) {
                unsigned sum = 0;

                reaim_apportion(&odd, jobs, c);
                for (size_t i = 0; i < odd.n; i++)
                        sum += c[i];
                cr_expect_eq(sum, jobs);
        }
}

static bool same_order(const unsigned *a, const unsigned *b, size_t n) {
        return memcmp(a, b, n * sizeof *a) == 0;
}

Test(reaim_draw, each_child_runs_the_same_mix_in_its_own_reproducible_order) {
        ReaimWorkfile w = parse_ok(reaim_default_workfile);
        unsigned a[100], again[100], other[100], reseeded[100], counts[32], seen[32] = { 0 };

        reaim_draw(&w, 100, 1, 0, a);
        reaim_draw(&w, 100, 1, 0, again);
        reaim_draw(&w, 100, 1, 1, other);
        reaim_draw(&w, 100, 2, 0, reseeded);
        cr_expect(same_order(a, again, 100), "the same seed and child gave another order");
        cr_expect(!same_order(a, other, 100), "two children share an order");
        cr_expect(!same_order(a, reseeded, 100), "the seed changes nothing");
        reaim_apportion(&w, 100, counts);
        for (size_t i = 0; i < 100; i++) {
                cr_assert_lt(a[i], w.n);
                seen[a[i]]++;
        }
        for (size_t i = 0; i < w.n; i++)
                cr_expect_eq(seen[i], counts[i], "entry %zu drawn %u times, not %u", i, seen[i],
                             counts[i]);
        /* Shuffled, not in workfile order. */
        for (size_t i = 1, sorted = 1; i <= 100; i++) {
                if (i == 100) {
                        cr_expect(!sorted, "the jobs come in workfile order");
                        break;
                }
                if (a[i] < a[i - 1])
                        sorted = 0;
        }
}

/* ---- the figures */

Test(reaim_step, jpm_per_child_and_jti) {
        const uint64_t even[] = { 5000000, 5000000 };
        const uint64_t uneven[] = { 4000000, 6000000 };
        const uint64_t wild[] = { 0, 0, 3000000 };
        ReaimStep s;

        /* 2 children of 100 jobs in 6 s (0.1 min): 2000 jobs per minute. */
        s = reaim_step(2, 100, 6000000, even);
        cr_expect_float_eq(s.jpm, 2000.0, 1e-9);
        cr_expect_float_eq(s.jpm_per_child, 1000.0, 1e-9);
        cr_expect_float_eq(s.jti, 100.0, 1e-9);
        /* mean 5 s, standard deviation 1 s: a coefficient of variation of 0.2. */
        s = reaim_step(2, 100, 6000000, uneven);
        cr_expect_float_eq(s.child_mean_usec, 5e6, 1e-6);
        cr_expect_float_eq(s.child_stddev_usec, 1e6, 1e-6);
        cr_expect_float_eq(s.jti, 80.0, 1e-9);
        cr_expect_eq(s.child_min_usec, 4000000);
        cr_expect_eq(s.child_max_usec, 6000000);
        /* A variation above 1 would make JTI negative: it stops at 0. */
        s = reaim_step(3, 10, 3000000, wild);
        cr_expect_eq(s.jti, 0.0);
        cr_expect_float_eq(s.jpm, 600.0, 1e-9);
        s = reaim_step(2, 100, 0, even);
        cr_expect_eq(s.jpm, 0);
        cr_expect_eq(s.jpm_per_child, 0);
}

Test(reaim_step, the_crossover_is_strictly_below) {
        ReaimStep s = { .jpm_per_child = 0.99 };

        cr_expect(reaim_crossed(&s, 1.0));
        s.jpm_per_child = 1.0;
        cr_expect(!reaim_crossed(&s, 1.0));
        cr_expect(!reaim_crossed(&s, 0), "0 never crosses");
}

Test(reaim_step, rows_and_the_seeds_throughput) {
        ReaimStep s = { .users = 4, .jpm = 5406.684, .jpm_per_child = 1351.671, .jti = 98.7 };
        char b[128];

        reaim_format_header(b, sizeof b);
        cr_expect_str_eq(b, "Users JPM JPM/child JTI\n");
        reaim_format_row(b, sizeof b, &s);
        cr_expect_str_eq(b, "4 5406.68 1351.67 98\n", "JTI is truncated as AIM7's integer");
        reaim_format_throughput(b, sizeof b, 2, "mm1", 1316.951);
        cr_expect_str_eq(b, "\n2 CPU:\nKernel Throughput\nmm1 1316.95\n");
}

/* ---- the binary */

typedef struct Row {
        unsigned users;
        double jpm, per_child, jti;
} Row;

typedef struct Table {
        Row rows[64];
        size_t n;
        double max_jpm, throughput;
        unsigned max_users, cpus;
        char label[32];
        bool crossover;
} Table;

static Table parse_table(const char *out) {
        static const char header[] = "Users JPM JPM/child JTI\n";
        Table t = { 0 };
        const char *p = out;

        cr_assert_eq(strncmp(p, header, strlen(header)), 0, "not the header: %s", out);
        p += strlen(header);
        while (*p >= '0' && *p <= '9') {
                Row *r = &t.rows[t.n];

                cr_assert_lt(t.n, ELEMENTSOF(t.rows));
                cr_assert_eq(
                        sscanf(p, "%u %lf %lf %lf", &r->users, &r->jpm, &r->per_child, &r->jti), 4,
                        "not a row: %s", p);
                p = strchr(p, '\n') + 1;
                t.n++;
        }
        if (strncmp(p, "Crossover at ", 13) == 0) {
                t.crossover = true;
                p = strchr(p, '\n') + 1;
        }
        cr_assert_eq(sscanf(p, "Max JPM %lf at %u users\n\n%u CPU:\nKernel Throughput\n%31s %lf",
                            &t.max_jpm, &t.max_users, &t.cpus, t.label, &t.throughput),
                     5, "not the summary: %s", p);
        return t;
}

static double json_value(const char *from, const char *to, const char *key) {
        _cleanup_free_ char *k = NULL;
        const char *p;
        double v;

        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        p = strstr(from, k);
        cr_assert(p && (!to || p < to), "no %s in %.*s", key, to ? (int) (to - from) : 200, from);
        cr_assert_eq(sscanf(p + strlen(k), "%lf", &v), 1);
        return v;
}

static bool json_row(const char *json, size_t n, const char **ret_from, const char **ret_to) {
        const char *p = strstr(json, "\"rows\": [");

        cr_assert(p, "no rows: %s", json);
        for (size_t i = 0;; i++) {
                const char *open = strchr(p, '{'), *close = strchr(p, '}'), *end = strchr(p, ']');

                if (!open || (end && end < open))
                        return false;
                cr_assert(close, "unterminated row");
                if (i == n) {
                        *ret_from = open;
                        *ret_to = close;
                        return true;
                }
                p = close + 1;
        }
}

/* Runs reaim with args, --dir d->dir and --json=FILE; the JSON in *ret_json. */
static Run run_reaim(const Dirs *d, const char *const *args, char **ret_json) {
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *opt = NULL;
        const char *argv[32] = { LOADGEN, "reaim", "--dir", d->dir };
        size_t n = 4;
        Run r;

        cr_assert_gt(asprintf(&path, "%s/reaim.json", dir), 0);
        cr_assert_gt(asprintf(&opt, "--json=%s", path), 0);
        for (; *args; args++)
                argv[n++] = *args;
        argv[n++] = opt;
        argv[n] = NULL;
        r = bin_run(argv);
        *ret_json = read_all(path);
        rm_rf(dir);
        return r;
}

/* Every row of t against the JSON's: the same users, JPM, JPM/child and JTI; JPM from its raw
 * time; the summary the largest JPM. */
static void expect_json_is_table(const Table *t, const char *json, unsigned jobs_per_child) {
        const char *from, *to;
        double max = 0;
        unsigned max_users = 0;

        for (size_t i = 0; i < t->n; i++) {
                const Row *r = &t->rows[i];
                double jpm, real, jti;

                cr_assert(json_row(json, i, &from, &to), "no JSON row %zu", i);
                cr_expect_eq(json_value(from, to, "users"), r->users);
                jpm = json_value(from, to, "jpm");
                real = json_value(from, to, "real_usec");
                jti = json_value(from, to, "jti");
                cr_expect(fabs(jpm - r->jpm) <= 0.0051, "row %zu: JSON %.4f, table %.2f", i, jpm,
                          r->jpm);
                cr_expect(fabs(json_value(from, to, "jpm_per_child") - r->per_child) <= 0.0051,
                          "row %zu: JPM/child", i);
                cr_expect_eq(floor(jti), r->jti, "row %zu: JTI %.4f, table %.0f", i, jti, r->jti);
                cr_expect(jti >= 0 && jti <= 100, "row %zu: JTI %.4f", i, jti);
                cr_expect(fabs(jpm - (double) jobs_per_child * r->users * 60e6 / real) <
                                  0.001 * jpm,
                          "row %zu: JPM %.4f is not jobs/real minutes (%.0f us)", i, jpm, real);
                cr_expect_eq(json_value(from, to, "jobs"), (double) jobs_per_child * r->users);
                cr_expect_leq(json_value(from, to, "child_usec_max"), real,
                              "row %zu: a child outlasted its step", i);
                if (jpm > max) {
                        max = jpm;
                        max_users = r->users;
                }
        }
        cr_expect(!json_row(json, t->n, &from, &to), "more JSON rows than table rows");
        cr_expect(fabs(json_value(json, NULL, "max_jpm") - max) < 1e-3);
        cr_expect(fabs(t->max_jpm - max) <= 0.0051, "Max JPM %.2f, rows' %.4f", t->max_jpm, max);
        cr_expect_eq(t->throughput, t->max_jpm);
        cr_expect_eq(t->max_users, max_users);
}

Test(reaim, one_and_two_users_match_their_json_and_leave_nothing, .timeout = 60) {
        _cleanup_free_ char *json = NULL;
        Dirs d;
        Table t;
        Run r;

        skip_unless_root();
        d = test_dirs();
        r = run_reaim(&d,
                      (const char *const[]){ "--users", "1,2", "--jobs-per-child", "5", "--label",
                                             "260t5", NULL },
                      &json);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_log_info("%s", r.out);
        t = parse_table(r.out);
        cr_assert_eq(t.n, 2, "%s", r.out);
        cr_expect_eq(t.rows[0].users, 1);
        cr_expect_eq(t.rows[1].users, 2);
        for (size_t i = 0; i < t.n; i++) {
                cr_expect_gt(t.rows[i].jpm, 0);
                /* jobs of milliseconds: far more than AIM7's, far less than a million a minute */
                cr_expect(t.rows[i].per_child > 10 && t.rows[i].per_child < 1e6, "JPM/child %.2f",
                          t.rows[i].per_child);
                cr_expect_float_eq(t.rows[i].per_child * t.rows[i].users, t.rows[i].jpm,
                                   0.011 * t.rows[i].users);
        }
        cr_expect_eq(t.rows[0].jti, 100, "one child varies from no other");
        cr_expect_str_eq(t.label, "260t5");
        cr_expect(!t.crossover);
        cr_expect_eq(json_value(json, NULL, "crossover_users"), 0);
        cr_expect(strstr(json, "\"workfile\": \"built-in\""), "%s", json);
        expect_json_is_table(&t, json, 5);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(reaim, cpus_steps_to_eight_per_cpu_and_names_the_cpu_count, .timeout = 60) {
        _cleanup_free_ char *json = NULL;
        static const unsigned want[] = { 1, 2, 4, 8 };
        Dirs d;
        Table t;
        Run r;

        skip_unless_root();
        d = test_dirs();
        r = run_reaim(&d, (const char *const[]){ "--cpus", "0", "--jobs-per-child", "2", NULL },
                      &json);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_log_info("%s", r.out);
        t = parse_table(r.out);
        cr_assert_eq(t.n, ELEMENTSOF(want), "%s", r.out);
        for (size_t i = 0; i < t.n; i++)
                cr_expect_eq(t.rows[i].users, want[i], "step %zu", i);
        cr_expect_eq(t.cpus, 1, "%s", r.out);
        cr_expect_str_eq(t.label, "default");
        expect_json_is_table(&t, json, 2);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(reaim, max_users_ends_the_doubling_with_itself, .timeout = 60) {
        _cleanup_free_ char *json = NULL;
        static const unsigned want[] = { 1, 2, 4, 5 };
        Dirs d;
        Table t;
        Run r;

        skip_unless_root();
        d = test_dirs();
        r = run_reaim(&d,
                      (const char *const[]){ "--max-users", "5", "--jobs-per-child", "1", NULL },
                      &json);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        t = parse_table(r.out);
        cr_assert_eq(t.n, ELEMENTSOF(want), "%s", r.out);
        for (size_t i = 0; i < t.n; i++)
                cr_expect_eq(t.rows[i].users, want[i], "step %zu", i);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(reaim, the_crossover_stops_the_steps, .timeout = 60) {
        _cleanup_free_ char *json = NULL;
        Dirs d;
        Table t;
        Run r;

        skip_unless_root();
        d = test_dirs();
        /* No machine runs a trillion jobs a minute: the first step is past it. */
        r = run_reaim(&d,
                      (const char *const[]){ "--users", "1,2,3", "--jobs-per-child", "2",
                                             "--crossover", "1e12", NULL },
                      &json);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        t = parse_table(r.out);
        cr_expect_eq(t.n, 1, "%s", r.out);
        cr_expect(t.crossover, "%s", r.out);
        cr_expect(strstr(r.out, "Crossover at 1 users"), "%s", r.out);
        cr_expect_eq(json_value(json, NULL, "crossover_users"), 1);
        expect_json_is_table(&t, json, 2);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

/* A file in a fresh directory holding text. */
static char *workfile(const char *dir, const char *name, const char *text, size_t len) {
        char *path = NULL;
        int fd;

        cr_assert_gt(asprintf(&path, "%s/%s", dir, name), 0);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
        return path;
}

Test(reaim, a_workfile_of_ones_own_runs_only_its_tests, .timeout = 60) {
        _cleanup_free_ char *json = NULL, *tmp = make_tmpdir(), *path = NULL;
        static const char text[] = "# mine\n3 compute_int\n1 file\n";
        Dirs d;
        Table t;
        Run r;

        skip_unless_root();
        d = test_dirs();
        path = workfile(tmp, "wf", text, strlen(text));
        r = run_reaim(&d,
                      (const char *const[]){ "--workfile", path, "--users", "2", "--jobs-per-child",
                                             "4", NULL },
                      &json);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_expect(strstr(json, "\"test\": \"compute_int\",\n") && strstr(json, "\"hits\": 3"), "%s",
                  json);
        cr_expect(strstr(json, "\"test\": \"file\""), "%s", json);
        cr_expect_null(strstr(json, "\"test\": \"fork\""), "%s", json);
        t = parse_table(r.out);
        cr_expect_eq(t.n, 1, "%s", r.out);
        expect_json_is_table(&t, json, 4);
        expect_clean(&r, &d);
        bin_run_done(&r);
        rm_rf(tmp);
        test_dirs_done(&d);
}

Test(reaim, workfile_errors_name_file_and_line_and_exit_2) {
        static const struct {
                const char *text;
                size_t len;
                const char *says;
        } bad[] = {
                { "10 fork\n3 no_such_test\n", 23, ":2: unknown test \"no_such_test\" (known: " },
                { "10 fork\n0 sort\n", 15, ":2: bad weight \"0\"" },
                { "", 0, ": no tests" },
                { "# fine\n10 fork junk\n", 20, ":2: \"junk\" after the test name" },
                { "%%$ fork\n", 9, ":1: want \"<hits> <test>\"" },
        };
        _cleanup_free_ char *tmp = make_tmpdir(), *missing = NULL;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *path = workfile(tmp, "wf", bad[i].text, bad[i].len);
                _cleanup_free_ char *want = NULL;
                Run r = bin_run((const char *const[]){ LOADGEN, "reaim", "--workfile", path,
                                                       "--users", "1", NULL });

                cr_assert_gt(asprintf(&want, "%s%s", path, bad[i].says), 0);
                cr_expect(exited_with(r.status, 2), "case %zu: status %d", i, r.status);
                cr_expect(strstr(r.err, want), "case %zu: \"%s\" lacks \"%s\"", i, r.err, want);
                cr_expect_str_empty(r.out, "case %zu", i);
                bin_run_done(&r);
        }
        cr_assert_gt(asprintf(&missing, "%s/none", tmp), 0);
        Run m = bin_run((const char *const[]){ LOADGEN, "reaim", "--workfile", missing, NULL });
        cr_expect(exited_with(m.status, 2), "status %d", m.status);
        cr_expect(strstr(m.err, missing) && strstr(m.err, "No such file"), "%s", m.err);
        bin_run_done(&m);
        rm_rf(tmp);
}

/* How many children the first child of pid (the step's process) has. */
static unsigned step_children(pid_t pid) {
        _cleanup_free_ char *path = NULL, *children = NULL, *cpath = NULL, *grand = NULL;
        unsigned n = 0;
        int child;

        cr_assert_gt(asprintf(&path, "/proc/%d/task/%d/children", (int) pid, (int) pid), 0);
        children = read_all(path);
        if (sscanf(children, "%d", &child) != 1)
                return 0;
        cr_assert_gt(asprintf(&cpath, "/proc/%d/task/%d/children", child, child), 0);
        grand = read_all(cpath);
        for (char *p = grand; *p; p++)
                n += *p == ' ';
        return n;
}

Test(reaim, sigint_in_the_middle_of_a_step_leaves_nothing, .timeout = 60) {
        uint64_t t0 = now_usec();
        unsigned kids = 0;
        Dirs d;
        Run r = { 0 };

        skip_unless_root();
        d = test_dirs();
        /* 8 children of 5000 jobs: tens of seconds a step, far more than the test waits. */
        bin_start(&r, (const char *const[]){ LOADGEN, "reaim", "--users", "8,8", "--jobs-per-child",
                                             "5000", "--dir", d.dir, NULL });
        while (now_usec() - t0 < 20000000 && (kids = step_children(r.pid)) < 8)
                usleep(20000);
        cr_assert_geq(kids, 8, "the step's children never all ran (%u)", kids);
        usleep(500000);
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        t0 = now_usec();
        bin_finish(&r);
        cr_expect_lt(now_usec() - t0, 10000000, "SIGINT took %" PRIu64 " us", now_usec() - t0);
        cr_expect(exited_with(r.status, 128 + SIGINT), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "Interrupted"), "stderr: %s", r.err);
        cr_expect_str_eq(r.out, "Users JPM JPM/child JTI\n");
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(reaim, bad_values_exit_2_before_anything_starts) {
        static const char *const bad[][5] = {
                { "--users", "0", NULL, NULL, "--users" },
                { "--users", "x", NULL, NULL, "--users" },
                { "--users", "2-1", NULL, NULL, "--users" },
                { "--max-users", "0", NULL, NULL, "--max-users" },
                { "--jobs-per-child", "0", NULL, NULL, "--jobs-per-child" },
                { "--jobs-per-child", "100001", NULL, NULL, "--jobs-per-child" },
                { "--crossover", "-1", NULL, NULL, "--crossover" },
                { "--crossover", "abc", NULL, NULL, "--crossover" },
                { "--crossover", "inf", NULL, NULL, "--crossover" },
                { "--seed", "-1", NULL, NULL, "--seed" },
                { "--seed", "0x", NULL, NULL, "--seed" },
                { "--seed", "12a", NULL, NULL, "--seed" },
                { "--users", "1", "--max-users", "2", "--users and --max-users" },
                { "--cpus", "4000", NULL, NULL, "--cpus 4000" },
                { "extra", NULL, NULL, NULL, "extra" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = bin_run((const char *const[]){ LOADGEN, "reaim", bad[i][0], bad[i][1],
                                                       bad[i][2], bad[i][3], NULL });

                cr_expect(exited_with(r.status, 2), "%s %s: status %d", bad[i][0], bad[i][1],
                          r.status);
                cr_expect(strstr(r.err, bad[i][4]), "%s %s: %s", bad[i][0], bad[i][1], r.err);
                cr_expect_str_empty(r.out, "%s %s started: %s", bad[i][0], bad[i][1], r.out);
                bin_run_done(&r);
        }
}

static uint64_t sysctl(const char *path) {
        _cleanup_free_ char *s = read_all(path);

        return strtoull(s, NULL, 10);
}

Test(reaim, users_beyond_this_machines_limits_are_refused_up_front) {
        uint64_t limit =
                MIN(sysctl("/proc/sys/kernel/pid_max"), sysctl("/proc/sys/kernel/threads-max"));
        /* Each user is a child and, at times, its partner: half the limit is too many. */
        uint64_t users = limit / 2 + 1;
        _cleanup_free_ char *arg = NULL, *what = NULL;
        uint64_t t0 = now_usec();
        Run r;

        if (users > 100000)
                cr_skip_test("this machine's limit (%" PRIu64 ") is above --users' range", limit);
        cr_assert_gt(asprintf(&arg, "1,%" PRIu64, users), 0);
        cr_assert_gt(asprintf(&what, "reaim with %" PRIu64 " users", users), 0);
        r = bin_run((const char *const[]){ LOADGEN, "reaim", "--users", arg, NULL });
        cr_expect(exited_with(r.status, 2), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, what) && strstr(r.err, "kernel."), "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        cr_expect_lt(now_usec() - t0, 5000000, "it ran something first");
        bin_run_done(&r);
}

Test(reaim, help_names_every_option_and_test) {
        static const char *const want[] = {
                "--users",    "--max-users",  "--crossover", "--jobs-per-child",
                "--workfile", "--seed",       "--label",     "--dir",
                "--cpus",     "--no-sandbox", "--json",      "--help",
                "JPM/child",  "JTI",          "crossover",   "Kernel Throughput",
        };
        Run r = bin_run((const char *const[]){ LOADGEN, "reaim", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_expect(strstr(r.out, want[i]), "no %s in: %s", want[i], r.out);
        for (size_t i = 0; i < n_reaim_tests; i++)
                cr_expect(strstr(r.out, reaim_tests[i].name), "no test %s", reaim_tests[i].name);
        cr_expect(strstr(r.out, reaim_default_workfile), "the built-in workfile is not shown");
        bin_run_done(&r);
}
