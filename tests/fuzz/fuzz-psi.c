/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* psi_parse() on arbitrary text: no crash, ret untouched on failure, in-range values on success. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "psi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool line_ok(const PsiLine *l) {
        return l->avg10_permyriad <= PSI_PERMYRIAD_MAX && l->avg60_permyriad <= PSI_PERMYRIAD_MAX &&
               l->avg300_permyriad <= PSI_PERMYRIAD_MAX;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const PsiStats untouched = { .some.total_usec = 4242, .full.avg10_permyriad = 4242 };
        _cleanup_free_ char *text = malloc(size + 1);
        PsiStats s = untouched;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (psi_parse(text, &s) < 0) {
                if (memcmp(&s, &untouched, sizeof s) != 0)
                        abort();
                return 0;
        }
        if (!line_ok(&s.some) || !line_ok(&s.full))
                abort();
        if (!s.has_full && memcmp(&s.full, &(PsiLine){}, sizeof s.full) != 0)
                abort();
        return 0;
}
