/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What one tick of the daemon costs, and the daemon's memory, with 1,000 and 10,000 managed
 * threads. Root only: it makes a real cgroup, cgbalance.slice/bench-tick-<pid>, and moves child
 * processes into it; without root it says why and exits 0.
 *
 * The managed threads are parked (asleep in pause()), in child processes of four shapes:
 *   10 x 100     ten processes of 100 threads         1,000 threads
 *   1000 x 1     1,000 single-threaded processes      1,000 threads
 *   10 x 1000    ten processes of 1,000 threads      10,000 threads
 *   1000 x 10    1,000 processes of 10 threads       10,000 threads
 *
 * Tick: CPU time (CLOCK_THREAD_CPUTIME_ID: user + kernel) of sampler_sample() + policy_plan() on
 * a real Sampler and PolicyState, the live layout and topology, tunables managing that group;
 * no actuator (the tasks are parked, there is nothing to act on). Median of REPS ticks after a
 * priming one (which opens the kept fds; shown apart as "first").
 *
 * Floor, measured in the same run, interleaved with the ticks: the cheapest honest way to read
 * what the sampler reads each tick, with no parsing and no bookkeeping. Files are read with one
 * pread() of an fd opened before the timing: each thread's task/TID/stat and schedstat; each
 * multi-threaded process's task/ directory (lseek + getdents64); the group's cgroup.procs (on
 * cgroup v1 opened each time: a kept fd would be served a list cached for a second), usage,
 * weight and cpu.pressure; /proc/stat and /proc/pressure/{cpu,io,memory}; and each process's
 * affinity with sched_getaffinity(), as the sampler reads it on a live /proc. The per-thread
 * files are kept open within the sampler's fd budget (half of RLIMIT_NOFILE); past it the floor,
 * as the sampler, opens, reads and closes them each tick. The floor runs in a child process of
 * its own, with the same limit. The sampler's walk of the cgroup tree is not in the floor: it is
 * how it finds the group.
 *
 * Recording: after each tick, apart from its time, trace_writer_tick() of its snapshot and plan
 * into a temporary file, as --record does (cgbalance-record(5)): its CPU time, its share of the
 * tick's, and the bytes a tick adds once every task has been written whole (tasks are processes:
 * a process's threads are one record).
 *
 * Memory: build/cgbalanced, run on a temporary config managing the group (dry run, 100 ms tick)
 * at both 10,000-thread shapes, after DAEMON_TICKS ticks past the priming one: VmRSS and VmHWM of
 * its /proc/PID/status, against the same daemon managing nothing (a group glob that matches none).
 * Also the slab memory freed when it exits: kernel memory the kept fds hold, not in its RSS (from
 * the system-wide Slab: of /proc/meminfo, so roughly).
 *
 * A measurement, not a test: exits 0 unless the setup fails. Everything it made (children, the
 * group, the slice if it made it, the temporary directory) is removed at the end, also on a
 * failure or SIGINT/SIGTERM.
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

#include "cgroup-tree.h"
#include "cgroup.h"
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
#define DAEMON_TICKS 5
#define STACK_BYTES (64u * 1024u)
/* The sampler keeps 2 fds a thread within half the soft limit: 10,000 threads need 40,000. */
#define NOFILE_WANT 65536u
#define READ_BUF_SIZE (64u * 1024u)

typedef struct Shape {
        unsigned procs, threads; /* threads per process, the main one included */
} Shape;

static const Shape shapes[] = { { 10, 100 }, { 1000, 1 }, { 10, 1000 }, { 1000, 10 } };

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig) {
        (void) sig;
        stop_requested = 1;
}

/* ---- the group and its children */

typedef struct Bench {
        CgroupLayout layout;
        char group[128];
        bool group_made, slice_existed;
        pid_t *kids;
        size_t n_kids;
        int proc_fd;
        Topology *topo;
} Bench;

static void *park(void *arg) {
        (void) arg;
        for (;;)
                (void) pause();
        return NULL;
}

/* A managed process: threads - 1 parked threads and its main one, until killed. */
static _Noreturn void child_main(int ready_fd, pid_t parent, unsigned threads) {
        pthread_attr_t attr;
        char c = 'R';

        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(1);
        if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, STACK_BYTES) != 0)
                c = 'E';
        for (unsigned i = 1; c == 'R' && i < threads; i++) {
                pthread_t t;

                if (pthread_create(&t, &attr, park, NULL) != 0)
                        c = 'E';
        }
        if (write(ready_fd, &c, 1) != 1)
                _exit(1);
        for (;;)
                (void) pause();
}

/* Waits for n children to say they are ready ('R'); -EIO if one could not start its threads. */
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

/* Forks sh's processes, moves each into the group, waits until all their threads run. */
static int kids_spawn(Bench *b, const Shape *sh) {
        _cleanup_close_ int rd = -EBADF, wr = -EBADF;
        int fds[2], r;

        if (pipe2(fds, O_CLOEXEC) < 0)
                return negative_errno();
        rd = fds[0], wr = fds[1];
        for (unsigned i = 0; i < sh->procs; i++) {
                pid_t parent = getpid(), pid = fork();

                if (pid < 0)
                        return negative_errno();
                if (pid == 0)
                        child_main(wr, parent, sh->threads);
                b->kids[b->n_kids++] = pid;
                r = cgroup_attach_pid(&b->layout, b->group, pid);
                if (r < 0)
                        return r;
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
        FloorResult first;
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

typedef struct Row {
        uint64_t floor_ns, tick_ns, plan_ns, first_ns; /* medians but first_ns */
        uint64_t record_ns; /* median CPU time of trace_writer_tick() after the tick */
        uint64_t record_bytes; /* its bytes over the measured ticks */
        unsigned reps;
        size_t n_tasks;
        unsigned n_threads;
        unsigned failures;
} Row;

/* One tick as the daemon's: sample, then plan. CPU time in ns; *ret_plan_ns that of the plan.
 * Then, apart, recording it (the daemon's --record) into w: *ret_record_ns. */
static int tick(Sampler *s, PolicyState *ps, const Bench *b, const Tunables *t,
                const PolicyParams *params, TraceWriter *w, Row *row, uint64_t *ret_ns,
                uint64_t *ret_plan_ns, uint64_t *ret_record_ns) {
        _cleanup_plan_ Plan *plan = NULL;
        const PolicySnapshot *snap;
        const SamplerSystem *sys;
        uint64_t now = now_usec(), t0 = clock_nsec(CLOCK_THREAD_CPUTIME_ID), t1;
        int r;

        r = sampler_sample(s, t, NULL, now, &snap, &sys);
        t1 = clock_nsec(CLOCK_THREAD_CPUTIME_ID);
        if (r >= 0)
                r = policy_plan(ps, snap, b->topo, params, now, /* force_node_balance= */ false,
                                &plan);
        *ret_ns = clock_nsec(CLOCK_THREAD_CPUTIME_ID) - t0;
        *ret_plan_ns = *ret_ns - (t1 - t0);
        if (r < 0)
                return r;
        t0 = clock_nsec(CLOCK_THREAD_CPUTIME_ID);
        r = trace_writer_tick(w, now, 0, snap, plan);
        *ret_record_ns = clock_nsec(CLOCK_THREAD_CPUTIME_ID) - t0;
        if (r < 0)
                return r;
        row->n_tasks = snap->n_tasks;
        row->n_threads = sys->n_threads;
        return 0;
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

static int measure_ticks(const Bench *b, const Tunables *t, const FloorProc *fp, unsigned reps,
                         Row *row) {
        _cleanup_sampler_ Sampler *s = NULL;
        _cleanup_policy_state_ PolicyState *ps = NULL;
        _cleanup_trace_writer_ TraceWriter *w = NULL;
        _cleanup_free_ uint64_t *v = calloc(4 * (size_t) reps, sizeof *v);
        uint64_t *floors, *ticks, *plans, *records, plan_ns, record_ns, bytes0;
        FloorResult fr = {};
        PolicyParams params;
        int r;

        if (!v)
                return -ENOMEM;
        r = policy_params_from_tunables(t, b->topo, &params); /* once, as at a reload */
        if (r >= 0)
                r = record_open(b, &w);
        if (r < 0)
                return r;
        floors = v, ticks = v + reps, plans = v + 2 * reps, records = v + 3 * reps;
        r = sampler_new(b->proc_fd, &b->layout, b->topo, getpid(), &s);
        if (r < 0)
                return r;
        sampler_set_live(s, true); /* as the daemon's, but under --root */
        ps = policy_state_new(b->topo);
        if (!ps)
                return -ENOMEM;
        r = tick(s, ps, b, t, &params, w, row, &row->first_ns, &plan_ns, &record_ns);
        /* The first recorded tick writes every task whole (a priming one, not counted). */
        if (r >= 0)
                r = tick(s, ps, b, t, &params, w, row, &ticks[0], &plans[0], &record_ns);
        bytes0 = trace_writer_bytes(w);
        for (unsigned k = 0; k < reps && r >= 0 && !stop_requested; k++) {
                r = floor_pass_remote(fp, &fr);
                floors[k] = fr.ns;
                sleep_ms(10); /* an interval for the deltas */
                if (r >= 0)
                        r = tick(s, ps, b, t, &params, w, row, &ticks[k], &plans[k], &records[k]);
        }
        if (r < 0)
                return r;
        if (stop_requested)
                return -EINTR;
        row->failures = fr.failures;
        row->floor_ns = bench_median_u64(floors, reps);
        row->tick_ns = bench_median_u64(ticks, reps);
        row->plan_ns = bench_median_u64(plans, reps);
        row->record_ns = bench_median_u64(records, reps);
        row->record_bytes = trace_writer_bytes(w) - bytes0;
        row->reps = reps;
        return 0;
}

/* the measured ticks the bytes were written over */
#define REPS_BYTES(row) ((double) (row)->reps)

static double ms(uint64_t ns) {
        return (double) ns / 1e6;
}

static void print_row(const Shape *sh, const Row *row) {
        unsigned want = sh->procs * sh->threads;

        printf("  %4u x %-4u %7u %9.2f %8.2f %7.2f %8.2f %9.2f %9.3f %7.2f%% %7.1f", sh->procs,
               sh->threads, want, ms(row->floor_ns), ms(row->tick_ns),
               (double) row->tick_ns / (double) row->floor_ns, ms(row->plan_ns), ms(row->first_ns),
               ms(row->record_ns), 100.0 * (double) row->record_ns / (double) row->tick_ns,
               (double) row->record_bytes / REPS_BYTES(row));
        if (row->n_tasks != sh->procs || row->n_threads != want)
                printf("  (sampled %zu tasks, %u threads!)", row->n_tasks, row->n_threads);
        if (row->failures)
                printf("  (%u floor reads failed)", row->failures);
        putchar('\n');
        (void) fflush(stdout);
}

/* ---- the daemon's memory */

typedef struct DaemonMem {
        uint64_t rss_kb, hwm_kb;
        int64_t slab_freed_kb; /* Slab before SIGTERM minus after its exit */
} DaemonMem;

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

static char *read_text(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t len = 0;

        if (!f || getdelim(&buf, &len, '\0', f) < 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

typedef struct TempDir {
        char path[64];
        char conf[128], log[128], state[128];
} TempDir;

static int write_conf(const TempDir *d, const char *groups) {
        _cleanup_fclose_ FILE *f = fopen(d->conf, "we");

        if (!f)
                return negative_errno();
        fprintf(f,
                "[daemon]\ninterval = 100ms\ndry_run = yes\nlog_level = debug\n"
                "state_directory = %s\n[manage]\ncgroups = %s\n",
                d->state, groups);
        return fflush(f) == 0 ? 0 : -EIO;
}

static pid_t daemon_start(const TempDir *d) {
        const char *daemon = BUILD_DIR "/cgbalanced";
        pid_t parent = getpid(), pid = fork();
        int fd;

        if (pid != 0)
                return pid < 0 ? negative_errno() : pid;
        (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
                _exit(127);
        fd = open(d->log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
                _exit(127);
        (void) unsetenv("JOURNAL_STREAM"); /* its log to stderr, which is the file */
        execl(daemon, "cgbalanced", "--config", d->conf, (char *) NULL);
        fprintf(stderr, "bench-tick: exec %s: %m\n", daemon);
        _exit(127);
}

/* Waits until the daemon's log has its tick n (it logs each at debug); false if it exited or
 * took over a minute. */
static bool daemon_wait_tick(const TempDir *d, pid_t pid, unsigned n) {
        char what[32];

        (void) snprintf(what, sizeof what, "tick %u:", n);
        for (int waited = 0; waited < 60 * 1000 && !stop_requested; waited += 50) {
                _cleanup_free_ char *text = read_text(d->log);

                if (text && strstr(text, what))
                        return true;
                if (waitpid(pid, NULL, WNOHANG) != 0)
                        return false;
                sleep_ms(50);
        }
        return false;
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

/* Runs the daemon on groups until DAEMON_TICKS ticks past the priming one; its memory then. */
static int daemon_measure(const TempDir *d, const char *groups, DaemonMem *ret) {
        char status[64];
        uint64_t slab;
        pid_t pid;
        int r;

        r = write_conf(d, groups);
        if (r < 0)
                return r;
        (void) unlink(d->log); /* not the last run's ticks */
        pid = daemon_start(d);
        if (pid < 0)
                return pid;
        if (!daemon_wait_tick(d, pid, DAEMON_TICKS + 1)) {
                daemon_stop(pid);
                return stop_requested ? -EINTR : -ETIMEDOUT;
        }
        (void) snprintf(status, sizeof status, "/proc/%d/status", (int) pid);
        ret->rss_kb = kb_field(status, "VmRSS:");
        ret->hwm_kb = kb_field(status, "VmHWM:");
        slab = kb_field("/proc/meminfo", "Slab:");
        daemon_stop(pid);
        ret->slab_freed_kb = (int64_t) slab - (int64_t) kb_field("/proc/meminfo", "Slab:");
        return ret->rss_kb > 0 ? 0 : -EIO;
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

/* The idle daemon (managing nothing) once, then the daemon on the group at this shape. */
static int measure_daemon(const Bench *b, const Shape *sh, const TempDir *d, DaemonMem *idle) {
        char none[160];
        DaemonMem m;
        int r;

        if (idle->rss_kb == 0) {
                (void) snprintf(none, sizeof none, "%s-none", b->group);
                r = daemon_measure(d, none, idle);
                if (r < 0)
                        return r;
                printf("  %-11s %7u %9.1f %8.1f %7s %12.1f\n", "(none)", 0u,
                       (double) idle->rss_kb / 1024, (double) idle->hwm_kb / 1024, "1.00",
                       (double) idle->slab_freed_kb / 1024);
        }
        r = daemon_measure(d, b->group, &m);
        if (r < 0)
                return r;
        printf("  %4u x %-4u %7u %9.1f %8.1f %7.2f %12.1f\n", sh->procs, sh->threads,
               sh->procs * sh->threads, (double) m.rss_kb / 1024, (double) m.hwm_kb / 1024,
               (double) m.rss_kb / (double) idle->rss_kb, (double) m.slab_freed_kb / 1024);
        (void) fflush(stdout);
        return 0;
}

/* ---- main */

/* As the daemon does (soft to hard), and the hard limit up to a service's where allowed. */
static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        rl.rlim_cur = rl.rlim_max = MAX(rl.rlim_max, (rlim_t) NOFILE_WANT);
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0 || getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return;
        rl.rlim_cur = rl.rlim_max;
        (void) setrlimit(RLIMIT_NOFILE, &rl);
}

static int run_shape(Bench *b, const Shape *sh, const Tunables *t, unsigned reps, Row *row) {
        FloorProc fp;
        int r;

        r = kids_spawn(b, sh);
        if (r >= 0)
                r = floor_start(b, sh, &fp);
        if (r < 0)
                return r;
        r = measure_ticks(b, t, &fp, reps, row);
        floor_stop(&fp);
        return r;
}

/* What to run: the shapes, how many ticks each, and whether to measure the daemon. */
typedef struct Options {
        Shape shapes[16];
        size_t n_shapes;
        unsigned reps;
        bool daemon;
} Options;

static int run_ticks(Bench *b, const Tunables *t, const Options *o) {
        int r = 0;

        printf("tick: CPU ms of sampler_sample() + policy_plan(), median of %u; floor: the same "
               "reads, bare\n",
               o->reps);
        printf("recording: CPU ms of trace_writer_tick() after the tick, its share of the tick, "
               "and bytes a tick (tasks are processes)\n");
        printf("  %-11s %7s %9s %8s %7s %8s %9s %9s %8s %7s\n", "shape", "threads", "floor ms",
               "tick ms", "ratio", "plan ms", "first ms", "record ms", "of tick", "bytes");
        for (size_t i = 0; i < o->n_shapes && r >= 0; i++) {
                Row row = {};

                r = run_shape(b, &o->shapes[i], t, o->reps, &row);
                if (r >= 0)
                        print_row(&o->shapes[i], &row);
                kids_kill(b);
        }
        return r;
}

static int run_daemon(Bench *b, const Options *o) {
        DaemonMem idle = {};
        TempDir d = {};
        int r;

        printf("\ndaemon memory after %d ticks (MiB); ratio: RSS to the daemon managing nothing\n",
               DAEMON_TICKS);
        printf("  %-11s %7s %9s %8s %7s %12s\n", "shape", "threads", "VmRSS", "VmHWM", "ratio",
               "slab freed");
        r = tempdir_make(&d);
        for (size_t i = 0; i < o->n_shapes && r >= 0; i++) {
                if (o->shapes[i].procs * o->shapes[i].threads < 10000)
                        continue;
                r = kids_spawn(b, &o->shapes[i]);
                if (r >= 0)
                        r = measure_daemon(b, &o->shapes[i], &d, &idle);
                kids_kill(b);
        }
        tempdir_remove(&d);
        return r;
}

static int setup(Bench *b, const Options *o, Tunables *t) {
        size_t max = 0;
        int r;

        for (size_t i = 0; i < o->n_shapes; i++)
                max = MAX(max, o->shapes[i].procs);
        b->kids = calloc(max, sizeof *b->kids);
        if (!b->kids)
                return -ENOMEM;
        b->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b->proc_fd < 0)
                return negative_errno();
        r = topology_new_from_system(&b->topo);
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

/*
 * Without shapes: the four above, then the daemon. Else only the shapes given as PROCSxTHREADS,
 * no daemon. -t TICKS: ticks per shape (REPS). To profile one: perf record -g bench-tick -t 200
 * 1000x1.
 */
static int parse_argv(int argc, char *argv[], Options *o) {
        int c;

        *o = (Options){ .reps = REPS, .daemon = true };
        while ((c = getopt(argc, argv, "t:")) >= 0) {
                if (c != 't' || sscanf(optarg, "%u", &o->reps) != 1 || o->reps == 0)
                        return -EINVAL;
        }
        for (int i = optind; i < argc; i++) {
                Shape *sh = &o->shapes[o->n_shapes];
                char end;

                if (o->n_shapes == ELEMENTSOF(o->shapes) ||
                    sscanf(argv[i], "%ux%u%c", &sh->procs, &sh->threads, &end) != 2 ||
                    sh->procs == 0 || sh->threads == 0)
                        return -EINVAL;
                o->n_shapes++;
        }
        o->daemon = o->n_shapes == 0;
        if (o->n_shapes == 0) {
                memcpy(o->shapes, shapes, sizeof shapes);
                o->n_shapes = ELEMENTSOF(shapes);
        }
        return 0;
}

int main(int argc, char *argv[]) {
        struct sigaction sa = { .sa_handler = on_stop };
        Bench b = { .proc_fd = -EBADF };
        Tunables t = {};
        Options o;
        int r;

        if (parse_argv(argc, argv, &o) < 0) {
                fprintf(stderr, "usage: bench-tick [-t TICKS] [PROCSxTHREADS...]\n");
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
        raise_nofile();
        r = group_make(&b);
        if (r == -EOPNOTSUPP) {
                printf("bench-tick: skipped, no cpu controller (cgroup mode %s)\n",
                       cgroup_mode_to_string(b.layout.mode));
                return 0;
        }
        if (r >= 0)
                r = setup(&b, &o, &t);
        if (r >= 0) {
                printf("bench-tick: %u CPUs, %u nodes, cgroups %s, group %s\n"
                       "fd budget: %u per-thread files kept open (half of RLIMIT_NOFILE), "
                       "the rest opened each tick, by the sampler and the floor alike\n",
                       topology_n_cpus(b.topo), topology_n_nodes(b.topo),
                       cgroup_mode_to_string(b.layout.mode), b.group, fd_budget());
                r = run_ticks(&b, &t, &o);
        }
        if (r >= 0 && o.daemon)
                r = run_daemon(&b, &o);
        if (r < 0)
                fprintf(stderr, "bench-tick: %s\n", strerror(-r));
        kids_kill(&b);
        group_remove(&b);
        tunables_free(&t);
        topology_free(b.topo);
        if (b.proc_fd >= 0)
                (void) close(b.proc_fd);
        free(b.kids);
        return r < 0 ? 1 : 0;
}
