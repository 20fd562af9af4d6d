/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "psi.h"
#include "testutil.h"

#define LINE(a10, a60, a300, tot)                                                               \
        {                                                                                       \
                .avg10_permyriad = (a10), .avg60_permyriad = (a60), .avg300_permyriad = (a300), \
                .total_usec = (tot)                                                             \
        }

/* A value no parser result has: shows whether ret was written. */
static const PsiStats sentinel = {
        .some = LINE(4242, 4242, 4242, 4242),
        .full = LINE(4242, 4242, 4242, 4242),
        .has_full = true,
};

static void expect_line(const PsiLine *got, const PsiLine *want, const char *what, const char *in) {
        cr_expect_eq(got->avg10_permyriad, want->avg10_permyriad, "%s avg10 of \"%s\"", what, in);
        cr_expect_eq(got->avg60_permyriad, want->avg60_permyriad, "%s avg60 of \"%s\"", what, in);
        cr_expect_eq(got->avg300_permyriad, want->avg300_permyriad, "%s avg300 of \"%s\"", what,
                     in);
        cr_expect_eq(got->total_usec, want->total_usec, "%s total of \"%s\"", what, in);
}

static void expect_stats(const PsiStats *got, const PsiStats *want, const char *in) {
        expect_line(&got->some, &want->some, "some", in);
        expect_line(&got->full, &want->full, "full", in);
        cr_expect_eq(got->has_full, want->has_full, "has_full of \"%s\"", in);
}

Test(psi, parse_gives_exact_fixed_point) {
        static const struct {
                const char *in;
                PsiStats want;
        } cases[] = {
                { "some avg10=2.80 avg60=0.77 avg300=0.53 total=3703689\n"
                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                  { .some = LINE(280, 77, 53, 3703689), .has_full = true } },
                /* Linux < 5.13 cpu: no full line */
                { "some avg10=16.32 avg60=9.05 avg300=3.41 total=187426310\n",
                  { .some = LINE(1632, 905, 341, 187426310) } },
                { "some avg10=0.01 avg60=0.10 avg300=1.00 total=1\n"
                  "full avg10=10.00 avg60=99.99 avg300=100.00 total=18446744073709551615\n",
                  { .some = LINE(1, 10, 100, 1),
                    .full = LINE(1000, 9999, 10000, UINT64_MAX),
                    .has_full = true } },
                /* full first, fields in another order, tabs and blank runs, leading zeros */
                { "full avg300=0.04 total=7 avg10=0.30 avg60=0.15\n"
                  "some\tavg10=000.41  avg60=0.20\tavg300=0.05 total=0009123456 \n",
                  { .some = LINE(41, 20, 5, 9123456),
                    .full = LINE(30, 15, 4, 7),
                    .has_full = true } },
                /* fields a newer kernel might add are skipped, whatever their value looks like */
                { "some avg10=1.23 avg60=4.56 avg300=7.89 total=1000 peak=12.00 win_2=a=b,c\n",
                  { .some = LINE(123, 456, 789, 1000) } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PsiStats got = sentinel;

                cr_assert_eq(psi_parse(cases[i].in, &got), 0, "\"%s\"", cases[i].in);
                expect_stats(&got, &cases[i].want, cases[i].in);
        }
}

Test(psi, parse_rejects_hostile_input_without_writing_result) {
        static const struct {
                const char *in;
                int err;
        } cases[] = {
                { "", -EINVAL },
                { "\n", -EINVAL },
                { "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL }, /* no some */
                { "some avg10=2.80 avg60=0.77 avg300=0.53 total=3703689", -EINVAL }, /* no \n */
                { "some avg10=2.80 avg60=0.77 avg300=0.53 total=3703\n"
                  "full avg10=0.00 avg60=0.0",
                  -EINVAL },
                { "some avg10=2.80 avg60=0.77 avg300=0.53\n", -EINVAL },
                { "some avg10=2.80 avg60=0.77 total=1 total=1 avg300=0.53\n", -EINVAL },
                { "some avg10=2.80 avg10=2.80 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=1 avg60=2 avg300=3 total=4\nsome avg10=1 avg60=2 avg300=3 total=4\n",
                  -EINVAL },
                { "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                  -EINVAL },
                { "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n\n", -EINVAL },
                { "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\ngarbage\n", -EINVAL },
                { "partial avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL },
                { "Some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL },
                { " some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL },
                { "someavg10=0.00 avg60=0.00 avg300=0.00 total=0\n", -EINVAL },
                { "some\n", -EINVAL },
                { "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\r\n", -EINVAL },
                { "some avg10=2,80 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=2.8 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=2.800 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=.80 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=2. avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=1000.00 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=-1.00 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=+1.00 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=1e2 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=nan avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10= avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10 =1.00 avg60=0.77 avg300=0.53 total=1\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=-1\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=0x10\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=12 34\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=1 =5\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=1 peak\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=1 Peak=1\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=1 peak=\x01\n", -EINVAL },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=1 peak=\xc3\xa9\n", -EINVAL },
                { "some avg10=100.01 avg60=0.77 avg300=0.53 total=1\n", -ERANGE },
                { "some avg10=999.99 avg60=0.77 avg300=0.53 total=1\n", -ERANGE },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=18446744073709551616\n", -ERANGE },
                { "some avg10=1.00 avg60=0.77 avg300=0.53 total=99999999999999999999999\n",
                  -ERANGE },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PsiStats got = sentinel;

                cr_expect_eq(psi_parse(cases[i].in, &got), cases[i].err, "\"%s\"", cases[i].in);
                expect_stats(&got, &sentinel, cases[i].in);
        }
}

Test(psi, parse_refuses_null) {
        PsiStats s;

        cr_expect_eq(psi_parse(NULL, &s), -EINVAL);
        cr_expect_eq(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", NULL), -EINVAL);
}

static void expect_read(const char *dir, const char *name, const PsiStats *want) {
        _cleanup_close_ int fd = fixture_dirfd(dir);
        PsiStats got = sentinel;

        cr_assert_eq(psi_read_at(fd, name, &got), 0, "%s/%s", dir, name);
        expect_stats(&got, want, name);
}

Test(psi, read_at_linux_6_18_files) {
        expect_read("psi/proc-6.18", "cpu",
                    &(PsiStats){ .some = LINE(280, 77, 53, 3703689), .has_full = true });
        expect_read("psi/proc-6.18", "io",
                    &(PsiStats){ .some = LINE(0, 12, 37, 2676740),
                                 .full = LINE(0, 11, 34, 2522658),
                                 .has_full = true });
        expect_read("psi/proc-6.18", "memory", &(PsiStats){ .has_full = true });
}

Test(psi, read_at_linux_5_4_cpu_has_no_full_line) {
        expect_read("psi/proc-5.4", "cpu", &(PsiStats){ .some = LINE(1632, 905, 341, 187426310) });
}

Test(psi, read_at_extended_format_keeps_known_fields) {
        expect_read("psi/cases", "extended",
                    &(PsiStats){ .some = LINE(123, 456, 789, 1000),
                                 .full = LINE(1, 2, 3, 999),
                                 .has_full = true });
}

Test(psi, read_at_absent_file_is_enoent) {
        _cleanup_close_ int fd = fixture_dirfd("psi/proc-6.18");
        PsiStats got = sentinel;

        cr_expect_eq(psi_read_at(fd, "irq", &got), -ENOENT);
        expect_stats(&got, &sentinel, "irq");
}

Test(psi, read_at_rejects_bad_files) {
        static const struct {
                const char *name;
                int err;
        } cases[] = {
                { "truncated", -EINVAL },      { "truncated-in-total", -EINVAL },
                { "malformed", -EINVAL },      { "empty", -EINVAL },
                { "duplicate-line", -EINVAL }, { "nul", -EBADMSG }, /* see fileio.h */
                { "directory", -EISDIR },
        };
        _cleanup_close_ int fd = fixture_dirfd("psi/cases");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PsiStats got = sentinel;

                cr_expect_eq(psi_read_at(fd, cases[i].name, &got), cases[i].err, "%s",
                             cases[i].name);
                expect_stats(&got, &sentinel, cases[i].name);
        }
}

Test(psi, read_at_oversized_file_is_efbig) {
        _cleanup_free_ char *dir = make_tmpdir(), *big = malloc(PSI_FILE_SIZE_MAX + 2);
        _cleanup_close_ int fd = -EBADF;
        PsiStats got;
        int r;

        cr_assert_not_null(big);
        /* A valid line padded with a long unknown field: only the size is wrong. */
        strcpy(big, "some avg10=0.00 avg60=0.00 avg300=0.00 total=0 pad=");
        memset(big + strlen(big), 'x', PSI_FILE_SIZE_MAX - strlen(big));
        strcpy(big + PSI_FILE_SIZE_MAX - 1, "\n");
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(fd, 0);
        write_file_at(fd, "exact", big);
        write_file_at(fd, "over", strcat(big, "\n"));
        r = psi_read_at(fd, "exact", &got);
        cr_expect_eq(r, 0, "a file of exactly PSI_FILE_SIZE_MAX bytes: %d", r);
        cr_expect_eq(psi_read_at(fd, "over", &got), -EFBIG);
        rm_rf(dir);
}

/* Makes every read() in this process fail with err, as the kernel's psi_show() does with PSI
 * disabled at boot. Only for a forked child that makes no other reads. */
static int fail_reads_with(int err) {
        struct sock_filter insns[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_read, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned) err & SECCOMP_RET_DATA)),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = (unsigned short) ELEMENTSOF(insns), .filter = insns };

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0)
                return -errno;
        return 0;
}

Test(psi, read_at_passes_eopnotsupp_through) {
        _cleanup_close_ int fd = fixture_dirfd("psi/proc-6.18");
        int status;
        pid_t pid;

        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                PsiStats s;
                int r;

                if (fail_reads_with(EOPNOTSUPP) < 0)
                        _exit(200);
                r = psi_read_at(fd, "cpu", &s);
                _exit(r < 0 ? -r : 0);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "child died: status %d", status);
        if (WEXITSTATUS(status) == 200)
                cr_skip_test("seccomp filters are not available here");
        cr_expect_eq(WEXITSTATUS(status), EOPNOTSUPP, "psi_read_at() gave -%d",
                     WEXITSTATUS(status));
}

static int open_proc_pressure(void) {
        int fd = open("/proc/pressure", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                cr_skip_test("/proc/pressure: %s (kernel without PSI or booted with psi=0)",
                             strerror(errno));
        return fd;
}

static void expect_sane_line(const PsiLine *l, const char *what) {
        cr_expect_leq(l->avg10_permyriad, PSI_PERMYRIAD_MAX, "%s avg10", what);
        cr_expect_leq(l->avg60_permyriad, PSI_PERMYRIAD_MAX, "%s avg60", what);
        cr_expect_leq(l->avg300_permyriad, PSI_PERMYRIAD_MAX, "%s avg300", what);
}

Test(psi, live_cpu_pressure_is_sane) {
        _cleanup_close_ int fd = open_proc_pressure();
        PsiStats s = sentinel;
        int r = psi_read_at(fd, "cpu", &s);

        if (r == -EOPNOTSUPP)
                cr_skip_test("PSI is disabled on this kernel");
        cr_assert_eq(r, 0, "/proc/pressure/cpu: %s", strerror(-r));
        expect_sane_line(&s.some, "some");
        /* The kernel reports no system-wide cpu "full" (all zero) when it has the line. */
        if (s.has_full) {
                cr_expect_eq(s.full.avg10_permyriad, 0);
                cr_expect_eq(s.full.avg60_permyriad, 0);
                cr_expect_eq(s.full.avg300_permyriad, 0);
                cr_expect_eq(s.full.total_usec, 0);
        }
}

Test(psi, live_io_and_memory_have_full_lines) {
        _cleanup_close_ int fd = open_proc_pressure();
        static const char *const names[] = { "io", "memory" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                PsiStats s = {};
                int r = psi_read_at(fd, names[i], &s);

                if (r == -EOPNOTSUPP)
                        cr_skip_test("PSI is disabled on this kernel");
                cr_assert_eq(r, 0, "/proc/pressure/%s: %s", names[i], strerror(-r));
                cr_expect(s.has_full, "%s has no full line", names[i]);
                expect_sane_line(&s.full, names[i]);
                cr_expect_leq(s.full.total_usec, s.some.total_usec,
                              "%s: full stalls are some stalls", names[i]);
        }
}

Test(psi, live_cpu_total_never_goes_back) {
        _cleanup_close_ int fd = open_proc_pressure();
        PsiStats a, b;
        int r = psi_read_at(fd, "cpu", &a);

        if (r == -EOPNOTSUPP)
                cr_skip_test("PSI is disabled on this kernel");
        cr_assert_eq(r, 0);
        for (volatile unsigned long i = 0; i < 20000000ul; i++)
                ;
        cr_assert_eq(psi_read_at(fd, "cpu", &b), 0);
        cr_expect_geq(b.some.total_usec, a.some.total_usec);
}
