/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "load.h"
#include "macro.h"

#define RING_SIZE 4u /* members per ring; one token in each */
#define STOP_GRACE_USEC 1000000u
#define HOPS_PER_UPDATE 256u /* a shared counter bumped every hop would bounce between CPUs */

/* One ring member: read a token from in, pass it to out, count the hop. SIGTERM is blocked except
 * inside ppoll(), so a stop request can never slip in between the check and a blocking read. */
_Noreturn static void ring_member(const LoadOptions *o, int in, int out) {
        struct pollfd p = { .fd = in, .events = POLLIN };
        sigset_t block, wait_mask;
        uint64_t hops = 0;
        char token;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigemptyset(&block);
        sigaddset(&block, SIGTERM);
        sigaddset(&block, SIGINT);
        (void) sigprocmask(SIG_BLOCK, &block, &wait_mask);
        sigdelset(&wait_mask, SIGTERM);
        sigdelset(&wait_mask, SIGINT);
        cli_stop_rearm();

        while (!cli_stop) {
                if (ppoll(&p, 1, NULL, &wait_mask) <= 0)
                        continue; /* EINTR: cli_stop is set */
                if (read(in, &token, 1) != 1)
                        continue; /* spurious wakeup (EAGAIN): poll again */
                if (write(out, &token, 1) == 1 && ++hops == HOPS_PER_UPDATE) {
                        load_progress_add(o, hops);
                        hops = 0;
                }
        }
        load_progress_add(o, hops);
        _exit(0);
}

static void close_all(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (fds[i] >= 0)
                        fds[i] = (close(fds[i]), -EBADF);
}

/* SIGTERM every member, wait up to the grace, then SIGKILL and reap the rest. */
static void stop_members(pid_t *pids, size_t n) {
        uint64_t deadline = now_usec() + STOP_GRACE_USEC;
        size_t left = 0;

        for (size_t i = 0; i < n; i++)
                if (pids[i] > 0) {
                        (void) kill(pids[i], SIGTERM);
                        left++;
                }
        while (left > 0) {
                for (size_t i = 0; i < n; i++)
                        if (pids[i] > 0 && waitpid(pids[i], NULL, WNOHANG) != 0) {
                                pids[i] = 0; /* reaped, or not ours (ECHILD) */
                                left--;
                        }
                if (left == 0)
                        break;
                if (now_usec() >= deadline) {
                        for (size_t i = 0; i < n; i++)
                                if (pids[i] > 0) {
                                        (void) kill(pids[i], SIGKILL);
                                        (void) waitpid(pids[i], NULL, 0);
                                        pids[i] = 0;
                                }
                        break;
                }
                usleep(1000);
        }
}

int process_load_run(const LoadOptions *o, LoadResult *ret) {
        size_t n = RING_SIZE * (size_t) MAX(o->ncpus, 1u), started = 0;
        _cleanup_free_ int *ring = calloc(2 * n, sizeof(int));
        _cleanup_free_ pid_t *pids = calloc(n, sizeof(pid_t));
        uint64_t start, deadline;
        int r = 0;

        if (!ring || !pids)
                return -ENOMEM;
        for (size_t i = 0; i < 2 * n; i++)
                ring[i] = -EBADF;
        for (size_t i = 0; i < n; i++)
                if (pipe2(&ring[2 * i], O_CLOEXEC | O_NONBLOCK) < 0) {
                        r = negative_errno();
                        goto out;
                }
        /* ncpus rings of RING_SIZE, one token each: member i reads pipe i and writes the next
         * member's pipe in its own ring. Several tokens in one ring catch each other up and
         * travel as a clump (a member forwards all it finds before it sleeps), which made a
         * single ring of 4 x ncpus keep one CPU busy: 0.10x the switches of stress-ng --switch. */
        for (size_t first = 0; first < n; first += RING_SIZE)
                if (write(ring[2 * first + 1], "t", 1) != 1) {
                        r = negative_errno();
                        goto out;
                }

        for (; started < n; started++) {
                pid_t pid = fork();

                if (pid < 0) {
                        r = negative_errno();
                        goto out;
                }
                if (pid == 0) {
                        size_t first = started / RING_SIZE * RING_SIZE;
                        size_t next = first + (started - first + 1) % RING_SIZE;

                        ring_member(o, ring[2 * started], ring[2 * next + 1]);
                }
                pids[started] = pid;
        }
        close_all(ring, 2 * n);

        deadline = load_ready(o);
        start = now_usec();
        while (!load_should_stop(o, deadline))
                load_nap(deadline, 100000);

        stop_members(pids, started); /* each adds its last hops as it exits */
        load_result(o, start, ret);
out:
        stop_members(pids, started);
        close_all(ring, 2 * n);
        return r;
}
