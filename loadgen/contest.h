/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The contest harness (Con Kolivas, 2002): a fixed foreground job, the compile of loadgen's
 * generated tree with make -j (4 x CPUs), is timed while one background load runs in the same
 * sandbox. Each load runs N times, no_load first since every Ratio is over its Time; then one
 * table per load, as the seed mails printed them:
 *
 *   process_load:
 *   Kernel [runs] Time CPU% Loads LCPU% Ratio
 *   default [3] 49.0 144 10 50 1.35
 *
 * Before each run the tree is cleaned (make clean) and its files are dropped from the page cache,
 * except for cacherun, whose job starts with the caches the previous run left warm. The load is
 * started and prepared (its files made), runs for the lead time on its own, then the job is
 * timed; the load's work and CPU are counted over the job's window only.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "load.h"
#include "sandbox.h"
#include "tree.h"

#define CONTEST_LEAD_USEC (3 * 1000000u)
#define CONTEST_QUICK_LEAD_USEC 1000000u

typedef struct ContestOptions {
        const Load **loads; /* in the order they run; no_load among them */
        size_t n_loads;
        unsigned runs;
        const char *label; /* the first column */
        unsigned jobs; /* make -j; 0: 4 x the sandbox's CPUs */
        uint64_t lead_usec;
        uint64_t ram_bytes; /* the loads' RAM, the load group's memory limit */
        const char *other_dir; /* io_other's directory */
        TreeOptions tree;
        bool quiet; /* no progress on stderr */
        volatile sig_atomic_t *stop; /* set by SIGINT/SIGTERM */
} ContestOptions;

/* One timed run of the job beside one load. */
typedef struct ContestRun {
        uint64_t time_usec; /* the job's elapsed time */
        uint64_t job_cpu_usec; /* the job's user+sys */
        uint64_t load_work; /* the load's work during the job, in its unit */
        uint64_t load_cpu_usec; /* the load's CPU during the job */
} ContestRun;

typedef struct ContestLoad {
        const Load *load;
        ContestRun *runs;
        unsigned n_runs;
} ContestLoad;

/* A row of a table: the means over a load's runs. */
typedef struct ContestRow {
        unsigned runs;
        double time_s, cpu_pct, loads, lcpu_pct, ratio;
} ContestRow;

typedef struct ContestResults {
        ContestLoad *loads;
        size_t n_loads;
        unsigned jobs, ncpus;
        uint64_t ram_bytes;
} ContestResults;

/*
 * Runs the contest in sb. On success *ret holds every load's runs (free with
 * contest_results_done()). -EINTR when *o->stop was set (everything the run started is ended by
 * then); -EIO when the job failed (its errors are logged); the errors of the loads and the
 * sandbox otherwise.
 */
int contest_run(const ContestOptions *o, Sandbox *sb, ContestResults *ret);
void contest_results_done(ContestResults *r);

/* Pure: the row of n runs of a load with Loads scaled by contest_scale, against the mean no_load
 * time no_load_time_s (0: Ratio is NaN). */
ContestRow contest_row(const ContestRun *runs, unsigned n, uint64_t contest_scale,
                       double no_load_time_s);
/* Pure: "LABEL [RUNS] TIME CPU% LOADS LCPU% RATIO" as the seed prints it, with a newline. */
void contest_format_row(FILE *f, const char *label, const ContestRow *row);
/* The tables, one per load, a blank line between. */
void contest_print_tables(FILE *f, const ContestResults *r, const char *label);
/* Every run's raw figures, the means, the machine and the parameters, as one JSON object. */
void contest_write_json(Json *j, const ContestResults *r, const ContestOptions *o,
                        const Sandbox *sb);
