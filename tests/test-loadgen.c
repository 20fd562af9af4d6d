/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real loadgen binary, run as a user runs it: list, each load for a short real run, signals,
 * no process left behind, bad arguments, JSON. Plus the pure parsers of loadgen/load.c.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- running the binary */

typedef struct Run {
        int status;
        pid_t pid;
        char *dir, *out_path, *err_path;
        char *out, *err;
} Run;

/* Starts argv in a new session, so kill(-pid, 0) tells whether any process of it is left. */
static void start(Run *r, const char *const argv[]) {
        pid_t parent = getpid();

        r->dir = make_tmpdir();
        cr_assert_gt(asprintf(&r->out_path, "%s/out", r->dir), 0);
        cr_assert_gt(asprintf(&r->err_path, "%s/err", r->dir), 0);
        r->pid = fork();
        cr_assert_geq(r->pid, 0);
        if (r->pid == 0) {
                int o = open(r->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int e = open(r->err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

                die_with_parent(parent);
                if (setsid() < 0 || o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 ||
                    dup2(e, STDERR_FILENO) < 0)
                        _exit(126);
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
}

static void finish(Run *r) {
        cr_assert_eq(waitpid(r->pid, &r->status, 0), r->pid);
        r->out = read_all(r->out_path);
        r->err = read_all(r->err_path);
}

static Run run(const char *const argv[]) {
        Run r = { 0 };

        start(&r, argv);
        finish(&r);
        return r;
}

static void run_done(Run *r) {
        /* Nothing of the run may outlive it; a stray would also be SIGKILLed here. */
        if (kill(-r->pid, 0) == 0)
                (void) kill(-r->pid, SIGKILL);
        rm_rf(r->dir);
        free(r->dir);
        free(r->out_path);
        free(r->err_path);
        free(r->out);
        free(r->err);
}

static bool session_gone(pid_t sid) {
        return kill(-sid, 0) < 0 && errno == ESRCH;
}

/* "NAME: WORK UNIT in S.CC s, CPU P%" -> work, elapsed in centiseconds, cpu percent. */
static void parse_text(const char *out, const char *name, uint64_t *work, uint64_t *cs,
                       uint64_t *pct) {
        const char *p = strstr(out, name);
        const char *in;
        unsigned long long s, c, cpu;

        cr_assert(p, "no \"%s\" in output: %s", name, out);
        cr_assert_eq(sscanf(p + strlen(name), ": %" SCNu64, work), 1, "output: %s", out);
        in = strstr(p, " in ");
        cr_assert(in, "output: %s", out);
        cr_assert_eq(sscanf(in, " in %llu.%llu s, CPU %llu%%", &s, &c, &cpu), 3, "output: %s", out);
        *cs = s * 100 + c;
        *pct = cpu;
}

static uint64_t json_number(const char *out, const char *key) {
        _cleanup_free_ char *k = NULL;
        const char *p;
        uint64_t v;

        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        p = strstr(out, k);
        cr_assert(p, "no %s in %s", key, out);
        cr_assert_eq(sscanf(p + strlen(k), "%" SCNu64, &v), 1);
        return v;
}

/* ---- commands */

Test(loadgen, list_names_the_three_loads) {
        Run r = run((const char *const[]){ LOADGEN, "list", NULL });

        cr_expect(exited_with(r.status, 0), "stderr: %s", r.err);
        cr_expect(strstr(r.out, "no_load"));
        cr_expect(strstr(r.out, "process_load"));
        cr_expect(strstr(r.out, "token hops / 10^4"));
        cr_expect(strstr(r.out, "mem_load"));
        cr_expect(strstr(r.out, "passes"));
        run_done(&r);
}

Test(loadgen, help_and_version) {
        Run h = run((const char *const[]){ LOADGEN, "--help", NULL });
        Run rh = run((const char *const[]){ LOADGEN, "run", "--help", NULL });
        Run v = run((const char *const[]){ LOADGEN, "--version", NULL });

        cr_expect(exited_with(h.status, 0));
        cr_expect(strstr(h.out, "list") && strstr(h.out, "run"));
        cr_expect(exited_with(rh.status, 0));
        cr_expect(strstr(rh.out, "--duration") && strstr(rh.out, "--mem") &&
                  strstr(rh.out, "--json"));
        cr_expect(exited_with(v.status, 0));
        cr_expect(strncmp(v.out, "loadgen ", 8) == 0, "%s", v.out);
        run_done(&h);
        run_done(&rh);
        run_done(&v);
}

Test(loadgen, unknown_load_exits_2) {
        Run r = run((const char *const[]){ LOADGEN, "run", "no_such_load", NULL });

        cr_expect(exited_with(r.status, 2));
        cr_expect(strstr(r.err, "no_such_load"), "stderr: %s", r.err);
        cr_expect_str_empty(r.out);
        run_done(&r);
}

Test(loadgen, bad_numbers_exit_2) {
        static const char *const bad[][2] = {
                { "--duration", "abc" }, { "--duration", "-1" }, { "--duration", "0" },
                { "--duration", "1.x" }, { "--mem", "12Q" },     { "--mem", "0" },
                { "--mem", "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = run((const char *const[]){ LOADGEN, "run", "no_load", bad[i][0], bad[i][1],
                                                   NULL });

                cr_expect(exited_with(r.status, 2), "%s %s", bad[i][0], bad[i][1]);
                cr_expect(strstr(r.err, "Invalid"), "%s %s: %s", bad[i][0], bad[i][1], r.err);
                run_done(&r);
        }
}

Test(loadgen, unknown_command_exits_2) {
        Run r = run((const char *const[]){ LOADGEN, "walk", NULL });

        cr_expect(exited_with(r.status, 2));
        cr_expect(strstr(r.err, "walk"));
        run_done(&r);
}

/* ---- loads */

Test(loadgen, no_load_does_no_work_for_its_duration) {
        Run r = run((const char *const[]){ LOADGEN, "run", "no_load", "--duration", "0.3", NULL });
        uint64_t work = 1, cs = 0, pct = 100;

        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        parse_text(r.out, "no_load", &work, &cs, &pct);
        cr_expect_eq(work, 0);
        cr_expect(cs >= 29 && cs <= 45, "elapsed %" PRIu64 " cs", cs);
        cr_expect_lt(pct, 10);
        run_done(&r);
}

Test(loadgen, process_load_passes_tokens_and_leaves_nothing, .timeout = 20) {
        Run r = run(
                (const char *const[]){ LOADGEN, "run", "process_load", "--duration", "1", NULL });
        uint64_t work = 0, cs = 0, pct = 0;

        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        parse_text(r.out, "process_load", &work, &cs, &pct);
        cr_expect_gt(work, 1000);
        cr_expect_gt(pct, 0);
        cr_expect(cs >= 100 && cs < 300, "elapsed %" PRIu64 " cs", cs);
        cr_expect(session_gone(r.pid), "a process of the run is left");
        run_done(&r);
}

Test(loadgen, mem_load_completes_passes) {
        Run r = run((const char *const[]){ LOADGEN, "run", "mem_load", "--mem", "16M", "--duration",
                                           "0.5", NULL });
        uint64_t work = 0, cs = 0, pct = 0;

        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        parse_text(r.out, "mem_load", &work, &cs, &pct);
        cr_expect_geq(work, 1);
        cr_expect_gt(pct, 50); /* in-process and busy */
        run_done(&r);
}

Test(loadgen, sigterm_ends_process_load_with_a_report, .timeout = 20) {
        Run r = { 0 };
        uint64_t work = 0, cs = 0, pct = 0, t0;

        start(&r,
              (const char *const[]){ LOADGEN, "run", "process_load", "--duration", "30", NULL });
        usleep(500000);
        t0 = now_usec();
        cr_assert_eq(kill(r.pid, SIGTERM), 0);
        finish(&r);
        cr_expect_lt(now_usec() - t0, 2000000);
        cr_assert(exited_with(r.status, 0), "stderr: %s", r.err);
        parse_text(r.out, "process_load", &work, &cs, &pct);
        cr_expect_gt(work, 0);
        cr_expect(strstr(r.out, "(interrupted)"), "%s", r.out);
        cr_expect(session_gone(r.pid), "a process of the run is left");
        run_done(&r);
}

Test(loadgen, json_has_the_same_work_as_text, .timeout = 20) {
        /* One run cannot print both forms; the text line is computed from these same fields, so
         * check they are there, parse and hold together. */
        Run j = run((const char *const[]){ LOADGEN, "run", "mem_load", "--mem", "4M", "--duration",
                                           "0.3", "--json", NULL });
        uint64_t work, elapsed, cpu, pct;

        cr_assert(exited_with(j.status, 0), "stderr: %s", j.err);
        cr_expect(strstr(j.out, "\"load\": \"mem_load\""), "%s", j.out);
        work = json_number(j.out, "work");
        elapsed = json_number(j.out, "elapsed_usec");
        cpu = json_number(j.out, "cpu_usec");
        pct = json_number(j.out, "cpu_pct");
        cr_expect_geq(work, 1);
        cr_expect(elapsed >= 300000 && elapsed < 1500000, "elapsed %" PRIu64, elapsed);
        cr_expect_eq(pct, cpu * 100 / elapsed);
        cr_expect(j.out[0] == '{' && strstr(j.out, "}\n"), "%s", j.out);
        run_done(&j);
}

/* ---- parsers */

Test(parse, seconds) {
        uint64_t v = 0;

        cr_expect_eq(parse_seconds("0.3", &v), 0);
        cr_expect_eq(v, 300000);
        cr_expect_eq(parse_seconds("5", &v), 0);
        cr_expect_eq(v, 5000000);
        cr_expect_eq(parse_seconds("2.000001", &v), 0);
        cr_expect_eq(v, 2000001);
        v = 7;
        cr_expect_eq(parse_seconds("0", &v), -ERANGE);
        cr_expect_eq(parse_seconds("1.0000001", &v), -EINVAL);
        cr_expect_eq(parse_seconds("-1", &v), -EINVAL);
        cr_expect_eq(parse_seconds("1.", &v), -EINVAL);
        cr_expect_eq(parse_seconds("", &v), -EINVAL);
        cr_expect_eq(parse_seconds("1s", &v), -EINVAL);
        cr_expect_eq(parse_seconds("99999999999999999999999", &v), -ERANGE);
        cr_expect_eq(v, 7, "failed parses must not write the output");
}

Test(parse, sizes) {
        uint64_t v = 0;

        cr_expect_eq(parse_size("16M", &v), 0);
        cr_expect_eq(v, UINT64_C(16) << 20);
        cr_expect_eq(parse_size("1GiB", &v), 0);
        cr_expect_eq(v, UINT64_C(1) << 30);
        cr_expect_eq(parse_size("4096", &v), 0);
        cr_expect_eq(v, 4096);
        cr_expect_eq(parse_size("2kB", &v), 0);
        cr_expect_eq(v, 2048);
        v = 7;
        cr_expect_eq(parse_size("0", &v), -ERANGE);
        cr_expect_eq(parse_size("16Q", &v), -EINVAL);
        cr_expect_eq(parse_size("16Mx", &v), -EINVAL);
        cr_expect_eq(parse_size("-1", &v), -EINVAL);
        cr_expect_eq(parse_size("99999999999T", &v), -ERANGE);
        cr_expect_eq(v, 7);
}
