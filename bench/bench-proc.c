/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What sampling every task costs. Parks 1,000 then 10,000 real threads and times, per thread:
 *   floor   openat + read + close of PID/task/TID/stat, path prepared in advance, no parsing
 *   reader  proc_task_stat_read_at(): path, open, read, close, parse
 *   pread   proc_task_stat_pread() on an fd opened once (the open is timed apart)
 *   parse   proc_task_stat_parse() alone, on each thread's line read beforehand
 * Each is the median (and the best) of REPS passes over all threads, in ns per task. Then the
 * sources that cover a whole process or group in one call, for a sampler that reads less (issue
 * 22): the process's CPU-time clock (clock_getcpuclockid(): the kernel sums its threads' CPU
 * time, in ns, no fd), its own stat file (the same sum in ticks), its task directory listed (what
 * finding its threads costs), taskstats by TGID over generic netlink (run and delay totals
 * summed; needs CAP_NET_ADMIN, and the delays need kernel.task_delayacct), and the group's usage
 * file: ns per call and per thread covered.
 *
 * A measurement, not a test: exits 0 unless the threads cannot be set up.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "fileio.h"
#include "proc.h"
#include "support.h"

#define REPS 11
#define STACK_BYTES (64u * 1024u)

static const unsigned thread_counts[] = { 1000, 10000 };

/* ---- parked threads */

static uint32_t release_threads; /* futex word: 0 parked, 1 go */
static unsigned threads_started;

typedef struct Parked {
        pthread_t thread;
        pid_t tid;
} Parked;

static void *park(void *arg) {
        Parked *p = arg;

        __atomic_store_n(&p->tid, gettid(), __ATOMIC_RELEASE);
        __atomic_add_fetch(&threads_started, 1, __ATOMIC_RELEASE);
        /* Sleep in the kernel, not spinning: the measured reads must not compete for CPUs. */
        while (__atomic_load_n(&release_threads, __ATOMIC_ACQUIRE) == 0)
                (void) syscall(SYS_futex, &release_threads, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        return NULL;
}

/* Starts threads [from, to) of parked; returns how many started before a failure. */
static unsigned spawn(Parked *parked, unsigned from, unsigned to, int *ret_error) {
        pthread_attr_t attr;
        unsigned i;

        *ret_error = 0;
        if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, STACK_BYTES) != 0) {
                *ret_error = EINVAL;
                return from;
        }
        for (i = from; i < to; i++) {
                *ret_error = pthread_create(&parked[i].thread, &attr, park, &parked[i]);
                if (*ret_error != 0)
                        break;
        }
        (void) pthread_attr_destroy(&attr);
        while (__atomic_load_n(&threads_started, __ATOMIC_ACQUIRE) < i)
                (void) usleep(1000);
        return i;
}

static void release_all(Parked *parked, unsigned n) {
        __atomic_store_n(&release_threads, 1, __ATOMIC_RELEASE);
        (void) syscall(SYS_futex, &release_threads, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
        for (unsigned i = 0; i < n; i++)
                (void) pthread_join(parked[i].thread, NULL);
}

/* ---- timing */

typedef struct Run {
        int proc_fd;
        pid_t pid;
        const Parked *parked;
        char (*paths)[48];
        int *fds;
        char **lines;
        unsigned n;
        unsigned failures;
} Run;

static uint64_t pass_floor(Run *r) {
        char buf[PROC_TASK_STAT_BUF_SIZE];
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                int fd = openat(r->proc_fd, r->paths[i], O_RDONLY | O_CLOEXEC);

                if (fd < 0 || read(fd, buf, sizeof buf) <= 0)
                        r->failures++;
                if (fd >= 0)
                        (void) close(fd);
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

static uint64_t pass_reader(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                TaskStat s;

                if (proc_task_stat_read_at(r->proc_fd, r->pid, r->parked[i].tid, &s) < 0)
                        r->failures++;
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

static uint64_t pass_pread(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                TaskStat s;

                if (proc_task_stat_pread(r->fds[i], &s) < 0)
                        r->failures++;
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

static uint64_t pass_parse(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                TaskStat s;

                if (proc_task_stat_parse(r->lines[i], &s) < 0)
                        r->failures++;
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

/* Each thread's stat line, for the parse-only pass. */
static int read_lines(Run *r) {
        for (unsigned i = 0; i < r->n; i++) {
                char buf[PROC_TASK_STAT_BUF_SIZE];
                ssize_t n;

                free(r->lines[i]);
                r->lines[i] = NULL;
                n = pread(r->fds[i], buf, sizeof buf - 1, 0);
                if (n <= 0)
                        return -EIO;
                buf[n] = '\0';
                r->lines[i] = strdup(buf);
                if (!r->lines[i])
                        return -ENOMEM;
        }
        return 0;
}

/* Opens the kept fds; returns the time it took, or 0 on failure (fds closed). */
static uint64_t open_kept_fds(Run *r) {
        uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

        for (unsigned i = 0; i < r->n; i++) {
                r->fds[i] = proc_task_stat_open_at(r->proc_fd, r->pid, r->parked[i].tid);
                if (r->fds[i] < 0) {
                        fprintf(stderr, "bench-proc: opening stat of tid %d: %s\n",
                                (int) r->parked[i].tid, strerror(-r->fds[i]));
                        while (i > 0)
                                (void) close(r->fds[--i]);
                        return 0;
                }
        }
        return clock_nsec(CLOCK_MONOTONIC) - t0;
}

typedef enum Variant { FLOOR, READER, PREAD, PARSE, _VARIANT_MAX } Variant;

static const char *const variant_names[_VARIANT_MAX] = {
        [FLOOR] = "floor   open+read+close, no parsing",
        [READER] = "reader  proc_task_stat_read_at()",
        [PREAD] = "pread   kept fd, proc_task_stat_pread()",
        [PARSE] = "parse   proc_task_stat_parse() alone",
};

/* Medians decide; the best pass shows how much of the spread is noise from other load. */
static void print_table(unsigned n, uint64_t passes[_VARIANT_MAX][REPS], uint64_t open_ns) {
        double med[_VARIANT_MAX];

        printf("\n%u threads: ns per task over %d passes\n", n, REPS);
        printf("  %-40s %8s %8s %9s\n", "variant", "median", "best", "vs floor");
        for (Variant v = 0; v < _VARIANT_MAX; v++) {
                double best;

                if (open_ns == 0 && (v == PREAD || v == PARSE)) {
                        printf("  %-40s %8s\n", variant_names[v], "n/a");
                        continue;
                }
                med[v] = (double) bench_median_u64(passes[v], REPS) / n;
                best = (double) passes[v][0] / n; /* sorted by bench_median_u64() */
                printf("  %-40s %8.0f %8.0f %9.2f\n", variant_names[v], med[v], best,
                       med[v] / med[FLOOR]);
        }
        if (open_ns)
                printf("  %-40s %8.0f\n", "(first open of each kept fd, once)",
                       (double) open_ns / n);
}

/* REPS passes of each variant, interleaved so that drift hits all of them alike. */
static void measure(Run *r) {
        uint64_t passes[_VARIANT_MAX][REPS] = {}, open_ns;

        open_ns = open_kept_fds(r);
        if (open_ns && read_lines(r) < 0)
                r->failures++;
        for (int k = 0; k < REPS; k++) {
                passes[FLOOR][k] = pass_floor(r);
                passes[READER][k] = pass_reader(r);
                if (open_ns) {
                        passes[PREAD][k] = pass_pread(r);
                        passes[PARSE][k] = pass_parse(r);
                }
        }
        if (open_ns)
                for (unsigned i = 0; i < r->n; i++)
                        (void) close(r->fds[i]);
        print_table(r->n, passes, open_ns);
        if (r->failures)
                printf("  (%u reads failed)\n", r->failures);
}

/* ---- the sources that cover a whole process or group in one call (issue 22: read less) */

/* netlink's NLA_ macros are int arithmetic on sizes: these are the same in size_t. */
#define ATTR_HDR sizeof(struct nlattr)
static size_t attr_align(size_t n) {
        return (n + 3u) & ~(size_t) 3u;
}

/* One generic netlink request (a header and one u32 or string attribute) and its answer. */
typedef struct NlReq {
        struct nlmsghdr n;
        struct genlmsghdr g;
        char attrs[256];
} NlReq;

static void nl_put(NlReq *q, uint16_t type, const void *data, size_t len) {
        struct nlattr *a = (struct nlattr *) ((char *) q + attr_align(q->n.nlmsg_len));

        a->nla_type = type;
        a->nla_len = (uint16_t) (ATTR_HDR + len);
        memcpy((char *) a + ATTR_HDR, data, len);
        q->n.nlmsg_len = (uint32_t) (attr_align(q->n.nlmsg_len) + attr_align(a->nla_len));
}

/* Sends q on fd and reads the answer into buf; its length, or -errno (a netlink error too). */
static ssize_t nl_call(int fd, NlReq *q, char *buf, size_t size) {
        struct nlmsghdr *h = (struct nlmsghdr *) buf;
        ssize_t n;

        if (send(fd, q, q->n.nlmsg_len, 0) < 0)
                return -errno;
        n = recv(fd, buf, size, 0);
        if (n < 0)
                return -errno;
        if (!NLMSG_OK(h, (size_t) n))
                return -EBADMSG;
        if (h->nlmsg_type == NLMSG_ERROR)
                return ((struct nlmsgerr *) NLMSG_DATA(h))->error ?: -EBADMSG;
        return n;
}

/* The attribute of type in [p, p + len), or NULL. */
static const struct nlattr *nl_find(const char *p, size_t len, uint16_t type) {
        while (len >= ATTR_HDR) {
                const struct nlattr *a = (const struct nlattr *) p;

                if (a->nla_len < ATTR_HDR || a->nla_len > len)
                        return NULL;
                if ((a->nla_type & NLA_TYPE_MASK) == type)
                        return a;
                len -= MIN(len, (size_t) attr_align(a->nla_len));
                p += attr_align(a->nla_len);
        }
        return NULL;
}

/* The TASKSTATS family id on fd, or -errno. */
static int taskstats_family(int fd) {
        NlReq q = { .n = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
                           .nlmsg_type = GENL_ID_CTRL,
                           .nlmsg_flags = NLM_F_REQUEST },
                    .g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };
        char buf[4096];
        const struct nlattr *a;
        ssize_t n;

        nl_put(&q, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof TASKSTATS_GENL_NAME);
        n = nl_call(fd, &q, buf, sizeof buf);
        if (n < 0)
                return (int) n;
        a = nl_find(buf + NLMSG_HDRLEN + GENL_HDRLEN, (size_t) n - NLMSG_HDRLEN - GENL_HDRLEN,
                    CTRL_ATTR_FAMILY_ID);
        return a ? *(const uint16_t *) ((const char *) a + ATTR_HDR) : -ENOENT;
}

/* The whole process's taskstats (every thread's run and delay totals summed by the kernel). */
static int taskstats_tgid(int fd, int family, pid_t tgid, struct taskstats *ret) {
        NlReq q = { .n = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
                           .nlmsg_type = (uint16_t) family,
                           .nlmsg_flags = NLM_F_REQUEST },
                    .g = { .cmd = TASKSTATS_CMD_GET, .version = TASKSTATS_VERSION } };
        uint32_t id = (uint32_t) tgid;
        char buf[4096];
        const struct nlattr *aggr, *st;
        ssize_t n;

        nl_put(&q, TASKSTATS_CMD_ATTR_TGID, &id, sizeof id);
        n = nl_call(fd, &q, buf, sizeof buf);
        if (n < 0)
                return (int) n;
        aggr = nl_find(buf + NLMSG_HDRLEN + GENL_HDRLEN, (size_t) n - NLMSG_HDRLEN - GENL_HDRLEN,
                       TASKSTATS_TYPE_AGGR_TGID);
        st = aggr ? nl_find((const char *) aggr + ATTR_HDR, aggr->nla_len - ATTR_HDR,
                            TASKSTATS_TYPE_STATS)
                  : NULL;
        if (!st)
                return -EBADMSG;
        memset(ret, 0, sizeof *ret);
        memcpy(ret, (const char *) st + ATTR_HDR,
               MIN(sizeof *ret, (size_t) st->nla_len - ATTR_HDR));
        return 0;
}

/* The bench's own cgroup usage file: cpuacct.usage (v1) or cpu.stat (v2), where the layout has
 * them; -errno. */
static int open_own_usage(char *what, size_t size) {
        _cleanup_free_ char *text = NULL;
        CgroupLayout l;
        _cleanup_free_ char *path = NULL;
        const char *line, *dir;
        bool v1;
        int fd, r;

        r = cgroup_layout_detect(&l);
        if (r < 0)
                return r;
        v1 = l.cpuacct_path[0] != '\0';
        dir = v1 ? l.cpuacct_path : l.unified_path;
        if (!dir[0])
                return -ENOENT;
        r = read_full_at(AT_FDCWD, "/proc/self/cgroup", 1 << 16, &text, NULL);
        if (r < 0)
                return r;
        line = v1 ? strstr(text, "cpuacct:") : strstr(text, "0::");
        if (!line)
                return -ENOENT;
        line = strchr(line, ':') + 1;
        if (!v1)
                line++;
        if (asprintf(&path, "%s%.*s/%s", dir, (int) strcspn(line, "\n"), line,
                     v1 ? "cpuacct.usage" : "cpu.stat") < 0)
                return -ENOMEM;
        (void) snprintf(what, size, "%s",
                        v1 ? "cpuacct.usage (the group's CPU time)"
                           : "cpu.stat (the group's CPU time)");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

/* Median ns of REPS calls of each per-process source, with n threads parked in this process. */
static void measure_sources(unsigned n, int proc_fd) {
        char buf[PROC_TASK_STAT_BUF_SIZE], usage_what[64] = "group usage";
        uint64_t t[5][REPS] = {};
        clockid_t clock;
        struct timespec ts_now;
        int has_clock = clock_getcpuclockid(getpid(), &clock);
        int stat_fd = openat(proc_fd, "self/stat", O_RDONLY | O_CLOEXEC);
        int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
        int usage_fd = open_own_usage(usage_what, sizeof usage_what);
        int family = nl >= 0 ? taskstats_family(nl) : -errno, ts = family;
        struct taskstats st = {};

        if (family >= 0)
                ts = taskstats_tgid(nl, family, getpid(), &st);
        for (int k = 0; k < REPS; k++) {
                uint64_t t0 = clock_nsec(CLOCK_MONOTONIC);

                if (stat_fd >= 0)
                        (void) pread(stat_fd, buf, sizeof buf, 0);
                t[0][k] = clock_nsec(CLOCK_MONOTONIC) - t0;
                t0 = clock_nsec(CLOCK_MONOTONIC);
                if (ts >= 0)
                        (void) taskstats_tgid(nl, family, getpid(), &st);
                t[1][k] = clock_nsec(CLOCK_MONOTONIC) - t0;
                t0 = clock_nsec(CLOCK_MONOTONIC);
                if (usage_fd >= 0)
                        (void) pread(usage_fd, buf, sizeof buf, 0);
                t[2][k] = clock_nsec(CLOCK_MONOTONIC) - t0;
                t0 = clock_nsec(CLOCK_MONOTONIC);
                if (has_clock == 0)
                        (void) clock_gettime(clock, &ts_now);
                t[3][k] = clock_nsec(CLOCK_MONOTONIC) - t0;
                t0 = clock_nsec(CLOCK_MONOTONIC);
                {
                        _cleanup_free_ pid_t *tids = NULL;
                        size_t n_tids;

                        (void) proc_task_list_at(proc_fd, getpid(), &tids, &n_tids);
                }
                t[4][k] = clock_nsec(CLOCK_MONOTONIC) - t0;
        }
        printf("\n%u threads in one process: one call covers them all (ns per call, median of "
               "%d)\n",
               n, REPS);
        printf("  %-46s %10s %10s\n", "source (what it gives)", "per call", "per thread");
        if (has_clock == 0)
                printf("  %-46s %10.0f %10.1f\n", "CPU-time clock (CPU time of all threads)",
                       (double) bench_median_u64(t[3], REPS),
                       (double) bench_median_u64(t[3], REPS) / n);
        else
                printf("  %-46s %10s  (%s)\n", "CPU-time clock (CPU time of all threads)", "n/a",
                       strerror(has_clock));
        printf("  %-46s %10.0f %10.1f\n", "PID/stat, kept fd (CPU time of all threads)",
               (double) bench_median_u64(t[0], REPS), (double) bench_median_u64(t[0], REPS) / n);
        printf("  %-46s %10.0f %10.1f\n", "PID/task/ listed (the thread ids)",
               (double) bench_median_u64(t[4], REPS), (double) bench_median_u64(t[4], REPS) / n);
        if (ts >= 0)
                printf("  %-46s %10.0f %10.1f\n", "taskstats TGID (run and delay totals)",
                       (double) bench_median_u64(t[1], REPS),
                       (double) bench_median_u64(t[1], REPS) / n);
        else
                printf("  %-46s %10s  (%s)\n", "taskstats TGID (run and delay totals)", "n/a",
                       strerror(-ts));
        if (usage_fd >= 0)
                printf("  %-46s %10.0f %10.1f\n", usage_what, (double) bench_median_u64(t[2], REPS),
                       (double) bench_median_u64(t[2], REPS) / n);
        else
                printf("  %-46s %10s  (%s)\n", usage_what, "n/a", strerror(-usage_fd));
        if (ts >= 0)
                printf("  (taskstats: cpu_delay_total %llu ns%s)\n",
                       (unsigned long long) st.cpu_delay_total,
                       st.cpu_delay_total == 0 ? ", zero: delay accounting is off "
                                                 "(kernel.task_delayacct)"
                                               : "");
        if (stat_fd >= 0)
                (void) close(stat_fd);
        if (nl >= 0)
                (void) close(nl);
        if (usage_fd >= 0)
                (void) close(usage_fd);
}

/* The kept-fd variant holds one fd per thread. */
static void raise_fd_limit(unsigned need) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
                rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

static int run_all(Parked *parked, int proc_fd, char (*paths)[48], int *fds, char **lines,
                   unsigned *started) {
        pid_t pid = getpid();

        for (size_t c = 0; c < ELEMENTSOF(thread_counts); c++) {
                unsigned n = thread_counts[c];
                int err;
                Run r = { .proc_fd = proc_fd,
                          .pid = pid,
                          .parked = parked,
                          .paths = paths,
                          .fds = fds,
                          .lines = lines,
                          .n = n };

                (void) fflush(stdout); /* the table so far, before any error on stderr */
                *started = spawn(parked, *started, n, &err);
                if (*started < n) {
                        fprintf(stderr,
                                "bench-proc: created %u of %u threads: %s (check ulimit -u, "
                                "kernel.threads-max, the pids cgroup, memory)\n",
                                *started, n, strerror(err));
                        return -err;
                }
                for (unsigned i = 0; i < n; i++)
                        (void) snprintf(paths[i], sizeof paths[i], "%d/task/%d/stat", (int) pid,
                                        (int) parked[i].tid);
                measure(&r);
                measure_sources(n, proc_fd);
        }
        return 0;
}

int main(void) {
        unsigned max = thread_counts[ELEMENTSOF(thread_counts) - 1], started = 0;
        _cleanup_free_ Parked *parked = calloc(max, sizeof *parked);
        _cleanup_free_ char(*paths)[48] = calloc(max, sizeof *paths);
        _cleanup_free_ int *fds = calloc(max, sizeof *fds);
        _cleanup_free_ char **lines = calloc(max, sizeof *lines);
        _cleanup_close_ int proc_fd = -EBADF;
        int r;

        if (!parked || !paths || !fds || !lines) {
                fprintf(stderr, "bench-proc: out of memory\n");
                return 1;
        }
        proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (proc_fd < 0) {
                fprintf(stderr, "bench-proc: open /proc: %m\n");
                return 1;
        }
        raise_fd_limit(max + 64);
        printf("bench-proc: reading PID/task/TID/stat of parked threads, %ld CPUs\n",
               sysconf(_SC_NPROCESSORS_ONLN));
        r = run_all(parked, proc_fd, paths, fds, lines, &started);
        release_all(parked, started);
        for (unsigned i = 0; i < max; i++)
                free(lines[i]);
        return r < 0 ? 1 : 0;
}
