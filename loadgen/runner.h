/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A load running in a process of its own, in the sandbox's load group: started, read while it
 * runs (work done so far, CPU used so far), stopped. The load's work counter lives in memory
 * shared with that process, so the harness can read it at the instants it chooses (contest counts
 * only what the load did while the job ran).
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "load.h"
#include "sandbox.h"

typedef struct LoadRun LoadRun;

/*
 * Forks a process that enters the sandbox's load group, runs l with o (whose stop, progress and
 * ready_fd the runner sets itself), and returns once the load is prepared and working. *stop (may
 * be NULL) is the caller's own flag: if it is set while the load prepares, the load is ended and
 * -EINTR returned. A load that fails before it is ready gives its error.
 */
int load_run_start(const Load *l, const LoadOptions *o, const Sandbox *sb,
                   volatile sig_atomic_t *stop, LoadRun **ret);
/* Work the load has done so far, in its unit. */
uint64_t load_run_progress(const LoadRun *r);
/* CPU time the load's group has used so far (-EOPNOTSUPP without cgroups). */
int load_run_cpu_usec(const LoadRun *r, uint64_t *ret);
/* True once the load has ended by itself (its duration is over); it is reaped then. */
bool load_run_finished(LoadRun *r);
/*
 * Asks the load to stop (SIGTERM), waits for it (SIGKILL to its process group after 10 s),
 * and gives its result and the CPU time (user+sys) it and every process it waited for used.
 * Returns the load's own error if it failed. Call once.
 */
int load_run_stop(LoadRun *r, LoadResult *ret, uint64_t *ret_cpu_usec);
/* Kills the load if it still runs, and frees. Accepts NULL; returns NULL. */
LoadRun *load_run_free(LoadRun *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(LoadRun *, load_run_free);
#define _cleanup_load_run_ _cleanup_(load_run_freep)
