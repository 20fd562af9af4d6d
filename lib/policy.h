/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The balancing policy: a pure function
 *
 *     plan = policy_plan(state, snapshot, topology, tunables, now)
 *
 * No syscalls, no clock, no randomness: time comes in as now_usec, everything measured comes in
 * the snapshot, and what must be remembered between ticks lives in PolicyState (owned by the
 * caller, updated in place). The same inputs always give the same plan, so tests and replays of
 * recorded snapshots can check it exactly, on machines far larger than the ones we have.
 *
 * Loads are in permyriad of one CPU: 10000 is one CPU kept busy for the whole interval.
 *
 * Node load. A node's load is the CPU utilisation of its CPUs (from /proc/stat) plus, for every
 * managed task on it, the time it waited to run (demand - util): utilisation alone cannot tell
 * 3 tasks on 2 CPUs from 2. Normalised by the node's capacity (its usable CPUs) it is compared
 * across nodes.
 *
 * Across nodes (every idle_node_multiplier ticks while some node has an idle CPU, every
 * busy_node_multiplier ticks otherwise): for the busiest node B and a node T, a move is allowed
 * when, for node_imbalance_hold,
 *     100 * load(B)/cap(B) > pct(B,T) * load(T)/cap(T)
 *         where pct(B,T) = 100 + (node_imbalance_pct - 100) * distance(B,T) / nearest remote
 *         distance, so farther nodes need a larger imbalance, and
 *     load(B) - load(T) > node_min_imbalance tasks, unless B is overloaded (load above its
 *         capacity) and T still has an idle CPU after the move: resistance must not keep a task
 *         waiting for a CPU while another node has one free.
 * The task moved is the one whose move best evens the two nodes out (and does reduce the
 * difference), of those not moved within migrate_cooldown, above min_task_load, not foreign,
 * and not in a protected group whose weight can still rise (weight before placement). At most
 * max_moves_per_tick moves, each recomputing the node loads. A move sets the task's mask to the
 * destination node's usable CPUs; balancing inside the node is left to the kernel.
 *
 * Inside a node: a task whose mask the daemon narrowed to part of a node (never by a move, but
 * after a cpuset shrink intersected it) gets its whole node back when the node's CPUs are
 * imbalanced by more than imbalance_pct.
 *
 * Weights: a protected group whose cpu.pressure (some avg10) stays above pressure_target for
 * pressure_hold gets weight_step more weight, up to weight_max; one that stays below half of it
 * for pressure_hold gets weight_step less, down to its base weight (and never below weight_min).
 * Without PSI for a group, its utilisation against its share stands in for pressure.
 *
 * An idle or balanced machine gives an empty plan.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cpumask.h"
#include "macro.h"
#include "topology.h"
#include "tunables.h"

#define POLICY_LOAD_ONE_CPU 10000u
#define POLICY_NO_CGROUP ((size_t) -1)

typedef struct PolicyCpu {
        uint32_t util_permyriad; /* busy share of the interval, from /proc/stat */
} PolicyCpu;

typedef struct PolicyTask {
        pid_t pid; /* a process: moves apply to all its threads */
        uint64_t starttime_ticks; /* with pid, the identity: a recycled pid is another task */
        char comm[64];
        size_t cgroup; /* index into PolicySnapshot.cgroups, or POLICY_NO_CGROUP */
        int cpu; /* the CPU it ran on last (of its busiest thread) */
        uint32_t util_permyriad; /* CPU time over the interval, all threads */
        uint32_t demand_permyriad; /* run + wait time over the interval; >= util */
        const CpuMask *allowed; /* its affinity now */
        bool ours; /* allowed is a mask the daemon set */
        bool foreign; /* someone else narrowed its affinity: not ours to move */
        uint64_t last_move_usec; /* when the daemon last moved it; 0: never */
} PolicyTask;

typedef struct PolicyCgroup {
        const char *path; /* relative to the cgroup root, e.g. "cgbalance.slice/a" */
        bool protected;
        bool has_pressure; /* pressure_permyriad is measured (PSI) */
        uint32_t pressure_permyriad; /* cpu.pressure some avg10 */
        uint32_t util_permyriad; /* its CPU usage over the interval */
        uint32_t weight; /* now, v2 units */
        uint32_t base_weight; /* what it had before the daemon changed it */
} PolicyCgroup;

typedef struct PolicySnapshot {
        uint64_t interval_usec; /* the time the deltas below cover */
        const PolicyCpu *cpus; /* indexed by CPU number */
        unsigned n_cpus; /* entries in cpus: topology_cpu_capacity() */
        const PolicyTask *tasks;
        size_t n_tasks;
        const PolicyCgroup *cgroups;
        size_t n_cgroups;
} PolicySnapshot;

typedef struct PlanMove {
        pid_t pid;
        uint64_t starttime_ticks;
        int from_node, to_node; /* to_node == from_node: a mask repair inside the node */
        CpuMask *mask; /* the new affinity, owned by the plan */
        char reason[192];
} PlanMove;

typedef struct PlanWeight {
        size_t cgroup; /* index into the snapshot's cgroups */
        uint32_t from, to; /* v2 units */
        char reason[192];
} PlanWeight;

typedef struct Plan {
        PlanMove *moves;
        size_t n_moves;
        PlanWeight *weights;
        size_t n_weights;
        bool node_balance_ran; /* this tick was a node-balancing tick */
} Plan;

typedef struct PolicyState PolicyState;

/* State for a topology's nodes; NULL on ENOMEM. */
PolicyState *policy_state_new(const Topology *topo);
PolicyState *policy_state_free(PolicyState *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicyState *, policy_state_free);
#define _cleanup_policy_state_ _cleanup_(policy_state_freep)

Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);
#define _cleanup_plan_ _cleanup_(plan_freep)

/*
 * Plans one tick. Updates state (tick count, how long each imbalance and each group's pressure
 * has lasted). The plan refers to the snapshot's tasks by pid + starttime and to cgroups by
 * index. Returns -EINVAL if the snapshot does not fit the topology (n_cpus), -ENOMEM.
 */
int policy_plan(PolicyState *state, const PolicySnapshot *snap, const Topology *topo,
                const Tunables *t, uint64_t now_usec, Plan **ret);

/* Writes the plan, one action a line with its reason, for --once and the debug log. */
void plan_dump(const Plan *p, const PolicySnapshot *snap, FILE *f);
