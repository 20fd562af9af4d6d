/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "parse.h"

#define SENTINEL UINT64_C(4242)

Test(parse, prefix_reads_digits_and_stops_at_the_first_other_byte) {
        static const struct {
                const char *text;
                uint64_t want;
                size_t used;
        } cases[] = {
                { "0", 0, 1 },
                { "7 rest", 7, 1 },
                { "0012\n", 12, 4 },
                { "123abc", 123, 3 },
                { "18446744073709551615", UINT64_MAX, 20 },
                { "42/task", 42, 2 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *p = cases[i].text;
                uint64_t v = SENTINEL;

                cr_assert_eq(parse_u64_prefix(&p, UINT64_MAX, &v), 0, "\"%s\"", cases[i].text);
                cr_expect_eq(v, cases[i].want, "\"%s\"", cases[i].text);
                cr_expect_eq(p, cases[i].text + cases[i].used, "\"%s\"", cases[i].text);
        }
}

Test(parse, prefix_refuses_what_strtoull_would_take) {
        static const char *const cases[] = { "", " 1", "-1", "+1", "\t1", "x1", "\n" };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *p = cases[i];
                uint64_t v = SENTINEL;

                cr_expect_eq(parse_u64_prefix(&p, UINT64_MAX, &v), -EINVAL, "\"%s\"", cases[i]);
                cr_expect_eq(v, SENTINEL, "\"%s\"", cases[i]);
                cr_expect_eq(p, cases[i], "\"%s\" moved p", cases[i]);
        }
}

Test(parse, prefix_overflow_and_max_are_erange_and_leave_p) {
        static const struct {
                const char *text;
                uint64_t max;
                int want;
                uint64_t value;
        } cases[] = {
                { "18446744073709551616", UINT64_MAX, -ERANGE, 0 }, /* UINT64_MAX + 1 */
                { "99999999999999999999999", UINT64_MAX, -ERANGE, 0 },
                { "2147483647", INT32_MAX, 0, INT32_MAX },
                { "2147483648", INT32_MAX, -ERANGE, 0 },
                { "5", 5, 0, 5 },
                { "6", 5, -ERANGE, 0 },
                { "9", 5, -ERANGE, 0 }, /* a digit above a small max */
                { "0", 0, 0, 0 },
                { "1", 0, -ERANGE, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *p = cases[i].text;
                uint64_t v = SENTINEL;
                int r = parse_u64_prefix(&p, cases[i].max, &v);

                cr_expect_eq(r, cases[i].want, "\"%s\" max %" PRIu64 ": %d", cases[i].text,
                             cases[i].max, r);
                if (r == 0)
                        cr_expect_eq(v, cases[i].value, "\"%s\"", cases[i].text);
                else {
                        cr_expect_eq(v, SENTINEL, "\"%s\" wrote ret", cases[i].text);
                        cr_expect_eq(p, cases[i].text, "\"%s\" moved p", cases[i].text);
                }
        }
}

Test(parse, span_takes_exactly_n_digits) {
        uint64_t v = SENTINEL;

        cr_assert_eq(parse_u64_span("123456", 3, &v), 0);
        cr_expect_eq(v, 123, "read past n");
        cr_assert_eq(parse_u64_span("18446744073709551615", 20, &v), 0);
        cr_expect_eq(v, UINT64_MAX);
        cr_assert_eq(parse_u64_span("0\n", 1, &v), 0);
        cr_expect_eq(v, 0);
}

Test(parse, span_refuses_empty_non_digits_and_overflow_in_order) {
        static const struct {
                const char *text;
                int want;
        } cases[] = {
                { "", -EINVAL },
                { "12 ", -EINVAL },
                { "1\n", -EINVAL },
                { "-1", -EINVAL },
                { "1.5", -EINVAL },
                { "18446744073709551616", -ERANGE },
                { "999999999999999999999x", -ERANGE }, /* overflow comes before the x */
                { "9x99999999999999999999", -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v = SENTINEL;

                cr_expect_eq(parse_u64_span(cases[i].text, strlen(cases[i].text), &v),
                             cases[i].want, "\"%s\"", cases[i].text);
                cr_expect_eq(v, SENTINEL, "\"%s\" wrote ret", cases[i].text);
        }
}

Test(parse, span_never_reads_past_n) {
        char buf[3] = { '4', '2', '7' }; /* no terminator: n bounds the read */
        uint64_t v = SENTINEL;

        cr_assert_eq(parse_u64_span(buf, 2, &v), 0);
        cr_expect_eq(v, 42);
        cr_expect_eq(parse_u64_span(buf, 0, &v), -EINVAL);
}
