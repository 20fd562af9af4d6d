/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen placement: the pure report (local share, counts per node, the table) and real runs on
 * this machine (one node here: nothing may move, every memory task's pages are on its node; the
 * emulated multi-node guests of bench/compare-placement show moves).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "placement.h"
#include "runbin.h"
#include "testutil.h"

#define LOADGEN BUILD_DIR "/loadgen"

/* ---- pure */

Test(placement_unit, local_share_is_the_pages_on_the_last_node) {
        PlacementTask t = { .mem = true, .end_node = 1, .end_kib = 300, .total_kib = 400 };

        cr_expect_float_eq(placement_local_pct(&t), 75.0, 1e-9);
        t.total_kib = 0;
        cr_expect_float_eq(placement_local_pct(&t), -1.0, 1e-9, "no memory: no share");
}

Test(placement_unit, counts_per_node_in_node_order_and_unknown_nodes_left_out) {
        PlacementTask t[5] = { { .end_node = 2 },
                               { .end_node = 0 },
                               { .end_node = 2 },
                               { .end_node = -1 },
                               { .end_node = 5 } };
        const int ids[] = { 0, 2, 5 };
        char buf[64], tiny[4];

        placement_format_counts(buf, sizeof buf, t, ELEMENTSOF(t), ids, ELEMENTSOF(ids));
        cr_expect_str_eq(buf, "1/2/1");
        placement_format_counts(tiny, sizeof tiny, t, ELEMENTSOF(t), ids, ELEMENTSOF(ids));
        cr_expect_eq(strlen(tiny), 3, "cut, never overrun: %s", tiny);
}

Test(placement_unit, table_sums_moves_distance_wait_and_the_least_local_share) {
        PlacementTask t[3] = {
                { .start_node = 0, .end_node = 1, .moves = 1, .distance = 12, .wait_usec = 500000 },
                { .mem = true,
                  .start_node = 0,
                  .end_node = 0,
                  .wait_usec = 250000,
                  .end_kib = 1024 * 99,
                  .total_kib = 1024 * 100 },
                { .mem = true,
                  .start_node = 0,
                  .end_node = 1,
                  .moves = 2,
                  .distance = 24,
                  .end_kib = 1024 * 50,
                  .total_kib = 1024 * 100 },
        };
        const int ids[] = { 0, 1 };
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        cr_assert_not_null(f);
        placement_format_table(f, t, ELEMENTSOF(t), ids, ELEMENTSOF(ids));
        cr_assert_eq(fclose(f), 0);
        cr_expect(strstr(out,
                         "\n0     cpu          0     0    1      1        12     0.50       -\n"),
                  "%s", out);
        cr_expect(strstr(out,
                         "\n2     mem        100     0    1      2        24     0.00    50.0\n"),
                  "%s", out);
        cr_expect(strstr(out,
                         "Total: tasks per node at the end 1/2, 3 cross-node moves, distance 36, "
                         "0.75 task-seconds waiting, memory local 50.0% (mean 74.5%)\n"),
                  "%s", out);
}

/* ---- runs */

static Run run_clean(const char *const argv[], int code) {
        Dirs d = test_dirs();
        Run r = bin_run(argv);

        cr_assert(exited_with(r.status, code), "status %d, stderr: %s", r.status, r.err);
        expect_clean(&r, &d);
        test_dirs_done(&d);
        return r;
}

/* Two CPU tasks and one holding 8 MiB, pinned (no --release) for 0.3 s: on one node nothing moves
 * and every page of the memory task is on its node; on more, the node they start on keeps them
 * (no balancer here, and the pins stay). The JSON says the same as the table. */
Test(placement, a_pinned_run_moves_nothing_and_keeps_memory_local, .timeout = 60) {
        _cleanup_free_ char *tmp = make_tmpdir(), *path = NULL, *opt = NULL, *json = NULL;
        Run r;

        skip_unless_root();
        cr_assert_gt(asprintf(&path, "%s/p.json", tmp), 0);
        cr_assert_gt(asprintf(&opt, "--json=%s", path), 0);
        r = run_clean((const char *const[]){ LOADGEN, "placement", "-n", "2", "-M", "1", "-s", "8M",
                                             "-d", "0.3", opt, NULL },
                      0);
        cr_log_info("%s", r.out);
        cr_expect(strstr(r.out, "# 3 tasks (1 holding 8 MiB) started on node "), "%s", r.out);
        cr_expect(strstr(r.out, ", 0 cross-node moves, distance 0, "), "%s", r.out);
        cr_expect(strstr(r.out, "memory local 100.0% (mean 100.0%)"), "%s", r.out);
        cr_expect(strstr(r.err, "the tasks are ready"), "%s", r.err);
        json = read_all(path);
        cr_expect(strstr(json, "\"benchmark\": \"placement\""), "%s", json);
        cr_expect(strstr(json, "\"kind\": \"mem\""), "%s", json);
        cr_expect(strstr(json, "\"moves\": 0"), "%s", json);
        cr_expect_null(strstr(json, "\"moves\": 1"), "%s", json);
        bin_run_done(&r);
}

/* Released, the tasks may run on every CPU of the run: their waits stay in the report, the run
 * ends clean. */
Test(placement, a_released_run_reports_every_task, .timeout = 60) {
        Run r;
        unsigned rows = 0;

        skip_unless_root();
        r = run_clean(
                (const char *const[]){ LOADGEN, "placement", "-n", "3", "-d", "0.3", "-r", NULL },
                0);
        for (const char *p = strstr(r.out, "\n0     cpu"); p; p = strstr(p + 1, "\n"))
                rows += strncmp(p + 1, "Total:", 6) != 0 && p[1] != '\0';
        cr_expect_eq(rows, 3, "%s", r.out);
        cr_expect(strstr(r.out, ", released, "), "%s", r.out);
        bin_run_done(&r);
}

Test(placement, bad_options_exit_2_and_say_why) {
        static const char *const bad[][4] = {
                { "-n", "0", NULL }, /* no task at all */
                { "-n", "65", NULL }, { "-s", "0", NULL },
                { "-s", "2T", NULL }, { "-N", "4095", NULL }, /* a node without CPUs here */
                { "-e", "x", NULL },  { "extra", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                Run r = bin_run(
                        (const char *const[]){ LOADGEN, "placement", bad[i][0], bad[i][1], NULL });

                cr_expect(exited_with(r.status, 2), "%s %s: status %d", bad[i][0],
                          bad[i][1] ? bad[i][1] : "", r.status);
                cr_expect_neq(r.err[0], '\0', "%s said nothing", bad[i][0]);
                bin_run_done(&r);
        }
}
