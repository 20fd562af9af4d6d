/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The contest loads that run commands and do file I/O (ctar, xtar, io, io_other, read, list),
 * each run in-process for a second over a small tree: real work counted as it completes, the
 * duration kept, a stop from a thread or a signal obeyed within a second, nothing left behind
 * (no file, no child). Plus the helpers they share: load_run_command() and load_remove_tree().
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "load.h"
#include "macro.h"
#include "testutil.h"

#define MIB (UINT64_C(1) << 20)
#define RAM_BYTES (16 * MIB)
#define SEC UINT64_C(1000000)

static volatile sig_atomic_t stop_flag;

/* Every temporary directory a test makes, removed by the suites' fini even when an assertion
 * ended the test early. */
static char *tmpdirs[8];

static char *tmpdir(void) {
        for (size_t i = 0; i < ELEMENTSOF(tmpdirs); i++)
                if (!tmpdirs[i])
                        return tmpdirs[i] = make_tmpdir();
        cr_assert_fail("more than %zu temporary directories", ELEMENTSOF(tmpdirs));
        return NULL;
}

static void remove_tmpdirs(void) {
        for (size_t i = 0; i < ELEMENTSOF(tmpdirs); i++) {
                rm_rf(tmpdirs[i]);
                tmpdirs[i] = mfree(tmpdirs[i]);
        }
}

TestSuite(loads, .fini = remove_tmpdirs);
TestSuite(remove_tree, .fini = remove_tmpdirs);

/* ---- a load's world: work, other and tree dirs, a shared progress counter, a ready pipe */

typedef struct Env {
        char *work, *other, *tree;
        _Atomic uint64_t *progress;
        int ready[2];
        LoadOptions o;
} Env;

/* A few dozen files, three levels deep, dot files included: enough for tar and ls to walk. */
static void make_tree(const char *root) {
        _cleanup_close_ int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        char content[2048];

        cr_assert_geq(dfd, 0, "open %s: %s", root, strerror(errno));
        memset(content, 'x', sizeof(content) - 1);
        content[sizeof(content) - 1] = '\0';
        for (int i = 0; i < 40; i++) {
                char path[64];

                snprintf(path, sizeof(path), "src/d%d/s%d/f%02d.c", i % 4, i % 3, i);
                write_file_at(dfd, path, content);
        }
        write_file_at(dfd, "src/.hidden", "dot file\n");
        write_file_at(dfd, "Makefile", "all:\n");
}

static void env_init(Env *e, uint64_t duration_usec) {
        *e = (Env){ .work = tmpdir(), .other = tmpdir(), .tree = tmpdir() };
        make_tree(e->tree);
        e->progress = mmap(NULL, sizeof(*e->progress), PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        cr_assert_neq(e->progress, MAP_FAILED);
        cr_assert_eq(pipe2(e->ready, O_CLOEXEC | O_NONBLOCK), 0);
        load_options_init(&e->o);
        e->o.duration_usec = duration_usec;
        e->o.ram_bytes = RAM_BYTES;
        e->o.work_dir = e->work;
        e->o.other_dir = e->other;
        e->o.tree_dir = e->tree;
        e->o.stop = &stop_flag;
        e->o.progress = e->progress;
        e->o.ready_fd = e->ready[1];
}

/* The directories go with the suite's fini. */
static void env_done(Env *e) {
        (void) munmap((void *) e->progress, sizeof(*e->progress));
        (void) close(e->ready[0]);
        (void) close(e->ready[1]);
}

/* Bytes load_ready() wrote to the ready pipe so far. */
static size_t ready_bytes(const Env *e) {
        char buf[16];
        ssize_t n = read(e->ready[0], buf, sizeof(buf));

        return n > 0 ? (size_t) n : 0;
}

static size_t entries(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        cr_assert_not_null(d, "opendir %s: %s", dir, strerror(errno));
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        n++;
        closedir(d);
        return n;
}

/* Every child reaped and none running: waitpid() has no child at all to report. */
static bool no_child_left(void) {
        return waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD;
}

static uint64_t elapsed_since(uint64_t start_usec) {
        return now_usec() - start_usec;
}

/* ---- stopping from a thread, from a signal, watching files from a thread */

static void *stop_after(void *arg) {
        uint64_t usec = *(uint64_t *) arg;

        usleep((useconds_t) usec);
        stop_flag = 1;
        return NULL;
}

static void on_alarm(int sig) {
        (void) sig;
        stop_flag = 1;
}

/* As loadgen installs its SIGTERM handler: no SA_RESTART, so a blocking wait returns EINTR. */
static void stop_on_alarm(void) {
        struct sigaction sa = { .sa_handler = on_alarm };

        cr_assert_eq(sigaction(SIGALRM, &sa, NULL), 0);
}

typedef struct Watch {
        const char *dir;
        _Atomic bool done;
        uint64_t largest; /* the largest regular file seen below dir */
        unsigned samples; /* scans that saw a file */
        unsigned shrinks; /* scans that saw it smaller than the scan before */
} Watch;

/* The largest regular file below dir (files come and go under us: vanished ones are skipped). */
static uint64_t largest_file(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *de;
        uint64_t max = 0;

        if (!d)
                return 0;
        while ((de = readdir(d))) {
                _cleanup_free_ char *p = NULL;
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, "..") ||
                    asprintf(&p, "%s/%s", dir, de->d_name) < 0 || lstat(p, &st) < 0)
                        continue;
                if (S_ISDIR(st.st_mode))
                        max = MAX(max, largest_file(p));
                else if (S_ISREG(st.st_mode))
                        max = MAX(max, (uint64_t) st.st_size);
        }
        closedir(d);
        return max;
}

static void *watch(void *arg) {
        Watch *w = arg;
        uint64_t last = 0;

        while (!w->done) {
                uint64_t s = largest_file(w->dir);

                if (s > 0) {
                        w->largest = MAX(w->largest, s);
                        w->samples++;
                        w->shrinks += s < last;
                        last = s;
                }
                usleep(500);
        }
        return NULL;
}

/* ---- the loads run for their duration */

static void check_runs_for_its_duration(const char *name) {
        const Load *l = load_find(name);
        LoadResult res;
        Env e;
        int r;

        cr_assert_not_null(l, "no load %s", name);
        env_init(&e, SEC);
        r = l->run(&e.o, &res);
        cr_assert_eq(r, 0, "%s: %s", name, strerror(-r));

        cr_expect_gt(res.work, 0, "%s did no work", name);
        cr_expect_eq(res.work, *e.progress, "%s: work %" PRIu64 " but progress %" PRIu64, name,
                     res.work, *e.progress);
        cr_expect_geq(res.elapsed_usec, SEC - 10000, "%s: %" PRIu64 " us", name, res.elapsed_usec);
        cr_expect_lt(res.elapsed_usec, SEC * 3 / 2, "%s: %" PRIu64 " us", name, res.elapsed_usec);
        cr_expect_not(res.interrupted);
        cr_expect_eq(ready_bytes(&e), 1, "%s: load_ready() once", name);
        cr_expect_eq(entries(e.work), 0, "%s left files in work_dir", name);
        cr_expect_eq(entries(e.other), 0, "%s left files in other_dir", name);
        cr_expect(no_child_left(), "%s left a child", name);
        cr_log_info("%s: %" PRIu64 " %s in %" PRIu64 " ms (%.1f/s)", name, res.work, l->unit,
                    res.elapsed_usec / 1000, (double) res.work * 1e6 / (double) res.elapsed_usec);
        env_done(&e);
}

Test(loads, ctar_load_archives_for_its_duration_and_cleans_up, .timeout = 20) {
        check_runs_for_its_duration("ctar_load");
}

Test(loads, xtar_load_extracts_for_its_duration_and_cleans_up, .timeout = 20) {
        check_runs_for_its_duration("xtar_load");
}

Test(loads, io_load_writes_for_its_duration_and_cleans_up, .timeout = 20) {
        check_runs_for_its_duration("io_load");
}

Test(loads, io_other_writes_for_its_duration_and_cleans_up, .timeout = 20) {
        check_runs_for_its_duration("io_other");
}

Test(loads, read_load_reads_for_its_duration_and_cleans_up, .timeout = 20) {
        check_runs_for_its_duration("read_load");
}

Test(loads, list_load_lists_for_its_duration_and_cleans_up, .timeout = 20) {
        check_runs_for_its_duration("list_load");
}

/* ---- stop requests: from another thread, from a signal handler */

typedef enum StopBy { STOP_BY_THREAD, STOP_BY_ALARM } StopBy;

/* Runs name until stopped (no duration) and checks it returned within a second of the stop. */
static void check_stops_promptly(const char *name, StopBy how) {
        const Load *l = load_find(name);
        uint64_t stop_usec = how == STOP_BY_THREAD ? SEC / 2 : SEC, start, took;
        pthread_t t;
        LoadResult res;
        Env e;
        int r;

        cr_assert_not_null(l, "no load %s", name);
        env_init(&e, /* duration_usec= */ 0);
        start = now_usec();
        if (how == STOP_BY_THREAD)
                cr_assert_eq(pthread_create(&t, NULL, stop_after, &stop_usec), 0);
        else {
                stop_on_alarm();
                alarm(1);
        }
        r = l->run(&e.o, &res);
        took = elapsed_since(start);
        if (how == STOP_BY_THREAD)
                cr_assert_eq(pthread_join(t, NULL), 0);

        cr_assert_eq(r, 0, "%s: %s", name, strerror(-r));
        cr_expect(res.interrupted, "%s: not interrupted", name);
        cr_expect_geq(took, stop_usec - 10000, "%s returned before the stop", name);
        cr_expect_lt(took, stop_usec + SEC, "%s took %" PRIu64 " us to stop", name,
                     took - stop_usec);
        cr_expect_gt(res.work, 0, "%s did no work before the stop", name);
        cr_expect_eq(res.work, *e.progress);
        cr_expect_eq(entries(e.work), 0, "%s left files in work_dir", name);
        cr_expect_eq(entries(e.other), 0, "%s left files in other_dir", name);
        cr_expect(no_child_left(), "%s left a child", name);
        env_done(&e);
}

Test(loads, ctar_load_stops_from_a_thread, .timeout = 20) {
        check_stops_promptly("ctar_load", STOP_BY_THREAD);
}

Test(loads, ctar_load_stops_from_a_signal, .timeout = 20) {
        check_stops_promptly("ctar_load", STOP_BY_ALARM);
}

Test(loads, xtar_load_stops_from_a_thread, .timeout = 20) {
        check_stops_promptly("xtar_load", STOP_BY_THREAD);
}

Test(loads, xtar_load_stops_from_a_signal, .timeout = 20) {
        check_stops_promptly("xtar_load", STOP_BY_ALARM);
}

Test(loads, io_load_stops_from_a_thread, .timeout = 20) {
        check_stops_promptly("io_load", STOP_BY_THREAD);
}

Test(loads, io_load_stops_from_a_signal, .timeout = 20) {
        check_stops_promptly("io_load", STOP_BY_ALARM);
}

Test(loads, io_other_stops_from_a_thread, .timeout = 20) {
        check_stops_promptly("io_other", STOP_BY_THREAD);
}

Test(loads, io_other_stops_from_a_signal, .timeout = 20) {
        check_stops_promptly("io_other", STOP_BY_ALARM);
}

Test(loads, read_load_stops_from_a_thread, .timeout = 20) {
        check_stops_promptly("read_load", STOP_BY_THREAD);
}

Test(loads, read_load_stops_from_a_signal, .timeout = 20) {
        check_stops_promptly("read_load", STOP_BY_ALARM);
}

Test(loads, list_load_stops_from_a_thread, .timeout = 20) {
        check_stops_promptly("list_load", STOP_BY_THREAD);
}

Test(loads, list_load_stops_from_a_signal, .timeout = 20) {
        check_stops_promptly("list_load", STOP_BY_ALARM);
}

/* A stop before the load is prepared: no work, no ready byte, nothing left. */
Test(loads, read_load_stopped_while_preparing_reports_no_work, .timeout = 20) {
        LoadResult res;
        Env e;
        int r;

        env_init(&e, SEC);
        stop_flag = 1;
        r = read_load_run(&e.o, &res);
        cr_assert_eq(r, 0, "%s", strerror(-r));
        cr_expect(res.interrupted);
        cr_expect_eq(res.work, 0);
        cr_expect_eq(ready_bytes(&e), 0, "ready although never prepared");
        cr_expect_eq(entries(e.work), 0);
        env_done(&e);
}

/* ---- file sizes while they run */

/* Runs name for 2 s while a thread watches dir; returns the load's work in MiB. */
static uint64_t run_watched(const char *name, Env *e, Watch *w) {
        const Load *l = load_find(name);
        LoadResult res;
        pthread_t t;
        int r;

        cr_assert_not_null(l);
        cr_assert_eq(pthread_create(&t, NULL, watch, w), 0);
        r = l->run(&e->o, &res);
        w->done = true;
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_assert_eq(r, 0, "%s: %s", name, strerror(-r));
        return res.work;
}

Test(loads, io_load_file_never_exceeds_ram_bytes, .timeout = 20) {
        uint64_t work;
        Watch w = { 0 };
        Env e;

        env_init(&e, 2 * SEC);
        w.dir = e.work;
        work = run_watched("io_load", &e, &w);
        /* Three passes or more: a file not truncated between passes would have outgrown RAM. */
        cr_expect_gt(work, 2 * RAM_BYTES / MIB, "only %" PRIu64 " MiB written", work);
        cr_expect_gt(w.samples, 0, "the file was never seen");
        cr_expect_leq(w.largest, RAM_BYTES, "file grew to %" PRIu64 " bytes", w.largest);
        env_done(&e);
}

/* dd of=FILE truncates FILE: each pass starts from an empty file, freeing the last pass's
 * blocks, rather than overwriting them in place. */
Test(loads, io_load_truncates_its_file_every_pass, .timeout = 20) {
        uint64_t work;
        Watch w = { 0 };
        Env e;

        env_init(&e, 2 * SEC);
        w.dir = e.work;
        work = run_watched("io_load", &e, &w);
        cr_assert_gt(work, 3 * RAM_BYTES / MIB, "only %" PRIu64 " MiB written", work);
        cr_expect_geq(w.shrinks, 2, "the file shrank %u times in %" PRIu64 " passes", w.shrinks,
                      work / (RAM_BYTES / MIB));
        env_done(&e);
}

Test(loads, io_other_writes_below_other_dir_only, .timeout = 20) {
        Watch in_work = { 0 }, in_other = { 0 };
        pthread_t t;
        Env e;

        env_init(&e, SEC);
        in_work.dir = e.work;
        in_other.dir = e.other;
        cr_assert_eq(pthread_create(&t, NULL, watch, &in_work), 0);
        (void) run_watched("io_other", &e, &in_other);
        in_work.done = true;
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_expect_gt(in_other.samples, 0, "nothing written below other_dir");
        cr_expect_leq(in_other.largest, RAM_BYTES);
        cr_expect_eq(in_work.samples, 0, "io_other wrote in work_dir");
        cr_expect_eq(entries(e.other), 0, "its directory in other_dir is left");
        env_done(&e);
}

Test(loads, read_load_rereads_one_file_of_ram_bytes, .timeout = 20) {
        uint64_t work;
        Watch w = { 0 };
        Env e;

        env_init(&e, 2 * SEC);
        w.dir = e.work;
        work = run_watched("read_load", &e, &w);
        cr_expect_eq(w.largest, RAM_BYTES, "file of %" PRIu64 " bytes", w.largest);
        cr_expect_gt(work, RAM_BYTES / MIB, "read %" PRIu64 " MiB: never past one pass", work);
        env_done(&e);
}

/* ---- failing commands are errors, not work */

static void check_fails_on_a_missing_tree(const char *name) {
        _cleanup_free_ char *missing = NULL;
        const Load *l = load_find(name);
        LoadResult res = { .work = 12345 };
        Env e;
        int r;

        cr_assert_not_null(l);
        env_init(&e, SEC);
        cr_assert_gt(asprintf(&missing, "%s/missing", e.tree), 0);
        e.o.tree_dir = missing;
        r = l->run(&e.o, &res);
        cr_expect_eq(r, -EIO, "%s: %d (%s)", name, r, strerror(-r));
        cr_expect_eq(res.work, 12345, "%s wrote its result on failure", name);
        cr_expect_eq(*e.progress, 0, "%s counted a failed command", name);
        cr_expect_eq(entries(e.work), 0, "%s left files in work_dir", name);
        cr_expect(no_child_left(), "%s left a child", name);
        env_done(&e);
}

Test(loads, ctar_load_fails_on_a_missing_tree, .timeout = 20) {
        check_fails_on_a_missing_tree("ctar_load");
}

Test(loads, xtar_load_fails_on_a_missing_tree, .timeout = 20) {
        check_fails_on_a_missing_tree("xtar_load");
}

Test(loads, list_load_fails_on_a_missing_tree, .timeout = 20) {
        check_fails_on_a_missing_tree("list_load");
}

Test(loads, io_load_without_a_whole_mib_is_erange) {
        LoadResult res;
        Env e;

        env_init(&e, SEC);
        e.o.ram_bytes = MIB - 1;
        cr_expect_eq(io_load_run(&e.o, &res), -ERANGE);
        cr_expect_eq(read_load_run(&e.o, &res), -ERANGE);
        cr_expect_eq(entries(e.work), 0);
        env_done(&e);
}

/* ---- the table */

Test(loads, table_is_in_contest_order) {
        static const char *const order[] = { "no_load",   "cacherun", "process_load", "ctar_load",
                                             "xtar_load", "io_load",  "io_other",     "read_load",
                                             "list_load", "mem_load" };

        cr_assert_eq(n_loads, ELEMENTSOF(order));
        for (size_t i = 0; i < n_loads; i++) {
                cr_expect_str_eq(loads[i].name, order[i]);
                cr_expect_eq(load_find(order[i]), &loads[i]);
                cr_expect_null(strchr(loads[i].description, '\n'), "%s", loads[i].name);
                cr_expect_gt(loads[i].contest_scale, 0, "%s", loads[i].name);
        }
}

Test(loads, io_and_read_loads_count_mib_and_show_hundreds) {
        static const char *const names[] = { "io_load", "io_other", "read_load" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                const Load *l = load_find(names[i]);

                cr_assert_not_null(l, "%s", names[i]);
                cr_expect_eq(l->contest_scale, 100, "%s", names[i]);
                cr_expect_not_null(strstr(l->contest_unit, "/ 100"), "%s", names[i]);
        }
}

/* ---- load_run_command() */

static int run_command(const char *const argv[], uint64_t deadline_usec) {
        LoadOptions o;

        load_options_init(&o);
        o.stop = &stop_flag;
        return load_run_command(&o, deadline_usec, argv);
}

Test(run_command, reports_exit_status) {
        cr_expect_eq(run_command((const char *const[]){ "true", NULL }, UINT64_MAX), 0);
        cr_expect_eq(run_command((const char *const[]){ "false", NULL }, UINT64_MAX), -EIO);
        cr_expect_eq(
                run_command((const char *const[]){ "sh", "-c", "kill -9 $$", NULL }, UINT64_MAX),
                -EIO);
        cr_expect(no_child_left());
}

Test(run_command, missing_program_is_enoent) {
        cr_expect_eq(run_command((const char *const[]){ "/nonexistent/prog", NULL }, UINT64_MAX),
                     -ENOENT);
        cr_expect(no_child_left());
}

Test(run_command, gives_the_command_dev_null_for_stdio) {
        const char *script = "for f in 0 1 2; do "
                             "[ \"$(readlink /proc/$$/fd/$f)\" = /dev/null ] || exit 1; done";

        cr_expect_eq(run_command((const char *const[]){ "sh", "-c", script, NULL }, UINT64_MAX), 0);
}

Test(run_command, kills_the_command_on_a_stop_from_a_thread, .timeout = 20) {
        uint64_t stop_usec = SEC / 4, start = now_usec(), took;
        pthread_t t;
        int r;

        cr_assert_eq(pthread_create(&t, NULL, stop_after, &stop_usec), 0);
        r = run_command((const char *const[]){ "sleep", "30", NULL }, UINT64_MAX);
        took = elapsed_since(start);
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_expect_eq(r, -ECANCELED, "%s", strerror(-r));
        cr_expect_geq(took, stop_usec);
        cr_expect_lt(took, stop_usec + SEC / 2, "took %" PRIu64 " us", took);
        cr_expect(no_child_left());
}

Test(run_command, kills_the_command_on_a_stop_from_a_signal, .timeout = 20) {
        uint64_t start = now_usec(), took;
        int r;

        stop_on_alarm();
        alarm(1);
        r = run_command((const char *const[]){ "sleep", "30", NULL }, UINT64_MAX);
        took = elapsed_since(start);
        cr_expect_eq(r, -ECANCELED, "%s", strerror(-r));
        cr_expect_geq(took, SEC - 10000);
        /* The signal itself wakes the wait: no need for the 100 ms poll. */
        cr_expect_lt(took, SEC + SEC / 10, "took %" PRIu64 " us", took);
        cr_expect(no_child_left());
}

Test(run_command, kills_the_command_at_the_deadline, .timeout = 20) {
        uint64_t start = now_usec(), took;
        int r;

        r = run_command((const char *const[]){ "sleep", "30", NULL }, start + SEC / 4);
        took = elapsed_since(start);
        cr_expect_eq(r, -ECANCELED, "%s", strerror(-r));
        cr_expect_geq(took, SEC / 4);
        cr_expect_lt(took, SEC / 4 + SEC / 10, "took %" PRIu64 " us", took);
        cr_expect(no_child_left());
}

Test(run_command, returns_as_soon_as_the_command_exits) {
        uint64_t start = now_usec(), took;

        for (int i = 0; i < 20; i++)
                cr_assert_eq(run_command((const char *const[]){ "true", NULL }, UINT64_MAX), 0);
        took = elapsed_since(start);
        /* Each wait must end at the exit, not at the next 100 ms poll. */
        cr_expect_lt(took, SEC, "20 runs of true took %" PRIu64 " us", took);
}

/* ---- load_remove_tree() */

Test(remove_tree, removes_nested_dirs_but_not_what_symlinks_point_to) {
        char *dir = tmpdir(), *outside = tmpdir();
        _cleanup_free_ char *target = NULL, *link = NULL, *sub = NULL;
        _cleanup_close_ int dfd = -EBADF;
        struct stat st;

        make_tree(dir);
        cr_assert_gt(asprintf(&target, "%s/keep", outside), 0);
        cr_assert_gt(asprintf(&link, "%s/src/d0/link", dir), 0);
        cr_assert_gt(asprintf(&sub, "%s/src/d1/to-dir", dir), 0);
        dfd = open(outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        write_file_at(dfd, "keep", "precious\n");
        cr_assert_eq(symlink(target, link), 0);
        cr_assert_eq(symlink(outside, sub), 0);

        cr_expect_eq(load_remove_tree(dir), 0);
        cr_expect(lstat(dir, &st) < 0 && errno == ENOENT, "%s is still there", dir);
        cr_expect_eq(stat(target, &st), 0, "followed a symlink out of the tree");
}

Test(remove_tree, missing_path_is_not_an_error) {
        _cleanup_free_ char *missing = NULL;

        cr_assert_gt(asprintf(&missing, "%s/missing", tmpdir()), 0);
        cr_expect_eq(load_remove_tree(missing), 0);
}

Test(helpers, page_step_visits_every_page_once_a_pass) {
        static const uint64_t sizes[] = { 1, 2, 3, 4096, 4099, 8198, 12297, 65536, 100003 };

        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
                uint64_t n = sizes[k], step = load_page_step(n), page = 0;
                _cleanup_free_ unsigned char *seen = calloc(n, 1);

                cr_assert(seen);
                cr_expect(step >= 1 && (n == 1 || step < n), "%" PRIu64 " pages: step %" PRIu64, n,
                          step);
                for (uint64_t i = 0; i < n; i++) {
                        seen[page]++;
                        page = (page + step) % n;
                }
                for (uint64_t i = 0; i < n; i++)
                        cr_expect_eq(seen[i], 1,
                                     "%" PRIu64 " pages: page %" PRIu64 " seen %u times", n, i,
                                     seen[i]);
        }
}

/* mem_load sizes its buffer by what the run's memory group is charged for it: the pages it wrote
 * itself, not those it still shares with the parent it was forked from. */
Test(mem_load, private_dirty_is_read_from_smaps_rollup) {
        static const char text[] = "55d0c0a00000-7ffd1a5fe000 ---p 00000000 00:00 0 [rollup]\n"
                                   "Rss:               29720 kB\n"
                                   "Shared_Clean:       3152 kB\n"
                                   "Shared_Dirty:      18000 kB\n"
                                   "Private_Clean:        12 kB\n"
                                   "Private_Dirty:      8556 kB\n"
                                   "Anonymous:         26564 kB\n";
        uint64_t bytes = 0;

        cr_assert_eq(mem_load_parse_private_dirty(text, &bytes), 0);
        cr_expect_eq(bytes, UINT64_C(8556) * 1024);
}

Test(mem_load, smaps_rollup_without_private_dirty_is_ebadmsg) {
        uint64_t bytes = 7;

        cr_expect_eq(mem_load_parse_private_dirty("Rss: 12 kB\nPrivate_Clean: 4 kB\n", &bytes),
                     -EBADMSG);
        cr_expect_eq(mem_load_parse_private_dirty("Private_Dirty: lots\n", &bytes), -EBADMSG);
        cr_expect_eq(mem_load_parse_private_dirty("Private_Dirty: 12\n", &bytes), -EBADMSG);
        cr_expect_eq(mem_load_parse_private_dirty("", &bytes), -EBADMSG);
        cr_expect_eq(mem_load_parse_private_dirty(NULL, &bytes), -EINVAL);
        cr_expect_eq(bytes, 7, "ret written on error");
}

Test(mem_load, buffer_is_ninety_percent_less_what_is_charged) {
        uint64_t want = 32 * MIB / 100 * 90;
        /* Under AddressSanitizer the shadow takes an eighth more: the buffer is 8/9 of the room. */
#ifdef __SANITIZE_ADDRESS__
        uint64_t room = (want - 4 * MIB) / 9 * 8;
#else
        uint64_t room = want - 4 * MIB;
#endif

        cr_expect_eq(mem_load_buffer_bytes(32 * MIB, 4 * MIB), room);
        cr_expect_eq(mem_load_buffer_bytes(32 * MIB, want), 0, "nothing left");
        cr_expect_eq(mem_load_buffer_bytes(32 * MIB, 40 * MIB), 0, "over the reference");
}
