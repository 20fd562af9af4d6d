/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What loadgen's benchmarks share (loadgen/benchmark.c): axis lists, the up-front limit check,
 * running the measured work in a process of its own inside the run's job cgroup (its result
 * back, its failure told apart, its leftovers and a SIGINT ending everything), and the report.
 * Plus the dispatcher: every benchmark is a command, listed with its seed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "load.h"
#include "macro.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- axes */

static void expect_axis(const char *s, unsigned min, unsigned max, const unsigned *want,
                        size_t n_want) {
        _cleanup_free_ unsigned *v = NULL;
        size_t n = 0, pos = 99;
        int r = axis_parse(s, min, max, &v, &n, &pos);

        cr_assert_eq(r, 0, "\"%s\": %s", s, strerror(-r));
        cr_assert_eq(n, n_want, "\"%s\": %zu values, want %zu", s, n, n_want);
        for (size_t i = 0; i < n; i++)
                cr_expect_eq(v[i], want[i], "\"%s\"[%zu] = %u, want %u", s, i, v[i], want[i]);
}

#define EXPECT_AXIS(s, min, max, ...)                               \
        expect_axis(s, min, max, (const unsigned[]){ __VA_ARGS__ }, \
                    sizeof((const unsigned[]){ __VA_ARGS__ }) / sizeof(unsigned))

Test(axis, numbers_ranges_steps_and_doublings_in_the_order_given) {
        EXPECT_AXIS("10", 1, 1000, 10);
        EXPECT_AXIS("30,10,20", 1, 1000, 30, 10, 20);
        EXPECT_AXIS("3-7", 1, 1000, 3, 4, 5, 6, 7);
        EXPECT_AXIS("10-160:10", 1, 1000, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130,
                    140, 150, 160);
        EXPECT_AXIS("5-12:4", 1, 1000, 5, 9);
        EXPECT_AXIS("2-256x2", 1, 1000, 2, 4, 8, 16, 32, 64, 128, 256);
        EXPECT_AXIS("2-100x3", 1, 1000, 2, 6, 18, 54);
        EXPECT_AXIS("0,4-8:4,64", 0, 64, 0, 4, 8, 64);
        EXPECT_AXIS("7-7", 1, 1000, 7);
        EXPECT_AXIS("4294967295", 0, UINT_MAX, UINT_MAX);
        EXPECT_AXIS("4294967290-4294967295:5", 0, UINT_MAX, 4294967290u, UINT_MAX);
        EXPECT_AXIS("2147483648-4294967295x2", 0, UINT_MAX, 2147483648u);
}

static void expect_axis_error(const char *s, unsigned min, unsigned max, int want,
                              size_t want_pos) {
        unsigned *v = NULL;
        size_t n = 0, pos = 999;
        int r = axis_parse(s, min, max, &v, &n, &pos);

        cr_expect_eq(r, want, "\"%s\": %d, want %d", s, r, want);
        cr_expect_eq(pos, want_pos, "\"%s\": error at %zu, want %zu", s, pos, want_pos);
        cr_expect_null(v, "\"%s\": an array on failure", s);
}

Test(axis, syntax_errors_say_where_and_values_outside_the_range_which_item) {
        expect_axis_error("", 1, 100, -EINVAL, 0);
        expect_axis_error(",", 1, 100, -EINVAL, 0);
        expect_axis_error("10,", 1, 100, -EINVAL, 3);
        expect_axis_error("10,,20", 1, 100, -EINVAL, 3);
        expect_axis_error("ten", 1, 100, -EINVAL, 0);
        expect_axis_error("10 ,20", 1, 100, -EINVAL, 2);
        expect_axis_error("-5", 1, 100, -EINVAL, 0);
        expect_axis_error("+5", 1, 100, -EINVAL, 0);
        expect_axis_error("10-", 1, 100, -EINVAL, 3);
        expect_axis_error("1-10:0", 1, 100, -EINVAL, 5);
        expect_axis_error("2-8x1", 1, 100, -EINVAL, 4);
        expect_axis_error("1-10:", 1, 100, -EINVAL, 5);
        expect_axis_error("1-10y2", 1, 100, -EINVAL, 4);
        expect_axis_error("4,10-5", 1, 100, -ERANGE, 2);
        expect_axis_error("5,0", 1, 100, -ERANGE, 2);
        expect_axis_error("50-200:50", 1, 100, -ERANGE, 0);
        expect_axis_error("4294967296", 0, UINT_MAX, -ERANGE, 0);
        expect_axis_error("1-2000", 1, 5000, -ERANGE, 0); /* more than AXIS_MAX_VALUES */
}

Test(axis, the_option_error_names_the_option_and_the_bad_item) {
        unsigned *v = NULL;
        size_t n = 0;

        /* logged to stderr; the return is what a command acts on */
        cr_expect_eq(bench_parse_axis("groups", "10,500", 1, 100, &v, &n), -EINVAL);
        cr_expect_null(v);
        cr_expect_eq(bench_parse_axis("groups", "10-x", 1, 100, &v, &n), -EINVAL);
        cr_expect_eq(bench_parse_axis("groups", "10,20", 1, 100, &v, &n), 0);
        cr_expect_eq(n, 2);
        free(v);
}

Test(axis, the_largest_value_wherever_it_stands) {
        cr_expect_eq(axis_max((const unsigned[]){ 3, 9, 4 }, 3), 9);
        cr_expect_eq(axis_max((const unsigned[]){ 9, 3 }, 2), 9);
        cr_expect_eq(axis_max((const unsigned[]){ 3, 9 }, 2), 9);
        cr_expect_eq(axis_max(NULL, 0), 0);
}

/* ---- limits */

Test(limits, what_fits_passes_and_what_cannot_run_is_refused) {
        struct rlimit rl;

        cr_expect_eq(bench_check_tasks("a few tasks", 4, 8), 0);
        cr_expect_eq(bench_check_tasks("more tasks than any kernel allows", UINT64_C(1) << 40, 8),
                     -E2BIG);
        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        if (rl.rlim_max != RLIM_INFINITY)
                cr_expect_eq(bench_check_tasks("more files than the hard limit", 4,
                                               (uint64_t) rl.rlim_max + 1),
                             -E2BIG);
}

Test(limits, the_soft_file_limit_is_raised_to_the_hard_one_when_that_is_enough) {
        struct rlimit rl, low;

        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max < 512)
                cr_skip_test("RLIMIT_NOFILE's hard limit is %s",
                             rl.rlim_max == RLIM_INFINITY ? "unlimited" : "below 512");
        low = (struct rlimit){ 64, rl.rlim_max };
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
        cr_expect_eq(bench_check_tasks("400 files", 1, 400), 0);
        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &low), 0);
        cr_expect_eq(low.rlim_cur, rl.rlim_max);
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

/* ---- bench_run */

typedef struct Out {
        int value;
        pid_t pid, stray;
        char cgroup[512];
} Out;

static int fn_reports(void *userdata, void *out) {
        Out *o = out;
        FILE *f = fopen("/proc/self/cgroup", "re");

        o->value = *(int *) userdata * 2;
        o->pid = getpid();
        if (f) {
                size_t n = fread(o->cgroup, 1, sizeof o->cgroup - 1, f);

                o->cgroup[n] = '\0';
                fclose(f);
        }
        return 0;
}

static int fn_fails(void *userdata, void *out) {
        (void) userdata;
        (void) out;
        return -EPROTO;
}

static int fn_exits(void *userdata, void *out) {
        (void) userdata;
        (void) out;
        _exit(3);
}

/* Leaves a process behind in a session of its own: out of the process group bench_run kills. */
static int fn_leaves_a_stray(void *userdata, void *out) {
        Out *o = out;
        pid_t p = fork();

        (void) userdata;
        if (p < 0)
                return -errno;
        if (p == 0) {
                (void) setsid();
                for (;;)
                        pause();
        }
        o->stray = p;
        return 0;
}

static int fn_sleeps(void *userdata, void *out) {
        (void) userdata;
        (void) out;
        sleep(60);
        return 0;
}

static Sandbox *test_sandbox(const char *dir, bool cgroups) {
        SandboxOptions so = { .dir = dir, .cgroups = cgroups };
        Sandbox *sb = NULL;

        cr_assert_eq(sandbox_new(&so, &sb), 0);
        return sb;
}

/* Gone, or a zombie its new parent has not reaped yet (PID 1 here reaps late). */
static bool process_gone(pid_t pid) {
        for (int i = 0; i < 100; i++) {
                _cleanup_free_ char *path = NULL, *stat = NULL;
                const char *rp;

                cr_assert_gt(asprintf(&path, "/proc/%d/stat", (int) pid), 0);
                stat = read_all(path);
                if (stat[0] == '\0')
                        return true;
                rp = strrchr(stat, ')');
                if (rp && rp[1] == ' ' && rp[2] == 'Z')
                        return true;
                usleep(50000);
        }
        return false;
}

Test(run, the_work_runs_in_its_own_process_in_the_job_group_and_its_result_comes_back) {
        _cleanup_free_ char *dir = make_tmpdir();
        Sandbox *sb;
        Out o = { 0 };
        int in = 21;

        skip_unless_root();
        sb = test_sandbox(dir, true);
        cr_expect_eq(bench_run(sb, fn_reports, &in, &o, sizeof o), 0);
        cr_expect_eq(o.value, 42);
        cr_expect_neq(o.pid, getpid());
        cr_expect(strstr(o.cgroup, sandbox_group(sb, SANDBOX_JOB)), "its cgroups: %s", o.cgroup);
        sandbox_free(sb);
        rm_rf(dir);
}

Test(run, an_error_comes_back_and_an_early_exit_is_told_apart) {
        _cleanup_free_ char *dir = make_tmpdir();
        Sandbox *sb;
        Out o = { .value = 7 };

        sb = test_sandbox(dir, false);
        cr_expect_eq(bench_run(sb, fn_fails, NULL, &o, sizeof o), -EPROTO);
        cr_expect_eq(bench_run(sb, fn_exits, NULL, &o, sizeof o), -EIO);
        cr_expect_eq(o.value, 7, "out was written on a failure");
        sandbox_free(sb);
        rm_rf(dir);
}

Test(run, what_the_work_leaves_in_the_groups_is_killed) {
        _cleanup_free_ char *dir = make_tmpdir();
        Sandbox *sb;
        Out o = { 0 };

        skip_unless_root();
        sb = test_sandbox(dir, true);
        cr_assert_eq(bench_run(sb, fn_leaves_a_stray, NULL, &o, sizeof o), 0);
        cr_assert_gt(o.stray, 0);
        cr_expect(process_gone(o.stray), "the stray %d outlived the run", (int) o.stray);
        if (!process_gone(o.stray))
                (void) kill(o.stray, SIGKILL);
        sandbox_free(sb);
        rm_rf(dir);
}

static void *send_sigint(void *arg) {
        (void) arg;
        usleep(300000);
        (void) kill(getpid(), SIGINT);
        return NULL;
}

Test(run, sigint_ends_the_work_at_once_with_eintr) {
        _cleanup_free_ char *dir = make_tmpdir();
        Sandbox *sb;
        pthread_t t;
        Out o = { 0 };
        uint64_t t0;
        int r;

        sb = test_sandbox(dir, false);
        cr_assert_eq(cli_install_stop_handlers(), 0);
        cli_stop = 0;
        cr_assert_eq(pthread_create(&t, NULL, send_sigint, NULL), 0);
        t0 = now_usec();
        r = bench_run(sb, fn_sleeps, NULL, &o, sizeof o);
        cr_expect_eq(r, -EINTR);
        cr_expect_lt(now_usec() - t0, 10 * 1000000u, "took %.1f s",
                     (double) (now_usec() - t0) / 1e6);
        cr_expect_eq(cli_stop, SIGINT);
        pthread_join(t, NULL);
        cli_stop = 0;
        sandbox_free(sb);
        rm_rf(dir);
}

/* ---- the report */

Test(report, json_on_stdout_replaces_the_table_and_a_file_goes_beside_it) {
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *json = NULL;
        Sandbox *sb;
        BenchReport r;
        int saved, null;

        sb = test_sandbox(dir, false);
        cr_assert_eq(bench_report_open(&r, NULL, "x", sb), 0);
        cr_expect_eq(r.table, stdout);
        cr_expect_null(r.json.f);
        cr_expect_eq(bench_report_close(&r), 0);

        cr_assert_gt(asprintf(&path, "%s/r.json", dir), 0);
        cr_assert_eq(bench_report_open(&r, path, "hackbench", sb), 0);
        cr_expect_eq(r.table, stdout);
        cr_assert_not_null(r.json.f);
        json_key(&r.json, "rows");
        json_begin(&r.json, '[');
        json_end(&r.json, ']');
        cr_expect_eq(bench_report_close(&r), 0);
        json = read_all(path);
        cr_expect(strstr(json, "\"benchmark\": \"hackbench\""), "%s", json);
        cr_expect(strstr(json, "\"machine\": {"), "%s", json);
        cr_expect(strstr(json, "\"rows\": []"), "%s", json);
        cr_expect_eq(json[strlen(json) - 2], '}', "%s", json);

        /* stdout on /dev/null meanwhile: nothing of it in the test's output */
        fflush(stdout);
        saved = dup(STDOUT_FILENO);
        null = open("/dev/null", O_WRONLY | O_CLOEXEC);
        cr_assert(saved >= 0 && null >= 0 && dup2(null, STDOUT_FILENO) == STDOUT_FILENO);
        cr_assert_eq(bench_report_open(&r, "", "x", sb), 0);
        cr_expect_null(r.table);
        cr_expect_eq(r.json.f, stdout);
        cr_expect_eq(bench_report_close(&r), 0);
        fflush(stdout);
        cr_assert_eq(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
        close(saved);
        close(null);

        cr_expect_lt(bench_report_open(&r, "/nonexistent/dir/r.json", "x", sb), 0);
        sandbox_free(sb);
        rm_rf(dir);
}

/* ---- the dispatcher */

Test(dispatch, every_benchmark_is_a_command_with_help_and_is_listed) {
        Run l = bin_run((const char *const[]){ LOADGEN, "list", NULL });
        Run h = bin_run((const char *const[]){ LOADGEN, "--help", NULL });

        cr_expect(exited_with(l.status, 0));
        cr_expect(exited_with(h.status, 0));
        for (size_t i = 0; i < n_benchmarks; i++) {
                Run b = bin_run(
                        (const char *const[]){ LOADGEN, benchmarks[i].name, "--help", NULL });

                cr_expect(strstr(l.out, benchmarks[i].name), "list lacks %s", benchmarks[i].name);
                cr_expect(strstr(h.out, benchmarks[i].summary), "--help lacks %s",
                          benchmarks[i].name);
                cr_expect(exited_with(b.status, 0), "%s --help: %s", benchmarks[i].name, b.err);
                cr_expect(strstr(b.out, "Usage: loadgen "), "%s --help: %s", benchmarks[i].name,
                          b.out);
                cr_expect(strstr(b.out, "--json"), "%s --help lacks --json", benchmarks[i].name);
                bin_run_done(&b);
        }
        cr_expect_not_null(benchmark_find("hackbench"));
        cr_expect_null(benchmark_find("hackbenc"));
        bin_run_done(&l);
        bin_run_done(&h);
}

Test(dispatch, a_bad_option_of_any_benchmark_exits_2) {
        for (size_t i = 0; i < n_benchmarks; i++) {
                Run b = bin_run((const char *const[]){ LOADGEN, benchmarks[i].name,
                                                       "--no-such-option", NULL });

                cr_expect(exited_with(b.status, 2), "%s: status %d", benchmarks[i].name, b.status);
                cr_expect_neq(b.err[0], '\0', "%s said nothing", benchmarks[i].name);
                bin_run_done(&b);
        }
}
