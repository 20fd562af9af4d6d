/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * kernbench (Con Kolivas after Martin Bligh; seeds 002, 004): the generated tree compiled with
 * make -j J for a few job counts, each --runs times after a warm-up build, reported as mean
 * (stddev) of Elapsed, User, System, CPU% and context switches. The pure parts, for the tests.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "job.h"

/* The largest -j a --jobs number may ask for (0 is an unbounded -j). */
#define KERNBENCH_MAX_JOBS 4096u
#define KERNBENCH_MAX_RUNS 100u

/*
 * --jobs: comma-separated items, each a number (0..KERNBENCH_MAX_JOBS, 0 = unbounded) or one of
 * the keywords half (ncpus/2, at least 1), cpus (ncpus), 4xcpus (4 x ncpus) and unbounded (0).
 * Values stay in the order given; duplicates are kept. Returns 0 with a malloc'ed array,
 * -EINVAL (an item that is neither; *ret_errpos is its offset), -ERANGE (a number beyond
 * KERNBENCH_MAX_JOBS, or more than AXIS_MAX_VALUES items) or -ENOMEM.
 */
int kernbench_parse_jobs(const char *s, unsigned ncpus, unsigned **ret, size_t *ret_n,
                         size_t *ret_errpos);

/* Mean and sample standard deviation (n - 1 in the denominator; 0 for n <= 1) of v[0..n-1]. */
void kernbench_mean_stddev(const double *v, size_t n, double *ret_mean, double *ret_stddev);

/* One figure as the table shows it: mean and standard deviation over the runs. */
typedef struct KernbenchStat {
        double mean, stddev;
} KernbenchStat;

/* A row of the table: one job count. */
typedef struct KernbenchRow {
        unsigned jobs; /* 0: unbounded */
        unsigned runs;
        KernbenchStat elapsed_s, user_s, sys_s, cpu_pct, ctxsw;
} KernbenchRow;

/* The statistics of n runs at jobs: CPU% is (user + sys) / elapsed of each run, context switches
 * voluntary + involuntary. n 0 gives zeros. */
void kernbench_row(const JobResult *runs, unsigned n, unsigned jobs, KernbenchRow *ret);

/* The table's header line ("Kernbench:" comes before it), ending in a newline. */
void kernbench_format_header(FILE *f);

/* One row: the label right-aligned in 20 columns, -j (a number or "unbounded"), then each figure
 * as "mean (stddev)": "29.574s (0.21)", "1249.0% (3.1)", "81234 (210)". */
void kernbench_format_row(FILE *f, const char *label, const KernbenchRow *row);
