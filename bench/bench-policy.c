/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What planning one tick costs, on simulated machines far larger than ours. Synthetic hwloc
 * topologies of 64, 256 and 1,024 CPUs (4, 8 and 16 nodes), each with 1,000, 10,000 and 100,000
 * tasks that a seeded PRNG (here, never in the policy) places unevenly: a task's node is drawn
 * with density falling across the nodes, its CPU at random inside it; a fifth are busy, the rest
 * use 5-80% of a CPU; some are the daemon's (some of those narrowed to half a node), some
 * foreign, some just moved, spread over 100 cgroups of which 10 are protected; each has 1 MiB to
 * 1 GiB of memory on its node (what the choice of the task to move weighs). CPU utilisation
 * and wait follow from the placement as the sampler would measure them.
 *
 * Per cell, the median (and best) of REPS runs of:
 *   floor   one pass over the tasks summing their demand by node: the least any planner does
 *   plan    policy_plan() on a fresh state with node balancing due (tick 0, no hold), at the
 *           default max_moves_per_tick (2) and at 64
 * The target is a plan under 20 ms at 1,024 CPUs, 16 nodes and 100,000 tasks.
 *
 * A measurement, not a test: exits 0 unless a machine cannot be set up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy.h"
#include "support.h"
#include "topology.h"
#include "tunables.h"

#define REPS 11
#define N_GROUPS 100
#define TARGET_NSEC UINT64_C(20000000)

typedef struct Machine {
        const char *description;
        unsigned cpus, nodes;
} Machine;

static const Machine machines[] = {
        { "pack:4 numa:1 core:16 pu:1", 64, 4 },
        { "pack:8 numa:1 core:32 pu:1", 256, 8 },
        { "pack:16 numa:1 core:64 pu:1", 1024, 16 },
};
static const size_t task_counts[] = { 1000, 10000, 100000 };

/* ---- timing */

/* ---- the simulated machine */

static uint64_t rng_state;

/* splitmix64: deterministic, seeded once per cell */
static uint64_t rng(void) {
        uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static unsigned rng_below(unsigned n) {
        return (unsigned) (rng() % n);
}

typedef struct World {
        Topology *topo;
        unsigned n_cpus;
        PolicyCpu *cpus;
        PolicyTask *tasks;
        size_t n_tasks;
        PolicyCgroup groups[N_GROUPS];
        char paths[N_GROUPS][32];
        CpuMask **node_masks, **half_masks, *narrowed;
        int *cpu_node; /* node index by CPU, for the floor */
        PolicySnapshot snap;
} World;

static void world_free(World *w) {
        for (unsigned i = 0; w->node_masks && i < topology_n_nodes(w->topo); i++) {
                cpumask_free(w->node_masks[i]);
                cpumask_free(w->half_masks[i]);
        }
        free(w->node_masks);
        free(w->half_masks);
        cpumask_free(w->narrowed);
        free(w->cpus);
        free(w->tasks);
        free(w->cpu_node);
        topology_free(w->topo);
}

static int world_masks(World *w) {
        unsigned n = topology_n_nodes(w->topo);

        w->node_masks = calloc(n, sizeof *w->node_masks);
        w->half_masks = calloc(n, sizeof *w->half_masks);
        w->narrowed = cpumask_new(w->n_cpus);
        w->cpu_node = calloc(w->n_cpus, sizeof *w->cpu_node);
        if (!w->node_masks || !w->half_masks || !w->narrowed || !w->cpu_node)
                return -ENOMEM;
        (void) cpumask_set(w->narrowed, 0); /* a foreign task's taskset */
        for (unsigned i = 0; i < n; i++) {
                const CpuMask *cpus =
                        topology_node_cpus(w->topo, (unsigned) topology_node_id(w->topo, i));
                unsigned k = 0, half = cpumask_count(cpus) / 2;

                w->node_masks[i] = cpumask_copy(cpus);
                w->half_masks[i] = cpumask_new(w->n_cpus);
                if (!w->node_masks[i] || !w->half_masks[i])
                        return -ENOMEM;
                CPUMASK_FOREACH(c, cpus) {
                        w->cpu_node[c] = (int) i;
                        if (k++ < half)
                                (void) cpumask_set(w->half_masks[i], (unsigned) c);
                }
        }
        return 0;
}

/* Node density falls across the nodes: node = floor(n * u^2). */
static void place_task(World *w, PolicyTask *k, size_t i) {
        unsigned n = topology_n_nodes(w->topo), node, cpus_per_node = w->n_cpus / n;
        uint64_t u = rng() % 1000;
        unsigned kind = rng_below(100);

        node = (unsigned) (n * u * u / 1000000);
        *k = (PolicyTask){
                .pid = (pid_t) (1000 + i),
                .starttime_ticks = rng() % 1000000,
                .cgroup = i % N_GROUPS,
                .cpu = (int) (node * cpus_per_node + rng_below(cpus_per_node)),
                .demand_permyriad = rng_below(5) == 0 ? 10000 : 500 + rng_below(7500),
                .allowed = topology_usable_cpus(w->topo),
                .last_move_usec = rng_below(10) == 0 ? 55 * UINT64_C(1000000) : 0,
                /* 1 MiB to 1 GiB on its node, the heavier ones read from numa_maps */
                .mem_kib = UINT64_C(1024) << rng_below(11),
        };
        k->mem_exact = k->mem_kib >= 16 * 1024;
        (void) snprintf(k->comm, sizeof k->comm, "worker%zu", i % 97);
        if (kind < 30) { /* the daemon's, on its node; one in 30 of those narrowed */
                k->ours = true;
                k->allowed = kind == 0 ? w->half_masks[node] : w->node_masks[node];
        } else if (kind < 35) {
                k->foreign = true;
                k->allowed = w->narrowed;
        }
}

/* Utilisation from the placement: a CPU is busy up to one CPU, shared in proportion. */
static void measure(World *w) {
        uint64_t *total = calloc(w->n_cpus, sizeof *total);

        if (!total)
                abort();
        for (size_t i = 0; i < w->n_tasks; i++)
                total[w->tasks[i].cpu] += w->tasks[i].demand_permyriad;
        for (unsigned c = 0; c < w->n_cpus; c++)
                w->cpus[c].util_permyriad = (uint32_t) (total[c] < 10000 ? total[c] : 10000);
        for (size_t i = 0; i < w->n_tasks; i++) {
                PolicyTask *k = &w->tasks[i];
                uint64_t t = total[k->cpu];

                k->util_permyriad =
                        (uint32_t) (k->demand_permyriad * w->cpus[k->cpu].util_permyriad / t);
        }
        free(total);
}

static int world_new(World *w, const Machine *m, size_t n_tasks) {
        int r;

        *w = (World){ .n_tasks = n_tasks };
        r = topology_new_from_synthetic(m->description, NULL, 0, &w->topo);
        if (r < 0)
                return r;
        w->n_cpus = topology_cpu_capacity(w->topo);
        w->cpus = calloc(w->n_cpus, sizeof *w->cpus);
        w->tasks = calloc(n_tasks, sizeof *w->tasks);
        if (!w->cpus || !w->tasks)
                return -ENOMEM;
        r = world_masks(w);
        if (r < 0)
                return r;
        rng_state = 42;
        for (size_t i = 0; i < n_tasks; i++)
                place_task(w, &w->tasks[i], i);
        measure(w);
        for (size_t g = 0; g < N_GROUPS; g++) {
                (void) snprintf(w->paths[g], sizeof w->paths[g], "cgbalance.slice/g%zu", g);
                w->groups[g] = (PolicyCgroup){
                        .path = w->paths[g],
                        .protected = g % 10 == 0,
                        .has_pressure = g % 4 != 0,
                        .pressure_permyriad = (uint32_t) rng_below(3000),
                        .weight = 100,
                        .base_weight = 100,
                };
        }
        w->snap = (PolicySnapshot){ .interval_usec = 1000000,
                                    .cpus = w->cpus,
                                    .n_cpus = w->n_cpus,
                                    .tasks = w->tasks,
                                    .n_tasks = n_tasks,
                                    .cgroups = w->groups,
                                    .n_cgroups = N_GROUPS };
        return 0;
}

/* ---- the passes */

static volatile uint64_t sink;

static uint64_t pass_floor(const World *w) {
        uint64_t load[64] = { 0 }, t0 = clock_nsec(CLOCK_MONOTONIC), sum = 0;

        for (size_t i = 0; i < w->n_tasks; i++) {
                const PolicyTask *k = &w->tasks[i];

                load[w->cpu_node[k->cpu]] += k->demand_permyriad;
        }
        for (size_t i = 0; i < 64; i++)
                sum += load[i];
        sink = sum;
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

static uint64_t pass_plan(const World *w, const PolicyParams *params, size_t *ret_moves) {
        PolicyState *s = policy_state_new(w->topo);
        Plan *p = NULL;
        uint64_t t0, dt;
        int r;

        if (!s)
                abort();
        t0 = clock_nsec(CLOCK_MONOTONIC);
        r = policy_plan(s, &w->snap, w->topo, params, 60 * UINT64_C(1000000),
                        /* force_node_balance= */ false, &p);
        dt = clock_nsec(CLOCK_MONOTONIC) - t0;
        if (r < 0) {
                fprintf(stderr, "policy_plan: %s\n", strerror(-r));
                abort();
        }
        *ret_moves = p->n_moves;
        plan_free(p);
        policy_state_free(s);
        return dt;
}

typedef struct Cell {
        uint64_t floor, floor_best, plan, plan_best, plan64;
        size_t moves, moves64;
} Cell;

/* The policy's numbers, built once as the daemon does at a reload (not timed). */
static PolicyParams *cell_params(const World *w, Tunables *t, uint64_t max_moves,
                                 PolicyParams *ret) {
        t->max_moves_per_tick = max_moves;
        if (policy_params_from_tunables(t, w->topo, ret) < 0)
                abort();
        return ret;
}

/* Each pass in its own block of runs, so none times the cache another one left cold. */
static void run_cell(const World *w, Tunables *t, Cell *c) {
        uint64_t f[REPS], p[REPS], q[REPS];
        PolicyParams params;

        for (unsigned i = 0; i < REPS; i++)
                f[i] = pass_floor(w);
        (void) cell_params(w, t, 2, &params);
        for (unsigned i = 0; i < REPS; i++)
                p[i] = pass_plan(w, &params, &c->moves);
        (void) cell_params(w, t, 64, &params);
        for (unsigned i = 0; i < REPS; i++)
                q[i] = pass_plan(w, &params, &c->moves64);
        c->floor = bench_median_u64(f, REPS);
        c->floor_best = f[0]; /* bench_median_u64() sorted them */
        c->plan = bench_median_u64(p, REPS);
        c->plan_best = p[0];
        c->plan64 = bench_median_u64(q, REPS);
}

int main(void) {
        Tunables t;
        uint64_t target_cell = 0;

        if (tunables_defaults(&t) < 0)
                return 1;
        t.node_imbalance_hold_usec = 0;
        printf("policy_plan(): median (best) of %d runs, microseconds\n\n", REPS);
        printf("%5s %5s %7s | %9s %9s | %9s %9s %6s %5s | %9s %6s %5s\n", "CPUs", "nodes", "tasks",
               "floor", "best", "plan(2)", "best", "ratio", "moves", "plan(64)", "ratio", "moves");
        for (size_t m = 0; m < ELEMENTSOF(machines); m++)
                for (size_t n = 0; n < ELEMENTSOF(task_counts); n++) {
                        World w;
                        Cell c = {};
                        int r = world_new(&w, &machines[m], task_counts[n]);

                        if (r < 0) {
                                fprintf(stderr, "%s: %s\n", machines[m].description, strerror(-r));
                                world_free(&w);
                                tunables_free(&t);
                                return 1;
                        }
                        run_cell(&w, &t, &c);
                        printf("%5u %5u %7zu | %9.1f %9.1f | %9.1f %9.1f %6.1f %5zu | %9.1f %6.1f "
                               "%5zu\n",
                               machines[m].cpus, machines[m].nodes, task_counts[n],
                               (double) c.floor / 1e3, (double) c.floor_best / 1e3,
                               (double) c.plan / 1e3, (double) c.plan_best / 1e3,
                               (double) c.plan / (double) (c.floor ? c.floor : 1), c.moves,
                               (double) c.plan64 / 1e3,
                               (double) c.plan64 / (double) (c.floor ? c.floor : 1), c.moves64);
                        if (m + 1 == ELEMENTSOF(machines) && n + 1 == ELEMENTSOF(task_counts))
                                target_cell = c.plan;
                        world_free(&w);
                }
        printf("\n1,024 CPUs, 16 nodes, 100,000 tasks: %.2f ms a plan, target < %.0f ms: %s\n",
               (double) target_cell / 1e6, (double) TARGET_NSEC / 1e6,
               target_cell < TARGET_NSEC ? "met" : "MISSED");
        tunables_free(&t);
        return 0;
}
