/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The lifecycle of the groups a program makes for itself: creating and removing them, confining
 * them (cpuset, memory limit), moving tasks in, listing and killing what is in them. loadgen's
 * sandbox, the benches and the tests use it; the daemon does not (it only reads groups and sets
 * their weights: cgroup.h).
 *
 * The writers act through libcgroup on the live hierarchies and need the layout of
 * cgroup_layout_detect(), which also initialises libcgroup; a layout read from a fixture only
 * serves cgroup_attach_pid() and cgroup_list_procs(). Group paths and errors are as in cgroup.h.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "cpumask.h"

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
