/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgroup access: where the controllers are (v1, v2 or hybrid), creating and removing groups,
 * CPU weight, cpuset, memory limit, moving tasks, listing and killing a group's processes, and
 * reading a group's CPU usage, memory peak and pressure.
 *
 * Hosts come in three shapes, and the daemon works on each:
 *   v2      one cgroup2 mount with the cpu controller: cpu.weight, cpu.stat usage_usec,
 *           cpu.pressure, cgroup.procs, cpuset.cpus/mems, memory.max/peak, all in the same
 *           directory.
 *   v1      cpu (cpu.shares), cpuacct (cpuacct.usage), cpuset and memory
 *           (memory.limit_in_bytes) as cgroup v1 hierarchies, no cgroup2 mount: no per-group
 *           pressure.
 *   hybrid  the v1 controllers plus a cgroup2 mount without controllers (systemd's "unified"
 *           mount, or /sys/fs/cgroup/unified on the dev machines). v1 groups have no *.pressure
 *           files, but a group made in the cgroup2 mount has them for the processes written to
 *           its cgroup.procs. So on hybrid hosts every group also gets a "mirror" group of the
 *           same relative path under the cgroup2 mount: weight and cpuset through v1, pressure
 *           through the mirror (systemd does the same).
 *
 * Group paths are relative to each hierarchy's root, "cgbalance.slice/loadgen-1": no leading or
 * trailing '/', no empty, "." or ".." components. "" is the root group, which reads and moves
 * accept and create/remove refuse (-EINVAL).
 *
 * How it is done: libcgroup (2.0.2) for what it is made for, initialisation, finding controller
 * mounts, creating and deleting groups, writing control values and moving threads. libcgroup
 * cannot see a cgroup2 mount without controllers (it only lists mounts through their
 * controllers), so the unified mount is found in /proc/self/mountinfo and the hybrid mirror is
 * made and written directly. Reads (weight, usage, pressure) open files under the layout's paths,
 * so tests point a layout at a fixture tree.
 *
 * Writers (create, remove, set_*, attach_tid) act through libcgroup on the live hierarchies and
 * need the layout of cgroup_layout_detect(), which also initialises libcgroup; a layout read from
 * a fixture only serves the readers and cgroup_attach_pid().
 *
 * Errors are negative errno values; ret_ arguments are written only on success. Besides those
 * listed per function, every function may return:
 *   -EINVAL       bad group path or argument
 *   -EOPNOTSUPP   the host lacks what it needs (no cpu controller, no cpuacct, no cpuset, no
 *                 memory controller, or, for pressure, no cgroup2 mount at all; a thread move on
 *                 v2)
 *   -ENOENT       the group (or its hybrid mirror) does not exist
 *   -ENAMETOOLONG a path beyond CGROUP_PATH_MAX
 *   -EBADMSG      a file read holds a NUL byte (as for every reader of a kernel file, see
 *                 fileio.h; other malformed contents are -EINVAL where listed)
 *   and the errno of the failed system call: -EACCES/-EPERM (not allowed), -EROFS (read-only
 *   cgroupfs, e.g. in a container), -ESRCH (task gone), -ENOSPC (v1 cpuset without cpus or mems),
 *   -EBUSY (group has children). libcgroup's own codes are mapped by cgroup_ecg_to_errno().
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpumask.h"
#include "psi.h"

#define CGROUP_PATH_MAX 4096

typedef enum CgroupMode {
        CGROUP_MODE_NONE, /* no cpu controller, no cgroup2 mount: nothing to manage */
        CGROUP_MODE_V1, /* cpu controller on v1, no cgroup2 mount */
        CGROUP_MODE_HYBRID, /* cpu controller on v1, and a cgroup2 mount for pressure */
        CGROUP_MODE_V2, /* a cgroup2 mount; the controllers we use are there, if anywhere */
        _CGROUP_MODE_MAX,
} CgroupMode;

/*
 * Where things are. A plain value: copy it, build it in tests. A path is "" when the thing is
 * absent. On v2, cpu_path, cpuset_path and memory_path are unified_path when those controllers
 * are listed in the root's cgroup.controllers, and cpuacct_path is "" (cpu.stat has the usage).
 * On v1 and hybrid they are the v1 mount points (cpu and cpuacct may be the same, co-mounted,
 * directory); a cpuset or memory controller on the cgroup2 mount while cpu is on v1 is not used.
 */
typedef struct CgroupLayout {
        CgroupMode mode;
        char cpu_path[CGROUP_PATH_MAX];
        char cpuacct_path[CGROUP_PATH_MAX];
        char cpuset_path[CGROUP_PATH_MAX];
        char memory_path[CGROUP_PATH_MAX];
        char unified_path[CGROUP_PATH_MAX]; /* the cgroup2 mount */
} CgroupLayout;

/* "none", "v1", "hybrid", "v2"; NULL for an invalid mode. */
const char *cgroup_mode_to_string(CgroupMode mode);

/* Whether path is a valid group path (see above); "" is valid (the root group). */
bool cgroup_path_is_valid(const char *path);

/*
 * Pure: the layout a /proc/self/mountinfo text describes. v2_controllers is the text of the
 * cgroup2 mount's root cgroup.controllers ("cpuset cpu io memory pids"), or NULL when there is
 * none or it is unknown. Every path gets root prepended ("" or NULL: none), which points a layout
 * at a fixture tree. The first cgroup2 mount and the first mount of each v1 controller are used.
 * Octal escapes in mount points (\040 for a space) are decoded.
 * -EINVAL for a line that is not mountinfo.
 */
int cgroup_layout_parse(const char *mountinfo, const char *v2_controllers, const char *root,
                        CgroupLayout *ret);

/*
 * Reads root/proc/self/mountinfo and, when there is a cgroup2 mount, its root's
 * cgroup.controllers, and parses them. root "" or NULL is the real file system. A missing
 * cgroup.controllers counts as none (a cgroup2 mount without controllers).
 */
int cgroup_layout_load_at(const char *root, CgroupLayout *ret);

/*
 * The live layout: initialises libcgroup (cgroup_init()), asks it where the cpu, cpuacct, cpuset
 * and memory controllers are and on which version, and finds the cgroup2 mount in
 * /proc/self/mountinfo. Succeeds with mode CGROUP_MODE_NONE when nothing is mounted. Call it
 * again after mounts change.
 */
int cgroup_layout_detect(CgroupLayout *ret);

/*
 * CPU weight. The daemon thinks in cgroup v2 cpu.weight units, 1..10000, default 100; on v1 it is
 * written as cpu.shares, 2..262144, default 1024, with the kernel's own conversion
 * (kernel/sched/core.c, sched_weight_from_cgroup()/sched_weight_to_cgroup()):
 *
 *   shares = weight * 1024 / 100,   weight = shares * 100 / 1024,
 *
 * rounded to the nearest integer and clamped to the target range. systemd truncates instead; we
 * round so every weight survives weight -> shares -> weight unchanged (with truncation weight 3
 * gives 30 shares, which gives back 2). The other way shares -> weight -> shares is lossy (1000
 * shares -> 98 -> 1004): to restore exactly what was there, use the _native functions.
 * Out-of-range inputs clamp: weight 0 -> 10 shares, shares 0 or 1 -> weight 1.
 */
#define CGROUP_WEIGHT_MIN 1u
#define CGROUP_WEIGHT_DEFAULT 100u
#define CGROUP_WEIGHT_MAX 10000u
#define CGROUP_SHARES_MIN 2u
#define CGROUP_SHARES_DEFAULT 1024u
#define CGROUP_SHARES_MAX 262144u

uint64_t cgroup_weight_to_shares(uint64_t weight);
uint64_t cgroup_shares_to_weight(uint64_t shares);

/* Sets the weight (v2 units, converted on v1). -ERANGE outside CGROUP_WEIGHT_MIN..MAX. */
int cgroup_set_cpu_weight(const CgroupLayout *l, const char *path, uint64_t weight);
/* The current weight in v2 units (converted from cpu.shares on v1). */
int cgroup_get_cpu_weight(const CgroupLayout *l, const char *path, uint64_t *ret_weight);
/* The raw value of cpu.weight (v2) or cpu.shares (v1), for saving and restoring exactly.
 * set: -ERANGE outside the native range of the layout's version. */
int cgroup_get_cpu_weight_native(const CgroupLayout *l, const char *path, uint64_t *ret_native);
int cgroup_set_cpu_weight_native(const CgroupLayout *l, const char *path, uint64_t native);

/*
 * Sets cpuset.cpus and, when mems is not NULL, cpuset.mems (mems is a set of NUMA node numbers,
 * written in the same list format). cpus must not be empty (-EINVAL). The kernel refuses CPUs or
 * nodes it does not have (-ERANGE, or -EINVAL if offline) and, on v1, outside the parent's set
 * (-EACCES).
 */
int cgroup_set_cpuset(const CgroupLayout *l, const char *path, const CpuMask *cpus,
                      const CpuMask *mems);

/*
 * Creates the group, and missing parents, in every hierarchy we use: cpu, cpuacct (v1, if a
 * separate mount), cpuset, memory, and on hybrid hosts the mirror under the cgroup2 mount. An
 * existing group is fine (0) and left as it is. A new v1 cpuset group, and a new parent, gets
 * its parent's cpuset.cpus and cpuset.mems, so tasks can be attached before cgroup_set_cpuset()
 * (v1 refuses tasks in a group with empty cpus or mems). On v2, libcgroup enables the
 * controllers (memory too, when present) in the parents' cgroup.subtree_control and never
 * disables them.
 */
int cgroup_create(const CgroupLayout *l, const char *path);

/*
 * Removes the group (only the last path component) from every hierarchy where it exists. Tasks
 * still in it are moved to the parent group first, as libcgroup does, so removing never kills
 * nor strands a task. On v2 a parent that enables controllers for its children may hold no
 * processes (as every parent cgroup_create() made): they go to the nearest ancestor that may, the
 * root at worst. -EBUSY, before anything is changed, if it has child groups; -ENOENT if it exists
 * nowhere.
 */
int cgroup_remove(const CgroupLayout *l, const char *path);

/*
 * Moves one thread (v1: written to each hierarchy's "tasks"; the cpuset first, so a cpuset that
 * refuses it moves nothing). Threads of a process can only be split on v1, so -EOPNOTSUPP on v2;
 * on hybrid hosts the mirror, which can only hold whole processes, is left alone, and so is a
 * separate v1 memory hierarchy: the kernel charges a process's memory to the group of its
 * mm's owner, whatever group a lone thread is in, so memory follows the process
 * (cgroup_attach_pid()).
 */
int cgroup_attach_tid(const CgroupLayout *l, const char *path, pid_t tid);

/*
 * Moves a whole process, all its threads, by writing its PID to cgroup.procs in each hierarchy
 * (cpuset first, then cpu, cpuacct, memory), and on hybrid hosts to the mirror's when the mirror
 * exists. The kernel moves the thread group at once (v1 since Linux 3.0, and v2), where
 * libcgroup would move thread by thread (cgroup_change_cgroup_path() walks /proc/PID/task) and
 * miss threads created meanwhile. A failure may leave the process moved in the hierarchies
 * before the failing one (-ENOENT for a group made by someone else without its memory group).
 */
int cgroup_attach_pid(const CgroupLayout *l, const char *path, pid_t pid);

/*
 * The memory limit: v1 memory.limit_in_bytes, v2 memory.max. Swap is kept out of it, so the
 * limit is one of RAM: v2 memory.swap.max = 0 and v1 memory.memsw.limit_in_bytes = bytes, each
 * where the kernel has the file (swap accounting); on v1 the two are written in the order the
 * kernel accepts (limit <= memsw limit at every step). The kernel rounds bytes down to whole
 * pages; a value beyond what it can count means no limit. A process that goes over it, with
 * nothing left to reclaim, is killed by the kernel's OOM killer (SIGKILL). -EINVAL for 0,
 * -EOPNOTSUPP without a memory controller. Below what the group uses now: v1 reclaims and, if it
 * cannot free enough, fails with -EBUSY and keeps the old limit; v2 sets the limit anyway and
 * reclaims, OOM-killing in the group if it must.
 */
int cgroup_set_memory_max(const CgroupLayout *l, const char *path, uint64_t bytes);

/*
 * The most memory the group has used since it was made, in bytes: v1 memory.max_usage_in_bytes,
 * v2 memory.peak (Linux 5.19+; -EOPNOTSUPP on older kernels, and for the v2 root group, which has
 * no such file). -EOPNOTSUPP without a memory controller, -EINVAL if the file is malformed.
 */
int cgroup_read_memory_peak(const CgroupLayout *l, const char *path, uint64_t *ret_bytes);

/*
 * The processes in the group and, if recursive, in all its descendant groups: cgroup.procs of
 * the cpu hierarchy (on v1 and hybrid hosts; else cpuset, else memory), or of the cgroup2 mount
 * on v2. Sorted, without duplicates; *ret is malloc'ed (the caller frees it), NULL when *ret_n is
 * 0. A process that has exited is no longer listed, even while it is a zombie not yet reaped.
 * The list is a snapshot: processes fork, exit and move meanwhile. -ENOENT if the group does not
 * exist; a descendant removed while being read counts as empty. Errors of
 * proc_task_ids_read_at() (-EBADMSG for a malformed list). (Not named cgroup_get_procs():
 * libcgroup exports a function of that name, which ours would replace inside libcgroup too.)
 */
int cgroup_list_procs(const CgroupLayout *l, const char *path, bool recursive, pid_t **ret,
                      size_t *ret_n);

/*
 * SIGKILLs every process in the group and its descendants, in every hierarchy we use (cpu,
 * cpuacct, cpuset, memory, the hybrid mirror: a process may sit in the group in one hierarchy
 * and elsewhere in another), and repeats while any is left (a forking process adds new ones),
 * pausing 1 ms, doubling up to 16 ms, between rounds. Where the group's cgroup2 directory has
 * cgroup.kill (v2 and the hybrid mirror, Linux 5.14+) "1" is written to it first each round: the
 * kernel then also stops forks racing with the kill. Returns 0 once no process is listed in any
 * hierarchy: an exited process is not listed, so a killed child of the caller may still be a
 * zombie for the caller to reap. -EBUSY if some are still there after timeout_usec (0: one round;
 * e.g. tasks frozen by a v1 freezer cannot die until thawed).
 *
 * It never signals a process outside the group: each listed PID is opened as a pidfd, the lists
 * are read again, and only a process still listed is signalled, through its pidfd (a PID reused
 * meanwhile is not hit). Without pidfds (Linux < 5.3) it falls back to kill() after the second
 * read, where a PID freed and reused between that read and the kill() would be hit. -EINVAL for the
 * root group (""); -EDEADLK if the caller's own process is in the group (checked every round before
 * signalling, so nothing is signalled if it was there from the start); -ENOENT if the group exists
 * in no hierarchy; -EPERM if a process may not be signalled.
 */
int cgroup_kill_all(const CgroupLayout *l, const char *path, uint64_t timeout_usec);

/* CPU time used by the group's tasks: v2 cpu.stat usage_usec; v1 cpuacct.usage (ns, rounded
 * down to usec). -EINVAL if the file is malformed. */
int cgroup_read_usage(const CgroupLayout *l, const char *path, uint64_t *ret_usage_usec);

/*
 * The group's pressure for resource "cpu", "io" or "memory" (its <resource>.pressure file): on v2
 * from the group, on hybrid hosts from its mirror. -EOPNOTSUPP on v1 hosts (no cgroup2 mount),
 * -ENOENT if the group or its mirror does not exist (or the kernel hides pressure files, see
 * psi_read_at()), and psi_read_at()'s errors.
 */
int cgroup_read_pressure(const CgroupLayout *l, const char *path, const char *resource,
                         PsiStats *ret);

/*
 * libcgroup error codes (ECG*, 50000 and up). cgroup_ecg_to_errno() maps one to a negative
 * errno: 0 -> 0, ECGROUPNOTEXIST -> -ENOENT, ECGROUPNOTMOUNTED -> -ENOMEDIUM,
 * ECGROUPSUBSYSNOTMOUNTED and ECGROUPUNSUPP -> -EOPNOTSUPP, ECGROUPNOTOWNER and ECGROUPNOTALLOWED
 * -> -EPERM, ECGROUPNOTINITIALIZED -> -ENXIO (cgroup_layout_detect() was not called),
 * ECGROUPVALUENOTEXIST -> -ENOENT (libcgroup also reports a refused control file write so; the
 * writers here ask the file system what it was), ECGINVAL -> -EINVAL, ECGNONEMPTY -> -EBUSY,
 * ECGOTHER -> -cgroup_get_last_errno() (-EIO if that is 0), anything else -> -EIO.
 * cgroup_ecg_to_string() names a code without cgroup_strerror()'s bugs in 2.0.2 (off by one above
 * ECGMOUNTFAIL, a wild pointer for ECGNONEMPTY, codes below 50000 taken modulo 50000); never NULL.
 */
int cgroup_ecg_to_errno(int ecg);
const char *cgroup_ecg_to_string(int ecg);
