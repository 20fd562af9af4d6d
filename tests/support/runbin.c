/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runbin.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "testutil.h"

/* Starts argv in a new session, so kill(-pid, 0) tells whether any process of it is left. */
void bin_start(Run *r, const char *const argv[]) {
        pid_t parent = getpid();

        r->dir = make_tmpdir();
        cr_assert_gt(asprintf(&r->out_path, "%s/out", r->dir), 0);
        cr_assert_gt(asprintf(&r->err_path, "%s/err", r->dir), 0);
        r->pid = fork();
        cr_assert_geq(r->pid, 0);
        if (r->pid == 0) {
                int o = open(r->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                int e = open(r->err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

                die_with_parent(parent);
                if (setsid() < 0 || o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 ||
                    dup2(e, STDERR_FILENO) < 0)
                        _exit(126);
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
}

void bin_finish(Run *r) {
        cr_assert_eq(waitpid(r->pid, &r->status, 0), r->pid);
        r->out = read_all(r->out_path);
        r->err = read_all(r->err_path);
}

Run bin_run(const char *const argv[]) {
        Run r = { 0 };

        bin_start(&r, argv);
        bin_finish(&r);
        return r;
}

void bin_run_done(Run *r) {
        /* Nothing of the run may outlive it; a stray would also be SIGKILLed here. */
        if (kill(-r->pid, 0) == 0)
                (void) kill(-r->pid, SIGKILL);
        rm_rf(r->dir);
        free(r->dir);
        free(r->out_path);
        free(r->err_path);
        free(r->out);
        free(r->err);
}

bool session_gone(pid_t sid) {
        return kill(-sid, 0) < 0 && errno == ESRCH;
}

void skip_unless_root(void) {
        if (!running_as_root())
                cr_skip_test("needs root: loadgen makes its sandbox cgroups under cgbalance.slice");
}

/* A cgroup of the run of loadgen pid left in any hierarchy (v1 mounts or v2), or NULL. */
char *group_left(pid_t pid) {
        _cleanup_free_ char *pattern = NULL;
        char *found = NULL;
        glob_t g;

        cr_assert_gt(
                asprintf(&pattern, "/sys/fs/cgroup{,/*}/cgbalance.slice/loadgen-%d", (int) pid), 0);
        if (glob(pattern, GLOB_BRACE | GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g) == 0)
                found = strdup(g.gl_pathv[0]);
        globfree(&g);
        return found;
}

/* The first entry of a directory, or NULL when it is empty. */
char *dir_entry(const char *path) {
        DIR *d = opendir(path);
        struct dirent *de;
        char *found = NULL;

        cr_assert(d, "%s: %s", path, strerror(errno));
        while (!found && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        found = strdup(de->d_name);
        closedir(d);
        return found;
}

Dirs test_dirs(void) {
        return (Dirs){ make_tmpdir(), make_tmpdir() };
}

void test_dirs_done(Dirs *d) {
        rm_rf(d->dir);
        rm_rf(d->other);
        free(d->dir);
        free(d->other);
}

/* Nothing of the run of r is left: no process of its session, no cgroup, no file. */
void expect_clean(const Run *r, const Dirs *d) {
        _cleanup_free_ char *g = group_left(r->pid);
        _cleanup_free_ char *f = dir_entry(d->dir), *o = dir_entry(d->other);

        cr_expect(session_gone(r->pid), "a process of the run is left");
        cr_expect_null(g, "a cgroup of the run is left: %s", g);
        cr_expect_null(f, "a file of the run is left in --dir: %s", f);
        cr_expect_null(o, "a file of the run is left in --other-dir: %s", o);
}
