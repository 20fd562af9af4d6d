/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen schedbench: the rows (residency itself is test-residency's), then the real binary at a
 * tiny size, with and without hackbench beside it: the seed's tables, residency summing to 100%,
 * valid nodes, the JSON the same as the table, a task on --cpus reported on that CPU's node,
 * SIGINT in the middle, bad values refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"
#include "residency.h"
#include "runbin.h"
#include "schedbench.h"
#include "testutil.h"
#include "topology.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- rows */

static char *capture_summary(void) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        cr_assert(f);
        schedbench_format_summary(f, 4, "ingoI50B10", 22.49, 37.04, 90.0, 0.86);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

Test(schedbench_format, summary_as_seed_002) {
        _cleanup_free_ char *s = capture_summary();

        cr_expect_str_eq(s, "Schedbench 4:\n"
                            "                        AvgUser    Elapsed  TotalUser   TotalSys\n"
                            "          ingoI50B10      22.49      37.04      90.00       0.86\n");
}

Test(schedbench_format, residency_rows_mark_a_mismatch) {
        static const int ids[] = { 0, 1, 3 };
        static const double same[] = { 100, 0, 0 }, moved[] = { 12.5, 0, 87.5 };
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);

        cr_assert(f);
        schedbench_format_residency_header(f, ids, 3);
        schedbench_format_residency_row(f, 1, same, 3, 0, 0, 27.9);
        schedbench_format_residency_row(f, 12, moved, 3, 0, 3, 35.25);
        schedbench_format_residency_row(f, 13, same, 3, -1, 0, 0);
        cr_assert_eq(fclose(f), 0);
        cr_expect_str_eq(buf, "Job  node00 node01 node03 | iSched MSched   | UserTime(s)\n"
                              "  1   100.0    0.0    0.0 |      0      0   |       27.90\n"
                              " 12    12.5    0.0   87.5 |      0      3 * |       35.25\n"
                              " 13   100.0    0.0    0.0 |      -      0 * |        0.00\n");
        free(buf);
}

/* ---- the real binary */

typedef struct TaskRow {
        unsigned job;
        double pct[RESIDENCY_MAX_NODES];
        int isched, msched;
        bool mark;
        double user_s;
} TaskRow;

typedef struct Parsed {
        unsigned n_nodes;
        int node_ids[RESIDENCY_MAX_NODES];
        double avg_user, elapsed, total_user, total_sys;
        TaskRow tasks[64];
        unsigned n_tasks, mismatches;
        char disturbance[128];
} Parsed;

static int node_number(const char *s) {
        return streq(s, "-") ? -1 : atoi(s);
}

/* The "Schedbench N:" block of out for label "default". */
static void parse_block(const char *out, unsigned n, Parsed *p) {
        char head[32], *line;
        const char *b;
        unsigned total;

        *p = (Parsed){ 0 };
        snprintf(head, sizeof head, "Schedbench %u:\n", n);
        b = strstr(out, head);
        cr_assert(b, "no %s in %s", head, out);
        b = strchr(b + strlen(head), '\n') + 1; /* the header */
        cr_assert_eq(sscanf(b, " default %lf %lf %lf %lf", &p->avg_user, &p->elapsed,
                            &p->total_user, &p->total_sys),
                     4, "row: %s", b);
        b = strchr(b, '\n') + 1;
        cr_assert(strncmp(b, "Job ", 4) == 0, "residency header: %s", b);
        for (const char *q = b; (q = strstr(q, " node")) && q < strchr(b, '\n'); q += 5)
                p->node_ids[p->n_nodes++] = atoi(q + 5);
        b = strchr(b, '\n') + 1;
        while (p->n_tasks < ELEMENTSOF(p->tasks) &&
               sscanf(b, "%u", &p->tasks[p->n_tasks].job) == 1) {
                TaskRow *t = &p->tasks[p->n_tasks];
                const char *eol = strchr(b, '\n');
                char is[16], ms[16];
                const char *bar;

                cr_assert(eol);
                line = strndup(b, (size_t) (eol - b));
                cr_assert(line);
                b = line + strspn(line, " ");
                b += strcspn(b, " ");
                for (unsigned k = 0; k < p->n_nodes; k++)
                        t->pct[k] = strtod(b, (char **) &b);
                bar = strchr(b, '|');
                cr_assert(bar, "%s", line);
                cr_assert_eq(sscanf(bar, "| %15s %15s", is, ms), 2, "%s", line);
                t->isched = node_number(is);
                t->msched = node_number(ms);
                t->mark = strchr(bar, '*') != NULL;
                cr_assert_eq(sscanf(strrchr(line, '|'), "| %lf", &t->user_s), 1, "%s", line);
                free(line);
                b = eol + 1;
                p->n_tasks++;
        }
        cr_assert_eq(sscanf(b, "Mismatches: %u of %u;", &p->mismatches, &total), 2, "%s", b);
        cr_expect_eq(total, n);
        snprintf(p->disturbance, sizeof p->disturbance, "%.*s", (int) strcspn(b, "\n"), b);
}

/* The number after "key": from p, or NAN; *ret_end past it. */
static double json_after(const char *p, const char *key, const char **ret_end) {
        _cleanup_free_ char *k = NULL;
        const char *q;
        char *end;
        double v;

        cr_assert_gt(asprintf(&k, "\"%s\": ", key), 0);
        q = p ? strstr(p, k) : NULL;
        if (!q)
                return NAN;
        v = strtod(q + strlen(k), &end);
        if (ret_end)
                *ret_end = end;
        return v;
}

/* Each block's figures against the JSON's row for it; each task's against its entry. */
static void check_json(const char *json, const Parsed *p, unsigned n) {
        const char *row = strstr(json, "\"rows\""), *t;
        char key[32];

        cr_assert(row, "%s", json);
        for (;;) {
                row = strstr(row, "\"tasks\": ");
                cr_assert(row, "no row for %u tasks", n);
                if (json_after(row, "tasks", NULL) == n)
                        break;
                row++;
        }
        cr_expect(fabs(json_after(row, "avg_user_s", NULL) - p->avg_user) <= 0.005);
        cr_expect(fabs(json_after(row, "elapsed_s", NULL) - p->elapsed) <= 0.005);
        cr_expect(fabs(json_after(row, "total_user_s", NULL) - p->total_user) <= 0.005);
        cr_expect(fabs(json_after(row, "total_sys_s", NULL) - p->total_sys) <= 0.005);
        cr_expect_eq(json_after(row, "mismatches", NULL), p->mismatches);
        t = strstr(row, "\"per_task\"");
        for (unsigned i = 0; i < p->n_tasks; i++) {
                const TaskRow *tr = &p->tasks[i];

                t = strstr(t, "\"job\": ");
                cr_assert(t, "task %u missing", i + 1);
                cr_expect_eq(json_after(t, "job", NULL), tr->job);
                cr_expect(fabs(json_after(t, "user_s", NULL) - tr->user_s) <= 0.005, "task %u",
                          tr->job);
                cr_expect_eq(json_after(t, "initial_node", NULL), tr->isched, "task %u", tr->job);
                cr_expect_eq(json_after(t, "most_node", NULL), tr->msched, "task %u", tr->job);
                for (unsigned k = 0; k < p->n_nodes; k++) {
                        snprintf(key, sizeof key, "%d", p->node_ids[k]);
                        cr_expect(fabs(json_after(strstr(t, "node_pct"), key, NULL) - tr->pct[k]) <=
                                          0.05,
                                  "task %u node %s", tr->job, key);
                }
                t++;
        }
}

/* A run's figures make sense: every task did user work, residency sums to 100%, nodes exist. */
static void check_plausible(const Parsed *p, unsigned n) {
        _cleanup_topology_ Topology *topo = NULL;
        unsigned mism = 0;

        cr_assert_eq(topology_new_from_system(&topo), 0);
        cr_expect_eq(p->n_nodes, topology_n_nodes(topo));
        cr_assert_eq(p->n_tasks, n);
        cr_expect_gt(p->elapsed, 0);
        cr_expect_gt(p->total_user, 0);
        cr_expect_geq(p->total_sys, 0);
        cr_expect(fabs(p->avg_user * n - p->total_user) <= 0.01 * n, "avg %f x %u != %f",
                  p->avg_user, n, p->total_user);
        for (unsigned i = 0; i < n; i++) {
                const TaskRow *t = &p->tasks[i];
                double sum = 0;

                cr_expect_eq(t->job, i + 1);
                for (unsigned k = 0; k < p->n_nodes; k++) {
                        cr_expect(t->pct[k] >= 0 && t->pct[k] <= 100, "task %u: %f", t->job,
                                  t->pct[k]);
                        sum += t->pct[k];
                }
                cr_expect(fabs(sum - 100) <= 0.2 * p->n_nodes, "task %u: residency sums to %f",
                          t->job, sum);
                cr_expect_geq(topology_node_index(topo, (unsigned) t->isched), 0, "task %u: %d",
                              t->job, t->isched);
                cr_expect_geq(topology_node_index(topo, (unsigned) t->msched), 0, "task %u: %d",
                              t->job, t->msched);
                cr_expect_eq(t->mark, t->isched != t->msched, "task %u", t->job);
                mism += t->isched != t->msched;
                cr_expect_gt(t->user_s, 0, "task %u", t->job);
        }
        cr_expect_eq(p->mismatches, mism);
}

/* Enough work to be sampled a few dozen times (~0.3 s of CPU a task), not more. */
#define SIZE "300000"
#define SWEEPS "400"
#ifdef __SANITIZE_ADDRESS__
#define SWEEPS_BESIDE "200"
#else
#define SWEEPS_BESIDE "600"
#endif

Test(schedbench_run, two_tasks_without_disturbance_table_matches_json, .timeout = 60) {
        _cleanup_free_ char *jdir = make_tmpdir(), *jarg = NULL, *json = NULL;
        Dirs d = test_dirs();
        Parsed p;
        Run r;

        skip_unless_root();
        cr_assert_gt(asprintf(&jarg, "--json=%s/s.json", jdir), 0);
        r = bin_run((const char *const[]){ LOADGEN, "schedbench", "--tasks", "1,2", "--size", SIZE,
                                           "--sweeps", SWEEPS, "--no-disturb", jarg, NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_log_info("%s", r.out);
        json = read_all(strchr(jarg, '=') + 1);
        parse_block(r.out, 1, &p);
        check_plausible(&p, 1);
        check_json(json, &p, 1);
        parse_block(r.out, 2, &p);
        check_plausible(&p, 2);
        check_json(json, &p, 2);
        cr_expect(strstr(p.disturbance, "none"), "%s", p.disturbance);
        cr_expect(strstr(r.out, "Schedbench 1:") < strstr(r.out, "Schedbench 2:"), "order");
        cr_expect_gt(json_after(strstr(json, "per_task"), "samples", NULL), 3,
                     "a task sampled too few times to say where it ran");
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
        rm_rf(jdir);
}

Test(schedbench_run, hackbench_beside_the_tasks, .timeout = 90) {
        _cleanup_free_ char *json = NULL;
        Dirs d = test_dirs();
        Parsed p;
        Run r;

        skip_unless_root();
        /* 4 tasks of ~1.5 s of CPU on 2 CPUs: hackbench starts 0.3 s in, well before their end
         * (under ASan a sweep is 4x slower: 200 sweeps give the same, and the test 10 s, not 15) */
        r = bin_run((const char *const[]){ LOADGEN, "schedbench", "--tasks", "4", "--size", SIZE,
                                           "--sweeps", SWEEPS_BESIDE, "--disturb-after", "0.3",
                                           NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_log_info("%s", r.out);
        parse_block(r.out, 4, &p);
        check_plausible(&p, 4);
        /* until hackbench_once() exists it says so; then it gives a time */
        cr_expect(strstr(p.disturbance, "disturbance: unavailable") ||
                          strstr(p.disturbance, "disturbance: hackbench 20, Time: "),
                  "%s", p.disturbance);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(schedbench_run, a_task_confined_to_one_cpu_is_reported_on_its_node, .timeout = 60) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_free_ char *cpu_key = NULL;
        long last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
        char cpus[32];
        Dirs d = test_dirs();
        Run r;
        const char *t;
        int node;

        skip_unless_root();
        cr_assert_eq(topology_new_from_system(&topo), 0);
        node = topology_cpu_node(topo, (unsigned) last);
        cr_assert_geq(node, 0);
        snprintf(cpus, sizeof cpus, "%ld", last);
        /* JSON on stdout: the per-CPU ticks say on which CPU the time was seen */
        r = bin_run((const char *const[]){ LOADGEN, "schedbench", "--tasks", "2", "--size", SIZE,
                                           "--sweeps", SWEEPS, "--no-disturb", "--cpus", cpus,
                                           "--json", NULL });
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        cr_assert_gt(asprintf(&cpu_key, "%ld", last), 0);
        t = strstr(r.out, "\"per_task\"");
        cr_assert(t, "%s", r.out);
        for (int i = 0; i < 2; i++) {
                const char *obj, *close;
                unsigned keys = 0;
                double ticks;

                t = strstr(t, "\"job\": ");
                cr_assert(t);
                cr_expect_eq(json_after(t, "initial_node", NULL), node);
                cr_expect_eq(json_after(t, "most_node", NULL), node);
                cr_expect_eq(json_after(t, "initial_cpu", NULL), last);
                ticks = json_after(t, "ticks", NULL);
                cr_expect_gt(ticks, 0);
                /* every tick seen on that CPU: one entry, the CPU's, holding them all */
                obj = strstr(t, "\"cpu_ticks\"");
                cr_assert(obj);
                obj = strchr(obj, '{');
                close = strchr(obj, '}');
                for (const char *q = obj; q < close; q++)
                        keys += *q == ':';
                cr_expect_eq(keys, 1, "%.*s", (int) (close - obj + 1), obj);
                cr_expect_eq(json_after(obj, cpu_key, NULL), ticks, "%.*s", (int) (close - obj + 1),
                             obj);
                t = close;
        }
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(schedbench_run, sigint_mid_run_leaves_nothing, .timeout = 60) {
        Dirs d = test_dirs();
        Run r = { 0 };

        skip_unless_root();
        bin_start(&r,
                  (const char *const[]){ LOADGEN, "schedbench", "--tasks", "4", "--size", "1000000",
                                         "--sweeps", "100000", "--disturb-after", "0.5", NULL });
        usleep(1500000); /* the tasks sweeping, hackbench beside them */
        cr_assert_eq(kill(r.pid, SIGINT), 0);
        bin_finish(&r);
        cr_expect(exited_with(r.status, 128 + SIGINT), "status %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, "Interrupted"), "stderr: %s", r.err);
        cr_expect_null(strstr(r.out, "Schedbench 4:"), "%s", r.out);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}

Test(schedbench_run, too_many_tasks_and_bad_values_exit_2) {
        static const char *const bad[][5] = {
                { "--tasks", "5000", "--sweeps", "1", "--tasks" },
                { "--tasks", "64", "--size", "100000000", "MiB" },
                { "--tasks", "0", "--sweeps", "1", "--tasks" },
                { "--tasks", "2,x", "--sweeps", "1", "--tasks" },
                { "--tasks", "2", "--sweeps", "0", "--sweeps" },
                { "--tasks", "2", "--size", "0", "--size" },
                { "--tasks", "2", "--disturb-after", "-1", "--disturb-after" },
                { "--tasks", "2", "--cpus", "999", "--cpus" },
        };
        Dirs d = test_dirs();

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = bin_run((const char *const[]){ LOADGEN, "schedbench", bad[i][0], bad[i][1],
                                                       bad[i][2], bad[i][3], NULL });

                cr_expect(exited_with(r.status, 2), "%s %s %s %s: status %d", bad[i][0], bad[i][1],
                          bad[i][2], bad[i][3], r.status);
                cr_expect(strstr(r.err, bad[i][4]), "%s %s: %s", bad[i][2], bad[i][3], r.err);
                cr_expect_str_empty(r.out);
                expect_clean(&r, &d);
                bin_run_done(&r);
        }
        test_dirs_done(&d);
}

Test(schedbench_run, help_names_every_option) {
        static const char *const opts[] = { "--tasks",      "--sweeps", "--size", "--disturb-after",
                                            "--no-disturb", "--label",  "--json", "--cpus",
                                            "--no-sandbox", "iSched",   "MSched" };
        Run r = bin_run((const char *const[]){ LOADGEN, "schedbench", "--help", NULL });

        cr_expect(exited_with(r.status, 0));
        for (size_t i = 0; i < ELEMENTSOF(opts); i++)
                cr_expect(strstr(r.out, opts[i]), "no %s in: %s", opts[i], r.out);
        bin_run_done(&r);
}

/* The randupdt task of the run of loadgen pid: the process of its job group whose parent is
 * not loadgen itself (that one is the sampler). 0 until there is one. */
static pid_t find_task(pid_t loadgen) {
        _cleanup_free_ char *procs = NULL, *path = NULL;
        char *save = NULL;

        cr_assert_gt(asprintf(&path,
                              "/sys/fs/cgroup/cpu/cgbalance.slice/loadgen-%d/job/cgroup.procs",
                              (int) loadgen),
                     0);
        procs = read_all(path);
        for (char *w = strtok_r(procs, "\n", &save); w; w = strtok_r(NULL, "\n", &save)) {
                _cleanup_free_ char *spath = NULL, *stat = NULL;
                int ppid = 0;
                const char *p;

                cr_assert_gt(asprintf(&spath, "/proc/%s/stat", w), 0);
                stat = read_all(spath);
                p = strrchr(stat, ')');
                if (p && sscanf(p, ") %*c %d", &ppid) == 1 && ppid != loadgen && ppid > 0)
                        return (pid_t) atoi(w);
        }
        return 0;
}

static uint64_t utime_of(pid_t pid) {
        _cleanup_free_ char *path = NULL, *stat = NULL;
        uint64_t u = 0, s;
        int cpu;

        cr_assert_gt(asprintf(&path, "/proc/%d/stat", (int) pid), 0);
        stat = read_all(path);
        (void) residency_parse_stat(stat, &u, &s, &cpu);
        return u;
}

static void pin(pid_t pid, unsigned cpu) {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        cr_assert_eq(sched_setaffinity(pid, sizeof set, &set), 0, "pin %d to CPU %u: %m", (int) pid,
                     cpu);
}

/*
 * What issue 7 looks at, on this machine: a synthetic topology (HWLOC_SYNTHETIC) puts CPU 0 and
 * CPU 1 on nodes 0 and 1; the test moves the task with sched_setaffinity as cgbalanced does,
 * CPU 0 first, then CPU 1 for longer. The table must show time on both nodes, node 1 as MSched.
 */
Test(schedbench_run, a_task_moved_between_nodes_shows_both, .timeout = 90) {
        _cleanup_free_ char *ticks0 = NULL, *ticks1 = NULL;
        uint64_t t0 = now_usec(), u0;
        Dirs d = test_dirs();
        Run r = { 0 };
        const char *t;
        pid_t task = 0;
        double n0, n1;

        skip_unless_root();
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                cr_skip_test("needs 2 CPUs");
        cr_assert_eq(setenv("HWLOC_SYNTHETIC", "node:2 pu:1", 1), 0);
        bin_start(&r, (const char *const[]){ LOADGEN, "schedbench", "--tasks", "1", "--size", SIZE,
                                             "--sweeps", "3000", "--no-disturb", "--json", NULL });
        (void) unsetenv("HWLOC_SYNTHETIC");
        while (!task && now_usec() - t0 < 30 * 1000000u) {
                usleep(20000);
                task = find_task(r.pid);
        }
        cr_assert_gt(task, 0, "no task found");
        pin(task, 0);
        /* 20 ticks of user time on CPU 0, however loaded the machine is */
        u0 = utime_of(task);
        while (utime_of(task) < u0 + 20 && now_usec() - t0 < 60 * 1000000u)
                usleep(10000);
        pin(task, 1);
        bin_finish(&r);
        cr_assert(exited_with(r.status, 0), "status %d, stderr: %s", r.status, r.err);
        t = strstr(r.out, "\"per_task\"");
        cr_assert(t, "%s", r.out);
        t = strstr(t, "\"node_ticks\"");
        cr_assert(t);
        n0 = json_after(t, "0", NULL);
        n1 = json_after(t, "1", NULL);
        cr_log_info("node ticks: %.0f on node 0, %.0f on node 1", n0, n1);
        cr_expect_geq(n0, 10, "time on CPU 0 not seen on node 0: %.0f", n0);
        cr_expect_gt(n1, n0, "node 1 should hold most: %.0f vs %.0f", n1, n0);
        cr_expect_eq(json_after(strstr(r.out, "\"per_task\""), "most_node", NULL), 1);
        t = strstr(t, "\"cpu_ticks\"");
        cr_expect_geq(json_after(t, "0", NULL), 10);
        cr_expect_gt(json_after(t, "1", NULL), 0);
        expect_clean(&r, &d);
        bin_run_done(&r);
        test_dirs_done(&d);
}
