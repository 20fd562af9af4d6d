/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpumask.h"
#include "parse.h"
#include "proc.h"
#include "timeline.h"

#define MOVE_PREFIX "Moved pid "
#define WEIGHT_PREFIX "Set the weight of "

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
};

Timeline *timeline_free(Timeline *tl) {
        if (!tl)
                return NULL;
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

int timeline_new(int proc_fd, const Topology *t, Timeline **ret) {
        _cleanup_timeline_ Timeline *tl = NULL;
        unsigned n;
        int r;

        if (proc_fd < 0)
                return -EBADF;
        if (!t || !ret)
                return -EINVAL;
        n = topology_n_nodes(t);
        if (n == 0)
                return -EINVAL;
        tl = calloc(1, sizeof *tl);
        if (!tl)
                return -ENOMEM;
        tl->proc_fd = proc_fd;
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

        if (!tl)
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
        if (greedy_realloc((void **) &tl->sample_usec, &tl->cap_samples, tl->n_samples + 1,
                           sizeof *tl->sample_usec, 16) < 0 ||
            greedy_realloc((void **) &tl->sample_load, &tl->cap_load_rows, tl->n_samples + 1,
                           tl->n_nodes * sizeof *tl->sample_load, 16) < 0)
                return -ENOMEM;
        memcpy(tl->sample_load + tl->n_samples * tl->n_nodes, load, tl->n_nodes * sizeof *load);
        tl->sample_usec[tl->n_samples++] = now_usec;
        proc_stat_free(tl->base);
        tl->base = TAKE_PTR(cur);
        tl->base_usec = now_usec;
        return 0;
}

/* ---- the daemon's lines */

/* Decimal digits at *p, at most max: advances *p. false if none, or beyond max. */
static bool parse_u64(const char **p, uint64_t max, uint64_t *ret) {
        return parse_u64_prefix(p, max, ret) == 0;
}

static bool skip(const char **p, const char *lit) {
        size_t n = strlen(lit);

        if (strncmp(*p, lit, n) != 0)
                return false;
        *p += n;
        return true;
}

/* The ':' that ends the fixed part, then the reason (possibly empty), or the end of the line. */
static bool reason_follows(const char *p) {
        return p[0] == ':' && (p[1] == ' ' || p[1] == '\0' || p[1] == '\n');
}

/* After a comm's ")": " node A -> B, CPUs LIST:". */
static bool parse_move_tail(const char *p, int64_t *from, int64_t *to) {
        uint64_t a, b;
        size_t list;

        if (!skip(&p, ") node ") || !parse_u64(&p, INT_MAX, &a) || !skip(&p, " -> ") ||
            !parse_u64(&p, INT_MAX, &b) || !skip(&p, ", CPUs "))
                return false;
        list = strspn(p, "0123456789,-");
        if (list == 0 || !reason_follows(p + list))
                return false;
        *from = (int64_t) a;
        *to = (int64_t) b;
        return true;
}

static TimelineEventKind parse_move(const char *p, TimelineEvent *ret) {
        const char *comm, *end = NULL;
        int64_t from = 0, to = 0;
        uint64_t pid;

        if (!parse_u64(&p, INT_MAX, &pid) || pid == 0 || !skip(&p, " ("))
                return TIMELINE_EVENT_NONE;
        comm = p;
        /* The last ") node " the rest parses after: a comm may contain one, a reason never. */
        for (const char *q = strstr(comm, ") node "); q; q = strstr(q + 1, ") node ")) {
                int64_t f, t;

                if (q > comm && q - comm < PROC_COMM_SIZE && parse_move_tail(q, &f, &t)) {
                        end = q;
                        from = f;
                        to = t;
                }
        }
        if (!end)
                return TIMELINE_EVENT_NONE;
        *ret = (TimelineEvent){ .kind = TIMELINE_EVENT_MOVE,
                                .pid = (pid_t) pid,
                                .name = comm,
                                .name_len = (size_t) (end - comm),
                                .from = from,
                                .to = to };
        return TIMELINE_EVENT_MOVE;
}

static TimelineEventKind parse_weight(const char *path, TimelineEvent *ret) {
        const char *end = NULL;
        uint64_t from = 0, to = 0;

        /* The last " W -> W:" that parses: a path may contain one, a reason never. */
        for (const char *q = strchr(path + 1, ' '); q; q = strchr(q + 1, ' ')) {
                const char *p = q + 1;
                uint64_t a, b;

                if (parse_u64(&p, UINT32_MAX, &a) && skip(&p, " -> ") &&
                    parse_u64(&p, UINT32_MAX, &b) && reason_follows(p)) {
                        end = q;
                        from = a;
                        to = b;
                }
        }
        if (!end)
                return TIMELINE_EVENT_NONE;
        *ret = (TimelineEvent){ .kind = TIMELINE_EVENT_WEIGHT,
                                .name = path,
                                .name_len = (size_t) (end - path),
                                .from = (int64_t) from,
                                .to = (int64_t) to };
        return TIMELINE_EVENT_WEIGHT;
}

static TimelineEventKind parse_message(const char *msg, TimelineEvent *ret) {
        if (skip(&msg, MOVE_PREFIX))
                return parse_move(msg, ret);
        if (skip(&msg, WEIGHT_PREFIX) && *msg)
                return parse_weight(msg, ret);
        return TIMELINE_EVENT_NONE;
}

TimelineEventKind timeline_parse_daemon_line(const char *line, TimelineEvent *ret) {
        TimelineEventKind k;
        size_t ident;

        if (!line || !ret)
                return TIMELINE_EVENT_NONE;
        k = parse_message(line, ret);
        if (k != TIMELINE_EVENT_NONE)
                return k;
        /* log_set_ident()'s "cgbalanced: ": one word without blanks or colons. */
        ident = strcspn(line, " :\t\n");
        if (ident == 0 || line[ident] != ':' || line[ident + 1] != ' ')
                return TIMELINE_EVENT_NONE;
        return parse_message(line + ident + 2, ret);
}

int timeline_note_daemon_line(Timeline *tl, uint64_t now_usec, const char *line) {
        TimelineEvent e;
        char *name;

        if (!tl)
                return -EINVAL;
        switch (timeline_parse_daemon_line(line, &e)) {
        case TIMELINE_EVENT_MOVE:
                if (greedy_realloc((void **) &tl->moves, &tl->cap_moves, tl->n_moves + 1,
                                   sizeof *tl->moves, 16) < 0)
                        return -ENOMEM;
                name = strndup(e.name, e.name_len);
                if (!name)
                        return -ENOMEM;
                tl->moves[tl->n_moves++] = (TimelineMove){ .usec = now_usec,
                                                           .pid = e.pid,
                                                           .comm = name,
                                                           .from = (int) e.from,
                                                           .to = (int) e.to };
                break;
        case TIMELINE_EVENT_WEIGHT:
                if (greedy_realloc((void **) &tl->weights, &tl->cap_weights, tl->n_weights + 1,
                                   sizeof *tl->weights, 16) < 0)
                        return -ENOMEM;
                name = strndup(e.name, e.name_len);
                if (!name)
                        return -ENOMEM;
                tl->weights[tl->n_weights++] = (TimelineWeight){ .usec = now_usec,
                                                                 .cgroup = name,
                                                                 .from = (uint32_t) e.from,
                                                                 .to = (uint32_t) e.to };
                break;
        default: return 0;
        }
        if (!tl->have_first_event) {
                tl->have_first_event = true;
                tl->first_event_usec = now_usec;
        }
        return 1;
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
        uint64_t origin = tl->base ? tl->first_usec : tl->first_event_usec;
        uint64_t interval = 0;

        if (tl->n_samples > 0)
                interval = (tl->sample_usec[tl->n_samples - 1] - tl->first_usec) / tl->n_samples;
        if (key)
                json_key(j, key);
        json_begin(j, '{');
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
