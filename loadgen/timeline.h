/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What happened on the machine while a suite ran, for `loadgen compare` and `loadgen plot`: the
 * load of each NUMA node over time (busy CPUs, summed per-CPU utilisation from /proc/stat) and
 * what cgbalanced did meanwhile (its "Moved pid" and "Set the weight" log lines, stamped with the
 * time they were read). Written into the results JSON as
 *
 *   {"interval_usec": 1000000, "nodes": [0, 1], "node_cpus": [2, 2],
 *    "samples": [{"t": 1.00, "load": [1.73, 0.20]}, ...],
 *    "moves":   [{"t": 3.21, "pid": 1234, "comm": "spinner", "from": 0, "to": 1}, ...],
 *    "weights": [{"t": 5.02, "cgroup": "cgbalance.slice/x", "from": 100, "to": 150}, ...]}
 *
 * Times are CLOCK_MONOTONIC microseconds in, seconds since the first sample out.
 */

#include <stdint.h>
#include <sys/types.h>

#include "json.h"
#include "macro.h"
#include "topology.h"

typedef struct Timeline Timeline;

/*
 * A timeline of the nodes of t (which must outlive it), reading proc_fd/stat (proc_fd: a /proc
 * directory fd, or a fixture's; it is not closed). Nothing is read yet. -EBADF for a negative
 * proc_fd, -EINVAL if t has no node, -ENOMEM.
 */
int timeline_new(int proc_fd, const Topology *t, Timeline **ret);

/*
 * Reads /proc/stat once. The first call only takes the baseline (t = 0 is its time); each later
 * call records one sample: per node, the busy CPUs since the previous recorded sample, stamped
 * now_usec. If no CPU's counters moved since then (two calls within one tick) nothing is
 * recorded and the old baseline stays, so the next sample covers the whole interval. A CPU of
 * the topology with no line in /proc/stat (gone offline) counts as idle. Returns 0, or the
 * errors of proc_stat_read_at() (the timeline is unchanged), -EINVAL if now_usec is before the
 * previous sample, -ENOMEM.
 */
int timeline_sample(Timeline *tl, uint64_t now_usec);

/* ---- the daemon's log lines */

typedef enum TimelineEventKind {
        TIMELINE_EVENT_NONE,
        TIMELINE_EVENT_MOVE, /* "Moved pid %d (%s) node %d -> %d, CPUs %s: %s" */
        TIMELINE_EVENT_WEIGHT, /* "Set the weight of %s %u -> %u: %s" */
} TimelineEventKind;

typedef struct TimelineEvent {
        TimelineEventKind kind;
        pid_t pid; /* a move's task */
        const char *name; /* a move's comm or a weight's cgroup path: points into the line */
        size_t name_len; /* bytes of name (it is not NUL-terminated there) */
        int64_t from, to; /* node ids of a move; weights (cpu.weight scale) of a weight change */
} TimelineEvent;

/*
 * Recognises one line of cgbalanced's stderr, with or without its "cgbalanced: " prefix (any
 * one word and ": " before the message) and a trailing newline. A comm may hold spaces,
 * parentheses and even ") node 1 -> 2, CPUs 0: ": the comm ends at the last ") node " after which
 * the line parses, which the daemon's reasons never contain; it must be 1..63 bytes (the daemon's
 * comm buffer). Likewise a cgroup path ends at the last " W -> W: ". Pure, no allocation.
 * Returns TIMELINE_EVENT_MOVE or TIMELINE_EVENT_WEIGHT with *ret filled, or
 * TIMELINE_EVENT_NONE (0) for any other line, malformed ones included (then *ret is untouched).
 */
TimelineEventKind timeline_parse_daemon_line(const char *line, TimelineEvent *ret);

/*
 * Records line if it is a move or weight line, stamped now_usec. Returns 1 if recorded, 0 if the
 * line is neither, -ENOMEM.
 */
int timeline_note_daemon_line(Timeline *tl, uint64_t now_usec, const char *line);

/* ---- output */

/*
 * Writes "key": {the object above} (key NULL: an array element). interval_usec is the mean
 * interval of the recorded samples, 0 without any. t is relative to the baseline (or, if no
 * sample was taken, to the first event), so a line read before the baseline has t < 0.
 */
void timeline_write_json(const Timeline *tl, Json *j, const char *key);

/* The numbers of samples, moves and weight changes recorded, for tests and summaries. */
size_t timeline_n_samples(const Timeline *tl);
size_t timeline_n_moves(const Timeline *tl);
size_t timeline_n_weights(const Timeline *tl);

Timeline *timeline_free(Timeline *tl); /* accepts NULL, returns NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(Timeline *, timeline_free);
#define _cleanup_timeline_ _cleanup_(timeline_freep)
