/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The escalation ladder: the levers past the weight (see "The ladder" in policy.h). */
#include "policy-internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ONE_CPU ((uint64_t) POLICY_LOAD_ONE_CPU)

typedef struct Step {
        PolicyLever lever;
        uint32_t from, to;
} Step;

typedef struct Ladder {
        const PolicySnapshot *snap;
        const PolicyParams *p;
        uint64_t now;
        const uint32_t *pressure;
        const LadderHold *old;
        LadderHold *holds;
        Plan *plan;
        size_t *prot; /* the protected groups that escalate, in path order */
        size_t n_prot;
        bool *eligible; /* by group: may be a contender (not protected, not holding or in one) */
        bool *contends; /* [g * n_prot + j]: group g contends with protected group prot[j] */
        bool *stepped; /* by group: has its step in this plan */
} Ladder;

static void ladder_done(Ladder *l) {
        free(l->prot);
        free(l->eligible);
        free(l->contends);
        free(l->stepped);
}

static const PolicyCgroup *group(const Ladder *l, size_t g) {
        return &l->snap->cgroups[g];
}

static bool escalating(const PolicyParams *p) {
        for (PolicyLever v = POLICY_LEVER_NONE + 1; v < _POLICY_LEVER_MAX; v++)
                if (p->escalate_lever[v])
                        return true;
        return false;
}

/* path is below (inside) dir. */
static bool path_below(const char *path, const char *dir) {
        size_t n = strlen(dir);

        return strncmp(path, dir, n) == 0 && path[n] == '/';
}

bool plan_escalation_is_up(const PlanEscalation *e) {
        if (e->lever == POLICY_LEVER_QUOTA)
                return e->to > 0 && (e->from == 0 || e->to < e->from);
        return e->to > e->from;
}

/* ---- steps: read from what the group has now, so a restart goes on from the record */

static uint32_t quota_floor(const Ladder *l) {
        uint64_t f = (uint64_t) l->p->quota_floor_pct * 100;

        return (uint32_t) (f == 0 ? 1 : f > UINT32_MAX ? UINT32_MAX : f);
}

static bool task_in(const Ladder *l, const PolicyTask *k);

/* Some task of g has a mask a partition of reserve would narrow (the override as for moves). */
static bool partition_narrows(const Ladder *l, size_t g, const CpuMask *reserve) {
        for (size_t i = 0; i < l->snap->n_tasks; i++) {
                const PolicyTask *k = &l->snap->tasks[i];

                if (task_in(l, k) && k->cgroup == g && k->allowed &&
                    (!k->foreign || l->p->override_foreign_affinity) &&
                    policy_masks_intersect(k->allowed, reserve) &&
                    !cpumask_is_subset(k->allowed, reserve))
                        return true;
        }
        return false;
}

/* The next step up on g, or lever NONE when it has none left. reserve: the CPUs a partition
 * for the protected group would keep g off, or NULL when it can have none. */
static Step next_up(const Ladder *l, size_t g, const CpuMask *reserve) {
        const PolicyCgroup *cg = group(l, g);
        uint32_t floor = quota_floor(l), q = cg->quota_permyriad;

        if (l->p->escalate_lever[POLICY_LEVER_IDLE] && cg->has_idle && !cg->idle)
                return (Step){ POLICY_LEVER_IDLE, 0, 1 };
        if (l->p->escalate_lever[POLICY_LEVER_QUOTA]) {
                if (q == 0)
                        return (Step){ POLICY_LEVER_QUOTA, 0,
                                       cg->util_permyriad / 2 > floor ? cg->util_permyriad / 2
                                                                      : floor };
                /* a limit someone else set is theirs: never changed */
                if (cg->quota_ours && q > floor)
                        return (Step){ POLICY_LEVER_QUOTA, q, q / 2 > floor ? q / 2 : floor };
        }
        if (l->p->escalate_lever[POLICY_LEVER_PARTITION] && !cg->partition && reserve &&
            partition_narrows(l, g, reserve))
                return (Step){ POLICY_LEVER_PARTITION, 0, cpumask_count(reserve) };
        return (Step){ POLICY_LEVER_NONE, 0, 0 };
}

/*
 * The next step back on g (the reverse of the way up), or lever NONE when nothing of ours is
 * left: a limit doubles while it binds (the group was throttled or used 90% of it) and stays
 * under the machine's CPUs, else goes.
 */
static Step next_back(const Ladder *l, size_t g) {
        const PolicyCgroup *cg = group(l, g);
        uint64_t q = cg->quota_permyriad;

        if (cg->partition)
                return (Step){ POLICY_LEVER_PARTITION, cpumask_count(cg->partition), 0 };
        if (cg->quota_ours && q > 0) {
                bool binds =
                        cg->throttled_permyriad > 0 || (uint64_t) cg->util_permyriad * 10 >= q * 9;
                uint64_t to = binds && 2 * q < l->snap->n_cpus * ONE_CPU ? 2 * q : 0;

                return (Step){ POLICY_LEVER_QUOTA, (uint32_t) q, (uint32_t) to };
        }
        if (cg->idle_ours && cg->idle)
                return (Step){ POLICY_LEVER_IDLE, 1, 0 };
        return (Step){ POLICY_LEVER_NONE, 0, 0 };
}

static bool has_ours(const Ladder *l, size_t g) {
        return next_back(l, g).lever != POLICY_LEVER_NONE;
}

/* ---- who contends with whom */

static int cmp_path(const void *a, const void *b, void *userdata) {
        const PolicySnapshot *snap = userdata;

        return strcmp(snap->cgroups[*(const size_t *) a].path,
                      snap->cgroups[*(const size_t *) b].path);
}

/* The protected groups that escalate, in path order; the unprotected groups, as contenders. */
static int ladder_groups(Ladder *l) {
        size_t n = l->snap->n_cgroups;
        bool on = escalating(l->p);

        l->prot = calloc(n ? n : 1, sizeof *l->prot);
        l->eligible = calloc(n ? n : 1, sizeof *l->eligible);
        l->stepped = calloc(n ? n : 1, sizeof *l->stepped);
        if (!l->prot || !l->eligible || !l->stepped)
                return -ENOMEM;
        for (size_t g = 0; g < n; g++) {
                l->eligible[g] = !group(l, g)->protected;
                if (on && group(l, g)->protected)
                        l->prot[l->n_prot++] = g;
        }
        qsort_r(l->prot, l->n_prot, sizeof *l->prot, cmp_path, (void *) l->snap);
        return 0;
}

/* Groups that hold a protected group or are inside one are no contenders (paths compared only
 * on ticks that need contention: most ticks do not). */
static void ladder_eligible(Ladder *l) {
        size_t n = l->snap->n_cgroups;

        for (size_t g = 0; g < n; g++) {
                if (!group(l, g)->protected)
                        continue;
                for (size_t h = 0; h < n; h++)
                        if (l->eligible[h] && (path_below(group(l, g)->path, group(l, h)->path) ||
                                               path_below(group(l, h)->path, group(l, g)->path)))
                                l->eligible[h] = false;
        }
}

static bool task_in(const Ladder *l, const PolicyTask *k) {
        return k->cgroup != POLICY_NO_CGROUP && k->cgroup < l->snap->n_cgroups;
}

static bool cpu_known(const Ladder *l, const PolicyTask *k) {
        return k->cpu >= 0 && (unsigned) k->cpu < l->snap->n_cpus;
}

/* contends[]: the CPUs each protected group's tasks last ran on, then who ran or may run there. */
static int ladder_contention(Ladder *l) {
        size_t n = l->snap->n_cgroups, np = l->n_prot;
        _cleanup_free_ CpuMask **cpus = calloc(np ? np : 1, sizeof *cpus);
        _cleanup_free_ size_t *index = malloc((n ? n : 1) * sizeof *index);
        int r = -ENOMEM;

        l->contends = calloc(n * np > 0 ? n * np : 1, sizeof *l->contends);
        if (!cpus || !index || !l->contends)
                return -ENOMEM;
        ladder_eligible(l);
        for (size_t g = 0; g < n; g++)
                index[g] = SIZE_MAX;
        for (size_t j = 0; j < np; j++) {
                index[l->prot[j]] = j;
                cpus[j] = cpumask_new(l->snap->n_cpus);
                if (!cpus[j])
                        goto out;
        }
        for (size_t i = 0; i < l->snap->n_tasks; i++) {
                const PolicyTask *k = &l->snap->tasks[i];

                if (task_in(l, k) && index[k->cgroup] != SIZE_MAX && cpu_known(l, k))
                        (void) cpumask_set(cpus[index[k->cgroup]], (unsigned) k->cpu);
        }
        for (size_t i = 0; i < l->snap->n_tasks; i++) {
                const PolicyTask *k = &l->snap->tasks[i];

                uint32_t util = group(l, k->cgroup)->util_permyriad;

                /* A group of ours keeps contending at any use, none included: starved by its
                 * step, it is the step working, not a reason to give it back (burst-rings: the
                 * batch group at cpu.idle used nothing beside the pressed job, was released as
                 * no contender a hold later, and held back again at once, every burst). */
                if (!task_in(l, k) || !l->eligible[k->cgroup] ||
                    (util < POLICY_CONTENDER_PERMYRIAD && !has_ours(l, k->cgroup)))
                        continue;
                for (size_t j = 0; j < np; j++) {
                        bool *c = &l->contends[k->cgroup * np + j];

                        /* kept off P's CPUs by our partition is the step working */
                        if (!*c)
                                *c = (cpu_known(l, k) &&
                                      cpumask_isset(cpus[j], (unsigned) k->cpu)) ||
                                     (k->allowed && policy_masks_intersect(cpus[j], k->allowed)) ||
                                     (group(l, k->cgroup)->partition &&
                                      policy_masks_intersect(cpus[j],
                                                             group(l, k->cgroup)->partition));
                }
        }
        r = 0;
out:
        for (size_t j = 0; j < np; j++)
                cpumask_free(cpus[j]);
        return r;
}

static bool contends(const Ladder *l, size_t g, size_t j) {
        return l->contends[g * l->n_prot + j];
}

/* ---- modes and holds */

/* The group whose own limit throttles protected group g more than POLICY_THROTTLED_PERMYRIAD:
 * g, or the nearest group above it in the snapshot (a slice's CPU limit throttles every group
 * below it, and shows in theirs as pressure). SIZE_MAX when none. */
static size_t limiter(const Ladder *l, size_t g) {
        size_t best = SIZE_MAX;

        if (group(l, g)->throttled_permyriad > POLICY_THROTTLED_PERMYRIAD)
                return g;
        for (size_t a = 0; a < l->snap->n_cgroups; a++)
                if (group(l, a)->throttled_permyriad > POLICY_THROTTLED_PERMYRIAD &&
                    path_below(group(l, g)->path, group(l, a)->path) &&
                    (best == SIZE_MAX || strlen(group(l, a)->path) > strlen(group(l, best)->path)))
                        best = a;
        return best;
}

/* Protected group g is pressed by its own tasks (POLICY_SATURATED_PERMYRIAD): it uses most of
 * the CPUs its tasks last ran on, and they want more than those and half a CPU. Computed only
 * for a group pressed at weight_max. */
static bool saturated(const Ladder *l, size_t g) {
        _cleanup_cpumask_ CpuMask *ran = cpumask_new(l->snap->n_cpus);
        uint64_t n, demand = 0;

        if (!ran)
                return false; /* as before this check: no memory is no reason to stand */
        for (size_t i = 0; i < l->snap->n_tasks; i++) {
                const PolicyTask *k = &l->snap->tasks[i];

                if (task_in(l, k) && k->cgroup == g && cpu_known(l, k)) {
                        (void) cpumask_set(ran, (unsigned) k->cpu);
                        demand += k->demand_permyriad;
                }
        }
        n = cpumask_count(ran);
        return n > 0 && group(l, g)->util_permyriad >= n * POLICY_SATURATED_PERMYRIAD &&
               demand > n * ONE_CPU + ONE_CPU / 2;
}

/* Protected group g's mode; *busy: the most it used while above its mark, carried on. */
static LadderMode protected_mode(const Ladder *l, size_t g, uint32_t *busy) {
        const PolicyCgroup *cg = group(l, g);
        PolicyLevel level = policy_group_level(cg, l->pressure[g], l->p);
        uint32_t u = cg->util_permyriad;

        *busy = l->old[g].busy_permyriad;
        if (level == POLICY_LEVEL_ABOVE && u > *busy)
                *busy = u;
        if (limiter(l, g) != SIZE_MAX)
                return LADDER_THROTTLED;
        if (level == POLICY_LEVEL_ABOVE &&
            (cg->weight >= l->p->weight_max || l->p->weights_ignored))
                return saturated(l, g) ? LADDER_NONE : LADDER_UP;
        /* Below its mark while still busy is most likely the steps working: taking them back
         * would bring the pressure back and the next hold would take them again, a lever
         * flapping every two holds. They go back once P has gone quiet: next to nothing, or a
         * small part of what it used when it was pressed (its burst is over). */
        if (level == POLICY_LEVEL_BELOW && policy_quiet(u, *busy))
                return LADDER_DOWN;
        return LADDER_NONE;
}

/* Something of ours on g, and no escalating protected group it contends with. */
static bool orphan(const Ladder *l, size_t g) {
        if (!has_ours(l, g))
                return false;
        if (!l->eligible[g])
                return true;
        for (size_t j = 0; j < l->n_prot; j++)
                if (contends(l, g, j))
                        return false;
        return true;
}

static void hold(Ladder *l, size_t g, LadderMode mode) {
        const LadderHold *o = &l->old[g];

        l->holds[g].mode = mode;
        l->holds[g].since_usec =
                o->mode == mode && o->since_usec <= l->now ? o->since_usec : l->now;
}

/* Pressed again below the depth it had, within escalate_memory of a step given back: no hold. */
static bool recalled(const Ladder *l, size_t g) {
        const LadderHold *h = &l->holds[g];

        return h->mode == LADDER_UP && h->depth < h->peak;
}

static bool held(const Ladder *l, size_t g) {
        return l->holds[g].mode != LADDER_NONE &&
               (l->now - l->holds[g].since_usec >= l->p->escalate_hold_usec || recalled(l, g));
}

/* ---- steps into the plan */

static PlanEscalation *add_step(Ladder *l, size_t g, size_t for_g, Step st) {
        PlanEscalation *e = &l->plan->escalations[l->plan->n_escalations++];

        *e = (PlanEscalation){
                .cgroup = g, .for_cgroup = for_g, .lever = st.lever, .from = st.from, .to = st.to
        };
        l->stepped[g] = true;
        return e;
}

/* Heaviest first: util, then path. */
static bool heavier(const Ladder *l, size_t a, size_t b) {
        uint32_t ua = group(l, a)->util_permyriad, ub = group(l, b)->util_permyriad;

        return ua != ub ? ua > ub : strcmp(group(l, a)->path, group(l, b)->path) < 0;
}

/* The CPUs a partition for protected group j keeps its contenders off: of those its tasks last
 * ran on, the partition_max_cpus it used most (then the lowest numbered), and never every CPU
 * of the snapshot. NULL when none (or no memory: the step waits for the next hold). */
static CpuMask *partition_reserve(const Ladder *l, size_t j) {
        size_t pg = l->prot[j];
        unsigned n_cpus = l->snap->n_cpus, want = l->p->partition_max_cpus;
        _cleanup_free_ uint64_t *use = NULL;
        CpuMask *m;

        if (!l->p->escalate_lever[POLICY_LEVER_PARTITION] || want == 0 || n_cpus < 2)
                return NULL;
        if (want > n_cpus - 1)
                want = n_cpus - 1;
        use = calloc(n_cpus, sizeof *use);
        m = use ? cpumask_new(n_cpus) : NULL;
        if (!m)
                return NULL;
        for (size_t i = 0; i < l->snap->n_tasks; i++) {
                const PolicyTask *k = &l->snap->tasks[i];

                if (task_in(l, k) && k->cgroup == pg && cpu_known(l, k))
                        use[k->cpu] += (uint64_t) k->util_permyriad + 1; /* ran there: > 0 */
        }
        for (unsigned n = 0; n < want; n++) {
                unsigned best = n_cpus;

                for (unsigned c = 0; c < n_cpus; c++)
                        if (use[c] > 0 && !cpumask_isset(m, c) &&
                            (best == n_cpus || use[c] > use[best]))
                                best = c;
                if (best == n_cpus)
                        break;
                (void) cpumask_set(m, best);
        }
        if (cpumask_is_empty(m))
                m = cpumask_free(m);
        return m;
}

static void step_up(Ladder *l, size_t j) {
        size_t pg = l->prot[j], best = SIZE_MAX;
        _cleanup_cpumask_ CpuMask *reserve = partition_reserve(l, j);
        char level[80], h[32], u[32];
        PlanEscalation *e;
        Step st;

        for (size_t g = 0; g < l->snap->n_cgroups; g++)
                if (contends(l, g, j) && !l->stepped[g] &&
                    next_up(l, g, reserve).lever != POLICY_LEVER_NONE &&
                    (best == SIZE_MAX || heavier(l, g, best)))
                        best = g;
        if (best == SIZE_MAX)
                return; /* the ladder is at its end */
        st = next_up(l, best, reserve);
        e = add_step(l, best, pg, st);
        if (st.lever == POLICY_LEVER_PARTITION)
                e->cpus = TAKE_PTR(reserve);
        policy_level_text(group(l, pg), l->pressure[pg], l->p, POLICY_LEVEL_ABOVE, level,
                          sizeof level);
        if (recalled(l, pg))
                (void) snprintf(e->reason, sizeof e->reason,
                                "%s, pressed again %s after a give-back: step %" PRIu32
                                " of %" PRIu32 " at once",
                                level, policy_fmt_usec(h, l->now - l->holds[pg].back_usec),
                                l->holds[pg].depth + 1, l->holds[pg].peak);
        else
                (void) snprintf(e->reason, sizeof e->reason,
                                "%s for %s at weight_max %" PRIu64 ": heaviest contender, %s CPUs",
                                level, policy_fmt_usec(h, l->now - l->holds[pg].since_usec),
                                l->p->weight_max,
                                policy_fmt_load(u, group(l, best)->util_permyriad));
        l->holds[pg].depth++;
        if (l->holds[pg].peak < l->holds[pg].depth)
                l->holds[pg].peak = l->holds[pg].depth;
        l->holds[pg].since_usec = l->now;
}

/* g contends with a protected group, other than prot[j], that is not below its mark. */
static bool needed_elsewhere(const Ladder *l, size_t g, size_t j) {
        for (size_t k = 0; k < l->n_prot; k++) {
                LadderMode m = l->holds[l->prot[k]].mode;

                if (k != j && contends(l, g, k) && m != LADDER_DOWN && m != LADDER_THROTTLED)
                        return true;
        }
        return false;
}

static void step_back(Ladder *l, size_t j) {
        size_t pg = l->prot[j], best = SIZE_MAX;
        const PolicyCgroup *p = group(l, pg);
        char level[128], h[32], t[32];
        PlanEscalation *e;

        for (size_t g = 0; g < l->snap->n_cgroups; g++)
                if (contends(l, g, j) && !l->stepped[g] && has_ours(l, g) &&
                    !needed_elsewhere(l, g, j) && (best == SIZE_MAX || heavier(l, best, g)))
                        best = g;
        if (best == SIZE_MAX)
                return;
        e = add_step(l, best, pg, next_back(l, best));
        policy_fmt_usec(h, l->now - l->holds[pg].since_usec);
        if (l->holds[pg].mode == LADDER_THROTTLED) {
                size_t a = limiter(l, pg);
                const PolicyCgroup *lim = a == SIZE_MAX ? p : group(l, a);

                if (lim == p)
                        (void) snprintf(
                                e->reason, sizeof e->reason,
                                "throttled %s%% of the time by its own quota for %s: its "
                                "pressure is its limit, not contention",
                                policy_fmt_load(t, (uint64_t) lim->throttled_permyriad * 100), h);
                else
                        (void) snprintf(
                                e->reason, sizeof e->reason,
                                "%s throttled %s%% of the time by its quota for %s: the "
                                "pressure below it is that limit, not contention",
                                lim->path,
                                policy_fmt_load(t, (uint64_t) lim->throttled_permyriad * 100), h);
        } else {
                policy_level_text(p, l->pressure[pg], l->p, POLICY_LEVEL_BELOW, level,
                                  sizeof level);
                (void) snprintf(e->reason, sizeof e->reason,
                                "%s for %s: lightest contender, %s CPUs", level, h,
                                policy_fmt_load(t, group(l, best)->util_permyriad));
                /* remembered, should P be pressed again soon (escalate_memory) */
                if (l->holds[pg].depth > 0)
                        l->holds[pg].depth--;
                l->holds[pg].back_usec = l->now;
        }
        l->holds[pg].since_usec = l->now;
}

static void release(Ladder *l, size_t g) {
        const PolicyCgroup *cg = group(l, g);
        PlanEscalation *e = add_step(l, g, POLICY_NO_CGROUP, next_back(l, g));
        const char *why = !escalating(l->p) ? "escalation is off"
                          : cg->protected   ? "it is protected now"
                          : !l->eligible[g] ? "it holds or is in a protected group"
                                            : "it contends with no protected group";
        char h[32];

        (void) snprintf(e->reason, sizeof e->reason, "%s, for %s: giving back", why,
                        policy_fmt_usec(h, l->now - l->holds[g].since_usec));
        l->holds[g].since_usec = l->now;
}

static void ladder_act(Ladder *l, const size_t *order) {
        if (!l->contends) /* nothing of ours, nothing to step up */
                return;
        for (size_t j = 0; j < l->n_prot; j++) {
                size_t g = l->prot[j];

                if (!held(l, g))
                        continue;
                if (l->holds[g].mode == LADDER_UP)
                        step_up(l, j);
                else
                        step_back(l, j);
        }
        for (size_t i = 0; order && i < l->snap->n_cgroups; i++)
                if (l->holds[order[i]].mode == LADDER_RELEASE && held(l, order[i]) &&
                    !l->stepped[order[i]])
                        release(l, order[i]);
}

/* Each group's mode and hold; contention is computed only when a step may need it. */
static int ladder_modes(Ladder *l, bool any_ours) {
        bool need = any_ours;
        int r;

        for (size_t j = 0; j < l->n_prot; j++) {
                size_t g = l->prot[j];
                LadderMode mode;
                uint32_t busy;

                if (has_ours(l, g))
                        continue; /* released first: see below */
                mode = protected_mode(l, g, &busy);
                hold(l, g, mode);
                l->holds[g].busy_permyriad = busy;
                need = need || (l->holds[g].mode == LADDER_UP && held(l, g));
        }
        if (!need)
                return 0;
        r = ladder_contention(l);
        if (r < 0)
                return r;
        for (size_t g = 0; g < l->snap->n_cgroups; g++)
                if (orphan(l, g))
                        hold(l, g, LADDER_RELEASE);
        return 0;
}

int policy_ladder_plan(const PolicySnapshot *snap, const PolicyParams *p, uint64_t now_usec,
                       const uint32_t *pressure, const LadderHold *old, LadderHold *ret_holds,
                       Plan *plan) {
        _cleanup_(ladder_done) Ladder l = { .snap = snap,
                                            .p = p,
                                            .now = now_usec,
                                            .pressure = pressure,
                                            .old = old,
                                            .holds = ret_holds,
                                            .plan = plan };
        _cleanup_free_ size_t *order = NULL;
        size_t n = snap->n_cgroups;
        bool any_ours = false, any_prot = false;
        int r;

        for (size_t g = 0; g < n; g++) {
                bool remembered = now_usec >= old[g].back_usec &&
                                  now_usec - old[g].back_usec <= p->escalate_memory_usec;

                ret_holds[g] = (LadderHold){ .mode = LADDER_NONE,
                                             .since_usec = now_usec,
                                             .busy_permyriad = old[g].busy_permyriad,
                                             .depth = old[g].depth,
                                             .peak = remembered ? old[g].peak : old[g].depth,
                                             .back_usec = old[g].back_usec };
                any_ours = any_ours || has_ours(&l, g);
                any_prot = any_prot || (escalating(p) && snap->cgroups[g].protected);
        }
        if (!any_ours && !any_prot) /* the common case: nothing to escalate, nothing of ours */
                return 0;
        r = ladder_groups(&l);
        if (r >= 0)
                r = ladder_modes(&l, any_ours);
        if (r < 0)
                return r;
        if (any_ours) {
                order = malloc(n * sizeof *order);
                if (!order)
                        return -ENOMEM;
                for (size_t g = 0; g < n; g++)
                        order[g] = g;
                qsort_r(order, n, sizeof *order, cmp_path, (void *) snap);
        }
        ladder_act(&l, order);
        return 0;
}
