/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "load.h"

/* ls stats every entry (-l) of every directory (-R), dot files too (-a): the load is the
 * dentry and inode caches and the metadata reads behind them. */
int list_load_run(const LoadOptions *o, LoadResult *ret) {
        const char *const argv[] = { "ls", "-lRa", o->tree_dir, NULL };
        uint64_t deadline, start;
        int r;

        if (!o->tree_dir)
                return -EINVAL;

        deadline = load_ready(o);
        start = now_usec();
        while (!load_should_stop(o, deadline)) {
                r = load_run_command(o, deadline, argv);
                if (r == -ECANCELED)
                        break; /* stopped mid-listing: not counted */
                if (r < 0)
                        return r;
                load_progress_add(o, 1);
        }
        load_result(o, start, ret);
        return 0;
}
