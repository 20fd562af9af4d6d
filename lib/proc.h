/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Readers of /proc: per-CPU times and run-queue counts (/proc/stat), per-task stat lines
 * (/proc/PID/task/TID/stat) and scheduler times (.../schedstat), a task's allowed CPUs
 * (.../status), the threads of a process, the id lists of a cgroup (tasks, cgroup.threads,
 * cgroup.procs), a process's groups (/proc/PID/cgroup) and the time since boot (/proc/uptime).
 *
 * Every reader is rooted: it takes proc_fd, a directory fd of a /proc-like tree (tests pass a
 * fixture), and opens paths below it with openat(). Under each reader is a pure parser of the
 * text, which is the fuzz target.
 *
 * Every function returning int returns 0 (or an fd) on success and a negative errno on failure,
 * and writes its ret_ outputs only on success. Common errors:
 *   -EBADMSG  the text is not what the kernel writes: a truncated or short read, a missing field,
 *             a non-numeric or out-of-range value, an embedded NUL. Never a partial result.
 *   -EINVAL   a bad argument (pid <= 0, tid < 0, a NULL buffer, capacity 0).
 *   -ESRCH    the task is gone: the kernel's ESRCH, and ENOENT of any path below PID/ (the pid
 *             or tid directory no longer exists), are both reported as -ESRCH.
 *   -ENOMEM   allocation failed.
 * Other errors of open/read (-EACCES with hidepid=, -EMFILE...) are passed through.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpumask.h"
#include "macro.h"

/* ---- /proc/stat */

/* The columns of a "cpu" line, in the kernel's order. guest is included in user, guest_nice in
 * nice (the kernel counts them twice). */
typedef enum CpuTime {
        CPU_TIME_USER,
        CPU_TIME_NICE,
        CPU_TIME_SYSTEM,
        CPU_TIME_IDLE,
        CPU_TIME_IOWAIT,
        CPU_TIME_IRQ,
        CPU_TIME_SOFTIRQ,
        CPU_TIME_STEAL,
        CPU_TIME_GUEST,
        CPU_TIME_GUEST_NICE,
        _CPU_TIME_MAX,
} CpuTime;

typedef struct CpuTimes {
        bool present; /* false for an id with no line (offline CPU) */
        uint64_t ticks[_CPU_TIME_MAX]; /* USER_HZ ticks since boot, indexed by CpuTime */
} CpuTimes;

typedef struct ProcStat {
        CpuTimes total; /* the "cpu" line: the sum over CPUs */
        CpuTimes *cpus; /* indexed by CPU id, n_cpus entries; holes have present = false */
        unsigned n_cpus; /* highest CPU id seen + 1 */
        uint64_t procs_running; /* tasks runnable now */
        uint64_t procs_blocked; /* tasks in uninterruptible I/O wait */
} ProcStat;

ProcStat *proc_stat_free(ProcStat *s); /* accepts NULL, returns NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(ProcStat *, proc_stat_free);
#define _cleanup_proc_stat_ _cleanup_(proc_stat_freep)

/*
 * Parses the text of /proc/stat (NUL-terminated). Requires the "cpu" line, procs_running and
 * procs_blocked; "cpuN" lines may leave holes. A cpu line needs at least the 10 columns above
 * (more are ignored, for kernels to come). Other lines are ignored. The text must end with a
 * newline (else it was cut). -EBADMSG on a malformed or duplicate cpu line, a CPU id >=
 * CPUMASK_MAX_CPUS, a missing line or a missing final newline; -ENOMEM.
 */
int proc_stat_parse(const char *buf, ProcStat **ret);
/* Reads and parses proc_fd/stat. Errors of proc_stat_parse() and of open/read. */
int proc_stat_read_at(int proc_fd, ProcStat **ret);

/* The times of CPU cpu, or NULL if s has no line for it. */
const CpuTimes *proc_stat_cpu(const ProcStat *s, unsigned cpu);

typedef struct CpuTicksDelta {
        uint64_t busy_ticks; /* everything but idle and iowait (steal included) */
        uint64_t total_ticks; /* busy + idle + iowait; guest columns excluded (already in user) */
} CpuTicksDelta;

/*
 * Ticks elapsed from prev to cur for one CPU. Each column's delta is clamped at 0 (iowait, and
 * idle on some NO_HZ kernels, can go backwards), so busy_ticks <= total_ticks always. Steal counts
 * as busy: a vCPU the host took was not capacity our tasks could use. -ENODEV if either sample is
 * NULL or not present.
 */
int cpu_times_delta(const CpuTimes *prev, const CpuTimes *cur, CpuTicksDelta *ret);

/* busy/total in permyriad (0..10000), rounded down. -ENODATA if total_ticks is 0 (both samples
 * within one tick). */
int cpu_ticks_util_permyriad(const CpuTicksDelta *d, unsigned *ret_util_permyriad);

/* cpu_times_delta() then cpu_ticks_util_permyriad(): the utilisation of one CPU between two
 * samples. cpu == PROC_STAT_CPU_TOTAL means the "cpu" line. */
#define PROC_STAT_CPU_TOTAL UINT32_MAX
int proc_stat_util_permyriad(const ProcStat *prev, const ProcStat *cur, unsigned cpu,
                             unsigned *ret_util_permyriad);

/* ---- /proc/PID/task/TID/stat */

/* proc_task_name() prints at most 63 bytes: kthreads and workqueue workers exceed TASK_COMM_LEN. */
#define PROC_COMM_SIZE 64
/* task->flags bit of kernel threads (include/linux/sched.h); userspace headers lack it. */
#define PROC_PF_KTHREAD 0x00200000u
/* The stat line has 52 fields today; each fits in 21 bytes, comm in 63. */
#define PROC_TASK_STAT_BUF_SIZE 2048

typedef struct TaskStat {
        pid_t tid; /* field 1 */
        char comm[PROC_COMM_SIZE]; /* field 2: the bytes between "(" and the LAST ")" */
        char state; /* field 3: R, S, D, Z, T, t, X, I... */
        pid_t ppid; /* field 4 */
        unsigned flags; /* field 9: PF_*, see PROC_PF_KTHREAD */
        uint64_t utime_ticks; /* field 14: this task's user time, USER_HZ */
        uint64_t stime_ticks; /* field 15: system time, USER_HZ */
        int nice; /* field 19: -20..19 */
        unsigned num_threads; /* field 20: threads of the whole process */
        uint64_t starttime_ticks; /* field 22: since boot, USER_HZ; with the tid, the identity */
        unsigned processor; /* field 39: CPU the task last ran on */
        unsigned rt_priority; /* field 40: 0, or 1..99 for SCHED_FIFO/SCHED_RR */
        unsigned policy; /* field 41: SCHED_OTHER, SCHED_FIFO... */
} TaskStat;

static inline bool task_stat_is_kthread(const TaskStat *s) {
        return s->flags & PROC_PF_KTHREAD;
}

/* The same task (not a recycled pid): tid and start time both match. */
static inline bool task_stat_same_task(const TaskStat *a, const TaskStat *b) {
        return a->tid == b->tid && a->starttime_ticks == b->starttime_ticks;
}

/*
 * Parses one stat line (NUL-terminated): "PID (COMM) S f4 f5 ... fN\n". comm runs to the last
 * ")" of the line, so it may hold spaces, parentheses and newlines. Then a letter (the state)
 * and at least 38 more fields, each an optional "-" and digits, single spaces between, exactly
 * one newline and the end of the text; fields past 41 are accepted (later kernels). The fields
 * kept are range-checked (nice -20..19, the others unsigned and fitting their type); the rest
 * only for form. -EBADMSG for anything else, including comm over 63 bytes and a line cut
 * anywhere. PID (field 1) must be in 1..INT_MAX. -EINVAL if buf is NULL.
 */
int proc_task_stat_parse(const char *buf, TaskStat *ret);

/*
 * Reads proc_fd/PID/task/TID/stat (or proc_fd/PID/stat when tid is 0: then utime/stime are the
 * whole process's) into a stack buffer and parses it: no allocation. -ESRCH if the task is gone
 * (see above), -EINVAL if pid <= 0 or tid < 0, -EBADMSG from the parser.
 */
int proc_task_stat_read_at(int proc_fd, pid_t pid, pid_t tid, TaskStat *ret);

/*
 * For a task sampled every tick: open its stat file once, then re-read it with
 * proc_task_stat_pread() (pread at offset 0 re-runs the kernel's show function). Skips the path
 * lookup: bench-proc measures 0.65-0.8 of the cost of open+read+close. The fd pins the task's
 * struct pid, not its number: once the task is reaped, reads give -ESRCH even if the number was
 * reused, so the fd is a sharper identity than tid + starttime (whose unit is a 10 ms tick). It
 * costs one fd per task (mind RLIMIT_NOFILE). proc_task_stat_open_at() returns the fd (O_CLOEXEC)
 * or -ESRCH, -EINVAL, -EMFILE...; the caller closes it. proc_task_stat_pread() returns -EBADF
 * for a negative fd, and the errors of the parser.
 */
int proc_task_stat_open_at(int proc_fd, pid_t pid, pid_t tid);
int proc_task_stat_pread(int fd, TaskStat *ret);

/* ---- /proc/PID/task/TID/schedstat */

/* The kernel prints three numbers, "%llu %llu %lu\n"; 64 bytes hold them with room to spare. */
#define PROC_SCHEDSTAT_BUF_SIZE 128

/*
 * The scheduler's accounting of one task (CONFIG_SCHED_INFO). run_ns is exact, where the stat
 * file's utime/stime are tick samples scaled to it; wait_ns is the time the task was runnable but
 * waited on a run queue, the part of its demand it did not get. A kernel with sched_info off
 * prints "0 0 0".
 */
typedef struct TaskSchedstat {
        uint64_t run_ns; /* time spent on a CPU (se.sum_exec_runtime) */
        uint64_t wait_ns; /* time spent runnable, waiting for a CPU (sched_info.run_delay) */
        uint64_t timeslices; /* times it was given a CPU (sched_info.pcount) */
} TaskSchedstat;

/*
 * Parses the text of a schedstat file: at least three decimal numbers, single spaces between,
 * one newline and the end (numbers past the third are ignored, for kernels to come). -EBADMSG
 * for anything else: a sign, a blank too many, an overflow, a cut line. -EINVAL if buf is NULL.
 */
int proc_task_schedstat_parse(const char *buf, TaskSchedstat *ret);

/*
 * Opens proc_fd/PID/task/TID/schedstat (PID/schedstat if tid is 0) for re-reading with
 * proc_task_schedstat_pread(), as proc_task_stat_open_at() does. Returns the fd, -ESRCH if the
 * task is gone, -EOPNOTSUPP if the task is there but the file is not (a kernel without
 * CONFIG_SCHED_INFO, or a recorded tree without it): callers then count its CPU time alone as
 * its demand. -EINVAL as proc_task_stat_open_at().
 */
int proc_task_schedstat_open_at(int proc_fd, pid_t pid, pid_t tid);
/* -EBADF for a negative fd, -ESRCH once the task is reaped, the parser's errors. */
int proc_task_schedstat_pread(int fd, TaskSchedstat *ret);
/* Opens, reads and closes; errors of the two above. */
int proc_task_schedstat_read_at(int proc_fd, pid_t pid, pid_t tid, TaskSchedstat *ret);

/* ---- /proc/PID/task/TID/status */

/*
 * Finds the "Cpus_allowed_list:" line of a status text and parses its cpulist into a new mask
 * of the given capacity. -EBADMSG if the line is missing or its list is malformed, -ERANGE if it
 * names a CPU >= capacity, -EINVAL if capacity is 0 or too large, -ENOMEM.
 */
int proc_status_cpus_allowed_parse(const char *buf, unsigned capacity, CpuMask **ret);
/* Reads proc_fd/PID/task/TID/status (PID/status if tid is 0); errors as above plus -ESRCH. */
int proc_task_cpus_allowed_read_at(int proc_fd, pid_t pid, pid_t tid, unsigned capacity,
                                   CpuMask **ret);

/* ---- task and process lists */

/*
 * The threads of process pid: the numeric entries of proc_fd/PID/task, sorted ascending.
 * *ret_tids is malloc'ed (the caller frees it; NULL when *ret_n is 0). -ESRCH if the process is
 * gone, -ENOMEM.
 */
int proc_task_list_at(int proc_fd, pid_t pid, pid_t **ret_tids, size_t *ret_n);
/* Every process: the numeric entries of proc_fd, sorted ascending. As above. */
int proc_pid_list_at(int proc_fd, pid_t **ret_pids, size_t *ret_n);

/*
 * Parses a cgroup's id list (tasks, cgroup.threads, cgroup.procs): one decimal id in
 * 1..INT32_MAX per line, every line ending in a newline; an empty text is the empty list. The
 * result is sorted and free of duplicates (cgroup v1 does not promise either). *ret_ids is
 * malloc'ed, NULL when *ret_n is 0. -EBADMSG on a blank line, a sign, a space, a zero, an
 * overflow, a missing final newline; -ENOMEM.
 */
int proc_task_ids_parse(const char *buf, pid_t **ret_ids, size_t *ret_n);
/*
 * Reads and parses cgroup_fd/name (name: "tasks", "cgroup.threads" or "cgroup.procs"). Errors of
 * the parser and of open/read, unmapped: -ENOENT or -ENODEV mean the cgroup was removed.
 */
int proc_task_ids_read_at(int cgroup_fd, const char *name, pid_t **ret_ids, size_t *ret_n);

/* ---- /proc/PID/cgroup */

/*
 * Finds the group of one hierarchy in the text of /proc/PID/cgroup, whose lines are
 * "ID:CONTROLLERS:/PATH". controller names a v1 controller ("cpuset": the line whose
 * comma-separated list has it); NULL or "" asks for the cgroup2 line ("0::/PATH"). The path,
 * which may hold ':', is returned without its leading '/' ("" for the root group), malloc'ed.
 * -ENODATA if no line is for that hierarchy, -EBADMSG for a malformed text (a line without two
 * colons, a path not starting with '/', a last line without its newline), -ENOMEM.
 */
int proc_cgroup_parse(const char *buf, const char *controller, char **ret_path);
/* Reads proc_fd/PID/cgroup and parses it; -ESRCH if the process is gone, -EINVAL if pid <= 0. */
int proc_task_cgroup_read_at(int proc_fd, pid_t pid, const char *controller, char **ret_path);

/* ---- /proc/uptime */

/*
 * Parses /proc/uptime, "SECONDS.CC IDLE.CC\n" (the kernel prints two decimals), into the time
 * since boot in microseconds. -EBADMSG for anything else, -ERANGE beyond UINT64_MAX usec.
 */
int proc_uptime_parse(const char *buf, uint64_t *ret_uptime_usec);
/* Reads proc_fd/uptime; the parser's errors and those of open/read. */
int proc_uptime_read_at(int proc_fd, uint64_t *ret_uptime_usec);

/* ---- /proc/PID/statm and /proc/PID/numa_maps: a process's memory */

/*
 * Parses statm, "SIZE RESIDENT SHARED TEXT LIB DATA DT\n" in pages: the resident pages (the
 * fields past the second are not looked at). -EBADMSG for a text that does not start with two
 * decimal numbers and a blank, -EINVAL for NULL.
 */
int proc_statm_parse(const char *buf, uint64_t *ret_resident_pages);
/* Reads proc_fd/PID/statm: the resident set in KiB. -ESRCH if the process is gone. */
int proc_task_rss_read_at(int proc_fd, pid_t pid, uint64_t *ret_kib);

/*
 * Sums, over the lines of a numa_maps text, each line's "N<node>=PAGES" times its
 * "kernelpagesize_kB=": the KiB the process has on that node. A line is an address, a policy and
 * blank-separated KEY=VALUE or KEY words; a line with pages on the node but no page size, an
 * address that is not hexadecimal, a count that is not a number or overflows, a last line
 * without its newline: -EBADMSG. -EINVAL for NULL.
 */
int proc_numa_maps_parse(const char *buf, unsigned node, uint64_t *ret_kib);
/* Reads proc_fd/PID/numa_maps (at most max_size bytes: -EFBIG past it) and parses it. -ESRCH if
 * the process is gone, -EACCES without the right to trace it (CAP_SYS_PTRACE for another's). */
int proc_task_numa_maps_read_at(int proc_fd, pid_t pid, unsigned node, size_t max_size,
                                uint64_t *ret_kib);
