/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * perf bench sched pipe: two tasks ping-pong one int over two pipes, `loops` round trips; each
 * round trip is two wakeups and, on one CPU, two context switches. The same loop as perf's
 * worker_thread(): task 0 writes then reads, task 1 reads then writes. What loadgen adds is the
 * placement: both tasks pinned to one CPU, to two CPUs, or to two NUMA nodes, one row each.
 */
#include "pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "fileio.h"
#include "load.h"
#include "log.h"
#include "macro.h"

/* 1-5 s a row on this 2-CPU VM (5 usecs a round trip on one CPU, 15-25 across); perf's
 * default, 1000000, takes 25 s across. */
#define DEFAULT_LOOPS 200000u
#define DEFAULT_PLACEMENTS "same,cross"
#define MAX_NODES 1024u

static const char *const placement_names[_PIPE_PLACEMENT_MAX] = {
        [PIPE_NONE] = "none",
        [PIPE_SAME] = "same",
        [PIPE_CROSS] = "cross",
        [PIPE_NODE] = "node",
};

const char *pipe_placement_to_string(PipePlacement p) {
        return (unsigned) p < _PIPE_PLACEMENT_MAX ? placement_names[p] : NULL;
}

int pipe_parse_placements(const char *s, PipePlacement ret[PIPE_MAX_PLACEMENTS], size_t *ret_n,
                          size_t *ret_bad) {
        size_t n = 0;

        for (const char *p = s;;) {
                size_t len = strcspn(p, ",");
                PipePlacement found = _PIPE_PLACEMENT_MAX;

                for (unsigned i = 0; i < _PIPE_PLACEMENT_MAX; i++)
                        if (len == strlen(placement_names[i]) &&
                            strncmp(p, placement_names[i], len) == 0)
                                found = (PipePlacement) i;
                if (found == _PIPE_PLACEMENT_MAX || n >= PIPE_MAX_PLACEMENTS) {
                        if (ret_bad)
                                *ret_bad = (size_t) (p - s);
                        return -EINVAL;
                }
                ret[n++] = found;
                if (p[len] == '\0')
                        break;
                p += len + 1;
        }
        *ret_n = n;
        return 0;
}

int pipe_pick_cpus(PipePlacement p, const CpuMask *allowed, const CpuMask *const *nodes,
                   size_t n_nodes, int ret[2]) {
        int a = cpumask_next(allowed, -1), found = 0;

        switch (p) {
        case PIPE_NONE: ret[0] = ret[1] = -1; return 0;
        case PIPE_SAME:
                if (a < 0)
                        return -ENOENT;
                ret[0] = ret[1] = a;
                return 0;
        case PIPE_CROSS:
                if (a < 0 || cpumask_next(allowed, a) < 0)
                        return -ENOENT;
                ret[0] = a;
                ret[1] = cpumask_next(allowed, a);
                return 0;
        case PIPE_NODE:
                for (size_t i = 0; i < n_nodes && found < 2; i++)
                        CPUMASK_FOREACH(cpu, nodes[i])
                                if (cpumask_isset(allowed, (unsigned) cpu)) {
                                        ret[found++] = cpu;
                                        break;
                                }
                return found == 2 ? 0 : -ENOENT;
        default: return -EINVAL;
        }
}

int pipe_format_row(char *buf, size_t size, PipePlacement p, uint64_t loops, uint64_t usec) {
        double sec = (double) usec / 1e6;

        return snprintf(buf, size,
                        "%-6s Total time: %8.3f [sec] %14.6f usecs/op %11" PRIu64 " ops/sec\n",
                        pipe_placement_to_string(p), sec, (double) usec / (double) loops,
                        usec ? (uint64_t) ((double) loops / sec) : 0);
}

/* ---- the measured work */

typedef struct PipeRun {
        uint64_t loops;
        bool threads;
        int cpus[2]; /* -1: unpinned */
        /* set up by run_fn */
        int ping[2], pong[2]; /* task 0 -> task 1, task 1 -> task 0 */
        int ready[2], wake[2];
} PipeRun;

typedef struct Task {
        const PipeRun *run;
        unsigned nr;
        int error;
} Task;

static int pin(int cpu) {
        cpu_set_t set;

        if (cpu < 0)
                return 0;
        CPU_ZERO(&set);
        CPU_SET((unsigned) cpu, &set);
        /* The calling thread only: with --threads each thread pins itself. */
        return sched_setaffinity(0, sizeof set, &set) < 0 ? -errno : 0;
}

static int full_io(bool out, int fd, int *m) {
        for (;;) {
                ssize_t n = out ? write(fd, m, sizeof *m) : read(fd, m, sizeof *m);

                if (n == (ssize_t) sizeof *m)
                        return 0;
                if (n == 0)
                        return -EPIPE;
                if (n > 0)
                        return -EIO; /* an int never splits in a pipe */
                if (errno != EINTR)
                        return -errno;
        }
}

static int task_work(const Task *t) {
        const PipeRun *p = t->run;
        struct pollfd pfd = { .fd = p->wake[0], .events = POLLIN };
        int m = 0, r;

        r = pin(p->cpus[t->nr]);
        if (r < 0)
                return r;
        if (write(p->ready[1], "", 1) != 1)
                return -errno;
        while (poll(&pfd, 1, -1) != 1)
                if (errno != EINTR)
                        return -errno;
        for (uint64_t i = 0; i < p->loops; i++) {
                if (t->nr == 0) {
                        r = full_io(true, p->ping[1], &m);
                        if (r >= 0)
                                r = full_io(false, p->pong[0], &m);
                } else {
                        r = full_io(false, p->ping[0], &m);
                        if (r >= 0)
                                r = full_io(true, p->pong[1], &m);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

static void *thread_main(void *userdata) {
        Task *t = userdata;

        t->error = task_work(t);
        return NULL;
}

static int start_tasks(PipeRun *p, Task tasks[2], pid_t pids[2], pthread_t tids[2]) {
        for (unsigned i = 0; i < 2; i++) {
                tasks[i] = (Task){ .run = p, .nr = i };
                if (p->threads) {
                        int r = pthread_create(&tids[i], NULL, thread_main, &tasks[i]);

                        if (r != 0)
                                return -r;
                        continue;
                }
                pids[i] = fork();
                if (pids[i] < 0)
                        return -errno;
                if (pids[i] == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        _exit(task_work(&tasks[i]) < 0 ? 1 : 0);
                }
        }
        return 0;
}

/* Releases both tasks and waits for them: the time from the release to the end of both. */
static int ping_pong(PipeRun *p, uint64_t *ret_usec) {
        Task tasks[2];
        pid_t pids[2] = { -1, -1 };
        pthread_t tids[2];
        uint64_t t0;
        char c;
        int r;

        r = start_tasks(p, tasks, pids, tids);
        if (r < 0)
                return r; /* bench_run kills what started */
        for (unsigned i = 0; i < 2; i++)
                if (read(p->ready[0], &c, 1) != 1)
                        return -EIO;
        t0 = now_usec();
        if (write(p->wake[1], "", 1) != 1)
                return -errno;
        for (unsigned i = 0; i < 2; i++) {
                int status;

                if (p->threads) {
                        (void) pthread_join(tids[i], NULL);
                        if (tasks[i].error < 0)
                                r = tasks[i].error;
                        continue;
                }
                while (waitpid(pids[i], &status, 0) < 0)
                        if (errno != EINTR)
                                return -errno;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        r = -EIO;
        }
        if (r < 0)
                return r;
        *ret_usec = now_usec() - t0;
        return 0;
}

/* In the benchmark's process: everything it opens dies with it. */
static int run_fn(void *userdata, void *out) {
        PipeRun *p = userdata;

        if (pipe2(p->ping, O_CLOEXEC) < 0 || pipe2(p->pong, O_CLOEXEC) < 0 ||
            pipe2(p->ready, O_CLOEXEC) < 0 || pipe2(p->wake, O_CLOEXEC) < 0)
                return -errno;
        return ping_pong(p, out);
}

/* ---- loadgen pipe */

static void help(void) {
        printf("Usage: loadgen pipe [OPTIONS]\n"
               "\n"
               "perf bench sched pipe: two tasks ping-pong an int over two pipes, LOOPS round\n"
               "trips, once per placement. One op is one round trip (two wakeups; on one CPU,\n"
               "two context switches), as in perf. A line naming the size, then one row per\n"
               "placement, in the order given:\n"
               "\n"
               "  # 200000 round trips between two processes\n"
               "  same   Total time:    0.838 [sec]       4.191175 usecs/op      238596 ops/sec\n"
               "\n"
               "  -l --loops=N           Round trips per placement (default %u; perf's is\n"
               "                         1000000).\n"
               "  -P --placement=LIST    Comma-separated, from: none (unpinned, perf's default),\n"
               "                         same (both tasks on the first CPU of the run), cross\n"
               "                         (on its first two CPUs), node (on CPUs of two NUMA\n"
               "                         nodes; refused on a machine with one). "
               "Default " DEFAULT_PLACEMENTS ".\n"
               "  -T --threads           Two threads of one process instead of two processes\n"
               "                         (perf's -T).\n" CLI_HELP_CPUS CLI_HELP_NO_SANDBOX
                       CLI_HELP_NO_HOST_RESERVE CLI_HELP_JSON
               "  -h --help              Show this help.\n"
               "\n"
               "Total time runs from the release of both tasks (pinned and ready) to the end\n"
               "of both; usecs/op is Total time / LOOPS; ops/sec its inverse.\n",
               DEFAULT_LOOPS);
}

typedef struct Options {
        unsigned loops;
        PipePlacement placements[PIPE_MAX_PLACEMENTS];
        size_t n_placements;
        bool threads;
        const char *json;
        CliCommon co;
} Options;

static void options_done(Options *o) {
        cli_common_done(&o->co);
}

/* 0, 1 for --help (printed), -EINVAL (logged). */
static int parse_options(int argc, char *argv[], Options *o) {
        static const struct option options[] = {
                { "loops", required_argument, NULL, 'l' },
                { "placement", required_argument, NULL, 'P' },
                { "threads", no_argument, NULL, 'T' },
                CLI_OPT_CPUS,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_JSON,
                CLI_OPT_HELP,
                {},
        };
        const char *placement = DEFAULT_PLACEMENTS;
        size_t bad = 0;
        int c, r;

        while ((c = getopt_long(argc, argv, "l:P:Tc:j::h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, &o->co);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                switch (c) {
                case 'l':
                        if (cli_parse_unsigned("loops", optarg, 1, UINT32_MAX, &o->loops) < 0)
                                return -EINVAL;
                        break;
                case 'P': placement = optarg; break;
                case 'T': o->threads = true; break;
                case 'h': help(); return 1;
                default: return -EINVAL;
                }
        }
        cli_take_report(&o->co, NULL, &o->json);
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen pipe --help.", argv[optind]);
                return -EINVAL;
        }
        if (pipe_parse_placements(placement, o->placements, &o->n_placements, &bad) < 0) {
                log_error("Invalid --placement \"%s\" at \"%s\": want none, same, cross or node, "
                          "comma-separated (at most %u).",
                          placement, placement + bad, PIPE_MAX_PLACEMENTS);
                return -EINVAL;
        }
        return 0;
}

/* Each NUMA node's CPUs, in node order, from /sys/devices/system/node/node* /cpulist. */
static int read_nodes(CpuMask ***ret, size_t *ret_n) {
        _cleanup_(globfree) glob_t g = {};
        CpuMask **nodes;
        size_t n = 0;

        if (glob("/sys/devices/system/node/node[0-9]*/cpulist", 0, NULL, &g) != 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0; /* no NUMA in the kernel: one node */
        }
        nodes = calloc(MAX(g.gl_pathc, 1u), sizeof *nodes);
        if (!nodes)
                return -ENOMEM;
        for (size_t i = 0; i < g.gl_pathc && n < MAX_NODES; i++) {
                _cleanup_free_ char *s = NULL;

                if (read_full_at(AT_FDCWD, g.gl_pathv[i], 65536, &s, NULL) >= 0 &&
                    cpumask_parse(s, CPUMASK_MAX_CPUS, &nodes[n], NULL) >= 0)
                        n++;
        }
        *ret = nodes;
        *ret_n = n;
        return 0;
}

static void free_nodes(CpuMask **nodes, size_t n) {
        for (size_t i = 0; i < n; i++)
                cpumask_free(nodes[i]);
        free(nodes);
}

/* The CPUs of every placement, or the reason one cannot run here (logged, -EINVAL). */
static int plan_cpus(const Options *o, int cpus[][2]) {
        _cleanup_cpumask_ CpuMask *allowed = NULL;
        CpuMask **nodes = NULL;
        size_t n_nodes = 0;
        int r = 0;

        if (o->co.cpus)
                allowed = cpumask_copy(o->co.cpus);
        else {
                allowed = cpumask_new(CPUMASK_MAX_CPUS);
                if (allowed && sched_getaffinity(0, cpumask_cpu_set_size(allowed),
                                                 cpumask_cpu_set(allowed)) < 0)
                        return log_error_errno(errno,
                                               "Failed to read the CPUs loadgen may use: %m");
        }
        if (!allowed || read_nodes(&nodes, &n_nodes) < 0)
                return log_error_errno(ENOMEM, "Out of memory.");
        for (size_t i = 0; r >= 0 && i < o->n_placements; i++) {
                PipePlacement p = o->placements[i];

                if (pipe_pick_cpus(p, allowed, (const CpuMask *const *) nodes, n_nodes, cpus[i]) >=
                    0)
                        continue;
                if (p == PIPE_NODE)
                        log_error("--placement node needs CPUs on two NUMA nodes: this machine "
                                  "has %zu node%s%s.",
                                  n_nodes, n_nodes == 1 ? "" : "s",
                                  o->co.cpus && n_nodes > 1 ? " with CPUs in --cpus" : "");
                else
                        log_error("--placement cross needs two CPUs: the run has %u%s.",
                                  cpumask_count(allowed), o->co.cpus ? " (--cpus)" : "");
                r = -EINVAL;
        }
        free_nodes(nodes, n_nodes);
        return r;
}

static void json_parameters(Json *j, const Options *o, int cpus[][2]) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_u64(j, "loops", o->loops);
        json_string(j, "mode", o->threads ? "threads" : "processes");
        json_string(j, "op", "round trip");
        json_key(j, "placements");
        json_begin(j, '[');
        for (size_t i = 0; i < o->n_placements; i++) {
                json_begin(j, '{');
                json_string(j, "placement", pipe_placement_to_string(o->placements[i]));
                json_i64(j, "cpu0", cpus[i][0]);
                json_i64(j, "cpu1", cpus[i][1]);
                json_end(j, '}');
        }
        json_end(j, ']');
        json_end(j, '}');
}

static int run_row(const Options *o, const Sandbox *sb, BenchReport *rep, PipePlacement p,
                   const int cpus[2]) {
        PipeRun run = {
                .loops = o->loops,
                .threads = o->threads,
                .cpus = { cpus[0], cpus[1] },
        };
        uint64_t usec = 0;
        char line[128];
        int r;

        r = bench_run(sb, run_fn, &run, &usec, sizeof usec);
        if (r == -EINTR)
                return r;
        if (r < 0)
                return log_error_errno(r, "pipe, placement %s, failed: %m",
                                       pipe_placement_to_string(p));
        (void) pipe_format_row(line, sizeof line, p, o->loops, usec);
        bench_printf(rep, "%s", line);
        if (rep->json.f) {
                json_begin(&rep->json, '{');
                json_string(&rep->json, "placement", pipe_placement_to_string(p));
                json_i64(&rep->json, "cpu0", cpus[0]);
                json_i64(&rep->json, "cpu1", cpus[1]);
                json_u64(&rep->json, "loops", o->loops);
                json_u64(&rep->json, "total_usec", usec);
                json_double(&rep->json, "usecs_per_op", (double) usec / o->loops, 6);
                json_double(&rep->json, "ops_per_sec",
                            usec ? (double) o->loops * 1e6 / (double) usec : 0, 1);
                json_end(&rep->json, '}');
        }
        return 0;
}

int pipe_main(int argc, char *argv[]) {
        _cleanup_(options_done) Options o = { .loops = DEFAULT_LOOPS, .co = CLI_COMMON_INIT };
        _cleanup_sandbox_ Sandbox *sb = NULL;
        int cpus[PIPE_MAX_PLACEMENTS][2];
        BenchReport rep;
        int r;

        r = parse_options(argc, argv, &o);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (plan_cpus(&o, cpus) < 0 || bench_check_tasks("pipe", 2, 16) < 0)
                return EXIT_USAGE;
        r = cli_install_stop_handlers();
        if (r < 0)
                return log_error_errno(r, "Failed to install signal handlers: %m"), 1;
        if (cli_make_sandbox(&o.co, &sb) < 0)
                return 1;
        if (bench_report_open(&rep, o.json, "pipe", sb) < 0)
                return 1;
        if (rep.json.f) {
                json_parameters(&rep.json, &o, cpus);
                json_key(&rep.json, "rows");
                json_begin(&rep.json, '[');
        }
        bench_printf(&rep, "# %u round trips between two %s\n", o.loops,
                     o.threads ? "threads" : "processes");
        for (size_t i = 0; r >= 0 && i < o.n_placements && !cli_stop; i++)
                r = run_row(&o, sb, &rep, o.placements[i], cpus[i]);
        if (rep.json.f)
                json_end(&rep.json, ']');
        if (bench_report_close(&rep) < 0 && r >= 0)
                r = -EIO;
        if (cli_stop)
                return cli_interrupted();
        return r < 0 ? 1 : 0;
}
