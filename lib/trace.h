/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Recordings of what the policy was given and what it planned, tick by tick, so every decision can
 * be made again (cgbalanced --replay) or with another configuration (a what-if). The format is
 * cgbalance-record(5); in short:
 *
 *     file  = magic "CGBREC" 0x1a, format version byte (TRACE_FORMAT_VERSION), frames
 *     frame = kind byte, payload length (varint), payload
 *
 * A file starts with an INFO frame (who wrote it, when), the TOPOLOGY (topology_to_text()) and the
 * CONFIG (config_write_values() of the tunables), and has a TICK frame per plan: now, the flags,
 * the snapshot, the plan. TOPOLOGY and CONFIG come again whenever they change. Numbers are LEB128
 * varints, signed ones zigzag; CPU loads are deltas against the tick before, and tasks are a
 * stream of operations against the tick before's list (a run of unchanged tasks costs one varint),
 * so a steady machine costs a few bytes a tick. Strings (group paths, task names, reasons) and CPU
 * masks are written once per file and referred to by number after.
 *
 * The writer keeps one file under a size cap: a frame that would take it past the cap rotates it
 * (FILE becomes FILE.1, replacing an older one) and starts FILE again, whole on its own (INFO,
 * TOPOLOGY, CONFIG, then full task records). A reader reads any file the writer left, including one
 * cut short by a crash (the last, partial frame is reported, the ticks before it are good).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "policy.h"
#include "topology.h"

#define TRACE_FORMAT_VERSION 1
#define TRACE_MIN_SIZE (64u * 1024u) /* the smallest size cap: a 1,024-CPU topology fits */

typedef struct TraceWriterOptions {
        uint64_t max_size; /* bytes; a file past it rotates; >= TRACE_MIN_SIZE */
        bool names; /* task names are recorded (else "") */
        const char *program; /* the writer, for INFO ("cgbalanced 0.1.0") */
} TraceWriterOptions;

typedef struct TraceWriter TraceWriter;

/*
 * Opens path for a new recording: an existing regular file is rotated away first (so a restart
 * never appends to, nor overwrites, what the last run recorded). Refuses anything but a regular
 * file (-EINVAL for a FIFO, device, directory) and symlinks (-ELOOP), never blocks. -errno.
 */
int trace_writer_open(const char *path, const TraceWriterOptions *o, TraceWriter **ret);
TraceWriter *trace_writer_free(TraceWriter *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(TraceWriter *, trace_writer_free);
#define _cleanup_trace_writer_ _cleanup_(trace_writer_freep)

const char *trace_writer_path(const TraceWriter *w);
uint64_t trace_writer_bytes(const TraceWriter *w); /* written to all files so far */
uint64_t trace_writer_ticks(const TraceWriter *w);

/* A new topology (the first, or after hotplug): written at once, and again after each rotation.
 * The policy's state restarts with it: a reader starts a new PolicyState too. */
int trace_writer_topology(TraceWriter *w, const Topology *topo);
/* The configuration's INI text (config_write_values()), when it is new or changed. */
int trace_writer_config(TraceWriter *w, const char *ini);

/* Flags of a tick: what else policy_plan() was given, besides the snapshot and now. */
#define TRACE_TICK_FORCE_NODE_BALANCE (1u << 0) /* RebalanceNow */
#define TRACE_TICK_WEIGHTS_IGNORED (1u << 1) /* a sched_ext scheduler: see manager_params() */

/* One tick: policy_plan(state, snap, topo, params, now, force, &plan) as it was called. The
 * topology and config must have been written. -errno from writing (the writer is then unusable,
 * -EIO for every later call), -ENOMEM. */
int trace_writer_tick(TraceWriter *w, uint64_t now_usec, unsigned flags, const PolicySnapshot *snap,
                      const Plan *plan);

typedef enum TraceEventKind {
        TRACE_EVENT_TOPOLOGY,
        TRACE_EVENT_CONFIG,
        TRACE_EVENT_TICK,
} TraceEventKind;

/* What trace_reader_next() read; everything in it is owned by the reader: the snapshot, plan and
 * configuration until the next call, the topology until the next TOPOLOGY event. */
typedef struct TraceEvent {
        TraceEventKind kind;
        const Topology *topology; /* TOPOLOGY */
        const char *config; /* CONFIG: INI text */
        size_t config_size;
        /* TICK */
        uint64_t tick; /* 1, 2, ... in the file */
        uint64_t now_usec;
        unsigned flags; /* TRACE_TICK_* */
        const PolicySnapshot *snap;
        const Plan *plan; /* as recorded */
} TraceEvent;

typedef struct TraceReader TraceReader;

/*
 * Opens a recording. Returns -EINVAL with a message in error for a file that is not one, -EPROTO
 * for one in another format version ("written in format 0; this cgbalanced reads format 1"),
 * -errno from opening it.
 */
int trace_reader_open(const char *path, TraceReader **ret, char *error, size_t error_size);
TraceReader *trace_reader_free(TraceReader *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(TraceReader *, trace_reader_free);
#define _cleanup_trace_reader_ _cleanup_(trace_reader_freep)

/*
 * The next event: 1 and *ret, 0 at the end of the file. -EINVAL (malformed: the message names
 * the byte offset of the frame and what is wrong), -EPIPE for a last frame cut short (the events
 * before it were whole), -EIO, -ENOMEM. After an error the reader returns it again.
 */
int trace_reader_next(TraceReader *r, TraceEvent *ret, char *error, size_t error_size);
/* From a buffer, for the fuzzer and tests: the same as a file holding those bytes. */
int trace_reader_new_from_memory(const void *data, size_t size, TraceReader **ret, char *error,
                                 size_t error_size);
/* The reader's info: the INFO frame's writer ("cgbalanced 0.1.0") and host, "" until read. */
const char *trace_reader_program(const TraceReader *r);
const char *trace_reader_host(const TraceReader *r);
uint64_t trace_reader_offset(const TraceReader *r); /* bytes consumed */

/* Plans equal in every field (masks by content, reasons by text); for a replay's check. */
bool plan_equal(const Plan *a, const Plan *b);
