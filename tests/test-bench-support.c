/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/support.h"
#include "testutil.h"

Test(bench_support, median_u64_sorts_and_takes_the_middle) {
        uint64_t v[] = { 9, 1, 5, 3, 7 };

        cr_expect_eq(bench_median_u64(v, ELEMENTSOF(v)), 5);
        cr_expect_eq(v[0], 1, "sorted: v[0] is the best");
        cr_expect_eq(v[4], 9);
}

Test(bench_support, median_u64_even_takes_the_upper_and_empty_is_zero) {
        uint64_t v[] = { 4, 1, 3, 2 };

        cr_expect_eq(bench_median_u64(v, ELEMENTSOF(v)), 3);
        cr_expect_eq(bench_median_u64(v, 0), 0);
}

Test(bench_support, median_double_leaves_v_and_gives_the_range) {
        const double v[] = { 2.5, -1.0, 10.0, 0.5, 3.0 };
        double lo = 0, hi = 0;

        cr_expect_float_eq(bench_median(v, ELEMENTSOF(v), &lo, &hi), 2.5, 1e-12);
        cr_expect_float_eq(lo, -1.0, 1e-12);
        cr_expect_float_eq(hi, 10.0, 1e-12);
        cr_expect_float_eq(v[1], -1.0, 1e-12, "v was sorted");
        cr_expect_float_eq(bench_median(v, 1, NULL, NULL), 2.5, 1e-12);
        cr_expect_float_eq(bench_median(v, 0, &lo, &hi), 0.0, 1e-12);
}

Test(bench_support, in_path_and_check_tools) {
        static const BenchTool present[] = { { "sh", "dash" } };
        static const BenchTool missing[] = { { "sh", "dash" },
                                             { "no-such-tool-cgbalance", "nothing" } };

        cr_expect(bench_in_path("sh"));
        cr_expect_not(bench_in_path("no-such-tool-cgbalance"));
        bench_error_reported = false;
        cr_expect_eq(bench_check_tools(present, ELEMENTSOF(present)), 0);
        cr_expect_not(bench_error_reported);
        cr_expect_eq(bench_check_tools(missing, ELEMENTSOF(missing)), -ENOENT);
        cr_expect(bench_error_reported);
}

Test(bench_support, dir_exists_only_for_directories) {
        _cleanup_free_ char *tmp = make_tmpdir();

        cr_assert_not_null(tmp);
        cr_expect(bench_dir_exists(tmp, "."));
        cr_expect_not(bench_dir_exists(tmp, "missing"));
        cr_expect(bench_dir_exists("/", "tmp"));
        cr_expect_not(bench_dir_exists("/", "etc/passwd"));
        rm_rf(tmp);
}
