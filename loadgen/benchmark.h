/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen's scheduler benchmarks, the ones the seed mails judged schedulers with: one module and
 * one subcommand each (loadgen hackbench, loadgen lat_ctx, ...), each sweeping its axis in one
 * invocation and printing the seed's own table, or JSON with --json.
 *
 * What they share lives here: the table of benchmarks, axis lists ("10,20,30", "10-160:10",
 * "2-256x2"), refusing an axis value the machine cannot run before anything starts, running the
 * measured work in a process of its own inside the run's job cgroup (so cgbalanced manages it and
 * nothing of it outlives the run), and the report (table on stdout; JSON on stdout or in a file).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "json.h"
#include "sandbox.h"

typedef struct Benchmark {
        const char *name; /* the subcommand */
        const char *seed; /* the mail it reproduces: "004", or "modern" */
        const char *summary; /* one line, for loadgen list and loadgen --help */
        /* argv[0] is the name, argv[1..] its options; returns the process exit code (0, 1 for
         * a failure, EXIT_USAGE for bad arguments, 128+signal when interrupted). */
        int (*main)(int argc, char *argv[]);
} Benchmark;

extern const Benchmark benchmarks[];
extern const size_t n_benchmarks;

/* The benchmark called name, or NULL. */
const Benchmark *benchmark_find(const char *name);

int hackbench_main(int argc, char *argv[]);
int lat_ctx_main(int argc, char *argv[]);
int reflex_main(int argc, char *argv[]);
int chat_main(int argc, char *argv[]);
int kernbench_main(int argc, char *argv[]);
int schedbench_main(int argc, char *argv[]);
int reaim_main(int argc, char *argv[]);
int pipe_main(int argc, char *argv[]);
int placement_main(int argc, char *argv[]);

/* ---- axes */

#define AXIS_MAX_VALUES 1024u

/*
 * An axis: comma-separated items, each a number N, a range A-B (every value), a stepped range
 * A-B:S (A, A+S, ... up to B) or a doubling range A-BxF (A, A*F, ... up to B, F >= 2). Values
 * stay in the order given and must lie in [min, max]; at most AXIS_MAX_VALUES of them.
 * "10-160:10" is hackbench's 10..160; "2-256x2" is lat_ctx's 2, 4, ... 256.
 * Returns 0 with a malloc'ed array, -EINVAL (syntax; *ret_errpos is the offset of the bad
 * character) or -ERANGE (a value outside [min, max], or too many: *ret_errpos is the item's).
 */
int axis_parse(const char *s, unsigned min, unsigned max, unsigned **ret, size_t *ret_n,
               size_t *ret_errpos);

/* The largest of n values; 0 for none. */
unsigned axis_max(const unsigned *v, size_t n);

/* A member key holding the axis as a JSON array of numbers. */
void bench_json_axis(Json *j, const char *key, const unsigned *v, size_t n);

/* axis_parse() for option --name, logging what is wrong and what is wanted. 0 or -EINVAL. */
int bench_parse_axis(const char *name, const char *arg, unsigned min, unsigned max, unsigned **ret,
                     size_t *ret_n);

/* ---- limits */

/*
 * Whether `tasks` more tasks (processes or threads) can run here at once, and a process can hold
 * `fds` open descriptors: checked against kernel.threads-max, kernel.pid_max, RLIMIT_NPROC
 * (unless root) and RLIMIT_NOFILE (whose soft limit is raised to the hard
 * one when that is enough). `what` names the axis value in the error, e.g. "hackbench 160 groups".
 * Returns 0, or -E2BIG after logging which limit it would pass and its value.
 */
int bench_check_tasks(const char *what, uint64_t tasks, uint64_t fds);

/* ---- running */

/*
 * The measured work, called in a process of its own inside the sandbox's job group: fills out
 * (out_size bytes, zeroed, in memory the caller reads back) and returns 0 or a negative errno.
 * It must reap every process it starts. It runs with SIGINT and SIGTERM at their defaults and
 * in a process group of its own; the caller's stop flag reaches it as SIGKILL.
 */
typedef int (*BenchFn)(void *userdata, void *out);

/*
 * Forks the process, waits for it, and copies out back when fn succeeded (out is untouched
 * otherwise). If cli_stop is set meanwhile, the
 * process and everything left in the sandbox's groups is SIGKILLed and reaped, and -EINTR
 * returned. After the process ends, anything it left in the groups is killed too. Returns fn's
 * result; -EIO (logged) if the process died of a signal or exited without returning.
 */
int bench_run(const Sandbox *sb, BenchFn fn, void *userdata, void *out, size_t out_size);

/* ---- a command's run */

typedef struct BenchReport BenchReport;

/* A benchmark's sweep, given its sandbox and open report: 0, -EINTR, or another error (logged). */
typedef int (*BenchSweep)(void *userdata, Sandbox *sb, BenchReport *rep);

/*
 * What a benchmark command does once its arguments are checked: the stop handlers, the run's
 * sandbox from co, the report (json_arg as bench_report_open()), the sweep, the report closed.
 * Returns the command's exit code: 0, 1 on a failure (logged), cli_interrupted()'s on a stop.
 */
int bench_main(const char *name, const char *json_arg, const CliCommon *co, BenchSweep sweep,
               void *userdata);

/* ---- the report */

struct BenchReport {
        FILE *table; /* where the table goes; NULL when the JSON replaces it */
        Json json; /* .f is NULL without --json */
        FILE *json_file; /* owned, when --json=FILE */
};

/*
 * Opens the report: json_arg is CliCommon.json (cli_json_to(): none, stdout instead of the table,
 * or a file beside it). Writes the JSON's opening: {"loadgen": VERSION, "benchmark": name,
 * "machine": {...}, and leaves the object open for the caller's "parameters" and "rows". 0 or
 * -errno (logged).
 */
int bench_report_open(BenchReport *r, const char *json_arg, const char *name, const Sandbox *sb);

/* printf to the table, if there is one. */
void bench_printf(BenchReport *r, const char *fmt, ...) _printf_(2, 3);

/* Closes the JSON object, flushes both: 0, or -EIO (logged) on a write error. */
int bench_report_close(BenchReport *r);
