/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* event_parse() on arbitrary text: no crash, ret untouched on failure, and what it accepts is in
 * range: formatting it again gives a line that parses back to the same event. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1), *again = NULL;
        _cleanup_free_ Event *e = calloc(1, sizeof *e), *back = calloc(1, sizeof *back);

        if (!text || !e || !back)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        e->pid = -42;
        if (event_parse(text, e) < 0) {
                if (e->pid != -42)
                        abort();
                return 0;
        }
        if (event_format(e, &again) < 0 || event_parse(again, back) < 0 ||
            memcmp(e, back, sizeof *e) != 0)
                abort();
        return 0;
}
