/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"

Test(clock, timespec_to_usec_rounds_down) {
        struct timespec ts = { .tv_sec = 3, .tv_nsec = 999999999 };

        cr_expect_eq(timespec_to_usec(&ts), UINT64_C(3999999));
        ts = (struct timespec){ .tv_sec = 0, .tv_nsec = 999 };
        cr_expect_eq(timespec_to_usec(&ts), 0);
        ts = (struct timespec){ .tv_sec = 0, .tv_nsec = 1000 };
        cr_expect_eq(timespec_to_usec(&ts), 1);
}

Test(clock, timespec_to_nsec_is_exact) {
        struct timespec ts = { .tv_sec = 2, .tv_nsec = 5 };

        cr_expect_eq(timespec_to_nsec(&ts), UINT64_C(2000000005));
}

Test(clock, negative_timespec_is_zero) {
        struct timespec ts = { .tv_sec = -1, .tv_nsec = 0 };

        cr_expect_eq(timespec_to_usec(&ts), 0);
        cr_expect_eq(timespec_to_nsec(&ts), 0);
}

Test(clock, usec_to_timespec_round_trips) {
        static const uint64_t cases[] = { 0, 1, 999999, 1000000, 1500000, UINT64_C(86400000001) };

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                struct timespec ts = usec_to_timespec(cases[i]);

                cr_expect_lt(ts.tv_nsec, 1000000000L);
                cr_expect_eq(timespec_to_usec(&ts), cases[i], "%" PRIu64, cases[i]);
        }
}

Test(clock, now_usec_is_monotonic_and_sleep_usec_sleeps) {
        uint64_t t0 = now_usec(), t1;

        cr_expect_gt(t0, 0);
        sleep_usec(20000);
        t1 = now_usec();
        cr_expect_geq(t1 - t0, 20000, "slept %" PRIu64 " usec", t1 - t0);
}

Test(clock, clock_usec_matches_the_clock_it_names) {
        struct timespec ts;
        uint64_t mine, libc;

        cr_assert_eq(clock_gettime(CLOCK_REALTIME, &ts), 0);
        libc = timespec_to_usec(&ts);
        mine = clock_usec(CLOCK_REALTIME);
        cr_expect_geq(mine, libc);
        cr_expect_lt(mine - libc, 5 * USEC_PER_SEC);
        cr_expect_eq(clock_usec((clockid_t) 12345), 0, "an invalid clock");
}
