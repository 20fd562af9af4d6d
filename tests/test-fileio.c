/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "testutil.h"

/* Every test gets a fresh directory of real files. */
static char *tmp;
static int tmp_fd = -EBADF;

static void setup(void) {
        tmp = make_tmpdir();
        tmp_fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(tmp_fd, 0);
}

static void teardown(void) {
        if (tmp_fd >= 0)
                (void) close(tmp_fd);
        rm_rf(tmp);
        free(tmp);
}

TestSuite(fileio, .init = setup, .fini = teardown);

/* A value no successful read gives: shows whether an output was written. */
static char sentinel_text[] = "untouched";
#define SIZE_SENTINEL ((size_t) 4242)

/* tmp/name holding exactly len bytes of data (NULs included). */
static void write_bytes(const char *name, const void *data, size_t len) {
        _cleanup_close_ int fd =
                openat(tmp_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        cr_assert_geq(fd, 0, "create %s: %s", name, strerror(errno));
        cr_assert_eq(write(fd, data, len), (ssize_t) len, "write %s", name);
}

/* tmp/name of len bytes, byte i being 'a' + i % 26, so a misplaced chunk shows. */
static char *write_pattern(const char *name, size_t len) {
        char *p = malloc(len + 1);

        cr_assert_not_null(p);
        for (size_t i = 0; i < len; i++)
                p[i] = (char) ('a' + i % 26);
        p[len] = '\0';
        write_bytes(name, p, len);
        return p;
}

/* tmp/name opened for reading. */
static int open_tmp(const char *name) {
        int fd = openat(tmp_fd, name, O_RDONLY | O_CLOEXEC);

        cr_assert_geq(fd, 0, "open %s: %s", name, strerror(errno));
        return fd;
}

static void sleep_msec(long msec) {
        struct timespec ts = { .tv_sec = msec / 1000, .tv_nsec = msec % 1000 * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Forks a writer of the chunks to fd, pause_msec apart, which then closes fd and exits. */
static pid_t spawn_writer(int fd, const char *const *chunks, size_t n, long pause_msec) {
        pid_t pid = fork();

        cr_assert_geq(pid, 0);
        if (pid > 0)
                return pid;
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(chunks[i]);

                if (i > 0)
                        sleep_msec(pause_msec);
                if (write(fd, chunks[i], len) != (ssize_t) len)
                        _exit(1);
        }
        _exit(0);
}

static void expect_writer_done(pid_t pid) {
        int status;

        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer failed");
}

/* ---- read_full_at() and read_full_fd() */

Test(fileio, reads_a_file_whole_and_nul_terminated) {
        _cleanup_free_ char *got = NULL;
        size_t size = SIZE_SENTINEL;

        write_bytes("f", "cpu 1 2 3\nintr 4\n", 17);
        cr_assert_eq(read_full_at(tmp_fd, "f", 1024, &got, &size), 0);
        cr_expect_str_eq(got, "cpu 1 2 3\nintr 4\n");
        cr_expect_eq(size, 17);
        cr_expect_eq(got[size], '\0');
}

Test(fileio, empty_file_gives_an_empty_string) {
        _cleanup_free_ char *got = NULL;
        size_t size = SIZE_SENTINEL;

        write_bytes("empty", "", 0);
        cr_assert_eq(read_full_at(tmp_fd, "empty", 1024, &got, &size), 0);
        cr_assert_not_null(got);
        cr_expect_eq(size, 0);
        cr_expect_eq(got[0], '\0');
}

Test(fileio, file_of_exactly_max_size_is_read) {
        _cleanup_free_ char *want = write_pattern("f", 10000), *got = NULL;
        size_t size = SIZE_SENTINEL;

        cr_assert_eq(read_full_at(tmp_fd, "f", 10000, &got, &size), 0);
        cr_expect_eq(size, 10000);
        cr_expect_eq(memcmp(got, want, 10001), 0, "content or terminator differs");
}

Test(fileio, one_byte_over_max_is_efbig_and_writes_no_output) {
        _cleanup_free_ char *want = write_pattern("f", 10001);
        char *got = sentinel_text;
        size_t size = SIZE_SENTINEL;

        cr_expect_eq(read_full_at(tmp_fd, "f", 10000, &got, &size), -EFBIG);
        cr_expect_eq(got, sentinel_text);
        cr_expect_eq(size, SIZE_SENTINEL);
}

Test(fileio, max_size_zero_takes_only_an_empty_file) {
        _cleanup_free_ char *got = NULL;
        char *none = sentinel_text;

        write_bytes("empty", "", 0);
        write_bytes("one", "x", 1);
        cr_expect_eq(read_full_at(tmp_fd, "empty", 0, &got, NULL), 0);
        cr_expect_eq(read_full_at(tmp_fd, "one", 0, &none, NULL), -EFBIG);
        cr_expect_eq(none, sentinel_text);
}

/* 1 MiB: many times the first 4 KiB buffer, so it grows several times without losing bytes. */
Test(fileio, file_much_larger_than_the_first_buffer_is_read_intact) {
        _cleanup_free_ char *want = write_pattern("big", 1u << 20), *got = NULL;
        size_t size = SIZE_SENTINEL;

        cr_assert_eq(read_full_at(tmp_fd, "big", 64u << 20, &got, &size), 0);
        cr_expect_eq(size, 1u << 20);
        cr_expect_eq(memcmp(got, want, (1u << 20) + 1), 0, "content or terminator differs");
}

Test(fileio, embedded_nuls_are_kept_and_counted) {
        _cleanup_free_ char *got = NULL;
        size_t size = SIZE_SENTINEL;

        write_bytes("nul", "a\0b\0", 4);
        cr_assert_eq(read_full_at(tmp_fd, "nul", 1024, &got, &size), 0);
        cr_expect_eq(size, 4);
        cr_expect_eq(memcmp(got, "a\0b\0", 5), 0, "bytes differ");
}

Test(fileio, missing_file_is_enoent) {
        char *got = sentinel_text;

        cr_expect_eq(read_full_at(tmp_fd, "missing", 1024, &got, NULL), -ENOENT);
        cr_expect_eq(got, sentinel_text);
}

Test(fileio, directory_is_eisdir) {
        char *got = sentinel_text;

        cr_assert_eq(mkdirat(tmp_fd, "dir", 0755), 0);
        cr_expect_eq(read_full_at(tmp_fd, "dir", 1024, &got, NULL), -EISDIR);
        cr_expect_eq(got, sentinel_text);
}

Test(fileio, path_is_relative_to_dirfd_or_cwd) {
        _cleanup_free_ char *path = NULL, *got = NULL;

        write_bytes("f", "x\n", 2);
        cr_assert_gt(asprintf(&path, "%s/f", tmp), 0);
        cr_assert_eq(read_full_at(AT_FDCWD, path, 16, &got, NULL), 0);
        cr_expect_str_eq(got, "x\n");
}

/* A FIFO hands over one write at a time: the text arrives in several short reads. */
Test(fileio, fifo_delivering_short_reads_is_read_to_eof) {
        static const char *const chunks[] = { "some ", "avg10=1.00", "\n", "full avg10=0.00\n" };
        _cleanup_close_ int wfd = -EBADF;
        _cleanup_free_ char *got = NULL;
        size_t size = SIZE_SENTINEL;
        pid_t pid;

        cr_assert_eq(mkfifoat(tmp_fd, "fifo", 0600), 0);
        /* O_RDWR opens without waiting for a reader; the child's copy is the only writer left. */
        wfd = openat(tmp_fd, "fifo", O_RDWR | O_CLOEXEC);
        cr_assert_geq(wfd, 0);
        pid = spawn_writer(wfd, chunks, ELEMENTSOF(chunks), /* pause_msec= */ 30);
        {
                _cleanup_close_ int rfd = openat(tmp_fd, "fifo", O_RDONLY | O_CLOEXEC);

                cr_assert_geq(rfd, 0);
                (void) close(TAKE_FD(wfd));
                cr_expect_eq(read_full_fd(rfd, 1024, &got, &size), 0);
        }
        expect_writer_done(pid);
        cr_expect_str_eq(got, "some avg10=1.00\nfull avg10=0.00\n");
        cr_expect_eq(size, 32);
}

/* Over the 64 KiB a pipe holds: no read() can return it all. */
Test(fileio, pipe_larger_than_its_buffer_is_read_whole) {
        _cleanup_free_ char *text = malloc(300001), *got = NULL;
        const char *chunks[1] = { text };
        size_t size = SIZE_SENTINEL;
        int p[2];
        pid_t pid;

        cr_assert_not_null(text);
        memset(text, 'x', 300000);
        text[300000] = '\0';
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        pid = spawn_writer(p[1], chunks, 1, 0);
        (void) close(p[1]);
        cr_expect_eq(read_full_fd(p[0], 300000, &got, &size), 0);
        (void) close(p[0]);
        expect_writer_done(pid);
        cr_expect_eq(size, 300000);
        cr_expect_str_eq(got, text);
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
        (void) sig;
        interrupted++;
}

/* A signal without SA_RESTART makes the blocked read() fail with EINTR: it is read again. */
Test(fileio, read_interrupted_by_a_signal_is_retried) {
        struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART */
        _cleanup_free_ char *got = NULL;
        int p[2];
        pid_t pid;

        cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                sleep_msec(100);
                (void) kill(getppid(), SIGUSR1);
                sleep_msec(100);
                _exit(write(p[1], "late\n", 5) == 5 ? 0 : 1);
        }
        (void) close(p[1]);
        cr_expect_eq(read_full_fd(p[0], 1024, &got, NULL), 0);
        (void) close(p[0]);
        expect_writer_done(pid);
        cr_expect_eq(interrupted, 1, "the signal did not come during the read");
        cr_expect_str_eq(got, "late\n");
}

Test(fileio, fd_is_read_from_its_current_offset) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *got = NULL;

        write_bytes("f", "skip:keep", 9);
        fd = open_tmp("f");
        cr_assert_eq(lseek(fd, 5, SEEK_SET), 5);
        cr_assert_eq(read_full_fd(fd, 1024, &got, NULL), 0);
        cr_expect_str_eq(got, "keep");
}

Test(fileio, bad_arguments_are_refused) {
        char *got = sentinel_text;

        cr_expect_eq(read_full_fd(-EBADF, 1024, &got, NULL), -EBADF);
        cr_expect_eq(read_full_fd(tmp_fd, 1024, NULL, NULL), -EINVAL);
        cr_expect_eq(read_full_fd(tmp_fd, SIZE_MAX, &got, NULL), -EINVAL);
        cr_expect_eq(read_full_at(tmp_fd, NULL, 1024, &got, NULL), -EINVAL);
        cr_expect_eq(got, sentinel_text);
}

/* ---- read_full_into() */

Test(fileio, into_reads_a_file_that_fits) {
        _cleanup_close_ int fd = -EBADF;
        char buf[16];
        size_t len = SIZE_SENTINEL;

        write_bytes("f", "0 0 0\n", 6);
        fd = open_tmp("f");
        cr_assert_eq(read_full_into(fd, buf, sizeof buf, &len), 0);
        cr_expect_str_eq(buf, "0 0 0\n");
        cr_expect_eq(len, 6);
}

Test(fileio, into_takes_a_file_that_exactly_fills_the_buffer) {
        _cleanup_free_ char *want = write_pattern("f", 15);
        _cleanup_close_ int fd = -EBADF;
        char buf[16];
        size_t len = SIZE_SENTINEL;

        fd = open_tmp("f");
        cr_assert_eq(read_full_into(fd, buf, sizeof buf, &len), 0);
        cr_expect_eq(len, 15);
        cr_expect_eq(memcmp(buf, want, 16), 0, "content or terminator differs");
}

Test(fileio, into_refuses_one_byte_more_than_fits) {
        _cleanup_free_ char *want = write_pattern("f", 16);
        _cleanup_close_ int fd = -EBADF;
        char buf[16];
        size_t len = SIZE_SENTINEL;

        fd = open_tmp("f");
        cr_expect_eq(read_full_into(fd, buf, sizeof buf, &len), -EFBIG);
        cr_expect_eq(len, SIZE_SENTINEL);
}

Test(fileio, into_empty_file_gives_an_empty_string) {
        _cleanup_close_ int fd = -EBADF;
        char buf[4] = "xyz";
        size_t len = SIZE_SENTINEL;

        write_bytes("empty", "", 0);
        fd = open_tmp("empty");
        cr_assert_eq(read_full_into(fd, buf, sizeof buf, &len), 0);
        cr_expect_eq(len, 0);
        cr_expect_eq(buf[0], '\0');
}

Test(fileio, into_keeps_embedded_nuls) {
        _cleanup_close_ int fd = -EBADF;
        char buf[8];
        size_t len = SIZE_SENTINEL;

        write_bytes("nul", "\0ab", 3);
        fd = open_tmp("nul");
        cr_assert_eq(read_full_into(fd, buf, sizeof buf, &len), 0);
        cr_expect_eq(len, 3);
        cr_expect_eq(memcmp(buf, "\0ab", 4), 0, "bytes differ");
}

Test(fileio, into_a_directory_is_eisdir) {
        _cleanup_close_ int fd = -EBADF;
        char buf[8];

        cr_assert_eq(mkdirat(tmp_fd, "dir", 0755), 0);
        fd = open_tmp("dir");
        cr_expect_eq(read_full_into(fd, buf, sizeof buf, NULL), -EISDIR);
}

Test(fileio, into_collects_short_reads_from_a_pipe) {
        static const char *const chunks[] = { "12", "34 5", "6\n" };
        char buf[32];
        size_t len = SIZE_SENTINEL;
        int p[2];
        pid_t pid;

        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        pid = spawn_writer(p[1], chunks, ELEMENTSOF(chunks), /* pause_msec= */ 30);
        (void) close(p[1]);
        cr_expect_eq(read_full_into(p[0], buf, sizeof buf, &len), 0);
        (void) close(p[0]);
        expect_writer_done(pid);
        cr_expect_str_eq(buf, "1234 56\n");
        cr_expect_eq(len, 8);
}

Test(fileio, into_bad_arguments_are_refused) {
        char buf[8];

        cr_expect_eq(read_full_into(-EBADF, buf, sizeof buf, NULL), -EBADF);
        cr_expect_eq(read_full_into(tmp_fd, NULL, sizeof buf, NULL), -EINVAL);
        cr_expect_eq(read_full_into(tmp_fd, buf, 0, NULL), -EINVAL);
}

/* Through a pipe, so writes come in pieces the reader takes as they come. */
Test(fileio, write_full_writes_everything_and_reports_errors) {
        size_t len = 1 << 20;
        _cleanup_free_ char *data = malloc(len), *back = NULL;
        int fds[2];
        pid_t pid;
        size_t got = 0;

        cr_assert_not_null(data);
        for (size_t i = 0; i < len; i++)
                data[i] = (char) ('a' + i % 26);
        cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                (void) close(fds[0]);
                _exit(write_full(fds[1], data, len) == 0 ? 0 : 1);
        }
        (void) close(fds[1]);
        cr_assert_eq(read_full_fd(fds[0], len, &back, &got), 0);
        (void) close(fds[0]);
        cr_assert_eq(waitpid(pid, &(int){ 0 }, 0), pid);
        cr_expect_eq(got, len);
        cr_expect_eq(memcmp(back, data, len), 0);
        cr_expect_eq(write_full(-1, "x", 1), -EBADF);
        cr_expect_eq(write_full(tmp_fd, "x", 1), -EBADF, "a directory opened read-only");
        cr_expect_eq(write_full(-1, "", 0), 0, "nothing to write");
}

/* ---- read_text_*: the same, refusing a NUL byte in the data */

Test(fileio, text_reads_a_file_without_nuls) {
        _cleanup_free_ char *got = NULL;
        size_t size = SIZE_SENTINEL;

        write_bytes("t", "cpu 1 2\n", 8);
        cr_assert_eq(read_text_at(tmp_fd, "t", 64, &got, &size), 0);
        cr_expect_str_eq(got, "cpu 1 2\n");
        cr_expect_eq(size, 8);
}

Test(fileio, text_with_a_nul_anywhere_is_ebadmsg_and_writes_no_output) {
        static const struct {
                const char *data;
                size_t len;
        } cases[] = { { "\0", 1 }, { "\0abc\n", 6 }, { "ab\0c\n", 5 }, { "abc\n\0", 5 } };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *got = sentinel_text;
                size_t size = SIZE_SENTINEL;

                write_bytes("nul", cases[i].data, cases[i].len);
                cr_expect_eq(read_text_at(tmp_fd, "nul", 64, &got, &size), -EBADMSG, "case %zu", i);
                cr_expect_eq(got, sentinel_text, "case %zu", i);
                cr_expect_eq(size, SIZE_SENTINEL, "case %zu", i);
        }
}

Test(fileio, text_passes_read_errors_through) {
        _cleanup_free_ char *big = write_pattern("big", 65);
        char *got = sentinel_text;

        cr_expect_eq(read_text_at(tmp_fd, "missing", 64, &got, NULL), -ENOENT);
        cr_expect_eq(read_text_at(tmp_fd, "big", 64, &got, NULL), -EFBIG);
        cr_expect_eq(read_text_at(tmp_fd, "big", 64, NULL, NULL), -EINVAL);
        cr_expect_eq(got, sentinel_text);
}

Test(fileio, text_into_refuses_a_nul_and_keeps_len) {
        _cleanup_close_ int fd = -EBADF, fd2 = -EBADF;
        char buf[8];
        size_t len = SIZE_SENTINEL;

        write_bytes("nul", "ab\0", 3);
        fd = open_tmp("nul");
        cr_expect_eq(read_text_into(fd, buf, sizeof buf, &len), -EBADMSG);
        cr_expect_eq(len, SIZE_SENTINEL);
        write_bytes("ok", "0-3\n", 4);
        fd2 = open_tmp("ok");
        cr_assert_eq(read_text_into(fd2, buf, sizeof buf, &len), 0);
        cr_expect_str_eq(buf, "0-3\n");
        cr_expect_eq(len, 4);
}

Test(fileio, text_fd_reads_from_the_offset_and_refuses_a_nul) {
        _cleanup_close_ int fd = -EBADF, fd2 = -EBADF;
        _cleanup_free_ char *got = NULL;
        char *none = sentinel_text;
        size_t size = SIZE_SENTINEL;

        write_bytes("t", "skip:0-3\n", 9);
        fd = open_tmp("t");
        cr_assert_eq(lseek(fd, 5, SEEK_SET), 5);
        cr_assert_eq(read_text_fd(fd, 64, &got, &size), 0);
        cr_expect_str_eq(got, "0-3\n");
        cr_expect_eq(size, 4);
        write_bytes("nul", "a\0", 2);
        fd2 = open_tmp("nul");
        cr_expect_eq(read_text_fd(fd2, 64, &none, NULL), -EBADMSG);
        cr_expect_eq(none, sentinel_text);
        cr_expect_eq(read_text_fd(-EBADF, 64, &none, NULL), -EBADF);
}
