/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen's loads: the background loads of Con Kolivas' contest benchmark. Each load does real
 * work (real processes, real pipes, real page faults), counts it in its own unit and reports the
 * CPU time it used. One module per load; this table ties them together.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#define MEM_LOAD_DEFAULT_BYTES (UINT64_C(256) << 20)

typedef struct LoadOptions {
        uint64_t duration_usec;
        unsigned ncpus; /* online CPUs by default */
        uint64_t mem_bytes; /* mem_load's buffer */
        /* Set from a signal handler; a load returns soon after it turns non-zero. May be NULL. */
        volatile sig_atomic_t *stop;
} LoadOptions;

typedef struct LoadResult {
        uint64_t work; /* in the load's unit, before the contest's scaling */
        uint64_t elapsed_usec;
        uint64_t cpu_usec; /* user+sys of the load's processes (children reaped, plus self) */
        bool interrupted; /* *stop ended the run before its duration */
} LoadResult;

typedef struct Load {
        const char *name;
        const char *description;
        const char *unit; /* what one unit of LoadResult.work is: "token hops" */
        const char *contest_unit; /* as the contest table shows it: "token hops / 10^4" */
        uint64_t contest_scale; /* work / contest_scale = the contest's "Loads" figure */
        /* Returns 0 and fills *ret, or a negative errno; leaves no process of its own running. */
        int (*run)(const LoadOptions *o, LoadResult *ret);
} Load;

extern const Load loads[];
extern const size_t n_loads;

/* The load called name, or NULL. */
const Load *load_find(const char *name);
/* Defaults: 1 s, online CPUs, MEM_LOAD_DEFAULT_BYTES, no stop flag. */
void load_options_init(LoadOptions *o);

int no_load_run(const LoadOptions *o, LoadResult *ret);
int process_load_run(const LoadOptions *o, LoadResult *ret);
int mem_load_run(const LoadOptions *o, LoadResult *ret);

/* ---- helpers shared by the loads */

uint64_t now_usec(void); /* CLOCK_MONOTONIC */
/* user+sys of getrusage(who), in microseconds. */
uint64_t rusage_usec(int who);
/* True once *o->stop is set or now >= deadline_usec. */
bool load_should_stop(const LoadOptions *o, uint64_t deadline_usec);
/* Sleeps up to max_usec, less if the deadline comes first; a signal cuts it short. */
void load_nap(uint64_t deadline_usec, uint64_t max_usec);

/* "0.3", "5", "2.25" seconds (at most 6 decimals, > 0, <= 10^6 s). Returns -EINVAL or -ERANGE. */
int parse_seconds(const char *s, uint64_t *ret_usec);
/* "16M", "256MiB", "1G", "4096" (bytes; K/M/G/T are binary). Returns -EINVAL or -ERANGE. */
int parse_size(const char *s, uint64_t *ret_bytes);
