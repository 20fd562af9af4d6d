/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The actuator carries out a plan: sched_setaffinity() on every thread of a moved task (and
 * optionally numa_migrate_pages(), bounded), cgroup CPU weights, and the levers past the weight
 * (cgroup-levers.h): cpu.idle and a bandwidth quota on the groups the plan escalates. A quota
 * step is in permyriad of one CPU: it is written as permyriad * period / 10000 usec (at least the
 * kernel's 1000) with the group's period as it is, 0 as no limit. Partitions are not carried out
 * yet: a plan step with that lever is counted as an error, said once. It keeps the record of what
 * the daemon changed (record.h: the type, its file format, load and save):
 *
 *   - Before it first changes a task's mask or a group's weight, cpu.idle or quota, it records the
 *     original (task: pid, starttime, original mask; group: path, original native value) and
 *     what it set, in state_dir/changes, written atomically (record_save_at()) before the change
 *     is made.
 *   - actuator_restore_all() (SIGTERM) puts back each original, only where the identity still
 *     matches (pid + starttime) and the value is still the one the daemon set: an affinity,
 *     weight, cpu.idle or quota someone else set since is theirs and stays.
 *   - actuator_reconcile() at start does the same from a record a crashed run left.
 *   No task is ever given an empty mask or one naming offline CPUs: masks are intersected with
 *   the task's allowed CPUs first.
 *
 * Errors are sorted by meaning (STYLE.md): ESRCH, the task is gone: skipped and counted, not
 * logged above debug. EINVAL (mask outside the task's cpuset, CPU went offline): counted; the
 * next tick re-plans from fresh samples, nothing is retried. EPERM: the task is no longer
 * managed (a ban in the record: record_task_banned()). A cgroup gone (ENOENT/ENODEV) is
 * skipped and counted; other cgroup write errors are logged once per group.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "cpumask.h"
#include "macro.h"
#include "policy.h"
#include "record.h"

typedef struct ActuatorCounters {
        uint64_t moves; /* tasks whose mask was changed */
        uint64_t cross_node_moves; /* of those, to another node */
        uint64_t weight_changes;
        uint64_t escalations; /* cpu.idle or quota set on a group, up or down the ladder */
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
 * memory, else the most memory this plan moves to the moved tasks' new nodes, all together: a
 * task whose RSS is more than what is left keeps its pages where they are. Per-action
 * failures are counted, not returned; returns <0 only when the record cannot be written (then
 * nothing further is changed).
 */
int actuator_apply(Actuator *a, const Plan *plan, const PolicySnapshot *snap, bool dry_run,
                   uint64_t migrate_memory_max_mb, uint64_t now_usec);

/*
 * What the daemon changed and owns, for readers (the sampler): the masks it set
 * (record_lookup_task()), groups' values before it changed them (record_lookup_cgroup(), in
 * native units), the tasks banned after an EPERM (record_task_banned()). Never NULL; valid
 * until the next actuator_apply(), actuator_restore_all() or actuator_reconcile().
 */
const Record *actuator_record(const Actuator *a);

/* Puts back every recorded original (see above) and empties the record. Returns the number of
 * originals restored, or <0 if the record could not be rewritten. */
int actuator_restore_all(Actuator *a);
/* Loads the record a previous run left in state_dir, restores it as actuator_restore_all()
 * does. Returns the number restored, 0 when there was no record, -EBADMSG for a corrupt record
 * or one over RECORD_SIZE_MAX or RECORD_ENTRIES_MAX, refused before it is parsed (kept as
 * changes.corrupt, never half applied; the log says which). The heap the record took goes
 * back to the system (malloc_trim()). */
int actuator_reconcile(Actuator *a);

const ActuatorCounters *actuator_counters(const Actuator *a);

/* A change that took effect (never in a dry run): for the log of recent actions and the bus. */
typedef enum ActuatorEventKind {
        ACTUATOR_EVENT_MOVE,
        ACTUATOR_EVENT_WEIGHT,
        ACTUATOR_EVENT_ESCALATION, /* a lever past the weight set or given back (lever, values) */
} ActuatorEventKind;

typedef struct ActuatorEvent {
        ActuatorEventKind kind;
        pid_t pid;
        const char *comm;
        int from_node, to_node;
        const char *cgroup;
        uint64_t old_weight, new_weight; /* v2 units */
        PolicyLever lever; /* ACTUATOR_EVENT_ESCALATION: the lever, its old and new value as in
                            * PlanEscalation, and the protected group it is for (NULL: none) */
        uint64_t old_value, new_value;
        const char *for_cgroup;
        const char *reason;
} ActuatorEvent;

typedef void (*ActuatorObserver)(const ActuatorEvent *e, void *userdata);

/* Called after each move, weight change or escalation step that took effect. NULL to stop. */
void actuator_set_observer(Actuator *a, ActuatorObserver observer, void *userdata);
