/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen's loads: the background loads of Con Kolivas' contest benchmark. Each load does real
 * work (real processes, real pipes, real files written and read, real tar, real page faults) and
 * counts it in its own unit. One module per load; this table ties them together.
 *
 * A load runs in a process of its own (loadgen/runner.c starts it in the run's load cgroup and
 * measures its CPU time from outside), so run() may fork, block and take signals freely. Its
 * life: prepare (make its files: not counted), load_ready(), then work until the duration ends
 * or *stop is set, adding each unit of work to *progress as it completes, so the harness can
 * read how much was done in any window (contest counts only what happened while the job ran).
 * Every process and file it made is gone when run() returns, error or not; work_dir itself is
 * the caller's.
 */

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "clock.h" /* now_usec(), every load's clock */

/* Without swap, referencing 110% of RAM as contest did is an OOM kill: mem_load references 90%. */
#define MEM_LOAD_RAM_PERCENT 90u
#define LOAD_DEFAULT_RAM_BYTES (UINT64_C(256) << 20)

typedef struct LoadOptions {
        uint64_t duration_usec; /* counted from load_ready(); 0: until *stop */
        unsigned ncpus; /* CPUs the run may use (process_load's ring is 4 x ncpus) */
        /* "RAM": the run's memory limit. io_load writes, read_load reads, a file this size;
         * mem_load references MEM_LOAD_RAM_PERCENT of it. */
        uint64_t ram_bytes;
        const char *work_dir; /* an existing, empty directory for the load's own files */
        const char *other_dir; /* io_other writes here (ideally another file system) */
        const char *tree_dir; /* the job's source tree: ctar_load, xtar_load, list_load read it */
        /* Set from a signal handler; a load returns soon after it turns non-zero. May be NULL. */
        volatile sig_atomic_t *stop;
        /* Work done so far, in the load's unit; in memory shared with the harness (MAP_SHARED),
         * so processes the load forks may add to it too. Never NULL when run() is called. */
        _Atomic uint64_t *progress;
        int ready_fd; /* load_ready() writes one byte here; -1 for none */
} LoadOptions;

typedef struct LoadResult {
        uint64_t work; /* in the load's unit, before the contest's scaling: *progress at the end */
        uint64_t elapsed_usec; /* from load_ready() to the end of the work */
        bool interrupted; /* *stop ended the run before its duration */
} LoadResult;

typedef struct Load {
        const char *name;
        const char *description;
        const char *unit; /* what one unit of LoadResult.work is: "token hops" */
        const char *contest_unit; /* as the contest table shows it: "token hops / 10^4" */
        uint64_t contest_scale; /* work / contest_scale = the contest's "Loads" figure */
        /* Returns 0 and fills *ret, or a negative errno; leaves no process or file of its own. */
        int (*run)(const LoadOptions *o, LoadResult *ret);
} Load;

extern const Load loads[];
extern const size_t n_loads;

/* The load called name, or NULL. */
const Load *load_find(const char *name);
/* Defaults: 1 s, online CPUs, LOAD_DEFAULT_RAM_BYTES, no directories, no stop flag, no progress
 * counter, no ready fd. */
void load_options_init(LoadOptions *o);

int no_load_run(const LoadOptions *o, LoadResult *ret);
int cacherun_run(const LoadOptions *o, LoadResult *ret);
int process_load_run(const LoadOptions *o, LoadResult *ret);
int ctar_load_run(const LoadOptions *o, LoadResult *ret);
int xtar_load_run(const LoadOptions *o, LoadResult *ret);
int io_load_run(const LoadOptions *o, LoadResult *ret);
int io_other_run(const LoadOptions *o, LoadResult *ret);
int read_load_run(const LoadOptions *o, LoadResult *ret);
int list_load_run(const LoadOptions *o, LoadResult *ret);
int mem_load_run(const LoadOptions *o, LoadResult *ret);

/* Pure: the bytes of "Private_Dirty:" in /proc/PID/smaps_rollup's text. -EBADMSG when the line is
 * missing or malformed, -EINVAL for NULL. */
int mem_load_parse_private_dirty(const char *smaps_rollup, uint64_t *ret);
/* Pure: what mem_load references: MEM_LOAD_RAM_PERCENT of ram_bytes less what the process is
 * charged already (both count against the run's memory limit), scaled down under AddressSanitizer
 * by its shadow (a byte for every 8); 0 when nothing is left. */
uint64_t mem_load_buffer_bytes(uint64_t ram_bytes, uint64_t charged);

/* ---- helpers shared by the loads */

/* Says the load is prepared (a byte on o->ready_fd) and returns its deadline: now plus the
 * duration, or UINT64_MAX for none. */
uint64_t load_ready(const LoadOptions *o);
/* Adds n units of work to *o->progress. */
void load_progress_add(const LoadOptions *o, uint64_t n);
/* The result at the end: work from *o->progress, elapsed since start_usec (load_ready()'s time). */
void load_result(const LoadOptions *o, uint64_t start_usec, LoadResult *ret);
/* True once *o->stop is set or now >= deadline_usec. */
bool load_should_stop(const LoadOptions *o, uint64_t deadline_usec);
/* Sleeps up to max_usec, less if the deadline comes first; a signal cuts it short. */
void load_nap(uint64_t deadline_usec, uint64_t max_usec);

/* Runs argv (argv[0] looked up in PATH) to completion, the loads' one way to run tar and ls: its
 * stdin, stdout and stderr are /dev/null, its signal mask empty, and it is SIGKILLed if this
 * thread dies. It is watched while it runs: once *o->stop is set (by a signal or by another
 * thread: seen within 100 ms) or deadline_usec passes, it is SIGKILLed and reaped. Returns 0 if
 * it exited 0; -ECANCELED if it was stopped (its work must not be counted); -EIO if it exited
 * non-zero or died of a signal; exec's error (-ENOENT for a missing program); or fork's. */
int load_run_command(const LoadOptions *o, uint64_t deadline_usec, const char *const argv[]);
/* rm -rf path: removes path and everything below it, without following symlinks or crossing
 * mount points. 0 also when path does not exist; else the first error of unlink() or rmdir(). */
int load_remove_tree(const char *path);
/* A page step coprime with npages, so one pass of i*step % npages visits every page once, each
 * far from the last: no prefetcher or TLB reach helps (mem_load, the memwalk phase). */
uint64_t load_page_step(uint64_t npages);

/* Writes len bytes of zeroes at fd's offset, through short writes and EINTR. 0 or -errno. */
int load_write_zeroes(int fd, size_t len);

/* "0.3", "5", "2.25" seconds (at most 6 decimals, > 0, <= 10^6 s). Returns -EINVAL or -ERANGE. */
int parse_seconds(const char *s, uint64_t *ret_usec);
/* "16M", "256MiB", "1G", "4096" (bytes; K/M/G/T are binary). Returns -EINVAL or -ERANGE. */
int parse_size(const char *s, uint64_t *ret_bytes);
