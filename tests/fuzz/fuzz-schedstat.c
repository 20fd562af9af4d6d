/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_task_schedstat_parse() on arbitrary text: no crash, no read past the text, ret untouched
 * on failure, and what parses, printed back the kernel's way ("%llu %llu %lu\n"), parses to the
 * same three numbers.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const TaskSchedstat untouched = { .run_ns = 4242,
                                                 .wait_ns = 4242,
                                                 .timeslices = 42 };
        _cleanup_free_ char *text = malloc(size + 1);
        TaskSchedstat s = untouched, again;
        char line[PROC_SCHEDSTAT_BUF_SIZE];
        int n;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (proc_task_schedstat_parse(text, &s) < 0) {
                if (memcmp(&s, &untouched, sizeof s) != 0)
                        abort();
                return 0;
        }
        /* Whatever parses was one line: it ends in the only newline. */
        if (size == 0 || text[strlen(text) - 1] != '\n' ||
            strchr(text, '\n') != text + strlen(text) - 1)
                abort();
        n = snprintf(line, sizeof line, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", s.run_ns,
                     s.wait_ns, s.timeslices);
        if (n < 0 || (size_t) n >= sizeof line)
                abort();
        if (proc_task_schedstat_parse(line, &again) < 0 || memcmp(&s, &again, sizeof s) != 0)
                abort();
        return 0;
}
