/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/resource.h>

#include "load.h"

int no_load_run(const LoadOptions *o, LoadResult *ret) {
        uint64_t start = now_usec(), cpu0 = rusage_usec(RUSAGE_SELF);
        uint64_t deadline = start + o->duration_usec;

        while (!load_should_stop(o, deadline))
                load_nap(deadline, 100000);

        *ret = (LoadResult){
                .work = 0,
                .elapsed_usec = now_usec() - start,
                .cpu_usec = rusage_usec(RUSAGE_SELF) - cpu0,
                .interrupted = o->stop && *o->stop,
        };
        return 0;
}
