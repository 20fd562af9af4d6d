/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"

#define MIB (UINT64_C(1) << 20)
#define FILE_NAME "io_load.dat"

/* One pass of dd if=/dev/zero of=path bs=1M count=mib: O_TRUNC as dd does, so the file never
 * outgrows mib MiB and each pass dirties fresh pages. Each MiB is counted once written; a stop
 * ends the pass between writes. No fsync: writeback under the cgroup's memory limit is the load. */
static int write_pass(const LoadOptions *o, uint64_t deadline, const char *path, uint64_t mib) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        int r;

        if (fd < 0)
                return negative_errno();
        for (uint64_t i = 0; i < mib && !load_should_stop(o, deadline); i++) {
                r = load_write_zeroes(fd, MIB);
                if (r < 0)
                        return r;
                load_progress_add(o, 1);
        }
        return close(TAKE_FD(fd)) < 0 ? negative_errno() : 0;
}

/* io_load in dir: write passes over dir/FILE_NAME until told to stop, then remove it. */
static int write_load(const LoadOptions *o, const char *dir, LoadResult *ret) {
        uint64_t mib = o->ram_bytes / MIB, deadline, start;
        _cleanup_free_ char *path = NULL;
        LoadResult res;
        int r = 0;

        if (mib == 0)
                return -ERANGE;
        if (asprintf(&path, "%s/" FILE_NAME, dir) < 0)
                return -ENOMEM;

        deadline = load_ready(o);
        start = now_usec();
        while (r == 0 && !load_should_stop(o, deadline))
                r = write_pass(o, deadline, path, mib);
        load_result(o, start, &res);

        if (unlink(path) < 0 && errno != ENOENT && r == 0)
                r = negative_errno();
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}

int io_load_run(const LoadOptions *o, LoadResult *ret) {
        if (!o->work_dir)
                return -EINVAL;
        return write_load(o, o->work_dir, ret);
}

/* In a directory of its own, since other_dir is shared (perhaps a whole other file system). */
int io_other_run(const LoadOptions *o, LoadResult *ret) {
        _cleanup_free_ char *dir = NULL;
        LoadResult res;
        int r;

        if (!o->other_dir)
                return -EINVAL;
        if (asprintf(&dir, "%s/io_other.XXXXXX", o->other_dir) < 0)
                return -ENOMEM;
        if (!mkdtemp(dir))
                return negative_errno();
        r = write_load(o, dir, &res);
        if (rmdir(dir) < 0 && r == 0)
                r = negative_errno();
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}
