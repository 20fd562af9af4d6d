/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "parse.h"

/* The fields of a stat line we need run up to policy (41); the kernel prints 52 today. */
#define TASK_STAT_FIELDS_MIN 41u
/* A cgroup.procs of 4M pids is 32 MiB; anything bigger than this is not a /proc or cgroup file. */
#define READ_FILE_MAX (64u * 1024u * 1024u)

/* ---- reading */

/* ENOENT below proc_fd/PID/ means the pid or tid directory went away: the task exited. */
static int task_errno(int r) {
        return r == -ENOENT ? -ESRCH : r;
}

/* The decimal digits of v at p; returns the end. */
static char *format_uint(char *p, unsigned v) {
        char digits[10];
        size_t n = 0;

        do {
                digits[n++] = (char) ('0' + v % 10);
                v /= 10;
        } while (v > 0);
        while (n > 0)
                *p++ = digits[--n];
        return p;
}

/*
 * "PID/task/TID/file", or "PID/file" when tid is 0. By hand: snprintf() took 165 ns here, as
 * long as parsing the line, and this runs for every task every tick.
 */
static int task_path(char *buf, size_t size, pid_t pid, pid_t tid, const char *file) {
        size_t len = strlen(file);
        char *p = buf;

        if (pid <= 0 || tid < 0)
                return -EINVAL;
        if (size < sizeof "2147483647/task/2147483647/" + len)
                return -ENAMETOOLONG;
        p = format_uint(p, (unsigned) pid);
        if (tid > 0) {
                memcpy(p, "/task/", 6);
                p = format_uint(p + 6, (unsigned) tid);
        }
        *p++ = '/';
        memcpy(p, file, len + 1);
        return 0;
}

/* Opens proc_fd/PID/task/TID/file (PID/file if tid is 0) for reading: the fd, or -ENOENT (not
 * mapped to -ESRCH: the caller may look further) and the other errors of openat(). */
static int task_file_open_at(int proc_fd, pid_t pid, pid_t tid, const char *file) {
        char path[64];
        int fd, r;

        r = task_path(path, sizeof path, pid, tid, file);
        if (r < 0)
                return r;
        fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? negative_errno() : fd;
}

/*
 * Reads fd from offset 0 into buf (at most size - 1 bytes) and NUL-terminates it. pread, so a
 * kept fd re-reads from the start. Stops at EOF, or after a chunk that ends in a newline: a stat
 * line is one line, and this saves the read() that would only return 0. -EBADMSG if the text
 * fills buf or holds a NUL (it cannot be a stat line then), -EBADF for a negative fd.
 */
static int read_line_fd(int fd, char *buf, size_t size) {
        size_t len = 0;

        if (fd < 0)
                return -EBADF;
        for (;;) {
                ssize_t n = pread(fd, buf + len, size - 1 - len, (off_t) len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                len += (size_t) n;
                if (n == 0 || buf[len - 1] == '\n')
                        break;
                if (len == size - 1)
                        return -EBADMSG;
        }
        buf[len] = '\0';
        if (memchr(buf, '\0', len))
                return -EBADMSG;
        return 0;
}

/* Reads a whole file into a malloc'ed, NUL-terminated buffer. -EBADMSG if it holds a NUL. */
static int read_file_at(int dirfd, const char *path, char **ret) {
        return read_text_at(dirfd, path, READ_FILE_MAX, ret, NULL);
}

/* ---- numbers */

/* Not isdigit(): the kernel writes ASCII whatever the daemon's locale. */
static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static bool is_alpha(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Decimal digits at *p (at least one, no sign); -EBADMSG if none or on overflow. */
static int parse_u64(const char **p, uint64_t *ret) {
        return parse_u64_prefix(p, UINT64_MAX, ret) < 0 ? -EBADMSG : 0;
}

static int cmp_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return (x > y) - (x < y);
}

/* Sorts ids and drops duplicates; returns the new count. */
static size_t sort_unique(pid_t *ids, size_t n) {
        size_t k = 0;

        if (n == 0)
                return 0;
        qsort(ids, n, sizeof *ids, cmp_pid);
        for (size_t i = 1; i < n; i++)
                if (ids[i] != ids[k])
                        ids[++k] = ids[i];
        return k + 1;
}

/* ---- /proc/stat */

ProcStat *proc_stat_free(ProcStat *s) {
        if (s) {
                free(s->cpus);
                free(s);
        }
        return NULL;
}

/* The columns of a cpu line, starting at the blanks after its name and ending at eol. */
static int parse_cpu_times(const char *p, const char *eol, CpuTimes *ret) {
        CpuTimes t = { .present = true };
        size_t n = 0;

        while (p < eol) {
                uint64_t v;

                if (*p != ' ')
                        return -EBADMSG;
                while (*p == ' ')
                        p++;
                if (parse_u64(&p, &v) < 0)
                        return -EBADMSG;
                if (n < _CPU_TIME_MAX)
                        t.ticks[n] = v;
                n++;
        }
        if (n < _CPU_TIME_MAX)
                return -EBADMSG;
        *ret = t;
        return 0;
}

/* Makes room for CPU id in s->cpus; *cap is the allocated count, new entries are absent. */
static int stat_grow(ProcStat *s, unsigned *cap, unsigned id) {
        CpuTimes *c;
        unsigned n;

        if (id >= CPUMASK_MAX_CPUS)
                return -EBADMSG;
        if (id < *cap)
                return 0;
        n = *cap ? *cap * 2 : 64;
        if (n <= id)
                n = id + 1;
        c = reallocarray(s->cpus, n, sizeof *c);
        if (!c)
                return -ENOMEM;
        memset(c + *cap, 0, (n - *cap) * sizeof *c);
        s->cpus = c;
        *cap = n;
        return 0;
}

/* "cpuN ..." with p after "cpu". Duplicate ids are malformed. */
static int parse_cpu_n_line(ProcStat *s, unsigned *cap, const char *p, const char *eol) {
        uint64_t id;
        int r;

        if (parse_u64(&p, &id) < 0 || id >= CPUMASK_MAX_CPUS)
                return -EBADMSG;
        r = stat_grow(s, cap, (unsigned) id);
        if (r < 0)
                return r;
        if (s->cpus[id].present)
                return -EBADMSG;
        r = parse_cpu_times(p, eol, &s->cpus[id]);
        if (r < 0)
                return r;
        if (id >= s->n_cpus)
                s->n_cpus = (unsigned) id + 1;
        return 0;
}

/* "key N\n": one number after exactly one space. */
static int parse_counter_line(const char *p, const char *eol, bool *seen, uint64_t *ret) {
        if (*seen || *p != ' ')
                return -EBADMSG;
        p++;
        if (parse_u64(&p, ret) < 0 || p != eol)
                return -EBADMSG;
        *seen = true;
        return 0;
}

static bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

typedef struct StatSeen {
        bool running, blocked;
} StatSeen;

static int parse_stat_line(ProcStat *s, unsigned *cap, StatSeen *seen, const char *line,
                           const char *eol) {
        if (startswith(line, "cpu ")) {
                if (s->total.present)
                        return -EBADMSG;
                return parse_cpu_times(line + 3, eol, &s->total);
        }
        if (startswith(line, "cpu") && is_digit(line[3]))
                return parse_cpu_n_line(s, cap, line + 3, eol);
        if (startswith(line, "procs_running"))
                return parse_counter_line(line + 13, eol, &seen->running, &s->procs_running);
        if (startswith(line, "procs_blocked"))
                return parse_counter_line(line + 13, eol, &seen->blocked, &s->procs_blocked);
        return 0; /* intr, ctxt, btime, softirq...: not ours, and kernels add lines */
}

int proc_stat_parse(const char *buf, ProcStat **ret) {
        _cleanup_proc_stat_ ProcStat *s = NULL;
        StatSeen seen = {};
        unsigned cap = 0;
        int r;

        if (!buf)
                return -EINVAL;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        for (const char *line = buf; *line;) {
                const char *eol = strchr(line, '\n');

                if (!eol) /* the last line was cut */
                        return -EBADMSG;
                r = parse_stat_line(s, &cap, &seen, line, eol);
                if (r < 0) {
                        log_debug_errno(r, "Bad /proc/stat line %.*s: %m", (int) (eol - line),
                                        line);
                        return r;
                }
                line = eol + 1;
        }
        if (!s->total.present || !seen.running || !seen.blocked)
                return -EBADMSG;
        *ret = TAKE_PTR(s);
        return 0;
}

int proc_stat_read_at(int proc_fd, ProcStat **ret) {
        _cleanup_free_ char *buf = NULL;
        int r;

        r = read_file_at(proc_fd, "stat", &buf);
        if (r < 0)
                return r;
        return proc_stat_parse(buf, ret);
}

const CpuTimes *proc_stat_cpu(const ProcStat *s, unsigned cpu) {
        if (!s || cpu >= s->n_cpus || !s->cpus[cpu].present)
                return NULL;
        return &s->cpus[cpu];
}

static uint64_t tick_delta(const CpuTimes *prev, const CpuTimes *cur, CpuTime t) {
        return cur->ticks[t] > prev->ticks[t] ? cur->ticks[t] - prev->ticks[t] : 0;
}

int cpu_times_delta(const CpuTimes *prev, const CpuTimes *cur, CpuTicksDelta *ret) {
        static const CpuTime busy[] = { CPU_TIME_USER, CPU_TIME_NICE,    CPU_TIME_SYSTEM,
                                        CPU_TIME_IRQ,  CPU_TIME_SOFTIRQ, CPU_TIME_STEAL };
        uint64_t b = 0, idle;

        if (!prev || !cur || !prev->present || !cur->present)
                return -ENODEV;
        for (size_t i = 0; i < ELEMENTSOF(busy); i++)
                b += tick_delta(prev, cur, busy[i]);
        idle = tick_delta(prev, cur, CPU_TIME_IDLE) + tick_delta(prev, cur, CPU_TIME_IOWAIT);
        *ret = (CpuTicksDelta){ .busy_ticks = b, .total_ticks = b + idle };
        return 0;
}

int cpu_ticks_util_permyriad(const CpuTicksDelta *d, unsigned *ret_util_permyriad) {
        unsigned __int128 busy = d->busy_ticks;

        if (d->total_ticks == 0)
                return -ENODATA;
        if (busy > d->total_ticks) /* only a hand-made delta can say so */
                busy = d->total_ticks;
        *ret_util_permyriad = (unsigned) (busy * 10000u / d->total_ticks);
        return 0;
}

int proc_stat_util_permyriad(const ProcStat *prev, const ProcStat *cur, unsigned cpu,
                             unsigned *ret_util_permyriad) {
        const CpuTimes *a, *b;
        CpuTicksDelta d;
        int r;

        if (!prev || !cur)
                return -EINVAL;
        a = cpu == PROC_STAT_CPU_TOTAL ? &prev->total : proc_stat_cpu(prev, cpu);
        b = cpu == PROC_STAT_CPU_TOTAL ? &cur->total : proc_stat_cpu(cur, cpu);
        r = cpu_times_delta(a, b, &d);
        if (r < 0)
                return r;
        return cpu_ticks_util_permyriad(&d, ret_util_permyriad);
}

/* ---- /proc/PID/task/TID/stat */

/* The fields of a stat line we keep, as bits of their 1-based numbers. */
#define FIELD_BIT(n) (UINT64_C(1) << (n))
#define TASK_STAT_KEPT                                                                 \
        (FIELD_BIT(4) | FIELD_BIT(9) | FIELD_BIT(14) | FIELD_BIT(15) | FIELD_BIT(19) | \
         FIELD_BIT(20) | FIELD_BIT(22) | FIELD_BIT(39) | FIELD_BIT(40) | FIELD_BIT(41))

/*
 * The numeric fields after the state, each " N" or " -N", then "\n" and the end of the text.
 * Kept fields go to v[] (1-based), their signs to the bits of *ret_negative. The others are
 * checked for form only: most of the line's digits are addresses we never use, and scanning
 * them is cheaper than converting them (the daemon parses thousands of lines per tick).
 */
static int parse_task_fields(const char *p, uint64_t v[static TASK_STAT_FIELDS_MIN + 1],
                             uint64_t *ret_negative) {
        uint64_t negative = 0;
        unsigned n = 3;

        while (*p != '\n') {
                bool minus;

                if (*p != ' ')
                        return -EBADMSG;
                p++;
                minus = *p == '-';
                if (minus)
                        p++;
                if (++n <= TASK_STAT_FIELDS_MIN && (TASK_STAT_KEPT & FIELD_BIT(n))) {
                        if (parse_u64(&p, &v[n]) < 0)
                                return -EBADMSG;
                        if (minus)
                                negative |= FIELD_BIT(n);
                        continue;
                }
                if (!is_digit(*p))
                        return -EBADMSG;
                while (is_digit(*p))
                        p++;
        }
        if (n < TASK_STAT_FIELDS_MIN || p[1] != '\0')
                return -EBADMSG;
        *ret_negative = negative;
        return 0;
}

/* The fields we keep are unsigned except nice; ranges as the kernel prints them. */
static int task_stat_fill(const uint64_t v[static TASK_STAT_FIELDS_MIN + 1], uint64_t negative,
                          TaskStat *s) {
        bool nice_negative = negative & FIELD_BIT(19);

        if (negative & (TASK_STAT_KEPT & ~FIELD_BIT(19)))
                return -EBADMSG;
        if (v[4] > INT_MAX || v[9] > UINT_MAX || v[20] > UINT_MAX || v[39] > INT_MAX ||
            v[40] > UINT_MAX || v[41] > UINT_MAX || v[19] > (nice_negative ? 20u : 19u))
                return -EBADMSG;
        s->ppid = (pid_t) v[4];
        s->flags = (unsigned) v[9];
        s->utime_ticks = v[14];
        s->stime_ticks = v[15];
        s->nice = nice_negative ? -(int) v[19] : (int) v[19];
        s->num_threads = (unsigned) v[20];
        s->starttime_ticks = v[22];
        s->processor = (unsigned) v[39];
        s->rt_priority = (unsigned) v[40];
        s->policy = (unsigned) v[41];
        return 0;
}

int proc_task_stat_parse(const char *buf, TaskStat *ret) {
        uint64_t v[TASK_STAT_FIELDS_MIN + 1] = {}, negative, tid;
        const char *p = buf, *comm, *comm_end;
        TaskStat s = {};
        int r;

        if (!buf)
                return -EINVAL;
        if (parse_u64(&p, &tid) < 0 || tid == 0 || tid > INT_MAX || p[0] != ' ' || p[1] != '(')
                return -EBADMSG;
        /* comm is whatever the task named itself: only the last ")" ends it. */
        comm = p + 2;
        comm_end = strrchr(comm, ')');
        if (!comm_end || comm_end - comm >= PROC_COMM_SIZE)
                return -EBADMSG;
        memcpy(s.comm, comm, (size_t) (comm_end - comm));
        p = comm_end + 1;
        if (p[0] != ' ' || !is_alpha(p[1]))
                return -EBADMSG;
        s.state = p[1];
        r = parse_task_fields(p + 2, v, &negative);
        if (r < 0)
                return r;
        r = task_stat_fill(v, negative, &s);
        if (r < 0)
                return r;
        s.tid = (pid_t) tid;
        *ret = s;
        return 0;
}

int proc_task_stat_pread(int fd, TaskStat *ret) {
        char buf[PROC_TASK_STAT_BUF_SIZE];
        int r;

        r = read_line_fd(fd, buf, sizeof buf);
        if (r < 0)
                return r;
        return proc_task_stat_parse(buf, ret);
}

int proc_task_stat_open_at(int proc_fd, pid_t pid, pid_t tid) {
        return task_errno(task_file_open_at(proc_fd, pid, tid, "stat"));
}

int proc_task_stat_read_at(int proc_fd, pid_t pid, pid_t tid, TaskStat *ret) {
        _cleanup_close_ int fd = -EBADF;

        fd = proc_task_stat_open_at(proc_fd, pid, tid);
        if (fd < 0)
                return fd;
        return proc_task_stat_pread(fd, ret);
}

/* ---- /proc/PID/task/TID/schedstat */

int proc_task_schedstat_parse(const char *buf, TaskSchedstat *ret) {
        uint64_t v[3];
        const char *p = buf;

        if (!buf)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(v); i++) {
                if (i > 0 && *p++ != ' ')
                        return -EBADMSG;
                if (parse_u64(&p, &v[i]) < 0)
                        return -EBADMSG;
        }
        while (*p == ' ') { /* fields a later kernel may add: same form, not kept */
                p++;
                if (!is_digit(*p))
                        return -EBADMSG;
                while (is_digit(*p))
                        p++;
        }
        if (p[0] != '\n' || p[1] != '\0')
                return -EBADMSG;
        *ret = (TaskSchedstat){ .run_ns = v[0], .wait_ns = v[1], .timeslices = v[2] };
        return 0;
}

int proc_task_schedstat_pread(int fd, TaskSchedstat *ret) {
        char buf[PROC_SCHEDSTAT_BUF_SIZE];
        int r;

        r = read_line_fd(fd, buf, sizeof buf);
        if (r < 0)
                return r;
        return proc_task_schedstat_parse(buf, ret);
}

int proc_task_schedstat_open_at(int proc_fd, pid_t pid, pid_t tid) {
        char path[64];
        int fd;

        fd = task_file_open_at(proc_fd, pid, tid, "schedstat");
        if (fd != -ENOENT)
                return fd;
        /* Gone, or there without a schedstat file: only the task's directory tells. */
        (void) task_path(path, sizeof path, pid, tid, "");
        if (faccessat(proc_fd, path, F_OK, 0) < 0)
                return task_errno(negative_errno());
        return -EOPNOTSUPP;
}

int proc_task_schedstat_read_at(int proc_fd, pid_t pid, pid_t tid, TaskSchedstat *ret) {
        _cleanup_close_ int fd = -EBADF;

        fd = proc_task_schedstat_open_at(proc_fd, pid, tid);
        if (fd < 0)
                return fd;
        return proc_task_schedstat_pread(fd, ret);
}

/* ---- /proc/PID/task/TID/status */

/* The value of "key" at the start of a line, blanks skipped; NULL if there is no such line. */
static const char *find_field(const char *buf, const char *key) {
        size_t n = strlen(key);

        for (const char *line = buf; line && *line;) {
                if (strncmp(line, key, n) == 0) {
                        line += n;
                        return line + strspn(line, " \t");
                }
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return NULL;
}

int proc_status_cpus_allowed_parse(const char *buf, unsigned capacity, CpuMask **ret) {
        _cleanup_free_ char *list = NULL;
        const char *v, *eol;
        int r;

        if (!buf || capacity == 0 || capacity > CPUMASK_MAX_CPUS)
                return -EINVAL;
        v = find_field(buf, "Cpus_allowed_list:");
        if (!v)
                return -EBADMSG;
        eol = strchr(v, '\n');
        if (!eol) /* cut: the list may be incomplete */
                return -EBADMSG;
        list = strndup(v, (size_t) (eol - v));
        if (!list)
                return -ENOMEM;
        r = cpumask_parse(list, capacity, ret, NULL);
        return r == -EINVAL ? -EBADMSG : r;
}

int proc_task_cpus_allowed_read_at(int proc_fd, pid_t pid, pid_t tid, unsigned capacity,
                                   CpuMask **ret) {
        _cleanup_free_ char *buf = NULL;
        char path[64];
        int r;

        r = task_path(path, sizeof path, pid, tid, "status");
        if (r < 0)
                return r;
        r = read_file_at(proc_fd, path, &buf);
        if (r < 0)
                return task_errno(r);
        return proc_status_cpus_allowed_parse(buf, capacity, ret);
}

/* ---- task and process lists */

/* A directory entry named by a positive decimal int: its value; 0 for anything else. */
static pid_t numeric_name(const char *name) {
        const char *p = name;
        uint64_t v;

        if (parse_u64(&p, &v) < 0 || *p != '\0' || v == 0 || v > INT_MAX)
                return 0;
        return (pid_t) v;
}

static int push_id(pid_t **ids, size_t *n, size_t *cap, pid_t id) {
        if (greedy_realloc((void **) ids, cap, *n + 1, sizeof **ids, 64) < 0)
                return -ENOMEM;
        (*ids)[(*n)++] = id;
        return 0;
}

/* The numeric entries of dirfd/path, sorted. */
static int list_numeric_dir_at(int dirfd, const char *path, pid_t **ret, size_t *ret_n) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ pid_t *ids = NULL;
        size_t n = 0, cap = 0;
        int fd, r;

        fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        d = fdopendir(fd);
        if (!d) {
                r = negative_errno();
                (void) close(fd);
                return r;
        }
        for (;;) {
                struct dirent *de;
                pid_t id;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                return negative_errno();
                        break;
                }
                id = numeric_name(de->d_name);
                if (id == 0) /* ".", "..", "self", "sys"... */
                        continue;
                r = push_id(&ids, &n, &cap, id);
                if (r < 0)
                        return r;
        }
        n = sort_unique(ids, n);
        *ret = n > 0 ? TAKE_PTR(ids) : NULL;
        *ret_n = n;
        return 0;
}

int proc_task_list_at(int proc_fd, pid_t pid, pid_t **ret_tids, size_t *ret_n) {
        char path[32];
        int r;

        if (pid <= 0)
                return -EINVAL;
        (void) snprintf(path, sizeof path, "%d/task", (int) pid);
        r = list_numeric_dir_at(proc_fd, path, ret_tids, ret_n);
        return task_errno(r);
}

int proc_pid_list_at(int proc_fd, pid_t **ret_pids, size_t *ret_n) {
        return list_numeric_dir_at(proc_fd, ".", ret_pids, ret_n);
}

/* ---- cgroup id lists */

int proc_task_ids_parse(const char *buf, pid_t **ret_ids, size_t *ret_n) {
        _cleanup_free_ pid_t *ids = NULL;
        size_t n = 0, lines = 0;

        if (!buf)
                return -EINVAL;
        for (const char *p = buf; (p = strchr(p, '\n')); p++)
                lines++;
        if (lines > 0) {
                ids = calloc(lines, sizeof *ids);
                if (!ids)
                        return -ENOMEM;
        }
        for (const char *p = buf; *p; p++) {
                uint64_t v;

                if (parse_u64(&p, &v) < 0 || *p != '\n' || v == 0 || v > INT32_MAX)
                        return -EBADMSG;
                ids[n++] = (pid_t) v; /* n < lines: every id ended at one of the newlines */
        }
        n = sort_unique(ids, n);
        *ret_ids = n > 0 ? TAKE_PTR(ids) : NULL;
        *ret_n = n;
        return 0;
}

int proc_task_ids_read_at(int cgroup_fd, const char *name, pid_t **ret_ids, size_t *ret_n) {
        _cleanup_free_ char *buf = NULL;
        int r;

        if (!name)
                return -EINVAL;
        r = read_file_at(cgroup_fd, name, &buf);
        if (r < 0)
                return r;
        return proc_task_ids_parse(buf, ret_ids, ret_n);
}

/* ---- /proc/PID/cgroup */

/* Whether the comma-separated list [s, end) has the word w. */
static bool csv_has(const char *s, const char *end, const char *w) {
        size_t n = strlen(w);

        while (s < end) {
                const char *comma = memchr(s, ',', (size_t) (end - s));
                const char *e = comma ? comma : end;

                if ((size_t) (e - s) == n && memcmp(s, w, n) == 0)
                        return true;
                s = e + 1;
        }
        return false;
}

/* One "ID:CONTROLLERS:/PATH" line [line, eol): whether it is the hierarchy asked for, and where
 * its path starts. */
static int parse_cgroup_line(const char *line, const char *eol, const char *controller,
                             bool *ret_match, const char **ret_path) {
        const char *c1 = memchr(line, ':', (size_t) (eol - line)), *c2, *p = line;
        uint64_t id;

        if (!c1)
                return -EBADMSG;
        c2 = memchr(c1 + 1, ':', (size_t) (eol - c1 - 1));
        if (!c2 || parse_u64(&p, &id) < 0 || p != c1 || c2 + 1 == eol || c2[1] != '/')
                return -EBADMSG;
        if (!controller || !*controller)
                *ret_match = id == 0 && c2 == c1 + 1;
        else
                *ret_match = csv_has(c1 + 1, c2, controller);
        *ret_path = c2 + 2;
        return 0;
}

int proc_cgroup_parse(const char *buf, const char *controller, char **ret_path) {
        const char *found = NULL, *found_end = NULL;
        char *path;

        if (!buf || !ret_path)
                return -EINVAL;
        for (const char *line = buf; *line;) {
                const char *eol = strchr(line, '\n'), *p;
                bool match;
                int r;

                if (!eol) /* cut */
                        return -EBADMSG;
                r = parse_cgroup_line(line, eol, controller, &match, &p);
                if (r < 0)
                        return r;
                if (match && !found)
                        found = p, found_end = eol;
                line = eol + 1;
        }
        if (!found)
                return -ENODATA;
        path = strndup(found, (size_t) (found_end - found));
        if (!path)
                return -ENOMEM;
        *ret_path = path;
        return 0;
}

int proc_task_cgroup_read_at(int proc_fd, pid_t pid, const char *controller, char **ret_path) {
        _cleanup_free_ char *buf = NULL;
        char path[64];
        int r;

        r = task_path(path, sizeof path, pid, 0, "cgroup");
        if (r < 0)
                return r;
        r = read_file_at(proc_fd, path, &buf);
        if (r < 0)
                return task_errno(r);
        return proc_cgroup_parse(buf, controller, ret_path);
}

/* ---- /proc/uptime */

/* "SECONDS.CC": the kernel's "%lu.%02lu". */
static int parse_centis(const char **p, uint64_t *ret_sec, uint64_t *ret_centis) {
        const char *s = *p;

        if (parse_u64(&s, ret_sec) < 0 || s[0] != '.' || !is_digit(s[1]) || !is_digit(s[2]))
                return -EBADMSG;
        *ret_centis = (uint64_t) (s[1] - '0') * 10 + (uint64_t) (s[2] - '0');
        *p = s + 3;
        return 0;
}

int proc_uptime_parse(const char *buf, uint64_t *ret_uptime_usec) {
        uint64_t sec, centis, idle_sec, idle_centis;
        const char *p = buf;

        if (!buf || !ret_uptime_usec)
                return -EINVAL;
        if (parse_centis(&p, &sec, &centis) < 0 || *p++ != ' ' ||
            parse_centis(&p, &idle_sec, &idle_centis) < 0 || p[0] != '\n' || p[1] != '\0')
                return -EBADMSG;
        if (sec > (UINT64_MAX - centis * 10000) / 1000000)
                return -ERANGE;
        *ret_uptime_usec = sec * 1000000 + centis * 10000;
        return 0;
}

int proc_uptime_read_at(int proc_fd, uint64_t *ret_uptime_usec) {
        char buf[128];
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = openat(proc_fd, "uptime", O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        r = read_line_fd(fd, buf, sizeof buf);
        if (r < 0)
                return r;
        return proc_uptime_parse(buf, ret_uptime_usec);
}

/* ---- /proc/PID/statm and /proc/PID/numa_maps */

int proc_statm_parse(const char *buf, uint64_t *ret_resident_pages) {
        uint64_t size, resident;
        const char *p = buf;

        if (!buf || !ret_resident_pages)
                return -EINVAL;
        if (parse_u64(&p, &size) < 0 || *p++ != ' ' || parse_u64(&p, &resident) < 0 ||
            (*p != ' ' && *p != '\n'))
                return -EBADMSG;
        *ret_resident_pages = resident;
        return 0;
}

int proc_task_rss_read_at(int proc_fd, pid_t pid, uint64_t *ret_kib) {
        _cleanup_close_ int fd = -EBADF;
        uint64_t pages, page_kib = (uint64_t) sysconf(_SC_PAGESIZE) / 1024;
        char buf[256];
        int r;

        fd = task_file_open_at(proc_fd, pid, 0, "statm");
        if (fd < 0)
                return task_errno(fd);
        r = read_line_fd(fd, buf, sizeof buf);
        if (r < 0)
                return task_errno(r);
        r = proc_statm_parse(buf, &pages);
        if (r < 0)
                return r;
        *ret_kib = pages > UINT64_MAX / page_kib ? UINT64_MAX : pages * page_kib;
        return 0;
}

static bool is_xdigit(char c) {
        return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* One numa_maps line [p, eol): the KiB it has on node added to *total. */
static int numa_maps_line(const char *p, const char *eol, unsigned node, uint64_t *total) {
        static const char size_key[] = "kernelpagesize_kB=";
        uint64_t pages = 0, page_kib = 0;
        bool have_pages = false, have_size = false;

        if (p == eol || !is_xdigit(*p))
                return -EBADMSG;
        while (p < eol && is_xdigit(*p))
                p++;
        if (p == eol || *p != ' ')
                return -EBADMSG;
        while (p < eol) {
                const char *tok, *eq;

                while (p < eol && *p == ' ')
                        p++;
                tok = p;
                while (p < eol && *p != ' ')
                        p++;
                if (tok[0] == 'N' && p - tok > 1 && is_digit(tok[1])) {
                        uint64_t n, v;

                        eq = memchr(tok, '=', (size_t) (p - tok));
                        if (!eq || parse_u64_span(tok + 1, (size_t) (eq - tok - 1), &n) < 0 ||
                            parse_u64_span(eq + 1, (size_t) (p - eq - 1), &v) < 0)
                                return -EBADMSG;
                        if (n == node) {
                                pages = v;
                                have_pages = true;
                        }
                } else if ((size_t) (p - tok) > sizeof size_key - 1 &&
                           memcmp(tok, size_key, sizeof size_key - 1) == 0) {
                        const char *v = tok + sizeof size_key - 1;

                        if (parse_u64_span(v, (size_t) (p - v), &page_kib) < 0)
                                return -EBADMSG;
                        have_size = true;
                }
        }
        if (!have_pages)
                return 0;
        if (!have_size || (page_kib > 0 && pages > UINT64_MAX / page_kib) ||
            pages * page_kib > UINT64_MAX - *total)
                return -EBADMSG;
        *total += pages * page_kib;
        return 0;
}

int proc_numa_maps_parse(const char *buf, unsigned node, uint64_t *ret_kib) {
        uint64_t total = 0;

        if (!buf || !ret_kib)
                return -EINVAL;
        for (const char *p = buf; *p;) {
                const char *eol = strchr(p, '\n');
                int r;

                if (!eol)
                        return -EBADMSG;
                r = numa_maps_line(p, eol, node, &total);
                if (r < 0)
                        return r;
                p = eol + 1;
        }
        *ret_kib = total;
        return 0;
}

int proc_task_numa_maps_read_at(int proc_fd, pid_t pid, unsigned node, size_t max_size,
                                uint64_t *ret_kib) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        int r;

        fd = task_file_open_at(proc_fd, pid, 0, "numa_maps");
        if (fd < 0)
                return task_errno(fd);
        r = read_text_fd(fd, max_size, &buf, NULL);
        if (r < 0)
                return task_errno(r);
        return proc_numa_maps_parse(buf, node, ret_kib);
}
