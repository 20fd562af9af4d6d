/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "placement.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "clock.h"
#include "load.h"
#include "log.h"
#include "macro.h"
#include "proc.h"
#include "residency.h"
#include "topology.h"

#define DEFAULT_TASKS 4u
#define DEFAULT_MEM_SIZE (UINT64_C(256) << 20)
#define DEFAULT_SETTLE_USEC UINT64_C(0)
#define DEFAULT_DURATION_USEC UINT64_C(20000000)
#define NUMA_MAPS_MAX (16u << 20)

/* ---- pure parts */

double placement_local_pct(const PlacementTask *t) {
        if (t->total_kib == 0)
                return -1;
        return 100.0 * (double) t->end_kib / (double) t->total_kib;
}

void placement_format_counts(char *buf, size_t size, const PlacementTask *tasks, size_t n,
                             const int *node_ids, unsigned n_nodes) {
        size_t len = 0;

        if (size > 0)
                buf[0] = '\0';
        for (unsigned i = 0; i < n_nodes && len < size; i++) {
                unsigned count = 0;
                int w;

                for (size_t k = 0; k < n; k++)
                        count += tasks[k].end_node == node_ids[i];
                w = snprintf(buf + len, size - len, "%s%u", i > 0 ? "/" : "", count);
                if (w < 0)
                        return;
                len += (size_t) w;
        }
}

void placement_format_table(FILE *f, const PlacementTask *tasks, size_t n, const int *node_ids,
                            unsigned n_nodes) {
        uint64_t moves = 0, distance = 0, wait = 0;
        double least = -1, sum = 0;
        unsigned with_mem = 0;
        char counts[256], local[32];

        fprintf(f, "%-5s %-4s %9s %5s %4s %6s %9s %8s %7s\n", "Task", "Kind", "Mem(MiB)", "Start",
                "End", "Moves", "Distance", "Wait(s)", "Local%");
        for (size_t k = 0; k < n; k++) {
                const PlacementTask *t = &tasks[k];
                double pct = placement_local_pct(t);

                if (t->mem && pct >= 0) {
                        least = least < 0 || pct < least ? pct : least;
                        sum += pct;
                        with_mem++;
                        (void) snprintf(local, sizeof local, "%.1f", pct);
                } else
                        (void) snprintf(local, sizeof local, "-");
                fprintf(f, "%-5zu %-4s %9" PRIu64 " %5d %4d %6" PRIu32 " %9" PRIu64 " %8.2f %7s\n",
                        k, t->mem ? "mem" : "cpu", t->total_kib / 1024, t->start_node, t->end_node,
                        t->moves, t->distance, (double) t->wait_usec / 1e6, local);
                moves += t->moves;
                distance += t->distance;
                wait += t->wait_usec;
        }
        placement_format_counts(counts, sizeof counts, tasks, n, node_ids, n_nodes);
        if (with_mem > 0)
                (void) snprintf(local, sizeof local, "%.1f%% (mean %.1f%%)", least, sum / with_mem);
        else
                (void) snprintf(local, sizeof local, "-");
        fprintf(f,
                "Total: tasks per node at the end %s, %" PRIu64
                " cross-node moves, distance %" PRIu64
                ", %.2f task-seconds waiting, memory local %s\n",
                counts, moves, distance, (double) wait / 1e6, local);
}

/* ---- the run */

typedef struct Options {
        unsigned tasks, mem_tasks;
        uint64_t mem_size;
        int node; /* -1: the first node with CPUs in the run */
        bool release;
        uint64_t settle_usec, duration_usec;
        const char *json;
        CliCommon co;
} Options;

typedef struct Result {
        unsigned n_tasks, n_nodes;
        int node_ids[PLACEMENT_MAX_NODES];
        int node; /* where they started */
        PlacementTask tasks[PLACEMENT_MAX_TASKS];
} Result;

static void options_done(Options *o) {
        cli_common_done(&o->co);
}

static void help(void) {
        printf("Usage: loadgen placement [OPTIONS]\n"
               "\n"
               "Starts CPU-bound tasks on one NUMA node, some holding memory they touched there,\n"
               "and measures where a balancer (the kernel's, numad, cgbalanced) puts them: each\n"
               "task's cross-node moves and the sum of their node distances (sampled every\n"
               "10 ms), its time waiting for a CPU (schedstat), and at the end the node it ran on\n"
               "and, for a task with memory, the share of its pages on that node (numa_maps).\n"
               "\n"
               "  -n --tasks=N           CPU-only tasks (default %u).\n"
               "  -M --mem-tasks=N       Tasks holding memory, walked page by page over and over\n"
               "                         (default 0).\n"
               "  -s --mem-size=SIZE     Each memory task's (default 256M).\n"
               "  -N --node=ID           The node they start on (default: the first with CPUs in\n"
               "                         the run).\n"
               "  -r --release           Once their memory is in place, allow every CPU of the\n"
               "                         run (the kernel and numad may then move them); without,\n"
               "                         they stay pinned, as a bad launch leaves them, for\n"
               "                         cgbalanced with override_foreign_affinity = yes.\n"
               "  -e --settle=SECONDS    Between the memory in place (\"the tasks are ready\" on\n"
               "                         stderr) and the measurement (default 0).\n"
               "  -d --duration=SECONDS  How long to measure (default 20).\n" CLI_HELP_CPUS
                       CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE CLI_HELP_JSON
               "  -h --help              Show this help.\n",
               DEFAULT_TASKS);
}

static int parse_seconds_option(const char *name, const char *arg, uint64_t *ret) {
        if (streq(arg, "0")) {
                *ret = 0;
                return 0;
        }
        if (parse_seconds(arg, ret) < 0) {
                log_error("Invalid --%s \"%s\": want seconds, e.g. 2 or 0.5.", name, arg);
                return -EINVAL;
        }
        return 0;
}

/* 0, 1 for --help (printed), -EINVAL (logged). */
static int parse_options(int argc, char *argv[], Options *o) {
        static const struct option options[] = {
                { "tasks", required_argument, NULL, 'n' },
                { "mem-tasks", required_argument, NULL, 'M' },
                { "mem-size", required_argument, NULL, 's' },
                { "node", required_argument, NULL, 'N' },
                { "release", no_argument, NULL, 'r' },
                { "settle", required_argument, NULL, 'e' },
                CLI_OPT_DURATION,
                CLI_OPT_CPUS,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_JSON,
                CLI_OPT_HELP,
                {},
        };
        unsigned node;
        int c, r;

        while ((c = getopt_long(argc, argv, "n:M:s:N:re:d:c:j::h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, &o->co);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                switch (c) {
                case 'n':
                        if (cli_parse_unsigned("tasks", optarg, 0, PLACEMENT_MAX_TASKS, &o->tasks) <
                            0)
                                return -EINVAL;
                        break;
                case 'M':
                        if (cli_parse_unsigned("mem-tasks", optarg, 0, PLACEMENT_MAX_TASKS,
                                               &o->mem_tasks) < 0)
                                return -EINVAL;
                        break;
                case 's':
                        if (parse_size(optarg, &o->mem_size) < 0 || o->mem_size == 0 ||
                            o->mem_size > (UINT64_C(1) << 40)) {
                                log_error("Invalid --mem-size \"%s\": want a size, e.g. 256M, up "
                                          "to 1T.",
                                          optarg);
                                return -EINVAL;
                        }
                        break;
                case 'N':
                        if (cli_parse_unsigned("node", optarg, 0, 4095, &node) < 0)
                                return -EINVAL;
                        o->node = (int) node;
                        break;
                case 'r': o->release = true; break;
                case 'e':
                        if (parse_seconds_option("settle", optarg, &o->settle_usec) < 0)
                                return -EINVAL;
                        break;
                case 'h': help(); return 1;
                default: return -EINVAL;
                }
        }
        cli_take_report(&o->co, NULL, &o->json);
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen placement --help.",
                          argv[optind]);
                return -EINVAL;
        }
        if (o->tasks + o->mem_tasks == 0 || o->tasks + o->mem_tasks > PLACEMENT_MAX_TASKS) {
                log_error("--tasks and --mem-tasks start %u tasks: want 1 to %u.",
                          o->tasks + o->mem_tasks, PLACEMENT_MAX_TASKS);
                return -EINVAL;
        }
        return 0;
}

/* The CPUs of the run (loadgen's affinity, inside its sandbox) and of node within them. */
static int run_cpus(const Topology *t, int node, CpuMask **ret_all, CpuMask **ret_node) {
        _cleanup_cpumask_ CpuMask *all = cpumask_new(CPUMASK_MAX_CPUS), *on = NULL;
        const CpuMask *cpus = node >= 0 ? topology_node_cpus(t, (unsigned) node) : NULL;

        if (!all)
                return -ENOMEM;
        if (sched_getaffinity(0, cpumask_cpu_set_size(all), cpumask_cpu_set(all)) < 0)
                return negative_errno();
        if (!cpus)
                return -ENOENT;
        on = cpumask_copy(all);
        if (!on)
                return -ENOMEM;
        cpumask_and(on, on, cpus);
        if (cpumask_count(on) == 0)
                return -ENOENT;
        *ret_all = TAKE_PTR(all);
        *ret_node = TAKE_PTR(on);
        return 0;
}

/* The first node with a CPU in the run: -ENOENT if none. */
static int first_node(const Topology *t) {
        for (unsigned i = 0; i < topology_n_nodes(t); i++) {
                CpuMask *all = NULL, *on = NULL;
                int id = topology_node_id(t, i);

                if (run_cpus(t, id, &all, &on) >= 0) {
                        cpumask_free(all);
                        cpumask_free(on);
                        return id;
                }
        }
        return -ENOENT;
}

/* A task's life: pinned to cpus, its memory touched there, one byte on ready, then asleep until go
 * ends (no balancer sees it busy before the measurement starts), then work until killed. Never
 * returns. */
__attribute__((noreturn)) static void task_main(const CpuMask *cpus, uint64_t mem_size, int ready,
                                                int go) {
        char c;
        long ps = sysconf(_SC_PAGESIZE);
        size_t page = ps > 0 ? (size_t) ps : 4096, n = 0;
        volatile unsigned char *m = NULL;
        volatile uint64_t spin = 0;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (sched_setaffinity(0, cpumask_cpu_set_size(cpus), cpumask_cpu_set(cpus)) < 0)
                _exit(EXIT_FAILURE);
        if (mem_size > 0) {
                void *p = mmap(NULL, (size_t) mem_size, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

                if (p == MAP_FAILED)
                        _exit(EXIT_FAILURE);
                m = p;
                n = (size_t) mem_size / page;
                for (size_t i = 0; i < n; i++)
                        m[i * page] = 1;
        }
        if (write(ready, "r", 1) != 1)
                _exit(EXIT_FAILURE);
        while (read(go, &c, 1) < 0 && errno == EINTR)
                ;
        for (size_t pass = 0;; pass++) {
                if (m)
                        for (size_t i = 0; i < n; i++)
                                m[i * page + pass % page] += 1;
                else
                        spin++;
        }
}

static void kill_tasks(const pid_t *pids, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (pids[i] > 0)
                        (void) kill(pids[i], SIGKILL);
        for (size_t i = 0; i < n; i++)
                if (pids[i] > 0)
                        (void) waitpid(pids[i], NULL, 0);
}

static uint64_t wait_usec_of(int proc_fd, pid_t pid) {
        TaskSchedstat ss;

        return proc_task_schedstat_read_at(proc_fd, pid, 0, &ss) >= 0 ? ss.wait_ns / 1000 : 0;
}

/* Reads the one byte each of n tasks writes once ready: 0, or -ECHILD when the pipe ends first (a
 * task died before it was ready). */
static int wait_ready(int fd, size_t n) {
        for (size_t ready = 0; ready < n;) {
                char buf[PLACEMENT_MAX_TASKS];
                ssize_t k = read(fd, buf, sizeof buf);

                if (k == 0)
                        return -ECHILD;
                if (k < 0 && errno != EINTR)
                        return negative_errno();
                if (k > 0)
                        ready += (size_t) k;
        }
        return 0;
}

/* Samples every RESIDENCY_SAMPLE_USEC for usec. */
static void sample_for(ResidencySampler *rs, uint64_t usec) {
        for (uint64_t end = clock_usec(CLOCK_MONOTONIC) + usec, now;
             (now = clock_usec(CLOCK_MONOTONIC)) < end;) {
                sleep_usec(MIN(end - now, (uint64_t) RESIDENCY_SAMPLE_USEC));
                residency_sampler_sample(rs);
        }
}

/*
 * Starts the tasks from node's CPUs (this process pinned there while it forks, so none runs a
 * moment elsewhere); returns the read end of the pipe on which each says it is ready (its memory
 * in place), or -errno, and in *ret_go the pipe whose closing starts their work.
 */
static int start_tasks(const Options *o, const CpuMask *all, const CpuMask *on, pid_t *pids,
                       Result *res, int *ret_go) {
        _cleanup_close_ int rfd = -EBADF, wfd = -EBADF, go_r = -EBADF, go_w = -EBADF;
        int fds[2], r = 0;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rfd = fds[0];
        wfd = fds[1];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        go_r = fds[0];
        go_w = fds[1];
        if (sched_setaffinity(0, cpumask_cpu_set_size(on), cpumask_cpu_set(on)) < 0)
                return negative_errno();
        for (size_t i = 0; r >= 0 && i < res->n_tasks; i++) {
                res->tasks[i].mem = i >= o->tasks;
                pids[i] = fork();
                if (pids[i] < 0) {
                        r = negative_errno();
                        break;
                }
                if (pids[i] == 0) {
                        (void) close(rfd);
                        (void) close(go_w);
                        task_main(on, res->tasks[i].mem ? o->mem_size : 0, wfd, go_r);
                }
        }
        if (sched_setaffinity(0, cpumask_cpu_set_size(all), cpumask_cpu_set(all)) < 0 && r >= 0)
                r = negative_errno();
        if (r < 0)
                return r;
        *ret_go = TAKE_FD(go_w);
        return TAKE_FD(rfd);
}

static void end_memory(int proc_fd, pid_t pid, const Result *res, PlacementTask *t) {
        for (unsigned i = 0; i < res->n_nodes; i++) {
                uint64_t kib = 0;

                if (proc_task_numa_maps_read_at(proc_fd, pid, (unsigned) res->node_ids[i],
                                                NUMA_MAPS_MAX, &kib) < 0)
                        continue;
                t->kib[i] = kib;
                t->total_kib += kib;
                if (res->node_ids[i] == t->end_node)
                        t->end_kib = kib;
        }
}

static int measure(const Options *o, const Topology *t, Result *res) {
        _cleanup_residency_sampler_ ResidencySampler *rs = NULL;
        _cleanup_cpumask_ CpuMask *all = NULL, *on = NULL;
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int ready_fd = -EBADF, go = -EBADF;
        pid_t pids[PLACEMENT_MAX_TASKS] = {};
        uint64_t wait0[PLACEMENT_MAX_TASKS] = {};
        int r;

        if (proc_fd < 0)
                return negative_errno();
        r = run_cpus(t, res->node, &all, &on);
        if (r < 0)
                return r;
        r = residency_sampler_new_at(t, proc_fd, &rs);
        if (r < 0)
                return r;
        r = ready_fd = start_tasks(o, all, on, pids, res, &go);
        if (r >= 0)
                r = wait_ready(ready_fd, res->n_tasks);
        if (r >= 0) {
                log_info("placement: the tasks are ready, their memory on node %d", res->node);
                sleep_usec(o->settle_usec);
        }
        /* The measurement starts here, the same moment for every balancer: the tasks pinned to
         * their node with their memory there, released now or left so. */
        for (size_t i = 0; r >= 0 && i < res->n_tasks; i++) {
                if (o->release &&
                    sched_setaffinity(pids[i], cpumask_cpu_set_size(all), cpumask_cpu_set(all)) < 0)
                        r = negative_errno();
                wait0[i] = wait_usec_of(proc_fd, pids[i]);
                if (r >= 0)
                        r = residency_sampler_add(rs, pids[i], NULL);
                res->tasks[i].start_node = residency_sampler_initial_node(rs, i);
        }
        (void) close(go); /* they start working, all at once */
        go = -EBADF;
        if (r >= 0)
                sample_for(rs, o->duration_usec);
        for (size_t i = 0; r >= 0 && i < res->n_tasks; i++) {
                PlacementTask *pt = &res->tasks[i];
                const Residency *x = residency_sampler_get(rs, i);

                pt->moves = residency_sampler_moves(rs, i, &pt->distance);
                pt->end_node = x && x->last_node >= 0 ? res->node_ids[x->last_node] : -1;
                pt->wait_usec = wait_usec_of(proc_fd, pids[i]) - wait0[i];
                if (pt->mem)
                        end_memory(proc_fd, pids[i], res, pt);
        }
        kill_tasks(pids, res->n_tasks);
        return r;
}

typedef struct Run {
        const Options *o;
        const Topology *t;
        const Result *tmpl; /* the tasks and nodes, filled in by the measurement */
} Run;

static int run_fn(void *userdata, void *out) {
        const Run *run = userdata;

        *(Result *) out = *run->tmpl;
        return measure(run->o, run->t, out);
}

static void json_report(Json *j, const Options *o, const Result *res) {
        json_key(j, "parameters");
        json_begin(j, '{');
        json_u64(j, "tasks", o->tasks);
        json_u64(j, "mem_tasks", o->mem_tasks);
        json_u64(j, "mem_size", o->mem_size);
        json_i64(j, "node", res->node);
        json_bool(j, "release", o->release);
        json_u64(j, "settle_usec", o->settle_usec);
        json_u64(j, "duration_usec", o->duration_usec);
        json_end(j, '}');
        json_key(j, "rows");
        json_begin(j, '[');
        for (size_t i = 0; i < res->n_tasks; i++) {
                const PlacementTask *t = &res->tasks[i];

                json_begin(j, '{');
                json_u64(j, "task", i);
                json_string(j, "kind", t->mem ? "mem" : "cpu");
                json_i64(j, "start_node", t->start_node);
                json_i64(j, "end_node", t->end_node);
                json_u64(j, "moves", t->moves);
                json_u64(j, "distance", t->distance);
                json_u64(j, "wait_usec", t->wait_usec);
                json_u64(j, "mem_kib", t->total_kib);
                json_u64(j, "local_kib", t->end_kib);
                json_end(j, '}');
        }
        json_end(j, ']');
}

typedef struct Sweep {
        const Options *o;
        const Topology *t;
        Result *res;
} Sweep;

static int sweep(void *userdata, Sandbox *sb, BenchReport *rep) {
        const Sweep *s = userdata;
        Run run = { .o = s->o, .t = s->t, .tmpl = s->res };
        int r;

        r = bench_run(sb, run_fn, &run, s->res, sizeof *s->res);
        if (r == -EINTR)
                return r;
        if (r == -ECHILD)
                return log_error_errno(r,
                                       "A task could not pin itself to node %d or get its "
                                       "%" PRIu64 " MiB there.",
                                       s->res->node, s->o->mem_size >> 20);
        if (r < 0)
                return log_error_errno(r, "placement failed: %m");
        bench_printf(rep,
                     "# %u tasks (%u holding %" PRIu64 " MiB) started on node %d, %s, "
                     "%.1f s\n",
                     s->res->n_tasks, s->o->mem_tasks, s->o->mem_size >> 20, s->res->node,
                     s->o->release ? "released" : "left pinned",
                     (double) s->o->duration_usec / 1e6);
        if (rep->table)
                placement_format_table(rep->table, s->res->tasks, s->res->n_tasks, s->res->node_ids,
                                       s->res->n_nodes);
        if (rep->json.f)
                json_report(&rep->json, s->o, s->res);
        return 0;
}

int placement_main(int argc, char *argv[]) {
        _cleanup_(options_done) Options o = { .tasks = DEFAULT_TASKS,
                                              .mem_size = DEFAULT_MEM_SIZE,
                                              .node = -1,
                                              .settle_usec = DEFAULT_SETTLE_USEC,
                                              .duration_usec = DEFAULT_DURATION_USEC,
                                              .co = CLI_COMMON_INIT };
        _cleanup_topology_ Topology *t = NULL;
        _cleanup_free_ Result *res = calloc(1, sizeof *res);
        CpuMask *all = NULL, *on = NULL;
        int r;

        if (!res)
                return log_error_errno(ENOMEM, "Out of memory."), 1;
        r = parse_options(argc, argv, &o);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (o.co.duration_usec > 0)
                o.duration_usec = o.co.duration_usec;
        r = topology_new_from_system(&t);
        if (r < 0)
                return log_error_errno(r, "Failed to read the machine's topology: %m"), 1;
        if (topology_n_nodes(t) > PLACEMENT_MAX_NODES)
                return log_error_errno(E2BIG, "More than %u NUMA nodes.", PLACEMENT_MAX_NODES), 1;
        if (o.node < 0)
                o.node = first_node(t);
        r = o.node < 0 ? -ENOENT : run_cpus(t, o.node, &all, &on);
        cpumask_free(all);
        cpumask_free(on);
        if (r < 0) {
                log_error("Node %d has no CPU loadgen may use (see --cpus and --node).", o.node);
                return EXIT_USAGE;
        }
        if (bench_check_tasks("placement", 1 + o.tasks + o.mem_tasks, 16) < 0)
                return EXIT_USAGE;
        res->n_tasks = o.tasks + o.mem_tasks;
        res->node = o.node;
        res->n_nodes = topology_n_nodes(t);
        for (unsigned i = 0; i < res->n_nodes; i++)
                res->node_ids[i] = topology_node_id(t, i);
        return bench_main("placement", o.json, &o.co, sweep, &(Sweep){ &o, t, res });
}
