/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "scenario_run.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "fileio.h"
#include "load.h"
#include "log.h"
#include "macro.h"
#include "tree.h"

#define GRACE_USEC (3 * 1000000u) /* after the deadline, before what is left is killed */
#define PROGRESS_USEC 1000000u

/* One instance while it runs. */
typedef struct Instance {
        size_t task;
        unsigned instance;
        CpuMask *start; /* NULL: anywhere */
        int (*fds)[2]; /* per phase: its ends of a pingpong's pipes, else -1 */
        bool *leads; /* per phase: it sends first and ends the exchange */
        char *work_dir;
        pid_t pid;
        size_t sample; /* index in the sampler */
        bool reaped;
} Instance;

/* What an instance's process writes for the runner, in memory both share. */
typedef struct Slot {
        TaskStats stats;
        int error; /* phases_run()'s */
} Slot;

typedef struct Run {
        const Scenario *s;
        Sandbox *sb;
        const ScenarioRunOptions *o;
        const char **group_paths; /* per scenario group */
        Instance *inst;
        size_t n_inst;
        Slot *slots; /* MAP_SHARED, one per instance */
        int ready[2], release[2];
} Run;

static void run_done(Run *r) {
        for (size_t i = 0; i < r->n_inst; i++) {
                Instance *in = &r->inst[i];

                if (in->fds)
                        for (size_t k = 0; k < r->s->n_phases[in->task]; k++)
                                for (int e = 0; e < 2; e++)
                                        if (in->fds[k][e] >= 0)
                                                close(in->fds[k][e]);
                free(in->fds);
                free(in->leads);
                free(in->work_dir);
                cpumask_free(in->start);
        }
        free(r->inst);
        free(r->group_paths);
        if (r->slots)
                (void) munmap(r->slots, MAX(r->n_inst, 1u) * sizeof *r->slots);
        for (int e = 0; e < 2; e++) {
                if (r->ready[e] >= 0)
                        close(r->ready[e]);
                if (r->release[e] >= 0)
                        close(r->release[e]);
        }
}

void scenario_result_done(ScenarioResult *r) {
        r->inst = mfree(r->inst);
        r->group_paths = mfree(r->group_paths);
        r->n_inst = 0;
}

/* ---- placement */

/* The n-th CPU of m, counting round (n modulo the count); -1 if m is empty. */
static int nth_cpu(const CpuMask *m, size_t n) {
        unsigned count = cpumask_count(m);
        int cpu = -1;

        if (count == 0)
                return -1;
        n %= count;
        for (cpu = cpumask_next(m, -1); cpu >= 0 && n > 0; n--)
                cpu = cpumask_next(m, cpu);
        return cpu;
}

/* Where instance i of task t starts: NULL (*ret) for anywhere. */
static int start_mask(const Run *r, const ScenarioTask *t, unsigned i, CpuMask **ret) {
        const CpuMask *run = sandbox_cpus(r->sb);
        _cleanup_cpumask_ CpuMask *m = cpumask_new(CPUMASK_MAX_CPUS);
        int cpu;

        if (!m)
                return -ENOMEM;
        if (t->spread == SPREAD_NODES) {
                unsigned n = topology_n_nodes(r->o->machine);
                int id = topology_node_id(r->o->machine, i % MAX(n, 1u));

                if (id < 0)
                        return -ENXIO;
                cpumask_or(m, m, topology_node_cpus(r->o->machine, (unsigned) id));
        } else if (t->node >= 0)
                cpumask_or(m, m, topology_node_cpus(r->o->machine, (unsigned) t->node));
        else if (!cpumask_is_empty(t->cpus))
                cpumask_or(m, m, t->cpus);
        else if (t->spread != SPREAD_CPUS) {
                *ret = NULL;
                return 0;
        } else
                cpumask_or(m, m, run);
        cpumask_and(m, m, run);
        if (t->spread == SPREAD_CPUS) {
                cpu = nth_cpu(m, i);
                if (cpu < 0)
                        return -ENXIO;
                cpumask_zero(m);
                cpumask_set(m, (unsigned) cpu);
        }
        if (cpumask_is_empty(m))
                return -ENXIO;
        *ret = TAKE_PTR(m);
        return 0;
}

/* ---- setting up */

static int make_groups(Run *r) {
        const Scenario *s = r->s;

        r->group_paths = calloc(MAX(scenario_n_groups(s), 1u), sizeof *r->group_paths);
        if (!r->group_paths)
                return log_error_errno(ENOMEM, "Out of memory.");
        for (size_t g = 0; g < scenario_n_groups(s); g++) {
                int k = sandbox_add_group(r->sb, scenario_group_name(s, g),
                                          scenario_group(s, g)->weight, s->mem_bytes,
                                          &r->group_paths[g]);

                if (k == -EEXIST)
                        return log_error_errno(k,
                                               "[group %s]: the name is loadgen's own; "
                                               "choose another.",
                                               scenario_group_name(s, g));
                if (k < 0)
                        return log_error_errno(k, "Failed to make [group %s]: %m",
                                               scenario_group_name(s, g));
        }
        return 0;
}

/* The instance of task `task` with the same instance number. */
static Instance *peer_instance(Run *r, size_t task, unsigned instance) {
        for (size_t i = 0; i < r->n_inst; i++)
                if (r->inst[i].task == task && r->inst[i].instance == instance)
                        return &r->inst[i];
        return NULL;
}

/* The phase of task `task` that ping-pongs with `with`. */
static size_t answering_phase(const Scenario *s, size_t task, size_t with) {
        for (size_t k = 0; k < s->n_phases[task]; k++)
                if (s->phases[task][k].type == PHASE_PINGPONG && s->phases[task][k].peer == with)
                        return k;
        return SIZE_MAX; /* scenario_load() refused that */
}

/* Two pipes per pingpong pair of instances: the lower task's instance leads. */
static int make_pipes(Run *r) {
        for (size_t i = 0; i < r->n_inst; i++) {
                Instance *a = &r->inst[i];

                for (size_t k = 0; k < r->s->n_phases[a->task]; k++) {
                        const Phase *p = &r->s->phases[a->task][k];
                        Instance *b;
                        size_t m;
                        int ab[2], ba[2];

                        if (p->type != PHASE_PINGPONG || p->peer < a->task)
                                continue; /* made from the leading side */
                        b = peer_instance(r, p->peer, a->instance);
                        m = answering_phase(r->s, p->peer, a->task);
                        if (!b || m == SIZE_MAX)
                                return -EINVAL;
                        if (pipe2(ab, O_CLOEXEC) < 0)
                                return negative_errno();
                        if (pipe2(ba, O_CLOEXEC) < 0) {
                                int e = negative_errno();

                                close(ab[0]);
                                close(ab[1]);
                                return e;
                        }
                        a->fds[k][0] = ba[0];
                        a->fds[k][1] = ab[1];
                        a->leads[k] = true;
                        b->fds[m][0] = ab[0];
                        b->fds[m][1] = ba[1];
                }
        }
        return 0;
}

static int make_instances(Run *r) {
        const Scenario *s = r->s;
        size_t n = 0;
        int k;

        for (size_t t = 0; t < scenario_n_tasks(s); t++)
                n += scenario_task(s, t)->instances;
        r->inst = calloc(n, sizeof *r->inst);
        if (!r->inst)
                return -ENOMEM;
        for (size_t t = 0; t < scenario_n_tasks(s); t++)
                for (unsigned i = 0; i < scenario_task(s, t)->instances; i++) {
                        Instance *in = &r->inst[r->n_inst++];
                        _cleanup_free_ char *name = NULL;

                        in->task = t;
                        in->instance = i;
                        in->pid = -1;
                        in->fds = malloc(MAX(s->n_phases[t], 1u) * sizeof *in->fds);
                        in->leads = calloc(MAX(s->n_phases[t], 1u), sizeof *in->leads);
                        if (!in->fds || !in->leads)
                                return -ENOMEM;
                        for (size_t p = 0; p < s->n_phases[t]; p++)
                                in->fds[p][0] = in->fds[p][1] = -1;
                        k = start_mask(r, scenario_task(s, t), i, &in->start);
                        if (k == -ENXIO)
                                return log_error_errno(k,
                                                       "[task %s]: instance %u would start on no "
                                                       "CPU of the run's (--cpus or the "
                                                       "scenario's cpus).",
                                                       scenario_task_name(s, t), i);
                        if (k < 0)
                                return k;
                        if (asprintf(&name, "task-%s-%u", scenario_task_name(s, t), i) < 0)
                                return -ENOMEM;
                        in->work_dir = sandbox_path(r->sb, name);
                        if (!in->work_dir)
                                return -ENOMEM;
                        if (mkdir(in->work_dir, 0700) < 0)
                                return log_error_errno(errno, "Failed to make %s: %m",
                                                       in->work_dir);
                }
        r->slots = mmap(NULL, MAX(r->n_inst, 1u) * sizeof *r->slots, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (r->slots == MAP_FAILED) {
                r->slots = NULL;
                return negative_errno();
        }
        return make_pipes(r);
}

/* ---- the instance's process */

static bool task_needs_tree(const Scenario *s, size_t task) {
        for (size_t k = 0; k < s->n_phases[task]; k++)
                if (phase_needs_tree(&s->phases[task][k]))
                        return true;
        return false;
}

static char *path_join(const char *a, const char *b) {
        char *p;

        return asprintf(&p, "%s/%s", a, b) < 0 ? NULL : p;
}

static _Noreturn void instance_main(Run *r, Instance *in, uint64_t duration_usec) {
        const ScenarioTask *t = scenario_task(r->s, in->task);
        PhaseContext c;
        sigset_t none;
        char *tree = NULL, go, self_exe[4096];
        ssize_t n;
        int k;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        (void) setpgid(0, 0); /* a terminal's Ctrl-C reaches loadgen alone, which ends us */
        cli_stop_rearm();
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        /* Only this instance's own pipe ends stay open. */
        for (size_t i = 0; i < r->n_inst; i++)
                if (&r->inst[i] != in && r->inst[i].fds)
                        for (size_t p = 0; p < r->s->n_phases[r->inst[i].task]; p++)
                                for (int e = 0; e < 2; e++)
                                        if (r->inst[i].fds[p][e] >= 0)
                                                close(r->inst[i].fds[p][e]);
        close(r->release[1]);
        close(r->ready[0]);
        k = -ENOENT;
        for (size_t g = 0; g < scenario_n_groups(r->s); g++)
                if (streq(scenario_group_name(r->s, g), t->group))
                        k = sandbox_enter_group(r->sb, r->group_paths[g]);
        if (k >= 0 && in->start &&
            sched_setaffinity(0, cpumask_cpu_set_size(in->start), cpumask_cpu_set(in->start)) < 0)
                k = negative_errno();
        if (k >= 0 && task_needs_tree(r->s, in->task)) {
                /* The instance's own: a compile cleans and rebuilds it. */
                TreeOptions to;

                tree_options_init(&to, true);
                tree = path_join(in->work_dir, "tree");
                k = !tree                   ? -ENOMEM
                    : mkdir(tree, 0700) < 0 ? negative_errno()
                                            : tree_generate(tree, &to);
        }
        if (k < 0) {
                r->slots[in - r->inst].error = k;
                _exit(1);
        }
        n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
        self_exe[MAX(n, (ssize_t) 0)] = '\0';
        /* Placed: say so (the runner notes the CPU it is on), then wait until all are, and go
         * together when the release pipe's write end closes. */
        (void) write_full(r->ready[1], "r", 1); /* a closed pipe: the runner is gone */
        close(r->ready[1]);
        while (read(r->release[0], &go, 1) < 0 && errno == EINTR && !cli_stop)
                ;
        close(r->release[0]);
        if (in->start && !t->pinned) {
                /* Started there; from now on it may run anywhere in the run. */
                const CpuMask *all = sandbox_cpus(r->sb);

                (void) sched_setaffinity(0, cpumask_cpu_set_size(all), cpumask_cpu_set(all));
        }
        c = (PhaseContext){
                .phases = r->s->phases[in->task],
                .n_phases = r->s->n_phases[in->task],
                .loop = t->loop,
                .deadline_usec = now_usec() + duration_usec,
                .stop = &cli_stop,
                .work_dir = in->work_dir,
                .pingpong_fds = (const int(*)[2]) in->fds,
                .pingpong_leads = in->leads,
                .ncpus = sandbox_ncpus(r->sb),
                .ram_bytes = r->s->mem_bytes ? r->s->mem_bytes : LOAD_DEFAULT_RAM_BYTES,
                .tree_dir = tree,
                .loadgen_path = self_exe,
                .stats = &r->slots[in - r->inst].stats,
        };
        k = phases_run(&c);
        r->slots[in - r->inst].error = k;
        _exit(k < 0 ? 1 : 0);
}

/* ---- watching */

static void reap(Run *r, ResidencySampler *rs, ScenarioResult *res, bool block) {
        for (;;) {
                struct rusage ru;
                int status;
                pid_t pid = wait4(-1, &status, block ? 0 : WNOHANG, &ru);

                if (pid <= 0)
                        return;
                for (size_t i = 0; i < r->n_inst; i++) {
                        InstanceResult *ir = &res->inst[i];

                        if (r->inst[i].pid != pid)
                                continue;
                        r->inst[i].reaped = true;
                        ir->user_usec = (uint64_t) ru.ru_utime.tv_sec * 1000000u +
                                        (uint64_t) ru.ru_utime.tv_usec;
                        ir->sys_usec = (uint64_t) ru.ru_stime.tv_sec * 1000000u +
                                       (uint64_t) ru.ru_stime.tv_usec;
                        ir->exit_status = status;
                        residency_sampler_finish(rs, r->inst[i].sample, ir->user_usec);
                }
        }
}

/* Until every instance has said it is placed: -EINTR on cli_stop, or the error of one that
 * could not enter its group or take its start CPUs (logged). */
static int await_placed(Run *r) {
        size_t n = 0;
        char buf[64];

        while (n < r->n_inst) {
                ssize_t l = read(r->ready[0], buf, MIN(sizeof buf, r->n_inst - n));

                if (l > 0) {
                        n += (size_t) l;
                        continue;
                }
                if (l < 0 && errno == EINTR && !cli_stop)
                        continue;
                if (cli_stop)
                        return -EINTR;
                break; /* EOF: one died before it was placed */
        }
        for (size_t i = 0; i < r->n_inst; i++)
                if (r->slots[i].error < 0)
                        return log_error_errno(
                                r->slots[i].error, "[task %s] instance %u could not be placed: %m",
                                scenario_task_name(r->s, r->inst[i].task), r->inst[i].instance);
        return n == r->n_inst ? 0 : log_error_errno(EIO, "An instance died before it started.");
}

static size_t running(const Run *r) {
        size_t n = 0;

        for (size_t i = 0; i < r->n_inst; i++)
                n += r->inst[i].pid > 0 && !r->inst[i].reaped;
        return n;
}

static void progress(const Run *r, uint64_t elapsed, uint64_t duration) {
        log_info("%s: %" PRIu64 " of %" PRIu64 " s, %zu of %zu instances running", r->s->f.name,
                 elapsed / 1000000, duration / 1000000, running(r), r->n_inst);
}

int scenario_run(const Scenario *s, Sandbox *sb, const ScenarioRunOptions *o, ScenarioResult *ret) {
        _cleanup_(run_done)
                Run r = { .s = s, .sb = sb, .o = o, .ready = { -1, -1 }, .release = { -1, -1 } };
        _cleanup_(residency_sampler_freep) ResidencySampler *rs = NULL;
        ScenarioResult res = { 0 };
        uint64_t duration = o->duration_usec ? o->duration_usec : s->f.duration_usec;
        uint64_t t0, deadline, next_progress;
        int k;

        k = make_groups(&r);
        if (k < 0)
                return k;
        k = make_instances(&r);
        if (k < 0)
                return k == -ENOMEM ? log_error_errno(k, "Out of memory.") : k;
        k = residency_sampler_new(o->machine, &rs);
        if (k < 0)
                return log_error_errno(k, "Failed to set up the residency sampler: %m");
        if (pipe2(r.release, O_CLOEXEC) < 0 || pipe2(r.ready, O_CLOEXEC) < 0)
                return log_error_errno(errno, "Failed to make a pipe: %m");
        res.inst = calloc(MAX(r.n_inst, 1u), sizeof *res.inst);
        if (!res.inst)
                return log_error_errno(ENOMEM, "Out of memory.");
        (void) fflush(NULL);
        for (size_t i = 0; i < r.n_inst; i++) {
                Instance *in = &r.inst[i];
                pid_t pid = fork();

                if (pid < 0) {
                        k = log_error_errno(errno, "Failed to fork [task %s]: %m",
                                            scenario_task_name(s, in->task));
                        (void) sandbox_kill(sb);
                        reap(&r, rs, &res, true);
                        free(res.inst);
                        return k;
                }
                if (pid == 0)
                        instance_main(&r, in, duration);
                in->pid = pid;
                (void) setpgid(pid, pid);
                res.inst[i].task = in->task;
                res.inst[i].instance = in->instance;
                res.inst[i].pid = pid;
                res.inst[i].initial_node = res.inst[i].most_node = res.inst[i].start_cpu = -1;
                in->sample = SIZE_MAX;
        }
        close(r.ready[1]);
        r.ready[1] = -1;
        k = await_placed(&r);
        if (k < 0) {
                (void) sandbox_kill(sb);
                for (size_t i = 0; i < r.n_inst; i++)
                        (void) kill(-r.inst[i].pid, SIGKILL);
                reap(&r, rs, &res, true);
                free(res.inst);
                return k;
        }
        /* Each is on its start CPUs now, and waits: where it is is where it started. */
        for (size_t i = 0; i < r.n_inst; i++)
                if (residency_sampler_add(rs, r.inst[i].pid, &r.inst[i].sample) < 0)
                        r.inst[i].sample = SIZE_MAX;
        /* Our copies of the instances' pipe ends: only theirs may hold them, so EOF means gone. */
        for (size_t i = 0; i < r.n_inst; i++)
                for (size_t p = 0; p < s->n_phases[r.inst[i].task]; p++)
                        for (int e = 0; e < 2; e++)
                                if (r.inst[i].fds[p][e] >= 0) {
                                        close(r.inst[i].fds[p][e]);
                                        r.inst[i].fds[p][e] = -1;
                                }
        t0 = now_usec();
        close(r.release[1]);
        r.release[1] = -1;
        deadline = t0 + duration;
        next_progress = t0 + PROGRESS_USEC;
        while (running(&r) > 0) {
                uint64_t now = now_usec();

                if (cli_stop) {
                        res.interrupted = true;
                        break;
                }
                if (now >= deadline + GRACE_USEC)
                        break;
                residency_sampler_sample(rs);
                reap(&r, rs, &res, false);
                if (!o->quiet && now >= next_progress) {
                        progress(&r, now - t0, duration);
                        next_progress += PROGRESS_USEC;
                }
                load_nap(UINT64_MAX, RESIDENCY_SAMPLE_USEC);
        }
        res.elapsed_usec = now_usec() - t0;
        if (running(&r) > 0) {
                for (size_t i = 0; i < r.n_inst; i++)
                        if (!r.inst[i].reaped)
                                (void) kill(-r.inst[i].pid, SIGKILL);
                (void) sandbox_kill(sb);
                reap(&r, rs, &res, true);
        }
        res.n_inst = r.n_inst;
        res.n_nodes = residency_sampler_n_nodes(rs);
        for (unsigned n = 0; n < res.n_nodes && n < RESIDENCY_MAX_NODES; n++)
                res.node_ids[n] = residency_sampler_node_id(rs, n);
        for (size_t i = 0; i < r.n_inst; i++) {
                InstanceResult *ir = &res.inst[i];

                ir->stats = r.slots[i].stats;
                ir->error = r.slots[i].error;
                if (r.inst[i].sample == SIZE_MAX)
                        continue;
                ir->residency = *residency_sampler_get(rs, r.inst[i].sample);
                ir->start_cpu = residency_sampler_initial_cpu(rs, r.inst[i].sample);
                ir->initial_node = residency_sampler_initial_node(rs, r.inst[i].sample);
                ir->most_node = residency_sampler_most_node(rs, r.inst[i].sample);
        }
        res.group_paths = TAKE_PTR(r.group_paths);
        *ret = res;
        return 0;
}

/* ---- the report */

/* A task's figures summed over its instances. */
typedef struct TaskSum {
        unsigned instances;
        uint64_t cpu_usec;
        uint64_t ticks[RESIDENCY_MAX_NODES];
        int start_node; /* a node id; -1: none seen; -2: its instances started on different ones */
        TaskStats st; /* counters summed; latencies merged */
        unsigned failed;
} TaskSum;

static void merge_latency(PhaseLatency *to, const PhaseLatency *from) {
        to->count += from->count;
        to->sum_usec += from->sum_usec;
        if (from->max_usec > to->max_usec)
                to->max_usec = (uint64_t) from->max_usec;
        for (unsigned b = 0; b < PHASE_LATENCY_BUCKETS; b++)
                to->buckets[b] += from->buckets[b];
}

static void task_sum(const Scenario *s, const ScenarioResult *r, size_t task, TaskSum *ret) {
        TaskSum t = { .start_node = -1 };

        (void) s;
        for (size_t i = 0; i < r->n_inst; i++) {
                const InstanceResult *ir = &r->inst[i];
                const TaskStats *st = &ir->stats;

                if (ir->task != task)
                        continue;
                t.instances++;
                t.cpu_usec += ir->user_usec + ir->sys_usec;
                for (unsigned n = 0; n < r->n_nodes && n < RESIDENCY_MAX_NODES; n++)
                        t.ticks[n] += ir->residency.ticks[n];
                if (ir->initial_node >= 0)
                        t.start_node = t.start_node == -1 || t.start_node == ir->initial_node
                                               ? ir->initial_node
                                               : -2;
                t.failed += ir->error < 0 ||
                            !(WIFEXITED(ir->exit_status) && WEXITSTATUS(ir->exit_status) == 0);
                t.st.run_loops += st->run_loops;
                t.st.periodic_periods += st->periodic_periods;
                t.st.periodic_missed += st->periodic_missed;
                merge_latency(&t.st.periodic_latency, &st->periodic_latency);
                t.st.pingpong_rounds += st->pingpong_rounds;
                merge_latency(&t.st.pingpong_rtt, &st->pingpong_rtt);
                t.st.memwalk_lines += st->memwalk_lines;
                t.st.memwalk_passes += st->memwalk_passes;
                t.st.write_bytes += st->write_bytes;
                t.st.read_bytes += st->read_bytes;
                for (size_t l = 0; l < PHASE_MAX_LOADS && l < n_loads; l++)
                        t.st.load_work[l] += st->load_work[l];
                t.st.compile_builds += st->compile_builds;
                t.st.bench_runs += st->bench_runs;
        }
        *ret = t;
}

static int most_node(const uint64_t *ticks, unsigned n) {
        int best = -1;

        for (unsigned i = 0; i < n; i++)
                if (ticks[i] > 0 && (best < 0 || ticks[i] > ticks[best]))
                        best = (int) i;
        return best;
}

/* "run 2990 loops, periodic 3000 periods (2 missed), ..." of what the task did. */
static void format_work(FILE *f, const TaskStats *st) {
        const char *sep = "";

#define ITEM(cond, ...)                          \
        do {                                     \
                if (cond) {                      \
                        fprintf(f, "%s", sep);   \
                        fprintf(f, __VA_ARGS__); \
                        sep = ", ";              \
                }                                \
        } while (0)
        ITEM(st->run_loops, "%" PRIu64 " loops", (uint64_t) st->run_loops);
        ITEM(st->periodic_periods || st->periodic_missed,
             "%" PRIu64 " periods (%" PRIu64 " missed)", (uint64_t) st->periodic_periods,
             (uint64_t) st->periodic_missed);
        ITEM(st->pingpong_rounds, "%" PRIu64 " round trips", (uint64_t) st->pingpong_rounds);
        ITEM(st->memwalk_lines, "%" PRIu64 " lines in %" PRIu64 " passes",
             (uint64_t) st->memwalk_lines, (uint64_t) st->memwalk_passes);
        ITEM(st->write_bytes, "%" PRIu64 " MiB written", (uint64_t) st->write_bytes >> 20);
        ITEM(st->read_bytes, "%" PRIu64 " MiB read", (uint64_t) st->read_bytes >> 20);
        for (size_t l = 0; l < PHASE_MAX_LOADS && l < n_loads; l++)
                ITEM(st->load_work[l], "%s %" PRIu64 " %s", loads[l].name,
                     (uint64_t) st->load_work[l], loads[l].unit);
        ITEM(st->compile_builds, "%" PRIu64 " builds", (uint64_t) st->compile_builds);
        ITEM(st->bench_runs, "%" PRIu64 " benchmark runs", (uint64_t) st->bench_runs);
        ITEM(!*sep, "-");
#undef ITEM
}

static void format_latency(FILE *f, const char *what, const PhaseLatency *l) {
        if (!l->count)
                return;
        fprintf(f, "; %s p50 %" PRIu64 " us, p99 %" PRIu64 " us, max %" PRIu64 " us", what,
                phase_latency_percentile_usec(l, 50), phase_latency_percentile_usec(l, 99),
                (uint64_t) l->max_usec);
}

void scenario_print_report(FILE *f, const Scenario *s, const ScenarioResult *r) {
        double secs = (double) r->elapsed_usec / 1e6;

        fprintf(f, "scenario %s: %zu instance%s of %zu task%s, %.1f s%s\n", s->f.name, r->n_inst,
                r->n_inst == 1 ? "" : "s", scenario_n_tasks(s), scenario_n_tasks(s) == 1 ? "" : "s",
                secs, r->interrupted ? " (interrupted)" : "");
        fprintf(f, "%-16s %5s %8s %6s %5s %5s", "task", "inst", "CPU-s", "CPU%", "start", "most");
        for (unsigned n = 0; n < r->n_nodes; n++)
                fprintf(f, " node%02d", r->node_ids[n]);
        fprintf(f, "  work\n");
        for (size_t t = 0; t < scenario_n_tasks(s); t++) {
                TaskSum ts;
                uint64_t total = 0;
                int most;

                task_sum(s, r, t, &ts);
                for (unsigned n = 0; n < r->n_nodes; n++)
                        total += ts.ticks[n];
                most = most_node(ts.ticks, r->n_nodes);
                fprintf(f, "%-16s %5u %8.2f %6.0f", scenario_task_name(s, t), ts.instances,
                        (double) ts.cpu_usec / 1e6,
                        r->elapsed_usec ? (double) ts.cpu_usec * 100 / (double) r->elapsed_usec
                                        : 0.0);
                if (ts.start_node >= 0)
                        fprintf(f, " %5d", ts.start_node);
                else
                        fprintf(f, " %5s", ts.start_node == -2 ? "mixed" : "-");
                if (most >= 0)
                        fprintf(f, " %5d", r->node_ids[most]);
                else
                        fprintf(f, " %5s", "-");
                for (unsigned n = 0; n < r->n_nodes; n++)
                        fprintf(f, " %6.1f",
                                total ? (double) ts.ticks[n] * 100 / (double) total : 0.0);
                fprintf(f, "  ");
                format_work(f, &ts.st);
                format_latency(f, "wake-up", &ts.st.periodic_latency);
                format_latency(f, "round trip", &ts.st.pingpong_rtt);
                if (ts.failed)
                        fprintf(f, "; %u failed", ts.failed);
                fprintf(f, "\n");
        }
        for (size_t g = 0; g < scenario_n_groups(s); g++)
                if (scenario_group(s, g)->protected_ && r->group_paths && r->group_paths[g])
                        fprintf(f, "protected group %s: %s (cgbalanced's protected_cgroups)\n",
                                scenario_group_name(s, g), r->group_paths[g]);
}

static void json_latency(Json *j, const char *key, const PhaseLatency *l) {
        json_key(j, key);
        json_begin(j, '{');
        json_u64(j, "count", l->count);
        json_u64(j, "sum_usec", l->sum_usec);
        json_u64(j, "max_usec", l->max_usec);
        json_u64(j, "p50_usec", phase_latency_percentile_usec(l, 50));
        json_u64(j, "p99_usec", phase_latency_percentile_usec(l, 99));
        json_end(j, '}');
}

static void json_stats(Json *j, const TaskStats *st) {
        json_key(j, "work");
        json_begin(j, '{');
        json_u64(j, "run_loops", st->run_loops);
        json_u64(j, "periodic_periods", st->periodic_periods);
        json_u64(j, "periodic_missed", st->periodic_missed);
        json_latency(j, "periodic_latency", &st->periodic_latency);
        json_u64(j, "pingpong_rounds", st->pingpong_rounds);
        json_latency(j, "pingpong_rtt", &st->pingpong_rtt);
        json_u64(j, "memwalk_lines", st->memwalk_lines);
        json_u64(j, "memwalk_passes", st->memwalk_passes);
        json_u64(j, "write_bytes", st->write_bytes);
        json_u64(j, "read_bytes", st->read_bytes);
        json_key(j, "load_work");
        json_begin(j, '{');
        for (size_t l = 0; l < PHASE_MAX_LOADS && l < n_loads; l++)
                if (st->load_work[l])
                        json_u64(j, loads[l].name, st->load_work[l]);
        json_end(j, '}');
        json_u64(j, "compile_builds", st->compile_builds);
        json_u64(j, "bench_runs", st->bench_runs);
        json_u64(j, "passes", st->passes);
        json_end(j, '}');
}

static void json_residency(Json *j, const ScenarioResult *r, const uint64_t *ticks) {
        uint64_t total = 0;

        for (unsigned n = 0; n < r->n_nodes; n++)
                total += ticks[n];
        json_key(j, "node_pct");
        json_begin(j, '{');
        for (unsigned n = 0; n < r->n_nodes; n++) {
                char key[16];

                (void) snprintf(key, sizeof key, "%d", r->node_ids[n]);
                json_double(j, key, total ? (double) ticks[n] * 100 / (double) total : 0.0, 3);
        }
        json_end(j, '}');
        json_u64(j, "ticks", total);
}

void scenario_write_json(Json *j, const Scenario *s, const ScenarioResult *r, const Sandbox *sb) {
        json_begin(j, '{');
        json_string(j, "loadgen", CGBALANCE_VERSION);
        json_string(j, "scenario", s->f.name);
        json_string(j, "description", s->f.description);
        sandbox_json_machine(j, sb);
        json_u64(j, "duration_usec", s->f.duration_usec);
        json_u64(j, "elapsed_usec", r->elapsed_usec);
        json_bool(j, "interrupted", r->interrupted);
        json_key(j, "groups");
        json_begin(j, '[');
        for (size_t g = 0; g < scenario_n_groups(s); g++) {
                json_begin(j, '{');
                json_string(j, "group", scenario_group_name(s, g));
                if (r->group_paths && r->group_paths[g])
                        json_string(j, "cgroup", r->group_paths[g]);
                json_u64(j, "weight", scenario_group(s, g)->weight);
                json_bool(j, "protected", scenario_group(s, g)->protected_);
                json_end(j, '}');
        }
        json_end(j, ']');
        json_key(j, "tasks");
        json_begin(j, '[');
        for (size_t t = 0; t < scenario_n_tasks(s); t++) {
                const ScenarioTask *st = scenario_task(s, t);
                TaskSum ts;
                int most;

                task_sum(s, r, t, &ts);
                most = most_node(ts.ticks, r->n_nodes);
                json_begin(j, '{');
                json_string(j, "task", scenario_task_name(s, t));
                json_string(j, "group", st->group);
                json_u64(j, "instances", ts.instances);
                json_u64(j, "cpu_usec", ts.cpu_usec);
                json_i64(j, "most_node", most >= 0 ? r->node_ids[most] : -1);
                json_residency(j, r, ts.ticks);
                json_stats(j, &ts.st);
                json_u64(j, "failed", ts.failed);
                json_key(j, "instance");
                json_begin(j, '[');
                for (size_t i = 0; i < r->n_inst; i++) {
                        const InstanceResult *ir = &r->inst[i];

                        if (ir->task != t)
                                continue;
                        json_begin(j, '{');
                        json_u64(j, "instance", ir->instance);
                        json_i64(j, "pid", ir->pid);
                        json_i64(j, "start_cpu", ir->start_cpu);
                        json_i64(j, "start_node", ir->initial_node);
                        json_i64(j, "most_node", ir->most_node);
                        json_u64(j, "user_usec", ir->user_usec);
                        json_u64(j, "sys_usec", ir->sys_usec);
                        json_residency(j, r, ir->residency.ticks);
                        json_stats(j, &ir->stats);
                        json_i64(j, "error", ir->error);
                        json_end(j, '}');
                }
                json_end(j, ']');
                json_end(j, '}');
        }
        json_end(j, ']');
        json_end(j, '}');
}
