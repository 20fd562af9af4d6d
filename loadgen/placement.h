/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen placement: where a balancer puts tasks that start on one node, and what that costs.
 * CPU-bound tasks, some holding memory they touched on that node (memwalk: every page, over and
 * over), start pinned to it; once the memory is in place they are released to every CPU of the
 * run (--release: the kernel and numad may move them) or left pinned (a launch cgbalanced's
 * override_foreign_affinity corrects). For the duration: each task's cross-node moves and the sum
 * of their distances (sampled every 10 ms), the time it waited for a CPU (schedstat), and at the
 * end the node it ran on and, for a task with memory, the share of its resident pages on that
 * node (numa_maps). The pure parts are here, for tests.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PLACEMENT_MAX_TASKS 64u
#define PLACEMENT_MAX_NODES 64u

typedef struct PlacementTask {
        bool mem; /* holds memory (a memwalk task) */
        int start_node, end_node; /* node ids; -1 unknown */
        uint32_t moves; /* cross-node moves seen */
        uint64_t distance; /* their distances summed */
        uint64_t wait_usec; /* waiting for a CPU over the duration */
        uint64_t kib[PLACEMENT_MAX_NODES]; /* resident KiB by node index, at the end (mem only) */
        uint64_t end_kib; /* of which on the node it ran on last */
        uint64_t total_kib;
} PlacementTask;

/* Percent of the task's resident pages on the node it ran on last; -1 when it has none. */
double placement_local_pct(const PlacementTask *t);

/* The tasks' end nodes as counts per node, "2/2/0" by node index: node_ids[i] is index i's id. */
void placement_format_counts(char *buf, size_t size, const PlacementTask *tasks, size_t n,
                             const int *node_ids, unsigned n_nodes);

/* One row per task and the total line: moves, distance, wait, local memory (the least among the
 * tasks with memory, and their mean). */
void placement_format_table(FILE *f, const PlacementTask *tasks, size_t n, const int *node_ids,
                            unsigned n_nodes);
