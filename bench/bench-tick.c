/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What one tick of the daemon costs, with the full sampler and the lazy one side by side, and
 * what the live daemon spends, from 1,000 to 100,000 managed threads (issue 22). Root only: it
 * makes a real cgroup, cgbalance.slice/bench-tick-<pid>, and moves child processes into it;
 * without root it says why and exits 0.
 *
 * The managed threads are parked (asleep in pause()), in child processes of these shapes:
 *   10 x 100      ten processes of 100 threads             1,000 threads
 *   1000 x 1      1,000 single-threaded processes          1,000 threads
 *   10 x 1000     ten processes of 1,000 threads          10,000 threads
 *   1000 x 10     1,000 processes of 10 threads           10,000 threads
 *   1 x 10000     one process of 10,000 threads           10,000 threads (the measurement)
 *   100 x 100b2   100 processes of 100 threads, 2 of each spinning: 200 busy of 10,000 threads
 *   1000 x 100    1,000 processes of 100 threads         100,000 threads
 * Each child moves itself into the group before it starts a thread. A busy shape (bN: N threads
 * of each process spin) runs only while the group is capped at (CPUs - 0.5) CPUs, a quota of
 * that many periods (group_cap() says why the group and not the slice), lifted as soon as the
 * spinners are killed; the children die with the bench, also on a failure or SIGINT/SIGTERM.
 * kernel.pid_max and kernel.threads-max are raised for the run to twice the largest shape's threads
 * where they are lower, and put back at the end.
 *
 * Tick: CPU time (CLOCK_THREAD_CPUTIME_ID: user + kernel) of sampler_sample() + policy_plan() on
 * a real Sampler and PolicyState, the live layout and topology, tunables managing that group;
 * no actuator (nothing is to be acted on). Two samplers in the same run: full (sample_refresh =
 * 0: every thread's stat and schedstat every tick) and lazy (the default 30 s: each process's
 * CPU-time clock every tick, and the threads of those that ran, new ones, and cold ones due a
 * refresh). Each rep is a floor pass, a full tick and a lazy tick; the figures are medians of
 * REPS reps, after a priming tick (which opens the kept fds; shown apart as "first") and one
 * more (the first with deltas, and the first the lazy sampler reads lazily).
 *
 * The samplers are given a now that advances 1 s a rep, the daemon's default interval, while 10
 * ms really pass between reps: the lazy sampler's refresh of cold threads, each due every
 * sample_refresh, is then spread over the reps as it is over the daemon's ticks at 1 s. A busy
 * shape waits the whole second between reps: in 10 ms most of its spinners, 1.5 CPUs among 200
 * on this kind of machine, would not run at all, and both the cost and the check below would
 * describe another load. The check: every busy process must have a demand > 0 in every tick's
 * snapshot (the "every busy task's demand fresh each tick"); the processes missing from
 * a snapshot or at demand 0 are counted over the reps, for the lazy sampler and, as a control,
 * the full one.
 *
 * Floor, measured in the same run, interleaved with the ticks: the cheapest honest way to read
 * what the full sampler reads each tick, with no parsing and no bookkeeping. Files are read with
 * one pread() of an fd opened before the timing: each thread's task/TID/stat and schedstat; each
 * multi-threaded process's task/ directory (lseek + getdents64); the group's cgroup.procs (on
 * cgroup v1 opened each time: a kept fd would be served a list cached for a second), usage,
 * weight and cpu.pressure; /proc/stat and /proc/pressure/{cpu,io,memory}; and each process's
 * affinity with sched_getaffinity(), as the sampler reads it on a live /proc. The per-thread
 * files are kept open within the sampler's fd budget (half of RLIMIT_NOFILE); past it the floor,
 * as the sampler, opens, reads and closes them each tick. The floor runs in a child process of
 * its own, with the same limit. The sampler's walk of the cgroup tree is not in the floor: it is
 * how it finds the group. The process runs with the soft limit at NOFILE_WANT, or lower where
 * the hard limit leaves no room for two budgets and NOFILE_SPARE: both samplers are made at it,
 * so each has the floor's budget, then tick with the soft limit at the hard one, as two
 * budgets would otherwise fill the limit at 100,000 threads.
 *
 * Recording: after each lazy tick, apart from its time, trace_writer_tick() of its snapshot and
 * plan into a temporary file, as --record does (cgbalance-record(5)): its CPU time, its share of
 * the lazy tick's, and the bytes a tick adds once every task has been written whole (tasks are
 * processes: a process's threads are one record).
 *
 * Daemon: build/cgbalanced on a temporary config managing the group (interval 1s, dry run,
 * log_level = warning), lazy (the default) and full (sample_refresh = 0) one after the other, at
 * 1 x 10000, 100 x 100b2 and 1000 x 100, and once managing nothing (a group glob that matches
 * none): its CPU time (utime + stime of /proc/PID/stat) from 6 s to 16 s after its start, as %
 * of one CPU; at 16 s its VmRSS and its open fds; and the lines of its log, each a warning or an
 * error at that level (0: it ran without error). It starts with RLIMIT_NOFILE 1024, soft and
 * hard: a service's default soft limit, and the daemon raises its soft limit to the hard one, so
 * the hard one is 1024 too. Its fd budget is then 512.
 *
 * A measurement, not a test: exits 0 unless the setup fails. Everything it made (children, the
 * group, the slice if it made it, the temporary directory) is removed at the end and every
 * setting put back, also on a failure or SIGINT/SIGTERM.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "cgroup-tree.h"
#include "cgroup.h"
#include "fileio.h"
#include "parse.h"
#include "policy.h"
#include "proc.h"
#include "sampler.h"
#include "support.h"
#include "topology.h"
#include "trace.h"
#include "tunables.h"

#ifndef BUILD_DIR
#define BUILD_DIR "build"
#endif

#define SLICE "cgbalance.slice"
#define REPS 11
#define STACK_BYTES (64u * 1024u)
/* The sampler keeps 2 fds a thread within half the soft limit: 10,000 threads need 40,000. */
#define NOFILE_WANT 65536u
/* Beside two samplers' budgets (half the soft limit each): the pipes, the recording, /proc. */
#define NOFILE_SPARE 1024u
#define READ_BUF_SIZE (64u * 1024u)
/* The synthetic interval the samplers are given, and the real time between reps. */
#define TICK_INTERVAL_USEC USEC_PER_SEC
#define REP_SLEEP_MS 10
#define BUSY_REP_SLEEP_MS 1000
/* The live daemon: its CPU time is measured from DAEMON_FROM_MS to DAEMON_TO_MS after start. */
#define DAEMON_FROM_MS 6000
#define DAEMON_TO_MS 16000
#define DAEMON_NOFILE 1024u
#define DAEMON_LOG_MAX (16u * 1024u * 1024u)
/* kernel.pid_max cannot go above this (PID_MAX_LIMIT on 64-bit). */
#define PID_MAX_LIMIT UINT64_C(4194304)

typedef struct Shape {
        unsigned procs, threads; /* threads per process, the main one included */
        unsigned busy; /* threads of each process that spin (0: all parked) */
} Shape;

static const Shape shapes[] = { { 10, 100, 0 },  { 1000, 1, 0 },  { 10, 1000, 0 }, { 1000, 10, 0 },
                                { 1, 10000, 0 }, { 100, 100, 2 }, { 1000, 100, 0 } };
static const Shape daemon_shapes[] = { { 1, 10000, 0 }, { 100, 100, 2 }, { 1000, 100, 0 } };

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
        (void) sig;
        stop_requested = 1;
}

static void shape_label(const Shape *sh, char *buf, size_t size) {
        if (sh->busy > 0)
                (void) snprintf(buf, size, "%4u x %ub%u", sh->procs, sh->threads, sh->busy);
        else
                (void) snprintf(buf, size, "%4u x %u", sh->procs, sh->threads);
}

/* ---- kernel limits raised for the run */

typedef struct Sysctl {
        const char *path;
        uint64_t saved; /* what it was, when raised */
        bool raised;
} Sysctl;

static int sysctl_read(const char *path, uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        const char *p;
        int r;

        r = read_text_at(AT_FDCWD, path, 64, &text, NULL);
        if (r < 0)
                return r;
        p = text;
        return parse_u64_prefix(&p, UINT64_MAX, ret);
}

static int sysctl_write(const char *path, uint64_t value) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        char text[32];
        int n = snprintf(text, sizeof text, "%" PRIu64 "\n", value);

        if (fd < 0)
                return negative_errno();
        return write_full(fd, text, (size_t) n);
}

/* Raises s to want where it is lower, saying so; sysctl_restore() puts it back. */
static int sysctl_raise(Sysctl *s, uint64_t want) {
        uint64_t now;
        int r;

        r = sysctl_read(s->path, &now);
        if (r < 0 || now >= want)
                return r;
        r = sysctl_write(s->path, want);
        if (r < 0)
                return r;
        s->saved = now;
        s->raised = true;
        printf("%s raised from %" PRIu64 " to %" PRIu64 " for this run (put back at the end)\n",
               s->path, now, want);
        return 0;
}

static void sysctl_restore(Sysctl *s) {
        int r;

        if (!s->raised)
                return;
        r = sysctl_write(s->path, s->saved);
        if (r < 0)
                fprintf(stderr, "bench-tick: could not put back %s = %" PRIu64 ": %s\n", s->path,
                        s->saved, strerror(-r));
        s->raised = false;
}

/* ---- the group and its children */

typedef struct Bench {
        CgroupLayout layout;
        char group[128];
        bool group_made, slice_existed;
        bool group_capped; /* its CPU quota set for a busy shape */
        pid_t *kids;
        size_t n_kids;
        int proc_fd;
        Topology *topo;
        Sysctl pid_max, threads_max;
        rlim_t nofile; /* the soft RLIMIT_NOFILE it runs at, and makes samplers at (0: left) */
} Bench;

static void *park(void *arg) {
        (void) arg;
        for (;;)
                (void) pause();
        return NULL;
}

static void *spin(void *arg) {
        volatile unsigned long n = 0;

        (void) arg;
        for (;;)
                n++;
        return NULL;
}

/*
 * A managed process: in the group first, then threads - 1 threads and its main one, the first
 * busy of them spinning and the rest parked, until killed.
 */
static _Noreturn void child_main(const Bench *b, const Shape *sh, int ready_fd, pid_t parent) {
        pthread_attr_t attr;
        char c = 'R';

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(1);
        /* Every thread is born in the group: a spinner never runs outside the slice's cap. */
        if (cgroup_attach_pid(&b->layout, b->group, getpid()) < 0 ||
            pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, STACK_BYTES) != 0)
                c = 'E';
        for (unsigned i = 1; c == 'R' && i < sh->threads; i++) {
                pthread_t t;

                if (pthread_create(&t, &attr, i <= sh->busy ? spin : park, NULL) != 0)
                        c = 'E';
        }
        if (write(ready_fd, &c, 1) != 1)
                _exit(1);
        if (sh->busy >= sh->threads)
                (void) spin(NULL);
        for (;;)
                (void) pause();
}

/* Waits for n children to say they are ready ('R'); -EIO if one could not join the group or
 * start its threads. */
static int kids_wait_ready(int fd, size_t n) {
        for (size_t got = 0; got < n;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                char buf[256];
                ssize_t k;

                int r;

                if (stop_requested)
                        return -EINTR;
                r = poll(&p, 1, 60 * 1000);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r <= 0)
                        return r < 0 ? negative_errno() : -ETIMEDOUT;
                k = read(fd, buf, MIN(sizeof buf, n - got));
                if (k <= 0)
                        return -EIO;
                if (memchr(buf, 'E', (size_t) k))
                        return -EIO;
                got += (size_t) k;
        }
        return 0;
}

/* Forks sh's processes, each moving itself into the group; waits until all their threads run. */
static int kids_spawn(Bench *b, const Shape *sh) {
        _cleanup_close_ int rd = -EBADF, wr = -EBADF;
        int fds[2];

        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rd = fds[0], wr = fds[1];
        for (unsigned i = 0; i < sh->procs; i++) {
                pid_t parent = getpid(), pid = fork();

                if (pid < 0)
                        return negative_errno();
                if (pid == 0)
                        child_main(b, sh, wr, parent);
                b->kids[b->n_kids++] = pid;
        }
        return kids_wait_ready(rd, sh->procs);
}

static void kids_kill(Bench *b) {
        for (size_t i = 0; i < b->n_kids; i++)
                (void) kill(b->kids[i], SIGKILL);
        for (size_t i = 0; i < b->n_kids; i++)
                (void) waitpid(b->kids[i], NULL, 0);
        b->n_kids = 0;
}

/*
 * Caps the group for a busy shape at (CPUs - 0.5) CPUs: a quota of that many of its periods. The
 * group, not cgbalance.slice: the slice is shared, and another run that sets and lifts its quota
 * meanwhile would lift the cap under the spinners (or this run's putting back, another's); the
 * group is this run's alone, and its quota holds its tasks whatever the slice's. On v1 a quota
 * above a capped slice's is refused: the slice's tighter cap then holds them.
 */
static int group_cap(Bench *b) {
        uint64_t quota, period, cap;
        int r;

        r = cgroup_get_cpu_quota(&b->layout, b->group, NULL, &period);
        if (r < 0)
                return r;
        cap = (2 * (uint64_t) topology_n_cpus(b->topo) - 1) * period / 2;
        r = cgroup_set_cpu_quota(&b->layout, b->group, cap);
        if (r == -EINVAL && cgroup_get_cpu_quota(&b->layout, SLICE, &quota, NULL) >= 0 &&
            quota != CGROUP_QUOTA_NONE && quota <= cap)
                return 0;
        b->group_capped = r >= 0;
        return r;
}

static void group_uncap(Bench *b) {
        int r;

        if (!b->group_capped)
                return;
        r = cgroup_set_cpu_quota(&b->layout, b->group, CGROUP_QUOTA_NONE);
        if (r < 0) /* the group is removed at the end all the same */
                fprintf(stderr, "bench-tick: could not lift the CPU quota of %s: %s\n", b->group,
                        strerror(-r));
        b->group_capped = false;
}

/* sh's processes in the group; a busy shape's only under the group's cap. */
static int shape_spawn(Bench *b, const Shape *sh) {
        int r = sh->busy > 0 ? group_cap(b) : 0;

        return r < 0 ? r : kids_spawn(b, sh);
}

/* Kills the children, then lifts the cap their spinners ran under. */
static void shape_kill(Bench *b) {
        kids_kill(b);
        group_uncap(b);
}

static int group_make(Bench *b) {
        int r;

        r = cgroup_layout_detect(&b->layout);
        if (r < 0)
                return r;
        if (!b->layout.cpu_path[0])
                return -EOPNOTSUPP;
        b->slice_existed = bench_dir_exists(b->layout.cpu_path, SLICE);
        (void) snprintf(b->group, sizeof b->group, SLICE "/bench-tick-%d", (int) getpid());
        r = cgroup_create(&b->layout, b->group);
        b->group_made = r >= 0;
        return r;
}

/* Removes the group (and the slice if this run made it) from every hierarchy, by hand should
 * lib/cgroup fail. A slice someone else uses meanwhile stays (rmdir says EBUSY). */
static void group_remove(Bench *b) {
        const char *bases[] = { b->layout.cpu_path, b->layout.cpuacct_path, b->layout.cpuset_path,
                                b->layout.memory_path,
                                b->layout.mode == CGROUP_MODE_V1 ? "" : b->layout.unified_path };
        const char *rel[] = { b->group, b->slice_existed ? NULL : SLICE };

        if (!b->group_made)
                return;
        (void) cgroup_remove(&b->layout, b->group);
        for (size_t j = 0; j < ELEMENTSOF(rel) && rel[j]; j++)
                for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
                        char p[CGROUP_PATH_MAX + 128];

                        if (!bases[i][0] || !bench_dir_exists(bases[i], rel[j]))
                                continue;
                        (void) snprintf(p, sizeof p, "%s/%s", bases[i], rel[j]);
                        (void) rmdir(p);
                }
        b->group_made = false;
}

/* ---- timing */

static void sleep_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop_requested)
                ;
}

/* ---- the floor */

typedef struct FdList {
        int *fds;
        size_t n, cap;
} FdList;

typedef struct Floor {
        FdList files; /* kept: one pread() each */
        char (*paths)[64]; /* beyond the fd budget: openat() + read() + close() each pass */
        size_t n_paths;
        FdList dirs; /* listed with lseek() + getdents64() */
        pid_t *pids; /* affinity read with sched_getaffinity() */
        size_t n_pids;
        char group_procs[CGROUP_PATH_MAX + 256]; /* v1: opened, read and closed each pass */
        unsigned budget; /* per-thread files it may keep, as the sampler may */
} Floor;

/* fd: an open fd, taken, or a negative errno, returned. */
static int fds_push(FdList *l, int fd) {
        if (fd < 0)
                return fd;
        if (greedy_realloc((void **) &l->fds, &l->cap, l->n + 1, sizeof *l->fds, 256) < 0) {
                (void) close(fd);
                return -ENOMEM;
        }
        l->fds[l->n++] = fd;
        return 0;
}

static void fds_close(FdList *l) {
        for (size_t i = 0; i < l->n; i++)
                (void) close(l->fds[i]);
        free(l->fds);
        *l = (FdList){};
}

static void floor_close(Floor *f) {
        fds_close(&f->files);
        fds_close(&f->dirs);
        free(f->paths);
        free(f->pids);
        *f = (Floor){};
}

static int open_or_errno(int dir_fd, const char *path, int flags) {
        int fd = openat(dir_fd, path, flags | O_RDONLY | O_CLOEXEC);

        return fd < 0 ? negative_errno() : fd;
}

/* Opens base/group/name when base is set; a file this host lacks is skipped, as the sampler
 * skips it. */
static int floor_add_group_file(Floor *f, const char *base, const char *group, const char *name) {
        char p[CGROUP_PATH_MAX + 256];
        int fd;

        if (!base[0])
                return 0;
        (void) snprintf(p, sizeof p, "%s/%s/%s", base, group, name);
        fd = open(p, O_RDONLY | O_CLOEXEC);
        return fd < 0 ? 0 : fds_push(&f->files, fd);
}

/* What the sampler reads once a tick whatever the number of tasks. */
static int floor_add_fixed(Floor *f, const Bench *b) {
        static const char *const proc_files[] = { "stat", "pressure/cpu", "pressure/io",
                                                  "pressure/memory" };
        const CgroupLayout *l = &b->layout;
        bool v2 = l->mode == CGROUP_MODE_V2;
        int r = 0;

        for (size_t i = 0; i < ELEMENTSOF(proc_files) && r >= 0; i++) {
                int fd = openat(b->proc_fd, proc_files[i], O_RDONLY | O_CLOEXEC);

                r = fd < 0 ? 0 : fds_push(&f->files, fd);
        }
        if (r >= 0 && v2)
                r = floor_add_group_file(f, l->cpu_path, b->group, "cgroup.procs");
        if (r >= 0 && !v2) {
                /* v1 keeps the list an fd read last for a second, and serves it again to a
                 * pread() of that fd: only a new open reads the group's processes now. */
                (void) snprintf(f->group_procs, sizeof f->group_procs, "%s/%s/cgroup.procs",
                                l->cpu_path, b->group);
        }
        if (r >= 0)
                r = v2 ? floor_add_group_file(f, l->unified_path, b->group, "cpu.stat")
                       : floor_add_group_file(f, l->cpuacct_path, b->group, "cpuacct.usage");
        if (r >= 0)
                r = floor_add_group_file(f, l->cpu_path, b->group,
                                         v2 ? "cpu.weight" : "cpu.shares");
        if (r >= 0 && l->mode != CGROUP_MODE_V1)
                r = floor_add_group_file(f, l->unified_path, b->group, "cpu.pressure");
        return r;
}

/* A per-thread file: kept open within the budget, else read by path each pass. */
static int floor_add_thread_file(Floor *f, const Bench *b, pid_t pid, pid_t tid, const char *name) {
        char p[64];

        (void) snprintf(p, sizeof p, "%d/task/%d/%s", (int) pid, (int) tid, name);
        if (f->budget > 0) {
                f->budget--;
                return fds_push(&f->files, open_or_errno(b->proc_fd, p, 0));
        }
        memcpy(f->paths[f->n_paths++], p, sizeof p);
        return 0;
}

static int floor_add_kid(Floor *f, const Bench *b, pid_t pid) {
        _cleanup_free_ pid_t *tids = NULL;
        char p[64];
        size_t n;
        int r;

        r = proc_task_list_at(b->proc_fd, pid, &tids, &n);
        if (r < 0)
                return r;
        if (n > 1) { /* the sampler lists the threads of a multi-threaded process only */
                (void) snprintf(p, sizeof p, "%d/task", (int) pid);
                r = fds_push(&f->dirs, open_or_errno(b->proc_fd, p, O_DIRECTORY));
        }
        for (size_t i = 0; i < n && r >= 0; i++) {
                r = floor_add_thread_file(f, b, pid, tids[i], "stat");
                if (r >= 0)
                        r = floor_add_thread_file(f, b, pid, tids[i], "schedstat");
        }
        if (r >= 0)
                f->pids[f->n_pids++] = pid;
        return r;
}

/* The sampler's budget (daemon/sampler.c, fd_budget()): half the soft RLIMIT_NOFILE, none
 * under 256. */
static unsigned fd_budget(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                return 1u << 16;
        return rl.rlim_cur < 256 ? 0 : (unsigned) MIN(rl.rlim_cur / 2, UINT_MAX);
}

static int floor_open(Floor *f, const Bench *b, const Shape *sh) {
        int r;

        *f = (Floor){ .budget = fd_budget() };
        f->pids = calloc(b->n_kids, sizeof *f->pids);
        f->paths = calloc(2 * (size_t) sh->procs * sh->threads, sizeof *f->paths);
        if (!f->pids || !f->paths) {
                floor_close(f);
                return -ENOMEM;
        }
        r = floor_add_fixed(f, b);
        for (size_t i = 0; i < b->n_kids && r >= 0; i++)
                r = floor_add_kid(f, b, b->kids[i]);
        if (r < 0)
                floor_close(f);
        return r;
}

/* One floor pass: CPU time in ns. Counts failed reads in *failures. */
static uint64_t floor_pass(const Floor *f, int proc_fd, unsigned *failures) {
        static char buf[READ_BUF_SIZE];
        uint64_t t0 = clock_nsec(CLOCK_THREAD_CPUTIME_ID);

        for (size_t i = 0; i < f->files.n; i++)
                if (pread(f->files.fds[i], buf, sizeof buf, 0) <= 0)
                        (*failures)++;
        if (f->group_procs[0]) {
                int fd = open(f->group_procs, O_RDONLY | O_CLOEXEC);

                if (fd < 0 || read(fd, buf, sizeof buf) <= 0)
                        (*failures)++;
                if (fd >= 0)
                        (void) close(fd);
        }
        for (size_t i = 0; i < f->n_paths; i++) {
                int fd = openat(proc_fd, f->paths[i], O_RDONLY | O_CLOEXEC);

                if (fd < 0 || read(fd, buf, sizeof buf) <= 0)
                        (*failures)++;
                if (fd >= 0)
                        (void) close(fd);
        }
        for (size_t i = 0; i < f->dirs.n; i++) {
                ssize_t n;

                if (lseek(f->dirs.fds[i], 0, SEEK_SET) < 0)
                        (*failures)++;
                while ((n = getdents64(f->dirs.fds[i], buf, sizeof buf)) > 0)
                        ;
                if (n < 0)
                        (*failures)++;
        }
        for (size_t i = 0; i < f->n_pids; i++) {
                cpu_set_t set;

                if (sched_getaffinity(f->pids[i], sizeof set, &set) < 0)
                        (*failures)++;
        }
        return clock_nsec(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/*
 * The floor runs in a child process of its own, with the same RLIMIT_NOFILE and so the same fd
 * budget as the sampler: in one process both would not fit the limit at 10,000 threads. The
 * parent asks for a pass with a byte and gets back its CPU time and failures.
 */
typedef struct FloorProc {
        pid_t pid;
        int cmd_fd, res_fd;
} FloorProc;

typedef struct FloorResult {
        int error; /* of the setup, negative errno, in the first answer only */
        unsigned failures;
        uint64_t ns;
} FloorResult;

static _Noreturn void floor_child(const Bench *b, const Shape *sh, int cmd_fd, int res_fd) {
        FloorResult res = {};
        Floor f;
        char c;

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        res.error = floor_open(&f, b, sh);
        if (write(res_fd, &res, sizeof res) != sizeof res || res.error < 0)
                _exit(1);
        for (;;) {
                ssize_t n = read(cmd_fd, &c, 1);

                if (n < 0 && errno == EINTR) /* SIGINT: the parent stops us */
                        continue;
                if (n != 1)
                        _exit(0); /* the parent closed its end */
                res.ns = floor_pass(&f, b->proc_fd, &res.failures);
                if (write(res_fd, &res, sizeof res) != sizeof res)
                        _exit(1);
        }
}

static int floor_read(const FloorProc *fp, FloorResult *ret) {
        ssize_t n = read(fp->res_fd, ret, sizeof *ret);

        return n == sizeof *ret ? 0 : n < 0 ? negative_errno() : -EIO;
}

static void floor_stop(FloorProc *fp) {
        if (fp->cmd_fd >= 0)
                (void) close(fp->cmd_fd);
        if (fp->res_fd >= 0)
                (void) close(fp->res_fd);
        if (fp->pid > 0)
                (void) waitpid(fp->pid, NULL, 0);
        *fp = (FloorProc){ .cmd_fd = -EBADF, .res_fd = -EBADF };
}

static int floor_start(const Bench *b, const Shape *sh, FloorProc *ret) {
        int cmd[2], res[2];
        FloorResult first = {};
        int r;

        *ret = (FloorProc){ .cmd_fd = -EBADF, .res_fd = -EBADF };
        if (pipe2(cmd, O_CLOEXEC) < 0)
                return negative_errno();
        if (pipe2(res, O_CLOEXEC) < 0) {
                r = negative_errno();
                (void) close(cmd[0]), (void) close(cmd[1]);
                return r;
        }
        ret->pid = fork();
        if (ret->pid == 0) {
                (void) close(cmd[1]), (void) close(res[0]);
                floor_child(b, sh, cmd[0], res[1]);
        }
        (void) close(cmd[0]), (void) close(res[1]);
        ret->cmd_fd = cmd[1], ret->res_fd = res[0];
        if (ret->pid < 0)
                r = negative_errno();
        else
                r = floor_read(ret, &first);
        if (r >= 0)
                r = first.error;
        if (r < 0)
                floor_stop(ret);
        return r;
}

static int floor_pass_remote(const FloorProc *fp, FloorResult *ret) {
        if (write(fp->cmd_fd, "p", 1) != 1)
                return negative_errno();
        return floor_read(fp, ret);
}

/* ---- ticks */

/* One sampler under test, with its policy state and what its ticks measured. */
typedef struct Side {
        Tunables t; /* the bench's but for sample_refresh (its strings are the bench's) */
        Sampler *sampler;
        PolicyState *ps;
        uint64_t *ns, *plan_ns; /* a rep's tick and the plan in it, CPU ns */
        uint64_t first_ns; /* the priming tick */
        size_t n_tasks; /* of its last snapshot */
        unsigned n_threads;
        size_t n_demanding; /* its tasks with a demand > 0 */
        unsigned stale; /* busy shape: processes missing or at demand 0, summed over the reps */
} Side;

/* What every tick of a shape shares. */
typedef struct TickRun {
        const Bench *b;
        PolicyParams params;
        uint64_t now; /* synthetic: TICK_INTERVAL_USEC a rep */
        TraceWriter *w; /* the lazy sampler's recording */
} TickRun;

typedef struct Row {
        uint64_t floor_ns, full_ns, lazy_ns; /* medians */
        uint64_t plan_ns; /* median of the lazy ticks' plans */
        uint64_t first_full_ns, first_lazy_ns;
        uint64_t record_ns; /* median CPU time of trace_writer_tick() after the lazy tick */
        uint64_t record_bytes; /* its bytes over the measured ticks */
        size_t n_tasks[2]; /* full, lazy: of the last snapshot */
        unsigned n_threads[2];
        unsigned stale[2]; /* busy shape: process-ticks missing or at demand 0 */
        unsigned reps;
        unsigned failures;
} Row;

/* Made at b->nofile (its budget is half the soft limit at sampler_new()). */
static int side_open(const Bench *b, Side *side) {
        int r;

        r = sampler_new(b->proc_fd, &b->layout, b->topo, getpid(), &side->sampler);
        if (r < 0)
                return r;
        sampler_set_live(side->sampler, true); /* as the daemon's, but under --root */
        side->ps = policy_state_new(b->topo);
        return side->ps ? 0 : -ENOMEM;
}

static void side_close(Side *side) {
        side->sampler = sampler_free(side->sampler);
        side->ps = policy_state_free(side->ps);
}

/* The soft RLIMIT_NOFILE, within the hard one (0: left as it is). */
static void nofile_soft(rlim_t n) {
        struct rlimit rl;

        if (n == 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        rl.rlim_cur = MIN(n, rl.rlim_max);
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * One tick of side as the daemon's at run->now: sample, then plan. Its CPU time in ns in *ret_ns,
 * the plan's in *ret_plan_ns. Then, apart, recording it (the daemon's --record) when record is
 * set: *ret_record_ns.
 */
static int tick(const TickRun *run, Side *side, bool record, uint64_t *ret_ns,
                uint64_t *ret_plan_ns, uint64_t *ret_record_ns) {
        _cleanup_plan_ Plan *plan = NULL;
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        uint64_t t0 = clock_nsec(CLOCK_THREAD_CPUTIME_ID), t1;
        int r;

        r = sampler_sample(side->sampler, &side->t, NULL, run->now, &snap, &sys);
        t1 = clock_nsec(CLOCK_THREAD_CPUTIME_ID);
        if (r >= 0)
                r = policy_plan(side->ps, snap, run->b->topo, &run->params, run->now,
                                /* force_node_balance= */ false, &plan);
        *ret_ns = clock_nsec(CLOCK_THREAD_CPUTIME_ID) - t0;
        *ret_plan_ns = *ret_ns - (t1 - t0);
        if (r < 0)
                return r;
        side->n_tasks = snap->n_tasks;
        side->n_threads = sys->n_threads;
        side->n_demanding = 0;
        for (size_t i = 0; i < snap->n_tasks; i++)
                side->n_demanding += snap->tasks[i].demand_permyriad > 0;
        if (!record)
                return 0;
        t0 = clock_nsec(CLOCK_THREAD_CPUTIME_ID);
        r = trace_writer_tick(run->w, run->now, 0, snap, plan);
        *ret_record_ns = clock_nsec(CLOCK_THREAD_CPUTIME_ID) - t0;
        return r;
}

/* A recording in a temporary file, removed at once (the writer keeps it open). */
static int record_open(const Bench *b, TraceWriter **ret) {
        char path[] = "/tmp/bench-tick-record-XXXXXX";
        int fd = mkstemp(path), r;

        if (fd < 0)
                return negative_errno();
        close(fd);
        r = trace_writer_open(path,
                              &(TraceWriterOptions){ .max_size = UINT64_C(1) << 40,
                                                     .names = true,
                                                     .program = "bench-tick" },
                              ret);
        (void) unlink(path);
        if (r >= 0)
                r = trace_writer_topology(*ret, b->topo);
        if (r >= 0)
                r = trace_writer_config(*ret, "[daemon]\n");
        return r;
}

/* The full and the lazy sampler's tick, one after the other, at run->now, into rep k. */
static int tick_both(const TickRun *run, Side *full, Side *lazy, unsigned k,
                     uint64_t *ret_record_ns) {
        int r;

        r = tick(run, full, false, &full->ns[k], &full->plan_ns[k], NULL);
        if (r >= 0)
                r = tick(run, lazy, true, &lazy->ns[k], &lazy->plan_ns[k], ret_record_ns);
        return r;
}

/*
 * The reps: a floor pass, the interval (10 ms, a busy shape's 1 s) while the samplers' now
 * advances 1 s, a full tick, a lazy tick. Before them a priming tick of each, and a second (the
 * lazy sampler's first lazy one, whose recording writes every task whole) not counted.
 */
static int run_reps(TickRun *run, const Shape *sh, const FloorProc *fp, Side *full, Side *lazy,
                    uint64_t *floors, uint64_t *records, Row *row) {
        long sleep = sh->busy > 0 ? BUSY_REP_SLEEP_MS : REP_SLEEP_MS;
        unsigned busy = sh->busy > 0 ? sh->procs : 0;
        uint64_t plan_ns, record_ns, bytes0;
        FloorResult fr = {};
        int r;

        r = tick(run, full, false, &full->first_ns, &plan_ns, NULL);
        if (r >= 0)
                r = tick(run, lazy, true, &lazy->first_ns, &plan_ns, &record_ns);
        sleep_ms(sleep);
        run->now += TICK_INTERVAL_USEC;
        if (r >= 0) /* into rep 0, which the first rep overwrites */
                r = tick_both(run, full, lazy, 0, &record_ns);
        bytes0 = trace_writer_bytes(run->w);
        for (unsigned k = 0; k < row->reps && r >= 0 && !stop_requested; k++) {
                r = floor_pass_remote(fp, &fr);
                floors[k] = fr.ns;
                sleep_ms(sleep);
                run->now += TICK_INTERVAL_USEC;
                if (r >= 0)
                        r = tick_both(run, full, lazy, k, &records[k]);
                row->stale[0] += busy - (unsigned) MIN(full->n_demanding, busy);
                row->stale[1] += busy - (unsigned) MIN(lazy->n_demanding, busy);
        }
        if (r < 0)
                return r;
        if (stop_requested)
                return -EINTR;
        row->failures = fr.failures;
        row->record_bytes = trace_writer_bytes(run->w) - bytes0;
        return 0;
}

static int measure_ticks(const Bench *b, const Shape *sh, const Tunables *t, const FloorProc *fp,
                         unsigned reps, Row *row) {
        _cleanup_trace_writer_ TraceWriter *w = NULL;
        _cleanup_free_ uint64_t *v = calloc(6 * (size_t) reps, sizeof *v);
        Side full = { .t = *t }, lazy = { .t = *t };
        TickRun run = { .b = b, .now = now_usec() };
        int r;

        if (!v)
                return -ENOMEM;
        full.t.sample_refresh_usec = 0;
        full.ns = v, full.plan_ns = v + reps, lazy.ns = v + 2 * reps, lazy.plan_ns = v + 3 * reps;
        row->reps = reps;
        r = policy_params_from_tunables(t, b->topo, &run.params); /* once, as at a reload */
        if (r >= 0)
                r = record_open(b, &w);
        run.w = w;
        if (r >= 0)
                r = side_open(b, &full);
        if (r >= 0)
                r = side_open(b, &lazy);
        nofile_soft(RLIM_INFINITY); /* room for both budgets */
        if (r >= 0)
                r = run_reps(&run, sh, fp, &full, &lazy, v + 4 * reps, v + 5 * reps, row);
        side_close(&full);
        side_close(&lazy);
        nofile_soft(b->nofile);
        if (r < 0)
                return r;
        row->floor_ns = bench_median_u64(v + 4 * reps, reps);
        row->full_ns = bench_median_u64(full.ns, reps);
        row->lazy_ns = bench_median_u64(lazy.ns, reps);
        row->plan_ns = bench_median_u64(lazy.plan_ns, reps);
        row->record_ns = bench_median_u64(v + 5 * reps, reps);
        row->first_full_ns = full.first_ns;
        row->first_lazy_ns = lazy.first_ns;
        row->n_tasks[0] = full.n_tasks, row->n_tasks[1] = lazy.n_tasks;
        row->n_threads[0] = full.n_threads, row->n_threads[1] = lazy.n_threads;
        return 0;
}

static double ms(uint64_t ns) {
        return (double) ns / 1e6;
}

static double ratio(uint64_t a, uint64_t b) {
        return b > 0 ? (double) a / (double) b : 0.0;
}

static void print_row(const Shape *sh, const Row *row) {
        unsigned want = sh->procs * sh->threads;
        char label[32];

        shape_label(sh, label, sizeof label);
        printf("  %-13s %7u %9.2f %8.2f %8.2f %9.3f %10.3f %10.2f", label, want, ms(row->floor_ns),
               ms(row->full_ns), ms(row->lazy_ns), ratio(row->lazy_ns, row->full_ns),
               ratio(row->lazy_ns, row->floor_ns), ratio(row->full_ns, row->floor_ns));
        for (size_t i = 0; i < 2; i++)
                if (row->n_tasks[i] != sh->procs || row->n_threads[i] != want)
                        printf("  (%s sampled %zu tasks, %u threads!)", i == 0 ? "full" : "lazy",
                               row->n_tasks[i], row->n_threads[i]);
        if (row->failures)
                printf("  (%u floor reads failed)", row->failures);
        putchar('\n');
        if (sh->busy > 0)
                printf("  %-13s busy processes missing or at demand 0: lazy %u, full %u, of %u "
                       "(%u processes x %u ticks)\n",
                       "", row->stale[1], row->stale[0], sh->procs * row->reps, sh->procs,
                       row->reps);
        (void) fflush(stdout);
}

static void print_details(const Shape *sh, const Row *row) {
        char label[32];

        shape_label(sh, label, sizeof label);
        printf("  %-13s %7u %8.2f %10.2f %10.2f %9.3f %7.2f%% %7.1f\n", label,
               sh->procs * sh->threads, ms(row->plan_ns), ms(row->first_full_ns),
               ms(row->first_lazy_ns), ms(row->record_ns),
               100.0 * ratio(row->record_ns, row->lazy_ns),
               (double) row->record_bytes / (double) row->reps);
}

/* ---- the live daemon */

typedef struct DaemonRun {
        double cpu_percent; /* of one CPU, from DAEMON_FROM_MS to DAEMON_TO_MS */
        uint64_t rss_kb; /* at DAEMON_TO_MS */
        unsigned fds; /* open at DAEMON_TO_MS */
        unsigned log_lines; /* at log_level = warning: each a warning or an error */
} DaemonRun;

/* The "key:   N kB" value of a /proc status-like file; 0 if absent. */
static uint64_t kb_field(const char *file, const char *key) {
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        size_t n = strlen(key);
        char line[256];

        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, key, n) == 0)
                        return strtoull(line + n, NULL, 10);
        return 0;
}

typedef struct TempDir {
        char path[64];
        char conf[128], log[128], state[128];
} TempDir;

/* full: sample_refresh = 0, the full sampler; else the default, the lazy one. */
static int write_conf(const TempDir *d, const char *groups, bool full) {
        _cleanup_fclose_ FILE *f = fopen(d->conf, "we");

        if (!f)
                return negative_errno();
        fprintf(f,
                "[daemon]\ninterval = 1s\ndry_run = yes\nlog_level = warning\n%s"
                "state_directory = %s\n[manage]\ncgroups = %s\n",
                full ? "sample_refresh = 0\n" : "", d->state, groups);
        return fflush(f) == 0 ? 0 : -EIO;
}

static pid_t daemon_start(const TempDir *d) {
        const char *daemon = BUILD_DIR "/cgbalanced";
        struct rlimit rl = { .rlim_cur = DAEMON_NOFILE, .rlim_max = DAEMON_NOFILE };
        pid_t parent = getpid(), pid = fork();

        if (pid != 0)
                return pid < 0 ? negative_errno() : pid;
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
                _exit(127);
        bench_redirect(STDERR_FILENO, d->log, O_WRONLY | O_CREAT | O_EXCL);
        if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0 || setrlimit(RLIMIT_NOFILE, &rl) < 0)
                _exit(BENCH_EXIT_SETUP);
        (void) unsetenv("JOURNAL_STREAM"); /* its log to stderr, which is the file */
        execl(daemon, "cgbalanced", "--config", d->conf, (char *) NULL);
        fprintf(stderr, "bench-tick: exec %s: %m\n", daemon);
        _exit(127);
}

static void daemon_stop(pid_t pid) {
        (void) kill(pid, SIGTERM);
        for (int waited = 0; waited < 10 * 1000; waited += 10) {
                if (waitpid(pid, NULL, WNOHANG) != 0)
                        return;
                sleep_ms(10);
        }
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
}

/* Sleeps until ms after start (now_usec()); -EINTR if asked to stop, -ECHILD if pid exited. */
static int daemon_wait_until(pid_t pid, uint64_t start, long ms) {
        uint64_t until = start + (uint64_t) ms * 1000, now = now_usec();

        if (now < until)
                sleep_ms((long) ((until - now) / 1000));
        if (stop_requested)
                return -EINTR;
        return waitpid(pid, NULL, WNOHANG) == 0 ? 0 : -ECHILD;
}

/* Its CPU time (utime + stime) in usec, and when it was read. */
static int daemon_cpu(const Bench *b, pid_t pid, uint64_t *ret_cpu_usec, uint64_t *ret_when) {
        TaskStat st;
        int r;

        r = proc_task_stat_read_at(b->proc_fd, pid, 0, &st);
        if (r < 0)
                return r;
        *ret_when = now_usec();
        *ret_cpu_usec =
                (st.utime_ticks + st.stime_ticks) * USEC_PER_SEC / (uint64_t) sysconf(_SC_CLK_TCK);
        return 0;
}

static unsigned count_fds(pid_t pid) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        char path[64];
        unsigned n = 0;

        (void) snprintf(path, sizeof path, "/proc/%d/fd", (int) pid);
        d = opendir(path);
        while (d && (de = readdir(d)))
                n += de->d_name[0] != '.';
        return n;
}

/* The distinct lines the daemon logged over the runs (the first LOG_SEEN_MAX), shown once. */
#define LOG_SEEN_MAX 8
typedef struct LogSeen {
        char lines[LOG_SEEN_MAX][160];
        size_t n;
} LogSeen;

/* The lines of the log at path (UINT_MAX: unreadable), keeping in seen those not seen yet. */
static unsigned log_scan(const char *path, LogSeen *seen) {
        _cleanup_free_ char *text = NULL;
        unsigned n = 0;

        if (read_text_at(AT_FDCWD, path, DAEMON_LOG_MAX, &text, NULL) < 0)
                return UINT_MAX;
        for (const char *p = text; *p; n++) {
                size_t len = strcspn(p, "\n"), keep = MIN(len, sizeof seen->lines[0] - 1);
                bool known = false;

                for (size_t i = 0; i < seen->n && !known; i++)
                        known = strlen(seen->lines[i]) == keep &&
                                memcmp(seen->lines[i], p, keep) == 0;
                if (!known && seen->n < LOG_SEEN_MAX) {
                        memcpy(seen->lines[seen->n], p, keep);
                        seen->lines[seen->n++][keep] = '\0';
                }
                p += len + (p[len] == '\n');
        }
        return n;
}

/* The two readings, with the daemon running (r == 0 after each wait). */
static int daemon_sample(const Bench *b, pid_t pid, uint64_t start, DaemonRun *ret) {
        uint64_t cpu0, cpu1, t0, t1;
        char status[64];
        int r;

        r = daemon_wait_until(pid, start, DAEMON_FROM_MS);
        if (r >= 0)
                r = daemon_cpu(b, pid, &cpu0, &t0);
        if (r >= 0)
                r = daemon_wait_until(pid, start, DAEMON_TO_MS);
        if (r >= 0)
                r = daemon_cpu(b, pid, &cpu1, &t1);
        if (r < 0)
                return r;
        (void) snprintf(status, sizeof status, "/proc/%d/status", (int) pid);
        ret->cpu_percent = 100.0 * (double) (cpu1 - cpu0) / (double) (t1 - t0);
        ret->rss_kb = kb_field(status, "VmRSS:");
        ret->fds = count_fds(pid);
        return ret->rss_kb > 0 ? 0 : -EIO;
}

/* Runs the daemon on groups from its start to DAEMON_TO_MS; what it spent, and its log. */
static int daemon_measure(const Bench *b, const TempDir *d, const char *groups, bool full,
                          LogSeen *seen, DaemonRun *ret) {
        uint64_t start;
        pid_t pid;
        int r;

        r = write_conf(d, groups, full);
        if (r < 0)
                return r;
        (void) unlink(d->log); /* not the last run's lines */
        start = now_usec();
        pid = daemon_start(d);
        if (pid < 0)
                return pid;
        r = daemon_sample(b, pid, start, ret);
        if (r == -ECHILD) /* reaped: its pid is no longer its own */
                fprintf(stderr, "bench-tick: cgbalanced exited early\n");
        else
                daemon_stop(pid);
        ret->log_lines = log_scan(d->log, seen);
        return r;
}

static void tempdir_remove(TempDir *d) {
        _cleanup_closedir_ DIR *s = NULL;
        struct dirent *de;

        if (!d->path[0])
                return;
        s = opendir(d->state);
        while (s && (de = readdir(s)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void) unlinkat(dirfd(s), de->d_name, 0);
        (void) rmdir(d->state);
        (void) unlink(d->conf);
        (void) unlink(d->log);
        (void) rmdir(d->path);
        d->path[0] = '\0';
}

static int tempdir_make(TempDir *d) {
        (void) snprintf(d->path, sizeof d->path, "/tmp/bench-tick-XXXXXX");
        if (!mkdtemp(d->path)) {
                d->path[0] = '\0';
                return negative_errno();
        }
        (void) snprintf(d->conf, sizeof d->conf, "%s/cgbalance.conf", d->path);
        (void) snprintf(d->log, sizeof d->log, "%s/daemon.log", d->path);
        (void) snprintf(d->state, sizeof d->state, "%s/state", d->path);
        return 0;
}

/* A row: the lazy daemon beside the full one (NULL: not run, "-"). */
static void print_daemon(const char *label, unsigned threads, const DaemonRun *lazy,
                         const DaemonRun *full) {
        char cpu[16] = "-", ratio_text[16] = "-", rss[16] = "-", fds[16] = "-", lines[16] = "";

        if (full) {
                (void) snprintf(cpu, sizeof cpu, "%.1f", full->cpu_percent);
                if (full->cpu_percent > 0)
                        (void) snprintf(ratio_text, sizeof ratio_text, "%.3f",
                                        lazy->cpu_percent / full->cpu_percent);
                (void) snprintf(rss, sizeof rss, "%.1f", (double) full->rss_kb / 1024);
                (void) snprintf(fds, sizeof fds, "%u", full->fds);
                (void) snprintf(lines, sizeof lines, ", %u", full->log_lines);
        }
        printf("  %-13s %7u %9.1f %9s %9s %8.1f %8s %8u %8s   %u%s\n", label, threads,
               lazy->cpu_percent, cpu, ratio_text, (double) lazy->rss_kb / 1024, rss, lazy->fds,
               fds, lazy->log_lines, lines);
        (void) fflush(stdout);
}

/* The daemon managing groups, lazy and, with_full, full; a row headed label. */
static int measure_daemon(const Bench *b, const TempDir *d, const char *groups, const char *label,
                          unsigned threads, bool with_full, LogSeen *seen) {
        DaemonRun lazy = {}, full = {};
        int r;

        r = daemon_measure(b, d, groups, false, seen, &lazy);
        if (r >= 0 && with_full)
                r = daemon_measure(b, d, groups, true, seen, &full);
        if (r >= 0)
                print_daemon(label, threads, &lazy, with_full ? &full : NULL);
        return r;
}

/* ---- main */

/* The hard limit up to NOFILE_WANT + NOFILE_SPARE where allowed, and the soft one at
 * NOFILE_WANT or, where the hard one is lower, NOFILE_SPARE under it. */
static void raise_nofile(Bench *b) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        rl.rlim_max = MAX(rl.rlim_max, (rlim_t) NOFILE_WANT + NOFILE_SPARE);
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        b->nofile = rl.rlim_max > 2 * NOFILE_SPARE ? MIN(rl.rlim_max - NOFILE_SPARE, NOFILE_WANT)
                                                   : rl.rlim_max;
        nofile_soft(b->nofile);
}

static int run_shape(Bench *b, const Shape *sh, const Tunables *t, unsigned reps, Row *row) {
        FloorProc fp;
        int r;

        r = shape_spawn(b, sh);
        if (r >= 0)
                r = floor_start(b, sh, &fp);
        if (r < 0)
                return r;
        r = measure_ticks(b, sh, t, &fp, reps, row);
        floor_stop(&fp);
        return r;
}

#define SHAPES_MAX 16

/* What to run: the shapes ticked, how many reps each, and the shapes the daemon runs on. */
typedef struct Options {
        Shape shapes[SHAPES_MAX];
        size_t n_shapes;
        unsigned reps;
        Shape daemon_shapes[SHAPES_MAX];
        size_t n_daemon_shapes;
} Options;

static int run_ticks(Bench *b, const Tunables *t, const Options *o) {
        Row rows[SHAPES_MAX] = {};
        size_t done = 0;
        int r = 0;

        printf("\ntick: CPU ms of sampler_sample() + policy_plan(), median of %u reps; floor: the "
               "full sampler's reads, bare\n"
               "full: sample_refresh = 0 (every thread read every tick); lazy: sample_refresh = "
               "%" PRIu64 " s (the default)\n"
               "each rep: a floor pass, %d ms (a busy shape's: %d ms), a full tick, a lazy tick; "
               "the samplers' now advances 1 s a rep,\nthe daemon's default interval, so the lazy "
               "sampler's refresh of cold threads costs a tick as at 1 s\n",
               o->reps, t->sample_refresh_usec / USEC_PER_SEC, REP_SLEEP_MS, BUSY_REP_SLEEP_MS);
        printf("  %-13s %7s %9s %8s %8s %9s %10s %10s\n", "shape", "threads", "floor ms", "full ms",
               "lazy ms", "lazy/full", "lazy/floor", "full/floor");
        for (; done < o->n_shapes && r >= 0; done++) {
                r = run_shape(b, &o->shapes[done], t, o->reps, &rows[done]);
                if (r >= 0)
                        print_row(&o->shapes[done], &rows[done]);
                shape_kill(b);
        }
        if (r < 0)
                return r;
        printf("\nplan: CPU ms of policy_plan() in the lazy tick; first: the priming tick of each "
               "sampler (every file opened);\nrecord: CPU ms of trace_writer_tick() after the lazy "
               "tick, its share of that tick, and bytes a tick (tasks are processes)\n");
        printf("  %-13s %7s %8s %10s %10s %9s %8s %7s\n", "shape", "threads", "plan ms",
               "first full", "first lazy", "record ms", "of tick", "bytes");
        for (size_t i = 0; i < done; i++)
                print_details(&o->shapes[i], &rows[i]);
        return 0;
}

static int run_daemon(Bench *b, const Options *o) {
        LogSeen seen = {};
        char none[160];
        TempDir d = {};
        int r;

        printf("\ndaemon: %s/cgbalanced, interval 1s, dry run, RLIMIT_NOFILE %u (soft and hard); "
               "lazy: sample_refresh as default,\nfull: sample_refresh = 0; %%CPU: its utime + "
               "stime from %d to %d s after its start, of one CPU; RSS (MiB) and fds\nopen at %d "
               "s; log: its lines at log_level = warning, each a warning or an error (lazy, "
               "full)\n",
               BUILD_DIR, DAEMON_NOFILE, DAEMON_FROM_MS / 1000, DAEMON_TO_MS / 1000,
               DAEMON_TO_MS / 1000);
        printf("  %-13s %7s %9s %9s %9s %8s %8s %8s %8s   %s\n", "shape", "threads", "lazy %CPU",
               "full %CPU", "lazy/full", "lazy RSS", "full RSS", "lazy fds", "full fds", "log");
        r = tempdir_make(&d);
        if (r >= 0) { /* the daemon managing nothing: lazy and full are the same */
                (void) snprintf(none, sizeof none, "%s-none", b->group);
                r = measure_daemon(b, &d, none, "(none)", 0, /* with_full= */ false, &seen);
        }
        for (size_t i = 0; i < o->n_daemon_shapes && r >= 0; i++) {
                const Shape *sh = &o->daemon_shapes[i];
                char label[32];

                shape_label(sh, label, sizeof label);
                r = shape_spawn(b, sh);
                if (r >= 0)
                        r = measure_daemon(b, &d, b->group, label, sh->procs * sh->threads,
                                           /* with_full= */ true, &seen);
                shape_kill(b);
        }
        tempdir_remove(&d);
        for (size_t i = 0; i < seen.n; i++)
                printf("%s  %s\n", i == 0 ? "the lines logged (each text once):\n" : "",
                       seen.lines[i]);
        return r;
}

static unsigned shapes_max(const Shape *s, size_t n, bool threads) {
        unsigned max = 0;

        for (size_t i = 0; i < n; i++)
                max = MAX(max, threads ? s[i].procs * s[i].threads : s[i].procs);
        return max;
}

/* The kernel's limits on tasks, for the largest shape with room to spare. */
static int raise_task_limits(Bench *b, const Options *o) {
        uint64_t want = 2 * (uint64_t) MAX(shapes_max(o->shapes, o->n_shapes, true),
                                           shapes_max(o->daemon_shapes, o->n_daemon_shapes, true));
        int r;

        b->pid_max.path = "/proc/sys/kernel/pid_max";
        b->threads_max.path = "/proc/sys/kernel/threads-max";
        r = sysctl_raise(&b->pid_max, MIN(want, PID_MAX_LIMIT));
        if (r >= 0)
                r = sysctl_raise(&b->threads_max, want);
        return r;
}

static int setup(Bench *b, const Options *o, Tunables *t) {
        size_t max = MAX(shapes_max(o->shapes, o->n_shapes, false),
                         shapes_max(o->daemon_shapes, o->n_daemon_shapes, false));
        int r;

        b->kids = calloc(max, sizeof *b->kids);
        if (!b->kids)
                return -ENOMEM;
        b->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b->proc_fd < 0)
                return negative_errno();
        r = topology_new_from_system(&b->topo);
        if (r < 0)
                return r;
        r = raise_task_limits(b, o);
        if (r < 0)
                return r;
        r = tunables_defaults(t);
        if (r < 0)
                return r;
        for (char **g = t->cgroups; g && *g; g++)
                free(*g);
        free(t->cgroups);
        t->cgroups = calloc(2, sizeof *t->cgroups);
        if (!t->cgroups)
                return -ENOMEM;
        t->cgroups[0] = strdup(b->group);
        return t->cgroups[0] ? 0 : -ENOMEM;
}

/* "PROCSxTHREADS" or "PROCSxTHREADSbBUSY" (BUSY threads of each process spin). */
static int parse_shape(const char *s, Shape *ret) {
        Shape sh = {};
        int n = 0, m = 0;

        if (sscanf(s, "%ux%u%n", &sh.procs, &sh.threads, &n) != 2)
                return -EINVAL;
        if (s[n] == 'b' && sscanf(s + n, "b%u%n", &sh.busy, &m) == 1 && sh.busy > 0)
                n += m;
        if (s[n] != '\0' || sh.procs == 0 || sh.threads == 0 || sh.busy > sh.threads)
                return -EINVAL;
        *ret = sh;
        return 0;
}

/*
 * Without shapes: the seven above ticked, then the daemon at 1 x 10000, 100 x 100b2 and
 * 1000 x 100. Else only the shapes given as PROCSxTHREADS[bBUSY] are ticked, and with -d the
 * daemon runs on them too. -t REPS: reps per shape (REPS). To profile one: perf record -g
 * bench-tick -t 200 1000x1.
 */
static int parse_argv(int argc, char *argv[], Options *o) {
        bool daemon = false;
        int c;

        *o = (Options){ .reps = REPS };
        while ((c = getopt(argc, argv, "dt:")) >= 0) {
                if (c == 'd')
                        daemon = true;
                else if (c != 't' || sscanf(optarg, "%u", &o->reps) != 1 || o->reps == 0)
                        return -EINVAL;
        }
        for (int i = optind; i < argc; i++) {
                if (o->n_shapes == ELEMENTSOF(o->shapes) ||
                    parse_shape(argv[i], &o->shapes[o->n_shapes]) < 0)
                        return -EINVAL;
                o->n_shapes++;
        }
        if (o->n_shapes == 0) {
                memcpy(o->shapes, shapes, sizeof shapes);
                o->n_shapes = ELEMENTSOF(shapes);
                memcpy(o->daemon_shapes, daemon_shapes, sizeof daemon_shapes);
                o->n_daemon_shapes = ELEMENTSOF(daemon_shapes);
        } else if (daemon) {
                memcpy(o->daemon_shapes, o->shapes, o->n_shapes * sizeof *o->shapes);
                o->n_daemon_shapes = o->n_shapes;
        }
        return 0;
}

/* Everything the run made or changed, put back: also after a failure or SIGINT. */
static void teardown(Bench *b, Tunables *t) {
        shape_kill(b);
        group_remove(b);
        sysctl_restore(&b->pid_max);
        sysctl_restore(&b->threads_max);
        tunables_free(t);
        topology_free(b->topo);
        if (b->proc_fd >= 0)
                (void) close(b->proc_fd);
        free(b->kids);
}

int main(int argc, char *argv[]) {
        struct sigaction sa = { .sa_handler = on_stop };
        Bench b = { .proc_fd = -EBADF };
        Tunables t = {};
        Options o;
        int r;

        if (parse_argv(argc, argv, &o) < 0) {
                fprintf(stderr, "usage: bench-tick [-t REPS] [-d] [PROCSxTHREADS[bBUSY]...]\n");
                return 2;
        }
        if (geteuid() != 0) {
                printf("bench-tick: skipped, needs root to make a cgroup and move processes "
                       "into it\n");
                return 0;
        }
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) signal(SIGPIPE, SIG_IGN); /* a child gone is an error to clean up after */
        raise_nofile(&b);
        r = group_make(&b);
        if (r == -EOPNOTSUPP) {
                printf("bench-tick: skipped, no cpu controller (cgroup mode %s)\n",
                       cgroup_mode_to_string(b.layout.mode));
                return 0;
        }
        if (r >= 0)
                r = setup(&b, &o, &t);
        if (r >= 0)
                printf("bench-tick: %u CPUs, %u nodes, cgroups %s, group %s\n"
                       "fd budget: %u per-thread files kept open by each sampler (half of "
                       "RLIMIT_NOFILE), the rest opened each tick, by the samplers and the floor "
                       "alike\nbusy shapes: the group capped at %.1f CPUs (its CPU quota) while "
                       "their spinners run\n",
                       topology_n_cpus(b.topo), topology_n_nodes(b.topo),
                       cgroup_mode_to_string(b.layout.mode), b.group, fd_budget(),
                       (double) topology_n_cpus(b.topo) - 0.5);
        if (r >= 0 && o.n_shapes > 0)
                r = run_ticks(&b, &t, &o);
        if (r >= 0 && o.n_daemon_shapes > 0)
                r = run_daemon(&b, &o);
        if (r < 0)
                fprintf(stderr, "bench-tick: %s\n", strerror(-r));
        teardown(&b, &t);
        return r < 0 ? 1 : 0;
}
