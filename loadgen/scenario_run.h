/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Running a scenario (loadgen/scenario.h) in a sandbox: its groups made below the run's own
 * (cgbalance.slice/loadgen-PID/NAME, with their weights), one process per task instance in its
 * group, started where the scenario says (its start CPUs, or its node's), all released together,
 * each running its phases (loadgen/phases.h) until they end or the scenario's duration does.
 * Meanwhile where each instance runs is sampled every RESIDENCY_SAMPLE_USEC (loadgen/residency.h),
 * and a progress line goes to stderr every second. SIGINT/SIGTERM (cli_stop) ends every
 * instance; nothing of the run is left when scenario_run() returns: the sandbox removes the
 * groups and files when it is freed.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "phases.h"
#include "residency.h"
#include "sandbox.h"
#include "scenario.h"
#include "topology.h"

typedef struct InstanceResult {
        size_t task; /* index in the scenario's tasks */
        unsigned instance;
        pid_t pid;
        int start_cpu; /* the CPU it was on when released; -1 unknown */
        int initial_node, most_node; /* node ids; -1 unknown */
        uint64_t user_usec, sys_usec; /* its own and its children's, from wait4() */
        Residency residency;
        TaskStats stats; /* what its phases counted */
        int exit_status; /* wait status */
        int error; /* phases_run()'s, 0 when it succeeded */
} InstanceResult;

typedef struct ScenarioResult {
        InstanceResult *inst;
        size_t n_inst;
        uint64_t elapsed_usec; /* from the release to the last instance's end */
        bool interrupted;
        unsigned n_nodes;
        int node_ids[RESIDENCY_MAX_NODES];
        /* Per scenario group, its cgroup (cgbalance.slice/loadgen-PID/NAME), valid while the
         * sandbox is: what cgbalanced's weights.protected_cgroups names for a protected one. */
        const char **group_paths;
} ScenarioResult;

void scenario_result_done(ScenarioResult *r);

typedef struct ScenarioRunOptions {
        uint64_t duration_usec; /* 0: the scenario's own */
        bool quiet; /* no progress lines */
        const Topology *machine; /* nodes and their CPUs */
} ScenarioRunOptions;

/*
 * Runs s in sb (made by the caller with the scenario's cpus and no memory limit: the groups get
 * it). Returns 0 with *ret filled, also when interrupted (ret->interrupted), or a negative errno
 * (logged) when it could not start: a group the kernel refused, a start placement with no CPU
 * in the run's cpuset, fork().
 */
int scenario_run(const Scenario *s, Sandbox *sb, const ScenarioRunOptions *o, ScenarioResult *ret);

/* The report, per task: instances, CPU seconds and share, work, residency, latency. */
void scenario_print_report(FILE *f, const Scenario *s, const ScenarioResult *r);

/* The same as JSON, per instance too. */
void scenario_write_json(Json *j, const Scenario *s, const ScenarioResult *r, const Sandbox *sb);
