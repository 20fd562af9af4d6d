/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * cgroup access as the daemon needs it: where the controllers are (v1, v2 or hybrid), the CPU
 * weight, and rooted readers of a group's CPU usage, memory peak, pressure and effective cpuset,
 * and of the tree of groups (cgroup_walk()). Making groups, confining them, moving tasks in and
 * killing them is cgroup-tree.h; cpu.idle, the bandwidth quota and throttled time (the levers
 * past the weight) are cgroup-levers.h. Both use the same layout and the same error contract.
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
 * Writers (the weight here, and cgroup-tree.h's) act through libcgroup on the live hierarchies
 * and need the layout of cgroup_layout_detect(), which also initialises libcgroup; a layout read
 * from a fixture only serves the readers (and cgroup_attach_pid()).
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
 * The most memory the group has used since it was made, in bytes: v1 memory.max_usage_in_bytes,
 * v2 memory.peak (Linux 5.19+; -EOPNOTSUPP on older kernels, and for the v2 root group, which has
 * no such file). -EOPNOTSUPP without a memory controller, -EINVAL if the file is malformed.
 */
int cgroup_read_memory_peak(const CgroupLayout *l, const char *path, uint64_t *ret_bytes);

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

/* An effective cpuset file holds a cpulist; a few KiB is any real one (-EFBIG beyond). */
#define CGROUP_CPUSET_FILE_SIZE_MAX 8192u

/*
 * The CPUs the cpuset of group path gives its tasks, as a mask of capacity CPUs (*ret, the
 * caller frees it): v2 cpuset.cpus.effective, v1 cpuset.effective_cpus or, on kernels without
 * it, cpuset.cpus. A group without the file (on v2, one whose parent does not enable the cpuset
 * controller) follows its nearest ancestor that has it, the root at worst. -EOPNOTSUPP without a
 * cpuset hierarchy, -ENOENT if not even the root has the file, cpumask_parse()'s errors for a
 * malformed list or a CPU at or above capacity.
 */
int cgroup_read_cpuset_cpus(const CgroupLayout *l, const char *path, unsigned capacity,
                            CpuMask **ret);

/*
 * The same for the group task pid is in, as proc_fd/PID/cgroup says (its cpuset hierarchy's
 * line on v1 and hybrid hosts, the cgroup2 line on v2): rooted at both proc_fd and the layout.
 * Also proc_task_cgroup_read_at()'s errors (-ESRCH: the task is gone).
 */
int cgroup_read_task_cpuset_cpus(const CgroupLayout *l, int proc_fd, pid_t pid, unsigned capacity,
                                 CpuMask **ret);

/*
 * Walking the groups of the hierarchy that has the cpu controller (v1 and hybrid: its mount; v2:
 * the cgroup2 mount), which cgroup_walk_root() names ("" for none).
 *
 * fn is called once per group below the root, parent before children, with its group path, its
 * depth (1 for a top-level group), and an fd of its directory, open only for the call (e.g. for
 * proc_task_ids_read_at(dir_fd, "cgroup.procs", ...)). fn returns > 0 to walk the group's
 * children, 0 to leave them out, < 0 to stop: the walk returns that error. The order of siblings
 * is readdir()'s. Directories removed or unreadable meanwhile are passed over in silence.
 *
 * Some groups the kernel keeps are passed over, with all below them, and never given to fn:
 * those below depth CGROUP_WALK_DEPTH_MAX (which bounds the recursion and its open directories),
 * those whose name holds a control character (the kernel takes any but '/' and '\n';
 * cgroup_path_is_valid() refuses them, as the record of changes is a line format that keeps
 * paths verbatim), and those whose path would be CGROUP_PATH_MAX or more. skipped, when not NULL,
 * is told of each such group whose parent fn asked to walk (the root's children always), once a
 * walk, with its path (escape it before printing: it may hold any byte but '/' and NUL; it may be
 * longer than CGROUP_PATH_MAX, by a name at most), its depth and why; the walk does not go below
 * it (for CGROUP_WALK_SKIP_TOO_DEEP, it reads the directory of the group at the limit to name
 * its children). skipped returns 0 to go on, < 0 to stop the walk with that error.
 *
 * cgroup_walk_at() walks below any directory root (a fixture tree). Returns 0, fn's or skipped's
 * error, -EOPNOTSUPP for a root of "" (no cpu hierarchy), the error of opening the root, -EINVAL
 * for a NULL root or fn, -ENOMEM.
 */
#define CGROUP_WALK_DEPTH_MAX 32u
typedef enum CgroupWalkSkip {
        CGROUP_WALK_SKIP_TOO_DEEP, /* at depth CGROUP_WALK_DEPTH_MAX + 1 */
        CGROUP_WALK_SKIP_CONTROL_CHAR, /* a control character (or DEL) in its name */
        CGROUP_WALK_SKIP_TOO_LONG, /* its path would be CGROUP_PATH_MAX bytes or more */
        _CGROUP_WALK_SKIP_MAX,
} CgroupWalkSkip;
typedef int (*CgroupWalkFn)(const char *path, unsigned depth, int dir_fd, void *userdata);
typedef int (*CgroupWalkSkipFn)(const char *path, unsigned depth, CgroupWalkSkip why,
                                void *userdata);
const char *cgroup_walk_root(const CgroupLayout *l);
int cgroup_walk(const CgroupLayout *l, CgroupWalkFn fn, CgroupWalkSkipFn skipped, void *userdata);
int cgroup_walk_at(const char *root, CgroupWalkFn fn, CgroupWalkSkipFn skipped, void *userdata);

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
