/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What happened on the machine while a suite ran, for `loadgen compare` and `loadgen plot`: the
 * load of each NUMA node over time (busy CPUs, summed per-CPU utilisation from /proc/stat) and
 * what cgbalanced did meanwhile (the moves and weight changes of its --events stream, the
 * lib/event.h records, at the times the daemon stamped them). Written into the results JSON as
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

#include "event.h"
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
 * A timeline of a model machine (loadgen simulate): samples come from timeline_add_sample(),
 * times count from 0, timeline_sample() is -EINVAL. Errors as timeline_new()'s.
 */
int timeline_new_model(const Topology *t, Timeline **ret);

/* One sample at now_usec: load[i] is node index i's busy CPUs in permyriad of one CPU. -ENOMEM. */
int timeline_add_sample(Timeline *tl, uint64_t now_usec, const uint64_t *load);

/* Written as the timeline's "name" (loadgen plot names its figure by it). -ENOMEM. */
int timeline_set_name(Timeline *tl, const char *name);

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

/* ---- the daemon's events (cgbalanced --events, lib/event.h) */

/* Records e at its monotonic_usec (the clock of timeline_sample()'s times). 0, -EINVAL for an
 * unknown kind, -ENOMEM. */
int timeline_note_event(Timeline *tl, const Event *e);

/* Records one line of the daemon's events stream (a trailing newline allowed). 0; -EBADMSG for
 * a line that is not an event (event_parse()), nothing recorded; -ENOMEM. */
int timeline_note_event_line(Timeline *tl, const char *line);

/*
 * A pipe for the daemon's events: the timeline keeps the read end (non-blocking, close-on-exec),
 * *ret_fd is the write end, NOT close-on-exec so that the daemon inherits it: start the daemon
 * with "--events=FD", then close FD in this process before starting anything else. -EBUSY if the
 * timeline has a pipe already, -errno of pipe2().
 */
int timeline_open_events(Timeline *tl, int *ret_fd);

/*
 * Records each complete line the daemon wrote to the pipe since the last call; at EOF (the
 * daemon is gone) an unterminated last line too, and the read end is closed. Lines that are not
 * events are skipped and counted (timeline_n_rejected()). Returns the number of events recorded,
 * 0 without a pipe, -ENOMEM.
 */
int timeline_read_events(Timeline *tl);

/* ---- output */

/*
 * Writes "key": {the object above} (key NULL: an array element). interval_usec is the mean
 * interval of the recorded samples, 0 without any. t is relative to the baseline (or, if no
 * sample was taken, to the first event), so an event before the baseline has t < 0.
 */
void timeline_write_json(const Timeline *tl, Json *j, const char *key);

/* The numbers of samples, moves and weight changes recorded, for tests and summaries. */
size_t timeline_n_samples(const Timeline *tl);
size_t timeline_n_moves(const Timeline *tl);
size_t timeline_n_weights(const Timeline *tl);
size_t timeline_n_rejected(const Timeline *tl); /* lines of the pipe that were no event */

Timeline *timeline_free(Timeline *tl); /* accepts NULL, returns NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(Timeline *, timeline_free);
#define _cleanup_timeline_ _cleanup_(timeline_freep)
