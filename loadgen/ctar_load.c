/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"

#define ARCHIVE_NAME "ctar_load.tar"

/* tar -cf truncates the archive it writes: each pass replaces the last, so the file stays one
 * tree's size and every pass is real writing. */
int ctar_load_run(const LoadOptions *o, LoadResult *ret) {
        /* -C: member names relative to the tree, so tar has no leading '/' to complain about. */
        const char *argv[] = { "tar", "-cf", /* archive */ NULL, "-C", o->tree_dir, ".", NULL };
        _cleanup_free_ char *archive = NULL;
        uint64_t deadline, start;
        LoadResult res;
        int r = 0;

        if (!o->work_dir || !o->tree_dir)
                return -EINVAL;
        if (asprintf(&archive, "%s/" ARCHIVE_NAME, o->work_dir) < 0)
                return -ENOMEM;
        argv[2] = archive;

        deadline = load_ready(o);
        start = now_usec();
        while (!load_should_stop(o, deadline)) {
                r = load_run_command(o, deadline, argv);
                if (r == -ECANCELED) {
                        r = 0; /* stopped mid-archive: not counted */
                        break;
                }
                if (r < 0)
                        break;
                load_progress_add(o, 1);
        }
        load_result(o, start, &res);

        if (unlink(archive) < 0 && errno != ENOENT && r == 0)
                r = negative_errno();
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}
