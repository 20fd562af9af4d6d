/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* topology_parse_distances() on arbitrary text: no crash; whatever it accepts is a square matrix
 * that topology_check_distances() accepts too (the parser promises both). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1);
        _cleanup_free_ unsigned *m = NULL;
        unsigned n = 0;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (topology_parse_distances(text, &m, &n, NULL) < 0)
                return 0;
        if (n == 0 || topology_check_distances(m, n, NULL) < 0)
                abort();
        return 0;
}
