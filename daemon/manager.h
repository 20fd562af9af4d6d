/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The daemon's state and main loop (sd-event): a timer tick that samples, plans and acts;
 * SIGTERM/SIGINT restore what the daemon changed and stop; SIGHUP reloads the config, keeping the
 * old one on any error. The policy is lib/policy.c; this file only moves data between the
 * sampler, the policy and the actuator, and owns their lifetimes.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "actuator.h"
#include "cgroup.h"
#include "macro.h"
#include "policy.h"
#include "topology.h"
#include "tunables.h"

typedef struct ManagerOptions {
        const char *config_path; /* NULL: TUNABLES_DEFAULT_PATH, which may be absent */
        const char *root; /* --root: read /proc and /sys below it; never act */
        bool dry_run; /* --dry-run: overrides the config's dry_run */
        const char *bus_address; /* --bus: NULL for the system bus */
} ManagerOptions;

typedef struct Manager Manager;

/* Loads the config and the machine model. Errors are logged here; returns <0 to exit on. */
int manager_new(const ManagerOptions *o, Manager **ret);
/* Restores nothing: manager_stop() does that. Accepts NULL. */
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);
#define _cleanup_manager_ _cleanup_(manager_freep)

/* Reconciles a crashed run's record, arms the tick and the signals, and runs until a stop signal;
 * then restores what it changed. Returns the exit status's negative errno, or 0. */
int manager_run(Manager *m);

/* --once: one tick (two samples an interval apart; one since-boot sample under --root), prints
 * the snapshot and the plan to f, changes nothing. */
int manager_once(Manager *m, FILE *f);

/* --dump-topology */
int manager_dump_topology(Manager *m, FILE *f);

/* ---- for the D-Bus object (daemon/bus.c) */

typedef enum ManagerState {
        MANAGER_RUNNING,
        MANAGER_PAUSED,
        MANAGER_DRY_RUN,
} ManagerState;

#define MANAGER_RECENT_MAX 32

typedef struct ManagerAction {
        uint64_t realtime_usec;
        char subject[96]; /* "pid 123 (comm)" or a cgroup path */
        char text[256]; /* what and why */
} ManagerAction;

ManagerState manager_get_state(const Manager *m);
const char *manager_state_to_string(ManagerState s);
const CgroupLayout *manager_get_layout(const Manager *m);
const Topology *manager_get_topology(const Manager *m);
const Tunables *manager_get_tunables(const Manager *m);
/* The last full tick: its snapshot (NULL before the first), the node loads (by node index, as
 * policy_node_loads() gives them) and plan. Valid until the next tick. */
const PolicySnapshot *manager_get_snapshot(const Manager *m);
const uint64_t *manager_get_node_loads(const Manager *m);
uint64_t manager_get_ticks(const Manager *m);
uint64_t manager_get_last_tick_realtime_usec(const Manager *m);
const ActuatorCounters *manager_get_counters(const Manager *m);
/* The last MANAGER_RECENT_MAX actions, oldest first. */
size_t manager_get_recent(const Manager *m, const ManagerAction **ret);

/* Shared by SIGHUP and Reload(): a fresh config, validated, swapped whole; on failure the old
 * one stays and *ret_error (if not NULL) gets "FILE:LINE: KEY: why" (caller frees). */
int manager_reload(Manager *m, char **ret_error);
void manager_pause(Manager *m);
void manager_resume(Manager *m);
/* A tick now, node balancing not waiting for its multiplier or hold. */
int manager_rebalance_now(Manager *m);
/* One key ("section.key" or "key"), validated like the file; until the next reload. -EINVAL
 * (unknown key, bad value) with *ret_error set. */
int manager_set_tunable(Manager *m, const char *key, const char *value, char **ret_error);
/* Text for Explain(pid); -ESRCH when the pid is not a managed task of the last tick, -EINVAL when
 * it is a kernel thread. */
int manager_explain(Manager *m, pid_t pid, char **ret);
/* The last snapshot and plan, as --once prints them. */
int manager_dump(Manager *m, char **ret);
