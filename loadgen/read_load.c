/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"

#define MIB (UINT64_C(1) << 20)
#define FILE_NAME "read_load.dat"

/* Prepare, not counted: the file to read, mib MiB of zeroes. Synced once, so its writeback is
 * over before the reading is measured. */
static int write_file(const LoadOptions *o, int fd, uint64_t mib) {
        for (uint64_t i = 0; i < mib; i++) {
                int r;

                if (o->stop && *o->stop)
                        return -ECANCELED;
                r = load_write_zeroes(fd, MIB);
                if (r < 0)
                        return r;
        }
        return fdatasync(fd) < 0 ? negative_errno() : 0;
}

/* One MiB from fd's offset into buf, through short reads and EINTR; -EIO at an early EOF. */
static int read_mib(int fd, char *buf) {
        size_t done = 0;

        while (done < MIB) {
                ssize_t n = read(fd, buf + done, MIB - done);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        return -EIO; /* someone truncated our file */
                done += (size_t) n;
        }
        return 0;
}

/* Passes over the file, start to end, until told to stop; each MiB counted once read. */
static int read_loop(const LoadOptions *o, int fd, uint64_t mib, LoadResult *ret) {
        _cleanup_free_ char *buf = malloc(MIB);
        uint64_t deadline, start;
        int r = 0;

        if (!buf)
                return -ENOMEM;
        deadline = load_ready(o);
        start = now_usec();
        while (r == 0 && !load_should_stop(o, deadline)) {
                if (lseek(fd, 0, SEEK_SET) < 0) {
                        r = negative_errno();
                        break;
                }
                for (uint64_t i = 0; r == 0 && i < mib && !load_should_stop(o, deadline); i++) {
                        r = read_mib(fd, buf);
                        if (r == 0)
                                load_progress_add(o, 1);
                }
        }
        load_result(o, start, ret);
        return r;
}

int read_load_run(const LoadOptions *o, LoadResult *ret) {
        uint64_t mib = o->ram_bytes / MIB;
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        LoadResult res;
        int r;

        if (!o->work_dir)
                return -EINVAL;
        if (mib == 0)
                return -ERANGE;
        if (asprintf(&path, "%s/" FILE_NAME, o->work_dir) < 0)
                return -ENOMEM;
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
                return negative_errno();

        r = write_file(o, fd, mib);
        if (r == -ECANCELED) {
                res = (LoadResult){ .interrupted = true }; /* stopped before it was ready */
                r = 0;
        } else if (r == 0)
                r = read_loop(o, fd, mib, &res);

        if (unlink(path) < 0 && r == 0)
                r = negative_errno();
        if (r < 0)
                return r;
        *ret = res;
        return 0;
}
