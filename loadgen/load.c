/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "load.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"

const Load loads[] = {
        { "no_load", "Nothing: sleeps for the duration (the baseline).", "units", "-", 1,
          no_load_run },
        { "process_load", "4 x ncpus processes in a ring of pipes pass a few tokens round.",
          "token hops", "token hops / 10^4", 10000, process_load_run },
        { "mem_load", "Walks a buffer (--mem) page by page in a cache-hostile stride.", "passes",
          "passes", 1, mem_load_run },
};
const size_t n_loads = ELEMENTSOF(loads);

const Load *load_find(const char *name) {
        for (size_t i = 0; i < n_loads; i++)
                if (streq(loads[i].name, name))
                        return &loads[i];
        return NULL;
}

void load_options_init(LoadOptions *o) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        *o = (LoadOptions){
                .duration_usec = 1000000,
                .ncpus = n > 0 ? (unsigned) n : 1,
                .mem_bytes = MEM_LOAD_DEFAULT_BYTES,
        };
}

uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

uint64_t rusage_usec(int who) {
        struct rusage ru;

        if (getrusage(who, &ru) < 0)
                return 0;
        return (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
               (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

bool load_should_stop(const LoadOptions *o, uint64_t deadline_usec) {
        return (o->stop && *o->stop) || now_usec() >= deadline_usec;
}

void load_nap(uint64_t deadline_usec, uint64_t max_usec) {
        uint64_t now = now_usec(), d;
        struct timespec ts;

        if (now >= deadline_usec)
                return;
        d = MIN(deadline_usec - now, max_usec);
        ts = (struct timespec){ .tv_sec = (time_t) (d / 1000000),
                                .tv_nsec = (long) (d % 1000000) * 1000 };
        (void) nanosleep(&ts, NULL); /* EINTR: the caller checks its stop flag */
}

int parse_seconds(const char *s, uint64_t *ret_usec) {
        unsigned long long whole;
        uint64_t frac = 0, scale = 100000;
        char *end;

        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        whole = strtoull(s, &end, 10);
        if (errno == ERANGE || whole > 1000000)
                return -ERANGE;
        if (*end == '.') {
                end++;
                if (!isdigit((unsigned char) *end))
                        return -EINVAL;
                for (; isdigit((unsigned char) *end); end++) {
                        if (scale == 0)
                                return -EINVAL; /* finer than a microsecond */
                        frac += (uint64_t) (*end - '0') * scale;
                        scale /= 10;
                }
        }
        if (*end != '\0')
                return -EINVAL;
        if (whole == 0 && frac == 0)
                return -ERANGE;
        *ret_usec = (uint64_t) whole * 1000000 + frac;
        return 0;
}

int parse_size(const char *s, uint64_t *ret_bytes) {
        static const char suffixes[] = "KMGT";
        unsigned long long v;
        unsigned shift = 0;
        char *end;

        if (!s || !isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (*end != '\0') {
                const char *p = strchr(suffixes, toupper((unsigned char) *end));

                if (!p)
                        return -EINVAL;
                shift = 10 * (unsigned) (p - suffixes + 1);
                end++;
                if (streq(end, "iB") || streq(end, "B"))
                        end += strlen(end);
                if (*end != '\0')
                        return -EINVAL;
        }
        if (v == 0)
                return -ERANGE;
        if (shift && v > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret_bytes = (uint64_t) v << shift;
        return 0;
}
