/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The actuator carries out a plan: sched_setaffinity() on every thread of a moved task (and
 * optionally numa_migrate_pages(), bounded), and cgroup CPU weights. It owns the record of what
 * the daemon changed:
 *
 *   - Before it first changes a task's mask or a group's weight, it records the original (task:
 *     pid, starttime, original mask; group: path, original native weight) and what it set, in
 *     state_dir/changes, written atomically (temporary file + rename) before the change is made.
 *   - actuator_restore_all() (SIGTERM) puts back each original, only where the identity still
 *     matches (pid + starttime) and the value is still the one the daemon set: an affinity or
 *     weight someone else set since is theirs and stays.
 *   - actuator_reconcile() at start does the same from a record a crashed run left.
 *   No task is ever given an empty mask or one naming offline CPUs: masks are intersected with
 *   the task's allowed CPUs first.
 *
 * Errors are sorted by meaning (STYLE.md): ESRCH, the task is gone: skipped and counted, not
 * logged above debug. EINVAL (mask outside the task's cpuset, CPU went offline): counted; the
 * next tick re-plans from fresh samples, nothing is retried. EPERM: the task is no longer
 * managed (actuator_task_banned()). A cgroup gone (ENOENT/ENODEV) is skipped and counted;
 * other cgroup write errors are logged once per group.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "cpumask.h"
#include "macro.h"
#include "policy.h"

typedef struct ActuatorCounters {
        uint64_t moves; /* tasks whose mask was changed */
        uint64_t cross_node_moves; /* of those, to another node */
        uint64_t weight_changes;
        uint64_t tasks_gone; /* ESRCH */
        uint64_t masks_refused; /* EINVAL, or threads pinned apart: no one mask to move */
        uint64_t tasks_banned; /* EPERM: no longer managed */
        uint64_t cgroups_gone; /* ENOENT, ENODEV */
        uint64_t restores; /* originals put back */
        uint64_t errors; /* anything else */
} ActuatorCounters;

typedef struct Actuator Actuator;

/*
 * proc_fd: a dirfd of /proc (not taken over). layout: where the cgroup controllers are (copied).
 * state_dir: where the record lives, created if missing (mode 0700); NULL keeps no record (tests,
 * --root replays). Returns -errno from creating the directory, -ENOMEM.
 */
int actuator_new(int proc_fd, const CgroupLayout *layout, const char *state_dir, Actuator **ret);
Actuator *actuator_free(Actuator *a); /* does not restore: call actuator_restore_all() first */
DEFINE_TRIVIAL_CLEANUP_FUNC(Actuator *, actuator_free);
#define _cleanup_actuator_ _cleanup_(actuator_freep)

/*
 * Carries out the plan against the tasks and groups of snap (the snapshot it was made from).
 * dry_run: logs each action at info and changes nothing. migrate_memory_max_mb: 0 never moves
 * memory, else moves a task's pages to its new node when its RSS is at most that. Per-action
 * failures are counted, not returned; returns <0 only when the record cannot be written (then
 * nothing further is changed).
 */
int actuator_apply(Actuator *a, const Plan *plan, const PolicySnapshot *snap, bool dry_run,
                   uint64_t migrate_memory_max_mb, uint64_t now_usec);

/* The mask the daemon set on this task and when, if it did and the record is current. */
bool actuator_lookup_task(const Actuator *a, pid_t pid, uint64_t starttime_ticks,
                          const CpuMask **ret_mask, uint64_t *ret_when_usec);
/* The weight (v2 units) a group had before the daemon changed it, if it did. */
bool actuator_lookup_cgroup(const Actuator *a, const char *path, uint32_t *ret_base_weight);
/* True after an EPERM on this task. */
bool actuator_task_banned(const Actuator *a, pid_t pid, uint64_t starttime_ticks);

/* Puts back every recorded original (see above) and empties the record. Returns the number of
 * originals restored, or <0 if the record could not be rewritten. */
int actuator_restore_all(Actuator *a);
/* Loads the record a previous run left in state_dir, restores it as actuator_restore_all()
 * does. Returns the number restored, 0 when there was no record, -EBADMSG for a corrupt record
 * (kept as changes.corrupt, never half applied). */
int actuator_reconcile(Actuator *a);

const ActuatorCounters *actuator_counters(const Actuator *a);

/* A change that took effect (never in a dry run): for the log of recent actions and the bus. */
typedef struct ActuatorEvent {
        bool is_move; /* else a weight */
        pid_t pid;
        const char *comm;
        int from_node, to_node;
        const char *cgroup;
        uint64_t old_weight, new_weight; /* v2 units */
        const char *reason;
} ActuatorEvent;

typedef void (*ActuatorObserver)(const ActuatorEvent *e, void *userdata);

/* Called after each move or weight change that took effect. NULL to stop. */
void actuator_set_observer(Actuator *a, ActuatorObserver observer, void *userdata);

/*
 * The record, state_dir/changes: text, one object a line, every line ending in '\n':
 *
 *   cgbalance-changes 1
 *   task PID STARTTIME ORIG_CPULIST SET_CPULIST WHEN_USEC
 *   cgroup ORIG_NATIVE SET_NATIVE PATH
 *
 * Fields are separated by one space. Numbers are decimal without sign or leading zero; PID is
 * 1..INT_MAX, natives (cpu.shares or cpu.weight, as the host has) 1..262144. Cpulists are
 * non-empty and canonical, as cpumask_format() writes them ("0-3,8"). SET is the affinity the
 * kernel reported after the change. PATH (cgroup_path_is_valid(), not the root) is the rest of the
 * line taken verbatim: group names may hold spaces, never control characters, so nothing needs
 * escaping. At most one line per PID and per PATH. Anything else is a corrupt record.
 */
typedef struct ActuatorTaskChange {
        pid_t pid;
        uint64_t starttime_ticks;
        CpuMask *orig; /* the affinity before the daemon's first change */
        CpuMask *set; /* the affinity the daemon set, as the kernel reported it */
        uint64_t when_usec;
} ActuatorTaskChange;

typedef struct ActuatorCgroupChange {
        char *path;
        uint64_t orig_native, set_native;
} ActuatorCgroupChange;

typedef struct ActuatorRecord {
        ActuatorTaskChange *tasks; /* sorted by pid */
        size_t n_tasks;
        ActuatorCgroupChange *cgroups;
        size_t n_cgroups;
} ActuatorRecord;

ActuatorRecord *actuator_record_free(ActuatorRecord *r); /* accepts NULL, returns NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(ActuatorRecord *, actuator_record_free);
#define _cleanup_actuator_record_ _cleanup_(actuator_record_freep)

/*
 * Pure: parses a record's text (NUL-terminated). Masks get the given capacity; a CPU beyond it
 * is corrupt. -EBADMSG for anything but the format above (ret_line, when not NULL, gets the
 * 1-based line at fault; 0 for a pid or path recorded twice), -EINVAL for a NULL text or a bad
 * capacity, -ENOMEM.
 */
int actuator_record_parse(const char *text, unsigned capacity, ActuatorRecord **ret,
                          unsigned *ret_line);
/* Pure: the text of a record, which actuator_record_parse() reads back. -EINVAL for an entry
 * it could not read back (empty mask, bad path, value out of range), -ENOMEM. */
int actuator_record_format(const ActuatorRecord *r, char **ret);
