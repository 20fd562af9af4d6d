/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "load.h"

int no_load_run(const LoadOptions *o, LoadResult *ret) {
        uint64_t deadline = load_ready(o), start = now_usec();

        while (!load_should_stop(o, deadline))
                load_nap(deadline, 100000);
        load_result(o, start, ret);
        return 0;
}

/* The harness runs the job once more, unmeasured, before each cacherun run and does not evict
 * the tree from the page cache: the load itself is nothing. */
int cacherun_run(const LoadOptions *o, LoadResult *ret) {
        return no_load_run(o, ret);
}
