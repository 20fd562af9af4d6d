/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reading a whole file: the one read-until-EOF loop behind every reader of /proc, /sys,
 * cgroupfs, the configuration and the actuator's record.
 *
 * Each function reads from the fd's current offset until read() returns 0, retrying on EINTR
 * and continuing after short reads (pipes and FIFOs deliver a write at a time, seq_file files a
 * page at a time). A size limit is exact: a file of max bytes is read, one byte more is -EFBIG.
 * The text is NUL-terminated; the terminator is not counted in the size.
 *
 * The read_full_*() functions keep and count embedded NUL bytes: what they mean is the caller's
 * business (the config parser names the line that holds one). The read_text_*() functions are
 * for callers that parse the text as a C string (/proc, /sys, cgroupfs, PSI, the actuator's
 * record): they refuse a NUL byte in the data with -EBADMSG, the one error every reader of a
 * kernel file gives for it (the text cannot be what the kernel writes), so a truncated string is
 * never parsed as if it were the whole file.
 *
 * Every function returns 0 or a negative errno and writes its ret_ outputs only on success.
 * Errors: -EFBIG over the limit, -EISDIR for a directory (read() says so), -EBADF for a negative
 * fd, -EINVAL for a bad argument, -ENOMEM; other errors of openat() and read() (-ENOENT,
 * -EACCES, -ESRCH from /proc...) are passed through.
 */

#include <stddef.h>

/*
 * Reads fd to EOF into a new malloc'ed buffer (*ret, NUL-terminated, the caller frees it) of
 * *ret_size bytes (ret_size may be NULL). -EFBIG for more than max_size bytes, -EINVAL if ret is
 * NULL or max_size is above SSIZE_MAX - 2. The buffer starts at 4 KiB and doubles, never beyond
 * max_size + 2 bytes (one to see an oversized file, one for the NUL).
 */
int read_full_fd(int fd, size_t max_size, char **ret, size_t *ret_size);

/*
 * Opens path below dirfd (or AT_FDCWD) with O_RDONLY | O_CLOEXEC | O_NOCTTY and reads it with
 * read_full_fd(); -EINVAL for a NULL path. A caller that needs other open flags (O_NOFOLLOW,
 * O_NONBLOCK) or to look at the file first (fstat) opens it and calls read_full_fd().
 */
int read_full_at(int dirfd, const char *path, size_t max_size, char **ret, size_t *ret_size);

/*
 * The same into a caller's buffer, for readers that must not allocate: at most size - 1 bytes of
 * data, then a NUL; *ret_len (may be NULL) gets the data's length. -EFBIG if the data does not
 * fit: a file that exactly fills buf costs one more 1-byte read() to tell it from a longer one.
 * -EINVAL if buf is NULL or size is 0. On failure buf holds undefined bytes.
 */
int read_full_into(int fd, char *buf, size_t size, size_t *ret_len);

/* Writes all size bytes of buf to fd, going on after short writes and EINTR. 0, or write()'s
 * -errno (what was written before stays written). */
int write_full(int fd, const void *buf, size_t size);
/*
 * read_full_fd() and read_full_at() for text: also -EBADMSG if the data holds a NUL byte (then
 * nothing is returned). ret_size (may be NULL) gets strlen(*ret). The actuator's record, opened
 * with O_NOFOLLOW, is the kind of caller read_text_fd() is for.
 */
int read_text_fd(int fd, size_t max_size, char **ret, size_t *ret_size);
int read_text_at(int dirfd, const char *path, size_t max_size, char **ret, size_t *ret_size);

/* read_full_into() for text: also -EBADMSG if the data holds a NUL byte. */
int read_text_into(int fd, char *buf, size_t size, size_t *ret_len);
