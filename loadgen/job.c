/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "load.h"
#include "macro.h"

/* Environment variables through which a make running loadgen would reach into the job's make. */
static const char *const make_env[] = { "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "GNUMAKEFLAGS" };

static uint64_t timeval_usec(struct timeval tv) {
        return (uint64_t) tv.tv_sec * 1000000 + (uint64_t) tv.tv_usec;
}

/* Waits for make: 0 once reaped; -EINTR once *stop is set, or wait4()'s error, the group killed
 * and reaped then. */
static int job_wait(Child *c, volatile sig_atomic_t *stop) {
        int r = child_wait(c, UINT64_MAX, stop);

        if (r < 0)
                child_kill(c);
        return r;
}

static char *log_path(const char *dir) {
        char *p = NULL;

        return asprintf(&p, "%s/%s", dir, JOB_LOG_NAME) < 0 ? NULL : p;
}

int job_make(const char *dir, const char *target, unsigned jobs, JobSetup setup, void *userdata,
             volatile sig_atomic_t *stop, JobResult *ret) {
        _cleanup_free_ char **envp = NULL;
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int log_fd = -EBADF;
        char jobs_arg[16];
        const char *argv[] = { "make",   "-C",   dir, "-s", "--no-print-directory",
                               jobs_arg, target, NULL };
        ChildSpec spec = { .argv = argv,
                           .setup = setup,
                           .userdata = userdata,
                           .pdeathsig = SIGKILL,
                           .new_pgrp = true,
                           .reset_all_signals = true,
                           .stdin_fd = CHILD_FD_NULL,
                           .stdout_fd = CHILD_FD_NULL };
        Child c = CHILD_NULL;
        uint64_t start, end;
        int e, r;

        if (!dir || !ret)
                return -EINVAL;
        if (stop && *stop)
                return -EINTR;
        if (jobs > 0)
                (void) snprintf(jobs_arg, sizeof(jobs_arg), "-j%u", jobs);
        else
                (void) snprintf(jobs_arg, sizeof(jobs_arg), "-j");
        envp = child_environ(make_env, ELEMENTSOF(make_env), NULL);
        path = log_path(dir);
        if (!envp || !path)
                return -ENOMEM;
        spec.envp = envp;
        log_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
        if (log_fd < 0)
                return negative_errno();
        spec.stderr_fd = log_fd;

        start = now_usec();
        r = child_spawn(&spec, &c);
        if (r < 0)
                return r;
        r = job_wait(&c, stop);
        end = now_usec();
        e = child_start_error(&c);
        child_done(&c);
        if (r < 0)
                return r;
        if (e < 0)
                return e; /* setup or exec failed: make never ran */
        *ret = (JobResult){
                .elapsed_usec = end - start,
                .user_usec = timeval_usec(c.ru.ru_utime),
                .sys_usec = timeval_usec(c.ru.ru_stime),
                .vol_ctxsw = (uint64_t) c.ru.ru_nvcsw,
                .invol_ctxsw = (uint64_t) c.ru.ru_nivcsw,
                .exit_status = c.status,
        };
        return 0;
}

/* The last JOB_ERROR_LINES lines of buf (len bytes, NUL-terminated), without trailing space. */
static char *tail_lines(char *buf, size_t len, bool partial_first_line) {
        char *start = buf, *p;
        unsigned lines = 0;

        if (partial_first_line) {
                char *nl = memchr(buf, '\n', len);

                if (nl)
                        start = nl + 1;
        }
        p = buf + len;
        while (p > start && (p[-1] == '\n' || p[-1] == '\r' || p[-1] == ' ' || p[-1] == '\t'))
                *--p = '\0';
        for (char *q = p; q > start; q--)
                if (q[-1] == '\n' && ++lines == JOB_ERROR_LINES) {
                        start = q;
                        break;
                }
        return *start ? strdup(start) : NULL;
}

char *job_last_errors(const char *dir) {
        _cleanup_free_ char *path = dir ? log_path(dir) : NULL;
        char buf[JOB_ERROR_BYTES + 1];
        _cleanup_close_ int fd = -EBADF;
        size_t len = 0;
        struct stat st;
        off_t off;

        if (!path)
                return NULL;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0 || fstat(fd, &st) < 0)
                return NULL;
        off = st.st_size > (off_t) JOB_ERROR_BYTES ? st.st_size - (off_t) JOB_ERROR_BYTES : 0;
        while (len < JOB_ERROR_BYTES) {
                ssize_t n = pread(fd, buf + len, JOB_ERROR_BYTES - len, off + (off_t) len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        /* A NUL in the log would cut the message short, not overrun: strdup stops there. */
        return tail_lines(buf, strnlen(buf, len), off > 0);
}
