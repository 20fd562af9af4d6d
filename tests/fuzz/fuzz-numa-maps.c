/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_numa_maps_parse() and proc_statm_parse() on arbitrary text: no crash, no read past the
 * text, the output untouched on failure; a parsed numa_maps sum is the same whichever node the
 * text is asked about first (the parser keeps no state), and every node's sum is at most what
 * the text's lines can hold: parsing with one line more (a copy of the text's first line) never
 * gives less.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UNTOUCHED UINT64_C(4242)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1), *twice = NULL;
        uint64_t kib = UNTOUCHED, again = UNTOUCHED, more = UNTOUCHED, pages = UNTOUCHED;
        const char *eol;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (proc_statm_parse(text, &pages) < 0 && pages != UNTOUCHED)
                abort();
        for (unsigned node = 0; node < 3; node++) {
                kib = again = UNTOUCHED;
                if (proc_numa_maps_parse(text, node, &kib) < 0) {
                        if (kib != UNTOUCHED)
                                abort();
                        continue;
                }
                if (proc_numa_maps_parse(text, node, &again) < 0 || again != kib)
                        abort();
                eol = strchr(text, '\n');
                if (!eol)
                        continue;
                twice = malloc(size + (size_t) (eol - text) + 2);
                if (!twice)
                        return 0;
                memcpy(twice, text, (size_t) (eol - text) + 1);
                memcpy(twice + (eol - text) + 1, text, size + 1);
                more = UNTOUCHED;
                /* The copy may overflow the sum: then an error, never a smaller sum. */
                if (proc_numa_maps_parse(twice, node, &more) == 0 && more < kib)
                        abort();
                free(twice);
                twice = NULL;
        }
        return 0;
}
