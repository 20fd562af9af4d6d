/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The phase executor: each phase type at a tiny size, run by phases_run() in a forked child as
 * the scenario runner does, its TaskStats in MAP_SHARED memory: the work counted, the CPU time
 * it used (wait4), how long it took, the deadline, a stop from a signal, loop, pingpong between
 * two children over real pipes, nothing left behind (file, mapping, child).
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
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"
#include "phases.h"
#include "scenario.h"
#include "testutil.h"
#include "tree.h"

#define MIB (UINT64_C(1) << 20)
#define MSEC UINT64_C(1000)
#define SEC UINT64_C(1000000)
#define MAX_PHASES 4

static volatile sig_atomic_t stop_flag;
static char *work_dir;

static void setup(void) {
        work_dir = make_tmpdir();
}

static void teardown(void) {
        rm_rf(work_dir);
        work_dir = mfree(work_dir);
}

TestSuite(phases, .init = setup, .fini = teardown);

/* What the child writes for the test, in memory both share. */
typedef struct Shared {
        TaskStats stats;
        int r; /* phases_run()'s */
        uint64_t start_usec, end_usec; /* around phases_run() */
        long vm_pages_before, vm_pages_after; /* /proc/self/statm's size */
        /* /proc/self/schedstat: on a CPU, and runnable but waiting for one (0: no schedstat) */
        uint64_t oncpu_ns_before, oncpu_ns_after, waiting_ns_before, waiting_ns_after;
        bool child_left; /* a process of its own outlived phases_run() */
} Shared;

typedef struct Task {
        Phase phases[MAX_PHASES];
        size_t n;
        int fds[MAX_PHASES][2];
        bool leads[MAX_PHASES];
        PhaseContext c;
        Shared *sh;
        pid_t pid;
        struct rusage ru;
        int status;
} Task;

static void task_init(Task *t, bool loop, uint64_t duration_usec, const char *const *phases) {
        char why[256];

        *t = (Task){ .pid = -1 };
        for (; phases[t->n]; t->n++) {
                cr_assert_lt(t->n, MAX_PHASES);
                cr_assert_eq(phase_parse(phases[t->n], NULL, &t->phases[t->n], why, sizeof(why)), 0,
                             "%s: %s", phases[t->n], why);
                t->fds[t->n][0] = t->fds[t->n][1] = -1;
        }
        t->sh = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                     0);
        cr_assert_neq(t->sh, MAP_FAILED);
        t->c = (PhaseContext){
                .phases = t->phases,
                .n_phases = t->n,
                .loop = loop,
                .deadline_usec = now_usec() + duration_usec,
                .stop = &stop_flag,
                .work_dir = work_dir,
                .pingpong_fds = (const int(*)[2]) t->fds,
                .pingpong_leads = t->leads,
                .ncpus = 1,
                .ram_bytes = 4 * MIB,
                .stats = &t->sh->stats,
        };
}

static long vm_pages(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/statm", "re");
        long size = -1;

        if (f && fscanf(f, "%ld", &size) != 1)
                size = -1;
        return size;
}

static void schedstat(uint64_t *ret_oncpu_ns, uint64_t *ret_waiting_ns) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/schedstat", "re");

        if (!f || fscanf(f, "%" SCNu64 " %" SCNu64, ret_oncpu_ns, ret_waiting_ns) != 2)
                *ret_oncpu_ns = *ret_waiting_ns = 0;
}

static void on_usr1(int sig) {
        (void) sig;
        stop_flag = 1;
}

/* The child: its own pipe ends only (others[] are closed), phases_run(), the facts, _exit. */
static void task_start(Task *t, const int *others, size_t n_others) {
        pid_t parent = getpid();

        t->pid = fork();
        cr_assert_geq(t->pid, 0);
        if (t->pid == 0) {
                die_with_parent(parent);
                for (size_t i = 0; i < n_others; i++)
                        (void) close(others[i]);
                t->sh->vm_pages_before = vm_pages();
                schedstat(&t->sh->oncpu_ns_before, &t->sh->waiting_ns_before);
                t->sh->start_usec = now_usec();
                t->sh->r = phases_run(&t->c);
                t->sh->end_usec = now_usec();
                schedstat(&t->sh->oncpu_ns_after, &t->sh->waiting_ns_after);
                t->sh->vm_pages_after = vm_pages();
                t->sh->child_left = !(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
                _exit(t->sh->r < 0 ? 1 : 0);
        }
}

static void task_wait(Task *t) {
        pid_t w;

        do
                w = wait4(t->pid, &t->status, 0, &t->ru);
        while (w < 0 && errno == EINTR);
        cr_assert_eq(w, t->pid);
        cr_assert(exited_with(t->status, 0), "phases_run: %s", strerror(-t->sh->r));
        cr_assert_eq(t->sh->r, 0);
        cr_expect_not(t->sh->child_left, "a child outlived phases_run()");
        cr_expect_eq(t->sh->stats.phase, t->n, "phase %" PRIu64 " at the end",
                     (uint64_t) t->sh->stats.phase);
}

static void task_done(Task *t) {
        for (size_t i = 0; i < t->n; i++)
                phase_done(&t->phases[i]);
        (void) munmap(t->sh, sizeof(Shared));
}

static uint64_t cpu_usec(const Task *t) {
        return (uint64_t) (t->ru.ru_utime.tv_sec + t->ru.ru_stime.tv_sec) * SEC +
               (uint64_t) (t->ru.ru_utime.tv_usec + t->ru.ru_stime.tv_usec);
}

static uint64_t took(const Task *t) {
        return t->sh->end_usec - t->sh->start_usec;
}

/* The time the task wanted a CPU: on one or waiting for one. A busy phase is busy for wall
 * time, so on a loaded machine this, not its CPU time, is what its duty cycle sets. Without
 * schedstat, the CPU time. */
static uint64_t wanted_cpu_usec(const Task *t) {
        const Shared *sh = t->sh;

        if (sh->oncpu_ns_after == 0)
                return cpu_usec(t);
        return (sh->oncpu_ns_after - sh->oncpu_ns_before + sh->waiting_ns_after -
                sh->waiting_ns_before) /
               1000;
}

/* One task of phases, run to its end. */
static void run_task(Task *t, bool loop, uint64_t duration_usec, const char *const *phases) {
        task_init(t, loop, duration_usec, phases);
        task_start(t, NULL, 0);
        task_wait(t);
}

static size_t entries(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

/* ---- run, sleep, periodic */

Test(phases, run_duty_50_uses_about_half_of_its_wall_time, .timeout = 10) {
        Task t;
        uint64_t cpu;

        run_task(&t, false, 10 * SEC, (const char *[]){ "run 300ms duty 50%", NULL });
        cpu = wanted_cpu_usec(&t);
        cr_expect_geq(took(&t), 300 * MSEC);
        cr_expect_lt(took(&t), 400 * MSEC, "took %" PRIu64 " us", took(&t));
        cr_expect_geq(cpu, took(&t) / 4, "cpu %" PRIu64 " of %" PRIu64 " us", cpu, took(&t));
        cr_expect_leq(cpu, took(&t) * 3 / 4, "cpu %" PRIu64 " of %" PRIu64 " us", cpu, took(&t));
        cr_expect_gt(t.sh->stats.run_loops, 0);
        cr_expect_eq(t.sh->stats.passes, 1);
        cr_log_info("run 300ms duty 50%%: wanted %" PRIu64 " us, got %" PRIu64 " us CPU, %" PRIu64
                    " loops",
                    cpu, cpu_usec(&t), (uint64_t) t.sh->stats.run_loops);
        task_done(&t);
}

Test(phases, run_full_duty_is_busy_all_along, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "run 200ms", NULL });
        cr_expect_geq(took(&t), 200 * MSEC);
        cr_expect_geq(wanted_cpu_usec(&t), took(&t) * 9 / 10, "wanted %" PRIu64 " us",
                      wanted_cpu_usec(&t));
        cr_expect_gt(t.sh->stats.run_loops, 0);
        task_done(&t);
}

Test(phases, run_n_loops_does_exactly_n_loops, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "run 300 loops duty 50%", NULL });
        cr_expect_eq(t.sh->stats.run_loops, 300, "%" PRIu64 " loops",
                     (uint64_t) t.sh->stats.run_loops);
        cr_log_info("300 loops at 50%%: %" PRIu64 " us, %" PRIu64 " us CPU", took(&t),
                    cpu_usec(&t));
        task_done(&t);
}

Test(phases, sleep_uses_no_cpu, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "sleep 200ms", NULL });
        cr_expect_geq(took(&t), 200 * MSEC);
        cr_expect_lt(took(&t), 300 * MSEC);
        cr_expect_lt(cpu_usec(&t), 20 * MSEC, "cpu %" PRIu64 " us", cpu_usec(&t));
        cr_expect_eq(t.sh->stats.run_loops, 0);
        task_done(&t);
}

Test(phases, periodic_does_or_misses_every_period_and_times_its_wakeups, .timeout = 10) {
        const PhaseLatency *l;
        Task t;

        run_task(&t, false, 10 * SEC,
                 (const char *[]){ "periodic 2ms every 10ms for 200ms", NULL });
        l = &t.sh->stats.periodic_latency;
        cr_expect_eq(t.sh->stats.periodic_periods + t.sh->stats.periodic_missed, 20,
                     "%" PRIu64 " done, %" PRIu64 " missed",
                     (uint64_t) t.sh->stats.periodic_periods,
                     (uint64_t) t.sh->stats.periodic_missed);
        cr_expect_eq(l->count, t.sh->stats.periodic_periods);
        cr_expect_gt(l->sum_usec, 0);
        cr_expect_gt(l->max_usec, 0);
        cr_expect_gt(t.sh->stats.run_loops, 0);
        cr_expect_lt(cpu_usec(&t), took(&t) / 2, "cpu %" PRIu64 " us", cpu_usec(&t));
        cr_log_info("periodic: %" PRIu64 " periods, %" PRIu64 " missed, latency mean %" PRIu64
                    " max %" PRIu64 " p50 <= %" PRIu64 " p99 <= %" PRIu64 " us",
                    (uint64_t) t.sh->stats.periodic_periods, (uint64_t) t.sh->stats.periodic_missed,
                    l->count ? (uint64_t) l->sum_usec / l->count : 0, (uint64_t) l->max_usec,
                    phase_latency_percentile_usec(l, 50), phase_latency_percentile_usec(l, 99));
        task_done(&t);
}

/* A run as long as its period always ends past the next start: that one is missed. */
Test(phases, periodic_misses_a_start_already_past, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC,
                 (const char *[]){ "periodic 10ms every 10ms for 200ms", NULL });
        cr_expect_eq(t.sh->stats.periodic_periods + t.sh->stats.periodic_missed, 20);
        cr_expect_geq(t.sh->stats.periodic_missed, 5, "%" PRIu64 " missed",
                      (uint64_t) t.sh->stats.periodic_missed);
        cr_expect_lt(took(&t), 300 * MSEC, "caught up: took %" PRIu64 " us", took(&t));
        task_done(&t);
}

Test(phases, latency_percentile_is_its_bucket_upper_end, .timeout = 10) {
        /* 0 us once, 1 us once, 5 us (bucket [4, 8)) 97 times, 1000 us (bucket [512, 1024)) once */
        PhaseLatency l = { .count = 100, .max_usec = 1000 };
        PhaseLatency none = { 0 };

        l.buckets[0] = 1;
        l.buckets[1] = 1;
        l.buckets[3] = 97;
        l.buckets[10] = 1;
        cr_expect_eq(phase_latency_percentile_usec(&l, 1), 0);
        cr_expect_eq(phase_latency_percentile_usec(&l, 2), 1);
        cr_expect_eq(phase_latency_percentile_usec(&l, 50), 7);
        cr_expect_eq(phase_latency_percentile_usec(&l, 99), 7);
        cr_expect_eq(phase_latency_percentile_usec(&l, 100), 1000, "capped at the max");
        cr_expect_eq(phase_latency_percentile_usec(&none, 50), 0);
}

/* ---- pingpong */

/* Two tasks a and b over two pipes: a->b and b->a. */
static void pingpong_pair(Task *a, Task *b) {
        int ab[2], ba[2];

        cr_assert_eq(pipe2(ab, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(ba, O_CLOEXEC), 0);
        a->fds[0][0] = ba[0];
        a->fds[0][1] = ab[1];
        a->leads[0] = true;
        b->fds[0][0] = ab[0];
        b->fds[0][1] = ba[1];
        task_start(a, (int[]){ ab[0], ba[1] }, 2);
        task_start(b, (int[]){ ba[0], ab[1] }, 2);
        for (int i = 0; i < 2; i++) {
                (void) close(ab[i]);
                (void) close(ba[i]);
        }
}

Test(phases, pingpong_rounds_end_both_sides, .timeout = 10) {
        Task a, b;

        task_init(&a, false, 10 * SEC, (const char *[]){ "pingpong b 200 rounds", NULL });
        task_init(&b, false, 10 * SEC, (const char *[]){ "pingpong a for 10s", NULL });
        pingpong_pair(&a, &b);
        task_wait(&a);
        task_wait(&b);
        cr_expect_eq(a.sh->stats.pingpong_rounds, 200);
        cr_expect_eq(b.sh->stats.pingpong_rounds, 200);
        cr_expect_eq(a.sh->stats.pingpong_rtt.count, 200);
        cr_expect_gt(a.sh->stats.pingpong_rtt.sum_usec, 0);
        cr_expect_gt(a.sh->stats.pingpong_rtt.max_usec, 0);
        cr_expect_eq(b.sh->stats.pingpong_rtt.count, 0, "the answerer times nothing");
        cr_expect_lt(took(&b), 2 * SEC, "the answerer ran its own length: %" PRIu64 " us",
                     took(&b));
        cr_log_info("pingpong: 200 rounds, rtt mean %" PRIu64 " max %" PRIu64 " us",
                    (uint64_t) a.sh->stats.pingpong_rtt.sum_usec / 200,
                    (uint64_t) a.sh->stats.pingpong_rtt.max_usec);
        task_done(&a);
        task_done(&b);
}

Test(phases, pingpong_for_a_duration_loops_both_sides, .timeout = 10) {
        Task a, b;

        task_init(&a, true, 400 * MSEC,
                  (const char *[]){ "pingpong b for 50ms", "sleep 10ms", NULL });
        task_init(&b, true, 400 * MSEC, (const char *[]){ "pingpong a 1 rounds", NULL });
        pingpong_pair(&a, &b);
        task_wait(&a);
        task_wait(&b);
        cr_expect_gt(a.sh->stats.pingpong_rounds, 10);
        cr_expect_geq(a.sh->stats.passes, 3, "%" PRIu64 " passes", (uint64_t) a.sh->stats.passes);
        /* b's own length (1 round) is ignored: it answers until a's end byte, once a pass. */
        cr_expect_gt(b.sh->stats.pingpong_rounds, 1);
        cr_expect_leq(b.sh->stats.passes, a.sh->stats.passes + 1);
        cr_expect_geq(b.sh->stats.passes + 1, a.sh->stats.passes, "%" PRIu64 " passes",
                      (uint64_t) b.sh->stats.passes);
        /* A round the deadline cut was echoed but never came back. */
        cr_expect_leq(b.sh->stats.pingpong_rounds - a.sh->stats.pingpong_rounds, 1);
        task_done(&a);
        task_done(&b);
}

/* The leader's process gone: the answerer reads EOF and ends, well before its deadline. */
Test(phases, pingpong_answerer_ends_on_eof, .timeout = 10) {
        int to_b[2], from_b[2];
        Task b;

        task_init(&b, true, 10 * SEC, (const char *[]){ "pingpong a for 10s", NULL });
        cr_assert_eq(pipe2(to_b, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(from_b, O_CLOEXEC), 0);
        b.fds[0][0] = to_b[0];
        b.fds[0][1] = from_b[1];
        task_start(&b, (int[]){ to_b[1], from_b[0] }, 2);
        (void) close(to_b[0]);
        (void) close(from_b[1]);
        cr_assert_eq(write(to_b[1], "p", 1), 1);
        usleep(100000);
        (void) close(to_b[1]);
        task_wait(&b);
        cr_expect_eq(b.sh->stats.pingpong_rounds, 1);
        cr_expect_eq(b.sh->stats.passes, 1, "a pass with its peer gone counted or spun");
        cr_expect_lt(took(&b), 2 * SEC, "took %" PRIu64 " us", took(&b));
        (void) close(from_b[0]);
        task_done(&b);
}

/* The answerer's process gone: the leader gets EPIPE, not SIGPIPE, and ends. */
Test(phases, pingpong_leader_ends_when_its_peer_has_gone, .timeout = 10) {
        int to_b[2], from_b[2];
        Task a;

        task_init(&a, true, 10 * SEC, (const char *[]){ "pingpong b for 10s", NULL });
        cr_assert_eq(pipe2(to_b, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(from_b, O_CLOEXEC), 0);
        (void) close(to_b[0]);
        (void) close(from_b[1]);
        a.fds[0][0] = from_b[0];
        a.fds[0][1] = to_b[1];
        a.leads[0] = true;
        task_start(&a, NULL, 0);
        (void) close(from_b[0]);
        (void) close(to_b[1]);
        task_wait(&a);
        cr_expect_eq(a.sh->stats.pingpong_rounds, 0);
        cr_expect_lt(took(&a), 2 * SEC, "took %" PRIu64 " us", took(&a));
        task_done(&a);
}

/* ---- memwalk, write, read, load */

Test(phases, memwalk_writes_every_line_of_each_pass_and_unmaps, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "memwalk 16M 3 passes", NULL });
        cr_expect_eq(t.sh->stats.memwalk_passes, 3);
        cr_expect_eq(t.sh->stats.memwalk_lines, 3 * 16 * MIB / 64, "%" PRIu64 " lines",
                     (uint64_t) t.sh->stats.memwalk_lines);
        cr_expect_lt(t.sh->vm_pages_after - t.sh->vm_pages_before, 1024, "%ld pages still mapped",
                     t.sh->vm_pages_after - t.sh->vm_pages_before);
        task_done(&t);
}

Test(phases, memwalk_for_a_duration_counts_partial_passes, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "memwalk 4M for 200ms", NULL });
        cr_expect_gt(t.sh->stats.memwalk_passes, 0);
        cr_expect_geq(t.sh->stats.memwalk_lines, t.sh->stats.memwalk_passes * 4 * MIB / 64);
        cr_expect_geq(took(&t), 200 * MSEC);
        cr_expect_lt(took(&t), 400 * MSEC);
        task_done(&t);
}

Test(phases, write_once_counts_its_bytes_and_removes_its_file, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "write 1536K", NULL });
        cr_expect_eq(t.sh->stats.write_bytes, 1536 * 1024);
        cr_expect_eq(entries(work_dir), 0, "a file left in work_dir");
        task_done(&t);
}

Test(phases, write_for_a_duration_writes_again, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "write 1M for 200ms", NULL });
        cr_expect_gt(t.sh->stats.write_bytes, 2 * MIB);
        cr_expect_geq(took(&t), 200 * MSEC);
        cr_expect_eq(entries(work_dir), 0, "a file left in work_dir");
        task_done(&t);
}

Test(phases, read_counts_what_it_reads_not_its_file, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "read 3M", "read 1M for 100ms", NULL });
        cr_expect_gt(t.sh->stats.read_bytes, 3 * MIB + 2 * MIB);
        cr_expect_eq(t.sh->stats.read_bytes % MIB, 0);
        cr_expect_eq(t.sh->stats.write_bytes, 0, "the file's making counted");
        cr_expect_eq(entries(work_dir), 0, "a file left in work_dir");
        task_done(&t);
}

Test(phases, read_once_reads_the_whole_file_once, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "read 2500K", NULL });
        cr_expect_eq(t.sh->stats.read_bytes, 2500 * 1024);
        cr_expect_eq(entries(work_dir), 0);
        task_done(&t);
}

Test(phases, load_runs_a_contest_load_and_counts_its_work, .timeout = 10) {
        const Load *l = load_find("process_load");
        Task t;

        cr_assert_not_null(l);
        cr_assert_leq(n_loads, PHASE_MAX_LOADS, "TaskStats.load_work too small");
        run_task(&t, false, 10 * SEC, (const char *[]){ "load process_load for 300ms", NULL });
        cr_expect_gt(t.sh->stats.load_work[l - loads], 0);
        cr_expect_geq(took(&t), 300 * MSEC);
        cr_expect_lt(took(&t), 2 * SEC);
        cr_expect_eq(entries(work_dir), 0);
        task_done(&t);
}

/* ---- loop, deadline, stop */

Test(phases, loop_repeats_until_the_deadline, .timeout = 10) {
        Task t;

        run_task(&t, true, 200 * MSEC, (const char *[]){ "run 5ms", "sleep 5ms", NULL });
        cr_expect_geq(t.sh->stats.passes, 10, "%" PRIu64 " passes", (uint64_t) t.sh->stats.passes);
        cr_expect_leq(t.sh->stats.passes, 20, "%" PRIu64 " passes", (uint64_t) t.sh->stats.passes);
        cr_expect_lt(took(&t), 300 * MSEC);
        cr_expect_gt(t.sh->stats.phase_usec[PHASE_SLEEP], 40 * MSEC);
        task_done(&t);
}

Test(phases, without_loop_the_task_ends_after_its_last_phase, .timeout = 10) {
        Task t;

        run_task(&t, false, 10 * SEC, (const char *[]){ "sleep 20ms", "run 20ms", NULL });
        cr_expect_eq(t.sh->stats.passes, 1);
        cr_expect_geq(took(&t), 40 * MSEC);
        cr_expect_lt(took(&t), 200 * MSEC);
        task_done(&t);
}

Test(phases, the_deadline_cuts_a_long_phase, .timeout = 10) {
        const char *const cases[] = { "run 10s", "sleep 10s", "periodic 1ms every 1s for 10s",
                                      "memwalk 4M for 10s", "write 1M for 10s" };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Task t;

                run_task(&t, false, 200 * MSEC, (const char *[]){ cases[i], NULL });
                cr_expect_lt(took(&t), 300 * MSEC, "%s: took %" PRIu64 " us", cases[i], took(&t));
                cr_expect_eq(t.sh->stats.passes, 0, "%s: a pass the deadline cut counted",
                             cases[i]);
                task_done(&t);
        }
        cr_expect_eq(entries(work_dir), 0);
}

Test(phases, a_stop_from_a_signal_ends_a_long_phase_within_100ms, .timeout = 20) {
        const char *const cases[] = { "run 10s",
                                      "sleep 10s",
                                      "periodic 1ms every 5s for 10s",
                                      "memwalk 4M for 10s",
                                      "read 1M for 10s",
                                      "pingpong a for 10s" };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct sigaction sa = { .sa_handler = on_usr1 }, old;
                int p[2];
                uint64_t sent;
                Task t;

                task_init(&t, true, 10 * SEC, (const char *[]){ cases[i], NULL });
                cr_assert_eq(pipe2(p, O_CLOEXEC), 0); /* the answerer's: nobody writes */
                t.fds[0][0] = p[0];
                t.fds[0][1] = p[1];
                /* Installed before the fork, so the child has it from its first instruction. */
                cr_assert_eq(sigaction(SIGUSR1, &sa, &old), 0);
                task_start(&t, NULL, 0);
                cr_assert_eq(sigaction(SIGUSR1, &old, NULL), 0);
                usleep(200000);
                sent = now_usec();
                cr_assert_eq(kill(t.pid, SIGUSR1), 0);
                task_wait(&t);
                cr_expect_lt(t.sh->end_usec - sent, 100 * MSEC, "%s: %" PRIu64 " us to stop",
                             cases[i], t.sh->end_usec - sent);
                (void) close(p[0]);
                (void) close(p[1]);
                task_done(&t);
        }
        cr_expect_eq(entries(work_dir), 0);
}

Test(phases, a_context_without_what_a_phase_needs_is_einval, .timeout = 10) {
        Task t;

        task_init(&t, false, 10 * SEC, (const char *[]){ "write 1M", NULL });
        t.c.work_dir = NULL;
        cr_expect_eq(phases_run(&t.c), -EINVAL);
        t.c.stats = NULL;
        cr_expect_eq(phases_run(&t.c), -EINVAL);
        task_done(&t);
}

/* A quick generated tree in the work directory, for compile and the loads that read one. */
static char *make_tree(void) {
        TreeOptions to;
        char *tree = NULL;

        tree_options_init(&to, true);
        cr_assert_gt(asprintf(&tree, "%s/tree", work_dir), 0);
        cr_assert_eq(mkdir(tree, 0700), 0);
        cr_assert_eq(tree_generate(tree, &to), 0);
        return tree;
}

Test(phases, compile_counts_the_builds_that_ran_to_their_end, .timeout = 60) {
        _cleanup_free_ char *tree = make_tree();
        Task t;

        task_init(&t, false, 50 * SEC, (const char *[]){ "compile 2 builds", NULL });
        t.c.tree_dir = tree;
        t.c.ncpus = 2;
        task_start(&t, NULL, 0);
        task_wait(&t);
        cr_expect_eq(t.sh->r, 0, "%s", strerror(-t.sh->r));
        cr_expect_eq(t.sh->stats.compile_builds, 2);
        cr_expect(!t.sh->child_left, "a compiler outlived the phase");
        task_done(&t);
}

Test(phases, the_deadline_cuts_a_build_which_is_not_counted, .timeout = 30) {
        _cleanup_free_ char *tree = make_tree();
        Task t;

        /* 300 ms: less than one build of the quick tree (about 2.5 s here) */
        task_init(&t, false, 300 * MSEC, (const char *[]){ "compile for 10s", NULL });
        t.c.tree_dir = tree;
        task_start(&t, NULL, 0);
        task_wait(&t);
        cr_expect_eq(t.sh->r, 0, "%s", strerror(-t.sh->r));
        cr_expect_eq(t.sh->stats.compile_builds, 0);
        cr_expect_lt(took(&t), 3 * SEC, "took %" PRIu64 " us", took(&t));
        cr_expect(!t.sh->child_left, "a compiler outlived the phase");
        task_done(&t);
}

Test(phases, compile_without_a_tree_is_einval, .timeout = 10) {
        Task t;

        task_init(&t, false, 1 * SEC, (const char *[]){ "compile 1 builds", NULL });
        cr_expect_eq(phases_run(&t.c), -EINVAL);
        cr_expect_eq(t.sh->stats.compile_builds, 0);
        task_done(&t);
}

Test(phases, bench_runs_a_benchmark_again_and_again_and_counts_its_runs, .timeout = 30) {
        Task t;

        task_init(&t, false, 20 * SEC, (const char *[]){ "bench pipe --loops 2000 2 runs", NULL });
        t.c.loadgen_path = BUILD_DIR "/loadgen";
        task_start(&t, NULL, 0);
        task_wait(&t);
        cr_expect_eq(t.sh->stats.bench_runs, 2);
        task_done(&t);
}

Test(phases, the_deadline_ends_a_benchmark_run_which_is_not_counted, .timeout = 30) {
        Task t;

        task_init(&t, false, 500 * MSEC,
                  (const char *[]){ "bench pipe --loops 100000000 for 10s", NULL });
        t.c.loadgen_path = BUILD_DIR "/loadgen";
        task_start(&t, NULL, 0);
        task_wait(&t);
        cr_expect_eq(t.sh->stats.bench_runs, 0);
        cr_expect_lt(took(&t), 6 * SEC, "took %" PRIu64 " us", took(&t));
        task_done(&t);
}

Test(phases, a_benchmark_that_fails_fails_the_phase, .timeout = 30) {
        Task t;

        task_init(&t, false, 10 * SEC, (const char *[]){ "bench pipe --loops 0 1 runs", NULL });
        t.c.loadgen_path = BUILD_DIR "/loadgen";
        cr_expect_eq(phases_run(&t.c), -EIO);
        t.c.loadgen_path = NULL;
        cr_expect_eq(phases_run(&t.c), -EINVAL);
        task_done(&t);
}
