/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The balancing policy: a pure function
 *
 *     plan = policy_plan(state, snapshot, topology, params, now, force_node_balance)
 *
 * No syscalls, no clock, no randomness: time comes in as now_usec, everything measured comes in
 * the snapshot, the numbers it decides with in PolicyParams (built from the configuration and
 * the topology at each reload, by policy_params_from_tunables() in lib/tunables.h), and what must
 * be remembered between ticks lives in PolicyState (owned by the caller, updated in place). The
 * same inputs always give the same plan, so tests and replays of recorded snapshots can check it
 * exactly, on machines far larger than the ones we have. Ties are broken by pid (then start time),
 * never by the order of the snapshot's arrays.
 *
 * Loads are in permyriad of one CPU: 10000 is one CPU kept busy for the whole interval. A task's
 * load is its demand (run + wait): what leaves a node and arrives at another when it moves.
 *
 * Node load. A node's load is the CPU utilisation of its usable CPUs (from /proc/stat) plus, for
 * every managed task on it, the time it waited to run (demand - util): utilisation alone cannot
 * tell 3 tasks on 2 CPUs from 2. A task is on the node of the CPU it last ran on (one that is
 * not online: skipped). A node's capacity is its usable CPUs; loads are compared per CPU. A node
 * has an idle CPU when load + 10000 <= capacity * 10000 + slack, and is overloaded when
 * load > capacity * 10000 + slack, slack being POLICY_LOAD_SLACK_PERMYRIAD: housekeeping noise
 * of a tenth of a CPU neither hides an idle CPU nor makes a full node look overloaded. A node
 * without usable CPUs is never a source or a destination.
 *
 * Across nodes (on ticks where tick % idle_node_multiplier == 0 while some node has an idle CPU,
 * tick % busy_node_multiplier == 0 otherwise; the first policy_plan() is tick 0; never with one
 * node), two kinds of move, for a source node B and a node T:
 *   room     B is overloaded (tasks wait), T has room (load(T) + 10000 < cap(T) * 10000 +
 *            POLICY_FIT_SLACK_PERMYRIAD: its load with a CPU's worth more rounds to no more than
 *            its CPUs), and the ratio below holds (the gap need not: a task must not wait while
 *            a CPU is free). The task moved must fit there (load(T) + load(task) < cap(T) *
 *            10000 + POLICY_FIT_SLACK_PERMYRIAD) and be worth its move: what waits
 *            on B (load(B) - cap(B) * 10000) at least its load less POLICY_ROOM_SLACK_PERMYRIAD,
 *            so a node over its CPUs by housekeeping's wait (0.7 CPU seen in an emulated guest)
 *            does not send a whole task, and its memory, away for a part of one.
 *   balance  100 * load(B)/cap(B) > pct(B,T) * load(T)/cap(T)
 *                where pct(B,T) = 100 + (node_imbalance_pct - 100) * distance(B,T) / nearest
 *                remote distance from B, so farther nodes need a larger imbalance (the
 *                resistance that grows with distance), and
 *            gap(B,T) > node_min_imbalance tasks + half a task (the gap rounded to whole tasks:
 *                housekeeping's tenths do not make one), where gap = (load(B)/cap(B) -
 *                load(T)/cap(T)) * min(cap(B), cap(T)): the per-CPU difference as the smaller
 *                node sees it (the plain load difference when both have the same capacity; a big
 *                node's surplus is not what a small node can take); "auto" takes min(cap(B),
 *                cap(T)) as the CPUs per node.
 * A pair moves only once it has met one of the two for node_imbalance_hold (kept per ordered pair,
 * updated on every tick, balancing or not). Sources are tried busiest per CPU first (a busiest
 * node whose load cannot move does not block the next one); for each, room first: of the nodes
 * with room, the nearest (loads decide only between nodes at the same distance: lower load per
 * CPU, then lower id); then balance, by distance tiers as the kernel's sched domains balance the
 * nearest level first: the nearest node that qualifies, then lower load per CPU, then lower id,
 * and never a node farther than the nearest one with room. No overshoot: a move restarts
 * the hold of every pair its source or destination is in, the hold counting from the first
 * snapshot measured after the move (a wait is accounted when the task next runs, so a snapshot's
 * loads can still hold waits from before the move); and until a snapshot's interval starts
 * after a plan that moved a task across nodes (a full interval), the nodes that plan touched
 * have the loads it left them with (the moved task's load taken off its source and added at its
 * destination), not the measurement, which still counts the task where it was for part of the
 * interval.
 * The task moved: of those whose move makes the difference of B's and T's loads per CPU strictly
 * smaller (so a move never swaps which node is busier by as much or more: no ping-pong), those
 * whose gap left is within a quarter task of the closest make the same balance, and of them the
 * one with the least memory on B goes (mem_kib: a move leaves it at distance(B,T) from its task),
 * then the closest, then the lowest pid. Only tasks not moved within migrate_cooldown, with a load
 * (demand, not util: a task starved behind others is the one most worth moving) of at least
 * min_task_load, not foreign (unless override_foreign_affinity), and not in a protected group whose
 * weight can still rise (weight before placement: its pressure is above target and its weight below
 * weight_max). At most max_moves_per_tick moves, each recomputing the node loads; no task moves
 * twice in a plan. A move sets the task's mask to the destination node's usable CPUs; for a task
 * neither ours nor foreign (its affinity is its cpuset) intersected with its affinity, and a node
 * outside it is no destination for that task. Balancing inside the node is left to the kernel.
 *
 * Inside a node (every tick, before the node moves, counted in max_moves_per_tick): a task whose
 * mask the daemon narrowed to a strict part of its node's usable CPUs (never by a move, but
 * after a cpuset shrink intersected it) gets the node's usable CPUs back (a PlanMove with
 * to_node == from_node) when the busiest CPU of its mask is busier, by more than imbalance_pct,
 * than the least busy usable CPU of the node outside it. Cooldown and min_task_load apply.
 *
 * Weights: a protected group whose CPU pressure stays above pressure_target for pressure_hold
 * gets weight_step more weight, up to weight_max; one that stays below half of it and quiet
 * (its util under POLICY_QUIET_PERMYRIAD, or under a POLICY_QUIET_SHARE-th of the most it used
 * while above its mark since its weight was last at its base) for pressure_hold gets
 * weight_step less, down to its base weight (and never below weight_min). Below its mark while
 * still as busy is the weight working: stepping down then brings the pressure back, and the
 * weight would flap every hold or two. Each step restarts the hold. A protected group below
 * weight_min is raised to it at once; one above weight_max (a reload lowered it) that the daemon
 * had raised goes back to weight_max (or its base, if higher) at once. A group no longer protected
 * whose weight the daemon raised (weight > base_weight) goes back to its base, weight_step every
 * pressure_hold, whatever its pressure. No other group is touched. Pressure is cpu.pressure "some
 * avg10" when has_pressure; without PSI, the time the group's own tasks in the snapshot waited for
 * a CPU over the interval (the sum of their demand - util, at most 10000) stands in: that is what
 * "some" measures (its upper bound when waits overlap), where utilisation cannot tell a group that
 * got all it wanted from one that was denied. Latency: with latency_target (not 0), a protected
 * group whose latency_usec is measured (has_latency) and above latency_target counts as above its
 * mark whatever its pressure, and as below it only if its latency is also under half
 * latency_target. Reasons say which measure acted: "pressure" (PSI), "wait (no PSI)" or "latency".
 *
 * The ladder (past the weight). A protected group P escalates while, for escalate_hold, it is
 * above its mark (as for the weight: pressure, wait or latency) with its weight at weight_max,
 * it is not pressed by its own tasks (POLICY_SATURATED_PERMYRIAD), and it is not throttled by a
 * quota of its own or of a group above it in the snapshot (throttled_permyriad above
 * POLICY_THROTTLED_PERMYRIAD: its pressure is that limit, which no other group's step can cure; its
 * contenders get their steps back instead, as below, the reason naming the limit). P's contenders
 * are the managed groups that are not protected, hold no protected group and are not inside one
 * (path prefixes), used CPU over the interval (at least POLICY_CONTENDER_PERMYRIAD; one that has
 * a step of ours, any) and have a task that last ran on a CPU
 * one of P's tasks last ran on, or whose known affinity includes one. Each escalate_hold, one
 * step: on the heaviest contender (util, then path) that has a step left, the next of
 *     IDLE       cpu.idle = 1, if allowed and the kernel has it (has_idle), and not already 1;
 *     QUOTA      a bandwidth limit of max(quota_floor, util / 2); then, a limit the daemon set,
 *                halved each step down to quota_floor. A limit someone else set is not ours:
 *                never changed, and the step is skipped;
 *     PARTITION  the CPUs P's tasks ran on (the partition_max_cpus of them P used most, and
 *                never every CPU of the snapshot) are kept off to the contender: the plan
 *                narrows each of its tasks' affinity to what it had less those CPUs (a foreign
 *                mask only with override_foreign_affinity; a mask inside them is left), on this
 *                tick and every tick after for its new tasks, and its moves and repairs leave
 *                them out too. P's own masks are not changed: the kernel's balancing puts its
 *                tasks on the CPUs kept free. A task's mask is a PlanMove inside its node
 *                (to_node == from_node), outside max_moves_per_tick and the cooldown.
 * The step restarts P's hold. Memory: P counts the steps up taken for it and not given back
 * (its depth: a step back for it while below its mark takes one off) and the most it had; pressed
 * again (LADDER_UP) within escalate_memory of a step given back for it, P takes a step every tick
 * without the hold until its depth is back at that most (a job that works in bursts gets at once
 * what its last burst needed, not a hold per step again). Past escalate_memory the most is
 * forgotten (it becomes the depth).
 * When P stays below half its mark and quiet (as for the weight:
 * below its mark while busier is the steps working, and giving them back then would flap them
 * every two holds) for escalate_hold (or is throttled, for
 * escalate_hold), one step back a hold, in reverse (PARTITION, the actuator putting back each
 * task's mask from before; then QUOTA doubled
 * while it binds, i.e. the group was throttled or used 90% of it, and is under the machine's
 * CPUs, else removed; then IDLE back to 0), on the lightest contender (util, then path, in
 * reverse) with something of ours to give back, unless another protected group it contends with
 * is not below its mark (and not throttled) too. A group with something of ours that contends
 * with no protected group (gone, no longer protected, elsewhere, escalation off, or it became
 * protected or holds one) gets one step back every escalate_hold, whatever the pressure. Only
 * what the daemon set (idle_ours, quota_ours) is ever given back, and a group's step is read
 * from the snapshot, so a restarted daemon goes on from what its record says. A group takes at
 * most one step per plan; protected groups act in path order. A reload that disallows a lever
 * stops steps up on it; what it set is given back by the rules above.
 *
 * State: the tick count, per ordered node pair since when it has been imbalanced, per node the
 * load the last plan that moved a task across nodes left it with (and when), per cgroup
 * path since when its pressure has been above, below or between the marks, and since when it
 * has been in its ladder mode (escalating, stepping back, releasing). Groups missing from a
 * snapshot are forgotten; a topology with another node count restarts the node holds.
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

#define POLICY_LOAD_ONE_CPU 10000u
#define POLICY_NO_CGROUP ((size_t) -1)
/* Housekeeping noise tolerated by "has an idle CPU" and "overloaded": a tenth of a CPU. */
#define POLICY_LOAD_SLACK_PERMYRIAD 1000u
/* A protected group throttled by its own quota, or by one of a group above it, more than this
 * share of the interval (a tenth) is not escalated for: its pressure is that limit, not
 * contention. */
#define POLICY_THROTTLED_PERMYRIAD 1000u
/* A protected group using less than this (a tenth of a CPU), or less than a
 * POLICY_QUIET_SHARE-th of the most it used while above its mark, has gone quiet: its weight
 * steps down and its contenders get their steps back. One still busier keeps them, however low
 * its pressure: low because of them. The share is for a group that keeps a little running between
 * its bursts (a periodic task beside a job that works and sleeps): its bursts end, and so does
 * their cause. */
#define POLICY_QUIET_PERMYRIAD 1000u
#define POLICY_QUIET_SHARE 4u
/* A group using less than this (a twentieth of a CPU) is no contender to step up: it cannot be
 * what presses a protected group, and a step on it would cure nothing (a protected job pressed
 * by its own tasks, make -j4 on one CPU beside an idle load, escalated on that idle load). */
#define POLICY_CONTENDER_PERMYRIAD 500u
/* A protected group using at least this share (85%) of the CPUs its tasks ran on, whose tasks
 * want more than those CPUs and half a CPU (their demand: run and wait), is pressed by its own
 * tasks: no step on another group gives it more (the batch group beside a job of more tasks
 * than CPUs, held back for nothing), so it takes no step up. Weight 1000 against a neighbour's
 * 100 leaves it 91% of a CPU they share. A group whose tasks fit its CPUs is pressed by whoever
 * takes the rest, however little. */
#define POLICY_SATURATED_PERMYRIAD 8500u
/* Moves whose results (the gap left) differ by a quarter of a task or less make the same balance,
 * and the one
 * that leaves less memory behind is chosen: a quarter CPU of someone's housekeeping (an emulated
 * guest's interrupts reached 0.22) is not worth a task's memory at a distance. */
#define POLICY_SAME_BALANCE_PERMYRIAD 2500u
/* A node has room for a task when its load with the task is under its CPUs and half a CPU: the
 * sum rounded to whole CPUs. A node running one task on 2 CPUs measured 1.28 in an emulated guest
 * (housekeeping, the task's own wait when it shared a CPU). */
#define POLICY_FIT_SLACK_PERMYRIAD 5000u
/* A task moves for room only when what waits on its node is its load less at most this (a
 * quarter of a CPU): a whole task's move for a whole task's wait. */
#define POLICY_ROOM_SLACK_PERMYRIAD 2500u
/* The gap of the balance rule is rounded to whole tasks: it must exceed node_min_imbalance by
 * this (half a task). */
#define POLICY_GAP_SLACK_PERMYRIAD 5000u

/*
 * The levers past the weight, in the order the ladder takes them on a group that contends with a
 * protected one (and gives them back in reverse).
 */
typedef enum PolicyLever {
        POLICY_LEVER_NONE = 0,
        POLICY_LEVER_IDLE, /* cpu.idle = 1 on the contending group (v1 and v2, kernel 5.15+) */
        POLICY_LEVER_QUOTA, /* a bandwidth limit on it (cpu.max / cpu.cfs_quota_us), down to a floor
                             */
        POLICY_LEVER_PARTITION, /* CPUs reserved for the protected group, the contenders kept off */
        _POLICY_LEVER_MAX,
} PolicyLever;

/* "idle", "quota", "partition" (the escalate_steps words); NULL for NONE or out of range. */
const char *policy_lever_to_string(PolicyLever l);
/* The lever named s, or POLICY_LEVER_NONE. */
PolicyLever policy_lever_from_string(const char *s);

/*
 * The numbers the policy decides with, named and in the units of the cgbalance.conf keys they
 * come from (the description above uses those names). A plain struct: built once per reload
 * (policy_params_from_tunables()), or by hand in tests.
 */
typedef struct PolicyParams {
        /* placement */
        bool use_isolated_cpus; /* isolated and nohz_full CPUs are placeable too */
        bool override_foreign_affinity;
        unsigned min_task_load_pct;
        uint64_t migrate_cooldown_usec;
        uint64_t max_moves_per_tick;
        /* inside a node */
        unsigned imbalance_pct;
        /* across nodes */
        unsigned node_imbalance_pct;
        uint64_t node_imbalance_hold_usec;
        uint64_t idle_node_multiplier;
        uint64_t busy_node_multiplier;
        /* node_min_imbalance resolved for each node, by node index ("auto" depends on the node's
         * capacity: see tunables_node_min_imbalance()); n_nodes must be the topology's. */
        unsigned n_nodes;
        unsigned node_min_imbalance[TOPOLOGY_MAX_NODES];
        /* weights */
        unsigned pressure_target_pct;
        uint64_t pressure_hold_usec;
        uint64_t weight_step;
        uint64_t weight_min;
        uint64_t weight_max;
        /* past the weight (the escalation ladder; see POLICY_LEVER_*): which levers may be used,
         * how long pressure must hold before each step, the lowest bandwidth limit, the most CPUs
         * a partition reserves */
        bool escalate_lever[_POLICY_LEVER_MAX]; /* [POLICY_LEVER_NONE] unused */
        /* The scheduler ignores cpu.weight (a sched_ext one is loaded): no weight is changed, and
         * the ladder does not wait for weight_max. The daemon also clears escalate_lever's idle. */
        bool weights_ignored;
        uint64_t escalate_hold_usec;
        /* a protected group pressed again within this long of a step given back for it gets
         * the steps it gave back without the hold, one a tick; 0: never */
        uint64_t escalate_memory_usec;
        unsigned quota_floor_pct; /* percent of one CPU */
        unsigned partition_max_cpus;
        /* a protected group's wake-up latency target (PolicyCgroup.latency_usec); 0: none */
        uint64_t latency_target_usec;
} PolicyParams;

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
        const CpuMask *allowed; /* its affinity now; NULL: unknown (then never repaired) */
        bool ours; /* allowed is a mask the daemon set */
        bool foreign; /* someone else narrowed its affinity: not ours to move */
        uint64_t last_move_usec; /* when the daemon last moved it; 0: never */
        /* Its resident memory on the node it last ran on, in KiB: what a move away leaves behind
         * (exact when read from numa_maps, else its whole resident set); 0: none or unknown. */
        uint64_t mem_kib;
        bool mem_exact; /* mem_kib is from numa_maps, not the resident set */
} PolicyTask;

typedef struct PolicyCgroup {
        const char *path; /* relative to the cgroup root, e.g. "cgbalance.slice/a" */
        bool protected;
        bool has_pressure; /* pressure_permyriad is measured (PSI) */
        uint32_t pressure_permyriad; /* cpu.pressure some avg10 */
        uint32_t util_permyriad; /* its CPU usage over the interval */
        uint32_t weight; /* now, v2 units */
        uint32_t base_weight; /* what it had before the daemon changed it */
        /* past the weight: what the group has now, and whether the daemon set it (the record) */
        bool has_idle; /* the kernel has cpu.idle for it */
        bool idle; /* cpu.idle is 1 */
        bool idle_ours; /* the daemon set it */
        uint32_t quota_permyriad; /* its bandwidth limit in permyriad of one CPU; 0: none */
        bool quota_ours; /* the daemon set it */
        /* a partition step of the daemon's: the CPUs it keeps the group's tasks off; NULL: none */
        const CpuMask *partition;
        uint32_t throttled_permyriad; /* share of the interval it was throttled by its own quota
                                       * (cpu.stat throttled_usec delta / interval) */
        bool has_latency; /* latency_usec is measured */
        uint32_t latency_usec; /* its tasks' mean wait per wake-up over the interval (schedstat) */
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
        char reason[320];
} PlanMove;

typedef struct PlanWeight {
        size_t cgroup; /* index into the snapshot's cgroups */
        uint32_t from, to; /* v2 units */
        char reason[192];
} PlanWeight;

/* One step of the ladder, up or down, on a contending group. */
typedef struct PlanEscalation {
        size_t cgroup; /* the contending group acted on: index into the snapshot's cgroups */
        size_t for_cgroup; /* the protected group it is for, or POLICY_NO_CGROUP (a step back
                            * after that group is gone or no longer protected) */
        PolicyLever lever;
        /* IDLE: 0 or 1; QUOTA: permyriad of one CPU, 0 no limit; PARTITION: CPUs kept off */
        uint32_t from, to;
        CpuMask *cpus; /* PARTITION up: the CPUs kept off, owned by the plan; else NULL */
        char reason[192];
} PlanEscalation;

/* A step up the ladder (IDLE set, a QUOTA set or lowered); false: a step back (given back). */
bool plan_escalation_is_up(const PlanEscalation *e);

typedef struct Plan {
        PlanMove *moves;
        size_t n_moves;
        PlanWeight *weights;
        size_t n_weights;
        PlanEscalation *escalations;
        size_t n_escalations;
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
 * index. force_node_balance (RebalanceNow): balance nodes on this tick, not waiting for the
 * multiplier or the hold (the thresholds, cooldown and cap still apply).
 * Returns -EINVAL if the snapshot does not fit the topology (n_cpus), if the params do not
 * (n_nodes), if an array is NULL with a non-zero count, a task's cgroup index is out of range, a
 * cgroup has no path or there are more than UINT32_MAX tasks; -ENOMEM.
 * On error *ret is untouched and so is the state, but for the node holds (a pure function of
 * the inputs, so a retry with the same inputs gives the same plan).
 */
int policy_plan(PolicyState *state, const PolicySnapshot *snap, const Topology *topo,
                const PolicyParams *params, uint64_t now_usec, bool force_node_balance, Plan **ret);

/*
 * The node loads as the policy sees them (see above), for metrics and explanations: ret_loads
 * has topology_n_nodes() entries, by node index. Returns -EINVAL as policy_plan() does.
 */
int policy_node_loads(const PolicySnapshot *snap, const Topology *topo, uint64_t *ret_loads);

/*
 * A node's capacity as the policy counts it: its CPUs (by node index) that tasks are placed on,
 * the usable ones, or with use_isolated_cpus the isolated and nohz_full ones too. 0 for an index
 * out of range.
 */
unsigned policy_node_capacity(const Topology *topo, unsigned index, bool use_isolated_cpus);
