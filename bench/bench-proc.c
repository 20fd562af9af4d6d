/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What sampling every task costs. Parks 1,000 then 10,000 real threads and times, per thread:
 *   floor   openat + read + close of PID/task/TID/stat, path prepared in advance, no parsing
 *   reader  proc_task_stat_read_at(): path, open, read, close, parse
 *   pread   proc_task_stat_pread() on an fd opened once (the open is timed apart)
 *   parse   proc_task_stat_parse() alone, on each thread's line read beforehand
 * Each is the median (and the best) of REPS passes over all threads, in ns per task.
 *
 * A measurement, not a test: exits 0 unless the threads cannot be set up.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "proc.h"
#include "support.h"

#define REPS 11
#define STACK_BYTES (64u * 1024u)

static const unsigned thread_counts[] = { 1000, 10000 };

/* ---- parked threads */

static uint32_t release_threads; /* futex word: 0 parked, 1 go */
static unsigned threads_started;

typedef struct Parked {
        pthread_t thread;
        pid_t tid;
} Parked;

static void *park(void *arg) {
        Parked *p = arg;

        __atomic_store_n(&p->tid, gettid(), __ATOMIC_RELEASE);
        __atomic_add_fetch(&threads_started, 1, __ATOMIC_RELEASE);
        /* Sleep in the kernel, not spinning: the measured reads must not compete for CPUs. */
        while (__atomic_load_n(&release_threads, __ATOMIC_ACQUIRE) == 0)
                (void) syscall(SYS_futex, &release_threads, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        return NULL;
}

/* Starts threads [from, to) of parked; returns how many started before a failure. */
static unsigned spawn(Parked *parked, unsigned from, unsigned to, int *ret_error) {
        pthread_attr_t attr;
        unsigned i;

        *ret_error = 0;
        if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, STACK_BYTES) != 0) {
                *ret_error = EINVAL;
                return from;
        }
        for (i = from; i < to; i++) {
                *ret_error = pthread_create(&parked[i].thread, &attr, park, &parked[i]);
                if (*ret_error != 0)
                        break;
        }
        (void) pthread_attr_destroy(&attr);
        while (__atomic_load_n(&threads_started, __ATOMIC_ACQUIRE) < i)
                (void) usleep(1000);
        return i;
}

static void release_all(Parked *parked, unsigned n) {
        __atomic_store_n(&release_threads, 1, __ATOMIC_RELEASE);
        (void) syscall(SYS_futex, &release_threads, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
        for (unsigned i = 0; i < n; i++)
                (void) pthread_join(parked[i].thread, NULL);
}

/* ---- timing */

typedef struct Run {
        int proc_fd;
        pid_t pid;
        const Parked *parked;
        char (*paths)[48];
        int *fds;
        char **lines;
        unsigned n;
        unsigned failures;
} Run;

static uint64_t pass_floor(Run *r) {
        char buf[PROC_TASK_STAT_BUF_SIZE];
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                int fd = openat(r->proc_fd, r->paths[i], O_RDONLY | O_CLOEXEC);

                if (fd < 0 || read(fd, buf, sizeof buf) <= 0)
                        r->failures++;
                if (fd >= 0)
                        (void) close(fd);
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

static uint64_t pass_reader(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                TaskStat s;

                if (proc_task_stat_read_at(r->proc_fd, r->pid, r->parked[i].tid, &s) < 0)
                        r->failures++;
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

static uint64_t pass_pread(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                TaskStat s;

                if (proc_task_stat_pread(r->fds[i], &s) < 0)
                        r->failures++;
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

static uint64_t pass_parse(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                TaskStat s;

                if (proc_task_stat_parse(r->lines[i], &s) < 0)
                        r->failures++;
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

/* Each thread's stat line, for the parse-only pass. */
static int read_lines(Run *r) {
        for (unsigned i = 0; i < r->n; i++) {
                char buf[PROC_TASK_STAT_BUF_SIZE];
                ssize_t n;

                free(r->lines[i]);
                r->lines[i] = NULL;
                n = pread(r->fds[i], buf, sizeof buf - 1, 0);
                if (n <= 0)
                        return -EIO;
                buf[n] = '\0';
                r->lines[i] = strdup(buf);
                if (!r->lines[i])
                        return -ENOMEM;
        }
        return 0;
}

/* Opens the kept fds; returns the time it took, or 0 on failure (fds closed). */
static uint64_t open_kept_fds(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                r->fds[i] = proc_task_stat_open_at(r->proc_fd, r->pid, r->parked[i].tid);
                if (r->fds[i] < 0) {
                        fprintf(stderr, "bench-proc: opening stat of tid %d: %s\n",
                                (int) r->parked[i].tid, strerror(-r->fds[i]));
                        while (i > 0)
                                (void) close(r->fds[--i]);
                        return 0;
                }
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

typedef enum Variant { FLOOR, READER, PREAD, PARSE, _VARIANT_MAX } Variant;

static const char *const variant_names[_VARIANT_MAX] = {
        [FLOOR] = "floor   open+read+close, no parsing",
        [READER] = "reader  proc_task_stat_read_at()",
        [PREAD] = "pread   kept fd, proc_task_stat_pread()",
        [PARSE] = "parse   proc_task_stat_parse() alone",
};

/* Medians decide; the best pass shows how much of the spread is noise from other load. */
static void print_table(unsigned n, uint64_t passes[_VARIANT_MAX][REPS], uint64_t open_ns) {
        double med[_VARIANT_MAX];

        printf("\n%u threads: ns per task over %d passes\n", n, REPS);
        printf("  %-40s %8s %8s %9s\n", "variant", "median", "best", "vs floor");
        for (Variant v = 0; v < _VARIANT_MAX; v++) {
                double best;

                if (open_ns == 0 && (v == PREAD || v == PARSE)) {
                        printf("  %-40s %8s\n", variant_names[v], "n/a");
                        continue;
                }
                med[v] = (double) bench_median_u64(passes[v], REPS) / n;
                best = (double) passes[v][0] / n; /* sorted by bench_median_u64() */
                printf("  %-40s %8.0f %8.0f %9.2f\n", variant_names[v], med[v], best,
                       med[v] / med[FLOOR]);
        }
        if (open_ns)
                printf("  %-40s %8.0f\n", "(first open of each kept fd, once)",
                       (double) open_ns / n);
}

/* REPS passes of each variant, interleaved so that drift hits all of them alike. */
static void measure(Run *r) {
        uint64_t passes[_VARIANT_MAX][REPS] = {}, open_ns;

        open_ns = open_kept_fds(r);
        if (open_ns && read_lines(r) < 0)
                r->failures++;
        for (int k = 0; k < REPS; k++) {
                passes[FLOOR][k] = pass_floor(r);
                passes[READER][k] = pass_reader(r);
                if (open_ns) {
                        passes[PREAD][k] = pass_pread(r);
                        passes[PARSE][k] = pass_parse(r);
                }
        }
        if (open_ns)
                for (unsigned i = 0; i < r->n; i++)
                        (void) close(r->fds[i]);
        print_table(r->n, passes, open_ns);
        if (r->failures)
                printf("  (%u reads failed)\n", r->failures);
}

/* The kept-fd variant holds one fd per thread. */
static void raise_fd_limit(unsigned need) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
                rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

static int run_all(Parked *parked, int proc_fd, char (*paths)[48], int *fds, char **lines,
                   unsigned *started) {
        pid_t pid = getpid();

        for (size_t c = 0; c < ELEMENTSOF(thread_counts); c++) {
                unsigned n = thread_counts[c];
                int err;
                Run r = { .proc_fd = proc_fd,
                          .pid = pid,
                          .parked = parked,
                          .paths = paths,
                          .fds = fds,
                          .lines = lines,
                          .n = n };

                (void) fflush(stdout); /* the table so far, before any error on stderr */
                *started = spawn(parked, *started, n, &err);
                if (*started < n) {
                        fprintf(stderr,
                                "bench-proc: created %u of %u threads: %s (check ulimit -u, "
                                "kernel.threads-max, the pids cgroup, memory)\n",
                                *started, n, strerror(err));
                        return -err;
                }
                for (unsigned i = 0; i < n; i++)
                        (void) snprintf(paths[i], sizeof paths[i], "%d/task/%d/stat", (int) pid,
                                        (int) parked[i].tid);
                measure(&r);
        }
        return 0;
}

int main(void) {
        unsigned max = thread_counts[ELEMENTSOF(thread_counts) - 1], started = 0;
        _cleanup_free_ Parked *parked = calloc(max, sizeof *parked);
        _cleanup_free_ char(*paths)[48] = calloc(max, sizeof *paths);
        _cleanup_free_ int *fds = calloc(max, sizeof *fds);
        _cleanup_free_ char **lines = calloc(max, sizeof *lines);
        _cleanup_close_ int proc_fd = -EBADF;
        int r;

        if (!parked || !paths || !fds || !lines) {
                fprintf(stderr, "bench-proc: out of memory\n");
                return 1;
        }
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0) {
                fprintf(stderr, "bench-proc: open /proc: %m\n");
                return 1;
        }
        raise_fd_limit(max + 64);
        printf("bench-proc: reading PID/task/TID/stat of parked threads, %ld CPUs\n",
               sysconf(_SC_NPROCESSORS_ONLN));
        r = run_all(parked, proc_fd, paths, fds, lines, &started);
        release_all(parked, started);
        for (unsigned i = 0; i < max; i++)
                free(lines[i]);
        return r < 0 ? 1 : 0;
}
