/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "report.h"
#include "testutil.h"
#include "topology.h"
#include "tunables.h"

#define NUMAQ "pack:4 numa:1 core:4 pu:1" /* seed 002's machine: 4 nodes of 4 CPUs */
#define TWO_NODES "pack:2 numa:1 core:2 pu:1" /* 2 nodes of 2 CPUs */
#define EIGHT_NODES "pack:2 numa:4 core:2 pu:1" /* 2 packages of 4 nodes of 2 CPUs */
#define ONE_NODE "pack:1 numa:1 core:4 pu:1"
/* 10 local, 16 within a package, 32 across */
static const char eight_distances[] = "10,16,16,16,32,32,32,32;"
                                      "16,10,16,16,32,32,32,32;"
                                      "16,16,10,16,32,32,32,32;"
                                      "16,16,16,10,32,32,32,32;"
                                      "32,32,32,32,10,16,16,16;"
                                      "32,32,32,32,16,10,16,16;"
                                      "32,32,32,32,16,16,10,16;"
                                      "32,32,32,32,16,16,16,10";

#define SEC UINT64_C(1000000)
#define BUSY 10000u /* one CPU's worth */
#define MAX_TASKS 64
#define MAX_CPUS 16
#define MAX_GROUPS 6

/*
 * A simulated machine: tasks placed on CPUs, each with a demand (what it would use on a CPU of
 * its own), and unmanaged load per CPU. sim_snapshot() turns the placement into what the sampler
 * would measure: a CPU's utilisation is its total demand capped at one CPU, shared among its
 * tasks in proportion to their demand; what a task does not get is its wait. sim_apply() carries
 * out a plan as the actuator and the kernel would: a moved task gets the mask and lands on the
 * least loaded CPU of it; a weight change is written.
 */
typedef struct Sim {
        Topology *topo;
        Tunables t; /* what tests set; the policy gets sim_params() built from it */
        PolicyParams params;
        PolicyState *state;
        unsigned n_cpus;
        uint32_t base[MAX_CPUS];
        PolicyCpu cpus[MAX_CPUS];
        PolicyTask tasks[MAX_TASKS];
        CpuMask *masks[MAX_TASKS];
        size_t n_tasks;
        PolicyCgroup cgroups[MAX_GROUPS];
        CpuMask *partitions[MAX_GROUPS]; /* the groups' partition masks, owned */
        size_t n_cgroups;
        PolicySnapshot snap;
        uint64_t now;
        /* the interval each snapshot covers (SEC unless a test sets it): a plan's expected loads
         * hold for the next snapshot if it started before that plan, i.e. this >= SEC */
        uint64_t interval;
        size_t moves; /* applied so far */
        bool sched_ext; /* as cgbalanced plans under one: weights_ignored, no idle lever */
} Sim;

static Sim *sim_new_topology(Topology *topo) {
        Sim *s = calloc(1, sizeof *s);

        cr_assert_not_null(s);
        s->topo = topo;
        s->n_cpus = topology_cpu_capacity(topo);
        cr_assert_leq(s->n_cpus, MAX_CPUS);
        cr_assert_eq(tunables_defaults(&s->t), 0);
        s->state = policy_state_new(topo);
        cr_assert_not_null(s->state);
        s->interval = SEC;
        return s;
}

static Sim *sim_new(const char *description, const char *distances) {
        _cleanup_free_ unsigned *d = NULL;
        Topology *topo = NULL;
        unsigned n = 0;

        if (distances)
                cr_assert_eq(topology_parse_distances(distances, &d, &n, NULL), 0);
        cr_assert_eq(topology_new_from_synthetic(description, d, n, &topo), 0, "%s", description);
        return sim_new_topology(topo);
}

static Sim *sim_new_root(const char *rel) {
        _cleanup_free_ char *root = fixture_path(rel);
        Topology *topo = NULL;

        cr_assert_eq(topology_new_from_root(root, &topo), 0, "%s", root);
        return sim_new_topology(topo);
}

static void sim_free(Sim *s) {
        if (!s)
                return;
        for (size_t i = 0; i < s->n_tasks; i++)
                cpumask_free(s->masks[i]);
        for (size_t i = 0; i < MAX_GROUPS; i++)
                cpumask_free(s->partitions[i]);
        policy_state_free(s->state);
        tunables_free(&s->t);
        topology_free(s->topo);
        free(s);
}

static void sim_freep(Sim **s) {
        sim_free(*s);
}
#define _cleanup_sim_ _cleanup_(sim_freep)

static void set_min_imbalance(Sim *s, const char *v) {
        free(s->t.node_min_imbalance);
        s->t.node_min_imbalance = strdup(v);
        cr_assert_not_null(s->t.node_min_imbalance);
}

static void set_mask(Sim *s, PolicyTask *k, const char *cpus) {
        size_t i = (size_t) (k - s->tasks);

        cpumask_free(s->masks[i]);
        s->masks[i] = NULL;
        cr_assert_eq(cpumask_parse(cpus, s->n_cpus, &s->masks[i], NULL), 0, "%s", cpus);
        k->allowed = s->masks[i];
}

/* A task that may run anywhere (its affinity is all usable CPUs), now on cpu. */
static PolicyTask *sim_task(Sim *s, pid_t pid, int cpu, uint32_t demand) {
        PolicyTask *k = &s->tasks[s->n_tasks];

        cr_assert_lt(s->n_tasks, MAX_TASKS);
        *k = (PolicyTask){ .pid = pid,
                           .starttime_ticks = (uint64_t) pid * 100,
                           .cgroup = POLICY_NO_CGROUP,
                           .cpu = cpu,
                           .demand_permyriad = demand };
        (void) snprintf(k->comm, sizeof k->comm, "task%d", (int) pid);
        s->masks[s->n_tasks] = cpumask_copy(topology_usable_cpus(s->topo));
        cr_assert_not_null(s->masks[s->n_tasks]);
        k->allowed = s->masks[s->n_tasks];
        s->n_tasks++;
        return k;
}

/* n tasks of one CPU each, pids from pid, spread round-robin over cpus lo..hi. */
static void sim_busy(Sim *s, pid_t pid, unsigned n, int lo, int hi) {
        for (unsigned i = 0; i < n; i++)
                (void) sim_task(s, pid + (pid_t) i, lo + (int) i % (hi - lo + 1), BUSY);
}

static PolicyCgroup *sim_group(Sim *s, const char *path, bool protected, uint32_t weight) {
        PolicyCgroup *g = &s->cgroups[s->n_cgroups++];

        cr_assert_leq(s->n_cgroups, MAX_GROUPS);
        *g = (PolicyCgroup){ .path = path,
                             .protected = protected,
                             .has_pressure = true,
                             .weight = weight,
                             .base_weight = weight };
        return g;
}

static const PolicySnapshot *sim_snapshot(Sim *s) {
        uint64_t total[MAX_CPUS];

        for (unsigned c = 0; c < s->n_cpus; c++)
                total[c] = s->base[c];
        for (size_t i = 0; i < s->n_tasks; i++)
                if (s->tasks[i].cpu >= 0)
                        total[s->tasks[i].cpu] += s->tasks[i].demand_permyriad;
        for (unsigned c = 0; c < s->n_cpus; c++) {
                uint64_t util = total[c] < BUSY ? total[c] : BUSY, tasks = total[c] - s->base[c];
                uint64_t share = total[c] ? util * tasks / total[c] : 0, given = 0;
                PolicyTask *first = NULL;

                s->cpus[c].util_permyriad = (uint32_t) util;
                for (size_t i = 0; i < s->n_tasks; i++) {
                        PolicyTask *k = &s->tasks[i];

                        if (k->cpu != (int) c)
                                continue;
                        k->util_permyriad =
                                (uint32_t) (tasks ? share * k->demand_permyriad / tasks : 0);
                        given += k->util_permyriad;
                        first = first ? first : k;
                }
                if (first) /* the rounding, so the tasks get exactly their share */
                        first->util_permyriad += (uint32_t) (share - given);
        }
        s->snap = (PolicySnapshot){ .interval_usec = s->interval,
                                    .cpus = s->cpus,
                                    .n_cpus = s->n_cpus,
                                    .tasks = s->tasks,
                                    .n_tasks = s->n_tasks,
                                    .cgroups = s->cgroups,
                                    .n_cgroups = s->n_cgroups };
        return &s->snap;
}

/* The policy's numbers from s->t, built as the daemon builds them at each reload. */
static const PolicyParams *sim_params(Sim *s) {
        cr_assert_eq(policy_params_from_tunables(&s->t, s->topo, &s->params), 0);
        if (s->sched_ext) {
                s->params.weights_ignored = true;
                s->params.escalate_lever[POLICY_LEVER_IDLE] = false;
        }
        return &s->params;
}

/* One tick, one second after the last. */
static Plan *sim_plan(Sim *s) {
        Plan *p = NULL;

        s->now += SEC;
        cr_assert_eq(policy_plan(s->state, sim_snapshot(s), s->topo, sim_params(s), s->now,
                                 /* force_node_balance= */ false, &p),
                     0);
        cr_assert_not_null(p);
        return p;
}

static PolicyTask *sim_find(Sim *s, pid_t pid) {
        for (size_t i = 0; i < s->n_tasks; i++)
                if (s->tasks[i].pid == pid)
                        return &s->tasks[i];
        cr_assert_fail("no task %d", (int) pid);
        return NULL;
}

static uint64_t sim_cpu_demand(const Sim *s, unsigned cpu) {
        uint64_t d = s->base[cpu];

        for (size_t i = 0; i < s->n_tasks; i++)
                if (s->tasks[i].cpu == (int) cpu)
                        d += s->tasks[i].demand_permyriad;
        return d;
}

static void sim_apply(Sim *s, const Plan *p) {
        for (size_t i = 0; i < p->n_moves; i++) {
                PolicyTask *k = sim_find(s, p->moves[i].pid);
                size_t idx = (size_t) (k - s->tasks);
                int best = -1;

                cpumask_free(s->masks[idx]);
                s->masks[idx] = cpumask_copy(p->moves[i].mask);
                cr_assert_not_null(s->masks[idx]);
                k->allowed = s->masks[idx];
                k->ours = true;
                k->foreign = false;
                k->last_move_usec = s->now;
                k->cpu = -1; /* off the CPUs while its new one is chosen */
                CPUMASK_FOREACH(c, k->allowed)
                        if (best < 0 ||
                            sim_cpu_demand(s, (unsigned) c) < sim_cpu_demand(s, (unsigned) best))
                                best = c;
                cr_assert_geq(best, 0, "empty mask for pid %d", (int) k->pid);
                k->cpu = best;
        }
        for (size_t i = 0; i < p->n_weights; i++)
                s->cgroups[p->weights[i].cgroup].weight = p->weights[i].to;
        for (size_t i = 0; i < p->n_escalations; i++) {
                const PlanEscalation *e = &p->escalations[i];
                PolicyCgroup *g = &s->cgroups[e->cgroup];

                cr_assert_lt(e->cgroup, s->n_cgroups);
                if (e->lever == POLICY_LEVER_IDLE) {
                        g->idle = e->to != 0;
                        g->idle_ours = e->to != 0;
                } else if (e->lever == POLICY_LEVER_PARTITION) {
                        s->partitions[e->cgroup] = cpumask_free(s->partitions[e->cgroup]);
                        if (plan_escalation_is_up(e)) {
                                cr_assert_not_null(e->cpus);
                                cr_assert_eq(cpumask_count(e->cpus), e->to);
                                s->partitions[e->cgroup] = cpumask_copy(e->cpus);
                                cr_assert_not_null(s->partitions[e->cgroup]);
                        } else /* as the actuator puts back each task's mask from before */
                                for (size_t t = 0; t < s->n_tasks; t++)
                                        if (s->tasks[t].cgroup == e->cgroup && s->tasks[t].ours) {
                                                cpumask_free(s->masks[t]);
                                                s->masks[t] =
                                                        cpumask_copy(topology_usable_cpus(s->topo));
                                                cr_assert_not_null(s->masks[t]);
                                                s->tasks[t].allowed = s->masks[t];
                                                s->tasks[t].ours = false;
                                        }
                        g->partition = s->partitions[e->cgroup];
                } else {
                        cr_assert_eq(e->lever, POLICY_LEVER_QUOTA);
                        g->quota_permyriad = e->to;
                        g->quota_ours = e->to != 0;
                }
        }
        s->moves += p->n_moves;
}

/* Runs n ticks, applying each plan; returns the moves made. POLICY_DEBUG=1 prints the plans. */
static size_t sim_run(Sim *s, unsigned n) {
        size_t before = s->moves;

        for (unsigned i = 0; i < n; i++) {
                _cleanup_plan_ Plan *p = sim_plan(s);

                if (getenv("POLICY_DEBUG"))
                        report_plan(stderr, p, &s->snap);
                sim_apply(s, p);
        }
        return s->moves - before;
}

/* The node load by construction: its unmanaged load plus every task's demand. */
static uint64_t sim_node_load(const Sim *s, unsigned node) {
        const CpuMask *cpus = topology_node_cpus(s->topo, node);
        uint64_t load = 0;

        CPUMASK_FOREACH(c, cpus)
                load += sim_cpu_demand(s, (unsigned) c);
        return load;
}

static unsigned sim_node_tasks(const Sim *s, unsigned node) {
        unsigned n = 0;

        for (size_t i = 0; i < s->n_tasks; i++)
                n += s->tasks[i].cpu >= 0 &&
                     topology_cpu_node(s->topo, (unsigned) s->tasks[i].cpu) == (int) node;
        return n;
}

/* Busiest minus idlest node load per CPU, over nodes of equal size. */
static uint64_t sim_spread(const Sim *s) {
        uint64_t lo = UINT64_MAX, hi = 0;

        for (unsigned n = 0; n < topology_n_nodes(s->topo); n++) {
                uint64_t l = sim_node_load(s, n) / topology_node_capacity(s->topo, n);

                lo = l < lo ? l : lo;
                hi = l > hi ? l : hi;
        }
        return hi - lo;
}

static void expect_mask(const CpuMask *m, const char *want) {
        _cleanup_free_ char *got = NULL;

        cr_assert_eq(cpumask_format(m, &got), 0);
        cr_expect_str_eq(got, want);
}

/* ---- empty plans */

Test(policy, balanced_machine_gives_empty_plan) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        for (unsigned node = 0; node < 4; node++)
                sim_busy(s, (pid_t) (100 + 10 * node), 2, (int) node * 4, (int) node * 4 + 3);
        p = sim_plan(s);
        cr_expect(p->node_balance_ran, "tick 0 balances nodes");
        cr_expect_eq(p->n_moves, 0);
        cr_expect_eq(p->n_weights, 0);
}

Test(policy, idle_machine_gives_empty_plan) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        /* Tasks below min_task_load (10%) all on node 0: load, but nothing worth moving. */
        for (int i = 0; i < 4; i++)
                (void) sim_task(s, 10 + i, 0, 500);
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
        cr_expect_eq(p->n_weights, 0);
}

/* ---- thresholds */

Test(policy, imbalance_above_threshold_moves_and_evens_nodes) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;
        uint64_t before;

        s->t.node_imbalance_hold_usec = 0;
        sim_busy(s, 10, 6, 0, 1); /* 6 tasks on 2 CPUs, the other node idle */
        before = sim_spread(s);
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 2, "max_moves_per_tick is 2");
        for (size_t i = 0; i < p->n_moves; i++) {
                cr_expect_eq(p->moves[i].from_node, 0);
                cr_expect_eq(p->moves[i].to_node, 1);
                expect_mask(p->moves[i].mask, "2-3");
        }
        sim_apply(s, p);
        cr_expect_eq(sim_node_load(s, 0), 4 * BUSY);
        cr_expect_eq(sim_node_load(s, 1), 2 * BUSY);
        cr_expect_lt(sim_spread(s), before);
}

/* Node 0: 4 busy tasks and 2 half ones (50000) against 4 busy on node 1 (40000): exactly 125%,
 * not more. Moving a half task would even them out, so only the ratio holds it back. */
static void ratio_125(Sim *s) {
        s->t.node_imbalance_hold_usec = 0;
        set_min_imbalance(s, "0"); /* the ratio alone decides */
        sim_busy(s, 10, 4, 0, 1);
        (void) sim_task(s, 14, 0, BUSY / 2);
        (void) sim_task(s, 15, 1, BUSY / 2);
        sim_busy(s, 20, 4, 2, 3);
}

Test(policy, ratio_at_node_imbalance_pct_does_not_move) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        ratio_125(s);
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
}

Test(policy, ratio_just_above_node_imbalance_pct_moves) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        ratio_125(s);
        sim_find(s, 13)->demand_permyriad = BUSY + 1; /* 50001 vs 40000 */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].to_node, 1);
        cr_expect_eq(p->moves[0].pid, 14, "a half task evens 50001 vs 40000 best");
}

/* 3 tasks against 2 on 2-CPU nodes is 150%, but moving one only swaps which node is busier:
 * the difference must strictly shrink, or the next tick would move it back. */
Test(policy, move_that_only_swaps_the_imbalance_is_not_made) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        s->t.node_imbalance_hold_usec = 0;
        set_min_imbalance(s, "0");
        s->t.busy_node_multiplier = 1;
        sim_busy(s, 10, 3, 0, 1);
        sim_busy(s, 20, 2, 2, 3);
        cr_expect_eq(sim_run(s, 30), 0);
}

/* NUMAQ, "auto": 4 tasks of resistance. 4 tasks on node 0 have a CPU each. */
/* 12 busy tasks share CPU 0: each gets 8% of it, under min_task_load (10%), but wants all of
 * it. The threshold is on demand: starved tasks are the ones to move. */
Test(policy, starved_busy_tasks_are_moved) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        sim_busy(s, 10, 12, 0, 0);
        p = sim_plan(s);
        cr_assert_lt(s->tasks[0].util_permyriad, s->t.min_task_load_pct * 100);
        cr_expect_eq(p->n_moves, 2);
}

/* The gap is rounded to whole tasks: node_min_imbalance 1 moves a gap over 1.5 tasks. Node 0
 * is not overloaded (no task waits): the balance rule, not the room rule. */
Test(policy, gap_at_min_imbalance_and_a_half_does_not_move) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        set_min_imbalance(s, "1");
        (void) sim_task(s, 10, 0, BUSY);
        (void) sim_task(s, 11, 1, BUSY / 2); /* 15000 */
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
}

Test(policy, gap_just_above_min_imbalance_and_a_half_moves) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        set_min_imbalance(s, "1");
        (void) sim_task(s, 10, 0, BUSY);
        (void) sim_task(s, 11, 1, BUSY / 2 + 1); /* 15001 */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1, "then 5001 vs 10000 is no gap");
        cr_expect_eq(p->moves[0].from_node, 0);
        cr_expect_eq(p->moves[0].to_node, 1);
        cr_expect_eq(p->moves[0].pid, 10, "both leave 0.5 CPU between the nodes: the lower pid");
        cr_expect(strstr(p->moves[0].reason, "gap 1.50 > 1") != NULL, "%s", p->moves[0].reason);
}

/* Housekeeping's wait on a full node is no reason to send a whole task away: node 0's two tasks
 * wait 0.2 CPU behind it, node 1 is idle, and nothing moves. With a 0.4-CPU task more, 0.56
 * waits: the 0.4 task moves for it, not a whole one (which would even the loads out better). */
Test(policy, a_task_moves_for_room_only_for_about_its_own_load_waiting) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.idle_node_multiplier = 1;
        sim_busy(s, 10, 2, 0, 1);
        s->base[0] = s->base[1] = 1000; /* 21820 on 2 CPUs: 0.18 waiting */
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0, "%s", p->n_moves ? p->moves[0].reason : "");
        plan_free(TAKE_PTR(p));
        (void) sim_task(s, 12, 0, 4000); /* 25578 measured: 0.56 waiting */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 12, "%s", p->moves[0].reason);
}

/* 5 tasks on node 0 (one waits), 2 on node 1 (2 idle CPUs): the gap, 3, is within the 4 of
 * resistance, but a task waits while node 1 has a CPU free. Nodes 2 and 3 carry 4 each. */
Test(policy, overload_exception_moves_within_min_imbalance) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        sim_busy(s, 10, 5, 0, 3);
        sim_busy(s, 20, 2, 4, 7);
        sim_busy(s, 30, 4, 8, 11);
        sim_busy(s, 40, 4, 12, 15);
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1, "then node 0 is no longer overloaded");
        cr_expect_eq(p->moves[0].from_node, 0);
        cr_expect_eq(p->moves[0].to_node, 1);
        cr_expect(strstr(p->moves[0].reason, "1.00 waiting; nearest room") != NULL, "%s",
                  p->moves[0].reason);
}

/* The exception is for a task that finds a free CPU: node 1's room is one CPU (plus slack), so
 * of node 0's 1.5-CPU processes none goes, though one would even the nodes out as well. */
Test(policy, overload_exception_moves_only_what_fits_the_free_cpu) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        for (int i = 0; i < 3; i++)
                (void) sim_task(s, 10 + i, i, 3 * BUSY / 2); /* 2 threads each */
        (void) sim_task(s, 13, 3, BUSY); /* node 0: 55000, a gap of 2.5 < 4 */
        sim_busy(s, 20, 3, 4, 7); /* node 1: 30000, one CPU free */
        sim_busy(s, 30, 4, 8, 11);
        sim_busy(s, 40, 4, 12, 15);
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 13);
        cr_expect_eq(p->moves[0].to_node, 1);
}

Test(policy, overload_exception_needs_a_free_cpu_on_the_destination) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        sim_busy(s, 10, 6, 0, 3); /* 150% of node 1, a gap of 2 < 4 */
        sim_busy(s, 20, 4, 4, 7); /* no CPU free */
        sim_busy(s, 30, 4, 8, 11);
        sim_busy(s, 40, 4, 12, 15);
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
}

/* The same 119% imbalance: a task the daemon confined gets its node back, no task changes node.
 * Resistance (min imbalance) is off, so it is node_imbalance_pct alone that holds. */
static void imbalanced_119(Sim *s) {
        PolicyTask *k;

        s->t.node_imbalance_hold_usec = 0;
        set_min_imbalance(s, "0");
        k = sim_task(s, 10, 0, BUSY);
        set_mask(s, k, "0");
        k->ours = true;
        for (int i = 0; i < 3; i++)
                (void) sim_task(s, 11 + i, 1, 2000);
        (void) sim_task(s, 14, 1, 2400); /* CPU 0 at 100% vs CPU 1 at 84%: 119% */
        s->base[2] = s->base[3] = 8650; /* node 0 at 35700 */
        for (unsigned c = 4; c < 16; c++)
                s->base[c] = 7500; /* the others at 30000: 119%, a gap of 0.57 */
}

Test(policy, cross_node_threshold_is_harder_than_in_node) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        cr_assert_lt(s->t.imbalance_pct, s->t.node_imbalance_pct, "defaults");
        imbalanced_119(s);
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 10);
        cr_expect_eq(p->moves[0].from_node, 0);
        cr_expect_eq(p->moves[0].to_node, 0, "a repair inside node 0");
        expect_mask(p->moves[0].mask, "0-3");
}

/* The control: with node_imbalance_pct as low as imbalance_pct, the same loads move a task. */
Test(policy, cross_node_threshold_as_low_as_in_node_moves) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_pct = s->t.imbalance_pct;
        imbalanced_119(s);
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 2);
        cr_expect_eq(p->moves[1].pid, 14, "the 2400 task closest to the 2850 that evens out");
        cr_expect_eq(p->moves[1].to_node, 1);
}

Test(policy, repair_waits_for_imbalance_pct) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;
        PolicyTask *k;

        k = sim_task(s, 10, 0, BUSY);
        set_mask(s, k, "0");
        k->ours = true;
        s->base[1] = 8548; /* 100 / 85.48 = 116.99% */
        s->base[2] = s->base[3] = 9274;
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
}

Test(policy, repair_only_for_masks_the_daemon_set) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;
        PolicyTask *k;

        k = sim_task(s, 10, 0, BUSY);
        set_mask(s, k, "0");
        k->foreign = true; /* taskset narrowed it, not us */
        s->base[2] = s->base[3] = BUSY;
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
}

/* Node 0 at 140% of every other node, the far ones even a little less loaded: only the near
 * ones (pct 125) qualify; the far ones need 100 + 25 * 32 / 16 = 150%. */
Test(policy, farther_nodes_need_more_imbalance) {
        _cleanup_sim_ Sim *s = sim_new(EIGHT_NODES, eight_distances);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        set_min_imbalance(s, "0");
        (void) sim_task(s, 10, 0, BUSY);
        (void) sim_task(s, 11, 1, BUSY);
        (void) sim_task(s, 12, 0, 4000);
        (void) sim_task(s, 13, 1, 4000); /* 28000 */
        for (unsigned c = 2; c < 16; c++)
                s->base[c] = c < 8 ? BUSY : 9500; /* near 20000, far 19000 (147%) */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].to_node, 1, "nearest, though nodes 4-7 are less loaded");
        cr_expect_eq(p->moves[0].pid, 12, "a 4000 task evens 28000 vs 20000");
}

/* 8 tasks on node 4, all others idle, 8 moves allowed: nearest room first, so the near nodes
 * (its package: 5-7, at 16) take a task each, the least loaded first, then a second, and the far
 * package (at 32, lower ids) none: every task has a CPU without going that far. */
Test(policy, near_nodes_with_room_are_filled_before_far_ones) {
        _cleanup_sim_ Sim *s = sim_new(EIGHT_NODES, eight_distances);
        _cleanup_plan_ Plan *p = NULL;
        static const int want[] = { 5, 6, 7, 5, 6, 7 };

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 8;
        sim_busy(s, 10, 8, 8, 9);
        p = sim_plan(s);
        /* 80000 -> 20000 on node 4, no task waits; then 20000 vs 0 is a gap of 2, not over 2.5. */
        cr_assert_eq(p->n_moves, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_expect_eq(p->moves[i].to_node, want[i], "move %zu", i);
}

/* The same with housekeeping noise: the far nodes idle, the near ones at 0.05 CPU (the daemon
 * and a shell, say). Noise within the destination slack does not outweigh distance. */
Test(policy, nearly_idle_far_nodes_are_still_chosen_last) {
        _cleanup_sim_ Sim *s = sim_new(EIGHT_NODES, eight_distances);
        _cleanup_plan_ Plan *p = NULL;
        static const int want[] = { 5, 6, 7 };

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 3;
        sim_busy(s, 10, 8, 8, 9);
        for (unsigned c = 10; c < 16; c++)
                s->base[c] = 250; /* 500 a node, under the slack of 1000 */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, ELEMENTSOF(want));
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                cr_expect_eq(p->moves[i].to_node, want[i], "move %zu", i);
}

/* Loads do not outweigh distance where there is room: a near node busy with 1.1 CPU (room for
 * a task yet) comes before an idle far one; near nodes without room (1.6 CPU: 2.6 with a task)
 * send it far. The
 * plans are not applied: each snapshot starts after the plan before it (half a tick). */
Test(policy, a_near_node_with_room_comes_before_an_idle_far_one) {
        _cleanup_sim_ Sim *s = sim_new(EIGHT_NODES, eight_distances);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        s->t.idle_node_multiplier = 1; /* two plans, both balancing nodes */
        s->interval = SEC / 2;
        sim_busy(s, 10, 8, 8, 9);
        for (unsigned c = 10; c < 16; c++)
                s->base[c] = 5500; /* 11000 a node */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].to_node, 5, "the nearest node with room, 1.1 CPU busy");
        cr_expect(strstr(p->moves[0].reason, "nearest room, distance 16") != NULL, "%s",
                  p->moves[0].reason);
        plan_free(TAKE_PTR(p));
        for (unsigned c = 10; c < 16; c++)
                s->base[c] = 8000; /* 16000 a node: no room */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].to_node, 0, "the idle far node with the lowest id");
}

/* Node 0 (4 CPUs) and node 1 (CPUs 4 and 6; 5 is isolated, 7 offline): loads are compared per
 * CPU, and the gap is the per-CPU difference times the smaller node's 2 CPUs. */
Test(policy, unequal_nodes_compare_loads_per_cpu) {
        _cleanup_sim_ Sim *s = sim_new_root("topology/smt-offline");
        _cleanup_plan_ Plan *p = NULL;
        uint64_t loads[2];

        s->t.node_imbalance_hold_usec = 0;
        set_min_imbalance(s, "2");
        sim_busy(s, 10, 6, 0, 3); /* 1.5/CPU */
        (void) sim_task(s, 20, 4, BUSY);
        (void) sim_task(s, 21, 6, BUSY); /* 1.0/CPU: 150%, a total gap of 4, per CPU 1 */
        s->base[5] = BUSY; /* isolated: not the balancer's */
        cr_assert_eq(policy_node_loads(sim_snapshot(s), s->topo, loads), 0);
        cr_expect_eq(loads[0], 6 * BUSY);
        cr_expect_eq(loads[1], 2 * BUSY, "isolated CPU 5 not counted");
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0, "a 1-task gap per CPU is within 2 of resistance");
}

/* use_isolated_cpus: the isolated CPU 5 becomes the balancer's, in loads, capacity and masks. */
Test(policy, use_isolated_cpus_counts_and_places_on_isolated_cpus) {
        _cleanup_sim_ Sim *s = sim_new_root("topology/smt-offline");
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.idle_node_multiplier = 1;
        s->t.use_isolated_cpus = true;
        s->interval = SEC / 2; /* the first plan is not applied: the second sees the same loads */
        sim_busy(s, 10, 8, 0, 3); /* 2.0/CPU on node 0 */
        for (pid_t pid = 10; pid < 18; pid++)
                set_mask(s, sim_find(s, pid), "0-6"); /* its cpuset has CPU 5 too */
        p = sim_plan(s);
        cr_assert_gt(p->n_moves, 0);
        cr_expect_eq(p->moves[0].to_node, 1);
        expect_mask(p->moves[0].mask, "4-6");

        s->t.use_isolated_cpus = false;
        plan_free(p);
        p = sim_plan(s);
        cr_assert_gt(p->n_moves, 0);
        expect_mask(p->moves[0].mask, "4,6");
}

Test(policy, small_busy_node_sheds_to_big_node_with_equal_total) {
        _cleanup_sim_ Sim *s = sim_new_root("topology/smt-offline");
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        set_min_imbalance(s, "1");
        sim_busy(s, 10, 4, 0, 3); /* 4 tasks on 4 CPUs: 1.0/CPU */
        sim_busy(s, 20, 4, 4, 4);
        sim_find(s, 22)->cpu = sim_find(s, 23)->cpu = 6; /* 4 on 2 CPUs: 2.0/CPU, same total */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1, "then 1.5 vs 1.25 per CPU is 120%");
        cr_expect_eq(p->moves[0].from_node, 1);
        cr_expect_eq(p->moves[0].to_node, 0);
        expect_mask(p->moves[0].mask, "0-3");
}

Test(policy, task_on_offline_cpu_is_skipped) {
        _cleanup_sim_ Sim *s = sim_new_root("topology/smt-offline");
        _cleanup_plan_ Plan *p = NULL;
        uint64_t loads[2];

        s->t.node_imbalance_hold_usec = 0;
        for (int i = 0; i < 8; i++)
                (void) sim_task(s, 10 + i, 7, BUSY); /* CPU 7 is offline */
        cr_assert_eq(policy_node_loads(sim_snapshot(s), s->topo, loads), 0);
        cr_expect_eq(s->cpus[7].util_permyriad, BUSY);
        cr_expect_eq(loads[0] + loads[1], 0, "CPU 7 and its tasks have no node");
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
}

/* ---- time: hold, multipliers, oscillation, cooldown */

Test(policy, no_move_until_imbalance_has_held) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        /* defaults: node_imbalance_hold 2 s, idle_node_multiplier 2, one tick a second */
        cr_assert_eq(s->t.node_imbalance_hold_usec, 2 * SEC);
        cr_assert_eq(s->t.idle_node_multiplier, 2);
        sim_busy(s, 10, 4, 0, 1);
        for (unsigned tick = 0; tick < 3; tick++) {
                _cleanup_plan_ Plan *p = sim_plan(s);

                /* tick 0 balances but the imbalance is new; tick 1 does not balance; tick 2:
                 * 4 vs 0, then 3 vs 1 (node 0 overloaded, node 1 has a free CPU) */
                cr_expect_eq(p->n_moves, tick == 2 ? 2u : 0u, "tick %u", tick);
        }
}

/* RebalanceNow: the first tick of a fresh imbalance, on a tick the multiplier skips, moves. */
Test(policy, forced_node_balance_skips_hold_and_multiplier_not_thresholds) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *first = NULL, *forced = NULL, *balanced = NULL;

        sim_busy(s, 10, 4, 0, 1);
        first = sim_plan(s); /* tick 0: the imbalance is new, held 0 s */
        cr_expect_eq(first->n_moves, 0);
        s->now += SEC; /* tick 1: the idle multiplier (2) skips it */
        cr_assert_eq(policy_plan(s->state, sim_snapshot(s), s->topo, sim_params(s), s->now,
                                 /* force_node_balance= */ true, &forced),
                     0);
        cr_expect(forced->node_balance_ran);
        cr_expect_eq(forced->n_moves, 2, "the per-tick cap still holds");

        /* forced, but balanced: the thresholds still say no */
        sim_free(s);
        s = sim_new(TWO_NODES, NULL);
        sim_busy(s, 10, 2, 0, 1);
        sim_busy(s, 20, 2, 2, 3);
        s->now += SEC;
        cr_assert_eq(policy_plan(s->state, sim_snapshot(s), s->topo, sim_params(s), s->now,
                                 /* force_node_balance= */ true, &balanced),
                     0);
        cr_expect_eq(balanced->n_moves, 0);
}

Test(policy, interrupted_imbalance_restarts_the_hold) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        static const bool busy[] = { true, true, false, true, true, true, true };
        static const size_t want[] = { 0, 0, 0, 0, 0, 0, 2 };

        sim_busy(s, 10, 4, 0, 1);
        for (unsigned tick = 0; tick < ELEMENTSOF(busy); tick++) {
                _cleanup_plan_ Plan *p = NULL;

                for (int i = 0; i < 4; i++)
                        sim_find(s, 10 + i)->demand_permyriad = busy[tick] ? BUSY : 0;
                p = sim_plan(s);
                /* tick 4 balances, but the imbalance is back since tick 3: 1 s */
                cr_expect_eq(p->n_moves, want[tick], "tick %u", tick);
        }
}

Test(policy, idle_node_multiplier_sets_the_balancing_ticks) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        s->t.node_imbalance_hold_usec = 0;
        s->t.idle_node_multiplier = 3;
        s->interval = SEC / 2; /* a snapshot after the plan: the measurement, not its expectation */
        sim_busy(s, 10, 4, 0, 1); /* node 1 idle */
        for (unsigned tick = 0; tick < 12; tick++) {
                _cleanup_plan_ Plan *p = sim_plan(s); /* not applied: same imbalance */

                cr_expect_eq(p->node_balance_ran, tick % 3 == 0, "tick %u", tick);
                cr_expect_eq(p->n_moves > 0, tick % 3 == 0, "tick %u", tick);
        }
}

Test(policy, busy_node_multiplier_sets_the_balancing_ticks) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        s->t.node_imbalance_hold_usec = 0;
        cr_assert_eq(s->t.busy_node_multiplier, 10);
        sim_busy(s, 10, 8, 0, 1);
        sim_busy(s, 20, 3, 2, 3); /* no CPU idle anywhere */
        for (unsigned tick = 0; tick < 21; tick++) {
                _cleanup_plan_ Plan *p = sim_plan(s);

                cr_expect_eq(p->node_balance_ran, tick % 10 == 0, "tick %u", tick);
                cr_expect_eq(p->n_moves > 0, tick % 10 == 0, "tick %u", tick);
        }
}

Test(policy, single_node_never_balances_nodes) {
        _cleanup_sim_ Sim *s = sim_new(ONE_NODE, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        sim_busy(s, 10, 8, 0, 0);
        p = sim_plan(s);
        cr_expect_not(p->node_balance_ran);
        cr_expect_eq(p->n_moves, 0);
}

/* Unmanaged load (a batch job) jumps between node 0 (even ticks) and node 1 (odd ticks). */
static void flip(Sim *s, unsigned tick) {
        for (unsigned c = 0; c < 4; c++)
                s->base[c] = (c < 2) == (tick % 2 == 0) ? BUSY : 0;
}

/*
 * Every tick the busiest node changes, so no pair of nodes stays imbalanced for the 2 s hold:
 * with the defaults, 60 ticks of a load flipping every tick move nothing (bound: 0).
 */
Test(policy, oscillating_load_never_outlasts_the_hold) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        s->t.idle_node_multiplier = 1; /* balance every tick, so the flip is seen */
        sim_busy(s, 10, 2, 0, 1);
        for (unsigned tick = 0; tick < 60; tick++) {
                _cleanup_plan_ Plan *p = NULL;
                uint64_t loads[2];

                flip(s, tick);
                cr_assert_eq(policy_node_loads(sim_snapshot(s), s->topo, loads), 0);
                /* even ticks: the batch job and both tasks on node 0 (30000 vs 0) */
                cr_expect_eq(loads[0], tick % 2 == 0 ? 3 * BUSY : 2 * BUSY, "tick %u", tick);
                p = sim_plan(s);
                sim_apply(s, p);
        }
        cr_expect_eq(s->moves, 0);
}

/*
 * Without the hold, the flip is chased, but each task moves at most once per migrate_cooldown
 * (10 s): over 60 ticks at most ceil(60 / 10) = 6 moves per task, 12 for the 2 tasks.
 */
Test(policy, oscillating_load_is_bounded_by_cooldown) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        uint64_t last[2] = { 0, 0 };

        s->t.node_imbalance_hold_usec = 0;
        s->t.idle_node_multiplier = 1;
        sim_busy(s, 10, 2, 0, 1);
        for (unsigned tick = 0; tick < 60; tick++) {
                _cleanup_plan_ Plan *p = NULL;

                flip(s, tick);
                p = sim_plan(s);
                for (size_t i = 0; i < p->n_moves; i++) {
                        uint64_t *l = &last[p->moves[i].pid - 10];

                        cr_expect(*l == 0 || s->now - *l >= s->t.migrate_cooldown_usec,
                                  "pid %d moved again after %" PRIu64 " us", p->moves[i].pid,
                                  s->now - *l);
                        *l = s->now;
                }
                sim_apply(s, p);
        }
        cr_expect_gt(s->moves, 0, "the flip is chased");
        cr_expect_leq(s->moves, 12);
}

Test(policy, moved_task_waits_for_cooldown) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        s->now = 100 * SEC; /* the plan is at 101 s */
        sim_busy(s, 10, 4, 0, 1);
        sim_find(s, 10)->last_move_usec = 92 * SEC; /* 9 s ago */
        sim_find(s, 11)->last_move_usec = 95 * SEC;
        sim_find(s, 12)->last_move_usec = 100 * SEC;
        sim_find(s, 13)->last_move_usec = 91 * SEC; /* 10 s ago: out of cooldown */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 13);
}

Test(policy, no_move_while_every_task_cools_down) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->now = 100 * SEC;
        sim_busy(s, 10, 4, 0, 1);
        for (int i = 0; i < 4; i++)
                sim_find(s, 10 + i)->last_move_usec = 92 * SEC;
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0);
}

Test(policy, moves_per_tick_are_capped) {
        static const uint64_t caps[] = { 0, 1, 2, 5 };

        for (size_t i = 0; i < ELEMENTSOF(caps); i++) {
                _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
                _cleanup_plan_ Plan *p = NULL;

                s->t.node_imbalance_hold_usec = 0;
                s->t.max_moves_per_tick = caps[i];
                sim_busy(s, 10, 16, 0, 3);
                p = sim_plan(s);
                cr_expect_eq(p->n_moves, caps[i], "cap %" PRIu64, caps[i]);
        }
}

Test(policy, repairs_count_towards_the_cap) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;
        PolicyTask *k;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        sim_busy(s, 10, 4, 0, 0); /* node 0 overloaded, CPU 1 idle */
        k = sim_task(s, 5, 0, BUSY);
        set_mask(s, k, "0");
        k->ours = true;
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 5);
        cr_expect_eq(p->moves[0].to_node, 0);
}

Test(policy, repairs_past_the_cap_are_taken_in_pid_order) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.max_moves_per_tick = 1;
        for (int i = 0; i < 3; i++) { /* array order 9, 8, 7 */
                PolicyTask *k = sim_task(s, 9 - i, 0, BUSY);

                set_mask(s, k, "0");
                k->ours = true;
        }
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 7);
}

/* ---- convergence */

/*
 * Seed 002's machine, defaults: 8 busy tasks start on node 0 (2 per CPU). The fewest moves that
 * give every task a CPU of its own is 4; resistance (4 tasks) keeps the rest near their memory.
 * Ticks: hold 2 s, balancing every 2nd tick, 2 moves a tick: 2 moves at the 3rd; the holds of
 * their nodes restart and count from the 4th (the first snapshot measured after them), so the
 * other 2 at the 7th.
 */
Test(policy, eight_tasks_on_numaq_get_a_cpu_each_in_4_moves) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        static const unsigned want[] = { 4, 2, 1, 1 };

        sim_busy(s, 10, 8, 0, 3);
        cr_expect_eq(sim_run(s, 6), 2);
        cr_expect_eq(sim_run(s, 1), 2);
        cr_expect_eq(sim_run(s, 30), 0, "stable");
        for (unsigned n = 0; n < 4; n++) {
                cr_expect_eq(sim_node_tasks(s, n), want[n], "node %u", n);
                cr_expect_leq(sim_node_load(s, n), 4 * BUSY, "node %u overloaded", n);
        }
}

/* The sum of the distances of the plans' cross-node moves so far is kept by sim_run_counting(). */
static size_t sim_run_counting(Sim *s, unsigned n, unsigned *distance_sum, unsigned *far_moves,
                               unsigned far) {
        const unsigned *d = topology_distances(s->topo);
        unsigned nodes = topology_n_nodes(s->topo);
        size_t before = s->moves;

        for (unsigned i = 0; i < n; i++) {
                _cleanup_plan_ Plan *p = sim_plan(s);

                if (getenv("POLICY_DEBUG"))
                        report_plan(stderr, p, &s->snap);
                for (size_t j = 0; j < p->n_moves; j++) {
                        int a = topology_node_index(s->topo, (unsigned) p->moves[j].from_node);
                        int b = topology_node_index(s->topo, (unsigned) p->moves[j].to_node);

                        cr_assert(a >= 0 && b >= 0);
                        *distance_sum += d[(size_t) a * nodes + (size_t) b];
                        *far_moves += d[(size_t) a * nodes + (size_t) b] >= far;
                }
                sim_apply(s, p);
        }
        return s->moves - before;
}

/* The issue's 3-node machine: node 1 at 12 from node 0, node 2 at 30 from both. 4 CPU-bound tasks
 * on node 0: every task can have a CPU of its own without the far node, so it ends 2/2/0 in two
 * moves, one a tick or two at once, and stays; also with 0.3 CPU of housekeeping on node 1 (an
 * emulated guest's: a node with one task there measured 1.28), where the second task still has
 * room and what the first two then wait is no task's worth. */
Test(policy, three_nodes_end_two_two_zero_in_two_moves) {
        for (unsigned run = 0; run < 4; run++) {
                _cleanup_sim_ Sim *s =
                        sim_new("pack:3 numa:1 core:2 pu:1", "10,12,30;12,10,30;30,30,10");
                unsigned dist = 0, far = 0;

                s->t.max_moves_per_tick = 1 + run % 2;
                s->base[3] = run < 2 ? 0 : 3000;
                sim_busy(s, 10, 4, 0, 1);
                cr_expect_eq(sim_run_counting(s, 30, &dist, &far, 30), 2, "run %u", run);
                cr_expect_eq(sim_node_tasks(s, 0), 2);
                cr_expect_eq(sim_node_tasks(s, 1), 2);
                cr_expect_eq(sim_node_tasks(s, 2), 0, "nothing crosses distance 30");
                cr_expect_eq(dist, 24);
                cr_expect_eq(far, 0);
        }
}

/* 8 tasks on node 0 of a 4-node chain (10/16/22/28): the fewest moves (6), the nearest first;
 * 2 per node at the end, with the distances that takes (2 x 16 + 2 x 22 + 2 x 28). */
Test(policy, eight_tasks_on_a_chain_of_four_nodes_take_the_fewest_and_nearest_moves) {
        _cleanup_sim_ Sim *s = sim_new("pack:4 numa:1 core:2 pu:1",
                                       "10,16,22,28;16,10,16,22;22,16,10,16;28,22,16,10");
        unsigned dist = 0, far = 0;

        s->t.max_moves_per_tick = 1;
        sim_busy(s, 10, 8, 0, 1);
        cr_expect_eq(sim_run_counting(s, 60, &dist, &far, 100), 6);
        for (unsigned n = 0; n < 4; n++)
                cr_expect_eq(sim_node_tasks(s, n), 2, "node %u", n);
        cr_expect_eq(dist, 2 * 16 + 2 * 22 + 2 * 28);
}

/* Balance by tiers: every node is full, node 4 far the busiest. Its near nodes (5-7, at 16) are
 * busier per CPU than the far ones (at 32), and both tiers pass their thresholds: the near tier is
 * balanced first, as the kernel's sched domains do. */
Test(policy, balance_takes_the_nearest_tier_that_qualifies) {
        _cleanup_sim_ Sim *s = sim_new(EIGHT_NODES, eight_distances);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        sim_busy(s, 10, 8, 8, 9); /* node 4: 4.0/CPU */
        for (unsigned c = 0; c < 16; c++)
                if (c < 8)
                        s->base[c] = BUSY; /* the far nodes: full, 1.0/CPU */
                else if (c >= 10)
                        (void) sim_task(s, (pid_t) (100 + c), (int) c, 3 * BUSY / 2); /* 1.5/CPU */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].from_node, 4);
        cr_expect_eq(p->moves[0].to_node, 5, "%s", p->moves[0].reason);
        cr_expect(strstr(p->moves[0].reason, "distance 16") != NULL, "%s", p->moves[0].reason);
}

/* Never farther than a node with room: node 4 is not overloaded (2 tasks, 2 CPUs), its near nodes
 * have an idle CPU each, and only the far idle nodes are imbalanced enough against it (gap 2 over
 * 1.5): no move. With the near nodes full, the far one is the next tier that qualifies. */
Test(policy, balance_never_goes_farther_than_a_node_with_room) {
        _cleanup_sim_ Sim *s = sim_new(EIGHT_NODES, eight_distances);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.idle_node_multiplier = 1;
        s->interval = SEC / 2; /* the plans are not applied */
        set_min_imbalance(s, "1");
        sim_busy(s, 10, 2, 8, 9);
        for (unsigned c = 10; c < 16; c += 2)
                s->base[c] = BUSY; /* nodes 5-7: 1.0 each, a CPU idle */
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0, "%s", p->n_moves ? p->moves[0].reason : "");
        plan_free(TAKE_PTR(p));
        for (unsigned c = 11; c < 16; c += 2)
                s->base[c] = BUSY; /* nodes 5-7 full */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].to_node, 0);
}

/* No overshoot: two moves from node 0 to node 1 (4 tasks on 2 CPUs -> 2/2), and the next
 * snapshot, begun before the second was made, still shows the moved task waiting on node 0
 * (3/1). The plan takes the loads the last one left (2/2) and moves nothing; a snapshot that
 * starts after it measures again. */
Test(policy, a_snapshot_begun_before_a_move_sees_the_loads_the_move_left) {
        _cleanup_sim_ Sim *s = sim_new("pack:3 numa:1 core:2 pu:1", "10,12,30;12,10,30;30,30,10");
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.idle_node_multiplier = 1;
        s->t.max_moves_per_tick = 1;
        sim_busy(s, 10, 4, 0, 1);
        cr_assert_eq(sim_run(s, 1), 1); /* 3/1/0, applied */
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1); /* 2/2/0, not applied: the measurement lags */
        cr_expect_eq(p->moves[0].to_node, 1);
        plan_free(TAKE_PTR(p));
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0, "%s", p->n_moves ? p->moves[0].reason : "");
        plan_free(TAKE_PTR(p));
        s->interval = SEC / 2;
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1, "the expectation lasts one interval");
        cr_expect(strstr(p->moves[0].reason, "(expected)") == NULL, "%s", p->moves[0].reason);
}

/* The reason of a move planned on expected loads says so. */
Test(policy, a_move_on_expected_loads_says_so) {
        _cleanup_sim_ Sim *s = sim_new("pack:3 numa:1 core:2 pu:1", "10,12,30;12,10,30;30,30,10");
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.idle_node_multiplier = 1;
        s->t.max_moves_per_tick = 1;
        sim_busy(s, 10, 6, 0, 1);
        cr_assert_eq(sim_run(s, 1), 1);
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect(strstr(p->moves[0].reason, "node 0 load 5.00 (expected) on 2 CPUs") != NULL, "%s",
                  p->moves[0].reason);
}

/* A move restarts the hold of every pair its nodes are in: with a 2 s hold and 1 s ticks, moves
 * come at least 2 ticks apart, each decided on loads measured after the one before. */
Test(policy, a_move_restarts_the_hold_of_its_pairs) {
        _cleanup_sim_ Sim *s = sim_new("pack:3 numa:1 core:2 pu:1", NULL);
        unsigned last = 0, moves = 0;

        s->t.node_imbalance_hold_usec = 2 * SEC;
        s->t.idle_node_multiplier = 1;
        s->t.max_moves_per_tick = 1;
        sim_busy(s, 10, 6, 0, 1);
        for (unsigned tick = 1; tick <= 20; tick++)
                if (sim_run(s, 1) > 0) {
                        if (moves++ > 0)
                                cr_expect_geq(tick - last, 2, "moves at ticks %u and %u", last,
                                              tick);
                        last = tick;
                }
        cr_expect_eq(moves, 4, "6/0/0 -> 2/2/2");
}

/* Memory in the cost: node 0 holds two memory-heavy tasks (256 MiB on it) and two CPU-only ones
 * (1 MiB), all CPU-bound; node 1 is idle. The CPU-only ones move, the heavy ones stay, and the
 * reason names the heavy one passed over. */
Test(policy, memory_heavy_tasks_stay_when_light_ones_make_the_same_balance) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 2;
        sim_busy(s, 10, 4, 0, 1);
        for (pid_t pid = 10; pid < 14; pid++) {
                sim_find(s, pid)->mem_kib = pid < 12 ? 256 * 1024 : 1024;
                sim_find(s, pid)->mem_exact = true;
        }
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 2);
        cr_expect_eq(p->moves[0].pid, 12);
        cr_expect_eq(p->moves[1].pid, 13);
        cr_expect(strstr(p->moves[0].reason, "task 1.00, 1 MiB on node 0; not pid 10 (256 MiB on "
                                             "node 0)") != NULL,
                  "%s", p->moves[0].reason);
}

/* Memory decides only between moves of the same balance: of node 0's two 1-CPU tasks with 1 GiB
 * and a 0.1-CPU one with 1 MiB, only a 1-CPU task evens node 0 (2.1) and idle node 1 out; the
 * small one would leave a gap of 1.9 tasks, not the same balance. */
Test(policy, memory_does_not_outweigh_a_better_balance) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        set_min_imbalance(s, "1");
        sim_busy(s, 10, 2, 0, 1);
        (void) sim_task(s, 12, 2, 1000);
        sim_find(s, 10)->mem_kib = sim_find(s, 11)->mem_kib = 1024 * 1024;
        sim_find(s, 12)->mem_kib = 1024;
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 10, "%s", p->moves[0].reason);
}

/* Without resistance ("0", as for SMT-sibling nodes), the same 8 tasks end 2 per node, in the
 * 6 moves that takes. */
Test(policy, eight_tasks_on_numaq_spread_evenly_without_resistance) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);

        set_min_imbalance(s, "0");
        sim_busy(s, 10, 8, 0, 3);
        cr_expect_eq(sim_run(s, 12), 6);
        cr_expect_eq(sim_run(s, 30), 0, "stable");
        for (unsigned n = 0; n < 4; n++)
                cr_expect_eq(sim_node_tasks(s, n), 2, "node %u", n);
        cr_expect_eq(sim_spread(s), 0);
}

/* 8 tasks on a 2x2 machine, no resistance: tick 2 moves 2 (8/0 -> 6/2); then no CPU is idle
 * anywhere, so nodes balance every busy_node_multiplier (10) ticks: tick 10 moves 2 more. */
Test(policy, eight_tasks_on_two_nodes_spread_evenly_without_resistance) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        set_min_imbalance(s, "0");
        sim_busy(s, 10, 8, 0, 1);
        cr_expect_eq(sim_run(s, 10), 2);
        cr_expect_eq(sim_run(s, 1), 2);
        cr_expect_eq(sim_run(s, 30), 0, "stable");
        cr_expect_eq(sim_node_tasks(s, 0), 4);
        cr_expect_eq(sim_node_tasks(s, 1), 4);
}

/* With "auto" (2 tasks on 2-CPU nodes), 5 vs 3 stays: every CPU is busy either way, so a move
 * would buy no throughput and cost the task its memory locality. */
Test(policy, resistance_holds_a_small_gap_once_every_cpu_is_busy) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        sim_busy(s, 10, 8, 0, 1);
        cr_expect_eq(sim_run(s, 40), 3);
        cr_expect_eq(sim_node_tasks(s, 0), 5);
        cr_expect_eq(sim_node_tasks(s, 1), 3);
}

/* ---- what is never moved */

Test(policy, foreign_tasks_are_never_moved) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);

        sim_busy(s, 10, 8, 0, 1);
        for (int i = 0; i < 8; i++) {
                PolicyTask *k = sim_find(s, 10 + i);

                set_mask(s, k, "0-1");
                k->foreign = true;
        }
        cr_expect_eq(sim_run(s, 30), 0);
}

Test(policy, override_foreign_affinity_moves_them_past_their_mask) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.override_foreign_affinity = true;
        sim_busy(s, 10, 8, 0, 1);
        for (int i = 0; i < 8; i++) {
                PolicyTask *k = sim_find(s, 10 + i);

                set_mask(s, k, "0-1");
                k->foreign = true;
        }
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 2);
        expect_mask(p->moves[0].mask, "2-3");
}

/* A task's own affinity (not ours, not foreign) is its cpuset: a move stays inside it. */
Test(policy, move_stays_inside_the_tasks_cpuset) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        sim_busy(s, 10, 6, 0, 1);
        for (int i = 0; i < 6; i++)
                set_mask(s, sim_find(s, 10 + i), i == 5 ? "0-2" : "0-1");
        p = sim_plan(s);
        cr_assert_eq(p->n_moves, 1);
        cr_expect_eq(p->moves[0].pid, 15, "the only one whose cpuset reaches node 1");
        expect_mask(p->moves[0].mask, "2");
}

/* ---- weights */

Test(policy, protected_weight_rises_stepwise_to_max_then_decays_to_base) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", /* protected= */ true, 100);
        /* weight after each tick (1 s apart); pressure 30% for 10 ticks, then 2%: steps of 50
         * every 3 s, the last one up cut at weight_max (180), the last one down at base (100) */
        static const uint32_t want[] = { 100, 100, 100, 150, 150, 150, 180, 180, 180, 180,
                                         180, 180, 180, 130, 130, 130, 100, 100, 100, 100 };

        s->t.weight_max = 180;
        cr_assert_eq(s->t.pressure_hold_usec, 3 * SEC);
        cr_assert_eq(s->t.weight_step, 50);
        for (unsigned tick = 0; tick < ELEMENTSOF(want); tick++) {
                _cleanup_plan_ Plan *p = NULL;

                g->pressure_permyriad = tick < 10 ? 3000 : 200;
                p = sim_plan(s);
                sim_apply(s, p);
                cr_expect_eq(g->weight, want[tick], "tick %u", tick);
                cr_expect_leq(p->n_weights, 1);
        }
}

Test(policy, pressure_between_the_marks_keeps_the_weight) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", true, 300);

        g->base_weight = 100;
        g->pressure_permyriad = 700; /* between 5% and 10% */
        cr_expect_eq(sim_run(s, 20), 0);
        cr_expect_eq(g->weight, 300);
}

/* Below half its mark while as busy as when pressed is the weight working: it stays (stepping
 * down would bring the pressure back, a weight flapping every hold or two); once the group's
 * work eases to a quarter of that, it steps down. */
Test(policy, a_raised_weight_stays_while_the_group_is_as_busy_and_goes_once_it_is_quiet) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", true, 100);
        /* 1 s ticks: pressed on 2 CPUs for 4 ticks, below its mark on 1.8 CPUs for 10, then
         * below on 0.4 CPU (a quarter of 2 CPUs is 0.5): one step up, one step down after 3 s */
        static const uint32_t want[] = {
                100,  100,  100,  1000, 1000, 1000, 1000, 1000, 1000, 1000,
                1000, 1000, 1000, 1000, 1000, 1000, 1000, 100,  100,  100
        };

        s->t.weight_step = 900;
        cr_assert_eq(s->t.pressure_hold_usec, 3 * SEC);
        for (unsigned tick = 0; tick < ELEMENTSOF(want); tick++) {
                _cleanup_plan_ Plan *p = NULL;

                g->pressure_permyriad = tick < 4 ? 3000 : 200;
                g->util_permyriad = tick < 4 ? 20000 : tick < 14 ? 18000 : 4000;
                p = sim_plan(s);
                sim_apply(s, p);
                cr_expect_eq(g->weight, want[tick], "tick %u", tick);
                if (tick == 17)
                        cr_expect_str_eq(p->weights[0].reason,
                                         "pressure 2.00% < 5.00% for 3.0 s: down to 100, base 100");
        }
}

/* A restarted daemon (no state) finds weights its record says it raised: a group still busy
 * keeps its weight, a quiet one (under a tenth of a CPU) gets it back. */
Test(policy, after_a_restart_a_busy_group_keeps_its_raised_weight_and_a_quiet_one_not) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *busy = sim_group(s, "cgbalance.slice/a", true, 1000);
        PolicyCgroup *quiet = sim_group(s, "cgbalance.slice/b", true, 1000);

        busy->base_weight = quiet->base_weight = 100;
        busy->pressure_permyriad = quiet->pressure_permyriad = 100;
        busy->util_permyriad = 5000;
        quiet->util_permyriad = POLICY_QUIET_PERMYRIAD - 1;
        (void) sim_run(s, 4);
        cr_expect_eq(busy->weight, 1000);
        cr_expect_eq(quiet->weight, 950);
}

Test(policy, protected_group_below_weight_min_is_raised_at_once) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", true, 20);
        _cleanup_plan_ Plan *p = NULL;

        p = sim_plan(s);
        cr_assert_eq(p->n_weights, 1);
        cr_expect_eq(p->weights[0].from, 20);
        cr_expect_eq(p->weights[0].to, s->t.weight_min);
        cr_expect_eq(g->weight, 20, "the plan does not write the snapshot");
}

/* A reload lowered weight_max under a weight the daemon raised: it comes down at once; a weight
 * the admin set that high (its base) stays. */
Test(policy, weight_above_a_lowered_max_comes_down_at_once) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *ours = sim_group(s, "cgbalance.slice/a", true, 900);
        PolicyCgroup *admin = sim_group(s, "cgbalance.slice/b", true, 900);
        _cleanup_plan_ Plan *p = NULL;

        ours->base_weight = 100;
        ours->pressure_permyriad = admin->pressure_permyriad = 3000;
        s->t.weight_max = 500;
        p = sim_plan(s);
        cr_assert_eq(p->n_weights, 1);
        cr_expect_eq(p->weights[0].cgroup, 0);
        cr_expect_eq(p->weights[0].to, 500);
}

Test(policy, unprotected_group_is_never_raised) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", false, 100);

        g->pressure_permyriad = 9000;
        (void) sim_run(s, 20);
        cr_expect_eq(g->weight, 100);
}

/* A reload took it off protected_cgroups: the raise goes, a step per hold, pressure or not. */
Test(policy, group_no_longer_protected_decays_to_base) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", false, 200);
        static const uint32_t want[] = { 200, 200, 200, 150, 150, 150, 100, 100, 100, 100 };

        g->base_weight = 100;
        g->pressure_permyriad = 9000;
        for (unsigned tick = 0; tick < ELEMENTSOF(want); tick++) {
                _cleanup_plan_ Plan *p = sim_plan(s);

                sim_apply(s, p);
                cr_expect_eq(g->weight, want[tick], "tick %u", tick);
        }
}

Test(policy, group_that_left_the_snapshot_starts_its_hold_again) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", true, 100);
        /* present, present, gone, then present: 3 s from its return */
        static const bool present[] = { true, true, false, true, true, true, true };
        static const uint32_t want[] = { 100, 100, 100, 100, 100, 100, 150 };

        g->pressure_permyriad = 3000;
        for (unsigned tick = 0; tick < ELEMENTSOF(want); tick++) {
                _cleanup_plan_ Plan *p = NULL;

                s->n_cgroups = present[tick] ? 1 : 0;
                p = sim_plan(s);
                sim_apply(s, p);
                cr_expect_eq(g->weight, want[tick], "tick %u", tick);
        }
}

/* No PSI: the group's tasks wait (2 tasks on one CPU: 50% each, 100% together). */
Test(policy, without_psi_task_wait_stands_in_for_pressure) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", true, 100);
        PolicyCgroup *h = sim_group(s, "cgbalance.slice/b", true, 100);

        g->has_pressure = h->has_pressure = false;
        sim_task(s, 10, 0, BUSY)->cgroup = 0;
        sim_task(s, 11, 0, BUSY)->cgroup = 0;
        sim_task(s, 20, 2, BUSY)->cgroup = 1; /* a CPU to itself: no wait */
        (void) sim_run(s, 4);
        cr_expect_eq(g->weight, 150);
        cr_expect_eq(h->weight, 100);
}

/* Weight before placement: node 0 is overloaded with a pressured protected group's tasks; while
 * its weight can rise they stay, once it is at weight_max they may move. */
Test(policy, weight_before_placement) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", true, 100);
        _cleanup_plan_ Plan *p = NULL, *q = NULL;

        s->t.node_imbalance_hold_usec = 0;
        g->pressure_permyriad = 5000;
        sim_busy(s, 10, 6, 0, 1);
        for (int i = 0; i < 6; i++)
                sim_find(s, 10 + i)->cgroup = 0;
        s->t.idle_node_multiplier = 1;
        p = sim_plan(s);
        cr_expect_eq(p->n_moves, 0, "weight first");
        g->weight = (uint32_t) s->t.weight_max;
        q = sim_plan(s);
        cr_expect_eq(q->n_moves, 2, "then placement");
}

/* ---- the ladder */

#define JOB 0 /* the protected group of ladder_sim() */
#define RING 1 /* its contender */

/*
 * A protected job at weight_max under 30% pressure, its task on CPU 0, beside an unprotected
 * ring group using 1.5 CPUs with a task on CPU 0 too; the kernel has cpu.idle.
 */
static Sim *ladder_sim(void) {
        Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *job = sim_group(s, "cgbalance.slice/job", true, 1000);
        PolicyCgroup *ring = sim_group(s, "cgbalance.slice/ring", false, 100);

        job->base_weight = 100;
        job->pressure_permyriad = 3000;
        job->util_permyriad = 5000;
        ring->util_permyriad = 15000;
        job->has_idle = ring->has_idle = true;
        sim_task(s, 10, 0, 5000)->cgroup = JOB;
        sim_task(s, 20, 0, BUSY)->cgroup = RING;
        sim_task(s, 21, 1, 5000)->cgroup = RING;
        cr_assert_eq(s->t.weight_max, 1000);
        cr_assert_eq(s->t.escalate_hold_usec, 3 * SEC);
        cr_assert_eq(s->t.quota_floor_pct, 10);
        return s;
}

/* Runs up to max ticks, applying each plan, until one has a step: its number (1-based) and the
 * step in *ret; 0 if none came. */
static unsigned ladder_next(Sim *s, unsigned max, PlanEscalation *ret) {
        for (unsigned tick = 1; tick <= max; tick++) {
                _cleanup_plan_ Plan *p = sim_plan(s);

                if (getenv("POLICY_DEBUG"))
                        report_plan(stderr, p, &s->snap);
                sim_apply(s, p);
                cr_assert_leq(p->n_escalations, 1, "one step a hold");
                if (p->n_escalations == 1) {
                        *ret = p->escalations[0];
                        ret->cpus = NULL; /* the plan's: see s->partitions */
                        return tick;
                }
        }
        return 0;
}

static void expect_step(const PlanEscalation *e, size_t cgroup, size_t for_cgroup,
                        PolicyLever lever, uint32_t from, uint32_t to) {
        cr_expect_eq(e->cgroup, cgroup);
        cr_expect_eq(e->for_cgroup, for_cgroup);
        cr_expect_eq(e->lever, lever, "lever %d", (int) e->lever);
        cr_expect_eq(e->from, from, "from %" PRIu32, e->from);
        cr_expect_eq(e->to, to, "to %" PRIu32, e->to);
}

Test(policy, ladder_first_step_is_idle_after_the_hold) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        cr_assert_eq(ladder_next(s, 10, &e), 4, "ticks 1-3 hold, the 4th steps");
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        cr_expect(plan_escalation_is_up(&e));
        cr_expect_str_eq(e.reason, "pressure 30.00% > 10.00% for 3.0 s at weight_max 1000: "
                                   "heaviest contender, 1.50 CPUs");
}

/* A job pressed by its own tasks (make -j4 on one CPU) beside a load group that barely runs: a
 * step on that group would cure nothing, and none is taken. */
Test(policy, ladder_takes_no_step_on_a_group_that_barely_runs) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].util_permyriad = POLICY_CONTENDER_PERMYRIAD - 1;
        cr_expect_eq(ladder_next(s, 10, &e), 0, "a step on %zu", e.cgroup);
        /* the job was held above its mark all along: the step comes with the contender */
        s->cgroups[RING].util_permyriad = POLICY_CONTENDER_PERMYRIAD;
        cr_assert_eq(ladder_next(s, 10, &e), 1);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
}

/* A group its step starved (cpu.idle: 0.01 CPU) still contends: the next step goes on it, and
 * the idle is not given back while the job is pressed. */
Test(policy, ladder_keeps_stepping_a_group_its_step_starved) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        s->cgroups[RING].util_permyriad = 100;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 1000);
}

Test(policy, ladder_waits_for_weight_max) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].weight = 500;
        s->t.weight_step = 100;
        /* 600 at tick 4, 700 at 7 ... 1000 at 16, seen at weight_max from tick 17: the hold
         * ends at tick 20 */
        cr_expect_eq(ladder_next(s, 30, &e), 20);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
}

/* Under a sched_ext scheduler cpu.weight and cpu.idle do nothing: no weight step, and the
 * ladder goes to the quota without waiting for a weight_max it cannot reach. */
Test(policy, weights_ignored_changes_no_weight_and_escalates_from_any_weight) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->sched_ext = true;
        s->cgroups[JOB].weight = 100;
        s->t.weight_step = 100;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 7500);
        cr_expect_eq(s->cgroups[JOB].weight, 100, "the weight was changed");
}

Test(policy, ladder_quota_first_step_is_half_the_use) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 7500);
}

Test(policy, ladder_quota_first_step_is_at_least_the_floor) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        s->cgroups[RING].util_permyriad = 1500;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 1000);
}

Test(policy, ladder_goes_idle_then_halves_the_quota_each_hold_down_to_the_floor) {
        _cleanup_sim_ Sim *s = ladder_sim();
        static const struct {
                PolicyLever lever;
                uint32_t from, to;
        } want[] = {
                { POLICY_LEVER_IDLE, 0, 1 },        { POLICY_LEVER_QUOTA, 0, 7500 },
                { POLICY_LEVER_QUOTA, 7500, 3750 }, { POLICY_LEVER_QUOTA, 3750, 1875 },
                { POLICY_LEVER_QUOTA, 1875, 1000 },
        };
        PlanEscalation e;

        for (size_t i = 0; i < ELEMENTSOF(want); i++) {
                cr_assert_eq(ladder_next(s, 10, &e), i == 0 ? 4 : 3, "step %zu", i);
                expect_step(&e, RING, JOB, want[i].lever, want[i].from, want[i].to);
        }
}

/* At the floor the ladder ends: partition is not implemented, so no step is planned. */
/* The ring at cpu.idle and its floor: the last step keeps it off the job's CPU. */
static void ring_at_floor(Sim *s) {
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        s->cgroups[RING].quota_permyriad = 1000;
        s->cgroups[RING].quota_ours = true;
}

/* What a task may run on, as a cpulist, for messages and comparisons. */
static char *mask_text(const PolicyTask *k) {
        char *t = NULL;

        cr_assert_eq(cpumask_format(k->allowed, &t), 0);
        return t;
}

Test(policy, ladder_at_the_floor_partitions_then_takes_no_further_step) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        ring_at_floor(s);
        cr_expect(sim_params(s)->escalate_lever[POLICY_LEVER_PARTITION],
                  "partition is allowed by default");
        cr_assert_eq(ladder_next(s, 20, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_PARTITION, 0, 1);
        cr_expect_eq(ladder_next(s, 20, &e), 0, "the ladder's end");
}

/* The job's CPU (0, where its task ran) is kept off to the ring: each ring task's mask loses it
 * on the step's tick, a task that comes later on the next tick, outside max_moves_per_tick; the
 * job's own mask stays. */
Test(policy, ladder_partition_keeps_the_contenders_tasks_off_the_protected_cpus) {
        _cleanup_sim_ Sim *s = ladder_sim();
        _cleanup_free_ char *m20 = NULL, *m21 = NULL, *m22 = NULL, *m10 = NULL;
        PlanEscalation e;

        ring_at_floor(s);
        s->t.max_moves_per_tick = 0;
        cr_assert_eq(ladder_next(s, 20, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_PARTITION, 0, 1);
        cr_assert_not_null(s->cgroups[RING].partition);
        cr_expect(cpumask_isset(s->cgroups[RING].partition, 0));
        m20 = mask_text(sim_find(s, 20)), m21 = mask_text(sim_find(s, 21));
        m10 = mask_text(sim_find(s, 10));
        cr_expect_str_eq(m20, "1-3");
        cr_expect_str_eq(m21, "1-3");
        cr_expect_str_eq(m10, "0-3", "the job's mask is not changed");
        cr_expect_neq(sim_find(s, 20)->cpu, 0);

        sim_task(s, 22, 0, BUSY)->cgroup = RING;
        {
                _cleanup_plan_ Plan *p = sim_plan(s);

                cr_assert_eq(p->n_moves, 1, "the newcomer, cap or not");
                cr_expect_eq(p->moves[0].pid, 22);
                cr_expect_eq(p->moves[0].from_node, p->moves[0].to_node);
                cr_expect(strstr(p->moves[0].reason, "kept off CPUs 0") != NULL, "%s",
                          p->moves[0].reason);
                sim_apply(s, p);
        }
        m22 = mask_text(sim_find(s, 22));
        cr_expect_str_eq(m22, "1-3");
        {
                _cleanup_plan_ Plan *p = sim_plan(s);

                cr_expect_eq(p->n_moves, 0, "nothing left to narrow");
        }
}

/* A mask someone else narrowed is theirs: left as it is, and a contender with nothing else
 * takes no partition step at all (it would change nothing). */
Test(policy, ladder_partition_never_narrows_a_foreign_mask) {
        _cleanup_sim_ Sim *s = ladder_sim();
        _cleanup_free_ char *m20 = NULL;
        PlanEscalation e;

        ring_at_floor(s);
        sim_find(s, 20)->foreign = sim_find(s, 21)->foreign = true;
        cr_expect_eq(ladder_next(s, 20, &e), 0);
        sim_find(s, 21)->foreign = false;
        cr_assert_eq(ladder_next(s, 20, &e), 1, "held for 20 ticks already");
        expect_step(&e, RING, JOB, POLICY_LEVER_PARTITION, 0, 1);
        m20 = mask_text(sim_find(s, 20));
        cr_expect_str_eq(m20, "0-3");
}

/* partition_max_cpus bounds it (0: no partition), and it never takes every CPU. */
Test(policy, ladder_partition_is_bounded_by_partition_max_cpus) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        ring_at_floor(s);
        s->t.partition_max_cpus = 0;
        cr_expect_eq(ladder_next(s, 20, &e), 0);
        s->t.partition_max_cpus = 8;
        for (pid_t pid = 11; pid < 14; pid++)
                sim_task(s, pid, (int) (pid - 10), 5000)->cgroup = JOB;
        cr_assert_eq(ladder_next(s, 20, &e), 1, "held for 20 ticks already");
        expect_step(&e, RING, JOB, POLICY_LEVER_PARTITION, 0, 3);
        cr_expect_eq(cpumask_count(s->cgroups[RING].partition), 3, "3 of the 4 CPUs");
}

Test(policy, ladder_skips_idle_where_the_kernel_lacks_it) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].has_idle = false;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 7500);
}

Test(policy, ladder_skips_a_lever_not_in_escalate_steps) {
        _cleanup_sim_ Sim *s = ladder_sim();
        ConfigError ce = { 0 };
        PlanEscalation e;

        cr_assert_eq(config_set_one(&tunables_schema, &s->t, "escalate_steps", "quota", &ce), 0,
                     "%s", ce.message);
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 7500);
}

/* A limit someone else set is theirs: not lowered, not removed, and no idle of theirs undone. */
Test(policy, ladder_never_touches_a_foreign_quota) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->t.partition_max_cpus = 0; /* the ladder's end is then the foreign limit */
        s->cgroups[RING].idle = true; /* set by someone else too */
        s->cgroups[RING].quota_permyriad = 5000;
        cr_expect_eq(ladder_next(s, 20, &e), 0);
        s->cgroups[JOB].pressure_permyriad = 100;
        cr_expect_eq(ladder_next(s, 20, &e), 0, "nothing of ours to give back");
}

Test(policy, escalate_no_takes_no_step_and_gives_back_ours) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->t.escalate = false;
        cr_expect_eq(ladder_next(s, 10, &e), 0);
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, POLICY_NO_CGROUP, POLICY_LEVER_IDLE, 1, 0);
        cr_expect_str_eq(e.reason, "escalation is off, for 3.0 s: giving back");
}

Test(policy, throttled_protected_group_is_not_escalated_for) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].throttled_permyriad = 3000;
        cr_expect_eq(ladder_next(s, 10, &e), 0);
        /* what was set before it was throttled goes back, saying why */
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_assert_neq(ladder_next(s, 10, &e), 0);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 1, 0);
        cr_expect(!plan_escalation_is_up(&e));
        cr_expect(strstr(e.reason, "throttled 30.00% of the time by its own quota") != NULL, "%s",
                  e.reason);
}

/* The slice above both groups at its CPU limit (the hazard's cap): the protected group's
 * pressure is that limit, which no step on a sibling cures. */
Test(policy, a_protected_group_under_a_throttled_ancestor_is_not_escalated_for) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PolicyCgroup *slice = sim_group(s, "cgbalance.slice", false, 100);
        PlanEscalation e;

        slice->util_permyriad = 15000;
        slice->throttled_permyriad = 4000;
        cr_expect_eq(ladder_next(s, 10, &e), 0, "a step under a throttled slice");
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_assert_neq(ladder_next(s, 10, &e), 0);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 1, 0);
        cr_expect(strstr(e.reason, "cgbalance.slice throttled 40.00% of the time by its quota") !=
                          NULL,
                  "%s", e.reason);
        /* the limit lifted: the pressure is contention again */
        slice->throttled_permyriad = 0;
        cr_assert_neq(ladder_next(s, 10, &e), 0);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
}

Test(policy, throttled_at_the_threshold_still_escalates) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].throttled_permyriad = POLICY_THROTTLED_PERMYRIAD;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
}

/* Three unprotected groups: two on the job's CPU 0 (the heavier first), one kept on node 1. */
Test(policy, ladder_contenders_heaviest_first_and_only_on_the_protected_cpus) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PolicyCgroup *light = sim_group(s, "cgbalance.slice/a-light", false, 100);
        PolicyCgroup *far = sim_group(s, "cgbalance.slice/far", false, 100);
        PlanEscalation e;

        s->t.max_moves_per_tick = 0; /* node 1 would take some: keep the CPUs as they are */
        light->util_permyriad = 5000;
        light->has_idle = far->has_idle = true;
        far->util_permyriad = 30000;
        sim_task(s, 30, 0, 2000)->cgroup = 2;
        set_mask(s, sim_task(s, 40, 2, BUSY), "2-3");
        sim_find(s, 40)->cgroup = 3;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        /* the ring at its floor: its partition, then the next heaviest contender */
        s->cgroups[RING].quota_permyriad = 1000;
        s->cgroups[RING].quota_ours = true;
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_PARTITION, 0, 1);
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, 2, JOB, POLICY_LEVER_IDLE, 0, 1);
        for (unsigned i = 0; i < 6; i++)
                if (ladder_next(s, 10, &e))
                        cr_expect_neq(e.cgroup, 3, "the group on node 1 never contends");
        cr_expect_not(far->idle);
        cr_expect_eq(far->quota_permyriad, 0);
}

/* A group that holds the protected one (its parent) is no contender, however busy. */
Test(policy, ladder_never_acts_on_a_group_holding_a_protected_one) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PolicyCgroup *parent = sim_group(s, "cgbalance.slice", false, 100);
        PlanEscalation e;

        parent->util_permyriad = 40000;
        parent->has_idle = true;
        sim_task(s, 50, 0, 2000)->cgroup = 2;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        cr_expect_eq(e.cgroup, RING);
}

/* Below half the mark: the quota goes (it no longer binds), then idle, one step a hold. */
Test(policy, ladder_steps_back_in_reverse_when_pressure_stays_below_half) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].pressure_permyriad = 200;
        s->cgroups[JOB].util_permyriad = 500; /* gone quiet */
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        s->cgroups[RING].quota_permyriad = 20000;
        s->cgroups[RING].quota_ours = true;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 20000, 0);
        cr_expect(!plan_escalation_is_up(&e));
        cr_expect_str_eq(e.reason, "pressure 2.00% < 5.00% for 3.0 s: lightest contender, 1.50 "
                                   "CPUs");
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 1, 0);
        cr_expect_eq(ladder_next(s, 10, &e), 0, "nothing of ours left");
}

/* Low pressure while the protected group is still busy is the steps working: giving them back
 * would bring the pressure back, and the lever would flap every two holds. */
Test(policy, ladder_keeps_the_steps_while_the_protected_group_is_busy) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].pressure_permyriad = 200;
        s->cgroups[JOB].util_permyriad = POLICY_QUIET_PERMYRIAD;
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_expect_eq(ladder_next(s, 20, &e), 0, "a step back while busy");
        s->cgroups[JOB].util_permyriad = POLICY_QUIET_PERMYRIAD - 1;
        cr_assert_eq(ladder_next(s, 10, &e), 4, "quiet: back after the hold");
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 1, 0);
}

/* A job that works and sleeps beside a periodic task of its group (burst-rings): between the
 * bursts the group still uses more than a tenth of a CPU, but a small part of what it used when
 * pressed, and the steps go back; a fall to more than a quarter keeps them. */
Test(policy, ladder_gives_back_when_the_protected_burst_is_over) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        sim_task(s, 11, 1, 5000)->cgroup = JOB;
        s->cgroups[JOB].util_permyriad = 15000; /* pressed while it works on 2 CPUs */
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        s->cgroups[JOB].pressure_permyriad = 200;
        s->cgroups[JOB].util_permyriad = 5001; /* over a quarter of 1.5 CPUs: the steps working */
        cr_expect_eq(ladder_next(s, 20, &e), 0, "a step back while a quarter busy");
        s->cgroups[JOB].util_permyriad = 1400; /* the periodic task alone */
        cr_assert_gt(POLICY_QUIET_PERMYRIAD, 0);
        cr_assert_gt(1400, POLICY_QUIET_PERMYRIAD, "busier than quiet in absolute terms");
        cr_assert_eq(ladder_next(s, 10, &e), 4, "the burst is over: back after the hold");
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 1, 0);
        cr_expect(strstr(e.reason, "pressure 2.00% < 5.00%") != NULL, "%s", e.reason);
        /* the next burst presses it again: up again, once its weight (stepped down meanwhile)
         * is back at weight_max */
        s->cgroups[JOB].pressure_permyriad = 3000;
        s->cgroups[JOB].util_permyriad = 15000;
        cr_assert_neq(ladder_next(s, 100, &e), 0);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        cr_expect_eq(s->cgroups[JOB].weight, 1000);
}

/* On the way back the partition goes first, and the masks it narrowed are the actuator's to put
 * back (the plan moves nothing). */
Test(policy, ladder_gives_the_partition_back_first) {
        _cleanup_sim_ Sim *s = ladder_sim();
        _cleanup_free_ char *back = NULL;
        PlanEscalation e;

        ring_at_floor(s);
        cr_assert_eq(ladder_next(s, 20, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_PARTITION, 0, 1);
        s->cgroups[JOB].pressure_permyriad = 200;
        s->cgroups[JOB].util_permyriad = 500; /* gone quiet */
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_PARTITION, 1, 0);
        cr_expect(!plan_escalation_is_up(&e));
        cr_expect_null(s->cgroups[RING].partition);
        back = mask_text(sim_find(s, 20));
        cr_expect_str_eq(back, "0-3");
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 1000, 2000); /* it binds: doubled */
}

/* Up two steps, given back as the burst ends; pressed again, its weight back at weight_max. */
static void burst_then_press_again(Sim *s, uint64_t pause_usec) {
        PlanEscalation e;

        s->t.partition_max_cpus = 0;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 7500);
        s->cgroups[JOB].pressure_permyriad = 200;
        s->cgroups[JOB].util_permyriad = 500; /* the burst is over */
        s->cgroups[RING].util_permyriad = 7000; /* held to its limit: it binds */
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 7500, 15000);
        s->cgroups[RING].util_permyriad = 10000; /* under 90% of it: it goes */
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 15000, 0);
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 1, 0);
        s->now += pause_usec;
        s->cgroups[JOB].pressure_permyriad = 3000;
        s->cgroups[JOB].util_permyriad = 5000;
        s->cgroups[JOB].weight = 1000;
        s->cgroups[RING].util_permyriad = 15000;
}

/* A job using (nearly) all the CPUs its tasks ran on is pressed by its own tasks: no step on a
 * neighbour gives it more, and none is taken; below that share it escalates. */
Test(policy, ladder_takes_no_step_for_a_group_pressed_by_its_own_tasks) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->t.max_moves_per_tick = 0; /* its tasks stay on CPU 0 */
        /* one task on its one CPU, 85% of it: the rest is the ring's doing */
        s->cgroups[JOB].util_permyriad = POLICY_SATURATED_PERMYRIAD;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        /* three tasks that want the CPU each (a job's two and a tick's fifth) on it */
        sim_task(s, 11, 0, BUSY)->cgroup = JOB;
        sim_task(s, 12, 0, 2000)->cgroup = JOB;
        cr_expect_eq(ladder_next(s, 20, &e), 0, "its own tasks press it");
        s->cgroups[JOB].util_permyriad = POLICY_SATURATED_PERMYRIAD - 1;
        cr_assert_eq(ladder_next(s, 10, &e), 4, "under 85%: the ring takes the rest");
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 7500);
}

/* A contender starved by its step (cpu.idle beside the pressed job: it ran not at all) still
 * contends: its step is working, and is not released as if it contended with nobody. */
Test(policy, ladder_keeps_a_contender_its_step_starved) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        s->cgroups[RING].util_permyriad = 0;
        sim_find(s, 20)->demand_permyriad = 0, sim_find(s, 21)->demand_permyriad = 0;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 1000);
        cr_expect(plan_escalation_is_up(&e), "not given back");
}

/* A job that works in bursts: pressed again soon, it gets back at once, a step a tick, the
 * steps its last burst ended with, the next only after the hold. */
Test(policy, ladder_pressed_again_soon_takes_back_what_it_gave_back_at_once) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        burst_then_press_again(s, 5 * SEC);
        cr_assert_eq(ladder_next(s, 10, &e), 1, "no hold");
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        cr_expect(strstr(e.reason, "pressed again") != NULL, "%s", e.reason);
        cr_assert_eq(ladder_next(s, 10, &e), 1, "no hold for the second either");
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 0, 7500);
        cr_assert_eq(ladder_next(s, 10, &e), 3, "a step beyond the last burst's waits its hold");
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 7500, 3750);
}

/* Past escalate_memory, or with it 0, the steps wait their holds again. */
Test(policy, ladder_forgets_what_it_gave_back_after_escalate_memory) {
        _cleanup_sim_ Sim *a = ladder_sim(), *b = ladder_sim();
        PlanEscalation e;

        burst_then_press_again(a, 61 * SEC);
        cr_assert_eq(ladder_next(a, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        b->t.escalate_memory_usec = 0;
        burst_then_press_again(b, 5 * SEC);
        cr_assert_eq(ladder_next(b, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
}

Test(policy, ladder_step_back_doubles_a_quota_that_still_binds) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].pressure_permyriad = 200;
        s->cgroups[JOB].util_permyriad = 500; /* gone quiet */
        s->cgroups[RING].quota_permyriad = 1000;
        s->cgroups[RING].quota_ours = true;
        s->cgroups[RING].throttled_permyriad = 4000;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 1000, 2000);
        cr_expect(!plan_escalation_is_up(&e));
        s->cgroups[RING].throttled_permyriad = 0;
        s->cgroups[RING].util_permyriad = 1900; /* 95% of its limit: still binds */
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 2000, 4000);
        s->cgroups[RING].util_permyriad = 1000; /* a quarter: no longer */
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 4000, 0);
}

Test(policy, ladder_keeps_its_steps_between_the_marks) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].pressure_permyriad = 700;
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_expect_eq(ladder_next(s, 20, &e), 0);
}

/* The protected group left the snapshot: its contender gets its steps back, one a hold. */
Test(policy, ladder_gives_back_when_the_protected_group_is_gone) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *ring = sim_group(s, "cgbalance.slice/ring", false, 100);
        PlanEscalation e;

        ring->util_permyriad = 15000;
        ring->idle = ring->idle_ours = true;
        ring->quota_permyriad = 7500;
        ring->quota_ours = ring->has_idle = true;
        sim_task(s, 20, 0, BUSY)->cgroup = 0;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, 0, POLICY_NO_CGROUP, POLICY_LEVER_QUOTA, 7500, 15000);
        cr_expect_str_eq(e.reason, "it contends with no protected group, for 3.0 s: giving back");
        cr_assert_eq(ladder_next(s, 10, &e), 3);
        expect_step(&e, 0, POLICY_NO_CGROUP, POLICY_LEVER_QUOTA, 15000, 30000);
}

/* Escalated for a job that then leaves the snapshot (its group removed): the ring is released. */
Test(policy, ladder_releases_when_the_protected_group_leaves_the_snapshot) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        PolicyCgroup *ring = sim_group(s, "cgbalance.slice/ring", false, 100);
        PolicyCgroup *job = sim_group(s, "cgbalance.slice/job", true, 1000);
        PlanEscalation e;

        ring->util_permyriad = 15000;
        ring->has_idle = true;
        job->pressure_permyriad = 3000;
        sim_task(s, 10, 0, 5000)->cgroup = 1;
        sim_task(s, 20, 0, BUSY)->cgroup = 0;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, 0, 1, POLICY_LEVER_IDLE, 0, 1);
        s->n_cgroups = 1; /* the job's group is gone, its task with it */
        s->tasks[0].cgroup = POLICY_NO_CGROUP;
        cr_assert_eq(ladder_next(s, 10, &e), 4, "a hold from when it went");
        expect_step(&e, 0, POLICY_NO_CGROUP, POLICY_LEVER_IDLE, 1, 0);
        cr_expect_eq(ladder_next(s, 10, &e), 0, "nothing of ours left");
}

Test(policy, ladder_gives_back_when_the_group_is_no_longer_protected) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[JOB].protected = false;
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, POLICY_NO_CGROUP, POLICY_LEVER_IDLE, 1, 0);
}

/* The ring moved off the job's CPUs (its mask too): released whatever the job's pressure. */
Test(policy, ladder_gives_back_what_no_longer_contends) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        sim_find(s, 20)->cpu = 2;
        sim_find(s, 21)->cpu = 3;
        set_mask(s, sim_find(s, 20), "2-3");
        set_mask(s, sim_find(s, 21), "2-3");
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, POLICY_NO_CGROUP, POLICY_LEVER_IDLE, 1, 0);
}

/* A group whose affinity reaches the job's CPU contends even when it last ran elsewhere. */
Test(policy, ladder_counts_a_contender_whose_mask_reaches_the_protected_cpus) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        sim_find(s, 20)->cpu = 2;
        sim_find(s, 21)->cpu = 3;
        set_mask(s, sim_find(s, 21), "2-3");
        cr_assert_eq(ladder_next(s, 10, &e), 4, "task 20 may run on CPU 0");
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
}

/* A fresh state (a restarted daemon) goes on from what the snapshot says is ours. */
Test(policy, ladder_restart_continues_from_the_snapshot) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        s->cgroups[RING].quota_permyriad = 4000;
        s->cgroups[RING].quota_ours = true;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 4000, 2000);
        s->state = policy_state_free(s->state);
        s->state = policy_state_new(s->topo);
        cr_assert_not_null(s->state);
        cr_assert_eq(ladder_next(s, 10, &e), 4, "the hold restarts, the ladder does not");
        expect_step(&e, RING, JOB, POLICY_LEVER_QUOTA, 2000, 1000);
}

/* Latency above its target is above the mark, for the weight and the ladder, and says so. */
Test(policy, latency_target_raises_the_weight_and_escalates) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PolicyCgroup *job = &s->cgroups[JOB];
        _cleanup_plan_ Plan *p = NULL;
        PlanEscalation e;

        job->pressure_permyriad = 100;
        job->has_latency = true;
        job->latency_usec = 2100;
        cr_expect_eq(ladder_next(s, 10, &e), 0, "no latency target: below the mark");
        job->weight = 1000; /* it decayed meanwhile */
        cr_assert_eq(config_set_one(&tunables_schema, &s->t, "latency_target", "1ms", NULL), 0);
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 0, 1);
        cr_expect_str_eq(e.reason, "latency 2.10 ms > 1.00 ms for 3.0 s at weight_max 1000: "
                                   "heaviest contender, 1.50 CPUs");
        /* above its mark for 4 s: a weight under weight_max rises at once */
        job->weight = 100;
        p = sim_plan(s);
        cr_assert_eq(p->n_weights, 1);
        cr_expect_eq(p->weights[0].to, 150);
        cr_expect_str_eq(p->weights[0].reason, "latency 2.10 ms > 1.00 ms for 4.0 s: up 50, max "
                                               "1000");
}

Test(policy, latency_above_half_its_target_keeps_the_steps) {
        _cleanup_sim_ Sim *s = ladder_sim();
        PlanEscalation e;

        s->t.latency_target_usec = 1000;
        s->cgroups[JOB].pressure_permyriad = 100;
        s->cgroups[JOB].has_latency = true;
        s->cgroups[JOB].latency_usec = 700;
        s->cgroups[JOB].util_permyriad = 500; /* gone quiet */
        s->cgroups[RING].idle = s->cgroups[RING].idle_ours = true;
        cr_expect_eq(ladder_next(s, 10, &e), 0);
        s->cgroups[JOB].latency_usec = 400;
        cr_assert_eq(ladder_next(s, 10, &e), 4);
        expect_step(&e, RING, JOB, POLICY_LEVER_IDLE, 1, 0);
        cr_expect_str_eq(e.reason, "pressure 1.00% < 5.00%, latency 0.40 ms < 0.50 ms for 3.0 s: "
                                   "lightest contender, 1.50 CPUs");
}

Test(policy, ladder_is_deterministic_whatever_the_group_order) {
        _cleanup_sim_ Sim *s = ladder_sim();
        _cleanup_policy_state_ PolicyState *again = policy_state_new(s->topo);
        PolicyCgroup *other = sim_group(s, "cgbalance.slice/other", false, 100);
        PolicyCgroup swapped[MAX_GROUPS];
        PolicyTask tasks[MAX_TASKS];
        PolicySnapshot snap;
        uint64_t now = 0;

        cr_assert_not_null(again);
        other->util_permyriad = 15000; /* as heavy as the ring: the path decides */
        other->has_idle = true;
        sim_task(s, 30, 0, BUSY)->cgroup = 2;
        for (unsigned tick = 0; tick < 4; tick++) {
                _cleanup_plan_ Plan *p = sim_plan(s), *q = NULL;

                /* the same snapshot with the groups in reverse order */
                snap = s->snap;
                for (size_t g = 0; g < s->n_cgroups; g++)
                        swapped[g] = s->cgroups[s->n_cgroups - 1 - g];
                for (size_t i = 0; i < s->n_tasks; i++) {
                        tasks[i] = s->tasks[i];
                        tasks[i].cgroup = s->n_cgroups - 1 - s->tasks[i].cgroup;
                }
                snap.cgroups = swapped;
                snap.tasks = tasks;
                now = s->now;
                cr_assert_eq(policy_plan(again, &snap, s->topo, sim_params(s), now,
                                         /* force_node_balance= */ false, &q),
                             0);
                cr_assert_eq(p->n_escalations, tick == 3 ? 1 : 0, "tick %u", tick);
                cr_assert_eq(p->n_escalations, q->n_escalations, "tick %u", tick);
                for (size_t i = 0; i < p->n_escalations; i++) {
                        cr_expect_eq(p->escalations[i].cgroup, 2, "as heavy: other's path first");
                        cr_expect_eq(q->escalations[i].cgroup, 0);
                        cr_expect_eq(p->escalations[i].to, q->escalations[i].to);
                        cr_expect_str_eq(p->escalations[i].reason, q->escalations[i].reason);
                }
                sim_apply(s, p);
        }
}

/* ---- contract */

static void expect_same_plan(const Plan *a, const Plan *b) {
        cr_assert_eq(a->n_moves, b->n_moves);
        cr_assert_eq(a->n_weights, b->n_weights);
        cr_assert_eq(a->n_escalations, b->n_escalations);
        for (size_t i = 0; i < a->n_escalations; i++) {
                cr_expect_eq(a->escalations[i].cgroup, b->escalations[i].cgroup);
                cr_expect_eq(a->escalations[i].for_cgroup, b->escalations[i].for_cgroup);
                cr_expect_eq(a->escalations[i].lever, b->escalations[i].lever);
                cr_expect_eq(a->escalations[i].from, b->escalations[i].from);
                cr_expect_eq(a->escalations[i].to, b->escalations[i].to);
                cr_expect_str_eq(a->escalations[i].reason, b->escalations[i].reason);
        }
        cr_expect_eq(a->node_balance_ran, b->node_balance_ran);
        for (size_t i = 0; i < a->n_moves; i++) {
                cr_expect_eq(a->moves[i].pid, b->moves[i].pid, "move %zu", i);
                cr_expect_eq(a->moves[i].starttime_ticks, b->moves[i].starttime_ticks);
                cr_expect_eq(a->moves[i].from_node, b->moves[i].from_node);
                cr_expect_eq(a->moves[i].to_node, b->moves[i].to_node);
                cr_expect(cpumask_equal(a->moves[i].mask, b->moves[i].mask), "move %zu", i);
                cr_expect_str_eq(a->moves[i].reason, b->moves[i].reason);
        }
        for (size_t i = 0; i < a->n_weights; i++) {
                cr_expect_eq(a->weights[i].cgroup, b->weights[i].cgroup);
                cr_expect_eq(a->weights[i].to, b->weights[i].to);
                cr_expect_str_eq(a->weights[i].reason, b->weights[i].reason);
        }
}

static void mixed_load(Sim *s) {
        PolicyCgroup *g = sim_group(s, "cgbalance.slice/a", true, 20);

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 5;
        g->pressure_permyriad = 100;
        sim_busy(s, 10, 9, 0, 3);
        sim_busy(s, 30, 3, 4, 7);
        (void) sim_task(s, 40, 8, 3000);
        (void) sim_task(s, 41, 8, 6000);
        sim_find(s, 40)->cgroup = 0;
}

Test(policy, same_input_gives_identical_plan) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_policy_state_ PolicyState *again = policy_state_new(s->topo);
        _cleanup_plan_ Plan *p = NULL, *q = NULL;

        mixed_load(s);
        p = sim_plan(s);
        cr_assert_gt(p->n_moves, 2, "a plan worth comparing");
        cr_assert_eq(policy_plan(again, &s->snap, s->topo, sim_params(s), s->now,
                                 /* force_node_balance= */ false, &q),
                     0);
        expect_same_plan(p, q);
}

Test(policy, task_order_does_not_change_the_plan) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_policy_state_ PolicyState *again = policy_state_new(s->topo);
        _cleanup_plan_ Plan *p = NULL, *q = NULL;
        PolicyTask reversed[MAX_TASKS];
        PolicySnapshot snap;

        mixed_load(s);
        p = sim_plan(s);
        for (size_t i = 0; i < s->n_tasks; i++)
                reversed[i] = s->tasks[s->n_tasks - 1 - i];
        snap = s->snap;
        snap.tasks = reversed;
        cr_assert_eq(policy_plan(again, &snap, s->topo, sim_params(s), s->now,
                                 /* force_node_balance= */ false, &q),
                     0);
        expect_same_plan(p, q);
}

Test(policy, snapshot_that_does_not_fit_is_rejected) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        Plan *sentinel = (Plan *) &s->snap, *p = sentinel;
        PolicySnapshot snap;

        snap = *sim_snapshot(s);
        snap.n_cpus = 3;
        cr_expect_eq(policy_plan(s->state, &snap, s->topo, sim_params(s), SEC,
                                 /* force_node_balance= */ false, &p),
                     -EINVAL);
        cr_expect_eq(p, sentinel, "ret written on failure");
        sim_task(s, 10, 0, BUSY)->cgroup = 3;
        cr_expect_eq(policy_plan(s->state, sim_snapshot(s), s->topo, sim_params(s), SEC,
                                 /* force_node_balance= */ false, &p),
                     -EINVAL, "cgroup index out of range");
        cr_expect_eq(p, sentinel);
}

Test(policy, params_for_another_topology_are_rejected) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_sim_ Sim *small = sim_new(TWO_NODES, NULL);
        Plan *sentinel = (Plan *) &s->snap, *p = sentinel;

        sim_busy(s, 10, 8, 0, 3);
        /* params built for 2 nodes (a topology rebuilt, the params not) */
        cr_expect_eq(policy_plan(s->state, sim_snapshot(s), s->topo, sim_params(small), SEC,
                                 /* force_node_balance= */ false, &p),
                     -EINVAL);
        cr_expect_eq(p, sentinel, "ret written on failure");
        cr_expect_eq(policy_plan(s->state, sim_snapshot(s), s->topo, NULL, SEC,
                                 /* force_node_balance= */ false, &p),
                     -EINVAL, "no params");
        cr_expect_eq(p, sentinel);
}

Test(policy, state_follows_a_topology_with_more_nodes) {
        _cleanup_sim_ Sim *s = sim_new(NUMAQ, NULL);
        _cleanup_sim_ Sim *small = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;

        s->t.node_imbalance_hold_usec = 0;
        sim_busy(s, 10, 8, 0, 3);
        /* a state made for 2 nodes, then a 4-node topology (hotplug, rebuilt topology) */
        cr_assert_eq(policy_plan(small->state, sim_snapshot(s), s->topo, sim_params(s), SEC,
                                 /* force_node_balance= */ false, &p),
                     0);
        cr_expect_eq(p->n_moves, 2);
}

Test(policy, report_plan_writes_escalation_steps) {
        PolicyCgroup groups[] = { { .path = "cgbalance.slice/job" },
                                  { .path = "cgbalance.slice/ring" } };
        PlanEscalation e[] = {
                { .cgroup = 1,
                  .for_cgroup = 0,
                  .lever = POLICY_LEVER_IDLE,
                  .to = 1,
                  .reason = "a" },
                { .cgroup = 1,
                  .for_cgroup = 0,
                  .lever = POLICY_LEVER_QUOTA,
                  .from = 7500,
                  .to = 3750,
                  .reason = "b" },
                { .cgroup = 1,
                  .for_cgroup = POLICY_NO_CGROUP,
                  .lever = POLICY_LEVER_QUOTA,
                  .from = 3750,
                  .reason = "c" },
        };
        PolicySnapshot snap = { .cgroups = groups, .n_cgroups = ELEMENTSOF(groups) };
        Plan p = { .escalations = e, .n_escalations = ELEMENTSOF(e) };
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        cr_assert_not_null(f);
        report_plan(f, &p, &snap);
        cr_assert_eq(fclose(f), 0);
        cr_expect_str_eq(out,
                         "escalate cgbalance.slice/ring idle 0 -> 1 for cgbalance.slice/job: a\n"
                         "escalate cgbalance.slice/ring quota 0.75 CPUs -> 0.37 CPUs for "
                         "cgbalance.slice/job: b\n"
                         "step back cgbalance.slice/ring quota 0.37 CPUs -> none: c\n");
}

Test(policy, lever_names_round_trip) {
        for (PolicyLever l = POLICY_LEVER_IDLE; l < _POLICY_LEVER_MAX; l++)
                cr_expect_eq(policy_lever_from_string(policy_lever_to_string(l)), l);
        cr_expect_null(policy_lever_to_string(POLICY_LEVER_NONE));
        cr_expect_null(policy_lever_to_string(_POLICY_LEVER_MAX));
        cr_expect_eq(policy_lever_from_string("Idle"), POLICY_LEVER_NONE, "exact names only");
        cr_expect_eq(policy_lever_from_string(NULL), POLICY_LEVER_NONE);
}

Test(policy, report_plan_writes_one_line_per_action) {
        _cleanup_sim_ Sim *s = sim_new(TWO_NODES, NULL);
        _cleanup_plan_ Plan *p = NULL;
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        FILE *f;

        s->t.node_imbalance_hold_usec = 0;
        s->t.max_moves_per_tick = 1;
        (void) sim_group(s, "cgbalance.slice/a", true, 20);
        sim_busy(s, 10, 4, 0, 1);
        sim_find(s, 10)->mem_kib = 3 * 1024; /* the others' memory unknown: pid 11 goes */
        p = sim_plan(s);
        f = open_memstream(&out, &len);
        cr_assert_not_null(f);
        report_plan(f, p, &s->snap);
        cr_assert_eq(fclose(f), 0);
        cr_expect_str_eq(out,
                         "move pid 11 (task11) node 0 -> 1 mask 2-3: node 0 load 4.00 on 2 CPUs "
                         "(2.00/CPU) vs node 1 load 0.00 on 2 CPUs (0.00/CPU): 2.00 waiting; "
                         "nearest room, distance 20, for 0.0 s; task 1.00; not pid 10 (3 MiB "
                         "resident)\n"
                         "weight cgbalance.slice/a 20 -> 100: protected, below weight_min 100\n");
}
