/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* loadgen pipe (perf bench sched pipe's ping-pong): the pure parts, for the unit tests. */

#include <stddef.h>
#include <stdint.h>

#include "cpumask.h"

typedef enum PipePlacement {
        PIPE_NONE, /* unpinned: perf bench sched pipe's default */
        PIPE_SAME, /* both tasks on one CPU */
        PIPE_CROSS, /* on two different CPUs */
        PIPE_NODE, /* on CPUs of two different NUMA nodes */
        _PIPE_PLACEMENT_MAX,
} PipePlacement;

#define PIPE_MAX_PLACEMENTS 16u

/* "none", "same", "cross", "node"; NULL for another value. */
const char *pipe_placement_to_string(PipePlacement p);

/*
 * A comma-separated list of placements, in the order given (repeats allowed), at most
 * PIPE_MAX_PLACEMENTS: 0 with ret[0..*ret_n) filled, or -EINVAL with *ret_bad the offset of the
 * bad item.
 */
int pipe_parse_placements(const char *s, PipePlacement ret[PIPE_MAX_PLACEMENTS], size_t *ret_n,
                          size_t *ret_bad);

/*
 * The CPUs of the two tasks for placement p, taken from allowed (the run's CPUs) and, for
 * PIPE_NODE, nodes[0..n_nodes) (each node's CPUs): same, the first allowed CPU twice; cross, the
 * first two allowed CPUs; node, the first allowed CPU of the first two nodes that have one;
 * none, -1 twice. 0, or -ENOENT when allowed (or the nodes) lack the CPUs it needs.
 */
int pipe_pick_cpus(PipePlacement p, const CpuMask *allowed, const CpuMask *const *nodes,
                   size_t n_nodes, int ret[2]);

/*
 * A row modelled on perf's output, one op being one round trip:
 * "same   Total time:    0.838 [sec]       4.191175 usecs/op      238596 ops/sec\n".
 * Returns what snprintf() does.
 */
int pipe_format_row(char *buf, size_t size, PipePlacement p, uint64_t loops, uint64_t usec);
