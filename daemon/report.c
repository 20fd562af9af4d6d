/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "report.h"

#include <inttypes.h>

/* "12.34": permyriad as a percentage, or as CPUs when the unit is one CPU's worth. */
#define PM_FMT "%" PRIu32 ".%02" PRIu32
#define PM_ARG(v) (uint32_t)((v) / 100), (uint32_t) ((v) % 100)
#define CPUS_FMT "%" PRIu64 ".%02" PRIu64
#define CPUS_ARG(v) (uint64_t)((v) / 10000), (uint64_t) ((v) % 10000 / 100)

static void report_psi(FILE *f, const char *name, const PsiStats *s) {
        fprintf(f, "  %-6s some avg10 " PM_FMT "%%", name, PM_ARG(s->some.avg10_permyriad));
        if (s->has_full)
                fprintf(f, "  full avg10 " PM_FMT "%%", PM_ARG(s->full.avg10_permyriad));
        fputc('\n', f);
}

static void report_nodes(FILE *f, const PolicySnapshot *snap, const Topology *topo) {
        for (unsigned i = 0; i < topology_n_nodes(topo); i++) {
                unsigned node = (unsigned) topology_node_id(topo, i);
                const CpuMask *cpus = topology_node_cpus(topo, node);
                _cleanup_free_ char *list = NULL;
                uint64_t util = 0;

                CPUMASK_FOREACH(c, cpus)
                        if ((unsigned) c < snap->n_cpus)
                                util += snap->cpus[c].util_permyriad;
                (void) cpumask_format(cpus, &list);
                fprintf(f, "node %u: CPUs %s, capacity %u, busy " CPUS_FMT " CPUs\n", node,
                        list ? list : "?", topology_node_capacity(topo, node), CPUS_ARG(util));
                CPUMASK_FOREACH(c, cpus)
                        if ((unsigned) c < snap->n_cpus)
                                fprintf(f, "  cpu %d: " PM_FMT "%% busy\n", c,
                                        PM_ARG(snap->cpus[c].util_permyriad));
        }
}

static void report_cgroups(FILE *f, const PolicySnapshot *snap) {
        fprintf(f, "managed cgroups: %zu\n", snap->n_cgroups);
        for (size_t i = 0; i < snap->n_cgroups; i++) {
                const PolicyCgroup *g = &snap->cgroups[i];

                fprintf(f, "  %s: weight %" PRIu32 " (base %" PRIu32 "), busy " CPUS_FMT " CPUs",
                        g->path, g->weight, g->base_weight, CPUS_ARG(g->util_permyriad));
                if (g->has_pressure)
                        fprintf(f, ", cpu pressure " PM_FMT "%%", PM_ARG(g->pressure_permyriad));
                fprintf(f, "%s\n", g->protected ? ", protected" : "");
        }
}

static void report_tasks(FILE *f, const PolicySnapshot *snap, const Topology *topo) {
        fprintf(f, "managed tasks: %zu\n", snap->n_tasks);
        for (size_t i = 0; i < snap->n_tasks; i++) {
                const PolicyTask *t = &snap->tasks[i];
                _cleanup_free_ char *mask = NULL;

                if (t->allowed)
                        (void) cpumask_format(t->allowed, &mask);
                fprintf(f,
                        "  pid %d (%s) cpu %d node %d: util " PM_FMT "%%, demand " PM_FMT
                        "%%, allowed %s%s%s, group %s\n",
                        (int) t->pid, t->comm, t->cpu,
                        t->cpu >= 0 ? topology_cpu_node(topo, (unsigned) t->cpu) : -1,
                        PM_ARG(t->util_permyriad), PM_ARG(t->demand_permyriad), mask ? mask : "?",
                        t->ours ? " (ours)" : "", t->foreign ? " (foreign)" : "",
                        t->cgroup < snap->n_cgroups ? snap->cgroups[t->cgroup].path : "-");
        }
}

void report_snapshot(FILE *f, const PolicySnapshot *snap, const SamplerSystem *sys,
                     const Topology *topo, const CgroupLayout *layout) {
        fprintf(f, "machine: %u CPUs, nodes: %u, cgroups %s, interval %" PRIu64 " ms\n",
                topology_n_cpus(topo), topology_n_nodes(topo), cgroup_mode_to_string(layout->mode),
                snap->interval_usec / 1000);
        if (sys->has_psi) {
                fputs("pressure:\n", f);
                report_psi(f, "cpu", &sys->cpu);
                report_psi(f, "io", &sys->io);
                report_psi(f, "memory", &sys->memory);
        } else
                fputs("pressure: not available (no PSI)\n", f);
        report_nodes(f, snap, topo);
        report_cgroups(f, snap);
        report_tasks(f, snap, topo);
}

static const PolicyTask *find_task(const PolicySnapshot *snap, pid_t pid, uint64_t start) {
        for (size_t i = 0; snap && i < snap->n_tasks; i++)
                if (snap->tasks[i].pid == pid && snap->tasks[i].starttime_ticks == start)
                        return &snap->tasks[i];
        return NULL;
}

static const char *group_path(const PolicySnapshot *snap, size_t g) {
        return snap && g < snap->n_cgroups ? snap->cgroups[g].path : "?";
}

/* "none", "0.50 CPUs" for a quota; 0 or 1 for idle. */
static void lever_value(char *buf, size_t size, PolicyLever lever, uint32_t v) {
        if (lever == POLICY_LEVER_QUOTA && v == 0)
                snprintf(buf, size, "none");
        else if (lever == POLICY_LEVER_QUOTA)
                snprintf(buf, size, CPUS_FMT " CPUs", CPUS_ARG((uint64_t) v));
        else
                snprintf(buf, size, "%" PRIu32, v);
}

static void report_escalation(FILE *f, const PlanEscalation *e, const PolicySnapshot *snap) {
        const char *lever = policy_lever_to_string(e->lever);
        char from[32], to[32];

        lever_value(from, sizeof from, e->lever, e->from);
        lever_value(to, sizeof to, e->lever, e->to);
        fprintf(f, "%s %s %s %s -> %s", plan_escalation_is_up(e) ? "escalate" : "step back",
                group_path(snap, e->cgroup), lever ? lever : "?", from, to);
        if (e->for_cgroup != POLICY_NO_CGROUP)
                fprintf(f, " for %s", group_path(snap, e->for_cgroup));
        fprintf(f, ": %s\n", e->reason);
}

void report_plan(FILE *f, const Plan *p, const PolicySnapshot *snap) {
        if (!p)
                return;
        for (size_t i = 0; i < p->n_moves; i++) {
                const PlanMove *m = &p->moves[i];
                const PolicyTask *k = find_task(snap, m->pid, m->starttime_ticks);
                _cleanup_free_ char *mask = NULL;

                (void) cpumask_format(m->mask, &mask);
                fprintf(f, "move pid %d (%s) node %d -> %d mask %s: %s\n", (int) m->pid,
                        k ? k->comm : "?", m->from_node, m->to_node, mask ? mask : "?", m->reason);
        }
        for (size_t i = 0; i < p->n_weights; i++) {
                const PlanWeight *w = &p->weights[i];
                const char *path =
                        snap && w->cgroup < snap->n_cgroups ? snap->cgroups[w->cgroup].path : "?";

                fprintf(f, "weight %s %" PRIu32 " -> %" PRIu32 ": %s\n", path, w->from, w->to,
                        w->reason);
        }
        for (size_t i = 0; i < p->n_escalations; i++)
                report_escalation(f, &p->escalations[i], snap);
}
