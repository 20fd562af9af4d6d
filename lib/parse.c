/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "parse.h"

#include <errno.h>
#include <stdbool.h>

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* v * 10 + d, or false if that is above max. */
static bool push_digit(uint64_t *v, char c, uint64_t max) {
        unsigned d = (unsigned) (c - '0');

        if (*v > max / 10 || d > max - *v * 10)
                return false;
        *v = *v * 10 + d;
        return true;
}

int parse_u64_prefix(const char **p, uint64_t max, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;

        if (!is_digit(*s))
                return -EINVAL;
        for (; is_digit(*s); s++)
                if (!push_digit(&v, *s, max))
                        return -ERANGE;
        *p = s;
        *ret = v;
        return 0;
}

int parse_u64_span(const char *s, size_t n, uint64_t *ret) {
        uint64_t v = 0;

        if (n == 0)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!is_digit(s[i]))
                        return -EINVAL;
                if (!push_digit(&v, s[i], UINT64_MAX))
                        return -ERANGE;
        }
        *ret = v;
        return 0;
}
