/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpumask.h"
#include "parse.h"
#include "proc.h"
#include "timeline.h"

/* The longest line of the daemon's events taken whole: event_parse() refuses longer ones. */
#define TIMELINE_EVENT_LINE_MAX (64u * 1024u)

typedef struct TimelineMove {
        uint64_t usec;
        pid_t pid;
        char *comm;
        int from, to;
} TimelineMove;

typedef struct TimelineWeight {
        uint64_t usec;
        char *cgroup;
        uint32_t from, to;
} TimelineWeight;

struct Timeline {
        int proc_fd;
        bool model; /* timeline_new_model(): samples given, times from 0 */
        char *name; /* written as "name" when set */
        unsigned n_nodes;
        int *node_ids; /* by node index */
        unsigned *node_cpus; /* online CPUs per node index */
        unsigned *cpus; /* the topology's online CPUs */
        unsigned *cpu_node; /* the node index of cpus[i] */
        unsigned n_cpus;

        ProcStat *base; /* the counters the next sample is measured from */
        uint64_t base_usec, first_usec; /* the previous sample's time; the baseline's */
        bool have_first_event;
        uint64_t first_event_usec;

        uint64_t *sample_usec; /* n_samples */
        uint64_t *sample_load; /* n_samples x n_nodes: busy CPUs in permyriad of one CPU */
        size_t n_samples, cap_samples, cap_load_rows;
        TimelineMove *moves;
        size_t n_moves, cap_moves;
        TimelineWeight *weights;
        size_t n_weights, cap_weights;

        int events_fd; /* the read end of the daemon's events pipe; -EBADF without */
        char *events_line; /* TIMELINE_EVENT_LINE_MAX + 1 bytes, once there is a pipe */
        size_t events_len;
        size_t n_rejected;
};

Timeline *timeline_free(Timeline *tl) {
        if (!tl)
                return NULL;
        free(tl->name);
        free(tl->node_ids);
        free(tl->node_cpus);
        free(tl->cpus);
        free(tl->cpu_node);
        proc_stat_free(tl->base);
        free(tl->sample_usec);
        free(tl->sample_load);
        for (size_t i = 0; i < tl->n_moves; i++)
                free(tl->moves[i].comm);
        free(tl->moves);
        for (size_t i = 0; i < tl->n_weights; i++)
                free(tl->weights[i].cgroup);
        free(tl->weights);
        if (tl->events_fd >= 0)
                (void) close(tl->events_fd);
        free(tl->events_line);
        free(tl);
        return NULL;
}

/* The CPU -> node index map, from the topology's own: each online CPU once. */
static int map_cpus(Timeline *tl, const Topology *t) {
        const CpuMask *online = topology_online_cpus(t);
        unsigned n = cpumask_count(online), k = 0;

        tl->cpus = calloc(n ? n : 1, sizeof *tl->cpus);
        tl->cpu_node = calloc(n ? n : 1, sizeof *tl->cpu_node);
        if (!tl->cpus || !tl->cpu_node)
                return -ENOMEM;
        for (int c = cpumask_next(online, -1); c >= 0 && k < n; c = cpumask_next(online, c)) {
                int node = topology_cpu_node(t, (unsigned) c);
                int idx = node < 0 ? node : topology_node_index(t, (unsigned) node);

                if (idx < 0)
                        continue; /* an online CPU hwloc put in no node: it has no line to plot */
                tl->cpus[k] = (unsigned) c;
                tl->cpu_node[k++] = (unsigned) idx;
                tl->node_cpus[idx]++;
        }
        tl->n_cpus = k;
        return 0;
}

static int timeline_new_internal(int proc_fd, const Topology *t, Timeline **ret) {
        _cleanup_timeline_ Timeline *tl = NULL;
        unsigned n;
        int r;

        if (!t || !ret)
                return -EINVAL;
        n = topology_n_nodes(t);
        if (n == 0)
                return -EINVAL;
        tl = calloc(1, sizeof *tl);
        if (!tl)
                return -ENOMEM;
        tl->proc_fd = proc_fd;
        tl->events_fd = -EBADF;
        tl->n_nodes = n;
        tl->node_ids = calloc(n, sizeof *tl->node_ids);
        tl->node_cpus = calloc(n, sizeof *tl->node_cpus);
        if (!tl->node_ids || !tl->node_cpus)
                return -ENOMEM;
        for (unsigned i = 0; i < n; i++) {
                r = topology_node_id(t, i);
                if (r < 0)
                        return -EINVAL;
                tl->node_ids[i] = r;
        }
        r = map_cpus(tl, t);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(tl);
        return 0;
}

int timeline_new(int proc_fd, const Topology *t, Timeline **ret) {
        if (proc_fd < 0)
                return -EBADF;
        return timeline_new_internal(proc_fd, t, ret);
}

int timeline_new_model(const Topology *t, Timeline **ret) {
        int r = timeline_new_internal(-EBADF, t, ret);

        if (r >= 0)
                (*ret)->model = true;
        return r;
}

int timeline_set_name(Timeline *tl, const char *name) {
        char *copy = strdup(name);

        if (!copy)
                return -ENOMEM;
        free(tl->name);
        tl->name = copy;
        return 0;
}

int timeline_add_sample(Timeline *tl, uint64_t now_usec, const uint64_t *load) {
        if (greedy_realloc((void **) &tl->sample_usec, &tl->cap_samples, tl->n_samples + 1,
                           sizeof *tl->sample_usec, 16) < 0 ||
            greedy_realloc((void **) &tl->sample_load, &tl->cap_load_rows, tl->n_samples + 1,
                           tl->n_nodes * sizeof *tl->sample_load, 16) < 0)
                return -ENOMEM;
        memcpy(tl->sample_load + tl->n_samples * tl->n_nodes, load, tl->n_nodes * sizeof *load);
        tl->sample_usec[tl->n_samples++] = now_usec;
        return 0;
}

/*
 * Adds each CPU's utilisation from base to cur to its node's load. Returns whether any CPU's
 * counters moved at all (else the interval was shorter than a tick).
 */
static bool node_loads(const Timeline *tl, const ProcStat *cur, uint64_t *load) {
        bool moved = false;

        for (unsigned i = 0; i < tl->n_cpus; i++) {
                CpuTicksDelta d;
                unsigned util;

                /* A CPU with no line in either sample went offline: it did no work. */
                if (cpu_times_delta(proc_stat_cpu(tl->base, tl->cpus[i]),
                                    proc_stat_cpu(cur, tl->cpus[i]), &d) < 0)
                        continue;
                if (cpu_ticks_util_permyriad(&d, &util) < 0)
                        continue; /* -ENODATA: no tick on this CPU */
                moved = true;
                load[tl->cpu_node[i]] += util;
        }
        return moved;
}

int timeline_sample(Timeline *tl, uint64_t now_usec) {
        _cleanup_proc_stat_ ProcStat *cur = NULL;
        _cleanup_free_ uint64_t *load = NULL;
        int r;

        if (!tl || tl->model)
                return -EINVAL;
        if (tl->base && now_usec < tl->base_usec)
                return -EINVAL;
        r = proc_stat_read_at(tl->proc_fd, &cur);
        if (r < 0)
                return r;
        if (!tl->base) {
                tl->base = TAKE_PTR(cur);
                tl->base_usec = tl->first_usec = now_usec;
                return 0;
        }
        load = calloc(tl->n_nodes, sizeof *load);
        if (!load)
                return -ENOMEM;
        if (!node_loads(tl, cur, load))
                return 0;
        r = timeline_add_sample(tl, now_usec, load);
        if (r < 0)
                return r;
        proc_stat_free(tl->base);
        tl->base = TAKE_PTR(cur);
        tl->base_usec = now_usec;
        return 0;
}

/* ---- the daemon's events */

int timeline_note_event(Timeline *tl, const Event *e) {
        char *name;

        if (!tl || !e)
                return -EINVAL;
        switch (e->kind) {
        case EVENT_TASK_MOVED:
                if (greedy_realloc((void **) &tl->moves, &tl->cap_moves, tl->n_moves + 1,
                                   sizeof *tl->moves, 16) < 0)
                        return -ENOMEM;
                name = strdup(e->comm);
                if (!name)
                        return -ENOMEM;
                tl->moves[tl->n_moves++] = (TimelineMove){ .usec = e->monotonic_usec,
                                                           .pid = e->pid,
                                                           .comm = name,
                                                           .from = e->from_node,
                                                           .to = e->to_node };
                break;
        case EVENT_WEIGHT_CHANGED:
                if (greedy_realloc((void **) &tl->weights, &tl->cap_weights, tl->n_weights + 1,
                                   sizeof *tl->weights, 16) < 0)
                        return -ENOMEM;
                name = strdup(e->cgroup);
                if (!name)
                        return -ENOMEM;
                tl->weights[tl->n_weights++] = (TimelineWeight){ .usec = e->monotonic_usec,
                                                                 .cgroup = name,
                                                                 .from = e->old_weight,
                                                                 .to = e->new_weight };
                break;
        default: return -EINVAL;
        }
        if (!tl->have_first_event || e->monotonic_usec < tl->first_event_usec) {
                tl->have_first_event = true;
                tl->first_event_usec = e->monotonic_usec;
        }
        return 0;
}

int timeline_note_event_line(Timeline *tl, const char *line) {
        _cleanup_free_ Event *e = malloc(sizeof *e); /* 5 KiB */
        int r;

        if (!tl || !line)
                return -EINVAL;
        if (!e)
                return -ENOMEM;
        r = event_parse(line, e);
        if (r < 0)
                return r;
        return timeline_note_event(tl, e);
}

int timeline_open_events(Timeline *tl, int *ret_fd) {
        int fds[2];

        if (!tl || !ret_fd)
                return -EINVAL;
        if (tl->events_fd >= 0)
                return -EBUSY;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        /* The write end is the daemon's: inherited across its exec. */
        if (fcntl(fds[1], F_SETFD, 0) < 0 || fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0) {
                int r = negative_errno();

                (void) close(fds[0]);
                (void) close(fds[1]);
                return r;
        }
        tl->events_fd = fds[0];
        tl->events_len = 0;
        *ret_fd = fds[1];
        return 0;
}

/* One line of the pipe (NUL-terminated in place): 1 recorded, 0 rejected, -ENOMEM. */
static int note_pipe_line(Timeline *tl, char *line) {
        int r = timeline_note_event_line(tl, line);

        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                tl->n_rejected++;
                return 0;
        }
        return 1;
}

/* The complete lines in the buffer; an unterminated rest stays (or is cut when it fills it). */
static int note_pipe_lines(Timeline *tl, bool eof) {
        char *nl;
        int n = 0, r;

        while ((nl = memchr(tl->events_line, '\n', tl->events_len))) {
                *nl = '\0';
                r = note_pipe_line(tl, tl->events_line);
                if (r < 0)
                        return r;
                n += r;
                tl->events_len -= (size_t) (nl + 1 - tl->events_line);
                memmove(tl->events_line, nl + 1, tl->events_len);
        }
        if (tl->events_len == TIMELINE_EVENT_LINE_MAX || (eof && tl->events_len > 0)) {
                tl->events_line[tl->events_len] = '\0';
                tl->events_len = 0;
                r = note_pipe_line(tl, tl->events_line);
                if (r < 0)
                        return r;
                n += r;
        }
        return n;
}

int timeline_read_events(Timeline *tl) {
        int n = 0;

        if (!tl)
                return -EINVAL;
        while (tl->events_fd >= 0) {
                ssize_t k;
                int r;

                if (!tl->events_line) {
                        tl->events_line = malloc(TIMELINE_EVENT_LINE_MAX + 1);
                        if (!tl->events_line)
                                return -ENOMEM;
                }
                k = read(tl->events_fd, tl->events_line + tl->events_len,
                         TIMELINE_EVENT_LINE_MAX - tl->events_len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && errno == EAGAIN)
                        break;
                if (k > 0)
                        tl->events_len += (size_t) k;
                r = note_pipe_lines(tl, /* eof= */ k <= 0);
                if (r < 0)
                        return r;
                n += r;
                if (k <= 0) { /* EOF, or an error: the daemon wrote its last */
                        (void) close(tl->events_fd);
                        tl->events_fd = -EBADF;
                }
        }
        return n;
}

/* ---- output */

/* Seconds from the origin: signed, a line may come before the baseline. */
static double seconds_since(uint64_t origin, uint64_t usec) {
        return usec >= origin ? (double) (usec - origin) / 1e6 : -(double) (origin - usec) / 1e6;
}

static void write_samples(const Timeline *tl, Json *j, uint64_t origin) {
        json_key(j, "samples");
        json_begin(j, '[');
        for (size_t i = 0; i < tl->n_samples; i++) {
                json_begin(j, '{');
                json_double(j, "t", seconds_since(origin, tl->sample_usec[i]), 2);
                json_key(j, "load");
                json_begin(j, '[');
                for (unsigned n = 0; n < tl->n_nodes; n++)
                        json_double(j, NULL, (double) tl->sample_load[i * tl->n_nodes + n] / 1e4,
                                    2);
                json_end(j, ']');
                json_end(j, '}');
        }
        json_end(j, ']');
}

static void write_events(const Timeline *tl, Json *j, uint64_t origin) {
        json_key(j, "moves");
        json_begin(j, '[');
        for (size_t i = 0; i < tl->n_moves; i++) {
                const TimelineMove *m = &tl->moves[i];

                json_begin(j, '{');
                json_double(j, "t", seconds_since(origin, m->usec), 2);
                json_i64(j, "pid", m->pid);
                json_string(j, "comm", m->comm);
                json_i64(j, "from", m->from);
                json_i64(j, "to", m->to);
                json_end(j, '}');
        }
        json_end(j, ']');
        json_key(j, "weights");
        json_begin(j, '[');
        for (size_t i = 0; i < tl->n_weights; i++) {
                const TimelineWeight *w = &tl->weights[i];

                json_begin(j, '{');
                json_double(j, "t", seconds_since(origin, w->usec), 2);
                json_string(j, "cgroup", w->cgroup);
                json_u64(j, "from", w->from);
                json_u64(j, "to", w->to);
                json_end(j, '}');
        }
        json_end(j, ']');
}

void timeline_write_json(const Timeline *tl, Json *j, const char *key) {
        uint64_t origin = tl->model ? 0 : tl->base ? tl->first_usec : tl->first_event_usec;
        uint64_t interval = 0;

        if (tl->n_samples > 0)
                interval = (tl->sample_usec[tl->n_samples - 1] - tl->first_usec) / tl->n_samples;
        if (key)
                json_key(j, key);
        json_begin(j, '{');
        if (tl->name)
                json_string(j, "name", tl->name);
        json_u64(j, "interval_usec", interval);
        json_key(j, "nodes");
        json_begin(j, '[');
        for (unsigned n = 0; n < tl->n_nodes; n++)
                json_i64(j, NULL, tl->node_ids[n]);
        json_end(j, ']');
        json_key(j, "node_cpus");
        json_begin(j, '[');
        for (unsigned n = 0; n < tl->n_nodes; n++)
                json_u64(j, NULL, tl->node_cpus[n]);
        json_end(j, ']');
        write_samples(tl, j, origin);
        write_events(tl, j, origin);
        json_end(j, '}');
}

size_t timeline_n_samples(const Timeline *tl) {
        return tl ? tl->n_samples : 0;
}

size_t timeline_n_moves(const Timeline *tl) {
        return tl ? tl->n_moves : 0;
}

size_t timeline_n_weights(const Timeline *tl) {
        return tl ? tl->n_weights : 0;
}

size_t timeline_n_rejected(const Timeline *tl) {
        return tl ? tl->n_rejected : 0;
}
