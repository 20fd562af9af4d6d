/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "tunables.h"

Test(tunables, schema_is_valid) {
        ConfigError e = { 0 };

        cr_assert_eq(config_check_schema(&tunables_schema, &e), 0, "%s", e.message);
}

Test(tunables, defaults_are_the_documented_ones) {
        Tunables t;

        cr_assert_eq(tunables_defaults(&t), 0);
        cr_expect_eq(t.interval_usec, 1000000);
        cr_expect_not(t.dry_run);
        cr_expect_str_eq(t.state_directory, "/run/cgbalance");
        cr_assert_not_null(t.cgroups[0]);
        cr_expect_str_eq(t.cgroups[0], "cgbalance.slice");
        cr_expect_null(t.cgroups[1]);
        cr_expect_null(t.protected_cgroups[0]);
        cr_expect_eq(t.imbalance_pct, 117);
        cr_expect_eq(t.node_imbalance_pct, 125);
        cr_expect_str_eq(t.node_min_imbalance, "auto");
        cr_expect_eq(t.idle_node_multiplier, 2);
        cr_expect_eq(t.busy_node_multiplier, 10);
        cr_expect_eq(t.migrate_cooldown_usec, 10000000);
        cr_expect_eq(t.max_moves_per_tick, 2);
        cr_expect_eq(t.pressure_target_pct, 10);
        cr_expect_eq(t.weight_max, 1000);
        cr_expect_eq(t.latency_target_usec, 0, "no latency target");
        cr_expect(t.escalate, "a protected group is a promise");
        cr_assert_not_null(t.escalate_steps[2]);
        cr_expect_str_eq(t.escalate_steps[0], "idle");
        cr_expect_str_eq(t.escalate_steps[1], "quota");
        cr_expect_str_eq(t.escalate_steps[2], "partition");
        cr_expect_null(t.escalate_steps[3]);
        cr_expect_eq(t.escalate_hold_usec, 3000000);
        cr_expect_eq(t.quota_floor_pct, 10);
        cr_expect_eq(t.partition_max_cpus, 1);
        tunables_free(&t);
}

/* conf/cgbalance.conf is generated from the table; this keeps the two from drifting apart. */
Test(tunables, shipped_conf_is_the_generated_one) {
        char *generated = NULL, *shipped = NULL;
        size_t glen = 0, slen = 0;
        FILE *g = open_memstream(&generated, &glen);
        _cleanup_free_ char *path = NULL;
        FILE *s;

        cr_assert_not_null(g);
        cr_assert_eq(tunables_write_default_file(g), 0);
        fclose(g);
        cr_assert_gt(asprintf(&path, "%s/../../conf/cgbalance.conf", FIXTURES_DIR), 0);
        s = fopen(path, "re");
        cr_assert_not_null(s, "%s missing", path);
        cr_assert_eq(getdelim(&shipped, &slen, '\0', s) >= 0, true);
        fclose(s);
        cr_expect_str_eq(shipped, generated,
                         "conf/cgbalance.conf is stale: regenerate it with "
                         "build/cgbalanced --print-defaults > conf/cgbalance.conf");
        free(generated);
        free(shipped);
}

Test(tunables, shipped_conf_parses_to_the_defaults) {
        _cleanup_free_ char *path = NULL;
        ConfigError e = { 0 };
        Tunables t;

        cr_assert_gt(asprintf(&path, "%s/../../conf/cgbalance.conf", FIXTURES_DIR), 0);
        cr_assert_eq(tunables_load(path, false, &t, &e), 0, "%s", e.message);
        cr_expect_eq(t.node_imbalance_pct, 125);
        tunables_free(&t);
}

/* The configurations shipped for loadgen compare: each loads as the daemon would load it, and
 * protects a group of loadgen's sandbox (cgbalance.slice/loadgen-PID/...). */
Test(tunables, shipped_compare_configs_load) {
        _cleanup_free_ char *pattern = NULL;
        glob_t g = { 0 };

        cr_assert_gt(asprintf(&pattern, "%s/../../conf/compare/*.conf", FIXTURES_DIR), 0);
        cr_assert_eq(glob(pattern, 0, NULL, &g), 0, "no %s", pattern);
        cr_expect_geq(g.gl_pathc, 4);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                ConfigError e = { 0 };
                Tunables t;

                cr_assert_eq(tunables_load(g.gl_pathv[i], false, &t, &e), 0, "%s", e.message);
                cr_assert_not_null(t.protected_cgroups[0], "%s protects nothing", g.gl_pathv[i]);
                cr_expect_eq(strncmp(t.protected_cgroups[0], "cgbalance.slice/loadgen-*/", 26), 0,
                             "%s: %s", g.gl_pathv[i], t.protected_cgroups[0]);
                tunables_free(&t);
        }
        globfree(&g);
}

static int load_text(const char *text, Tunables *t, ConfigError *e) {
        return config_load_string(&tunables_schema, "test.conf", text, strlen(text), t, e);
}

Test(tunables, bad_values_name_file_line_and_key) {
        static const struct {
                const char *text, *message;
        } cases[] = {
                { "[balance]\nnode_imbalance_pct = 99\n",
                  "test.conf:2: node_imbalance_pct: value 99 out of range 101..1000" },
                { "[daemon]\ninterval = 10ms\n", "test.conf:2: interval:" },
                { "[balance]\nnode_min_imbalance = lots\n", "test.conf:2: node_min_imbalance:" },
                { "[weights]\nweight_min = 500\nweight_max = 200\n", "test.conf:2: weight_min:" },
                { "[balance]\nnode_imbalance = 5\n", "test.conf:2: node_imbalance:" },
                { "[daemon]\ndry_run = perhaps\n", "test.conf:2: dry_run:" },
                { "[escalation]\n\nescalate_steps = idle cpuset\n",
                  "test.conf:3: escalate_steps: \"cpuset\" is not a step: idle, quota or "
                  "partition" },
                { "[escalation]\nescalate_steps = idle,quota\n", "test.conf:2: escalate_steps:" },
                { "[escalation]\nquota_floor = 0\n", "test.conf:2: quota_floor:" },
                { "[escalation]\nescalate = maybe\n", "test.conf:2: escalate:" },
                { "[escalation]\nescalate_hold = 2h\n", "test.conf:2: escalate_hold:" },
                { "[weights]\nlatency_target = 2s\n", "test.conf:2: latency_target:" },
                { "[escalation]\npartition_max_cpus = -1\n", "test.conf:2: partition_max_cpus:" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ConfigError e = { 0 };
                Tunables t;

                cr_expect_lt(load_text(cases[i].text, &t, &e), 0, "accepted: %s", cases[i].text);
                cr_expect(strncmp(e.message, cases[i].message, strlen(cases[i].message)) == 0,
                          "got \"%s\", wanted \"%s...\"", e.message, cases[i].message);
        }
}

Test(tunables, min_imbalance_auto_is_cpus_per_node_or_zero_for_smt_nodes) {
        Tunables t;
        ConfigError e = { 0 };

        cr_assert_eq(tunables_defaults(&t), 0);
        cr_expect_eq(tunables_node_min_imbalance(&t, 4, 1), 4);
        cr_expect_eq(tunables_node_min_imbalance(&t, 2, 2), 0);
        cr_assert_eq(config_set_one(&tunables_schema, &t, "node_min_imbalance", "3", &e), 0, "%s",
                     e.message);
        cr_expect_eq(tunables_node_min_imbalance(&t, 4, 1), 3);
        cr_expect_eq(tunables_node_min_imbalance(&t, 2, 2), 3);
        tunables_free(&t);
}

Test(tunables, cgroup_globs_match_the_group_and_below) {
        char *globs[] = { (char *) "cgbalance.slice", (char *) "work/*.scope", NULL };

        cr_expect(tunables_cgroup_matches(globs, "cgbalance.slice"));
        cr_expect(tunables_cgroup_matches(globs, "cgbalance.slice/run-1/job"));
        cr_expect(tunables_cgroup_matches(globs, "work/a.scope"));
        cr_expect(tunables_cgroup_matches(globs, "work/a.scope/sub"));
        cr_expect_not(tunables_cgroup_matches(globs, "cgbalance.slicey"));
        cr_expect_not(tunables_cgroup_matches(globs, "other/cgbalance.slice"));
        cr_expect_not(tunables_cgroup_matches(globs, "work/a.service"));
        cr_expect_not(tunables_cgroup_matches(globs, ""));
        cr_expect_not(tunables_cgroup_matches(NULL, "cgbalance.slice"));
}

/* Every key of the table is documented in cgbalance.conf(5) with its default, and the page
 * documents no key the table lacks. */
Test(tunables, man_page_documents_every_key_with_its_default) {
        _cleanup_free_ char *path = NULL, *page = NULL;
        size_t len = 0, documented = 0;
        FILE *f;

        cr_assert_gt(asprintf(&path, "%s/../../man/cgbalance.conf.5", FIXTURES_DIR), 0);
        f = fopen(path, "re");
        cr_assert_not_null(f, "%s missing", path);
        cr_assert(getdelim(&page, &len, '\0', f) >= 0);
        fclose(f);

        for (size_t i = 0; i < tunables_schema.n_keys; i++) {
                const ConfigKey *k = &tunables_schema.keys[i];
                _cleanup_free_ char *entry = NULL;

                cr_assert_gt(asprintf(&entry, ".BR %s \" = \" \"%s\"\n", k->name, k->default_value),
                             0);
                cr_expect_not_null(strstr(page, entry), "cgbalance.conf(5) lacks %s", entry);
        }
        for (char *line = strtok(page, "\n"); line; line = strtok(NULL, "\n"))
                if (strncmp(line, ".BR ", 4) == 0 && strstr(line, "\" = \""))
                        documented++;
        cr_expect_eq(documented, tunables_schema.n_keys,
                     "cgbalance.conf(5) documents %zu keys, the table has %zu", documented,
                     tunables_schema.n_keys);
}

/* ---- the policy's numbers */

static Topology *synthetic(const char *description) {
        Topology *topo = NULL;

        cr_assert_eq(topology_new_from_synthetic(description, NULL, 0, &topo), 0, "%s",
                     description);
        return topo;
}

/* What the defaults give on a synthetic machine. */
static void default_params(const char *description, PolicyParams *ret) {
        _cleanup_topology_ Topology *topo = synthetic(description);
        _cleanup_(tunables_free) Tunables t = {};

        cr_assert_eq(tunables_defaults(&t), 0);
        cr_assert_eq(policy_params_from_tunables(&t, topo, ret), 0);
}

Test(tunables, policy_params_carry_the_defaults) {
        PolicyParams p;

        default_params("pack:4 numa:1 core:4 pu:1", &p);
        cr_expect_not(p.use_isolated_cpus);
        cr_expect_not(p.override_foreign_affinity);
        cr_expect_eq(p.min_task_load_pct, 10);
        cr_expect_eq(p.migrate_cooldown_usec, 10000000);
        cr_expect_eq(p.max_moves_per_tick, 2);
        cr_expect_eq(p.imbalance_pct, 117);
        cr_expect_eq(p.node_imbalance_pct, 125);
        cr_expect_eq(p.node_imbalance_hold_usec, 2000000);
        cr_expect_eq(p.idle_node_multiplier, 2);
        cr_expect_eq(p.busy_node_multiplier, 10);
        cr_expect_eq(p.pressure_target_pct, 10);
        cr_expect_eq(p.pressure_hold_usec, 3000000);
        cr_expect_eq(p.weight_step, 50);
        cr_expect_eq(p.weight_min, 100);
        cr_expect_eq(p.weight_max, 1000);
        cr_expect_not(p.escalate_lever[POLICY_LEVER_NONE]);
        cr_expect(p.escalate_lever[POLICY_LEVER_IDLE]);
        cr_expect(p.escalate_lever[POLICY_LEVER_QUOTA]);
        cr_expect(p.escalate_lever[POLICY_LEVER_PARTITION]);
        cr_expect_eq(p.escalate_hold_usec, 3000000);
        cr_expect_eq(p.quota_floor_pct, 10);
        cr_expect_eq(p.partition_max_cpus, 1);
        cr_expect_eq(p.latency_target_usec, 0);
        cr_expect_eq(p.n_nodes, 4);
        for (unsigned i = 0; i < 4; i++)
                cr_expect_eq(p.node_min_imbalance[i], 4, "auto on node %u: its 4 CPUs", i);
}

Test(tunables, policy_params_follow_a_set_key) {
        _cleanup_topology_ Topology *topo = synthetic("pack:2 numa:1 core:2 pu:1");
        _cleanup_(tunables_free) Tunables t = {};
        ConfigError e = { 0 };
        PolicyParams p;

        cr_assert_eq(tunables_defaults(&t), 0);
        cr_assert_eq(config_set_one(&tunables_schema, &t, "max_moves_per_tick", "7", &e), 0, "%s",
                     e.message);
        cr_assert_eq(config_set_one(&tunables_schema, &t, "node_min_imbalance", "3", &e), 0, "%s",
                     e.message);
        cr_assert_eq(policy_params_from_tunables(&t, topo, &p), 0);
        cr_expect_eq(p.max_moves_per_tick, 7);
        cr_expect_eq(p.n_nodes, 2);
        cr_expect_eq(p.node_min_imbalance[0], 3, "a number is taken as it is");
        cr_expect_eq(p.node_min_imbalance[1], 3);
}

/* The escalation keys, from a file as a reload reads them. */
Test(tunables, policy_params_follow_the_escalation_keys) {
        static const struct {
                const char *text;
                bool idle, quota, partition;
        } cases[] = {
                { "[escalation]\nescalate = no\n", false, false, false },
                { "[escalation]\nescalate_steps = quota\n", false, true, false },
                { "[escalation]\nescalate_steps = partition idle\n", true, false, true },
                { "[escalation]\nescalate_steps =\n", false, false, false },
        };
        _cleanup_topology_ Topology *topo = synthetic("pack:2 numa:1 core:2 pu:1");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(tunables_free) Tunables t = {};
                ConfigError e = { 0 };
                PolicyParams p;

                cr_assert_eq(load_text(cases[i].text, &t, &e), 0, "%s", e.message);
                cr_assert_eq(policy_params_from_tunables(&t, topo, &p), 0);
                cr_expect_eq(p.escalate_lever[POLICY_LEVER_IDLE], cases[i].idle, "%s",
                             cases[i].text);
                cr_expect_eq(p.escalate_lever[POLICY_LEVER_QUOTA], cases[i].quota, "%s",
                             cases[i].text);
                cr_expect_eq(p.escalate_lever[POLICY_LEVER_PARTITION], cases[i].partition, "%s",
                             cases[i].text);
        }
}

Test(tunables, policy_params_carry_the_escalation_numbers) {
        _cleanup_topology_ Topology *topo = synthetic("pack:2 numa:1 core:2 pu:1");
        _cleanup_(tunables_free) Tunables t = {};
        ConfigError e = { 0 };
        PolicyParams p;

        cr_assert_eq(load_text("[weights]\nlatency_target = 2ms\n[escalation]\n"
                               "escalate_hold = 500ms\nquota_floor = 25%\npartition_max_cpus = 2\n",
                               &t, &e),
                     0, "%s", e.message);
        cr_assert_eq(policy_params_from_tunables(&t, topo, &p), 0);
        cr_expect_eq(p.latency_target_usec, 2000);
        cr_expect_eq(p.escalate_hold_usec, 500000);
        cr_expect_eq(p.quota_floor_pct, 25);
        cr_expect_eq(p.partition_max_cpus, 2);
        /* live: SetTunable goes through the same check */
        cr_expect_eq(config_set_one(&tunables_schema, &t, "escalate_steps", "idle nice", &e),
                     -EINVAL);
        cr_expect_str_eq(e.message, "escalate_steps: \"nice\" is not a step: idle, quota or "
                                    "partition");
        cr_assert_eq(config_set_one(&tunables_schema, &t, "escalate_steps", "idle", &e), 0, "%s",
                     e.message);
        cr_assert_eq(policy_params_from_tunables(&t, topo, &p), 0);
        cr_expect(p.escalate_lever[POLICY_LEVER_IDLE]);
        cr_expect_not(p.escalate_lever[POLICY_LEVER_QUOTA]);
}

Test(tunables, policy_params_auto_is_zero_when_a_node_is_one_core) {
        PolicyParams p;

        default_params("pack:2 numa:1 core:1 pu:2", &p);
        cr_expect_eq(p.n_nodes, 2);
        cr_expect_eq(p.node_min_imbalance[0], 0, "SMT siblings: crossing costs nothing");
        cr_expect_eq(p.node_min_imbalance[1], 0);
}

/* smt-offline: node 0 has usable CPUs 0-3, node 1 4 and 6 (5 isolated, 7 offline); 2 per core. */
Test(tunables, policy_params_auto_uses_each_nodes_placeable_cpus) {
        _cleanup_free_ char *root = fixture_path("topology/smt-offline");
        _cleanup_topology_ Topology *topo = NULL;
        _cleanup_(tunables_free) Tunables t = {};
        PolicyParams p;

        cr_assert_eq(topology_new_from_root(root, &topo), 0, "%s", root);
        cr_assert_eq(tunables_defaults(&t), 0);
        cr_assert_eq(policy_params_from_tunables(&t, topo, &p), 0);
        cr_expect_eq(p.node_min_imbalance[0], 4);
        cr_expect_eq(p.node_min_imbalance[1], 0, "2 usable CPUs, no more than one core's");

        t.use_isolated_cpus = true;
        cr_assert_eq(policy_params_from_tunables(&t, topo, &p), 0);
        cr_expect(p.use_isolated_cpus);
        cr_expect_eq(p.node_min_imbalance[0], 4);
        cr_expect_eq(p.node_min_imbalance[1], 3, "isolated CPU 5 counts too");
}

Test(tunables, policy_params_need_a_topology) {
        _cleanup_(tunables_free) Tunables t = {};
        PolicyParams p = { .n_nodes = 42 };

        cr_assert_eq(tunables_defaults(&t), 0);
        cr_expect_eq(policy_params_from_tunables(&t, NULL, &p), -EINVAL);
        cr_expect_eq(p.n_nodes, 42, "ret written on failure");
}
