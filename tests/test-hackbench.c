/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen hackbench and loadgen pipe, run as a user runs them, at tiny sizes: the seed's rows in
 * the order given, plausible values, the JSON equal to the table, nothing left behind (also after
 * SIGINT), limits and bad values refused with exit 2 before anything starts. hackbench_once() as
 * schedbench calls it (its stop flag). And the pure parts: counts, rows, placements.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpumask.h"
#include "hackbench.h"
#include "load.h"
#include "macro.h"
#include "pipe.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- helpers */

/* The next "N groups: Time: S.mmm" row from *p: groups and milliseconds. */
static bool next_hackbench_row(const char **p, unsigned *groups, uint64_t *msec) {
        unsigned long long s, ms;
        int n = 0;

        while (**p) {
                const char *eol = strchrnul(*p, '\n');

                if (sscanf(*p, "%u groups: Time: %llu.%3llu%n", groups, &s, &ms, &n) == 3 &&
                    (*p)[n] == '\n' && n == eol - *p) {
                        *p = eol + 1;
                        *msec = s * 1000 + ms;
                        return true;
                }
                *p = *eol ? eol + 1 : eol;
        }
        return false;
}

/* Every unsigned value of "key": N after `from`, in order. */
static size_t json_u64s(const char *from, const char *key, uint64_t *v, size_t max) {
        _cleanup_free_ char *k = NULL;
        size_t n = 0;

        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        for (const char *p = strstr(from, k); p && n < max; p = strstr(p + 1, k))
                cr_assert_eq(sscanf(p + strlen(k), "%" SCNu64, &v[n++]), 1, "%s", p);
        return n;
}

/* The JSON's "rows" array onwards. */
static const char *json_rows(const char *json) {
        const char *p = strstr(json, "\"rows\": [");

        cr_assert(p, "no rows in %s", json);
        return p;
}

static void expect_no_run_dir(pid_t pid) {
        _cleanup_free_ char *path = NULL;

        cr_assert_gt(asprintf(&path, "/var/tmp/loadgen-%d", (int) pid), 0);
        cr_expect_neq(access(path, F_OK), 0, "%s is left", path);
}

/* Runs argv to the end; checks the exit code and that nothing is left. */
static Run run_clean(const char *const argv[], int code) {
        Dirs d = test_dirs();
        Run r = bin_run(argv);

        cr_assert(exited_with(r.status, code), "%s %s: status %d, stderr: %s", argv[1], argv[2],
                  r.status, r.err);
        expect_clean(&r, &d);
        expect_no_run_dir(r.pid);
        test_dirs_done(&d);
        return r;
}

/* ---- pure functions */

Test(hackbench_unit, tasks_and_fds) {
        HackbenchParams p;

        hackbench_params_init(&p);
        cr_expect_eq(p.groups, 10);
        cr_expect_eq(p.fds, 20);
        cr_expect_eq(p.loops, 100);
        cr_expect_eq(p.datasize, 100);
        cr_expect(!p.pipe && !p.threads);
        cr_expect_eq(hackbench_tasks(&p), 400);
        /* processes: the caller holds one group's 20 pairs at a time, plus ready and wake */
        cr_expect_eq(hackbench_fds(&p), 44);
        p.threads = true;
        cr_expect_eq(hackbench_fds(&p), 404);
        p.groups = 160;
        p.fds = 3;
        cr_expect_eq(hackbench_tasks(&p), 960);
        cr_expect_eq(hackbench_fds(&p), 964);
}

Test(hackbench_unit, row_truncates_to_milliseconds_as_rt_tests) {
        static const struct {
                unsigned groups;
                uint64_t usec;
                const char *want;
        } cases[] = {
                { 10, 1332999, "10 groups: Time: 1.332\n" },
                { 160, 9648000, "160 groups: Time: 9.648\n" },
                { 1, 999, "1 groups: Time: 0.000\n" },
                { 2, 61001, "2 groups: Time: 0.061\n" },
                { 100, 12000000, "100 groups: Time: 12.000\n" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char buf[64];
                int n = hackbench_format_row(buf, sizeof buf, cases[i].groups, cases[i].usec);

                cr_expect_str_eq(buf, cases[i].want);
                cr_expect_eq(n, (int) strlen(cases[i].want));
        }
}

Test(pipe_unit, placements_parse_in_order) {
        PipePlacement p[PIPE_MAX_PLACEMENTS];
        size_t n = 0, bad = 99;

        cr_assert_eq(pipe_parse_placements("same,cross,none,node,same", p, &n, &bad), 0);
        cr_assert_eq(n, 5);
        cr_expect(p[0] == PIPE_SAME && p[1] == PIPE_CROSS && p[2] == PIPE_NONE &&
                  p[3] == PIPE_NODE && p[4] == PIPE_SAME);
        cr_assert_eq(pipe_parse_placements("cross", p, &n, NULL), 0);
        cr_expect(n == 1 && p[0] == PIPE_CROSS);
        for (unsigned i = 0; i < _PIPE_PLACEMENT_MAX; i++)
                cr_expect_not_null(pipe_placement_to_string((PipePlacement) i));
        cr_expect_str_eq(pipe_placement_to_string(PIPE_NODE), "node");
        cr_expect_null(pipe_placement_to_string(_PIPE_PLACEMENT_MAX));
}

Test(pipe_unit, bad_placements_say_where) {
        static const struct {
                const char *s;
                size_t bad;
        } cases[] = {
                { "", 0 },      { "foo", 0 },         { "same,", 5 },
                { ",same", 0 }, { "same,,cross", 5 }, { "samex", 0 },
                { "sam", 0 },   { "same,Cross", 5 },  { "cross,same,nod", 11 },
        };
        PipePlacement p[PIPE_MAX_PLACEMENTS];
        size_t n = 77;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                size_t bad = 99;

                cr_expect_eq(pipe_parse_placements(cases[i].s, p, &n, &bad), -EINVAL, "\"%s\"",
                             cases[i].s);
                cr_expect_eq(bad, cases[i].bad, "\"%s\": at %zu", cases[i].s, bad);
        }
        cr_expect_eq(n, 77, "n written on failure");
        /* one more than fits */
        cr_expect_eq(pipe_parse_placements("same,same,same,same,same,same,same,same,same,same,"
                                           "same,same,same,same,same,same,same",
                                           p, &n, NULL),
                     -EINVAL);
}

static CpuMask *mask(const char *list) {
        CpuMask *m = NULL;

        cr_assert_eq(cpumask_parse(list, 64, &m, NULL), 0, "%s", list);
        return m;
}

Test(pipe_unit, pick_cpus) {
        _cleanup_cpumask_ CpuMask *two = mask("2,5"), *one = mask("3"), *all = mask("0-7");
        _cleanup_cpumask_ CpuMask *n0 = mask("0-3"), *n1 = mask("4-7"), *empty = mask("");
        const CpuMask *nodes[] = { n0, n1 };
        const CpuMask *nodes_gap[] = { empty, n0, n1 };
        int c[2] = { 42, 42 };

        cr_expect_eq(pipe_pick_cpus(PIPE_NONE, one, NULL, 0, c), 0);
        cr_expect(c[0] == -1 && c[1] == -1);
        cr_expect_eq(pipe_pick_cpus(PIPE_SAME, two, NULL, 0, c), 0);
        cr_expect(c[0] == 2 && c[1] == 2, "%d %d", c[0], c[1]);
        cr_expect_eq(pipe_pick_cpus(PIPE_CROSS, two, NULL, 0, c), 0);
        cr_expect(c[0] == 2 && c[1] == 5, "%d %d", c[0], c[1]);
        cr_expect_eq(pipe_pick_cpus(PIPE_CROSS, one, NULL, 0, c), -ENOENT);
        cr_expect_eq(pipe_pick_cpus(PIPE_SAME, empty, NULL, 0, c), -ENOENT);
        cr_expect_eq(pipe_pick_cpus(PIPE_NODE, all, nodes, 2, c), 0);
        cr_expect(c[0] == 0 && c[1] == 4, "%d %d", c[0], c[1]);
        cr_expect_eq(pipe_pick_cpus(PIPE_NODE, two, nodes_gap, 3, c), 0);
        cr_expect(c[0] == 2 && c[1] == 5, "%d %d", c[0], c[1]);
        cr_expect_eq(pipe_pick_cpus(PIPE_NODE, all, nodes, 1, c), -ENOENT, "one node");
        cr_expect_eq(pipe_pick_cpus(PIPE_NODE, one, nodes, 2, c), -ENOENT, "CPUs on one node");
}

Test(pipe_unit, row_like_perf) {
        char buf[128];
        double sec, us;
        uint64_t ops;
        char name[16];

        (void) pipe_format_row(buf, sizeof buf, PIPE_CROSS, 1000000, 4567113);
        cr_assert_eq(sscanf(buf, "%15s Total time: %lf [sec] %lf usecs/op %" SCNu64 " ops/sec",
                            name, &sec, &us, &ops),
                     4, "%s", buf);
        cr_expect_str_eq(name, "cross");
        cr_expect(sec > 4.566 && sec < 4.568, "%s", buf);
        cr_expect(strstr(buf, " 4.567113 usecs/op"), "%s", buf);
        cr_expect_eq(ops, 218956, "%s", buf); /* perf's figure for the same time */
        cr_expect_eq(buf[strlen(buf) - 1], '\n');
}

/* ---- hackbench_once(), as schedbench calls it */

static volatile sig_atomic_t stop_flag;

static void on_usr1(int sig) {
        (void) sig;
}

/* As a stop handler does: sets the flag, and the signal interrupts the wait. */
static void *stopper(void *userdata) {
        pthread_t *main_thread = userdata;

        usleep(1000000);
        stop_flag = 1;
        (void) pthread_kill(*main_thread, SIGUSR1);
        return NULL;
}

static bool no_children_left(void) {
        return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

Test(hackbench_once, runs_and_reaps_everything, .timeout = 30) {
        HackbenchParams p;
        uint64_t usec = 0;

        hackbench_params_init(&p);
        p.groups = 1;
        p.loops = 10;
        cr_assert_eq(hackbench_once(&p, NULL, &usec), 0);
        cr_expect(usec > 0 && usec < 5000000, "%" PRIu64 " usec", usec);
        cr_expect(no_children_left());
        p.threads = true;
        p.pipe = true;
        usec = 0;
        cr_assert_eq(hackbench_once(&p, NULL, &usec), 0);
        cr_expect(usec > 0 && usec < 5000000, "%" PRIu64 " usec", usec);
        cr_expect(no_children_left());
        p.datasize = 0;
        cr_expect_eq(hackbench_once(&p, NULL, &usec), -EINVAL);
}

Test(hackbench_once, stop_ends_it_and_kills_every_worker, .timeout = 60) {
        struct sigaction sa = { .sa_handler = on_usr1 }; /* no SA_RESTART: waits return */
        pthread_t self = pthread_self(), t;
        HackbenchParams p;
        uint64_t usec = 0;

        cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
        hackbench_params_init(&p);
        p.groups = 4;
        p.loops = 100000; /* minutes */
        for (int threads = 0; threads < 2; threads++) {
                uint64_t t0 = now_usec();

                p.threads = threads;
                stop_flag = 0;
                cr_assert_eq(pthread_create(&t, NULL, stopper, &self), 0);
                cr_expect_eq(hackbench_once(&p, &stop_flag, &usec), -EINTR, "threads %d", threads);
                cr_expect_lt(now_usec() - t0, 20000000, "threads %d: took too long", threads);
                cr_expect(no_children_left(), "threads %d", threads);
                cr_assert_eq(pthread_join(t, NULL), 0);
        }
        stop_flag = 1;
        cr_expect_eq(hackbench_once(&p, &stop_flag, &usec), -EINTR, "stop set before");
        cr_expect(no_children_left());
}

/* ---- loadgen hackbench */

static void expect_rows(const char *out, const unsigned *groups, size_t n, uint64_t *msec) {
        const char *p = out;

        for (size_t i = 0; i < n; i++) {
                unsigned g = 0;

                cr_assert(next_hackbench_row(&p, &g, &msec[i]), "row %zu missing: %s", i, out);
                cr_expect_eq(g, groups[i], "row %zu: %u groups: %s", i, g, out);
                cr_expect_lt(msec[i], 10000, "row %zu: %" PRIu64 " ms: %s", i, msec[i], out);
        }
        cr_expect_str_empty(p, "more than %zu rows: %s", n, out);
}

Test(hackbench, processes_sockets_pipes_threads_print_the_seeds_rows, .timeout = 60) {
        static const char *const modes[][2] = { { "--fds", "20" },
                                                { "--pipe", NULL },
                                                { "--threads", NULL } };
        static const unsigned groups[] = { 2, 1 };

        skip_unless_root();
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                Run r = run_clean((const char *const[]){ LOADGEN, "hackbench", "--groups", "2,1",
                                                         "--loops", "10", modes[m][0], modes[m][1],
                                                         NULL },
                                  0);
                uint64_t ms[2];

                cr_log_info("%s: %s", modes[m][0], r.out);
                expect_rows(r.out, groups, 2, ms);
                bin_run_done(&r);
        }
}

Test(hackbench, json_equals_the_table, .timeout = 60) {
        _cleanup_free_ char *tmp = NULL, *path = NULL, *json = NULL;
        static const unsigned groups[] = { 1, 3, 2 };
        uint64_t ms[3], g[8], usec[8], runs[16];
        Run r;

        skip_unless_root();
        tmp = make_tmpdir();
        cr_assert_gt(asprintf(&path, "%s/report.json", tmp), 0);
        {
                _cleanup_free_ char *opt = NULL;

                cr_assert_gt(asprintf(&opt, "--json=%s", path), 0);
                r = run_clean((const char *const[]){ LOADGEN, "hackbench", "-g", "1-3:2,2", "-l",
                                                     "20", "--runs", "2", opt, NULL },
                              0);
        }
        expect_rows(r.out, groups, 3, ms);
        json = read_all(path);
        cr_assert_eq(json_u64s(json_rows(json), "groups", g, 8), 3, "%s", json);
        cr_assert_eq(json_u64s(json_rows(json), "time_usec", usec, 8), 3, "%s", json);
        for (size_t i = 0; i < 3; i++) {
                cr_expect_eq(g[i], groups[i], "%s", json);
                cr_expect_eq(usec[i] / 1000, ms[i], "row %zu: %" PRIu64 " usec, %" PRIu64 " ms", i,
                             usec[i], ms[i]);
                cr_expect_gt(usec[i], 0);
        }
        cr_expect(strstr(json, "\"loops\": 20") && strstr(json, "\"runs\": 2"), "%s", json);
        /* each row's time is the mean of its two runs */
        {
                const char *row = json_rows(json);

                for (size_t i = 0; i < 3; i++) {
                        row = strstr(row, "\"runs_usec\": [");
                        cr_assert(row);
                        cr_assert_eq(sscanf(row, "\"runs_usec\": [ %" SCNu64 " , %" SCNu64,
                                            &runs[0], &runs[1]),
                                     2, "%.80s", row);
                        cr_expect_eq((runs[0] + runs[1]) / 2, usec[i], "row %zu", i);
                        row++;
                }
        }
        bin_run_done(&r);
        rm_rf(tmp);
}

Test(hackbench, json_on_stdout_replaces_the_table_and_label_heads_it, .timeout = 30) {
        Run j, l;
        uint64_t v[4], ms;
        static const unsigned one[] = { 1 };

        skip_unless_root();
        j = run_clean(
                (const char *const[]){ LOADGEN, "hackbench", "-g", "1", "-l", "5", "--json", NULL },
                0);
        cr_expect(strncmp(j.out, "{", 1) == 0, "%s", j.out);
        cr_expect_null(strstr(j.out, "groups: Time"), "%s", j.out);
        cr_expect_eq(json_u64s(json_rows(j.out), "groups", v, 4), 1, "%s", j.out);
        cr_expect(strstr(j.out, "\"benchmark\": \"hackbench\""), "%s", j.out);
        l = run_clean((const char *const[]){ LOADGEN, "hackbench", "-g", "1", "-l", "5", "--label",
                                             "cfs-v2", NULL },
                      0);
        cr_expect(strncmp(l.out, "Hackbench:\tcfs-v2\n", 18) == 0, "%s", l.out);
        expect_rows(l.out + 18, one, 1, &ms);
        bin_run_done(&j);
        bin_run_done(&l);
}

static void interrupt_mid_run(const char *const argv[]) {
        Dirs d = test_dirs();
        Run r = { 0 };

        bin_start(&r, argv);
        usleep(1500000);
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        bin_finish(&r);
        cr_expect(exited_with(r.status, 128 + SIGINT), "%s: status %d, stderr: %s", argv[1],
                  r.status, r.err);
        cr_expect(strstr(r.err, "Interrupted"), "stderr: %s", r.err);
        expect_clean(&r, &d);
        expect_no_run_dir(r.pid);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(hackbench, sigint_mid_run_leaves_nothing, .timeout = 60) {
        skip_unless_root();
        /* tens of seconds each if not interrupted */
        interrupt_mid_run(
                (const char *const[]){ LOADGEN, "hackbench", "-g", "10", "-l", "5000", NULL });
        interrupt_mid_run((const char *const[]){ LOADGEN, "hackbench", "-g", "10", "-l", "5000",
                                                 "--threads", NULL });
}

static uint64_t read_u64(const char *path) {
        _cleanup_free_ char *s = read_all(path);
        uint64_t v = 0;

        cr_assert_eq(sscanf(s, "%" SCNu64, &v), 1, "%s: \"%s\"", path, s);
        return v;
}

Test(hackbench, more_tasks_than_the_machine_holds_are_refused_up_front) {
        uint64_t limit =
                MIN(read_u64("/proc/sys/kernel/threads-max"), read_u64("/proc/sys/kernel/pid_max"));
        _cleanup_free_ char *axis = NULL, *what = NULL;
        unsigned groups = (unsigned) (limit / 40 + 1);
        struct rlimit rl;
        Run r;

        skip_unless_root();
        /* the smaller of kernel.threads-max and kernel.pid_max, passed by one group */
        cr_assert_gt(asprintf(&axis, "1,%u", groups), 0);
        cr_assert_gt(asprintf(&what, "hackbench %u groups", groups), 0);
        r = run_clean((const char *const[]){ LOADGEN, "hackbench", "--groups", axis, NULL }, 2);
        cr_expect(strstr(r.err, what) && strstr(r.err, "kernel."), "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        bin_run_done(&r);
        /* threads hold every descriptor in one process: GROUPS x 40 + 4 beyond the hard
         * RLIMIT_NOFILE, with no more tasks than the machine holds */
        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max / 40 + 1 >= groups) {
                cr_log_info("RLIMIT_NOFILE %" PRIu64 ": no group count passes it first",
                            (uint64_t) rl.rlim_max);
                return;
        }
        free(axis);
        cr_assert_gt(asprintf(&axis, "%" PRIu64, (uint64_t) rl.rlim_max / 40 + 1), 0);
        r = run_clean(
                (const char *const[]){ LOADGEN, "hackbench", "--groups", axis, "--threads", NULL },
                2);
        cr_expect(strstr(r.err, "RLIMIT_NOFILE"), "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        bin_run_done(&r);
}

Test(hackbench, bad_values_exit_2_before_anything_runs) {
        static const char *const bad[][2] = {
                { "--groups", "0" },    { "--groups", "abc" },  { "--groups", "10-5" },
                { "--groups", "1,,2" }, { "--groups", "" },     { "--loops", "0" },
                { "--loops", "x" },     { "--fds", "0" },       { "--datasize", "-1" },
                { "--runs", "0" },      { "--cpus", "0-4096" }, { "--bogus", "1" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = run_clean(
                        (const char *const[]){ LOADGEN, "hackbench", bad[i][0], bad[i][1], NULL },
                        2);

                cr_expect(strstr(r.err, bad[i][0] + 2) || strstr(r.err, bad[i][1]), "%s %s: %s",
                          bad[i][0], bad[i][1], r.err);
                cr_expect_str_empty(r.out);
                bin_run_done(&r);
        }
}

Test(hackbench, help_names_every_option) {
        static const char *const opts[] = { "--groups", "--loops",      "--datasize", "--fds",
                                            "--pipe",   "--threads",    "--runs",     "--label",
                                            "--cpus",   "--no-sandbox", "--json",     "--help",
                                            "10-40:10" };
        Run r = bin_run((const char *const[]){ LOADGEN, "hackbench", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(opts); i++)
                cr_expect(strstr(r.out, opts[i]), "no %s in: %s", opts[i], r.out);
        bin_run_done(&r);
}

/* ---- loadgen pipe */

/* The row of placement name: usecs/op and ops/sec. */
static void pipe_row(const char *out, const char *name, double *us, uint64_t *ops) {
        _cleanup_free_ char *k = NULL;
        const char *p;
        double sec;

        cr_assert_gt(asprintf(&k, "\n%s ", name), 0);
        p = strstr(out, k);
        cr_assert(p, "no %s row: %s", name, out);
        cr_assert_eq(sscanf(p + strlen(k),
                            " Total time: %lf [sec] %lf usecs/op %" SCNu64 " ops/sec", &sec, us,
                            ops),
                     3, "%s", out);
}

Test(pipe, same_and_cross_rows_with_plausible_usecs, .timeout = 60) {
        static const char *const modes[] = { "--loops=3000", "--threads" };

        skip_unless_root();
        for (size_t m = 0; m < ELEMENTSOF(modes); m++) {
                Run r = run_clean((const char *const[]){ LOADGEN, "pipe", "-l", "3000", "-P",
                                                         "cross,same,none", modes[m], NULL },
                                  0);
                const char *same, *cross, *none;
                double us;
                uint64_t ops;

                cr_log_info("%s", r.out);
                cr_expect(strstr(r.out, "# 3000 round trips between two"), "%s", r.out);
                cross = strstr(r.out, "\ncross ");
                same = strstr(r.out, "\nsame ");
                none = strstr(r.out, "\nnone ");
                cr_expect(cross && same && none && cross < same && same < none, "order: %s", r.out);
                for (const char *const *n = (const char *const[]){ "cross", "same", "none", NULL };
                     *n; n++) {
                        pipe_row(r.out, *n, &us, &ops);
                        cr_expect(us > 0 && us < 1e6, "%s: %f usecs/op", *n, us);
                        cr_expect(ops > 0 && ops < 1e8, "%s: %" PRIu64 " ops/sec", *n, ops);
                        /* ops/sec is the inverse of usecs/op */
                        cr_expect(fabs((double) ops * us / 1e6 - 1) < 0.01, "%s: %s", *n, r.out);
                }
                bin_run_done(&r);
        }
}

Test(pipe, json_equals_the_table, .timeout = 30) {
        _cleanup_free_ char *tmp = make_tmpdir(), *path = NULL, *opt = NULL, *json = NULL;
        uint64_t total[4], cpu0[4], cpu1[4];
        double us;
        uint64_t ops;
        Run r;

        skip_unless_root();
        cr_assert_gt(asprintf(&path, "%s/r.json", tmp), 0);
        cr_assert_gt(asprintf(&opt, "--json=%s", path), 0);
        r = run_clean((const char *const[]){ LOADGEN, "pipe", "-l", "2000", opt, NULL }, 0);
        json = read_all(path);
        cr_assert_eq(json_u64s(json_rows(json), "total_usec", total, 4), 2, "%s", json);
        cr_assert_eq(json_u64s(json_rows(json), "cpu0", cpu0, 4), 2, "%s", json);
        cr_assert_eq(json_u64s(json_rows(json), "cpu1", cpu1, 4), 2, "%s", json);
        cr_expect(strstr(json, "\"placement\": \"same\"") && strstr(json, "\"loops\": 2000"), "%s",
                  json);
        cr_expect_eq(cpu0[0], cpu1[0], "same: one CPU");
        cr_expect_neq(cpu0[1], cpu1[1], "cross: two CPUs");
        pipe_row(r.out, "same", &us, &ops);
        cr_expect(fabs(us - (double) total[0] / 2000) < 1e-5, "%f vs %" PRIu64, us, total[0]);
        pipe_row(r.out, "cross", &us, &ops);
        cr_expect(fabs(us - (double) total[1] / 2000) < 1e-5, "%f vs %" PRIu64, us, total[1]);
        bin_run_done(&r);
        rm_rf(tmp);
}

Test(pipe, node_on_one_node_and_cross_on_one_cpu_are_refused) {
        Run r;

        skip_unless_root();
        if (access("/sys/devices/system/node/node1", F_OK) == 0)
                cr_skip_test("this machine has two NUMA nodes");
        r = run_clean((const char *const[]){ LOADGEN, "pipe", "-P", "same,node", NULL }, 2);
        cr_expect(strstr(r.err, "--placement node needs CPUs on two NUMA nodes") &&
                          strstr(r.err, "has 1 node"),
                  "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        bin_run_done(&r);
        r = run_clean((const char *const[]){ LOADGEN, "pipe", "--cpus", "0", "-P", "cross", NULL },
                      2);
        cr_expect(strstr(r.err, "--placement cross needs two CPUs"), "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        bin_run_done(&r);
}

Test(pipe, bad_values_exit_2) {
        static const char *const bad[][2] = {
                { "--loops", "0" },         { "--loops", "1e6" },     { "--placement", "" },
                { "--placement", "same," }, { "--placement", "far" }, { "--cpus", "9999" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = run_clean(
                        (const char *const[]){ LOADGEN, "pipe", bad[i][0], bad[i][1], NULL }, 2);

                cr_expect(strstr(r.err, bad[i][0] + 2), "%s %s: %s", bad[i][0], bad[i][1], r.err);
                cr_expect_str_empty(r.out);
                bin_run_done(&r);
        }
}

Test(pipe, sigint_mid_run_leaves_nothing, .timeout = 30) {
        skip_unless_root();
        interrupt_mid_run(
                (const char *const[]){ LOADGEN, "pipe", "-l", "100000000", "-P", "cross", NULL });
}

Test(pipe, help_says_an_op_is_a_round_trip) {
        static const char *const opts[] = { "--loops",      "--placement", "--threads",  "--cpus",
                                            "--no-sandbox", "--json",      "round trip", "node" };
        Run r = bin_run((const char *const[]){ LOADGEN, "pipe", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(opts); i++)
                cr_expect(strstr(r.out, opts[i]), "no %s in: %s", opts[i], r.out);
        bin_run_done(&r);
}
