/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Dynamic CPU sets. Storage is a glibc CPU_ALLOC() set, so a mask can describe any CPU count the
 * kernel supports (up to CPUMASK_MAX_CPUS) and is handed to sched_setaffinity() as it is.
 *
 * cpulist text is the kernel's format: comma-separated CPUs and inclusive ranges, "0-3,8,10-11".
 * The empty string (or only whitespace, as in an empty sysfs file) is the empty set.
 *
 * Every function that returns int returns 0 or a negative errno and writes ret_ only on success.
 */

#define _GNU_SOURCE 1
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "macro.h"

#define CPUMASK_MAX_CPUS 8192u

typedef struct CpuMask CpuMask;

/* An empty set able to hold CPUs 0..capacity-1. NULL if capacity is 0 or too large, or ENOMEM. */
CpuMask *cpumask_new(unsigned capacity);
CpuMask *cpumask_free(CpuMask *m); /* accepts NULL, returns NULL */
CpuMask *cpumask_copy(const CpuMask *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(CpuMask *, cpumask_free);
#define _cleanup_cpumask_ _cleanup_(cpumask_freep)

unsigned cpumask_capacity(const CpuMask *m);

/* -ERANGE if cpu >= capacity. */
int cpumask_set(CpuMask *m, unsigned cpu);
void cpumask_clear(CpuMask *m, unsigned cpu);
bool cpumask_isset(const CpuMask *m, unsigned cpu);
void cpumask_zero(CpuMask *m);
/* Sets CPUs lo..hi inclusive; -ERANGE if hi >= capacity, -EINVAL if lo > hi. */
int cpumask_set_range(CpuMask *m, unsigned lo, unsigned hi);

unsigned cpumask_count(const CpuMask *m);
bool cpumask_is_empty(const CpuMask *m);
/* Same CPUs set, whatever the capacities. */
bool cpumask_equal(const CpuMask *a, const CpuMask *b);
/* Every CPU of a is in b. */
bool cpumask_is_subset(const CpuMask *a, const CpuMask *b);
bool cpumask_intersects(const CpuMask *a, const CpuMask *b);

/* dst = a op b. dst may be a or b. CPUs at or above dst's capacity are dropped. */
void cpumask_and(CpuMask *dst, const CpuMask *a, const CpuMask *b);
void cpumask_or(CpuMask *dst, const CpuMask *a, const CpuMask *b);
void cpumask_andnot(CpuMask *dst, const CpuMask *a, const CpuMask *b);

/* The first set CPU after prev (pass -1 to start), or -1 when there is none. */
int cpumask_next(const CpuMask *m, int prev);
#define CPUMASK_FOREACH(cpu, m) \
        for (int cpu = cpumask_next((m), -1); cpu >= 0; cpu = cpumask_next((m), cpu))

/* For sched_setaffinity()/sched_getaffinity(): the set and its size in bytes. */
cpu_set_t *cpumask_cpu_set(const CpuMask *m);
size_t cpumask_cpu_set_size(const CpuMask *m);

/*
 * Parses a cpulist into a new mask of the given capacity. Leading and trailing whitespace is
 * ignored. Returns -EINVAL on a syntax error, -ERANGE for a CPU >= capacity, -ENOMEM. On error,
 * if ret_errpos is not NULL, it receives the offset in s where the bad token starts.
 */
int cpumask_parse(const char *s, unsigned capacity, CpuMask **ret, size_t *ret_errpos);

/* Formats as a cpulist with maximal ranges; "" for the empty set. Caller frees *ret. */
int cpumask_format(const CpuMask *m, char **ret);
