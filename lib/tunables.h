/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgbalanced's configuration: every key of /etc/cgbalance/cgbalance.conf, described once in
 * tunables_schema (lib/tunables.c). The parser, --check-config, conf/cgbalance.conf, the man page
 * cgbalance.conf(5), the D-Bus Config property and SetTunable all come from that table.
 *
 * Units are in the member names. Weights are cgroup v2 units (1..10000, default 100); on cgroup
 * v1 they are written as cpu.shares (lib/cgroup.h has the mapping).
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "policy.h"
#include "topology.h"

#define TUNABLES_DEFAULT_PATH "/etc/cgbalance/cgbalance.conf"

typedef enum TunablesLogLevel {
        TUNABLES_LOG_ERR,
        TUNABLES_LOG_WARNING,
        TUNABLES_LOG_NOTICE,
        TUNABLES_LOG_INFO,
        TUNABLES_LOG_DEBUG,
} TunablesLogLevel;

/* What a protected group's pressure is (pressure_measure). */
typedef enum TunablesPressureMeasure {
        TUNABLES_PRESSURE_AVG10, /* cpu.pressure "some avg10", the kernel's 10 s average */
        TUNABLES_PRESSURE_INTERVAL, /* its "some total" stall time over the last interval */
} TunablesPressureMeasure;

typedef struct Tunables {
        /* [daemon] */
        uint64_t interval_usec;
        bool dry_run;
        TunablesLogLevel log_level;
        char *state_directory;
        uint64_t sample_refresh_usec; /* 0: every thread read every tick */

        /* [manage] */
        char **cgroups; /* globs of cgroup paths; a match manages the group and all below it */
        char **exclude_cgroups;
        char **exclude_comms; /* globs of task names never touched */
        bool override_foreign_affinity;
        bool use_isolated_cpus;
        unsigned min_task_load_pct; /* a task below this share of one CPU is never moved */

        /* [balance] */
        unsigned imbalance_pct;
        unsigned node_imbalance_pct;
        char *node_min_imbalance; /* "auto" or a number of tasks; see tunables_node_min_imbalance */
        uint64_t node_imbalance_hold_usec;
        uint64_t idle_node_multiplier;
        uint64_t busy_node_multiplier;
        uint64_t migrate_cooldown_usec;
        uint64_t max_moves_per_tick;
        bool migrate_memory;
        uint64_t migrate_memory_max_mb;

        /* [weights] */
        char **protected_cgroups;
        unsigned pressure_target_pct;
        TunablesPressureMeasure pressure_measure;
        uint64_t pressure_hold_usec;
        uint64_t weight_step;
        uint64_t weight_min;
        uint64_t weight_max;
        uint64_t latency_target_usec; /* a protected group's wake-up latency target; 0: none */

        /* [escalation] */
        bool escalate;
        char **escalate_steps; /* "idle", "quota", "partition": the levers allowed */
        uint64_t escalate_hold_usec;
        uint64_t escalate_memory_usec;
        unsigned quota_floor_pct; /* percent of one CPU */
        uint64_t partition_max_cpus;

        /* [record] */
        char *record_directory;
        char *record_file; /* a name in record_directory; "" no recording */
        uint64_t record_max_size_mb;
        bool record_names;

        /* [metrics] */
        char *metrics_textfile; /* "" none */
        uint64_t metrics_textfile_every; /* ticks */
        uint64_t metrics_max_cgroups;

        /* [bus] */
        char *control_group; /* may call the mutating D-Bus methods besides root; "" none */
} Tunables;

extern const ConfigSchema tunables_schema;

/*
 * Loads path (and path.d/) over the defaults into *ret. A missing path means defaults when
 * optional is true. On failure *ret is untouched and *error says FILE:LINE: KEY: why.
 */
int tunables_load(const char *path, bool optional, Tunables *ret, ConfigError *error);
/* The compiled-in defaults. Cannot fail but for -ENOMEM. */
int tunables_defaults(Tunables *ret);
void tunables_free(Tunables *t);

/* Writes the documented default cgbalance.conf (conf/cgbalance.conf is this output).
 * Returns -EIO if writing failed. */
int tunables_write_default_file(FILE *f);

/*
 * The minimum imbalance, in tasks (10000 permyriad each), between two nodes before a move:
 * node_min_imbalance when it is a number; for "auto", the CPUs per node (seed 002's "something
 * like the number of cpus per node"), or 0 when a node's CPUs are SMT siblings of one core
 * (cpus_per_core >= cpus_per_node), where crossing the "node" costs nothing.
 */
unsigned tunables_node_min_imbalance(const Tunables *t, unsigned cpus_per_node,
                                     unsigned cpus_per_core);

/*
 * The numbers the policy decides with, from t, for topo (the daemon builds them at start, at each
 * reload or SetTunable, and when the topology is rebuilt): node_min_imbalance is resolved per
 * node, "auto" with the node's capacity (policy_node_capacity(), so use_isolated_cpus counts) as
 * its CPUs per node and topology_max_cpus_per_core() as the CPUs per core. Returns -EINVAL if topo
 * is NULL; *ret is written only on success.
 */
int policy_params_from_tunables(const Tunables *t, const Topology *topo, PolicyParams *ret);

/* The params under a scheduler that ignores cpu.weight and cpu.idle (a sched_ext one): weights
 * are not changed and the ladder does not use idle. The daemon and a replay both apply it. */
void policy_params_ignore_weights(PolicyParams *p);

/* fnmatch() of a cgroup path against a glob list, where a glob also matches every group below
 * what it matches ("cgbalance.slice" matches "cgbalance.slice/a/b"). Paths have no leading '/'. */
bool tunables_cgroup_matches(char *const *globs, const char *path);

/* A recording's name as `file` and `cgbalancectl record start` take it: no '/', not . or .. */
bool tunables_record_name_ok(const char *name);
