/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "schedbench.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchmark.h"
#include "cli.h"
#include "fileio.h"
#include "hackbench.h"
#include "load.h"
#include "log.h"
#include "macro.h"
#include "residency.h"
#include "topology.h"

#define DEFAULT_TASKS "4,8,16,32,64"
#define MAX_TASKS 1024u
#define MAX_SIZE 100000000u /* elements: 2 GB a task */
#define MAX_SWEEPS 1000000u
#define MAX_CPUS 1024u /* CPUs whose ticks the JSON lists one by one */
#define DISTURB_GROUPS 20u /* numa_test ran `hackbench 20` */

/* ---- pure parts */

void schedbench_format_summary(FILE *f, unsigned tasks, const char *label, double avg_user_s,
                               double elapsed_s, double total_user_s, double total_sys_s) {
        fprintf(f, "Schedbench %u:\n%20s %10s %10s %10s %10s\n", tasks, "", "AvgUser", "Elapsed",
                "TotalUser", "TotalSys");
        fprintf(f, "%20s %10.2f %10.2f %10.2f %10.2f\n", label, avg_user_s, elapsed_s, total_user_s,
                total_sys_s);
}

void schedbench_format_residency_header(FILE *f, const int *node_ids, unsigned n_nodes) {
        fprintf(f, "Job ");
        for (unsigned i = 0; i < n_nodes; i++)
                fprintf(f, " node%02d", node_ids[i]);
        fprintf(f, " | iSched MSched   | UserTime(s)\n");
}

static void format_node(char *buf, size_t size, int node) {
        if (node < 0)
                snprintf(buf, size, "-");
        else
                snprintf(buf, size, "%d", node);
}

void schedbench_format_residency_row(FILE *f, unsigned job, const double *pct, unsigned n_nodes,
                                     int isched, int msched, double user_s) {
        char i[16], m[16];

        format_node(i, sizeof i, isched);
        format_node(m, sizeof m, msched);
        fprintf(f, "%3u ", job);
        for (unsigned k = 0; k < n_nodes; k++)
                fprintf(f, " %6.1f", pct[k]);
        fprintf(f, " | %6s %6s %s | %11.2f\n", i, m, isched != msched ? "*" : " ", user_s);
}

/* ---- the tasks */

static int safe_close(int fd) {
        if (fd >= 0)
                (void) close(fd);
        return -EBADF;
}

typedef struct TaskResult {
        pid_t pid;
        int error; /* the task's own: -ENOMEM */
        int initial_cpu; /* sched_getcpu() first thing after fork: where the scheduler put it */
        int initial_node, most_node; /* node ids, -1 unknown */
        uint64_t user_usec, sys_usec, end_usec;
        uint64_t samples;
        double checksum; /* of a[]: keeps the sweeps from being optimised away */
        Residency res; /* the sampler's, copied when the tasks ended */
        uint64_t cpu_ticks[MAX_CPUS];
} TaskResult;

typedef struct SchedOut {
        uint64_t start_usec, end_usec; /* the release, the last task's end */
        bool disturb_started;
        int disturb_error; /* hackbench_once()'s: -ENOSYS unavailable */
        uint64_t disturb_offset_usec, disturb_usec;
        TaskResult tasks[]; /* ntasks */
} SchedOut;

typedef struct Schedbench {
        unsigned ntasks, sweeps, size;
        bool disturb;
        uint64_t disturb_after_usec;
        const Topology *topology; /* the sampler's CPU -> node map */
        int proc_fd;
        const int *node_ids; /* by node index, as the sampler's */
        unsigned n_nodes;
        uint64_t hz; /* clock ticks a second, for the JSON */
} Schedbench;

static uint64_t splitmix64(uint64_t *s) {
        uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/*
 * randupdt: a and b of size + 1 doubles (numa_test's indexes run from 1 to 1e6 over arrays of
 * 1e6: the extra element keeps that off-by-one in bounds), ix of size random indexes in
 * [1, size]; sweeps of a[ix[i]] += b[i] once released. Runs in the task's own process.
 */
static _Noreturn void randupdt(const Schedbench *s, unsigned idx, TaskResult *t, int ready_fd,
                               int go_fd) {
        uint64_t rng = idx + 1;
        double *a, *b, sum = 0;
        unsigned *ix;
        char c = 0;

        t->initial_cpu = sched_getcpu();
        a = calloc((size_t) s->size + 1, sizeof *a);
        b = malloc(((size_t) s->size + 1) * sizeof *b);
        ix = malloc((size_t) s->size * sizeof *ix);
        if (!a || !b || !ix) {
                t->error = -ENOMEM;
                _exit(1);
        }
        for (unsigned i = 0; i <= s->size; i++)
                b[i] = 1.0 + (double) (i & 7);
        for (unsigned i = 0; i < s->size; i++)
                ix[i] = 1 + (unsigned) (splitmix64(&rng) % s->size);
        if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 0)
                _exit(1);
        for (unsigned k = 0; k < s->sweeps; k++)
                for (unsigned i = 0; i < s->size; i++)
                        a[ix[i]] += b[i];
        for (unsigned i = 0; i <= s->size; i++)
                sum += a[i];
        t->checksum = sum;
        t->end_usec = now_usec();
        _exit(0);
}

/* The disturbance: hackbench 20 in a process of its own, beside the tasks. */
static _Noreturn void disturber(SchedOut *out) {
        HackbenchParams p;
        uint64_t usec = 0;

        hackbench_params_init(&p);
        p.groups = DISTURB_GROUPS;
        out->disturb_error = hackbench_once(&p, NULL, &usec);
        out->disturb_usec = usec;
        _exit(0);
}

static pid_t fork_child(void) {
        pid_t pid = fork();

        if (pid == 0)
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        return pid;
}

/* Forks the tasks, waits until each is ready; the caller releases them by closing *go_w. */
static int start_tasks(const Schedbench *s, SchedOut *out, int *go_w) {
        _cleanup_close_ int ready_r = -EBADF, ready_w = -EBADF, go_r = -EBADF;
        int p[2];
        char c;

        if (pipe2(p, O_CLOEXEC) < 0)
                return log_error_errno(errno, "Failed to make a pipe: %m");
        ready_r = p[0];
        ready_w = p[1];
        if (pipe2(p, O_CLOEXEC) < 0)
                return log_error_errno(errno, "Failed to make a pipe: %m");
        go_r = p[0];
        *go_w = p[1];
        for (unsigned i = 0; i < s->ntasks; i++) {
                pid_t pid;

                pid = fork_child();

                if (pid < 0)
                        return log_error_errno(errno, "Failed to fork task %u: %m", i + 1);
                if (pid == 0) {
                        (void) close(*go_w);
                        randupdt(s, i, &out->tasks[i], ready_w, go_r);
                }
                out->tasks[i].pid = pid;
        }
        ready_w = safe_close(ready_w);
        for (unsigned i = 0; i < s->ntasks; i++)
                if (read(ready_r, &c, 1) != 1)
                        return log_error("Task %u of %u did not start (out of memory?).", i + 1,
                                         s->ntasks),
                               -EIO;
        return 0;
}

static int task_index(const Schedbench *s, const SchedOut *out, pid_t pid) {
        for (unsigned i = 0; i < s->ntasks; i++)
                if (out->tasks[i].pid == pid)
                        return (int) i;
        return -1;
}

/* A task ended: its rusage, and the sampler's last word on where it ran. */
static int task_ended(const Schedbench *s, ResidencySampler *rs, unsigned i, int status,
                      const struct rusage *ru, TaskResult *t) {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                if (t->error == -ENOMEM)
                        return log_error_errno(ENOMEM, "A task could not allocate %u elements.",
                                               s->size);
                return log_error("A randupdt task ended with status %d.", status), -EIO;
        }
        t->user_usec = (uint64_t) ru->ru_utime.tv_sec * 1000000 + (uint64_t) ru->ru_utime.tv_usec;
        t->sys_usec = (uint64_t) ru->ru_stime.tv_sec * 1000000 + (uint64_t) ru->ru_stime.tv_usec;
        residency_sampler_finish(rs, i, t->user_usec);
        return 0;
}

/* Reaps what ended: 0, or the error of a task that failed. */
static int reap(const Schedbench *s, ResidencySampler *rs, SchedOut *out, unsigned *live,
                pid_t *dist) {
        struct rusage ru;
        pid_t pid;
        int status, r;

        while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
                int i = task_index(s, out, pid);

                if (pid == *dist) {
                        *dist = 0;
                        continue;
                }
                if (i < 0)
                        continue;
                r = task_ended(s, rs, (unsigned) i, status, &ru, &out->tasks[i]);
                if (r < 0)
                        return r;
                (*live)--;
        }
        return 0;
}

static void nap_until(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / 1000000),
                               .tv_nsec = (long) (usec % 1000000) * 1000 };

        (void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Samples every task until all ended, starting the disturbance on time. */
static int sample_loop(const Schedbench *s, ResidencySampler *rs, SchedOut *out) {
        uint64_t next = out->start_usec;
        unsigned live = s->ntasks;
        pid_t dist = 0;
        int r = 0;

        while (live > 0) {
                if (s->disturb && !out->disturb_started &&
                    now_usec() >= out->start_usec + s->disturb_after_usec) {
                        out->disturb_offset_usec = now_usec() - out->start_usec;
                        dist = fork_child();
                        if (dist < 0)
                                return log_error_errno(errno, "Failed to fork hackbench: %m");
                        if (dist == 0)
                                disturber(out);
                        out->disturb_started = true;
                }
                residency_sampler_sample(rs);
                r = reap(s, rs, out, &live, &dist);
                if (r < 0)
                        return r;
                next += RESIDENCY_SAMPLE_USEC;
                if (live > 0)
                        nap_until(next);
        }
        /* hackbench ends on its own: wait for it, so its processes do not outlive the row */
        if (dist > 0 && waitpid(dist, NULL, 0) < 0)
                return log_error_errno(errno, "Failed to wait for hackbench: %m");
        return 0;
}

/* The sampler's figures of every task into out, which the parent reads back. */
static void collect(const Schedbench *s, const ResidencySampler *rs, SchedOut *out) {
        for (unsigned i = 0; i < s->ntasks; i++) {
                TaskResult *t = &out->tasks[i];
                /* iSched: where the task found itself first thing after fork, not where the
                 * sampler first saw it (after its set-up) */
                int node = residency_sampler_cpu_node(rs, t->initial_cpu);

                t->res = *residency_sampler_get(rs, i);
                t->samples = residency_sampler_samples(rs, i);
                for (unsigned c = 0; c < MAX_CPUS; c++)
                        t->cpu_ticks[c] = residency_sampler_cpu_ticks(rs, i, c);
                t->initial_node = node >= 0 ? residency_sampler_node_id(rs, (unsigned) node) : -1;
                t->most_node = residency_sampler_most_node(rs, i);
                out->end_usec = MAX(out->end_usec, t->end_usec);
        }
}

/* One row's work, in the job group: out is a SchedOut with ntasks tasks. */
static int schedbench_once(void *userdata, void *outp) {
        const Schedbench *s = userdata;
        SchedOut *out = outp;
        _cleanup_residency_sampler_ ResidencySampler *rs = NULL;
        _cleanup_close_ int go_w = -EBADF;
        int r;

        r = residency_sampler_new_at(s->topology, s->proc_fd, &rs);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the residency sampler: %m");
        out->disturb_error = 0;
        r = start_tasks(s, out, &go_w);
        /* added in order: task i is the sampler's index i */
        for (unsigned i = 0; r >= 0 && i < s->ntasks; i++) {
                r = residency_sampler_add(rs, out->tasks[i].pid, NULL);
                if (r < 0)
                        r = log_error_errno(r, "Failed to open /proc/%d/stat: %m",
                                            (int) out->tasks[i].pid);
        }
        if (r < 0) {
                /* the tasks block on the go pipe: kill them rather than start them */
                for (unsigned i = 0; i < s->ntasks; i++)
                        if (out->tasks[i].pid > 0)
                                (void) kill(out->tasks[i].pid, SIGKILL);
                while (wait(NULL) > 0 || errno == EINTR)
                        ;
                return r;
        }
        out->start_usec = now_usec();
        go_w = safe_close(go_w);
        r = sample_loop(s, rs, out);
        if (r < 0)
                return r;
        collect(s, rs, out);
        return 0;
}

/* ---- the command */

typedef struct Args {
        CliCommon co;
        const char *tasks_arg, *label, *json;
        unsigned sweeps, size;
        bool disturb;
        uint64_t disturb_after_usec;
        unsigned *tasks;
        size_t n_tasks;
} Args;

static void args_done(Args *a) {
        cli_common_done(&a->co);
        free(a->tasks);
}

static void help(void) {
        printf("Usage: loadgen schedbench [OPTIONS]\n"
               "\n"
               "numa_test (Erich Focht, 2002; seed 002): N copies of randupdt in the run's job\n"
               "group, each sweeping a[ix[i]] += b[i] over --size random indexes --sweeps times\n"
               "(memory-latency bound), with hackbench %u started --disturb-after seconds in.\n"
               "Per task count, the seed's table and numa_test's per-task residency (an\n"
               "example on two nodes, abridged):\n"
               "\n"
               "  Schedbench 4:\n"
               "                          AvgUser    Elapsed  TotalUser   TotalSys\n"
               "               default      10.37      20.81      41.49       0.06\n"
               "  Job  node00 node01 | iSched MSched   | UserTime(s)\n"
               "    1   100.0    0.0 |      0      0   |       10.37\n"
               "    2    23.0   77.0 |      0      1 * |       10.35\n"
               "  Mismatches: 1 of 4; disturbance: hackbench %u, Time: 1.234\n"
               "\n"
               "AvgUser: mean user seconds of a task; Elapsed: seconds from the release of the\n"
               "tasks to the end of the last; TotalUser, TotalSys: their sums. nodeNN: percent\n"
               "of the task's user time on node NN, sampled every %u ms from /proc/PID/stat\n"
               "(the CPU it last ran on and its utime); iSched: the node it started on, MSched:\n"
               "the node it ran on most, '*' where they differ.\n"
               "\n"
               "  -t --tasks=LIST        Task counts (an axis: 4,8,16 or 4-64x2), 1 to %u\n"
               "                         (default " DEFAULT_TASKS ").\n"
               "     --sweeps=N          Sweeps over the arrays, 1 to %u (default 1000:\n"
               "                         numa_test's 100 end here before the disturbance).\n"
               "     --size=N            Elements per array, 1 to %u (default 1000000:\n"
               "                         20 MB a task; more than 90%% of MemAvailable is\n"
               "                         refused).\n"
               "     --disturb-after=SECONDS\n"
               "                         Start hackbench %u this long after the tasks\n"
               "                         (default 3; 0: at once).\n"
               "     --no-disturb        No hackbench.\n"
               "  -L --label=NAME        The first column (default \"default\").\n" CLI_HELP_JSON
                       CLI_HELP_CPUS CLI_HELP_NO_SANDBOX CLI_HELP_NO_HOST_RESERVE
               "  -h --help              Show this help.\n",
               DISTURB_GROUPS, DISTURB_GROUPS, RESIDENCY_SAMPLE_USEC / 1000, MAX_TASKS, MAX_SWEEPS,
               MAX_SIZE, DISTURB_GROUPS);
}

/* 0 to run, 1 after --help, -EINVAL (logged) for bad arguments. */
static int parse_args(int argc, char *argv[], Args *a) {
        enum { ARG_SWEEPS = 0x100, ARG_SIZE, ARG_DISTURB_AFTER, ARG_NO_DISTURB };
        static const struct option options[] = {
                { "tasks", required_argument, NULL, 't' },
                { "sweeps", required_argument, NULL, ARG_SWEEPS },
                { "size", required_argument, NULL, ARG_SIZE },
                { "disturb-after", required_argument, NULL, ARG_DISTURB_AFTER },
                { "no-disturb", no_argument, NULL, ARG_NO_DISTURB },
                CLI_OPT_LABEL,
                CLI_OPT_JSON,
                CLI_OPT_CPUS,
                CLI_OPT_NO_SANDBOX,
                CLI_OPT_NO_HOST_RESERVE,
                CLI_OPT_HELP,
                {},
        };
        int c, r;

        while ((c = getopt_long(argc, argv, "t:L:j::c:h", options, NULL)) >= 0) {
                r = cli_parse_common(c, optarg, &a->co);
                if (r < 0)
                        return -EINVAL;
                if (r > 0)
                        continue;
                switch (c) {
                case 't': a->tasks_arg = optarg; break;
                case ARG_SWEEPS:
                        if (cli_parse_unsigned("sweeps", optarg, 1, MAX_SWEEPS, &a->sweeps) < 0)
                                return -EINVAL;
                        break;
                case ARG_SIZE:
                        if (cli_parse_unsigned("size", optarg, 1, MAX_SIZE, &a->size) < 0)
                                return -EINVAL;
                        break;
                case ARG_DISTURB_AFTER:
                        if (streq(optarg, "0"))
                                a->disturb_after_usec = 0;
                        else if (parse_seconds(optarg, &a->disturb_after_usec) < 0) {
                                log_error("Invalid --disturb-after \"%s\": want seconds, e.g. 3 "
                                          "or 0.5.",
                                          optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_NO_DISTURB: a->disturb = false; break;
                case 'h': help(); return 1;
                default: return -EINVAL;
                }
        }
        cli_take_report(&a->co, &a->label, &a->json);
        if (optind != argc) {
                log_error("Unexpected argument \"%s\"; see loadgen schedbench --help.",
                          argv[optind]);
                return -EINVAL;
        }
        return bench_parse_axis("tasks", a->tasks_arg, 1, MAX_TASKS, &a->tasks, &a->n_tasks);
}

/* MemAvailable of /proc/meminfo in bytes, or 0 if unknown. */
static uint64_t mem_available(void) {
        _cleanup_free_ char *s = NULL;
        unsigned long long kb;
        const char *p;

        if (read_full_at(AT_FDCWD, "/proc/meminfo", 65536, &s, NULL) < 0)
                return 0;
        p = strstr(s, "MemAvailable:");
        if (!p || sscanf(p, "MemAvailable: %llu kB", &kb) != 1)
                return 0;
        return (uint64_t) kb * 1024;
}

/* Refuses a task count this machine cannot hold: tasks (and hackbench's), open files, memory. */
static int check_limits(const Args *a) {
        unsigned most = 0;
        uint64_t need, avail = mem_available();
        char what[64];

        for (size_t i = 0; i < a->n_tasks; i++)
                most = MAX(most, a->tasks[i]);
        snprintf(what, sizeof what, "schedbench %u tasks", most);
        /* hackbench 20: 20 senders and 20 receivers a group, a socketpair per receiver */
        if (bench_check_tasks(what, 2 + most + (a->disturb ? DISTURB_GROUPS * 40 + 1 : 0),
                              most + 16 + (a->disturb ? DISTURB_GROUPS * 40 : 0)) < 0)
                return -E2BIG;
        need = (uint64_t) most * ((uint64_t) a->size + 1) * (2 * sizeof(double) + sizeof(int));
        if (avail > 0 && need > avail / 10 * 9) {
                log_error("%s of --size %u need %" PRIu64 " MiB: more than 90%% of the %" PRIu64
                          " MiB available.",
                          what, a->size, need >> 20, avail >> 20);
                return -E2BIG;
        }
        return 0;
}

/* The machine's node ids by index, as the residency sampler numbers them. */
static int make_node_ids(const Topology *t, int **ret_ids, unsigned *ret_nodes) {
        unsigned nodes = topology_n_nodes(t);
        _cleanup_free_ int *ids = NULL;

        if (nodes > RESIDENCY_MAX_NODES) {
                log_error("This machine has %u NUMA nodes: schedbench shows at most %u.", nodes,
                          RESIDENCY_MAX_NODES);
                return -E2BIG;
        }
        ids = calloc(MAX(nodes, 1u), sizeof *ids);
        if (!ids)
                return -ENOMEM;
        for (unsigned i = 0; i < nodes; i++)
                ids[i] = topology_node_id(t, i);
        *ret_ids = TAKE_PTR(ids);
        *ret_nodes = nodes;
        return 0;
}

static void json_parameters(Json *j, const Args *a, const Schedbench *s, const Sandbox *sb) {
        if (!j->f)
                return;
        json_key(j, "parameters");
        json_begin(j, '{');
        json_string(j, "label", a->label);
        json_key(j, "tasks");
        json_begin(j, '[');
        for (size_t i = 0; i < a->n_tasks; i++)
                json_u64(j, NULL, a->tasks[i]);
        json_end(j, ']');
        json_u64(j, "sweeps", a->sweeps);
        json_u64(j, "size", a->size);
        json_bool(j, "disturb", a->disturb);
        json_u64(j, "disturb_after_usec", a->disturb_after_usec);
        json_u64(j, "disturb_groups", DISTURB_GROUPS);
        json_u64(j, "sample_usec", RESIDENCY_SAMPLE_USEC);
        json_u64(j, "clock_ticks_per_s", s->hz);
        json_u64(j, "ncpus", sandbox_ncpus(sb));
        json_key(j, "nodes");
        json_begin(j, '[');
        for (unsigned i = 0; i < s->n_nodes; i++)
                json_i64(j, NULL, s->node_ids[i]);
        json_end(j, ']');
        json_end(j, '}');
}

/* The figures of one row, as both the table and the JSON show them. */
typedef struct Summary {
        double avg_user_s, elapsed_s, total_user_s, total_sys_s;
        unsigned mismatches;
} Summary;

static Summary summarize(const Schedbench *s, const SchedOut *out) {
        Summary m = { .elapsed_s = (double) (out->end_usec - out->start_usec) / 1e6 };

        for (unsigned i = 0; i < s->ntasks; i++) {
                m.total_user_s += (double) out->tasks[i].user_usec / 1e6;
                m.total_sys_s += (double) out->tasks[i].sys_usec / 1e6;
                m.mismatches += out->tasks[i].initial_node != out->tasks[i].most_node;
        }
        m.avg_user_s = m.total_user_s / s->ntasks;
        return m;
}

static void json_task(Json *j, const Schedbench *s, const TaskResult *t, unsigned job) {
        json_begin(j, '{');
        json_u64(j, "job", job);
        json_u64(j, "user_usec", t->user_usec);
        json_u64(j, "sys_usec", t->sys_usec);
        json_double(j, "user_s", (double) t->user_usec / 1e6, 6);
        json_i64(j, "initial_cpu", t->initial_cpu);
        json_i64(j, "initial_node", t->initial_node);
        json_i64(j, "most_node", t->most_node);
        json_bool(j, "mismatch", t->initial_node != t->most_node);
        json_u64(j, "samples", t->samples);
        json_u64(j, "ticks", residency_total(&t->res));
        json_key(j, "node_pct");
        json_begin(j, '{');
        for (unsigned i = 0; i < s->n_nodes; i++) {
                char key[16];

                snprintf(key, sizeof key, "%d", s->node_ids[i]);
                json_double(j, key, residency_pct(&t->res, i), 3);
        }
        json_end(j, '}');
        json_key(j, "node_ticks");
        json_begin(j, '{');
        for (unsigned i = 0; i < s->n_nodes; i++) {
                char key[16];

                snprintf(key, sizeof key, "%d", s->node_ids[i]);
                json_u64(j, key, t->res.ticks[i]);
        }
        json_end(j, '}');
        json_key(j, "cpu_ticks");
        json_begin(j, '{');
        for (unsigned c = 0; c < MAX_CPUS; c++)
                if (t->cpu_ticks[c] > 0) {
                        char key[16];

                        snprintf(key, sizeof key, "%u", c);
                        json_u64(j, key, t->cpu_ticks[c]);
                }
        json_end(j, '}');
        json_end(j, '}');
}

static void json_row(Json *j, const Args *a, const Schedbench *s, const SchedOut *out,
                     const Summary *m) {
        if (!j->f)
                return;
        json_begin(j, '{');
        json_string(j, "label", a->label);
        json_u64(j, "tasks", s->ntasks);
        json_double(j, "avg_user_s", m->avg_user_s, 6);
        json_double(j, "elapsed_s", m->elapsed_s, 6);
        json_double(j, "total_user_s", m->total_user_s, 6);
        json_double(j, "total_sys_s", m->total_sys_s, 6);
        json_u64(j, "mismatches", m->mismatches);
        json_key(j, "disturbance");
        json_begin(j, '{');
        json_bool(j, "started", out->disturb_started);
        json_bool(j, "available", out->disturb_started && out->disturb_error != -ENOSYS);
        json_i64(j, "error", out->disturb_error);
        json_u64(j, "start_after_usec", out->disturb_offset_usec);
        json_u64(j, "time_usec", out->disturb_usec);
        json_end(j, '}');
        json_key(j, "per_task");
        json_begin(j, '[');
        for (unsigned i = 0; i < s->ntasks; i++)
                json_task(j, s, &out->tasks[i], i + 1);
        json_end(j, ']');
        json_end(j, '}');
}

static void print_row(BenchReport *rep, const Args *a, const Schedbench *s, const SchedOut *out,
                      const Summary *m) {
        double pct[RESIDENCY_MAX_NODES];
        FILE *f = rep->table;

        if (!f)
                return;
        schedbench_format_summary(f, s->ntasks, a->label, m->avg_user_s, m->elapsed_s,
                                  m->total_user_s, m->total_sys_s);
        schedbench_format_residency_header(f, s->node_ids, s->n_nodes);
        for (unsigned i = 0; i < s->ntasks; i++) {
                const TaskResult *t = &out->tasks[i];

                for (unsigned k = 0; k < s->n_nodes; k++)
                        pct[k] = residency_pct(&t->res, k);
                schedbench_format_residency_row(f, i + 1, pct, s->n_nodes, t->initial_node,
                                                t->most_node, (double) t->user_usec / 1e6);
        }
        fprintf(f, "Mismatches: %u of %u; ", m->mismatches, s->ntasks);
        if (!a->disturb)
                fprintf(f, "disturbance: none (--no-disturb)\n");
        else if (!out->disturb_started)
                fprintf(f, "disturbance: not started (the tasks ended first)\n");
        else if (out->disturb_error == -ENOSYS)
                fprintf(f, "disturbance: unavailable (hackbench not built in)\n");
        else if (out->disturb_error < 0)
                fprintf(f, "disturbance: hackbench %u failed: %s\n", DISTURB_GROUPS,
                        strerror(-out->disturb_error));
        else
                fprintf(f, "disturbance: hackbench %u, Time: %.3f\n", DISTURB_GROUPS,
                        (double) out->disturb_usec / 1e6);
        fprintf(f, "\n");
        (void) fflush(f);
}

static int schedbench_sweep(const Args *a, Schedbench *s, Sandbox *sb, BenchReport *rep) {
        unsigned most = 0;
        _cleanup_free_ SchedOut *out = NULL;
        size_t size;
        int r;

        for (size_t i = 0; i < a->n_tasks; i++)
                most = MAX(most, a->tasks[i]);
        size = sizeof(SchedOut) + most * sizeof(TaskResult);
        out = malloc(size);
        if (!out)
                return log_error_errno(ENOMEM, "Out of memory.");
        json_parameters(&rep->json, a, s, sb);
        if (rep->json.f) {
                json_key(&rep->json, "rows");
                json_begin(&rep->json, '[');
        }
        for (size_t i = 0; i < a->n_tasks; i++) {
                Summary m;

                s->ntasks = a->tasks[i];
                r = bench_run(sb, schedbench_once, s, out,
                              sizeof(SchedOut) + s->ntasks * sizeof(TaskResult));
                if (r < 0)
                        return r;
                m = summarize(s, out);
                if (out->disturb_started && out->disturb_error < 0 && out->disturb_error != -ENOSYS)
                        log_warning_errno(out->disturb_error,
                                          "The disturbance, hackbench %u, failed: %m",
                                          DISTURB_GROUPS);
                print_row(rep, a, s, out, &m);
                json_row(&rep->json, a, s, out, &m);
        }
        if (rep->json.f)
                json_end(&rep->json, ']');
        return 0;
}

typedef struct Sweep {
        const Args *a;
        Schedbench *s;
} Sweep;

static int sweep(void *userdata, Sandbox *sb, BenchReport *rep) {
        const Sweep *w = userdata;

        return schedbench_sweep(w->a, w->s, sb, rep);
}

int schedbench_main(int argc, char *argv[]) {
        _cleanup_(args_done) Args a = {
                .co = CLI_COMMON_INIT,
                .tasks_arg = DEFAULT_TASKS,
                .label = "default",
                /* numa_test's 100 sweeps took 22 s of user time on the 2002 NUMAQ and take about
                 * 0.5 s now: the tasks ended before the disturbance 3 s in, and before a balancer
                 * could move them. 1000 (about 6 s here) keeps the seed's proportions. */
                .sweeps = 1000,
                .size = 1000000,
                .disturb = true,
                .disturb_after_usec = 3000000,
        };
        _cleanup_topology_ Topology *t = NULL;
        _cleanup_free_ int *ids = NULL;
        _cleanup_close_ int proc_fd = -EBADF;
        Schedbench s = { 0 };
        int r;

        r = parse_args(argc, argv, &a);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        if (check_limits(&a) < 0)
                return EXIT_USAGE;
        r = topology_new_from_system(&t);
        if (r < 0)
                return log_error_errno(r, "Failed to read the machine's topology: %m"), 1;
        r = make_node_ids(t, &ids, &s.n_nodes);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory."), 1;
        if (r < 0)
                return 1;
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0)
                return log_error_errno(errno, "Failed to open /proc: %m"), 1;
        s.topology = t;
        s.proc_fd = proc_fd;
        s.node_ids = ids;
        s.sweeps = a.sweeps;
        s.size = a.size;
        s.disturb = a.disturb;
        s.disturb_after_usec = a.disturb_after_usec;
        s.hz = residency_ticks_per_s();
        return bench_main("schedbench", a.json, &a.co, sweep, &(Sweep){ &a, &s });
}
