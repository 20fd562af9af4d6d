/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen residency: attribution from samples, the /proc/PID/stat parser, the sampler over a
 * fake /proc (every credit by hand), then over real children: one pinned to a CPU, one moved
 * between two synthetic nodes, one that exits, one that is gone.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "residency.h"
#include "testutil.h"
#include "topology.h"

/* ---- the accounting */

Test(residency, deltas_go_to_the_node_of_each_sample) {
        Residency r;

        residency_init(&r);
        cr_expect_eq(residency_most(&r, 4), -1);
        cr_expect_float_eq(residency_pct(&r, 0), 0.0, 1e-12);
        residency_sample(&r, 10, 0); /* 10 ticks since the start, seen on node 0 */
        residency_sample(&r, 15, 2); /* 5 more on node 2 */
        residency_sample(&r, 15, 1); /* none gained: nothing for node 1 */
        residency_sample(&r, 45, 2); /* 30 more on node 2 */
        cr_expect_eq(r.ticks[0], 10);
        cr_expect_eq(r.ticks[1], 0);
        cr_expect_eq(r.ticks[2], 35);
        cr_expect_eq(residency_total(&r), 45);
        cr_expect_eq(residency_most(&r, 4), 2);
        cr_expect_eq(residency_most(&r, 2), 0, "only the first n nodes count");
        cr_expect_float_eq(residency_pct(&r, 2), 100.0 * 35 / 45, 1e-9);
}

Test(residency, finish_gives_the_rest_to_the_last_node_seen) {
        Residency r;

        residency_init(&r);
        residency_finish(&r, 20);
        cr_expect_eq(residency_total(&r), 0, "never seen: nowhere to attribute");
        residency_sample(&r, 4, 3);
        residency_sample(&r, 6, -1); /* an unknown CPU: taken as seen, not attributed */
        cr_expect_eq(residency_total(&r), 4);
        residency_finish(&r, 10);
        cr_expect_eq(r.ticks[3], 8);
        cr_expect_eq(residency_total(&r), 8);
        residency_finish(&r, 9); /* not below what was seen */
        cr_expect_eq(residency_total(&r), 8);
}

Test(residency, utime_going_back_attributes_nothing) {
        Residency r;

        residency_init(&r);
        residency_sample(&r, 50, 0);
        residency_sample(&r, 40, 1);
        residency_sample(&r, 55, 1);
        cr_expect_eq(r.ticks[0], 50);
        cr_expect_eq(r.ticks[1], 5);
}

Test(residency, ties_go_to_the_lowest_index) {
        Residency r;

        residency_init(&r);
        residency_sample(&r, 5, 1);
        residency_sample(&r, 10, 0);
        cr_expect_eq(residency_most(&r, 2), 0);
}

/* ---- /proc/PID/stat */

Test(residency_stat, fields_after_the_last_paren) {
        /* comm with a space and a ')' */
        static const char line[] =
                "4242 (ev il) x) R 1 4242 4242 0 -1 4194304 100 0 0 0 1234 56 0 0 20 0 1 0 "
                "999 10000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 7 0 0 0 0 "
                "0\n";
        uint64_t u = 0, s = 0;
        int cpu = -1;

        cr_assert_eq(residency_parse_stat(line, &u, &s, &cpu), 0);
        cr_expect_eq(u, 1234);
        cr_expect_eq(s, 56);
        cr_expect_eq(cpu, 7);
}

Test(residency_stat, the_real_file_of_this_process) {
        _cleanup_free_ char *s = read_all("/proc/self/stat");
        uint64_t u, st;
        int cpu = -1;

        cr_assert_eq(residency_parse_stat(s, &u, &st, &cpu), 0, "%s", s);
        cr_expect(cpu >= 0 && cpu < sysconf(_SC_NPROCESSORS_CONF), "cpu %d", cpu);
}

Test(residency_stat, short_or_broken_lines_are_refused) {
        static const char *const bad[] = {
                "",
                "4242 no paren",
                "1 (x) R 1 2 3",
                "1 (x) R 1 2 3 4 5 6 7 8 9 10 x 12 13",
                "1 (x) R 1 1 1 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 9 1 1 1 1 1 0 0 0 0 0 0 0 0 0 0 "
                "17 -3 0",
        };
        uint64_t u = 77, s = 77;
        int cpu = 77;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                cr_expect_eq(residency_parse_stat(bad[i], &u, &s, &cpu), -EINVAL, "\"%s\"", bad[i]);
        cr_expect(u == 77 && s == 77 && cpu == 77, "written on failure");
}

/* ---- the sampler over a fake /proc */

/* A stat line of pid 100 with utime ticks, last on cpu. */
static void write_stat(int dirfd, uint64_t utime, int cpu) {
        char line[512];

        snprintf(line, sizeof line,
                 "100 (busy task) R 1 100 100 0 -1 4194304 100 0 0 0 %llu 3 0 0 20 0 1 0 999 "
                 "10000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0\n",
                 (unsigned long long) utime, cpu);
        write_file_at(dirfd, "100/stat", line);
}

typedef struct Fake {
        char *dir;
        int fd;
        Topology *topo;
        ResidencySampler *rs;
} Fake;

/* Two nodes of two CPUs (0,1 on node 0; 2,3 on node 1) and an empty /proc. */
static Fake fake_new(void) {
        Fake f = { .dir = make_tmpdir() };

        f.fd = open(f.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(f.fd, 0);
        cr_assert_eq(topology_new_from_synthetic("node:2 pu:2", NULL, 0, &f.topo), 0);
        cr_assert_eq(residency_sampler_new_at(f.topo, f.fd, &f.rs), 0);
        return f;
}

static void fake_done(Fake *f) {
        f->rs = residency_sampler_free(f->rs);
        f->topo = topology_free(f->topo);
        (void) close(f->fd);
        rm_rf(f->dir);
        free(f->dir);
}

static uint64_t ticks_to_usec(uint64_t ticks) {
        return ticks * 1000000 / residency_ticks_per_s();
}

Test(residency_sampler, the_nodes_are_the_topologys) {
        Fake f = fake_new();

        cr_expect_eq(residency_sampler_n_nodes(f.rs), 2);
        cr_expect_eq(residency_sampler_node_id(f.rs, 1), 1);
        cr_expect_eq(residency_sampler_node_id(f.rs, 2), -ERANGE);
        cr_expect_eq(residency_sampler_cpu_node(f.rs, 1), 0);
        cr_expect_eq(residency_sampler_cpu_node(f.rs, 2), 1);
        cr_expect_eq(residency_sampler_cpu_node(f.rs, 4), -1);
        cr_expect_eq(residency_sampler_cpu_node(f.rs, -1), -1);
        fake_done(&f);
}

Test(residency_sampler, each_sample_credits_the_cpu_and_node_it_sees) {
        Fake f = fake_new();
        const Residency *r;
        size_t i = 99;

        write_stat(f.fd, 0, 1);
        cr_assert_eq(residency_sampler_add(f.rs, 100, &i), 0);
        cr_expect_eq(i, 0);
        cr_expect_eq(residency_sampler_initial_cpu(f.rs, i), 1);
        cr_expect_eq(residency_sampler_initial_node(f.rs, i), 0);
        cr_expect(residency_sampler_live(f.rs, i));
        write_stat(f.fd, 10, 1);
        residency_sampler_sample(f.rs);
        write_stat(f.fd, 12, 9); /* a CPU the topology lacks: its CPU counts, no node */
        residency_sampler_sample(f.rs);
        write_stat(f.fd, 15, 3);
        residency_sampler_sample(f.rs);
        /* reaped with 25 ticks: finish reads 15 on CPU 3 once more, the 10 missed go there */
        residency_sampler_finish(f.rs, i, ticks_to_usec(25));
        r = residency_sampler_get(f.rs, i);
        cr_assert(r);
        cr_expect_eq(r->ticks[0], 10);
        cr_expect_eq(r->ticks[1], 3 + 10);
        cr_expect_eq(residency_total(r), 23, "the 2 on CPU 9 belong to no node");
        cr_expect_eq(r->last_utime, 25);
        cr_expect_eq(residency_sampler_cpu_ticks(f.rs, i, 1), 10);
        cr_expect_eq(residency_sampler_cpu_ticks(f.rs, i, 9), 2);
        cr_expect_eq(residency_sampler_cpu_ticks(f.rs, i, 3), 13);
        cr_expect_eq(residency_sampler_cpu_ticks(f.rs, i, 0), 0);
        cr_expect_eq(residency_sampler_samples(f.rs, i), 4, "three and finish's");
        cr_expect_eq(residency_sampler_most_node(f.rs, i), 1);
        cr_expect_not(residency_sampler_live(f.rs, i));
        write_stat(f.fd, 40, 0);
        residency_sampler_sample(f.rs);
        residency_sampler_finish(f.rs, i, ticks_to_usec(50));
        cr_expect_eq(residency_total(r), 23, "a finished task is not sampled nor finished again");
        fake_done(&f);
}

Test(residency_sampler, a_task_never_sampled_ends_on_its_initial_node) {
        Fake f = fake_new();
        size_t i;

        write_stat(f.fd, 0, 2);
        cr_assert_eq(residency_sampler_add(f.rs, 100, &i), 0);
        write_file_at(f.fd, "100/stat", "garbage\n"); /* finish's last read fails */
        residency_sampler_sample(f.rs);
        cr_expect_eq(residency_sampler_samples(f.rs, i), 0);
        residency_sampler_finish(f.rs, i, ticks_to_usec(7));
        cr_expect_eq(residency_sampler_get(f.rs, i)->ticks[1], 7);
        cr_expect_eq(residency_sampler_cpu_ticks(f.rs, i, 2), 7);
        cr_expect_eq(residency_sampler_most_node(f.rs, i), 1);
        fake_done(&f);
}

Test(residency_sampler, add_refuses_missing_broken_and_bad_pids) {
        Fake f = fake_new();
        size_t i = 99;

        cr_expect_eq(residency_sampler_add(f.rs, 100, &i), -ESRCH);
        write_file_at(f.fd, "100/stat", "100 (x) R 1 2 3\n");
        cr_expect_eq(residency_sampler_add(f.rs, 100, &i), -EBADMSG);
        cr_expect_eq(residency_sampler_add(f.rs, 0, &i), -EINVAL);
        cr_expect_eq(residency_sampler_add(f.rs, -5, &i), -EINVAL);
        cr_expect_eq(i, 99, "written on failure");
        cr_expect_eq(residency_sampler_n_tasks(f.rs), 0);
        fake_done(&f);
}

Test(residency_sampler, an_index_never_returned_has_nothing) {
        Fake f = fake_new();

        residency_sampler_finish(f.rs, 3, 1000);
        cr_expect_null(residency_sampler_get(f.rs, 0));
        cr_expect_not(residency_sampler_live(f.rs, 0));
        cr_expect_eq(residency_sampler_initial_cpu(f.rs, 0), -1);
        cr_expect_eq(residency_sampler_initial_node(f.rs, 0), -1);
        cr_expect_eq(residency_sampler_most_node(f.rs, 0), -1);
        cr_expect_eq(residency_sampler_samples(f.rs, 0), 0);
        cr_expect_eq(residency_sampler_cpu_ticks(f.rs, 0, 0), 0);
        fake_done(&f);
}

Test(residency_sampler, too_many_nodes_or_a_bad_fd_are_refused) {
        _cleanup_topology_ Topology *many = NULL, *two = NULL;
        ResidencySampler *rs = (ResidencySampler *) 0x1;

        cr_assert_eq(topology_new_from_synthetic("node:65 pu:1", NULL, 0, &many), 0);
        cr_expect_eq(residency_sampler_new(many, &rs), -E2BIG);
        cr_assert_eq(topology_new_from_synthetic("node:2 pu:1", NULL, 0, &two), 0);
        cr_expect_eq(residency_sampler_new_at(two, -1, &rs), -EBADF);
        cr_expect_eq(rs, (ResidencySampler *) 0x1, "written on failure");
}

/* ---- the sampler over real children */

/*
 * A child that pins itself to cpu (-1: anywhere), says so, then spins for cpu_ms of CPU time and
 * exits 0, or until killed (cpu_ms 0).
 */
static pid_t spawn_busy(int cpu, unsigned cpu_ms) {
        pid_t parent = getpid(), pid;
        int p[2];
        char c = 0;

        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                struct timespec ts;
                cpu_set_t set;

                die_with_parent(parent);
                if (cpu >= 0) {
                        CPU_ZERO(&set);
                        CPU_SET((size_t) cpu, &set);
                        if (sched_setaffinity(0, sizeof set, &set) < 0)
                                _exit(3);
                }
                if (write(p[1], &c, 1) != 1)
                        _exit(4);
                /* user time: a syscall only every million rounds */
                for (volatile uint64_t n = 0;; n++)
                        if (n % 1000000 == 0 && cpu_ms > 0 &&
                            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0 &&
                            (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000 >= cpu_ms)
                                _exit(0);
        }
        (void) close(p[1]);
        cr_assert_eq(read(p[0], &c, 1), 1, "the child did not start");
        (void) close(p[0]);
        return pid;
}

/* Kills and reaps pid: its user time in usec. */
static uint64_t kill_reap(pid_t pid) {
        struct rusage ru;
        int status;

        (void) kill(pid, SIGKILL);
        cr_assert_eq(wait4(pid, &status, 0, &ru), pid);
        return (uint64_t) ru.ru_utime.tv_sec * 1000000 + (uint64_t) ru.ru_utime.tv_usec;
}

/* Samples every RESIDENCY_SAMPLE_USEC until task i has gained ticks more, or 30 s passed. */
static void sample_until_gained(ResidencySampler *rs, size_t i, uint64_t ticks) {
        uint64_t target = residency_sampler_get(rs, i)->last_utime + ticks;

        for (unsigned n = 0; n < 3000 && residency_sampler_get(rs, i)->last_utime < target; n++) {
                usleep(RESIDENCY_SAMPLE_USEC);
                residency_sampler_sample(rs);
        }
        cr_assert_geq(residency_sampler_get(rs, i)->last_utime, target, "the child hardly ran");
}

/* The highest CPU this process may run on; -1 if fewer than 1. */
static int last_allowed_cpu(void) {
        cpu_set_t set;

        cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
        for (int c = CPU_SETSIZE - 1; c >= 0; c--)
                if (CPU_ISSET((size_t) c, &set))
                        return c;
        return -1;
}

Test(residency_live, a_pinned_busy_child_is_credited_to_its_cpus_node, .timeout = 60) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_residency_sampler_ ResidencySampler *rs = NULL;
        int cpu = last_allowed_cpu(), node;
        const Residency *r;
        uint64_t total;
        pid_t pid;
        size_t i;

        cr_assert_geq(cpu, 0);
        cr_assert_eq(topology_new_from_system(&topo), 0);
        node = topology_cpu_node(topo, (unsigned) cpu);
        cr_assert_geq(node, 0);
        cr_assert_eq(residency_sampler_new(topo, &rs), 0);
        pid = spawn_busy(cpu, 0);
        cr_assert_eq(residency_sampler_add(rs, pid, &i), 0);
        cr_expect_eq(residency_sampler_initial_cpu(rs, i), cpu);
        cr_expect_eq(residency_sampler_initial_node(rs, i), node);
        sample_until_gained(rs, i, 20);
        residency_sampler_finish(rs, i, kill_reap(pid));
        r = residency_sampler_get(rs, i);
        total = residency_total(r);
        cr_expect_geq(total, 20);
        cr_expect_eq(r->ticks[topology_node_index(topo, (unsigned) node)], total, "all on node %d",
                     node);
        cr_expect_eq(residency_sampler_cpu_ticks(rs, i, (unsigned) cpu), total, "all on CPU %d",
                     cpu);
        cr_expect_eq(residency_sampler_most_node(rs, i), node);
        cr_expect_geq(residency_sampler_samples(rs, i), 2);
}

Test(residency_live, a_child_moved_between_two_nodes_shows_ticks_on_both, .timeout = 90) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_residency_sampler_ ResidencySampler *rs = NULL;
        const Residency *r;
        cpu_set_t set;
        pid_t pid;
        size_t i;

        cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
        if (!CPU_ISSET(0, &set) || !CPU_ISSET(1, &set))
                cr_skip_test("needs CPUs 0 and 1");
        /* as HWLOC_SYNTHETIC="node:2 pu:1" does for the binary: CPU 0 on node 0, CPU 1 on 1 */
        cr_assert_eq(topology_new_from_synthetic("node:2 pu:1", NULL, 0, &topo), 0);
        cr_assert_eq(residency_sampler_new(topo, &rs), 0);
        pid = spawn_busy(0, 0);
        cr_assert_eq(residency_sampler_add(rs, pid, &i), 0);
        cr_expect_eq(residency_sampler_initial_node(rs, i), 0);
        sample_until_gained(rs, i, 20);
        CPU_ZERO(&set);
        CPU_SET(1, &set);
        cr_assert_eq(sched_setaffinity(pid, sizeof set, &set), 0, "%m");
        sample_until_gained(rs, i, 20);
        residency_sampler_finish(rs, i, kill_reap(pid));
        r = residency_sampler_get(rs, i);
        cr_log_info("node ticks: %llu on node 0, %llu on node 1", (unsigned long long) r->ticks[0],
                    (unsigned long long) r->ticks[1]);
        /* the sample after the move may credit to node 1 up to an interval spent on node 0 */
        cr_expect_geq(r->ticks[0], 10);
        cr_expect_geq(r->ticks[1], 10);
        cr_expect_geq(residency_sampler_cpu_ticks(rs, i, 0), 10);
        cr_expect_geq(residency_sampler_cpu_ticks(rs, i, 1), 10);
        cr_expect_eq(residency_sampler_cpu_ticks(rs, i, 0) + residency_sampler_cpu_ticks(rs, i, 1),
                     residency_total(r));
}

Test(residency_live, finish_after_the_child_exits_gives_its_final_utime, .timeout = 60) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_residency_sampler_ ResidencySampler *rs = NULL;
        uint64_t user_usec = 0, final;
        struct rusage ru;
        int status = 0;
        pid_t pid;
        size_t i;

        cr_assert_eq(topology_new_from_system(&topo), 0);
        cr_assert_eq(residency_sampler_new(topo, &rs), 0);
        pid = spawn_busy(-1, 300);
        cr_assert_eq(residency_sampler_add(rs, pid, &i), 0);
        for (unsigned n = 0; n < 6000; n++) {
                pid_t w;

                residency_sampler_sample(rs);
                w = wait4(pid, &status, WNOHANG, &ru);
                cr_assert_geq(w, 0);
                if (w == pid) {
                        user_usec = (uint64_t) ru.ru_utime.tv_sec * 1000000 +
                                    (uint64_t) ru.ru_utime.tv_usec;
                        break;
                }
                usleep(RESIDENCY_SAMPLE_USEC);
        }
        cr_assert(exited_with(status, 0), "status %d", status);
        cr_expect(residency_sampler_live(rs, i), "reaped, but not sampled since");
        residency_sampler_finish(rs, i, user_usec);
        final = user_usec * residency_ticks_per_s() / 1000000;
        cr_expect_geq(final, 20, "300 ms of CPU");
        cr_expect_eq(residency_sampler_get(rs, i)->last_utime, final);
        cr_expect_eq(residency_total(residency_sampler_get(rs, i)), final);
        cr_expect_not(residency_sampler_live(rs, i));
}

Test(residency_live, a_pid_that_is_gone_is_handled, .timeout = 60) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_residency_sampler_ ResidencySampler *rs = NULL;
        uint64_t user_usec, samples;
        pid_t gone, pid;
        size_t i = 99;

        cr_assert_eq(topology_new_from_system(&topo), 0);
        cr_assert_eq(residency_sampler_new(topo, &rs), 0);
        gone = spawn_busy(-1, 0);
        (void) kill_reap(gone);
        cr_expect_eq(residency_sampler_add(rs, gone, &i), -ESRCH);
        cr_expect_eq(i, 99);
        cr_expect_eq(residency_sampler_n_tasks(rs), 0);

        /* reaped between two samples: the next finds it gone and stops reading it */
        pid = spawn_busy(-1, 0);
        cr_assert_eq(residency_sampler_add(rs, pid, &i), 0);
        sample_until_gained(rs, i, 5);
        samples = residency_sampler_samples(rs, i);
        user_usec = kill_reap(pid);
        residency_sampler_sample(rs);
        cr_expect_not(residency_sampler_live(rs, i));
        cr_expect_eq(residency_sampler_samples(rs, i), samples);
        residency_sampler_finish(rs, i, user_usec);
        cr_expect_eq(residency_total(residency_sampler_get(rs, i)),
                     user_usec * residency_ticks_per_s() / 1000000);
}
