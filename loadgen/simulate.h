/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * `loadgen simulate`: cgbalanced's policy in a closed loop on a model machine, beside a plain
 * model of the kernel's spreading, on machines we do not have (the seeds' NUMAQ and x440, a
 * 2-socket server with sub-NUMA clustering, a 16-node 1,024-CPU machine, or any hwloc synthetic
 * description with a distance matrix).
 *
 * The model, each tick (the policy's interval):
 *   demand    each task wants d in [0, 1] of a CPU, from its pattern (busy, a duty, bursts, a
 *             random share of ticks, or a scenario's phases);
 *   kernel    the tasks are placed in index order, "idle CPU first, no memory cost": a task stays
 *             on its CPU while it has room for it; else it goes to the least loaded CPU of its
 *             node that has room, else to the least loaded CPU with room on the nearest node that
 *             has one, else to the least loaded CPU it may use; always inside its affinity;
 *   share     a CPU asked for L > 1 gives each of its tasks d / L: the rest is its wait;
 *   memory    a task's memory stays on the node it started on (its home); the share m of its
 *             work that is memory-bound runs distance / 10 times slower away from it (the SLIT's
 *             relative latency), so a CPU-second served far from home does 1 / (1 - m + m d/10)
 *             of the work;
 *   policy    cgbalanced's policy_plan() sees what its sampler would (each CPU's use, each task's
 *             use, demand, CPU, affinity and memory on its node), and its moves set the moved
 *             task's affinity to the new node, where the kernel model places it next tick (with
 *             migrate_memory its home moves too). Weights and the levers past them are not
 *             modelled (one group per task spec, no pressure).
 * Both rows see the same demands (a seeded PRNG, here, never in the policy). The figures: work
 * done as a share of the work asked for (a CPU-second of demand served at home is a second of
 * work), the share of demand that waited, the share served away from home, the kernel's
 * cross-node task migrations (the daemon's moves included) and the daemon's moves.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "topology.h"

/* A named machine: an hwloc synthetic description and its node distances. */
typedef struct SimMachine {
        const char *name;
        const char *synthetic;
        const char *distances; /* topology_parse_distances() format */
        const char *about;
} SimMachine;

const SimMachine *sim_machine_find(const char *name);
/* The named machines, in order; *ret_n of them. */
const SimMachine *sim_machines(size_t *ret_n);

#define SIM_MAX_PHASES 16u

/* One stretch of a task's life: it wants demand of a CPU for usec (0: for ever). */
typedef struct SimPhase {
        double demand;
        uint64_t usec;
} SimPhase;

/* count tasks alike: "COUNT:PATTERN[,mem=MIB][,share=F][,node=N|spread][,bind][,group=NAME]". */
typedef struct SimTaskSpec {
        unsigned count;
        SimPhase phases[SIM_MAX_PHASES];
        size_t n_phases;
        bool loop; /* the phases start again; instance i starts i * period / count in */
        double random; /* > 0: each tick busy with this probability, else idle (no phases) */
        uint64_t mem_kib;
        double mem_share; /* m above */
        int node; /* where its instances start (their memory's home): a node id; -1: spread */
        bool bind; /* bound to that node, as numactl or an administrator's taskset would: the
                    * kernel keeps it there; to cgbalanced a foreign affinity */
        char group[32];
} SimTaskSpec;

/*
 * Parses a task spec. PATTERN: busy | duty=F | burst=ON/PERIOD (seconds: busy ON seconds of each
 * PERIOD) | random=P (busy a tick with probability P). Defaults: mem=64, share=0.5, spread,
 * group "tasks". -EINVAL with why.
 */
int sim_parse_tasks(const char *spec, SimTaskSpec *ret, char *why, size_t why_size);

/* The default workload: busy tasks bound to the first node, half as many again as its CPUs (an
 * imbalance only a move across nodes cures), and 2 bursty tasks per CPU of the machine spread and
 * free (2 specs in ret). */
size_t sim_default_tasks(unsigned n_cpus, unsigned first_node_cpus, int first_node,
                         SimTaskSpec ret[2]);

typedef struct SimTotals {
        double demand, served, work; /* CPU-seconds */
        double remote; /* CPU-seconds served away from home */
        uint64_t migrations; /* ticks a task ran on another node than the tick before (the
                              * daemon's moves included: the kernel model carries them out) */
        uint64_t moves, cross_moves; /* the daemon's */
        uint64_t ticks;
} SimTotals;

typedef struct Sim Sim;

/* A model of topo running the specs' tasks; seed drives the demands. -EINVAL (no task, a node the
 * topology lacks), -ENOMEM. */
int sim_new(const Topology *topo, const SimTaskSpec *specs, size_t n_specs, uint64_t seed,
            uint64_t interval_usec, Sim **ret);
Sim *sim_free(Sim *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sim *, sim_free);
#define _cleanup_sim_ _cleanup_(sim_freep)

/* One tick at now: demands, placement, loads; *ret_snap (valid until the next call) is what the
 * daemon's sampler would give; ret_node_busy (topology_n_nodes() entries, may be NULL) the busy
 * CPUs per node. */
int sim_step(Sim *s, uint64_t now_usec, const PolicySnapshot **ret_snap, double *ret_node_busy);
/* Demands from a recording instead of the specs' patterns: demand[(tick - 1) * n + i] (permyriad)
 * is task i's at tick tick (now / interval), 0 past ticks; each spec must be one task. Kept, not
 * copied. -EINVAL otherwise. */
int sim_set_trace(Sim *s, const uint16_t *demand, uint64_t ticks);
/* The plan's moves carried out: affinity (and with migrate_memory the memory's home). */
int sim_apply(Sim *s, const Plan *p, uint64_t now_usec, bool migrate_memory);
const SimTotals *sim_totals(const Sim *s);
/* Task i's CPU and home node index, for tests. */
int sim_task_cpu(const Sim *s, size_t i);
unsigned sim_task_home(const Sim *s, size_t i);

/* argv[0] is "simulate". Exit code: 0, 1 failure, EXIT_USAGE bad arguments. */
int simulate_main(int argc, char *argv[]);
