/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "policy.h"
#include "policy-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NEVER UINT64_MAX
#define ONE_CPU ((uint64_t) POLICY_LOAD_ONE_CPU)
#define SLACK ((uint64_t) POLICY_LOAD_SLACK_PERMYRIAD)
/*
 * Node loads saturate here (3.4 million CPUs' worth, far above any real machine), so the largest
 * product below, load * capacity * pct(B,T) < 2^35 * 2^13 * 2^15, fits in 64 bits.
 */
#define LOAD_MAX ((UINT64_C(1) << 35) - 1)
#define USEC_PER_SEC UINT64_C(1000000)

typedef enum GroupMode {
        GROUP_UNTOUCHED, /* not protected, and nothing of ours to undo */
        GROUP_BETWEEN, /* protected, pressure between half the target and the target */
        GROUP_ABOVE, /* protected, pressure above the target */
        GROUP_BELOW, /* protected, pressure below half the target, and quiet */
        GROUP_RELEASE, /* no longer protected, but the daemon's raise is still on */
} GroupMode;

typedef struct GroupState {
        char *path;
        GroupMode mode;
        uint64_t since_usec; /* when the group entered mode, or its last step */
        uint32_t busy_permyriad; /* the most it used above its mark since its weight was base */
        LadderHold ladder;
} GroupState;

struct PolicyState {
        unsigned n_nodes;
        uint64_t ticks;
        uint64_t *pair_since; /* [b * n_nodes + t]: since when b -> t is imbalanced, or NEVER */
        /* by node index: the load the last plan that moved a task across nodes left it with, and
         * that plan's now (NEVER: no such plan, or its snapshot is past) */
        uint64_t *expect_load, *expect_at;
        GroupState *groups; /* sorted by path */
        size_t n_groups;
};

/* A movable task, compact: the per-move scans touch these, not the 136-byte PolicyTask. */
typedef struct Cand {
        uint32_t load; /* task_load() */
        pid_t pid;
        uint32_t idx; /* in the snapshot's tasks */
        bool keeps_affinity; /* task_keeps_affinity() */
        uint64_t mem_kib; /* PolicyTask.mem_kib: what a move leaves behind */
} Cand;

typedef struct Node {
        int id;
        unsigned cap; /* usable CPUs */
        uint64_t load;
        bool expected; /* load is what the last plan left it with, not the measurement */
        bool touched; /* a move of this plan leaves or reaches it */
        unsigned min_imbalance; /* node_min_imbalance, with this node's capacity as CPUs/node */
        unsigned nearest; /* nearest remote distance */
        CpuMask *usable;
        unsigned *cpus; /* its usable CPUs, ascending */
        Cand *cands; /* movable tasks on it */
        size_t n_cands;
} Node;

/* Everything one policy_plan() call computes; freed by ctx_done(). */
typedef struct Ctx {
        const PolicySnapshot *snap;
        const Topology *topo;
        const PolicyParams *p; /* NULL: loads only (policy_node_loads()) */
        uint64_t now;
        bool force_node_balance;
        unsigned n_nodes;
        Node *nodes;
        const unsigned *dist; /* n_nodes x n_nodes, by index */
        int *cpu_node; /* by CPU: node index, or -1 */
        int *task_node; /* by task: node index, or -1 */
        uint32_t *pressure; /* by cgroup: PSI, or the wait of its tasks */
        bool *blocked; /* by cgroup: weight before placement keeps its tasks */
        bool *moved; /* by task: already in the plan */
        const CpuMask **kept_off; /* by cgroup: its partition after this plan's steps, or NULL */
        Cand *cand_storage, *cand_tmp; /* by node; in task order */
        int *cand_tmp_node;
        size_t *repairs; /* tasks whose mask wants repairing, by pid */
        size_t n_repairs;
        unsigned *cpu_storage;
        bool *held; /* [b * n_nodes + t]: imbalanced for node_imbalance_hold */
        unsigned *order, *dests; /* scratch, n_nodes each */
        Plan *plan;
        size_t max_moves;
        size_t moves_room; /* entries plan->moves has room for */
} Ctx;

/* ---- small arithmetic */

static uint64_t sat_add(uint64_t a, uint64_t b) {
        return a + b > LOAD_MAX ? LOAD_MAX : a + b;
}

static uint64_t task_load(const PolicyTask *k) {
        return k->demand_permyriad > k->util_permyriad ? k->demand_permyriad : k->util_permyriad;
}

static uint64_t task_wait(const PolicyTask *k) {
        return k->demand_permyriad > k->util_permyriad
                       ? (uint64_t) (k->demand_permyriad - k->util_permyriad)
                       : 0;
}

/* Compares la/ca with lb/cb (capacities > 0): <0, 0, >0. */
static int cmp_per_cpu(uint64_t la, unsigned ca, uint64_t lb, unsigned cb) {
        uint64_t x = la * cb, y = lb * ca;

        return (x > y) - (x < y);
}

static bool node_has_idle_cpu(const Node *n) {
        return n->cap > 0 && n->load + ONE_CPU <= n->cap * ONE_CPU + SLACK;
}

/* Room for a task of load: the node's load with it rounds to no more than its CPUs (the node's
 * measured load carries an emulated guest's tenths, and a task's own wait when it shared a CPU). */
static bool node_fits(const Node *n, uint64_t load) {
        return n->cap > 0 && n->load + load < n->cap * ONE_CPU + POLICY_FIT_SLACK_PERMYRIAD;
}

static bool node_has_room(const Node *n) {
        return node_fits(n, ONE_CPU);
}

static bool node_overloaded(const Node *n) {
        return n->load > n->cap * ONE_CPU + SLACK;
}

static bool cooled(const Ctx *c, const PolicyTask *k) {
        if (k->last_move_usec == 0)
                return true;
        return c->now >= k->last_move_usec &&
               c->now - k->last_move_usec >= c->p->migrate_cooldown_usec;
}

/*
 * min_task_load applies to the task's demand, not its util: a CPU-bound task queued behind ten
 * others gets under a tenth of a CPU, and it is the one most worth moving.
 */
static bool loaded(const Ctx *c, const PolicyTask *k) {
        return task_load(k) > 0 && task_load(k) >= (uint64_t) c->p->min_task_load_pct * 100;
}

/* Word-wise over glibc's sets: these run once per task, on masks of up to 8192 CPUs. */
static bool masks_intersect(const CpuMask *a, const CpuMask *b) {
        size_t sa = cpumask_cpu_set_size(a), sb = cpumask_cpu_set_size(b);
        size_t n = (sa < sb ? sa : sb) / sizeof(__cpu_mask);
        const __cpu_mask *x = cpumask_cpu_set(a)->__bits, *y = cpumask_cpu_set(b)->__bits;

        for (size_t i = 0; i < n; i++)
                if (x[i] & y[i])
                        return true;
        return false;
}

bool policy_masks_intersect(const CpuMask *a, const CpuMask *b) {
        return masks_intersect(a, b);
}

/* a is a subset of b and smaller. */
static bool mask_strict_subset(const CpuMask *a, const CpuMask *b) {
        size_t na = cpumask_cpu_set_size(a) / sizeof(__cpu_mask);
        size_t nb = cpumask_cpu_set_size(b) / sizeof(__cpu_mask);
        const __cpu_mask *x = cpumask_cpu_set(a)->__bits, *y = cpumask_cpu_set(b)->__bits;
        bool smaller = false;

        for (size_t i = 0; i < na || i < nb; i++) {
                __cpu_mask wa = i < na ? x[i] : 0, wb = i < nb ? y[i] : 0;

                if (wa & ~wb)
                        return false;
                if (wb & ~wa)
                        smaller = true;
        }
        return smaller;
}

/* Reasons are for people: one that does not fit its 192 bytes is cut, never an error. */
_printf_(3, 4) static void reason_printf(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(buf, size, fmt, ap);
        va_end(ap);
}

/* "12.34" for a permyriad load (or a percent in hundredths). */
static const char *fmt_hundredths(char buf[static 32], uint64_t v, uint64_t unit) {
        (void) snprintf(buf, 32, "%" PRIu64 ".%02" PRIu64, v / unit, v % unit * 100 / unit);
        return buf;
}

static const char *fmt_load(char buf[static 32], uint64_t permyriad) {
        return fmt_hundredths(buf, permyriad, ONE_CPU);
}

static const char *fmt_usec(char buf[static 32], uint64_t usec) {
        (void) snprintf(buf, 32, "%" PRIu64 ".%" PRIu64 " s", usec / USEC_PER_SEC,
                        usec % USEC_PER_SEC / (USEC_PER_SEC / 10));
        return buf;
}

const char *policy_fmt_load(char buf[static 32], uint64_t permyriad) {
        return fmt_load(buf, permyriad);
}

const char *policy_fmt_usec(char buf[static 32], uint64_t usec) {
        return fmt_usec(buf, usec);
}

static const char *const lever_names[_POLICY_LEVER_MAX] = {
        [POLICY_LEVER_IDLE] = "idle",
        [POLICY_LEVER_QUOTA] = "quota",
        [POLICY_LEVER_PARTITION] = "partition",
};

const char *policy_lever_to_string(PolicyLever l) {
        return l > POLICY_LEVER_NONE && l < _POLICY_LEVER_MAX ? lever_names[l] : NULL;
}

PolicyLever policy_lever_from_string(const char *s) {
        for (PolicyLever l = POLICY_LEVER_NONE + 1; s && l < _POLICY_LEVER_MAX; l++)
                if (streq(lever_names[l], s))
                        return l;
        return POLICY_LEVER_NONE;
}

/* ---- state */

static void groups_free(GroupState *g, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(g[i].path);
        free(g);
}

/* n entries of NEVER. */
static uint64_t *nevers_new(size_t n) {
        uint64_t *p = malloc((n ? n : 1) * sizeof *p);

        if (p)
                for (size_t i = 0; i < n; i++)
                        p[i] = NEVER;
        return p;
}

/* The node arrays of n_nodes: every pair and every node without a hold or an expected load. */
static int node_arrays_new(unsigned n_nodes, uint64_t **ret_pairs, uint64_t **ret_load,
                           uint64_t **ret_at) {
        _cleanup_free_ uint64_t *pairs = nevers_new((size_t) n_nodes * n_nodes),
                                *at = nevers_new(n_nodes);
        uint64_t *load = calloc(n_nodes ? n_nodes : 1, sizeof *load);

        if (!pairs || !at || !load) {
                free(load);
                return -ENOMEM;
        }
        *ret_pairs = TAKE_PTR(pairs);
        *ret_load = load;
        *ret_at = TAKE_PTR(at);
        return 0;
}

PolicyState *policy_state_new(const Topology *topo) {
        PolicyState *s = calloc(1, sizeof *s);

        if (!s)
                return NULL;
        s->n_nodes = topo ? topology_n_nodes(topo) : 0;
        if (node_arrays_new(s->n_nodes, &s->pair_since, &s->expect_load, &s->expect_at) < 0) {
                free(s);
                return NULL;
        }
        return s;
}

PolicyState *policy_state_free(PolicyState *s) {
        if (s) {
                free(s->pair_since);
                free(s->expect_load);
                free(s->expect_at);
                groups_free(s->groups, s->n_groups);
                free(s);
        }
        return NULL;
}

/* A topology with another node count (hotplug, a rebuilt topology): the node holds restart. */
static int state_fit(PolicyState *s, unsigned n_nodes) {
        uint64_t *p, *load, *at;

        if (s->n_nodes == n_nodes)
                return 0;
        if (node_arrays_new(n_nodes, &p, &load, &at) < 0)
                return -ENOMEM;
        free(s->pair_since);
        free(s->expect_load);
        free(s->expect_at);
        s->pair_since = p;
        s->expect_load = load;
        s->expect_at = at;
        s->n_nodes = n_nodes;
        return 0;
}

Plan *plan_free(Plan *p) {
        if (p) {
                for (size_t i = 0; i < p->n_moves; i++)
                        cpumask_free(p->moves[i].mask);
                free(p->moves);
                free(p->weights);
                for (size_t i = 0; i < p->n_escalations; i++)
                        cpumask_free(p->escalations[i].cpus);
                free(p->escalations);
                free(p);
        }
        return NULL;
}

/* ---- the context: validation, nodes, loads */

static void ctx_done(Ctx *c) {
        if (c->nodes)
                for (unsigned i = 0; i < c->n_nodes; i++)
                        cpumask_free(c->nodes[i].usable);
        free(c->nodes);
        free(c->cpu_node);
        free(c->task_node);
        free(c->pressure);
        free(c->blocked);
        free(c->moved);
        free(c->kept_off);
        free(c->cand_storage);
        free(c->cand_tmp);
        free(c->cand_tmp_node);
        free(c->repairs);
        free(c->cpu_storage);
        free(c->held);
        free(c->order);
        free(c->dests);
        plan_free(c->plan);
}

static int validate(const PolicySnapshot *snap, const Topology *topo) {
        if (!snap || !topo || snap->n_cpus != topology_cpu_capacity(topo))
                return -EINVAL;
        if ((snap->n_cpus > 0 && !snap->cpus) || (snap->n_tasks > 0 && !snap->tasks) ||
            (snap->n_cgroups > 0 && !snap->cgroups) || snap->n_tasks > UINT32_MAX)
                return -EINVAL;
        /* Each task's cgroup index is checked in ctx_loads(): one pass over the tasks less. */
        for (size_t i = 0; i < snap->n_cgroups; i++)
                if (!snap->cgroups[i].path)
                        return -EINVAL;
        return 0;
}

static int ctx_alloc(Ctx *c) {
        size_t n_tasks = c->snap->n_tasks, n_groups = c->snap->n_cgroups, n = c->n_nodes;

        c->nodes = calloc(n ? n : 1, sizeof *c->nodes);
        c->cpu_node = calloc(c->snap->n_cpus ? c->snap->n_cpus : 1, sizeof *c->cpu_node);
        c->cpu_storage = calloc(c->snap->n_cpus ? c->snap->n_cpus : 1, sizeof *c->cpu_storage);
        c->task_node = calloc(n_tasks ? n_tasks : 1, sizeof *c->task_node);
        c->moved = calloc(n_tasks ? n_tasks : 1, sizeof *c->moved);
        /* Written before read: malloc, not calloc, spares zeroing megabytes. */
        c->cand_storage = malloc((n_tasks ? n_tasks : 1) * sizeof *c->cand_storage);
        c->cand_tmp = malloc((n_tasks ? n_tasks : 1) * sizeof *c->cand_tmp);
        c->cand_tmp_node = malloc((n_tasks ? n_tasks : 1) * sizeof *c->cand_tmp_node);
        c->repairs = malloc((n_tasks ? n_tasks : 1) * sizeof *c->repairs);
        c->pressure = calloc(n_groups ? n_groups : 1, sizeof *c->pressure);
        c->blocked = calloc(n_groups ? n_groups : 1, sizeof *c->blocked);
        c->kept_off = calloc(n_groups ? n_groups : 1, sizeof *c->kept_off);
        c->held = calloc(n ? n * n : 1, sizeof *c->held);
        c->order = calloc(n ? n : 1, sizeof *c->order);
        c->dests = calloc(n ? n : 1, sizeof *c->dests);
        if (!c->nodes || !c->cpu_node || !c->cpu_storage || !c->task_node || !c->moved ||
            !c->cand_storage || !c->cand_tmp || !c->cand_tmp_node || !c->repairs || !c->pressure ||
            !c->blocked || !c->kept_off || !c->held || !c->order || !c->dests)
                return -ENOMEM;
        return 0;
}

/* The CPUs tasks are placed on: the usable ones, or with use_isolated_cpus every one the daemon
 * may use, isolated and nohz_full included. */
static const CpuMask *topo_placeable_cpus(const Topology *topo, bool use_isolated_cpus) {
        return use_isolated_cpus ? topology_allowed_cpus(topo) : topology_usable_cpus(topo);
}

static const CpuMask *placeable_cpus(const Ctx *c) {
        return topo_placeable_cpus(c->topo, c->p && c->p->use_isolated_cpus);
}

unsigned policy_node_capacity(const Topology *topo, unsigned index, bool use_isolated_cpus) {
        const CpuMask *placeable = topo_placeable_cpus(topo, use_isolated_cpus), *cpus;
        int id = topology_node_id(topo, index);
        unsigned n = 0;

        cpus = id >= 0 ? topology_node_cpus(topo, (unsigned) id) : NULL;
        if (!cpus)
                return 0;
        CPUMASK_FOREACH(cpu, cpus)
                n += cpumask_isset(placeable, (unsigned) cpu);
        return n;
}

/* Each node's id, usable CPUs, capacity, nearest remote distance; each CPU's node. */
static int ctx_nodes(Ctx *c) {
        const CpuMask *usable = placeable_cpus(c);
        unsigned used = 0;
        size_t n_cpus;

        for (unsigned i = 0; i < c->n_nodes; i++) {
                Node *n = &c->nodes[i];
                const CpuMask *cpus;

                n->id = topology_node_id(c->topo, i);
                cpus = topology_node_cpus(c->topo, (unsigned) n->id);
                n->usable = cpumask_new(c->snap->n_cpus);
                if (!n->usable)
                        return -ENOMEM;
                cpumask_and(n->usable, cpus, usable);
                n->cap = cpumask_count(n->usable);
                if (c->p)
                        n->min_imbalance = c->p->node_min_imbalance[i];
                n->nearest = 0;
                for (unsigned j = 0; j < c->n_nodes; j++) {
                        unsigned d = c->dist[(size_t) i * c->n_nodes + j];

                        if (j != i && (n->nearest == 0 || d < n->nearest))
                                n->nearest = d;
                }
                n->cpus = c->cpu_storage + used;
                n_cpus = 0;
                CPUMASK_FOREACH(cpu, n->usable)
                        n->cpus[n_cpus++] = (unsigned) cpu;
                used += n->cap;
        }
        for (unsigned cpu = 0; cpu < c->snap->n_cpus; cpu++) {
                int node = topology_cpu_node(c->topo, cpu);

                c->cpu_node[cpu] = node < 0 ? -1 : topology_node_index(c->topo, (unsigned) node);
        }
        return 0;
}

/* Node loads, each task's node and each group's waiting time; -EINVAL for a bad cgroup index. */
static int ctx_loads(Ctx *c) {
        const CpuMask *usable = placeable_cpus(c);

        for (unsigned cpu = 0; cpu < c->snap->n_cpus; cpu++)
                if (c->cpu_node[cpu] >= 0 && cpumask_isset(usable, cpu)) {
                        Node *n = &c->nodes[c->cpu_node[cpu]];

                        n->load = sat_add(n->load, c->snap->cpus[cpu].util_permyriad);
                }
        for (size_t i = 0; i < c->snap->n_tasks; i++) {
                const PolicyTask *k = &c->snap->tasks[i];
                int node = k->cpu >= 0 && (unsigned) k->cpu < c->snap->n_cpus ? c->cpu_node[k->cpu]
                                                                              : -1;

                c->task_node[i] = node;
                if (node >= 0)
                        c->nodes[node].load = sat_add(c->nodes[node].load, task_wait(k));
                if (k->cgroup != POLICY_NO_CGROUP) {
                        uint64_t p;

                        if (k->cgroup >= c->snap->n_cgroups)
                                return -EINVAL;
                        p = c->pressure[k->cgroup] + task_wait(k);
                        c->pressure[k->cgroup] = (uint32_t) (p > ONE_CPU ? ONE_CPU : p);
                }
        }
        return 0;
}

static int ctx_init(Ctx *c, const PolicySnapshot *snap, const Topology *topo, const PolicyParams *p,
                    uint64_t now, bool force_node_balance) {
        int r = validate(snap, topo);

        if (r < 0)
                return r;
        if (p && p->n_nodes != topology_n_nodes(topo))
                return -EINVAL;
        *c = (Ctx){ .snap = snap,
                    .topo = topo,
                    .p = p,
                    .now = now,
                    .force_node_balance = force_node_balance,
                    .n_nodes = topology_n_nodes(topo),
                    .dist = topology_distances(topo) };
        r = ctx_alloc(c);
        if (r < 0)
                return r;
        r = ctx_nodes(c);
        if (r < 0)
                return r;
        return ctx_loads(c);
}

int policy_node_loads(const PolicySnapshot *snap, const Topology *topo, uint64_t *ret_loads) {
        _cleanup_(ctx_done) Ctx c = {};
        int r = ctx_init(&c, snap, topo, /* p= */ NULL, 0, /* force_node_balance= */ false);

        if (r < 0)
                return r;
        for (unsigned i = 0; i < c.n_nodes; i++)
                ret_loads[i] = c.nodes[i].load;
        return 0;
}

/* ---- weights */

static uint32_t clamp_weight(uint64_t w) {
        return (uint32_t) (w > 10000 ? 10000 : w < 1 ? 1 : w);
}

static bool latency_applies(const PolicyCgroup *cg, const PolicyParams *p) {
        return p->latency_target_usec > 0 && cg->has_latency;
}

PolicyLevel policy_group_level(const PolicyCgroup *cg, uint32_t pressure, const PolicyParams *p) {
        uint64_t target = (uint64_t) p->pressure_target_pct * 100;
        bool lat = latency_applies(cg, p);

        if (pressure > target || (lat && cg->latency_usec > p->latency_target_usec))
                return POLICY_LEVEL_ABOVE;
        if ((uint64_t) pressure * 2 < target &&
            (!lat || (uint64_t) cg->latency_usec * 2 < p->latency_target_usec))
                return POLICY_LEVEL_BELOW;
        return POLICY_LEVEL_BETWEEN;
}

/* "2.10 ms" */
static const char *fmt_msec(char buf[static 32], uint64_t usec) {
        return fmt_hundredths(buf, usec / 10, 100);
}

void policy_level_text(const PolicyCgroup *cg, uint32_t pressure, const PolicyParams *p,
                       PolicyLevel level, char *buf, size_t size) {
        const char *what = cg->has_pressure ? "pressure" : "wait (no PSI)";
        uint64_t target = (uint64_t) p->pressure_target_pct * 100, lt = p->latency_target_usec;
        char v[32], m[32], lv[32], lm[32];

        if (level == POLICY_LEVEL_ABOVE && pressure <= target)
                reason_printf(buf, size, "latency %s ms > %s ms", fmt_msec(lv, cg->latency_usec),
                              fmt_msec(lm, lt));
        else if (level == POLICY_LEVEL_ABOVE)
                reason_printf(buf, size, "%s %s%% > %s%%", what, fmt_hundredths(v, pressure, 100),
                              fmt_hundredths(m, target, 100));
        else if (latency_applies(cg, p))
                reason_printf(buf, size, "%s %s%% < %s%%, latency %s ms < %s ms", what,
                              fmt_hundredths(v, pressure, 100), fmt_hundredths(m, target / 2, 100),
                              fmt_msec(lv, cg->latency_usec), fmt_msec(lm, lt / 2));
        else
                reason_printf(buf, size, "%s %s%% < %s%%", what, fmt_hundredths(v, pressure, 100),
                              fmt_hundredths(m, target / 2, 100));
}

/* Group g's level against its mark; an unprotected group has none (between). */
static PolicyLevel group_level(const Ctx *c, size_t g) {
        const PolicyCgroup *cg = &c->snap->cgroups[g];

        return cg->protected ? policy_group_level(cg, c->pressure[g], c->p) : POLICY_LEVEL_BETWEEN;
}

/* Group g's mode at level; busy: the most it used above its mark (see weight_busy()). Below
 * half its mark while still busy counts as between: the weight working, not the pressure gone. */
static GroupMode group_mode(const Ctx *c, size_t g, PolicyLevel level, uint32_t busy) {
        const PolicyCgroup *cg = &c->snap->cgroups[g];

        if (!cg->protected)
                return cg->weight > cg->base_weight ? GROUP_RELEASE : GROUP_UNTOUCHED;
        switch (level) {
        case POLICY_LEVEL_ABOVE: return GROUP_ABOVE;
        case POLICY_LEVEL_BELOW:
                return policy_quiet(cg->util_permyriad, busy) ? GROUP_BELOW : GROUP_BETWEEN;
        default: return GROUP_BETWEEN;
        }
}

/* The most protected group g used while above its mark since its weight was last at its base
 * (or weight_min), carried on from old (NULL: a group new to the state, or a restart). */
static uint32_t weight_busy(const Ctx *c, size_t g, PolicyLevel level, const GroupState *old) {
        const PolicyCgroup *cg = &c->snap->cgroups[g];
        uint64_t floor = cg->base_weight > c->p->weight_min ? cg->base_weight : c->p->weight_min;
        uint32_t busy = old ? old->busy_permyriad : 0;
        bool above = level == POLICY_LEVEL_ABOVE;

        if (!above && cg->weight <= floor)
                return 0;
        return above && cg->util_permyriad > busy ? cg->util_permyriad : busy;
}

/* Weight before placement: a pressured protected group's tasks stay while its weight can rise. */
static void ctx_blocked(Ctx *c) {
        for (size_t g = 0; g < c->snap->n_cgroups; g++) {
                const PolicyCgroup *cg = &c->snap->cgroups[g];

                if (cg->has_pressure)
                        c->pressure[g] = cg->pressure_permyriad;
                c->blocked[g] =
                        group_level(c, g) == POLICY_LEVEL_ABOVE && cg->weight < c->p->weight_max;
        }
}

static const GroupState *groups_find(const PolicyState *s, const char *path) {
        size_t lo = 0, hi = s->n_groups;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int d = strcmp(s->groups[mid].path, path);

                if (d == 0)
                        return &s->groups[mid];
                if (d < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static int cmp_group_state(const void *a, const void *b) {
        return strcmp(((const GroupState *) a)->path, ((const GroupState *) b)->path);
}

static void weight_reason(const Ctx *c, size_t g, GroupMode mode, uint64_t held, uint32_t to,
                          char *buf, size_t size) {
        const PolicyCgroup *cg = &c->snap->cgroups[g];
        char level[128], h[32];

        if (mode == GROUP_RELEASE)
                reason_printf(buf, size, "no longer protected: back toward base %" PRIu32, to);
        else if (cg->weight < c->p->weight_min)
                reason_printf(buf, size, "protected, below weight_min %" PRIu64, c->p->weight_min);
        else if (cg->weight > c->p->weight_max)
                reason_printf(buf, size, "above weight_max %" PRIu64, c->p->weight_max);
        else {
                policy_level_text(cg, c->pressure[g], c->p,
                                  mode == GROUP_ABOVE ? POLICY_LEVEL_ABOVE : POLICY_LEVEL_BELOW,
                                  level, sizeof level);
                if (mode == GROUP_ABOVE)
                        reason_printf(buf, size, "%s for %s: up %" PRIu64 ", max %" PRIu64, level,
                                      fmt_usec(h, held), c->p->weight_step, c->p->weight_max);
                else
                        reason_printf(buf, size, "%s for %s: down to %" PRIu32 ", base %" PRIu32,
                                      level, fmt_usec(h, held), to, cg->base_weight);
        }
}

/* The weight group g should get this tick (its own if none), given how long its mode has held. */
static uint32_t weight_target(const Ctx *c, size_t g, GroupMode mode, bool held) {
        const PolicyCgroup *cg = &c->snap->cgroups[g];
        uint64_t w = cg->weight, step = c->p->weight_step, base = cg->base_weight;
        uint64_t wmin = c->p->weight_min, wmax = c->p->weight_max;
        uint64_t floor = base > wmin ? base : wmin;

        if (mode == GROUP_RELEASE)
                return held ? clamp_weight(w > step && w - step > base ? w - step : base)
                            : cg->weight;
        if (mode == GROUP_UNTOUCHED)
                return cg->weight;
        if (w < wmin)
                return clamp_weight(wmin);
        if (w > wmax && w > base)
                return clamp_weight(wmax > base ? wmax : base);
        if (mode == GROUP_ABOVE && held && w < wmax)
                return clamp_weight(w + step < wmax ? w + step : wmax);
        if (mode == GROUP_BELOW && held && w > floor)
                return clamp_weight(w > step && w - step > floor ? w - step : floor);
        return cg->weight;
}

/*
 * Plans every group's weight; returns the groups' new state, by snapshot index, in *ret, and
 * their ladder holds of the last tick in old_ladder[].
 */
static int plan_weights(Ctx *c, const PolicyState *s, GroupState **ret, LadderHold *old_ladder) {
        size_t n = c->snap->n_cgroups;
        GroupState *groups = calloc(n ? n : 1, sizeof *groups);

        if (!groups)
                return -ENOMEM;
        for (size_t g = 0; g < n; g++) {
                const PolicyCgroup *cg = &c->snap->cgroups[g];
                const GroupState *old = groups_find(s, cg->path);
                PolicyLevel level = group_level(c, g);
                uint32_t busy = weight_busy(c, g, level, old);
                GroupMode mode = group_mode(c, g, level, busy);
                uint64_t since = old && old->mode == mode && old->since_usec <= c->now
                                         ? old->since_usec
                                         : c->now;
                uint64_t held = c->now - since;
                uint32_t to = weight_target(c, g, mode, held >= c->p->pressure_hold_usec);

                groups[g] = (GroupState){ .path = strdup(cg->path),
                                          .mode = mode,
                                          .since_usec = since,
                                          .busy_permyriad = busy };
                old_ladder[g] = old ? old->ladder : (LadderHold){ .mode = LADDER_NONE };
                if (!groups[g].path) {
                        groups_free(groups, g);
                        return -ENOMEM;
                }
                if (to == cg->weight || c->p->weights_ignored)
                        continue;
                groups[g].since_usec = c->now; /* one step per hold */
                PlanWeight *w = &c->plan->weights[c->plan->n_weights++];
                *w = (PlanWeight){ .cgroup = g, .from = cg->weight, .to = to };
                weight_reason(c, g, mode, held, to, w->reason, sizeof w->reason);
        }
        *ret = groups;
        return 0;
}

/* The weights, then the ladder; the groups' new state, sorted by path, in *ret. */
static int plan_groups(Ctx *c, const PolicyState *s, GroupState **ret) {
        size_t n = c->snap->n_cgroups;
        _cleanup_free_ LadderHold *old = calloc(n ? n : 1, sizeof *old);
        _cleanup_free_ LadderHold *holds = calloc(n ? n : 1, sizeof *holds);
        GroupState *groups = NULL;
        int r;

        if (!old || !holds)
                return -ENOMEM;
        r = plan_weights(c, s, &groups, old);
        if (r < 0)
                return r;
        r = policy_ladder_plan(c->snap, c->p, c->now, c->pressure, old, holds, c->plan);
        if (r < 0) {
                groups_free(groups, n);
                return r;
        }
        for (size_t g = 0; g < n; g++)
                groups[g].ladder = holds[g];
        qsort(groups, n, sizeof *groups, cmp_group_state);
        *ret = groups;
        return 0;
}

/* ---- node pairs */

static unsigned pair_pct(const Ctx *c, unsigned b, unsigned t) {
        uint64_t d = c->dist[(size_t) b * c->n_nodes + t], near = c->nodes[b].nearest;
        /* The config keeps it in 101..1000; a struct built by hand gets no margin below 100. */
        uint64_t base = c->p->node_imbalance_pct > 100 ? c->p->node_imbalance_pct - 100 : 0;
        uint64_t extra = base * d / (near ? near : TOPOLOGY_LOCAL_DISTANCE);

        return (unsigned) (100 + extra);
}

/* 100 * load(B)/cap(B) > pct * load(T)/cap(T) */
static bool pair_ratio_ok(const Ctx *c, unsigned b, unsigned t) {
        const Node *nb = &c->nodes[b], *nt = &c->nodes[t];

        return 100 * nb->load * nt->cap > pair_pct(c, b, t) * nt->load * nb->cap;
}

static unsigned pair_min_imbalance(const Ctx *c, unsigned b, unsigned t) {
        const Node *nb = &c->nodes[b], *nt = &c->nodes[t];

        return nb->cap <= nt->cap ? nb->min_imbalance : nt->min_imbalance;
}

/* load(B) cap(T) - load(T) cap(B): gap(B,T) * cap(B) cap(T) / min(cap); 0 if T is as busy. */
static uint64_t pair_cross(const Ctx *c, unsigned b, unsigned t) {
        const Node *nb = &c->nodes[b], *nt = &c->nodes[t];
        uint64_t x = nb->load * nt->cap, y = nt->load * nb->cap;

        return x > y ? x - y : 0;
}

/* gap(B,T) > node_min_imbalance + half a task */
static bool pair_gap_ok(const Ctx *c, unsigned b, unsigned t) {
        const Node *nb = &c->nodes[b], *nt = &c->nodes[t];
        uint64_t mincap = nb->cap < nt->cap ? nb->cap : nt->cap;
        uint64_t min =
                (uint64_t) pair_min_imbalance(c, b, t) * ONE_CPU + POLICY_GAP_SLACK_PERMYRIAD;

        return pair_cross(c, b, t) * mincap > min * nb->cap * nt->cap;
}

static bool pair_usable(const Ctx *c, unsigned b, unsigned t) {
        return b != t && c->nodes[b].cap > 0 && c->nodes[t].cap > 0;
}

/* The room rule: tasks wait on B, T has room for a CPU's worth (and the ratio: node_imbalance_pct
 * still resists as configured; the gap does not, a task must not wait while a CPU is free). */
static bool pair_room(const Ctx *c, unsigned b, unsigned t) {
        return pair_usable(c, b, t) && node_overloaded(&c->nodes[b]) &&
               node_has_room(&c->nodes[t]) && pair_ratio_ok(c, b, t);
}

/* The balance rule: the ratio past the pair's resistance, and a gap of more than the minimum. */
static bool pair_balance(const Ctx *c, unsigned b, unsigned t) {
        return pair_usable(c, b, t) && pair_ratio_ok(c, b, t) && pair_gap_ok(c, b, t);
}

static bool pair_imbalanced(const Ctx *c, unsigned b, unsigned t) {
        return pair_room(c, b, t) || pair_balance(c, b, t);
}

static unsigned distance(const Ctx *c, unsigned b, unsigned t) {
        return c->dist[(size_t) b * c->n_nodes + t];
}

/* No overshoot: the nodes a plan moved tasks across keep the loads it left them with until a
 * snapshot's interval starts after it (its measurement still counts the task where it was); a
 * snapshot past that (or a clock gone back) forgets them. */
static void ctx_expected(Ctx *c, PolicyState *s) {
        for (unsigned i = 0; i < c->n_nodes; i++) {
                uint64_t at = s->expect_at[i];

                if (at == NEVER)
                        continue;
                if (at > c->now || c->now - at > c->snap->interval_usec) {
                        s->expect_at[i] = NEVER;
                        continue;
                }
                c->nodes[i].load = s->expect_load[i];
                c->nodes[i].expected = true;
        }
}

/* After a plan: the nodes its moves touched remember their loads, and every pair one of them is
 * in starts its hold again (a pair not imbalanced on the next tick forgets it anyway). */
static void state_after_moves(const Ctx *c, PolicyState *s) {
        for (unsigned i = 0; i < c->n_nodes; i++) {
                if (!c->nodes[i].touched)
                        continue;
                s->expect_load[i] = c->nodes[i].load;
                s->expect_at[i] = c->now;
                for (unsigned j = 0; j < c->n_nodes; j++) {
                        s->pair_since[(size_t) i * c->n_nodes + j] = c->now;
                        s->pair_since[(size_t) j * c->n_nodes + i] = c->now;
                }
        }
}

/* Every tick: since when each ordered pair has been imbalanced, and which have been for long. */
static void update_holds(Ctx *c, PolicyState *s) {
        for (unsigned b = 0; b < c->n_nodes; b++)
                for (unsigned t = 0; t < c->n_nodes; t++) {
                        size_t i = (size_t) b * c->n_nodes + t;
                        uint64_t *since = &s->pair_since[i];

                        if (!pair_imbalanced(c, b, t)) {
                                *since = NEVER;
                                continue;
                        }
                        /* A node with an expected load has no measurement since a move: its
                         * pairs' holds start from the first one that does. */
                        if (*since == NEVER || *since > c->now || c->nodes[b].expected ||
                            c->nodes[t].expected)
                                *since = c->now;
                        c->held[i] = c->now - *since >= c->p->node_imbalance_hold_usec ||
                                     c->force_node_balance;
                }
}

/* ---- candidates */

static bool task_movable(const Ctx *c, size_t i) {
        const PolicyTask *k = &c->snap->tasks[i];

        if (c->task_node[i] < 0)
                return false;
        if (k->foreign && !c->p->override_foreign_affinity)
                return false;
        if (!loaded(c, k))
                return false;
        if (k->cgroup != POLICY_NO_CGROUP && c->blocked[k->cgroup])
                return false;
        return cooled(c, k);
}

/* A task whose affinity is its own (its cpuset) keeps within it; ours and foreign are replaced. */
static bool task_keeps_affinity(const PolicyTask *k) {
        return !k->ours && !k->foreign && k->allowed;
}

/* pid, then start time, then index: never the order alone. */
static int cmp_task_identity(const Ctx *c, size_t a, size_t b) {
        const PolicyTask *x = &c->snap->tasks[a], *y = &c->snap->tasks[b];

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->starttime_ticks != y->starttime_ticks)
                return x->starttime_ticks < y->starttime_ticks ? -1 : 1;
        return (a > b) - (a < b);
}

/* m without the CPUs of off, unless that leaves nothing: a mask inside them is left whole. */
static void mask_without(CpuMask *m, const CpuMask *off) {
        if (!cpumask_is_subset(m, off))
                cpumask_andnot(m, m, off);
}

static PlanMove *add_move(Ctx *c, size_t i, unsigned from, unsigned to) {
        const PolicyTask *k = &c->snap->tasks[i];
        PlanMove *m = &c->plan->moves[c->plan->n_moves];

        *m = (PlanMove){ .pid = k->pid,
                         .starttime_ticks = k->starttime_ticks,
                         .from_node = c->nodes[from].id,
                         .to_node = c->nodes[to].id };
        m->mask = cpumask_copy(c->nodes[to].usable);
        if (!m->mask)
                return NULL;
        if (from != to && task_keeps_affinity(k))
                cpumask_and(m->mask, m->mask, k->allowed);
        if (k->cgroup != POLICY_NO_CGROUP && c->kept_off[k->cgroup])
                mask_without(m->mask, c->kept_off[k->cgroup]);
        c->plan->n_moves++;
        c->moved[i] = true;
        return m;
}

/* ---- inside a node */

/* Fills *ret_in / *ret_out with the busiest CPU of the mask and the idlest outside it. */
static bool repair_wanted(const Ctx *c, const PolicyTask *k, const Node *n, unsigned *ret_in,
                          unsigned *ret_out) {
        uint32_t max_in = 0, min_out = UINT32_MAX;
        unsigned in = 0, out = 0;
        bool have_in = false;

        for (unsigned j = 0; j < n->cap; j++) {
                unsigned cpu = n->cpus[j];
                uint32_t u = c->snap->cpus[cpu].util_permyriad;

                if (!cpumask_isset(k->allowed, cpu)) {
                        if (u < min_out)
                                min_out = u, out = cpu;
                } else if (!have_in || u > max_in) {
                        max_in = u, in = cpu;
                        have_in = true;
                }
        }
        if (!have_in || min_out == UINT32_MAX)
                return false;
        *ret_in = in;
        *ret_out = out;
        return 100 * (uint64_t) max_in > (uint64_t) c->p->imbalance_pct * min_out;
}

static bool repair_candidate(const Ctx *c, size_t i) {
        const PolicyTask *k = &c->snap->tasks[i];
        int node = c->task_node[i];

        if (!k->ours || !k->allowed || node < 0 || c->nodes[node].cap == 0 || !cooled(c, k))
                return false;
        if (k->cgroup != POLICY_NO_CGROUP && c->kept_off[k->cgroup])
                return false; /* narrowed by a partition on purpose */
        if (!loaded(c, k))
                return false;
        return mask_strict_subset(k->allowed, c->nodes[node].usable);
}

static int repair_reason(const Ctx *c, const PolicyTask *k, unsigned node, unsigned in,
                         unsigned out, char *buf, size_t size) {
        _cleanup_free_ char *mask = NULL, *whole = NULL;
        char a[32], b[32];

        if (cpumask_format(k->allowed, &mask) < 0 ||
            cpumask_format(c->nodes[node].usable, &whole) < 0)
                return -ENOMEM;
        reason_printf(buf, size,
                      "mask %s is part of node %d (%s): CPU %u at %s vs CPU %u at %s > %u%%", mask,
                      c->nodes[node].id, whole, in, fmt_load(a, c->snap->cpus[in].util_permyriad),
                      out, fmt_load(b, c->snap->cpus[out].util_permyriad), c->p->imbalance_pct);
        return 0;
}

/*
 * The one pass over the tasks after the loads: the masks to repair, and the movable tasks as
 * compact candidates, then bucketed by node (counting sort over the compact copies).
 */
static void classify_tasks(Ctx *c) {
        size_t n = 0, used = 0;

        for (size_t i = 0; i < c->snap->n_tasks; i++) {
                const PolicyTask *k = &c->snap->tasks[i];
                unsigned in, out;

                if (repair_candidate(c, i) &&
                    repair_wanted(c, k, &c->nodes[c->task_node[i]], &in, &out))
                        c->repairs[c->n_repairs++] = i;
                if (!task_movable(c, i))
                        continue;
                c->cand_tmp[n] = (Cand){ .load = (uint32_t) task_load(k),
                                         .pid = k->pid,
                                         .idx = (uint32_t) i,
                                         .keeps_affinity = task_keeps_affinity(k),
                                         .mem_kib = k->mem_kib };
                c->cand_tmp_node[n++] = c->task_node[i];
                c->nodes[c->task_node[i]].n_cands++;
        }
        for (unsigned node = 0; node < c->n_nodes; node++) {
                c->nodes[node].cands = c->cand_storage + used;
                used += c->nodes[node].n_cands;
                c->nodes[node].n_cands = 0;
        }
        for (size_t j = 0; j < n; j++) {
                Node *nd = &c->nodes[c->cand_tmp_node[j]];

                nd->cands[nd->n_cands++] = c->cand_tmp[j];
        }
}

static int cmp_repair(const void *a, const void *b, void *c) {
        return cmp_task_identity(c, *(const size_t *) a, *(const size_t *) b);
}

static int plan_repairs(Ctx *c) {
        size_t *list = c->repairs, n = c->n_repairs;
        int r;

        /* Found in task order, taken in pid order: the cap must not favour the array's order. */
        qsort_r(list, n, sizeof *list, cmp_repair, c);
        for (size_t j = 0; j < n && c->plan->n_moves < c->max_moves; j++) {
                size_t i = list[j];
                unsigned node = (unsigned) c->task_node[i], in, out;
                PlanMove *m;

                (void) repair_wanted(c, &c->snap->tasks[i], &c->nodes[node], &in, &out);
                m = add_move(c, i, node, node);
                if (!m)
                        return -ENOMEM;
                r = repair_reason(c, &c->snap->tasks[i], node, in, out, m->reason,
                                  sizeof m->reason);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- across nodes */

/* Node i before j as a source: busier per CPU, then lower index. */
static bool source_before(const Ctx *c, unsigned i, unsigned j) {
        const Node *x = &c->nodes[i], *y = &c->nodes[j];
        int d = cmp_per_cpu(x->load, x->cap, y->load, y->cap);

        return d != 0 ? d > 0 : i < j;
}

/* The nodes with movable tasks, in c->order (insertion sort: a handful of nodes). */
static unsigned sort_sources(Ctx *c) {
        unsigned n = 0;

        for (unsigned i = 0; i < c->n_nodes; i++) {
                unsigned j;

                if (c->nodes[i].cap == 0 || c->nodes[i].n_cands == 0)
                        continue;
                for (j = n++; j > 0 && source_before(c, i, c->order[j - 1]); j--)
                        c->order[j] = c->order[j - 1];
                c->order[j] = i;
        }
        return n;
}

typedef enum MoveKind {
        MOVE_ROOM, /* tasks wait on the source, the destination has room */
        MOVE_BALANCE, /* the ratio and the gap, by distance tiers */
} MoveKind;

/* Destination before other, for source b: nearer, then lower load per CPU, then lower index. */
static bool dest_before(const Ctx *c, unsigned b, unsigned t, unsigned other) {
        unsigned dx = distance(c, b, t), dy = distance(c, b, other);
        int d;

        if (dx != dy)
                return dx < dy;
        d = cmp_per_cpu(c->nodes[t].load, c->nodes[t].cap, c->nodes[other].load,
                        c->nodes[other].cap);
        return d != 0 ? d < 0 : t < other;
}

/* The distance from b to the nearest node with room for a CPU's worth; UINT_MAX if none has. */
static unsigned room_distance(const Ctx *c, unsigned b) {
        unsigned best = UINT_MAX;

        for (unsigned t = 0; t < c->n_nodes; t++)
                if (pair_usable(c, b, t) && node_has_room(&c->nodes[t]) && distance(c, b, t) < best)
                        best = distance(c, b, t);
        return best;
}

/* The held destinations of b for a kind of move, in c->dests, best first. */
static unsigned sort_dests(Ctx *c, unsigned b, MoveKind kind) {
        unsigned n = 0, limit = kind == MOVE_BALANCE ? room_distance(c, b) : UINT_MAX;

        for (unsigned t = 0; t < c->n_nodes; t++) {
                unsigned j;

                if (!c->held[(size_t) b * c->n_nodes + t] ||
                    !(kind == MOVE_ROOM ? pair_room(c, b, t) : pair_balance(c, b, t)) ||
                    distance(c, b, t) > limit)
                        continue;
                for (j = n++; j > 0 && dest_before(c, b, t, c->dests[j - 1]); j--)
                        c->dests[j] = c->dests[j - 1];
                c->dests[j] = t;
        }
        return n;
}

/* What best_task() found: the task, and the one of the closest balance it passed over for its
 * memory (SIZE_MAX if none). */
typedef struct Choice {
        size_t idx, passed;
} Choice;

/* Whether candidate k of b may go to t for this kind of move (its affinity aside: see
 * cand_reaches()); *ret_score: how far from even the two nodes' loads per CPU would be,
 * |D - d (cap(B) + cap(T))| with D = load(B) cap(T) - load(T) cap(B), for a move that makes it
 * strictly smaller (0 < d (cap(B) + cap(T)) < 2D). */
static bool cand_ok(const Ctx *c, const Cand *k, unsigned b, unsigned t, MoveKind kind,
                    uint64_t *ret_score) {
        const Node *nb = &c->nodes[b], *nt = &c->nodes[t];
        uint64_t cross = pair_cross(c, b, t), moved = (uint64_t) k->load * (nb->cap + nt->cap);

        if (moved >= 2 * cross || c->moved[k->idx])
                return false;
        if (kind == MOVE_ROOM &&
            (!node_fits(nt, k->load) ||
             k->load > nb->load - nb->cap * ONE_CPU + POLICY_ROOM_SLACK_PERMYRIAD))
                return false;
        *ret_score = moved > cross ? moved - cross : cross - moved;
        return true;
}

/* Whether candidate k may run on t at all: last, only for a candidate about to be chosen (a mask
 * test over up to 8192 CPUs). */
static bool cand_reaches(const Ctx *c, const Cand *k, unsigned t) {
        return !k->keeps_affinity ||
               masks_intersect(c->snap->tasks[k->idx].allowed, c->nodes[t].usable);
}

/* a before b as the task to move, of the same balance: less memory, closer, lower pid. */
static bool cand_before(const Ctx *c, const Cand *a, uint64_t sa, const Cand *b, uint64_t sb) {
        if (a->mem_kib != b->mem_kib)
                return a->mem_kib < b->mem_kib;
        if (sa != sb)
                return sa < sb;
        if (a->pid != b->pid)
                return a->pid < b->pid;
        return cmp_task_identity(c, a->idx, b->idx) < 0;
}

/*
 * The task of b to move to t: of those whose move leaves a gap within POLICY_SAME_BALANCE_PERMYRIAD
 * of a task of the closest (the same balance), the one with the least memory on b. Two passes over
 * b's candidates: the closest result, then the choice among its equals.
 */
static Choice best_task(const Ctx *c, unsigned b, unsigned t, MoveKind kind) {
        const Node *nb = &c->nodes[b], *nt = &c->nodes[t];
        uint64_t same, score, best_score = 0, top_score = 0;
        const Cand *best = NULL, *top = NULL;

        for (size_t j = 0; j < nb->n_cands; j++) {
                const Cand *k = &nb->cands[j];

                if (cand_ok(c, k, b, t, kind, &score) &&
                    (!top || score < top_score || (score == top_score && k->pid < top->pid)) &&
                    cand_reaches(c, k, t))
                        top = k, top_score = score;
        }
        if (!top)
                return (Choice){ .idx = SIZE_MAX, .passed = SIZE_MAX };
        /* score / (cap(B) cap(T)) is the per-CPU difference left; times the smaller capacity,
         * the gap in tasks: a quarter task of gap is max(cap(B), cap(T)) quarters of score. */
        same = top_score +
               (uint64_t) POLICY_SAME_BALANCE_PERMYRIAD * (nb->cap > nt->cap ? nb->cap : nt->cap);
        for (size_t j = 0; j < nb->n_cands; j++) {
                const Cand *k = &nb->cands[j];

                if (!cand_ok(c, k, b, t, kind, &score) || score > same)
                        continue;
                if ((!best || cand_before(c, k, score, best, best_score)) && cand_reaches(c, k, t))
                        best = k, best_score = score;
        }
        /* the task passed over is named for a MiB or more of difference, not for noise */
        return (Choice){ .idx = best->idx,
                         .passed = top->mem_kib >= best->mem_kib + 1024 ? top->idx : SIZE_MAX };
}

/* ", 3 MiB on node 0" (numa_maps) or ", 3 MiB resident" (statm), for reasons; "" unknown */
static const char *fmt_mem(char buf[static 64], const PolicyTask *k, int node) {
        uint64_t mib = (k->mem_kib + 1023) / 1024;

        if (k->mem_exact)
                (void) snprintf(buf, 64, ", %" PRIu64 " MiB on node %d", mib, node);
        else if (k->mem_kib > 0)
                (void) snprintf(buf, 64, ", %" PRIu64 " MiB resident", mib);
        else
                buf[0] = '\0';
        return buf;
}

static void node_text(const Ctx *c, unsigned i, char *buf, size_t size) {
        const Node *n = &c->nodes[i];
        char l[32], pc[32];

        reason_printf(buf, size, "node %d load %s%s on %u CPUs (%s/CPU)", n->id,
                      fmt_load(l, n->load), n->expected ? " (expected)" : "", n->cap,
                      fmt_load(pc, n->load / n->cap));
}

static void move_reason(const Ctx *c, const PlanMove *m, unsigned b, unsigned t, MoveKind kind,
                        Choice ch, const PolicyState *s, char *buf, size_t size) {
        const Node *nb = &c->nodes[b], *nt = &c->nodes[t];
        const PolicyTask *k = &c->snap->tasks[ch.idx];
        uint64_t mincap = nb->cap < nt->cap ? nb->cap : nt->cap;
        uint64_t gap = pair_cross(c, b, t) * mincap / ((uint64_t) nb->cap * nt->cap);
        uint64_t since = s->pair_since[(size_t) b * c->n_nodes + t];
        char src[96], dst[96], why[128], g[32], h[32], w[32], dl[32], mem[64], other[96] = "";

        node_text(c, b, src, sizeof src);
        node_text(c, t, dst, sizeof dst);
        if (kind == MOVE_ROOM)
                reason_printf(why, sizeof why, "%s waiting; nearest room, distance %u",
                              fmt_load(w, nb->load - nb->cap * ONE_CPU), distance(c, b, t));
        else
                reason_printf(why, sizeof why, "ratio > %u%%, gap %s > %u, distance %u",
                              pair_pct(c, b, t), fmt_load(g, gap), pair_min_imbalance(c, b, t),
                              distance(c, b, t));
        if (ch.passed != SIZE_MAX) {
                char pm[64];

                reason_printf(other, sizeof other, "; not pid %d (%s)",
                              (int) c->snap->tasks[ch.passed].pid,
                              fmt_mem(pm, &c->snap->tasks[ch.passed], m->from_node) + 2);
        }
        reason_printf(buf, size, "%s vs %s: %s, for %s; task %s%s%s", src, dst, why,
                      fmt_usec(h, c->now - since), fmt_load(dl, task_load(k)),
                      fmt_mem(mem, k, m->from_node), other);
}

/* Moves one task from b to t if one qualifies: 1 if it did, 0 if none, -ENOMEM. */
static int try_move(Ctx *c, const PolicyState *s, unsigned b, unsigned t, MoveKind kind) {
        Node *nb = &c->nodes[b], *nt = &c->nodes[t];
        Choice ch = best_task(c, b, t, kind);
        uint64_t d;
        PlanMove *m;

        if (ch.idx == SIZE_MAX)
                return 0;
        d = task_load(&c->snap->tasks[ch.idx]);
        m = add_move(c, ch.idx, b, t);
        if (!m)
                return -ENOMEM;
        move_reason(c, m, b, t, kind, ch, s, m->reason, sizeof m->reason);
        nb->load = nb->load > d ? nb->load - d : 0;
        nt->load = sat_add(nt->load, d);
        nb->touched = nt->touched = true;
        return 1;
}

/* Room first (nearest), then balance (by tiers), for each source busiest first; one move at a
 * time, the loads recomputed after each. */
static int plan_node_moves(Ctx *c, const PolicyState *s) {
        static const MoveKind kinds[] = { MOVE_ROOM, MOVE_BALANCE };

        while (c->plan->n_moves < c->max_moves) {
                unsigned n_src = sort_sources(c);
                int r = 0;

                for (unsigned i = 0; i < n_src && r == 0; i++)
                        for (size_t k = 0; k < ELEMENTSOF(kinds) && r == 0; k++) {
                                unsigned b = c->order[i], n_dst = sort_dests(c, b, kinds[k]);

                                for (unsigned j = 0; j < n_dst && r == 0; j++)
                                        r = try_move(c, s, b, c->dests[j], kinds[k]);
                        }
                if (r <= 0)
                        return r;
        }
        return 0;
}

static bool node_balance_tick(const Ctx *c, const PolicyState *s) {
        uint64_t mult = c->p->busy_node_multiplier;

        if (c->n_nodes < 2)
                return false;
        if (c->force_node_balance)
                return true;
        for (unsigned i = 0; i < c->n_nodes; i++)
                if (node_has_idle_cpu(&c->nodes[i]))
                        mult = c->p->idle_node_multiplier;
        return s->ticks % (mult ? mult : 1) == 0;
}

/* ---- partitions */

/* Each group's partition once this plan's steps are taken: a step up's CPUs, none after a step
 * back, else what the snapshot says. */
static void ctx_kept_off(Ctx *c) {
        for (size_t g = 0; g < c->snap->n_cgroups; g++)
                c->kept_off[g] = c->snap->cgroups[g].partition;
        for (size_t i = 0; i < c->plan->n_escalations; i++) {
                const PlanEscalation *e = &c->plan->escalations[i];

                if (e->lever == POLICY_LEVER_PARTITION)
                        c->kept_off[e->cgroup] = plan_escalation_is_up(e) ? e->cpus : NULL;
        }
}

/* A PlanMove's room: the cap's array grown by one (partition masks are outside the cap). */
static PlanMove *plan_grow_moves(Ctx *c) {
        PlanMove *m;

        if (c->plan->n_moves < c->moves_room)
                return &c->plan->moves[c->plan->n_moves];
        m = reallocarray(c->plan->moves, c->moves_room * 2 + 1, sizeof *m);
        if (!m)
                return NULL;
        c->plan->moves = m;
        c->moves_room = c->moves_room * 2 + 1;
        return &m[c->plan->n_moves];
}

/* Every task of a partitioned group whose mask still has a CPU kept off, and not all of them,
 * gets its mask less those CPUs (a foreign one only with override_foreign_affinity); the tasks
 * this plan moves already have it. */
static int plan_partition_moves(Ctx *c) {
        for (size_t i = 0; i < c->snap->n_tasks; i++) {
                const PolicyTask *k = &c->snap->tasks[i];
                const CpuMask *off;
                _cleanup_free_ char *cpus = NULL;
                const char *prot;
                PlanMove *m;
                int node = c->task_node[i];

                if (k->cgroup == POLICY_NO_CGROUP || !(off = c->kept_off[k->cgroup]) ||
                    c->moved[i] || !k->allowed || node < 0 ||
                    (k->foreign && !c->p->override_foreign_affinity) ||
                    !policy_masks_intersect(k->allowed, off) || cpumask_is_subset(k->allowed, off))
                        continue;
                m = plan_grow_moves(c);
                if (!m)
                        return -ENOMEM;
                *m = (PlanMove){ .pid = k->pid,
                                 .starttime_ticks = k->starttime_ticks,
                                 .from_node = c->nodes[node].id,
                                 .to_node = c->nodes[node].id,
                                 .mask = cpumask_copy(k->allowed) };
                if (!m->mask || cpumask_format(off, &cpus) < 0) {
                        cpumask_free(m->mask);
                        return -ENOMEM;
                }
                cpumask_andnot(m->mask, m->mask, off);
                c->plan->n_moves++;
                c->moved[i] = true;
                prot = NULL;
                for (size_t e = 0; e < c->plan->n_escalations && !prot; e++)
                        if (c->plan->escalations[e].cgroup == k->cgroup &&
                            c->plan->escalations[e].for_cgroup != POLICY_NO_CGROUP)
                                prot = c->snap->cgroups[c->plan->escalations[e].for_cgroup].path;
                reason_printf(m->reason, sizeof m->reason, "%s is kept off CPUs %s%s%s (partition)",
                              c->snap->cgroups[k->cgroup].path, cpus, prot ? ", reserved for " : "",
                              prot ? prot : "");
        }
        return 0;
}

/* ---- the plan */

static int plan_new(Ctx *c) {
        uint64_t max = c->p->max_moves_per_tick;

        c->max_moves = max < c->snap->n_tasks ? (size_t) max : c->snap->n_tasks;
        c->plan = calloc(1, sizeof *c->plan);
        if (!c->plan)
                return -ENOMEM;
        c->moves_room = c->max_moves ? c->max_moves : 1;
        c->plan->moves = calloc(c->moves_room, sizeof *c->plan->moves);
        c->plan->weights =
                calloc(c->snap->n_cgroups ? c->snap->n_cgroups : 1, sizeof *c->plan->weights);
        /* One step at most per group and plan. */
        c->plan->escalations =
                calloc(c->snap->n_cgroups ? c->snap->n_cgroups : 1, sizeof *c->plan->escalations);
        if (!c->plan->moves || !c->plan->weights || !c->plan->escalations)
                return -ENOMEM;
        return 0;
}

int policy_plan(PolicyState *s, const PolicySnapshot *snap, const Topology *topo,
                const PolicyParams *p, uint64_t now_usec, bool force_node_balance, Plan **ret) {
        _cleanup_(ctx_done) Ctx c = {};
        GroupState *groups = NULL;
        int r;

        if (!s || !p || !ret)
                return -EINVAL;
        r = ctx_init(&c, snap, topo, p, now_usec, force_node_balance);
        if (r < 0)
                return r;
        r = state_fit(s, c.n_nodes);
        if (r < 0)
                return r;
        r = plan_new(&c);
        if (r < 0)
                return r;
        ctx_expected(&c, s);
        ctx_blocked(&c);
        r = plan_groups(&c, s, &groups);
        if (r < 0)
                return r;
        update_holds(&c, s);
        ctx_kept_off(&c);
        classify_tasks(&c);
        /* Repairs first: the tasks they move are marked, and no task moves twice. */
        r = plan_repairs(&c);
        if (r >= 0 && node_balance_tick(&c, s)) {
                c.plan->node_balance_ran = true;
                r = plan_node_moves(&c, s);
        }
        if (r >= 0)
                r = plan_partition_moves(&c);
        if (r < 0) {
                groups_free(groups, snap->n_cgroups);
                return r;
        }
        state_after_moves(&c, s);
        groups_free(s->groups, s->n_groups);
        s->groups = groups;
        s->n_groups = snap->n_cgroups;
        s->ticks++;
        *ret = TAKE_PTR(c.plan);
        return 0;
}
