/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* starve-load: the two sides of tests/starve/starve.sh, kept apart from loadgen so the experiment
 * can vary what loadgen's process_load fixes (threads, ring count and size, SCHED_BATCH).
 *
 *   starve-load burn SECS
 *       One busy loop for SECS s. Prints "loops CPU_USEC DELAY_USEC NIVCSW": chunks of work done,
 *       CPU time the kernel charged it (/proc/self/schedstat sum_exec_runtime, interrupts it
 *       suffered included), time it waited runnable (run_delay) and involuntary switches.
 *   starve-load ring SECS RINGS SIZE proc|thread [batch]
 *       RINGS rings of SIZE members passing one token each through pipes (process_load's shape
 *       with RINGS = 2, SIZE = 4, proc) for SECS s or until SIGTERM; batch makes every member
 *       SCHED_BATCH, which the kernel never lets preempt a running task at wake-up. Prints
 *       "hops CPU_USEC DELAY_USEC USEC": tokens passed, the members' CPU time and run_delay,
 *       and how long the rings ran, counted from SIGUSR1 if it came (else from the start).
 *
 * Built by starve.sh with cc; no dependency on the project's library. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_MEMBERS 64
#define SLOT 8 /* uint64_t per member: one cache line each, so counting never bounces */
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static volatile sig_atomic_t stop, mark;

static void on_signal(int sig) {
        if (sig == SIGTERM)
                stop = 1;
        else
                mark = 1;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* Adds the first two fields of a schedstat file (ns on CPU, ns waiting) to *cpu and *delay. */
static int schedstat_add(const char *path, uint64_t *cpu, uint64_t *delay) {
        unsigned long long c, d;
        FILE *f = fopen(path, "re");
        int n;

        if (!f)
                return -errno;
        n = fscanf(f, "%llu %llu", &c, &d);
        fclose(f);
        if (n != 2)
                return -EIO;
        *cpu += c;
        *delay += d;
        return 0;
}

static int burn(double secs) {
        uint64_t end = now_usec() + (uint64_t) (secs * 1e6), loops = 0, cpu = 0, delay = 0;
        volatile unsigned long x = 0;
        struct rusage ru;

        do {
                for (int i = 0; i < 100000; i++)
                        x += (unsigned long) i;
                loops++;
        } while (now_usec() < end);
        if (schedstat_add("/proc/self/schedstat", &cpu, &delay) < 0 ||
            getrusage(RUSAGE_SELF, &ru) < 0) {
                perror("starve-load burn: reading its own schedstat");
                return 1;
        }
        printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %ld\n", loops, cpu / 1000, delay / 1000,
               ru.ru_nivcsw);
        return 0;
}

struct member {
        int in, out;
        volatile uint64_t *hops;
        volatile pid_t tid; /* for its schedstat: set by the member itself */
};

static void *member_run(void *arg) {
        struct member *m = arg;
        uint64_t n = 0;
        char c;

        m->tid = gettid();
        for (;;) {
                if (read(m->in, &c, 1) != 1)
                        return NULL;
                if (write(m->out, &c, 1) != 1)
                        return NULL;
                *m->hops = ++n;
        }
}

/* Adds up the members' hops, CPU time and run_delay (ns) so far. */
static void sum_members(const struct member *members, const pid_t *pids, int total, int threads,
                        volatile uint64_t *slots, uint64_t *hops, uint64_t *cpu, uint64_t *delay) {
        char path[64];

        *hops = *cpu = *delay = 0;
        for (int i = 0; i < total; i++) {
                if (threads)
                        snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat",
                                 (int) members[i].tid);
                else
                        snprintf(path, sizeof(path), "/proc/%d/schedstat", (int) pids[i]);
                (void) schedstat_add(path, cpu, delay);
                *hops += slots[i * SLOT];
        }
}

static int ring(double secs, int rings, int size, int threads, int batch) {
        int total = rings * size, fds[MAX_MEMBERS][2];
        struct member members[MAX_MEMBERS];
        pid_t pids[MAX_MEMBERS] = { 0 };
        pthread_t tid;
        uint64_t hops = 0, cpu = 0, delay = 0, start = now_usec(), end;
        uint64_t hops0 = 0, cpu0 = 0, delay0 = 0;
        struct sigaction sa = { .sa_handler = on_signal };
        volatile uint64_t *slots;

        if (rings < 1 || size < 2 || total > MAX_MEMBERS) {
                fprintf(stderr, "starve-load ring: want 1.. rings of 2.. members, at most %d\n",
                        MAX_MEMBERS);
                return 2;
        }
        if (batch) {
                struct sched_param sp = { .sched_priority = 0 };

                if (sched_setscheduler(0, SCHED_BATCH, &sp) < 0) {
                        perror("starve-load ring: SCHED_BATCH");
                        return 1;
                }
        }
        slots = mmap(NULL, (size_t) total * SLOT * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (slots == MAP_FAILED) {
                perror("starve-load ring: mmap");
                return 1;
        }
        for (int i = 0; i < total; i++)
                if (pipe(fds[i]) < 0) {
                        perror("starve-load ring: pipe");
                        return 1;
                }
        for (int i = 0; i < total; i++) {
                int first = i / size * size;

                members[i] = (struct member){ .in = fds[i][0],
                                              .out = fds[first + (i - first + 1) % size][1],
                                              .hops = &slots[i * SLOT] };
        }
        for (int r = 0; r < rings; r++)
                if (write(fds[r * size][1], "t", 1) != 1) {
                        perror("starve-load ring: the token");
                        return 1;
                }
        for (int i = 0; i < total; i++) {
                if (threads) {
                        errno = pthread_create(&tid, NULL, member_run, &members[i]);
                        if (errno != 0) {
                                perror("starve-load ring: pthread_create");
                                return 1;
                        }
                        continue;
                }
                pids[i] = fork();
                if (pids[i] < 0) {
                        perror("starve-load ring: fork");
                        return 1;
                }
                if (pids[i] == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        member_run(&members[i]);
                        _exit(0);
                }
        }
        /* No SA_RESTART: SIGTERM ends the sleep at once. Installed after the fork: a member
         * has SIGTERM's default action, and dies with its ring. */
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGUSR1, &sa, NULL);
        end = start + (uint64_t) (secs * 1e6);
        while (!stop && now_usec() < end) {
                usleep((useconds_t) MIN(end - now_usec(), 100000u));
                if (mark) { /* SIGUSR1: count from here */
                        mark = 0;
                        sum_members(members, pids, total, threads, slots, &hops0, &cpu0, &delay0);
                        start = now_usec();
                }
        }
        sum_members(members, pids, total, threads, slots, &hops, &cpu, &delay);
        hops -= hops0, cpu -= cpu0, delay -= delay0;
        for (int i = 0; i < total; i++)
                if (pids[i] > 0)
                        kill(pids[i], SIGKILL);
        while (wait(NULL) > 0)
                ;
        printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", hops, cpu / 1000, delay / 1000,
               now_usec() - start);
        return 0;
}

static int usage(void) {
        fprintf(stderr, "usage: starve-load burn SECS\n"
                        "       starve-load ring SECS RINGS SIZE proc|thread [batch]\n");
        return 2;
}

int main(int argc, char **argv) {
        double secs;
        char *end;

        if (argc < 3)
                return usage();
        errno = 0;
        secs = strtod(argv[2], &end);
        if (errno != 0 || *end != '\0' || !(secs > 0 && secs <= 60)) {
                fprintf(stderr, "starve-load: SECS '%s' is not a number of seconds in (0, 60]\n",
                        argv[2]);
                return 2;
        }
        if (strcmp(argv[1], "burn") == 0 && argc == 3)
                return burn(secs);
        if (strcmp(argv[1], "ring") == 0 && (argc == 6 || argc == 7)) {
                int batch = argc == 7 && strcmp(argv[6], "batch") == 0;

                if ((argc == 7 && !batch) ||
                    (strcmp(argv[5], "proc") != 0 && strcmp(argv[5], "thread") != 0))
                        return usage();
                return ring(secs, atoi(argv[3]), atoi(argv[4]), strcmp(argv[5], "thread") == 0,
                            batch);
        }
        return usage();
}
