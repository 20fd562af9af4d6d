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
#include <systemd/sd-event.h>

#include "actuator.h"
#include "cgroup.h"
#include "event.h"
#include "macro.h"
#include "openmetrics.h"
#include "policy.h"
#include "sampler.h"
#include "topology.h"
#include "tunables.h"

typedef struct ManagerOptions {
        const char *config_path; /* NULL: TUNABLES_DEFAULT_PATH, which may be absent */
        const char *root; /* --root: read /proc and /sys below it; never act */
        bool dry_run; /* --dry-run: overrides the config's dry_run */
        const char *record_path; /* --record: record every tick there, whatever [record] says */
} ManagerOptions;

typedef struct Manager Manager;

/* Loads the config and the machine model. Errors are logged here; returns <0 to exit on. */
int manager_new(const ManagerOptions *o, Manager **ret);
/* Restores nothing: manager_stop() does that. Accepts NULL. */
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);
#define _cleanup_manager_ _cleanup_(manager_freep)

/*
 * A run, in three steps so that main() can put its observers (the bus, --events) between them:
 * manager_start() reconciles a crashed run's record and arms the tick and the signals in an event
 * loop (manager_get_event()); manager_run() sends READY=1 and runs the loop until a stop signal;
 * manager_stop() restores what the daemon changed. Each returns 0 or a negative errno (logged).
 */
int manager_start(Manager *m);
int manager_run(Manager *m);
int manager_stop(Manager *m);
/* The event loop of manager_start(), owned by the manager; NULL before. */
sd_event *manager_get_event(const Manager *m);

/* --once: one tick (two samples an interval apart; one since-boot sample under --root), prints
 * the snapshot and the plan to f, changes nothing. */
int manager_once(Manager *m, FILE *f);

/*
 * Recording (cgbalance-record(5)): start writing every tick to path (an existing file is rotated
 * to path.1 first), replacing a recording in progress; fixed: a reload's [record] file does not
 * change it (--record, the bus). Errors are logged. Stop: closes it, saying what it holds.
 */
int manager_record_start(Manager *m, const char *path, bool fixed);
void manager_record_stop(Manager *m);
/* The file being recorded to, or NULL. */
const char *manager_record_path(const Manager *m);

/* --dump-topology */
int manager_dump_topology(Manager *m, FILE *f);

/* ---- what the manager tells its observers (daemon/bus.c, the --events stream) */

typedef enum ManagerEventKind {
        MANAGER_EVENT_TICK_DONE, /* a full tick: the getters below show it */
        MANAGER_EVENT_TASK_MOVED, /* .action: a move that took effect */
        MANAGER_EVENT_WEIGHT_CHANGED, /* .action: a weight change that took effect */
        MANAGER_EVENT_LEVER_CHANGED, /* .action: a lever past the weight set or given back */
        MANAGER_EVENT_RELOADED, /* .ok, .message (the file, or "FILE:LINE: KEY: why") */
} ManagerEventKind;

typedef struct ManagerEvent {
        ManagerEventKind kind;
        const Event *action; /* the record lib/event.h defines */
        bool ok;
        const char *message;
} ManagerEvent;

/* Called from the event loop; e and what it points to are valid during the call only. */
typedef void (*ManagerObserver)(const ManagerEvent *e, void *userdata);

#define MANAGER_OBSERVERS_MAX 4

/* Adds an observer; each event goes to every observer in the order they were added. -EEXIST if
 * (observer, userdata) is one already, -ENOSPC beyond MANAGER_OBSERVERS_MAX. */
int manager_add_observer(Manager *m, ManagerObserver observer, void *userdata);
/* Removes it; nothing happens if it is none. */
void manager_remove_observer(Manager *m, ManagerObserver observer, void *userdata);

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
        char text[512]; /* what and why */
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
/* The last snapshot if it was taken of the topology in force: NULL before the first tick and
 * after a CPU hotplug until the next. */
const PolicySnapshot *manager_get_current_snapshot(const Manager *m);
/* What the last tick's sample counted and cost (NULL before the first tick). */
const SamplerSystem *manager_get_system(const Manager *m);
/* Per node index of snap (the current snapshot): the highest pressure of a managed group with a
 * task there, and the managed tasks there whose demand is at least min_task_load; both arrays
 * topology_n_nodes() long, zeroed by the caller. */
void manager_node_task_stats(const Manager *m, const PolicySnapshot *snap, uint32_t *pressure,
                             uint32_t *runnable);
uint64_t manager_get_ticks(const Manager *m);
uint64_t manager_get_last_tick_realtime_usec(const Manager *m);
const ActuatorCounters *manager_get_counters(const Manager *m);
/* The last MANAGER_RECENT_MAX actions, oldest first: the i-th (from 0), NULL past the last.
 * Points into the manager's record, valid until the next action (the next tick). */
const ManagerAction *manager_get_recent(const Manager *m, size_t i);

/* A group cgbalanced holds past its weight (a lever it set itself: the record says so), with the
 * protected group and the reason of the last lever change; both "" for a change of an earlier
 * run (found in the record, reconciled or continued). */
typedef struct ManagerEscalation {
        char *path;
        bool idle; /* cpu.idle = 1, set by cgbalanced */
        uint32_t quota_permyriad; /* a bandwidth limit cgbalanced set, permyriad of a CPU; 0 none */
        char partition[64]; /* the CPUs a partition keeps its tasks off, a cpulist; "" none */
        char for_cgroup[256];
        char reason[192];
        uint64_t tick; /* the tick of its last lever change in this run */
} ManagerEscalation;

/* The groups escalated after the last tick, by path: *ret has the returned count of entries,
 * valid until the next tick. */
size_t manager_get_escalations(const Manager *m, const ManagerEscalation **ret);

/* What the daemon counts of itself, for its metrics (daemon/metrics.h). */
#define MANAGER_TICK_BUCKETS 12
extern const double manager_tick_bounds[MANAGER_TICK_BUCKETS];
typedef struct ManagerStats {
        MetricsHistogram tick_seconds; /* each full tick: sample, plan, act */
        uint64_t reloads_ok, reloads_refused; /* SIGHUP and Reload() */
        uint64_t sample_failures, plan_failures; /* ticks skipped */
        uint64_t record_failures; /* a recording that could not be written (then stopped) */
        uint64_t start_realtime_usec;
} ManagerStats;
const ManagerStats *manager_get_stats(const Manager *m);

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
