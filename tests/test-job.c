/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The foreground job: the generated tree (deterministic, builds without a warning, runs, cleans,
 * leaves the page cache) and job_make() (setup in the child, stop kills the whole group, errors
 * come back). The builds are real: gcc and make from PATH.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job.h"
#include "load.h"
#include "macro.h"
#include "testutil.h"
#include "tree.h"

#define TMPFS_MAGIC 0x01021994
/* A tree that takes many seconds to build, so a stop surely lands mid-compile. */
#define SLOW_FILES 40u

/* ---- helpers */

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
        const unsigned char *c = p;

        for (size_t i = 0; i < n; i++)
                h = (h ^ c[i]) * UINT64_C(0x100000001b3);
        return h;
}

/* Hashes every file below root/rel (names and bytes, in sorted order); returns the file count. */
static unsigned hash_tree(const char *root, const char *rel, uint64_t *h) {
        _cleanup_free_ char *dir = NULL;
        struct dirent **names = NULL;
        unsigned files = 0;
        int n;

        cr_assert_gt(asprintf(&dir, "%s/%s", root, rel), 0);
        n = scandir(dir, &names, NULL, alphasort);
        cr_assert_geq(n, 0, "scandir %s: %s", dir, strerror(errno));
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *sub = NULL, *path = NULL;
                const char *name = names[i]->d_name;
                struct stat st;

                if (!streq(name, ".") && !streq(name, "..")) {
                        cr_assert_gt(asprintf(&sub, "%s/%s", rel, name), 0);
                        cr_assert_gt(asprintf(&path, "%s/%s", root, sub), 0);
                        cr_assert_eq(lstat(path, &st), 0);
                        if (S_ISDIR(st.st_mode)) {
                                files += hash_tree(root, sub, h);
                        } else {
                                _cleanup_free_ char *content = read_all(path);

                                *h = fnv1a(*h, sub, strlen(sub) + 1);
                                *h = fnv1a(*h, content, strlen(content));
                                files++;
                        }
                }
                free(names[i]);
        }
        free(names);
        return files;
}

static uint64_t tree_checksum(const TreeOptions *o, unsigned *ret_files) {
        _cleanup_free_ char *dir = make_tmpdir();
        uint64_t h = UINT64_C(0xcbf29ce484222325);

        cr_assert_eq(tree_generate(dir, o), 0);
        *ret_files = hash_tree(dir, ".", &h);
        rm_rf(dir);
        return h;
}

/* Files named *suffix below dir (recursively). */
static unsigned count_suffix(const char *dir, const char *suffix) {
        _cleanup_free_ char *cmd = NULL, *out_path = NULL, *out = NULL;
        unsigned n = 0;

        cr_assert_gt(asprintf(&out_path, "%s.count", dir), 0);
        cr_assert_gt(asprintf(&cmd, "find '%s' -name '*%s' | wc -l >'%s'", dir, suffix, out_path),
                     0);
        cr_assert_eq(system(cmd), 0);
        out = read_all(out_path);
        cr_assert_eq(sscanf(out, "%u", &n), 1, "find said: %s", out);
        (void) unlink(out_path);
        return n;
}

static char *quick_tree(void) {
        char *dir = make_tmpdir();
        TreeOptions o;

        tree_options_init(&o, /* quick= */ true);
        cr_assert_eq(tree_generate(dir, &o), 0);
        return dir;
}

static char *slow_tree(void) {
        char *dir = make_tmpdir();
        TreeOptions o;

        tree_options_init(&o, /* quick= */ false);
        o.files = SLOW_FILES;
        cr_assert_eq(tree_generate(dir, &o), 0);
        return dir;
}

static char *path_in(const char *dir, const char *rel) {
        char *p = NULL;

        cr_assert_gt(asprintf(&p, "%s/%s", dir, rel), 0);
        return p;
}

static bool exists(const char *dir, const char *rel) {
        _cleanup_free_ char *p = path_in(dir, rel);

        return access(p, F_OK) == 0;
}

/* What the setup callback saw in the child: in shared memory, since it runs after fork(). */
typedef struct ChildInfo {
        volatile int calls;
        volatile pid_t pid, pgrp;
        int fail_with; /* setup returns this */
} ChildInfo;

static ChildInfo *child_info_new(void) {
        ChildInfo *ci = mmap(NULL, sizeof(ChildInfo), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);

        cr_assert_neq(ci, MAP_FAILED);
        return ci;
}

static int record_child(void *userdata) {
        ChildInfo *ci = userdata;

        ci->calls++;
        ci->pid = getpid();
        ci->pgrp = getpgrp();
        return ci->fail_with;
}

/* Processes whose process group is pgid, from /proc/<pid>/stat. */
static unsigned group_members(pid_t pgid) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        unsigned n = 0;

        cr_assert_not_null(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *path = NULL, *stat = NULL;
                const char *p;
                int pgrp;

                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                cr_assert_gt(asprintf(&path, "/proc/%s/stat", de->d_name), 0);
                stat = read_all(path);
                p = strrchr(stat, ')'); /* comm may hold spaces and parentheses */
                if (p && sscanf(p + 1, " %*c %*d %d", &pgrp) == 1 && pgrp == pgid)
                        n++;
        }
        closedir(d);
        return n;
}

static bool group_gone(pid_t pgid) {
        return kill(-pgid, 0) < 0 && errno == ESRCH;
}

static JobResult untouched(void) {
        JobResult r;

        memset(&r, 0xa5, sizeof(r));
        return r;
}

static bool is_untouched(const JobResult *r) {
        JobResult u = untouched();

        return memcmp(r, &u, sizeof(u)) == 0;
}

/* ---- the tree */

Test(tree, same_options_give_identical_bytes) {
        TreeOptions o;
        unsigned n1, n2;
        uint64_t h1, h2;

        tree_options_init(&o, /* quick= */ true);
        h1 = tree_checksum(&o, &n1);
        h2 = tree_checksum(&o, &n2);
        cr_expect_eq(h1, h2, "%016" PRIx64 " != %016" PRIx64, h1, h2);
        /* Makefile, common.h, util.h, main.c and a header and a source per module. */
        cr_expect_eq(n1, 2 * o.files + 4);
        cr_expect_eq(n2, n1);
}

Test(tree, another_seed_gives_another_tree) {
        TreeOptions o;
        unsigned n1, n2;
        uint64_t h1, h2;

        tree_options_init(&o, /* quick= */ true);
        h1 = tree_checksum(&o, &n1);
        o.seed++;
        h2 = tree_checksum(&o, &n2);
        cr_expect_neq(h1, h2);
        cr_expect_eq(n1, n2);
}

Test(tree, more_files_and_functions_give_more_source) {
        _cleanup_free_ char *d1 = make_tmpdir(), *d2 = make_tmpdir();
        _cleanup_free_ char *c1 = NULL, *c2 = NULL, *s1 = NULL, *s2 = NULL;
        uint64_t h1 = 0, h2 = 0;
        TreeOptions small, big;

        tree_options_init(&small, /* quick= */ true);
        big = small;
        big.files = small.files + 3;
        big.funcs_per_file = small.funcs_per_file * 2;
        cr_assert_eq(tree_generate(d1, &small), 0);
        cr_assert_eq(tree_generate(d2, &big), 0);
        cr_expect_eq(hash_tree(d2, ".", &h2), hash_tree(d1, ".", &h1) + 6);
        c1 = path_in(d1, "src/m0000.c");
        c2 = path_in(d2, "src/m0000.c");
        s1 = read_all(c1);
        s2 = read_all(c2);
        cr_expect_gt(strlen(s2), strlen(s1) * 3 / 2);
        cr_expect_null(strstr(s1, "m0000_f31("));
        cr_expect_not_null(strstr(s2, "m0000_f31("));
        rm_rf(d1);
        rm_rf(d2);
}

Test(tree, refuses_a_non_empty_dir_and_bad_sizes) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        TreeOptions o;

        tree_options_init(&o, /* quick= */ true);
        o.files = 0;
        cr_expect_eq(tree_generate(dir, &o), -EINVAL);
        tree_options_init(&o, /* quick= */ true);
        o.funcs_per_file = 0;
        cr_expect_eq(tree_generate(dir, &o), -EINVAL);
        o.funcs_per_file = TREE_MAX_FUNCS_PER_FILE + 1;
        cr_expect_eq(tree_generate(dir, &o), -ERANGE);
        tree_options_init(&o, /* quick= */ true);
        o.files = TREE_MAX_FILES + 1;
        cr_expect_eq(tree_generate(dir, &o), -ERANGE);
        cr_expect(!exists(dir, "src") && !exists(dir, "Makefile"), "a refused tree wrote files");

        write_file_at(fd, "stray", "x");
        tree_options_init(&o, /* quick= */ true);
        cr_expect_eq(tree_generate(dir, &o), -ENOTEMPTY);
        cr_expect(!exists(dir, "Makefile"));
        rm_rf(dir);
}

Test(tree, missing_dir_is_enoent) {
        TreeOptions o;

        tree_options_init(&o, /* quick= */ true);
        cr_expect_eq(tree_generate("/nonexistent/cgbalance-tree", &o), -ENOENT);
        cr_expect_eq(tree_evict("/nonexistent/cgbalance-tree"), -ENOENT);
}

Test(tree, default_is_bigger_than_quick) {
        TreeOptions d, q;

        tree_options_init(&d, /* quick= */ false);
        tree_options_init(&q, /* quick= */ true);
        cr_expect_gt((uint64_t) d.files * d.funcs_per_file,
                     10 * (uint64_t) q.files * q.funcs_per_file);
        cr_expect_eq(d.seed, q.seed);
}

/* Pages of path in the page cache, out of the file's pages (*ret_total). */
static size_t resident_pages(const char *path, size_t *ret_total) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        long page = sysconf(_SC_PAGESIZE);
        unsigned char vec[4096];
        size_t pages, n = 0;
        struct stat st;
        void *m;

        cr_assert_geq(fd, 0);
        cr_assert_eq(fstat(fd, &st), 0);
        pages = ((size_t) st.st_size + (size_t) page - 1) / (size_t) page;
        cr_assert(pages > 0 && pages <= sizeof(vec));
        /* Never touched, so the mapping pins nothing: mincore() reports the page cache. */
        m = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        cr_assert_neq(m, MAP_FAILED);
        cr_assert_eq(mincore(m, (size_t) st.st_size, vec), 0, "mincore: %s", strerror(errno));
        for (size_t i = 0; i < pages; i++)
                n += vec[i] & 1;
        munmap(m, (size_t) st.st_size);
        *ret_total = pages;
        return n;
}

Test(tree, evict_drops_every_source_from_the_page_cache) {
        _cleanup_free_ char *dir = quick_tree();
        static const char *const files[] = { "src/m0000.c", "include/util.h", "Makefile" };
        struct statfs sfs;
        size_t total;

        cr_assert_eq(statfs(dir, &sfs), 0);
        if (sfs.f_type == TMPFS_MAGIC) {
                rm_rf(dir);
                cr_skip_test("%s is on tmpfs: its pages are the files, nothing can evict them",
                             dir);
        }
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = path_in(dir, files[i]), *content = read_all(p);

                cr_assert_gt(strlen(content), 0);
                cr_assert_eq(resident_pages(p, &total), total, "%s not cached after reading",
                             files[i]);
        }
        cr_assert_eq(tree_evict(dir), 0);
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = path_in(dir, files[i]);

                cr_expect_eq(resident_pages(p, &total), 0, "%s still cached (%zu pages)", files[i],
                             total);
        }
        rm_rf(dir);
}

/* ---- building it */

Test(job, quick_tree_builds_without_warnings_runs_and_cleans, .timeout = 120) {
        _cleanup_free_ char *dir = quick_tree(), *prog = NULL, *cmd = NULL, *out = NULL;
        _cleanup_free_ char *errors = NULL;
        JobResult res = untouched();
        TreeOptions o;
        unsigned hex;

        tree_options_init(&o, /* quick= */ true);
        cr_assert_eq(job_make(dir, NULL, 8, NULL, NULL, NULL, &res), 0);
        errors = job_last_errors(dir);
        cr_assert(WIFEXITED(res.exit_status) && WEXITSTATUS(res.exit_status) == 0, "make: %s",
                  errors ? errors : "(no stderr)");
        /* -Wall is in the tree's CFLAGS: any warning would be on stderr. */
        cr_expect_null(errors, "the build wrote to stderr: %s", errors);
        cr_expect_gt(res.elapsed_usec, 0);
        cr_expect_gt(res.user_usec, 0);
        cr_expect_lt(res.elapsed_usec, 60 * UINT64_C(1000000));
        cr_expect_gt(res.vol_ctxsw + res.invol_ctxsw, 0);
        cr_expect_eq(count_suffix(dir, ".o"), o.files + 1);

        prog = path_in(dir, "prog");
        cr_assert_gt(asprintf(&cmd, "'%s' >'%s.out'", prog, prog), 0);
        cr_expect_eq(system(cmd), 0, "the program did not exit 0");
        free(cmd);
        cr_assert_gt(asprintf(&cmd, "%s.out", prog), 0);
        out = read_all(cmd);
        cr_expect_eq(sscanf(out, "%8x", &hex), 1, "program printed: %s", out);
        (void) unlink(cmd);

        res = untouched();
        cr_assert_eq(job_make(dir, "clean", 1, NULL, NULL, NULL, &res), 0);
        cr_expect(WIFEXITED(res.exit_status) && WEXITSTATUS(res.exit_status) == 0);
        cr_expect_eq(count_suffix(dir, ".o"), 0);
        cr_expect(!exists(dir, "prog"));
        cr_expect(exists(dir, "src/m0000.c"), "clean removed a source");
        rm_rf(dir);
}

Test(job, setup_runs_in_the_child_which_leads_its_own_group) {
        _cleanup_free_ char *dir = quick_tree();
        ChildInfo *ci = child_info_new();
        JobResult res = untouched();

        cr_assert_eq(job_make(dir, "clean", 1, record_child, ci, NULL, &res), 0);
        cr_expect(WIFEXITED(res.exit_status) && WEXITSTATUS(res.exit_status) == 0);
        cr_expect_eq(ci->calls, 1);
        cr_expect_neq(ci->pid, getpid());
        cr_expect_gt(ci->pid, 0);
        cr_expect_eq(ci->pgrp, ci->pid);
        munmap(ci, sizeof(*ci));
        rm_rf(dir);
}

Test(job, failing_setup_fails_the_job_and_runs_no_make) {
        _cleanup_free_ char *dir = quick_tree();
        ChildInfo *ci = child_info_new();
        JobResult res = untouched();

        ci->fail_with = -EPERM;
        cr_expect_eq(job_make(dir, NULL, 8, record_child, ci, NULL, &res), -EPERM);
        cr_expect_eq(ci->calls, 1);
        cr_expect(is_untouched(&res), "*ret written on failure");
        cr_expect(!exists(dir, "obj"), "make ran after the setup failed");
        munmap(ci, sizeof(*ci));
        rm_rf(dir);
}

Test(job, missing_make_is_enoent) {
        _cleanup_free_ char *dir = quick_tree();
        JobResult res = untouched();

        _cleanup_free_ char *path = strdup(getenv("PATH") ?: "/usr/bin:/bin");
        int r;

        cr_assert_not_null(path);
        cr_assert_eq(setenv("PATH", "/nonexistent", 1), 0);
        r = job_make(dir, NULL, 1, NULL, NULL, NULL, &res);
        cr_assert_eq(setenv("PATH", path, 1), 0); /* rm_rf() needs it */
        cr_expect_eq(r, -ENOENT);
        cr_expect(is_untouched(&res));
        rm_rf(dir);
}

Test(job, makeflags_of_a_surrounding_make_do_not_reach_the_job) {
        _cleanup_free_ char *dir = quick_tree();
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        JobResult res = untouched();

        write_file_at(fd, "obj/m0000.o", "stale");
        /* -n from a parent make would turn `make clean` into printing rm. */
        cr_assert_eq(setenv("MAKEFLAGS", "n", 1), 0);
        cr_assert_eq(setenv("MAKELEVEL", "1", 1), 0);
        cr_assert_eq(job_make(dir, "clean", 1, NULL, NULL, NULL, &res), 0);
        cr_expect(WIFEXITED(res.exit_status) && WEXITSTATUS(res.exit_status) == 0);
        cr_expect(!exists(dir, "obj/m0000.o"), "clean did not run: MAKEFLAGS leaked");
        rm_rf(dir);
}

typedef struct StopRequest {
        ChildInfo *ci;
        volatile sig_atomic_t *stop;
        unsigned members_seen;
        uint64_t stop_usec;
} StopRequest;

/* Waits until make has compilers running (make + at least two more in its group), lets them
 * work a little, then sets the flag. */
static void *stop_when_compiling(void *arg) {
        StopRequest *s = arg;
        uint64_t give_up = now_usec() + 20 * UINT64_C(1000000);

        while (now_usec() < give_up) {
                if (s->ci->pgrp > 0 && (s->members_seen = group_members(s->ci->pgrp)) >= 3)
                        break;
                usleep(10000);
        }
        usleep(300000);
        s->stop_usec = now_usec();
        *s->stop = 1;
        return NULL;
}

Test(job, stop_from_a_thread_kills_make_and_every_compiler, .timeout = 60) {
        _cleanup_free_ char *dir = slow_tree();
        static volatile sig_atomic_t stop;
        ChildInfo *ci = child_info_new();
        StopRequest s = { .ci = ci, .stop = &stop };
        JobResult res = untouched();
        uint64_t returned;
        pthread_t t;
        int r;

        cr_assert_eq(pthread_create(&t, NULL, stop_when_compiling, &s), 0);
        r = job_make(dir, NULL, /* jobs= unbounded */ 0, record_child, ci, &stop, &res);
        returned = now_usec();
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_expect_eq(r, -EINTR);
        cr_expect_geq(s.members_seen, 3, "no compiler was running when the stop came");
        cr_expect_lt(returned - s.stop_usec, 2 * UINT64_C(1000000), "took %" PRIu64 " us",
                     returned - s.stop_usec);
        cr_expect(group_gone(ci->pgrp), "%u processes of the group are left",
                  group_members(ci->pgrp));
        cr_expect(is_untouched(&res));
        cr_expect(!exists(dir, "prog"));
        munmap(ci, sizeof(*ci));
        rm_rf(dir);
}

static volatile sig_atomic_t alarm_stop;

static void on_alarm(int sig) {
        (void) sig;
        alarm_stop = 1;
}

Test(job, stop_from_a_signal_handler_ends_the_job_at_once, .timeout = 60) {
        _cleanup_free_ char *dir = slow_tree();
        struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
        struct itimerval it = { .it_value = { .tv_sec = 1 } };
        ChildInfo *ci = child_info_new();
        JobResult res = untouched();
        uint64_t start, took;
        int r;

        cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
        start = now_usec();
        cr_assert_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
        r = job_make(dir, NULL, 8, record_child, ci, &alarm_stop, &res);
        took = now_usec() - start;
        cr_expect_eq(r, -EINTR);
        cr_expect_eq(alarm_stop, 1);
        /* The build alone takes several times this: the alarm at 1 s ended it. */
        cr_expect_lt(took, 3 * UINT64_C(1000000), "took %" PRIu64 " us", took);
        cr_expect_gt(ci->pgrp, 0);
        cr_expect(group_gone(ci->pgrp), "%u processes of the group are left",
                  group_members(ci->pgrp));
        cr_expect(is_untouched(&res));
        munmap(ci, sizeof(*ci));
        rm_rf(dir);
}

Test(job, stop_already_set_runs_nothing) {
        _cleanup_free_ char *dir = quick_tree();
        static volatile sig_atomic_t stop = 1;
        ChildInfo *ci = child_info_new();
        JobResult res = untouched();

        cr_expect_eq(job_make(dir, NULL, 8, record_child, ci, &stop, &res), -EINTR);
        cr_expect_eq(ci->calls, 0);
        cr_expect(is_untouched(&res));
        munmap(ci, sizeof(*ci));
        rm_rf(dir);
}

Test(job, broken_source_fails_and_shows_the_compiler_error, .timeout = 120) {
        _cleanup_free_ char *dir = quick_tree(), *src = NULL, *errors = NULL;
        JobResult res = untouched();
        FILE *f;

        src = path_in(dir, "src/m0001.c");
        f = fopen(src, "ae");
        cr_assert_not_null(f);
        fputs("\nthis is not C\n", f);
        cr_assert_eq(fclose(f), 0);

        cr_assert_eq(job_make(dir, NULL, 8, NULL, NULL, NULL, &res), 0);
        cr_expect(WIFEXITED(res.exit_status) && WEXITSTATUS(res.exit_status) != 0, "status %d",
                  res.exit_status);
        cr_expect(!exists(dir, "prog"));
        errors = job_last_errors(dir);
        cr_assert_not_null(errors);
        cr_expect(strstr(errors, "m0001.c") && strstr(errors, "error"), "errors: %s", errors);
        cr_expect_leq(strlen(errors), JOB_ERROR_BYTES);
        rm_rf(dir);
}

/* ---- job_last_errors() */

Test(job, last_errors_is_null_without_a_job) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_expect_null(job_last_errors(dir));
        write_file_at(fd, JOB_LOG_NAME, "\n \n");
        cr_expect_null(job_last_errors(dir), "blank stderr is no error");
        rm_rf(dir);
}

static unsigned count_lines(const char *s) {
        unsigned n = 1;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

Test(job, last_errors_keeps_the_last_lines_only) {
        _cleanup_free_ char *dir = make_tmpdir(), *log = NULL, *tail = NULL;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char line[64];
        size_t len = 0;

        log = calloc(1, 64 * 100 + 1);
        cr_assert_not_null(log);
        for (unsigned i = 1; i <= 100; i++) {
                snprintf(line, sizeof(line), "line %u of the log\n", i);
                memcpy(log + len, line, strlen(line));
                len += strlen(line);
        }
        write_file_at(fd, JOB_LOG_NAME, log);
        tail = job_last_errors(dir);
        cr_assert_not_null(tail);
        cr_expect_eq(count_lines(tail), JOB_ERROR_LINES, "%s", tail);
        cr_expect(strncmp(tail, "line 93 of the log\n", 19) == 0, "%s", tail);
        cr_expect_eq(tail[strlen(tail) - 1], 'g', "trailing newline kept");
        rm_rf(dir);
}

Test(job, last_errors_drops_a_line_cut_by_the_byte_limit) {
        _cleanup_free_ char *dir = make_tmpdir(), *log = NULL, *tail = NULL;
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        size_t big = 3 * JOB_ERROR_BYTES;

        log = malloc(big + 32);
        cr_assert_not_null(log);
        memset(log, 'x', big);
        strcpy(log + big, "\nlast\n");
        write_file_at(fd, JOB_LOG_NAME, log);
        tail = job_last_errors(dir);
        cr_assert_not_null(tail);
        cr_expect_str_eq(tail, "last");
        rm_rf(dir);
}
