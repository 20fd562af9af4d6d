/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * loadgen's child processes: one way to start a program (fork+exec) or a function (fork) with
 * the same care everywhere (die with loadgen, a process group of its own, stdio on /dev/null, a
 * file or a pipe read back, the start's errors passed back), to wait for it with a deadline and
 * loadgen's stop flag, and to end it politely (a signal, a grace) or not (SIGKILL to its group).
 *
 * The child side between fork() and exec runs async-signal-safe calls only, so a caller may
 * have threads: everything it needs (argv, envp, descriptors) is built before the fork.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

/* Where one of the child's standard streams goes: one of these, or a descriptor to dup2(). */
#define CHILD_FD_NULL (-1) /* /dev/null */
#define CHILD_FD_INHERIT (-2) /* loadgen's own */
#define CHILD_FD_PIPE (-3) /* a pipe loadgen reads (Child.out_fd); stdout and stderr share it */

/* Exit codes of a child whose start failed (the errno comes back as child_start_error()). */
#define CHILD_EXIT_SETUP 126
#define CHILD_EXIT_EXEC 127

typedef struct ChildSpec {
        /* What runs: fn(userdata) if exec_path and argv are NULL (the child exits with its
         * return value); else argv, looked up in PATH unless exec_path is given, with envp
         * (NULL: loadgen's environ), after setup(userdata) if set (a negative errno fails it). */
        const char *exec_path;
        const char *const *argv;
        char *const *envp;
        int (*fn)(void *userdata);
        int (*setup)(void *userdata);
        void *userdata;
        int pdeathsig; /* sent to it when loadgen dies; 0 for none */
        bool new_pgrp; /* leads a process group of its own, which child_kill() kills whole */
        bool reset_all_signals; /* every disposition to the default, not only SIGINT/SIGTERM's */
        bool exec_error_to_stderr; /* "loadgen: Failed to execute PATH: ERROR" on its stderr */
        int stdin_fd, stdout_fd, stderr_fd; /* CHILD_FD_* or a descriptor (0: CHILD_FD_INHERIT) */
} ChildSpec;

typedef struct Child {
        pid_t pid; /* 0 once reaped */
        int status; /* wait status once reaped */
        struct rusage ru; /* its CPU time once reaped (and its reaped children's) */
        int out_fd; /* CHILD_FD_PIPE's read end (non-blocking), else -EBADF; the caller's to close
                     */
        int err_fd; /* the start's errno comes back here */
        int pidfd; /* wakes a poll when it exits; -EBADF without pidfd_open() */
        bool pgrp; /* leads its own process group */
} Child;

#define CHILD_NULL \
        { .out_fd = -EBADF, .err_fd = -EBADF, .pidfd = -EBADF }

/*
 * Forks and starts spec's child into *ret. In the child: its own process group if asked, then
 * the death signal armed (it exits at once if loadgen already died), SIGINT and SIGTERM (or
 * every signal) at their defaults, no signal blocked, stdio as asked, then setup and exec, or
 * fn. Both sides set the process group, so a kill of the group right after works. Returns 0,
 * or -errno of pipe(), open() or fork() (*ret untouched).
 */
int child_spawn(const ChildSpec *spec, Child *ret);

/* Reaps the child if it has ended, without blocking: true once reaped (or not ours: ECHILD,
 * with a status of exit 1). */
bool child_reap(Child *c);

/*
 * Waits for the child to end until deadline_usec (UINT64_MAX: none) or until *stop is set
 * (stop may be NULL). 0 once reaped; -ETIME at the deadline, -EINTR on a stop (it still runs);
 * another -errno of wait4(). A signal wakes it at once, the child's exit too (pidfd), a stop
 * set by another thread within CHILD_POLL_MSEC.
 */
#define CHILD_POLL_MSEC 50
int child_wait(Child *c, uint64_t deadline_usec, volatile sig_atomic_t *stop);

/* kill(2) of the child (not its group); 0 or -errno; -ESRCH once reaped. */
int child_signal(const Child *c, int sig);

/*
 * SIGKILLs the child, and its process group if it leads one, and reaps it. With a group, also
 * reaps every process left in it (loadgen is their subreaper meanwhile), for up to 5 s.
 */
void child_kill(Child *c);

/*
 * Sends sig, waits up to grace_usec for the child to end, then child_kill()s it: 0 if it ended
 * by itself in time, -ETIMEDOUT if it had to be killed.
 */
int child_terminate(Child *c, int sig, uint64_t grace_usec);

/* After the child was reaped: the -errno of its failed setup or exec, or 0 if it started. */
int child_start_error(const Child *c);

/* Kills the child if it still runs (child_kill()), closes its descriptors except out_fd. */
void child_done(Child *c);

/*
 * A copy of environ's pointers without the variables named in drop (NAME, no '='), plus add
 * ("NAME=value", or NULL) at the end: for ChildSpec.envp, built before the fork. The strings
 * stay environ's (and add's owner's): free the array only. NULL when out of memory.
 */
char **child_environ(const char *const *drop, size_t n_drop, const char *add);
