/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The sandbox every loadgen run lives in, so cgbalanced manages it and nothing of it outlives it:
 *
 *   cgroups   cgbalance.slice/loadgen-PID        the run; --cpus is its cpuset
 *             cgbalance.slice/loadgen-PID/job    the foreground job (make and the compilers)
 *             cgbalance.slice/loadgen-PID/load   the background load; --mem is its memory limit
 *   files     DIR/loadgen-PID/                   the job's tree, the loads' files (DIR: --dir)
 *
 * "RAM" for io_load, read_load and mem_load is the load group's memory limit. The job is not
 * limited: with no swap a limit shared with mem_load would OOM-kill the compiler, not slow it.
 *
 * sandbox_free() SIGKILLs every process left in the groups, removes the groups and the
 * directory. A run killed before it could do so (SIGKILL, a crash) leaves them behind;
 * sandbox_new() first removes those of every loadgen-PID whose PID is no longer a loadgen.
 *
 * Without cgroups (SandboxOptions.cgroups false: --no-sandbox) there are only the files, --cpus
 * becomes the affinity of each child, and CPU time and memory peaks are not available.
 *
 * The host's reserve: the run's own group is capped at all the machine's CPUs but half of one
 * (cpu.cfs_quota_us or cpu.max, the period left as found), so whatever the run does, the rest of
 * the machine keeps that half. Uncapped, process_load's two rings over both CPUs of a 2-CPU host
 * starved every group outside theirs and stalled the machine for 320 s (RCU stalls). The cap is on
 * the run's group alone, so a static setting or a scenario's own limits on the groups below are
 * left as they are; it goes with the group. --no-host-reserve (SandboxOptions.no_host_reserve)
 * lifts it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup-tree.h"
#include "cpumask.h"
#include "json.h"

#define SANDBOX_SLICE "cgbalance.slice"
#define SANDBOX_DEFAULT_DIR "/var/tmp"

typedef enum SandboxPart {
        SANDBOX_RUN, /* the run's own group: both below */
        SANDBOX_JOB,
        SANDBOX_LOAD,
        _SANDBOX_PART_MAX,
} SandboxPart;

/*
 * What an operator sets by hand instead of running cgbalanced, once, on the groups the run makes
 * (loadgen --static, loadgen compare --static): set when the group is made, before any task is
 * in it, and left for the whole run. A plain value; cli_parse_static() reads it from text.
 */
typedef struct SandboxSetting {
        uint64_t weight; /* cpu.weight in v2 units (cpu.shares, converted, on v1); 0: not set */
        bool idle; /* cpu.idle = 1 (v1 and v2, Linux 5.15+) */
} SandboxSetting;

/* A scenario's group by its [group NAME]: set when sandbox_add_group() makes it. */
#define SANDBOX_GROUP_NAME_MAX 64u
#define SANDBOX_STATIC_MAX_NAMED 8u
typedef struct SandboxNamedSetting {
        char name[SANDBOX_GROUP_NAME_MAX];
        SandboxSetting set;
} SandboxNamedSetting;

typedef struct SandboxStatic {
        SandboxSetting part[_SANDBOX_PART_MAX]; /* [SANDBOX_RUN] is never set */
        SandboxNamedSetting named[SANDBOX_STATIC_MAX_NAMED];
        size_t n_named;
} SandboxStatic;

/* Pure: whether s sets anything; whether it sets cpu.idle somewhere. NULL sets nothing. */
bool sandbox_static_is_set(const SandboxStatic *s);
bool sandbox_static_has_idle(const SandboxStatic *s);
/* Pure: the setting s has for a scenario's group name, or NULL. */
const SandboxSetting *sandbox_static_named(const SandboxStatic *s, const char *name);

/* Pure: "job", "load" (the groups' names below the run's own); NULL for SANDBOX_RUN. */
const char *sandbox_part_name(SandboxPart part);

typedef struct SandboxOptions {
        const CpuMask *cpus; /* NULL: every online CPU */
        uint64_t mem_bytes; /* the load group's memory limit; 0: none */
        const char *dir; /* where the run's directory is made; NULL: SANDBOX_DEFAULT_DIR */
        bool cgroups; /* false: files only */
        const SandboxStatic *statics; /* NULL: the groups as the kernel makes them */
        bool no_host_reserve; /* true: the run's group uncapped (see the host's reserve above) */
} SandboxOptions;

/*
 * Pure: the quota that leaves the rest of a machine of ncpus CPUs half of one, in usec per
 * period_usec: (ncpus - 0.5) x period_usec, within CGROUP_QUOTA_MIN_USEC..CGROUP_QUOTA_MAX_USEC.
 * An ncpus of 0 counts as 1.
 */
uint64_t sandbox_host_reserve_quota(unsigned ncpus, uint64_t period_usec);
/* The period of the run group's limit: short, so the host's half CPU comes round often. */
#define SANDBOX_RESERVE_PERIOD_USEC 20000u

typedef struct Sandbox Sandbox;

/*
 * Removes what dead runs left, then makes the run's groups and directory, the run's group capped
 * for the host's reserve unless o->no_host_reserve (a cap the kernel refuses does not fail the
 * sandbox: sandbox_host_reserve() tells), each group with its static setting (o->statics). Errors:
 * -EACCES or -EPERM (not root: the message should say so), -EOPNOTSUPP (no cpu controller; --mem
 * with no memory controller; a static idle on a kernel without cpu.idle; statics without cgroups),
 * -ERANGE/-EINVAL (the kernel refused the cpuset), and the errors of cgroup_create(),
 * cgroup_set_cpu_weight(), cgroup_set_cpu_idle() and mkdir().
 */
int sandbox_new(const SandboxOptions *o, Sandbox **ret);
/* Kills what is left, removes groups and files. Accepts NULL; returns NULL. */
Sandbox *sandbox_free(Sandbox *sb);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sandbox *, sandbox_free);
#define _cleanup_sandbox_ _cleanup_(sandbox_freep)

/* A new path below the run's directory (not created); NULL on ENOMEM. Caller frees. */
char *sandbox_path(const Sandbox *sb, const char *name);
/* The group of part, "cgbalance.slice/loadgen-PID/load"; NULL without cgroups. */
const char *sandbox_group(const Sandbox *sb, SandboxPart part);
/*
 * The host's reserve on the run's group: 0 and the quota and period it was set to; -ENODATA when
 * none was asked for (no_host_reserve, no cgroups); else why the kernel did not take it
 * (-EOPNOTSUPP: no bandwidth control; -EINVAL on v1: SANDBOX_SLICE is capped lower already;
 * the errors of cgroup_get_cpu_quota() and cgroup_set_cpu_quota()), the run going on uncapped.
 * Either ret_ may be NULL.
 */
int sandbox_host_reserve(const Sandbox *sb, uint64_t *ret_quota_usec, uint64_t *ret_period_usec);
/* The cgroup layout in use; NULL without cgroups. */
const CgroupLayout *sandbox_layout(const Sandbox *sb);
/* The CPUs the run may use, and how many. */
const CpuMask *sandbox_cpus(const Sandbox *sb);
unsigned sandbox_ncpus(const Sandbox *sb);

/*
 * For a child after fork(), before it execs or works: moves the calling process into part's
 * group (or, without cgroups, sets its affinity to the run's CPUs).
 */
int sandbox_enter(const Sandbox *sb, SandboxPart part);
/*
 * A group of a scenario's below the run's own, cgbalance.slice/loadgen-PID/NAME, with cpu.weight
 * weight (cpu.shares, converted, on cgroup v1) and, when mem_bytes is not 0, that memory limit;
 * a static setting for NAME (SandboxOptions.statics) takes the weight's place and sets cpu.idle.
 * NAME must not be "job" or "load" (-EEXIST). *ret_path (may be NULL) points at the group's path,
 * valid while sb is. Removed with the run's groups. -EOPNOTSUPP without cgroups, -ENOSPC beyond
 * SANDBOX_MAX_GROUPS, and the errors of cgroup_create() and cgroup_set_cpu_weight().
 */
#define SANDBOX_MAX_GROUPS 64u
int sandbox_add_group(Sandbox *sb, const char *name, uint64_t weight, uint64_t mem_bytes,
                      const char **ret_path);

/* For a child after fork(): moves the calling process into a group of sandbox_add_group(). */
int sandbox_enter_group(const Sandbox *sb, const char *path);

/* CPU time used so far by part's group. -EOPNOTSUPP without cgroups. */
int sandbox_cpu_usec(const Sandbox *sb, SandboxPart part, uint64_t *ret);
/* The most memory part's group has held. -EOPNOTSUPP without cgroups or a memory controller. */
int sandbox_memory_peak(const Sandbox *sb, SandboxPart part, uint64_t *ret);
/* SIGKILLs every process in the run's groups and waits until they are gone (-EBUSY after 5 s).
 * Without cgroups: 0, nothing done (each child is the caller's to end). */
int sandbox_kill(const Sandbox *sb);

/*
 * A "machine" member for a report: kernel, arch, online CPUs, NUMA nodes, cgroup mode, the run's
 * CPUs. When the run has static settings, then a "static" member too: per group set, its
 * "weight" (v2 units) and "idle" as read back from the group now, at the report (the run's end),
 * so a report shows what the groups held, not what was asked (null where a read failed).
 */
void sandbox_json_machine(Json *j, const Sandbox *sb);
