/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "actuator.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "proc.h"

#define RECORD_NAME "changes"
#define RECORD_TMP_NAME "changes.tmp"
#define RECORD_CORRUPT_NAME "changes.corrupt"
#define RECORD_HEADER "cgbalance-changes 1"
/* A line per task the daemon moved: 64 MiB is millions of them, beyond any real record. */
#define RECORD_SIZE_MAX (64u * 1024u * 1024u)
/* The largest native weight of either version (cpu.shares; cpu.weight stops at 10000). */
#define NATIVE_WEIGHT_MAX CGROUP_SHARES_MAX

typedef struct BannedTask {
        pid_t pid;
        uint64_t starttime_ticks;
} BannedTask;

struct Actuator {
        int proc_fd;
        int state_fd; /* -EBADF: no record kept */
        char *state_dir;
        unsigned capacity; /* of every mask we read: enough for the kernel's nr_cpu_ids */
        bool numa;
        CgroupLayout layout;
        ActuatorRecord *record; /* never NULL; what state_dir/changes says */
        BannedTask *banned; /* sorted by pid */
        size_t n_banned;
        char **warned; /* groups whose write errors were logged already */
        size_t n_warned;
        bool warned_migrate_eperm; /* a refused memory move was logged already */
        ActuatorCounters counters;
        ActuatorObserver observer;
        void *observer_data;
};

/* ---- the record in memory */

static void task_change_done(ActuatorTaskChange *c) {
        cpumask_free(c->orig);
        cpumask_free(c->set);
        *c = (ActuatorTaskChange){};
}

ActuatorRecord *actuator_record_free(ActuatorRecord *r) {
        if (!r)
                return NULL;
        for (size_t i = 0; i < r->n_tasks; i++)
                task_change_done(&r->tasks[i]);
        for (size_t i = 0; i < r->n_cgroups; i++)
                free(r->cgroups[i].path);
        free(r->tasks);
        free(r->cgroups);
        free(r);
        return NULL;
}

static bool record_is_empty(const ActuatorRecord *r) {
        return r->n_tasks == 0 && r->n_cgroups == 0;
}

/* The index of pid's entry, or where it would go. */
static size_t record_task_pos(const ActuatorRecord *r, pid_t pid) {
        size_t lo = 0, hi = r->n_tasks;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (r->tasks[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static ActuatorTaskChange *record_find_task(const ActuatorRecord *r, pid_t pid) {
        size_t i = record_task_pos(r, pid);

        return i < r->n_tasks && r->tasks[i].pid == pid ? &r->tasks[i] : NULL;
}

/* Stores c (taking its masks, *c is emptied), replacing any entry of the same pid. */
static int record_put_task(ActuatorRecord *r, ActuatorTaskChange *c) {
        size_t i = record_task_pos(r, c->pid);
        ActuatorTaskChange *t;

        if (i < r->n_tasks && r->tasks[i].pid == c->pid) {
                task_change_done(&r->tasks[i]);
                r->tasks[i] = *c;
                *c = (ActuatorTaskChange){};
                return 0;
        }
        t = reallocarray(r->tasks, r->n_tasks + 1, sizeof *t);
        if (!t)
                return -ENOMEM;
        r->tasks = t;
        memmove(t + i + 1, t + i, (r->n_tasks - i) * sizeof *t);
        t[i] = *c;
        r->n_tasks++;
        *c = (ActuatorTaskChange){};
        return 0;
}

static void record_drop_task(ActuatorRecord *r, pid_t pid) {
        size_t i = record_task_pos(r, pid);

        if (i >= r->n_tasks || r->tasks[i].pid != pid)
                return;
        task_change_done(&r->tasks[i]);
        memmove(r->tasks + i, r->tasks + i + 1, (r->n_tasks - i - 1) * sizeof *r->tasks);
        r->n_tasks--;
}

static size_t record_cgroup_pos(const ActuatorRecord *r, const char *path) {
        size_t lo = 0, hi = r->n_cgroups;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (strcmp(r->cgroups[mid].path, path) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static ActuatorCgroupChange *record_find_cgroup(const ActuatorRecord *r, const char *path) {
        size_t i = record_cgroup_pos(r, path);

        return i < r->n_cgroups && streq(r->cgroups[i].path, path) ? &r->cgroups[i] : NULL;
}

static int record_put_cgroup(ActuatorRecord *r, const char *path, uint64_t orig_native,
                             uint64_t set_native) {
        size_t i = record_cgroup_pos(r, path);
        ActuatorCgroupChange *c;
        char *p;

        if (i < r->n_cgroups && streq(r->cgroups[i].path, path)) {
                r->cgroups[i].orig_native = orig_native;
                r->cgroups[i].set_native = set_native;
                return 0;
        }
        p = strdup(path);
        if (!p)
                return -ENOMEM;
        c = reallocarray(r->cgroups, r->n_cgroups + 1, sizeof *c);
        if (!c) {
                free(p);
                return -ENOMEM;
        }
        r->cgroups = c;
        memmove(c + i + 1, c + i, (r->n_cgroups - i) * sizeof *c);
        c[i].path = p;
        c[i].orig_native = orig_native;
        c[i].set_native = set_native;
        r->n_cgroups++;
        return 0;
}

static void record_drop_cgroup(ActuatorRecord *r, const char *path) {
        size_t i = record_cgroup_pos(r, path);

        if (i >= r->n_cgroups || !streq(r->cgroups[i].path, path))
                return;
        free(r->cgroups[i].path);
        memmove(r->cgroups + i, r->cgroups + i + 1, (r->n_cgroups - i - 1) * sizeof *r->cgroups);
        r->n_cgroups--;
}

static int task_change_copy(const ActuatorTaskChange *c, ActuatorTaskChange *ret) {
        ActuatorTaskChange t = *c;

        t.orig = cpumask_copy(c->orig);
        t.set = cpumask_copy(c->set);
        if (!t.orig || !t.set) {
                task_change_done(&t);
                return -ENOMEM;
        }
        *ret = t;
        return 0;
}

static ActuatorRecord *record_new(void) {
        return calloc(1, sizeof(ActuatorRecord));
}

static int record_copy(const ActuatorRecord *r, ActuatorRecord **ret) {
        _cleanup_actuator_record_ ActuatorRecord *c = record_new();

        if (!c)
                return -ENOMEM;
        if (r->n_tasks > 0) {
                c->tasks = calloc(r->n_tasks, sizeof *c->tasks);
                if (!c->tasks)
                        return -ENOMEM;
        }
        for (; c->n_tasks < r->n_tasks; c->n_tasks++)
                if (task_change_copy(&r->tasks[c->n_tasks], &c->tasks[c->n_tasks]) < 0)
                        return -ENOMEM;
        if (r->n_cgroups > 0) {
                c->cgroups = calloc(r->n_cgroups, sizeof *c->cgroups);
                if (!c->cgroups)
                        return -ENOMEM;
        }
        for (; c->n_cgroups < r->n_cgroups; c->n_cgroups++) {
                ActuatorCgroupChange *g = &c->cgroups[c->n_cgroups];

                *g = r->cgroups[c->n_cgroups];
                g->path = strdup(g->path);
                if (!g->path)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(c);
        return 0;
}

/* ---- the record as text */

typedef struct Span {
        const char *s;
        size_t n;
} Span;

/* Decimal, no sign, no leading zero, in min..max. */
static int parse_number(Span f, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;

        if (f.n == 0 || (f.s[0] == '0' && f.n > 1))
                return -EBADMSG;
        for (size_t i = 0; i < f.n; i++) {
                unsigned d = (unsigned) (f.s[i] - '0');

                if (f.s[i] < '0' || f.s[i] > '9' || v > (UINT64_MAX - d) / 10)
                        return -EBADMSG;
                v = v * 10 + d;
        }
        if (v < min || v > max)
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* A non-empty cpulist exactly as cpumask_format() writes it. */
static int parse_cpulist(Span f, unsigned capacity, CpuMask **ret) {
        _cleanup_free_ char *tok = NULL, *back = NULL;
        _cleanup_cpumask_ CpuMask *m = NULL;
        int r;

        if (f.n == 0 || strspn(f.s, "0123456789,-") < f.n)
                return -EBADMSG;
        tok = strndup(f.s, f.n);
        if (!tok)
                return -ENOMEM;
        r = cpumask_parse(tok, capacity, &m, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || cpumask_is_empty(m))
                return -EBADMSG;
        r = cpumask_format(m, &back);
        if (r < 0)
                return r;
        if (!streq(back, tok))
                return -EBADMSG;
        *ret = TAKE_PTR(m);
        return 0;
}

/* Splits line into exactly n fields at single spaces; with rest, the last field is the rest of
 * the line, spaces and all. Every field is non-empty. */
static int split_line(Span line, Span *f, size_t n, bool rest) {
        const char *p = line.s, *end = line.s + line.n;

        for (size_t i = 0; i < n; i++) {
                const char *sp = i + 1 == n && rest ? NULL : memchr(p, ' ', (size_t) (end - p));

                if (i + 1 < n && !sp)
                        return -EBADMSG;
                if (i + 1 == n && sp)
                        return -EBADMSG;
                f[i] = (Span){ p, (size_t) ((sp ? sp : end) - p) };
                if (f[i].n == 0)
                        return -EBADMSG;
                p = sp ? sp + 1 : end;
        }
        return 0;
}

static bool span_is(Span f, const char *w) {
        return f.n == strlen(w) && memcmp(f.s, w, f.n) == 0;
}

static int parse_task_line(Span line, unsigned capacity, ActuatorRecord *rec, size_t *cap) {
        ActuatorTaskChange c = {};
        uint64_t pid;
        Span f[6];
        int r;

        r = split_line(line, f, ELEMENTSOF(f), /* rest= */ false);
        if (r >= 0)
                r = parse_number(f[1], 1, INT_MAX, &pid);
        if (r >= 0)
                r = parse_number(f[2], 0, UINT64_MAX, &c.starttime_ticks);
        if (r >= 0)
                r = parse_cpulist(f[3], capacity, &c.orig);
        if (r >= 0)
                r = parse_cpulist(f[4], capacity, &c.set);
        if (r >= 0)
                r = parse_number(f[5], 0, UINT64_MAX, &c.when_usec);
        if (r >= 0 && rec->n_tasks == *cap) {
                size_t n = *cap ? *cap * 2 : 16;
                ActuatorTaskChange *t = reallocarray(rec->tasks, n, sizeof *t);

                if (t) {
                        rec->tasks = t;
                        *cap = n;
                } else
                        r = -ENOMEM;
        }
        if (r < 0) {
                task_change_done(&c);
                return r;
        }
        c.pid = (pid_t) pid;
        rec->tasks[rec->n_tasks++] = c;
        return 0;
}

static int parse_cgroup_line(Span line, ActuatorRecord *rec, size_t *cap) {
        uint64_t orig, set;
        char *path;
        Span f[4];
        int r;

        r = split_line(line, f, ELEMENTSOF(f), /* rest= */ true);
        if (r >= 0)
                r = parse_number(f[1], 1, NATIVE_WEIGHT_MAX, &orig);
        if (r >= 0)
                r = parse_number(f[2], 1, NATIVE_WEIGHT_MAX, &set);
        if (r < 0)
                return r;
        path = strndup(f[3].s, f[3].n);
        if (!path)
                return -ENOMEM;
        if (!*path || !cgroup_path_is_valid(path)) {
                free(path);
                return -EBADMSG;
        }
        if (rec->n_cgroups == *cap) {
                size_t n = *cap ? *cap * 2 : 16;
                ActuatorCgroupChange *c = reallocarray(rec->cgroups, n, sizeof *c);

                if (!c) {
                        free(path);
                        return -ENOMEM;
                }
                rec->cgroups = c;
                *cap = n;
        }
        rec->cgroups[rec->n_cgroups++] = (ActuatorCgroupChange){ path, orig, set };
        return 0;
}

static int cmp_task_change(const void *a, const void *b) {
        pid_t x = ((const ActuatorTaskChange *) a)->pid, y = ((const ActuatorTaskChange *) b)->pid;

        return (x > y) - (x < y);
}

static int cmp_cgroup_change(const void *a, const void *b) {
        return strcmp(((const ActuatorCgroupChange *) a)->path,
                      ((const ActuatorCgroupChange *) b)->path);
}

/* Sorts the entries; true if a pid or a path is there twice. */
static bool record_sort_has_duplicates(ActuatorRecord *rec) {
        if (rec->n_tasks > 1) /* qsort(NULL, 0, ...) is undefined */
                qsort(rec->tasks, rec->n_tasks, sizeof *rec->tasks, cmp_task_change);
        for (size_t i = 1; i < rec->n_tasks; i++)
                if (rec->tasks[i].pid == rec->tasks[i - 1].pid)
                        return true;
        if (rec->n_cgroups > 1)
                qsort(rec->cgroups, rec->n_cgroups, sizeof *rec->cgroups, cmp_cgroup_change);
        for (size_t i = 1; i < rec->n_cgroups; i++)
                if (streq(rec->cgroups[i].path, rec->cgroups[i - 1].path))
                        return true;
        return false;
}

int actuator_record_parse(const char *text, unsigned capacity, ActuatorRecord **ret,
                          unsigned *ret_line) {
        _cleanup_actuator_record_ ActuatorRecord *rec = NULL;
        size_t task_cap = 0, cgroup_cap = 0;
        unsigned line_no = 0;
        const char *p;
        int r = 0;

        if (ret_line)
                *ret_line = 0;
        if (!text || !ret || capacity == 0 || capacity > CPUMASK_MAX_CPUS)
                return -EINVAL;
        rec = record_new();
        if (!rec)
                return -ENOMEM;
        for (p = text; *p && r >= 0;) {
                const char *eol = strchr(p, '\n');
                Span line = { p, eol ? (size_t) (eol - p) : 0 };
                Span kind;

                line_no++;
                if (!eol) /* cut short */
                        r = -EBADMSG;
                else if (line_no == 1)
                        r = span_is(line, RECORD_HEADER) ? 0 : -EBADMSG;
                else {
                        kind = (Span){ line.s, strcspn(line.s, " \n") };
                        if (span_is(kind, "task"))
                                r = parse_task_line(line, capacity, rec, &task_cap);
                        else if (span_is(kind, "cgroup"))
                                r = parse_cgroup_line(line, rec, &cgroup_cap);
                        else
                                r = -EBADMSG;
                }
                if (eol)
                        p = eol + 1;
        }
        if (r >= 0 && line_no == 0) /* no header */
                r = -EBADMSG, line_no = 1;
        if (r >= 0 && record_sort_has_duplicates(rec))
                r = -EBADMSG, line_no = 0;
        if (r < 0) {
                if (ret_line && r == -EBADMSG)
                        *ret_line = line_no;
                return r;
        }
        *ret = TAKE_PTR(rec);
        return 0;
}

static int format_task(FILE *f, const ActuatorTaskChange *c) {
        _cleanup_free_ char *orig = NULL, *set = NULL;
        int r;

        if (c->pid <= 0 || !c->orig || !c->set || cpumask_is_empty(c->orig) ||
            cpumask_is_empty(c->set))
                return -EINVAL;
        r = cpumask_format(c->orig, &orig);
        if (r >= 0)
                r = cpumask_format(c->set, &set);
        if (r < 0)
                return r;
        fprintf(f, "task %d %" PRIu64 " %s %s %" PRIu64 "\n", (int) c->pid, c->starttime_ticks,
                orig, set, c->when_usec);
        return 0;
}

int actuator_record_format(const ActuatorRecord *r, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;
        int k;

        if (!r || !ret)
                return -EINVAL;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        fputs(RECORD_HEADER "\n", f);
        for (size_t i = 0; i < r->n_tasks; i++) {
                k = format_task(f, &r->tasks[i]);
                if (k < 0)
                        return k;
        }
        for (size_t i = 0; i < r->n_cgroups; i++) {
                const ActuatorCgroupChange *c = &r->cgroups[i];

                if (!c->path || !*c->path || !cgroup_path_is_valid(c->path) || c->orig_native < 1 ||
                    c->orig_native > NATIVE_WEIGHT_MAX || c->set_native < 1 ||
                    c->set_native > NATIVE_WEIGHT_MAX)
                        return -EINVAL;
                fprintf(f, "cgroup %" PRIu64 " %" PRIu64 " %s\n", c->orig_native, c->set_native,
                        c->path);
        }
        k = fclose(TAKE_PTR(f));
        if (k != 0 || !buf)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- the record on disk */

/* Replaces state_dir/changes with r atomically (temporary file, fsync, rename, fsync of the
 * directory), or removes it when r is empty. Nothing to do without a state_dir. */
static int record_save(const Actuator *a, const ActuatorRecord *r) {
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        int k;

        if (a->state_fd < 0)
                return 0;
        if (record_is_empty(r)) {
                if (unlinkat(a->state_fd, RECORD_NAME, 0) < 0 && errno != ENOENT)
                        return negative_errno();
                return fsync(a->state_fd) < 0 ? negative_errno() : 0;
        }
        k = actuator_record_format(r, &text);
        if (k < 0)
                return k;
        fd = openat(a->state_fd, RECORD_TMP_NAME,
                    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return negative_errno();
        k = write_full(fd, text, strlen(text));
        if (k >= 0 && fsync(fd) < 0)
                k = negative_errno();
        if (k >= 0 && close(TAKE_FD(fd)) < 0)
                k = negative_errno();
        if (k >= 0 && renameat(a->state_fd, RECORD_TMP_NAME, a->state_fd, RECORD_NAME) < 0)
                k = negative_errno();
        if (k < 0) {
                (void) unlinkat(a->state_fd, RECORD_TMP_NAME, 0);
                return k;
        }
        return fsync(a->state_fd) < 0 ? negative_errno() : 0;
}

/* The text of state_dir/changes. -ENOENT when there is none; -EBADMSG when it cannot be a
 * record (a NUL byte, too big). */
static int record_read(const Actuator *a, char **ret) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        fd = openat(a->state_fd, RECORD_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        r = read_full_fd(fd, RECORD_SIZE_MAX, &buf, &len);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        if (memchr(buf, '\0', len))
                return -EBADMSG;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- affinity and tasks */

/* sched_getaffinity() refuses a buffer smaller than the kernel's CPU count: find one it takes. */
static unsigned affinity_capacity(void) {
        for (unsigned cap = 64; cap <= CPUMASK_MAX_CPUS; cap *= 2) {
                _cleanup_cpumask_ CpuMask *m = cpumask_new(cap);

                if (!m)
                        break;
                if (sched_getaffinity(0, cpumask_cpu_set_size(m), cpumask_cpu_set(m)) >= 0)
                        return cap;
                if (errno != EINVAL)
                        break;
        }
        return CPUMASK_MAX_CPUS;
}

static int affinity_get(const Actuator *a, pid_t tid, CpuMask **ret) {
        _cleanup_cpumask_ CpuMask *m = cpumask_new(a->capacity);

        if (!m)
                return -ENOMEM;
        if (sched_getaffinity(tid, cpumask_cpu_set_size(m), cpumask_cpu_set(m)) < 0)
                return negative_errno();
        *ret = TAKE_PTR(m);
        return 0;
}

static int affinity_set(pid_t tid, const CpuMask *m) {
        if (cpumask_is_empty(m)) /* never, whatever a caller computed */
                return -EINVAL;
        if (sched_setaffinity(tid, cpumask_cpu_set_size(m), cpumask_cpu_set(m)) < 0)
                return negative_errno();
        return 0;
}

/* The online CPUs: those with a line in proc_fd/stat. Should that fail, every CPU: the kernel
 * intersects a mask with its online CPUs and the task's cpuset anyway. */
static int online_cpus(const Actuator *a, CpuMask **ret) {
        _cleanup_proc_stat_ ProcStat *s = NULL;
        _cleanup_cpumask_ CpuMask *m = cpumask_new(a->capacity);
        int r;

        if (!m)
                return -ENOMEM;
        r = proc_stat_read_at(a->proc_fd, &s);
        if (r >= 0)
                for (unsigned c = 0; c < s->n_cpus && c < a->capacity; c++)
                        if (s->cpus[c].present)
                                (void) cpumask_set(m, c);
        if (r < 0 || cpumask_is_empty(m)) {
                log_debug_errno(r, "Cannot tell the online CPUs, assuming all: %m");
                (void) cpumask_set_range(m, 0, a->capacity - 1);
        }
        *ret = TAKE_PTR(m);
        return 0;
}

/* pid 1, the daemon itself: never ours to move, whatever a plan or a record says. */
static bool pid_is_untouchable(pid_t pid) {
        return pid <= 1 || pid == getpid();
}

/* 0 if pid is still the task that started at starttime, -ESRCH if it is gone (or the pid was
 * recycled), -EPERM for a kernel thread, or the reader's error. */
static int task_identify(const Actuator *a, pid_t pid, uint64_t starttime, TaskStat *ret) {
        TaskStat st;
        int r = proc_task_stat_read_at(a->proc_fd, pid, 0, &st);

        if (r < 0)
                return r;
        if (st.starttime_ticks != starttime)
                return -ESRCH;
        if (task_stat_is_kthread(&st))
                return -EPERM;
        *ret = st;
        return 0;
}

/* The mask every thread of pid has; -EXDEV if they differ (someone pinned them apart). */
static int threads_common_mask(const Actuator *a, pid_t pid, CpuMask **ret) {
        _cleanup_free_ pid_t *tids = NULL;
        _cleanup_cpumask_ CpuMask *common = NULL;
        size_t n = 0;
        int r;

        r = affinity_get(a, pid, &common);
        if (r < 0)
                return r;
        r = proc_task_list_at(a->proc_fd, pid, &tids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_cpumask_ CpuMask *m = NULL;

                if (tids[i] == pid)
                        continue;
                r = affinity_get(a, tids[i], &m);
                if (r == -ESRCH) /* exited meanwhile */
                        continue;
                if (r < 0)
                        return r;
                if (!cpumask_equal(m, common))
                        return -EXDEV;
        }
        *ret = TAKE_PTR(common);
        return 0;
}

static int ban(Actuator *a, pid_t pid, uint64_t starttime) {
        size_t lo = 0, hi = a->n_banned;
        BannedTask *b;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (a->banned[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < a->n_banned && a->banned[lo].pid == pid) {
                a->banned[lo].starttime_ticks = starttime;
                return 0;
        }
        b = reallocarray(a->banned, a->n_banned + 1, sizeof *b);
        if (!b)
                return -ENOMEM;
        a->banned = b;
        memmove(b + lo + 1, b + lo, (a->n_banned - lo) * sizeof *b);
        b[lo] = (BannedTask){ pid, starttime };
        a->n_banned++;
        return 0;
}

/* The resident set of pid in bytes, from proc_fd/PID/statm (pages). */
static int task_rss_bytes(const Actuator *a, pid_t pid, uint64_t *ret) {
        char path[32], buf[256];
        _cleanup_close_ int fd = -EBADF;
        unsigned long long size, resident;
        long page = sysconf(_SC_PAGESIZE);
        ssize_t n;

        (void) snprintf(path, sizeof path, "%d/statm", (int) pid);
        fd = openat(a->proc_fd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        n = read(fd, buf, sizeof buf - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        if (sscanf(buf, "%llu %llu", &size, &resident) != 2 || page <= 0)
                return -EBADMSG;
        *ret = resident > UINT64_MAX / (uint64_t) page ? UINT64_MAX : resident * (uint64_t) page;
        return 0;
}

/* Moves pid's pages from node from to node to, if its RSS is at most max_mb. 0 when done or
 * when the task is too big to move (said at debug level). */
static int migrate_memory(const Actuator *a, pid_t pid, int from, int to, uint64_t max_mb) {
        struct bitmask *fm = NULL, *tm = NULL;
        uint64_t rss;
        int r, nodes;

        if (!a->numa)
                return -EOPNOTSUPP;
        nodes = numa_num_possible_nodes();
        if (from < 0 || to < 0 || from >= nodes || to >= nodes)
                return -EINVAL;
        r = task_rss_bytes(a, pid, &rss);
        if (r < 0)
                return r;
        if (max_mb < UINT64_MAX / (1024 * 1024) && rss > max_mb * 1024 * 1024) {
                log_debug("pid %d: RSS %" PRIu64 " MiB above %" PRIu64 " MiB, memory stays",
                          (int) pid, rss / (1024 * 1024), max_mb);
                return 0;
        }
        fm = numa_allocate_nodemask();
        tm = numa_allocate_nodemask();
        if (!fm || !tm)
                r = -ENOMEM;
        else {
                numa_bitmask_setbit(fm, (unsigned) from);
                numa_bitmask_setbit(tm, (unsigned) to);
                r = numa_migrate_pages(pid, fm, tm);
                r = r < 0 ? negative_errno() : 0;
        }
        if (fm)
                numa_bitmask_free(fm);
        if (tm)
                numa_bitmask_free(tm);
        return r;
}

/* ---- logging once per group */

static bool warned_about(const Actuator *a, const char *path) {
        for (size_t i = 0; i < a->n_warned; i++)
                if (streq(a->warned[i], path))
                        return true;
        return false;
}

static void warned_forget(Actuator *a, const char *path) {
        for (size_t i = 0; i < a->n_warned; i++)
                if (streq(a->warned[i], path)) {
                        free(a->warned[i]);
                        a->warned[i] = a->warned[--a->n_warned];
                        return;
                }
}

/* A group's weight could not be read or written: counted; logged once until it works again. */
static void weight_failed(Actuator *a, const char *path, int r, const char *what) {
        char **w;
        char *p;

        if (r == -ENOENT || r == -ENODEV) {
                a->counters.cgroups_gone++;
                log_debug("Group %s is gone, skipping", path);
                return;
        }
        a->counters.errors++;
        if (warned_about(a, path)) {
                log_debug_errno(r, "Failed to %s the CPU weight of %s again: %m", what, path);
                return;
        }
        if (r == -EROFS)
                /* The service unit's ProtectControlGroups= leaves only its ReadWritePaths=
                 * writable. */
                log_warning_errno(r,
                                  "Failed to %s the CPU weight of %s, ignoring: %m; under "
                                  "systemd the unit's ReadWritePaths= must include the group "
                                  "(see cgbalanced(8), SERVICE)",
                                  what, path);
        else
                log_warning_errno(r, "Failed to %s the CPU weight of %s, ignoring: %m", what, path);
        p = strdup(path);
        w = p ? reallocarray(a->warned, a->n_warned + 1, sizeof *w) : NULL;
        if (!w) {
                free(p);
                return;
        }
        a->warned = w;
        a->warned[a->n_warned++] = p;
}

/* ---- new, free, lookups */

static Actuator *actuator_alloc(void) {
        return calloc(1, sizeof(Actuator));
}

int actuator_new(int proc_fd, const CgroupLayout *layout, const char *state_dir, Actuator **ret) {
        _cleanup_actuator_ Actuator *a = NULL;

        if (proc_fd < 0 || !layout || !ret)
                return -EINVAL;
        a = actuator_alloc();
        if (!a)
                return -ENOMEM;
        a->proc_fd = proc_fd;
        a->state_fd = -EBADF;
        a->layout = *layout;
        a->capacity = affinity_capacity();
        a->numa = numa_available() >= 0;
        a->record = record_new();
        if (!a->record)
                return -ENOMEM;
        if (state_dir) {
                if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
                        return negative_errno();
                a->state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (a->state_fd < 0)
                        return negative_errno();
                a->state_dir = strdup(state_dir);
                if (!a->state_dir)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

Actuator *actuator_free(Actuator *a) {
        if (!a)
                return NULL;
        if (a->state_fd >= 0)
                (void) close(a->state_fd);
        for (size_t i = 0; i < a->n_warned; i++)
                free(a->warned[i]);
        free(a->warned);
        free(a->banned);
        free(a->state_dir);
        actuator_record_free(a->record);
        free(a);
        return NULL;
}

bool actuator_lookup_task(const Actuator *a, pid_t pid, uint64_t starttime_ticks,
                          const CpuMask **ret_mask, uint64_t *ret_when_usec) {
        const ActuatorTaskChange *c = a ? record_find_task(a->record, pid) : NULL;

        if (!c || c->starttime_ticks != starttime_ticks)
                return false;
        if (ret_mask)
                *ret_mask = c->set;
        if (ret_when_usec)
                *ret_when_usec = c->when_usec;
        return true;
}

static uint64_t native_to_weight(const Actuator *a, uint64_t native) {
        return a->layout.mode == CGROUP_MODE_V2 ? native : cgroup_shares_to_weight(native);
}

static uint64_t weight_to_native(const Actuator *a, uint64_t weight) {
        return a->layout.mode == CGROUP_MODE_V2 ? weight : cgroup_weight_to_shares(weight);
}

bool actuator_lookup_cgroup(const Actuator *a, const char *path, uint32_t *ret_base_weight) {
        const ActuatorCgroupChange *c = a && path ? record_find_cgroup(a->record, path) : NULL;

        if (!c)
                return false;
        if (ret_base_weight)
                *ret_base_weight = (uint32_t) native_to_weight(a, c->orig_native);
        return true;
}

bool actuator_task_banned(const Actuator *a, pid_t pid, uint64_t starttime_ticks) {
        size_t lo = 0, hi = a ? a->n_banned : 0;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (a->banned[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return a && lo < a->n_banned && a->banned[lo].pid == pid &&
               a->banned[lo].starttime_ticks == starttime_ticks;
}

void actuator_set_observer(Actuator *a, ActuatorObserver observer, void *userdata) {
        a->observer = observer;
        a->observer_data = userdata;
}

const ActuatorCounters *actuator_counters(const Actuator *a) {
        return &a->counters;
}

/* ---- apply: dry run */

static const char *snapshot_comm(const PolicySnapshot *snap, pid_t pid, uint64_t starttime) {
        for (size_t i = 0; i < snap->n_tasks; i++)
                if (snap->tasks[i].pid == pid && snap->tasks[i].starttime_ticks == starttime)
                        return snap->tasks[i].comm;
        return "?";
}

static const char *snapshot_cgroup_path(const PolicySnapshot *snap, size_t i) {
        const char *p = i < snap->n_cgroups ? snap->cgroups[i].path : NULL;

        return p && *p && cgroup_path_is_valid(p) ? p : NULL;
}

static void log_dry_run(const Plan *plan, const PolicySnapshot *snap) {
        for (size_t i = 0; i < plan->n_moves; i++) {
                const PlanMove *m = &plan->moves[i];
                _cleanup_free_ char *mask = NULL;

                if (m->mask)
                        (void) cpumask_format(m->mask, &mask);
                log_info("Would move pid %d (%s) node %d -> %d mask %s: %s", (int) m->pid,
                         snapshot_comm(snap, m->pid, m->starttime_ticks), m->from_node, m->to_node,
                         mask ? mask : "?", m->reason);
        }
        for (size_t i = 0; i < plan->n_weights; i++) {
                const PlanWeight *w = &plan->weights[i];
                const char *path = snapshot_cgroup_path(snap, w->cgroup);

                log_info("Would set the weight of %s %" PRIu32 " -> %" PRIu32 ": %s",
                         path ? path : "?", w->from, w->to, w->reason);
        }
}

/* ---- apply: moves */

typedef struct PendingMove {
        bool ready;
        char comm[PROC_COMM_SIZE];
        CpuMask *want; /* the plan's mask on online CPUs */
        CpuMask *before; /* what every thread had */
} PendingMove;

static void pending_moves_free(PendingMove *p, size_t n) {
        for (size_t i = 0; p && i < n; i++) {
                cpumask_free(p[i].want);
                cpumask_free(p[i].before);
        }
        free(p);
}

/* Counts a task that cannot be moved: gone, refused or an error. */
static void move_skipped(Actuator *a, const PlanMove *m, int r, const char *why) {
        if (r == -ESRCH) {
                a->counters.tasks_gone++;
                log_debug("pid %d is gone, not moved", (int) m->pid);
        } else if (r == -EINVAL || r == -EXDEV) {
                a->counters.masks_refused++;
                log_debug_errno(r, "pid %d: %s, not moved", (int) m->pid, why);
        } else {
                a->counters.errors++;
                log_warning_errno(r, "pid %d: %s, not moved: %m", (int) m->pid, why);
        }
}

/* Notes in next the change about to be made: the original stays the one first recorded while
 * the task still has the mask the daemon set; if someone else set another since, that is the
 * original now. */
static int note_task(ActuatorRecord *next, const PlanMove *m, const CpuMask *before,
                     const CpuMask *want, uint64_t now_usec) {
        const ActuatorTaskChange *old = record_find_task(next, m->pid);
        bool ours = old && old->starttime_ticks == m->starttime_ticks &&
                    cpumask_equal(before, old->set);
        ActuatorTaskChange c = {
                .pid = m->pid,
                .starttime_ticks = m->starttime_ticks,
                .orig = cpumask_copy(ours ? old->orig : before),
                .set = cpumask_copy(want),
                .when_usec = now_usec,
        };
        int r = c.orig && c.set ? record_put_task(next, &c) : -ENOMEM;

        task_change_done(&c);
        return r;
}

/* Checks a move and notes it in next. 1 if ready, 0 if skipped (counted), -ENOMEM. */
static int prepare_move(Actuator *a, ActuatorRecord *next, const CpuMask *online, const PlanMove *m,
                        uint64_t now_usec, PendingMove *p) {
        _cleanup_cpumask_ CpuMask *want = NULL, *before = NULL;
        TaskStat st;
        int r;

        if (pid_is_untouchable(m->pid) || !m->mask) {
                a->counters.errors++;
                log_warning("Plan moves pid %d, which is never moved: ignoring", (int) m->pid);
                return 0;
        }
        if (actuator_task_banned(a, m->pid, m->starttime_ticks))
                return 0;
        r = task_identify(a, m->pid, m->starttime_ticks, &st);
        if (r == -EPERM) {
                a->counters.errors++;
                log_warning("Plan moves pid %d, a kernel thread: ignoring", (int) m->pid);
                return 0;
        }
        if (r < 0) {
                move_skipped(a, m, r, "cannot read its stat");
                return 0;
        }
        want = cpumask_new(a->capacity);
        if (!want)
                return -ENOMEM;
        cpumask_and(want, m->mask, online);
        if (cpumask_is_empty(want)) {
                move_skipped(a, m, -EINVAL, "the mask names no online CPU");
                return 0;
        }
        r = threads_common_mask(a, m->pid, &before);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                move_skipped(a, m, r,
                             r == -EXDEV ? "its threads have different masks"
                                         : "cannot read its affinity");
                return 0;
        }
        r = note_task(next, m, before, want, now_usec);
        if (r < 0)
                return r;
        (void) snprintf(p->comm, sizeof p->comm, "%s", st.comm);
        p->want = TAKE_PTR(want);
        p->before = TAKE_PTR(before);
        p->ready = true;
        return 1;
}

/* Puts pid's entry back as it was before this apply (or drops it). */
static int revert_task(Actuator *a, const ActuatorRecord *old, pid_t pid) {
        const ActuatorTaskChange *o = record_find_task(old, pid);
        ActuatorTaskChange c = {};
        int r;

        if (!o) {
                record_drop_task(a->record, pid);
                return 0;
        }
        r = task_change_copy(o, &c);
        if (r >= 0)
                r = record_put_task(a->record, &c);
        task_change_done(&c);
        return r;
}

/* Sets want on every thread; ESRCH (a thread exited) does not stop the others. On another
 * error, the threads already changed get their mask back. Returns the threads changed, or the
 * error and, in *ret_first, the first thread that took the mask. */
static int set_all_threads(const Actuator *a, pid_t pid, const CpuMask *want, const CpuMask *before,
                           pid_t *ret_first) {
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0, changed = 0;
        pid_t first = 0;
        int r;

        r = proc_task_list_at(a->proc_fd, pid, &tids, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = affinity_set(tids[i], want);
                if (r == -ESRCH)
                        continue;
                if (r < 0) {
                        for (size_t j = 0; j < i; j++)
                                (void) affinity_set(tids[j], before);
                        return r;
                }
                if (changed++ == 0)
                        first = tids[i];
        }
        *ret_first = first;
        return (int) (changed > INT_MAX ? INT_MAX : changed);
}

/* Journal message IDs of the daemon's decisions, for journalctl MESSAGE_ID= and monitors. */
#define MESSAGE_ID_MOVE "MESSAGE_ID=0d3a8ccb7771443ab0a2a2e9d1e380da"
#define MESSAGE_ID_WEIGHT "MESSAGE_ID=526a28b80f94490a9e25ef4419e17be6"

/* "Moved pid ...", with the task, both nodes, its new CPUs and the reason as journal fields. */
static void log_move(const PlanMove *m, const char *comm, const char *cpus) {
        char pid[32], c[96], from[32], to[32], set[512], why[sizeof m->reason + 32];
        const char *const fields[] = { MESSAGE_ID_MOVE, pid, c, from, to, set, why };

        (void) snprintf(pid, sizeof pid, "CGBALANCE_PID=%d", (int) m->pid);
        (void) snprintf(c, sizeof c, "CGBALANCE_COMM=%s", comm);
        (void) snprintf(from, sizeof from, "CGBALANCE_FROM_NODE=%d", m->from_node);
        (void) snprintf(to, sizeof to, "CGBALANCE_TO_NODE=%d", m->to_node);
        (void) snprintf(set, sizeof set, "CGBALANCE_CPUS=%s", cpus);
        (void) snprintf(why, sizeof why, "CGBALANCE_REASON=%s", m->reason);
        log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                   "Moved pid %d (%s) node %d -> %d, CPUs %s: %s", (int) m->pid, comm, m->from_node,
                   m->to_node, cpus, m->reason);
}

/* "Set the weight of ...", with the group, both weights and the reason as journal fields. */
static void log_weight(const PlanWeight *w, const char *path) {
        char group[PATH_MAX + 32], from[48], to[48], why[sizeof w->reason + 32];
        const char *const fields[] = { MESSAGE_ID_WEIGHT, group, from, to, why };

        (void) snprintf(group, sizeof group, "CGBALANCE_CGROUP=%s", path);
        (void) snprintf(from, sizeof from, "CGBALANCE_FROM_WEIGHT=%" PRIu32, w->from);
        (void) snprintf(to, sizeof to, "CGBALANCE_TO_WEIGHT=%" PRIu32, w->to);
        (void) snprintf(why, sizeof why, "CGBALANCE_REASON=%s", w->reason);
        log_struct(LOG_INFO, fields, ELEMENTSOF(fields),
                   "Set the weight of %s %" PRIu32 " -> %" PRIu32 ": %s", path, w->from, w->to,
                   w->reason);
}

/* Carries out a prepared move. Sets *dirty when the record must be written again. */
static int execute_move(Actuator *a, const ActuatorRecord *old, const PlanMove *m,
                        const PendingMove *p, uint64_t migrate_max_mb, bool *dirty) {
        _cleanup_cpumask_ CpuMask *now = NULL;
        _cleanup_free_ char *text = NULL;
        ActuatorTaskChange *c;
        pid_t first = 0;
        int r;

        r = set_all_threads(a, m->pid, p->want, p->before, &first);
        if (r <= 0) {
                if (r == -EPERM) {
                        a->counters.tasks_banned++;
                        log_info("pid %d (%s): not permitted to set its affinity, no longer "
                                 "managed",
                                 (int) m->pid, p->comm);
                        if (ban(a, m->pid, m->starttime_ticks) < 0)
                                a->counters.errors++;
                } else
                        move_skipped(a, m, r == 0 ? -ESRCH : r, "cannot set its affinity");
                *dirty = true;
                return revert_task(a, old, m->pid);
        }
        /* The kernel narrows a mask to the task's cpuset: record what it actually has, which
         * is what a restore compares with. */
        c = record_find_task(a->record, m->pid);
        if (c && affinity_get(a, first, &now) >= 0 && !cpumask_equal(now, c->set)) {
                cpumask_free(c->set);
                c->set = TAKE_PTR(now);
                *dirty = true;
        }
        a->counters.moves++;
        if (m->to_node != m->from_node)
                a->counters.cross_node_moves++;
        if (c && cpumask_format(c->set, &text) >= 0)
                log_move(m, p->comm, text);
        if (a->observer)
                a->observer(&(const ActuatorEvent){ .is_move = true,
                                                    .pid = m->pid,
                                                    .comm = p->comm,
                                                    .from_node = m->from_node,
                                                    .to_node = m->to_node,
                                                    .reason = m->reason },
                            a->observer_data);
        if (migrate_max_mb > 0 && m->to_node != m->from_node) {
                r = migrate_memory(a, m->pid, m->from_node, m->to_node, migrate_max_mb);
                if (r == -EPERM && !a->warned_migrate_eperm) {
                        /* The kernel asks for ptrace access to another user's task as well as
                         * CAP_SYS_NICE: say so once, not at every move. */
                        a->warned_migrate_eperm = true;
                        a->counters.errors++;
                        log_warning_errno(r,
                                          "pid %d: failed to move its memory to node %d: %m; "
                                          "moving another user's memory needs CAP_SYS_PTRACE "
                                          "too (see cgbalanced(8), SERVICE)",
                                          (int) m->pid, m->to_node);
                } else if (r < 0) {
                        a->counters.errors++;
                        log_debug_errno(r, "pid %d: failed to move its memory to node %d: %m",
                                        (int) m->pid, m->to_node);
                }
        }
        return 0;
}

/* ---- apply: weights */

/* Checks a weight change and notes it in next. 1 if ready, 0 if skipped (counted), -ENOMEM. */
static int prepare_weight(Actuator *a, ActuatorRecord *next, const PolicySnapshot *snap,
                          const PlanWeight *w) {
        const char *path = snapshot_cgroup_path(snap, w->cgroup);
        const ActuatorCgroupChange *old;
        uint64_t now;
        int r;

        if (!path || w->to < CGROUP_WEIGHT_MIN || w->to > CGROUP_WEIGHT_MAX) {
                a->counters.errors++;
                log_warning("Plan sets weight %" PRIu32 " on group #%zu (%s): ignoring", w->to,
                            w->cgroup, path ? path : "no such group");
                return 0;
        }
        r = cgroup_get_cpu_weight_native(&a->layout, path, &now);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                weight_failed(a, path, r, "read");
                return 0;
        }
        old = record_find_cgroup(next, path);
        r = record_put_cgroup(next, path, old && old->set_native == now ? old->orig_native : now,
                              weight_to_native(a, w->to));
        return r < 0 ? r : 1;
}

static int revert_cgroup(Actuator *a, const ActuatorRecord *old, const char *path) {
        const ActuatorCgroupChange *o = record_find_cgroup(old, path);

        if (!o) {
                record_drop_cgroup(a->record, path);
                return 0;
        }
        return record_put_cgroup(a->record, path, o->orig_native, o->set_native);
}

static int execute_weight(Actuator *a, const ActuatorRecord *old, const PlanWeight *w,
                          const char *path, bool *dirty) {
        ActuatorCgroupChange *c;
        uint64_t now;
        int r;

        r = cgroup_set_cpu_weight(&a->layout, path, w->to);
        if (r < 0) {
                weight_failed(a, path, r, "set");
                *dirty = true;
                return revert_cgroup(a, old, path);
        }
        warned_forget(a, path);
        c = record_find_cgroup(a->record, path);
        if (c && cgroup_get_cpu_weight_native(&a->layout, path, &now) >= 0 &&
            now != c->set_native) {
                c->set_native = now;
                *dirty = true;
        }
        a->counters.weight_changes++;
        log_weight(w, path);
        if (a->observer)
                a->observer(&(const ActuatorEvent){ .cgroup = path,
                                                    .old_weight = w->from,
                                                    .new_weight = w->to,
                                                    .reason = w->reason },
                            a->observer_data);
        return 0;
}

/* ---- apply */

/* Drops entries of tasks that are gone and groups that were removed: nothing to restore there.
 * Done before each write, which is rare (only when something changes). */
static void record_prune(Actuator *a, ActuatorRecord *r) {
        for (size_t i = r->n_tasks; i-- > 0;) {
                TaskStat st;
                int k = proc_task_stat_read_at(a->proc_fd, r->tasks[i].pid, 0, &st);

                if (k == -ESRCH || (k >= 0 && st.starttime_ticks != r->tasks[i].starttime_ticks))
                        record_drop_task(r, r->tasks[i].pid);
        }
        for (size_t i = r->n_cgroups; i-- > 0;) {
                uint64_t v;
                int k = cgroup_get_cpu_weight_native(&a->layout, r->cgroups[i].path, &v);

                if (k == -ENOENT || k == -ENODEV)
                        record_drop_cgroup(r, r->cgroups[i].path);
        }
        for (size_t i = a->n_banned; i-- > 0;) {
                TaskStat st;
                int k = proc_task_stat_read_at(a->proc_fd, a->banned[i].pid, 0, &st);

                if (k == -ESRCH || (k >= 0 && st.starttime_ticks != a->banned[i].starttime_ticks)) {
                        memmove(a->banned + i, a->banned + i + 1,
                                (a->n_banned - i - 1) * sizeof *a->banned);
                        a->n_banned--;
                }
        }
}

/* Checks every action of the plan and notes those to do in *ret_next. Returns how many. */
static int prepare_plan(Actuator *a, const Plan *plan, const PolicySnapshot *snap,
                        uint64_t now_usec, PendingMove *pm, bool *pw, ActuatorRecord **ret_next) {
        _cleanup_actuator_record_ ActuatorRecord *next = NULL;
        _cleanup_cpumask_ CpuMask *online = NULL;
        int r, n = 0;

        r = record_copy(a->record, &next);
        if (r >= 0 && plan->n_moves > 0)
                r = online_cpus(a, &online);
        for (size_t i = 0; r >= 0 && i < plan->n_moves; i++) {
                r = prepare_move(a, next, online, &plan->moves[i], now_usec, &pm[i]);
                n += r > 0;
        }
        for (size_t i = 0; r >= 0 && i < plan->n_weights; i++) {
                r = prepare_weight(a, next, snap, &plan->weights[i]);
                pw[i] = r > 0;
                n += r > 0;
        }
        if (r < 0)
                return r;
        *ret_next = TAKE_PTR(next);
        return n;
}

int actuator_apply(Actuator *a, const Plan *plan, const PolicySnapshot *snap, bool dry_run,
                   uint64_t migrate_memory_max_mb, uint64_t now_usec) {
        _cleanup_actuator_record_ ActuatorRecord *next = NULL, *old = NULL;
        PendingMove *pm = NULL;
        _cleanup_free_ bool *pw = NULL;
        bool dirty = false;
        int r;

        if (!a || !plan || !snap)
                return -EINVAL;
        if (dry_run) {
                log_dry_run(plan, snap);
                return 0;
        }
        if (plan->n_moves == 0 && plan->n_weights == 0)
                return 0;
        pm = calloc(plan->n_moves + 1, sizeof *pm);
        pw = calloc(plan->n_weights + 1, sizeof *pw);
        r = pm && pw ? prepare_plan(a, plan, snap, now_usec, pm, pw, &next) : -ENOMEM;
        if (r <= 0)
                goto finish;

        /* The originals are on disk before anything changes: a crash from here on leaves a
         * record the next start reconciles. */
        record_prune(a, next);
        r = record_save(a, next);
        if (r < 0) {
                log_debug_errno(r, "Failed to write the record in %s, changing nothing: %m",
                                a->state_dir);
                goto finish;
        }
        old = a->record;
        a->record = TAKE_PTR(next);
        for (size_t i = 0; r >= 0 && i < plan->n_moves; i++)
                if (pm[i].ready)
                        r = execute_move(a, old, &plan->moves[i], &pm[i], migrate_memory_max_mb,
                                         &dirty);
        for (size_t i = 0; r >= 0 && i < plan->n_weights; i++)
                if (pw[i])
                        r = execute_weight(a, old, &plan->weights[i],
                                           snapshot_cgroup_path(snap, plan->weights[i].cgroup),
                                           &dirty);
        if (dirty) {
                int k = record_save(a, a->record);

                if (k < 0 && r >= 0)
                        r = log_debug_errno(k, "Failed to update the record in %s: %m",
                                            a->state_dir);
        }
finish:
        pending_moves_free(pm, plan->n_moves);
        return r < 0 ? r : 0;
}

/* ---- restore */

/* Puts want back on every thread of c's task that still has the mask the daemon set (a thread
 * someone pinned since keeps its mask). Returns the number of threads restored, or -ENOMEM. */
static int restore_threads(Actuator *a, const ActuatorTaskChange *c, const CpuMask *online) {
        _cleanup_cpumask_ CpuMask *want = cpumask_new(a->capacity);
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;
        int r, done = 0;

        if (!want)
                return -ENOMEM;
        /* The original may name CPUs gone offline since: keep the rest, or give it every
         * online CPU (the kernel narrows that to its cpuset); never an empty mask. */
        cpumask_and(want, c->orig, online);
        if (cpumask_is_empty(want))
                cpumask_or(want, want, online);
        if (proc_task_list_at(a->proc_fd, c->pid, &tids, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                _cleanup_cpumask_ CpuMask *m = NULL;

                r = affinity_get(a, tids[i], &m);
                if (r < 0 || !cpumask_equal(m, c->set)) /* gone, or pinned by someone else */
                        continue;
                r = affinity_set(tids[i], want);
                if (r == -EINVAL) /* none of them in its cpuset any more */
                        r = affinity_set(tids[i], online);
                if (r == -ESRCH)
                        continue;
                if (r < 0) {
                        a->counters.errors++;
                        log_warning_errno(
                                r, "Failed to restore the affinity of thread %d of pid %d: %m",
                                (int) tids[i], (int) c->pid);
                        continue;
                }
                done++;
        }
        return done;
}

/* Puts the original back, if c's task is still there with the mask the daemon set. 1 if done. */
static int restore_task(Actuator *a, const ActuatorTaskChange *c, const CpuMask *online) {
        _cleanup_cpumask_ CpuMask *now = NULL;
        _cleanup_free_ char *text = NULL;
        TaskStat st;
        int r;

        if (pid_is_untouchable(c->pid)) {
                a->counters.errors++;
                log_warning("Record names pid %d, which is never touched: ignoring", (int) c->pid);
                return 0;
        }
        r = task_identify(a, c->pid, c->starttime_ticks, &st);
        if (r >= 0)
                r = affinity_get(a, c->pid, &now);
        if (r == -ESRCH) {
                a->counters.tasks_gone++;
                log_debug("pid %d is gone, nothing to restore", (int) c->pid);
                return 0;
        }
        if (r < 0) {
                a->counters.errors++;
                log_warning_errno(r, "pid %d: cannot restore its affinity: %m", (int) c->pid);
                return 0;
        }
        if (!cpumask_equal(now, c->set)) {
                if (cpumask_format(now, &text) >= 0)
                        log_info("pid %d (%s): affinity is %s, not the one we set: leaving it",
                                 (int) c->pid, st.comm, text);
                return 0;
        }
        r = restore_threads(a, c, online);
        if (r <= 0)
                return r;
        a->counters.restores++;
        /* What the kernel made of it (the cpuset may have narrowed it), not what we asked. */
        now = cpumask_free(now);
        if (affinity_get(a, c->pid, &now) >= 0 && cpumask_format(now, &text) >= 0)
                log_info("Restored the affinity of pid %d (%s): %s", (int) c->pid, st.comm, text);
        return 1;
}

static int restore_cgroup(Actuator *a, const ActuatorCgroupChange *c) {
        uint64_t now;
        int r;

        r = cgroup_get_cpu_weight_native(&a->layout, c->path, &now);
        if (r < 0) {
                weight_failed(a, c->path, r, "read");
                return 0;
        }
        if (now != c->set_native) {
                log_info("Group %s: weight %" PRIu64 " is not the %" PRIu64 " we set: leaving it",
                         c->path, now, c->set_native);
                return 0;
        }
        r = cgroup_set_cpu_weight_native(&a->layout, c->path, c->orig_native);
        if (r < 0) {
                weight_failed(a, c->path, r, "restore");
                return 0;
        }
        a->counters.restores++;
        log_info("Restored the weight of %s to %" PRIu64, c->path, c->orig_native);
        return 1;
}

int actuator_restore_all(Actuator *a) {
        _cleanup_cpumask_ CpuMask *online = NULL;
        ActuatorRecord *empty;
        int r, n = 0;

        if (!a)
                return -EINVAL;
        if (a->record->n_tasks > 0) {
                r = online_cpus(a, &online);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < a->record->n_tasks; i++) {
                r = restore_task(a, &a->record->tasks[i], online);
                if (r < 0)
                        return r;
                n += r;
        }
        for (size_t i = 0; i < a->record->n_cgroups; i++)
                n += restore_cgroup(a, &a->record->cgroups[i]);
        empty = record_new();
        if (!empty)
                return -ENOMEM;
        actuator_record_free(a->record);
        a->record = empty;
        r = record_save(a, a->record);
        if (r < 0)
                return log_debug_errno(r, "Failed to remove the record in %s: %m", a->state_dir);
        return n;
}

int actuator_reconcile(Actuator *a) {
        _cleanup_actuator_record_ ActuatorRecord *rec = NULL;
        _cleanup_free_ char *text = NULL;
        unsigned line = 0;
        int r;

        if (!a)
                return -EINVAL;
        if (a->state_fd < 0)
                return 0;
        r = record_read(a, &text);
        if (r == -ENOENT)
                return 0;
        if (r >= 0)
                r = actuator_record_parse(text, a->capacity, &rec, &line);
        if (r == -EBADMSG) {
                if (renameat(a->state_fd, RECORD_NAME, a->state_fd, RECORD_CORRUPT_NAME) < 0)
                        log_warning_errno(errno, "Failed to rename %s/" RECORD_NAME ": %m",
                                          a->state_dir);
                if (line > 0)
                        return log_warning_errno(r,
                                                 "%s/" RECORD_NAME ":%u: corrupt record, kept "
                                                 "as " RECORD_CORRUPT_NAME ", nothing restored",
                                                 a->state_dir, line);
                return log_warning_errno(r,
                                         "%s/" RECORD_NAME
                                         ": corrupt record, kept as " RECORD_CORRUPT_NAME
                                         ", nothing restored",
                                         a->state_dir);
        }
        if (r < 0)
                return log_debug_errno(r, "Failed to read %s/" RECORD_NAME ": %m", a->state_dir);
        log_info("Found the record of a previous run with %zu tasks and %zu groups, restoring",
                 rec->n_tasks, rec->n_cgroups);
        actuator_record_free(a->record);
        a->record = TAKE_PTR(rec);
        return actuator_restore_all(a);
}
