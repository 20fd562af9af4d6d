/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The foreground job: `make` on a tree from tree_generate(), timed the way contest and kernbench
 * time their kernel compile: elapsed time, and the CPU time and context switches of make and of
 * every compiler it waited for (the rusage wait4() reports for the make process).
 */

#include <signal.h>
#include <stdint.h>

/* make's stderr, kept in the tree for job_last_errors(): truncated by each job. */
#define JOB_LOG_NAME "job.log"

typedef struct JobResult {
        uint64_t elapsed_usec; /* from fork to reaping make */
        uint64_t user_usec, sys_usec; /* of make and everything it waited for */
        uint64_t vol_ctxsw, invol_ctxsw; /* the same processes' context switches */
        int exit_status; /* make's wait status: WIFEXITED, WEXITSTATUS... */
} JobResult;

/*
 * Called in the child after fork(), before exec, once the child is in its own process group (the
 * harness moves it into its cgroup here). Only async-signal-safe calls: the caller may have
 * threads. Returns 0 or a negative errno.
 */
typedef int (*JobSetup)(void *userdata);

/*
 * Runs `make -C dir -s --no-print-directory -j jobs [target]`: jobs 0 is an unbounded `-j`;
 * target NULL is the Makefile's default (build everything), "clean" removes the objects.
 *
 * The child is the leader of a new process group, gets PR_SET_PDEATHSIG SIGKILL (bound to the
 * calling thread), an empty signal mask and default signal dispositions, stdin and stdout on
 * /dev/null and stderr in dir/JOB_LOG_NAME. MAKEFLAGS, MFLAGS and MAKELEVEL are removed from its
 * environment, so a make that runs loadgen cannot hand the job its jobserver or its flags.
 *
 * stop may be NULL. Once *stop is set (by a signal handler, which also cuts the wait short, or
 * by another thread: seen within 50 ms), the whole process group is SIGKILLed and every process
 * of it reaped before job_make() returns -EINTR: no compiler outlives it. To reap the compilers
 * make leaves behind, the caller is made a child subreaper (PR_SET_CHILD_SUBREAPER) from the
 * kill until they are gone, then its previous setting is restored.
 *
 * Returns 0 with *ret filled when make ran to its end, whatever its exit status; the setup
 * callback's error if it failed (the child then exits 126 without running make); exec's error
 * (-ENOENT: no make in PATH); -EINTR if stopped; -EINVAL for a NULL dir or ret; or the error of
 * opening the log, fork() or waiting. *ret is written only on success.
 */
int job_make(const char *dir, const char *target, unsigned jobs, JobSetup setup, void *userdata,
             volatile sig_atomic_t *stop, JobResult *ret);

/*
 * The tail of the last job's stderr in dir (at most JOB_ERROR_LINES lines, JOB_ERROR_BYTES
 * bytes, no trailing newline), for an error message; malloc'ed, the caller frees it. NULL when
 * the job wrote nothing to stderr, there was no job, or memory ran out.
 */
#define JOB_ERROR_LINES 8u
#define JOB_ERROR_BYTES 2048u
char *job_last_errors(const char *dir);
