/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * reflex (IBM LSE, 2001; seed 000): "similar to lat_ctx of LMbench but much more aggressive;
 * keeps more than a single task active; # active tasks is 1/2 total number of tasks; result is
 * 'round trip' time". The original's source and flags are lost; this is a design after that
 * description: T threads dealt into A sets (A = T/2), each set a ring of pipes with one token, so
 * one thread per set is runnable at a time and A at once in all. The holder computes a calibrated
 * few microseconds and yields, --yields times, then computes once more and hands the token on,
 * blocking until its predecessor hands it back.
 */
#include "reflex.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "load.h"
#include "log.h"
#include "macro.h"

#define TASKS_MAX 1000000u
#define WORK_USEC_MAX 1000000u
#define YIELDS_MAX 1000u
#define CALIBRATE_USEC 20000u
#define THREAD_STACK_BYTES (256u << 10)

/* ---- the pure part */

/* A decimal in 1..1000000 at *p, advancing it. */
static int parse_part(const char **p, unsigned *ret) {
        unsigned long v = 0;
        const char *s = *p;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                v = v * 10 + (unsigned long) (*s - '0');
                if (v > 1000000)
                        return -EINVAL;
        }
        if (v == 0)
                return -EINVAL;
        *p = s;
        *ret = (unsigned) v;
        return 0;
}

int reflex_parse_active(const char *s, ReflexActive *ret) {
        ReflexActive a = { 0 };
        const char *p = s;
        unsigned n;

        if (parse_part(&p, &n) < 0)
                return -EINVAL;
        if (*p == '\0') {
                *ret = (ReflexActive){ .count = n };
                return 0;
        }
        a.num = n;
        if (*p++ != '/' || parse_part(&p, &a.den) < 0 || *p != '\0' || a.num > a.den)
                return -EINVAL;
        *ret = a;
        return 0;
}

unsigned reflex_active_sets(const ReflexActive *a, unsigned tasks) {
        uint64_t sets;

        if (a->count > 0)
                sets = a->count;
        else
                sets = a->den ? (uint64_t) tasks * a->num / a->den : 0;
        return (unsigned) MIN(MAX(sets, UINT64_C(1)), (uint64_t) MAX(tasks, 1u));
}

unsigned reflex_set_size(unsigned tasks, unsigned sets, unsigned i) {
        if (sets == 0 || i >= sets)
                return 0;
        return tasks / sets + (i < tasks % sets);
}

double reflex_round_trip_usec(uint64_t elapsed_usec, uint64_t round_trips) {
        if (round_trips == 0)
                return NAN;
        return (double) elapsed_usec / (double) round_trips;
}

uint64_t reflex_loops_for(uint64_t trial_loops, uint64_t trial_usec, unsigned work_usec) {
        double loops = (double) trial_loops * work_usec / (double) MAX(trial_usec, UINT64_C(1));

        return loops < 1 ? 1 : loops >= (double) UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t) loops;
}

int reflex_format_row(char *buf, size_t size, unsigned tasks, double usec) {
        return snprintf(buf, size, "%u %.3f\n", tasks, usec);
}

/* ---- the measured work */

/* Both ends of a pipe. */
typedef int Pipe[2];

typedef struct Params {
        unsigned tasks, sets;
        unsigned work_usec, yields;
        uint64_t duration_usec, warmup_usec;
} Params;

typedef struct RowResult {
        uint64_t round_trips, elapsed_usec, loops_per_work;
        double round_trip_usec;
} RowResult;

typedef struct Thread {
        pthread_t tid;
        int rd, wr; /* from the predecessor, to the successor */
        _Atomic uint64_t *round_trips; /* the set's; member 0 counts */
        const Params *p;
        uint64_t loops;
        atomic_bool *stop;
} Thread;

/* Work the compiler cannot drop: an empty asm with a memory clobber per loop. */
static void spin(uint64_t loops) {
        for (uint64_t i = 0; i < loops; i++)
                __asm__ __volatile__("" ::: "memory");
}

/* Spin loops in work_usec on this machine now, timed over at least CALIBRATE_USEC. */
static uint64_t calibrate(unsigned work_usec) {
        uint64_t loops = 1000, t;

        for (;;) {
                uint64_t t0 = now_usec();

                spin(loops);
                t = now_usec() - t0;
                if (t >= CALIBRATE_USEC || loops >= UINT64_MAX / 4)
                        break;
                loops *= 2;
        }
        return reflex_loops_for(loops, t, work_usec);
}

static void *thread_main(void *userdata) {
        Thread *th = userdata;
        bool first = th->round_trips != NULL;
        char token;

        while (read(th->rd, &token, 1) == 1) {
                /* Once stopped, pass the token on so the next thread sees it too, and end. */
                if (atomic_load_explicit(th->stop, memory_order_relaxed)) {
                        (void) !write(th->wr, &token, 1);
                        break;
                }
                if (first)
                        atomic_fetch_add_explicit(th->round_trips, 1, memory_order_relaxed);
                for (unsigned y = 0; y < th->p->yields; y++) {
                        spin(th->loops);
                        (void) sched_yield();
                }
                spin(th->loops);
                if (write(th->wr, &token, 1) != 1)
                        break;
        }
        return NULL;
}

static uint64_t total_round_trips(const _Atomic uint64_t *counts, unsigned sets) {
        uint64_t n = 0;

        for (unsigned s = 0; s < sets; s++)
                n += atomic_load_explicit(&counts[s], memory_order_relaxed);
        return n;
}

static void nap_until(uint64_t deadline_usec) {
        for (uint64_t now = now_usec(); now < deadline_usec; now = now_usec()) {
                uint64_t d = deadline_usec - now;
                struct timespec ts = { .tv_sec = (time_t) (d / 1000000),
                                       .tv_nsec = (long) (d % 1000000) * 1000 };

                (void) nanosleep(&ts, NULL);
        }
}

/* Each set's k threads from `base` on: thread j reads pipe base+j, writes base+(j+1)%k. */
static void wire_sets(const Params *p, Pipe *pipes, Thread *th, _Atomic uint64_t *counts) {
        unsigned base = 0;

        for (unsigned s = 0; s < p->sets; s++) {
                unsigned k = reflex_set_size(p->tasks, p->sets, s);

                for (unsigned j = 0; j < k; j++) {
                        Thread *t = &th[base + j];

                        t->rd = pipes[base + j][0];
                        t->wr = pipes[base + (j + 1) % k][1];
                        t->round_trips = j == 0 ? &counts[s] : NULL;
                }
                base += k;
        }
}

/* Starts the tokens, measures between the warm-up's end and the duration's, then stops. */
static void measure(const Params *p, Pipe *pipes, _Atomic uint64_t *counts, atomic_bool *stop,
                    RowResult *res) {
        unsigned base = 0;
        uint64_t t0, c0;

        for (unsigned s = 0; s < p->sets; s++) {
                (void) !write(pipes[base][1], "t", 1);
                base += reflex_set_size(p->tasks, p->sets, s);
        }
        nap_until(now_usec() + p->warmup_usec);
        t0 = now_usec();
        c0 = total_round_trips(counts, p->sets);
        nap_until(t0 + p->duration_usec);
        res->elapsed_usec = now_usec() - t0;
        res->round_trips = total_round_trips(counts, p->sets) - c0;
        atomic_store(stop, true);
}

typedef struct Rings {
        Pipe *pipes;
        Thread *th;
        _Atomic uint64_t *counts;
        unsigned n_pipes, n_started;
} Rings;

static void rings_done(Rings *r) {
        for (unsigned i = 0; i < r->n_started; i++)
                (void) pthread_join(r->th[i].tid, NULL);
        for (unsigned i = 0; i < r->n_pipes; i++) {
                (void) close(r->pipes[i][0]);
                (void) close(r->pipes[i][1]);
        }
        free(r->pipes);
        free(r->th);
        free(r->counts);
}

static int start_threads(Rings *run, const Params *p, uint64_t loops, atomic_bool *stop) {
        pthread_attr_t attr;
        int r = 0;

        if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, THREAD_STACK_BYTES))
                return -ENOMEM;
        for (unsigned i = 0; i < p->tasks; i++) {
                run->th[i].p = p;
                run->th[i].loops = loops;
                run->th[i].stop = stop;
                r = -pthread_create(&run->th[i].tid, &attr, thread_main, &run->th[i]);
                if (r < 0)
                        break;
                run->n_started++;
        }
        (void) pthread_attr_destroy(&attr);
        return r;
}

/* BenchFn: one task count, its threads in this process. */
static int row_fn(void *userdata, void *out) {
        const Params *p = userdata;
        RowResult *res = out;
        atomic_bool stop = false; /* before run: its cleanup joins the threads reading it */
        _cleanup_(rings_done) Rings run = {
                .pipes = calloc(p->tasks, sizeof *run.pipes),
                .th = calloc(p->tasks, sizeof *run.th),
                .counts = calloc(p->sets, sizeof *run.counts),
        };
        int r;

        if (!run.pipes || !run.th || !run.counts)
                return -ENOMEM;
        for (; run.n_pipes < p->tasks; run.n_pipes++)
                if (pipe2(run.pipes[run.n_pipes], O_CLOEXEC) < 0)
                        return negative_errno();
        res->loops_per_work = calibrate(p->work_usec);
        wire_sets(p, run.pipes, run.th, run.counts);
        r = start_threads(&run, p, res->loops_per_work, &stop);
        if (r < 0) {
                /* The ones started are blocked in read(): a token each way out ends them. */
                atomic_store(&stop, true);
                for (unsigned i = 0; i < run.n_started; i++)
                        (void) !write(run.pipes[i][1], "t", 1);
                return r;
        }
        measure(p, run.pipes, run.counts, &stop, res);
        res->round_trip_usec = reflex_round_trip_usec(res->elapsed_usec, res->round_trips);
        return 0;
}

/* ---- the command */

typedef struct Args {
        unsigned *tasks;
        size_t n_tasks;
        ReflexActive active;
        const char *active_arg;
        unsigned work_usec, yields;
        uint64_t duration_usec;
        const char *label, *json;
} Args;

static void args_done(Args *a) {
        a->tasks = mfree(a->tasks);
}

static void help(void) {
        printf("Usage: loadgen reflex [OPTIONS]\n"
               "\n"
               "IBM LSE's reflex (seed 000), \"similar to lat_ctx of LMbench but much more\n"
               "aggressive\": T threads of one process dealt into A active sets (A = T/2),\n"
               "each set a ring of pipes passing one token, so one thread per set is runnable\n"
               "at a time and A at once. The holder spins a calibrated --work microseconds\n"
               "and calls sched_yield(), --yields times, then spins once more, hands the token\n"
               "to its successor and blocks reading from its predecessor. A round trip is the\n"
               "token visiting every thread of its set once; the figure is the elapsed time\n"
               "over the round trips all sets made together (less is better), measured for\n"
               "--duration after a warm-up of a tenth of it, in the run's job cgroup.\n"
               "The original's flags are lost: these are loadgen's.\n"
               "\n"
               "  # tasks default\n"
               "  2 6.521\n"
               "  4 11.304\n"
               "\n"
               "  -t --tasks=AXIS        Thread counts T (default 2-128x2: 2, 4, ... 128;\n"
               "                         from 2). AXIS is a comma-separated list of N, A-B,\n"
               "                         A-B:STEP or A-BxFACTOR.\n"
               "  -a --active=N|P/Q      Active sets: N for every T (at most the smallest T),\n"
               "                         or the fraction P/Q of T, at least 1 (default 1/2).\n"
               "  -w --work=USEC         Spin per round, calibrated at the start of each row\n"
               "                         (default 1; 1 to %u).\n"
               "  -y --yields=N          sched_yield() rounds before each hand-off (default 1;\n"
               "                         0 to %u; 0 is a plain token ring).\n"
               "  -d --duration=SECONDS  Measured time per row (default 1).\n"
               "  -L --label=NAME        The column title (default \"default\").\n" CLI_HELP_CPUS
                       CLI_HELP_DIR CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE CLI_HELP_JSON
               "                         Rows: tasks, active_sets, round_trip_usec,\n"
               "                         round_trips, elapsed_usec, loops_per_work.\n"
               "  -h --help              Show this help.\n",
               WORK_USEC_MAX, YIELDS_MAX);
}

static int parse_option(int c, const char *arg, Args *a) {
        switch (c) {
        case 't':
                a->tasks = mfree(a->tasks);
                return bench_parse_axis("tasks", arg, 2, TASKS_MAX, &a->tasks, &a->n_tasks);
        case 'a':
                if (reflex_parse_active(arg, &a->active) < 0) {
                        log_error("Invalid --active \"%s\": want a number of sets N or a "
                                  "fraction P/Q of the tasks, 0 < P <= Q, e.g. 1/2.",
                                  arg);
                        return -EINVAL;
                }
                a->active_arg = arg;
                return 0;
        case 'w': return cli_parse_unsigned("work", arg, 1, WORK_USEC_MAX, &a->work_usec);
        case 'y': return cli_parse_unsigned("yields", arg, 0, YIELDS_MAX, &a->yields);
        default: return -EINVAL; /* getopt said why */
        }
}

/* 1: parsed, run; 0: --help done; -EINVAL: bad arguments (logged). */
static int parse_args(int argc, char *argv[], Args *a, CliCommon *co) {
        static const struct option options[] = {
                { "tasks", required_argument, NULL, 't' },
                { "active", required_argument, NULL, 'a' },
                { "work", required_argument, NULL, 'w' },
                { "yields", required_argument, NULL, 'y' },
                CLI_OPT_DURATION,
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

        while ((c = getopt_long(argc, argv, "t:a:w:y:d:L:j::c:h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, co);
                if (r < 0)
                        return -EINVAL;
                if (r > 0)
                        continue;
                if (c == 'h') {
                        help();
                        return 0;
                }
                if (parse_option(c, optarg, a) < 0)
                        return -EINVAL;
        }
        cli_take_report(co, &a->label, &a->json);
        if (co->duration_usec)
                a->duration_usec = co->duration_usec;
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen reflex --help.", argv[optind]);
                return -EINVAL;
        }
        if (!a->tasks &&
            bench_parse_axis("tasks", "2-128x2", 2, TASKS_MAX, &a->tasks, &a->n_tasks) < 0)
                return -EINVAL;
        for (size_t i = 0; i < a->n_tasks; i++)
                if (a->active.count > a->tasks[i]) {
                        log_error("Invalid --active %s: more sets than the %u tasks of --tasks.",
                                  a->active_arg, a->tasks[i]);
                        return -EINVAL;
                }
        return 1;
}

static void json_parameters(Json *j, const Args *a) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_string(j, "label", a->label);
        json_key(j, "tasks");
        json_begin(j, '[');
        for (size_t i = 0; i < a->n_tasks; i++)
                json_u64(j, NULL, a->tasks[i]);
        json_end(j, ']');
        if (a->active.count)
                json_u64(j, "active_sets", a->active.count);
        else {
                json_u64(j, "active_num", a->active.num);
                json_u64(j, "active_den", a->active.den);
        }
        json_u64(j, "work_usec", a->work_usec);
        json_u64(j, "yields", a->yields);
        json_u64(j, "duration_usec", a->duration_usec);
        json_u64(j, "warmup_usec", a->duration_usec / 10);
        json_end(j, '}');
}

static void json_row(Json *j, const Params *p, const RowResult *res) {
        json_begin(j, '{');
        json_u64(j, "tasks", p->tasks);
        json_u64(j, "active_sets", p->sets);
        json_double(j, "round_trip_usec", res->round_trip_usec, 4);
        json_u64(j, "round_trips", res->round_trips);
        json_u64(j, "elapsed_usec", res->elapsed_usec);
        json_u64(j, "loops_per_work", res->loops_per_work);
        json_end(j, '}');
}

static int run_rows(const Sandbox *sb, BenchReport *rep, const Args *a) {
        char line[128];
        int r;

        for (size_t i = 0; i < a->n_tasks && !cli_stop; i++) {
                Params p = {
                        .tasks = a->tasks[i],
                        .sets = reflex_active_sets(&a->active, a->tasks[i]),
                        .work_usec = a->work_usec,
                        .yields = a->yields,
                        .duration_usec = a->duration_usec,
                        .warmup_usec = a->duration_usec / 10,
                };
                RowResult res = { 0 };

                r = bench_run(sb, row_fn, &p, &res, sizeof res);
                if (r == -EINTR)
                        return r;
                if (r < 0)
                        return log_error_errno(r, "Failed to run reflex with %u tasks: %m",
                                               p.tasks);
                if (res.round_trips == 0) {
                        log_error("reflex with %u tasks made no round trip in %" PRIu64
                                  " us: is --duration too short for --work?",
                                  p.tasks, res.elapsed_usec);
                        return -ETIME;
                }
                (void) reflex_format_row(line, sizeof line, p.tasks, res.round_trip_usec);
                bench_printf(rep, "%s", line);
                if (rep->json.f)
                        json_row(&rep->json, &p, &res);
        }
        return 0;
}

static int run(const Args *a, const CliCommon *co) {
        _cleanup_sandbox_ Sandbox *sb = NULL;
        BenchReport rep;
        int r;

        if (cli_make_sandbox(co, &sb) < 0)
                return 1;
        if (bench_report_open(&rep, a->json, "reflex", sb) < 0)
                return 1;
        if (rep.json.f) {
                json_parameters(&rep.json, a);
                json_key(&rep.json, "rows");
                json_begin(&rep.json, '[');
        }
        bench_printf(&rep, "# tasks %s\n", a->label);
        r = run_rows(sb, &rep, a);
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

int reflex_main(int argc, char *argv[]) {
        _cleanup_(cli_common_done) CliCommon co = CLI_COMMON_INIT;
        _cleanup_(args_done) Args a = {
                .active = REFLEX_ACTIVE_DEFAULT,
                .work_usec = 1,
                .yields = 1,
                .duration_usec = 1000000,
                .label = "default",
        };
        unsigned max_tasks = 0;
        char what[64];
        int r;

        r = parse_args(argc, argv, &a, &co);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        for (size_t i = 0; i < a.n_tasks; i++)
                max_tasks = MAX(max_tasks, a.tasks[i]);
        /* Threads of one process, and every pipe of every set open in it. */
        (void) snprintf(what, sizeof what, "reflex --tasks %u", max_tasks);
        if (bench_check_tasks(what, max_tasks, 2 * (uint64_t) max_tasks) < 0)
                return EXIT_USAGE;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        return run(&a, &co);
}
