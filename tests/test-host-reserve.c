/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's reserve (loadgen/sandbox.h): the run's group capped at all the machine's CPUs but
 * half of one, so that no load can starve its host. Uncapped, process_load's two rings over both
 * CPUs of a 2-CPU host in a nested cpu group stalled the machine for 320 s (issue 21, item 9).
 *
 * The quota as a pure function, the option in every command that makes a sandbox; then, as root,
 * process_load on every CPU with a sleeper in the root cpu group beside it. Only the capped run
 * is made here: without the cap the same run takes the machine down.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "cli.h"
#include "clock.h"
#include "macro.h"
#include "runbin.h"
#include "sandbox.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

#define SLEEP_USEC 10000u /* the sleeper's nap */
#define LATE_MAX_USEC 100000u /* the most it may oversleep with the ring beside it */
#define WATCH_USEC 2500000u /* how long it watches, within the load's 4 s */

Test(host_reserve_quota, is_all_cpus_but_half_of_one) {
        static const struct {
                unsigned ncpus;
                uint64_t period, want;
        } cases[] = {
                { 2, 100000, 150000 }, /* this machine: 1.5 CPUs, half a CPU kept */
                { 1, 100000, 50000 },
                { 0, 100000, 50000 }, /* 0 counts as 1 */
                { 64, 100000, 6350000 },
                { 4, 250000, 875000 },
                { 1, 1000, CGROUP_QUOTA_MIN_USEC }, /* 500 usec: below what the kernel takes */
                { 3, 1001, 2503 }, /* the half rounded down: the host keeps at least half */
                { UINT32_MAX, 1000000, CGROUP_QUOTA_MAX_USEC }, /* beyond the kernel's bound */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_expect_eq(sandbox_host_reserve_quota(cases[i].ncpus, cases[i].period),
                             cases[i].want, "%u CPUs, period %" PRIu64 ": %" PRIu64, cases[i].ncpus,
                             cases[i].period,
                             sandbox_host_reserve_quota(cases[i].ncpus, cases[i].period));
}

Test(host_reserve_option, is_parsed_as_a_shared_option) {
        CliCommon co = CLI_COMMON_INIT;

        cr_expect_not(co.no_host_reserve, "the reserve is on by default");
        cr_expect_eq(cli_parse_common(CLI_ARG_NO_HOST_RESERVE, NULL, &co), 1);
        cr_expect(co.no_host_reserve);
        cr_expect_not(co.no_sandbox, "--no-host-reserve is not --no-sandbox");
        cli_common_done(&co);
}

/* Every command that makes a sandbox takes the option (getopt refuses it with status 2 before
 * --help otherwise) and its help names it. */
Test(host_reserve_option, every_command_with_a_sandbox_takes_it) {
        static const char *const commands[] = { "run",     "contest",    "hackbench", "pipe",
                                                "lat_ctx", "reflex",     "chat",      "kernbench",
                                                "reaim",   "schedbench", "placement" };

        for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
                Run r = bin_run((const char *const[]){ LOADGEN, commands[i], "--no-host-reserve",
                                                       "--help", NULL });

                cr_expect(exited_with(r.status, 0), "%s: status %d, stderr: %s", commands[i],
                          r.status, r.err);
                cr_expect(strstr(r.out, "--no-host-reserve"), "%s --help does not name it: %s",
                          commands[i], r.out);
                bin_run_done(&r);
        }
}

/* ---- on the live system */

typedef struct Live {
        CgroupLayout l;
        Dirs d;
        Run r;
        char *run_group, *load_group;
} Live;

/* This process's group in the cpu hierarchy, from /proc/self/cgroup ("/" for the root group):
 * the v1 line whose controllers (comma-separated) include cpu, else the v2 "0::" line. */
static char *own_cpu_group(void) {
        _cleanup_free_ char *text = read_all("/proc/self/cgroup");
        const char *v2 = NULL;
        char *save = NULL;

        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *ctrl = strchr(line, ':'), *path, list[256];

                if (!ctrl || !(path = strchr(++ctrl, ':')))
                        continue;
                *path++ = '\0';
                (void) snprintf(list, sizeof list, ",%s,", ctrl);
                if (strstr(list, ",cpu,"))
                        return strdup(path);
                if (*ctrl == '\0')
                        v2 = path;
        }
        return v2 ? strdup(v2) : NULL;
}

/* Root, a cpu controller, and this test outside cgbalance.slice, or the test is skipped. */
static void live_setup(Live *t) {
        _cleanup_free_ char *own = NULL;

        skip_unless_root();
        if (cgroup_layout_detect(&t->l) < 0 || !t->l.cpu_path[0])
                cr_skip_test("no cpu controller: loadgen's sandbox needs one, and so does the "
                             "reserve");
        own = own_cpu_group();
        cr_assert_not_null(own, "this process's cpu group is not in /proc/self/cgroup");
        if (strncmp(own, "/" SANDBOX_SLICE, strlen("/" SANDBOX_SLICE)) == 0)
                cr_skip_test("this test runs in %s: its sleeper must be outside " SANDBOX_SLICE
                             ", in the rest of the machine the reserve is kept for",
                             own);
        t->d = test_dirs();
}

/* Starts loadgen with args (NULL-ended, at most 10) and waits until its load group exists (made
 * after the run's group and its cap) and, if procs, holds a process: the load is running. */
static void live_start(Live *t, const char *const *args, bool procs) {
        const char *argv[16] = { LOADGEN };
        size_t n = 1;
        uint64_t t0 = now_usec();

        while (*args && n < ELEMENTSOF(argv) - 5)
                argv[n++] = *args++;
        argv[n++] = "--quick";
        argv[n++] = "--dir";
        argv[n++] = t->d.dir;
        argv[n] = NULL;
        bin_start(&t->r, argv);
        cr_assert_gt(asprintf(&t->run_group, SANDBOX_SLICE "/loadgen-%d", (int) t->r.pid), 0);
        cr_assert_gt(asprintf(&t->load_group, "%s/load", t->run_group), 0);
        for (;;) {
                _cleanup_free_ char *path = NULL, *text = NULL;

                cr_assert_gt(asprintf(&path, "%s/%s/cgroup.procs", t->l.cpu_path, t->load_group),
                             0);
                if (access(path, F_OK) == 0) {
                        text = read_all(path);
                        if (!procs || *text)
                                return;
                }
                if (now_usec() - t0 > 3000000u) {
                        (void) kill(-t->r.pid, SIGKILL);
                        cr_assert_fail("loadgen's load group never %s",
                                       procs ? "held a process" : "appeared");
                }
                usleep(20000);
        }
}

static void live_done(Live *t) {
        bin_finish(&t->r);
        cr_expect(exited_with(t->r.status, 0), "status %d, stderr: %s", t->r.status, t->r.err);
        cr_log_info("loadgen: %s", t->r.out);
        expect_clean(&t->r, &t->d);
        bin_run_done(&t->r);
        test_dirs_done(&t->d);
        free(t->run_group);
        free(t->load_group);
}

typedef struct Sleeper {
        atomic_bool stop;
        uint64_t worst_usec, naps;
} Sleeper;

/* Naps SLEEP_USEC at a time until stopped, keeping its worst lateness: how much later than
 * asked it ran again. */
static void *sleeper(void *userdata) {
        Sleeper *s = userdata;
        const struct timespec nap = { .tv_nsec = SLEEP_USEC * 1000L };

        while (!atomic_load(&s->stop)) {
                uint64_t t0 = now_usec(), late;

                (void) clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL);
                late = now_usec() - t0;
                late = late > SLEEP_USEC ? late - SLEEP_USEC : 0;
                s->worst_usec = MAX(s->worst_usec, late);
                s->naps++;
        }
        return NULL;
}

Test(host_reserve, a_root_group_sleeper_keeps_waking_while_process_load_runs, .timeout = 30) {
        Live t = { 0 };
        Sleeper s = { 0 };
        pthread_t thread;
        uint64_t quota = 0, period = 0, want, throttled = 0;
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        int r, r_throttled;

        live_setup(&t);
        /* Every CPU, the default: the case that took the machine down. */
        live_start(&t, (const char *const[]){ "run", "process_load", "--duration", "4", NULL },
                   /* procs= */ true);
        r = cgroup_get_cpu_quota(&t.l, t.run_group, &quota, &period);
        cr_assert_eq(pthread_create(&thread, NULL, sleeper, &s), 0);
        usleep(WATCH_USEC);
        atomic_store(&s.stop, true);
        cr_assert_eq(pthread_join(thread, NULL), 0);
        r_throttled = cgroup_read_cpu_throttled(&t.l, t.run_group, &throttled);
        live_done(&t);

        want = sandbox_host_reserve_quota(online > 0 ? (unsigned) online : 1u, period);
        cr_expect_eq(r, 0, "reading %s's quota: %s", t.run_group, strerror(-r));
        cr_expect_eq(period, SANDBOX_RESERVE_PERIOD_USEC, "period %" PRIu64 " usec", period);
        cr_expect_eq(quota, want,
                     "the run's group: quota %" PRIu64 " per %" PRIu64 " usec, want %" PRIu64
                     " (" SANDBOX_SLICE " capped lower by someone else?)",
                     quota, period, want);
        /* The time the cap held the load back is logged, not asserted: now and then the
         * kernel keeps both rings on one CPU, which starves nothing and never reaches the cap. */
        cr_expect_eq(r_throttled, 0, "reading %s's cpu.stat: %s", t.run_group,
                     strerror(-r_throttled));
        cr_expect_gt(s.naps, WATCH_USEC / LATE_MAX_USEC, "the sleeper hardly ran: %" PRIu64,
                     s.naps);
        cr_expect_lt(s.worst_usec, LATE_MAX_USEC,
                     "a 10 ms sleep in the root cpu group woke %" PRIu64
                     " ms late beside process_load (%" PRIu64 " naps)",
                     s.worst_usec / 1000, s.naps);
        cr_log_info("worst lateness %" PRIu64 " usec over %" PRIu64 " naps; quota %" PRIu64
                    "/%" PRIu64 "; throttled %" PRIu64 " usec",
                    s.worst_usec, s.naps, quota, period, throttled);
}

/* Only the file is read: a load that cannot starve anything, so nothing is risked. */
Test(host_reserve, no_host_reserve_leaves_the_run_uncapped, .timeout = 20) {
        Live t = { 0 };
        uint64_t quota = 1;
        int r;

        live_setup(&t);
        live_start(&t,
                   (const char *const[]){ "run", "no_load", "--duration", "1", "--no-host-reserve",
                                          NULL },
                   /* procs= */ false);
        r = cgroup_get_cpu_quota(&t.l, t.run_group, &quota, NULL);
        live_done(&t);
        cr_expect_eq(r, 0, "reading %s's quota: %s", t.run_group, strerror(-r));
        cr_expect_eq(quota, CGROUP_QUOTA_NONE, "quota %" PRIu64 " usec", quota);
}
