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
 * Cost: each thread's stat and schedstat files are kept open and re-read with pread(), within a
 * budget of half of RLIMIT_NOFILE as it is at sampler_new() (none under 256: then every read
 * opens its file). Raise the soft limit first to keep them all. Each kept fd also holds about
 * 4 KiB of kernel memory (its seq_file buffer), charged to the daemon's cgroup. On the live
 * machine (sampler_set_live()) affinity is one sched_getaffinity() a process. bench/bench-tick
 * measures a tick against the bare reads of the same files.
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
