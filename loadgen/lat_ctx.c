/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lat_ctx, LMbench2's context switch timer (Larry McVoy; seed 000): a ring of N processes joined
 * by pipes passes one int; each process, on receiving it, sums every int of a private SIZE KB
 * array and writes it on. The cost of one pipe write+read in one process and of one sum ("ovr")
 * is measured apart and subtracted, leaving the switch.
 */
#include "lat_ctx.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "load.h"
#include "log.h"
#include "macro.h"

#define TASKS_MAX 1000000u
#define SIZE_KB_MAX 4096u

/* ---- the pure part */

double lat_ctx_per_switch_usec(uint64_t block_usec, uint64_t trips, unsigned tasks,
                               double overhead_usec) {
        if (trips == 0 || tasks == 0)
                return 0;
        return (double) block_usec / (double) trips / (double) tasks - overhead_usec;
}

uint64_t lat_ctx_iterations_for(uint64_t trial, uint64_t trial_usec, uint64_t enough_usec,
                                uint64_t min_iters) {
        double want = (double) MAX(trial, UINT64_C(1)) * (double) enough_usec * 1.25 /
                      (double) MAX(trial_usec, UINT64_C(1));
        uint64_t n = want >= (double) UINT32_MAX ? UINT32_MAX : (uint64_t) want;

        return MIN(MAX(n, MAX(trial, min_iters)), (uint64_t) UINT32_MAX);
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

double lat_ctx_median(double *v, size_t n) {
        if (n == 0)
                return NAN;
        qsort(v, n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double lat_ctx_min(const double *v, size_t n) {
        double m = NAN;

        for (size_t i = 0; i < n; i++)
                if (i == 0 || v[i] < m)
                        m = v[i];
        return m;
}

int lat_ctx_format_header(char *buf, size_t size, unsigned size_kb, double overhead_usec) {
        return snprintf(buf, size, "\"size=%uk ovr=%.2f\n", size_kb, overhead_usec);
}

int lat_ctx_format_row(char *buf, size_t size, unsigned tasks, double usec) {
        return snprintf(buf, size, "%u %.2f\n", tasks, usec);
}

/* ---- the measured work */

typedef struct Ctx {
        unsigned tasks;
        unsigned npipes; /* the overhead's pipes: as many as the largest ring, as LMbench did */
        size_t size_bytes;
} Ctx;

typedef struct Overhead {
        double pipe_usec, sum_usec; /* minimums */
        uint64_t pipe_iters, sum_iters; /* per measurement */
} Overhead;

typedef struct RowResult {
        double usec, usec_min, usec_max; /* per switch: median, min and max of the measurements */
        uint64_t trips; /* per measurement */
} RowResult;

/* Both ends of a pipe, -1 once closed. */
typedef int Pipe[2];

static volatile int sink; /* the sums go here, so the compiler keeps them */

static int sum_array(const int *a, size_t n) {
        int s = 0;

        for (size_t i = 0; i < n; i++)
                s += a[i];
        return s;
}

/* A private, touched array (the ring's processes bzero()ed theirs: their own pages). */
static int *array_new(size_t bytes) {
        int *a = malloc(MAX(bytes, sizeof(int)));

        if (a)
                memset(a, 0, MAX(bytes, sizeof(int)));
        return a;
}

static int write_token(int fd, int token) {
        ssize_t n = write(fd, &token, sizeof token);

        return n == (ssize_t) sizeof token ? 0 : n < 0 ? negative_errno() : -EIO;
}

static int read_token(int fd, int *token) {
        ssize_t n = read(fd, token, sizeof *token);

        return n == (ssize_t) sizeof *token ? 0 : n < 0 ? negative_errno() : -EPIPE;
}

static void close_pipes(Pipe *p, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                for (unsigned k = 0; k < 2; k++)
                        if (p[i][k] >= 0)
                                p[i][k] = (close(p[i][k]), -1);
}

static Pipe *pipes_new(unsigned n) {
        Pipe *p = malloc(n * sizeof *p);

        if (!p)
                return NULL;
        for (unsigned i = 0; i < n; i++)
                p[i][0] = p[i][1] = -1;
        for (unsigned i = 0; i < n; i++)
                if (pipe2(p[i], O_CLOEXEC) < 0) {
                        int r = errno;

                        close_pipes(p, n);
                        free(p);
                        errno = r;
                        return NULL;
                }
        return p;
}

/* iters write+read pairs in this process, going round the pipes to spread the caches' load. */
static int pipe_block(Pipe *p, unsigned n, uint64_t iters, uint64_t *ret_usec) {
        uint64_t t0 = now_usec();
        int token = 0, r;

        for (uint64_t i = 0; i < iters; i++) {
                unsigned k = (unsigned) (i % n);

                r = write_token(p[k][1], token);
                if (r >= 0)
                        r = read_token(p[k][0], &token);
                if (r < 0)
                        return r;
        }
        *ret_usec = now_usec() - t0;
        return 0;
}

static uint64_t sum_block(const int *a, size_t n, uint64_t iters) {
        uint64_t t0 = now_usec();

        for (uint64_t i = 0; i < iters; i++)
                sink = sum_array(a, n);
        return now_usec() - t0;
}

static int measure_pipe(Pipe *p, unsigned n, Overhead *o) {
        double v[LAT_CTX_OVERHEAD_REPETITIONS];
        uint64_t t;
        int r;

        r = pipe_block(p, n, 100, &t);
        if (r < 0)
                return r;
        o->pipe_iters = lat_ctx_iterations_for(100, t, LAT_CTX_OVERHEAD_ENOUGH_USEC, 100);
        for (unsigned i = 0; i < LAT_CTX_OVERHEAD_REPETITIONS; i++) {
                r = pipe_block(p, n, o->pipe_iters, &t);
                if (r < 0)
                        return r;
                v[i] = (double) t / (double) o->pipe_iters;
        }
        o->pipe_usec = lat_ctx_min(v, LAT_CTX_OVERHEAD_REPETITIONS);
        return 0;
}

static void measure_sum(const int *a, size_t n, Overhead *o) {
        double v[LAT_CTX_OVERHEAD_REPETITIONS];

        if (n == 0)
                return; /* size 0: nothing is summed, nothing to subtract */
        o->sum_iters =
                lat_ctx_iterations_for(10, sum_block(a, n, 10), LAT_CTX_OVERHEAD_ENOUGH_USEC, 10);
        for (unsigned i = 0; i < LAT_CTX_OVERHEAD_REPETITIONS; i++)
                v[i] = (double) sum_block(a, n, o->sum_iters) / (double) o->sum_iters;
        o->sum_usec = lat_ctx_min(v, LAT_CTX_OVERHEAD_REPETITIONS);
}

/* BenchFn: the overhead of one hop without a switch, in the job group like the ring. */
static int overhead_fn(void *userdata, void *out) {
        const Ctx *c = userdata;
        Overhead *o = out;
        _cleanup_free_ int *a = array_new(c->size_bytes);
        Pipe *p = NULL;
        int r;

        if (!a)
                return -ENOMEM;
        p = pipes_new(c->npipes);
        if (!p)
                return negative_errno();
        r = measure_pipe(p, c->npipes, o);
        close_pipes(p, c->npipes);
        free(p);
        if (r < 0)
                return r;
        measure_sum(a, c->size_bytes / sizeof(int), o);
        return 0;
}

/* Ring member i (1..N-1): read from i-1, sum, write to i, until the ring is closed. */
static _Noreturn void member(int rd, int wr, size_t size_bytes) {
        int *a = array_new(size_bytes);
        int token;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (!a)
                _exit(1);
        while (read_token(rd, &token) >= 0) {
                sink = sum_array(a, size_bytes / sizeof(int));
                if (write_token(wr, token) < 0)
                        break;
        }
        _exit(0);
}

/* Forks members 1..N-1, each keeping only its two ends; *ret_n is how many were forked. */
static int ring_start(Pipe *p, unsigned n, size_t size_bytes, pid_t *pids, unsigned *ret_n) {
        *ret_n = 0;
        for (unsigned i = 1; i < n; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        return negative_errno();
                if (pid == 0) {
                        for (unsigned k = 0; k < n; k++) {
                                if (k != i - 1)
                                        (void) close(p[k][0]);
                                if (k != i)
                                        (void) close(p[k][1]);
                        }
                        member(p[i - 1][0], p[i][1], size_bytes);
                }
                pids[(*ret_n)++] = pid;
        }
        return 0;
}

/* Closing the parent's ends makes every member read EOF in turn; then each is reaped. */
static void ring_stop(Pipe *p, unsigned n, const pid_t *pids, unsigned forked) {
        close_pipes(p, n);
        for (unsigned i = 0; i < forked; i++)
                while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
                        ;
}

/* `trips` times round the ring from member 0 (this process), which sums too, as LMbench's. */
static int trips_block(Pipe *p, unsigned n, const int *a, size_t ints, uint64_t trips,
                       uint64_t *ret_usec) {
        uint64_t t0 = now_usec();
        int token = 0, r;

        for (uint64_t i = 0; i < trips; i++) {
                r = write_token(p[0][1], token);
                if (r >= 0)
                        r = read_token(p[n - 1][0], &token);
                if (r < 0)
                        return r;
                sink = sum_array(a, ints);
        }
        *ret_usec = now_usec() - t0;
        return 0;
}

static int measure_ring(Pipe *p, const Ctx *c, double overhead_usec, RowResult *res) {
        _cleanup_free_ int *a = array_new(c->size_bytes);
        size_t ints = c->size_bytes / sizeof(int);
        double v[LAT_CTX_REPETITIONS];
        uint64_t t, t0 = now_usec();
        int r;

        if (!a)
                return -ENOMEM;
        do { /* warm-up, untimed */
                r = trips_block(p, c->tasks, a, ints, LAT_CTX_MIN_TRIPS, &t);
                if (r < 0)
                        return r;
        } while (now_usec() - t0 < LAT_CTX_WARMUP_USEC);
        res->trips = lat_ctx_iterations_for(LAT_CTX_MIN_TRIPS, t, LAT_CTX_ENOUGH_USEC,
                                            LAT_CTX_MIN_TRIPS);
        for (unsigned i = 0; i < LAT_CTX_REPETITIONS; i++) {
                r = trips_block(p, c->tasks, a, ints, res->trips, &t);
                if (r < 0)
                        return r;
                v[i] = lat_ctx_per_switch_usec(t, res->trips, c->tasks, overhead_usec);
        }
        res->usec = lat_ctx_median(v, LAT_CTX_REPETITIONS);
        res->usec_min = v[0];
        res->usec_max = v[LAT_CTX_REPETITIONS - 1];
        return 0;
}

typedef struct RingArgs {
        Ctx ctx;
        double overhead_usec;
} RingArgs;

/* BenchFn: one ring of ctx.tasks processes, measured. */
static int ring_fn(void *userdata, void *out) {
        const RingArgs *ra = userdata;
        unsigned n = ra->ctx.tasks, forked = 0;
        _cleanup_free_ pid_t *pids = calloc(n, sizeof *pids);
        Pipe *p = NULL;
        int r;

        if (!pids)
                return -ENOMEM;
        p = pipes_new(n);
        if (!p)
                return negative_errno();
        r = ring_start(p, n, ra->ctx.size_bytes, pids, &forked);
        if (r >= 0) {
                /* Only member 0's two ends stay here, so EOF reaches the ring on close. */
                for (unsigned k = 0; k < n; k++) {
                        if (k != n - 1)
                                p[k][0] = (close(p[k][0]), -1);
                        if (k != 0)
                                p[k][1] = (close(p[k][1]), -1);
                }
                r = measure_ring(p, &ra->ctx, ra->overhead_usec, out);
        }
        ring_stop(p, n, pids, forked);
        free(p);
        return r;
}

/* ---- the command */

typedef struct Args {
        unsigned *tasks, *sizes;
        size_t n_tasks, n_sizes;
        const char *label, *json;
} Args;

static void args_done(Args *a) {
        a->tasks = mfree(a->tasks);
        a->sizes = mfree(a->sizes);
}

static void help(void) {
        printf("Usage: loadgen lat_ctx [OPTIONS]\n"
               "\n"
               "LMbench2's context switch timer (seed 000): a ring of N processes joined by\n"
               "pipes passes one int; each, on receiving it, sums every int of its own SIZE KB\n"
               "array and writes it to the next. The cost of one pipe write+read in a single\n"
               "process plus one sum (\"ovr\") is subtracted, leaving microseconds per context\n"
               "switch. ovr is the minimum of %u measurements of %u ms, over as many pipes as\n"
               "the largest ring (LMbench2: larger overheads include other activity). Each\n"
               "ring runs %u ms untimed, then is timed %u times, each time round the ring\n"
               "enough times (at least %u) to last %u ms; the row is the median, as LMbench2's.\n"
               "Every ring and the overhead run in the run's job cgroup. One block per size,\n"
               "in the order given, one row per N:\n"
               "\n"
               "  Size/# tasks default\n"
               "  \"size=0k ovr=2.30\n"
               "  2 2.79\n"
               "  4 2.88\n"
               "\n"
               "  -t --tasks=AXIS        Ring sizes N (default 2-256x2: 2, 4, ... 256; from 2).\n"
               "                         AXIS: comma-separated N, A-B, A-B:STEP or A-BxFACTOR.\n"
               "  -s --size=AXIS         Each process's array in KB (default 0; 0 to %u;\n"
               "                         the seed used 0,4,8,16,32,64).\n"
               "  -L --label=NAME        The column title (default \"default\").\n" CLI_HELP_CPUS
                       CLI_HELP_DIR CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE CLI_HELP_JSON
               "                         Rows: size_kb, overhead_usec (= pipe_usec + sum_usec),\n"
               "                         tasks, usec (the median), usec_min, usec_max, trips\n"
               "                         (per measurement), repetitions.\n"
               "  -h --help              Show this help.\n",
               LAT_CTX_OVERHEAD_REPETITIONS, LAT_CTX_OVERHEAD_ENOUGH_USEC / 1000,
               LAT_CTX_WARMUP_USEC / 1000, LAT_CTX_REPETITIONS, LAT_CTX_MIN_TRIPS,
               LAT_CTX_ENOUGH_USEC / 1000, SIZE_KB_MAX);
}

/* 1: parsed, run; 0: --help done; -EINVAL: bad arguments (logged). */
static int parse_args(int argc, char *argv[], Args *a, CliCommon *co) {
        static const struct option options[] = {
                { "tasks", required_argument, NULL, 't' },
                { "size", required_argument, NULL, 's' },
                CLI_OPT_LABEL,
                CLI_OPT_JSON,
                CLI_OPT_CPUS,
                CLI_OPT_DIR,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_HELP,
                {},
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "t:s:L:j::c:h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, co);
                if (r < 0)
                        return -EINVAL;
                if (r > 0)
                        continue;
                switch (c) {
                case 't':
                        a->tasks = mfree(a->tasks);
                        if (bench_parse_axis("tasks", optarg, 2, TASKS_MAX, &a->tasks,
                                             &a->n_tasks) < 0)
                                return -EINVAL;
                        break;
                case 's':
                        a->sizes = mfree(a->sizes);
                        if (bench_parse_axis("size", optarg, 0, SIZE_KB_MAX, &a->sizes,
                                             &a->n_sizes) < 0)
                                return -EINVAL;
                        break;
                case 'h': help(); return 0;
                default: return -EINVAL; /* getopt said why */
                }
        }
        cli_take_report(co, &a->label, &a->json);
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen lat_ctx --help.", argv[optind]);
                return -EINVAL;
        }
        if (!a->tasks &&
            bench_parse_axis("tasks", "2-256x2", 2, TASKS_MAX, &a->tasks, &a->n_tasks) < 0)
                return -EINVAL;
        if (!a->sizes && bench_parse_axis("size", "0", 0, SIZE_KB_MAX, &a->sizes, &a->n_sizes) < 0)
                return -EINVAL;
        return 1;
}

static void json_parameters(Json *j, const Args *a) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_string(j, "label", a->label);
        bench_json_axis(j, "tasks", a->tasks, a->n_tasks);
        bench_json_axis(j, "sizes_kb", a->sizes, a->n_sizes);
        json_u64(j, "repetitions", LAT_CTX_REPETITIONS);
        json_string(j, "statistic", "median");
        json_u64(j, "overhead_repetitions", LAT_CTX_OVERHEAD_REPETITIONS);
        json_string(j, "overhead_statistic", "minimum");
        json_u64(j, "overhead_enough_usec", LAT_CTX_OVERHEAD_ENOUGH_USEC);
        json_u64(j, "min_trips", LAT_CTX_MIN_TRIPS);
        json_u64(j, "enough_usec", LAT_CTX_ENOUGH_USEC);
        json_u64(j, "warmup_usec", LAT_CTX_WARMUP_USEC);
        json_end(j, '}');
}

static void json_row(Json *j, unsigned size_kb, const Overhead *o, unsigned tasks,
                     const RowResult *res) {
        json_begin(j, '{');
        json_u64(j, "size_kb", size_kb);
        json_double(j, "overhead_usec", o->pipe_usec + o->sum_usec, 4);
        json_double(j, "pipe_usec", o->pipe_usec, 4);
        json_double(j, "sum_usec", o->sum_usec, 4);
        json_u64(j, "tasks", tasks);
        json_double(j, "usec", res->usec, 4);
        json_double(j, "usec_min", res->usec_min, 4);
        json_double(j, "usec_max", res->usec_max, 4);
        json_u64(j, "trips", res->trips);
        json_u64(j, "repetitions", LAT_CTX_REPETITIONS);
        json_end(j, '}');
}

/* Every row of one size: the overhead, the header, then each ring. */
static int run_size(const Sandbox *sb, BenchReport *rep, const Args *a, size_t si) {
        RingArgs ra = { .ctx = { .npipes = axis_max(a->tasks, a->n_tasks),
                                 .size_bytes = (size_t) a->sizes[si] << 10 } };
        Overhead o = { 0 };
        char line[128];
        int r;

        r = bench_run(sb, overhead_fn, &ra.ctx, &o, sizeof o);
        if (r < 0)
                return r == -EINTR ? r : log_error_errno(r, "Failed to measure the overhead: %m");
        ra.overhead_usec = o.pipe_usec + o.sum_usec;
        (void) lat_ctx_format_header(line, sizeof line, a->sizes[si], ra.overhead_usec);
        bench_printf(rep, "%s%s", si ? "\n" : "", line);
        for (size_t ti = 0; ti < a->n_tasks; ti++) {
                RowResult res = { 0 };

                ra.ctx.tasks = a->tasks[ti];
                r = bench_run(sb, ring_fn, &ra, &res, sizeof res);
                if (r < 0)
                        return r == -EINTR ? r
                                           : log_error_errno(r, "Failed to run a ring of %u: %m",
                                                             ra.ctx.tasks);
                (void) lat_ctx_format_row(line, sizeof line, ra.ctx.tasks, res.usec);
                bench_printf(rep, "%s", line);
                if (rep->json.f)
                        json_row(&rep->json, a->sizes[si], &o, ra.ctx.tasks, &res);
        }
        return 0;
}

static int run(const Args *a, const CliCommon *co) {
        _cleanup_sandbox_ Sandbox *sb = NULL;
        BenchReport rep;
        int r;

        if (cli_make_sandbox(co, &sb) < 0)
                return 1;
        if (bench_report_open(&rep, a->json, "lat_ctx", sb) < 0)
                return 1;
        if (rep.json.f) {
                json_parameters(&rep.json, a);
                json_key(&rep.json, "rows");
                json_begin(&rep.json, '[');
        }
        bench_printf(&rep, "Size/# tasks %s\n", a->label);
        r = 0;
        for (size_t si = 0; si < a->n_sizes && r >= 0 && !cli_stop; si++)
                r = run_size(sb, &rep, a, si);
        if (rep.json.f) {
                json_end(&rep.json, ']');
                json_bool(&rep.json, "interrupted", cli_stop != 0);
        }
        if (bench_report_close(&rep) < 0 && r >= 0)
                r = -EIO;
        if (cli_stop)
                return cli_interrupted();
        return r < 0 ? 1 : 0;
}

int lat_ctx_main(int argc, char *argv[]) {
        _cleanup_(cli_common_done) CliCommon co = CLI_COMMON_INIT;
        _cleanup_(args_done) Args a = { .label = "default" };
        unsigned max_tasks;
        char what[64];
        int r;

        r = parse_args(argc, argv, &a, &co);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        /* The ring's parent holds two ends of every pipe until it has forked them all. */
        max_tasks = axis_max(a.tasks, a.n_tasks);
        (void) snprintf(what, sizeof what, "lat_ctx --tasks %u", max_tasks);
        if (bench_check_tasks(what, max_tasks, 2 * (uint64_t) max_tasks) < 0)
                return EXIT_USAGE;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        return run(&a, &co);
}
