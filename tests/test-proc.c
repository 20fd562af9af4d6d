/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <numa.h>
#include <unistd.h>

#include "proc.h"
#include "testutil.h"

/* ---- helpers */

/* A real /proc/PID/stat line (a `cat`): 52 fields, comm and state included. */
static const char real_line[] =
        "5819 (cat) R 5817 5817 3446 0 -1 4194304 102 0 0 0 1234 567 0 0 20 0 1 0 35102 3133440 "
        "379 18446744073709551615 94117347057664 94117347077545 140733367296288 0 0 0 0 0 0 0 0 0 "
        "17 1 0 0 0 0 0 94117347093552 94117347095168 94117426511872 140733367298698 "
        "140733367298718 140733367298718 140733367300075 0";

/* A variation of the real line: comm, one field (1-based) replaced, nfields kept, an end. */
typedef struct LineSpec {
        const char *comm; /* NULL: "cat" */
        unsigned field; /* 0: none replaced */
        const char *value;
        unsigned nfields; /* 0: all 52 */
        const char *end; /* NULL: "\n" */
} LineSpec;

static char *make_line(const LineSpec *l) {
        _cleanup_free_ char *fields = strdup(real_line);
        char *buf = NULL, *save = NULL, *v;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        unsigned i = 1;

        cr_assert_not_null(fields);
        cr_assert_not_null(f);
        for (v = strtok_r(fields, " ", &save); v; v = strtok_r(NULL, " ", &save), i++) {
                if (l->nfields && i > l->nfields)
                        break;
                if (i == l->field)
                        v = (char *) l->value;
                else if (i == 2 && l->comm)
                        v = NULL;
                if (v)
                        fprintf(f, "%s%s", i > 1 ? " " : "", v);
                else
                        fprintf(f, " (%s)", l->comm);
        }
        cr_assert_eq(i, l->nfields ? l->nfields + 1 : 53, "real_line has 52 fields");
        fputs(l->end ? l->end : "\n", f);
        cr_assert_eq(fclose(f), 0);
        return buf;
}

static void fill_sentinel(TaskStat *s) {
        memset(s, 0xA5, sizeof *s);
}

static bool is_sentinel(const TaskStat *s) {
        TaskStat t;

        fill_sentinel(&t);
        return memcmp(s, &t, sizeof t) == 0;
}

static int open_proc(void) {
        int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        cr_assert_geq(fd, 0, "open /proc: %s", strerror(errno));
        return fd;
}

/* ---- proc_task_stat_parse: the pure parser */

Test(task_stat_parse, real_line_gives_every_field) {
        _cleanup_free_ char *line = make_line(&(LineSpec){});
        TaskStat s;

        cr_assert_eq(proc_task_stat_parse(line, &s), 0);
        cr_expect_eq(s.tid, 5819);
        cr_expect_str_eq(s.comm, "cat");
        cr_expect_eq(s.state, 'R');
        cr_expect_eq(s.ppid, 5817);
        cr_expect_eq(s.flags, 4194304u);
        cr_expect_eq(s.utime_ticks, 1234);
        cr_expect_eq(s.stime_ticks, 567);
        cr_expect_eq(s.nice, 0);
        cr_expect_eq(s.num_threads, 1);
        cr_expect_eq(s.starttime_ticks, 35102);
        cr_expect_eq(s.processor, 1);
        cr_expect_eq(s.rt_priority, 0);
        cr_expect_eq(s.policy, 0);
        cr_expect_not(task_stat_is_kthread(&s));
}

Test(task_stat_parse, hostile_comms_end_at_last_paren) {
        static const char *const comms[] = {
                "a b",
                "foo) Z ",
                "()()))((",
                ": - )",
                "new\nline",
                "",
                "123456789012345",
                ") R 1 2 3",
                "x) S 5817 5817 3446 0 -1 4194304 102 0 0 0 1 2",
                "-",
                "\t",
                "(",
                ")",
                "))",
                "kworker/u8:1-ext4-rsv-conversion",
                "012345678901234567890123456789012345678901234567890123456789012", /* 63 */
        };

        for (size_t i = 0; i < ELEMENTSOF(comms); i++) {
                _cleanup_free_ char *line = make_line(&(LineSpec){ .comm = comms[i] });
                TaskStat s;

                cr_assert_eq(proc_task_stat_parse(line, &s), 0, "comm \"%s\"", comms[i]);
                cr_expect_str_eq(s.comm, comms[i]);
                cr_expect_eq(s.state, 'R', "comm \"%s\"", comms[i]);
                cr_expect_eq(s.ppid, 5817, "comm \"%s\"", comms[i]);
                cr_expect_eq(s.utime_ticks, 1234, "comm \"%s\"", comms[i]);
                cr_expect_eq(s.starttime_ticks, 35102, "comm \"%s\"", comms[i]);
                cr_expect_eq(s.processor, 1, "comm \"%s\"", comms[i]);
        }
}

Test(task_stat_parse, field_values_within_range_are_kept) {
        static const struct {
                LineSpec l;
                int nice;
                uint64_t utime;
                unsigned processor, rt_priority, policy;
        } cases[] = {
                { { .field = 19, .value = "-20" }, -20, 1234, 1, 0, 0 },
                { { .field = 19, .value = "19" }, 19, 1234, 1, 0, 0 },
                { { .field = 19, .value = "-0" }, 0, 1234, 1, 0, 0 },
                { { .field = 18, .value = "-51" }, 0, 1234, 1, 0, 0 }, /* RT prio: negative */
                { { .field = 8, .value = "-1" }, 0, 1234, 1, 0, 0 },
                { { .field = 14, .value = "18446744073709551615" }, 0, UINT64_MAX, 1, 0, 0 },
                { { .field = 14, .value = "000042" }, 0, 42, 1, 0, 0 },
                { { .field = 39, .value = "2147483647" }, 0, 1234, 2147483647u, 0, 0 },
                { { .field = 40, .value = "99" }, 0, 1234, 1, 99, 0 },
                { { .field = 41, .value = "6" }, 0, 1234, 1, 0, 6 }, /* SCHED_DEADLINE */
                { { .nfields = 41 }, 0, 1234, 1, 0, 0 },
                { { .end = " 0 0 0\n" }, 0, 1234, 1, 0, 0 }, /* fields a later kernel adds */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *line = make_line(&cases[i].l);
                TaskStat s;

                cr_assert_eq(proc_task_stat_parse(line, &s), 0, "case %zu: %s", i, line);
                cr_expect_eq(s.nice, cases[i].nice, "case %zu", i);
                cr_expect_eq(s.utime_ticks, cases[i].utime, "case %zu", i);
                cr_expect_eq(s.processor, cases[i].processor, "case %zu", i);
                cr_expect_eq(s.rt_priority, cases[i].rt_priority, "case %zu", i);
                cr_expect_eq(s.policy, cases[i].policy, "case %zu", i);
        }
}

Test(task_stat_parse, malformed_lines_are_ebadmsg_and_write_nothing) {
        static const LineSpec cases[] = {
                { .field = 1, .value = "0" },
                { .field = 1, .value = "-5" },
                { .field = 1, .value = "2147483648" },
                { .field = 1, .value = " 5819" },
                { .field = 3, .value = "1" },
                { .field = 3, .value = "" },
                { .field = 3, .value = "RR" },
                { .field = 3, .value = ")" },
                { .field = 4, .value = "2147483648" },
                { .field = 4, .value = "-1" },
                { .field = 9, .value = "4294967296" },
                { .field = 14, .value = "-1" },
                { .field = 14, .value = "18446744073709551616" },
                { .field = 14, .value = "12a" },
                { .field = 14, .value = "+5" },
                { .field = 14, .value = "" },
                { .field = 14, .value = "1\t2" },
                { .field = 14, .value = "0x10" },
                { .field = 19, .value = "20" },
                { .field = 19, .value = "-21" },
                { .field = 19, .value = "--1" },
                { .field = 22, .value = "-35102" },
                { .field = 30, .value = "-" },
                { .field = 39, .value = "-1" },
                { .field = 39, .value = "2147483648" },
                { .field = 41, .value = "x" },
                { .field = 52, .value = "1)" },
                { .nfields = 40 },
                { .nfields = 3 },
                { .nfields = 2 },
                { .end = "" },
                { .end = " \n" },
                { .end = "\n\n" },
                { .end = "\nx" },
                { .end = "\r\n" },
                { .comm = "0123456789012345678901234567890123456789012345678901234567890123" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *line = make_line(&cases[i]);
                TaskStat s;

                fill_sentinel(&s);
                cr_expect_eq(proc_task_stat_parse(line, &s), -EBADMSG, "case %zu: \"%s\"", i, line);
                cr_expect(is_sentinel(&s), "case %zu wrote its result", i);
        }
}

Test(task_stat_parse, cut_or_broken_text_is_ebadmsg) {
        static const char *const cases[] = {
                "",
                "\n",
                " ",
                "5819",
                "5819 ",
                "5819 (",
                "5819 (cat",
                "5819 (cat)",
                "5819 (cat) ",
                "5819 (cat) R",
                "5819 (cat) R\n",
                "5819 (cat) R 5817",
                "5819(cat) R 5817\n",
                "5819 (cat)R 5817\n",
                "5819  (cat) R 5817\n",
                "(cat) R 5817\n",
                "5819 cat) R 5817\n",
                "5819 (cat) R 5817 5817 3446 0 -1 41943",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                TaskStat s;

                fill_sentinel(&s);
                cr_expect_eq(proc_task_stat_parse(cases[i], &s), -EBADMSG, "\"%s\"", cases[i]);
                cr_expect(is_sentinel(&s), "\"%s\" wrote its result", cases[i]);
        }
        cr_expect_eq(proc_task_stat_parse(NULL, &(TaskStat){}), -EINVAL);
}

Test(task_stat_parse, every_cut_of_a_real_line_is_rejected) {
        _cleanup_free_ char *line = make_line(&(LineSpec){});
        size_t len = strlen(line);

        /* A read cut anywhere before the newline is never taken for a whole line. */
        for (size_t cut = 0; cut < len; cut++) {
                _cleanup_free_ char *part = strndup(line, cut);
                TaskStat s;

                cr_assert_not_null(part);
                cr_expect_eq(proc_task_stat_parse(part, &s), -EBADMSG, "cut at %zu", cut);
        }
}

Test(task_stat_parse, kthread_flag_and_identity) {
        _cleanup_free_ char *kt = make_line(&(LineSpec){ .field = 9, .value = "69238880" });
        _cleanup_free_ char *later = make_line(&(LineSpec){ .field = 22, .value = "35103" });
        _cleanup_free_ char *real = make_line(&(LineSpec){});
        _cleanup_free_ char *same = make_line(&(LineSpec){ .field = 14, .value = "9999" });
        TaskStat k, a, b, c;

        cr_assert_eq(proc_task_stat_parse(kt, &k), 0);
        cr_expect(task_stat_is_kthread(&k), "flags %#x", k.flags); /* 0x04208060 */
        cr_assert_eq(proc_task_stat_parse(real, &a), 0);
        cr_assert_eq(proc_task_stat_parse(later, &b), 0);
        cr_assert_eq(proc_task_stat_parse(same, &c), 0);
        cr_expect_not(task_stat_same_task(&a, &b), "a recycled pid has another start time");
        cr_expect(task_stat_same_task(&a, &c));
}

/* ---- proc_task_stat_read_at and the kept-fd variant, on the fixture tree */

Test(task_stat_read, hostile_comm_fixtures) {
        static const struct {
                pid_t pid;
                const char *comm;
                char state;
                unsigned processor;
        } cases[] = {
                { 201, "a b", 'R', 1 },
                { 202, "foo) Z ", 'R', 0 },
                { 203, "()()))((", 'R', 1 },
                { 204, ": - )", 'R', 0 },
                { 205, "new\nline", 'R', 1 },
                { 206, "", 'R', 0 },
                { 207, "123456789012345", 'R', 1 },
                { 208, "kworker/u8:1-ext4-rsv-conversion", 'I', 0 },
        };
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                pid_t pid = cases[i].pid;
                TaskStat s;

                cr_assert_eq(proc_task_stat_read_at(proc_fd, pid, pid, &s), 0, "pid %d", pid);
                cr_expect_eq(s.tid, pid);
                cr_expect_str_eq(s.comm, cases[i].comm);
                cr_expect_eq(s.state, cases[i].state, "pid %d", pid);
                cr_expect_eq(s.utime_ticks, (uint64_t) pid * 10, "pid %d", pid);
                cr_expect_eq(s.stime_ticks, (uint64_t) pid, "pid %d", pid);
                cr_expect_eq(s.starttime_ticks, 90000u + (uint64_t) pid, "pid %d", pid);
                cr_expect_eq(s.processor, cases[i].processor, "pid %d", pid);
                cr_expect_eq(task_stat_is_kthread(&s), pid == 208, "pid %d", pid);
        }
}

Test(task_stat_read, threads_of_a_process_and_its_total) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        TaskStat main_thread, io, bg, process;

        cr_assert_eq(proc_task_stat_read_at(proc_fd, 100, 100, &main_thread), 0);
        cr_assert_eq(proc_task_stat_read_at(proc_fd, 100, 101, &io), 0);
        cr_assert_eq(proc_task_stat_read_at(proc_fd, 100, 102, &bg), 0);
        cr_assert_eq(proc_task_stat_read_at(proc_fd, 100, 0, &process), 0);
        cr_expect_eq(main_thread.utime_ticks, 1234);
        cr_expect_eq(io.state, 'D');
        cr_expect_eq(io.rt_priority, 50);
        cr_expect_eq(io.policy, 1); /* SCHED_FIFO */
        cr_expect_eq(io.processor, 3);
        cr_expect_eq(bg.nice, 19);
        cr_expect_eq(bg.policy, 3); /* SCHED_BATCH */
        cr_expect_eq(bg.starttime_ticks, 5004);
        cr_expect_eq(process.utime_ticks, 4000, "tid 0 reads PID/stat");
        cr_expect_eq(process.num_threads, 3);
}

Test(task_stat_read, cut_empty_and_short_files_are_ebadmsg) {
        static const pid_t bad[] = { 210, 211, 212, 213, 214, 215 };
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                TaskStat s;

                fill_sentinel(&s);
                cr_expect_eq(proc_task_stat_read_at(proc_fd, bad[i], bad[i], &s), -EBADMSG,
                             "pid %d", bad[i]);
                cr_expect(is_sentinel(&s), "pid %d wrote its result", bad[i]);
        }
}

Test(task_stat_read, text_after_a_nul_is_ebadmsg) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        CpuMask *m = NULL;
        TaskStat s;

        /* A whole line, then a NUL: no kernel writes that, so the file is not a stat file. */
        fill_sentinel(&s);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, 220, 220, &s), -EBADMSG);
        cr_expect(is_sentinel(&s));
        cr_expect_eq(proc_task_cpus_allowed_read_at(proc_fd, 220, 220, 8, &m), -EBADMSG);
        cr_expect_null(m);
}

Test(task_stat_read, extra_fields_of_later_kernels_are_accepted) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        TaskStat s;

        cr_assert_eq(proc_task_stat_read_at(proc_fd, 216, 216, &s), 0);
        cr_expect_eq(s.starttime_ticks, 30);
        cr_expect_eq(s.stime_ticks, 20);
}

Test(task_stat_read, missing_task_is_esrch) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        TaskStat s;

        fill_sentinel(&s);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, 999, 999, &s), -ESRCH);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, 100, 103, &s), -ESRCH);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, 999, 0, &s), -ESRCH);
        cr_expect_eq(proc_task_stat_open_at(proc_fd, 999, 999), -ESRCH);
        cr_expect(is_sentinel(&s));
}

Test(task_stat_read, bad_ids_are_einval) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        TaskStat s;

        cr_expect_eq(proc_task_stat_read_at(proc_fd, 0, 100, &s), -EINVAL);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, -100, 100, &s), -EINVAL);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, 100, -1, &s), -EINVAL);
        cr_expect_eq(proc_task_stat_open_at(proc_fd, 0, 0), -EINVAL);
        cr_expect_eq(proc_task_stat_pread(-1, &s), -EBADF);
}

Test(task_stat_read, pread_rereads_from_the_start) {
        _cleanup_free_ char *dir = make_tmpdir();
        _cleanup_free_ char *first = make_line(&(LineSpec){ .comm = "a long name here" });
        _cleanup_free_ char *second =
                make_line(&(LineSpec){ .comm = "b", .field = 14, .value = "77" });
        _cleanup_close_ int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -EBADF;
        TaskStat s;

        cr_assert_geq(root, 0);
        write_file_at(root, "7/task/7/stat", first);
        fd = proc_task_stat_open_at(root, 7, 7);
        cr_assert_geq(fd, 0);
        cr_assert_eq(proc_task_stat_pread(fd, &s), 0);
        cr_expect_str_eq(s.comm, "a long name here");
        cr_assert_eq(proc_task_stat_pread(fd, &s), 0, "a second pread on the same fd");
        cr_expect_eq(s.utime_ticks, 1234);
        /* Same inode, shorter text: no stale tail from the first read may survive. */
        write_file_at(root, "7/task/7/stat", second);
        cr_assert_eq(proc_task_stat_pread(fd, &s), 0);
        cr_expect_str_eq(s.comm, "b");
        cr_expect_eq(s.utime_ticks, 77);
        rm_rf(dir);
}

/* ---- the live /proc */

Test(task_stat_live, own_thread) {
        _cleanup_close_ int proc_fd = open_proc();
        long ncpus = sysconf(_SC_NPROCESSORS_CONF);
        char name[16] = "";
        cpu_set_t allowed;
        TaskStat a, b;

        cr_assert_eq(proc_task_stat_read_at(proc_fd, getpid(), gettid(), &a), 0);
        cr_assert_eq(proc_task_stat_read_at(proc_fd, getpid(), gettid(), &b), 0);
        cr_assert_eq(prctl(PR_GET_NAME, name), 0);
        cr_assert_eq(sched_getaffinity(0, sizeof allowed, &allowed), 0);
        cr_expect_eq(a.tid, gettid());
        cr_expect_str_eq(a.comm, name);
        cr_expect_eq(a.state, 'R', "we are running while we read it");
        cr_expect_eq(a.ppid, getppid());
        cr_expect_geq(a.num_threads, 1);
        cr_expect_lt(a.processor, (unsigned) ncpus);
        cr_expect(CPU_ISSET(a.processor, &allowed), "ran on CPU %u outside its mask", a.processor);
        cr_expect_eq(a.policy, SCHED_OTHER);
        cr_expect_not(task_stat_is_kthread(&a));
        cr_expect_eq(a.starttime_ticks, b.starttime_ticks);
        cr_expect(task_stat_same_task(&a, &b));
        cr_expect_geq(b.utime_ticks + b.stime_ticks, a.utime_ticks + a.stime_ticks);
}

Test(task_stat_live, comm_set_by_the_task_itself) {
        static const char *const names[] = { "a b",  "foo) Z ", "()()))((",       ": - )",
                                             "x\ny", ")",       "123456789012345" };
        _cleanup_close_ int proc_fd = open_proc();

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                TaskStat s;

                cr_assert_eq(prctl(PR_SET_NAME, names[i]), 0);
                cr_assert_eq(proc_task_stat_read_at(proc_fd, getpid(), gettid(), &s), 0, "\"%s\"",
                             names[i]);
                cr_expect_str_eq(s.comm, names[i]);
                cr_expect_eq(s.state, 'R', "\"%s\"", names[i]);
                cr_expect_eq(s.ppid, getppid(), "\"%s\"", names[i]);
        }
}

static void burn_cpu_msec(long msec) {
        struct timespec t0, t;

        cr_assert_eq(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0), 0);
        do
                cr_assert_eq(clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t), 0);
        while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < msec);
}

Test(task_stat_live, kept_fd_sees_cpu_time_grow) {
        _cleanup_close_ int proc_fd = open_proc(), fd = -EBADF;
        long hz = sysconf(_SC_CLK_TCK);
        TaskStat a, b;

        fd = proc_task_stat_open_at(proc_fd, getpid(), gettid());
        cr_assert_geq(fd, 0);
        cr_assert_eq(proc_task_stat_pread(fd, &a), 0);
        burn_cpu_msec(200);
        cr_assert_eq(proc_task_stat_pread(fd, &b), 0);
        cr_expect_eq(a.starttime_ticks, b.starttime_ticks);
        /* 200 ms of CPU is 20 ticks at 100 Hz; allow for tick sampling. */
        cr_expect_geq((b.utime_ticks + b.stime_ticks) - (a.utime_ticks + a.stime_ticks),
                      (uint64_t) hz / 10, "%" PRIu64 " -> %" PRIu64, a.utime_ticks, b.utime_ticks);
}

/* A child that exits at once; returns its pid, still a zombie (not reaped). */
static pid_t spawn_zombie(void) {
        pid_t pid = fork();
        siginfo_t si = {};

        cr_assert_geq(pid, 0);
        if (pid == 0)
                _exit(0);
        cr_assert_eq(waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT), 0);
        return pid;
}

Test(task_stat_live, zombie_is_readable_then_esrch_once_reaped) {
        _cleanup_close_ int proc_fd = open_proc(), fd = -EBADF;
        pid_t pid = spawn_zombie();
        TaskStat s;

        fd = proc_task_stat_open_at(proc_fd, pid, pid);
        cr_assert_geq(fd, 0);
        cr_assert_eq(proc_task_stat_read_at(proc_fd, pid, 0, &s), 0);
        cr_expect_eq(s.state, 'Z');
        cr_expect_eq(s.ppid, getpid());
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        fill_sentinel(&s);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, pid, pid, &s), -ESRCH);
        cr_expect_eq(proc_task_stat_read_at(proc_fd, pid, 0, &s), -ESRCH);
        cr_expect_eq(proc_task_stat_open_at(proc_fd, pid, pid), -ESRCH);
        cr_expect_eq(proc_task_stat_pread(fd, &s), -ESRCH, "the kept fd outlives the task");
        cr_expect(is_sentinel(&s));
}

/* A zombie child created with a chosen pid (clone3 set_tid needs CAP_SYS_ADMIN); -errno if not. */
static pid_t spawn_zombie_with_pid(pid_t pid) {
        struct clone_args args = {
                .exit_signal = SIGCHLD,
                .set_tid = (uintptr_t) &pid,
                .set_tid_size = 1,
        };
        siginfo_t si = {};
        long r = syscall(SYS_clone3, &args, sizeof args);

        if (r < 0)
                return -errno;
        if (r == 0)
                _exit(0);
        cr_assert_eq(waitid(P_PID, (id_t) r, &si, WEXITED | WNOWAIT), 0);
        return (pid_t) r;
}

Test(task_stat_live, kept_fd_never_reads_a_recycled_pid) {
        _cleanup_close_ int proc_fd = open_proc(), fd = -EBADF;
        pid_t pid = spawn_zombie(), again;
        TaskStat s;

        fd = proc_task_stat_open_at(proc_fd, pid, pid);
        cr_assert_geq(fd, 0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        again = spawn_zombie_with_pid(pid);
        if (again == -EPERM)
                cr_skip_test("clone3 with set_tid needs CAP_SYS_ADMIN");
        cr_assert_eq(again, pid, "clone3 set_tid: %s", strerror(-again));
        cr_expect_eq(proc_task_stat_read_at(proc_fd, pid, pid, &s), 0, "the new task");
        cr_expect_eq(proc_task_stat_pread(fd, &s), -ESRCH, "the old fd reads the new task");
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
}

static void *record_tid(void *arg) {
        *(pid_t *) arg = gettid();
        return NULL;
}

Test(task_stat_live, joined_thread_is_esrch) {
        _cleanup_close_ int proc_fd = open_proc();
        pthread_t t;
        pid_t tid = 0;
        int r = 0;

        cr_assert_eq(pthread_create(&t, NULL, record_tid, &tid), 0);
        cr_assert_eq(pthread_join(t, NULL), 0);
        cr_assert_gt(tid, 0);
        /* join returns when the kernel clears the tid, a moment before it unhashes the task. */
        for (int i = 0; i < 2000; i++) {
                TaskStat s;

                r = proc_task_stat_read_at(proc_fd, getpid(), tid, &s);
                if (r != 0)
                        break;
                (void) usleep(1000);
        }
        cr_expect_eq(r, -ESRCH);
}

Test(task_stat_live, allowed_cpus_match_sched_getaffinity) {
        _cleanup_close_ int proc_fd = open_proc();
        _cleanup_cpumask_ CpuMask *m = NULL;
        unsigned ncpus = (unsigned) sysconf(_SC_NPROCESSORS_CONF);
        cpu_set_t set;

        cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
        cr_assert_eq(proc_task_cpus_allowed_read_at(proc_fd, getpid(), gettid(), ncpus, &m), 0);
        cr_expect_eq(cpumask_count(m), (unsigned) CPU_COUNT(&set));
        for (unsigned c = 0; c < ncpus; c++)
                cr_expect_eq(cpumask_isset(m, c), (bool) CPU_ISSET(c, &set), "cpu %u", c);
}

static void *park(void *arg) {
        int *fds = arg;
        char c;

        fds[2] = gettid();
        (void) write(fds[1], "", 1);
        (void) read(fds[0], &c, 1); /* until the test writes again */
        return NULL;
}

Test(task_stat_live, thread_list_holds_every_thread) {
        _cleanup_close_ int proc_fd = open_proc();
        _cleanup_free_ pid_t *tids = NULL, *pids = NULL;
        int p[2], q[2], args[3];
        bool main_seen = false, thread_seen = false;
        size_t n = 0, np = 0;
        pthread_t t;
        char c;

        cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(q, O_CLOEXEC), 0);
        args[0] = p[0], args[1] = q[1];
        cr_assert_eq(pthread_create(&t, NULL, park, args), 0);
        cr_assert_eq(read(q[0], &c, 1), 1);
        cr_assert_eq(proc_task_list_at(proc_fd, getpid(), &tids, &n), 0);
        cr_assert_eq(write(p[1], "", 1), 1);
        cr_assert_eq(pthread_join(t, NULL), 0);
        for (int i = 0; i < 2; i++)
                (void) close(p[i]), (void) close(q[i]);
        for (size_t i = 0; i < n; i++) {
                main_seen |= tids[i] == getpid();
                thread_seen |= tids[i] == args[2];
                if (i > 0)
                        cr_expect_lt(tids[i - 1], tids[i], "sorted");
        }
        cr_expect(main_seen);
        cr_expect(thread_seen, "tid %d", args[2]);
        cr_assert_eq(proc_pid_list_at(proc_fd, &pids, &np), 0);
        cr_expect_geq(np, 2);
        cr_expect_eq(pids[0], 1, "init is the lowest pid");
}

Test(proc_stat_live, cpus_and_busy_ticks) {
        _cleanup_close_ int proc_fd = open_proc();
        _cleanup_proc_stat_ ProcStat *a = NULL, *b = NULL;
        long hz = sysconf(_SC_CLK_TCK);
        unsigned present = 0, util;
        CpuTicksDelta d;

        cr_assert_eq(proc_stat_read_at(proc_fd, &a), 0);
        burn_cpu_msec(200);
        cr_assert_eq(proc_stat_read_at(proc_fd, &b), 0);
        for (unsigned c = 0; c < b->n_cpus; c++)
                present += proc_stat_cpu(b, c) != NULL;
        cr_expect_eq(present, (unsigned) get_nprocs(), "one cpuN line per online CPU");
        cr_assert_eq(cpu_times_delta(&a->total, &b->total, &d), 0);
        cr_expect_geq(d.busy_ticks, (uint64_t) hz / 10, "200 ms of CPU burnt between samples");
        cr_expect_leq(d.busy_ticks, d.total_ticks);
        cr_assert_eq(proc_stat_util_permyriad(a, b, PROC_STAT_CPU_TOTAL, &util), 0);
        cr_expect_gt(util, 0);
        cr_expect_leq(util, 10000);
}

/* ---- /proc/stat */

Test(proc_stat, fixture_with_offline_holes) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/stat-holes");
        _cleanup_proc_stat_ ProcStat *s = NULL;
        const CpuTimes *c3;

        cr_assert_eq(proc_stat_read_at(proc_fd, &s), 0);
        cr_expect_eq(s->n_cpus, 7);
        cr_expect_eq(s->procs_running, 5);
        cr_expect_eq(s->procs_blocked, 1);
        cr_expect(s->total.present);
        cr_expect_eq(s->total.ticks[CPU_TIME_IDLE], 180000);
        cr_expect_eq(s->total.ticks[CPU_TIME_GUEST_NICE], 1);
        for (unsigned c = 0; c < 8; c++)
                cr_expect_eq(proc_stat_cpu(s, c) != NULL, c == 0 || c == 1 || c == 3 || c == 6,
                             "cpu %u", c);
        cr_expect_null(proc_stat_cpu(s, 100000));
        c3 = proc_stat_cpu(s, 3);
        cr_assert_not_null(c3);
        cr_expect_eq(c3->ticks[CPU_TIME_USER], 1400);
        cr_expect_eq(c3->ticks[CPU_TIME_NICE], 6);
        cr_expect_eq(c3->ticks[CPU_TIME_SYSTEM], 700);
        cr_expect_eq(c3->ticks[CPU_TIME_IOWAIT], 150);
        cr_expect_eq(c3->ticks[CPU_TIME_SOFTIRQ], 17);
        cr_expect_eq(c3->ticks[CPU_TIME_STEAL], 9);
        cr_expect_eq(c3->ticks[CPU_TIME_GUEST], 1);
        cr_expect_eq(proc_stat_cpu(s, 6)->ticks[CPU_TIME_IDLE], 45000);
}

Test(proc_stat, cut_file_and_missing_file) {
        _cleanup_close_ int cut = fixture_dirfd("proc/stat-cut");
        _cleanup_close_ int none = fixture_dirfd("proc/cgroup-lists");
        ProcStat *s = NULL;

        cr_expect_eq(proc_stat_read_at(cut, &s), -EBADMSG);
        cr_expect_eq(proc_stat_read_at(none, &s), -ENOENT);
        cr_expect_null(s);
}

#define CPU10 " 1 2 3 4 5 6 7 8 9 10\n"
#define TAIL "procs_running 3\nprocs_blocked 0\n"

Test(proc_stat, order_extra_columns_and_unknown_lines) {
        static const char text[] = "cpu  10 0 0 0 0 0 0 0 0 0 99\n"
                                   "cpu2" CPU10 "cpu0 1 2 3 4 5 6 7 8 9 10 11 12\n"
                                   "intr 1 2 3\nbogus line\ncpufreq 7\ncpu-1 5\n" TAIL;
        _cleanup_proc_stat_ ProcStat *s = NULL;

        cr_assert_eq(proc_stat_parse(text, &s), 0);
        cr_expect_eq(s->n_cpus, 3);
        cr_expect_not_null(proc_stat_cpu(s, 0));
        cr_expect_null(proc_stat_cpu(s, 1));
        cr_expect_eq(proc_stat_cpu(s, 2)->ticks[CPU_TIME_GUEST_NICE], 10);
        cr_expect_eq(s->total.ticks[CPU_TIME_USER], 10);
        cr_expect_eq(s->procs_running, 3);
}

Test(proc_stat, high_cpu_ids_grow_the_array) {
        static const char text[] = "cpu " CPU10 "cpu8191" CPU10 "cpu1" CPU10 TAIL;
        _cleanup_proc_stat_ ProcStat *s = NULL;

        cr_assert_eq(proc_stat_parse(text, &s), 0);
        cr_expect_eq(s->n_cpus, 8192);
        cr_expect_not_null(proc_stat_cpu(s, 8191));
        cr_expect_null(proc_stat_cpu(s, 8190));
        cr_expect_not_null(proc_stat_cpu(s, 1));
}

Test(proc_stat, malformed_text_is_ebadmsg) {
        static const char *const cases[] = {
                "",
                "\n",
                TAIL, /* no cpu line */
                "cpu " CPU10 "procs_blocked 0\n", /* no procs_running */
                "cpu " CPU10 "procs_running 3\n", /* no procs_blocked */
                "cpu " CPU10 "cpu " CPU10 TAIL, /* duplicate total */
                "cpu " CPU10 "cpu1" CPU10 "cpu1" CPU10 TAIL, /* duplicate cpu1 */
                "cpu  1 2 3 4 5 6 7 8 9\n" TAIL, /* 9 columns */
                "cpu " CPU10 "cpu0 1 2 3 4 5 6 7 8 9\n" TAIL,
                "cpu " CPU10 "cpu0 1 2 3 x 5 6 7 8 9 10\n" TAIL,
                "cpu " CPU10 "cpu0 1 2 3 -4 5 6 7 8 9 10\n" TAIL,
                "cpu " CPU10 "cpu0 1 2 3 4 5 6 7 8 9 10 \n" TAIL, /* trailing blank */
                "cpu " CPU10 "cpu0\t1 2 3 4 5 6 7 8 9 10\n" TAIL,
                "cpu " CPU10 "cpu0 1 2 3 4 5 6 7 8 9 18446744073709551616\n" TAIL,
                "cpu " CPU10 "cpu8192" CPU10 TAIL, /* >= CPUMASK_MAX_CPUS */
                "cpu " CPU10 "cpu99999999999999999999" CPU10 TAIL,
                "cpu " CPU10 "cpu1x" CPU10 TAIL,
                "cpu " CPU10 "procs_running 3 4\nprocs_blocked 0\n",
                "cpu " CPU10 "procs_running  3\nprocs_blocked 0\n",
                "cpu " CPU10 "procs_running\nprocs_blocked 0\n",
                "cpu " CPU10 TAIL "procs_running 4\n", /* duplicate counter */
                "cpu " CPU10 "procs_running 3\nprocs_blocked 0", /* cut: no final newline */
                "cpu " CPU10 "cpu0 1 2 3",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ProcStat *s = NULL;

                cr_expect_eq(proc_stat_parse(cases[i], &s), -EBADMSG, "case %zu: \"%s\"", i,
                             cases[i]);
                cr_expect_null(s, "case %zu wrote its result", i);
        }
        cr_expect_eq(proc_stat_parse(NULL, &(ProcStat *){ NULL }), -EINVAL);
}

/* ---- utilisation from two samples (pure) */

#define TICKS(u, n, s, i, w, q, sq, st, g, gn)                                \
        {                                                                     \
                .present = true, .ticks = { u, n, s, i, w, q, sq, st, g, gn } \
        }

Test(cpu_times, deltas_and_util_permyriad) {
        static const struct {
                CpuTimes prev, cur;
                uint64_t busy, total;
                unsigned util_permyriad;
        } cases[] = {
                { TICKS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), TICKS(50, 0, 0, 50, 0, 0, 0, 0, 0, 0), 50,
                  100, 5000 },
                /* every busy column counts; idle and iowait are idle */
                { TICKS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), TICKS(1, 2, 3, 10, 10, 4, 5, 6, 0, 0), 21,
                  41, 5121 },
                /* guest is already inside user: not counted twice */
                { TICKS(100, 0, 0, 0, 0, 0, 0, 0, 0, 0), TICKS(200, 0, 0, 100, 0, 0, 0, 0, 90, 9),
                  100, 200, 5000 },
                /* iowait going backwards is clamped, not a huge unsigned delta */
                { TICKS(10, 0, 0, 100, 50, 0, 0, 0, 0, 0), TICKS(20, 0, 0, 130, 40, 0, 0, 0, 0, 0),
                  10, 40, 2500 },
                /* steal is busy: capacity our tasks did not get */
                { TICKS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), TICKS(0, 0, 0, 75, 0, 0, 0, 25, 0, 0), 25,
                  100, 2500 },
                { TICKS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0), TICKS(1, 0, 0, 2, 0, 0, 0, 0, 0, 0), 1, 3,
                  3333 }, /* rounded down */
                { TICKS(5, 5, 5, 5, 5, 5, 5, 5, 5, 5), TICKS(9, 5, 5, 5, 5, 5, 5, 5, 5, 5), 4, 4,
                  10000 },
                { TICKS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                  TICKS(UINT32_MAX, 0, 0, UINT32_MAX, 0, 0, 0, 0, 0, 0), UINT32_MAX,
                  UINT64_C(2) * UINT32_MAX, 5000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CpuTicksDelta d;
                unsigned util = 12345;

                cr_assert_eq(cpu_times_delta(&cases[i].prev, &cases[i].cur, &d), 0);
                cr_expect_eq(d.busy_ticks, cases[i].busy, "case %zu", i);
                cr_expect_eq(d.total_ticks, cases[i].total, "case %zu", i);
                cr_assert_eq(cpu_ticks_util_permyriad(&d, &util), 0);
                cr_expect_eq(util, cases[i].util_permyriad, "case %zu", i);
        }
}

Test(cpu_times, util_edge_cases) {
        static const struct {
                CpuTicksDelta d;
                int r;
                unsigned util;
        } cases[] = {
                { { 0, 0 }, -ENODATA, 777 },
                { { 5, 0 }, -ENODATA, 777 },
                { { 0, 1 }, 0, 0 },
                { { UINT64_MAX, UINT64_MAX }, 0, 10000 }, /* busy * 10000 must not overflow */
                { { UINT64_MAX / 2, UINT64_MAX }, 0, 4999 },
                { { 9, 4 }, 0, 10000 }, /* hand-made busy > total */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned util = 777;

                cr_expect_eq(cpu_ticks_util_permyriad(&cases[i].d, &util), cases[i].r, "case %zu",
                             i);
                cr_expect_eq(util, cases[i].util, "case %zu", i);
        }
}

Test(cpu_times, absent_cpus_are_enodev) {
        CpuTimes on = TICKS(1, 0, 0, 1, 0, 0, 0, 0, 0, 0), off = { .present = false };
        CpuTicksDelta d = { 42, 43 };

        cr_expect_eq(cpu_times_delta(&on, &off, &d), -ENODEV);
        cr_expect_eq(cpu_times_delta(&off, &on, &d), -ENODEV);
        cr_expect_eq(cpu_times_delta(NULL, &on, &d), -ENODEV);
        cr_expect_eq(cpu_times_delta(&on, NULL, &d), -ENODEV);
        cr_expect_eq(d.busy_ticks, 42);
        cr_expect_eq(d.total_ticks, 43);
}

Test(cpu_times, per_cpu_util_between_two_snapshots) {
        ProcStat prev = {
                .total = TICKS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                .cpus = (CpuTimes[]){ TICKS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                                      { .present = false },
                                      TICKS(10, 0, 0, 10, 0, 0, 0, 0, 0, 0) },
                .n_cpus = 3,
        };
        ProcStat cur = {
                .total = TICKS(90, 0, 0, 110, 0, 0, 0, 0, 0, 0),
                .cpus =
                        (CpuTimes[]){
                                TICKS(80, 0, 0, 20, 0, 0, 0, 0, 0, 0),
                                { .present = false },
                                TICKS(10, 0, 0, 100, 0, 0, 0, 0, 0, 0),
                        },
                .n_cpus = 2, /* CPU 2 went offline */
        };
        unsigned util = 0;

        cr_assert_eq(proc_stat_util_permyriad(&prev, &cur, 0, &util), 0);
        cr_expect_eq(util, 8000);
        cr_assert_eq(proc_stat_util_permyriad(&prev, &cur, PROC_STAT_CPU_TOTAL, &util), 0);
        cr_expect_eq(util, 4500);
        util = 1;
        cr_expect_eq(proc_stat_util_permyriad(&prev, &cur, 1, &util), -ENODEV);
        cr_expect_eq(proc_stat_util_permyriad(&prev, &cur, 2, &util), -ENODEV);
        cr_expect_eq(proc_stat_util_permyriad(&prev, &cur, 3, &util), -ENODEV);
        cr_expect_eq(util, 1);
}

/* ---- Cpus_allowed_list */

static char *format_mask(const CpuMask *m) {
        char *s = NULL;

        cr_assert_eq(cpumask_format(m, &s), 0);
        return s;
}

Test(cpus_allowed, fixture_threads) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        _cleanup_cpumask_ CpuMask *a = NULL, *b = NULL;
        _cleanup_free_ char *sa = NULL, *sb = NULL;

        cr_assert_eq(proc_task_cpus_allowed_read_at(proc_fd, 100, 100, 8, &a), 0);
        cr_assert_eq(proc_task_cpus_allowed_read_at(proc_fd, 100, 101, 8, &b), 0);
        sa = format_mask(a);
        sb = format_mask(b);
        cr_expect_str_eq(sa, "0-1,4");
        cr_expect_str_eq(sb, "3");
        cr_expect_eq(cpumask_capacity(a), 8);
}

Test(cpus_allowed, fixture_errors) {
        static const struct {
                pid_t pid;
                unsigned capacity;
                int r;
        } cases[] = {
                { 216, 8, -EBADMSG }, /* no Cpus_allowed_list line */
                { 217, 8, -EBADMSG }, /* "0-1," */
                { 218, 64, -ERANGE }, /* CPU 127 >= capacity */
                { 219, 8, -EBADMSG }, /* cut inside the list */
                { 999, 8, -ESRCH },   { 100, 0, -EINVAL },
        };
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        _cleanup_cpumask_ CpuMask *wide = NULL;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                CpuMask *m = NULL;
                pid_t pid = cases[i].pid;

                cr_expect_eq(proc_task_cpus_allowed_read_at(proc_fd, pid, pid == 100 ? 100 : pid,
                                                            cases[i].capacity, &m),
                             cases[i].r, "pid %d", pid);
                cr_expect_null(m, "pid %d wrote its result", pid);
        }
        cr_assert_eq(proc_task_cpus_allowed_read_at(proc_fd, 218, 218, 128, &wide), 0);
        cr_expect(cpumask_isset(wide, 127));
}

Test(cpus_allowed, only_the_list_line_at_a_line_start_counts) {
        static const struct {
                const char *text, *list;
                int r;
        } cases[] = {
                { "Cpus_allowed:\tff\nCpus_allowed_list:\t2-3\n", "2-3", 0 },
                { "Cpus_allowed_list:\t5\n", "5", 0 },
                { "Name:\tCpus_allowed_list: 1\nCpus_allowed_list:\t6\n", "6", 0 },
                { "Cpus_allowed_list:   \t0,7\nMems_allowed_list:\t0\n", "0,7", 0 },
                { "Cpus_allowed_list:\t\n", "", 0 }, /* empty set: the caller decides */
                { "Cpus_allowed:\tff\n", NULL, -EBADMSG },
                { "xCpus_allowed_list:\t1\n", NULL, -EBADMSG },
                { "Cpus_allowed_list\t1\n", NULL, -EBADMSG },
                { "Cpus_allowed_list:\t1", NULL, -EBADMSG },
                { "Cpus_allowed_list:\t1-x\n", NULL, -EBADMSG },
                { "Cpus_allowed_list:\t8\n", NULL, -ERANGE },
                { "", NULL, -EBADMSG },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_cpumask_ CpuMask *m = NULL;
                _cleanup_free_ char *s = NULL;

                cr_expect_eq(proc_status_cpus_allowed_parse(cases[i].text, 8, &m), cases[i].r,
                             "case %zu", i);
                if (!cases[i].list) {
                        cr_expect_null(m, "case %zu wrote its result", i);
                        continue;
                }
                cr_assert_not_null(m, "case %zu", i);
                s = format_mask(m);
                cr_expect_str_eq(s, cases[i].list, "case %zu", i);
        }
}

/* ---- task lists */

static void expect_ids(const pid_t *ids, size_t n, const pid_t *want, size_t n_want,
                       const char *what) {
        cr_assert_eq(n, n_want, "%s: %zu ids, want %zu", what, n, n_want);
        for (size_t i = 0; i < n; i++)
                cr_expect_eq(ids[i], want[i], "%s[%zu]", what, i);
}

Test(task_list, fixture_threads_skip_non_numeric_entries) {
        static const pid_t want[] = { 100, 101, 102 };
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;

        cr_assert_eq(proc_task_list_at(proc_fd, 100, &tids, &n), 0);
        expect_ids(tids, n, want, ELEMENTSOF(want), "tids");
}

Test(task_list, fixture_processes) {
        static const pid_t want[] = { 100, 201, 202, 203, 204, 205, 206, 207, 208, 210,
                                      211, 212, 213, 214, 215, 216, 217, 218, 219, 220 };
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;

        cr_assert_eq(proc_pid_list_at(proc_fd, &pids, &n), 0);
        expect_ids(pids, n, want, ELEMENTSOF(want), "pids");
}

Test(task_list, gone_process_is_esrch) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/tasks");
        pid_t *tids = (pid_t *) 0x1;
        size_t n = 77;

        cr_expect_eq(proc_task_list_at(proc_fd, 999, &tids, &n), -ESRCH);
        cr_expect_eq(proc_task_list_at(proc_fd, 0, &tids, &n), -EINVAL);
        cr_expect_eq(tids, (pid_t *) 0x1);
        cr_expect_eq(n, 77);
}

/* ---- cgroup id lists */

Test(task_ids, parse_sorts_and_drops_duplicates) {
        static const struct {
                const char *text;
                pid_t want[4];
                size_t n;
        } cases[] = {
                { "", { 0 }, 0 },
                { "1\n", { 1 }, 1 },
                { "3\n1\n2\n", { 1, 2, 3 }, 3 },
                { "7\n7\n7\n", { 7 }, 1 },
                { "2147483647\n00012\n12\n", { 12, 2147483647 }, 2 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ pid_t *ids = NULL;
                size_t n = 99;

                cr_assert_eq(proc_task_ids_parse(cases[i].text, &ids, &n), 0, "case %zu", i);
                expect_ids(ids, n, cases[i].want, cases[i].n, cases[i].text);
                cr_expect_eq(ids == NULL, n == 0, "case %zu", i);
        }
}

Test(task_ids, parse_rejects_malformed_lists) {
        static const char *const cases[] = {
                "\n",
                "1\n\n2\n",
                "1",
                "1\n2",
                " 1\n",
                "1 \n",
                "+1\n",
                "-1\n",
                "0\n",
                "1\r\n",
                "1a\n",
                "0x10\n",
                "2147483648\n",
                "99999999999999999999\n",
                "1\n\n",
                "1,2\n",
                "\t1\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                pid_t *ids = (pid_t *) 0x1;
                size_t n = 99;

                cr_expect_eq(proc_task_ids_parse(cases[i], &ids, &n), -EBADMSG, "case %zu", i);
                cr_expect_eq(ids, (pid_t *) 0x1, "case %zu wrote its result", i);
                cr_expect_eq(n, 99, "case %zu", i);
        }
}

Test(task_ids, read_cgroup_files) {
        static const pid_t procs[] = { 9, 17, 4242, 100000 }, tasks[] = { 9, 10, 11, 17 };
        _cleanup_close_ int cg = fixture_dirfd("proc/cgroup-lists");
        _cleanup_free_ pid_t *a = NULL, *b = NULL, *c = NULL;
        pid_t *d = (pid_t *) 0x1;
        size_t na = 0, nb = 0, nc = 99, nd = 99;

        cr_assert_eq(proc_task_ids_read_at(cg, "cgroup.procs", &a, &na), 0);
        expect_ids(a, na, procs, ELEMENTSOF(procs), "cgroup.procs");
        cr_assert_eq(proc_task_ids_read_at(cg, "tasks", &b, &nb), 0);
        expect_ids(b, nb, tasks, ELEMENTSOF(tasks), "tasks");
        cr_assert_eq(proc_task_ids_read_at(cg, "cgroup.threads", &c, &nc), 0);
        cr_expect_eq(nc, 0);
        cr_expect_null(c);
        cr_expect_eq(proc_task_ids_read_at(cg, "bad", &d, &nd), -EBADMSG);
        cr_expect_eq(proc_task_ids_read_at(cg, "removed", &d, &nd), -ENOENT,
                     "a removed cgroup is ENOENT, not ESRCH");
        cr_expect_eq(d, (pid_t *) 0x1);
        cr_expect_eq(nd, 99);
}

/* ---- /proc/PID/task/TID/schedstat */

Test(schedstat_parse, kernel_lines) {
        static const struct {
                const char *text;
                TaskSchedstat want;
        } cases[] = {
                { "190622161 22897278 407\n", { 190622161, 22897278, 407 } },
                { "0 0 0\n", { 0, 0, 0 } }, /* sched_info off */
                { "0 0 1\n", { 0, 0, 1 } },
                { "18446744073709551615 18446744073709551615 18446744073709551615\n",
                  { UINT64_MAX, UINT64_MAX, UINT64_MAX } },
                { "007 08 9\n", { 7, 8, 9 } },
                { "1 2 3 4 5\n", { 1, 2, 3 } }, /* fields a later kernel may add */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                TaskSchedstat s;

                cr_assert_eq(proc_task_schedstat_parse(cases[i].text, &s), 0, "case %zu", i);
                cr_expect_eq(s.run_ns, cases[i].want.run_ns, "case %zu", i);
                cr_expect_eq(s.wait_ns, cases[i].want.wait_ns, "case %zu", i);
                cr_expect_eq(s.timeslices, cases[i].want.timeslices, "case %zu", i);
        }
}

Test(schedstat_parse, hostile_text_is_ebadmsg_and_writes_nothing) {
        static const char *const cases[] = {
                "",
                "\n",
                "1 2 3",
                "1 2\n",
                "1\n",
                "1 2 3 \n",
                " 1 2 3\n",
                "1  2 3\n",
                "1\t2 3\n",
                "1 2 3\n\n",
                "1 2 3\nx",
                "1 2 3\r\n",
                "-1 2 3\n",
                "+1 2 3\n",
                "1 2 -3\n",
                "1 2 3 -4\n",
                "1 2 3 x\n",
                "1 2 3 4",
                "18446744073709551616 2 3\n",
                "0x10 2 3\n",
                "1.5 2 3\n",
                "a b c\n",
                "1 2 3)\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                TaskSchedstat s = { 42, 43, 44 };

                cr_expect_eq(proc_task_schedstat_parse(cases[i], &s), -EBADMSG, "case %zu: \"%s\"",
                             i, cases[i]);
                cr_expect(s.run_ns == 42 && s.wait_ns == 43 && s.timeslices == 44,
                          "case %zu wrote its result", i);
        }
        cr_expect_eq(proc_task_schedstat_parse(NULL, &(TaskSchedstat){}), -EINVAL);
}

Test(schedstat_parse, every_cut_of_a_real_line_is_rejected) {
        static const char line[] = "190622161 22897278 407\n";

        for (size_t cut = 0; cut < sizeof line - 1; cut++) {
                _cleanup_free_ char *part = strndup(line, cut);
                TaskSchedstat s;

                cr_assert_not_null(part);
                cr_expect_eq(proc_task_schedstat_parse(part, &s), -EBADMSG, "cut at %zu", cut);
        }
}

Test(schedstat_read, fixture_threads_and_process) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/sched"), fd = -EBADF;
        TaskSchedstat s, p, k;

        cr_assert_eq(proc_task_schedstat_read_at(proc_fd, 300, 300, &s), 0);
        cr_expect_eq(s.run_ns, 190622161);
        cr_expect_eq(s.wait_ns, 22897278);
        cr_expect_eq(s.timeslices, 407);
        cr_assert_eq(proc_task_schedstat_read_at(proc_fd, 300, 0, &p), 0, "tid 0: PID/schedstat");
        cr_expect_eq(p.run_ns, 5);
        fd = proc_task_schedstat_open_at(proc_fd, 300, 300);
        cr_assert_geq(fd, 0);
        cr_assert_eq(proc_task_schedstat_pread(fd, &k), 0);
        cr_assert_eq(proc_task_schedstat_pread(fd, &k), 0, "a second pread on the same fd");
        cr_expect_eq(k.wait_ns, 22897278);
}

Test(schedstat_read, missing_file_of_a_live_task_is_eopnotsupp_not_esrch) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/sched");
        TaskSchedstat s = { 42, 0, 0 };

        /* 301 exists (it has a stat file) but no schedstat: the kernel lacks CONFIG_SCHED_INFO */
        cr_expect_eq(proc_task_schedstat_open_at(proc_fd, 300, 301), -EOPNOTSUPP);
        cr_expect_eq(proc_task_schedstat_read_at(proc_fd, 300, 301, &s), -EOPNOTSUPP);
        cr_expect_eq(proc_task_schedstat_read_at(proc_fd, 300, 399, &s), -ESRCH);
        cr_expect_eq(proc_task_schedstat_read_at(proc_fd, 999, 999, &s), -ESRCH);
        cr_expect_eq(proc_task_schedstat_read_at(proc_fd, 300, 302, &s), -EBADMSG);
        cr_expect_eq(proc_task_schedstat_read_at(proc_fd, 0, 1, &s), -EINVAL);
        cr_expect_eq(proc_task_schedstat_read_at(proc_fd, 300, -1, &s), -EINVAL);
        cr_expect_eq(proc_task_schedstat_pread(-1, &s), -EBADF);
        cr_expect_eq(s.run_ns, 42);
}

Test(schedstat_live, own_thread_run_time_grows) {
        _cleanup_close_ int proc_fd = open_proc(), fd = -EBADF;
        TaskSchedstat a, b;
        int r;

        fd = proc_task_schedstat_open_at(proc_fd, getpid(), gettid());
        if (fd == -EOPNOTSUPP)
                cr_skip_test("this kernel has no schedstat (CONFIG_SCHED_INFO)");
        cr_assert_geq(fd, 0, "%s", strerror(-fd));
        cr_assert_eq(proc_task_schedstat_pread(fd, &a), 0);
        burn_cpu_msec(100);
        r = proc_task_schedstat_pread(fd, &b);
        cr_assert_eq(r, 0);
        cr_expect_geq(b.run_ns - a.run_ns, UINT64_C(90) * 1000000, "%" PRIu64 " -> %" PRIu64,
                      a.run_ns, b.run_ns);
        cr_expect_geq(b.timeslices, a.timeslices);
}

Test(schedstat_live, reaped_task_is_esrch_through_a_kept_fd) {
        _cleanup_close_ int proc_fd = open_proc(), fd = -EBADF;
        pid_t pid = spawn_zombie();
        TaskSchedstat s = { 42, 0, 0 };

        fd = proc_task_schedstat_open_at(proc_fd, pid, pid);
        if (fd == -EOPNOTSUPP) {
                (void) waitpid(pid, NULL, 0);
                cr_skip_test("this kernel has no schedstat (CONFIG_SCHED_INFO)");
        }
        cr_assert_geq(fd, 0);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_expect_eq(proc_task_schedstat_pread(fd, &s), -ESRCH);
        cr_expect_eq(proc_task_schedstat_open_at(proc_fd, pid, pid), -ESRCH);
        cr_expect_eq(s.run_ns, 42);
}

/* ---- /proc/PID/cgroup */

Test(cgroup_file_parse, finds_each_hierarchy) {
        static const char hybrid[] = "12:cpu,cpuacct:/a/b\n"
                                     "11:cpuset:/pinned\n"
                                     "1:name=systemd:/user.slice\n"
                                     "0::/user.slice/x:y\n";
        static const struct {
                const char *controller, *want;
        } cases[] = {
                { "cpu", "a/b" },           { "cpuacct", "a/b" },
                { "cpuset", "pinned" },     { "name=systemd", "user.slice" },
                { NULL, "user.slice/x:y" }, { "", "user.slice/x:y" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *path = NULL;

                cr_assert_eq(proc_cgroup_parse(hybrid, cases[i].controller, &path), 0, "case %zu",
                             i);
                cr_expect_str_eq(path, cases[i].want, "case %zu", i);
        }
}

Test(cgroup_file_parse, root_group_is_empty_and_absent_hierarchy_is_enodata) {
        _cleanup_free_ char *root = NULL;
        char *path = (char *) 0x1;

        cr_assert_eq(proc_cgroup_parse("3:cpuset:/\n0::/\n", "cpuset", &root), 0);
        cr_expect_str_empty(root);
        cr_expect_eq(proc_cgroup_parse("3:cpuset:/\n", "cpu", &path), -ENODATA);
        cr_expect_eq(proc_cgroup_parse("3:cpuset:/\n", NULL, &path), -ENODATA, "no cgroup2 line");
        cr_expect_eq(proc_cgroup_parse("1:cpu,cpuacct:/x\n", "cpua", &path), -ENODATA,
                     "a prefix of a controller is not the controller");
        cr_expect_eq(proc_cgroup_parse("1::/v1-named\n", NULL, &path), -ENODATA,
                     "only hierarchy 0 is cgroup2");
        cr_expect_eq(proc_cgroup_parse("", NULL, &path), -ENODATA);
        cr_expect_eq(path, (char *) 0x1);
}

Test(cgroup_file_parse, malformed_text_is_ebadmsg) {
        static const char *const cases[] = {
                "0::/a", /* cut: no newline */
                "0:/a\n", /* one colon */
                "0::a\n", /* relative path */
                "0::\n", /* no path */
                "x::/a\n", /* hierarchy id not a number */
                ":cpu:/a\n", /* no hierarchy id */
                "-1::/a\n",
                "3:cpuset:/\n\n", /* blank line */
                "3:cpuset:/\n0::/", /* the last line cut */
                "\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char *path = (char *) 0x1;

                cr_expect_eq(proc_cgroup_parse(cases[i], NULL, &path), -EBADMSG, "case %zu: \"%s\"",
                             i, cases[i]);
                cr_expect_eq(path, (char *) 0x1, "case %zu wrote its result", i);
        }
        cr_expect_eq(proc_cgroup_parse(NULL, NULL, &(char *){ NULL }), -EINVAL);
}

Test(cgroup_file_read, fixture_and_gone) {
        _cleanup_close_ int proc_fd = fixture_dirfd("proc/sched");
        _cleanup_free_ char *cpuset = NULL, *unified = NULL, *spaced = NULL;
        char *none = (char *) 0x1;

        cr_assert_eq(proc_task_cgroup_read_at(proc_fd, 300, "cpuset", &cpuset), 0);
        cr_expect_str_eq(cpuset, "pinned");
        cr_assert_eq(proc_task_cgroup_read_at(proc_fd, 300, NULL, &unified), 0);
        cr_expect_str_eq(unified, "cgbalance.slice/job");
        cr_assert_eq(proc_task_cgroup_read_at(proc_fd, 303, NULL, &spaced), 0);
        cr_expect_str_eq(spaced, "user.slice/a:b/c d");
        cr_expect_eq(proc_task_cgroup_read_at(proc_fd, 304, "cpu", &none), -EBADMSG, "cut file");
        cr_expect_eq(proc_task_cgroup_read_at(proc_fd, 999, NULL, &none), -ESRCH);
        cr_expect_eq(proc_task_cgroup_read_at(proc_fd, 0, NULL, &none), -EINVAL);
        cr_expect_eq(none, (char *) 0x1);
}

Test(cgroup_file_read, own_process_is_in_some_group) {
        _cleanup_close_ int proc_fd = open_proc();
        _cleanup_free_ char *path = NULL;
        int r;

        r = proc_task_cgroup_read_at(proc_fd, getpid(), NULL, &path);
        if (r == -ENODATA)
                cr_skip_test("no cgroup2 line in /proc/self/cgroup");
        cr_assert_eq(r, 0, "%s", strerror(-r));
        cr_expect(path[0] != '/', "leading slash kept: %s", path);
}

/* ---- /proc/uptime */

Test(uptime_parse, kernel_text) {
        static const struct {
                const char *text;
                uint64_t usec;
        } cases[] = {
                { "1521.28 1805.56\n", UINT64_C(1521280000) },
                { "0.00 0.00\n", 0 },
                { "0.01 0.00\n", 10000 },
                { "1000.00 2006.00\n", UINT64_C(1000000000) },
                { "18446744073709.55 1.00\n", UINT64_C(18446744073709550000) },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t u = 42;

                cr_assert_eq(proc_uptime_parse(cases[i].text, &u), 0, "case %zu", i);
                cr_expect_eq(u, cases[i].usec, "case %zu: %" PRIu64, i, u);
        }
}

Test(uptime_parse, hostile_text) {
        static const struct {
                const char *text;
                int r;
        } cases[] = {
                { "", -EBADMSG },
                { "\n", -EBADMSG },
                { "1521.28\n", -EBADMSG },
                { "1521.28 1805.56", -EBADMSG },
                { "1521.28 1805.56 \n", -EBADMSG },
                { "1521.28  1805.56\n", -EBADMSG },
                { "1521.2 1805.56\n", -EBADMSG },
                { "1521.283 1805.56\n", -EBADMSG },
                { "1521 1805\n", -EBADMSG },
                { ".28 1805.56\n", -EBADMSG },
                { "-1.00 1.00\n", -EBADMSG },
                { "1521.28 1805.56\n\n", -EBADMSG },
                { "1521,28 1805,56\n", -EBADMSG },
                { "99999999999999999999.00 1.00\n", -EBADMSG },
                { "18446744073709.56 1.00\n", -ERANGE },
                { "18446744073710.00 1.00\n", -ERANGE },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t u = 42;

                cr_expect_eq(proc_uptime_parse(cases[i].text, &u), cases[i].r, "case %zu: \"%s\"",
                             i, cases[i].text);
                cr_expect_eq(u, 42, "case %zu wrote its result", i);
        }
        cr_expect_eq(proc_uptime_parse(NULL, &(uint64_t){ 0 }), -EINVAL);
}

Test(uptime_read, fixture_and_live) {
        _cleanup_close_ int fixture = fixture_dirfd("proc/sched"), proc_fd = open_proc();
        _cleanup_close_ int none = fixture_dirfd("proc/tasks");
        struct timespec ts;
        uint64_t u = 0, live = 0, boot;

        cr_assert_eq(proc_uptime_read_at(fixture, &u), 0);
        cr_expect_eq(u, UINT64_C(1521280000));
        cr_expect_eq(proc_uptime_read_at(none, &u), -ENOENT);
        cr_assert_eq(proc_uptime_read_at(proc_fd, &live), 0);
        cr_assert_eq(clock_gettime(CLOCK_BOOTTIME, &ts), 0);
        boot = (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
        cr_expect_leq(live, boot, "%" PRIu64 " > %" PRIu64, live, boot);
        cr_expect_geq(live + 1000000u, boot, "%" PRIu64 " vs %" PRIu64, live, boot);
}

Test(statm_parse, resident_pages_and_hostile_text) {
        static const struct {
                const char *text;
                int r;
                uint64_t pages;
        } cases[] = {
                { "4242 1234 100 10 0 300 0\n", 0, 1234 },
                { "1 0\n", 0, 0 },
                { "", -EBADMSG, 0 },
                { "4242\n", -EBADMSG, 0 },
                { "4242 1234", -EBADMSG, 0 },
                { "4242  1234 1\n", -EBADMSG, 0 },
                { "-1 2 3\n", -EBADMSG, 0 },
                { "1 99999999999999999999 3\n", -EBADMSG, 0 },
                { "1 2x 3\n", -EBADMSG, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t p = 42;

                cr_expect_eq(proc_statm_parse(cases[i].text, &p), cases[i].r, "case %zu: \"%s\"", i,
                             cases[i].text);
                cr_expect_eq(p, cases[i].r == 0 ? cases[i].pages : 42, "case %zu", i);
        }
        cr_expect_eq(proc_statm_parse(NULL, &(uint64_t){ 0 }), -EINVAL);
}

/* The kernel's text: an address, a policy (which may hold a blank: "prefer (many)"), words and
 * KEY=VALUE pairs; pages per node times the line's page size (4 KiB, or 2 MiB for huge pages). */
Test(numa_maps_parse, sums_a_nodes_pages_times_each_lines_page_size) {
        static const char text[] =
                "55588183e000 default file=/usr/bin/head mapped=2 N0=2 kernelpagesize_kB=4\n"
                "7f0000000000 bind:0-1 anon=512 dirty=512 N0=256 N1=256 kernelpagesize_kB=4\n"
                "7f0000200000 default file=/lib/x\\040y mapped=2 N1=2 kernelpagesize_kB=2048\n"
                "7f0000400000 prefer (many):0-1 anon=1 N0=1 kernelpagesize_kB=4\n"
                "7fb97bd8c000 default\n"
                "7ffd4b6e5000 default stack anon=33 dirty=33 active=0 N2=33 kernelpagesize_kB=4\n";
        uint64_t kib = 0;

        cr_assert_eq(proc_numa_maps_parse(text, 0, &kib), 0);
        cr_expect_eq(kib, (2 + 256 + 1) * 4);
        cr_assert_eq(proc_numa_maps_parse(text, 1, &kib), 0);
        cr_expect_eq(kib, 256 * 4 + 2 * 2048);
        cr_assert_eq(proc_numa_maps_parse(text, 2, &kib), 0);
        cr_expect_eq(kib, 33 * 4);
        cr_assert_eq(proc_numa_maps_parse(text, 3, &kib), 0);
        cr_expect_eq(kib, 0);
        cr_assert_eq(proc_numa_maps_parse("", 0, &kib), 0);
        cr_expect_eq(kib, 0, "a process without mappings");
}

Test(numa_maps_parse, hostile_text_is_ebadmsg_and_leaves_the_result) {
        static const char *const bad[] = {
                "7f00 default N0=1 kernelpagesize_kB=4", /* no newline */
                "zz default N0=1 kernelpagesize_kB=4\n", /* address */
                "\n", /* no address */
                "7f00\n", /* no policy */
                "7f00 default N0=1\n", /* pages without a page size */
                "7f00 default N0=x kernelpagesize_kB=4\n",
                "7f00 default N0= kernelpagesize_kB=4\n",
                "7f00 default N0 kernelpagesize_kB=4\n",
                "7f00 default N0=1 kernelpagesize_kB=\n",
                "7f00 default N0=1 kernelpagesize_kB=4k\n",
                "7f00 default N0=18446744073709551615 kernelpagesize_kB=4\n", /* overflow */
                "7f00 default N0=1 kernelpagesize_kB=4\n7f01 default N0=x kernelpagesize_kB=4\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                uint64_t kib = 42;

                cr_expect_eq(proc_numa_maps_parse(bad[i], 0, &kib), -EBADMSG, "case %zu: %s", i,
                             bad[i]);
                cr_expect_eq(kib, 42, "case %zu wrote its result", i);
        }
        cr_expect_eq(proc_numa_maps_parse(NULL, 0, &(uint64_t){ 0 }), -EINVAL);
}

/* A child that touched 64 MiB: its resident set and its pages on its node (this machine's only
 * node, or the node its first CPU is on) show it; a gone process is -ESRCH. */
Test(numa_maps_read, a_process_that_touched_memory_has_it_on_its_node) {
        _cleanup_close_ int proc_fd = open_proc();
        const size_t size = 64u << 20;
        uint64_t rss = 0, kib = 0, total = 0;
        int fds[2], node = numa_node_of_cpu(sched_getcpu());
        pid_t pid;
        char c;

        cr_assert_geq(node, 0);
        cr_assert_eq(pipe(fds), 0);
        pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                /* Populated by the kernel: a memset() of memory never read may be optimised out. */
                (void) mmap(NULL, size, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
                (void) write(fds[1], "x", 1);
                pause();
                _exit(0);
        }
        close(fds[1]);
        cr_assert_eq(read(fds[0], &c, 1), 1);
        close(fds[0]);
        cr_expect_eq(proc_task_rss_read_at(proc_fd, pid, &rss), 0);
        cr_expect_geq(rss, 64 * 1024, "%" PRIu64 " KiB resident", rss);
        for (int n = 0; n <= numa_max_node(); n++) {
                cr_assert_eq(
                        proc_task_numa_maps_read_at(proc_fd, pid, (unsigned) n, 1u << 24, &kib), 0);
                total += kib;
        }
        cr_expect_geq(total, 64 * 1024, "%" PRIu64 " KiB on all nodes", total);
        cr_expect_leq(total, rss + 4096, "%" PRIu64 " KiB on all nodes, %" PRIu64 " resident",
                      total, rss);
        cr_expect_eq(proc_task_numa_maps_read_at(proc_fd, pid, 0, 4096, &kib), -EFBIG,
                     "more than 4 KiB of numa_maps");
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cr_expect_eq(proc_task_numa_maps_read_at(proc_fd, pid, 0, 1u << 24, &kib), -ESRCH);
        cr_expect_eq(proc_task_rss_read_at(proc_fd, pid, &rss), -ESRCH);
}
