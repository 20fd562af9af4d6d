/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * lat_ctx (LMbench2; seed 000): the arithmetic and the table rows, apart from the processes and
 * pipes, so the tests can check them with numbers they choose.
 */

#include <stddef.h>
#include <stdint.h>

/* LMbench2: 11 measurements, the median reported (bench.h's TRIES and save_median()). */
#define LAT_CTX_REPETITIONS 11u
/* The overhead is the minimum of many short measurements, as LMbench2's pipe_cost() had it:
 * "larger overheads probably included the cost of some other system activity". */
#define LAT_CTX_OVERHEAD_REPETITIONS 51u
#define LAT_CTX_OVERHEAD_ENOUGH_USEC 2000u
/* LMbench2's TRIPS: a measurement goes at least this many times round the ring. */
#define LAT_CTX_MIN_TRIPS 5u
/* A measurement lasts at least this long (LMbench's "enough"), so the clock's grain is lost. */
#define LAT_CTX_ENOUGH_USEC 20000u
/* LMbench's BENCH1(ctx, 100000): the ring runs this long untimed first, for the scheduler to
 * settle. */
#define LAT_CTX_WARMUP_USEC 100000u

/*
 * Microseconds per context switch from one measurement: block_usec for `trips` trips of a ring of
 * `tasks` processes, each hop one switch, less overhead_usec (one pipe write+read plus one sum of
 * the array, measured in one process). Negative when the ring was cheaper than the overhead, as
 * LMbench reports it; 0 for no trips or no tasks.
 */
double lat_ctx_per_switch_usec(uint64_t block_usec, uint64_t trips, unsigned tasks,
                               double overhead_usec);

/*
 * How many iterations make a block last at least enough_usec, given that `trial` of them took
 * trial_usec: scaled up with a 25% margin, at least min_iters and at least trial; capped at
 * UINT32_MAX. A trial of 0 us counts as 1 us.
 */
uint64_t lat_ctx_iterations_for(uint64_t trial, uint64_t trial_usec, uint64_t enough_usec,
                                uint64_t min_iters);

/* The median of v[0..n) (sorting v; the mean of the middle two for even n); NAN when n is 0. */
double lat_ctx_median(double *v, size_t n);

/* The least of v[0..n); NAN when n is 0. */
double lat_ctx_min(const double *v, size_t n);

/* The seed's size header, with its leading double quote (xgraph's label): "\"size=4k ovr=3.93\n".
 * Returns what snprintf returns. */
int lat_ctx_format_header(char *buf, size_t size, unsigned size_kb, double overhead_usec);

/* One row, "2 2.79\n": tasks and usec per switch. Returns what snprintf returns. */
int lat_ctx_format_row(char *buf, size_t size, unsigned tasks, double usec);
