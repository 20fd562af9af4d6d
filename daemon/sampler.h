/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The sampler reads the machine once a tick and builds the PolicySnapshot the policy plans on:
 * per-CPU utilisation from /proc/stat deltas; the managed cgroups (tunables' globs, walked in the
 * cpu hierarchy) with their usage delta, cpu.pressure and weight, their cpu.idle and quota (and
 * whether they still hold what the record says the daemon set), the share of the interval their
 * quota throttled them (cpu.stat), and their tasks' mean wait per time given a CPU (schedstat
 * wait over timeslices, of tasks whose every thread has schedstat); their tasks (processes, every
 * thread read) with CPU time and run+wait (schedstat) deltas, last CPU, allowed CPUs, identity
 * (pid + starttime); and the system PSI.
 *
 * It keeps the previous sample of every counter, keyed by identity, so a recycled pid starts
 * from scratch. The first sample of a live machine only primes the counters (its snapshot has
 * interval_usec 0 and every load 0; so does a task's first appearance, for that task). Never
 * managed: pid 1, kernel threads, the daemon itself (self_pid), tasks matching exclude_comms,
 * groups matching exclude_cgroups (and all below them), and tasks the record bans. Nor are the
 * groups cgroup_walk() passes over (deeper than CGROUP_WALK_DEPTH_MAX, a control character in
 * the name, a path too long) and all below them: each one the globs would manage is said at
 * warning level, escaped, once while it is there (again if it is made again).
 * A task is foreign when its affinity is narrower than its cpuset allows and the mask is not one
 * the record says the daemon set, whatever override_foreign_affinity says: the policy reads that
 * tunable (left alone, or given a whole node's CPUs in place of the narrowed mask).
 *
 * Rooted: every read goes through proc_fd and the layout's paths, so tests and --root replays
 * point it at a recorded tree.
 *
 * Reading less (the lazy sampler, sample_refresh > 0, the default): what the policy needs each
 * tick is each group's usage and pressure (read every tick) and the demand and placement of the
 * tasks that may move: those that ran. So each tick:
 *  - Per managed group: its usage, pressure (where the kernel has it) and throttled time. A group
 *    where none of the three moved since the last sample is quiet: its processes are those its
 *    cgroup.procs listed at its last visit (on v1 the kernel sorts every thread's tgid to list
 *    them: 3 ms at 10,000 threads), read again every sample_refresh, or at once when one of them
 *    ran (its CPU time moved while the group's usage did not: it left) or is gone.
 *  - Per managed process: its CPU time, all threads' in one number: live, its CPU-time clock
 *    (clock_getcpuclockid(), clock_gettime(): one call, no fd, no permission needed, ns); in a
 *    recorded tree its own stat file (utime + stime, in ticks). And its affinity (one
 *    sched_getaffinity() live).
 *  - If that time moved: its main thread's stat (is it the same process, its name, how many
 *    threads), then its hot threads (those that ran in the last COOL_AFTER_READS readings), its
 *    new threads (listed only when the count changed) and, outside a quiet group, the cold ones
 *    due a refresh. What the threads read do not account for (the process's time minus their
 *    schedstat run times, summed signed from tick to tick) was run by threads not read: past a
 *    slack the process is listed and read whole. The slack is 1% of a CPU over the interval, plus
 *    a scheduler tick (10 ms) for each hot thread up to the CPUs (a running thread's time lags
 *    its process's clock by up to a tick, a skew the next tick gives back), plus two ticks in a
 *    recorded tree (utime and stime each round down).
 *  - If it did not move: its hot threads, and outside a quiet group the cold ones due a refresh.
 *  - A cold thread is due every sample_refresh (staggered by tid over REFRESH_PHASES); then its
 *    schedstat alone is read, and its stat only if that moved.
 * The bounds: a thread that runs is read the tick it runs, unless all the threads not read ran
 * less than the slack (then within the ticks it takes them to pass it); a thread that waits
 * without running (starved, throttled) is seen within sample_refresh while its group ran or
 * waited (a quiet group had no thread waiting, where the kernel has group pressure; on v1 with
 * none, a group none of whose threads ran for a whole interval is taken as idle); a process
 * that joins a group is seen once it runs there (the group's usage moves), one that leaves it
 * idle within sample_refresh; a thread not read counts as idle (util and demand 0), which it was
 * to within the slack. With fresh data the snapshot is the full sampler's (tests/test-sampler.c
 * plays one machine through both and compares the snapshots and the plans tick by tick).
 * sample_refresh 0 reads every group's processes and every thread every tick.
 *
 * Why these sources (measured on a 2-CPU Linux 6.18 machine; bench/bench-proc):
 * the process's CPU-time clock costs 0.6 us for one thread, 1.7 us for 100, 0.34 ms for 10,000
 * (the kernel sums the threads under RCU); the process's stat file through a kept fd costs about
 * twice that (3.9 us, 6.2 us, 0.62 ms) and an fd or an open each time. A thread's stat or
 * schedstat costs 10-14 us opened, read and closed, 2-5 us by pread() of a kept fd. Listing a
 * process's task directory costs 26 ms at 10,000 threads (each getdents batch walks the thread
 * list from the start): it is listed only when its thread count changed or its time is
 * unexplained. taskstats by TGID gives run and delay totals of all threads in 0.4-1.2 ms, but
 * needs CAP_NET_ADMIN and a netlink socket the unit's PrivateNetwork= takes away: not used. A
 * group's cpuacct.usage or cpu.stat is 2.4 us.
 *
 * Descriptors: a thread's stat and schedstat files are kept open (and re-read with pread())
 * only while it is hot (lazy) or always (sample_refresh 0), within a budget of half of
 * RLIMIT_NOFILE as it is at sampler_new() (none under 256: then every read opens its file);
 * everything else is opened by path when read and closed. Each kept fd also holds about 4 KiB of
 * kernel memory (its seq_file buffer), charged to the daemon's cgroup. 10,000 sleeping threads
 * keep none; 200 busy ones keep 400. On the live machine (sampler_set_live()) affinity is one
 * sched_getaffinity() a process. bench/bench-tick measures a tick, lazy and full, against the
 * bare reads of the same files.
 */

#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "policy.h"
#include "psi.h"
#include "record.h"
#include "topology.h"
#include "tunables.h"

typedef struct SamplerSystem {
        PsiStats cpu, io, memory; /* /proc/pressure/ */
        bool has_psi; /* false: the kernel has none (said once in the log) */
        uint64_t procs_running; /* from /proc/stat */
        unsigned n_cgroups, n_tasks, n_threads;
        unsigned n_threads_read; /* threads whose files this sample read (lazily: what ran) */
        uint64_t sample_usec; /* CPU time this sample took (for the bench and the log) */
} SamplerSystem;

typedef struct Sampler Sampler;

/*
 * proc_fd: dirfd of /proc (not taken over); pressure is read from proc_fd's pressure/.
 * layout and topo must outlive the sampler. self_pid: never managed (0: none).
 */
int sampler_new(int proc_fd, const CgroupLayout *layout, const Topology *topo, pid_t self_pid,
                Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);
#define _cleanup_sampler_ _cleanup_(sampler_freep)

/*
 * Samples at now_usec. record (the daemon's changes, actuator_record()) tells what is "ours":
 * masks it set, groups' weights before it changed them, the cpu.idle and quota it set, banned
 * tasks; NULL: nothing is. The
 * snapshot and system figures stay valid until the next call or sampler_free(). Missing pieces
 * (a group removed, a task gone, no PSI) are skipped, not errors; returns <0 only when
 * /proc/stat (or, since boot, /proc/uptime) cannot be read, -ENOMEM, or -EINVAL for a NULL
 * argument.
 */
int sampler_sample(Sampler *s, const Tunables *t, const Record *record, uint64_t now_usec,
                   const PolicySnapshot **ret_snap, const SamplerSystem **ret_system);

/*
 * For a recorded tree that has no earlier sample (--root with --once): counters are taken as
 * accumulated since boot (CPU times over /proc/uptime, task times since their start), so one
 * sample describes the recorded machine's average load.
 */
void sampler_set_since_boot(Sampler *s, bool since_boot);

/*
 * For the live machine: proc_fd is the /proc of the caller's pid namespace, so a pid read there
 * is one the kernel's calls take. Each task's allowed CPUs are then read with
 * sched_getaffinity() rather than from its status file (which the kernel formats whole for the
 * one line we parse: most of a tick's cost). Off by default, for recorded trees (--root, tests).
 */
void sampler_set_live(Sampler *s, bool live);
