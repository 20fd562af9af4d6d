/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "actuator.h"
#include "cgroup-levers.h"
#include "cgroup-tree.h"
#include "cgroup.h"
#include "clock.h"
#include "macro.h"
#include "policy.h"
#include "record.h"
#include "sampler.h"
#include "testutil.h"
#include "topology.h"
#include "tunables.h"

/*
 * The recorded trees are tests/fixtures/root/<case>/, written by mkroot.py there (its README
 * tells their numbers). USER_HZ is 100 in them, as on every Linux this runs on.
 */

#define SEC UINT64_C(1000000)

/* ---- one sampler on one tree, torn down by the suite's .fini */

static struct {
        char *root; /* the fixture, or a copy that the test changes */
        bool copy;
        int proc_fd;
        CgroupLayout layout;
        Topology *topo;
        Tunables t;
        Sampler *s;
} fx = { .proc_fd = -EBADF };

static void fx_end(void) {
        fx.s = sampler_free(fx.s);
        fx.topo = topology_free(fx.topo);
        tunables_free(&fx.t);
        if (fx.proc_fd >= 0)
                (void) close(fx.proc_fd);
        if (fx.copy)
                rm_rf(fx.root);
        free(fx.root);
}

static char **strv(const char *first, ...) {
        char **l = calloc(8, sizeof *l);
        va_list ap;
        size_t n = 0;

        cr_assert_not_null(l);
        va_start(ap, first);
        for (const char *s = first; s; s = va_arg(ap, const char *)) {
                cr_assert_lt(n, 7);
                l[n] = strdup(s);
                cr_assert_not_null(l[n++]);
        }
        va_end(ap);
        return l;
}

static void set_strv(char ***field, char **l) {
        for (char **i = *field; i && *i; i++)
                free(*i);
        free(*field);
        *field = l;
}

/* Loads case (copied to a temporary directory when copy), with tunables that manage
 * cgbalance.slice and exclude what mixed-1node has to exclude. self_pid: the daemon's pid. */
static void fx_begin(const char *name, bool copy, pid_t self_pid) {
        _cleanup_free_ char *rel = NULL, *proc = NULL;

        cr_assert_gt(asprintf(&rel, "root/%s", name), 0);
        if (copy) {
                fx.root = make_tmpdir();
                fx.copy = true;
                copy_fixture(rel, fx.root);
        } else
                fx.root = fixture_path(rel);
        cr_assert_gt(asprintf(&proc, "%s/proc", fx.root), 0);
        fx.proc_fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fx.proc_fd, 0, "%s: %s", proc, strerror(errno));
        cr_assert_eq(topology_new_from_root(fx.root, &fx.topo), 0);
        cr_assert_eq(cgroup_layout_load_at(fx.root, &fx.layout), 0);
        cr_assert_eq(fx.layout.mode, CGROUP_MODE_HYBRID);
        cr_assert_eq(tunables_defaults(&fx.t), 0);
        set_strv(&fx.t.cgroups, strv("cgbalance.slice", NULL));
        set_strv(&fx.t.exclude_cgroups, strv("cgbalance.slice/excluded", NULL));
        set_strv(&fx.t.exclude_comms, strv("backup*", NULL));
        cr_assert_eq(sampler_new(fx.proc_fd, &fx.layout, fx.topo, self_pid, &fx.s), 0);
}

/* A sample told what the daemon changed (record may be NULL). */
static const PolicySnapshot *fx_sample_with(const Record *record, uint64_t now_usec,
                                            const SamplerSystem **ret_sys) {
        const PolicySnapshot *snap = NULL;
        const SamplerSystem *sys = NULL;
        int r;

        r = sampler_sample(fx.s, &fx.t, record, now_usec, &snap, &sys);
        cr_assert_eq(r, 0, "sampler_sample: %s", strerror(-r));
        cr_assert_not_null(snap);
        cr_assert_not_null(sys);
        if (ret_sys)
                *ret_sys = sys;
        return snap;
}

static const PolicySnapshot *fx_sample(uint64_t now_usec, const SamplerSystem **ret_sys) {
        return fx_sample_with(NULL, now_usec, ret_sys);
}

static const PolicySnapshot *fx_since_boot(const SamplerSystem **ret_sys) {
        sampler_set_since_boot(fx.s, true);
        return fx_sample(1, ret_sys);
}

static const PolicyTask *find_task(const PolicySnapshot *snap, pid_t pid) {
        for (size_t i = 0; i < snap->n_tasks; i++)
                if (snap->tasks[i].pid == pid)
                        return &snap->tasks[i];
        return NULL;
}

static const PolicyTask *get_task(const PolicySnapshot *snap, pid_t pid) {
        const PolicyTask *t = find_task(snap, pid);

        cr_assert_not_null(t, "task %d is not in the snapshot", (int) pid);
        return t;
}

static const PolicyCgroup *find_group(const PolicySnapshot *snap, const char *path) {
        for (size_t i = 0; i < snap->n_cgroups; i++)
                if (streq(snap->cgroups[i].path, path))
                        return &snap->cgroups[i];
        return NULL;
}

static char *mask_str(const CpuMask *m) {
        char *s = NULL;

        cr_assert_not_null(m);
        cr_assert_eq(cpumask_format(m, &s), 0);
        return s;
}

/* ---- writing into a copied tree, in the kernel's formats (as mkroot.py writes them) */

static void put(const char *rel, const char *fmt, ...) _printf_(2, 3);
static void put(const char *rel, const char *fmt, ...) {
        _cleanup_close_ int root = open(fx.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_free_ char *text = NULL;
        va_list ap;

        cr_assert(fx.copy, "the fixture itself is never written");
        cr_assert_geq(root, 0);
        va_start(ap, fmt);
        cr_assert_geq(vasprintf(&text, fmt, ap), 0);
        va_end(ap);
        write_file_at(root, rel, text);
}

typedef struct StatSpec {
        const char *comm;
        char state;
        uint64_t utime, stime, start;
        unsigned threads, cpu;
} StatSpec;

/* proc/PID/task/TID/stat, 52 fields like mkroot.py's (tid 0: the process's own, proc/PID/stat,
 * whose times are all its threads'). */
static void put_stat_file(pid_t pid, pid_t tid, const StatSpec *s) {
        _cleanup_free_ char *rel = NULL;

        if (tid == 0)
                cr_assert_gt(asprintf(&rel, "proc/%d/stat", (int) pid), 0);
        else
                cr_assert_gt(asprintf(&rel, "proc/%d/task/%d/stat", (int) pid, (int) tid), 0);
        put(rel,
            "%d (%s) %c 1 %d %d 0 -1 4194304 120 0 0 0 %" PRIu64 " %" PRIu64 " 0 0 20 0 %u 0 "
            "%" PRIu64 " 3133440 379 18446744073709551615 94117347057664 94117347077545 "
            "140733367296288 0 0 0 0 0 0 0 0 0 17 %u 0 0 0 0 0 94117347093552 94117347095168 "
            "94117426511872 140733367298698 140733367298718 140733367298718 140733367300075 0\n",
            (int) (tid ? tid : pid), s->comm, s->state ? s->state : 'R', (int) pid, (int) pid,
            s->utime, s->stime, s->threads ? s->threads : 1, s->start, s->cpu);
}

/* A thread's stat; a single-threaded process's own stat file with it, as the kernel shows them
 * (a test of more threads writes the process's with put_stat_file(pid, 0, ...)). */
static void put_stat(pid_t pid, pid_t tid, const StatSpec *s) {
        put_stat_file(pid, tid, s);
        if (tid == pid && s->threads <= 1)
                put_stat_file(pid, 0, s);
}

static void put_schedstat_slices(pid_t pid, pid_t tid, uint64_t run_ns, uint64_t wait_ns,
                                 uint64_t timeslices) {
        _cleanup_free_ char *rel = NULL;

        cr_assert_gt(asprintf(&rel, "proc/%d/task/%d/schedstat", (int) pid, (int) tid), 0);
        put(rel, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", run_ns, wait_ns, timeslices);
}

static void put_schedstat(pid_t pid, pid_t tid, uint64_t run_ns, uint64_t wait_ns) {
        put_schedstat_slices(pid, tid, run_ns, wait_ns, 1000);
}

/* mixed-1node's /proc/stat with extra ticks on each CPU: user and idle. */
static void put_proc_stat(uint64_t user0, uint64_t idle0, uint64_t user1, uint64_t idle1) {
        put("proc/stat",
            "cpu  %" PRIu64 " 0 7500 %" PRIu64 " 0 0 0 0 0 0\n"
            "cpu0 %" PRIu64 " 0 5000 %" PRIu64 " 0 0 0 0 0 0\n"
            "cpu1 %" PRIu64 " 0 2500 %" PRIu64 " 0 0 0 0 0 0\n"
            "procs_running 3\nprocs_blocked 0\n",
            30000 + user0 + user1, 62500 + idle0 + idle1, 20000 + user0, 25000 + idle0,
            10000 + user1, 37500 + idle1);
}

static const StatSpec pinned = { "pinned", 'R', 2000, 0, 30000, 1, 1 };

/* ---- imbalanced-2node: the lead's recorded machine, since boot */

TestSuite(sampler_fixture, .fini = fx_end, .timeout = 30);

Test(sampler_fixture, imbalanced_2node_cpus_and_interval_since_boot) {
        static const uint32_t want[] = { 9950, 9950, 20, 10 };
        const PolicySnapshot *snap;

        fx_begin("imbalanced-2node", false, 0);
        snap = fx_since_boot(NULL);
        cr_expect_eq(snap->interval_usec, 1000 * SEC, "uptime 1000 s");
        cr_assert_eq(snap->n_cpus, 4);
        for (unsigned c = 0; c < 4; c++)
                cr_expect_eq(snap->cpus[c].util_permyriad, want[c], "cpu %u: %u", c,
                             snap->cpus[c].util_permyriad);
}

Test(sampler_fixture, imbalanced_2node_four_busy_tasks_waiting_on_node_0) {
        const PolicySnapshot *snap;

        fx_begin("imbalanced-2node", false, 0);
        snap = fx_since_boot(NULL);
        cr_assert_eq(snap->n_tasks, 4);
        for (size_t i = 0; i < 4; i++) {
                const PolicyTask *t = &snap->tasks[i];
                _cleanup_free_ char *allowed = mask_str(t->allowed);

                cr_expect_eq(t->pid, 1001 + (pid_t) i, "tasks in pid order");
                cr_expect_str_eq(t->comm, "busy");
                cr_expect_eq(t->starttime_ticks, 1000);
                /* 495 s of CPU and 495 s of waiting in the 990 s since it started */
                cr_expect_eq(t->util_permyriad, 5000, "pid %d util %u", t->pid, t->util_permyriad);
                cr_expect_eq(t->demand_permyriad, 10000, "pid %d demand %u", t->pid,
                             t->demand_permyriad);
                cr_expect_eq(t->cpu, (int) (i % 2));
                cr_expect_eq(topology_cpu_node(fx.topo, (unsigned) t->cpu), 0);
                cr_expect_str_eq(allowed, "0-3");
                cr_expect_not(t->foreign, "pid %d: its affinity is its cpuset's", t->pid);
                cr_expect_not(t->ours);
                cr_expect_eq(t->last_move_usec, 0);
                cr_assert_lt(t->cgroup, snap->n_cgroups);
                cr_expect_str_eq(snap->cgroups[t->cgroup].path, "cgbalance.slice/job");
        }
}

Test(sampler_fixture, imbalanced_2node_groups_and_system) {
        const SamplerSystem *sys;
        const PolicySnapshot *snap;

        fx_begin("imbalanced-2node", false, 0);
        snap = fx_since_boot(&sys);
        cr_assert_eq(snap->n_cgroups, 2);
        cr_expect_str_eq(snap->cgroups[0].path, "cgbalance.slice");
        cr_expect_str_eq(snap->cgroups[1].path, "cgbalance.slice/job");
        for (size_t i = 0; i < 2; i++) {
                const PolicyCgroup *g = &snap->cgroups[i];

                cr_expect_eq(g->util_permyriad, 19800, "%s: 1980 s of CPU in 1000 s", g->path);
                cr_expect(g->has_pressure, "%s: the hybrid mirror has cpu.pressure", g->path);
                cr_expect_eq(g->pressure_permyriad, 9912);
                cr_expect_eq(g->weight, 100);
                cr_expect_eq(g->base_weight, 100);
                cr_expect_not(g->protected);
        }
        cr_expect(sys->has_psi);
        cr_expect_eq(sys->cpu.some.avg10_permyriad, 9905);
        cr_expect_eq(sys->io.full.total_usec, 1234567);
        cr_expect_eq(sys->procs_running, 5);
        cr_expect_eq(sys->n_cgroups, 2);
        cr_expect_eq(sys->n_tasks, 4);
        cr_expect_eq(sys->n_threads, 4);
}

/* ---- mixed-1node: what is left out */

Test(sampler_fixture, exclusions_leave_only_the_managed_tasks) {
        static const pid_t want[] = { 501, 506, 510 };
        const PolicySnapshot *snap;

        /* The glob manages the groups holding pid 1, the daemon (500), a kernel thread (2), an
         * excluded comm (504), a pid gone (505) and a zombie (507). */
        fx_begin("mixed-1node", false, 500);
        snap = fx_since_boot(NULL);
        cr_assert_eq(snap->n_tasks, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_expect_eq(snap->tasks[i].pid, want[i], "task %zu is %d", i, snap->tasks[i].pid);
}

Test(sampler_fixture, pid_1_is_never_managed_and_self_only_when_named) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", false, 0);
        snap = fx_since_boot(NULL);
        cr_expect_null(find_task(snap, 1));
        cr_expect_not_null(find_task(snap, 500), "self_pid 0: pid 500 is just another task");
        cr_expect_null(find_task(snap, 2), "kernel thread");
}

Test(sampler_fixture, excluded_groups_and_everything_below_are_not_walked) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", false, 500);
        snap = fx_since_boot(NULL);
        cr_expect_eq(snap->n_cgroups, 3);
        cr_expect_not_null(find_group(snap, "cgbalance.slice"));
        cr_expect_not_null(find_group(snap, "cgbalance.slice/app"));
        cr_expect_not_null(find_group(snap, "cgbalance.slice/batch"));
        cr_expect_null(find_group(snap, "cgbalance.slice/excluded"));
        cr_expect_null(find_group(snap, "cgbalance.slice/excluded/deep"));
        cr_expect_null(find_group(snap, "system.slice"));
        cr_expect_null(find_task(snap, 520));
        cr_expect_null(find_task(snap, 521));
        cr_expect_null(find_task(snap, 600));
}

Test(sampler_fixture, groups_are_sorted_with_weights_usage_and_pressure) {
        const PolicySnapshot *snap;
        const PolicyCgroup *g;

        fx_begin("mixed-1node", false, 500);
        set_strv(&fx.t.protected_cgroups, strv("cgbalance.slice/app", NULL));
        snap = fx_since_boot(NULL);
        cr_assert_eq(snap->n_cgroups, 3);
        g = &snap->cgroups[0];
        cr_expect_str_eq(g->path, "cgbalance.slice");
        cr_expect_eq(g->util_permyriad, 8000);
        cr_expect(g->has_pressure);
        cr_expect_eq(g->pressure_permyriad, 500);
        cr_expect_not(g->protected);
        g = &snap->cgroups[1];
        cr_expect_str_eq(g->path, "cgbalance.slice/app");
        cr_expect_eq(g->weight, 200, "cpu.shares 2048");
        cr_expect_eq(g->util_permyriad, 4000);
        cr_expect_eq(g->pressure_permyriad, 1250);
        cr_expect(g->protected);
        g = &snap->cgroups[2];
        cr_expect_str_eq(g->path, "cgbalance.slice/batch");
        cr_expect_eq(g->weight, 50, "cpu.shares 512");
        cr_expect_eq(g->base_weight, 50);
        cr_expect_not(g->has_pressure, "no cgroup2 mirror");
        cr_expect_eq(g->pressure_permyriad, 0);
        cr_expect_eq(get_task(snap, 510)->cgroup, 2);
        cr_expect_eq(get_task(snap, 501)->cgroup, 1);
}

Test(sampler_fixture, threads_summed_busiest_thread_gives_the_cpu) {
        const SamplerSystem *sys;
        const PolicySnapshot *snap;
        const PolicyTask *t;

        fx_begin("mixed-1node", false, 500);
        snap = fx_since_boot(&sys);
        t = get_task(snap, 501);
        /* 50 + 100 + 10 s of CPU over the 400 s since it started */
        cr_expect_eq(t->util_permyriad, 4000, "util %u", t->util_permyriad);
        cr_expect_eq(t->cpu, 1, "thread 502 ran most, on CPU 1");
        cr_expect_eq(sys->n_threads, 5, "501's three, 506 and 510");
}

Test(sampler_fixture, a_thread_without_schedstat_makes_demand_its_util) {
        const PolicySnapshot *snap;
        const PolicyTask *t;

        fx_begin("mixed-1node", false, 500);
        snap = fx_since_boot(NULL);
        t = get_task(snap, 501); /* thread 503 has no schedstat file */
        cr_expect_eq(t->demand_permyriad, t->util_permyriad, "demand %u", t->demand_permyriad);
        t = get_task(snap, 510); /* 150 s run + 30 s wait in 450 s */
        cr_expect_eq(t->util_permyriad, 3333);
        cr_expect_eq(t->demand_permyriad, 4000);
        t = get_task(snap, 506); /* 20 + 10 s in 200 s */
        cr_expect_eq(t->util_permyriad, 1000);
        cr_expect_eq(t->demand_permyriad, 1500);
}

Test(sampler_fixture, affinity_narrower_than_the_cpuset_is_foreign) {
        const PolicySnapshot *snap;
        _cleanup_free_ char *a506 = NULL, *a510 = NULL;

        fx_begin("mixed-1node", false, 500);
        snap = fx_since_boot(NULL);
        a506 = mask_str(get_task(snap, 506)->allowed);
        a510 = mask_str(get_task(snap, 510)->allowed);
        cr_expect_str_eq(a506, "1");
        cr_expect_str_eq(a510, "0");
        cr_expect(get_task(snap, 506)->foreign, "CPU 1 of a cpuset of 0-1");
        cr_expect_not(get_task(snap, 510)->foreign, "CPU 0 is all its cpuset gives");
        cr_expect_not(get_task(snap, 501)->foreign);
}

/* foreign is a fact about the task; what override_foreign_affinity does is the policy's call. */
Test(sampler_fixture, override_foreign_affinity_still_reports_foreign) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", false, 500);
        fx.t.override_foreign_affinity = true;
        snap = fx_since_boot(NULL);
        cr_expect(get_task(snap, 506)->foreign);
}

/* A record of one move, as the actuator keeps it: pid (with starttime) given mask set. */
static Record *record_of(pid_t pid, uint64_t starttime, const char *set, uint64_t when_usec) {
        RecordTask t = { .pid = pid, .starttime_ticks = starttime, .when_usec = when_usec };
        Record *r = NULL;

        cr_assert_eq(record_new(&r), 0);
        cr_assert_eq(cpumask_parse("0-1", 64, &t.orig, NULL), 0);
        cr_assert_eq(cpumask_parse(set, 64, &t.set, NULL), 0);
        cr_assert_eq(record_put_task(r, &t), 0);
        return r;
}

Test(sampler_fixture, a_mask_the_record_says_the_daemon_set_is_ours) {
        _cleanup_record_ Record *mine = record_of(506, 30000, "1", 42),
                                *recycled = record_of(506, 29999, "1", 42),
                                *other_mask = record_of(506, 30000, "0", 42);
        const PolicyTask *t;

        fx_begin("mixed-1node", false, 500);
        sampler_set_since_boot(fx.s, true);
        t = get_task(fx_sample_with(mine, 1, NULL), 506);
        cr_expect(t->ours);
        cr_expect_not(t->foreign, "ours is never foreign");
        cr_expect_eq(t->last_move_usec, 42);
        t = get_task(fx_sample_with(recycled, 1, NULL), 506);
        cr_expect_not(t->ours, "another task with the same pid");
        cr_expect(t->foreign);
        cr_expect_eq(t->last_move_usec, 0);
        t = get_task(fx_sample_with(other_mask, 1, NULL), 506);
        cr_expect_not(t->ours, "someone set another mask since");
        cr_expect(t->foreign);
        cr_expect_eq(t->last_move_usec, 42, "still the daemon's last move");
}

Test(sampler_fixture, a_task_the_record_bans_is_not_managed) {
        _cleanup_record_ Record *r = NULL;

        fx_begin("mixed-1node", false, 500);
        sampler_set_since_boot(fx.s, true);
        cr_assert_eq(record_new(&r), 0);
        cr_assert_eq(record_ban_task(r, 501, 9999), 0);
        cr_expect_not_null(find_task(fx_sample_with(r, 1, NULL), 501), "another task's ban");
        cr_assert_eq(record_ban_task(r, 501, 10000), 0);
        cr_expect_null(find_task(fx_sample_with(r, 1, NULL), 501));
}

Test(sampler_fixture, a_weight_in_the_record_is_the_base_in_v2_units) {
        _cleanup_record_ Record *r = NULL;
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", false, 500);
        cr_assert_eq(record_new(&r), 0);
        /* the record keeps what the file held: cpu.shares here (a hybrid host) */
        cr_assert_eq(record_put_cgroup(r, "cgbalance.slice/app", RECORD_CGROUP_WEIGHT, 1000, 2048),
                     0);
        sampler_set_since_boot(fx.s, true);
        snap = fx_sample_with(r, 1, NULL);
        cr_assert_eq(snap->n_cgroups, 3);
        cr_expect_str_eq(snap->cgroups[1].path, "cgbalance.slice/app");
        cr_expect_eq(snap->cgroups[1].weight, 200, "cpu.shares 2048");
        cr_expect_eq(snap->cgroups[1].base_weight, 98, "1000 shares");
        cr_expect_eq(snap->cgroups[2].base_weight, snap->cgroups[2].weight, "not in the record");
}

Test(sampler_fixture, v1_layout_has_no_pressure) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", false, 500);
        fx.layout.mode = CGROUP_MODE_V1; /* the sampler reads the layout it was given, each time */
        fx.layout.unified_path[0] = '\0';
        snap = fx_since_boot(NULL);
        cr_assert_eq(snap->n_cgroups, 3);
        for (size_t i = 0; i < snap->n_cgroups; i++)
                cr_expect_not(snap->cgroups[i].has_pressure, "%s", snap->cgroups[i].path);
        cr_expect_eq(snap->n_tasks, 3);
}

Test(sampler_fixture, no_cgroups_still_samples_cpus) {
        const SamplerSystem *sys;
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", false, 500);
        fx.layout = (CgroupLayout){ .mode = CGROUP_MODE_NONE };
        snap = fx_since_boot(&sys);
        cr_expect_eq(snap->n_cgroups, 0);
        cr_expect_eq(snap->n_tasks, 0);
        cr_expect_eq(snap->cpus[0].util_permyriad, 5000);
        cr_expect_eq(snap->cpus[1].util_permyriad, 2500);
        cr_expect(sys->has_psi);
}

Test(sampler_fixture, no_psi_is_not_an_error) {
        _cleanup_free_ char *dir = NULL;
        const SamplerSystem *sys;
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        cr_assert_gt(asprintf(&dir, "%s/proc/pressure", fx.root), 0);
        rm_rf(dir);
        snap = fx_since_boot(&sys);
        cr_expect_not(sys->has_psi);
        cr_expect_eq(sys->cpu.some.avg10_permyriad, 0);
        cr_expect_eq(snap->n_tasks, 3);
}

Test(sampler_fixture, unreadable_proc_stat_or_uptime_is_an_error) {
        _cleanup_free_ char *stat = NULL, *uptime = NULL;
        const PolicySnapshot *snap = NULL;
        const SamplerSystem *sys = NULL;

        fx_begin("mixed-1node", true, 500);
        cr_assert_gt(asprintf(&uptime, "%s/proc/uptime", fx.root), 0);
        cr_assert_gt(asprintf(&stat, "%s/proc/stat", fx.root), 0);
        cr_assert_eq(unlink(uptime), 0);
        sampler_set_since_boot(fx.s, true);
        cr_expect_eq(sampler_sample(fx.s, &fx.t, NULL, 1, &snap, &sys), -ENOENT);
        sampler_set_since_boot(fx.s, false);
        cr_expect_eq(sampler_sample(fx.s, &fx.t, NULL, 1, &snap, &sys), 0, "live needs none");
        cr_assert_eq(unlink(stat), 0);
        snap = NULL;
        cr_expect_eq(sampler_sample(fx.s, &fx.t, NULL, 2, &snap, &sys), -ENOENT);
        cr_expect_null(snap);
}

Test(sampler_fixture, bad_arguments) {
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        Sampler *s = (Sampler *) 0x1;

        fx_begin("mixed-1node", false, 500);
        cr_expect_eq(sampler_new(-1, &fx.layout, fx.topo, 0, &s), -EINVAL);
        cr_expect_eq(sampler_new(fx.proc_fd, NULL, fx.topo, 0, &s), -EINVAL);
        cr_expect_eq(sampler_new(fx.proc_fd, &fx.layout, NULL, 0, &s), -EINVAL);
        cr_expect_eq(sampler_new(fx.proc_fd, &fx.layout, fx.topo, -1, &s), -EINVAL);
        cr_expect_eq(s, (Sampler *) 0x1);
        cr_expect_eq(sampler_sample(fx.s, NULL, NULL, 1, &snap, &sys), -EINVAL);
        cr_expect_null(sampler_free(NULL));
}

#define CPU_DIR "sys/fs/cgroup/cpu/cgbalance.slice/"

/* cpu.idle and the quota as the group has them; "ours" only while they hold what the record
 * says the daemon set (someone may have changed them since). */
Test(sampler_fixture, levers_are_read_and_ours_only_while_they_hold_what_the_record_set) {
        _cleanup_record_ Record *r = NULL;
        const PolicySnapshot *snap;
        const PolicyCgroup *g;

        fx_begin("mixed-1node", true, 500);
        put(CPU_DIR "batch/cpu.idle", "1\n");
        put(CPU_DIR "batch/cpu.cfs_quota_us", "25000\n");
        put(CPU_DIR "batch/cpu.cfs_period_us", "50000\n");
        put(CPU_DIR "app/cpu.idle", "0\n");
        put(CPU_DIR "app/cpu.cfs_quota_us", "-1\n");
        put(CPU_DIR "app/cpu.cfs_period_us", "100000\n");
        cr_assert_eq(record_new(&r), 0);
        cr_assert_eq(record_put_cgroup(r, "cgbalance.slice/batch", RECORD_CGROUP_IDLE, 0, 1), 0);
        cr_assert_eq(record_put_cgroup(r, "cgbalance.slice/batch", RECORD_CGROUP_QUOTA, 0, 25000),
                     0);
        cr_assert_eq(record_put_cgroup(r, "cgbalance.slice/app", RECORD_CGROUP_IDLE, 0, 1), 0);
        cr_assert_eq(record_put_cgroup(r, "cgbalance.slice/app", RECORD_CGROUP_QUOTA, 0, 50000), 0);
        sampler_set_since_boot(fx.s, true);
        snap = fx_sample_with(r, 1, NULL);
        g = find_group(snap, "cgbalance.slice/batch");
        cr_assert_not_null(g);
        cr_expect(g->has_idle);
        cr_expect(g->idle);
        cr_expect(g->idle_ours);
        cr_expect_eq(g->quota_permyriad, 5000, "25 ms per 50 ms: %u", g->quota_permyriad);
        cr_expect(g->quota_ours);
        g = find_group(snap, "cgbalance.slice/app");
        cr_assert_not_null(g);
        cr_expect(g->has_idle);
        cr_expect_not(g->idle);
        cr_expect_not(g->idle_ours, "someone else set it back to 0");
        cr_expect_eq(g->quota_permyriad, 0, "no limit");
        cr_expect_not(g->quota_ours, "someone else lifted it");
        g = find_group(snap, "cgbalance.slice");
        cr_assert_not_null(g);
        cr_expect_not(g->has_idle, "no cpu.idle file");
        cr_expect_not(g->idle_ours);
        cr_expect_eq(g->quota_permyriad, 0);
        cr_expect_eq(g->throttled_permyriad, 0);
}

/* A partition is the record's alone (no cgroup file says it): the snapshot has a copy, which
 * outlives the record it came from (the actuator replaces its record while the snapshot is
 * kept for status). */
Test(sampler_fixture, a_partition_comes_from_the_record_and_outlives_it) {
        _cleanup_record_ Record *r = NULL;
        _cleanup_cpumask_ CpuMask *cpus = NULL;
        _cleanup_free_ char *text = NULL;
        const PolicySnapshot *snap;
        const PolicyCgroup *g;

        fx_begin("mixed-1node", true, 500);
        cr_assert_eq(record_new(&r), 0);
        cr_assert_eq(cpumask_parse("1", 64, &cpus, NULL), 0);
        cr_assert_eq(record_put_partition(r, "cgbalance.slice/batch", cpus), 0);
        snap = fx_sample_with(r, 1, NULL);
        r = record_free(r);
        g = find_group(snap, "cgbalance.slice/batch");
        cr_assert_not_null(g);
        cr_assert_not_null(g->partition);
        cr_assert_eq(cpumask_format(g->partition, &text), 0);
        cr_expect_str_eq(text, "1");
        cr_expect_null(find_group(snap, "cgbalance.slice/app")->partition);
}

/* pressure_measure = interval: the share of the interval the group stalled ("some total"),
 * not the kernel's 10 s average; avg10 by default. */
Test(sampler_fixture, pressure_is_the_interval_s_stall_with_pressure_measure_interval) {
        static const char *const file = "sys/fs/cgroup/unified/cgbalance.slice/app/cpu.pressure";
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        put(file, "some avg10=1.00 avg60=0.00 avg300=0.00 total=5000000\n"
                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        snap = fx_sample(10 * SEC, NULL);
        cr_expect_eq(find_group(snap, "cgbalance.slice/app")->pressure_permyriad, 100, "avg10");
        fx.t.pressure_measure = TUNABLES_PRESSURE_INTERVAL;
        put(file, "some avg10=1.00 avg60=0.00 avg300=0.00 total=5400000\n"
                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_eq(find_group(snap, "cgbalance.slice/app")->pressure_permyriad, 4000,
                     "0.4 s stalled of 1 s");
        cr_expect(find_group(snap, "cgbalance.slice/app")->has_pressure);
}

Test(sampler_fixture, throttled_time_is_a_share_of_the_interval) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        put(CPU_DIR "batch/cpu.stat", "nr_periods 10\nnr_throttled 2\nthrottled_time 1000000000\n");
        snap = fx_sample(10 * SEC, NULL);
        cr_expect_eq(find_group(snap, "cgbalance.slice/batch")->throttled_permyriad, 0,
                     "the first sample only primes");
        put(CPU_DIR "batch/cpu.stat", "nr_periods 20\nnr_throttled 7\nthrottled_time 1250000000\n");
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_eq(find_group(snap, "cgbalance.slice/batch")->throttled_permyriad, 2500,
                     "0.25 s of 1 s");
        cr_expect_eq(find_group(snap, "cgbalance.slice/app")->throttled_permyriad, 0,
                     "no cpu.stat");
}

Test(sampler_fixture, latency_is_the_mean_wait_per_timeslice_over_the_interval) {
        const PolicySnapshot *snap;
        const PolicyCgroup *g;

        fx_begin("mixed-1node", true, 500);
        snap = fx_sample(10 * SEC, NULL);
        cr_expect_not(find_group(snap, "cgbalance.slice/batch")->has_latency, "only primes");
        /* 0.25 s more waiting over 50 more times on a CPU: 5 ms a time */
        put_schedstat_slices(510, 510, UINT64_C(150500000000), UINT64_C(30250000000), 1050);
        snap = fx_sample(11 * SEC, NULL);
        g = find_group(snap, "cgbalance.slice/batch");
        cr_expect(g->has_latency);
        cr_expect_eq(g->latency_usec, 5000, "%u usec", g->latency_usec);
        g = find_group(snap, "cgbalance.slice/app");
        cr_expect_not(g->has_latency, "its tasks never got a CPU in the interval");
        cr_expect_eq(g->latency_usec, 0);
}

Test(sampler_fixture, latency_since_boot_is_over_each_task_s_life) {
        const PolicyCgroup *g;

        fx_begin("mixed-1node", false, 500);
        g = find_group(fx_since_boot(NULL), "cgbalance.slice/batch");
        cr_expect(g->has_latency);
        cr_expect_eq(g->latency_usec, 30000, "30 s of waiting over 1000 times: %u usec",
                     g->latency_usec);
}

/* ---- mixed-1node as a live machine: deltas between samples of a changing copy */

Test(sampler_fixture, first_live_sample_only_primes) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", false, 500);
        snap = fx_sample(10 * SEC, NULL);
        cr_expect_eq(snap->interval_usec, 0);
        cr_expect_eq(snap->n_tasks, 3, "the tasks are there");
        for (size_t i = 0; i < snap->n_tasks; i++) {
                cr_expect_eq(snap->tasks[i].util_permyriad, 0, "pid %d", snap->tasks[i].pid);
                cr_expect_eq(snap->tasks[i].demand_permyriad, 0, "pid %d", snap->tasks[i].pid);
        }
        for (size_t i = 0; i < snap->n_cgroups; i++)
                cr_expect_eq(snap->cgroups[i].util_permyriad, 0, "%s", snap->cgroups[i].path);
        cr_expect_eq(snap->cpus[0].util_permyriad, 0);
}

Test(sampler_fixture, second_sample_gives_deltas_over_the_interval) {
        const PolicySnapshot *snap;
        const PolicyTask *t;

        fx_begin("mixed-1node", true, 500);
        (void) fx_sample(10 * SEC, NULL);
        put_stat(510, 510, &(StatSpec){ "cruncher", 'R', 15050, 0, 5000, 1, 0 });
        put_schedstat(510, 510, UINT64_C(150500000000), UINT64_C(30250000000));
        put_proc_stat(60, 40, 0, 100);
        put("sys/fs/cgroup/cpuacct/cgbalance.slice/batch/cpuacct.usage", "150500000000\n");
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_eq(snap->interval_usec, SEC);
        t = get_task(snap, 510);
        cr_expect_eq(t->util_permyriad, 5000, "50 ticks in 1 s: %u", t->util_permyriad);
        cr_expect_eq(t->demand_permyriad, 7500, "0.5 s run + 0.25 s wait: %u", t->demand_permyriad);
        cr_expect_eq(get_task(snap, 501)->util_permyriad, 0, "501 did not run");
        cr_expect_eq(snap->cpus[0].util_permyriad, 6000);
        cr_expect_eq(snap->cpus[1].util_permyriad, 0);
        cr_expect_eq(find_group(snap, "cgbalance.slice/batch")->util_permyriad, 5000);
}

/* pid 506 exits and a new process gets its number, with far more CPU time behind it. */
static void recycled_pid_counts_from_scratch(void) {
        const PolicySnapshot *snap;
        const PolicyTask *t;

        (void) fx_sample(10 * SEC, NULL);
        put_stat(506, 506, &(StatSpec){ "reborn", 'R', 999999, 5000, 45000, 1, 0 });
        put_schedstat(506, 506, UINT64_C(9999000000000), UINT64_C(5000000000));
        snap = fx_sample(11 * SEC, NULL);
        t = get_task(snap, 506);
        cr_expect_eq(t->starttime_ticks, 45000);
        cr_expect_str_eq(t->comm, "reborn");
        cr_expect_eq(t->util_permyriad, 0, "no delta against the old process: %u",
                     t->util_permyriad);
        cr_expect_eq(t->demand_permyriad, 0);
        put_stat(506, 506, &(StatSpec){ "reborn", 'R', 1000029, 5000, 45000, 1, 0 });
        put_schedstat(506, 506, UINT64_C(9999300000000), UINT64_C(5100000000));
        snap = fx_sample(12 * SEC, NULL);
        t = get_task(snap, 506);
        cr_expect_eq(t->util_permyriad, 3000, "then from its own counters: %u", t->util_permyriad);
        cr_expect_eq(t->demand_permyriad, 4000);
}

Test(sampler_fixture, recycled_pid_counts_from_scratch) {
        fx_begin("mixed-1node", true, 500);
        recycled_pid_counts_from_scratch();
}

Test(sampler_fixture, recycled_pid_counts_from_scratch_without_kept_fds) {
        struct rlimit rl;

        /* Below 256 fds the sampler keeps none: every read opens the file by path. */
        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        rl.rlim_cur = 64;
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        fx_begin("mixed-1node", true, 500);
        recycled_pid_counts_from_scratch();
}

Test(sampler_fixture, since_boot_numbers_do_not_depend_on_kept_fds) {
        struct rlimit rl;
        const PolicySnapshot *snap;

        cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
        rl.rlim_cur = 64;
        cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
        fx_begin("imbalanced-2node", false, 0);
        snap = fx_since_boot(NULL);
        cr_assert_eq(snap->n_tasks, 4);
        for (size_t i = 0; i < 4; i++) {
                cr_expect_eq(snap->tasks[i].util_permyriad, 5000);
                cr_expect_eq(snap->tasks[i].demand_permyriad, 10000);
        }
}

Test(sampler_fixture, exited_task_is_dropped_and_forgotten) {
        const PolicySnapshot *snap;

        _cleanup_free_ char *dir = NULL, *gone = NULL;

        fx_begin("mixed-1node", true, 500);
        cr_assert_gt(asprintf(&dir, "%s/proc/510", fx.root), 0);
        cr_assert_gt(asprintf(&gone, "%s/proc/510.gone", fx.root), 0);
        (void) fx_sample(10 * SEC, NULL);
        put("sys/fs/cgroup/cpu/cgbalance.slice/batch/cgroup.procs", "%s", "");
        cr_assert_eq(rename(dir, gone), 0);
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_null(find_task(snap, 510));
        cr_expect_eq(snap->n_tasks, 2);
        /* Back with more CPU time: a task seen anew primes; its old counters are gone. */
        cr_assert_eq(rename(gone, dir), 0);
        put("sys/fs/cgroup/cpu/cgbalance.slice/batch/cgroup.procs", "510\n");
        put("sys/fs/cgroup/cpuacct/cgbalance.slice/batch/cpuacct.usage", "150500000000\n");
        put_stat(510, 510, &(StatSpec){ "cruncher", 'R', 15050, 0, 5000, 1, 0 });
        snap = fx_sample(12 * SEC, NULL);
        cr_expect_eq(get_task(snap, 510)->util_permyriad, 0);
}

Test(sampler_fixture, a_quiet_group_is_listed_again_within_sample_refresh) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        (void) fx_sample(10 * SEC, NULL);
        /* 510 leaves batch without running: batch's usage does not move, so the lazy sampler
         * keeps batch's processes of its last visit until sample_refresh has passed */
        put("sys/fs/cgroup/cpu/cgbalance.slice/batch/cgroup.procs", "%s", "");
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_not_null(find_task(snap, 510), "listed as of the last visit");
        snap = fx_sample(10 * SEC + fx.t.sample_refresh_usec - 1, NULL);
        cr_expect_not_null(find_task(snap, 510), "within sample_refresh of it");
        snap = fx_sample(10 * SEC + fx.t.sample_refresh_usec, NULL);
        cr_expect_null(find_task(snap, 510), "listed again at sample_refresh");
}

Test(sampler_fixture, a_task_that_leaves_a_quiet_group_and_runs_is_its_new_group_s) {
        const PolicySnapshot *snap;
        const PolicyTask *t;

        fx_begin("mixed-1node", true, 500);
        (void) fx_sample(10 * SEC, NULL);
        /* 506 moves from app (sampled first) to batch and runs there: batch's usage moves, app's
         * does not, so app kept its last visit's processes; 506's time moving says it left */
        put("sys/fs/cgroup/cpu/cgbalance.slice/app/cgroup.procs",
            "1\n2\n500\n501\n504\n505\n507\n");
        put("sys/fs/cgroup/cpu/cgbalance.slice/batch/cgroup.procs", "506\n510\n");
        put_stat(506, 506, &(StatSpec){ "pinned", 'R', 2050, 0, 30000, 1, 1 });
        put("sys/fs/cgroup/cpuacct/cgbalance.slice/batch/cpuacct.usage", "%s", "150500000000\n");
        snap = fx_sample(11 * SEC, NULL);
        t = get_task(snap, 506);
        cr_expect_str_eq(snap->cgroups[t->cgroup].path, "cgbalance.slice/batch");
        cr_expect_eq(t->util_permyriad, 5000, "its time is fresh: %u", t->util_permyriad);
}

Test(sampler_fixture, task_back_from_an_excluded_comm_primes_again) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        put_stat(504, 504, &(StatSpec){ "sync", 'R', 5000, 0, 20000, 1, 1 });
        (void) fx_sample(10 * SEC, NULL);
        put_stat(504, 504, &(StatSpec){ "backup-now", 'R', 5100, 0, 20000, 1, 1 });
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_null(find_task(snap, 504), "renamed into exclude_comms");
        put_stat(504, 504, &(StatSpec){ "sync", 'R', 5150, 0, 20000, 1, 1 });
        snap = fx_sample(12 * SEC, NULL);
        cr_expect_eq(get_task(snap, 504)->util_permyriad, 0,
                     "not 150 ticks of two intervals as one: %u",
                     get_task(snap, 504)->util_permyriad);
        put_stat(504, 504, &(StatSpec){ "sync", 'R', 5170, 0, 20000, 1, 1 });
        snap = fx_sample(13 * SEC, NULL);
        cr_expect_eq(get_task(snap, 504)->util_permyriad, 2000);
}

Test(sampler_fixture, removed_group_is_skipped) {
        _cleanup_free_ char *dir = NULL;
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        (void) fx_sample(10 * SEC, NULL);
        cr_assert_gt(asprintf(&dir, "%s/sys/fs/cgroup/cpu/cgbalance.slice/batch", fx.root), 0);
        rm_rf(dir);
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_eq(snap->n_cgroups, 2);
        cr_expect_null(find_group(snap, "cgbalance.slice/batch"));
        cr_expect_null(find_task(snap, 510));
        cr_expect_not_null(find_task(snap, 506));
        cr_expect_eq(get_task(snap, 506)->cgroup, 1);
}

/* The log (stderr) of the samples at now_usec.. one a second, n of them. */
static char *fx_samples_log(uint64_t now_usec, unsigned n) {
        _cleanup_free_ char *dir = make_tmpdir(), *file = NULL;
        int saved = dup(STDERR_FILENO), fd;
        char *text;

        cr_assert_geq(saved, 0);
        cr_assert_gt(asprintf(&file, "%s/log", dir), 0);
        fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        cr_assert_geq(fd, 0);
        cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        (void) close(fd);
        for (unsigned i = 0; i < n; i++)
                (void) fx_sample(now_usec + i * SEC, NULL);
        cr_assert_eq(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        (void) close(saved);
        text = read_all(file);
        rm_rf(dir);
        return text;
}

static size_t count_of(const char *haystack, const char *needle) {
        size_t n = 0;

        for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/* A group the walk passes over (cgroup_walk()'s skipped) is said once while it is there, only
 * when the globs would manage it; again once made again. */
Test(sampler_fixture, a_managed_group_the_walk_passes_over_is_said_once_while_there) {
        _cleanup_free_ char *cpu = NULL, *tab = NULL, *log = NULL;
        const char *said = "Group cgbalance.slice/app/tab\\x09x: its name holds a control "
                           "character the record of changes cannot keep: it and the groups "
                           "below it are not managed";

        fx_begin("mixed-1node", true, 500);
        set_strv(&fx.t.exclude_cgroups,
                 strv("cgbalance.slice/excluded", "cgbalance.slice/esc*", NULL));
        cr_assert_gt(asprintf(&cpu, "%s/sys/fs/cgroup/cpu", fx.root), 0);
        cr_assert_gt(asprintf(&tab, "%s/cgbalance.slice/app/tab\tx", cpu), 0);
        cr_assert_eq(mkdir(tab, 0755), 0);
        put("sys/fs/cgroup/cpu/cgbalance.slice/esc\x1b[0m/cgroup.procs", "%s", ""); /* excluded */
        put("sys/fs/cgroup/cpu/other\tslice/cgroup.procs", "%s", ""); /* not managed */
        log = fx_samples_log(10 * SEC, 4);
        cr_expect_eq(count_of(log, said), 1, "%s", log);
        cr_expect_eq(count_of(log, "not managed"), 1, "only the managed one: %s", log);
        free(log);

        cr_assert_eq(rmdir(tab), 0);
        log = fx_samples_log(20 * SEC, 2);
        cr_expect_eq(count_of(log, "not managed"), 0, "%s", log);
        free(log);
        cr_assert_eq(mkdir(tab, 0755), 0);
        log = fx_samples_log(30 * SEC, 3);
        cr_expect_eq(count_of(log, said), 1, "made again, said again: %s", log);
}

Test(sampler_fixture, new_thread_counts_from_its_start) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        (void) fx_sample(10 * SEC, NULL);
        /* 501 grows a fourth thread that has run 20 ticks, and says so in its stat */
        put_stat(501, 501, &(StatSpec){ "worker", 'S', 4000, 1000, 10000, 4, 0 });
        put_stat(501, 502, &(StatSpec){ "worker", 'S', 9000, 1000, 10050, 4, 0 });
        put_stat(501, 508, &(StatSpec){ "worker-new", 'R', 15, 5, 10900, 4, 1 });
        put_schedstat(501, 508, 200000000, 100000000);
        snap = fx_sample(11 * SEC, NULL);
        /* demand falls back to util: 503 still has no schedstat */
        cr_expect_eq(get_task(snap, 501)->util_permyriad, 2000, "%u",
                     get_task(snap, 501)->util_permyriad);
        cr_expect_eq(get_task(snap, 501)->cpu, 1, "the new thread ran most, on CPU 1");
}

Test(sampler_fixture, new_thread_time_is_bounded_by_the_interval) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        (void) fx_sample(10 * SEC, NULL);
        /* A thread not seen before cannot have run longer than the interval (a tid recycled
         * under a missed listing would otherwise bring all its past in) */
        put_stat(510, 510, &(StatSpec){ "cruncher", 'R', 15000, 0, 5000, 2, 0 });
        put_stat(510, 511, &(StatSpec){ "cruncher-2", 'R', 90000, 0, 6000, 2, 1 });
        put_stat_file(510, 0, &(StatSpec){ "cruncher", 'R', 105000, 0, 5000, 2, 0 });
        put_schedstat(510, 511, UINT64_C(900000000000), UINT64_C(900000000000));
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_eq(get_task(snap, 510)->util_permyriad, 10100, "one interval and a tick: %u",
                     get_task(snap, 510)->util_permyriad);
        cr_expect_eq(get_task(snap, 510)->demand_permyriad, 10100, "%u",
                     get_task(snap, 510)->demand_permyriad);
}

Test(sampler_fixture, pinned_task_stays_foreign_across_samples) {
        const PolicySnapshot *snap;

        fx_begin("mixed-1node", true, 500);
        (void) fx_sample(10 * SEC, NULL);
        put_stat(506, 506, &pinned);
        put("proc/506/status", "Name:\tpinned\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n");
        snap = fx_sample(11 * SEC, NULL);
        cr_expect_not(get_task(snap, 506)->foreign, "its affinity was given back");
        put("proc/506/status", "Name:\tpinned\nCpus_allowed:\t2\nCpus_allowed_list:\t1\n");
        snap = fx_sample(12 * SEC, NULL);
        cr_expect(get_task(snap, 506)->foreign, "narrowed again");
}

/* ---- the lazy sampler against the full one: one machine played tick by tick */

/*
 * imbalanced-2node, its four busy processes (1001-1004, on node 0) beside a server of many
 * threads, pid 2001, asleep but for a schedule. Both samplers read the same tree at each tick;
 * the full one with sample_refresh 0, the lazy one with LZ_REFRESH. What the schedule does:
 *   ticks 11-20  threads 2011 and 2012 busy (0.9 s run, 0.1 s wait a tick); 2012 to tick 30
 *   tick 15      thread 2041 is born, busy to tick 35
 *   ticks 25-34  thread 2031 starved: 1 ms run and 999 ms wait a tick, below the slack
 *   tick 28      1003 exits
 */
#define LZ_PID 2001
#define LZ_THREADS 40 /* at the start; one more is born */
#define LZ_BORN_TICK 15u
#define LZ_STARVED_FROM 25u
#define LZ_STARVED_TO 34u
#define LZ_TICKS 40u
#define LZ_REFRESH (5 * SEC)
#define MSEC_NS UINT64_C(1000000)

typedef struct LzThread {
        uint64_t run_ns, wait_ns, slices;
        unsigned cpu;
} LzThread;

static LzThread lz[LZ_THREADS + 1];

/* What thread idx (tid LZ_PID + idx) does in tick i. */
static void lz_schedule(unsigned i, unsigned idx, uint64_t *run, uint64_t *wait) {
        *run = *wait = 0;
        if ((idx == 10 && i >= 11 && i <= 20) || (idx == 11 && i >= 11 && i <= 30)) {
                *run = 900 * MSEC_NS;
                *wait = 100 * MSEC_NS;
                lz[idx].cpu = 2 + idx % 2;
        } else if (idx == LZ_THREADS && i >= LZ_BORN_TICK && i <= 35) {
                *run = 500 * MSEC_NS;
                *wait = 200 * MSEC_NS;
                lz[idx].cpu = 3;
        } else if (idx == 30 && i >= LZ_STARVED_FROM && i <= LZ_STARVED_TO) {
                *run = 1 * MSEC_NS;
                *wait = 999 * MSEC_NS;
                lz[idx].cpu = 0;
        }
}

/* The machine at tick i (0: as it starts). */
static void lz_play(unsigned i) {
        unsigned n = i >= LZ_BORN_TICK ? LZ_THREADS + 1 : LZ_THREADS;
        uint64_t total = 0, usage = 1980 * SEC * 1000;

        for (unsigned idx = 0; idx < n; idx++) {
                uint64_t run, wait;

                lz_schedule(i, idx, &run, &wait);
                lz[idx].run_ns += run;
                lz[idx].wait_ns += wait;
                lz[idx].slices += run > 0 ? 10 : 0;
                total += lz[idx].run_ns;
                usage += run;
                put_stat_file(LZ_PID, LZ_PID + (pid_t) idx,
                              &(StatSpec){ "server", run > 0 ? 'R' : 'S',
                                           lz[idx].run_ns / (10 * MSEC_NS), 0,
                                           idx == LZ_THREADS ? 20000 + 100 * LZ_BORN_TICK : 20000,
                                           n, lz[idx].cpu });
                put_schedstat_slices(LZ_PID, LZ_PID + (pid_t) idx, lz[idx].run_ns, lz[idx].wait_ns,
                                     lz[idx].slices);
        }
        put_stat_file(LZ_PID, 0,
                      &(StatSpec){ "server", 'S', total / (10 * MSEC_NS), 0, 20000, n, lz[0].cpu });
        for (pid_t pid = 1001; pid <= 1004; pid++) {
                if (pid == 1003 && i >= 28)
                        continue;
                put_stat(pid, pid,
                         &(StatSpec){ "busy", 'R', 49300 + 50 * (uint64_t) i, 200, 1000, 1,
                                      (unsigned) (pid - 1001) % 2 });
                put_schedstat_slices(pid, pid, (495 * SEC + (uint64_t) i * SEC / 2) * 1000,
                                     (495 * SEC + (uint64_t) i * SEC / 2) * 1000,
                                     123456 + 50 * (uint64_t) i);
                usage += (uint64_t) i * SEC / 2 * 1000;
        }
        put("sys/fs/cgroup/cpu/cgbalance.slice/job/cgroup.procs",
            i >= 28 ? "1001\n1002\n1004\n2001\n" : "1001\n1002\n1003\n1004\n2001\n");
        put("sys/fs/cgroup/cpuacct/cgbalance.slice/job/cpuacct.usage", "%" PRIu64 "\n", usage);
        put("sys/fs/cgroup/cpuacct/cgbalance.slice/cpuacct.usage", "%" PRIu64 "\n", usage);
        put("proc/stat",
            "cpu  %u 0 2550 %u 120 0 0 0 0 0\n"
            "cpu0 %u 0 1200 500 0 0 0 0 0 0\n"
            "cpu1 %u 0 1220 480 20 0 0 0 0 0\n"
            "cpu2 120 0 80 %u 100 0 0 0 0 0\n"
            "cpu3 50 0 50 %u 0 0 0 0 0 0\n"
            "procs_running 5\nprocs_blocked 0\n",
            196750 + 200 * i, 200580 + 200 * i, 98300 + 100 * i, 98280 + 100 * i, 99700 + 100 * i,
            99900 + 100 * i);
}

static void lz_begin(void) {
        fx_begin("imbalanced-2node", true, 0);
        memset(lz, 0, sizeof lz);
        for (unsigned idx = 0; idx <= LZ_THREADS; idx++)
                lz[idx].cpu = idx % 4;
        put("proc/2001/status", "Name:\tserver\nCpus_allowed:\tf\nCpus_allowed_list:\t0-3\n");
        put("proc/2001/cgroup", "3:cpuset:/\n2:cpuacct:/cgbalance.slice/job\n"
                                "1:cpu:/cgbalance.slice/job\n0::/cgbalance.slice/job\n");
        lz_play(0);
}

/* Whether two snapshots' tasks and groups say the same; which task or group differs first. */
static bool lz_same(const PolicySnapshot *a, const PolicySnapshot *b, pid_t *ret_pid,
                    const char **ret_group) {
        *ret_pid = 0;
        *ret_group = NULL;
        if (a->n_tasks != b->n_tasks || a->n_cgroups != b->n_cgroups)
                return false;
        for (size_t i = 0; i < a->n_tasks; i++) {
                const PolicyTask *x = &a->tasks[i], *y = &b->tasks[i];

                if (x->pid != y->pid || x->starttime_ticks != y->starttime_ticks ||
                    x->cgroup != y->cgroup || x->util_permyriad != y->util_permyriad ||
                    x->demand_permyriad != y->demand_permyriad || x->cpu != y->cpu ||
                    x->ours != y->ours || x->foreign != y->foreign || !streq(x->comm, y->comm) ||
                    !cpumask_equal(x->allowed, y->allowed)) {
                        *ret_pid = x->pid;
                        return false;
                }
        }
        for (size_t i = 0; i < a->n_cgroups; i++) {
                const PolicyCgroup *x = &a->cgroups[i], *y = &b->cgroups[i];

                if (!streq(x->path, y->path) || x->util_permyriad != y->util_permyriad ||
                    x->weight != y->weight || x->has_latency != y->has_latency ||
                    x->latency_usec != y->latency_usec) {
                        *ret_group = x->path;
                        return false;
                }
        }
        return true;
}

static bool lz_same_plan(const Plan *a, const Plan *b) {
        if (a->n_moves != b->n_moves || a->n_weights != b->n_weights ||
            a->n_escalations != b->n_escalations)
                return false;
        for (size_t i = 0; i < a->n_moves; i++)
                if (a->moves[i].pid != b->moves[i].pid ||
                    a->moves[i].to_node != b->moves[i].to_node ||
                    !cpumask_equal(a->moves[i].mask, b->moves[i].mask))
                        return false;
        for (size_t i = 0; i < a->n_weights; i++)
                if (a->weights[i].cgroup != b->weights[i].cgroup ||
                    a->weights[i].to != b->weights[i].to)
                        return false;
        return true;
}

Test(sampler_fixture, lazy_plans_as_the_full_sampler_where_fresh_and_is_stale_within_the_refresh) {
        _cleanup_sampler_ Sampler *lazy = NULL;
        _cleanup_policy_state_ PolicyState *ps_full = NULL, *ps_lazy = NULL;
        unsigned stale = 0, first_stale = 0, last_stale = 0, same_plans = 0, moves = 0;
        uint64_t read_full = 0, read_lazy = 0, read_quiet = 0;
        bool diverged = false, caught_up = false;
        PolicyParams params;

        lz_begin();
        cr_assert_eq(sampler_new(fx.proc_fd, &fx.layout, fx.topo, 0, &lazy), 0);
        cr_assert_eq(policy_params_from_tunables(&fx.t, fx.topo, &params), 0);
        ps_full = policy_state_new(fx.topo);
        ps_lazy = policy_state_new(fx.topo);
        cr_assert(ps_full && ps_lazy);
        for (unsigned i = 0; i <= LZ_TICKS; i++) {
                _cleanup_plan_ Plan *plan_full = NULL, *plan_lazy = NULL;
                const PolicySnapshot *full, *lz_snap;
                const SamplerSystem *sys_full, *sys_lazy;
                uint64_t now = (100 + i) * SEC;
                const char *group;
                pid_t differs;

                if (i > 0)
                        lz_play(i);
                fx.t.sample_refresh_usec = 0;
                cr_assert_eq(sampler_sample(fx.s, &fx.t, NULL, now, &full, &sys_full), 0);
                fx.t.sample_refresh_usec = LZ_REFRESH;
                cr_assert_eq(sampler_sample(lazy, &fx.t, NULL, now, &lz_snap, &sys_lazy), 0);
                cr_assert_eq(policy_plan(ps_full, full, fx.topo, &params, now, false, &plan_full),
                             0);
                cr_assert_eq(
                        policy_plan(ps_lazy, lz_snap, fx.topo, &params, now, false, &plan_lazy), 0);
                cr_assert_eq(sys_full->n_threads, sys_lazy->n_threads, "tick %u", i);
                if (i > 0) {
                        read_full += sys_full->n_threads_read;
                        read_lazy += sys_lazy->n_threads_read;
                }
                if (i >= 2 && i <= 10) /* all asleep but the four */
                        read_quiet += sys_lazy->n_threads_read;
                if (!lz_same(full, lz_snap, &differs, &group)) {
                        /* Only the server, whose starved thread is read within the refresh, and
                         * at the tick of that reading, whose deltas span the ticks before it,
                         * its group's mean wait per timeslice. */
                        cr_expect(differs == LZ_PID ||
                                          (group && streq(group, "cgbalance.slice/job")),
                                  "tick %u: pid %d, group %s differ", i, (int) differs,
                                  group ? group : "none");
                        cr_expect(i >= LZ_STARVED_FROM && i <= LZ_STARVED_FROM + LZ_REFRESH / SEC,
                                  "tick %u is stale outside the starved thread's window", i);
                        if (stale++ == 0)
                                first_stale = i;
                        last_stale = i;
                        diverged = true;
                        continue;
                }
                moves += (unsigned) plan_full->n_moves;
                /* the starved thread read by its refresh while it still starves */
                if (diverged && i <= LZ_STARVED_TO)
                        caught_up = true;
                if (diverged)
                        continue;
                /* The same input and the same state before it: the same plan. */
                cr_expect(lz_same_plan(plan_full, plan_lazy), "tick %u: plans differ", i);
                same_plans++;
        }
        cr_log_info("lazy: %u stale ticks (%u-%u), %u identical plans (%u moves) before them; "
                    "threads read %" PRIu64 " against %" PRIu64,
                    stale, first_stale, last_stale, same_plans, moves, read_lazy, read_full);
        cr_expect(caught_up, "the starved thread's wait was read within the refresh, ticks %d-%d",
                  LZ_STARVED_FROM, LZ_STARVED_TO);
        cr_expect_leq(stale, LZ_REFRESH / SEC + 1, "%u stale ticks", stale);
        cr_expect_geq(same_plans, LZ_STARVED_FROM - 1, "%u", same_plans);
        cr_expect_gt(moves, 0, "the policy had something to plan: node 0 is overloaded");
        /* Ticks 2-10: the four busy threads each tick, each of the server's once or twice in the
         * 9 s (a refresh every 5 s, staggered): at most 9 * 4 + 2 * 40; the full one 9 * 44. */
        cr_expect_leq(read_quiet, 9 * 4 + 2 * LZ_THREADS, "%" PRIu64, read_quiet);
        cr_expect_lt(read_lazy * 2, read_full, "lazy read %" PRIu64 " threads, full %" PRIu64,
                     read_lazy, read_full);
}

/* ---- live: a real cgroup with real processes on this machine (root only) */

#define SLICE "cgbalance.slice"

static struct {
        bool ready, slice_existed;
        CgroupLayout layout;
        char group[128];
        pid_t kids[4];
        size_t n_kids;
        int proc_fd;
        Topology *topo;
        Tunables t;
        Sampler *s;
} live = { .proc_fd = -EBADF };

static int sync_pipe[2] = { -1, -1 };

static bool live_dir_exists(const char *base, const char *group) {
        _cleanup_free_ char *p = NULL;
        struct stat st;

        cr_assert_gt(asprintf(&p, "%s/%s", base, group), 0);
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Runs even when an assertion failed: children killed, sampler freed, groups removed (through
 * lib/cgroup, then by hand should that fail). */
static void live_end(void) {
        const char *bases[] = { live.layout.cpu_path, live.layout.cpuacct_path,
                                live.layout.cpuset_path, live.layout.memory_path,
                                live.layout.mode == CGROUP_MODE_V1 ? ""
                                                                   : live.layout.unified_path };

        for (size_t i = 0; i < live.n_kids; i++) {
                (void) kill(live.kids[i], SIGKILL);
                (void) waitpid(live.kids[i], NULL, 0);
        }
        live.s = sampler_free(live.s);
        live.topo = topology_free(live.topo);
        tunables_free(&live.t);
        if (live.proc_fd >= 0)
                (void) close(live.proc_fd);
        if (!live.ready)
                return;
        (void) cgroup_remove(&live.layout, live.group);
        for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                const char *rel[] = { live.group, live.slice_existed ? NULL : SLICE };

                for (size_t j = 0; j < ELEMENTSOF(rel) && rel[j] && bases[i][0]; j++) {
                        _cleanup_free_ char *p = NULL;

                        if (asprintf(&p, "%s/%s", bases[i], rel[j]) > 0)
                                (void) rmdir(p);
                }
        }
}

/* Criterion runs no .fini after cr_skip_test(): clean up first, or the group stays. */
#define live_skip(...)                     \
        do {                               \
                live_end();                \
                cr_skip_test(__VA_ARGS__); \
        } while (0)

static void live_begin(void) {
        int r;

        if (!running_as_root())
                cr_skip_test("needs root to make cgroups");
        r = cgroup_layout_detect(&live.layout);
        if (r < 0)
                cr_skip_test("no cgroup layout: %s", strerror(-r));
        if (!live.layout.cpu_path[0])
                cr_skip_test("no cpu controller (mode %s)",
                             cgroup_mode_to_string(live.layout.mode));
        live.slice_existed = live_dir_exists(live.layout.cpu_path, SLICE);
        (void) snprintf(live.group, sizeof live.group, SLICE "/test-sampler-%d", (int) getpid());
        cr_assert_eq(cgroup_create(&live.layout, live.group), 0);
        live.ready = true;
        live.proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(live.proc_fd, 0);
        cr_assert_eq(topology_new_from_system(&live.topo), 0);
        cr_assert_eq(tunables_defaults(&live.t), 0);
        set_strv(&live.t.cgroups, strv(live.group, NULL));
        cr_assert_eq(sampler_new(live.proc_fd, &live.layout, live.topo, getpid(), &live.s), 0);
        sampler_set_live(live.s, true); /* as the daemon's */
}

/* ---- children: they never assert and never return; live_end() kills them */

static void spin(void) {
        for (volatile unsigned long i = 0;; i++)
                ;
}

static void spin_on_cpu0(void) {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(0, &set);
        if (sched_setaffinity(0, sizeof set, &set) < 0)
                _exit(1);
        if (write(sync_pipe[1], "", 1) != 1)
                _exit(1);
        spin();
}

/*
 * A child running body, moved into the live group before body starts: before Linux 6.2, joining a
 * cpuset group resets a task's affinity to the group's CPUs, so a body that narrows itself must do
 * so after the move, or the move undoes it.
 */
static pid_t live_spawn(void (*body)(void)) {
        int gate[2], r;
        pid_t pid;
        char c;

        cr_assert_lt(live.n_kids, ELEMENTSOF(live.kids));
        cr_assert_eq(pipe2(gate, O_CLOEXEC), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                (void) close(gate[1]);
                /* EOF once the parent moved us (or failed to, and will kill us) */
                while (read(gate[0], &c, 1) < 0 && errno == EINTR)
                        ;
                (void) close(gate[0]);
                body();
                _exit(0);
        }
        (void) close(gate[0]);
        live.kids[live.n_kids++] = pid;
        r = cgroup_attach_pid(&live.layout, live.group, pid);
        (void) close(gate[1]);
        cr_assert_eq(r, 0, "moving %d into %s: %s", (int) pid, live.group, strerror(-r));
        return pid;
}

static void sleep_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static const PolicySnapshot *live_sample(Sampler *s, const SamplerSystem **ret_sys) {
        const PolicySnapshot *snap = NULL;
        const SamplerSystem *sys = NULL;
        int r;

        r = sampler_sample(s, &live.t, NULL, now_usec(), &snap, &sys);
        cr_assert_eq(r, 0, "sampler_sample: %s", strerror(-r));
        if (ret_sys)
                *ret_sys = sys;
        return snap;
}

static unsigned count_fds(void) {
        _cleanup_closedir_ DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        cr_assert_not_null(d);
        while (readdir(d))
                n++;
        return n;
}

TestSuite(sampler_live, .fini = live_end, .timeout = 30);

Test(sampler_live, busy_children_show_util_demand_and_group_usage) {
        const SamplerSystem *sys;
        const PolicySnapshot *snap;
        const PolicyCgroup *g;
        uint32_t sum = 0;
        pid_t a, b;

        live_begin();
        a = live_spawn(spin);
        b = live_spawn(spin);
        snap = live_sample(live.s, NULL);
        cr_assert_eq(snap->n_tasks, 2, "the first sample lists them");
        cr_expect_eq(snap->tasks[0].util_permyriad, 0, "and only primes");
        /* A second: a sample reads the group and each task at moments that drift apart by tens
         * of ms where CPUs are slow or emulated, which must count for little against it. */
        sleep_ms(1000);
        snap = live_sample(live.s, &sys);
        cr_assert_eq(snap->n_tasks, 2);
        cr_expect_geq(snap->interval_usec, 1000 * 1000u);
        for (size_t i = 0; i < 2; i++) {
                const PolicyTask *t = &snap->tasks[i];

                cr_expect(t->pid == a || t->pid == b, "pid %d", t->pid);
                /* A spinning task gets a CPU to itself on an idle box, less when other work
                 * competes; a tick (100 at 1 s) either side for the sampling. */
                cr_expect_geq(t->util_permyriad, 1000, "pid %d util %u", t->pid, t->util_permyriad);
                cr_expect_leq(t->util_permyriad, 10400, "pid %d util %u", t->pid,
                              t->util_permyriad);
                cr_expect_geq(t->demand_permyriad, t->util_permyriad);
                cr_expect_geq(t->cpu, 0);
                cr_expect_eq(t->cgroup, 0);
                sum += t->util_permyriad;
        }
        cr_assert_eq(snap->n_cgroups, 1);
        g = &snap->cgroups[0];
        cr_expect_str_eq(g->path, live.group);
        /* The group's usage counts the same CPU time as its tasks' stat lines */
        cr_expect_leq(g->util_permyriad > sum ? g->util_permyriad - sum : sum - g->util_permyriad,
                      1000, "group %u, tasks %u", g->util_permyriad, sum);
        cr_expect_eq(g->weight, 100);
        if (live.layout.mode == CGROUP_MODE_HYBRID || live.layout.mode == CGROUP_MODE_V2)
                cr_expect(g->has_pressure, "mode %s", cgroup_mode_to_string(live.layout.mode));
        cr_expect_eq(sys->n_threads, 2);
        cr_expect_gt(sys->sample_usec, 0);
}

Test(sampler_live, idle_quota_and_throttling_of_the_group_show_in_the_snapshot) {
        const PolicySnapshot *snap;
        const PolicyCgroup *g;
        int r;

        live_begin();
        r = cgroup_set_cpu_idle(&live.layout, live.group, true);
        if (r == -EOPNOTSUPP)
                live_skip("no cpu.idle on this kernel");
        cr_assert_eq(r, 0, "%s", strerror(-r));
        /* a tenth of a CPU, with the period as the group has it */
        cr_assert_eq(cgroup_set_cpu_quota(&live.layout, live.group, 10000), 0);
        (void) live_spawn(spin);
        (void) live_sample(live.s, NULL);
        sleep_ms(500);
        snap = live_sample(live.s, NULL);
        cr_assert_eq(snap->n_cgroups, 1);
        g = &snap->cgroups[0];
        cr_expect(g->has_idle);
        cr_expect(g->idle);
        cr_expect_not(g->idle_ours, "no record: not the daemon's");
        cr_expect_eq(g->quota_permyriad, 1000, "%u", g->quota_permyriad);
        cr_expect_not(g->quota_ours);
        /* held back about 90% of the time, less when others keep it waiting: a third */
        cr_expect_geq(g->throttled_permyriad, 3000, "%u", g->throttled_permyriad);
        cr_expect(g->has_latency, "it was given a CPU in the interval");
}

static unsigned parked_threads;

static void *park_thread(void *arg) {
        (void) arg;
        __atomic_add_fetch(&parked_threads, 1, __ATOMIC_RELEASE);
        for (;;)
                (void) pause();
        return NULL;
}

static void *spin_thread(void *arg) {
        (void) arg;
        spin();
        return NULL;
}

/* LIVE_SLEEPERS parked threads and one spinning, beside the main thread, parked too. */
#define LIVE_SLEEPERS 50

static void sleepers_and_a_spinner(void) {
        pthread_t t;

        for (unsigned i = 0; i < LIVE_SLEEPERS; i++)
                if (pthread_create(&t, NULL, park_thread, NULL) != 0)
                        _exit(1);
        if (pthread_create(&t, NULL, spin_thread, NULL) != 0)
                _exit(1);
        /* the sleepers have run to their pause(): from now on only the spinner runs */
        while (__atomic_load_n(&parked_threads, __ATOMIC_ACQUIRE) < LIVE_SLEEPERS)
                sleep_ms(1);
        sleep_ms(10);
        if (write(sync_pipe[1], "", 1) != 1)
                _exit(1);
        for (;;)
                (void) pause();
}

Test(sampler_live, lazily_only_the_threads_that_run_are_read_and_keep_fds) {
        _cleanup_sampler_ Sampler *full = NULL;
        const SamplerSystem *sys;
        const PolicySnapshot *snap;
        unsigned before, lazy_fds, full_fds;
        char c;

        live_begin();
        cr_assert_eq(pipe2(sync_pipe, O_CLOEXEC), 0);
        (void) live_spawn(sleepers_and_a_spinner);
        cr_assert_eq(read(sync_pipe[0], &c, 1), 1, "the threads are up");
        before = count_fds();
        /* the default: lazy. A first sample reads every thread, then only what runs. */
        cr_assert_gt(live.t.sample_refresh_usec, 0);
        for (unsigned i = 0; i < 3; i++) {
                sleep_ms(100);
                snap = live_sample(live.s, &sys);
        }
        cr_assert_eq(snap->n_tasks, 1);
        cr_expect_eq(sys->n_threads, LIVE_SLEEPERS + 2);
        cr_expect_leq(sys->n_threads_read, 2, "the spinner (and the main thread): %u",
                      sys->n_threads_read);
        cr_expect_gt(snap->tasks[0].util_permyriad, 0, "the spinner's time is read each tick");
        lazy_fds = count_fds() - before;
        cr_expect_leq(lazy_fds, 4, "fds kept for what is read each tick: %u", lazy_fds);
        /* the full sampler reads and keeps every thread's two files */
        live.t.sample_refresh_usec = 0;
        cr_assert_eq(sampler_new(live.proc_fd, &live.layout, live.topo, getpid(), &full), 0);
        sampler_set_live(full, true);
        for (unsigned i = 0; i < 2; i++) {
                sleep_ms(100);
                snap = live_sample(full, &sys);
        }
        cr_expect_eq(sys->n_threads_read, LIVE_SLEEPERS + 2);
        full_fds = count_fds() - before - lazy_fds;
        cr_expect_eq(full_fds, 2 * (LIVE_SLEEPERS + 2), "%u", full_fds);
        cr_log_info("fds kept: lazy %u, full %u", lazy_fds, full_fds);
}

Test(sampler_live, exited_child_is_dropped_and_its_fds_closed) {
        const PolicySnapshot *snap;
        unsigned before;
        pid_t a;

        live_begin();
        before = count_fds();
        a = live_spawn(spin);
        (void) live_sample(live.s, NULL);
        snap = live_sample(live.s, NULL);
        cr_assert_eq(snap->n_tasks, 1);
        cr_expect_gt(count_fds(), before, "a sampled task keeps its files open");
        cr_assert_eq(kill(a, SIGKILL), 0);
        cr_assert_eq(waitpid(a, NULL, 0), a);
        live.n_kids = 0;
        snap = live_sample(live.s, NULL);
        cr_expect_eq(snap->n_tasks, 0);
        cr_expect_eq(count_fds(), before, "its fds were closed");
}

Test(sampler_live, child_narrowed_to_one_cpu_is_foreign_unless_overridden) {
        _cleanup_free_ char *allowed = NULL;
        const PolicySnapshot *snap;
        char c;

        live_begin();
        if (topology_n_cpus(live.topo) < 2 || cpumask_count(topology_usable_cpus(live.topo)) < 2)
                live_skip("needs two usable CPUs");
        cr_assert_eq(pipe2(sync_pipe, O_CLOEXEC), 0);
        (void) live_spawn(spin_on_cpu0);
        cr_assert_eq(read(sync_pipe[0], &c, 1), 1, "the child narrowed itself");
        snap = live_sample(live.s, NULL);
        cr_assert_eq(snap->n_tasks, 1);
        allowed = mask_str(snap->tasks[0].allowed);
        cr_expect_str_eq(allowed, "0");
        cr_expect(snap->tasks[0].foreign);
        cr_expect_not(snap->tasks[0].ours);
        live.t.override_foreign_affinity = true;
        snap = live_sample(live.s, NULL);
        cr_expect(snap->tasks[0].foreign, "the fact does not change with the config");
}

/* Both ways of reading a mask, side by side: sched_getaffinity() (live) and the status file. */
static void expect_same_masks(Sampler *by_call, Sampler *by_file, size_t n_tasks) {
        const PolicySnapshot *a = live_sample(by_call, NULL), *b = live_sample(by_file, NULL);

        cr_assert_eq(a->n_tasks, n_tasks);
        cr_assert_eq(b->n_tasks, n_tasks);
        for (size_t i = 0; i < n_tasks; i++) {
                const PolicyTask *t = &a->tasks[i];
                _cleanup_free_ char *x = mask_str(t->allowed),
                                    *y = mask_str(get_task(b, t->pid)->allowed);

                cr_expect_str_eq(x, y, "pid %d: %s by the call, %s in its status", (int) t->pid, x,
                                 y);
                /* and no stray bit past the capacity, which the format would not show */
                cr_expect(cpumask_equal(t->allowed, get_task(b, t->pid)->allowed), "pid %d",
                          (int) t->pid);
        }
}

Test(sampler_live, affinity_by_the_call_is_the_status_files_also_after_a_change) {
        _cleanup_sampler_ Sampler *by_file = NULL;
        const PolicySnapshot *snap;
        _cleanup_free_ char *allowed = NULL;
        cpu_set_t set;
        pid_t a;
        char c;

        live_begin();
        if (cpumask_count(topology_usable_cpus(live.topo)) < 2 ||
            !cpumask_isset(topology_usable_cpus(live.topo), 1))
                live_skip("needs usable CPUs 0 and 1");
        cr_assert_eq(pipe2(sync_pipe, O_CLOEXEC), 0);
        (void) live_spawn(spin_on_cpu0);
        cr_assert_eq(read(sync_pipe[0], &c, 1), 1, "the child narrowed itself");
        a = live_spawn(spin);
        cr_assert_eq(sampler_new(live.proc_fd, &live.layout, live.topo, getpid(), &by_file), 0);
        expect_same_masks(live.s, by_file, 2);
        /* The live path rewrites the mask it keeps: a change must show in the next sample. */
        CPU_ZERO(&set);
        CPU_SET(1, &set);
        cr_assert_eq(sched_setaffinity(a, sizeof set, &set), 0);
        expect_same_masks(live.s, by_file, 2);
        snap = live_sample(live.s, NULL);
        allowed = mask_str(get_task(snap, a)->allowed);
        cr_expect_str_eq(allowed, "1");
}

Test(sampler_live, cpus_beyond_the_topology_are_dropped_by_both_ways) {
        _cleanup_topology_ Topology *one = NULL;
        _cleanup_sampler_ Sampler *by_call = NULL, *by_file = NULL;
        const PolicySnapshot *snap;
        cpu_set_t set;
        pid_t a;

        live_begin();
        a = live_spawn(spin);
        cr_assert_eq(sched_getaffinity(a, sizeof set, &set), 0);
        if (!CPU_ISSET(0, &set) || CPU_COUNT(&set) < 2)
                live_skip("needs a child allowed CPU 0 and another");
        /* A model of one CPU, as after hot-adding CPUs the model does not have yet */
        cr_assert_eq(topology_new_from_synthetic("pack:1 numa:1 core:1 pu:1", NULL, 0, &one), 0);
        cr_assert_eq(topology_cpu_capacity(one), 1);
        cr_assert_eq(sampler_new(live.proc_fd, &live.layout, one, getpid(), &by_call), 0);
        sampler_set_live(by_call, true);
        cr_assert_eq(sampler_new(live.proc_fd, &live.layout, one, getpid(), &by_file), 0);
        expect_same_masks(by_call, by_file, 1);
        snap = live_sample(by_call, NULL);
        cr_expect_eq(cpumask_capacity(snap->tasks[0].allowed), 1);
        cr_expect_eq(cpumask_count(snap->tasks[0].allowed), 1, "CPU 0 alone");
        cr_expect(cpumask_isset(snap->tasks[0].allowed, 0));
}

Test(sampler_live, the_daemon_itself_is_never_sampled) {
        _cleanup_sampler_ Sampler *s = NULL;
        const PolicySnapshot *snap;
        pid_t a, b;

        live_begin();
        a = live_spawn(spin);
        b = live_spawn(spin);
        /* as if b were the daemon, in a group its own glob manages */
        cr_assert_eq(sampler_new(live.proc_fd, &live.layout, live.topo, b, &s), 0);
        snap = live_sample(s, NULL);
        cr_assert_eq(snap->n_tasks, 1);
        cr_expect_eq(snap->tasks[0].pid, a);
}

Test(sampler_live, a_mask_the_actuator_set_is_ours_not_foreign) {
        _cleanup_actuator_ Actuator *a = NULL;
        _cleanup_cpumask_ CpuMask *cpu1 = NULL;
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        PlanMove move;
        Plan plan;
        cpu_set_t set;
        uint64_t now;
        pid_t pid;

        live_begin();
        if (cpumask_count(topology_usable_cpus(live.topo)) < 2 ||
            !cpumask_isset(topology_usable_cpus(live.topo), 1))
                live_skip("needs usable CPUs 0 and 1");
        pid = live_spawn(spin);
        cr_assert_eq(actuator_new(live.proc_fd, &live.layout, NULL, &a), 0);
        snap = live_sample(live.s, NULL);
        cr_assert_eq(snap->n_tasks, 1);
        cpu1 = cpumask_new(topology_cpu_capacity(live.topo));
        cr_assert_not_null(cpu1);
        cr_assert_eq(cpumask_set(cpu1, 1), 0);
        move = (PlanMove){ .pid = pid,
                           .starttime_ticks = snap->tasks[0].starttime_ticks,
                           .from_node = topology_cpu_node(live.topo, 1),
                           .to_node = topology_cpu_node(live.topo, 1),
                           .mask = cpu1 };
        plan = (Plan){ .moves = &move, .n_moves = 1 };
        now = now_usec();
        cr_assert_eq(actuator_apply(a, &plan, snap, /* dry_run= */ false, 0, now), 0);
        cr_assert_eq(sampler_sample(live.s, &live.t, actuator_record(a), now_usec(), &snap, &sys),
                     0);
        cr_assert_eq(snap->n_tasks, 1);
        cr_expect(snap->tasks[0].ours, "the actuator set this mask");
        cr_expect_not(snap->tasks[0].foreign, "ours is never foreign");
        cr_expect_eq(snap->tasks[0].last_move_usec, now);
        /* Someone else narrows it further: no longer ours, and foreign */
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        cr_assert_eq(sched_setaffinity(pid, sizeof set, &set), 0);
        cr_assert_eq(sampler_sample(live.s, &live.t, actuator_record(a), now_usec(), &snap, &sys),
                     0);
        cr_expect_not(snap->tasks[0].ours);
        cr_expect(snap->tasks[0].foreign);
        cr_expect_eq(snap->tasks[0].last_move_usec, now, "still the daemon's last move");
}
