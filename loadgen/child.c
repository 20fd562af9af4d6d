/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"

#define REAP_TIMEOUT_USEC 5000000u /* a killed group that is not gone by then never will be */

extern char **environ;

/* What the child side needs, all made before the fork; every descriptor above stderr, so no
 * dup2() onto 0, 1 or 2 clobbers another. */
typedef struct Start {
        const ChildSpec *spec;
        pid_t parent;
        int fds[3]; /* what becomes stdin, stdout, stderr; -EBADF: inherit */
        int err_fd;
} Start;

_Noreturn static void start_fail(const Start *s, int error, int code) {
        (void) !write(s->err_fd, &error, sizeof(error));
        _exit(code);
}

/* strerror() is not async-signal-safe: the few errors exec gives, by hand. */
static const char *exec_error_text(int e) {
        switch (e) {
        case ENOENT: return "No such file or directory";
        case EACCES: return "Permission denied";
        case ENOEXEC: return "Exec format error";
        case ENOMEM: return "Cannot allocate memory";
        default: return "exec failed";
        }
}

static void write_str(int fd, const char *s) {
        (void) !write(fd, s, strlen(s));
}

/* Between fork() and exec: async-signal-safe calls only. */
_Noreturn static void child_main(const Start *s) {
        const ChildSpec *sp = s->spec;
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        sigset_t none;
        int r, e;

        if (sp->new_pgrp && setpgid(0, 0) < 0)
                start_fail(s, negative_errno(), CHILD_EXIT_SETUP);
        if (sp->pdeathsig > 0 && prctl(PR_SET_PDEATHSIG, sp->pdeathsig) < 0)
                start_fail(s, negative_errno(), CHILD_EXIT_SETUP);
        if (sp->pdeathsig > 0 && getppid() != s->parent)
                _exit(CHILD_EXIT_SETUP); /* loadgen died before the death signal was armed */
        /* Ignored signals and the mask survive exec: a SIGCHLD ignored here would break make. */
        for (int sig = 1; sig < NSIG; sig++)
                if (sp->reset_all_signals ? sig != SIGKILL && sig != SIGSTOP
                                          : sig == SIGINT || sig == SIGTERM)
                        (void) sigaction(sig, &dfl, NULL); /* glibc's own signals: EINVAL */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        for (int i = 0; i < 3; i++)
                if (s->fds[i] >= 0 && dup2(s->fds[i], i) < 0)
                        start_fail(s, negative_errno(), CHILD_EXIT_SETUP);
        if (!sp->argv && !sp->exec_path)
                _exit(sp->fn(sp->userdata));
        if (sp->setup) {
                r = sp->setup(sp->userdata);
                if (r < 0)
                        start_fail(s, r, CHILD_EXIT_SETUP);
        }
        if (sp->exec_path)
                execve(sp->exec_path, (char *const *) sp->argv, sp->envp ? sp->envp : environ);
        else
                execvpe(sp->argv[0], (char *const *) sp->argv, sp->envp ? sp->envp : environ);
        e = errno;
        if (sp->exec_error_to_stderr) {
                write_str(STDERR_FILENO, "loadgen: Failed to execute ");
                write_str(STDERR_FILENO, sp->exec_path ? sp->exec_path : sp->argv[0]);
                write_str(STDERR_FILENO, ": ");
                write_str(STDERR_FILENO, exec_error_text(e));
                write_str(STDERR_FILENO, "\n");
        }
        start_fail(s, -e, CHILD_EXIT_EXEC);
}

/* A close-on-exec copy of fd above stderr: 0 with it in *ret, or -errno. */
static int dup_above_stdio(int fd, int *ret) {
        int copy = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);

        if (copy < 0)
                return negative_errno();
        *ret = copy;
        return 0;
}

static void close_start(Start *s) {
        for (int i = 0; i < 3; i++)
                closep(&s->fds[i]);
        closep(&s->err_fd);
}

/* The parent's side before the fork: every descriptor the child will dup2(). */
static int prepare(const ChildSpec *sp, Start *s, int *pipe_rd, int *err_rd) {
        const int want[3] = { sp->stdin_fd, sp->stdout_fd, sp->stderr_fd };
        int null_fd = -EBADF, pipe_wr = -EBADF, fds[2], r = 0;

        for (int i = 0; i < 3 && r == 0; i++) {
                int w = want[i] == 0 && i > 0 ? CHILD_FD_INHERIT : want[i];

                if (w == CHILD_FD_INHERIT || (i == 0 && w == 0))
                        continue;
                if (w == CHILD_FD_NULL) {
                        if (null_fd < 0)
                                null_fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
                        r = null_fd < 0 ? negative_errno() : dup_above_stdio(null_fd, &s->fds[i]);
                } else if (w == CHILD_FD_PIPE) {
                        if (pipe_wr < 0) {
                                if (pipe2(fds, O_CLOEXEC) < 0) {
                                        r = negative_errno();
                                        break;
                                }
                                *pipe_rd = fds[0];
                                pipe_wr = fds[1];
                                (void) fcntl(*pipe_rd, F_SETFL, O_NONBLOCK);
                        }
                        r = dup_above_stdio(pipe_wr, &s->fds[i]);
                } else
                        r = dup_above_stdio(w, &s->fds[i]);
        }
        closep(&null_fd);
        closep(&pipe_wr);
        /* Non-blocking: a child another thread forked meanwhile may hold the write end. */
        if (r == 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) < 0)
                r = negative_errno();
        if (r == 0) {
                *err_rd = fds[0];
                r = dup_above_stdio(fds[1], &s->err_fd);
                (void) close(fds[1]);
        }
        return r;
}

int child_spawn(const ChildSpec *spec, Child *ret) {
        Start s = { .spec = spec,
                    .parent = getpid(),
                    .fds = { -EBADF, -EBADF, -EBADF },
                    .err_fd = -EBADF };
        _cleanup_close_ int pipe_rd = -EBADF, err_rd = -EBADF;
        pid_t pid;
        int r;

        if (!spec || !ret || (!spec->argv && !spec->fn) || (spec->argv && !spec->argv[0]))
                return -EINVAL;
        r = prepare(spec, &s, &pipe_rd, &err_rd);
        if (r < 0) {
                close_start(&s);
                return r;
        }
        pid = fork();
        if (pid < 0) {
                r = negative_errno();
                close_start(&s);
                return r;
        }
        if (pid == 0)
                child_main(&s);
        if (spec->new_pgrp) /* both sides set the group, so it exists whichever runs first */
                (void) setpgid(pid, pid);
        close_start(&s);
        *ret = (Child){
                .pid = pid,
                .out_fd = TAKE_FD(pipe_rd),
                .err_fd = TAKE_FD(err_rd),
                .pidfd = (int) syscall(SYS_pidfd_open, pid, 0),
                .pgrp = spec->new_pgrp,
        };
        if (ret->pidfd < 0)
                ret->pidfd = -EBADF;
        return 0;
}

bool child_reap(Child *c) {
        pid_t p;

        if (c->pid <= 0)
                return true;
        p = wait4(c->pid, &c->status, WNOHANG, &c->ru);
        if (p == c->pid)
                c->pid = 0;
        else if (p < 0 && errno == ECHILD) {
                c->pid = 0;
                c->status = W_EXITCODE(EXIT_FAILURE, 0);
        }
        return c->pid == 0;
}

int child_wait(Child *c, uint64_t deadline_usec, volatile sig_atomic_t *stop) {
        for (;;) {
                int msec = CHILD_POLL_MSEC;
                pid_t w;
                uint64_t now;

                if (c->pid <= 0)
                        return 0;
                w = wait4(c->pid, &c->status, WNOHANG, &c->ru);
                if (w == c->pid) {
                        c->pid = 0;
                        return 0;
                }
                if (w < 0 && errno != EINTR)
                        return negative_errno();
                if (stop && *stop)
                        return -EINTR;
                now = now_usec();
                if (now >= deadline_usec)
                        return -ETIME;
                if (deadline_usec - now < (uint64_t) msec * 1000)
                        msec = (int) ((deadline_usec - now + 999) / 1000);
                /* The pidfd wakes us the moment it exits, a signal at once (EINTR). */
                if (c->pidfd >= 0)
                        (void) poll(&(struct pollfd){ .fd = c->pidfd, .events = POLLIN }, 1, msec);
                else /* no pidfd_open() (kernel < 5.3, seccomp): look every ms */
                        (void) usleep(1000);
        }
}

int child_signal(const Child *c, int sig) {
        if (c->pid <= 0)
                return -ESRCH;
        return kill(c->pid, sig) < 0 ? negative_errno() : 0;
}

/* Reaps every process left in group pgid: they were reparented to us, a subreaper meanwhile,
 * and once waitpid(-pgid) finds no child of ours left in it, no process of it is left at all. */
static void reap_group(pid_t pgid) {
        uint64_t deadline = now_usec() + REAP_TIMEOUT_USEC;

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
}

void child_kill(Child *c) {
        int was_subreaper = 0;
        bool set;
        pid_t pid = c->pid;

        if (pid <= 0)
                return;
        set = c->pgrp && prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper) == 0 && !was_subreaper &&
              prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
        if (c->pgrp)
                (void) kill(-pid, SIGKILL);
        (void) kill(pid, SIGKILL); /* in case it never got into its group */
        while (wait4(pid, &c->status, 0, &c->ru) < 0 && errno == EINTR)
                ;
        c->pid = 0;
        if (c->pgrp)
                reap_group(pid);
        if (set)
                (void) prctl(PR_SET_CHILD_SUBREAPER, 0);
}

int child_terminate(Child *c, int sig, uint64_t grace_usec) {
        int r;

        if (c->pid <= 0)
                return 0;
        (void) child_signal(c, sig);
        r = child_wait(c, now_usec() + grace_usec, NULL);
        if (r == 0)
                return 0;
        child_kill(c);
        return -ETIMEDOUT;
}

int child_start_error(const Child *c) {
        int e;

        if (c->err_fd >= 0 && read(c->err_fd, &e, sizeof(e)) == (ssize_t) sizeof(e) && e < 0)
                return e;
        return 0;
}

void child_done(Child *c) {
        child_kill(c);
        closep(&c->err_fd);
        closep(&c->pidfd);
        c->err_fd = c->pidfd = -EBADF;
}

char **child_environ(const char *const *drop, size_t n_drop, const char *add) {
        size_t n = 0, k = 0;
        char **envp;

        while (environ && environ[n])
                n++;
        envp = calloc(n + 2, sizeof(char *));
        if (!envp)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                bool skip = false;

                for (size_t j = 0; j < n_drop && !skip; j++) {
                        size_t len = strlen(drop[j]);

                        skip = strncmp(environ[i], drop[j], len) == 0 && environ[i][len] == '=';
                }
                if (!skip)
                        envp[k++] = environ[i];
        }
        if (add)
                envp[k++] = (char *) add;
        return envp;
}
