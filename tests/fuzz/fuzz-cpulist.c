/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpumask_parse() on arbitrary text: no crash, and whatever parses formats back to itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpumask.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_cpumask_ CpuMask *m = NULL, *again = NULL;
        _cleanup_free_ char *s = NULL, *text = malloc(size + 1);

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (cpumask_parse(text, 4096, &m, NULL) < 0)
                return 0;
        if (cpumask_format(m, &s) < 0)
                abort();
        if (cpumask_parse(s, 4096, &again, NULL) < 0 || !cpumask_equal(m, again))
                abort();
        return 0;
}
