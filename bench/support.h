/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What every bench program repeats: failure messages, the check that the tools it compares
 * against are installed, medians of its repetitions, and the small file-system and child helpers.
 * Timers are lib/clock.h's: now_usec() for wall time, clock_nsec(CLOCK_MONOTONIC) and
 * clock_nsec(CLOCK_THREAD_CPUTIME_ID) for short intervals. Linked into each bench program by the
 * Makefile's bench rule; not part of the library.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "clock.h"
#include "macro.h"

/* A child that could not set itself up exits so; 127 is exec's failure. */
#define BENCH_EXIT_SETUP 126
/* The most values bench_median() takes (it sorts a copy on the stack). */
#define BENCH_MEDIAN_MAX 64u

/* Set by bench_fail(): a message said what failed, so main() need not. */
extern bool bench_error_reported;

/* "PROGRAM: message" on stderr, and bench_error_reported. */
_printf_(1, 2) void bench_fail(const char *fmt, ...);

typedef struct BenchTool {
        const char *tool; /* looked up in PATH */
        const char *package; /* the Debian package that has it */
} BenchTool;

/* Whether name is an executable file in a directory of PATH ("/usr/bin:/bin" when unset). */
bool bench_in_path(const char *name);

/* bench_fail()s for each tool missing from PATH, naming its package; -ENOENT if any is. */
int bench_check_tools(const BenchTool *tools, size_t n);

/* Whether base/rel is a directory. */
bool bench_dir_exists(const char *base, const char *rel);

/* Pure: the median of v[0..n) (the upper one for even n), sorting v in place: v[0] is then the
 * best. 0 for n == 0. */
uint64_t bench_median_u64(uint64_t *v, size_t n);

/* Pure: the median of v[0..n) (upper for even n), v left as it is; ret_min and ret_max (may be
 * NULL) get the extremes. n is at most BENCH_MEDIAN_MAX (more are ignored); 0 for n == 0. */
double bench_median(const double *v, size_t n, double *ret_min, double *ret_max);

/* In a forked child: target (a standard fd) onto path opened with flags (mode 0600), or
 * _exit(BENCH_EXIT_SETUP). */
void bench_redirect(int target, const char *path, int flags);
