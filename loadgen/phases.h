/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The phase executor: what one task instance of a scenario does, in the process the scenario
 * runner forked for it (already in its cgroup and on its start CPUs or node). phases_run() runs
 * the task's phases in order and counts their work in a TaskStats the runner reads as it goes.
 *
 * Phases run in order; with loop they start again from the first until the deadline, without
 * it the task ends after the last one. Any phase is cut short at the deadline or once *stop is
 * set (seen within PHASE_STOP_SLICE_USEC even while blocked). Each phase:
 *
 *   run DURATION [duty P%]   busy for DURATION of wall time; below 100%, busy for the first P%
 *                            of each SCENARIO_DUTY_PERIOD_USEC window of an absolute timeline,
 *                            asleep for the rest. Busy means wall time: a task that shares its
 *                            CPU gets less CPU time than P%, as a real duty-cycled task would.
 *   run N loops [duty P%]    N x SCENARIO_LOOP_WORK busy steps, at the same duty cycle.
 *   sleep DURATION           clock_nanosleep().
 *   periodic RUN every PERIOD for DURATION
 *                            period k starts at phase start + k x PERIOD (TIMER_ABSTIME); it is
 *                            busy for RUN from its wake-up, whose latency (actual minus planned
 *                            start) is counted. The first period starts at once. A start already
 *                            past when the previous run ended is missed: counted, skipped, no
 *                            catch-up burst. Every start before the end is done or missed.
 *   pingpong TASK (for DURATION | N rounds)
 *                            over the runner's two pipes, one byte a round. The leading side
 *                            writes a token and reads it back (one round trip, timed); it decides
 *                            the end and then writes an end byte, so both sides can meet again
 *                            in the next loop. The answering side echoes tokens until that end
 *                            byte, EOF (the leader's process is gone), the deadline or *stop;
 *                            its own length is ignored. A round trip includes any time the
 *                            peer spends in its other phases. A side whose peer has gone (EOF,
 *                            EPIPE) ends the phase and skips it from then on; a loop pass of
 *                            nothing but such phases ends the task rather than spin.
 *   memwalk SIZE (for DURATION | N passes)
 *                            mmap()s SIZE rounded up to whole pages (first touch places the
 *                            pages on the node the task runs on), writes every cache line of
 *                            each page, pages in mem_load's cache-hostile order; unmapped at the
 *                            end of the phase.
 *   write SIZE [for DURATION]
 *                            SIZE of zeroes in 1 MiB writes to work_dir/phase-I.dat, once, or
 *                            truncated and written again until DURATION ends (no fsync).
 *   read SIZE [for DURATION] makes work_dir/phase-I.dat (SIZE of zeroes, synced: not counted,
 *                            and DURATION starts after it), then reads it start to end in 1 MiB
 *                            reads, once or repeatedly.
 *   bench NAME [OPTION...] (for DURATION | N runs)
 *                            loadgen_path NAME OPTION... --no-sandbox, again and again, its
 *                            output to /dev/null: it runs in this instance's cgroup, on its
 *                            CPUs (its files in the default directory, removed as it ends). The end
 * or a stop sends it SIGTERM (it ends its workers and removes its files), then SIGKILL after 5 s;
 * such a run is not counted, nor one that failed. compile (for DURATION | N builds) contest's job
 * in tree_dir: make clean, then make -j (4 x ncpus), again and again. A build the deadline or a
 * stop cuts is killed with every compiler (job_make()) and not counted. load NAME for DURATION the
 * contest load's run(), its duration clamped to the time left before the deadline. Its preparation
 * (read_load's file, say) is not in its duration, so it may end that much after the deadline; *stop
 *                            ends it at any time. What it forks it reaps itself.
 *
 * Every file and mapping a phase makes is gone when the phase ends, error or not. phases_run()
 * ignores SIGPIPE while it runs (a pingpong side whose peer died gets EPIPE, not killed) and
 * restores the old disposition before it returns.
 */

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scenario.h"

/*
 * One "loop" of `run N loops`: this many steps of a 64-bit xorshift, each depending on the last
 * (nothing to vectorize or skip). A fixed amount of work, not a time: about 100 us on the 2-CPU
 * Xeon VM this was written on (2.1 ns a step), less on a faster CPU, so the work a task did is
 * comparable between runs and machines. Timed runs count their work in the same unit.
 */
#define SCENARIO_LOOP_WORK 50000u

/* The longest a phase blocks at once: a stop signal that lands between the check of *stop and
 * the sleep would otherwise go unseen for the whole sleep. */
#define PHASE_STOP_SLICE_USEC 50000u

/* Log2 buckets of a latency histogram: bucket 0 counts 0 us, bucket k (1..31) counts
 * [2^(k-1), 2^k) us, the last one also everything longer (2^30 us is about 18 minutes). */
#define PHASE_LATENCY_BUCKETS 32u

/* Loads by their index in loads[] (load.h): a test checks n_loads fits. */
#define PHASE_MAX_LOADS 16u

typedef struct PhaseLatency {
        _Atomic uint64_t count;
        _Atomic uint64_t sum_usec;
        _Atomic uint64_t max_usec;
        _Atomic uint64_t buckets[PHASE_LATENCY_BUCKETS];
} PhaseLatency;

/*
 * What one task instance did, in MAP_SHARED memory the runner zeroes before the fork and reads
 * while the task runs. phases_run() adds to it and never resets it. Every field is written only
 * by the task's process (and load_work also by the processes its load forks), with relaxed
 * atomics; the runner reads them with relaxed loads. Each counter is exact on its own; two of
 * them (count and sum_usec, say) read at once may be one update apart.
 */
typedef struct TaskStats {
        _Atomic uint64_t phase; /* index of the phase running now; n_phases once ended */
        _Atomic uint64_t passes; /* passes over all phases the deadline or a stop did not cut */
        _Atomic uint64_t phase_usec[_PHASE_TYPE_MAX]; /* wall time spent in each type */

        _Atomic uint64_t run_loops; /* run and periodic: busy work, in SCENARIO_LOOP_WORK */

        _Atomic uint64_t periodic_periods; /* periods done (woken and run) */
        _Atomic uint64_t periodic_missed; /* starts already past: skipped */
        PhaseLatency periodic_latency; /* wake-up: actual start minus planned start */

        _Atomic uint64_t pingpong_rounds; /* leader: round trips; answerer: tokens echoed */
        PhaseLatency pingpong_rtt; /* leader only: from the token's write to its return */

        _Atomic uint64_t memwalk_lines; /* cache lines (64 bytes) written */
        _Atomic uint64_t memwalk_passes; /* whole passes over the mapping */

        _Atomic uint64_t write_bytes; /* written by write phases */
        _Atomic uint64_t read_bytes; /* read by read phases (their file's making not counted) */

        _Atomic uint64_t load_work[PHASE_MAX_LOADS]; /* by index in loads[], in Load.unit */

        _Atomic uint64_t compile_builds; /* compile: builds that ran to their end */
        _Atomic uint64_t bench_runs; /* bench: runs that ended by themselves, exit status 0 */
} TaskStats;

/* What one task instance's process needs to run its phases. */
typedef struct PhaseContext {
        const Phase *phases;
        size_t n_phases;
        bool loop; /* from the Scenario */
        uint64_t deadline_usec; /* CLOCK_MONOTONIC (now_usec()): the scenario's end */
        volatile sig_atomic_t *stop; /* set by a signal handler; phases_run() returns soon after */
        const char *work_dir; /* an existing directory of this instance's own, for its files */
        /* Per phase index: {read_fd, write_fd} for a pingpong phase, else {-1, -1}. The runner
         * closes the peer's ends in this process, so a dead peer reads as EOF. */
        const int (*pingpong_fds)[2];
        /* Per phase index: true when this side sends first and decides when the exchange ends. */
        const bool *pingpong_leads;
        unsigned ncpus; /* for load phases (LoadOptions); 0: the online CPUs */
        uint64_t ram_bytes; /* for load phases; 0: LOAD_DEFAULT_RAM_BYTES */
        /* For compile and the loads that read a source tree (ctar_load, xtar_load, list_load):
         * a tree of tree_generate()'s, the instance's own; NULL: those phases fail with -EINVAL. */
        const char *tree_dir;
        /* For bench phases: the loadgen binary to run (the runner's own); NULL: -EINVAL. */
        const char *loadgen_path;
        TaskStats *stats;
} PhaseContext;

/*
 * Runs c's phases. Returns 0 at the end of the phases, at the deadline or once *c->stop is set;
 * or the first error, a negative errno: -EINVAL for a context that lacks what a phase needs
 * (stats, work_dir, pingpong fds, a load this build does not know), -ENOMEM for a memwalk
 * mapping, the errors of file I/O and of pipes, and a load's own errors.
 */
int phases_run(const PhaseContext *c);

/* The latency at or below which pct percent (1..100) of l's samples fall, estimated as the
 * upper end of their histogram bucket (at most 2x too high) and at most l->max_usec; 0 when l
 * has no samples. */
uint64_t phase_latency_percentile_usec(const PhaseLatency *l, unsigned pct);
