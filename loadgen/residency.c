/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "residency.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

/* ---- the accounting */

void residency_init(Residency *r) {
        *r = (Residency){ .last_node = -1 };
}

void residency_sample(Residency *r, uint64_t utime, int node) {
        uint64_t delta = utime > r->last_utime ? utime - r->last_utime : 0;

        if (node >= 0 && (unsigned) node < RESIDENCY_MAX_NODES) {
                r->ticks[node] += delta;
                r->moves += r->last_node >= 0 && r->last_node != node;
                r->last_node = node;
        }
        r->last_utime = MAX(r->last_utime, utime);
}

void residency_finish(Residency *r, uint64_t final_utime) {
        if (r->last_node >= 0)
                residency_sample(r, final_utime, r->last_node);
}

uint64_t residency_total(const Residency *r) {
        uint64_t sum = 0;

        for (unsigned i = 0; i < RESIDENCY_MAX_NODES; i++)
                sum += r->ticks[i];
        return sum;
}

double residency_pct(const Residency *r, unsigned i) {
        uint64_t total = residency_total(r);

        if (total == 0 || i >= RESIDENCY_MAX_NODES)
                return 0;
        return 100.0 * (double) r->ticks[i] / (double) total;
}

int residency_most(const Residency *r, unsigned n) {
        int best = -1;

        for (unsigned i = 0; i < MIN(n, RESIDENCY_MAX_NODES); i++)
                if (r->ticks[i] > 0 && (best < 0 || r->ticks[i] > r->ticks[best]))
                        best = (int) i;
        return best;
}

int residency_parse_stat(const char *buf, uint64_t *ret_utime, uint64_t *ret_stime, int *ret_cpu) {
        unsigned long long utime = 0, stime = 0;
        const char *p = strrchr(buf, ')');
        long cpu = -1;

        if (!p)
                return -EINVAL;
        p++;
        /* After ')': field 3 (state) is the first; utime is 14, stime 15, processor 39. */
        for (unsigned field = 3; field <= 39; field++) {
                char *end;

                while (*p == ' ')
                        p++;
                if (*p == '\0' || *p == '\n')
                        return -EINVAL;
                if (field == 14 || field == 15 || field == 39) {
                        errno = 0;
                        if (field == 39)
                                cpu = strtol(p, &end, 10);
                        else
                                *(field == 14 ? &utime : &stime) = strtoull(p, &end, 10);
                        if (errno || end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
                                return -EINVAL;
                        p = end;
                } else
                        p += strcspn(p, " \n");
        }
        if (cpu < 0 || cpu > INT32_MAX)
                return -EINVAL;
        *ret_utime = utime;
        *ret_stime = stime;
        *ret_cpu = (int) cpu;
        return 0;
}

uint64_t residency_ticks_per_s(void) {
        long hz = sysconf(_SC_CLK_TCK);

        return hz > 0 ? (uint64_t) hz : 100;
}

/* ---- the sampler */

typedef struct SampledTask {
        pid_t pid;
        int fd; /* its /proc/PID/stat; -EBADF once finished or gone */
        bool finished;
        int initial_cpu, initial_node; /* the node as an index; -1 unknown */
        int last_cpu; /* at the last sample (the initial CPU before the first); -1 unknown */
        uint64_t samples;
        Residency res;
        uint64_t distance; /* the sum of the distances of its moves */
        uint64_t *cpu_ticks; /* n_cpu_ticks entries, grown as CPUs are seen */
        unsigned n_cpu_ticks;
} SampledTask;

struct ResidencySampler {
        int proc_fd;
        uint64_t hz;
        int *cpu_node; /* CPU -> node index, -1 none; n_cpus entries */
        unsigned n_cpus;
        int node_ids[RESIDENCY_MAX_NODES];
        unsigned n_nodes;
        unsigned *distances; /* n_nodes x n_nodes, by index */
        SampledTask *tasks;
        size_t n_tasks, cap_tasks;
};

int residency_sampler_new_at(const Topology *t, int proc_fd, ResidencySampler **ret) {
        _cleanup_(residency_sampler_freep) ResidencySampler *s = NULL;
        unsigned nodes = topology_n_nodes(t);

        if (nodes > RESIDENCY_MAX_NODES)
                return -E2BIG;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->proc_fd = -EBADF;
        s->n_cpus = topology_cpu_capacity(t);
        s->cpu_node = calloc(MAX(s->n_cpus, 1u), sizeof *s->cpu_node);
        if (!s->cpu_node)
                return -ENOMEM;
        for (unsigned c = 0; c < s->n_cpus; c++) {
                int node = topology_cpu_node(t, c);

                s->cpu_node[c] = node < 0 ? -1 : topology_node_index(t, (unsigned) node);
                if (s->cpu_node[c] < 0)
                        s->cpu_node[c] = -1;
        }
        s->n_nodes = nodes;
        for (unsigned i = 0; i < nodes; i++)
                s->node_ids[i] = topology_node_id(t, i);
        s->distances = calloc(MAX((size_t) nodes * nodes, 1u), sizeof *s->distances);
        if (!s->distances)
                return -ENOMEM;
        if (nodes > 0)
                memcpy(s->distances, topology_distances(t),
                       (size_t) nodes * nodes * sizeof *s->distances);
        s->hz = residency_ticks_per_s();
        s->proc_fd = fcntl(proc_fd, F_DUPFD_CLOEXEC, 3);
        if (s->proc_fd < 0)
                return negative_errno();
        *ret = TAKE_PTR(s);
        return 0;
}

int residency_sampler_new(const Topology *t, ResidencySampler **ret) {
        _cleanup_close_ int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (proc_fd < 0)
                return negative_errno();
        return residency_sampler_new_at(t, proc_fd, ret);
}

ResidencySampler *residency_sampler_free(ResidencySampler *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_tasks; i++) {
                if (s->tasks[i].fd >= 0)
                        (void) close(s->tasks[i].fd);
                free(s->tasks[i].cpu_ticks);
        }
        free(s->tasks);
        free(s->cpu_node);
        free(s->distances);
        if (s->proc_fd >= 0)
                (void) close(s->proc_fd);
        return mfree(s);
}

unsigned residency_sampler_n_nodes(const ResidencySampler *s) {
        return s->n_nodes;
}

int residency_sampler_node_id(const ResidencySampler *s, unsigned i) {
        return i < s->n_nodes ? s->node_ids[i] : -ERANGE;
}

int residency_sampler_cpu_node(const ResidencySampler *s, int cpu) {
        return cpu >= 0 && (unsigned) cpu < s->n_cpus ? s->cpu_node[cpu] : -1;
}

/* Reads fd's stat line: 0, -ESRCH once the task was reaped, -EBADMSG, or the read's error. */
static int read_stat(int fd, uint64_t *ret_utime, int *ret_cpu) {
        char buf[PROC_TASK_STAT_BUF_SIZE];
        uint64_t stime;
        ssize_t n;

        n = pread(fd, buf, sizeof buf - 1, 0);
        if (n < 0)
                return negative_errno();
        if (n == 0)
                return -EBADMSG;
        buf[n] = '\0';
        if (residency_parse_stat(buf, ret_utime, &stime, ret_cpu) < 0)
                return -EBADMSG;
        return 0;
}

/* Credits ticks to cpu's entry, growing the table; dropped (the node has them) beyond
 * RESIDENCY_MAX_CPUS or without memory. */
static void credit_cpu(SampledTask *t, int cpu, uint64_t ticks) {
        size_t cap = t->n_cpu_ticks;

        if (cpu < 0 || (unsigned) cpu >= RESIDENCY_MAX_CPUS || ticks == 0)
                return;
        if ((unsigned) cpu >= cap) {
                if (greedy_realloc((void **) &t->cpu_ticks, &cap, (size_t) cpu + 1,
                                   sizeof *t->cpu_ticks, 64) < 0)
                        return;
                memset(t->cpu_ticks + t->n_cpu_ticks, 0,
                       (cap - t->n_cpu_ticks) * sizeof *t->cpu_ticks);
                t->n_cpu_ticks = (unsigned) cap;
        }
        t->cpu_ticks[cpu] += ticks;
}

int residency_sampler_add(ResidencySampler *s, pid_t pid, size_t *ret_index) {
        _cleanup_close_ int fd = -EBADF;
        SampledTask *t;
        uint64_t utime;
        int cpu, r;

        if (pid <= 0)
                return -EINVAL;
        fd = proc_task_stat_open_at(s->proc_fd, pid, 0);
        if (fd < 0)
                return fd;
        r = read_stat(fd, &utime, &cpu);
        if (r < 0)
                return r;
        if (greedy_realloc((void **) &s->tasks, &s->cap_tasks, s->n_tasks + 1, sizeof *s->tasks,
                           16) < 0)
                return -ENOMEM;
        t = &s->tasks[s->n_tasks];
        *t = (SampledTask){
                .pid = pid,
                .initial_cpu = cpu,
                .initial_node = residency_sampler_cpu_node(s, cpu),
                .last_cpu = cpu,
        };
        residency_init(&t->res);
        /* no ticks: only the last node seen, for a task reaped before its first sample */
        residency_sample(&t->res, 0, t->initial_node);
        t->fd = TAKE_FD(fd);
        if (ret_index)
                *ret_index = s->n_tasks;
        s->n_tasks++;
        return 0;
}

static void sample_task(ResidencySampler *s, SampledTask *t) {
        uint64_t utime, before = t->res.last_utime;
        int cpu, node, r;

        r = read_stat(t->fd, &utime, &cpu);
        if (r == -ESRCH) {
                /* reaped: the fd will never read again */
                (void) close(t->fd);
                t->fd = -EBADF;
                return;
        }
        if (r < 0)
                return;
        node = residency_sampler_cpu_node(s, cpu);
        if (node >= 0 && t->res.last_node >= 0 && node != t->res.last_node)
                t->distance += s->distances[(size_t) t->res.last_node * s->n_nodes + (size_t) node];
        residency_sample(&t->res, utime, node);
        if (utime > before)
                credit_cpu(t, cpu, utime - before);
        t->last_cpu = cpu;
        t->samples++;
}

void residency_sampler_sample(ResidencySampler *s) {
        for (size_t i = 0; i < s->n_tasks; i++)
                if (s->tasks[i].fd >= 0)
                        sample_task(s, &s->tasks[i]);
}

void residency_sampler_finish(ResidencySampler *s, size_t index, uint64_t final_utime_usec) {
        SampledTask *t;
        uint64_t final;

        if (index >= s->n_tasks || s->tasks[index].finished)
                return;
        t = &s->tasks[index];
        if (t->fd >= 0)
                sample_task(s, t);
        final = final_utime_usec * s->hz / 1000000;
        /* what the samples missed goes where the task was last seen, per CPU as per node */
        if (final > t->res.last_utime && t->res.last_node >= 0)
                credit_cpu(t, t->last_cpu, final - t->res.last_utime);
        residency_finish(&t->res, final);
        if (t->fd >= 0)
                (void) close(t->fd);
        t->fd = -EBADF;
        t->finished = true;
}

uint32_t residency_sampler_moves(const ResidencySampler *s, size_t index, uint64_t *ret_distance) {
        if (index >= s->n_tasks) {
                *ret_distance = 0;
                return 0;
        }
        *ret_distance = s->tasks[index].distance;
        return s->tasks[index].res.moves;
}

size_t residency_sampler_n_tasks(const ResidencySampler *s) {
        return s->n_tasks;
}

static const SampledTask *task_at(const ResidencySampler *s, size_t index) {
        return index < s->n_tasks ? &s->tasks[index] : NULL;
}

const Residency *residency_sampler_get(const ResidencySampler *s, size_t index) {
        const SampledTask *t = task_at(s, index);

        return t ? &t->res : NULL;
}

bool residency_sampler_live(const ResidencySampler *s, size_t index) {
        const SampledTask *t = task_at(s, index);

        return t && t->fd >= 0;
}

int residency_sampler_initial_cpu(const ResidencySampler *s, size_t index) {
        const SampledTask *t = task_at(s, index);

        return t ? t->initial_cpu : -1;
}

int residency_sampler_initial_node(const ResidencySampler *s, size_t index) {
        const SampledTask *t = task_at(s, index);

        return t && t->initial_node >= 0 ? s->node_ids[t->initial_node] : -1;
}

int residency_sampler_most_node(const ResidencySampler *s, size_t index) {
        const SampledTask *t = task_at(s, index);
        int i = t ? residency_most(&t->res, s->n_nodes) : -1;

        return i >= 0 ? s->node_ids[i] : -1;
}

uint64_t residency_sampler_samples(const ResidencySampler *s, size_t index) {
        const SampledTask *t = task_at(s, index);

        return t ? t->samples : 0;
}

uint64_t residency_sampler_cpu_ticks(const ResidencySampler *s, size_t index, unsigned cpu) {
        const SampledTask *t = task_at(s, index);

        return t && cpu < t->n_cpu_ticks ? t->cpu_ticks[cpu] : 0;
}
