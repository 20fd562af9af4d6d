/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Time as microseconds: the one place cgbalance reads a clock. The daemon, loadgen, the benches
 * and the tests all measure with now_usec(); the policy never reads a clock (time comes in as an
 * argument). clock_gettime() cannot fail for the clocks used here (a valid id, a valid pointer),
 * so these return a value, not an error.
 */

#include <stdint.h>
#include <time.h>

#define USEC_PER_SEC UINT64_C(1000000)
#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_SEC UINT64_C(1000000000)

/* Pure: ts in microseconds, rounded down; 0 for a negative ts. */
uint64_t timespec_to_usec(const struct timespec *ts);
/* Pure: ts in nanoseconds; 0 for a negative ts. */
uint64_t timespec_to_nsec(const struct timespec *ts);
/* Pure: usec as a timespec (tv_nsec < 1e9). */
struct timespec usec_to_timespec(uint64_t usec);

/* clock_id (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_THREAD_CPUTIME_ID...) in microseconds;
 * 0 if the kernel refuses the clock. */
uint64_t clock_usec(clockid_t clock_id);
/* The same in nanoseconds, for the benches' short intervals. */
uint64_t clock_nsec(clockid_t clock_id);

/* CLOCK_MONOTONIC in microseconds: what every interval and deadline is measured on. */
uint64_t now_usec(void);

/* Sleeps usec on CLOCK_MONOTONIC, resuming after signals until the whole time has passed. */
void sleep_usec(uint64_t usec);
