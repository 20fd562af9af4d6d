/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How heavy each of loadgen's loads is, against a standard tool doing the same kind of work, in
 * the same run. Each side gets the same CPUs, the same "RAM" (the memory limit loadgen puts on its
 * load group; the peers run in a group of this program's, cgbalance.slice/bench-loads-PID, with
 * the same limit) and the same duration, in the same directory, one after the other. ROUNDS
 * rounds; odd rounds run the peers first. Per round one line per kind of load; at the end, per
 * pair, the medians and the median (and range) of the per-round ratios load/peer.
 *
 *   io_load       against dd if=/dev/zero of=FILE bs=1M count=RAM/1M, rerun until the duration
 *                 is over (the last one killed then), and stress-ng --hdd 1 --hdd-bytes RAM
 *                 --hdd-opts wr-seq. Metric: MiB written per second. io_load's own count (one per
 *                 1 MiB write()) over its own window; for the peers the wchar of /proc/self/io,
 *                 which gains a child's when it is reaped, over the time from start to reap.
 *                 stress-ng 0.15's hdd stressor always reads each file back after writing it
 *                 (it has no write-only mode), so it writes less per second by design: dd is the
 *                 like-for-like peer, stress-ng an extra reference.
 *   mem_load      against stress-ng --vm 1 --vm-bytes (90% of RAM) --vm-method write64 --vm-keep
 *                 --vm-madvise normal, both on one CPU. Metric: 64-byte memory lines touched per
 *                 second, from each side's own count, whose meaning is exact: a mem_load pass
 *                 read-modify-writes every line of each page of its buffer; a write64 bogo op is
 *                 4096 loops of 32 8-byte stores in a row (256 bytes: 4 lines; stress-ng counts
 *                 loops and reports them >> 12). Both buffers (90% of 1 GiB) are far
 *                 beyond the caches, so every line is a line moved to or from memory. Why not a
 *                 measure from outside: there are no hardware counters here, and the neighbour
 *                 probe below, tried as the metric, moves by a few percent for either side while
 *                 this (virtual) machine's own noise moves it by more. Why write64: stress-ng has
 *                 no method that visits pages in a scattered order and counts lines (prime-1 now
 *                 steps 61 bytes at a time, whatever its manual says; swap counts its random
 *                 swaps but not its sequential passes), so the peer is its plainest memory load,
 *                 whose count is exact. --vm-keep as mem_load keeps its mapping (by default
 *                 stress-ng unmaps and maps again each pass: page faults, not memory traffic);
 *                 --vm-madvise normal as mem_load gives no advice (by default stress-ng picks one
 *                 at random per mapping, hugepage among them); one worker, as mem_load is one
 *                 process, on 90% of RAM as mem_load.
 *                 Shown beside it, not judged: the probe, a pointer chase in this program through
 *                 PROBE_BYTES as a single cycle of lines in random order (each step a cache and
 *                 TLB miss) on the other CPU, timed by its own CPU time (other tasks on the
 *                 machine may share its CPU), alone each round and during each run (after
 *                 MEM_WARMUP_USEC: both sides fault their buffer in on their first pass), as its
 *                 time beside the run over its time alone.
 *   process_load  against stress-ng --switch NCPUS (pairs of processes passing a byte through a
 *                 pipe: its token-passing stressor) and hackbench --pipe --groups 1, rerun until
 *                 the duration is over. Metric: context switches (voluntary + involuntary) per
 *                 second of the whole process tree, from the wait4() rusage of the command, which
 *                 holds every descendant it reaped, over the time from start to reap; loadgen is
 *                 measured from outside the same way. And the tree's CPU use (user + sys).
 *
 * Each round line also shows the CPU the rest of the machine used meanwhile (all CPUs' busy time
 * in /proc/stat, less that of the runs and the probe: other processes and kernel threads, e.g.
 * writeback), as 100% per CPU: a figure that moves between rounds is worth that much less.
 *
 * A measurement, not a test: it exits 1 only if something could not run (a missing tool, a run
 * that failed), never on a ratio; a load lighter than LIGHT_RATIO of its peer gets a WARNING
 * line. Root only (cgroups); without root it says why and exits 0. Everything it made (its
 * group, the slice if it made it, its directory, its children) is gone at the end, also on a
 * failure or SIGINT/SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../loadgen/load.h" /* MEM_LOAD_RAM_PERCENT */
#include "cgroup-tree.h"
#include "cgroup.h"
#include "cpumask.h"
#include "fileio.h"
#include "support.h"

#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

#define SLICE "cgbalance.slice"
#define WORK_BASE "/var/tmp" /* loadgen's default --dir: loads and peers write side by side */
#define MIB (UINT64_C(1) << 20)
#define RAM_BYTES (UINT64_C(1024) * MIB) /* mem_load's 90% of it: far beyond the caches */
#define ROUNDS 3
#define IO_SECONDS 3u
#define PROC_SECONDS 3u
#define MEM_SECONDS 4u
#define MEM_WARMUP_USEC (1000 * 1000)
#define MEM_TAIL_USEC (250 * 1000) /* the probe's window ends before either side stops */
#define PROBE_ALONE_USEC (2500 * 1000)
#define PROBE_BYTES (512 * MIB)
#define PROBE_LINE_WORDS 8u /* 64-byte lines */
#define PROBE_REPORT_STEPS 4096u
#define VM_LINES_PER_BOGO_OP (4096u * 4u) /* stress-ng write64, see above */
#define WATCHDOG_USEC (30 * USEC_PER_SEC) /* past its duration, a run is hung */
#define LOADGEN_STOP_USEC (15 * USEC_PER_SEC) /* loadgen's own stop takes up to 10 s */
#define HACKBENCH_LOOPS "1000" /* ~0.3 s a run here */
#define LIGHT_RATIO 0.5
#define TAIL_BYTES 2000u

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
        (void) sig;
        stop_requested = 1;
}

/* ---- the runs */

typedef enum RunId {
        IO_LOAD,
        IO_DD,
        IO_HDD,
        MEM_LOAD,
        MEM_VM,
        PROC_LOAD,
        PROC_SWITCH,
        PROC_HACKBENCH,
        _RUN_MAX,
} RunId;

typedef enum Kind { KIND_MIBPS, KIND_LINES, KIND_SWITCHES } Kind;

typedef struct Bench {
        pid_t pid;
        CgroupLayout layout;
        char group[128];
        bool group_made, slice_existed;
        char dir[PATH_MAX], out_path[PATH_MAX + 16], err_path[PATH_MAX + 16];
        bool dir_made;
        char loadgen[PATH_MAX];
        CpuMask *all_cpus, *load_cpu;
        char *all_list, *load_list;
        unsigned n_cpus, probe_cpu;
        pid_t probe_pid; /* 0: no probe (one CPU) */
        clockid_t probe_clock; /* its CPU time */
        _Atomic uint64_t *probe_steps; /* MAP_SHARED: the probe counts, this process reads */
        double probe_alone_ns; /* this round's */
} Bench;

/* What one run did: value in its kind's unit, and what its process tree used. */
typedef struct Sample {
        double value;
        uint64_t cpu_usec, wall_usec;
        double probe; /* mem: the probe's time beside it over its time alone; 0: none */
} Sample;

typedef int (*MeasureFn)(Bench *b, RunId id, Sample *ret);

typedef struct RunInfo {
        const char *name;
        MeasureFn measure;
} RunInfo;

typedef struct Section {
        const char *name;
        Kind kind;
        RunId first, last;
        bool mem; /* the load's CPU only, the probe beside it */
} Section;

typedef struct Comparison {
        RunId load, peer;
} Comparison;

#define N_SECTIONS 3

typedef struct Results {
        Sample s[_RUN_MAX][ROUNDS];
        double probe_alone_ns[ROUNDS];
        double elsewhere_pct[N_SECTIONS][ROUNDS];
} Results;

/* A child running a command. */
typedef struct Proc {
        const char *name;
        pid_t pid;
        int pidfd;
        bool in_group, loadgen;
        uint64_t start_usec, wall_usec;
        struct rusage ru;
        int status;
} Proc;

static uint64_t tv_usec(struct timeval tv) {
        return (uint64_t) tv.tv_sec * USEC_PER_SEC + (uint64_t) tv.tv_usec;
}

static uint64_t ru_cpu_usec(const struct rusage *ru) {
        return tv_usec(ru->ru_utime) + tv_usec(ru->ru_stime);
}

static uint64_t ru_switches(const struct rusage *ru) {
        return (uint64_t) ru->ru_nvcsw + (uint64_t) ru->ru_nivcsw;
}

static double per_sec(uint64_t n, uint64_t usec) {
        return usec ? (double) n * (double) USEC_PER_SEC / (double) usec : 0.0;
}

static double pct(uint64_t part_usec, uint64_t whole_usec) {
        return whole_usec ? 100.0 * (double) part_usec / (double) whole_usec : 0.0;
}

static void sample_from(Sample *s, double value, const Proc *p) {
        *s = (Sample){ .value = value, .cpu_usec = ru_cpu_usec(&p->ru), .wall_usec = p->wall_usec };
}

/* ---- children */

static _Noreturn void child_exec(const Bench *b, const char *const argv[], bool in_group) {
        /* SIGTERM: loadgen then removes its sandbox, stress-ng its files. */
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != b->pid)
                _exit(BENCH_EXIT_SETUP);
        if (in_group && cgroup_attach_pid(&b->layout, b->group, getpid()) < 0)
                _exit(BENCH_EXIT_SETUP);
        if (chdir(b->dir) < 0)
                _exit(BENCH_EXIT_SETUP);
        bench_redirect(STDIN_FILENO, "/dev/null", O_RDONLY);
        bench_redirect(STDOUT_FILENO, b->out_path, O_WRONLY | O_CREAT | O_TRUNC);
        bench_redirect(STDERR_FILENO, b->err_path, O_WRONLY | O_CREAT | O_TRUNC);
        execvp(argv[0], (char *const *) argv);
        _exit(127);
}

static int proc_spawn(const Bench *b, Proc *p, const char *name, const char *const argv[],
                      bool in_group, bool loadgen) {
        *p = (Proc){ .name = name, .pidfd = -EBADF, .in_group = in_group, .loadgen = loadgen };
        (void) fflush(stdout);
        p->start_usec = now_usec();
        p->pid = fork();
        if (p->pid < 0)
                return -errno;
        if (p->pid == 0)
                child_exec(b, argv, in_group);
        /* Without pidfds (Linux < 5.3) proc_wait() polls every 5 ms. */
        p->pidfd = (int) syscall(SYS_pidfd_open, p->pid, 0);
        return 0;
}

/* Waits until p has exited (left to be reaped), deadline passes (-ETIME) or, if interruptible,
 * a stop is requested (-EINTR). */
static int proc_wait(const Proc *p, uint64_t deadline, bool interruptible) {
        for (;;) {
                struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };
                siginfo_t si = {};
                uint64_t now;
                int ms;

                if (waitid(P_PID, (id_t) p->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                    si.si_pid == p->pid)
                        return 0;
                if (interruptible && stop_requested)
                        return -EINTR;
                now = now_usec();
                if (now >= deadline)
                        return -ETIME;
                ms = (int) MIN((deadline - now + 999) / 1000, 100u);
                (void) poll(&pfd, p->pidfd >= 0 ? 1 : 0, p->pidfd >= 0 ? ms : MIN(ms, 5));
        }
}

static void proc_reap(Proc *p) {
        while (wait4(p->pid, &p->status, 0, &p->ru) < 0 && errno == EINTR)
                ;
        p->wall_usec = now_usec() - p->start_usec;
        if (p->pidfd >= 0)
                (void) close(p->pidfd);
        p->pidfd = -EBADF;
        p->pid = 0;
}

/* Ends p now and reaps it: loadgen is asked (SIGTERM) so it cleans its sandbox up. */
static void proc_kill(Bench *b, Proc *p) {
        if (p->pid <= 0)
                return;
        if (p->loadgen) {
                (void) kill(p->pid, SIGTERM);
                if (proc_wait(p, now_usec() + LOADGEN_STOP_USEC, false) < 0)
                        (void) kill(p->pid, SIGKILL);
        } else
                (void) kill(p->pid, SIGKILL);
        if (p->in_group)
                (void) cgroup_kill_all(&b->layout, b->group, 5 * USEC_PER_SEC);
        proc_reap(p);
}

static void print_tail(const char *path) {
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        if (read_full_at(AT_FDCWD, path, 16u << 20, &text, &n) < 0 || n == 0)
                return;
        fprintf(stderr, "%s%s", n > TAIL_BYTES ? text + n - TAIL_BYTES : text,
                text[n - 1] == '\n' ? "" : "\n");
}

/* 0 if p exited 0; else says how it ended, with the tail of its output, and -EIO. */
static int proc_check(const Bench *b, const Proc *p) {
        if (WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0)
                return 0;
        if (WIFEXITED(p->status))
                bench_fail("%s failed: %s %d", p->name,
                           WEXITSTATUS(p->status) == 127 ? "could not be executed, exit"
                           : WEXITSTATUS(p->status) == BENCH_EXIT_SETUP
                                   ? "could not set up its child, exit"
                                   : "exit status",
                           WEXITSTATUS(p->status));
        else
                bench_fail("%s failed: killed by signal %d", p->name, WTERMSIG(p->status));
        print_tail(b->err_path);
        print_tail(b->out_path);
        return -EIO;
}

/* Waits for p to end by itself (it has a duration), reaps and checks it. */
static int proc_finish(Bench *b, Proc *p, unsigned seconds) {
        int r = proc_wait(p, p->start_usec + seconds * USEC_PER_SEC + WATCHDOG_USEC, true);

        if (r < 0) {
                if (r == -ETIME)
                        bench_fail("%s still runs %u s past its duration", p->name,
                                   (unsigned) (WATCHDOG_USEC / USEC_PER_SEC));
                proc_kill(b, p);
                return r;
        }
        proc_reap(p);
        if (p->in_group) /* a child that outlived it */
                (void) cgroup_kill_all(&b->layout, b->group, 5 * USEC_PER_SEC);
        return proc_check(b, p);
}

typedef struct Repeated {
        uint64_t wall_usec, cpu_usec, switches;
} Repeated;

/* Runs argv in the group again and again for seconds; with kill_at_end the last run is cut short
 * at the end (dd), else it runs to its end (hackbench). */
static int run_repeated(Bench *b, const char *name, const char *const argv[], unsigned seconds,
                        bool kill_at_end, Repeated *ret) {
        uint64_t t0 = now_usec(), end = t0 + seconds * USEC_PER_SEC;
        Repeated sum = {};
        int r = 0;

        while (r >= 0 && now_usec() < end) {
                Proc p;

                r = proc_spawn(b, &p, name, argv, /* in_group= */ true, /* loadgen= */ false);
                if (r < 0)
                        break;
                r = proc_wait(&p, kill_at_end ? end : end + WATCHDOG_USEC, true);
                if (r == -ETIME && kill_at_end) {
                        (void) kill(p.pid, SIGKILL);
                        proc_reap(&p);
                        r = 0;
                } else if (r < 0) {
                        proc_kill(b, &p);
                } else {
                        proc_reap(&p);
                        r = proc_check(b, &p);
                }
                sum.cpu_usec += ru_cpu_usec(&p.ru);
                sum.switches += ru_switches(&p.ru);
        }
        sum.wall_usec = now_usec() - t0;
        if (r >= 0)
                *ret = sum;
        return r;
}

/* ---- what the runs report */

/* The number after the first occurrence of key in text. */
static int number_after(const char *text, const char *key, uint64_t *ret) {
        const char *p = strstr(text, key);
        char *end;
        unsigned long long v;

        if (!p)
                return -EBADMSG;
        p += strlen(key);
        p += strspn(p, " ");
        errno = 0;
        v = strtoull(p, &end, 10);
        if (errno || end == p)
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* Bytes this process and every child it has reaped passed to write() (wchar): a child's count
 * joins its parent's when it is reaped, as rusage does. */
static int read_wchar(uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = read_full_at(AT_FDCWD, "/proc/self/io", 4096, &text, NULL);
        if (r >= 0)
                r = number_after(text, "wchar:", ret);
        if (r < 0)
                bench_fail("reading /proc/self/io: %s", strerror(-r));
        return r;
}

/* Busy time of all CPUs (user, nice, system, irq, softirq) from /proc/stat, in usec. */
static int read_busy_usec(uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        unsigned long long f[7];
        long hz = sysconf(_SC_CLK_TCK);
        int r;

        r = read_full_at(AT_FDCWD, "/proc/stat", 1u << 20, &text, NULL);
        if (r < 0)
                return r;
        if (sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3],
                   &f[4], &f[5], &f[6]) != 7 ||
            hz <= 0)
                return -EBADMSG;
        *ret = (f[0] + f[1] + f[2] + f[5] + f[6]) * USEC_PER_SEC / (unsigned long long) hz;
        return 0;
}

static int loadgen_spawn(Bench *b, Proc *p, const char *load, unsigned seconds, const char *cpus) {
        char duration[16], ram[32];
        const char *argv[] = {
                b->loadgen, "run", load,    "--duration", duration,  "--mem",  ram,
                "--cpus",   cpus,  "--dir", WORK_BASE,    "--quick", "--json", NULL
        };

        (void) snprintf(duration, sizeof duration, "%u", seconds);
        (void) snprintf(ram, sizeof ram, "%" PRIu64 "M", RAM_BYTES / MIB);
        return proc_spawn(b, p, load, argv, /* in_group= */ false, /* loadgen= */ true);
}

/* Waits for loadgen to end, checks it, and reads its report's work and elapsed_usec. */
static int loadgen_finish(Bench *b, Proc *p, unsigned seconds, uint64_t *ret_work,
                          uint64_t *ret_elapsed_usec) {
        _cleanup_free_ char *json = NULL;
        int r;

        r = proc_finish(b, p, seconds);
        if (r < 0)
                return r;
        r = read_full_at(AT_FDCWD, b->out_path, 1u << 16, &json, NULL);
        if (r >= 0 && strstr(json, "\"interrupted\": true"))
                r = -EINTR;
        if (r >= 0)
                r = number_after(json, "\"work\":", ret_work);
        if (r >= 0)
                r = number_after(json, "\"elapsed_usec\":", ret_elapsed_usec);
        if (r < 0 && r != -EINTR)
                bench_fail("%s: no usable report in loadgen's output", p->name);
        return r;
}

static int loadgen_run(Bench *b, const char *load, unsigned seconds, const char *cpus, Proc *p,
                       uint64_t *ret_work, uint64_t *ret_elapsed_usec) {
        int r = loadgen_spawn(b, p, load, seconds, cpus);

        return r < 0 ? r : loadgen_finish(b, p, seconds, ret_work, ret_elapsed_usec);
}

/* ---- io */

static int measure_io_load(Bench *b, RunId id, Sample *ret) {
        uint64_t mib, elapsed;
        Proc p;
        int r;

        (void) id;
        r = loadgen_run(b, "io_load", IO_SECONDS, b->all_list, &p, &mib, &elapsed);
        if (r < 0)
                return r;
        sample_from(ret, per_sec(mib, elapsed), &p);
        return 0;
}

static int measure_dd(Bench *b, RunId id, Sample *ret) {
        char of[PATH_MAX + 16], count[32];
        const char *argv[] = { "dd", "if=/dev/zero", of, "bs=1M", count, "status=none", NULL };
        uint64_t w0, w1;
        Repeated rep;
        int r;

        (void) id;
        (void) snprintf(of, sizeof of, "of=%s/dd.dat", b->dir);
        (void) snprintf(count, sizeof count, "count=%" PRIu64, RAM_BYTES / MIB);
        r = read_wchar(&w0);
        if (r >= 0)
                r = run_repeated(b, "dd", argv, IO_SECONDS, /* kill_at_end= */ true, &rep);
        (void) unlink(of + strlen("of="));
        if (r >= 0)
                r = read_wchar(&w1);
        if (r < 0)
                return r;
        *ret = (Sample){ .value = per_sec(w1 - w0, rep.wall_usec) / (double) MIB,
                         .cpu_usec = rep.cpu_usec,
                         .wall_usec = rep.wall_usec };
        return 0;
}

static int measure_hdd(Bench *b, RunId id, Sample *ret) {
        char bytes[32], timeout[16];
        const char *argv[] = { "stress-ng", "--hdd",      "1",      "--hdd-bytes",
                               bytes,       "--hdd-opts", "wr-seq", "--temp-path",
                               b->dir,      "--timeout",  timeout,  NULL };
        uint64_t w0, w1;
        Proc p;
        int r;

        (void) id;
        (void) snprintf(bytes, sizeof bytes, "%" PRIu64 "m", RAM_BYTES / MIB);
        (void) snprintf(timeout, sizeof timeout, "%u", IO_SECONDS);
        r = read_wchar(&w0);
        if (r >= 0)
                r = proc_spawn(b, &p, "stress-ng --hdd", argv, true, false);
        if (r >= 0)
                r = proc_finish(b, &p, IO_SECONDS);
        if (r >= 0)
                r = read_wchar(&w1);
        if (r < 0)
                return r;
        sample_from(ret, per_sec(w1 - w0, p.wall_usec) / (double) MIB, &p);
        return 0;
}

/* ---- mem, and the probe */

/* Chases a single cycle through every 64-byte line of PROBE_BYTES, in random order, on cpu,
 * adding to *steps every PROBE_REPORT_STEPS steps. Says it is ready with a byte on ready_fd. */
static _Noreturn void probe_main(pid_t parent, unsigned cpu, _Atomic uint64_t *steps,
                                 int ready_fd) {
        size_t n = PROBE_BYTES / (PROBE_LINE_WORDS * sizeof(uint64_t));
        uint64_t x = UINT64_C(0x9E3779B97F4A7C15), p = 0, count = 0;
        volatile const uint64_t *chase;
        uint64_t *line;
        cpu_set_t set;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (getppid() != parent || sched_setaffinity(0, sizeof set, &set) < 0)
                _exit(BENCH_EXIT_SETUP);
        line = mmap(NULL, PROBE_BYTES, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (line == MAP_FAILED)
                _exit(BENCH_EXIT_SETUP);
        /* Sattolo's shuffle of the identity: one cycle through all n lines. */
        for (size_t i = 0; i < n; i++)
                line[i * PROBE_LINE_WORDS] = i;
        for (size_t i = n - 1; i > 0; i--) {
                size_t j;
                uint64_t t;

                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                j = (size_t) (x % i);
                t = line[i * PROBE_LINE_WORDS];
                line[i * PROBE_LINE_WORDS] = line[j * PROBE_LINE_WORDS];
                line[j * PROBE_LINE_WORDS] = t;
        }
        if (write(ready_fd, "R", 1) != 1)
                _exit(BENCH_EXIT_SETUP);
        chase = line;
        for (;;) {
                for (unsigned k = 0; k < PROBE_REPORT_STEPS; k++)
                        p = chase[p * PROBE_LINE_WORDS];
                count += PROBE_REPORT_STEPS;
                atomic_store_explicit(steps, count, memory_order_relaxed);
        }
}

/* Starts the probe and leaves it stopped (SIGSTOP) until the mem runs. */
static int probe_start(Bench *b) {
        int fds[2], r = 0;
        char c;

        b->probe_steps = mmap(NULL, sizeof *b->probe_steps, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (b->probe_steps == MAP_FAILED) {
                b->probe_steps = NULL;
                return -errno;
        }
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        b->probe_pid = fork();
        if (b->probe_pid == 0) {
                (void) close(fds[0]);
                probe_main(b->pid, b->probe_cpu, b->probe_steps, fds[1]);
        }
        if (b->probe_pid < 0)
                r = -errno;
        (void) close(fds[1]);
        if (r >= 0 && read(fds[0], &c, 1) != 1) /* EOF: it died; EINTR: stop requested */
                r = stop_requested ? -EINTR : -EIO;
        (void) close(fds[0]);
        if (r >= 0)
                r = -clock_getcpuclockid(b->probe_pid, &b->probe_clock);
        if (r >= 0 && kill(b->probe_pid, SIGSTOP) < 0)
                r = -errno;
        if (r == -EIO)
                bench_fail("the probe could not set up %" PRIu64 " MiB on CPU %u",
                           PROBE_BYTES / MIB, b->probe_cpu);
        return r;
}

static uint64_t probe_cpu_usec(const Bench *b) {
        struct timespec ts;

        if (b->probe_pid <= 0 || clock_gettime(b->probe_clock, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / NSEC_PER_USEC;
}

static int sleep_until(uint64_t t) {
        for (uint64_t now = now_usec(); now < t; now = now_usec()) {
                struct timespec ts = { .tv_nsec = (long) MIN(t - now, 100000u) * 1000 };

                if (stop_requested)
                        return -EINTR;
                (void) nanosleep(&ts, NULL);
        }
        return stop_requested ? -EINTR : 0;
}

/* The probe's CPU time per step between from and to, in ns. */
static int probe_window(const Bench *b, uint64_t from, uint64_t to, double *ret_ns) {
        uint64_t s0, s1, c0, c1;
        int r;

        r = sleep_until(from);
        if (r < 0)
                return r;
        c0 = probe_cpu_usec(b);
        s0 = atomic_load_explicit(b->probe_steps, memory_order_relaxed);
        r = sleep_until(to);
        if (r < 0)
                return r;
        c1 = probe_cpu_usec(b);
        s1 = atomic_load_explicit(b->probe_steps, memory_order_relaxed);
        if (s1 <= s0) {
                bench_fail("the probe made no progress");
                return -EIO;
        }
        *ret_ns = (double) (c1 - c0) * (double) NSEC_PER_USEC / (double) (s1 - s0);
        return 0;
}

/* mem_load read-modify-writes every 64-byte line of its buffer per pass (loadgen/mem_load.c). */
static uint64_t mem_load_lines(void) {
        long ps = sysconf(_SC_PAGESIZE);
        uint64_t page = (uint64_t) (ps > 0 ? ps : 4096);

        return RAM_BYTES / 100 * MEM_LOAD_RAM_PERCENT / page * (page / 64);
}

/* Lines per second from stress-ng's --metrics-brief line "... vm  BOGO  SECONDS ...". */
static int vm_lines_per_sec(const Bench *b, double *ret) {
        _cleanup_free_ char *text = NULL;
        unsigned long long bogo;
        double secs;
        const char *p;
        int r;

        r = read_full_at(AT_FDCWD, b->err_path, 1u << 20, &text, NULL);
        if (r < 0)
                return r;
        p = strstr(text, "] vm ");
        if (!p || sscanf(p + strlen("] vm "), "%llu %lf", &bogo, &secs) != 2 || secs <= 0) {
                bench_fail("stress-ng --vm: no bogo ops in its --metrics-brief output");
                return -EBADMSG;
        }
        *ret = (double) bogo * VM_LINES_PER_BOGO_OP / secs;
        return 0;
}

static int mem_spawn(Bench *b, RunId id, Proc *p) {
        char bytes[48], timeout[32];
        const char *vm[] = { "stress-ng",
                             "--vm=1",
                             "--vm-method=write64",
                             "--vm-keep",
                             "--vm-madvise=normal",
                             "--metrics-brief",
                             bytes,
                             timeout,
                             NULL };

        if (id == MEM_LOAD)
                return loadgen_spawn(b, p, "mem_load", MEM_SECONDS, b->load_list);
        (void) snprintf(bytes, sizeof bytes, "--vm-bytes=%" PRIu64 "b",
                        RAM_BYTES / 100 * MEM_LOAD_RAM_PERCENT); /* as mem_load computes it */
        (void) snprintf(timeout, sizeof timeout, "--timeout=%u", MEM_SECONDS);
        return proc_spawn(b, p, "stress-ng --vm", vm, true, false);
}

static int measure_mem(Bench *b, RunId id, Sample *ret) {
        uint64_t passes, elapsed;
        double ns = 0, lines;
        Proc p;
        int r;

        r = mem_spawn(b, id, &p);
        if (r < 0)
                return r;
        if (b->probe_pid > 0) {
                r = probe_window(b, p.start_usec + MEM_WARMUP_USEC,
                                 p.start_usec + MEM_SECONDS * USEC_PER_SEC - MEM_TAIL_USEC, &ns);
                if (r < 0) {
                        proc_kill(b, &p);
                        return r;
                }
        }
        if (id == MEM_LOAD) {
                r = loadgen_finish(b, &p, MEM_SECONDS, &passes, &elapsed);
                lines = per_sec(passes * mem_load_lines(), elapsed);
        } else {
                r = proc_finish(b, &p, MEM_SECONDS);
                if (r >= 0)
                        r = vm_lines_per_sec(b, &lines);
        }
        if (r < 0)
                return r;
        sample_from(ret, lines, &p);
        ret->probe = b->probe_pid > 0 ? ns / b->probe_alone_ns : 0;
        return 0;
}

/* ---- process */

static int measure_proc(Bench *b, RunId id, Sample *ret) {
        char n[16], timeout[16];
        const char *sw[] = { "stress-ng", "--switch", n, "--timeout", timeout, NULL };
        const char *hb[] = { "hackbench", "--pipe",        "--groups", "1",
                             "--loops",   HACKBENCH_LOOPS, NULL };
        uint64_t work, elapsed;
        Repeated rep;
        Proc p;
        int r;

        (void) snprintf(n, sizeof n, "%u", b->n_cpus); /* one instance (a pair) per CPU */
        (void) snprintf(timeout, sizeof timeout, "%u", PROC_SECONDS);
        if (id == PROC_HACKBENCH) {
                r = run_repeated(b, "hackbench", hb, PROC_SECONDS, /* kill_at_end= */ false, &rep);
                if (r < 0)
                        return r;
        } else {
                if (id == PROC_LOAD)
                        r = loadgen_run(b, "process_load", PROC_SECONDS, b->all_list, &p, &work,
                                        &elapsed);
                else {
                        r = proc_spawn(b, &p, "stress-ng --switch", sw, true, false);
                        if (r >= 0)
                                r = proc_finish(b, &p, PROC_SECONDS);
                }
                if (r < 0)
                        return r;
                rep = (Repeated){ .wall_usec = p.wall_usec,
                                  .cpu_usec = ru_cpu_usec(&p.ru),
                                  .switches = ru_switches(&p.ru) };
        }
        *ret = (Sample){ .value = per_sec(rep.switches, rep.wall_usec),
                         .cpu_usec = rep.cpu_usec,
                         .wall_usec = rep.wall_usec };
        return 0;
}

static const RunInfo runs[_RUN_MAX] = {
        [IO_LOAD] = { "io_load", measure_io_load },
        [IO_DD] = { "dd", measure_dd },
        [IO_HDD] = { "stress-ng --hdd", measure_hdd },
        [MEM_LOAD] = { "mem_load", measure_mem },
        [MEM_VM] = { "stress-ng --vm write64", measure_mem },
        [PROC_LOAD] = { "process_load", measure_proc },
        [PROC_SWITCH] = { "stress-ng --switch", measure_proc },
        [PROC_HACKBENCH] = { "hackbench --pipe", measure_proc },
};

static const Section sections[N_SECTIONS] = {
        { "io", KIND_MIBPS, IO_LOAD, IO_HDD, false },
        { "mem", KIND_LINES, MEM_LOAD, MEM_VM, true },
        { "process", KIND_SWITCHES, PROC_LOAD, PROC_HACKBENCH, false },
};

static const Comparison comparisons[] = {
        { IO_LOAD, IO_DD },         { IO_LOAD, IO_HDD },           { MEM_LOAD, MEM_VM },
        { PROC_LOAD, PROC_SWITCH }, { PROC_LOAD, PROC_HACKBENCH },
};

static Kind kind_of(RunId id) {
        for (size_t i = 0; i < N_SECTIONS; i++)
                if (id >= sections[i].first && id <= sections[i].last)
                        return sections[i].kind;
        return KIND_MIBPS;
}

/* "1093 MiB/s", "27.8M lines/s", "118k switches/s" */
static const char *format_value(Kind kind, double v, char *buf, size_t size) {
        if (kind == KIND_MIBPS)
                (void) snprintf(buf, size, "%.0f MiB/s", v);
        else if (kind == KIND_LINES)
                (void) snprintf(buf, size, "%.1fM lines/s", v / 1e6);
        else
                (void) snprintf(buf, size, "%.0fk switches/s", v / 1000.0);
        return buf;
}

/* ---- rounds */

static void print_round(const Section *s, unsigned round, const Results *res) {
        char buf[64];

        printf("round %u/%d %-8s", round + 1, ROUNDS, s->name);
        for (RunId id = s->first; id <= s->last; id++) {
                const Sample *x = &res->s[id][round];

                printf("%s %s %s CPU %.0f%%", id == s->first ? "" : " |", runs[id].name,
                       format_value(s->kind, x->value, buf, sizeof buf),
                       pct(x->cpu_usec, x->wall_usec));
                if (x->probe > 0)
                        printf(" probe %.2fx", x->probe);
        }
        if (s->mem && res->probe_alone_ns[round] > 0)
                printf(" (probe alone %.0f ns/step)", res->probe_alone_ns[round]);
        printf("; elsewhere %.0f%%\n", res->elsewhere_pct[s - sections][round]);
}

/* The runs of s, in order or (odd rounds) the peers first; the probe runs only meanwhile. */
static int run_section_runs(Bench *b, const Section *s, unsigned round, Results *res,
                            uint64_t *ret_own_usec) {
        unsigned n = (unsigned) (s->last - s->first) + 1;
        int r = 0;

        *ret_own_usec = 0;
        if (s->mem && b->probe_pid > 0) {
                if (kill(b->probe_pid, SIGCONT) < 0)
                        return -errno;
                r = probe_window(b, now_usec(), now_usec() + PROBE_ALONE_USEC, &b->probe_alone_ns);
                res->probe_alone_ns[round] = b->probe_alone_ns;
        }
        for (unsigned i = 0; r >= 0 && i < n; i++) {
                RunId id = s->first + (round % 2 == 1 ? n - 1 - i : i);

                r = runs[id].measure(b, id, &res->s[id][round]);
                *ret_own_usec += res->s[id][round].cpu_usec;
        }
        if (s->mem && b->probe_pid > 0)
                (void) kill(b->probe_pid, SIGSTOP);
        return r;
}

static int run_section(Bench *b, const Section *s, unsigned round, Results *res) {
        uint64_t busy0 = 0, busy1 = 0, probe0, t0, own;
        int r;

        r = cgroup_set_cpuset(&b->layout, b->group, s->mem ? b->load_cpu : b->all_cpus, NULL);
        if (r < 0) {
                bench_fail("setting the cpuset of %s: %s", b->group, strerror(-r));
                return r;
        }
        (void) read_busy_usec(&busy0);
        probe0 = probe_cpu_usec(b);
        t0 = now_usec();
        r = run_section_runs(b, s, round, res, &own);
        if (r < 0)
                return r;
        own += probe_cpu_usec(b) - probe0;
        if (read_busy_usec(&busy1) >= 0 && busy1 > busy0 + own)
                res->elsewhere_pct[s - sections][round] = pct(busy1 - busy0 - own, now_usec() - t0);
        print_round(s, round, res);
        return 0;
}

static int run_rounds(Bench *b, Results *res) {
        for (unsigned round = 0; round < ROUNDS; round++)
                for (size_t i = 0; i < N_SECTIONS; i++) {
                        int r = run_section(b, &sections[i], round, res);

                        if (r < 0)
                                return r;
                }
        return 0;
}

/* ---- the report */

/* Of one run over the rounds: what get() picks from each sample. */
static double median_of(const Results *res, RunId id, double (*get)(const Sample *)) {
        double v[ROUNDS];

        for (unsigned k = 0; k < ROUNDS; k++)
                v[k] = get(&res->s[id][k]);
        return bench_median(v, ROUNDS, NULL, NULL);
}

static double get_value(const Sample *s) {
        return s->value;
}

static double get_cpu_pct(const Sample *s) {
        return pct(s->cpu_usec, s->wall_usec);
}

static double get_probe(const Sample *s) {
        return s->probe;
}

/* One line per comparison; returns whether the load is lighter than LIGHT_RATIO of its peer. */
static bool report_comparison(const Results *res, const Comparison *c) {
        Kind kind = kind_of(c->load);
        double ratios[ROUNDS], lo, hi, med;
        char a[64], p[64];

        for (unsigned k = 0; k < ROUNDS; k++)
                ratios[k] = res->s[c->peer][k].value > 0
                                    ? res->s[c->load][k].value / res->s[c->peer][k].value
                                    : 0;
        med = bench_median(ratios, ROUNDS, &lo, &hi);
        printf("%s %s CPU %.0f%%, %s %s CPU %.0f%%: %.2fx (rounds %.2f-%.2f)\n", runs[c->load].name,
               format_value(kind, median_of(res, c->load, get_value), a, sizeof a),
               median_of(res, c->load, get_cpu_pct), runs[c->peer].name,
               format_value(kind, median_of(res, c->peer, get_value), p, sizeof p),
               median_of(res, c->peer, get_cpu_pct), med, lo, hi);
        if (kind == KIND_LINES && median_of(res, c->load, get_probe) > 0)
                printf("  beside them the probe took %.2fx (mem_load) and %.2fx (stress-ng) its "
                       "time alone (%.0f ns/step): shown, not judged\n",
                       median_of(res, c->load, get_probe), median_of(res, c->peer, get_probe),
                       bench_median(res->probe_alone_ns, ROUNDS, NULL, NULL));
        if (!(med < LIGHT_RATIO))
                return false;
        printf("WARNING: %s is %.2fx of %s, lighter than %.1fx: the issue calls that a bug\n",
               runs[c->load].name, med, runs[c->peer].name, LIGHT_RATIO);
        return true;
}

static void report(const Results *res, uint64_t elapsed_usec) {
        char light[512] = "";
        unsigned n_light = 0;

        printf("\nmedians of %d rounds; ratio load/peer: the median of the rounds' ratios\n",
               ROUNDS);
        for (size_t i = 0; i < ELEMENTSOF(comparisons); i++) {
                const Comparison *c = &comparisons[i];

                if (report_comparison(res, c)) {
                        size_t len = strlen(light);

                        (void) snprintf(light + len, sizeof light - len, "%s%s vs %s",
                                        n_light++ ? ", " : "", runs[c->load].name,
                                        runs[c->peer].name);
                }
        }
        printf("summary: %zu comparisons in %.0f s; %u lighter than %.1fx of the peer%s%s\n",
               ELEMENTSOF(comparisons), (double) elapsed_usec / (double) USEC_PER_SEC, n_light,
               LIGHT_RATIO, n_light ? ": " : "", light);
}

/* ---- setup and teardown */

static int check_tools(Bench *b) {
        static const BenchTool tools[] = { { "dd", "coreutils" },
                                           { "stress-ng", "stress-ng" },
                                           { "hackbench", "rt-tests" } };
        int r = 0;

        (void) snprintf(b->loadgen, sizeof b->loadgen, "%s/loadgen", BUILD_DIR);
        if (access(b->loadgen, X_OK) < 0) {
                bench_fail("%s not found: make all builds it", b->loadgen);
                r = -ENOENT;
        }
        if (bench_check_tools(tools, ELEMENTSOF(tools)) < 0)
                r = -ENOENT;
        return r;
}

/* The CPUs this process may use; the load's CPU is the first, the probe's the second. */
static int setup_cpus(Bench *b, bool *ret_probe) {
        cpu_set_t set;
        int first = -1, second = -1, r;

        if (sched_getaffinity(0, sizeof set, &set) < 0)
                return -errno;
        b->all_cpus = cpumask_new(CPU_SETSIZE);
        b->load_cpu = cpumask_new(CPU_SETSIZE);
        if (!b->all_cpus || !b->load_cpu)
                return -ENOMEM;
        for (unsigned c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set)) {
                        (void) cpumask_set(b->all_cpus, c);
                        if (first < 0)
                                first = (int) c;
                        else if (second < 0)
                                second = (int) c;
                }
        if (first < 0)
                return -EINVAL;
        (void) cpumask_set(b->load_cpu, (unsigned) first);
        b->n_cpus = cpumask_count(b->all_cpus);
        *ret_probe = second >= 0;
        b->probe_cpu = second >= 0 ? (unsigned) second : 0;
        r = cpumask_format(b->all_cpus, &b->all_list);
        if (r >= 0)
                r = cpumask_format(b->load_cpu, &b->load_list);
        return r;
}

static int setup(Bench *b) {
        bool probe = false;
        int r;

        r = cgroup_layout_detect(&b->layout);
        if (r < 0)
                return r;
        if (!b->layout.cpu_path[0] || !b->layout.cpuset_path[0] || !b->layout.memory_path[0]) {
                bench_fail("needs the cpu, cpuset and memory controllers (cgroup mode %s)",
                           cgroup_mode_to_string(b->layout.mode));
                return -EOPNOTSUPP;
        }
        r = setup_cpus(b, &probe);
        if (r < 0)
                return r;
        b->slice_existed = bench_dir_exists(b->layout.cpu_path, SLICE);
        (void) snprintf(b->group, sizeof b->group, SLICE "/bench-loads-%d", (int) b->pid);
        r = cgroup_create(&b->layout, b->group);
        b->group_made = r >= 0;
        if (r >= 0)
                r = cgroup_set_memory_max(&b->layout, b->group, RAM_BYTES);
        if (r < 0) {
                bench_fail("making the peers' group %s: %s", b->group, strerror(-r));
                return r;
        }
        (void) snprintf(b->dir, sizeof b->dir, WORK_BASE "/bench-loads-%d", (int) b->pid);
        if (mkdir(b->dir, 0700) < 0) {
                r = -errno;
                bench_fail("mkdir %s: %s", b->dir, strerror(-r));
                return r;
        }
        b->dir_made = true;
        (void) snprintf(b->out_path, sizeof b->out_path, "%s/run.out", b->dir);
        (void) snprintf(b->err_path, sizeof b->err_path, "%s/run.err", b->dir);
        return probe ? probe_start(b) : 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void) st;
        (void) ftw;
        (void) (type == FTW_DP ? rmdir(path) : unlink(path));
        return 0; /* go on: remove what can be removed */
}

/* Removes the group (and the slice if this run made it) from every hierarchy, by hand should
 * lib/cgroup fail. A slice someone else uses meanwhile stays (rmdir says EBUSY). */
static void group_remove(Bench *b) {
        const char *bases[] = { b->layout.cpu_path, b->layout.cpuacct_path, b->layout.cpuset_path,
                                b->layout.memory_path,
                                b->layout.mode == CGROUP_MODE_V1 ? "" : b->layout.unified_path };
        const char *rel[] = { b->group, b->slice_existed ? NULL : SLICE };

        (void) cgroup_kill_all(&b->layout, b->group, 5 * USEC_PER_SEC);
        (void) cgroup_remove(&b->layout, b->group);
        for (size_t j = 0; j < ELEMENTSOF(rel) && rel[j]; j++)
                for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                        char p[CGROUP_PATH_MAX + 128];

                        if (!bases[i][0] || !bench_dir_exists(bases[i], rel[j]))
                                continue;
                        (void) snprintf(p, sizeof p, "%s/%s", bases[i], rel[j]);
                        (void) rmdir(p);
                }
}

static void teardown(Bench *b) {
        if (b->probe_pid > 0) {
                (void) kill(b->probe_pid, SIGKILL);
                (void) waitpid(b->probe_pid, NULL, 0);
        }
        if (b->probe_steps)
                (void) munmap(b->probe_steps, sizeof *b->probe_steps);
        if (b->group_made)
                group_remove(b);
        if (b->dir_made)
                (void) nftw(b->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        cpumask_free(b->all_cpus);
        cpumask_free(b->load_cpu);
        free(b->all_list);
        free(b->load_list);
}

int main(void) {
        struct sigaction sa = { .sa_handler = on_stop };
        Bench b = { .pid = getpid() };
        Results res = {};
        uint64_t t0 = now_usec();
        int r;

        if (geteuid() != 0) {
                printf("bench-loads: skipped, needs root for the loads' and the peers' cgroups\n");
                return 0;
        }
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        r = check_tools(&b);
        if (r >= 0)
                r = setup(&b);
        if (r >= 0) {
                printf("bench-loads: loadgen's loads against standard tools, %d rounds; RAM "
                       "%" PRIu64 " MiB (the memory limit of both sides); CPUs %s, mem on CPU %s",
                       ROUNDS, RAM_BYTES / MIB, b.all_list, b.load_list);
                if (b.probe_pid > 0)
                        printf(", its probe on CPU %u\n", b.probe_cpu);
                else
                        printf(" (no second CPU for its probe)\n");
                r = run_rounds(&b, &res);
        }
        if (r >= 0)
                report(&res, now_usec() - t0);
        else if (r == -EINTR)
                bench_fail("interrupted");
        else if (!bench_error_reported)
                bench_fail("%s", strerror(-r));
        teardown(&b);
        return r < 0 ? 1 : 0;
}
