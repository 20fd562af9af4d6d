/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_uptime_parse() on arbitrary text: no crash, no read past the text, the output untouched
 * on failure, and a parsed uptime is whole hundredths of a second that, printed back the
 * kernel's way ("%lu.%02lu %lu.%02lu\n"), parse to the same value.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UNTOUCHED UINT64_C(4242)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1);
        uint64_t usec = UNTOUCHED, again = UNTOUCHED;
        char line[64];
        int n;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (proc_uptime_parse(text, &usec) < 0) {
                if (usec != UNTOUCHED)
                        abort();
                return 0;
        }
        if (usec % 10000 != 0)
                abort();
        n = snprintf(line, sizeof line, "%" PRIu64 ".%02" PRIu64 " 0.00\n", usec / 1000000,
                     usec % 1000000 / 10000);
        if (n < 0 || (size_t) n >= sizeof line)
                abort();
        if (proc_uptime_parse(line, &again) < 0 || again != usec)
                abort();
        return 0;
}
