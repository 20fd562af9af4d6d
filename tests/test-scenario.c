/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loadgen's scenario files (loadgen/scenario.c): a valid file's groups, tasks and phases come out
 * as written; every class of error is refused before anything starts, naming the file and line;
 * each phase form parses and its bad forms say why. The machine is an hwloc synthetic one of two
 * nodes of two CPUs, so the checks against CPUs and nodes are the same on every host.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "scenario.h"
#include "testutil.h"

#define MACHINE "pack:2 numa:1 core:2 pu:1" /* nodes 0 and 1, CPUs 0-1 and 2-3 */

static Topology *machine(void) {
        Topology *t = NULL;

        cr_assert_eq(topology_new_from_synthetic(MACHINE, NULL, 0, &t), 0);
        return t;
}

static const char valid[] = "; two busy tasks on node 0 and a pair passing a token\n"
                            "[scenario]\n"
                            "name = sample\n"
                            "description = What it shows.\n"
                            "duration = 5s\n"
                            "mem = 64M\n"
                            "\n"
                            "[group busy]\n"
                            "weight = 200\n"
                            "protected = yes\n"
                            "\n"
                            "[group pair]\n"
                            "\n"
                            "[task spinner]\n"
                            "group = busy\n"
                            "instances = 2\n"
                            "spread = cpus\n"
                            "node = 0\n"
                            "phase = run 200ms duty 50%\n"
                            "phase = sleep 50ms\n"
                            "loop = yes\n"
                            "\n"
                            "[task ping]\n"
                            "group = pair\n"
                            "cpus = 1\n"
                            "pinned = yes\n"
                            "phase = pingpong pong 1000 rounds\n"
                            "\n"
                            "[task pong]\n"
                            "group = pair\n"
                            "phase = pingpong ping for 1s\n"
                            "phase = memwalk 16M 2 passes\n"
                            "phase = write 8M\n"
                            "phase = read 8M for 2s\n"
                            "phase = periodic 1ms every 10ms for 1s\n"
                            "phase = load process_load for 2s\n";

Test(scenario, a_valid_file_comes_out_as_written) {
        Topology *t = machine();
        Scenario *s = NULL;
        ConfigError e = { 0 };
        const Phase *p;

        cr_assert_eq(scenario_load_string("s.conf", valid, t, &s, &e), 0, "%s", e.message);
        cr_expect_str_eq(s->f.name, "sample");
        cr_expect_eq(s->f.duration_usec, 5000000);
        cr_expect_eq(s->mem_bytes, UINT64_C(64) << 20);
        cr_assert_eq(scenario_n_groups(s), 2);
        cr_expect_str_eq(scenario_group_name(s, 0), "busy");
        cr_expect_eq(scenario_group(s, 0)->weight, 200);
        cr_expect(scenario_group(s, 0)->protected_);
        cr_expect_eq(scenario_group(s, 1)->weight, 100);
        cr_assert_eq(scenario_n_tasks(s), 3);
        cr_expect_str_eq(scenario_task_name(s, 0), "spinner");
        cr_expect_eq(scenario_task(s, 0)->instances, 2);
        cr_expect_eq(scenario_task(s, 0)->node, 0);
        cr_expect_eq(scenario_task(s, 0)->spread, SPREAD_CPUS);
        cr_expect_eq(scenario_task(s, 1)->spread, SPREAD_NO);
        cr_expect(scenario_task(s, 0)->loop);
        cr_expect(cpumask_isset(scenario_task(s, 1)->cpus, 1));
        cr_expect_eq(scenario_task(s, 1)->node, -1);
        cr_expect(scenario_task(s, 1)->pinned);
        cr_expect(!scenario_task(s, 0)->pinned);

        cr_assert_eq(s->n_phases[0], 2);
        p = &s->phases[0][0];
        cr_expect_eq(p->type, PHASE_RUN);
        cr_expect_eq(p->duration_usec, 200000);
        cr_expect_eq(p->duty_pct, 50);
        cr_expect_str_eq(p->file, "s.conf");
        cr_expect_eq(p->line, 19);
        cr_expect_eq(s->phases[0][1].type, PHASE_SLEEP);
        cr_expect_eq(s->phases[0][1].line, 20);
        p = &s->phases[1][0];
        cr_expect_eq(p->type, PHASE_PINGPONG);
        cr_expect_eq(p->peer, 2);
        cr_expect_eq(p->count, 1000);
        cr_assert_eq(s->n_phases[2], 6);
        cr_expect_eq(s->phases[2][0].peer, 1);
        cr_expect_eq(s->phases[2][0].duration_usec, 1000000);
        cr_expect_eq(s->phases[2][1].bytes, UINT64_C(16) << 20);
        cr_expect_eq(s->phases[2][1].count, 2);
        cr_expect_eq(s->phases[2][2].type, PHASE_WRITE);
        cr_expect_eq(s->phases[2][2].duration_usec, 0, "write SIZE is once");
        cr_expect_eq(s->phases[2][3].duration_usec, 2000000);
        cr_expect_eq(s->phases[2][4].run_usec, 1000);
        cr_expect_eq(s->phases[2][4].period_usec, 10000);
        cr_expect_eq(s->phases[2][5].load, load_find("process_load"));
        scenario_free(s);
        topology_free(t);
}

/* valid with the line `from` (a whole line, newline included) replaced by `to`. */
static char *edit(const char *from, const char *to) {
        const char *at = strstr(valid, from);
        char *out;

        cr_assert(at, "no \"%s\" in the sample", from);
        cr_assert_gt(asprintf(&out, "%.*s%s%s", (int) (at - valid), valid, to, at + strlen(from)),
                     0);
        return out;
}

static void expect_error(const char *from, const char *to, const char *want) {
        _cleanup_free_ char *text = edit(from, to);
        Topology *t = machine();
        Scenario *s = NULL;
        ConfigError e = { 0 };
        int r = scenario_load_string("s.conf", text, t, &s, &e);

        cr_expect_lt(r, 0, "accepted with \"%s\" -> \"%s\"", from, to);
        cr_expect_null(s);
        cr_expect(strstr(e.message, want), "\"%s\" -> \"%s\": got \"%s\", want \"%s\"", from, to,
                  e.message, want);
        scenario_free(s);
        topology_free(t);
}

Test(scenario, unknown_sections_and_keys_and_bad_values_name_the_line) {
        expect_error("[group pair]\n", "[grup pair]\n", "s.conf:12: [grup pair]: unknown section");
        expect_error("[group pair]\n", "[groups]\n", "s.conf:12: [groups]: unknown section");
        expect_error("loop = yes\n", "lop = yes\n", "s.conf:21: task spinner: lop: unknown key");
        expect_error("weight = 200\n", "weight = 0\n", "s.conf:9: group busy: weight:");
        expect_error("instances = 2\n", "instances = two\n", "s.conf:16: task spinner: instances:");
        expect_error("duration = 5s\n", "duration = 5 parsecs\n", "s.conf:5: duration:");
        expect_error("mem = 64M\n", "mem = lots\n", "s.conf:6: mem: 'lots' is not a size");
        expect_error("name = sample\n", "\n", "name: missing");
}

Test(scenario, references_to_missing_groups_and_tasks_name_the_line) {
        expect_error("group = busy\n", "group = idle\n",
                     "s.conf:15: task spinner: group: no [group idle] in the scenario");
        expect_error("group = busy\n", "\n", "task spinner: no group");
        expect_error("phase = pingpong pong 1000 rounds\n", "phase = pingpong pang 1000 rounds\n",
                     "s.conf:27: task ping: phase: no [task pang] to ping-pong with");
        expect_error("phase = pingpong ping for 1s\n", "phase = sleep 1s\n",
                     "s.conf:27: task ping: phase: [task pong] has no 'pingpong ping' phase");
        expect_error("phase = pingpong pong 1000 rounds\n", "phase = pingpong ping 1000 rounds\n",
                     "s.conf:27: task ping: phase: a task cannot ping-pong with itself");
        expect_error("[task pong]\ngroup = pair\n", "[task pong]\ngroup = pair\ninstances = 3\n",
                     "s.conf:27: task ping: phase: instances = 1 here, 3 in [task pong]");
}

Test(scenario, placement_beyond_this_machine_and_conflicts_name_the_line) {
        expect_error("cpus = 1\n", "cpus = 7\n",
                     "s.conf:25: task ping: cpus: names CPUs this machine does not have");
        expect_error("node = 0\n", "node = 2\n",
                     "s.conf:18: task spinner: node: this machine has no node 2 (it has 2)");
        expect_error("cpus = 1\n", "cpus = 1\nnode = 1\n",
                     "s.conf:26: task ping: node: give cpus or node, not both");
        expect_error("mem = 64M\n", "cpus = 0-9\n", "s.conf:6: cpus: names CPUs");
        expect_error("spread = cpus\n", "spread = nodes\n",
                     "s.conf:17: task spinner: spread: nodes spreads over every node");
        expect_error("spread = cpus\n", "spread = sockets\n", "s.conf:17: task spinner: spread:");
        expect_error("[task pong]\ngroup = pair\n", "[task pong]\ngroup = pair\npinned = yes\n",
                     "task pong: pinned: pinned to what?");
}

Test(scenario, a_task_without_phases_and_a_scenario_without_tasks_are_refused) {
        expect_error("phase = pingpong pong 1000 rounds\n", "\n", "task ping: no phase");
        {
                Scenario *s = NULL;
                ConfigError e = { 0 };

                cr_expect_lt(scenario_load_string("e.conf", "[scenario]\nname = x\n", NULL, &s, &e),
                             0);
                cr_expect(strstr(e.message, "no [task NAME]"), "%s", e.message);
        }
}

static void expect_phase_error(const char *text, const char *want) {
        Phase p;
        char why[256] = "";

        cr_expect_eq(phase_parse(text, NULL, &p, why, sizeof why), -EINVAL, "\"%s\" accepted",
                     text);
        cr_expect(strstr(why, want), "\"%s\": got \"%s\", want \"%s\"", text, why, want);
}

Test(phase, every_form_parses) {
        Phase p;
        char why[256];

        cr_assert_eq(phase_parse("run 1000 loops", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_eq(p.count, 1000);
        cr_expect_eq(p.duty_pct, 100);
        cr_assert_eq(phase_parse("run 1s duty 25", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_eq(p.duty_pct, 25);
        cr_assert_eq(phase_parse("  sleep\t1min  ", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_eq(p.duration_usec, 60000000);
        cr_assert_eq(phase_parse("memwalk 1G for 3s", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_eq(p.bytes, UINT64_C(1) << 30);
        cr_expect_eq(p.duration_usec, 3000000);
        cr_assert_eq(phase_parse("read 4K", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_eq(p.type, PHASE_READ);
        cr_expect(!phase_needs_tree(&p));
        cr_assert_eq(phase_parse("compile 3 builds", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_eq(p.type, PHASE_COMPILE);
        cr_expect_eq(p.count, 3);
        cr_expect(phase_needs_tree(&p));
        cr_assert_eq(phase_parse("compile for 20s", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_eq(p.duration_usec, 20000000);
        cr_assert_eq(phase_parse("load list_load for 2s", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect(phase_needs_tree(&p));
        cr_assert_eq(phase_parse("bench hackbench --groups 2 --loops 10 for 5s", NULL, &p, why,
                                 sizeof why),
                     0, "%s", why);
        cr_expect_str_eq(p.bench, "hackbench");
        cr_expect_str_eq(p.args, "--groups 2 --loops 10");
        cr_expect_eq(p.duration_usec, 5000000);
        phase_done(&p);
        cr_expect_null(p.args);
        cr_assert_eq(phase_parse("bench pipe 3 runs", NULL, &p, why, sizeof why), 0, "%s", why);
        cr_expect_null(p.args);
        cr_expect_eq(p.count, 3);
        cr_expect_str_eq(phase_type_to_string(PHASE_PERIODIC), "periodic");
        cr_expect_null(phase_type_to_string(_PHASE_TYPE_MAX));
}

Test(phase, bad_forms_say_why) {
        expect_phase_error("", "empty phase");
        expect_phase_error("spin 1s", "unknown phase 'spin'");
        expect_phase_error("run", "want 'run DURATION'");
        expect_phase_error("run 0s", "'0s' is not a duration above 0");
        expect_phase_error("run fast", "'fast' is not a duration");
        expect_phase_error("run 0 loops", "'0' is not a count above 0");
        expect_phase_error("run 1s duty 0%", "duty '0%' is not a percentage");
        expect_phase_error("run 1s duty 101", "duty '101' is not a percentage");
        expect_phase_error("run 1s duty 50%%", "duty '50%%' is not a percentage");
        expect_phase_error("run 1s fast", "unexpected 'fast'");
        expect_phase_error("sleep", "want 'sleep DURATION'");
        expect_phase_error("sleep 1s 2s", "want 'sleep DURATION'");
        expect_phase_error("periodic 1ms every 10ms", "want 'periodic RUN every PERIOD for");
        expect_phase_error("periodic 20ms every 10ms for 1s", "longer than its period");
        expect_phase_error("pingpong", "want 'pingpong TASK");
        expect_phase_error("pingpong b 10 laps", "want 'pingpong ... for DURATION'");
        expect_phase_error("memwalk 1G",
                           "want 'memwalk ... for DURATION' or 'memwalk ... N passes'");
        expect_phase_error("memwalk big for 1s", "'big' is not a size");
        expect_phase_error("write 1M 3 passes", "want 'write ... for DURATION'");
        expect_phase_error("load no_such_load for 1s", "no load 'no_such_load'");
        expect_phase_error("load process_load", "want 'load ... for DURATION'");
        expect_phase_error("load cacherun for 1s", "cacherun is no load");
        expect_phase_error("bench hackbench", "want 'bench NAME [OPTION...] for DURATION'");
        expect_phase_error("bench hackbenc for 1s", "no benchmark 'hackbenc'");
        expect_phase_error("bench hackbench --groups 2 for", "want 'bench ... for DURATION'");
        expect_phase_error("bench hackbench --json for 1s", "--json is the scenario's to set");
        expect_phase_error("bench pipe --cpus=1 2 runs", "--cpus=1 is the scenario's to set");
        expect_phase_error("compile", "want 'compile ... for DURATION' or 'compile ... N builds'");
        expect_phase_error("compile 2 laps", "want 'compile ... for DURATION'");
        expect_phase_error("bench hackbench -g 1 -g 2 -g 3 -g 4 -g 5 -g 6 -g 7 for 1s",
                           "too many words");
}

/* ---- the shipped scenarios */

#define SHIPPED_DIR SOURCE_DIR "/conf/scenarios"

static const char *const shipped[] = {
        "node-imbalance",  "balanced",      "oscillating", "pressure",
        "pinned-by-admin", "mixed-contest", "burst-rings",
};

Test(shipped, every_one_parses_here_and_on_two_nodes_and_says_what_it_shows) {
        Topology *two = machine(), *here = NULL;

        cr_assert_eq(topology_new_from_system(&here), 0);
        for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++) {
                _cleanup_free_ char *path = NULL, *text = NULL;
                Topology *machines[] = { here, two };

                cr_assert_gt(asprintf(&path, "%s/%s.conf", SHIPPED_DIR, shipped[i]), 0);
                text = read_all(path);
                cr_expect_eq(strncmp(text, "; ", 2), 0, "%s starts with no comment", path);
                for (size_t m = 0; m < 2; m++) {
                        Scenario *s = NULL;
                        ConfigError e = { 0 };

                        cr_expect_eq(scenario_load(path, machines[m], &s, &e), 0, "%s", e.message);
                        if (!s)
                                continue;
                        cr_expect_str_eq(s->f.name, shipped[i]);
                        cr_expect_neq(s->f.description[0], '\0', "%s: no description", path);
                        cr_expect_gt(scenario_n_tasks(s), 0);
                        scenario_free(s);
                }
        }
        topology_free(two);
        topology_free(here);
}

Test(shipped, the_directory_holds_exactly_these) {
        DIR *d = opendir(SHIPPED_DIR);
        struct dirent *de;
        size_t n = 0;

        cr_assert(d, "%s: %s", SHIPPED_DIR, strerror(errno));
        while ((de = readdir(d))) {
                bool known = false;

                if (de->d_name[0] == '.')
                        continue;
                for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++) {
                        _cleanup_free_ char *f = NULL;

                        cr_assert_gt(asprintf(&f, "%s.conf", shipped[i]), 0);
                        known = known || strcmp(f, de->d_name) == 0;
                }
                cr_expect(known, "%s is not in this test's list", de->d_name);
                n++;
        }
        closedir(d);
        cr_expect_eq(n, sizeof shipped / sizeof *shipped);
}
