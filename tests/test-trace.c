/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Recordings (lib/trace.c): the topology and configuration as text and back, a stream of
 * generated ticks written and read back equal field by field (tasks born, gone and reordered,
 * groups changing, plans of every kind), rotation under the size cap, and the errors a reader
 * gives for files it must not misread.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "testutil.h"
#include "topology.h"
#include "trace.h"
#include "tunables.h"

#define MAX_TASKS 48
#define MAX_GROUPS 5

static Topology *synthetic(const char *desc, const char *distances) {
        _cleanup_free_ unsigned *d = NULL;
        unsigned n = 0;
        Topology *t = NULL;

        if (distances)
                cr_assert_eq(topology_parse_distances(distances, &d, &n, NULL), 0);
        cr_assert_eq(topology_new_from_synthetic(desc, d, n, &t), 0, "%s", desc);
        return t;
}

static char *to_text(const Topology *t) {
        char *s = NULL;

        cr_assert_eq(topology_to_text(t, &s), 0);
        return s;
}

Test(topology_text, round_trips_every_accessor) {
        static const struct {
                const char *desc, *distances;
        } machines[] = {
                { "pack:1 numa:1 core:2 pu:1", NULL },
                { "pack:4 numa:1 core:4 pu:1", "10,20,20,20;20,10,20,20;20,20,10,20;20,20,20,10" },
                { "pack:2 numa:2 core:4 pu:2", "10,11,32,32;11,10,32,32;32,32,10,11;32,32,11,10" },
        };

        for (size_t i = 0; i < ELEMENTSOF(machines); i++) {
                _cleanup_topology_ Topology *a = synthetic(machines[i].desc, machines[i].distances);
                _cleanup_topology_ Topology *b = NULL;
                _cleanup_free_ char *ta = to_text(a), *tb = NULL;
                char why[200] = "";
                unsigned n;

                cr_assert_eq(topology_new_from_text(ta, &b, why, sizeof why), 0, "%s: %s",
                             machines[i].desc, why);
                tb = to_text(b);
                cr_expect_str_eq(tb, ta);
                cr_expect_eq(topology_cpu_capacity(b), topology_cpu_capacity(a));
                cr_expect_eq(topology_n_nodes(b), topology_n_nodes(a));
                cr_expect_eq(topology_n_cores(b), topology_n_cores(a));
                cr_expect_eq(topology_n_packages(b), topology_n_packages(a));
                cr_expect_eq(topology_max_cpus_per_core(b), topology_max_cpus_per_core(a));
                cr_expect(cpumask_equal(topology_usable_cpus(b), topology_usable_cpus(a)));
                n = topology_n_nodes(a);
                cr_expect_eq(memcmp(topology_distances(a), topology_distances(b),
                                    (size_t) n * n * sizeof(unsigned)),
                             0);
                for (unsigned cpu = 0; cpu < topology_cpu_capacity(a); cpu++) {
                        cr_expect_eq(topology_cpu_node(b, cpu), topology_cpu_node(a, cpu));
                        cr_expect_eq(topology_cpu_core(b, cpu), topology_cpu_core(a, cpu));
                        cr_expect_eq(topology_cpu_package(b, cpu), topology_cpu_package(a, cpu));
                }
                for (unsigned k = 0; k < n; k++)
                        cr_expect_eq(topology_node_capacity(b, (unsigned) topology_node_id(b, k)),
                                     topology_node_capacity(a, (unsigned) topology_node_id(a, k)));
        }
}

Test(topology_text, refuses_what_is_not_a_machine_naming_the_line) {
        static const char head[] = "cgbalance-topology 1\nsource x\ncapacity 4\npossible 0-3\n"
                                   "online 0-3\nallowed 0-3\nisolated \nnohz_full \npackages 1\n"
                                   "distance_source os\n";
        static const struct {
                const char *tail, *why;
        } cases[] = {
                { "node 0 0-3\ndistances 10\ncore 0\n", NULL },
                { "node 0 0-1\nnode 1 1-3\ndistances 10,20;20,10\n",
                  "line 12: node: CPU 1 is in two" },
                { "node 0 0-4\ndistances 10\n", "line 11: node: bad CPU list at \"0-4\"" },
                { "node 1 0-1\nnode 0 2-3\ndistances 10,20;20,10\n",
                  "line 12: node 0 after node 1" },
                { "node 0 0-3\ndistances 10,20;20,10\n",
                  "line 12: distances: not a valid 1x1 matrix" },
                { "node 0 0-3\n", "line 11: ends before \"distances\"" },
                { "node 0 0-3\ndistances 10\nwhat 1\n", "line 13: unknown key \"what\"" },
                { "node 0 0-3\ndistances 10\npackage 1 0\n",
                  "line 13: package: \"1\" is not a number up to 0" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_topology_ Topology *t = NULL;
                _cleanup_free_ char *text = NULL;
                char why[200] = "";
                int r;

                cr_assert(asprintf(&text, "%s%s", head, cases[i].tail) > 0);
                r = topology_new_from_text(text, &t, why, sizeof why);
                if (!cases[i].why) {
                        cr_expect_eq(r, 0, "%s", why);
                        continue;
                }
                cr_expect_eq(r, -EINVAL, "case %zu", i);
                cr_expect_str_eq(why, cases[i].why);
        }
        {
                _cleanup_topology_ Topology *t = NULL;
                char why[200] = "";

                cr_expect_eq(topology_new_from_text("cgbalance-topology 2\n", &t, why, sizeof why),
                             -EINVAL);
                cr_expect_str_eq(why, "line 1: format \"2\", this reads 1");
        }
}

/* What write (config_write_values() or config_print()) makes of t. */
static char *written(int (*write)(const ConfigSchema *, const void *, FILE *), const Tunables *t) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        cr_assert(f);
        cr_assert_eq(write(&tunables_schema, t, f), 0);
        fclose(f);
        return buf;
}

Test(config_text, values_load_back_to_the_same_configuration) {
        static const char conf[] = "[daemon]\ninterval = 250ms\n[manage]\ncgroups = a.slice b/*\n"
                                   "exclude_comms =\n[balance]\n"
                                   "node_imbalance_pct = 140\nnode_min_imbalance = 2\n"
                                   "[weights]\nprotected_cgroups = a.slice/job\n"
                                   "[escalation]\nescalate_steps = quota\n";
        Tunables a, b;
        ConfigError e = { 0 };
        _cleanup_free_ char *ini = NULL, *pa = NULL, *pb = NULL;

        cr_assert_eq(config_load_string(&tunables_schema, "a", conf, sizeof conf - 1, &a, &e), 0,
                     "%s", e.message);
        ini = written(config_write_values, &a);
        cr_assert_eq(config_load_string(&tunables_schema, "b", ini, strlen(ini), &b, &e), 0,
                     "%s\n%s", e.message, ini);
        pa = written(config_print, &a);
        pb = written(config_print, &b);
        cr_expect_str_eq(pb, pa);
        tunables_free(&a);
        tunables_free(&b);
}

/* ---- a generated stream of ticks */

typedef struct Gen {
        uint64_t rng;
        const Topology *topo;
        unsigned n_cpus;
        CpuMask *node_masks[4];
        unsigned n_nodes;
        uint64_t now;
        PolicyCpu cpus[64];
        PolicyTask tasks[MAX_TASKS];
        size_t n_tasks;
        pid_t next_pid;
        PolicyCgroup groups[MAX_GROUPS];
        size_t n_groups;
        char paths[MAX_GROUPS][32];
        PolicySnapshot snap;
        Plan plan;
        PlanMove moves[2];
        PlanWeight weights[1];
        PlanEscalation escalations[1];
} Gen;

static uint32_t rnd(Gen *g, uint32_t n) {
        g->rng = g->rng * 6364136223846793005ull + 1442695040888963407ull;
        return (uint32_t) ((g->rng >> 33) % n);
}

static void gen_init(Gen *g, const Topology *topo, uint64_t seed) {
        *g = (Gen){ .rng = seed,
                    .topo = topo,
                    .n_cpus = topology_cpu_capacity(topo),
                    .now = 1000000,
                    .next_pid = 100 };
        g->n_nodes = topology_n_nodes(topo);
        for (unsigned i = 0; i < g->n_nodes; i++)
                g->node_masks[i] = cpumask_copy(
                        topology_node_cpus(topo, (unsigned) topology_node_id(topo, i)));
        for (size_t i = 0; i < MAX_GROUPS; i++)
                snprintf(g->paths[i], sizeof g->paths[i], "cgbalance.slice/g%zu", i);
        g->n_groups = 3;
}

static void gen_done(Gen *g) {
        for (unsigned i = 0; i < g->n_nodes; i++)
                cpumask_free(g->node_masks[i]);
}

static void new_task(Gen *g, PolicyTask *t) {
        *t = (PolicyTask){ .pid = g->next_pid++, .starttime_ticks = 5000 + rnd(g, 100) };
        snprintf(t->comm, sizeof t->comm, "task-%u", rnd(g, 7));
}

/* The next tick: loads move a little, tasks come, go and swap places, groups change. */
static void gen_tick(Gen *g, uint64_t tick) {
        g->now += 1000000 + rnd(g, 3000);
        for (unsigned c = 0; c < g->n_cpus; c++)
                g->cpus[c].util_permyriad = rnd(g, 4) ? 9900 + rnd(g, 100) : rnd(g, 300);
        if (tick % 7 == 3 && g->n_tasks > 4) { /* one goes */
                size_t k = rnd(g, (uint32_t) g->n_tasks);

                memmove(&g->tasks[k], &g->tasks[k + 1], (g->n_tasks - k - 1) * sizeof *g->tasks);
                g->n_tasks--;
        }
        while (g->n_tasks < MAX_TASKS - 8 || (tick % 5 == 0 && g->n_tasks < MAX_TASKS))
                new_task(g, &g->tasks[g->n_tasks++]);
        if (tick % 11 == 4) { /* two swap places in the list */
                PolicyTask tmp = g->tasks[1];

                g->tasks[1] = g->tasks[g->n_tasks - 2];
                g->tasks[g->n_tasks - 2] = tmp;
        }
        g->n_groups = tick % 13 == 6 ? 2 : tick % 17 == 8 ? 5 : 3;
        for (size_t i = 0; i < g->n_groups; i++)
                g->groups[i] = (PolicyCgroup){
                        .path = g->paths[(i + (tick % 19 == 2)) % MAX_GROUPS],
                        .protected = i == 0,
                        .has_pressure = true,
                        .pressure_permyriad = rnd(g, 3) ? 1200 : rnd(g, 10000),
                        .util_permyriad = rnd(g, 20000),
                        .weight = 100 + (uint32_t) (tick % 3) * 50,
                        .base_weight = 100,
                        .has_idle = true,
                        .idle = i == 2 && tick % 4 == 0,
                        .idle_ours = i == 2 && tick % 4 == 0,
                        .quota_permyriad = i == 1 ? 5000 : 0,
                        .quota_ours = i == 1,
                        .partition = i == 1 && tick % 3 == 0 ? g->node_masks[0] : NULL,
                        .throttled_permyriad = rnd(g, 2) ? 0 : rnd(g, 500),
                        .has_latency = i == 0,
                        .latency_usec = i == 0 ? rnd(g, 100000) : 0,
                };
        for (size_t i = 0; i < g->n_tasks; i++) {
                PolicyTask *t = &g->tasks[i];

                t->cgroup = i % 4 == 3 ? POLICY_NO_CGROUP : i % g->n_groups;
                if (rnd(g, 3) == 0 || tick < 2) {
                        t->util_permyriad = rnd(g, 3) ? 0 : 5000 + rnd(g, 5000);
                        t->demand_permyriad = t->util_permyriad + (rnd(g, 2) ? 0 : rnd(g, 8000));
                }
                if (rnd(g, 9) == 0 || tick < 2)
                        t->cpu = (int) rnd(g, g->n_cpus + 1) - 1;
                if (rnd(g, 10) == 0 || tick < 2) {
                        uint32_t m = rnd(g, g->n_nodes + 1);

                        t->allowed = m == g->n_nodes ? NULL : g->node_masks[m];
                        t->ours = t->allowed && rnd(g, 2);
                        t->foreign = !t->ours && t->allowed && rnd(g, 2);
                }
                if (rnd(g, 10) == 0)
                        t->mem_kib = rnd(g, 1u << 20), t->mem_exact = rnd(g, 2);
                if (rnd(g, 30) == 0)
                        t->last_move_usec = g->now - rnd(g, 1000);
        }
        g->snap = (PolicySnapshot){ .interval_usec = 1000000 + rnd(g, 5000),
                                    .cpus = g->cpus,
                                    .n_cpus = g->n_cpus,
                                    .tasks = g->tasks,
                                    .n_tasks = g->n_tasks,
                                    .cgroups = g->groups,
                                    .n_cgroups = g->n_groups };
        g->plan = (Plan){ .moves = g->moves, .weights = g->weights, .escalations = g->escalations };
        if (tick % 4 == 1) {
                g->plan.n_moves = 1 + tick % 2;
                for (size_t i = 0; i < g->plan.n_moves; i++)
                        g->moves[i] = (PlanMove){ .pid = g->tasks[i].pid,
                                                  .starttime_ticks = g->tasks[i].starttime_ticks,
                                                  .from_node = 0,
                                                  .to_node = 1,
                                                  .mask = g->node_masks[1] };
                snprintf(g->moves[0].reason, sizeof g->moves[0].reason, "moved at tick %lu",
                         (unsigned long) tick);
                g->plan.node_balance_ran = true;
        }
        if (tick % 6 == 2) {
                g->plan.n_weights = 1;
                g->weights[0] = (PlanWeight){ .cgroup = 0, .from = 100, .to = 150, .reason = "up" };
        }
        if (tick % 9 == 5) {
                g->plan.n_escalations = 1;
                g->escalations[0] = (PlanEscalation){ .cgroup = 1,
                                                      .for_cgroup = tick % 2 ? 0 : POLICY_NO_CGROUP,
                                                      .lever = POLICY_LEVER_PARTITION,
                                                      .from = 0,
                                                      .to = 2,
                                                      .cpus = g->node_masks[0],
                                                      .reason = "partition" };
        }
}

static void expect_snapshot(const PolicySnapshot *a, const PolicySnapshot *b, bool names,
                            uint64_t tick) {
        cr_assert_eq(a->n_cpus, b->n_cpus, "tick %lu", (unsigned long) tick);
        cr_assert_eq(a->n_tasks, b->n_tasks, "tick %lu", (unsigned long) tick);
        cr_assert_eq(a->n_cgroups, b->n_cgroups, "tick %lu", (unsigned long) tick);
        cr_expect_eq(a->interval_usec, b->interval_usec);
        for (unsigned i = 0; i < a->n_cpus; i++)
                cr_expect_eq(a->cpus[i].util_permyriad, b->cpus[i].util_permyriad);
        for (size_t i = 0; i < a->n_cgroups; i++) {
                const PolicyCgroup *x = &a->cgroups[i], *y = &b->cgroups[i];

                cr_expect_str_eq(x->path, y->path);
                cr_expect(x->protected == y->protected && x->has_pressure == y->has_pressure &&
                                  x->has_idle == y->has_idle && x->idle == y->idle &&
                                  x->idle_ours == y->idle_ours && x->quota_ours == y->quota_ours &&
                                  x->has_latency == y->has_latency,
                          "tick %lu group %zu flags", (unsigned long) tick, i);
                cr_expect(x->pressure_permyriad == y->pressure_permyriad &&
                                  x->util_permyriad == y->util_permyriad &&
                                  x->weight == y->weight && x->base_weight == y->base_weight &&
                                  x->quota_permyriad == y->quota_permyriad &&
                                  x->throttled_permyriad == y->throttled_permyriad &&
                                  x->latency_usec == y->latency_usec,
                          "tick %lu group %zu values", (unsigned long) tick, i);
                cr_expect((!x->partition && !y->partition) ||
                                  (x->partition && y->partition &&
                                   cpumask_equal(x->partition, y->partition)),
                          "tick %lu group %zu partition", (unsigned long) tick, i);
        }
        for (size_t i = 0; i < a->n_tasks; i++) {
                const PolicyTask *x = &a->tasks[i], *y = &b->tasks[i];

                cr_expect(x->pid == y->pid && x->starttime_ticks == y->starttime_ticks &&
                                  x->cgroup == y->cgroup && x->cpu == y->cpu &&
                                  x->util_permyriad == y->util_permyriad &&
                                  x->demand_permyriad == y->demand_permyriad &&
                                  x->ours == y->ours && x->foreign == y->foreign &&
                                  x->last_move_usec == y->last_move_usec &&
                                  x->mem_kib == y->mem_kib && x->mem_exact == y->mem_exact,
                          "tick %lu task %zu (pid %d)", (unsigned long) tick, i, (int) x->pid);
                cr_expect((!x->allowed && !y->allowed) || (x->allowed && y->allowed &&
                                                           cpumask_equal(x->allowed, y->allowed)),
                          "tick %lu task %zu mask", (unsigned long) tick, i);
                cr_expect_str_eq(y->comm, names ? x->comm : "");
        }
}

static const char config_text[] = "[daemon]\ninterval = 1s\n";

/* Writes ticks 1..n of a generated stream to path. */
static TraceWriter *write_stream(const char *path, const Topology *topo, uint64_t max_size,
                                 bool names, uint64_t n, uint64_t seed) {
        TraceWriter *w = NULL;
        Gen g;

        cr_assert_eq(trace_writer_open(path,
                                       &(TraceWriterOptions){ .max_size = max_size,
                                                              .names = names,
                                                              .program = "test-trace" },
                                       &w),
                     0);
        cr_assert_eq(trace_writer_topology(w, topo), 0);
        cr_assert_eq(trace_writer_config(w, config_text), 0);
        gen_init(&g, topo, seed);
        for (uint64_t t = 1; t <= n; t++) {
                gen_tick(&g, t);
                cr_assert_eq(trace_writer_tick(w, g.now,
                                               t % 10 == 0 ? TRACE_TICK_FORCE_NODE_BALANCE : 0,
                                               &g.snap, &g.plan),
                             0, "tick %lu", (unsigned long) t);
        }
        gen_done(&g);
        return w;
}

/* Reads path, comparing its ticks with the generated stream's from tick first on; returns the
 * ticks read. */
static uint64_t read_stream(const char *path, const Topology *topo, bool names, uint64_t first,
                            uint64_t seed) {
        _cleanup_trace_reader_ TraceReader *r = NULL;
        char why[256] = "";
        uint64_t ticks = 0, t = 0;
        TraceEvent e;
        Gen g;
        int k;

        cr_assert_eq(trace_reader_open(path, &r, why, sizeof why), 0, "%s", why);
        gen_init(&g, topo, seed);
        while (t + 1 < first)
                gen_tick(&g, ++t);
        while ((k = trace_reader_next(r, &e, why, sizeof why)) > 0) {
                if (e.kind == TRACE_EVENT_TOPOLOGY) {
                        _cleanup_free_ char *a = to_text(topo), *b = to_text(e.topology);

                        cr_expect_str_eq(b, a);
                        continue;
                }
                if (e.kind == TRACE_EVENT_CONFIG) {
                        cr_expect_str_eq(e.config, config_text);
                        continue;
                }
                gen_tick(&g, ++t);
                ticks++;
                cr_expect_eq(e.now_usec, g.now, "tick %lu", (unsigned long) t);
                cr_expect_eq(e.flags, t % 10 == 0 ? TRACE_TICK_FORCE_NODE_BALANCE : 0u);
                expect_snapshot(&g.snap, e.snap, names, t);
                cr_expect(plan_equal(&g.plan, e.plan), "tick %lu plan", (unsigned long) t);
        }
        cr_assert_eq(k, 0, "%s", why);
        cr_expect_str_eq(trace_reader_program(r), "test-trace");
        gen_done(&g);
        return ticks;
}

Test(trace, ticks_read_back_equal_field_by_field) {
        _cleanup_topology_ Topology *topo = synthetic("pack:2 numa:1 core:2 pu:2", "10,21;21,10");
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL;
        TraceWriter *w;

        cr_assert(asprintf(&path, "%s/rec", dir) > 0);
        for (int names = 0; names <= 1; names++) {
                w = write_stream(path, topo, 1u << 30, names, 300, 42);
                trace_writer_free(w);
                cr_expect_eq(read_stream(path, topo, names, 1, 42), 300);
        }
        rm_rf(dir);
}

Test(trace, a_steady_machine_costs_a_few_bytes_a_tick) {
        _cleanup_topology_ Topology *topo = synthetic("pack:1 numa:1 core:2 pu:1", NULL);
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL;
        _cleanup_trace_writer_ TraceWriter *w = NULL;
        PolicyTask tasks[100];
        PolicyCpu cpus[2] = { { 10000 }, { 10000 } };
        PolicySnapshot snap;
        Plan plan = { 0 };
        uint64_t before;

        cr_assert(asprintf(&path, "%s/rec", dir) > 0);
        cr_assert_eq(trace_writer_open(path, &(TraceWriterOptions){ .max_size = 1u << 30 }, &w), 0);
        cr_assert_eq(trace_writer_topology(w, topo), 0);
        cr_assert_eq(trace_writer_config(w, config_text), 0);
        for (int i = 0; i < 100; i++)
                tasks[i] = (PolicyTask){ .pid = 1000 + i,
                                         .cgroup = POLICY_NO_CGROUP,
                                         .cpu = i % 2,
                                         .allowed = topology_usable_cpus(topo) };
        snap = (PolicySnapshot){
                .interval_usec = 1000000, .cpus = cpus, .n_cpus = 2, .tasks = tasks, .n_tasks = 100
        };
        for (unsigned t = 1; t <= 2; t++)
                cr_assert_eq(trace_writer_tick(w, 1000000u * t, 0, &snap, &plan), 0);
        before = trace_writer_bytes(w);
        cr_assert_eq(trace_writer_tick(w, 3000000u, 0, &snap, &plan), 0);
        /* kind, length, flags, now (3), interval (1), CPUs (1 + 2), groups, tasks (1 + a run of
         * 2), plan (3) */
        cr_expect_leq(trace_writer_bytes(w) - before, 17, "%lu bytes",
                      (unsigned long) (trace_writer_bytes(w) - before));
        rm_rf(dir);
}

Test(trace, rotates_under_the_cap_each_file_whole) {
        _cleanup_topology_ Topology *topo = synthetic("pack:2 numa:1 core:2 pu:2", "10,21;21,10");
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *old = NULL;
        TraceWriter *w;
        struct stat st;
        uint64_t n_new, n_old;

        cr_assert(asprintf(&path, "%s/rec", dir) > 0);
        cr_assert(asprintf(&old, "%s/rec.1", dir) > 0);
        w = write_stream(path, topo, TRACE_MIN_SIZE, true, 600, 7);
        trace_writer_free(w);
        cr_assert_eq(stat(path, &st), 0);
        cr_expect_leq(st.st_size, TRACE_MIN_SIZE);
        cr_assert_eq(stat(old, &st), 0);
        cr_expect_leq(st.st_size, TRACE_MIN_SIZE);
        /* rec.1 is the file before the last rotation: it starts wherever that one did. Count the
         * ticks in rec, then check rec.1 ends where rec begins. */
        {
                _cleanup_trace_reader_ TraceReader *r = NULL;
                TraceEvent e;
                char why[256];

                cr_assert_eq(trace_reader_open(path, &r, why, sizeof why), 0);
                n_new = 0;
                while (trace_reader_next(r, &e, why, sizeof why) > 0)
                        n_new += e.kind == TRACE_EVENT_TICK;
                r = trace_reader_free(r);
                cr_assert_eq(trace_reader_open(old, &r, why, sizeof why), 0);
                n_old = 0;
                while (trace_reader_next(r, &e, why, sizeof why) > 0)
                        n_old += e.kind == TRACE_EVENT_TICK;
        }
        cr_assert_gt(n_new, 0);
        cr_assert_leq(n_new + n_old, 600);
        cr_expect_eq(read_stream(path, topo, true, 600 - n_new + 1, 7), n_new);
        cr_expect_eq(read_stream(old, topo, true, 600 - n_new - n_old + 1, 7), n_old);
        rm_rf(dir);
}

static char *file_bytes(const char *path, size_t *ret_size) {
        FILE *f = fopen(path, "re");
        char *buf;
        long n;

        cr_assert(f);
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        rewind(f);
        buf = malloc((size_t) n);
        cr_assert(buf);
        cr_assert_eq(fread(buf, 1, (size_t) n, f), (size_t) n);
        fclose(f);
        *ret_size = (size_t) n;
        return buf;
}

Test(trace, refuses_other_versions_and_reports_a_cut_last_frame) {
        _cleanup_topology_ Topology *topo = synthetic("pack:1 numa:1 core:2 pu:1", NULL);
        _cleanup_free_ char *dir = make_tmpdir(), *path = NULL, *bytes = NULL;
        TraceReader *r = NULL;
        TraceEvent e;
        char why[256] = "";
        size_t size;
        uint64_t ticks = 0;
        int k;

        cr_assert(asprintf(&path, "%s/rec", dir) > 0);
        trace_writer_free(write_stream(path, topo, 1u << 30, true, 20, 3));
        bytes = file_bytes(path, &size);

        bytes[7] = 0; /* an older format */
        cr_expect_eq(trace_reader_new_from_memory(bytes, size, &r, why, sizeof why), -EPROTO);
        cr_expect_str_eq(why, "written in recording format 0; this cgbalanced reads format 1 only");
        bytes[7] = TRACE_FORMAT_VERSION;

        cr_expect_eq(trace_reader_new_from_memory("hello world", 11, &r, why, sizeof why), -EINVAL);
        cr_expect_str_eq(why, "not a cgbalanced recording (no CGBREC header)");

        cr_assert_eq(trace_reader_new_from_memory(bytes, size - 3, &r, why, sizeof why), 0);
        while ((k = trace_reader_next(r, &e, why, sizeof why)) > 0)
                ticks += e.kind == TRACE_EVENT_TICK;
        cr_expect_eq(k, -EPIPE);
        cr_expect_eq(ticks, 19);
        cr_expect(strstr(why, "is cut short"), "%s", why);
        cr_expect_eq(trace_reader_next(r, &e, why, sizeof why), -EPIPE, "the error stays");
        r = trace_reader_free(r);
        rm_rf(dir);
}

Test(trace, the_writer_refuses_a_fifo_and_a_symlink_and_never_blocks) {
        _cleanup_free_ char *dir = make_tmpdir(), *fifo = NULL, *link = NULL;
        TraceWriter *w = NULL;
        const TraceWriterOptions o = { .max_size = 1u << 20 };

        cr_assert(asprintf(&fifo, "%s/fifo", dir) > 0);
        cr_assert(asprintf(&link, "%s/link", dir) > 0);
        cr_assert_eq(mkfifo(fifo, 0600), 0);
        cr_assert_eq(symlink("/etc/passwd", link), 0);
        cr_expect_eq(trace_writer_open(fifo, &o, &w), -EINVAL);
        cr_expect_eq(trace_writer_open(link, &o, &w), -ELOOP);
        cr_expect_eq(trace_writer_open(link, &(TraceWriterOptions){ .max_size = 1000 }, &w),
                     -EINVAL, "a cap below TRACE_MIN_SIZE");
        rm_rf(dir);
}
