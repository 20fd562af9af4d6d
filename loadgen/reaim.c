/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reaim: OSDL's re-aim-7, after AIM Suite VII (seed 003). A workfile weighs tests ("<hits>
 * <test>"); for N users, N children are forked, each runs its share of jobs (tests) drawn by
 * weight in an order of its own, all released together; the parent times from the release to the
 * last exit. Jobs per minute = jobs per child / real minutes x N. N steps up to a maximum or to
 * the crossover, where JPM per child falls below a threshold; the seed reports the largest JPM as
 * the kernel's throughput at each CPU count (loadgen reaim --cpus).
 */
#include "reaim.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "fileio.h"
#include "load.h"
#include "log.h"
#include "macro.h"

#define USERS_MAX 100000u
#define JOBS_MAX 100000u
#define TRUE_PATH "/bin/true"

/* ---- the tests: each a few milliseconds of real work of one kind */

static volatile uint64_t sink; /* what the compute tests make, so it is not optimised away */

/* Integer arithmetic: xorshift steps and a division each. */
static int test_compute_int(ReaimEnv *e) {
        uint64_t x = e->rng | 1, acc = 0;

        for (unsigned i = 0; i < 200000; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                acc += x % 1000003u;
        }
        sink = acc;
        return 0;
}

/* Floating point: Leibniz's series for pi, a division and an add each. */
static int test_compute_float(ReaimEnv *e) {
        double s = 0;

        (void) e;
        for (unsigned k = 0; k < 500000; k++)
                s += (k & 1 ? -4.0 : 4.0) / (2.0 * k + 1.0);
        sink = (uint64_t) (s * 1e6);
        return 0;
}

static int reap(pid_t pid) {
        int status;

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return negative_errno();
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Process creation: fork a child that exits at once, and reap it, five times. */
static int test_fork(ReaimEnv *e) {
        (void) e;
        for (unsigned i = 0; i < 5; i++) {
                pid_t pid = fork();
                int r;

                if (pid < 0)
                        return negative_errno();
                if (pid == 0)
                        _exit(0);
                r = reap(pid);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Program start: fork and exec /bin/true, twice. */
static int test_exec(ReaimEnv *e) {
        (void) e;
        for (unsigned i = 0; i < 2; i++) {
                pid_t pid = fork();
                int r;

                if (pid < 0)
                        return negative_errno();
                if (pid == 0) {
                        execl(TRUE_PATH, "true", (char *) NULL);
                        _exit(127);
                }
                r = reap(pid);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Wake-ups: a byte passed back and forth with a forked partner over two pipes, 200 times. */
static int test_pipe(ReaimEnv *e) {
        int to[2], from[2], r = 0;
        char b = 0;
        pid_t pid;

        (void) e;
        if (pipe2(to, O_CLOEXEC) < 0)
                return negative_errno();
        if (pipe2(from, O_CLOEXEC) < 0) {
                r = negative_errno();
                (void) close(to[0]);
                (void) close(to[1]);
                return r;
        }
        pid = fork();
        if (pid == 0) {
                (void) close(to[1]);
                (void) close(from[0]);
                while (read(to[0], &b, 1) == 1)
                        if (write(from[1], &b, 1) != 1)
                                _exit(1);
                _exit(0);
        }
        (void) close(to[0]);
        (void) close(from[1]);
        if (pid < 0)
                r = negative_errno();
        for (unsigned i = 0; i < 200 && r >= 0; i++)
                if (write(to[1], &b, 1) != 1 || read(from[0], &b, 1) != 1)
                        r = -EIO;
        (void) close(to[1]); /* the partner reads EOF and exits */
        (void) close(from[0]);
        if (pid > 0 && reap(pid) < 0 && r >= 0)
                r = -EIO;
        return r;
}

/* File I/O through the page cache: write 1 MiB to a file of the child's in --dir, read it
 * back and compare, remove it. No fsync: AIM7's disk tests timed the file system, not the disk. */
static int test_file(ReaimEnv *e) {
        enum { CHUNK = 8192, CHUNKS = 128 };
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[CHUNK], back[CHUNK];

        if (asprintf(&path, "%s/child-%u", e->dir, e->child) < 0)
                return -ENOMEM;
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return negative_errno();
        for (unsigned i = 0; i < CHUNKS; i++) {
                memset(buf, 'a' + (int) (i % 26), sizeof buf);
                if (write(fd, buf, sizeof buf) != (ssize_t) sizeof buf)
                        return -EIO;
        }
        if (lseek(fd, 0, SEEK_SET) < 0)
                return negative_errno();
        for (unsigned i = 0; i < CHUNKS; i++) {
                memset(buf, 'a' + (int) (i % 26), sizeof buf);
                if (read(fd, back, sizeof back) != (ssize_t) sizeof back ||
                    memcmp(buf, back, sizeof buf) != 0)
                        return -EIO;
        }
        return unlink(path) < 0 ? negative_errno() : 0;
}

/* Page faults: map 2 MiB, write every page, unmap. */
static int test_memory(ReaimEnv *e) {
        size_t len = 2u << 20, page = (size_t) sysconf(_SC_PAGESIZE);
        uint8_t *p;

        (void) e;
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return negative_errno();
        for (size_t off = 0; off < len; off += page)
                p[off] = (uint8_t) off;
        sink = p[len - page];
        (void) munmap(p, len);
        return 0;
}

static int compare_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

        return (x > y) - (x < y);
}

/* Sorting: qsort 10000 random numbers, and check them. */
static int test_sort(ReaimEnv *e) {
        enum { N = 10000 };
        _cleanup_free_ uint32_t *v = malloc(N * sizeof *v);

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < N; i++)
                v[i] = (uint32_t) reaim_random(&e->rng);
        qsort(v, N, sizeof *v, compare_u32);
        for (size_t i = 1; i < N; i++)
                if (v[i - 1] > v[i])
                        return -EIO;
        return 0;
}

const ReaimTest reaim_tests[] = {
        { "compute_int", "integer arithmetic: 200000 xorshift steps with a division",
          test_compute_int },
        { "compute_float", "floating point: 500000 terms of Leibniz's series", test_compute_float },
        { "fork", "fork a child that exits at once and reap it, 5 times", test_fork },
        { "exec", "fork and exec " TRUE_PATH ", twice", test_exec },
        { "pipe", "200 round trips of a byte with a forked partner over pipes", test_pipe },
        { "file", "write 1 MiB to a file in --dir, read it back, remove it", test_file },
        { "memory", "map 2 MiB, write every page, unmap", test_memory },
        { "sort", "qsort 10000 random numbers", test_sort },
};
const size_t n_reaim_tests = ELEMENTSOF(reaim_tests);
/* A workfile names each test once at most, so it always fits. */
_Static_assert(ELEMENTSOF(reaim_tests) <= ELEMENTSOF(((ReaimWorkfile *) NULL)->entries),
               "ReaimWorkfile.entries holds fewer than every test");

const ReaimTest *reaim_test_find(const char *name) {
        for (size_t i = 0; i < n_reaim_tests; i++)
                if (streq(reaim_tests[i].name, name))
                        return &reaim_tests[i];
        return NULL;
}

/* A mix in the spirit of AIM7's shared workfile: half computing, half system calls. */
const char reaim_default_workfile[] = "# loadgen reaim's built-in workfile: <hits> <test>\n"
                                      "20 compute_int\n"
                                      "15 compute_float\n"
                                      "10 fork\n"
                                      "10 exec\n"
                                      "15 pipe\n"
                                      "10 file\n"
                                      "10 memory\n"
                                      "10 sort\n";

/* ---- the workfile */

static int parse_error(ReaimParseError *e, unsigned line, const char *fmt, ...) _printf_(3, 4);
static int parse_error(ReaimParseError *e, unsigned line, const char *fmt, ...) {
        va_list ap;

        e->line = line;
        va_start(ap, fmt);
        (void) vsnprintf(e->message, sizeof e->message, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static void known_tests(char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n_reaim_tests && len < size; i++) {
                int n = snprintf(buf + len, size - len, "%s%s", i ? ", " : "", reaim_tests[i].name);

                if (n < 0)
                        break;
                len += (size_t) n;
        }
}

/* One line, comment and newline removed, NUL-terminated. 1: an entry in *ret; 0: blank. */
static int parse_line(char *s, unsigned line, ReaimEntry *ret, ReaimParseError *err) {
        char *hits, *name, *junk, *save = NULL, *end;
        unsigned long v;

        hits = strtok_r(s, " \t\r", &save);
        if (!hits)
                return 0;
        name = strtok_r(NULL, " \t\r", &save);
        junk = strtok_r(NULL, " \t\r", &save);
        if (hits[0] < '0' || hits[0] > '9')
                return parse_error(err, line, "want \"<hits> <test>\", got \"%s\"", hits);
        errno = 0;
        v = strtoul(hits, &end, 10);
        if (errno || *end || v < 1 || v > REAIM_HITS_MAX)
                return parse_error(err, line, "bad weight \"%s\": want a number from 1 to %u", hits,
                                   REAIM_HITS_MAX);
        if (!name)
                return parse_error(err, line, "weight %lu without a test name", v);
        ret->test = reaim_test_find(name);
        if (!ret->test) {
                char known[256];

                known_tests(known, sizeof known);
                return parse_error(err, line, "unknown test \"%s\" (known: %s)", name, known);
        }
        if (junk)
                return parse_error(err, line, "\"%s\" after the test name", junk);
        ret->hits = (unsigned) v;
        ret->line = line;
        return 1;
}

int reaim_workfile_parse(const char *text, size_t size, ReaimWorkfile *ret,
                         ReaimParseError *ret_error) {
        ReaimWorkfile w = { 0 };
        const char *p = text, *end = text + size;
        unsigned line = 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);
                _cleanup_free_ char *s = NULL;
                char *hash;
                ReaimEntry e;
                int r;

                line++;
                if (memchr(p, '\0', len))
                        return parse_error(ret_error, line, "a NUL byte");
                s = strndup(p, len);
                if (!s)
                        return -ENOMEM;
                hash = strchr(s, '#');
                if (hash)
                        *hash = '\0';
                r = parse_line(s, line, &e, ret_error);
                if (r < 0)
                        return r;
                p += len + 1;
                if (r == 0)
                        continue;
                for (size_t i = 0; i < w.n; i++)
                        if (w.entries[i].test == e.test)
                                return parse_error(ret_error, line,
                                                   "test \"%s\" named twice (first on line %u)",
                                                   e.test->name, w.entries[i].line);
                w.entries[w.n++] = e; /* each test at most once: it fits */
                w.total_hits += e.hits;
        }
        if (w.n == 0)
                return parse_error(ret_error, 0, "no tests: want lines \"<hits> <test>\"");
        *ret = w;
        return 0;
}

/* ---- the draw */

uint64_t reaim_random(uint64_t *state) {
        uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

void reaim_apportion(const ReaimWorkfile *w, unsigned jobs, unsigned *counts) {
        uint64_t rem[ELEMENTSOF(w->entries)];
        unsigned given = 0;

        for (size_t i = 0; i < w->n; i++) {
                uint64_t share = (uint64_t) jobs * w->entries[i].hits;

                counts[i] = (unsigned) (share / w->total_hits);
                rem[i] = share % w->total_hits;
                given += counts[i];
        }
        /* Largest remainder first; a strictly larger one wins, so ties go to the earlier. */
        for (; given < jobs; given++) {
                size_t best = 0;

                for (size_t i = 1; i < w->n; i++)
                        if (rem[i] > rem[best])
                                best = i;
                counts[best]++;
                rem[best] = 0;
        }
}

void reaim_draw(const ReaimWorkfile *w, unsigned jobs, uint64_t seed, unsigned child,
                unsigned *ret_order) {
        unsigned counts[ELEMENTSOF(w->entries)];
        uint64_t state = seed ^ ((uint64_t) child * UINT64_C(0xd1b54a32d192ed03));
        unsigned k = 0;

        reaim_apportion(w, jobs, counts);
        for (size_t i = 0; i < w->n; i++)
                for (unsigned c = 0; c < counts[i]; c++)
                        ret_order[k++] = (unsigned) i;
        for (unsigned i = jobs; i > 1; i--) {
                unsigned j = (unsigned) (reaim_random(&state) % i), t = ret_order[i - 1];

                ret_order[i - 1] = ret_order[j];
                ret_order[j] = t;
        }
}

/* ---- the figures */

ReaimStep reaim_step(unsigned users, unsigned jobs_per_child, uint64_t real_usec,
                     const uint64_t *child_usec) {
        ReaimStep s = { .users = users, .real_usec = real_usec, .child_min_usec = UINT64_MAX };
        double var = 0;

        if (users == 0)
                return (ReaimStep){ 0 };
        if (real_usec > 0) {
                s.jpm = (double) jobs_per_child * users * 60e6 / (double) real_usec;
                s.jpm_per_child = s.jpm / users;
        }
        for (unsigned i = 0; i < users; i++) {
                s.child_mean_usec += (double) child_usec[i] / users;
                s.child_min_usec = MIN(s.child_min_usec, child_usec[i]);
                s.child_max_usec = MAX(s.child_max_usec, child_usec[i]);
        }
        for (unsigned i = 0; i < users; i++) {
                double d = (double) child_usec[i] - s.child_mean_usec;

                var += d * d / users;
        }
        s.child_stddev_usec = sqrt(var);
        s.jti = s.child_mean_usec > 0 ? 100.0 * (1.0 - s.child_stddev_usec / s.child_mean_usec)
                                      : 100.0;
        s.jti = MAX(s.jti, 0.0);
        return s;
}

bool reaim_crossed(const ReaimStep *s, double crossover) {
        return s->jpm_per_child < crossover;
}

int reaim_format_header(char *buf, size_t size) {
        return snprintf(buf, size, "Users JPM JPM/child JTI\n");
}

int reaim_format_row(char *buf, size_t size, const ReaimStep *s) {
        return snprintf(buf, size, "%u %.2f %.2f %.0f\n", s->users, s->jpm, s->jpm_per_child,
                        floor(s->jti));
}

int reaim_format_throughput(char *buf, size_t size, unsigned ncpus, const char *label,
                            double max_jpm) {
        return snprintf(buf, size, "\n%u CPU:\nKernel Throughput\n%s %.2f\n", ncpus, label,
                        max_jpm);
}

/* ---- one step: the children */

typedef struct Reaim {
        ReaimWorkfile w;
        unsigned jobs_per_child;
        uint64_t seed;
        const char *dir; /* the children's files */
} Reaim;

typedef struct StepArgs {
        const Reaim *ra;
        unsigned users;
} StepArgs;

/* In the memory bench_run() shares with the step's process, and so with its children. */
typedef struct StepOut {
        uint64_t release_usec; /* written before the release, read by the children after it */
        uint64_t real_usec;
        uint64_t child_usec[]; /* one per user: from the release to its last job's end */
} StepOut;

/*
 * A child's time runs from the common release, not from when it first got a CPU: a child the
 * scheduler keeps waiting is a slow child, and JTI should see it.
 */
static _Noreturn void child_main(const Reaim *ra, unsigned child, int start_fd, StepOut *so) {
        unsigned *order = malloc((size_t) ra->jobs_per_child * sizeof *order);
        uint64_t state = ra->seed + child;
        ReaimEnv env = { .dir = ra->dir, .child = child, .rng = reaim_random(&state) };
        char b;

        if (!order)
                _exit(1);
        reaim_draw(&ra->w, ra->jobs_per_child, ra->seed, child, order);
        /* Blocks until the parent closes the pipe: every child starts at once. */
        while (read(start_fd, &b, 1) < 0 && errno == EINTR)
                ;
        (void) close(start_fd);
        for (unsigned i = 0; i < ra->jobs_per_child; i++) {
                const ReaimTest *t = ra->w.entries[order[i]].test;
                int r = t->run(&env);

                if (r < 0) {
                        log_error_errno(r, "reaim: child %u: job %u (%s) failed: %m", child, i + 1,
                                        t->name);
                        _exit(1);
                }
        }
        so->child_usec[child] = now_usec() - so->release_usec;
        _exit(0);
}

/* The BenchFn: one step of sa->users children, timed from their release to the last exit. */
static int step_fn(void *userdata, void *out) {
        const StepArgs *sa = userdata;
        StepOut *so = out;
        _cleanup_free_ pid_t *pids = calloc(sa->users, sizeof *pids);
        unsigned forked = 0;
        int start[2], r = 0;
        uint64_t t0;

        if (!pids)
                return -ENOMEM;
        if (pipe2(start, O_CLOEXEC) < 0)
                return negative_errno();
        for (; forked < sa->users; forked++) {
                pid_t pid = fork();

                if (pid < 0) {
                        r = log_error_errno(errno, "reaim: failed to fork child %u of %u: %m",
                                            forked + 1, sa->users);
                        break;
                }
                if (pid == 0) {
                        (void) close(start[1]);
                        child_main(sa->ra, forked, start[0], so);
                }
                pids[forked] = pid;
        }
        (void) close(start[0]);
        for (unsigned i = 0; r < 0 && i < forked; i++)
                (void) kill(pids[i], SIGKILL);
        so->release_usec = t0 = now_usec();
        (void) close(start[1]); /* the release */
        for (unsigned i = 0; i < forked; i++) {
                int k = reap(pids[i]);

                if (k < 0 && r >= 0)
                        r = k == -EIO
                                    ? log_error_errno(k, "reaim: a child of %u failed.", sa->users)
                                    : k;
        }
        so->real_usec = now_usec() - t0;
        return r;
}

/* ---- the command */

typedef struct Args {
        unsigned *users;
        size_t n_users;
        unsigned max_users; /* 0: 8 x the run's CPUs */
        double crossover;
        unsigned jobs_per_child;
        uint64_t seed;
        const char *workfile, *label, *json;
} Args;

static void args_done(Args *a) {
        a->users = mfree(a->users);
}

static void help(void) {
        printf("Usage: loadgen reaim [OPTIONS]\n"
               "\n"
               "OSDL's re-aim-7 after AIM Suite VII (seed 003). A workfile weighs tests, one\n"
               "\"<hits> <test>\" a line. For N users, N children are forked in the run's job\n"
               "cgroup; each runs --jobs-per-child jobs, each job one test: the jobs are shared\n"
               "out by hits (largest remainder), so every child runs the same mix, in an order\n"
               "of its own shuffled from --seed and the child's number. The children start\n"
               "together; the parent times from the release to the last exit (real time).\n"
               "  JPM        jobs per child / real minutes x N (jobs per minute)\n"
               "  JPM/child  JPM / N\n"
               "  JTI        job timing index: 100 x (1 - the coefficient of variation of the\n"
               "             children's own times), truncated; 100 is perfectly even\n"
               "N steps 1, 2, 4, ... up to --max-users (default 8 x the run's CPUs), or over\n"
               "--users, and stops after the step at the crossover: AIM7's is where JPM/child\n"
               "falls below 1.0, the default. loadgen's jobs take milliseconds, not AIM7's\n"
               "seconds: that is thousands of users, so a run usually ends at the last step;\n"
               "give a --crossover in the same units to stop sooner. One row per step, then\n"
               "the largest JPM as the seed's throughput at this many CPUs (use --cpus):\n"
               "\n"
               "  Users JPM JPM/child JTI\n"
               "  1 29000.00 29000.00 100\n"
               "  2 56000.00 28000.00 97\n"
               "  Max JPM 56000.00 at 2 users\n"
               "\n"
               "  2 CPU:\n"
               "  Kernel Throughput\n"
               "  default 56000.00\n"
               "\n"
               "  -u --users=AXIS        The steps' user counts, in order (1 to %u).\n"
               "  -n --max-users=N       Step 1, 2, 4, ... up to N, N last (default 8 x CPUs).\n"
               "  -x --crossover=JPM     Stop after a step whose JPM/child is below this\n"
               "                         (default 1.0, AIM7's; 0: never).\n"
               "  -J --jobs-per-child=N  Jobs each child runs (default 100; 1 to %u).\n"
               "  -w --workfile=FILE     The tests and their hits (default: built in, below).\n"
               "     --seed=N            The draw's seed (default 1; decimal, or hex after 0x).\n"
               "  -L --label=NAME        The Kernel column (default \"default\").\n"
               "AXIS is a comma-separated list of N, A-B, A-B:STEP or A-BxFACTOR.\n" CLI_HELP_DIR
                       CLI_HELP_CPUS CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE CLI_HELP_JSON
               "                         Rows: users, real_usec, jobs, jpm, jpm_per_child,\n"
               "                         jti, child_usec mean, stddev, min and max; then\n"
               "                         max_jpm, max_jpm_users, crossover_users (0: none).\n"
               "  -h --help              Show this help.\n"
               "\n"
               "Tests (the file test writes in the run's directory below --dir):\n",
               USERS_MAX, JOBS_MAX);
        for (size_t i = 0; i < n_reaim_tests; i++)
                printf("  %-14s %s\n", reaim_tests[i].name, reaim_tests[i].description);
        printf("\nThe built-in workfile:\n%s", reaim_default_workfile);
}

static int parse_crossover(const char *s, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(v) || v < 0) {
                log_error("Invalid --crossover \"%s\": want jobs per minute per child, 0 or more "
                          "(AIM7's is 1.0).",
                          s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int parse_seed(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        /* Decimal, or hexadecimal after 0x; not octal: "010" is ten. */
        v = strncasecmp(s, "0x", 2) == 0 ? strtoull(s + 2, &end, 16) : strtoull(s, &end, 10);
        if (errno || end == s || *end || !strchr("0123456789", s[0]) ||
            (strncasecmp(s, "0x", 2) == 0 && !isxdigit((unsigned char) s[2]))) {
                log_error("Invalid --seed \"%s\": want a number from 0 to %" PRIu64 ".", s,
                          UINT64_MAX);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

/* 1: parsed, run; 0: --help done; -EINVAL: bad arguments (logged). */
static int parse_args(int argc, char *argv[], Args *a, CliCommon *co) {
        enum { ARG_SEED = 0x100 };
        static const struct option options[] = {
                { "users", required_argument, NULL, 'u' },
                { "max-users", required_argument, NULL, 'n' },
                { "crossover", required_argument, NULL, 'x' },
                { "jobs-per-child", required_argument, NULL, 'J' },
                { "workfile", required_argument, NULL, 'w' },
                { "seed", required_argument, NULL, ARG_SEED },
                CLI_OPT_LABEL,
                CLI_OPT_JSON,
                CLI_OPT_DIR,
                CLI_OPT_CPUS,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_HELP,
                {},
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "u:n:x:J:w:L:j::c:h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, co);
                if (r < 0)
                        return -EINVAL;
                if (r > 0)
                        continue;
                switch (c) {
                case 'u':
                        a->users = mfree(a->users);
                        if (bench_parse_axis("users", optarg, 1, USERS_MAX, &a->users,
                                             &a->n_users) < 0)
                                return -EINVAL;
                        break;
                case 'n':
                        if (cli_parse_unsigned("max-users", optarg, 1, USERS_MAX, &a->max_users) <
                            0)
                                return -EINVAL;
                        break;
                case 'x':
                        if (parse_crossover(optarg, &a->crossover) < 0)
                                return -EINVAL;
                        break;
                case 'J':
                        if (cli_parse_unsigned("jobs-per-child", optarg, 1, JOBS_MAX,
                                               &a->jobs_per_child) < 0)
                                return -EINVAL;
                        break;
                case 'w': a->workfile = optarg; break;
                case ARG_SEED:
                        if (parse_seed(optarg, &a->seed) < 0)
                                return -EINVAL;
                        break;
                case 'h': help(); return 0;
                default: return -EINVAL; /* getopt said why */
                }
        }
        cli_take_report(co, &a->label, &a->json);
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen reaim --help.", argv[optind]);
                return -EINVAL;
        }
        if (a->users && a->max_users) {
                log_error("--users and --max-users both set the steps: give one.");
                return -EINVAL;
        }
        return 1;
}

/* The CPUs the run will have: --cpus, or all of loadgen's. */
static unsigned run_cpus(const CliCommon *co) {
        cpu_set_t set;

        if (co->cpus)
                return cpumask_count(co->cpus);
        if (sched_getaffinity(0, sizeof set, &set) < 0)
                return 1;
        return (unsigned) MAX(CPU_COUNT(&set), 1);
}

/* Without --users: 1, 2, 4, ... below max, then max. */
static int default_steps(Args *a, unsigned ncpus) {
        unsigned max = a->max_users ? a->max_users : MIN(8 * ncpus, USERS_MAX);

        a->users = malloc(40 * sizeof *a->users);
        if (!a->users)
                return log_error_errno(ENOMEM, "Out of memory.");
        a->n_users = 0;
        for (unsigned n = 1; n < max; n *= 2)
                a->users[a->n_users++] = n;
        a->users[a->n_users++] = max;
        return 0;
}

static int load_workfile(const char *path, ReaimWorkfile *ret) {
        _cleanup_free_ char *text = NULL;
        const char *name = path ? path : "the built-in workfile";
        ReaimParseError e = { 0 };
        size_t size = 0;
        int r;

        if (path) {
                r = read_full_at(AT_FDCWD, path, REAIM_WORKFILE_MAX_BYTES, &text, &size);
                if (r == -EFBIG)
                        log_error("--workfile %s: larger than %u bytes.", path,
                                  REAIM_WORKFILE_MAX_BYTES);
                else if (r < 0)
                        log_error_errno(r, "Failed to read --workfile %s: %m", path);
                if (r < 0)
                        return -EINVAL;
        }
        r = reaim_workfile_parse(path ? text : reaim_default_workfile,
                                 path ? size : strlen(reaim_default_workfile), ret, &e);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory.");
        if (r < 0) {
                if (e.line > 0)
                        log_error("%s:%u: %s.", name, e.line, e.message);
                else
                        log_error("%s: %s.", name, e.message);
                return -EINVAL;
        }
        return 0;
}

static void json_parameters(Json *j, const Args *a, const Reaim *ra, const Sandbox *sb) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_string(j, "label", a->label);
        json_string(j, "workfile", a->workfile ? a->workfile : "built-in");
        json_key(j, "tests");
        json_begin(j, '[');
        for (size_t i = 0; i < ra->w.n; i++) {
                json_begin(j, '{');
                json_string(j, "test", ra->w.entries[i].test->name);
                json_u64(j, "hits", ra->w.entries[i].hits);
                json_end(j, '}');
        }
        json_end(j, ']');
        json_u64(j, "jobs_per_child", ra->jobs_per_child);
        json_u64(j, "seed", ra->seed);
        json_double(j, "crossover", a->crossover, 3);
        json_key(j, "users");
        json_begin(j, '[');
        for (size_t i = 0; i < a->n_users; i++)
                json_u64(j, NULL, a->users[i]);
        json_end(j, ']');
        json_u64(j, "ncpus", sandbox_ncpus(sb));
        json_end(j, '}');
}

static void json_row(Json *j, const ReaimStep *s, unsigned jobs_per_child) {
        json_begin(j, '{');
        json_u64(j, "users", s->users);
        json_u64(j, "real_usec", s->real_usec);
        json_u64(j, "jobs", (uint64_t) s->users * jobs_per_child);
        json_double(j, "jpm", s->jpm, 4);
        json_double(j, "jpm_per_child", s->jpm_per_child, 4);
        json_double(j, "jti", s->jti, 4);
        json_double(j, "child_usec_mean", s->child_mean_usec, 1);
        json_double(j, "child_usec_stddev", s->child_stddev_usec, 1);
        json_u64(j, "child_usec_min", s->child_min_usec);
        json_u64(j, "child_usec_max", s->child_max_usec);
        json_end(j, '}');
}

typedef struct Summary {
        double max_jpm;
        unsigned max_users, crossover_users, steps;
} Summary;

/* Every step, a row as each ends, until the last or the crossover. */
static int run_steps(const Sandbox *sb, BenchReport *rep, const Args *a, const Reaim *ra,
                     Summary *sum) {
        char line[128];
        int r;

        for (size_t i = 0; i < a->n_users && !cli_stop; i++) {
                StepArgs sa = { .ra = ra, .users = a->users[i] };
                size_t size = sizeof(StepOut) + (size_t) sa.users * sizeof(uint64_t);
                _cleanup_free_ StepOut *so = calloc(1, size);
                ReaimStep s;

                if (!so)
                        return log_error_errno(ENOMEM, "Out of memory.");
                r = bench_run(sb, step_fn, &sa, so, size);
                if (r == -EINTR)
                        return r;
                if (r < 0)
                        return log_error_errno(r, "Failed to run reaim with %u users: %m",
                                               sa.users);
                s = reaim_step(sa.users, ra->jobs_per_child, so->real_usec, so->child_usec);
                (void) reaim_format_row(line, sizeof line, &s);
                bench_printf(rep, "%s", line);
                if (rep->json.f)
                        json_row(&rep->json, &s, ra->jobs_per_child);
                sum->steps++;
                if (s.jpm > sum->max_jpm) {
                        sum->max_jpm = s.jpm;
                        sum->max_users = s.users;
                }
                if (reaim_crossed(&s, a->crossover)) {
                        sum->crossover_users = s.users;
                        bench_printf(rep, "Crossover at %u users: JPM/child %.2f is below %.2f\n",
                                     s.users, s.jpm_per_child, a->crossover);
                        break;
                }
        }
        return cli_stop ? -EINTR : 0;
}

static int run(const Args *a, Reaim *ra, const CliCommon *co) {
        _cleanup_sandbox_ Sandbox *sb = NULL;
        _cleanup_free_ char *dir = NULL;
        Summary sum = { 0 };
        BenchReport rep;
        char line[512];
        int r;

        if (cli_make_sandbox(co, &sb) < 0)
                return 1;
        dir = sandbox_path(sb, "reaim");
        if (!dir)
                return log_error_errno(ENOMEM, "Out of memory."), 1;
        if (mkdir(dir, 0700) < 0)
                return log_error_errno(errno, "Failed to make %s: %m", dir), 1;
        ra->dir = dir;
        if (bench_report_open(&rep, a->json, "reaim", sb) < 0)
                return 1;
        if (rep.json.f) {
                json_parameters(&rep.json, a, ra, sb);
                json_key(&rep.json, "rows");
                json_begin(&rep.json, '[');
        }
        (void) reaim_format_header(line, sizeof line);
        bench_printf(&rep, "%s", line);
        r = run_steps(sb, &rep, a, ra, &sum);
        if (r >= 0 && sum.steps > 0) {
                bench_printf(&rep, "Max JPM %.2f at %u users\n", sum.max_jpm, sum.max_users);
                (void) reaim_format_throughput(line, sizeof line, sandbox_ncpus(sb), a->label,
                                               sum.max_jpm);
                bench_printf(&rep, "%s", line);
        }
        if (rep.json.f) {
                json_end(&rep.json, ']');
                json_double(&rep.json, "max_jpm", sum.max_jpm, 4);
                json_u64(&rep.json, "max_jpm_users", sum.max_users);
                json_u64(&rep.json, "crossover_users", sum.crossover_users);
                json_bool(&rep.json, "interrupted", cli_stop != 0);
        }
        if (bench_report_close(&rep) < 0 && r >= 0)
                r = -EIO;
        if (cli_stop)
                return cli_interrupted();
        return r < 0 ? 1 : 0;
}

static bool uses_test(const ReaimWorkfile *w, int (*fn)(ReaimEnv *e)) {
        for (size_t i = 0; i < w->n; i++)
                if (w->entries[i].test->run == fn)
                        return true;
        return false;
}

int reaim_main(int argc, char *argv[]) {
        _cleanup_(cli_common_done) CliCommon co = CLI_COMMON_INIT;
        _cleanup_(args_done) Args a = { .crossover = REAIM_DEFAULT_CROSSOVER,
                                        .jobs_per_child = 100,
                                        .seed = 1,
                                        .label = "default" };
        Reaim ra = { 0 };
        unsigned max;
        char what[64];
        int r;

        r = parse_args(argc, argv, &a, &co);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (load_workfile(a.workfile, &ra.w) < 0)
                return EXIT_USAGE;
        if (!a.users && default_steps(&a, run_cpus(&co)) < 0)
                return 1;
        /* Each child, and the one partner or child of its own a test has at a time. */
        max = axis_max(a.users, a.n_users);
        (void) snprintf(what, sizeof what, "reaim with %u users", max);
        if (bench_check_tasks(what, 2 * (uint64_t) max + 1, 16) < 0)
                return EXIT_USAGE;
        if (uses_test(&ra.w, test_exec) && access(TRUE_PATH, X_OK) < 0)
                return log_error_errno(errno, "The exec test runs " TRUE_PATH ": %m"), 1;
        ra.jobs_per_child = a.jobs_per_child;
        ra.seed = a.seed;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        return run(&a, &ra, &co);
}
