/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-levers.h"
#include "cgroup-tree.h"
#include "clock.h"
#include "log.h"
#include "macro.h"
#include "proc.h"
#include "utf8.h"

/* ---- per-task state kept between samples */

typedef struct ThreadState {
        pid_t tid;
        uint64_t starttime_ticks; /* with tid, the thread's identity where no fd is kept */
        int stat_fd, sched_fd; /* kept open for pread (-EBADF: read by path) */
        bool no_schedstat; /* its schedstat file is missing: demand falls back to util */
        bool has_prev; /* the counters below are from its last reading */
        bool had_runwait; /* and runwait_ns was measured then */
        bool alive; /* its last reading found it not a zombie */
        bool hot; /* it ran lately: read every tick (lazy), its fds kept */
        unsigned idle_reads; /* readings in a row it did not run; at COOL_AFTER_READS it cools */
        unsigned read_gen; /* the sample that last read it (0: never) */
        uint64_t read_usec; /* when, staggered (a cold thread is due again sample_refresh on) */
        uint64_t cpu_ticks; /* utime + stime */
        uint64_t run_ns; /* schedstat run */
        uint64_t runwait_ns; /* schedstat run + wait */
        uint64_t wait_ns, timeslices; /* schedstat wait, and times it was given a CPU */
} ThreadState;

typedef struct TaskState {
        pid_t pid;
        uint64_t starttime_ticks; /* of the main thread: with pid, the identity */
        unsigned gen; /* the sample that last saw it */
        bool primed; /* seen in an earlier sample: thread deltas mean something */
        bool whole_only; /* a thread of it has no schedstat: never read lazily */
        char comm[PROC_COMM_SIZE]; /* the main thread's, as read (not escaped) */
        int main_cpu; /* the main thread's last CPU at its last reading */
        unsigned alive; /* its threads that are not zombies, at their last readings */
        unsigned n_hot; /* its hot threads, after the last reading */
        /* lazy reading: the process's CPU time (task_cpu_ns()) at the last sample, and what of
         * it no thread read since accounts for */
        clockid_t clock; /* live: its CPU-time clock, once has_clock */
        bool has_clock, has_cpu_ns;
        uint64_t cpu_ns;
        int64_t unexplained_ns; /* signed: a reading's skew is given back by the next */
        uint64_t ns_now; /* task_cpu_ns() in sample ns_gen */
        unsigned ns_gen;
        ThreadState *threads; /* sorted by tid */
        size_t n_threads, cap_threads;
        CpuMask *allowed; /* its affinity at the last sample */
        /* its memory, for what a move would leave behind (task_memory()) */
        uint64_t rss_kib; /* statm's resident set, read at sample rss_gen (0: never) */
        unsigned rss_gen;
        uint64_t node_kib; /* numa_maps: its KiB on node maps_node, read at maps_gen (0: never) */
        int maps_node;
        unsigned maps_gen;
} TaskState;

/* What one thread added over the interval. */
typedef struct ThreadDelta {
        uint64_t cpu_ticks;
        uint64_t run_ns; /* unbounded: what it explains of its process's CPU time */
        uint64_t runwait_ns;
        uint64_t wait_ns, timeslices; /* when has_runwait */
        bool has_runwait;
        bool alive; /* not a zombie */
        unsigned processor;
} ThreadDelta;

/* A group's counters as read in this sample (read once, by the first that needs them). */
typedef struct GroupCounters {
        bool read;
        int usage_r, psi_r, throttled_r; /* <0: not there */
        uint64_t usage_usec, throttled_usec;
        PsiStats psi;
} GroupCounters;

typedef struct GroupState {
        char *path;
        GroupCounters now;
        bool quiet; /* nothing of it ran, waited or was throttled over the interval */
        uint64_t visit_usec; /* when its cgroup.procs was last read */
        bool has_usage; /* usage_usec is from the previous sample */
        uint64_t usage_usec;
        bool has_throttled; /* throttled_usec is from the previous sample */
        uint64_t throttled_usec;
        bool has_stall; /* stall_usec (cpu.pressure "some total") is from the previous sample */
        uint64_t stall_usec;
        uint64_t wait_ns, timeslices; /* its tasks' schedstat deltas over this interval */
        pid_t *pids; /* cgroup.procs of this sample */
        size_t n_pids;
        bool moved; /* in prev_groups: path now belongs to this sample's entry */
} GroupState;

/* A managed group the walk passes over (cgroup_walk()'s skipped), said once. */
typedef struct PassedOver {
        char *path;
        unsigned gen; /* the sample whose walk last found it */
} PassedOver;

struct Sampler {
        int proc_fd;
        const CgroupLayout *layout;
        const Topology *topo;
        pid_t self_pid;
        uint64_t clk_tck;
        unsigned cpu_capacity;
        bool since_boot;
        bool live; /* proc_fd is this pid namespace's /proc: affinity by syscall */
        CpuMask *wide; /* live, once the kernel had more CPU ids: sched_getaffinity()'s buffer */
        CpuMask *capacity_cpus; /* CPUs 0..cpu_capacity-1 */
        /* copies of the record's partitions, for this sample's groups (the record is replaced
         * while the snapshot lives on) */
        CpuMask **partitions;
        size_t n_partitions;

        unsigned gen;
        ProcStat *prev_stat; /* NULL until the first live sample */
        uint64_t prev_usec;

        /* pid -> TaskState, open addressing, rebuilt without the departed after each sample */
        TaskState **slots, **spare;
        size_t n_slots, n_entries;

        ThreadState *scratch; /* the thread list being built for one task */
        size_t cap_scratch;

        GroupState *groups, *prev_groups; /* sorted by path */
        size_t n_groups, n_prev_groups, cap_groups, cap_prev_groups;
        /* managed groups the walk passes over, said once while they are there (sorted) */
        PassedOver *passed;
        size_t n_passed;

        unsigned fds_kept, fds_max;

        PolicyCpu *cpus;
        PolicyTask *tasks;
        size_t cap_tasks;
        PolicyCgroup *cgroups;
        size_t cap_cgroups;
        PolicySnapshot snap;
        SamplerSystem sys;
        bool said_no_psi;
        unsigned maps_left; /* numa_maps reads left in this sample */
        bool maps_denied; /* numa_maps of others is not ours to read (no CAP_SYS_PTRACE) */
};

/* A task's resident set is read again after this many samples (2 s at the default 200 ms). */
#define RSS_REFRESH_SAMPLES 10u
/* numa_maps (a walk of the task's mappings, 100 bytes a mapping) is read for tasks with at least
 * this resident: below, the resident set is a close enough bound of what a move leaves behind */
#define MAPS_MIN_KIB (16u * 1024u)
/* ... at most this many a sample, each again after MAPS_REFRESH_SAMPLES or once the task runs on
 * another node than the one read, and never more than MAPS_MAX_BYTES of text */
#define MAPS_PER_SAMPLE 4u
#define MAPS_REFRESH_SAMPLES 50u
#define MAPS_MAX_BYTES (8u * 1024u * 1024u)
/* A thread read lazily stays hot (read every tick) until this many readings in a row found it
 * not running: a busy thread the scheduler skipped for one interval is not dropped. */
#define COOL_AFTER_READS 3u
/* What a hot thread's run time may be off by against its process's clock read a moment before:
 * the kernel adds a running thread's time at the scheduler tick, 10 ms at HZ=100 at most. */
#define SCHED_TICK_MAX_NS (10 * UINT64_C(1000000))
/* Cold threads due a refresh are spread over this many phases of sample_refresh. */
#define REFRESH_PHASES 64u

/* What one sample needs to turn counters into loads. */
typedef struct Tick {
        const Tunables *t;
        const Record *record; /* what the daemon changed, or NULL */
        bool deltas; /* false: this sample only primes the counters */
        uint64_t interval_usec; /* live: since the previous sample */
        uint64_t uptime_usec; /* since-boot mode */
        size_t max_depth; /* below this many components, no glob can match a new group */
        uint64_t now_usec;
        bool clocks; /* sample_refresh > 0, not since boot: each process's CPU time is read */
        bool lazy; /* and deltas: tasks seen before are read lazily */
        uint64_t slack_ns; /* CPU time of a process no reading explains before it is read whole */
} Tick;

/* ---- arithmetic */

static uint32_t clamp_u32(unsigned __int128 v) {
        return v > UINT32_MAX ? UINT32_MAX : (uint32_t) v;
}

static uint64_t sub_clamped(uint64_t cur, uint64_t prev) {
        return cur > prev ? cur - prev : 0;
}

/* ticks of CPU time over interval_usec, in permyriad of one CPU. */
static uint32_t ticks_permyriad(uint64_t ticks, uint64_t clk_tck, uint64_t interval_usec) {
        if (interval_usec == 0 || clk_tck == 0)
                return 0;
        return clamp_u32((unsigned __int128) ticks * 1000000u * POLICY_LOAD_ONE_CPU /
                         ((unsigned __int128) clk_tck * interval_usec));
}

static uint32_t ns_permyriad(uint64_t ns, uint64_t interval_usec) {
        if (interval_usec == 0)
                return 0;
        return clamp_u32((unsigned __int128) ns * POLICY_LOAD_ONE_CPU /
                         ((unsigned __int128) interval_usec * 1000u));
}

static uint32_t usec_permyriad(uint64_t usec, uint64_t interval_usec) {
        if (interval_usec == 0)
                return 0;
        return clamp_u32((unsigned __int128) usec * POLICY_LOAD_ONE_CPU / interval_usec);
}

/* ---- kept fds */

/* Keeps an fd open if the budget allows, else closes it. Returns it or -EBADF. */
static int fd_keep(Sampler *s, int fd) {
        if (fd < 0)
                return -EBADF;
        if (s->fds_kept >= s->fds_max) {
                (void) close(fd);
                return -EBADF;
        }
        s->fds_kept++;
        return fd;
}

static void fd_release(Sampler *s, int *fd) {
        if (*fd < 0)
                return;
        (void) close(*fd);
        *fd = -EBADF;
        s->fds_kept--;
}

static void thread_release(Sampler *s, ThreadState *th) {
        fd_release(s, &th->stat_fd);
        fd_release(s, &th->sched_fd);
}

static void task_clear_threads(Sampler *s, TaskState *e) {
        for (size_t i = 0; i < e->n_threads; i++)
                thread_release(s, &e->threads[i]);
        e->n_threads = 0;
}

static TaskState *task_free(Sampler *s, TaskState *e) {
        if (!e)
                return NULL;
        task_clear_threads(s, e);
        free(e->threads);
        cpumask_free(e->allowed);
        free(e);
        return NULL;
}

/* ---- the pid table */

static size_t slot_of(pid_t pid, size_t n_slots) {
        /* Fibonacci hashing: pids are dense and sequential, the mix spreads them. */
        return (size_t) (((uint64_t) (uint32_t) pid * UINT64_C(0x9E3779B97F4A7C15)) >> 32) &
               (n_slots - 1);
}

static TaskState *task_lookup(const Sampler *s, pid_t pid) {
        if (s->n_slots == 0)
                return NULL;
        for (size_t i = slot_of(pid, s->n_slots);; i = (i + 1) & (s->n_slots - 1)) {
                if (!s->slots[i])
                        return NULL;
                if (s->slots[i]->pid == pid)
                        return s->slots[i];
        }
}

static void slots_put(TaskState **slots, size_t n_slots, TaskState *e) {
        size_t i = slot_of(e->pid, n_slots);

        while (slots[i])
                i = (i + 1) & (n_slots - 1);
        slots[i] = e;
}

/*
 * Moves the entries seen by sample gen (all when gen is 0) into a table of n_slots, frees the
 * others. The spare table is reused, so a steady state allocates nothing.
 */
static int slots_rebuild(Sampler *s, size_t n_slots, unsigned gen) {
        TaskState **t = s->spare;
        size_t n = 0;

        if (n_slots != s->n_slots || !t) {
                t = calloc(n_slots, sizeof *t);
                if (!t)
                        return -ENOMEM;
                free(s->spare);
        } else
                memset(t, 0, n_slots * sizeof *t);
        for (size_t i = 0; i < s->n_slots; i++) {
                TaskState *e = s->slots[i];

                if (!e)
                        continue;
                if (gen != 0 && e->gen != gen) {
                        task_free(s, e);
                        continue;
                }
                slots_put(t, n_slots, e);
                n++;
        }
        s->spare = n_slots == s->n_slots ? s->slots : NULL;
        if (n_slots != s->n_slots)
                free(s->slots);
        s->slots = t;
        s->n_slots = n_slots;
        s->n_entries = n;
        return 0;
}

static TaskState *task_insert(Sampler *s, pid_t pid) {
        TaskState *e;

        if ((s->n_entries + 1) * 2 > s->n_slots &&
            slots_rebuild(s, s->n_slots ? s->n_slots * 2 : 256, 0) < 0)
                return NULL;
        e = calloc(1, sizeof *e);
        if (!e)
                return NULL;
        e->pid = pid;
        slots_put(s->slots, s->n_slots, e);
        s->n_entries++;
        return e;
}

/* Drops the departed after a sample; shrinks a table that emptied out. */
static int task_sweep(Sampler *s) {
        size_t n = s->n_slots;

        if (n == 0)
                return 0;
        while (n > 256 && s->n_entries * 8 < n)
                n /= 2;
        return slots_rebuild(s, n, s->gen);
}

/* ---- lifecycle */

/*
 * How many fds the sampler may keep open: two a thread (stat, schedstat), at most half the
 * limit, as the rest of the daemon needs some. Under a limit of 256 none: every read then opens
 * its file by path. Raise RLIMIT_NOFILE before sampler_new() to keep more.
 */
static unsigned fd_budget(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                return 1u << 16;
        if (rl.rlim_cur < 256)
                return 0;
        return rl.rlim_cur / 2 > UINT_MAX ? UINT_MAX : (unsigned) (rl.rlim_cur / 2);
}

int sampler_new(int proc_fd, const CgroupLayout *layout, const Topology *topo, pid_t self_pid,
                Sampler **ret) {
        Sampler *s;
        long hz;

        if (proc_fd < 0 || !layout || !topo || self_pid < 0 || !ret)
                return -EINVAL;
        hz = sysconf(_SC_CLK_TCK); /* USER_HZ, the unit of /proc's tick counts */
        if (hz <= 0)
                return -EINVAL;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        *s = (Sampler){
                .proc_fd = proc_fd,
                .layout = layout,
                .topo = topo,
                .self_pid = self_pid,
                .clk_tck = (uint64_t) hz,
                .cpu_capacity = topology_cpu_capacity(topo),
                .fds_max = fd_budget(),
        };
        s->cpus = calloc(s->cpu_capacity, sizeof *s->cpus);
        s->capacity_cpus = cpumask_new(s->cpu_capacity);
        if (!s->cpus || !s->capacity_cpus ||
            cpumask_set_range(s->capacity_cpus, 0, s->cpu_capacity - 1) < 0) {
                sampler_free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

static void groups_clear(GroupState *g, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(g[i].path);
                free(g[i].pids);
        }
}

static void partitions_clear(Sampler *s) {
        for (size_t i = 0; i < s->n_partitions; i++)
                cpumask_free(s->partitions[i]);
        s->n_partitions = 0;
}

/* A copy of the partition the record has for path, kept until the next sample; NULL for none
 * (or no memory: the policy then sees none this tick). */
static const CpuMask *partition_of(Sampler *s, const Record *record, const char *path) {
        const CpuMask *m = record_lookup_partition(record, path);
        CpuMask **a, *c;

        if (!m)
                return NULL;
        a = reallocarray(s->partitions, s->n_partitions + 1, sizeof *a);
        if (!a)
                return NULL;
        s->partitions = a;
        c = cpumask_copy(m);
        if (c)
                s->partitions[s->n_partitions++] = c;
        return c;
}

Sampler *sampler_free(Sampler *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_slots; i++)
                task_free(s, s->slots[i]);
        free(s->slots);
        free(s->spare);
        free(s->scratch);
        groups_clear(s->groups, s->n_groups);
        groups_clear(s->prev_groups, s->n_prev_groups);
        for (size_t i = 0; i < s->n_passed; i++)
                free(s->passed[i].path);
        free(s->passed);
        free(s->groups);
        free(s->prev_groups);
        proc_stat_free(s->prev_stat);
        cpumask_free(s->wide);
        cpumask_free(s->capacity_cpus);
        partitions_clear(s);
        free(s->partitions);
        free(s->cpus);
        free(s->tasks);
        free(s->cgroups);
        free(s);
        return NULL;
}

void sampler_set_since_boot(Sampler *s, bool since_boot) {
        if (s)
                s->since_boot = since_boot;
}

void sampler_set_live(Sampler *s, bool live) {
        if (s)
                s->live = live;
}

/* ---- CPUs */

/* Per-CPU utilisation: against the previous sample, or against zero (since boot). */
static void sample_cpus(Sampler *s, const ProcStat *cur, bool deltas) {
        static const CpuTimes zero = { .present = true };

        for (unsigned c = 0; c < s->cpu_capacity; c++) {
                const CpuTimes *b = proc_stat_cpu(cur, c);
                const CpuTimes *a = s->since_boot ? &zero : proc_stat_cpu(s->prev_stat, c);
                CpuTicksDelta d;
                unsigned util = 0;

                if (deltas && cpu_times_delta(a, b, &d) >= 0)
                        (void) cpu_ticks_util_permyriad(&d, &util);
                s->cpus[c].util_permyriad = util;
        }
}

/* ---- threads */

static int scratch_reserve(Sampler *s, size_t n) {
        return greedy_realloc((void **) &s->scratch, &s->cap_scratch, n, sizeof *s->scratch, 16);
}

/* The thread's stat line, through its kept fd (opened now if the budget allows). -ESRCH: gone. */
static int thread_read_stat(Sampler *s, ThreadState *th, pid_t pid, TaskStat *ret) {
        int r;

        if (th->stat_fd < 0 && s->fds_kept < s->fds_max) {
                int fd = proc_task_stat_open_at(s->proc_fd, pid, th->tid);

                if (fd < 0)
                        return fd;
                th->stat_fd = fd_keep(s, fd);
        }
        if (th->stat_fd < 0)
                return proc_task_stat_read_at(s->proc_fd, pid, th->tid, ret);
        r = proc_task_stat_pread(th->stat_fd, ret);
        if (r == -ESRCH)
                fd_release(s, &th->stat_fd);
        return r;
}

/* As above for schedstat. -EOPNOTSUPP (no such file) is remembered: it is never retried. */
static int thread_read_schedstat(Sampler *s, ThreadState *th, pid_t pid, TaskSchedstat *ret) {
        int r;

        if (th->no_schedstat)
                return -EOPNOTSUPP;
        if (th->sched_fd < 0 && s->fds_kept < s->fds_max) {
                int fd = proc_task_schedstat_open_at(s->proc_fd, pid, th->tid);

                th->no_schedstat = fd == -EOPNOTSUPP;
                if (fd < 0)
                        return fd;
                th->sched_fd = fd_keep(s, fd);
        }
        if (th->sched_fd < 0) {
                r = proc_task_schedstat_read_at(s->proc_fd, pid, th->tid, ret);
                th->no_schedstat = r == -EOPNOTSUPP;
                return r;
        }
        r = proc_task_schedstat_pread(th->sched_fd, ret);
        if (r == -ESRCH)
                fd_release(s, &th->sched_fd);
        return r;
}

/* What a thread's counters say now. */
typedef struct ThreadNow {
        TaskStat stat;
        uint64_t ticks; /* utime + stime */
        uint64_t run_ns; /* run, when has_runwait */
        uint64_t runwait_ns; /* run + wait, when has_runwait */
        uint64_t wait_ns, timeslices; /* when has_runwait */
        bool has_runwait;
} ThreadNow;

/* Reads one thread. main: the main thread's stat, known: its schedstat, when already read.
 * -ESRCH: it is gone. */
static int thread_read(Sampler *s, pid_t pid, ThreadState *th, const TaskStat *main,
                       const TaskSchedstat *known, ThreadNow *ret) {
        TaskSchedstat ss;
        int r;

        if (main) {
                ret->stat = *main;
                if (th->stat_fd < 0 && s->fds_kept < s->fds_max)
                        th->stat_fd = fd_keep(s, proc_task_stat_open_at(s->proc_fd, pid, pid));
        } else {
                r = thread_read_stat(s, th, pid, &ret->stat);
                if (r < 0)
                        return r;
        }
        if (known) {
                ss = *known;
                r = 0;
        } else
                r = thread_read_schedstat(s, th, pid, &ss);
        if (r == -ESRCH)
                return r;
        ret->has_runwait = r >= 0;
        ret->run_ns = r >= 0 ? ss.run_ns : 0;
        ret->runwait_ns = r >= 0 ? ss.run_ns + ss.wait_ns : 0;
        ret->wait_ns = r >= 0 ? ss.wait_ns : 0;
        ret->timeslices = r >= 0 ? ss.timeslices : 0;
        ret->ticks = ret->stat.utime_ticks + ret->stat.stime_ticks;
        return 0;
}

/*
 * What the thread added since the previous sample (counting), or since it started (since boot),
 * and its counters kept for the next sample. A thread new to a task seen before was born during
 * the interval: all its time counts, bounded by the interval.
 */
static void thread_account(const Sampler *s, const Tick *k, bool counting, ThreadState *th,
                           const ThreadNow *now, ThreadDelta *ret) {
        /* A tid seen before with another start time is a new thread that got a recycled tid. */
        bool fresh = !th->has_prev || th->starttime_ticks != now->stat.starttime_ticks;

        *ret = (ThreadDelta){
                .alive = now->stat.state != 'Z' && now->stat.state != 'X',
                .processor = now->stat.processor,
                .has_runwait = now->has_runwait,
                .run_ns = fresh ? now->run_ns : sub_clamped(now->run_ns, th->run_ns),
        };
        if (s->since_boot) {
                ret->cpu_ticks = now->ticks;
                ret->runwait_ns = now->runwait_ns;
                ret->wait_ns = now->wait_ns;
                ret->timeslices = now->timeslices;
        } else if (counting && fresh) {
                uint64_t max_ticks = k->interval_usec * s->clk_tck / 1000000u + 1;
                uint64_t max_ns = k->interval_usec * 1000u;

                ret->cpu_ticks = MIN(now->ticks, max_ticks);
                ret->runwait_ns = MIN(now->runwait_ns, max_ns);
                ret->wait_ns = MIN(now->wait_ns, max_ns);
                ret->timeslices = now->timeslices;
        } else if (counting) {
                /* A thread runs and waits at most the interval: the kernel adds a wait when the
                 * thread next runs, so a delta can hold waits of the interval before. */
                uint64_t max_ns = k->interval_usec * 1000u;

                ret->cpu_ticks = sub_clamped(now->ticks, th->cpu_ticks);
                ret->runwait_ns = MIN(sub_clamped(now->runwait_ns, th->runwait_ns), max_ns);
                ret->wait_ns = MIN(sub_clamped(now->wait_ns, th->wait_ns), max_ns);
                ret->timeslices = sub_clamped(now->timeslices, th->timeslices);
                ret->has_runwait = now->has_runwait && th->had_runwait;
        }
        th->starttime_ticks = now->stat.starttime_ticks;
        th->cpu_ticks = now->ticks;
        th->run_ns = now->run_ns;
        th->runwait_ns = now->runwait_ns;
        th->wait_ns = now->wait_ns;
        th->timeslices = now->timeslices;
        th->had_runwait = now->has_runwait;
        th->has_prev = true;
}

/*
 * Moves the task's thread states into s->scratch in the order of tids (sorted), new threads
 * with fresh states; those no longer listed have exited and their fds are closed. Returns the
 * count.
 */
static int threads_merge(Sampler *s, TaskState *e, const pid_t *tids, size_t n, size_t *ret_n) {
        size_t i = 0, j = 0, m = 0;
        int r;

        r = scratch_reserve(s, n);
        if (r < 0)
                return r;
        while (i < e->n_threads || j < n) {
                if (j == n || (i < e->n_threads && e->threads[i].tid < tids[j]))
                        thread_release(s, &e->threads[i++]);
                else if (i < e->n_threads && e->threads[i].tid == tids[j]) {
                        s->scratch[m++] = e->threads[i++];
                        j++;
                } else
                        s->scratch[m++] = (ThreadState){
                                .tid = tids[j++],
                                .stat_fd = -EBADF,
                                .sched_fd = -EBADF,
                        };
        }
        e->n_threads = 0; /* they live in scratch until threads_store() */
        *ret_n = m;
        return 0;
}

/* Moves n thread states back from scratch into the task. On -ENOMEM they are released. */
static int threads_store(Sampler *s, TaskState *e, size_t n) {
        if (n > e->cap_threads) {
                ThreadState *p = reallocarray(e->threads, n, sizeof *p);

                if (!p) {
                        for (size_t i = 0; i < n; i++)
                                thread_release(s, &s->scratch[i]);
                        e->primed = false;
                        return -ENOMEM;
                }
                e->threads = p;
                e->cap_threads = n;
        }
        if (n > 0)
                memcpy(e->threads, s->scratch, n * sizeof *e->threads);
        e->n_threads = n;
        return 0;
}

typedef struct TaskSum {
        bool counted; /* the sums are deltas (or since boot), not a first sight's priming */
        uint64_t cpu_ticks, runwait_ns;
        uint64_t wait_ns, timeslices;
        uint64_t run_ns; /* of the threads read: what they explain of the process's CPU time */
        bool all_runwait; /* every thread read had schedstat */
        unsigned alive; /* threads that are not zombies (those not read: at their last reading) */
        int cpu; /* of the thread that ran most */
        uint64_t best; /* the CPU ticks of that thread */
} TaskSum;

static void task_sum_add(TaskSum *sum, const ThreadDelta *d) {
        sum->cpu_ticks += d->cpu_ticks;
        sum->run_ns += d->run_ns;
        sum->runwait_ns += d->runwait_ns;
        sum->wait_ns += d->wait_ns;
        sum->timeslices += d->timeslices;
        sum->all_runwait = sum->all_runwait && d->has_runwait;
        if (!d->alive)
                return;
        sum->alive++;
        if (d->cpu_ticks > sum->best) {
                sum->best = d->cpu_ticks;
                sum->cpu = (int) d->processor; /* the parser keeps it <= INT_MAX */
        }
}

/* Which of a task's threads a reading covers. */
typedef enum ThreadPick {
        PICK_ALL, /* every one: a task read whole */
        PICK_LIVELY, /* the hot, those never read, and the cold ones due a refresh */
        PICK_QUIET, /* the hot and those never read: the group did nothing a refresh could find */
        PICK_REST, /* those this sample has not read yet */
} ThreadPick;

static bool thread_picked(const Sampler *s, const Tick *k, const ThreadState *th, ThreadPick pick) {
        switch (pick) {
        case PICK_LIVELY:
                return th->hot || th->read_gen == 0 ||
                       (k->now_usec >= th->read_usec &&
                        k->now_usec - th->read_usec >= k->t->sample_refresh_usec);
        case PICK_QUIET: return th->hot || th->read_gen == 0;
        case PICK_REST: return th->read_gen != s->gen;
        default: return true;
        }
}

/*
 * A cold thread due a refresh: its schedstat alone, which moves whenever it runs or waits.
 * 1: nothing moved since its last reading (its stat need not be read), 0: something did (*ret is
 * what was read, for thread_read()), -EAGAIN: it could not tell, -ESRCH: gone.
 */
static int thread_unchanged(Sampler *s, pid_t pid, ThreadState *th, TaskSchedstat *ret) {
        int r;

        if (!th->has_prev || !th->had_runwait)
                return -EAGAIN;
        r = thread_read_schedstat(s, th, pid, ret);
        if (r < 0)
                return r == -ESRCH ? r : -EAGAIN;
        return ret->run_ns == th->run_ns && ret->run_ns + ret->wait_ns == th->runwait_ns &&
               ret->timeslices == th->timeslices;
}

/* Whether a thread just read ran: a hot one cools after COOL_AFTER_READS readings without. */
static void thread_heat(ThreadState *th, const ThreadNow *now, const ThreadDelta *d,
                        bool counting) {
        if (counting ? d->run_ns > 0 || d->cpu_ticks > 0 : now->stat.state == 'R') {
                th->hot = true;
                th->idle_reads = 0;
        } else if (++th->idle_reads >= COOL_AFTER_READS)
                th->hot = false;
}

/*
 * Reads the picked threads of arr (n of the task's, in tid order) into sum, compacting arr over
 * those gone; returns how many remain. main: the main thread's stat, when read this sample.
 * Lazily, a thread read that is not hot gives its fds back: only what is read every tick keeps
 * one.
 */
static size_t threads_read(Sampler *s, const Tick *k, TaskState *e, ThreadState *arr, size_t n,
                           const TaskStat *main, ThreadPick pick, TaskSum *sum) {
        size_t kept = 0;

        sum->alive = 0;
        for (size_t i = 0; i < n; i++) {
                ThreadState *th = &arr[i];
                const TaskSchedstat *known;
                TaskSchedstat ss;
                ThreadNow now;
                ThreadDelta d;
                int r;

                if (!thread_picked(s, k, th, pick)) {
                        sum->alive += th->alive;
                        arr[kept++] = *th;
                        continue;
                }
                s->sys.n_threads_read++;
                known = NULL;
                if ((pick == PICK_LIVELY || pick == PICK_QUIET) && !th->hot && th->read_gen != 0) {
                        r = thread_unchanged(s, e->pid, th, &ss);
                        if (r == -ESRCH) {
                                thread_release(s, th);
                                continue;
                        }
                        if (r > 0) {
                                th->read_gen = s->gen;
                                th->read_usec = k->now_usec;
                                thread_release(s, th);
                                sum->alive += th->alive;
                                arr[kept++] = *th;
                                continue;
                        }
                        if (r == 0) /* it moved: its schedstat is read already */
                                known = &ss;
                }
                r = thread_read(s, e->pid, th, th->tid == e->pid ? main : NULL, known, &now);
                if (r == -ESRCH) { /* exited since the listing */
                        thread_release(s, th);
                        continue;
                }
                if (r < 0) /* unreadable this time: its counters stay as they were */
                        sum->all_runwait = false;
                else {
                        thread_account(s, k, sum->counted, th, &now, &d);
                        task_sum_add(sum, &d);
                        th->alive = d.alive;
                        thread_heat(th, &now, &d, sum->counted);
                        e->whole_only = e->whole_only || !now.has_runwait;
                }
                th->read_gen = s->gen;
                /* A cold thread is due again sample_refresh on, in one of REFRESH_PHASES phases
                 * by its tid, so a process's threads are not all due in the same tick. */
                th->read_usec = k->now_usec - MIN(k->now_usec, (uint64_t) th->tid % REFRESH_PHASES *
                                                                       k->t->sample_refresh_usec /
                                                                       REFRESH_PHASES);
                if (k->clocks && !th->hot)
                        thread_release(s, th);
                arr[kept++] = *th;
        }
        e->n_hot = 0;
        for (size_t i = 0; i < kept; i++)
                e->n_hot += arr[i].hot;
        return kept;
}

/* Lists the task's threads (its task directory, unless main says it has one) and reads the
 * picked ones. main: its main thread's stat, just read. */
static int threads_relist(Sampler *s, const Tick *k, TaskState *e, const TaskStat *main,
                          ThreadPick pick, TaskSum *sum) {
        _cleanup_free_ pid_t *list = NULL;
        const pid_t *tids = &e->pid;
        size_t n = 1, m;
        int r;

        /* Most processes have one thread: then its task directory need not be listed. */
        if (main->num_threads != 1 || main->state == 'Z' || main->state == 'X') {
                r = proc_task_list_at(s->proc_fd, e->pid, &list, &n);
                if (r < 0)
                        return r;
                tids = list;
        }
        r = threads_merge(s, e, tids, n, &m);
        if (r < 0)
                return r;
        return threads_store(s, e, threads_read(s, k, e, s->scratch, m, main, pick, sum));
}

/* Samples every thread of the task. main: its main thread's stat, just read. */
static int task_sample_threads(Sampler *s, const Tick *k, TaskState *e, const TaskStat *main,
                               TaskSum *ret) {
        bool counting = s->since_boot || (k->deltas && e->primed);
        int r;

        *ret = (TaskSum){ .counted = counting, .all_runwait = true, .cpu = (int) main->processor };
        e->whole_only = false;
        r = threads_relist(s, k, e, main, PICK_ALL, ret);
        if (r < 0)
                return r;
        s->sys.n_threads += ret->alive;
        e->alive = ret->alive;
        e->primed = true;
        return 0;
}

/* ---- affinity: allowed, ours, foreign */

/* Whether allowed leaves out usable CPUs the task's cpuset would give it: someone narrowed it. */
static bool task_is_narrowed(const Sampler *s, pid_t pid, const CpuMask *allowed) {
        const CpuMask *usable = topology_usable_cpus(s->topo);
        _cleanup_cpumask_ CpuMask *cpuset = NULL;

        if (cpumask_is_subset(usable, allowed)) /* the common case: nothing to read */
                return false;
        if (cgroup_read_task_cpuset_cpus(s->layout, s->proc_fd, pid, s->cpu_capacity, &cpuset) < 0)
                return true; /* no cpuset known: the machine's usable CPUs are the reference */
        cpumask_and(cpuset, cpuset, usable);
        return !cpumask_is_subset(cpuset, allowed);
}

/*
 * Live: the affinity by sched_getaffinity() into e->allowed, kept from tick to tick. Its status
 * file was most of a tick's cost: the kernel formats ~50 lines for the one we parse. pid is the
 * main thread's, as the status file's is.
 */
static int task_get_affinity(Sampler *s, TaskState *e) {
        if (!e->allowed) {
                e->allowed = cpumask_new(s->cpu_capacity);
                if (!e->allowed)
                        return -ENOMEM;
        }
        if (!s->wide) {
                if (sched_getaffinity(e->pid, cpumask_cpu_set_size(e->allowed),
                                      cpumask_cpu_set(e->allowed)) == 0) {
                        /* The set is whole longs: bits past the capacity are not the mask's. */
                        cpumask_and(e->allowed, e->allowed, s->capacity_cpus);
                        return 0;
                }
                if (errno != EINVAL)
                        return negative_errno(); /* -ESRCH: gone */
                s->wide = cpumask_new(CPUMASK_MAX_CPUS);
                if (!s->wide)
                        return -ENOMEM;
        }
        /* The kernel has more CPU ids than the topology holds (it said -EINVAL to a mask that
         * short): from now on read whole, then narrowed. */
        if (sched_getaffinity(e->pid, cpumask_cpu_set_size(s->wide), cpumask_cpu_set(s->wide)) < 0)
                return negative_errno();
        cpumask_and(e->allowed, s->wide, s->wide);
        return 0;
}

/* The task's affinity now, into e->allowed. A CPU beyond the topology (hot-added, or a recorded
 * tree) is dropped rather than refusing the task. */
static int task_read_allowed(Sampler *s, TaskState *e) {
        _cleanup_cpumask_ CpuMask *m = NULL, *wide = NULL;
        int r;

        if (s->live)
                return task_get_affinity(s, e);
        r = proc_task_cpus_allowed_read_at(s->proc_fd, e->pid, 0, s->cpu_capacity, &m);
        if (r == -ERANGE) {
                r = proc_task_cpus_allowed_read_at(s->proc_fd, e->pid, 0, CPUMASK_MAX_CPUS, &wide);
                if (r >= 0) {
                        m = cpumask_new(s->cpu_capacity);
                        if (!m)
                                return -ENOMEM;
                        cpumask_or(m, m, wide);
                }
        }
        if (r < 0)
                return r;
        cpumask_free(e->allowed);
        e->allowed = TAKE_PTR(m);
        return 0;
}

/* ---- tasks */

_Static_assert(sizeof(((PolicyTask *) NULL)->comm) == PROC_COMM_SIZE, "comm sizes differ");

/* A task names itself: its comm may hold a newline or a terminal's escape sequence, which would
 * split explain's and dump's lines or drive the terminal they are printed on. What the policy,
 * the bus, the log and recordings get has those bytes as \xNN (15 bytes of comm fit in 63). */
static void comm_copy_clean(char dst[static PROC_COMM_SIZE], const char *src) {
        _cleanup_free_ char *buf = NULL;
        const char *clean = utf8_clean(src, /* keep_lines= */ false, &buf);

        (void) snprintf(dst, PROC_COMM_SIZE, "%s", clean ? clean : "?");
}

static bool comm_excluded(char *const *globs, const char *comm) {
        for (size_t i = 0; globs && globs[i]; i++)
                if (fnmatch(globs[i], comm, 0) == 0)
                        return true;
        return false;
}

/* The main thread's stat line; through its kept fd when there is one. */
static int read_main_stat(Sampler *s, TaskState *e, pid_t pid, TaskStat *ret) {
        for (size_t i = 0; e && i < e->n_threads; i++) {
                ThreadState *th = &e->threads[i];
                int r;

                if (th->tid != pid || th->stat_fd < 0)
                        continue;
                r = proc_task_stat_pread(th->stat_fd, ret);
                if (r != -ESRCH)
                        return r;
                /* That process is gone; the pid may be another's by now. */
                fd_release(s, &th->stat_fd);
                break;
        }
        return proc_task_stat_read_at(s->proc_fd, pid, pid, ret);
}

static int tasks_reserve(Sampler *s, size_t n) {
        return greedy_realloc((void **) &s->tasks, &s->cap_tasks, n, sizeof *s->tasks, 64);
}

/* Loads of the task from its threads' sums: over the interval, or over its life since boot. */
static void task_loads(const Sampler *s, const Tick *k, const TaskState *e, const TaskSum *sum,
                       PolicyTask *pt) {
        uint64_t interval = k->interval_usec;

        if (s->since_boot) {
                uint64_t start = e->starttime_ticks * 1000000u / s->clk_tck;

                interval = k->uptime_usec > start ? k->uptime_usec - start : 0;
                if (interval < 1000000u / s->clk_tck)
                        interval = 1000000u / s->clk_tck;
        } else if (!sum->counted)
                return; /* first sight: counters primed, loads stay 0 */
        pt->util_permyriad = ticks_permyriad(sum->cpu_ticks, s->clk_tck, interval);
        pt->demand_permyriad = sum->all_runwait ? ns_permyriad(sum->runwait_ns, interval) : 0;
        /* Without schedstat the wait is unknown: demand is what it used. Tick sampling can put
         * utime a tick above run time; demand is never below util. */
        if (pt->demand_permyriad < pt->util_permyriad)
                pt->demand_permyriad = pt->util_permyriad;
}

static void task_fill(const Sampler *s, const Tick *k, const TaskState *e, const TaskSum *sum,
                      size_t group, PolicyTask *pt) {
        const CpuMask *mine = NULL;
        uint64_t when = 0;
        bool recorded;

        *pt = (PolicyTask){
                .pid = e->pid,
                .starttime_ticks = e->starttime_ticks,
                .cgroup = group,
                .cpu = sum->cpu >= 0 && (unsigned) sum->cpu < s->cpu_capacity ? sum->cpu : -1,
                .allowed = e->allowed,
        };
        comm_copy_clean(pt->comm, e->comm);
        task_loads(s, k, e, sum, pt);
        recorded = record_lookup_task(k->record, e->pid, e->starttime_ticks, &mine, &when);
        pt->ours = recorded && mine && cpumask_equal(mine, e->allowed);
        pt->last_move_usec = recorded ? when : 0;
        /* A fact about the task, whatever the config: the policy decides what
         * override_foreign_affinity does with it (replace the mask, not narrow within it). */
        pt->foreign = !pt->ours && task_is_narrowed(s, e->pid, e->allowed);
}

/*
 * The memory a move of the task would leave behind, on nodes of a machine with more than one and
 * for tasks heavy enough to be moved: its pages on the node it runs on (numa_maps, within this
 * sample's budget) or, until read or when not readable, its resident set (statm).
 */
static void task_memory(Sampler *s, const Tick *k, TaskState *e, PolicyTask *pt) {
        int node;
        uint64_t kib;
        int r;

        if (topology_n_nodes(s->topo) < 2 || pt->cpu < 0 ||
            pt->demand_permyriad < (uint64_t) k->t->min_task_load_pct * 100 ||
            pt->demand_permyriad == 0)
                return;
        node = topology_cpu_node(s->topo, (unsigned) pt->cpu);
        if (node < 0)
                return;
        if (e->rss_gen == 0 || s->gen - e->rss_gen >= RSS_REFRESH_SAMPLES) {
                r = proc_task_rss_read_at(s->proc_fd, e->pid, &kib);
                if (r >= 0) {
                        e->rss_kib = kib;
                        e->rss_gen = s->gen;
                }
        }
        if (e->rss_kib >= MAPS_MIN_KIB && !s->maps_denied && s->maps_left > 0 &&
            (e->maps_gen == 0 || e->maps_node != node ||
             s->gen - e->maps_gen >= MAPS_REFRESH_SAMPLES)) {
                s->maps_left--;
                r = proc_task_numa_maps_read_at(s->proc_fd, e->pid, (unsigned) node, MAPS_MAX_BYTES,
                                                &kib);
                if (r >= 0) {
                        e->node_kib = kib;
                        e->maps_node = node;
                        e->maps_gen = s->gen;
                } else if (r == -EACCES || r == -EPERM) {
                        s->maps_denied = true;
                        log_debug_errno(r,
                                        "Cannot read numa_maps of pid %d (CAP_SYS_PTRACE): %m; "
                                        "a task's resident set stands for its memory on its node",
                                        (int) e->pid);
                }
        }
        pt->mem_exact = e->maps_gen != 0 && e->maps_node == node;
        pt->mem_kib = pt->mem_exact ? e->node_kib : e->rss_kib;
}

/* Finds or makes the state of pid; a recycled pid (another start time) starts from scratch. */
static TaskState *task_state(Sampler *s, TaskState *e, pid_t pid, const TaskStat *main) {
        if (!e)
                e = task_insert(s, pid);
        else if (e->starttime_ticks != main->starttime_ticks) {
                task_clear_threads(s, e);
                e->primed = false;
                e->has_cpu_ns = false;
                e->rss_gen = e->maps_gen = 0;
        }
        if (e) {
                e->starttime_ticks = main->starttime_ticks;
                e->gen = s->gen;
        }
        return e;
}

/*
 * The process's CPU time in ns: all its threads', the exited ones' included. Live: its CPU-time
 * clock, one call (the kernel sums the threads; no fd, no permission needed); a recorded tree:
 * its own stat file's utime + stime, in ticks. <0: not known now (gone, or unreadable).
 */
static int task_cpu_ns(Sampler *s, TaskState *e, uint64_t *ret) {
        struct timespec ts;
        TaskStat st;
        int r;

        if (e->ns_gen == s->gen) { /* a quiet group's check read it */
                *ret = e->ns_now;
                return 0;
        }
        if (s->live) {
                if (!e->has_clock) {
                        r = clock_getcpuclockid(e->pid, &e->clock);
                        if (r != 0)
                                return -r;
                        e->has_clock = true;
                }
                if (clock_gettime(e->clock, &ts) < 0)
                        return negative_errno();
                *ret = (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
        } else {
                r = proc_task_stat_read_at(s->proc_fd, e->pid, 0, &st);
                if (r < 0)
                        return r;
                *ret = (st.utime_ticks + st.stime_ticks) * (UINT64_C(1000000000) / s->clk_tck);
        }
        e->ns_now = *ret;
        e->ns_gen = s->gen;
        return 0;
}

/* The task's entry in the snapshot, from its threads' sums; its group's latency sums. */
static int task_add(Sampler *s, const Tick *k, TaskState *e, const TaskSum *sum, size_t group) {
        PolicyTask *pt;
        int r;

        r = tasks_reserve(s, s->snap.n_tasks + 1);
        if (r < 0)
                return r;
        pt = &s->tasks[s->snap.n_tasks++];
        task_fill(s, k, e, sum, group, pt);
        task_memory(s, k, e, pt);
        if (sum->counted && sum->all_runwait) {
                s->groups[group].wait_ns += sum->wait_ns;
                s->groups[group].timeslices += sum->timeslices;
        }
        return 0;
}

/*
 * A task seen before, read lazily (sampler.h says what and why). -EAGAIN: it must be read whole
 * (its process changed, or it cannot tell what did); nothing of it is changed then.
 */
static int sample_task_lazy(Sampler *s, const Tick *k, TaskState *e, size_t group) {
        ThreadPick pick = s->groups[group].quiet ? PICK_QUIET : PICK_LIVELY;
        TaskStat main = {};
        TaskSum sum;
        uint64_t ns, delta;
        int64_t slack;
        bool ran;
        int r;

        if (!e->has_cpu_ns || e->whole_only || !e->allowed ||
            record_task_banned(k->record, e->pid, e->starttime_ticks))
                return -EAGAIN;
        r = task_cpu_ns(s, e, &ns);
        if (r < 0 || ns < e->cpu_ns) /* gone, or another process has the pid */
                return r == -ENOMEM ? r : -EAGAIN;
        delta = ns - e->cpu_ns;
        ran = delta > 0;
        if (ran) {
                /* It ran: its main thread's stat says whether it is still the same process,
                 * what it is called now, and how many threads it has. */
                r = read_main_stat(s, e, e->pid, &main);
                if (r == -ENOMEM)
                        return r;
                if (r < 0 || main.starttime_ticks != e->starttime_ticks || main.state == 'Z' ||
                    main.state == 'X' || comm_excluded(k->t->exclude_comms, main.comm))
                        return -EAGAIN;
                memcpy(e->comm, main.comm, sizeof e->comm);
                e->main_cpu = (int) main.processor;
        }
        /* as read whole: the CPU of the thread that ran most, or the main thread's */
        sum = (TaskSum){ .counted = true, .all_runwait = true, .cpu = e->main_cpu };
        if (ran && main.num_threads != e->n_threads) {
                /* Threads came or went: list them, read the new ones with the lively. */
                r = threads_relist(s, k, e, &main, pick, &sum);
                if (r < 0)
                        return r == -ENOMEM ? r : 0;
        } else if (pick == PICK_QUIET && !ran && e->n_hot == 0)
                sum.alive = e->alive; /* nothing to read: not a thread of it is looked at */
        else
                e->n_threads = threads_read(s, k, e, e->threads, e->n_threads, ran ? &main : NULL,
                                            pick, &sum);
        /* What the threads read do not account for was run by those not read (or by threads
         * that exited): past the slack, read them all now. The sum is signed and carried from
         * tick to tick, so the skew between the clock and the threads' times (each running hot
         * thread's time lags by up to a scheduler tick) cancels out instead of adding up; the
         * slack holds that skew, so only time really run by others passes it. */
        slack = (int64_t) (k->slack_ns +
                           MIN(e->n_hot, topology_n_cpus(s->topo)) * SCHED_TICK_MAX_NS);
        e->unexplained_ns = MAX(e->unexplained_ns + (int64_t) delta - (int64_t) sum.run_ns, -slack);
        if (ran && e->unexplained_ns > slack) {
                r = threads_relist(s, k, e, &main, PICK_REST, &sum);
                if (r < 0)
                        return r == -ENOMEM ? r : 0;
                e->unexplained_ns = 0;
        }
        e->cpu_ns = ns;
        e->alive = sum.alive;
        s->sys.n_threads += sum.alive;
        if (sum.alive == 0)
                return 0;
        /* Its affinity whatever it did: someone else may narrow an idle task (one call live). */
        r = task_read_allowed(s, e);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        return task_add(s, k, e, &sum, group);
}

/* One process listed by group: sampled and, unless excluded, added to the snapshot. Only
 * -ENOMEM is an error; a task gone or unreadable is skipped. */
static int sample_task(Sampler *s, const Tick *k, pid_t pid, size_t group) {
        TaskState *e;
        TaskStat main;
        TaskSum sum;
        uint64_t ns = 0;
        bool has_ns = false;
        int r;

        if (pid == 1 || pid == s->self_pid)
                return 0;
        e = task_lookup(s, pid);
        if (e && e->gen == s->gen) /* v1 lists a process in every group one of its threads is in */
                return 0;
        if (k->lazy && e && e->primed) {
                r = sample_task_lazy(s, k, e, group);
                if (r >= 0)
                        e->gen = s->gen;
                if (r != -EAGAIN)
                        return r;
        }
        r = read_main_stat(s, e, pid, &main);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        if (task_stat_is_kthread(&main))
                return 0;
        e = task_state(s, e, pid, &main);
        if (!e)
                return -ENOMEM;
        memcpy(e->comm, main.comm, sizeof e->comm);
        e->main_cpu = (int) main.processor;
        if (comm_excluded(k->t->exclude_comms, main.comm) ||
            record_task_banned(k->record, pid, e->starttime_ticks)) {
                /* Not read while excluded: should it come back (an exec renames it), its old
                 * counters would make one interval of many. */
                task_clear_threads(s, e);
                e->primed = false;
                e->has_cpu_ns = false;
                return 0;
        }
        if (k->clocks) /* before the threads: what they do after it is the next interval's */
                has_ns = task_cpu_ns(s, e, &ns) >= 0;
        r = task_sample_threads(s, k, e, &main, &sum);
        if (r < 0 || sum.alive == 0) /* gone, unreadable or a zombie */
                return r == -ENOMEM ? r : 0;
        e->has_cpu_ns = has_ns;
        e->cpu_ns = ns;
        e->unexplained_ns = 0;
        r = task_read_allowed(s, e);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        return task_add(s, k, e, &sum, group);
}

/* ---- groups */

static int cmp_group(const void *a, const void *b) {
        return strcmp(((const GroupState *) a)->path, ((const GroupState *) b)->path);
}

static int groups_reserve(Sampler *s, size_t n) {
        return greedy_realloc((void **) &s->groups, &s->cap_groups, n, sizeof *s->groups, 16);
}

/* The previous sample's state of path (its usage), or NULL. prev_groups is sorted. */
static GroupState *prev_group(Sampler *s, const char *path) {
        GroupState key = { .path = (char *) path };

        if (s->n_prev_groups == 0)
                return NULL;
        return bsearch(&key, s->prev_groups, s->n_prev_groups, sizeof key, cmp_group);
}

/* The group's usage, pressure and throttled time, read once a sample. */
static void group_read_counters(Sampler *s, GroupState *g) {
        if (g->now.read)
                return;
        g->now.read = true;
        g->now.usage_r = cgroup_read_usage(s->layout, g->path, &g->now.usage_usec);
        /* -EOPNOTSUPP on v1, -ENOENT without a hybrid mirror: no pressure, not an error */
        g->now.psi_r = cgroup_read_pressure(s->layout, g->path, "cpu", &g->now.psi);
        g->now.throttled_r = cgroup_read_cpu_throttled(s->layout, g->path, &g->now.throttled_usec);
}

/*
 * Lazily, whether nothing of the group ran (its usage), waited (its pressure, where the kernel
 * has it) or was throttled since the last sample: then its processes are those of the last
 * visit, within sample_refresh of it, and no idle thread of it is due a refresh (none of them
 * can have waited).
 */
static bool group_quiet(Sampler *s, const Tick *k, GroupState *g, const GroupState *prev) {
        if (!k->lazy || !prev || !prev->has_usage || k->now_usec < prev->visit_usec ||
            k->now_usec - prev->visit_usec >= k->t->sample_refresh_usec)
                return false;
        group_read_counters(s, g);
        return g->now.usage_r >= 0 && g->now.usage_usec == prev->usage_usec &&
               (g->now.psi_r < 0 ||
                (prev->has_stall && g->now.psi.some.total_usec == prev->stall_usec)) &&
               (g->now.throttled_r < 0 ||
                (prev->has_throttled && g->now.throttled_usec == prev->throttled_usec));
}

/* A managed group found by the walk; fd is its directory. */
static int group_add(Sampler *s, const Tick *k, const char *path, int fd) {
        _cleanup_free_ pid_t *pids = NULL;
        GroupState *g, *prev;
        size_t n = 0;
        int r;

        r = groups_reserve(s, s->n_groups + 1);
        if (r < 0)
                return r;
        g = &s->groups[s->n_groups];
        *g = (GroupState){};
        prev = prev_group(s, path);
        if (prev && prev->moved)
                prev = NULL;
        if (prev) {
                g->path = prev->path; /* moved: a steady tree allocates no strings */
                g->has_usage = prev->has_usage;
                g->usage_usec = prev->usage_usec;
                g->has_throttled = prev->has_throttled;
                g->throttled_usec = prev->throttled_usec;
                g->has_stall = prev->has_stall;
                g->stall_usec = prev->stall_usec;
        } else {
                g->path = strdup(path);
                if (!g->path)
                        return -ENOMEM;
        }
        if (group_quiet(s, k, g, prev)) {
                /* Its processes as listed at the last visit (on v1 the kernel sorts every
                 * thread's tgid to list them: 3 ms at 10,000 threads). */
                g->quiet = true;
                g->visit_usec = prev->visit_usec;
                g->pids = TAKE_PTR(prev->pids);
                g->n_pids = prev->n_pids;
        } else {
                r = proc_task_ids_read_at(fd, "cgroup.procs", &pids, &n);
                if (r == -ENOENT || r == -ENODEV || r == -ENOMEM) { /* removed since the walk */
                        if (!prev)
                                free(g->path);
                        return r == -ENOMEM ? r : 0;
                }
                if (r < 0)
                        log_debug_errno(
                                r, "Failed to read the processes of cgroup %s, ignoring: %m", path);
                g->visit_usec = k->now_usec;
                g->pids = TAKE_PTR(pids);
                g->n_pids = n;
        }
        if (prev)
                prev->moved = true;
        s->n_groups++;
        return 0;
}

/* What the walk of one sample carries. */
typedef struct WalkCtx {
        Sampler *s;
        const Tick *k;
} WalkCtx;

/* One group of the walk: excluded groups are left out with everything below them. Below a
 * managed group all are managed; elsewhere only a glob with as many components can match, so
 * most of a host's tree is never read. */
static int walk_group(const char *path, unsigned depth, int dir_fd, void *userdata) {
        WalkCtx *w = userdata;
        bool managed;
        int r;

        if (tunables_cgroup_matches(w->k->t->exclude_cgroups, path))
                return 0;
        managed = tunables_cgroup_matches(w->k->t->cgroups, path);
        if (managed) {
                r = group_add(w->s, w->k, path, dir_fd);
                if (r < 0)
                        return r;
        }
        return managed || depth < w->k->max_depth;
}

/* Where path is, or would go, in the sorted passed-over groups. */
static size_t passed_pos(const Sampler *s, const char *path, bool *ret_found) {
        size_t lo = 0, hi = s->n_passed;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(s->passed[mid].path, path);

                if (c == 0) {
                        *ret_found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *ret_found = false;
        return lo;
}

/* Remembers path as said in this sample. -ENOMEM. */
static int passed_add(Sampler *s, size_t i, const char *path) {
        PassedOver *a = reallocarray(s->passed, s->n_passed + 1, sizeof *a);
        char *p;

        if (!a)
                return -ENOMEM;
        s->passed = a;
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        memmove(a + i + 1, a + i, (s->n_passed - i) * sizeof *a);
        a[i] = (PassedOver){ .path = p, .gen = s->gen };
        s->n_passed++;
        return 0;
}

/* After a walk: forgets the groups it no longer found (removed, or no longer managed), so
 * their memory is bounded by the tree, and one made again is said again. */
static void passed_sweep(Sampler *s) {
        size_t n = 0;

        for (size_t i = 0; i < s->n_passed; i++)
                if (s->passed[i].gen == s->gen)
                        s->passed[n++] = s->passed[i];
                else
                        free(s->passed[i].path);
        s->n_passed = n;
}

/* A group the walk passes over, with all below it: said at warning level once while it is
 * there, if the configuration would manage it. */
static int walk_skipped(const char *path, unsigned depth, CgroupWalkSkip why, void *userdata) {
        WalkCtx *w = userdata;
        _cleanup_free_ char *buf = NULL;
        const char *name;
        bool found;
        size_t i;

        (void) depth;
        if (tunables_cgroup_matches(w->k->t->exclude_cgroups, path) ||
            !tunables_cgroup_matches(w->k->t->cgroups, path))
                return 0;
        i = passed_pos(w->s, path, &found);
        if (found) {
                w->s->passed[i].gen = w->s->gen;
                return 0;
        }
        name = utf8_clean(path, /* keep_lines= */ false, &buf);
        if (!name)
                return -ENOMEM;
        switch (why) {
        case CGROUP_WALK_SKIP_TOO_DEEP:
                log_warning("Group %s is deeper than %u levels: it and the groups below it are "
                            "not managed",
                            name, CGROUP_WALK_DEPTH_MAX);
                break;
        case CGROUP_WALK_SKIP_CONTROL_CHAR:
                log_warning("Group %s: its name holds a control character the record of changes "
                            "cannot keep: it and the groups below it are not managed",
                            name);
                break;
        default:
                log_warning("Group %s: its path is %zu bytes, longer than %d: it and the groups "
                            "below it are not managed",
                            name, strlen(path), CGROUP_PATH_MAX - 1);
                break;
        }
        return passed_add(w->s, i, path);
}

/* The most components any glob of globs can match directly ("a/b" two). */
static size_t globs_max_depth(char *const *globs) {
        size_t max = 0;

        for (size_t i = 0; globs && globs[i]; i++) {
                size_t n = 1;

                for (const char *p = globs[i]; *p; p++)
                        n += *p == '/';
                if (n > max)
                        max = n;
        }
        return max;
}

/* This sample's managed groups, sorted by path, with their processes; last sample's states
 * become prev_groups for their usage. */
static int collect_groups(Sampler *s, const Tick *k) {
        GroupState *t = s->prev_groups;
        size_t cap = s->cap_prev_groups;
        WalkCtx w = { .s = s, .k = k };
        int r;

        s->prev_groups = s->groups, s->cap_prev_groups = s->cap_groups;
        s->n_prev_groups = s->n_groups;
        for (size_t i = 0; i < s->n_prev_groups; i++)
                s->prev_groups[i].moved = false; /* their pids stay until the walk is done */
        s->groups = t, s->cap_groups = cap, s->n_groups = 0;

        r = cgroup_walk(s->layout, walk_group, walk_skipped, &w);
        if (r < 0 && r != -ENOMEM) { /* no cpu hierarchy, or its root unreadable: no groups */
                log_debug_errno(r, "Failed to walk the cgroup tree, ignoring: %m");
                r = 0;
        }
        if (r >= 0)
                passed_sweep(s);
        for (size_t i = 0; i < s->n_prev_groups; i++) {
                free(s->prev_groups[i].pids); /* NULL where a quiet group took them */
                s->prev_groups[i].pids = NULL;
                if (!s->prev_groups[i].moved) /* gone since */
                        free(s->prev_groups[i].path);
        }
        s->n_prev_groups = 0;
        if (s->n_groups > 1)
                qsort(s->groups, s->n_groups, sizeof *s->groups, cmp_group);
        return r;
}

/* A counter of the group in usec (its usage, its throttled time) as permyriad of the interval,
 * keeping it in *prev for the next sample. Since boot: over the uptime. */
static uint32_t counter_permyriad(const Sampler *s, const Tick *k, int r, uint64_t now,
                                  bool *has_prev, uint64_t *prev) {
        uint32_t v = 0;

        if (r < 0) {
                *has_prev = false;
                return 0;
        }
        if (s->since_boot) /* since it was made; boot is the best bound we know */
                v = usec_permyriad(now, k->uptime_usec);
        else if (k->deltas && *has_prev)
                v = usec_permyriad(sub_clamped(now, *prev), k->interval_usec);
        *prev = now;
        *has_prev = true;
        return v;
}

/* A quota of quota_usec per period_usec in permyriad of one CPU, rounded to the nearest (the
 * actuator writes permyriad * period / 10000, rounded down): never 0, which is no limit. */
static uint32_t quota_permyriad(uint64_t quota_usec, uint64_t period_usec) {
        unsigned __int128 q;

        if (quota_usec == CGROUP_QUOTA_NONE || period_usec == 0)
                return 0;
        q = ((unsigned __int128) quota_usec * POLICY_LOAD_ONE_CPU + period_usec / 2) / period_usec;
        return q == 0 ? 1 : clamp_u32(q);
}

/* The levers past the weight: what the group has, whether the daemon set it, how much of the
 * interval its own quota held it back. */
static void group_fill_levers(Sampler *s, const Tick *k, GroupState *g, PolicyCgroup *pc) {
        uint64_t quota, period, set;
        bool idle;

        if (cgroup_get_cpu_idle(s->layout, g->path, &idle) >= 0) {
                pc->has_idle = true;
                pc->idle = idle;
                pc->idle_ours =
                        record_lookup_cgroup(k->record, g->path, RECORD_CGROUP_IDLE, NULL, &set) &&
                        set == (uint64_t) idle;
        }
        if (cgroup_get_cpu_quota(s->layout, g->path, &quota, &period) >= 0) {
                pc->quota_permyriad = quota_permyriad(quota, period);
                pc->quota_ours =
                        record_lookup_cgroup(k->record, g->path, RECORD_CGROUP_QUOTA, NULL, &set) &&
                        set == quota;
        }
        pc->partition = partition_of(s, k->record, g->path);
        pc->throttled_permyriad = counter_permyriad(s, k, g->now.throttled_r, g->now.throttled_usec,
                                                    &g->has_throttled, &g->throttled_usec);
}

static void group_fill(Sampler *s, const Tick *k, GroupState *g, PolicyCgroup *pc) {
        uint64_t weight, base;

        *pc = (PolicyCgroup){
                .path = g->path,
                .protected = tunables_cgroup_matches(k->t->protected_cgroups, g->path),
                .weight = CGROUP_WEIGHT_DEFAULT,
        };
        group_read_counters(s, g);
        pc->util_permyriad = counter_permyriad(s, k, g->now.usage_r, g->now.usage_usec,
                                               &g->has_usage, &g->usage_usec);
        if (g->now.psi_r >= 0) {
                uint32_t stalled = counter_permyriad(s, k, 0, g->now.psi.some.total_usec,
                                                     &g->has_stall, &g->stall_usec);

                pc->has_pressure = true;
                pc->pressure_permyriad = k->t->pressure_measure == TUNABLES_PRESSURE_INTERVAL
                                                 ? stalled
                                                 : g->now.psi.some.avg10_permyriad;
        } else
                g->has_stall = false;
        if (cgroup_get_cpu_weight(s->layout, g->path, &weight) >= 0)
                pc->weight = (uint32_t) weight; /* 1..10000 */
        pc->base_weight = pc->weight;
        if (record_lookup_cgroup(k->record, g->path, RECORD_CGROUP_WEIGHT, &base, NULL))
                /* the record keeps native values: cpu.shares on v1 */
                pc->base_weight = (uint32_t) (s->layout->mode == CGROUP_MODE_V2
                                                      ? base
                                                      : cgroup_shares_to_weight(base));
        group_fill_levers(s, k, g, pc);
}

static int sample_groups(Sampler *s, const Tick *k) {
        int r;

        r = collect_groups(s, k);
        if (r < 0)
                return r;
        if (s->n_groups > s->cap_cgroups) {
                PolicyCgroup *p = reallocarray(s->cgroups, s->n_groups, sizeof *p);

                if (!p)
                        return -ENOMEM;
                s->cgroups = p;
                s->cap_cgroups = s->n_groups;
        }
        for (size_t i = 0; i < s->n_groups; i++)
                group_fill(s, k, &s->groups[i], &s->cgroups[i]);
        s->snap.n_cgroups = s->n_groups;
        return 0;
}

/* After the tasks: a group's mean wait per time its tasks were given a CPU (schedstat's
 * run_delay over pcount), of the tasks whose every thread had schedstat. */
static void group_fill_latency(const GroupState *g, PolicyCgroup *pc) {
        pc->has_latency = g->timeslices > 0;
        pc->latency_usec = pc->has_latency ? clamp_u32(g->wait_ns / g->timeslices / 1000u) : 0;
}

/*
 * A quiet group kept the processes of its last visit. If one of them ran (its CPU time moved
 * while the group's usage did not) or is gone, it is no longer (only) this group's: the group's
 * processes are read again, so a task that left is not balanced as this group's.
 */
static int group_recheck(Sampler *s, const Tick *k, GroupState *g) {
        _cleanup_free_ pid_t *pids = NULL;
        bool changed = false;
        size_t n = 0;
        int r;

        for (size_t j = 0; j < g->n_pids && !changed; j++) {
                TaskState *e = task_lookup(s, g->pids[j]);
                uint64_t ns;

                /* those not read lazily (excluded, never sampled) tell nothing */
                changed = e && e->has_cpu_ns && (task_cpu_ns(s, e, &ns) < 0 || ns != e->cpu_ns);
        }
        if (!changed)
                return 0;
        g->quiet = false;
        r = cgroup_list_procs(s->layout, g->path, /* recursive= */ false, &pids, &n);
        if (r == -ENOMEM)
                return r;
        if (r < 0) /* removed since the walk: no processes */
                n = 0;
        free(g->pids);
        g->pids = TAKE_PTR(pids);
        g->n_pids = n;
        g->visit_usec = k->now_usec;
        return 0;
}

static int sample_tasks(Sampler *s, const Tick *k) {
        for (size_t i = 0; i < s->n_groups; i++) {
                if (s->groups[i].quiet) {
                        int r = group_recheck(s, k, &s->groups[i]);

                        if (r < 0)
                                return r;
                }
                for (size_t j = 0; j < s->groups[i].n_pids; j++) {
                        int r = sample_task(s, k, s->groups[i].pids[j], i);

                        if (r < 0)
                                return r;
                }
                group_fill_latency(&s->groups[i], &s->cgroups[i]);
        }
        return 0;
}

/* ---- system */

static void sample_psi(Sampler *s) {
        int r;

        r = psi_read_at(s->proc_fd, "pressure/cpu", &s->sys.cpu);
        s->sys.has_psi = r >= 0;
        if (r < 0) {
                if (!s->said_no_psi)
                        log_debug_errno(r, "No system pressure (/proc/pressure/cpu): %m");
                s->said_no_psi = true;
                return;
        }
        if (psi_read_at(s->proc_fd, "pressure/io", &s->sys.io) < 0)
                s->sys.io = (PsiStats){};
        if (psi_read_at(s->proc_fd, "pressure/memory", &s->sys.memory) < 0)
                s->sys.memory = (PsiStats){};
}

/* The interval the sample covers; k->deltas false when it can only prime. */
static int sample_interval(Sampler *s, uint64_t now_usec, Tick *k) {
        int r;

        if (s->since_boot) {
                r = proc_uptime_read_at(s->proc_fd, &k->uptime_usec);
                if (r < 0)
                        return r;
                k->deltas = k->uptime_usec > 0;
                k->interval_usec = k->uptime_usec;
        } else if (s->prev_stat && now_usec > s->prev_usec) {
                k->deltas = true;
                k->interval_usec = now_usec - s->prev_usec;
        }
        return 0;
}

int sampler_sample(Sampler *s, const Tunables *t, const Record *record, uint64_t now_usec,
                   const PolicySnapshot **ret_snap, const SamplerSystem **ret_system) {
        _cleanup_proc_stat_ ProcStat *stat = NULL;
        uint64_t t0 = clock_usec(CLOCK_THREAD_CPUTIME_ID);
        Tick k = { .t = t, .record = record };
        int r;

        if (!s || !t || !ret_snap || !ret_system)
                return -EINVAL;
        r = proc_stat_read_at(s->proc_fd, &stat);
        if (r >= 0)
                r = sample_interval(s, now_usec, &k);
        if (r < 0)
                return r;
        k.max_depth = globs_max_depth(t->cgroups);
        k.now_usec = now_usec;
        k.clocks = t->sample_refresh_usec > 0 && !s->since_boot;
        k.lazy = k.clocks && k.deltas;
        /* 1% of a CPU over the interval, and in a recorded tree the two ticks its per-process
         * times may be off by from the threads' (each of utime and stime rounds down). */
        k.slack_ns = MAX(k.interval_usec * 10u, UINT64_C(1000000)) +
                     (s->live ? 0 : 2 * (UINT64_C(1000000000) / s->clk_tck));
        if (++s->gen == 0)
                s->gen = 1;
        s->snap = (PolicySnapshot){ .interval_usec = k.deltas ? k.interval_usec : 0 };
        partitions_clear(s);
        s->sys = (SamplerSystem){ .procs_running = stat->procs_running };
        s->maps_left = MAPS_PER_SAMPLE;
        sample_cpus(s, stat, k.deltas);
        sample_psi(s);
        r = sample_groups(s, &k);
        if (r >= 0)
                r = sample_tasks(s, &k);
        if (r >= 0)
                r = task_sweep(s);
        if (r < 0)
                return r;
        proc_stat_free(s->prev_stat);
        s->prev_stat = TAKE_PTR(stat);
        s->prev_usec = now_usec;

        s->snap.cpus = s->cpus;
        s->snap.n_cpus = s->cpu_capacity;
        s->snap.tasks = s->tasks;
        s->snap.cgroups = s->cgroups;
        s->sys.n_cgroups = (unsigned) s->snap.n_cgroups;
        s->sys.n_tasks = (unsigned) s->snap.n_tasks;
        s->sys.sample_usec = clock_usec(CLOCK_THREAD_CPUTIME_ID) - t0;
        *ret_snap = &s->snap;
        *ret_system = &s->sys;
        return 0;
}
