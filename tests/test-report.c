/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

/* report_plan() into a string. */
static char *plan_text(const Plan *p, const PolicySnapshot *snap) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        cr_assert_not_null(f);
        report_plan(f, p, snap);
        cr_assert_eq(fclose(f), 0);
        return out;
}

static Plan *one_move_one_weight(void) {
        Plan *p = calloc(1, sizeof *p);

        cr_assert_not_null(p);
        p->moves = calloc(1, sizeof *p->moves);
        p->weights = calloc(1, sizeof *p->weights);
        cr_assert(p->moves && p->weights);
        p->moves[0] = (PlanMove){
                .pid = 7, .starttime_ticks = 700, .from_node = 1, .to_node = 0, .reason = "why"
        };
        cr_assert_eq(cpumask_parse("0-3", 8, &p->moves[0].mask, NULL), 0);
        p->n_moves = 1;
        p->weights[0] = (PlanWeight){ .cgroup = 0, .from = 100, .to = 150, .reason = "because" };
        p->n_weights = 1;
        return p;
}

Test(report, plan_names_tasks_and_groups_from_the_snapshot) {
        _cleanup_plan_ Plan *p = one_move_one_weight();
        const PolicyTask task = { .pid = 7, .starttime_ticks = 700, .comm = "worker" };
        const PolicyCgroup group = { .path = "cgbalance.slice/a" };
        const PolicySnapshot snap = {
                .tasks = &task, .n_tasks = 1, .cgroups = &group, .n_cgroups = 1
        };
        _cleanup_free_ char *out = plan_text(p, &snap);

        cr_expect_str_eq(out, "move pid 7 (worker) node 1 -> 0 mask 0-3: why\n"
                              "weight cgbalance.slice/a 100 -> 150: because\n");
}

Test(report, plan_without_its_snapshot_says_unknown) {
        _cleanup_plan_ Plan *p = one_move_one_weight();
        /* pid 7 with another start time: a recycled pid, not the task planned */
        const PolicyTask task = { .pid = 7, .starttime_ticks = 701, .comm = "other" };
        const PolicySnapshot snap = { .tasks = &task, .n_tasks = 1 };
        _cleanup_free_ char *none = plan_text(p, NULL), *recycled = plan_text(p, &snap);

        cr_expect_str_eq(none, "move pid 7 (?) node 1 -> 0 mask 0-3: why\n"
                               "weight ? 100 -> 150: because\n");
        cr_expect_str_eq(recycled, none);
}

Test(report, no_plan_writes_nothing) {
        _cleanup_free_ char *out = plan_text(NULL, NULL);

        cr_expect_str_eq(out, "");
}
