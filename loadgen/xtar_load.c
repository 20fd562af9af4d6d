/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"

#define ARCHIVE_NAME "xtar_load.tar"
#define EXTRACT_NAME "xtar_load.d"

/* One extraction into a fresh dir: 0, -ECANCELED if stopped midway, or an error. The caller
 * removes the directory, whatever happened. */
static int extract_once(const LoadOptions *o, uint64_t deadline, const char *archive,
                        const char *dir) {
        const char *const argv[] = { "tar", "-xf", archive, "-C", dir, NULL };

        if (mkdir(dir, 0755) < 0)
                return negative_errno();
        return load_run_command(o, deadline, argv);
}

static int extract_loop(const LoadOptions *o, const char *archive, const char *dir,
                        LoadResult *ret) {
        uint64_t deadline = load_ready(o), start = now_usec();
        int r = 0, q;

        while (r == 0 && !load_should_stop(o, deadline)) {
                r = extract_once(o, deadline, archive, dir);
                if (r == 0)
                        load_progress_add(o, 1);
                else if (r == -ECANCELED)
                        r = 0; /* stopped mid-extraction: not counted */
                q = load_remove_tree(dir); /* whatever tar left, error or not */
                if (r == 0)
                        r = q;
        }
        load_result(o, start, ret);
        return r;
}

int xtar_load_run(const LoadOptions *o, LoadResult *ret) {
        const char *argv[] = { "tar", "-cf", /* archive */ NULL, "-C", o->tree_dir, ".", NULL };
        _cleanup_free_ char *archive = NULL, *dir = NULL;
        LoadResult res;
        int r;

        if (!o->work_dir || !o->tree_dir)
                return -EINVAL;
        if (asprintf(&archive, "%s/" ARCHIVE_NAME, o->work_dir) < 0 ||
            asprintf(&dir, "%s/" EXTRACT_NAME, o->work_dir) < 0)
                return -ENOMEM;
        argv[2] = archive;

        /* Prepare, not counted: the tar to extract. */
        r = load_run_command(o, UINT64_MAX, argv);
        if (r == -ECANCELED) {
                res = (LoadResult){ .interrupted = true }; /* stopped before it was ready */
                r = 0;
        } else if (r == 0)
                r = extract_loop(o, archive, dir, &res);

        if (unlink(archive) < 0 && errno != ENOENT && r == 0)
                r = negative_errno();
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}
