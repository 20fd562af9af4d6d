/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Small helpers every cgbalance module uses: cleanup attributes, ownership hand-off and array
 * sizes. In the spirit of systemd's macro.h; libsystemd does not export these.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* Same text as glibc's <sys/param.h>, so including both is not a redefinition. */
#define MIN(a, b) (((a) < (b)) ? (a) : (b))
#define MAX(a, b) (((a) > (b)) ? (a) : (b))

static inline void freep(void *p) {
        free(*(void **) p);
}

/* free() that returns NULL: p = mfree(p); */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

/*
 * Makes the array *p (of *cap elements of size bytes) hold at least need elements, doubling from
 * initial so appends cost O(1) on average. 0, or -ENOMEM with *p and *cap untouched.
 */
static inline int greedy_realloc(void **p, size_t *cap, size_t need, size_t size, size_t initial) {
        size_t c;
        void *q;

        if (need <= *cap)
                return 0;
        c = *cap ? *cap * 2 : initial;
        if (c < need)
                c = need;
        q = reallocarray(*p, c, size);
        if (!q)
                return -ENOMEM;
        *p = q;
        *cap = c;
        return 0;
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                (void) close(*fd);
                errno = saved;
        }
}

static inline void fclosep(FILE **f) {
        if (*f)
                (void) fclose(*f);
}

static inline void closedirp(DIR **d) {
        if (*d)
                (void) closedir(*d);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Define a cleanup function for a type with an x_free() that accepts NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func) \
        static inline void func##p(type *p) {   \
                if (*p)                         \
                        func(*p);               \
        }

/* Hand ownership out of a _cleanup_ variable: *ret = TAKE_PTR(p); */
#define TAKE_PTR(p)                      \
        ({                               \
                __typeof__(p) _p_ = (p); \
                (p) = NULL;              \
                _p_;                     \
        })

#define TAKE_FD(fd)              \
        ({                       \
                int _fd_ = (fd); \
                (fd) = -EBADF;   \
                _fd_;            \
        })

/* Negative errno from a failed libc call, never 0 (a library that forgot errno gives -EIO). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

#define streq(a, b) (strcmp((a), (b)) == 0)
