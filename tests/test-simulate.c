/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen simulate: the task specs, the kernel model's placement (a task stays while its CPU has
 * room, else the least loaded CPU with room on the nearest node; a bound task waits), the work a
 * memory-bound task does away from its memory, cgbalanced's policy in the closed loop (a bound
 * task moved to the node with room, and waiting no more), and the command: its table, its JSON
 * that loadgen plot reads, scenarios mapped where a demand fits and refused where it does not.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "policy.h"
#include "runbin.h"
#include "simulate.h"
#include "testutil.h"
#include "topology.h"
#include "tunables.h"

#define LOADGEN BUILD_DIR "/loadgen"
#define SEC UINT64_C(1000000)

static Topology *two_nodes(void) {
        static const unsigned d[] = { 10, 20, 20, 10 };
        Topology *t = NULL;

        cr_assert_eq(topology_new_from_synthetic("pack:2 numa:1 core:2 pu:1", d, 2, &t), 0);
        return t;
}

static SimTaskSpec spec(const char *text) {
        SimTaskSpec s;
        char why[128] = "";

        cr_assert_eq(sim_parse_tasks(text, &s, why, sizeof why), 0, "%s: %s", text, why);
        return s;
}

Test(spec, parses_patterns_and_options) {
        SimTaskSpec s = spec("3:burst=0.5/2,mem=256,share=0.25,node=1,bind,group=web");

        cr_expect_eq(s.count, 3);
        cr_expect_eq(s.n_phases, 2);
        cr_expect(s.loop);
        cr_expect_eq(s.phases[0].usec, 500000);
        cr_expect_eq(s.phases[1].usec, 1500000);
        cr_expect_eq(s.mem_kib, 256 * 1024);
        cr_expect_float_eq(s.mem_share, 0.25, 1e-9);
        cr_expect_eq(s.node, 1);
        cr_expect(s.bind);
        cr_expect_str_eq(s.group, "web");
        s = spec("10:random=0.1");
        cr_expect_float_eq(s.random, 0.1, 1e-9);
        cr_expect_eq(s.node, -1);
}

Test(spec, refuses_what_it_cannot_read_saying_why) {
        static const struct {
                const char *text, *why;
        } cases[] = {
                { "busy", "\"busy\": want COUNT:PATTERN[,KEY=VALUE...]" },
                { "0:busy", "\"0\": the count is 1..10000000" },
                { "2:lazy", "\"lazy\": the pattern is busy, duty=F, burst=ON/PERIOD or random=P" },
                { "2:duty=1.5", "\"duty=1.5\": duty wants a share 0..1" },
                { "2:burst=3/2", "\"burst=3/2\": burst wants ON/PERIOD seconds, ON <= PERIOD" },
                { "2:busy,colour=red",
                  "\"colour=red\": want mem=MIB, share=0..1, node=N, spread, bind or group=NAME" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                SimTaskSpec s;
                char why[160] = "";

                cr_expect_eq(sim_parse_tasks(cases[i].text, &s, why, sizeof why), -EINVAL, "%s",
                             cases[i].text);
                cr_expect_str_eq(why, cases[i].why);
        }
}

/* n ticks of the kernel model alone; returns its totals. */
static SimTotals run_kernel(const Topology *t, const SimTaskSpec *specs, size_t n, unsigned ticks,
                            Sim **keep) {
        _cleanup_sim_ Sim *s = NULL;
        const PolicySnapshot *snap;
        SimTotals tot;

        cr_assert_eq(sim_new(t, specs, n, 1, SEC, &s), 0);
        for (unsigned k = 1; k <= ticks; k++)
                cr_assert_eq(sim_step(s, k * SEC, &snap, NULL), 0);
        tot = *sim_totals(s);
        if (keep)
                *keep = TAKE_PTR(s);
        return tot;
}

Test(kernel, three_busy_tasks_spread_idle_cpu_first_and_none_waits) {
        _cleanup_topology_ Topology *t = two_nodes();
        SimTaskSpec s = spec("3:busy,node=0,share=0");
        _cleanup_sim_ Sim *sim = NULL;
        SimTotals tot = run_kernel(t, &s, 1, 5, &sim);

        cr_expect_float_eq(tot.served, tot.demand, 1e-9, "waited %g of %g", tot.demand - tot.served,
                           tot.demand);
        /* two stay on node 0's CPUs 0-1, the third goes to node 1 */
        cr_expect_lt(sim_task_cpu(sim, 0), 2);
        cr_expect_lt(sim_task_cpu(sim, 1), 2);
        cr_expect_geq(sim_task_cpu(sim, 2), 2);
        cr_expect_eq(tot.migrations, 1, "the third moved once, then stayed");
}

Test(kernel, a_bound_task_waits_where_it_is_bound) {
        _cleanup_topology_ Topology *t = two_nodes();
        SimTaskSpec s = spec("3:busy,node=0,bind");
        SimTotals tot = run_kernel(t, &s, 1, 4, NULL);

        /* 3 tasks on 2 CPUs: a third of the demand waits */
        cr_expect_float_eq(tot.served / tot.demand, 2.0 / 3.0, 1e-9);
        cr_expect_eq(tot.migrations, 0);
}

Test(kernel, memory_away_from_home_slows_its_memory_bound_share) {
        _cleanup_topology_ Topology *t = two_nodes();
        SimTaskSpec s = spec("3:busy,node=0,share=0.5");
        SimTotals tot = run_kernel(t, &s, 1, 10, NULL);

        /* two at home (work 1 each), one at distance 20: 1 / (0.5 + 0.5 * 2) = 2/3 */
        cr_expect_float_eq(tot.work / tot.demand, (2.0 + 2.0 / 3.0) / 3.0, 1e-9);
        cr_expect_float_eq(tot.remote / tot.served, 1.0 / 3.0, 1e-9);
}

Test(kernel, a_burst_wants_its_share_of_each_tick) {
        _cleanup_topology_ Topology *t = two_nodes();
        SimTaskSpec s = spec("1:burst=0.5/2");
        SimTotals tot = run_kernel(t, &s, 1, 8, NULL);

        cr_expect_float_eq(tot.demand, 2.0, 1e-9, "8 s of a task busy a quarter of the time");
}

Test(kernel, a_recordings_demands_are_the_tasks_tick_by_tick) {
        _cleanup_topology_ Topology *t = two_nodes();
        _cleanup_sim_ Sim *sim = NULL;
        SimTaskSpec s[2] = { spec("1:busy,node=0"), spec("1:busy,node=1") };
        const uint16_t demand[] = { 5000, 0, 10000, 2500 }; /* tick 1: 0.5, 0; tick 2: 1, 0.25 */
        const PolicySnapshot *snap;

        cr_assert_eq(sim_new(t, s, 2, 1, SEC, &sim), 0);
        cr_assert_eq(sim_set_trace(sim, demand, 2), 0);
        for (unsigned k = 1; k <= 3; k++)
                cr_assert_eq(sim_step(sim, k * SEC, &snap, NULL), 0);
        cr_expect_float_eq(sim_totals(sim)->demand, 1.75, 1e-9, "none past the recording");
        cr_expect_eq(snap->tasks[0].demand_permyriad, 0);
}

Test(policy, cgbalanced_moves_a_bound_task_to_the_node_with_room) {
        _cleanup_topology_ Topology *t = two_nodes();
        _cleanup_sim_ Sim *sim = NULL;
        _cleanup_policy_state_ PolicyState *state = policy_state_new(t);
        SimTaskSpec s = spec("3:busy,node=0,bind");
        PolicyParams params;
        Tunables tun;
        double wait_last = 1;

        cr_assert_eq(tunables_defaults(&tun), 0);
        tun.override_foreign_affinity = true;
        cr_assert_eq(policy_params_from_tunables(&tun, t, &params), 0);
        cr_assert_eq(sim_new(t, &s, 1, 1, SEC, &sim), 0);
        for (unsigned k = 1; k <= 10; k++) {
                _cleanup_plan_ Plan *plan = NULL;
                const PolicySnapshot *snap;
                double before = sim_totals(sim)->demand - sim_totals(sim)->served;

                cr_assert_eq(sim_step(sim, k * SEC, &snap, NULL), 0);
                wait_last = sim_totals(sim)->demand - sim_totals(sim)->served - before;
                cr_assert_eq(policy_plan(state, snap, t, &params, k * SEC, false, &plan), 0);
                cr_assert_eq(sim_apply(sim, plan, k * SEC, false), 0);
        }
        cr_expect_eq(sim_totals(sim)->cross_moves, 1, "one move, no more");
        cr_expect_float_eq(wait_last, 0.0, 1e-9, "still waiting after the move");
        cr_expect_eq(sim_task_home(sim, 2), 0, "without migrate_memory its memory stays");
        tunables_free(&tun);
}

Test(command, prints_a_row_per_balancer_and_its_json_draws, .timeout = 60) {
        _cleanup_free_ char *dir = make_tmpdir(), *json = NULL, *prefix = NULL, *png = NULL;
        _cleanup_free_ char *jsonarg = NULL;
        Run r;

        cr_assert_gt(asprintf(&json, "%s/sim.json", dir), 0);
        cr_assert_gt(asprintf(&jsonarg, "--json=%s", json), 0);
        cr_assert_gt(asprintf(&prefix, "%s/sim", dir), 0);
        r = bin_run((const char *const[]){ LOADGEN, "simulate", "--machine", "numaq", "--ticks",
                                           "20", NULL });
        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect(strstr(r.out, "numaq          4    16"), "%s", r.out);
        cr_expect(strstr(r.out, " kernel "), "%s", r.out);
        cr_expect(strstr(r.out, " cgbalanced "), "%s", r.out);
        bin_run_done(&r);

        r = bin_run((const char *const[]){ LOADGEN, "simulate", "--machine", "numaq", "--ticks",
                                           "20", jsonarg, NULL });
        cr_expect(exited_with(r.status, 0), "%s", r.err);
        bin_run_done(&r);
        {
                _cleanup_free_ char *text = read_all(json);

                cr_expect(strstr(text, "\"suite\": \"simulate\""), "%s", text);
                cr_expect(strstr(text, "\"work_pct\""), "%s", text);
                cr_expect(strstr(text, "\"name\": \"cgbalanced on numaq\""), "%s", text);
        }
        if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
                r = bin_run((const char *const[]){ LOADGEN, "plot", json, "--out", prefix, NULL });
                cr_expect(exited_with(r.status, 0), "%s", r.err);
                bin_run_done(&r);
                cr_assert_gt(asprintf(&png, "%s-timeline-cgbalanced_on_numaq.png", prefix), 0);
                cr_expect_eq(access(png, F_OK), 0, "no %s", png);
        } else
                cr_log_info("gnuplot is not installed: the plot of the JSON is not checked");
        rm_rf(dir);
}

Test(command, a_scenario_maps_its_phases_or_says_which_it_cannot, .timeout = 60) {
        _cleanup_free_ char *ok = NULL, *dir = make_tmpdir(), *bad = NULL;
        Run r;

        cr_assert_gt(asprintf(&ok, "%s/conf/scenarios/pressure.conf", SOURCE_DIR), 0);
        r = bin_run((const char *const[]){ LOADGEN, "simulate", "--machine", "snc", "--scenario",
                                           ok, "--ticks", "30", NULL });
        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect(strstr(r.out, "snc            4    64       6"), "%s", r.out);
        bin_run_done(&r);

        cr_assert_gt(asprintf(&bad, "%s/ping.conf", dir), 0);
        {
                FILE *f = fopen(bad, "we");

                cr_assert(f);
                fputs("[scenario]\nname = ping\nduration = 5s\n[group g]\n[task a]\ngroup = g\n"
                      "phase = pingpong b for 5s\n[task b]\ngroup = g\nphase = pingpong a for 5s\n",
                      f);
                fclose(f);
        }
        r = bin_run((const char *const[]){ LOADGEN, "simulate", "--machine", "numaq", "--scenario",
                                           bad, NULL });
        cr_expect(exited_with(r.status, 1));
        cr_expect(strstr(r.err, "ping.conf:7: a pingpong phase has no demand model"), "%s", r.err);
        bin_run_done(&r);
        rm_rf(dir);
}

Test(command, a_recording_brings_its_machine_tasks_and_demands, .timeout = 60) {
        _cleanup_free_ char *rec = NULL;
        Run r;

        cr_assert_gt(asprintf(&rec, "%s/doc/pressure.rec", SOURCE_DIR), 0);
        r = bin_run((const char *const[]){ LOADGEN, "simulate", "--recording", rec, NULL });
        cr_expect(exited_with(r.status, 0), "%s", r.err);
        cr_expect(strstr(r.out, "75 ticks of 0.501 s"), "%s", r.out);
        cr_expect(strstr(r.out, "recorded       1     2       6 kernel"), "%s", r.out);
        bin_run_done(&r);
        r = bin_run((const char *const[]){ LOADGEN, "simulate", "--recording", rec, "--machine",
                                           "numaq", NULL });
        cr_expect(exited_with(r.status, 2));
        cr_expect(strstr(r.err, "--recording brings its machine and tasks"), "%s", r.err);
        bin_run_done(&r);
}

Test(command, usage_errors_exit_2_naming_the_option) {
        static const struct {
                const char *arg, *why;
        } cases[] = {
                { "--machine=cray", "--machine=cray: no such machine" },
                { "--ticks=0", "--ticks=0: want a number 1..1000000" },
                { "--tasks=oops", "--tasks=oops: \"oops\": want COUNT:PATTERN" },
                { "--distances=10", "--distances goes with --synthetic" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Run r = bin_run((const char *const[]){ LOADGEN, "simulate", cases[i].arg, NULL });

                cr_expect(exited_with(r.status, 2), "%s", cases[i].arg);
                cr_expect(strstr(r.err, cases[i].why), "%s: %s", cases[i].arg, r.err);
                bin_run_done(&r);
        }
}
