/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where a task ran, per NUMA node: sampled, not inferred from affinity. Every
 * RESIDENCY_SAMPLE_USEC the caller has the sampler read each task's /proc/PID/stat (field 39, the
 * CPU it last ran on, and field 14, utime in clock ticks) and attribute the utime gained since the
 * previous sample to that CPU's node. What a task gains after its last sample (up to its final
 * rusage, given at reaping) goes to the last node seen. Used by schedbench and the scenario runner.
 *
 * Units: Residency counts clock ticks (USER_HZ, residency_ticks_per_s()); node indexes are the
 * Topology's (0..n_nodes-1 in ascending id order); node ids are the OS's.
 *
 * A task is a process: its /proc/PID/stat sums the utime of all its threads (the exited ones
 * included), but field 39 is the CPU of its main thread only, so a process whose threads run on
 * several nodes is credited wholly to the node its main thread was seen on. The time of its
 * children is not included.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"
#include "topology.h"

#define RESIDENCY_MAX_NODES 64u
/* CPUs above this get no per-CPU ticks (their node's are still kept). */
#define RESIDENCY_MAX_CPUS CPUMASK_MAX_CPUS
/* The interval both users sample at: 10 ms, a clock tick at USER_HZ 100. */
#define RESIDENCY_SAMPLE_USEC 10000u

/* ---- the accounting, pure */

/* Where one task's user time went, in clock ticks per node index. */
typedef struct Residency {
        uint64_t ticks[RESIDENCY_MAX_NODES];
        uint64_t last_utime; /* at the last sample */
        int last_node; /* node index seen at the last sample; -1 before the first */
        uint32_t moves; /* samples that saw it on another node than the last seen */
} Residency;

/* A Residency with no samples. */
void residency_init(Residency *r);

/*
 * One sample: the task's utime (ticks, monotonic) and the index of the node of the CPU it was
 * seen on (-1: unknown, nothing attributed but the utime is taken as seen). The utime since the
 * previous sample, or since 0 for the first, goes to node; a node other than the last seen counts
 * a move.
 */
void residency_sample(Residency *r, uint64_t utime, int node);

/* The task ended with final_utime ticks: what the samples missed goes to the last node seen. */
void residency_finish(Residency *r, uint64_t final_utime);

/* All ticks attributed. */
uint64_t residency_total(const Residency *r);

/* Percent of the attributed ticks on node index i (0 when there are none). */
double residency_pct(const Residency *r, unsigned i);

/* The node index with the most ticks among the first n (the lowest on a tie); -1 if none has
 * any. */
int residency_most(const Residency *r, unsigned n);

/*
 * Parses a /proc/PID/stat line: utime (field 14), stime (15), processor (39). The comm field may
 * hold spaces and parentheses: fields are counted after the last ')'. 0 or -EINVAL; the ret_
 * outputs are written only on success.
 */
int residency_parse_stat(const char *buf, uint64_t *ret_utime, uint64_t *ret_stime, int *ret_cpu);

/* sysconf(_SC_CLK_TCK): the unit of utime in /proc/PID/stat; 100 if unknown. */
uint64_t residency_ticks_per_s(void);

/* ---- the sampler, over a set of tasks */

typedef struct ResidencySampler ResidencySampler;

/*
 * A sampler with no tasks. t gives the CPU -> node map (copied: t may be freed after); proc_fd
 * is a directory fd of a /proc-like tree (duplicated, the caller keeps its own). Returns -E2BIG
 * if t has more than RESIDENCY_MAX_NODES nodes, -EBADF for a bad proc_fd, -ENOMEM.
 */
int residency_sampler_new_at(const Topology *t, int proc_fd, ResidencySampler **ret);

/* The same over the running system's /proc; also the errors of opening it. */
int residency_sampler_new(const Topology *t, ResidencySampler **ret);

ResidencySampler *residency_sampler_free(ResidencySampler *s); /* accepts NULL, returns NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(ResidencySampler *, residency_sampler_free);
#define _cleanup_residency_sampler_ _cleanup_(residency_sampler_freep)

/* The nodes, as the Topology's: n_nodes, and the id of index i (-ERANGE if i >= n_nodes). */
unsigned residency_sampler_n_nodes(const ResidencySampler *s);
int residency_sampler_node_id(const ResidencySampler *s, unsigned i);
/* The node index of cpu; -1 if the Topology gave it none (offline, or beyond its CPUs). */
int residency_sampler_cpu_node(const ResidencySampler *s, int cpu);

/*
 * Adds the process pid: opens proc_fd/PID/stat and keeps the fd (one per task: mind
 * RLIMIT_NOFILE; it pins the struct pid, so a number reused after reaping is never mistaken for
 * the task), and reads the CPU it is on now, its initial CPU and node. Nothing is credited yet: the
 * first sample credits the utime since the task started to the node it sees then, as every sample
 * does with the utime since the one before. Until a sample sees a node, the initial one counts as
 * the last seen (a task reaped before its first sample has its time there). *ret_index (may be
 * NULL) is the task's index for the calls below, in the order of adding. Returns -EINVAL for pid
 * <= 0, -ESRCH if the task is gone, -EBADMSG if its stat line does not parse, -EMFILE, -ENOMEM;
 * nothing is added on error.
 */
int residency_sampler_add(ResidencySampler *s, pid_t pid, size_t *ret_index);

/*
 * One sample of every live task (added, neither finished nor gone). A task whose stat can no
 * longer be read because it was reaped (-ESRCH) is gone: its fd is closed and it is not read
 * again; its ticks stay for residency_sampler_finish(). Other read or parse errors skip the task
 * for this sample. (Without memory to grow a task's per-CPU table, the sample's ticks are kept for
 * its node only.)
 */
void residency_sampler_sample(ResidencySampler *s);

/*
 * The task ended with final_utime_usec of user time (its rusage at reaping): it is sampled once
 * more if it can still be read (a zombie not yet reaped), then what the samples missed goes to the
 * last node and CPU seen, and its fd is closed. Finishing a finished task, or an index never
 * returned, does nothing.
 */
void residency_sampler_finish(ResidencySampler *s, size_t index, uint64_t final_utime_usec);

/* The tasks added, live or not. */
size_t residency_sampler_n_tasks(const ResidencySampler *s);

/*
 * A task's ticks per node index; NULL for an index never returned. The pointer is valid until
 * the next residency_sampler_add().
 */
const Residency *residency_sampler_get(const ResidencySampler *s, size_t index);

/* Whether the task is still sampled: neither finished nor gone. false for a bad index. */
bool residency_sampler_live(const ResidencySampler *s, size_t index);

/* The CPU and the node id the task was on when added; -1 unknown or a bad index. */
int residency_sampler_initial_cpu(const ResidencySampler *s, size_t index);
int residency_sampler_initial_node(const ResidencySampler *s, size_t index);

/* The node id with the most ticks (the lowest index on a tie); -1 if none has any. */
int residency_sampler_most_node(const ResidencySampler *s, size_t index);

/* The task's cross-node moves seen and the sum of their node distances (the Topology's: 10 local,
 * 20 remote by default); 0 for a bad index. A task that went and came back between two samples
 * is not seen to move. */
uint32_t residency_sampler_moves(const ResidencySampler *s, size_t index, uint64_t *ret_distance);

/* How many samples read the task (the one in residency_sampler_finish() included). */
uint64_t residency_sampler_samples(const ResidencySampler *s, size_t index);

/*
 * The ticks credited to cpu, as per node: every CPU seen counts, even one the Topology maps to no
 * node (whose ticks no node gets). 0 for a CPU never seen, or a bad index.
 */
uint64_t residency_sampler_cpu_ticks(const ResidencySampler *s, size_t index, unsigned cpu);
