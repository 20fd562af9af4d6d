/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>

#include "cpumask.h"

static char *roundtrip(const char *in, unsigned capacity) {
        _cleanup_cpumask_ CpuMask *m = NULL;
        char *out = NULL;

        cr_assert_eq(cpumask_parse(in, capacity, &m, NULL), 0, "parse \"%s\"", in);
        cr_assert_eq(cpumask_format(m, &out), 0);
        return out;
}

Test(cpumask, parse_then_format_gives_canonical_ranges) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "0-3,8,10-11", "0-3,8,10-11" },
                { "0,1,2,3", "0-3" },
                { "3,1,2,0", "0-3" },
                { "0-2,1-5", "0-5" },
                { "7", "7" },
                { "0-0", "0" },
                { " 0-1\n", "0-1" },
                { "", "" },
                { "\n", "" },
                { "1,3,5,7", "1,3,5,7" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = roundtrip(cases[i].in, 16);
                cr_expect_str_eq(out, cases[i].out, "\"%s\"", cases[i].in);
        }
}

Test(cpumask, parse_rejects_malformed_lists_with_position) {
        static const struct {
                const char *in;
                int err;
                size_t pos;
        } cases[] = {
                { ",", -EINVAL, 0 },       { "1,", -EINVAL, 1 },
                { ",1", -EINVAL, 0 },      { "-1", -EINVAL, 0 },
                { "3-1", -EINVAL, 0 },     { "1-2-3", -EINVAL, 3 },
                { "a", -EINVAL, 0 },       { "1 2", -EINVAL, 1 },
                { "0-", -EINVAL, 0 },      { "1,,2", -EINVAL, 2 },
                { "0-7:2", -EINVAL, 3 },   { "16", -ERANGE, 0 },
                { "0,15-16", -ERANGE, 2 }, { "99999999999999999999", -ERANGE, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CpuMask *m = NULL;
                size_t pos = 999;

                cr_expect_eq(cpumask_parse(cases[i].in, 16, &m, &pos), cases[i].err, "\"%s\"",
                             cases[i].in);
                cr_expect_eq(pos, cases[i].pos, "\"%s\": error at %zu", cases[i].in, pos);
                cr_expect_null(m, "\"%s\" wrote the result on failure", cases[i].in);
        }
}

Test(cpumask, holds_4096_cpus) {
        _cleanup_cpumask_ CpuMask *m = NULL;
        _cleanup_free_ char *s = NULL;

        cr_assert_eq(cpumask_parse("0-4095", 4096, &m, NULL), 0);
        cr_expect_eq(cpumask_count(m), 4096);
        cr_expect(cpumask_isset(m, 4095));
        cr_expect_eq(cpumask_set(m, 4096), -ERANGE);
        cpumask_clear(m, 2048);
        cr_assert_eq(cpumask_format(m, &s), 0);
        cr_expect_str_eq(s, "0-2047,2049-4095");
        cr_expect_geq(cpumask_cpu_set_size(m), 4096 / 8);
}

Test(cpumask, format_worst_case_fits) {
        _cleanup_cpumask_ CpuMask *m = cpumask_new(CPUMASK_MAX_CPUS);
        _cleanup_free_ char *s = NULL;

        for (unsigned c = 0; c < CPUMASK_MAX_CPUS; c += 2)
                cr_assert_eq(cpumask_set(m, c), 0);
        cr_assert_eq(cpumask_format(m, &s), 0);
        cr_expect_str_eq(s + strlen(s) - 9, "8188,8190");
}

Test(cpumask, new_refuses_zero_and_oversized_capacity) {
        cr_expect_null(cpumask_new(0));
        cr_expect_null(cpumask_new(CPUMASK_MAX_CPUS + 1));
}

Test(cpumask, set_operations_across_capacities) {
        _cleanup_cpumask_ CpuMask *a = NULL, *b = NULL, *d = cpumask_new(64);
        _cleanup_free_ char *s1 = NULL, *s2 = NULL, *s3 = NULL;

        cr_assert_eq(cpumask_parse("0-7", 8, &a, NULL), 0);
        cr_assert_eq(cpumask_parse("4-11,40", 128, &b, NULL), 0);
        cpumask_and(d, a, b);
        cr_assert_eq(cpumask_format(d, &s1), 0);
        cr_expect_str_eq(s1, "4-7");
        cpumask_or(d, a, b);
        cr_assert_eq(cpumask_format(d, &s2), 0);
        cr_expect_str_eq(s2, "0-11,40");
        cpumask_andnot(d, b, a);
        cr_assert_eq(cpumask_format(d, &s3), 0);
        cr_expect_str_eq(s3, "8-11,40");
        cr_expect(cpumask_intersects(a, b));
        cr_expect_not(cpumask_is_subset(a, b));
        cr_expect(cpumask_is_subset(d, b));
}

Test(cpumask, andnot_in_place_with_equal_sizes) {
        _cleanup_cpumask_ CpuMask *a = NULL, *b = NULL;
        _cleanup_free_ char *s = NULL;

        cr_assert_eq(cpumask_parse("0-15", 16, &a, NULL), 0);
        cr_assert_eq(cpumask_parse("2-13", 16, &b, NULL), 0);
        cpumask_andnot(a, a, b);
        cr_assert_eq(cpumask_format(a, &s), 0);
        cr_expect_str_eq(s, "0-1,14-15");
}

Test(cpumask, equal_ignores_capacity) {
        _cleanup_cpumask_ CpuMask *a = NULL, *b = NULL, *c = NULL;

        cr_assert_eq(cpumask_parse("1,5", 8, &a, NULL), 0);
        cr_assert_eq(cpumask_parse("1,5", 1024, &b, NULL), 0);
        cr_assert_eq(cpumask_parse("1,5,900", 1024, &c, NULL), 0);
        cr_expect(cpumask_equal(a, b));
        cr_expect_not(cpumask_equal(a, c));
        cr_expect_not(cpumask_equal(c, a));
}

Test(cpumask, foreach_visits_each_cpu_in_order) {
        _cleanup_cpumask_ CpuMask *m = NULL;
        int seen[8], n = 0;

        cr_assert_eq(cpumask_parse("2,3,9,63", 64, &m, NULL), 0);
        CPUMASK_FOREACH(c, m)
                seen[n++] = c;
        cr_assert_eq(n, 4);
        cr_expect_eq(seen[0], 2);
        cr_expect_eq(seen[1], 3);
        cr_expect_eq(seen[2], 9);
        cr_expect_eq(seen[3], 63);
}

Test(cpumask, copy_is_independent) {
        _cleanup_cpumask_ CpuMask *a = NULL, *b = NULL;

        cr_assert_eq(cpumask_parse("0-3", 8, &a, NULL), 0);
        b = cpumask_copy(a);
        cr_assert_not_null(b);
        cpumask_clear(a, 0);
        cr_expect(cpumask_isset(b, 0));
        cr_expect_eq(cpumask_count(b), 4);
}
