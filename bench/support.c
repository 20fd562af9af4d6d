/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool bench_error_reported;

void bench_fail(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "%s: ", program_invocation_short_name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n");
        bench_error_reported = true;
}

bool bench_in_path(const char *name) {
        const char *path = getenv("PATH");
        _cleanup_free_ char *copy = strdup(path && path[0] ? path : "/usr/bin:/bin");
        char *save = NULL;

        if (!copy)
                return false;
        for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
                char p[PATH_MAX];

                (void) snprintf(p, sizeof p, "%s/%s", d, name);
                if (access(p, X_OK) == 0)
                        return true;
        }
        return false;
}

int bench_check_tools(const BenchTool *tools, size_t n) {
        int r = 0;

        for (size_t i = 0; i < n; i++)
                if (!bench_in_path(tools[i].tool)) {
                        bench_fail("%s not found in PATH: scripts/install-deps installs it "
                                   "(Debian package %s)",
                                   tools[i].tool, tools[i].package);
                        r = -ENOENT;
                }
        return r;
}

bool bench_dir_exists(const char *base, const char *rel) {
        char p[PATH_MAX + 256];
        struct stat st;

        (void) snprintf(p, sizeof p, "%s/%s", base, rel);
        return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return (x > y) - (x < y);
}

uint64_t bench_median_u64(uint64_t *v, size_t n) {
        if (n == 0)
                return 0;
        qsort(v, n, sizeof *v, cmp_u64);
        return v[n / 2];
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

double bench_median(const double *v, size_t n, double *ret_min, double *ret_max) {
        double s[BENCH_MEDIAN_MAX];

        n = MIN(n, (size_t) BENCH_MEDIAN_MAX);
        if (n == 0)
                return 0;
        memcpy(s, v, n * sizeof *s);
        qsort(s, n, sizeof *s, cmp_double);
        if (ret_min)
                *ret_min = s[0];
        if (ret_max)
                *ret_max = s[n - 1];
        return s[n / 2];
}

void bench_redirect(int target, const char *path, int flags) {
        int fd = open(path, flags | O_CLOEXEC, 0600);

        if (fd < 0 || dup2(fd, target) < 0)
                _exit(BENCH_EXIT_SETUP);
        (void) close(fd);
}
