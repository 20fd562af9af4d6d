/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "macro.h"

#define STOP_TIMEOUT_USEC (10 * 1000000u)

/* What the load's process and the harness share. */
typedef struct Shared {
        _Atomic uint64_t progress;
        int error; /* run()'s return, or sandbox_enter()'s */
        LoadResult result;
} Shared;

struct LoadRun {
        const Load *load;
        const Sandbox *sb;
        Shared *shared;
        pid_t pid; /* 0 once reaped */
        int status;
        struct rusage ru;
};

_Noreturn static void child_main(const Load *l, const LoadOptions *opts, const Sandbox *sb,
                                 pid_t parent, int ready_fd, Shared *sh) {
        LoadOptions o = *opts;
        sigset_t none;
        int r;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(1);
        cli_stop_rearm(); /* no SA_RESTART: the load's sleeps and waits return at once */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        r = sandbox_enter(sb, SANDBOX_LOAD);
        if (r >= 0) {
                o.stop = &cli_stop;
                o.progress = &sh->progress;
                o.ready_fd = ready_fd;
                r = l->run(&o, &sh->result);
        }
        sh->error = r;
        _exit(r < 0 ? 1 : 0);
}

/* Reaps the load if it has ended (or, block, once it does). True once reaped. */
static bool reap(LoadRun *r, bool block) {
        siginfo_t si = { 0 };
        int e;

        if (r->pid == 0)
                return true;
        /* WNOWAIT: the zombie keeps its PID, so the process group cannot be reused meanwhile. */
        do
                e = waitid(P_PID, (id_t) r->pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG));
        while (e < 0 && errno == EINTR);
        if (e < 0 || si.si_pid == 0)
                return e < 0 && errno == ECHILD; /* ECHILD: not ours any more; nothing to wait */
        /* Whatever the load forked and left in its process group goes with it. */
        (void) kill(-r->pid, SIGKILL);
        while (wait4(r->pid, &r->status, 0, &r->ru) < 0 && errno == EINTR)
                ;
        r->pid = 0;
        return true;
}

/* Waits for the ready byte: 0, -EINTR if *stop is set first, or the load's error. */
static int wait_ready(LoadRun *r, int fd, volatile sig_atomic_t *stop) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char c;

        for (;;) {
                if (stop && *stop)
                        return -EINTR;
                if (poll(&p, 1, 100) <= 0)
                        continue; /* timeout or EINTR: look at *stop again */
                if (read(fd, &c, 1) == 1)
                        return 0;
                /* EOF: the load ended before it was ready */
                (void) reap(r, /* block= */ true);
                if (r->shared->error < 0)
                        return r->shared->error;
                return stop && *stop ? -EINTR : -EIO;
        }
}

int load_run_start(const Load *l, const LoadOptions *o, const Sandbox *sb,
                   volatile sig_atomic_t *stop, LoadRun **ret) {
        _cleanup_load_run_ LoadRun *r = NULL;
        _cleanup_close_ int rd = -EBADF, wr = -EBADF;
        int pipefd[2], e;
        pid_t parent = getpid();

        r = calloc(1, sizeof *r);
        if (!r)
                return -ENOMEM;
        *r = (LoadRun){ .load = l, .sb = sb };
        r->shared = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                         -1, 0);
        if (r->shared == MAP_FAILED) {
                r->shared = NULL;
                return negative_errno();
        }
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        rd = pipefd[0];
        wr = pipefd[1];
        r->pid = fork();
        if (r->pid < 0) {
                r->pid = 0;
                return negative_errno();
        }
        if (r->pid == 0) {
                (void) setpgid(0, 0);
                child_main(l, o, sb, parent, wr, r->shared);
        }
        (void) setpgid(r->pid, r->pid); /* both sides: no race with a kill(-pid) */
        wr = (close(wr), -EBADF);
        e = wait_ready(r, rd, stop);
        if (e < 0)
                return e;
        *ret = TAKE_PTR(r);
        return 0;
}

uint64_t load_run_progress(const LoadRun *r) {
        return atomic_load_explicit(&r->shared->progress, memory_order_relaxed);
}

int load_run_cpu_usec(const LoadRun *r, uint64_t *ret) {
        return sandbox_cpu_usec(r->sb, SANDBOX_LOAD, ret);
}

bool load_run_finished(LoadRun *r) {
        return reap(r, /* block= */ false);
}

int load_run_stop(LoadRun *r, LoadResult *ret, uint64_t *ret_cpu_usec) {
        uint64_t deadline = now_usec() + STOP_TIMEOUT_USEC;

        if (r->pid > 0)
                (void) kill(r->pid, SIGTERM);
        while (!reap(r, /* block= */ false)) {
                if (now_usec() >= deadline) {
                        (void) kill(-r->pid, SIGKILL);
                        (void) reap(r, /* block= */ true);
                        return -ETIMEDOUT;
                }
                usleep(10000);
        }
        if (!WIFEXITED(r->status) || WEXITSTATUS(r->status) != 0)
                return r->shared->error < 0 ? r->shared->error : -ECHILD;
        *ret = r->shared->result;
        *ret_cpu_usec = (uint64_t) (r->ru.ru_utime.tv_sec + r->ru.ru_stime.tv_sec) * 1000000 +
                        (uint64_t) (r->ru.ru_utime.tv_usec + r->ru.ru_stime.tv_usec);
        return 0;
}

LoadRun *load_run_free(LoadRun *r) {
        if (!r)
                return NULL;
        if (r->pid > 0) {
                (void) kill(-r->pid, SIGKILL);
                (void) kill(r->pid, SIGKILL);
                (void) reap(r, /* block= */ true);
        }
        if (r->shared)
                (void) munmap(r->shared, sizeof(Shared));
        return mfree(r);
}
