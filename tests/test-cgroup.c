/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libcgroup.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "cgroup-tree.h"
#include "cgroup.h"
#include "clock.h"
#include "macro.h"
#include "testutil.h"

/* ---- pure: weight conversion */

Test(cgroup, weight_to_shares_rounds_and_clamps) {
        static const struct {
                uint64_t weight, shares;
        } cases[] = {
                { 0, 10 },         { 1, 10 },
                { 3, 31 },         { 50, 512 },
                { 97, 993 },       { 100, 1024 },
                { 200, 2048 },     { 10000, 102400 },
                { 10001, 102400 }, { UINT64_MAX, 102400 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_expect_eq(cgroup_weight_to_shares(cases[i].weight), cases[i].shares,
                             "weight %" PRIu64 " -> %" PRIu64, cases[i].weight,
                             cgroup_weight_to_shares(cases[i].weight));
}

Test(cgroup, shares_to_weight_rounds_and_clamps) {
        static const struct {
                uint64_t shares, weight;
        } cases[] = {
                { 0, 1 },
                { 1, 1 },
                { 2, 1 },
                { 10, 1 },
                { 512, 50 },
                { 1000, 98 },
                { 1024, 100 },
                { 2048, 200 },
                { 102400, 10000 },
                { 262144, 10000 },
                { UINT64_MAX, 10000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_expect_eq(cgroup_shares_to_weight(cases[i].shares), cases[i].weight,
                             "shares %" PRIu64 " -> %" PRIu64, cases[i].shares,
                             cgroup_shares_to_weight(cases[i].shares));
}

Test(cgroup, every_weight_survives_weight_shares_weight) {
        for (uint64_t w = CGROUP_WEIGHT_MIN; w <= CGROUP_WEIGHT_MAX; w++) {
                uint64_t s = cgroup_weight_to_shares(w);

                cr_assert(s >= CGROUP_SHARES_MIN && s <= CGROUP_SHARES_MAX, "weight %" PRIu64, w);
                cr_assert_eq(cgroup_shares_to_weight(s), w, "weight %" PRIu64 " -> %" PRIu64, w, s);
        }
}

Test(cgroup, shares_weight_shares_stays_within_half_a_weight_step) {
        for (uint64_t s = 10; s <= 102400; s++) {
                uint64_t back = cgroup_weight_to_shares(cgroup_shares_to_weight(s));

                cr_assert_leq(back > s ? back - s : s - back, 6, "shares %" PRIu64 " -> %" PRIu64,
                              s, back);
        }
}

/* ---- pure: errors, names, paths */

Test(cgroup, ecg_codes_map_to_errno) {
        static const struct {
                int ecg, err;
        } cases[] = {
                { 0, 0 },
                { ECGROUPNOTEXIST, -ENOENT },
                { ECGROUPVALUENOTEXIST, -ENOENT },
                { ECGROUPNOTMOUNTED, -ENOMEDIUM },
                { ECGROUPSUBSYSNOTMOUNTED, -EOPNOTSUPP },
                { ECGROUPUNSUPP, -EOPNOTSUPP },
                { ECGROUPNOTALLOWED, -EPERM },
                { ECGROUPNOTOWNER, -EPERM },
                { ECGROUPNOTINITIALIZED, -ENXIO },
                { ECGINVAL, -EINVAL },
                { ECGNONEMPTY, -EBUSY },
                { ECGFAIL, -EIO },
                { 49999, -EIO },
                { 12345678, -EIO },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_expect_eq(cgroup_ecg_to_errno(cases[i].ecg), cases[i].err, "code %d",
                             cases[i].ecg);
}

Test(cgroup, ecgother_maps_to_the_errno_libcgroup_recorded) {
        struct cgroup *cg;
        int r;

        /* Any libcgroup call that fails in the OS sets its last errno: deleting a group that
         * does not exist fails with ENOENT once libcgroup knows the mounts. */
        if (cgroup_init() != 0)
                cr_skip_test("libcgroup finds no cgroup mounts here");
        cg = cgroup_new_cgroup("cgbalance-test-does-not-exist/x");
        cr_assert_not_null(cg);
        cr_assert_not_null(cgroup_add_controller(cg, "cpu"));
        r = cgroup_delete_cgroup(cg, 0);
        cgroup_free(&cg);
        if (r != ECGOTHER)
                cr_skip_test("libcgroup answered %d, not ECGOTHER", r);
        cr_expect_eq(cgroup_ecg_to_errno(r), -ENOENT);
}

Test(cgroup, ecg_strings_are_right_where_cgroup_strerror_is_not) {
        cr_expect_str_eq(cgroup_ecg_to_string(ECGROUPNOTEXIST), "Cgroup does not exist");
        cr_expect_str_eq(cgroup_ecg_to_string(ECGEOF), "End of file or iterator");
        cr_expect_str_eq(cgroup_ecg_to_string(ECGCANTSETVALUE), "Value setting does not succeed");
        cr_expect_str_eq(cgroup_ecg_to_string(ECGNONEMPTY), "Failed to remove a non-empty group");
        cr_expect_str_eq(cgroup_ecg_to_string(ECGEOF - 1), "Unknown libcgroup error");
        cr_expect_str_eq(cgroup_ecg_to_string(ECGNONEMPTY + 1), "Unknown libcgroup error");
        cr_expect_str_eq(cgroup_ecg_to_string(ENOENT), "Unknown libcgroup error");
        cr_expect_str_eq(cgroup_ecg_to_string(-1), "Unknown libcgroup error");
        cr_expect_str_eq(cgroup_ecg_to_string(INT_MIN), "Unknown libcgroup error");
}

Test(cgroup, mode_names) {
        cr_expect_str_eq(cgroup_mode_to_string(CGROUP_MODE_NONE), "none");
        cr_expect_str_eq(cgroup_mode_to_string(CGROUP_MODE_V1), "v1");
        cr_expect_str_eq(cgroup_mode_to_string(CGROUP_MODE_HYBRID), "hybrid");
        cr_expect_str_eq(cgroup_mode_to_string(CGROUP_MODE_V2), "v2");
        cr_expect_null(cgroup_mode_to_string(_CGROUP_MODE_MAX));
        cr_expect_null(cgroup_mode_to_string((CgroupMode) -1));
}

Test(cgroup, group_path_validation) {
        static const struct {
                const char *path;
                bool valid;
        } cases[] = {
                { "", true },
                { "cgbalance.slice", true },
                { "cgbalance.slice/loadgen-1", true },
                { "a/b/c.d/..e/.f", true },
                { "/cgbalance.slice", false },
                { "cgbalance.slice/", false },
                { "a//b", false },
                { ".", false },
                { "..", false },
                { "a/../b", false },
                { "a/./b", false },
                { "a/..", false },
                { "a\nb", false },
                { "a\tb", false },
                { "a\x7f", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                cr_expect_eq(cgroup_path_is_valid(cases[i].path), cases[i].valid, "\"%s\"",
                             cases[i].path);
        cr_expect_not(cgroup_path_is_valid(NULL));
}

/* ---- layout from fixture trees */

static CgroupLayout *load_fixture(const char *rel, char **ret_root) {
        CgroupLayout *l = calloc(1, sizeof *l);
        char *root = fixture_path(rel);

        cr_assert_not_null(l);
        cr_assert_eq(cgroup_layout_load_at(root, l), 0, "%s", root);
        if (ret_root)
                *ret_root = root;
        else
                free(root);
        return l;
}

static void expect_path(const char *got, const char *root, const char *suffix, const char *what) {
        _cleanup_free_ char *want = NULL;

        if (!*suffix) {
                cr_expect_str_empty(got, "%s: %s", what, got);
                return;
        }
        cr_assert_gt(asprintf(&want, "%s%s", root, suffix), 0);
        cr_expect_str_eq(got, want, "%s", what);
}

static void expect_layout(const char *rel, CgroupMode mode, const char *cpu, const char *cpuacct,
                          const char *cpuset, const char *memory, const char *unified) {
        _cleanup_free_ char *root = NULL;
        _cleanup_free_ CgroupLayout *l = load_fixture(rel, &root);

        cr_expect_eq(l->mode, mode, "%s: mode %s", rel, cgroup_mode_to_string(l->mode));
        expect_path(l->cpu_path, root, cpu, "cpu");
        expect_path(l->cpuacct_path, root, cpuacct, "cpuacct");
        expect_path(l->cpuset_path, root, cpuset, "cpuset");
        expect_path(l->memory_path, root, memory, "memory");
        expect_path(l->unified_path, root, unified, "unified");
}

Test(cgroup, layout_of_a_v1_host) {
        expect_layout("cgroup/v1", CGROUP_MODE_V1, "/sys/fs/cgroup/cpu,cpuacct",
                      "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuset",
                      "/sys/fs/cgroup/memory", "");
}

Test(cgroup, layout_of_a_hybrid_host) {
        expect_layout("cgroup/hybrid", CGROUP_MODE_HYBRID, "/sys/fs/cgroup/cpu",
                      "/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpuset", "/sys/fs/cgroup/memory",
                      "/sys/fs/cgroup/unified");
}

Test(cgroup, layout_of_a_v2_host) {
        expect_layout("cgroup/v2", CGROUP_MODE_V2, "/sys/fs/cgroup", "", "/sys/fs/cgroup",
                      "/sys/fs/cgroup", "/sys/fs/cgroup");
}

Test(cgroup, layout_of_a_v2_host_without_cpu_controller) {
        /* cgroup.controllers: "memory pids" */
        expect_layout("cgroup/v2-nocpu", CGROUP_MODE_V2, "", "", "", "/sys/fs/cgroup",
                      "/sys/fs/cgroup");
}

/* Where the memory controller is, for each shape of host: only where the mode uses it. */
Test(cgroup, layout_parse_finds_the_memory_controller) {
        static const char v1_mem[] = "28 24 0:24 / /cg/cpu rw - cgroup cgroup rw,cpu,cpuacct\n"
                                     "30 24 0:26 / /cg/mem\\040ory rw - cgroup cgroup rw,memory\n"
                                     "31 24 0:27 / /cg/mem2 rw - cgroup cgroup rw,memory\n";
        static const char v1_comounted[] =
                "28 24 0:24 / /cg/cpu rw - cgroup cgroup rw,cpu,memory\n";
        static const char v1_nomem[] = "28 24 0:24 / /cg/cpu rw - cgroup cgroup rw,cpu,cpuacct\n"
                                       "29 24 0:25 / /cg/set rw - cgroup cgroup rw,cpuset\n";
        static const char hybrid_nomem[] = "28 24 0:24 / /cg/cpu rw - cgroup cgroup rw,cpu\n"
                                           "41 24 0:38 / /cg/unified rw - cgroup2 cgroup2 rw\n";
        static const char v2[] = "26 22 0:24 / /cg rw - cgroup2 cgroup2 rw\n";
        static const struct {
                const char *mountinfo, *controllers, *memory;
                CgroupMode mode;
        } cases[] = {
                { v1_mem, NULL, "/cg/mem ory", CGROUP_MODE_V1 }, /* the first mount */
                { v1_comounted, NULL, "/cg/cpu", CGROUP_MODE_V1 },
                { v1_nomem, NULL, "", CGROUP_MODE_V1 },
                /* memory on the cgroup2 mount while cpu is on v1: not used */
                { hybrid_nomem, "memory", "", CGROUP_MODE_HYBRID },
                { v2, "cpuset cpu io memory pids\n", "/cg", CGROUP_MODE_V2 },
                { v2, "memory", "/cg", CGROUP_MODE_V2 },
                { v2, "cpu io memoryx", "", CGROUP_MODE_V2 },
                { v2, NULL, "", CGROUP_MODE_V2 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ CgroupLayout *l = calloc(1, sizeof *l);

                cr_assert_not_null(l);
                cr_assert_eq(cgroup_layout_parse(cases[i].mountinfo, cases[i].controllers, NULL, l),
                             0, "case %zu", i);
                cr_expect_eq(l->mode, cases[i].mode, "case %zu: mode %s", i,
                             cgroup_mode_to_string(l->mode));
                cr_expect_str_eq(l->memory_path, cases[i].memory, "case %zu: \"%s\"", i,
                                 l->memory_path);
        }
}

Test(cgroup, layout_load_at_missing_root_is_enoent) {
        CgroupLayout *l = calloc(1, sizeof *l);

        cr_assert_not_null(l);
        l->mode = CGROUP_MODE_V2;
        cr_expect_eq(cgroup_layout_load_at("/nonexistent-cgbalance-root", l), -ENOENT);
        cr_expect_eq(l->mode, CGROUP_MODE_V2, "written on failure");
        free(l);
}

Test(cgroup, layout_parse_decodes_escapes_and_keeps_first_mounts) {
        static const char mi[] =
                "30 20 0:25 / /cg\\040v1/c\\134pu rw shared:1 master:2 propagate_from:3 - cgroup "
                "cgroup rw,cpu\n"
                "31 20 0:26 / /cg/cpu-again rw - cgroup none rw,cpuacct,cpu\n"
                "32 20 0:27 / /cg/set rw - cgroup cgroup rw,release_agent=/x/cpuset,cpuset\n"
                "33 20 0:28 / /cg/\\011two rw - cgroup2 cgroup2 rw,nsdelegate\n"
                "34 20 0:29 / /cg/other2 rw - cgroup2 cgroup2 rw\n"
                "35 20 0:30 / /cg/fake rw - tmpfs cgroup rw,cpu,cpuset\n";
        _cleanup_free_ CgroupLayout *l = calloc(1, sizeof *l);

        cr_assert_not_null(l);
        cr_assert_eq(cgroup_layout_parse(mi, "cpu cpuset", "/r/", l), 0);
        cr_expect_eq(l->mode, CGROUP_MODE_HYBRID);
        cr_expect_str_eq(l->cpu_path, "/r/cg v1/c\\pu");
        cr_expect_str_eq(l->cpuacct_path, "/r/cg/cpu-again");
        cr_expect_str_eq(l->cpuset_path, "/r/cg/set");
        cr_expect_str_eq(l->unified_path, "/r/cg/\ttwo");
}

Test(cgroup, layout_parse_without_root_keeps_paths) {
        static const char mi[] = "26 22 0:24 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        static const char *const roots[] = { NULL, "", "/", "//" };

        for (size_t i = 0; i < ELEMENTSOF(roots); i++) {
                _cleanup_free_ CgroupLayout *l = calloc(1, sizeof *l);

                cr_assert_not_null(l);
                cr_assert_eq(cgroup_layout_parse(mi, "cpu\n", roots[i], l), 0);
                cr_expect_str_eq(l->unified_path, "/sys/fs/cgroup", "root \"%s\"",
                                 roots[i] ? roots[i] : "(null)");
                cr_expect_str_eq(l->cpu_path, "/sys/fs/cgroup");
        }
}

Test(cgroup, layout_parse_of_no_cgroups_is_mode_none) {
        static const char mi[] = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n";
        _cleanup_free_ CgroupLayout *l = calloc(1, sizeof *l);

        cr_assert_not_null(l);
        l->mode = CGROUP_MODE_V2;
        cr_assert_eq(cgroup_layout_parse(mi, NULL, NULL, l), 0);
        cr_expect_eq(l->mode, CGROUP_MODE_NONE);
        cr_expect_str_empty(l->unified_path);
}

Test(cgroup, layout_parse_rejects_malformed_lines) {
        static const char *const cases[] = {
                "27 1 254:0 / / rw,relatime ext4 /dev/vda rw\n", /* no separator */
                "27 1 254:0 / / rw - ext4 /dev/vda\n", /* no super options */
                "27 1 254:0 / / rw - ext4 /dev/vda rw extra\n", /* one field too many */
                "27 1 254:0 / / - ext4 /dev/vda rw\n", /* no mount options */
                "27 1 254:0 /  / rw - ext4 /dev/vda rw\n", /* empty field */
                "27 1 254:0 / /a\\000b rw - cgroup2 cgroup2 rw\n", /* NUL in a path */
                "garbage\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ CgroupLayout *l = calloc(1, sizeof *l);

                cr_assert_not_null(l);
                l->mode = CGROUP_MODE_HYBRID;
                cr_expect_eq(cgroup_layout_parse(cases[i], NULL, NULL, l), -EINVAL, "\"%s\"",
                             cases[i]);
                cr_expect_eq(l->mode, CGROUP_MODE_HYBRID, "\"%s\" wrote the result", cases[i]);
        }
}

/* ---- reads from fixture trees */

static void expect_usage(const char *rel, const char *group, int err, uint64_t want) {
        _cleanup_free_ CgroupLayout *l = load_fixture(rel, NULL);
        uint64_t got = 4242;

        cr_expect_eq(cgroup_read_usage(l, group, &got), err, "%s %s", rel, group);
        cr_expect_eq(got, err < 0 ? 4242 : want, "%s %s: %" PRIu64, rel, group, got);
}

Test(cgroup, usage_on_v1_is_cpuacct_usage_in_usec) {
        expect_usage("cgroup/v1", "cgbalance.slice/grp", 0, 123456);
}

Test(cgroup, usage_on_hybrid_comes_from_cpuacct_not_the_mirror) {
        expect_usage("cgroup/hybrid", "cgbalance.slice/grp", 0, 5000);
}

Test(cgroup, usage_on_v2_is_cpu_stat_usage_usec) {
        expect_usage("cgroup/v2", "cgbalance.slice/grp", 0, 8123456);
}

Test(cgroup, usage_rejects_malformed_or_missing_usage_line) {
        expect_usage("cgroup/v2", "cgbalance.slice/bad-stat", -EINVAL, 0);
        expect_usage("cgroup/v2", "cgbalance.slice/no-usage", -EINVAL, 0);
}

Test(cgroup, usage_of_missing_group_is_enoent) {
        expect_usage("cgroup/v2", "cgbalance.slice/gone", -ENOENT, 0);
        expect_usage("cgroup/v1", "cgbalance.slice/gone", -ENOENT, 0);
}

static int read_pressure(const char *rel, const char *group, const char *resource, PsiStats *s) {
        _cleanup_free_ CgroupLayout *l = load_fixture(rel, NULL);

        return cgroup_read_pressure(l, group, resource, s);
}

Test(cgroup, pressure_on_v2_comes_from_the_group) {
        PsiStats s = {};

        cr_assert_eq(read_pressure("cgroup/v2", "cgbalance.slice/grp", "cpu", &s), 0);
        cr_expect_eq(s.some.avg10_permyriad, 41);
        cr_expect_eq(s.some.avg300_permyriad, 5);
        cr_expect_eq(s.some.total_usec, 9123456);
        cr_expect(s.has_full);
        cr_expect_eq(s.full.total_usec, 7012345);
        cr_assert_eq(read_pressure("cgroup/v2", "cgbalance.slice/grp", "io", &s), 0);
        cr_expect_eq(s.some.total_usec, 17);
        cr_expect_eq(s.full.total_usec, 5);
}

Test(cgroup, pressure_on_hybrid_comes_from_the_mirror) {
        PsiStats s = {};

        cr_assert_eq(read_pressure("cgroup/hybrid", "cgbalance.slice/grp", "cpu", &s), 0);
        cr_expect_eq(s.some.avg10_permyriad, 1632);
        cr_expect_eq(s.some.avg60_permyriad, 905);
        cr_expect_eq(s.some.total_usec, 187426310);
        cr_expect_eq(s.full.avg10_permyriad, 150);
        cr_expect_eq(s.full.total_usec, 3012345);
}

Test(cgroup, pressure_on_v1_is_unsupported) {
        PsiStats s = { .some.total_usec = 4242 };

        cr_expect_eq(read_pressure("cgroup/v1", "cgbalance.slice/grp", "cpu", &s), -EOPNOTSUPP);
        cr_expect_eq(s.some.total_usec, 4242);
}

Test(cgroup, pressure_on_hybrid_without_mirror_is_enoent) {
        PsiStats s = { .some.total_usec = 4242 };

        cr_expect_eq(read_pressure("cgroup/hybrid", "cgbalance.slice/nomirror", "cpu", &s),
                     -ENOENT);
        cr_expect_eq(read_pressure("cgroup/v2", "cgbalance.slice/grp", "memory", &s), -ENOENT);
        cr_expect_eq(s.some.total_usec, 4242);
}

Test(cgroup, pressure_refuses_unknown_resource) {
        PsiStats s;

        cr_expect_eq(read_pressure("cgroup/v2", "cgbalance.slice/grp", "irq", &s), -EINVAL);
        cr_expect_eq(read_pressure("cgroup/v2", "cgbalance.slice/grp", "../cpu", &s), -EINVAL);
        cr_expect_eq(read_pressure("cgroup/v2", "cgbalance.slice/grp", NULL, &s), -EINVAL);
}

Test(cgroup, weight_on_v1_is_converted_from_cpu_shares) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);
        uint64_t w = 0, native = 0;

        cr_assert_eq(cgroup_get_cpu_weight(l, "cgbalance.slice/grp", &w), 0);
        cr_expect_eq(w, 50);
        cr_assert_eq(cgroup_get_cpu_weight_native(l, "cgbalance.slice/grp", &native), 0);
        cr_expect_eq(native, 512);
        cr_assert_eq(cgroup_get_cpu_weight(l, "", &w), 0);
        cr_expect_eq(w, 100, "the root group");
}

Test(cgroup, weight_on_v2_is_cpu_weight) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v2", NULL);
        uint64_t w = 0, native = 0;

        cr_assert_eq(cgroup_get_cpu_weight(l, "cgbalance.slice/grp", &w), 0);
        cr_expect_eq(w, 250);
        cr_assert_eq(cgroup_get_cpu_weight_native(l, "cgbalance.slice/grp", &native), 0);
        cr_expect_eq(native, 250);
}

Test(cgroup, weight_read_rejects_malformed_file) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v2", NULL);
        uint64_t w = 4242;

        cr_expect_eq(cgroup_get_cpu_weight(l, "cgbalance.slice/bad-stat", &w), -EINVAL);
        cr_expect_eq(w, 4242);
}

Test(cgroup, weight_without_cpu_controller_is_unsupported) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v2-nocpu", NULL);
        uint64_t w;

        cr_expect_eq(cgroup_get_cpu_weight(l, "x", &w), -EOPNOTSUPP);
        cr_expect_eq(cgroup_set_cpu_weight(l, "x", 100), -EOPNOTSUPP);
}

/* ---- levers past the weight: cpu.idle, bandwidth, throttled time (fixtures) */

Test(cgroup, cpu_max_parse_reads_quota_and_period) {
        static const struct {
                const char *text;
                int r;
                uint64_t quota, period;
        } cases[] = {
                { "max 100000\n", 0, CGROUP_QUOTA_NONE, 100000 },
                { "50000 100000\n", 0, 50000, 100000 },
                { "1000 1000\n", 0, 1000, 1000 },
                { "max 100000", -EINVAL, 0, 0 }, /* cut short */
                { "max\n", -EINVAL, 0, 0 },
                { "50000\n", -EINVAL, 0, 0 },
                { "0 100000\n", -EINVAL, 0, 0 },
                { "50000 0\n", -EINVAL, 0, 0 },
                { "-1 100000\n", -EINVAL, 0, 0 },
                { "max  100000\n", -EINVAL, 0, 0 },
                { " max 100000\n", -EINVAL, 0, 0 },
                { "max 100000 7\n", -EINVAL, 0, 0 },
                { "max 100000\n\n", -EINVAL, 0, 0 },
                { "maximum 100000\n", -EINVAL, 0, 0 },
                { "50000 18446744073709551616\n", -EINVAL, 0, 0 },
                { "", -EINVAL, 0, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t q = 4242, p = 4242;
                int r = cgroup_cpu_max_parse(cases[i].text, &q, &p);

                cr_expect_eq(r, cases[i].r, "\"%s\": %d", cases[i].text, r);
                cr_expect_eq(q, r < 0 ? 4242 : cases[i].quota, "\"%s\": quota", cases[i].text);
                cr_expect_eq(p, r < 0 ? 4242 : cases[i].period, "\"%s\": period", cases[i].text);
        }
        cr_expect_eq(cgroup_cpu_max_parse(NULL, NULL, NULL), -EINVAL);
}

/* The levers of a fixture group, as they should read. */
static void expect_levers(const char *tree, const char *group, bool idle, uint64_t quota,
                          uint64_t period, uint64_t throttled) {
        _cleanup_free_ CgroupLayout *l = load_fixture(tree, NULL);
        uint64_t q = 4242, p = 4242, t = 4242;
        bool i = !idle;

        cr_assert_eq(cgroup_get_cpu_idle(l, group, &i), 0, "%s %s", tree, group);
        cr_expect_eq(i, idle, "%s %s: idle", tree, group);
        cr_assert_eq(cgroup_get_cpu_quota(l, group, &q, &p), 0, "%s %s", tree, group);
        cr_expect_eq(q, quota, "%s %s: quota %" PRIu64, tree, group, q);
        cr_expect_eq(p, period, "%s %s: period %" PRIu64, tree, group, p);
        if (throttled == UINT64_MAX)
                return;
        cr_assert_eq(cgroup_read_cpu_throttled(l, group, &t), 0, "%s %s", tree, group);
        cr_expect_eq(t, throttled, "%s %s: throttled %" PRIu64, tree, group, t);
}

Test(cgroup, idle_quota_and_throttled_on_v1_and_v2) {
        /* v1 throttled_time is in ns */
        expect_levers("cgroup/v1", "cgbalance.slice/levers", true, 50000, 100000, 345678);
        expect_levers("cgroup/v2", "cgbalance.slice/levers", false, 25000, 50000, 2500000);
        expect_levers("cgroup/v2", "cgbalance.slice/unlimited", true, CGROUP_QUOTA_NONE, 100000,
                      /* no cpu.stat */ UINT64_MAX);
}

/* A group without the files: a kernel before cpu.idle, or a v2 group without the cpu
 * controller. A group that is not there at all stays -ENOENT. */
Test(cgroup, levers_missing_from_a_group_are_unsupported) {
        static const char *const trees[] = { "cgroup/v1", "cgroup/v2" };

        for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
                _cleanup_free_ CgroupLayout *l = load_fixture(trees[i], NULL);
                uint64_t v = 4242;
                bool idle = true;

                cr_expect_eq(cgroup_get_cpu_idle(l, "cgbalance.slice/no-levers", &idle),
                             -EOPNOTSUPP, "%s", trees[i]);
                cr_expect_eq(cgroup_get_cpu_quota(l, "cgbalance.slice/no-levers", &v, NULL),
                             -EOPNOTSUPP, "%s", trees[i]);
                cr_expect_eq(cgroup_read_cpu_throttled(l, "cgbalance.slice/no-levers", &v),
                             -EOPNOTSUPP, "%s", trees[i]);
                cr_expect_eq(cgroup_get_cpu_idle(l, "cgbalance.slice/gone", &idle), -ENOENT);
                cr_expect_eq(cgroup_get_cpu_quota(l, "cgbalance.slice/gone", &v, NULL), -ENOENT);
                cr_expect_eq(cgroup_read_cpu_throttled(l, "cgbalance.slice/gone", &v), -ENOENT);
                cr_expect(idle);
                cr_expect_eq(v, 4242);
        }
}

Test(cgroup, levers_reject_malformed_files) {
        static const char *const trees[] = { "cgroup/v1", "cgroup/v2" };

        for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
                _cleanup_free_ CgroupLayout *l = load_fixture(trees[i], NULL);
                uint64_t v = 4242;
                bool idle = true;

                cr_expect_eq(cgroup_get_cpu_idle(l, "cgbalance.slice/bad-levers", &idle), -EINVAL,
                             "%s", trees[i]);
                cr_expect_eq(cgroup_get_cpu_quota(l, "cgbalance.slice/bad-levers", &v, NULL),
                             -EINVAL, "%s", trees[i]);
                cr_expect_eq(cgroup_read_cpu_throttled(l, "cgbalance.slice/bad-levers", &v),
                             -EINVAL, "%s", trees[i]);
                cr_expect(idle);
                cr_expect_eq(v, 4242);
        }
}

Test(cgroup, lever_writers_refuse_bad_arguments_first) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);
        _cleanup_free_ CgroupLayout *nocpu = load_fixture("cgroup/v2-nocpu", NULL);
        uint64_t v;
        bool idle;

        cr_expect_eq(cgroup_set_cpu_idle(l, "", true), -EINVAL, "the root group");
        cr_expect_eq(cgroup_set_cpu_idle(l, "a//b", true), -EINVAL);
        cr_expect_eq(cgroup_set_cpu_quota(l, "", 50000), -EINVAL, "the root group");
        cr_expect_eq(cgroup_set_cpu_quota(l, "g", 1), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_quota(l, "g", CGROUP_QUOTA_MIN_USEC - 1), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_quota(l, "g", CGROUP_QUOTA_MAX_USEC + 1), -ERANGE);
        cr_expect_eq(cgroup_get_cpu_idle(l, "g", NULL), -EINVAL);
        cr_expect_eq(cgroup_read_cpu_throttled(l, "g", NULL), -EINVAL);
        cr_expect_eq(cgroup_get_cpu_idle(nocpu, "x", &idle), -EOPNOTSUPP);
        cr_expect_eq(cgroup_set_cpu_idle(nocpu, "x", true), -EOPNOTSUPP);
        cr_expect_eq(cgroup_get_cpu_quota(nocpu, "x", &v, NULL), -EOPNOTSUPP);
        cr_expect_eq(cgroup_set_cpu_quota(nocpu, "x", CGROUP_QUOTA_NONE), -EOPNOTSUPP);
        cr_expect_eq(cgroup_read_cpu_throttled(nocpu, "x", &v), -EOPNOTSUPP);
}

/* Checks done before anything is written, so safe with a fixture layout. */
Test(cgroup, writers_refuse_bad_arguments_first) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);
        _cleanup_cpumask_ CpuMask *empty = cpumask_new(8), *one = NULL;

        cr_assert_eq(cpumask_parse("0", 8, &one, NULL), 0);
        cr_expect_eq(cgroup_set_cpu_weight(l, "g", 0), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_weight(l, "g", 10001), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_weight_native(l, "g", 1), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_weight_native(l, "g", 262145), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_weight(l, "../g", 100), -EINVAL);
        cr_expect_eq(cgroup_set_cpuset(l, "g", empty, NULL), -EINVAL);
        cr_expect_eq(cgroup_set_cpuset(l, "g", NULL, NULL), -EINVAL);
        cr_expect_eq(cgroup_set_cpuset(l, "g", one, empty), -EINVAL);
        cr_expect_eq(cgroup_create(l, ""), -EINVAL);
        cr_expect_eq(cgroup_create(l, "a//b"), -EINVAL);
        cr_expect_eq(cgroup_remove(l, ""), -EINVAL);
        cr_expect_eq(cgroup_attach_tid(l, "g", 0), -EINVAL);
        cr_expect_eq(cgroup_attach_pid(l, "g", -1), -EINVAL);
        cr_expect_eq(cgroup_set_memory_max(l, "g", 0), -EINVAL);
        cr_expect_eq(cgroup_set_memory_max(l, "../g", 1 << 20), -EINVAL);
        cr_expect_eq(cgroup_kill_all(l, "", 0), -EINVAL, "the root group");
        cr_expect_eq(cgroup_kill_all(l, "a//b", 0), -EINVAL);
        cr_expect_eq(cgroup_kill_all(l, NULL, 0), -EINVAL);
}

Test(cgroup, native_weight_range_follows_the_version) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v2", NULL);

        cr_expect_eq(cgroup_set_cpu_weight_native(l, "g", 0), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_weight_native(l, "g", 10001), -ERANGE);
        cr_expect_eq(cgroup_set_cpu_weight_native(l, "g", 262144), -ERANGE);
}

Test(cgroup, thread_moves_are_unsupported_on_v2) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v2", NULL);

        cr_expect_eq(cgroup_attach_tid(l, "cgbalance.slice/grp", getpid()), -EOPNOTSUPP);
}

Test(cgroup, nothing_to_manage_in_mode_none) {
        CgroupLayout *l = calloc(1, sizeof *l);
        pid_t *pids = (pid_t *) l;
        size_t n = 4242;
        uint64_t peak = 4242;

        cr_assert_not_null(l);
        cr_expect_eq(cgroup_create(l, "g"), -EOPNOTSUPP);
        cr_expect_eq(cgroup_remove(l, "g"), -EOPNOTSUPP);
        cr_expect_eq(cgroup_attach_pid(l, "g", 1), -EOPNOTSUPP);
        cr_expect_eq(cgroup_set_memory_max(l, "g", 1 << 20), -EOPNOTSUPP);
        cr_expect_eq(cgroup_read_memory_peak(l, "g", &peak), -EOPNOTSUPP);
        cr_expect_eq(cgroup_list_procs(l, "g", true, &pids, &n), -EOPNOTSUPP);
        cr_expect_eq(cgroup_kill_all(l, "g", 0), -EOPNOTSUPP);
        cr_expect_eq(peak, 4242);
        cr_expect_eq(n, 4242);
        cr_expect_eq(pids, (pid_t *) l, "written on failure");
        free(l);
}

/* ---- cgroup_attach_pid() on copies of the fixture trees */

static char *slurp(const char *dir, const char *rel) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        char buf[4096];
        ssize_t n;

        cr_assert_gt(asprintf(&path, "%s/%s", dir, rel), 0);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
        n = read(fd, buf, sizeof buf - 1);
        cr_assert_geq(n, 0, "%s", path);
        buf[n] = '\0';
        return strdup(buf);
}

static CgroupLayout *load_copy(const char *rel, char **ret_dir) {
        _cleanup_free_ char *dir = make_tmpdir();
        CgroupLayout *l = calloc(1, sizeof *l);

        cr_assert_not_null(l);
        copy_fixture(rel, dir);
        cr_assert_eq(cgroup_layout_load_at(dir, l), 0);
        *ret_dir = TAKE_PTR(dir);
        return l;
}

static void expect_procs(const char *dir, const char *rel, const char *want) {
        _cleanup_free_ char *got = slurp(dir, rel);

        cr_expect_str_eq(got, want, "%s", rel);
}

Test(cgroup, v1_quota_of_minus_one_is_no_limit) {
        _cleanup_free_ char *dir = NULL, *file = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v1", &dir);
        _cleanup_close_ int fd = -EBADF;
        uint64_t quota = 4242, period = 0;

        cr_assert_gt(asprintf(&file,
                              "%s/sys/fs/cgroup/cpu,cpuacct/cgbalance.slice/levers/"
                              "cpu.cfs_quota_us",
                              dir),
                     0);
        fd = open(file, O_WRONLY | O_TRUNC | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "-1\n", 3), 3);
        cr_assert_eq(cgroup_get_cpu_quota(l, "cgbalance.slice/levers", &quota, &period), 0);
        cr_expect_eq(quota, CGROUP_QUOTA_NONE);
        cr_expect_eq(period, 100000);
        rm_rf(dir);
}

Test(cgroup, attach_pid_on_hybrid_writes_each_hierarchy_and_the_mirror) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/hybrid", &dir);

        cr_assert_eq(cgroup_attach_pid(l, "cgbalance.slice/grp", 4242), 0);
        expect_procs(dir, "sys/fs/cgroup/cpuset/cgbalance.slice/grp/cgroup.procs", "4242");
        expect_procs(dir, "sys/fs/cgroup/cpu/cgbalance.slice/grp/cgroup.procs", "4242");
        expect_procs(dir, "sys/fs/cgroup/cpuacct/cgbalance.slice/grp/cgroup.procs", "4242");
        expect_procs(dir, "sys/fs/cgroup/memory/cgbalance.slice/grp/cgroup.procs", "4242");
        expect_procs(dir, "sys/fs/cgroup/unified/cgbalance.slice/grp/cgroup.procs", "4242");
        expect_procs(dir, "sys/fs/cgroup/cpu/cgbalance.slice/grp/tasks", "");
        rm_rf(dir);
}

Test(cgroup, attach_pid_on_hybrid_without_mirror_still_moves) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/hybrid", &dir);

        cr_assert_eq(cgroup_attach_pid(l, "cgbalance.slice/nomirror", 77), 0);
        expect_procs(dir, "sys/fs/cgroup/cpu/cgbalance.slice/nomirror/cgroup.procs", "77");
        expect_procs(dir, "sys/fs/cgroup/cpuset/cgbalance.slice/nomirror/cgroup.procs", "77");
        expect_procs(dir, "sys/fs/cgroup/memory/cgbalance.slice/nomirror/cgroup.procs", "77");
        rm_rf(dir);
}

Test(cgroup, attach_pid_on_v1_comounted_writes_once_per_mount) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v1", &dir);

        cr_assert_eq(cgroup_attach_pid(l, "cgbalance.slice/grp", 99), 0);
        expect_procs(dir, "sys/fs/cgroup/cpu,cpuacct/cgbalance.slice/grp/cgroup.procs", "99");
        expect_procs(dir, "sys/fs/cgroup/cpuset/cgbalance.slice/grp/cgroup.procs", "99");
        expect_procs(dir, "sys/fs/cgroup/memory/cgbalance.slice/grp/cgroup.procs", "99");
        rm_rf(dir);
}

Test(cgroup, attach_pid_without_memory_controller_leaves_memory_alone) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v1", &dir);

        l->memory_path[0] = '\0';
        cr_assert_eq(cgroup_attach_pid(l, "cgbalance.slice/grp", 99), 0);
        expect_procs(dir, "sys/fs/cgroup/cpu,cpuacct/cgbalance.slice/grp/cgroup.procs", "99");
        expect_procs(dir, "sys/fs/cgroup/memory/cgbalance.slice/grp/cgroup.procs", "8\n");
        rm_rf(dir);
}

Test(cgroup, attach_pid_to_group_missing_in_memory_is_enoent) {
        _cleanup_free_ char *dir = NULL, *mem = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v1", &dir);

        cr_assert_gt(asprintf(&mem, "%s/sys/fs/cgroup/memory/cgbalance.slice/grp", dir), 0);
        rm_rf(mem);
        cr_expect_eq(cgroup_attach_pid(l, "cgbalance.slice/grp", 99), -ENOENT);
        rm_rf(dir);
}

Test(cgroup, attach_pid_on_v2_writes_the_group) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v2", &dir);

        cr_assert_eq(cgroup_attach_pid(l, "cgbalance.slice/grp", 1234567), 0);
        expect_procs(dir, "sys/fs/cgroup/cgbalance.slice/grp/cgroup.procs", "1234567");
        rm_rf(dir);
}

Test(cgroup, attach_pid_to_missing_group_is_enoent) {
        _cleanup_free_ char *dir = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v2", &dir);

        cr_expect_eq(cgroup_attach_pid(l, "cgbalance.slice/gone", 1), -ENOENT);
        rm_rf(dir);
}

/* ---- memory and process lists from fixture trees */

static void expect_peak(const char *rel, const char *group, int err, uint64_t want) {
        _cleanup_free_ CgroupLayout *l = load_fixture(rel, NULL);
        uint64_t got = 4242;
        int r = cgroup_read_memory_peak(l, group, &got);

        cr_expect_eq(r, err, "%s %s: %d (%s)", rel, group, r, strerror(-r));
        cr_expect_eq(got, err < 0 ? 4242 : want, "%s %s: %" PRIu64, rel, group, got);
}

Test(cgroup, memory_peak_on_v1_is_max_usage_in_bytes) {
        expect_peak("cgroup/v1", "cgbalance.slice/grp", 0, 16781312);
}

Test(cgroup, memory_peak_on_hybrid_comes_from_v1_memory_not_the_mirror) {
        expect_peak("cgroup/hybrid", "cgbalance.slice/grp", 0, 4096000);
}

Test(cgroup, memory_peak_on_v2_is_memory_peak) {
        expect_peak("cgroup/v2", "cgbalance.slice/grp", 0, 25165824);
}

Test(cgroup, memory_peak_without_memory_peak_file_is_unsupported) {
        /* a kernel before 5.19: the group is there, memory.peak is not */
        expect_peak("cgroup/v2", "cgbalance.slice/no-usage", -EOPNOTSUPP, 0);
}

Test(cgroup, memory_peak_of_missing_group_is_enoent) {
        expect_peak("cgroup/v2", "cgbalance.slice/gone", -ENOENT, 0);
        expect_peak("cgroup/v1", "cgbalance.slice/gone", -ENOENT, 0);
}

Test(cgroup, memory_peak_rejects_malformed_file) {
        expect_peak("cgroup/v2", "cgbalance.slice/bad-stat", -EINVAL, 0);
}

Test(cgroup, memory_without_memory_controller_is_unsupported) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/hybrid", NULL);
        uint64_t peak = 4242;

        l->memory_path[0] = '\0';
        cr_expect_eq(cgroup_read_memory_peak(l, "cgbalance.slice/grp", &peak), -EOPNOTSUPP);
        cr_expect_eq(cgroup_set_memory_max(l, "cgbalance.slice/grp", 1 << 20), -EOPNOTSUPP);
        cr_expect_eq(peak, 4242);
}

/* Runs cgroup_list_procs() and compares with want[0..n_want). */
static void expect_list(const CgroupLayout *l, const char *group, bool recursive, const pid_t *want,
                        size_t n_want) {
        _cleanup_free_ pid_t *got = NULL;
        size_t n = 4242;
        int r = cgroup_list_procs(l, group, recursive, &got, &n);

        cr_assert_eq(r, 0, "%s: %d (%s)", group, r, strerror(-r));
        cr_assert_eq(n, n_want, "%s%s: %zu processes", group, recursive ? " (recursive)" : "", n);
        cr_expect_eq(got == NULL, n == 0, "NULL exactly when empty");
        for (size_t i = 0; i < n; i++)
                cr_expect_eq(got[i], want[i], "%s: [%zu] = %d", group, i, (int) got[i]);
}

/*
 * The PIDs in these fixtures may be real processes here: never hand a fixture layout holding
 * them to cgroup_kill_all().
 */
Test(cgroup, list_procs_sorts_and_drops_duplicates) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);

        /* cgroup.procs "30 10 10": v1 promises neither order nor uniqueness */
        expect_list(l, "cgbalance.slice/tree", false, (const pid_t[]){ 10, 30 }, 2);
}

Test(cgroup, list_procs_recursive_includes_every_descendant) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);

        expect_list(l, "cgbalance.slice/tree", true, (const pid_t[]){ 5, 10, 20, 30 }, 4);
        expect_list(l, "cgbalance.slice/tree/a", true, (const pid_t[]){ 5, 20 }, 2);
        expect_list(l, "cgbalance.slice/tree/a", false, (const pid_t[]){ 20 }, 1);
}

Test(cgroup, list_procs_reads_cpu_else_cpuset_else_memory) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);

        expect_list(l, "cgbalance.slice/grp", false, NULL, 0); /* cpu,cpuacct: empty */
        l->cpu_path[0] = '\0';
        expect_list(l, "cgbalance.slice/grp", false, (const pid_t[]){ 7 }, 1);
        l->cpuset_path[0] = '\0';
        expect_list(l, "cgbalance.slice/grp", false, (const pid_t[]){ 8 }, 1);
}

Test(cgroup, list_procs_on_v2_reads_the_group) {
        _cleanup_free_ char *dir = NULL, *procs = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v2", &dir);
        _cleanup_close_ int fd = -EBADF;

        cr_assert_gt(asprintf(&procs, "%s/sys/fs/cgroup/cgbalance.slice/grp/cgroup.procs", dir), 0);
        fd = open(procs, O_WRONLY | O_TRUNC | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "77\n", 3), 3);
        /* groups without cgroup.procs (bad-stat, no-usage) are no groups */
        expect_list(l, "cgbalance.slice", true, (const pid_t[]){ 77 }, 1);
        rm_rf(dir);
}

Test(cgroup, list_procs_of_missing_group_is_enoent) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);
        pid_t *pids = (pid_t *) l;
        size_t n = 4242;

        cr_expect_eq(cgroup_list_procs(l, "cgbalance.slice/gone", true, &pids, &n), -ENOENT);
        cr_expect_eq(cgroup_list_procs(l, "cgbalance.slice/grp", true, NULL, &n), -EINVAL);
        cr_expect_eq(cgroup_list_procs(l, "../grp", true, &pids, &n), -EINVAL);
        cr_expect_eq(n, 4242);
        cr_expect_eq(pids, (pid_t *) l, "written on failure");
}

Test(cgroup, list_procs_rejects_a_malformed_list) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);
        pid_t *pids = NULL;
        size_t n = 4242;

        cr_expect_eq(cgroup_list_procs(l, "cgbalance.slice/bad-procs", false, &pids, &n), -EBADMSG);
        cr_expect_eq(n, 4242);
}

/* The only fixture handed to cgroup_kill_all(): its one process is the test itself. */
Test(cgroup, kill_all_refuses_to_kill_its_caller) {
        _cleanup_free_ char *dir = NULL, *procs = NULL, *pid = NULL;
        _cleanup_free_ CgroupLayout *l = load_copy("cgroup/v2", &dir);
        _cleanup_close_ int fd = -EBADF;

        cr_assert_gt(asprintf(&procs, "%s/sys/fs/cgroup/cgbalance.slice/grp/cgroup.procs", dir), 0);
        cr_assert_gt(asprintf(&pid, "%d\n", (int) getpid()), 0);
        fd = open(procs, O_WRONLY | O_TRUNC | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, pid, strlen(pid)), (ssize_t) strlen(pid));
        cr_expect_eq(cgroup_kill_all(l, "cgbalance.slice/grp", 0), -EDEADLK);
        cr_expect_eq(cgroup_kill_all(l, "cgbalance.slice/gone", 0), -ENOENT);
        rm_rf(dir);
}

/* ---- real cgroups on this machine: root only, each test in its own group */

#define SLICE "cgbalance.slice"

static CgroupLayout live;
static char live_group[128], live_inner[160], live_sibling[160];
static bool live_ready, slice_existed;
static pid_t kids[16];
static size_t n_kids;
static char freezer_group[64]; /* a v1 freezer group of ours, "" if none */

#define FREEZER "/sys/fs/cgroup/freezer"
#define MiB (UINT64_C(1024) * 1024)

static bool dir_exists(const char *base, const char *group) {
        _cleanup_free_ char *p = NULL;
        struct stat st;

        cr_assert_gt(asprintf(&p, "%s/%s", base, group), 0);
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every directory a group of ours lives in, one per mount. */
static size_t live_bases(const char *out[static 5]) {
        const char *all[] = { live.cpu_path, live.cpuacct_path, live.cpuset_path, live.memory_path,
                              live.mode == CGROUP_MODE_V1 ? "" : live.unified_path };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(all); i++) {
                bool dup = false;

                for (size_t j = 0; j < n; j++)
                        dup = dup || streq(out[j], all[i]);
                if (all[i][0] && !dup)
                        out[n++] = all[i];
        }
        return n;
}

static void live_begin(void) {
        int r;

        if (!running_as_root())
                cr_skip_test("needs root to make cgroups");
        r = cgroup_layout_detect(&live);
        if (r < 0)
                cr_skip_test("no cgroup layout: %s", strerror(-r));
        if (!live.cpu_path[0])
                cr_skip_test("no cpu controller here (mode %s)", cgroup_mode_to_string(live.mode));
        slice_existed = dir_exists(live.cpu_path, SLICE);
        (void) snprintf(live_group, sizeof live_group, SLICE "/test-cgroup-%d", (int) getpid());
        (void) snprintf(live_inner, sizeof live_inner, "%s/inner", live_group);
        (void) snprintf(live_sibling, sizeof live_sibling, "%s-sibling", live_group);
        live_ready = true;
}

static void live_create(void) {
        live_begin();
        cr_assert_eq(cgroup_create(&live, live_group), 0);
}

static void live_end(void);

/* Criterion runs no .fini after cr_skip_test(): clean up first, or what the test made stays. */
#define live_skip(...)                     \
        do {                               \
                live_end();                \
                cr_skip_test(__VA_ARGS__); \
        } while (0)

static void need_v1_cpuset(void) {
        if (live.mode == CGROUP_MODE_V2 || !live.cpuset_path[0])
                live_skip("needs a cgroup v1 cpuset (mode %s)", cgroup_mode_to_string(live.mode));
}

/*
 * live_inner, for tests that put processes in both it and live_group. On v2, cgroup_create() would
 * enable the controllers for live_group's children, and v2 keeps processes out of a group that
 * does ("no internal processes"): there it is made by hand, without controllers, still a child
 * group whose processes are live_group's descendants.
 */
static void live_create_inner(void) {
        _cleanup_free_ char *dir = NULL;

        if (live.mode != CGROUP_MODE_V2) {
                cr_assert_eq(cgroup_create(&live, live_inner), 0);
                return;
        }
        cr_assert_gt(asprintf(&dir, "%s/%s", live.unified_path, live_inner), 0);
        cr_assert_eq(mkdir(dir, 0755), 0, "%s: %s", dir, strerror(errno));
}

/* Runs even when an assertion failed: kill our children, then remove what we made, through the
 * code under test and, should that be broken, by hand. */
static void live_end(void) {
        const char *bases[5];
        size_t n;

        /* a frozen child would not die, and waitpid() would wait for ever */
        if (freezer_group[0]) {
                _cleanup_free_ char *p = NULL;
                int fd = -EBADF;

                if (asprintf(&p, FREEZER "/%s/freezer.state", freezer_group) > 0)
                        fd = open(p, O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void) !write(fd, "THAWED", 6);
                        (void) close(fd);
                }
        }
        for (size_t i = 0; i < n_kids; i++) {
                (void) kill(kids[i], SIGKILL);
                (void) waitpid(kids[i], NULL, 0);
        }
        n_kids = 0;
        if (freezer_group[0]) {
                _cleanup_free_ char *p = NULL;

                if (asprintf(&p, FREEZER "/%s", freezer_group) > 0)
                        (void) rmdir(p);
        }
        if (!live_ready)
                return;
        /* what our children left (a forker's children) */
        (void) cgroup_kill_all(&live, live_group, 2 * USEC_PER_SEC);
        (void) cgroup_remove(&live, live_inner);
        (void) cgroup_remove(&live, live_group);
        (void) cgroup_remove(&live, live_sibling);
        n = live_bases(bases);
        for (size_t i = 0; i < n; i++) {
                const char *rel[] = { live_inner, live_group, live_sibling,
                                      slice_existed ? NULL : SLICE };

                for (size_t j = 0; j < ELEMENTSOF(rel) && rel[j]; j++) {
                        _cleanup_free_ char *p = NULL;

                        if (asprintf(&p, "%s/%s", bases[i], rel[j]) > 0)
                                (void) rmdir(p);
                }
        }
}

static void live_write(const char *base, const char *group, const char *file, const char *text) {
        _cleanup_free_ char *p = NULL;
        _cleanup_close_ int fd = -EBADF;

        cr_assert_gt(asprintf(&p, "%s/%s/%s", base, group, file), 0);
        fd = open(p, O_WRONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "%s: %s", p, strerror(errno));
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text), "%s: %s", p,
                     strerror(errno));
}

static char *live_read(const char *base, const char *group, const char *file) {
        _cleanup_free_ char *rel = NULL;

        cr_assert_gt(asprintf(&rel, "%s/%s", group, file), 0);
        return slurp(base, rel);
}

static void sleep_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* ---- children: they never return and never assert; live_end() kills them */

static pid_t spawn(void (*body)(void)) {
        pid_t parent = getpid(), pid;

        cr_assert_lt(n_kids, ELEMENTSOF(kids));
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                /* a timed-out test runs no .fini: do not outlive it (not inherited by forks) */
                die_with_parent(parent);
                body();
                _exit(0);
        }
        kids[n_kids++] = pid;
        return pid;
}

/* Waits up to 5 s for a child that should end and forgets it, so live_end() signals no reused
 * PID; one that does not end fails the test (and live_end() kills it). */
static int reap(pid_t pid) {
        int st = 0;
        pid_t r = 0;

        for (int i = 0; i < 500 && r == 0; i++) {
                r = waitpid(pid, &st, WNOHANG);
                if (r == 0)
                        sleep_ms(10);
        }
        cr_assert_eq(r, pid, "child %d did not end: %s", (int) pid, r < 0 ? strerror(errno) : "");
        for (size_t i = 0; i < n_kids; i++)
                if (kids[i] == pid) {
                        kids[i] = kids[--n_kids];
                        break;
                }
        return st;
}

static bool killed_by_sigkill(int st) {
        return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

static bool still_running(pid_t pid) {
        int st;

        return waitpid(pid, &st, WNOHANG) == 0;
}

static void sleep_forever(void) {
        for (;;)
                pause();
}

static void burn_forever(void) {
        for (volatile unsigned long i = 0;; i++)
                ;
}

static int tid_pipe[2] = { -1, -1 };

static void *second_thread(void *arg) {
        pid_t tid = gettid();

        (void) arg;
        if (write(tid_pipe[1], &tid, sizeof tid) != (ssize_t) sizeof tid)
                _exit(1);
        sleep_forever();
        return NULL;
}

static void two_threads_forever(void) {
        pthread_t t;

        if (pthread_create(&t, NULL, second_thread, NULL) != 0)
                _exit(1);
        sleep_forever();
}

/* A process with two threads; *ret_tid is the second one. */
static pid_t spawn_two_threads(pid_t *ret_tid) {
        pid_t pid;

        cr_assert_eq(pipe2(tid_pipe, O_CLOEXEC), 0);
        pid = spawn(two_threads_forever);
        cr_assert_eq(read(tid_pipe[0], ret_tid, sizeof *ret_tid), (ssize_t) sizeof *ret_tid);
        cr_assert_neq(*ret_tid, pid);
        (void) close(tid_pipe[0]);
        (void) close(tid_pipe[1]);
        return pid;
}

/* The path of thread tid of pid in the hierarchy of controller ("" is cgroup2), from /proc. */
static char *task_cgroup(pid_t pid, pid_t tid, const char *controller) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;

        cr_assert_gt(asprintf(&path, "/proc/%d/task/%d/cgroup", (int) pid, (int) tid), 0);
        f = fopen(path, "re");
        cr_assert_not_null(f, "%s: %s", path, strerror(errno));
        while (getline(&line, &size, f) > 0) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                bool match = false;

                if (!c2)
                        continue;
                *c2 = '\0';
                if (!*controller)
                        match = c2 == c1 + 1 && streq(line, "0:");
                else
                        for (char *s = c1 + 1, *tok; !match && (tok = strsep(&s, ","));)
                                match = streq(tok, controller);
                if (match) {
                        c2[1 + strcspn(c2 + 1, "\n")] = '\0';
                        return strdup(c2 + 1);
                }
        }
        cr_assert_fail("%s has no %s line", path, *controller ? controller : "cgroup2");
        return NULL;
}

static bool task_in(pid_t pid, pid_t tid, const char *controller, const char *group) {
        _cleanup_free_ char *got = task_cgroup(pid, tid, controller);

        return got[0] == '/' && streq(got + 1, group);
}

/* The hierarchies a moved process shows up in: "" is the cgroup2 one. */
static size_t live_hierarchies(const char *out[static 5]) {
        size_t n = 0;

        if (live.mode == CGROUP_MODE_V2) {
                out[n++] = "";
                return n;
        }
        out[n++] = "cpu";
        if (live.cpuacct_path[0])
                out[n++] = "cpuacct";
        if (live.cpuset_path[0])
                out[n++] = "cpuset";
        if (live.memory_path[0])
                out[n++] = "memory";
        if (live.mode == CGROUP_MODE_HYBRID)
                out[n++] = "";
        return n;
}

static const char *weight_file(void) {
        return live.mode == CGROUP_MODE_V2 ? "cpu.weight" : "cpu.shares";
}

TestSuite(cgroup_live, .fini = live_end, .timeout = 30);

Test(cgroup_live, detect_agrees_with_mountinfo) {
        _cleanup_free_ CgroupLayout *mi = calloc(1, sizeof *mi);

        live_begin();
        cr_assert_not_null(mi);
        cr_assert_eq(cgroup_layout_load_at(NULL, mi), 0);
        cr_expect_eq(live.mode, mi->mode, "libcgroup says %s, mountinfo %s",
                     cgroup_mode_to_string(live.mode), cgroup_mode_to_string(mi->mode));
        cr_expect_str_eq(live.cpu_path, mi->cpu_path);
        cr_expect_str_eq(live.cpuacct_path, mi->cpuacct_path);
        cr_expect_str_eq(live.cpuset_path, mi->cpuset_path);
        cr_expect_str_eq(live.memory_path, mi->memory_path);
        cr_expect_str_eq(live.unified_path, mi->unified_path);
}

Test(cgroup_live, create_makes_the_group_in_every_hierarchy) {
        const char *bases[5];
        size_t n;

        live_create();
        n = live_bases(bases);
        cr_assert_geq(n, 1);
        for (size_t i = 0; i < n; i++)
                cr_expect(dir_exists(bases[i], live_group), "%s/%s missing", bases[i], live_group);
}

Test(cgroup_live, create_again_keeps_settings) {
        _cleanup_free_ char *w = NULL;

        live_create();
        cr_assert_eq(cgroup_set_cpu_weight(&live, live_group, 50), 0);
        if (live.cpuset_path[0])
                live_write(live.cpuset_path, live_group, "cpuset.cpus", "0");
        cr_assert_eq(cgroup_create(&live, live_group), 0);
        w = live_read(live.cpu_path, live_group, weight_file());
        cr_expect_str_eq(w, live.mode == CGROUP_MODE_V2 ? "50\n" : "512\n");
        if (live.cpuset_path[0]) {
                _cleanup_free_ char *cpus = live_read(live.cpuset_path, live_group, "cpuset.cpus");

                cr_expect_str_eq(cpus, "0\n");
        }
}

Test(cgroup_live, create_gives_new_v1_groups_their_parent_cpuset) {
        _cleanup_free_ char *top = NULL, *mid = NULL, *leaf = NULL, *mems = NULL;

        live_begin();
        need_v1_cpuset();
        /* live_group does not exist yet: it is made as a parent of inner */
        cr_assert_eq(cgroup_create(&live, live_inner), 0);
        top = live_read(live.cpuset_path, SLICE, "cpuset.cpus");
        mid = live_read(live.cpuset_path, live_group, "cpuset.cpus");
        leaf = live_read(live.cpuset_path, live_inner, "cpuset.cpus");
        mems = live_read(live.cpuset_path, live_inner, "cpuset.mems");
        cr_expect_str_neq(top, "\n", "the slice has no cpus");
        cr_expect_str_eq(mid, top);
        cr_expect_str_eq(leaf, top);
        cr_expect_str_neq(mems, "\n", "no mems");
}

Test(cgroup_live, set_weight_writes_shares_or_weight_file) {
        _cleanup_free_ char *w = NULL;

        live_create();
        cr_assert_eq(cgroup_set_cpu_weight(&live, live_group, 50), 0);
        w = live_read(live.cpu_path, live_group, weight_file());
        cr_expect_str_eq(w, live.mode == CGROUP_MODE_V2 ? "50\n" : "512\n");
}

Test(cgroup_live, get_weight_reads_what_the_file_says) {
        bool v2;
        uint64_t native = 0, weight = 0;

        live_create();
        v2 = live.mode == CGROUP_MODE_V2;
        live_write(live.cpu_path, live_group, weight_file(), v2 ? "97" : "1000");
        cr_assert_eq(cgroup_get_cpu_weight_native(&live, live_group, &native), 0);
        cr_expect_eq(native, v2 ? 97 : 1000);
        cr_assert_eq(cgroup_get_cpu_weight(&live, live_group, &weight), 0);
        cr_expect_eq(weight, v2 ? 97 : 98);
}

Test(cgroup_live, native_weight_restores_exactly) {
        _cleanup_free_ char *w = NULL;
        uint64_t saved = 0;

        live_create();
        live_write(live.cpu_path, live_group, weight_file(),
                   live.mode == CGROUP_MODE_V2 ? "333" : "1000");
        cr_assert_eq(cgroup_get_cpu_weight_native(&live, live_group, &saved), 0);
        cr_assert_eq(cgroup_set_cpu_weight(&live, live_group, 7), 0);
        cr_assert_eq(cgroup_set_cpu_weight_native(&live, live_group, saved), 0);
        w = live_read(live.cpu_path, live_group, weight_file());
        cr_expect_str_eq(w, live.mode == CGROUP_MODE_V2 ? "333\n" : "1000\n");
}

Test(cgroup_live, set_cpuset_writes_cpus_and_mems) {
        _cleanup_cpumask_ CpuMask *cpus = NULL, *mems = NULL;
        _cleanup_free_ char *c = NULL, *m = NULL;

        live_create();
        if (!live.cpuset_path[0])
                live_skip("no cpuset controller here");
        cr_assert_eq(cpumask_parse("0", 64, &cpus, NULL), 0);
        cr_assert_eq(cpumask_parse("0", 64, &mems, NULL), 0);
        cr_assert_eq(cgroup_set_cpuset(&live, live_group, cpus, mems), 0);
        c = live_read(live.cpuset_path, live_group, "cpuset.cpus");
        m = live_read(live.cpuset_path, live_group, "cpuset.mems");
        cr_expect_str_eq(c, "0\n");
        cr_expect_str_eq(m, "0\n");
}

Test(cgroup_live, set_cpuset_naming_a_missing_cpu_is_erange) {
        _cleanup_cpumask_ CpuMask *cpus = NULL;
        _cleanup_free_ char *before = NULL, *after = NULL;
        int r;

        live_create();
        need_v1_cpuset();
        before = live_read(live.cpuset_path, live_group, "cpuset.cpus");
        cr_assert_eq(cpumask_parse("4095", 4096, &cpus, NULL), 0);
        r = cgroup_set_cpuset(&live, live_group, cpus, NULL);
        cr_expect_eq(r, -ERANGE, "got %d (%s)", r, strerror(-r));
        after = live_read(live.cpuset_path, live_group, "cpuset.cpus");
        cr_expect_str_eq(after, before);
}

Test(cgroup_live, set_cpuset_outside_the_parent_is_eacces) {
        _cleanup_cpumask_ CpuMask *cpu0 = NULL, *cpu1 = NULL;
        _cleanup_free_ char *after = NULL;
        int r;

        live_create();
        need_v1_cpuset();
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
                live_skip("needs two CPUs");
        cr_assert_eq(cpumask_parse("0", 64, &cpu0, NULL), 0);
        cr_assert_eq(cpumask_parse("1", 64, &cpu1, NULL), 0);
        cr_assert_eq(cgroup_set_cpuset(&live, live_group, cpu0, NULL), 0);
        cr_assert_eq(cgroup_create(&live, live_inner), 0);
        r = cgroup_set_cpuset(&live, live_inner, cpu1, NULL);
        cr_expect_eq(r, -EACCES, "got %d (%s)", r, strerror(-r));
        after = live_read(live.cpuset_path, live_inner, "cpuset.cpus");
        cr_expect_str_eq(after, "0\n");
}

Test(cgroup_live, attach_pid_moves_every_thread_everywhere) {
        const char *h[5];
        size_t n;
        pid_t pid, tid;

        live_create();
        pid = spawn_two_threads(&tid);
        cr_assert_eq(cgroup_attach_pid(&live, live_group, pid), 0);
        n = live_hierarchies(h);
        for (size_t i = 0; i < n; i++) {
                cr_expect(task_in(pid, pid, h[i], live_group), "main thread not moved in \"%s\"",
                          h[i]);
                cr_expect(task_in(pid, tid, h[i], live_group), "thread %d not moved in \"%s\"",
                          (int) tid, h[i]);
        }
}

Test(cgroup_live, attach_tid_moves_only_that_thread) {
        pid_t pid, tid;

        live_create();
        if (live.mode == CGROUP_MODE_V2)
                live_skip("threads move alone only on cgroup v1");
        pid = spawn_two_threads(&tid);
        cr_assert_eq(cgroup_attach_tid(&live, live_group, tid), 0);
        cr_expect(task_in(pid, tid, "cpu", live_group), "thread not moved");
        cr_expect_not(task_in(pid, pid, "cpu", live_group), "main thread moved too");
        if (live.mode == CGROUP_MODE_HYBRID)
                cr_expect_not(task_in(pid, tid, "", live_group), "mirror took a lone thread");
        if (live.memory_path[0] && !streq(live.memory_path, live.cpu_path))
                cr_expect_not(task_in(pid, tid, "memory", live_group), "memory took a lone thread");
}

Test(cgroup_live, attach_pid_refused_by_empty_cpuset_moves_nothing) {
        pid_t pid;
        int r;

        live_create();
        need_v1_cpuset();
        live_write(live.cpuset_path, live_group, "cpuset.cpus", "\n");
        pid = spawn(sleep_forever);
        r = cgroup_attach_pid(&live, live_group, pid);
        cr_expect_eq(r, -ENOSPC, "got %d (%s)", r, strerror(-r));
        cr_expect_not(task_in(pid, pid, "cpu", live_group), "moved in cpu despite the cpuset");
}

Test(cgroup_live, attach_tid_refused_by_empty_cpuset_moves_nothing) {
        pid_t pid;
        int r;

        live_create();
        need_v1_cpuset();
        live_write(live.cpuset_path, live_group, "cpuset.cpus", "\n");
        pid = spawn(sleep_forever);
        r = cgroup_attach_tid(&live, live_group, pid);
        cr_expect_eq(r, -ENOSPC, "got %d (%s)", r, strerror(-r));
        cr_expect_not(task_in(pid, pid, "cpu", live_group), "moved in cpu despite the cpuset");
}

Test(cgroup_live, attach_of_exited_task_is_esrch) {
        pid_t pid;

        live_create();
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_expect_eq(cgroup_attach_pid(&live, live_group, pid), -ESRCH);
        if (live.mode != CGROUP_MODE_V2)
                cr_expect_eq(cgroup_attach_tid(&live, live_group, pid), -ESRCH);
}

/* Reads a counter of live_group in usec before and after a child burns CPU in it for 300 ms. */
static void expect_grows_beside_a_burner(int (*read)(const CgroupLayout *, const char *,
                                                     uint64_t *),
                                         const char *what, uint64_t min_usec) {
        uint64_t before = 0, after = 0;

        cr_assert_eq(cgroup_attach_pid(&live, live_group, spawn(burn_forever)), 0);
        cr_assert_eq(read(&live, live_group, &before), 0, "%s", what);
        sleep_ms(300);
        cr_assert_eq(read(&live, live_group, &after), 0, "%s", what);
        cr_expect_geq(after, before + min_usec, "%s %" PRIu64 " -> %" PRIu64 " usec", what, before,
                      after);
}

Test(cgroup_live, usage_grows_while_a_child_burns_cpu) {
        live_create();
        /* It had 300 ms of a CPU to itself or nearly: demand a tenth of that. */
        expect_grows_beside_a_burner(cgroup_read_usage, "usage", 30000);
}

Test(cgroup_live, pressure_counts_stalls_of_the_group) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        PsiStats before, after;
        int r;

        live_create();
        if (live.mode == CGROUP_MODE_V1)
                live_skip("no cgroup2 mount: no per-group pressure");
        cr_assert_gt(ncpu, 0);
        if (ncpu + 1 > (long) ELEMENTSOF(kids))
                live_skip("too many CPUs to overload with %zu children", ELEMENTSOF(kids));
        for (long i = 0; i <= ncpu; i++)
                cr_assert_eq(cgroup_attach_pid(&live, live_group, spawn(burn_forever)), 0);
        r = cgroup_read_pressure(&live, live_group, "cpu", &before);
        if (r == -ENOENT || r == -EOPNOTSUPP)
                live_skip("no pressure files for groups: %s", strerror(-r));
        cr_assert_eq(r, 0, "%s", strerror(-r));
        sleep_ms(1000);
        cr_assert_eq(cgroup_read_pressure(&live, live_group, "cpu", &after), 0);
        /* ncpu + 1 busy tasks on ncpu CPUs: one is always waiting. */
        cr_expect_gt(after.some.total_usec, before.some.total_usec + 100000,
                     "some total %" PRIu64 " -> %" PRIu64 " usec", before.some.total_usec,
                     after.some.total_usec);
}

/* Whether a cgroup2 group enables any controller for its children. */
static bool live_controls_children(const char *group) {
        _cleanup_free_ char *ctl = live_read(live.unified_path, group, "cgroup.subtree_control");

        return ctl[strspn(ctl, " \n")] != '\0';
}

Test(cgroup_live, remove_moves_tasks_to_the_parent_and_deletes_everywhere) {
        const char *bases[5], *h[5], *dst = SLICE;
        size_t nb, nh;
        pid_t pid;

        live_create();
        /* v2 keeps processes out of a parent that enables controllers for its children, as
         * cgroup_create() made the slice do: the next one up is the root, which takes them. */
        if (live.mode == CGROUP_MODE_V2 && live_controls_children(SLICE))
                dst = "";
        pid = spawn(sleep_forever);
        cr_assert_eq(cgroup_attach_pid(&live, live_group, pid), 0);
        cr_assert_eq(cgroup_remove(&live, live_group), 0);
        nb = live_bases(bases);
        for (size_t i = 0; i < nb; i++)
                cr_expect_not(dir_exists(bases[i], live_group), "%s/%s left", bases[i], live_group);
        nh = live_hierarchies(h);
        for (size_t i = 0; i < nh; i++)
                cr_expect(task_in(pid, pid, h[i], dst), "not in \"/%s\" in \"%s\"", dst, h[i]);
}

/* Two levels that may not hold the task are passed over, and a parent that may takes it. */
Test(cgroup_live, remove_on_v2_moves_tasks_to_the_nearest_ancestor_that_may_hold_them) {
        _cleanup_free_ char *ctl = NULL, *off = NULL, *dir = NULL, *at = NULL;
        pid_t pid;

        live_create();
        if (live.mode != CGROUP_MODE_V2)
                live_skip("only v2 keeps processes out of groups with controlled children");
        cr_assert_eq(cgroup_create(&live, live_inner), 0);
        cr_assert(live_controls_children(SLICE), "cgroup_create() enabled no controller");
        cr_assert(live_controls_children(live_group), "cgroup_create() enabled no controller");
        pid = spawn(sleep_forever);
        cr_assert_eq(cgroup_attach_pid(&live, live_inner, pid), 0);
        cr_assert_eq(cgroup_remove(&live, live_inner), 0);
        cr_expect_not(dir_exists(live.unified_path, live_inner), "%s left", live_inner);
        at = task_cgroup(pid, pid, "");
        cr_expect_str_eq(at, "/", "neither %s nor %s may hold it, the root may", live_group, SLICE);

        /* With its controllers off, live_group may hold processes and is the nearest. */
        ctl = live_read(live.unified_path, live_group, "cgroup.subtree_control");
        off = calloc(1, 2 * strlen(ctl) + 1);
        cr_assert_not_null(off);
        for (char *p = ctl, *w; (w = strsep(&p, " \n"));)
                if (*w) {
                        strcat(off, *off ? " -" : "-");
                        strcat(off, w);
                }
        live_write(live.unified_path, live_group, "cgroup.subtree_control", off);
        cr_assert_not(live_controls_children(live_group));
        cr_assert_gt(asprintf(&dir, "%s/%s", live.unified_path, live_inner), 0);
        cr_assert_eq(mkdir(dir, 0755), 0, "%s: %s", dir, strerror(errno));
        cr_assert_eq(cgroup_attach_pid(&live, live_inner, pid), 0);
        cr_assert_eq(cgroup_remove(&live, live_inner), 0);
        cr_expect_not(dir_exists(live.unified_path, live_inner), "%s left", live_inner);
        cr_expect(task_in(pid, pid, "", live_group), "not moved to %s", live_group);
}

Test(cgroup_live, remove_with_a_child_group_is_ebusy_and_changes_nothing) {
        _cleanup_free_ char *inner = NULL;
        const char *bases[5];
        size_t n;

        live_create();
        /* A child in one hierarchy only: libcgroup alone would remove the group from the
         * others before failing on this one. */
        cr_assert_gt(asprintf(&inner, "%s/%s", live.cpu_path, live_inner), 0);
        cr_assert_eq(mkdir(inner, 0755), 0, "%s: %s", inner, strerror(errno));
        cr_expect_eq(cgroup_remove(&live, live_group), -EBUSY);
        n = live_bases(bases);
        for (size_t i = 0; i < n; i++)
                cr_expect(dir_exists(bases[i], live_group), "%s/%s gone", bases[i], live_group);
        cr_expect(dir_exists(live.cpu_path, live_inner), "%s gone", inner);
}

Test(cgroup_live, remove_of_missing_group_is_enoent) {
        live_begin();
        cr_expect_eq(cgroup_remove(&live, live_group), -ENOENT);
}

Test(cgroup_live, set_weight_of_missing_group_is_enoent) {
        live_begin();
        cr_expect_eq(cgroup_set_cpu_weight(&live, live_group, 100), -ENOENT);
}

/* ---- levers past the weight, live */

/* Skips when the kernel has no cpu.idle (before 5.15). */
static void need_cpu_idle(void) {
        bool idle;
        int r = cgroup_get_cpu_idle(&live, live_group, &idle);

        if (r == -EOPNOTSUPP)
                live_skip("no cpu.idle on this kernel");
        cr_assert_eq(r, 0, "%s", strerror(-r));
}

Test(cgroup_live, idle_is_written_and_read_back) {
        _cleanup_free_ char *on = NULL, *off = NULL;
        bool idle = false;

        live_create();
        need_cpu_idle();
        cr_assert_eq(cgroup_set_cpu_idle(&live, live_group, true), 0);
        on = live_read(live.cpu_path, live_group, "cpu.idle");
        cr_expect_str_eq(on, "1\n");
        cr_assert_eq(cgroup_get_cpu_idle(&live, live_group, &idle), 0);
        cr_expect(idle);
        cr_assert_eq(cgroup_set_cpu_idle(&live, live_group, false), 0);
        off = live_read(live.cpu_path, live_group, "cpu.idle");
        cr_expect_str_eq(off, "0\n");
}

static const char *quota_file(void) {
        return live.mode == CGROUP_MODE_V2 ? "cpu.max" : "cpu.cfs_quota_us";
}

Test(cgroup_live, quota_is_written_and_the_period_kept) {
        bool v2;
        _cleanup_free_ char *limited = NULL, *unlimited = NULL;
        uint64_t quota = 0, period = 0;

        live_create();
        v2 = live.mode == CGROUP_MODE_V2;
        /* not the default period: the daemon must leave it as it finds it */
        if (v2)
                live_write(live.cpu_path, live_group, "cpu.max", "max 50000");
        else
                live_write(live.cpu_path, live_group, "cpu.cfs_period_us", "50000");
        cr_assert_eq(cgroup_get_cpu_quota(&live, live_group, &quota, &period), 0);
        cr_expect_eq(quota, CGROUP_QUOTA_NONE);
        cr_expect_eq(period, 50000);
        cr_assert_eq(cgroup_set_cpu_quota(&live, live_group, 25000), 0);
        limited = live_read(live.cpu_path, live_group, quota_file());
        cr_expect_str_eq(limited, v2 ? "25000 50000\n" : "25000\n");
        cr_assert_eq(cgroup_get_cpu_quota(&live, live_group, &quota, &period), 0);
        cr_expect_eq(quota, 25000);
        cr_expect_eq(period, 50000);
        cr_assert_eq(cgroup_set_cpu_quota(&live, live_group, CGROUP_QUOTA_NONE), 0);
        unlimited = live_read(live.cpu_path, live_group, quota_file());
        cr_expect_str_eq(unlimited, v2 ? "max 50000\n" : "-1\n");
}

Test(cgroup_live, throttled_grows_while_a_quota_holds_a_burner_back) {
        live_create();
        cr_assert_eq(cgroup_set_cpu_quota(&live, live_group, 10000), 0); /* 10% of a CPU */
        /* held back for about 90% of 300 ms, less if others keep it waiting: demand a tenth */
        expect_grows_beside_a_burner(cgroup_read_cpu_throttled, "throttled", 30000);
}

Test(cgroup_live, levers_of_a_missing_group_are_enoent) {
        uint64_t v;
        bool idle;

        live_begin();
        cr_expect_eq(cgroup_set_cpu_idle(&live, live_group, true), -ENOENT);
        cr_expect_eq(cgroup_set_cpu_quota(&live, live_group, 50000), -ENOENT);
        cr_expect_eq(cgroup_get_cpu_idle(&live, live_group, &idle), -ENOENT);
        cr_expect_eq(cgroup_get_cpu_quota(&live, live_group, &v, NULL), -ENOENT);
        cr_expect_eq(cgroup_read_cpu_throttled(&live, live_group, &v), -ENOENT);
}

/* ---- memory limits, live */

static void need_memory(void) {
        if (!live.memory_path[0])
                live_skip("no memory controller here (mode %s)", cgroup_mode_to_string(live.mode));
}

static const char *limit_file(void) {
        return live.mode == CGROUP_MODE_V2 ? "memory.max" : "memory.limit_in_bytes";
}

static const char *swap_file(void) {
        return live.mode == CGROUP_MODE_V2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
}

static int go_pipe[2] = { -1, -1 }, done_pipe[2] = { -1, -1 };
static size_t touch_bytes;

/* Waits for the parent's go, touches touch_bytes of fresh memory, says so and sleeps. */
static void touch_memory(void) {
        char c, *p;

        if (read(go_pipe[0], &c, 1) != 1)
                _exit(1);
        p = mmap(NULL, touch_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                _exit(2);
        for (size_t i = 0; i < touch_bytes; i += 4096)
                p[i] = 1;
        if (write(done_pipe[1], "x", 1) != 1)
                _exit(3);
        sleep_forever();
}

/* A child in live_group that touches bytes once it is there: true once it has, false if it
 * died trying. */
static bool run_toucher(size_t bytes, pid_t *ret_pid) {
        pid_t pid;
        ssize_t n;
        char c;

        touch_bytes = bytes;
        cr_assert_eq(pipe2(go_pipe, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(done_pipe, O_CLOEXEC), 0);
        pid = spawn(touch_memory);
        (void) close(go_pipe[0]);
        (void) close(done_pipe[1]);
        cr_assert_eq(cgroup_attach_pid(&live, live_group, pid), 0);
        cr_assert_eq(write(go_pipe[1], "g", 1), 1);
        n = read(done_pipe[0], &c, 1); /* 0: the child's end closed, it is dead */
        (void) close(go_pipe[1]);
        (void) close(done_pipe[0]);
        *ret_pid = pid;
        return n == 1;
}

Test(cgroup_live, memory_max_bounds_the_peak_of_a_child) {
        _cleanup_free_ char *limit = NULL;
        uint64_t peak = 0;
        pid_t pid;
        int r;

        live_create();
        need_memory();
        cr_assert_eq(cgroup_set_memory_max(&live, live_group, 32 * MiB), 0);
        limit = live_read(live.memory_path, live_group, limit_file());
        cr_expect_str_eq(limit, "33554432\n");
        cr_assert(run_toucher(16 * MiB, &pid), "the child died touching 16 MiB of 32");
        r = cgroup_read_memory_peak(&live, live_group, &peak);
        if (r == -EOPNOTSUPP)
                live_skip("no memory.peak: Linux before 5.19");
        cr_assert_eq(r, 0, "%s", strerror(-r));
        cr_expect_geq(peak, 16 * MiB, "peak %" PRIu64, peak);
        cr_expect_leq(peak, 32 * MiB, "peak %" PRIu64, peak);
}

Test(cgroup_live, memory_max_oom_kills_a_child_going_over_it) {
        pid_t pid;
        int st;

        live_create();
        need_memory();
        cr_assert_eq(cgroup_set_memory_max(&live, live_group, 32 * MiB), 0);
        cr_assert_not(run_toucher(64 * MiB, &pid), "the child touched 64 MiB under 32");
        st = reap(pid);
        cr_expect(killed_by_sigkill(st), "status %#x", st);
}

/* Down, up, down, up: a wrong order of limit and memsw limit is EINVAL on v1. */
Test(cgroup_live, memory_max_keeps_swap_out_of_the_limit) {
        static const uint64_t steps[] = { 32 * MiB, 64 * MiB, 16 * MiB, 48 * MiB };
        _cleanup_free_ char *swap_path = NULL;

        live_create();
        need_memory();
        cr_assert_gt(asprintf(&swap_path, "%s/%s/%s", live.memory_path, live_group, swap_file()),
                     0);
        if (access(swap_path, F_OK) < 0)
                live_skip("no swap accounting: %s", swap_path);
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                _cleanup_free_ char *want = NULL, *limit = NULL, *swap = NULL;
                int r = cgroup_set_memory_max(&live, live_group, steps[i]);

                cr_assert_eq(r, 0, "%" PRIu64 ": %s", steps[i], strerror(-r));
                cr_assert_gt(asprintf(&want, "%" PRIu64 "\n", steps[i]), 0);
                limit = live_read(live.memory_path, live_group, limit_file());
                swap = live_read(live.memory_path, live_group, swap_file());
                cr_expect_str_eq(limit, want);
                cr_expect_str_eq(swap, live.mode == CGROUP_MODE_V2 ? "0\n" : want);
        }
}

Test(cgroup_live, memory_max_below_use_is_ebusy_on_v1_and_keeps_the_limit) {
        _cleanup_free_ char *limit = NULL;
        pid_t pid;
        int r;

        live_create();
        need_memory();
        if (live.mode == CGROUP_MODE_V2)
                live_skip("v2 takes the limit and OOM-kills instead");
        cr_assert_eq(cgroup_set_memory_max(&live, live_group, 64 * MiB), 0);
        cr_assert(run_toucher(16 * MiB, &pid), "the child died touching 16 MiB of 64");
        /* no swap: the child's anonymous memory cannot be reclaimed */
        r = cgroup_set_memory_max(&live, live_group, 4 * MiB);
        cr_expect_eq(r, -EBUSY, "got %d (%s)", r, strerror(-r));
        limit = live_read(live.memory_path, live_group, limit_file());
        cr_expect_str_eq(limit, "67108864\n");
        cr_expect(still_running(pid), "the child was killed");
}

/* ---- listing and killing, live */

static char *pid_text(pid_t pid) {
        char *s = NULL;

        cr_assert_gt(asprintf(&s, "%d", (int) pid), 0);
        return s;
}

Test(cgroup_live, list_procs_lists_attached_processes_once) {
        pid_t a, b, tid;

        live_create();
        live_create_inner();
        a = spawn_two_threads(&tid);
        b = spawn(sleep_forever);
        cr_assert_eq(cgroup_attach_pid(&live, live_group, a), 0);
        cr_assert_eq(cgroup_attach_pid(&live, live_inner, b), 0);
        expect_list(&live, live_group, false, (const pid_t[]){ a }, 1);
        expect_list(&live, live_inner, false, (const pid_t[]){ b }, 1);
        expect_list(&live, live_group, true,
                    a < b ? (const pid_t[]){ a, b } : (const pid_t[]){ b, a }, 2);
}

Test(cgroup_live, list_procs_of_missing_group_is_enoent) {
        pid_t *pids = NULL;
        size_t n = 4242;

        live_begin();
        cr_expect_eq(cgroup_list_procs(&live, live_group, false, &pids, &n), -ENOENT);
        cr_expect_eq(n, 4242);
}

/* Forks a child every millisecond, each living 5 s unless killed; SIGCHLD ignored, so the
 * children that end are reaped at once. */
static void fork_forever(void) {
        (void) signal(SIGCHLD, SIG_IGN);
        for (;;) {
                if (fork() == 0) {
                        sleep_ms(5000);
                        _exit(0);
                }
                sleep_ms(1);
        }
}

/* A process in the slice everywhere but in base, where it is in live_group. */
static pid_t spawn_split(const char *base) {
        _cleanup_free_ char *text = NULL;
        pid_t pid = spawn(sleep_forever);

        text = pid_text(pid);
        cr_assert_eq(cgroup_attach_pid(&live, SLICE, pid), 0);
        live_write(base, live_group, "cgroup.procs", text);
        return pid;
}

Test(cgroup_live, kill_all_ends_a_forking_group_its_children_and_nothing_else) {
        pid_t forker, inner, outside, in_sibling, in_parent = 0, split_mem = 0, split_mirror = 0;
        const char *bases[5];
        size_t nb;
        int r;

        live_create();
        live_create_inner();
        cr_assert_eq(cgroup_create(&live, live_sibling), 0);
        forker = spawn(fork_forever);
        inner = spawn(sleep_forever);
        outside = spawn(sleep_forever);
        in_sibling = spawn(sleep_forever);
        cr_assert_eq(cgroup_attach_pid(&live, live_group, forker), 0);
        cr_assert_eq(cgroup_attach_pid(&live, live_inner, inner), 0);
        /* Its name starts with the group's: a match by prefix would take it. */
        cr_assert_eq(cgroup_attach_pid(&live, live_sibling, in_sibling), 0);
        /* On v2 the slice enables controllers for the groups in it and may hold no process. */
        if (live.mode != CGROUP_MODE_V2) {
                in_parent = spawn(sleep_forever);
                cr_assert_eq(cgroup_attach_pid(&live, SLICE, in_parent), 0);
        }
        /* In the group in one hierarchy only: in memory, not in cpu, which lists processes. */
        if (live.mode != CGROUP_MODE_V2 && live.memory_path[0] &&
            !streq(live.memory_path, live.cpu_path))
                split_mem = spawn_split(live.memory_path);
        if (live.mode == CGROUP_MODE_HYBRID)
                split_mirror = spawn_split(live.unified_path);
        sleep_ms(100); /* some 100 children by now */
        r = cgroup_kill_all(&live, live_group, 5 * USEC_PER_SEC);
        cr_assert_eq(r, 0, "%s", strerror(-r));
        nb = live_bases(bases);
        for (size_t i = 0; i < nb; i++) {
                _cleanup_free_ char *g = live_read(bases[i], live_group, "cgroup.procs");
                _cleanup_free_ char *in = live_read(bases[i], live_inner, "cgroup.procs");

                cr_expect_str_empty(g, "left in %s/%s: %s", bases[i], live_group, g);
                cr_expect_str_empty(in, "left in %s/%s: %s", bases[i], live_inner, in);
        }
        cr_expect(killed_by_sigkill(reap(forker)), "forker");
        cr_expect(killed_by_sigkill(reap(inner)), "process in the child group");
        if (split_mem)
                cr_expect(killed_by_sigkill(reap(split_mem)), "process in the memory group only");
        if (split_mirror)
                cr_expect(killed_by_sigkill(reap(split_mirror)), "process in the mirror only");
        cr_expect(still_running(outside), "a process outside was killed");
        cr_expect(still_running(in_sibling), "a process in a sibling group was killed");
        if (in_parent)
                cr_expect(still_running(in_parent), "a process in the parent group was killed");
        cr_expect_eq(cgroup_remove(&live, live_inner), 0);
        cr_expect_eq(cgroup_remove(&live, live_group), 0);
}

/* What the kernel does: an exited process leaves cgroup.procs at once, zombie or not, and
 * does not keep its group busy. */
Test(cgroup_live, kill_all_returns_while_a_killed_child_is_an_unreaped_zombie) {
        _cleanup_free_ char *stat_path = NULL, *stat = NULL;
        siginfo_t si = {};
        const char *state;
        pid_t pid;

        live_create();
        pid = spawn(sleep_forever);
        cr_assert_eq(cgroup_attach_pid(&live, live_group, pid), 0);
        cr_assert_eq(cgroup_kill_all(&live, live_group, 5 * USEC_PER_SEC), 0);
        cr_assert_eq(waitid(P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
        cr_expect_eq(si.si_pid, pid, "not dead when kill_all returned");
        cr_expect_eq(si.si_code, CLD_KILLED);
        cr_expect_eq(si.si_status, SIGKILL);
        cr_assert_gt(asprintf(&stat_path, "/proc/%d/stat", (int) pid), 0);
        stat = read_all(stat_path);
        state = strrchr(stat, ')');
        cr_assert_not_null(state, "%s: \"%s\"", stat_path, stat);
        cr_expect_eq(state[2], 'Z', "state %c", state[2]);
        cr_expect_eq(cgroup_remove(&live, live_group), 0, "the zombie keeps the group busy");
        cr_expect(killed_by_sigkill(reap(pid)));
}

/* v1-frozen tasks do not die of SIGKILL until thawed (measured on 6.18: state D, listed). */
Test(cgroup_live, kill_all_gives_up_with_ebusy_on_frozen_processes) {
        _cleanup_free_ char *text = NULL, *fstate = NULL, *dir = NULL;
        _cleanup_free_ pid_t *left = NULL;
        uint64_t t0, t1;
        size_t n = 0;
        pid_t pid;
        int r;

        live_create();
        if (access(FREEZER "/tasks", F_OK) < 0)
                live_skip("no cgroup v1 freezer at " FREEZER);
        pid = spawn(sleep_forever);
        text = pid_text(pid);
        cr_assert_eq(cgroup_attach_pid(&live, live_group, pid), 0);
        (void) snprintf(freezer_group, sizeof freezer_group, "test-cgroup-%d", (int) getpid());
        cr_assert_gt(asprintf(&dir, FREEZER "/%s", freezer_group), 0);
        cr_assert_eq(mkdir(dir, 0755), 0, "%s: %s", dir, strerror(errno));
        live_write(FREEZER, freezer_group, "cgroup.procs", text);
        live_write(FREEZER, freezer_group, "freezer.state", "FROZEN");
        for (int i = 0; i < 200; i++) {
                fstate = mfree(fstate);
                fstate = live_read(FREEZER, freezer_group, "freezer.state");
                if (streq(fstate, "FROZEN\n"))
                        break;
                sleep_ms(10);
        }
        cr_assert_str_eq(fstate, "FROZEN\n");
        t0 = now_usec();
        r = cgroup_kill_all(&live, live_group, USEC_PER_SEC / 5);
        t1 = now_usec();
        cr_expect_eq(r, -EBUSY, "got %d (%s)", r, strerror(-r));
        cr_expect_geq(t1 - t0, USEC_PER_SEC / 5, "gave up after %" PRIu64 " usec", t1 - t0);
        cr_expect_lt(t1 - t0, 2 * USEC_PER_SEC, "gave up after %" PRIu64 " usec", t1 - t0);
        cr_assert_eq(cgroup_list_procs(&live, live_group, false, &left, &n), 0);
        cr_expect_eq(n, 1, "the frozen process is gone");
        live_write(FREEZER, freezer_group, "freezer.state", "THAWED");
        r = cgroup_kill_all(&live, live_group, 5 * USEC_PER_SEC);
        cr_expect_eq(r, 0, "after thawing: %d (%s)", r, strerror(-r));
        cr_expect(killed_by_sigkill(reap(pid)));
}

Test(cgroup_live, kill_all_of_missing_group_is_enoent) {
        live_begin();
        cr_expect_eq(cgroup_kill_all(&live, live_group, 0), -ENOENT);
}

/* ---- rooted readers of the tree: cgroup_walk() and the effective cpuset */

/* A v2 layout whose every path is the directory root (a tmp tree). */
static CgroupLayout *v2_layout_at(const char *root) {
        CgroupLayout *l = calloc(1, sizeof *l);

        cr_assert_not_null(l);
        l->mode = CGROUP_MODE_V2;
        (void) snprintf(l->unified_path, sizeof l->unified_path, "%s", root);
        (void) snprintf(l->cpu_path, sizeof l->cpu_path, "%s", root);
        (void) snprintf(l->cpuset_path, sizeof l->cpuset_path, "%s", root);
        return l;
}

typedef struct Visits {
        char seen[16][64];
        unsigned depth[16];
        size_t n;
        const char *prune; /* not descended into */
        const char *fail_at; /* returns -EIO there */
        bool fd_ok; /* every dir_fd held the group's own marker */
} Visits;

static int visit(const char *path, unsigned depth, int dir_fd, void *userdata) {
        Visits *v = userdata;
        struct stat st;

        cr_assert_lt(v->n, ELEMENTSOF(v->seen));
        (void) snprintf(v->seen[v->n], sizeof v->seen[0], "%s", path);
        v->depth[v->n++] = depth;
        if (fstat(dir_fd, &st) < 0 || !S_ISDIR(st.st_mode))
                v->fd_ok = false;
        if (v->fail_at && streq(path, v->fail_at))
                return -EIO;
        return !(v->prune && streq(path, v->prune));
}

static bool visited(const Visits *v, const char *path, unsigned depth) {
        for (size_t i = 0; i < v->n; i++)
                if (streq(v->seen[i], path))
                        return v->depth[i] == depth;
        return false;
}

static char *walk_tree(void) {
        char *tmp = make_tmpdir();
        _cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0);
        write_file_at(fd, "cgroup.procs", "");
        write_file_at(fd, "a.slice/cgroup.procs", "1\n");
        write_file_at(fd, "a.slice/x/cgroup.procs", "");
        write_file_at(fd, "a.slice/x/deep/cgroup.procs", "");
        write_file_at(fd, "b.slice/cgroup.procs", "");
        write_file_at(fd, "not-a-group", "a file, not walked\n");
        return tmp;
}

Test(cgroup_walk, visits_every_group_parent_first_with_its_depth) {
        _cleanup_free_ char *tmp = walk_tree();
        _cleanup_free_ CgroupLayout *l = v2_layout_at(tmp);
        Visits v = { .fd_ok = true };

        cr_assert_eq(cgroup_walk(l, visit, NULL, &v), 0);
        cr_expect_eq(v.n, 4, "walked %zu", v.n);
        cr_expect(visited(&v, "a.slice", 1));
        cr_expect(visited(&v, "a.slice/x", 2));
        cr_expect(visited(&v, "a.slice/x/deep", 3));
        cr_expect(visited(&v, "b.slice", 1));
        cr_expect_not(visited(&v, "not-a-group", 1), "a file is no group");
        cr_expect(v.fd_ok, "dir_fd is the group's directory");
        for (size_t i = 0; i < v.n; i++)
                for (size_t j = i + 1; j < v.n; j++)
                        cr_expect(strncmp(v.seen[j], v.seen[i], strlen(v.seen[j])) != 0 ||
                                          v.seen[i][strlen(v.seen[j])] != '/',
                                  "%s after its child %s", v.seen[j], v.seen[i]);
        rm_rf(tmp);
}

Test(cgroup_walk, zero_leaves_the_children_out_and_an_error_stops) {
        _cleanup_free_ char *tmp = walk_tree();
        Visits pruned = { .prune = "a.slice", .fd_ok = true }, failed = { .fail_at = "a.slice/x" };

        cr_assert_eq(cgroup_walk_at(tmp, visit, NULL, &pruned), 0);
        cr_expect_eq(pruned.n, 2, "only a.slice and b.slice: %zu", pruned.n);
        cr_expect(visited(&pruned, "a.slice", 1));
        cr_expect_not(visited(&pruned, "a.slice/x", 2));
        cr_expect_eq(cgroup_walk_at(tmp, visit, NULL, &failed), -EIO);
        cr_expect_not(visited(&failed, "a.slice/x/deep", 3), "walked on after the error");
        rm_rf(tmp);
}

static int count_groups(const char *path, unsigned depth, int dir_fd, void *userdata) {
        unsigned *max_depth = userdata;

        (void) path, (void) dir_fd;
        if (depth > *max_depth)
                *max_depth = depth;
        return 1;
}

Test(cgroup_walk, depth_limit_bounds_the_recursion) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char path[CGROUP_WALK_DEPTH_MAX * 2 + 16] = "";
        unsigned max_depth = 0;

        cr_assert_geq(fd, 0);
        for (unsigned i = 0; i < CGROUP_WALK_DEPTH_MAX + 3; i++)
                strcat(path, "d/");
        strcat(path, "f");
        write_file_at(fd, path, "");
        cr_assert_eq(cgroup_walk_at(tmp, count_groups, NULL, &max_depth), 0);
        cr_expect_eq(max_depth, CGROUP_WALK_DEPTH_MAX, "deepest visited: %u", max_depth);
        rm_rf(tmp);
}

/* What cgroup_walk()'s skipped was told. */
typedef struct Skips {
        char path[8][CGROUP_PATH_MAX + 300];
        unsigned depth[8];
        CgroupWalkSkip why[8];
        size_t n;
        unsigned walked_depth; /* the deepest group given to fn */
        bool walked_bad; /* fn was given a group with a control character */
        const char *prune; /* fn leaves its children out */
} Skips;

static int walk_all(const char *path, unsigned depth, int dir_fd, void *userdata) {
        Skips *k = userdata;

        (void) dir_fd;
        if (depth > k->walked_depth)
                k->walked_depth = depth;
        for (const char *p = path; *p; p++)
                if ((unsigned char) *p < ' ' || *p == 0x7f)
                        k->walked_bad = true;
        return !(k->prune && streq(path, k->prune));
}

static int skip_seen(const char *path, unsigned depth, CgroupWalkSkip why, void *userdata) {
        Skips *k = userdata;

        cr_assert_lt(k->n, ELEMENTSOF(k->path));
        cr_assert_lt(strlen(path), sizeof k->path[0]);
        strcpy(k->path[k->n], path);
        k->depth[k->n] = depth;
        k->why[k->n++] = why;
        return 0;
}

/* The index of path in what skipped was told, or -1. */
static ssize_t skipped_at(const Skips *k, const char *path) {
        for (size_t i = 0; i < k->n; i++)
                if (streq(k->path[i], path))
                        return (ssize_t) i;
        return -1;
}

/* a/tab<TAB>name/child, esc<ESC>[31m, ok/cr<CR>; and a chain of d/ 34 deep below ok. */
static char *skip_tree(char deep33[static CGROUP_PATH_MAX]) {
        char *tmp = make_tmpdir();
        _cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char chain[CGROUP_PATH_MAX] = "ok";

        cr_assert_geq(fd, 0);
        write_file_at(fd, "a/tab\tname/child/cgroup.procs", "");
        write_file_at(fd, "esc\x1b[31m/cgroup.procs", "");
        write_file_at(fd, "ok/cr\r/cgroup.procs", "");
        for (unsigned depth = 1; depth < CGROUP_WALK_DEPTH_MAX + 2; depth++) {
                strcat(chain, "/d");
                if (depth + 1 == CGROUP_WALK_DEPTH_MAX + 1)
                        strcpy(deep33, chain);
        }
        strcat(chain, "/cgroup.procs");
        write_file_at(fd, chain, ""); /* ok/d/.../d: 34 groups deep */
        return tmp;
}

Test(cgroup_walk, groups_passed_over_are_told_once_with_why_and_nothing_below_them) {
        char deep33[CGROUP_PATH_MAX];
        _cleanup_free_ char *tmp = skip_tree(deep33);
        Skips k = {};
        ssize_t i;

        cr_assert_eq(cgroup_walk_at(tmp, walk_all, skip_seen, &k), 0);
        cr_expect_eq(k.n, 4, "told of %zu", k.n);
        cr_expect_eq(k.walked_depth, CGROUP_WALK_DEPTH_MAX);
        cr_expect_not(k.walked_bad, "fn was given a name with a control character");
        i = skipped_at(&k, "a/tab\tname");
        cr_expect(i >= 0 && k.why[i] == CGROUP_WALK_SKIP_CONTROL_CHAR && k.depth[i] == 2);
        i = skipped_at(&k, "esc\x1b[31m");
        cr_expect(i >= 0 && k.why[i] == CGROUP_WALK_SKIP_CONTROL_CHAR && k.depth[i] == 1);
        i = skipped_at(&k, "ok/cr\r");
        cr_expect(i >= 0 && k.why[i] == CGROUP_WALK_SKIP_CONTROL_CHAR && k.depth[i] == 2);
        i = skipped_at(&k, deep33);
        cr_expect(i >= 0 && k.why[i] == CGROUP_WALK_SKIP_TOO_DEEP &&
                          k.depth[i] == CGROUP_WALK_DEPTH_MAX + 1,
                  "the group 33 deep: %zd", i);
        rm_rf(tmp);
}

Test(cgroup_walk, a_pruned_group_s_children_are_neither_walked_nor_told) {
        char deep33[CGROUP_PATH_MAX];
        _cleanup_free_ char *tmp = skip_tree(deep33);
        Skips k = { .prune = "a" };

        /* fn leaves a's children out: its tab child is not told of; nor is the deep one below
         * a group at the limit that fn does not ask to walk */
        cr_assert_eq(cgroup_walk_at(tmp, walk_all, skip_seen, &k), 0);
        cr_expect_lt(skipped_at(&k, "a/tab\tname"), 0);
        cr_expect_geq(skipped_at(&k, "esc\x1b[31m"), 0);
        *strrchr(deep33, '/') = '\0';
        k = (Skips){ .prune = deep33 };
        cr_assert_eq(cgroup_walk_at(tmp, walk_all, skip_seen, &k), 0);
        cr_expect_eq(k.n, 3, "told of %zu", k.n);
        rm_rf(tmp);
}

static int skip_fails(const char *path, unsigned depth, CgroupWalkSkip why, void *userdata) {
        (void) path, (void) depth, (void) why, (void) userdata;
        return -ENOMEM;
}

Test(cgroup_walk, without_skipped_they_pass_in_silence_and_its_error_stops) {
        char deep33[CGROUP_PATH_MAX];
        _cleanup_free_ char *tmp = skip_tree(deep33);
        Skips k = {};

        cr_expect_eq(cgroup_walk_at(tmp, walk_all, NULL, &k), 0);
        cr_expect_eq(k.walked_depth, CGROUP_WALK_DEPTH_MAX);
        cr_expect_not(k.walked_bad);
        cr_expect_eq(cgroup_walk_at(tmp, walk_all, skip_fails, &k), -ENOMEM);
        rm_rf(tmp);
}

Test(cgroup_walk, a_path_too_long_is_told_with_its_whole_name) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char name[256], path[CGROUP_PATH_MAX + 300] = "";
        Skips k = {};
        ssize_t i;

        cr_assert_geq(fd, 0);
        memset(name, 'n', 255);
        name[255] = '\0';
        /* 16 names of 255 and their slashes: 4095 bytes, the longest group path; one more is
         * too long */
        for (int depth = 0, dir = dup(fd); depth < 17; depth++) {
                int sub;

                if (depth > 0)
                        strcat(path, "/");
                strcat(path, name);
                if (depth == 15)
                        cr_assert_eq(strlen(path), CGROUP_PATH_MAX - 1);
                /* one level at a time: the whole path is beyond PATH_MAX */
                cr_assert_eq(mkdirat(dir, name, 0755), 0, "%s", strerror(errno));
                sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                cr_assert_geq(sub, 0);
                (void) close(dir);
                dir = sub;
                if (depth == 16)
                        (void) close(dir);
        }
        cr_assert_eq(cgroup_walk_at(tmp, walk_all, skip_seen, &k), 0);
        cr_expect_eq(k.walked_depth, 16);
        i = skipped_at(&k, path);
        cr_expect(i >= 0 && k.why[i] == CGROUP_WALK_SKIP_TOO_LONG && k.depth[i] == 17,
                  "told of %zu", k.n);
        rm_rf(tmp);
}

Test(cgroup_walk, root_follows_the_cpu_hierarchy_and_missing_roots_fail) {
        _cleanup_free_ CgroupLayout *v1 = load_fixture("cgroup/v1", NULL),
                                    *hy = load_fixture("cgroup/hybrid", NULL),
                                    *v2 = load_fixture("cgroup/v2", NULL);
        CgroupLayout none = { .mode = CGROUP_MODE_NONE };
        unsigned d = 0;

        cr_expect_str_eq(cgroup_walk_root(v1), v1->cpu_path);
        cr_expect_str_eq(cgroup_walk_root(hy), hy->cpu_path);
        cr_expect_str_eq(cgroup_walk_root(v2), v2->unified_path);
        cr_expect_str_eq(cgroup_walk_root(&none), "");
        cr_expect_eq(cgroup_walk(&none, count_groups, NULL, &d), -EOPNOTSUPP);
        cr_expect_eq(cgroup_walk_at("/nonexistent-cgbalance", count_groups, NULL, &d), -ENOENT);
        cr_expect_eq(cgroup_walk_at(NULL, count_groups, NULL, &d), -EINVAL);
        cr_expect_eq(cgroup_walk(v2, NULL, NULL, &d), -EINVAL);
}

Test(cgroup_walk, walks_the_v1_fixture_tree) {
        _cleanup_free_ CgroupLayout *l = load_fixture("cgroup/v1", NULL);
        Visits v = { .fd_ok = true };

        cr_assert_eq(cgroup_walk(l, visit, NULL, &v), 0);
        cr_expect(visited(&v, "cgbalance.slice", 1));
        cr_expect(visited(&v, "cgbalance.slice/grp", 2));
        cr_expect(visited(&v, "cgbalance.slice/tree", 2));
}

static char *cpuset_tree(void) {
        char *tmp = make_tmpdir();
        _cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0);
        write_file_at(fd, "cpuset.cpus.effective", "0-7\n");
        write_file_at(fd, "a/cpuset.cpus.effective", "2-3\n");
        write_file_at(fd, "a/b/cgroup.procs", ""); /* no cpuset controller: follows a */
        write_file_at(fd, "nul/cpuset.cpus.effective", "");
        {
                _cleanup_close_ int nul =
                        openat(fd, "nul/cpuset.cpus.effective", O_WRONLY | O_TRUNC | O_CLOEXEC);

                cr_assert_geq(nul, 0);
                cr_assert_eq(write(nul, "1\0\n", 3), 3); /* "1" as a C string */
        }
        write_file_at(fd, "bad/cpuset.cpus.effective", "3-1\n");
        write_file_at(fd, "proc/42/cgroup", "0::/a/b\n");
        write_file_at(fd, "proc/43/cgroup", "0::/\n");
        return tmp;
}

static bool mask_is(const CpuMask *m, const char *want) {
        _cleanup_free_ char *got = NULL;

        cr_assert_eq(cpumask_format(m, &got), 0);
        return streq(got, want);
}

Test(cgroup_cpuset, v2_reads_the_effective_file_or_the_nearest_ancestors) {
        _cleanup_free_ char *tmp = cpuset_tree();
        _cleanup_free_ CgroupLayout *l = v2_layout_at(tmp);
        _cleanup_cpumask_ CpuMask *a = NULL, *ab = NULL, *root = NULL;

        cr_assert_eq(cgroup_read_cpuset_cpus(l, "a", 8, &a), 0);
        cr_expect(mask_is(a, "2-3"));
        cr_assert_eq(cgroup_read_cpuset_cpus(l, "a/b", 8, &ab), 0);
        cr_expect(mask_is(ab, "2-3"), "a/b has no file: a's");
        cr_assert_eq(cgroup_read_cpuset_cpus(l, "", 8, &root), 0);
        cr_expect(mask_is(root, "0-7"));
        rm_rf(tmp);
}

Test(cgroup_cpuset, errors_are_sorted_and_write_nothing) {
        _cleanup_free_ char *tmp = cpuset_tree();
        _cleanup_free_ CgroupLayout *l = v2_layout_at(tmp);
        CgroupLayout nocpuset = *l;
        CpuMask *m = NULL;

        nocpuset.cpuset_path[0] = '\0';
        cr_expect_eq(cgroup_read_cpuset_cpus(&nocpuset, "a", 8, &m), -EOPNOTSUPP);
        cr_expect_eq(cgroup_read_cpuset_cpus(l, "nul", 8, &m), -EBADMSG);
        cr_expect_lt(cgroup_read_cpuset_cpus(l, "bad", 8, &m), 0);
        cr_expect_lt(cgroup_read_cpuset_cpus(l, "a", 2, &m), 0, "CPU 3 beyond a capacity of 2");
        cr_expect_eq(cgroup_read_cpuset_cpus(l, "../a", 8, &m), -EINVAL);
        cr_expect_eq(cgroup_read_cpuset_cpus(l, "a", 8, NULL), -EINVAL);
        cr_expect_null(m);
        rm_rf(tmp);
}

Test(cgroup_cpuset, v1_falls_back_to_cpuset_cpus_on_old_kernels) {
        _cleanup_free_ char *tmp = make_tmpdir();
        _cleanup_close_ int fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_cpumask_ CpuMask *m = NULL, *e = NULL;
        CgroupLayout l = { .mode = CGROUP_MODE_V1 };

        cr_assert_geq(fd, 0);
        (void) snprintf(l.cpuset_path, sizeof l.cpuset_path, "%s", tmp);
        write_file_at(fd, "g/cpuset.cpus", "1\n");
        write_file_at(fd, "h/cpuset.effective_cpus", "0\n");
        write_file_at(fd, "h/cpuset.cpus", "0-1\n");
        cr_assert_eq(cgroup_read_cpuset_cpus(&l, "g", 4, &m), 0);
        cr_expect(mask_is(m, "1"));
        cr_assert_eq(cgroup_read_cpuset_cpus(&l, "h", 4, &e), 0);
        cr_expect(mask_is(e, "0"), "effective_cpus first");
        rm_rf(tmp);
}

Test(cgroup_cpuset, task_cpuset_follows_its_proc_cgroup_line) {
        _cleanup_free_ char *tmp = cpuset_tree(), *proc = NULL;
        _cleanup_free_ CgroupLayout *l = v2_layout_at(tmp);
        _cleanup_cpumask_ CpuMask *m = NULL, *r = NULL;
        _cleanup_close_ int proc_fd = -EBADF;
        CpuMask *none = NULL;

        cr_assert_gt(asprintf(&proc, "%s/proc", tmp), 0);
        proc_fd = open(proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(proc_fd, 0);
        cr_assert_eq(cgroup_read_task_cpuset_cpus(l, proc_fd, 42, 8, &m), 0);
        cr_expect(mask_is(m, "2-3"));
        cr_assert_eq(cgroup_read_task_cpuset_cpus(l, proc_fd, 43, 8, &r), 0);
        cr_expect(mask_is(r, "0-7"));
        cr_expect_eq(cgroup_read_task_cpuset_cpus(l, proc_fd, 44, 8, &none), -ESRCH);
        cr_expect_null(none);
        rm_rf(tmp);
}
