/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"

/* Most files read here (proc, cgroup control files, PSI, a config) fit in one page. */
#define READ_FULL_FIRST_CHUNK 4096u

/* read(), again after a signal: the byte count, 0 at EOF, or a negative errno. */
static ssize_t read_retry(int fd, void *buf, size_t size) {
        for (;;) {
                ssize_t n = read(fd, buf, size);

                if (n >= 0)
                        return n;
                if (errno != EINTR)
                        return negative_errno();
        }
}

int read_full_fd(int fd, size_t max_size, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        if (fd < 0)
                return -EBADF;
        /* So that max_size + 2 and cap * 2 below cannot overflow. */
        if (!ret || max_size > (size_t) SSIZE_MAX - 2)
                return -EINVAL;
        for (;;) {
                ssize_t n;

                if (len > max_size)
                        return -EFBIG;
                /* Room for one byte more than max_size, to see an oversized file, and the NUL. */
                if (cap - len < 2) {
                        size_t want = cap == 0 ? READ_FULL_FIRST_CHUNK : cap * 2;
                        char *b;

                        want = MIN(want, max_size + 2);
                        b = realloc(buf, want);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        cap = want;
                }
                n = read_retry(fd, buf + len, cap - 1 - len);
                if (n < 0)
                        return (int) n;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = len;
        return 0;
}

int read_full_at(int dirfd, const char *path, size_t max_size, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        if (!path)
                return -EINVAL;
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read_full_fd(fd, max_size, ret, ret_size);
}

int read_full_into(int fd, char *buf, size_t size, size_t *ret_len) {
        size_t len = 0;

        if (fd < 0)
                return -EBADF;
        if (!buf || size == 0)
                return -EINVAL;
        for (;;) {
                bool full = len == size - 1;
                char probe;
                ssize_t n;

                /* buf is full: only EOF now tells a file that fits from a longer one. */
                n = full ? read_retry(fd, &probe, 1) : read_retry(fd, buf + len, size - 1 - len);
                if (n < 0)
                        return (int) n;
                if (n == 0)
                        break;
                if (full)
                        return -EFBIG;
                len += (size_t) n;
        }
        buf[len] = '\0';
        if (ret_len)
                *ret_len = len;
        return 0;
}

int write_full(int fd, const void *buf, size_t size) {
        const char *p = buf;

        while (size > 0) {
                ssize_t k = write(fd, p, size);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return negative_errno();
                p += k;
                size -= (size_t) k;
        }
        return 0;
}

int read_text_fd(int fd, size_t max_size, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        if (!ret)
                return -EINVAL;
        r = read_full_fd(fd, max_size, &buf, &len);
        if (r < 0)
                return r;
        if (memchr(buf, '\0', len))
                return -EBADMSG;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = len;
        return 0;
}

int read_text_at(int dirfd, const char *path, size_t max_size, char **ret, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;

        if (!path || !ret)
                return -EINVAL;
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read_text_fd(fd, max_size, ret, ret_size);
}

int read_text_into(int fd, char *buf, size_t size, size_t *ret_len) {
        size_t len;
        int r;

        r = read_full_into(fd, buf, size, &len);
        if (r < 0)
                return r;
        if (memchr(buf, '\0', len))
                return -EBADMSG;
        if (ret_len)
                *ret_len = len;
        return 0;
}
