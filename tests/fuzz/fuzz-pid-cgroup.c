/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc_cgroup_parse() on arbitrary /proc/PID/cgroup text, asked for the cgroup2 line and for two
 * v1 controllers: no crash, no read past the text, the output untouched on failure, and a found
 * path is the rest of one line after its ":/", which a one-line text of that hierarchy gives back
 * unchanged.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const char *text, const char *controller) {
        _cleanup_free_ char *path = NULL, *rest = NULL, *line = NULL, *again = NULL;
        char untouched = 0, *none = &untouched;
        int r;

        r = proc_cgroup_parse(text, controller, &none);
        if (r < 0) {
                if (none != &untouched || (r != -EBADMSG && r != -ENODATA && r != -ENOMEM))
                        abort();
                return;
        }
        path = none;
        /* The rest of one line after its ":/", verbatim. Not validated: "0:://x" gives "/x",
         * which the caller's cgroup_path_is_valid() refuses. */
        if (strchr(path, '\n') || asprintf(&rest, ":/%s\n", path) < 0)
                abort();
        if (!strstr(text, rest))
                abort();
        if (asprintf(&line, "%s:%s:/%s\n", controller ? "7" : "0", controller ? controller : "",
                     path) < 0)
                abort();
        if (proc_cgroup_parse(line, controller, &again) < 0 || !streq(again, path))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1);

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        check(text, NULL);
        check(text, "cpuset");
        check(text, "cpu");
        return 0;
}
