/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
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
