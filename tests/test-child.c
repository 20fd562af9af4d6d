/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen's child processes: exec and function children, stdio on /dev/null or a pipe, the
 * start's errors coming back, the wait's deadline and stop flag, a polite end and a kill of the
 * whole process group, and the environment a child gets.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "load.h"
#include "macro.h"

/* Everything out_fd gives until EOF (the child has ended), NUL-terminated. */
static void read_all(int fd, char *buf, size_t size) {
        size_t len = 0;

        for (;;) {
                ssize_t k = read(fd, buf + len, size - 1 - len);

                if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
                        (void) usleep(1000);
                        continue;
                }
                if (k <= 0 || (len += (size_t) k) == size - 1)
                        break;
        }
        buf[len] = '\0';
}

static int exit_with(void *userdata) {
        return *(int *) userdata;
}

Test(child, function_exit_code_comes_back) {
        int code = 7;
        ChildSpec spec = { .fn = exit_with, .userdata = &code, .pdeathsig = SIGKILL };
        Child c = CHILD_NULL;

        cr_assert_eq(child_spawn(&spec, &c), 0);
        cr_assert_eq(child_wait(&c, UINT64_MAX, NULL), 0);
        cr_expect_eq(c.pid, 0);
        cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 7);
        cr_expect_eq(child_start_error(&c), 0);
        child_done(&c);
}

Test(child, exec_stdout_and_stderr_share_the_pipe) {
        const char *const argv[] = { "sh", "-c", "echo out; echo err >&2", NULL };
        ChildSpec spec = { .argv = argv,
                           .stdin_fd = CHILD_FD_NULL,
                           .stdout_fd = CHILD_FD_PIPE,
                           .stderr_fd = CHILD_FD_PIPE };
        Child c = CHILD_NULL;
        char buf[256];

        cr_assert_eq(child_spawn(&spec, &c), 0);
        cr_assert_geq(c.out_fd, 0);
        read_all(c.out_fd, buf, sizeof buf);
        cr_assert_eq(child_wait(&c, UINT64_MAX, NULL), 0);
        cr_expect_str_eq(buf, "out\nerr\n");
        closep(&c.out_fd);
        child_done(&c);
}

Test(child, stdin_is_dev_null) {
        const char *const argv[] = { "sh", "-c", "cat; echo end", NULL };
        ChildSpec spec = { .argv = argv, .stdin_fd = CHILD_FD_NULL, .stdout_fd = CHILD_FD_PIPE };
        Child c = CHILD_NULL;
        char buf[64];

        cr_assert_eq(child_spawn(&spec, &c), 0);
        read_all(c.out_fd, buf, sizeof buf);
        cr_assert_eq(child_wait(&c, now_usec() + 10 * 1000000ull, NULL), 0);
        cr_expect_str_eq(buf, "end\n");
        closep(&c.out_fd);
        child_done(&c);
}

Test(child, exec_error_comes_back_and_to_stderr) {
        const char *const argv[] = { "no-such-program-for-child-test", NULL };
        ChildSpec spec = { .exec_path = "/nonexistent/prog",
                           .argv = argv,
                           .exec_error_to_stderr = true,
                           .stdout_fd = CHILD_FD_PIPE,
                           .stderr_fd = CHILD_FD_PIPE };
        Child c = CHILD_NULL;
        char buf[256];

        cr_assert_eq(child_spawn(&spec, &c), 0);
        read_all(c.out_fd, buf, sizeof buf);
        cr_assert_eq(child_wait(&c, UINT64_MAX, NULL), 0);
        cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == CHILD_EXIT_EXEC);
        cr_expect_eq(child_start_error(&c), -ENOENT);
        cr_expect_str_eq(
                buf, "loadgen: Failed to execute /nonexistent/prog: No such file or directory\n");
        closep(&c.out_fd);
        child_done(&c);
}

static int fail_setup(void *userdata) {
        (void) userdata;
        return -EPERM;
}

Test(child, setup_error_comes_back) {
        const char *const argv[] = { "true", NULL };
        ChildSpec spec = { .argv = argv, .setup = fail_setup };
        Child c = CHILD_NULL;

        cr_assert_eq(child_spawn(&spec, &c), 0);
        cr_assert_eq(child_wait(&c, UINT64_MAX, NULL), 0);
        cr_expect(WIFEXITED(c.status) && WEXITSTATUS(c.status) == CHILD_EXIT_SETUP);
        cr_expect_eq(child_start_error(&c), -EPERM);
        child_done(&c);
}

Test(child, wait_ends_at_deadline_and_on_stop) {
        const char *const argv[] = { "sleep", "30", NULL };
        ChildSpec spec = { .argv = argv, .pdeathsig = SIGKILL };
        volatile sig_atomic_t stop = 0;
        Child c = CHILD_NULL;
        uint64_t t0;

        cr_assert_eq(child_spawn(&spec, &c), 0);
        t0 = now_usec();
        cr_expect_eq(child_wait(&c, t0 + 100000, &stop), -ETIME);
        cr_expect_geq(now_usec() - t0, 100000u);
        stop = 1;
        cr_expect_eq(child_wait(&c, UINT64_MAX, &stop), -EINTR);
        cr_expect_gt(c.pid, 0, "a stop leaves the child running");
        child_kill(&c);
        cr_expect_eq(c.pid, 0);
        cr_expect(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL);
        child_done(&c);
}

Test(child, terminate_is_polite_first) {
        const char *const polite[] = { "sleep", "30", NULL };
        const char *const deaf[] = { "sh", "-c", "trap '' TERM; echo ready; sleep 30", NULL };
        ChildSpec spec = { .argv = polite };
        Child c = CHILD_NULL;
        char buf[16];

        cr_assert_eq(child_spawn(&spec, &c), 0);
        cr_expect_eq(child_terminate(&c, SIGTERM, 5000000), 0);
        cr_expect(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGTERM);
        child_done(&c);

        spec = (ChildSpec){ .argv = deaf, .stdout_fd = CHILD_FD_PIPE, .new_pgrp = true };
        cr_assert_eq(child_spawn(&spec, &c), 0);
        read_all(c.out_fd, buf, 7); /* "ready\n": the trap is set */
        cr_expect_eq(child_terminate(&c, SIGTERM, 200000), -ETIMEDOUT);
        cr_expect(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL);
        closep(&c.out_fd);
        child_done(&c);
}

Test(child, kill_takes_the_whole_group) {
        /* The shell's sleep holds the pipe: EOF only once the group is gone. */
        const char *const argv[] = { "sh", "-c", "sleep 30 & echo ready; wait", NULL };
        ChildSpec spec = { .argv = argv, .new_pgrp = true, .stdout_fd = CHILD_FD_PIPE };
        Child c = CHILD_NULL;
        char buf[64];
        pid_t pgid;

        cr_assert_eq(child_spawn(&spec, &c), 0);
        pgid = c.pid;
        read_all(c.out_fd, buf, 7);
        child_kill(&c);
        cr_expect_eq(kill(-pgid, 0), -1, "a process of the group outlived the kill");
        cr_expect_eq(errno, ESRCH);
        closep(&c.out_fd);
        child_done(&c);
}

Test(child, environ_drops_and_adds) {
        const char *const drop[] = { "CHILD_TEST_A" };
        _cleanup_free_ char **env = NULL;
        bool a = false, ab = false, added = false;

        cr_assert_eq(setenv("CHILD_TEST_A", "1", 1), 0);
        cr_assert_eq(setenv("CHILD_TEST_AB", "2", 1), 0);
        env = child_environ(drop, 1, "CHILD_TEST_C=3");
        cr_assert_not_null(env);
        for (char **e = env; *e; e++) {
                a = a || !strncmp(*e, "CHILD_TEST_A=", 13);
                ab = ab || streq(*e, "CHILD_TEST_AB=2");
                added = added || streq(*e, "CHILD_TEST_C=3");
        }
        cr_expect(!a, "a dropped variable is still there");
        cr_expect(ab, "a variable whose name only starts like a dropped one went too");
        cr_expect(added);
}
