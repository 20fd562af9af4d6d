/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The D-Bus API of cgbalanced, shared by the daemon (daemon/bus.c) and cgbalancectl. Names and
 * signatures here are the contract; man/cgbalancectl.1 and the README document them for users.
 *
 * Bus name org.cgbalance1 on the system bus, object /org/cgbalance1, interface
 * org.cgbalance1.Manager. Loads and pressures are permyriad (10000 = one CPU busy, or 100%).
 *
 * Properties (read by anyone; PropertiesChanged at most once per tick):
 *   Version         s          "0.1.0"
 *   State           s          "running", "paused" or "dry-run"
 *   CgroupMode      s          "v1", "v2", "hybrid" or "none"
 *   Nodes           a(usuuuu)  id, CPUs (cpulist), capacity (usable CPUs), load (permyriad of
 *                              one CPU, utilisation + managed tasks' wait), pressure (the
 *                              highest cpu.pressure some avg10 of a managed group with a task
 *                              there, permyriad), runnable (managed tasks there whose demand is
 *                              at least min_task_load)
 *   CPUs            a(uu)      cpu, utilisation permyriad
 *   ManagedCgroups  a(stttb)   path, weight, base weight (v2 units), pressure permyriad
 *                              (UINT64_MAX when unknown), protected
 *   ManagedTasks    a(ussiiuusbb) pid, comm, cgroup, cpu, node, util, demand (permyriad),
 *                              allowed CPUs (cpulist), ours (the daemon set the mask), foreign
 *   Counters        a{st}      ticks, moves, cross_node_moves, weight_changes, escalations,
 *                              tasks_gone, masks_refused, tasks_banned, cgroups_gone, restores,
 *                              errors
 *   Config          a{ss}      "section.key" -> value, every key, effective values
 *   LastTickUSec    t          CLOCK_REALTIME of the last tick, usec; 0 before the first
 *   Recording       s          the file every tick is recorded to (cgbalance-record(5)), ""
 *   RecentActions   a(tss)     the last 32 actions carried out, oldest first: CLOCK_REALTIME
 *                              usec, subject ("pid 123 (comm)" or a cgroup path), what and why
 *   Escalations     a(sbusss)  the groups cgbalanced holds back past the weight, by path:
 *                              path, cpu.idle set, CPU limit (permyriad of one CPU, 0 none),
 *                              the CPUs a partition keeps its tasks off (a cpulist, "" none),
 *                              the protected group and the reason of the last change ("" for
 *                              an earlier run's, from its record)
 *
 * Methods (mutating ones: root, or a member of [bus] control_group, only):
 *   Reload()                   re-reads the config; a bad file: CGB_ERROR_CONFIG naming
 *                              file:line, the old config stays in force
 *   Pause(), Resume()          paused: samples and answers, changes nothing
 *   RebalanceNow()             a tick now, with node balancing not waiting for its multiplier
 *                              or hold
 *   SetTunable(s key, s value) "section.key" or "key"; validated as the file is; in force
 *                              until the next reload. Unknown key or bad value: InvalidArgs
 *   RecordStart(s name)        record every tick to name, a file name in [record] directory
 *                              (no '/'); a bad name: InvalidArgs
 *   RecordStop()               stop recording (nothing if none)
 *   Explain(u pid) -> s        (read-only) why the task is where it is, what the daemon last
 *                              did to it and why; CGB_ERROR_NO_SUCH_TASK if not managed
 *   Dump() -> s                (read-only) the last snapshot and plan, as --once prints them
 *   Metrics(s format) -> s     (read-only) the metrics (daemon/metrics.h), format
 *                              "prometheus" (text 0.0.4; also "") or "openmetrics" (1.0); another
 *                              format: InvalidArgs
 *
 * Signals:
 *   TaskMoved(u pid, s from, s to, s reason)            from/to: "node N"
 *   WeightChanged(s cgroup, t old, t new, s reason)     v2 units
 *   LeverChanged(s cgroup, s lever, t old, t new, s for_cgroup, s reason)
 *                       lever "idle" (0/1), "quota" (permyriad of one CPU, 0 none) or
 *                       "partition" (CPUs reserved); for_cgroup the protected group, or ""
 *   Reloaded(b ok, s message)
 */

#define CGB_BUS_NAME "org.cgbalance1"
#define CGB_BUS_PATH "/org/cgbalance1"
#define CGB_BUS_INTERFACE "org.cgbalance1.Manager"

#define CGB_ERROR_CONFIG "org.cgbalance1.Error.ConfigInvalid"
#define CGB_ERROR_NO_SUCH_TASK "org.cgbalance1.Error.NoSuchTask"

#define CGB_SIG_NODES "a(usuuuu)"
#define CGB_SIG_CPUS "a(uu)"
#define CGB_SIG_CGROUPS "a(stttb)"
#define CGB_SIG_TASKS "a(ussiiuusbb)"
#define CGB_SIG_COUNTERS "a{st}"
#define CGB_SIG_CONFIG "a{ss}"
#define CGB_SIG_RECENT "a(tss)"
#define CGB_SIG_ESCALATIONS "a(sbusss)"
