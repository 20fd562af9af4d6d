/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"

#define JOB_POLL_MSEC 50 /* how soon a stop flag set by another thread is seen */
#define REAP_TIMEOUT_USEC 5000000u /* a killed group that is not gone by then never will be */

extern char **environ;

/* Environment variables through which a make running loadgen would reach into the job's make. */
static const char *const make_env[] = { "MAKEFLAGS=", "MFLAGS=", "MAKELEVEL=", "GNUMAKEFLAGS=" };

typedef struct Child {
        pid_t parent;
        const char *const *argv;
        char *const *envp;
        int null_fd, log_fd, err_fd; /* all above stderr, so no dup2() clobbers another */
        JobSetup setup;
        void *userdata;
} Child;

static uint64_t timeval_usec(struct timeval tv) {
        return (uint64_t) tv.tv_sec * 1000000 + (uint64_t) tv.tv_usec;
}

/* A copy of environ's pointers without make_env: built before fork(), as the child may not
 * allocate. */
static char **job_environ(void) {
        size_t n = 0, k = 0;
        char **envp;

        while (environ && environ[n])
                n++;
        envp = calloc(n + 1, sizeof(char *));
        if (!envp)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                bool drop = false;

                for (size_t j = 0; j < ELEMENTSOF(make_env); j++)
                        drop = drop || strncmp(environ[i], make_env[j], strlen(make_env[j])) == 0;
                if (!drop)
                        envp[k++] = environ[i];
        }
        return envp;
}

/* For the result of an open(): fd itself if above stderr, else a close-on-exec copy that is (fd
 * closed); a negative errno if the open failed. */
static int fd_above_stdio(int fd) {
        int copy;

        if (fd < 0)
                return negative_errno();
        if (fd > STDERR_FILENO)
                return fd;
        copy = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
        if (copy < 0)
                copy = negative_errno();
        (void) close(fd);
        return copy;
}

_Noreturn static void child_fail(const Child *c, int error, int code) {
        (void) !write(c->err_fd, &error, sizeof(error));
        _exit(code);
}

/* Between fork() and exec: async-signal-safe calls only. */
_Noreturn static void job_child(const Child *c) {
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t none;
        int r;

        if (setpgid(0, 0) < 0)
                child_fail(c, negative_errno(), 126);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                child_fail(c, negative_errno(), 126);
        if (getppid() != c->parent)
                _exit(126); /* the parent died before PDEATHSIG was armed */
        /* Ignored signals and the mask survive exec: a SIGCHLD ignored here would break make. */
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) sigaction(sig, &dfl, NULL); /* glibc's own signals: EINVAL */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        if (dup2(c->null_fd, STDIN_FILENO) < 0 || dup2(c->null_fd, STDOUT_FILENO) < 0 ||
            dup2(c->log_fd, STDERR_FILENO) < 0)
                child_fail(c, negative_errno(), 126);
        if (c->setup) {
                r = c->setup(c->userdata);
                if (r < 0)
                        child_fail(c, r, 126);
        }
        execvpe(c->argv[0], (char *const *) c->argv, c->envp);
        child_fail(c, negative_errno(), 127);
}

/*
 * SIGKILLs the group and reaps make, then every process of the group: make's orphans are
 * reparented to us since we are a subreaper by then, and once waitpid(-pgid) finds no child of
 * ours left in the group, no process of the group is left at all.
 */
static void kill_group(pid_t pgid) {
        int was_subreaper = 0;
        bool set = prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper) == 0 && !was_subreaper &&
                   prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
        uint64_t deadline;

        (void) kill(-pgid, SIGKILL);
        (void) kill(pgid, SIGKILL); /* in case it never got into its group */
        while (waitpid(pgid, NULL, 0) < 0 && errno == EINTR)
                ;
        deadline = now_usec() + REAP_TIMEOUT_USEC;
        for (;;) {
                pid_t w = waitpid(-pgid, NULL, WNOHANG);

                if (w > 0)
                        continue;
                if (w < 0 && errno != EINTR)
                        break; /* ECHILD: the group is gone */
                if (now_usec() >= deadline)
                        break;
                (void) usleep(1000);
        }
        if (set)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 0);
}

/* Waits for make: 0 with its status and rusage, -EINTR once *stop is set (the group killed and
 * reaped), or wait4()'s error (the same). */
static int job_wait(pid_t pid, volatile sig_atomic_t *stop, int *ret_status,
                    struct rusage *ret_ru) {
        _cleanup_close_ int pidfd = (int) syscall(SYS_pidfd_open, pid, 0);

        for (;;) {
                pid_t w = wait4(pid, ret_status, WNOHANG, ret_ru);

                if (w == pid)
                        return 0;
                if (w < 0 && errno != EINTR) {
                        int r = negative_errno();

                        kill_group(pid);
                        return r;
                }
                if (stop && *stop) {
                        kill_group(pid);
                        return -EINTR;
                }
                /* The pidfd wakes us the moment make exits, a signal at once (EINTR). */
                if (pidfd >= 0)
                        (void) poll(&(struct pollfd){ .fd = pidfd, .events = POLLIN }, 1,
                                    JOB_POLL_MSEC);
                else /* no pidfd_open() (kernel < 5.3, seccomp): look every ms */
                        (void) usleep(1000);
        }
}

static char *log_path(const char *dir) {
        char *p = NULL;

        return asprintf(&p, "%s/%s", dir, JOB_LOG_NAME) < 0 ? NULL : p;
}

static int open_fds(const char *dir, Child *c, int *ret_err_rd) {
        _cleanup_free_ char *path = log_path(dir);
        int fds[2];

        if (!path)
                return -ENOMEM;
        c->log_fd = fd_above_stdio(
                open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644));
        if (c->log_fd < 0)
                return c->log_fd;
        c->null_fd = fd_above_stdio(open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY));
        if (c->null_fd < 0)
                return c->null_fd;
        /* Non-blocking: a child another thread forked meanwhile may hold the write end. */
        if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
                return negative_errno();
        *ret_err_rd = fds[0];
        c->err_fd = fd_above_stdio(fds[1]);
        return c->err_fd < 0 ? c->err_fd : 0;
}

static void close_fds(Child *c) {
        closep(&c->log_fd);
        closep(&c->null_fd);
        closep(&c->err_fd);
        c->log_fd = c->null_fd = c->err_fd = -EBADF;
}

int job_make(const char *dir, const char *target, unsigned jobs, JobSetup setup, void *userdata,
             volatile sig_atomic_t *stop, JobResult *ret) {
        _cleanup_free_ char **envp = NULL;
        _cleanup_close_ int err_rd = -EBADF;
        char jobs_arg[16];
        const char *argv[] = { "make",   "-C",   dir, "-s", "--no-print-directory",
                               jobs_arg, target, NULL };
        Child c = { .parent = getpid(),
                    .argv = argv,
                    .setup = setup,
                    .userdata = userdata,
                    .null_fd = -EBADF,
                    .log_fd = -EBADF,
                    .err_fd = -EBADF };
        struct rusage ru;
        uint64_t start, end;
        int status, e, r;
        pid_t pid;

        if (!dir || !ret)
                return -EINVAL;
        if (stop && *stop)
                return -EINTR;
        if (jobs > 0)
                (void) snprintf(jobs_arg, sizeof(jobs_arg), "-j%u", jobs);
        else
                (void) snprintf(jobs_arg, sizeof(jobs_arg), "-j");
        envp = job_environ();
        if (!envp)
                return -ENOMEM;
        c.envp = envp;
        r = open_fds(dir, &c, &err_rd);
        if (r < 0) {
                close_fds(&c);
                return r;
        }

        start = now_usec();
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                close_fds(&c);
                return r;
        }
        if (pid == 0)
                job_child(&c);
        /* Both sides set the group, so it exists whichever runs first: stop may come at once. */
        (void) setpgid(pid, pid);
        close_fds(&c);

        r = job_wait(pid, stop, &status, &ru);
        end = now_usec();
        if (r < 0)
                return r;
        if (read(err_rd, &e, sizeof(e)) == (ssize_t) sizeof(e) && e < 0)
                return e; /* setup or exec failed: make never ran */
        *ret = (JobResult){
                .elapsed_usec = end - start,
                .user_usec = timeval_usec(ru.ru_utime),
                .sys_usec = timeval_usec(ru.ru_stime),
                .vol_ctxsw = (uint64_t) ru.ru_nvcsw,
                .invol_ctxsw = (uint64_t) ru.ru_nivcsw,
                .exit_status = status,
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
