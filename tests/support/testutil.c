/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "testutil.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

char *fixture_path(const char *rel) {
        char *p = NULL;

        cr_assert_gt(asprintf(&p, "%s/%s", FIXTURES_DIR, rel), 0);
        return p;
}

int fixture_dirfd(const char *rel) {
        _cleanup_free_ char *p = fixture_path(rel);
        int fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0, "fixture %s: %s", p, strerror(errno));
        return fd;
}

char *make_tmpdir(void) {
        const char *base = getenv("TMPDIR");
        char *p = NULL;

        cr_assert_gt(asprintf(&p, "%s/cgbalance-test.XXXXXX", base ? base : "/tmp"), 0);
        cr_assert_not_null(mkdtemp(p), "mkdtemp: %s", strerror(errno));
        return p;
}

void write_file_at(int dirfd, const char *path, const char *content) {
        _cleanup_free_ char *dir = strdup(path);
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(content);

        cr_assert_not_null(dir);
        for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                cr_assert(mkdirat(dirfd, dir, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", dir,
                          strerror(errno));
                *s = '/';
        }
        fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
        cr_assert_eq(write(fd, content, len), (ssize_t) len, "write %s", path);
}

static void run(const char *const argv[]) {
        pid_t pid = fork();
        int status;

        cr_assert_geq(pid, 0);
        if (pid == 0) {
                execvp(argv[0], (char *const *) argv);
                _exit(127);
        }
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s %s failed", argv[0], argv[1]);
}

void copy_fixture(const char *rel, const char *dest) {
        _cleanup_free_ char *src = NULL;

        cr_assert_gt(asprintf(&src, "%s/%s/.", FIXTURES_DIR, rel), 0);
        run((const char *const[]){ "cp", "-a", src, dest, NULL });
}

void rm_rf(const char *path) {
        if (path)
                run((const char *const[]){ "rm", "-rf", "--", path, NULL });
}

bool running_as_root(void) {
        return geteuid() == 0;
}

char *read_all(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t len = 0;

        if (!f)
                return strdup("");
        if (getdelim(&buf, &len, '\0', f) < 0) {
                free(buf);
                buf = strdup("");
        }
        fclose(f);
        return buf;
}

bool exited_with(int status, int code) {
        return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

void die_with_parent(pid_t parent) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(125);
}

char *cpumask_text(const CpuMask *m) {
        char *s = NULL;

        cr_assert_not_null(m);
        cr_assert_eq(cpumask_format(m, &s), 0);
        return s;
}

void expect_cpumask(const CpuMask *m, const char *want, const char *what) {
        _cleanup_free_ char *got = cpumask_text(m);

        cr_expect_str_eq(got, want, "%s: %s, want %s", what, got, want);
}
