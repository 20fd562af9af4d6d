/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "clock.h"

#include <errno.h>

uint64_t timespec_to_usec(const struct timespec *ts) {
        if (ts->tv_sec < 0 || ts->tv_nsec < 0)
                return 0;
        return (uint64_t) ts->tv_sec * USEC_PER_SEC + (uint64_t) ts->tv_nsec / NSEC_PER_USEC;
}

uint64_t timespec_to_nsec(const struct timespec *ts) {
        if (ts->tv_sec < 0 || ts->tv_nsec < 0)
                return 0;
        return (uint64_t) ts->tv_sec * NSEC_PER_SEC + (uint64_t) ts->tv_nsec;
}

struct timespec usec_to_timespec(uint64_t usec) {
        return (struct timespec){ .tv_sec = (time_t) (usec / USEC_PER_SEC),
                                  .tv_nsec = (long) (usec % USEC_PER_SEC * NSEC_PER_USEC) };
}

uint64_t clock_usec(clockid_t clock_id) {
        struct timespec ts;

        if (clock_gettime(clock_id, &ts) < 0)
                return 0;
        return timespec_to_usec(&ts);
}

uint64_t clock_nsec(clockid_t clock_id) {
        struct timespec ts;

        if (clock_gettime(clock_id, &ts) < 0)
                return 0;
        return timespec_to_nsec(&ts);
}

uint64_t now_usec(void) {
        return clock_usec(CLOCK_MONOTONIC);
}

void sleep_usec(uint64_t usec) {
        struct timespec ts = usec_to_timespec(usec);

        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
                ;
}
