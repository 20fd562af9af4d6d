/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "simulate.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "clock.h"
#include "config.h"
#include "event.h"
#include "json.h"
#include "log.h"
#include "macro.h"
#include "parse.h"
#include "scenario.h"
#include "timeline.h"
#include "trace.h"
#include "tunables.h"

#define EPSILON 1e-9

/* ---- machines */

static const SimMachine machines[] = {
        { "numaq", "pack:4 numa:1 core:4 pu:1", "10,40,40,40;40,10,40,40;40,40,10,40;40,40,40,10",
          "seed 002's NUMAQ: 4 nodes of 4 CPUs, remote memory 4x local" },
        { "x440", "pack:8 numa:1 core:2 pu:2",
          "10,20,20,20,30,30,30,30;20,10,20,20,30,30,30,30;20,20,10,20,30,30,30,30;"
          "20,20,20,10,30,30,30,30;30,30,30,30,10,20,20,20;30,30,30,30,20,10,20,20;"
          "30,30,30,30,20,20,10,20;30,30,30,30,20,20,20,10",
          "an 8-node x440: 2 chassis of 4 nodes, each 2 cores with HT" },
        { "snc", "pack:2 numa:2 core:16 pu:1", "10,12,21,21;12,10,21,21;21,21,10,12;21,21,12,10",
          "a 2-socket 64-core server with sub-NUMA clustering: 4 nodes of 16 cores" },
        { "16node", "pack:16 numa:1 core:64 pu:1", NULL,
          "16 nodes of 64 CPUs (1,024): groups of 4 at distance 16, 32 across" },
};

const SimMachine *sim_machines(size_t *ret_n) {
        *ret_n = ELEMENTSOF(machines);
        return machines;
}

const SimMachine *sim_machine_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(machines); i++)
                if (streq(machines[i].name, name))
                        return &machines[i];
        return NULL;
}

/* 16node's matrix: 10 local, 16 within a group of 4 nodes, 32 across. */
static char *sixteen_distances(void) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return NULL;
        for (unsigned a = 0; a < 16; a++)
                for (unsigned b = 0; b < 16; b++) {
                        unsigned d = a == b ? 10u : a / 4 == b / 4 ? 16u : 32u;

                        fprintf(f, "%u%s", d, b < 15 ? "," : a < 15 ? ";" : "");
                }
        return fclose(f) == 0 ? buf : NULL;
}

static int machine_topology(const char *synthetic, const char *distances, Topology **ret) {
        _cleanup_free_ unsigned *d = NULL;
        unsigned n = 0;
        int r;

        if (distances) {
                r = topology_parse_distances(distances, &d, &n, NULL);
                if (r < 0)
                        return r;
        }
        return topology_new_from_synthetic(synthetic, d, n, ret);
}

/* ---- task specs */

static int why_fail(char *why, size_t size, const char *format, ...) _printf_(3, 4);
static int why_fail(char *why, size_t size, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        vsnprintf(why, size, format, ap);
        va_end(ap);
        return -EINVAL;
}

static bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool parse_double(const char *s, double lo, double hi, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || !(v >= lo && v <= hi))
                return false;
        *ret = v;
        return true;
}

static int parse_pattern(const char *p, SimTaskSpec *t, char *why, size_t size) {
        double a, b;

        if (streq(p, "busy")) {
                t->phases[t->n_phases++] = (SimPhase){ .demand = 1.0 };
                return 0;
        }
        if (startswith(p, "duty=")) {
                if (!parse_double(p + 5, 0.0, 1.0, &a))
                        return why_fail(why, size, "\"%s\": duty wants a share 0..1", p);
                t->phases[t->n_phases++] = (SimPhase){ .demand = a };
                return 0;
        }
        if (startswith(p, "random=")) {
                if (!parse_double(p + 7, 0.0, 1.0, &a) || a <= 0)
                        return why_fail(why, size, "\"%s\": random wants a probability 0..1", p);
                t->random = a;
                return 0;
        }
        if (startswith(p, "burst=")) {
                _cleanup_free_ char *on = strdup(p + 6);
                char *slash = on ? strchr(on, '/') : NULL;

                if (!on)
                        return -ENOMEM;
                if (!slash)
                        return why_fail(why, size, "\"%s\": burst wants ON/PERIOD seconds", p);
                *slash = '\0';
                if (!parse_double(on, 0.001, 86400, &a) ||
                    !parse_double(slash + 1, 0.001, 86400, &b) || a > b)
                        return why_fail(why, size,
                                        "\"%s\": burst wants ON/PERIOD seconds, ON <= PERIOD", p);
                t->phases[t->n_phases++] =
                        (SimPhase){ .demand = 1.0, .usec = (uint64_t) (a * 1e6) };
                if (b > a)
                        t->phases[t->n_phases++] =
                                (SimPhase){ .demand = 0.0, .usec = (uint64_t) ((b - a) * 1e6) };
                t->loop = true;
                return 0;
        }
        return why_fail(why, size,
                        "\"%s\": the pattern is busy, duty=F, burst=ON/PERIOD or random=P", p);
}

int sim_parse_tasks(const char *spec, SimTaskSpec *ret, char *why, size_t why_size) {
        _cleanup_free_ char *copy = strdup(spec);
        SimTaskSpec t = { .mem_kib = 64 * 1024, .mem_share = 0.5, .node = -1, .group = "tasks" };
        char *colon, *save = NULL, *word;
        double v;
        int r;

        if (!copy)
                return -ENOMEM;
        colon = strchr(copy, ':');
        if (!colon)
                return why_fail(why, why_size, "\"%s\": want COUNT:PATTERN[,KEY=VALUE...]", spec);
        *colon = '\0';
        if (!parse_double(copy, 1, 10000000, &v) || v != floor(v))
                return why_fail(why, why_size, "\"%s\": the count is 1..10000000", copy);
        t.count = (unsigned) v;
        word = strtok_r(colon + 1, ",", &save);
        if (!word)
                return why_fail(why, why_size, "\"%s\": no pattern", spec);
        r = parse_pattern(word, &t, why, why_size);
        if (r < 0)
                return r;
        while ((word = strtok_r(NULL, ",", &save))) {
                if (startswith(word, "mem=") && parse_double(word + 4, 0, 1 << 24, &v))
                        t.mem_kib = (uint64_t) (v * 1024);
                else if (startswith(word, "share=") && parse_double(word + 6, 0, 1, &v))
                        t.mem_share = v;
                else if (streq(word, "spread"))
                        t.node = -1;
                else if (streq(word, "bind"))
                        t.bind = true;
                else if (startswith(word, "node=") && parse_double(word + 5, 0, 4095, &v) &&
                         v == floor(v))
                        t.node = (int) v;
                else if (startswith(word, "group=") && word[6] && strlen(word + 6) < sizeof t.group)
                        strcpy(t.group, word + 6);
                else
                        return why_fail(why, why_size,
                                        "\"%s\": want mem=MIB, share=0..1, node=N, spread, "
                                        "bind or group=NAME",
                                        word);
        }
        *ret = t;
        return 0;
}

size_t sim_default_tasks(unsigned n_cpus, unsigned first_node_cpus, int first_node,
                         SimTaskSpec ret[2]) {
        char why[128];

        (void) sim_parse_tasks("1:busy,mem=512,share=0.5,bind,group=bound", &ret[0], why,
                               sizeof why);
        ret[0].count = MAX(first_node_cpus * 3 / 2, 1u);
        ret[0].node = first_node;
        (void) sim_parse_tasks("1:burst=0.3/2,mem=128,share=0.5,group=bursty", &ret[1], why,
                               sizeof why);
        ret[1].count = n_cpus * 2;
        return 2;
}

/* A scenario's tasks, where a demand fits: run (with its duty), sleep, periodic, memwalk. */
static int specs_from_scenario(const Scenario *sc, SimTaskSpec **ret, size_t *ret_n, char *why,
                               size_t why_size) {
        size_t n = scenario_n_tasks(sc);
        _cleanup_free_ SimTaskSpec *specs = calloc(n ? n : 1, sizeof *specs);

        if (!specs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const ScenarioTask *st = scenario_task(sc, i);
                SimTaskSpec *t = &specs[i];

                *t = (SimTaskSpec){ .count = (unsigned) st->instances,
                                    .mem_kib = 16 * 1024,
                                    .mem_share = 0.5,
                                    .node = st->spread == SPREAD_NODES ? -1 : (int) st->node,
                                    .loop = st->loop };
                snprintf(t->group, sizeof t->group, "%s", st->group);
                if (sc->n_phases[i] > SIM_MAX_PHASES)
                        return why_fail(why, why_size, "task %s: more than %u phases",
                                        scenario_task_name(sc, i), SIM_MAX_PHASES);
                for (size_t k = 0; k < sc->n_phases[i]; k++) {
                        const Phase *p = &sc->phases[i][k];
                        SimPhase *sp = &t->phases[t->n_phases++];

                        switch (p->type) {
                        case PHASE_RUN:
                                if (p->duration_usec == 0)
                                        return why_fail(why, why_size,
                                                        "%s:%u: run N loops has no length in "
                                                        "time to simulate; give a duration",
                                                        p->file, p->line);
                                *sp = (SimPhase){ .demand = p->duty_pct / 100.0,
                                                  .usec = p->duration_usec };
                                break;
                        case PHASE_SLEEP: *sp = (SimPhase){ .usec = p->duration_usec }; break;
                        case PHASE_PERIODIC:
                                *sp = (SimPhase){ .demand = (double) p->run_usec /
                                                            (double) p->period_usec,
                                                  .usec = p->duration_usec };
                                break;
                        case PHASE_MEMWALK:
                                if (p->duration_usec == 0)
                                        return why_fail(why, why_size,
                                                        "%s:%u: memwalk N passes has no length "
                                                        "in time to simulate; give a duration",
                                                        p->file, p->line);
                                *sp = (SimPhase){ .demand = 1.0, .usec = p->duration_usec };
                                t->mem_kib = MAX(t->mem_kib, p->bytes / 1024);
                                t->mem_share = 0.9;
                                break;
                        default:
                                return why_fail(why, why_size,
                                                "%s:%u: a %s phase has no demand model in the "
                                                "simulator (run, sleep, periodic and memwalk do)",
                                                p->file, p->line, phase_type_to_string(p->type));
                        }
                }
        }
        *ret = TAKE_PTR(specs);
        *ret_n = n;
        return 0;
}

/* ---- the model */

typedef struct SimTask {
        size_t spec;
        uint64_t offset_usec; /* where in its phases it started */
        unsigned home; /* node index of its memory */
        int cpu;
        size_t mask; /* index into Sim.masks */
        bool ours, foreign;
        uint64_t last_move;
        double demand, served;
} SimTask;

/* A mask tasks may have, and how each node stands to it. */
typedef struct SimMask {
        CpuMask *cpus;
        uint8_t *node_full; /* by node index: every CPU of the node is in it */
        uint8_t *node_any; /* some are */
} SimMask;

/* Per node, a tournament tree over its CPUs' loads: the least loaded one in O(1). */
typedef struct NodeTree {
        unsigned n; /* CPUs */
        unsigned size; /* leaves, a power of two */
        unsigned *cpus; /* by leaf */
        unsigned *tree; /* 2 * size entries of leaf indexes; tree[1] is the least loaded */
} NodeTree;

struct Sim {
        const Topology *topo;
        SimTaskSpec *specs;
        size_t n_specs;
        const uint16_t *trace; /* sim_set_trace(): ticks x tasks demands, permyriad */
        uint64_t trace_ticks;
        uint64_t interval_usec;
        uint64_t rng;
        unsigned n_nodes, n_cpus;
        int *cpu_node; /* node index by CPU, -1 not usable */
        unsigned *cpu_leaf;
        double *load;
        NodeTree *trees;
        unsigned **near; /* by node index: the node indexes by distance from it, itself first */
        SimMask *masks;
        size_t n_masks;
        SimTask *tasks;
        size_t n_tasks;
        PolicyCpu *pcpus;
        PolicyTask *ptasks;
        PolicyCgroup *groups;
        char (*paths)[48];
        size_t n_groups;
        size_t *spec_group;
        PolicySnapshot snap;
        SimTotals totals;
};

static uint64_t sim_rng(Sim *s) {
        uint64_t z = (s->rng += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static double sim_uniform(Sim *s) {
        return (double) (sim_rng(s) >> 11) / 9007199254740992.0;
}

Sim *sim_free(Sim *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_masks; i++) {
                cpumask_free(s->masks[i].cpus);
                free(s->masks[i].node_full);
                free(s->masks[i].node_any);
        }
        free(s->masks);
        for (unsigned i = 0; s->trees && i < s->n_nodes; i++) {
                free(s->trees[i].cpus);
                free(s->trees[i].tree);
        }
        free(s->trees);
        for (unsigned i = 0; s->near && i < s->n_nodes; i++)
                free(s->near[i]);
        free(s->near);
        free(s->specs);
        free(s->cpu_node);
        free(s->cpu_leaf);
        free(s->load);
        free(s->tasks);
        free(s->pcpus);
        free(s->ptasks);
        free(s->groups);
        free(s->paths);
        free(s->spec_group);
        free(s);
        return NULL;
}

static double leaf_load(const Sim *s, const NodeTree *t, unsigned leaf) {
        return leaf < t->n ? s->load[t->cpus[leaf]] : INFINITY;
}

static void tree_fix(Sim *s, NodeTree *t, unsigned leaf) {
        unsigned i = (t->size + leaf) / 2;

        t->tree[t->size + leaf] = leaf;
        for (; i >= 1; i /= 2) {
                unsigned a = t->tree[2 * i], b = t->tree[2 * i + 1];
                double la = leaf_load(s, t, a), lb = leaf_load(s, t, b);

                t->tree[i] = lb < la || (lb == la && b < a) ? b : a;
        }
}

static void tree_reset(Sim *s, NodeTree *t) {
        for (unsigned l = 0; l < t->size; l++)
                t->tree[t->size + l] = l;
        for (unsigned i = t->size - 1; i >= 1; i--) {
                unsigned a = t->tree[2 * i], b = t->tree[2 * i + 1];
                double la = leaf_load(s, t, a), lb = leaf_load(s, t, b);

                t->tree[i] = lb < la || (lb == la && b < a) ? b : a;
        }
}

static int sim_add_mask(Sim *s, const CpuMask *m, size_t *ret) {
        SimMask *a, *x;

        for (size_t i = 0; i < s->n_masks; i++)
                if (cpumask_equal(s->masks[i].cpus, m)) {
                        *ret = i;
                        return 0;
                }
        a = reallocarray(s->masks, s->n_masks + 1, sizeof *a);
        if (!a)
                return -ENOMEM;
        s->masks = a;
        x = &a[s->n_masks];
        *x = (SimMask){ .cpus = cpumask_copy(m),
                        .node_full = calloc(s->n_nodes, 1),
                        .node_any = calloc(s->n_nodes, 1) };
        if (!x->cpus || !x->node_full || !x->node_any) {
                cpumask_free(x->cpus);
                free(x->node_full);
                free(x->node_any);
                return -ENOMEM;
        }
        for (unsigned n = 0; n < s->n_nodes; n++) {
                const NodeTree *t = &s->trees[n];
                unsigned in = 0;

                for (unsigned k = 0; k < t->n; k++)
                        in += cpumask_isset(m, t->cpus[k]);
                x->node_full[n] = t->n > 0 && in == t->n;
                x->node_any[n] = in > 0;
        }
        *ret = s->n_masks++;
        return 0;
}

static int sim_build_nodes(Sim *s) {
        const CpuMask *usable = topology_usable_cpus(s->topo);
        const unsigned *dist = topology_distances(s->topo);

        s->trees = calloc(s->n_nodes, sizeof *s->trees);
        s->near = calloc(s->n_nodes, sizeof *s->near);
        if (!s->trees || !s->near)
                return -ENOMEM;
        for (unsigned n = 0; n < s->n_nodes; n++) {
                NodeTree *t = &s->trees[n];
                const CpuMask *nc =
                        topology_node_cpus(s->topo, (unsigned) topology_node_id(s->topo, n));

                t->cpus = calloc(s->n_cpus, sizeof *t->cpus);
                if (!t->cpus)
                        return -ENOMEM;
                CPUMASK_FOREACH(cpu, nc)
                        if (cpumask_isset(usable, (unsigned) cpu)) {
                                s->cpu_node[cpu] = (int) n;
                                s->cpu_leaf[cpu] = t->n;
                                t->cpus[t->n++] = (unsigned) cpu;
                        }
                for (t->size = 1; t->size < MAX(t->n, 1u); t->size *= 2)
                        ;
                t->tree = calloc(2 * (size_t) t->size, sizeof *t->tree);
                s->near[n] = calloc(s->n_nodes, sizeof *s->near[n]);
                if (!t->tree || !s->near[n])
                        return -ENOMEM;
                for (unsigned k = 0; k < s->n_nodes; k++)
                        s->near[n][k] = k;
                /* insertion sort by distance, then index: itself (10) first */
                for (unsigned a = 1; a < s->n_nodes; a++)
                        for (unsigned b = a; b > 0; b--) {
                                unsigned x = s->near[n][b - 1], y = s->near[n][b];
                                unsigned dx = dist[(size_t) n * s->n_nodes + x],
                                         dy = dist[(size_t) n * s->n_nodes + y];

                                if (dx < dy || (dx == dy && x < y))
                                        break;
                                s->near[n][b - 1] = y;
                                s->near[n][b] = x;
                        }
        }
        return 0;
}

static int sim_build_groups(Sim *s) {
        s->spec_group = calloc(s->n_specs, sizeof *s->spec_group);
        s->groups = calloc(s->n_specs, sizeof *s->groups);
        s->paths = calloc(s->n_specs, sizeof *s->paths);
        if (!s->spec_group || !s->groups || !s->paths)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_specs; i++) {
                size_t g;

                for (g = 0; g < s->n_groups; g++)
                        if (streq(s->paths[g] + strlen("sim/"), s->specs[i].group))
                                break;
                if (g == s->n_groups) {
                        snprintf(s->paths[g], sizeof s->paths[g], "sim/%s", s->specs[i].group);
                        s->groups[g] = (PolicyCgroup){ .path = s->paths[g],
                                                       .weight = 100,
                                                       .base_weight = 100 };
                        s->n_groups++;
                }
                s->spec_group[i] = g;
        }
        return 0;
}

static uint64_t spec_period(const SimTaskSpec *t) {
        uint64_t p = 0;

        for (size_t k = 0; k < t->n_phases; k++)
                p += t->phases[k].usec;
        return p;
}

int sim_new(const Topology *topo, const SimTaskSpec *specs, size_t n_specs, uint64_t seed,
            uint64_t interval_usec, Sim **ret) {
        _cleanup_sim_ Sim *s = calloc(1, sizeof *s);
        size_t all, n = 0;
        int r;

        if (!s)
                return -ENOMEM;
        s->topo = topo;
        s->rng = seed;
        s->interval_usec = interval_usec;
        s->n_nodes = topology_n_nodes(topo);
        s->n_cpus = topology_cpu_capacity(topo);
        for (size_t i = 0; i < n_specs; i++)
                n += specs[i].count;
        if (n == 0 || interval_usec == 0)
                return -EINVAL;
        s->specs = calloc(n_specs, sizeof *s->specs);
        s->cpu_node = malloc(s->n_cpus * sizeof *s->cpu_node);
        s->cpu_leaf = calloc(s->n_cpus, sizeof *s->cpu_leaf);
        s->load = calloc(s->n_cpus, sizeof *s->load);
        s->pcpus = calloc(s->n_cpus, sizeof *s->pcpus);
        s->tasks = calloc(n, sizeof *s->tasks);
        s->ptasks = calloc(n, sizeof *s->ptasks);
        if (!s->specs || !s->cpu_node || !s->cpu_leaf || !s->load || !s->pcpus || !s->tasks ||
            !s->ptasks)
                return -ENOMEM;
        memcpy(s->specs, specs, n_specs * sizeof *specs);
        s->n_specs = n_specs;
        for (unsigned c = 0; c < s->n_cpus; c++)
                s->cpu_node[c] = -1;
        r = sim_build_nodes(s);
        if (r >= 0)
                r = sim_build_groups(s);
        if (r >= 0)
                r = sim_add_mask(s, topology_usable_cpus(topo), &all);
        if (r < 0)
                return r;
        for (size_t i = 0, k = 0; i < n_specs; i++) {
                int idx = specs[i].node < 0 ? -1
                                            : topology_node_index(topo, (unsigned) specs[i].node);
                uint64_t period = spec_period(&specs[i]);

                if (specs[i].node >= 0 && idx < 0)
                        return -EINVAL;
                for (unsigned j = 0; j < specs[i].count; j++, k++) {
                        SimTask *t = &s->tasks[k];
                        unsigned home = idx >= 0 ? (unsigned) idx : (unsigned) (k % s->n_nodes);
                        const NodeTree *nt = &s->trees[home];

                        if (nt->n == 0)
                                return -EINVAL;
                        *t = (SimTask){
                                .spec = i,
                                .offset_usec =
                                        specs[i].loop && period ? period * j / specs[i].count : 0,
                                .home = home,
                                .cpu = (int) nt->cpus[(k / s->n_nodes + j) % nt->n],
                                .mask = all,
                                .foreign = specs[i].bind,
                        };
                        if (specs[i].bind) {
                                r = sim_add_mask(
                                        s,
                                        topology_node_cpus(topo,
                                                           (unsigned) topology_node_id(topo, home)),
                                        &t->mask);
                                if (r < 0)
                                        return r;
                        }
                }
        }
        s->n_tasks = n;
        *ret = TAKE_PTR(s);
        return 0;
}

/* The integral of the phases' demand over [0, at) of one pass, in usec of CPU. */
static double phases_integral(const SimTaskSpec *sp, uint64_t at) {
        double sum = 0;

        for (size_t k = 0; k < sp->n_phases && at > 0; k++) {
                uint64_t d = sp->phases[k].usec == 0 ? at : MIN(at, sp->phases[k].usec);

                sum += sp->phases[k].demand * (double) d;
                at -= d;
        }
        return sum;
}

/* Its phases' integral from its start to at. */
static double demand_integral(const SimTaskSpec *sp, uint64_t at) {
        uint64_t period = spec_period(sp);

        if (sp->loop && period > 0)
                return phases_integral(sp, period) * (double) (at / period) +
                       phases_integral(sp, at % period);
        return phases_integral(sp, at);
}

/* What the task wanted over the tick ending at now: its phases' mean over the interval. */
static double task_demand(Sim *s, const SimTask *t, uint64_t now) {
        const SimTaskSpec *sp = &s->specs[t->spec];

        if (s->trace) { /* a recording's: task i is spec i */
                uint64_t tick = now / s->interval_usec;

                return tick >= 1 && tick <= s->trace_ticks
                               ? (double) s->trace[(tick - 1) * s->n_tasks + t->spec] /
                                         POLICY_LOAD_ONE_CPU
                               : 0.0;
        }
        uint64_t b = now + t->offset_usec, a = b > s->interval_usec ? b - s->interval_usec : 0;

        if (sp->random > 0)
                return sim_uniform(s) < sp->random ? 1.0 : 0.0;
        if (b == a)
                return 0.0;
        return (demand_integral(sp, b) - demand_integral(sp, a)) / (double) (b - a);
}

static void cpu_add(Sim *s, unsigned cpu, double d) {
        int n = s->cpu_node[cpu];

        s->load[cpu] += d;
        if (n >= 0)
                tree_fix(s, &s->trees[n], s->cpu_leaf[cpu]);
}

/* The least loaded CPU of node n inside mask m; -1 if none. */
static int node_least(const Sim *s, unsigned n, const SimMask *m) {
        const NodeTree *t = &s->trees[n];
        int best = -1;

        if (!m->node_any[n] || t->n == 0)
                return -1;
        if (m->node_full[n])
                return (int) t->cpus[t->tree[1]];
        for (unsigned k = 0; k < t->n; k++) {
                unsigned c = t->cpus[k];

                if (cpumask_isset(m->cpus, c) && (best < 0 || s->load[c] < s->load[best]))
                        best = (int) c;
        }
        return best;
}

/* Idle CPU first, no memory cost (see simulate.h). */
static unsigned place(const Sim *s, const SimTask *t, double d) {
        const SimMask *m = &s->masks[t->mask];
        int prev = t->cpu, from = prev >= 0 ? s->cpu_node[prev] : -1, fallback = -1;

        if (prev >= 0 && cpumask_isset(m->cpus, (unsigned) prev) &&
            s->load[prev] + d <= 1.0 + EPSILON)
                return (unsigned) prev;
        if (from < 0)
                from = 0;
        for (unsigned k = 0; k < s->n_nodes; k++) {
                unsigned n = s->near[from][k];
                int c = node_least(s, n, m);

                if (c < 0)
                        continue;
                if (s->load[c] + d <= 1.0 + EPSILON)
                        return (unsigned) c;
                if (fallback < 0 || s->load[c] < s->load[fallback])
                        fallback = c;
        }
        return (unsigned) (fallback >= 0 ? fallback : prev);
}

static double slowdown(const Sim *s, const SimTask *t, unsigned node) {
        const SimTaskSpec *sp = &s->specs[t->spec];
        double d = (double) topology_distances(s->topo)[(size_t) node * s->n_nodes + t->home];

        return 1.0 - sp->mem_share + sp->mem_share * d / 10.0;
}

int sim_step(Sim *s, uint64_t now_usec, const PolicySnapshot **ret_snap, double *ret_node_busy) {
        double secs = (double) s->interval_usec / 1e6;

        memset(s->load, 0, s->n_cpus * sizeof *s->load);
        for (unsigned n = 0; n < s->n_nodes; n++)
                tree_reset(s, &s->trees[n]);
        for (size_t g = 0; g < s->n_groups; g++)
                s->groups[g].util_permyriad = 0;
        for (size_t i = 0; i < s->n_tasks; i++) {
                SimTask *t = &s->tasks[i];
                int before = t->cpu >= 0 ? s->cpu_node[t->cpu] : -1;
                unsigned cpu;

                t->demand = task_demand(s, t, now_usec);
                if (t->demand <= 0 && t->cpu >= 0 &&
                    cpumask_isset(s->masks[t->mask].cpus, (unsigned) t->cpu))
                        continue; /* asleep where it was */
                cpu = place(s, t, t->demand);
                t->cpu = (int) cpu;
                if (t->demand > 0)
                        cpu_add(s, cpu, t->demand);
                if (before >= 0 && s->cpu_node[cpu] != before)
                        s->totals.migrations++;
        }
        if (ret_node_busy)
                memset(ret_node_busy, 0, s->n_nodes * sizeof *ret_node_busy);
        for (unsigned c = 0; c < s->n_cpus; c++) {
                double busy = MIN(s->load[c], 1.0);

                s->pcpus[c].util_permyriad = (uint32_t) lround(busy * POLICY_LOAD_ONE_CPU);
                if (ret_node_busy && s->cpu_node[c] >= 0)
                        ret_node_busy[s->cpu_node[c]] += busy;
        }
        for (size_t i = 0; i < s->n_tasks; i++) {
                SimTask *t = &s->tasks[i];
                PolicyTask *p = &s->ptasks[i];
                double l = t->cpu >= 0 ? s->load[t->cpu] : 0;
                int node = t->cpu >= 0 ? s->cpu_node[t->cpu] : -1;

                t->served = l > 1.0 ? t->demand / l : t->demand;
                *p = (PolicyTask){
                        .pid = (pid_t) (1000 + i),
                        .starttime_ticks = 1,
                        .cgroup = s->spec_group[t->spec],
                        .cpu = t->cpu,
                        .util_permyriad = (uint32_t) lround(t->served * POLICY_LOAD_ONE_CPU),
                        .demand_permyriad = (uint32_t) lround(t->demand * POLICY_LOAD_ONE_CPU),
                        .allowed = s->masks[t->mask].cpus,
                        .ours = t->ours,
                        .foreign = t->foreign,
                        .last_move_usec = t->last_move,
                        .mem_kib = node == (int) t->home ? s->specs[t->spec].mem_kib : 0,
                        .mem_exact = true,
                };
                s->groups[p->cgroup].util_permyriad += p->util_permyriad;
                s->totals.demand += t->demand * secs;
                s->totals.served += t->served * secs;
                if (node >= 0) {
                        s->totals.work += t->served * secs / slowdown(s, t, (unsigned) node);
                        if (node != (int) t->home)
                                s->totals.remote += t->served * secs;
                }
        }
        s->totals.ticks++;
        s->snap = (PolicySnapshot){ .interval_usec = s->interval_usec,
                                    .cpus = s->pcpus,
                                    .n_cpus = s->n_cpus,
                                    .tasks = s->ptasks,
                                    .n_tasks = s->n_tasks,
                                    .cgroups = s->groups,
                                    .n_cgroups = s->n_groups };
        *ret_snap = &s->snap;
        return 0;
}

int sim_apply(Sim *s, const Plan *p, uint64_t now_usec, bool migrate_memory) {
        for (size_t i = 0; i < p->n_moves; i++) {
                const PlanMove *m = &p->moves[i];
                size_t k = (size_t) (m->pid - 1000), mask;
                SimTask *t;
                int r;

                if (m->pid < 1000 || k >= s->n_tasks || !m->mask)
                        return -EINVAL;
                t = &s->tasks[k];
                r = sim_add_mask(s, m->mask, &mask);
                if (r < 0)
                        return r;
                t->mask = mask;
                t->ours = true;
                t->foreign = false;
                t->last_move = now_usec;
                s->totals.moves++;
                if (m->from_node != m->to_node) {
                        int idx = topology_node_index(s->topo, (unsigned) m->to_node);

                        s->totals.cross_moves++;
                        if (migrate_memory && idx >= 0)
                                t->home = (unsigned) idx;
                }
        }
        return 0;
}

int sim_set_trace(Sim *s, const uint16_t *demand, uint64_t ticks) {
        if (s->n_specs != s->n_tasks)
                return -EINVAL; /* one spec per task */
        s->trace = demand;
        s->trace_ticks = ticks;
        return 0;
}

const SimTotals *sim_totals(const Sim *s) {
        return &s->totals;
}

int sim_task_cpu(const Sim *s, size_t i) {
        return i < s->n_tasks ? s->tasks[i].cpu : -1;
}

unsigned sim_task_home(const Sim *s, size_t i) {
        return i < s->n_tasks ? s->tasks[i].home : 0;
}

/* ---- demands from a recording */

typedef struct TraceKey {
        pid_t pid;
        uint64_t starttime;
        size_t index; /* its column */
} TraceKey;

typedef struct TraceDemand {
        Topology *topo;
        uint64_t interval_usec; /* the first tick's */
        uint64_t n_ticks;
        TraceKey *keys; /* sorted up to n_sorted; a tick's new ones after, sorted at its end */
        size_t n_keys, n_sorted;
        SimTaskSpec *specs; /* by column: where it first ran, its memory there */
        uint16_t *demand; /* n_ticks x n_keys, permyriad */
} TraceDemand;

#define TRACE_DEMAND_MAX (UINT64_C(64) << 20) /* cells: 128 MiB */

static void trace_demand_done(TraceDemand *d) {
        topology_free(d->topo);
        free(d->keys);
        free(d->specs);
        free(d->demand);
}

static int cmp_trace_key(const void *a, const void *b) {
        const TraceKey *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return (x->starttime > y->starttime) - (x->starttime < y->starttime);
}

static TraceKey *trace_find(const TraceDemand *d, pid_t pid, uint64_t starttime) {
        TraceKey k = { .pid = pid, .starttime = starttime };

        return d->n_sorted ? bsearch(&k, d->keys, d->n_sorted, sizeof k, cmp_trace_key) : NULL;
}

/* A task first seen: a column, its home the node it ran on (sorted in at the tick's end). */
static int trace_add(TraceDemand *d, const PolicyTask *t) {
        TraceKey *k = reallocarray(d->keys, d->n_keys + 1, sizeof *k);
        SimTaskSpec *sp;
        int node;

        if (!k)
                return -ENOMEM;
        d->keys = k;
        sp = reallocarray(d->specs, d->n_keys + 1, sizeof *sp);
        if (!sp)
                return -ENOMEM;
        d->specs = sp;
        node = t->cpu >= 0 ? topology_cpu_node(d->topo, (unsigned) t->cpu) : -1;
        d->specs[d->n_keys] = (SimTaskSpec){ .count = 1,
                                             .mem_kib = t->mem_kib,
                                             .mem_share = 0.5,
                                             .node = node,
                                             .group = "recorded" };
        d->keys[d->n_keys] =
                (TraceKey){ .pid = t->pid, .starttime = t->starttime_ticks, .index = d->n_keys };
        d->n_keys++;
        return 0;
}

/* Pass 1 (fill false): the topology, the ticks, every task; pass 2: the demands. */
static int trace_pass(const char *path, TraceDemand *d, bool fill) {
        _cleanup_trace_reader_ TraceReader *r = NULL;
        char why[256] = "";
        uint64_t tick = 0;
        TraceEvent e;
        int k;

        k = trace_reader_open(path, &r, why, sizeof why);
        if (k < 0)
                return log_error_errno(k, "%s: %s", path, why);
        while ((k = trace_reader_next(r, &e, why, sizeof why)) > 0) {
                if (e.kind == TRACE_EVENT_TOPOLOGY) {
                        _cleanup_free_ char *text = NULL;

                        if (d->topo && !fill)
                                return log_error_errno(EINVAL,
                                                       "%s: the topology changes at tick %" PRIu64
                                                       "; simulate takes one machine.",
                                                       path, tick + 1);
                        if (fill)
                                continue;
                        k = topology_to_text(e.topology, &text);
                        if (k >= 0)
                                k = topology_new_from_text(text, &d->topo, why, sizeof why);
                        if (k < 0)
                                return log_error_errno(k, "%s: its topology: %m", path);
                        continue;
                }
                if (e.kind != TRACE_EVENT_TICK || (fill && tick == d->n_ticks))
                        continue;
                if (!fill && d->interval_usec == 0) /* the first tick primes: 0 */
                        d->interval_usec = e.snap->interval_usec;
                for (size_t i = 0; i < e.snap->n_tasks; i++) {
                        const PolicyTask *t = &e.snap->tasks[i];
                        TraceKey *key = trace_find(d, t->pid, t->starttime_ticks);

                        if (fill && key)
                                d->demand[tick * d->n_keys + key->index] =
                                        (uint16_t) MIN(t->demand_permyriad, POLICY_LOAD_ONE_CPU);
                        else if (!fill && !key && (k = trace_add(d, t)) < 0)
                                return log_error_errno(k, "Out of memory.");
                }
                if (!fill && d->n_sorted < d->n_keys) {
                        qsort(d->keys, d->n_keys, sizeof *d->keys, cmp_trace_key);
                        d->n_sorted = d->n_keys;
                }
                tick++;
        }
        if (k < 0 && k != -EPIPE)
                return log_error_errno(k, "%s: %s", path, why);
        if (!fill)
                d->n_ticks = tick;
        return 0;
}

static int trace_demand_load(const char *path, uint64_t max_ticks, TraceDemand *d) {
        int r = trace_pass(path, d, false);

        if (r < 0)
                return r;
        if (!d->topo || d->n_ticks == 0 || d->n_keys == 0)
                return log_error_errno(EINVAL, "%s: no tick with a task to simulate.", path);
        d->n_ticks = MIN(d->n_ticks, max_ticks);
        if (d->n_ticks * d->n_keys > TRACE_DEMAND_MAX)
                return log_error_errno(EFBIG,
                                       "%s: %" PRIu64 " ticks of %zu tasks are more than the "
                                       "simulator holds (%" PRIu64 " demands); give --ticks.",
                                       path, d->n_ticks, d->n_keys, TRACE_DEMAND_MAX);
        d->demand = calloc(d->n_ticks * d->n_keys, sizeof *d->demand);
        if (!d->demand)
                return log_error_errno(ENOMEM, "Out of memory.");
        /* The columns follow first sight; the specs too (task i is spec i). */
        return trace_pass(path, d, true);
}

/* ---- the command */

/* One row: a balancer on a machine. */
typedef struct SimRow {
        const char *machine;
        const char *balancer; /* "kernel" or "cgbalanced" */
        unsigned n_nodes, n_cpus;
        size_t n_tasks;
        SimTotals totals;
        double seconds; /* wall clock it took */
        Timeline *timeline; /* busy CPUs per node each tick, the daemon's moves */
} SimRow;

typedef struct SimOptions {
        const char *machines[16];
        size_t n_machines;
        const char *synthetic, *distances;
        SimTaskSpec specs[64];
        size_t n_specs;
        const char *scenario;
        const char *recording; /* --recording: its machine, tasks and demands */
        const uint16_t *trace; /* the recording's demands, once loaded */
        bool ticks_set;
        uint64_t ticks;
        uint64_t interval_usec;
        const char *config;
        uint64_t seed;
        const char *json;
        bool no_kernel;
        char **argv; /* for the JSON's suite_args */
        int argc;
} SimOptions;

static void row_done(SimRow *r) {
        timeline_free(r->timeline);
}

/* The moves across nodes, on the row's timeline as the daemon's events would be. */
static int note_moves(SimRow *row, const Plan *plan, uint64_t now) {
        for (size_t i = 0; i < plan->n_moves; i++) {
                const PlanMove *m = &plan->moves[i];
                Event e = { .kind = EVENT_TASK_MOVED,
                            .monotonic_usec = now,
                            .pid = m->pid,
                            .comm = "sim",
                            .from_node = m->from_node,
                            .to_node = m->to_node };
                int r;

                if (m->from_node == m->to_node)
                        continue;
                r = timeline_note_event(row->timeline, &e);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int run_row(const SimOptions *o, const Topology *topo, const SimTaskSpec *specs,
                   size_t n_specs, const Tunables *tun, bool daemon, SimRow *row) {
        _cleanup_sim_ Sim *sim = NULL;
        _cleanup_policy_state_ PolicyState *state = NULL;
        _cleanup_free_ double *busy = NULL;
        _cleanup_free_ uint64_t *load = NULL;
        char name[96];
        PolicyParams params;
        uint64_t t0 = now_usec();
        int r;

        row->n_nodes = topology_n_nodes(topo);
        for (unsigned n = 0; n < row->n_nodes; n++)
                row->n_cpus += policy_node_capacity(topo, n, tun->use_isolated_cpus);
        busy = calloc(row->n_nodes, sizeof *busy);
        load = calloc(row->n_nodes, sizeof *load);
        snprintf(name, sizeof name, "%s on %s", row->balancer, row->machine);
        r = busy && load ? timeline_new_model(topo, &row->timeline) : -ENOMEM;
        if (r >= 0)
                r = timeline_set_name(row->timeline, name);
        if (r >= 0)
                r = sim_new(topo, specs, n_specs, o->seed, o->interval_usec, &sim);
        if (r >= 0 && o->trace)
                r = sim_set_trace(sim, o->trace, o->ticks);
        if (r < 0)
                return log_error_errno(r, "%s: cannot set up the model: %m", row->machine);
        if (daemon) {
                state = policy_state_new(topo);
                if (!state)
                        return log_error_errno(ENOMEM, "Out of memory.");
                r = policy_params_from_tunables(tun, topo, &params);
                if (r < 0)
                        return log_error_errno(r, "%s: the policy's parameters: %m", row->machine);
        }
        for (uint64_t k = 0; k < o->ticks; k++) {
                uint64_t now = (k + 1) * o->interval_usec;
                const PolicySnapshot *snap;
                _cleanup_plan_ Plan *plan = NULL;

                if (cli_stop)
                        return -EINTR;
                r = sim_step(sim, now, &snap, busy);
                for (unsigned n = 0; r >= 0 && n < row->n_nodes; n++)
                        load[n] = (uint64_t) llround(busy[n] * POLICY_LOAD_ONE_CPU);
                if (r >= 0)
                        r = timeline_add_sample(row->timeline, now, load);
                if (r < 0)
                        return log_error_errno(r, "%s: %m", row->machine);
                if (!daemon)
                        continue;
                r = policy_plan(state, snap, topo, &params, now, false, &plan);
                if (r < 0)
                        return log_error_errno(r, "%s: the policy refused the model's snapshot: %m",
                                               row->machine);
                r = note_moves(row, plan, now);
                if (r >= 0)
                        r = sim_apply(sim, plan, now, tun->migrate_memory);
                if (r < 0)
                        return log_error_errno(r, "%s: cannot apply a plan: %m", row->machine);
        }
        row->totals = *sim_totals(sim);
        row->n_tasks = 0;
        for (size_t i = 0; i < n_specs; i++)
                row->n_tasks += specs[i].count;
        row->seconds = (double) (now_usec() - t0) / 1e6;
        return 0;
}

static double pct(double a, double b) {
        return b > 0 ? 100.0 * a / b : 0.0;
}

static void print_rows(const SimOptions *o, const SimRow *rows, size_t n) {
        printf("loadgen simulate: %" PRIu64 " ticks of %.3g s each, seed %" PRIu64
               "; work = demand served, a memory-bound share slowed by distance/10 away from "
               "home\n",
               o->ticks, (double) o->interval_usec / 1e6, o->seed);
        printf("%-10s %5s %5s %7s %-10s %7s %7s %8s %10s %7s %7s %7s\n", "machine", "nodes", "cpus",
               "tasks", "balancer", "work %", "wait %", "remote %", "migrations", "moves", "cross",
               "sim s");
        for (size_t i = 0; i < n; i++) {
                const SimRow *r = &rows[i];
                const SimTotals *t = &r->totals;

                printf("%-10s %5u %5u %7zu %-10s %7.2f %7.2f %8.2f %10" PRIu64 " %7" PRIu64
                       " %7" PRIu64 " %7.1f\n",
                       r->machine, r->n_nodes, r->n_cpus, r->n_tasks, r->balancer,
                       pct(t->work, t->demand), pct(t->demand - t->served, t->demand),
                       pct(t->remote, t->served), t->migrations, t->moves, t->cross_moves,
                       r->seconds);
        }
}

/* The compare layout loadgen plot reads: a row per balancer and machine, "daemon" true so each
 * has its timeline drawn, the summary's bars by machine. */
static void json_rows(const SimOptions *o, const SimRow *rows, size_t n, FILE *f) {
        Json j = { .f = f };

        json_begin(&j, '{');
        json_string(&j, "suite", "simulate");
        json_key(&j, "suite_args");
        json_begin(&j, '[');
        for (int i = 1; i < o->argc; i++)
                json_string(&j, NULL, o->argv[i]);
        json_end(&j, ']');
        json_u64(&j, "ticks", o->ticks);
        json_u64(&j, "seed", o->seed);
        json_key(&j, "rows");
        json_begin(&j, '[');
        for (size_t i = 0; i < n; i++) {
                const SimRow *r = &rows[i];
                const SimTotals *t = &r->totals;

                json_begin(&j, '{');
                json_string(&j, "name", r->balancer);
                json_bool(&j, "daemon", true);
                json_key(&j, "result");
                json_begin(&j, '{');
                json_key(&j, "rows");
                json_begin(&j, '[');
                json_begin(&j, '{');
                json_string(&j, "machine", r->machine);
                json_u64(&j, "nodes", r->n_nodes);
                json_u64(&j, "cpus", r->n_cpus);
                json_u64(&j, "tasks", r->n_tasks);
                json_double(&j, "work_pct", pct(t->work, t->demand), 3);
                json_double(&j, "wait_pct", pct(t->demand - t->served, t->demand), 3);
                json_double(&j, "remote_pct", pct(t->remote, t->served), 3);
                json_u64(&j, "migrations", t->migrations);
                json_u64(&j, "moves", t->moves);
                json_u64(&j, "cross_node_moves", t->cross_moves);
                json_double(&j, "seconds", r->seconds, 2);
                json_end(&j, '}');
                json_end(&j, ']');
                json_end(&j, '}');
                timeline_write_json(r->timeline, &j, "timeline");
                json_end(&j, '}');
        }
        json_end(&j, ']');
        json_end(&j, '}');
}

static void help(void) {
        size_t n;
        const SimMachine *m = sim_machines(&n);

        printf("Usage: loadgen simulate [OPTIONS]\n"
               "\n"
               "cgbalanced's policy in a closed loop on a model machine, beside a plain model\n"
               "of the kernel's spreading (idle CPU first, no memory cost); see loadgen(1),\n"
               "SIMULATE. Prints per machine and balancer the work done (%% of the work asked\n"
               "for), the demand that waited, the CPU time served away from the task's memory,\n"
               "the tasks' cross-node migrations (the daemon's moves included) and the daemon's\n"
               "moves.\n"
               "\n"
               "  -m --machine=NAME     A named machine (repeatable; default: all of them):\n");
        for (size_t i = 0; i < n; i++)
                printf("                          %-7s %s\n", m[i].name, m[i].about);
        printf("     --synthetic=DESC   Instead, an hwloc synthetic description\n"
               "                        (\"pack:2 numa:1 core:4 pu:1\"), with\n"
               "     --distances=M      its node distances (\"10,20;20,10\").\n"
               "  -t --tasks=SPEC       COUNT:PATTERN[,mem=MIB][,share=F][,node=N|spread]\n"
               "                        [,bind][,group=NAME] (repeatable); PATTERN busy,\n"
               "                        duty=F, burst=ON/PERIOD (seconds) or random=P; bind:\n"
               "                        bound to its node, as numactl would. Default: busy\n"
               "                        tasks (512 MiB) bound to the first node, 1.5 per CPU\n"
               "                        of it, and 2 per CPU burst=0.3/2 (128 MiB) spread.\n"
               "     --scenario=FILE    The tasks of a loadgen scenario (run, sleep, periodic\n"
               "                        and memwalk phases) instead.\n"
               "     --recording=FILE   The machine, tasks and each tick's demands of a\n"
               "                        cgbalanced recording (cgbalance-record(5)) instead;\n"
               "                        its ticks and interval, unless --ticks is fewer.\n"
               "     --ticks=N          Ticks to simulate (default 600).\n"
               "     --interval=TIME    A tick (default 1s).\n"
               "  -c --config=FILE      cgbalanced's configuration (default: its defaults with\n"
               "                        override_foreign_affinity = yes: bound tasks move).\n"
               "     --seed=N           The demands' PRNG seed (default 1).\n"
               "     --no-kernel        Only the cgbalanced rows.\n"
               "  -j --json[=FILE]      The rows and each row's per-node timeline, for loadgen\n"
               "                        plot: on stdout instead of the table, or in FILE.\n"
               "  -h --help             Show this help.\n");
}

static int parse_u64(const char *name, const char *arg, uint64_t lo, uint64_t hi, uint64_t *ret) {
        uint64_t v;

        if (parse_u64_span(arg, strlen(arg), &v) < 0 || v < lo || v > hi) {
                log_error("--%s=%s: want a number %" PRIu64 "..%" PRIu64 ".", name, arg, lo, hi);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int parse_argv(int argc, char *argv[], SimOptions *o) {
        enum {
                ARG_SYNTHETIC = 0x100,
                ARG_DISTANCES,
                ARG_SCENARIO,
                ARG_TICKS,
                ARG_INTERVAL,
                ARG_SEED,
                ARG_NO_KERNEL,
                ARG_RECORDING
        };
        static const struct option options[] = {
                { "machine", required_argument, NULL, 'm' },
                { "synthetic", required_argument, NULL, ARG_SYNTHETIC },
                { "distances", required_argument, NULL, ARG_DISTANCES },
                { "tasks", required_argument, NULL, 't' },
                { "scenario", required_argument, NULL, ARG_SCENARIO },
                { "recording", required_argument, NULL, ARG_RECORDING },
                { "ticks", required_argument, NULL, ARG_TICKS },
                { "interval", required_argument, NULL, ARG_INTERVAL },
                { "config", required_argument, NULL, 'c' },
                { "seed", required_argument, NULL, ARG_SEED },
                { "no-kernel", no_argument, NULL, ARG_NO_KERNEL },
                CLI_OPT_JSON,
                { "help", no_argument, NULL, 'h' },
                {},
        };
        char why[256];
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "m:t:c:" CLI_SHORT_JSON "h", options, NULL)) >= 0) {
                switch (c) {
                case 'm':
                        if (!sim_machine_find(optarg)) {
                                log_error("--machine=%s: no such machine; see --help.", optarg);
                                return -EINVAL;
                        }
                        if (o->n_machines == ELEMENTSOF(o->machines)) {
                                log_error("--machine: at most %zu.", ELEMENTSOF(o->machines));
                                return -EINVAL;
                        }
                        o->machines[o->n_machines++] = optarg;
                        break;
                case ARG_SYNTHETIC: o->synthetic = optarg; break;
                case ARG_DISTANCES: o->distances = optarg; break;
                case 't':
                        if (o->n_specs == ELEMENTSOF(o->specs)) {
                                log_error("--tasks: at most %zu.", ELEMENTSOF(o->specs));
                                return -EINVAL;
                        }
                        if (sim_parse_tasks(optarg, &o->specs[o->n_specs], why, sizeof why) < 0) {
                                log_error("--tasks=%s: %s", optarg, why);
                                return -EINVAL;
                        }
                        o->n_specs++;
                        break;
                case ARG_SCENARIO: o->scenario = optarg; break;
                case ARG_RECORDING: o->recording = optarg; break;
                case ARG_TICKS:
                        if (parse_u64("ticks", optarg, 1, 1000000, &o->ticks) < 0)
                                return -EINVAL;
                        o->ticks_set = true;
                        break;
                case ARG_INTERVAL:
                        if (config_parse_duration(optarg, &o->interval_usec) < 0 ||
                            o->interval_usec < 1000) {
                                log_error("--interval=%s: want a duration of 1ms or more "
                                          "(\"1s\", \"200ms\").",
                                          optarg);
                                return -EINVAL;
                        }
                        break;
                case 'c': o->config = optarg; break;
                case ARG_SEED:
                        if (parse_u64("seed", optarg, 0, UINT64_MAX, &o->seed) < 0)
                                return -EINVAL;
                        break;
                case ARG_NO_KERNEL: o->no_kernel = true; break;
                case 'j': o->json = optarg ? optarg : ""; break;
                case 'h': help(); return 0;
                default: return -EINVAL;
                }
        }
        if (optind < argc) {
                log_error("Unexpected argument \"%s\"; see loadgen simulate --help.", argv[optind]);
                return -EINVAL;
        }
        if (o->synthetic && o->n_machines) {
                log_error("--machine and --synthetic do not go together.");
                return -EINVAL;
        }
        if (o->distances && !o->synthetic) {
                log_error("--distances goes with --synthetic.");
                return -EINVAL;
        }
        if (o->scenario && o->n_specs) {
                log_error("--tasks and --scenario do not go together.");
                return -EINVAL;
        }
        if (o->recording && (o->n_specs || o->scenario || o->n_machines || o->synthetic)) {
                log_error("--recording brings its machine and tasks: no --machine, --synthetic, "
                          "--tasks or --scenario with it.");
                return -EINVAL;
        }
        return 1;
}

/* The machine's topology, and its tasks: --tasks, --scenario, or the default workload. */
static int machine_setup(const SimOptions *o, const char *name, Topology **ret_topo,
                         SimTaskSpec **ret_specs, size_t *ret_n) {
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_free_ char *sixteen = NULL;
        const SimMachine *m = name ? sim_machine_find(name) : NULL;
        const char *dist = m ? m->distances : o->distances;
        SimTaskSpec *specs = NULL;
        int r;

        if (m && !dist)
                dist = sixteen = sixteen_distances();
        r = machine_topology(m ? m->synthetic : o->synthetic, dist, &topo);
        if (r < 0)
                return log_error_errno(r, "%s: not a machine hwloc and the distances describe: %m",
                                       m ? m->name : o->synthetic);
        if (o->scenario) {
                _cleanup_scenario_ Scenario *sc = NULL;
                ConfigError e = { 0 };
                char why[256];

                r = scenario_load(o->scenario, topo, &sc, &e);
                if (r < 0)
                        return log_error_errno(r, "%s", e.message);
                r = specs_from_scenario(sc, &specs, ret_n, why, sizeof why);
                if (r < 0)
                        return r == -ENOMEM ? log_error_errno(r, "Out of memory.")
                                            : log_error_errno(r, "%s", why);
        } else {
                specs = calloc(MAX(o->n_specs, 2u), sizeof *specs);
                if (!specs)
                        return log_error_errno(ENOMEM, "Out of memory.");
                if (o->n_specs) {
                        memcpy(specs, o->specs, o->n_specs * sizeof *specs);
                        *ret_n = o->n_specs;
                } else
                        *ret_n = sim_default_tasks(
                                topology_n_cpus(topo),
                                topology_node_capacity(topo, (unsigned) topology_node_id(topo, 0)),
                                topology_node_id(topo, 0), specs);
        }
        for (size_t i = 0; i < *ret_n; i++)
                if (specs[i].node >= 0 && topology_node_index(topo, (unsigned) specs[i].node) < 0) {
                        log_error("%s: no node %d for tasks of group %s.",
                                  m ? m->name : o->synthetic, specs[i].node, specs[i].group);
                        free(specs);
                        return -EINVAL;
                }
        *ret_specs = specs;
        *ret_topo = TAKE_PTR(topo);
        return 0;
}

/* The table, and the JSON where --json says. */
static int output(const SimOptions *o, const SimRow *rows, size_t n_rows) {
        FILE *f = NULL;
        bool owned = false;
        int r = 0;

        if (!o->json || cli_json_to(o->json) != CLI_JSON_STDOUT)
                print_rows(o, rows, n_rows);
        if (o->json) {
                r = cli_json_open(o->json, &f, &owned);
                if (r >= 0) {
                        json_rows(o, rows, n_rows, f);
                        if (owned && fclose(f) != 0)
                                r = log_error_errno(errno, "Failed to write %s: %m", o->json);
                }
        }
        return r;
}

/* The kernel and cgbalanced on a recording's machine, tasks and demands. */
static int run_recording(const SimOptions *o, const TraceDemand *d, const Tunables *tun) {
        SimRow rows[2] = {};
        size_t n_rows = 0;
        int r = 0;

        for (int dmn = o->no_kernel ? 1 : 0; dmn <= 1 && r >= 0; dmn++) {
                SimRow *row = &rows[n_rows++];

                row->machine = "recorded";
                row->balancer = dmn ? "cgbalanced" : "kernel";
                r = run_row(o, d->topo, d->specs, d->n_keys, tun, dmn, row);
        }
        if (r >= 0)
                r = output(o, rows, n_rows);
        for (size_t i = 0; i < n_rows; i++)
                row_done(&rows[i]);
        return r;
}

int simulate_main(int argc, char *argv[]) {
        SimOptions o = {
                .ticks = 600, .interval_usec = 1000000, .seed = 1, .argv = argv, .argc = argc
        };
        _cleanup_free_ SimRow *rows = NULL;
        size_t n_rows = 0, n_names;
        const char *names[16];
        ConfigError e = { 0 };
        Tunables tun;
        int r;

        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        r = o.config ? tunables_load(o.config, false, &tun, &e) : tunables_defaults(&tun);
        if (r < 0) {
                log_error_errno(r, "%s", o.config ? e.message : "Out of memory.");
                return o.config ? EXIT_USAGE : 1;
        }
        tun.interval_usec = o.interval_usec;
        if (!o.config)
                tun.override_foreign_affinity = true; /* the bound tasks are its to move */
        if (o.synthetic) {
                names[0] = NULL;
                n_names = 1;
        } else if (o.n_machines) {
                memcpy(names, o.machines, o.n_machines * sizeof *names);
                n_names = o.n_machines;
        } else {
                const SimMachine *m = sim_machines(&n_names);

                for (size_t i = 0; i < n_names; i++)
                        names[i] = m[i].name;
        }
        if (o.recording) {
                TraceDemand d = {};

                r = trace_demand_load(o.recording, o.ticks_set ? o.ticks : UINT64_MAX, &d);
                if (r >= 0) {
                        o.ticks = d.n_ticks;
                        o.interval_usec = d.interval_usec ?: o.interval_usec;
                        o.trace = d.demand;
                        tun.interval_usec = o.interval_usec;
                        r = run_recording(&o, &d, &tun);
                }
                trace_demand_done(&d);
                tunables_free(&tun);
                if (r == -EINTR)
                        return cli_interrupted();
                return r < 0 ? 1 : 0;
        }
        rows = calloc(2 * n_names, sizeof *rows);
        if (!rows) {
                tunables_free(&tun);
                return log_error_errno(ENOMEM, "Out of memory."), 1;
        }
        r = cli_install_stop_handlers();
        for (size_t i = 0; i < n_names && r >= 0; i++) {
                _cleanup_topology_ Topology *topo = NULL;
                _cleanup_free_ SimTaskSpec *specs = NULL;
                size_t n_specs = 0;

                r = machine_setup(&o, names[i], &topo, &specs, &n_specs);
                for (int d = o.no_kernel ? 1 : 0; d <= 1 && r >= 0; d++) {
                        SimRow *row = &rows[n_rows++];

                        row->machine = names[i] ? names[i] : "synthetic";
                        row->balancer = d ? "cgbalanced" : "kernel";
                        r = run_row(&o, topo, specs, n_specs, &tun, d, row);
                }
        }
        tunables_free(&tun);
        if (r >= 0)
                r = output(&o, rows, n_rows);
        for (size_t i = 0; i < n_rows; i++)
                row_done(&rows[i]);
        if (r == -EINTR)
                return cli_interrupted();
        return r < 0 ? 1 : 0;
}
