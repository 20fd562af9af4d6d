/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Running a project binary (loadgen, cgbalancectl) as a user does, from a test: in a new session
 * with stdout and stderr captured, and checking that nothing of its run is left behind: no
 * process of the session, no cgroup of its sandbox, no file in the directories it was given.
 */

#include <stdbool.h>
#include <sys/types.h>

typedef struct Run {
        int status;
        pid_t pid;
        char *dir, *out_path, *err_path;
        char *out, *err;
} Run;

/* Starts argv (argv[0] a path) in a new session, so kill(-pid, 0) tells whether any process of it
 * is left; stdout and stderr go to files read by bin_finish(). */
void bin_start(Run *r, const char *const argv[]);
/* Waits for it; fills status, out and err. */
void bin_finish(Run *r);
/* Both. */
Run bin_run(const char *const argv[]);
/* SIGKILLs a stray of the session, removes the captured output, frees. */
void bin_run_done(Run *r);
/* No process of session sid is left. */
bool session_gone(pid_t sid);

/* cr_skip_test() unless root, saying why. */
void skip_unless_root(void);
/* A cgroup of the run of loadgen pid left in any hierarchy (v1 mounts or v2), or NULL. */
char *group_left(pid_t pid);
/* The first entry of a directory, or NULL when it is empty. */
char *dir_entry(const char *path);

/* Directories for --dir and --other-dir, removed by test_dirs_done(). */
typedef struct Dirs {
        char *dir, *other;
} Dirs;

Dirs test_dirs(void);
void test_dirs_done(Dirs *d);
/* Nothing of the run of r is left: no process of its session, no cgroup, no file in d. */
void expect_clean(const Run *r, const Dirs *d);
