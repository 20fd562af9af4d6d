/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actuator.h"
#include "cgroup-levers.h"
#include "cgroup-tree.h"
#include "cgroup.h"
#include "cpumask.h"
#include "log.h"
#include "macro.h"
#include "proc.h"
#include "testutil.h"

#define HEADER "cgbalance-changes 1\n"

/* ---- live: real tasks (children of the test) and, as root, real cgroups */

#define SLICE "cgbalance.slice"
#define TEST_CAPACITY 1024u

static const CgroupLayout no_cgroups; /* mode none: moves need no cgroups */
static CgroupLayout live;
static char group[128];
static bool group_made, slice_existed;
static int proc_fd = -EBADF;
static char *state_dir, *fake_proc;
static pid_t kids[8];
static size_t n_kids;
static char *own_mask; /* the test process's affinity: what children start with */
static char *ro_mount; /* a read-only bind mount on the group's directory, to undo */

/* Kills our children and removes what we made; twice is fine. */
static void live_end(void) {
        for (size_t i = 0; i < n_kids; i++) {
                (void) kill(kids[i], SIGKILL);
                (void) waitpid(kids[i], NULL, 0);
        }
        n_kids = 0;
        if (ro_mount) {
                /* a mount point cannot be removed */
                (void) umount2(ro_mount, MNT_DETACH);
                ro_mount = mfree(ro_mount);
        }
        if (group_made) {
                (void) cgroup_remove(&live, group);
                if (!slice_existed)
                        (void) cgroup_remove(&live, SLICE);
                group_made = false;
        }
        rm_rf(state_dir);
        rm_rf(fake_proc);
        state_dir = mfree(state_dir);
        fake_proc = mfree(fake_proc);
        if (proc_fd >= 0)
                (void) close(proc_fd);
        proc_fd = -EBADF;
}

/* Criterion runs no .fini after a skip: clean up first. */
#define skip_test(...)                     \
        do {                               \
                live_end();                \
                cr_skip_test(__VA_ARGS__); \
        } while (0)

/* The affinity of a thread, as cpulist text. */
static char *mask_of(pid_t tid) {
        _cleanup_cpumask_ CpuMask *m = cpumask_new(TEST_CAPACITY);

        cr_assert_not_null(m);
        cr_assert_eq(sched_getaffinity(tid, cpumask_cpu_set_size(m), cpumask_cpu_set(m)), 0,
                     "sched_getaffinity(%d): %s", (int) tid, strerror(errno));
        return cpumask_text(m);
}

static CpuMask *parse_mask(const char *list) {
        CpuMask *m = NULL;

        cr_assert_eq(cpumask_parse(list, TEST_CAPACITY, &m, NULL), 0, "\"%s\"", list);
        return m;
}

static void set_mask(pid_t tid, const char *list) {
        _cleanup_cpumask_ CpuMask *m = parse_mask(list);

        cr_assert_eq(sched_setaffinity(tid, cpumask_cpu_set_size(m), cpumask_cpu_set(m)), 0,
                     "sched_setaffinity(%d, %s): %s", (int) tid, list, strerror(errno));
}

/* As someone else would: every thread of pid. */
static void set_all_masks(pid_t pid, const char *list) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;

        cr_assert_eq(proc_task_list_at(proc_fd, pid, &tids, &n), 0);
        for (size_t i = 0; i < n; i++)
                set_mask(tids[i], list);
}

/* Every test moves tasks between CPUs 0 and 1, starting from the test process's own mask. */
static void begin(void) {
        _cleanup_cpumask_ CpuMask *m = NULL;

        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(proc_fd, 0);
        own_mask = mask_of(0);
        m = parse_mask(own_mask);
        if (!cpumask_isset(m, 0) || !cpumask_isset(m, 1))
                skip_test("needs CPUs 0 and 1 (the test may use %s)", own_mask);
        state_dir = make_tmpdir();
}

static void begin_cgroups(void) {
        int r;

        if (!running_as_root())
                skip_test("needs root to make cgroups");
        r = cgroup_layout_detect(&live);
        if (r < 0)
                skip_test("no cgroup layout: %s", strerror(-r));
        if (!live.cpu_path[0])
                skip_test("no cpu controller here (mode %s)", cgroup_mode_to_string(live.mode));
        begin();
        (void) snprintf(group, sizeof group, SLICE "/test-actuator-%d", (int) getpid());
        {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                cr_assert_gt(asprintf(&p, "%s/" SLICE, live.cpu_path), 0);
                slice_existed = stat(p, &st) == 0;
        }
        cr_assert_eq(cgroup_create(&live, group), 0);
        group_made = true;
}

static uint64_t starttime_of(pid_t pid) {
        TaskStat st;

        cr_assert_eq(proc_task_stat_read_at(proc_fd, pid, 0, &st), 0, "stat of %d", (int) pid);
        return st.starttime_ticks;
}

static size_t threads_of(pid_t pid, pid_t **ret) {
        size_t n = 0;

        cr_assert_eq(proc_task_list_at(proc_fd, pid, ret, &n), 0);
        return n;
}

static void expect_all_threads(pid_t pid, const char *want) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = threads_of(pid, &tids);

        cr_assert_gt(n, 0);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *got = mask_of(tids[i]);

                cr_expect_str_eq(got, want, "thread %d of %d: %s, want %s", (int) tids[i],
                                 (int) pid, got, want);
        }
}

/* ---- children: they never assert and never return; live_end() kills them */

static int ready_pipe[2] = { -1, -1 };

static void *sleeper(void *arg) {
        (void) arg;
        for (;;)
                pause();
        return NULL;
}

/* A process of n threads, all sleeping. */
static pid_t spawn_threads(unsigned n) {
        pid_t pid;
        char c = 0;

        cr_assert_lt(n_kids, ELEMENTSOF(kids));
        cr_assert_eq(pipe2(ready_pipe, O_CLOEXEC), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                pthread_t t;

                /* Should the test worker die without its .fini, do not outlive it (and hold
                 * the runner's output pipe open forever). */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
                        _exit(1);
                for (unsigned i = 1; i < n; i++)
                        if (pthread_create(&t, NULL, sleeper, NULL) != 0)
                                _exit(1);
                if (write(ready_pipe[1], &c, 1) != 1)
                        _exit(1);
                (void) sleeper(NULL);
                _exit(0);
        }
        kids[n_kids++] = pid;
        (void) close(ready_pipe[1]);
        cr_assert_eq(read(ready_pipe[0], &c, 1), 1, "child %d did not start", (int) pid);
        (void) close(ready_pipe[0]);
        return pid;
}

/* A pid that was a process a moment ago and is reaped now. */
static pid_t dead_pid(void) {
        pid_t pid = fork();

        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        return pid;
}

/* ---- plans, actuators, the record file */

typedef struct OneMove {
        PlanMove move;
        Plan plan;
} OneMove;

static void one_move(OneMove *o, pid_t pid, uint64_t starttime, const char *mask) {
        *o = (OneMove){
                .move = { .pid = pid, .starttime_ticks = starttime, .mask = parse_mask(mask) },
        };
        (void) snprintf(o->move.reason, sizeof o->move.reason, "test");
        o->plan = (Plan){ .moves = &o->move, .n_moves = 1 };
}

static void one_move_done(OneMove *o) {
        o->move.mask = cpumask_free(o->move.mask);
}

static const PolicySnapshot empty_snap;

static Actuator *new_actuator(const CgroupLayout *l, const char *dir) {
        Actuator *a = NULL;

        cr_assert_eq(actuator_new(proc_fd, l, dir, &a), 0);
        return a;
}

/* Moves pid to mask with a fresh plan; asserts apply succeeded. */
static void move(Actuator *a, pid_t pid, const char *mask, uint64_t now_usec) {
        OneMove o;
        int r;

        one_move(&o, pid, starttime_of(pid), mask);
        r = actuator_apply(a, &o.plan, &empty_snap, /* dry_run= */ false, 0, now_usec);
        one_move_done(&o);
        cr_assert_eq(r, 0, "apply: %s", strerror(-r));
}

static char *state_file(const char *name) {
        char *p = NULL;

        cr_assert_gt(asprintf(&p, "%s/%s", state_dir, name), 0);
        return p;
}

/* The text of state_dir/name, NULL if there is no such file. */
static char *read_state(const char *name) {
        _cleanup_free_ char *p = state_file(name);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        char buf[8192];
        ssize_t n;

        if (fd < 0) {
                cr_assert_eq(errno, ENOENT, "%s: %s", p, strerror(errno));
                return NULL;
        }
        n = read(fd, buf, sizeof buf - 1);
        cr_assert_geq(n, 0);
        buf[n] = '\0';
        return strdup(buf);
}

static void write_state(const char *name, const char *text) {
        _cleanup_close_ int fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0);
        write_file_at(fd, name, text);
}

static bool state_exists(const char *name) {
        _cleanup_free_ char *p = state_file(name);

        return access(p, F_OK) == 0;
}

static char *task_line(pid_t pid, uint64_t starttime, const char *orig, const char *set,
                       uint64_t when) {
        char *s = NULL;

        cr_assert_gt(asprintf(&s, "task %d %" PRIu64 " %s %s %" PRIu64 "\n", (int) pid, starttime,
                              orig, set, when),
                     0);
        return s;
}

static void expect_counters(const Actuator *a, const ActuatorCounters *want) {
        const ActuatorCounters *c = actuator_counters(a);

        cr_expect_eq(c->moves, want->moves, "moves %" PRIu64, c->moves);
        cr_expect_eq(c->cross_node_moves, want->cross_node_moves, "cross-node %" PRIu64,
                     c->cross_node_moves);
        cr_expect_eq(c->weight_changes, want->weight_changes, "weights %" PRIu64,
                     c->weight_changes);
        cr_expect_eq(c->escalations, want->escalations, "escalations %" PRIu64, c->escalations);
        cr_expect_eq(c->tasks_gone, want->tasks_gone, "gone %" PRIu64, c->tasks_gone);
        cr_expect_eq(c->masks_refused, want->masks_refused, "refused %" PRIu64, c->masks_refused);
        cr_expect_eq(c->tasks_banned, want->tasks_banned, "banned %" PRIu64, c->tasks_banned);
        cr_expect_eq(c->cgroups_gone, want->cgroups_gone, "cgroups gone %" PRIu64, c->cgroups_gone);
        cr_expect_eq(c->restores, want->restores, "restores %" PRIu64, c->restores);
        cr_expect_eq(c->errors, want->errors, "errors %" PRIu64, c->errors);
}

TestSuite(actuator, .fini = live_end, .timeout = 30);

/* ---- moves */

Test(actuator, move_sets_the_mask_on_every_thread) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ pid_t *tids = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(3);
        cr_assert_eq(threads_of(pid, &tids), 3);
        a = new_actuator(&no_cgroups, state_dir);
        move(a, pid, "1", 1000);
        expect_all_threads(pid, "1");
        expect_counters(a, &(ActuatorCounters){ .moves = 1 });
}

Test(actuator, move_records_the_original_and_what_it_set) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *got = NULL, *line = NULL, *want = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(3);
        a = new_actuator(&no_cgroups, state_dir);
        move(a, pid, "1", 4242);
        line = task_line(pid, starttime_of(pid), own_mask, "1", 4242);
        cr_assert_gt(asprintf(&want, HEADER "%s", line), 0);
        got = read_state("changes");
        cr_assert_not_null(got, "no record");
        cr_expect_str_eq(got, want);
        cr_expect_not(state_exists("changes.tmp"), "temporary file left behind");
}

Test(actuator, record_that_cannot_be_written_changes_nothing) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *tmp = NULL;
        OneMove o;
        pid_t pid;
        int r;

        begin();
        pid = spawn_threads(3);
        a = new_actuator(&no_cgroups, state_dir);
        /* The temporary file cannot be created where a directory is. */
        tmp = state_file("changes.tmp");
        cr_assert_eq(mkdir(tmp, 0700), 0);
        one_move(&o, pid, starttime_of(pid), "1");
        r = actuator_apply(a, &o.plan, &empty_snap, false, 0, 1);
        one_move_done(&o);
        cr_expect_lt(r, 0, "apply went on without a record");
        expect_all_threads(pid, own_mask);
        cr_expect_not(state_exists("changes"));
        cr_expect_not(record_lookup_task(actuator_record(a), pid, starttime_of(pid), NULL, NULL));
        cr_expect_eq(actuator_counters(a)->moves, 0);
}

Test(actuator, lookup_task_needs_the_identity) {
        _cleanup_actuator_ Actuator *a = NULL;
        const CpuMask *m = NULL;
        uint64_t when = 0, start;
        pid_t pid, other;

        begin();
        pid = spawn_threads(1);
        other = spawn_threads(1);
        start = starttime_of(pid);
        a = new_actuator(&no_cgroups, NULL);
        move(a, pid, "1", 777);
        cr_assert(record_lookup_task(actuator_record(a), pid, start, &m, &when));
        expect_cpumask(m, "1", "looked up");
        cr_expect_eq(when, 777);
        cr_expect_not(record_lookup_task(actuator_record(a), pid, start + 1, &m, &when),
                      "recycled pid");
        cr_expect_not(
                record_lookup_task(actuator_record(a), other, starttime_of(other), &m, &when));
}

Test(actuator, second_move_keeps_the_first_original) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *got = NULL, *line = NULL, *want = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(2);
        a = new_actuator(&no_cgroups, state_dir);
        move(a, pid, "1", 10);
        move(a, pid, "0", 20);
        expect_all_threads(pid, "0");
        line = task_line(pid, starttime_of(pid), own_mask, "0", 20);
        cr_assert_gt(asprintf(&want, HEADER "%s", line), 0);
        got = read_state("changes");
        cr_expect_str_eq(got, want);
        cr_expect_eq(actuator_restore_all(a), 1);
        expect_all_threads(pid, own_mask);
}

Test(actuator, move_after_someone_else_changed_the_mask_keeps_theirs_as_original) {
        _cleanup_actuator_ Actuator *a = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(1);
        a = new_actuator(&no_cgroups, state_dir);
        move(a, pid, "1", 10);
        set_all_masks(pid, "0"); /* an admin */
        move(a, pid, "1", 20);
        cr_expect_eq(actuator_restore_all(a), 1);
        expect_all_threads(pid, "0");
}

Test(actuator, task_gone_before_apply_is_counted_not_an_error) {
        _cleanup_actuator_ Actuator *a = NULL;
        OneMove o;
        pid_t pid;
        int r;

        begin();
        pid = dead_pid();
        a = new_actuator(&no_cgroups, state_dir);
        one_move(&o, pid, 12345, "1");
        r = actuator_apply(a, &o.plan, &empty_snap, false, 0, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_counters(a, &(ActuatorCounters){ .tasks_gone = 1 });
        cr_expect_not(state_exists("changes"), "recorded a task that is gone");
}

Test(actuator, recycled_pid_is_not_moved) {
        _cleanup_actuator_ Actuator *a = NULL;
        OneMove o;
        pid_t pid;
        int r;

        begin();
        pid = spawn_threads(2);
        a = new_actuator(&no_cgroups, state_dir);
        one_move(&o, pid, starttime_of(pid) + 1, "1");
        r = actuator_apply(a, &o.plan, &empty_snap, false, 0, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_all_threads(pid, own_mask);
        expect_counters(a, &(ActuatorCounters){ .tasks_gone = 1 });
}

/* A thread listed in /proc that is gone when its mask is set: a /proc tree of our own lists a
 * dead tid before the live one. */
Test(actuator, thread_gone_mid_move_does_not_stop_the_others) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *stat = NULL, *pstat = NULL, *tpath = NULL, *dpath = NULL;
        _cleanup_close_ int fake_fd = -EBADF, dirfd = -EBADF;
        char buf[PROC_TASK_STAT_BUF_SIZE];
        pid_t dead, pid;
        ssize_t n;
        OneMove o;
        int r;

        begin();
        dead = dead_pid();
        pid = spawn_threads(1);
        if (dead > pid)
                skip_test("pids wrapped around (%d after %d)", (int) dead, (int) pid);
        fake_proc = make_tmpdir();
        dirfd = open(fake_proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dirfd, 0);
        {
                _cleanup_free_ char *text = NULL;
                _cleanup_fclose_ FILE *f = fopen("/proc/stat", "re");
                size_t size = 0;

                cr_assert_not_null(f);
                cr_assert_gt(getdelim(&text, &size, '\0', f), 0);
                write_file_at(dirfd, "stat", text);
        }
        cr_assert_gt(asprintf(&pstat, "/proc/%d/stat", (int) pid), 0);
        {
                _cleanup_close_ int fd = open(pstat, O_RDONLY | O_CLOEXEC);

                cr_assert_geq(fd, 0);
                n = read(fd, buf, sizeof buf - 1);
                cr_assert_gt(n, 0);
                buf[n] = '\0';
        }
        cr_assert_gt(asprintf(&stat, "%d/stat", (int) pid), 0);
        write_file_at(dirfd, stat, buf);
        cr_assert_gt(asprintf(&dpath, "%d/task/%d/stat", (int) pid, (int) dead), 0);
        write_file_at(dirfd, dpath, buf);
        cr_assert_gt(asprintf(&tpath, "%d/task/%d/stat", (int) pid, (int) pid), 0);
        write_file_at(dirfd, tpath, buf);

        fake_fd = open(fake_proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fake_fd, 0);
        cr_assert_eq(actuator_new(fake_fd, &no_cgroups, state_dir, &a), 0);
        one_move(&o, pid, starttime_of(pid), "1");
        r = actuator_apply(a, &o.plan, &empty_snap, false, 0, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_all_threads(pid, "1");
        expect_counters(a, &(ActuatorCounters){ .moves = 1 });
}

Test(actuator, threads_pinned_apart_are_not_moved) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ pid_t *tids = NULL;
        _cleanup_free_ char *t0 = NULL, *t2 = NULL;
        OneMove o;
        pid_t pid;
        int r;

        begin();
        pid = spawn_threads(3);
        cr_assert_eq(threads_of(pid, &tids), 3);
        set_mask(tids[1], "0"); /* the program pins one of its threads */
        a = new_actuator(&no_cgroups, state_dir);
        one_move(&o, pid, starttime_of(pid), "1");
        r = actuator_apply(a, &o.plan, &empty_snap, false, 0, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        t0 = mask_of(tids[0]);
        t2 = mask_of(tids[2]);
        cr_expect_str_eq(t0, own_mask);
        cr_expect_str_eq(t2, own_mask);
        expect_counters(a, &(ActuatorCounters){ .masks_refused = 1 });
}

Test(actuator, mask_of_offline_cpus_only_is_refused_without_a_syscall) {
        _cleanup_actuator_ Actuator *a = NULL;
        long conf = sysconf(_SC_NPROCESSORS_CONF);
        char cpu[24];
        OneMove o;
        pid_t pid;
        int r;

        begin();
        cr_assert_gt(conf, 0);
        if (conf >= (long) TEST_CAPACITY)
                skip_test("%ld CPUs", conf);
        (void) snprintf(cpu, sizeof cpu, "%ld", conf); /* one past the last CPU */
        pid = spawn_threads(1);
        a = new_actuator(&no_cgroups, state_dir);
        one_move(&o, pid, starttime_of(pid), cpu);
        r = actuator_apply(a, &o.plan, &empty_snap, false, 0, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_all_threads(pid, own_mask);
        expect_counters(a, &(ActuatorCounters){ .masks_refused = 1 });
}

Test(actuator, cross_node_move_is_counted_and_a_failed_memory_move_is_not_fatal) {
        _cleanup_actuator_ Actuator *a = NULL;
        const ActuatorCounters *c;
        OneMove o;
        pid_t pid;
        int r;

        begin();
        pid = spawn_threads(1);
        a = new_actuator(&no_cgroups, state_dir);
        one_move(&o, pid, starttime_of(pid), "1");
        /* Node 4095 exists nowhere: the memory move fails, the mask change stands. */
        o.move.from_node = 0;
        o.move.to_node = 4095;
        r = actuator_apply(a, &o.plan, &empty_snap, false, /* migrate_memory_max_mb= */ 1024, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_all_threads(pid, "1");
        c = actuator_counters(a);
        cr_expect_eq(c->moves, 1);
        cr_expect_eq(c->cross_node_moves, 1);
        cr_expect_eq(c->errors, 1, "the failed memory move is counted");
}

/* Node 1 is named: on a one-node machine the kernel refuses it, which shows the call was made. */
static const ActuatorCounters *move_to_node_1(Actuator **a, uint64_t migrate_max_mb) {
        OneMove o;
        pid_t pid;
        int r;

        if (numa_available() < 0)
                skip_test("no NUMA support in this kernel");
        begin();
        pid = spawn_threads(1);
        *a = new_actuator(&no_cgroups, state_dir);
        one_move(&o, pid, starttime_of(pid), "1");
        o.move.from_node = 0;
        o.move.to_node = 1;
        r = actuator_apply(*a, &o.plan, &empty_snap, false, migrate_max_mb, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_all_threads(pid, "1");
        return actuator_counters(*a);
}

Test(actuator, memory_of_a_task_above_the_bound_stays) {
        _cleanup_actuator_ Actuator *a = NULL;
        const ActuatorCounters *c = move_to_node_1(&a, /* migrate_memory_max_mb= */ 1);

        /* a forked test process has more than 1 MiB resident: no call, so no error */
        cr_expect_eq(c->moves, 1);
        cr_expect_eq(c->cross_node_moves, 1);
        cr_expect_eq(c->errors, 0);
}

Test(actuator, memory_of_a_task_within_the_bound_moves) {
        _cleanup_actuator_ Actuator *a = NULL;
        const ActuatorCounters *c = move_to_node_1(&a, UINT64_MAX);

        cr_expect_eq(c->moves, 1);
        /* no node 1 with memory we may use: migrate_pages() refuses it (counted); else the
         * pages move */
        cr_expect_eq(c->errors, numa_bitmask_isbitset(numa_all_nodes_ptr, 1) ? 0 : 1,
                     "errors %" PRIu64, c->errors);
}

Test(actuator, memory_stays_without_a_bound) {
        _cleanup_actuator_ Actuator *a = NULL;
        const ActuatorCounters *c = move_to_node_1(&a, /* migrate_memory_max_mb= */ 0);

        cr_expect_eq(c->moves, 1);
        cr_expect_eq(c->errors, 0);
}

/* migrate_memory_max_mb is the plan's budget, all moves together: two tasks of the same size,
 * a budget of one and a half: the first move's memory is moved (on a one-node machine the kernel
 * refuses node 1: one error counted, so the call was made), the second's stays (no call). */
Test(actuator, memory_moves_within_the_ticks_budget_all_moves_together) {
        _cleanup_actuator_ Actuator *a = NULL;
        PlanMove moves[2] = {};
        Plan plan = { .moves = moves, .n_moves = 2 };
        uint64_t rss[2] = {}, budget_mb;
        pid_t pids[2];
        int r;

        if (numa_available() < 0)
                skip_test("no NUMA support in this kernel");
        begin();
        for (size_t i = 0; i < 2; i++) {
                pids[i] = spawn_threads(1);
                cr_assert_eq(proc_task_rss_read_at(proc_fd, pids[i], &rss[i]), 0);
                moves[i] = (PlanMove){ .pid = pids[i],
                                       .starttime_ticks = starttime_of(pids[i]),
                                       .from_node = 0,
                                       .to_node = 1,
                                       .mask = parse_mask("1") };
        }
        budget_mb = (rss[0] > rss[1] ? rss[0] : rss[1]) * 3 / 2 / 1024 + 1;
        cr_assert_lt(budget_mb * 1024, rss[0] + rss[1], "RSS %" PRIu64 " and %" PRIu64 " KiB",
                     rss[0], rss[1]);
        a = new_actuator(&no_cgroups, state_dir);
        r = actuator_apply(a, &plan, &empty_snap, false, budget_mb, 1);
        for (size_t i = 0; i < 2; i++)
                cpumask_free(moves[i].mask);
        cr_expect_eq(r, 0);
        cr_expect_eq(actuator_counters(a)->moves, 2);
        cr_expect_eq(actuator_counters(a)->errors,
                     numa_bitmask_isbitset(numa_all_nodes_ptr, 1) ? 0 : 1,
                     "one call to migrate_pages(), not two: errors %" PRIu64,
                     actuator_counters(a)->errors);
}

Test(actuator, pid_1_and_kernel_threads_are_never_touched) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        _cleanup_free_ char *init_mask = NULL, *kthread_mask = NULL;
        PlanMove moves[2] = {};
        pid_t kthread = 0;
        size_t n = 0;
        int r;

        begin();
        cr_assert_eq(proc_pid_list_at(proc_fd, &pids, &n), 0);
        for (size_t i = 0; i < n && !kthread; i++) {
                TaskStat st;

                if (proc_task_stat_read_at(proc_fd, pids[i], 0, &st) == 0 &&
                    task_stat_is_kthread(&st))
                        kthread = pids[i];
        }
        if (!kthread)
                skip_test("no kernel thread visible (a container?)");
        /* Each is planned onto the mask it has: should the check fail, nothing changes. */
        init_mask = mask_of(1);
        kthread_mask = mask_of(kthread);
        moves[0] = (PlanMove){ .pid = 1,
                               .starttime_ticks = starttime_of(1),
                               .mask = parse_mask(init_mask) };
        moves[1] = (PlanMove){ .pid = kthread,
                               .starttime_ticks = starttime_of(kthread),
                               .mask = parse_mask(kthread_mask) };
        a = new_actuator(&no_cgroups, NULL);
        r = actuator_apply(a, &(Plan){ .moves = moves, .n_moves = 2 }, &empty_snap, false, 0, 1);
        for (size_t i = 0; i < ELEMENTSOF(moves); i++)
                cpumask_free(moves[i].mask);
        cr_expect_eq(r, 0);
        expect_counters(a, &(ActuatorCounters){ .errors = 2 });
        cr_expect_not(record_lookup_task(actuator_record(a), 1, starttime_of(1), NULL, NULL));
        cr_expect_not(
                record_lookup_task(actuator_record(a), kthread, starttime_of(kthread), NULL, NULL));
}

Test(actuator, dry_run_changes_nothing_and_records_nothing) {
        _cleanup_actuator_ Actuator *a = NULL;
        PolicyTask task = {};
        OneMove o;
        pid_t pid;
        int r;

        begin();
        pid = spawn_threads(2);
        task = (PolicyTask){ .pid = pid, .starttime_ticks = starttime_of(pid), .comm = "kid" };
        a = new_actuator(&no_cgroups, state_dir);
        one_move(&o, pid, task.starttime_ticks, "1");
        r = actuator_apply(a, &o.plan, &(PolicySnapshot){ .tasks = &task, .n_tasks = 1 },
                           /* dry_run= */ true, 0, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_all_threads(pid, own_mask);
        cr_expect_not(state_exists("changes"));
        cr_expect_not(state_exists("changes.tmp"));
        cr_expect_not(
                record_lookup_task(actuator_record(a), pid, task.starttime_ticks, NULL, NULL));
        expect_counters(a, &(ActuatorCounters){});
}

/* ---- errors from the kernel */

Test(actuator, mask_outside_the_cpuset_is_refused_and_changes_nothing) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_cpumask_ CpuMask *cpu0 = NULL;
        OneMove o;
        pid_t pid;
        int r;

        begin_cgroups();
        if (live.mode == CGROUP_MODE_V2 || !live.cpuset_path[0])
                skip_test("needs a cgroup v1 cpuset (mode %s)", cgroup_mode_to_string(live.mode));
        cpu0 = parse_mask("0");
        cr_assert_eq(cgroup_set_cpuset(&live, group, cpu0, NULL), 0);
        pid = spawn_threads(2);
        cr_assert_eq(cgroup_attach_pid(&live, group, pid), 0);
        expect_all_threads(pid, "0");
        a = new_actuator(&live, state_dir);
        one_move(&o, pid, starttime_of(pid), "1");
        r = actuator_apply(a, &o.plan, &empty_snap, false, 0, 1);
        one_move_done(&o);
        cr_expect_eq(r, 0);
        expect_all_threads(pid, "0");
        expect_counters(a, &(ActuatorCounters){ .masks_refused = 1 });
        cr_expect_not(record_lookup_task(actuator_record(a), pid, starttime_of(pid), NULL, NULL));
        cr_expect_not(state_exists("changes"), "the refused move stayed in the record");
}

typedef struct HelperResult {
        int stage, r;
        bool banned;
        ActuatorCounters first, second;
} HelperResult;

/* As an unprivileged user: move a root-owned task. Never asserts. */
static void eperm_helper(int fd, const Plan *plan) {
        HelperResult res = {};
        Actuator *a = NULL;

        if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
            setresuid(65534, 65534, 65534) < 0)
                res.stage = 1;
        else if ((res.r = actuator_new(proc_fd, &no_cgroups, NULL, &a)) < 0)
                res.stage = 2;
        else {
                res.r = actuator_apply(a, plan, &empty_snap, false, 0, 1);
                res.first = *actuator_counters(a);
                res.banned = record_task_banned(actuator_record(a), plan->moves[0].pid,
                                                plan->moves[0].starttime_ticks);
                (void) actuator_apply(a, plan, &empty_snap, false, 0, 2);
                res.second = *actuator_counters(a);
                res.stage = 3;
        }
        (void) !write(fd, &res, sizeof res);
        _exit(0);
}

Test(actuator, eperm_bans_the_task) {
        HelperResult res = {};
        int p[2];
        OneMove o;
        pid_t pid, helper;

        if (!running_as_root())
                skip_test("needs root to switch to an unprivileged user");
        begin();
        pid = spawn_threads(2);
        one_move(&o, pid, starttime_of(pid), "1");
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_lt(n_kids, ELEMENTSOF(kids));
        helper = fork();
        cr_assert_geq(helper, 0);
        if (helper == 0)
                eperm_helper(p[1], &o.plan);
        kids[n_kids++] = helper;
        one_move_done(&o);
        (void) close(p[1]);
        cr_assert_eq(read(p[0], &res, sizeof res), (ssize_t) sizeof res, "helper said nothing");
        (void) close(p[0]);
        cr_assert_eq(res.stage, 3, "helper stopped at stage %d: %s", res.stage, strerror(-res.r));
        cr_expect_eq(res.r, 0);
        cr_expect_eq(res.first.tasks_banned, 1);
        cr_expect_eq(res.first.moves, 0);
        cr_expect_eq(res.first.errors, 0);
        cr_expect(res.banned, "not banned");
        cr_expect_eq(res.second.tasks_banned, 1, "tried again after EPERM");
        cr_expect_eq(res.second.errors, 0);
        expect_all_threads(pid, own_mask);
}

/* ---- restore */

Test(actuator, restore_all_puts_back_the_original_on_every_thread) {
        _cleanup_actuator_ Actuator *a = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(3);
        a = new_actuator(&no_cgroups, state_dir);
        move(a, pid, "1", 1);
        expect_all_threads(pid, "1");
        cr_expect_eq(actuator_restore_all(a), 1);
        expect_all_threads(pid, own_mask);
        cr_expect_not(state_exists("changes"), "record not emptied");
        cr_expect_not(record_lookup_task(actuator_record(a), pid, starttime_of(pid), NULL, NULL));
        expect_counters(a, &(ActuatorCounters){ .moves = 1, .restores = 1 });
}

Test(actuator, restore_leaves_a_mask_someone_else_changed) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ pid_t *tids = NULL;
        _cleanup_free_ char *main_mask = NULL, *other_mask = NULL;
        pid_t changed, kept;

        begin();
        changed = spawn_threads(2);
        kept = spawn_threads(2);
        a = new_actuator(&no_cgroups, state_dir);
        move(a, changed, "1", 1);
        move(a, kept, "1", 1);
        /* `taskset -p 0 PID`: the main thread only. The task is the admin's now, all of it. */
        set_mask(changed, "0");
        cr_expect_eq(actuator_restore_all(a), 1);
        cr_assert_eq(threads_of(changed, &tids), 2);
        main_mask = mask_of(changed);
        other_mask = mask_of(tids[0] == changed ? tids[1] : tids[0]);
        cr_expect_str_eq(main_mask, "0");
        cr_expect_str_eq(other_mask, "1", "half restored: %s", other_mask);
        expect_all_threads(kept, own_mask);
}

Test(actuator, restore_without_a_state_dir_works_from_memory) {
        _cleanup_actuator_ Actuator *a = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(2);
        a = new_actuator(&no_cgroups, NULL);
        move(a, pid, "1", 1);
        cr_expect_eq(actuator_restore_all(a), 1);
        expect_all_threads(pid, own_mask);
}

/* ---- reconcile: a record left by a run that crashed */

Test(actuator, reconcile_restores_what_a_crashed_run_left) {
        _cleanup_actuator_ Actuator *b = NULL;
        Actuator *a;
        pid_t pid;

        begin();
        pid = spawn_threads(3);
        a = new_actuator(&no_cgroups, state_dir);
        move(a, pid, "1", 1);
        a = actuator_free(a); /* no restore: as if killed */
        expect_all_threads(pid, "1");
        b = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(b), 1);
        expect_all_threads(pid, own_mask);
        cr_expect_not(state_exists("changes"));
}

Test(actuator, reconcile_without_a_record_is_zero) {
        _cleanup_actuator_ Actuator *a = NULL;

        begin();
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(a), 0);
        expect_counters(a, &(ActuatorCounters){});
}

Test(actuator, reconcile_skips_a_recycled_pid) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *line = NULL, *text = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(2);
        set_all_masks(pid, "1");
        /* The record's task had this pid but started at another time: not this one. */
        line = task_line(pid, starttime_of(pid) + 1, "0", "1", 5);
        cr_assert_gt(asprintf(&text, HEADER "%s", line), 0);
        write_state("changes", text);
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(a), 0);
        expect_all_threads(pid, "1");
        cr_expect_not(state_exists("changes"), "record not emptied");
        expect_counters(a, &(ActuatorCounters){ .tasks_gone = 1 });
}

Test(actuator, reconcile_restores_the_online_part_of_the_original) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_cpumask_ CpuMask *orig = NULL;
        _cleanup_free_ char *orig_text = NULL, *line = NULL, *text = NULL;
        long conf = sysconf(_SC_NPROCESSORS_CONF);
        pid_t pid;

        begin();
        if (conf + 1 > 64)
                skip_test("%ld CPUs", conf);
        pid = spawn_threads(2);
        set_all_masks(pid, "0");
        /* CPU 1 and one that does not exist (offline, as far as the task can tell) */
        orig = parse_mask("1");
        cr_assert_eq(cpumask_set(orig, (unsigned) conf), 0);
        orig_text = cpumask_text(orig);
        line = task_line(pid, starttime_of(pid), orig_text, "0", 5);
        cr_assert_gt(asprintf(&text, HEADER "%s", line), 0);
        write_state("changes", text);
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(a), 1);
        expect_all_threads(pid, "1");
}

Test(actuator, reconcile_of_an_offline_original_gives_every_online_cpu) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *line = NULL, *text = NULL, *cpu = NULL;
        long conf = sysconf(_SC_NPROCESSORS_CONF);
        pid_t pid;

        begin();
        if (conf + 1 > 64)
                skip_test("%ld CPUs", conf);
        pid = spawn_threads(2);
        set_all_masks(pid, "1");
        cr_assert_gt(asprintf(&cpu, "%ld", conf), 0);
        line = task_line(pid, starttime_of(pid), cpu, "1", 5);
        cr_assert_gt(asprintf(&text, HEADER "%s", line), 0);
        write_state("changes", text);
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(a), 1);
        /* every online CPU its cpuset allows: the test's own mask, at least CPUs 0 and 1 */
        expect_all_threads(pid, own_mask);
}

Test(actuator, reconcile_of_an_original_outside_the_cpuset_gives_what_the_cpuset_allows) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_cpumask_ CpuMask *cpu0 = NULL;
        _cleanup_free_ char *line = NULL, *text = NULL;
        pid_t pid;

        begin_cgroups();
        if (live.mode == CGROUP_MODE_V2 || !live.cpuset_path[0])
                skip_test("needs a cgroup v1 cpuset (mode %s)", cgroup_mode_to_string(live.mode));
        pid = spawn_threads(2);
        cr_assert_eq(cgroup_attach_pid(&live, group, pid), 0);
        set_all_masks(pid, "0");
        /* It had CPU 1 before us; since, its cpuset shrank to CPU 0. */
        cpu0 = parse_mask("0");
        cr_assert_eq(cgroup_set_cpuset(&live, group, cpu0, NULL), 0);
        line = task_line(pid, starttime_of(pid), "1", "0", 5);
        cr_assert_gt(asprintf(&text, HEADER "%s", line), 0);
        write_state("changes", text);
        a = new_actuator(&live, state_dir);
        cr_expect_eq(actuator_reconcile(a), 1);
        expect_all_threads(pid, "0");
        expect_counters(a, &(ActuatorCounters){ .restores = 1 });
}

Test(actuator, corrupt_record_is_kept_aside_and_nothing_is_restored) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *line = NULL, *text = NULL, *kept = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(2);
        set_all_masks(pid, "1");
        /* A good first line for this very task, then garbage: never half applied. */
        line = task_line(pid, starttime_of(pid), "0", "1", 5);
        cr_assert_gt(asprintf(&text, HEADER "%sgarbage\n", line), 0);
        write_state("changes", text);
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(a), -EBADMSG);
        expect_all_threads(pid, "1");
        cr_expect_not(state_exists("changes"));
        kept = read_state("changes.corrupt");
        cr_assert_not_null(kept, "no changes.corrupt");
        cr_expect_str_eq(kept, text);
        cr_expect_not(record_lookup_task(actuator_record(a), pid, starttime_of(pid), NULL, NULL));
        cr_expect_eq(actuator_counters(a)->restores, 0);
}

Test(actuator, corrupt_record_fixture_is_refused) {
        _cleanup_actuator_ Actuator *a = NULL;

        begin();
        /* A NUL byte, which a C string in a test cannot hold. */
        copy_fixture("actuator/corrupt", state_dir);
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(a), -EBADMSG);
        cr_expect(state_exists("changes.corrupt"));
        cr_expect_not(state_exists("changes"));
}

/* actuator_reconcile(a) into *ret_r, and what it logged meanwhile (the caller frees it). */
static char *reconcile_logged(Actuator *a, int *ret_r) {
        _cleanup_fclose_ FILE *f = tmpfile();
        _cleanup_close_ int saved = dup(STDERR_FILENO);
        char *text = NULL;
        size_t size = 0;

        cr_assert_not_null(f);
        cr_assert_geq(saved, 0);
        log_set_target(LOG_TARGET_STDERR); /* not the journal, should the test run under it */
        (void) fflush(stderr);
        cr_assert_geq(dup2(fileno(f), STDERR_FILENO), 0);
        *ret_r = actuator_reconcile(a);
        (void) fflush(stderr);
        cr_assert_geq(dup2(saved, STDERR_FILENO), 0);
        rewind(f);
        if (getdelim(&text, &size, '\0', f) < 0) {
                free(text);
                text = strdup("");
        }
        cr_assert_not_null(text);
        return text;
}

/* state_dir/changes: first a line that would put pid's mask back, then n - 1 lines of tasks
 * that cannot be there (pids above the kernel's PID_MAX_LIMIT, which the format allows). */
static void write_record_of(size_t n, pid_t pid) {
        _cleanup_free_ char *path = state_file("changes"), *first = NULL;
        _cleanup_fclose_ FILE *f = fopen(path, "we");

        cr_assert_not_null(f);
        first = task_line(pid, starttime_of(pid), own_mask, "1", 5);
        fputs(HEADER, f);
        fputs(first, f);
        for (size_t i = 1; i < n; i++)
                fprintf(f, "task %zu 17 0 1 9\n", (size_t) 4194304 + i);
        cr_assert_eq(fflush(f), 0);
}

/* Issue 21 item 3: 2.9 million valid lines (what fits in 64 MiB) took 16 s and 581 MB. */
Test(actuator, a_record_of_more_entries_than_the_cap_is_kept_aside_unread_and_named) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *log = NULL, *want = NULL, *kept = NULL, *first = NULL;
        pid_t pid;
        int r;

        begin();
        pid = spawn_threads(2);
        set_all_masks(pid, "1");
        write_record_of(RECORD_ENTRIES_MAX + 1, pid);
        a = new_actuator(&no_cgroups, state_dir);
        log = reconcile_logged(a, &r);
        cr_expect_eq(r, -EBADMSG);
        cr_assert_gt(asprintf(&want,
                              "%s/changes: %u entries, more than %u: not a record this daemon "
                              "wrote, kept as changes.corrupt, nothing restored\n",
                              state_dir, RECORD_ENTRIES_MAX + 1, RECORD_ENTRIES_MAX),
                     0);
        cr_expect(strstr(log, want), "log: %s", log);
        expect_all_threads(pid, "1");
        cr_expect_not(state_exists("changes"));
        kept = read_state("changes.corrupt");
        first = task_line(pid, starttime_of(pid), own_mask, "1", 5);
        cr_assert_not_null(kept, "no changes.corrupt");
        cr_expect(strncmp(kept, HEADER, strlen(HEADER)) == 0 &&
                          strncmp(kept + strlen(HEADER), first, strlen(first)) == 0,
                  "not the record: %.200s", kept);
        expect_counters(a, &(ActuatorCounters){}); /* not one task looked at */
}

Test(actuator, a_record_at_the_entries_cap_reconciles) {
        _cleanup_actuator_ Actuator *a = NULL;
        pid_t pid;

        begin();
        pid = spawn_threads(2);
        set_all_masks(pid, "1");
        write_record_of(RECORD_ENTRIES_MAX, pid);
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_reconcile(a), 1);
        expect_all_threads(pid, own_mask);
        cr_expect_not(state_exists("changes"));
        cr_expect_not(state_exists("changes.corrupt"));
        expect_counters(a,
                        &(ActuatorCounters){ .restores = 1, .tasks_gone = RECORD_ENTRIES_MAX - 1 });
}

Test(actuator, a_record_over_the_size_cap_is_kept_aside_unread_and_named) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *path = NULL, *log = NULL, *want = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        begin();
        path = state_file("changes");
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(ftruncate(fd, RECORD_SIZE_MAX + 1), 0); /* a hole: NUL bytes, if read */
        a = new_actuator(&no_cgroups, state_dir);
        log = reconcile_logged(a, &r);
        cr_expect_eq(r, -EBADMSG);
        cr_assert_gt(asprintf(&want,
                              "%s/changes: %u bytes, more than 32 MiB: not a record this daemon "
                              "wrote, kept as changes.corrupt, nothing restored\n",
                              state_dir, RECORD_SIZE_MAX + 1),
                     0);
        cr_expect(strstr(log, want), "log: %s", log);
        cr_expect(state_exists("changes.corrupt"));
        cr_expect_not(state_exists("changes"));
}

/* ---- weights */

static const char *weight_file(void) {
        return live.mode == CGROUP_MODE_V2 ? "cpu.weight" : "cpu.shares";
}

static char *read_weight(void) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[64];
        ssize_t n;

        cr_assert_gt(asprintf(&p, "%s/%s/%s", live.cpu_path, group, weight_file()), 0);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", p, strerror(errno));
        n = read(fd, buf, sizeof buf - 1);
        cr_assert_gt(n, 0);
        buf[n] = '\0';
        return strdup(buf);
}

static void write_weight(const char *text) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;

        cr_assert_gt(asprintf(&p, "%s/%s/%s", live.cpu_path, group, weight_file()), 0);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", p, strerror(errno));
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
}

/* The native text of a v2 weight: shares on v1. */
static const char *native(const char *v1, const char *v2) {
        return live.mode == CGROUP_MODE_V2 ? v2 : v1;
}

static void apply_weight(Actuator *a, const char *path, uint32_t to) {
        PolicyCgroup cg = { .path = path, .weight = 100, .base_weight = 100 };
        PlanWeight w = { .cgroup = 0, .from = 100, .to = to, .reason = "test" };
        int r;

        r = actuator_apply(a, &(Plan){ .weights = &w, .n_weights = 1 },
                           &(PolicySnapshot){ .cgroups = &cg, .n_cgroups = 1 }, false, 0, 1);
        cr_assert_eq(r, 0, "apply: %s", strerror(-r));
}

static void expect_weight(const char *v1, const char *v2) {
        _cleanup_free_ char *got = read_weight(), *want = NULL;

        cr_assert_gt(asprintf(&want, "%s\n", native(v1, v2)), 0);
        cr_expect_str_eq(got, want);
}

Test(actuator, weight_is_written_and_its_original_recorded) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *got = NULL, *want = NULL;
        uint64_t orig = 0, set = 0;

        begin_cgroups();
        expect_weight("1024", "100");
        a = new_actuator(&live, state_dir);
        apply_weight(a, group, 150);
        expect_weight("1536", "150");
        cr_assert_gt(asprintf(&want, HEADER "cgroup %s %s %s\n", native("1024", "100"),
                              native("1536", "150"), group),
                     0);
        got = read_state("changes");
        cr_expect_str_eq(got, want);
        cr_assert(
                record_lookup_cgroup(actuator_record(a), group, RECORD_CGROUP_WEIGHT, &orig, &set));
        cr_expect_eq(orig, strtoull(native("1024", "100"), NULL, 10));
        cr_expect_eq(set, strtoull(native("1536", "150"), NULL, 10));
        expect_counters(a, &(ActuatorCounters){ .weight_changes = 1 });
}

Test(actuator, restore_puts_the_weight_back) {
        _cleanup_actuator_ Actuator *a = NULL;

        begin_cgroups();
        a = new_actuator(&live, state_dir);
        apply_weight(a, group, 150);
        apply_weight(a, group, 300);
        cr_expect_eq(actuator_restore_all(a), 1);
        expect_weight("1024", "100");
        cr_expect_not(
                record_lookup_cgroup(actuator_record(a), group, RECORD_CGROUP_WEIGHT, NULL, NULL));
        cr_expect_not(state_exists("changes"));
}

Test(actuator, restore_leaves_a_weight_someone_else_changed) {
        _cleanup_actuator_ Actuator *a = NULL;

        begin_cgroups();
        a = new_actuator(&live, state_dir);
        apply_weight(a, group, 150);
        write_weight(native("2000", "200"));
        cr_expect_eq(actuator_restore_all(a), 0);
        expect_weight("2000", "200");
}

Test(actuator, reconcile_restores_a_weight_a_crashed_run_left) {
        _cleanup_actuator_ Actuator *b = NULL;
        Actuator *a;
        pid_t pid;

        begin_cgroups();
        write_weight(native("1000", "97")); /* not a round weight: restored exactly */
        pid = spawn_threads(2);
        a = new_actuator(&live, state_dir);
        apply_weight(a, group, 150);
        move(a, pid, "1", 1);
        a = actuator_free(a);
        b = new_actuator(&live, state_dir);
        cr_expect_eq(actuator_reconcile(b), 2);
        expect_weight("1000", "97");
        expect_all_threads(pid, own_mask);
}

Test(actuator, weight_of_a_removed_group_is_counted_as_gone) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *gone = NULL;

        begin_cgroups();
        cr_assert_gt(asprintf(&gone, "%s/never-made", group), 0);
        a = new_actuator(&live, state_dir);
        apply_weight(a, gone, 150);
        expect_counters(a, &(ActuatorCounters){ .cgroups_gone = 1 });
        cr_expect_not(state_exists("changes"));
}

/* Applies a weight change as apply_weight() does, with the log (stderr) sent to a file: returns
 * what it logged. */
static char *apply_weight_logged(Actuator *a, const char *path, uint32_t to) {
        PolicyCgroup cg = { .path = path, .weight = 100, .base_weight = 100 };
        PlanWeight w = { .cgroup = 0, .from = 100, .to = to, .reason = "test" };
        _cleanup_fclose_ FILE *f = tmpfile();
        _cleanup_close_ int saved = dup(STDERR_FILENO);
        char *text = NULL;
        size_t size = 0;
        int r;

        cr_assert_not_null(f);
        cr_assert_geq(saved, 0);
        log_set_target(LOG_TARGET_STDERR); /* not the journal, should the test run under it */
        (void) fflush(stderr);
        cr_assert_geq(dup2(fileno(f), STDERR_FILENO), 0);
        r = actuator_apply(a, &(Plan){ .weights = &w, .n_weights = 1 },
                           &(PolicySnapshot){ .cgroups = &cg, .n_cgroups = 1 }, false, 0, 1);
        (void) fflush(stderr);
        cr_assert_geq(dup2(saved, STDERR_FILENO), 0);
        cr_assert_eq(r, 0, "apply: %s", strerror(-r));
        rewind(f);
        if (getdelim(&text, &size, '\0', f) < 0) {
                cr_assert(feof(f), "reading the log: %s", strerror(errno));
                free(text);
                text = strdup("");
        }
        cr_assert_not_null(text);
        return text;
}

/* A unit's ProtectControlGroups= makes the cgroup tree read-only but for its ReadWritePaths=. A
 * group under a real read-only bind mount: the write fails with EROFS and changes nothing, it is
 * counted as an error, and the warning names the group, the errno and the unit setting to fix. */
Test(actuator, weight_of_a_read_only_group_is_an_error_that_names_read_write_paths) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *dir = NULL, *logged = NULL;

        begin_cgroups();
        write_weight(native("1000", "97"));
        cr_assert_gt(asprintf(&dir, "%s/%s", live.cpu_path, group), 0);
        /* In a mount namespace of this test's own, so that a crashed or killed test leaves no
         * read-only mount behind; live_end() unmounts it so that the group can be removed. */
        if (unshare(CLONE_NEWNS) < 0)
                skip_test("cannot make a mount namespace: %s", strerror(errno));
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
                skip_test("cannot stop mounts propagating to the host: %s", strerror(errno));
        if (mount(dir, dir, NULL, MS_BIND, NULL) < 0)
                skip_test("cannot bind-mount %s: %s", dir, strerror(errno));
        ro_mount = TAKE_PTR(dir);
        if (mount(NULL, ro_mount, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
                skip_test("cannot make the bind mount on %s read-only: %s", ro_mount,
                          strerror(errno));
        a = new_actuator(&live, state_dir);
        logged = apply_weight_logged(a, group, 150);
        expect_weight("1000", "97");
        expect_counters(a, &(ActuatorCounters){ .errors = 1 });
        cr_expect_not(
                record_lookup_cgroup(actuator_record(a), group, RECORD_CGROUP_WEIGHT, NULL, NULL));
        cr_expect_not(state_exists("changes"), "the failed write stayed in the record");
        cr_expect(strstr(logged, group), "log: %s", logged);
        cr_expect(strstr(logged, "Read-only file system"), "log: %s", logged);
        cr_expect(strstr(logged, "ReadWritePaths="), "log: %s", logged);
}

Test(actuator, weight_outside_the_range_or_group_is_an_error) {
        _cleanup_actuator_ Actuator *a = NULL;
        PolicyCgroup cg = { .path = "x" };
        PlanWeight w[] = {
                { .cgroup = 0, .to = 0 },
                { .cgroup = 0, .to = 10001 },
                { .cgroup = 1, .to = 100 }, /* no such index */
        };
        int r;

        begin();
        a = new_actuator(&no_cgroups, state_dir);
        r = actuator_apply(a, &(Plan){ .weights = w, .n_weights = ELEMENTSOF(w) },
                           &(PolicySnapshot){ .cgroups = &cg, .n_cgroups = 1 }, false, 0, 1);
        cr_expect_eq(r, 0);
        expect_counters(a, &(ActuatorCounters){ .errors = 3 });
}

Test(actuator, weight_dry_run_changes_nothing) {
        _cleanup_actuator_ Actuator *a = NULL;
        PolicyCgroup cg = {};
        PlanWeight w = { .cgroup = 0, .from = 100, .to = 150 };
        int r;

        begin_cgroups();
        cg.path = group;
        a = new_actuator(&live, state_dir);
        r = actuator_apply(a, &(Plan){ .weights = &w, .n_weights = 1 },
                           &(PolicySnapshot){ .cgroups = &cg, .n_cgroups = 1 }, true, 0, 1);
        cr_expect_eq(r, 0);
        expect_weight("1024", "100");
        cr_expect_not(state_exists("changes"));
        expect_counters(a, &(ActuatorCounters){});
}

/* ---- levers past the weight: cpu.idle and the quota */

#define PROTECTED "cgbalance.slice/protected" /* the group the steps are for: never made */

static char *read_group_file(const char *file) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[128];
        ssize_t n;

        cr_assert_gt(asprintf(&p, "%s/%s/%s", live.cpu_path, group, file), 0);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", p, strerror(errno));
        n = read(fd, buf, sizeof buf - 1);
        cr_assert_gt(n, 0);
        buf[n] = '\0';
        return strdup(buf);
}

static void write_group_file(const char *file, const char *text) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;

        cr_assert_gt(asprintf(&p, "%s/%s/%s", live.cpu_path, group, file), 0);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", p, strerror(errno));
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text), "%s: %s", p,
                     strerror(errno));
}

static void expect_group_file(const char *file, const char *want) {
        _cleanup_free_ char *got = read_group_file(file);

        cr_expect_str_eq(got, want, "%s", file);
}

static bool v2(void) {
        return live.mode == CGROUP_MODE_V2;
}

static const char *quota_file(void) {
        return v2() ? "cpu.max" : "cpu.cfs_quota_us";
}

/* The group's quota file says quota (a number or "max") with the period of 50 ms. */
static void expect_quota(const char *quota) {
        _cleanup_free_ char *want = NULL;

        if (v2())
                cr_assert_gt(asprintf(&want, "%s 50000\n", quota), 0);
        else
                cr_assert_gt(asprintf(&want, "%s\n", streq(quota, "max") ? "-1" : quota), 0);
        expect_group_file(quota_file(), want);
}

/* The live group with a period of 50 ms (not the default: the daemon keeps it) and, unless the
 * kernel has no cpu.idle (then the test is skipped), cpu.idle 0. */
static void begin_levers(void) {
        bool idle;
        int r;

        begin_cgroups();
        r = cgroup_get_cpu_idle(&live, group, &idle);
        if (r == -EOPNOTSUPP)
                skip_test("no cpu.idle on this kernel");
        cr_assert_eq(r, 0, "%s", strerror(-r));
        cr_assert_not(idle);
        if (v2())
                write_group_file("cpu.max", "max 50000");
        else
                write_group_file("cpu.cfs_period_us", "50000");
}

/* What the observer saw last. */
static struct {
        unsigned n;
        ActuatorEventKind kind;
        PolicyLever lever;
        uint64_t old_value, new_value;
        char cgroup[256], for_cgroup[256], reason[64];
} seen;

static void observe(const ActuatorEvent *e, void *userdata) {
        (void) userdata;
        seen.n++;
        seen.kind = e->kind;
        seen.lever = e->lever;
        seen.old_value = e->old_value;
        seen.new_value = e->new_value;
        (void) snprintf(seen.cgroup, sizeof seen.cgroup, "%s", e->cgroup ? e->cgroup : "(null)");
        (void) snprintf(seen.for_cgroup, sizeof seen.for_cgroup, "%s",
                        e->for_cgroup ? e->for_cgroup : "(null)");
        (void) snprintf(seen.reason, sizeof seen.reason, "%s", e->reason ? e->reason : "(null)");
}

/* One step of the ladder on the live group, for PROTECTED (snapshot index 1). */
static int step(Actuator *a, PolicyLever lever, uint32_t from, uint32_t to, bool dry_run) {
        PolicyCgroup cg[] = { { .path = group }, { .path = PROTECTED, .protected = true } };
        PlanEscalation e = { .cgroup = 0,
                             .for_cgroup = 1,
                             .lever = lever,
                             .from = from,
                             .to = to,
                             .reason = "test" };

        return actuator_apply(a, &(Plan){ .escalations = &e, .n_escalations = 1 },
                              &(PolicySnapshot){ .cgroups = cg, .n_cgroups = 2 }, dry_run, 0, 1);
}

static void step_ok(Actuator *a, PolicyLever lever, uint32_t from, uint32_t to) {
        int r = step(a, lever, from, to, /* dry_run= */ false);

        cr_assert_eq(r, 0, "apply: %s", strerror(-r));
}

/* cpu.idle 1 and a quarter of a CPU on the live group (25 ms of its 50). */
static void escalate_both(Actuator *a) {
        step_ok(a, POLICY_LEVER_IDLE, 0, 1);
        step_ok(a, POLICY_LEVER_QUOTA, 0, 5000);
        expect_group_file("cpu.idle", "1\n");
        expect_quota("25000");
}

Test(actuator, idle_is_set_its_original_recorded_and_the_step_observed) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *want = NULL, *got = NULL;
        uint64_t orig = 4242, set = 4242;

        begin_levers();
        a = new_actuator(&live, state_dir);
        seen.n = 0;
        actuator_set_observer(a, observe, NULL);
        step_ok(a, POLICY_LEVER_IDLE, 0, 1);
        expect_group_file("cpu.idle", "1\n");
        cr_assert_gt(asprintf(&want, HEADER "cgroup-idle 0 1 %s\n", group), 0);
        got = read_state("changes");
        cr_expect_str_eq(got, want);
        cr_assert(record_lookup_cgroup(actuator_record(a), group, RECORD_CGROUP_IDLE, &orig, &set));
        cr_expect_eq(orig, 0);
        cr_expect_eq(set, 1);
        expect_counters(a, &(ActuatorCounters){ .escalations = 1 });
        cr_expect_eq(seen.n, 1);
        cr_expect_eq(seen.kind, ACTUATOR_EVENT_ESCALATION);
        cr_expect_eq(seen.lever, POLICY_LEVER_IDLE);
        cr_expect_eq(seen.old_value, 0);
        cr_expect_eq(seen.new_value, 1);
        cr_expect_str_eq(seen.cgroup, group);
        cr_expect_str_eq(seen.for_cgroup, PROTECTED);
        cr_expect_str_eq(seen.reason, "test");
}

/*
 * A partition: the plan's move narrows the contender's task (off CPU 0) and its step records the
 * CPUs kept off, both before anything changes; the step back puts the task's mask from before
 * back on every thread and leaves nothing in the record. Nothing is written at the group.
 */
Test(actuator, partition_records_its_cpus_and_its_step_back_puts_every_mask_back) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *want = NULL, *got = NULL, *line = NULL, *kept = NULL;
        _cleanup_cpumask_ CpuMask *off = NULL;
        PolicyCgroup cg[] = { { .path = group }, { .path = PROTECTED, .protected = true } };
        PolicyTask task = { .cgroup = 0 };
        PlanEscalation e = { .cgroup = 0, .for_cgroup = 1, .lever = POLICY_LEVER_PARTITION };
        PolicySnapshot snap = { .cgroups = cg, .n_cgroups = 2, .tasks = &task, .n_tasks = 1 };
        OneMove o;
        pid_t pid;

        begin_cgroups();
        pid = spawn_threads(2);
        task.pid = pid, task.starttime_ticks = starttime_of(pid);
        a = new_actuator(&live, state_dir);
        seen.n = 0;
        actuator_set_observer(a, observe, NULL);

        one_move(&o, pid, task.starttime_ticks, "1");
        off = parse_mask("0");
        e.from = 0, e.to = 1, e.cpus = off;
        (void) snprintf(e.reason, sizeof e.reason, "test");
        o.plan.escalations = &e, o.plan.n_escalations = 1;
        cr_assert_eq(actuator_apply(a, &o.plan, &snap, false, 0, 1000), 0);
        one_move_done(&o);
        expect_all_threads(pid, "1");
        line = task_line(pid, task.starttime_ticks, own_mask, "1", 1000);
        cr_assert_gt(asprintf(&want, HEADER "%scgroup-partition 0 %s\n", line, group), 0);
        got = read_state("changes");
        cr_expect_str_eq(got, want);
        cr_assert_not_null(record_lookup_partition(actuator_record(a), group));
        kept = cpumask_text(record_lookup_partition(actuator_record(a), group));
        cr_expect_str_eq(kept, "0");
        cr_expect_eq(seen.lever, POLICY_LEVER_PARTITION);
        cr_expect_eq(seen.new_value, 1);
        expect_counters(a, &(ActuatorCounters){ .moves = 1, .escalations = 1 });

        e.from = 1, e.to = 0, e.cpus = NULL;
        cr_assert_eq(actuator_apply(a, &(Plan){ .escalations = &e, .n_escalations = 1 }, &snap,
                                    false, 0, 2000),
                     0);
        expect_all_threads(pid, own_mask);
        cr_expect_null(record_lookup_partition(actuator_record(a), group));
        cr_expect_null(record_find_task(actuator_record(a), pid));
        cr_expect_not(state_exists("changes"), "an empty record is no file");
        cr_expect_eq(seen.new_value, 0);
        expect_counters(a, &(ActuatorCounters){ .moves = 1, .escalations = 2, .restores = 1 });
}

/* A quarter of a CPU is a quarter of the group's own period, whatever that is; 0 lifts it. */
Test(actuator, quota_is_a_share_of_the_group_s_period_and_zero_lifts_it) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *want = NULL, *got = NULL;
        uint64_t orig = 4242, set = 4242;

        begin_levers();
        a = new_actuator(&live, state_dir);
        step_ok(a, POLICY_LEVER_QUOTA, 0, 2500);
        expect_quota("12500");
        cr_assert_gt(asprintf(&want, HEADER "cgroup-quota 0 12500 %s\n", group), 0);
        got = read_state("changes");
        cr_expect_str_eq(got, want);
        step_ok(a, POLICY_LEVER_QUOTA, 2500, 0);
        expect_quota("max");
        cr_assert(
                record_lookup_cgroup(actuator_record(a), group, RECORD_CGROUP_QUOTA, &orig, &set));
        cr_expect_eq(orig, CGROUP_QUOTA_NONE, "the first original stays");
        cr_expect_eq(set, CGROUP_QUOTA_NONE);
        if (!v2())
                expect_group_file("cpu.cfs_period_us", "50000\n");
        expect_counters(a, &(ActuatorCounters){ .escalations = 2 });
}

Test(actuator, restore_puts_idle_and_quota_back) {
        _cleanup_actuator_ Actuator *a = NULL;

        begin_levers();
        a = new_actuator(&live, state_dir);
        escalate_both(a);
        step_ok(a, POLICY_LEVER_QUOTA, 5000, 2000);
        cr_expect_eq(actuator_restore_all(a), 2);
        expect_group_file("cpu.idle", "0\n");
        expect_quota("max");
        cr_expect_not(record_find_cgroup(actuator_record(a), group));
        cr_expect_not(state_exists("changes"));
        expect_counters(a, &(ActuatorCounters){ .escalations = 3, .restores = 2 });
}

Test(actuator, reconcile_restores_idle_and_quota_a_crashed_run_left) {
        _cleanup_actuator_ Actuator *b = NULL;
        Actuator *a;

        begin_levers();
        write_group_file(quota_file(), "30000"); /* the operator's own limit: restored exactly */
        a = new_actuator(&live, state_dir);
        step_ok(a, POLICY_LEVER_IDLE, 0, 1);
        step_ok(a, POLICY_LEVER_QUOTA, 6000, 1000);
        expect_quota("5000");
        a = actuator_free(a); /* the crash: the record stays */
        cr_expect(state_exists("changes"));
        b = new_actuator(&live, state_dir);
        cr_expect_eq(actuator_reconcile(b), 2);
        expect_group_file("cpu.idle", "0\n");
        expect_quota("30000");
        cr_expect_not(state_exists("changes"));
}

Test(actuator, restore_leaves_idle_and_quota_someone_else_changed) {
        _cleanup_actuator_ Actuator *a = NULL;

        begin_levers();
        a = new_actuator(&live, state_dir);
        escalate_both(a);
        write_group_file("cpu.idle", "0");
        write_group_file(quota_file(), "40000");
        cr_expect_eq(actuator_restore_all(a), 0);
        expect_group_file("cpu.idle", "0\n");
        expect_quota("40000");
        cr_expect_not(state_exists("changes"));
}

/* After someone else changed a lever, a new step takes their value as the original. */
Test(actuator, step_after_someone_else_changed_the_quota_keeps_theirs_as_original) {
        _cleanup_actuator_ Actuator *a = NULL;
        uint64_t orig = 4242;

        begin_levers();
        a = new_actuator(&live, state_dir);
        step_ok(a, POLICY_LEVER_QUOTA, 0, 5000);
        write_group_file(quota_file(), "40000");
        step_ok(a, POLICY_LEVER_QUOTA, 8000, 4000);
        cr_assert(
                record_lookup_cgroup(actuator_record(a), group, RECORD_CGROUP_QUOTA, &orig, NULL));
        cr_expect_eq(orig, 40000);
        cr_expect_eq(actuator_restore_all(a), 1);
        expect_quota("40000");
}

Test(actuator, lever_dry_run_changes_nothing) {
        _cleanup_actuator_ Actuator *a = NULL;

        begin_levers();
        a = new_actuator(&live, state_dir);
        seen.n = 0;
        actuator_set_observer(a, observe, NULL);
        cr_expect_eq(step(a, POLICY_LEVER_IDLE, 0, 1, /* dry_run= */ true), 0);
        cr_expect_eq(step(a, POLICY_LEVER_QUOTA, 0, 5000, /* dry_run= */ true), 0);
        expect_group_file("cpu.idle", "0\n");
        expect_quota("max");
        cr_expect_not(state_exists("changes"));
        cr_expect_eq(seen.n, 0);
        expect_counters(a, &(ActuatorCounters){});
}

Test(actuator, lever_of_a_removed_group_is_counted_as_gone) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_free_ char *gone = NULL;
        PolicyCgroup cg = {};
        PlanEscalation e[] = {
                { .cgroup = 0,
                  .for_cgroup = POLICY_NO_CGROUP,
                  .lever = POLICY_LEVER_IDLE,
                  .to = 1 },
                { .cgroup = 0,
                  .for_cgroup = POLICY_NO_CGROUP,
                  .lever = POLICY_LEVER_QUOTA,
                  .to = 5000 },
        };

        begin_cgroups();
        cr_assert_gt(asprintf(&gone, "%s/never-made", group), 0);
        cg.path = gone;
        a = new_actuator(&live, state_dir);
        cr_expect_eq(actuator_apply(a, &(Plan){ .escalations = e, .n_escalations = 2 },
                                    &(PolicySnapshot){ .cgroups = &cg, .n_cgroups = 1 }, false, 0,
                                    1),
                     0);
        expect_counters(a, &(ActuatorCounters){ .cgroups_gone = 2 });
        cr_expect_not(state_exists("changes"));
}

Test(actuator, lever_steps_that_cannot_be_carried_out_are_errors) {
        _cleanup_actuator_ Actuator *a = NULL;
        PolicyCgroup cg = { .path = "x" };
        PlanEscalation e[] = {
                { .cgroup = 0, .lever = POLICY_LEVER_PARTITION, .to = 1 }, /* not yet */
                { .cgroup = 0, .lever = POLICY_LEVER_PARTITION, .to = 1 }, /* said once */
                { .cgroup = 0, .lever = POLICY_LEVER_NONE, .to = 1 },
                { .cgroup = 0, .lever = POLICY_LEVER_IDLE, .to = 2 },
                { .cgroup = 1, .lever = POLICY_LEVER_IDLE, .to = 1 }, /* no such index */
                { .cgroup = 0, .lever = POLICY_LEVER_QUOTA, .to = 5000 }, /* no cpu controller */
        };

        begin();
        a = new_actuator(&no_cgroups, state_dir);
        cr_expect_eq(actuator_apply(a, &(Plan){ .escalations = e, .n_escalations = ELEMENTSOF(e) },
                                    &(PolicySnapshot){ .cgroups = &cg, .n_cgroups = 1 }, false, 0,
                                    1),
                     0);
        expect_counters(a, &(ActuatorCounters){ .errors = 6 });
        cr_expect_not(state_exists("changes"));
}
